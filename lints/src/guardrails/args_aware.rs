//! `args-aware-order` (Colony `ArgsAwareTemporalOrderGuardrail` + `ArgsAwareOrderingRule`,
//! colony-reference §4.4).
//!
//! Per rule, in order: skip unless the call matches `target`; skip unless `applies-when` holds
//! (its regex captures feed `prior-params-match`); skip when there is no `required-prior`. Then
//! look for a satisfying prior:
//!
//! - a **call** (`required-prior = "pattern"` or `{ call = "pattern", status = ... }`): scan the
//!   window (the last `max-age-calls` records of the history, or all of it) newest first for a
//!   record matching the pattern, with an allowed status (`status` / `require-status`; Colony
//!   ignores status, so by default an errored prior counts), no older than `max-age-seconds`
//!   (measured from the record's completion, as Colony stamps `start_wall` after dispatch, to
//!   the proposed call's time; a record or call without a time fails the bound), whose params
//!   satisfy `prior-params-match`. Colony's texts: `'{key}' requires a recent '{prior}' call
//!   matching its args; none in the last {max_age_calls or len(history)} call(s).` and the
//!   rule's suggestion, else `Call an action matching '{prior}' before '{key}'.`
//!   (`max-age-calls = 0` gives an empty window: the rule always blocks, as in Colony.)
//! - a **message** (`required-prior = { message = { role, content-regex, latest, consume,
//!   max-age-messages } }`, e.g. an explicit user "yes" before a booking): see
//!   [`super::predicates::MessageWatch`]. Texts: `'{key}' requires a prior {role} message
//!   matching '{regex}'; none found.` and the rule's suggestion, else `Obtain a {role} message
//!   matching '{regex}' before '{key}'.`

use super::predicates::{eval_all, ParamCond, PriorMatch};
use super::{Block, Guardrail, GuardrailSet, Proposed, TraceState};

/// What must precede the target.
#[derive(Debug, Clone)]
pub enum Prior {
    /// Nothing (`required-prior` empty): the rule never blocks, as in Colony.
    Nothing,
    /// A call matching a pattern (watch id; the pattern as written).
    Call {
        /// Watch id.
        watch: usize,
        /// Pattern text.
        text: String,
    },
    /// A message (message watch id).
    Message {
        /// Message watch id.
        watch: usize,
    },
}

/// One rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Pattern id of the target.
    pub target: usize,
    /// `applies-when` conditions (all must hold).
    pub applies_when: Vec<ParamCond>,
    /// The required prior.
    pub prior: Prior,
    /// `max-age-calls`.
    pub max_age_calls: Option<u64>,
    /// `max-age-seconds`.
    pub max_age_seconds: Option<f64>,
    /// `prior-params-match`.
    pub prior_match: Option<PriorMatch>,
    /// `suggestion` (empty: the generic text).
    pub suggestion: String,
    /// Equality index answering `prior-params-match` (value comparisons only).
    pub eq_index: Option<usize>,
    /// Membership index narrowing the candidates of a capture test (`captures-subset-of` /
    /// `captures-any-in`).
    pub member_index: Option<usize>,
}

/// A compiled args-aware guardrail.
#[derive(Debug, Clone)]
pub struct ArgsAware {
    /// Rules in order.
    pub rules: Vec<Rule>,
}

