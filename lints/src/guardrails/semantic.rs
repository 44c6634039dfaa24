//! `semantic-constraint` (Colony `SemanticConstraintGuardrail`, colony-reference §4.7), with
//! deterministic verifiers in place of the LLM judge (§5.9 step 5).
//!
//! A list of constraints, each with an `id`, `applies-to` patterns (an empty list matches
//! nothing), a `scope` (`cell`: the calls of the current cell, i.e. the history from Colony's
//! `cell_start_index`; `session`: the whole history), a `mode` (`block` or `advise`), an
//! optional `precondition` (conditions on the params, as `applies-when`), and a verifier:
//!
//! - `evidence` (Colony `EvidenceVerifier`): satisfied when the scope holds a call matching
//!   `evidence = { call = "pattern", status = ... }` whose params satisfy `prior-params-match`
//!   (captures come from the precondition's regex). Unsatisfied reason: the constraint's
//!   `reason`, else `No evidence in {scope}-scoped history satisfies constraint '{id}'.`
//! - `recorded` (the LLM judge, replayed from the recording): unsatisfied when the call was
//!   recorded as blocked and its recorded error names this constraint (`[id]`), or names none
//!   and is not the reason text of another guardrail ([`other_guardrail_block`]); the reason is
//!   the judge's recorded reason. Any other call: satisfied.
//! - `satisfied` / `unsatisfied`: a fixed verdict (a stand-in judge, as Colony's tests use).
//!
//! Check (§4.7), per applicable constraint in order: skipped when an `override` record has
//! disabled its id (operator overrides and approved waivers disable a constraint for the whole
//! session) or when its precondition does not hold; a satisfied verdict clears the constraint's
//! streak for these params; an unsatisfied one in `block` mode (not downgraded) increments the
//! streak for (id, params) and blocks with `[{id}] {reason}` (`[{id}] constraint not
//! satisfied.` when the reason is empty) and the suggestion. When a streak reaches
//! `escalation-threshold` (default 2; 0 never) the id is downgraded for the rest of the trace
//! (the call that reaches it still blocks); a downgraded or `advise` constraint only advises,
//! and the call goes on to the next constraint. **[Colony defect, reproduced]** downgrading
//! applies to every later call of that rule, whatever its content.

use super::predicates::{eval_all, ParamCond, PriorMatch};
use super::{Block, Guardrail, GuardrailSet, Proposed, TraceState};
use crate::trace::CallStatus;
use serde_json::Value;
use std::collections::BTreeMap;

/// Which history a constraint looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The current cell's calls (Colony's default).
    Cell,
    /// The whole session history.
    Session,
}

impl Scope {
    fn as_str(self) -> &'static str {
        match self {
            Scope::Cell => "cell",
            Scope::Session => "session",
        }
    }
}

/// A constraint's verifier.
#[derive(Debug, Clone)]
pub enum Verifier {
    /// Evidence in the scoped history: a watch (call pattern and status) and an optional
    /// params match.
    Evidence {
        /// Watch id of the evidence call.
        watch: usize,
        /// `prior-params-match`.
        prior_match: Option<PriorMatch>,
    },
    /// The recorded outcome stands for the judge's verdict.
    Recorded,
    /// A fixed verdict.
    Fixed(bool),
}

/// One constraint.
#[derive(Debug, Clone)]
pub struct Constraint {
    /// Its id (in reasons, streaks and overrides).
    pub id: String,
    /// `applies-to` pattern ids (empty: applies to nothing).
    pub applies_to: Vec<usize>,
    /// Scope.
    pub scope: Scope,
    /// `advise` instead of `block`.
    pub advise: bool,
    /// Precondition on the params (all must hold).
    pub precondition: Vec<ParamCond>,
    /// Verifier.
    pub verifier: Verifier,
    /// Reason of an unsatisfied verdict (empty: the verifier's default).
    pub reason: String,
    /// Suggestion of an unsatisfied verdict.
    pub suggestion: String,
}

/// A compiled semantic-constraint guardrail.
#[derive(Debug, Clone)]
pub struct SemanticConstraints {
    /// Constraints in catalogue order.
    pub constraints: Vec<Constraint>,
    /// Streak length that downgrades a constraint to advisory (0: never).
    pub escalation_threshold: u64,
}

/// Per-trace state of semantic constraints: block streaks, downgraded and disabled ids.
///
/// The streak table is bounded (issue 6 T5-8): Colony keeps one count per (constraint,
/// params) for the whole session, so a trace of ever new params would grow it without end.
/// Here a streak that can no longer matter is dropped (the constraint was downgraded, or
/// `escalation-threshold = 0` never downgrades), and beyond `cap` open streaks (the history
/// window, `history-cap`) the oldest is forgotten. A forgotten streak starts again at 1 when
/// its params come back, so the downgrade comes later than Colony's: the replay may block
/// where Colony had downgraded to advisory, never the other way.
#[derive(Debug)]
pub struct SemanticState {
    /// (constraint id, params fingerprint) -> (count, insertion number).
    streaks: rustc_hash::FxHashMap<(String, String), (u64, u64)>,
    /// Streak keys in insertion order, with their insertion number (stale once removed or
    /// re-inserted; compacted when mostly stale).
    order: std::collections::VecDeque<((String, String), u64)>,
    inserted: u64,
    cap: usize,
    downgraded: rustc_hash::FxHashSet<String>,
    disabled: rustc_hash::FxHashSet<String>,
}

