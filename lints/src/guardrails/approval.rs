//! `approval-required` (Colony `ApprovalRequiredGuardrail`, colony-reference §4.5, current
//! version backed by `HumanApprovalCapability.has_active_approval_for`).
//!
//! 1. Gate: the first pattern matching the call (substring mode: Colony's case-insensitive
//!    substring of the raw key, so short keys and custom middle segments slip past; key mode:
//!    globs on the canonical key, which they cannot). No match allows the call.
//! 2. `params.dry_run` being JSON `true` allows it (only the boolean; `"true"`, `1` or a missing
//!    value are the apply path). `dry-run-exempt = false` turns this off.
//! 3. Approvals from `approval` records seen so far (`approvals = "records"`, the default): an
//!    `approve_all` whose action type covers the key allows (not consumed); else the first
//!    unconsumed `approve_once` covering it allows and is **consumed now, at check time**, even
//!    if the dispatch then fails or a later guardrail blocks; else a legacy untyped response
//!    whose choice is approve-like (approve, approved, yes, granted, accept, accepted) allows any
//!    gated key, not consumed. An answer for one call (an OpenAI Agents SDK RunState's list of
//!    call ids, issue 6 T6-10) allows that call only, matched by its `call_id`, and is neither
//!    consumed nor usable by another call. The action type covers the key by Colony's case-insensitive
//!    substring in substring mode, or as a key pattern in key mode.
//!    `approvals = "none"` models an agent without `HumanApprovalCapability` (Colony's
//!    SessionAgent, or after `bind_agent(None)`): every gated apply is blocked.
//! 4. Otherwise block with Colony's texts: `'{key}' is gated behind human approval (matched
//!    prefix '{p}'); no recorded approval covers this action.` and the primitives suggestion
//!    (`request_human_approval(...)`, the `human_approval_response:<request_id>` binding,
//!    `wait_for_next_event()`, `get_response(request_id)` as a lookup, not a poll).

use super::matching::{MatchMode, Pattern};
use super::{Block, Guardrail, GuardrailSet, Proposed, TraceState};
use serde_json::Value;

/// Colony's `HumanApprovalCapability.RESPONSE_CONTEXT_KEY_PREFIX`.
pub const RESPONSE_CONTEXT_KEY_PREFIX: &str = "human_approval_response:";

/// Colony's suggestion text for a blocked apply (code_constraints.py, 2026-06-13 wording).
pub fn colony_suggestion() -> String {
    format!(
        "Apply is blocked until a ``{RESPONSE_CONTEXT_KEY_PREFIX}<request_id>`` context binding shows ``choice in {{approve_once, approve_all}}``. \
Available primitives: ``request_human_approval(question, action_type, extra)`` opens a request and returns immediately with a ``request_id``; \
the operator's answer surfaces later as that planner-context binding (with ``explanation`` populated on ``reject`` / ``abort``). \
``wait_for_next_event()`` pauses the agent on the unified event queue and wakes on the next event of any kind. \
``get_response(request_id)`` is on-demand lookup of a known request, not a wait \u{2014} re-calling it in a loop is wasted work. \
Compose whatever strategy fits the situation."
    )
}

/// A compiled approval gate.
#[derive(Debug, Clone)]
pub struct ApprovalRequired {
    /// Gated patterns (ids), in order.
    pub patterns: Vec<usize>,
    /// `dry_run=True` calls pass.
    pub dry_run_exempt: bool,
    /// Approvals come from `approval` records (else none are ever found).
    pub use_records: bool,
}

impl ApprovalRequired {
    /// Checks one call.
    pub fn check(
        &self,
        g: &Guardrail,
        set: &GuardrailSet,
        call: &Proposed,
        st: &mut TraceState,
    ) -> Option<Block> {
        let gated = self
            .patterns
            .iter()
            .copied()
            .find(|&p| call.matches(set, p))?;
        if self.dry_run_exempt && call.params().get("dry_run") == Some(&Value::Bool(true)) {
            return None;
        }
        let key = call.key(g.mode);
        let gates: Option<Vec<&Pattern>> = (g.mode == MatchMode::Key && call.keys.partial)
            .then(|| self.patterns.iter().map(|&p| &set.patterns[p]).collect());
        if self.use_records
            && (st
                .approvals
                .check_call(call.call_id, g.mode, key, gates.as_deref())
                .is_some()
                || st.approvals.check(g.mode, key, gates.as_deref()).is_some())
        {
            return None;
        }
        let word = match g.mode {
            MatchMode::Substring => "prefix",
            MatchMode::Key => "pattern",
        };
        Some(Block {
            guardrail: g.id.clone(),
            reason: format!(
                "'{key}' is gated behind human approval (matched {word} '{}'); no recorded approval covers this action.",
                set.patterns[gated].text
            ),
            suggestion: colony_suggestion(),
        })
    }
}
