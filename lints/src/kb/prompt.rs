//! The knowledge base from a recorded Colony prompt: the `## Available Actions` section
//! (colony-reference §2.8).
//!
//! ```text
//! ## Available Actions
//!
//! ### <group_key>
//! <group_description>
//!
//! #### `await run("<full compound key>")`
//! <description>
//!   Parameters: name: Type, name?: Type, model: Model {f1: T, f2?: T}
//! ```
//!
//! The prompt renders a type as its `__name__` (`list[str]` -> `list`, `Literal['a']` ->
//! `Literal`, `Optional[int]` -> `Optional`), so such types are imported with
//! [`crate::kb::Param::approximate_type`] set (see [`super::types::prompt_type_is_lossy`]);
//! `name?:` marks an optional parameter whose default is not shown. The `FULL` and
//! `COMPACT_SCHEMA` detail levels (`Parameters (JSON Schema): {...}`) are read exactly.
//! The REPL pseudo-groups (`repl`, `repl.variables`, `repl.guidance`) give pseudo keys, not
//! actions. A middle key segment of 8 hex digits is a per-process random segment: the key is
//! stored as `Class.*.action` and marked dynamic.

use super::{types, Action, KnowledgeBase, Param, COLONY_PSEUDO_KEYS};
use serde_json::Value;

/// A prompt that could not be imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptError {
    /// One-based line of the problem, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

const HEADER: &str = "## Available Actions";

/// Byte offset of the first `## Available Actions` line, if any.
pub fn find_section(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end() == HEADER {
            return Some(offset);
        }
        offset += line.len();
    }
    None
}

