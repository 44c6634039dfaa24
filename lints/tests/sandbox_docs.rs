//! The SBX rule docs: each example produces exactly one diagnostic, of its own rule (no other
//! rule of any family), each fixed example none, and every doc field is filled in.

use cellguard_lints::config::{ConfigFile, Overrides, Settings};
use cellguard_lints::rules::sandbox::RULES;
use cellguard_lints::{check_file, KnowledgeBase, SourceFile};

fn codes(src: &str, config: &str) -> Vec<&'static str> {
    let file: ConfigFile = toml::from_str(config).expect("example config parses");
    let settings = Settings::resolve(&file, None, &Overrides::default()).expect("settings");
    let mut codes: Vec<&'static str> = check_file(
        &SourceFile::new("cell.py", src),
        &settings,
        &KnowledgeBase::new(),
    )
    .into_iter()
    .map(|d| d.rule.code)
    .filter(|c| c.starts_with("SBX"))
    .collect();
    codes.sort();
    codes.dedup();
    codes
}

#[test]
fn examples_produce_exactly_their_rule() {
    assert_eq!(RULES.len(), 9);
    for (i, rule) in RULES.iter().enumerate() {
        assert_eq!(
            rule.code,
            format!("SBX{:03}", i + 1),
            "codes are dense and ordered"
        );
        let d = &rule.doc;
        for (field, value) in [
            ("what", d.what),
            ("why", d.why),
            ("example", d.example),
            ("fixed_example", d.fixed_example),
            ("fix_safety", d.fix_safety),
            ("source", d.source),
        ] {
            assert!(
                !value.trim().is_empty(),
                "{} has an empty `{field}`",
                rule.code
            );
        }
        assert_eq!(
            codes(d.example, d.example_config),
            vec![rule.code],
            "example of {}",
            rule.code
        );
        assert_eq!(
            codes(d.fixed_example, d.example_config),
            Vec::<&str>::new(),
            "fixed example of {}",
            rule.code
        );
    }
}

#[test]
fn names_are_kebab_case_and_unique() {
    let mut names: Vec<&str> = RULES.iter().map(|r| r.name).collect();
    for n in &names {
        assert!(
            n.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
            "{n} is not kebab-case"
        );
    }
    names.sort();
    names.dedup();
    assert_eq!(names.len(), RULES.len());
}
