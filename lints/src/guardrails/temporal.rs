//! `temporal-order` (Colony `TemporalOrderGuardrail`, colony-reference §4.3).
//!
//! `rules = [{ before, after }]`: a call matching `after` is blocked unless some record of the
//! history matches `before`. The first failing rule wins. The prior record's status is ignored
//! unless the rule sets `status` (an extension: `status = "ok"`), as in Colony an errored prior
//! call satisfies the rule. The history is cumulative, or the current cell only in the
//! `pre-0620` and `0620-0624` epochs. Colony texts: `'{key}' requires '{before}' to be called
//! first.` / `Call an action matching '{before}' before '{key}'.`

use super::{Block, Guardrail, GuardrailSet, Proposed, TraceState};

/// One ordering rule.
#[derive(Debug, Clone)]
pub struct OrderRule {
    /// Pattern id of `after` (the gated call).
    pub after: usize,
    /// Watch id of `before` (the required prior).
    pub before_watch: usize,
    /// `before` as written.
    pub before_text: String,
}

/// A compiled temporal-order guardrail.
#[derive(Debug, Clone)]
pub struct TemporalOrder {
    /// Rules in order.
    pub rules: Vec<OrderRule>,
}

impl TemporalOrder {
    /// Checks one call.
    pub fn check(
        &self,
        g: &Guardrail,
        set: &GuardrailSet,
        call: &Proposed,
        st: &TraceState,
    ) -> Option<Block> {
        let key = call.key(g.mode);
        for r in &self.rules {
            if call.matches(set, r.after) && st.history.hits(r.before_watch).is_empty() {
                return Some(Block {
                    guardrail: g.id.clone(),
                    reason: format!("'{key}' requires '{}' to be called first.", r.before_text),
                    suggestion: format!(
                        "Call an action matching '{}' before '{key}'.",
                        r.before_text
                    ),
                });
            }
        }
        None
    }
}
