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

/// Indentation levels past which the part of a text that nests deeper is hidden from
/// tree-sitter. tree-sitter-python's scanner serializes its indent stack into a 1,024-byte
/// buffer and aborts the process (a C assertion) at about 512 levels (issue 6 T6-5). CPython
/// refuses more than 100 levels ("too many levels of indentation", reported by `SYN001` from
/// its own tokenizer), so nothing past this depth can have run.
const MAX_PARSED_INDENT: usize = 400;

/// The byte offset of the first line whose indentation would push the indent stack past
/// [`MAX_PARSED_INDENT`] levels, or `None`. Counts the indentation of every non-blank,
/// non-comment line as CPython's tokenizer does (a tab to the next multiple of 8), without
/// tracking strings or brackets: lines inside them can only make the count larger, so this
/// hides too much only from texts already over 400 levels in some reading.
fn indent_overflow(text: &str) -> Option<usize> {
    let mut stack: Vec<usize> = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let at = start;
        start += line.len();
        let mut col = 0;
        let mut rest = line;
        for (i, c) in line.char_indices() {
            match c {
                ' ' => col += 1,
                '\t' => col = (col / 8 + 1) * 8,
                '\x0c' => col = 0,
                _ => {
                    rest = &line[i..];
                    break;
                }
            }
        }
        if matches!(rest.as_bytes().first(), None | Some(b'#' | b'\n' | b'\r'))
            || rest.trim().is_empty()
        {
            continue;
        }
        while stack.last().is_some_and(|&top| col < top) {
            stack.pop();
        }
        if col > stack.last().copied().unwrap_or(0) {
            stack.push(col);
            if stack.len() > MAX_PARSED_INDENT {
                return Some(at);
            }
        }
    }
    None
}

fn parse_raw(text: &str, old: Option<&Tree>) -> Tree {
    match masked(text) {
        Some(m) => parse_unchecked(&m, None),
        None => parse_unchecked(text, old),
    }
}

/// `text` with the part past [`MAX_PARSED_INDENT`] levels hidden, or `None` when it nests
/// less deeply.
fn masked(text: &str) -> Option<String> {
    {
        let cut = indent_overflow(text)?;
        // Same length, same line breaks: offsets and positions of the visible part are kept.
        // The hidden part opens with a `0` at column 0 (the cut line starts with indentation,
        // so its first byte is whitespace): tree-sitter-python's scanner emits each of the up
        // to 400 DEDENTs as a zero-width token after skipping the whitespace up to the next
        // non-blank character; were the hidden part all blank, each DEDENT would rescan it to
        // the end (issue 6 T7-10: time quadratic in the hidden size, itself quadratic in the
        // nesting).
        let mut masked = String::with_capacity(text.len());
        masked.push_str(&text[..cut]);
        masked.extend(text[cut..].bytes().enumerate().map(|(i, b)| match b {
            b'\n' => '\n',
            _ if i == 0 => '0',
            _ => ' ',
        }));
        Some(masked)
    }
}

