//! The one trace model every reader produces and every replayer consumes (spec §7).
//!
//! A *trace* is one recorded run of one agent: a sequence of [`Record`]s in the order the
//! runtime produced them. Readers ([`super::open`]) stream them as [`Event`]s, record by record,
//! each with the one-based line of the input it came from, so memory stays bounded by what a
//! replayer keeps (its history window), not by the trace length.
//!
//! Record kinds (the native `cellguard-trace` v1 `rec` values, see `docs/trace-format.md`):
//!
//! | kind | what it is | source semantics |
//! |---|---|---|
//! | [`Header`] | format, version, source, agent id, semantics epoch | |
//! | [`CellRecord`] | one code cell (iteration): index, code, success, error | Colony `EXECUTE_CODE` (colony-reference §1) |
//! | [`CallRecord`] | one action call: raw key as written, resolved key, params, status | Colony `run()` / `CallRecord` / run-call-trace entry (§2.2, §5.1, §5.3); a chat tool call |
//! | [`CompletionRecord`] | one `signal_completion()` and its recorded verdict | colony-reference §2.5, §6 |
//! | [`ApprovalRecord`] | one human-approval response | Colony `HumanApprovalCapability` (§4.5) |
//! | [`MessageRecord`] | one conversation message (a pyAgentic dump with `kind`) | pyagentic-reference §3.1 |
//! | [`InferenceRecord`] | one provider call with its token usage | pyagentic-reference §3.4 |
//! | [`StateRecord`] | one agent-state write (field, op, value) | pyagentic-reference §1 |

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::path::PathBuf;

/// One record of a trace. The larger kinds are boxed so that a `Record` (and an [`Event`])
/// moves as a few words: the readers and the engine pass millions of them by value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "rec", rename_all = "snake_case")]
pub enum Record {
    /// `header`: what produced the trace and under which semantics.
    Header(Box<Header>),
    /// `cell`: a code cell (one iteration of a code-generating agent).
    Cell(CellRecord),
    /// `call`: one action call.
    Call(Box<CallRecord>),
    /// `completion`: one `signal_completion()` attempt.
    Completion(Box<CompletionRecord>),
    /// `approval`: one human-approval response.
    Approval(Box<ApprovalRecord>),
    /// `message`: one conversation message.
    Message(Box<MessageRecord>),
    /// `inference`: one LLM provider call.
    Inference(Box<InferenceRecord>),
    /// `state`: one agent-state write.
    State(Box<StateRecord>),
    /// `override`: an operator override of a semantic constraint.
    Override(OverrideRecord),
}

impl From<CallRecord> for Record {
    fn from(r: CallRecord) -> Self {
        Record::Call(Box::new(r))
    }
}

impl From<CompletionRecord> for Record {
    fn from(r: CompletionRecord) -> Self {
        Record::Completion(Box::new(r))
    }
}

impl From<ApprovalRecord> for Record {
    fn from(r: ApprovalRecord) -> Self {
        Record::Approval(Box::new(r))
    }
}

impl From<InferenceRecord> for Record {
    fn from(r: InferenceRecord) -> Self {
        Record::Inference(Box::new(r))
    }
}

impl From<StateRecord> for Record {
    fn from(r: StateRecord) -> Self {
        Record::State(Box::new(r))
    }
}

impl Record {
    /// The native `rec` value of this record.
    pub fn kind(&self) -> &'static str {
        match self {
            Record::Header(_) => "header",
            Record::Cell(_) => "cell",
            Record::Call(_) => "call",
            Record::Completion(_) => "completion",
            Record::Approval(_) => "approval",
            Record::Message(_) => "message",
            Record::Inference(_) => "inference",
            Record::State(_) => "state",
            Record::Override(_) => "override",
        }
    }
}

/// Colony's runtime semantics at the time a trace was recorded (colony-reference §0).
///
/// - [`Epoch::Pre0620`]: a blocked `run()` returned a failed result and the cell carried on;
///   the call history was cleared at the start of every cell.
/// - [`Epoch::Mid0620`]: a block raises `GuardrailBlockedError` and aborts the cell (atomic), but
///   the history is still per cell.
/// - [`Epoch::Current`]: atomic blocks, cumulative history across cells with a cell boundary
///   (10 000-entry FIFO cap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub enum Epoch {
    /// Before 2026-06-20 (`4b24ae8`): non-atomic blocks, per-cell history.
    #[serde(rename = "pre-0620")]
    Pre0620,
    /// 2026-06-20 to 2026-06-23: atomic blocks, per-cell history.
    #[serde(rename = "0620-0624")]
    Mid0620,
    /// From 2026-06-24 (`fc3180d`, `5b816ac`): atomic blocks, cumulative history.
    #[default]
    #[serde(rename = "current")]
    Current,
}

