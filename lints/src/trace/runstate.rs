//! OpenAI Agents SDK serialized `RunState` (guardrail-anchors §3.4, §3.7).
//!
//! `generated_items` in order: a `tool_call_item` whose raw item is a `function_call` is a call
//! (raw key = `name`, params = parsed `arguments`, linked to its output by `call_id`); a
//! `program` raw item (code run as a tool) opens a cell holding its code, and the function calls
//! it makes (`caller.caller_id`) belong to that cell; consecutive top-level function calls form
//! one cell. A call with a `tool_call_output_item` is `ok` (`error` when the output's status is
//! `failed`/`incomplete`); a call waiting in a `tool_approval_item` was never dispatched and is
//! `blocked`; otherwise `unknown`. `message_output_item`s are assistant messages and a string
//! `original_input` the user message. The run's approval state (`context.approvals`:
//! `approved: true` per tool = `approve_all`, a list of call ids = one `approve_once` each,
//! `rejected` likewise as `reject`) becomes `approval` records at the start.

use super::doc::{map, DocCtx, Root};
use super::model::*;
use super::TraceError;
use serde_json::{Map, Value};
use std::collections::HashMap;

fn approvals(ctx: &mut DocCtx, line: u64, root: &Map<String, Value>) {
    let Some(a) = root
        .get("context")
        .and_then(|c| c.get("approvals"))
        .and_then(Value::as_object)
    else {
        return;
    };
    for (tool, state) in a {
        for (key, choice_all, choice_one) in [
            ("approved", "approve_all", "approve_once"),
            ("rejected", "reject", "reject"),
        ] {
            match state.get(key) {
                Some(Value::Bool(true)) => ctx.record(
                    line,
                    Record::from(ApprovalRecord {
                        request_id: Some(format!("{tool}:{key}")),
                        action_type: Some(tool.clone()),
                        choice: choice_all.into(),
                        explanation: None,
                        call_id: None,
                    }),
                ),
                Some(Value::Array(ids)) => {
                    for id in ids.iter().filter_map(Value::as_str) {
                        ctx.record(
                            line,
                            Record::from(ApprovalRecord {
                                request_id: Some(id.to_string()),
                                action_type: Some(tool.clone()),
                                choice: choice_one.into(),
                                explanation: state
                                    .get("rejection_messages")
                                    .and_then(|m| m.get(id))
                                    .and_then(Value::as_str)
                                    .map(str::to_string),
                                // A list holds call ids: each answer is for that call only
                                // (the SDK's `_get_approval_status_for_record`, issue 6 T6-10).
                                call_id: Some(id.to_string()),
                            }),
                        );
                    }
                }
                _ => {}
            }
        }
    }
}

