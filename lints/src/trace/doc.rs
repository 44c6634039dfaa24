//! JSON-document inputs: read whole, classified by shape, converted by the per-format modules
//! into events that carry the line of each source record.
//!
//! Positions come from the document text itself: every nested value is parsed as a borrowed
//! [`RawValue`] slice of the text, so its byte offset (and line) is known without a
//! position-tracking parser.

use super::model::*;
use super::{BoxedReader, TraceError};
use crate::source::LineIndex;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// An object whose values are borrowed slices of the document.
pub(crate) type RawObj<'a> = BTreeMap<String, &'a RawValue>;

/// The elements of a JSON array (borrowed), or `None` when `r` is no array.
pub(crate) fn arr(r: &RawValue) -> Option<Vec<&RawValue>> {
    serde_json::from_str::<Vec<&RawValue>>(r.get()).ok()
}

/// The members of a JSON object (borrowed), or `None` when `r` is no object.
pub(crate) fn obj(r: &RawValue) -> Option<RawObj<'_>> {
    serde_json::from_str::<RawObj>(r.get()).ok()
}

/// Nesting depth up to which values are read: Python's `json` reads about 990 levels (its
/// default recursion limit of 1000), serde_json's default limit is 128 (issue 6 T9).
pub const MAX_DEPTH: usize = 1000;

/// Deepest nesting of arrays and objects in JSON text (brackets inside strings ignored).
fn depth(text: &str) -> usize {
    let (mut d, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &c in text.as_bytes() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'[' | b'{' => {
                d += 1;
                max = max.max(d);
            }
            b']' | b'}' => d = d.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// `text` parsed as a JSON value, reading nesting up to [`MAX_DEPTH`] levels as Python does
/// (serde_json alone stops at 128).
///
/// A number beyond `f64` range reads as `inf`, as in Python
/// ([`super::nonfinite::overflow_to_infinity`]).
///
/// Errors: serde_json's message (without its position), or, for a value nested deeper than
/// [`MAX_DEPTH`], a message that says so.
pub(crate) fn value(text: &str) -> Result<Value, String> {
    // Integers beyond 64 bits stay exact (big-integer stand-ins, issue 6 T6-12).
    if let Some(big) = super::nonfinite::rewrite_big_ints(text) {
        return value_exact(&big);
    }
    value_exact(text)
}

/// [`value`] of text holding no integer beyond 64 bits.
fn value_exact(text: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Ok(v),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            let d = depth(text);
            if d > MAX_DEPTH {
                return Err(format!(
                    "a value is nested {d} levels deep, more than the {MAX_DEPTH} levels this reader (like Python's json) reads"
                ));
            }
            // Without serde_json's limit, on a stack grown as needed (serde_stacker).
            let mut de = serde_json::Deserializer::from_str(text);
            de.disable_recursion_limit();
            let v = serde::Deserialize::deserialize(serde_stacker::Deserializer::new(&mut de));
            v.and_then(|v| de.end().map(|()| v))
                .map_err(|e| strip_position(&e.to_string()))
        }
        // A number beyond f64 (`1e400`) reads as Python's json reads it, `inf` (issue 6 T5-3).
        Err(e) if super::nonfinite::is_out_of_range(&e) => {
            match super::nonfinite::overflow_to_infinity(text) {
                Some(big) => match super::nonfinite::rewrite(&big) {
                    Some((fixed, _)) => value(&fixed),
                    None => value(&big),
                },
                None => Err(strip_position(&e.to_string())),
            }
        }
        Err(e) => Err(strip_position(&e.to_string())),
    }
}

/// The reason JSON `text` that should be an object could not be read as one: nested deeper
/// than [`MAX_DEPTH`] (an honest message, issue 6 T9), else "`what` must be a JSON object".
pub(crate) fn not_object(text: &str, what: &str) -> String {
    let d = depth(text);
    if d > MAX_DEPTH {
        format!("{what} is nested {d} levels deep, more than the {MAX_DEPTH} levels this reader (like Python's json) reads")
    } else {
        format!("{what} must be a JSON object")
    }
}

