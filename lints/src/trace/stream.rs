//! Streaming readers of chat files that hold many conversations (issue 6 T4-16, T4-17): a JSON
//! list of conversations (tau-bench's results file) is read element by element, and JSON Lines
//! of conversations (one conversation per line: a list of messages, or an object holding one
//! under `traj`, `messages` or `conversation`) line by line. Only one conversation's text, its
//! parsed messages and its records are held at a time, so peak memory follows the largest
//! conversation, not the file.
//!
//! Each conversation goes through the same preparation ([`doc::prepare`]: invalid UTF-8,
//! lone surrogate escapes, `NaN` / `Infinity`) and conversion ([`chat::conversation_unit`]) as
//! the conversations of a document read whole, with the lines of the file. A list element that
//! is not valid JSON is reported at its `FILE:LINE:COL` and skipped, as is a malformed line of
//! JSON Lines (`FILE:LINE`); the other conversations are replayed. A list cut short is handled
//! as the whole-document reader handles it (issue 6 R13).
//!
//! [`open`] decides from the file's first value (or first line): anything else (one
//! conversation, a list of messages, other formats) is handed back, with the bytes read so
//! far, to the whole-document reader.

use super::doc::{self, DocCtx};
use super::model::*;
use super::{chat, colony, BoxedReader, TraceError};
use serde_json::value::RawValue;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Bytes asked of the input at a time.
const CHUNK: usize = 256 * 1024;

/// The input with the bytes read but not yet consumed, and the position of the first of them.
struct Src {
    input: Box<dyn Read + Send>,
    /// Bytes read; `buf[pos..]` are not consumed yet.
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    /// While probing, every byte read is kept (the whole-document reader may need them all).
    keep: bool,
    /// One-based line and column (in bytes) of `buf[pos]`.
    line: u64,
    col: u64,
}

impl Src {
    /// Reads more input after the buffer; false at the end of input.
    fn fill(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        let got = Read::by_ref(&mut self.input)
            .take(CHUNK as u64)
            .read_to_end(&mut self.buf)?;
        if got == 0 {
            self.eof = true;
        }
        Ok(got > 0)
    }

    /// Drops the consumed bytes once they are the larger half of the buffer (never while
    /// probing): the buffer holds the current conversation and at most about as much again.
    /// Called between values only, as it moves `buf` indexes.
    fn compact(&mut self) {
        if !self.keep && self.pos > CHUNK && self.pos >= self.buf.len() / 2 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
    }

    /// The byte at `buf` index `i`, reading more input as needed; `None` at the end of input.
    fn byte(&mut self, i: usize) -> std::io::Result<Option<u8>> {
        while i >= self.buf.len() {
            if !self.fill()? {
                return Ok(None);
            }
        }
        Ok(Some(self.buf[i]))
    }

    /// Consumes `n` bytes, keeping the line and column.
    fn advance(&mut self, n: usize) {
        let done = &self.buf[self.pos..self.pos + n];
        match memchr::memrchr(b'\n', done) {
            Some(last) => {
                self.line += memchr::memchr_iter(b'\n', done).count() as u64;
                self.col = (n - last) as u64;
            }
            None => self.col += n as u64,
        }
        self.pos += n;
    }

