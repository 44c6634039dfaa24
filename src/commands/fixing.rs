//! The fix-related flags of `cellguard check` and what they do to each file, following
//! `ruff check` (lsp-linter-anchors §1.1, §1.3):
//!
//! - `--fix` applies safe fixes (with `--unsafe-fixes`, unsafe ones too) and writes the files;
//!   the findings left are reported and decide the exit code (1 only if some remain).
//! - `--fix-only` applies fixes like `--fix` but reports nothing about the findings left;
//!   exit 0 unless an error occurred.
//! - `--diff` prints a unified diff of what `--fix` would change and writes nothing; exit 1 when
//!   there is a diff.
//! - `--show-fixes` lists the fixes applied per file and rule.
//! - `--unsafe-fixes` without `--fix` marks unsafe fixes as applicable (`[*]`) in the report.
//! - `--add-noqa` writes `# noqa: CODES` for every current finding (placement rules in
//!   `cellguard_lints::suppress::add_noqa_edits`); exit 0.
//!
//! With standard input, the fixed text goes to standard output and the report to standard
//! error. A file that is not valid UTF-8 is never rewritten (its replacement characters would
//! be written back): it is reported with the position of the first invalid byte. A UTF-8 byte
//! order mark is kept.

use cellguard_lints::config::Settings;
use cellguard_lints::diagnostic::Applicability;
use cellguard_lints::fix::{self, FixStatus, FixedFile};
use cellguard_lints::{lint, suppress, Diagnostic, KnowledgeBase, SourceFile};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// The fix-related flags of `cellguard check`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FixArgs {
    /// Apply fixes and write the files (safe fixes; unsafe ones too with `--unsafe-fixes`).
    #[arg(long, overrides_with = "no_fix")]
    pub fix: bool,
    /// Do not apply fixes (overrides an earlier `--fix`).
    #[arg(long, overrides_with = "fix", hide = true)]
    pub no_fix: bool,
    /// Include fixes that may change behaviour: applied with `--fix`, marked `[*]` otherwise.
    #[arg(long, overrides_with = "no_unsafe_fixes")]
    pub unsafe_fixes: bool,
    /// Do not include unsafe fixes (overrides an earlier `--unsafe-fixes`).
    #[arg(long, overrides_with = "unsafe_fixes", hide = true)]
    pub no_unsafe_fixes: bool,
    /// Print a unified diff of the fixes instead of writing them; exit 1 when there is a diff.
    #[arg(long)]
    pub diff: bool,
    /// List the fixes applied, per file and rule.
    #[arg(long, overrides_with = "no_show_fixes")]
    pub show_fixes: bool,
    /// Do not list the fixes applied.
    #[arg(long, overrides_with = "show_fixes", hide = true)]
    pub no_show_fixes: bool,
    /// Apply fixes but do not report the findings left; exit 0 unless an error occurs.
    #[arg(long)]
    pub fix_only: bool,
    /// Write a `# noqa: CODES` comment for every current finding.
    #[arg(long, conflicts_with_all = ["fix", "fix_only", "diff"])]
    pub add_noqa: bool,
}

/// What `check` does with fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Report findings (fixes only shown).
    Report,
    /// `--fix`.
    Fix,
    /// `--fix-only`.
    FixOnly,
    /// `--diff`.
    Diff,
    /// `--add-noqa`.
    AddNoqa,
}

impl FixArgs {
    /// The mode these flags select.
    pub fn mode(&self) -> Mode {
        if self.add_noqa {
            Mode::AddNoqa
        } else if self.diff {
            Mode::Diff
        } else if self.fix_only {
            Mode::FixOnly
        } else if self.fix && !self.no_fix {
            Mode::Fix
        } else {
            Mode::Report
        }
    }

    /// `Unsafe` with `--unsafe-fixes`, `Safe` otherwise.
    pub fn threshold(&self) -> Applicability {
        if self.unsafe_fixes && !self.no_unsafe_fixes {
            Applicability::Unsafe
        } else {
            Applicability::Safe
        }
    }
}

/// What happened to one file.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The file as it is after this run (fixed text when fixes were applied or diffed).
    pub source: SourceFile,
    /// Findings of `source` (the ones left after fixing).
    pub diagnostics: Vec<Diagnostic>,
    /// The text before this run.
    pub original: String,
    /// The fix loop's result, in the fix modes.
    pub fixed: Option<FixedFile>,
    /// `--add-noqa`: comments written or extended, and findings left unsuppressed.
    pub noqa: Option<(usize, usize)>,
    /// Problems for standard error (`error: ...`, the run then exits with 2).
    pub errors: Vec<String>,
    /// Notes for standard error that do not change the exit code.
    pub warnings: Vec<String>,
}

impl Outcome {
    /// True when this run changes the file's text.
    pub fn changed(&self) -> bool {
        self.source.text != self.original
    }
}