/// `r` parsed as a JSON object, or `None`.
pub(crate) fn map(r: &RawValue) -> Option<Map<String, Value>> {
    match value(r.get()) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// One source item of a list: a borrowed value, or the reason its line could not be parsed
/// (JSON Lines input).
pub(crate) type Item<'a> = (u64, Result<&'a RawValue, String>);

/// Conversion state shared by the format modules: the document, its line index, the events
/// produced so far and the counters.
pub(crate) struct DocCtx<'a> {
    pub path: &'a Path,
    text: &'a str,
    /// Built on first use: the one-pass chat reader counts its lines itself.
    index: std::cell::OnceCell<LineIndex>,
    /// The last offset looked up without the index and its zero-based line: lookups that move
    /// forward (the common order: items, then their parts) count the line breaks in between
    /// instead of indexing the whole text (a line index of a pretty-printed recording costs 8
    /// bytes per line).
    cursor: std::cell::Cell<(usize, usize)>,
    pub events: Vec<Event>,
    pub stats: ReadStats,
    name: String,
    /// Lines of the file before `text` (a streamed conversation starts at line `base + 1`).
    base: u64,
}

impl<'a> DocCtx<'a> {
    pub(crate) fn new(path: &'a Path, text: &'a str) -> Self {
        Self::at_line(path, text, 1)
    }

    /// A context over `text`, a part of the file that starts on one-based line `first_line`
    /// (the streaming readers convert one conversation at a time).
    pub(crate) fn at_line(path: &'a Path, text: &'a str, first_line: u64) -> Self {
        Self {
            path,
            text,
            index: std::cell::OnceCell::new(),
            cursor: std::cell::Cell::new((0, 0)),
            events: Vec::new(),
            stats: ReadStats::default(),
            name: path.display().to_string(),
            base: first_line.saturating_sub(1),
        }
    }

    /// The document's line index (built on first use).
    fn index(&self) -> &LineIndex {
        self.index.get_or_init(|| LineIndex::new(self.text))
    }

    /// One-based line of byte `offset` of the document. Lines end as [`LineIndex`] ends them
    /// (`\n`, `\r\n`, a lone `\r`).
    pub fn line_at(&self, offset: usize) -> u64 {
        let (at, line) = self.cursor.get();
        let zero_based = match self.index.get() {
            None if offset >= at && offset <= self.text.len() => {
                let b = self.text.as_bytes();
                let breaks = memchr::memchr2_iter(b'\n', b'\r', &b[at..offset])
                    .filter(|&i| b[at + i] == b'\n' || b.get(at + i + 1) != Some(&b'\n'))
                    .count();
                self.cursor.set((offset, line + breaks));
                line + breaks
            }
            _ => self.index().line_of(offset),
        };
        self.base + (zero_based + 1) as u64
    }

    /// One-based line where `r` starts (1 when `r` is not a slice of the document).
    pub fn line_of(&self, r: &RawValue) -> u64 {
        let start = self.text.as_ptr() as usize;
        let p = r.get().as_ptr() as usize;
        if p < start || p > start + self.text.len() {
            return 1;
        }
        self.line_at(p - start)
    }

    /// Starts a trace: `None` names it after the file, `Some(n)` gives `FILE#n`.
    pub fn start_trace(&mut self, n: Option<usize>, format: Format) {
        let name = match n {
            Some(n) => format!("{}#{n}", self.name),
            None => self.name.clone(),
        };
        self.events.push(Event::TraceStart(TraceInfo {
            name,
            path: self.path.to_path_buf(),
            format,
        }));
    }

    /// Emits a record.
    pub fn record(&mut self, line: u64, record: Record) {
        self.stats.emitted += 1;
        self.events.push(Event::Record { line, record });
    }

    /// Counts one source record as read and accepted.
    pub fn accept(&mut self) {
        self.stats.read += 1;
        self.stats.accepted += 1;
    }

    /// Counts one source record as read and skipped, with the reason.
    pub fn skip(&mut self, line: u64, message: impl Into<String>) {
        self.stats.read += 1;
        self.stats.skipped += 1;
        self.events.push(Event::Skipped(Skip {
            path: self.path.to_path_buf(),
            line,
            column: None,
            message: message.into(),
        }));
    }