/// Days in month `m` (1–12) of year `y` (proleptic Gregorian); 0 for a month out of range.
pub(crate) fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => 0,
    }
}

impl Epoch {
    /// Parses an epoch name (`pre-0620`, `0620-0624`, `current`), an ISO date (`2026-06-21`) or
    /// an RFC 3339 time (`2026-06-21T10:00:00Z`, `+02:00` offsets, no offset = UTC): dates
    /// before 2026-06-20 give `pre-0620`, dates from 2026-06-20 to 2026-06-23 give `0620-0624`,
    /// later dates `current`. A time is judged by its UTC instant, as Unix seconds are.
    ///
    /// Errors: anything else, including impossible dates such as `2026-13-45` or
    /// `2026-02-30` and impossible or malformed times (`T25:00:00`, `Tgarbage`, a trailing
    /// `T`); the message names the accepted values.
    pub fn parse(s: &str) -> Result<Epoch, String> {
        let t = s.trim();
        match t.to_ascii_lowercase().as_str() {
            "pre-0620" | "pre0620" => return Ok(Epoch::Pre0620),
            "0620-0624" | "mid-0620" => return Ok(Epoch::Mid0620),
            "current" | "latest" => return Ok(Epoch::Current),
            _ => {}
        }
        let date = t.get(..10).unwrap_or("");
        let b = date.as_bytes();
        let digits = |r: std::ops::Range<usize>| -> Option<u32> {
            let d = date.get(r)?;
            if d.bytes().all(|c| c.is_ascii_digit()) {
                d.parse().ok()
            } else {
                None
            }
        };
        // A real calendar date (`2026-13-45`, `2026-02-30` are not), then nothing or a time.
        let is_date = b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && matches!(t.as_bytes().get(10), None | Some(b'T' | b't' | b' '))
            && match (digits(0..4), digits(5..7), digits(8..10)) {
                (Some(y), Some(m), Some(d)) => (1..=days_in_month(y, m)).contains(&d),
                _ => false,
            };
        if is_date && t.len() > 10 {
            // A time too: it must be a whole RFC 3339 time, and its UTC instant decides (the same
            // instant gives the same epoch however it is written: `2026-06-23T22:00:00-05:00` is
            // `2026-06-24T03:00:00Z`, as Unix seconds are; issue 6 R12).
            return super::convert::parse_rfc3339(t)
                .map(super::colony::epoch_of_time)
                .ok_or_else(|| {
                    format!(
                        "`{s}` is not an ISO 8601 time (expected a date such as `2026-06-21` or a time such as `2026-06-21T10:00:00Z`)"
                    )
                });
        }
        if is_date {
            // ISO dates compare correctly as strings.
            return Ok(if date < "2026-06-20" {
                Epoch::Pre0620
            } else if date < "2026-06-24" {
                Epoch::Mid0620
            } else {
                Epoch::Current
            });
        }
        Err(format!(
            "unknown semantics epoch `{s}` (expected `pre-0620`, `0620-0624`, `current`, or a date such as `2026-06-21`)"
        ))
    }

    /// The canonical name.
    pub fn as_str(self) -> &'static str {
        match self {
            Epoch::Pre0620 => "pre-0620",
            Epoch::Mid0620 => "0620-0624",
            Epoch::Current => "current",
        }
    }

    /// True when a block aborts the rest of the cell (from 2026-06-20).
    pub fn atomic_blocks(self) -> bool {
        !matches!(self, Epoch::Pre0620)
    }

    /// True when the call history is cumulative across cells (from 2026-06-24).
    pub fn cumulative_history(self) -> bool {
        matches!(self, Epoch::Current)
    }
}

