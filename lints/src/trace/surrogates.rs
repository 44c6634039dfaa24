//! Lone surrogate escapes (`"\ud800"`, a `\udc00` without its leading half) in JSON text.
//!
//! Python's `json` writes and reads them (`json.dumps` of text decoded with `surrogateescape`,
//! or a string cut in the middle of a surrogate pair), so traces recorded by Python agents can
//! hold them; serde_json rejects them because they are not Unicode text. Every reader rewrites
//! the JSON text before parsing so that each lone surrogate becomes one *stand-in* character:
//! surrogate `U+D800 + n` (n < 2048) reads as the private-use character `U+10F000 + n`
//! ([`STAND_IN_BASE`]). Like Python's string, the value then holds one character per
//! surrogate, `\uDC00` and `\udc00` are the same character, distinct surrogates stay distinct,
//! and the stand-in is not ASCII text, so a substring or regex pattern such as `ud800` does not
//! match it (issue 6 R7: the earlier rewrite to the six characters `\ud800` made a lone
//! surrogate equal to the real text `"\\ud800"`).
//!
//! So that no real text can be taken for a stand-in, a real character of the reserved range
//! `U+10F000..=U+10F800` (written raw or as an escaped pair) is prefixed with the marker
//! [`RESERVED_MARK`] (`U+10F800`): the rewrite is injective, and two strings compare equal after
//! it exactly when Python's strings do. Well-formed pairs outside the range (`\ud83d\ude00`)
//! are left alone. No newline is inserted, so line numbers stay those of the input (byte
//! columns after a rewrite on the same line shift). Config texts (patterns, values) are taken
//! as written: TOML cannot hold a lone surrogate.

/// The stand-in of surrogate `U+D800`; surrogate `U+D800 + n` reads as `STAND_IN_BASE + n`.
pub const STAND_IN_BASE: u32 = 0x10_F000;

/// Prefixed to a real character of the reserved range `U+10F000..=U+10F800` (see the module
/// docs).
pub const RESERVED_MARK: char = '\u{10F800}';

