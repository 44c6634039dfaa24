//! End-to-end regression tests for the black-box findings of issue 5 (S1-S11) against
//! `cellguard server`: each test drives the built binary over stdio with the failing input.

#[path = "support/lsp.rs"]
mod lsp;

use lsp::{codes, complete_wait_in, file_uri, find, push_caps, start, uri, workspace, Client};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

fn quickfixes(actions: &Value) -> Vec<Value> {
    actions
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "quickfix")
        .cloned()
        .collect()
}

/// S3: a code action request carrying a diagnostic of an older version must not apply the
/// fix stored in its `data` at the old positions.
#[test]
fn s3_stale_diagnostic_fix_is_never_applied_at_old_positions() {
    let ws = workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "stale.py");
    let text = "x = 1\nrun(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\", count=1)\n";
    c.open(&u, "python", 1, text);
    let v1 = find(&c.diagnostics_at(&u, 1), "RUN001").clone();
    assert_eq!(v1["range"]["start"]["line"], 1);
    assert_eq!(v1["data"]["version"], 1);
    // Everything moves down one line.
    c.change(&u, 2, Some([0, 0, 0, 0]), "# new comment line\n");
    // 1. The v1 diagnostic as the client still holds it (before the next publish): its range
    //    now points at `x = 1`, where no RUN001 is. No quick fix, and no edit on line 1.
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": v1["range"], "context": {"diagnostics": [v1]}}),
    );
    let fixes = quickfixes(&actions);
    assert!(fixes.is_empty(), "stale fix offered: {fixes:?}");
    // 2. The same diagnostic with its range moved by the client (VS Code's marker tracking),
    //    `data` still of v1: the fix is rebuilt for v2, on line 2.
    let mut moved = v1.clone();
    moved["range"]["start"]["line"] = json!(2);
    moved["range"]["end"]["line"] = json!(2);
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": moved["range"], "context": {"diagnostics": [moved]}}),
    );
    let fixes = quickfixes(&actions);
    assert!(!fixes.is_empty(), "{actions}");
    for f in &fixes {
        let doc_edit = &f["edit"]["documentChanges"][0];
        assert_eq!(doc_edit["textDocument"]["version"], 2, "{f}");
        for e in doc_edit["edits"].as_array().unwrap() {
            assert_eq!(e["range"]["start"]["line"], 2, "{f}");
        }
    }
    let fix = &fixes[0];
    assert!(
        fix["title"].as_str().unwrap().ends_with("(RUN001)"),
        "{fix}"
    );
    assert_eq!(
        fix["edit"]["documentChanges"][0]["edits"][0],
        json!({"range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 0}}, "newText": "await "})
    );
    // 3. A diagnostic of the current version still uses its own data.
    let v2 = find(&c.diagnostics_at(&u, 2), "RUN001").clone();
    assert_eq!(v2["data"]["version"], 2);
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": v2["range"], "context": {"diagnostics": [v2]}}),
    );
    assert_eq!(quickfixes(&actions)[0]["edit"], fix["edit"]);
    // 4. A diagnostic whose data claims a future version is not trusted either.
    let mut future = v2.clone();
    future["data"]["version"] = json!(9);
    future["data"]["fix"]["edits"][0]["range"]["start"]["line"] = json!(0);
    future["data"]["fix"]["edits"][0]["range"]["end"]["line"] = json!(0);
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": future["range"], "context": {"diagnostics": [future]}}),
    );
    assert_eq!(quickfixes(&actions)[0]["edit"], fix["edit"]);
    assert_eq!(c.shutdown().code(), Some(0));
}

/// What VS Code with the shipped extension sends for settings the user never set
/// (`""` for strings without a default, `[]` for arrays), plus editor-only keys.
fn vscode_section() -> Value {
    json!({
        "path": "", "configuration": "", "knowledgeBase": [], "profile": "", "dialect": "",
        "select": [], "extendSelect": [], "ignore": [], "lint": {"enable": true},
        "fixAll": true,
        "codeAction": {"disableRuleComment": {"enable": true}, "fixViolation": {"enable": true}},
        "inlayHints": {"enable": true}, "trace": {"server": "off"}
    })
}

/// S9: empty values mean "not set": no error popup at start, and a settings change keeps the
/// project's rules.
#[test]
fn s9_vscode_empty_settings_are_unset_no_error_and_diagnostics_stay() {
    let ws = workspace();
    let mut c = Client::spawn(ws.path());
    c.configuration = vscode_section();
    let mut caps = push_caps();
    caps["workspace"]["configuration"] = json!(true);
    c.initialize(ws.path(), caps, json!({"settings": vscode_section()}));
    let u = uri(ws.path(), "v.py");
    c.open(&u, "python", 1, "import os\nx = 1\n");
    assert_eq!(codes(&c.diagnostics_at(&u, 1)), vec!["IMP001"]);
    // What the extension sends when the user changes any cellguard setting.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"cellguard": vscode_section()}}),
    );
    c.change(&u, 2, Some([1, 4, 1, 5]), "2");
    assert_eq!(codes(&c.diagnostics_at(&u, 2)), vec!["IMP001"]);
    c.drain_for(Duration::from_millis(300));
    let messages = c.take_notifications("window/showMessage");
    assert!(messages.is_empty(), "{messages:?}");
    // Every publication since the settings change kept IMP001.
    for p in c.take_notifications("textDocument/publishDiagnostics") {
        assert_eq!(
            codes(p["diagnostics"].as_array().unwrap()),
            vec!["IMP001"],
            "{p}"
        );
    }
    assert_eq!(c.shutdown().code(), Some(0));
}

