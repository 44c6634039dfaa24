//! End-to-end tests of `cellguard server`: the built binary is spawned and driven over stdio
//! with JSON-RPC, as an editor would.

#[path = "support/lsp.rs"]
mod lsp;

use lsp::{
    codes, complete_wait_in, empty_workspace, file_uri, find, pull_caps, push_caps, start, uri,
    utf16_len, workspace, Client,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn pos(d: &Value, which: &str) -> (u64, u64) {
    (
        d["range"][which]["line"].as_u64().unwrap(),
        d["range"][which]["character"].as_u64().unwrap(),
    )
}

#[test]
fn lifecycle_capabilities_and_clean_exit() {
    let ws = empty_workspace();
    let (c, init) = start(ws.path(), push_caps(), Value::Null);
    let caps = &init["capabilities"];
    assert_eq!(init["serverInfo"]["name"], "cellguard");
    assert_eq!(caps["positionEncoding"], "utf-16");
    assert_eq!(caps["textDocumentSync"]["change"], 2, "incremental sync");
    assert_eq!(caps["textDocumentSync"]["openClose"], true);
    assert_eq!(caps["hoverProvider"], true);
    assert_eq!(caps["definitionProvider"], true);
    assert_eq!(caps["inlayHintProvider"], true);
    assert_eq!(
        caps["codeActionProvider"]["codeActionKinds"],
        json!(["quickfix", "source.fixAll.cellguard"])
    );
    assert_eq!(
        caps["executeCommandProvider"]["commands"],
        json!(["cellguard.printDebugInformation", "cellguard.applyAutofix"])
    );
    assert!(
        caps.get("diagnosticProvider").is_none(),
        "push client: no pull"
    );
    let status = c.shutdown();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn exit_without_shutdown_is_exit_code_1() {
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    c.notify("exit", Value::Null);
    assert_eq!(c.wait_exit().code(), Some(1));
}

#[test]
fn push_diagnostics_carry_version_code_link_severity_source_and_data() {
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "cell.py");
    c.open(&u, "python", 7, "x = 1\nimport os\n");
    let diags = c.diagnostics_at(&u, 7);
    assert_eq!(codes(&diags), vec!["IMP001"]);
    let d = &diags[0];
    assert_eq!(pos(d, "start"), (1, 7));
    assert_eq!(pos(d, "end"), (1, 9));
    assert_eq!(d["severity"], 1);
    assert_eq!(d["source"], "cellguard");
    // The rule's page in the source tree's docs/rules, the same link as the CLI's `url`.
    let href = d["codeDescription"]["href"].as_str().unwrap();
    assert!(
        href.starts_with("file:///") && href.ends_with("/docs/rules/blocked-import.md"),
        "{href}"
    );
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(repo.join("docs/rules/blocked-import.md").is_file());
    assert!(
        href.contains(repo.file_name().unwrap().to_str().unwrap()),
        "{href}"
    );
    assert_eq!(d["data"]["version"], 7);
    assert_eq!(d["data"]["code"], "IMP001");
    assert_eq!(d["data"]["index"], 0);
    // IMP001's fix (removing the import) is unsafe; it travels in `data`.
    assert_eq!(d["data"]["fix"]["applicability"], "unsafe");
    assert_eq!(
        d["data"]["fix"]["edits"][0]["range"]["start"],
        json!({"line": 0, "character": 5})
    );
    assert_eq!(c.shutdown().code(), Some(0));
}

/// Columns after an emoji, CJK and a combining character, in each negotiated encoding.
#[test]
fn columns_follow_the_negotiated_encoding() {
    let prefix = "s = '😀漢e\u{301}'; ";
    let text = format!("{prefix}import os\n");
    let os_byte = prefix.len() + "import ".len();
    let os_utf16 = utf16_len(prefix) + 7;
    let os_utf32 = (prefix.chars().count() + 7) as u32;
    for (offered, expected_kind, col) in [
        (json!(["utf-16"]), "utf-16", os_utf16),
        (Value::Null, "utf-16", os_utf16),
        (json!(["utf-32", "utf-16"]), "utf-32", os_utf32),
        (
            json!(["utf-16", "utf-32", "utf-8"]),
            "utf-8",
            os_byte as u32,
        ),
    ] {
        let ws = empty_workspace();
        let mut caps = push_caps();
        if !offered.is_null() {
            caps["general"] = json!({"positionEncodings": offered});
        }
        let (mut c, init) = start(ws.path(), caps, Value::Null);
        assert_eq!(init["capabilities"]["positionEncoding"], expected_kind);
        let u = uri(ws.path(), "enc.py");
        c.open(&u, "python", 1, &text);
        let diags = c.diagnostics_at(&u, 1);
        assert_eq!(pos(&diags[0], "start"), (0, col as u64), "{expected_kind}");
        assert_eq!(
            pos(&diags[0], "end"),
            (0, col as u64 + 2),
            "{expected_kind}"
        );
        // An edit addressed in the same encoding: replace `os` with `json`.
        c.change(&u, 2, Some([0, col, 0, col + 2]), "json");
        let diags = c.diagnostics_at(&u, 2);
        assert_eq!(
            codes(&diags),
            vec!["IMP003"],
            "{expected_kind}: `import json` is allowed but fails at runtime"
        );
        assert_eq!(c.shutdown().code(), Some(0));
    }
}

#[test]
fn utf16_edit_right_after_an_emoji() {
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "e.py");
    c.open(&u, "python", 1, "x = '😀'\n");
    assert!(c.diagnostics_at(&u, 1).is_empty());
    // UTF-16 column 8 is just after the closing quote (the emoji counts 2).
    c.change(&u, 2, Some([0, 8, 0, 8]), "; import os");
    let diags = c.diagnostics_at(&u, 2);
    assert_eq!(codes(&diags), vec!["IMP001"]);
    assert_eq!(pos(&diags[0], "start"), (0, 17));
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn pull_client_gets_pull_only_and_push_client_push_only() {
    // Pull-capable client: diagnosticProvider, no publishDiagnostics at all.
    let ws = empty_workspace();
    let (mut c, init) = start(ws.path(), pull_caps(), Value::Null);
    assert_eq!(
        init["capabilities"]["diagnosticProvider"]["identifier"],
        "cellguard"
    );
    assert_eq!(
        init["capabilities"]["diagnosticProvider"]["interFileDependencies"],
        false
    );
    let u = uri(ws.path(), "p.py");
    c.open(&u, "python", 1, "import os\n");
    let report = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": u}}),
    );
    assert_eq!(report["kind"], "full");
    let items = report["items"].as_array().unwrap().clone();
    assert_eq!(codes(&items), vec!["IMP001"]);
    let id = report["resultId"].as_str().unwrap().to_string();
    let again = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": u}, "previousResultId": id}),
    );
    assert_eq!(again["kind"], "unchanged");
    assert_eq!(again["resultId"], id.as_str());
    c.change(&u, 2, Some([0, 7, 0, 9]), "json");
    let after = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": u}, "previousResultId": id}),
    );
    assert_eq!(after["kind"], "full");
    assert_eq!(codes(after["items"].as_array().unwrap()), vec!["IMP003"]);
    c.drain_for(Duration::from_millis(300));
    assert!(
        c.take_notifications("textDocument/publishDiagnostics")
            .is_empty(),
        "a pull client must never also get pushed diagnostics"
    );
    assert_eq!(c.shutdown().code(), Some(0));

    // Push-only client: exactly one publication per version.
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "p.py");
    c.open(&u, "python", 1, "import os\n");
    c.diagnostics_at(&u, 1);
    c.drain_for(Duration::from_millis(300));
    assert!(
        c.take_notifications("textDocument/publishDiagnostics")
            .is_empty(),
        "no duplicate"
    );
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn diagnostics_are_cleared_on_close_and_reopen_starts_fresh() {
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "c.py");
    c.open(&u, "python", 3, "import os\n");
    assert_eq!(c.diagnostics_at(&u, 3).len(), 1);
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}));
    let cleared = c.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == u.as_str()
    });
    assert_eq!(cleared["diagnostics"], json!([]));
    assert!(cleared.get("version").is_none_or(Value::is_null));
    // Reopened with a lower version (a new opening): its own diagnostics, nothing stale.
    c.open(&u, "python", 1, "x = 1\n");
    assert!(c.diagnostics_at(&u, 1).is_empty());
    assert_eq!(c.shutdown().code(), Some(0));
}

