//! Fixture tests of `cellguard replay`: every directory under `fixtures/replay/colony/` (Colony
//! conformance, colony-reference §7.5–7.6) and `fixtures/replay/tau-bench-airline/cases/` holds
//! a `cellguard.toml` (or `config.path` naming one), a trace (`trace.*`, or `trace.path` naming
//! one; paths relative to the case directory), optional extra arguments (`args`, one per line) and
//! `expected.json`: the exit code and the parts of the JSON report that must match exactly
//! (`summary`, `decisions` with `--all-decisions`, and `completions` / `block_streaks` when
//! present), or the error text on standard error for exit code 2. `trace.path` may name several
//! traces, one per line. A case with neither `cellguard.toml` nor `config.path` runs without
//! `--config` (each trace's config is discovered) and also pins which config each trace used
//! (`configs`: `[trace, config]` pairs from the report's `traces`). Cases under
//! `fixtures/replay/robustness/` also record the warnings printed on standard error (`warnings`,
//! one entry per line, the `cellguard: warning: ` prefix removed). A case whose `expected.json`
//! has a `traces` key also pins the report's per-trace entries (`traces`; kept when blessing).
//!
//! A case whose input is large holds `template.EXT` instead of its trace: the text with
//! `<<C*N>>` markers (the character `C` written `N` times), expanded into `trace.EXT` in a copy
//! of the case directory under the test's temporary directory.
//!
//! `CELLGUARD_BLESS=1 cargo test --test replay_fixtures` rewrites the expected files from the
//! current output; review the diff before committing.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn cases(root: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(root);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// Expands the `<<C*N>>` markers of a template (the character `C` written `N` times), so that a
/// case with a large input (a 100 KB first line) is committed as a few hundred bytes.
fn expand_template(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("<<") {
        out.push_str(&rest[..at]);
        let marker = &rest[at + 2..];
        let end = marker.find(">>").ok_or("unclosed `<<` in template")?;
        let (c, n) = marker[..end]
            .split_once('*')
            .ok_or("template marker is not `<<C*N>>`")?;
        let n: usize = n.parse().map_err(|e| format!("template count: {e}"))?;
        out.push_str(&c.repeat(n));
        rest = &marker[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A case with a `template.EXT` input runs in a copy of its directory under the test's temporary
/// directory (same relative path, so reports and messages name the same files), where the
/// template is expanded into `trace.EXT`. Returns the root to run from.
fn stage_template_case(dir: &Path, rel: &Path) -> Result<Option<PathBuf>, String> {
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    let is_template = |p: &PathBuf| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("template."))
    };
    if !entries.iter().any(is_template) {
        return Ok(None);
    }
    let stage = Path::new(env!("CARGO_TARGET_TMPDIR")).join("replay-fixtures");
    let to = stage.join(rel);
    std::fs::create_dir_all(&to).map_err(|e| e.to_string())?;
    for p in &entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if is_template(p) {
            let text = std::fs::read_to_string(p).map_err(|e| e.to_string())?;
            let ext = &name["template.".len()..];
            std::fs::write(to.join(format!("trace.{ext}")), expand_template(&text)?)
                .map_err(|e| e.to_string())?;
        } else if p.is_file() {
            std::fs::copy(p, to.join(name)).map_err(|e| e.to_string())?;
        }
    }
    Ok(Some(stage))
}

