//! Writers: the merged KB as `cellguard-kb/1` JSON (read back by [`super::load_str`]), as a
//! JSON Schema of valid `{"action_key": ..., "params": {...}}` objects for constrained
//! decoding, and the per-action summary `cellguard kb show --output-format json` prints.
//!
//! The `cellguard-kb/1` format is documented in `docs/knowledge-base.md`.

use super::{types, Action, KnowledgeBase, Param};
use serde_json::{json, Map, Value};

/// The schema tag written by [`to_cellguard_kb`].
pub const SCHEMA: &str = "cellguard-kb/1";

// The writer serializes typed views of the KB (field order = struct order), which is several
// times cheaper than building a `serde_json::Value` tree first.

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(serde::Serialize)]
struct ParamOut<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    ty: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    display_type: Option<&'a str>,
    #[serde(skip_serializing_if = "is_false")]
    approximate_type: bool,
    required: bool,
    default: Option<&'a str>,
    #[serde(skip_serializing_if = "is_false")]
    keyword_only: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    allowed: Option<&'a [Value]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
}

#[derive(serde::Serialize)]
struct SourceOut<'a> {
    path: &'a str,
    line: u32,
    column: u32,
}

#[derive(serde::Serialize)]
struct ActionOut<'a> {
    short_key: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    summary: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    docstring: Option<&'a str>,
    params: Vec<ParamOut<'a>>,
    /// `null` when not known (a recorded prompt).
    accepts_extra_kwargs: Option<bool>,
    is_async: bool,
    returns: Option<&'a str>,
    exclude_from_planning: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    emits_lifecycle: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    interruptible: Option<bool>,
    planning: bool,
    #[serde(skip_serializing_if = "is_false")]
    dynamic_segment: bool,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    tags: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    action_key_expr: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<SourceOut<'a>>,
}

impl<'a> ActionOut<'a> {
    fn new(a: &'a Action) -> Self {
        ActionOut {
            short_key: &a.short_key,
            method: a.method.as_deref(),
            summary: a.summary.as_deref(),
            docstring: a.docstring.as_deref(),
            params: a
                .params
                .iter()
                .map(|p| ParamOut {
                    name: &p.name,
                    ty: p.ty.as_deref(),
                    display_type: p.display_type.as_deref(),
                    approximate_type: p.approximate_type,
                    required: p.required,
                    default: p.default.as_deref(),
                    keyword_only: p.keyword_only,
                    allowed: p.allowed.as_deref(),
                    description: p.description.as_deref(),
                })
                .collect(),
            accepts_extra_kwargs: (!a.extra_kwargs_unknown).then_some(a.accepts_extra_kwargs),
            is_async: a.is_async,
            returns: a.returns.as_deref(),
            exclude_from_planning: a.exclude_from_planning,
            emits_lifecycle: a.emits_lifecycle,
            interruptible: a.interruptible,
            planning: a.planning,
            dynamic_segment: a.dynamic_segment,
            tags: &a.tags,
            action_key_expr: a.action_key_expr.as_deref(),
            source: a.source.as_ref().map(|s| SourceOut {
                path: &s.path,
                line: s.line,
                column: s.column,
            }),
        }
    }
}

/// Actions keyed by full key, in order.
struct ActionsOut<'a>(Vec<&'a Action>);

impl serde::Serialize for ActionsOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for a in &self.0 {
            m.serialize_entry(&a.key, &ActionOut::new(a))?;
        }
        m.end()
    }
}

#[derive(serde::Serialize)]
struct GroupOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    group_key: Option<&'a str>,
    // The metadata fields are written (possibly null) when the group has metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    provider_class: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dispatch_key: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dispatch_key_dynamic_at_runtime: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tags: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source_path: Option<Option<&'a str>>,
    actions: ActionsOut<'a>,
}

#[derive(serde::Serialize)]
struct KbOut<'a> {
    schema: &'static str,
    dynamic_segments: &'a [String],
    pseudo_keys: &'a [String],
    groups: Vec<GroupOut<'a>>,
}

fn kb_out(kb: &KnowledgeBase) -> KbOut<'_> {
    // Group order: metadata order, then groups first seen on actions.
    let mut order: Vec<Option<&str>> = kb
        .groups
        .iter()
        .map(|g| Some(g.group_key.as_str()))
        .collect();
    let mut members: std::collections::HashMap<Option<&str>, Vec<&Action>> = Default::default();
    for a in &kb.actions {
        let g = a.group.as_deref();
        if !members.contains_key(&g) && !order.contains(&g) {
            order.push(g);
        }
        members.entry(g).or_default().push(a);
    }
    let groups = order
        .into_iter()
        .map(|gk| {
            let meta = gk.and_then(|k| kb.group(k));
            GroupOut {
                group_key: gk,
                provider_class: meta.map(|m| m.provider_class.as_deref()),
                dispatch_key: meta.map(|m| m.dispatch_key.as_deref()),
                dispatch_key_dynamic_at_runtime: meta.map(|m| m.dynamic),
                description: meta.map(|m| m.description.as_deref()),
                tags: meta.map(|m| m.tags.as_slice()),
                source_path: meta.map(|m| m.source_path.as_deref()),
                actions: ActionsOut(members.remove(&gk).unwrap_or_default()),
            }
        })
        .collect();
    KbOut {
        schema: SCHEMA,
        dynamic_segments: &kb.dynamic_segments,
        pseudo_keys: &kb.pseudo_keys,
        groups,
    }
}

/// The KB as `cellguard-kb/1` JSON: groups in first-seen order (groups known only from
/// metadata keep their place), each with its actions keyed by full key; actions without a
/// group go to a group without `group_key`.
pub fn to_cellguard_kb(kb: &KnowledgeBase) -> Value {
    serde_json::to_value(kb_out(kb)).unwrap_or(Value::Null)
}

/// Writes [`to_cellguard_kb`] as pretty-printed JSON (without building the JSON tree).
///
/// Errors: the writer's.
pub fn write_cellguard_kb(kb: &KnowledgeBase, out: impl std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(out, &kb_out(kb)).map_err(std::io::Error::other)
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
