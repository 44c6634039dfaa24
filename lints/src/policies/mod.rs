//! Message and state policies replayed over recorded conversations (spec §8, last paragraphs;
//! semantics from pyAgentic, pyagentic-reference §1–§3, following its code at HEAD `d8ca79a`
//! where its docs disagree).
//!
//! **Message policies** shape the *working context* an LLM sees, while the *raw log* of
//! messages is never changed (pyAgentic `state._context` vs `state._messages`):
//!
//! | config `kind` | pyAgentic class | hook | module |
//! |---|---|---|---|
//! | `tool-output-clip` | `ToolOutputClipPolicy` | append time | [`clip`] |
//! | `tool-eviction` | `ToolEvictionPolicy` | compile time | [`eviction`] |
//! | `sliding-window` | `SlidingWindowPolicy` | compile time | [`window`] |
//! | `compaction` | `CompactionPolicy` | compile time | [`compaction`] |
//!
//! The [`context`] simulator runs them as pyAgentic's agent loop does: every message first
//! goes to the raw log, then through the *append chain* (each policy's `on_append` in config
//! order; a raise vetoes the item); before every inference the *compile chain* (each policy's
//! `on_compile` in config order over a copy of the working context; a raise discards only that
//! policy's output) runs and its result is **written back**, so evictions and compactions
//! persist and accumulate.
//!
//! **State policies** (`range`, `regex`, `max-length`, `non-empty`, `one-of`; module [`state`])
//! validate writes to agent-state fields recorded as `state` records, and report each write that
//! would be vetoed, raise without vetoing (pyAgentic's `on_set` swallows errors), or be
//! transformed.
//!
//! Configuration: `[[policies]]` tables, parsed with file:line:col errors by [`config`]. The
//! replay report gets its policy sections from [`observer::PolicyObserver`], which watches the
//! same record stream as the guardrail replay ([`crate::replay::Observer`]) and keeps only the
//! current conversation's working context.

pub mod clip;
pub mod compaction;
pub mod config;
pub mod context;
pub mod eviction;
pub mod observer;
pub mod report;
pub mod state;
pub mod window;

pub use config::PolicyConfig;
pub use context::{CompileCx, Simulator};
pub use observer::PolicyObserver;

use crate::trace::{MessageKind, MessageRecord};
use std::sync::Arc;

/// One message of the simulated raw log / working context, in pyAgentic's shape
/// (pyagentic-reference §3.1), plus the simulator's bookkeeping.
///
/// `pos` is the message's *position*: its 0-based index in the conversation's raw log (the
/// `message` records of the trace in order, not counting `system` messages, which pyAgentic
/// never stores, nor recorded `compaction_summary` messages, which are summariser output, not
/// log entries). A summary made by the simulation has no position.
#[derive(Debug, Clone, PartialEq)]
pub struct Msg {
    /// The pyAgentic kind.
    pub kind: MessageKind,
    /// The role as recorded (see [`Msg::role`] for the default).
    pub role: Option<Arc<str>>,
    content: Option<Arc<str>>,
    nchars: usize,
    /// Tool-call id (`tool_call`, `agent_call`).
    pub id: Option<Arc<str>>,
    /// Tool name (`tool_call`, `tool_result`).
    pub name: Option<Arc<str>>,
    /// Tool-call arguments, JSON text.
    pub arguments: Option<Arc<str>>,
    /// The call a result answers.
    pub tool_call_id: Option<Arc<str>>,
    /// Messages folded into a `compaction_summary`.
    pub compacted_count: Option<u64>,
    /// Raw-log position (see the type docs); `None` for simulated summaries.
    pub pos: Option<u64>,
    /// One-based line of the input record (0 for simulated messages).
    pub line: u64,
    /// Simulator identity of this context entry (0 = not yet assigned).
    pub(crate) uid: u64,
    /// A compile-time policy replaced the content (e.g. an eviction stub).
    pub(crate) replaced: bool,
    /// An inference was sent with this tool result intact.
    pub(crate) seen: bool,
    /// Already reported as a fact at risk.
    pub(crate) at_risk: bool,
}

fn arc(s: &Option<String>) -> Option<Arc<str>> {
    s.as_deref().map(Arc::from)
}

impl Msg {
    /// A message of `kind` with no content (a policy creating a new message starts here).
    pub fn new(kind: MessageKind) -> Msg {
        Msg {
            kind,
            role: None,
            content: None,
            nchars: 0,
            id: None,
            name: None,
            arguments: None,
            tool_call_id: None,
            compacted_count: None,
            pos: None,
            line: 0,
            uid: 0,
            replaced: false,
            seen: false,
            at_risk: false,
        }
    }

    /// A message of `kind` with text content.
    pub fn text(kind: MessageKind, content: &str) -> Msg {
        Msg::new(kind).with_content(Some(content))
    }

