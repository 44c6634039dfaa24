//! OpenAI chat-completions message lists with `tool_calls` (tau-bench, Invariant; guardrail-anchors
//! §1.1, §3.7).
//!
//! Accepted shapes: a list of messages (one conversation, named after the file); a list of
//! conversations, each a list of messages or an object holding one under `traj` (tau-bench),
//! `messages` or `conversation` (traces named `FILE#N`, N from 0); an object holding one
//! conversation; JSON Lines of messages.
//!
//! Per message (the source record; a malformed message is skipped whole, but a malformed entry
//! of `tool_calls` is skipped alone, as its own source record, and the message's other calls are
//! replayed):
//! - `system`/`user`: a `message` record;
//! - `assistant`: an inferred `inference` record (each assistant turn is one inference), an
//!   `assistant` message when it has text, and, when it has tool calls, a `cell` record (the
//!   turn's calls form one cell) followed per tool call by a `tool_call` message and a `call`
//!   record (raw key = function name, params = parsed `arguments`);
//! - `tool`: a `tool_result` message.
//!
//! A call's recorded status comes from its result message: linked by `tool_call_id` to the most
//! recent unanswered call with that id, or, without an id, to the most recent unanswered call
//! (Invariant's rule). Content starting with `Error:` means `error` (tau-bench's convention),
//! other content `ok`, no result `unknown`. Legacy `function_call` assistant messages count as
//! one tool call.

use super::convert::{content_text_checked, opt_str};
use super::doc::{arr, map, obj, root_items, DocCtx, Item, Root};
use super::model::*;
use super::TraceError;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Converts a chat document.
///
/// Errors: a document that holds no message list.
pub(crate) fn read(ctx: &mut DocCtx, root: &Root, format: Format) -> Result<(), TraceError> {
    if let Some(items) = root_items(ctx, root) {
        // A list of messages, or a list of conversations?
        let conversations = items.iter().any(|(_, r)| {
            r.as_ref().is_ok_and(|v| {
                arr(v).is_some()
                    || obj(v).is_some_and(|o| {
                        ["traj", "messages", "conversation"]
                            .iter()
                            .any(|k| o.contains_key(*k))
                    })
            })
        });
        if conversations {
            for (n, (line, item)) in items.iter().enumerate() {
                ctx.start_trace(Some(n), format);
                match item {
                    // One unreadable conversation is skipped; the others are still replayed.
                    Ok(v) => {
                        if let Err(e) = conversation_value(ctx, v, *line) {
                            ctx.skip(*line, format!("conversation {n}: {}", e.message));
                        }
                    }
                    Err(e) => ctx.skip(*line, format!("conversation {n}: {e}")),
                }
            }
        } else {
            ctx.start_trace(None, format);
            header(ctx, items.first().map_or(1, |i| i.0), &Map::new());
            conversation(ctx, &items);
        }
        return Ok(());
    }
    if let Root::Value(v) = root {
        ctx.start_trace(None, format);
        conversation_value(ctx, v, ctx.line_of(v))?;
    }
    Ok(())
}

fn header(ctx: &mut DocCtx, line: u64, wrapper: &Map<String, Value>) {
    let mut extra = Map::new();
    for k in ["task_id", "reward", "trial"] {
        if let Some(v) = wrapper.get(k) {
            extra.insert(k.to_string(), v.clone());
        }
    }
    let source = if wrapper.contains_key("traj") && wrapper.contains_key("info") {
        Some("tau-bench".to_string())
    } else {
        None
    };
    ctx.record(
        line,
        Record::Header(Box::new(Header {
            format: "openai-chat".into(),
            version: None,
            source,
            extra,
            ..Default::default()
        })),
    );
}

/// One conversation given as a value: a message list, or an object holding one.
fn conversation_value(
    ctx: &mut DocCtx,
    v: &serde_json::value::RawValue,
    line: u64,
) -> Result<(), TraceError> {
    if let Some(items) = arr(v) {
        header(ctx, line, &Map::new());
        let items: Vec<Item> = items.into_iter().map(|r| (ctx.line_of(r), Ok(r))).collect();
        conversation(ctx, &items);
        return Ok(());
    }
    if let Ok(w) = serde_json::from_str::<Wrapper>(v.get()) {
        // Fast path: one pass over the conversation splits its message list too.
        if let Some(items) = w.list() {
            let mut wrapper = Map::new();
            for (k, r) in [
                ("task_id", w.task_id),
                ("reward", w.reward),
                ("trial", w.trial),
            ] {
                if let Some(r) = r {
                    let v = serde_json::from_str(r.get()).unwrap_or(Value::Null);
                    wrapper.insert(k.into(), v);
                }
            }
            // Only the presence of `traj` and `info` matters (tau-bench's shape).
            if w.traj.is_some() {
                wrapper.insert("traj".into(), Value::Bool(true));
            }
            if w.info.is_some() {
                wrapper.insert("info".into(), Value::Bool(true));
            }
            header(ctx, line, &wrapper);
            let items: Vec<Item> = items.iter().map(|&r| (ctx.line_of(r), Ok(r))).collect();
            conversation(ctx, &items);
            return Ok(());
        }
    }
    let Some(o) = obj(v) else {
        return Err(ctx.error_at(
            v,
            "a conversation must be a list of messages or an object holding one",
        ));
    };
    let list = ["traj", "messages", "conversation", "history"]
        .iter()
        .find_map(|k| o.get(*k).copied());
    match list.and_then(arr) {
        Some(items) => {
            // Only the header's keys, not the whole conversation, are parsed into values.
            let mut wrapper = Map::new();
            for k in ["task_id", "reward", "trial", "traj", "info"] {
                if let Some(r) = o.get(k) {
                    let v = match k {
                        "traj" | "info" => Value::Bool(true),
                        _ => serde_json::from_str(r.get()).unwrap_or(Value::Null),
                    };
                    wrapper.insert(k.into(), v);
                }
            }
            header(ctx, line, &wrapper);
            let items: Vec<Item> = items.into_iter().map(|r| (ctx.line_of(r), Ok(r))).collect();
            conversation(ctx, &items);
            Ok(())
        }
        None if o.contains_key("role") => {
            header(ctx, line, &Map::new());
            conversation(ctx, &[(line, Ok(v))]);
            Ok(())
        }
        None => Err(ctx.error_at(
            v,
            "no message list found (expected `traj`, `messages` or `conversation`)",
        )),
    }
}

