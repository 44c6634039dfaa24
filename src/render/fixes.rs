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

use cellguard_lints::diagnostic::{Applicability, Diagnostic, Fix};
use cellguard_lints::fix::{apply_fixes, is_applicable};
use cellguard_lints::SourceFile;
use similar::{ChangeTag, TextDiff};
use std::fmt::Write as _;

/// "Safe fix", "Unsafe fix" or "Display-only fix".
pub fn fix_title(a: Applicability) -> &'static str {
    match a {
        Applicability::Safe => "Safe fix",
        Applicability::Unsafe => "Unsafe fix",
        Applicability::DisplayOnly => "Display-only fix",
    }
}

/// The diff block of one diagnostic's fix against `file`, or `None` when it has no fix or the
/// fix cannot be applied to the text (out of date, off character boundaries).
pub fn fix_diff(file: &SourceFile, d: &Diagnostic) -> Option<String> {
    let fix = d.fix.as_ref()?;
    let text = apply_one(&file.text, d, fix)?;
    let diff = TextDiff::from_lines(file.text.as_str(), text.as_str());
    let groups = diff.grouped_ops(1);
    if groups.is_empty() {
        return None;
    }
    let max_line = file.index.line_count().max(text.lines().count()) + 1;
    let width = max_line.to_string().len();
    let mut out = String::new();
    let _ = writeln!(out, "ℹ {}", fix_title(fix.applicability));
    for (gi, group) in groups.iter().enumerate() {
        if gi > 0 {
            let _ = writeln!(out, "{:>width$} {:>width$} | ...", "", "", width = width);
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let old = change
                    .old_index()
                    .map(|i| (i + 1).to_string())
                    .unwrap_or_default();
                let new = change
                    .new_index()
                    .map(|i| (i + 1).to_string())
                    .unwrap_or_default();
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let line = change.value().trim_end_matches(['\n', '\r']);
                let line = sanitize(line);
                let _ = writeln!(
                    out,
                    "{old:>width$} {new:>width$} |{sign}{line}",
                    width = width
                );
            }
        }
    }
    Some(out)
}

/// Control characters (other than tab) shown as U+FFFD, so a fix cannot move the cursor.
fn sanitize(line: &str) -> String {
    line.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
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
        let (f, d) = diags("x = 1\r\nimport os  # noqa: IMP001, IMP002\r\n");
        assert_eq!(d[0].rule.code, "CG001");
        assert_eq!(
            fix_diff(&f, &d[0]).unwrap(),
            "ℹ Safe fix\n1 1 | x = 1\n2   |-import os  # noqa: IMP001, IMP002\n  2 |+import os  # noqa: IMP001\n"
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