/// The prompt texts held as strings anywhere in a JSON value (a span export, a message list),
/// joined; `None` when no string holds a `## Available Actions` section.
pub fn prompt_in_json(value: &Value) -> Option<String> {
    fn walk<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
        match v {
            Value::String(s) if find_section(s).is_some() => out.push(s),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(m) => m.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(value, &mut found);
    (!found.is_empty()).then(|| found.join("\n\n"))
}

fn action_header(line: &str) -> Option<String> {
    let rest = line.trim_end().strip_prefix("#### `")?.strip_suffix('`')?;
    let inner = rest
        .strip_prefix("await run(")
        .or_else(|| rest.strip_prefix("run("))?
        .strip_suffix(')')?;
    let inner = inner.trim();
    for q in ['"', '\''] {
        if inner.len() >= 2 && inner.starts_with(q) && inner.ends_with(q) {
            return Some(inner[1..inner.len() - 1].to_string());
        }
    }
    None
}

/// True for an 8-digit lowercase hex segment (`uuid4().hex[:8]`).
pub fn is_process_hex(seg: &str) -> bool {
    seg.len() == 8
        && seg
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `Class.3f9a01c2.rest` -> `Some(("Class", "rest"))`.
fn dynamic_parts(key: &str) -> Option<(&str, &str)> {
    let mut it = key.splitn(3, '.');
    let (class, mid, rest) = (it.next()?, it.next()?, it.next()?);
    is_process_hex(mid).then_some((class, rest))
}

/// Imports every `## Available Actions` section of `text` (a later section wins on equal keys).
///
/// Errors: no section in the text.
pub fn import_prompt(text: &str) -> Result<KnowledgeBase, PromptError> {
    let lines: Vec<&str> = text.lines().collect();
    let starts: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim_end() == HEADER)
        .map(|(i, _)| i)
        .collect();
    if starts.is_empty() {
        return Err(PromptError {
            line: None,
            message: format!("no `{HEADER}` section in this prompt"),
        });
    }
    let mut kb = KnowledgeBase::new();
    for start in starts {
        let end = section_end(&lines, start + 1);
        kb.merge(import_section(&lines[start + 1..end], start + 1)?);
    }
    kb.add_colony_pseudo_keys();
    Ok(kb)
}

/// The line index ending the section that starts at `from`: the next `## ` heading, unless
/// action headers follow it before the next `## ` heading (a heading inside a description).
fn section_end(lines: &[&str], from: usize) -> usize {
    let is_h2 = |l: &str| l.starts_with("## ");
    let mut i = from;
    let mut fence = false;
    while i < lines.len() {
        let l = lines[i];
        if l.trim_start().starts_with("```") {
            fence = !fence;
        }
        if !fence && is_h2(l) {
            let next_h2 = lines[i + 1..]
                .iter()
                .position(|l| is_h2(l))
                .map(|p| i + 1 + p)
                .unwrap_or(lines.len());
            if !lines[i + 1..next_h2]
                .iter()
                .any(|l| action_header(l).is_some())
            {
                return i;
            }
        }
        i += 1;
    }
    lines.len()
}

/// `### group` (but not `#### ...`).
fn is_group_header(line: &str) -> bool {
    line.starts_with("### ")
}

fn is_pseudo_group(g: &str) -> bool {
    matches!(g, "repl" | "repl.variables" | "repl.guidance")
}

fn import_section(lines: &[&str], first_line: usize) -> Result<KnowledgeBase, PromptError> {
    let mut kb = KnowledgeBase::new();
    let mut group: Option<String> = None;
    let mut group_desc: Vec<&str> = Vec::new();
    let mut i = 0;
    let flush_group = |kb: &mut KnowledgeBase, group: &Option<String>, desc: &mut Vec<&str>| {
        if let Some(g) = group {
            if !is_pseudo_group(g) {
                let text = desc.join("\n").trim().to_string();
                let (key, class, dynamic) = match g.split_once('.') {
                    Some((class, mid)) if is_process_hex(mid) => {
                        (format!("{class}.*"), Some(class.to_string()), true)
                    }
                    _ => (g.clone(), None, false),
                };
                let mut existing = kb.group(&key).cloned().unwrap_or_default();
                existing.group_key = key;
                if existing.description.is_none() && !text.is_empty() {
                    existing.description = Some(text);
                }
                existing.dynamic |= dynamic;
                if dynamic {
                    existing.provider_class = class;
                    existing.dispatch_key = Some("*".into());
                }
                kb.upsert_group(existing);
            }
        }
        desc.clear();
    };
    while i < lines.len() {
        let line = lines[i];
        if let Some(g) = line
            .strip_prefix("### ")
            .filter(|_| !line.starts_with("####"))
        {
            flush_group(&mut kb, &group, &mut group_desc);
            group = Some(g.trim().to_string());
            i += 1;
            continue;
        }
        if let Some(key) = action_header(line) {
            // Description and parameter lines up to the next header.
            let mut desc: Vec<&str> = Vec::new();
            let mut params_line: Option<(usize, &str)> = None;
            let mut j = i + 1;
            while j < lines.len() && action_header(lines[j]).is_none() && !is_group_header(lines[j])
            {
                let t = lines[j].trim_start();
                if t.starts_with("Parameters:") || t.starts_with("Parameters (JSON Schema):") {
                    params_line = Some((first_line + j + 1, t));
                } else if params_line.is_none() {
                    desc.push(lines[j]);
                }
                j += 1;
            }
            let in_pseudo = group.as_deref().is_some_and(is_pseudo_group);
            if in_pseudo || COLONY_PSEUDO_KEYS.contains(&key.as_str()) {
                if !kb.pseudo_keys.contains(&key) {
                    kb.pseudo_keys.push(key);
                }
            } else {
                let (params, extra) = match params_line {
                    Some((n, l)) => parse_params_line(l, n)?,
                    None => (Vec::new(), None),
                };
                let description = desc.join("\n").trim().to_string();
                let summary = description
                    .split("\n\n")
                    .next()
                    .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
                    .filter(|s| !s.is_empty());
                let (key, dynamic) = match dynamic_parts(&key) {
                    Some((class, rest)) => {
                        kb.add_dynamic_segment(&format!("{class}.*"));
                        (format!("{class}.*.{rest}"), true)
                    }
                    None => (key, false),
                };
                let group_key = group.as_ref().map(|g| match g.split_once('.') {
                    Some((class, mid)) if is_process_hex(mid) => format!("{class}.*"),
                    _ => g.clone(),
                });
                kb.insert(Action {
                    short_key: key.rsplit('.').next().unwrap_or(&key).to_string(),
                    group: group_key,
                    summary,
                    params,
                    accepts_extra_kwargs: extra.unwrap_or(false),
                    extra_kwargs_unknown: extra.is_none(),
                    is_async: true,
                    dynamic_segment: dynamic,
                    key,
                    ..Default::default()
                });
            }
            i = j;
            continue;
        }
        if group.is_some() {
            group_desc.push(line);
        }
        i += 1;
    }
    flush_group(&mut kb, &group, &mut group_desc);
    Ok(kb)
}

/// Parses `Parameters: a: str, b?: list` or `Parameters (JSON Schema): {...}`; the flag says
/// whether the schema allows extra properties (`None` for the plain list, which does not show
/// `**kwargs`).
fn parse_params_line(
    line: &str,
    line_no: usize,
) -> Result<(Vec<Param>, Option<bool>), PromptError> {
    if let Some(json) = line.strip_prefix("Parameters (JSON Schema):") {
        let schema: Value = serde_json::from_str(json.trim()).map_err(|e| PromptError {
            line: Some(line_no),
            message: format!("invalid JSON Schema in the parameter line: {e}"),
        })?;
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut params = Vec::new();
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (name, p) in props {
                let ty = schema_python_type(p);
                params.push(Param {
                    name: name.clone(),
                    allowed: p
                        .get("enum")
                        .and_then(Value::as_array)
                        .cloned()
                        .or_else(|| ty.as_deref().and_then(types::allowed_values)),
                    display_type: ty.clone(),
                    ty,
                    required: required.contains(&name.as_str()),
                    default: p.get("default").map(types::json_to_python_literal),
                    description: p
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    ..Default::default()
                });
            }
        }
        let extra = matches!(schema.get("additionalProperties"), Some(Value::Bool(true)));
        return Ok((params, Some(extra)));
    }
    let list = line.strip_prefix("Parameters:").unwrap_or(line).trim();
    let mut params = Vec::new();
    for part in types::split_top(list, ',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let Some((lhs, ty)) = part.split_once(':') else {
            return Err(PromptError {
                line: Some(line_no),
                message: format!(
                    "cannot read parameter `{part}` (expected `name: Type` or `name?: Type`)"
                ),
            });
        };
        let lhs = lhs.trim();
        let (name, optional) = match lhs.strip_suffix('?') {
            Some(n) => (n.trim(), true),
            None => (lhs, false),
        };
        let shown = ty.trim().to_string();
        let base = shown.split('{').next().unwrap_or(&shown).trim().to_string();
        params.push(Param {
            name: name.to_string(),
            approximate_type: types::prompt_type_is_lossy(&shown),
            display_type: Some(shown.clone()),
            ty: Some(base),
            required: !optional,
            ..Default::default()
        });
    }
    Ok((params, None))
}

