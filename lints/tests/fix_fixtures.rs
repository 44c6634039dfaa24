//! Fixture tests of every fix (fixtures/fixes/cases, see its README): `NAME.EXT` fixed with safe
//! fixes must equal `NAME.fixed.EXT`, with unsafe fixes `NAME.unsafe.EXT` (when present); the
//! loop converges, a second run changes nothing, and a fixed Python cell still parses.

use cellguard_lints::config::Settings;
use cellguard_lints::diagnostic::Applicability;
use cellguard_lints::fix::{fix_file, FixStatus};
use cellguard_lints::{kb, parse, KnowledgeBase, SourceFile};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/fixes/cases")
}

fn knowledge_base() -> KnowledgeBase {
    let mut kb = kb::load_path(&dir().join("../colony/colony-kb-subset.json")).unwrap();
    kb.merge(kb::load_path(&dir().join("extra-kb.json")).unwrap());
    kb
}

fn expected(input: &Path, kind: &str) -> Option<String> {
    let stem = input.file_stem()?.to_str()?;
    let ext = input.extension()?.to_str()?;
    std::fs::read_to_string(input.with_file_name(format!("{stem}.{kind}.{ext}"))).ok()
}

fn run(path: &Path, text: &str, kb: &KnowledgeBase, threshold: Applicability) -> String {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let fixed = fix_file(
        &SourceFile::new(name.as_str(), text),
        &Settings::default(),
        kb,
        threshold,
    );
    assert_eq!(fixed.status, FixStatus::Converged, "{name}");
    assert!(fixed.reverted.is_empty(), "{name}: {:?}", fixed.reverted);
    let again = fix_file(
        &SourceFile::new(name.as_str(), fixed.text.as_str()),
        &Settings::default(),
        kb,
        threshold,
    );
    assert_eq!(
        again.text, fixed.text,
        "{name}: a second --fix changed the text"
    );
    if path.extension().is_some_and(|e| e == "py") {
        assert!(
            !parse::parse(&fixed.text, None).root_node().has_error(),
            "{name}: the fixed cell does not parse:\n{}",
            fixed.text
        );
    }
    fixed.text
}

#[test]
fn every_fix_case_gives_its_expected_text() {
    let kb = knowledge_base();
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            !name.contains(".fixed.")
                && !name.contains(".unsafe.")
                && name != "README.md"
                && name != "extra-kb.json"
        })
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 20, "fixture cases missing: {inputs:?}");
    let mut failures = Vec::new();
    for input in &inputs {
        let text = std::fs::read_to_string(input).unwrap();
        let want = expected(input, "fixed")
            .unwrap_or_else(|| panic!("{}: no .fixed file", input.display()));
        let got = run(input, &text, &kb, Applicability::Safe);
        if got != want {
            failures.push(format!(
                "{} (safe):\n--- want\n{want}\n--- got\n{got}",
                input.display()
            ));
        }
        if let Some(want) = expected(input, "unsafe") {
            let got = run(input, &text, &kb, Applicability::Unsafe);
            if got != want {
                failures.push(format!(
                    "{} (unsafe):\n--- want\n{want}\n--- got\n{got}",
                    input.display()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