/// Many edits without waiting: publications only go forward, none for a superseded version
/// after a newer one, and the last one is for the final text.
#[test]
fn stale_results_are_dropped_during_a_burst() {
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "big.py");
    let body: String = (0..20_000).map(|i| format!("value_{i} = {i}\n")).collect();
    c.open(&u, "python", 1, &body);
    for v in 2..=101u32 {
        // Each edit appends one character to the first line's name.
        c.change(&u, v as i64, Some([0, 7 + (v - 2), 0, 7 + (v - 2)]), "x");
    }
    // The final edit introduces a finding.
    c.change(&u, 102, Some([0, 0, 0, 0]), "import os\n");
    let last = c.diagnostics_at(&u, 102);
    assert_eq!(codes(&last), vec!["IMP001", "SHP004"]);
    assert_eq!(pos(&last[0], "start"), (0, 7));
    let published: Vec<i64> = c
        .take_notifications("textDocument/publishDiagnostics")
        .iter()
        .map(|p| p["version"].as_i64().unwrap())
        .collect();
    assert!(
        published.windows(2).all(|w| w[0] < w[1]),
        "versions go forward only: {published:?}"
    );
    assert!(
        published.len() < 100,
        "a burst coalesces into few lints, got {} publications",
        published.len() + 1
    );
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn a_change_with_an_old_version_is_ignored_and_logged() {
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "v.py");
    c.open(&u, "python", 5, "import os\n");
    c.diagnostics_at(&u, 5);
    c.change(&u, 4, Some([0, 0, 0, 0]), "import sys\n");
    let log = c.wait_for("window/logMessage", |p| {
        p["message"]
            .as_str()
            .unwrap_or("")
            .contains("version 4 after version 5")
    });
    assert_eq!(log["type"], 2, "a warning");
    c.change(&u, 6, Some([0, 7, 0, 9]), "json");
    let diags = c.diagnostics_at(&u, 6);
    assert_eq!(
        codes(&diags),
        vec!["IMP003"],
        "the ignored edit was not applied"
    );
    assert_eq!(c.shutdown().code(), Some(0));
}