/// `header`: the first record of a native trace. Readers of other formats synthesise one.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Header {
    /// `cellguard-trace` for native traces; the reader's format name otherwise.
    pub format: String,
    /// Format version (1).
    pub version: Option<u64>,
    /// What recorded the run (`colony`, `tau-bench`, `pyagentic`, ...).
    pub source: Option<String>,
    /// The recording agent's own id (predicates may exclude it, colony-reference §4.4).
    pub agent_id: Option<String>,
    /// Semantics epoch of the recording runtime, when stated.
    pub epoch: Option<Epoch>,
    /// The agent's goals (read by the rule-based completion validator, colony-reference §6).
    pub goals: Option<Vec<String>>,
    /// The system prompt, when recorded (pyAgentic renders it outside the message log).
    pub system_prompt: Option<String>,
    /// Keys this model does not name, kept as written.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

/// `cell`: one code cell, i.e. one iteration of a code-generating agent. Calls that follow
/// (until the next cell) belong to it.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct CellRecord {
    /// Iteration index, when recorded.
    pub index: Option<u64>,
    /// The cell's code (after extraction), when recorded.
    pub code: Option<String>,
    /// Whether the cell ran to completion.
    pub success: Option<bool>,
    /// The cell's error text (e.g. `GuardrailBlockedError: Blocked by guardrail: ...`).
    pub error: Option<String>,
}

/// Recorded outcome of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// Dispatched and succeeded.
    Ok,
    /// Dispatched and failed (the error is in [`CallRecord::error`]).
    Error,
    /// Refused by a runtime guardrail; never dispatched (no Colony `CallRecord` exists).
    Blocked,
    /// Dispatched, outcome not recorded (e.g. a chat tool call without a result message).
    #[default]
    Unknown,
}

impl CallStatus {
    /// Parses a recorded status (`ok`, `success`, `error`, `failed`, `blocked`, `unknown`,
    /// `pending`), case-insensitively. `None` for anything else.
    pub fn parse(s: &str) -> Option<CallStatus> {
        const NAMES: [(&str, CallStatus); 13] = [
            ("ok", CallStatus::Ok),
            ("success", CallStatus::Ok),
            ("succeeded", CallStatus::Ok),
            ("completed", CallStatus::Ok),
            ("error", CallStatus::Error),
            ("failed", CallStatus::Error),
            ("failure", CallStatus::Error),
            ("blocked", CallStatus::Blocked),
            ("denied", CallStatus::Blocked),
            ("rejected", CallStatus::Blocked),
            ("unknown", CallStatus::Unknown),
            ("pending", CallStatus::Unknown),
            ("", CallStatus::Unknown),
        ];
        // Case-insensitive without allocating (this runs once per call of a trace).
        NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(s))
            .map(|(_, st)| *st)
    }

    /// `ok`, `error`, `blocked` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::Error => "error",
            CallStatus::Blocked => "blocked",
            CallStatus::Unknown => "unknown",
        }
    }

    /// True when the call was dispatched (anything but `blocked`).
    pub fn dispatched(self) -> bool {
        !matches!(self, CallStatus::Blocked)
    }
}

/// A JSON value kept as the raw text it was recorded as and parsed only when something reads
/// it (most replays never look at most params or results). The text is always valid JSON.
/// Shared: a clone (the guardrail history keeps the params and results of prior calls) costs
/// a reference count, not a copy. A value recorded as plain text (a chat tool result, see
/// [`RawJson::from_text`]) is escaped into JSON text only when something asks for it.
#[derive(Clone, Default)]
pub struct RawJson(Option<Repr>);

#[derive(Clone)]
enum Repr {
    /// JSON text.
    Json(std::sync::Arc<str>),
    /// A JSON string value, kept unescaped.
    Text(std::sync::Arc<TextValue>),
}

/// A JSON string value and, once asked for, its JSON text.
struct TextValue {
    text: Box<str>,
    json: std::sync::OnceLock<Box<str>>,
}

/// The keyword parameters of a call (a [`RawJson`] object).
pub type Params = RawJson;

impl std::fmt::Debug for RawJson {
    /// `RawJson(Some("<JSON text>"))` or `RawJson(None)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RawJson").field(&self.json()).finish()
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json()
    }
}

impl Serialize for RawJson {
    /// Written verbatim by serde_json serializers.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self
            .json()
            .and_then(|t| RawValue::from_string(t.to_string()).ok())
        {
            Some(raw) => raw.serialize(s),
            None => s.serialize_none(),
        }
    }
}