    /// Consumes whitespace; the next byte, or `None` at the end of input.
    fn skip_ws(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            match self.byte(self.pos)? {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.advance(1),
                other => return Ok(other),
            }
        }
    }

    /// The end (a `buf` index, exclusive) of the JSON value starting at `buf[pos]`, found by
    /// matching brackets outside strings (the value is not validated); `None` when the input
    /// ends first.
    fn value_end(&mut self) -> std::io::Result<Option<usize>> {
        let mut i = self.pos;
        let mut depth = 0usize;
        loop {
            let Some(c) = self.byte(i)? else {
                // A scalar may end with the input; anything else is cut short.
                return Ok((depth == 0 && i > self.pos).then_some(i));
            };
            match c {
                b'"' => {
                    i += 1;
                    loop {
                        if self.byte(i)?.is_none() {
                            return Ok(None);
                        }
                        match memchr::memchr2(b'"', b'\\', &self.buf[i..]) {
                            Some(k) if self.buf[i + k] == b'\\' => i += k + 2,
                            Some(k) => {
                                i += k + 1;
                                break;
                            }
                            None => i = self.buf.len(),
                        }
                    }
                    if depth == 0 {
                        return Ok(Some(i));
                    }
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth > 0 => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(Some(i + 1));
                    }
                }
                b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => {
                    return Ok(Some(i));
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The end (a `buf` index, exclusive, before the `\n`) of the line starting at `buf[pos]`.
    fn line_end(&mut self) -> std::io::Result<usize> {
        let mut from = self.pos;
        loop {
            if let Some(k) = memchr::memchr(b'\n', &self.buf[from..]) {
                return Ok(from + k);
            }
            from = self.buf.len();
            if !self.fill()? {
                return Ok(self.buf.len());
            }
        }
    }
}

/// The kind of file being streamed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A JSON list of conversations; `started`: the first element was taken.
    List { started: bool },
    /// JSON Lines of conversations.
    Lines,
    /// Nothing more to read.
    Done,
}

/// True when `v`, an element of a list or a line, is a chat conversation: a list of chat
/// messages (its first object one, as the whole-document reader classifies a list of lists) or
/// an object holding one under `traj`, `messages` or `conversation` that the whole-document
/// reader reads as chat.
fn is_conversation(v: &RawValue) -> bool {
    if let Some(items) = doc::arr(v) {
        return items
            .iter()
            .find_map(|m| doc::obj(m))
            .is_some_and(|o| !o.contains_key("kind") || o.contains_key("role"));
    }
    doc::obj(v).is_some_and(|o| {
        ["traj", "messages", "conversation"]
            .iter()
            .any(|k| o.contains_key(*k))
            && doc::classify_item(&o) == Some(Format::OpenaiChat)
    })
}

/// True when `v`, the first element of a list or the first line, is a Colony cell that the
/// whole-document reader would convert as the first of a list of cells (a codegen iteration or a
/// `colony-replay/1` cell): an object it classifies as Colony that is neither a span row nor a
/// bare run-call-trace entry, and that names no conversation (issue 6 T5-12).
fn is_colony_cell(v: &RawValue) -> bool {
    doc::obj(v).is_some_and(|o| {
        let has = |k: &str| o.contains_key(k);
        doc::classify_item(&o) == Some(Format::Colony)
            && !["traj", "messages", "conversation", "span_id"]
                .iter()
                .any(|k| has(k))
            && (!has("call_index") || has("run_call_trace"))
    })
}

/// An input [`open`] does not stream: every byte already read, then the rest of the input.
pub(crate) type Unstreamed = (Vec<u8>, Box<dyn Read + Send>);

/// Opens a streaming chat reader on `input`, of which `head` (the bytes detection read) was
/// already taken, when the file is a JSON list whose first element is a conversation, or JSON
/// Lines whose first line is one and that has more than one line. Otherwise gives back every
/// byte read (`head` and more) and the input, for the whole-document reader. Only `None` and
/// `Some(Format::OpenaiChat)` formats are streamed.
///
/// Errors: reading the input fails.
pub(crate) fn open(
    path: &Path,
    input: Box<dyn Read + Send>,
    head: Vec<u8>,
    format: Option<Format>,
) -> Result<Result<BoxedReader, Unstreamed>, TraceError> {
    open_with(path, input, head, format, None)
}

/// [`open`], where `reopen` names a file that holds the same bytes as the input and can be read
/// again: a streamed Colony recording reads it ahead for the facts its header takes from the
/// cells ([`colony::HeaderFacts`]) instead of holding the cells until they are known.
pub(crate) fn open_with(
    path: &Path,
    input: Box<dyn Read + Send>,
    head: Vec<u8>,
    format: Option<Format>,
    reopen: Option<&Path>,
) -> Result<Result<BoxedReader, Unstreamed>, TraceError> {
    Ok(open_streamed(path, input, head, format, reopen)?.map(|r| Box::new(r) as BoxedReader))
}

/// [`open_with`], unboxed.
fn open_streamed(
    path: &Path,
    input: Box<dyn Read + Send>,
    head: Vec<u8>,
    format: Option<Format>,
    reopen: Option<&Path>,
) -> Result<Result<StreamReader, Unstreamed>, TraceError> {
    let kinds = match format {
        None => Kinds {
            chat: true,
            colony: true,
        },
        Some(Format::OpenaiChat) => Kinds {
            chat: true,
            colony: false,
        },
        Some(Format::Colony) => Kinds {
            chat: false,
            colony: true,
        },
        Some(_) => return Ok(Err((head, input))),
    };
    let src = Src {
        input,
        buf: head,
        pos: 0,
        eof: false,
        keep: true,
        line: 1,
        col: 1,
    };
    let mut reader = match open_stream_of(path, src, kinds)? {
        Ok(r) => r,
        Err(back) => return Ok(Err(back)),
    };
    reader.detect_shape = format.is_none();
    if let Some(run) = reader.colony.as_mut() {
        if let Some(facts) = reopen.and_then(|p| prescan(p, reader.mode)) {
            run.facts = Some(facts);
        }
    }
    Ok(Ok(reader))
}

/// Which kinds of file [`open_with`] may stream.
#[derive(Clone, Copy)]
struct Kinds {
    chat: bool,
    colony: bool,
}

/// The header facts of the Colony recording in the file at `path`, streamed as `mode`: its
/// cells read ahead, one at a time, until no later one can change them. `None` when the file
/// cannot be read again.
fn prescan(path: &Path, mode: Mode) -> Option<colony::HeaderFacts> {
    let file = std::fs::File::open(path).ok()?;
    let mut src = Src {
        input: Box::new(file),
        buf: Vec::new(),
        pos: 0,
        eof: false,
        keep: false,
        line: 1,
        col: 1,
    };
    if src.byte(2).ok()?.is_some() && src.buf.starts_with(b"\xEF\xBB\xBF") {
        src.pos = 3;
    }
    let mut ahead = StreamReader::new(path, src, mode);
    ahead.one_pass = false;
    let mut facts = colony::HeaderFacts::default();
    while !facts.complete() {
        match ahead.next_unit().ok()? {
            Some(Ok(unit)) => learn(&mut facts, &unit.bytes),
            Some(Err(_)) => {}
            None => break,
        }
    }
    Some(facts)
}

/// Takes the header facts a streamed Colony cell (its bytes) gives ([`colony::HeaderFacts`]).
/// A cell that names none of the keys the facts come from is not parsed.
fn learn(facts: &mut colony::HeaderFacts, bytes: &[u8]) {
    // A key can be spelled with escapes (`"agent\u005fid"`): such a cell is parsed too.
    let names = |b: &[u8]| {
        memchr::memmem::find(b, b"\\u").is_some()
            || facts
                .wanted_keys()
                .iter()
                .any(|k| memchr::memmem::find(b, k.as_bytes()).is_some())
    };
    if !names(bytes) {
        return;
    }
    let prepared = doc::prepare(bytes.to_vec());
    if let Ok(raw) = serde_json::from_str::<&RawValue>(&prepared.text) {
        facts.learn(raw);
    }
}

#[cfg(test)]
fn open_stream(path: &Path, src: Src) -> Result<Result<StreamReader, Unstreamed>, TraceError> {
    open_stream_of(
        path,
        src,
        Kinds {
            chat: true,
            colony: false,
        },
    )
}

/// [`open_stream`] for the `kinds` of file given.
fn open_stream_of(
    path: &Path,
    mut src: Src,
    kinds: Kinds,
) -> Result<Result<StreamReader, Unstreamed>, TraceError> {
    let probed = probe(&mut src, kinds)
        .map_err(|e| TraceError::plain(path, format!("cannot read trace: {e}")))?;
    let Some((mode, colony)) = probed else {
        return Ok(Err((src.buf, src.input)));
    };
    // From the start (after a byte-order mark): the probe's bytes are read again from memory.
    let bom = if src.buf.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    src.pos = bom;
    src.line = 1;
    src.col = 1;
    src.keep = false;
    let mut reader = StreamReader::new(path, src, mode);
    if colony {
        reader.one_pass = false;
        reader.colony = Some(Box::new(ColonyRun {
            lines: mode == Mode::Lines,
            ..ColonyRun::default()
        }));
    }
    Ok(Ok(reader))
}

/// Looks at the first value (or line) of the input: `Some` mode when it is streamed.
fn probe(src: &mut Src, kinds: Kinds) -> std::io::Result<Option<(Mode, bool)>> {
    if src.byte(2)?.is_some() && src.buf.starts_with(b"\xEF\xBB\xBF") {
        src.advance(3);
    }
    let start = src.pos;
    match src.skip_ws()? {
        Some(b'[') => {
            src.advance(1);
            if src.skip_ws()?.is_some_and(|c| c != b']') {
                if let Some(end) = src.value_end()? {
                    let first = std::str::from_utf8(&src.buf[src.pos..end])
                        .ok()
                        .and_then(|t| serde_json::from_str::<&RawValue>(t).ok());
                    if kinds.chat && first.is_some_and(is_conversation) {
                        return Ok(Some((Mode::List { started: false }, false)));
                    }
                    if kinds.colony && first.is_some_and(is_colony_cell) {
                        return Ok(Some((Mode::List { started: false }, true)));
                    }
                }
            }
        }
        Some(b'{') => {}
        _ => return Ok(None),
    }
    // JSON Lines? The first non-blank line is a whole conversation and another line follows,
    // or the first is malformed (not JSON, and not the `[` or `{` alone that opens a
    // pretty-printed document) and the second is a whole conversation.
    src.pos = start;
    let mut lines = Vec::new();
    let mut at = start;
    while lines.len() < 3 {
        src.pos = at;
        if src.byte(at)?.is_none() {
            break;
        }
        let end = src.line_end()?;
        let line = src.buf[at..end].trim_ascii();
        if !line.is_empty() {
            let parsed = std::str::from_utf8(line)
                .ok()
                .and_then(|t| serde_json::from_str::<&RawValue>(t).ok());
            lines.push(match parsed {
                Some(v) if kinds.chat && is_conversation(v) => Line::Conversation,
                Some(v) if kinds.colony && is_colony_cell(v) => Line::ColonyCell,
                Some(_) => Line::Other,
                None if line == b"[" || line == b"{" => Line::Other,
                None => Line::Malformed,
            });
        }
        at = end + 1;
    }
    // Colony cells, one per line: the first non-blank line is one and another line follows.
    Ok(match lines.as_slice() {
        [Line::Conversation, _, ..] | [Line::Malformed, Line::Conversation, ..] => {
            Some((Mode::Lines, false))
        }
        [Line::ColonyCell, _, ..] => Some((Mode::Lines, true)),
        _ => None,
    })
}

/// What a first line of a file is, for [`probe`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Line {
    Conversation,
    /// A Colony cell ([`is_colony_cell`]).
    ColonyCell,
    Malformed,
    Other,
}