/// A thousand single-character edits sent in one burst end with the diagnostics of the
/// final text, identical to `cellguard check` on that text.
#[test]
fn a_burst_of_1000_edits_ends_with_the_cli_diagnostics() {
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "typed.py");
    c.open(&u, "python", 0, "");
    let program = "import os\nimport json\nfrom . import secrets\nx = 1\n";
    let mut text = String::new();
    let mut version = 0;
    while version < 1000 {
        for ch in program.chars() {
            if version >= 1000 {
                break;
            }
            version += 1;
            let line = text.matches('\n').count() as u32;
            let col = utf16_len(text.rsplit('\n').next().unwrap());
            c.change(&u, version, Some([line, col, line, col]), &ch.to_string());
            text.push(ch);
        }
    }
    let diags = c.diagnostics_at(&u, version);
    let out = std::process::Command::new(lsp::binary())
        .args([
            "check",
            "-",
            "--stdin-filename",
            "typed.py",
            "--output-format",
            "json",
        ])
        .current_dir(ws.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(text.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    let cli: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let lsp_view: Vec<(String, u64, u64)> = diags
        .iter()
        .map(|d| {
            let (l, ch) = pos(d, "start");
            (d["code"].as_str().unwrap().to_string(), l + 1, ch + 1)
        })
        .collect();
    let cli_view: Vec<(String, u64, u64)> = cli
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["location"]["row"].as_u64().unwrap(),
                d["location"]["column"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(!cli_view.is_empty());
    assert_eq!(lsp_view, cli_view);
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn markdown_cells_map_to_file_lines_and_re_extract_on_edit() {
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "notes.md");
    let md = "# Notes\n\n```python\nimport os\n```\n\nText.\n";
    c.open(&u, "markdown", 1, md);
    let diags = c.diagnostics_at(&u, 1);
    assert_eq!(codes(&diags), vec!["IMP001"]);
    assert_eq!(pos(&diags[0], "start"), (3, 7));
    // Add a second python fence after the text.
    c.change(&u, 2, Some([7, 0, 7, 0]), "\n```py\nfrom . import x\n```\n");
    let diags = c.diagnostics_at(&u, 2);
    assert_eq!(codes(&diags), vec!["IMP001", "IMP002"]);
    assert_eq!(pos(&diags[1], "start").0, 9);
    // Break the first fence's language: only the second cell remains.
    c.change(&u, 3, Some([2, 3, 2, 9]), "text");
    let diags = c.diagnostics_at(&u, 3);
    assert_eq!(codes(&diags), vec!["IMP002"]);
    assert_eq!(c.shutdown().code(), Some(0));
}

fn action_titles(actions: &Value) -> Vec<String> {
    actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn ignore_for_this_line_action_inserts_a_comment_that_suppresses() {
    let ws = empty_workspace();
    // A trusted project: comments may suppress IMP001 (by default they may not, G25).
    std::fs::write(
        ws.path().join("cellguard.toml"),
        "[lint]\nallow-inline-suppressions = [\"IMP\"]\n",
    )
    .unwrap();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "a.py");
    let text = "x = (1,\n     2); import os\ny = \"\"\"doc\n\"\"\"; import sys\n";
    c.open(&u, "python", 1, text);
    let diags = c.diagnostics_at(&u, 1);
    assert_eq!(codes(&diags), vec!["IMP001", "IMP001"]);
    // The client sends the diagnostic back, with its data.
    let d = diags[1].clone();
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": d["range"], "context": {"diagnostics": [d], "only": ["quickfix"]}}),
    );
    let titles = action_titles(&actions);
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(titles[0].ends_with("(IMP001, unsafe)"), "{titles:?}");
    assert_eq!(titles[1], "Ignore IMP001 for this line");
    assert_eq!(
        actions[0]["isPreferred"], false,
        "unsafe fixes are not preferred"
    );
    let ignore = &actions[1];
    assert_eq!(ignore["kind"], "quickfix");
    assert_eq!(ignore["isPreferred"], false);
    let doc_edit = &ignore["edit"]["documentChanges"][0];
    assert_eq!(doc_edit["textDocument"]["version"], 1);
    let e = &doc_edit["edits"][0];
    assert_eq!(e["newText"], "  # cellguard: ignore[IMP001]");
    // On the row where the statement ends.
    assert_eq!(e["range"]["start"], json!({"line": 3, "character": 15}));
    // Applying it makes the finding go away (the engine's suppression covers it).
    c.change(&u, 2, Some([3, 15, 3, 15]), "  # cellguard: ignore[IMP001]");
    let diags = c.diagnostics_at(&u, 2);
    assert_eq!(codes(&diags), vec!["IMP001"]);
    assert_eq!(pos(&diags[0], "start"), (1, 16));
    // Without data (a client that drops it) the actions are still offered.
    let mut bare = diags[0].clone();
    bare.as_object_mut().unwrap().remove("data");
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": bare["range"], "context": {"diagnostics": [bare]}}),
    );
    let ignore = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Ignore IMP001 for this line")
        .expect("ignore action without data");
    // The first statement spans rows 0-1 by brackets; the comment goes at the end of row 1.
    assert_eq!(
        ignore["edit"]["documentChanges"][0]["edits"][0]["range"]["start"],
        json!({"line": 1, "character": 18})
    );
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn ignore_action_merges_into_an_existing_suppression() {
    let ws = empty_workspace();
    // A trusted project: comments may suppress IMP001 (by default they may not, G25).
    std::fs::write(
        ws.path().join("cellguard.toml"),
        "[lint]\nallow-inline-suppressions = [\"IMP\"]\n",
    )
    .unwrap();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "m.py");
    c.open(&u, "python", 1, "import os  # cellguard: ignore[IMP003]\n");
    let diags = c.diagnostics_at(&u, 1);
    let d = find(&diags, "IMP001").clone();
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": d["range"], "context": {"diagnostics": [d], "only": ["quickfix"]}}),
    );
    let ignore = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Ignore IMP001 for this line")
        .unwrap()
        .clone();
    let e = &ignore["edit"]["documentChanges"][0]["edits"][0];
    assert_eq!(e["newText"], "IMP003, IMP001");
    assert_eq!(
        e["range"],
        json!({"start": {"line": 0, "character": 31}, "end": {"line": 0, "character": 37}})
    );
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn quick_fix_per_fix_preferred_when_safe() {
    let ws = workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "q.py");
    let text = "run(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\", count=1)\n";
    c.open(&u, "python", 1, text);
    let diags = c.diagnostics_at(&u, 1);
    let d = find(&diags, "RUN001").clone();
    assert_eq!(d["data"]["fix"]["applicability"], "safe");
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": d["range"], "context": {"diagnostics": [d]}}),
    );
    let fix = &actions[0];
    assert_eq!(fix["kind"], "quickfix");
    assert_eq!(fix["isPreferred"], true);
    assert!(
        fix["title"].as_str().unwrap().ends_with("(RUN001)"),
        "{fix}"
    );
    let e = &fix["edit"]["documentChanges"][0]["edits"][0];
    assert_eq!(e["newText"], "await ");
    assert_eq!(e["range"]["start"], json!({"line": 0, "character": 0}));
    // Without `only`, the fix-all source action comes too.
    let kinds: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"source.fixAll.cellguard"), "{kinds:?}");
    assert_eq!(c.shutdown().code(), Some(0));
}

