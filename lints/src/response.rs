//! Cells from raw LLM responses: the text a model returned for one iteration, before any
//! framework touched it.
//!
//! Recognised in this order:
//! 1. **JSON envelope** `{"code": "..."}`: Colony's `SchemaConstrainedCodeGenerator`
//!    (colony-reference §2.9; smolagents' structured CodeAgent uses the same shape with a
//!    `thought` key). The cell is the decoded string, mapped back into the JSON literal through a
//!    [`SourceMap`] with [`Escape::JsonString`] so diagnostics point into the file and fixes are
//!    written back escaped.
//! 2. **CodeAct** `<execute>...</execute>`: one cell per block (MINT's in-context format). An
//!    `<execute>` that another one follows before the closing tag is a mention in prose
//!    ("accessed within <execute> block"): the last opening tag starts the block.
//! 3. **smolagents** `<code>...</code>`: every block, stripped and joined with a blank line, is one
//!    cell (`parse_code_blobs`); an unclosed last block runs to the end, because smolagents uses
//!    the closing tag as a stop sequence and appends it.
//! 4. **Markdown fences**, as Colony's `_extract_code` / `_iter_fenced_blocks` pair them, but read
//!    the better way by default: the first word of the info string is the language, fences may
//!    be indented or use tildes (CommonMark), and smolagents' ```` ```<end_code> ```` closes a
//!    block.
//! 5. **No fences**: Colony's legacy path (strip a leading ```` ```python ````/```` ```py ````/
//!    ```` ``` ```` and a trailing ```` ``` ````, then whitespace).
//!
//! Every case where Colony silently drops or mangles code is reported instead of being
//! reproduced silently: `SYN002` empty cell, `SYN003` truncated response (an unclosed fence, a
//! later truncated block Colony drops, a JSON envelope cut off), `SYN004` mixed fences (a
//! non-Python or untagged block next to Python blocks, fences inside the JSON `code` string, an
//! info string or fence style that Colony reads differently). With
//! [`ResponseOptions::colony_exact`] (the Colony profile) the cell is exactly the code Colony's
//! extractor would run and steps 2-3 are skipped (Colony has no tag extraction).

use crate::diagnostic::Diagnostic;
use crate::extract::{
    markdown, py_strip_range, CellBuilder, CellOrigin, Escape, Extraction, Segment, SourceMap,
};
use crate::rules::syntax::{EMPTY_CELL, MIXED_LANGUAGE_FENCES, TRUNCATED_RESPONSE};
use crate::source::TextRange;
use std::collections::HashMap;

/// How a raw response is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResponseOptions {
    /// The cell is exactly what Colony's extractor yields (info string compared whole,
    /// ```` ``` ```` at column 0 only, JSON `code` verbatim, no tag extraction). The findings
    /// about the difference are the same either way.
    pub colony_exact: bool,
}

/// Extracts the cells of a raw response with the default (better) reading.
pub fn extract(text: &str) -> Extraction {
    extract_with(text, &ResponseOptions::default())
}

