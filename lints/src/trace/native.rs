//! Reader of native `cellguard-trace` v1 JSON Lines (spec §7, `docs/trace-format.md`).
//!
//! Streams line by line from any `BufRead`, keeping one line in memory. Blank lines are
//! ignored. A line that is not valid UTF-8, not a JSON object, has no string `rec`, has a known
//! key of the wrong type, or has an unknown `rec` is reported as [`Event::Skipped`] with its line
//! and skipped; reading goes on. Unknown keys are ignored. A `header` record after other records
//! starts the next trace of the file (named `FILE#1`, `FILE#2`, ...; the first keeps `FILE`).

use super::convert::record_from_object;
use super::model::*;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::BufRead;
use std::path::PathBuf;

/// Streaming reader of native JSON Lines.
pub struct NativeReader<R: BufRead> {
    input: R,
    path: PathBuf,
    name: String,
    line: u64,
    buf: Vec<u8>,
    stats: ReadStats,
    pending: VecDeque<Event>,
    started: bool,
    traces: u64,
    records_in_trace: u64,
    done: bool,
}

impl<R: BufRead> NativeReader<R> {
    /// A reader of `input`; `path` names the file in traces and skip messages.
    pub fn new(input: R, path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        Self {
            input,
            name: path.display().to_string(),
            path,
            line: 0,
            buf: Vec::with_capacity(512),
            stats: ReadStats::default(),
            pending: VecDeque::new(),
            started: false,
            traces: 0,
            records_in_trace: 0,
            done: false,
        }
    }

    fn skip(&mut self, message: String) -> Event {
        self.stats.skipped += 1;
        Event::Skipped(Skip {
            path: self.path.clone(),
            line: self.line,
            message,
        })
    }

    fn trace_start(&mut self) -> Event {
        let name = if self.traces == 0 {
            self.name.clone()
        } else {
            format!("{}#{}", self.name, self.traces)
        };
        self.traces += 1;
        self.records_in_trace = 0;
        Event::TraceStart(TraceInfo {
            name,
            path: self.path.clone(),
            format: Format::Native,
        })
    }
}

/// The fields of a `call` or `cell` line, borrowed from the line: the fast path for the record
/// kinds that dominate long traces. A line with any other key (an alias such as `parameters`,
/// or an unknown key) fails this parse and goes the general way.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FastCall<'a> {
    #[serde(borrow, default)]
    code: Option<Cow<'a, str>>,
    #[serde(borrow)]
    rec: Cow<'a, str>,
    #[serde(default)]
    cell: Option<u64>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow, default)]
    raw_key: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    action_key: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    // Numbers only: an RFC 3339 string fails this parse and goes the general way.
    #[serde(default)]
    start: Option<f64>,
    #[serde(default)]
    end: Option<f64>,
    #[serde(borrow, default)]
    call_id: Option<Cow<'a, str>>,
    // Aliases: their presence sends the line down the general path.
    #[serde(borrow, default)]
    success: Option<&'a RawValue>,
}

fn is_null(r: &RawValue) -> bool {
    r.get() == "null"
}

/// Fast conversion of a `cell` line (from an already parsed [`FastCall`]).
fn fast_cell(w: FastCall) -> Option<CellRecord> {
    if w.cell.is_some() || w.raw_key.is_some() || w.action_key.is_some() {
        return None;
    }
    let success = match w.success {
        None => None,
        Some(r) if r.get() == "true" => Some(true),
        Some(r) if r.get() == "false" => Some(false),
        Some(r) if is_null(r) => None,
        Some(_) => return None,
    };
    let error = match w.error {
        None => None,
        Some(e) if is_null(e) => None,
        Some(e) if e.get().starts_with('"') => Some(serde_json::from_str::<String>(e.get()).ok()?),
        Some(e) => Some(e.get().to_string()),
    };
    Some(CellRecord {
        index: w.index,
        code: w.code.map(Cow::into_owned),
        success,
        error,
    })
}

/// Fast conversion of a `call` or `cell` line; `None` means "use the general path" (which also
/// produces the precise error message).
fn fast_record(line: &str) -> Option<Record> {
    let w: FastCall = serde_json::from_str(line).ok()?;
    match &*w.rec {
        "call" => fast_call(w).map(Record::Call),
        "cell" => fast_cell(w).map(Record::Cell),
        _ => None,
    }
}