fn run_case_with(dir: &Path, with_warnings: bool) -> Result<(), String> {
    let src_root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rel = dir.strip_prefix(src_root).unwrap_or(dir);
    let staged = stage_template_case(dir, rel)?;
    let root: &Path = staged.as_deref().unwrap_or(src_root);
    let expected_path = dir.join("expected.json");
    let dir = &root.join(rel);
    let named = |file: &str| -> Option<PathBuf> {
        std::fs::read_to_string(dir.join(file))
            .ok()
            .map(|t| normalize(&rel.join(t.trim())))
    };
    let traces_rel: Vec<PathBuf> = match std::fs::read_to_string(dir.join("trace.path")) {
        Ok(t) => t
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| normalize(&rel.join(l)))
            .collect(),
        Err(_) => {
            let trace = std::fs::read_dir(dir)
                .map_err(|e| e.to_string())?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("trace.") && n != "trace.path")
                })
                .ok_or("no trace.* file")?;
            vec![rel.join(trace.file_name().unwrap_or_default())]
        }
    };
    let config_rel = named("config.path").or_else(|| {
        let c = rel.join("cellguard.toml");
        root.join(&c).is_file().then_some(c)
    });
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cellguard"));
    cmd.current_dir(root).arg("replay");
    if let Some(c) = &config_rel {
        cmd.arg("--config").arg(c);
    }
    cmd.args(&traces_rel)
        .args(["--output-format", "json", "--all-decisions"]);
    if let Ok(extra) = std::fs::read_to_string(dir.join("args")) {
        cmd.args(extra.lines().map(str::trim).filter(|l| !l.is_empty()));
    }
    // A case whose expected file has `traces` pins the report's per-trace entries too.
    let pins_traces = std::fs::read_to_string(&expected_path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|v| v.get("traces").is_some());
    let out = cmd.output().map_err(|e| e.to_string())?;
    let code = out.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let actual = if code == 2 {
        // The located message, without the CLI's `cellguard: error:` style prefix.
        let msg = stderr.trim();
        let msg = msg.find("fixtures/").map_or(msg, |i| &msg[i..]);
        json!({"exit": 2, "stderr": msg})
    } else {
        let report: Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("output is not JSON ({e}); stderr: {stderr}"))?;
        let mut a =
            json!({"exit": code, "summary": report["summary"], "decisions": report["decisions"]});
        for k in ["completions", "block_streaks"] {
            if let Some(v) = report.get(k) {
                a[k] = v.clone();
            }
        }
        if pins_traces {
            a["traces"] = report["traces"].clone();
        }
        if config_rel.is_none() {
            let pairs: Vec<Value> = report["traces"]
                .as_array()
                .map(|ts| {
                    ts.iter()
                        .map(|t| json!([t["trace"], t["config"]]))
                        .collect()
                })
                .unwrap_or_default();
            a["configs"] = Value::from(pairs);
        }
        if with_warnings {
            let warnings: Vec<Value> = stderr
                .lines()
                .filter_map(|l| l.strip_prefix("cellguard: warning: "))
                .map(|l| Value::from(l.find("fixtures/").map_or(l, |i| &l[i..])))
                .collect();
            a["warnings"] = Value::from(warnings);
        }
        a
    };
    if std::env::var_os("CELLGUARD_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&actual).map_err(|e| e.to_string())? + "\n";
        std::fs::write(&expected_path, text).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(&expected_path)
            .map_err(|e| format!("{}: {e}", expected_path.display()))?,
    )
    .map_err(|e| e.to_string())?;
    if actual != expected {
        return Err(format!(
            "mismatch\n--- expected\n{}\n--- actual\n{}",
            serde_json::to_string_pretty(&expected).unwrap_or_default(),
            serde_json::to_string_pretty(&actual).unwrap_or_default()
        ));
    }
    Ok(())
}

/// Resolves `..` components textually (the paths name files inside the repository).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn run_all(root: &str, at_least: usize) {
    run_all_with(root, at_least, false)
}

