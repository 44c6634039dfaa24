//! A Python tokenizer that reproduces CPython 3.11's tokenizer errors (`Parser/tokenizer.c`):
//! the messages, where they are raised and where tokenizing stops.
//!
//! It exists for `SYN001`: tree-sitter tells that a cell does not parse, but not what CPython
//! says about it, and tree-sitter-python accepts some things CPython rejects (indentation is
//! handled by an external scanner that forgives). The token stream (with `NEWLINE`, `INDENT`,
//! `DEDENT`) is also what the parser-level checks of [`super::diagnose`] look at.
//!
//! Offsets are byte offsets into the cell text; lines are zero-based (CPython's `lineno` is
//! `line + 1`). Lines end at `\n`, `\r\n` or a lone `\r` (universal newlines).

use crate::source::TextRange;

/// Kind of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An identifier or keyword.
    Name,
    /// A numeric literal.
    Number,
    /// A string literal, prefix included (f-strings are one token, as in Python 3.11).
    String,
    /// An operator or delimiter.
    Op,
    /// End of a logical line.
    Newline,
    /// Indentation increased (zero-width, at the first token of the line).
    Indent,
    /// Indentation decreased (zero-width, at the first token of the line).
    Dedent,
    /// End of input.
    EndMarker,
    /// A character CPython turns into an error token without a message (`$`, `?`, `` ` ``,
    /// a lone `!`); the parser then reports `invalid syntax` there.
    ErrorToken,
}

/// One token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// Kind.
    pub kind: Kind,
    /// Byte range in the cell text (empty for `Indent`, `Dedent`, `EndMarker`).
    pub range: TextRange,
    /// Zero-based line of the token start.
    pub line: usize,
    /// Bracket depth before the token (a closing bracket has the depth of its contents).
    pub depth: usize,
}

/// Which exception CPython raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// `SyntaxError`.
    Syntax,
    /// `IndentationError`.
    Indentation,
    /// `TabError`.
    Tab,
}

/// A tokenizer error: CPython stops at the first one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokError {
    /// CPython's message (without the `(<unknown>, line N)` suffix).
    pub message: String,
    /// Where to point.
    pub range: TextRange,
    /// Zero-based line CPython reports (`lineno - 1`).
    pub line: usize,
    /// The exception class.
    pub class: ErrorClass,
}

/// A bracket still open at the end of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenBracket {
    /// `(`, `[` or `{`.
    pub ch: char,
    /// Its byte offset.
    pub offset: usize,
    /// Its zero-based line.
    pub line: usize,
}

/// The result of tokenizing a cell.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    /// Tokens up to the first error (or the end marker).
    pub tokens: Vec<Token>,
    /// The first tokenizer error, if any; tokenizing stopped there.
    pub error: Option<TokError>,
    /// The innermost bracket left open at the end of the input (CPython: `'(' was never
    /// closed`, unless the parser failed before it).
    pub unclosed: Option<OpenBracket>,
    /// Zero-based line CPython gives the end of input (the line of the last character).
    pub eof_line: usize,
}

/// Python keywords (hard ones; `match`, `case`, `type` and `_` are soft).
pub const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// True for a hard keyword.
pub fn is_keyword(s: &str) -> bool {
    KEYWORDS.contains(&s)
}

const OPS3: &[&str] = &["**=", "...", "//=", "<<=", ">>="];
const OPS2: &[&str] = &[
    "!=", "%=", "&=", "**", "*=", "+=", "-=", "->", "//", "/=", ":=", "<<", "<=", "<>", "==", ">=",
    ">>", "@=", "^=", "|=",
];
const OPS1: &str = "%&()*+,-./:;<=>@[]^{|}~";

/// CPython's limits (`MAXINDENT`, `MAXLEVEL`).
const MAX_INDENT: usize = 100;
const MAX_LEVEL: usize = 200;

fn is_id_start(c: char) -> bool {
    c == '_' || c.is_ascii_alphabetic() || (!c.is_ascii() && unicode_ident::is_xid_start(c))
}

fn is_id_continue(c: char) -> bool {
    c == '_' || c.is_ascii_alphanumeric() || (!c.is_ascii() && unicode_ident::is_xid_continue(c))
}

/// CPython's `is_potential_identifier_char`: ASCII letters, digits, `_` and any non-ASCII.
fn is_potential_id_char(c: char) -> bool {
    c == '_' || c.is_ascii_alphanumeric() || !c.is_ascii()
}

