//! Output formats of `cellguard check` (`--output-format`), one module per format.
//!
//! Every format renders the same [`Report`]: the checked files that have diagnostics, each
//! with its [`SourceFile`] (for positions and source lines) and its diagnostics in file
//! coordinates. Rows and columns are one-based, columns counted in Unicode scalar values (as
//! ruff prints them). Order is deterministic: file path, then position, then code.
//!
//! Fixes: every format that can carry a fix does (`json`, `json-lines`, `sarif`); the human
//! formats mark a diagnostic whose fix would be applied with `[*]` ([`RenderOptions::marks_fix`]).

pub mod concise;
pub mod fixes;
pub mod github;
pub mod json;
pub mod junit;
pub mod replay;
pub mod sarif;
pub mod statistics;
pub mod text;

use cellguard_lints::source::SourceLocation;
use cellguard_lints::{Applicability, Diagnostic, Severity, SourceFile};
use std::io::Write;

/// One checked file with its diagnostics (file coordinates, sorted).
#[derive(Debug, Clone)]
pub struct FileReport {
    /// The file as read (its `path` is the display path).
    pub source: SourceFile,
    /// Diagnostics sorted by position, then code.
    pub diagnostics: Vec<Diagnostic>,
    /// The `rule-docs-url` template of the file's settings (`None` when unset), for the
    /// diagnostics' documentation links (`cellguard_lints::rule_docs`).
    pub rule_docs_url: Option<String>,
}

/// Diagnostics of a whole run. Only files with at least one diagnostic are kept.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Files with diagnostics, sorted by path.
    pub files: Vec<FileReport>,
}

impl Report {
    /// Builds a report: drops files without diagnostics and sorts files by path and
    /// diagnostics by (start, end, code, message), so output never depends on thread timing.
    pub fn new(files: Vec<FileReport>) -> Self {
        let mut files: Vec<FileReport> = files
            .into_iter()
            .filter(|f| !f.diagnostics.is_empty())
            .collect();
        for f in &mut files {
            f.diagnostics.sort_by(|a, b| {
                (a.range.start, a.range.end, a.rule.code, &a.message).cmp(&(
                    b.range.start,
                    b.range.end,
                    b.rule.code,
                    &b.message,
                ))
            });
        }
        files.sort_by(|a, b| a.source.path.cmp(&b.source.path));
        Self { files }
    }

    /// Every diagnostic with its file report, in report order.
    pub fn file_diagnostics(&self) -> impl Iterator<Item = (&FileReport, &Diagnostic)> {
        self.files
            .iter()
            .flat_map(|f| f.diagnostics.iter().map(move |d| (f, d)))
    }

    /// Every diagnostic with its file, in report order.
    pub fn diagnostics(&self) -> impl Iterator<Item = (&SourceFile, &Diagnostic)> {
        self.files
            .iter()
            .flat_map(|f| f.diagnostics.iter().map(move |d| (&f.source, d)))
    }

    /// Number of diagnostics.
    pub fn len(&self) -> usize {
        self.files.iter().map(|f| f.diagnostics.len()).sum()
    }

    /// True when a diagnostic should fail the run (any severity above `hint`).
    pub fn has_failures(&self) -> bool {
        self.diagnostics().any(|(_, d)| d.severity > Severity::Hint)
    }
}

/// `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Source frames with carets and help lines (codespan-reporting), then a summary.
    Text,
    /// One line per diagnostic: `file:row:col: CODE message`.
    Concise,
    /// A JSON array with ruff's field names.
    Json,
    /// One JSON object per line (ruff's field names).
    JsonLines,
    /// SARIF 2.1.0 (GitHub code scanning, IDEs).
    Sarif,
    /// GitHub Actions workflow commands (`::error ...`).
    Github,
    /// JUnit XML.
    Junit,
}

