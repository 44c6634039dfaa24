//! `profile = "colony"` conformance (colony-reference §3.3-§3.5 and §7.2-§7.4).
//!
//! Every cell of the §7.2-§7.4 groups in `fixtures/cases/{shape,api,api-flip,imports}` (whose
//! strict expectations are `NAME.expected.json`) is also checked in the Colony profile against
//! `NAME.colony.json`; the Colony-specific cells of `fixtures/colony/` are checked in both
//! profiles (`NAME.colony.json`, `NAME.strict.json`). Every expected file is hand-checked against
//! Colony's source (`code_constraints.py`); `CELLGUARD_BLESS=1` rewrites them for review with
//! `git diff`.
//!
//! Beyond the exact expectations, every Colony-profile result must keep the profile's contract:
//! only Colony's own validator messages (and an empty extraction) are above `info`, no `info`
//! diagnostic has the message of a Colony string (so each string Colony would return is the
//! message of exactly one diagnostic), and no strict diagnostic duplicates one of them.

use cellguard_lints::config::{discover, Overrides, Profile, Project};
use cellguard_lints::diagnostic::{Diagnostic, Severity};
use cellguard_lints::{check_file, SourceFile};
use regex::Regex;
use serde_json::Value;
use std::path::PathBuf;

#[path = "support/cases.rs"]
mod support;

use support::{cells_under, fixtures, render};

/// The strings Colony's validators return (code_constraints.py), one pattern per code.
fn colony_patterns() -> Vec<(&'static str, Regex)> {
    let r = |s: &str| Regex::new(s).unwrap();
    vec![
        ("SYN001", r(r"^Syntax error: .+ \(<unknown>, line \d+\)$")),
        (
            "API001",
            r(r"^Unknown action key '.*'\.( Did you mean '.*'\?)?$"),
        ),
        ("IMP001", r(r"^Blocked import: (from )?[\w.]+$")),
        (
            "SHP001",
            r(
                r"^Too many actions in one iteration: \d+ run\(\) calls, maximum is (\d+)\. Each iteration should be a focused step of 1\x{2013}\d+ actions, not a complete program\. Pick the most important next action and do only that\.$",
            ),
        ),
        (
            "SHP003",
            r(
                r"^Too many browse\(\) calls: \d+, maximum is \d+\. Action keys are already shown in the prompt \x{2014} use the exact keys from Available Actions\. Use browse\(\) only to look up parameter details for a specific action\.$",
            ),
        ),
        (
            "SHP004",
            r(
                r"^Code is too long: \d+ lines, maximum is \d+\. Write a focused step, not a complete program\.$",
            ),
        ),
    ]
}

fn check_contract(name: &str, diagnostics: &[Diagnostic]) {
    let patterns = colony_patterns();
    let colony: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Info)
        .collect();
    for d in &colony {
        if d.rule.code == "SYN002" {
            continue;
        }
        let ok = patterns
            .iter()
            .any(|(code, re)| *code == d.rule.code && re.is_match(&d.message));
        assert!(
            ok,
            "{name}: {} at {:?} is above info but is not a Colony string: {}",
            d.rule.code, d.severity, d.message
        );
    }
    for d in diagnostics.iter().filter(|d| d.severity == Severity::Info) {
        assert!(
            !patterns
                .iter()
                .any(|(code, re)| *code == d.rule.code && re.is_match(&d.message)),
            "{name}: {} at info repeats a Colony string: {}",
            d.rule.code,
            d.message
        );
        let per_cell = matches!(d.rule.code, "SHP001" | "SHP003" | "SHP004");
        assert!(
            !colony
                .iter()
                .any(|c| c.rule.code == d.rule.code && (per_cell || c.range.overlaps(d.range))),
            "{name}: strict {} duplicates a Colony diagnostic",
            d.rule.code
        );
    }
    // A syntax error is the only Colony finding of a cell that does not parse.
    if colony.iter().any(|d| d.rule.code == "SYN001") {
        assert_eq!(
            colony.iter().filter(|d| d.rule.code != "SYN002").count(),
            1,
            "{name}: a syntax error must be reported once, alone"
        );
    }
}