/// A conversation object as the fast path reads it: the message list split in the same pass, the
/// header's keys borrowed, everything else skipped. Deserializing fails (and the general path
/// built on [`obj`] takes over, with the same results) on anything unusual: a list key whose
/// value is not a list, a key given twice.
#[derive(serde::Deserialize)]
struct Wrapper<'a> {
    #[serde(default, borrow, deserialize_with = "list")]
    traj: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow, deserialize_with = "list")]
    messages: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow, deserialize_with = "list")]
    conversation: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow, deserialize_with = "list")]
    history: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow, deserialize_with = "present")]
    task_id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    reward: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    trial: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    info: Option<&'a RawValue>,
}

impl<'a> Wrapper<'a> {
    /// The message list, under the first of `traj`, `messages`, `conversation`, `history`
    /// present (the general path's order). `None` when there is none.
    fn list(&self) -> Option<&[&'a RawValue]> {
        [
            &self.traj,
            &self.messages,
            &self.conversation,
            &self.history,
        ]
        .into_iter()
        .find_map(|l| l.as_deref())
    }
}

/// A key that is present, whatever its value (`null` included, unlike `Option`'s default).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue as serde::Deserialize>::deserialize(d).map(Some)
}

/// A key whose value must be a list (`null` or anything else fails the fast path).
fn list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<&'de RawValue>>, D::Error> {
    <Vec<&RawValue> as serde::Deserialize>::deserialize(d).map(Some)
}

/// A tool call as parsed from an assistant message.
pub(crate) struct ToolCall {
    pub id: Option<String>,
    pub name: String,
    /// The arguments as recorded (JSON text).
    pub arguments: String,
    /// Parsed arguments (an object), or `None` when they are not a JSON object.
    pub params: Option<Value>,
    /// Why the entry is malformed (`tool call 1: ...`), or `None` for a well-formed call. A
    /// malformed entry is kept in its message's list, so that a result without an id still
    /// links to the entry it answers, but yields no records: it is reported and counted as a
    /// skipped record, and its sibling calls are replayed.
    pub malformed: Option<String>,
}

impl ToolCall {
    /// A placeholder for a malformed tool-call entry (see [`ToolCall::malformed`]); keeps the
    /// entry's `id` when it has a string one, so its result still links to it.
    pub(crate) fn malformed(tc: &Value, why: String) -> ToolCall {
        ToolCall {
            id: match tc.get("id") {
                Some(Value::String(s)) => Some(s.clone()),
                _ => None,
            },
            name: String::new(),
            arguments: String::new(),
            params: None,
            malformed: Some(why),
        }
    }
}

/// A parsed message with its calls, before records are emitted.
pub(crate) struct Parsed {
    pub line: u64,
    pub role: String,
    pub content: Option<String>,
    pub name: Option<String>,
    pub tool_call_id: Option<String>,
    /// SWE-agent links a result to several calls.
    pub tool_call_ids: Vec<String>,
    pub calls: Vec<ToolCall>,
    pub extra: Map<String, Value>,
    /// Non-fatal problems (a `content` that is not text).
    pub warnings: Vec<String>,
    /// A result the recording marks as failed (Anthropic `tool_result` with `is_error`).
    pub is_error: bool,
    /// Not a source record of its own: a further message read from the same source record
    /// (an Anthropic user message's second `tool_result`), counted once with the first.
    pub part: bool,
    /// A source record that is read and counted but gives no record (an OpenAI Responses
    /// `reasoning` item, a `function_call` merged into the call before it).
    pub ignored: bool,
    /// An assistant message made from an OpenAI Responses `function_call` item: the calls of
    /// the items right after it join it (one model turn, one cell).
    pub responses_call: bool,
}

/// Parses one chat message object.
///
/// Errors: the reason the message is malformed.
pub(crate) fn parse_message(m: &Map<String, Value>, line: u64) -> Result<Parsed, String> {
    let role = opt_str(m, "role")?.ok_or_else(|| "a message needs a `role`".to_string())?;
    let mut calls = Vec::new();
    match m.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) => {
            // One malformed entry does not hide its siblings (see `ToolCall::malformed`).
            for (i, tc) in list.iter().enumerate() {
                calls
                    .push(tool_call(tc).unwrap_or_else(|e| {
                        ToolCall::malformed(tc, format!("tool call {i}: {e}"))
                    }));
            }
        }
        Some(_) => return Err("field `tool_calls` must be a list".into()),
    }
    if let Some(fc) = m.get("function_call").filter(|v| !v.is_null()) {
        let mut wrapped = Map::new();
        wrapped.insert("function".into(), fc.clone());
        let wrapped = Value::Object(wrapped);
        calls.push(
            tool_call(&wrapped)
                .unwrap_or_else(|e| ToolCall::malformed(&wrapped, format!("function_call: {e}"))),
        );
    }
    let tool_call_ids = match m.get("tool_call_ids") {
        Some(Value::Array(ids)) => ids
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let known = [
        "role",
        "content",
        "name",
        "tool_call_id",
        "tool_calls",
        "function_call",
        "tool_call_ids",
    ];
    let mut warnings = Vec::new();
    let content = m
        .get("content")
        .and_then(|c| content_text_checked(c, &mut warnings));
    Ok(Parsed {
        line,
        role,
        content,
        name: opt_str(m, "name")?,
        tool_call_id: opt_str(m, "tool_call_id")?,
        tool_call_ids,
        calls,
        extra: m
            .iter()
            .filter(|(k, _)| !known.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        warnings,
        is_error: false,
        part: false,
        ignored: false,
        responses_call: false,
    })
}

fn tool_call(tc: &Value) -> Result<ToolCall, String> {
    let Value::Object(tc) = tc else {
        return Err("must be an object".into());
    };
    let f = match tc.get("function") {
        Some(Value::Object(f)) => f,
        Some(_) => return Err("`function` must be an object".into()),
        // Invariant also accepts a bare `{name, arguments}`.
        None => tc,
    };
    let name = match f.get("name") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err("`function.name` must be a non-empty string".into()),
    };
    let (arguments, params) = match f.get("arguments") {
        None | Some(Value::Null) => text_arguments(None),
        Some(Value::String(s)) => text_arguments(Some(s.clone())),
        Some(v @ Value::Object(_)) => (v.to_string(), Some(v.clone())),
        Some(v) => (v.to_string(), None),
    };
    Ok(ToolCall {
        id: match tc.get("id") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        },
        name,
        arguments,
        params,
        malformed: None,
    })
}

