//! Helpers shared by the fixture-driven rule tests (`case_fixtures.rs`, `colony_profile.rs`):
//! where the fixtures are, which cells a directory holds, and the JSON form of a diagnostic
//! that the expected-output files use.

#![allow(dead_code)]

use cellguard_lints::diagnostic::Diagnostic;
use cellguard_lints::SourceFile;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The repository's `fixtures/` directory.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// Appends every `.py` file under `dir` (recursively, in directory order) to `out`.
pub fn cells_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            cells_under(&p, out);
        } else if p.extension().and_then(|x| x.to_str()) == Some("py") {
            out.push(p);
        }
    }
}

/// A diagnostic as the expected-output files write it: code, severity, range as
/// `[start row, start column, end row, end column]` (1-based), message, help and fix.
pub fn render(file: &SourceFile, d: &Diagnostic) -> Value {
    let range = |r: cellguard_lints::TextRange| {
        let (s, e) = (file.location(r.start), file.location(r.end));
        json!([s.row, s.column, e.row, e.column])
    };
    let fix = d.fix.as_ref().map(|f| {
        json!({
            "applicability": f.applicability.as_str(),
            "message": f.message,
            "edits": f.edits.iter().map(|e| json!({"range": range(e.range), "content": e.content})).collect::<Vec<_>>(),
        })
    });
    json!({
        "code": d.rule.code,
        "severity": d.severity.as_str(),
        "range": range(d.range),
        "message": d.message,
        "help": d.help,
        "fix": fix,
    })
}