impl RawJson {
    /// Nothing recorded.
    pub fn none() -> Self {
        RawJson(None)
    }

    /// From a raw JSON value (serde_json has validated it).
    pub fn from_raw(raw: Box<RawValue>) -> Self {
        let text: Box<str> = raw.into();
        RawJson(Some(Repr::Json(text.into())))
    }

    /// From text already known to be exactly one valid JSON value (validated by the reader
    /// that sliced it).
    pub(crate) fn from_valid_text(text: &str) -> Self {
        RawJson(Some(Repr::Json(text.into())))
    }

    /// The JSON string value `text` (equal to `from_value(&Value::String(text))`), escaped
    /// into JSON text only when [`RawJson::json`] is first asked for.
    pub fn from_text(text: impl Into<Box<str>>) -> Self {
        RawJson(Some(Repr::Text(std::sync::Arc::new(TextValue {
            text: text.into(),
            json: std::sync::OnceLock::new(),
        }))))
    }

    /// From a JSON value.
    pub fn from_value(v: &Value) -> Self {
        match serde_json::value::to_raw_value(v) {
            Ok(raw) => RawJson::from_raw(raw),
            Err(_) => RawJson(None),
        }
    }

    /// The parsed value (`Value::Null` when nothing was recorded).
    pub fn value(&self) -> Value {
        match &self.0 {
            Some(Repr::Text(t)) => Value::String(t.text.to_string()),
            _ => self
                .json()
                .and_then(|t| crate::trace::json_value(t).ok())
                .unwrap_or(Value::Null),
        }
    }

    /// The raw JSON text, when recorded.
    pub fn json(&self) -> Option<&str> {
        match self.0.as_ref()? {
            Repr::Json(j) => Some(j),
            Repr::Text(t) => Some(t.json.get_or_init(|| {
                // Escaping a string cannot fail; `null` is never reached.
                serde_json::to_string(&*t.text)
                    .map_or_else(|_| "null".into(), String::into_boxed_str)
            })),
        }
    }

    /// True when no parameters were recorded.
    pub fn is_none(&self) -> bool {
        self.0.is_none()
    }

    /// The parameters as a JSON object. Missing or non-object params give an empty map.
    pub fn object(&self) -> Map<String, Value> {
        if let Some(Repr::Text(_)) = &self.0 {
            // A string is not an object.
            return Map::new();
        }
        match self.json().and_then(|t| crate::trace::json_value(t).ok()) {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        }
    }
}

/// `call`: one action call as recorded.
///
/// `raw_key` is the key exactly as the agent wrote it (what Colony's guardrails see,
/// colony-reference §2.2 step 1); `action_key` is the key the dispatcher resolved it to (what
/// Colony's `CallRecord` and trace entries carry, §2.3). Either may be missing; readers fill
/// `raw_key` from `action_key` when only one is known.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct CallRecord {
    /// Index of the cell the call belongs to, when recorded.
    pub cell: Option<u64>,
    /// Index of the call within its cell (Colony `call_index`), when recorded.
    pub index: Option<u64>,
    /// The key as written in the cell.
    pub raw_key: Option<Box<str>>,
    /// The key as resolved by the dispatcher.
    pub action_key: Option<Box<str>>,
    /// Keyword parameters.
    pub params: Params,
    /// Recorded outcome.
    pub status: CallStatus,
    /// Error text of a failed or blocked call.
    pub error: Option<String>,
    /// Result (or its preview), as recorded.
    pub result: RawJson,
    /// Start time, seconds since the Unix epoch.
    pub start: Option<f64>,
    /// End time, seconds since the Unix epoch.
    pub end: Option<f64>,
    /// Tool-call id linking the call to its result message (chat formats).
    pub call_id: Option<String>,
}

impl CallRecord {
    /// The key the agent wrote (`raw_key`, else `action_key`, else empty).
    pub fn raw(&self) -> &str {
        self.raw_key
            .as_deref()
            .or(self.action_key.as_deref())
            .unwrap_or("")
    }

    /// The resolved key (`action_key`, else `raw_key`, else empty).
    pub fn resolved(&self) -> &str {
        self.action_key
            .as_deref()
            .or(self.raw_key.as_deref())
            .unwrap_or("")
    }

