//! Writers: the merged KB as `cellguard-kb/1` JSON (read back by [`super::load_str`]), as a
//! JSON Schema of valid `{"action_key": ..., "params": {...}}` objects for constrained
//! decoding, and the per-action summary `cellguard kb show --output-format json` prints.
//!
//! The `cellguard-kb/1` format is documented in `docs/knowledge-base.md`.

use super::{types, Action, KnowledgeBase, Param};
use serde_json::{json, Map, Value};

/// The schema tag written by [`to_cellguard_kb`].
pub const SCHEMA: &str = "cellguard-kb/1";

fn param_json(p: &Param) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(p.name));
    m.insert("type".into(), json!(p.ty));
    if let Some(d) = &p.display_type {
        m.insert("display_type".into(), json!(d));
    }
    if p.approximate_type {
        m.insert("approximate_type".into(), json!(true));
    }
    m.insert("required".into(), json!(p.required));
    m.insert("default".into(), json!(p.default));
    if p.keyword_only {
        m.insert("keyword_only".into(), json!(true));
    }
    if let Some(a) = &p.allowed {
        m.insert("allowed".into(), Value::Array(a.clone()));
    }
    if let Some(d) = &p.description {
        m.insert("description".into(), json!(d));
    }
    Value::Object(m)
}

fn action_json(a: &Action) -> Value {
    let mut m = Map::new();
    m.insert("short_key".into(), json!(a.short_key));
    if let Some(v) = &a.method {
        m.insert("method".into(), json!(v));
    }
    m.insert("summary".into(), json!(a.summary));
    if let Some(v) = &a.docstring {
        m.insert("docstring".into(), json!(v));
    }
    m.insert(
        "params".into(),
        Value::Array(a.params.iter().map(param_json).collect()),
    );
    m.insert("accepts_extra_kwargs".into(), json!(a.accepts_extra_kwargs));
    m.insert("is_async".into(), json!(a.is_async));
    m.insert("returns".into(), json!(a.returns));
    m.insert(
        "exclude_from_planning".into(),
        json!(a.exclude_from_planning),
    );
    if let Some(v) = a.emits_lifecycle {
        m.insert("emits_lifecycle".into(), json!(v));
    }
    if let Some(v) = a.interruptible {
        m.insert("interruptible".into(), json!(v));
    }
    m.insert("planning".into(), json!(a.planning));
    if a.dynamic_segment {
        m.insert("dynamic_segment".into(), json!(true));
    }
    if !a.tags.is_empty() {
        m.insert("tags".into(), json!(a.tags));
    }
    if let Some(v) = &a.action_key_expr {
        m.insert("action_key_expr".into(), json!(v));
    }
    if let Some(s) = &a.source {
        m.insert(
            "source".into(),
            json!({"path": s.path, "line": s.line, "column": s.column}),
        );
    }
    Value::Object(m)
}

/// The KB as `cellguard-kb/1` JSON: groups in first-seen order (groups known only from
/// metadata keep their place), each with its actions keyed by full key; actions without a
/// group go to a group without `group_key`.
pub fn to_cellguard_kb(kb: &KnowledgeBase) -> Value {
    // Group order: metadata order, then groups first seen on actions.
    let mut order: Vec<Option<String>> = kb
        .groups
        .iter()
        .map(|g| Some(g.group_key.clone()))
        .collect();
    for a in &kb.actions {
        if !order.contains(&a.group) {
            order.push(a.group.clone());
        }
    }
    let mut groups = Vec::new();
    for gk in order {
        let mut g = Map::new();
        if let Some(key) = &gk {
            g.insert("group_key".into(), json!(key));
            if let Some(meta) = kb.group(key) {
                g.insert("provider_class".into(), json!(meta.provider_class));
                g.insert("dispatch_key".into(), json!(meta.dispatch_key));
                g.insert(
                    "dispatch_key_dynamic_at_runtime".into(),
                    json!(meta.dynamic),
                );
                g.insert("description".into(), json!(meta.description));
                g.insert("tags".into(), json!(meta.tags));
                g.insert("source_path".into(), json!(meta.source_path));
            }
        }
        let mut actions = Map::new();
        for a in kb.actions.iter().filter(|a| a.group == gk) {
            actions.insert(a.key.clone(), action_json(a));
        }
        g.insert("actions".into(), Value::Object(actions));
        groups.push(Value::Object(g));
    }
    json!({
        "schema": SCHEMA,
        "dynamic_segments": kb.dynamic_segments,
        "pseudo_keys": kb.pseudo_keys,
        "groups": groups,
    })
}

