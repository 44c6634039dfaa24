//! The `SyntaxError`s CPython 3.11 raises while it decodes string literals, after tokenizing
//! (`Parser/string_parser.c`, `Objects/unicodeobject.c`, `Objects/bytesobject.c`):
//!
//! - `(unicode error) 'unicodeescape' codec can't decode bytes in position S-E: ...` for a
//!   truncated `\xXX`, `\uXXXX` or `\UXXXXXXXX` escape, a code point above U+10FFFF, a malformed
//!   `\N` escape or an unknown character name (Windows paths such as `"C:\Users\..."` are the
//!   usual cause);
//! - `(value error) invalid \x escape at position N` in a bytes literal;
//! - `bytes can only contain ASCII literal characters`;
//! - `cannot mix bytes and nonbytes literals` in an implicit concatenation.
//!
//! CPython decodes the strings of an implicit concatenation one after the other when its parser
//! reduces them, so the first failing group in source order is reported. Positions are CPython's:
//! byte offsets into the literal's body (or into one literal part of an f-string) after newlines
//! are normalised to `\n` and, in a body with escapes, every non-ASCII character is rewritten as
//! a ten-byte `\UXXXXXXXX` escape. The line is that of the token after the strings (the parser's
//! last token), except for the ASCII check, which names the bytes literal's own line.

use super::tokenize::{Kind, Token};
use crate::source::TextRange;

/// A literal that does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiteralError {
    /// CPython's message (without `(<unknown>, line N)`).
    pub message: String,
    /// What to point at: the escape sequence, the non-ASCII character, or the literal.
    pub range: TextRange,
    /// Zero-based line CPython reports.
    pub line: usize,
    /// Where the parser stands when it raises the error: the start of the failing literal, or of
    /// the failing literal part of an f-string.
    pub pos: usize,
}

/// The first literal of `src` (tokenized as `toks`) that CPython fails to decode or, for an
/// f-string, to parse. `depth` counts the f-string replacement fields being compiled around `src`.
///
/// Groups of adjacent string tokens are decoded only when the token after them was read, so a
/// group at the end of a truncated token stream (a tokenizer error or an unclosed bracket right
/// after it) is skipped: CPython reports that other error first.
pub fn first_error(src: &str, toks: &[Token], depth: usize) -> Option<LiteralError> {
    let mut i = 0;
    while i < toks.len() {
        if toks[i].kind != Kind::String {
            i += 1;
            continue;
        }
        let start = i;
        while i < toks.len() && toks[i].kind == Kind::String {
            i += 1;
        }
        let follow = toks.get(i)?;
        let mut bytes_mode = None;
        for t in &toks[start..i] {
            let text = &src[t.range.as_range()];
            let Some(lit) = Literal::parse(text, t.range.start) else {
                continue;
            };
            if let Some((message, range, pos, known_line)) = lit.check() {
                return Some(LiteralError {
                    message,
                    range,
                    line: if known_line { t.line } else { follow.line },
                    pos,
                });
            }
            match bytes_mode {
                None => bytes_mode = Some(lit.bytes),
                Some(b) if b != lit.bytes => {
                    return Some(LiteralError {
                        message: "cannot mix bytes and nonbytes literals".to_string(),
                        range: t.range,
                        line: follow.line,
                        pos: t.range.start,
                    })
                }
                _ => {}
            }
            if let Some(e) = lit.check_fstring(depth) {
                let line = match e.field_lines {
                    Some(n) => t.line + n,
                    None => follow.line,
                };
                return Some(LiteralError {
                    message: e.message,
                    range: lit.span(e.at.0, e.at.1),
                    line,
                    pos: lit.offsets[e.pos],
                });
            }
        }
    }
    None
}

/// One string token: its flags and its body with newlines normalised, each body byte mapped back
/// to its offset in the cell.
struct Literal {
    bytes: bool,
    raw: bool,
    fstring: bool,
    /// The body (between the quotes), `\r\n` and `\r` turned into `\n`.
    body: Vec<u8>,
    /// Cell offset of each body byte, plus one entry for the end of the body.
    offsets: Vec<usize>,
    /// The token's range in the cell.
    range: TextRange,
}