    /// A warning that skips nothing.
    pub fn warn(&mut self, line: u64, message: impl Into<String>) {
        self.events.push(Event::Warning(Skip {
            path: self.path.to_path_buf(),
            line,
            column: None,
            message: message.into(),
        }));
    }

    /// A fatal error at one-based `line`.
    pub fn error_line(&self, line: u64, message: impl Into<String>) -> TraceError {
        TraceError {
            path: self.path.to_path_buf(),
            line: Some(line),
            column: None,
            message: message.into(),
        }
    }

    /// A fatal error at the position of `r`.
    pub fn error_at(&self, r: &RawValue, message: impl Into<String>) -> TraceError {
        TraceError {
            path: self.path.to_path_buf(),
            line: Some(self.line_of(r)),
            column: None,
            message: message.into(),
        }
    }
}

/// A reader over events produced up front.
pub(crate) struct DocReader {
    events: std::vec::IntoIter<Event>,
    stats: ReadStats,
    format: Format,
}

impl Iterator for DocReader {
    type Item = Event;
    fn next(&mut self) -> Option<Event> {
        self.events.next()
    }
}

impl TraceReader for DocReader {
    fn stats(&self) -> ReadStats {
        self.stats
    }
    fn format(&self) -> Format {
        self.format
    }
}

/// The root of a document: one JSON value, or the lines of a JSON Lines file whose lines are
/// not native records (chat or pyAgentic messages, Colony iterations or spans).
pub(crate) enum Root<'a> {
    /// A single JSON document that is not an array.
    Value(&'a RawValue),
    /// A single JSON document that is an array: the line of its `[` and its elements, split
    /// in the one pass that also validates the document.
    List(u64, Vec<&'a RawValue>),
    /// JSON Lines.
    Lines(Vec<Item<'a>>),
}

fn has(o: &RawObj, keys: &[&str]) -> bool {
    keys.iter().any(|k| o.contains_key(*k))
}

/// Classifies a document by its shape. `None` when no reader recognises it.
pub(crate) fn classify(root: &Root) -> Option<Format> {
    fn first_obj<'a>(items: &[&'a RawValue]) -> Option<RawObj<'a>> {
        items.iter().find_map(|r| obj(r))
    }
    match root {
        Root::Lines(items) => {
            let vals: Vec<&RawValue> = items
                .iter()
                .filter_map(|(_, r)| r.as_ref().ok().copied())
                .collect();
            let o = first_obj(&vals)?;
            classify_item(&o)
        }
        Root::List(_, items) => {
            let first = items.first()?;
            if arr(first).is_some() {
                // A list of conversations, each a list of messages: the first message of the
                // first conversation that has one (empty conversations before it tell nothing,
                // issue 6 T5-13).
                let o = items
                    .iter()
                    .map_while(|i| arr(i))
                    .find_map(|inner| first_obj(&inner))?;
                return if o.contains_key("kind") && !o.contains_key("role") {
                    Some(Format::Pyagentic)
                } else {
                    Some(Format::OpenaiChat)
                };
            }
            let o = first_obj(items)?;
            if has(&o, &["traj", "messages", "conversation"]) {
                return Some(Format::OpenaiChat);
            }
            classify_item(&o)
        }
        Root::Value(v) => classify_object(&obj(v)?),
    }
}

/// Classifies a single JSON object document (or one line of JSON Lines) by its keys. `None`
/// when no reader recognises it.
pub(crate) fn classify_object(o: &RawObj) -> Option<Format> {
    if has(o, &["$schemaVersion", "generated_items"]) {
        return Some(Format::AgentsRunstate);
    }
    if has(o, &["trajectory", "environment", "replay_config"]) {
        return Some(Format::SweAgent);
    }
    // A SWE-agent RetryAgent file saved mid-run holds only `attempts` (issue 6 T7-5).
    if let Some(a) = o.get("attempts").and_then(|a| arr(a)) {
        if a.first()
            .and_then(|f| obj(f))
            .is_some_and(|f| has(&f, &["trajectory", "history"]))
        {
            return Some(Format::SweAgent);
        }
    }
    if let Some(h) = o.get("history").and_then(|h| arr(h)) {
        let swe = h.iter().filter_map(|m| obj(m)).any(|m| {
            has(
                &m,
                &[
                    "message_type",
                    "agent",
                    "action",
                    "tool_call_ids",
                    "thought",
                ],
            )
        });
        return Some(if swe {
            Format::SweAgent
        } else {
            Format::OpenaiChat
        });
    }
    if has(
        o,
        &[
            "cells",
            "iterations",
            "run_call_trace",
            "spans",
            "step_index",
        ],
    ) {
        return Some(Format::Colony);
    }
    if let Some(f) = o
        .get("format")
        .and_then(|f| serde_json::from_str::<String>(f.get()).ok())
    {
        if f.starts_with("colony") {
            return Some(Format::Colony);
        }
    }
    if has(o, &["messages", "traj", "conversation"]) {
        return Some(Format::OpenaiChat);
    }
    classify_item(o)
}

