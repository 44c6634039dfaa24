//! Soft-keyword statements that tree-sitter-python 0.25 misparses, and the same-length rewrite
//! that makes it parse them as Python does.
//!
//! `match [x]:` followed by a `case [y]:` clause (a one-element list subject and a pattern that
//! looks like a subscript) is read by the grammar as the annotated assignment
//! `match[x]: case[y]: ...`, the annotation starting on the next line, which Python never
//! allows. CPython parses it as a `match` statement with a list subject (PEP 634: `match` is a
//! soft keyword). [`match_subject_rewrite`] finds those misparses and returns the text with the
//! subject's brackets replaced by parentheses (`match (x):`), which the grammar parses as a
//! `match` statement. The rewrite keeps every byte offset, so node ranges and diagnostics stay
//! those of the original text; the subject node is then a `parenthesized_expression` whose
//! source text is the original `[x]`.

use tree_sitter::{Node, Tree};

/// The text to re-parse when `tree` (parsed from `text`) holds a `match [x]:` statement read
/// as an annotated assignment to `match[x]`, or `None` when it holds none. The returned text
/// has the same length as `text`.
pub fn match_subject_rewrite(tree: &Tree, text: &str) -> Option<String> {
    let mut spans = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "assignment" {
            if let Some(span) = misparsed_match(node, text) {
                spans.push(span);
                continue;
            }
        }
        // Statements only: a misparsed `match` is always a statement of a block.
        if matches!(
            node.kind(),
            "module"
                | "block"
                | "expression_statement"
                | "if_statement"
                | "elif_clause"
                | "else_clause"
                | "for_statement"
                | "while_statement"
                | "try_statement"
                | "except_clause"
                | "finally_clause"
                | "with_statement"
                | "function_definition"
                | "class_definition"
                | "decorated_definition"
                | "match_statement"
                | "case_clause"
                | "ERROR"
        ) {
            stack.extend(node.named_children(&mut cursor));
        }
    }
    if spans.is_empty() {
        return None;
    }
    let mut bytes = text.as_bytes().to_vec();
    for (open, close) in spans {
        bytes[open] = b'(';
        bytes[close] = b')';
    }
    // Only ASCII bytes were replaced by ASCII bytes: still UTF-8.
    String::from_utf8(bytes).ok()
}

/// The byte offsets of `[` and `]` of a `match[...]` subscript that is really a `match`
/// statement's subject: the assignment has a `type` and no value, its target is a subscript of
/// the bare name `match`, and the annotation starts on a later line than the `:` with nothing
/// but whitespace or a comment between them (a Python annotation cannot).
fn misparsed_match(node: Node, text: &str) -> Option<(usize, usize)> {
    let left = node.child_by_field_name("left")?;
    let ty = node.child_by_field_name("type")?;
    if node.child_by_field_name("right").is_some() || left.kind() != "subscript" {
        return None;
    }
    let value = left.child_by_field_name("value")?;
    if value.kind() != "identifier" || text.get(value.byte_range())? != "match" {
        return None;
    }
    let gap = text.get(left.end_byte()..ty.start_byte())?;
    let rest = gap.trim_start().strip_prefix(':')?;
    let blank_or_comment = rest.split('\n').all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#')
    });
    if !rest.contains('\n') || rest.contains('\\') || !blank_or_comment {
        return None;
    }
    let open = left.start_byte() + text.get(left.byte_range())?.find('[')?;
    let close = left.end_byte().checked_sub(1)?;
    (text.as_bytes().get(open) == Some(&b'[') && text.as_bytes().get(close) == Some(&b']'))
        .then_some((open, close))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sexp(src: &str) -> String {
        crate::parse::parse(src, None).root_node().to_sexp()
    }

    #[test]
    fn one_element_list_subject_parses_as_a_match_statement() {
        for src in [
            "match [1]:\n    case [m]:\n        print(m)\n",
            "match [typing]:\n    case [m]:\n        m.contextlib.os.system(\"id\")\n",
            "x = 1\nif x:\n    match [1]:\n        case [m]:\n            print(m)\n",
            "match [1]:  # one\n\n    case [m]:\n        print(m)\n",
            "def f():\n    match [a]:\n        case [b]:\n            match [b]:\n                case [c]:\n                    return c\n",
        ] {
            let s = sexp(src);
            assert!(s.contains("match_statement"), "{src}\n{s}");
            assert!(!s.contains("left: (subscript"), "{src}\n{s}");
            assert_eq!(
                s.matches("match_statement").count(),
                src.matches("match [").count(),
                "{src}\n{s}"
            );
        }
    }

    #[test]
    fn subscripts_and_annotations_of_a_name_match_are_left_alone() {
        for src in [
            "match[1]: int = 2\n",
            "match = [1]\nmatch[0] = 2\n",
            "match[0]: list[int]\n",
        ] {
            let tree = crate::parse::parse(src, None);
            assert_eq!(match_subject_rewrite(&tree, src), None, "{src}");
            assert!(!tree.root_node().to_sexp().contains("match_statement"));
        }
    }
}
