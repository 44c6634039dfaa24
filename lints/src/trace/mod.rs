//! Traces: the model ([`model`]), one reader per input format, and format detection.
//!
//! ```no_run
//! use cellguard_lints::trace::{self, Event};
//! let mut reader = trace::open(std::path::Path::new("run.jsonl"), None).unwrap();
//! for event in reader.by_ref() {
//!     match event {
//!         Event::TraceStart(info) => println!("trace {}", info.name),
//!         Event::Record { line, record } => println!("{line}: {}", record.kind()),
//!         Event::Skipped(skip) => eprintln!("{skip}"),
//!         Event::Warning(w) => eprintln!("warning: {w}"),
//!     }
//! }
//! let stats = reader.stats();
//! assert_eq!(stats.read, stats.accepted + stats.skipped);
//! ```
//!
//! Native JSON Lines are streamed line by line (memory independent of the file size), and so are
//! chat files holding many conversations ([`stream`]: a list of conversations element by
//! element, JSON Lines of conversations line by line). The other formats are single JSON
//! documents; they are read whole, then streamed as events.

pub mod chat;
pub mod colony;
pub mod convert;
mod detect;
mod dialects;
mod doc;
pub mod flat;
pub mod model;
pub mod native;
pub mod nonfinite;
pub mod pyagentic;
pub mod runstate;
mod stream;
pub mod surrogates;
pub mod sweagent;

/// Parses trace-supplied JSON text as Python's `json` does, nesting up to
/// [`doc::MAX_DEPTH`] levels (serde_json alone stops at 128; issue 6 T9).
pub(crate) use doc::value as json_value;

pub use detect::{detect, DETECT_BYTES, DETECT_LINES};
pub use model::*;

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// A trace input that cannot be read at all (as opposed to a malformed record, which is
/// skipped). The CLI exits with code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), .line.map(|l| format!(":{l}{}", .column.map(|c| format!(":{c}")).unwrap_or_default())).unwrap_or_default())]
pub struct TraceError {
    /// The input file.
    pub path: PathBuf,
    /// One-based line, when known.
    pub line: Option<u64>,
    /// One-based column, when known.
    pub column: Option<u64>,
    /// What is wrong.
    pub message: String,
}

impl TraceError {
    /// An error without a position.
    pub fn plain(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            line: None,
            column: None,
            message: message.into(),
        }
    }
}

/// A boxed reader, as [`open`] returns it.
pub type BoxedReader = Box<dyn TraceReader + Send>;

/// Opens a trace file (`-` reads standard input), detecting the format unless `format` is
/// given. Detection reads the first non-blank lines whole ([`detect`]); the bytes it reads are
/// kept and read again by the reader, so nothing is read twice from the input.
///
/// Errors: the file cannot be opened or read; the format cannot be detected; a JSON document
/// that is not valid JSON (with line:column) or has no recognisable shape.
pub fn open(path: &Path, format: Option<Format>) -> Result<BoxedReader, TraceError> {
    if path.as_os_str() == "-" {
        return open_reader(path, std::io::stdin(), format, 0);
    }
    let file = std::fs::File::open(path)
        .map_err(|e| TraceError::plain(path, format!("cannot open trace: {e}")))?;
    // Sized from the file's length up front: growing a multi-megabyte document buffer by
    // doubling costs copies and page faults.
    let size = file.metadata().map_or(0, |m| m.len() as usize);
    open_reader(path, file, format, size)
}

/// [`open`] on any input; `size` (bytes, 0 when unknown) sizes the buffer of a document.
fn open_reader<R: Read + Send + 'static>(
    path: &Path,
    input: R,
    format: Option<Format>,
    size: usize,
) -> Result<BoxedReader, TraceError> {
    open_reader_with(path, input, format, size, native::MAX_LINE_BYTES)
}

