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
use cellguard_lints::fix::{self, FixStatus};
use cellguard_lints::{lint, suppress, Diagnostic, KnowledgeBase, SourceFile};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// What processing one file produced.
#[derive(Debug, Clone)]
pub struct Processed {
    /// The file as it is after this run (fixed text when fixes were applied or diffed).
    pub source: SourceFile,
    /// Findings of `source` (the ones left after fixing).
    pub diagnostics: Vec<Diagnostic>,
    /// What the fix modes did (`None` when only reporting).
    pub record: Option<FixRecord>,
    /// Problems for standard error (`error: ...`, the run then exits with 2).
    pub errors: Vec<String>,
    /// Notes for standard error that do not change the exit code.
    pub warnings: Vec<String>,
}

/// What a fix mode did to one file.
#[derive(Debug, Clone, Default)]
pub struct FixRecord {
    /// The path as given.
    pub path: PathBuf,
    /// The text before this run.
    pub original: String,
    /// The text after this run.
    pub text: String,
    /// Fixes applied per rule code.
    pub fixed: BTreeMap<&'static str, usize>,
    /// `--add-noqa`: comments written or extended, and findings left unsuppressed.
    pub noqa: Option<(usize, usize)>,
    /// Unsafe fixes left among the findings that the threshold did not allow.
    pub hidden_unsafe: usize,
    /// True for standard input (the text goes to standard output, nothing is written).
    pub stdin: bool,
    /// True when the input started with a UTF-8 byte order mark, which the engine never sees
    /// (`SourceFile::from_bytes` drops it) and which the written text keeps.
    pub bom: bool,
}

impl FixRecord {
    /// The text to write out: [`FixRecord::text`] after the byte order mark the input had.
    pub fn output_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.text.len() + 3);
        if self.bom {
            bytes.extend_from_slice(b"\xEF\xBB\xBF");
        }
        bytes.extend_from_slice(self.text.as_bytes());
        bytes
    }

    /// True when this run changes the file's text.
    pub fn changed(&self) -> bool {
        self.text != self.original
    }

    /// The unified diff of the change (`--- path` / `+++ path` headers, three rows of context),
    /// or `None` when nothing changed.
    pub fn unified_diff(&self) -> Option<String> {
        if !self.changed() {
            return None;
        }
        let name = self.path.display().to_string();
        let diff = similar::TextDiff::from_lines(&self.original, &self.text);
        Some(
            diff.unified_diff()
                .context_radius(3)
                .header(&name, &name)
                .to_string(),
        )
    }

    /// Number of fixes applied.
    pub fn fixed_count(&self) -> usize {
        self.fixed.values().sum()
    }
}

/// Lints `source` and applies the fix mode of `args` (nothing is written here).
pub fn process(
    source: SourceFile,
    settings: &Settings,
    kb: &KnowledgeBase,
    args: &FixArgs,
) -> Processed {
    let mode = args.mode();
    let display = source.path.display().to_string();
    let mut out = Processed {
        diagnostics: Vec::new(),
        record: None,
        errors: Vec::new(),
        warnings: Vec::new(),
        source,
    };
    if mode == Mode::Report {
        out.diagnostics = lint::check_file(&out.source, settings, kb);
        return out;
    }
    let mut record = FixRecord {
        path: out.source.path.clone(),
        original: out.source.text.clone(),
        text: out.source.text.clone(),
        ..FixRecord::default()
    };
    if let Some(at) = out.source.invalid_utf8_at {
        let loc = out.source.location(at);
        out.errors.push(format!(
            "{display}:{}:{}: not fixed: the file is not valid UTF-8",
            loc.row, loc.column
        ));
        out.diagnostics = lint::check_file(&out.source, settings, kb);
        out.record = Some(record);
        return out;
    }
    if mode == Mode::AddNoqa {
        let added = suppress::add_noqa(&out.source, settings, kb);
        if added.skipped > 0 {
            out.warnings.push(format!(
                "{display}: {} finding{} could not be suppressed (security rules a comment cannot silence, syntax errors, or text the extractor synthesised)",
                added.skipped,
                plural(added.skipped)
            ));
        }
        record.noqa = Some((added.added, added.skipped));
        out.source = SourceFile::new(out.source.path.clone(), added.text);
        out.diagnostics = lint::check_file(&out.source, settings, kb);
    } else {
        let fixed = fix::fix_file(&out.source, settings, kb, args.threshold());
        if let FixStatus::NotConverged { rules } = &fixed.status {
            out.warnings.push(format!(
                "{display}: fixes did not converge after {} passes (rules: {}); this is a bug in cellguard, please report it",
                fixed.passes,
                rules.join(", ")
            ));
        }
        if !fixed.reverted.is_empty() {
            out.warnings.push(format!(
                "{display}: fixes of {} would introduce a syntax error and were not applied; this is a bug in cellguard, please report it",
                fixed.reverted.join(", ")
            ));
        }
        record.fixed = fixed.fixed;
        out.source = SourceFile::new(out.source.path.clone(), fixed.text);
        out.diagnostics = fixed.diagnostics;
    }
    record.text = out.source.text.clone();
    if args.threshold() == Applicability::Safe {
        record.hidden_unsafe = out
            .diagnostics
            .iter()
            .filter(|d| {
                d.fix
                    .as_ref()
                    .is_some_and(|f| f.applicability == Applicability::Unsafe)
            })
            .count();
    }
    out.record = Some(record);
    out
}