fn run_all_with(root: &str, at_least: usize, with_warnings: bool) {
    let dirs = cases(root);
    assert!(dirs.len() >= at_least, "{root}: only {} cases", dirs.len());
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| {
            run_case_with(d, with_warnings)
                .err()
                .map(|e| format!("{}: {e}", d.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn colony_conformance_fixtures() {
    run_all("fixtures/replay/colony", 16);
}

#[test]
fn tau_bench_fixtures() {
    run_all("fixtures/replay/tau-bench-airline/cases", 1);
}

/// Inputs that once broke the replay or lost records (empty files, bad UTF-8, malformed lines,
/// a bad conversation in a list, a forced wrong format, SWE-agent's last step): exit code,
/// report and warnings are pinned.
#[test]
fn robustness_fixtures() {
    run_all_with("fixtures/replay/robustness", 8, true);
}

/// Colony's other recording shapes (codegen-iterations endpoint output, its `{iterations}`
/// wrapper under another epoch, span exports with several agents) and the Anthropic Messages
/// and OpenAI Responses chat shapes.
#[test]
fn format_fixtures() {
    run_all_with("fixtures/replay/formats", 3, true);
}

/// The black-box findings of issue 6 (R1–R14 and round 3 T-cases, /work/notes/issue6-findings*.md), one case per
/// reproduction: exit code, report and warnings are pinned.
#[test]
fn issue6_findings_fixtures() {
    run_all_with("fixtures/replay/issue6", 1, true);
}

/// Issue 6 R4 re-test (cosmetic): the text summary counts completions whose verdict cannot be
/// replayed (no goals, no recorded reason) apart from those that would change.
#[test]
fn text_summary_counts_unknown_completions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = "fixtures/replay/issue6/r04-no-goals-no-reason";
    let out = Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .current_dir(root)
        .args(["replay", "--config"])
        .arg(format!("{dir}/cellguard.toml"))
        .arg(format!("{dir}/trace.jsonl"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Completions: 2 replayed, 0 would change, 1 unknown (not replayable)."),
        "{text}"
    );
}

/// Issue 6 T7: control characters from a trace (ANSI colour, an OSC title sequence, CR LF
/// followed by a forged report line) are escaped in the text and HTML reports.
#[test]
fn text_and_html_escape_control_characters() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = "fixtures/replay/issue6/t07-control-chars";
    for format in ["text", "html"] {
        let out = Command::new(env!("CARGO_BIN_EXE_cellguard"))
            .current_dir(root)
            .args([
                "replay",
                "--color",
                "never",
                "--output-format",
                format,
                "--config",
            ])
            .arg(format!("{dir}/cellguard.toml"))
            .arg(format!("{dir}/trace.jsonl"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}");
        let text = String::from_utf8_lossy(&out.stdout);
        for bad in ['\u{1b}', '\u{7}', '\r'] {
            assert!(!text.contains(bad), "{format}: {bad:?} written raw");
        }
        // HTML keeps a newline as it is (whitespace there, it cannot start a report line).
        assert!(
            text.contains(r"delete_\u{1b}[31mRED\u{1b}]0;pwned\u{7}x\u{d}"),
            "{format}: {text}"
        );
        if format == "text" {
            assert!(text.contains(r"\u{d}\u{a}fake.jsonl:9: all good"), "{text}");
        }
        if format == "text" {
            assert!(
                !text.lines().any(|l| l.starts_with("fake.jsonl")),
                "forged line"
            );
        }
    }
}

/// Issue 6 T4-7: without `--config`, each trace is replayed with its own project's config, and
/// the text report says which config each trace used.
#[test]
fn text_report_names_each_traces_config() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = "fixtures/replay/issue6/t4-07-config-per-trace";
    let out = Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .current_dir(root)
        .args(["replay", "--color", "never"])
        .arg(format!("{dir}/a/trace.jsonl"))
        .arg(format!("{dir}/b/trace.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    for p in ["a", "b"] {
        let line = format!("  {dir}/{p}/cellguard.toml: {dir}/{p}/trace.jsonl\n");
        assert!(
            text.contains("Configs:\n") && text.contains(&line),
            "{text}"
        );
    }
    let one = Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .current_dir(root)
        .args(["replay", "--color", "never"])
        .arg(format!("{dir}/b/trace.jsonl"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&one.stdout);
    assert!(
        text.contains(&format!("Config: {dir}/b/cellguard.toml.\n")),
        "{text}"
    );
}

/// State policies on values read from `Infinity`, `-Infinity` and `NaN`: the messages show the
/// tokens as Python's `json.dumps` writes them, never the reader's stand-in string, and the
/// checks treat them as the floats Python reads (fixture `t5-state-nonfinite-shown`).
#[test]
fn state_policies_show_nonfinite_values() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = "fixtures/replay/issue6/t5-state-nonfinite-shown";
    let run = |format: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_cellguard"))
            .current_dir(root)
            .args(["replay", "--output-format", format, "--config"])
            .arg(format!("{dir}/cellguard.toml"))
            .arg(format!("{dir}/trace.jsonl"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            !text.contains('\u{10F800}'),
            "{format}: stand-in shown: {text}"
        );
        text
    };
    let text = run("text");
    for want in [
        ":2: `temp` set Infinity: would raise by `temp-range` (range): Infinity is above the maximum 100",
        ":3: `temp` set -Infinity: would raise by `temp-range` (range): -Infinity is below the minimum 0",
        ":5: `name` set Infinity: would raise by `name-pattern` (regex): Infinity is not a string",
        ":6: `size` set -Infinity: would raise by `size-len` (max-length): -Infinity has no len()",
        ":7: `tags` set [1,NaN]: would raise by `tags-known` (one-of): element 1: NaN is not one of 1, 2",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    // `NaN` compares false both ways: no finding for line 4.
    assert!(!text.contains(":4: "), "{text}");
    let json: Value = serde_json::from_str(&run("json")).unwrap();
    let writes = json["state_writes"].as_array().unwrap();
    let lines: Vec<u64> = writes.iter().map(|w| w["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [2, 3, 5, 6, 7]);
    assert_eq!(writes[0]["value"], "Infinity");
    assert_eq!(writes[1]["value"], "-Infinity");
    assert_eq!(writes[4]["value"], json!([1, "NaN"]));
    assert_eq!(writes[4]["committed"], json!([1, "NaN"]));
    run("sarif");
    run("html");
}