/// Arguments recorded as JSON text (or absent): the text kept as recorded, and the params parsed
/// from it when it is a JSON object (blank text counts as `{}`).
pub(crate) fn text_arguments(text: Option<String>) -> (String, Option<Value>) {
    let Some(s) = text else {
        return ("{}".to_string(), Some(Value::Object(Map::new())));
    };
    let parsed = if s.trim().is_empty() {
        Some(Value::Object(Map::new()))
    } else {
        // Lone surrogate escapes in the arguments text read as Python's json reads them
        // (see `surrogates`).
        let fixed = super::surrogates::escape_lone_surrogates_inner(&s);
        let text = fixed.as_ref().map_or(s.as_str(), |f| f.0.as_str());
        // `NaN` / `Infinity` as Python's json reads them (see `nonfinite`).
        let nonfinite = super::nonfinite::rewrite(text);
        match super::doc::value(nonfinite.as_ref().map_or(text, |f| f.0.as_str())) {
            Ok(v @ Value::Object(_)) => Some(v),
            _ => None,
        }
    };
    (s, parsed)
}

/// Why arguments text is not a JSON object, for the warning (issue 6 T7-17): `are not valid
/// JSON (<parser error>): <the text, cut at 80 characters>`, `are nested N levels deep ...`, or
/// `are a JSON array, not an object` (string, number, ...).
pub(crate) fn arguments_problem(text: &str) -> String {
    let w = super::doc::not_object(text, "");
    if let Some(rest) = w.strip_prefix(" is nested") {
        return format!("are nested{rest}");
    }
    let fixed = super::surrogates::escape_lone_surrogates_inner(text);
    let t = fixed.as_ref().map_or(text, |f| f.0.as_str());
    let nonfinite = super::nonfinite::rewrite(t);
    match super::doc::value(nonfinite.as_ref().map_or(t, |f| f.0.as_str())) {
        Ok(v) => {
            let what = match v {
                Value::Array(_) => "a JSON array",
                Value::String(_) => "a JSON string",
                Value::Number(_) => "a JSON number",
                Value::Bool(_) => "a JSON boolean",
                Value::Null => "JSON null",
                Value::Object(_) => "a JSON object",
            };
            format!("are {what}, not an object")
        }
        Err(e) => {
            let shown: String = text.chars().take(80).collect();
            let more = if text.chars().count() > 80 { "..." } else { "" };
            format!("are not valid JSON ({e}): `{shown}`{more}")
        }
    }
}

/// Text borrowed from the document when it holds no escapes (`null` is `None`). Used by the fast
/// message reader so a message's text is copied once, into its record.
#[derive(Default)]
struct Text<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or null")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(v))))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl Text<'_> {
    fn owned(self) -> Option<String> {
        self.0.map(Cow::into_owned)
    }
}

/// A tool call as the fast message reader takes it: `{id, function: {name, arguments}}` with
/// string (or null) values; other keys (`type`) are ignored, as [`tool_call`] ignores them.
#[derive(serde::Deserialize)]
struct FastCall<'a> {
    #[serde(default, borrow)]
    id: Text<'a>,
    #[serde(borrow)]
    function: FastFunction<'a>,
}

#[derive(serde::Deserialize)]
struct FastFunction<'a> {
    #[serde(borrow)]
    name: Text<'a>,
    #[serde(default, borrow)]
    arguments: Text<'a>,
}

/// One message as the fast reader takes it, straight from the document: every known key with a
/// value of the common type (strings or null; `tool_calls` a list of [`FastCall`]), other keys
/// kept as values. Anything else (a key given twice, `function_call`, `tool_call_ids`, content
/// parts, a value of a wrong type, an empty function name) fails, and [`parse_message`] reads
/// the message instead, with its errors and warnings.
struct FastMessage<'a> {
    /// Address of the first key's text when it is borrowed from the document (0 otherwise):
    /// [`fast_conversation`] finds the message's line from it.
    at: usize,
    role: Text<'a>,
    content: Text<'a>,
    name: Text<'a>,
    tool_call_id: Text<'a>,
    tool_calls: Option<Vec<FastCall<'a>>>,
    extra: Map<String, Value>,
}

impl<'de> Deserialize<'de> for FastMessage<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FastMessage<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a chat message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut m = FastMessage {
                    at: 0,
                    role: Text(None),
                    content: Text(None),
                    name: Text(None),
                    tool_call_id: Text(None),
                    tool_calls: None,
                    extra: Map::new(),
                };
                let mut seen = [false; 5];
                let mut once = |i: usize| {
                    if std::mem::replace(&mut seen[i], true) {
                        Err(<A::Error as de::Error>::custom("duplicate key"))
                    } else {
                        Ok(())
                    }
                };
                let mut first = true;
                while let Some(Text(Some(key))) = map.next_key::<Text<'de>>()? {
                    if std::mem::take(&mut first) {
                        m.at = borrowed_at(&key);
                    }
                    match &*key {
                        "role" => {
                            once(0)?;
                            m.role = map.next_value()?;
                        }
                        "content" => {
                            once(1)?;
                            m.content = map.next_value()?;
                        }
                        "name" => {
                            once(2)?;
                            m.name = map.next_value()?;
                        }
                        "tool_call_id" => {
                            once(3)?;
                            m.tool_call_id = map.next_value()?;
                        }
                        "tool_calls" => {
                            once(4)?;
                            m.tool_calls = map.next_value()?;
                        }
                        "function_call" | "tool_call_ids" => {
                            return Err(de::Error::custom("left to the general reader"));
                        }
                        _ => {
                            let key = key.into_owned();
                            if m.extra.contains_key(&key) {
                                return Err(de::Error::custom("duplicate key"));
                            }
                            let v: Value = map.next_value()?;
                            m.extra.insert(key, v);
                        }
                    }
                }
                Ok(m)
            }
        }
        d.deserialize_map(V)
    }
}

/// Reads one message in a single pass, straight into [`Parsed`]'s fields, or `None` when it is
/// anything but the common shape (see [`FastMessage`]); the caller then uses [`parse_message`].
fn parse_fast(r: &RawValue, line: u64) -> Option<Parsed> {
    from_fast(serde_json::from_str(r.get()).ok()?, line)
}

/// [`Parsed`] from a message read by [`FastMessage`], or `None` when the general reader must
/// judge it (no role, an empty function name).
fn from_fast(m: FastMessage, line: u64) -> Option<Parsed> {
    fast_convertible(&m).then(|| convert_fast(m, line))
}

/// True when [`convert_fast`] keeps everything of `m`: it has a role, and every tool call a
/// non-empty function name (anything else is left to the general reader, for its errors).
fn fast_convertible(m: &FastMessage) -> bool {
    m.role.0.is_some()
        && m.tool_calls
            .iter()
            .flatten()
            .all(|c| c.function.name.0.as_deref().is_some_and(|n| !n.is_empty()))
}