fn run(inputs: &[PathBuf], profiles: &[(Profile, &str)], failures: &mut Vec<String>) {
    let bless = std::env::var_os("CELLGUARD_BLESS").is_some();
    for input in inputs {
        let name = input
            .strip_prefix(fixtures())
            .unwrap()
            .display()
            .to_string();
        let config = discover(input).unwrap_or_else(|e| panic!("{name}: {e}"));
        let bytes = std::fs::read(input).unwrap();
        let file = SourceFile::from_bytes(input, &bytes);
        for (profile, suffix) in profiles {
            let overrides = Overrides {
                profile: Some(*profile),
                ..Default::default()
            };
            let project =
                Project::load(config.clone(), &overrides).unwrap_or_else(|e| panic!("{name}: {e}"));
            let diagnostics = check_file(&file, &project.settings, &project.kb);
            if *profile == Profile::Colony {
                check_contract(&name, &diagnostics);
            }
            let got = Value::Array(diagnostics.iter().map(|d| render(&file, d)).collect());
            let path = input.with_extension(format!("{suffix}.json"));
            if bless {
                std::fs::write(&path, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                failures.push(format!("{name}: missing {}", path.display()));
                continue;
            };
            let expected: Value = serde_json::from_str(&text).unwrap();
            if expected != got {
                failures.push(format!(
                    "{name} ({suffix}):\n--- expected\n{}\n--- got\n{}",
                    serde_json::to_string_pretty(&expected).unwrap(),
                    serde_json::to_string_pretty(&got).unwrap()
                ));
            }
        }
    }
}

#[test]
fn reference_cases_in_the_colony_profile() {
    let mut inputs = Vec::new();
    for group in ["shape", "api", "api-flip", "imports"] {
        cells_under(&fixtures().join("cases").join(group), &mut inputs);
    }
    inputs.sort();
    assert!(inputs.len() >= 25, "only {} cases", inputs.len());
    let mut failures = Vec::new();
    run(&inputs, &[(Profile::Colony, "colony")], &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn colony_specific_cases_in_both_profiles() {
    let mut inputs = Vec::new();
    cells_under(&fixtures().join("colony"), &mut inputs);
    inputs.sort();
    assert!(inputs.len() >= 12, "only {} cases", inputs.len());
    let mut failures = Vec::new();
    run(
        &inputs,
        &[(Profile::Colony, "colony"), (Profile::Strict, "strict")],
        &mut failures,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `fixtures/colony/validator_table.json`: generated cells (every statement form, key spellings,
/// imports, string escapes, line layouts) with the error strings Colony's three validators
/// return for each (see fixtures/colony/README.md). The Colony profile must report exactly those
/// strings, each once, above `info`, and nothing else.
#[test]
fn colony_validator_table() {
    let table = fixtures().join("colony/validator_table.json");
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&table).unwrap()).unwrap();
    assert!(cases.len() >= 250, "only {} cells", cases.len());
    let config = discover(&table).unwrap();
    let project = Project::load(config, &Overrides::default()).unwrap();
    assert_eq!(project.settings.profile, Profile::Colony);
    let colony_codes = ["SYN001", "API001", "IMP001", "SHP001", "SHP003", "SHP004"];
    let mut failures = Vec::new();
    let mut strings = 0;
    for (i, case) in cases.iter().enumerate() {
        let code = case["code"].as_str().unwrap();
        let mut want: Vec<&str> = case["colony"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        want.sort_unstable();
        strings += want.len();
        let file = SourceFile::new("cell.py", code);
        let diagnostics = check_file(&file, &project.settings, &project.kb);
        check_contract(&format!("cell {i}"), &diagnostics);
        let mut got: Vec<&str> = diagnostics
            .iter()
            .filter(|d| d.severity != Severity::Info && colony_codes.contains(&d.rule.code))
            .map(|d| d.message.as_str())
            .collect();
        got.sort_unstable();
        if got != want {
            failures.push(format!(
                "cell {i}:\n{code}\n--- colony\n{want:#?}\n--- got\n{got:#?}"
            ));
        }
    }
    assert!(strings >= 300, "only {strings} Colony strings");
    assert!(
        failures.is_empty(),
        "{} of {} cells differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