/// Lints `source` and applies the fix mode of `args` (nothing is written here).
pub fn process(
    source: SourceFile,
    settings: &Settings,
    kb: &KnowledgeBase,
    args: &FixArgs,
) -> Outcome {
    let original = source.text.clone();
    let display = source.path.display().to_string();
    let mut outcome = Outcome {
        diagnostics: Vec::new(),
        original,
        fixed: None,
        noqa: None,
        errors: Vec::new(),
        warnings: Vec::new(),
        source,
    };
    let mode = args.mode();
    if mode != Mode::Report {
        if let Some(at) = outcome.source.invalid_utf8_at {
            let loc = outcome.source.location(at);
            outcome.errors.push(format!(
                "{display}:{}:{}: not fixed: the file is not valid UTF-8",
                loc.row, loc.column
            ));
            outcome.diagnostics = lint::check_file(&outcome.source, settings, kb);
            return outcome;
        }
    }
    match mode {
        Mode::Report => {
            outcome.diagnostics = lint::check_file(&outcome.source, settings, kb);
        }
        Mode::AddNoqa => {
            let added = suppress::add_noqa(&outcome.source, settings, kb);
            if added.skipped > 0 {
                outcome.warnings.push(format!(
                    "{display}: {} finding{} could not be suppressed (syntax errors, or text the extractor synthesised)",
                    added.skipped,
                    plural(added.skipped)
                ));
            }
            outcome.noqa = Some((added.added, added.skipped));
            outcome.source = SourceFile::new(outcome.source.path.clone(), added.text);
            outcome.diagnostics = lint::check_file(&outcome.source, settings, kb);
        }
        Mode::Fix | Mode::FixOnly | Mode::Diff => {
            let fixed = fix::fix_file(&outcome.source, settings, kb, args.threshold());
            if let FixStatus::NotConverged { rules } = &fixed.status {
                outcome.warnings.push(format!(
                    "{display}: fixes did not converge after {} passes (rules: {}); this is a bug in cellguard, please report it",
                    fixed.passes,
                    rules.join(", ")
                ));
            }
            if !fixed.reverted.is_empty() {
                outcome.warnings.push(format!(
                    "{display}: fixes of {} would introduce a syntax error and were not applied; this is a bug in cellguard, please report it",
                    fixed.reverted.join(", ")
                ));
            }
            outcome.source = SourceFile::new(outcome.source.path.clone(), fixed.text.clone());
            outcome.diagnostics = fixed.diagnostics.clone();
            outcome.fixed = Some(fixed);
        }
    }
    outcome
}

