//! The benign real cells of the corpus (`fixtures/benign/cells.jsonl`: Colony, smolagents,
//! BFCL ground truth, CodeAct) produce no SBX finding in their dialect.

use cellguard_lints::config::{ConfigFile, Overrides, Settings};
use cellguard_lints::{check_file, KnowledgeBase, SourceFile};
use serde::Deserialize;
use std::collections::BTreeMap;

const CELLS: &str = include_str!("../../fixtures/benign/cells.jsonl");

#[derive(Deserialize)]
struct Cell {
    id: String,
    source: String,
    dialect: String,
    code: String,
}

fn settings(dialect: &str) -> Settings {
    let file: ConfigFile = toml::from_str(&format!("dialect = \"{dialect}\"\n")).unwrap();
    Settings::resolve(&file, None, &Overrides::default()).unwrap()
}

#[test]
fn benign_cells_have_no_sbx_findings() {
    let mut per_source: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let colony = settings("colony");
    let functions = settings("functions");
    for line in CELLS.lines().filter(|l| !l.trim().is_empty()) {
        let cell: Cell = serde_json::from_str(line).expect("cells.jsonl line parses");
        let s = match cell.dialect.as_str() {
            "colony" => &colony,
            "functions" => &functions,
            other => panic!("unknown dialect {other}"),
        };
        let source_root = cell.source.split('/').nth(1).unwrap_or("").to_string();
        *per_source.entry(source_root).or_default() += 1;
        let found: Vec<String> = check_file(
            &SourceFile::new("cell.py", &cell.code),
            s,
            &KnowledgeBase::new(),
        )
        .into_iter()
        .filter(|d| d.rule.code.starts_with("SBX"))
        .map(|d| format!("{} {}", d.rule.code, d.message))
        .collect();
        if !found.is_empty() {
            failures.push(format!(
                "{} ({}):\n{}\n{:?}",
                cell.id, cell.source, cell.code, found
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(per_source.get("colony"), Some(&20));
    assert_eq!(per_source.get("smolagents"), Some(&57));
    assert_eq!(per_source.get("codeact-mint"), Some(&26));
    assert_eq!(per_source.get("bfcl"), Some(&332));
}

/// The two per-dialect decisions the MINT APPS few-shot pins down, on their own.
#[test]
fn input_mocking_and_protocol_dunders_are_clean() {
    let s = settings("functions");
    let cell = "data = [\"3\"]\nmock = iter(data).__next__\nold = input\ninput = mock\nq = int(input())\ninput = old\n";
    let found: Vec<_> = check_file(&SourceFile::new("c.py", cell), &s, &KnowledgeBase::new())
        .into_iter()
        .filter(|d| d.rule.code.starts_with("SBX"))
        .collect();
    assert!(found.is_empty(), "{found:?}");
    // Calling the real builtin is still reported, also through the saved alias.
    let cell = "old = input\nname = old()\n";
    let codes: Vec<_> = check_file(&SourceFile::new("c.py", cell), &s, &KnowledgeBase::new())
        .into_iter()
        .map(|d| d.rule.code)
        .collect();
    assert_eq!(codes, vec!["SBX003"]);
}

const WRITTEN: &str = include_str!("../../fixtures/benign/written.toml");

#[derive(Deserialize)]
struct Written {
    presets: BTreeMap<String, String>,
    case: Vec<WrittenCase>,
}

#[derive(Deserialize)]
struct WrittenCase {
    config: String,
    input: String,
    #[serde(default)]
    finding: Option<String>,
}

/// The project's own benign cells (`fixtures/benign/written.toml`: the issue-4 black-box
/// test's benign set and the false positives it found) produce no SBX finding and parse.
#[test]
fn written_benign_cells_have_no_sbx_findings_and_parse() {
    let fx: Written = toml::from_str(WRITTEN).expect("written.toml parses");
    let mut failures = Vec::new();
    let mut findings = BTreeMap::<String, usize>::new();
    for case in &fx.case {
        let text = fx
            .presets
            .get(&case.config)
            .unwrap_or_else(|| panic!("unknown preset {}", case.config));
        let file: ConfigFile = toml::from_str(text).expect("preset parses");
        let s = Settings::resolve(&file, None, &Overrides::default()).expect("preset resolves");
        let found: Vec<String> = check_file(
            &SourceFile::new("cell.py", &case.input),
            &s,
            &KnowledgeBase::new(),
        )
        .into_iter()
        .filter(|d| d.rule.code.starts_with("SBX") || d.rule.code == "SYN001")
        .map(|d| format!("{} {}", d.rule.code, d.message))
        .collect();
        if let Some(f) = &case.finding {
            *findings.entry(f.clone()).or_default() += 1;
        }
        if !found.is_empty() {
            failures.push(format!("[{}]\n{}\n{:?}", case.config, case.input, found));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(fx.case.len() >= 70, "{} cases", fx.case.len());
    assert_eq!(findings.get("F16"), Some(&3));
    assert_eq!(findings.get("F21"), Some(&2));
}
