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
    let mut keywords = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "assignment" {
            if let Some(span) = misparsed_match(node, text) {
                spans.push(span);
                continue;
            }
        }
        if node.kind() == "type_alias_statement" {
            if let Some(at) = misparsed_type(node, text) {
                keywords.push(at);
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
    // Shapes the tree check above does not see (a subject of several elements, an assignment
    // in the case body: the grammar then recovers with `ERROR` nodes instead of an annotated
    // assignment): found from the text.
    let mut stars = Vec::new();
    for span in list_subject_spans(tree, text, &mut stars) {
        if !spans.contains(&span) {
            spans.push(span);
        }
    }
    if spans.is_empty() && keywords.is_empty() && stars.is_empty() {
        return None;
    }
    let mut bytes = text.as_bytes().to_vec();
    for (open, close) in spans {
        bytes[open] = b'(';
        bytes[close] = b')';
    }
    // `type(x).y = v` read as a type alias: `Type(x).y = v` is the same assignment to the
    // grammar, and the tree's ranges still show the original `type`.
    for at in keywords {
        bytes[at] = b'T';
    }
    // `match *xs, 1:`: starred subject elements (see `starred_subject_at`).
    for at in stars {
        bytes[at] = b'~';
    }
    // Only ASCII bytes were replaced by ASCII bytes: still UTF-8.
    String::from_utf8(bytes).ok()
}

/// The offset of the `type` keyword of a `type_alias_statement` that Python reads as an
/// expression statement: the soft keyword `type` starts a type alias only when a name follows
/// it (`type X = int`); `type(x).y = v` and `type[x] = v` assign to an attribute or item of
/// the builtin's result.
fn misparsed_type(node: Node, text: &str) -> Option<usize> {
    let at = node.start_byte();
    if text.get(at..at + 4)? != "type" {
        return None;
    }
    let next = text
        .get(at + 4..)?
        .bytes()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\x0c'))?;
    let name_start = next.is_ascii_alphabetic() || next == b'_' || next >= 0x80;
    (!name_start).then_some(at)
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

/// The `[`/`]` offsets of the list subjects of `match [...]:` statements that the tree does
/// not hold as `match` statements. A line whose first token is the soft keyword `match`
/// followed by `[` is a `match` statement when its logical line ends with `:` and the next
/// non-blank, non-comment line is indented deeper and starts with the soft keyword `case`:
/// Python has no other statement of that shape (an annotation `match[x]:` must be followed by
/// its type on the same logical line). `match` inside a string or comment is skipped, and so
/// is a `match` statement the tree already holds. The `*` offsets of starred subjects of such
/// lines (see [`starred_subject_at`]) are added to `stars`.
fn list_subject_spans(tree: &Tree, text: &str, stars: &mut Vec<usize>) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut line_start = 0usize;
    while line_start < bytes.len() {
        let line_end = memchr_nl(bytes, line_start);
        let indent = leading_ws(bytes, line_start, line_end);
        let kw = line_start + indent;
        if bytes[kw..line_end].starts_with(b"match") {
            if let Some(span) = list_subject_at(tree, text, kw, indent) {
                out.push(span);
            }
            stars.extend(starred_subject_at(tree, text, kw, indent));
        }
        line_start = line_end + 1;
    }
    out
}

/// The end of the line starting at `from` (the offset of its `\n`, or the text's length).
fn memchr_nl(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(bytes.len(), |i| from + i)
}

/// The number of spaces and tabs at the start of `bytes[start..end]`.
fn leading_ws(bytes: &[u8], start: usize, end: usize) -> usize {
    bytes[start..end]
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\x0c'))
        .count()
}

/// The subject brackets of a `match [...]:` statement whose keyword starts at byte `kw`
/// (`indent` columns in), when it is one the tree misread (see [`list_subject_spans`]).
fn list_subject_at(tree: &Tree, text: &str, kw: usize, indent: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut i = kw + "match".len();
    let ws = bytes[i..]
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    i += ws;
    if bytes.get(i) != Some(&b'[') {
        return None;
    }
    let open = i;
    // Scan the logical line: brackets, strings and comments; it must end with `:`.
    let mut depth = 0usize;
    let mut close = None;
    let mut last = 0u8;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'[' | b'(' | b'{' => depth += 1,
            b']' | b')' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 && close.is_none() {
                    close = Some(i);
                }
            }
            b'\'' | b'"' => {
                i = skip_string(bytes, i)?;
                last = b'"';
                continue;
            }
            b'#' => {
                i = memchr_nl(bytes, i);
                continue;
            }
            b'\\' => return None,
            b'\n' if depth == 0 => break,
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            last = b;
        }
        i += 1;
    }
    let close = close?;
    if last != b':' || depth != 0 || bytes.get(close) != Some(&b']') {
        return None;
    }
    (case_block_follows(bytes, i, indent) && unparsed_match(tree, kw)).then_some((open, close))
}

