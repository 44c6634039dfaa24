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
//!
//! Demonstration messages (`is_demo: true`, or `message_type: "demonstration"`) are skipped:
//! they are the few-shot example, not this run (issue 6 T7-3). A RetryAgent file's `attempts`
//! are replayed one trace each (`file#N`), the top-level copy of the best attempt not again
//! (T7-5).

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
    // RetryAgent (issue 6 T7-5): `attempts` holds each attempt's own trajectory data; the
    // top-level `trajectory`/`history`/`info`, when present, are a copy of the best attempt's.
    // Each attempt is replayed as its own trace (`file#N`, N = attempt index): the environment
    // is hard-reset and a fresh agent (history) set up between attempts.
    if let Some(attempts) = o.get("attempts").and_then(|a| arr(a)) {
        if !attempts.is_empty() {
            let best = map(v).and_then(|w| w.get("info")?.get("best_attempt_idx").cloned());
            for (n, a) in attempts.iter().enumerate() {
                let Some(ao) = obj(a) else {
                    ctx.start_trace(Some(n), Format::SweAgent);
                    ctx.skip(ctx.line_of(a), "a RetryAgent attempt must be a JSON object");
                    continue;
                };
                ctx.start_trace(Some(n), Format::SweAgent);
                let mut extra = Map::new();
                extra.insert("attempt".into(), json!(n));
                if let Some(b) = &best {
                    extra.insert("best_attempt_idx".into(), b.clone());
                }
                if let Err(e) = read_one(ctx, a, &ao, extra) {
                    ctx.skip(ctx.line_of(a), e);
                }
            }
            return Ok(());
        }
    }
    ctx.start_trace(None, Format::SweAgent);
    read_one(ctx, v, &o, Map::new()).map_err(|e| ctx.error_at(v, e))
}

/// Whether a history message is part of the few-shot demonstration SWE-agent puts in the
/// history (`is_demo: true`, or `message_type: "demonstration"`), not a step of this run
/// (issue 6 T7-3).
fn is_demo(r: &serde_json::value::RawValue) -> bool {
    obj(r).is_some_and(|m| {
        m.get("is_demo").is_some_and(|d| d.get() == "true")
            || m.get("message_type")
                .is_some_and(|t| t.get() == "\"demonstration\"")
    })
}

/// Replays one agent run (the whole file, or one RetryAgent attempt) into the current trace.
/// `extra` goes into the header. Errors: neither `history` nor `trajectory`.
fn read_one(
    ctx: &mut DocCtx,
    v: &serde_json::value::RawValue,
    o: &super::doc::RawObj,
    mut extra: Map<String, Value>,
) -> Result<(), String> {
    let whole = map(v).unwrap_or_default();
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
        let mut demos = 0u64;
        let mut first_demo = None;
        for r in history {
            let line = ctx.line_of(r);
            if is_demo(r) {
                // Read (it counts among the records read), but no message and no call.
                ctx.accept();
                // Only demonstrated agent steps are worth a warning (a demo wrapped in one user
                // message, SWE-agent's default, holds no call).
                if obj(r).is_some_and(|m| m.get("role").is_some_and(|x| x.get() == "\"assistant\""))
                {
                    demos += 1;
                    first_demo.get_or_insert(line);
                }
                continue;
            }
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
        if let Some(line) = first_demo {
            ctx.warn(
                line,
                format!("{demos} demonstration step(s) (`is_demo`) not replayed: they are the few-shot example, not this run's steps"),
            );
        }
        chat::emit(ctx, msgs);
        if let Some(steps) = o.get("trajectory").and_then(|t| arr(t)) {
            if steps.len() > turns {
                steps_as_calls(ctx, &steps[turns..], turns as u64);
            }
        }
        return Ok(());
    }
    let Some(steps) = o.get("trajectory").and_then(|t| arr(t)) else {
        return Err("no `history` or `trajectory` list found".into());
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
