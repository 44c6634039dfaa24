//! Source text and position conversion.
//!
//! All ranges inside cellguard are byte offsets into UTF-8 text ([`TextRange`]). Conversion to
//! one-based rows and columns (for the CLI) or zero-based positions in UTF-8, UTF-16 or UTF-32
//! code units (for the language server) happens only at the edges, through [`LineIndex`].

use std::ops::Range;
use std::path::PathBuf;

/// A half-open byte range `start..end` into a UTF-8 text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize)]
pub struct TextRange {
    /// First byte (inclusive).
    pub start: usize,
    /// Byte after the last (exclusive).
    pub end: usize,
}

impl TextRange {
    /// Builds a range; `start > end` is normalised by swapping.
    pub fn new(start: usize, end: usize) -> Self {
        if start <= end {
            Self { start, end }
        } else {
            Self {
                start: end,
                end: start,
            }
        }
    }

    /// An empty range at `offset`.
    pub fn empty(offset: usize) -> Self {
        Self {
            start: offset,
            end: offset,
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// True when the range covers no byte.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// True when `other` lies entirely inside `self`.
    pub fn contains_range(&self, other: TextRange) -> bool {
        self.start <= other.start && other.end <= self.end
    }

    /// True when the two ranges share at least one byte, or are both empty at the same offset.
    pub fn overlaps(&self, other: TextRange) -> bool {
        (self.start < other.end && other.start < self.end)
            || (self.start == other.start && self.end == other.end)
    }

    /// The range as a `std::ops::Range`.
    pub fn as_range(&self) -> Range<usize> {
        self.start..self.end
    }

    /// Shifts both ends by `delta` bytes.
    pub fn shifted(&self, delta: usize) -> Self {
        Self {
            start: self.start + delta,
            end: self.end + delta,
        }
    }
}

impl From<Range<usize>> for TextRange {
    fn from(r: Range<usize>) -> Self {
        Self::new(r.start, r.end)
    }
}

/// How columns are counted when positions leave cellguard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PositionEncoding {
    /// Bytes of UTF-8 (LSP `utf-8`).
    Utf8,
    /// UTF-16 code units (LSP default `utf-16`).
    #[default]
    Utf16,
    /// Unicode scalar values (LSP `utf-32`; also what the CLI shows, as ruff does).
    Utf32,
}

/// A one-based row and column, as printed by the CLI (column counted in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct SourceLocation {
    /// One-based line number.
    pub row: usize,
    /// One-based column, in Unicode scalar values.
    pub column: usize,
}

