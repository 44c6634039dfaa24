//! End-to-end tests of the fix-related flags of `cellguard check` and of `cellguard rule`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn cellguard(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .current_dir(dir)
        .args(args)
        .env_remove("CELLGUARD_OUTPUT_FORMAT")
        .output()
        .expect("run cellguard")
}

fn cellguard_stdin(dir: &Path, args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .current_dir(dir)
        .args(args)
        .env_remove("CELLGUARD_OUTPUT_FORMAT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cellguard");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn setup(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn read(dir: &tempfile::TempDir, name: &str) -> String {
    std::fs::read_to_string(dir.path().join(name)).unwrap()
}

const CELL: &str = "import json\nimport os\nx = json.dumps({})  # noqa: IMP002\n";

#[test]
fn fix_applies_safe_fixes_and_exits_1_only_if_findings_remain() {
    let dir = setup(&[("a.py", CELL)]);
    let o = cellguard(dir.path(), &["check", "--fix", "a.py"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(read(&dir, "a.py"), "import os\nx = json.dumps({})\n");
    let out = stdout(&o);
    assert!(out.contains("IMP001"), "{out}");
    assert!(!out.contains("IMP003"), "{out}");
    // Unsafe fixes clear the rest; exit 0.
    let o = cellguard(dir.path(), &["check", "--fix", "--unsafe-fixes", "a.py"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(read(&dir, "a.py"), "x = json.dumps({})\n");
    // A second run changes nothing.
    let o = cellguard(dir.path(), &["check", "--fix", "--unsafe-fixes", "a.py"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(read(&dir, "a.py"), "x = json.dumps({})\n");
}

#[test]
fn diff_prints_a_unified_diff_and_writes_nothing() {
    let dir = setup(&[("a.py", CELL)]);
    let o = cellguard(dir.path(), &["check", "--diff", "a.py"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "--- a.py\n+++ a.py\n@@ -1,3 +1,2 @@\n-import json\n import os\n-x = json.dumps({})  # noqa: IMP002\n+x = json.dumps({})\n"
    );
    assert!(stderr(&o)
        .contains("Would fix 2 diagnostics (1 additional fix available with `--unsafe-fixes`)."));
    assert_eq!(read(&dir, "a.py"), CELL);
    // Nothing to fix: no diff, exit 0.
    let dir = setup(&[("b.py", "x = 1\n")]);
    let o = cellguard(dir.path(), &["check", "--diff", "b.py"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "");
}

#[test]
fn fix_only_exits_0_and_reports_nothing() {
    let dir = setup(&[("a.py", CELL)]);
    let o = cellguard(dir.path(), &["check", "--fix-only", "a.py"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "");
    assert_eq!(read(&dir, "a.py"), "import os\nx = json.dumps({})\n");
}

#[test]
fn show_fixes_lists_the_fixes_per_rule() {
    let dir = setup(&[("a.py", CELL)]);
    let o = cellguard(dir.path(), &["check", "--fix", "--show-fixes", "a.py"]);
    let out = stdout(&o);
    assert!(
        out.contains("Fixed 2 diagnostics:\n- a.py:\n    1 × CG005 (suppressed-security-rule)\n    1 × IMP003 (import-fails-at-runtime)\n"),
        "{out}"
    );
}

#[test]
fn report_shows_fix_diffs_markers_and_the_hint() {
    let dir = setup(&[("a.py", CELL)]);
    let o = cellguard(dir.path(), &["check", "a.py"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("ℹ Safe fix\n1   |-import json\n"), "{out}");
    assert!(out.contains("ℹ Unsafe fix\n"), "{out}");
    assert!(
        out.contains("[*] 2 fixable with the `--fix` option (1 hidden fix can be enabled with the `--unsafe-fixes` option)."),
        "{out}"
    );
    let o = cellguard(dir.path(), &["check", "--output-format", "json", "a.py"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let imp003 = v
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "IMP003")
        .unwrap();
    assert_eq!(imp003["fix"]["applicability"], "safe");
    assert_eq!(imp003["fix"]["edits"][0]["content"], "");
    assert_eq!(imp003["fix"]["edits"][0]["location"]["row"], 1);
    assert_eq!(imp003["fix"]["edits"][0]["end_location"]["row"], 2);
}

#[test]
fn stdin_fix_prints_the_fixed_text() {
    let dir = setup(&[]);
    let o = cellguard_stdin(dir.path(), &["check", "--fix", "-"], CELL);
    assert_eq!(stdout(&o), "import os\nx = json.dumps({})\n");
    assert!(stderr(&o).contains("IMP001"), "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn markdown_and_crlf_files_are_fixed_in_place() {
    let md = "# Notes\r\n\r\n```python\r\nimport json\r\nx = json.dumps(1)\r\n```\r\n";
    let dir = setup(&[("doc.md", md), ("c.py", "x = 1\r\nimport json\r\ny = 'é'")]);
    let o = cellguard(dir.path(), &["check", "--fix", "doc.md", "c.py"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(
        read(&dir, "doc.md"),
        "# Notes\r\n\r\n```python\r\nx = json.dumps(1)\r\n```\r\n"
    );
    assert_eq!(read(&dir, "c.py"), "x = 1\r\ny = 'é'");
}

#[test]
fn add_noqa_writes_suppressions_once() {
    let src = "import os\nfrom sys import (\n    argv,\n)\nx = '''\nimport os\n'''\n";
    // A trusted, human-written file: `IMP001` may be suppressed by comments (not by default).
    let dir = setup(&[
        ("a.py", src),
        (
            "cellguard.toml",
            "[lint]\nallow-inline-suppressions = [\"IMP001\"]\n",
        ),
    ]);
    let o = cellguard(dir.path(), &["check", "--add-noqa", "a.py"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("Added 2 noqa directives."),
        "{}",
        stderr(&o)
    );
    let once = read(&dir, "a.py");
    assert_eq!(
        once,
        "import os  # noqa: IMP001\nfrom sys import (\n    argv,\n)  # noqa: IMP001\nx = '''\nimport os\n'''\n"
    );
    let o = cellguard(dir.path(), &["check", "a.py"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    cellguard(dir.path(), &["check", "--add-noqa", "a.py"]);
    assert_eq!(read(&dir, "a.py"), once);
}

#[test]
fn invalid_utf8_files_are_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.py");
    std::fs::write(&path, b"import json\nx = '\xff'\n").unwrap();
    let o = cellguard(dir.path(), &["check", "--fix", "a.py"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("a.py:2:6: not fixed: the file is not valid UTF-8"));
    assert_eq!(std::fs::read(&path).unwrap(), b"import json\nx = '\xff'\n");
}

#[test]
fn rule_command_text_json_and_unknown() {
    let dir = setup(&[]);
    let o = cellguard(dir.path(), &["rule", "IMP003"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(
        out.starts_with("# import-fails-at-runtime (IMP003)\n"),
        "{out}"
    );
    assert!(out.contains("## Fix safety"), "{out}");
    let o = cellguard(dir.path(), &["rule", "--all", "--output-format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let all = v.as_array().unwrap();
    assert!(all.iter().any(|r| r["code"] == "CG001"));
    for r in all {
        for key in [
            "name",
            "code",
            "family",
            "summary",
            "severity",
            "fix_availability",
            "what",
            "why",
            "example",
            "fixed_example",
            "fix_safety",
            "options",
            "source",
        ] {
            assert!(r.get(key).is_some(), "{key} missing in {r}");
        }
    }
    let o = cellguard(dir.path(), &["rule", "IMP01"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean `IMP001` (blocked-import)?"),
        "{}",
        stderr(&o)
    );
}