impl Literal {
    fn parse(text: &str, at: usize) -> Option<Literal> {
        let quote = text.find(['\'', '"'])?;
        let prefix = text[..quote].to_ascii_lowercase();
        let q = text.as_bytes()[quote];
        let triple = text.len() >= quote + 6
            && text.as_bytes()[quote + 1] == q
            && text.as_bytes()[quote + 2] == q;
        let qlen = if triple { 3 } else { 1 };
        let (from, to) = (quote + qlen, text.len().checked_sub(qlen)?);
        if to < from {
            return None;
        }
        let raw_body = &text.as_bytes()[from..to];
        let mut body = Vec::with_capacity(raw_body.len());
        let mut offsets = Vec::with_capacity(raw_body.len() + 1);
        let mut k = 0;
        while k < raw_body.len() {
            offsets.push(at + from + k);
            if raw_body[k] == b'\r' {
                body.push(b'\n');
                k += if raw_body.get(k + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
            } else {
                body.push(raw_body[k]);
                k += 1;
            }
        }
        offsets.push(at + to);
        Some(Literal {
            bytes: prefix.contains('b'),
            raw: prefix.contains('r'),
            fstring: prefix.contains('f'),
            body,
            offsets,
            range: TextRange::new(at, at + text.len()),
        })
    }

    /// Cell range of body bytes `a..b`.
    fn span(&self, a: usize, b: usize) -> TextRange {
        let end = self.offsets[b.min(self.body.len())];
        TextRange::new(self.offsets[a.min(self.body.len())], end)
    }

    /// The first decoding error: message, range, parser position, and whether CPython names the
    /// token's own line.
    fn check(&self) -> Option<(String, TextRange, usize, bool)> {
        if self.bytes {
            if let Some(k) = self.body.iter().position(|b| !b.is_ascii()) {
                let len = utf8_len(self.body[k]);
                return Some((
                    "bytes can only contain ASCII literal characters".to_string(),
                    self.span(k, k + len),
                    self.range.start,
                    true,
                ));
            }
            if self.raw {
                return None;
            }
            let k = invalid_hex_in_bytes(&self.body)?;
            return Some((
                format!("(value error) invalid \\x escape at position {k}"),
                self.span(k, (k + 2).min(self.body.len())),
                self.range.start,
                false,
            ));
        }
        if self.fstring || self.raw || !self.body.contains(&b'\\') {
            return None;
        }
        let e = decode_unicode_escapes(&self.body)?;
        Some((
            e.message(),
            self.span(e.body_start, e.body_end),
            self.range.start,
            false,
        ))
    }

    /// The first error of an f-string's replacement fields and literal parts.
    fn check_fstring(&self, depth: usize) -> Option<FstringError> {
        if !self.fstring {
            return None;
        }
        let parser = FstringParser {
            b: &self.body,
            raw: self.raw,
            depth,
        };
        parser.parse(0, 0).err()
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// The offset of the first `\x` escape of a bytes body without two hex digits after it.
fn invalid_hex_in_bytes(body: &[u8]) -> Option<usize> {
    let mut k = 0;
    while k < body.len() {
        if body[k] != b'\\' {
            k += 1;
            continue;
        }
        match body.get(k + 1) {
            Some(b'x') => {
                let ok = body.len() > k + 3
                    && body[k + 2].is_ascii_hexdigit()
                    && body[k + 3].is_ascii_hexdigit();
                if !ok {
                    return Some(k);
                }
                k += 4;
            }
            Some(_) => k += 2,
            None => k += 1,
        }
    }
    None
}

/// A failed `unicode_escape` decoding of one literal part.
struct EscapeError {
    /// Positions in the rewritten buffer, as CPython prints them (`end` exclusive).
    start: usize,
    end: usize,
    /// The first byte of the escape in the buffer (`\`).
    byte: u8,
    reason: &'static str,
    /// The escape's extent in the part as written (before the rewrite).
    body_start: usize,
    body_end: usize,
}

impl EscapeError {
    fn message(&self) -> String {
        if self.end == self.start + 1 {
            format!(
                "(unicode error) 'unicodeescape' codec can't decode byte 0x{:02x} in position {}: {}",
                self.byte, self.start, self.reason
            )
        } else {
            format!(
                "(unicode error) 'unicodeescape' codec can't decode bytes in position {}-{}: {}",
                self.start,
                self.end - 1,
                self.reason
            )
        }
    }
}

/// CPython's `decode_unicode_with_escapes`: the part is rewritten (a non-ASCII character becomes
/// `\UXXXXXXXX`; a backslash before one becomes `\u005c`), then decoded as `unicode_escape`.
fn decode_unicode_escapes(part: &[u8]) -> Option<EscapeError> {
    // The rewritten buffer, and for each of its bytes the part offset it comes from.
    let mut buf: Vec<u8> = Vec::with_capacity(part.len() * 2);
    let mut from: Vec<usize> = Vec::with_capacity(part.len() * 2);
    let mut s = 0;
    while s < part.len() {
        if part[s] == b'\\' {
            buf.push(b'\\');
            from.push(s);
            s += 1;
            if s >= part.len() || !part[s].is_ascii() {
                buf.extend_from_slice(b"u005c");
                from.extend([s.saturating_sub(1); 5]);
                if s >= part.len() {
                    break;
                }
            }
        }
        if !part[s].is_ascii() {
            // A run of non-ASCII characters, each as `\U%08x`.
            let run_end = part[s..]
                .iter()
                .position(|b| b.is_ascii())
                .map_or(part.len(), |n| s + n);
            let text = String::from_utf8_lossy(&part[s..run_end]);
            let mut at = s;
            for c in text.chars() {
                buf.extend_from_slice(format!("\\U{:08x}", c as u32).as_bytes());
                from.extend([at; 10]);
                at = (at + c.len_utf8()).min(run_end);
            }
            s = run_end;
        } else {
            buf.push(part[s]);
            from.push(s);
            s += 1;
        }
    }
    from.push(part.len());
    let fail = |start: usize, end: usize, reason: &'static str| {
        let body_end = if end >= buf.len() {
            part.len()
        } else {
            from[end]
        };
        Some(EscapeError {
            start,
            end,
            byte: buf[start],
            reason,
            body_start: from[start],
            body_end: body_end.max(from[start] + 1).min(part.len()),
        })
    };
    let n = buf.len();
    let mut i = 0;
    while i < n {
        if buf[i] != b'\\' {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        if i >= n {
            return fail(start, i, "\\ at end of string");
        }
        let c = buf[i];
        i += 1;
        match c {
            b'0'..=b'7' => {
                for _ in 0..2 {
                    if i < n && (b'0'..=b'7').contains(&buf[i]) {
                        i += 1;
                    }
                }
            }
            b'x' | b'u' | b'U' => {
                let (count, reason) = match c {
                    b'x' => (2, "truncated \\xXX escape"),
                    b'u' => (4, "truncated \\uXXXX escape"),
                    _ => (8, "truncated \\UXXXXXXXX escape"),
                };
                let mut ch: u32 = 0;
                for _ in 0..count {
                    let Some(d) = buf.get(i).and_then(|b| (*b as char).to_digit(16)) else {
                        return fail(start, i, reason);
                    };
                    ch = (ch << 4) | d;
                    i += 1;
                }
                if ch > 0x10FFFF {
                    return fail(start, i, "illegal Unicode character");
                }
            }
            b'N' => {
                const MALFORMED: &str = "malformed \\N character escape";
                if i >= n || buf[i] != b'{' {
                    return fail(start, i, MALFORMED);
                }
                i += 1;
                let name_start = i;
                while i < n && buf[i] != b'}' {
                    i += 1;
                }
                if i >= n || i == name_start {
                    return fail(start, i, MALFORMED);
                }
                let name = std::str::from_utf8(&buf[name_start..i]).unwrap_or("");
                i += 1;
                if !is_character_name(name) {
                    return fail(start, i, "unknown Unicode character name");
                }
            }
            _ => {}
        }
    }
    None
}

/// True when `\N{name}` names a character for CPython: a character name or alias, any case
/// (named sequences are not characters).
fn is_character_name(name: &str) -> bool {
    // unicode_names2 trims nothing but accepts the loose forms CPython rejects; keep to
    // CPython's alphabet (letters, digits, space, hyphen).
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b' ' || b == b'-')
        && unicode_names2::character(name).is_some()
}

/// An error found while parsing an f-string body.
struct FstringError {
    message: String,
    /// Body offsets to point at.
    at: (usize, usize),
    /// Body offset where CPython's parser stands (the literal part or replacement field).
    pos: usize,
    /// For an error of a compiled expression: the number of newlines in the body before its
    /// field (CPython names the token's line plus these). Other errors name the parser's last
    /// token.
    field_lines: Option<usize>,
}

/// CPython 3.11's f-string parser (`fstring_parse` in `Parser/string_parser.c`) over a normalised
/// body: literal parts are decoded as they are met, then each replacement field is scanned and
/// its expression compiled, left to right, so the first error in that order is returned.
struct FstringParser<'b> {
    b: &'b [u8],
    raw: bool,
    depth: usize,
}

impl FstringParser<'_> {
    fn fail(&self, message: impl Into<String>, at: (usize, usize), pos: usize) -> FstringError {
        FstringError {
            message: message.into(),
            at: (at.0.min(self.b.len()), at.1.min(self.b.len())),
            pos: pos.min(self.b.len()),
            field_lines: None,
        }
    }