/// Rule codes `cellguard check --output-format json FILE` reports, run in `cwd`.
fn cli_codes(cwd: &Path, file: &str) -> Vec<String> {
    let out = std::process::Command::new(lsp::binary())
        .args(["check", "--output-format", "json", file])
        .current_dir(cwd)
        .output()
        .unwrap();
    let v: Vec<Value> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let mut codes: Vec<String> = v
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect();
    codes.sort();
    codes
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn registered_globs(c: &Client) -> Vec<String> {
    let reg = c
        .server_requests
        .iter()
        .rfind(|r| r["method"] == "client/registerCapability")
        .cloned()
        .expect("watchers registered");
    reg["params"]["registrations"][0]["registerOptions"]["watchers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["globPattern"].as_str().map(str::to_string))
        .collect()
}

/// S4: config and knowledge-base files reached through `..` are watched under their real
/// paths, a change reported under the real path reloads them, and the diagnostics then equal
/// `cellguard check`.
#[test]
fn s4_config_and_kb_reached_through_dotdot_are_watched_and_reloaded() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/server");
    std::fs::create_dir_all(root.join("shared/kb")).unwrap();
    std::fs::create_dir_all(root.join("team/cells")).unwrap();
    std::fs::copy(fixtures.join("kb.json"), root.join("shared/kb/kb.json")).unwrap();
    std::fs::write(
        root.join("shared/base.toml"),
        "knowledge-base = [\"kb\"]\n[lint]\nignore = [\"IMP001\"]\n",
    )
    .unwrap();
    std::fs::write(
        root.join("team/cellguard.toml"),
        "extend = \"../shared/base.toml\"\n",
    )
    .unwrap();
    let text =
        "import os\nawait run(\"AgentPoolCapability.AgentPoolCapability.new_action\", count=1)\n";
    std::fs::write(root.join("team/cells/a.py"), text).unwrap();
    let (mut c, _) = start(root, push_caps(), Value::Null);
    let u = uri(root, "team/cells/a.py");
    c.open(&u, "python", 1, text);
    let first = sorted(codes(&c.diagnostics_at(&u, 1)));
    assert!(!first.contains(&"IMP001".to_string()), "{first:?}");
    assert!(!first.is_empty(), "new_action is unknown: {first:?}");
    assert_eq!(first, cli_codes(&root.join("team"), "cells/a.py"));
    // The watchers name real paths: no `..` left.
    c.drain_for(Duration::from_millis(300));
    let globs = registered_globs(&c);
    assert!(globs.iter().all(|g| !g.contains("/../")), "{globs:?}");
    let real_root = std::fs::canonicalize(root).unwrap();
    let base = real_root.join("shared/base.toml");
    assert!(
        globs.iter().any(|g| g == &base.to_string_lossy()
            || g == &root.join("shared/base.toml").to_string_lossy()),
        "{globs:?}"
    );
    assert!(
        globs.iter().any(|g| g.ends_with("/shared/kb/**")),
        "{globs:?}"
    );
    // 1. The extended config changes; the client reports its real path.
    std::fs::write(root.join("shared/base.toml"), "knowledge-base = [\"kb\"]\n").unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&root.join("shared/base.toml")), "type": 2}]}),
    );
    let p = c.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == u.as_str()
            && codes(p["diagnostics"].as_array().unwrap()).contains(&"IMP001".to_string())
    });
    let after_config = sorted(codes(p["diagnostics"].as_array().unwrap()));
    assert_eq!(after_config, cli_codes(&root.join("team"), "cells/a.py"));
    // 2. The knowledge base (a directory reached through `..`) learns `new_action`.
    let kb_path = root.join("shared/kb/kb.json");
    let kb = std::fs::read_to_string(&kb_path)
        .unwrap()
        .replace("spawn_agents", "new_action");
    std::fs::write(&kb_path, kb).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&kb_path), "type": 2}]}),
    );
    let p = c.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == u.as_str()
            && sorted(codes(p["diagnostics"].as_array().unwrap())) != after_config
    });
    let after_kb = sorted(codes(p["diagnostics"].as_array().unwrap()));
    assert_eq!(after_kb, cli_codes(&root.join("team"), "cells/a.py"));
    assert_eq!(after_kb, vec!["IMP001"]);
    assert_eq!(c.shutdown().code(), Some(0));
}

/// S1: a request whose method starts with `$/` gets MethodNotFound (LSP "$ Notifications and
/// Requests"); `$/` notifications are ignored silently and the session goes on.
#[test]
fn s1_dollar_requests_get_method_not_found() {
    let ws = tempfile::tempdir().unwrap();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    for method in ["$/customThing", "$/setTrace", "$/progress"] {
        let id = c.send_request(method, json!({}));
        let resp = c.response(id);
        assert_eq!(resp["error"]["code"], -32601, "{method}: {resp}");
    }
    c.notify("$/setTrace", json!({"value": "verbose"}));
    c.notify("$/customNotification", json!({}));
    let u = uri(ws.path(), "d.py");
    c.open(&u, "python", 1, "import os\n");
    assert_eq!(codes(&c.diagnostics_at(&u, 1)), vec!["IMP001"]);
    let stray: Vec<Value> = c
        .inbox
        .iter()
        .filter(|m| m.get("error").is_some())
        .cloned()
        .collect();
    assert!(stray.is_empty(), "notifications answered: {stray:?}");
    assert_eq!(c.shutdown().code(), Some(0));
}