    /// The message of a trace record.
    pub fn from_record(r: &MessageRecord) -> Msg {
        let mut m = Msg::new(r.kind.clone());
        m.role = arc(&r.role);
        m.id = arc(&r.id);
        m.name = arc(&r.name);
        m.arguments = arc(&r.arguments);
        m.tool_call_id = arc(&r.tool_call_id);
        m.compacted_count = r.compacted_count;
        m.with_content(r.content.as_deref())
    }

    /// The text content.
    pub fn content(&self) -> Option<&str> {
        self.content.as_deref()
    }

    /// A copy with another content; identity and everything else kept (pyAgentic's
    /// `model_copy(update={"content": ...})`).
    pub fn with_content(&self, content: Option<&str>) -> Msg {
        let mut m = self.clone();
        m.nchars = content.map_or(0, |c| c.chars().count());
        m.content = content.map(Arc::from);
        m
    }

    /// Number of Unicode code points of the content (Python `len(content or "")`), the unit
    /// pyAgentic's clip policy and compaction estimate count in.
    pub fn chars(&self) -> usize {
        self.nchars
    }

    /// The role: as recorded, else the kind's default (pyAgentic class defaults).
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

    /// A tool result in pyAgentic's `isinstance(m, ToolResultMessage)` sense (agent results
    /// included).
    pub fn is_tool_result(&self) -> bool {
        self.kind.is_tool_result()
    }

    /// A tool call in pyAgentic's `isinstance(m, ToolCallMessage)` sense (agent calls included).
    pub fn is_tool_call(&self) -> bool {
        self.kind.is_tool_call()
    }

    /// A compact notation used by tests and the text report: `U(text)`, `A(text)`,
    /// `C(id)`, `R(id: text)`, `AC(id)`, `AR(id: text)`, `SUM(n: text)`, `kind(text)`.
    pub fn notation(&self) -> String {
        let c = self.content().unwrap_or("");
        let id = |x: &Option<Arc<str>>| x.as_deref().unwrap_or("").to_string();
        match &self.kind {
            MessageKind::User => format!("U({c})"),
            MessageKind::Assistant => format!("A({c})"),
            MessageKind::System => format!("SYS({c})"),
            MessageKind::ToolCall => format!("C({})", id(&self.id)),
            MessageKind::AgentCall => format!("AC({})", id(&self.id)),
            MessageKind::ToolResult => format!("R({}: {c})", id(&self.tool_call_id)),
            MessageKind::AgentResult => format!("AR({}: {c})", id(&self.tool_call_id)),
            MessageKind::CompactionSummary => {
                format!("SUM({}: {c})", self.compacted_count.unwrap_or(0))
            }
            MessageKind::Other(k) => format!("{k}({c})"),
        }
    }
}

/// A message policy: pyAgentic's `Policy` protocol restricted to the two hooks that shape the
/// message context (pyagentic-reference §1.2). Every hook exists and is a no-op by default,
/// as for a class that subclasses `Policy`.
///
/// Return conventions follow pyAgentic: `Ok(None)` = unchanged; `Ok(Some(x))` replaces the
/// value (an empty list is a real replacement); `Err(text)` is a raise: in `on_append` it
/// vetoes the item (it is not inserted into the working context and the rest of the chain is
/// skipped), in `on_compile` only this policy's output is discarded (reference §1.5).
pub trait MessagePolicy: Send + Sync {
    /// The policy's id (config `id`, default its kind).
    fn id(&self) -> &str;
    /// The config kind (`tool-output-clip`, ...), or a name for custom policies.
    fn kind(&self) -> &str;
    /// `on_append`: runs on each message as it enters the working context.
    ///
    /// Errors: a raise (vetoes the item).
    fn on_append(&self, _item: &Msg) -> Result<Option<Msg>, String> {
        Ok(None)
    }
    /// `on_compile`: runs over the working context before each inference; the chain's result
    /// is written back.
    ///
    /// Errors: a raise (this policy's output is discarded; later policies still run).
    fn on_compile(&self, _cx: &mut CompileCx, _items: &[Msg]) -> Result<Option<Vec<Msg>>, String> {
        Ok(None)
    }
}

/// Python's `items[cut:]` start after pyAgentic's pair adjustment (`SlidingWindowPolicy`,
/// `CompactionPolicy`): `cut = len - keep`, then advanced while the message at `cut` is a tool
/// result. Only *leading* results are skipped, so with parallel calls recorded as
/// call,call,result,result a result can still lose its call (reference §2.3). Returns a value
/// in `0..=len`.
pub(crate) fn pair_safe_cut(items: &[Msg], keep: i64) -> usize {
    let len = items.len() as i64;
    let mut cut = len.saturating_sub(keep);
    if cut < 0 {
        // Python: a negative start counts from the end; `len - keep` is only negative when
        // `keep > len`, which both callers exclude. Clamp for safety.
        cut = 0;
    }
    while cut < len && items.get(cut as usize).is_some_and(Msg::is_tool_result) {
        cut += 1;
    }
    cut.min(len) as usize
}