/// Classifies one item of a list or one line of JSON Lines by its keys (a Colony iteration or
/// span, a pyAgentic or chat message, a conversation object). `None` when no reader knows it.
pub(crate) fn classify_item(o: &RawObj) -> Option<Format> {
    if has(
        o,
        &[
            "span_id",
            "run_call_trace",
            "generated_code",
            "step_index",
            "call_index",
        ],
    ) {
        return Some(Format::Colony);
    }
    if o.contains_key("kind") && !o.contains_key("rec") {
        return Some(Format::Pyagentic);
    }
    // An OpenAI Responses item (`super::dialects`).
    if let Some(t) = o
        .get("type")
        .and_then(|t| serde_json::from_str::<String>(t.get()).ok())
    {
        if matches!(
            t.as_str(),
            "function_call" | "function_call_output" | "reasoning"
        ) {
            return Some(Format::OpenaiResponses);
        }
    }
    if o.contains_key("role") {
        return Some(Format::OpenaiChat);
    }
    if has(o, &["traj", "messages"]) {
        return Some(Format::OpenaiChat);
    }
    None
}

/// The warning [`prepare`] gives for invalid UTF-8.
pub(crate) const BAD_UTF8: &str = "invalid UTF-8 replaced by U+FFFD";

/// JSON text made readable by serde_json, as Python's `json` reads it ([`prepare`]).
pub(crate) struct Prepared {
    /// The text: invalid UTF-8 replaced by U+FFFD, lone surrogate escapes and `NaN` /
    /// `Infinity` rewritten as stand-ins.
    pub text: String,
    /// Warnings about the rewrites: (one-based line of `text`, message), in order.
    pub warnings: Vec<(u64, String)>,
    /// Offsets of the `NaN` / `Infinity` stand-ins, for [`super::nonfinite::original_column`].
    pub nonfinite_at: Vec<usize>,
}

/// Prepares JSON `bytes` (a whole document, or one streamed conversation) for parsing:
/// invalid UTF-8 is replaced by U+FFFD (one warning at its first line), lone surrogate escapes
/// (valid to Python's json, not to serde_json) are rewritten (a warning per line, issue 6 R8),
/// then `NaN` / `Infinity` are read as stand-ins (issue 6 T1; after the surrogate pass, which
/// must not see the stand-ins' markers). Text that needs neither rewrite (the common case) is
/// scanned once and not copied.
pub(crate) fn prepare(bytes: Vec<u8>) -> Prepared {
    let (text, bad_utf8) = match String::from_utf8(bytes) {
        Ok(t) => (t, None),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            (String::from_utf8_lossy(e.as_bytes()).into_owned(), Some(at))
        }
    };
    let mut warnings = Vec::new();
    if let Some(at) = bad_utf8 {
        let line = (LineIndex::new(&text).line_of(at) + 1) as u64;
        warnings.push((line, BAD_UTF8.to_string()));
    }
    let (may_surrogate, may_nonfinite) = super::nonfinite::document_needs(&text);
    let surrogates = if may_surrogate {
        super::surrogates::escape_lone_surrogates(&text)
    } else {
        None
    };
    let text = match surrogates {
        Some((fixed, at)) => {
            let index = LineIndex::new(&text);
            let mut per_line: Vec<(u64, String, usize)> = Vec::new();
            for a in at {
                let line = (index.line_of(a) + 1) as u64;
                match per_line.last_mut() {
                    Some((l, _, n)) if *l == line => *n += 1,
                    _ => per_line.push((line, text[a..a + 6].to_string(), 1)),
                }
            }
            for (line, escape, n) in per_line {
                warnings.push((line, super::surrogates::warning(&escape, n)));
            }
            fixed
        }
        None => text,
    };
    let nonfinite = if may_nonfinite {
        super::nonfinite::rewrite(&text)
    } else {
        None
    };
    let (text, nonfinite_at) = match nonfinite {
        Some((fixed, at)) => (fixed, at),
        None => (text, Vec::new()),
    };
    Prepared {
        text,
        warnings,
        nonfinite_at,
    }
}