/// S11: `exit` right after `initialized`, while the server's `workspace/configuration`
/// request is unanswered, ends the process at once (exit code 1: no `shutdown` came), not
/// after the server's 5 s wait for the client.
#[test]
fn s11_exit_right_after_initialized_exits_promptly_with_code_1() {
    let ws = tempfile::tempdir().unwrap();
    let mut c = Client::spawn(ws.path());
    let root_uri = file_uri(ws.path());
    let mut caps = push_caps();
    caps["workspace"]["configuration"] = json!(true);
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": root_uri, "capabilities": caps}),
    );
    c.notify("initialized", json!({}));
    c.notify("exit", Value::Null);
    // The server's `workspace/configuration` request is never answered here (nothing reads
    // it), and stdin stays open.
    let status = c
        .exit_status_within(Duration::from_secs(3))
        .expect("the server was still running 3 s after `exit`");
    assert_eq!(status.code(), Some(1));
}

/// S7: a rule *name* in a suppression comment (`ignore[unknown-action]`) hovers like a code.
#[test]
fn s7_hover_on_a_rule_name_in_a_suppression_comment() {
    let ws = tempfile::tempdir().unwrap();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "n.py");
    let text = "y = 2  # cellguard: ignore[unknown-action, relative-import]\n";
    c.open(&u, "python", 1, text);
    c.diagnostics_at(&u, 1);
    for (name, heading) in [
        ("unknown-action", "# unknown-action (API001)"),
        ("relative-import", "# relative-import (IMP002)"),
    ] {
        let start = text.find(name).unwrap() as u32;
        // On the first character, after the hyphen, and on the last character.
        for col in [
            start,
            start + name.find('-').unwrap() as u32 + 1,
            start + name.len() as u32 - 1,
        ] {
            let h = c.request(
                "textDocument/hover",
                json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": col}}),
            );
            let md = h["contents"]["value"].as_str().unwrap_or("").to_string();
            assert!(md.starts_with(heading), "{name} at {col}: {md}");
            assert_eq!(h["range"]["start"]["character"], start, "{h}");
            assert_eq!(
                h["range"]["end"]["character"],
                start + name.len() as u32,
                "{h}"
            );
        }
    }
    assert_eq!(c.shutdown().code(), Some(0));
}

fn inlay_labels(c: &mut Client, u: &str) -> Vec<String> {
    let hints = c.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": u}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}),
    );
    hints
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["label"].as_str().unwrap().to_string())
        .collect()
}

/// S8: an action inside a loop (or a comprehension, or a cell function called in a loop) makes
/// the count unbounded, as SHP002 defines it; the hint says so instead of a bounded count.
#[test]
fn s8_inlay_hint_for_an_action_in_a_loop_is_unbounded() {
    let ws = tempfile::tempdir().unwrap();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let cases = [
        ("for i in x:\n    await run(\"a.b.c\")\n", "actions ∞/3"),
        ("while True:\n    await run(\"a.b.c\")\n", "actions ∞/3"),
        ("r = [await run(\"a.b.c\") for i in x]\n", "actions ∞/3"),
        (
            "async def f():\n    await run(\"a.b.c\")\nfor i in x:\n    await f()\n",
            "actions ∞/3",
        ),
        (
            "await run(\"a.b.c\")\nfor i in x:\n    y = i\n",
            "actions 1/3",
        ),
    ];
    for (n, (text, want)) in cases.iter().enumerate() {
        let u = uri(ws.path(), &format!("l{n}.py"));
        c.open(&u, "python", 1, text);
        let diags = c.diagnostics_at(&u, 1);
        assert_eq!(inlay_labels(&mut c, &u), vec![want.to_string()], "{text}");
        // The hint agrees with the linter: unbounded exactly when SHP002 is reported.
        assert_eq!(
            codes(&diags).contains(&"SHP002".to_string()),
            want.contains('∞'),
            "{text}: {diags:?}"
        );
    }
    assert_eq!(c.shutdown().code(), Some(0));
}

/// S10: completion offers no key the linter flags: a per-process action (`Class.*.name`)
/// completes to its short key, and when that short key is ambiguous (two policies define the
/// action) no literal spells it in every process, so it is not offered at all.
#[test]
fn s10_completion_never_offers_a_key_the_linter_flags() {
    let (mut c, u, items, _ws) = complete_wait_in(
        "from colony import ActionPolicy, AgentCapability, action_executor\n\nclass PlannerPolicy(ActionPolicy):\n    @action_executor()\n    async def wait_for_next_event(self) -> dict:\n        \"\"\"Wait.\"\"\"\n\nclass OtherPolicy(ActionPolicy):\n    @action_executor()\n    async def wait_for_next_event(self) -> dict:\n        \"\"\"Wait too.\"\"\"\n\n    @action_executor()\n    async def wait_alone(self) -> dict:\n        \"\"\"Only here.\"\"\"\n\nclass Cap(AgentCapability):\n    @action_executor()\n    async def wait_for_it(self) -> None:\n        \"\"\"It.\"\"\"\n",
    );
    let mut inserted: Vec<String> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["textEdit"]["newText"].as_str().unwrap().to_string())
        .collect();
    inserted.sort();
    assert_eq!(
        inserted,
        vec!["Cap.Cap.wait_for_it", "wait_alone"],
        "{items}"
    );
    // Each offered key, written into the cell, draws no API finding.
    for key in &inserted {
        let text = format!("r = await run(\"{key}\")\n");
        let v = 2 + inserted.iter().position(|k| k == key).unwrap() as i64;
        c.change(&u, v, None, &text);
        let diags = c.diagnostics_at(&u, v);
        assert!(
            codes(&diags).iter().all(|code| !code.starts_with("API")),
            "{key}: {diags:?}"
        );
    }
    assert_eq!(c.shutdown().code(), Some(0));
}

