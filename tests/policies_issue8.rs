//! Regression tests for the independent test findings of issue 8 (message/state policy
//! replay); each uses the tester's failing input, kept in fixtures/policies/issue8/.

#[path = "support/replay.rs"]
mod support;

use serde_json::Value;
use support::{replay, replay_json as json_out, replay_text as text_out};

const F: &str = "fixtures/policies/issue8";

/// F1/F2: `$`, `\Z`, lookaround, backreferences, `[[:alpha:]]` and `match = "fullmatch"`
/// decide exactly as Python's `re` does (each expected value checked with CPython 3.11).
#[test]
fn f1_f2_state_regex_has_python_semantics() {
    let cfg = format!("{F}/regex/cellguard.toml");
    let trace = format!("{F}/regex/trace.jsonl");
    let (code, v, _) = json_out(&["--config", &cfg, &trace]);
    assert_eq!(code, 1);
    let got: Vec<(u64, &str, &str)> = v["state_writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["line"].as_u64().unwrap(),
                w["outcome"].as_str().unwrap(),
                w["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                2,
                "would-raise",
                "\"ABC\\n\\n\" does not match /^[A-Z]{3}$/"
            ),
            (4, "would-raise", "\"b\" does not match /(?=a)a/"),
            (6, "would-raise", "\"a\\n\" does not match /a\\Z/"),
            (8, "would-raise", "\"ab\" does not match /(a)\\1/"),
            (10, "would-raise", "\"xa\" does not match /(?<!x)a/"),
            (11, "would-raise", "\"aa\" does not match /[[:alpha:]]/"),
            (
                14,
                "would-raise",
                "\"abc\" does not match /a|ab/ (re.fullmatch)"
            ),
        ]
    );
    assert_eq!(v["state_summary"]["checked"], 14);
    assert_eq!(v["state_summary"]["raised"], 7);
}

/// Patterns Python rejects stay config errors (exit 2) with file:line:col and Python's message.
#[test]
fn f2_patterns_python_rejects_are_located_config_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("(?<=a+)b", "look-behind requires fixed-width pattern"),
        ("a**", "multiple repeat at position 2"),
        ("\\\\e", "bad escape \\e at position 0"),
        ("[a", "unterminated character set at position 0"),
    ];
    for (pat, msg) in cases {
        let cfg = dir.path().join("c.toml");
        std::fs::write(
            &cfg,
            format!("[[policies]]\nkind = \"regex\"\nfield = \"f\"\npattern = \"{pat}\"\n"),
        )
        .unwrap();
        let trace = format!("{F}/regex/trace.jsonl");
        let cfg_s = cfg.display().to_string();
        let (code, _, err) = text_out(&["--config", &cfg_s, &trace]);
        assert_eq!(code, 2, "{pat}: {err}");
        let want = format!("{cfg_s}:4:11: invalid Python regex in `pattern`: {msg}");
        assert!(err.contains(&want), "{pat}: {err}");
    }
    let cfg = dir.path().join("m.toml");
    std::fs::write(
        &cfg,
        "[[policies]]\nkind = \"regex\"\nfield = \"f\"\npattern = \"a\"\nmatch = \"full\"\n",
    )
    .unwrap();
    let cfg_s = cfg.display().to_string();
    let (code, _, err) = text_out(&["--config", &cfg_s, &format!("{F}/regex/trace.jsonl")]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!(
            "{cfg_s}:5:9: unknown `match` `full` (expected one of: search, match, fullmatch)"
        )),
        "{err}"
    );
}

const M: &str = "fixtures/policies/issue8/malformed";

