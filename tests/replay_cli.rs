//! End-to-end tests of `cellguard replay`: exit codes, output formats, counts, errors.

#[path = "support/json_schema.rs"]
mod json_schema;
#[path = "support/replay.rs"]
mod support;

use serde_json::Value;
use support::{replay, write};

const CONFIG: &str = r#"
[[guardrails]]
id = "no-delete"
kind = "capability-boundary"
block = ["*.delete_*"]
"#;

const TRACE: &str = r#"{"rec":"header","format":"cellguard-trace","version":1}
{"rec":"cell","index":0}
{"rec":"call","cell":0,"index":0,"raw_key":"A.A.get_x","status":"ok"}
{"rec":"call","cell":0,"index":1,"raw_key":"A.A.delete_x","status":"ok"}
{"rec":"call","cell":0,"index":2,"raw_key":"A.A.get_y","status":"ok"}
not json
{"rec":"policy_effect","at":3}
{"rec":"cell","index":1}
{"rec":"call","cell":1,"index":0,"raw_key":"A.A.delete_y","status":"blocked"}
"#;

#[test]
fn json_shape_counts_and_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "c.toml", CONFIG);
    let trace = write(dir.path(), "t.jsonl", TRACE);
    let out = replay(&["--config", &cfg, &trace, "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["summary"];
    assert_eq!(
        (
            s["traces"].as_u64(),
            s["calls"].as_u64(),
            s["allowed"].as_u64(),
            s["blocked"].as_u64(),
            s["unreached"].as_u64()
        ),
        (Some(1), Some(4), Some(1), Some(2), Some(1))
    );
    assert_eq!(
        (s["records_read"].as_u64(), s["records_skipped"].as_u64()),
        (Some(9), Some(2))
    );
    assert_eq!(s["per_guardrail"]["no-delete"].as_u64(), Some(2));
    // Listed: the blocked delete_x, the unreached get_y, the (recorded and simulated) blocked delete_y.
    let d = v["decisions"].as_array().unwrap();
    let keys: Vec<Vec<&str>> = d
        .iter()
        .map(|d| {
            vec![
                d["raw_key"].as_str().unwrap(),
                d["recorded"].as_str().unwrap(),
                d["decision"].as_str().unwrap(),
            ]
        })
        .collect();
    assert_eq!(
        keys,
        vec![
            vec!["A.A.delete_x", "ok", "blocked"],
            vec!["A.A.get_y", "ok", "unreached"],
            vec!["A.A.delete_y", "blocked", "blocked"]
        ]
    );
    let obj = d[0].as_object().unwrap();
    let mut fields: Vec<&str> = obj.keys().map(String::as_str).collect();
    fields.sort();
    assert_eq!(
        fields,
        vec![
            "action_key",
            "cell",
            "decision",
            "guardrail",
            "index",
            "line",
            "raw_key",
            "reason",
            "recorded",
            "suggestion",
            "trace"
        ]
    );
    // Each decision's line in the trace file, as the text and SARIF reports locate it.
    let lines: Vec<u64> = d.iter().map(|d| d["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, vec![4, 5, 9]);
    // The skipped records, as standard error shows them.
    let skipped: Vec<(u64, Option<u64>)> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["line"].as_u64().unwrap(), s["column"].as_u64()))
        .collect();
    assert_eq!(skipped, vec![(6, Some(2)), (7, None)]);
    assert_eq!(
        v["skipped"][1]["message"],
        "unknown record kind `policy_effect` skipped"
    );
    assert_eq!(
        (
            v["summary"]["changed"].as_u64(),
            v["summary"]["matching"].as_str()
        ),
        (Some(2), Some("key"))
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("t.jsonl:6:2: invalid JSON"), "{stderr}");
    assert!(
        stderr.contains("t.jsonl:7: unknown record kind `policy_effect` skipped"),
        "{stderr}"
    );
}

#[test]
fn expect_recorded_and_exit_zero() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "c.toml", CONFIG);
    let golden = write(
        dir.path(),
        "g.jsonl",
        "{\"rec\":\"call\",\"raw_key\":\"A.A.get_x\",\"status\":\"ok\"}\n{\"rec\":\"call\",\"raw_key\":\"A.A.delete_x\",\"status\":\"blocked\"}\n",
    );
    // Blocked calls: exit 1; but they match the recording, so --expect-recorded passes.
    assert_eq!(replay(&["--config", &cfg, &golden]).status.code(), Some(1));
    assert_eq!(
        replay(&["--config", &cfg, &golden, "--expect-recorded"])
            .status
            .code(),
        Some(0)
    );
    let changed = write(
        dir.path(),
        "ch.jsonl",
        "{\"rec\":\"call\",\"raw_key\":\"A.A.delete_x\",\"status\":\"ok\"}\n",
    );
    assert_eq!(
        replay(&["--config", &cfg, &changed, "--expect-recorded"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        replay(&["--config", &cfg, &changed, "--exit-zero"])
            .status
            .code(),
        Some(0)
    );
    let clean = write(
        dir.path(),
        "ok.jsonl",
        "{\"rec\":\"call\",\"raw_key\":\"A.A.get_x\",\"status\":\"ok\"}\n",
    );
    assert_eq!(replay(&["--config", &cfg, &clean]).status.code(), Some(0));
}

#[test]
fn on_block_modes() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "c.toml", CONFIG);
    let trace = write(dir.path(), "t.jsonl", TRACE);
    for (mode, unreached) in [("stop-cell", 1), ("drop", 0), ("keep", 0)] {
        let out = replay(&[
            "--config",
            &cfg,
            &trace,
            "--output-format",
            "json",
            "--on-block",
            mode,
        ]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v["summary"]["unreached"].as_u64(),
            Some(unreached),
            "{mode}"
        );
    }
}

#[test]
fn json_lines_puts_the_summary_last() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "c.toml", CONFIG);
    let trace = write(dir.path(), "t.jsonl", TRACE);
    let out = replay(&[
        "--config",
        &cfg,
        &trace,
        "--output-format",
        "json-lines",
        "--all-decisions",
    ]);
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Four decisions, the trace's totals line (issue 6 T10), the two skipped records, then
    // the summary.
    assert_eq!(lines.len(), 8);
    assert!(lines[..4].iter().all(|l| l.get("decision").is_some()));
    assert_eq!(lines[4]["totals"]["calls"].as_u64(), Some(4));
    assert_eq!(lines[5]["skipped"]["line"].as_u64(), Some(6));
    assert_eq!(lines[6]["skipped"]["line"].as_u64(), Some(7));
    assert_eq!(lines[7]["summary"]["calls"].as_u64(), Some(4));
    assert_eq!(lines[7]["summary"]["changed"].as_u64(), Some(2));
}

#[test]
fn sarif_and_html() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "c.toml", CONFIG);
    let trace = write(dir.path(), "t.jsonl", TRACE);
    let out = replay(&["--config", &cfg, &trace, "--output-format", "sarif"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["ruleId"], "no-delete");
    assert_eq!(results[0]["level"], "error");
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        4
    );
    assert_eq!(results[1]["ruleId"], "unreached");
    let html_path = dir.path().join("r.html");
    let out = replay(&[
        "--config",
        &cfg,
        &trace,
        "--output-format",
        "html",
        "-o",
        html_path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        !html.contains("<script src") && !html.contains("<link"),
        "self-contained"
    );
    // One timeline mark per call: 2 allowed-or-not in cell 0 (allowed, blocked, unreached) + 1.
    assert_eq!(html.matches("<i class=\"c blocked").count(), 2);
    assert_eq!(html.matches("<i class=\"c unreached").count(), 1);
    assert_eq!(html.matches("<i class=\"c allowed").count(), 1);
    // The skipped records, as in json and SARIF.
    assert!(html.contains("<h2>Skipped records and warnings</h2>"));
    assert!(
        html.contains("<td>7</td><td></td><td>unknown record kind `policy_effect` skipped</td>")
    );
    assert_eq!(html.matches("<tr><td>skipped</td>").count(), 2);
}