    /// The time the call completed (Colony stamps `CallRecord.start_wall` after dispatch):
    /// `end`, else `start`.
    pub fn wall(&self) -> Option<f64> {
        self.end.or(self.start)
    }
}

/// `completion`: one `signal_completion()` and what the recording runtime decided.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct CompletionRecord {
    /// Cell in which completion was signalled.
    pub cell: Option<u64>,
    /// Recorded verdict (accepted or rejected), when known.
    pub allowed: Option<bool>,
    /// Recorded reason.
    pub reason: Option<String>,
    /// Recorded suggestions of a rejection.
    pub suggestions: Vec<String>,
    /// The agent's goals at that point, when recorded (else the header's).
    pub goals: Option<Vec<String>>,
    /// Number of entries in the REPL `results` dict at that point, when recorded.
    pub results: Option<u64>,
}

/// `approval`: one human-approval response (Colony `HumanApprovalCapability`,
/// colony-reference §4.5).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ApprovalRecord {
    /// The request this answers. A later record with the same id replaces the earlier answer.
    pub request_id: Option<String>,
    /// The action type the request covers (matched against call keys); empty or missing for a
    /// legacy untyped request.
    pub action_type: Option<String>,
    /// `approve_once`, `approve_all`, `reject`, `abort`, or a legacy untyped choice
    /// (`approve`, `yes`, ...).
    pub choice: String,
    /// The operator's explanation.
    pub explanation: Option<String>,
    /// The one call (by its `call_id`) this answer is for (OpenAI Agents SDK per-call
    /// approvals, `context.approvals[tool].approved = ["call_id", ...]`): it approves or
    /// rejects that call only (issue 6 T6-10). `None`: any call its action type covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

/// pyAgentic message kinds (pyagentic-reference §3.1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    /// `system`.
    System,
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// `tool_call`: the assistant asks for one tool call.
    ToolCall,
    /// `tool_result`: the output of one tool call.
    ToolResult,
    /// `agent_call`: a call to a linked agent (a tool call subclass).
    AgentCall,
    /// `agent_result`: a linked agent's result (a tool result subclass).
    AgentResult,
    /// `compaction_summary`: the summary that replaced compacted messages.
    CompactionSummary,
    /// A plain `message` or any other kind, kept as written.
    #[serde(untagged)]
    Other(String),
}

impl MessageKind {
    /// Parses a `kind` value; unknown kinds are kept as [`MessageKind::Other`].
    pub fn parse(s: &str) -> MessageKind {
        match s {
            "system" => MessageKind::System,
            "user" => MessageKind::User,
            "assistant" => MessageKind::Assistant,
            "tool_call" => MessageKind::ToolCall,
            "tool_result" => MessageKind::ToolResult,
            "agent_call" => MessageKind::AgentCall,
            "agent_result" => MessageKind::AgentResult,
            "compaction_summary" => MessageKind::CompactionSummary,
            other => MessageKind::Other(other.to_string()),
        }
    }

    /// The kind a message of this role has when no `kind` is recorded.
    pub fn from_role(role: &str) -> MessageKind {
        match role {
            "system" | "developer" => MessageKind::System,
            "user" => MessageKind::User,
            "assistant" => MessageKind::Assistant,
            "tool" | "function" => MessageKind::ToolResult,
            other => MessageKind::Other(other.to_string()),
        }
    }

    /// The `kind` string.
    pub fn as_str(&self) -> &str {
        match self {
            MessageKind::System => "system",
            MessageKind::User => "user",
            MessageKind::Assistant => "assistant",
            MessageKind::ToolCall => "tool_call",
            MessageKind::ToolResult => "tool_result",
            MessageKind::AgentCall => "agent_call",
            MessageKind::AgentResult => "agent_result",
            MessageKind::CompactionSummary => "compaction_summary",
            MessageKind::Other(s) => s,
        }
    }

    /// Tool results in pyAgentic's `isinstance` sense (agent results included).
    pub fn is_tool_result(&self) -> bool {
        matches!(self, MessageKind::ToolResult | MessageKind::AgentResult)
    }

    /// Tool calls in pyAgentic's `isinstance` sense (agent calls included).
    pub fn is_tool_call(&self) -> bool {
        matches!(self, MessageKind::ToolCall | MessageKind::AgentCall)
    }
}

