//! The non-finite numbers `NaN`, `Infinity` and `-Infinity` in JSON text.
//!
//! Python's `json.dumps` writes them by default (`allow_nan=True`) and `json.loads` reads them,
//! so traces recorded by Python agents (Colony, tau-bench) can hold them; serde_json rejects
//! them, and `serde_json::Value` cannot hold a non-finite number. Every reader therefore
//! rewrites each such token *outside strings* to a *stand-in* JSON string before parsing: the
//! string of the marker [`MARK`] (`U+10F800`, the reserved marker of
//! [`super::surrogates`]) followed by the token (`"\u{10F800}NaN"`). Real text can never equal
//! a stand-in, because the lone-surrogate pass, which runs first, prefixes every real `U+10F800`
//! with another marker.
//!
//! The guardrails read a stand-in as the float it stands for ([`number_of`]), with Python's
//! semantics: `NaN` equals nothing (not even another `NaN`: `json.loads` makes distinct float
//! objects), `Infinity` equals `Infinity`. The rewrite inserts no newline (line numbers stay
//! those of the input) and grows the text by [`GROWTH`] bytes per token; [`original_column`]
//! maps a column of the rewritten text back to the input, so located messages keep the input's
//! positions.

use super::surrogates::RESERVED_MARK as MARK;

/// Bytes a rewritten token grows by: two quotes and the 4-byte marker.
pub const GROWTH: usize = 2 + 4;

/// The stand-in strings (the value of the JSON string, not its text) and the float each means.
const TOKENS: [(&str, f64); 3] = [
    ("NaN", f64::NAN),
    ("Infinity", f64::INFINITY),
    ("-Infinity", f64::NEG_INFINITY),
];

/// The float a stand-in string stands for; `None` for any other string.
pub fn number_of_str(s: &str) -> Option<f64> {
    let rest = s.strip_prefix(MARK)?;
    TOKENS.iter().find(|(t, _)| *t == rest).map(|&(_, f)| f)
}

/// The float a stand-in JSON value stands for; `None` for any other value.
pub fn number_of(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::String(s) => number_of_str(s),
        _ => None,
    }
}

/// The digits (with a leading `-` when negative) of a *big-integer stand-in*: an integer
/// literal beyond the 64-bit range (`123456789012345678901234567890`), which `f64` would round,
/// rewritten by [`rewrite_big_ints`] to the marker followed by its digits, so the guardrails
/// compare it exactly, as Python's `int` does (issue 6 T6-12). `None` for any other string.
pub fn big_int_of_str(s: &str) -> Option<&str> {
    let rest = s.strip_prefix(MARK)?;
    let digits = rest.strip_prefix('-').unwrap_or(rest);
    (!digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())).then_some(rest)
}

/// Digits in a row from which an integer literal may lie beyond the 64-bit range
/// (`u64::MAX` has 20 digits, `i64::MIN` 19 after its sign).
const BIG_DIGITS: usize = 19;

