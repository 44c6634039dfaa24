//! Fix display for the human formats: the small diff shown under a diagnostic (ruff's
//! "ℹ Safe fix" block) and the closing hint line ("[*] N fixable with the `--fix` option (M
//! hidden fixes can be enabled with the `--unsafe-fixes` option).").
//!
//! The diff is computed by applying the fix's edits to the file text and diffing by rows
//! (`similar`), with one row of context; rows carry their old and new numbers:
//!
//! ```text
//! ℹ Unsafe fix
//! 1   |-import os
//! 2 1 | x = 1
//! ```

use super::{RenderOptions, Report};
use cellguard_lints::diagnostic::{Applicability, Diagnostic, Fix};
use cellguard_lints::fix::{apply_fixes, is_applicable};
use cellguard_lints::SourceFile;
use similar::{ChangeTag, TextDiff};
use termcolor::{Color, ColorSpec, WriteColor};

/// "Safe fix", "Unsafe fix" or "Display-only fix".
pub fn fix_title(a: Applicability) -> &'static str {
    match a {
        Applicability::Safe => "Safe fix",
        Applicability::Unsafe => "Unsafe fix",
        Applicability::DisplayOnly => "Display-only fix",
    }
}

/// One row of a fix diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffRow {
    /// One-based row in the text before the fix (`None` for an inserted row).
    pub old: Option<usize>,
    /// One-based row in the text after the fix (`None` for a deleted row).
    pub new: Option<usize>,
    /// `' '`, `'-'` or `'+'`.
    pub sign: char,
    /// The row's text, without its line ending, control characters replaced.
    pub text: String,
}

/// The rows of one diagnostic's fix diff against `file` (one row of context, `None` between
/// hunks), or `None` when it has no fix or the fix cannot be applied to the text.
pub fn fix_rows(
    file: &SourceFile,
    d: &Diagnostic,
) -> Option<(Applicability, Vec<Option<DiffRow>>)> {
    let fix = d.fix.as_ref()?;
    let text = apply_one(&file.text, d, fix)?;
    let diff = TextDiff::from_lines(file.text.as_str(), text.as_str());
    let groups = diff.grouped_ops(1);
    if groups.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    for (gi, group) in groups.iter().enumerate() {
        if gi > 0 {
            rows.push(None);
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                rows.push(Some(DiffRow {
                    old: change.old_index().map(|i| i + 1),
                    new: change.new_index().map(|i| i + 1),
                    sign,
                    text: super::sanitize(change.value().trim_end_matches(['\n', '\r']))
                        .into_owned(),
                }));
            }
        }
    }
    Some((fix.applicability, rows))
}

/// The diff block of one diagnostic's fix as plain text (ruff's layout):
///
/// ```text
/// ℹ Unsafe fix
/// 1   |-import os
/// 2 1 | x = 1
/// ```
#[cfg(test)]
pub fn fix_diff(file: &SourceFile, d: &Diagnostic) -> Option<String> {
    let mut out = termcolor::NoColor::new(Vec::new());
    write_fix_diff(file, d, &mut out).ok()?;
    let s = String::from_utf8(out.into_inner()).ok()?;
    (!s.is_empty()).then_some(s)
}

/// Writes the diff block of `d`'s fix (nothing when it has none), deleted rows in red and
/// inserted rows in green when `w` supports colour.
pub fn write_fix_diff(
    file: &SourceFile,
    d: &Diagnostic,
    w: &mut dyn WriteColor,
) -> std::io::Result<()> {
    let Some((applicability, rows)) = fix_rows(file, d) else {
        return Ok(());
    };
    let max = rows
        .iter()
        .flatten()
        .map(|r| r.old.unwrap_or(0).max(r.new.unwrap_or(0)))
        .max()
        .unwrap_or(0);
    let width = max.to_string().len();
    w.set_color(ColorSpec::new().set_bold(true))?;
    write!(w, "ℹ {}", fix_title(applicability))?;
    w.reset()?;
    writeln!(w)?;
    for row in &rows {
        let Some(r) = row else {
            writeln!(w, "{:>width$} {:>width$} | ...", "", "")?;
            continue;
        };
        let old = r.old.map(|n| n.to_string()).unwrap_or_default();
        let new = r.new.map(|n| n.to_string()).unwrap_or_default();
        write!(w, "{old:>width$} {new:>width$} |")?;
        if r.sign == ' ' && r.text.is_empty() {
            writeln!(w)?;
            continue;
        }
        match r.sign {
            '-' => w.set_color(ColorSpec::new().set_fg(Some(Color::Red)))?,
            '+' => w.set_color(ColorSpec::new().set_fg(Some(Color::Green)))?,
            _ => {}
        }
        write!(w, "{}{}", r.sign, r.text)?;
        w.reset()?;
        writeln!(w)?;
    }
    Ok(())
}

