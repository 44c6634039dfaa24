//! Two more chat shapes, read by the chat reader ([`super::chat`]) message by message:
//!
//! - **Anthropic Messages** (`--format anthropic`): an assistant message's `content` is a list
//!   of blocks; `{"type": "text", "text"}` blocks are its text and each
//!   `{"type": "tool_use", "id", "name", "input"}` block is a tool call (params = `input`). A
//!   user message's `{"type": "tool_result", "tool_use_id", "content", "is_error"}` blocks are
//!   the results (each a `tool_result` message, linked by `tool_use_id`; `is_error: true` makes
//!   the call's status `error`), and its text blocks a user message after them.
//! - **OpenAI Responses** (`--format openai-responses`): a list of items;
//!   `{"type": "function_call", "call_id", "name", "arguments"}` is a tool call (consecutive
//!   ones are one model turn: one cell), `{"type": "function_call_output", "call_id",
//!   "output"}` its result, messages (`{"role", "content"}`, with or without
//!   `"type": "message"`) as in chat, and `reasoning` items are read and give no record.
//!
//! Everything else (conversation lists, `messages` wrappers, JSON Lines, status from the
//! result, malformed entries) is as for OpenAI chat. A message in either shape may also appear
//! in an OpenAI chat file: each message is read by its own shape.

use super::chat::{text_arguments, Parsed, ToolCall};
use super::convert::content_text;
use super::doc::map;
use super::Format;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A cheap pre-check on a message's JSON text: true when it may be in one of these shapes.
fn may_be(raw: &str) -> bool {
    [
        "\"tool_use\"",
        "\"tool_result\"",
        "\"function_call",
        "\"reasoning\"",
    ]
    .iter()
    .any(|p| raw.contains(p))
}

/// The shape of one message object: `Some(AnthropicMessages)` for a `content` list holding
/// `tool_use` / `tool_result` blocks, `Some(OpenaiResponses)` for a Responses item (`type`
/// `function_call`, `function_call_output` or `reasoning`); `None` otherwise.
pub(crate) fn shape(m: &Map<String, Value>) -> Option<Format> {
    if let Some(Value::String(t)) = m.get("type") {
        if matches!(
            t.as_str(),
            "function_call" | "function_call_output" | "reasoning"
        ) {
            return Some(Format::OpenaiResponses);
        }
    }
    match m.get("content") {
        Some(Value::Array(blocks)) if m.contains_key("role") => blocks
            .iter()
            .any(|b| {
                matches!(
                    b.get("type").and_then(Value::as_str),
                    Some("tool_use" | "tool_result")
                )
            })
            .then_some(Format::AnthropicMessages),
        _ => None,
    }
}

/// The format of a chat document whose messages (up to the first 1,000 of `text`) are in one
/// of these shapes, from a scan of its text: `Some(AnthropicMessages)` when a
/// `"type": "tool_use"` / `"tool_result"` block appears, `Some(OpenaiResponses)` when a
/// `"type": "function_call"` item does; `None` (plain OpenAI chat) otherwise.
pub(crate) fn document_shape(text: &str) -> Option<Format> {
    let has = |value: &str| {
        ["\"type\":\"", "\"type\": \""]
            .iter()
            .any(|k| text.contains(&format!("{k}{value}\"")))
    };
    if has("tool_use") || has("tool_result") {
        Some(Format::AnthropicMessages)
    } else if has("function_call") || has("function_call_output") {
        Some(Format::OpenaiResponses)
    } else {
        None
    }
}

/// The messages one source record gives when it is in one of these shapes (`None`: it is
/// not, read it as a chat message). Errors: why the record is malformed.
pub(crate) fn parse(r: &RawValue, line: u64) -> Option<Result<Vec<Parsed>, String>> {
    if !may_be(r.get()) {
        return None;
    }
    let m = map(r)?;
    Some(match shape(&m)? {
        Format::OpenaiResponses => responses_item(&m, line),
        _ => anthropic_message(&m, line),
    })
}

/// A message with no calls.
fn message(line: u64, role: &str, content: Option<String>) -> Parsed {
    Parsed {
        line,
        role: role.to_string(),
        content,
        name: None,
        tool_call_id: None,
        tool_call_ids: Vec::new(),
        calls: Vec::new(),
        extra: Map::new(),
        warnings: Vec::new(),
        is_error: false,
        part: false,
        ignored: false,
        responses_call: false,
    }
}

