//! End-to-end tests of the policy sections of `cellguard replay`: the JSON shape, the other
//! output formats, exit codes, config errors, and real tau-bench conversations with
//! hand-checked figures (fixtures/policies/tau-bench/README.md).

#[path = "support/replay.rs"]
mod support;

use serde_json::Value;
use support::{replay, replay_json, write};

/// `cellguard replay ARGS --output-format json`: (exit code, report).
fn json(args: &[&str]) -> (i32, Value) {
    let (code, v, _) = replay_json(args);
    (code, v)
}

const TAU: &str = "fixtures/policies/tau-bench/conversations.json";

/// `(messages, chars, est_tokens, clipped, evicted, dropped, summarized)` per inference of
/// one trace.
type Row = (u64, u64, u64, Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>);

fn rows(v: &Value, trace: &str) -> Vec<Row> {
    let list = |x: &Value| -> Vec<u64> {
        x.as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect()
    };
    v["inferences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["trace"] == trace)
        .enumerate()
        .map(|(k, i)| {
            assert_eq!(i["inference"].as_u64(), Some(k as u64));
            assert_eq!(list(&i["orphaned"]), Vec::<u64>::new());
            (
                i["messages"].as_u64().unwrap(),
                i["chars"].as_u64().unwrap(),
                i["est_tokens"].as_u64().unwrap(),
                list(&i["clipped"]),
                list(&i["evicted"]),
                list(&i["dropped"]),
                list(&i["summarized"]),
            )
        })
        .collect()
}

fn row(m: u64, c: u64, clipped: &[u64], evicted: &[u64], dropped: &[u64], summ: &[u64]) -> Row {
    (
        m,
        c,
        c / 4,
        clipped.to_vec(),
        evicted.to_vec(),
        dropped.to_vec(),
        summ.to_vec(),
    )
}

#[test]
fn tau_bench_stack_a_hand_checked() {
    let (code, v) = json(&["--config", "fixtures/policies/tau-bench/stack-a.toml", TAU]);
    assert_eq!(code, 0, "no orphan, no fact at risk, no guardrail");
    let t0 = format!("{TAU}#0");
    assert_eq!(
        rows(&v, &t0),
        vec![
            row(1, 88, &[], &[], &[], &[]),
            row(3, 973, &[], &[], &[], &[]),
            row(5, 1234, &[], &[], &[], &[]),
            row(7, 1652, &[6], &[], &[], &[]),
            row(9, 2403, &[], &[], &[], &[]),
            row(5, 1208, &[10], &[6], &[], &[0, 1, 2, 3, 4, 5, 6]),
            row(7, 2019, &[], &[], &[], &[]),
            row(5, 1437, &[], &[], &[], &[7, 8, 9, 10]),
            row(7, 1855, &[16], &[], &[], &[]),
        ]
    );
    let t1 = format!("{TAU}#1");
    let chars: Vec<u64> = rows(&v, &t1).iter().map(|r| r.1).collect();
    assert_eq!(chars, vec![89, 441, 631, 985, 1403]);
    assert_eq!(
        v["contexts"],
        serde_json::json!([
            {"trace": t0, "inferences": 9, "peak_chars": 2554, "final_chars": 2554, "chars_removed": 3989},
            {"trace": t1, "inferences": 5, "peak_chars": 1761, "final_chars": 1761, "chars_removed": 348},
        ])
    );
    assert_eq!(v["facts_at_risk"], serde_json::json!([]));
    // Exact field names of the spec, plus `compactions` (issue 8 F5: a compaction that folds
    // only an earlier summary has no `summarized` position).
    let keys: Vec<&str> = v["inferences"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        vec![
            "trace",
            "inference",
            "messages",
            "chars",
            "est_tokens",
            "clipped",
            "evicted",
            "dropped",
            "summarized",
            "orphaned",
            "compactions"
        ]
    );
    let keys: Vec<&str> = v["contexts"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        vec![
            "trace",
            "inferences",
            "peak_chars",
            "final_chars",
            "chars_removed"
        ]
    );
    // The guardrail part is still there (no guardrails configured: every call allowed).
    assert_eq!(v["summary"]["traces"].as_u64(), Some(2));
    assert_eq!(v["summary"]["blocked"].as_u64(), Some(0));
}

#[test]
fn tau_bench_stack_b_window() {
    let (code, v) = json(&["--config", "fixtures/policies/tau-bench/stack-b.toml", TAU]);
    assert_eq!(code, 0);
    let t0 = format!("{TAU}#0");
    let got: Vec<(u64, u64, Vec<u64>)> =
        rows(&v, &t0).into_iter().map(|r| (r.0, r.1, r.5)).collect();
    assert_eq!(
        got,
        vec![
            (1, 88, vec![]),
            (3, 973, vec![]),
            (5, 1234, vec![]),
            (6, 2073, vec![0]),
            (6, 1939, vec![1, 2]),
            (6, 2622, vec![3, 4]),
            (6, 2506, vec![5, 6]),
            (6, 2342, vec![7, 8]),
            (6, 1988, vec![9, 10]),
        ]
    );
    assert_eq!(
        v["contexts"][0],
        serde_json::json!({"trace": t0, "inferences": 9, "peak_chars": 2687, "final_chars": 2687, "chars_removed": 3856})
    );
}

/// Window before compaction (stack C): at inference 6 of `#0` the window drops positions 2-3
/// and compaction folds only 4-10 into the summary, so the first user turns are gone without
/// ever being summarised. The figures were computed by an independent simulation of
/// pyAgentic's policies (fixtures/policies/tau-bench/README.md), which agrees with the replay
/// on all 200 corpus conversations under four stacks.
#[test]
fn tau_bench_window_before_compaction_drops_unsummarised_turns() {
    let (code, v) = json(&["--config", "fixtures/policies/tau-bench/stack-c.toml", TAU]);
    assert_eq!(code, 0);
    let t0 = format!("{TAU}#0");
    assert_eq!(
        rows(&v, &t0),
        vec![
            row(1, 88, &[], &[], &[], &[]),
            row(3, 973, &[], &[], &[], &[]),
            row(5, 1234, &[], &[], &[], &[]),
            row(7, 2161, &[], &[], &[], &[]),
            row(9, 2912, &[], &[], &[], &[]),
            row(9, 3059, &[], &[], &[0, 1], &[]),
            row(3, 844, &[], &[], &[2, 3], &[4, 5, 6, 7, 8, 9, 10]),
            row(5, 1431, &[], &[], &[], &[]),
            row(7, 2021, &[], &[], &[], &[]),
        ]
    );
    let t1 = format!("{TAU}#1");
    assert_eq!(
        v["contexts"],
        serde_json::json!([
            {"trace": t0, "inferences": 9, "peak_chars": 3059, "final_chars": 2720, "chars_removed": 3823},
            {"trace": t1, "inferences": 5, "peak_chars": 2109, "final_chars": 2109, "chars_removed": 0},
        ])
    );
}

#[test]
fn text_report_shows_compactions_and_conversations() {
    let out = replay(&["--config", "fixtures/policies/tau-bench/stack-a.toml", TAU]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Policies in order: tool-output-clip (append time), tool-eviction (compile time), compaction (compile time)."),
        "{text}"
    );
    assert!(
        text.contains("inference 5: 5 messages, 1208 chars (~302 tokens), raw log 3856 chars; clipped 10; evicted 6 by `tool-eviction`; summarized 0-6 by `compaction`"),
        "{text}"
    );
    assert!(
        text.contains("`compaction` compacted 7 messages (estimate 603 tokens > 600) into a placeholder summary of 39 chars"),
        "{text}"
    );
    assert!(
        text.contains(&format!("  {TAU}#0: 9 inferences (inferred), peak 2554 chars, final 2554 chars in 9 of 19 messages, 3989 of 6543 raw chars removed; 2 compactions (0 with a recorded summary), chars removed by `tool-output-clip` 1207, `tool-eviction` 409, `compaction` 2373")),
        "{text}"
    );
    // No guardrails but policies: no "every call is allowed" warning.
    assert!(!String::from_utf8_lossy(&out.stderr).contains("no guardrails configured"));
}

const ORPHAN_TRACE: &str = r#"{"rec":"header","format":"cellguard-trace","version":1}
{"rec":"message","msg":{"kind":"user","content":"go"}}
{"rec":"message","msg":{"kind":"tool_call","id":"c1","name":"a","arguments":"{}"}}
{"rec":"message","msg":{"kind":"tool_call","id":"c2","name":"b","arguments":"{}"}}
{"rec":"message","msg":{"kind":"tool_result","tool_call_id":"c1","name":"a","content":"first"}}
{"rec":"message","msg":{"kind":"tool_result","tool_call_id":"c2","name":"b","content":"second"}}
{"rec":"inference","usage":{"input_tokens":10,"output_tokens":1}}
{"rec":"state","field":"score","op":"set","value":150}
"#;

const ORPHAN_CONFIG: &str = r#"
[[policies]]
id = "window"
kind = "sliding-window"
max-messages = 3

[[policies]]
kind = "range"
field = "score"
min = 0
max = 100
"#;

#[test]
fn orphans_and_state_findings_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "c.toml", ORPHAN_CONFIG);
    let trace = write(dir.path(), "t.jsonl", ORPHAN_TRACE);
    let (code, v) = json(&["--config", &cfg, &trace]);
    assert_eq!(code, 1, "an orphaned pair is a finding");
    assert_eq!(v["inferences"][0]["dropped"], serde_json::json!([0, 1]));
    assert_eq!(v["inferences"][0]["orphaned"], serde_json::json!([3]));
    assert_eq!(v["state_writes"][0]["outcome"], "would-raise");
    assert_eq!(v["state_writes"][0]["committed"], 150);
    assert_eq!(
        v["state_summary"],
        serde_json::json!({"writes": 1, "checked": 1, "vetoed": 0, "raised": 1, "transformed": 0})
    );
    assert_eq!(
        replay(&["--config", &cfg, &trace, "--exit-zero"])
            .status
            .code(),
        Some(0)
    );

    let out = replay(&["--config", &cfg, &trace]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("{trace}:7: inference 0: 3 messages, 11 chars (~2 tokens), raw log 13 chars; dropped 0-1 by `window`")), "{text}");
    assert!(
        text.contains("    orphaned 3: sent without their tool call/result partner"),
        "{text}"
    );
    assert!(text.contains(&format!("{trace}:8: `score` set 150: would raise by `range:score` (range): 150 is above the maximum 100")), "{text}");
    assert!(
        text.contains("    its docs say: the write is vetoed and the error goes back to the LLM"),
        "{text}"
    );

    let out = replay(&["--config", &cfg, &trace, "--output-format", "json-lines"]);
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| l.as_object().unwrap().keys().next().unwrap().clone())
        .collect();
    assert_eq!(
        kinds,
        vec![
            "trace",
            "inference",
            "context",
            "state_write",
            "state_summary",
            "summary"
        ]
    );
    assert!(lines[0]["totals"].is_object(), "{:?}", lines[0]);
    assert_eq!(lines[1]["inference"]["orphaned"], serde_json::json!([3]));

    let out = replay(&["--config", &cfg, &trace, "--output-format", "sarif"]);
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &sarif["runs"][0];
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(rules.contains(&"orphaned-pair") && rules.contains(&"range:score"));
    let results: Vec<(&str, &str, u64)> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap(),
                r["level"].as_str().unwrap(),
                r["locations"][0]["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap(),
            )
        })
        .collect();
    assert_eq!(
        results,
        vec![("orphaned-pair", "error", 7), ("range:score", "warning", 8)]
    );
}