/// Applies one LSP text edit (UTF-16 positions, ASCII text here) to `text`.
fn apply_edit(text: &str, e: &Value) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let offset = |p: &Value| -> usize {
        let l = p["line"].as_u64().unwrap() as usize;
        lines[..l.min(lines.len())]
            .iter()
            .map(|s| s.len())
            .sum::<usize>()
            + p["character"].as_u64().unwrap() as usize
    };
    let (a, b) = (offset(&e["range"]["start"]), offset(&e["range"]["end"]));
    format!(
        "{}{}{}",
        &text[..a],
        e["newText"].as_str().unwrap(),
        &text[b..]
    )
}

#[test]
fn fix_all_applies_safe_fixes_only_and_is_idempotent() {
    let ws = workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "f.py");
    // RUN001 (safe: insert await), IMP003 (safe: `json` is pre-bound), IMP001 (unsafe).
    let text = "import json\nimport os\nrun(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\", count=1)\nx = json.dumps({})\n";
    c.open(&u, "python", 1, text);
    c.diagnostics_at(&u, 1);
    let req = |c: &mut Client| {
        c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": u}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                   "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        )
    };
    let actions = req(&mut c);
    assert_eq!(action_titles(&actions).len(), 1, "{actions}");
    let a = &actions[0];
    assert_eq!(a["kind"], "source.fixAll.cellguard");
    let doc_edit = &a["edit"]["documentChanges"][0];
    assert_eq!(doc_edit["textDocument"]["version"], 1);
    let fixed = apply_edit(text, &doc_edit["edits"][0]);
    assert_eq!(
        fixed,
        "import os\nawait run(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\", count=1)\nx = json.dumps({})\n"
    );
    c.change(&u, 2, None, &fixed);
    assert_eq!(codes(&c.diagnostics_at(&u, 2)), vec!["IMP001"]);
    assert_eq!(
        req(&mut c),
        json!([]),
        "nothing left to fix: no edits the second time"
    );
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn inlay_hint_shows_the_path_aware_action_count() {
    let ws = workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "h.md");
    let md = "Cell:\n\n```python\nr = await run(\"get_agent_status\", agent_ids=[])\nif r:\n    await run(\"spawn_agents\", count=1)\nelse:\n    await run(\"respond_to_user\", content=\"x\")\n```\n\n```python\nx = 1\n```\n";
    c.open(&u, "markdown", 1, md);
    c.diagnostics_at(&u, 1);
    let hints = c.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": u}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}),
    );
    let hints = hints.as_array().unwrap();
    assert_eq!(hints.len(), 1, "only the cell with actions: {hints:?}");
    assert_eq!(
        hints[0]["label"], "actions 2/3",
        "if/else takes the longer branch"
    );
    assert_eq!(hints[0]["position"], json!({"line": 3, "character": 47}));
    assert_eq!(c.shutdown().code(), Some(0));
}

fn hover_text(h: &Value) -> String {
    h["contents"]["value"].as_str().unwrap_or("").to_string()
}