/// Extracts the cells of a raw response. Diagnostics are in file coordinates.
pub fn extract_with(text: &str, opts: &ResponseOptions) -> Extraction {
    let identity = SourceMap::contiguous(0, text.len());
    let base = Base {
        text,
        map: &identity,
    };
    let mut cx = Cx {
        opts: *opts,
        diagnostics: Vec::new(),
        colony_cells: Vec::new(),
    };
    let cells = match json_envelope(text) {
        Envelope::NotJson => cx.text_cells(base),
        Envelope::Invalid { offset, message } => {
            let at = crate::source::floor_char_boundary(text, offset);
            cx.report(
                &TRUNCATED_RESPONSE,
                TextRange::empty(at),
                format!(
                    "The JSON response is cut off or malformed ({message}): Colony drops it when \
                     the model stopped at max_tokens, and otherwise runs what its fence \
                     extraction finds in the raw text (the whole text when it has no fences)"
                ),
            );
            // The stop reason is not in the file. Unless it was max_tokens, Colony falls back to
            // `_extract_code` on the raw text (colony-reference §2.9): a fenced block after the
            // JSON, or the whole text, runs. The security rules check that code.
            let colony = colony_extract(base);
            if !colony.text.trim().is_empty() {
                cx.colony_cells.push(colony);
            }
            Vec::new()
        }
        Envelope::NoCode { what } => {
            cx.report(
                &EMPTY_CELL,
                first_line(text),
                format!("No Python code in the response: it is {what}, so Colony extracts no code"),
            );
            Vec::new()
        }
        Envelope::NonString { range, kind } => {
            cx.report(
                &EMPTY_CELL,
                range,
                format!(
                    "The JSON `code` value is {}, not a string: Colony runs its Python `str()` as \
                     code",
                    with_article(kind)
                ),
            );
            Vec::new()
        }
        Envelope::Code {
            literal,
            decoded,
            map,
        } => cx.envelope_cells(literal, &decoded, &map),
    };
    let multi_cell = cells.len() > 1;
    let n = cells.len();
    Extraction {
        cells: cells
            .into_iter()
            .enumerate()
            .map(|(i, b)| b.into_cell(i, CellOrigin::Response))
            .chain(
                cx.colony_cells
                    .into_iter()
                    .enumerate()
                    .map(|(i, b)| b.into_cell(n + i, CellOrigin::ColonyReading)),
            )
            .collect(),
        diagnostics: cx.diagnostics,
        multi_cell,
    }
}

/// A text whose byte offsets map to the file (the file itself, or a decoded JSON string).
#[derive(Clone, Copy)]
struct Base<'a> {
    text: &'a str,
    map: &'a SourceMap,
}

impl Base<'_> {
    fn slice(&self, range: TextRange) -> CellBuilder {
        let mut b = CellBuilder::new(self.map.escape);
        b.push_slice(self.text, self.map, range);
        b
    }
}

struct Cx {
    opts: ResponseOptions,
    diagnostics: Vec<Diagnostic>,
    /// The code Colony's extractor would run, where it differs from the cells (cellguard's
    /// reading): checked by the security rules only ([`CellOrigin::ColonyReading`]).
    colony_cells: Vec<CellBuilder>,
}

impl Cx {
    fn report(&mut self, rule: &'static crate::diagnostic::Rule, range: TextRange, msg: String) {
        self.diagnostics.push(Diagnostic::new(rule, range, msg));
    }

    /// Cells of the decoded `code` string of a JSON envelope.
    fn envelope_cells(
        &mut self,
        literal: TextRange,
        decoded: &str,
        map: &SourceMap,
    ) -> Vec<CellBuilder> {
        let inner = Base { text: decoded, map };
        let fences = markdown::fences(decoded);
        if let Some(f) = fences.first() {
            self.report(
                &MIXED_LANGUAGE_FENCES,
                map.range_to_file(f.open),
                "Fenced code inside the JSON `code` string: Colony runs the string verbatim, \
                 fences included, which fails as a syntax error"
                    .to_string(),
            );
        }
        let has_tags = find_tag_blocks(decoded, "<execute>", "</execute>").is_some()
            || find_tag_blocks(decoded, "<code>", "</code>").is_some();
        if self.opts.colony_exact || (fences.is_empty() && !has_tags) {
            if decoded.trim().is_empty() {
                self.report(
                    &EMPTY_CELL,
                    literal,
                    "No Python code in the response: the JSON `code` string is empty".to_string(),
                );
                return Vec::new();
            }
            return vec![inner.slice(TextRange::new(0, decoded.len()))];
        }
        self.text_cells(inner)
    }