#[test]
fn html_plots_context_size_per_conversation_without_external_assets() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("r.html");
    let out = replay(&[
        "--config",
        "fixtures/policies/tau-bench/stack-a.toml",
        TAU,
        "--output-format",
        "html",
        "-o",
        out_path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let html = std::fs::read_to_string(&out_path).unwrap();
    assert_eq!(html.matches("<svg").count(), 2, "one plot per conversation");
    // Two lines per plot: raw log (dashed) and working context; compaction marks where it fired.
    assert_eq!(html.matches("<polyline").count(), 4);
    assert_eq!(html.matches("stroke=\"#fb8c00\"").count(), 2);
    assert!(html.contains("inference 5 (inferred) (line 212): 5 messages, 1208 chars (~302 tokens); raw log 11 messages, 3856 chars; clipped 10; evicted 6 by `tool-eviction`; summarized 0-6 by `compaction`"));
    for external in ["src=", "<link", "@import", "url("] {
        assert!(!html.contains(external), "external asset: {external}");
    }
}

#[test]
fn guardrails_only_config_has_no_policy_keys_and_policy_errors_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "g.toml",
        "[[guardrails]]\nid = \"b\"\nkind = \"capability-boundary\"\nblock = [\"*.delete_*\"]\n",
    );
    let (code, v) = json(&["--config", &cfg, TAU]);
    assert_eq!(code, 0);
    assert!(v.get("inferences").is_none() && v.get("contexts").is_none());

    let bad = write(
        dir.path(),
        "bad.toml",
        "[[policies]]\nkind = \"compaction\"\nkeep-recent = \"ten\"\n",
    );
    let out = replay(&["--config", &bad, TAU]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{bad}:3:15: `keep-recent` must be an integer, found a string"
        )),
        "{err}"
    );
}