/// The offsets of the `*` of starred subject elements (`match *[json],:`, `match 1, *xs:`) of
/// the `match` statement whose keyword starts at byte `kw`, when the tree does not hold it as a
/// `match` statement: tree-sitter-python's grammar has no starred subjects, while CPython's
/// (`subject_expr: star_named_expression ',' star_named_expressions?`) accepts them. Each `*`
/// is rewritten to `~` (same length): the tree then holds a `match` statement whose subject
/// element is a unary expression, and the checkers read the `*` from the text at its start.
fn starred_subject_at(tree: &Tree, text: &str, kw: usize, indent: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut i = kw + "match".len();
    // `match*xs,:` is a match statement too; `matches` is a name.
    if bytes
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c >= 0x80)
    {
        return Vec::new();
    }
    let mut stars = Vec::new();
    let mut depth = 0usize;
    let mut last = 0u8;
    // At the start of a subject element (after `match` or a top-level `,`).
    let mut element_start = true;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' | b'\x0c' => {
                i += 1;
                continue;
            }
            b'*' if depth == 0 && element_start => {
                if bytes.get(i + 1) == Some(&b'*') {
                    return Vec::new();
                }
                stars.push(i);
            }
            b'[' | b'(' | b'{' => depth += 1,
            b']' | b')' | b'}' => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return Vec::new(),
            },
            b'\'' | b'"' => {
                let Some(end) = skip_string(bytes, i) else {
                    return Vec::new();
                };
                i = end;
                last = b'"';
                element_start = false;
                continue;
            }
            b'#' => {
                i = memchr_nl(bytes, i);
                continue;
            }
            b'\\' => return Vec::new(),
            b'\n' if depth == 0 => break,
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            last = b;
        }
        element_start = depth == 0 && b == b',';
        i += 1;
    }
    if stars.is_empty()
        || last != b':'
        || depth != 0
        || !case_block_follows(bytes, i, indent)
        || !unparsed_match(tree, kw)
    {
        return Vec::new();
    }
    stars
}

/// True when the next non-blank, non-comment line after the line ending at byte `eol` is
/// indented deeper than `indent` columns and starts with the soft keyword `case`.
fn case_block_follows(bytes: &[u8], eol: usize, indent: usize) -> bool {
    let mut line = eol + 1;
    loop {
        if line >= bytes.len() {
            return false;
        }
        let end = memchr_nl(bytes, line);
        let ind = leading_ws(bytes, line, end);
        let rest = &bytes[line + ind..end];
        let rest_trim = rest.strip_suffix(b"\r").unwrap_or(rest);
        if rest_trim.is_empty() || rest_trim.starts_with(b"#") {
            line = end + 1;
            continue;
        }
        let soft = rest.starts_with(b"case")
            && rest
                .get(4)
                .is_some_and(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c >= 0x80));
        return ind > indent && soft;
    }
}

/// True when the `match` at byte `kw` is not inside a string or comment and the tree does not
/// already hold an error-free `match` statement starting there.
fn unparsed_match(tree: &Tree, kw: usize) -> bool {
    let root = tree.root_node();
    let mut node = root.descendant_for_byte_range(kw, kw + "match".len());
    while let Some(n) = node {
        match n.kind() {
            "string" | "string_content" | "comment" => return false,
            // A `match` statement the grammar recovered with errors inside (`match 1, *xs:`)
            // is rewritten too.
            "match_statement" if n.start_byte() == kw => return n.has_error(),
            _ => {}
        }
        node = n.parent();
    }
    true
}