/// True when [`prepare`] would hand `text` back as it is, with no warnings: it holds no
/// surrogate escape or reserved character and no `NaN` / `Infinity` token (the two passes
/// [`prepare`] runs only when [`super::nonfinite::document_needs`] says they may apply). Lets a
/// reader that parsed text in place skip copying it through [`prepare`].
pub(crate) fn prepare_keeps(text: &str) -> bool {
    super::nonfinite::document_needs(text) == (false, false)
}

/// Reads a JSON document (or JSON Lines of non-native items) in `format`, or the detected
/// format when `None`.
///
/// Errors: invalid JSON (with line:column), or a shape no reader recognises.
pub(crate) fn read_document(
    path: &Path,
    bytes: Vec<u8>,
    format: Option<Format>,
) -> Result<BoxedReader, TraceError> {
    read_document_with(path, bytes, format, true)
}

/// [`read_document`], with the streaming chat reader ([`super::stream`]) tried first or not
/// (`stream`; false when the caller already tried it, and in tests comparing the two paths).
pub(crate) fn read_document_with(
    path: &Path,
    bytes: Vec<u8>,
    format: Option<Format>,
    stream: bool,
) -> Result<BoxedReader, TraceError> {
    let mut bytes = bytes;
    if stream {
        let none: Box<dyn std::io::Read + Send> = Box::new(std::io::empty());
        match super::stream::open(path, none, bytes, format)? {
            Ok(reader) => return Ok(reader),
            Err((back, _)) => bytes = back,
        }
    }
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    let Prepared {
        text,
        warnings,
        nonfinite_at,
    } = prepare(bytes);
    // A recording converted cell by cell keeps its text (and the path its events name) for as
    // long as it is read; any other document is converted whole here and its text dropped.
    let converted = LazyDoc::try_new((path.to_path_buf(), text), |(path, text)| {
        match convert(path, text, warnings, &nonfinite_at, format) {
            Ok(Converted::Lazy(run)) => Ok(*run),
            Ok(Converted::Done(reader)) => Err(Ok(reader)),
            Err(e) => Err(Err(e)),
        }
    });
    match converted {
        Ok(doc) => Ok(Box::new(LazyReader {
            doc,
            pending: Vec::new().into_iter(),
            done: false,
        })),
        Err(Ok(reader)) => Ok(Box::new(reader)),
        Err(Err(e)) => Err(e),
    }
}

/// What [`convert`] made of a document: every event (`Done`), or the events so far and the
/// cells still to convert (`Lazy`: a Colony recording's cells, issue 6 T5-12).
enum Converted<'a> {
    Done(DocReader),
    Lazy(Box<LazyRun<'a>>),
}

/// A document being converted one cell at a time: its conversion state (events not yet
/// taken, counters, line index) and the cells left.
pub(crate) struct LazyRun<'a> {
    ctx: DocCtx<'a>,
    cells: super::colony::Cells<'a>,
    format: Format,
}

self_cell::self_cell!(
    /// The text of a document (and its path) with the conversion that borrows it.
    struct LazyDoc {
        owner: (std::path::PathBuf, String),
        #[covariant]
        dependent: LazyRun,
    }
);

/// The reader over a [`LazyDoc`]: each cell is converted when the events before it are taken,
/// so only one cell's events are held at a time (the text is held whole).
struct LazyReader {
    doc: LazyDoc,
    pending: std::vec::IntoIter<Event>,
    done: bool,
}