    /// Cells of a plain-text response (or of a JSON `code` string that holds fences or tags).
    fn text_cells(&mut self, base: Base) -> Vec<CellBuilder> {
        if base.text.trim().is_empty() {
            self.report(
                &EMPTY_CELL,
                base.map.range_to_file(TextRange::empty(0)),
                "The response is empty: there is no code to extract".to_string(),
            );
            return Vec::new();
        }
        if !self.opts.colony_exact {
            if let Some(blocks) = find_tag_blocks(base.text, "<execute>", "</execute>") {
                // CodeAct: every block runs on its own.
                let mut cells = Vec::new();
                for (open, body) in blocks {
                    let cell = base.slice(body).trimmed();
                    if cell.text.is_empty() {
                        self.report(
                            &EMPTY_CELL,
                            base.map.range_to_file(open),
                            "Empty `<execute>` block: there is no code to run".to_string(),
                        );
                    } else {
                        cells.push(cell);
                    }
                }
                return cells;
            }
            if let Some(blocks) = find_tag_blocks(base.text, "<code>", "</code>") {
                // smolagents: every block stripped, joined with a blank line.
                let mut cell = CellBuilder::new(base.map.escape);
                for (i, (_, body)) in blocks.iter().enumerate() {
                    if i > 0 {
                        cell.push_synthetic("\n\n");
                    }
                    let (a, b) = py_strip_range(&base.text[body.as_range()]);
                    cell.push_slice(
                        base.text,
                        base.map,
                        TextRange::new(body.start + a, body.start + b),
                    );
                }
                let cell = cell.trimmed();
                if cell.text.is_empty() {
                    self.report(
                        &EMPTY_CELL,
                        base.map.range_to_file(blocks[0].0),
                        "Empty `<code>` block: there is no code to run".to_string(),
                    );
                    return Vec::new();
                }
                return vec![cell];
            }
        }
        self.fenced_cells(base)
    }

    /// Colony's `_extract_code` (fences, then the legacy path), read the better way unless
    /// `colony_exact`, with every difference from Colony reported.
    fn fenced_cells(&mut self, base: Base) -> Vec<CellBuilder> {
        let colony = colony_extract(base);
        let better = self.better_extract(base);
        let colony_empty = colony.text.is_empty();
        if better.cell.text != colony.text && !better.truncation_reported {
            self.report_divergence(base, &better, colony_empty);
        }
        let mut better = better;
        if !self.opts.colony_exact && better.cell.text != colony.text && !colony_empty {
            // Colony runs other code than the cell: the security rules check that code too.
            self.colony_cells.push(colony.clone());
            if better.cell.text.is_empty() {
                // The reason may claim that Colony extracts nothing; it extracts this.
                let (range, why) = better.empty_reason.take().unwrap_or_else(|| {
                    (
                        better.first_fence.unwrap_or_else(|| first_line(base.text)),
                        "No Python code after extraction".to_string(),
                    )
                });
                let why = why.replace(", so Colony extracts nothing", "");
                better.empty_reason = Some((
                    range,
                    format!(
                        "{why} in cellguard's reading; Colony's extractor reads this response \
                         differently and does run code from it, which the security rules check"
                    ),
                ));
            }
        }
        let (cell, reason) = if self.opts.colony_exact {
            let reason = if better.cell.text.is_empty() {
                better.empty_reason
            } else {
                Some((
                    better.first_fence.unwrap_or_else(|| first_line(base.text)),
                    "No Python code after extraction: Colony's extractor yields nothing from this \
                     response"
                        .to_string(),
                ))
            };
            (colony, reason)
        } else {
            (better.cell, better.empty_reason)
        };
        if cell.text.is_empty() {
            let (range, message) = reason.unwrap_or_else(|| {
                (
                    first_line(base.text),
                    "No Python code after extraction".to_string(),
                )
            });
            self.report(&EMPTY_CELL, base.map.range_to_file(range), message);
            return Vec::new();
        }
        vec![cell]
    }

    fn report_divergence(&mut self, base: Base, better: &Better, colony_empty: bool) {
        let consequence = if colony_empty {
            "extracts no code from this response"
        } else {
            "runs different code"
        };
        let mut reported = false;
        for f in &better.fences {
            let colony_visible = f.indent == 0 && f.fence_char == '`' && f.fence_len == 3;
            if !colony_visible {
                self.report(
                    &MIXED_LANGUAGE_FENCES,
                    base.map.range_to_file(f.open),
                    format!(
                        "Colony only recognises fences of exactly three backticks at column 0, so \
                         it misreads this fence and {consequence}"
                    ),
                );
                reported = true;
            }
        }
        for f in &better.taken {
            let info = f.info.to_lowercase();
            if info != "python" && info != "py" && !f.lang.is_empty() {
                self.report(
                    &MIXED_LANGUAGE_FENCES,
                    base.map.range_to_file(f.open),
                    format!(
                        "Info string `{}` is not exactly `python` or `py`: Colony treats the block \
                         as another language and {consequence}",
                        f.info
                    ),
                );
                reported = true;
            }
        }
        if !reported {
            let range = better.first_fence.unwrap_or_else(|| first_line(base.text));
            self.report(
                &MIXED_LANGUAGE_FENCES,
                base.map.range_to_file(range),
                format!("Colony's extractor reads the fences of this response differently and {consequence}"),
            );
        }
    }

