//! Positions and diagnostics between cellguard and the LSP.
//!
//! cellguard ranges are byte offsets into UTF-8 text; LSP positions are zero-based lines and
//! columns counted in the negotiated encoding (UTF-8 bytes, UTF-16 code units, or UTF-32
//! characters). Lines end at `\n`, `\r\n` or a lone `\r`, as the LSP specification says (the
//! rope is built with only those line breaks). Every conversion clamps: a line past the end maps
//! to the end of the text, a column past the end of its line to the line end, and a column in
//! the middle of a character (a UTF-16 surrogate pair, a UTF-8 sequence) to that character's
//! start. Nothing here panics on any input.

use cellguard_lints::source::{PositionEncoding, TextRange};
use cellguard_lints::{Applicability, Diagnostic, Settings, Severity};
use ropey::Rope;
use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types as lsp;

/// The encoding chosen from the client's `general.positionEncodings`: UTF-8 when offered
/// (no conversion at all), else UTF-32, else the protocol default UTF-16 (the order ruff uses).
pub fn negotiate_encoding(offered: Option<&[lsp::PositionEncodingKind]>) -> PositionEncoding {
    let offered = offered.unwrap_or(&[]);
    let has = |k: &lsp::PositionEncodingKind| offered.iter().any(|o| o == k);
    if has(&lsp::PositionEncodingKind::UTF8) {
        PositionEncoding::Utf8
    } else if has(&lsp::PositionEncodingKind::UTF32) {
        PositionEncoding::Utf32
    } else {
        PositionEncoding::Utf16
    }
}

/// The LSP name of an encoding (`utf-8`, `utf-16`, `utf-32`).
pub fn encoding_kind(encoding: PositionEncoding) -> lsp::PositionEncodingKind {
    match encoding {
        PositionEncoding::Utf8 => lsp::PositionEncodingKind::UTF8,
        PositionEncoding::Utf16 => lsp::PositionEncodingKind::UTF16,
        PositionEncoding::Utf32 => lsp::PositionEncodingKind::UTF32,
    }
}

/// Char index just past the content of `line` (before its `\n`, `\r\n` or `\r`).
fn line_content_end_char(rope: &Rope, line: usize) -> usize {
    let start = rope.line_to_char(line);
    let slice = rope.line(line);
    let mut len = slice.len_chars();
    if len > 0 && slice.char(len - 1) == '\n' {
        len -= 1;
    }
    if len > 0 && slice.char(len - 1) == '\r' {
        len -= 1;
    }
    start + len
}

/// Byte offset of an LSP position, clamped to the text (see the module docs).
pub fn offset_of(rope: &Rope, pos: lsp::Position, encoding: PositionEncoding) -> usize {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return rope.len_bytes();
    }
    let col = pos.character as usize;
    let start_char = rope.line_to_char(line);
    let end_char = line_content_end_char(rope, line);
    let ch = match encoding {
        PositionEncoding::Utf8 => {
            let start_byte = rope.char_to_byte(start_char);
            let end_byte = rope.char_to_byte(end_char);
            let byte = start_byte.saturating_add(col).min(end_byte);
            // byte_to_char rounds down to the start of the character holding `byte`.
            rope.byte_to_char(byte)
        }
        PositionEncoding::Utf16 => {
            let base = rope.char_to_utf16_cu(start_char);
            let end = rope.char_to_utf16_cu(end_char);
            let cu = base.saturating_add(col).min(end);
            let c = rope.utf16_cu_to_char(cu);
            // Inside a surrogate pair: ropey may round either way; keep the character start.
            if rope.char_to_utf16_cu(c) > cu {
                c.saturating_sub(1)
            } else {
                c
            }
        }
        PositionEncoding::Utf32 => start_char.saturating_add(col).min(end_char),
    };
    rope.char_to_byte(ch)
}

/// LSP position of a byte offset (clamped to the text; an offset inside a character counts as
/// that character's start).
pub fn position_of(rope: &Rope, offset: usize, encoding: PositionEncoding) -> lsp::Position {
    let byte = offset.min(rope.len_bytes());
    let ch = rope.byte_to_char(byte);
    let line = rope.char_to_line(ch);
    let start = rope.line_to_char(line);
    let col = match encoding {
        PositionEncoding::Utf8 => rope.char_to_byte(ch) - rope.char_to_byte(start),
        PositionEncoding::Utf16 => rope.char_to_utf16_cu(ch) - rope.char_to_utf16_cu(start),
        PositionEncoding::Utf32 => ch - start,
    };
    lsp::Position::new(to_u32(line), to_u32(col))
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// LSP range of a byte range.
pub fn range_of(rope: &Rope, range: TextRange, encoding: PositionEncoding) -> lsp::Range {
    lsp::Range::new(
        position_of(rope, range.start, encoding),
        position_of(rope, range.end, encoding),
    )
}

/// Byte range of an LSP range (clamped; a reversed range is put in order).
pub fn text_range_of(rope: &Rope, range: lsp::Range, encoding: PositionEncoding) -> TextRange {
    TextRange::new(
        offset_of(rope, range.start, encoding),
        offset_of(rope, range.end, encoding),
    )
}

/// LSP severity of a cellguard severity.
pub fn severity(s: Severity) -> lsp::DiagnosticSeverity {
    match s {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Info => lsp::DiagnosticSeverity::INFORMATION,
        Severity::Hint => lsp::DiagnosticSeverity::HINT,
    }
}

/// One text edit in LSP coordinates, as stored in [`DiagnosticData`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DataEdit {
    /// Replaced range.
    pub range: lsp::Range,
    /// Replacement text.
    pub new_text: String,
}

