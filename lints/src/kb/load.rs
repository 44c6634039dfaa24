//! Knowledge-base readers for JSON formats: `cellguard-kb/1` (a superset of `colony-kb/1`),
//! OpenAI / MCP tool definitions, bare `{name, parameters}` function docs (also as JSON Lines,
//! as BFCL ships them, and BFCL question records with a `function` list), smolagents'
//! `default_tools` dump and CodeAct/tau2 tool lists with `call_params`/`params`.

use super::{scan, types, Action, DefinitionLocation, Group, KnowledgeBase, Param};
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

/// A non-fatal problem met while building a KB: a scan finding (bare decorator, unevaluable
/// `action_key`, duplicate key, syntax error in a scanned file) or a merge conflict.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KbWarning {
    /// File the warning is about.
    pub path: String,
    /// One-based line, when known.
    pub line: Option<usize>,
    /// One-based column (characters), when known.
    pub column: Option<usize>,
    /// What happened.
    pub message: String,
}

impl std::fmt::Display for KbWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.path)?;
        if let Some(l) = self.line {
            write!(f, ":{l}:{}", self.column.unwrap_or(1))?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The formats [`load_str`] recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KbFormat {
    /// `{"schema": "cellguard-kb/1" | "colony-kb/1", "groups": [...]}`.
    CellguardKb,
    /// A list of tool definitions (OpenAI `{"type":"function","function":{...}}`, MCP
    /// `tools/list` results, Anthropic `input_schema`, bare `{name, parameters}`).
    Tools,
    /// JSON Lines, each line a tool definition or a BFCL record with a `function` list.
    JsonLines,
    /// The `## Available Actions` section of a recorded Colony prompt (text, or any JSON
    /// holding the prompt as a string).
    Prompt,
    /// Python sources with `@action_executor` methods.
    Python,
}

/// One KB input named by config or CLI, classified by what is on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KbInput {
    /// A directory: its Python sources (recursively, honouring `.gitignore`) are scanned and
    /// its top-level `*.json` / `*.jsonl` files are loaded as KB files.
    Directory(PathBuf),
    /// A `.py` / `.pyi` file, scanned.
    Python(PathBuf),
    /// Any other file: JSON KB / tool definitions, JSON Lines, or a recorded prompt.
    File(PathBuf),
}

impl KbInput {
    /// Classifies `path` (a path that does not exist is a [`KbInput::File`], and loading it
    /// reports the error).
    pub fn classify(path: &Path) -> KbInput {
        if path.is_dir() {
            KbInput::Directory(path.to_path_buf())
        } else if scan::is_python_path(path) {
            KbInput::Python(path.to_path_buf())
        } else {
            KbInput::File(path.to_path_buf())
        }
    }
}

/// A merged KB with the warnings met while building it.
#[derive(Debug, Clone, Default)]
pub struct KbLoad {
    /// The merged knowledge base.
    pub kb: KnowledgeBase,
    /// Scan findings and merge conflicts, in the order met.
    pub warnings: Vec<KbWarning>,
    /// Python files scanned.
    pub python_files: usize,
}