/// Writes the outcome's text to `path` when it changed, keeping a UTF-8 byte order mark.
pub fn write_back(path: &Path, outcome: &Outcome) -> Result<(), String> {
    if !outcome.changed() {
        return Ok(());
    }
    let had_bom = std::fs::read(path)
        .map(|b| b.starts_with(b"\xEF\xBB\xBF"))
        .unwrap_or(false);
    let mut bytes = Vec::with_capacity(outcome.source.text.len() + 3);
    if had_bom {
        bytes.extend_from_slice(b"\xEF\xBB\xBF");
    }
    bytes.extend_from_slice(outcome.source.text.as_bytes());
    std::fs::write(path, bytes).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// "s" unless `n == 1`.
pub fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The unified diff of one file's fixes (`--- path` / `+++ path` headers, three rows of
/// context), or `None` when nothing changed.
pub fn unified_diff(outcome: &Outcome) -> Option<String> {
    if !outcome.changed() {
        return None;
    }
    let name = outcome.source.path.display().to_string();
    let diff = similar::TextDiff::from_lines(&outcome.original, &outcome.source.text);
    Some(
        diff.unified_diff()
            .context_radius(3)
            .header(&name, &name)
            .to_string(),
    )
}

/// Fixes applied per rule over every file.
fn fixed_per_file(outcomes: &[Outcome]) -> Vec<(&Outcome, &BTreeMap<&'static str, usize>)> {
    outcomes
        .iter()
        .filter_map(|o| o.fixed.as_ref().map(|f| (o, &f.fixed)))
        .filter(|(_, f)| !f.is_empty())
        .collect()
}

/// Total fixes applied.
pub fn total_fixed(outcomes: &[Outcome]) -> usize {
    outcomes
        .iter()
        .filter_map(|o| o.fixed.as_ref())
        .map(FixedFile::fixed_count)
        .sum()
}

/// Unsafe fixes left among the findings when only safe fixes were applied.
pub fn hidden_unsafe(outcomes: &[Outcome], threshold: Applicability) -> usize {
    if threshold == Applicability::Unsafe {
        return 0;
    }
    outcomes
        .iter()
        .flat_map(|o| &o.diagnostics)
        .filter(|d| {
            d.fix
                .as_ref()
                .is_some_and(|f| f.applicability == Applicability::Unsafe)
        })
        .count()
}

/// `--show-fixes`: "Fixed N errors:" then per file the count per rule (ruff's layout).
pub fn write_fix_summary(outcomes: &[Outcome], out: &mut dyn Write) -> std::io::Result<()> {
    let per_file = fixed_per_file(outcomes);
    if per_file.is_empty() {
        return Ok(());
    }
    let total = total_fixed(outcomes);
    writeln!(out, "\nFixed {total} error{}:", plural(total))?;
    for (o, counts) in per_file {
        writeln!(out, "- {}:", o.source.path.display())?;
        for (code, n) in counts {
            let name = cellguard_lints::rules::find_rule(code)
                .map(|r| r.name)
                .unwrap_or("");
            writeln!(out, "    {n} × {code} ({name})")?;
        }
    }
    Ok(())
}

/// The closing line of `--fix-only` / `--diff` ("Fixed 2 errors." / "Would fix 2 errors."),
/// with the hidden unsafe fixes when there are some.
pub fn fixed_line(outcomes: &[Outcome], threshold: Applicability, would: bool) -> String {
    let n = total_fixed(outcomes);
    let hidden = hidden_unsafe(outcomes, threshold);
    let head = if would {
        if n == 0 {
            "No errors would be fixed".to_string()
        } else {
            format!("Would fix {n} error{}", plural(n))
        }
    } else if n == 0 {
        "No errors fixed".to_string()
    } else {
        format!("Fixed {n} error{}", plural(n))
    };
    if hidden > 0 {
        format!(
            "{head} ({hidden} additional fix{} available with `--unsafe-fixes`).",
            if hidden == 1 { "" } else { "es" }
        )
    } else {
        format!("{head}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(f: impl FnOnce(&mut FixArgs)) -> FixArgs {
        let mut a = FixArgs::default();
        f(&mut a);
        a
    }

    fn run(src: &str, a: &FixArgs) -> Outcome {
        process(
            SourceFile::new("cell.py", src),
            &Settings::default(),
            &KnowledgeBase::new(),
            a,
        )
    }

    #[test]
    fn modes() {
        assert_eq!(FixArgs::default().mode(), Mode::Report);
        assert_eq!(args(|a| a.fix = true).mode(), Mode::Fix);
        assert_eq!(
            args(|a| {
                a.fix = true;
                a.diff = true
            })
            .mode(),
            Mode::Diff
        );
        assert_eq!(args(|a| a.fix_only = true).mode(), Mode::FixOnly);
        assert_eq!(args(|a| a.add_noqa = true).mode(), Mode::AddNoqa);
        assert_eq!(
            args(|a| a.unsafe_fixes = true).threshold(),
            Applicability::Unsafe
        );
    }

    #[test]
    fn fix_mode_reports_what_is_left() {
        let o = run("import json\nimport os\n", &args(|a| a.fix = true));
        assert_eq!(o.source.text, "import os\n");
        assert_eq!(o.diagnostics.len(), 1);
        assert_eq!(o.diagnostics[0].rule.code, "IMP001");
        assert!(o.changed());
        assert_eq!(
            fixed_line(std::slice::from_ref(&o), Applicability::Safe, false),
            "Fixed 1 error (1 additional fix available with `--unsafe-fixes`)."
        );
        let mut buf = Vec::new();
        write_fix_summary(&[o], &mut buf).unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "\nFixed 1 error:\n- cell.py:\n    1 × IMP003 (import-fails-at-runtime)\n"
        );
    }

    #[test]
    fn diff_of_a_fix() {
        let o = run("x = 1\nimport json\ny = 2\n", &args(|a| a.diff = true));
        assert_eq!(
            unified_diff(&o).unwrap(),
            "--- cell.py\n+++ cell.py\n@@ -1,3 +1,2 @@\n x = 1\n-import json\n y = 2\n"
        );
        assert_eq!(
            fixed_line(&[o], Applicability::Safe, true),
            "Would fix 1 error."
        );
        let clean = run("x = 1\n", &args(|a| a.diff = true));
        assert!(unified_diff(&clean).is_none());
    }

    #[test]
    fn invalid_utf8_is_never_rewritten() {
        let src = SourceFile::from_bytes("a.py", b"import json\nx = '\xff'\n");
        let o = process(
            src,
            &Settings::default(),
            &KnowledgeBase::new(),
            &args(|a| a.fix = true),
        );
        assert!(!o.changed());
        assert_eq!(
            o.errors,
            vec!["a.py:2:6: not fixed: the file is not valid UTF-8".to_string()]
        );
        assert_eq!(o.diagnostics[0].rule.code, "IMP003");
    }

    #[test]
    fn add_noqa_mode() {
        let o = run("import os\n", &args(|a| a.add_noqa = true));
        assert_eq!(o.source.text, "import os  # noqa: IMP001\n");
        assert_eq!(o.noqa, Some((1, 0)));
        assert!(o.diagnostics.is_empty());
    }

    #[test]
    fn write_back_keeps_a_byte_order_mark() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        std::fs::write(&path, b"\xEF\xBB\xBFimport json\nx = 1\n").unwrap();
        let src = SourceFile::from_bytes(&path, &std::fs::read(&path).unwrap());
        let o = process(
            src,
            &Settings::default(),
            &KnowledgeBase::new(),
            &args(|a| a.fix = true),
        );
        write_back(&path, &o).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"\xEF\xBB\xBFx = 1\n");
    }
}
