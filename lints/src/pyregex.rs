//! Python `re` patterns, matched with Python's semantics.
//!
//! Users copy regexes for state policies and guardrail predicates from pyAgentic / Colony
//! Python code (`re.search(pattern, value)`, `re.findall`), so a pattern must mean here what
//! it means to CPython's `re` module (`sre_parse`, Python 3.11+ rules). [`PyRegex::new`]
//! parses the Python syntax and translates it to an equivalent [`fancy_regex`] pattern:
//!
//! | Python | meaning | translated to |
//! |---|---|---|
//! | `$` (no `MULTILINE`) | end of string, or before a final `\n` | `(?=\n?\z)` |
//! | `$` with `(?m)` | before any `\n`, or end | `(?m:$)` |
//! | `^` (no `MULTILINE`) / `\A` | start of string | `\A` |
//! | `\Z` | end of string only | `\z` |
//! | `.` (no `DOTALL`) | any character but `\n` | `[^\n]` |
//! | `[[:alpha:]]` | the set `[ : a l p h` followed by a literal `]` (no POSIX classes) | escaped literals |
//! | `[a&&b]`, `[a--b]`, `[~~]` | literal characters (no set operations) | escaped literals |
//! | `\s` | `str.isspace()` characters (includes `\x1c`–`\x1f`) | `[\s\x1c-\x1f]` |
//! | `\1`, `(?P=name)` | backreference | `(?:\1)`, `\k<name>` |
//! | `(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)` | lookaround (look-behind must be fixed-width) | same |
//! | `(?P<name>…)`, `(?(1)a\|b)`, `(?>…)`, `x*+` | named group, conditional, atomic, possessive | same / atomic group |
//! | `a{`, `x{,3}`, `{}` | a literal `{` unless it forms a valid `{m,n}` | `\{`, `{0,3}` |
//! | `(?aimsux)`, `(?i-s:…)`, `(?#…)`, verbose mode | flags, comments | applied while translating |
//!
//! Patterns Python rejects are errors with Python's message and the code-point position in
//! the pattern (`nothing to repeat at position 0`, `bad escape \e at position 3`, ...). The
//! few valid Python patterns with no translation (a literal lone surrogate, `(?L)`, which is
//! bytes-only anyway) are errors too. Known residual differences: `\w` and case-insensitive
//! matching use Unicode's definitions (Rust) rather than `str.isalnum()` / Python's case
//! folding, which differ only for rare characters (combining marks, a few case pairs).
//!
//! Matching follows Python: [`PyRegex::search`] is `re.search` (a match anywhere),
//! [`PyRegex::is_match_at_start`] is `re.match`, [`PyRegex::fullmatch`] is `re.fullmatch`, and
//! [`PyRegex::find_captures`] is `re.finditer` (leftmost, first-alternative-wins matches).

use std::fmt;

/// A Python `re` pattern compiled with Python's semantics.
/// Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct PyRegex(std::sync::Arc<Compiled>);

#[derive(Debug)]
struct Compiled {
    source: String,
    /// The translated pattern.
    translated: String,
    search: fancy_regex::Regex,
    /// `\A(?:…)\z` and `\A(?:…)`, compiled when first used: most patterns are only ever
    /// searched, and compiling a Unicode-aware pattern costs about a millisecond.
    fullmatch: std::sync::OnceLock<Result<fancy_regex::Regex, String>>,
    start: std::sync::OnceLock<Result<fancy_regex::Regex, String>>,
    /// For a pattern with `\b` / `\B` (without `re.ASCII`): the same pattern with them
    /// translated exactly, used on the texts where the engine's word characters and Python's
    /// differ ([`word_chars_differ`]; the engine's own `\b` is much faster).
    exact: Option<Box<Compiled>>,
}

impl Compiled {
    /// The compiled form of translation `t` of `source`.
    fn new(source: &str, t: String, exact: Option<Box<Compiled>>) -> Result<Self, PyRegexError> {
        Ok(Compiled {
            source: source.to_string(),
            search: build(&t)?,
            translated: t,
            fullmatch: std::sync::OnceLock::new(),
            start: std::sync::OnceLock::new(),
            exact,
        })
    }

    /// The form to match `text` with.
    fn for_text(&self, text: &str) -> &Compiled {
        match &self.exact {
            Some(exact) if word_chars_differ(text) => exact,
            _ => self,
        }
    }
}

/// Backtracking steps one match attempt may take (backreferences and look-around need the
/// backtracking engine) before it gives up with a [`MatchError`]: ten times `fancy_regex`'s
/// default, a few tenths of a second per attempt at worst. Callers decide a match that gave
/// up conservatively (issue 6 T13), never as "no match".
pub const BACKTRACK_LIMIT: usize = 10_000_000;

/// Compiles a translated pattern for the engine.
fn build(p: &str) -> Result<fancy_regex::Regex, PyRegexError> {
    fancy_regex::RegexBuilder::new(p)
        .backtrack_limit(BACKTRACK_LIMIT)
        .build()
        .map_err(|e| PyRegexError {
            message: format!("pattern cannot be translated to the matching engine: {e}"),
            position: None,
        })
}

impl Compiled {
    /// The anchored form `wrap` of the pattern, compiled once. The search form compiled, so
    /// this one does too (same syntax inside a non-capturing group); an engine error (such as
    /// a size limit) is reported as a matching error.
    fn anchored<'a>(
        &self,
        cell: &'a std::sync::OnceLock<Result<fancy_regex::Regex, String>>,
        wrap: impl FnOnce(&str) -> String,
    ) -> Result<&'a fancy_regex::Regex, MatchError> {
        cell.get_or_init(|| build(&wrap(&self.translated)).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| MatchError(e.clone()))
    }
}

/// How a [`PyRegex`] is applied to a string, named after Python's `re` functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MatchMode {
    /// `re.search`: a match anywhere.
    #[default]
    Search,
    /// `re.match`: a match starting at the beginning.
    Match,
    /// `re.fullmatch`: the whole string matches.
    FullMatch,
}

impl MatchMode {
    /// Parses `search` / `match` / `fullmatch`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "search" => Some(Self::Search),
            "match" => Some(Self::Match),
            "fullmatch" => Some(Self::FullMatch),
            _ => None,
        }
    }

    /// The Python function name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Search => "search",
            Self::Match => "match",
            Self::FullMatch => "fullmatch",
        }
    }
}

