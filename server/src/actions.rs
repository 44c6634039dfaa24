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
use cellguard_lints::{fix, Applicability, SourceFile};
use std::collections::HashMap;
use tower_lsp_server::ls_types as lsp;

/// The kind of the fix-all source action.
pub const FIX_ALL_KIND: &str = "source.fixAll.cellguard";

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

/// The data of a diagnostic the client sent back, usable for the document's `current_version`:
/// its own `data` only when that data belongs to the current version; otherwise (no data, a
/// foreign shape, or data of an older or newer version, whose positions no longer fit the
/// text) what `fallback` finds for it in the current result. A stale stored fix is never
/// returned: applied at its old positions it would corrupt the document (ry#252).
pub fn current_data(
    d: &lsp::Diagnostic,
    current_version: Option<i32>,
    fallback: impl Fn(&lsp::Diagnostic) -> Option<convert::DiagnosticData>,
) -> Option<convert::DiagnosticData> {
    convert::diagnostic_data(d)
        .filter(|data| Some(data.version) == current_version)
        .or_else(|| fallback(d))
        .filter(|data| Some(data.version) == current_version)
}

/// Quick fixes and ignore-comment actions for the client's diagnostics, for the document's
/// `current_version` (see [`current_data`]). `fallback` finds the data of a diagnostic in the
/// current result (for clients that drop `data`, and for diagnostics of an older version whose
/// range the client moved with the text); `ignore_for` places the ignore comment (it needs the
/// syntax tree of the data's version).
pub fn quick_fixes(
    uri: &lsp::Uri,
    diagnostics: &[lsp::Diagnostic],
    settings: &ClientSettings,
    document_changes: bool,
    current_version: Option<i32>,
    fallback: impl Fn(&lsp::Diagnostic) -> Option<convert::DiagnosticData>,
    ignore_for: impl Fn(&convert::DiagnosticData) -> Option<DataEdit>,
) -> Vec<lsp::CodeActionOrCommand> {
    let mut fixes = Vec::new();
    let mut ignores = Vec::new();
    for d in diagnostics {
        if d.source.as_deref() != Some("cellguard") {
            continue;
        }
        let Some(data) = current_data(d, current_version, &fallback) else {
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
        if !settings.disable_rule_comment {
            continue;
        }
        if let Some(ignore) = ignore_for(&data) {
            ignores.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: format!("Ignore {} for this line", data.code),
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![d.clone()]),
                edit: Some(workspace_edit(
                    uri,
                    Some(data.version),
                    text_edits(std::slice::from_ref(&ignore)),
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

/// The text after applying every safe fix with the engine's fix loop (`fix::fix_file`: apply
/// non-overlapping fixes, re-lint, repeat until nothing applies). `None` when nothing changes.
pub fn fix_all_text(result: &LintResult) -> Option<String> {
    // A byte order mark is kept and not shown to the engine, as `cellguard check --fix` does.
    let bom = crate::analysis::bom_len(&result.text);
    let file = SourceFile::new(result.path.clone(), result.text[bom..].to_string());
    let fixed = fix::fix_file(
        &file,
        &result.settings,
        &result.project.kb,
        Applicability::Safe,
    );
    let fixed = format!("{}{}", &result.text[..bom], fixed.text);
    (fixed != *result.text).then_some(fixed)
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