    /// cellguard's reading of the fences (see the module docs).
    fn better_extract(&mut self, base: Base) -> Better {
        let text = base.text;
        let fences = markdown::fences(text);
        let mut out = Better {
            cell: CellBuilder::new(base.map.escape),
            empty_reason: None,
            truncation_reported: false,
            first_fence: fences.first().map(|f| f.open),
            fences: fences.clone(),
            taken: Vec::new(),
        };
        if fences.is_empty() {
            out.cell = legacy(base);
            return out;
        }
        let mut closed: Vec<&markdown::Fence> =
            fences.iter().filter(|f| f.close.is_some()).collect();
        let tail = fences
            .last()
            .filter(|f| f.close.is_none())
            .filter(|f| !text[f.body.as_range()].trim().is_empty());
        let stray_closer = fences
            .last()
            .filter(|f| f.close.is_none() && text[f.body.as_range()].trim().is_empty());
        let is_py = |f: &markdown::Fence| markdown::is_python_lang(&f.lang);

        if closed.is_empty() {
            match tail {
                None => {
                    // A lone ``` after the code: the text before it is the code (Colony's legacy
                    // path strips a trailing fence the same way).
                    let end = stray_closer.map(|f| f.open.start).unwrap_or(text.len());
                    let (a, b) = py_strip_range(&text[..end]);
                    out.cell = base.slice(TextRange::new(a, b));
                    if out.cell.text.is_empty() {
                        out.empty_reason = Some((
                            out.first_fence.unwrap_or_default(),
                            "No Python code after extraction: the response is only a fence"
                                .to_string(),
                        ));
                    }
                }
                Some(t) => {
                    let prose_before = !text[..t.open.start].trim().is_empty();
                    let fence = fence_name(t);
                    out.truncation_reported = true;
                    if is_py(t) || t.lang.is_empty() {
                        out.cell = body(base, t);
                        out.taken.push(t.clone());
                        let extra = if prose_before {
                            "; Colony runs the text before the fence as code too"
                        } else {
                            ""
                        };
                        self.report(
                            &TRUNCATED_RESPONSE,
                            base.map.range_to_file(t.open),
                            format!("Unclosed {fence} fence: the response was cut off here{extra}"),
                        );
                    } else {
                        self.report(
                            &TRUNCATED_RESPONSE,
                            base.map.range_to_file(t.open),
                            format!("Unclosed {fence} fence: the response was cut off inside a non-Python block"),
                        );
                        out.empty_reason = Some((
                            t.open,
                            format!(
                                "No Python code after extraction: the only fenced block is {fence}"
                            ),
                        ));
                    }
                }
            }
            return out;
        }

        let python: Vec<&markdown::Fence> = closed.iter().copied().filter(|f| is_py(f)).collect();
        let non_python: Vec<&markdown::Fence> = closed
            .iter()
            .copied()
            .filter(|f| !is_py(f) && !f.lang.is_empty())
            .collect();
        let taken: Vec<&markdown::Fence> = if !python.is_empty() {
            for f in &closed {
                if is_py(f) {
                    continue;
                }
                let msg = if f.lang.is_empty() {
                    "Untagged fenced block is dropped: Colony keeps only the ```python/```py \
                     blocks when a response has any"
                        .to_string()
                } else {
                    format!("{} block is not Python and is not extracted", fence_name(f))
                };
                self.report(&MIXED_LANGUAGE_FENCES, base.map.range_to_file(f.open), msg);
            }
            python
        } else if non_python.is_empty() {
            std::mem::take(&mut closed)
        } else {
            let what = fence_name(non_python[0]);
            out.empty_reason = Some((
                non_python[0].open,
                format!(
                    "No Python code after extraction: the response has a {what} block and no \
                     ```python block, so Colony extracts nothing"
                ),
            ));
            Vec::new()
        };
        let mut cell = CellBuilder::new(base.map.escape);
        for (i, f) in taken.iter().enumerate() {
            if i > 0 {
                cell.push_synthetic("\n\n");
            }
            let b = body(base, f);
            cell.push_slice(&b.text, &b.map, TextRange::new(0, b.text.len()));
        }
        out.cell = cell.trimmed();
        out.taken = taken.into_iter().cloned().collect();
        if out.cell.text.is_empty() && out.empty_reason.is_none() {
            out.empty_reason = Some((
                out.first_fence.unwrap_or_default(),
                "No Python code after extraction: the fenced blocks are empty".to_string(),
            ));
        }
        if let Some(t) = tail {
            out.truncation_reported = true;
            let what = if out.cell.text.is_empty() {
                "and Colony ignores it"
            } else {
                "and Colony silently drops this block and runs only the blocks before it"
            };
            self.report(
                &TRUNCATED_RESPONSE,
                base.map.range_to_file(t.open),
                format!(
                    "Unclosed {} fence at the end of the response: the response was cut off, {what}",
                    fence_name(t)
                ),
            );
        }
        out
    }
}

