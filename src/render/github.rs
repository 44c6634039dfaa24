//! `--output-format github`: GitHub Actions workflow commands, one per diagnostic, which the
//! runner turns into annotations on the pull request:
//!
//! `::error title=cellguard (CODE),file=PATH,line=R,col=C,endLine=R2,endColumn=C2::PATH:R:C: CODE message`
//!
//! Severity maps to the command: `error`, `warning`, and `notice` for info and hint. Data is
//! escaped as the runner expects (`%` `\r` `\n`; property values also `:` and `,`).

use super::{display_path, span, RenderOptions, Report};
use cellguard_lints::Severity;
use std::io::Write;

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Writes one workflow command per diagnostic.
pub fn render(report: &Report, opts: &RenderOptions, out: &mut dyn Write) -> std::io::Result<()> {
    for (file, d) in report.diagnostics() {
        let (s, e) = span(file, d);
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info | Severity::Hint => "notice",
        };
        let path = display_path(file);
        writeln!(
            out,
            "::{level} title={},file={},line={},col={},endLine={},endColumn={}::{}",
            escape_property(&format!("cellguard ({})", d.rule.code)),
            escape_property(&path),
            s.row,
            s.column,
            e.row,
            e.column,
            escape_data(&format!(
                "{path}:{}:{}: {}{} {}",
                s.row,
                s.column,
                d.rule.code,
                if opts.marks_fix(d) { " [*]" } else { "" },
                d.message
            )),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{testing, OutputFormat, RenderOptions};
    use super::*;

    #[test]
    fn github_snapshot() {
        insta::assert_snapshot!(testing::rendered(
            OutputFormat::Github,
            &RenderOptions::default()
        ));
    }

    #[test]
    fn escapes() {
        assert_eq!(escape_data("50%\na\r"), "50%25%0Aa%0D");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