/// Fast conversion of a `call` line.
fn fast_call(w: FastCall) -> Option<CallRecord> {
    if w.code.is_some() || w.success.is_some() {
        return None;
    }
    let raw_key = w.raw_key.map(|k| Box::<str>::from(k.as_ref()));
    let action_key = w.action_key.map(|k| Box::<str>::from(k.as_ref()));
    let nonempty = |k: &Option<Box<str>>| k.as_deref().is_some_and(|s| !s.is_empty());
    if !nonempty(&raw_key) && !nonempty(&action_key) {
        return None;
    }
    let params = match w.params {
        None => Params::none(),
        Some(p) if is_null(p) => Params::none(),
        Some(p) if p.get().starts_with('{') => Params::from_raw(p.to_owned()),
        Some(_) => return None,
    };
    let status = match w.status.as_deref() {
        None => CallStatus::Unknown,
        Some(s) => CallStatus::parse(s)?,
    };
    let error = match w.error {
        None => None,
        Some(e) if is_null(e) => None,
        Some(e) if e.get().starts_with('"') => Some(serde_json::from_str::<String>(e.get()).ok()?),
        Some(e) => Some(e.get().to_string()),
    };
    let result = match w.result {
        None => RawJson::none(),
        Some(r) if is_null(r) => RawJson::none(),
        Some(r) => RawJson::from_raw(r.to_owned()),
    };
    let (start, end) = (w.start, w.end);
    Some(CallRecord {
        cell: w.cell,
        index: w.index,
        raw_key,
        action_key,
        params,
        status,
        error,
        result,
        start,
        end,
        call_id: w.call_id.map(Cow::into_owned),
    })
}

/// Parses one non-blank line into a record. `Ok(None)` for an unknown `rec` (skipped).
///
/// Errors: the reason the line is malformed.
pub fn parse_line(line: &str) -> Result<Record, String> {
    if let Some(r) = fast_record(line) {
        return Ok(r);
    }
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
        format!(
            "invalid JSON at column {}: {}",
            e.column(),
            strip_position(&e.to_string())
        )
    })?;
    let serde_json::Value::Object(obj) = value else {
        return Err("a record must be a JSON object".into());
    };
    let rec = match obj.get("rec") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(_) => return Err("field `rec` must be a string".into()),
        None => return Err("a record needs a `rec` key".into()),
    };
    match record_from_object(&rec, &obj) {
        Ok(Some(r)) => Ok(r),
        Ok(None) => Err(format!("unknown record kind `{rec}` skipped")),
        Err(e) => Err(format!("malformed `{rec}` record: {e}")),
    }
}

/// serde_json appends " at line L column C"; the caller reports its own position.
fn strip_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    }
}

impl<R: BufRead> Iterator for NativeReader<R> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        if let Some(e) = self.pending.pop_front() {
            return Some(e);
        }
        if !self.started {
            self.started = true;
            return Some(self.trace_start());
        }
        if self.done {
            return None;
        }
        loop {
            self.buf.clear();
            match self.input.read_until(b'\n', &mut self.buf) {
                Ok(0) => {
                    self.done = true;
                    return None;
                }
                Ok(_) => {}
                Err(e) => {
                    self.done = true;
                    self.line += 1;
                    self.stats.read += 1;
                    return Some(self.skip(format!("read error: {e}")));
                }
            }
            self.line += 1;
            let mut bytes: &[u8] = &self.buf;
            if self.line == 1 {
                bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            }
            while let [rest @ .., b'\n' | b'\r'] = bytes {
                bytes = rest;
            }
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            self.stats.read += 1;
            let text = match std::str::from_utf8(bytes) {
                Ok(t) => t,
                Err(e) => {
                    let at = e.valid_up_to();
                    return Some(
                        self.skip(format!("invalid UTF-8 at byte {} of the line", at + 1)),
                    );
                }
            };
            match parse_line(text) {
                Ok(record) => {
                    self.stats.accepted += 1;
                    self.stats.emitted += 1;
                    let line = self.line;
                    if matches!(record, Record::Header(_)) && self.records_in_trace > 0 {
                        let start = self.trace_start();
                        self.records_in_trace = 1;
                        self.pending.push_back(Event::Record { line, record });
                        return Some(start);
                    }
                    self.records_in_trace += 1;
                    return Some(Event::Record { line, record });
                }
                Err(message) => return Some(self.skip(message)),
            }
        }
    }
}

impl<R: BufRead> TraceReader for NativeReader<R> {
    fn stats(&self) -> ReadStats {
        self.stats
    }

    fn format(&self) -> Format {
        Format::Native
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Vec<Event>, ReadStats) {
        let mut r = NativeReader::new(text.as_bytes(), "t.jsonl");
        let events: Vec<Event> = r.by_ref().collect();
        (events, r.stats())
    }

