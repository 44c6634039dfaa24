//! `--output-format text` (the default): ruff's "full" layout drawn with codespan-reporting.
//!
//! ```text
//! IMP001 Import of `os` is not allowed
//!  --> cells/a.py:1:8
//!   |
//! 1 | import os
//!   |        ^^
//!   |
//! help: Allowed modules: json, re
//!
//! Found 1 error.
//! ```
//!
//! The header is `CODE [*] message` (`[*]`: a fix `--fix` would apply), coloured by severity;
//! non-error severities also name themselves next to the carets. Only the first line of a
//! multi-line range is drawn, and lines longer than [`MAX_LINE_CHARS`] are cut around the
//! range, so a minified or 50 MB one-line file never floods the terminal.

use super::{display_path, sanitize, RenderOptions, Report};
use cellguard_lints::{Diagnostic, Severity, SourceFile};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term::{self, Chars, Config};
use std::io::Write;
use std::ops::Range;
use termcolor::{Ansi, Color, ColorSpec, NoColor, WriteColor};

/// Longest source line drawn in full; longer lines are cut around the range with `…`.
pub const MAX_LINE_CHARS: usize = 160;
/// Characters of context kept before the range on a cut line.
const CONTEXT_BEFORE: usize = 40;

/// Writes every diagnostic as a frame, then the summary line.
pub fn render(report: &Report, opts: &RenderOptions, out: &mut dyn Write) -> std::io::Result<()> {
    if opts.color {
        render_to(report, opts, &mut Ansi::new(out))
    } else {
        render_to(report, opts, &mut NoColor::new(out))
    }
}

fn render_to(report: &Report, opts: &RenderOptions, w: &mut dyn WriteColor) -> std::io::Result<()> {
    for (file, d) in report.diagnostics() {
        render_diagnostic(file, d, opts, w)?;
        writeln!(w)?;
    }
    super::fixes::write_closing(report, opts, w)
}

/// The colour of a severity.
fn severity_color(s: Severity) -> Color {
    match s {
        Severity::Error => Color::Red,
        Severity::Warning => Color::Yellow,
        Severity::Info => Color::Blue,
        Severity::Hint => Color::Cyan,
    }
}

/// One diagnostic: header, source frame, help lines, then the fix as a small diff.
pub fn render_diagnostic(
    file: &SourceFile,
    d: &Diagnostic,
    opts: &RenderOptions,
    w: &mut dyn WriteColor,
) -> std::io::Result<()> {
    // Header: CODE [*] message
    w.set_color(
        ColorSpec::new()
            .set_fg(Some(severity_color(d.severity)))
            .set_bold(true),
    )?;
    write!(w, "{}", d.rule.code)?;
    w.reset()?;
    if opts.marks_fix(d) {
        write!(w, " ")?;
        w.set_color(ColorSpec::new().set_fg(Some(Color::Cyan)))?;
        write!(w, "[*]")?;
        w.reset()?;
    }
    write!(w, " ")?;
    w.set_color(ColorSpec::new().set_bold(true))?;
    write!(w, "{}", sanitize(&d.message))?;
    w.reset()?;
    writeln!(w)?;

    // Frame, drawn by codespan-reporting on a one-line window of the file.
    let window = Window::new(file, d);
    let label = Label::primary((), window.label.clone()).with_message(match d.severity {
        Severity::Error => "",
        other => other.as_str(),
    });
    let cs = CsDiagnostic::new(match d.severity {
        Severity::Error => codespan_reporting::diagnostic::Severity::Error,
        Severity::Warning => codespan_reporting::diagnostic::Severity::Warning,
        Severity::Info | Severity::Hint => codespan_reporting::diagnostic::Severity::Note,
    })
    .with_labels(vec![label]);
    let config = Config {
        chars: Chars::ascii(),
        ..Config::default()
    };
    let mut frame = FrameWriter::new(w.supports_color());
    term::emit(&mut frame, &config, &window, &cs).map_err(std::io::Error::other)?;
    let body = frame.without_header();
    w.write_all(body)?;

    // Help lines, after an empty gutter line as in ruff's layout.
    let mut helps: Vec<&str> = d.help.iter().map(String::as_str).collect();
    if let Some(fix) = &d.fix {
        if !fix.message.is_empty() && d.help.as_deref() != Some(fix.message.as_str()) {
            helps.push(&fix.message);
        }
    }
    if !helps.is_empty() {
        w.write_all(frame.empty_gutter_line())?;
        for help in helps {
            write_help(w, help)?;
        }
    }
    // The fix as a small diff (ruff's "ℹ Safe fix" block).
    if d.fix.is_some() {
        let mut block = termcolor::Buffer::no_color();
        if w.supports_color() {
            block = termcolor::Buffer::ansi();
        }
        super::fixes::write_fix_diff(file, d, &mut block)?;
        if !block.is_empty() {
            writeln!(w)?;
            w.write_all(block.as_slice())?;
        }
    }
    Ok(())
}

