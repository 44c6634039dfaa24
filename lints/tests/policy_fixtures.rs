//! Fixture tests of the message- and state-policy replay: every directory under
//! `fixtures/policies/cases/` holds a `cellguard.toml` with `[[policies]]`, a trace (`trace.*`,
//! any format the readers detect) and `expected.json`, written by hand from
//! pyagentic-reference §5 (each file's `about` names its case). Keys of `expected.json`, each
//! checked when present:
//!
//! - `sent`: per inference, the working context as sent, in [`Msg::notation`];
//! - `final`: the working context at the end of the conversation;
//! - `raw_chars`, `inferred`: per inference;
//! - `summaries`: per inference, `[folded, summary chars, recorded?, transcript chars]` per
//!   compaction; `lost_summaries`: per inference, `[policy, N]` per earlier summary dropped;
//! - `inferences`, `contexts`, `facts_at_risk`, `state_writes`, `state_summary`: exactly the
//!   JSON report objects (a `null` trace stands for the trace file's own name);
//! - `note_contains`: a text one of the run notes contains.

use cellguard_lints::policies::report::{context_json, fact_json, inference_json, state_json};
use cellguard_lints::policies::{config, Msg, PolicyObserver};
use cellguard_lints::replay::Section;
use cellguard_lints::trace::{self, Event};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/policies/cases");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

fn notations(ctx: &[Msg]) -> Value {
    Value::Array(ctx.iter().map(|m| Value::String(m.notation())).collect())
}

/// Replaces `"trace": null` in expected objects by the trace's name.
fn with_trace(mut v: Value, trace: &str) -> Value {
    if let Value::Array(items) = &mut v {
        for item in items.iter_mut() {
            if let Some(t) = item.get_mut("trace") {
                if t.is_null() {
                    *t = Value::String(trace.to_string());
                }
            }
        }
    }
    v
}

fn check(errors: &mut Vec<String>, what: &str, expected: &Value, actual: &Value) {
    if expected != actual {
        errors.push(format!(
            "{what}:\n  expected {}\n  actual   {}",
            serde_json::to_string(expected).unwrap_or_default(),
            serde_json::to_string(actual).unwrap_or_default()
        ));
    }
}

fn run_case(dir: &Path) -> Result<Vec<String>, String> {
    let cfg_path = dir.join("cellguard.toml");
    let text = std::fs::read_to_string(&cfg_path).map_err(|e| e.to_string())?;
    let cfg = config::parse_str(&cfg_path, &text).map_err(|e| e.to_string())?;
    let trace_path = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("trace."))
        })
        .ok_or("no trace.* file")?;
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("expected.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| format!("expected.json: {e}"))?;
    let mut reader = trace::open(&trace_path, None).map_err(|e| e.to_string())?;
    let mut obs = PolicyObserver::new(Arc::new(cfg)).capturing();
    let mut current = None;
    for e in reader.by_ref() {
        match e {
            Event::TraceStart(info) => {
                obs.trace_start(&info);
                current = Some(info);
            }
            Event::Record { line, record } => {
                let info = current.as_ref().ok_or("record before any trace")?;
                obs.record(info, line, &record);
            }
            Event::Skipped(s) => return Err(format!("skipped record: {s}")),
            Event::Warning(_) => {}
        }
    }
    let trace_name = trace_path.display().to_string();
    let (messages, state) = obs.into_sections();
    let mut errors = Vec::new();
    if let Some(m) = &messages {
        let get = |f: &dyn Fn(&cellguard_lints::policies::context::InferenceStats) -> Value| {
            Value::Array(m.inferences.iter().map(f).collect())
        };
        if let Some(e) = expected.get("sent") {
            let actual = get(&|s| s.context.as_deref().map_or(Value::Null, notations));
            check(&mut errors, "sent", e, &actual);
        }
        if let Some(e) = expected.get("final") {
            let actual = m
                .contexts
                .first()
                .and_then(|c| c.final_context.as_deref())
                .map_or(Value::Null, notations);
            check(&mut errors, "final", e, &actual);
        }
        if let Some(e) = expected.get("raw_chars") {
            check(&mut errors, "raw_chars", e, &get(&|s| json!(s.raw_chars)));
        }
        if let Some(e) = expected.get("inferred") {
            check(&mut errors, "inferred", e, &get(&|s| json!(s.inferred)));
        }
        if let Some(e) = expected.get("summaries") {
            let actual = get(&|s| {
                Value::Array(
                    s.summaries
                        .iter()
                        .map(|n| json!([n.folded, n.summary_chars, n.recorded, n.transcript_chars]))
                        .collect(),
                )
            });
            check(&mut errors, "summaries", e, &actual);
        }
        if let Some(e) = expected.get("lost_summaries") {
            let actual = get(&|s| json!(s.lost_summaries));
            check(&mut errors, "lost_summaries", e, &actual);
        }
        for c in &m.contexts {
            let parts: i64 = c.saved_by_policy.iter().map(|(_, n)| n).sum();
            if parts != c.chars_removed {
                errors.push(format!(
                    "per-policy removals {:?} do not add up to chars_removed {}",
                    c.saved_by_policy, c.chars_removed
                ));
            }
        }
        let json = m.json();
        for key in ["inferences", "contexts", "facts_at_risk"] {
            if let Some(e) = expected.get(key) {
                let actual = json
                    .iter()
                    .find(|(k, _)| k == key)
                    .map_or(Value::Null, |(_, v)| v.clone());
                check(
                    &mut errors,
                    key,
                    &with_trace(e.clone(), &trace_name),
                    &actual,
                );
            }
        }
        // The JSON helpers are what the CLI prints; keep them in sync with the section.
        assert_eq!(
            json[0].1,
            Value::Array(m.inferences.iter().map(inference_json).collect())
        );
        assert_eq!(
            json[1].1,
            Value::Array(m.contexts.iter().map(context_json).collect())
        );
        assert_eq!(
            json[2].1,
            Value::Array(m.facts.iter().map(fact_json).collect())
        );
        if let Some(e) = expected.get("note_contains").and_then(Value::as_str) {
            if !m.notes.iter().any(|n| n.contains(e)) {
                errors.push(format!("no note contains {e:?}: {:?}", m.notes));
            }
        }
    } else if ["sent", "inferences", "contexts"]
        .iter()
        .any(|k| expected.get(*k).is_some())
    {
        errors.push("no message-policy section".into());
    }
    if let Some(s) = &state {
        if let Some(e) = expected.get("state_writes") {
            let actual = Value::Array(s.findings.iter().map(state_json).collect());
            check(
                &mut errors,
                "state_writes",
                &with_trace(e.clone(), &trace_name),
                &actual,
            );
        }
        if let Some(e) = expected.get("state_summary") {
            let actual = s
                .json()
                .into_iter()
                .find(|(k, _)| k == "state_summary")
                .map_or(Value::Null, |(_, v)| v);
            check(&mut errors, "state_summary", e, &actual);
        }
    } else if expected.get("state_writes").is_some() {
        errors.push("no state-policy section".into());
    }
    Ok(errors)
}

#[test]
fn policy_fixture_cases() {
    let cases = cases();
    assert!(cases.len() >= 30, "fixture cases missing: {}", cases.len());
    let mut failures = Vec::new();
    for dir in &cases {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        match run_case(dir) {
            Ok(errors) if errors.is_empty() => {}
            Ok(errors) => failures.push(format!("{name}:\n{}", errors.join("\n"))),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