/// Writes the record's text to `path` when it changed, keeping a UTF-8 byte order mark.
pub fn write_back(path: &Path, record: &FixRecord) -> Result<(), String> {
    if !record.changed() {
        return Ok(());
    }
    let had_bom = std::fs::read(path)
        .map(|b| b.starts_with(b"\xEF\xBB\xBF"))
        .unwrap_or(false);
    let mut bytes = Vec::with_capacity(record.text.len() + 3);
    if had_bom {
        bytes.extend_from_slice(b"\xEF\xBB\xBF");
    }
    bytes.extend_from_slice(record.text.as_bytes());
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

/// Total fixes applied.
pub fn total_fixed(records: &[FixRecord]) -> usize {
    records.iter().map(FixRecord::fixed_count).sum()
}

/// `--show-fixes`: "Fixed N diagnostics:" then per file the count per rule (ruff's layout).
pub fn write_fix_summary(records: &[FixRecord], out: &mut dyn Write) -> std::io::Result<()> {
    let total = total_fixed(records);
    if total == 0 {
        return Ok(());
    }
    writeln!(out, "\nFixed {total} diagnostic{}:", plural(total))?;
    for r in records.iter().filter(|r| r.fixed_count() > 0) {
        writeln!(out, "- {}:", r.path.display())?;
        for (code, n) in &r.fixed {
            let name = cellguard_lints::rules::find_rule(code)
                .map(|r| r.name)
                .unwrap_or("");
            writeln!(out, "    {n} × {code} ({name})")?;
        }
    }
    Ok(())
}

/// The closing line of `--fix-only` / `--diff` ("Fixed 2 diagnostics." / "Would fix 2
/// diagnostics."),
/// with the hidden unsafe fixes when there are some.
pub fn fixed_line(records: &[FixRecord], would: bool) -> String {
    let n = total_fixed(records);
    let hidden: usize = records.iter().map(|r| r.hidden_unsafe).sum();
    let head = if would {
        if n == 0 {
            "No diagnostics would be fixed".to_string()
        } else {
            format!("Would fix {n} diagnostic{}", plural(n))
        }
    } else if n == 0 {
        "No diagnostics fixed".to_string()
    } else {
        format!("Fixed {n} diagnostic{}", plural(n))
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

    fn run(src: &str, a: &FixArgs) -> Processed {
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
        assert_eq!(
            args(|a| {
                a.unsafe_fixes = true;
                a.no_unsafe_fixes = true
            })
            .threshold(),
            Applicability::Safe
        );
    }

    #[test]
    fn report_mode_keeps_no_record() {
        let p = run(
            "import json
",
            &FixArgs::default(),
        );
        assert!(p.record.is_none());
        assert_eq!(p.diagnostics[0].rule.code, "IMP003");
    }

    #[test]
    fn fix_mode_reports_what_is_left() {
        let p = run("import json\nimport os\n", &args(|a| a.fix = true));
        assert_eq!(p.source.text, "import os\n");
        assert_eq!(p.diagnostics.len(), 1);
        assert_eq!(p.diagnostics[0].rule.code, "IMP001");
        let r = p.record.unwrap();
        assert!(r.changed());
        assert_eq!(r.hidden_unsafe, 1);
        let records = [r];
        assert_eq!(
            fixed_line(&records, false),
            "Fixed 1 diagnostic (1 additional fix available with `--unsafe-fixes`)."
        );
        let mut buf = Vec::new();
        write_fix_summary(&records, &mut buf).unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "\nFixed 1 diagnostic:\n- cell.py:\n    1 × IMP003 (import-fails-at-runtime)\n"
        );
    }

    #[test]
    fn diff_of_a_fix() {
        let p = run("x = 1\nimport json\ny = 2\n", &args(|a| a.diff = true));
        let r = p.record.unwrap();
        assert_eq!(
            r.unified_diff().unwrap(),
            "--- cell.py\n+++ cell.py\n@@ -1,3 +1,2 @@\n x = 1\n-import json\n y = 2\n"
        );
        assert_eq!(
            fixed_line(std::slice::from_ref(&r), true),
            "Would fix 1 diagnostic."
        );
        let clean = run("x = 1\n", &args(|a| a.diff = true)).record.unwrap();
        assert!(clean.unified_diff().is_none());
        assert_eq!(fixed_line(&[clean], true), "No diagnostics would be fixed.");
    }

    #[test]
    fn invalid_utf8_is_never_rewritten() {
        let src = SourceFile::from_bytes("a.py", b"import json\nx = '\xff'\n");
        let p = process(
            src,
            &Settings::default(),
            &KnowledgeBase::new(),
            &args(|a| a.fix = true),
        );
        assert!(!p.record.unwrap().changed());
        assert_eq!(
            p.errors,
            vec!["a.py:2:6: not fixed: the file is not valid UTF-8".to_string()]
        );
        assert_eq!(p.diagnostics[0].rule.code, "IMP003");
    }

    #[test]
    fn add_noqa_mode() {
        // IMP003 is suppressible; IMP001 (a security rule) is not by default: left alone, skipped.
        let p = run("import json\n", &args(|a| a.add_noqa = true));
        assert_eq!(p.source.text, "import json  # noqa: IMP003\n");
        assert_eq!(p.record.unwrap().noqa, Some((1, 0)));
        let p = run("import os\n", &args(|a| a.add_noqa = true));
        assert_eq!(p.source.text, "import os\n");
        assert_eq!(p.record.unwrap().noqa, Some((0, 1)));
        assert_eq!(p.diagnostics[0].rule.code, "IMP001");
    }

    #[test]
    fn write_back_keeps_a_byte_order_mark() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        std::fs::write(&path, b"\xEF\xBB\xBFimport json\nx = 1\n").unwrap();
        let src = SourceFile::from_bytes(&path, &std::fs::read(&path).unwrap());
        let p = process(
            src,
            &Settings::default(),
            &KnowledgeBase::new(),
            &args(|a| a.fix = true),
        );
        write_back(&path, p.record.as_ref().unwrap()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"\xEF\xBB\xBFx = 1\n");
    }
}
