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
//! Native JSON Lines are streamed line by line (memory independent of the file size). The other
//! formats are single JSON documents; they are read whole, then streamed as events.

pub mod chat;
pub mod colony;
pub mod convert;
mod doc;
pub mod flat;
pub mod model;
pub mod native;
pub mod pyagentic;
pub mod runstate;
pub mod sweagent;

pub use model::*;

use std::io::{BufRead, BufReader, Read};
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

/// Bytes looked at to detect the format.
const HEAD: usize = 64 * 1024;

/// Opens a trace file (`-` reads standard input), detecting the format unless `format` is
/// given.
///
/// Errors: the file cannot be opened or read; the format cannot be detected; a JSON document
/// that is not valid JSON (with line:column) or has no recognisable shape.
pub fn open(path: &Path, format: Option<Format>) -> Result<BoxedReader, TraceError> {
    let read_err = |e: std::io::Error| TraceError::plain(path, format!("cannot read trace: {e}"));
    if path.as_os_str() == "-" {
        let mut input = BufReader::with_capacity(256 * 1024, std::io::stdin());
        let native = match format {
            Some(f) => f == Format::Native,
            None => {
                let head = input.fill_buf().map_err(read_err)?;
                let head = &head[..head.len().min(HEAD)];
                detect(head).map_err(|m| TraceError::plain(path, m))? == Some(Format::Native)
            }
        };
        if native {
            return Ok(Box::new(native::NativeReader::new(input, path)));
        }
        let mut bytes = Vec::new();
        input.read_to_end(&mut bytes).map_err(read_err)?;
        return doc::read_document(path, bytes, format);
    }
    let mut file = std::fs::File::open(path)
        .map_err(|e| TraceError::plain(path, format!("cannot open trace: {e}")))?;
    // The first bytes are read into the buffer that will hold a whole document, so a document
    // is read once, without an intermediate buffer.
    let mut bytes = Vec::with_capacity(HEAD);
    if format.is_none() {
        Read::by_ref(&mut file)
            .take(HEAD as u64)
            .read_to_end(&mut bytes)
            .map_err(read_err)?;
    }
    let native = match format {
        Some(f) => f == Format::Native,
        None => detect(&bytes).map_err(|m| TraceError::plain(path, m))? == Some(Format::Native),
    };
    if native {
        let input = std::io::Cursor::new(bytes).chain(file);
        return Ok(Box::new(native::NativeReader::new(
            BufReader::with_capacity(256 * 1024, input),
            path,
        )));
    }
    // Sized from the file's length up front: growing a multi-megabyte buffer by doubling costs
    // copies and page faults.
    let size = file.metadata().map_or(0, |m| m.len() as usize);
    bytes.reserve(
        size.saturating_add(1)
            .min(1 << 30)
            .saturating_sub(bytes.len()),
    );
    file.read_to_end(&mut bytes).map_err(read_err)?;
    doc::read_document(path, bytes, format)
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

/// Looks at the first bytes of a file: `Some(Format::Native)` when the first non-blank line is
/// a JSON object with a `rec` key (native JSON Lines, streamed), or when there is no content at
/// all (an empty trace); `None` for anything else that starts like JSON (a JSON document, or
/// JSON Lines of chat or pyAgentic messages, classified by [`doc::read_document`] once read).
///
/// Errors: input that does not start like JSON.
pub fn detect(head: &[u8]) -> Result<Option<Format>, String> {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        // An empty (or blank) file: one trace without records, read as native JSON Lines.
        return Ok(Some(Format::Native));
    }
    if trimmed.starts_with('{') {
        if let Some(first) = trimmed.lines().next() {
            if let Ok(serde_json::Value::Object(o)) =
                serde_json::from_str::<serde_json::Value>(first)
            {
                if o.contains_key("rec") {
                    return Ok(Some(Format::Native));
                }
            }
        }
    }
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return Ok(None);
    }
    Err("not a trace: expected JSON Lines (native cellguard-trace) or a JSON document".into())
}
