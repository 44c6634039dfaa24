//! Every rule's doc examples run through the engine (`cellguard rule CODE` prints them, so
//! they must be true).
//!
//! The bar, per rule:
//! - `example` produces at least one finding of the rule, and no finding of another rule of the
//!   same family (findings of other families are allowed: a cell that calls an unknown action
//!   inside a loop is both an `API` and a `SHP` case, and the doc should not have to hide that);
//! - `fixed_example`, when given, produces no finding of the rule;
//! - a rule whose fix is `Always` available carries a fix on every finding of its example;
//! - `example_kb` (cellguard-kb JSON) and `example_config` (`cellguard.toml` text) are used
//!   when given; the example is checked as `example.py` unless the config sets `extract`;
//! - a rule with an empty example fails unless it is listed in [`EXEMPT`] with a reason.

use cellguard_lints::config::{ConfigFile, Overrides, Settings};
use cellguard_lints::diagnostic::{Diagnostic, FixAvailability, Rule};
use cellguard_lints::kb::{self, KnowledgeBase};
use cellguard_lints::{lint, rules, SourceFile};

/// Rules allowed to have no example, with the reason. Remove an entry when its doc gains an
/// example (a non-empty example is always checked, listed here or not).
const EXEMPT: &[(&str, &str)] = &[];

fn settings_for(rule: &Rule) -> Result<Settings, String> {
    let text = rule.doc.example_config;
    let file: ConfigFile = if text.is_empty() {
        ConfigFile::default()
    } else {
        toml::from_str(text).map_err(|e| format!("{}: example_config: {e}", rule.code))?
    };
    Settings::resolve(&file, None, &Overrides::default())
        .map_err(|e| format!("{}: example_config: {e}", rule.code))
}

fn kb_for(rule: &Rule) -> Result<KnowledgeBase, String> {
    if rule.doc.example_kb.is_empty() {
        return Ok(KnowledgeBase::new());
    }
    kb::load_str(rule.doc.example_kb, &format!("{} example_kb", rule.code))
        .map_err(|e| e.to_string())
}

fn run(rule: &Rule, text: &str) -> Result<Vec<Diagnostic>, String> {
    let settings = settings_for(rule)?;
    let kb = kb_for(rule)?;
    Ok(lint::check_file(
        &SourceFile::new("example.py", text),
        &settings,
        &kb,
    ))
}

fn describe(ds: &[Diagnostic]) -> String {
    ds.iter()
        .map(|d| format!("{} {}", d.rule.code, d.message))
        .collect::<Vec<_>>()
        .join("; ")
}

fn check_rule(rule: &Rule) -> Result<(), String> {
    let doc = &rule.doc;
    if doc.example.is_empty() {
        return if EXEMPT.iter().any(|(c, _)| *c == rule.code) {
            Ok(())
        } else {
            Err(format!(
                "{}: the doc has no example (add one, or list the rule in EXEMPT with a reason)",
                rule.code
            ))
        };
    }
    let ds = run(rule, doc.example)?;
    let own: Vec<&Diagnostic> = ds.iter().filter(|d| d.rule.code == rule.code).collect();
    if own.is_empty() {
        return Err(format!(
            "{}: the example produces no {} finding (got: [{}])",
            rule.code,
            rule.code,
            describe(&ds)
        ));
    }
    let siblings: Vec<&Diagnostic> = ds
        .iter()
        .filter(|d| d.rule.code != rule.code && d.rule.family() == rule.family())
        .collect();
    if !siblings.is_empty() {
        return Err(format!(
            "{}: the example also produces findings of its family: [{}]",
            rule.code,
            siblings
                .iter()
                .map(|d| format!("{} {}", d.rule.code, d.message))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if rule.fix == FixAvailability::Always && own.iter().any(|d| d.fix.is_none()) {
        return Err(format!(
            "{}: the fix is `Always` available but a finding of the example has none",
            rule.code
        ));
    }
    if !doc.fixed_example.is_empty() {
        let ds = run(rule, doc.fixed_example)?;
        if ds.iter().any(|d| d.rule.code == rule.code) {
            return Err(format!(
                "{}: the fixed example still produces {} (got: [{}])",
                rule.code,
                rule.code,
                describe(&ds)
            ));
        }
    }
    Ok(())
}

#[test]
fn every_rule_doc_example_is_true() {
    let failures: Vec<String> = rules::all_rules()
        .filter_map(|r| check_rule(r).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} rule doc(s) fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_rule_has_the_mandatory_doc_fields() {
    for r in rules::all_rules() {
        assert!(!r.summary.is_empty(), "{}: empty summary", r.code);
        assert!(
            r.name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{}: name `{}` is not kebab-case",
            r.code,
            r.name
        );
        if !r.doc.example.is_empty() {
            for (field, text) in [
                ("what", r.doc.what),
                ("why", r.doc.why),
                ("fix_safety", r.doc.fix_safety),
                ("source", r.doc.source),
            ] {
                assert!(!text.is_empty(), "{}: doc field `{field}` is empty", r.code);
            }
        }
    }
}

#[test]
fn exemptions_name_real_rules() {
    for (code, reason) in EXEMPT {
        assert!(
            rules::find_rule(code).is_some(),
            "EXEMPT lists unknown rule {code}"
        );
        assert!(!reason.is_empty());
    }
}

#[test]
fn codes_and_names_are_unique() {
    let all: Vec<&Rule> = rules::all_rules().collect();
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            assert_ne!(a.code, b.code);
            assert_ne!(a.name, b.name);
        }
    }
}

/// The harness itself must fail on a bad doc: a rule whose example does not trigger it.
#[test]
fn harness_rejects_a_wrong_example() {
    use cellguard_lints::diagnostic::{RuleDoc, Severity};
    static FAKE: Rule = Rule {
        code: "IMP001",
        name: "blocked-import",
        severity: Severity::Error,
        summary: "x",
        fix: FixAvailability::Sometimes,
        doc: RuleDoc {
            what: "x",
            why: "x",
            example: "x = 1\n",
            fixed_example: "",
            fix_safety: "x",
            source: "x",
            ..RuleDoc::EMPTY
        },
    };
    assert!(check_rule(&FAKE).is_err());
    static FAKE_FIXED: Rule = Rule {
        doc: RuleDoc {
            example: "import os\n",
            fixed_example: "import sys\n",
            ..FAKE.doc
        },
        ..FAKE
    };
    let err = check_rule(&FAKE_FIXED).unwrap_err();
    assert!(err.contains("fixed example"), "{err}");
    static FAKE_SIBLING: Rule = Rule {
        doc: RuleDoc {
            example: "import os\nfrom . import x\n",
            fixed_example: "",
            ..FAKE.doc
        },
        ..FAKE
    };
    let err = check_rule(&FAKE_SIBLING).unwrap_err();
    assert!(err.contains("IMP002"), "{err}");
}