/// A JSON Schema property as a Python type, for the `FULL` / `COMPACT_SCHEMA` detail levels.
fn schema_python_type(p: &Value) -> Option<String> {
    if let Some(alts) = p.get("anyOf").and_then(Value::as_array) {
        let m: Vec<String> = alts.iter().filter_map(schema_python_type).collect();
        return (m.len() == alts.len() && !m.is_empty()).then(|| m.join(" | "));
    }
    if let Some(vals) = p.get("enum").and_then(Value::as_array) {
        return Some(format!(
            "Literal[{}]",
            vals.iter()
                .map(types::json_to_python_literal)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(r) = p.get("$ref").and_then(Value::as_str) {
        return Some(r.rsplit('/').next().unwrap_or(r).to_string());
    }
    match p.get("type")?.as_str()? {
        "string" => Some("str".into()),
        "integer" => Some("int".into()),
        "number" => Some("float".into()),
        "boolean" => Some("bool".into()),
        "null" => Some("None".into()),
        "array" => Some(match p.get("items").and_then(schema_python_type) {
            Some(i) => format!("list[{i}]"),
            None => "list".into(),
        }),
        "object" => Some(
            match p.get("additionalProperties").and_then(schema_python_type) {
                Some(v) => format!("dict[str, {v}]"),
                None => "dict".into(),
            },
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "## Goals\n- ship\n\n## Available Actions\n\n### AgentPoolCapability\nManage agents.\n\n#### `await run(\"AgentPoolCapability.AgentPoolCapability.get_agent_status\")`\nGet the status of agents.\n\nLonger text.\n  Parameters: agent_ids: list, verbose?: bool, mode: Literal, limit: int | None\n\n#### `await run(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\")`\nSpawn agents.\n  Parameters: spec: AgentSpec {role: str, count?: int}\n\n### EventDrivenActionPolicy.3f9a01c2\nPolicy actions.\n\n#### `await run(\"EventDrivenActionPolicy.3f9a01c2.wait_for_next_event\")`\nWait.\n\n### repl\nPython REPL Actions\n\n#### `await run(\"ActionType.EXECUTE_CODE\")`\nRun code.\n\n### repl.guidance\n## Not a section heading inside guidance\n#### `await run(\"__repl_guidance__\")`\nLong guidance.\n\n## Rules\n1. Do things.\n";

    #[test]
    fn imports_groups_actions_params_and_pseudo_keys() {
        let kb = import_prompt(PROMPT).unwrap();
        let keys: Vec<&str> = kb.actions.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(
            keys,
            vec![
                "AgentPoolCapability.AgentPoolCapability.get_agent_status",
                "AgentPoolCapability.AgentPoolCapability.spawn_agents",
                "EventDrivenActionPolicy.*.wait_for_next_event",
            ]
        );
        let status = &kb.actions[0];
        assert_eq!(status.summary.as_deref(), Some("Get the status of agents."));
        let p: Vec<(&str, Option<&str>, bool, bool)> = status
            .params
            .iter()
            .map(|p| {
                (
                    p.name.as_str(),
                    p.ty.as_deref(),
                    p.required,
                    p.approximate_type,
                )
            })
            .collect();
        assert_eq!(
            p,
            vec![
                ("agent_ids", Some("list"), true, true),
                ("verbose", Some("bool"), false, false),
                ("mode", Some("Literal"), true, true),
                ("limit", Some("int | None"), true, false),
            ]
        );
        let spec = &kb.actions[1].params[0];
        assert_eq!(spec.ty.as_deref(), Some("AgentSpec"));
        assert!(spec.approximate_type);
        assert_eq!(
            spec.display_type.as_deref(),
            Some("AgentSpec {role: str, count?: int}")
        );
        assert!(kb.actions[2].dynamic_segment);
        assert_eq!(kb.dynamic_segments, vec!["EventDrivenActionPolicy.*"]);
        assert_eq!(
            kb.group("EventDrivenActionPolicy.*")
                .unwrap()
                .description
                .as_deref(),
            Some("Policy actions.")
        );
        assert!(kb.is_pseudo("ActionType.EXECUTE_CODE"));
        assert!(kb.is_pseudo("__repl_guidance__"));
        assert!(kb.is_pseudo("__repl_variables__"));
        assert_eq!(
            kb.group("AgentPoolCapability")
                .unwrap()
                .description
                .as_deref(),
            Some("Manage agents.")
        );
    }

    #[test]
    fn json_schema_detail_and_errors() {
        let text = "## Available Actions\n### G\n#### `await run(\"G.G.f\")`\nDo.\n  Parameters (JSON Schema): {\"properties\": {\"cabin\": {\"enum\": [\"economy\", \"business\"]}, \"n\": {\"type\": \"integer\", \"default\": 2}}, \"required\": [\"cabin\"]}\n";
        let kb = import_prompt(text).unwrap();
        let f = kb.get("G.G.f").unwrap();
        assert_eq!(f.param("cabin").unwrap().allowed.as_ref().unwrap().len(), 2);
        assert!(f.param("cabin").unwrap().required);
        assert_eq!(f.param("n").unwrap().default.as_deref(), Some("2"));
        let e = import_prompt("## Goals\n").unwrap_err();
        assert!(e.message.contains("Available Actions"));
        let e = import_prompt(
            "## Available Actions\n### G\n#### `await run(\"G.G.f\")`\nx\n  Parameters: oops\n",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(5));
    }
}