/// A pattern Python would reject, or one that cannot be translated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyRegexError {
    /// Python's message, e.g. `nothing to repeat`.
    pub message: String,
    /// Code-point offset in the pattern, when Python reports one.
    pub position: Option<usize>,
}

impl fmt::Display for PyRegexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(p) => write!(f, "{} at position {p}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for PyRegexError {}

/// Result of matching when the backtracking engine gives up (catastrophic backtracking).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchError(pub String);

impl PyRegex {
    /// Compiles a Python pattern. Errors: what Python's `re.compile` raises, plus
    /// untranslatable constructs (see the module docs).
    pub fn new(pattern: &str) -> Result<Self, PyRegexError> {
        let (t, unicode_b) = translate_b(pattern, false)?;
        let exact = match unicode_b {
            true => {
                let (exact, _) = translate_b(pattern, true)?;
                Some(Box::new(Compiled::new(pattern, exact, None)?))
            }
            false => None,
        };
        Ok(Self(std::sync::Arc::new(Compiled::new(pattern, t, exact)?)))
    }

    /// The Python pattern as written.
    pub fn as_str(&self) -> &str {
        &self.0.source
    }

    /// `re.search(pattern, text) is not None`.
    pub fn search(&self, text: &str) -> Result<bool, MatchError> {
        self.0
            .for_text(text)
            .search
            .is_match(text)
            .map_err(|e| MatchError(e.to_string()))
    }

    /// `re.match(pattern, text) is not None`.
    pub fn is_match_at_start(&self, text: &str) -> Result<bool, MatchError> {
        let c = self.0.for_text(text);
        c.anchored(&c.start, |t| format!("\\A(?:{t})"))?
            .is_match(text)
            .map_err(|e| MatchError(e.to_string()))
    }

    /// `re.fullmatch(pattern, text) is not None`.
    pub fn fullmatch(&self, text: &str) -> Result<bool, MatchError> {
        let c = self.0.for_text(text);
        c.anchored(&c.fullmatch, |t| format!("\\A(?:{t})\\z"))?
            .is_match(text)
            .map_err(|e| MatchError(e.to_string()))
    }

    /// Applies the pattern the way `mode` names.
    pub fn is_match(&self, mode: MatchMode, text: &str) -> Result<bool, MatchError> {
        match mode {
            MatchMode::Search => self.search(text),
            MatchMode::Match => self.is_match_at_start(text),
            MatchMode::FullMatch => self.fullmatch(text),
        }
    }

    /// [`PyRegex::find_captures`] that keeps what was found before an engine error: per match,
    /// the capture (as there) and the whole match text, so far, and the error, if any.
    pub fn find_captures_partial(
        &self,
        text: &str,
    ) -> (Vec<(Option<String>, String)>, Option<MatchError>) {
        let mut out = Vec::new();
        let re = &self.0.for_text(text).search;
        for c in re.captures_iter(text) {
            let c = match c {
                Ok(c) => c,
                Err(e) => return (out, Some(MatchError(e.to_string()))),
            };
            let whole = c.get(0).map_or(String::new(), |m| m.as_str().to_string());
            let m = if re.captures_len() > 1 {
                c.get(1).map(|m| m.as_str().to_string())
            } else {
                Some(whole.clone())
            };
            out.push((m, whole));
        }
        (out, None)
    }

    /// `re.finditer`: for each non-overlapping match, group 1 when the pattern has groups
    /// (`None` when that group did not take part), else the whole match.
    pub fn find_captures(&self, text: &str) -> Result<Vec<Option<String>>, MatchError> {
        let mut out = Vec::new();
        let re = &self.0.for_text(text).search;
        for c in re.captures_iter(text) {
            let c = c.map_err(|e| MatchError(e.to_string()))?;
            let m = if re.captures_len() > 1 {
                c.get(1)
            } else {
                c.get(0)
            };
            out.push(m.map(|m| m.as_str().to_string()));
        }
        Ok(out)
    }
}

// ---------------------------------------------------------------------------------------
// Translation
// ---------------------------------------------------------------------------------------

/// `\b` under `re.ASCII` (the engine has no inline Unicode switch).
const ASCII_B: &str = "(?:(?<=[0-9A-Za-z_])(?![0-9A-Za-z_])|(?<![0-9A-Za-z_])(?=[0-9A-Za-z_]))";
/// `\B` under `re.ASCII`.
const ASCII_NOT_B: &str =
    "(?:(?<=[0-9A-Za-z_])(?=[0-9A-Za-z_])|(?<![0-9A-Za-z_])(?![0-9A-Za-z_])(?!\\A\\z))";

/// Python's `\w` without `re.ASCII`: `str.isalnum()` or `_`, which is the letters and numbers
/// of Unicode (categories L and N; checked against CPython 3.11 over every code point). Rust's
/// `\w` differs: it adds the combining marks, connector punctuation other than `_`, the joiners
/// and other alphabetic symbols (`Ⓐ`), and lacks the numbers of category No (`²`, `½`).
const PY_WORD: &str = "\\p{L}\\p{N}_";
/// `\b` without `re.ASCII`, exactly as Python's word characters ([`PY_WORD`]) define it.
const UNICODE_B: &str =
    "(?:(?<=[\\p{L}\\p{N}_])(?![\\p{L}\\p{N}_])|(?<![\\p{L}\\p{N}_])(?=[\\p{L}\\p{N}_]))";
/// `\B` without `re.ASCII`, likewise.
const UNICODE_NOT_B: &str =
    "(?:(?<=[\\p{L}\\p{N}_])(?=[\\p{L}\\p{N}_])|(?<![\\p{L}\\p{N}_])(?![\\p{L}\\p{N}_])(?!\\A\\z))";

/// True when a `\b` of the engine (Rust's Unicode word characters) may decide differently from
/// Python's in `text`: it holds a character that is a word character to one and not the other.
fn word_chars_differ(text: &str) -> bool {
    static DIFF: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new("[\\w~~[\\p{L}\\p{N}_]]").ok());
    !text.is_ascii() && DIFF.as_ref().is_none_or(|d| d.is_match(text))
}

