//! tree-sitter-python parsing and small helpers over its syntax tree.
//!
//! tree-sitter always produces a tree: syntax errors become `ERROR` and `MISSING` nodes, so the
//! rules still run on whatever parsed (the `SYN001` rule reports the errors).

use tree_sitter::{Node, Parser, Tree};

/// A new parser for Python.
pub fn parser() -> Parser {
    let mut parser = Parser::new();
    // The grammar is compiled in and its ABI matches the runtime; this cannot fail.
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("tree-sitter-python grammar matches the tree-sitter runtime");
    parser
}

thread_local! {
    static PARSER: std::cell::RefCell<Parser> = std::cell::RefCell::new(parser());
}

/// Parses `text` (re-using `old` for an incremental parse when given; `old` must already have
/// been `edit`ed to match `text`). Uses a thread-local parser.
pub fn parse(text: &str, old: Option<&Tree>) -> Tree {
    let tree = parse_raw(text, old);
    // tree-sitter-python misreads `match [x]:` + `case [y]:` as an annotated assignment; re-parse
    // a same-length rewrite (subject brackets as parentheses) so the tree matches CPython's.
    if !text.contains("match") && !text.contains("type") {
        return tree;
    }
    let mut current = tree;
    let mut work: Option<String> = None;
    // Nested misparses surface one level per re-parse; a cell nests few `match` statements.
    for _ in 0..8 {
        let t = work.as_deref().unwrap_or(text);
        match crate::rules::syntax::soft_keywords::match_subject_rewrite(&current, t) {
            Some(fixed) if fixed.len() == text.len() => {
                current = parse_raw(&fixed, None);
                work = Some(fixed);
            }
            _ => break,
        }
    }
    current
}

fn parse_raw(text: &str, old: Option<&Tree>) -> Tree {
    PARSER.with(|p| {
        let mut p = p.borrow_mut();
        match p.parse(text, old) {
            Some(tree) => tree,
            None => {
                // Only happens after a cancellation or timeout, which we never set; reset and retry.
                p.reset();
                p.parse(text, None)
                    .unwrap_or_else(|| parser().parse("", None).expect("empty parse"))
            }
        }
    })
}

/// The source text of `node`.
pub fn text<'s>(node: Node, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// The range of `node` as a [`crate::source::TextRange`].
pub fn range(node: Node) -> crate::source::TextRange {
    crate::source::TextRange::new(node.start_byte(), node.end_byte())
}

/// Skips parentheses: `((x))` -> `x`.
pub fn unparenthesize(mut node: Node) -> Node {
    while node.kind() == "parenthesized_expression" {
        match node.named_child(0) {
            Some(inner) => node = inner,
            None => break,
        }
    }
    node
}

/// The prefix letters of a string literal (`f`, `rb`, ...), lower-cased.
pub fn string_prefix(node: Node, src: &str) -> String {
    let t = text(node, src);
    t.chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase()
}

/// The value of a constant string expression: a plain or raw string literal, an implicit
/// concatenation of such literals, or an f-string without replacement fields. `None` for bytes,
/// f-strings with interpolations, or anything else.
pub fn literal_str(node: Node, src: &str) -> Option<String> {
    let node = unparenthesize(node);
    match node.kind() {
        "string" => string_value(node, src),
        "concatenated_string" => {
            let mut out = String::new();
            let mut cursor = node.walk();
            // Comments between the parts are extras of the node, not parts.
            for child in node.named_children(&mut cursor).filter(|c| !c.is_extra()) {
                out.push_str(&string_value(child, src)?);
            }
            Some(out)
        }
        _ => None,
    }
}

fn string_value(node: Node, src: &str) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let prefix = string_prefix(node, src);
    if prefix.contains('b') {
        return None;
    }
    let raw = prefix.contains('r');
    let mut out = String::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "string_content" => {
                // Escape sequences are separate children in recent grammars; in raw strings they
                // are part of the content.
                let mut inner = child.walk();
                let mut last = child.start_byte();
                for esc in child.children(&mut inner) {
                    out.push_str(&src[last..esc.start_byte()]);
                    match esc.kind() {
                        "escape_sequence" if !raw => out.push_str(&unescape(text(esc, src))),
                        _ => out.push_str(text(esc, src)),
                    }
                    last = esc.end_byte();
                }
                out.push_str(&src[last..child.end_byte()]);
            }
            "escape_sequence" => {
                if raw {
                    out.push_str(text(child, src));
                } else {
                    out.push_str(&unescape(text(child, src)));
                }
            }
            "interpolation" => return None,
            _ => {}
        }
    }
    Some(out)
}