/// `message`: one conversation message in pyAgentic's shape (pyagentic-reference §3.1).
///
/// Chat readers split an OpenAI assistant message into an `assistant` message (its text, when
/// present) and one `tool_call` message per tool call, and turn each `tool` message into a
/// `tool_result`, as pyAgentic records them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageRecord {
    /// The pyAgentic kind.
    pub kind: MessageKind,
    /// `system`, `user`, `assistant` or `tool`.
    pub role: Option<String>,
    /// Text content (tool output for results). Multi-part content is joined with newlines.
    pub content: Option<String>,
    /// Tool-call id (`tool_call` / `agent_call`).
    pub id: Option<String>,
    /// Tool name (`tool_call`, `tool_result`).
    pub name: Option<String>,
    /// Tool-call arguments as JSON text (`tool_call`).
    pub arguments: Option<String>,
    /// The call this result answers (`tool_result`).
    pub tool_call_id: Option<String>,
    /// Messages folded into a `compaction_summary`.
    pub compacted_count: Option<u64>,
    /// User turn, when recorded.
    pub turn: Option<u64>,
    /// Step within the turn, when recorded.
    pub step: Option<u64>,
    /// Keys this model does not name, kept as written.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl MessageRecord {
    /// A message of `kind` with everything else empty.
    pub fn new(kind: MessageKind) -> Self {
        Self {
            kind,
            role: None,
            content: None,
            id: None,
            name: None,
            arguments: None,
            tool_call_id: None,
            compacted_count: None,
            turn: None,
            step: None,
            extra: Map::new(),
        }
    }

    /// The role: as recorded, else the kind's default role.
    pub fn role(&self) -> &str {
        if let Some(r) = &self.role {
            return r;
        }
        match self.kind {
            MessageKind::System => "system",
            MessageKind::User => "user",
            MessageKind::ToolResult | MessageKind::AgentResult => "tool",
            _ => "assistant",
        }
    }

    /// Number of Unicode scalar values of the content (pyAgentic counts `len(str)`).
    pub fn chars(&self) -> usize {
        self.content.as_deref().map_or(0, |c| c.chars().count())
    }
}

/// Token usage of one inference (pyAgentic `UsageInfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Total tokens.
    pub total_tokens: u64,
}

/// `inference`: one LLM provider call, placed before the messages its response produced.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct InferenceRecord {
    /// User turn, when recorded.
    pub turn: Option<u64>,
    /// Step within the turn, when recorded.
    pub step: Option<u64>,
    /// Token usage, when recorded.
    pub usage: Option<Usage>,
    /// `ok` or `error`; `None` when not recorded (treated as ok).
    pub status: Option<String>,
    /// Provider error text.
    pub error: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// True when the reader inferred this boundary (no inference was recorded, e.g. each
    /// assistant turn of an OpenAI chat conversation).
    pub inferred: bool,
}

/// State-write operations (pyagentic-reference §1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StateOp {
    /// Assignment of a new value.
    Set,
    /// Append to a list field.
    Append,
    /// In-place mutation.
    Mutate,
    /// Anything else, kept as written.
    #[serde(untagged)]
    Other(String),
}

impl StateOp {
    /// Parses an op; unknown values are kept.
    pub fn parse(s: &str) -> StateOp {
        match s {
            "set" => StateOp::Set,
            "append" => StateOp::Append,
            "mutate" => StateOp::Mutate,
            o => StateOp::Other(o.to_string()),
        }
    }
}

/// `state`: one write to an agent-state field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StateRecord {
    /// Field name (dotted for nested fields).
    pub field: String,
    /// The operation.
    pub op: StateOp,
    /// The value written.
    pub value: Option<Value>,
    /// The value before the write, when recorded.
    pub previous: Option<Value>,
}

/// `override`: an operator override of a semantic constraint (Colony's blackboard key
/// `operator_override:semantic_constraint:{id}`, written by the dashboard's disable/enable
/// controls and when a guardrail waiver is approved; colony-reference §4.10). It holds for the
/// rest of the session, for every agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverrideRecord {
    /// The constraint id.
    pub constraint_id: String,
    /// `true` (the default) disables the constraint, `false` enables it again.
    pub disabled: bool,
}

