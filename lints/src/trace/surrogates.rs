//! Lone surrogate escapes (`"\ud800"`, a `\udc00` without its leading half) in JSON text.
//!
//! Python's `json` writes and reads them (`json.dumps` of text decoded with `surrogateescape`,
//! or a string cut in the middle of a surrogate pair), so traces recorded by Python agents can
//! hold them; serde_json rejects them because they are not Unicode text. Every reader rewrites
//! each lone escape `\uXXXX` as the escaped backslash `\\uxxxx` (hex in lower case, so that
//! `\uDC00` and `\udc00`, one code point, stay equal) before parsing: the string then holds the
//! six characters of the escape. That keeps the record (with a warning), keeps
//! distinct surrogates distinct (`'\udc00' != '\udc01'`, as in Python) and equal ones equal,
//! and leaves well-formed pairs (`\ud83d\ude00`) alone. No newline is inserted, so line
//! numbers stay those of the input (columns after a rewrite on the same line shift by one per
//! rewrite).

/// True when `text` may hold a surrogate escape (`\u` followed by `d`/`D` and `8`–`f`): a cheap
/// pre-check so that lines without one are not rewritten.
pub fn may_have_surrogate_escape(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memmem::find_iter(b, b"\\u").any(|i| {
        matches!(b.get(i + 2), Some(b'd' | b'D'))
            && matches!(b.get(i + 3), Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
    })
}

fn hex4(b: &[u8]) -> Option<u16> {
    let s = std::str::from_utf8(b.get(..4)?).ok()?;
    u16::from_str_radix(s, 16).ok()
}

/// `text` with every lone surrogate escape rewritten as described in the module docs, plus the
/// byte offsets (in `text`) of the rewritten escapes; `None` when there is none.
pub fn escape_lone_surrogates(text: &str) -> Option<(String, Vec<usize>)> {
    if !may_have_surrogate_escape(text) {
        return None;
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 8);
    let mut at = Vec::new();
    let mut copied = 0;
    let mut i = 0;
    while let Some(j) = memchr::memchr(b'\\', &b[i..]) {
        let k = i + j;
        match b.get(k + 1) {
            Some(b'u') => {
                let Some(u) = hex4(&b[k + 2..]) else {
                    i = k + 2;
                    continue;
                };
                let next_low = || {
                    (b.get(k + 6) == Some(&b'\\') && b.get(k + 7) == Some(&b'u'))
                        .then(|| hex4(&b[k + 8..]))
                        .flatten()
                        .is_some_and(|l| (0xDC00..=0xDFFF).contains(&l))
                };
                if (0xD800..=0xDBFF).contains(&u) && next_low() {
                    i = k + 12;
                } else if (0xD800..=0xDFFF).contains(&u) {
                    // Lower-case hex: `\uDC00` and `\udc00` are the same code point.
                    out.push_str(&text[copied..k]);
                    out.push_str(&format!("\\\\u{u:04x}"));
                    copied = k + 6;
                    at.push(k);
                    i = k + 6;
                } else {
                    i = k + 6;
                }
            }
            Some(_) => i = k + 2,
            None => break,
        }
    }
    if at.is_empty() {
        return None;
    }
    out.push_str(&text[copied..]);
    Some((out, at))
}

/// The warning text for a line with `n` rewritten escapes, the first at `escape`.
pub fn warning(escape: &str, n: usize) -> String {
    let more = if n > 1 {
        format!(" (and {} more on this line)", n - 1)
    } else {
        String::new()
    };
    format!(
        "lone surrogate escape `{escape}`{more} is not Unicode text; kept as the text `{escape}` (Python's json accepts it)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_escapes_are_rewritten_and_pairs_kept() {
        let (t, at) = escape_lone_surrogates(
            r#"{"a":"x\ud800y","b":"\ud83d\ude00","c":"\\ud800","d":"\uDC01"}"#,
        )
        .unwrap();
        assert_eq!(
            t,
            r#"{"a":"x\\ud800y","b":"\ud83d\ude00","c":"\\ud800","d":"\\udc01"}"#
        );
        assert_eq!(at.len(), 2);
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert_eq!(v["a"], "x\\ud800y");
        assert_eq!(v["b"], "\u{1F600}");
        assert_ne!(v["a"], v["d"]);
        assert!(escape_lone_surrogates(r#"{"a":"\u00e9 \\u"}"#).is_none());
        // A leading half followed by another leading half: both lone.
        let (t, _) = escape_lone_surrogates(r#""\ud83d\ud83d""#).unwrap();
        assert_eq!(t, r#""\\ud83d\\ud83d""#);
        // Truncated escapes are left for the parser to report.
        assert!(escape_lone_surrogates(r#""\ud8"#).is_none());
    }
}