/// [`Parsed`] from a message that passed [`fast_convertible`].
fn convert_fast(m: FastMessage, line: u64) -> Parsed {
    let mut calls = Vec::with_capacity(m.tool_calls.as_ref().map_or(0, Vec::len));
    for c in m.tool_calls.into_iter().flatten() {
        let name = c.function.name.owned().unwrap_or_default();
        let (arguments, params) = text_arguments(c.function.arguments.owned());
        calls.push(ToolCall {
            id: c.id.owned(),
            name,
            arguments,
            params,
            malformed: None,
        });
    }
    Parsed {
        line,
        role: m.role.owned().unwrap_or_default(),
        content: m.content.owned(),
        name: m.name.owned(),
        tool_call_id: m.tool_call_id.owned(),
        tool_call_ids: Vec::new(),
        calls,
        extra: m.extra,
        warnings: Vec::new(),
        is_error: false,
        part: false,
        ignored: false,
        responses_call: false,
    }
}

/// The address of a key's text when it is borrowed from the document, 0 when it was unescaped
/// into a copy.
#[allow(clippy::ptr_arg)] // the variant is the point: only a borrowed key has an address in the document
fn borrowed_at(key: &Cow<'_, str>) -> usize {
    match key {
        Cow::Borrowed(k) => k.as_ptr() as usize,
        Cow::Owned(_) => 0,
    }
}

/// The list keys of a conversation object, in the order the general reader prefers them.
const LIST_KEYS: [&str; 4] = ["traj", "messages", "conversation", "history"];

/// One conversation object as [`fast_conversation`] takes it: its message lists read straight
/// into [`FastMessage`]s, the header's keys parsed, everything else skipped. It fails where the
/// general path's [`Wrapper`] fails (a list key whose value is not a list, a known key given
/// twice) and wherever a message is not of [`FastMessage`]'s shape.
struct FastConv<'a> {
    /// Address of the first key's text (0 when it is not borrowed or there is none).
    at: usize,
    /// The message lists under [`LIST_KEYS`].
    lists: [Option<Vec<FastMessage<'a>>>; 4],
    /// `task_id`, `reward`, `trial`.
    header: [Option<Value>; 3],
    info: bool,
}

impl<'de> Deserialize<'de> for FastConv<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FastConv<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a conversation object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut c = FastConv {
                    at: 0,
                    lists: [None, None, None, None],
                    header: [None, None, None],
                    info: false,
                };
                let mut seen = [false; 8];
                let mut once = |i: usize| {
                    if std::mem::replace(&mut seen[i], true) {
                        Err(<A::Error as de::Error>::custom("duplicate key"))
                    } else {
                        Ok(())
                    }
                };
                let mut first = true;
                while let Some(Text(Some(key))) = map.next_key::<Text<'de>>()? {
                    if std::mem::take(&mut first) {
                        c.at = borrowed_at(&key);
                    }
                    if let Some(i) = LIST_KEYS.iter().position(|k| *k == key) {
                        once(i)?;
                        c.lists[i] = Some(map.next_value()?);
                    } else if let Some(i) = ["task_id", "reward", "trial"]
                        .iter()
                        .position(|k| *k == key)
                    {
                        once(4 + i)?;
                        c.header[i] = Some(map.next_value()?);
                    } else if key == "info" {
                        once(7)?;
                        map.next_value::<de::IgnoredAny>()?;
                        c.info = true;
                    } else {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
                Ok(c)
            }
        }
        d.deserialize_map(V)
    }
}

/// Lines of increasing byte offsets of a text, counted as they are asked for.
struct LineCursor<'a> {
    text: &'a [u8],
    offset: usize,
    line: u64,
}

impl LineCursor<'_> {
    /// One-based line of the `{` that opens the object whose first key's text starts at
    /// address `at`; `None` when `at` is not inside the text just after `{` and whitespace, or
    /// lies before an offset already asked for.
    fn object_line(&mut self, at: usize) -> Option<u64> {
        let base = self.text.as_ptr() as usize;
        let key = at.checked_sub(base).filter(|&k| k <= self.text.len())?;
        let quote = key.checked_sub(1).filter(|&q| self.text[q] == b'"')?;
        let open = self.text[..quote]
            .iter()
            .rposition(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
            .filter(|&o| self.text[o] == b'{')?;
        if open < self.offset {
            return None;
        }
        self.line += memchr::memchr_iter(b'\n', &self.text[self.offset..open]).count() as u64;
        self.offset = open;
        Some(self.line)
    }
}

/// Converts one conversation of a file read conversation by conversation (a list element or a
/// line of JSON Lines; `raw` is a slice of `ctx`'s text, starting at one-based `line`): a
/// conversation object of the common shape in one pass over its text ([`FastConv`]), anything
/// else as [`conversation_value`] reads it, with the same records.
///
/// Errors: as [`conversation_value`].
pub(crate) fn conversation_unit(
    ctx: &mut DocCtx,
    raw: &RawValue,
    line: u64,
) -> Result<(), TraceError> {
    if conversation_fast(ctx, raw.get(), line) {
        return Ok(());
    }
    conversation_value(ctx, raw, line)
}

/// The common-shape conversation object in `text` (one-based `line`), converted into `ctx`'s
/// events in one pass when [`fast_conversation`] reads it (which also proves `text` valid
/// JSON, so callers may skip validating it first); `false`, with nothing emitted, otherwise.
pub(crate) fn conversation_fast(ctx: &mut DocCtx, text: &str, line: u64) -> bool {
    if !text.starts_with('{') {
        return false;
    }
    let Ok(c) = serde_json::from_str::<FastConv>(text) else {
        return false;
    };
    match fast_conversation(FastParsed(c), text.as_bytes(), line) {
        Some(conv) => {
            emit_fast(ctx, conv, line);
            true
        }
        None => false,
    }
}

/// A conversation object parsed by [`parse_fast_prefix`], not yet converted.
pub(crate) struct FastParsed<'a>(FastConv<'a>);

/// What [`parse_fast_prefix`] found at the start of a byte slice.
#[allow(clippy::large_enum_variant)] // one per list element, returned once: no need to box it
pub(crate) enum FastPrefix<'a> {
    /// A conversation object of [`FastConv`]'s shape, and its length in bytes (the index just
    /// after its closing `}`).
    Parsed(FastParsed<'a>, usize),
    /// The slice ends inside the value: more input may make it one of the others.
    Incomplete,
    /// Anything else (not an object, invalid JSON, another shape): the general reader's.
    Other,
}

