//! `tool-eviction`: pyAgentic's `ToolEvictionPolicy(keep_last_n=5, stub="[tool result evicted
//! to save context]", include_agent_results=True)` (pyagentic-reference §2.2).
//!
//! Compile time. The matching messages are the tool results of the working context (agent
//! results too unless `include_agent_results` is false). All but the last `keep_last_n` of them
//! (all of them when `keep_last_n <= 0`) get `content = stub` unless it already equals the stub;
//! nothing is deleted, so eviction never orphans a call/result pair. Already-stubbed results
//! still count towards the last N. Idempotent: an unchanged context returns `None`. Because
//! compile runs after the current step's results were appended and before the model reads
//! them, fresh results can be stubbed before the model ever saw them (facts at risk).

use super::{CompileCx, MessagePolicy, Msg};
use crate::trace::MessageKind;

/// pyAgentic's default `keep_last_n`.
pub const DEFAULT_KEEP_LAST_N: i64 = 5;
/// pyAgentic's default stub.
pub const DEFAULT_STUB: &str = "[tool result evicted to save context]";

/// The eviction policy.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolEviction {
    /// Policy id.
    pub id: String,
    /// Tool results left intact at the end (not turns, not pairs, not tokens); `<= 0` evicts all.
    pub keep_last_n: i64,
    /// Replacement content.
    pub stub: String,
    /// When false, agent results are neither counted nor evicted.
    pub include_agent_results: bool,
}

impl Default for ToolEviction {
    fn default() -> Self {
        Self {
            id: "tool-eviction".into(),
            keep_last_n: DEFAULT_KEEP_LAST_N,
            stub: DEFAULT_STUB.into(),
            include_agent_results: true,
        }
    }
}

impl ToolEviction {
    fn matches(&self, m: &Msg) -> bool {
        m.is_tool_result() && (self.include_agent_results || m.kind != MessageKind::AgentResult)
    }
}

impl MessagePolicy for ToolEviction {
    fn id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> &str {
        "tool-eviction"
    }

    fn on_compile(&self, _cx: &mut CompileCx, items: &[Msg]) -> Result<Option<Vec<Msg>>, String> {
        let matching: Vec<usize> = (0..items.len())
            .filter(|&i| self.matches(&items[i]))
            .collect();
        let evict = if self.keep_last_n > 0 {
            let keep = usize::try_from(self.keep_last_n).unwrap_or(usize::MAX);
            &matching[..matching.len().saturating_sub(keep)]
        } else {
            &matching[..]
        };
        let mut out: Option<Vec<Msg>> = None;
        for &i in evict {
            if items[i].content() == Some(self.stub.as_str()) {
                continue;
            }
            let list = out.get_or_insert_with(|| items.to_vec());
            list[i] = items[i].with_content(Some(&self.stub));
        }
        Ok(out)
    }
}
