//! Turning a JSON object into a model [`Record`]: the native record shapes (spec §7,
//! `docs/trace-format.md`) plus the aliases other writers use. Unknown keys are ignored (kept in
//! `extra` where the model has one); a key of the wrong type makes the record malformed.

use super::model::*;
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// A field of the wrong type. A `NaN` / `Infinity` stand-in ([`super::nonfinite`], also a
/// number beyond `f64` such as `1e400`) is named as the non-finite number it is, not as the
/// string that holds it internally.
fn bad(key: &str, want: &str, got: &Value) -> String {
    let kind = match got {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(s) if super::nonfinite::number_of_str(s).is_some() => {
            "a non-finite number (NaN, Infinity, or a number beyond the float range such as 1e400)"
        }
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("field `{key}` must be {want}, found {kind}")
}

/// An optional string field (`null` counts as missing).
pub(crate) fn opt_str(o: &Obj, key: &str) -> Result<Option<String>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(bad(key, "a string", v)),
    }
}

/// An optional non-negative integer field.
pub(crate) fn opt_u64(o: &Obj, key: &str) -> Result<Option<u64>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("field `{key}` must be a non-negative integer, found {n}")),
        Some(v) => Err(bad(key, "a non-negative integer", v)),
    }
}

/// An optional boolean field.
pub(crate) fn opt_bool(o: &Obj, key: &str) -> Result<Option<bool>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(bad(key, "a boolean", v)),
    }
}

/// Seconds since the Unix epoch of a numeric timestamp written in seconds, milliseconds,
/// microseconds or nanoseconds, told apart by magnitude (issue 6 T7-15; JavaScript's
/// `Date.now()` writes milliseconds, OpenTelemetry and Go nanoseconds): each unit covers the
/// instants from 1973-03-03 to 5138-11-16, so `|t| < 1e11` is seconds (also any small test
/// value), below `1e14` milliseconds, below `1e17` microseconds, and beyond nanoseconds (up
/// to `1e20`; larger values are left as they are, out of range wherever a date is needed).
/// Read as seconds, a 2026 time in milliseconds would be a date in the year 58 000.
pub fn unix_seconds(t: f64) -> f64 {
    let a = t.abs();
    if a < 1e11 || !a.is_finite() {
        t
    } else if a < 1e14 {
        t / 1e3
    } else if a < 1e17 {
        t / 1e6
    } else if a < 1e20 {
        t / 1e9
    } else {
        t
    }
}

/// An optional timestamp: a number of seconds, milliseconds, microseconds or nanoseconds since
/// the Unix epoch ([`unix_seconds`]), or an ISO 8601 string ([`parse_rfc3339`]).
pub(crate) fn opt_time(o: &Obj, key: &str) -> Result<Option<f64>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64().map(unix_seconds)),
        Some(v) if super::nonfinite::number_of(v).is_some() => {
            Err(bad(key, "a number of seconds or an ISO 8601 string", v))
        }
        Some(Value::String(s)) => parse_rfc3339(s)
            .map(Some)
            .ok_or_else(|| format!("field `{key}`: `{s}` is not an ISO 8601 time")),
        Some(v) => Err(bad(key, "a number of seconds or an ISO 8601 string", v)),
    }
}