/// Parses the JSON value at the start of `bytes` (no leading whitespace) as a conversation
/// object of the common shape ([`FastConv`]), in the same single pass that finds where the
/// value ends: the streaming reader's way to take a list element without scanning it first.
/// Strings are checked to be UTF-8 as they are read; a value that parses here is valid JSON.
pub(crate) fn parse_fast_prefix(bytes: &[u8]) -> FastPrefix<'_> {
    if bytes.first() != Some(&b'{') {
        return FastPrefix::Other;
    }
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<FastConv>();
    match values.next() {
        Some(Ok(c)) => FastPrefix::Parsed(FastParsed(c), values.byte_offset()),
        Some(Err(e)) if e.is_eof() => FastPrefix::Incomplete,
        Some(Err(_)) => FastPrefix::Other,
        None => FastPrefix::Incomplete,
    }
}

/// Emits a conversation read by [`fast_conversation`] (starting at one-based `line`) into
/// `ctx`: its header record, then its messages' records.
pub(crate) fn emit_fast(ctx: &mut DocCtx, conv: FastConversation, line: u64) {
    let (wrapper, msgs) = conv;
    header(ctx, line, &wrapper);
    emit(ctx, msgs);
}

/// A conversation read by [`fast_conversation`]: its header's keys and its parsed messages.
pub(crate) type FastConversation = (Map<String, Value>, Vec<Option<Parsed>>);

/// A conversation object of the common shape (its message list under the first of
/// [`LIST_KEYS`] present, every message of [`FastMessage`]'s shape), parsed from `text` (which
/// starts at one-based `line`; the parsed keys borrow from it where they hold no escapes): the
/// header's keys and the converted messages, each with its line. `None` for anything else
/// (nothing is emitted; the general reader takes the conversation).
pub(crate) fn fast_conversation(
    parsed: FastParsed,
    text: &[u8],
    line: u64,
) -> Option<FastConversation> {
    let mut c = parsed.0;
    let mut lines = LineCursor {
        text,
        offset: 0,
        line,
    };
    lines.object_line(c.at)?;
    let traj = c.lists[0].is_some();
    let list = c.lists.iter_mut().find_map(Option::take)?;
    let mut msgs = Vec::with_capacity(list.len());
    for m in list {
        let l = lines.object_line(m.at)?;
        if !fast_convertible(&m) {
            return None;
        }
        msgs.push(Some(convert_fast(m, l)));
    }
    let mut wrapper = Map::new();
    for (k, v) in ["task_id", "reward", "trial"]
        .into_iter()
        .zip(std::mem::take(&mut c.header))
    {
        if let Some(v) = v {
            wrapper.insert(k.into(), v);
        }
    }
    if traj {
        wrapper.insert("traj".into(), Value::Bool(true));
    }
    if c.info {
        wrapper.insert("info".into(), Value::Bool(true));
    }
    Some((wrapper, msgs))
}

/// Links each tool result to the call it answers. Returns, per message index with calls, the
/// index of the result message for each of its calls.
pub(crate) fn link_results(msgs: &[Option<Parsed>]) -> Vec<Vec<Option<usize>>> {
    let mut links: Vec<Vec<Option<usize>>> = msgs
        .iter()
        .map(|m| m.as_ref().map_or(Vec::new(), |m| vec![None; m.calls.len()]))
        .collect();
    // Unanswered calls, oldest first: (message index, call index).
    let mut open: Vec<(usize, usize)> = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        let Some(m) = m else { continue };
        for c in 0..m.calls.len() {
            open.push((i, c));
        }
        if m.role != "tool" && m.role != "function" {
            continue;
        }
        let ids: Vec<&str> = match (&m.tool_call_id, m.tool_call_ids.is_empty()) {
            (Some(id), _) => vec![id.as_str()],
            (None, false) => m.tool_call_ids.iter().map(String::as_str).collect(),
            (None, true) => Vec::new(),
        };
        if ids.is_empty() {
            if let Some((mi, ci)) = open.pop() {
                links[mi][ci] = Some(i);
            }
            continue;
        }
        for id in ids {
            let pos = open.iter().rposition(|&(mi, ci)| {
                msgs[mi].as_ref().and_then(|p| p.calls[ci].id.as_deref()) == Some(id)
            });
            if let Some(pos) = pos {
                let (mi, ci) = open.remove(pos);
                links[mi][ci] = Some(i);
            }
        }
    }
    links
}

/// The recorded status of a call from its result text: tau-bench marks failures with a leading
/// `Error:`; pyAgentic with ``Tool `name` failed:``.
pub(crate) fn status_from_result(content: Option<&str>) -> CallStatus {
    match content {
        None => CallStatus::Ok,
        Some(c) => {
            let c = c.trim_start();
            if c.starts_with("Error:") || (c.starts_with("Tool `") && c.contains("` failed:")) {
                CallStatus::Error
            } else {
                CallStatus::Ok
            }
        }
    }
}

/// Emits the records of one conversation.
pub(crate) fn conversation(ctx: &mut DocCtx, items: &[Item]) {
    let mut msgs: Vec<Option<Parsed>> = Vec::with_capacity(items.len());
    for (line, item) in items {
        // Anthropic Messages and OpenAI Responses shapes (`super::dialects`): one source
        // record may give several messages, or join the call before it.
        if let Ok(r) = item {
            if let Some(parsed) = super::dialects::parse(r, *line) {
                match parsed {
                    Ok(list) => {
                        for mut p in list {
                            for w in std::mem::take(&mut p.warnings) {
                                ctx.warn(*line, w);
                            }
                            super::dialects::push(&mut msgs, p);
                        }
                    }
                    Err(e) => {
                        ctx.skip(*line, format!("malformed message: {e}"));
                        msgs.push(None);
                    }
                }
                continue;
            }
        }
        let parsed = match item {
            Ok(r) => match parse_fast(r, *line) {
                Some(p) => Ok(p),
                None => match map(r) {
                    Some(m) => parse_message(&m, *line),
                    None => Err(super::doc::not_object(r.get(), "a message")),
                },
            },
            Err(e) => Err(e.clone()),
        };
        match parsed {
            Ok(mut p) => {
                for w in std::mem::take(&mut p.warnings) {
                    ctx.warn(*line, w);
                }
                msgs.push(Some(p))
            }
            Err(e) => {
                ctx.skip(*line, format!("malformed message: {e}"));
                msgs.push(None);
            }
        }
    }
    emit(ctx, msgs);
}

