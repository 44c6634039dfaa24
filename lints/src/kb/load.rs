//! Knowledge-base readers for JSON formats: `cellguard-kb/1` (a superset of `colony-kb/1`),
//! OpenAI / MCP tool definitions, bare `{name, parameters}` function docs (also as JSON Lines,
//! as BFCL ships them, and BFCL question records with a `function` list), smolagents'
//! `default_tools` dump and CodeAct/tau2 tool lists with `call_params`/`params`.

use super::{Action, DefinitionLocation, KnowledgeBase, Param};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// A KB file that could not be read, with the position of the problem when known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}{}: {message}", .line.map(|l| format!(":{l}:{}", .column.unwrap_or(1))).unwrap_or_default())]
pub struct KbError {
    /// The file.
    pub path: String,
    /// One-based line, when known.
    pub line: Option<usize>,
    /// One-based column, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// The formats [`load_str`] recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KbFormat {
    /// `{"schema": "cellguard-kb/1" | "colony-kb/1", "groups": [...]}`.
    CellguardKb,
    /// A list of tool definitions (OpenAI `{"type":"function","function":{...}}` or bare).
    Tools,
    /// JSON Lines, each line a tool definition or a BFCL record with a `function` list.
    JsonLines,
}

/// Loads a KB file (format detected from content).
///
/// Errors: unreadable file, invalid JSON (with line:column), or a JSON shape that is no KB.
pub fn load_path(path: &Path) -> Result<KnowledgeBase, KbError> {
    let text = std::fs::read_to_string(path).map_err(|e| KbError {
        path: path.display().to_string(),
        line: None,
        column: None,
        message: format!("cannot read knowledge base: {e}"),
    })?;
    let mut kb = load_str(&text, &path.display().to_string())?;
    kb.sources.push(path.to_path_buf());
    Ok(kb)
}

/// Loads a KB from text; `name` is used in errors.
pub fn load_str(text: &str, name: &str) -> Result<KnowledgeBase, KbError> {
    let err = |line: Option<usize>, column: Option<usize>, message: String| KbError {
        path: name.to_string(),
        line,
        column,
        message,
    };
    match serde_json::from_str::<Value>(text) {
        Ok(value) => from_value(&value).map_err(|m| err(None, None, m)),
        Err(e) => {
            // JSON Lines: every non-blank line is a JSON value.
            let lines: Vec<(usize, &str)> = text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .collect();
            if lines.len() > 1 && serde_json::from_str::<Value>(lines[0].1).is_ok() {
                let mut kb = KnowledgeBase::new();
                for (n, line) in lines {
                    let v: Value = serde_json::from_str(line).map_err(|e| {
                        err(Some(n + 1), Some(e.column()), format!("invalid JSON: {e}"))
                    })?;
                    let part = from_value(&v).map_err(|m| err(Some(n + 1), Some(1), m))?;
                    kb.merge(part);
                }
                return Ok(kb);
            }
            Err(err(
                Some(e.line()),
                Some(e.column()),
                format!("invalid JSON: {e}"),
            ))
        }
    }
}

fn from_value(value: &Value) -> Result<KnowledgeBase, String> {
    match value {
        Value::Object(obj) => {
            if let Some(schema) = obj.get("schema").and_then(Value::as_str) {
                if schema.starts_with("colony-kb/") || schema.starts_with("cellguard-kb/") {
                    return cellguard_kb(obj);
                }
                return Err(format!("unknown knowledge-base schema `{schema}` (expected `cellguard-kb/1` or `colony-kb/1`)"));
            }
            for list_key in ["tools", "default_tools", "function", "functions"] {
                if let Some(Value::Array(items)) = obj.get(list_key) {
                    return tools(items);
                }
            }
            if obj.contains_key("name")
                && (obj.contains_key("parameters") || obj.contains_key("function"))
                || obj.contains_key("function")
            {
                return tools(std::slice::from_ref(value));
            }
            if obj.contains_key("groups") {
                return cellguard_kb(obj);
            }
            Err("not a knowledge base: expected `cellguard-kb/1` JSON, a list of tool definitions, or an object with `tools`".into())
        }
        Value::Array(items) => tools(items),
        _ => Err("not a knowledge base: expected a JSON object or array".into()),
    }
}

fn str_of(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_string)
}

fn bool_of(v: Option<&Value>) -> bool {
    v.and_then(Value::as_bool).unwrap_or(false)
}