fn write_help(w: &mut dyn WriteColor, help: &str) -> std::io::Result<()> {
    w.set_color(ColorSpec::new().set_fg(Some(Color::Cyan)).set_bold(true))?;
    write!(w, "help")?;
    w.reset()?;
    writeln!(w, ": {}", sanitize(help))
}

/// Collects codespan's output so its own `severity: message` header line can be dropped (the
/// header is written in ruff's `CODE message` form instead).
struct FrameWriter {
    buf: Vec<u8>,
    color: bool,
}

impl FrameWriter {
    fn new(color: bool) -> Self {
        Self {
            buf: Vec::new(),
            color,
        }
    }

    /// Everything after the first line, without trailing blank lines.
    fn without_header(&self) -> &[u8] {
        let body = match self.buf.iter().position(|&b| b == b'\n') {
            Some(i) => &self.buf[i + 1..],
            None => &[],
        };
        let mut end = body.len();
        while end >= 2 && body[end - 1] == b'\n' && body[end - 2] == b'\n' {
            end -= 1;
        }
        &body[..end]
    }

    /// The gutter line under the `-->` line (`  |`), reused before help lines.
    fn empty_gutter_line(&self) -> &[u8] {
        let body = self.without_header();
        let mut lines = body.split_inclusive(|&b| b == b'\n');
        lines.next();
        lines.next().unwrap_or(b"  |\n")
    }
}

impl Write for FrameWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl WriteColor for FrameWriter {
    fn supports_color(&self) -> bool {
        self.color
    }
    fn set_color(&mut self, spec: &ColorSpec) -> std::io::Result<()> {
        if self.color {
            Ansi::new(&mut self.buf).set_color(spec)
        } else {
            Ok(())
        }
    }
    fn reset(&mut self) -> std::io::Result<()> {
        if self.color {
            Ansi::new(&mut self.buf).reset()
        } else {
            Ok(())
        }
    }
}

/// The one source line a frame shows, possibly cut, with a map back to file offsets.
///
/// Implements codespan's [`Files`] so that the `--> path:row:col` line and the gutter show the
/// real row and column of the file, not of the window.
struct Window {
    name: String,
    /// The drawn text (control characters replaced, cut with `…` when long).
    text: String,
    /// Zero-based row of the line in the file.
    row: usize,
    /// File byte offset of each char of `text` (the `…` markers map to the nearest kept char),
    /// plus one final entry for the end of the text.
    offsets: Vec<(usize, usize)>,
    /// The label's byte range in `text`.
    label: Range<usize>,
    /// The file column (one-based) of each entry of `offsets`.
    file_columns: Vec<usize>,
}

impl Window {
    fn new(file: &SourceFile, d: &Diagnostic) -> Self {
        let text = &file.text;
        let start = floor(text, d.range.start);
        let end = floor(text, d.range.end.max(start));
        let row = file.index.line_of(start);
        let line_start = file.index.line_start(row).unwrap_or(0).min(start);
        let line_end = file.index.line_end(row, text).max(start);
        let end = end.min(line_end);
        let line = &text[line_start..line_end];

        // Chars of the line with their file offsets.
        let chars: Vec<(usize, char)> = line
            .char_indices()
            .map(|(i, c)| (line_start + i, c))
            .collect();
        let first = chars.partition_point(|&(o, _)| o < start);
        let last = chars.partition_point(|&(o, _)| o < end);
        let (keep_from, keep_to) = if chars.len() <= MAX_LINE_CHARS {
            (0, chars.len())
        } else {
            let from = first.saturating_sub(CONTEXT_BEFORE);
            let to = (from + MAX_LINE_CHARS).min(chars.len()).max(first + 1);
            (from, to.min(chars.len()))
        };

        let mut out = String::new();
        let mut offsets = Vec::new();
        let mut label = 0..0;
        if keep_from > 0 {
            offsets.push((out.len(), chars[keep_from].0));
            out.push('…');
        }
        for (k, &(o, c)) in chars.iter().enumerate().take(keep_to).skip(keep_from) {
            if k == first {
                label.start = out.len();
            }
            if k == last {
                label.end = out.len();
            }
            offsets.push((out.len(), o));
            out.push(if c.is_control() && c != '\t' {
                '\u{FFFD}'
            } else {
                c
            });
        }
        let text_end = out.len();
        if first >= keep_to {
            label.start = text_end;
        }
        if last >= keep_to {
            label.end = text_end;
        }
        label.end = label.end.max(label.start);
        let end_offset = chars.get(keep_to).map(|&(o, _)| o).unwrap_or(line_end);
        if keep_to < chars.len() {
            offsets.push((out.len(), end_offset));
            out.push('…');
        }
        offsets.push((out.len(), end_offset));
        let file_columns = offsets
            .iter()
            .map(|&(_, o)| file.location(o).column)
            .collect();
        Window {
            name: display_path(file),
            text: out,
            row,
            offsets,
            label,
            file_columns,
        }
    }

