//! Behavioural cases (colony-reference §7.2-§7.4, strict profile, both dialects) and real
//! corpus cells, checked end to end: `fixtures/cases/**/NAME.py` and `fixtures/corpus/**/NAME.py`
//! are linted with the `cellguard.toml` of their directory (found by the same discovery the CLI
//! uses), and the diagnostics must equal the hand-checked `NAME.expected.json` (code, severity,
//! range as one-based `[row, column, end_row, end_column]`, message, help, fix).
//!
//! Every fix is also applied on its own: on a cell that parsed, the result must still parse.
//!
//! `CELLGUARD_BLESS=1` rewrites the expected files from the current output, for review with
//! `git diff`.

use cellguard_lints::config::{discover, Overrides, Project};
use cellguard_lints::{check_file, parse, SourceFile};
use serde_json::Value;

#[path = "support/cases.rs"]
mod support;

use support::{cells_under, fixtures, render};

fn apply(text: &str, edits: &[cellguard_lints::Edit]) -> String {
    let mut out = text.to_string();
    for e in edits.iter().rev() {
        out.replace_range(e.range.as_range(), &e.content);
    }
    out
}

fn run_group(sub: &str, min_cases: usize) {
    let bless = std::env::var_os("CELLGUARD_BLESS").is_some();
    let mut inputs = Vec::new();
    cells_under(&fixtures().join(sub), &mut inputs);
    inputs.sort();
    assert!(
        inputs.len() >= min_cases,
        "{sub}: only {} cases",
        inputs.len()
    );
    let mut failures = Vec::new();
    for input in &inputs {
        let name = input
            .strip_prefix(fixtures())
            .unwrap()
            .display()
            .to_string();
        let config = discover(input).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(config.is_some(), "{name}: no cellguard.toml above it");
        let project =
            Project::load(config, &Overrides::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let bytes = std::fs::read(input).unwrap();
        let file = SourceFile::from_bytes(input, &bytes);
        let diagnostics = check_file(&file, &project.settings, &project.kb);
        let got = Value::Array(diagnostics.iter().map(|d| render(&file, d)).collect());

        let had_errors = parse::parse(&file.text, None).root_node().has_error();
        for d in &diagnostics {
            if let (Some(fix), false) = (&d.fix, had_errors) {
                let fixed = apply(&file.text, &fix.edits);
                assert!(
                    !parse::parse(&fixed, None).root_node().has_error(),
                    "{name}: fix of {} breaks the syntax:\n{fixed}",
                    d.rule.code
                );
            }
        }

        let expected_path = input.with_extension("expected.json");
        if bless {
            let mut text = serde_json::to_string_pretty(&got).unwrap();
            text.push('\n');
            std::fs::write(&expected_path, text).unwrap();
            continue;
        }
        let expected: Value = match std::fs::read_to_string(&expected_path) {
            Ok(t) => serde_json::from_str(&t)
                .unwrap_or_else(|e| panic!("{name}: bad expected file: {e}")),
            Err(_) => {
                failures.push(format!("{name}: missing {}", expected_path.display()));
                continue;
            }
        };
        if expected != got {
            failures.push(format!(
                "{name}:\n--- expected\n{}\n--- got\n{}",
                serde_json::to_string_pretty(&expected).unwrap(),
                serde_json::to_string_pretty(&got).unwrap()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        inputs.len(),
        failures.join("\n\n")
    );
}

#[test]
fn behavioural_cases_match_expected() {
    run_group("cases", 40);
}

#[test]
fn corpus_cells_match_expected() {
    run_group("corpus", 15);
}