/// cellguard's reading of a fenced response.
struct Better {
    /// The cell text (empty when nothing was extracted).
    cell: CellBuilder,
    /// Where and why nothing was extracted.
    empty_reason: Option<(TextRange, String)>,
    /// A `SYN003` was reported (it explains the difference from Colony).
    truncation_reported: bool,
    /// The first fence line, if any.
    first_fence: Option<TextRange>,
    /// Every fence found.
    fences: Vec<markdown::Fence>,
    /// The blocks that make up the cell.
    taken: Vec<markdown::Fence>,
}

/// ```` ```python ```` / ```` ``` ```` for messages.
fn fence_name(f: &markdown::Fence) -> String {
    format!("```{}", f.lang)
}

/// The body of a fenced block, its fence indentation removed from each line, stripped.
fn body(base: Base, f: &markdown::Fence) -> CellBuilder {
    let mut b = CellBuilder::new(base.map.escape);
    let mut offset = f.body.start;
    for raw in base.text[f.body.as_range()].split_inclusive('\n') {
        let strip = (raw.len() - raw.trim_start_matches(' ').len()).min(f.indent);
        b.push_slice(
            base.text,
            base.map,
            TextRange::new(offset + strip, offset + raw.len()),
        );
        offset += raw.len();
    }
    b.trimmed()
}

/// The first line of `text` (without its newline), for findings about the whole response.
fn first_line(text: &str) -> TextRange {
    let (a, _) = py_strip_range(text);
    let end = text[a..].find('\n').map(|i| a + i).unwrap_or(text.len());
    TextRange::new(a, end.max(a))
}

/// Colony's legacy path for a response without paired fences: strip the text, then a leading
/// ```` ```python ````, ```` ```py ```` or ```` ``` ```` and a trailing ```` ``` ````.
fn legacy(base: Base) -> CellBuilder {
    let text = base.text;
    let (mut a, mut b) = py_strip_range(text);
    let t = &text[a..b];
    let prefix = ["```python", "```py", "```"]
        .iter()
        .find(|p| t.starts_with(**p))
        .map(|p| p.len());
    if let Some(n) = prefix {
        a += n;
        a = b - text[a..b]
            .trim_start_matches(crate::extract::py_isspace)
            .len();
    }
    if text[a..b].ends_with("```") {
        b -= 3;
        b = a + text[a..b]
            .trim_end_matches(crate::extract::py_isspace)
            .len();
    }
    let (s, e) = py_strip_range(&text[a..b]);
    base.slice(TextRange::new(a + s, a + e))
}

