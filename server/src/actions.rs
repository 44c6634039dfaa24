//! Code actions: a `quickfix` per diagnostic fix (preferred when safe), "ignore CODE for this
//! line", and `source.fixAll.cellguard` (safe fixes only, applied until nothing changes).
//!
//! Quick fixes are built from `Diagnostic.data` ([`convert::DiagnosticData`]) without linting
//! again; their edits carry the document version the data belongs to, so a client applying them
//! to a newer text rejects them instead of corrupting it.

use crate::analysis::LintResult;
use crate::convert::{self, DataEdit};
use crate::settings::ClientSettings;
use cellguard_lints::source::{PositionEncoding, TextRange};
use cellguard_lints::{lint, Applicability, Diagnostic, Edit, SourceFile};
use std::collections::HashMap;
use tower_lsp_server::ls_types as lsp;

/// The kind of the fix-all source action.
pub const FIX_ALL_KIND: &str = "source.fixAll.cellguard";

/// At most this many fix-and-relint rounds (ruff uses 100; cell fixes converge in one or two).
pub const MAX_FIX_ITERATIONS: usize = 20;

/// True when a client asking for `only` kinds wants `kind` (`source.fixAll` matches
/// `source.fixAll.cellguard`; no `only` means every kind).
pub fn kind_requested(only: Option<&[lsp::CodeActionKind]>, kind: &str) -> bool {
    match only {
        None => true,
        Some(list) => list.iter().any(|r| {
            let r = r.as_str();
            kind == r || (kind.starts_with(r) && kind.as_bytes().get(r.len()) == Some(&b'.'))
        }),
    }
}

/// A workspace edit of one document; versioned when the client supports `documentChanges`.
pub fn workspace_edit(
    uri: &lsp::Uri,
    version: Option<i32>,
    edits: Vec<lsp::TextEdit>,
    document_changes: bool,
) -> lsp::WorkspaceEdit {
    if document_changes {
        lsp::WorkspaceEdit {
            document_changes: Some(lsp::DocumentChanges::Edits(vec![lsp::TextDocumentEdit {
                text_document: lsp::OptionalVersionedTextDocumentIdentifier {
                    uri: uri.clone(),
                    version,
                },
                edits: edits.into_iter().map(lsp::OneOf::Left).collect(),
            }])),
            ..Default::default()
        }
    } else {
        lsp::WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), edits)])),
            ..Default::default()
        }
    }
}

fn text_edits(edits: &[DataEdit]) -> Vec<lsp::TextEdit> {
    edits
        .iter()
        .map(|e| lsp::TextEdit::new(e.range, e.new_text.clone()))
        .collect()
}

/// Quick fixes and ignore-comment actions for the client's diagnostics.
pub fn quick_fixes(
    uri: &lsp::Uri,
    diagnostics: &[lsp::Diagnostic],
    settings: &ClientSettings,
    document_changes: bool,
    fallback: impl Fn(&lsp::Diagnostic) -> Option<convert::DiagnosticData>,
) -> Vec<lsp::CodeActionOrCommand> {
    let mut fixes = Vec::new();
    let mut ignores = Vec::new();
    for d in diagnostics {
        if d.source.as_deref() != Some("cellguard") {
            continue;
        }
        let Some(data) = convert::diagnostic_data(d).or_else(|| fallback(d)) else {
            continue;
        };
        if let (Some(fix), true) = (&data.fix, settings.fix_violation) {
            let safe = fix.applicability == Applicability::Safe.as_str();
            let title = if safe {
                format!("{} ({})", fix.title, data.code)
            } else {
                format!("{} ({}, {})", fix.title, data.code, fix.applicability)
            };
            fixes.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title,
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![d.clone()]),
                edit: Some(workspace_edit(
                    uri,
                    Some(data.version),
                    text_edits(&fix.edits),
                    document_changes,
                )),
                is_preferred: Some(safe),
                ..Default::default()
            }));
        }
        if let (Some(ignore), true) = (&data.ignore, settings.disable_rule_comment) {
            ignores.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: format!("Ignore {} for this line", data.code),
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![d.clone()]),
                edit: Some(workspace_edit(
                    uri,
                    Some(data.version),
                    text_edits(std::slice::from_ref(ignore)),
                    document_changes,
                )),
                is_preferred: Some(false),
                ..Default::default()
            }));
        }
    }
    // Fixes first, then the ignore comments, as ruff orders them.
    fixes.extend(ignores);
    fixes
}