/// `cellguard check` with `args` and `stdin` as standard input, run in `cwd`: (exit code,
/// standard output bytes).
fn cli_stdin(cwd: &Path, args: &[&str], stdin: &[u8]) -> (Option<i32>, Vec<u8>) {
    use std::io::Write;
    let mut child = std::process::Command::new(lsp::binary())
        .arg("check")
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.code(), out.stdout)
}

/// `cellguard check --output-format json` of `text` on standard input, named `name`:
/// (code, row, column, end row, end column) of each finding, sorted.
fn cli_findings(cwd: &Path, name: &str, text: &str) -> Vec<(String, u64, u64, u64, u64)> {
    let (_, out) = cli_stdin(
        cwd,
        &["--output-format", "json", "--stdin-filename", name, "-"],
        text.as_bytes(),
    );
    let v: Vec<Value> = serde_json::from_slice(&out)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out)));
    let mut f: Vec<_> = v
        .iter()
        .map(|d| {
            let n = |p: &Value, k: &str| p[k].as_u64().unwrap();
            (
                d["code"].as_str().unwrap().to_string(),
                n(&d["location"], "row"),
                n(&d["location"], "column"),
                n(&d["end_location"], "row"),
                n(&d["end_location"], "column"),
            )
        })
        .collect();
    f.sort();
    f
}

/// The server's diagnostics as the CLI's (code, 1-based row, 1-based column, ...) in
/// characters of the text *after* the byte order mark, the way the CLI counts: the
/// document is opened with UTF-32 positions, and the BOM's one character is taken off row 0.
fn as_cli_findings(diags: &[Value]) -> Vec<(String, u64, u64, u64, u64)> {
    let pos = |p: &Value| {
        let (l, c) = (
            p["line"].as_u64().unwrap(),
            p["character"].as_u64().unwrap(),
        );
        (l + 1, if l == 0 { c } else { c + 1 })
    };
    let mut f: Vec<_> = diags
        .iter()
        .map(|d| {
            let (r, c) = pos(&d["range"]["start"]);
            let (er, ec) = pos(&d["range"]["end"]);
            (d["code"].as_str().unwrap().to_string(), r, c, er, ec)
        })
        .collect();
    f.sort();
    f
}

/// Client capabilities of [`push_caps`] negotiating `encoding`.
fn caps_with_encoding(encoding: &str) -> Value {
    let mut caps = push_caps();
    caps["general"] = json!({"positionEncodings": [encoding]});
    caps
}

/// Applies LSP text edits (positions in `encoding`) to `text`, last edit first.
fn apply_edits(text: &str, edits: &[Value], encoding: &str) -> String {
    let offset = |p: &Value| -> usize {
        let (line, col) = (
            p["line"].as_u64().unwrap() as usize,
            p["character"].as_u64().unwrap() as usize,
        );
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        let mut units = 0;
        for (i, ch) in text[start..].char_indices() {
            if units >= col || ch == '\n' {
                return start + i;
            }
            units += match encoding {
                "utf-8" => ch.len_utf8(),
                "utf-16" => ch.len_utf16(),
                _ => 1,
            };
        }
        text.len()
    };
    let mut edits: Vec<&Value> = edits.iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse(offset(&e["range"]["start"])));
    let mut out = text.to_string();
    for e in edits {
        let (a, b) = (offset(&e["range"]["start"]), offset(&e["range"]["end"]));
        out.replace_range(a..b, e["newText"].as_str().unwrap());
    }
    out
}

/// S5: a document starting with a byte order mark gets the CLI's diagnostics (no SYN001 for
/// the BOM), at positions that count the BOM as the one character it is, in every encoding;
/// Markdown too, and after incremental edits next to and of the BOM.
#[test]
fn s5_bom_document_gets_the_clis_diagnostics_in_every_encoding() {
    let ws = lsp::empty_workspace();
    let py = "\u{feff}import os\nx = 1 # 😀\nimport sys\n";
    let md = "\u{feff}# Title 😀\n\n```python\nimport os\n```\n";
    // UTF-32: columns are characters, so the CLI's columns shifted by the BOM on row 0.
    let (mut c, _) = start(ws.path(), caps_with_encoding("utf-32"), Value::Null);
    for (name, lang, text) in [("bom.py", "python", py), ("bom.md", "markdown", md)] {
        let u = uri(ws.path(), name);
        c.open(&u, lang, 1, text);
        let diags = c.diagnostics_at(&u, 1);
        assert!(!codes(&diags).contains(&"SYN001".to_string()), "{diags:?}");
        assert!(codes(&diags).contains(&"IMP001".to_string()), "{diags:?}");
        assert_eq!(
            as_cli_findings(&diags),
            cli_findings(ws.path(), name, text),
            "{name}"
        );
    }
    drop(c);
    // `os` on row 0 starts after the BOM (3 bytes / 1 UTF-16 unit) and `import `.
    for (encoding, os_col) in [("utf-8", 10), ("utf-16", 8), ("utf-32", 8)] {
        let (mut c, init) = start(ws.path(), caps_with_encoding(encoding), Value::Null);
        assert_eq!(init["capabilities"]["positionEncoding"], encoding);
        let u = uri(ws.path(), "bom.py");
        c.open(&u, "python", 1, py);
        let diags = c.diagnostics_at(&u, 1);
        let first = find(&diags, "IMP001");
        assert_eq!(
            first["range"],
            json!({"start": {"line": 0, "character": os_col}, "end": {"line": 0, "character": os_col + 2}}),
            "{encoding}"
        );
        // An insertion right after the BOM (incremental re-parse of the text after it) and
        // then the BOM deleted and typed again: always a fresh open's diagnostics.
        let bom_width = if encoding == "utf-8" { 3 } else { 1 };
        c.change(&u, 2, Some([0, bom_width, 0, bom_width]), "y = 2\n");
        let after_insert = c.diagnostics_at(&u, 2);
        let text2 = format!("\u{feff}y = 2\n{}", &py[3..]);
        c.change(&u, 3, Some([0, 0, 0, bom_width]), "");
        let after_delete = c.diagnostics_at(&u, 3);
        c.change(&u, 4, Some([0, 0, 0, 0]), "\u{feff}");
        let after_retype = c.diagnostics_at(&u, 4);
        drop(c);
        let (mut fresh, _) = start(ws.path(), caps_with_encoding(encoding), Value::Null);
        for (i, (text, got)) in [
            (text2.clone(), after_insert),
            (text2[3..].to_string(), after_delete),
            (text2.clone(), after_retype),
        ]
        .into_iter()
        .enumerate()
        {
            let u2 = uri(ws.path(), &format!("fresh{i}.py"));
            fresh.open(&u2, "python", 1, &text);
            let want = fresh.diagnostics_at(&u2, 1);
            let ranges = |d: &[Value]| -> Vec<(Value, Value)> {
                d.iter()
                    .map(|x| (x["code"].clone(), x["range"].clone()))
                    .collect()
            };
            assert_eq!(ranges(&got), ranges(&want), "{encoding} step {i}");
            assert!(!codes(&got).contains(&"SYN001".to_string()), "{got:?}");
        }
    }
}

