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