/// The reader [`open`] returns: one conversation converted at a time.
struct StreamReader {
    src: Src,
    mode: Mode,
    path: PathBuf,
    /// The next conversation's number (`FILE#n`).
    n: usize,
    /// Line where the last list element started (for a list left open).
    last_line: u64,
    /// The current conversation's events not yet taken.
    pending: std::vec::IntoIter<Event>,
    stats: ReadStats,
    /// List elements are first tried by [`Self::fast_element`] (false only in tests, which
    /// compare the two ways).
    one_pass: bool,
    /// The format was detected, not forced: each conversation is labelled by its messages'
    /// shape (Anthropic Messages, OpenAI Responses or OpenAI chat, `super::dialects`).
    detect_shape: bool,
    /// The label of the first conversation (the reader's [`TraceReader::format`]).
    label: Option<Format>,
    /// A Colony recording's cells are streamed instead of conversations.
    colony: Option<Box<ColonyRun>>,
}

/// The state of a streamed Colony recording (a list or JSON Lines of cells, issue 6 T5-12):
/// one trace, one cell converted at a time.
#[derive(Default)]
struct ColonyRun {
    /// The facts the header takes from the cells, once known: read ahead from the file read
    /// again ([`prescan`]), or learnt from the cells held in `ahead` (standard input).
    facts: Option<colony::HeaderFacts>,
    /// The conversion state after the header (`None` before the first cell).
    state: Option<colony::CellState>,
    /// Cells (and file events) read ahead to learn the facts, not converted yet.
    ahead: std::collections::VecDeque<Result<Unit, Vec<Event>>>,
    /// The invalid UTF-8 warning was given (once per file, as for a file read whole).
    bad_utf8: bool,
    /// The cells are JSON Lines (not a list).
    lines: bool,
}

impl StreamReader {
    /// A reader of `src` (positioned at the first value) in `mode`.
    fn new(path: &Path, src: Src, mode: Mode) -> Self {
        StreamReader {
            src,
            mode,
            path: path.to_path_buf(),
            n: 0,
            last_line: 1,
            pending: Vec::new().into_iter(),
            stats: ReadStats::default(),
            one_pass: true,
            detect_shape: true,
            label: None,
            colony: None,
        }
    }

    /// The next cell of a streamed Colony recording (or the events read ahead with it).
    fn next_colony_item(&mut self) -> std::io::Result<Option<Result<Unit, Vec<Event>>>> {
        if let Some(item) = self.colony.as_mut().and_then(|c| c.ahead.pop_front()) {
            return Ok(Some(item));
        }
        self.next_unit()
    }

    /// Reads cells ahead of `first` (the first cell, not converted yet) until the header facts
    /// are known, keeping them (and the file events met) in the run's `ahead`.
    fn read_ahead(&mut self, run: &mut ColonyRun, first: &Unit) -> colony::HeaderFacts {
        let mut facts = colony::HeaderFacts::default();
        learn(&mut facts, &first.bytes);
        while !facts.complete() {
            match self.next_unit() {
                Ok(Some(Ok(unit))) => {
                    learn(&mut facts, &unit.bytes);
                    run.ahead.push_back(Ok(unit));
                }
                Ok(Some(Err(events))) => run.ahead.push_back(Err(events)),
                Ok(None) => break,
                Err(e) => {
                    self.mode = Mode::Done;
                    let line = self.src.line;
                    let events = self.file_event(
                        true,
                        line,
                        None,
                        format!("cannot read the rest of the trace: {e}"),
                    );
                    run.ahead.push_back(Err(events));
                    break;
                }
            }
        }
        facts
    }

    /// Converts one cell of a streamed Colony recording (after the trace's start and header,
    /// before the first): as the whole-document reader converts the same cell.
    fn colony_cell(&mut self, unit: Unit) -> Vec<Event> {
        let Some(mut run) = self.colony.take() else {
            return Vec::new();
        };
        if run.facts.is_none() {
            run.facts = Some(self.read_ahead(&mut run, &unit));
        }
        let doc::Prepared {
            text,
            warnings,
            nonfinite_at,
        } = doc::prepare(unit.bytes);
        let mut ctx = DocCtx::at_line(&self.path, &text, unit.line);
        for (l, message) in warnings {
            if message == doc::BAD_UTF8 {
                if run.bad_utf8 {
                    continue;
                }
                run.bad_utf8 = true;
            }
            ctx.warn(unit.line + l - 1, message);
        }
        if run.state.is_none() {
            ctx.start_trace(None, Format::Colony);
            let facts = run.facts.clone().unwrap_or_default();
            run.state = Some(colony::CellState::start(
                &mut ctx,
                &facts,
                &serde_json::Map::new(),
                unit.line,
            ));
        }
        let (line, item) = match serde_json::from_str::<&RawValue>(&text) {
            Ok(raw) => (unit.line, Ok(raw)),
            Err(e) => {
                let col = super::nonfinite::original_column(&nonfinite_at, 0, e.column()) as u64;
                match (run.lines, e.line()) {
                    (true, _) => (unit.line, Err(format!("invalid JSON at column {col}"))),
                    (_, 0 | 1) => (
                        unit.line,
                        Err(format!(
                            "invalid JSON at column {}: {}",
                            unit.col + col - 1,
                            super::native::strip_position(&e.to_string())
                        )),
                    ),
                    (_, l) => {
                        let line_start = crate::source::LineIndex::new(&text)
                            .line_start(l - 1)
                            .unwrap_or(0);
                        let col = super::nonfinite::original_column(
                            &nonfinite_at,
                            line_start,
                            e.column(),
                        );
                        (
                            unit.line + l as u64 - 1,
                            Err(format!(
                                "invalid JSON at column {col}: {}",
                                super::native::strip_position(&e.to_string())
                            )),
                        )
                    }
                }
            }
        };
        if let Some(state) = run.state.as_mut() {
            state.cell(&mut ctx, line, item);
        }
        self.stats.add(&ctx.stats);
        let events = ctx.events;
        self.colony = Some(run);
        events
    }
}