#[test]
fn hover_on_action_keys_shows_canonical_key_signature_and_summary() {
    let ws = workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "k.py");
    let text = "r = await run(\"AgentPoolCapability.AgentPoolCapability.get_agent_status\", agent_ids=[\"a\"])\n\
                s = await run(\"get_agent_status\", agent_ids=[])\n";
    c.open(&u, "python", 1, text);
    c.diagnostics_at(&u, 1);
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 30}}),
    );
    let md = hover_text(&h);
    assert!(
        md.contains("AgentPoolCapability.AgentPoolCapability.get_agent_status(agent_ids: list[str], detail: Literal[\"brief\", \"full\"] = \"brief\") -> dict[str, str]"),
        "{md}"
    );
    assert!(
        md.contains("Report the status of the given agents."),
        "{md}"
    );
    assert!(
        md.contains("`agent_ids: list[str]` (required): Agents to report on."),
        "{md}"
    );
    assert_eq!(h["range"]["start"], json!({"line": 0, "character": 15}));
    assert_eq!(h["range"]["end"], json!({"line": 0, "character": 71}));
    // A short key: the hover names the canonical key it resolves to.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 1, "character": 20}}),
    );
    let md = hover_text(&h);
    assert!(md.contains("`get_agent_status` resolves to the canonical key `AgentPoolCapability.AgentPoolCapability.get_agent_status`"), "{md}");
    // Outside any key: nothing.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 1}}),
    );
    assert_eq!(h, Value::Null);
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn hover_on_a_rule_code_in_a_suppression_comment_shows_the_rule_doc() {
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "s.py");
    let text = "import os  # cellguard: ignore[IMP001, IMP002]\n";
    c.open(&u, "python", 1, text);
    c.diagnostics_at(&u, 1);
    let col = text.find("IMP002").unwrap() as u32 + 2;
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": col}}),
    );
    let md = hover_text(&h);
    assert!(md.starts_with("# relative-import (IMP002)"), "{md}");
    assert!(
        md.contains("from . import secrets"),
        "the doc's example: {md}"
    );
    assert_eq!(h["range"]["start"]["character"], col - 2);
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn completion_of_action_keys_and_parameter_names() {
    let ws = workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "c.py");
    c.open(&u, "python", 1, "x = 1\n");
    c.diagnostics_at(&u, 1);
    // The user types `r = await run("Agent` (unterminated while typing).
    c.change(&u, 2, Some([1, 0, 1, 0]), "r = await run(\"Agent");
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": u}, "position": {"line": 1, "character": 20}}),
    );
    let items = items.as_array().unwrap();
    let labels: Vec<&str> = items.iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        vec![
            "AgentPoolCapability.AgentPoolCapability.get_agent_status",
            "AgentPoolCapability.AgentPoolCapability.spawn_agents",
            "SessionOrchestratorCapability.SessionOrchestratorCapability.respond_to_user"
        ]
    );
    let edit = &items[1]["textEdit"];
    assert_eq!(edit["range"]["start"], json!({"line": 1, "character": 15}));
    assert_eq!(edit["range"]["end"], json!({"line": 1, "character": 20}));
    assert_eq!(
        items[1]["detail"],
        "AgentPoolCapability.AgentPoolCapability.spawn_agents(count: int, role: str | None = None)"
    );
    // Parameter names inside the call, minus those already given.
    c.change(
        &u,
        3,
        Some([1, 0, 1, 20]),
        "r = await run(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\", count=2, ",
    );
    let line = "r = await run(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\", count=2, ";
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": u}, "position": {"line": 1, "character": line.len()}}),
    );
    let items = items.as_array().unwrap();
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["label"], "role");
    assert_eq!(items[0]["insertText"], "role=");
    assert_eq!(items[0]["detail"], "str | None = None");
    // Not inside a run call: nothing.
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 3}}),
    );
    assert_eq!(items, Value::Null);
    assert_eq!(c.shutdown().code(), Some(0));
}