/// Python's `str.isprintable()` for the characters that matter here: controls, format
/// characters, separators other than the space, private use and surrogates are not printable.
pub fn is_printable(c: char) -> bool {
    let cp = c as u32;
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(cp,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF
        | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F | 0xE000..=0xF8FF
        | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: usize,
    out: Tokens,
    parens: Vec<OpenBracket>,
    indents: Vec<usize>,
    alt_indents: Vec<usize>,
    /// The current logical line has produced a token (a NEWLINE is due at its end).
    line_has_tokens: bool,
}

/// Tokenizes `src`.
pub fn tokenize(src: &str) -> Tokens {
    let mut lx = Lexer {
        src,
        pos: 0,
        line: 0,
        out: Tokens::default(),
        parens: Vec::new(),
        indents: vec![0],
        alt_indents: vec![0],
        line_has_tokens: false,
    };
    lx.out.eof_line = eof_line(src);
    lx.run();
    lx.out
}

/// Zero-based line of the last character (CPython's line for errors at the end of input).
fn eof_line(src: &str) -> usize {
    let mut line = 0;
    let bytes = src.as_bytes();
    let last = bytes.len().saturating_sub(1);
    let mut i = 0;
    while i < last {
        match bytes[i] {
            b'\n' => line += 1,
            b'\r' if bytes.get(i + 1) != Some(&b'\n') => line += 1,
            _ => {}
        }
        i += 1;
    }
    line
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.src.get(self.pos + offset..)?.chars().next()
    }

    fn push(&mut self, kind: Kind, start: usize, end: usize, line: usize) {
        self.out.tokens.push(Token {
            kind,
            range: TextRange::new(start, end),
            line,
            depth: self.parens.len(),
        });
    }

    fn error(
        &mut self,
        message: impl Into<String>,
        range: TextRange,
        line: usize,
        class: ErrorClass,
    ) {
        if self.out.error.is_none() {
            self.out.error = Some(TokError {
                message: message.into(),
                range,
                line,
                class,
            });
        }
    }

    fn failed(&self) -> bool {
        self.out.error.is_some()
    }

    /// Length of the newline sequence at `pos` (0 when none).
    fn newline_len(&self) -> usize {
        match self.src.as_bytes().get(self.pos) {
            Some(b'\n') => 1,
            Some(b'\r') if self.src.as_bytes().get(self.pos + 1) == Some(&b'\n') => 2,
            Some(b'\r') => 1,
            _ => 0,
        }
    }

    fn run(&mut self) {
        let mut at_line_start = true;
        while !self.failed() {
            if at_line_start {
                at_line_start = false;
                if self.parens.is_empty() {
                    self.line_start();
                    continue;
                }
            }
            // Blanks between tokens.
            while matches!(self.peek(), Some(' ' | '\t' | '\x0c')) {
                self.pos += 1;
            }
            let Some(c) = self.peek() else { break };
            let start = self.pos;
            match c {
                '#' => {
                    while let Some(c) = self.peek() {
                        if c == '\n' || c == '\r' {
                            break;
                        }
                        self.pos += c.len_utf8();
                    }
                }
                '\n' | '\r' => {
                    let n = self.newline_len();
                    if self.parens.is_empty() && self.line_has_tokens {
                        self.push(Kind::Newline, start, start + n, self.line);
                        self.line_has_tokens = false;
                    }
                    self.pos += n;
                    self.line += 1;
                    at_line_start = true;
                }
                '\\' => {
                    self.pos += 1;
                    let n = self.newline_len();
                    if n > 0 {
                        self.pos += n;
                        self.line += 1;
                        if self.pos >= self.src.len() {
                            self.error(
                                "unexpected EOF while parsing",
                                TextRange::empty(self.src.len()),
                                self.line - 1,
                                ErrorClass::Syntax,
                            );
                        }
                    } else if self.pos >= self.src.len() {
                        self.error(
                            "unexpected EOF while parsing",
                            TextRange::empty(self.src.len()),
                            self.line,
                            ErrorClass::Syntax,
                        );
                    } else {
                        self.error(
                            "unexpected character after line continuation character",
                            TextRange::new(start, start + 1),
                            self.line,
                            ErrorClass::Syntax,
                        );
                    }
                }
                '\'' | '"' => self.string(start, start),
                c if c.is_ascii_digit() => self.number(start),
                '.' if self.peek_at(1).is_some_and(|d| d.is_ascii_digit()) => self.number(start),
                c if is_id_start(c) => self.name(start),
                c if !c.is_ascii() || (c.is_control() && c != '\t') => {
                    let range = TextRange::new(start, start + c.len_utf8());
                    let message = if is_printable(c) {
                        format!("invalid character '{c}' (U+{:04X})", c as u32)
                    } else {
                        format!("invalid non-printable character U+{:04X}", c as u32)
                    };
                    self.error(message, range, self.line, ErrorClass::Syntax);
                }
                _ => self.operator(start, c),
            }
        }
        if self.failed() {
            return;
        }
        if let Some(open) = self.parens.last() {
            self.out.unclosed = Some(*open);
            return;
        }
        let end = self.src.len();
        if self.line_has_tokens {
            self.push(Kind::Newline, end, end, self.line);
        }
        while self.indents.len() > 1 {
            self.indents.pop();
            self.push(Kind::Dedent, end, end, self.out.eof_line);
        }
        self.push(Kind::EndMarker, end, end, self.out.eof_line);
    }

    /// Handles indentation at the start of a physical line outside brackets: `INDENT`/`DEDENT`
    /// tokens and indentation errors. Blank and comment-only lines are left alone.
    fn line_start(&mut self) {
        let line_start = self.pos;
        let (mut col, mut alt) = (0usize, 0usize);
        loop {
            match self.peek() {
                Some(' ') => {
                    col += 1;
                    alt += 1;
                }
                Some('\t') => {
                    col = (col / 8 + 1) * 8;
                    alt += 1;
                }
                Some('\x0c') => {
                    col = 0;
                    alt = 0;
                }
                _ => break,
            }
            self.pos += 1;
        }
        if matches!(self.peek(), None | Some('#' | '\n' | '\r')) {
            // End of input, or a blank or comment-only line: no indentation processing.
            return;
        }
        let first = self.pos;
        let top = *self.indents.last().unwrap_or(&0);
        let alt_top = *self.alt_indents.last().unwrap_or(&0);
        let tab_error = |lx: &mut Self| {
            lx.error(
                "inconsistent use of tabs and spaces in indentation",
                TextRange::new(line_start, first),
                lx.line,
                ErrorClass::Tab,
            );
        };
        if col == top {
            if alt != alt_top {
                tab_error(self);
            }
        } else if col > top {
            if self.indents.len() >= MAX_INDENT {
                self.error(
                    "too many levels of indentation",
                    TextRange::new(line_start, first),
                    self.line,
                    ErrorClass::Indentation,
                );
                return;
            }
            if alt <= alt_top {
                tab_error(self);
                return;
            }
            self.indents.push(col);
            self.alt_indents.push(alt);
            self.push(Kind::Indent, line_start, first, self.line);
        } else {
            while self.indents.len() > 1 && col < *self.indents.last().unwrap_or(&0) {
                self.indents.pop();
                self.alt_indents.pop();
                self.push(Kind::Dedent, first, first, self.line);
            }
            if col != *self.indents.last().unwrap_or(&0) {
                self.error(
                    "unindent does not match any outer indentation level",
                    TextRange::new(line_start, first),
                    self.line,
                    ErrorClass::Indentation,
                );
            } else if alt != *self.alt_indents.last().unwrap_or(&0) {
                tab_error(self);
            }
        }
    }

    fn name(&mut self, start: usize) {
        while let Some(c) = self.peek() {
            if is_id_continue(c) {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
        let word = &self.src[start..self.pos];
        let is_prefix = word.len() <= 2
            && matches!(
                word.to_ascii_lowercase().as_str(),
                "r" | "u" | "f" | "b" | "br" | "rb" | "fr" | "rf"
            );
        if is_prefix && matches!(self.peek(), Some('\'' | '"')) {
            let quote = self.pos;
            self.string(start, quote);
            return;
        }
        // A non-identifier, non-ASCII character glued to a name is reported where it is.
        if let Some(c) = self.peek() {
            if !c.is_ascii() && !is_id_continue(c) {
                let range = TextRange::new(self.pos, self.pos + c.len_utf8());
                let message = if is_printable(c) {
                    format!("invalid character '{c}' (U+{:04X})", c as u32)
                } else {
                    format!("invalid non-printable character U+{:04X}", c as u32)
                };
                self.error(message, range, self.line, ErrorClass::Syntax);
                return;
            }
        }
        self.line_has_tokens = true;
        self.push(Kind::Name, start, self.pos, self.line);
    }

    /// A string literal whose prefix starts at `start` and whose quote is at `quote`.
    fn string(&mut self, start: usize, quote: usize) {
        let start_line = self.line;
        let q = self.src.as_bytes()[quote];
        let triple = self.src.as_bytes().get(quote + 1) == Some(&q)
            && self.src.as_bytes().get(quote + 2) == Some(&q);
        self.pos = quote + if triple { 3 } else { 1 };
        loop {
            let Some(c) = self.peek() else {
                let (message, line) = if triple {
                    (
                        format!(
                            "unterminated triple-quoted string literal (detected at line {})",
                            self.out.eof_line + 1
                        ),
                        start_line,
                    )
                } else {
                    (
                        format!(
                            "unterminated string literal (detected at line {})",
                            self.line + 1
                        ),
                        start_line,
                    )
                };
                self.error(
                    message,
                    TextRange::new(start, quote + 1),
                    line,
                    ErrorClass::Syntax,
                );
                return;
            };
            match c {
                '\\' => {
                    self.pos += 1;
                    let n = self.newline_len();
                    if n > 0 {
                        self.pos += n;
                        self.line += 1;
                    } else if let Some(e) = self.peek() {
                        self.pos += e.len_utf8();
                    }
                }
                '\n' | '\r' => {
                    if !triple {
                        self.error(
                            format!(
                                "unterminated string literal (detected at line {})",
                                self.line + 1
                            ),
                            TextRange::new(start, quote + 1),
                            start_line,
                            ErrorClass::Syntax,
                        );
                        return;
                    }
                    self.pos += self.newline_len();
                    self.line += 1;
                }
                c if c as u32 == q as u32 => {
                    if !triple {
                        self.pos += 1;
                        break;
                    }
                    let b = self.src.as_bytes();
                    if b.get(self.pos + 1) == Some(&q) && b.get(self.pos + 2) == Some(&q) {
                        self.pos += 3;
                        break;
                    }
                    self.pos += 1;
                }
                c => self.pos += c.len_utf8(),
            }
        }
        self.line_has_tokens = true;
        self.push(Kind::String, start, self.pos, start_line);
    }

    fn digits(&mut self, ok: impl Fn(char) -> bool) -> Result<usize, ()> {
        let mut n = 0;
        loop {
            match self.peek() {
                Some(c) if ok(c) => {
                    self.pos += 1;
                    n += 1;
                }
                Some('_') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(c) if ok(c) => {}
                        _ => return Err(()),
                    }
                }
                _ => return Ok(n),
            }
        }
    }

    /// CPython's `verify_end_of_number`: a letter right after a number is an error, unless it
    /// starts one of the keywords CPython tolerates there (`1if x else y`).
    fn end_of_number(&mut self, start: usize, kind: &str) -> bool {
        let rest = &self.src[self.pos..];
        let Some(c) = rest.chars().next() else {
            return true;
        };
        let tolerated = ["and", "else", "for", "if", "in", "is", "not", "or"]
            .iter()
            .any(|k| rest.starts_with(k));
        // CPython reads the next character as a byte here, so only ASCII letters count; a
        // non-ASCII character after a number is tokenized on its own.
        if tolerated || !c.is_ascii() || !is_potential_id_char(c) {
            return true;
        }
        let _ = start;
        self.error(
            format!("invalid {kind} literal"),
            TextRange::new(start, self.pos + c.len_utf8()),
            self.line,
            ErrorClass::Syntax,
        );
        false
    }

    fn number(&mut self, start: usize) {
        let bad = |lx: &mut Self, msg: String| {
            let end = (lx.pos + lx.peek().map(char::len_utf8).unwrap_or(0)).max(start + 1);
            lx.error(
                msg,
                TextRange::new(start, end.min(lx.src.len())),
                lx.line,
                ErrorClass::Syntax,
            );
        };
        let first = self.peek().unwrap_or('0');
        if first == '0' {
            let radix = self.peek_at(1).map(|c| c.to_ascii_lowercase());
            type DigitSpec = Option<(&'static str, fn(char) -> bool)>;
            let spec: DigitSpec = match radix {
                Some('x') => Some(("hexadecimal", |c: char| c.is_ascii_hexdigit())),
                Some('o') => Some(("octal", |c: char| c.is_digit(8))),
                Some('b') => Some(("binary", |c: char| c == '0' || c == '1')),
                _ => None,
            };
            if let Some((kind, ok)) = spec {
                self.pos += 2;
                if self.peek() == Some('_') {
                    self.pos += 1;
                }
                match self.digits(ok) {
                    Ok(0) | Err(()) => {
                        let digit = self.peek().filter(|c| c.is_ascii_digit());
                        match digit {
                            Some(d) if kind != "hexadecimal" => {
                                bad(self, format!("invalid digit '{d}' in {kind} literal"))
                            }
                            _ => bad(self, format!("invalid {kind} literal")),
                        }
                        return;
                    }
                    Ok(_) => {}
                }
                if kind != "hexadecimal" {
                    if let Some(d) = self.peek().filter(|c| c.is_ascii_digit()) {
                        bad(self, format!("invalid digit '{d}' in {kind} literal"));
                        return;
                    }
                }
                if !self.end_of_number(start, kind) {
                    return;
                }
                self.line_has_tokens = true;
                self.push(Kind::Number, start, self.pos, self.line);
                return;
            }
        }
        // Decimal integer part (may be empty for `.5`).
        let int_start = self.pos;
        if self.digits(|c| c.is_ascii_digit()).is_err() {
            bad(self, "invalid decimal literal".to_string());
            return;
        }
        let int_part = &self.src[int_start..self.pos];
        let mut is_float = false;
        if self.peek() == Some('.') {
            is_float = true;
            self.pos += 1;
            if self.digits(|c| c.is_ascii_digit()).is_err() {
                bad(self, "invalid decimal literal".to_string());
                return;
            }
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let save = self.pos;
            self.pos += 1;
            if matches!(self.peek(), Some('+' | '-')) {
                self.pos += 1;
            }
            match self.digits(|c| c.is_ascii_digit()) {
                Ok(n) if n > 0 => is_float = true,
                _ => {
                    self.pos = save;
                    bad(self, "invalid decimal literal".to_string());
                    return;
                }
            }
        }
        if matches!(self.peek(), Some('j' | 'J')) {
            self.pos += 1;
            if !self.end_of_number(start, "imaginary") {
                return;
            }
        } else {
            let nonzero_leading = int_part.len() > 1
                && int_part.starts_with('0')
                && int_part.chars().any(|c| c.is_ascii_digit() && c != '0');
            if !is_float && nonzero_leading {
                self.error(
                    "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers",
                    TextRange::new(start, self.pos),
                    self.line,
                    ErrorClass::Syntax,
                );
                return;
            }
            if !self.end_of_number(start, "decimal") {
                return;
            }
        }
        self.line_has_tokens = true;
        self.push(Kind::Number, start, self.pos, self.line);
    }

    fn operator(&mut self, start: usize, c: char) {
        let rest = &self.src[start..];
        let op = OPS3
            .iter()
            .chain(OPS2.iter())
            .find(|o| rest.starts_with(**o))
            .map(|o| o.len())
            .or_else(|| OPS1.contains(c).then_some(1));
        let Some(len) = op else {
            // `$`, `?`, `` ` ``, a lone `!`: an error token, no message from the tokenizer.
            self.pos += c.len_utf8();
            self.line_has_tokens = true;
            self.push(Kind::ErrorToken, start, self.pos, self.line);
            return;
        };
        self.pos += len;
        match c {
            '(' | '[' | '{' if len == 1 => {
                if self.parens.len() >= MAX_LEVEL {
                    self.error(
                        "too many nested parentheses",
                        TextRange::new(start, start + 1),
                        self.line,
                        ErrorClass::Syntax,
                    );
                    return;
                }
                self.line_has_tokens = true;
                self.push(Kind::Op, start, self.pos, self.line);
                self.parens.push(OpenBracket {
                    ch: c,
                    offset: start,
                    line: self.line,
                });
                return;
            }
            ')' | ']' | '}' => {
                let Some(open) = self.parens.pop() else {
                    self.error(
                        format!("unmatched '{c}'"),
                        TextRange::new(start, start + 1),
                        self.line,
                        ErrorClass::Syntax,
                    );
                    return;
                };
                let expected = match open.ch {
                    '(' => ')',
                    '[' => ']',
                    _ => '}',
                };
                if expected != c {
                    let message = if open.line != self.line {
                        format!(
                            "closing parenthesis '{c}' does not match opening parenthesis '{}' on line {}",
                            open.ch,
                            open.line + 1
                        )
                    } else {
                        format!(
                            "closing parenthesis '{c}' does not match opening parenthesis '{}'",
                            open.ch
                        )
                    };
                    self.error(
                        message,
                        TextRange::new(start, start + 1),
                        self.line,
                        ErrorClass::Syntax,
                    );
                    return;
                }
            }
            _ => {}
        }
        self.line_has_tokens = true;
        self.push(Kind::Op, start, self.pos, self.line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(src: &str) -> Option<(String, usize)> {
        tokenize(src).error.map(|e| (e.message, e.line + 1))
    }

    #[test]
    fn cpython_tokenizer_messages() {
        let cases: &[(&str, &str, usize)] = &[
            ("s = 'abc\n", "unterminated string literal (detected at line 1)", 1),
            ("s = '''abc\nx=1\n", "unterminated triple-quoted string literal (detected at line 2)", 1),
            ("x = )\n", "unmatched ')'", 1),
            ("x = (1]\n", "closing parenthesis ']' does not match opening parenthesis '('", 1),
            ("x = (1,\n 2]\n", "closing parenthesis ']' does not match opening parenthesis '(' on line 1", 2),
            ("if x:\n        a = 1\n    b = 2\n", "unindent does not match any outer indentation level", 3),
            ("if x:\n\ty = 1\n        z = 2\n", "inconsistent use of tabs and spaces in indentation", 3),
            ("x = €\n", "invalid character '€' (U+20AC)", 1),
            ("x = 1\u{a0}+ 2\n", "invalid non-printable character U+00A0", 1),
            ("This is the 2nd step\n", "invalid decimal literal", 1),
            ("x = 01\n", "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers", 1),
            ("x = 0x\n", "invalid hexadecimal literal", 1),
            ("x = 0o8\n", "invalid digit '8' in octal literal", 1),
            ("x = 0b2\n", "invalid digit '2' in binary literal", 1),
            ("x = 1j2\n", "invalid imaginary literal", 1),
            ("x = 1__0\n", "invalid decimal literal", 1),
            ("x = 1e\n", "invalid decimal literal", 1),
            ("x = 1 + \\\n", "unexpected EOF while parsing", 1),
            ("x = 1 \\ y\n", "unexpected character after line continuation character", 1),
            ("x\u{200b} = 1\n", "invalid non-printable character U+200B", 1),
            ("x = \u{b7}\n", "invalid character '\u{b7}' (U+00B7)", 1),
            ("\u{feff}x = 1\n", "invalid non-printable character U+FEFF", 1),
        ];
        for (src, msg, line) in cases {
            assert_eq!(err(src), Some((msg.to_string(), *line)), "{src:?}");
        }
    }

    #[test]
    fn valid_inputs_tokenize_cleanly() {
        for src in [
            "x = 1_000 + 0x_ff + 0o17 + 0b1 + 1.5e-3j + .5 + 1if y else 2\n",
            "été = 1\na\u{b7}b = 2\n",
            "s = r'\\'' + b\"x\" + f'{a}' + '''a\nb'''\n",
            "if x:\n\tpass\n\n  # comment at any depth\n",
            "x = [\n  1,\n    2]\n",
            "x = 1 \\\n  + 2\n",
            "x = 00 + 0_0\n",
        ] {
            let t = tokenize(src);
            assert_eq!(t.error, None, "{src:?}");
            assert_eq!(t.unclosed, None, "{src:?}");
        }
    }

    #[test]
    fn indent_dedent_and_unclosed() {
        let t = tokenize("if x:\n    y = (1,\n");
        assert_eq!(
            t.unclosed,
            Some(OpenBracket {
                ch: '(',
                offset: 14,
                line: 1
            })
        );
        let t = tokenize("if x:\n    y\nz\n");
        let kinds: Vec<Kind> = t.tokens.iter().map(|t| t.kind).collect();
        assert_eq!(
            kinds,
            vec![
                Kind::Name,
                Kind::Name,
                Kind::Op,
                Kind::Newline,
                Kind::Indent,
                Kind::Name,
                Kind::Newline,
                Kind::Dedent,
                Kind::Name,
                Kind::Newline,
                Kind::EndMarker
            ]
        );
    }
}