/// Line starts of a text, for offset <-> position conversion.
#[derive(Debug, Clone, Default)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    /// Indexes `text`. Lines end at `\n`, `\r\n` or a lone `\r`: the line endings of CPython's
    /// tokenizer (for files and for `compile(str)` alike) and of the LSP specification, so rows
    /// agree with Python's line numbers and with the language server's rope (built with ropey's
    /// `cr_lines`). The terminator is not part of the line's content.
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut line_starts = Vec::with_capacity(text.len() / 32 + 1);
        line_starts.push(0);
        line_starts.extend(
            memchr::memchr2_iter(b'\n', b'\r', bytes)
                .filter(|&i| bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n'))
                .map(|i| i + 1),
        );
        Self {
            line_starts,
            len: text.len(),
        }
    }

    /// Number of lines (a text ending in `\n` has an empty last line).
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset where zero-based `line` starts; `None` past the last line.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.line_starts.get(line).copied()
    }

    /// Byte offset just past the end of zero-based `line`, excluding its terminator (`\n`,
    /// `\r\n` or a lone `\r`).
    pub fn line_end(&self, line: usize, text: &str) -> usize {
        let end = self
            .line_starts
            .get(line + 1)
            .map(|s| s - 1)
            .unwrap_or(self.len);
        let bytes = text.as_bytes();
        if end > 0
            && end <= bytes.len()
            && bytes.get(end - 1) == Some(&b'\r')
            && self.line_starts[line] < end
        {
            end - 1
        } else {
            end
        }
    }

    /// Zero-based line containing byte `offset` (offsets past the end map to the last line).
    pub fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next.saturating_sub(1),
        }
    }

    /// Zero-based line and column of `offset`, the column counted in `encoding` units.
    /// Offsets inside a multi-byte character are rounded down to its start.
    pub fn position(
        &self,
        text: &str,
        offset: usize,
        encoding: PositionEncoding,
    ) -> (usize, usize) {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = self.line_of(offset);
        let start = self.line_starts[line];
        let segment = &text[start..offset];
        let col = match encoding {
            PositionEncoding::Utf8 => segment.len(),
            PositionEncoding::Utf16 => segment.chars().map(char::len_utf16).sum(),
            PositionEncoding::Utf32 => segment.chars().count(),
        };
        (line, col)
    }

    /// One-based row and character column of `offset`, as the CLI prints it.
    pub fn location(&self, text: &str, offset: usize) -> SourceLocation {
        let (line, col) = self.position(text, offset, PositionEncoding::Utf32);
        SourceLocation {
            row: line + 1,
            column: col + 1,
        }
    }

    /// Byte offset of zero-based (`line`, `col`) with `col` in `encoding` units. A line past the
    /// end maps to the end of the text; a column past the end of its line (or into the middle of
    /// a UTF-16 surrogate pair) clamps to the line end or the character start. Never panics.
    pub fn offset(&self, text: &str, line: usize, col: usize, encoding: PositionEncoding) -> usize {
        let Some(start) = self.line_start(line) else {
            return text.len();
        };
        let end = self.line_end(line, text);
        let line_text = &text[start..end];
        let mut units = 0usize;
        for (i, ch) in line_text.char_indices() {
            if units >= col {
                return start + i;
            }
            units += match encoding {
                PositionEncoding::Utf8 => ch.len_utf8(),
                PositionEncoding::Utf16 => ch.len_utf16(),
                PositionEncoding::Utf32 => 1,
            };
            if units > col {
                return start + i;
            }
        }
        end
    }
}

/// `text` with CPython's line endings made explicit for the parser: every lone `\r` (one not
/// followed by `\n`) becomes `\n`. CPython's tokenizer ends a line at `\n`, `\r\n` and a lone
/// `\r` (`translate_newlines`, for source files and for `compile(str)`, which is how Colony runs
/// the text it extracted from a reply); tree-sitter-python does not take a lone `\r` as a line
/// end, so without this a comment would swallow the code after `# note\r`. The substitution is
/// byte-for-byte (same length), so every offset into the result is an offset into `text`.
/// `\r\n` is kept (tree-sitter reads it as one line end). Borrowed when there is no lone `\r`.
pub fn python_newlines(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let lone = |i: usize| bytes.get(i + 1) != Some(&b'\n');
    if !memchr::memchr_iter(b'\r', bytes).any(lone) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = bytes.to_vec();
    for i in memchr::memchr_iter(b'\r', bytes) {
        if lone(i) {
            out[i] = b'\n';
        }
    }
    // Replacing one ASCII byte by another keeps the text valid UTF-8.
    std::borrow::Cow::Owned(
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

/// Offsets of the lone `\r` bytes of `text` (those not followed by `\n`), sorted: where
/// [`python_newlines`] puts a `\n`.
pub fn lone_cr_offsets(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'\r', bytes)
        .filter(|&i| bytes.get(i + 1) != Some(&b'\n'))
        .collect()
}

/// The largest char boundary `<= offset` in `text`.
pub fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut o = offset.min(text.len());
    while o > 0 && !text.is_char_boundary(o) {
        o -= 1;
    }
    o
}

/// One input file as cellguard reads it.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path as given by the user (or `--stdin-filename`, or `-`); used in messages.
    pub path: PathBuf,
    /// The text. Invalid UTF-8 was replaced by U+FFFD; see [`SourceFile::invalid_utf8_at`].
    pub text: String,
    /// Line index of `text`.
    pub index: LineIndex,
    /// Byte offset in `text` of the first replacement made for invalid UTF-8, if any.
    pub invalid_utf8_at: Option<usize>,
}