/// Python's simple lower-case mapping as `re` uses it (`_sre.unicode_tolower`: the first
/// character of the full mapping, so `İ` lowers to `i`).
fn py_lower(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// Python's `_sre.unicode_iscased`: the character has a lower or upper case other than itself.
fn py_cased(c: char) -> bool {
    py_lower(c) != c || c.to_uppercase().next().unwrap_or(c) != c
}

/// `re`'s extra case equivalences (`re._casefix._EXTRA_CASES` of CPython 3.11): lower-case
/// characters that match each other under `IGNORECASE` although neither lowers to the other.
const EXTRA_CASES: &[(u32, &[u32])] = &[
    (0x69, &[0x131]),
    (0x73, &[0x17f]),
    (0xb5, &[0x3bc]),
    (0x131, &[0x69]),
    (0x17f, &[0x73]),
    (0x345, &[0x3b9, 0x1fbe]),
    (0x390, &[0x1fd3]),
    (0x3b0, &[0x1fe3]),
    (0x3b2, &[0x3d0]),
    (0x3b5, &[0x3f5]),
    (0x3b8, &[0x3d1]),
    (0x3b9, &[0x345, 0x1fbe]),
    (0x3ba, &[0x3f0]),
    (0x3bc, &[0xb5]),
    (0x3c0, &[0x3d6]),
    (0x3c1, &[0x3f1]),
    (0x3c2, &[0x3c3]),
    (0x3c3, &[0x3c2]),
    (0x3c6, &[0x3d5]),
    (0x3d0, &[0x3b2]),
    (0x3d1, &[0x3b8]),
    (0x3d5, &[0x3c6]),
    (0x3d6, &[0x3c0]),
    (0x3f0, &[0x3ba]),
    (0x3f1, &[0x3c1]),
    (0x3f5, &[0x3b5]),
    (0x432, &[0x1c80]),
    (0x434, &[0x1c81]),
    (0x43e, &[0x1c82]),
    (0x441, &[0x1c83]),
    (0x442, &[0x1c84, 0x1c85]),
    (0x44a, &[0x1c86]),
    (0x463, &[0x1c87]),
    (0x1c80, &[0x432]),
    (0x1c81, &[0x434]),
    (0x1c82, &[0x43e]),
    (0x1c83, &[0x441]),
    (0x1c84, &[0x442, 0x1c85]),
    (0x1c85, &[0x442, 0x1c84]),
    (0x1c86, &[0x44a]),
    (0x1c87, &[0x463]),
    (0x1c88, &[0xa64b]),
    (0x1e61, &[0x1e9b]),
    (0x1e9b, &[0x1e61]),
    (0x1fbe, &[0x345, 0x3b9]),
    (0x1fd3, &[0x390]),
    (0x1fe3, &[0x3b0]),
    (0xa64b, &[0x1c88]),
    (0xfb05, &[0xfb06]),
    (0xfb06, &[0xfb05]),
];

/// The characters a literal `c` matches under Python's `IGNORECASE` (`ascii`: with `re.ASCII`),
/// when the engine's own case-insensitive matching (Unicode simple case folding) would match
/// others; `None` when the engine's matches are Python's. Python compares lower cases: a cased
/// `c` matches every character whose lower case is `c`'s, or one of `c`'s lower case's extra
/// equivalents ([`EXTRA_CASES`]); with `re.ASCII` only ASCII letters have cases. Of the ASCII
/// letters only `i`/`I` (Python adds `İ` and `ı`) and, with `re.ASCII`, `k`/`s` (the engine adds
/// the Kelvin sign and `ſ`) differ; every other non-ASCII character is spelled out.
fn case_set(c: char, ascii: bool) -> Option<Vec<char>> {
    if ascii {
        return match c {
            'k' | 'K' | 's' | 'S' => Some(vec![c.to_ascii_lowercase(), c.to_ascii_uppercase()]),
            _ if c.is_ascii() => None,
            _ => Some(vec![c]),
        };
    }
    if c.is_ascii() && !matches!(c, 'i' | 'I') {
        return None;
    }
    if !py_cased(c) {
        return Some(vec![c]);
    }
    static LOWERED_FROM: std::sync::LazyLock<rustc_hash::FxHashMap<char, Vec<char>>> =
        std::sync::LazyLock::new(|| {
            let mut m: rustc_hash::FxHashMap<char, Vec<char>> = Default::default();
            for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
                let l = py_lower(c);
                if l != c {
                    m.entry(l).or_default().push(c);
                }
            }
            m
        });
    let lo = py_lower(c);
    let extra = EXTRA_CASES
        .iter()
        .find(|(k, _)| *k == lo as u32)
        .map_or(&[][..], |(_, v)| *v);
    let mut out = Vec::new();
    for t in std::iter::once(lo).chain(extra.iter().filter_map(|&x| char::from_u32(x))) {
        if py_lower(t) == t {
            out.push(t);
        }
        out.extend(LOWERED_FROM.get(&t).into_iter().flatten());
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// Appends to a class under `IGNORECASE` (`ascii`: with `re.ASCII`) the characters Python matches
/// with its members `lo..=hi` that the engine's case folding does not add: a class matches a
/// character when the character's lower case is a member's or an extra equivalent of one
/// ([`case_set`]). With `re.ASCII` (the class is then matched without the engine's folding) the
/// other case of each ASCII letter. A range of more than 1,024 non-ASCII characters is left to
/// the engine's folding.
fn class_case_range(extra: &mut String, lo: char, hi: char, ascii: bool) {
    let mut add = |c: char| extra.push_str(&format!("\\x{{{:X}}}", c as u32));
    if ascii {
        for c in (lo as u32..=(hi as u32).min(0x7f)).filter_map(char::from_u32) {
            if c.is_ascii_alphabetic() {
                add(if c.is_ascii_lowercase() {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                });
            }
        }
        return;
    }
    if (lo..=hi).contains(&'i') || (lo..=hi).contains(&'I') {
        add('\u{130}');
        add('\u{131}');
    }
    let from = (lo as u32).max(0x80);
    if (hi as u32) < from || hi as u32 - from > 1024 {
        return;
    }
    for c in (from..=hi as u32).filter_map(char::from_u32) {
        for m in case_set(c, false).into_iter().flatten() {
            if m != c {
                add(m);
            }
        }
    }
}

/// Appends the literal `c` under `flags`: under `IGNORECASE`, as the set of characters Python
/// matches with it when the engine's case folding differs ([`case_set`]).
fn push_lit_as(out: &mut String, c: char, flags: Flags) {
    let set = if flags.i { case_set(c, flags.a) } else { None };
    match set.as_deref() {
        None => push_lit(out, c),
        Some([one]) => {
            out.push_str("(?-i:");
            push_lit(out, *one);
            out.push(')');
        }
        Some(many) => {
            out.push_str("(?-i:[");
            for &m in many {
                out.push_str(&format!("\\x{{{:X}}}", m as u32));
            }
            out.push_str("])");
        }
    }
}

const MAXREPEAT: u64 = 4_294_967_295;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Flags {
    i: bool,
    m: bool,
    s: bool,
    x: bool,
    a: bool,
}

/// Width of a sub-pattern in code points: (min, max), `None` = unbounded.
type Width = (u64, Option<u64>);

fn add_w(a: Width, b: Width) -> Width {
    (
        a.0.saturating_add(b.0),
        match (a.1, b.1) {
            (Some(x), Some(y)) => Some(x.saturating_add(y)),
            _ => None,
        },
    )
}

struct Parser {
    p: Vec<char>,
    pos: usize,
    /// Capture groups opened so far.
    groups: usize,
    /// Groups still open (numbers).
    open: Vec<usize>,
    /// Widths of closed groups (index = group number).
    group_width: Vec<Option<Width>>,
    names: Vec<(String, usize)>,
    /// Globally set flags (`(?i)` at the start).
    global: Flags,
    /// Group numbers used by conditionals, with their positions.
    cond_refs: Vec<(usize, usize)>,
    /// Open look-behinds: groups defined before each, and whether a backreference inside it
    /// names a group defined inside it (Python rejects that at the look-behind's end).
    lookbehinds: Vec<(usize, bool)>,
    /// `\b` / `\B` without `re.ASCII` are translated exactly (look-arounds over Python's word
    /// characters, slower) rather than as the engine's own.
    exact_b: bool,
    /// The pattern holds a `\b` or `\B` without `re.ASCII`.
    unicode_b: bool,
}

fn err<T>(message: impl Into<String>, position: usize) -> Result<T, PyRegexError> {
    Err(PyRegexError {
        message: message.into(),
        position: Some(position),
    })
}

/// Appends `c` as a literal, escaped for the engine (inside or outside a class).
fn push_lit(out: &mut String, c: char) {
    if "\\.+*?()|[]{}^$#&-~".contains(c) {
        out.push('\\');
        out.push(c);
    } else if c.is_whitespace() || c.is_control() {
        out.push_str(&format!("\\x{{{:X}}}", c as u32));
    } else {
        out.push(c);
    }
}

/// Translates a Python pattern to fancy-regex syntax, with `\b` / `\B` (without `re.ASCII`) as
/// Python's exactly (`exact_b`) or as the engine's; also tells whether the pattern holds one.
fn translate_b(pattern: &str, exact_b: bool) -> Result<(String, bool), PyRegexError> {
    let mut p = Parser {
        p: pattern.chars().collect(),
        pos: 0,
        groups: 0,
        open: Vec::new(),
        group_width: vec![None],
        names: Vec::new(),
        global: Flags {
            i: false,
            m: false,
            s: false,
            x: false,
            a: false,
        },
        cond_refs: Vec::new(),
        lookbehinds: Vec::new(),
        exact_b,
        unicode_b: false,
    };
    let flags = p.global;
    let (body, _) = p.alternation(flags, 0, true)?;
    if p.pos < p.p.len() {
        // Only a stray `)` stops the top level.
        return err("unbalanced parenthesis", p.pos);
    }
    if let Some(&(g, at)) = p.cond_refs.iter().find(|(g, _)| *g > p.groups) {
        return err(format!("invalid group reference {g}"), at);
    }
    let mut out = String::new();
    if p.global.i {
        out.push_str("(?i)");
    }
    out.push_str(&body);
    Ok((out, p.unicode_b))
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.p.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.p.get(self.pos + k).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Skips verbose-mode whitespace and comments.
    fn skip_verbose(&mut self, flags: Flags) {
        if !flags.x {
            return;
        }
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.pos += 1;
            } else if c == '#' {
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    if c == '\n' {
                        break;
                    }
                }
            } else {
                break;
            }
        }
    }

    /// `a|b|c` up to a `)` or the end. Returns the translation and its width.
    fn alternation(
        &mut self,
        mut flags: Flags,
        depth: usize,
        top: bool,
    ) -> Result<(String, Width), PyRegexError> {
        let mut out = String::new();
        let mut width: Option<Width> = None;
        let mut first_branch = true;
        loop {
            let (s, w) = self.sequence(&mut flags, depth, top && first_branch)?;
            out.push_str(&s);
            width = Some(match width {
                None => w,
                Some(o) => (
                    o.0.min(w.0),
                    match (o.1, w.1) {
                        (Some(x), Some(y)) => Some(x.max(y)),
                        _ => None,
                    },
                ),
            });
            if self.eat('|') {
                out.push('|');
                first_branch = false;
                continue;
            }
            break;
        }
        Ok((out, width.unwrap_or((0, Some(0)))))
    }

    /// A sequence of quantified atoms up to `|`, `)` or the end.
    fn sequence(
        &mut self,
        flags: &mut Flags,
        depth: usize,
        first: bool,
    ) -> Result<(String, Width), PyRegexError> {
        let mut out = String::new();
        let mut width: Width = (0, Some(0));
        let mut items = 0usize;
        // The last item: (start in `out`, width, repeatable, already quantified).
        let mut last: Option<(usize, Width, bool)> = None;
        loop {
            self.skip_verbose(*flags);
            let Some(c) = self.peek() else { break };
            if c == '|' || c == ')' {
                break;
            }
            let here = self.pos;
            if matches!(c, '*' | '+' | '?') || (c == '{' && self.repeat_braces().is_some()) {
                let (min, max, len) = if c == '{' {
                    self.repeat_braces().expect("checked")
                } else {
                    match c {
                        '*' => (0, None, 1),
                        '+' => (1, None, 1),
                        _ => (0, Some(1), 1),
                    }
                };
                let Some((start, w, repeatable)) = last else {
                    return err("nothing to repeat", here);
                };
                if !repeatable {
                    return err("nothing to repeat", here);
                }
                if let Some(m) = max {
                    if m < min {
                        return err("min repeat greater than max repeat", here + 1);
                    }
                }
                if min >= MAXREPEAT || max.is_some_and(|m| m >= MAXREPEAT) {
                    return err("the repetition number is too large", here + 1);
                }
                self.pos += len;
                let quant = match (c, max) {
                    ('{', Some(m)) if m == min => format!("{{{min}}}"),
                    ('{', Some(m)) => format!("{{{min},{m}}}"),
                    ('{', None) => format!("{{{min},}}"),
                    _ => c.to_string(),
                };
                let atom = out.split_off(start);
                let lazy = self.eat('?');
                let possessive = !lazy && self.eat('+');
                if w.1 == Some(0) {
                    // A repeated zero-width item (`(?=a)*`, `(?:)+`), which Python accepts and
                    // the engine does not: it matches at most once either way.
                    out.push_str(&match (min, lazy) {
                        (0, false) => format!("(?:{atom}|)"),
                        (0, true) => format!("(?:|{atom})"),
                        _ => format!("(?:{atom})"),
                    });
                } else if possessive {
                    out.push_str(&format!("(?>(?:{atom}){quant})"));
                } else {
                    out.push_str(&format!("(?:{atom}){quant}"));
                    if lazy {
                        out.push('?');
                    }
                }
                // Undo the atom's width, add the repeated one.
                width = (
                    width.0.saturating_sub(w.0),
                    match (width.1, w.1) {
                        (Some(a), Some(b)) => Some(a.saturating_sub(b)),
                        _ => None,
                    },
                );
                let rep: Width = (
                    w.0.saturating_mul(min),
                    match (w.1, max) {
                        (Some(0), _) => Some(0),
                        (Some(b), Some(m)) => Some(b.saturating_mul(m)),
                        _ => None,
                    },
                );
                width = add_w(width, rep);
                self.skip_verbose(*flags);
                if let Some(n) = self.peek() {
                    if matches!(n, '*' | '+' | '?') || (n == '{' && self.repeat_braces().is_some())
                    {
                        return err("multiple repeat", self.pos);
                    }
                }
                last = Some((start, rep, false));
                items += 1;
                continue;
            }
            let start = out.len();
            let (w, repeatable) = self.atom(flags, depth, first && items == 0, &mut out)?;
            width = add_w(width, w);
            if out.len() > start || repeatable {
                last = Some((start, w, repeatable));
                items += 1;
            }
        }
        Ok((out, width))
    }

    /// `{m}`, `{m,}`, `{,n}`, `{m,n}` at the cursor: (min, max, length in chars).
    fn repeat_braces(&self) -> Option<(u64, Option<u64>, usize)> {
        let mut i = self.pos + 1;
        if self.p.get(i) == Some(&'}') {
            return None;
        }
        let digits = |i: &mut usize| {
            let s = *i;
            while self.p.get(*i).is_some_and(|c| c.is_ascii_digit()) {
                *i += 1;
            }
            let t: String = self.p[s..*i].iter().collect();
            t
        };
        let lo = digits(&mut i);
        let hi = if self.p.get(i) == Some(&',') {
            i += 1;
            digits(&mut i)
        } else {
            lo.clone()
        };
        if self.p.get(i) != Some(&'}') {
            return None;
        }
        let parse = |s: &str| s.parse::<u64>().unwrap_or(u64::MAX);
        let min = if lo.is_empty() { 0 } else { parse(&lo) };
        let max = if hi.is_empty() {
            None
        } else {
            Some(parse(&hi))
        };
        Some((min, max, i + 1 - self.pos))
    }

    /// One atom; appends its translation. Returns (width, repeatable).
    fn atom(
        &mut self,
        flags: &mut Flags,
        depth: usize,
        first: bool,
        out: &mut String,
    ) -> Result<(Width, bool), PyRegexError> {
        let here = self.pos;
        let c = self.p[self.pos];
        self.pos += 1;
        match c {
            '.' => {
                out.push_str(if flags.s { "(?s:.)" } else { "[^\\n]" });
                Ok(((1, Some(1)), true))
            }
            '^' => {
                out.push_str(if flags.m { "(?m:^)" } else { "\\A" });
                Ok(((0, Some(0)), false))
            }
            '$' => {
                out.push_str(if flags.m { "(?m:$)" } else { "(?=\\n?\\z)" });
                Ok(((0, Some(0)), false))
            }
            '[' => {
                let cls = self.class(*flags, here)?;
                out.push_str(&cls);
                Ok(((1, Some(1)), true))
            }
            '(' => self.group(flags, depth, first, here, out),
            '\\' => self.escape(*flags, here, out),
            _ => {
                push_lit_as(out, c, *flags);
                Ok(((1, Some(1)), true))
            }
        }
    }

    fn group_name(&mut self, term: char, at: usize) -> Result<String, PyRegexError> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c == term {
                break;
            }
            self.pos += 1;
        }
        if self.peek() != Some(term) {
            return err(format!("missing {term}, unterminated name"), start);
        }
        let name: String = self.p[start..self.pos].iter().collect();
        self.pos += 1;
        if name.is_empty() {
            return err("missing group name", start);
        }
        let mut cs = name.chars();
        let ok_first = cs
            .next()
            .is_some_and(|c| c == '_' || unicode_ident::is_xid_start(c));
        if !ok_first || !cs.all(unicode_ident::is_xid_continue) {
            let _ = at;
            return err(format!("bad character in group name '{name}'"), start);
        }
        Ok(name)
    }

    fn group(
        &mut self,
        flags: &mut Flags,
        depth: usize,
        first: bool,
        here: usize,
        out: &mut String,
    ) -> Result<(Width, bool), PyRegexError> {
        let mut capture: Option<Option<String>> = Some(None);
        let mut open = "(".to_string();
        let mut inner_flags = *flags;
        let mut lookbehind = false;
        if self.eat('?') {
            let Some(c) = self.peek() else {
                return err("unexpected end of pattern", self.pos);
            };
            self.pos += 1;
            match c {
                ':' => {
                    capture = None;
                    open = "(?:".into();
                }
                'P' => {
                    if self.eat('<') {
                        let name = self.group_name('>', here)?;
                        if self.names.iter().any(|(n, _)| *n == name) {
                            return err(format!("redefinition of group name '{name}'"), here + 4);
                        }
                        capture = Some(Some(name));
                    } else if self.eat('=') {
                        let name = self.group_name(')', here)?;
                        let Some(&(_, g)) = self.names.iter().find(|(n, _)| *n == name) else {
                            return err(format!("unknown group name '{name}'"), here + 4);
                        };
                        return self.backref(g, here, out);
                    } else {
                        let got = self.peek().map_or(String::new(), |c| c.to_string());
                        return err(format!("unknown extension ?P{got}"), here + 1);
                    }
                }
                '#' => {
                    while let Some(c) = self.peek() {
                        self.pos += 1;
                        if c == ')' {
                            return Ok(((0, Some(0)), false));
                        }
                    }
                    return err("missing ), unterminated comment", here);
                }
                '=' | '!' => {
                    capture = None;
                    open = format!("(?{c}");
                }
                '<' => match self.peek() {
                    Some(d @ ('=' | '!')) => {
                        self.pos += 1;
                        capture = None;
                        open = format!("(?<{d}");
                        lookbehind = true;
                    }
                    _ => {
                        let got = self.peek().map_or(String::new(), |c| c.to_string());
                        return err(format!("unknown extension ?<{got}"), here + 1);
                    }
                },
                '>' => {
                    capture = None;
                    open = "(?>".into();
                }
                '(' => return self.conditional(flags, depth, here, out),
                'a' | 'i' | 'L' | 'm' | 's' | 'u' | 'x' | '-' => {
                    self.pos -= 1;
                    let scoped = self.flags(flags, here)?;
                    match scoped {
                        None => {
                            if !first {
                                return err(
                                    "global flags not at the start of the expression",
                                    here,
                                );
                            }
                            return Ok(((0, Some(0)), false));
                        }
                        Some(f) => {
                            capture = None;
                            inner_flags = f;
                            open = match (flags.i, f.i) {
                                (false, true) => "(?i:".into(),
                                (true, false) => "(?-i:".into(),
                                _ => "(?:".into(),
                            };
                        }
                    }
                }
                other => {
                    return err(format!("unknown extension ?{other}"), here + 1);
                }
            }
        }
        let number = if let Some(name) = &capture {
            self.groups += 1;
            let g = self.groups;
            if let Some(n) = name {
                self.names.push((n.clone(), g));
                open = format!("(?P<{n}>");
            }
            self.open.push(g);
            self.group_width.push(None);
            Some(g)
        } else {
            None
        };
        if lookbehind {
            self.lookbehinds.push((self.groups, false));
        }
        let (body, w) = self.alternation(inner_flags, depth + 1, false)?;
        if !self.eat(')') {
            return err("missing ), unterminated subpattern", here);
        }
        if lookbehind && self.lookbehinds.pop().is_some_and(|(_, bad)| bad) {
            return err(
                "cannot refer to group defined in the same lookbehind subpattern",
                self.pos - 1,
            );
        }
        if let Some(g) = number {
            self.open.retain(|&x| x != g);
            self.group_width[g] = Some(w);
        }
        if lookbehind && w.1 != Some(w.0) {
            return Err(PyRegexError {
                message: "look-behind requires fixed-width pattern".into(),
                position: None,
            });
        }
        out.push_str(&open);
        out.push_str(&body);
        out.push(')');
        let is_assert = open.starts_with("(?=")
            || open.starts_with("(?!")
            || open.starts_with("(?<=")
            || open.starts_with("(?<!");
        if is_assert {
            Ok(((0, Some(0)), true))
        } else {
            Ok((w, true))
        }
    }

    /// Writes a backreference to the existing group `g` (by number or by name): Python's "cannot
    /// refer to an open group" error at `at` when `g` is not closed yet, else `(?:\g)` with the
    /// group's width.
    fn backref(
        &mut self,
        g: usize,
        at: usize,
        out: &mut String,
    ) -> Result<(Width, bool), PyRegexError> {
        if self.open.contains(&g) {
            return err("cannot refer to an open group", at);
        }
        self.check_lookbehind_ref(g);
        out.push_str(&format!("(?:\\{g})"));
        let w = self
            .group_width
            .get(g)
            .copied()
            .flatten()
            .unwrap_or((0, None));
        Ok((w, true))
    }

    /// Notes a backreference to group `g` for the enclosing look-behinds.
    fn check_lookbehind_ref(&mut self, g: usize) {
        for (start, bad) in self.lookbehinds.iter_mut() {
            if g > *start {
                *bad = true;
            }
        }
    }

    /// `(?aiLmsux)` (global, returns `None`) or `(?flags-flags:` (scoped, returns the flags).
    /// The cursor is on the first flag character.
    fn flags(&mut self, flags: &mut Flags, here: usize) -> Result<Option<Flags>, PyRegexError> {
        let mut add = Vec::new();
        while let Some(c) = self.peek() {
            if "aiLmsux".contains(c) {
                add.push(c);
                self.pos += 1;
            } else {
                break;
            }
        }
        let mut del = Vec::new();
        let mut has_minus = false;
        if self.eat('-') {
            has_minus = true;
            while let Some(c) = self.peek() {
                if "aiLmsux".contains(c) {
                    if "aLu".contains(c) {
                        return err(
                            "bad inline flags: cannot turn off flags 'a', 'u' and 'L'",
                            self.pos,
                        );
                    }
                    del.push(c);
                    self.pos += 1;
                } else {
                    break;
                }
            }
            if del.is_empty() {
                return err("missing flag", self.pos);
            }
        }
        let end = self.peek();
        match end {
            Some(')') if !has_minus => {
                self.pos += 1;
            }
            Some(':') => {
                self.pos += 1;
            }
            Some(c) if c.is_alphabetic() => {
                return err("unknown flag", self.pos);
            }
            None => return err("missing -, : or )", self.pos),
            _ => {
                return err(
                    if has_minus {
                        "missing :"
                    } else {
                        "missing -, : or )"
                    },
                    self.pos,
                )
            }
        }
        if add.contains(&'L') {
            return err(
                "bad inline flags: cannot use 'L' flag with a str pattern",
                self.pos - 1,
            );
        }
        if add.contains(&'a') && add.contains(&'u') {
            return err(
                "bad inline flags: flags 'a', 'u' and 'L' are incompatible",
                here + 2,
            );
        }
        if add.iter().any(|c| del.contains(c)) {
            return err("bad inline flags: flag turned on and off", here + 2);
        }
        let apply = |f: &mut Flags| {
            for &c in &add {
                match c {
                    'i' => f.i = true,
                    'm' => f.m = true,
                    's' => f.s = true,
                    'x' => f.x = true,
                    'a' => f.a = true,
                    'u' => f.a = false,
                    _ => {}
                }
            }
            for &c in &del {
                match c {
                    'i' => f.i = false,
                    'm' => f.m = false,
                    's' => f.s = false,
                    'x' => f.x = false,
                    _ => {}
                }
            }
        };
        if end == Some(')') {
            apply(&mut self.global);
            apply(flags);
            Ok(None)
        } else {
            let mut f = *flags;
            apply(&mut f);
            Ok(Some(f))
        }
    }

    /// `(?(id)yes|no)`; the cursor is after `(?(`.
    fn conditional(
        &mut self,
        flags: &mut Flags,
        depth: usize,
        here: usize,
        out: &mut String,
    ) -> Result<(Width, bool), PyRegexError> {
        let name = {
            let start = self.pos;
            while self.peek().is_some_and(|c| c != ')') {
                self.pos += 1;
            }
            if !self.eat(')') {
                return err("missing ), unterminated name", start);
            }
            self.p[start..self.pos - 1].iter().collect::<String>()
        };
        if name.is_empty() {
            return err("missing group name", here + 3);
        }
        let cond = if name.chars().all(|c| c.is_ascii_digit()) {
            let g: usize = name.parse().unwrap_or(usize::MAX);
            if g == 0 {
                return err("bad group number", here + 3);
            }
            // Python checks conditions on later groups at the end of the pattern.
            self.cond_refs.push((g, here + 3));
            format!("({g})")
        } else {
            let Some(&(_, g)) = self.names.iter().find(|(n, _)| *n == name) else {
                if name.chars().all(|c| c == '_' || c.is_alphanumeric()) {
                    return err(format!("unknown group name '{name}'"), here + 3);
                }
                return err(format!("bad character in group name '{name}'"), here + 3);
            };
            format!("({g})")
        };
        let (yes, wy) = self.sequence(&mut flags.clone(), depth + 1, false)?;
        let mut no = String::new();
        let mut wn: Width = (0, Some(0));
        if self.eat('|') {
            let (n, w) = self.sequence(&mut flags.clone(), depth + 1, false)?;
            no = n;
            wn = w;
            if self.peek() == Some('|') {
                return err("conditional backref with more than two branches", self.pos);
            }
        }
        if !self.eat(')') {
            return err("missing ), unterminated subpattern", here);
        }
        out.push_str(&format!("(?{cond}(?:{yes})|(?:{no}))"));
        let w = (
            wy.0.min(wn.0),
            match (wy.1, wn.1) {
                (Some(a), Some(b)) => Some(a.max(b)),
                _ => None,
            },
        );
        Ok((w, true))
    }

    /// Reads `n` hex digits after `\x`/`\u`/`\U`.
    fn hex(&mut self, n: usize, kind: char, at: usize) -> Result<u32, PyRegexError> {
        let start = self.pos;
        let mut v: u32 = 0;
        for _ in 0..n {
            match self.peek().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    v = v.wrapping_mul(16).wrapping_add(d);
                    self.pos += 1;
                }
                None => {
                    let got: String = self.p[start..self.pos].iter().collect();
                    return err(format!("incomplete escape \\{kind}{got}"), at);
                }
            }
        }
        Ok(v)
    }

    fn char_of(&self, v: u32, at: usize) -> Result<char, PyRegexError> {
        match char::from_u32(v) {
            Some(c) => Ok(c),
            None if (0xD800..0xE000).contains(&v) => err(
                format!("a lone surrogate (\\u{v:04x}) cannot be matched in UTF-8 text"),
                at,
            ),
            None => {
                let esc: String = self.p[at..self.pos].iter().collect();
                err(format!("bad escape {esc}"), at)
            }
        }
    }

    /// Escapes valid both inside and outside a class that denote one character.
    /// The cursor is after the letter.
    fn char_escape(&mut self, c: char, at: usize) -> Result<Option<char>, PyRegexError> {
        let ch = match c {
            'a' => '\x07',
            'f' => '\x0c',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\x0b',
            '\\' => '\\',
            'x' => {
                let v = self.hex(2, 'x', at)?;
                self.char_of(v, at)?
            }
            'u' => {
                let v = self.hex(4, 'u', at)?;
                self.char_of(v, at)?
            }
            'U' => {
                let v = self.hex(8, 'U', at)?;
                if v > 0x10FFFF {
                    let esc: String = self.p[at..self.pos].iter().collect();
                    return err(format!("bad escape {esc}"), at);
                }
                self.char_of(v, at)?
            }
            'N' => {
                if !self.eat('{') {
                    return err("missing {", self.pos);
                }
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '}') {
                    self.pos += 1;
                }
                if !self.eat('}') {
                    return err("missing }, unterminated name", start);
                }
                let name: String = self.p[start..self.pos - 1].iter().collect();
                if name.is_empty() {
                    return err("missing character name", start);
                }
                match unicode_names2::character(&name) {
                    Some(ch) => ch,
                    None => return err(format!("undefined character name '{name}'"), at),
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(ch))
    }

    /// Up to `more` further octal digits after a first one: the code point.
    fn octal(&mut self, first: char, more: usize, at: usize) -> Result<char, PyRegexError> {
        let mut v = first.to_digit(8).unwrap_or(0);
        for _ in 0..more {
            match self.peek().and_then(|c| c.to_digit(8)) {
                Some(d) => {
                    v = v * 8 + d;
                    self.pos += 1;
                }
                None => break,
            }
        }
        if v > 0o377 {
            let esc: String = self.p[at..self.pos].iter().collect();
            return err(
                format!("octal escape value {esc} outside of range 0-0o377"),
                at,
            );
        }
        self.char_of(v, at)
    }

    fn class_shorthand(c: char, flags: Flags, in_class: bool) -> Option<String> {
        let s = match (c, flags.a) {
            ('d', false) => "\\d",
            ('d', true) => "0-9",
            ('D', false) => "[^\\d]",
            ('D', true) => "[^0-9]",
            ('w', false) => PY_WORD,
            ('w', true) => "0-9A-Za-z_",
            ('W', false) => "[^\\p{L}\\p{N}_]",
            ('W', true) => "[^0-9A-Za-z_]",
            ('s', false) => "\\s\\x{1C}-\\x{1F}",
            ('s', true) => "\\x{9}-\\x{D}\\x{20}",
            ('S', false) => "[^\\s\\x{1C}-\\x{1F}]",
            ('S', true) => "[^\\x{9}-\\x{D}\\x{20}]",
            _ => return None,
        };
        Some(if in_class || s.starts_with('[') {
            s.to_string()
        } else {
            format!("[{s}]")
        })
    }

    /// An escape outside a class; the cursor is after the backslash.
    fn escape(
        &mut self,
        flags: Flags,
        at: usize,
        out: &mut String,
    ) -> Result<(Width, bool), PyRegexError> {
        let Some(c) = self.peek() else {
            return err("bad escape (end of pattern)", at);
        };
        self.pos += 1;
        let one = ((1, Some(1)), true);
        let zero = ((0, Some(0)), false);
        match c {
            'A' => {
                out.push_str("\\A");
                return Ok(zero);
            }
            'Z' => {
                out.push_str("\\z");
                return Ok(zero);
            }
            'b' => {
                self.unicode_b |= !flags.a;
                out.push_str(match (flags.a, self.exact_b) {
                    (true, _) => ASCII_B,
                    (false, true) => UNICODE_B,
                    (false, false) => "\\b",
                });
                return Ok(zero);
            }
            'B' => {
                self.unicode_b |= !flags.a;
                // Python's `\B` never matches in an empty string.
                out.push_str(match (flags.a, self.exact_b) {
                    (true, _) => ASCII_NOT_B,
                    (false, true) => UNICODE_NOT_B,
                    (false, false) => "(?:\\B(?!\\A\\z))",
                });
                return Ok(zero);
            }
            _ => {}
        }
        if let Some(s) = Self::class_shorthand(c, flags, false) {
            out.push_str(&s);
            return Ok(one);
        }
        if c == '0' {
            let ch = self.octal('0', 2, at)?;
            push_lit_as(out, ch, flags);
            return Ok(one);
        }
        if c.is_ascii_digit() {
            // Octal escape or group reference.
            let mut digits = c.to_string();
            if let Some(d2) = self.peek().filter(|d| d.is_ascii_digit()) {
                if c.is_digit(8) && d2.is_digit(8) && self.peek_at(1).is_some_and(|d| d.is_digit(8))
                {
                    let ch = self.octal(c, 2, at)?;
                    push_lit_as(out, ch, flags);
                    return Ok(one);
                }
                digits.push(d2);
                self.pos += 1;
            }
            let g: usize = digits.parse().unwrap_or(usize::MAX);
            if g > self.groups {
                return err(format!("invalid group reference {g}"), at + 1);
            }
            return self.backref(g, at, out);
        }
        if let Some(ch) = self.char_escape(c, at)? {
            push_lit_as(out, ch, flags);
            return Ok(one);
        }
        if c.is_ascii_alphanumeric() {
            return err(format!("bad escape \\{c}"), at);
        }
        push_lit_as(out, c, flags);
        Ok(one)
    }

    /// A character class; the cursor is after `[`.
    fn class(&mut self, flags: Flags, at: usize) -> Result<String, PyRegexError> {
        let mut out = String::from("[");
        // Under `IGNORECASE`, the characters Python's case rules add to the class's own.
        let mut extra = String::new();
        if self.eat('^') {
            out.push('^');
        }
        let mut items = 0usize;
        let start = self.pos;
        loop {
            let Some(c) = self.peek() else {
                return err("unterminated character set", at);
            };
            if c == ']' && self.pos != start {
                self.pos += 1;
                break;
            }
            let item_at = self.pos;
            self.pos += 1;
            // One item: a char or a set.
            let lo: Result<char, String> = if c == '\\' {
                self.class_escape(flags, item_at)?
            } else {
                Ok(c)
            };
            // A range?
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|n| n != ']') {
                self.pos += 1;
                let hi_at = self.pos;
                let h = self.p[self.pos];
                self.pos += 1;
                let hi: Result<char, String> = if h == '\\' {
                    self.class_escape(flags, hi_at)?
                } else {
                    Ok(h)
                };
                let (Ok(l), Ok(h)) = (&lo, &hi) else {
                    let txt: String = self.p[item_at..self.pos].iter().collect();
                    return err(format!("bad character range {txt}"), item_at);
                };
                if h < l {
                    let txt: String = self.p[item_at..self.pos].iter().collect();
                    return err(format!("bad character range {txt}"), item_at);
                }
                push_lit(&mut out, *l);
                out.push('-');
                push_lit(&mut out, *h);
                if flags.i {
                    class_case_range(&mut extra, *l, *h, flags.a);
                }
            } else {
                match lo {
                    Ok(ch) => {
                        push_lit(&mut out, ch);
                        if flags.i {
                            class_case_range(&mut extra, ch, ch, flags.a);
                        }
                    }
                    Err(set) => out.push_str(&set),
                }
            }
            items += 1;
        }
        let _ = items;
        out.push_str(&extra);
        out.push(']');
        if flags.i && flags.a {
            // `re.ASCII`: only the ASCII letters have cases, added above; the engine's case
            // folding (which would add the Kelvin sign, `ſ`, `É`...) is off.
            return Ok(format!("(?-i:{out})"));
        }
        Ok(out)
    }

    /// An escape inside a class: `Ok(char)` or `Err(set text)`. The cursor is after `\`.
    #[allow(clippy::type_complexity)]
    fn class_escape(
        &mut self,
        flags: Flags,
        at: usize,
    ) -> Result<Result<char, String>, PyRegexError> {
        let Some(c) = self.peek() else {
            return err("unterminated character set", at.saturating_sub(1));
        };
        self.pos += 1;
        if let Some(s) = Self::class_shorthand(c, flags, true) {
            return Ok(Err(s));
        }
        if c == 'b' {
            return Ok(Ok('\x08'));
        }
        if c.is_digit(8) {
            return Ok(Ok(self.octal(c, 2, at)?));
        }
        if let Some(ch) = self.char_escape(c, at)? {
            return Ok(Ok(ch));
        }
        if c.is_ascii_alphanumeric() {
            return err(format!("bad escape \\{c}"), at);
        }
        Ok(Ok(c))
    }
}

#[cfg(test)]
mod tests;