fn apply_one(text: &str, d: &Diagnostic, fix: &Fix) -> Option<String> {
    let single = Diagnostic {
        fix: Some(Fix {
            applicability: Applicability::Safe,
            ..fix.clone()
        }),
        ..d.clone()
    };
    apply_fixes(text, std::slice::from_ref(&single), Applicability::Safe).map(|p| p.text)
}

/// The closing summary of the human formats: `super::summary`, or after `--fix`
/// `Found N diagnostics (F fixed, R remaining).` (ruff's line, saying "diagnostics" as
/// `super::summary` does: warnings are fixed too).
pub fn summary_with_fixes(report: &Report, opts: &RenderOptions) -> String {
    if opts.fixed == 0 {
        return super::summary(report);
    }
    let remaining = report.len();
    let total = opts.fixed + remaining;
    format!(
        "Found {total} diagnostic{} ({} fixed, {remaining} remaining).",
        if total == 1 { "" } else { "s" },
        opts.fixed
    )
}

/// Writes the closing lines of the human formats: the summary (bold when colouring) and the
/// fixable hint.
pub fn write_closing(
    report: &Report,
    opts: &RenderOptions,
    w: &mut dyn WriteColor,
) -> std::io::Result<()> {
    w.set_color(ColorSpec::new().set_bold(true))?;
    write!(w, "{}", summary_with_fixes(report, opts))?;
    w.reset()?;
    writeln!(w)?;
    if let Some(hint) = fixable_hint(report.diagnostics().map(|(_, d)| d), opts.unsafe_fixes) {
        writeln!(w, "{hint}")?;
    }
    Ok(())
}

/// The hint printed after the findings: how many `--fix` would apply, and how many unsafe
/// fixes `--unsafe-fixes` would add. `None` when there is nothing to say.
pub fn fixable_hint<'a>(
    diagnostics: impl IntoIterator<Item = &'a Diagnostic>,
    unsafe_fixes: bool,
) -> Option<String> {
    let threshold = if unsafe_fixes {
        Applicability::Unsafe
    } else {
        Applicability::Safe
    };
    let (mut applicable, mut hidden) = (0usize, 0usize);
    for d in diagnostics {
        if let Some(f) = &d.fix {
            if is_applicable(f, threshold) {
                applicable += 1;
            } else if f.applicability == Applicability::Unsafe {
                hidden += 1;
            }
        }
    }
    let hidden_text = |n: usize| {
        format!(
            "{n} hidden fix{} can be enabled with the `--unsafe-fixes` option",
            if n == 1 { "" } else { "es" }
        )
    };
    match (applicable, hidden) {
        (0, 0) => None,
        (0, h) => Some(format!("No fixes available ({}).", hidden_text(h))),
        (a, 0) => Some(format!("[*] {a} fixable with the `--fix` option.")),
        (a, h) => Some(format!(
            "[*] {a} fixable with the `--fix` option ({}).",
            hidden_text(h)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellguard_lints::{lint, KnowledgeBase, Settings};

    fn diags(src: &str) -> (SourceFile, Vec<Diagnostic>) {
        let f = SourceFile::new("a.py", src);
        let d = lint::check_file(&f, &Settings::default(), &KnowledgeBase::new());
        (f, d)
    }

    #[test]
    fn diff_block_of_a_deletion() {
        let (f, d) = diags("import os\nx = 1\ny = 2\n");
        assert_eq!(d[0].rule.code, "IMP001");
        assert_eq!(
            fix_diff(&f, &d[0]).unwrap(),
            "ℹ Unsafe fix\n1   |-import os\n2 1 | x = 1\n"
        );
    }

    #[test]
    fn diff_block_of_a_replacement_keeps_crlf_out() {
        let (f, d) = diags("x = 1\r\nimport json  # noqa: IMP003, SHP002\r\n");
        assert_eq!(d[0].rule.code, "CG001");
        assert_eq!(
            fix_diff(&f, &d[0]).unwrap(),
            "ℹ Safe fix\n1 1 | x = 1\n2   |-import json  # noqa: IMP003, SHP002\n  2 |+import json  # noqa: IMP003\n"
        );
    }

    #[test]
    fn hint_lines() {
        let (_, d) = diags("import os\nimport json\nimport re\n");
        assert_eq!(
            fixable_hint(&d, false).as_deref(),
            Some("[*] 2 fixable with the `--fix` option (1 hidden fix can be enabled with the `--unsafe-fixes` option).")
        );
        assert_eq!(
            fixable_hint(&d, true).as_deref(),
            Some("[*] 3 fixable with the `--fix` option.")
        );
        let (_, d) = diags("import os\nimport sys\n");
        assert_eq!(
            fixable_hint(&d, false).as_deref(),
            Some("No fixes available (2 hidden fixes can be enabled with the `--unsafe-fixes` option).")
        );
        let (_, d) = diags("x = 1\n");
        assert_eq!(fixable_hint(&d, false), None);
    }
}
