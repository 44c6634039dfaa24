//! `--output-format json` and `json-lines`: ruff's JSON diagnostic objects.
//!
//! Field names and shapes follow ruff (`crates/ruff_linter/src/message/json.rs`): `code`,
//! `name` (kebab-case rule name), `message`, `filename`, `location{row,column}`,
//! `end_location`, `fix` (`null` or `{applicability, message, edits[{content, location,
//! end_location}]}`), `noqa_row`, `url`, `cell`; plus cellguard's `severity`
//! (`error|warning|info|hint`) and `help`. Rows and columns are one-based, columns in Unicode
//! scalar values. `cell` is the one-based number of the cell in a file that holds several
//! (Markdown fences, responses, traces) and `null` for a plain `.py` file. `url` is the
//! rule's documentation link (`cellguard_lints::rule_docs`: the `rule-docs-url` template, else
//! the checked-in `docs/rules/<name>.md` of the source tree, else `null`).

use super::{display_path, FileReport, Report};
use cellguard_lints::source::SourceLocation;
use cellguard_lints::Diagnostic;
use serde::Serialize;
use std::io::Write;

/// `{row, column}`, one-based.
#[derive(Debug, Serialize)]
pub struct JsonLocation {
    /// One-based line.
    pub row: usize,
    /// One-based column in Unicode scalar values.
    pub column: usize,
}

impl From<SourceLocation> for JsonLocation {
    fn from(l: SourceLocation) -> Self {
        Self {
            row: l.row,
            column: l.column,
        }
    }
}

/// One edit of a fix.
#[derive(Debug, Serialize)]
pub struct JsonEdit<'a> {
    /// Replacement text.
    pub content: &'a str,
    /// Start of the replaced text.
    pub location: JsonLocation,
    /// End of the replaced text.
    pub end_location: JsonLocation,
}

/// A fix.
#[derive(Debug, Serialize)]
pub struct JsonFix<'a> {
    /// `safe`, `unsafe` or `display-only`.
    pub applicability: &'static str,
    /// What the fix does.
    pub message: &'a str,
    /// The edits, sorted.
    pub edits: Vec<JsonEdit<'a>>,
}

/// One diagnostic, fields in ruff's (alphabetical) order plus cellguard's.
#[derive(Debug, Serialize)]
pub struct JsonDiagnostic<'a> {
    /// One-based cell number within the file, `null` for a one-cell file.
    pub cell: Option<usize>,
    /// Rule code.
    pub code: &'static str,
    /// End of the range.
    pub end_location: JsonLocation,
    /// Display path.
    pub filename: String,
    /// The fix, if any.
    pub fix: Option<JsonFix<'a>>,
    /// Extra help line, if any.
    pub help: Option<&'a str>,
    /// Start of the range.
    pub location: JsonLocation,
    /// Message.
    pub message: &'a str,
    /// Kebab-case rule name.
    pub name: &'static str,
    /// Row where a suppression comment for this diagnostic goes.
    pub noqa_row: usize,
    /// `error`, `warning`, `info` or `hint`.
    pub severity: &'static str,
    /// The rule's documentation URL (`cellguard_lints::rule_docs::rule_doc_url`, the same link
    /// as the language server's `codeDescription.href`), `null` when there is none.
    pub url: Option<String>,
}

/// Builds the JSON object of one diagnostic of `report`.
pub fn diagnostic<'a>(report: &'a FileReport, d: &'a Diagnostic) -> JsonDiagnostic<'a> {
    let file = &report.source;
    let start = file.location(d.range.start);
    JsonDiagnostic {
        cell: d.cell.map(|c| c + 1),
        code: d.rule.code,
        end_location: file.location(d.range.end).into(),
        filename: display_path(file),
        fix: d.fix.as_ref().map(|f| JsonFix {
            applicability: f.applicability.as_str(),
            message: &f.message,
            edits: f
                .edits
                .iter()
                .map(|e| JsonEdit {
                    content: &e.content,
                    location: file.location(e.range.start).into(),
                    end_location: file.location(e.range.end).into(),
                })
                .collect(),
        }),
        help: d.help.as_deref(),
        location: start.into(),
        message: &d.message,
        name: d.rule.name,
        noqa_row: start.row,
        severity: d.severity.as_str(),
        url: cellguard_lints::rule_docs::rule_doc_url(d.rule, report.rule_docs_url.as_deref()),
    }
}

/// A pretty-printed JSON array (`[]` when clean).
pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let all: Vec<_> = report
        .file_diagnostics()
        .map(|(f, d)| diagnostic(f, d))
        .collect();
    serde_json::to_writer_pretty(&mut *out, &all)?;
    writeln!(out)
}

/// One compact JSON object per line (nothing when clean).
pub fn render_lines(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    for (f, d) in report.file_diagnostics() {
        serde_json::to_writer(&mut *out, &diagnostic(f, d))?;
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{testing, OutputFormat, RenderOptions};

    #[test]
    fn json_snapshot() {
        insta::assert_snapshot!(testing::rendered(
            OutputFormat::Json,
            &RenderOptions::default()
        ));
    }

    #[test]
    fn json_lines_are_the_array_items() {
        let arr: Vec<serde_json::Value> = serde_json::from_str(&testing::rendered(
            OutputFormat::Json,
            &RenderOptions::default(),
        ))
        .unwrap();
        let lines: Vec<serde_json::Value> =
            testing::rendered(OutputFormat::JsonLines, &RenderOptions::default())
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        assert_eq!(arr, lines);
        assert_eq!(arr.len(), 4);
        assert_eq!(arr[1]["fix"]["edits"][0]["location"]["column"], 15);
        assert_eq!(arr[3]["cell"], 1);
        assert_eq!(arr[0]["cell"], serde_json::Value::Null);
    }
}