/// S5: the IMP003 quick fix and `source.fixAll` on a document starting with a byte order mark
/// remove the whole import line and keep the BOM, giving `cellguard check --fix -`'s output,
/// which (side note of S5) keeps the BOM on standard input as it does for a file.
#[test]
fn s5_bom_fixes_keep_the_bom_and_equal_check_fix() {
    let ws = lsp::empty_workspace();
    std::fs::write(ws.path().join("cellguard.toml"), "profile = \"colony\"\n").unwrap();
    let text = "\u{feff}import json\r\nx = json.dumps({})\r\n";
    let expected = "\u{feff}x = json.dumps({})\r\n";
    // The CLI: stdin and file give the same bytes, BOM kept.
    let (_, stdout) = cli_stdin(
        ws.path(),
        &["--fix", "--stdin-filename", "c.py", "-"],
        text.as_bytes(),
    );
    assert_eq!(String::from_utf8(stdout).unwrap(), expected);
    let (_, stdout) = cli_stdin(
        ws.path(),
        &["--fix-only", "--stdin-filename", "c.py", "-"],
        text.as_bytes(),
    );
    assert_eq!(String::from_utf8(stdout).unwrap(), expected);
    std::fs::write(ws.path().join("c.py"), text).unwrap();
    cli_stdin(ws.path(), &["--fix", "c.py"], b"");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("c.py")).unwrap(),
        expected
    );
    for encoding in ["utf-8", "utf-16", "utf-32"] {
        let (mut c, _) = start(ws.path(), caps_with_encoding(encoding), Value::Null);
        let u = uri(ws.path(), "c.py");
        c.open(&u, "python", 1, text);
        let diags = c.diagnostics_at(&u, 1);
        assert!(!codes(&diags).contains(&"SYN001".to_string()), "{diags:?}");
        let imp = find(&diags, "IMP003").clone();
        let actions = c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": u}, "range": imp["range"], "context": {"diagnostics": [imp]}}),
        );
        let fix = quickfixes(&actions)
            .into_iter()
            .find(|a| a["title"].as_str().unwrap().contains("IMP003") && a["edit"].is_object())
            .unwrap_or_else(|| panic!("no IMP003 fix: {actions}"));
        let edits = fix["edit"]["documentChanges"][0]["edits"]
            .as_array()
            .unwrap();
        assert_eq!(apply_edits(text, edits, encoding), expected, "{encoding}");
        let all = c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": u}, "range": imp["range"],
                   "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        );
        let edits = all[0]["edit"]["documentChanges"][0]["edits"]
            .as_array()
            .unwrap_or_else(|| panic!("{all}"));
        assert_eq!(apply_edits(text, edits, encoding), expected, "{encoding}");
    }
}

/// The `url` of each finding of `cellguard check --output-format json` on `text` (standard
/// input named `name`, run in `cwd`), by code.
fn cli_urls(cwd: &Path, name: &str, text: &str) -> Vec<(String, Value)> {
    let (_, out) = cli_stdin(
        cwd,
        &["--output-format", "json", "--stdin-filename", name, "-"],
        text.as_bytes(),
    );
    let v: Vec<Value> = serde_json::from_slice(&out).unwrap();
    let mut urls: Vec<(String, Value)> = v
        .iter()
        .map(|d| (d["code"].as_str().unwrap().to_string(), d["url"].clone()))
        .collect();
    urls.sort_by(|a, b| a.0.cmp(&b.0));
    urls
}

/// The server's `codeDescription.href` of each diagnostic by code (`null` when absent).
fn server_urls(diags: &[Value]) -> Vec<(String, Value)> {
    let mut urls: Vec<(String, Value)> = diags
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d.get("codeDescription")
                    .map_or(Value::Null, |c| c["href"].clone()),
            )
        })
        .collect();
    urls.sort_by(|a, b| a.0.cmp(&b.0));
    urls
}

/// Decodes the `%XX` escapes of a `file://` URI's path.
fn file_uri_path(uri: &str) -> std::path::PathBuf {
    let raw = uri.strip_prefix("file://").unwrap().as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' {
            out.push(
                u8::from_str_radix(std::str::from_utf8(&raw[i + 1..i + 3]).unwrap(), 16).unwrap(),
            );
            i += 3;
        } else {
            out.push(raw[i]);
            i += 1;
        }
    }
    std::path::PathBuf::from(String::from_utf8(out).unwrap())
}

