//! Cells: the blocks of Python that cellguard checks, found in `.py` files, Markdown fences and
//! raw LLM responses, with a [`SourceMap`] from cell offsets back to file offsets.
//!
//! Semantics of response extraction follow Colony's `_extract_code` / `_iter_fenced_blocks` and
//! `SchemaConstrainedCodeGenerator` (colony-reference §2.9), with the defects reported as `SYN`
//! diagnostics instead of being reproduced silently.

use crate::diagnostic::{Diagnostic, Edit};
use crate::source::{SourceFile, TextRange};

/// How a file is turned into cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtractMode {
    /// By extension: `.py`/`.pyi` python, `.md`/`.markdown` markdown, `.txt`/`.json` response,
    /// `.jsonl`/`.ndjson` JSON Lines.
    #[default]
    Auto,
    /// The whole file is one cell.
    Python,
    /// Every `python`/`py` fenced block is a cell.
    Markdown,
    /// A raw LLM response, extracted as Colony/smolagents do.
    Response,
    /// JSON Lines: the `code` string of each line's object is a cell (dumps of agent cells,
    /// `cellguard-trace` cell records); other lines are skipped.
    Jsonl,
}

impl ExtractMode {
    /// The concrete mode for `path` (never `Auto`). Unknown extensions are read as Python.
    pub fn resolve(self, path: &std::path::Path) -> ExtractMode {
        if self != ExtractMode::Auto {
            return self;
        }
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .as_deref()
        {
            Some("md" | "markdown") => ExtractMode::Markdown,
            Some("txt" | "json") => ExtractMode::Response,
            Some("jsonl" | "ndjson") => ExtractMode::Jsonl,
            _ => ExtractMode::Python,
        }
    }

    /// True when a directory walk should pick up `path` in `Auto` mode.
    pub fn is_checkable_extension(path: &std::path::Path) -> bool {
        matches!(
            path.extension()
                .and_then(|e| e.to_str())
                .map(|e| e.to_ascii_lowercase())
                .as_deref(),
            Some("py" | "pyi" | "md" | "markdown")
        )
    }
}

/// How text inside a cell is encoded in the file, so fix edits can be written back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Escape {
    /// The cell's bytes appear verbatim in the file.
    #[default]
    None,
    /// The cell is the decoded value of a JSON string literal; edits must be JSON-escaped.
    JsonString,
}

/// One contiguous piece of a cell: `len` bytes at `cell_start` in the cell correspond to
/// `file_len` bytes at `file_start` in the file. When `len == file_len` the mapping is byte for
/// byte; otherwise (a JSON escape such as `\n` for a newline) every offset inside maps to
/// `file_start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Offset in the cell text.
    pub cell_start: usize,
    /// Length in the cell text.
    pub len: usize,
    /// Offset in the file text.
    pub file_start: usize,
    /// Length in the file text.
    pub file_len: usize,
}

/// Maps byte offsets in a cell's text to byte offsets in its file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceMap {
    /// Segments sorted by `cell_start`, not overlapping.
    pub segments: Vec<Segment>,
    /// How cell text is escaped in the file.
    pub escape: Escape,
}

impl SourceMap {
    /// The identity map of a cell that is the file slice `file_start..file_start+len`.
    pub fn contiguous(file_start: usize, len: usize) -> Self {
        Self {
            segments: vec![Segment {
                cell_start: 0,
                len,
                file_start,
                file_len: len,
            }],
            escape: Escape::None,
        }
    }

    /// Appends a segment; adjacent verbatim segments are merged.
    pub fn push(&mut self, seg: Segment) {
        if let Some(last) = self.segments.last_mut() {
            if last.len == last.file_len
                && seg.len == seg.file_len
                && last.cell_start + last.len == seg.cell_start
                && last.file_start + last.file_len == seg.file_start
            {
                last.len += seg.len;
                last.file_len += seg.file_len;
                return;
            }
        }
        self.segments.push(seg);
    }

    fn segment_of(&self, offset: usize) -> Option<&Segment> {
        if self.segments.is_empty() {
            return None;
        }
        let idx = self.segments.partition_point(|s| s.cell_start <= offset);
        Some(&self.segments[idx.saturating_sub(1)])
    }