/// Exactly what Colony's `_extract_code` returns for `base.text` (colony-reference §2.9): fence
/// lines are lines of the stripped text that start with ```` ``` ```` at column 0, paired in
/// document order; the language is the whole stripped, lower-cased info string.
fn colony_extract(base: Base) -> CellBuilder {
    let text = base.text;
    let (s, e) = py_strip_range(text);
    if s == e {
        return CellBuilder::new(base.map.escape);
    }
    let mut lines = Vec::new();
    let mut off = s;
    for line in text[s..e].split('\n') {
        if line.starts_with("```") {
            lines.push(TextRange::new(off, off + line.len()));
        }
        off += line.len() + 1;
    }
    if lines.len() < 2 {
        return legacy(base);
    }
    let pairs: Vec<(Option<String>, TextRange)> = lines
        .chunks_exact(2)
        .map(|p| {
            let info = &text[p[0].start + 3..p[0].end];
            let (a, b) = py_strip_range(info);
            let lang = info[a..b].to_lowercase();
            (
                if lang.is_empty() { None } else { Some(lang) },
                TextRange::new(p[0].end, p[1].start),
            )
        })
        .collect();
    let is_py = |l: &Option<String>| matches!(l.as_deref(), Some("python" | "py"));
    let mut chosen: Vec<TextRange> = pairs
        .iter()
        .filter(|(l, _)| is_py(l))
        .map(|(_, r)| *r)
        .collect();
    if chosen.is_empty() && !pairs.iter().any(|(l, _)| l.is_some() && !is_py(l)) {
        chosen = pairs.iter().map(|(_, r)| *r).collect();
    }
    let mut cell = CellBuilder::new(base.map.escape);
    for (i, r) in chosen.iter().enumerate() {
        if i > 0 {
            cell.push_synthetic("\n\n");
        }
        let (a, b) = py_strip_range(&text[r.as_range()]);
        cell.push_slice(text, base.map, TextRange::new(r.start + a, r.start + b));
    }
    cell.trimmed()
}

/// `(opening tag range, body range)` of every `open ... close` block, as a non-greedy regex
/// scan finds them; an unclosed last block runs to the end. `None` when `open` never occurs.
fn find_tag_blocks(text: &str, open: &str, close: &str) -> Option<Vec<(TextRange, TextRange)>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find(open) {
        let mut tag = TextRange::new(at + i, at + i + open.len());
        match text[tag.end..].find(close) {
            Some(j) => {
                let end = tag.end + j;
                // An opening tag that another one follows before the closing tag is a mention
                // in prose ("... within <execute> block via the variable `conn`"): the last
                // opening tag starts the block (new-user N-2, MINT's in-context examples).
                if let Some(k) = text[tag.end..end].rfind(open) {
                    tag = TextRange::new(tag.end + k, tag.end + k + open.len());
                }
                out.push((tag, TextRange::new(tag.end, end)));
                at = end + close.len();
            }
            None => {
                out.push((tag, TextRange::new(tag.end, text.len())));
                break;
            }
        }
    }
    if out.is_empty() {
        None
    } else {
        Some(out)
    }
}

/// What the text is as a JSON document, with Python `json.loads` semantics (Colony parses the
/// reply with `json.loads`, colony-reference §2.9): the JSON grammar plus `NaN`, `Infinity` and
/// `-Infinity` values and lone surrogate escapes (see [`python_json_dialect`]); the last
/// duplicate key wins.
enum Envelope {
    /// Not JSON: extract from the text.
    NotJson,
    /// Starts like a JSON envelope (an object mentioning `"code"`) but does not parse.
    Invalid { offset: usize, message: String },
    /// Valid JSON without a `code` key (or not an object).
    NoCode { what: String },
    /// `code` is not a string.
    NonString {
        range: TextRange,
        kind: &'static str,
    },
    /// The `code` string: the literal's range (quotes included), its value, and the map from
    /// the value to the file.
    Code {
        literal: TextRange,
        decoded: String,
        map: SourceMap,
    },
}

fn json_kind(raw: &str) -> &'static str {
    match raw.trim_start().chars().next() {
        Some('{') => "object",
        Some('[') => "array",
        Some('"') => "string",
        Some('t' | 'f') => "boolean",
        Some('n') => "null",
        _ => "number",
    }
}

fn with_article(noun: &str) -> String {
    match noun.chars().next() {
        _ if noun == "null" => noun.to_string(),
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {noun}"),
        _ => format!("a {noun}"),
    }
}