    #[test]
    fn fast_and_general_paths_agree() {
        let line = r#"{"rec":"call","cell":1,"index":0,"raw_key":"get_x","action_key":"A.A.get_x","params":{"id":"a\"b"},"status":"error","error":"Error: \"x\"","result":{"ok":false},"start":1.5,"end":2,"call_id":"c1"}"#;
        let Some(Record::Call(fast)) = fast_record(line) else {
            panic!("fast path")
        };
        let obj: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).unwrap();
        let general = super::super::convert::call(&obj).unwrap();
        assert_eq!(fast, general);
        assert_eq!(fast.error.as_deref(), Some("Error: \"x\""));
        assert_eq!(fast.end, Some(2.0));
        // RFC 3339 times go the general way and give the same value.
        let rfc = line.replace(r#""end":2"#, r#""end":"1970-01-01T00:00:02Z""#);
        assert!(fast_record(&rfc).is_none());
        assert_eq!(parse_line(&rfc).unwrap(), Record::Call(fast));
    }

    #[test]
    fn fast_cell_matches_general_path() {
        for line in [
            r#"{"rec":"cell","index":3,"code":"await run(\"a\")","success":false,"error":"E"}"#,
            r#"{"rec":"cell","index":0}"#,
            r#"{"rec":"cell","iteration":4,"cell_success":true}"#,
        ] {
            let obj: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(line).unwrap();
            let general = super::super::convert::record_from_object("cell", &obj)
                .unwrap()
                .unwrap();
            assert_eq!(parse_line(line).unwrap(), general, "{line}");
        }
        assert!(matches!(
            fast_record(r#"{"rec":"cell","index":1}"#),
            Some(Record::Cell(_))
        ));
    }

    #[test]
    fn malformed_lines_are_skipped_with_their_line_and_counted() {
        let text = "{\"rec\":\"header\",\"format\":\"cellguard-trace\",\"version\":1}\n\n\
                    {\"rec\":\"call\",\"raw_key\":\"a\"}\n\
                    not json\n\
                    {\"rec\":\"call\",\"raw_key\":\"b\",\"index\":\"x\"}\n\
                    {\"rec\":\"turn\",\"turn\":0}\n\
                    [1]\n\
                    {\"rec\":\"call\",\"raw_key\":\"c\",\"extra_key\":1}\n";
        let (events, stats) = read(text);
        let skipped: Vec<(u64, String)> = events
            .iter()
            .filter_map(|e| match e {
                Event::Skipped(s) => Some((s.line, s.message.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            skipped.iter().map(|s| s.0).collect::<Vec<_>>(),
            vec![4, 5, 6, 7]
        );
        assert!(
            skipped[0].1.starts_with("invalid JSON at column "),
            "{}",
            skipped[0].1
        );
        assert_eq!(
            skipped[1].1,
            "malformed `call` record: field `index` must be a non-negative integer, found a string"
        );
        assert_eq!(skipped[2].1, "unknown record kind `turn` skipped");
        assert_eq!(
            stats,
            ReadStats {
                read: 7,
                accepted: 3,
                skipped: 4,
                emitted: 3
            }
        );
        assert_eq!(stats.read, stats.accepted + stats.skipped);
    }

    #[test]
    fn bad_utf8_is_a_skipped_record() {
        let mut bytes = b"{\"rec\":\"call\",\"raw_key\":\"a\"}\n".to_vec();
        bytes.extend_from_slice(b"{\"rec\":\"call\",\"raw_key\":\"\xff\"}\n");
        let mut r = NativeReader::new(&bytes[..], "t.jsonl");
        let events: Vec<Event> = r.by_ref().collect();
        assert!(
            matches!(&events[2], Event::Skipped(s) if s.line == 2 && s.message.contains("UTF-8"))
        );
        assert_eq!(r.stats().skipped, 1);
    }

    #[test]
    fn second_header_starts_a_new_trace() {
        let text = "{\"rec\":\"header\"}\n{\"rec\":\"call\",\"raw_key\":\"a\"}\n{\"rec\":\"header\"}\n{\"rec\":\"call\",\"raw_key\":\"b\"}\n";
        let (events, _) = read(text);
        let names: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                Event::TraceStart(t) => Some(t.name.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(names, vec!["t.jsonl", "t.jsonl#1"]);
        assert!(matches!(&events[3], Event::TraceStart(_)));
        assert!(matches!(&events[4], Event::Record { line: 3, .. }));
    }
}