/// The format a streamed conversation is labelled with: its messages' shape when the format
/// was detected, else OpenAI chat.
fn conversation_format(detect_shape: bool, text: &str) -> Format {
    if detect_shape {
        super::dialects::document_shape(text).unwrap_or(Format::OpenaiChat)
    } else {
        Format::OpenaiChat
    }
}

/// One conversation's text and where it starts in the file.
struct Unit {
    bytes: Vec<u8>,
    line: u64,
    col: u64,
}

impl StreamReader {
    /// Events about the file rather than a conversation (a list cut short or left open).
    fn file_event(
        &mut self,
        skip: bool,
        line: u64,
        column: Option<u64>,
        message: String,
    ) -> Vec<Event> {
        let s = Skip {
            path: self.path.clone(),
            line,
            column,
            message,
        };
        if skip {
            self.stats.read += 1;
            self.stats.skipped += 1;
            vec![Event::Skipped(s)]
        } else {
            vec![Event::Warning(s)]
        }
    }

    /// The next conversation: its text (`Ok`), or events ready to hand out (`Err`: a conversation
    /// converted as it was read, or the events that end the file); `None` after the last.
    fn next_unit(&mut self) -> std::io::Result<Option<Result<Unit, Vec<Event>>>> {
        self.src.compact();
        match self.mode {
            Mode::Done => Ok(None),
            Mode::Lines => loop {
                if self.src.byte(self.src.pos)?.is_none() {
                    self.mode = Mode::Done;
                    return Ok(None);
                }
                let end = self.src.line_end()?;
                let text = &self.src.buf[self.src.pos..end];
                let lead = text.iter().take_while(|c| c.is_ascii_whitespace()).count();
                let blank = lead == text.len();
                let unit = (!blank).then(|| Unit {
                    bytes: text.trim_ascii_end()[lead..].to_vec(),
                    line: self.src.line,
                    col: self.src.col + lead as u64,
                });
                let len = end - self.src.pos + usize::from(end < self.src.buf.len());
                self.src.advance(len);
                if let Some(u) = unit {
                    return Ok(Some(Ok(u)));
                }
            },
            Mode::List { started } => {
                let complete = self.n;
                if !started {
                    // The `[` (the probe saw it).
                    self.src.skip_ws()?;
                    self.src.advance(1);
                } else {
                    match self.src.skip_ws()? {
                        Some(b',') => self.src.advance(1),
                        Some(b']') => {
                            self.src.advance(1);
                            self.mode = Mode::Done;
                            return Ok(match self.src.skip_ws()? {
                                None => None,
                                Some(_) => {
                                    let (line, col) = (self.src.line, self.src.col);
                                    Some(Err(self.file_event(
                                        false,
                                        line,
                                        Some(col),
                                        "content after the end of the list is ignored".into(),
                                    )))
                                }
                            });
                        }
                        None => return Ok(Some(Err(self.not_closed(complete)))),
                        Some(_) => {
                            let (line, col) = (self.src.line, self.src.col);
                            self.mode = Mode::Done;
                            return Ok(Some(Err(self.file_event(
                                true,
                                line,
                                Some(col),
                                format!("invalid JSON: expected `,` or `]` after a list element; the rest of the file is not read (the {complete} element(s) before are replayed)"),
                            ))));
                        }
                    }
                }
                self.mode = Mode::List { started: true };
                match self.src.skip_ws()? {
                    None => return Ok(Some(Err(self.not_closed(complete)))),
                    Some(b']') => {
                        let (line, col) = (self.src.line, self.src.col);
                        self.mode = Mode::Done;
                        return Ok(Some(Err(self.file_event(
                            true,
                            line,
                            Some(col),
                            "invalid JSON: trailing comma before `]`".into(),
                        ))));
                    }
                    Some(_) => {}
                }
                let (line, col) = (self.src.line, self.src.col);
                self.last_line = line;
                let fast = if self.one_pass {
                    self.fast_element(line)?
                } else {
                    None
                };
                if let Some(events) = fast {
                    return Ok(Some(Err(events)));
                }
                match self.src.value_end()? {
                    Some(end) => {
                        let bytes = self.src.buf[self.src.pos..end].to_vec();
                        self.src.advance(end - self.src.pos);
                        Ok(Some(Ok(Unit { bytes, line, col })))
                    }
                    None => {
                        // Cut short inside this element: the ones before are replayed.
                        let rest = &self.src.buf[self.src.pos..];
                        let why = serde_json::from_slice::<serde::de::IgnoredAny>(rest)
                            .err()
                            .map_or_else(
                                || "EOF".to_string(),
                                |e| super::native::strip_position(&e.to_string()),
                            );
                        self.mode = Mode::Done;
                        Ok(Some(Err(self.file_event(
                            true,
                            line,
                            None,
                            format!("truncated document: the list element starting here is incomplete ({why}); the {complete} complete element(s) before it are replayed"),
                        ))))
                    }
                }
            }
        }
    }

    /// The list element starting at `buf[pos]` (on one-based `line`), converted in the one
    /// pass that also finds its end, when it is a conversation object of the common shape
    /// ([`chat::parse_fast_prefix`]) whose text [`doc::prepare`] would keep as it is: its events
    /// (the element consumed, counted as conversation `n`). `None`, with nothing consumed, for
    /// any other element: [`Self::convert`] then takes it as before, with the same events.
    ///
    /// An element that does not fit in the buffered input is parsed again after one more
    /// [`CHUNK`] is read; a larger one is left to the bracket scan, which reads only as far as
    /// the element goes (the buffer holds about one element, whatever its size).
    fn fast_element(&mut self, line: u64) -> std::io::Result<Option<Vec<Event>>> {
        let mut grown = false;
        loop {
            let start = self.src.pos;
            let (parsed, len) = match chat::parse_fast_prefix(&self.src.buf[start..]) {
                chat::FastPrefix::Parsed(parsed, len) => (parsed, len),
                chat::FastPrefix::Incomplete
                    if !grown && self.src.buf.len() - start < CHUNK && !self.src.eof =>
                {
                    grown = true;
                    self.src.fill()?;
                    continue;
                }
                _ => return Ok(None),
            };
            let bytes = &self.src.buf[start..start + len];
            let Some(text) = std::str::from_utf8(bytes)
                .ok()
                .filter(|t| doc::prepare_keeps(t))
            else {
                return Ok(None);
            };
            let Some(conv) = chat::fast_conversation(parsed, bytes, line) else {
                return Ok(None);
            };
            let n = self.n;
            self.n += 1;
            let mut ctx = DocCtx::at_line(&self.path, text, line);
            let f = conversation_format(self.detect_shape, text);
            self.label.get_or_insert(f);
            ctx.start_trace(Some(n), f);
            chat::emit_fast(&mut ctx, conv, line);
            self.stats.add(&ctx.stats);
            let events = ctx.events;
            self.src.advance(len);
            return Ok(Some(events));
        }
    }