/// Emits records for parsed messages (shared with SWE-agent). The messages' texts move into
/// their records; a result's text is copied only into the call it answers.
pub(crate) fn emit(ctx: &mut DocCtx, mut msgs: Vec<Option<Parsed>>) {
    let links = link_results(&msgs);
    let mut cell = 0u64;
    for i in 0..msgs.len() {
        // A result always follows the calls it answers, so a message is no longer needed once
        // its own records are emitted.
        let Some(m) = msgs[i].take() else { continue };
        if !m.part {
            ctx.accept();
        }
        if m.ignored {
            continue;
        }
        let line = m.line;
        let Parsed {
            role,
            content,
            name,
            tool_call_id,
            tool_call_ids,
            calls,
            extra,
            ..
        } = m;
        let has_text = content.as_deref().is_some_and(|c| !c.is_empty());
        let msg = |kind: MessageKind, role: String, content: Option<String>| {
            let mut r = MessageRecord::new(kind);
            r.role = Some(role);
            r.content = content;
            r.extra = extra;
            r
        };
        match role.as_str() {
            "assistant" => {
                ctx.record(
                    line,
                    Record::from(InferenceRecord {
                        inferred: true,
                        ..Default::default()
                    }),
                );
                // Malformed entries are reported and skipped; the message's other calls stay.
                let well_formed = calls.iter().filter(|c| c.malformed.is_none()).count();
                if has_text || well_formed == 0 {
                    let r = msg(MessageKind::Assistant, role, content);
                    ctx.record(line, Record::Message(Box::new(r)));
                }
                if well_formed == 0 {
                    for c in &calls {
                        if let Some(why) = &c.malformed {
                            ctx.skip(line, format!("malformed tool call: {why}"));
                        }
                    }
                    continue;
                }
                ctx.record(
                    line,
                    Record::Cell(CellRecord {
                        index: Some(cell),
                        ..Default::default()
                    }),
                );
                for (ci, c) in calls.into_iter().enumerate() {
                    // A skipped entry keeps its position: the calls after it are numbered by
                    // their index in `tool_calls`.
                    if let Some(why) = c.malformed {
                        ctx.skip(line, format!("malformed tool call: {why}"));
                        continue;
                    }
                    let mut tm = MessageRecord::new(MessageKind::ToolCall);
                    tm.role = Some("assistant".into());
                    tm.id = c.id.clone();
                    tm.name = Some(c.name.clone());
                    let tm_args = if c.params.is_none() {
                        c.arguments.clone()
                    } else {
                        String::new()
                    };
                    tm.arguments = Some(c.arguments);
                    ctx.record(line, Record::Message(Box::new(tm)));
                    if c.params.is_none() {
                        ctx.warn(
                            line,
                            format!(
                                "arguments of tool call `{}` {}; replayed with no params (the text stays on its `tool_call` message)",
                                c.name,
                                arguments_problem(&tm_args)
                            ),
                        );
                    }
                    let result = links[i][ci].and_then(|r| msgs[r].as_ref());
                    let status = match result {
                        Some(r) if r.is_error => CallStatus::Error,
                        Some(r) => status_from_result(r.content.as_deref()),
                        None => CallStatus::Unknown,
                    };
                    let text = result.and_then(|r| r.content.as_deref());
                    let call = CallRecord {
                        cell: Some(cell),
                        index: Some(ci as u64),
                        raw_key: Some(c.name.into()),
                        action_key: None,
                        params: c.params.as_ref().map_or(Params::none(), Params::from_value),
                        status,
                        error: match status {
                            CallStatus::Error => text.map(str::to_string),
                            _ => None,
                        },
                        result: text.map_or(RawJson::none(), RawJson::from_text),
                        start: None,
                        end: None,
                        call_id: c.id,
                    };
                    ctx.record(line, Record::from(call));
                }
                cell += 1;
            }
            "tool" | "function" => {
                let mut r = msg(MessageKind::ToolResult, role, content);
                r.name = name;
                r.tool_call_id = tool_call_id.or_else(|| tool_call_ids.into_iter().next());
                ctx.record(line, Record::Message(Box::new(r)));
            }
            _ => {
                let kind = MessageKind::from_role(&role);
                let mut r = msg(kind, role, content);
                r.name = name;
                ctx.record(line, Record::Message(Box::new(r)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::trace::{read_str, Event, Format, Record};

    fn records(text: &str) -> Vec<(String, u64, Record)> {
        let mut trace = String::new();
        read_str("c.json", text, None)
            .unwrap()
            .filter_map(|e| match e {
                Event::TraceStart(t) => {
                    trace = t.name;
                    None
                }
                Event::Record { line, record } => Some((trace.clone(), line, record)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn tau_bench_shape_yields_numbered_traces_and_statuses() {
        let text = r#"[
{"task_id": 1, "reward": 1.0, "info": {}, "traj": [
  {"role": "user", "content": "hi"},
  {"role": "assistant", "content": null, "tool_calls": [
     {"id": "c1", "type": "function", "function": {"name": "get_user_details", "arguments": "{\"user_id\":\"u1\"}"}}]},
  {"role": "tool", "tool_call_id": "c1", "name": "get_user_details", "content": "Error: user not found"}
]},
{"traj": [
  {"role": "assistant", "content": "ok", "tool_calls": [
     {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
     {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]},
  {"role": "tool", "tool_call_id": "c2", "content": "fine"}
]}
]"#;
        let recs = records(text);
        let calls: Vec<(String, u64, String, &str)> = recs
            .iter()
            .filter_map(|(t, l, r)| match r {
                Record::Call(c) => Some((t.clone(), *l, c.raw().to_string(), c.status.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            vec![
                (
                    "c.json#0".to_string(),
                    4,
                    "get_user_details".to_string(),
                    "error"
                ),
                ("c.json#1".to_string(), 9, "a".to_string(), "unknown"),
                ("c.json#1".to_string(), 9, "b".to_string(), "ok"),
            ]
        );
        let Record::Header(h) = &recs[0].2 else {
            panic!()
        };
        assert_eq!(h.source.as_deref(), Some("tau-bench"));
        assert_eq!(h.extra.get("task_id"), Some(&serde_json::json!(1)));
    }

    /// The single-pass conversation reader and the general one agree on unusual wrappers: a
    /// `null` list key (which hides later ones), a key given twice (the last wins), a `null`
    /// header value (kept as null).
    #[test]
    fn conversation_wrappers_with_null_and_duplicate_keys() {
        let text = r#"[
{"task_id": null, "traj": [{"role": "user", "content": "a"}]},
{"traj": null, "messages": [{"role": "user", "content": "b"}]},
{"messages": [{"role": "user", "content": "c"}], "messages": [{"role": "user", "content": "d"}]},
{"messages": "no", "history": [{"role": "user", "content": "e"}]}
]"#;
        let mut r = read_str("c.json", text, None).unwrap();
        let mut seen = Vec::new();
        for e in r.by_ref() {
            match e {
                Event::TraceStart(t) => seen.push(format!("start {}", t.name)),
                Event::Record {
                    line,
                    record: Record::Message(m),
                } => seen.push(format!("{line}: {}", m.content.unwrap_or_default())),
                Event::Record {
                    line,
                    record: Record::Header(h),
                } => seen.push(format!("{line}: header {:?}", h.extra.get("task_id"))),
                Event::Skipped(s) => seen.push(format!("{}: skipped {}", s.line, s.message)),
                _ => {}
            }
        }
        assert_eq!(
            seen,
            vec![
                "start c.json#0",
                "2: header Some(Null)",
                "2: a",
                "start c.json#1",
                "3: skipped conversation 1: no message list found (expected `traj`, `messages` or `conversation`)",
                "start c.json#2",
                "4: header None",
                "4: d",
                "start c.json#3",
                "5: skipped conversation 3: no message list found (expected `traj`, `messages` or `conversation`)",
            ]
        );
        let s = r.stats();
        assert_eq!((s.read, s.accepted, s.skipped), (4, 2, 2));
    }

    /// The single-pass message reader gives the general reader's results on the common shape
    /// (escaped and unescaped text, extra keys, null values, tool calls) and declines every
    /// message the general reader treats specially.
    #[test]
    fn fast_message_reader_agrees_with_general_reader() {
        use super::{parse_fast, parse_message, Parsed};
        fn show(p: &Parsed) -> String {
            let calls: Vec<String> = p
                .calls
                .iter()
                .map(|c| format!("{:?} {} {} {:?}", c.id, c.name, c.arguments, c.params))
                .collect();
            format!(
                "{} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                p.role,
                p.content,
                p.name,
                p.tool_call_id,
                p.tool_call_ids,
                calls,
                p.extra,
                p.warnings
            )
        }
        let common = [
            r#"{"role": "system", "content": "line one\nline \"two\" \u00e9"}"#,
            r#"{"role": "user", "content": "plain", "x": {"a": [1]}, "y": null}"#,
            r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "book", "arguments": "{\"a\": 1}"}}]}"#,
            r#"{"role": "assistant", "content": "", "tool_calls": [{"id": null, "function": {"name": "f", "arguments": "  "}}, {"function": {"name": "g"}}, {"function": {"name": "h", "arguments": "[1]"}}]}"#,
            r#"{"role": "tool", "tool_call_id": "c1", "name": "book", "content": "Error: no"}"#,
            r#"{"rol\u0065": "user", "tool_calls": null, "name": null}"#,
        ];
        for text in common {
            let raw: Box<serde_json::value::RawValue> = serde_json::from_str(text).unwrap();
            let fast = parse_fast(&raw, 7).expect(text);
            let general = match serde_json::from_str(text).unwrap() {
                serde_json::Value::Object(m) => parse_message(&m, 7).unwrap(),
                _ => unreachable!(),
            };
            assert_eq!(show(&fast), show(&general), "{text}");
            assert_eq!(fast.line, 7);
        }
        let declined = [
            r#"{"content": "no role"}"#,
            r#"{"role": null}"#,
            r#"{"role": 3}"#,
            r#"{"role": "user", "content": 5}"#,
            r#"{"role": "user", "content": [{"type": "text", "text": "a"}]}"#,
            r#"{"role": "user", "role": "assistant"}"#,
            r#"{"role": "user", "x": 1, "x": 2}"#,
            r#"{"role": "assistant", "function_call": {"name": "f", "arguments": "{}"}}"#,
            r#"{"role": "tool", "tool_call_ids": ["a", "b"]}"#,
            r#"{"role": "assistant", "tool_calls": [{"name": "bare", "arguments": "{}"}]}"#,
            r#"{"role": "assistant", "tool_calls": [{"function": {"name": ""}}]}"#,
            r#"{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}"#,
            r#"{"role": "assistant", "tool_calls": [{"id": 4, "function": {"name": "f"}}]}"#,
            r#"{"role": "assistant", "tool_calls": {"function": {"name": "f"}}}"#,
            r#"{"role": "tool", "tool_call_id": 9}"#,
            r#"["role", "user"]"#,
        ];
        for text in declined {
            let raw: Box<serde_json::value::RawValue> = serde_json::from_str(text).unwrap();
            assert!(parse_fast(&raw, 1).is_none(), "{text}");
        }
    }

    /// The streaming reader ([`crate::trace::stream`], one conversation at a time, each of the
    /// common shape in one pass) gives the whole-document reader's events, lines, warnings and
    /// counts on every well-formed list of conversations, and declines other documents (which
    /// the whole-document reader then reads as before).
    #[test]
    fn one_pass_reader_agrees_with_general_path() {
        use crate::trace::doc::read_document_with;
        use std::path::Path;
        fn events(text: impl AsRef<[u8]>, format: Option<Format>, one_pass: bool) -> String {
            match read_document_with(
                Path::new("c.json"),
                text.as_ref().to_vec(),
                format,
                one_pass,
            ) {
                Ok(mut r) => {
                    let events: Vec<Event> = r.by_ref().collect();
                    format!("{events:#?}\n{:?} {:?}", r.stats(), r.format())
                }
                Err(e) => format!("error {e}"),
            }
        }
        fn one_pass_accepts(text: &str) -> bool {
            let none: Box<dyn std::io::Read + Send> = Box::new(std::io::empty());
            matches!(
                crate::trace::stream::open(
                    Path::new("c.json"),
                    none,
                    text.as_bytes().to_vec(),
                    None
                ),
                Ok(Ok(_))
            )
        }
        let tau = r#"[
  {
    "task_id": 7, "reward": 0.5, "info": {"task": {"actions": [{"name": "x"}]}}, "trial": null,
    "traj": [
      {"role": "system", "content": "policy:\n\"yes\" \u00e9"},
      {
        "role": "user",
        "content": "yes please"
      },
      {"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "book_reservation", "arguments": "{\"reservation_id\": \"R1\"}"}},
        {"id": "c2", "type": "function", "function": {"name": "get_user_details", "arguments": "[1]"}}]},
      {"role": "tool", "tool_call_id": "c2", "name": "get_user_details", "content": "{\"a\": 1}"},
      {"role": "tool", "tool_call_id": "c1", "name": "book_reservation", "content": "Error: no"}
    ]
  },
	{"messages": [{"role": "user", "content": "hi", "x": [1, {"y": null}]}], "extra": {"k": 1}},
  {"conversation": [], "traj": [{"role": "assistant", "content": "done"}], "messages": [{"role": "user"}]}
]
"#;
        let crlf = tau.replace('\n', "\r\n");
        let minified: String =
            serde_json::to_string(&serde_json::from_str::<serde_json::Value>(tau).unwrap())
                .unwrap();
        for text in [tau, crlf.as_str(), minified.as_str()] {
            assert!(one_pass_accepts(text), "{text}");
            for format in [None, Some(Format::OpenaiChat)] {
                assert_eq!(
                    events(text, format, true),
                    events(text, format, false),
                    "{text}"
                );
            }
        }
        // Invalid UTF-8: the document's warning comes first, then the conversations' records.
        let bad = tau
            .replace("yes please", "yes \u{1} please")
            .replace('\u{1}', "\u{fffd}");
        let bad_bytes = tau.as_bytes().to_vec();
        let at = tau.find("yes please").unwrap() + 3;
        let mut bad_bytes = bad_bytes;
        bad_bytes[at] = 0xff;
        assert!(one_pass_accepts(&bad));
        let shown = events(&bad_bytes, None, true);
        assert_eq!(shown, events(&bad_bytes, None, false));
        assert!(
            shown.contains("invalid UTF-8 replaced by U+FFFD"),
            "{shown}"
        );
        // Records carry the lines of their messages, and the traces the lines of their objects.
        let shown = events(tau, None, true);
        for line in [2, 5, 6, 10, 17, 18] {
            assert!(shown.contains(&format!("line: {line},")), "{line}: {shown}");
        }
        assert!(!shown.contains("line: 7,"), "{shown}");
        // Read one conversation at a time, not all in the one-pass shape: the same events.
        let mixed = [
            r#"[{"traj": [{"role": "user", "content": "a"}]}, {"info": {}}]"#,
            r#"[{"traj": null, "messages": [{"role": "user", "content": "a"}]}]"#,
            r#"[{"traj": [{"role": "user"}], "traj": [{"role": "user"}]}]"#,
            r#"[{"traj": [{"role": "user"}]}, [{"role": "user"}]]"#,
            r#"[{"traj": [{}, {"role": "user", "content": "a"}]}]"#,
            r#"[{"traj": [{"content": "no role"}]}]"#,
            r#"[{"traj": [{"rol\u0065": "user"}]}]"#,
            r#"[{"tr\u0061j": [{"role": "user"}]}]"#,
            r#"[{"traj": [{"role": "user", "content": [{"type": "text", "text": "a"}]}]}]"#,
            r#"[{"traj": [{"role": "assistant", "tool_calls": [{"function": {"name": ""}}]}]}]"#,
        ];
        for text in mixed {
            assert!(one_pass_accepts(text), "{text}");
            for format in [None, Some(Format::OpenaiChat)] {
                assert_eq!(
                    events(text, format, true),
                    events(text, format, false),
                    "{text}"
                );
            }
        }
        let declined = [
            "[]",
            r#"[{"history": [{"role": "user", "content": "a"}]}]"#,
            r#"{"traj": [{"role": "user"}]}"#,
            r#"[{"role": "user"}, [{"role": "user"}]]"#,
        ];
        for text in declined {
            assert!(!one_pass_accepts(text), "{text}");
            for format in [None, Some(Format::OpenaiChat)] {
                assert_eq!(
                    events(text, format, true),
                    events(text, format, false),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn malformed_message_is_skipped_and_counted() {
        let text = r#"[{"role": "user", "content": "hi"}, {"content": "no role"}, {"role": "assistant", "tool_calls": [{"function": {}}]}]"#;
        let mut r = read_str("c.json", text, Some(Format::OpenaiChat)).unwrap();
        let skipped: Vec<String> = r
            .by_ref()
            .filter_map(|e| match e {
                Event::Skipped(s) => Some(s.message),
                _ => None,
            })
            .collect();
        assert_eq!(
            skipped,
            vec![
                "malformed message: a message needs a `role`",
                "malformed tool call: tool call 0: `function.name` must be a non-empty string"
            ]
        );
        // The assistant message is read (it has no well-formed call) and its bad entry is a
        // skipped record of its own.
        let s = r.stats();
        assert_eq!((s.read, s.accepted, s.skipped), (4, 2, 2));
    }

    /// Issue 6 T4-24: a malformed entry of `tool_calls` is skipped alone; its siblings are
    /// replayed with their positions as indices, and results still link to the right calls
    /// (by id, and without ids by position, the malformed entry taking its own result).
    #[test]
    fn malformed_tool_call_keeps_its_siblings() {
        let text = r#"[
{"role": "user", "content": "no"},
{"role": "assistant", "content": null, "tool_calls": [
  {"id": "c1", "function": {"name": "book_flight", "arguments": "{}"}},
  {"id": "c2", "function": {"arguments": "{}"}},
  {"id": "c3", "function": {"name": "cancel_flight", "arguments": "{\"r\": 1}"}},
  7]},
{"role": "tool", "tool_call_id": "c1", "content": "Error: no"},
{"role": "tool", "tool_call_id": "c2", "content": "Error: bad call"},
{"role": "tool", "tool_call_id": "c3", "content": "done"},
{"role": "assistant", "content": null, "tool_calls": [
  {"function": {"name": "a", "arguments": "{}"}},
  {"function": {"name": ""}}]},
{"role": "tool", "content": "Error: answers the malformed entry"},
{"role": "tool", "content": "answers a"},
{"role": "assistant", "function_call": {"name": 3}}
]"#;
        let mut r = read_str("c.json", text, None).unwrap();
        let mut calls = Vec::new();
        let mut skipped = Vec::new();
        for e in r.by_ref() {
            match e {
                Event::Record {
                    line,
                    record: Record::Call(c),
                } => calls.push((
                    line,
                    c.cell,
                    c.index,
                    c.raw().to_string(),
                    c.status.as_str(),
                    c.params.value(),
                )),
                Event::Skipped(s) => skipped.push((s.line, s.message)),
                _ => {}
            }
        }
        assert_eq!(
            calls,
            vec![
                (
                    3,
                    Some(0),
                    Some(0),
                    "book_flight".into(),
                    "error",
                    serde_json::json!({})
                ),
                (
                    3,
                    Some(0),
                    Some(2),
                    "cancel_flight".into(),
                    "ok",
                    serde_json::json!({"r": 1})
                ),
                (
                    11,
                    Some(1),
                    Some(0),
                    "a".into(),
                    "ok",
                    serde_json::json!({})
                ),
            ]
        );
        assert_eq!(
            skipped,
            vec![
                (3, "malformed tool call: tool call 1: `function.name` must be a non-empty string".to_string()),
                (3, "malformed tool call: tool call 3: must be an object".to_string()),
                (11, "malformed tool call: tool call 1: `function.name` must be a non-empty string".to_string()),
                (16, "malformed tool call: function_call: `function.name` must be a non-empty string".to_string()),
            ]
        );
        // 9 messages read and accepted, plus 4 malformed entries read and skipped.
        let s = r.stats();
        assert_eq!((s.read, s.accepted, s.skipped), (13, 9, 4));
    }
}
