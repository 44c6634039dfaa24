//! End-to-end tests of `cellguard check`: the built binary on fixtures and temporary projects.
//! Output formats are insta snapshots on `tests/fixtures/formats` (its `cellguard.toml` pins the
//! rule selection, so the snapshots only change when those rules or the formats change).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cellguard"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("CELLGUARD_OUTPUT_FORMAT")
        .env_remove("CELLGUARD_OUTPUT_FILE")
        .env_remove("NO_COLOR")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn cellguard");
    if let Some(bytes) = stdin {
        let mut si = child.stdin.take().unwrap();
        si.write_all(bytes).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

fn formats_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats")
}

fn fmt(format: &str) -> Output {
    run_in(
        &formats_dir(),
        &["check", "--output-format", format, "."],
        None,
    )
}

/// A temporary project with files; `files` are `(relative path, content)`.
fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    dir
}

fn check(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    run_in(dir, &all, None)
}

fn json(out: &Output) -> Vec<serde_json::Value> {
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", out.stdout, out.stderr))
}

fn codes(out: &Output) -> Vec<String> {
    json(out)
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

// ---------------------------------------------------------------- output formats (snapshots)

#[test]
fn format_text() {
    let out = fmt("text");
    assert_eq!(out.code, 1, "{}", out.stderr);
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn format_concise() {
    let out = fmt("concise");
    assert_eq!(out.code, 1);
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn format_json() {
    let out = fmt("json");
    assert_eq!(out.code, 1);
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn format_json_lines() {
    let out = fmt("json-lines");
    assert_eq!(out.code, 1);
    insta::assert_snapshot!(out.stdout);
    let lines: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, json(&fmt("json")));
}

#[test]
fn format_sarif() {
    let out = fmt("sarif");
    assert_eq!(out.code, 1);
    let mut v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["version"], "2.1.0");
    assert_eq!(v["runs"][0]["tool"]["driver"]["name"], "cellguard");
    // The rule table and rule indices follow the whole rule set; the results are snapshotted.
    let rules = v["runs"][0]["tool"]["driver"]["rules"].clone();
    let results = v["runs"][0]["results"].as_array_mut().unwrap();
    for r in results.iter_mut() {
        let idx = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[idx]["id"], r["ruleId"]);
        r.as_object_mut().unwrap().remove("ruleIndex");
    }
    insta::assert_json_snapshot!(results);
}

#[test]
fn format_github() {
    let out = fmt("github");
    assert_eq!(out.code, 1);
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn format_junit() {
    let out = fmt("junit");
    assert_eq!(out.code, 1);
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn statistics_text_and_json() {
    let out = run_in(&formats_dir(), &["check", "--statistics", "."], None);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        "3\tIMP001\tblocked-import\n1\tSYN001\tsyntax-error\nFound 4 errors.\n"
    );
    let out = run_in(
        &formats_dir(),
        &["check", "--statistics", "--output-format", "json", "."],
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v[0]["code"], "IMP001");
    assert_eq!(v[0]["count"], 3);
    assert_eq!(v[1]["name"], "syntax-error");
}

#[test]
fn output_is_deterministic_across_runs() {
    let first = fmt("json").stdout;
    for _ in 0..3 {
        assert_eq!(fmt("json").stdout, first);
    }
}

#[test]
fn color_always_and_never() {
    let out = run_in(
        &formats_dir(),
        &["check", "--color", "always", "cells/a.py"],
        None,
    );
    assert!(out.stdout.contains("\u{1b}["), "{}", out.stdout);
    let out = run_in(
        &formats_dir(),
        &["--color", "never", "check", "cells/a.py"],
        None,
    );
    assert!(!out.stdout.contains('\u{1b}'));
    // Not a terminal: auto is plain.
    let out = run_in(&formats_dir(), &["check", "cells/a.py"], None);
    assert!(!out.stdout.contains('\u{1b}'));
}

#[test]
fn output_file() {
    let dir = project(&[("a.py", "import os\n")]);
    let out = check(
        dir.path(),
        &["--output-format", "json", "-o", "report.json", "a.py"],
    );
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    let report = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    let v: Vec<serde_json::Value> = serde_json::from_str(&report).unwrap();
    assert!(v.iter().any(|d| d["code"] == "IMP001"));
}

// ---------------------------------------------------------------- exit codes

#[test]
fn exit_codes() {
    let dir = project(&[("clean.py", "x = 1\n"), ("bad.py", "import os\n")]);
    let out = check(dir.path(), &["clean.py"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "All checks passed!\n"));
    let out = check(dir.path(), &["bad.py"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.ends_with("error.\n") || out.stdout.contains("Found"),
        "{}",
        out.stdout
    );
    let out = check(dir.path(), &["--exit-zero", "bad.py"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("IMP001"));
    let out = check(dir.path(), &["--no-such-flag"]);
    assert_eq!(out.code, 2);
    let out = check(dir.path(), &["--output-format", "xml", "bad.py"]);
    assert_eq!(out.code, 2);
    let out = run_in(dir.path(), &["--help"], None);
    assert_eq!(out.code, 0);
}

#[test]
fn exit_zero_keeps_errors() {
    let dir = project(&[("bad.py", "import os\n")]);
    let out = check(dir.path(), &["--exit-zero", "bad.py", "missing.py"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stdout.contains("IMP001"));
    assert!(out.stderr.contains("missing.py"), "{}", out.stderr);
}

// ---------------------------------------------------------------- selection

#[test]
fn select_ignore_extend_select_by_code_prefix_and_name() {
    let dir = project(&[("a.py", "import os\nimport json\nx = (\n")]);
    let all = codes(&check(dir.path(), &["--output-format", "json", "a.py"]));
    assert!(all.contains(&"IMP001".to_string()) && all.contains(&"SYN001".to_string()));
    let only = codes(&check(
        dir.path(),
        &["--output-format", "json", "--select", "SYN", "a.py"],
    ));
    assert_eq!(only, vec!["SYN001"]);
    let out = codes(&check(
        dir.path(),
        &[
            "--output-format",
            "json",
            "--select",
            "SYN",
            "--extend-select",
            "blocked-import",
            "a.py",
        ],
    ));
    assert_eq!(out, vec!["IMP001", "SYN001"]);
    let out = codes(&check(
        dir.path(),
        &["--output-format", "json", "--ignore", "IMP,syn001", "a.py"],
    ));
    assert!(
        out.iter().all(|c| !c.starts_with("IMP") && c != "SYN001"),
        "{out:?}"
    );
    let out = codes(&check(
        dir.path(),
        &[
            "--output-format",
            "json",
            "--select",
            "IMP",
            "--ignore",
            "IMP001",
            "a.py",
        ],
    ));
    assert!(!out.contains(&"IMP001".to_string()) && out.iter().all(|c| c.starts_with("IMP")));
    let out = check(dir.path(), &["--select", "NOPE", "a.py"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("unknown rule selector `NOPE`"),
        "{}",
        out.stderr
    );
}

// ---------------------------------------------------------------- configuration

#[test]
fn closest_config_wins_end_to_end() {
    let dir = project(&[
        ("cellguard.toml", "[lint]\nselect = [\"IMP\"]\n"),
        ("a.py", "import os\nx = (\n"),
        (
            "sub/pyproject.toml",
            "[tool.cellguard.lint]\nselect = [\"SYN\"]\n",
        ),
        ("sub/b.py", "import os\nx = (\n"),
        ("sub/other/pyproject.toml", "[project]\nname = \"x\"\n"),
        ("sub/other/c.py", "import os\nx = (\n"),
    ]);
    let v = json(&check(dir.path(), &["--output-format", "json", "."]));
    let got: Vec<(String, String)> = v
        .iter()
        .map(|d| {
            (
                d["filename"].as_str().unwrap().to_string(),
                d["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = |f: &str, c: &str| (f.to_string(), c.to_string());
    assert!(got.contains(&want("a.py", "IMP001")), "{got:?}");
    assert!(!got.iter().any(|(f, c)| f == "a.py" && c == "SYN001"));
    assert!(got.contains(&want("sub/b.py", "SYN001")));
    assert!(!got
        .iter()
        .any(|(f, c)| f == "sub/b.py" && c.starts_with("IMP")));
    // A pyproject.toml without [tool.cellguard] is skipped: sub/pyproject.toml applies.
    assert!(got.contains(&want("sub/other/c.py", "SYN001")));
    assert!(!got
        .iter()
        .any(|(f, c)| f == "sub/other/c.py" && c.starts_with("IMP")));
}

#[test]
fn config_flag_applies_one_file_everywhere() {
    let dir = project(&[
        ("cellguard.toml", "[lint]\nselect = [\"IMP\"]\n"),
        ("only-syn.toml", "[lint]\nselect = [\"SYN\"]\n"),
        ("a.py", "import os\nx = (\n"),
    ]);
    let out = codes(&check(
        dir.path(),
        &[
            "--config",
            "only-syn.toml",
            "--output-format",
            "json",
            "a.py",
        ],
    ));
    assert_eq!(out, vec!["SYN001"]);
    let out = check(dir.path(), &["--config", "missing.toml", "a.py"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("missing.toml"), "{}", out.stderr);
}

fn config_error(config_name: &str, config: &str) -> Output {
    let dir = project(&[(config_name, config), ("a.py", "x = 1\n")]);
    let out = check(dir.path(), &["a.py"]);
    assert_eq!(
        out.code, 2,
        "stdout: {}\nstderr: {}",
        out.stdout, out.stderr
    );
    assert_eq!(out.stdout, "", "nothing checked, nothing claimed");
    out
}

#[test]
fn broken_toml_is_located() {
    let out = config_error(
        "cellguard.toml",
        "profile = \"strict\"\n[lint\nselect = []\n",
    );
    assert!(
        out.stderr.starts_with("error: cellguard.toml:2:"),
        "{}",
        out.stderr
    );
}

#[test]
fn unknown_key_is_located() {
    let out = config_error(
        "cellguard.toml",
        "profile = \"strict\"\n[lint]\nselectt = [\"API\"]\n",
    );
    assert!(
        out.stderr
            .contains("error: cellguard.toml:3:1: unknown field `selectt`"),
        "{}",
        out.stderr
    );
}

#[test]
fn unknown_key_in_pyproject_is_located() {
    let out = config_error(
        "pyproject.toml",
        "[project]\nname = \"x\"\n\n[tool.cellguard]\nprofil = \"colony\"\n",
    );
    assert!(
        out.stderr
            .contains("error: pyproject.toml:5:1: unknown field `profil`"),
        "{}",
        out.stderr
    );
}

#[test]
fn wrong_types_are_located() {
    let out = config_error("cellguard.toml", "[lint.shape]\nmax-actions = \"3\"\n");
    assert!(
        out.stderr.contains("cellguard.toml:2:15:"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("invalid type"), "{}", out.stderr);
    let out = config_error("cellguard.toml", "\nprofile = \"lenient\"\n");
    assert!(
        out.stderr.contains("cellguard.toml:2:11:"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("lenient"), "{}", out.stderr);
    let out = config_error("cellguard.toml", "[lint.shape]\nmax-lines = -4\n");
    assert!(
        out.stderr.contains("cellguard.toml:2:13:"),
        "{}",
        out.stderr
    );
}

#[test]
fn bad_selectors_are_located() {
    let out = config_error(
        "cellguard.toml",
        "[lint]\nselect = [\"API\"]\nignore = [\n  \"SHP001\",\n  \"XYZ9\",\n]\n",
    );
    assert!(
        out.stderr
            .contains("error: cellguard.toml:5:3: unknown rule selector `XYZ9`"),
        "{}",
        out.stderr
    );
}

#[test]
fn missing_kb_file_is_located() {
    let out = config_error(
        "cellguard.toml",
        "profile = \"strict\"\nknowledge-base = [\n  \"kb/actions.json\",\n]\n",
    );
    assert!(
        out.stderr.contains("error: cellguard.toml:3:3:") && out.stderr.contains("kb/actions.json"),
        "{}",
        out.stderr
    );
    let dir = project(&[("a.py", "x = 1\n")]);
    let out = check(dir.path(), &["--kb", "nope.json", "a.py"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("nope.json"), "{}", out.stderr);
}

#[test]
fn broken_kb_json_is_located_in_the_kb_file() {
    let dir = project(&[
        ("cellguard.toml", "knowledge-base = [\"kb.json\"]\n"),
        (
            "kb.json",
            "{\n  \"schema\": \"cellguard-kb/1\",\n  \"groups\": [\n}\n",
        ),
        ("a.py", "x = 1\n"),
    ]);
    let out = check(dir.path(), &["a.py"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("kb.json:4:"), "{}", out.stderr);
}

#[test]
fn broken_config_does_not_stop_files_under_other_configs() {
    let dir = project(&[
        ("good/a.py", "import os\n"),
        ("bad/cellguard.toml", "[lint]\nselect = [\"NOPE\"]\n"),
        ("bad/b.py", "import os\n"),
        ("bad/c.py", "import os\n"),
    ]);
    let out = check(dir.path(), &["--output-format", "concise", "."]);
    assert_eq!(out.code, 2);
    assert!(
        out.stdout.contains("good/a.py:1:8: IMP001"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("bad/"), "{}", out.stdout);
    // Reported once, not once per file.
    assert_eq!(
        out.stderr.matches("unknown rule selector").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("bad/cellguard.toml:2:11:"),
        "{}",
        out.stderr
    );
}

#[test]
fn config_warnings_are_printed_once() {
    let dir = project(&[
        (
            "cellguard.toml",
            "[lint.imports]\nallow = [\"json\", \"*\"]\nextend-allow = [\"os/path\"]\n",
        ),
        ("a.py", "import os\n"),
        ("b.py", "x = 1\n"),
    ]);
    let out = check(dir.path(), &["--select", "IMP001", "."]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.stderr,
        "warning: cellguard.toml:2:19: `*` in the import allowlist allows every module, including `os` and `subprocess`\n\
         warning: cellguard.toml:3:18: `os/path` in the import allowlist is not a module name (`a.b` or `a.*`); it matches no import\n"
    );
}

#[test]
fn extend_cycle_is_an_error() {
    let dir = project(&[
        ("cellguard.toml", "extend = \"base.toml\"\n"),
        ("base.toml", "extend = \"cellguard.toml\"\n"),
        ("a.py", "x = 1\n"),
    ]);
    let out = check(dir.path(), &["a.py"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("cycle"), "{}", out.stderr);
}

#[test]
fn show_settings_names_the_config_in_effect() {
    let dir = project(&[
        (
            "sub/pyproject.toml",
            "[tool.cellguard]\nprofile = \"colony\"\n",
        ),
        ("sub/a.py", "x = 1\n"),
    ]);
    let out = check(dir.path(), &["--show-settings", "sub/a.py"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("sub/pyproject.toml"), "{}", out.stdout);
    assert!(out.stdout.contains("profile = Colony"), "{}", out.stdout);
}

// ---------------------------------------------------------------- inputs

#[test]
fn jsonl_files_check_each_code_string() {
    // A dump of agent cells (the corpus's `cells.jsonl` shape) used to be read as one Python
    // cell, whose dict literals parse, and passed silently.
    let dir = project(&[
        ("cellguard.toml", "[lint]\nselect = [\"IMP\", \"SYN\"]\n"),
        (
            "cells.jsonl",
            "{\"id\": \"c0\", \"is_test\": false, \"code\": \"x = 1\"}\n\
             {\"id\": \"c1\", \"code\": \"import json\\nimport os\"}\n\
             {\"id\": \"c2\", \"code\": \"y = (\"}\n",
        ),
        (
            "answers.jsonl",
            "{\"id\": \"a\", \"ground_truth\": [\"cd(folder='x')\"]}\n",
        ),
    ]);
    let out = check(dir.path(), &["--output-format", "json", "cells.jsonl"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let v = json(&out);
    let got: Vec<(String, i64, i64, i64)> = v
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["location"]["row"].as_i64().unwrap(),
                d["location"]["column"].as_i64().unwrap(),
                d["cell"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("IMP003".to_string(), 2, 23, 2),
            ("IMP001".to_string(), 2, 43, 2),
            ("SYN001".to_string(), 3, 27, 3),
        ]
    );
    // A JSON Lines file without any `code` string has nothing to check, and says so.
    let out = check(dir.path(), &["--output-format", "concise", "answers.jsonl"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("answers.jsonl:1:1: SYN002"),
        "{}",
        out.stdout
    );
}

#[test]
fn stdin_uses_the_stdin_filename() {
    let dir = project(&[("docs/cellguard.toml", "[lint]\nselect = [\"IMP001\"]\n")]);
    let md = b"# Notes\n\n```python\nimport os\nx = (\n```\n";
    let out = run_in(
        dir.path(),
        &[
            "check",
            "--output-format",
            "json",
            "--stdin-filename",
            "docs/notes.md",
            "-",
        ],
        Some(md),
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let v = json(&out);
    // Config discovered from docs/ (only IMP001), Markdown extraction from the .md name.
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0]["filename"], "docs/notes.md");
    assert_eq!(v[0]["location"]["row"], 4);
    assert_eq!(v[0]["cell"], 1);
    // Without a name: `-`, one Python cell.
    let out = run_in(
        dir.path(),
        &["check", "--output-format", "concise", "-"],
        Some(b"import os\n"),
    );
    assert!(out.stdout.starts_with("-:1:8: IMP001"), "{}", out.stdout);
    // --stdin-filename alone reads stdin too.
    let out = run_in(
        dir.path(),
        &[
            "check",
            "--output-format",
            "concise",
            "--stdin-filename",
            "x.py",
        ],
        Some(b"import os\n"),
    );
    assert!(out.stdout.starts_with("x.py:1:8: IMP001"), "{}", out.stdout);
}

/// Issue 4, G10: a lone `\r` read from stdin ends a line as CPython reads it (the code after
/// `# comment\r` is checked, on row 2), and G25: the cell's own `# noqa` does not hide an SBX
/// finding (CG005 instead), exit 1.
#[test]
fn stdin_lone_cr_and_inline_noqa_cannot_hide_sandbox_findings() {
    let dir = project(&[]);
    let out = run_in(
        dir.path(),
        &["check", "--output-format", "concise", "-"],
        Some(b"x = 1  # note\ry = json.codecs  # noqa\n"),
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.starts_with("-:2:10: SBX005"), "{}", out.stdout);
    assert!(out.stdout.contains("-:2:18: CG005"), "{}", out.stdout);
}

#[test]
fn extract_flag_overrides_the_extension() {
    let dir = project(&[("cell.txt", "import os\n")]);
    let out = check(
        dir.path(),
        &["--extract", "python", "--output-format", "json", "cell.txt"],
    );
    assert!(
        codes(&out).contains(&"IMP001".to_string()),
        "{}",
        out.stdout
    );
    let out = check(dir.path(), &["--extract", "html", "cell.txt"]);
    assert_eq!(out.code, 2);
}

#[test]
fn invalid_utf8_is_a_located_warning_and_the_file_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.py"),
        b"x = 1\ny = '\xff\xfe'\nimport os\n",
    )
    .unwrap();
    let out = check(dir.path(), &["--output-format", "concise", "a.py"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("a.py:3:8: IMP001"), "{}", out.stdout);
    assert!(
        out.stderr.contains("warning: a.py:2:6: invalid UTF-8"),
        "{}",
        out.stderr
    );
}

#[test]
fn missing_and_dangling_inputs_are_errors_but_others_are_reported() {
    let dir = project(&[("a.py", "import os\n")]);
    #[cfg(unix)]
    std::os::unix::fs::symlink("nowhere.py", dir.path().join("dangling.py")).unwrap();
    let out = check(
        dir.path(),
        &[
            "--output-format",
            "concise",
            "a.py",
            "missing.py",
            "dangling.py",
        ],
    );
    assert_eq!(out.code, 2);
    assert!(out.stdout.contains("a.py:1:8: IMP001"), "{}", out.stdout);
    assert!(out.stderr.contains("error: missing.py:"), "{}", out.stderr);
    #[cfg(unix)]
    assert!(out.stderr.contains("error: dangling.py:"), "{}", out.stderr);
}

#[test]
fn unreadable_file_is_an_error_and_the_rest_is_reported() {
    // A directory named like a cell cannot be read as a file.
    let dir = project(&[("a.py", "import os\n")]);
    std::fs::create_dir(dir.path().join("cells.txt")).unwrap();
    let out = check(
        dir.path(),
        &["--output-format", "concise", "a.py", "cells.txt"],
    );
    // A directory given explicitly is walked (and has no checkable file): no error.
    assert_eq!(out.code, 1, "{}", out.stderr);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.path().join("locked.py");
        std::fs::write(&p, "x = 1\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
        if std::fs::read(&p).is_err() {
            // Not root: the file really is unreadable.
            let out = check(
                dir.path(),
                &["--output-format", "concise", "a.py", "locked.py"],
            );
            assert_eq!(out.code, 2);
            assert!(out.stdout.contains("a.py:1:8"), "{}", out.stdout);
            assert!(
                out.stderr.contains("locked.py: cannot read"),
                "{}",
                out.stderr
            );
        }
    }
}

#[test]
fn directory_without_checkable_files() {
    let dir = project(&[("notes.txt", "hello\n"), ("data.json", "{}\n")]);
    let out = check(dir.path(), &["."]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "warning: No Python or Markdown files found under the given path(s)\n"
    );
}

#[test]
fn empty_files_and_empty_fences() {
    let dir = project(&[
        ("empty.py", ""),
        ("empty.md", ""),
        ("fence.md", "```python\n```\n"),
    ]);
    let out = check(dir.path(), &["--output-format", "json", "."]);
    assert_ne!(out.code, 2, "{}", out.stderr);
    json(&out);
}

#[cfg(unix)]
#[test]
fn symlink_loops_and_symlinked_cells() {
    let dir = project(&[("real/a.py", "import os\n")]);
    std::os::unix::fs::symlink("..", dir.path().join("real/loop")).unwrap();
    std::os::unix::fs::symlink("real/a.py", dir.path().join("link.py")).unwrap();
    let out = check(dir.path(), &["--output-format", "concise", "."]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.contains("link.py:1:8: IMP001"), "{}", out.stdout);
    assert!(
        out.stdout.contains("real/a.py:1:8: IMP001"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.matches("IMP001").count(), 2, "{}", out.stdout);
}

#[test]
fn walk_honours_gitignore_and_default_excludes_but_not_for_explicit_files() {
    let dir = project(&[
        (".gitignore", "generated/\n"),
        ("generated/g.py", "import os\n"),
        ("node_modules/pkg/n.py", "import os\n"),
        (".venv/lib/v.py", "import os\n"),
        (".github/notes.md", "```python\nimport os\n```\n"),
        ("a.py", "import os\n"),
    ]);
    let out = check(dir.path(), &["--show-files"]);
    assert_eq!(out.stdout, ".github/notes.md\na.py\n", "{}", out.stderr);
    let out = check(
        dir.path(),
        &["--output-format", "concise", "generated/g.py"],
    );
    assert!(out.stdout.contains("generated/g.py:1:8"), "{}", out.stdout);
}

#[test]
fn large_and_deeply_nested_inputs_do_not_crash() {
    let big = "x = [1, 2, 3]\n".repeat(30_000) + "import os\n";
    let deep = format!("x = {}1{}\n", "(".repeat(20_000), ")".repeat(20_000));
    let one_line = format!("x = [{}]\n", "1, ".repeat(100_000));
    let dir = project(&[("big.py", &big), ("deep.py", &deep), ("long.py", &one_line)]);
    let out = check(dir.path(), &["--output-format", "json", "."]);
    assert_ne!(out.code, 2, "{}", out.stderr);
    let v = json(&out);
    assert!(v
        .iter()
        .any(|d| d["filename"] == "big.py" && d["location"]["row"] == 30_001));
    let out = check(dir.path(), &["long.py", "deep.py"]);
    assert!(out.stdout.lines().all(|l| l.chars().count() < 400));
}

#[test]
fn random_bytes_give_well_formed_json() {
    // One smoke test through the binary; the property test of the library is in src/render.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut bytes = Vec::new();
    for _ in 0..20_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.push((state >> 24) as u8);
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("noise.py"), &bytes).unwrap();
    std::fs::write(dir.path().join("noise.md"), &bytes).unwrap();
    for format in ["json", "sarif"] {
        let out = check(dir.path(), &["--output-format", format, "."]);
        assert_ne!(out.code, 2, "{}", out.stderr);
        serde_json::from_str::<serde_json::Value>(&out.stdout).unwrap();
    }
    let out = check(dir.path(), &["--output-format", "text", "."]);
    assert!(!out.stdout.contains('\u{1b}'));
}

// ---------------------------------------------------------------- the bundled example

fn example_output() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = run_in(root, &["check", "fixtures/example"], None);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stderr, "");
    out.stdout
}

/// The README shows the example's output; it must stay true. Regenerate the block with
/// `CELLGUARD_UPDATE_README=1 cargo test --test cli readme`.
#[test]
fn readme_shows_the_real_example_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme_path = root.join("README.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let begin = "<!-- example-output:begin -->\n```text\n";
    let end = "```\n<!-- example-output:end -->";
    let (Some(b), Some(e)) = (readme.find(begin), readme.find(end)) else {
        panic!("README.md lacks the example-output markers");
    };
    let shown = &readme[b + begin.len()..e];
    let actual = format!("$ cellguard check fixtures/example\n{}", example_output());
    if std::env::var_os("CELLGUARD_UPDATE_README").is_some() && shown != actual {
        let updated = format!("{}{}{}", &readme[..b + begin.len()], actual, &readme[e..]);
        std::fs::write(&readme_path, updated).unwrap();
        return;
    }
    assert!(
        shown == actual,
        "README.md's example output is stale; run `CELLGUARD_UPDATE_README=1 cargo test --test cli readme`\n--- README\n{shown}\n--- actual\n{actual}"
    );
}

/// docs/rules holds exactly the pages `cellguard rule --all --write-docs` generates from the
/// rule registry (the diagnostics' `url` links to them); regenerate with
/// `cargo run -- rule --all --write-docs docs/rules`.
#[test]
fn checked_in_rule_docs_are_up_to_date() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_in(
        tmp.path(),
        &["rule", "--all", "--write-docs", "pages"],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let list = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let generated = tmp.path().join("pages");
    let checked_in = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules");
    let stale = "docs/rules is out of date with the rule registry; run \
                 `cargo run -- rule --all --write-docs docs/rules`";
    assert_eq!(list(&generated), list(&checked_in), "{stale}");
    for name in list(&generated) {
        assert_eq!(
            std::fs::read_to_string(generated.join(&name)).unwrap(),
            std::fs::read_to_string(checked_in.join(&name)).unwrap(),
            "{name}: {stale}"
        );
    }
    // One page per rule, each the text of `cellguard rule CODE`.
    let page = std::fs::read_to_string(checked_in.join("blocked-import.md")).unwrap();
    let rule = run_in(tmp.path(), &["rule", "IMP001"], None);
    assert_eq!(rule.stdout.trim_end(), page.trim_end());
}

/// The JSON `url` of a finding is the rule's checked-in page (a `file://` URI of
/// docs/rules/<name>.md in this source tree), a configured `rule-docs-url` template, or `null`
/// when the template is empty.
#[test]
fn json_url_is_the_rule_doc_link() {
    let tmp = tempfile::tempdir().unwrap();
    let url = |dir: &Path| -> serde_json::Value {
        let out = run_in(
            dir,
            &["check", "--output-format", "json", "-"],
            Some(b"import os\n"),
        );
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        v[0]["url"].clone()
    };
    let default = url(tmp.path());
    let default = default.as_str().unwrap();
    assert!(default.starts_with("file:///"), "{default}");
    assert!(
        default.ends_with("/docs/rules/blocked-import.md"),
        "{default}"
    );
    std::fs::write(
        tmp.path().join("cellguard.toml"),
        "rule-docs-url = \"https://example.org/{code}/{name}\"\n",
    )
    .unwrap();
    assert_eq!(url(tmp.path()), "https://example.org/IMP001/blocked-import");
    std::fs::write(tmp.path().join("cellguard.toml"), "rule-docs-url = \"\"\n").unwrap();
    assert_eq!(url(tmp.path()), serde_json::Value::Null);
}