/// Input formats the readers understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Native `cellguard-trace` v1 JSON Lines (streamed line by line).
    Native,
    /// Colony: codegen-iterations JSON, `colony-replay/1`, a run-call-trace list, or span
    /// exports (colony-reference §5.3, §5.7–5.9).
    Colony,
    /// OpenAI chat-completions message lists with `tool_calls` (tau-bench, Invariant); a file
    /// may hold a list of conversations.
    OpenaiChat,
    /// A pyAgentic message dump (a list of `model_dump()` messages with `kind`).
    Pyagentic,
    /// SWE-agent `.traj` files.
    SweAgent,
    /// OpenAI Agents SDK serialized `RunState`.
    AgentsRunstate,
    /// Anthropic Messages: `tool_use` / `tool_result` content blocks (read by the chat reader).
    AnthropicMessages,
    /// OpenAI Responses API items: `function_call` / `function_call_output` (read by the chat
    /// reader).
    OpenaiResponses,
}

impl Format {
    /// Every format, in the order `--format` lists them.
    pub const ALL: [Format; 8] = [
        Format::Native,
        Format::Colony,
        Format::OpenaiChat,
        Format::Pyagentic,
        Format::SweAgent,
        Format::AgentsRunstate,
        Format::AnthropicMessages,
        Format::OpenaiResponses,
    ];

    /// The `--format` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Native => "native",
            Format::Colony => "colony",
            Format::OpenaiChat => "openai-chat",
            Format::Pyagentic => "pyagentic",
            Format::SweAgent => "swe-agent",
            Format::AgentsRunstate => "agents-runstate",
            Format::AnthropicMessages => "anthropic",
            Format::OpenaiResponses => "openai-responses",
        }
    }

    /// Other names `--format` accepts for the format.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Format::Native => &["cellguard-trace", "jsonl"],
            Format::Colony => &[],
            Format::OpenaiChat => &["openai", "chat", "tau-bench"],
            Format::Pyagentic => &[],
            Format::SweAgent => &["traj"],
            Format::AgentsRunstate => &["runstate"],
            Format::AnthropicMessages => &["anthropic-messages", "claude"],
            Format::OpenaiResponses => &["responses"],
        }
    }

    /// Parses a `--format` name or one of its [`Format::aliases`].
    pub fn parse(s: &str) -> Option<Format> {
        Format::ALL
            .into_iter()
            .find(|f| f.as_str() == s || f.aliases().contains(&s))
    }
}

/// Identity of one trace within an input file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceInfo {
    /// Report name: the file path, or `FILE#N` (N from 0) when the file holds several traces.
    pub name: String,
    /// The input file.
    pub path: PathBuf,
    /// The format it was read as.
    pub format: Format,
}

/// A record that could not be read and was skipped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skip {
    /// The input file.
    pub path: PathBuf,
    /// One-based line where the record starts (0: the file as a whole).
    pub line: u64,
    /// One-based column (in bytes) of the problem within the line, when known.
    pub column: Option<u64>,
    /// Why it was skipped.
    pub message: String,
}

impl std::fmt::Display for Skip {
    /// `FILE:LINE:COL: message`, `FILE:LINE: message`, or `FILE: message` (line 0).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.path.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

/// One step of a reader's output stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A trace begins; records until the next `TraceStart` or the end belong to it.
    TraceStart(TraceInfo),
    /// A record, with the one-based line of the input where it starts.
    Record {
        /// One-based line.
        line: u64,
        /// The record.
        record: Record,
    },
    /// A source record was malformed (or of an unknown kind) and skipped.
    Skipped(Skip),
    /// A non-fatal problem that concerns no single record (e.g. invalid UTF-8 replaced).
    Warning(Skip),
}

/// Reader counters. `read == accepted + skipped` always holds ("counts in = counts out"):
/// every source record examined is either turned into records or reported as skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ReadStats {
    /// Source records examined (native: non-blank lines; chat: messages; Colony: trace
    /// entries and cells; ...).
    pub read: u64,
    /// Source records turned into model records.
    pub accepted: u64,
    /// Source records skipped (malformed, or of an unknown kind).
    pub skipped: u64,
    /// Model records emitted (a chat message can yield several).
    pub emitted: u64,
}