impl Iterator for LazyReader {
    type Item = Event;
    fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(e) = self.pending.next() {
                return Some(e);
            }
            if self.done {
                return None;
            }
            // The events emitted before the first cell (document warnings, the trace start
            // and header) are taken first; then one cell's per step.
            let events = self.doc.with_dependent_mut(|_, run| {
                if run.ctx.events.is_empty() && !run.cells.step(&mut run.ctx) {
                    return None;
                }
                Some(std::mem::take(&mut run.ctx.events))
            });
            match events {
                Some(events) => self.pending = events.into_iter(),
                None => {
                    self.done = true;
                    return None;
                }
            }
        }
    }
}

impl TraceReader for LazyReader {
    fn stats(&self) -> ReadStats {
        self.doc.borrow_dependent().ctx.stats
    }
    fn format(&self) -> Format {
        self.doc.borrow_dependent().format
    }
}

/// Converts the prepared `text` of a document at `path` (with the preparation's `warnings`
/// and stand-in offsets `nonfinite_at`, [`prepare`]) in `format`, or the detected format when
/// `None`: whole, or, for a Colony recording's list of cells, lazily ([`Converted`]).
///
/// Errors: as [`read_document`].
fn convert<'a>(
    path: &'a Path,
    text: &'a str,
    warnings: Vec<(u64, String)>,
    nonfinite_at: &[usize],
    format: Option<Format>,
) -> Result<Converted<'a>, TraceError> {
    // One-based column in the input of column `c` (one-based) of one-based line `l`.
    let input_column = |text: &str, l: usize, c: usize| -> usize {
        if nonfinite_at.is_empty() {
            return c;
        }
        let start = LineIndex::new(text)
            .line_start(l.saturating_sub(1))
            .unwrap_or(0);
        super::nonfinite::original_column(nonfinite_at, start, c)
    };
    // Events about the whole document (emitted first).
    let early = {
        let mut ctx = DocCtx::new(path, text);
        for (line, message) in warnings {
            ctx.warn(line, message);
        }
        ctx.events
    };
    if text.trim().is_empty() {
        // Only reachable with a forced non-native format: one trace without records.
        let mut ctx = DocCtx::new(path, text);
        ctx.events = early;
        let format = format.unwrap_or(Format::OpenaiChat);
        ctx.start_trace(None, format);
        ctx.warn(0, "empty trace file (no records)");
        let stats = ctx.stats;
        return Ok(Converted::Done(DocReader {
            events: ctx.events.into_iter(),
            stats,
            format,
        }));
    }
    let mut ctx = DocCtx::new(path, text);
    ctx.events = early;
    // An array document is validated and split into its elements in one pass; anything else
    // (and an array that fails to parse, for the error's position) takes the general path.
    let json_ws = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r');
    let start = text.len() - text.trim_start_matches(json_ws).len();
    let list = match text[start..].starts_with('[') {
        true => serde_json::from_str::<Vec<&RawValue>>(text).ok(),
        false => None,
    };
    let parsed = match list {
        Some(items) => Ok(Root::List(ctx.line_at(start), items)),
        None => serde_json::from_str::<&RawValue>(text).map(Root::Value),
    };
    // A list document cut short (a run killed while writing it): its complete elements are
    // replayed and the incomplete one is reported as skipped (issue 6 R13).
    let mut truncated: Option<(Option<usize>, String, usize)> = None;
    let mut last_at = start;
    let parsed = match parsed {
        Err(e)
            if e.classify() == serde_json::error::Category::Eof
                && text[start..].starts_with('[') =>
        {
            match complete_prefix(text, start) {
                Some((items, at)) if !items.is_empty() => {
                    last_at = items.last().map_or(start, |v| {
                        v.get().as_ptr() as usize - text.as_ptr() as usize
                    });
                    truncated = Some((at, strip_position(&e.to_string()), items.len()));
                    Ok(Root::List(ctx.line_at(start), items))
                }
                _ => Err(e),
            }
        }
        p => p,
    };
    let root = match parsed {
        Ok(root) => root,
        Err(e) => {
            // JSON Lines of items (chat messages, pyAgentic dumps, Colony iterations)?
            let mut items = Vec::new();
            let mut offset = 0usize;
            for raw_line in text.split_inclusive('\n') {
                let line_start = offset;
                offset += raw_line.len();
                let l = raw_line.trim();
                if l.is_empty() {
                    continue;
                }
                let ln = ctx.line_at(line_start);
                // Slice of the document so positions stay valid.
                let start = line_start + (raw_line.len() - raw_line.trim_start().len());
                let slice = &text[start..start + l.len()];
                items.push((
                    ln,
                    serde_json::from_str::<&RawValue>(slice).map_err(|e| {
                        format!(
                            "invalid JSON at column {}",
                            super::nonfinite::original_column(nonfinite_at, start, e.column())
                        )
                    }),
                ));
            }
            let is_object =
                |r: &Result<&RawValue, String>| r.as_ref().is_ok_and(|v| v.get().starts_with('{'));
            let first_ok = items.first().is_some_and(|(_, r)| is_object(r));
            // A first line that is not JSON at all (not the start of a broken document) before
            // JSON Lines of objects: reported and skipped, as the native reader does (issue 6
            // R1); the first lines that detection weighs decide.
            let first_junk = text
                .trim_start_matches(json_ws)
                .chars()
                .next()
                .is_some_and(|c| c != '{' && c != '[')
                && items
                    .iter()
                    .take(super::DETECT_LINES)
                    .any(|(_, r)| is_object(r));
            if items.len() > 1 && (first_ok || first_junk) {
                Root::Lines(items)
            } else {
                return Err(TraceError {
                    path: path.to_path_buf(),
                    line: Some(e.line() as u64),
                    column: Some(input_column(text, e.line(), e.column()) as u64),
                    message: format!("invalid JSON: {}", strip_position(&e.to_string())),
                });
            }
        }
    };
    // `[]` is an empty conversation list (a valid empty OpenAI chat / pyAgentic dump): like an
    // empty file, one trace without records and a warning.
    if format.is_none() && matches!(&root, Root::List(_, items) if items.is_empty()) {
        ctx.start_trace(None, Format::OpenaiChat);
        ctx.warn(0, "empty list (no records)");
        let stats = ctx.stats;
        return Ok(Converted::Done(DocReader {
            events: ctx.events.into_iter(),
            stats,
            format: Format::OpenaiChat,
        }));
    }
    match truncated {
        Some((Some(at), why, n)) => {
            let line = ctx.line_at(at);
            ctx.skip(
                line,
                format!(
                    "truncated document: the list element starting here is incomplete ({why}); the {n} complete element(s) before it are replayed"
                ),
            );
        }
        Some((None, _, n)) => {
            let line = ctx.line_at(last_at);
            ctx.warn(
                line,
                format!(
                    "truncated document: the list is not closed after the element starting here (no `]` before the end of input); its {n} complete element(s) are replayed"
                ),
            );
        }
        None => {}
    }
    let format = match format {
        Some(f) => f,
        None => match classify(&root) {
            // Anthropic / Responses shapes are chat documents with tool blocks or items.
            Some(Format::OpenaiChat) => {
                super::dialects::document_shape(text).unwrap_or(Format::OpenaiChat)
            }
            Some(f) => f,
            None => {
                return Err(TraceError::plain(
                    path,
                    "cannot tell the trace format from its content; pass --format (native, colony, openai-chat, pyagentic, swe-agent, agents-runstate, anthropic, openai-responses)",
                ))
            }
        },
    };
    match format {
        Format::Native => {
            // Only reachable with --format native on a pretty-printed document.
            return Err(TraceError::plain(
                path,
                "native traces are JSON Lines: one record per line",
            ));
        }
        Format::OpenaiChat | Format::AnthropicMessages | Format::OpenaiResponses => {
            super::chat::read(&mut ctx, &root, format)?
        }
        Format::Pyagentic => super::pyagentic::read(&mut ctx, &root)?,
        Format::Colony => {
            if let Some(cells) = super::colony::read(&mut ctx, &root)? {
                return Ok(Converted::Lazy(Box::new(LazyRun { ctx, cells, format })));
            }
        }
        Format::SweAgent => super::sweagent::read(&mut ctx, &root)?,
        Format::AgentsRunstate => super::runstate::read(&mut ctx, &root)?,
    }
    let stats = ctx.stats;
    Ok(Converted::Done(DocReader {
        events: ctx.events.into_iter(),
        stats,
        format,
    }))
}