/// S6: the server's `codeDescription.href` and the CLI's JSON `url` are one link: by default
/// the rule's checked-in page docs/rules/<name>.md (a `file://` URI of an existing file), else
/// the configured `rule-docs-url` template (config file or the editor's `ruleDocsUrl`), and no
/// link at all when the template is empty.
#[test]
fn s6_rule_doc_links_agree_between_cli_and_server_and_resolve() {
    let text = "import os\nx = 1\n";
    // Default: the page in the source tree.
    let ws = lsp::empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "a.py");
    c.open(&u, "python", 1, text);
    let server = server_urls(&c.diagnostics_at(&u, 1));
    assert_eq!(server, cli_urls(ws.path(), "a.py", text));
    let (code, url) = &server[0];
    assert_eq!(code, "IMP001");
    let url = url.as_str().unwrap();
    let page = file_uri_path(url);
    assert!(page.ends_with("docs/rules/blocked-import.md"), "{url}");
    let doc = std::fs::read_to_string(&page).unwrap();
    assert!(doc.starts_with("# blocked-import (IMP001)\n"), "{doc}");
    drop(c);
    // A template in the config file.
    let ws = lsp::empty_workspace();
    std::fs::write(
        ws.path().join("cellguard.toml"),
        "rule-docs-url = \"https://example.org/r/{name}.md#{code}\"\n",
    )
    .unwrap();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "a.py");
    c.open(&u, "python", 1, text);
    let server = server_urls(&c.diagnostics_at(&u, 1));
    let want = vec![(
        "IMP001".to_string(),
        json!("https://example.org/r/blocked-import.md#IMP001"),
    )];
    assert_eq!(server, want);
    assert_eq!(cli_urls(ws.path(), "a.py", text), want);
    // The rule hover of a suppression comment links the same page.
    c.change(&u, 2, None, "import os  # cellguard: ignore[API001]\n");
    c.diagnostics_at(&u, 2);
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 33}}),
    );
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("(https://example.org/r/unknown-action.md#API001)"),
        "{hover}"
    );
    drop(c);
    // The editor setting wins over the file; an empty template in the file turns links off.
    let (mut c, _) = start(
        ws.path(),
        push_caps(),
        json!({"settings": {"ruleDocsUrl": "https://editor.example/{code}"}}),
    );
    c.open(&u, "python", 1, text);
    assert_eq!(
        server_urls(&c.diagnostics_at(&u, 1)),
        vec![("IMP001".to_string(), json!("https://editor.example/IMP001"))]
    );
    drop(c);
    std::fs::write(ws.path().join("cellguard.toml"), "rule-docs-url = \"\"\n").unwrap();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    c.open(&u, "python", 1, text);
    let diags = c.diagnostics_at(&u, 1);
    assert!(diags[0].get("codeDescription").is_none(), "{diags:?}");
    assert_eq!(
        cli_urls(ws.path(), "a.py", text),
        vec![("IMP001".to_string(), Value::Null)]
    );
}

/// A server whose lints of versions after a document's first spend `delay_ms` between the
/// parse and the rules (the test hook standing in for the rules of a multi-megabyte file),
/// initialized in `root` with push diagnostics.
fn start_with_slow_rules(root: &Path, delay_ms: u64) -> Client {
    let delay = delay_ms.to_string();
    let mut c = Client::spawn_with_env(root, &[("CELLGUARD_SERVER_RULES_DELAY_MS", &delay)]);
    c.initialize(root, push_caps(), Value::Null);
    c
}

/// S2: while the lint of the current text runs (here it cannot finish during the test),
/// hover, completion, definition, inlay hints and a code action request without diagnostics
/// are all answered, from the current text (they see what the edit added), before the
/// diagnostics of that edit are published.
#[test]
fn s2_requests_are_answered_from_the_current_text_without_waiting_for_the_lint() {
    let ws = workspace();
    let mut c = start_with_slow_rules(ws.path(), 600_000);
    let u = uri(ws.path(), "big.py");
    c.open(&u, "python", 1, "x = 1\n");
    assert!(c.diagnostics_at(&u, 1).is_empty());
    let added = "s = await run(\"get_agent_status\", agent_ids=[])\n\
                 for i in x:\n    await run(\"spawn_agents\", count=1)\n\
                 t = await run(\"Agent";
    c.change(&u, 2, Some([1, 0, 1, 0]), added);
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 1, "character": 20}}),
    );
    assert!(
        hover["contents"]["value"].as_str().unwrap_or("").contains(
            "resolves to the canonical key `AgentPoolCapability.AgentPoolCapability.get_agent_status`"
        ),
        "{hover}"
    );
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": u}, "position": {"line": 4, "character": 20}}),
    );
    let labels: Vec<&str> = items
        .as_array()
        .unwrap_or_else(|| panic!("{items}"))
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert!(
        labels.contains(&"AgentPoolCapability.AgentPoolCapability.spawn_agents"),
        "{labels:?}"
    );
    let loc = c.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": u}, "position": {"line": 3, "character": 18}}),
    );
    assert_eq!(loc["uri"], file_uri(&ws.path().join("caps.py")).as_str());
    assert_eq!(inlay_labels(&mut c, &u), vec!["actions ∞/3".to_string()]);
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u},
               "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}},
               "context": {"diagnostics": []}}),
    );
    assert_eq!(actions, json!([]));
    // Every answer came before the lint of version 2 published anything.
    c.drain_for(Duration::from_millis(200));
    let v2: Vec<Value> = c
        .take_notifications("textDocument/publishDiagnostics")
        .into_iter()
        .filter(|p| p["version"] == 2)
        .collect();
    assert!(v2.is_empty(), "{v2:?}");
}

