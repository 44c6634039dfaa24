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