    /// Parses from `s` at nesting `level` until the end (level 0) or the `}` closing a format
    /// spec; returns where it stopped.
    fn parse(&self, mut s: usize, level: u32) -> Result<usize, FstringError> {
        let (b, end) = (self.b, self.b.len());
        loop {
            // `fstring_find_literal`.
            let start = s;
            let mut doubled = false;
            while s < end {
                let mut ch = b[s];
                s += 1;
                if !self.raw && ch == b'\\' && s < end {
                    ch = b[s];
                    s += 1;
                    if ch == b'N' {
                        if s < end {
                            let open = b[s] == b'{';
                            s += 1;
                            if open {
                                while s < end {
                                    let c = b[s];
                                    s += 1;
                                    if c == b'}' {
                                        break;
                                    }
                                }
                            }
                        }
                        continue;
                    }
                }
                if ch == b'{' || ch == b'}' {
                    if level == 0 {
                        if s < end && b[s] == ch {
                            doubled = true;
                            break;
                        }
                        if ch == b'}' {
                            return Err(self.fail(
                                "f-string: single '}' is not allowed",
                                (s - 1, s),
                                start,
                            ));
                        }
                    }
                    s -= 1;
                    break;
                }
            }
            if s > start && !self.raw {
                if let Some(e) = decode_unicode_escapes(&b[start..s]) {
                    return Err(self.fail(
                        e.message(),
                        (start + e.body_start, start + e.body_end),
                        start,
                    ));
                }
            }
            if doubled {
                s += 1;
                continue;
            }
            if s >= end || b[s] == b'}' {
                if level > 0 && s >= end {
                    return Err(self.fail("f-string: expecting '}'", (end, end), s));
                }
                return Ok(s);
            }
            s = self.field(s, level)?;
        }
    }