/// JSON Schema of one parameter's values: the type's schema ([`types::json_schema_for`]),
/// narrowed to the allowed values when known, with description and default.
fn param_schema(p: &Param) -> Value {
    let mut s = match &p.ty {
        Some(t) => types::json_schema_for(t, p.approximate_type),
        None => json!({}),
    };
    let obj = s
        .as_object_mut()
        .expect("json_schema_for returns an object");
    if let Some(allowed) = &p.allowed {
        obj.clear();
        obj.insert("enum".into(), Value::Array(allowed.clone()));
    }
    if let Some(d) = &p.description {
        obj.insert("description".into(), json!(d));
    }
    if let Some(d) = p.default.as_deref().and_then(types::python_literal_to_json) {
        obj.insert("default".into(), d);
    }
    s
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The `action_key` schema of one action: `const` of its key; for a dynamic key
/// (`Class.*.m`) the per-process form `Class.<8 hex>.m`, or the short key when it resolves
/// uniquely (the dispatcher's suffix match).
fn action_key_schema(kb: &KnowledgeBase, a: &Action) -> Value {
    if !a.dynamic_segment {
        return json!({ "const": a.key });
    }
    let mut parts = a.key.splitn(3, '.');
    let (class, _, rest) = (
        parts.next().unwrap_or(""),
        parts.next(),
        parts.next().unwrap_or(""),
    );
    let pattern = json!({
        "type": "string",
        "pattern": format!("^{}\\.[0-9a-f]{{8}}\\.{}$", regex_escape(class), regex_escape(rest)),
    });
    if kb.by_short_key(&a.short_key).len() == 1 && rest == a.short_key {
        json!({ "anyOf": [ { "const": a.short_key }, pattern ] })
    } else {
        pattern
    }
}

/// A JSON Schema (draft 2020-12) accepting exactly the valid action calls of `kb`:
/// `{"action_key": <key>, "params": {...}}`, one `oneOf` branch per action, with the
/// parameters' types, `enum`s for allowed values, `required` parameters, and
/// `additionalProperties: false` unless the action accepts `**kwargs`. Pseudo keys are not
/// callable and are left out.
pub fn to_json_schema(kb: &KnowledgeBase) -> Value {
    let branches: Vec<Value> = kb
        .actions
        .iter()
        .map(|a| {
            let mut props = Map::new();
            for p in &a.params {
                props.insert(p.name.clone(), param_schema(p));
            }
            let required: Vec<&str> = a
                .params
                .iter()
                .filter(|p| p.required)
                .map(|p| p.name.as_str())
                .collect();
            let mut params = Map::new();
            params.insert("type".into(), json!("object"));
            params.insert("properties".into(), Value::Object(props));
            if !required.is_empty() {
                params.insert("required".into(), json!(required));
            }
            params.insert("additionalProperties".into(), json!(a.accepts_extra_kwargs));
            let mut branch = Map::new();
            branch.insert("title".into(), json!(a.key));
            if let Some(s) = &a.summary {
                branch.insert("description".into(), json!(s));
            }
            branch.insert("type".into(), json!("object"));
            branch.insert(
                "properties".into(),
                json!({
                    "action_key": action_key_schema(kb, a),
                    "params": Value::Object(params),
                }),
            );
            branch.insert("required".into(), json!(["action_key", "params"]));
            branch.insert("additionalProperties".into(), json!(false));
            Value::Object(branch)
        })
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "cellguard action call",
        "description": "One call of a known action: its key and its keyword parameters.",
        "oneOf": branches,
    })
}

/// The object `cellguard kb show --output-format json` prints for one action:
/// `{"key", "short_key", "params": [{"name", "type", "required", "default"}], "summary",
/// "source": {"path", "line", "column"} | null}`.
pub fn show_json(a: &Action) -> Value {
    json!({
        "key": a.key,
        "short_key": a.short_key,
        "params": a.params.iter().map(|p| json!({
            "name": p.name,
            "type": p.ty,
            "required": p.required,
            "default": p.default,
        })).collect::<Vec<_>>(),
        "summary": a.summary,
        "source": a.source.as_ref().map(|s| json!({"path": s.path, "line": s.line, "column": s.column})),
    })
}
