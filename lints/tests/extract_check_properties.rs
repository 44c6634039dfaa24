//! Property tests of the whole pipeline (extract -> parse -> rules, both profiles, every
//! extraction mode): random bytes and random edits of real cells never panic, and every
//! diagnostic and fix edit lies inside the file, on character boundaries.
//!
//! Seeds are the real cells already copied into `fixtures/` (`fixtures/corpus/**`, with their
//! sources and licences in `fixtures/corpus/README.md`) and the raw responses of
//! `fixtures/response/` (sources in its README).

use cellguard_lints::config::{ConfigFile, Overrides, Profile, Settings};
use cellguard_lints::extract::ExtractMode;
use cellguard_lints::kb::{load_path, KnowledgeBase};
use cellguard_lints::{check_file, SourceFile};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

fn collect(dir: &Path, exts: &[&str], out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, exts, out);
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
            && !p.to_string_lossy().ends_with(".expected.json")
        {
            if let Ok(t) = std::fs::read_to_string(&p) {
                out.push(t);
            }
        }
    }
}

fn seeds() -> &'static Vec<String> {
    static SEEDS: OnceLock<Vec<String>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut out = Vec::new();
        collect(&fixtures().join("corpus"), &["py"], &mut out);
        collect(&fixtures().join("response"), &["txt", "json"], &mut out);
        collect(&fixtures().join("colony"), &["py"], &mut out);
        assert!(out.len() >= 40, "only {} seed cells", out.len());
        out
    })
}

fn kb() -> &'static KnowledgeBase {
    static KB: OnceLock<KnowledgeBase> = OnceLock::new();
    KB.get_or_init(|| load_path(&fixtures().join("colony/kb.json")).expect("fixture KB loads"))
}

fn settings(profile: Profile, mode: ExtractMode) -> Settings {
    let ov = Overrides {
        profile: Some(profile),
        extract: Some(mode),
        ..Default::default()
    };
    Settings::resolve(&ConfigFile::default(), None, &ov).expect("default settings")
}

