//! `sliding-window`: pyAgentic's `SlidingWindowPolicy(max_messages=50)`
//! (pyagentic-reference §2.3).
//!
//! Compile time. When the working context holds more than `max_messages` messages (all kinds;
//! the system prompt is not part of it), the first `len - max_messages` are dropped, the cut
//! then advancing past any tool results it landed on. Only *leading* results are skipped: with
//! parallel calls recorded as call,call,result,result a result can lose its call (an orphaned
//! pair that providers reject). The result can be shorter than `max_messages`, start without a
//! user turn, or be empty (`max_messages <= 0`, or a tail of only results). Dropped messages
//! vanish without a placeholder; an earlier compaction summary is dropped like anything else.

use super::{pair_safe_cut, CompileCx, MessagePolicy, Msg};

/// pyAgentic's default `max_messages`.
pub const DEFAULT_MAX_MESSAGES: i64 = 50;

/// The sliding-window policy.
#[derive(Debug, Clone, PartialEq)]
pub struct SlidingWindow {
    /// Policy id.
    pub id: String,
    /// Message budget.
    pub max_messages: i64,
}

impl Default for SlidingWindow {
    fn default() -> Self {
        Self {
            id: "sliding-window".into(),
            max_messages: DEFAULT_MAX_MESSAGES,
        }
    }
}

impl MessagePolicy for SlidingWindow {
    fn id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> &str {
        "sliding-window"
    }

    fn on_compile(&self, _cx: &mut CompileCx, items: &[Msg]) -> Result<Option<Vec<Msg>>, String> {
        if items.len() as i64 <= self.max_messages {
            return Ok(None);
        }
        let cut = pair_safe_cut(items, self.max_messages);
        Ok(Some(items[cut..].to_vec()))
    }
}