    /// File offset of cell offset `offset`. Offsets in gaps between segments (text the extractor
    /// inserted, such as the blank line joining two blocks) map to the end of the previous one.
    pub fn to_file(&self, offset: usize) -> usize {
        match self.segment_of(offset) {
            None => offset,
            Some(s) if offset < s.cell_start => s.file_start,
            Some(s) if s.len == s.file_len => s.file_start + (offset - s.cell_start).min(s.len),
            Some(s) => {
                if offset >= s.cell_start + s.len {
                    s.file_start + s.file_len
                } else {
                    s.file_start
                }
            }
        }
    }

    /// Maps a cell range to a file range.
    pub fn range_to_file(&self, range: TextRange) -> TextRange {
        TextRange::new(self.to_file(range.start), self.to_file(range.end))
    }

    /// File offset of cell offset `offset` for an edit boundary, or `None` when the offset lies
    /// in text the extractor synthesised or strictly inside an escape sequence. At the boundary
    /// between two segments the later segment is used when `prefer_later` (so an edit starting at
    /// a Markdown row start lands after the fence indentation, and a deletion ending there also
    /// removes the next row's stripped indentation in place of the deleted row's own).
    fn boundary_to_file(&self, offset: usize, prefer_later: bool) -> Option<usize> {
        let mut found = None;
        for s in &self.segments {
            if s.cell_start > offset {
                break;
            }
            if offset > s.cell_start + s.len {
                continue;
            }
            let mapped = if s.len == s.file_len {
                Some(s.file_start + (offset - s.cell_start))
            } else if offset == s.cell_start {
                Some(s.file_start)
            } else if offset == s.cell_start + s.len {
                Some(s.file_start + s.file_len)
            } else {
                None
            };
            if let Some(m) = mapped {
                found = Some(m);
                if !prefer_later {
                    break;
                }
            }
        }
        found
    }

    /// True when every byte of the cell range is covered by a segment (no synthesised text).
    fn covers(&self, range: TextRange) -> bool {
        let mut pos = range.start;
        for s in &self.segments {
            if pos >= range.end {
                break;
            }
            if s.cell_start + s.len <= pos {
                continue;
            }
            if s.cell_start > pos {
                return false;
            }
            pos = s.cell_start + s.len;
        }
        pos >= range.end
    }

    /// Maps an edit made to the cell text to an edit of the file, or `None` when it cannot be
    /// written back faithfully (it touches text the extractor synthesised, or starts or ends
    /// strictly inside an escape sequence). An edit may span several segments (Markdown rows,
    /// JSON escapes); its content is re-escaped for JSON strings.
    pub fn edit_to_file(&self, edit: &Edit) -> Option<Edit> {
        if !self.covers(edit.range) {
            return None;
        }
        let start = self.boundary_to_file(edit.range.start, true)?;
        let end = if edit.range.is_empty() {
            start
        } else {
            self.boundary_to_file(edit.range.end, edit.content.is_empty())?
        };
        if end < start {
            return None;
        }
        let content = match self.escape {
            Escape::None => edit.content.clone(),
            Escape::JsonString => {
                let quoted = serde_json::to_string(&edit.content).ok()?;
                quoted[1..quoted.len() - 1].to_string()
            }
        };
        Some(Edit {
            range: TextRange::new(start, end),
            content,
        })
    }
}

/// Builds a cell's text and [`SourceMap`] from slices of a base text that itself maps to the
/// file (the file itself, or the decoded value of a JSON string), plus synthesised joiners.
#[derive(Debug, Clone, Default)]
pub struct CellBuilder {
    /// The text built so far.
    pub text: String,
    /// Its map to the file.
    pub map: SourceMap,
}

impl CellBuilder {
    /// An empty builder whose edits are written back with `escape`.
    pub fn new(escape: Escape) -> Self {
        Self {
            text: String::new(),
            map: SourceMap {
                segments: Vec::new(),
                escape,
            },
        }
    }

