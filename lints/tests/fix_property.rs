//! Property test of the fix loop on real Colony cells (fixtures/fixes/colony, see its README)
//! against a KB subset: random faults are injected (a typo in an action key, a dropped
//! `await`, an `import` of a pre-bound module, a stale `# noqa`), then the cell is fixed with
//! safe and with unsafe fixes. The fixed text must parse (no syntax error that the faulty cell
//! did not have), the loop must converge, and fixing again must change nothing.

use cellguard_lints::config::Settings;
use cellguard_lints::diagnostic::Applicability;
use cellguard_lints::fix::{fix_file, FixStatus};
use cellguard_lints::{kb, parse, KnowledgeBase, SourceFile};
use proptest::prelude::*;
use std::path::PathBuf;
use std::sync::OnceLock;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/fixes/colony")
}

fn cells() -> &'static Vec<(String, String)> {
    static CELLS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    CELLS.get_or_init(|| {
        let mut out: Vec<(String, String)> = std::fs::read_dir(fixtures())
            .expect("fixtures/fixes/colony")
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "py"))
            .map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        out.sort();
        assert!(out.len() >= 8, "expected the Colony cell fixtures");
        out
    })
}

fn knowledge_base() -> &'static KnowledgeBase {
    static KB: OnceLock<KnowledgeBase> = OnceLock::new();
    KB.get_or_init(|| {
        kb::load_path(&fixtures().join("colony-kb-subset.json")).expect("KB fixture loads")
    })
}

/// Byte ranges of the contents of every `run("...")` key literal of a cell.
fn key_contents(src: &str) -> Vec<(usize, usize)> {
    let tree = parse::parse(src, None);
    let mut out = Vec::new();
    for node in parse::walk(tree.root_node()) {
        if node.kind() != "call" {
            continue;
        }
        let Some(f) = node.child_by_field_name("function") else {
            continue;
        };
        if parse::text(f, src) != "run" {
            continue;
        }
        let Some(args) = node.child_by_field_name("arguments") else {
            continue;
        };
        let Some(first) = args.named_child(0) else {
            continue;
        };
        if first.kind() != "string" {
            continue;
        }
        let mut c = first.walk();
        for ch in first.children(&mut c) {
            if ch.kind() == "string_content" && ch.end_byte() > ch.start_byte() {
                out.push((ch.start_byte(), ch.end_byte()));
            }
        }
    }
    out
}

/// Byte offsets of every `await ` keyword and the row starts of top-level statements.
fn awaits_and_rows(src: &str) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let tree = parse::parse(src, None);
    let mut awaits = Vec::new();
    for node in parse::walk(tree.root_node()) {
        if node.kind() == "await" {
            if let Some(kw) = node.child(0) {
                awaits.push(kw.start_byte());
            }
        }
    }
    let root = tree.root_node();
    let mut starts = Vec::new();
    let mut ends = Vec::new();
    let mut c = root.walk();
    for stmt in root.named_children(&mut c) {
        if stmt.kind() == "comment" {
            continue;
        }
        let s = stmt.start_byte();
        starts.push(src[..s].rfind('\n').map(|i| i + 1).unwrap_or(0));
        let e = stmt.end_byte();
        ends.push(src[e..].find('\n').map(|i| e + i).unwrap_or(src.len()));
    }
    (awaits, starts, ends)
}

#[derive(Debug, Clone)]
enum Fault {
    /// Replace, insert, delete or swap a character of a key.
    Typo {
        key: usize,
        pos: usize,
        kind: u8,
        ch: char,
    },
    /// Drop one `await`.
    DropAwait(usize),
    /// Insert `import json` before a top-level statement.
    Import(usize),
    /// Append a `# noqa` for a rule that does not fire there.
    StaleNoqa(usize),
}

fn fault() -> impl Strategy<Value = Fault> {
    prop_oneof![
        4 => (any::<usize>(), any::<usize>(), 0u8..4, prop::sample::select(vec!['a', 'e', 's', '_', 't', 'x', '.']))
            .prop_map(|(key, pos, kind, ch)| Fault::Typo { key, pos, kind, ch }),
        1 => any::<usize>().prop_map(Fault::DropAwait),
        1 => any::<usize>().prop_map(Fault::Import),
        1 => any::<usize>().prop_map(Fault::StaleNoqa),
    ]
}

fn inject(src: &str, fault: &Fault) -> String {
    let mut s = src.to_string();
    let (awaits, starts, ends) = awaits_and_rows(src);
    match *fault {
        Fault::Typo { key, pos, kind, ch } => {
            let keys = key_contents(src);
            if keys.is_empty() {
                return s;
            }
            let (a, b) = keys[key % keys.len()];
            let chars: Vec<(usize, char)> = src[a..b].char_indices().collect();
            let (off, c) = chars[pos % chars.len()];
            let at = a + off;
            match kind {
                0 => s.replace_range(at..at + c.len_utf8(), &ch.to_string()),
                1 => s.insert(at, ch),
                2 if chars.len() > 1 => s.replace_range(at..at + c.len_utf8(), ""),
                _ => {
                    if let Some(&(_, d)) = chars.get(pos % chars.len() + 1) {
                        let pair: String = [d, c].iter().collect();
                        s.replace_range(at..at + c.len_utf8() + d.len_utf8(), &pair);
                    }
                }
            }
        }
        Fault::DropAwait(i) => {
            if !awaits.is_empty() {
                let at = awaits[i % awaits.len()];
                s.replace_range(at..at + "await ".len(), "");
            }
        }
        Fault::Import(i) => {
            if !starts.is_empty() {
                s.insert_str(starts[i % starts.len()], "import json\n");
            }
        }
        Fault::StaleNoqa(i) => {
            if !ends.is_empty() {
                s.insert_str(ends[i % ends.len()], "  # noqa: SHP004");
            }
        }
    }
    s
}

