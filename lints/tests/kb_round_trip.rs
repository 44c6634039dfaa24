//! scan -> cellguard-kb export -> import gives the same knowledge base, field for field.

use cellguard_lints::kb::{self, export, scan};
use std::path::Path;

#[test]
fn scan_export_import_is_the_identity() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kb/capabilities/colony_app");
    let scanned = scan::scan_paths(&[root]).unwrap().kb;
    assert_eq!(scanned.actions.len(), 13);
    let text = serde_json::to_string_pretty(&export::to_cellguard_kb(&scanned)).unwrap();
    let imported = kb::load_str(&text, "kb.json").unwrap();
    assert_eq!(imported.actions, scanned.actions);
    assert_eq!(imported.groups, scanned.groups);
    assert_eq!(imported.pseudo_keys, scanned.pseudo_keys);
    assert_eq!(imported.dynamic_segments, scanned.dynamic_segments);
    // Resolution works the same on both.
    for raw in [
        "store",
        "deep_review",
        "PlannerAgent.0badf00d.respond_to_user",
        "ANALYZE",
        "nope",
    ] {
        assert_eq!(imported.resolve(raw), scanned.resolve(raw), "{raw}");
    }
}

#[test]
fn prompt_import_round_trips_too() {
    let prompt = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kb/import/recorded-prompt.md"),
    )
    .unwrap();
    let from_prompt = kb::load_str(&prompt, "prompt.md").unwrap();
    assert_eq!(from_prompt.actions.len(), 4);
    let text = export::to_cellguard_kb(&from_prompt).to_string();
    let again = kb::load_str(&text, "kb.json").unwrap();
    assert_eq!(again.actions, from_prompt.actions);
    assert_eq!(again.groups, from_prompt.groups);
    assert_eq!(again.pseudo_keys, from_prompt.pseudo_keys);
}