/// Seconds since the Unix epoch of an ISO 8601 time as Python 3.11's
/// `datetime.fromisoformat` reads it (issue 6 N2-1), RFC 3339 included: a date `2026-06-21` or
/// `20260621` (midnight), then any one separator character (`T`, a space, ...) and a time
/// `10`, `10:00`, `10:00:00` or basic `1000`, `100000`, with a fraction after `.` or `,`, then
/// an offset `Z`, `±hh`, `±hhmm`, `±hh:mm` or `±hh:mm:ss`. No offset is UTC. The second may be
/// `60` (an RFC 3339 leap second). `None` for anything else (week and ordinal dates, hour 24,
/// out-of-range fields).
pub fn parse_rfc3339(s: &str) -> Option<f64> {
    let s = s.trim();
    let b = s.as_bytes();
    let digits = |t: &[u8]| -> Option<i64> {
        (!t.is_empty() && t.iter().all(u8::is_ascii_digit))
            .then(|| std::str::from_utf8(t).ok()?.parse().ok())?
    };
    // The date, extended or basic.
    let (y, mo, d, date_len) = if b.get(4) == Some(&b'-') {
        if b.get(7) != Some(&b'-') {
            return None;
        }
        (
            digits(b.get(0..4)?)?,
            digits(b.get(5..7)?)?,
            digits(b.get(8..10)?)?,
            10,
        )
    } else {
        (
            digits(b.get(0..4)?)?,
            digits(b.get(4..6)?)?,
            digits(b.get(6..8)?)?,
            8,
        )
    };
    let month_days = super::model::days_in_month(y as u32, mo.clamp(0, 99) as u32);
    if !(1..=i64::from(month_days)).contains(&d) {
        return None;
    }
    let (mut h, mut mi, mut se, mut frac, mut offset) = (0, 0, 0, 0.0, 0);
    if b.len() > date_len {
        // Any one character separates the date from the time (a character, not a byte).
        let sep = s[date_len..].chars().next()?;
        let t = &s[date_len + sep.len_utf8()..];
        let (clock, zone) = match t.find(['Z', 'z', '+', '-']) {
            Some(i) => (&t[..i], Some(&t[i..])),
            None => (t, None),
        };
        let c = clock.as_bytes();
        let (hms, rest): (Vec<&[u8]>, &[u8]) = if c.get(2) == Some(&b':') {
            // Extended: hh:mm[:ss[.f]].
            let end = c
                .iter()
                .position(|&x| x == b'.' || x == b',')
                .unwrap_or(c.len());
            let parts: Vec<&[u8]> = c[..end].split(|&x| x == b':').collect();
            (parts, &c[end..])
        } else {
            // Basic: hh[mm[ss[.f]]].
            let end = c
                .iter()
                .position(|&x| x == b'.' || x == b',')
                .unwrap_or(c.len());
            if end % 2 != 0 || end == 0 || end > 6 {
                return None;
            }
            (c[..end].chunks(2).collect(), &c[end..])
        };
        if hms.is_empty() || hms.len() > 3 || hms.iter().any(|p| p.len() != 2) {
            return None;
        }
        let parts: Vec<i64> = hms.iter().map(|p| digits(p)).collect::<Option<_>>()?;
        h = parts[0];
        mi = parts.get(1).copied().unwrap_or(0);
        se = parts.get(2).copied().unwrap_or(0);
        // RFC 3339 §5.6 ranges: hour 00-23, minute 00-59, second 00-60 (a leap second).
        if h >= 24 || mi >= 60 || se > 60 {
            return None;
        }
        if let Some(f) = rest.get(1..) {
            // A fraction only after the seconds.
            if hms.len() != 3 {
                return None;
            }
            frac = format!("0.{}", std::str::from_utf8(f).ok()?)
                .parse::<f64>()
                .ok()
                .filter(|_| digits(f).is_some())?;
        }
        offset = match zone {
            None | Some("Z" | "z") => 0,
            Some(z) => {
                let sign = if z.starts_with('-') { -1 } else { 1 };
                let z = z.get(1..)?.as_bytes();
                let (zh, zm, zs) = match z.len() {
                    2 => (digits(z)?, 0, 0),
                    4 => (digits(&z[0..2])?, digits(&z[2..4])?, 0),
                    5 if z[2] == b':' => (digits(&z[0..2])?, digits(&z[3..5])?, 0),
                    6 => (digits(&z[0..2])?, digits(&z[2..4])?, digits(&z[4..6])?),
                    8 if z[2] == b':' && z[5] == b':' => {
                        (digits(&z[0..2])?, digits(&z[3..5])?, digits(&z[6..8])?)
                    }
                    _ => return None,
                };
                if zh >= 24 || zm >= 60 || zs >= 60 {
                    return None;
                }
                sign * (zh * 3600 + zm * 60 + zs)
            }
        };
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = if y2 >= 0 { y2 } else { y2 - 399 } / 400;
    let yoe = y2 - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    Some((days * 86400 + h * 3600 + mi * 60 + se - offset) as f64 + frac)
}

fn opt_str_list(o: &Obj, key: &str) -> Result<Option<Vec<String>>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                other => Err(bad(key, "a list of strings", other)),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(Value::String(s)) => Ok(Some(vec![s.clone()])),
        Some(v) => Err(bad(key, "a list of strings", v)),
    }
}

