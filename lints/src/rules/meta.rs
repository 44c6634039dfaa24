//! `CG`: cellguard's own meta rules, about suppression comments. They are produced by
//! [`crate::suppress::apply`] after every other rule ran (a suppression is unused only once
//! everything it could suppress is known), not by a `check` function.
//!
//! Semantics follow ruff's RUF100 (unused-noqa) and RUF102 (invalid-rule-code): the fix is
//! always available and safe; it removes the offending codes, or the whole comment when
//! nothing else is left in it (lsp-linter-anchors §1.2).

use crate::diagnostic::{FixAvailability, Rule, RuleDoc, Severity};

/// The family prefix of the meta rules.
pub const FAMILY: &str = "CG";

/// CG001 unused-suppression.
pub static UNUSED_SUPPRESSION: Rule = Rule {
    code: "CG001",
    name: "unused-suppression",
    severity: Severity::Warning,
    summary: "Suppression comment (or one of its codes) that suppresses nothing",
    fix: FixAvailability::Always,
    doc: RuleDoc {
        what: "Reports codes in `# noqa: ...`, `# cellguard: ignore[...]` and `# cellguard: ignore-file[...]` comments that suppressed no finding in this run: the rule found nothing there, or the rule is not enabled (`non-enabled`). A blanket `# noqa` that suppressed nothing is reported too. Codes of other linters in a `# noqa` list (`E501`, `F401`: letters that are no cellguard family) are left alone.",
        why: "A stale suppression hides the next real finding on that line: once the code it was written for is fixed, it silently swallows whatever an agent writes there later.",
        example: "x = 1  # noqa: IMP003\n",
        fixed_example: "x = 1\n",
        fix_safety: "Safe: the fix removes the unused codes, or the whole comment (the whole row when the comment stood alone) when no other code is left. Text after the codes (a reason) is removed with the comment; another tool's pragma in the same comment (`# type: ignore  # noqa: X`) is kept.",
        options: "`[lint] select`/`ignore` decide which rules are enabled (codes of disabled rules are reported as `non-enabled`).",
        source: "ruff RUF100 unused-noqa (lsp-linter-anchors §1.2); flake8 `# noqa` syntax.",
        ..RuleDoc::EMPTY
    },
};

/// CG002 unknown-suppression-code.
pub static UNKNOWN_SUPPRESSION_CODE: Rule = Rule {
    code: "CG002",
    name: "unknown-suppression-code",
    severity: Severity::Warning,
    summary: "Suppression comment naming a rule code that does not exist",
    fix: FixAvailability::Always,
    doc: RuleDoc {
        what: "Reports codes in a suppression comment that are no cellguard rule: misspelt codes (`API01`), retired numbers, and prefixes (`API`, `IMP00`): suppressions take exact codes only, as in ruff. In `# cellguard: ignore[...]` every entry must be a code or a rule name; in `# noqa: ...` only codes with a cellguard family prefix are checked.",
        why: "An unknown code suppresses nothing, so the finding the author meant to silence is still reported, or worse, the author believes a line is covered when it is not.",
        example: "x = 1  # cellguard: ignore[IMP01]\n",
        fixed_example: "x = 1\n",
        fix_safety: "Safe: the fix removes the unknown codes (the comment when nothing else is left). When a single close code exists, the help line suggests it.",
        options: "None.",
        source: "ruff RUF102 invalid-rule-code (lsp-linter-anchors §1.2).",
        ..RuleDoc::EMPTY
    },
};

/// CG003 duplicated-suppression-code.
pub static DUPLICATED_SUPPRESSION_CODE: Rule = Rule {
    code: "CG003",
    name: "duplicated-suppression-code",
    severity: Severity::Warning,
    summary: "The same rule listed twice in one suppression comment",
    fix: FixAvailability::Always,
    doc: RuleDoc {
        what: "Reports a rule code listed more than once in one suppression comment (a code and the rule's name count as the same rule).",
        why: "Duplicates are noise that tools and people then copy; they usually come from merging two suppressions by hand.",
        example: "import json  # noqa: IMP003, IMP003\n",
        fixed_example: "import json  # noqa: IMP003\n",
        fix_safety: "Safe: the fix removes the repeated entries and keeps the first.",
        options: "None.",
        source: "ruff RUF100 (duplicated codes) (lsp-linter-anchors §1.2).",
        ..RuleDoc::EMPTY
    },
};

/// CG004 invalid-suppression.
pub static INVALID_SUPPRESSION: Rule = Rule {
    code: "CG004",
    name: "invalid-suppression",
    severity: Severity::Warning,
    summary: "Malformed suppression comment that suppresses nothing",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports `# cellguard:` comments that cellguard cannot read: a blanket `# cellguard: ignore` without codes (only `# noqa` has a blanket form), an empty or unclosed code list, an unknown directive, `# noqa:` followed by no code, and `# cellguard: ignore-file[...]` at the end of a code line (it must stand on its own line).",
        why: "A malformed suppression silently does nothing, so the author believes a finding is silenced while cellguard (and Colony) still reject the cell.",
        example: "x = 1  # cellguard: ignore\n",
        fixed_example: "x = 1\n",
        fix_safety: "No fix: cellguard cannot know which codes were meant.",
        options: "None.",
        source: "ruff's warnings for invalid `# noqa` and `# ruff:` comments (lsp-linter-anchors §1.2).",
        ..RuleDoc::EMPTY
    },
};

/// CG005 suppressed-security-rule.
pub static SECURITY_SUPPRESSION: Rule = Rule {
    code: "CG005",
    name: "suppressed-security-rule",
    severity: Severity::Error,
    summary: "Suppression comment inside the cell aimed at a security rule (SBX, IMP001, IMP002)",
    fix: FixAvailability::Always,
    doc: RuleDoc {
        what: "Reports a `# noqa`, `# cellguard: ignore[...]` or `# cellguard: ignore-file[...]` comment that names a sandbox rule (`SBX*`), `IMP001` (import outside the allowlist), `IMP002` (relative import) or `CG005` itself, and a blanket `# noqa` on a line that has such a finding. These comments suppress nothing: the finding they aim at is still reported. `[lint] allow-inline-suppressions` lists the codes that comments may silence after all (then this rule does not report them).",
        why: "The cell is written by the model, or by whoever injected its prompt: the very party the sandbox rules guard the host against. If its own comments could turn those rules off, `print(json.codecs.open(\"/etc/passwd\").read())  # noqa` would reach the executor unflagged. A comment aimed at a security rule in an agent cell is itself a sign of an attack (or of a developer who should use the configuration instead).",
        example: "x = json.codecs  # noqa: SBX005\n",
        fixed_example: "x = json.codecs\n",
        fix_safety: "Safe: the fix removes the codes of security rules from the comment (the whole comment when nothing else is left); the code's behaviour does not change and the security finding stays reported either way.",
        options: "`[lint] allow-inline-suppressions` (codes, prefixes, rule names or `ALL`) opts trusted, human-written files in; `[lint] ignore` and `--ignore` (the developer's configuration, not the cell's) turn any rule off.",
        source: "cellguard (issue 4, finding G25). Like CI linters that refuse `# nosec` in untrusted contributions: a security check's waiver belongs to the reviewer's configuration, not to the code under review.",
        ..RuleDoc::EMPTY
    },
};

/// The family's rules.
pub static RULES: &[&Rule] = &[
    &UNUSED_SUPPRESSION,
    &UNKNOWN_SUPPRESSION_CODE,
    &DUPLICATED_SUPPRESSION_CODE,
    &INVALID_SUPPRESSION,
    &SECURITY_SUPPRESSION,
];