/// `Literal["a", 'b', 3]` -> the values, when every member is a plain literal.
pub(crate) fn literal_values(ty: &str) -> Option<Vec<Value>> {
    let ty = ty.trim();
    let inner = ty
        .strip_prefix("Literal[")
        .or_else(|| ty.strip_prefix("typing.Literal["))?
        .strip_suffix(']')?;
    let mut out = Vec::new();
    for part in split_top_level(inner) {
        let p = part.trim();
        if (p.starts_with('"') && p.ends_with('"') || p.starts_with('\'') && p.ends_with('\''))
            && p.len() >= 2
        {
            out.push(Value::String(p[1..p.len() - 1].to_string()));
        } else if let Ok(i) = p.parse::<i64>() {
            out.push(Value::from(i));
        } else if p == "True" || p == "False" {
            out.push(Value::Bool(p == "True"));
        } else if p == "None" {
            out.push(Value::Null);
        } else {
            return None;
        }
    }
    Some(out)
}

/// Splits on commas not nested in brackets or quotes.
pub(crate) fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0);
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '(' | '{') => depth += 1,
            (None, ']' | ')' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(&s[start..]);
    }
    out
}

fn kb_param(p: &Map<String, Value>) -> Param {
    let ty = str_of(p.get("type")).or_else(|| str_of(p.get("annotation")));
    let default = match p.get("default") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => Some(v.to_string()),
    };
    let required = p
        .get("required")
        .and_then(Value::as_bool)
        .unwrap_or(default.is_none());
    let allowed = match p.get("allowed").or_else(|| p.get("enum")) {
        Some(Value::Array(a)) => Some(a.clone()),
        _ => ty.as_deref().and_then(literal_values),
    };
    Param {
        name: str_of(p.get("name")).unwrap_or_default(),
        approximate_type: bool_of(p.get("approximate_type")),
        ty,
        required,
        default,
        keyword_only: bool_of(p.get("keyword_only")),
        allowed,
        description: str_of(p.get("description")),
    }
}

fn cellguard_kb(obj: &Map<String, Value>) -> Result<KnowledgeBase, String> {
    let mut kb = KnowledgeBase::new();
    let strings = |k: &str| -> Vec<String> {
        obj.get(k)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    kb.pseudo_keys = strings("pseudo_keys");
    kb.dynamic_segments = strings("dynamic_segments");
    let groups = obj
        .get("groups")
        .and_then(Value::as_array)
        .ok_or("`groups` must be a list")?;
    for (gi, group) in groups.iter().enumerate() {
        let g = group
            .as_object()
            .ok_or(format!("groups[{gi}] must be an object"))?;
        let group_key = str_of(g.get("group_key"));
        let group_dynamic = bool_of(g.get("dispatch_key_dynamic_at_runtime"));
        let planning = g
            .get("tags")
            .and_then(Value::as_array)
            .is_some_and(|t| t.iter().any(|v| v.as_str() == Some("planning")));
        let source_path = str_of(g.get("source_path"));
        let entries: Vec<(String, &Map<String, Value>)> = match g.get("actions") {
            Some(Value::Object(m)) => m
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_object()?)))
                .collect(),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|v| Some((str_of(v.get("key"))?, v.as_object()?)))
                .collect(),
            None => Vec::new(),
            _ => return Err(format!("groups[{gi}].actions must be an object or a list")),
        };
        for (key, a) in entries {
            let short_key = str_of(a.get("short_key"))
                .unwrap_or_else(|| key.rsplit('.').next().unwrap_or(&key).to_string());
            let params = a
                .get("params")
                .and_then(Value::as_array)
                .map(|ps| {
                    ps.iter()
                        .filter_map(Value::as_object)
                        .map(kb_param)
                        .collect()
                })
                .unwrap_or_default();
            let source = match a.get("source") {
                Some(v @ Value::Object(_)) => {
                    serde_json::from_value::<DefinitionLocation>(v.clone()).ok()
                }
                _ => match (&source_path, a.get("source_line").and_then(Value::as_u64)) {
                    (Some(p), Some(line)) => Some(DefinitionLocation {
                        path: p.clone(),
                        line: line as u32,
                        column: 1,
                    }),
                    _ => None,
                },
            };
            let dynamic = bool_of(a.get("dynamic_segment"))
                || group_dynamic
                || kb.dynamic_segments.iter().any(|d| {
                    d.strip_suffix(".*")
                        .is_some_and(|p| key.starts_with(&format!("{p}.")))
                });
            kb.insert(Action {
                short_key,
                group: group_key.clone(),
                summary: str_of(a.get("summary")).or_else(|| {
                    str_of(a.get("docstring")).map(|d| d.lines().next().unwrap_or("").to_string())
                }),
                params,
                accepts_extra_kwargs: bool_of(a.get("accepts_extra_kwargs")),
                is_async: a.get("is_async").and_then(Value::as_bool).unwrap_or(true),
                exclude_from_planning: bool_of(a.get("exclude_from_planning")),
                planning: planning || bool_of(a.get("planning")),
                dynamic_segment: dynamic,
                source,
                returns: str_of(a.get("returns")),
                key,
            });
        }
    }
    Ok(kb)
}