/// Options shared by the formats.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderOptions {
    /// Emit ANSI colours (text format only).
    pub color: bool,
    /// `--unsafe-fixes`: unsafe fixes count as applicable (`[*]`).
    pub unsafe_fixes: bool,
    /// Fixes applied in this run (`--fix`), for the closing summary.
    pub fixed: usize,
}

impl RenderOptions {
    /// True when `d` has a fix that `--fix` would apply under these options; the human formats
    /// print `[*]` after the code for it (ruff's marker).
    pub fn marks_fix(&self, d: &Diagnostic) -> bool {
        match &d.fix {
            Some(f) => match f.applicability {
                Applicability::Safe => true,
                Applicability::Unsafe => self.unsafe_fixes,
                Applicability::DisplayOnly => false,
            },
            None => false,
        }
    }
}

/// One-based start and end locations of a diagnostic.
pub fn span(file: &SourceFile, d: &Diagnostic) -> (SourceLocation, SourceLocation) {
    (file.location(d.range.start), file.location(d.range.end))
}

/// The path as shown in every format (forward slashes on every platform).
pub fn display_path(file: &SourceFile) -> String {
    let s = file.path.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '\\' {
        s.replace('\\', "/")
    } else {
        s.into_owned()
    }
}

/// Replaces C0/C1 control characters (other than `\n` and `\t`) with U+FFFD so a message built
/// from cell text cannot drive the terminal.
pub fn sanitize(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().all(|c| !c.is_control() || c == '\n' || c == '\t') {
        std::borrow::Cow::Borrowed(s)
    } else {
        std::borrow::Cow::Owned(
            s.chars()
                .map(|c| {
                    if c.is_control() && c != '\n' && c != '\t' {
                        '\u{FFFD}'
                    } else {
                        c
                    }
                })
                .collect(),
        )
    }
}

