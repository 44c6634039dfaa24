//! `capability-boundary` (Colony `CapabilityBoundaryGuardrail`, colony-reference §4.2).
//!
//! `block` patterns are checked first and take precedence; then, when `allow` is given, at
//! least one allow pattern must match (`allow = []` blocks everything; no `allow` allows
//! everything). Ignores history. In `substring` mode the reason and suggestion texts are
//! Colony's, character for character:
//! `Action '{key}' is blocked by guardrail (prefix '{p}').` / `Use a different action or switch
//! mode.` and `Action '{key}' is not in the allowed set.` / `Allowed prefixes: {python list}`.
//! In `key` mode "prefix" reads "pattern".

use super::matching::{py_repr_list, MatchMode};
use super::{Block, Guardrail, GuardrailSet, Proposed};

/// A compiled capability boundary.
#[derive(Debug, Clone)]
pub struct CapabilityBoundary {
    /// Allow patterns (ids), `None` when not configured.
    pub allow: Option<Vec<usize>>,
    /// Block patterns (ids).
    pub block: Vec<usize>,
    /// The allow list as written (for the suggestion).
    pub allow_text: Vec<String>,
}

impl CapabilityBoundary {
    /// Checks one call.
    pub fn check(&self, g: &Guardrail, set: &GuardrailSet, call: &Proposed) -> Option<Block> {
        let key = call.key(g.mode);
        let word = match g.mode {
            MatchMode::Substring => "prefix",
            MatchMode::Key => "pattern",
        };
        for &p in &self.block {
            if call.matches(set, p) {
                return Some(Block {
                    guardrail: g.id.clone(),
                    reason: format!(
                        "Action '{key}' is blocked by guardrail ({word} '{}').",
                        set.patterns[p].text
                    ),
                    suggestion: "Use a different action or switch mode.".into(),
                });
            }
        }
        if let Some(allow) = &self.allow {
            if !allow.iter().any(|&p| call.matches(set, p)) {
                let words = match g.mode {
                    MatchMode::Substring => "prefixes",
                    MatchMode::Key => "patterns",
                };
                return Some(Block {
                    guardrail: g.id.clone(),
                    reason: format!("Action '{key}' is not in the allowed set."),
                    suggestion: format!("Allowed {words}: {}", py_repr_list(&self.allow_text)),
                });
            }
        }
        None
    }
}