fn json_envelope(original: &str) -> Envelope {
    // Same length as `original`: offsets into it are offsets into the file.
    let dialect = python_json_dialect(original);
    let text: &str = &dialect;
    let trimmed = text.trim_start_matches([' ', '\t', '\n', '\r']);
    let Some(first) = trimmed.chars().next() else {
        return Envelope::NotJson;
    };
    if first == '{' {
        return match serde_json::from_str::<HashMap<String, &serde_json::value::RawValue>>(text) {
            Ok(map) => match map.get("code") {
                Some(raw) => {
                    let r = raw.get();
                    let start = (r.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
                    let range = TextRange::new(start, start + r.len());
                    if text.get(range.as_range()) != Some(r) {
                        return Envelope::NotJson;
                    }
                    if r.starts_with('"') && r.len() >= 2 {
                        let (decoded, map) = decode_json_string(&r[1..r.len() - 1], start + 1);
                        Envelope::Code {
                            literal: range,
                            decoded,
                            map,
                        }
                    } else {
                        Envelope::NonString {
                            range,
                            kind: json_kind(r),
                        }
                    }
                }
                None => Envelope::NoCode {
                    what: "a JSON object without a `code` key".to_string(),
                },
            },
            Err(e) => {
                if text.contains("\"code\"") {
                    let index = crate::source::LineIndex::new(text);
                    let line = e.line().saturating_sub(1);
                    let offset = index
                        .line_start(line)
                        .map(|s| s + e.column().saturating_sub(1))
                        .unwrap_or(text.len())
                        .min(text.len());
                    let message = e.to_string();
                    let message = message
                        .split(" at line ")
                        .next()
                        .unwrap_or(&message)
                        .to_string();
                    Envelope::Invalid { offset, message }
                } else {
                    Envelope::NotJson
                }
            }
        };
    }
    let json_start = matches!(first, '[' | '"' | '-' | '0'..='9')
        || ["true", "false", "null"]
            .iter()
            .any(|k| trimmed.starts_with(k));
    if json_start && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
        return Envelope::NoCode {
            what: format!(
                "{} in JSON, not an object with a `code` key",
                with_article(json_kind(trimmed))
            ),
        };
    }
    Envelope::NotJson
}

