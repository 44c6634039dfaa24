//! The JSON Schema of the config (`docs/cellguard.schema.json`) is generated from the serde
//! structs of `cellguard_lints::config` and must stay in sync with them; the config examples the
//! repository ships must satisfy both the schema and serde.
//!
//! Regenerate after changing the config structs:
//! `CELLGUARD_UPDATE_SCHEMA=1 cargo test --test schema`.

use cellguard_lints::config::ConfigFile;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn generated() -> Value {
    serde_json::to_value(schemars::schema_for!(ConfigFile)).unwrap()
}

fn checked_in() -> Value {
    let text = std::fs::read_to_string(root().join("docs/cellguard.schema.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn schema_file_matches_the_serde_structs() {
    let schema = generated();
    let path = root().join("docs/cellguard.schema.json");
    if std::env::var_os("CELLGUARD_UPDATE_SCHEMA").is_some() {
        let mut text = serde_json::to_string_pretty(&schema).unwrap();
        text.push('\n');
        std::fs::write(&path, text).unwrap();
    }
    assert!(
        checked_in() == schema,
        "docs/cellguard.schema.json is out of date with lints/src/config.rs; run \
         `CELLGUARD_UPDATE_SCHEMA=1 cargo test --test schema`"
    );
}

/// A small JSON Schema validator for the keywords schemars emits for the config: `$ref`,
/// `type`, `properties`, `additionalProperties`, `required`, `items`, `enum`, `const`,
/// `oneOf`/`anyOf`, `minimum`. Returns the first violation as `pointer: problem`.
fn validate(schema: &Value, defs: &Value, value: &Value, at: &str) -> Result<(), String> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap();
        return validate(&defs[name], defs, value, at);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(alts) = schema.get(key).and_then(Value::as_array) {
            if !alts.iter().any(|s| validate(s, defs, value, at).is_ok()) {
                return Err(format!("{at}: matches no alternative of {key}"));
            }
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

fn validate_toml(text: &str) -> Result<(), String> {
    let value: toml::Value = toml::from_str(text).map_err(|e| e.to_string())?;
    let json = serde_json::to_value(value).unwrap();
    let schema = checked_in();
    validate(&schema, &schema["$defs"], &json, "")
}

/// The TOML blocks of a Markdown file that hold a whole `cellguard.toml`.
fn toml_blocks(md: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(md).unwrap();
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for line in text.lines() {
        match &mut cur {
            None if line.trim_start() == "```toml" => cur = Some(String::new()),
            Some(b) if line.trim_start() == "```" => {
                blocks.push(std::mem::take(b));
                cur = None;
            }
            Some(b) => {
                b.push_str(line);
                b.push('\n');
            }
            None => {}
        }
    }
    blocks
        .into_iter()
        .filter(|b| !b.contains("[[rule]]"))
        .map(|b| {
            if b.contains("[tool.cellguard") {
                // The table's content is what the schema describes.
                let v: toml::Value = toml::from_str(&b).unwrap();
                toml::to_string(&v["tool"]["cellguard"]).unwrap()
            } else {
                b
            }
        })
        .collect()
}

#[test]
fn shipped_configs_satisfy_schema_and_serde() {
    let mut checked = 0;
    let mut texts = vec![(
        "fixtures/example/cellguard.toml".to_string(),
        std::fs::read_to_string(root().join("fixtures/example/cellguard.toml")).unwrap(),
    )];
    for (i, b) in toml_blocks(&root().join("docs/configuration.md"))
        .into_iter()
        .enumerate()
    {
        texts.push((format!("docs/configuration.md block {i}"), b));
    }
    for (name, text) in texts {
        validate_toml(&text).unwrap_or_else(|e| panic!("{name}: schema: {e}"));
        toml::from_str::<ConfigFile>(&text).unwrap_or_else(|e| panic!("{name}: serde: {e}"));
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} configs checked");
}

#[test]
fn schema_and_serde_reject_the_same_mistakes() {
    let cases = [
        "[lint]\nselectt = [\"API\"]\n",
        "profile = \"lenient\"\n",
        "[lint.shape]\nmax-actions = \"3\"\n",
        "[lint.shape]\nmax-actions = -1\n",
        "knowledge-base = \"kb.json\"\n",
        "[namespace]\npreset = 3\n",
        "extract = \"html\"\n",
    ];
    for text in cases {
        assert!(validate_toml(text).is_err(), "schema accepts {text:?}");
        assert!(
            toml::from_str::<ConfigFile>(text).is_err(),
            "serde accepts {text:?}"
        );
    }
    let fine = "profile = \"colony\"\ndialect = \"functions\"\nextract = \"markdown\"\n\
                [lint.imports]\nallow = [\"json\"]\n[namespace]\npreset = \"smolagents\"\n\
                [[guardrails]]\nkind = \"anything\"\n";
    validate_toml(fine).unwrap();
    toml::from_str::<ConfigFile>(fine).unwrap();
}

#[test]
fn schema_offers_completion_for_every_top_level_key() {
    let schema = checked_in();
    let props = schema["properties"].as_object().unwrap();
    for key in [
        "profile",
        "dialect",
        "knowledge-base",
        "extend",
        "extract",
        "lint",
        "namespace",
        "guardrails",
        "policies",
    ] {
        assert!(props.contains_key(key), "schema lacks `{key}`");
        assert!(
            props[key].get("description").is_some() || props[key].get("$ref").is_some(),
            "`{key}` has no description"
        );
    }
    assert_eq!(schema["additionalProperties"], Value::Bool(false));
}