    /// Appends `base[range]`; the parts of it that `base_map` maps to the file keep their
    /// mapping. `range` must lie on char boundaries of `base` (it is clamped otherwise).
    pub fn push_slice(&mut self, base: &str, base_map: &SourceMap, range: TextRange) {
        let start = crate::source::floor_char_boundary(base, range.start);
        let end = crate::source::floor_char_boundary(base, range.end.max(start));
        if start >= end {
            return;
        }
        let out_start = self.text.len();
        for s in &base_map.segments {
            let (a, b) = (s.cell_start.max(start), (s.cell_start + s.len).min(end));
            if a >= b {
                continue;
            }
            let seg = if s.len == s.file_len {
                Segment {
                    cell_start: out_start + (a - start),
                    len: b - a,
                    file_start: s.file_start + (a - s.cell_start),
                    file_len: b - a,
                }
            } else {
                Segment {
                    cell_start: out_start + (a - start),
                    len: b - a,
                    file_start: s.file_start,
                    file_len: s.file_len,
                }
            };
            self.map.push(seg);
        }
        self.text.push_str(&base[start..end]);
    }

    /// Appends text that is not in the file (a joiner); it maps to the end of the previous piece.
    pub fn push_synthetic(&mut self, s: &str) {
        self.text.push_str(s);
    }

    /// The built text with leading and trailing whitespace removed (Python `str.strip()`),
    /// keeping the mapping.
    pub fn trimmed(self) -> CellBuilder {
        let (a, b) = py_strip_range(&self.text);
        let mut out = CellBuilder::new(self.map.escape);
        out.push_slice(&self.text, &self.map, TextRange::new(a, b));
        out
    }

    /// Turns the builder into a cell.
    pub fn into_cell(self, index: usize, origin: CellOrigin) -> Cell {
        let mut map = self.map;
        if map.segments.is_empty() {
            map.segments.push(Segment {
                cell_start: 0,
                len: 0,
                file_start: 0,
                file_len: 0,
            });
        }
        Cell {
            index,
            text: self.text,
            map,
            origin,
            lone_cr: Vec::new(),
        }
    }
}

/// Python's `str.isspace()` for one character: Unicode White_Space plus the ASCII separators
/// `\x1c`-`\x1f` that Python also strips.
pub fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// The byte range of `s.strip()` in Python terms.
pub fn py_strip_range(s: &str) -> (usize, usize) {
    let start = s.len() - s.trim_start_matches(py_isspace).len();
    let end = s.trim_end_matches(py_isspace).len();
    if end <= start {
        (start, start)
    } else {
        (start, end)
    }
}

/// Where a cell came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellOrigin {
    /// A whole `.py` file.
    PythonFile,
    /// A fenced block of a Markdown file.
    MarkdownFence,
    /// Extracted from a raw LLM response.
    Response,
    /// The `code` of a JSON Lines record (a cell dump or a trace's cell record).
    Trace,
    /// The code Colony's extractor would run from a raw response where it differs from
    /// cellguard's reading (`SYN004`): only the security rules (`SBX*`, `IMP001`, `IMP002`)
    /// report on it, so that the code that really runs cannot escape unchecked.
    ColonyReading,
}

/// One block of Python checked as a unit.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Zero-based index among the file's cells.
    pub index: usize,
    /// The Python text.
    pub text: String,
    /// Map back to the file.
    pub map: SourceMap,
    /// Where it came from.
    pub origin: CellOrigin,
    /// Offsets in `text` of the lone `\r` line ends that [`crate::source::python_newlines`]
    /// turned into `\n` (sorted). Colony's own line count (`code.split("\n")`) does not split
    /// there; the Colony profile reproduces it with these.
    pub lone_cr: Vec<usize>,
}

impl Cell {
    /// A cell that is the whole file.
    /// Its text has CPython's line endings ([`crate::source::python_newlines`]).
    pub fn whole_file(text: &str) -> Self {
        Cell {
            index: 0,
            text: crate::source::python_newlines(text).into_owned(),
            map: SourceMap::contiguous(0, text.len()),
            origin: CellOrigin::PythonFile,
            lone_cr: crate::source::lone_cr_offsets(text),
        }
    }
}