impl SourceFile {
    /// Builds a source file from text.
    pub fn new(path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        let text = text.into();
        let index = LineIndex::new(&text);
        Self {
            path: path.into(),
            text,
            index,
            invalid_utf8_at: None,
        }
    }

    /// Builds a source file from raw bytes. Invalid UTF-8 is replaced (nothing else is lost) and
    /// remembered in `invalid_utf8_at`, so the caller can report it with a position. A UTF-8 byte
    /// order mark is dropped.
    pub fn from_bytes(path: impl Into<PathBuf>, bytes: &[u8]) -> Self {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        match std::str::from_utf8(bytes) {
            Ok(s) => Self::new(path, s),
            Err(e) => {
                let valid = e.valid_up_to();
                let text = String::from_utf8_lossy(bytes).into_owned();
                let mut file = Self::new(path, text);
                file.invalid_utf8_at = Some(valid);
                file
            }
        }
    }

    /// One-based row/column of a byte offset.
    pub fn location(&self, offset: usize) -> SourceLocation {
        self.index.location(&self.text, offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_after_emoji() {
        let text = "x = '😀'; y\n";
        let idx = LineIndex::new(text);
        let y = text.find('y').unwrap();
        assert_eq!(idx.position(text, y, PositionEncoding::Utf16), (0, 10));
        assert_eq!(idx.position(text, y, PositionEncoding::Utf32), (0, 9));
        assert_eq!(idx.position(text, y, PositionEncoding::Utf8), (0, 12));
        assert_eq!(idx.offset(text, 0, 10, PositionEncoding::Utf16), y);
        assert_eq!(idx.offset(text, 0, 9, PositionEncoding::Utf32), y);
    }

    #[test]
    fn crlf_line_end_excludes_cr() {
        let text = "ab\r\ncd";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_end(0, text), 2);
        assert_eq!(idx.offset(text, 0, 99, PositionEncoding::Utf16), 2);
        assert_eq!(idx.offset(text, 7, 0, PositionEncoding::Utf16), text.len());
        assert_eq!(idx.location(text, 5), SourceLocation { row: 2, column: 2 });
    }

    #[test]
    fn lone_cr_ends_a_line_like_cpython() {
        let text = "x = 1  # c\rprint(1)\r\ny\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_count(), 4);
        let p = text.find("print").unwrap();
        assert_eq!(idx.location(text, p), SourceLocation { row: 2, column: 1 });
        assert_eq!(idx.line_end(0, text), 10);
        assert_eq!(idx.line_end(1, text), p + "print(1)".len());
        assert_eq!(idx.location(text, text.find('y').unwrap()).row, 3);
        assert_eq!(idx.offset(text, 1, 2, PositionEncoding::Utf16), p + 2);
        assert_eq!(idx.offset(text, 0, 99, PositionEncoding::Utf16), 10);
        // Old Mac line endings only.
        let mac = "a\rb\r\rc";
        let idx = LineIndex::new(mac);
        assert_eq!(idx.line_count(), 4);
        assert_eq!(idx.location(mac, 5), SourceLocation { row: 4, column: 1 });
        assert_eq!(idx.location(mac, 4), SourceLocation { row: 3, column: 1 });
    }

    #[test]
    fn python_newlines_replaces_only_lone_cr() {
        assert_eq!(python_newlines("a\r\nb\rc\r"), "a\r\nb\nc\n");
        assert!(matches!(
            python_newlines("a\r\nb\n"),
            std::borrow::Cow::Borrowed(_)
        ));
        let s = "é\r😀\r\r\n";
        assert_eq!(python_newlines(s).len(), s.len());
        assert_eq!(python_newlines(s), "é\n😀\n\r\n");
    }

    #[test]
    fn invalid_utf8_is_replaced_and_located() {
        let f = SourceFile::from_bytes("a.py", b"x = 1\ny = '\xff'\n");
        assert_eq!(f.invalid_utf8_at, Some(11));
        assert!(f.text.contains('\u{FFFD}'));
        assert_eq!(f.location(11), SourceLocation { row: 2, column: 6 });
    }
}