/// Runs every mode and profile on `text` and checks the invariants.
fn check_all(text: &str) -> Result<(), TestCaseError> {
    let file = SourceFile::new("cell.txt", text);
    let len = file.text.len();
    for mode in [
        ExtractMode::Python,
        ExtractMode::Markdown,
        ExtractMode::Response,
    ] {
        for profile in [Profile::Strict, Profile::Colony] {
            let s = settings(profile, mode);
            for d in check_file(&file, &s, kb()) {
                let r = d.range;
                prop_assert!(r.start <= r.end && r.end <= len, "{mode:?} {d:?}");
                prop_assert!(
                    file.text.is_char_boundary(r.start) && file.text.is_char_boundary(r.end),
                    "{mode:?} {profile:?} range off a char boundary: {d:?}"
                );
                if let Some(fix) = &d.fix {
                    for e in &fix.edits {
                        prop_assert!(e.range.end <= len, "{mode:?} fix edit outside: {d:?}");
                        prop_assert!(
                            file.text.is_char_boundary(e.range.start)
                                && file.text.is_char_boundary(e.range.end),
                            "{mode:?} fix edit off a char boundary: {d:?}"
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

/// One random edit of a cell: what to do, where (a fraction of the length), with what.
#[derive(Debug, Clone)]
enum EditOp {
    Insert(f64, String),
    Delete(f64, usize),
    Truncate(f64),
    DuplicateLine(f64),
    Indent(f64, String),
}

const PALETTE: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "'",
    "\"",
    "\"\"\"",
    "'''",
    ":",
    ",",
    "=",
    "\\",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "    ",
    "`",
    "```",
    "```python\n",
    "%",
    "!",
    "#",
    "é",
    "😀",
    "\u{a0}",
    "\u{200b}",
    "\0",
    "f\"{",
    "}\"",
    "await ",
    "run(",
    "browse(",
    "import os\n",
    "if x",
    "else:",
    "try:",
    "except*",
    "lambda",
    ":=",
    "...",
    "0x",
    "1_",
    "{\"code\": \"",
    "\\n",
    "\\u00e9",
    "<code>",
    "</code>",
    "<execute>",
    "Thought: ",
    "@",
];

fn edit_op() -> impl Strategy<Value = EditOp> {
    let piece = prop::sample::select(PALETTE).prop_map(str::to_string);
    let frac = 0.0f64..1.0;
    prop_oneof![
        (frac.clone(), piece.clone()).prop_map(|(f, p)| EditOp::Insert(f, p)),
        (frac.clone(), 1usize..12).prop_map(|(f, n)| EditOp::Delete(f, n)),
        frac.clone().prop_map(EditOp::Truncate),
        frac.clone().prop_map(EditOp::DuplicateLine),
        (
            frac,
            prop::sample::select(&[" ", "  ", "\t", "        "][..])
        )
            .prop_map(|(f, s)| EditOp::Indent(f, s.to_string())),
    ]
}

fn at(text: &str, f: f64) -> usize {
    let mut i = ((text.len() as f64) * f) as usize;
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(text: &mut String, op: &EditOp) {
    match op {
        EditOp::Insert(f, p) => {
            let i = at(text, *f);
            text.insert_str(i, p);
        }
        EditOp::Delete(f, n) => {
            let i = at(text, *f);
            let mut j = (i + n).min(text.len());
            while !text.is_char_boundary(j) {
                j += 1;
            }
            text.replace_range(i..j, "");
        }
        EditOp::Truncate(f) => {
            let i = at(text, *f);
            text.truncate(i);
        }
        EditOp::DuplicateLine(f) => {
            let i = at(text, *f);
            let start = text[..i].rfind('\n').map(|k| k + 1).unwrap_or(0);
            let end = text[i..]
                .find('\n')
                .map(|k| i + k + 1)
                .unwrap_or(text.len());
            let line = text[start..end].to_string();
            text.insert_str(start, &line);
        }
        EditOp::Indent(f, s) => {
            let i = at(text, *f);
            let start = text[..i].rfind('\n').map(|k| k + 1).unwrap_or(0);
            text.insert_str(start, s);
        }
    }
}

proptest! {
    // `PROPTEST_CASES` raises the count for a longer search.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let file = SourceFile::from_bytes("x.txt", &bytes);
        check_all(&file.text)?;
    }

    #[test]
    fn python_ish_text_never_panics(parts in proptest::collection::vec(prop::sample::select(PALETTE), 0..40)) {
        let text: String = parts.concat();
        check_all(&text)?;
    }

    #[test]
    fn edited_real_cells_never_panic(
        seed in 0usize..1000,
        ops in proptest::collection::vec(edit_op(), 1..6),
    ) {
        let seeds = seeds();
        let mut text = seeds[seed % seeds.len()].clone();
        for op in &ops {
            apply(&mut text, op);
        }
        check_all(&text)?;
    }
}

/// A JSON envelope whose code string is edited stays mapped into the file: every diagnostic of
/// a `{"code": ...}` response lies inside the string literal or at the envelope's first line.
#[test]
fn envelope_diagnostics_stay_inside_the_literal() {
    let code = "r = await run(\"A.A.spawn_agent\")\nimport os\nx = (\n";
    let json = serde_json::json!({"thought": "t", "code": code}).to_string();
    let file = SourceFile::new("reply.json", json.clone());
    let literal_start = json.find("\"r = ").unwrap();
    let literal_end = json.rfind('"').unwrap();
    for profile in [Profile::Strict, Profile::Colony] {
        let s = settings(profile, ExtractMode::Response);
        let d = check_file(&file, &s, kb());
        assert!(!d.is_empty());
        for d in d {
            assert!(
                d.range.start > literal_start && d.range.end <= literal_end,
                "{profile:?}: {d:?} outside the code literal"
            );
        }
    }
}