#[test]
fn facts_at_risk_make_exit_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "c.toml",
        "[[policies]]\nkind = \"tool-eviction\"\nkeep-last-n = 1\n",
    );
    // Three parallel calls: two fresh results are stubbed before the model saw them.
    let trace = write(
        dir.path(),
        "d.json",
        r#"[{"kind":"user","content":"go"},
{"kind":"tool_call","id":"c1","name":"a","arguments":"{}"},
{"kind":"tool_call","id":"c2","name":"a","arguments":"{}"},
{"kind":"tool_call","id":"c3","name":"a","arguments":"{}"},
{"kind":"tool_result","tool_call_id":"c1","name":"a","content":"one"},
{"kind":"tool_result","tool_call_id":"c2","name":"a","content":"two"},
{"kind":"tool_result","tool_call_id":"c3","name":"a","content":"three"},
{"kind":"assistant","content":"done"}]"#,
    );
    let (code, v) = json(&["--config", &cfg, &trace]);
    assert_eq!(code, 1);
    let facts: Vec<(u64, u64, &str)> = v["facts_at_risk"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["position"].as_u64().unwrap(),
                f["line"].as_u64().unwrap(),
                f["effect"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(facts, vec![(4, 5, "evicted"), (5, 6, "evicted")]);
    // Inferred boundaries of a pyAgentic dump: before the calls, before the reply.
    assert_eq!(v["contexts"][0]["inferences"].as_u64(), Some(2));
}