/// Decodes one Python escape sequence (`\n`, `\x41`, `\u00e9`, `\N{...}` is kept verbatim).
/// Text that does not start with a backslash (tree-sitter's error recovery can produce such
/// `escape_sequence` nodes) is returned unchanged.
pub fn unescape(esc: &str) -> String {
    let Some(body) = esc.strip_prefix('\\') else {
        return esc.to_string();
    };
    let mut chars = body.chars();
    match chars.next() {
        Some('n') => "\n".into(),
        Some('t') => "\t".into(),
        Some('r') => "\r".into(),
        Some('0') if body.len() == 1 => "\0".into(),
        Some('\\') => "\\".into(),
        Some('\'') => "'".into(),
        Some('"') => "\"".into(),
        Some('a') => "\x07".into(),
        Some('b') => "\x08".into(),
        Some('f') => "\x0c".into(),
        Some('v') => "\x0b".into(),
        Some('\n') => String::new(),
        Some('x' | 'u' | 'U') => u32::from_str_radix(&body[1..], 16)
            .ok()
            .and_then(char::from_u32)
            .map(String::from)
            .unwrap_or_else(|| esc.to_string()),
        Some(c) if c.is_digit(8) => u32::from_str_radix(body, 8)
            .ok()
            .and_then(char::from_u32)
            .map(String::from)
            .unwrap_or_else(|| esc.to_string()),
        _ => esc.to_string(),
    }
}

/// The dotted name of an `identifier` or `attribute` chain (`a.b.c`), or `None` when any part
/// is not a plain name (a call, a subscript...).
pub fn dotted_name(node: Node, src: &str) -> Option<String> {
    let node = unparenthesize(node);
    match node.kind() {
        "identifier" => Some(text(node, src).to_string()),
        "attribute" => {
            let object = node.child_by_field_name("object")?;
            let attr = node.child_by_field_name("attribute")?;
            Some(format!("{}.{}", dotted_name(object, src)?, text(attr, src)))
        }
        _ => None,
    }
}

/// Pre-order iterator over every node of a tree (named and anonymous).
pub fn walk(root: Node) -> impl Iterator<Item = Node> {
    let mut cursor = root.walk();
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let node = cursor.node();
        if !cursor.goto_first_child() {
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    done = true;
                    break;
                }
            }
        }
        Some(node)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_expr(src: &str) -> (Tree, String) {
        (parse(src, None), src.to_string())
    }

    #[test]
    fn literal_values() {
        for (src, want) in [
            ("'a.b'", Some("a.b")),
            ("\"a\" 'b'", Some("ab")),
            ("'''x\\ny'''", Some("x\ny")),
            ("r'a\\n'", Some("a\\n")),
            ("f'a{b}'", None),
            ("f'ab'", Some("ab")),
            ("b'x'", None),
            ("('k')", Some("k")),
        ] {
            let (tree, s) = first_expr(src);
            let expr = tree
                .root_node()
                .named_child(0)
                .unwrap()
                .named_child(0)
                .unwrap();
            assert_eq!(literal_str(expr, &s).as_deref(), want, "{src}");
        }
    }

    #[test]
    fn walk_visits_all() {
        let tree = parse("x = run('a')\n", None);
        let kinds: Vec<_> = walk(tree.root_node()).map(|n| n.kind()).collect();
        assert!(kinds.contains(&"call"));
        assert!(kinds.contains(&"string_content"));
    }

    #[test]
    fn unescape_never_slices_inside_a_character() {
        // Found by the property test of src/render: an edit put `\\\xff\n` inside an f-string.
        assert_eq!(unescape("\u{FFFD}\n\u{FFFD}"), "\u{FFFD}\n\u{FFFD}");
        assert_eq!(unescape("\\n"), "\n");
        assert_eq!(unescape(""), "");
        let src =
            "await run(\n    \"Cap.x\",\n    content=f\"Saved \\\u{FFFD}\nMerge {status}.\",\n)\n";
        let tree = parse(src, None);
        let mut stack = vec![tree.root_node()];
        while let Some(n) = stack.pop() {
            if n.kind() == "string" {
                let _ = literal_str(n, src);
            }
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
        }
    }
}
