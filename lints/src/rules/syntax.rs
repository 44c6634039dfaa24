//! `SYN`: parsing and extraction. Syntax errors come from tree-sitter `ERROR` and `MISSING`
//! nodes and are reported once per cell, at the first error, with a Python-like message.
//! Extraction findings (`SYN002`-`SYN004`) are produced by `extract`/`response`.

use super::Checker;
use crate::diagnostic::{Diagnostic, FixAvailability, Rule, RuleDoc, Severity};
use crate::parse;
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

/// The first syntax error of a tree, as a range and a Python-like message.
pub fn first_error(root: Node, src: &str) -> Option<(TextRange, String)> {
    if !root.has_error() {
        return None;
    }
    let node = parse::walk(root).find(|n| n.is_error() || n.is_missing())?;
    if node.is_missing() {
        let kind = node.kind();
        let message = match kind {
            ")" | "]" | "}" => {
                let open = match kind {
                    ")" => "(",
                    "]" => "[",
                    _ => "{",
                };
                format!("`{open}` was never closed")
            }
            ":" => "expected `:`".to_string(),
            _ => format!("expected `{kind}`"),
        };
        let start = node.start_byte();
        return Some((TextRange::new(start, start), message));
    }
    let start = node.start_byte();
    let line_end = src[start..]
        .find('\n')
        .map(|i| start + i)
        .unwrap_or(src.len());
    let end = node.end_byte().min(line_end).max(start);
    let text = parse::text(node, src).trim_start();
    let message = if let Some(open) = text.chars().next().filter(|c| matches!(c, '(' | '[' | '{')) {
        format!("`{open}` was never closed")
    } else if node.child_count() == 0 || text.is_empty() {
        "invalid syntax".to_string()
    } else {
        let token: String = text
            .chars()
            .take_while(|c| !c.is_whitespace())
            .take(20)
            .collect();
        format!("invalid syntax at `{token}`")
    };
    Some((TextRange::new(start, end), message))
}

/// Reports the first syntax error of the cell.
pub fn check(checker: &mut Checker) {
    if !checker.enabled(&SYNTAX_ERROR) {
        return;
    }
    if let Some((range, message)) = first_error(checker.tree.root_node(), checker.src) {
        checker.report(Diagnostic::new(
            &SYNTAX_ERROR,
            range,
            format!("Syntax error: {message}"),
        ));
    }
}
