//! Rule-based completion validation replayed on `completion` records (Colony
//! `RuleBasedCompletionValidator`, colony-reference §6).
//!
//! In order:
//! 1. no goals: allowed, `No goals defined`;
//! 2. no finished cell whose dispatched calls include a domain (non-planning) action and had no
//!    failure: rejected, `No successful domain actions have been executed yet.`, suggestion
//!    `Execute domain actions before signaling completion.`;
//! 3. an empty `results` dict: rejected, `No results have been stored.`, suggestion `Store
//!    action results in the results dict before completing.`;
//! 4. otherwise allowed, `Domain work completed with {n} result(s).`.
//!
//! Colony builds a cell's step summary after the cell, so the calls of the cell that signals
//! completion do not count yet. The goals are the completion record's, else the trace
//! header's; a trace that records neither (Colony's recordings never do) takes them from the
//! recorded verdict: a recorded `No goals defined` shows the goals were empty, any other
//! recorded reason that the rule-based validator did not stop at step 1, so the goals were
//! not empty; without a recorded reason the verdict cannot be replayed and is reported as
//! unknown (issue 6 R4). Likewise when step 3 is reached and the trace does not record the
//! `results` dict.

use serde::Serialize;

/// A replayed completion verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompletionVerdict {
    /// Whether completion would be accepted.
    pub allowed: bool,
    /// Colony's reason text.
    pub reason: String,
    /// Colony's suggestions.
    pub suggestions: Vec<String>,
}

/// What the validator sees when `signal_completion()` is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CompletionInput<'a> {
    /// The agent's goals, when recorded (`None`: assumed non-empty).
    pub goals: Option<&'a [String]>,
    /// Some finished cell had a domain action and no failure.
    pub has_domain_work: bool,
    /// Entries in the `results` dict, when recorded.
    pub results: Option<u64>,
}

/// The goals the validator saw for completion record `c`, given the trace header's `header`
/// goals: the record's, else the header's, else inferred from the recorded reason (`No goals
/// defined`: none; any other reason: some, stood for by one placeholder goal). `None` when
/// nothing tells.
pub fn goals_for<'g>(
    c: &'g crate::trace::model::CompletionRecord,
    header: Option<&'g [String]>,
) -> Option<&'g [String]> {
    static SOME_GOAL: [String; 1] = [String::new()];
    if let Some(g) = c.goals.as_deref().or(header) {
        return Some(g);
    }
    match c.reason.as_deref().map(str::trim) {
        Some("No goals defined") => Some(&[]),
        Some(r) if !r.is_empty() => Some(&SOME_GOAL),
        _ => None,
    }
}

/// Runs the rule-based validator. `None` when the verdict depends on the unrecorded `results`
/// dict.
pub fn rule_based(input: CompletionInput) -> Option<CompletionVerdict> {
    if input.goals.is_some_and(<[String]>::is_empty) {
        return Some(CompletionVerdict {
            allowed: true,
            reason: "No goals defined".into(),
            suggestions: Vec::new(),
        });
    }
    if !input.has_domain_work {
        return Some(CompletionVerdict {
            allowed: false,
            reason: "No successful domain actions have been executed yet.".into(),
            suggestions: vec!["Execute domain actions before signaling completion.".into()],
        });
    }
    match input.results? {
        0 => Some(CompletionVerdict {
            allowed: false,
            reason: "No results have been stored.".into(),
            suggestions: vec!["Store action results in the results dict before completing.".into()],
        }),
        n => Some(CompletionVerdict {
            allowed: true,
            reason: format!("Domain work completed with {n} result(s)."),
            suggestions: Vec::new(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colony_order_and_texts() {
        let goals = vec!["g".to_string()];
        let none: Vec<String> = Vec::new();
        assert_eq!(
            rule_based(CompletionInput {
                goals: Some(&none),
                has_domain_work: false,
                results: None
            })
            .unwrap()
            .reason,
            "No goals defined"
        );
        let v = rule_based(CompletionInput {
            goals: Some(&goals),
            has_domain_work: false,
            results: Some(3),
        })
        .unwrap();
        assert!(!v.allowed);
        assert_eq!(
            v.reason,
            "No successful domain actions have been executed yet."
        );
        let v = rule_based(CompletionInput {
            goals: None,
            has_domain_work: true,
            results: Some(0),
        })
        .unwrap();
        assert_eq!(
            v.suggestions,
            vec!["Store action results in the results dict before completing."]
        );
        let v = rule_based(CompletionInput {
            goals: None,
            has_domain_work: true,
            results: Some(2),
        })
        .unwrap();
        assert_eq!(
            (v.allowed, v.reason.as_str()),
            (true, "Domain work completed with 2 result(s).")
        );
        assert_eq!(
            rule_based(CompletionInput {
                goals: None,
                has_domain_work: true,
                results: None
            }),
            None
        );
    }
}