/// Loads and merges KB inputs: KB files, tool definitions, recorded prompts, Python files and
/// source directories.
///
/// Precedence: inputs merge in the order given, a later input winning on equal keys (with the
/// field-level rules of [`KnowledgeBase::merge_reporting`]). All Python sources named by the
/// inputs (files and directories) are scanned together, so inheritance is followed across
/// them, and the scan result takes the place of the first input that contributed Python
/// sources. Key conflicts (same key, different parameters) are reported as warnings naming
/// both inputs. `cache`, when given, re-uses the parse of files whose path, size and
/// modification time did not change (the language server keeps one).
///
/// Errors: the first input that cannot be read or parsed as a KB.
pub fn load_all_report(
    paths: &[PathBuf],
    cache: Option<&scan::ScanCache>,
) -> Result<KbLoad, KbError> {
    // Decide the merge order first: one slot for the (joint) scan, one per KB file.
    enum Slot {
        Scan,
        /// A file named as an input: an error stops the load.
        File(PathBuf),
        /// A top-level JSON file of a KB directory: one that is not a KB is skipped with a
        /// warning (a source tree may hold `pyrightconfig.json` and the like).
        DirFile(PathBuf),
    }
    let mut slots = Vec::new();
    let mut python_roots = Vec::new();
    for p in paths {
        match KbInput::classify(p) {
            KbInput::Directory(d) => {
                let before = python_roots.len();
                python_roots.push(d.clone());
                if before == 0 {
                    slots.push(Slot::Scan);
                }
                for f in collect_files(&d) {
                    slots.push(Slot::DirFile(f));
                }
            }
            KbInput::Python(f) => {
                if python_roots.is_empty() {
                    slots.push(Slot::Scan);
                }
                python_roots.push(f);
            }
            KbInput::File(f) => slots.push(Slot::File(f)),
        }
    }
    let mut load = KbLoad::default();
    let mut origin: std::collections::HashMap<String, String> = Default::default();
    for slot in slots {
        let (part, name) = match slot {
            Slot::Scan => {
                let result = match cache {
                    Some(c) => c.scan_paths(&python_roots)?,
                    None => scan::scan_paths(&python_roots)?,
                };
                load.python_files += result.files_scanned;
                load.warnings.extend(result.warnings);
                let name = python_roots
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                (result.kb, name)
            }
            Slot::File(f) => (load_path(&f)?, f.display().to_string()),
            Slot::DirFile(f) => match load_path(&f) {
                Ok(kb) => (kb, f.display().to_string()),
                Err(e) => {
                    load.warnings.push(KbWarning {
                        path: e.path,
                        line: e.line,
                        column: e.column,
                        message: format!("skipped: {}", e.message),
                    });
                    continue;
                }
            },
        };
        let keys: Vec<String> = part.actions.iter().map(|a| a.key.clone()).collect();
        for c in load.kb.merge_reporting(part) {
            let earlier = origin.get(&c.key).cloned().unwrap_or_default();
            load.warnings.push(KbWarning {
                path: name.clone(),
                line: None,
                column: None,
                message: format!(
                    "action `{}` is defined differently by {earlier} and {name} ({}); {name} wins",
                    c.key,
                    c.differences.join("; ")
                ),
            });
        }
        for k in keys {
            origin.insert(k, name.clone());
        }
    }
    Ok(load)
}