/// Error text of a recorded value: a string as is, anything else as compact JSON.
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// [`content_text`], with a warning when `content` is not text, a list of text parts or null
/// (pyAgentic's `Message.content` is `Optional[str]`): a number, boolean or object is counted
/// as its JSON text.
pub fn content_text_checked(v: &Value, warnings: &mut Vec<String>) -> Option<String> {
    if matches!(v, Value::Number(_) | Value::Bool(_) | Value::Object(_)) {
        warnings.push(format!(
            "{}; counted as its JSON text `{}`",
            bad("content", "a string, a list of text parts or null", v),
            crate::policies::state::show(v)
        ));
    }
    content_text(v)
}

/// Builds a record from one JSON object whose kind is `rec`. `Ok(None)` for an unknown kind.
/// Problems that do not make the record unusable (a malformed `usage`, a `content` that is not
/// text, an unknown `status` or state `op`) are pushed to `warnings` and the record is kept.
///
/// Errors: a known key with a value of the wrong type (the message names the key).
pub fn record_from_object(
    rec: &str,
    o: &Obj,
    warnings: &mut Vec<String>,
) -> Result<Option<Record>, String> {
    Ok(Some(match rec {
        "header" => Record::Header(Box::new(header(o, warnings))),
        "cell" => Record::Cell(CellRecord {
            index: opt_u64(o, "index")?.or(opt_u64(o, "iteration")?),
            code: opt_str(o, "code")?,
            success: opt_bool(o, "success")?.or(opt_bool(o, "cell_success")?),
            error: match o.get("error").or(o.get("cell_error")) {
                None => None,
                Some(v) => text_of(v),
            },
        }),
        "call" | "action" => Record::from(call(o, warnings)?),
        "completion" => Record::from(completion(o)?),
        "approval" => Record::from(approval(o)?),
        "message" => Record::Message(Box::new(message_from_record(o, warnings)?)),
        "inference" => Record::from(inference(o, warnings)?),
        "state" => Record::from(state(o, warnings)?),
        "override" => Record::Override(OverrideRecord {
            constraint_id: opt_str(o, "constraint_id")?
                .filter(|c| !c.is_empty())
                .ok_or("an override needs a non-empty `constraint_id`")?,
            disabled: opt_bool(o, "disabled")?.unwrap_or(true),
        }),
        _ => return Ok(None),
    }))
}