use super::native::strip_position;

/// The complete top-level elements of an array document that ends before its closing `]`
/// (each a slice of `text`, so positions stay valid), and the offset where the incomplete
/// element starts (`None` when the text ends after a complete element or a comma). `None` when
/// the array is closed, or a complete element is not valid JSON (then the document is
/// malformed, not merely cut short). `start` is the offset of the `[`.
fn complete_prefix(text: &str, start: usize) -> Option<(Vec<&RawValue>, Option<usize>)> {
    let b = text.as_bytes();
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut elem = start + 1;
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth > 0 => depth -= 1,
            b']' => return None,
            b',' if depth == 0 => {
                let slice = text.get(elem..i)?.trim_matches([' ', '\t', '\n', '\r']);
                let offset = slice.as_ptr() as usize - text.as_ptr() as usize;
                items.push(
                    serde_json::from_str::<&RawValue>(&text[offset..offset + slice.len()]).ok()?,
                );
                elem = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let rest = text.get(elem..)?;
    let lead = rest.len() - rest.trim_start_matches([' ', '\t', '\n', '\r']).len();
    let last = rest.trim_matches([' ', '\t', '\n', '\r']);
    if last.is_empty() {
        // Cut right after a comma: every element is complete (issue 6 R13 re-test).
        return Some((items, None));
    }
    let offset = elem + lead;
    match serde_json::from_str::<&RawValue>(&text[offset..offset + last.len()]) {
        // Cut right after an element, or only the closing `]` missing: it is complete.
        Ok(v) => {
            items.push(v);
            Some((items, None))
        }
        Err(_) => Some((items, Some(offset))),
    }
}

/// The list items of a root: JSON Lines items, or the elements of a top-level array (each with
/// its line). `None` for a non-array document.
pub(crate) fn root_items<'a>(ctx: &DocCtx, root: &Root<'a>) -> Option<Vec<Item<'a>>> {
    match root {
        Root::Lines(items) => Some(items.clone()),
        Root::List(_, items) => Some(items.iter().map(|&r| (ctx.line_of(r), Ok(r))).collect()),
        Root::Value(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines counted forward from the last lookup equal the line index's, for every line
    /// ending, in any order of lookups.
    #[test]
    fn forward_line_counts_equal_the_index() {
        let text = "a\nb\r\nc\rd\n\n\re\r";
        let index = LineIndex::new(text);
        let want = |o: usize| (index.line_of(o) + 1) as u64;
        let ctx = DocCtx::new(Path::new("t"), text);
        for o in 0..=text.len() {
            assert_eq!(ctx.line_at(o), want(o), "forward {o}");
        }
        let ctx = DocCtx::new(Path::new("t"), text);
        for o in [3, 3, 9, 1, 12, 0] {
            assert_eq!(ctx.line_at(o), want(o), "jump {o}");
        }
        let ctx = DocCtx::at_line(Path::new("t"), text, 10);
        assert_eq!(ctx.line_at(text.len()), want(text.len()) + 9);
    }

    #[test]
    fn deep_values_read_as_python_does() {
        // Issue 6 T9: serde_json alone stops at 128 levels; Python reads about 990.
        let deep = |n: usize| format!("{{\"a\":{}{}}}", "[".repeat(n), "]".repeat(n));
        assert!(matches!(value(&deep(990)), Ok(Value::Object(_))));
        // Far deeper: an honest error, never a stack overflow.
        let e = value(&deep(200_000)).unwrap_err();
        assert_eq!(
            e,
            "a value is nested 200001 levels deep, more than the 1000 levels this reader (like Python's json) reads"
        );
        assert!(not_object(&deep(200_000), "a message").starts_with("a message is nested 200001"));
        assert_eq!(
            not_object("[1]", "a message"),
            "a message must be a JSON object"
        );
        // Brackets inside strings do not count.
        assert_eq!(depth(r#"{"a": "[[[[\"]]"}"#), 1);
    }
}