    /// `fstring_find_expr`: the replacement field whose `{` is at `open`; returns the offset
    /// after its `}`.
    fn field(&self, open: usize, level: u32) -> Result<usize, FstringError> {
        let (b, end) = (self.b, self.b.len());
        let expecting = |at: usize| self.fail("f-string: expecting '}'", (at, at), open);
        if level >= 2 {
            return Err(self.fail(
                "f-string: expressions nested too deeply",
                (open, open + 1),
                open,
            ));
        }
        let expr_start = open + 1;
        let mut s = expr_start;
        let mut quote: Option<(u8, bool)> = None;
        let mut stack: Vec<u8> = Vec::new();
        while s < end {
            let ch = b[s];
            if ch == b'\\' {
                return Err(self.fail(
                    "f-string expression part cannot include a backslash",
                    (s, s + 1),
                    open,
                ));
            }
            if let Some((q, triple)) = quote {
                if ch == q {
                    if triple {
                        if s + 2 < end && b[s + 1] == q && b[s + 2] == q {
                            s += 2;
                            quote = None;
                        }
                    } else {
                        quote = None;
                    }
                }
            } else if ch == b'\'' || ch == b'"' {
                let triple = s + 2 < end && b[s + 1] == ch && b[s + 2] == ch;
                if triple {
                    s += 2;
                }
                quote = Some((ch, triple));
            } else if matches!(ch, b'[' | b'{' | b'(') {
                if stack.len() >= 200 {
                    return Err(self.fail(
                        "f-string: too many nested parenthesis",
                        (s, s + 1),
                        open,
                    ));
                }
                stack.push(ch);
            } else if ch == b'#' {
                return Err(self.fail(
                    "f-string expression part cannot include '#'",
                    (s, s + 1),
                    open,
                ));
            } else if stack.is_empty() && matches!(ch, b'!' | b':' | b'}' | b'=' | b'>' | b'<') {
                if s + 1 < end && b[s + 1] == b'=' && matches!(ch, b'!' | b'=' | b'<' | b'>') {
                    s += 2;
                    continue;
                }
                if ch == b'>' || ch == b'<' {
                    s += 1;
                    continue;
                }
                break;
            } else if matches!(ch, b']' | b'}' | b')') {
                let Some(opening) = stack.pop() else {
                    return Err(self.fail(
                        format!("f-string: unmatched '{}'", ch as char),
                        (s, s + 1),
                        open,
                    ));
                };
                let matched = matches!((opening, ch), (b'(', b')') | (b'[', b']') | (b'{', b'}'));
                if !matched {
                    return Err(self.fail(
                        format!(
                            "f-string: closing parenthesis '{}' does not match opening parenthesis '{}'",
                            ch as char, opening as char
                        ),
                        (s, s + 1),
                        open,
                    ));
                }
            }
            s += 1;
        }
        if quote.is_some() {
            return Err(self.fail("f-string: unterminated string", (open, s), open));
        }
        if let Some(&opening) = stack.last() {
            return Err(self.fail(
                format!("f-string: unmatched '{}'", opening as char),
                (open, s),
                open,
            ));
        }
        if s >= end {
            return Err(expecting(end));
        }
        self.compile(open, expr_start, s)?;
        if b[s] == b'=' {
            s += 1;
            while s < end && matches!(b[s], b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c') {
                s += 1;
            }
            if s >= end {
                return Err(expecting(end));
            }
        }
        if b[s] == b'!' {
            s += 1;
            if s >= end {
                return Err(expecting(end));
            }
            let conversion = b[s];
            s += 1;
            if !matches!(conversion, b's' | b'r' | b'a') {
                return Err(self.fail(
                    "f-string: invalid conversion character: expected 's', 'r', or 'a'",
                    (s - 1, s),
                    open,
                ));
            }
        }
        if s < end && b[s] == b':' {
            s += 1;
            if s >= end {
                return Err(expecting(end));
            }
            s = self.parse(s, level + 1)?;
        }
        if s >= end || b[s] != b'}' {
            return Err(expecting(s));
        }
        Ok(s + 1)
    }