/// A diagnostic's fix in LSP coordinates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DataFix {
    /// The fix's message (`Replace with ...`), used as the code action title.
    pub title: String,
    /// `safe`, `unsafe` or `display-only`.
    pub applicability: String,
    /// The edits, sorted, not overlapping.
    pub edits: Vec<DataEdit>,
}

/// What `Diagnostic.data` carries, so code actions are built without linting again (ruff's
/// `AssociatedDiagnosticData` plays the same role). Positions are in the negotiated encoding
/// and belong to document `version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticData {
    /// The document version the positions refer to.
    pub version: i32,
    /// The rule code.
    pub code: String,
    /// Index of the diagnostic in the server's result for `version` (to place the
    /// "ignore for this line" comment with the syntax tree of that version).
    pub index: usize,
    /// The fix, when the rule offers one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<DataFix>,
}

/// Converts an engine diagnostic (file byte offsets), the `index`-th of its result, to an LSP
/// diagnostic for document `version`. `codeDescription.href` is the rule's documentation link
/// under `settings` (`Settings::rule_doc_url`, the CLI's JSON `url`), absent when there is none.
pub fn to_lsp_diagnostic(
    rope: &Rope,
    d: &Diagnostic,
    index: usize,
    version: i32,
    encoding: PositionEncoding,
    settings: &Settings,
) -> lsp::Diagnostic {
    let fix = d.fix.as_ref().map(|f| DataFix {
        title: f.message.clone(),
        applicability: f.applicability.as_str().to_string(),
        edits: f
            .edits
            .iter()
            .map(|e| DataEdit {
                range: range_of(rope, e.range, encoding),
                new_text: e.content.clone(),
            })
            .collect(),
    });
    let data = DiagnosticData {
        version,
        code: d.rule.code.to_string(),
        index,
        fix,
    };
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    lsp::Diagnostic {
        range: range_of(rope, d.range, encoding),
        severity: Some(severity(d.severity)),
        code: Some(lsp::NumberOrString::String(d.rule.code.to_string())),
        code_description: settings
            .rule_doc_url(d.rule)
            .and_then(|url| url.parse().ok())
            .map(|href| lsp::CodeDescription { href }),
        source: Some("cellguard".to_string()),
        message,
        related_information: None,
        tags: None,
        data: serde_json::to_value(data).ok(),
    }
}

/// Parses the `data` of a diagnostic sent back by the client. `None` when absent or foreign.
pub fn diagnostic_data(d: &lsp::Diagnostic) -> Option<DiagnosticData> {
    d.data
        .as_ref()
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// True when a fix of this applicability may be applied by `source.fixAll` (safe fixes only).
pub fn is_fix_all_applicable(a: Applicability) -> bool {
    a == Applicability::Safe
}

#[cfg(test)]
mod tests {
    use super::*;
    use PositionEncoding::*;

    fn pos(line: u32, character: u32) -> lsp::Position {
        lsp::Position::new(line, character)
    }

    #[test]
    fn emoji_cjk_and_combining_columns_in_every_encoding() {
        // 😀 is 4 UTF-8 bytes, 2 UTF-16 units, 1 char; 漢 is 3/1/1; e + U+0301 is 1+2 bytes.
        let text = "a = '😀漢e\u{301}'; b\n";
        let rope = Rope::from_str(text);
        let b = text.find("b").unwrap();
        assert_eq!(position_of(&rope, b, Utf8), pos(0, b as u32));
        assert_eq!(position_of(&rope, b, Utf16), pos(0, 13));
        assert_eq!(position_of(&rope, b, Utf32), pos(0, 12));
        for enc in [Utf8, Utf16, Utf32] {
            let p = position_of(&rope, b, enc);
            assert_eq!(offset_of(&rope, p, enc), b, "{enc:?}");
        }
    }

    #[test]
    fn positions_inside_a_character_round_down() {
        let text = "x😀y";
        let rope = Rope::from_str(text);
        // UTF-16 column 2 is between the two surrogates of 😀.
        assert_eq!(offset_of(&rope, pos(0, 2), Utf16), 1);
        assert_eq!(offset_of(&rope, pos(0, 3), Utf16), 5);
        // UTF-8 column 3 is inside the emoji's bytes.
        assert_eq!(offset_of(&rope, pos(0, 3), Utf8), 1);
        // Byte 2 is inside the emoji.
        assert_eq!(position_of(&rope, 2, Utf16), pos(0, 1));
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let text = "ab\r\ncd\rx\n";
        let rope = Rope::from_str(text);
        assert_eq!(offset_of(&rope, pos(0, 99), Utf16), 2, "before \\r\\n");
        assert_eq!(offset_of(&rope, pos(1, 99), Utf16), 6, "before lone \\r");
        assert_eq!(
            offset_of(&rope, pos(2, 0), Utf16),
            7,
            "a lone \\r ends a line"
        );
        assert_eq!(offset_of(&rope, pos(3, 5), Utf16), text.len());
        assert_eq!(offset_of(&rope, pos(u32::MAX, u32::MAX), Utf8), text.len());
        assert_eq!(position_of(&rope, usize::MAX, Utf16), pos(3, 0));
        let r = text_range_of(&rope, lsp::Range::new(pos(1, 1), pos(0, 1)), Utf16);
        assert_eq!(r, TextRange::new(1, 5));
    }

    #[test]
    fn negotiation_prefers_utf8_then_utf32_then_utf16() {
        use lsp::PositionEncodingKind as K;
        assert_eq!(negotiate_encoding(None), Utf16);
        assert_eq!(negotiate_encoding(Some(&[K::UTF16, K::UTF8])), Utf8);
        assert_eq!(negotiate_encoding(Some(&[K::UTF16, K::UTF32])), Utf32);
        assert_eq!(negotiate_encoding(Some(&[K::new("latin-1")])), Utf16);
    }
}