/// JSON-schema type of one property, rendered as a Python-ish type.
fn schema_type(p: &Value) -> Option<String> {
    let t = p.get("type")?;
    let name = |s: &str| match s {
        "string" => "str".to_string(),
        "integer" => "int".to_string(),
        "number" | "float" => "float".to_string(),
        "boolean" => "bool".to_string(),
        "array" => match p.get("items").and_then(schema_type) {
            Some(inner) => format!("list[{inner}]"),
            None => "list".to_string(),
        },
        "object" | "dict" => "dict".to_string(),
        "null" => "None".to_string(),
        other => other.to_string(),
    };
    match t {
        Value::String(s) => Some(name(s)),
        Value::Array(ts) => Some(
            ts.iter()
                .filter_map(Value::as_str)
                .map(name)
                .collect::<Vec<_>>()
                .join(" | "),
        ),
        _ => None,
    }
}

fn tool(v: &Value) -> Option<Action> {
    let f = v.get("function").filter(|f| f.is_object()).unwrap_or(v);
    let name = str_of(f.get("name"))?;
    let mut params = Vec::new();
    if let Some(schema) = f
        .get("parameters")
        .or_else(|| f.get("input_schema"))
        .or_else(|| f.get("inputSchema"))
    {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (pname, p) in props {
                params.push(Param {
                    name: pname.clone(),
                    ty: schema_type(p),
                    required: required.contains(&pname.as_str()),
                    default: p.get("default").map(|d| d.to_string()),
                    allowed: p.get("enum").and_then(Value::as_array).cloned(),
                    description: str_of(p.get("description")),
                    ..Default::default()
                });
            }
        }
    } else if let Some(inputs) = f.get("inputs").and_then(Value::as_object) {
        // smolagents Tool.inputs: {arg: {type, description, nullable}}
        for (pname, p) in inputs {
            params.push(Param {
                name: pname.clone(),
                ty: str_of(p.get("type")),
                required: !bool_of(p.get("nullable")),
                description: str_of(p.get("description")),
                ..Default::default()
            });
        }
    } else if let Some(ps) = f
        .get("call_params")
        .or_else(|| f.get("params"))
        .and_then(Value::as_array)
    {
        for p in ps.iter().filter_map(Value::as_object) {
            params.push(kb_param(p));
        }
    }
    let summary = match f.get("description") {
        Some(Value::String(s)) => Some(s.clone()),
        _ => str_of(f.get("docstring")),
    };
    Some(Action {
        short_key: name.rsplit('.').next().unwrap_or(&name).to_string(),
        key: name,
        group: str_of(v.get("class")),
        summary,
        params,
        is_async: false,
        returns: str_of(f.get("output_type")).or_else(|| str_of(f.get("returns"))),
        ..Default::default()
    })
}

fn tools(items: &[Value]) -> Result<KnowledgeBase, String> {
    let mut kb = KnowledgeBase::new();
    for (i, item) in items.iter().enumerate() {
        if let Some(list) = item.get("function").and_then(Value::as_array) {
            kb.merge(tools(list)?);
            continue;
        }
        let action = tool(item).ok_or(format!("tool [{i}] has no `name`"))?;
        kb.insert(action);
    }
    Ok(kb)
}

/// Resolves KB paths from config or CLI: files are loaded; directories are loaded file by file
/// (`*.json`, `*.jsonl`). Python sources are handled by the KB scanner when present.
pub fn collect_files(path: &Path) -> Vec<PathBuf> {
    if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("json" | "jsonl")
                )
            })
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_corpus_formats() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/kb");
        if !corpus.exists() {
            return; // the shared corpus is not part of a clean clone's guarantees
        }
        let colony = load_path(&corpus.join("colony/colony-kb.json")).unwrap();
        assert_eq!(colony.actions.len(), 430);
        assert_eq!(colony.pseudo_keys.len(), 3);
        let tau = load_path(&corpus.join("tau-bench-airline/tools.json")).unwrap();
        assert_eq!(tau.actions.len(), 14);
        let book = tau.get("book_reservation").unwrap();
        assert_eq!(
            book.param("cabin").unwrap().allowed.as_ref().unwrap().len(),
            3
        );
        let math = load_path(&corpus.join("bfcl/multi_turn_func_doc/math_api.json")).unwrap();
        assert!(
            math.get("absolute_value")
                .unwrap()
                .param("number")
                .unwrap()
                .required
        );
    }

    #[test]
    fn literal_types() {
        assert_eq!(
            literal_values("Literal['a', \"b\", 3]"),
            Some(vec![Value::from("a"), Value::from("b"), Value::from(3)])
        );
        assert_eq!(literal_values("list[str]"), None);
    }

    #[test]
    fn bad_json_has_position() {
        let e = load_str("{\n  \"schema\": \n}", "kb.json").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().starts_with("kb.json:3:"));
    }
}