    /// `fstring_compile_expr`: an empty expression, or the syntax error of `(expr)`.
    fn compile(&self, open: usize, from: usize, to: usize) -> Result<(), FstringError> {
        let b = self.b;
        if b[from..to]
            .iter()
            .all(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\x0c'))
        {
            let message = match b.get(to) {
                Some(&c @ (b'!' | b':' | b'=')) => {
                    format!("f-string: expression required before '{}'", c as char)
                }
                _ => "f-string: empty expression not allowed".to_string(),
            };
            return Err(self.fail(message, (open, to + 1), open));
        }
        if self.depth >= 3 {
            return Ok(());
        }
        let Ok(expr) = std::str::from_utf8(&b[from..to]) else {
            return Ok(());
        };
        let wrapped = format!("({expr})");
        let tree = crate::parse::parse(&wrapped, None);
        let Some(e) = super::diagnose::diagnose_at_depth(
            &wrapped,
            &crate::nodes::NodeTable::from_root(tree.root_node()),
            self.depth + 1,
        ) else {
            return Ok(());
        };
        let message = e.message.strip_prefix("f-string: ").unwrap_or(&e.message);
        let inner = |k: usize| (from + k.saturating_sub(1)).clamp(from, to);
        let mut err = self.fail(
            format!("f-string: {message}"),
            (
                inner(e.range.start),
                inner(e.range.end).max(inner(e.range.start)),
            ),
            open,
        );
        err.field_lines = Some(b[..open].iter().filter(|&&c| c == b'\n').count());
        Err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::syntax::tokenize::tokenize;

    fn err(src: &str) -> Option<(String, usize)> {
        first_error(src, &tokenize(src).tokens, 0).map(|e| (e.message, e.line + 1))
    }

    #[test]
    fn truncated_escapes_with_cpython_positions() {
        assert_eq!(
            err("x = \"C:\\Users\\bob\"\n").unwrap().0,
            "(unicode error) 'unicodeescape' codec can't decode bytes in position 2-3: truncated \\UXXXXXXXX escape"
        );
        // A non-ASCII character before the escape counts ten bytes.
        assert_eq!(
            err("x = \"é\\u12\"\n").unwrap().0,
            "(unicode error) 'unicodeescape' codec can't decode bytes in position 10-13: truncated \\uXXXX escape"
        );
        assert_eq!(
            err("x = \"\\N{nope}\"\n").unwrap().0,
            "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-7: unknown Unicode character name"
        );
        assert_eq!(err("x = \"\\N{latin small letter e with acute}\"\n"), None);
        assert_eq!(err("x = r\"C:\\Users\"\n"), None);
        assert_eq!(err("x = \"\\777 \\d\"\n"), None);
    }

    #[test]
    fn line_is_the_token_after_the_strings() {
        assert_eq!(err("x = (\"ok\"\n \"\\u1\"\n \"z\")\n").unwrap().1, 3);
        assert_eq!(err("x = \"\"\"\\u1\n\n\"\"\"\n").unwrap().1, 3);
        // Unclosed bracket right after: never decoded.
        assert_eq!(err("x = (\"\\u1\""), None);
    }

    #[test]
    fn bytes_literals() {
        assert_eq!(
            err("x = b\"a\\x4\"\n").unwrap().0,
            "(value error) invalid \\x escape at position 1"
        );
        assert_eq!(
            err("x = (b\"a\"\n b\"é\"\n)\n").unwrap(),
            (
                "bytes can only contain ASCII literal characters".to_string(),
                2
            )
        );
        assert_eq!(
            err("x = (\"a\"\n b\"b\"\n)\n").unwrap(),
            ("cannot mix bytes and nonbytes literals".to_string(), 3)
        );
    }

    #[test]
    fn fstring_parts_restart_positions() {
        assert_eq!(
            err("x = f'a{{\\x1'\n").unwrap().0,
            "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-2: truncated \\xXX escape"
        );
        assert_eq!(
            err("x = f\"{{\\N{DIGIT ONE}}}\\x1\"\n").unwrap().0,
            "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-2: truncated \\xXX escape"
        );
        assert_eq!(
            err("x = f\"{a:{b}\\x1}\"\n").unwrap().0,
            "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-2: truncated \\xXX escape"
        );
        assert_eq!(err("x = f\"\\{a}\"\n"), None);
    }
}
