//! Open documents: a ropey [`Rope`] holding the text, the version the client gave it, and the
//! tree-sitter tree of the whole text kept in step with every edit (incremental re-parse).
//!
//! An incremental change is applied in the order the tree-sitter docs require: the
//! [`InputEdit`] is computed from the rope *before* the edit (start and old end), the rope is
//! edited, the new end is read from the edited rope, and the tree is `edit`ed. The re-parse itself
//! happens off the main loop, in the lint worker, with the edited tree as the old tree.

use crate::analysis::{CellTree, LintResult};
use crate::convert;
use cellguard_lints::source::PositionEncoding;
use ropey::Rope;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::watch;
use tower_lsp_server::ls_types as lsp;
use tree_sitter::{InputEdit, Point, Tree};

/// What the client said the document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// `python`: the whole text is one cell.
    Python,
    /// `markdown`: every `python`/`py` fence is a cell.
    Markdown,
    /// Anything else: the extraction mode follows the file extension (a raw LLM response for
    /// `.txt`/`.json`).
    Other,
}

impl Language {
    /// From an LSP `languageId`.
    pub fn from_id(id: &str) -> Self {
        match id.to_ascii_lowercase().as_str() {
            "python" | "py" => Language::Python,
            "markdown" | "md" => Language::Markdown,
            _ => Language::Other,
        }
    }
}

/// One open document.
#[derive(Debug)]
pub struct Document {
    /// Its URI as the client sent it.
    pub uri: lsp::Uri,
    /// The file path used for config discovery and messages (a virtual path in the workspace
    /// for `untitled:` and other non-file URIs).
    pub path: PathBuf,
    /// What the client said the document is.
    pub language: Language,
    /// The client's version of the current text.
    pub version: i32,
    /// Distinguishes this opening from an earlier one of the same URI (versions restart when a
    /// document is closed and opened again, so results are matched on epoch and version).
    pub epoch: u64,
    /// The text.
    pub rope: Rope,
    /// Tree of the whole text parsed as Python, edited in step with the rope. `None` before the
    /// first parse, after a full replacement, or when the document is not one Python cell.
    pub tree: Option<Tree>,
    /// Cell trees from the last lint (Markdown and responses), re-used for unchanged cells and
    /// as the old tree for changed ones.
    pub cells: Arc<Vec<CellTree>>,
    /// Per-cell rule results from the last lint, re-used for unchanged cells.
    pub rules: Option<Arc<crate::analysis::RuleCache>>,
    /// True while a lint task runs for this document.
    pub lint_running: bool,
    /// The version the last finished lint saw.
    pub linted_version: Option<i32>,
    /// The last result for the current text (`None` until the first lint finishes).
    pub result: Option<Arc<LintResult>>,
    /// The last parse without rules (`analysis::parse_only`), for hover, completion, definition
    /// and inlay hints while the lint of the current text still runs.
    pub syntax: Option<Arc<LintResult>>,
    /// Held while such a parse runs, so concurrent requests share one.
    pub syntax_lock: Arc<tokio::sync::Mutex<()>>,
    /// The current version, readable by a running lint without the documents lock (a lint of
    /// an older version is abandoned).
    pub latest: Arc<std::sync::atomic::AtomicI32>,
    /// Wakes requests waiting for a result (pull diagnostics, fix-all, inlay hints).
    pub results: watch::Sender<Option<Arc<LintResult>>>,
    /// The edits applied since the last lint started, tagged with the version they produced
    /// (`None` for a full replacement), so a tree parsed from an older text can be brought up
    /// to date instead of being thrown away.
    pub edits: Vec<(i32, Option<InputEdit>)>,
}

/// Why a `didChange` was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeError {
    /// The version does not increase: the client and server disagree on the text.
    StaleVersion {
        /// The server's version.
        current: i32,
        /// The version in the notification.
        received: i32,
    },
    /// A change's range starts after it ends (LSP requires `start <= end`): the client's idea
    /// of the text cannot be reproduced, so none of the notification's changes are applied.
    InvalidRange {
        /// Index of the offending change in `contentChanges`.
        index: usize,
        /// The range as received.
        range: lsp::Range,
    },
}

