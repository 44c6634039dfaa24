//! `--output-format junit`: JUnit XML for CI test reporters (ruff's layout).
//!
//! One `<testsuite>` per file with findings, one `<testcase name="org.cellguard.CODE">` with a
//! `<failure>` per diagnostic. A clean run gives one passing test case, so a CI report shows
//! that the check ran. Text is XML-escaped, and characters XML 1.0 forbids (most control
//! characters) are replaced with U+FFFD.

use super::{display_path, span, Report};
use std::io::Write;

/// Escapes text for XML attribute values and character data.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Writes the XML document.
pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let n = report.len();
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    if n == 0 {
        writeln!(
            out,
            r#"<testsuites name="cellguard" tests="1" failures="0" errors="0">"#
        )?;
        writeln!(
            out,
            r#"  <testsuite name="cellguard" tests="1" disabled="0" errors="0" failures="0" package="org.cellguard">"#
        )?;
        writeln!(
            out,
            r#"    <testcase name="No errors found" classname="cellguard"/>"#
        )?;
        writeln!(out, "  </testsuite>")?;
        return writeln!(out, "</testsuites>");
    }
    writeln!(
        out,
        r#"<testsuites name="cellguard" tests="{n}" failures="{n}" errors="0">"#
    )?;
    for f in &report.files {
        let path = escape(&display_path(&f.source));
        let k = f.diagnostics.len();
        writeln!(
            out,
            r#"  <testsuite name="{path}" tests="{k}" disabled="0" errors="0" failures="{k}" package="org.cellguard">"#
        )?;
        for d in &f.diagnostics {
            let (s, _) = span(&f.source, d);
            let msg = escape(&d.message);
            writeln!(
                out,
                r#"    <testcase name="org.cellguard.{}" classname="{path}" line="{}" column="{}">"#,
                d.rule.code, s.row, s.column
            )?;
            writeln!(
                out,
                r#"      <failure message="{msg}" type="{}">line {}, col {}, {msg}</failure>"#,
                d.severity.as_str(),
                s.row,
                s.column
            )?;
            writeln!(out, "    </testcase>")?;
        }
        writeln!(out, "  </testsuite>")?;
    }
    writeln!(out, "</testsuites>")
}

#[cfg(test)]
mod tests {
    use super::super::{testing, OutputFormat, RenderOptions, Report};
    use super::*;

    #[test]
    fn junit_snapshot() {
        insta::assert_snapshot!(testing::rendered(
            OutputFormat::Junit,
            &RenderOptions::default()
        ));
    }

    #[test]
    fn clean_run_has_one_passing_case() {
        let mut out = Vec::new();
        render(&Report::default(), &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains(r#"tests="1" failures="0""#), "{s}");
        assert!(s.contains("No errors found"));
    }

    #[test]
    fn escape_handles_markup_and_control_characters() {
        assert_eq!(
            escape("<a & 'b'>\u{1}"),
            "&lt;a &amp; &apos;b&apos;&gt;\u{FFFD}"
        );
    }
}