    /// The warning for a list whose input ends without its `]` after `complete` elements.
    fn not_closed(&mut self, complete: usize) -> Vec<Event> {
        self.mode = Mode::Done;
        let line = self.last_line;
        self.file_event(
            false,
            line,
            None,
            format!("truncated document: the list is not closed after the element starting here (no `]` before the end of input); its {complete} complete element(s) are replayed"),
        )
    }

    /// Converts conversation number `n` into its events.
    fn convert(&mut self, n: usize, unit: Unit) -> Vec<Event> {
        let doc::Prepared {
            text,
            warnings,
            nonfinite_at,
        } = doc::prepare(unit.bytes);
        let mut ctx = DocCtx::at_line(&self.path, &text, unit.line);
        for (l, message) in warnings {
            ctx.warn(unit.line + l - 1, message);
        }
        let f = conversation_format(self.detect_shape, &text);
        self.label.get_or_insert(f);
        ctx.start_trace(Some(n), f);
        // The common shape in one pass (its parse validates the JSON); anything else, or
        // invalid JSON, through the validated raw value as before.
        if chat::conversation_fast(&mut ctx, &text, unit.line) {
            self.stats.add(&ctx.stats);
            return ctx.events;
        }
        match serde_json::from_str::<&RawValue>(&text) {
            Ok(raw) => {
                if let Err(e) = chat::conversation_unit(&mut ctx, raw, unit.line) {
                    ctx.skip(unit.line, format!("conversation {n}: {}", e.message));
                }
            }
            Err(e) => {
                // The position in the file: the first line of the unit starts at its column.
                let line_start = if e.line() <= 1 {
                    0
                } else {
                    crate::source::LineIndex::new(&text)
                        .line_start(e.line() - 1)
                        .unwrap_or(0)
                };
                let col =
                    super::nonfinite::original_column(&nonfinite_at, line_start, e.column()) as u64;
                let (line, col) = match e.line() {
                    0 | 1 => (unit.line, unit.col + col - 1),
                    l => (unit.line + l as u64 - 1, col),
                };
                let message = if self.mode == Mode::Lines {
                    format!("conversation {n}: invalid JSON at column {col}")
                } else {
                    format!(
                        "conversation {n}: invalid JSON: {}",
                        super::native::strip_position(&e.to_string())
                    )
                };
                ctx.stats.read += 1;
                ctx.stats.skipped += 1;
                ctx.events.push(Event::Skipped(Skip {
                    path: self.path.clone(),
                    line,
                    column: (self.mode != Mode::Lines).then_some(col),
                    message,
                }));
            }
        }
        self.stats.add(&ctx.stats);
        ctx.events
    }
}

impl Iterator for StreamReader {
    type Item = Event;
    fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(e) = self.pending.next() {
                return Some(e);
            }
            let next = if self.colony.is_some() {
                self.next_colony_item()
            } else {
                self.next_unit()
            };
            let events = match next {
                Ok(Some(Ok(unit))) if self.colony.is_some() => self.colony_cell(unit),
                Ok(Some(Ok(unit))) => {
                    let n = self.n;
                    self.n += 1;
                    self.convert(n, unit)
                }
                Ok(Some(Err(events))) => events,
                Ok(None) => return None,
                Err(e) => {
                    self.mode = Mode::Done;
                    let line = self.src.line;
                    self.file_event(
                        true,
                        line,
                        None,
                        format!("cannot read the rest of the trace: {e}"),
                    )
                }
            };
            self.pending = events.into_iter();
        }
    }
}