/// Loads a KB input: a KB file (format detected from content), a recorded prompt, a Python file
/// (scanned) or a directory (as [`load_all_report`] does).
///
/// Errors: unreadable file, invalid JSON (with line:column), or content that is no KB.
pub fn load_path(path: &Path) -> Result<KnowledgeBase, KbError> {
    match KbInput::classify(path) {
        KbInput::Directory(_) | KbInput::Python(_) => {
            return load_all_report(&[path.to_path_buf()], None).map(|l| l.kb);
        }
        KbInput::File(_) => {}
    }
    let bytes = std::fs::read(path).map_err(|e| KbError {
        path: path.display().to_string(),
        line: None,
        column: None,
        message: format!("cannot read knowledge base: {e}"),
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let mut kb = load_str(&text, &path.display().to_string())?;
    kb.sources.push(path.to_path_buf());
    Ok(kb)
}

/// Loads a KB from text; `name` is used in errors. JSON (a KB or tool definitions) and JSON
/// Lines are detected from the content; text that is not JSON but holds a
/// `## Available Actions` section is read as a recorded Colony prompt.
pub fn load_str(text: &str, name: &str) -> Result<KnowledgeBase, KbError> {
    let trimmed = text.trim_start();
    let looks_json = trimmed.starts_with('{') || trimmed.starts_with('[');
    if !looks_json && super::prompt::find_section(text).is_some() {
        return load_str_as(text, name, KbFormat::Prompt);
    }
    load_json(text, name)
}

/// Loads a KB from text in a given format (`kb import --format`).
///
/// Errors: the text is not in that format.
pub fn load_str_as(text: &str, name: &str, format: KbFormat) -> Result<KnowledgeBase, KbError> {
    let err = |message: String| KbError {
        path: name.to_string(),
        line: None,
        column: None,
        message,
    };
    match format {
        KbFormat::Prompt => super::prompt::import_prompt(text).map_err(|e| KbError {
            path: name.to_string(),
            line: e.line,
            column: Some(1),
            message: e.message,
        }),
        KbFormat::Python => Ok(scan::scan_sources(&[(name.to_string(), text.to_string())]).kb),
        KbFormat::CellguardKb => {
            let v: Value = serde_json::from_str(text).map_err(|e| KbError {
                path: name.to_string(),
                line: Some(e.line()),
                column: Some(e.column()),
                message: format!("invalid JSON: {e}"),
            })?;
            match v.as_object() {
                Some(obj) if obj.contains_key("groups") => cellguard_kb(obj).map_err(err),
                _ => Err(err(
                    "not a cellguard-kb file: expected an object with `groups`".into(),
                )),
            }
        }
        KbFormat::Tools | KbFormat::JsonLines => load_json(text, name),
    }
}

fn load_json(text: &str, name: &str) -> Result<KnowledgeBase, KbError> {
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
    let result = from_value_inner(value);
    if result.is_err() {
        // A recording (span export, message list) holding a Colony prompt as a string.
        if let Some(text) = super::prompt::prompt_in_json(value) {
            return super::prompt::import_prompt(&text).map_err(|e| e.message);
        }
    }
    result
}

fn from_value_inner(value: &Value) -> Result<KnowledgeBase, String> {
    match value {
        Value::Object(obj) => {
            if let Some(schema) = obj.get("schema").and_then(Value::as_str) {
                if schema.starts_with("colony-kb/") || schema.starts_with("cellguard-kb/") {
                    return cellguard_kb(obj);
                }
                return Err(format!("unknown knowledge-base schema `{schema}` (expected `cellguard-kb/1` or `colony-kb/1`)"));
            }
            // MCP `tools/list` over JSON-RPC: {"jsonrpc": "2.0", "result": {"tools": [...]}}.
            if let Some(result @ Value::Object(r)) = obj.get("result") {
                if r.contains_key("tools") {
                    return from_value_inner(result);
                }
            }
            for list_key in ["tools", "default_tools", "function", "functions"] {
                if let Some(Value::Array(items)) = obj.get(list_key) {
                    return tools(items);
                }
            }
            if obj.contains_key("name")
                && (obj.contains_key("parameters")
                    || obj.contains_key("function")
                    || obj.contains_key("inputSchema")
                    || obj.contains_key("input_schema"))
                || obj.contains_key("function")
            {
                return tools(std::slice::from_ref(value));
            }
            if obj.contains_key("groups") {
                return cellguard_kb(obj);
            }
            Err("not a knowledge base: expected `cellguard-kb/1` JSON, a list of tool definitions, an object with `tools`, or a recorded Colony prompt with `## Available Actions`".into())
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

fn strings_of(v: Option<&Value>) -> Vec<String> {
    let mut out: Vec<String> = v
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

/// `Literal["a", 'b', 3]` -> the values, when every member is a plain literal (also through
/// `Optional[...]` and `| None`; see [`types::allowed_values`]).
pub(crate) fn literal_values(ty: &str) -> Option<Vec<Value>> {
    types::allowed_values(ty)
}

/// Allowed values stated in a parameter description as BFCL's function docs write them:
/// `The mode to set. [Enum]: ["engage", "release"]` (a JSON array after `[Enum]:`). `None`
/// without one, or when what follows is not a non-empty JSON array.
pub(crate) fn described_enum(description: &str) -> Option<Vec<Value>> {
    let at = description.find("[Enum]:")?;
    let rest = description[at + "[Enum]:".len()..].trim_start();
    if !rest.starts_with('[') {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(rest).into_iter::<Vec<Value>>();
    match de.next() {
        Some(Ok(values)) if !values.is_empty() => Some(values),
        _ => None,
    }
}

/// One parameter of a KB file or tool list.
///
/// Errors: no `name` string (a nameless parameter can never be passed, and used to be read
/// as a parameter named "").
fn kb_param(p: &Map<String, Value>) -> Result<Param, String> {
    let name = match p.get("name") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(other) => {
            return Err(format!(
                "parameter `name` must be a non-empty string, not {other}"
            ))
        }
        None => return Err("parameter without a `name`".into()),
    };
    let ty = str_of(p.get("type")).or_else(|| str_of(p.get("annotation")));
    let default = match p.get("default") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => Some(types::json_to_python_literal(v)),
    };
    let required = p
        .get("required")
        .and_then(Value::as_bool)
        .unwrap_or(default.is_none());
    let allowed = match p.get("allowed").or_else(|| p.get("enum")) {
        Some(Value::Array(a)) => Some(a.clone()),
        _ => ty.as_deref().and_then(literal_values).or_else(|| {
            str_of(p.get("description"))
                .as_deref()
                .and_then(described_enum)
        }),
    };
    Ok(Param {
        name,
        approximate_type: bool_of(p.get("approximate_type")),
        display_type: str_of(p.get("display_type")),
        ty,
        required,
        default,
        keyword_only: bool_of(p.get("keyword_only")),
        allowed,
        description: str_of(p.get("description")),
    })
}

/// Rewrites `Class.<mid>.rest` to `Class.*.rest` (a per-process middle segment).
fn wildcard_key(key: &str) -> String {
    let mut parts = key.splitn(3, '.');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(class), Some(_), Some(rest)) => format!("{class}.*.{rest}"),
        _ => key.to_string(),
    }
}

fn cellguard_kb(obj: &Map<String, Value>) -> Result<KnowledgeBase, String> {
    let mut kb = KnowledgeBase::new();
    kb.pseudo_keys = obj
        .get("pseudo_keys")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    kb.dynamic_segments = obj
        .get("dynamic_segments")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let groups = obj
        .get("groups")
        .and_then(Value::as_array)
        .ok_or("`groups` must be a list")?;
    for (gi, group) in groups.iter().enumerate() {
        let g = group
            .as_object()
            .ok_or(format!("groups[{gi}] must be an object"))?;
        let group_key = str_of(g.get("group_key"));
        let group_dynamic = bool_of(g.get("dispatch_key_dynamic_at_runtime"))
            || bool_of(g.get("dynamic"))
            || str_of(g.get("dispatch_key")).as_deref() == Some("*");
        let group_tags = strings_of(g.get("tags"));
        let planning = group_tags.iter().any(|t| t == "planning");
        let source_path = str_of(g.get("source_path"));
        let provider_class = str_of(g.get("provider_class"));
        if let Some(gk) = &group_key {
            let gk = match (&provider_class, group_dynamic) {
                (Some(class), true) if gk == class || gk.starts_with(&format!("{class}.")) => {
                    format!("{class}.*")
                }
                _ => gk.clone(),
            };
            kb.upsert_group(Group {
                group_key: gk,
                provider_class: provider_class.clone(),
                dispatch_key: if group_dynamic {
                    Some("*".into())
                } else {
                    str_of(g.get("dispatch_key"))
                },
                dynamic: group_dynamic,
                description: str_of(g.get("description")),
                tags: group_tags.clone(),
                source_path: source_path.clone(),
            });
        }
        let entries: Vec<(String, &Map<String, Value>)> = match g.get("actions") {
            Some(Value::Object(m)) => m
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_object()?)))
                .collect(),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|v| Some((str_of(v.get("key"))?, v.as_object()?)))
                .collect(),
            None | Some(Value::Null) => Vec::new(),
            _ => return Err(format!("groups[{gi}].actions must be an object or a list")),
        };
        for (key, a) in entries {
            let params = a
                .get("params")
                .and_then(Value::as_array)
                .map(|ps| {
                    ps.iter()
                        .filter_map(Value::as_object)
                        .enumerate()
                        .map(|(pi, p)| {
                            kb_param(p).map_err(|e| format!("action `{key}`, params[{pi}]: {e}"))
                        })
                        .collect::<Result<Vec<_>, _>>()
                })
                .transpose()?
                .unwrap_or_default();
            let source = match a.get("source") {
                Some(v @ Value::Object(_)) => {
                    serde_json::from_value::<DefinitionLocation>(v.clone()).ok()
                }
                _ => match (&source_path, a.get("source_line").and_then(Value::as_u64)) {
                    (Some(p), Some(line)) => Some(DefinitionLocation {
                        path: p.clone(),
                        line: u32::try_from(line).unwrap_or(u32::MAX),
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
            // A dynamic middle segment is a wildcard: store it as `*` whatever the file wrote
            // (colony-kb/1 writes the class name there).
            let key = if dynamic && key.matches('.').count() >= 2 {
                wildcard_key(&key)
            } else {
                key
            };
            if dynamic {
                if let Some(class) = key.split('.').next() {
                    kb.add_dynamic_segment(&format!("{class}.*"));
                }
            }
            let short_key = str_of(a.get("short_key"))
                .unwrap_or_else(|| key.rsplit('.').next().unwrap_or(&key).to_string());
            let group = str_of(a.get("group")).or_else(|| {
                group_key
                    .clone()
                    .map(|gk| match (&provider_class, dynamic) {
                        (Some(class), true)
                            if gk == *class || gk.starts_with(&format!("{class}.")) =>
                        {
                            format!("{class}.*")
                        }
                        _ => gk,
                    })
            });
            let action_key_expr = match a.get("action_key_expr") {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Object(o)) => str_of(o.get("unevaluated")),
                _ => None,
            };
            kb.insert(Action {
                short_key,
                group,
                summary: str_of(a.get("summary")).or_else(|| {
                    str_of(a.get("docstring")).map(|d| {
                        let first = d.trim().split("\n\n").next().unwrap_or("");
                        first.split_whitespace().collect::<Vec<_>>().join(" ")
                    })
                }),
                params,
                accepts_extra_kwargs: bool_of(a.get("accepts_extra_kwargs")),
                extra_kwargs_unknown: matches!(a.get("accepts_extra_kwargs"), Some(Value::Null)),
                is_async: a.get("is_async").and_then(Value::as_bool).unwrap_or(true),
                exclude_from_planning: bool_of(a.get("exclude_from_planning")),
                planning: planning || bool_of(a.get("planning")),
                dynamic_segment: dynamic,
                source,
                returns: str_of(a.get("returns")),
                method: str_of(a.get("method")),
                docstring: str_of(a.get("docstring")),
                tags: strings_of(a.get("tags")),
                emits_lifecycle: a.get("emits_lifecycle").and_then(Value::as_bool),
                interruptible: a.get("interruptible").and_then(Value::as_bool),
                action_key_expr,
                key,
            });
        }
    }
    Ok(kb)
}

/// JSON-schema type of one property, rendered as a Python type (`array` of `string` ->
/// `list[str]`, `["string", "null"]` / `anyOf` with `null` -> `str | None`, `enum` -> a
/// `Literal[...]`, `$ref` -> the referenced definition's name).
fn schema_type(p: &Value) -> Option<String> {
    if let Some(r) = p.get("$ref").and_then(Value::as_str) {
        return Some(r.rsplit('/').next().unwrap_or(r).to_string());
    }
    for union_key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = p.get(union_key) {
            let members: Vec<String> = alts.iter().filter_map(schema_type).collect();
            if members.len() == alts.len() && !members.is_empty() {
                return Some(members.join(" | "));
            }
            return None;
        }
    }
    if let Some(c) = p.get("const") {
        return Some(format!("Literal[{}]", types::json_to_python_literal(c)));
    }
    let Some(t) = p.get("type") else {
        return p.get("enum").and_then(Value::as_array).map(|vals| {
            format!(
                "Literal[{}]",
                vals.iter()
                    .map(types::json_to_python_literal)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        });
    };
    let name = |s: &str| match s {
        "string" => "str".to_string(),
        "integer" => "int".to_string(),
        "number" | "float" => "float".to_string(),
        "boolean" => "bool".to_string(),
        "array" => match p.get("items").and_then(item_type) {
            Some(inner) => format!("list[{inner}]"),
            None => "list".to_string(),
        },
        "object" | "dict" => match p.get("additionalProperties").and_then(schema_type) {
            Some(inner) => format!("dict[str, {inner}]"),
            None => "dict".to_string(),
        },
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

/// The element type of an array: an `enum` constrains the elements (`list[Literal["a", "b"]]`),
/// which a parameter's `allowed` list cannot say.
fn item_type(items: &Value) -> Option<String> {
    match items.get("enum").and_then(Value::as_array) {
        Some(vals) if !vals.is_empty() => Some(format!(
            "Literal[{}]",
            vals.iter()
                .map(types::json_to_python_literal)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        _ => schema_type(items),
    }
}

fn tool(v: &Value) -> Option<Action> {
    let f = v.get("function").filter(|f| f.is_object()).unwrap_or(v);
    let name = str_of(f.get("name"))?;
    let mut params = Vec::new();
    let mut accepts_extra_kwargs = false;
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
        // JSON Schema's default for `additionalProperties` is true, but tool schemas list every
        // argument and providers reject unknown ones; only an explicit `true`/schema means
        // "extra arguments pass through".
        accepts_extra_kwargs = matches!(
            schema.get("additionalProperties"),
            Some(Value::Bool(true) | Value::Object(_))
        );
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (pname, p) in props {
                let ty = schema_type(p);
                let allowed = p
                    .get("enum")
                    .and_then(Value::as_array)
                    .cloned()
                    .or_else(|| ty.as_deref().and_then(types::allowed_values))
                    .or_else(|| {
                        p.get("description")
                            .and_then(Value::as_str)
                            .and_then(described_enum)
                    });
                params.push(Param {
                    name: pname.clone(),
                    ty,
                    required: required.contains(&pname.as_str()),
                    default: p.get("default").map(types::json_to_python_literal),
                    allowed,
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
        // A tool's nameless parameter is skipped (tool lists are read leniently).
        params.extend(
            ps.iter()
                .filter_map(Value::as_object)
                .filter_map(|p| kb_param(p).ok()),
        );
    }
    let description = match f.get("description") {
        Some(Value::String(s)) => Some(s.clone()),
        _ => str_of(f.get("docstring")),
    };
    // A description of several paragraphs: its first one is the summary, and the whole text is
    // kept as the docstring.
    let (summary, docstring) = match description {
        Some(d) if d.trim().contains("\n\n") => {
            let first = d.trim().split("\n\n").next().unwrap_or("");
            let first = first.split_whitespace().collect::<Vec<_>>().join(" ");
            (Some(first), Some(d.trim().to_string()))
        }
        other => (other, None),
    };
    Some(Action {
        short_key: name.rsplit('.').next().unwrap_or(&name).to_string(),
        key: name,
        group: str_of(v.get("class")),
        summary,
        docstring,
        params,
        accepts_extra_kwargs,
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

/// The KB files of a directory named as a KB input: its top-level `*.json` / `*.jsonl` files,
/// sorted. (Its Python sources are scanned by [`load_all_report`].) A file path gives itself.
pub fn collect_files(path: &Path) -> Vec<PathBuf> {
    if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.is_file()
                    && matches!(
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
        // Copies of corpus files kept in the repository (sources and licences in
        // fixtures/corpus/README.md).
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/corpus");
        let colony = load_path(&corpus.join("colony/colony-kb.json")).unwrap();
        assert_eq!(colony.actions.len(), 430);
        assert_eq!(colony.pseudo_keys.len(), 3);
        let status = colony
            .get("AgentPoolCapability.AgentPoolCapability.get_agent_status")
            .unwrap();
        assert_eq!(status.params[0].name, "agent_ids");
        let smol = load_path(&corpus.join("smolagents/default_tools.json")).unwrap();
        let mut names: Vec<&str> = smol.actions.iter().map(|a| a.key.as_str()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            vec![
                "final_answer",
                "python_interpreter",
                "transcriber",
                "user_input",
                "visit_webpage",
                "web_search",
                "wikipedia_search"
            ]
        );
        let codeact = load_path(&corpus.join("codeact/tools.json")).unwrap();
        assert_eq!(codeact.actions.len(), 15);
        assert_eq!(codeact.get("put").unwrap().params.len(), 2);
        let cars = load_path(&corpus.join("bfcl/func_doc/vehicle_control.json")).unwrap();
        assert_eq!(cars.actions.len(), 22);
        assert!(
            cars.get("lockDoors")
                .unwrap()
                .param("door")
                .unwrap()
                .required
        );
    }

    #[test]
    fn enums_stated_in_bfcl_descriptions() {
        assert_eq!(
            described_enum("The mode. [Enum]: [\"engage\", \"release\"] Default engage."),
            Some(vec![Value::from("engage"), Value::from("release")])
        );
        assert_eq!(described_enum("No enum here."), None);
        assert_eq!(described_enum("[Enum]: not a list"), None);
        assert_eq!(described_enum("[Enum]: []"), None);
        let kb = load_str(
            r#"[{"name": "lockDoors", "parameters": {"type": "dict", "properties": {
                "unlock": {"type": "boolean", "description": "True to unlock."},
                "door": {"type": "array", "items": {"type": "string"},
                         "description": "The doors. [Enum]: [\"driver\", \"passenger\"]"},
                "mode": {"type": "string", "enum": ["a"], "description": "[Enum]: [\"b\"]"},
                "side": {"type": "array", "items": {"type": "string", "enum": ["left", "right"]}}
            }, "required": ["unlock", "door"]}}]"#,
            "tools.json",
        )
        .unwrap();
        let tool = kb.get("lockDoors").unwrap();
        let allowed = |p: &str| tool.param(p).unwrap().allowed.clone();
        assert_eq!(allowed("unlock"), None);
        assert_eq!(
            allowed("door"),
            Some(vec![Value::from("driver"), Value::from("passenger")])
        );
        // A schema `enum` wins over the description.
        assert_eq!(allowed("mode"), Some(vec![Value::from("a")]));
        // An `items` enum is in the element type (`list[Literal['left', 'right']]`).
        assert_eq!(
            tool.param("side").unwrap().ty.as_deref(),
            Some("list[Literal['left', 'right']]")
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

    /// A parameter without a usable name was read as a parameter named "".
    #[test]
    fn nameless_parameters_are_errors() {
        for (text, want) in [
            (
                r#"{"schema":"cellguard-kb/1","groups":[{"actions":{"a":{"params":[{"name":1}]}}}]}"#,
                "action `a`, params[0]: parameter `name` must be a non-empty string, not 1",
            ),
            (
                r#"{"schema":"cellguard-kb/1","groups":[{"actions":{"a":{"params":[{"type":"str"}]}}}]}"#,
                "action `a`, params[0]: parameter without a `name`",
            ),
        ] {
            let e = load_str(text, "kb.json").unwrap_err();
            assert!(e.message.contains(want), "{e:?}");
        }
    }

    #[test]
    fn bad_json_has_position() {
        let e = load_str("{\n  \"schema\": \n}", "kb.json").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().starts_with("kb.json:3:"));
    }
}
