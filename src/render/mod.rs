//! Output formats for `cellguard check`.

pub mod replay;

use cellguard_lints::{Diagnostic, SourceFile};
use std::collections::BTreeMap;
use std::io::Write;

/// Diagnostics of every checked file, in file order.
pub struct Report {
    /// Each file with its diagnostics (file coordinates).
    pub files: Vec<(SourceFile, Vec<Diagnostic>)>,
}

/// `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Source frames with carets and help lines.
    Text,
    /// One line per diagnostic.
    Concise,
    /// A JSON array (ruff's field names).
    Json,
    /// One JSON object per line.
    JsonLines,
}

/// ruff-compatible JSON object for one diagnostic.
pub fn json_diagnostic(file: &SourceFile, d: &Diagnostic) -> serde_json::Value {
    let loc = file.location(d.range.start);
    let end = file.location(d.range.end);
    serde_json::json!({
        "code": d.rule.code,
        "name": d.rule.name,
        "message": d.message,
        "severity": d.severity.as_str(),
        "filename": file.path.display().to_string(),
        "location": {"row": loc.row, "column": loc.column},
        "end_location": {"row": end.row, "column": end.column},
        "fix": d.fix.as_ref().map(|f| serde_json::json!({
            "applicability": f.applicability.as_str(),
            "message": f.message,
            "edits": f.edits.iter().map(|e| {
                let s = file.location(e.range.start);
                let t = file.location(e.range.end);
                serde_json::json!({"content": e.content, "location": {"row": s.row, "column": s.column}, "end_location": {"row": t.row, "column": t.column}})
            }).collect::<Vec<_>>(),
        })),
        "help": d.help,
        "cell": d.cell,
    })
}

/// Writes the report in `format`.
pub fn render(report: &Report, format: OutputFormat, out: &mut impl Write) -> std::io::Result<()> {
    match format {
        OutputFormat::Json => {
            let all: Vec<_> = report
                .files
                .iter()
                .flat_map(|(f, ds)| ds.iter().map(move |d| json_diagnostic(f, d)))
                .collect();
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&all).unwrap_or_default()
            )
        }
        OutputFormat::JsonLines => {
            for (f, ds) in &report.files {
                for d in ds {
                    writeln!(out, "{}", json_diagnostic(f, d))?;
                }
            }
            Ok(())
        }
        OutputFormat::Concise | OutputFormat::Text => {
            let mut n = 0;
            for (f, ds) in &report.files {
                for d in ds {
                    let loc = f.location(d.range.start);
                    writeln!(
                        out,
                        "{}:{}:{}: {} {}",
                        f.path.display(),
                        loc.row,
                        loc.column,
                        d.rule.code,
                        d.message
                    )?;
                    n += 1;
                }
            }
            if n > 0 {
                writeln!(out, "Found {n} error{}.", if n == 1 { "" } else { "s" })?;
            } else {
                writeln!(out, "All checks passed!")?;
            }
            Ok(())
        }
    }
}

/// `--statistics`: count per rule, most frequent first.
pub fn statistics(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (_, ds) in &report.files {
        for d in ds {
            *counts.entry((d.rule.code, d.rule.name)).or_default() += 1;
        }
    }
    let mut rows: Vec<_> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for ((code, name), n) in rows {
        writeln!(out, "{n}\t{code}\t{name}")?;
    }
    Ok(())
}