/// A `header` record. A known key whose value is of the wrong type or unusable (an unknown
/// epoch, a `recorded_at` that is no time) does not drop the header, which also carries the
/// agent id, goals and epoch the rest of the trace depends on: the value is ignored with a
/// warning (issue 6 R12) and the other keys are kept.
fn header(o: &Obj, warnings: &mut Vec<String>) -> Header {
    fn ignore<T>(w: &mut Vec<String>, r: Result<Option<T>, String>) -> Option<T> {
        r.unwrap_or_else(|m| {
            w.push(format!("header: {m}; the value is ignored"));
            None
        })
    }
    let w = warnings;
    let named = ignore(w, opt_str(o, "epoch"))
        .map(|e| ("epoch", e))
        .or(ignore(w, opt_str(o, "semantics_epoch")).map(|e| ("semantics_epoch", e)));
    let mut epoch = named.and_then(|(k, e)| {
        ignore(
            w,
            Epoch::parse(&e)
                .map(Some)
                .map_err(|m| format!("field `{k}`: {m}")),
        )
    });
    if epoch.is_none() {
        // A recording date implies the epoch (colony-reference §0): an RFC 3339 / ISO date or
        // Unix seconds, as every time in a native trace.
        epoch = match o.get("recorded_at") {
            None | Some(Value::Null) => None,
            // Years 1 to 9999, as RFC 3339 can write them; `1e30` is no recording time.
            Some(Value::Number(n)) => ignore(
                w,
                n.as_f64()
                    .map(unix_seconds)
                    .filter(|t| (-62_135_596_800.0..=253_402_300_799.0).contains(t))
                    .map(|t| Some(super::colony::epoch_of_time(t)))
                    .ok_or_else(|| {
                        format!(
                            "field `recorded_at`: {n} seconds is out of range (years 1 to 9999)"
                        )
                    }),
            ),
            Some(Value::String(d)) => ignore(
                w,
                Epoch::parse(d)
                    .map(Some)
                    .map_err(|m| format!("field `recorded_at`: {m}")),
            ),
            Some(v) => ignore(
                w,
                Err(bad(
                    "recorded_at",
                    "a number of seconds or an ISO 8601 string",
                    v,
                )),
            ),
        };
    }
    let known = [
        "rec",
        "format",
        "version",
        "source",
        "agent_id",
        "agent",
        "epoch",
        "semantics_epoch",
        "goals",
        "system_prompt",
    ];
    let format = ignore(w, opt_str(o, "format")).unwrap_or_else(|| "cellguard-trace".into());
    if format != "cellguard-trace" {
        w.push(format!(
            "header: format `{format}` is not `cellguard-trace`; the records are read as cellguard-trace v1"
        ));
    }
    let version = ignore(w, opt_u64(o, "version"));
    if let Some(v) = version.filter(|v| *v != 1) {
        w.push(format!(
            "header: version {v} is not one this reader knows (1); the records are read as version 1"
        ));
    }
    // Read by the context policies (policies::observer); a wrong type would silently count 0.
    if let Some(v) = o.get("tool_schemas_chars") {
        if !v.is_null() && v.as_u64().is_none() {
            w.push(format!(
                "header: {}; the value is ignored",
                bad("tool_schemas_chars", "a non-negative integer", v)
            ));
        }
    }
    Header {
        format,
        version,
        source: ignore(w, opt_str(o, "source")),
        agent_id: ignore(w, opt_str(o, "agent_id")),
        epoch,
        goals: match o.get("goals") {
            Some(Value::String(_)) => {
                ignore(w, Err(bad("goals", "a list of strings", &o["goals"])))
            }
            _ => ignore(w, opt_str_list(o, "goals")),
        },
        system_prompt: ignore(w, opt_str(o, "system_prompt")),
        extra: o
            .iter()
            .filter(|(k, _)| !known.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

/// A call from a native `call` record, a pyAgentic `action` record, or a Colony run-call-trace
/// entry (`call_index`, `parameters`, `success`, `blocked`).
///
/// Only the key is essential: a call without a usable `raw_key` / `action_key` is an error. Any
/// other field whose value is of the wrong type or unusable (a `start` that is no time, a
/// `params` that is not an object, an unknown `status`, ...) costs only that field: it is read
/// as absent and a warning naming it is pushed to `warnings` (issue 6 T15: dropping the call
/// would hide it from every guardrail; the engine handles calls without times, params or
/// status conservatively).
pub fn call(o: &Obj, warnings: &mut Vec<String>) -> Result<CallRecord, String> {
    let raw_key = opt_str(o, "raw_key")?;
    let action_key = match opt_str(o, "action_key")? {
        Some(k) => Some(k),
        None => opt_str(o, "name")?,
    };
    let (raw_key, action_key) = match (raw_key, action_key) {
        (None, None) => return Err("a call needs `raw_key` or `action_key`".into()),
        (r, a) => (r, a),
    };
    // A key that is empty or only whitespace names no action (issue 6 T4-21): with no other
    // key the record is malformed (skipped and reported, never a call with a blank key); next
    // to a usable key it is ignored, with a warning.
    let blank = |k: &Option<String>| k.as_deref().is_some_and(|k| k.trim().is_empty());
    let (raw_blank, action_blank) = (blank(&raw_key), blank(&action_key));
    let usable = |k: &Option<String>| k.as_deref().is_some_and(|k| !k.trim().is_empty());
    if !usable(&raw_key) && !usable(&action_key) {
        let field = if raw_key.is_some() {
            "raw_key"
        } else {
            "action_key"
        };
        return Err(format!(
            "a call needs a non-empty `raw_key` or `action_key` (`{field}` is {})",
            if raw_key.as_deref().or(action_key.as_deref()) == Some("") {
                "empty"
            } else {
                "only whitespace"
            }
        ));
    }
    fn keep<T>(w: &mut Vec<String>, r: Result<Option<T>, String>) -> Option<T> {
        r.unwrap_or_else(|m| {
            w.push(format!("{m}; the value is ignored and the call is kept"));
            None
        })
    }
    let w = warnings;
    let raw_key = if raw_blank {
        w.push("field `raw_key` is blank; the call keeps `action_key` as its key".into());
        None
    } else {
        raw_key
    };
    let action_key = if action_blank {
        w.push("field `action_key` is blank; the call keeps `raw_key` as its key".into());
        None
    } else {
        action_key
    };
    let params = match o.get("params").or(o.get("parameters")).or(o.get("args")) {
        None | Some(Value::Null) => Params::none(),
        Some(v @ Value::Object(_)) => Params::from_value(v),
        Some(v) => {
            keep(
                w,
                Err::<Option<()>, _>(format!(
                    "{} (the call is replayed with no params)",
                    bad("params", "an object", v)
                )),
            );
            Params::none()
        }
    };
    let mut status = match keep(w, opt_str(o, "status")) {
        Some(s) => keep(
            w,
            CallStatus::parse(&s).map(Some).ok_or_else(|| {
                format!(
                    "field `status`: unknown status `{s}` (expected ok, error, blocked or unknown)"
                )
            }),
        )
        .unwrap_or(CallStatus::Unknown),
        None => CallStatus::Unknown,
    };
    if o.get("status").is_none() {
        if let Some(success) = keep(w, opt_bool(o, "success")) {
            status = if success {
                CallStatus::Ok
            } else {
                CallStatus::Error
            };
        }
    }
    if keep(w, opt_bool(o, "blocked")) == Some(true) {
        status = CallStatus::Blocked;
    }
    let result = match o
        .get("result")
        .or(o.get("output_preview"))
        .or(o.get("result_text"))
    {
        None | Some(Value::Null) => RawJson::none(),
        Some(v) => RawJson::from_value(v),
    };
    // The first alias present with a usable time wins; each unusable one is reported.
    let mut time = |keys: &[&str]| {
        keys.iter()
            .map(|k| keep(w, opt_time(o, k)))
            .fold(None, |found: Option<f64>, t| found.or(t))
    };
    let start = time(&["start", "started", "start_wall", "ts"]);
    let end = time(&["end", "ended", "end_wall"]);
    Ok(CallRecord {
        cell: keep(w, opt_u64(o, "cell")),
        index: keep(w, opt_u64(o, "index")).or(keep(w, opt_u64(o, "call_index"))),
        raw_key: raw_key.map(Into::into),
        action_key: action_key.map(Into::into),
        params,
        status,
        error: match o.get("error") {
            None => None,
            Some(v) => text_of(v),
        },
        result,
        start,
        end,
        call_id: keep(w, opt_str(o, "call_id")),
    })
}

fn completion(o: &Obj) -> Result<CompletionRecord, String> {
    let allowed = match opt_bool(o, "allowed")? {
        Some(a) => Some(a),
        None => opt_bool(o, "success")?,
    };
    let results = match o.get("results") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(
            n.as_u64()
                .ok_or_else(|| "field `results` must be a count or an object".to_string())?,
        ),
        Some(Value::Object(m)) => Some(m.len() as u64),
        Some(v) => return Err(bad("results", "a count or an object", v)),
    };
    Ok(CompletionRecord {
        cell: opt_u64(o, "cell")?,
        allowed,
        reason: opt_str(o, "reason")?,
        suggestions: opt_str_list(o, "suggestions")?.unwrap_or_default(),
        goals: opt_str_list(o, "goals")?,
        results,
    })
}

fn approval(o: &Obj) -> Result<ApprovalRecord, String> {
    let choice = opt_str(o, "choice")?
        .ok_or_else(|| "an approval needs a `choice` (approve_once, approve_all, reject, abort, or a legacy choice such as approve)".to_string())?;
    Ok(ApprovalRecord {
        request_id: opt_str(o, "request_id")?,
        action_type: opt_str(o, "action_type")?,
        choice,
        explanation: opt_str(o, "explanation")?,
        call_id: opt_str(o, "call_id")?,
    })
}

/// Text of a message `content`: a string, or the text parts of a multi-part list joined with
/// newlines (OpenAI `[{type: text, text}]`, MCP text blocks).
pub fn content_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<String> = parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.clone()),
                    Value::Object(m) => m
                        .get("text")
                        .or(m.get("content"))
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    _ => None,
                })
                .collect();
            Some(texts.join("\n"))
        }
        other => Some(other.to_string()),
    }
}

