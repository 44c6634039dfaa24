//! The engine: source -> cells -> tree -> rules -> diagnostics (file coordinates).
//!
//! One engine serves the CLI, the language server and replay; they only convert inputs and
//! outputs.

use crate::config::{Profile, Settings};
use crate::diagnostic::{Diagnostic, Severity};
use crate::extract::{extract_with, Cell, ExtractOptions, Extraction};
use crate::kb::KnowledgeBase;
use crate::nodes::NodeTable;
use crate::parse;
use crate::rules::{self, Checker};
use crate::source::SourceFile;
use tree_sitter::Tree;

/// Checks one parsed cell. Returned ranges and fix edits are relative to the cell text.
pub fn check_parsed_cell(
    cell: &Cell,
    tree: &Tree,
    settings: &Settings,
    kb: &KnowledgeBase,
) -> Vec<Diagnostic> {
    check_cell_with_table(cell, tree, &NodeTable::new(tree), settings, kb)
}

/// [`check_parsed_cell`] with the node table of `tree` already built (every rule family
/// iterates it instead of walking the tree again).
pub fn check_cell_with_table<'a>(
    cell: &'a Cell,
    tree: &'a Tree,
    nodes: &'a NodeTable<'a>,
    settings: &'a Settings,
    kb: &'a KnowledgeBase,
) -> Vec<Diagnostic> {
    let mut checker = Checker::with_table(cell, tree, nodes, settings, kb);
    rules::check_cell(&mut checker);
    let mut diagnostics = checker.into_diagnostics();
    if settings.profile == Profile::Colony {
        diagnostics = colony_profile(cell, tree, nodes, settings, kb, diagnostics);
    }
    diagnostics.sort_by(|a, b| {
        a.range
            .start
            .cmp(&b.range.start)
            .then(a.rule.code.cmp(b.rule.code))
    });
    diagnostics
}

/// `profile = "colony"`: Colony's validators reproduced (rules/colony.rs) at their own
/// severities; every other finding at `info` ([`rules::colony::beyond_colony`]); a strict
/// diagnostic that duplicates a Colony one
/// is dropped: same code and overlapping range, or, for the per-cell shape findings (`SHP001`,
/// `SHP003`, `SHP004`, one per cell whatever the range each points at), the same code.
fn colony_profile<'a>(
    cell: &'a Cell,
    tree: &'a Tree,
    nodes: &'a NodeTable<'a>,
    settings: &'a Settings,
    kb: &'a KnowledgeBase,
    strict: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let mut checker = Checker::with_table(cell, tree, nodes, settings, kb);
    rules::colony::check(&mut checker);
    let colony = checker.into_diagnostics();
    let mut out: Vec<Diagnostic> = strict
        .into_iter()
        .filter(|d| {
            let per_cell = matches!(d.rule.code, "SHP001" | "SHP003" | "SHP004");
            !colony
                .iter()
                .any(|c| c.rule.code == d.rule.code && (per_cell || c.range.overlaps(d.range)))
        })
        .map(|d| rules::colony::beyond_colony(d, &colony, kb))
        .collect();
    out.extend(colony);
    out
}

/// Maps cell-relative diagnostics to file coordinates. A fix whose edits cannot be written back
/// (they touch text the extractor synthesised) is dropped.
pub fn map_to_file(cell: &Cell, multi_cell: bool, diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diagnostics
        .into_iter()
        .map(|mut d| {
            d.range = cell.map.range_to_file(d.range);
            if let Some(fix) = d.fix.take() {
                let edits: Option<Vec<_>> =
                    fix.edits.iter().map(|e| cell.map.edit_to_file(e)).collect();
                d.fix = edits.map(|edits| crate::diagnostic::Fix { edits, ..fix });
            }
            if multi_cell {
                d.cell = Some(cell.index);
            }
            d
        })
        .collect()
}