/// The cells of one file and the diagnostics extraction itself produced (file coordinates).
#[derive(Debug, Clone, Default)]
pub struct Extraction {
    /// Cells in file order.
    pub cells: Vec<Cell>,
    /// `SYN` findings about extraction (empty cell, truncated response, mixed fences...).
    pub diagnostics: Vec<Diagnostic>,
    /// True when diagnostics should carry a cell index (the file can hold several cells).
    pub multi_cell: bool,
}

/// Options that change how cells are found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExtractOptions {
    /// Raw responses yield exactly the code Colony's extractor would run (`profile = "colony"`),
    /// instead of cellguard's better reading (first word of the info string is the language,
    /// indented and tilde fences, fences inside a JSON `code` string unwrapped). The findings
    /// about where the two differ are reported either way.
    pub colony_exact: bool,
}

impl ExtractOptions {
    /// The options implied by resolved settings (`colony_exact` in the Colony profile).
    pub fn from_settings(settings: &crate::config::Settings) -> Self {
        Self {
            colony_exact: settings.profile == crate::config::Profile::Colony,
        }
    }
}

/// Splits `file` into cells according to `mode`, with default options.
pub fn extract(file: &SourceFile, mode: ExtractMode) -> Extraction {
    extract_with(file, mode, &ExtractOptions::default())
}

/// Splits `file` into cells according to `mode` and `options`.
///
/// Every cell's text has CPython's line endings ([`crate::source::python_newlines`]: a lone `\r`
/// becomes `\n`, byte for byte, so the maps to the file are unchanged), whatever the input path
/// (a file, a Markdown fence, a reply or its JSON envelope, a JSON Lines record, stdin, an
/// editor's document): the rules see the lines CPython would compile.
pub fn extract_with(file: &SourceFile, mode: ExtractMode, options: &ExtractOptions) -> Extraction {
    let mut extraction = extract_raw(file, mode, options);
    for cell in &mut extraction.cells {
        if let std::borrow::Cow::Owned(text) = crate::source::python_newlines(&cell.text) {
            cell.lone_cr = crate::source::lone_cr_offsets(&cell.text);
            cell.text = text;
        }
    }
    extraction
}

fn extract_raw(file: &SourceFile, mode: ExtractMode, options: &ExtractOptions) -> Extraction {
    match mode.resolve(&file.path) {
        ExtractMode::Markdown => markdown::extract(&file.text),
        ExtractMode::Response => crate::response::extract_with(
            &file.text,
            &crate::response::ResponseOptions {
                colony_exact: options.colony_exact,
            },
        ),
        ExtractMode::Jsonl => jsonl::extract(&file.text),
        _ => Extraction {
            cells: vec![Cell::whole_file(&file.text)],
            diagnostics: Vec::new(),
            multi_cell: false,
        },
    }
}

/// JSON Lines of cells: one JSON object per line, whose `code` string is a cell (the corpus
/// dumps of agent cells, the `cell` records of a `cellguard-trace` file). Diagnostics point into
/// the JSON string (escapes mapped back). Lines without a `code` string are not cells; a line
/// that is not valid JSON is reported (`SYN003`) with its line and column, and skipped; a file
/// without any cell is reported (`SYN002`).
pub mod jsonl {
    use super::*;
    use crate::response::decode_json_string;
    use crate::rules::syntax::TRUNCATED_RESPONSE;
    use serde_json::value::RawValue;
    use std::collections::HashMap;