/// Converts a `RunState` document.
///
/// Errors: a document that is no JSON object.
pub(crate) fn read(ctx: &mut DocCtx, root: &Root) -> Result<(), TraceError> {
    if let Root::List(line, _) = root {
        return Err(ctx.error_line(*line, "a RunState must be a JSON object"));
    }
    let Root::Value(v) = root else {
        return Err(TraceError::plain(
            ctx.path,
            "a RunState is a single JSON document",
        ));
    };
    let Some(m) = map(v) else {
        return Err(ctx.error_at(v, "a RunState must be a JSON object"));
    };
    let line = ctx.line_of(v);
    ctx.start_trace(None, Format::AgentsRunstate);
    let mut extra = Map::new();
    if let Some(s) = m.get("$schemaVersion") {
        extra.insert("schema_version".into(), s.clone());
    }
    ctx.record(
        line,
        Record::Header(Box::new(Header {
            format: "agents-runstate".into(),
            source: Some("openai-agents".into()),
            agent_id: m
                .get("current_agent")
                .and_then(|a| a.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string),
            extra,
            ..Default::default()
        })),
    );
    approvals(ctx, line, &m);
    if let Some(Value::String(input)) = m.get("original_input") {
        let mut u = MessageRecord::new(MessageKind::User);
        u.role = Some("user".into());
        u.content = Some(input.clone());
        ctx.record(line, Record::Message(Box::new(u)));
    }
    let items: Vec<Value> = m
        .get("generated_items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // Outcomes per call id.
    let mut outputs: HashMap<String, (String, Value)> = HashMap::new();
    let mut pending: HashMap<String, usize> = HashMap::new();
    let mut has_call_item: HashMap<String, bool> = HashMap::new();
    for (i, it) in items.iter().enumerate() {
        let ty = it.get("type").and_then(Value::as_str).unwrap_or("");
        let raw = it.get("raw_item").cloned().unwrap_or(Value::Null);
        let id = raw
            .get("call_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match ty {
            "tool_call_output_item" => {
                let status = raw
                    .get("status")
                    .and_then(Value::as_str)
                    .unwrap_or("completed")
                    .to_string();
                let out = it
                    .get("output")
                    .or(raw.get("output"))
                    .or(raw.get("result"))
                    .cloned()
                    .unwrap_or(Value::Null);
                outputs.insert(id, (status, out));
            }
            "tool_approval_item" => {
                pending.insert(id, i);
            }
            "tool_call_item" => {
                has_call_item.insert(id, true);
            }
            _ => {}
        }
    }
    let mut cell: i64 = -1;
    let mut index = 0u64;
    let mut prev_top_call = false;
    let mut program_cells: HashMap<String, u64> = HashMap::new();
    for it in &items {
        let ty = it.get("type").and_then(Value::as_str).unwrap_or("");
        let Some(raw) = it.get("raw_item").and_then(Value::as_object) else {
            ctx.skip(
                line,
                format!("generated item `{ty}` without a `raw_item` object"),
            );
            continue;
        };
        let rtype = raw.get("type").and_then(Value::as_str).unwrap_or("");
        let id = raw
            .get("call_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let is_call_item = ty == "tool_call_item"
            || (ty == "tool_approval_item" && !has_call_item.contains_key(&id));
        if !is_call_item {
            ctx.accept();
            prev_top_call = false;
            if ty == "message_output_item" {
                let mut a = MessageRecord::new(MessageKind::Assistant);
                a.role = Some("assistant".into());
                a.content = raw.get("content").and_then(super::convert::content_text);
                ctx.record(line, Record::Message(Box::new(a)));
            }
            continue;
        }
        if rtype == "program" {
            ctx.accept();
            cell += 1;
            index = 0;
            program_cells.insert(id.clone(), cell as u64);
            ctx.record(
                line,
                Record::Cell(CellRecord {
                    index: Some(cell as u64),
                    code: raw.get("code").and_then(Value::as_str).map(str::to_string),
                    success: outputs.get(&id).map(|(s, _)| s == "completed"),
                    error: None,
                }),
            );
            prev_top_call = false;
            continue;
        }
        let Some(name) = raw
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        else {
            ctx.skip(line, format!("tool call item `{rtype}` without a `name`"));
            continue;
        };
        let caller = raw
            .get("caller")
            .and_then(|c| c.get("caller_id"))
            .and_then(Value::as_str);
        let call_cell = match caller.and_then(|c| program_cells.get(c)) {
            Some(&c) => c,
            None => {
                if !prev_top_call {
                    cell += 1;
                    index = 0;
                    ctx.record(
                        line,
                        Record::Cell(CellRecord {
                            index: Some(cell as u64),
                            ..Default::default()
                        }),
                    );
                }
                prev_top_call = true;
                cell.max(0) as u64
            }
        };
        let params = match raw.get("arguments") {
            Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                Ok(v @ Value::Object(_)) => Params::from_value(&v),
                _ => Params::none(),
            },
            Some(v @ Value::Object(_)) => Params::from_value(v),
            _ => Params::none(),
        };
        let (status, result, error) = match (outputs.get(&id), pending.contains_key(&id)) {
            (Some((s, out)), _) => {
                let failed = matches!(s.as_str(), "failed" | "incomplete");
                (
                    if failed {
                        CallStatus::Error
                    } else {
                        CallStatus::Ok
                    },
                    RawJson::from_value(out),
                    None,
                )
            }
            (None, true) => (
                CallStatus::Blocked,
                RawJson::none(),
                Some("awaiting human approval (tool_approval_item)".to_string()),
            ),
            (None, false) => (CallStatus::Unknown, RawJson::none(), None),
        };
        ctx.accept();
        ctx.record(
            line,
            Record::from(CallRecord {
                cell: Some(call_cell),
                index: Some(index),
                raw_key: Some(name.into()),
                params,
                status,
                error,
                result,
                call_id: (!id.is_empty()).then_some(id),
                ..Default::default()
            }),
        );
        index += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::trace::{read_str, CallStatus, Event, Record};

    #[test]
    fn pending_approval_is_blocked_and_program_calls_share_a_cell() {
        let text = r#"{"$schemaVersion": "1.13", "context": {"approvals": {"t": {"approved": ["c9"], "rejected": []}}},
 "original_input": "hi", "current_agent": {"name": "a"},
 "generated_items": [
  {"type": "tool_call_item", "raw_item": {"type": "program", "call_id": "p", "code": "lookup()"}},
  {"type": "tool_call_item", "raw_item": {"type": "function_call", "call_id": "f", "name": "lookup", "arguments": "{}", "caller": {"caller_id": "p"}}},
  {"type": "tool_call_item", "raw_item": {"type": "function_call", "call_id": "c9", "name": "t", "arguments": "{\"x\":1}"}},
  {"type": "tool_approval_item", "raw_item": {"type": "function_call", "call_id": "c9", "name": "t", "arguments": "{\"x\":1}"}}
 ]}"#;
        let recs: Vec<Record> = read_str("r.json", text, None)
            .unwrap()
            .filter_map(|e| match e {
                Event::Record { record, .. } => Some(record),
                _ => None,
            })
            .collect();
        let calls: Vec<(String, Option<u64>, CallStatus)> = recs
            .iter()
            .filter_map(|r| match r {
                Record::Call(c) => Some((c.raw().to_string(), c.cell, c.status)),
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            vec![
                ("lookup".to_string(), Some(0), CallStatus::Unknown),
                ("t".to_string(), Some(1), CallStatus::Blocked)
            ]
        );
        assert!(recs.iter().any(|r| matches!(r, Record::Approval(a) if a.choice == "approve_once" && a.request_id.as_deref() == Some("c9"))));
    }
}
