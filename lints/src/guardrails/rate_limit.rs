//! `rate-limit` (cellguard's own; no Colony counterpart): at most `max` dispatched calls
//! matching `pattern` within a window of the history, either the last `per-calls` records or
//! the last `per-seconds` seconds before the proposed call. A call that would exceed it is
//! blocked: `'{key}' exceeds the rate limit of {max} call(s) matching '{pattern}' per {window};
//! {count} already made.` Blocked attempts are not history records, so they do not count.
//! With `per-seconds`, a record without a time (or a proposed call without one) counts (fail
//! closed): the reason then says how many of the counted calls have no known age, and the
//! trace gets one warning (issue 6 T4-10).

use super::{Block, Guardrail, GuardrailSet, Proposed, TraceState};

/// The window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Window {
    /// The last N history records.
    Calls(u64),
    /// The last S seconds.
    Seconds(f64),
}

/// A compiled rate limit.
#[derive(Debug, Clone)]
pub struct RateLimit {
    /// Pattern id.
    pub pattern: usize,
    /// Watch id.
    pub watch: usize,
    /// Maximum count in the window.
    pub max: u64,
    /// The window.
    pub window: Window,
    /// `suggestion` (empty: the generic text).
    pub suggestion: String,
}

impl RateLimit {
    /// Checks one call.
    pub fn check(
        &self,
        g: &Guardrail,
        set: &GuardrailSet,
        call: &Proposed,
        st: &mut TraceState,
    ) -> Option<Block> {
        if !call.matches(set, self.pattern) {
            return None;
        }
        let h = &st.history;
        let hits = h.hits(self.watch);
        let mut unknown = 0u64;
        let (count, window) = match self.window {
            Window::Calls(n) => {
                let start = h.next_seq().saturating_sub(n);
                let count = hits.iter().rev().take_while(|&&s| s >= start).count() as u64;
                (count, format!("{n} call(s)"))
            }
            Window::Seconds(s) => {
                let count = hits
                    .iter()
                    .rev()
                    .take_while(|&&seq| match (call.now, h.get(seq).and_then(|r| r.wall)) {
                        (Some(now), Some(wall)) => now - wall <= s,
                        _ => {
                            unknown += 1;
                            true
                        }
                    })
                    .count() as u64;
                (count, format!("{s} second(s)"))
            }
        };
        if count < self.max {
            return None;
        }
        let unknown_note = if unknown > 0 {
            st.note_unknown_time(&g.id, "per-seconds");
            format!(
                " ({unknown} of them with no known age: {}, counted as inside the window)",
                if call.now.is_none() {
                    "this call has no recorded time"
                } else {
                    "no recorded time"
                }
            )
        } else {
            String::new()
        };
        let key = call.key(g.mode);
        let pattern = &set.patterns[self.pattern].text;
        Some(Block {
            guardrail: g.id.clone(),
            reason: format!(
                "'{key}' exceeds the rate limit of {} call(s) matching '{pattern}' per {window}; {count} already made{unknown_note}.",
                self.max
            ),
            suggestion: if self.suggestion.is_empty() {
                format!("Make fewer calls matching '{pattern}'; the limit is {} per {window}.", self.max)
            } else {
                self.suggestion.clone()
            },
        })
    }
}