    /// The cells of a JSON Lines text.
    pub fn extract(text: &str) -> Extraction {
        let mut cells = Vec::new();
        let mut diagnostics = Vec::new();
        let mut offset = 0;
        for raw in text.split_inclusive('\n') {
            let line_start = offset;
            offset += raw.len();
            let line = raw.trim_end_matches(['\n', '\r']);
            // Python's JSON dialect (`NaN`, `Infinity`, lone surrogates), byte for byte: the
            // dumps are written by Python's `json`.
            let dialect = crate::response::python_json_dialect(line);
            let line: &str = &dialect;
            let lead = line.len() - line.trim_start().len();
            if line.trim().is_empty() {
                continue;
            }
            let parsed = serde_json::from_str::<HashMap<String, &RawValue>>(line);
            let map = match parsed {
                Ok(map) => map,
                Err(e) => {
                    // Only objects can hold a cell; a line that is valid JSON of another kind
                    // (a BFCL answer list, a number) is not one.
                    if serde_json::from_str::<serde::de::IgnoredAny>(line).is_err() {
                        let at = line_start + e.column().saturating_sub(1).min(line.len());
                        let message = e.to_string();
                        let message = message.split(" at line ").next().unwrap_or(&message);
                        diagnostics.push(Diagnostic::new(
                            &TRUNCATED_RESPONSE,
                            TextRange::new(line_start + lead, at.max(line_start + lead)),
                            format!(
                                "This line is not valid JSON ({message}): no cell is read from it"
                            ),
                        ));
                    }
                    continue;
                }
            };
            let Some(code) = map.get("code").map(|r| r.get()) else {
                continue;
            };
            if !code.starts_with('"') || code.len() < 2 {
                continue;
            }
            let start = (code.as_ptr() as usize).saturating_sub(line.as_ptr() as usize);
            if line.get(start..start + code.len()) != Some(code) {
                continue;
            }
            let (decoded, map) =
                decode_json_string(&code[1..code.len() - 1], line_start + start + 1);
            cells.push(Cell {
                index: cells.len(),
                text: decoded,
                map,
                origin: CellOrigin::Trace,
                lone_cr: Vec::new(),
            });
        }
        if cells.is_empty() && diagnostics.is_empty() {
            diagnostics.push(Diagnostic::new(
                &crate::rules::syntax::EMPTY_CELL,
                TextRange::empty(0),
                "No line of this JSON Lines file is an object with a `code` string: there is no \
                 cell to check"
                    .to_string(),
            ));
        }
        Extraction {
            cells,
            diagnostics,
            multi_cell: true,
        }
    }
}

/// Markdown fences (CommonMark): backtick or tilde fences of three or more, indented by up to
/// three spaces (more inside list items, whose indentation is removed from the body lines).
pub mod markdown {
    use super::*;

    /// A fenced block found in a text.
    #[derive(Debug, Clone)]
    pub struct Fence {
        /// Byte range of the opening fence line (without its newline).
        pub open: TextRange,
        /// Byte range of the closing fence line, `None` when the block runs to the end.
        pub close: Option<TextRange>,
        /// First word of the info string, lower-cased (`""` when absent).
        pub lang: String,
        /// The whole info string, trimmed.
        pub info: String,
        /// Byte range of the body (between the fence lines).
        pub body: TextRange,
        /// Indentation of the opening fence, removed from each body line.
        pub indent: usize,
        /// The fence character, `` ` `` or `~`.
        pub fence_char: char,
        /// Number of fence characters of the opening fence (3 or more).
        pub fence_len: usize,
    }

    fn fence_open(line: &str) -> Option<(usize, char, usize, &str)> {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        let ch = rest.chars().next()?;
        if ch != '`' && ch != '~' {
            return None;
        }
        let n = rest.len() - rest.trim_start_matches(ch).len();
        if n < 3 {
            return None;
        }
        let info = &rest[n..];
        if ch == '`' && info.contains('`') {
            return None;
        }
        Some((indent, ch, n, info))
    }

    /// True when `line` closes a fence opened with `n` × `ch` at indentation `indent`: at least
    /// `n` fence characters, indented less than `indent + 4`, followed by nothing but blanks or
    /// smolagents' `<end_code>` marker (its older prompts end code with ```` ```<end_code> ````).
    fn closes(line: &str, indent: usize, ch: char, n: usize) -> bool {
        let t = line.trim_start_matches(' ');
        let lead = line.len() - t.len();
        let run = t.len() - t.trim_start_matches(ch).len();
        let rest = t[run..].trim();
        lead < indent + 4 && run >= n && (rest.is_empty() || rest == "<end_code>")
    }

    fn body_start(text: &str, open: TextRange) -> usize {
        text[open.end..]
            .find('\n')
            .map(|i| open.end + i + 1)
            .unwrap_or(text.len())
    }