/// A source record read and counted that gives no record.
fn ignored(line: u64) -> Parsed {
    Parsed {
        ignored: true,
        ..message(line, "", None)
    }
}

/// The text of a string field, if any.
fn text(m: &Map<String, Value>, key: &str) -> Option<String> {
    m.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A tool call from a name, an id and its arguments (JSON text, an object, or absent).
fn call(id: Option<String>, name: Option<String>, args: Option<&Value>, what: &Value) -> ToolCall {
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return ToolCall::malformed(what, "`name` must be a non-empty string".into());
    };
    let (arguments, params) = match args {
        None | Some(Value::Null) => text_arguments(None),
        Some(Value::String(s)) => text_arguments(Some(s.clone())),
        Some(v @ Value::Object(_)) => (v.to_string(), Some(v.clone())),
        Some(v) => (v.to_string(), None),
    };
    ToolCall {
        id,
        name,
        arguments,
        params,
        malformed: None,
    }
}

/// One OpenAI Responses item.
fn responses_item(m: &Map<String, Value>, line: u64) -> Result<Vec<Parsed>, String> {
    let call_id = || text(m, "call_id").or_else(|| text(m, "id"));
    Ok(vec![match m.get("type").and_then(Value::as_str) {
        Some("function_call") => {
            let c = call(
                call_id(),
                text(m, "name"),
                m.get("arguments"),
                &Value::Object(m.clone()),
            );
            Parsed {
                calls: vec![c],
                responses_call: true,
                ..message(line, "assistant", None)
            }
        }
        Some("function_call_output") => {
            let id = call_id().ok_or("a `function_call_output` needs a `call_id`")?;
            Parsed {
                tool_call_id: Some(id),
                ..message(line, "tool", m.get("output").and_then(content_text))
            }
        }
        _ => ignored(line),
    }])
}

/// One Anthropic message with `tool_use` / `tool_result` blocks.
fn anthropic_message(m: &Map<String, Value>, line: u64) -> Result<Vec<Parsed>, String> {
    let role = text(m, "role").ok_or("a message needs a `role`")?;
    let Some(Value::Array(blocks)) = m.get("content") else {
        return Err("`content` must be a list of blocks".into());
    };
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    let mut out = Vec::new();
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("tool_use") => calls.push(call(
                text_of(b, "id"),
                text_of(b, "name"),
                b.get("input"),
                b,
            )),
            Some("tool_result") => {
                let Some(id) = text_of(b, "tool_use_id") else {
                    return Err("a `tool_result` block needs a `tool_use_id`".into());
                };
                out.push(Parsed {
                    tool_call_id: Some(id),
                    is_error: b.get("is_error") == Some(&Value::Bool(true)),
                    ..message(line, "tool", b.get("content").and_then(content_text))
                });
            }
            _ => {
                if let Some(t) = b.get("text").and_then(Value::as_str) {
                    texts.push(t.to_string());
                }
            }
        }
    }
    let joined = (!texts.is_empty()).then(|| texts.join("\n"));
    if !calls.is_empty() || role == "assistant" {
        out.push(Parsed {
            calls,
            ..message(line, &role, joined)
        });
    } else if joined.is_some() {
        out.push(message(line, &role, joined));
    }
    if out.is_empty() {
        out.push(ignored(line));
    }
    for p in out.iter_mut().skip(1) {
        p.part = true;
    }
    Ok(out)
}

/// A string field of a JSON object value.
fn text_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Appends `p` to a conversation's messages; a Responses `function_call` right after another
/// joins its message (one model turn), leaving a counted record that gives nothing.
pub(crate) fn push(msgs: &mut Vec<Option<Parsed>>, mut p: Parsed) {
    if p.responses_call {
        // Past the records that gave nothing (merged calls, `reasoning` items).
        let prev = msgs
            .iter_mut()
            .rev()
            .find(|m| !m.as_ref().is_some_and(|m| m.ignored));
        if let Some(Some(prev)) = prev {
            if prev.responses_call {
                prev.calls.append(&mut p.calls);
                msgs.push(Some(ignored(p.line)));
                return;
            }
        }
    }
    msgs.push(Some(p));
}
