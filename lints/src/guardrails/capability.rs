//! `capability-boundary` (Colony `CapabilityBoundaryGuardrail`, colony-reference §4.2).
//!
//! `block` patterns are checked first and take precedence; then, when `allow` is given, at
//! least one allow pattern must match (`allow = []` blocks everything; no `allow` allows
//! everything). Ignores history. In `substring` mode the reason and suggestion texts are
//! Colony's, character for character:
//! `Action '{key}' is blocked by guardrail (prefix '{p}').` / `Use a different action or switch
//! mode.` and `Action '{key}' is not in the allowed set.` / `Allowed prefixes: {python list}`.
//! A `substring` pattern `a|b` is Colony's prefix list `["a", "b"]`: the reason names the
//! alternative that matched and the suggestion lists the alternatives (issue 6 T4-30).
//! In `key` mode "prefix" reads "pattern". An allow list grants, so in `key` mode a key that
//! could not be resolved passes only when every key the dispatcher could resolve it to is
//! allowed (see [`super::matching`]); the reason then names a reachable key outside the list.

use super::matching::{first_uncovered, py_repr_list, MatchMode, Pattern};
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
                let pat = &set.patterns[p];
                // In `substring` mode an `a|b` pattern stands for Colony's prefix list
                // `["a", "b"]`: the reason names the first alternative that matched, as Colony
                // names the first matching prefix (issue 6 T4-30).
                let shown = match g.mode {
                    MatchMode::Substring if pat.text.contains('|') => pat
                        .matching_alt(key, &key.to_lowercase(), false)
                        .and_then(|i| pat.text.split('|').nth(i))
                        .map_or(pat.text.as_str(), str::trim),
                    _ => pat.text.as_str(),
                };
                return Some(Block {
                    guardrail: g.id.clone(),
                    reason: format!("Action '{key}' is blocked by guardrail ({word} '{shown}')."),
                    suggestion: "Use a different action or switch mode.".into(),
                });
            }
        }
        let allow = self.allow.as_ref()?;
        let words = match g.mode {
            MatchMode::Substring => "prefixes",
            MatchMode::Key => "patterns",
        };
        // `substring` mode: Colony's prefix list, an `a|b` pattern being the prefixes `a`, `b`.
        let listed: Vec<String> = match g.mode {
            MatchMode::Substring => self
                .allow_text
                .iter()
                .flat_map(|t| {
                    if t.contains('|') {
                        t.split('|').map(|a| a.trim().to_string()).collect()
                    } else {
                        vec![t.clone()]
                    }
                })
                .collect(),
            MatchMode::Key => self.allow_text.clone(),
        };
        let suggestion = format!("Allowed {words}: {}", py_repr_list(&listed));
        // An allow list grants: an unresolved key passes only when every key the dispatcher
        // could resolve it to is allowed (issue 6 R3), by one pattern or several together.
        if allow.iter().any(|&p| call.matches_every(set, p)) {
            return None;
        }
        let some = allow.iter().any(|&p| call.matches(set, p));
        if some && g.mode == MatchMode::Key && call.keys.partial {
            let pats: Vec<&Pattern> = allow.iter().map(|&p| &set.patterns[p]).collect();
            let outside =
                first_uncovered(key, |_, _| true, |k, s| pats.iter().any(|p| p.covers(k, s)))?;
            return Some(Block {
                guardrail: g.id.clone(),
                reason: format!(
                    "Action '{key}' is not in the allowed set: the key is not resolved and the dispatcher could resolve it to '{outside}'."
                ),
                suggestion: format!(
                    "{suggestion}. Give the knowledge base (--kb) or record the resolved key (`action_key`) to replay the key it dispatched to."
                ),
            });
        }
        if some {
            return None;
        }
        Some(Block {
            guardrail: g.id.clone(),
            reason: format!("Action '{key}' is not in the allowed set."),
            suggestion,
        })
    }
}