/// A message from a pyAgentic dump object (`kind`, `role`, `content`, ...). Without `kind`, the
/// role decides (an OpenAI-style message).
/// Non-fatal problems are pushed to `warnings`.
pub fn message_from_dump(m: &Obj, warnings: &mut Vec<String>) -> Result<MessageRecord, String> {
    let role = opt_str(m, "role")?;
    let kind = match opt_str(m, "kind")? {
        Some(k) => MessageKind::parse(&k),
        None => match &role {
            Some(r) => MessageKind::from_role(r),
            None => return Err("a message needs a `kind` or a `role`".into()),
        },
    };
    let arguments = match m.get("arguments") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => Some(v.to_string()),
    };
    let known = [
        "kind",
        "role",
        "content",
        "id",
        "name",
        "arguments",
        "tool_call_id",
        "compacted_count",
    ];
    Ok(MessageRecord {
        kind,
        role,
        content: m
            .get("content")
            .and_then(|c| content_text_checked(c, warnings)),
        id: opt_str(m, "id")?,
        name: opt_str(m, "name")?,
        arguments,
        tool_call_id: opt_str(m, "tool_call_id")?,
        compacted_count: opt_u64(m, "compacted_count")?,
        turn: None,
        step: None,
        extra: m
            .iter()
            .filter(|(k, _)| !known.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    })
}