fn parse_unchecked(text: &str, old: Option<&Tree>) -> Tree {
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

/// The name an identifier's text stands for, as Python reads it: NFKC-normalised (PEP 3131),
/// so `ｒｕｎ` is `run` and `＿＿class＿＿` is `__class__`. Borrowed, without work, for ASCII
/// text (nearly every identifier).
pub fn ident_name(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() {
        std::borrow::Cow::Borrowed(text)
    } else {
        use unicode_normalization::UnicodeNormalization;
        std::borrow::Cow::Owned(text.nfkc().collect())
    }
}

/// [`ident_name`] of `node`'s text in `src`.
pub fn ident<'s>(node: Node, src: &'s str) -> std::borrow::Cow<'s, str> {
    ident_name(text(node, src))
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

    /// `n` nested `if` lines indented one space per level, then a call with a string (the
    /// shape that made tree-sitter-python's scanner abort the process; issue 6 T6-5).
    fn nested(n: usize) -> String {
        let mut s: String = (0..n)
            .map(|i| format!("{}if x:\n", " ".repeat(i)))
            .collect();
        s.push_str(&format!("{}await run(\"S.S.bad\")\n", " ".repeat(n)));
        s
    }

    /// Whether the tree holds a `string` node (a cursor walk: `to_sexp` is slow on deep trees).
    fn has_string(tree: &Tree) -> bool {
        let mut c = tree.walk();
        loop {
            if c.node().kind() == "string" {
                return true;
            }
            if c.goto_first_child() || c.goto_next_sibling() {
                continue;
            }
            loop {
                if !c.goto_parent() {
                    return false;
                }
                if c.goto_next_sibling() {
                    break;
                }
            }
        }
    }

    /// Issue 6 T7-10: the work tree-sitter does on a deeply nested text grows linearly with
    /// its size. Counts lexer steps (the parser's lex log: one line per character advanced or
    /// skipped, per token tried), not time. With the hidden part all blank, each of the 400
    /// DEDENTs rescanned it to the end: 145 steps per byte at depth 500 (under 4 now).
    #[test]
    fn deep_indentation_costs_linear_lexer_work() {
        for n in [500, 1_000, 2_000] {
            let deep = nested(n);
            let m = masked(&deep).expect("over the limit");
            assert_eq!(m.len(), deep.len());
            let steps = std::rc::Rc::new(std::cell::Cell::new(0usize));
            let mut p = parser();
            let counter = steps.clone();
            p.set_logger(Some(Box::new(move |t, _msg: &str| {
                if t == tree_sitter::LogType::Lex {
                    counter.set(counter.get() + 1);
                }
            })));
            let tree = p.parse(&m, None).expect("parsed");
            assert_eq!(tree.root_node().end_byte(), deep.len());
            let per_byte = steps.get() as f64 / deep.len() as f64;
            assert!(
                per_byte < 4.0,
                "depth {n}: {per_byte:.1} lexer steps per byte"
            );
        }
    }

    #[test]
    fn deep_indentation_is_parsed_up_to_the_limit_and_hidden_beyond() {
        // Under the limit nothing is hidden: the call's string is in the tree.
        let ok = nested(MAX_PARSED_INDENT);
        assert_eq!(indent_overflow(&ok), None);
        assert!(has_string(&parse(&ok, None)));
        for n in [MAX_PARSED_INDENT + 1, 600] {
            let deep = nested(n);
            let cut = indent_overflow(&deep).expect("over the limit");
            // The cut is the start of the line that opens level MAX_PARSED_INDENT + 1.
            let line = deep[cut..].lines().next().unwrap();
            assert_eq!(line.len() - line.trim_start().len(), MAX_PARSED_INDENT + 1);
            let tree = parse(&deep, None);
            assert_eq!(tree.root_node().end_byte(), deep.len());
            assert!(!has_string(&tree), "{n}");
        }
        assert!(indent_overflow(&nested(3_000)).is_some());
        // Blank and comment lines do not count; dedents pop.
        let flat = "if x:\n    # c\n\n    y = 1\nz = 2\n".repeat(1_000);
        assert_eq!(indent_overflow(&flat), None);
    }

    #[test]
    fn an_incremental_parse_after_a_hidden_region_matches_a_fresh_parse() {
        let deep = nested(600) + "print('tail')\n";
        let mut tree = parse(&deep, None);
        // Delete the first 500 lines in one edit: what was hidden is now parsed.
        let cut = deep
            .match_indices('\n')
            .nth(499)
            .map(|(i, _)| i + 1)
            .unwrap();
        let new = deep[cut..].to_string();
        let point = |s: &str| tree_sitter::Point::new(s.matches('\n').count(), 0);
        tree.edit(&tree_sitter::InputEdit {
            start_byte: 0,
            old_end_byte: cut,
            new_end_byte: 0,
            start_position: tree_sitter::Point::new(0, 0),
            old_end_position: point(&deep[..cut]),
            new_end_position: tree_sitter::Point::new(0, 0),
        });
        let incremental = parse(&new, Some(&tree));
        assert_eq!(
            incremental.root_node().to_sexp(),
            parse(&new, None).root_node().to_sexp()
        );
    }

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