/// The offset just after the string literal whose opening quote is at `at` (single, double or
/// triple quotes; backslash escapes skipped). `None` when it is not closed.
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    let q = bytes[at];
    let triple = bytes.get(at..at + 3) == Some(&[q, q, q][..]);
    let mut i = at + if triple { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' if !triple => return None,
            c if c == q => {
                if !triple {
                    return Some(i + 1);
                }
                if bytes.get(i..i + 3) == Some(&[q, q, q][..]) {
                    return Some(i + 3);
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
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

    /// Round 4 G33: a subject of several elements, or an assignment in the case body, made the
    /// grammar recover with `ERROR` nodes (SYN001) instead of the annotated-assignment misread.
    #[test]
    fn list_subjects_of_any_shape_parse_as_match_statements() {
        for src in [
            "match [1, 2]:\n    case [a, b]:\n        total = a + b\n",
            "match [json, 0]:\n    case [m, _]:\n        m.dumps = lambda *a, **k: \"x\"\n",
            "match [json]:\n    case [m]:\n        x = m.codecs\nprint(x)\n",
            "match [0]:\n    case [n]:\n        c = json.codecs\n        b = 1\n",
            "match [1, 2] + xs:  # note\n    # comment\n\n    case [a, *rest]:\n        y = a\n    case _:\n        y = 0\n",
            "match [x for x in [json]]:\n    case [m]:\n        y = m\n",
            "match [\"a]\", {\"k\": [1]}]:\n    case [s, d]:\n        y = s\n",
            "match[1, 2]:\n    case [a, b]:\n        t = a\n",
            "if ok:\n    match [1, 2]:\n        case [a, b]:\n            match [a]:\n                case [c]:\n                    z = c\n",
            "match [\n    1,\n    2,\n]:\n    case [a, b]:\n        t = a\n",
        ] {
            let tree = crate::parse::parse(src, None);
            let s = tree.root_node().to_sexp();
            assert!(!tree.root_node().has_error(), "{src}\n{s}");
            let subjects = src.lines().filter(|l| l.trim_start().starts_with("match")).count();
            assert_eq!(s.matches("match_statement").count(), subjects, "{src}\n{s}");
        }
    }

    /// CPython accepts starred subject elements (`match *[json],:`, `match 1, *xs:`), which the
    /// grammar has no rule for (SYN001 before).
    #[test]
    fn starred_subjects_parse_as_match_statements() {
        for src in [
            "match *[json],:\n    case [m]:\n        m.dumps = f\n",
            "match *[json], 1:\n    case [m, _]:\n        y = m\n",
            "match 1, *xs:\n    case [_, m]:\n        y = m\n",
            "match*xs,:\n    case _:\n        pass\n",
            "match [a], *b:  # c\n    case _:\n        t = 1\n",
            "if ok:\n    match *(json, re),:\n        case (m, _):\n            z = m\n",
        ] {
            let tree = crate::parse::parse(src, None);
            let s = tree.root_node().to_sexp();
            assert!(!tree.root_node().has_error(), "{src}\n{s}");
            assert_eq!(s.matches("match_statement").count(), 1, "{src}\n{s}");
        }
        // Products and `**` are not starred subjects.
        for src in ["x = a * b\n", "match = 2\nmatch *b\n"] {
            let tree = crate::parse::parse(src, None);
            assert!(
                !tree.root_node().to_sexp().contains("match_statement"),
                "{src}"
            );
        }
    }

    #[test]
    fn type_calls_at_statement_start_are_expressions() {
        for src in [
            "type(bb).write = print\n",
            "type(r)[0] = 1\n",
            "type (x).y = 2\n",
            "if ok:\n    type(bb).write = f\n",
        ] {
            let s = sexp(src);
            assert!(!s.contains("type_alias_statement"), "{src}\n{s}");
            assert!(s.contains("(assignment left: ("), "{src}\n{s}");
        }
        let s = sexp("type X = int\ntype Y[T] = list[T]\n");
        assert_eq!(s.matches("type_alias_statement").count(), 2, "{s}");
    }

    #[test]
    fn match_like_text_that_is_not_a_list_subject_match_is_left_alone() {
        for src in [
            "s = \"\"\"\nmatch [1, 2]:\n    case [a, b]:\n        t = 1\n\"\"\"\n",
            "match = [1, 2]\nmatch[0] = 3\n",
            "match[0]: int = 1\ncase = 2\n",
            "matches = [1]\nmatches[0] = 2\n",
        ] {
            let tree = crate::parse::parse(src, None);
            assert!(!tree.root_node().has_error(), "{src}");
            assert!(
                !tree.root_node().to_sexp().contains("match_statement"),
                "{src}"
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
