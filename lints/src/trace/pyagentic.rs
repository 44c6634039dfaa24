//! pyAgentic message dumps: lists of `Message.model_dump()` objects with `kind`
//! (pyagentic-reference §3.1, §3.3), as a JSON array, a list of such arrays (traces `FILE#N`),
//! an object with `messages`, or JSON Lines.
//!
//! Every message becomes a `message` record. Each `tool_call`/`agent_call` message also becomes
//! a `call` record (raw key = `name`, params = parsed `arguments`); a maximal run of consecutive
//! tool-call and tool-result messages forms one cell (pyAgentic records `C1,R1,C2,R2` for one
//! response). A call's status comes from its result (linked by `tool_call_id`): content
//! starting with ``Tool `name` failed:`` (or ``Agent `name` failed``) means `error`.
//! No `inference` records are invented: pyAgentic dumps carry none, and where the boundaries
//! fall is the message-policy replayer's call (pyagentic-reference §3.5 step 4).

use super::convert::message_from_dump;
use super::doc::{arr, map, obj, root_items, DocCtx, Item, Root};
use super::model::*;
use super::TraceError;
use serde_json::Value;
use std::collections::HashMap;

/// Converts a pyAgentic dump document.
///
/// Errors: a document that holds no message list.
pub(crate) fn read(ctx: &mut DocCtx, root: &Root) -> Result<(), TraceError> {
    if let Some(items) = root_items(ctx, root) {
        let nested = items
            .iter()
            .any(|(_, r)| r.as_ref().is_ok_and(|v| arr(v).is_some()));
        if nested {
            for (n, (line, item)) in items.iter().enumerate() {
                ctx.start_trace(Some(n), Format::Pyagentic);
                header(ctx, *line);
                match item.as_ref().ok().and_then(|v| arr(v)) {
                    Some(list) => {
                        let list: Vec<Item> =
                            list.into_iter().map(|r| (ctx.line_of(r), Ok(r))).collect();
                        messages(ctx, &list);
                    }
                    None => ctx.skip(
                        *line,
                        format!("conversation {n} must be a list of messages"),
                    ),
                }
            }
        } else {
            ctx.start_trace(None, Format::Pyagentic);
            header(ctx, items.first().map_or(1, |i| i.0));
            messages(ctx, &items);
        }
        return Ok(());
    }
    if let Root::Value(v) = root {
        let list = obj(v)
            .and_then(|o| o.get("messages").copied())
            .and_then(arr)
            .ok_or_else(|| ctx.error_at(v, "no message list found (expected `messages`)"))?;
        ctx.start_trace(None, Format::Pyagentic);
        header(ctx, ctx.line_of(v));
        let list: Vec<Item> = list.into_iter().map(|r| (ctx.line_of(r), Ok(r))).collect();
        messages(ctx, &list);
    }
    Ok(())
}

fn header(ctx: &mut DocCtx, line: u64) {
    ctx.record(
        line,
        Record::Header(Box::new(Header {
            format: "pyagentic".into(),
            source: Some("pyagentic".into()),
            ..Default::default()
        })),
    );
}

fn failed(content: Option<&str>) -> bool {
    let c = content.unwrap_or("").trim_start();
    (c.starts_with("Tool `") && c.contains("` failed"))
        || (c.starts_with("Agent `") && c.contains("` failed"))
}