impl Document {
    /// A freshly opened document.
    pub fn new(
        uri: lsp::Uri,
        path: PathBuf,
        language: Language,
        version: i32,
        epoch: u64,
        text: &str,
    ) -> Self {
        Self {
            uri,
            path,
            language,
            version,
            epoch,
            rope: Rope::from_str(text),
            tree: None,
            cells: Arc::new(Vec::new()),
            rules: None,
            lint_running: false,
            linted_version: None,
            result: None,
            syntax: None,
            syntax_lock: Arc::new(tokio::sync::Mutex::new(())),
            latest: Arc::new(std::sync::atomic::AtomicI32::new(version)),
            results: watch::channel(None).0,
            edits: Vec::new(),
        }
    }

    /// Applies the content changes of one `didChange`, in order, and takes `version`.
    ///
    /// Errors (the changes are then not applied and the version is not taken): a version that
    /// does not increase, or a change whose range is invalid (see [`range_is_valid`]).
    pub fn apply_changes(
        &mut self,
        version: i32,
        changes: Vec<lsp::TextDocumentContentChangeEvent>,
        encoding: PositionEncoding,
    ) -> Result<(), ChangeError> {
        if version <= self.version {
            return Err(ChangeError::StaleVersion {
                current: self.version,
                received: version,
            });
        }
        // Validated up front: positions are compared as sent, so no change needs applying
        // first and a rejected notification leaves the text untouched.
        for (index, change) in changes.iter().enumerate() {
            if let Some(range) = change.range.filter(|r| !range_is_valid(*r)) {
                return Err(ChangeError::InvalidRange { index, range });
            }
        }
        for change in changes {
            let edit = self.apply_change(change, encoding);
            self.edits.push((version, edit));
        }
        self.version = version;
        self.latest
            .store(version, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// Applies one change; returns its tree-sitter edit (in the coordinates of the text after a
    /// byte order mark), `None` for a full replacement or a change of the BOM.
    fn apply_change(
        &mut self,
        change: lsp::TextDocumentContentChangeEvent,
        enc: PositionEncoding,
    ) -> Option<InputEdit> {
        let Some(range) = change.range else {
            // A change without a range replaces the whole text.
            self.rope = Rope::from_str(&change.text);
            self.tree = None;
            return None;
        };
        let start = convert::offset_of(&self.rope, range.start, enc);
        let end = convert::offset_of(&self.rope, range.end, enc);
        let (start, end) = (start.min(end), start.max(end));
        let start_position = point_at(&self.rope, start);
        let old_end_position = point_at(&self.rope, end);
        let start_char = self.rope.byte_to_char(start);
        let end_char = self.rope.byte_to_char(end);
        let bom_before = rope_bom_len(&self.rope);
        self.rope.remove(start_char..end_char);
        self.rope.insert(start_char, &change.text);
        let new_end_byte = start + change.text.len();
        let edit = InputEdit {
            start_byte: start,
            old_end_byte: end,
            new_end_byte,
            start_position,
            old_end_position,
            new_end_position: point_at(&self.rope, new_end_byte),
        };
        let edit = tree_edit(edit, bom_before, rope_bom_len(&self.rope));
        match (&mut self.tree, &edit) {
            (Some(tree), Some(e)) => tree.edit(e),
            (tree, None) => *tree = None,
            _ => {}
        }
        edit
    }

    /// `tree` (parsed from the text of `version`) with every later edit applied, so it matches
    /// the current text; `None` when a full replacement happened since.
    pub fn replay_edits_since(&self, version: i32, tree: Option<Tree>) -> Option<Tree> {
        let mut tree = tree?;
        for (v, edit) in &self.edits {
            if *v <= version {
                continue;
            }
            tree.edit(edit.as_ref()?);
        }
        Some(tree)
    }

    /// Forgets edits up to and including `version` (a lint of that version finished).
    pub fn prune_edits(&mut self, version: i32) {
        self.edits.retain(|(v, _)| *v > version);
    }

    /// The document's text.
    pub fn text(&self) -> String {
        self.rope.to_string()
    }
}

/// Whether a change's range is acceptable: its start must not come after its end (LSP
/// `Range`). Positions past the end of a line or of the text are valid and clamp (the LSP
/// rule for a character beyond the line's length), so they are not checked here.
pub fn range_is_valid(range: lsp::Range) -> bool {
    let (s, e) = (range.start, range.end);
    (s.line, s.character) <= (e.line, e.character)
}

/// Width of the byte order mark the rope starts with (see [`crate::analysis::bom_len`]).
fn rope_bom_len(rope: &Rope) -> usize {
    if rope.len_chars() > 0 && rope.char(0) == '\u{feff}' {
        '\u{feff}'.len_utf8()
    } else {
        0
    }
}

/// The edit of the trees, which are parsed from the text after a byte order mark (the engine
/// never sees one), of a text edit in document coordinates: moved back by the BOM's width
/// (bytes, and columns on the first row). `None` (the tree must be parsed afresh) when the edit
/// touches the BOM or adds or removes one.
fn tree_edit(edit: InputEdit, bom_before: usize, bom_after: usize) -> Option<InputEdit> {
    if bom_before != bom_after || edit.start_byte < bom_before {
        return None;
    }
    let bom = bom_before;
    if bom == 0 {
        return Some(edit);
    }
    let point = |p: Point| {
        if p.row == 0 {
            Point::new(0, p.column.saturating_sub(bom))
        } else {
            p
        }
    };
    Some(InputEdit {
        start_byte: edit.start_byte - bom,
        old_end_byte: edit.old_end_byte - bom,
        new_end_byte: edit.new_end_byte - bom,
        start_position: point(edit.start_position),
        old_end_position: point(edit.old_end_position),
        new_end_position: point(edit.new_end_position),
    })
}

/// The tree-sitter point (row, byte column) of a byte offset.
pub fn point_at(rope: &Rope, byte: usize) -> Point {
    let byte = byte.min(rope.len_bytes());
    let row = rope.byte_to_line(byte);
    Point::new(row, byte - rope.line_to_byte(row))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellguard_lints::parse;

    fn change(
        sl: u32,
        sc: u32,
        el: u32,
        ec: u32,
        text: &str,
    ) -> lsp::TextDocumentContentChangeEvent {
        lsp::TextDocumentContentChangeEvent {
            range: Some(lsp::Range::new(
                lsp::Position::new(sl, sc),
                lsp::Position::new(el, ec),
            )),
            range_length: None,
            text: text.to_string(),
        }
    }

    fn doc(text: &str) -> Document {
        Document::new(
            "file:///t/a.py".parse().unwrap(),
            PathBuf::from("/t/a.py"),
            Language::Python,
            1,
            0,
            text,
        )
    }

    #[test]
    fn incremental_reparse_matches_a_fresh_parse() {
        let text = "x = '😀'\nimport os\ny = run(\"a\")\n";
        let mut d = doc(text);
        d.tree = Some(parse::parse(text, None));
        // Replace `os` (after an emoji line) with `json`, then insert a line, in UTF-16.
        d.apply_changes(
            2,
            vec![
                change(1, 7, 1, 9, "json"),
                change(0, 0, 0, 0, "z = (1,\n 2)\n"),
            ],
            PositionEncoding::Utf16,
        )
        .unwrap();
        let new_text = d.text();
        assert_eq!(
            new_text,
            "z = (1,\n 2)\nx = '😀'\nimport json\ny = run(\"a\")\n"
        );
        let incremental = parse::parse(&new_text, d.tree.as_ref());
        let fresh = parse::parse(&new_text, None);
        assert_eq!(
            incremental.root_node().to_sexp(),
            fresh.root_node().to_sexp()
        );
        let imp = incremental.root_node().named_child(2).unwrap();
        assert_eq!(imp.kind(), "import_statement");
        assert_eq!(&new_text[imp.byte_range()], "import json");
    }

    #[test]
    fn utf16_edit_after_emoji_lands_in_the_right_place() {
        let mut d = doc("s = '😀'  # x\n");
        // UTF-16: `s = '` is 5 units, 😀 is 2, `'` 1, so column 8 is just after the quote.
        d.apply_changes(2, vec![change(0, 8, 0, 8, "!")], PositionEncoding::Utf16)
            .unwrap();
        assert_eq!(d.text(), "s = '😀'!  # x\n");
        d.apply_changes(3, vec![change(0, 6, 0, 7, "")], PositionEncoding::Utf32)
            .unwrap();
        assert_eq!(d.text(), "s = '😀!  # x\n");
    }

    #[test]
    fn stale_versions_are_rejected_and_full_replacement_resets_the_tree() {
        let mut d = doc("a\n");
        d.tree = Some(parse::parse("a\n", None));
        let err = d
            .apply_changes(1, vec![change(0, 0, 0, 0, "x")], PositionEncoding::Utf16)
            .unwrap_err();
        assert_eq!(
            err,
            ChangeError::StaleVersion {
                current: 1,
                received: 1
            }
        );
        assert_eq!(d.text(), "a\n");
        d.apply_changes(
            5,
            vec![lsp::TextDocumentContentChangeEvent {
                range: None,
                range_length: None,
                text: "b = 1\n".into(),
            }],
            PositionEncoding::Utf16,
        )
        .unwrap();
        assert_eq!((d.text().as_str(), d.version), ("b = 1\n", 5));
        assert!(d.tree.is_none());
    }

    #[test]
    fn a_tree_of_an_older_version_catches_up_with_later_edits() {
        let v1 = "import os\n";
        let mut d = doc(v1);
        let old_tree = parse::parse(v1, None);
        d.apply_changes(
            2,
            vec![change(0, 0, 0, 0, "x = 1\n")],
            PositionEncoding::Utf16,
        )
        .unwrap();
        d.apply_changes(3, vec![change(1, 7, 1, 9, "json")], PositionEncoding::Utf16)
            .unwrap();
        let caught_up = d.replay_edits_since(1, Some(old_tree)).unwrap();
        let text = d.text();
        let reparsed = parse::parse(&text, Some(&caught_up));
        assert_eq!(
            reparsed.root_node().to_sexp(),
            parse::parse(&text, None).root_node().to_sexp()
        );
        d.prune_edits(2);
        assert_eq!(d.edits.len(), 1);
    }

    #[test]
    fn out_of_range_edits_clamp_instead_of_panicking() {
        let mut d = doc("ab\n");
        d.apply_changes(2, vec![change(0, 1, 9, 9, "Z")], PositionEncoding::Utf8)
            .unwrap();
        assert_eq!(d.text(), "aZ");
    }

    /// L8-1: a reversed range (start after end) rejects the whole notification: neither the
    /// valid change before it nor the version is taken, and the tree is not edited.
    #[test]
    fn a_reversed_range_rejects_the_change_and_leaves_the_document_unchanged() {
        let text = "import os\nx = 1\n";
        let mut d = doc(text);
        d.tree = Some(parse::parse(text, None));
        let err = d
            .apply_changes(
                2,
                vec![change(0, 0, 0, 0, "# c\n"), change(1, 5, 1, 2, "Z")],
                PositionEncoding::Utf16,
            )
            .unwrap_err();
        assert_eq!(
            err,
            ChangeError::InvalidRange {
                index: 1,
                range: lsp::Range::new(lsp::Position::new(1, 5), lsp::Position::new(1, 2)),
            }
        );
        assert_eq!((d.text().as_str(), d.version), (text, 1));
        assert!(d.edits.is_empty());
        // Same line reversed by column only, and an empty range, are told apart.
        assert!(!range_is_valid(lsp::Range::new(
            lsp::Position::new(3, 4),
            lsp::Position::new(3, 3)
        )));
        assert!(range_is_valid(lsp::Range::new(
            lsp::Position::new(3, 4),
            lsp::Position::new(3, 4)
        )));
        // A valid later notification applies to the untouched text.
        d.apply_changes(3, vec![change(0, 7, 0, 9, "json")], PositionEncoding::Utf16)
            .unwrap();
        assert_eq!(d.text(), "import json\nx = 1\n");
    }
}