/// The safe fixes of `diagnostics` that do not overlap each other (earlier fixes win), as one
/// list of edits sorted by position.
pub fn non_overlapping_safe_edits(diagnostics: &[Diagnostic]) -> Vec<Edit> {
    let mut fixes: Vec<_> = diagnostics
        .iter()
        .filter_map(|d| d.fix.as_ref())
        .filter(|f| convert::is_fix_all_applicable(f.applicability) && !f.edits.is_empty())
        .collect();
    fixes.sort_by_key(|f| (f.range().start, f.range().end));
    let mut taken: Vec<Edit> = Vec::new();
    for fix in fixes {
        let clashes = fix.edits.iter().any(|e| {
            taken.iter().any(|t| {
                t.range.overlaps(e.range)
                    || (t.range.is_empty() && e.range.is_empty() && t.range.start == e.range.start)
            })
        });
        if !clashes {
            taken.extend(fix.edits.iter().cloned());
        }
    }
    taken.sort_by_key(|e| (e.range.start, e.range.end));
    taken.dedup();
    taken
}

/// Applies sorted, non-overlapping edits to `text`.
pub fn apply_edits(text: &str, edits: &[Edit]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for e in edits {
        let (start, end) = (e.range.start.min(text.len()), e.range.end.min(text.len()));
        if start < last || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            continue;
        }
        out.push_str(&text[last..start]);
        out.push_str(&e.content);
        last = end;
    }
    out.push_str(&text[last..]);
    out
}

/// The text after applying every safe fix, re-linting after each round until no safe fix is
/// left (at most [`MAX_FIX_ITERATIONS`] rounds). `None` when nothing changes.
pub fn fix_all_text(result: &LintResult) -> Option<String> {
    let mut text = result.text.to_string();
    let mut diagnostics = result.diagnostics.clone();
    for _ in 0..MAX_FIX_ITERATIONS {
        let edits = non_overlapping_safe_edits(&diagnostics);
        if edits.is_empty() {
            break;
        }
        let next = apply_edits(&text, &edits);
        if next == text {
            break;
        }
        text = next;
        let file = SourceFile::new(result.path.clone(), text.clone());
        diagnostics = lint::check_file(&file, &result.settings, &result.project.kb);
    }
    (text != *result.text).then_some(text)
}

/// One edit turning `old` into `new` (the span between their common prefix and suffix), in LSP
/// coordinates of `old`.
pub fn minimal_edit(
    old: &str,
    new: &str,
    rope: &ropey::Rope,
    enc: PositionEncoding,
) -> lsp::TextEdit {
    let e = crate::analysis::diff_edit(old, new);
    lsp::TextEdit::new(
        convert::range_of(rope, TextRange::new(e.start_byte, e.old_end_byte), enc),
        new[e.start_byte..e.new_end_byte].to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellguard_lints::{Fix, Rule};

    static R: Rule = Rule {
        code: "TST001",
        name: "test",
        severity: cellguard_lints::Severity::Error,
        summary: "",
        fix: cellguard_lints::diagnostic::FixAvailability::Always,
        doc: cellguard_lints::diagnostic::RuleDoc::EMPTY,
    };

    fn diag(fix: Fix) -> Diagnostic {
        Diagnostic::new(&R, TextRange::new(0, 1), "m").with_fix(fix)
    }

    #[test]
    fn overlapping_and_unsafe_fixes_are_left_out() {
        let ds = vec![
            diag(Fix::safe(
                "a",
                vec![Edit::replace(TextRange::new(0, 3), "X")],
            )),
            diag(Fix::safe(
                "b",
                vec![Edit::replace(TextRange::new(2, 4), "Y")],
            )),
            diag(Fix::unsafe_edit(
                "c",
                vec![Edit::replace(TextRange::new(5, 6), "Z")],
            )),
            diag(Fix::safe("d", vec![Edit::insert(7, "!")])),
            diag(Fix::safe("e", vec![Edit::insert(7, "?")])),
            diag(Fix::display_only(
                "f",
                vec![Edit::delete(TextRange::new(8, 9))],
            )),
        ];
        let edits = non_overlapping_safe_edits(&ds);
        assert_eq!(
            edits,
            vec![
                Edit::replace(TextRange::new(0, 3), "X"),
                Edit::insert(7, "!")
            ]
        );
        assert_eq!(apply_edits("abcdefghij", &edits), "Xdefg!hij");
    }

    #[test]
    fn kind_matching_is_by_dotted_prefix() {
        let only = [lsp::CodeActionKind::SOURCE_FIX_ALL];
        assert!(kind_requested(Some(&only), FIX_ALL_KIND));
        assert!(!kind_requested(Some(&only), "quickfix"));
        let only = [lsp::CodeActionKind::new("source.fix")];
        assert!(!kind_requested(Some(&only), FIX_ALL_KIND));
        assert!(kind_requested(None, "quickfix"));
    }
}