/// A cheap pre-check: true when `text` holds a run of at least [`BIG_DIGITS`] digits.
pub fn may_have_big_int(text: &str) -> bool {
    let mut run = 0;
    for &c in text.as_bytes() {
        if c.is_ascii_digit() {
            run += 1;
            if run >= BIG_DIGITS {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// `text` with every integer literal outside strings that fits neither `i64` nor `u64`
/// rewritten to its big-integer stand-in (a JSON string: the marker, then the literal), so
/// that parsing keeps it exact ([`big_int_of_str`]); `None` when there is none. Literals with a
/// fraction or an exponent are floats in Python too and are left alone. Inserts no newline.
pub fn rewrite_big_ints(text: &str) -> Option<String> {
    if !may_have_big_int(text) {
        return None;
    }
    let b = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut scan = OutsideStrings::new(b, |s| {
        s.iter()
            .position(|&c| c == b'"' || c == b'-' || c.is_ascii_digit())
    });
    while let Some(i) = scan.next() {
        let boundary = i == 0
            || !(b[i - 1].is_ascii_alphanumeric() || matches!(b[i - 1], b'_' | b'.' | b'-' | b'+'));
        let start = i;
        let mut j = i + usize::from(b[i] == b'-');
        let digits_from = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        let is_int = j > digits_from
            && !matches!(b.get(j), Some(b'.' | b'e' | b'E'))
            // JSON has no leading zeros (`0123` is an error either way).
            && !(b[digits_from] == b'0' && j - digits_from > 1);
        let lit = &text[start..j];
        if boundary
            && is_int
            && j - digits_from >= BIG_DIGITS
            && lit.parse::<i64>().is_err()
            && lit.parse::<u64>().is_err()
        {
            out.push_str(&text[copied..start]);
            out.push('"');
            out.push(MARK);
            out.push_str(lit);
            out.push('"');
            copied = j;
        }
        // Past the whole number (fraction and exponent included).
        let mut k = j;
        while k < b.len()
            && (b[k].is_ascii_digit() || matches!(b[k], b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            k += 1;
        }
        scan.resume_at(k.max(i + 1));
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Python's `str()` of the float a stand-in stands for (`nan`, `inf`, `-inf`), as a regex
/// predicate sees the value; `None` for any other string.
pub fn python_str(s: &str) -> Option<&'static str> {
    let f = number_of_str(s)?;
    Some(if f.is_nan() {
        "nan"
    } else if f > 0.0 {
        "inf"
    } else {
        "-inf"
    })
}

/// `s` (text read from a trace, or a message composed from such text) with every stand-in
/// written back as the token Python's `json` writes for it (`NaN`, `Infinity`, `-Infinity`),
/// so a report never shows the internal marker; a real character of the reserved range, which
/// the readers prefix with the marker ([`super::surrogates`]), is shown as itself, once.
/// Borrowed (no copy) when `s` holds no marker.
pub fn display(s: &str) -> std::borrow::Cow<'_, str> {
    let mark = MARK.len_utf8();
    let mut buf = [0u8; 4];
    let mark_bytes: &[u8] = MARK.encode_utf8(&mut buf).as_bytes();
    let b = s.as_bytes();
    if memchr::memmem::find(b, mark_bytes).is_none() {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    let mut i = 0;
    while let Some(j) = memchr::memmem::find(&b[i..], mark_bytes) {
        let at = i + j;
        let rest = &s[at + mark..];
        if let Some(c) = rest
            .chars()
            .next()
            .filter(|&c| (super::surrogates::STAND_IN_BASE..=MARK as u32).contains(&(c as u32)))
        {
            // A real character of the reserved range, marked: shown as itself, once.
            out.push_str(&s[copied..at]);
            out.push(c);
            i = at + mark + c.len_utf8();
            copied = i;
            continue;
        }
        // A big-integer stand-in: its digits.
        let digits = rest
            .strip_prefix('-')
            .unwrap_or(rest)
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if digits > 0 {
            let len = digits + usize::from(rest.starts_with('-'));
            out.push_str(&s[copied..at]);
            out.push_str(&rest[..len]);
            i = at + mark + len;
            copied = i;
            continue;
        }
        // The longest token first: `-Infinity` before `Infinity` cannot clash (different first
        // byte), and `NaN` is no prefix of another.
        match TOKENS.iter().map(|(t, _)| *t).find(|t| rest.starts_with(t)) {
            Some(t) => {
                out.push_str(&s[copied..at]);
                out.push_str(t);
                i = at + mark + t.len();
                copied = i;
            }
            None => i = at + mark,
        }
    }
    if copied == 0 && out.is_empty() {
        return std::borrow::Cow::Borrowed(s);
    }
    out.push_str(&s[copied..]);
    std::borrow::Cow::Owned(out)
}

/// [`display`] in place: `s` is replaced only when it holds a stand-in.
pub fn display_in_place(s: &mut String) {
    if let std::borrow::Cow::Owned(o) = display(s) {
        *s = o;
    }
}

/// `v` (a value read from a trace) with every stand-in string written back as the JSON string
/// of its token (`"Infinity"`) and every other string as [`display`] shows it, so a JSON report
/// never carries the internal marker (docs/trace-format.md: JSON has no non-finite numbers, so
/// the token is written as a string). Object keys are shown the same way.
pub fn display_value(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) => Value::String(display(s).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(display_value).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (display(k).into_owned(), display_value(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Compact JSON text of `v` (a value read from a trace) as Python's `json.dumps` writes the
/// same value: a stand-in is its bare token (`Infinity`, `-Infinity`, `NaN`), not a string,
/// and other strings are shown as [`display`] shows them.
pub fn display_json(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::String(s) => match number_of_str(s).is_some() || big_int_of_str(s).is_some() {
            true => display(s).into_owned(),
            false => Value::String(display(s).into_owned()).to_string(),
        },
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(display_json).collect();
            format!("[{}]", items.join(","))
        }
        Value::Object(o) => {
            let items: Vec<String> = o
                .iter()
                .map(|(k, x)| {
                    format!(
                        "{}:{}",
                        Value::String(display(k).into_owned()),
                        display_json(x)
                    )
                })
                .collect();
            format!("{{{}}}", items.join(","))
        }
        other => other.to_string(),
    }
}

/// A cheap pre-check: true when `text` may hold a bare token.
pub fn may_have(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memmem::find(b, b"NaN").is_some() || memchr::memmem::find(b, b"Infinity").is_some()
}

/// What a whole document may need before parsing, from one scan: `(surrogates, nonfinite)`,
/// true when it may hold a surrogate escape or reserved character (the lone-surrogate pass of
/// [`super::surrogates`] must run) and when it may hold a `NaN` / `Infinity` token (the
/// [`rewrite`] pass must run). The same answers as [`super::surrogates::may_have_surrogate_escape`]
/// and [`may_have`], but both from one multi-pattern search (a SIMD search for the rare
/// substrings rather than a stop at every backslash: JSON text is full of `\n` and `\"`), so a
/// document that needs neither pass, the common case, costs one fast scan and no copy.
pub fn document_needs(text: &str) -> (bool, bool) {
    // The packed (SIMD, Teddy) searcher: the general automaton's search was measured 3x
    // slower than the two pre-checks it replaces on the tau-bench document.
    static SEARCH: std::sync::OnceLock<Option<aho_corasick::packed::Searcher>> =
        std::sync::OnceLock::new();
    let search = SEARCH.get_or_init(|| {
        let mut pats: Vec<Vec<u8>> = Vec::new();
        for d in [b'd', b'D'] {
            for h in b"89abcdefABCDEF" {
                pats.push(vec![b'\\', b'u', d, *h]);
            }
        }
        pats.push(b"\xF4\x8F".to_vec());
        pats.push(b"NaN".to_vec());
        pats.push(b"Infinity".to_vec());
        aho_corasick::packed::Searcher::new(pats.iter())
    });
    let Some(search) = search else {
        return (
            super::surrogates::may_have_surrogate_escape(text),
            may_have(text),
        );
    };
    // Pattern ids: 0..28 surrogate escapes, 28 the reserved lead bytes, 29.. the tokens.
    let (mut sur, mut nf) = (false, false);
    for m in search.find_iter(text.as_bytes()) {
        if m.pattern().as_usize() < 29 {
            sur = true;
        } else {
            nf = true;
        }
        if sur && nf {
            break;
        }
    }
    (sur, nf)
}

/// The offsets of the bytes of JSON text that lie outside strings and that a search selects,
/// in order, for the scans of this module ([`rewrite`], [`overflow_to_infinity`]). `find` gives
/// the offset, in the slice it is given, of the first byte that is a quote or a byte the scan
/// wants (`None`: there is none); a quote opens a string, which is skipped to its closing quote
/// (a backslash escapes the byte after it; an unclosed string runs to the end of the text).
/// After an offset is yielded the scan goes on from the next byte, or from where
/// [`OutsideStrings::resume_at`] says (past a token the caller consumed).
struct OutsideStrings<'a, F> {
    b: &'a [u8],
    /// Where the search goes on.
    i: usize,
    find: F,
}

impl<'a, F: Fn(&[u8]) -> Option<usize>> OutsideStrings<'a, F> {
    fn new(b: &'a [u8], find: F) -> Self {
        Self { b, i: 0, find }
    }

    /// Goes on from byte `i` (the end of what the caller consumed).
    fn resume_at(&mut self, i: usize) {
        self.i = i;
    }
}

impl<F: Fn(&[u8]) -> Option<usize>> Iterator for OutsideStrings<'_, F> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let b = self.b;
        while self.i < b.len() {
            let Some(j) = (self.find)(&b[self.i..]) else {
                self.i = b.len();
                return None;
            };
            let at = self.i + j;
            if b[at] != b'"' {
                self.i = at + 1;
                return Some(at);
            }
            // Skip the string: to its closing quote, jumping over escapes.
            let mut k = at + 1;
            loop {
                match memchr::memchr2(b'"', b'\\', &b[k.min(b.len())..]) {
                    None => {
                        k = b.len();
                        break;
                    }
                    Some(m) if b[k + m] == b'\\' => k += m + 2,
                    Some(m) => {
                        k += m + 1;
                        break;
                    }
                }
            }
            self.i = k;
        }
        None
    }
}

/// `text` with every `NaN`, `Infinity` and `-Infinity` token outside strings rewritten to its
/// stand-in, and the byte offsets (in the rewritten text) where the stand-ins start; `None`
/// when there is none. Like Python's scanner, a token is recognised where a value may start
/// (not inside a word such as `xNaN`); what follows is left to the parser.
pub fn rewrite(text: &str) -> Option<(String, Vec<usize>)> {
    if !may_have(text) {
        return None;
    }
    let b = text.as_bytes();
    let mut out = String::new();
    let mut at = Vec::new();
    let mut copied = 0;
    // Jumps from one byte that matters to the next: a token's first letter outside strings.
    let mut scan = OutsideStrings::new(b, |s| memchr::memchr3(b'"', b'N', b'I', s));
    while let Some(i) = scan.next() {
        // A token where a value may start (not inside a word); `-Infinity` with its sign
        // (and, as a plain scan would, `Infinity` after a `-` that starts no token).
        let at_start = |start: usize| {
            let boundary =
                start == 0 || !(b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_');
            if !boundary {
                return None;
            }
            TOKENS
                .iter()
                .map(|(t, _)| *t)
                .find(|t| b[start..].starts_with(t.as_bytes()))
        };
        let signed = (b[i] == b'I' && i > 0 && b[i - 1] == b'-')
            .then(|| at_start(i - 1).map(|t| (i - 1, t)))
            .flatten();
        if let Some((start, t)) = signed.or_else(|| at_start(i).map(|t| (i, t))) {
            out.push_str(&text[copied..start]);
            at.push(out.len());
            out.push('"');
            out.push(MARK);
            out.push_str(t);
            out.push('"');
            copied = start + t.len();
            scan.resume_at(copied);
        }
    }
    if at.is_empty() {
        return None;
    }
    out.push_str(&text[copied..]);
    Some((out, at))
}

/// True when `e` is serde_json's rejection of a number beyond `f64` range (`1e400`), which
/// Python's `json` reads as `inf` ([`overflow_to_infinity`]).
pub fn is_out_of_range(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("number out of range")
}

/// `text` with every number outside strings whose magnitude exceeds `f64` (`1e400`, `-1e400`,
/// a 400-digit integer) replaced by the token `Infinity` / `-Infinity`, which [`rewrite`] then
/// turns into its stand-in: Python's `json.loads` reads such a number as `inf` (an integer
/// literal as an exact `int`, which has no `f64` counterpart either, so it reads as `inf` here
/// too: issue 6 T5-2, T5-3). `None` when there is none. Only for text serde_json rejected with
/// "number out of range" (never on the common path); a column reported later on the same line
/// may be off by the length difference of the replaced numbers.
pub fn overflow_to_infinity(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut scan = OutsideStrings::new(b, |s| {
        s.iter()
            .position(|&c| c == b'"' || c == b'-' || c.is_ascii_digit())
    });
    while let Some(i) = scan.next() {
        let c = b[i];
        let boundary =
            i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.');
        if !boundary {
            continue;
        }
        let start = i;
        let mut j = i + usize::from(c == b'-');
        while j < b.len()
            && (b[j].is_ascii_digit() || matches!(b[j], b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            j += 1;
        }
        let token = &text[start..j];
        if token.parse::<f64>().is_ok_and(f64::is_infinite) {
            out.push_str(&text[copied..start]);
            out.push_str(if c == b'-' { "-Infinity" } else { "Infinity" });
            copied = j;
        }
        scan.resume_at(j.max(i + 1));
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// The one-based column in the input of one-based column `column` of the rewritten line that
/// starts at byte `line_start` of the rewritten text, given the stand-in offsets `at` from
/// [`rewrite`]. A column inside a stand-in maps to the token's first byte.
pub fn original_column(at: &[usize], line_start: usize, column: usize) -> usize {
    let offset = line_start + column.saturating_sub(1);
    let mut col = column;
    for &a in at.iter().filter(|&&a| a >= line_start && a < offset) {
        col -= (offset - a).min(GROWTH);
    }
    col.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 6 T6-12: integers beyond 64 bits become exact stand-ins, outside strings only;
    /// floats, 64-bit integers and digits inside strings are left alone; reports show digits.
    #[test]
    fn big_integers_are_kept_exact() {
        let text = r#"{"a": 123456789012345678901234567890, "b": [-99999999999999999999, 18446744073709551615, -9223372036854775808], "c": "123456789012345678901234567890", "d": 1.23456789012345678901e5, "e": 12345678901234567890123e2}"#;
        let out = rewrite_big_ints(text).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            big_int_of_str(v["a"].as_str().unwrap()),
            Some("123456789012345678901234567890")
        );
        assert_eq!(
            big_int_of_str(v["b"][0].as_str().unwrap()),
            Some("-99999999999999999999")
        );
        assert_eq!(v["b"][1].as_u64(), Some(u64::MAX));
        assert_eq!(v["b"][2].as_i64(), Some(i64::MIN));
        assert_eq!(v["c"].as_str(), Some("123456789012345678901234567890"));
        assert!(v["d"].is_f64() && v["e"].is_f64());
        assert_eq!(display_json(&v["a"]), "123456789012345678901234567890");
        assert_eq!(
            display(v["b"][0].as_str().unwrap()),
            "-99999999999999999999"
        );
        assert_eq!(rewrite_big_ints(r#"{"a": 1234567890123456789}"#), None);
    }

    #[test]
    fn tokens_outside_strings_only() {
        let (t, at) =
            rewrite(r#"{"a": NaN, "b": [Infinity,-Infinity], "c": "NaN Infinity"}"#).unwrap();
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert!(number_of(&v["a"]).unwrap().is_nan());
        assert_eq!(number_of(&v["b"][0]), Some(f64::INFINITY));
        assert_eq!(number_of(&v["b"][1]), Some(f64::NEG_INFINITY));
        assert_eq!(v["c"], "NaN Infinity");
        assert_eq!(number_of(&v["c"]), None);
        assert_eq!(at.len(), 3);
        assert_eq!(rewrite(r#"{"a": "x\"NaN"}"#), None);
        assert_eq!(rewrite(r#"{"a": 1}"#), None);
        // Not a token inside a word: left for the parser to reject.
        assert!(rewrite("[xNaN]").is_none());
    }

    /// Issue 6 T5-2: numbers beyond f64 outside strings become `Infinity`, as Python reads them.
    #[test]
    fn overflowing_numbers_read_as_infinity() {
        let t = overflow_to_infinity(
            r#"{"a": 1e400, "b": [-1E+400, 2.5, 1e-400], "c": "1e400", "d": 1e308}"#,
        )
        .unwrap();
        assert_eq!(
            t,
            r#"{"a": Infinity, "b": [-Infinity, 2.5, 1e-400], "c": "1e400", "d": 1e308}"#
        );
        let (t, _) = rewrite(&t).unwrap();
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert_eq!(number_of(&v["a"]), Some(f64::INFINITY));
        assert_eq!(number_of(&v["b"][0]), Some(f64::NEG_INFINITY));
        assert_eq!(v["c"], "1e400");
        assert_eq!(
            overflow_to_infinity(r#"{"a": 1e300, "b": "x\"1e999"}"#),
            None
        );
        let e = serde_json::from_str::<serde_json::Value>("[1e400]").unwrap_err();
        assert!(is_out_of_range(&e));
    }

    /// The plain byte-by-byte scan the jumping one replaced.
    fn reference(text: &str) -> Option<(String, Vec<usize>)> {
        let b = text.as_bytes();
        let (mut out, mut at, mut copied, mut i, mut in_string) =
            (String::new(), Vec::new(), 0, 0, false);
        while i < b.len() {
            let c = b[i];
            if in_string {
                match c {
                    b'\\' => i += 2,
                    b'"' => {
                        in_string = false;
                        i += 1;
                    }
                    _ => i += 1,
                }
                continue;
            }
            if c == b'"' {
                in_string = true;
                i += 1;
                continue;
            }
            let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            let token = boundary
                .then(|| {
                    TOKENS
                        .iter()
                        .map(|(t, _)| *t)
                        .find(|t| b[i..].starts_with(t.as_bytes()))
                })
                .flatten();
            match token {
                Some(t) => {
                    out.push_str(&text[copied..i]);
                    at.push(out.len());
                    out.push('"');
                    out.push(MARK);
                    out.push_str(t);
                    out.push('"');
                    i += t.len();
                    copied = i;
                }
                None => i += 1,
            }
        }
        if at.is_empty() {
            return None;
        }
        out.push_str(&text[copied..]);
        Some((out, at))
    }

    /// The jumping scan rewrites exactly what the plain scan did, on every text up to 4 atoms
    /// over the alphabet that matters (quotes, backslashes, signs, word characters, tokens).
    #[test]
    fn jumping_scan_equals_the_plain_scan() {
        let atoms = [
            "\"", "\\", "-", "x", "N", "I", "NaN", "Infinity", ":", " ", "aN", "nfinity",
        ];
        let mut texts = vec![String::new()];
        let mut checked = 0;
        for _ in 0..4 {
            let mut next = Vec::new();
            for t in &texts {
                for a in atoms {
                    let s = format!("{t}{a}");
                    if may_have(&s) {
                        assert_eq!(rewrite(&s), reference(&s), "{s:?}");
                        checked += 1;
                    }
                    next.push(s);
                }
            }
            texts = next;
        }
        assert!(checked > 5_000, "{checked}");
    }

    /// The byte-by-byte scan [`overflow_to_infinity`] used before it shared [`OutsideStrings`].
    fn overflow_reference(text: &str) -> Option<String> {
        let b = text.as_bytes();
        let (mut out, mut copied, mut i, mut in_string) = (String::new(), 0, 0, false);
        while i < b.len() {
            let c = b[i];
            if in_string {
                match c {
                    b'\\' => i += 2,
                    b'"' => {
                        in_string = false;
                        i += 1;
                    }
                    _ => i += 1,
                }
                continue;
            }
            if c == b'"' {
                in_string = true;
                i += 1;
                continue;
            }
            let boundary = i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.');
            if boundary && (c == b'-' || c.is_ascii_digit()) {
                let start = i;
                let mut j = i + usize::from(c == b'-');
                while j < b.len()
                    && (b[j].is_ascii_digit() || matches!(b[j], b'.' | b'e' | b'E' | b'+' | b'-'))
                {
                    j += 1;
                }
                if text[start..j].parse::<f64>().is_ok_and(f64::is_infinite) {
                    out.push_str(&text[copied..start]);
                    out.push_str(if c == b'-' { "-Infinity" } else { "Infinity" });
                    copied = j;
                }
                i = j.max(i + 1);
                continue;
            }
            i += 1;
        }
        if copied == 0 {
            return None;
        }
        out.push_str(&text[copied..]);
        Some(out)
    }

    /// The shared outside-strings scan finds the same numbers as the plain scan did, on every
    /// text up to 4 atoms over the alphabet that matters (quotes, backslashes, signs, word
    /// characters, dots, huge and ordinary numbers).
    #[test]
    fn overflow_scan_equals_the_plain_scan() {
        let atoms = [
            "\"", "\\", "-", "x", ".", "1e400", "9", "e", " ", "1E+999", ",",
        ];
        let mut texts = vec![String::new()];
        let (mut checked, mut found) = (0, 0);
        for _ in 0..4 {
            let mut next = Vec::new();
            for t in &texts {
                for a in atoms {
                    let s = format!("{t}{a}");
                    let got = overflow_to_infinity(&s);
                    assert_eq!(got, overflow_reference(&s), "{s:?}");
                    checked += 1;
                    found += usize::from(got.is_some());
                    next.push(s);
                }
            }
            texts = next;
        }
        assert!(checked > 10_000 && found > 1_000, "{checked} {found}");
    }

    #[test]
    fn document_needs_agrees_with_the_two_pre_checks() {
        for t in [
            "",
            "{\"a\": 1}",
            "{\"a\": NaN}",
            "[\"x\\ud800\"]",
            "[\"x\\uDBFF\", Infinity]",
            "[\"\\u00e9\\n\\\"\"]",
            "[\"\u{10F000}\"]",
            "[\"\u{100000}\"]",
            "[\"NaN inside\"]",
        ] {
            assert_eq!(
                document_needs(t),
                (
                    crate::trace::surrogates::may_have_surrogate_escape(t),
                    may_have(t)
                ),
                "{t:?}"
            );
        }
    }

    #[test]
    fn columns_map_back_to_the_input() {
        let input = r#"{"a": NaN, "b": Infinity, "c": tru}"#;
        let (t, at) = rewrite(input).unwrap();
        let e = serde_json::from_str::<serde_json::Value>(&t).unwrap_err();
        // The same error in the same-length input without tokens.
        let plain = input.replace("NaN", "1.0").replace("Infinity", "12345678");
        let want = serde_json::from_str::<serde_json::Value>(&plain)
            .unwrap_err()
            .column();
        assert_eq!(original_column(&at, 0, e.column()), want);
        assert_eq!(original_column(&at, 0, 3), 3);
    }

    #[test]
    fn display_writes_the_tokens_back() {
        let m = MARK;
        assert_eq!(display(&format!("{m}NaN")), "NaN");
        assert_eq!(
            display(&format!("'a.{m}Infinity' and {m}-Infinity, {m}x")),
            format!("'a.Infinity' and -Infinity, {m}x")
        );
        // A real marker character (marked) followed by the text `NaN` is that text.
        assert_eq!(display(&format!("{m}{m}NaN")), format!("{m}NaN"));
        assert_eq!(display(&format!("{m}\u{10F000}")), "\u{10F000}");
        // A lone-surrogate stand-in (not marked) is left alone.
        assert_eq!(display("a\u{10F000}"), "a\u{10F000}");
        assert!(matches!(
            display("plain NaN"),
            std::borrow::Cow::Borrowed(_)
        ));
        let mut s = format!("x{m}NaN");
        display_in_place(&mut s);
        assert_eq!(s, "xNaN");
    }

    #[test]
    fn values_show_the_tokens() {
        let m = MARK;
        let v = serde_json::json!({"a": format!("{m}Infinity"), "b": [format!("{m}NaN"), "x\"y", 1.5], format!("{m}-Infinity"): null});
        assert_eq!(
            display_json(&v),
            r#"{"a":Infinity,"b":[NaN,"x\"y",1.5],"-Infinity":null}"#
        );
        assert!(!display_json(&v).contains(m));
        assert_eq!(
            display_value(&v),
            serde_json::json!({"a": "Infinity", "b": ["NaN", "x\"y", 1.5], "-Infinity": null})
        );
        // Plain values render as serde_json does.
        let plain = serde_json::json!({"k": [1, "two", true, null, {"n": -0.5}]});
        assert_eq!(display_json(&plain), plain.to_string());
    }

    #[test]
    fn python_text() {
        assert_eq!(python_str("\u{10F800}NaN"), Some("nan"));
        assert_eq!(python_str("\u{10F800}-Infinity"), Some("-inf"));
        assert_eq!(python_str("NaN"), None);
    }
}