impl TraceReader for StreamReader {
    fn stats(&self) -> ReadStats {
        self.stats
    }
    fn format(&self) -> Format {
        if self.colony.is_some() {
            return Format::Colony;
        }
        self.label.unwrap_or(Format::OpenaiChat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::doc::read_document_with;

    /// Every event of `text` read with (`stream`) or without the streaming reader, and the
    /// counters and format, as text.
    fn events(text: &str, stream: bool) -> String {
        match read_document_with(Path::new("c.json"), text.as_bytes().to_vec(), None, stream) {
            Ok(mut r) => {
                let events: Vec<Event> = r.by_ref().collect();
                format!("{events:#?}\n{:?} {:?}", r.stats(), r.format())
            }
            Err(e) => format!("error {e}"),
        }
    }

    fn streamed(text: &str) -> bool {
        let none: Box<dyn Read + Send> = Box::new(std::io::empty());
        matches!(
            open(Path::new("c.json"), none, text.as_bytes().to_vec(), None),
            Ok(Ok(_))
        )
    }

    /// (trace name, line, record kind) of every record, and the skips as `line:col: message`.
    fn summary(text: &str) -> (Vec<(String, u64, String)>, Vec<String>, ReadStats) {
        let mut r = crate::trace::read_str("c.jsonl", text, None).unwrap();
        let (mut recs, mut skips, mut trace) = (Vec::new(), Vec::new(), String::new());
        for e in r.by_ref() {
            match e {
                Event::TraceStart(t) => trace = t.name,
                Event::Record { line, record } => {
                    recs.push((trace.clone(), line, record.kind().to_string()))
                }
                Event::Skipped(s) => skips.push(format!(
                    "{}:{}: {}",
                    s.line,
                    s.column.map_or("-".into(), |c| c.to_string()),
                    s.message
                )),
                Event::Warning(w) => skips.push(format!("warning {}: {}", w.line, w.message)),
            }
        }
        (recs, skips, r.stats())
    }

    /// Issue 6 T4-17: JSON Lines with one conversation per line (a list of messages, or an
    /// object with `messages`) are read as one trace per line; a malformed line is reported
    /// with its line and skipped, and the other lines are replayed.
    #[test]
    fn json_lines_of_conversations() {
        let call = r#"{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "book", "arguments": "{}"}}]}"#;
        let text = format!(
            "[{{\"role\": \"user\", \"content\": \"yes\"}}, {call}]\r\n\n{{\"messages\": [{call}]}}\n[{{\"role\": \"user\"}}, oops]\n  [{call}, {{\"role\": \"tool\", \"tool_call_id\": \"c1\", \"content\": \"Error: no\"}}]\n42\n"
        );
        assert!(streamed(&text));
        let (recs, skips, stats) = summary(&text);
        let calls: Vec<(&str, u64)> = recs
            .iter()
            .filter(|r| r.2 == "call")
            .map(|r| (r.0.as_str(), r.1))
            .collect();
        assert_eq!(
            calls,
            vec![("c.jsonl#0", 1), ("c.jsonl#1", 3), ("c.jsonl#3", 5)]
        );
        assert_eq!(
            skips,
            vec![
                "4:-: conversation 2: invalid JSON at column 20",
                "6:-: conversation 4: a conversation must be a list of messages or an object holding one",
            ]
        );
        // Messages: 2 + 1 + 2 read and accepted; two lines skipped.
        assert_eq!((stats.read, stats.accepted, stats.skipped), (7, 5, 2));
        // The recorded status comes from the result on the same line.
        let mut r = crate::trace::read_str("c.jsonl", &text, None).unwrap();
        let statuses: Vec<CallStatus> = r
            .by_ref()
            .filter_map(|e| match e {
                Event::Record {
                    record: Record::Call(c),
                    ..
                } => Some(c.status),
                _ => None,
            })
            .collect();
        assert_eq!(
            statuses,
            vec![CallStatus::Unknown, CallStatus::Unknown, CallStatus::Error]
        );
        // A malformed first line does not stop the others either.
        let text = format!("[{{\"role\": oops}}]\n{{\"messages\": [{call}]}}\n");
        assert!(streamed(&text));
        let (recs, skips, _) = summary(&text);
        assert_eq!(
            skips,
            vec!["1:-: conversation 0: invalid JSON at column 11"]
        );
        assert!(recs
            .iter()
            .any(|r| r.0 == "c.jsonl#1" && r.1 == 2 && r.2 == "call"));
    }

    /// JSON Lines of conversation objects were read whole before; streamed, they give the
    /// same events. A single line, or lines of messages, are not streamed.
    #[test]
    fn streamed_json_lines_agree_with_the_whole_document_reader() {
        // (The lone surrogate is in the first conversation: the whole-document reader reports
        // such warnings before every trace, the streaming one before its conversation.)
        let text = "{\"messages\": [{\"role\": \"user\", \"content\": \"\\ud800\"}]}\n{\"task_id\": 3, \"traj\": [{\"role\": \"assistant\", \"content\": \"b\", \"tool_calls\": [{\"id\": \"x\", \"function\": {\"name\": \"f\", \"arguments\": \"{\\\"v\\\": NaN}\"}}]}]}\n\n{\"messages\": [{\"role\": \"user\", \"content\": \"b\"}]}\n";
        assert!(streamed(text));
        assert_eq!(events(text, true), events(text, false));
        for single in [
            "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}]}\n",
            "{\"role\": \"user\", \"content\": \"a\"}\n{\"role\": \"user\", \"content\": \"b\"}\n",
            "[{\"role\": \"user\", \"content\": \"a\"}]\n",
            "[\n{\"role\": \"user\", \"content\": \"a\"}\n]\n",
            "[]",
            "{\n\"messages\": []\n}\n{\"messages\": []}\n",
        ] {
            assert!(!streamed(single), "{single}");
        }
    }

    /// Issue 6 T4-16: a list of conversations is streamed element by element; the events are
    /// those of the whole-document reader, with the file's lines.
    #[test]
    fn streamed_list_agrees_with_the_whole_document_reader() {
        let tau = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/replay/issue6/r13-truncated-list/trace.json"
        ))
        .unwrap();
        let tau = format!("{}\n]\n", tau.trim_end().trim_end_matches(','));
        for text in [
            tau.as_str(),
            "[[{\"role\": \"user\", \"content\": \"a\"}], {\"messages\": [{\"role\": \"user\", \"content\": \"Infinity\", \"x\": -Infinity}]}, 7, {\"info\": {}}]",
            "\u{feff} [ {\"traj\": [{\"role\": \"user\", \"content\": \"\\udc00\"}]} ,\r\n{\"traj\": []} ] \n",
        ] {
            let whole = events(text, false);
            if whole.starts_with("error") {
                continue;
            }
            assert!(streamed(text), "{text}");
            assert_eq!(events(text, true), whole, "{text}");
        }
    }

