//! `compaction`: pyAgentic's `CompactionPolicy(max_input_tokens=100_000, keep_recent=10,
//! summary_prompt=...)` (pyagentic-reference §2.4).
//!
//! Compile time, over the working context `items`:
//!
//! 1. No-op when `len(items) <= keep_recent`.
//! 2. Trigger: when the previous inference's usage is known (`event.last_usage`), compact iff
//!    its `input_tokens > max_input_tokens` (strict); otherwise iff
//!    `sum(len(content or "")) // 4 > max_input_tokens` over the context items only (code
//!    points, floor division; the system prompt, tool schemas and tool-call arguments are not
//!    counted). Usage, when present, wins even over a huge content. Because the usage is the
//!    *previous* call's, the trigger lags one inference behind the messages just appended.
//! 3. `cut = len - keep_recent`, advanced past leading tool results (same partial pair safety
//!    as the window); `head = items[:cut]`, `tail = items[cut:]`; no-op when `head` is empty.
//! 4. The head is rendered as a transcript for the summariser (see [`transcript`]).
//! 5. The result is `[CompactionSummaryMessage("[Summary of N earlier messages]\n" + summary,
//!    compacted_count=N)] + tail`, N = `len(head)` (an earlier summary in the head counts as one
//!    message; N is not cumulative). The summary is an *assistant* message.
//!
//! The replay cannot call an LLM, so the summary text is the next *recorded* summary of the
//! trace (a `compaction_summary` message record; see [`super::context`]) when there is one,
//! else a deterministic placeholder of configurable size, so context sizes stay predictable.
//! The summariser call's own cost is not part of any pyAgentic trace.
//!
//! `usage` selects what counts as `last_usage` (reference §3.5): `recorded` (default: the
//! previous successful inference record's usage, `None` when it recorded none, which is what
//! Anthropic runs and OpenAI chat logs give, so the chars/4 estimate is used), `estimate`
//! (always the chars/4 estimate), or `simulated` (the simulator's own estimate of the previous
//! inference's input: system prompt, tool schemas and working context, chars/4). Recorded usage
//! is exact only for traces recorded under the same policies.

use super::{pair_safe_cut, CompileCx, MessagePolicy, Msg};
use crate::trace::MessageKind;
use std::sync::Arc;

/// pyAgentic's default `max_input_tokens`.
pub const DEFAULT_MAX_INPUT_TOKENS: i64 = 100_000;
/// pyAgentic's default `keep_recent`.
pub const DEFAULT_KEEP_RECENT: i64 = 10;
/// Default size of the placeholder summary, in code points.
pub const DEFAULT_PLACEHOLDER_CHARS: usize = 1000;

/// Where the trigger's `last_usage` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UsageMode {
    /// The previous successful inference record's usage (pyAgentic's behaviour on the recorded
    /// run); `None` when it recorded none.
    #[default]
    Recorded,
    /// Always `None`: the chars/4 estimate decides (what Anthropic runs do).
    Estimate,
    /// The simulator's own estimate of what the previous inference sent.
    Simulated,
}

impl UsageMode {
    /// Parses `recorded`, `estimate` or `simulated`.
    pub fn parse(s: &str) -> Option<UsageMode> {
        match s {
            "recorded" => Some(UsageMode::Recorded),
            "estimate" => Some(UsageMode::Estimate),
            "simulated" => Some(UsageMode::Simulated),
            _ => None,
        }
    }

    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            UsageMode::Recorded => "recorded",
            UsageMode::Estimate => "estimate",
            UsageMode::Simulated => "simulated",
        }
    }
}

/// The compaction policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// Policy id.
    pub id: String,
    /// Threshold in input tokens (provider-reported, or the chars/4 estimate); strict `>`.
    pub max_input_tokens: i64,
    /// Messages kept verbatim at the tail (before the pair adjustment).
    pub keep_recent: i64,
    /// Summary text used when the trace has no recorded summary.
    pub placeholder: Arc<str>,
    /// Where the trigger's usage comes from.
    pub usage: UsageMode,
}

impl Default for Compaction {
    fn default() -> Self {
        Self {
            id: "compaction".into(),
            max_input_tokens: DEFAULT_MAX_INPUT_TOKENS,
            keep_recent: DEFAULT_KEEP_RECENT,
            placeholder: placeholder(DEFAULT_PLACEHOLDER_CHARS).into(),
            usage: UsageMode::Recorded,
        }
    }
}

/// A deterministic placeholder summary of exactly `chars` code points (`[simulated summary] `
/// repeated and cut).
pub fn placeholder(chars: usize) -> String {
    "[simulated summary] ".chars().cycle().take(chars).collect()
}

/// The summariser's input (pyagentic-reference §2.4 step 4): one entry per message joined with
/// newlines. Tool and agent calls: `[tool call] NAME(ARGUMENTS)`; tool and agent results:
/// `[tool result: NAME] CONTENT` (absent content prints `None`, as Python formats it);
/// anything else `ROLE: CONTENT` (empty when absent), so an earlier summary appears as
/// `assistant: [Summary of N earlier messages]` followed by its text.
pub fn transcript(head: &[Msg]) -> String {
    let mut out = String::new();
    for (i, m) in head.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if m.is_tool_call() {
            out.push_str("[tool call] ");
            out.push_str(m.name.as_deref().unwrap_or("None"));
            out.push('(');
            out.push_str(m.arguments.as_deref().unwrap_or("None"));
            out.push(')');
        } else if m.is_tool_result() {
            out.push_str("[tool result: ");
            out.push_str(m.name.as_deref().unwrap_or("None"));
            out.push_str("] ");
            out.push_str(m.content().unwrap_or("None"));
        } else {
            out.push_str(m.role());
            out.push_str(": ");
            out.push_str(m.content().unwrap_or(""));
        }
    }
    out
}