/// An action of an agent or policy has a middle key segment that is random per process:
/// completion used to insert `Class.*.name`, which no process registers (and `API002` then
/// flagged). It inserts the short key, which the dispatcher resolves in every process.
#[test]
fn completion_of_a_per_process_key_inserts_its_short_key() {
    let (c, _, items, _ws) = complete_wait_in(
        "from colony import ActionPolicy, AgentCapability, action_executor\n\nclass PlannerPolicy(ActionPolicy):\n    @action_executor()\n    async def wait_for_next_event(self, timeout: float = 30.0) -> dict:\n        \"\"\"Wait.\"\"\"\n\nclass Cap(AgentCapability):\n    @action_executor()\n    async def wait_for_it(self) -> None:\n        \"\"\"It.\"\"\"\n",
    );
    let got: Vec<(&str, &str)> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["label"].as_str().unwrap(),
                i["textEdit"]["newText"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("wait_for_next_event", "wait_for_next_event"),
            ("Cap.Cap.wait_for_it", "Cap.Cap.wait_for_it"),
        ]
    );
    // issue 5 S10: no view of an item shows a key the linter flags; the registered key is
    // the label's description.
    let first = &items[0];
    assert_eq!(first["insertText"], "wait_for_next_event");
    assert_eq!(
        first["labelDetails"]["description"],
        "PlannerPolicy.*.wait_for_next_event"
    );
    for i in items.as_array().unwrap() {
        for field in ["label", "insertText"] {
            assert!(!i[field].as_str().unwrap().contains('*'), "{i}");
        }
    }
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn definition_jumps_to_the_action_source() {
    let ws = workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "d.py");
    c.open(&u, "python", 1, "await run(\"spawn_agents\", count=1)\n");
    c.diagnostics_at(&u, 1);
    let loc = c.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 14}}),
    );
    assert_eq!(loc["uri"], file_uri(&ws.path().join("caps.py")).as_str());
    assert_eq!(loc["range"]["start"], json!({"line": 10, "character": 14}));
    // A key the KB does not know: no location.
    c.change(&u, 2, Some([0, 11, 0, 23]), "nope");
    c.diagnostics_at(&u, 2);
    let loc = c.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 13}}),
    );
    assert_eq!(loc, Value::Null);
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn config_reload_on_watched_file_change_and_settings_change() {
    let ws = workspace();
    std::fs::write(
        ws.path().join("cellguard.toml"),
        "knowledge-base = [\"kb.json\"]\n[lint]\nignore = [\"IMP001\"]\n",
    )
    .unwrap();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "r.py");
    c.open(&u, "python", 1, "import os\n");
    assert!(
        c.diagnostics_at(&u, 1).is_empty(),
        "IMP001 ignored by the config"
    );
    // The server asked to watch config files.
    let reg = c
        .server_requests
        .iter()
        .find(|r| r["method"] == "client/registerCapability")
        .cloned()
        .expect("watchers registered");
    let watchers = reg["params"]["registrations"][0]["registerOptions"]["watchers"].clone();
    let globs: Vec<&str> = watchers
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["globPattern"].as_str())
        .collect();
    assert!(globs.contains(&"**/cellguard.toml"), "{globs:?}");
    assert!(globs.contains(&"**/pyproject.toml"), "{globs:?}");
    // Edit the config on disk; the client reports it.
    std::fs::write(
        ws.path().join("cellguard.toml"),
        "knowledge-base = [\"kb.json\"]\n",
    )
    .unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(ws.path(), "cellguard.toml"), "type": 2}]}),
    );
    let p = c.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == u.as_str() && !p["diagnostics"].as_array().unwrap().is_empty()
    });
    assert_eq!(codes(p["diagnostics"].as_array().unwrap()), vec!["IMP001"]);
    assert_eq!(p["version"], 1, "re-diagnosed without an edit");
    // Editor settings override the file: ignore the whole IMP family.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"cellguard": {"ignore": ["IMP"]}}}),
    );
    // A lint started before the settings change may still publish IMP001 first (seen under
    // load): wait for the publication that reflects the new settings.
    let p = c.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == u.as_str() && p["diagnostics"].as_array().is_some_and(|d| d.is_empty())
    });
    assert_eq!(p["diagnostics"], json!([]));
    // A broken config is reported, and linting goes on with defaults.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"cellguard": {}}}),
    );
    std::fs::write(ws.path().join("cellguard.toml"), "profile = 3\n").unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(ws.path(), "cellguard.toml"), "type": 2}]}),
    );
    let msg = c.wait_for("window/showMessage", |p| {
        p["message"]
            .as_str()
            .unwrap_or("")
            .contains("cellguard.toml:1:")
    });
    assert_eq!(msg["type"], 1);
    let p = c.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == u.as_str() && !p["diagnostics"].as_array().unwrap().is_empty()
    });
    assert_eq!(codes(p["diagnostics"].as_array().unwrap()), vec!["IMP001"]);
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn knowledge_base_reload_on_watched_file_change() {
    let ws = workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "kb.py");
    c.open(
        &u,
        "python",
        1,
        "await run(\"AgentPoolCapability.AgentPoolCapability.new_action\")\n",
    );
    c.diagnostics_at(&u, 1);
    let h = |c: &mut Client| {
        hover_text(&c.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 20}}),
        ))
    };
    assert!(h(&mut c).starts_with("Unknown action key"), "{}", h(&mut c));
    let kb_path = ws.path().join("kb.json");
    let kb = std::fs::read_to_string(&kb_path)
        .unwrap()
        .replace("spawn_agents", "new_action");
    std::fs::write(&kb_path, kb).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&kb_path), "type": 2}]}),
    );
    c.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == u.as_str()
    });
    assert!(h(&mut c).contains("new_action(count: int"), "{}", h(&mut c));
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn settings_from_initialization_options_apply() {
    let ws = empty_workspace();
    let (mut c, _) = start(
        ws.path(),
        push_caps(),
        json!({"settings": {"select": ["IMP002"]}}),
    );
    let u = uri(ws.path(), "i.py");
    c.open(&u, "python", 1, "import os\nfrom . import x\n");
    assert_eq!(codes(&c.diagnostics_at(&u, 1)), vec!["IMP002"]);
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn print_debug_information_reports_version_encoding_config_and_kb() {
    let ws = workspace();
    let mut caps = push_caps();
    caps["general"] = json!({"positionEncodings": ["utf-8", "utf-16"]});
    let (mut c, _) = start(ws.path(), caps, Value::Null);
    let u = uri(ws.path(), "x.py");
    c.open(&u, "python", 1, "x = 1\n");
    c.diagnostics_at(&u, 1);
    let info = c.request(
        "workspace/executeCommand",
        json!({"command": "cellguard.printDebugInformation", "arguments": []}),
    );
    let info = info.as_str().unwrap();
    assert!(
        info.starts_with(&format!("cellguard {}", env!("CARGO_PKG_VERSION"))),
        "{info}"
    );
    assert!(info.contains("position encoding: utf-8"), "{info}");
    assert!(info.contains("diagnostics: push"), "{info}");
    let cfg = ws.path().join("cellguard.toml");
    assert!(
        info.contains(&format!("config: {}", cfg.display())),
        "{info}"
    );
    // The inputs are listed as configured (the count used to say "from 0 file(s)" for a
    // scanned source directory).
    assert!(
        info.contains(&format!(
            "  knowledge base: 3 actions, 3 pseudo keys, from 1 input(s)\n    {}\n",
            ws.path().join("kb.json").display()
        )),
        "{info}"
    );
    let unknown = c.send_request(
        "workspace/executeCommand",
        json!({"command": "cellguard.nope", "arguments": []}),
    );
    let resp = c.response(unknown);
    assert_eq!(resp["error"]["code"], -32602);
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn malformed_and_out_of_range_requests_get_errors_or_clamped_answers() {
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "m.py");
    c.open(&u, "python", 1, "import os\n");
    c.diagnostics_at(&u, 1);
    // Not JSON at all.
    c.send_raw(b"Content-Length: 9\r\n\r\n{not json");
    let err = c.wait_for_response_with_null_id();
    assert_eq!(err["error"]["code"], -32700);
    // Valid JSON, invalid params.
    let id = c.send_request("textDocument/hover", json!({"textDocument": 5}));
    assert_eq!(c.response(id)["error"]["code"], -32602);
    // Unknown method.
    let id = c.send_request("cellguard/nothing", json!({}));
    assert_eq!(c.response(id)["error"]["code"], -32601);
    // Positions far out of range are clamped, not errors.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 4_000_000_000u32, "character": 4_000_000_000u32}}),
    );
    assert_eq!(h, Value::Null);
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": {"start": {"line": 99, "character": 0}, "end": {"line": 0, "character": 0}},
               "context": {"diagnostics": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "message": "x", "source": "cellguard", "data": {"garbage": true}}]}}),
    );
    assert_eq!(actions, json!([]));
    // Requests about documents that are not open.
    let other = uri(ws.path(), "never-opened.py");
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": other}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(h, Value::Null);
    c.change(&other, 2, Some([0, 0, 0, 0]), "x");
    // An edit far out of range is clamped to the end of the text.
    c.change(&u, 2, Some([50, 3, 70, 9]), "import sys\n");
    let diags = c.diagnostics_at(&u, 2);
    assert_eq!(codes(&diags), vec!["IMP001", "IMP001"]);
    // The server still works and exits cleanly.
    assert_eq!(c.shutdown().code(), Some(0));
}