/// F4: a malformed `usage` keeps the inference (usage absent) and warns with file:line.
#[test]
fn f4_malformed_usage_keeps_the_inference() {
    let (code, v, err) = json_out(&[
        "--config",
        &format!("{M}/stackA.toml"),
        &format!("{M}/bad.jsonl"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["summary"]["records_read"], 13);
    // Line 3's lone surrogate escape is read as Python's json reads it (issue 6 R7/R8): the
    // message is kept with a warning, not skipped.
    assert_eq!(v["summary"]["records_skipped"], 3);
    let got: Vec<(u64, u64)> = v["inferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["messages"].as_u64().unwrap(),
                i["chars"].as_u64().unwrap(),
            )
        })
        .collect();
    // Inferences at lines 7, 8 (malformed usage, kept), 11 and 13; the line-3 message counts
    // (16 characters: `lone \ud800 surrogate` with the lone surrogate one character, as
    // Python's `len` counts it).
    assert_eq!(got, vec![(3, 19), (3, 19), (4, 22), (5, 27)]);
    assert!(err.contains(&format!("{M}/bad.jsonl:7: field `usage` must be an object, found a string; usage treated as absent (the inference is kept)")), "{err}");
    assert!(err.contains(&format!("{M}/bad.jsonl:8: field `input_tokens` must be a non-negative integer, found -5; usage treated as absent (the inference is kept)")), "{err}");

    // The kept usage-less inference resets the recorded usage (reference §1.8): only
    // inference 1 compacts (previous usage 1000); inference 2 follows the estimate.
    let (_, v, _) = json_out(&[
        "--config",
        &format!("{M}/usage.toml"),
        &format!("{M}/usage.jsonl"),
    ]);
    let summ: Vec<(u64, Value)> = v["inferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["chars"].as_u64().unwrap(), i["summarized"].clone()))
        .collect();
    assert_eq!(
        summ,
        vec![
            (2, serde_json::json!([])),
            (36, serde_json::json!([0, 1])),
            (40, serde_json::json!([]))
        ]
    );
}

/// F3: wrong-typed `content`, an unknown inference `status`, an unknown state `op` and a state
/// record without `value` are warned about at their line.
#[test]
fn f3_wrong_types_are_warned_about() {
    let (code, v, err) = json_out(&[
        "--config",
        &format!("{M}/stackA.toml"),
        &format!("{M}/bad2.jsonl"),
    ]);
    assert_eq!(code, 0);
    let f = format!("{M}/bad2.jsonl");
    for w in [
        format!("{f}:1: field `content` must be a string, a list of text parts or null, found a number; counted as its JSON text `5`"),
        format!("{f}:6: field `content` must be a string, a list of text parts or null, found an object; counted as its JSON text `{{\"a\":1}}`"),
        format!("{f}:7: unknown inference `status` `boom` (expected ok or error); treated as ok"),
    ] {
        assert!(err.contains(&w), "missing `{w}` in {err}");
    }
    assert!(
        !err.contains(&format!("{f}:3:")),
        "a list of text parts is fine: {err}"
    );
    let chars: Vec<u64> = v["inferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["chars"].as_u64().unwrap())
        .collect();
    assert_eq!(chars, vec![1, 6, 13]);

    let (code, v, err) = json_out(&[
        "--config",
        &format!("{M}/state.toml"),
        &format!("{M}/st2.jsonl"),
    ]);
    assert_eq!(code, 1, "the append of [1,2] is vetoed");
    let s = format!("{M}/st2.jsonl");
    assert!(
        err.contains(&format!(
            "{s}:5: a state record without `value`; the write is not checked"
        )),
        "{err}"
    );
    assert!(err.contains(&format!("{s}:6: unknown state `op` `delete` (expected set, append or mutate); the write is not checked")), "{err}");
    let lines: Vec<u64> = v["state_writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["line"].as_u64().unwrap())
        .collect();
    // Line 3 sets `1e400`, which reads as `inf` as in Python (issue 6 T5-2): out of the range
    // 0..100, so pyAgentic's `range` raises.
    assert_eq!(lines, vec![1, 3]);
    assert_eq!(
        v["state_summary"],
        serde_json::json!({"writes": 6, "checked": 4, "vetoed": 1, "raised": 1, "transformed": 0})
    );
}

/// F6: a `view = "context"` trace reports its recorded sizes (no policy effects) and the text
/// report no longer claims it has no message or inference records.
#[test]
fn f6_context_view_reports_recorded_sizes() {
    let cfg = format!("{M}/stackA.toml");
    let trace = format!("{F}/context-view/ctxview.jsonl");
    let (code, v, _) = json_out(&["--config", &cfg, &trace]);
    assert_eq!(code, 0);
    let got: Vec<(u64, u64, u64)> = v["inferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            assert_eq!(i["clipped"], serde_json::json!([]));
            assert_eq!(i["evicted"], serde_json::json!([]));
            (
                i["inference"].as_u64().unwrap(),
                i["messages"].as_u64().unwrap(),
                i["chars"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, vec![(0, 3, 33), (1, 4, 64)]);
    assert_eq!(
        v["contexts"],
        serde_json::json!([{"trace": trace, "inferences": 2, "peak_chars": 64, "final_chars": 64, "chars_removed": 0}])
    );
    let (_, text, _) = text_out(&["--config", &cfg, &trace]);
    assert!(!text.contains("No conversation"), "{text}");
    assert!(
        text.contains("message policies are not re-applied, its sizes are reported as recorded"),
        "{text}"
    );
    assert!(text.contains(&format!("  {trace}: 2 inferences, peak 64 chars, final 64 chars in 4 of 4 messages, 0 of 64 raw chars removed")), "{text}");
}

/// F7: every conversation of a file is listed in `contexts` (empty ones with 0 inferences),
/// and a file holding `[]` is an empty trace (warning, exit 0), like an empty file.
#[test]
fn f7_empty_conversations_are_listed_and_empty_list_is_not_an_error() {
    let cfg = format!("{M}/stackA.toml");
    let par = format!("{F}/empty/par.json");
    let (_, v, _) = json_out(&["--config", &cfg, &par]);
    assert_eq!(v["summary"]["traces"], 5);
    let got: Vec<(String, u64)> = v["contexts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["trace"].as_str().unwrap().to_string(),
                c["inferences"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = [3, 0, 0, 0, 0]
        .iter()
        .enumerate()
        .map(|(k, n)| (format!("{par}#{k}"), *n))
        .collect();
    assert_eq!(got, want);
    let (_, text, _) = text_out(&["--config", &cfg, &par]);
    assert!(text.contains("5 conversations, 3 inferences"), "{text}");

    let empty = format!("{F}/empty/emptyarr.json");
    let (code, v, err) = json_out(&["--config", &cfg, &empty]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("{empty}: empty list (no records)")),
        "{err}"
    );
    assert_eq!(v["summary"]["traces"], 1);
    assert_eq!(
        v["contexts"],
        serde_json::json!([{"trace": empty, "inferences": 0, "peak_chars": 0, "final_chars": 0, "chars_removed": 0}])
    );
}

/// F5: a compaction that folds only the previous summary is listed in the text report and
/// counted in the JSON (`compactions`), for recorded and simulated usage.
#[test]
fn f5_refolding_compaction_is_visible_in_text_and_json() {
    let d = format!("{F}/refold");
    for (cfg, trace, want, line) in [
        ("refold.toml", "refold.jsonl", [0u64, 1, 1], "refold.jsonl:6: inference 2: 3 messages, 37 chars (~9 tokens), raw log 6 chars\n    `compaction` compacted 1 messages (previous usage 1000 tokens > 100) into a placeholder summary of 33 chars; the summariser would read 44 chars\n"),
        ("simulated.toml", "simu.jsonl", [0, 1, 1], "simu.jsonl:8: inference 2: 2 messages, 35 chars (~8 tokens), raw log 24 chars\n    `compaction` compacted 1 messages (previous usage 108 tokens > 104) into a placeholder summary of 33 chars; the summariser would read 44 chars\n"),
    ] {
        let cfg = format!("{d}/{cfg}");
        let trace = format!("{d}/{trace}");
        let (_, v, _) = json_out(&["--config", &cfg, &trace]);
        let got: Vec<u64> = v["inferences"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["compactions"].as_u64().unwrap())
            .collect();
        assert_eq!(got, want, "{trace}");
        assert_eq!(v["inferences"][2]["summarized"], serde_json::json!([]), "{trace}");
        let (_, text, _) = text_out(&["--config", &cfg, &trace]);
        assert!(text.contains(&format!("{d}/{line}")), "{text}");
        assert!(text.contains("2 compactions (0 with a recorded summary)"), "{text}");
    }
}

/// F11 (documented choice): a recorded summary that comes after other messages is not used for
/// an earlier compaction; it is used by a later one (here inference 2) when the simulation
/// compacts again, else reported as unused.
#[test]
fn f11_recorded_summary_pairing() {
    let d = format!("{F}/summary");
    let cfg = format!("{d}/cellguard.toml");
    let next = format!("{d}/sumnext.jsonl");
    let (_, text, _) = text_out(&["--config", &cfg, &next]);
    assert!(text.contains("`compaction` compacted 2 messages (previous usage 1000 tokens > 100) into a placeholder summary of 34 chars; the summariser would read 22 chars"), "{text}");
    assert!(
        text.contains("1 compaction (0 with a recorded summary)"),
        "{text}"
    );
    assert!(
        text.contains("note: 1 recorded summaries were not used by any simulated compaction"),
        "{text}"
    );

    let used = format!("{d}/sumused.jsonl");
    let (_, v, _) = json_out(&["--config", &cfg, &used]);
    let got: Vec<(u64, Value)> = v["inferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["chars"].as_u64().unwrap(), i["summarized"].clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (2, serde_json::json!([])),
            (36, serde_json::json!([0, 1])),
            (39, serde_json::json!([2, 3]))
        ]
    );
    let (_, text, _) = text_out(&["--config", &cfg, &used]);
    assert!(text.contains("`compaction` compacted 3 messages (previous usage 1000 tokens > 100) into a recorded summary of 37 chars; the summariser would read 68 chars"), "{text}");
    assert!(!text.contains("were not used"), "{text}");
}

/// F10 nits: position lists sorted when two policies of a phase touch one inference; a lone
/// surrogate's JSON error says so; `max-chars = -3` names the 3; SARIF says "position" for one;
/// the HTML names a policy whose id is its kind once.
#[test]
fn f10_nits() {
    let n = format!("{F}/nits");
    let (_, v, _) = json_out(&[
        "--config",
        &format!("{n}/two-evictions.toml"),
        &format!("{n}/two-evictions.jsonl"),
    ]);
    let ev: Vec<Value> = v["inferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["evicted"].clone())
        .collect();
    assert_eq!(
        ev,
        vec![
            serde_json::json!([2]),
            serde_json::json!([4]),
            serde_json::json!([6]),
            serde_json::json!([2, 8]),
            serde_json::json!([2, 4, 10])
        ]
    );

    let (_, _, err) = text_out(&[
        "--config",
        &format!("{M}/stackA.toml"),
        &format!("{M}/bad.jsonl"),
    ]);
    assert!(err.contains(&format!("{M}/bad.jsonl:3: lone surrogate escape `\\ud800` is not Unicode text; kept as the private-use stand-in U+10F000 (one character, as in Python's json, which accepts it)")), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        "[[policies]]\nkind = \"tool-output-clip\"\nmax-chars = -3\n",
    )
    .unwrap();
    let cfg_s = cfg.display().to_string();
    let (code, _, err) = text_out(&["--config", &cfg_s, &format!("{M}/bad2.jsonl")]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("{cfg_s}:3:13: `max-chars` must not be negative, found -3 (pyAgentic would slice from the end and keep all but the last 3 code points)")), "{err}");

    // One orphan: a window of 3 keeps the result of c1 without its call (parallel calls
    // recorded as call, call, result, result).
    let cfg = dir.path().join("w.toml");
    std::fs::write(
        &cfg,
        "[[policies]]\nkind = \"sliding-window\"\nmax-messages = 3\n",
    )
    .unwrap();
    let trace = dir.path().join("t.jsonl");
    std::fs::write(
        &trace,
        concat!(
            r#"{"rec":"message","msg":{"kind":"user","content":"go"}}"#, "\n",
            r#"{"rec":"message","msg":{"kind":"tool_call","id":"c1","name":"a","arguments":"{}"}}"#, "\n",
            r#"{"rec":"message","msg":{"kind":"tool_call","id":"c2","name":"b","arguments":"{}"}}"#, "\n",
            r#"{"rec":"message","msg":{"kind":"tool_result","tool_call_id":"c1","name":"a","content":"first"}}"#, "\n",
            r#"{"rec":"message","msg":{"kind":"tool_result","tool_call_id":"c2","name":"b","content":"second"}}"#, "\n",
            r#"{"rec":"inference"}"#, "\n",
        ),
    )
    .unwrap();
    let (cfg_s, trace_s) = (cfg.display().to_string(), trace.display().to_string());
    let out = replay(&["--config", &cfg_s, &trace_s, "--output-format", "sarif"]);
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let texts: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "orphaned-pair")
        .map(|r| r["message"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        vec![format!("inference 0 of {trace_s} is sent with a message at position 3 whose tool call/result partner a cut removed; providers reject this request")]
    );

    let html = dir.path().join("r.html");
    let html_s = html.display().to_string();
    replay(&[
        "--config",
        &cfg_s,
        &trace_s,
        "--output-format",
        "html",
        "-o",
        &html_s,
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("Policies in order: <code>sliding-window</code> (compile time)."),
        "{page}"
    );
}

/// F8: a tool result answering no earlier tool call is noted (file:line, id), not counted as
/// orphaned. F9 (documented): an assistant message without tool calls is a message even when
/// its content is null; one with tool calls and empty content adds only its tool calls.
#[test]
fn f8_stray_results_are_noted_f9_empty_assistant_reply_counts() {
    let cfg = format!("{M}/stackA.toml");
    let oc = format!("{F}/openai/oc.json");
    let (code, v, _) = json_out(&["--config", &cfg, &oc]);
    assert_eq!(code, 0);
    let got: Vec<(u64, u64)> = v["inferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            assert_eq!(i["orphaned"], serde_json::json!([]));
            (
                i["messages"].as_u64().unwrap(),
                i["chars"].as_u64().unwrap(),
            )
        })
        .collect();
    // [R(x0) 11, U "part one\npart two" 17] / + call c1, R(c1) 2 / + the empty reply.
    assert_eq!(got, vec![(2, 28), (4, 30), (5, 30)]);
    let (_, text, _) = text_out(&["--config", &cfg, &oc]);
    assert!(text.contains(&format!("note: {oc}:2: tool result `x0` answers no earlier tool call: a stray result, which providers reject in every request that contains it (not made by a policy, so not counted as orphaned)")), "{text}");
    let par = format!("{F}/empty/par.json");
    let (_, text, _) = text_out(&["--config", &cfg, &par]);
    assert!(
        text.contains(&format!(
            "note: {par}:9: tool result `zz` answers no earlier tool call"
        )),
        "{text}"
    );
}