    /// Finds every fenced block of `text`, in order. Only the last one can be unclosed.
    pub fn fences(text: &str) -> Vec<Fence> {
        let mut out = Vec::new();
        let mut open: Option<Fence> = None;
        let mut offset = 0;
        for raw in text.split_inclusive('\n') {
            let line = raw.trim_end_matches('\n').trim_end_matches('\r');
            let line_range = TextRange::new(offset, offset + line.len());
            match open.take() {
                None => {
                    if let Some((indent, ch, n, info)) = fence_open(line) {
                        let info = info.trim().to_string();
                        let body = body_start(text, line_range);
                        open = Some(Fence {
                            open: line_range,
                            close: None,
                            lang: info.split_whitespace().next().unwrap_or("").to_lowercase(),
                            info,
                            body: TextRange::new(body, text.len()),
                            indent,
                            fence_char: ch,
                            fence_len: n,
                        });
                    }
                }
                Some(mut f) => {
                    if closes(line, f.indent, f.fence_char, f.fence_len) {
                        f.close = Some(line_range);
                        f.body =
                            TextRange::new(f.body.start.min(line_range.start), line_range.start);
                        out.push(f);
                    } else {
                        open = Some(f);
                    }
                }
            }
            offset += raw.len();
        }
        out.extend(open);
        out
    }

    /// True for the info-string languages cellguard checks as Python.
    pub fn is_python_lang(lang: &str) -> bool {
        matches!(
            lang,
            "python" | "py" | "python3" | "py3" | "{python}" | "{py}"
        )
    }

    /// Builds a cell from a fence body, removing up to `indent` leading spaces per line.
    pub fn cell_from_body(
        text: &str,
        body: TextRange,
        indent: usize,
        index: usize,
        origin: CellOrigin,
    ) -> Cell {
        let mut cell_text = String::with_capacity(body.len());
        let mut map = SourceMap::default();
        let mut offset = body.start;
        for raw in text[body.as_range()].split_inclusive('\n') {
            let strip = raw.len() - raw.trim_start_matches(' ').len();
            let strip = strip.min(indent).min(raw.len());
            let kept = &raw[strip..];
            map.push(Segment {
                cell_start: cell_text.len(),
                len: kept.len(),
                file_start: offset + strip,
                file_len: kept.len(),
            });
            cell_text.push_str(kept);
            offset += raw.len();
        }
        if map.segments.is_empty() {
            map = SourceMap::contiguous(body.start, 0);
        }
        Cell {
            index,
            text: cell_text,
            map,
            origin,
            lone_cr: Vec::new(),
        }
    }

