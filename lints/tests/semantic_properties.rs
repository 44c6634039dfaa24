//! Property tests of the semantic model and the `API`/`SHP`/`RUN` rules: random edits of real
//! cells (and random token soups) never panic, in both dialects, and every diagnostic and fix
//! edit lies on character boundaries inside the text.

use cellguard_lints::config::{ConfigFile, Dialect, LintSection, Overrides, Settings};
use cellguard_lints::kb::{load_str, KnowledgeBase};
use cellguard_lints::{check_file, SourceFile};
use proptest::prelude::*;

const SEEDS: &[&str] = &[
    include_str!("../../fixtures/cases/runtime/swallowed_blocks.py"),
    include_str!("../../fixtures/cases/semantic/names_bound_by_the_cell.py"),
    include_str!("../../fixtures/cases/api-extra/type_mismatches.py"),
    include_str!("../../fixtures/cases/api-extra/dynamic_keys.py"),
    include_str!("../../fixtures/cases/shape/function_counted_where_called.py"),
    include_str!("../../fixtures/corpus/colony/colony_001.py"),
    include_str!("../../fixtures/cases/functions/tool_parameters.py"),
];

const TOKENS: &[&str] = &[
    "await ",
    "run(",
    "\"A.a.b\"",
    ")",
    "(",
    "[",
    "]",
    "{",
    "}",
    ":",
    "\n",
    "    ",
    "for x in y",
    "while ",
    "try:",
    "except Exception:",
    "except:",
    "raise",
    "def f(",
    "async def g(",
    "lambda ",
    "class C:",
    "if ",
    "else:",
    "elif ",
    "match ",
    "case ",
    " if ",
    " else ",
    " or ",
    "=",
    ", ",
    "**",
    "*",
    "f\"{",
    "'",
    "\"\"\"",
    "#",
    "global ",
    "nonlocal ",
    "import ",
    "from . import ",
    "with ",
    "suppress(Exception)",
    " as ",
    "browse(",
    "submit_action(",
    "_agent.",
    "action_key=",
    "x",
    ".",
    "web_search(",
    "spotify.play(",
    "\\",
    "é",
    "🙂",
    "\t",
    "\r\n",
    "yield ",
    "del ",
];

/// The families under test (other families have their own property tests).
fn settings(dialect: Dialect) -> Settings {
    let file = ConfigFile {
        dialect: Some(dialect),
        lint: Some(LintSection {
            select: Some(
                ["SYN", "IMP", "API", "SHP", "RUN"]
                    .map(String::from)
                    .to_vec(),
            ),
            ..Default::default()
        }),
        ..Default::default()
    };
    Settings::resolve(&file, None, &Overrides::default()).unwrap()
}

fn kbs() -> (KnowledgeBase, KnowledgeBase) {
    let colony = load_str(
        include_str!("../../fixtures/cases/api-extra/kb.json"),
        "kb.json",
    )
    .unwrap();
    let tools = load_str(
        include_str!("../../fixtures/cases/functions/tools.json"),
        "tools.json",
    )
    .unwrap();
    (colony, tools)
}

fn check_all(text: &str) {
    let (colony, tools) = kbs();
    let file = SourceFile::new("cell.py", text);
    for (dialect, kb) in [(Dialect::Colony, &colony), (Dialect::Functions, &tools)] {
        for d in check_file(&file, &settings(dialect), kb) {
            assert!(d.range.end <= text.len(), "{d:?}");
            assert!(text.is_char_boundary(d.range.start) && text.is_char_boundary(d.range.end));
            if let Some(fix) = &d.fix {
                for e in &fix.edits {
                    assert!(e.range.end <= text.len());
                    assert!(
                        text.is_char_boundary(e.range.start) && text.is_char_boundary(e.range.end)
                    );
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
enum EditOp {
    Delete(usize, usize),
    Insert(usize, usize),
    Duplicate(usize, usize),
}

fn apply(seed: &str, ops: &[EditOp]) -> String {
    let mut s = seed.to_string();
    for op in ops {
        let len = s.len();
        let at = |i: usize, s: &str| {
            let mut i = if len == 0 { 0 } else { i % (len + 1) };
            while !s.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        match *op {
            EditOp::Delete(a, n) => {
                let start = at(a, &s);
                let mut end = (start + n % 40).min(s.len());
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                s.replace_range(start..end, "");
            }
            EditOp::Insert(a, t) => {
                let i = at(a, &s);
                s.insert_str(i, TOKENS[t % TOKENS.len()]);
            }
            EditOp::Duplicate(a, n) => {
                let start = at(a, &s);
                let mut end = (start + n % 60).min(s.len());
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                let piece = s[start..end].to_string();
                s.insert_str(end, &piece);
            }
        }
    }
    s
}

fn op() -> impl Strategy<Value = EditOp> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(a, n)| EditOp::Delete(a, n)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, t)| EditOp::Insert(a, t)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, n)| EditOp::Duplicate(a, n)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn edited_cells_never_panic(seed in 0..SEEDS.len(), ops in prop::collection::vec(op(), 1..12)) {
        check_all(&apply(SEEDS[seed], &ops));
    }

    #[test]
    fn token_soup_never_panics(tokens in prop::collection::vec(0..TOKENS.len(), 0..80)) {
        let text: String = tokens.iter().map(|&t| TOKENS[t]).collect();
        check_all(&text);
    }
}

#[test]
fn pathological_nesting_is_bounded() {
    let deep_parens = format!(
        "await run({}\"A.a.b\"{})\n",
        "(".repeat(3000),
        ")".repeat(3000)
    );
    let deep_blocks: String = (0..300)
        .map(|i| format!("{}if x:\n", "    ".repeat(i)))
        .collect::<String>()
        + &"    ".repeat(300)
        + "await run(\"A.a.b\")\n";
    let long_chain = format!("{}()\n", vec!["_agent"; 5000].join("."));
    let long_concat = format!("await run({})\n", vec!["\"a\""; 5000].join(" + "));
    for text in [deep_parens, deep_blocks, long_chain, long_concat] {
        check_all(&text);
    }
}
