//! `API`: action keys and parameters checked against the knowledge base (Colony
//! APIKnowledgeBaseValidator, colony-reference §3.4, done as the dispatcher really resolves keys).

use super::Checker;
use crate::diagnostic::{FixAvailability, Rule, RuleDoc, Severity};

/// API001 unknown-action.
pub static UNKNOWN_ACTION: Rule = Rule {
    code: "API001",
    name: "unknown-action",
    severity: Severity::Error,
    summary: "Action key that no registered action resolves to",
    fix: FixAvailability::Sometimes,
    doc: RuleDoc {
        what: "Action key that no registered action resolves to.",
        ..RuleDoc::EMPTY
    },
};

/// API002 non-canonical-action-key.
pub static NON_CANONICAL_ACTION_KEY: Rule = Rule {
    code: "API002",
    name: "non-canonical-action-key",
    severity: Severity::Warning,
    summary: "Short or partial action key that the dispatcher resolves to a canonical key",
    fix: FixAvailability::Always,
    doc: RuleDoc {
        what: "Short or partial action key that the dispatcher resolves to a canonical key.",
        ..RuleDoc::EMPTY
    },
};

/// API003 ambiguous-action-key.
pub static AMBIGUOUS_ACTION_KEY: Rule = Rule {
    code: "API003",
    name: "ambiguous-action-key",
    severity: Severity::Error,
    summary: "Short action key that matches several registered actions",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Short action key that matches several registered actions.",
        ..RuleDoc::EMPTY
    },
};

/// API004 unknown-parameter.
pub static UNKNOWN_PARAMETER: Rule = Rule {
    code: "API004",
    name: "unknown-parameter",
    severity: Severity::Error,
    summary: "Keyword argument the action does not accept (Colony silently drops it)",
    fix: FixAvailability::Sometimes,
    doc: RuleDoc {
        what: "Keyword argument the action does not accept (Colony silently drops it).",
        ..RuleDoc::EMPTY
    },
};

/// API005 missing-parameter.
pub static MISSING_PARAMETER: Rule = Rule {
    code: "API005",
    name: "missing-parameter",
    severity: Severity::Error,
    summary: "Required parameter not passed",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Required parameter not passed.",
        ..RuleDoc::EMPTY
    },
};

/// API006 parameter-type-mismatch.
pub static PARAMETER_TYPE_MISMATCH: Rule = Rule {
    code: "API006",
    name: "parameter-type-mismatch",
    severity: Severity::Error,
    summary: "Literal argument of the wrong type or outside the allowed values",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Literal argument of the wrong type or outside the allowed values.",
        ..RuleDoc::EMPTY
    },
};

/// API007 dynamic-action-key.
pub static DYNAMIC_ACTION_KEY: Rule = Rule {
    code: "API007",
    name: "dynamic-action-key",
    severity: Severity::Warning,
    summary: "Action key passed as a keyword, variable, f-string or concatenation",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Action key passed as a keyword, variable, f-string or concatenation.",
        ..RuleDoc::EMPTY
    },
};

/// API008 pseudo-action-key.
pub static PSEUDO_ACTION_KEY: Rule = Rule {
    code: "API008",
    name: "pseudo-action-key",
    severity: Severity::Error,
    summary: "Pseudo key from the prompt that is not callable",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Pseudo key from the prompt that is not callable.",
        ..RuleDoc::EMPTY
    },
};

/// API009 unknown-name.
pub static UNKNOWN_NAME: Rule = Rule {
    code: "API009",
    name: "unknown-name",
    severity: Severity::Error,
    summary: "Call of a name that is not in the namespace, the knowledge base or the cell",
    fix: FixAvailability::Sometimes,
    doc: RuleDoc {
        what: "Call of a name that is not in the namespace, the knowledge base or the cell.",
        ..RuleDoc::EMPTY
    },
};

/// The family's rules.
pub static RULES: &[&Rule] = &[
    &UNKNOWN_ACTION,
    &NON_CANONICAL_ACTION_KEY,
    &AMBIGUOUS_ACTION_KEY,
    &UNKNOWN_PARAMETER,
    &MISSING_PARAMETER,
    &PARAMETER_TYPE_MISMATCH,
    &DYNAMIC_ACTION_KEY,
    &PSEUDO_ACTION_KEY,
    &UNKNOWN_NAME,
];

/// Runs the family's checks.
pub fn check(_checker: &mut Checker) {}