/// S2: a lint whose version is superseded while it runs is abandoned: edits arriving during a
/// slow lint end in exactly one publish, for the last version, with the last text's findings;
/// nothing is ever published for the versions in between.
#[test]
fn s2_a_superseded_lint_is_never_published_and_the_last_version_is() {
    let ws = lsp::empty_workspace();
    let mut c = start_with_slow_rules(ws.path(), 3_000);
    let u = uri(ws.path(), "a.py");
    c.open(&u, "python", 1, "x = 1\n");
    assert!(c.diagnostics_at(&u, 1).is_empty());
    c.change(&u, 2, Some([0, 0, 0, 0]), "import os\n");
    c.change(&u, 3, Some([1, 0, 1, 0]), "import sys\n");
    c.change(&u, 4, Some([2, 0, 2, 0]), "import subprocess\n");
    let last = c.diagnostics_at(&u, 4);
    assert_eq!(codes(&last), vec!["IMP001", "IMP001", "IMP001"]);
    let lines: Vec<u64> = last
        .iter()
        .map(|d| d["range"]["start"]["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, vec![0, 1, 2]);
    c.drain_for(Duration::from_millis(300));
    let versions: Vec<Value> = c
        .take_notifications("textDocument/publishDiagnostics")
        .into_iter()
        .map(|p| p["version"].clone())
        .collect();
    assert!(
        versions.is_empty(),
        "published after the last version: {versions:?}"
    );
    // A hover right after an edit sees the edited text (the lint of version 5 is still in its
    // slow phase, or done: the answer is the same).
    c.change(
        &u,
        5,
        Some([0, 0, 0, 0]),
        "# cellguard: ignore[unknown-action]\n",
    );
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 25}}),
    );
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap_or("")
            .starts_with("# unknown-action (API001)"),
        "{hover}"
    );
    let v5 = c.diagnostics_at(&u, 5);
    assert_eq!(codes(&v5), vec!["CG001", "IMP001", "IMP001", "IMP001"]);
}

/// The `client/registerCapability` and `client/unregisterCapability` requests the server
/// sent for its file watchers, as (method, globs) in order.
fn watcher_requests(c: &Client) -> Vec<(String, Vec<String>)> {
    c.server_requests
        .iter()
        .filter(|r| {
            r["method"] == "client/registerCapability"
                || r["method"] == "client/unregisterCapability"
        })
        .map(|r| {
            let globs = r["params"]["registrations"][0]["registerOptions"]["watchers"]
                .as_array()
                .map(|w| {
                    w.iter()
                        .filter_map(|w| w["globPattern"].as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            (r["method"].as_str().unwrap().to_string(), globs)
        })
        .collect()
}

/// L7-12: a burst of edits with many config-file change events while the client has not
/// answered the server's watcher registration (a busy editor) must not wedge the server:
/// afterwards requests are answered, the last version is published with the diagnostics of
/// the final config, and the watcher (un)registrations reach the client in order, ending
/// with one registration that watches the config and the knowledge base.
#[test]
fn l7_12_unanswered_watcher_registration_during_a_config_storm_never_wedges_the_server() {
    let ws = workspace();
    let root = ws.path();
    let mut c = Client::spawn(root);
    c.hold_server_requests = true;
    c.initialize(root, push_caps(), Value::Null);
    let u = uri(root, "doc.py");
    let line = "await run(\"AgentPoolCapability.spawn_agents\", count=1)\n";
    c.open(&u, "python", 1, line);
    let configs = [
        "knowledge-base = [\"kb.json\"]\n",
        "knowledge-base = [\"kb.json\"]\n[lint]\nignore = [\"API002\"]\n",
    ];
    let config_changed = json!({"changes": [{"uri": uri(root, "cellguard.toml"), "type": 2}]});
    let edits = 300;
    for i in 0..edits {
        c.change(&u, i + 2, Some([0, 0, 0, 0]), "y = 1\n");
        if i % 7 == 0 {
            std::fs::write(root.join("cellguard.toml"), configs[(i as usize / 7) % 2]).unwrap();
            c.notify("workspace/didChangeWatchedFiles", config_changed.clone());
        }
    }
    std::fs::write(root.join("cellguard.toml"), configs[0]).unwrap();
    c.notify("workspace/didChangeWatchedFiles", config_changed);
    c.drain_for(Duration::from_secs(2));
    // The editor catches up: it answers what it held, and everything from now on.
    c.hold_server_requests = false;
    c.answer_held();
    let hover = c.send_request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 0}}),
    );
    assert!(
        c.response_within(hover, Duration::from_secs(20)).is_some(),
        "the server no longer answers requests; server requests: {:?}",
        watcher_requests(&c)
    );
    let last = c.diagnostics_at(&u, edits + 1);
    let text = "y = 1\n".repeat(edits as usize) + line;
    std::fs::write(root.join("doc.py"), &text).unwrap();
    assert_eq!(sorted(codes(&last)), cli_codes(root, "doc.py"));
    assert!(codes(&last).contains(&"API002".to_string()), "{last:?}");
    // Let the registrar settle, then check the order of what the client was asked.
    c.drain_for(Duration::from_secs(2));
    let requests = watcher_requests(&c);
    let methods: Vec<&str> = requests.iter().map(|(m, _)| m.as_str()).collect();
    assert!(!methods.is_empty());
    for (i, m) in methods.iter().enumerate() {
        let expected = if i % 2 == 0 {
            "client/registerCapability"
        } else {
            "client/unregisterCapability"
        };
        assert_eq!(*m, expected, "out of order: {methods:?}");
    }
    assert_eq!(
        methods.last(),
        Some(&"client/registerCapability"),
        "{methods:?}"
    );
    let globs = &requests.last().unwrap().1;
    for name in ["cellguard.toml", "kb.json"] {
        let p = root.join(name);
        let real = std::fs::canonicalize(&p).unwrap();
        assert!(
            globs
                .iter()
                .any(|g| g == &p.to_string_lossy() || g == &real.to_string_lossy()),
            "{name} not watched: {globs:?}"
        );
    }
    assert_eq!(c.shutdown().code(), Some(0));
}