    /// Real one-based column of a byte index of the window text.
    fn column_of(&self, byte: usize) -> usize {
        let i = self.offsets.partition_point(|&(w, _)| w <= byte);
        let i = i.saturating_sub(1);
        self.file_columns.get(i).copied().unwrap_or(1)
    }
}

fn floor(text: &str, o: usize) -> usize {
    cellguard_lints::source::floor_char_boundary(text, o)
}

impl<'a> Files<'a> for Window {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, _: ()) -> Result<&'a str, FilesError> {
        Ok(&self.name)
    }
    fn source(&'a self, _: ()) -> Result<&'a str, FilesError> {
        Ok(&self.text)
    }
    fn line_index(&'a self, _: (), _byte_index: usize) -> Result<usize, FilesError> {
        Ok(0)
    }
    fn line_number(&'a self, _: (), _line_index: usize) -> Result<usize, FilesError> {
        Ok(self.row + 1)
    }
    fn column_number(
        &'a self,
        _: (),
        _line_index: usize,
        byte_index: usize,
    ) -> Result<usize, FilesError> {
        Ok(self.column_of(byte_index))
    }
    fn line_range(&'a self, _: (), line_index: usize) -> Result<Range<usize>, FilesError> {
        if line_index == 0 {
            Ok(0..self.text.len())
        } else {
            Err(FilesError::LineTooLarge {
                given: line_index,
                max: 0,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::super::{OutputFormat, RenderOptions};
    use super::*;
    use cellguard_lints::{rules, TextRange};

    #[test]
    fn text_snapshot() {
        insta::assert_snapshot!(testing::rendered(
            OutputFormat::Text,
            &RenderOptions::default()
        ));
    }

    #[test]
    fn colour_only_when_asked() {
        let plain = testing::rendered(OutputFormat::Text, &RenderOptions::default());
        assert!(!plain.contains('\u{1b}'));
        let coloured = testing::rendered(
            OutputFormat::Text,
            &RenderOptions {
                color: true,
                ..Default::default()
            },
        );
        assert!(
            coloured.contains("\u{1b}[1m\u{1b}[31mIMP001\u{1b}[0m"),
            "{coloured}"
        );
    }

    fn frame(text: &str, range: TextRange) -> String {
        let file = SourceFile::new("x.py", text);
        let d = Diagnostic::new(rules::find_rule("SYN001").unwrap(), range, "m");
        let mut out = NoColor::new(Vec::new());
        render_diagnostic(&file, &d, &RenderOptions::default(), &mut out).unwrap();
        String::from_utf8(out.into_inner()).unwrap()
    }

    #[test]
    fn long_line_is_cut_around_the_range_with_real_columns() {
        let text = format!("x = [{}]; import os\n", "1, ".repeat(5000));
        let at = text.find("os").unwrap();
        let out = frame(&text, TextRange::new(at, at + 2));
        assert!(out.contains(&format!(" --> x.py:1:{}", at + 1)), "{out}");
        assert!(out.contains("…1, 1, "), "{out}");
        assert!(out.lines().all(|l| l.chars().count() < 200), "{out}");
        let line = out.lines().find(|l| l.contains("import os")).unwrap();
        let carets = out.lines().find(|l| l.contains("^^")).unwrap();
        assert_eq!(
            line.find("os").map(|i| line[..i].chars().count()),
            carets.find('^')
        );
    }

    #[test]
    fn multi_line_range_shows_its_first_line_and_the_row_of_the_file() {
        let out = frame("a = 1\nb = (\n  2,\n)\n", TextRange::new(10, 20));
        assert!(out.contains(" --> x.py:2:5"), "{out}");
        assert!(out.contains("2 | b = ("), "{out}");
        assert!(!out.contains("  2,"), "{out}");
    }

    #[test]
    fn empty_file_and_range_past_the_end_do_not_panic() {
        let out = frame("", TextRange::new(0, 0));
        assert!(out.contains(" --> x.py:1:1"), "{out}");
        let out = frame("ab\n", TextRange::new(50, 90));
        assert!(out.contains("x.py:2:1"), "{out}");
    }

    #[test]
    fn control_characters_are_not_sent_to_the_terminal() {
        let out = frame("x = '\u{1b}[31m'\n", TextRange::new(0, 1));
        assert!(!out.contains('\u{1b}'), "{out}");
    }
}