/// A message with a wrong `Content-Length` desynchronised the stream for good: every later
/// request went unanswered. The server now answers the stray bytes with a parse error and
/// resynchronises at the next `Content-Length` header.
#[test]
fn a_wrong_content_length_does_not_stall_the_session() {
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "m.py");
    c.open(&u, "python", 1, "import os\n");
    c.diagnostics_at(&u, 1);
    let body = br#"{"jsonrpc":"2.0","id":"x","method":"textDocument/hover"}"#;
    for header in [
        format!("Content-Length: {}\r\n\r\n", body.len() - 8),
        "Content-Length: abc\r\n\r\n".to_string(),
        "Content-Length: 99999999999999999999\r\n\r\n".to_string(),
    ] {
        c.send_raw(header.as_bytes());
        c.send_raw(body);
        let h = c.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 7}}),
        );
        assert!(h.is_null() || h.is_object(), "{header}: {h}");
    }
    c.change(&u, 2, None, "import os\nimport sys\n");
    assert_eq!(codes(&c.diagnostics_at(&u, 2)), vec!["IMP001", "IMP001"]);
    assert_eq!(c.shutdown().code(), Some(0));
}

/// A pull that waits longer than the server allows for a lint (a very large document) was
/// answered with an empty report: the document's diagnostics vanished and nothing asked again.
/// It is now `ServerCancelled` (-32802) with `retriggerRequest`, and a later pull gets the
/// diagnostics. (The wait is shortened to 1 ms through the server's test hook.)
#[test]
fn a_pull_that_outlasts_the_lint_is_cancelled_with_retrigger() {
    let ws = empty_workspace();
    let mut c = Client::spawn_with_env(ws.path(), &[("CELLGUARD_SERVER_DIAGNOSTIC_WAIT_MS", "1")]);
    c.initialize(ws.path(), pull_caps(), Value::Null);
    let u = uri(ws.path(), "big.py");
    let text =
        "import os\n".to_string() + &"x = [i * 2 for i in range(10) if i % 3]\n".repeat(3000);
    c.open(&u, "python", 1, &text);
    let id = c.send_request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": u}}),
    );
    let first = c.response(id);
    assert_eq!(first["error"]["code"], -32802, "{first}");
    assert_eq!(first["error"]["data"], json!({"retriggerRequest": true}));
    // Re-pulled until the lint is done: then the report is full.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let id = c.send_request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": u}}),
        );
        let r = c.response(id);
        if r.get("error").is_none() {
            assert_eq!(r["result"]["kind"], "full");
            assert_eq!(
                codes(r["result"]["items"].as_array().unwrap()),
                vec!["IMP001", "SHP004"]
            );
            break;
        }
        assert_eq!(r["error"]["code"], -32802);
        assert!(std::time::Instant::now() < deadline, "never linted");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A document that is not open gets an empty report, not a cancellation.
    let other = uri(ws.path(), "closed.py");
    let r = c.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": other}}),
    );
    assert_eq!(r, json!({"kind": "full", "items": []}));
    assert_eq!(c.shutdown().code(), Some(0));
}