fn messages(ctx: &mut DocCtx, items: &[Item]) {
    let mut parsed: Vec<Option<(u64, MessageRecord)>> = Vec::with_capacity(items.len());
    for (line, item) in items {
        let mut warnings = Vec::new();
        let m = match item {
            Ok(r) => match map(r) {
                Some(m) => message_from_dump(&m, &mut warnings),
                None => Err("a message must be a JSON object".into()),
            },
            Err(e) => Err(e.clone()),
        };
        for w in warnings {
            ctx.warn(*line, w);
        }
        match m {
            Ok(m) => parsed.push(Some((*line, m))),
            Err(e) => {
                ctx.skip(*line, format!("malformed message: {e}"));
                parsed.push(None);
            }
        }
    }
    // Result content per tool-call id (the first result answering it).
    let mut results: HashMap<String, Option<String>> = HashMap::new();
    for (_, m) in parsed.iter().flatten() {
        if m.kind.is_tool_result() {
            if let Some(id) = &m.tool_call_id {
                results.entry(id.clone()).or_insert(m.content.clone());
            }
        }
    }
    let mut cell = 0u64;
    let mut in_cell = false;
    let mut index = 0u64;
    for (line, m) in parsed.into_iter().flatten() {
        ctx.accept();
        let is_call = m.kind.is_tool_call();
        if !(is_call || m.kind.is_tool_result()) && in_cell {
            in_cell = false;
            cell += 1;
        }
        if is_call && !in_cell {
            in_cell = true;
            index = 0;
            ctx.record(
                line,
                Record::Cell(CellRecord {
                    index: Some(cell),
                    ..Default::default()
                }),
            );
        }
        let call = if is_call {
            let name = m.name.clone().unwrap_or_default();
            let params = match m.arguments.as_deref().map(serde_json::from_str::<Value>) {
                Some(Ok(v @ Value::Object(_))) => Params::from_value(&v),
                Some(_) => {
                    let why = super::chat::arguments_problem(m.arguments.as_deref().unwrap_or(""));
                    ctx.warn(line, format!("arguments of tool call `{name}` {why}; replayed with no params (the text stays on its message)"));
                    Params::none()
                }
                None => Params::none(),
            };
            let result = m.id.as_ref().and_then(|id| results.get(id));
            let status = match result {
                None => CallStatus::Unknown,
                Some(c) if failed(c.as_deref()) => CallStatus::Error,
                Some(_) => CallStatus::Ok,
            };
            let call = CallRecord {
                cell: Some(cell),
                index: Some(index),
                raw_key: Some(name.into()),
                params,
                status,
                error: if status == CallStatus::Error {
                    result.cloned().flatten()
                } else {
                    None
                },
                result: result
                    .cloned()
                    .flatten()
                    .map_or(RawJson::none(), |c| RawJson::from_value(&Value::String(c))),
                call_id: m.id.clone(),
                ..Default::default()
            };
            index += 1;
            Some(call)
        } else {
            None
        };
        ctx.record(line, Record::Message(Box::new(m)));
        if let Some(c) = call {
            if c.raw().is_empty() {
                ctx.warn(line, "tool call without a `name`; not replayed as a call");
            } else {
                ctx.record(line, Record::from(c));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::trace::{read_str, Event, Record};

    #[test]
    fn dump_calls_get_status_from_results() {
        let text = r#"[
{"kind": "user", "role": "user", "content": "go"},
{"kind": "tool_call", "role": "assistant", "id": "c1", "name": "search", "arguments": "{\"q\": \"x\"}"},
{"kind": "tool_result", "role": "tool", "tool_call_id": "c1", "name": "search", "content": "Tool `search` failed: boom"},
{"kind": "assistant", "role": "assistant", "content": "done"}
]"#;
        let events: Vec<Event> = read_str("d.json", text, None).unwrap().collect();
        let call = events
            .iter()
            .find_map(|e| match e {
                Event::Record {
                    line,
                    record: Record::Call(c),
                } => Some((*line, c.clone())),
                _ => None,
            })
            .unwrap();
        assert_eq!(call.0, 3);
        assert_eq!(call.1.status.as_str(), "error");
        assert_eq!(call.1.params.json(), Some(r#"{"q":"x"}"#));
        let kinds: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                Event::Record {
                    record: Record::Message(m),
                    ..
                } => Some(m.kind.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(kinds, vec!["user", "tool_call", "tool_result", "assistant"]);
    }
}
