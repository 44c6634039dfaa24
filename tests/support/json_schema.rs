//! A small JSON Schema validator shared by the tests: the config schema
//! (`docs/cellguard.schema.json`, `tests/schema.rs`) and SARIF 2.1.0
//! (`tests/fixtures/sarif/sarif-2.1.0.schema.json`, the replay reports).

#![allow(dead_code)]

use serde_json::Value;

/// Validates `value` against `schema`, whose `$ref`s (`#/definitions/NAME`, `#/$defs/NAME`)
/// name entries of `defs`. The keywords checked: `$ref`, `type`, `properties`,
/// `additionalProperties`, `required`, `items`, `minItems`, `uniqueItems`, `enum`, `const`,
/// `oneOf` (exactly one alternative), `anyOf`, `minimum`, `maximum`, `pattern`: those schemars
/// emits for the config and those the SARIF 2.1.0 schema uses, except `format` (`uri`,
/// `date-time`), which is not checked. Returns the first violation as `pointer: problem`.
pub fn validate(schema: &Value, defs: &Value, value: &Value, at: &str) -> Result<(), String> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap();
        return validate(&defs[name], defs, value, at);
    }
    if let Some(alts) = schema.get("anyOf").and_then(Value::as_array) {
        if !alts.iter().any(|s| validate(s, defs, value, at).is_ok()) {
            return Err(format!("{at}: matches no alternative of anyOf"));
        }
    }
    if let Some(alts) = schema.get("oneOf").and_then(Value::as_array) {
        let n = alts
            .iter()
            .filter(|s| validate(s, defs, value, at).is_ok())
            .count();
        if n != 1 {
            return Err(format!(
                "{at}: matches {n} alternatives of oneOf, not exactly one"
            ));
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(value) {
            return Err(format!("{at}: {value} is not one of {e:?}"));
        }
    }
    if let Some(c) = schema.get("const") {
        if c != value {
            return Err(format!("{at}: {value} is not {c}"));
        }
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let actual = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        let ok = types
            .iter()
            .any(|t| *t == actual || (*t == "number" && actual == "integer"));
        if !ok {
            return Err(format!("{at}: expected {types:?}, found {actual}"));
        }
    }
    if let (Some(min), Some(n)) = (
        schema.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) {
        if n < min {
            return Err(format!("{at}: {n} is below the minimum {min}"));
        }
    }
    if let (Some(max), Some(n)) = (
        schema.get("maximum").and_then(Value::as_f64),
        value.as_f64(),
    ) {
        if n > max {
            return Err(format!("{at}: {n} is above the maximum {max}"));
        }
    }
    if let (Some(p), Value::String(s)) = (schema.get("pattern").and_then(Value::as_str), value) {
        let re = regex::Regex::new(p).map_err(|e| format!("{at}: bad pattern {p}: {e}"))?;
        if !re.is_match(s) {
            return Err(format!("{at}: {s:?} does not match {p}"));
        }
    }
    if let Value::Array(items) = value {
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64) {
            if (items.len() as u64) < min {
                return Err(format!("{at}: fewer than {min} items"));
            }
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            for (i, v) in items.iter().enumerate() {
                if items[..i].contains(v) {
                    return Err(format!("{at}/{i}: repeats an earlier item"));
                }
            }
        }
    }
    if let Value::Object(map) = value {
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, v) in map {
            match props.and_then(|p| p.get(k)) {
                Some(s) => validate(s, defs, v, &format!("{at}/{k}"))?,
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        return Err(format!("{at}: unknown key `{k}`"));
                    }
                    Some(s @ Value::Object(_)) => validate(s, defs, v, &format!("{at}/{k}"))?,
                    _ => {}
                },
            }
        }
        for r in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !map.contains_key(r.as_str().unwrap_or_default()) {
                return Err(format!("{at}: missing `{r}`"));
            }
        }
    }
    if let (Value::Array(items), Some(s)) = (value, schema.get("items")) {
        for (i, v) in items.iter().enumerate() {
            validate(s, defs, v, &format!("{at}/{i}"))?;
        }
    }
    Ok(())
}