    /// Every `python`/`py` fence of a Markdown document is a cell.
    pub fn extract(text: &str) -> Extraction {
        let cells = fences(text)
            .into_iter()
            .filter(|f| is_python_lang(&f.lang))
            .enumerate()
            .map(|(i, f)| cell_from_body(text, f.body, f.indent, i, CellOrigin::MarkdownFence))
            .collect();
        Extraction {
            cells,
            diagnostics: Vec::new(),
            multi_cell: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_code_strings_are_cells() {
        let text = "{\"id\": 1, \"code\": \"import os\\nx = \\\"\\u00e9\\\"\"}\n\n\
                    {\"rec\": \"call\", \"index\": 0}\n[1, 2]\n{\"code\": 3}\n\
                    {\"rec\": \"cell\", \"index\": 1, \"code\": \"y = 2\"}\r\n";
        let file = SourceFile::new("cells.jsonl", text);
        let ex = extract(&file, ExtractMode::Auto);
        assert!(ex.diagnostics.is_empty(), "{:?}", ex.diagnostics);
        let texts: Vec<&str> = ex.cells.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, vec!["import os\nx = \"\u{e9}\"", "y = 2"]);
        assert_eq!(ex.cells[1].index, 1);
        // `os` in the first cell maps to `os` in the file; `y` to the second record's `y`.
        let os = ex.cells[0].map.range_to_file(TextRange::new(7, 9));
        assert_eq!(&text[os.as_range()], "os");
        assert_eq!(&text[ex.cells[1].map.to_file(0)..][..5], "y = 2");
    }

    #[test]
    fn jsonl_bad_lines_and_no_cells_are_reported() {
        let file = SourceFile::new("t.jsonl", "{\"code\": \"x = 1\"}\n{\"code\": \"y\n");
        let ex = extract(&file, ExtractMode::Auto);
        assert_eq!(ex.cells.len(), 1);
        assert_eq!(ex.diagnostics.len(), 1);
        assert_eq!(ex.diagnostics[0].rule.code, "SYN003");
        assert_eq!(ex.diagnostics[0].range.start, 18);
        let none = extract(
            &SourceFile::new("answers.jsonl", "{\"id\": \"a\", \"ground_truth\": []}\n"),
            ExtractMode::Auto,
        );
        assert!(none.cells.is_empty());
        assert_eq!(none.diagnostics[0].rule.code, "SYN002");
    }

    #[test]
    fn markdown_cells_map_back() {
        let md = "# Title\n\n```python\nx = 1\n```\n\ntext\n\n  ```py title=\"a\"\n  y = 2\n  ```\n```json\n{}\n```\n";
        let ex = markdown::extract(md);
        assert_eq!(ex.cells.len(), 2);
        assert_eq!(ex.cells[0].text, "x = 1\n");
        assert_eq!(ex.cells[1].text, "y = 2\n");
        let y = md.find("y = 2").unwrap();
        assert_eq!(ex.cells[1].map.to_file(0), y);
        assert_eq!(ex.cells[1].map.to_file(4), y + 4);
    }

    #[test]
    fn unclosed_markdown_fence_runs_to_end() {
        let md = "```python\nx = 1\ny = (";
        let ex = markdown::extract(md);
        assert_eq!(ex.cells.len(), 1);
        assert_eq!(ex.cells[0].text, "x = 1\ny = (");
    }

    #[test]
    fn json_escaped_edit_is_reescaped() {
        let mut map = SourceMap {
            segments: vec![],
            escape: Escape::JsonString,
        };
        map.push(Segment {
            cell_start: 0,
            len: 5,
            file_start: 10,
            file_len: 5,
        });
        let e = map
            .edit_to_file(&Edit::replace(TextRange::new(1, 2), "\"q\""))
            .unwrap();
        assert_eq!(e.range, TextRange::new(11, 12));
        assert_eq!(e.content, "\\\"q\\\"");
    }

    #[test]
    fn edits_across_escapes_are_written_back_whole() {
        let file = r#"{"code": "a\nb\u00e9"}"#;
        let start = file.find("a\\n").unwrap();
        let (text, map) = crate::response::decode_json_string(&file[start..file.len() - 2], start);
        assert_eq!(text, "a\nbé");
        let e = map
            .edit_to_file(&Edit::replace(TextRange::new(0, 3), "x\ny"))
            .unwrap();
        assert_eq!(&file[e.range.as_range()], "a\\nb");
        assert_eq!(e.content, "x\\ny");
        // Cutting the decoded `é` (two bytes from one escape) in half cannot be written back.
        assert_eq!(
            map.edit_to_file(&Edit::replace(TextRange::new(4, 5), "")),
            None
        );
    }

    #[test]
    fn edits_over_synthesised_joiners_are_refused() {
        let mut b = CellBuilder::new(Escape::None);
        let base = "x = 1\ny = 2";
        let id = SourceMap::contiguous(0, base.len());
        b.push_slice(base, &id, TextRange::new(0, 5));
        b.push_synthetic("\n\n");
        b.push_slice(base, &id, TextRange::new(6, 11));
        assert_eq!(b.text, "x = 1\n\ny = 2");
        assert_eq!(b.map.to_file(7), 6);
        assert_eq!(
            b.map.edit_to_file(&Edit::replace(TextRange::new(4, 8), "")),
            None
        );
        let e = b
            .map
            .edit_to_file(&Edit::replace(TextRange::new(7, 8), "z"))
            .unwrap();
        assert_eq!(e.range, TextRange::new(6, 7));
    }
}
