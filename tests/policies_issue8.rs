//! Regression tests for the independent test findings of issue 8 (message/state policy
//! replay); each uses the tester's failing input, kept in fixtures/policies/issue8/.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn replay(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .current_dir(root())
        .arg("replay")
        .args(args)
        .output()
        .expect("run cellguard")
}

fn json_out(args: &[&str]) -> (i32, Value, String) {
    let mut a = args.to_vec();
    a.extend(["--output-format", "json"]);
    let out = replay(&a);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn text_out(args: &[&str]) -> (i32, String, String) {
    let out = replay(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

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
    let (code, v, err) = json_out(&["--config", &format!("{M}/stackA.toml"), &format!("{M}/bad.jsonl")]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["summary"]["records_read"], 13);
    assert_eq!(v["summary"]["records_skipped"], 4);
    let got: Vec<(u64, u64)> = v["inferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["messages"].as_u64().unwrap(), i["chars"].as_u64().unwrap()))
        .collect();
    // Inferences at lines 7, 8 (malformed usage, kept), 11 and 13.
    assert_eq!(got, vec![(2, 3), (2, 3), (3, 6), (4, 11)]);
    assert!(err.contains(&format!("{M}/bad.jsonl:7: field `usage` must be an object, found a string; usage treated as absent (the inference is kept)")), "{err}");
    assert!(err.contains(&format!("{M}/bad.jsonl:8: field `input_tokens` must be a non-negative integer, found -5; usage treated as absent (the inference is kept)")), "{err}");

    // The kept usage-less inference resets the recorded usage (reference §1.8): only
    // inference 1 compacts (previous usage 1000); inference 2 follows the estimate.
    let (_, v, _) = json_out(&["--config", &format!("{M}/usage.toml"), &format!("{M}/usage.jsonl")]);
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
    let (code, v, err) = json_out(&["--config", &format!("{M}/stackA.toml"), &format!("{M}/bad2.jsonl")]);
    assert_eq!(code, 0);
    let f = format!("{M}/bad2.jsonl");
    for w in [
        format!("{f}:1: field `content` must be a string, a list of text parts or null, found a number; counted as its JSON text `5`"),
        format!("{f}:6: field `content` must be a string, a list of text parts or null, found an object; counted as its JSON text `{{\"a\":1}}`"),
        format!("{f}:7: unknown inference `status` `boom` (expected ok or error); treated as ok"),
    ] {
        assert!(err.contains(&w), "missing `{w}` in {err}");
    }
    assert!(!err.contains(&format!("{f}:3:")), "a list of text parts is fine: {err}");
    let chars: Vec<u64> = v["inferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["chars"].as_u64().unwrap())
        .collect();
    assert_eq!(chars, vec![1, 6, 13]);

    let (code, v, err) = json_out(&["--config", &format!("{M}/state.toml"), &format!("{M}/st2.jsonl")]);
    assert_eq!(code, 1, "the append of [1,2] is vetoed");
    let s = format!("{M}/st2.jsonl");
    assert!(err.contains(&format!("{s}:5: a state record without `value`; the write is not checked")), "{err}");
    assert!(err.contains(&format!("{s}:6: unknown state `op` `delete` (expected set, append or mutate); the write is not checked")), "{err}");
    let lines: Vec<u64> = v["state_writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, vec![1]);
    assert_eq!(
        v["state_summary"],
        serde_json::json!({"writes": 5, "checked": 3, "vetoed": 1, "raised": 0, "transformed": 0})
    );
}