impl ReadStats {
    /// Adds another reader's counts.
    pub fn add(&mut self, o: &ReadStats) {
        self.read += o.read;
        self.accepted += o.accepted;
        self.skipped += o.skipped;
        self.emitted += o.emitted;
    }
}

/// A streaming trace reader: an iterator of [`Event`]s plus its counters.
pub trait TraceReader: Iterator<Item = Event> {
    /// Counters so far (final once the iterator is exhausted).
    fn stats(&self) -> ReadStats;
    /// The format being read.
    fn format(&self) -> Format;
    /// The format the content is detected as, when a format was forced on an input that cannot
    /// be read a second time (standard input): a caller can then tell a wrong `--format` as it
    /// does for a file (issue 6 T6-8). `None` otherwise.
    fn detected(&self) -> Option<Format> {
        None
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    /// Times are judged by their UTC instant and must be whole RFC 3339 times (issue 6 R2/R12).
    #[test]
    fn epoch_of_a_time_is_its_utc_instant_and_malformed_times_are_errors() {
        let ok = |s: &str| Epoch::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        // The same instant written three ways.
        assert_eq!(ok("2026-06-23T22:00:00-05:00"), Epoch::Current);
        assert_eq!(ok("2026-06-24T03:00:00Z"), Epoch::Current);
        assert_eq!(ok("2026-06-24T05:00:00+02:00"), Epoch::Current);
        assert_eq!(ok("2026-06-24T01:00:00+02:00"), Epoch::Mid0620);
        assert_eq!(ok("2026-06-18T23:59:60Z"), Epoch::Pre0620);
        assert_eq!(ok("2026-06-21 10:00:00.25"), Epoch::Mid0620);
        assert_eq!(ok("2026-06-24"), Epoch::Current);
        for bad in [
            "2026-06-24T25:00:00Z",
            "2026-06-19T10:61:00Z",
            "2026-06-19T10:00:61Z",
            "2026-06-19Tgarbage",
            "2026-06-19T",
            "2026-06-24T25:00",
            "2026-06-19T10:00:00+24:00",
            "2026-06-19T10:00:00+0a:00",
            "2026-06-19T10:00:00.Z",
            "2026-02-30T10:00:00Z",
        ] {
            let e = Epoch::parse(bad).expect_err(bad);
            assert!(
                e.contains("ISO 8601") || e.contains("unknown semantics epoch"),
                "{e}"
            );
        }
    }

    /// A value recorded as text reads, writes, compares and prints exactly as the JSON string
    /// value it stands for, escaped or not.
    #[test]
    fn text_values_equal_their_json_strings() {
        for text in [
            "",
            "plain",
            "Error: no \"quotes\" here",
            "line\nbreak\ttab\u{1}\u{7f}",
            "{\"a\": 1}",
            "\u{e9}\u{2028}\u{1f600}\\",
        ] {
            let lazy = RawJson::from_text(text);
            let eager = RawJson::from_value(&Value::String(text.to_string()));
            assert_eq!(lazy.value(), Value::String(text.to_string()));
            assert_eq!(lazy.value(), eager.value());
            assert!(lazy.object().is_empty() && eager.object().is_empty());
            assert!(!lazy.is_none());
            assert_eq!(format!("{lazy:?}"), format!("{eager:?}"));
            assert_eq!(
                serde_json::to_string(&lazy).unwrap(),
                serde_json::to_string(&eager).unwrap()
            );
            assert_eq!(lazy.json(), eager.json());
            assert_eq!(lazy, eager);
            assert_eq!(
                lazy.clone().json(),
                Some(serde_json::to_string(text).unwrap().as_str())
            );
        }
        assert_eq!(format!("{:?}", RawJson::none()), "RawJson(None)");
    }

    /// Readers and the replay engine move millions of events by value: the large record kinds
    /// are boxed so that an event stays a few words (a move of a 200-byte event was a `memcpy`
    /// call, about 15% of the native reader's time on the synthetic benchmark trace).
    #[test]
    fn events_stay_small() {
        assert!(
            std::mem::size_of::<Record>() <= 72,
            "{}",
            std::mem::size_of::<Record>()
        );
        assert!(
            std::mem::size_of::<Event>() <= 80,
            "{}",
            std::mem::size_of::<Event>()
        );
    }
}
