//! `RUN`: runtime semantics of the namespace (colony-reference §2.2, §4.0).

use super::Checker;
use crate::diagnostic::{FixAvailability, Rule, RuleDoc, Severity};

/// RUN001 missing-await.
pub static MISSING_AWAIT: Rule = Rule {
    code: "RUN001",
    name: "missing-await",
    severity: Severity::Error,
    summary: "Coroutine from the namespace called without await: a silent no-op",
    fix: FixAvailability::Always,
    doc: RuleDoc {
        what: "Coroutine from the namespace called without await: a silent no-op.",
        ..RuleDoc::EMPTY
    },
};

/// RUN002 swallowed-guardrail-block.
pub static SWALLOWED_GUARDRAIL_BLOCK: Rule = Rule {
    code: "RUN002",
    name: "swallowed-guardrail-block",
    severity: Severity::Warning,
    summary: "Action inside a try whose handler catches every exception, swallowing guardrail blocks",
    fix: FixAvailability::None,
    doc: RuleDoc { what: "Action inside a try whose handler catches every exception, swallowing guardrail blocks.", ..RuleDoc::EMPTY },
};

/// RUN003 guardrail-bypass.
pub static GUARDRAIL_BYPASS: Rule = Rule {
    code: "RUN003",
    name: "guardrail-bypass",
    severity: Severity::Error,
    summary: "Route that dispatches actions without the runtime guardrail",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Route that dispatches actions without the runtime guardrail.",
        ..RuleDoc::EMPTY
    },
};

/// The family's rules.
pub static RULES: &[&Rule] = &[
    &MISSING_AWAIT,
    &SWALLOWED_GUARDRAIL_BLOCK,
    &GUARDRAIL_BYPASS,
];

/// Runs the family's checks.
pub fn check(_checker: &mut Checker) {}