/// The summary message pyAgentic builds for `n` folded messages.
pub fn summary_message(n: u64, summary: &str) -> Msg {
    let mut m = Msg::text(
        MessageKind::CompactionSummary,
        &format!("[Summary of {n} earlier messages]\n{summary}"),
    );
    m.role = Some("assistant".into());
    m.compacted_count = Some(n);
    m
}

/// The summary text of a recorded `compaction_summary` message: its content without pyAgentic's
/// `[Summary of N earlier messages]` header line, when present.
pub fn recorded_summary_text(content: &str) -> &str {
    if let Some(rest) = content.strip_prefix("[Summary of ") {
        if let Some(nl) = rest.find('\n') {
            let head = &rest[..nl];
            if head.ends_with(" earlier messages]") {
                return &rest[nl + 1..];
            }
        } else if rest.ends_with(" earlier messages]") {
            return "";
        }
    }
    content
}

/// What the trigger compared with the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Input tokens of the previous inference (recorded or simulated).
    Usage(u64),
    /// The chars/4 estimate over the working context.
    Estimate(u64),
}

impl Compaction {
    /// The trigger value for `items` given the compile event.
    pub fn trigger(&self, cx: &CompileCx, items: &[Msg]) -> Trigger {
        let usage = match self.usage {
            UsageMode::Recorded => cx.last_usage,
            UsageMode::Estimate => None,
            UsageMode::Simulated => cx.simulated_usage,
        };
        match usage {
            Some(u) => Trigger::Usage(u.input_tokens),
            None => Trigger::Estimate(items.iter().map(|m| m.chars() as u64).sum::<u64>() / 4),
        }
    }
}

impl MessagePolicy for Compaction {
    fn id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> &str {
        "compaction"
    }

    fn on_compile(&self, cx: &mut CompileCx, items: &[Msg]) -> Result<Option<Vec<Msg>>, String> {
        if items.len() as i64 <= self.keep_recent {
            return Ok(None);
        }
        let trigger = self.trigger(cx, items);
        let value = match trigger {
            Trigger::Usage(v) | Trigger::Estimate(v) => v,
        };
        if i128::from(value) <= i128::from(self.max_input_tokens) {
            return Ok(None);
        }
        let cut = pair_safe_cut(items, self.keep_recent);
        if cut == 0 {
            return Ok(None);
        }
        let (head, tail) = items.split_at(cut);
        let transcript_chars = transcript(head).chars().count() as u64;
        let (text, recorded) = match cx.take_recorded_summary() {
            Some(t) => (t, true),
            None => (self.placeholder.clone(), false),
        };
        let summary = summary_message(head.len() as u64, &text);
        cx.note_summary(super::context::SummaryNote {
            policy: self.id.clone(),
            folded: head.len() as u64,
            summary_chars: summary.chars() as u64,
            recorded,
            transcript_chars,
            trigger,
            threshold: self.max_input_tokens,
        });
        let mut out = Vec::with_capacity(tail.len() + 1);
        out.push(summary);
        out.extend_from_slice(tail);
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_shape_of_reference_case_23() {
        let mut call = Msg::new(MessageKind::ToolCall);
        call.id = Some("c1".into());
        call.name = Some("t".into());
        call.arguments = Some(r#"{"q":1}"#.into());
        let mut result = Msg::text(MessageKind::ToolResult, "r1");
        result.name = Some("t".into());
        let head = [
            Msg::text(MessageKind::User, "q1"),
            Msg::text(MessageKind::Assistant, "a1"),
            call,
            result,
        ];
        assert_eq!(
            transcript(&head),
            "user: q1\nassistant: a1\n[tool call] t({\"q\":1})\n[tool result: t] r1"
        );
        // A None result prints as Python's None; an earlier summary as an assistant line.
        let mut none = Msg::new(MessageKind::AgentResult);
        none.name = Some("helper".into());
        let head = [summary_message(2, "notes"), none];
        assert_eq!(
            transcript(&head),
            "assistant: [Summary of 2 earlier messages]\nnotes\n[tool result: helper] None"
        );
    }

    #[test]
    fn placeholder_has_the_requested_size() {
        assert_eq!(placeholder(0), "");
        assert_eq!(placeholder(5), "[simu");
        assert_eq!(placeholder(45).chars().count(), 45);
    }

    #[test]
    fn recorded_summary_header_is_stripped() {
        assert_eq!(
            recorded_summary_text("[Summary of 4 earlier messages]\nS"),
            "S"
        );
        assert_eq!(recorded_summary_text("[Summary of 4 earlier messages]"), "");
        assert_eq!(recorded_summary_text("plain notes"), "plain notes");
        assert_eq!(
            recorded_summary_text("[Summary of x]\nkept"),
            "[Summary of x]\nkept"
        );
    }
}
