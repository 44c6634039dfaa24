//! `SYN`: parsing and extraction. Syntax errors come from tree-sitter `ERROR` and `MISSING`
//! nodes and are reported once per cell, at the first error, with a Python-like message.
//! Extraction findings (`SYN002`-`SYN004`) are produced by `extract`/`response`.

use super::Checker;
use crate::diagnostic::{Diagnostic, FixAvailability, Rule, RuleDoc, Severity};
use crate::source::TextRange;
use tree_sitter::Node;

/// SYN001 syntax-error.
pub static SYNTAX_ERROR: Rule = Rule {
    code: "SYN001",
    name: "syntax-error",
    severity: Severity::Error,
    summary: "The cell does not parse as Python",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports the first syntax error of a cell, at the place the parser gave up, with a readable message. The other rules still run on the parts that parsed.",
        why: "Colony parses every cell with `ast.parse` before running it; a syntax error makes every validator return `Syntax error: ...` and the cell never runs, burning one of the two generations per request.",
        example: "result = await run(\"A.A.a\"\n",
        fixed_example: "result = await run(\"A.A.a\")\n",
        fix_safety: "No fix.",
        options: "No comment in the cell can suppress it (`# noqa`, `ignore[SYN001]` and `ignore-file[SYN001]` suppress nothing and are reported as unused, `CG001`), whatever `[lint] allow-inline-suppressions` says: a cell that does not parse never runs, and the other rules saw only what parsed. Only the configuration (`ignore`) turns it off.",
        source: "Colony validators (colony-reference §3.1); tree-sitter-python error recovery.",
        ..RuleDoc::EMPTY
    },
};

/// SYN002 empty-cell.
pub static EMPTY_CELL: Rule = Rule {
    code: "SYN002",
    name: "empty-cell",
    severity: Severity::Error,
    summary: "No Python code is left after extraction",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports a response or fence from which extraction yields no code.",
        why: "Colony records a failure (\"no Python code\") and retries without waiting; the turn is lost.",
        source: "Colony `_extract_code` and the schema-constrained generator (colony-reference §2.9).",
        fix_safety: "No fix: the code the model meant to write cannot be guessed.",
        example: "I will now call the action.\n```python\n```\n",
        fixed_example: "I will now call the action.\n```python\nr = await run(\"A.b.c\")\n```\n",
        example_config: "extract = \"response\"\n",
        ..RuleDoc::EMPTY
    },
};

/// SYN003 truncated-response.
pub static TRUNCATED_RESPONSE: Rule = Rule {
    code: "SYN003",
    name: "truncated-response",
    severity: Severity::Error,
    summary: "The response was cut off: an unclosed fence, or a later block Colony drops",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports a response whose last fence is never closed, or whose truncated second block Colony silently drops while running the first.",
        why: "A partial plan runs: Colony keeps the complete block and drops the rest without a word (colony-reference §2.9 [DEFECT]).",
        source: "Colony `_iter_fenced_blocks` (colony-reference §2.9).",
        fix_safety: "No fix: closing the fence would run a plan the model never finished; ask for the response again.",
        example: "Plan:\n```python\nr = await run(\"A.b.c\")\n",
        fixed_example: "Plan:\n```python\nr = await run(\"A.b.c\")\n```\n",
        example_config: "extract = \"response\"\n",
        ..RuleDoc::EMPTY
    },
};

/// SYN004 mixed-language-fences.
pub static MIXED_LANGUAGE_FENCES: Rule = Rule {
    code: "SYN004",
    name: "mixed-language-fences",
    severity: Severity::Warning,
    summary: "A non-Python fence is mixed with code fences",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports fenced blocks tagged with another language (or untagged) next to the code, and JSON `code` strings that themselves contain fences.",
        why: "Colony drops untagged blocks when python blocks exist, returns nothing when a non-python tag is present, and runs fences inside a JSON `code` string verbatim.",
        source: "Colony `_extract_code` (colony-reference §2.9).",
        fix_safety: "No fix: which block the model meant to run is a judgement call.",
        example: "Plan:\n```bash\nls\n```\n```python\nx = 1\n```\n",
        fixed_example: "Plan:\n```python\nx = 1\n```\n",
        example_config: "extract = \"response\"\n",
        ..RuleDoc::EMPTY
    },
};

/// The family's rules.
pub static RULES: &[&Rule] = &[
    &SYNTAX_ERROR,
    &EMPTY_CELL,
    &TRUNCATED_RESPONSE,
    &MIXED_LANGUAGE_FENCES,
];

pub mod diagnose;
pub mod literals;
pub mod repair;
pub mod soft_keywords;
pub mod tokenize;

pub use diagnose::PySyntaxError;

/// The syntax error CPython 3.11's `ast.parse` would raise for `src` (whose tree-sitter tree is
/// rooted at `root`), or `None` when it parses.
pub fn syntax_error(src: &str, root: Node) -> Option<PySyntaxError> {
    diagnose::diagnose(src, root)
}

/// The first syntax error as a range and CPython's message.
pub fn first_error(root: Node, src: &str) -> Option<(TextRange, String)> {
    syntax_error(src, root).map(|e| (e.range, e.message))
}

/// A hint for the mistakes models make that CPython's message does not name.
fn help_for(src: &str, e: &PySyntaxError) -> Option<&'static str> {
    let at = src.get(e.range.start..).unwrap_or("");
    let line_start = src[..e.range.start.min(src.len())]
        .rfind('\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    let at_line_start = src[line_start..e.range.start.min(src.len())]
        .trim()
        .is_empty();
    if at.starts_with("```") || at.starts_with("~~~") {
        Some("A Markdown fence is left in the code: the cell must be plain Python")
    } else if at_line_start && (at.starts_with('%') || at.starts_with('!')) {
        Some("IPython magics and shell escapes are not Python: the cell is parsed with `ast.parse`")
    } else if e.message.contains("was never closed") || e.message.starts_with("unterminated") {
        Some("The code may have been cut off (the model stopped at its token limit)")
    } else {
        None
    }
}

/// Reports the syntax error of the cell, with CPython's message, once.
pub fn check(checker: &mut Checker) {
    if !checker.enabled(&SYNTAX_ERROR) {
        return;
    }
    if let Some(e) = diagnose::diagnose_table(checker.src, checker.nodes) {
        let mut d = Diagnostic::new(&SYNTAX_ERROR, e.range, e.message.clone());
        if let Some(help) = help_for(checker.src, &e) {
            d = d.with_help(help);
        }
        checker.report(d);
    }
}