    /// An element that is not valid JSON is skipped with its position; broken structure stops
    /// the reading with its position; the elements before are replayed.
    #[test]
    fn malformed_list_elements_are_located_and_skipped() {
        let conv = "{\"traj\": [{\"role\": \"user\", \"content\": \"a\"}]}";
        let text = format!("[\n  {conv},\n  {{\"traj\": [{{\"role\": tru}}]}},\n  {conv}\n] x\n");
        let (recs, skips, _) = summary(&text);
        let traces: Vec<&str> = recs.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            traces,
            vec!["c.jsonl#0", "c.jsonl#0", "c.jsonl#2", "c.jsonl#2"]
        );
        assert_eq!(
            skips,
            vec![
                "3:25: conversation 1: invalid JSON: expected ident",
                "warning 5: content after the end of the list is ignored",
            ]
        );
        let (_, skips, _) = summary(&format!("[{conv} {conv}]"));
        assert_eq!(skips, vec!["1:47: invalid JSON: expected `,` or `]` after a list element; the rest of the file is not read (the 1 element(s) before are replayed)"]);
        let (_, skips, _) = summary(&format!("[{conv},\n]"));
        assert_eq!(skips, vec!["2:1: invalid JSON: trailing comma before `]`"]);
        // Cut short inside the second element, or after it.
        let (recs, skips, _) = summary(&format!("[{conv},\n{conv}"));
        assert_eq!(recs.len(), 4);
        assert_eq!(skips, vec!["warning 2: truncated document: the list is not closed after the element starting here (no `]` before the end of input); its 2 complete element(s) are replayed"]);
        let (recs, skips, _) = summary(&format!("[{conv},\n{}", &conv[..20]));
        assert_eq!(recs.len(), 2);
        assert_eq!(skips, vec!["2:-: truncated document: the list element starting here is incomplete (EOF while parsing a string); the 1 complete element(s) before it are replayed"]);
        // Nesting deeper than serde_json's limit inside one element: that element only.
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let (recs, skips, _) = summary(&format!(
            "[{conv}, {{\"traj\": [{{\"role\": \"user\", \"x\": {deep}}}]}}, {conv}]"
        ));
        // The deep conversation is still a trace (its header); only its message is skipped.
        let kinds: Vec<(&str, &str)> = recs.iter().map(|r| (r.0.as_str(), r.2.as_str())).collect();
        assert_eq!(
            kinds,
            vec![
                ("c.jsonl#0", "header"),
                ("c.jsonl#0", "message"),
                ("c.jsonl#1", "header"),
                ("c.jsonl#2", "header"),
                ("c.jsonl#2", "message"),
            ],
            "{skips:?}"
        );
        assert_eq!(skips.len(), 1, "{skips:?}");
        assert!(skips[0].starts_with("1:"), "{skips:?}");
    }

    /// Every event of the list `text` streamed with the first `head` bytes in memory and the
    /// rest read from the input (so the buffer ends, once, after `head` bytes), list elements
    /// taken in one pass (`one_pass`) or found by the bracket scan first.
    fn streamed_events(text: &[u8], head: usize, one_pass: bool) -> String {
        let input: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(text[head..].to_vec()));
        let src = Src {
            input,
            buf: text[..head].to_vec(),
            pos: 0,
            eof: false,
            keep: true,
            line: 1,
            col: 1,
        };
        let Ok(Ok(mut r)) = open_stream(Path::new("c.json"), src) else {
            panic!("not streamed: {}", String::from_utf8_lossy(text));
        };
        r.one_pass = one_pass;
        let events: Vec<Event> = r.by_ref().collect();
        format!("{events:#?}\n{:?}", r.stats())
    }

    /// List elements read in one pass (their end found by the parse that reads them) give the
    /// events of the bracket scan's way, wherever the buffered input ends: brackets, quotes
    /// and escapes in strings at element boundaries, whitespace and line breaks between and
    /// inside elements, texts [`doc::prepare`] changes (surrogate escapes, `NaN`, invalid
    /// UTF-8, a reserved character), other shapes, an invalid element in the middle (skipped
    /// at its line:column) and a last element cut short.
    #[test]
    fn one_pass_elements_agree_with_the_bracket_scan() {
        let call = r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "c]1", "type": "function", "function": {"name": "book", "arguments": "{\"x\": [1, {\"y\": \"]}\"}]}"}}]}"#;
        let elements: Vec<Vec<u8>> = vec![
            br#"{"traj": [{"role": "user", "content": "a ] } , [ { \" \\"}]}"#.to_vec(),
            format!("{{ \"task_id\" : 1 ,\n  \"traj\" :\r\n [ {call} ,\n{{\"role\": \"tool\", \"tool_call_id\": \"c]1\", \"content\": \"Error: ]\"}} ] , \"info\": {{\"a\": [\"}}\"]}} }}").into_bytes(),
            br#"{"messages": [{"role": "user", "content": "NaN is text \u00e9"}], "reward": 1.0}"#.to_vec(),
            br#"{"traj": [{"role": "user", "content": "\ud83d\ude00 pair, \ud800 lone"}]}"#.to_vec(),
            "{\"traj\": [{\"role\": \"user\", \"content\": \"\u{10F000}\"}]}".as_bytes().to_vec(),
            b"{\"traj\": [{\"role\": \"user\", \"content\": \"bad \xff byte\"}]}".to_vec(),
            br#"{"traj": [{"role": "user", "content": "x", "n": NaN}]}"#.to_vec(),
            br#"[{"role": "user", "content": "a list"}]"#.to_vec(),
            br#"{"traj": [{"role": "assistant", "function_call": {"name": "f", "arguments": "{}"}}]}"#.to_vec(),
            br#"{"traj": [{"role": tru}]}"#.to_vec(),
            br#"{"traj": [{"role": "user", "content": "a"}], "traj": []}"#.to_vec(),
            br#"{"conversation": [{"role": "user", "content": "\"quoted\" \\ back"}]}"#.to_vec(),
        ];
        let mut text = b"[\n".to_vec();
        for (i, e) in elements.iter().enumerate() {
            if i > 0 {
                text.extend_from_slice(if i % 2 == 0 { b",\n  " } else { b" ,\r\n" });
            }
            text.extend_from_slice(e);
        }
        let whole = [text.clone(), b"\n]\n".to_vec()].concat();
        let cut = [&text[..], b",\n", &elements[0][..20]].concat();
        for doc in [&whole, &cut] {
            let want = streamed_events(doc, doc.len(), false);
            // The invalid element is skipped at its position, the others replayed.
            assert!(
                want.contains("conversation 9: invalid JSON: expected ident"),
                "{want}"
            );
            assert_eq!(want.matches("TraceStart").count(), 12, "{want}");
            for head in (elements[0].len()..doc.len()).step_by(7).chain([doc.len()]) {
                assert_eq!(
                    streamed_events(doc, head, true),
                    want,
                    "buffer end at {head}"
                );
            }
        }
        assert!(streamed_events(&cut, cut.len(), true)
            .contains("the list element starting here is incomplete"));
        // Elements larger than the bytes read at a time, around ones that are not.
        let big = |n: usize| {
            format!(
                "{{\"traj\": [{{\"role\": \"user\", \"content\": \"{}]\\\"\"}}]}}",
                "x".repeat(n)
            )
        };
        let text = format!(
            "[{}, {}, {}, {}]",
            big(10),
            big(CHUNK - 100),
            big(3 * CHUNK),
            big(CHUNK / 2)
        );
        let want = streamed_events(text.as_bytes(), 100, false);
        assert_eq!(want.matches("TraceStart").count(), 4);
        assert!(!want.contains("Skipped"));
        assert_eq!(streamed_events(text.as_bytes(), 100, true), want);
    }

    /// A reader over a list of conversations takes input as it goes: after the first
    /// conversation's events, only a bounded part of a large input has been read.
    #[test]
    fn list_is_read_as_it_goes() {
        struct Counting(
            std::io::Cursor<Vec<u8>>,
            std::sync::Arc<std::sync::atomic::AtomicUsize>,
        );
        impl Read for Counting {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.read(buf)?;
                self.1.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                Ok(n)
            }
        }
        let conv = format!(
            "{{\"traj\": [{{\"role\": \"user\", \"content\": \"{}\"}}]}}",
            "x".repeat(1000)
        );
        let text = format!("[{}]", vec![conv; 20_000].join(",\n"));
        assert!(text.len() > 20_000_000);
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let input = Counting(std::io::Cursor::new(text.into_bytes()), count.clone());
        let mut r = crate::trace::open_reader(Path::new("big.json"), input, None, 0).unwrap();
        let first: Vec<Event> = r.by_ref().take(4).collect();
        assert!(matches!(&first[0], Event::TraceStart(t) if t.name == "big.json#0"));
        let read = count.load(std::sync::atomic::Ordering::Relaxed);
        assert!(read < 2 * 1024 * 1024, "{read}");
        // The first conversation has three events (start, header, message): the fourth
        // started the second.
        assert_eq!(
            r.by_ref()
                .filter(|e| matches!(e, Event::TraceStart(_)))
                .count(),
            19_998
        );
        assert_eq!(r.stats().read, 20_000);
    }

    /// The events and counts of a Colony document read whole (`stream` false) or streamed.
    fn colony_events(name: &str, bytes: &[u8], stream: bool) -> String {
        let path = Path::new(name);
        match read_document_with(path, bytes.to_vec(), None, stream) {
            Ok(mut r) => {
                let events: Vec<Event> = r.by_ref().collect();
                format!("{events:#?}\n{:?} {:?}", r.stats(), r.format())
            }
            Err(e) => format!("error {e}"),
        }
    }

    fn colony_streamed(bytes: &[u8]) -> bool {
        let none: Box<dyn Read + Send> = Box::new(std::io::empty());
        matches!(
            open_streamed(Path::new("c.json"), none, bytes.to_vec(), None, None),
            Ok(Ok(r)) if r.colony.is_some()
        )
    }

    /// A codegen iteration with `calls` run-call-trace entries.
    fn iteration(step: usize, calls: usize, extra: &str) -> String {
        let entries: Vec<String> = (0..calls)
            .map(|j| format!("{{\"call_index\": {j}, \"action_key\": \"S.S.get_{j}\", \"parameters\": {{\"record_id\": {step}}}, \"success\": true, \"error\": null, \"output_preview\": \"ok\", \"blocked\": false}}"))
            .collect();
        format!(
            "{{\"step_index\": {step}, \"generated_code\": \"await run(\\\"get_0\\\")\", \"success\": true, \"error\": null{extra}, \"run_call_trace\": [{}]}}",
            entries.join(", ")
        )
    }

    /// Issue 6 T5-12: a Colony list or JSON Lines of cells streamed cell by cell gives the
    /// events (records, lines, skips, warnings, header) and counts of the whole-document reader:
    /// every Colony fixture, and edge cases (no date on the first cell, `agent_id` on a later
    /// one, `NaN`, lone surrogates, invalid UTF-8 in two cells, a malformed line, CRLF).
    #[test]
    fn streamed_colony_agrees_with_the_whole_document_reader() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/replay");
        let mut files = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from(root)];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("trace."))
                {
                    files.push(p);
                }
            }
        }
        files.sort();
        let mut compared = 0;
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            if !colony_streamed(&bytes) {
                continue;
            }
            compared += 1;
            let name = f.display().to_string();
            assert_eq!(
                colony_events(&name, &bytes, true),
                colony_events(&name, &bytes, false),
                "{name}"
            );
        }
        assert!(compared >= 12, "{compared}");
        let cases: Vec<Vec<u8>> = vec![
            format!("[{}, {}]", iteration(0, 2, ""), iteration(1, 1, ", \"start_wall\": 1781481600.0, \"agent_id\": \"agent-9\"")).into_bytes(),
            format!("[{}, {}, {}]", iteration(0, 2, ", \"start_wall\": 1781481600.0"), iteration(1, 1, ", \"agent\\u005fid\": \"agent-8\""), iteration(2, 1, ", \"agent_id\": \"agent-9\"")).into_bytes(),
            format!("[\r\n {},\r\n {} ,\n{}\n]\n", iteration(0, 1, ", \"start_wall\": 1.7814816e12"), iteration(1, 1, ", \"x\": NaN"), iteration(2, 0, ", \"agent_id\": 7")).into_bytes(),
            format!("{}\n{}\n\n{}\n", iteration(0, 1, ", \"note\": \"\\ud800\""), iteration(1, 1, ", \"y\": -Infinity"), iteration(2, 2, "")).into_bytes(),
            format!("{}\n{{\"step_index\": oops}}\n{}\n", iteration(0, 1, ""), iteration(2, 1, ", \"agent_id\": \"a\"")).into_bytes(),
            // (A first cell that is not UTF-8 is read whole.)
            format!("{}\n{}\n{}\n", iteration(0, 1, ""), iteration(1, 1, ", \"n\": \"@\""), iteration(2, 1, ", \"m\": \"@\""))
                .bytes()
                .map(|b| if b == b'@' { 0xff } else { b })
                .collect(),
            format!("\u{feff}[{}]", iteration(0, 3, ", \"child_action_spans\": [{\"start_wall\": 1781481601.0}, {\"start_wall\": 1781481600.5}]")).into_bytes(),
        ];
        for (i, text) in cases.iter().enumerate() {
            assert!(colony_streamed(text), "case {i}");
            let whole = colony_events("c.json", text, false);
            assert!(!whole.starts_with("error"), "case {i}: {whole}");
            let streamed = colony_events("c.json", text, true);
            if whole.contains("invalid UTF-8") {
                // The one difference: a warning about a later cell's text (here invalid UTF-8,
                // given once per file either way) comes with that cell, not before the trace.
                let warning = "    Warning(\n        Skip {\n            path: \"c.json\",\n            line: 2,\n            column: None,\n            message: \"invalid UTF-8 replaced by U+FFFD\",\n        },\n    ),\n";
                assert_eq!(whole.matches(warning).count(), 1, "{whole}");
                assert_eq!(streamed.matches(warning).count(), 1, "{streamed}");
                assert_eq!(streamed.replace(warning, ""), whole.replace(warning, ""));
                continue;
            }
            assert_eq!(streamed, whole, "case {i}");
        }
    }

    /// Issue 6 T5-12: a Colony recording in a file is read one cell at a time: however many
    /// cells, the reader's buffer stays within a few chunks, no cell is held ahead (the header's
    /// facts are read ahead from the file read again), and the events not yet taken are one
    /// cell's. On standard input, cells are held ahead only until the facts are known.
    #[test]
    fn colony_file_is_read_one_cell_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let cells = 4000;
        let mut text = String::from("[\n");
        for c in 0..cells {
            if c > 0 {
                text.push_str(",\n");
            }
            text.push_str(&iteration(c, 10, ", \"start_wall\": 1781481600.0"));
        }
        text.push_str("\n]\n");
        assert!(text.len() > 5 * 1024 * 1024, "{}", text.len());
        std::fs::write(&path, &text).unwrap();
        // (peak buffer capacity, most cells held ahead, most events pending, calls, records read)
        let measure = |reopen: bool, input: Box<dyn Read + Send>| {
            let Ok(Ok(mut r)) = open_streamed(
                &path,
                input,
                Vec::new(),
                None,
                reopen.then_some(path.as_path()),
            ) else {
                panic!("not streamed");
            };
            let (mut buf, mut ahead, mut pending, mut calls) = (0, 0, 0, 0);
            while let Some(e) = r.next() {
                buf = buf.max(r.src.buf.capacity());
                ahead = ahead.max(r.colony.as_ref().map_or(0, |c| c.ahead.len()));
                pending = pending.max(r.pending.len());
                calls += usize::from(matches!(
                    e,
                    Event::Record {
                        record: Record::Call(_),
                        ..
                    }
                ));
            }
            (buf, ahead, pending, calls, r.stats().read)
        };
        let file = || Box::new(std::fs::File::open(&path).unwrap()) as Box<dyn Read + Send>;
        let (buf, ahead, pending, calls, read) = measure(true, file());
        assert!(buf <= 4 * CHUNK, "{buf}");
        assert_eq!(ahead, 0);
        // A cell's record and its ten calls (plus the trace start and header before the first).
        assert!(pending <= 13, "{pending}");
        assert_eq!((calls, read), (10 * cells, 11 * cells as u64));
        // Standard input (cannot be read again) without an `agent_id`: every cell is held
        // ahead to learn that there is none (the whole-document reader's memory, no worse).
        let (_, ahead, _, calls, _) = measure(false, file());
        assert_eq!((ahead, calls), (cells - 1, 10 * cells));
        // ... and with one on the first cell, none is.
        let first = iteration(0, 10, ", \"start_wall\": 1781481600.0");
        let with_agent = iteration(0, 10, ", \"start_wall\": 1781481600.0, \"agent_id\": \"a\"");
        std::fs::write(&path, text.replacen(&first, &with_agent, 1)).unwrap();
        let (buf, ahead, _, calls, _) = measure(false, file());
        assert_eq!((ahead, calls), (0, 10 * cells));
        assert!(buf <= 4 * CHUNK, "{buf}");
    }
}