fn syntax_errors(text: &str) -> bool {
    parse::parse(text, None).root_node().has_error()
}

fn check_fix(name: &str, text: &str, threshold: Applicability) -> Result<(), TestCaseError> {
    let settings = Settings::default();
    let kb = knowledge_base();
    let file = SourceFile::new(name, text);
    let fixed = fix_file(&file, &settings, kb, threshold);
    prop_assert_eq!(
        &fixed.status,
        &FixStatus::Converged,
        "did not converge on\n{}",
        text
    );
    prop_assert!(
        fixed.reverted.is_empty(),
        "a fix broke the syntax of\n{}",
        text
    );
    if !syntax_errors(text) {
        prop_assert!(
            !syntax_errors(&fixed.text),
            "fixed text does not parse:\n{}\n---\n{}",
            text,
            fixed.text
        );
    }
    let again = fix_file(
        &SourceFile::new(name, fixed.text.as_str()),
        &settings,
        kb,
        threshold,
    );
    prop_assert_eq!(&again.text, &fixed.text, "second --fix changed the text");
    prop_assert_eq!(again.passes, 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(96),
        .. ProptestConfig::default()
    })]

    #[test]
    fn fixing_faulty_real_cells_parses_converges_and_is_idempotent(
        cell in any::<prop::sample::Index>(),
        faults in prop::collection::vec(fault(), 1..4),
    ) {
        let (name, src) = &cells()[cell.index(cells().len())];
        let mut text = src.clone();
        for f in &faults {
            text = inject(&text, f);
        }
        check_fix(name, &text, Applicability::Safe)?;
        check_fix(name, &text, Applicability::Unsafe)?;
    }
}

#[test]
fn the_real_cells_are_stable_under_fix() {
    for (name, src) in cells() {
        let fixed = fix_file(
            &SourceFile::new(name.as_str(), src.as_str()),
            &Settings::default(),
            knowledge_base(),
            Applicability::Unsafe,
        );
        assert_eq!(fixed.status, FixStatus::Converged, "{name}");
        assert!(!syntax_errors(&fixed.text), "{name}");
    }
}

#[test]
fn the_injectors_really_change_the_cells() {
    let (_, src) = &cells()[0];
    assert!(!key_contents(src).is_empty());
    let t = inject(
        src,
        &Fault::Typo {
            key: 0,
            pos: 0,
            kind: 0,
            ch: 'x',
        },
    );
    assert_ne!(&t, src);
    let t = inject(src, &Fault::Import(0));
    assert!(t.starts_with("import json\n"));
    let t = inject(src, &Fault::DropAwait(0));
    assert_eq!(
        t.matches("await ").count() + 1,
        src.matches("await ").count()
    );
}

const FRAGMENTS: &[&str] = &[
    "import os",
    "import json",
    "x = 1",
    "y = '# noqa: IMP001'",
    "z = (1,\n     2)",
    "s = '''\nimport os\n'''",
    "if True:\n    import os",
    "if True:\n    import json\n    w = 1",
    "a = 1  # noqa: IMP001",
    "b = 2  # cellguard: ignore[IMP001, XYZ001]",
    "# cellguard: ignore[IMP001]",
    "# cellguard: ignore-file[IMP002]",
    "import os, \\\n    sys",
    "é = '😀'; import re",
    "from os import (\n    path,\n)",
    "c = 3  # noqa",
    "d = 4  # noqa: IMP001, IMP001  # type: ignore",
    "from . import secrets",
    "t = f'{x}'  # cellguard: ignore",
];

fn cell_text() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::sample::select(FRAGMENTS), 1..8),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(parts, crlf, final_newline)| {
            let mut s = parts.join("\n");
            if final_newline {
                s.push('\n');
            }
            if crlf {
                s = s.replace('\n', "\r\n");
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(96),
        .. ProptestConfig::default()
    })]

    /// Suppressions and their fixes on generated cells: fixing converges and is idempotent,
    /// `--add-noqa` silences every finding (other than `CG` ones and the security rules a comment
    /// cannot silence) and is idempotent.
    #[test]
    fn suppressions_fix_and_add_noqa_are_stable(text in cell_text()) {
        check_fix("cell.py", &text, Applicability::Unsafe)?;
        check_fix("cell.py", &text, Applicability::Safe)?;
        let settings = Settings::default();
        let kb = KnowledgeBase::new();
        let file = SourceFile::new("cell.py", text.as_str());
        let once = cellguard_lints::suppress::add_noqa(&file, &settings, &kb);
        let left = cellguard_lints::lint::check_file(&SourceFile::new("cell.py", once.text.as_str()), &settings, &kb);
        if !syntax_errors(&text) {
            prop_assert!(
                // Security findings (SBX, IMP001, IMP002) cannot be silenced by a comment in
                // the cell (G25): --add-noqa leaves them reported.
                left.iter().all(|d| d.rule.family() == "CG" || !settings.inline_suppressible(d.rule)),
                "left after --add-noqa: {:?}\n{}",
                left.iter().map(|d| d.rule.code).collect::<Vec<_>>(),
                once.text
            );
        }
        let twice = cellguard_lints::suppress::add_noqa(&SourceFile::new("cell.py", once.text.as_str()), &settings, &kb);
        prop_assert_eq!(twice.text, once.text);
    }
}