impl SemanticState {
    /// An empty state keeping at most `cap` (at least 1) open streaks.
    pub fn with_cap(cap: usize) -> Self {
        Self {
            streaks: Default::default(),
            order: Default::default(),
            inserted: 0,
            cap: cap.max(1),
            downgraded: Default::default(),
            disabled: Default::default(),
        }
    }

    /// Counts one more unsatisfied verdict for `key`; returns the streak's length.
    fn bump(&mut self, key: (String, String)) -> u64 {
        if let Some((n, _)) = self.streaks.get_mut(&key) {
            *n += 1;
            return *n;
        }
        self.inserted += 1;
        self.order.push_back((key.clone(), self.inserted));
        self.streaks.insert(key, (1, self.inserted));
        while self.streaks.len() > self.cap {
            let Some((k, at)) = self.order.pop_front() else {
                break;
            };
            if self.streaks.get(&k).is_some_and(|&(_, i)| i == at) {
                self.streaks.remove(&k);
            }
        }
        if self.order.len() > 2 * self.cap {
            let live = &self.streaks;
            self.order
                .retain(|(k, at)| live.get(k).is_some_and(|&(_, i)| i == *at));
        }
        1
    }

    /// Downgrades constraint `id` for the rest of the trace; its streaks can no longer matter.
    fn downgrade(&mut self, id: &str) {
        self.downgraded.insert(id.to_string());
        self.streaks.retain(|(c, _), _| c != id);
    }

    /// An `override` record: `disabled = true` disables the constraint for the rest of the
    /// trace, `false` enables it again.
    pub fn set_disabled(&mut self, constraint_id: &str, disabled: bool) {
        if disabled {
            self.disabled.insert(constraint_id.to_string());
        } else {
            self.disabled.remove(constraint_id);
        }
    }
}

/// The params as sorted-key JSON (Colony fingerprints `json.dumps(params, sort_keys=True)`).
fn fingerprint(params: &serde_json::Map<String, Value>) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let b: BTreeMap<&String, Value> = m.iter().map(|(k, v)| (k, sorted(v))).collect();
                serde_json::to_value(b).unwrap_or(Value::Null)
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(&Value::Object(params.clone())).to_string()
}

/// True when a recorded block text is the reason of one of Colony's other runtime guardrails
/// (colony-reference §4.2-§4.5: capability boundary, temporal order, args-aware order,
/// approval gate) or of cellguard's own (message prior, rate limit): a block the judge never
/// made, so the `recorded` verifier does not take it for the constraint's verdict (issue 6
/// T5-15).
fn other_guardrail_block(text: &str) -> bool {
    const SHAPES: [(&str, &str); 7] = [
        ("Action '", "' is blocked by guardrail ("),
        ("Action '", "' is not in the allowed set"),
        ("'", "' requires a recent '"),
        ("'", "' requires a prior "),
        ("'", "' is gated behind human approval (matched "),
        ("'", "' exceeds the rate limit of "),
        ("'", "' to be called first."),
    ];
    SHAPES.iter().any(|(open, mid)| {
        text.find(open)
            .is_some_and(|i| text[i + open.len()..].contains(mid))
    })
}

/// The judge's reason inside the message of a `GuardrailBlockedError` (`Blocked by guardrail:
/// {key}: {reason}.` plus ` {suggestion}`, colony-reference §4.0.1), given the text after the
/// constraint's tag: the `.` Colony appends and a suggestion glued on after a reason that
/// already ended in `.` (`bad claim.. fix it`) are removed. A reason without its own final `.`
/// cannot be told from a following suggestion and is kept whole.
fn exception_reason(text: &str) -> &str {
    match text.find(".. ") {
        Some(i) => &text[..i + 1],
        None => text
            .strip_suffix('.')
            .filter(|r| r.ends_with('.'))
            .unwrap_or(text),
    }
}

