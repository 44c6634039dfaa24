//! SWE-agent `.traj` files (guardrail-anchors §3.7): `{history, trajectory, info, ...}`.
//!
//! Messages come from `history`. Calls come from the assistant messages' `tool_calls` (the
//! function-calling variants; results linked by `tool_call_ids`), else from their `action`
//! string (the shell-style command: raw key = its first word, params
//! `{"command": <whole action>, "args": <the rest>}`, status `unknown`, since SWE-agent records
//! none per step). Without `history`, each `trajectory` step's `action` is a call and its
//! `observation` the result. Each assistant turn is one cell. `trajectory` steps beyond the
//! history's assistant turns (SWE-agent does not add its last response, usually `submit`, to
//! the history) are replayed after it, from `trajectory`.

use super::chat::{self, Parsed, ToolCall};
use super::doc::{arr, map, obj, DocCtx, Root};
use super::model::*;
use super::TraceError;
use serde_json::{json, Map, Value};

fn action_call(action: &str) -> Option<ToolCall> {
    let action = action.trim();
    let name = action.split_whitespace().next()?.to_string();
    let rest = action[name.len()..].trim().to_string();
    let params = json!({"command": action, "args": rest});
    Some(ToolCall {
        id: None,
        arguments: params.to_string(),
        name,
        params: Some(params),
        malformed: None,
    })
}

/// Converts a `.traj` document.
///
/// Errors: a document with neither `history` nor `trajectory`.
pub(crate) fn read(ctx: &mut DocCtx, root: &Root) -> Result<(), TraceError> {
    if let Root::List(line, _) = root {
        return Err(ctx.error_line(*line, "a SWE-agent trajectory must be a JSON object"));
    }
    let Root::Value(v) = root else {
        return Err(TraceError::plain(
            ctx.path,
            "SWE-agent trajectories are single JSON documents",
        ));
    };
    let Some(o) = obj(v) else {
        return Err(ctx.error_at(v, "a SWE-agent trajectory must be a JSON object"));
    };
    let whole = map(v).unwrap_or_default();
    ctx.start_trace(None, Format::SweAgent);
    let mut extra = Map::new();
    if let Some(info) = whole.get("info").and_then(Value::as_object) {
        for k in ["exit_status", "model_stats"] {
            if let Some(x) = info.get(k) {
                extra.insert(k.into(), x.clone());
            }
        }
    }
    ctx.record(
        ctx.line_of(v),
        Record::Header(Box::new(Header {
            format: "swe-agent".into(),
            source: Some("swe-agent".into()),
            extra,
            ..Default::default()
        })),
    );
    if let Some(history) = o.get("history").and_then(|h| arr(h)) {
        let mut msgs: Vec<Option<Parsed>> = Vec::new();
        // Assistant messages that are agent steps (they carry an `action`, possibly blank, or
        // tool calls): the trajectory has one step per such message (issue 6 T6-18).
        let mut turns = 0;
        for r in history {
            let line = ctx.line_of(r);
            let parsed = match map(r) {
                Some(m) => chat::parse_message(&m, line).map(|mut p| {
                    if p.role == "assistant" {
                        let action = m.get("action").and_then(Value::as_str);
                        if p.calls.is_empty() {
                            if let Some(c) = action.and_then(action_call) {
                                p.calls.push(c);
                            } else if action.is_some() {
                                p.warnings.push(
                                    "an assistant step with a blank `action`: no call".into(),
                                );
                            }
                        }
                        if action.is_some() || !p.calls.is_empty() {
                            turns += 1;
                        }
                    }
                    p
                }),
                None => Err("a message must be a JSON object".into()),
            };
            match parsed {
                Ok(mut p) => {
                    for w in std::mem::take(&mut p.warnings) {
                        ctx.warn(line, w);
                    }
                    msgs.push(Some(p))
                }
                Err(e) => {
                    ctx.skip(line, format!("malformed message: {e}"));
                    msgs.push(None);
                }
            }
        }
        // SWE-agent appends the step of the model's last response (typically `submit`) to
        // `trajectory` but not to `history`: replay the steps beyond those in the history
        // (aligned by position: the n-th step of the history is the n-th of the trajectory).
        chat::emit(ctx, msgs);
        if let Some(steps) = o.get("trajectory").and_then(|t| arr(t)) {
            if steps.len() > turns {
                steps_as_calls(ctx, &steps[turns..], turns as u64);
            }
        }
        return Ok(());
    }
    let Some(steps) = o.get("trajectory").and_then(|t| arr(t)) else {
        return Err(ctx.error_at(v, "no `history` or `trajectory` list found"));
    };
    steps_as_calls(ctx, &steps, 0);
    Ok(())
}

/// Emits trajectory steps as calls, one cell each, numbering cells from `first_cell`.
fn steps_as_calls(ctx: &mut DocCtx, steps: &[&serde_json::value::RawValue], first_cell: u64) {
    for (i, s) in steps.iter().enumerate() {
        let cell = first_cell + i as u64;
        let line = ctx.line_of(s);
        let Some(m) = map(s) else {
            ctx.skip(line, "a trajectory step must be a JSON object");
            continue;
        };
        let Some(call) = m
            .get("action")
            .and_then(Value::as_str)
            .and_then(action_call)
        else {
            ctx.skip(line, "a trajectory step needs a non-empty `action`");
            continue;
        };
        ctx.accept();
        ctx.record(
            line,
            Record::Cell(CellRecord {
                index: Some(cell),
                ..Default::default()
            }),
        );
        ctx.record(
            line,
            Record::from(CallRecord {
                cell: Some(cell),
                index: Some(0),
                raw_key: Some(call.name.as_str().into()),
                params: call
                    .params
                    .as_ref()
                    .map_or(Params::none(), Params::from_value),
                status: CallStatus::Unknown,
                result: m
                    .get("observation")
                    .map_or(RawJson::none(), RawJson::from_value),
                ..Default::default()
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::trace::{read_str, Event, Record};

    #[test]
    fn actions_without_tool_calls_become_calls() {
        let text = r#"{"environment": "x", "history": [
 {"role": "system", "content": "s"},
 {"role": "assistant", "content": "look", "action": "find_file \"a.py\"\n"},
 {"role": "user", "content": "Found 1 matches"}
], "info": {"exit_status": "submitted"}}"#;
        let calls: Vec<(String, String)> = read_str("t.traj", text, None)
            .unwrap()
            .filter_map(|e| match e {
                Event::Record {
                    record: Record::Call(c),
                    ..
                } => Some((
                    c.raw().to_string(),
                    c.params.json().unwrap_or("").to_string(),
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            vec![(
                "find_file".to_string(),
                r#"{"command":"find_file \"a.py\"","args":"\"a.py\""}"#.to_string()
            )]
        );
    }
}