/// The closing summary of the human formats: `All checks passed!`, `Found N errors.`, or, when
/// severities are mixed, `Found N diagnostics (a errors, b warnings, c info).`
pub fn summary(report: &Report) -> String {
    let n = report.len();
    if n == 0 {
        return "All checks passed!".to_string();
    }
    let count = |s: Severity| {
        report
            .diagnostics()
            .filter(|(_, d)| d.severity == s)
            .count()
    };
    let errors = count(Severity::Error);
    if errors == n {
        return format!("Found {n} error{}.", plural(n));
    }
    let mut parts = Vec::new();
    for (sev, one, many) in [
        (Severity::Error, "error", "errors"),
        (Severity::Warning, "warning", "warnings"),
        (Severity::Info, "info", "info"),
        (Severity::Hint, "hint", "hints"),
    ] {
        let k = count(sev);
        if k > 0 {
            parts.push(format!("{k} {}", if k == 1 { one } else { many }));
        }
    }
    format!("Found {n} diagnostic{} ({}).", plural(n), parts.join(", "))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Writes the report in `format`.
pub fn render(
    report: &Report,
    format: OutputFormat,
    opts: &RenderOptions,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match format {
        OutputFormat::Text => text::render(report, opts, out),
        OutputFormat::Concise => concise::render(report, opts, out),
        OutputFormat::Json => json::render(report, out),
        OutputFormat::JsonLines => json::render_lines(report, out),
        OutputFormat::Sarif => sarif::render(report, out),
        OutputFormat::Github => github::render(report, opts, out),
        OutputFormat::Junit => junit::render(report, out),
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A small synthetic report shared by the format tests: two files, a Markdown cell, a
    //! safe fix, an info finding, a non-ASCII column and a message with a newline.
    use super::*;
    use cellguard_lints::diagnostic::{Edit, Fix};
    use cellguard_lints::{rules, TextRange};

    fn rule(code: &str) -> &'static cellguard_lints::Rule {
        rules::find_rule(code).expect("rule exists")
    }

    /// The shared report.
    pub fn report() -> Report {
        let py = SourceFile::new(
            "cells/a.py",
            "import os\nr = await run(\"Foo.bar\", x=1)\ns = 'é'; run(\"k\")\n",
        );
        let key = py.text.find("\"Foo.bar\"").unwrap();
        let run_at = py.text.find("run(\"k\")").unwrap();
        // Severities are set explicitly: the report must not change when a rule's default does.
        let mut d1 = Diagnostic::new(
            rule("IMP001"),
            TextRange::new(7, 9),
            "Import of `os` is not allowed",
        )
        .with_help("Allowed modules: json, re");
        let mut d2 = Diagnostic::new(
            rule("API002"),
            TextRange::new(key, key + 9),
            "Action key `Foo.bar` resolves to `Cap.Foo.bar`",
        )
        .with_fix(Fix::safe(
            "Replace with `Cap.Foo.bar`",
            vec![Edit::replace(
                TextRange::new(key, key + 9),
                "\"Cap.Foo.bar\"",
            )],
        ));
        d1.severity = Severity::Error;
        d2.severity = Severity::Error;
        let mut d3 = Diagnostic::new(
            rule("RUN001"),
            TextRange::new(run_at, run_at + 8),
            "`run(...)` is not awaited:\nthe call never happens",
        )
        .with_fix(Fix::unsafe_edit(
            "Add `await`",
            vec![Edit::insert(run_at, "await ")],
        ));
        d3.severity = Severity::Warning;
        let md = SourceFile::new(
            "docs/guide.md",
            "# Guide\n\n```python\nimport subprocess\n```\n",
        );
        let at = md.text.find("subprocess").unwrap();
        let mut d4 = Diagnostic::new(
            rule("IMP003"),
            TextRange::new(at - 7, at + 10),
            "`import` fails at runtime in Colony's REPL",
        );
        d4.severity = Severity::Info;
        d4.cell = Some(0);
        Report::new(vec![
            FileReport {
                // An empty template: no documentation link (`url: null`).
                rule_docs_url: Some(String::new()),
                source: md,
                diagnostics: vec![d4],
            },
            FileReport {
                rule_docs_url: Some("https://docs.example/rules/{name}.md".to_string()),
                source: py,
                diagnostics: vec![d3, d2, d1],
            },
        ])
    }

    /// Renders to a string.
    pub fn rendered(format: OutputFormat, opts: &RenderOptions) -> String {
        let mut out = Vec::new();
        render(&report(), format, opts, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_orders_files_and_diagnostics() {
        let r = testing::report();
        let order: Vec<_> = r
            .diagnostics()
            .map(|(f, d)| (display_path(f), d.rule.code))
            .collect();
        assert_eq!(
            order,
            vec![
                ("cells/a.py".to_string(), "IMP001"),
                ("cells/a.py".to_string(), "API002"),
                ("cells/a.py".to_string(), "RUN001"),
                ("docs/guide.md".to_string(), "IMP003"),
            ]
        );
        assert_eq!(r.len(), 4);
        assert!(r.has_failures());
    }

    #[test]
    fn summary_counts_severities() {
        assert_eq!(summary(&Report::default()), "All checks passed!");
        assert_eq!(
            summary(&testing::report()),
            "Found 4 diagnostics (2 errors, 1 warning, 1 info)."
        );
    }

    #[test]
    fn fix_marker_follows_applicability() {
        let r = testing::report();
        let ds: Vec<_> = r.diagnostics().map(|(_, d)| d).collect();
        let safe = RenderOptions::default();
        let unsafe_ok = RenderOptions {
            unsafe_fixes: true,
            ..Default::default()
        };
        assert_eq!(
            ds.iter().map(|d| safe.marks_fix(d)).collect::<Vec<_>>(),
            vec![false, true, false, false]
        );
        assert_eq!(
            ds.iter()
                .map(|d| unsafe_ok.marks_fix(d))
                .collect::<Vec<_>>(),
            vec![false, true, true, false]
        );
    }

    #[test]
    fn sanitize_replaces_escape_sequences() {
        assert_eq!(sanitize("a\u{1b}[31mb\nc"), "a\u{FFFD}[31mb\nc");
        assert!(matches!(sanitize("plain"), std::borrow::Cow::Borrowed(_)));
    }
}

#[cfg(test)]
mod properties {
    //! Property tests: whatever bytes a file holds, and however a real cell is edited, checking
    //! never panics, every range lies inside the file, and every format renders; the JSON
    //! formats parse back with one object per diagnostic.
    use super::*;
    use cellguard_lints::config::Settings;
    use cellguard_lints::{lint, KnowledgeBase};
    use proptest::prelude::*;

    const CELLS: [&str; 4] = [
        include_str!("../../fixtures/example/cells/merge_feature.py"),
        include_str!("../../fixtures/example/cells/spawn_mission.py"),
        include_str!("../../fixtures/example/cells/save_report.py"),
        include_str!("../../fixtures/example/notes/playbook.md"),
    ];

    fn check_and_render(name: &str, bytes: &[u8]) {
        let source = SourceFile::from_bytes(name, bytes);
        let diagnostics = lint::check_file(&source, &Settings::default(), &KnowledgeBase::new());
        for d in &diagnostics {
            assert!(d.range.start <= d.range.end && d.range.end <= source.text.len());
            for e in d.fix.iter().flat_map(|f| &f.edits) {
                assert!(e.range.end <= source.text.len());
            }
        }
        let n = diagnostics.len();
        let report = Report::new(vec![FileReport {
            rule_docs_url: None,
            source,
            diagnostics,
        }]);
        for format in [
            OutputFormat::Text,
            OutputFormat::Concise,
            OutputFormat::Sarif,
            OutputFormat::Github,
            OutputFormat::Junit,
        ] {
            let mut out = Vec::new();
            render(&report, format, &RenderOptions::default(), &mut out).unwrap();
            assert!(std::str::from_utf8(&out).is_ok());
        }
        let mut out = Vec::new();
        render(
            &report,
            OutputFormat::Json,
            &RenderOptions::default(),
            &mut out,
        )
        .unwrap();
        let v: Vec<serde_json::Value> = serde_json::from_slice(&out).unwrap();
        assert_eq!(v.len(), n);
        let mut out = Vec::new();
        render(
            &report,
            OutputFormat::JsonLines,
            &RenderOptions::default(),
            &mut out,
        )
        .unwrap();
        let lines = String::from_utf8(out).unwrap();
        assert_eq!(lines.lines().count(), n);
        for l in lines.lines() {
            serde_json::from_str::<serde_json::Value>(l).unwrap();
        }
    }

    /// One edit: replace `len` bytes at `at` (both taken modulo the text) with `insert`.
    fn edit(text: &str, at: usize, len: usize, insert: &[u8]) -> Vec<u8> {
        let bytes = text.as_bytes();
        let at = at % (bytes.len() + 1);
        let end = (at + len).min(bytes.len());
        let mut out = bytes[..at].to_vec();
        out.extend_from_slice(insert);
        out.extend_from_slice(&bytes[end..]);
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2000), md in any::<bool>()) {
            check_and_render(if md { "x.md" } else { "x.py" }, &bytes);
        }

        #[test]
        fn random_edits_of_real_cells(
            which in 0..CELLS.len(),
            edits in proptest::collection::vec(
                (any::<usize>(), 0usize..40, proptest::collection::vec(
                    prop_oneof![
                        Just(b'('), Just(b')'), Just(b'"'), Just(b'\''), Just(b'\n'), Just(b' '),
                        Just(b'`'), Just(b'\\'), Just(b':'), Just(0xff), Just(0xc3), any::<u8>(),
                    ], 0..12)),
                1..6),
        ) {
            let name = if which == 3 { "notes.md" } else { "cell.py" };
            let mut text = CELLS[which].as_bytes().to_vec();
            for (at, len, insert) in edits {
                text = edit(&String::from_utf8_lossy(&text), at, len, &insert);
            }
            check_and_render(name, &text);
        }
    }
}