impl SemanticConstraints {
    /// Checks one call.
    pub fn check(
        &self,
        g: &Guardrail,
        set: &GuardrailSet,
        call: &Proposed,
        st: &mut TraceState,
    ) -> Option<Block> {
        for c in &self.constraints {
            if !c.applies_to.iter().any(|&p| call.matches(set, p)) {
                continue;
            }
            if st.semantic.disabled.contains(&c.id) {
                continue;
            }
            let captures = if c.precondition.is_empty() {
                Vec::new()
            } else {
                let n = st.undecided.len();
                let caps = eval_all(
                    &c.precondition,
                    call.params(),
                    st.agent_id.as_deref(),
                    &mut st.undecided,
                );
                for w in &mut st.undecided[n..] {
                    *w = format!(
                        "constraint `{}`, precondition: {w} (the constraint applies)",
                        c.id
                    );
                }
                match caps {
                    Some(caps) => caps,
                    None => continue,
                }
            };
            let verdict: Result<(), (String, String)> = match &c.verifier {
                Verifier::Fixed(true) => Ok(()),
                Verifier::Fixed(false) => Err((c.reason.clone(), c.suggestion.clone())),
                Verifier::Recorded => match call.recorded {
                    Some((CallStatus::Blocked, error)) => {
                        let tag = format!("[{}]", c.id);
                        let error = error.unwrap_or("").trim();
                        let text = error
                            .trim_start_matches("Blocked by guardrail:")
                            .trim_start_matches("Blocked:")
                            .trim();
                        if text.contains(&tag)
                            || !(text.starts_with('[') || other_guardrail_block(text))
                        {
                            let reason = match text.find(&tag) {
                                Some(i) => text[i + tag.len()..].trim(),
                                None => text,
                            };
                            let reason = if error.starts_with("Blocked by guardrail:") {
                                exception_reason(reason)
                            } else {
                                reason
                            };
                            let reason = reason.to_string();
                            Err((
                                if c.reason.is_empty() {
                                    reason
                                } else {
                                    c.reason.clone()
                                },
                                c.suggestion.clone(),
                            ))
                        } else {
                            Ok(())
                        }
                    }
                    _ => Ok(()),
                },
                Verifier::Evidence { watch, prior_match } => {
                    let h = &st.history;
                    let start = match c.scope {
                        Scope::Cell => h.first_seq() + h.cell_start() as u64,
                        Scope::Session => h.first_seq(),
                    };
                    let found = h
                        .hits(*watch)
                        .iter()
                        .rev()
                        .take_while(|&&seq| seq >= start)
                        .any(|&seq| {
                            h.get(seq).is_some_and(|rec| match prior_match {
                                None => true,
                                Some(m) => {
                                    let (prior, result) = rec.objects();
                                    m.eval(prior, result, call.params(), &captures)
                                }
                            })
                        });
                    if found {
                        Ok(())
                    } else {
                        Err((
                            if c.reason.is_empty() {
                                format!(
                                    "No evidence in {}-scoped history satisfies constraint '{}'.",
                                    c.scope.as_str(),
                                    c.id
                                )
                            } else {
                                c.reason.clone()
                            },
                            c.suggestion.clone(),
                        ))
                    }
                }
            };
            let fp = || fingerprint(call.params());
            match verdict {
                Ok(()) => {
                    if !st.semantic.streaks.is_empty() {
                        st.semantic.streaks.remove(&(c.id.clone(), fp()));
                    }
                }
                Err((reason, suggestion)) => {
                    if c.advise || st.semantic.downgraded.contains(&c.id) {
                        continue;
                    }
                    // With no threshold the count never matters: nothing is kept.
                    if self.escalation_threshold > 0
                        && st.semantic.bump((c.id.clone(), fp())) >= self.escalation_threshold
                    {
                        st.semantic.downgrade(&c.id);
                    }
                    let reason = if reason.is_empty() {
                        format!("[{}] constraint not satisfied.", c.id)
                    } else {
                        format!("[{}] {reason}", c.id)
                    };
                    return Some(Block {
                        guardrail: g.id.clone(),
                        reason,
                        suggestion,
                    });
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 6 T5-15: the reasons of Colony's other guardrails are recognised, a judge's is not.
    #[test]
    fn other_guardrail_blocks_are_recognised() {
        for text in [
            "'S.S.x' is gated behind human approval (matched prefix 'S.S.x'); no recorded approval covers this action.",
            "Action 'S.S.x' is blocked by guardrail (prefix 'x').",
            "Action 'S.S.x' is not in the allowed set.",
            "'S.S.x' requires 'S.S.y' to be called first.",
            "'S.S.x' requires a recent 'S.S.y' call matching its args; none in the last 3 call(s).",
            "S.S.x: 'S.S.x' exceeds the rate limit of 2 call(s) matching 'x' per 5 calls; 2 already made.",
        ] {
            assert!(other_guardrail_block(text), "{text}");
        }
        for text in ["bad claim", "the agent is not running", "[c1] 'x' is fine"] {
            assert!(!other_guardrail_block(text), "{text}");
        }
    }

    /// Issue 6 T5-15: Colony's exception message appends `.` and the suggestion to the reason.
    #[test]
    fn exception_reason_drops_the_appended_suggestion() {
        assert_eq!(exception_reason("bad claim.. fix it"), "bad claim.");
        assert_eq!(exception_reason("bad claim.."), "bad claim.");
        assert_eq!(exception_reason("bad claim."), "bad claim.");
        assert_eq!(exception_reason("no. really"), "no. really");
    }
}
