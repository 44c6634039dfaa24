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
pub mod nonfinite;
pub mod pyagentic;
pub mod runstate;
pub mod surrogates;
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

/// Lines looked at to detect native JSON Lines past a malformed first line.
const DETECT_LINES: usize = 8;

/// True when `line` starts a JSON object with a top-level `rec` key, judged from the object's
/// text up to that key: the rest may be missing (a line longer than the bytes looked at), or
/// malformed (a truncated record, a lone surrogate escape).
fn starts_native_record(line: &str) -> bool {
    let b = line.trim_start().as_bytes();
    if b.first() != Some(&b'{') {
        return false;
    }
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return false;
                }
            }
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                let Some(key) = b.get(start..i) else {
                    return false;
                };
                if depth == 1 {
                    let mut j = i + 1;
                    while b.get(j).is_some_and(u8::is_ascii_whitespace) {
                        j += 1;
                    }
                    if b.get(j) == Some(&b':') && key == b"rec" {
                        return true;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// Looks at the first bytes of a file: `Some(Format::Native)` when the first non-blank line is
/// a JSON object with a `rec` key (native JSON Lines, streamed), or when there is no content at
/// all (an empty trace); `None` for anything else that starts like JSON (a JSON document, or
/// JSON Lines of chat or pyAgentic messages, classified by [`doc::read_document`] once read).
///
/// The first line need not be complete or well-formed (issue 6 R1): a record longer than the
/// bytes looked at counts by its top-level `rec` key, and when the first line is no native
/// record (malformed, truncated, or an object without `rec`) but does not start a JSON array,
/// the first [`DETECT_LINES`] non-blank lines are weighed: the file is native when some start a
/// native record and they are at least as many as the well-formed JSON objects that do not
/// (the bad first line is then reported and skipped like any other), so one chat message with
/// a stray top-level `rec` key leaves a chat file a chat file.
///
/// Errors: input that does not start like JSON and holds no native record in its first lines.
pub fn detect(head: &[u8]) -> Result<Option<Format>, String> {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        // An empty (or blank) file: one trace without records, read as native JSON Lines.
        return Ok(Some(Format::Native));
    }
    let mut lines = trimmed.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("");
    if first.trim_start().starts_with('{') {
        match serde_json::from_str::<serde_json::Value>(first) {
            Ok(serde_json::Value::Object(o)) if o.contains_key("rec") => {
                return Ok(Some(Format::Native))
            }
            Ok(_) => {}
            Err(_) if starts_native_record(first) => return Ok(Some(Format::Native)),
            Err(_) => {}
        }
    }
    if !first.trim_start().starts_with('[') {
        // Weigh the sampled lines: a stray top-level `rec` key in one chat message does not make
        // a chat file native (re-test of R1); lines that are neither count for neither side.
        let sample: Vec<&str> = std::iter::once(first)
            .chain(lines.take(DETECT_LINES - 1))
            .collect();
        let native = sample.iter().filter(|l| starts_native_record(l)).count();
        let other_objects = sample
            .iter()
            .filter(|l| {
                !starts_native_record(l)
                    && matches!(
                        serde_json::from_str::<serde_json::Value>(l),
                        Ok(serde_json::Value::Object(_))
                    )
            })
            .count();
        if native > 0 && native >= other_objects {
            return Ok(Some(Format::Native));
        }
    }
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return Ok(None);
    }
    Err("not a trace: expected JSON Lines (native cellguard-trace) or a JSON document".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 6 R1: detection does not depend on a short or well-formed first line.
    #[test]
    fn native_detected_past_long_or_malformed_first_lines() {
        let call = "{\"rec\":\"call\",\"raw_key\":\"a.b\",\"status\":\"ok\"}\n";
        // A first record longer than the bytes looked at (only its start is seen).
        let long = format!(
            "{{\"rec\":\"header\",\"system_prompt\":\"{}\"}}\n{call}",
            "x".repeat(HEAD + 10)
        );
        assert_eq!(detect(&long.as_bytes()[..HEAD]), Ok(Some(Format::Native)));
        let long_params = format!(
            "{{\"params\":{{\"rec\":1,\"s\":\"{}\"}},\"rec\":\"call\"",
            "y".repeat(100)
        );
        assert_eq!(detect(long_params.as_bytes()), Ok(Some(Format::Native)));
        for first in [
            "{\"foo\":1}",
            "{\"rec\":\"call\",\"raw_key\":\"a.b",
            "garbage line",
            "{\"rec\":\"call\",\"params\":{\"x\":\"\\ud800\"}}",
        ] {
            let text = format!("{first}\n{call}");
            assert_eq!(detect(text.as_bytes()), Ok(Some(Format::Native)), "{first}");
        }
        // Documents and chat JSON Lines are still documents.
        let chat =
            "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"x\"}\n";
        assert_eq!(detect(chat.as_bytes()), Ok(None));
        // One chat message with a stray top-level `rec` key among several (R1 re-test).
        let stray = "{\"role\":\"system\",\"content\":\"s\"}\n{\"role\":\"user\",\"content\":\"x\",\"rec\":\"call\"}\n{\"role\":\"assistant\",\"content\":\"y\"}\n";
        assert_eq!(detect(stray.as_bytes()), Ok(None));
        let list = format!("[\n{call},\n{call}]\n");
        assert_eq!(detect(list.as_bytes()), Ok(None));
        let pretty = "{\n  \"format\": \"colony-replay/1\",\n  \"cells\": []\n}\n";
        assert_eq!(detect(pretty.as_bytes()), Ok(None));
        // A nested `rec` key is no native record.
        assert!(!starts_native_record("{\"a\":{\"rec\":1}}"));
        assert!(starts_native_record(
            "{ \"a\" : [1, \"]\"], \"rec\" : \"call\""
        ));
        assert!(detect(b"garbage\nmore garbage\n").is_err());
    }
}