/// Opening a 5 MB document does not hold up a small one: the small document's diagnostics
/// arrive before the big one's, and later edits to the big one end correct. (The big text is
/// mostly one string literal so that the debug build's engine lints it in seconds.)
#[test]
fn a_5mb_document_does_not_block_the_server() {
    let ws = empty_workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let big = uri(ws.path(), "big.py");
    let line = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod.\n";
    let text = format!(
        "x = 1\n\"\"\"\n{}\"\"\"\n",
        line.repeat(5 * 1024 * 1024 / line.len() + 1)
    );
    assert!(text.len() >= 5 * 1024 * 1024);
    c.open(&big, "python", 1, &text);
    let small = uri(ws.path(), "small.py");
    c.open(&small, "python", 1, "import os\n");
    let first = c.wait_for("textDocument/publishDiagnostics", |_| true);
    assert_eq!(
        first["uri"],
        small.as_str(),
        "the small document is answered first"
    );
    // Requests keep being answered while the big document is linted.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": small}, "position": {"line": 0, "character": 8}}),
    );
    assert_eq!(h, Value::Null);
    // Edits to the big document while it is being linted.
    for v in 2..=20 {
        c.change(&big, v, Some([0, 0, 0, 0]), "#");
    }
    c.change(&big, 21, Some([0, 0, 0, 0]), "import subprocess\n");
    let diags = c.diagnostics_at(&big, 21);
    assert_eq!(codes(&diags), vec!["IMP001"]);
    assert_eq!(pos(&diags[0], "start"), (0, 7));
    assert_eq!(c.shutdown().code(), Some(0));
}

impl lsp::Client {
    fn wait_for_response_with_null_id(&mut self) -> Value {
        let deadline = std::time::Instant::now() + lsp::TIMEOUT;
        loop {
            if let Some(i) = self.inbox.iter().position(|m| {
                m.get("method").is_none() && m["id"].is_null() && m.get("error").is_some()
            }) {
                return self.inbox.remove(i).unwrap();
            }
            self.drain_for(Duration::from_millis(50));
            assert!(
                std::time::Instant::now() < deadline,
                "no error response with a null id"
            );
        }
    }
}

#[allow(dead_code)]
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/server")
}

/// N2-3: vscode-languageclient registers every command the server lists in
/// `executeCommandProvider.commands` while it starts; if the extension registered one of those
/// ids too, VS Code's registry would throw "command already exists" and the client would never
/// start. The extension's own ids (extension.js `registerCommand` and package.json
/// `contributes.commands`) must agree with each other and avoid the server's.
#[test]
fn vscode_extension_command_ids_never_collide_with_the_server_commands() {
    let ws = empty_workspace();
    let (c, init) = start(ws.path(), push_caps(), Value::Null);
    let server: Vec<String> = init["capabilities"]["executeCommandProvider"]["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .map(|v| v.as_str().expect("command id").to_string())
        .collect();
    assert!(server.contains(&"cellguard.printDebugInformation".to_string()));
    c.shutdown();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vscode");
    let js = std::fs::read_to_string(root.join("extension.js")).expect("extension.js");
    let mut registered: Vec<String> = js
        .split("registerCommand(\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap_or("").to_string())
        .collect();
    registered.sort();
    assert_eq!(
        registered,
        vec!["cellguard.debugInformation", "cellguard.restart"]
    );
    let package: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("package.json")).expect("package"))
            .expect("package.json is JSON");
    let mut contributed: Vec<String> = package["contributes"]["commands"]
        .as_array()
        .expect("contributes.commands")
        .iter()
        .map(|c| c["command"].as_str().expect("id").to_string())
        .collect();
    contributed.sort();
    assert_eq!(
        contributed, registered,
        "palette entries = registered commands"
    );
    for id in &registered {
        assert!(!server.contains(id), "{id} is also a server command");
    }
    // The palette command asks the server for the debug text by the server's own id.
    assert!(js.contains("command: \"cellguard.printDebugInformation\""));
}

/// N2-7: `cellguard.applyAutofix` sends the fixes as `workspace/applyEdit`; when the client
/// declines (`applied: false`, as VS Code does when the document changed meanwhile), the
/// command fails with LSP's `RequestFailed` and the client's reason, not a bare internal error.
#[test]
fn apply_autofix_reports_a_declined_edit_with_the_clients_reason() {
    let ws = workspace();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "f.py");
    // RUN001's safe fix (insert `await`).
    let text = "run(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\", count=1)\n";
    c.open(&u, "python", 1, text);
    assert_eq!(codes(&c.diagnostics_at(&u, 1)), vec!["RUN001"]);
    c.hold_server_requests = true;
    let id = c.send_request(
        "workspace/executeCommand",
        json!({"command": "cellguard.applyAutofix", "arguments": [u]}),
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while c.held.is_empty() && std::time::Instant::now() < deadline {
        c.drain_for(Duration::from_millis(50));
    }
    let req = c
        .held
        .pop()
        .expect("the server asks the client to apply the edit");
    assert_eq!(req["method"], "workspace/applyEdit");
    c.send(&json!({"jsonrpc": "2.0", "id": req["id"],
                   "result": {"applied": false, "failureReason": "user cancelled"}}));
    c.hold_server_requests = false;
    let resp = c.response(id);
    assert_eq!(resp["error"]["code"], -32803, "{resp}");
    assert_eq!(
        resp["error"]["message"],
        "cellguard.applyAutofix: the client did not apply the fixes: user cancelled"
    );
    // Accepted: the command succeeds with no result.
    let ok = c.request(
        "workspace/executeCommand",
        json!({"command": "cellguard.applyAutofix", "arguments": [u]}),
    );
    assert_eq!(ok, Value::Null);
    assert_eq!(c.shutdown().code(), Some(0));
}
