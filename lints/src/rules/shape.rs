//! `SHP`: the shape of one iteration (Colony IterationShapeValidator, colony-reference §3.5,
//! with path-aware counting done right).

use super::Checker;
use crate::diagnostic::{FixAvailability, Rule, RuleDoc, Severity};

/// SHP001 too-many-actions.
pub static TOO_MANY_ACTIONS: Rule = Rule {
    code: "SHP001",
    name: "too-many-actions",
    severity: Severity::Error,
    summary: "More actions on one execution path than the configured maximum",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "More actions on one execution path than the configured maximum.",
        ..RuleDoc::EMPTY
    },
};

/// SHP002 action-in-loop.
pub static ACTION_IN_LOOP: Rule = Rule {
    code: "SHP002",
    name: "action-in-loop",
    severity: Severity::Warning,
    summary: "Action inside a loop or comprehension: unbounded dispatch count",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Action inside a loop or comprehension: unbounded dispatch count.",
        ..RuleDoc::EMPTY
    },
};

/// SHP003 too-many-browse.
pub static TOO_MANY_BROWSE: Rule = Rule {
    code: "SHP003",
    name: "too-many-browse",
    severity: Severity::Error,
    summary: "More browse() calls than the configured maximum",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "More browse() calls than the configured maximum.",
        ..RuleDoc::EMPTY
    },
};

/// SHP004 cell-too-long.
pub static CELL_TOO_LONG: Rule = Rule {
    code: "SHP004",
    name: "cell-too-long",
    severity: Severity::Error,
    summary: "More substantive lines than the configured maximum",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "More substantive lines than the configured maximum.",
        ..RuleDoc::EMPTY
    },
};

/// The family's rules.
pub static RULES: &[&Rule] = &[
    &TOO_MANY_ACTIONS,
    &ACTION_IN_LOOP,
    &TOO_MANY_BROWSE,
    &CELL_TOO_LONG,
];

/// Runs the family's checks.
pub fn check(_checker: &mut Checker) {}
