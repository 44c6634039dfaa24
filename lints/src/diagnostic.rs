//! Diagnostics, rule metadata, fixes and their applicability.
//!
//! The vocabulary follows ruff (`crates/ruff_diagnostics`): a [`Diagnostic`] is one finding of
//! one [`Rule`] at a byte range; it may carry a [`Fix`], a list of non-overlapping [`Edit`]s with
//! an [`Applicability`] ordered `DisplayOnly < Unsafe < Safe`.

use crate::source::TextRange;
use serde::Serialize;

/// How serious a finding is. Ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Shown in editors as a hint; never fails a run.
    Hint,
    /// Informational; in `profile = "colony"` every finding beyond Colony's own validators.
    Info,
    /// A likely defect.
    Warning,
    /// The cell will fail or misbehave.
    Error,
}

impl Severity {
    /// Lower-case name (`error`, `warning`, `info`, `hint`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Hint => "hint",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// How safe it is to apply a fix automatically. Ordered `DisplayOnly < Unsafe < Safe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    /// Shown for manual use only; never applied (it may change meaning).
    DisplayOnly,
    /// Valid code, but behaviour may change; applied with `--unsafe-fixes`.
    Unsafe,
    /// Keeps the meaning; applied by `--fix`.
    Safe,
}

impl Applicability {
    /// `safe`, `unsafe` or `display-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::DisplayOnly => "display-only",
            Applicability::Unsafe => "unsafe",
            Applicability::Safe => "safe",
        }
    }
}

/// Replace the bytes of `range` with `content` (insertion when the range is empty, deletion when
/// `content` is empty). Ranges are byte offsets into the text the edit is applied to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Edit {
    /// Bytes replaced.
    pub range: TextRange,
    /// Replacement text.
    pub content: String,
}

impl Edit {
    /// Replaces `range` with `content`.
    pub fn replace(range: TextRange, content: impl Into<String>) -> Self {
        Self {
            range,
            content: content.into(),
        }
    }
    /// Inserts `content` at `offset`.
    pub fn insert(offset: usize, content: impl Into<String>) -> Self {
        Self {
            range: TextRange::empty(offset),
            content: content.into(),
        }
    }
    /// Deletes `range`.
    pub fn delete(range: TextRange) -> Self {
        Self {
            range,
            content: String::new(),
        }
    }
}

/// A proposed change that resolves a diagnostic: edits sorted by start offset and never
/// overlapping each other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fix {
    /// Whether it may be applied automatically.
    pub applicability: Applicability,
    /// Short imperative description ("Replace with `X`").
    pub message: String,
    /// The edits, sorted by range start.
    pub edits: Vec<Edit>,
}

impl Fix {
    /// Builds a fix, sorting its edits.
    pub fn new(
        applicability: Applicability,
        message: impl Into<String>,
        mut edits: Vec<Edit>,
    ) -> Self {
        edits.sort_by_key(|e| (e.range.start, e.range.end));
        Self {
            applicability,
            message: message.into(),
            edits,
        }
    }
    /// A safe fix.
    pub fn safe(message: impl Into<String>, edits: Vec<Edit>) -> Self {
        Self::new(Applicability::Safe, message, edits)
    }
    /// An unsafe fix.
    pub fn unsafe_edit(message: impl Into<String>, edits: Vec<Edit>) -> Self {
        Self::new(Applicability::Unsafe, message, edits)
    }
    /// A display-only fix.
    pub fn display_only(message: impl Into<String>, edits: Vec<Edit>) -> Self {
        Self::new(Applicability::DisplayOnly, message, edits)
    }
    /// The smallest range covering every edit (empty range at 0 for a fix without edits).
    pub fn range(&self) -> TextRange {
        let start = self.edits.iter().map(|e| e.range.start).min().unwrap_or(0);
        let end = self
            .edits
            .iter()
            .map(|e| e.range.end)
            .max()
            .unwrap_or(start);
        TextRange::new(start, end)
    }
}

/// Whether a rule can offer fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FixAvailability {
    /// Never.
    None,
    /// For some findings.
    Sometimes,
    /// For every finding.
    Always,
}

/// The documentation of a rule, printed by `cellguard rule CODE`. The examples are run as tests:
/// `example` must produce exactly this rule and `fixed_example` none.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RuleDoc {
    /// What the rule checks.
    pub what: &'static str,
    /// Why it matters at runtime.
    pub why: &'static str,
    /// A cell that triggers the rule.
    pub example: &'static str,
    /// The same cell fixed (`""` when no fixed form makes sense).
    pub fixed_example: &'static str,
    /// What the fix does and its applicability.
    pub fix_safety: &'static str,
    /// Config options that affect the rule.
    pub options: &'static str,
    /// Where the semantics come from (Colony, pyAgentic, smolagents, ...).
    pub source: &'static str,
    /// Optional `cellguard-kb` JSON used when running the examples.
    pub example_kb: &'static str,
    /// Optional `cellguard.toml` text used when running the examples.
    pub example_config: &'static str,
}

impl RuleDoc {
    /// An empty doc, for `..RuleDoc::EMPTY` in rule definitions.
    pub const EMPTY: RuleDoc = RuleDoc {
        what: "",
        why: "",
        example: "",
        fixed_example: "",
        fix_safety: "",
        options: "",
        source: "",
        example_kb: "",
        example_config: "",
    };
}

/// Static metadata of one rule. Each rule module declares its rules as `pub static` items and
/// lists them in its `RULES` slice; `rules::all_rules()` chains the slices.
#[derive(Debug, Serialize)]
pub struct Rule {
    /// Stable code, family prefix + number (`API001`). Never reused.
    pub code: &'static str,
    /// Kebab-case name (`unknown-action`).
    pub name: &'static str,
    /// Severity in the strict profile.
    pub severity: Severity,
    /// One-line summary.
    pub summary: &'static str,
    /// Whether the rule can offer fixes.
    pub fix: FixAvailability,
    /// The rule's documentation.
    pub doc: RuleDoc,
}

impl Rule {
    /// The family prefix: the leading ASCII letters of the code (`API` for `API001`).
    pub fn family(&self) -> &'static str {
        let end = self
            .code
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(self.code.len());
        &self.code[..end]
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
    }
}
impl Eq for Rule {}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The rule that produced it.
    pub rule: &'static Rule,
    /// Human-readable message (in `profile = "colony"`, Colony's exact error string for the
    /// findings Colony itself would report).
    pub message: String,
    /// Where, as byte offsets. While rules run this is relative to the cell's text; the engine
    /// maps it to the file before returning.
    pub range: TextRange,
    /// Severity after profile adjustment.
    pub severity: Severity,
    /// Optional extra line shown as `help:` (e.g. "Did you mean `X`?").
    pub help: Option<String>,
    /// Optional fix (ranges follow the same coordinates as `range`).
    pub fix: Option<Fix>,
    /// Zero-based index of the cell in its file, when the file holds several cells
    /// (Markdown fences, responses, traces); `None` for a plain `.py` file.
    pub cell: Option<usize>,
}

impl Diagnostic {
    /// A diagnostic of `rule` at `range` with the rule's default severity.
    pub fn new(rule: &'static Rule, range: TextRange, message: impl Into<String>) -> Self {
        Self {
            rule,
            message: message.into(),
            range,
            severity: rule.severity,
            help: None,
            fix: None,
            cell: None,
        }
    }
    /// Adds a help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    /// Adds a fix.
    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }
    /// The rule code.
    pub fn code(&self) -> &'static str {
        self.rule.code
    }
}