/// The stand-in character of surrogate code unit `u` (`0xD800..=0xDFFF`).
pub fn stand_in(u: u16) -> char {
    char::from_u32(STAND_IN_BASE + u32::from(u - 0xD800)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The surrogate a stand-in character stands for (`None` for any other character). A stand-in
/// that follows [`RESERVED_MARK`] is real text; callers that print values check that first.
pub fn surrogate_of(c: char) -> Option<u16> {
    let c = c as u32;
    (STAND_IN_BASE..STAND_IN_BASE + 0x800)
        .contains(&c)
        .then(|| (0xD800 + (c - STAND_IN_BASE)) as u16)
}

fn reserved(c: u32) -> bool {
    (STAND_IN_BASE..=RESERVED_MARK as u32).contains(&c)
}

/// UTF-8 lead bytes of the reserved range: `F4 8F`.
const RESERVED_UTF8: &[u8] = &[0xF4, 0x8F];

/// True when `text` may need the rewrite: a `\u` followed by `d`/`D` and `8`–`f` (a surrogate
/// escape, lone or paired), or a character near the reserved range. A cheap pre-check so that
/// most lines are not rewritten.
pub fn may_have_surrogate_escape(text: &str) -> bool {
    // One pass over the line for both kinds of hit, with no searcher to build per call (this
    // runs on every native line).
    let b = text.as_bytes();
    memchr::memchr2_iter(b'\\', RESERVED_UTF8[0], b).any(|i| {
        if b[i] == b'\\' {
            b.get(i + 1) == Some(&b'u')
                && matches!(b.get(i + 2), Some(b'd' | b'D'))
                && matches!(b.get(i + 3), Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
        } else {
            b.get(i + 1) == Some(&RESERVED_UTF8[1])
        }
    })
}

fn hex4(b: &[u8]) -> Option<u16> {
    let s = std::str::from_utf8(b.get(..4)?).ok()?;
    u16::from_str_radix(s, 16).ok()
}

/// `text` (JSON text) with every lone surrogate escape rewritten as its stand-in and every real
/// reserved character marked, as described in the module docs, plus the byte offsets (in
/// `text`) of the rewritten lone escapes (for warnings; empty when only real reserved characters
/// were marked); `None` when nothing changes.
pub fn escape_lone_surrogates(text: &str) -> Option<(String, Vec<usize>)> {
    rewrite(text, true)
}

/// [`escape_lone_surrogates`] for JSON text held inside a string that was itself read from JSON
/// text (a chat tool call's `arguments`): the outer reading already marked the real reserved
/// characters written raw, so only escapes are rewritten here.
pub fn escape_lone_surrogates_inner(text: &str) -> Option<(String, Vec<usize>)> {
    rewrite(text, false)
}

fn rewrite(text: &str, raw_too: bool) -> Option<(String, Vec<usize>)> {
    if !may_have_surrogate_escape(text) {
        return None;
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 8);
    let mut at = Vec::new();
    let mut changed = false;
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        let Some(j) = memchr::memchr2(b'\\', 0xF4, &b[i..]) else {
            break;
        };
        let k = i + j;
        if b[k] == 0xF4 {
            // A raw character (the text is UTF-8, so `k` starts one).
            let c = text[k..].chars().next().map_or(0, |c| c as u32);
            if raw_too && reserved(c) {
                out.push_str(&text[copied..k]);
                out.push(RESERVED_MARK);
                copied = k;
                changed = true;
            }
            i = k + 1;
            continue;
        }
        match b.get(k + 1) {
            Some(b'u') => {
                let Some(u) = hex4(&b[k + 2..]) else {
                    i = k + 2;
                    continue;
                };
                let low = (b.get(k + 6) == Some(&b'\\') && b.get(k + 7) == Some(&b'u'))
                    .then(|| hex4(&b[k + 8..]))
                    .flatten()
                    .filter(|l| (0xDC00..=0xDFFF).contains(l));
                if let (true, Some(l)) = ((0xD800..=0xDBFF).contains(&u), low) {
                    let c = 0x10000 + ((u32::from(u) - 0xD800) << 10) + (u32::from(l) - 0xDC00);
                    if reserved(c) {
                        // A real reserved character written as a pair: marked.
                        out.push_str(&text[copied..k]);
                        out.push(RESERVED_MARK);
                        copied = k;
                        changed = true;
                    }
                    i = k + 12;
                } else if (0xD800..=0xDFFF).contains(&u) {
                    out.push_str(&text[copied..k]);
                    out.push(stand_in(u));
                    copied = k + 6;
                    at.push(k);
                    changed = true;
                    i = k + 6;
                } else {
                    i = k + 6;
                }
            }
            Some(_) => i = k + 2,
            None => break,
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&text[copied..]);
    Some((out, at))
}

/// The warning text for a line with `n` rewritten escapes, the first at `escape` (its six
/// characters as written).
pub fn warning(escape: &str, n: usize) -> String {
    let more = if n > 1 {
        format!(" (and {} more on this line)", n - 1)
    } else {
        String::new()
    };
    let c = hex4(&escape.as_bytes()[2..]).map_or(STAND_IN_BASE, |u| u32::from(stand_in(u)));
    format!(
        "lone surrogate escape `{escape}`{more} is not Unicode text; kept as the private-use stand-in U+{c:X} (one character, as in Python's json, which accepts it)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass pre-check agrees with the two searches it replaced, on every short text
    /// over the alphabet that matters (`\`, `u`, `d`, `D`, `8`, `f`, `x` and the reserved lead
    /// bytes).
    #[test]
    fn pre_check_agrees_with_the_plain_searches() {
        fn reference(b: &[u8]) -> bool {
            let escape = (0..b.len()).any(|i| {
                b[i..].starts_with(b"\\u")
                    && matches!(b.get(i + 2), Some(b'd' | b'D'))
                    && matches!(b.get(i + 3), Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
            });
            escape || b.windows(2).any(|w| w == RESERVED_UTF8)
        }
        let atoms: [&str; 9] = [
            "\\",
            "u",
            "d",
            "D",
            "8",
            "f",
            "x",
            "\u{10F000}",
            "\u{100000}",
        ];
        let mut checked = 0;
        for n in 0..=5u32 {
            for mut code in 0..atoms.len().pow(n) {
                let mut text = String::new();
                for _ in 0..n {
                    text.push_str(atoms[code % atoms.len()]);
                    code /= atoms.len();
                }
                assert_eq!(
                    may_have_surrogate_escape(&text),
                    reference(text.as_bytes()),
                    "{text:?}"
                );
                checked += 1;
            }
        }
        assert!(checked > 60_000);
    }

    fn read(json: &str) -> serde_json::Value {
        let fixed = escape_lone_surrogates(json).map_or(json.to_string(), |f| f.0);
        serde_json::from_str(&fixed).unwrap()
    }

    #[test]
    fn lone_escapes_become_stand_ins_and_pairs_stay() {
        let (t, at) = escape_lone_surrogates(
            r#"{"a":"x\ud800y","b":"\ud83d\ude00","c":"\\ud800","d":"\uDC01"}"#,
        )
        .unwrap();
        assert_eq!(at.len(), 2);
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert_eq!(v["a"], "x\u{10F000}y");
        assert_eq!(v["b"], "\u{1F600}");
        assert_eq!(v["c"], "\\ud800", "real text is untouched");
        assert_eq!(v["d"], "\u{10F401}");
        assert_eq!(surrogate_of('\u{10F401}'), Some(0xDC01));
        assert!(escape_lone_surrogates(r#"{"a":"\u00e9 \\u"}"#).is_none());
        // A leading half followed by another leading half: both lone.
        let (t, _) = escape_lone_surrogates(r#""\ud83d\ud83d""#).unwrap();
        assert_eq!(t, "\"\u{10F03D}\u{10F03D}\"");
        // Truncated escapes are left for the parser to report.
        assert!(escape_lone_surrogates(r#""\ud8"#).is_none());
    }

    /// Python's `==` on the parsed strings (issue 6 R7 re-test: the escape text collided).
    #[test]
    fn no_real_text_equals_a_lone_surrogate() {
        let lone = read(r#""\udc00""#);
        assert_eq!(lone, read(r#""\uDC00""#));
        assert_ne!(lone, read(r#""\udc01""#));
        assert_ne!(lone, read(r#""\\udc00""#), "the six characters \\udc00");
        assert_ne!(read(r#""\\ud800x""#), read(r#""\ud800x""#));
        assert_ne!(read(r#""\\\ud800""#), read(r#""\\\\ud800""#));
        // The stand-in itself, written as real text (raw or as a pair), is marked.
        assert_ne!(lone, read("\"\u{10F400}\""));
        assert_ne!(lone, read(r#""\udbfd\udc00""#));
        assert_eq!(read("\"\u{10F400}\""), read(r#""\udbfd\udc00""#));
        assert_ne!(read("\"\u{10F800}\u{10F400}\""), lone);
        assert_eq!(
            read("\"\u{10F800}\""),
            serde_json::Value::from("\u{10F800}\u{10F800}")
        );
        // Other astral text is untouched.
        assert!(escape_lone_surrogates("\"\u{10FFFD}\u{1F600}\"").is_none());
        // Inside embedded JSON text only the escapes are rewritten (the outer reading marked
        // the raw characters).
        let inner =
            escape_lone_surrogates_inner("{\"a\":\"\u{10F800}\u{10F400}\",\"b\":\"\\udc00\"}")
                .unwrap()
                .0;
        let v: serde_json::Value = serde_json::from_str(&inner).unwrap();
        assert_eq!(v["a"], "\u{10F800}\u{10F400}");
        assert_eq!(v["b"], "\u{10F400}");
    }
}