/// A native `message` record: the dump under `msg` (pyAgentic's neutral format), or the
/// message keys inline.
fn message_from_record(o: &Obj, warnings: &mut Vec<String>) -> Result<MessageRecord, String> {
    let mut m = match o.get("msg") {
        Some(Value::Object(inner)) => message_from_dump(inner, warnings)?,
        Some(v) => return Err(bad("msg", "an object", v)),
        None => {
            let mut inline = o.clone();
            inline.remove("rec");
            inline.remove("turn");
            inline.remove("step");
            inline.remove("seq");
            message_from_dump(&inline, warnings)?
        }
    };
    m.turn = opt_u64(o, "turn")?;
    m.step = opt_u64(o, "step")?;
    Ok(m)
}

fn usage(v: &Value) -> Result<Option<Usage>, String> {
    Ok(match v {
        Value::Null => None,
        Value::Object(u) => {
            let input = opt_u64(u, "input_tokens")?
                .or(opt_u64(u, "prompt_tokens")?)
                .unwrap_or(0);
            let output = opt_u64(u, "output_tokens")?
                .or(opt_u64(u, "completion_tokens")?)
                .unwrap_or(0);
            Some(Usage {
                input_tokens: input,
                output_tokens: output,
                total_tokens: opt_u64(u, "total_tokens")?.unwrap_or(input.saturating_add(output)),
            })
        }
        v => return Err(bad("usage", "an object", v)),
    })
}

/// Inference statuses the replay knows (`error`/`failed` mark a failed provider call).
const INFERENCE_STATUSES: [&str; 4] = ["ok", "success", "error", "failed"];

fn inference(o: &Obj, warnings: &mut Vec<String>) -> Result<InferenceRecord, String> {
    // A malformed usage does not lose the provider call: the inference is kept without usage
    // (which, like a call whose response had none, resets pyAgentic's `_last_usage`).
    let usage = match o.get("usage").map(usage).transpose() {
        Ok(u) => u.flatten(),
        Err(e) => {
            warnings.push(format!(
                "{e}; usage treated as absent (the inference is kept)"
            ));
            None
        }
    };
    let status = opt_str(o, "status")?;
    if let Some(s) = &status {
        if !INFERENCE_STATUSES.iter().any(|k| s.eq_ignore_ascii_case(k)) {
            warnings.push(format!(
                "unknown inference `status` `{s}` (expected ok or error); treated as ok"
            ));
        }
    }
    Ok(InferenceRecord {
        turn: opt_u64(o, "turn")?,
        step: opt_u64(o, "step")?,
        usage,
        status,
        error: match o.get("error") {
            None => None,
            Some(v) => text_of(v),
        },
        model: opt_str(o, "model")?,
        inferred: opt_bool(o, "inferred")?.unwrap_or(false),
    })
}

