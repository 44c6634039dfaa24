//! A strict reader of *flat* JSON objects: members whose keys and string values have no
//! escapes and whose values are strings, numbers, `true`, `false` or `null`. Long traces are
//! full of such objects (`{"record_id": "r12"}`); reading them by hand is several times faster
//! than a general JSON parser. Anything else (nesting, escapes, invalid JSON) gives `None`, and
//! the caller parses the text with serde_json instead, so the two always agree on what they
//! accept.

/// The (key, raw value text) members of a flat object, inline up to eight (no allocation for
/// the small objects long traces are made of: this runs on every call's params).
pub type Members<'a> = smallvec::SmallVec<[(&'a str, &'a str); 8]>;

/// The members of the flat object at the start of `s` (after optional whitespace), as (key,
/// raw value text) pairs in order, and the byte length up to and including the closing brace.
/// `None` when the text there is not a flat object in the sense above.
pub fn object(s: &str) -> Option<(Members<'_>, usize)> {
    let b = s.as_bytes();
    let mut i = ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = ws(b, i + 1);
    let mut members = Members::new();
    if b.get(i) == Some(&b'}') {
        return Some((members, i + 1));
    }
    loop {
        let (k0, k1) = string(b, i)?;
        i = ws(b, k1);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        let v0 = i;
        i = match b.get(i)? {
            b'"' => string(b, i)?.1,
            b'-' | b'0'..=b'9' => number(b, i)?,
            b't' => literal(b, i, b"true")?,
            b'f' => literal(b, i, b"false")?,
            b'n' => literal(b, i, b"null")?,
            _ => return None,
        };
        // Quotes, digits and letters are ASCII: these are char boundaries.
        members.push((s.get(k0 + 1..k1 - 1)?, s.get(v0..i)?));
        i = ws(b, i);
        match b.get(i)? {
            b',' => i = ws(b, i + 1),
            b'}' => return Some((members, i + 1)),
            _ => return None,
        }
    }
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// The first byte at or after `i` that ends the plain part of a JSON string: a quote, a
/// backslash or a control character (below 0x20). Eight bytes at a time.
pub(crate) fn string_stop(b: &[u8], mut i: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = b.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let w = u64::from_le_bytes(w);
        // Classic "has a byte equal to / less than" tests: the lowest flagged byte of each
        // mask is a true hit (false positives only sit above a true hit), so the lowest bit
        // of their union is the first stop byte.
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        let hits = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (w.wrapping_sub(ONES * 0x20) & !w);
        let hits = hits & HIGH;
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// A string without escapes or control characters starting at `i`: (start, end after the
/// closing quote).
fn string(b: &[u8], i: usize) -> Option<(usize, usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let j = string_stop(b, i + 1)?;
    (b[j] == b'"').then_some((i, j + 1))
}

/// A JSON number starting at `i`; the index after it.
fn number(b: &[u8], mut i: usize) -> Option<usize> {
    let digits = |b: &[u8], mut i: usize| -> Option<usize> {
        let s = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > s).then_some(i)
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits(b, i)?,
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        i = digits(b, i + 1)?;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        i = digits(b, i)?;
    }
    // A number runs up to a delimiter.
    match b.get(i) {
        None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') => Some(i),
        _ => None,
    }
}

fn literal(b: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    (b.get(i..i + word.len())? == word).then_some(i + word.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_stop_finds_the_first_quote_backslash_or_control_byte() {
        let naive = |b: &[u8], i: usize| {
            (i..b.len()).find(|&j| b[j] == b'"' || b[j] == b'\\' || b[j] < 0x20)
        };
        let samples: Vec<Vec<u8>> = vec![
            b"abcdefgh\"".to_vec(),
            b"abc\\defghijklmnop".to_vec(),
            b"0123456789abcdef\n".to_vec(),
            "caf\u{e9} \u{1F600} \u{7f}\u{80}x\"".as_bytes().to_vec(),
            b"!!!!!!!!!!!!!!!!!!!!!!!!!".to_vec(),
            vec![0x21, 0x22, 0x1f, 0x5c],
            (0u8..=255).rev().collect(),
            vec![0xff; 17],
            vec![],
        ];
        for s in &samples {
            for i in 0..=s.len() {
                assert_eq!(string_stop(s, i), naive(s, i), "{s:?} from {i}");
            }
        }
    }

    #[test]
    fn accepts_exactly_what_serde_accepts_for_flat_objects() {
        let ok = [
            r#"{}"#,
            r#"{"record_id":"r12"}"#,
            r#" { "a" : -0.5e+3 , "b" : true, "c": null, "d": false, "e": 0, "f": "caf\u00e9x" } "#,
            "{\"a\": \"é ü\", \"b\": 10E2}",
            r#"{"a":1}"#,
        ];
        for t in ok {
            let parsed: Result<serde_json::Value, _> = serde_json::from_str(t);
            match object(t) {
                Some((members, len)) => {
                    assert!(parsed.is_ok(), "{t}");
                    assert!(t[len..].trim().is_empty(), "{t}");
                    let map = parsed.unwrap();
                    for (k, v) in members {
                        let want = &map[k];
                        let got: serde_json::Value = serde_json::from_str(v).unwrap();
                        assert_eq!(&got, want, "{t}: {k}");
                    }
                }
                // Escapes go to serde_json.
                None => assert!(t.contains('\\'), "{t}"),
            }
        }
        let declined = [
            r#"{"a": {"b": 1}}"#,
            r#"{"a": [1]}"#,
            r#"{"a": 01}"#,
            r#"{"a": 1.}"#,
            r#"{"a": .5}"#,
            r#"{"a": -}"#,
            r#"{"a": 1e}"#,
            r#"{"a": tru}"#,
            r#"{"a": 1,}"#,
            r#"{"a" 1}"#,
            r#"{"a": "x"#,
            "{\"a\": \"tab\there\"}",
            r#"{"a\"b": 1}"#,
            r#"{"a": 1x}"#,
            r#"[1]"#,
            r#""#,
        ];
        for t in declined {
            assert!(object(t).is_none(), "{t}");
        }
        // The length stops at the closing brace.
        let (m, len) = object(r#"{"a":"b"},"rest":1}"#).unwrap();
        assert_eq!((m.to_vec(), len), (vec![("a", "\"b\"")], 9));
    }
}