/// [`open_reader`] with another native line limit (`max_line` bytes, also the detection
/// budget; tests use small ones).
fn open_reader_with<R: Read + Send + 'static>(
    path: &Path,
    mut input: R,
    format: Option<Format>,
    size: usize,
    max_line: usize,
) -> Result<BoxedReader, TraceError> {
    let read_err = |e: std::io::Error| TraceError::plain(path, format!("cannot read trace: {e}"));
    // The first lines are read into the buffer that will hold a whole document, so a document
    // is read once, without an intermediate buffer.
    let mut bytes = Vec::with_capacity(64 * 1024);
    // Formats read whole: sniffing their first lines adds no wait. (Native and chat input is
    // streamed, a live pipe record by record; a wrong forced format there reads no record at
    // all, which is reported as such.)
    let read_whole = |f: Format| {
        matches!(
            f,
            Format::Colony | Format::Pyagentic | Format::SweAgent | Format::AgentsRunstate
        )
    };
    if let (Some(forced), true) = (format, path.as_os_str() == "-") {
        if !read_whole(forced) {
            return open_read(path, input, Some(forced), size, max_line, bytes);
        }
        // Standard input cannot be opened again to check a forced format against the content
        // (as a file is, issue 6 T6-8): detect it now, on the bytes the reader reads first
        // anyway.
        let detected = detect::sniff_capped(&mut input, &mut bytes, max_line)
            .map_err(read_err)?
            .ok()
            .flatten();
        let inner = open_read(path, input, Some(forced), size, max_line, bytes)?;
        return Ok(Box::new(Sniffed { inner, detected }));
    }
    let format = match format {
        Some(f) => Some(f),
        None => detect::sniff_capped(&mut input, &mut bytes, max_line)
            .map_err(read_err)?
            .map_err(|m| TraceError::plain(path, m))?
            .filter(|f| *f == Format::Native),
    };
    open_read(path, input, format, size, max_line, bytes)
}

/// The reader of `format` (`None`: a JSON document whose shape decides) over `bytes`
/// (the first bytes, already read) followed by the rest of `input`.
fn open_read<R: Read + Send + 'static>(
    path: &Path,
    input: R,
    format: Option<Format>,
    size: usize,
    max_line: usize,
    bytes: Vec<u8>,
) -> Result<BoxedReader, TraceError> {
    let read_err = |e: std::io::Error| TraceError::plain(path, format!("cannot read trace: {e}"));
    if format == Some(Format::Native) {
        // The detected bytes are read first, from their own buffer (never copied again).
        return Ok(Box::new(
            native::NativeReader::new(BufReader::with_capacity(256 * 1024, input), path)
                .with_max_line(max_line)
                .with_prefix(bytes),
        ));
    }
    // Many chat conversations in one file are streamed one at a time; anything else is read
    // whole (with the bytes the probe read).
    // A file [`open`] opened (not standard input; its size is known) can be read again: a
    // streamed Colony recording reads its cells ahead for its header instead of holding them.
    let reopen = (path.as_os_str() != "-" && size > 0).then_some(path);
    let (mut bytes, mut input) =
        match stream::open_with(path, Box::new(input), bytes, format, reopen)? {
            Ok(reader) => return Ok(reader),
            Err(back) => back,
        };
    bytes.reserve(
        size.saturating_add(1)
            .min(1 << 30)
            .saturating_sub(bytes.len()),
    );
    input.read_to_end(&mut bytes).map_err(read_err)?;
    doc::read_document_with(path, bytes, format, false)
}

/// A reader over standard input with a forced format, remembering the format its content was
/// detected as ([`TraceReader::detected`]).
struct Sniffed {
    inner: BoxedReader,
    detected: Option<Format>,
}

impl Iterator for Sniffed {
    type Item = Event;
    fn next(&mut self) -> Option<Event> {
        self.inner.next()
    }
}

impl TraceReader for Sniffed {
    fn stats(&self) -> ReadStats {
        self.inner.stats()
    }
    fn format(&self) -> Format {
        self.inner.format()
    }
    fn detected(&self) -> Option<Format> {
        self.detected
    }
}

/// Reads a trace from text (for tests and embedding); `name` plays the file path.
///
/// Errors: as [`open`].
pub fn read_str(name: &str, text: &str, format: Option<Format>) -> Result<BoxedReader, TraceError> {
    let path = Path::new(name);
    let native = match format {
        Some(f) => f == Format::Native,
        None => {
            detect(text.as_bytes()).map_err(|m| TraceError::plain(path, m))? == Some(Format::Native)
        }
    };
    if native {
        let cursor = std::io::Cursor::new(text.as_bytes().to_vec());
        return Ok(Box::new(native::NativeReader::new(cursor, name)));
    }
    doc::read_document(path, text.as_bytes().to_vec(), format)
}
