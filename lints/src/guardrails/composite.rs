//! `composite` (Colony `CompositeGuardrail`, colony-reference §4.6): inner guardrails in order;
//! the first block is returned unchanged (so order decides which reason wins). A composite
//! needs at least one inner guardrail (a config error otherwise, as Colony raises
//! `ValueError`).

use super::{Block, Guardrail, GuardrailSet, Proposed, TraceState};

/// A compiled composite.
#[derive(Debug, Clone)]
pub struct Composite {
    /// Inner guardrails, in order.
    pub inner: Vec<Guardrail>,
}

impl Composite {
    /// Checks one call.
    pub fn check(&self, set: &GuardrailSet, call: &Proposed, st: &mut TraceState) -> Option<Block> {
        self.inner.iter().find_map(|g| g.check(set, call, st))
    }
}