impl ArgsAware {
    /// Checks one call.
    pub fn check(
        &self,
        g: &Guardrail,
        set: &GuardrailSet,
        call: &Proposed,
        st: &mut TraceState,
    ) -> Option<Block> {
        for rule in &self.rules {
            if !call.matches(set, rule.target) {
                continue;
            }
            let captures = if rule.applies_when.is_empty() {
                Vec::new()
            } else {
                match eval_all(&rule.applies_when, call.params(), st.agent_id.as_deref()) {
                    Some(c) => c,
                    None => continue,
                }
            };
            let key = call.key(g.mode);
            match &rule.prior {
                Prior::Nothing => continue,
                Prior::Call { watch, text } => {
                    if Self::prior_call(set, rule, *watch, call, st, &captures) {
                        continue;
                    }
                    let n = match rule.max_age_calls {
                        Some(n) if n > 0 => n,
                        _ => st.history.len() as u64,
                    };
                    return Some(Block {
                        guardrail: g.id.clone(),
                        reason: format!(
                            "'{key}' requires a recent '{text}' call matching its args; none in the last {n} call(s)."
                        ),
                        suggestion: if rule.suggestion.is_empty() {
                            format!("Call an action matching '{text}' before '{key}'.")
                        } else {
                            rule.suggestion.clone()
                        },
                    });
                }
                Prior::Message { watch } => {
                    let w = &set.message_watches[*watch];
                    if w.satisfied(&mut st.messages[*watch]) {
                        continue;
                    }
                    let what = w.describe();
                    return Some(Block {
                        guardrail: g.id.clone(),
                        reason: format!("'{key}' requires a prior {what}; none found."),
                        suggestion: if rule.suggestion.is_empty() {
                            format!("Obtain a {what} before '{key}'.")
                        } else {
                            rule.suggestion.clone()
                        },
                    });
                }
            }
        }
        None
    }

    fn prior_call(
        set: &GuardrailSet,
        rule: &Rule,
        watch: usize,
        call: &Proposed,
        st: &TraceState,
        captures: &[String],
    ) -> bool {
        let h = &st.history;
        let window_start = match rule.max_age_calls {
            Some(n) => h.next_seq().saturating_sub(n).max(h.first_seq()),
            None => h.first_seq(),
        };
        let age_ok = |rec: &super::HistEntry| match rule.max_age_seconds {
            None => true,
            Some(max) => {
                matches!((call.now, rec.wall), (Some(now), Some(wall)) if now - wall <= max)
            }
        };
        if let Some(i) = rule.eq_index {
            // The newest record with equal values decides: older ones are further back in the
            // window and in time.
            let key = super::index_key(
                &set.eq_indexes[i],
                call.params,
                &crate::trace::RawJson::none(),
                false,
            );
            return match st.eq[i].get(&key) {
                Some(&seq) if seq >= window_start => h.get(seq).is_some_and(age_ok),
                _ => false,
            };
        }
        // A capture test holds only on records whose list holds a capture: with a membership
        // index the candidates are the records holding one (every capture for
        // `captures-subset-of`, so those holding the first; any for `captures-any-in`, so the
        // union), newest first. Same records, same order, same verdict as the scan below.
        let candidates: Option<Vec<u64>> = match (rule.member_index, &rule.prior_match) {
            (Some(i), Some(m)) if !captures.is_empty() => {
                let index = &st.members[i];
                let lists = |c: &String| index.get(c).into_iter().flatten().copied();
                let mut seqs: Vec<u64> = if m.captures_subset_of.is_some() {
                    lists(&captures[0]).filter(|&s| s >= window_start).collect()
                } else {
                    captures
                        .iter()
                        .flat_map(lists)
                        .filter(|&s| s >= window_start)
                        .collect()
                };
                seqs.sort_unstable();
                seqs.dedup();
                Some(seqs)
            }
            _ => None,
        };
        let scan: Box<dyn Iterator<Item = u64> + '_> = match &candidates {
            Some(seqs) => Box::new(seqs.iter().rev().copied()),
            None => Box::new(h.hits(watch).iter().rev().copied()),
        };
        for seq in scan {
            if seq < window_start {
                break;
            }
            let Some(rec) = h.get(seq) else { continue };
            if !age_ok(rec) {
                continue;
            }
            if let Some(m) = &rule.prior_match {
                let (prior, result) = rec.objects();
                if !m.eval(prior, result, call.params(), captures) {
                    continue;
                }
            }
            return true;
        }
        false
    }
}
