//! The documentation examples of the `API`, `SHP` and `RUN` rules are tests: each `example`
//! produces exactly one diagnostic, of its own rule; each `fixed_example` produces none; and
//! where the example's diagnostic carries an applicable fix, applying it yields the fixed
//! example.

use cellguard_lints::config::{ConfigFile, Overrides, Settings};
use cellguard_lints::diagnostic::{Applicability, Rule};
use cellguard_lints::kb::{load_str, KnowledgeBase};
use cellguard_lints::rules::{api, runtime, shape};
use cellguard_lints::{check_file, SourceFile};

fn settings_for(rule: &Rule) -> Settings {
    let file: ConfigFile = if rule.doc.example_config.is_empty() {
        ConfigFile::default()
    } else {
        toml::from_str(rule.doc.example_config).expect("example_config parses")
    };
    Settings::resolve(&file, None, &Overrides::default()).expect("example_config resolves")
}

fn kb_for(rule: &Rule) -> KnowledgeBase {
    if rule.doc.example_kb.is_empty() {
        KnowledgeBase::new()
    } else {
        load_str(rule.doc.example_kb, "example_kb.json").expect("example_kb loads")
    }
}

fn apply(text: &str, edits: &[cellguard_lints::Edit]) -> String {
    let mut out = text.to_string();
    for e in edits.iter().rev() {
        out.replace_range(e.range.as_range(), &e.content);
    }
    out
}

#[test]
fn every_doc_example_produces_exactly_its_rule() {
    let rules: Vec<&Rule> = api::RULES
        .iter()
        .chain(shape::RULES)
        .chain(runtime::RULES)
        .copied()
        .collect();
    assert_eq!(rules.len(), 16);
    for rule in rules {
        let doc = &rule.doc;
        for field in [
            doc.what,
            doc.why,
            doc.example,
            doc.fixed_example,
            doc.fix_safety,
            doc.source,
        ] {
            assert!(!field.is_empty(), "{}: incomplete doc", rule.code);
        }
        let settings = settings_for(rule);
        let kb = kb_for(rule);
        let diagnostics = check_file(&SourceFile::new("example.py", doc.example), &settings, &kb);
        let codes: Vec<&str> = diagnostics.iter().map(|d| d.rule.code).collect();
        assert_eq!(
            codes,
            vec![rule.code],
            "{}: example gives {diagnostics:#?}",
            rule.code
        );
        let fixed = check_file(
            &SourceFile::new("fixed.py", doc.fixed_example),
            &settings,
            &kb,
        );
        assert!(
            fixed.is_empty(),
            "{}: fixed example gives {fixed:#?}",
            rule.code
        );
        if let Some(fix) = &diagnostics[0].fix {
            if fix.applicability >= Applicability::Unsafe {
                assert_eq!(
                    apply(doc.example, &fix.edits),
                    doc.fixed_example,
                    "{}: applying the fix",
                    rule.code
                );
            }
        }
    }
}