#[test]
fn config_errors_are_located_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "c.toml",
        "[[guardrails]]\nid = \"g\"\nkind = \"temporal-order\"\nrules = [{ before = \"a\", after = \"b\", within = 3 }]\n",
    );
    let trace = write(dir.path(), "t.jsonl", TRACE);
    let out = replay(&["--config", &cfg, &trace]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("c.toml:4:39: unknown key `within` in a temporal-order rule"),
        "{stderr}"
    );
    // Missing trace file and unknown format name.
    let out = replay(&["--config", &cfg.replace("c.toml", "nope.toml"), &trace]);
    assert_eq!(out.status.code(), Some(2));
    let ok_cfg = write(dir.path(), "ok.toml", CONFIG);
    let out = replay(&["--config", &ok_cfg, "does-not-exist.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("does-not-exist.jsonl: cannot open trace")
    );
    let out = replay(&["--config", &ok_cfg, &trace, "--format", "yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let bad_json = write(dir.path(), "b.json", "[{\"role\": \"user\",, }]");
    let out = replay(&["--config", &ok_cfg, &bad_json]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("b.json:1:"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn format_override_and_detection() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "c.toml",
        "[[guardrails]]\nid = \"b\"\nkind = \"capability-boundary\"\nblock = [\"cancel_*\"]\n",
    );
    let chat = r#"[{"role":"user","content":"cancel it"},{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"cancel_reservation","arguments":"{\"reservation_id\":\"X\"}"}}]},{"role":"tool","tool_call_id":"1","content":"done"}]"#;
    let f = write(dir.path(), "conv.json", chat);
    for fmt in [None, Some("openai-chat")] {
        let mut args = vec![
            "--config",
            cfg.as_str(),
            f.as_str(),
            "--output-format",
            "json",
        ];
        if let Some(x) = fmt {
            args.extend(["--format", x]);
        }
        let v: Value = serde_json::from_slice(&replay(&args).stdout).unwrap();
        assert_eq!(v["summary"]["blocked"].as_u64(), Some(1));
        assert_eq!(v["decisions"][0]["raw_key"], "cancel_reservation");
        assert_eq!(v["traces"][0]["format"], "openai-chat");
    }
    // Forcing the wrong format is an error, not a silent empty replay.
    let out = replay(&["--config", &cfg, &f, "--format", "swe-agent"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn real_tau_bench_conversations() {
    // Nine conversations copied from tau-bench's GPT-4o airline run (see the fixture README).
    let out = replay(&[
        "--config",
        "fixtures/replay/tau-bench-airline/cellguard.toml",
        "fixtures/replay/tau-bench-airline/conversations.json",
        "--output-format",
        "json",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["traces"].as_u64(), Some(9));
    assert_eq!(v["summary"]["calls"].as_u64(), Some(76));
    // #5 (corpus entry 141): the agent cancelled a basic-economy reservation on the user's word
    // that it was booked 10 hours ago, without ever fetching it.
    let d = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["trace"].as_str().unwrap().ends_with("#5"))
        .unwrap();
    assert_eq!(d["raw_key"], "cancel_reservation");
    assert_eq!(d["guardrail"], "reservation-before-change");
}

/// Issue 6 R14: a stack whose guardrails use both matching modes says which uses which in the
/// summary line; a glob under `substring` matching is warned about with its location.
#[test]
fn mixed_modes_are_named_and_substring_globs_warned() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "c.toml",
        "[replay]\nmatch = \"substring\"\n[[guardrails]]\nid = \"k\"\nkind = \"capability-boundary\"\nmatch = \"key\"\nblock = [\"plan\"]\n[[guardrails]]\nid = \"s\"\nkind = \"capability-boundary\"\nblock = [\"explain_*\"]\n",
    );
    let trace = write(
        dir.path(),
        "t.jsonl",
        "{\"rec\":\"call\",\"cell\":0,\"raw_key\":\"X.x.plan\",\"status\":\"ok\"}\n{\"rec\":\"call\",\"cell\":1,\"raw_key\":\"X.x.explain_plan\",\"status\":\"ok\"}\n",
    );
    let out = replay(&["--config", &cfg, &trace]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("(mixed matching: key: k; substring: s)"),
        "{stdout}"
    );
    assert!(
        stderr.contains("c.toml:11:10: pattern `explain_*` contains glob characters but is matched as a substring"),
        "{stderr}"
    );
    // `explain_*` is literal under substring matching: only `plan` (key mode) blocks.
    assert!(stdout.contains("1 allowed, 1 blocked"), "{stdout}");
}

/// The full tau-bench GPT-4o airline file (copied from the corpus, see the fixture README):
/// block counts of the three shipped configs, with and without `--on-block keep`, and the exact
/// calls `cellguard.toml` blocks and `lenient.toml` allows (issue 6 T11: hand-checked in
/// `fixtures/replay/tau-bench-airline/HAND-CHECK.md`).
#[test]
fn tau_bench_airline_full_file_counts() {
    let dir = "fixtures/replay/tau-bench-airline";
    let file = format!("{dir}/gpt-4o-airline.json");
    let run = |cfg: &str, keep: bool| -> Value {
        let cfg = format!("{dir}/{cfg}");
        let mut args = vec!["--config", &cfg, &file, "--output-format", "json"];
        if keep {
            args.extend(["--on-block", "keep"]);
        }
        serde_json::from_slice(&replay(&args).stdout).unwrap()
    };
    let blocked = |v: &Value| -> Vec<(u64, u64, u64)> {
        v["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["decision"] == "blocked")
            .map(|d| {
                let t = d["trace"].as_str().unwrap();
                let n = t.rsplit('#').next().unwrap().parse().unwrap();
                (n, d["cell"].as_u64().unwrap(), d["index"].as_u64().unwrap())
            })
            .collect()
    };
    let strict = run("cellguard.toml", false);
    let lenient = run("lenient.toml", false);
    for (v, calls, n) in [
        (&strict, 1164, 88),
        (&run("cellguard.toml", true), 1164, 86),
        (&lenient, 1164, 72),
        (&run("lenient.toml", true), 1164, 70),
        (&run("one-yes-per-change.toml", false), 1164, 124),
        (&run("one-yes-per-change.toml", true), 1164, 123),
    ] {
        assert_eq!(v["summary"]["calls"].as_u64(), Some(calls));
        assert_eq!(v["summary"]["blocked"].as_u64(), Some(n));
    }
    let lb = blocked(&lenient);
    let mut only_strict: Vec<(u64, u64)> = blocked(&strict)
        .into_iter()
        .filter(|k| !lb.contains(k))
        .map(|(n, c, _)| (n, c))
        .collect();
    only_strict.sort();
    // 12 confirmations of listed details, 3 borderline (132, 134 x2), 3 not confirmations that a
    // content regex cannot tell apart (111 cells 11 and 13: retries with new amounts after "That
    // sounds good"; 113 cell 6: "Please proceed with booking the HAT102 flight", a choice).
    assert_eq!(
        only_strict,
        vec![
            (61, 7),
            (82, 2),
            (111, 3),
            (111, 5),
            (111, 8),
            (111, 11),
            (111, 13),
            (113, 6),
            (122, 4),
            (128, 2),
            (128, 8),
            (128, 9),
            (128, 10),
            (132, 2),
            (133, 19),
            (134, 3),
            (134, 4),
            (178, 2)
        ]
    );
    // The T11 plain violations are blocked by both: requests and choices containing "proceed"
    // or "go ahead" (13, 15, 73, 109, 110, 163), the borderline 114, and 150 (a confirmation
    // opening with "In that case, please go ahead", which the anchored regex misses).
    for k in [
        (13, 9),
        (13, 11),
        (15, 2),
        (73, 10),
        (109, 7),
        (110, 4),
        (114, 3),
        (163, 3),
        (163, 6),
        (150, 12),
    ] {
        assert!(
            lb.iter().any(|&(n, c, _)| (n, c) == k),
            "{k:?} allowed by lenient.toml"
        );
    }
}

/// Issue 6 T10: `json-lines` closes each trace with its block streaks and a totals line (the
/// values of the `json` report's `block_streaks` and `traces`), so per-trace totals survive in
/// the one format whose memory stays flat. Input: three native traces in one file (a block
/// streak in the first, an errored call in the second, the third empty).
#[test]
fn json_lines_closes_each_trace_with_its_totals() {
    let dir = "fixtures/replay/issue6/t10-json-lines-trace-totals";
    let cfg = format!("{dir}/cellguard.toml");
    let trace = format!("{dir}/trace.jsonl");
    let out = replay(&["--config", &cfg, &trace, "--output-format", "json-lines"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let expected_path = support::root().join(dir).join("expected.jsonl");
    if std::env::var_os("CELLGUARD_BLESS").is_some() {
        std::fs::write(&expected_path, &text).unwrap();
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap();
    assert_eq!(text, expected);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Every line's kind, in order: decisions, then per trace its streaks and totals.
    let kinds: Vec<&str> = lines
        .iter()
        .map(|l| {
            let o = l.as_object().unwrap();
            if o.contains_key("decision") {
                "decision"
            } else if o.contains_key("totals") {
                "totals"
            } else if o.contains_key("block_streak") {
                "streak"
            } else {
                o.keys().next().unwrap().as_str()
            }
        })
        .collect();
    assert_eq!(
        kinds,
        ["decision", "decision", "decision", "streak", "totals", "totals", "totals", "summary"]
    );
    // The same totals and streaks as the json report.
    let (_, json, _) = support::replay_json(&["--config", &cfg, &trace]);
    let totals: Vec<Value> = lines
        .iter()
        .filter(|l| l.get("totals").is_some())
        .map(|l| {
            let mut t = l["totals"].clone();
            t["trace"] = l["trace"].clone();
            t
        })
        .collect();
    let traces = json["traces"].as_array().unwrap();
    assert_eq!(totals.len(), 3);
    for (t, j) in totals.iter().zip(traces) {
        for k in [
            "trace",
            "agent_id",
            "format",
            "epoch",
            "on_block",
            "config",
            "calls",
            "allowed",
            "blocked",
            "unreached",
            "changed",
        ] {
            assert_eq!(t[k], j[k], "{k}");
        }
        assert_eq!(t.as_object().unwrap().len(), j.as_object().unwrap().len());
    }
    // SARIF carries the same entries (spooled like the json ones as each trace ends, issue 6
    // T5-16).
    let out = replay(&["--config", &cfg, &trace, "--output-format", "sarif"]);
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sarif["runs"][0]["properties"]["traces"], json["traces"]);
    assert_eq!(totals[0]["blocked"], 3);
    assert_eq!(totals[1]["calls"], 2);
    assert_eq!(totals[2]["calls"], 0);
    let streaks: Vec<&Value> = lines.iter().filter_map(|l| l.get("block_streak")).collect();
    let json_streaks = json["block_streaks"].as_array().unwrap();
    assert_eq!(streaks.len(), json_streaks.len());
    assert_eq!(streaks[0]["count"], json_streaks[0]["count"]);
    assert_eq!(streaks[0]["action_key"], "Files.Files.delete_file");
    assert_eq!(streaks[0]["line"], 5);
}

/// Issue 6 T10 addendum: a trace's lines are flushed when it ends, so a reader of a live
/// (growing) input sees the first trace's decisions and totals before the input closes.
#[test]
fn json_lines_flushes_at_the_end_of_each_trace() {
    use std::io::{BufRead, Write};
    let root = support::root();
    let cfg = "fixtures/replay/issue6/t10-json-lines-trace-totals/cellguard.toml";
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .current_dir(root)
        .args(["replay", "--config", cfg, "-", "--format", "native"])
        .args(["--output-format", "json-lines"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    // The first trace, and the header that starts the second one (which ends the first).
    writeln!(
        stdin,
        "{{\"rec\":\"call\",\"raw_key\":\"Files.Files.delete_file\",\"status\":\"ok\"}}"
    )
    .unwrap();
    writeln!(
        stdin,
        "{{\"rec\":\"header\",\"format\":\"cellguard-trace\",\"version\":1}}"
    )
    .unwrap();
    stdin.flush().unwrap();
    let wait = std::time::Duration::from_secs(60);
    let first: Value = serde_json::from_str(
        &rx.recv_timeout(wait)
            .expect("no decision before the input ends"),
    )
    .unwrap();
    assert_eq!(first["decision"], "blocked");
    let totals: Value = serde_json::from_str(
        &rx.recv_timeout(wait)
            .expect("no totals before the input ends"),
    )
    .unwrap();
    assert_eq!(totals["totals"]["blocked"], 1);
    drop(stdin);
    let rest: Vec<String> = rx.iter().collect();
    reader.join().unwrap();
    assert!(child.wait().unwrap().code() == Some(1));
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert!(rest[1].starts_with("{\"summary\""), "{rest:?}");
}

/// Reports show `NaN`, `Infinity` and `-Infinity` read from a trace as those tokens, never as
/// the readers' internal stand-in (a reserved private-use marker), in every output format and
/// on standard error; a real reserved character shows as itself.
#[test]
fn reports_show_non_finite_numbers_as_python_writes_them() {
    let dir = "fixtures/replay/issue6/t01-nan-report-text";
    let cfg = format!("{dir}/cellguard.toml");
    let trace = format!("{dir}/trace.jsonl");
    let marker = "\u{10F800}";
    for format in ["text", "json", "json-lines", "sarif", "html"] {
        let out = replay(&[
            "--config",
            &cfg,
            &trace,
            "--output-format",
            format,
            "--all-decisions",
        ]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        let stdout = String::from_utf8_lossy(&out.stdout).replace("&#39;", "'");
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The one real U+10F800 of the trace (line 6) shows once, never doubled.
        // Every marker character left is the real one of line 6 (its key is that character
        // followed by the text `NaN`), shown once.
        let real = stdout.matches(&format!("'{marker}NaN'")).count();
        assert!(real >= 1, "{format}: {stdout}");
        assert_eq!(
            stdout.matches(marker).count(),
            stdout.matches(&format!("{marker}NaN")).count(),
            "{format}"
        );
        assert!(
            !stdout.contains(&format!("{marker}{marker}")),
            "{format}: {stdout}"
        );
        assert!(
            !stdout.contains(&format!("{marker}Infinity")),
            "{format}: {stdout}"
        );
        assert!(
            !stdout.contains(&format!("{marker}-Infinity")),
            "{format}: {stdout}"
        );
        assert!(!stderr.contains(marker), "{format}: {stderr}");
        for key in ["NaN", "Infinity", "-Infinity"] {
            assert!(
                stdout.contains(&format!("'{key}'")),
                "{format}: no '{key}' in {stdout}"
            );
        }
    }
}

/// Issue 6 T4-6: `-o` naming one of the input traces (the same path, `./` and `..` spellings,
/// a symlink, a hard link) is refused with exit 2 before anything is written, and the trace is
/// left as it was; another output file next to it is fine.
#[test]
fn report_file_that_is_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let src = support::root().join("fixtures/replay/issue6/t4-06-output-is-input");
    let cfg = src.join("cellguard.toml");
    let trace = dir.path().join("same.jsonl");
    let original = std::fs::read(src.join("template.jsonl")).unwrap();
    std::fs::write(&trace, &original).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let mut aliases = vec![
        trace.clone(),
        dir.path().join(".").join("same.jsonl"),
        dir.path().join("sub").join("..").join("same.jsonl"),
    ];
    #[cfg(unix)]
    {
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&trace, &link).unwrap();
        aliases.push(link);
        let hard = dir.path().join("hard.jsonl");
        std::fs::hard_link(&trace, &hard).unwrap();
        aliases.push(hard);
    }
    for out in &aliases {
        for format in ["text", "json-lines"] {
            let o = replay(&[
                "--config",
                cfg.to_str().unwrap(),
                trace.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--output-format",
                format,
            ]);
            assert_eq!(o.status.code(), Some(2), "{}", out.display());
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains("the report file is also an input trace"),
                "{err}"
            );
            assert_eq!(
                std::fs::read(&trace).unwrap(),
                original,
                "{}",
                out.display()
            );
        }
    }
    let other = dir.path().join("report.txt");
    let o = replay(&[
        "--config",
        cfg.to_str().unwrap(),
        trace.to_str().unwrap(),
        "-o",
        other.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(std::fs::read_to_string(&other)
        .unwrap()
        .contains("A.A.delete_x"));
    assert_eq!(std::fs::read(&trace).unwrap(), original);
}

/// Issue 6 T7-4: `-o` naming the config (given or discovered) or a file it `extend`s is
/// refused with exit 2, and the file is left as it was.
#[test]
fn report_file_that_is_a_config_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let base =
        "[[guardrails]]\nid = \"cb\"\nkind = \"capability-boundary\"\nblock = [\"S.S.bad\"]\n";
    let child = "extend = \"base.toml\"\n";
    std::fs::write(dir.path().join("base.toml"), base).unwrap();
    std::fs::write(dir.path().join("cellguard.toml"), child).unwrap();
    let trace = dir.path().join("t.jsonl");
    std::fs::write(
        &trace,
        "{\"rec\": \"call\", \"cell\": 0, \"index\": 0, \"action_key\": \"S.S.bad\", \"status\": \"ok\"}\n",
    )
    .unwrap();
    let cfg = dir.path().join("cellguard.toml");
    let t = trace.to_str().unwrap();
    for (args, target) in [
        (vec!["--config", cfg.to_str().unwrap(), t], "cellguard.toml"),
        (vec![t], "cellguard.toml"),
        (vec![t], "base.toml"),
        (vec!["--config", cfg.to_str().unwrap(), t], "base.toml"),
    ] {
        let out = dir.path().join(target);
        let mut a = args.clone();
        a.extend(["-o", out.to_str().unwrap()]);
        let o = replay(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?} -o {target}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("the report file is also a config file"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("base.toml")).unwrap(),
            base
        );
        assert_eq!(std::fs::read_to_string(&cfg).unwrap(), child);
    }
    // The guardrails came through `extend`: another report file is written, the call blocked.
    let other = dir.path().join("report.txt");
    let o = replay(&[t, "-o", other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(std::fs::read_to_string(&other)
        .unwrap()
        .contains("blocked by cb"));
}

/// The SARIF 2.1.0 schema and its definitions (`tests/fixtures/sarif`).
fn sarif_schema() -> Value {
    let path = support::root().join("tests/fixtures/sarif/sarif-2.1.0.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Issue 6 T4-3: the completion validation replayed on completion records, and the block
/// streaks, are in every format, with the same facts: `json` and `json-lines` carry every
/// completion; `text`, `sarif` (rule `completion-validation`) and `html` (a table) list those
/// that change or are rejected, and all give the counts.
#[test]
fn completions_and_streaks_in_every_format() {
    let dir = "fixtures/replay/issue6/t4-03-completions-every-format";
    let cfg = format!("{dir}/cellguard.toml");
    let trace = format!("{dir}/trace.jsonl");
    let run = |format: &str| {
        let out = replay(&["--config", &cfg, &trace, "--output-format", format]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        String::from_utf8(out.stdout).unwrap()
    };
    // (line, recorded, simulated, changed) of the listed completions.
    let listed = [
        (
            4,
            "accepted",
            "rejected: No successful domain actions have been executed yet.",
            true,
        ),
        (
            7,
            "rejected",
            "rejected: No successful domain actions have been executed yet.",
            false,
        ),
        (
            10,
            "rejected",
            "accepted: Domain work completed with 2 result(s).",
            true,
        ),
        (17, "accepted", "unreached", true),
    ];

    let json: Value = serde_json::from_str(&run("json")).unwrap();
    let completions = json["completions"].as_array().unwrap();
    assert_eq!(completions.len(), 4);
    assert_eq!(json["block_streaks"][0]["count"], 3);

    let lines: Vec<Value> = run("json-lines")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let jl: Vec<&Value> = lines.iter().filter_map(|l| l.get("completion")).collect();
    assert_eq!(jl, completions.iter().collect::<Vec<_>>());
    assert_eq!(
        lines
            .iter()
            .filter_map(|l| l.get("block_streak"))
            .map(|s| s["count"].clone())
            .collect::<Vec<_>>(),
        vec![Value::from(3)]
    );

    let text = run("text");
    for (line, rec, sim, _) in listed {
        assert!(
            text.contains(&format!(
                "{trace}:{line}: signal_completion recorded {rec}, simulated {sim}\n"
            )),
            "{line}: {text}"
        );
    }
    assert!(
        text.contains("Completions: 4 replayed, 3 would change.\n"),
        "{text}"
    );
    assert!(text.contains("`A.A.delete_x` blocked 3 times in a row (block streak)"));

    let sarif: Value = serde_json::from_str(&run("sarif")).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let comp: Vec<&Value> = results
        .iter()
        .filter(|r| r["ruleId"] == "completion-validation")
        .collect();
    assert_eq!(comp.len(), listed.len());
    for (r, (line, rec, sim, changed)) in comp.iter().zip(listed) {
        assert_eq!(
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            line
        );
        assert_eq!(
            r["message"]["text"],
            format!("signal_completion recorded {rec}, simulated {sim}")
        );
        assert_eq!(r["level"], if changed { "warning" } else { "note" });
        assert_eq!(r["properties"]["changed"], changed);
    }
    let streaks: Vec<&Value> = results
        .iter()
        .filter(|r| r["ruleId"] == "block-streak")
        .collect();
    assert_eq!(streaks.len(), 1);
    assert_eq!(streaks[0]["properties"]["count"], 3);
    assert_eq!(
        streaks[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        16
    );
    let summary = &sarif["runs"][0]["properties"]["summary"];
    assert_eq!(
        (
            summary["completions"].as_u64(),
            summary["completions_changed"].as_u64(),
            summary["completions_unknown"].as_u64()
        ),
        (Some(4), Some(3), Some(0))
    );

    let html = run("html");
    assert!(html.contains("<h2>Completions</h2><p>4 replayed, 3 would change.</p>"));
    assert_eq!(
        html.matches("<tr class=\"completion\">").count(),
        listed.len()
    );
    for (line, rec, sim, changed) in listed {
        assert!(
            html.contains(&format!(
                "<td>{line}</td><td>{}</td><td>{rec}</td><td>{sim}</td><td>{}</td>",
                line_cell(line),
                if changed { "yes" } else { "no" }
            )),
            "{line}: {html}"
        );
    }
    assert!(html.contains("<h2>Block streaks</h2>"));
    assert!(html.contains("<td><code>A.A.delete_x</code></td><td>3</td>"));
}

/// The cell of each listed completion of the T4-3 fixture, by line.
fn line_cell(line: u64) -> u64 {
    match line {
        4 => 0,
        7 => 1,
        10 => 2,
        _ => 5,
    }
}

/// Issue 6 T4-4: the SARIF report carries the run-level totals in SARIF's own places
/// (`run.properties`: summary with per-guardrail blocks, outcome changes and records read and
/// skipped, and per-trace totals; `invocations[0].toolExecutionNotifications`: each skipped
/// record and reader warning, located) and validates against the SARIF 2.1.0 schema, as do
/// the SARIF reports of the fixtures with completions, streaks and several traces.
#[test]
fn sarif_has_run_totals_and_notifications_and_is_valid_sarif_2_1_0() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "c.toml", CONFIG);
    let trace = write(dir.path(), "t.jsonl", TRACE);
    let out = replay(&["--config", &cfg, &trace, "--output-format", "sarif"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &v["runs"][0];
    let s = &run["properties"]["summary"];
    assert_eq!(
        (
            s["traces"].as_u64(),
            s["calls"].as_u64(),
            s["allowed"].as_u64(),
            s["blocked"].as_u64(),
            s["unreached"].as_u64(),
            s["changed"].as_u64(),
            s["records_read"].as_u64(),
            s["records_skipped"].as_u64(),
        ),
        (
            Some(1),
            Some(4),
            Some(1),
            Some(2),
            Some(1),
            Some(2),
            Some(9),
            Some(2)
        )
    );
    assert_eq!(s["per_guardrail"]["no-delete"], 2);
    assert_eq!(s["matching"], "key");
    let traces = run["properties"]["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 1);
    assert_eq!(traces[0]["trace"], trace.as_str());
    assert_eq!(
        (traces[0]["calls"].as_u64(), traces[0]["blocked"].as_u64()),
        (Some(4), Some(2))
    );
    let inv = &run["invocations"][0];
    assert_eq!(inv["executionSuccessful"], true);
    let notes = inv["toolExecutionNotifications"].as_array().unwrap();
    let skipped: Vec<u64> = notes
        .iter()
        .filter(|n| n["descriptor"]["id"] == "record-skipped")
        .map(|n| {
            n["locations"][0]["physicalLocation"]["region"]["startLine"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(skipped, vec![6, 7]);

    let schema = sarif_schema();
    let defs = &schema["definitions"];
    json_schema::validate(&schema, defs, &v, "").unwrap();
    for case in [
        "fixtures/replay/issue6/t4-03-completions-every-format",
        "fixtures/replay/colony/c51-completion",
        "fixtures/replay/colony/c30-temporal-order",
        "fixtures/replay/colony/c47-block-streak",
        "fixtures/replay/robustness/r03-bad-utf8",
        "fixtures/replay/robustness/r05-chat-bad-conversation",
    ] {
        let mut args = vec!["--output-format", "sarif", "--all-decisions"];
        let cfg = match std::fs::read_to_string(support::root().join(case).join("config.path")) {
            Ok(p) => format!("{case}/{}", p.trim()),
            Err(_) => format!("{case}/cellguard.toml"),
        };
        args.extend(["--config", &cfg]);
        let traces: Vec<String> = std::fs::read_dir(support::root().join(case))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("trace.") && n != "trace.path")
            .map(|n| format!("{case}/{n}"))
            .collect();
        assert_eq!(traces.len(), 1, "{case}");
        args.push(&traces[0]);
        let out = replay(&args);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        json_schema::validate(&schema, defs, &v, "").unwrap_or_else(|e| panic!("{case}: {e}"));
    }
    // The validator catches what the schema forbids.
    let mut bad = v.clone();
    bad["runs"][0]["invocations"][0]
        .as_object_mut()
        .unwrap()
        .remove("executionSuccessful");
    assert!(json_schema::validate(&schema, defs, &bad, "").is_err());
    let mut bad = v.clone();
    bad["runs"][0]["results"][0]["level"] = Value::from("fatal");
    assert!(json_schema::validate(&schema, defs, &bad, "").is_err());
}

/// Issue 6 T4-9: the HTML timeline of a long trace still shows every blocked call and every
/// outcome change (past the first 2,000 calls, runs of allowed calls become count markers),
/// states the elision, and stays bounded: 200,000 calls give a page under 1 MB (about 190 KB), not
/// one mark per call.
#[test]
fn html_timeline_of_a_long_trace_keeps_every_block_and_change() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "c.toml", CONFIG);
    let n = 200_000u64;
    // Blocked (delete_*) at these indexes; recorded blocked but allowed (changed) at others.
    let blocked = [5u64, 1999, 2000, 2001, 70_000, 150_000, n - 1];
    let changed = [10u64, 2500, 2501, 99_999];
    let mut t = String::from("{\"rec\":\"header\",\"format\":\"cellguard-trace\",\"version\":1}\n{\"rec\":\"cell\",\"index\":0}\n");
    for i in 0..n {
        let (key, status) = if blocked.contains(&i) {
            ("A.A.delete_x", "ok")
        } else if changed.contains(&i) {
            ("A.A.get_x", "blocked")
        } else {
            ("A.A.get_x", "ok")
        };
        t.push_str(&format!(
            "{{\"rec\":\"call\",\"cell\":0,\"index\":{i},\"raw_key\":\"{key}\",\"status\":\"{status}\"}}\n"
        ));
    }
    let trace = write(dir.path(), "long.jsonl", &t);
    let out = replay(&[
        "--config",
        &cfg,
        &trace,
        "--on-block",
        "keep",
        "--output-format",
        "html",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let html = String::from_utf8(out.stdout).unwrap();
    // Every blocked call has its mark, with its line (index + 3) in the hover text.
    assert_eq!(html.matches("<i class=\"c blocked").count(), blocked.len());
    for i in blocked {
        assert!(
            html.contains(&format!(
                "title=\"line {} cell 0 call {i}: A.A.delete_x",
                i + 3
            )),
            "blocked call {i}"
        );
    }
    // Every change (recorded blocked, allowed now; and the blocked calls recorded ok).
    assert_eq!(
        html.matches("<i class=\"c allowed changed").count(),
        changed.len()
    );
    for i in changed {
        assert!(html.contains(&format!(
            "cell 0 call {i}: A.A.get_x (recorded blocked) allowed"
        )));
    }
    // The first 2,000 calls are drawn one by one; after that only blocks and changes, with the
    // allowed runs between them counted: every call is accounted for exactly once.
    let marks = html.matches("<i class=\"c ").count() - html.matches("<i class=\"c lg").count();
    let notable_after: u64 = blocked
        .iter()
        .chain(&changed)
        .filter(|&&i| i >= 2000)
        .count() as u64;
    assert_eq!(marks as u64, 2000 + notable_after);
    let counted: u64 = html
        .split("allowed calls, not drawn one by one\">+")
        .skip(1)
        .map(|s| s.split(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(counted, n - 2000 - notable_after);
    assert!(html.contains(&format!(
        "timeline elided: {counted} allowed calls shown as counts"
    )));
    assert!(html.contains("The first 2000 calls of each trace are drawn one mark each."));
    assert!(html.len() < 1_000_000, "{} bytes", html.len());
    assert!(!html.contains("<script src") && !html.contains("<link"));
}

/// Issue 6 T4-14: the traces of a file that holds several are labelled `FILE#N` with N the
/// trace's 0-based position in the file, in every format: for a list of conversations, the
/// list index (`jq '.[N]'`, not the conversation's `task_id`); for native JSON Lines, the
/// number of headers before the trace's own (the first trace is `FILE`).
#[test]
fn multi_trace_files_are_labelled_by_0_based_position_in_every_format() {
    let dir = "fixtures/replay/issue6/t4-14-conversation-labels";
    let cfg = format!("{dir}/cellguard.toml");
    let trace = format!("{dir}/trace.json");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(support::root().join(&trace)).unwrap())
            .unwrap();
    // The blocked key of each conversation, read at its list index as jq '.[N]' would.
    let key_at = |n: usize| {
        doc[n]["traj"][2]["tool_calls"][0]["function"]["name"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let expected: Vec<(String, String)> = [0usize, 2]
        .iter()
        .map(|&n| (format!("{trace}#{n}"), key_at(n)))
        .collect();
    assert_eq!(expected[0].1, "cancel_reservation");
    assert_eq!(expected[1].1, "book_reservation");
    let run = |format: &str| {
        let out = replay(&["--config", &cfg, &trace, "--output-format", format]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        String::from_utf8(out.stdout).unwrap()
    };
    let json: Value = serde_json::from_str(&run("json")).unwrap();
    let got: Vec<(String, String)> = json["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["trace"].as_str().unwrap().to_string(),
                d["raw_key"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    let names: Vec<&str> = json["traces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["trace"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        (0..3).map(|n| format!("{trace}#{n}")).collect::<Vec<_>>()
    );
    let lines: Vec<(String, String)> = run("json-lines")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l.get("decision").is_some())
        .map(|d| {
            (
                d["trace"].as_str().unwrap().to_string(),
                d["raw_key"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(lines, expected);
    let sarif: Value = serde_json::from_str(&run("sarif")).unwrap();
    let got: Vec<(String, String)> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["properties"]["trace"].as_str().unwrap().to_string(),
                r["properties"]["raw_key"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    let text = run("text");
    let html = run("html");
    for (n, (name, key)) in [0, 2].iter().zip(&expected) {
        assert!(
            text.contains(&format!("{trace}:"))
                && text.contains(&format!(" [#{n}] cell 0, call 0: `{key}`")),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "  {name}: 1 calls, 1 blocked, 0 unreached, 1 changed (openai-chat, epoch current, on-block stop-cell)\n"
            )),
            "{text}"
        );
        assert!(
            html.contains(&format!("<tr><td><code>{name}</code></td>")),
            "{name}"
        );
    }

    // Native JSON Lines: a header after records starts the next trace, `FILE#1`, `FILE#2`.
    let tmp = tempfile::tempdir().unwrap();
    let cfgn = write(tmp.path(), "c.toml", CONFIG);
    let mut t = String::new();
    for n in 0..3 {
        t.push_str(&format!(
            "{{\"rec\":\"header\",\"format\":\"cellguard-trace\",\"version\":1}}\n{{\"rec\":\"cell\",\"index\":0}}\n{{\"rec\":\"call\",\"cell\":0,\"index\":0,\"raw_key\":\"A.A.delete_{n}\",\"status\":\"ok\"}}\n"
        ));
    }
    let native = write(tmp.path(), "three.jsonl", &t);
    let (code, v, _) = support::replay_json(&["--config", &cfgn, &native]);
    assert_eq!(code, 1);
    let got: Vec<(String, String)> = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["trace"].as_str().unwrap().to_string(),
                d["raw_key"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (native.clone(), "A.A.delete_0".to_string()),
            (format!("{native}#1"), "A.A.delete_1".to_string()),
            (format!("{native}#2"), "A.A.delete_2".to_string()),
        ]
    );
}

/// Issue 6 T4-20: `--help` lists the values of every enumerated option, and an unknown value is
/// refused with the list (exit 2).
#[test]
fn help_lists_enumerated_values() {
    let out = replay(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for want in [
        "[possible values: native, colony, openai-chat, pyagentic, swe-agent, agents-runstate, anthropic, openai-responses]",
        "[possible values: keep, drop, stop-cell]",
        "[possible values: key, substring]",
        "[possible values: strict, colony]",
    ] {
        // Help wraps long lines: compare with the line breaks and indentation folded.
        let folded = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(folded.contains(want), "`{want}` missing from:\n{help}");
    }
    let bad = replay(&["--on-block", "stop", "x.jsonl"]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("[possible values: keep, drop, stop-cell]"),
        "{stderr}"
    );
    // Aliases stay accepted without being listed.
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "c.toml", CONFIG);
    let trace = write(dir.path(), "t.jsonl", TRACE);
    assert_eq!(
        replay(&["--config", &cfg, &trace, "--format", "jsonl"])
            .status
            .code(),
        Some(1)
    );
}

/// Issue 6 T4-20: `--color` applies to the text report as it does to `cellguard check`:
/// `always` colours, `never` and `auto` on a pipe do not; other formats are never coloured.
#[test]
fn color_applies_to_the_text_report() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "c.toml", CONFIG);
    let trace = write(dir.path(), "t.jsonl", TRACE);
    let run = |extra: &[&str]| {
        let mut a = vec!["--config", cfg.as_str(), trace.as_str()];
        a.extend_from_slice(extra);
        String::from_utf8_lossy(&replay(&a).stdout).into_owned()
    };
    let plain = run(&["--color", "never"]);
    let colored = run(&["--color", "always"]);
    assert!(!plain.contains('\u{1b}'), "{plain}");
    assert!(
        colored.contains("\u{1b}[0m\u{1b}[1m\u{1b}[31mblocked by no-delete\u{1b}[0m"),
        "{colored}"
    );
    // The same text once the escapes are removed.
    let mut stripped = String::new();
    let mut rest = colored.as_str();
    while let Some(at) = rest.find('\u{1b}') {
        stripped.push_str(&rest[..at]);
        let end = rest[at..].find('m').map_or(rest.len(), |m| at + m + 1);
        rest = &rest[end..];
    }
    stripped.push_str(rest);
    assert_eq!(stripped, plain);
    assert_eq!(run(&[]), plain, "auto on a pipe");
    let json = run(&["--color", "always", "--output-format", "json"]);
    assert!(!json.contains('\u{1b}'), "{json}");
}

/// Issue 6 T4-26: every trace file was held open for the whole run, so past the process's
/// file limit (about 1,020 files with the usual 1,024) the run failed. Each file is now open
/// only while it is read: 3,000 traces replay under a limit of 64 open files.
#[test]
fn thousands_of_trace_files_under_a_low_open_file_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "c.toml", CONFIG);
    let mut names = Vec::new();
    for i in 0..3000 {
        let name = format!("t{i:04}.jsonl");
        let key = if i % 3 == 0 { "delete_x" } else { "get_x" };
        write(
            dir.path(),
            &name,
            &format!("{{\"rec\":\"call\",\"raw_key\":\"A.A.{key}\",\"status\":\"ok\"}}\n"),
        );
        names.push(name);
    }
    let out = std::process::Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg("ulimit -n 64 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_cellguard"))
        .args(["replay", "--config", "c.toml", "--output-format", "json"])
        .args(&names)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["summary"];
    assert_eq!(
        (
            s["traces"].as_u64(),
            s["calls"].as_u64(),
            s["blocked"].as_u64(),
            s["records_read"].as_u64()
        ),
        (Some(3000), Some(3000), Some(1000), Some(3000))
    );
    // A missing file among them is still an input error (exit 2), named.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .current_dir(dir.path())
        .args([
            "replay",
            "--config",
            "c.toml",
            "t0000.jsonl",
            "missing.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("missing.jsonl: cannot open trace"),
        "{stderr}"
    );
}

/// Issue 6 T5-14: a run that ends in an input error (exit 2) leaves an existing `-o` report as
/// it was, in every format (the report is written beside it and renamed on success); a
/// successful run replaces it; `-o /dev/null` still works.
#[test]
fn failed_run_keeps_the_previous_report() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = std::path::PathBuf::from(write(dir.path(), "cellguard.toml", CONFIG));
    let good = std::path::PathBuf::from(write(dir.path(), "good.jsonl", TRACE));
    let bad = std::path::PathBuf::from(write(dir.path(), "bad.jsonl", "not json\n"));
    let report = dir.path().join("r.out");
    for format in ["text", "json", "json-lines", "sarif", "html"] {
        std::fs::write(&report, "KEEP\n").unwrap();
        let args = |trace: &std::path::Path| {
            vec![
                "--config".to_string(),
                cfg.to_str().unwrap().to_string(),
                good.to_str().unwrap().to_string(),
                trace.to_str().unwrap().to_string(),
                "-o".to_string(),
                report.to_str().unwrap().to_string(),
                "--output-format".to_string(),
                format.to_string(),
            ]
        };
        let failing = args(&bad);
        let o = replay(&failing.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(2), "{format}");
        assert_eq!(
            std::fs::read_to_string(&report).unwrap(),
            "KEEP\n",
            "{format}"
        );
        let passing = args(&good);
        let o = replay(&passing.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(1), "{format}");
        let written = std::fs::read_to_string(&report).unwrap();
        assert!(written.contains("delete_x"), "{format}: {written}");
        // No temporary report file is left behind.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            !names.iter().any(|n| n.starts_with(".cellguard-report-")),
            "{names:?}"
        );
    }
    #[cfg(unix)]
    {
        let o = replay(&[
            "--config",
            cfg.to_str().unwrap(),
            good.to_str().unwrap(),
            "-o",
            "/dev/null",
        ]);
        assert_eq!(o.status.code(), Some(1));
        // A symbolic link as `-o` is followed: the file it names gets the report.
        let real = dir.path().join("real.txt");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let o = replay(&[
            "--config",
            cfg.to_str().unwrap(),
            good.to_str().unwrap(),
            "-o",
            link.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1));
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(std::fs::read_to_string(&real).unwrap().contains("delete_x"));
    }
}

/// Issue 6 T6-9: `-o` over an existing report writes that file in place once the run ends
/// well: its mode (a `600` report stays private) and hard links are kept, and a failed run
/// still leaves it as it was.
#[cfg(unix)]
#[test]
fn existing_report_keeps_its_mode_and_links() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "cellguard.toml", CONFIG);
    let good = write(dir.path(), "good.jsonl", TRACE);
    let bad = write(dir.path(), "bad.jsonl", "not json\n");
    let report = dir.path().join("priv.txt");
    let link = dir.path().join("link.txt");
    for format in ["text", "json", "json-lines", "sarif", "html"] {
        std::fs::write(&report, "SECRET\n").unwrap();
        std::fs::set_permissions(&report, std::fs::Permissions::from_mode(0o600)).unwrap();
        let _ = std::fs::remove_file(&link);
        std::fs::hard_link(&report, &link).unwrap();
        let run = |trace: &str| {
            replay(&[
                "--config",
                &cfg,
                &good,
                trace,
                "-o",
                report.to_str().unwrap(),
                "--output-format",
                format,
            ])
        };
        assert_eq!(run(&bad).status.code(), Some(2), "{format}");
        assert_eq!(std::fs::read_to_string(&report).unwrap(), "SECRET\n");
        assert_eq!(run(&good).status.code(), Some(1), "{format}");
        let written = std::fs::read_to_string(&report).unwrap();
        assert!(written.contains("delete_x"), "{format}: {written}");
        let mode = std::fs::metadata(&report).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{format}");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), written, "{format}");
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 5, "{names:?}");
}

/// Issue 6 T5-18: an unusable temporary directory is named in the error.
#[cfg(unix)]
#[test]
fn unusable_tmpdir_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = std::path::PathBuf::from(write(dir.path(), "cellguard.toml", CONFIG));
    let good = std::path::PathBuf::from(write(dir.path(), "good.jsonl", TRACE));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .args([
            "replay",
            "--config",
            cfg.to_str().unwrap(),
            good.to_str().unwrap(),
        ])
        .args(["--output-format", "json"])
        .env("TMPDIR", "/nonexistent-cellguard-tmp")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent-cellguard-tmp"), "{err}");
    assert!(err.contains("TMPDIR"), "{err}");
}

/// Issue 6 T6-17: a reader that closes standard output early (`| head -c 100`) does not turn
/// the run green: the replay runs to its end and exits 1 because calls were blocked, in every
/// format (the run used to stop at the first failed write and exit 0).
#[test]
fn closed_stdout_keeps_the_exit_code() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "c.toml", CONFIG);
    // 20,000 blocked calls: every report is far larger than a pipe's buffer.
    let mut trace = String::from("{\"rec\":\"cell\",\"index\":0}\n");
    for i in 0..20_000 {
        trace.push_str(&format!(
            "{{\"rec\":\"call\",\"cell\":0,\"index\":{i},\"raw_key\":\"A.A.delete_{i}\",\"status\":\"ok\"}}\n"
        ));
    }
    let trace = write(dir.path(), "t.jsonl", &trace);
    for format in ["json-lines", "text", "json", "sarif", "html"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cellguard"))
            .args(["replay", "--config", &cfg, &trace, "--all-decisions"])
            .args(["--output-format", format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 100];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        // The read end is dropped here: the pipe is closed.
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Issue 6 T6-11: the block streaks are spooled (`text`, `json`, `sarif`) or kept bounded
/// (`html`) instead of kept in the engine, and still come out the same in every format: the
/// same (line, key, count) entries in the same order as `json-lines` writes them as they end.
/// Input: two traces alternating blocked keys, so streaks end by another key's block, by a
/// dispatched call and by the end of a trace.
#[test]
fn streaks_are_the_same_in_every_format() {
    let dir = "fixtures/replay/issue6/t6-11-alternating-streaks";
    let cfg = format!("{dir}/cellguard.toml");
    let trace = format!("{dir}/trace.jsonl");
    let run = |format: &str| {
        let out = replay(&["--config", &cfg, &trace, "--output-format", format]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        String::from_utf8(out.stdout).unwrap()
    };
    let key = |v: &Value| {
        (
            v["line"].as_u64().unwrap(),
            v["action_key"].as_str().unwrap().to_string(),
            v["count"].as_u64().unwrap(),
        )
    };
    let expected: Vec<(u64, String, u64)> = [
        (4, "S.S.bad_a", 3),
        (7, "S.S.bad_b", 3),
        (10, "S.S.bad_a", 3),
        (18, "S.S.bad_b", 6),
        (24, "S.S.bad_c", 3),
    ]
    .iter()
    .map(|(l, k, c)| (*l, k.to_string(), *c))
    .collect();

    let json: Value = serde_json::from_str(&run("json")).unwrap();
    let from_json: Vec<_> = json["block_streaks"]
        .as_array()
        .unwrap()
        .iter()
        .map(key)
        .collect();
    assert_eq!(from_json, expected);

    let from_lines: Vec<_> = run("json-lines")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|l| l.get("block_streak").map(key))
        .collect();
    assert_eq!(from_lines, expected);

    let text = run("text");
    let from_text: Vec<&str> = text
        .lines()
        .filter(|l| l.ends_with("(block streak)"))
        .collect();
    let want: Vec<String> = expected
        .iter()
        .map(|(line, k, c)| {
            let tag = if k == "S.S.bad_c" { " [#1]" } else { "" };
            format!("{trace}:{line}:{tag} `{k}` blocked {c} times in a row (block streak)")
        })
        .collect();
    assert_eq!(from_text, want);

    let sarif: Value = serde_json::from_str(&run("sarif")).unwrap();
    let from_sarif: Vec<_> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "block-streak")
        .map(|r| {
            (
                r["locations"][0]["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap(),
                r["properties"]["action_key"].as_str().unwrap().to_string(),
                r["properties"]["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(from_sarif, expected);
    // The streaks follow the decisions' results.
    let rules: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    let first = rules.iter().position(|r| *r == "block-streak").unwrap();
    assert!(rules[first..].iter().all(|r| *r == "block-streak"));
    assert_eq!(first, 21);

    let html = run("html");
    let table = html.split("<h2>Block streaks</h2>").nth(1).unwrap();
    let table = table.split("</table>").next().unwrap();
    let from_html: Vec<_> = table
        .split("<tr><td><code>")
        .skip(1)
        .map(|row| {
            let cells: Vec<&str> = row
                .split("<td>")
                .map(|c| {
                    c.trim_end_matches("</tr>")
                        .trim_end_matches("</td>")
                        .trim_start_matches("<code>")
                        .trim_end_matches("</code>")
                })
                .collect();
            (
                cells[1].parse().unwrap(),
                cells[2].to_string(),
                cells[3].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(from_html, expected);
}

/// Issue 6 T6-19: an unreached call says why: skipped by a block swallowed in its `try` body
/// (the cell goes on), its cell aborted by a block, or the rest of the cell treated as aborted
/// when the replay cannot place a call after a swallowed block; in `text` after `unreached`, in
/// the json `reason`, and in the SARIF message.
#[test]
fn unreached_calls_say_why() {
    let dir = "fixtures/replay/issue6/t6-19-unreached-reasons";
    let cfg = format!("{dir}/cellguard.toml");
    let trace = format!("{dir}/trace.jsonl");
    let out = replay(&["--config", &cfg, &trace]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let unreached: Vec<&str> = text.lines().filter(|l| l.contains("unreached (")).collect();
    let swallowed = "skipped: the block at line 3 raised out of the enclosing `try` (or `with suppress`) body, which swallowed it; the cell goes on after that statement";
    let aborted = "its cell was aborted by the block at line 7";
    let unplaced = "the block at line 10 was swallowed, but the replay cannot tell whether it skips this call: the rest of the cell is treated as aborted";
    assert_eq!(
        unreached,
        [
            format!("{trace}:4: cell 0, call 1: `Fs.Fs.backup` recorded ok, unreached ({swallowed}), outcome changes"),
            format!("{trace}:8: cell 1, call 1: `Fs.Fs.backup` recorded ok, unreached ({aborted}), outcome changes"),
            format!("{trace}:11: cell 2, call 1: `Fs.Fs.read` recorded ok, unreached ({unplaced}), outcome changes"),
            format!("{trace}:12: cell 2, call 2: `Fs.Fs.backup` recorded ok, unreached ({unplaced}), outcome changes"),
        ]
    );
    // No `reason:` line repeats it.
    assert_eq!(text.matches("    reason: ").count(), 4, "{text}");
    let out = replay(&["--config", &cfg, &trace, "--output-format", "sarif"]);
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let messages: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "unreached")
        .map(|r| r["message"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages[..2],
        [
            format!("`Fs.Fs.backup` is never reached: {swallowed}"),
            format!("`Fs.Fs.backup` is never reached: {aborted}"),
        ]
    );
}

/// Issue 6 T6-6: two projects' configs that both name a guardrail `g` are kept apart in the
/// merged report: each id is qualified by its config in the text totals and the SARIF rules.
#[test]
fn same_guardrail_id_in_two_configs_stays_apart() {
    let dir = "fixtures/replay/issue6/t6-06-same-id-two-configs";
    let (a, b) = (
        format!("{dir}/s1/trace.jsonl"),
        format!("{dir}/s2/trace.jsonl"),
    );
    let out = replay(&[&a, &b]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let per: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "Blocks per guardrail:")
        .skip(1)
        .take_while(|l| l.starts_with("  ") && !l.contains(".jsonl"))
        .collect();
    assert_eq!(
        per,
        [
            format!("  {dir}/s1/cellguard.toml:g  1"),
            format!("  {dir}/s2/cellguard.toml:g  1"),
        ]
    );
    let out = replay(&[&a, &b, "--output-format", "sarif"]);
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &sarif["runs"][0];
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .take(2)
        .collect();
    let ids = [
        format!("{dir}/s1/cellguard.toml:g"),
        format!("{dir}/s2/cellguard.toml:g"),
    ];
    assert_eq!(rules, ids);
    let results: Vec<&str> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(results, ids);
    let html = String::from_utf8(replay(&[&a, &b, "--output-format", "html"]).stdout).unwrap();
    assert!(html.contains(&format!(", config <code>{dir}/s2/cellguard.toml</code>")));
}

/// Issue 6 T6-8: chat conversations read from standard input (`-`) give one trace per
/// conversation, with the same decisions, counts and warnings as the same content read from a
/// file (only the trace names differ: `-#N` for `FILE#N`), for every shape of a file of
/// conversations and with the format detected or forced.
#[test]
fn chat_from_stdin_equals_chat_from_file() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "c.toml",
        "[[guardrails]]\nid = \"b\"\nkind = \"capability-boundary\"\nblock = [\"book_*\"]\n",
    );
    let conv = |n: u32| {
        format!(
            "[{{\"role\":\"user\",\"content\":\"hi {n}\"}},{{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{{\"id\":\"c1\",\"type\":\"function\",\"function\":{{\"name\":\"get_{n}\",\"arguments\":\"{{}}\"}}}},{{\"id\":\"c2\",\"type\":\"function\",\"function\":{{\"name\":\"book_{n}\",\"arguments\":\"{{\\\"x\\\": 1}}\"}}}}]}}]"
        )
    };
    let shapes = [
        ("list.json", format!("[{},\n{},\n{}]", conv(0), conv(1), conv(2))),
        ("lines.jsonl", format!("{}\n{}\n{}\n", conv(0), conv(1), conv(2))),
        (
            "tau.json",
            format!(
                "[{{\"task_id\": 4, \"traj\": {}}}, {{\"task_id\": 9, \"traj\": {}}}, {{\"task_id\": 1, \"traj\": {}}}]",
                conv(0),
                conv(1),
                conv(2)
            ),
        ),
    ];
    for (name, text) in &shapes {
        let file = write(dir.path(), name, text);
        for forced in [None, Some("openai-chat")] {
            let mut args = vec![
                "--config",
                cfg.as_str(),
                "--all-decisions",
                "--output-format",
                "json",
            ];
            if let Some(f) = forced {
                args.extend(["--format", f]);
            }
            let mut from_file = args.clone();
            from_file.push(&file);
            let mut from_stdin = args.clone();
            from_stdin.push("-");
            let a = replay(&from_file);
            let b = support::replay_stdin(&from_stdin, text.as_bytes());
            assert_eq!(a.status.code(), Some(1), "{name} {forced:?}");
            assert_eq!(b.status.code(), Some(1), "{name} {forced:?}");
            let a_text = String::from_utf8_lossy(&a.stdout).replace(&format!("{file}#"), "-#");
            let va: Value = serde_json::from_str(&a_text).unwrap();
            let vb: Value = serde_json::from_slice(&b.stdout).unwrap();
            assert_eq!(
                va["summary"]["traces"].as_u64(),
                Some(3),
                "{name} {forced:?}"
            );
            assert_eq!(va["summary"], vb["summary"], "{name} {forced:?}");
            assert_eq!(va["decisions"], vb["decisions"], "{name} {forced:?}");
            let names: Vec<&str> = vb["traces"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["trace"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["-#0", "-#1", "-#2"], "{name} {forced:?}");
        }
    }
}

/// Issue 6 T6-8: a wrong `--format` on standard input is an error (exit 2) naming the detected
/// format, as it is for a file, not a clean "0 calls" run.
#[test]
fn forced_format_misread_on_stdin_is_an_error() {
    let dir = "fixtures/replay/issue6/t4-13-forced-colony-on-native";
    let text = std::fs::read(support::root().join(dir).join("trace.jsonl")).unwrap();
    let cfg = format!("{dir}/cellguard.toml");
    let out = support::replay_stdin(&["--config", &cfg, "--format", "colony", "-"], &text);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error: -: read as colony (`--format colony`), the file gave no call or completion (7 records read, 2 accepted, 5 skipped), and its content is detected as native; check `--format`"),
        "{err}"
    );
}

/// Issue 6 T8-1: a composite's blocks name the composite and its member by their configured
/// ids (an anonymous member by its kind, never a position) in every format, and the
/// per-guardrail totals count a member's block for each composite around it.
#[test]
fn composite_ids_are_the_same_in_every_format() {
    let dir = "fixtures/replay/issue6/t8-01-composite-ids";
    let cfg = format!("{dir}/cellguard.toml");
    let trace = format!("{dir}/trace.jsonl");
    let run = |fmt: &str| {
        let out = replay(&[
            "--config",
            &cfg,
            "--on-block",
            "keep",
            &trace,
            "--output-format",
            fmt,
        ]);
        assert_eq!(out.status.code(), Some(1), "{fmt}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = run("text");
    assert!(
        text.contains("blocked by outer/capability-boundary,"),
        "{text}"
    );
    assert!(text.contains("blocked by outer/nest/deep,"), "{text}");
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        folded.contains("outer 2 outer/capability-boundary 1 outer/nest 1 outer/nest/deep 1"),
        "{text}"
    );
    let json: Value = serde_json::from_str(&run("json")).unwrap();
    let guardrails: Vec<&str> = json["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["guardrail"].as_str().unwrap())
        .collect();
    assert_eq!(guardrails, ["outer/capability-boundary", "outer/nest/deep"]);
    assert_eq!(
        json["summary"]["per_guardrail"],
        serde_json::json!({"outer": 2, "outer/capability-boundary": 1, "outer/nest": 1, "outer/nest/deep": 1})
    );
    let sarif: Value = serde_json::from_str(&run("sarif")).unwrap();
    let rules: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["outer/capability-boundary", "outer/nest/deep"]);
    let html = run("html");
    for want in [
        "<td><code>outer</code></td><td>2</td>",
        "<td><code>outer/capability-boundary</code></td><td>1</td>",
        "<td>blocked</td><td>outer/nest/deep</td>",
    ] {
        assert!(html.contains(want), "{want}");
    }
    assert!(!html.contains("outer/0") && !text.contains("outer/0"));
}

/// New-user N2-4: beyond the 1,000 warnings kept, the count of the others is reported: standard
/// error's last line says how many were not shown, `json` and `json-lines` carry
/// `warnings_not_listed`, SARIF a last note (before, standard error said "... and 950 more"
/// whatever the count, and no format said how many were dropped).
#[test]
fn warnings_beyond_those_kept_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "c.toml", CONFIG);
    // One warning per call: a time no reader can read.
    let mut text = String::new();
    for i in 0..1500 {
        text.push_str(&format!(
            "{{\"rec\":\"call\",\"raw_key\":\"A.A.get_{i}\",\"status\":\"ok\",\"start\":\"yesterday\"}}\n"
        ));
    }
    let trace = write(dir.path(), "t.jsonl", &text);
    let out = replay(&["--config", &cfg, &trace, "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 51, "{stderr}");
    assert_eq!(
        stderr.lines().last(),
        Some("cellguard: warning: ... and 1450 more")
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(1000));
    assert_eq!(v["warnings_not_listed"].as_u64(), Some(500));
    let out = replay(&["--config", &cfg, &trace, "--output-format", "json-lines"]);
    let lines = String::from_utf8_lossy(&out.stdout);
    assert_eq!(lines.matches("{\"warning\":").count(), 1000);
    assert!(lines.contains("{\"warnings_not_listed\":500}"), "{lines}");
    let out = replay(&["--config", &cfg, &trace, "--output-format", "sarif"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = v["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    assert_eq!(notes.len(), 1001);
    assert_eq!(
        notes[1000]["message"]["text"].as_str(),
        Some("... and 500 more warnings (not listed)")
    );
    // Up to the cap nothing is added.
    let short: String = text.lines().take(1000).map(|l| format!("{l}\n")).collect();
    let trace = write(dir.path(), "s.jsonl", &short);
    let out = replay(&["--config", &cfg, &trace, "--output-format", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(1000));
    assert!(v.get("warnings_not_listed").is_none());
    assert!(String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()
        .is_some_and(|l| l == "cellguard: warning: ... and 950 more"));
}
