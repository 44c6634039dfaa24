//! `--output-format concise`: one line per diagnostic, `file:row:col: CODE [*] message`, then
//! the summary line (ruff's `concise`). Newlines inside a message are shown as `\n` so every
//! diagnostic stays on one line for editors' error parsers.

use super::{display_path, sanitize, span, RenderOptions, Report};
use std::io::Write;

/// Writes one line per diagnostic and the summary.
pub fn render(report: &Report, opts: &RenderOptions, out: &mut dyn Write) -> std::io::Result<()> {
    for (file, d) in report.diagnostics() {
        let (loc, _) = span(file, d);
        writeln!(
            out,
            "{}:{}:{}: {}{} {}",
            display_path(file),
            loc.row,
            loc.column,
            d.rule.code,
            if opts.marks_fix(d) { " [*]" } else { "" },
            sanitize(&d.message).replace('\n', "\\n"),
        )?;
    }
    super::fixes::write_closing(report, opts, &mut termcolor::NoColor::new(out))
}

#[cfg(test)]
mod tests {
    use super::super::{testing, OutputFormat, RenderOptions};

    #[test]
    fn concise_snapshot() {
        insta::assert_snapshot!(testing::rendered(
            OutputFormat::Concise,
            &RenderOptions::default()
        ));
    }
}