fn state(o: &Obj, warnings: &mut Vec<String>) -> Result<StateRecord, String> {
    let r = StateRecord {
        field: opt_str(o, "field")?.ok_or_else(|| "a state record needs a `field`".to_string())?,
        op: StateOp::parse(&opt_str(o, "op")?.unwrap_or_else(|| "set".into())),
        value: o.get("value").cloned(),
        previous: o.get("previous").cloned(),
    };
    if let StateOp::Other(op) = &r.op {
        warnings.push(format!(
            "unknown state `op` `{op}` (expected set, append or mutate); the write is not checked"
        ));
    } else if r.value.is_none() {
        warnings.push("a state record without `value`; the write is not checked".into());
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 6 T7-15: numeric times in ms / µs / ns are the same instant as in seconds.
    #[test]
    fn numeric_times_are_told_apart_by_magnitude() {
        let s = 1_781_481_600.0;
        for t in [s, s * 1e3, s * 1e6, s * 1e9] {
            assert_eq!(unix_seconds(t), s, "{t}");
        }
        assert_eq!(unix_seconds(1_781_481_600_123.0), 1_781_481_600.123);
        assert_eq!(unix_seconds(1000.0), 1000.0);
        assert_eq!(unix_seconds(-5.0), -5.0);
        assert_eq!(unix_seconds(1e30), 1e30);
        assert!(unix_seconds(f64::INFINITY).is_infinite());
    }

    #[test]
    fn iso_8601_times_as_python_reads_them() {
        // Issue 6 N2-1: the values are CPython 3.11's `datetime.fromisoformat(s).timestamp()`
        // (UTC when no offset is given).
        for (s, want) in [
            ("2026-06-24T10:00:00+0000", 1_782_295_200.0),
            ("20260624T100000Z", 1_782_295_200.0),
            ("2026-06-24T10:00Z", 1_782_295_200.0),
            ("2026-06-24T10:00:00,5Z", 1_782_295_200.5),
            ("2026-06-24T10:00:00", 1_782_295_200.0),
            ("2026-06-24", 1_782_259_200.0),
            ("20260624", 1_782_259_200.0),
            ("2026-06-24T10", 1_782_295_200.0),
            ("2026-06-24T1000", 1_782_295_200.0),
            ("2026-06-24T10:00:00-0130", 1_782_300_600.0),
            ("2026-06-24T10:00:00+01:30:15", 1_782_289_785.0),
            ("2026-06-24x10:00:00Z", 1_782_295_200.0),
            ("20260624T10:00:00Z", 1_782_295_200.0),
            ("2026-06-24T100000+0000", 1_782_295_200.0),
            ("2026-06-24T10:00:00+00", 1_782_295_200.0),
        ] {
            assert_eq!(parse_rfc3339(s), Some(want), "{s}");
        }
        // Python rejects these too.
        for s in [
            "2026-06-24T24:00:00Z",
            "2026-06-24T10:0000Z",
            "2026-06-24T10:00:00+0",
            "2026-06-24T",
            "2026-06-24T10:00:00 UTC",
            "1782295200",
        ] {
            assert_eq!(parse_rfc3339(s), None, "{s}");
        }
    }

    #[test]
    fn rfc3339_times() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(parse_rfc3339("2026-06-21T10:00:00Z"), Some(1_782_036_000.0));
        assert_eq!(
            parse_rfc3339("2026-06-21T12:00:00.5+02:00"),
            Some(1_782_036_000.5)
        );
        assert_eq!(parse_rfc3339("2026-13-01T00:00:00Z"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn wrong_types_name_the_key() {
        // A bad optional field costs only that field (issue 6 T15); the key is essential.
        let o: Obj = serde_json::from_str(
            r#"{"raw_key": "a", "index": "x", "start": "2026-06-24 10:00:00 UTC", "end": true, "ts": 5}"#,
        )
        .unwrap();
        let mut w = Vec::new();
        let c = call(&o, &mut w).unwrap();
        assert_eq!(c.index, None);
        assert_eq!(c.start, Some(5.0));
        assert_eq!(c.end, None);
        assert_eq!(
            w,
            [
                "field `start`: `2026-06-24 10:00:00 UTC` is not an ISO 8601 time; the value is ignored and the call is kept",
                "field `end` must be a number of seconds or an ISO 8601 string, found a boolean; the value is ignored and the call is kept",
                "field `index` must be a non-negative integer, found a string; the value is ignored and the call is kept",
            ]
        );
        let o: Obj = serde_json::from_str(r#"{"index": 1}"#).unwrap();
        assert!(call(&o, &mut w).unwrap_err().contains("raw_key"));
    }

    #[test]
    fn colony_trace_entry_shape() {
        let o: Obj = serde_json::from_str(
            r#"{"call_index": 2, "action_key": "A.A.x", "parameters": {"q": 1}, "success": false, "error": "Blocked: r", "blocked": true}"#,
        )
        .unwrap();
        let c = call(&o, &mut Vec::new()).unwrap();
        assert_eq!(c.index, Some(2));
        assert_eq!(c.status, CallStatus::Blocked);
        assert_eq!(c.params.json(), Some(r#"{"q":1}"#));
    }
}