/// `text` rewritten, byte for byte (same length, so offsets survive), from the JSON dialect of
/// Python's `json.loads` (what Colony and Python-written JSON Lines use) into strict JSON that
/// serde_json reads: the constants `NaN`, `Infinity` and `-Infinity` outside strings become the
/// number `0` (`-0`) padded with spaces, and a lone surrogate escape inside a string
/// (`\ud800` not followed by a low surrogate escape, or a lone `\udc00`) becomes `\ufffd`.
/// Anything else is left alone, so invalid JSON stays invalid. Borrowed when nothing changes.
pub fn python_json_dialect(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let hex4 = |i: usize| -> Option<u32> {
        let h = text.get(i..i + 4)?;
        if h.bytes().all(|b| b.is_ascii_hexdigit()) {
            u32::from_str_radix(h, 16).ok()
        } else {
            None
        }
    };
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'"' => in_string = false,
                b'\\' if bytes.get(i + 1) == Some(&b'u') => {
                    if let Some(cu) = hex4(i + 2) {
                        let paired_low = (0xD800..0xDC00).contains(&cu)
                            && bytes.get(i + 6) == Some(&b'\\')
                            && bytes.get(i + 7) == Some(&b'u')
                            && hex4(i + 8).is_some_and(|lo| (0xDC00..0xE000).contains(&lo));
                        if paired_low {
                            i += 12;
                            continue;
                        }
                        if (0xD800..0xE000).contains(&cu) {
                            let o = out.get_or_insert_with(|| bytes.to_vec());
                            o[i + 2..i + 6].copy_from_slice(b"fffd");
                        }
                        i += 6;
                        continue;
                    }
                    i += 2;
                    continue;
                }
                b'\\' => {
                    i += 2;
                    continue;
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        let word_start = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if word_start {
            for (word, replacement) in [
                (&b"-Infinity"[..], &b"-0       "[..]),
                (b"Infinity", b"0       "),
                (b"NaN", b"0  "),
            ] {
                let end = i + word.len();
                let word_end = bytes
                    .get(end)
                    .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
                if bytes.get(i..end) == Some(word) && word_end {
                    let o = out.get_or_insert_with(|| bytes.to_vec());
                    o[i..end].copy_from_slice(replacement);
                    i = end;
                    break;
                }
            }
            if i < bytes.len() && bytes[i] == b'"' {
                continue;
            }
        }
        i += 1;
    }
    match out {
        // Only ASCII bytes were replaced by ASCII bytes: still valid UTF-8.
        Some(o) => std::borrow::Cow::Owned(
            String::from_utf8(o)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        ),
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// Decodes the content of a JSON string literal (between the quotes) that starts at byte
/// `file_start` of the file. Runs of unescaped characters map byte for byte; each escape
/// sequence maps to its whole escape (`\n` is one byte of cell text for two bytes of file).
pub fn decode_json_string(content: &str, file_start: usize) -> (String, SourceMap) {
    let mut out = String::with_capacity(content.len());
    let mut map = SourceMap {
        segments: Vec::new(),
        escape: Escape::JsonString,
    };
    let bytes = content.as_bytes();
    let mut i = 0;
    let mut run = 0;
    let flush = |out: &mut String, map: &mut SourceMap, run: usize, i: usize| {
        if run < i {
            map.push(Segment {
                cell_start: out.len(),
                len: i - run,
                file_start: file_start + run,
                file_len: i - run,
            });
            out.push_str(&content[run..i]);
        }
    };
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        flush(&mut out, &mut map, run, i);
        let (ch, len) = decode_escape(&content[i..]);
        map.push(Segment {
            cell_start: out.len(),
            len: ch.len_utf8(),
            file_start: file_start + i,
            file_len: len,
        });
        out.push(ch);
        i += len;
        run = i;
    }
    flush(&mut out, &mut map, run, i);
    (out, map)
}

/// One JSON escape at the start of `s` (which starts with a backslash): the character and the
/// escape's length in bytes. Invalid escapes decode to U+FFFD.
fn decode_escape(s: &str) -> (char, usize) {
    let hex4 = |t: &str| -> Option<u32> {
        let h = t.get(..4)?;
        if h.bytes().all(|b| b.is_ascii_hexdigit()) {
            u32::from_str_radix(h, 16).ok()
        } else {
            None
        }
    };
    let mut chars = s[1..].chars();
    let Some(c) = chars.next() else {
        return ('\u{FFFD}', 1);
    };
    let simple = match c {
        '"' => Some('"'),
        '\\' => Some('\\'),
        '/' => Some('/'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        _ => None,
    };
    if let Some(ch) = simple {
        return (ch, 2);
    }
    if c == 'u' {
        if let Some(hi) = hex4(&s[2..]) {
            if (0xD800..0xDC00).contains(&hi) && s[6..].starts_with("\\u") {
                if let Some(lo) = hex4(&s[8..]) {
                    if (0xDC00..0xE000).contains(&lo) {
                        let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        return (char::from_u32(cp).unwrap_or('\u{FFFD}'), 12);
                    }
                }
            }
            return (char::from_u32(hi).unwrap_or('\u{FFFD}'), 6);
        }
    }
    ('\u{FFFD}', 1 + c.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_string_map_points_at_escapes() {
        let file = r#"{"code": "a\nb\"c\u00e9\ud83d\ude00d"}"#;
        let start = file.find("a\\n").unwrap();
        let end = file.rfind('"').unwrap();
        let (text, map) = decode_json_string(&file[start..end], start);
        assert_eq!(text, "a\nb\"cé😀d");
        // `b` is one byte after the 2-byte escape of the newline.
        let b = text.find('b').unwrap();
        assert_eq!(map.to_file(b), file.find("b\\\"").unwrap());
        // The newline maps to its escape.
        assert_eq!(map.to_file(1), start + 1);
        let d = text.find('d').unwrap();
        assert_eq!(&file[map.to_file(d)..map.to_file(d) + 1], "d");
        // The emoji (one char, 4 bytes) covers the 12-byte surrogate pair.
        let e = text.find('😀').unwrap();
        assert_eq!(
            &file[map.range_to_file(TextRange::new(e, e + 4)).as_range()],
            "\\ud83d\\ude00"
        );
    }

    #[test]
    fn colony_legacy_strips_prefixes() {
        let ex = extract_with("```pycon\n>>> x", &ResponseOptions { colony_exact: true });
        assert_eq!(ex.cells[0].text, "con\n>>> x");
    }
}
