//! String literals that tree-sitter-python scans differently from CPython, and a same-length
//! rewrite of the cell that both read alike.
//!
//! tree-sitter's external scanner rejects some escapes CPython accepts: `\N` in a bytes literal
//! is no escape for CPython (the backslash stays in the value) but makes tree-sitter's scanner
//! fail. Inside brackets the failure can leave the string open to the end of the cell
//! (`f(b"""\N""")` gets a `MISSING` string end), so every statement after it is read as string
//! content and never analysed, while CPython compiles and runs them (round 6 H18). Inside one
//! line it leaves an `ERROR` node within the string.
//!
//! A literal is mis-scanned when the smallest tree-sitter node spanning CPython's string token
//! ([`tokenize`](crate::rules::syntax::tokenize)) is not a `string` node with exactly the
//! token's range and no `ERROR` or `MISSING` node inside (tree-sitter may also give up on the
//! literal altogether and leave a bare `string_start` in an `ERROR` node). The rewrite replaces, inside each mis-scanned literal only, every
//! `\N` of a bytes literal by `\\` (an escape tree-sitter reads), and, when the literal has no
//! `\N`, its whole body by spaces (newlines and line-continuation backslashes kept). Byte
//! offsets are unchanged, so findings on the rewritten cell are at the right place in the
//! original one.

use super::tokenize::{tokenize, Kind, Token};
use tree_sitter::{Node, Tree};

/// At most this many literals are rewritten (each costs a re-parse of the cell).
const MAX_REWRITES: usize = 16;

/// The cell `src` (whose tree-sitter tree is rooted at `root`) with its mis-scanned string
/// literals rewritten (see the module doc) and its tree, or `None` when tree-sitter reads every
/// string literal as CPython does (always for a tree without errors: a mis-scan leaves an
/// `ERROR` or `MISSING` node).
///
/// Literals are rewritten one at a time, first to last, re-parsing after each: a mis-scan
/// changes how tree-sitter reads everything after it, so only the first disagreement is sure
/// to be one.
pub fn rewrite_mis_scanned_strings(root: Node, src: &str) -> Option<(String, Tree)> {
    if !root.has_error() {
        return None;
    }
    rewrite_with_tokens(root, src, &tokenize(src).tokens)
}

/// [`rewrite_mis_scanned_strings`] given CPython's tokens of `src` ([`tokenize`], up to its
/// first tokenizer error), for callers that have them already (`SYN001`).
pub fn rewrite_with_tokens(root: Node, src: &str, tokens: &[Token]) -> Option<(String, Tree)> {
    if !root.has_error() {
        return None;
    }
    // CPython's string tokens. The rewrites keep offsets and token boundaries, so the tokens
    // stay valid.
    let strings: Vec<(usize, usize)> = tokens
        .iter()
        .filter(|t| t.kind == Kind::String)
        .map(|t| (t.range.start, t.range.end))
        .collect();
    let mut out: Option<(Vec<u8>, Tree)> = None;
    let mut next = 0;
    for _ in 0..MAX_REWRITES {
        let cur = out.as_ref().map_or(root, |(_, t)| t.root_node());
        if !cur.has_error() {
            break;
        }
        // A token is read alike when the smallest node spanning it is a `string` node with
        // exactly its range and no error inside.
        let Some(i) = (next..strings.len()).find(|&i| {
            let (s, e) = strings[i];
            cur.descendant_for_byte_range(s, e).is_none_or(|n| {
                n.kind() != "string" || n.start_byte() != s || n.end_byte() != e || n.has_error()
            })
        }) else {
            break;
        };
        next = i + 1;
        let (s, e) = strings[i];
        let mut bytes = out
            .as_ref()
            .map_or_else(|| src.as_bytes().to_vec(), |(b, _)| b.clone());
        if !rewrite_literal(&mut bytes[s..e]) {
            continue;
        }
        // Only ASCII bytes were written over ASCII bytes (see `rewrite_literal`).
        let Ok(text) = std::str::from_utf8(&bytes) else {
            break;
        };
        let t = crate::parse::parse(text, None);
        out = Some((bytes, t));
    }
    let (bytes, tree) = out?;
    Some((String::from_utf8(bytes).ok()?, tree))
}

/// Rewrites one literal token in place (see the module doc); true when it changed. Writes only
/// ASCII bytes, and only over ASCII bytes.
fn rewrite_literal(tok: &mut [u8]) -> bool {
    let prefix = tok.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    let lower: Vec<u8> = tok[..prefix].to_ascii_lowercase();
    let raw = lower.contains(&b'r');
    let bytes = lower.contains(&b'b');
    let Some(&q) = tok.get(prefix) else {
        return false;
    };
    let triple = tok.len() >= prefix + 6 && tok[prefix + 1] == q && tok[prefix + 2] == q;
    let open = if triple { 3 } else { 1 };
    let (body_start, body_end) = (prefix + open, tok.len().saturating_sub(open));
    if body_start >= body_end {
        return false;
    }
    let body = &mut tok[body_start..body_end];
    let mut changed = false;
    if bytes && !raw {
        let mut i = 0;
        while i + 1 < body.len() {
            if body[i] == b'\\' {
                if body[i + 1] == b'N' {
                    body[i + 1] = b'\\';
                    changed = true;
                }
                i += 2;
            } else {
                i += 1;
            }
        }
    }
    if changed {
        return true;
    }
    for i in 0..body.len() {
        let keep = matches!(body[i], b'\n' | b'\r')
            || (body[i] == b'\\' && matches!(body.get(i + 1), Some(b'\n' | b'\r')))
            || !body[i].is_ascii();
        if !keep && body[i] != b' ' {
            body[i] = b' ';
            changed = true;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    fn rewrite(src: &str) -> Option<String> {
        rewrite_mis_scanned_strings(parse::parse(src, None).root_node(), src).map(|(s, _)| s)
    }

    #[test]
    fn bytes_named_escape_is_rewritten_and_the_rest_of_the_cell_parses() {
        let src = "f(b\"\"\"}}\\N\"\"\")\ng = getattr\n";
        let tree = parse::parse(src, None);
        assert!(tree.root_node().has_error());
        let fixed = rewrite(src).expect("mis-scanned literal");
        assert_eq!(fixed, "f(b\"\"\"}}\\\\\"\"\")\ng = getattr\n");
        assert_eq!(fixed.len(), src.len());
        assert!(!parse::parse(&fixed, None).root_node().has_error());
    }

    #[test]
    fn escaped_backslash_before_n_is_left_alone() {
        // `\\N` is an escaped backslash and a letter: no `\N` to rewrite; the literal is read
        // alike, so nothing changes.
        assert_eq!(rewrite("x = b'\\\\N'\n"), None);
        assert_eq!(rewrite("x = b'\\N'\ny = 1\n"), None);
    }

    #[test]
    fn clean_and_ordinarily_broken_cells_are_not_rewritten() {
        assert_eq!(rewrite("x = 'a'\n"), None);
        assert_eq!(rewrite("x = (1 +\n"), None);
        assert_eq!(rewrite("x = 'abc\n"), None);
    }
}
