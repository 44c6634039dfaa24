//! End-to-end regression tests for the new-user findings (N-*) against `cellguard server`:
//! each test drives the built binary over stdio with the failing input.

#[path = "support/lsp.rs"]
mod lsp;

use lsp::{codes, file_uri, push_caps, start, uri, workspace};
use serde_json::{json, Value};
use std::time::Duration;

/// N-6: while the project's `cellguard.toml` is broken, the editor's own settings (here
/// `ignore`) keep applying on top of the built-in defaults, and the config error is shown.
#[test]
fn n6_editor_settings_survive_a_broken_project_config() {
    let ws = workspace();
    let root = ws.path();
    let (mut c, _) = start(root, push_caps(), Value::Null);
    let u = uri(root, "doc.py");
    c.open(&u, "python", 1, "import os\nx = 1\n");
    assert_eq!(codes(&c.diagnostics_at(&u, 1)), vec!["IMP001"]);
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"cellguard": {"ignore": ["IMP001"]}}}),
    );
    c.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == u.as_str() && p["diagnostics"].as_array().unwrap().is_empty()
    });
    let config = root.join("cellguard.toml");
    std::fs::write(&config, "profile = [\"strict\"\n").unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&config), "type": 2}]}),
    );
    let shown = c.wait_for("window/showMessage", |m| {
        m["message"]
            .as_str()
            .unwrap_or("")
            .contains("cellguard.toml")
    });
    assert_eq!(shown["type"], 1, "{shown}");
    c.drain_for(Duration::from_millis(500));
    for p in c.take_notifications("textDocument/publishDiagnostics") {
        assert!(
            !codes(p["diagnostics"].as_array().unwrap()).contains(&"IMP001".to_string()),
            "the editor's `ignore` was dropped while the config is broken: {p}"
        );
    }
    // The same text re-linted under the broken config: still no IMP001.
    c.change(&u, 2, Some([1, 4, 1, 5]), "2");
    assert!(!codes(&c.diagnostics_at(&u, 2)).contains(&"IMP001".to_string()));
    assert_eq!(c.shutdown().code(), Some(0));
}

/// N-16: an error in the editor's settings names them, not `<command line>`.
#[test]
fn n16_editor_setting_errors_name_the_editor_settings() {
    let ws = workspace();
    let root = ws.path();
    let (mut c, _) = start(root, push_caps(), json!({"settings": {"select": ["NOPE"]}}));
    let shown = c.wait_for("window/showMessage", |m| {
        m["message"].as_str().unwrap_or("").contains("NOPE")
    });
    let message = shown["message"].as_str().unwrap();
    assert!(
        message.contains("editor settings: unknown rule selector `NOPE`")
            && !message.contains("<command line>"),
        "{message}"
    );
    assert_eq!(c.shutdown().code(), Some(0));
}