/// L7-1: once the knowledge base is broken, the server keeps watching it, and fixing it
/// re-diagnoses the open document (no keystroke needed).
#[test]
fn l7_1_a_knowledge_base_broken_once_is_still_watched_and_reloaded_when_fixed() {
    let ws = workspace();
    let root = ws.path();
    let (mut c, _) = start(root, push_caps(), Value::Null);
    let u = uri(root, "doc.py");
    c.open(
        &u,
        "python",
        1,
        "await run(\"AgentPoolCapability.spawn_agents\", count=1)\n",
    );
    assert!(codes(&c.diagnostics_at(&u, 1)).contains(&"API002".to_string()));
    let kb = root.join("kb.json");
    let good = std::fs::read_to_string(&kb).unwrap();
    let changed = json!({"changes": [{"uri": file_uri(&kb), "type": 2}]});
    std::fs::write(&kb, "{\"actions\": [").unwrap();
    c.notify("workspace/didChangeWatchedFiles", changed.clone());
    c.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == u.as_str()
            && !codes(p["diagnostics"].as_array().unwrap()).contains(&"API002".to_string())
    });
    c.drain_for(Duration::from_millis(500));
    let globs = registered_globs(&c);
    assert!(
        globs.iter().any(|g| g.ends_with("/kb.json")),
        "the broken KB is no longer watched: {globs:?}"
    );
    std::fs::write(&kb, good).unwrap();
    c.notify("workspace/didChangeWatchedFiles", changed);
    let p = c.try_wait_for(
        "textDocument/publishDiagnostics",
        |p| {
            p["uri"] == u.as_str()
                && codes(p["diagnostics"].as_array().unwrap()).contains(&"API002".to_string())
        },
        Duration::from_secs(10),
    );
    assert!(
        p.is_some(),
        "fixing the KB did not re-diagnose the document"
    );
    assert_eq!(c.shutdown().code(), Some(0));
}

/// L7-7: a code action request without `only` sent right after an edit offers fix-all for
/// the current text, as a settled request does (Helix and Neovim send no `only`).
#[test]
fn l7_7_code_actions_without_only_right_after_an_edit_offer_fix_all() {
    let ws = workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "fa.py");
    let line = "x = run(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\", count=1)\n";
    c.open(&u, "python", 1, line);
    c.diagnostics_at(&u, 1);
    for i in 0..10u32 {
        c.change(&u, i64::from(i) + 2, Some([0, 0, 0, 0]), "y = 1\n");
        let actions = c.request(
            "textDocument/codeAction",
            json!({
                "textDocument": {"uri": u},
                "range": {"start": {"line": i + 1, "character": 0}, "end": {"line": i + 1, "character": 5}},
                "context": {"diagnostics": []}
            }),
        );
        let kinds: Vec<&str> = actions
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|a| a["kind"].as_str())
            .collect();
        assert!(
            kinds.contains(&"source.fixAll.cellguard"),
            "edit {i}: no fix-all in {actions}"
        );
    }
    assert_eq!(c.shutdown().code(), Some(0));
}

/// The (code, range) of each diagnostic, sorted.
fn code_ranges(diags: &[Value]) -> Vec<(String, String)> {
    let mut v: Vec<_> = diags
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").to_string(),
                d["range"].to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

/// L8-1: a `didChange` whose range starts after it ends is ignored and logged like one with an
/// old version; it used to be applied with its ends swapped, silently changing the text.
#[test]
fn l8_1_a_reversed_range_is_ignored_and_logged_and_the_text_stays_right() {
    let ws = workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "rev.py");
    c.open(&u, "python", 1, "import os\nx = 1\n");
    c.diagnostics_at(&u, 1);
    // Swapped, this would replace `x = 1` with a second import.
    c.change(&u, 2, Some([1, 5, 1, 0]), "import sys");
    let log = c.wait_for("window/logMessage", |p| {
        p["message"]
            .as_str()
            .unwrap_or("")
            .contains("reversed range")
    });
    let msg = log["message"].as_str().unwrap();
    assert!(
        msg.contains("rev.py")
            && msg.contains("start 1:5 after end 1:0")
            && msg.contains("ignored"),
        "{msg}"
    );
    assert_eq!(log["type"], 2, "a warning");
    // The next valid change applies to the untouched text.
    c.change(&u, 3, Some([0, 7, 0, 9]), "json");
    let diags = c.diagnostics_at(&u, 3);
    let fresh_uri = uri(ws.path(), "rev_fresh.py");
    c.open(&fresh_uri, "python", 1, "import json\nx = 1\n");
    let fresh = c.diagnostics_at(&fresh_uri, 1);
    assert!(!fresh.is_empty());
    assert_eq!(code_ranges(&diags), code_ranges(&fresh));
    assert!(
        diags.iter().all(|d| d["range"]["start"]["line"] == 0),
        "nothing on line 1: {diags:?}"
    );
    assert_eq!(c.shutdown().code(), Some(0));
}