/// Checks a whole file: extraction, every cell, and extraction findings. Diagnostics are in
/// file coordinates, sorted by position.
pub fn check_file(file: &SourceFile, settings: &Settings, kb: &KnowledgeBase) -> Vec<Diagnostic> {
    check_file_with(file, settings, kb, |cell| parse::parse(&cell.text, None))
}

/// [`check_file`] with the syntax tree of each cell supplied by `tree_for` instead of a fresh
/// parse. The language server uses it to lint with trees it keeps up to date incrementally
/// between edits; `tree_for` must return a tree of exactly `cell.text` (it is called once per
/// cell, in cell order). Everything else (extraction findings, rule selection, mapping to file
/// coordinates, ordering) is the same as the CLI's.
pub fn check_file_with(
    file: &SourceFile,
    settings: &Settings,
    kb: &KnowledgeBase,
    mut tree_for: impl FnMut(&Cell) -> Tree,
) -> Vec<Diagnostic> {
    let Extraction {
        cells,
        diagnostics: extraction_diagnostics,
        multi_cell,
    } = extract_with(
        file,
        settings.extract,
        &ExtractOptions::from_settings(settings),
    );
    let mut out: Vec<Diagnostic> = extraction_diagnostics
        .into_iter()
        .filter(|d| settings.rules.is_enabled(d.rule))
        .map(|mut d| {
            // In the Colony profile only an empty cell is a failure Colony itself records; the
            // truncation and fence findings describe what it does silently.
            if settings.profile == Profile::Colony && d.rule.code != "SYN002" {
                d.severity = Severity::Info;
            }
            d
        })
        .collect();
    let trees: Vec<Tree> = cells.iter().map(&mut tree_for).collect();
    let tables: Vec<NodeTable> = trees.iter().map(NodeTable::new).collect();
    let mut per_cell: Vec<Vec<Diagnostic>> = cells
        .iter()
        .zip(&trees)
        .zip(&tables)
        .map(|((cell, tree), nodes)| check_cell_with_table(cell, tree, nodes, settings, kb))
        .collect();
    crate::suppress::apply_with_tables(&cells, &tables, &mut per_cell, &mut out, settings);
    for (cell, diagnostics) in cells.iter().zip(per_cell) {
        out.extend(map_to_file(cell, multi_cell, diagnostics));
    }
    out.sort_by(|a, b| {
        a.range
            .start
            .cmp(&b.range.start)
            .then(a.rule.code.cmp(b.rule.code))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_diagnostics_point_into_the_file() {
        let md = "Intro\n\n```python\nimport os\n```\n";
        let file = SourceFile::new("doc.md", md);
        let d = check_file(&file, &Settings::default(), &KnowledgeBase::new());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].rule.code, "IMP001");
        assert_eq!(&md[d[0].range.as_range()], "os");
        assert_eq!(file.location(d[0].range.start).row, 4);
        assert_eq!(d[0].cell, Some(0));
    }

    #[test]
    fn syntax_error_does_not_stop_other_rules() {
        let src = "import os\nx = (\n";
        let d = check_file(
            &SourceFile::new("a.py", src),
            &Settings::default(),
            &KnowledgeBase::new(),
        );
        let codes: Vec<_> = d.iter().map(|d| d.rule.code).collect();
        assert_eq!(codes, vec!["IMP001", "SYN001"]);
    }

    #[test]
    fn envelope_diagnostics_point_into_the_json_string() {
        let src = "{\"thought\": \"t\", \"code\": \"x = 1\\nimport os\"}";
        let file = SourceFile::new("reply.json", src);
        let d = check_file(&file, &Settings::default(), &KnowledgeBase::new());
        let imp: Vec<_> = d.iter().filter(|d| d.rule.code == "IMP001").collect();
        assert_eq!(imp.len(), 1);
        assert_eq!(&src[imp[0].range.as_range()], "os");
        assert_eq!(d[0].cell, None);
    }
}
