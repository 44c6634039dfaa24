//! The engine: source -> cells -> tree -> rules -> diagnostics (file coordinates).
//!
//! One engine serves the CLI, the language server and replay; they only convert inputs and
//! outputs.

use crate::config::{Profile, Settings};
use crate::diagnostic::{Diagnostic, Severity};
use crate::extract::{extract_with, Cell, CellOrigin, ExtractOptions, Extraction};
use crate::kb::KnowledgeBase;
use crate::nodes::NodeTable;
use crate::parse;
use crate::rules::{self, Checker};
use crate::source::SourceFile;
use crate::source::TextRange;
use crate::suppress::CellSuppressions;
use std::collections::HashMap;
use tree_sitter::{Node, Tree};

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
    check_cell_incremental(
        cell,
        tree,
        nodes,
        settings,
        kb,
        &UnitResults::default(),
        false,
    )
    .0
}

/// [`check_cell_with_table`] re-using, for the families that run per unit of top-level
/// statements ([`rules::UNIT_FAMILIES`]), the results `previous` recorded for units whose key
/// (see [`UnitResults`]) is unchanged; returns the cell's diagnostics (the same as a fresh
/// [`check_cell_with_table`]) and, with `record`, the unit results to pass to the next check of
/// this cell's successor.
pub fn check_cell_incremental<'a>(
    cell: &'a Cell,
    tree: &'a Tree,
    nodes: &'a NodeTable<'a>,
    settings: &'a Settings,
    kb: &'a KnowledgeBase,
    previous: &UnitResults,
    record: bool,
) -> (Vec<Diagnostic>, UnitResults) {
    let mut checker = Checker::with_table(cell, tree, nodes, settings, kb);
    rules::check_cell_whole(&mut checker);
    let mut results = UnitResults::default();
    let mut local: Vec<Diagnostic> = Vec::new();
    let units = units(tree, &cell.text);
    // In a tree without errors a unit's subtree is the parse of its text alone (a statement
    // starting at a row of its own at module level); with errors, tree-sitter's recovery may
    // read across units, so nothing is re-used or recorded.
    let clean = !tree.root_node().has_error();
    let record = record && clean;
    for (f, family) in rules::UNIT_FAMILIES.iter().enumerate() {
        let context = (family.context)(&checker);
        for unit in &units {
            let key = UnitKey::new(f, context, &cell.text, unit.range);
            if let Some(found) = previous.entries.get(&key).filter(|_| clean) {
                results.reused += 1;
                local.extend(found.at(unit.range.start));
                if record {
                    results.entries.insert(key, found.clone());
                }
                continue;
            }
            let mut found = Vec::new();
            for &root in &unit.roots {
                let table = NodeTable::from_root(root);
                let mut unit_checker = Checker::for_unit(&checker, &table);
                (family.run)(&mut unit_checker);
                found.extend(unit_checker.into_diagnostics());
            }
            let found = UnitFindings {
                base: unit.range.start,
                diagnostics: found,
            };
            local.extend(found.diagnostics.iter().cloned());
            if record {
                results.entries.insert(key, found);
            }
        }
    }
    let mut diagnostics = checker.into_diagnostics();
    diagnostics.extend(local);
    if settings.profile == Profile::Colony {
        diagnostics = colony_profile(cell, tree, nodes, settings, kb, diagnostics);
    }
    diagnostics.sort_by(|a, b| {
        a.range
            .start
            .cmp(&b.range.start)
            .then(a.rule.code.cmp(b.rule.code))
    });
    (diagnostics, results)
}

/// A unit of a cell: top-level statements (and comments) that share rows, with the whole rows
/// they occupy (from the start of the first row to the end of the last, its line terminator
/// included). Statements on one row (`import os; x = 1`) are one unit, because a finding of
/// one (the fix deleting an import) reads its neighbours.
struct Unit<'t> {
    range: TextRange,
    roots: Vec<Node<'t>>,
}

/// The units of a cell, in order. Text outside every unit is blank rows.
fn units<'t>(tree: &'t Tree, src: &str) -> Vec<Unit<'t>> {
    let bytes = src.as_bytes();
    let row_start = |at: usize| {
        bytes[..at.min(bytes.len())]
            .iter()
            .rposition(|&b| b == b'\n' || b == b'\r')
            .map_or(0, |i| i + 1)
    };
    let row_end = |at: usize| {
        let mut end = at.min(bytes.len());
        while end < bytes.len() && bytes[end] != b'\n' && bytes[end] != b'\r' {
            end += 1;
        }
        match bytes.get(end) {
            Some(b'\r') if bytes.get(end + 1) == Some(&b'\n') => end + 2,
            Some(_) => end + 1,
            None => end,
        }
    };
    let mut out: Vec<Unit<'t>> = Vec::new();
    let root = tree.root_node();
    let mut cursor = root.walk();
    for child in root.children(&mut cursor) {
        let (start, end) = (child.start_byte(), child.end_byte());
        match out.last_mut() {
            Some(last) if start < last.range.end => {
                last.range = TextRange::new(last.range.start, row_end(end).max(last.range.end));
                last.roots.push(child);
            }
            _ => out.push(Unit {
                range: TextRange::new(row_start(start), row_end(end)),
                roots: vec![child],
            }),
        }
    }
    out
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

/// Drops the `API009` findings of a Markdown fence whose name a previous fence of the same
/// document binds at module level (or may bind: `from m import *`).
///
/// A playbook's fences are cells run one after another in one REPL namespace, and Colony keeps
/// that namespace between cells (colony-reference §2.1: what a cell binds, such as `results`,
/// persists), so `def helper` in the first fence defines `helper` for the second. The rules
/// still see one cell at a time (their per-cell results are cached by cell text, see
/// [`CellResults`]); this pass runs on every lint, after them, with the names a previous fence
/// binds taken from its own semantic model (built only when a later fence has an `API009`).
/// Other origins are left alone: the records of a JSON Lines dump need not come from one
/// session, and a raw response is already joined into one cell.
fn drop_names_bound_by_earlier_fences(
    cells: &[Cell],
    trees: &[Tree],
    per_cell: &mut [Vec<Diagnostic>],
    settings: &Settings,
    kb: &KnowledgeBase,
) {
    let is_fence = |c: &Cell| c.origin == CellOrigin::MarkdownFence;
    let unknown_name = |d: &Diagnostic| d.rule.code == rules::api::UNKNOWN_NAME.code;
    // The last fence with an `API009`: no fence after it needs the names of those before.
    let last_needing = (0..cells.len())
        .rev()
        .find(|&j| is_fence(&cells[j]) && per_cell[j].iter().any(unknown_name));
    // Names bound at module level by the fences before the current one; `None` once one of
    // them has a wildcard import.
    let mut bound: Option<std::collections::HashSet<String>> = Some(Default::default());
    for k in 0..cells.len() {
        if !is_fence(&cells[k]) {
            continue;
        }
        if per_cell[k].iter().any(unknown_name) {
            let cell = &cells[k];
            per_cell[k].retain(|d| {
                if !unknown_name(d) {
                    return true;
                }
                let Some(names) = &bound else { return false };
                let written = cell.text.get(d.range.as_range()).unwrap_or("");
                !names.contains(&*parse::ident_name(written))
            });
        }
        if bound.is_none() || last_needing.is_none_or(|last| k >= last) {
            continue;
        }
        let model = crate::semantic::SemanticModel::build(&trees[k], &cells[k].text, settings, kb);
        let module = &model.scopes[0];
        if module.wildcard_import {
            bound = None;
        } else if let Some(names) = bound.as_mut() {
            names.extend(module.bindings.keys().cloned());
            // `global x` in a function of the fence binds `x` at module level once called.
            names.extend(model.scopes.iter().flat_map(|s| s.globals.iter().cloned()));
        }
    }
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
    tree_for: impl FnMut(&Cell) -> Tree,
) -> Vec<Diagnostic> {
    check_cells(file, settings, kb, tree_for, &CellResults::default(), false).0
}

/// The findings of the per-unit families ([`rules::UNIT_FAMILIES`]) in each unit of top-level
/// statements of one cell, kept so that the next check of the cell (after an edit) runs them
/// only on the units whose key changed.
///
/// A unit's key is the family, the family's context key (what the family's findings in a unit
/// read outside it, see [`rules::UnitFamily`]), the unit's text (whole rows) and the two bytes
/// before it (the previous row's terminator, which an import's fix deletes). Findings are stored
/// with the unit's offset and moved with it, so a unit that only moved (an edit before it) is
/// re-used too. Valid only for the settings and knowledge base they were computed with.
#[derive(Debug, Clone, Default)]
pub struct UnitResults {
    entries: HashMap<UnitKey, UnitFindings>,
    reused: usize,
}

impl UnitResults {
    /// How many (family, unit) results the check that produced these took from the previous
    /// results instead of running the family.
    pub fn reused(&self) -> usize {
        self.reused
    }
}

/// See [`UnitResults`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct UnitKey {
    family: usize,
    context: u64,
    before: [u8; 2],
    at_start: bool,
    text: String,
}

impl UnitKey {
    fn new(family: usize, context: u64, src: &str, range: TextRange) -> Self {
        let bytes = src.as_bytes();
        let at = range.start;
        let byte = |back: usize| at.checked_sub(back).map_or(0, |i| bytes[i]);
        UnitKey {
            family,
            context,
            before: [byte(2), byte(1)],
            at_start: at == 0,
            text: src[range.as_range()].to_string(),
        }
    }
}

/// A unit's findings in the coordinates of the cell they were found in, whose unit started at
/// `base`.
#[derive(Debug, Clone)]
struct UnitFindings {
    base: usize,
    diagnostics: Vec<Diagnostic>,
}

impl UnitFindings {
    /// The findings moved to a unit starting at `start`.
    fn at(&self, start: usize) -> impl Iterator<Item = Diagnostic> + '_ {
        let base = self.base;
        let shift = move |x: usize| (x + start).wrapping_sub(base);
        let range = move |r: TextRange| TextRange::new(shift(r.start), shift(r.end));
        self.diagnostics.iter().map(move |d| {
            let mut d = d.clone();
            d.range = range(d.range);
            if let Some(fix) = d.fix.as_mut() {
                for e in &mut fix.edits {
                    e.range = range(e.range);
                }
            }
            d
        })
    }
}

/// The per-cell results of one lint of a document, kept so that the next lint of the same
/// document (same settings and knowledge base) re-checks only the cells whose text changed.
///
/// The rules see one cell at a time, so a cell's
/// rule diagnostics (cell coordinates, before suppressions) and its suppression directives are
/// a function of its origin and its text alone, for given settings and knowledge base. What
/// spans cells (file-level `ignore-file` directives, unused-directive findings, names bound by
/// earlier Markdown fences, mapping to file coordinates) is recomputed on every lint from these parts. The language server keeps one per
/// open document and drops it when the document's project (config or knowledge base) or
/// extraction mode changes: a [`CellResults`] must only be passed back to a lint with the
/// settings and knowledge base it was computed with.
#[derive(Debug, Clone, Default)]
pub struct CellResults {
    cells: Vec<CellResult>,
    reused: usize,
    reused_units: usize,
}

/// One cell's entry of [`CellResults`].
#[derive(Debug, Clone)]
struct CellResult {
    origin: CellOrigin,
    text: String,
    diagnostics: Vec<Diagnostic>,
    suppressions: CellSuppressions,
    units: UnitResults,
}

impl CellResults {
    /// Number of cells recorded.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// How many cells the lint that produced these results took from the previous results
    /// instead of checking them.
    pub fn reused(&self) -> usize {
        self.reused
    }

    /// How many (family, unit of statements) results the cells that were checked took from the
    /// previous results of the cell at the same position (see [`UnitResults`]).
    pub fn reused_units(&self) -> usize {
        self.reused_units
    }

    /// True when nothing is recorded (a first lint).
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The recorded result of a cell with the origin and text of `cell`: the entry at the same
    /// index first (cells rarely move), else any entry with that text.
    fn find(&self, cell: &Cell) -> Option<&CellResult> {
        let same = |c: &&CellResult| c.origin == cell.origin && c.text == cell.text;
        self.cells
            .get(cell.index)
            .filter(same)
            .or_else(|| self.cells.iter().find(same))
    }
}

/// [`check_file_with`] re-using the results `previous` recorded for cells whose origin and text
/// are unchanged (see [`CellResults`]); returns the diagnostics (the same as a fresh
/// [`check_file_with`] of the file) and the results to pass to the next lint. `tree_for` is still
/// called for every cell, in cell order.
pub fn check_file_cached(
    file: &SourceFile,
    settings: &Settings,
    kb: &KnowledgeBase,
    tree_for: impl FnMut(&Cell) -> Tree,
    previous: &CellResults,
) -> (Vec<Diagnostic>, CellResults) {
    check_cells(file, settings, kb, tree_for, previous, true)
}

/// [`check_file_cached`]; with `record` false the returned [`CellResults`] is empty (the CLI
/// keeps nothing between files, so it copies nothing).
fn check_cells(
    file: &SourceFile,
    settings: &Settings,
    kb: &KnowledgeBase,
    mut tree_for: impl FnMut(&Cell) -> Tree,
    previous: &CellResults,
    record: bool,
) -> (Vec<Diagnostic>, CellResults) {
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
    // Each cell's rule diagnostics and directives: recorded ones for unchanged cells, else
    // computed (the only place a node table is built).
    let mut reused = 0;
    let mut reused_units = 0;
    let mut units: Vec<UnitResults> = Vec::with_capacity(cells.len());
    let empty = UnitResults::default();
    let (raw, sups): (Vec<Vec<Diagnostic>>, Vec<CellSuppressions>) = cells
        .iter()
        .zip(&trees)
        .map(|(cell, tree)| match previous.find(cell) {
            Some(r) => {
                reused += 1;
                if record {
                    units.push(r.units.clone());
                }
                (r.diagnostics.clone(), r.suppressions.clone())
            }
            None => {
                let nodes = NodeTable::new(tree);
                // The cell this one was edited from: the one at the same position.
                let before = previous
                    .cells
                    .get(cell.index)
                    .filter(|c| c.origin == cell.origin)
                    .map_or(&empty, |c| &c.units);
                let (diagnostics, unit_results) =
                    check_cell_incremental(cell, tree, &nodes, settings, kb, before, record);
                reused_units += unit_results.reused;
                if record {
                    units.push(unit_results);
                }
                (
                    diagnostics,
                    CellSuppressions::from_table(&cell.text, &nodes),
                )
            }
        })
        .unzip();
    let (mut per_cell, raw) = if record {
        (raw.clone(), raw)
    } else {
        (raw, Vec::new())
    };
    drop_names_bound_by_earlier_fences(&cells, &trees, &mut per_cell, settings, kb);
    crate::suppress::apply_with_suppressions(&cells, &sups, &mut per_cell, &mut out, settings);
    let results = if !record {
        Vec::new()
    } else {
        cells
            .iter()
            .zip(raw)
            .zip(sups)
            .zip(units)
            .map(|(((cell, diagnostics), suppressions), units)| CellResult {
                origin: cell.origin,
                text: cell.text.clone(),
                diagnostics,
                suppressions,
                units,
            })
            .collect()
    };
    let mut colony_reading = Vec::new();
    for (cell, diagnostics) in cells.iter().zip(per_cell) {
        let mapped = map_to_file(cell, multi_cell, diagnostics);
        if cell.origin == CellOrigin::ColonyReading {
            colony_reading.extend(mapped);
        } else {
            out.extend(mapped);
        }
    }
    // The code Colony would run from a response it reads differently (SYN004): its security
    // findings, unless a cell already reports the same one.
    for mut d in colony_reading {
        let security = crate::config::is_protected_from_inline_suppression(d.rule)
            && d.rule.family() != crate::rules::meta::FAMILY;
        if !security
            || out
                .iter()
                .any(|o| o.rule.code == d.rule.code && o.range == d.range)
        {
            continue;
        }
        d.fix = None;
        d.cell = None;
        d.message = format!(
            "{} (in the code Colony's extractor runs from this response, which differs from the checked cell)",
            d.message
        );
        out.push(d);
    }
    out.sort_by(|a, b| {
        a.range
            .start
            .cmp(&b.range.start)
            .then(a.rule.code.cmp(b.rule.code))
    });
    (
        out,
        CellResults {
            cells: results,
            reused,
            reused_units,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (code, row, column) of every finding of `text` read as `path` with default settings.
    fn found(path: &str, text: &str) -> Vec<(&'static str, usize, usize)> {
        let file = SourceFile::new(path, text);
        check_file(&file, &Settings::default(), &KnowledgeBase::new())
            .into_iter()
            .map(|d| {
                let l = file.location(d.range.start);
                (d.rule.code, l.row, l.column)
            })
            .collect()
    }

    /// N-17: a Markdown fence may call what an earlier fence of the document defines (the REPL
    /// namespace persists between cells); a name no earlier fence binds is still reported, and
    /// so is a name bound only by a later fence.
    #[test]
    fn markdown_fences_see_the_module_names_of_earlier_fences() {
        let md = "# Playbook\n\n```python\ndef helper(v):\n    return v * 2\nimport json as j\n```\n\nThen:\n\n```python\nprint(helper(3), j.dumps(1), ｈｅｌｐｅｒ(4))\nprint(later(1), missing(2))\n```\n\n```python\ndef later(v):\n    global shared\n    shared = v\n```\n\n```python\nprint(shared, later(2), missing(3))\n```\n";
        let api009: Vec<(usize, usize)> = found("playbook.md", md)
            .into_iter()
            .filter(|f| f.0 == "API009")
            .map(|f| (f.1, f.2))
            .collect();
        assert_eq!(api009, vec![(13, 7), (13, 17), (23, 25)]);
        // The same calls in one Python file with no definitions are all reported.
        let py = "print(helper(3))\n";
        assert_eq!(found("cell.py", py), vec![("API009", 1, 7)]);
        // A wildcard import in an earlier fence may bind anything.
        let star = "```python\nfrom json import *\n```\n\n```python\nprint(anything(1))\n```\n";
        assert!(found("star.md", star).iter().all(|f| f.0 != "API009"));
    }

    /// S9-20: a JSON answer that does not parse is not the end of it: unless the model stopped
    /// at max_tokens, Colony runs what `_extract_code` finds in the raw text, so the security
    /// rules check that code.
    #[test]
    fn colony_fallback_code_of_a_broken_json_answer_is_security_checked() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/response/");
        let read = |name: &str| std::fs::read_to_string(format!("{root}{name}")).unwrap();
        let fence = found("reply.txt", &read("s9_20_json_then_python_fence.txt"));
        assert!(fence.contains(&("SYN003", 2, 1)), "{fence:?}");
        assert!(
            fence.iter().any(|f| f.0 == "SBX002" && f.1 == 3),
            "{fence:?}"
        );
        let extra = found("reply.txt", &read("s9_20_json_with_extra_python.txt"));
        assert!(
            extra.iter().any(|f| f.0 == "SBX002" && f.1 == 1),
            "{extra:?}"
        );
        // A JSON answer cut off at max_tokens with no code in reach still gives only SYN003.
        let cut = found("reply.json", "{\"code\": \"x = [1, 2");
        assert_eq!(cut, vec![("SYN003", 1, 19)]);
    }

    /// G10: a lone `\r` ends a line for CPython on every input path; rows count it too.
    #[test]
    fn lone_cr_ends_a_line_on_every_input_path() {
        let payload = "print(json.codecs.open(\"/etc/hostname\").read())";
        // A .py file (also what stdin and the language server lint).
        let py = format!("x = 1  # note\r{payload}\n");
        assert_eq!(found("cell.py", &py), vec![("SBX005", 2, 12)]);
        // A Markdown fence.
        let md = format!("Reply\n\n```python\nx = 1  # note\r{payload}\n```\n");
        assert_eq!(found("reply.md", &md), vec![("SBX005", 5, 12)]);
        // A raw response: a fence, and a JSON envelope whose string holds an escaped CR.
        assert_eq!(found("reply.txt", &md), vec![("SBX005", 5, 12)]);
        let envelope = format!(
            "{{\"code\": \"x = 1  # c\\r{}\"}}",
            payload.replace('"', "\\\"")
        );
        let f = found("reply.json", &envelope);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].0, "SBX005");
        // A JSON Lines record.
        let f = found("cells.jsonl", &format!("{envelope}\n"));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].0, "SBX005");
        // CRLF is one line end; the code after it was always seen.
        let crlf = format!("x = 1  # note\r\n{payload}\r\n");
        assert_eq!(found("cell.py", &crlf), vec![("SBX005", 2, 12)]);
        // A lone CR inside a string a cell passes to exec is a line end there too.
        let f = found("cell.py", "exec(\"x = 1  # c\\r__import__('o' + 's')\")\n");
        assert!(f.iter().any(|(c, _, _)| c.starts_with("SBX")), "{f:?}");
    }

    /// G29: Colony parses the envelope with Python's `json.loads`, which accepts `NaN`,
    /// `Infinity` and `-Infinity` (and lone surrogate escapes): the code is checked.
    #[test]
    fn json_envelopes_are_read_in_python_s_dialect() {
        for extra in [
            "NaN",
            "Infinity",
            "-Infinity",
            "[1, NaN, -Infinity]",
            "\"\\ud800\"",
        ] {
            let text = format!("{{\"code\": \"y = json.codecs\", \"extra\": {extra}}}");
            let f = found("reply.json", &text);
            assert_eq!(f, vec![("SBX005", 1, 20)], "{text}");
        }
        // Last duplicate key wins, as in Python.
        let f = found(
            "reply.json",
            "{\"code\": \"x = 1\", \"code\": \"y = json.codecs\", \"n\": NaN}",
        );
        assert_eq!(f, vec![("SBX005", 1, 37)]);
        // A JSON Lines dump written by Python's json.dumps (NaN for a float).
        let f = found(
            "cells.jsonl",
            "{\"score\": NaN, \"code\": \"y = json.codecs\"}\n",
        );
        assert_eq!(f, vec![("SBX005", 1, 34)]);
        // Strings that merely contain the words are untouched; invalid JSON stays invalid.
        let f = found(
            "reply.json",
            "{\"code\": \"x = 'NaN Infinity'\", \"n\": Nan}",
        );
        assert_eq!(f.iter().map(|x| x.0).collect::<Vec<_>>(), vec!["SYN003"]);
    }

    /// G11: where Colony reads the fences differently (SYN004), the code it would run is
    /// checked by the security rules, and SYN002 no longer claims that Colony runs nothing.
    #[test]
    fn the_code_colony_would_run_is_checked_when_it_reads_the_reply_differently() {
        let reply = "~~~text\n```python\nx = json.codecs\n```\n~~~\n";
        let file = SourceFile::new("reply.txt", reply);
        let ds = check_file(&file, &Settings::default(), &KnowledgeBase::new());
        let codes: Vec<_> = ds.iter().map(|d| d.rule.code).collect();
        assert_eq!(codes, vec!["SYN002", "SYN004", "SBX005"], "{ds:?}");
        assert!(
            !ds[0].message.contains("extracts nothing"),
            "{}",
            ds[0].message
        );
        assert_eq!(file.location(ds[2].range.start).row, 3);
        assert!(ds[2].message.ends_with("differs from the checked cell)"));
        // Non-security findings of Colony's reading are not reported twice or at all.
        let reply = "   ```python\nimport os\nx = json.codecs\n   ```\n";
        let ds = check_file(
            &SourceFile::new("reply.txt", reply),
            &Settings::default(),
            &KnowledgeBase::new(),
        );
        let sbx: Vec<_> = ds.iter().filter(|d| d.rule.code == "SBX005").collect();
        assert_eq!(sbx.len(), 1, "{ds:?}");
        let imp: Vec<_> = ds.iter().filter(|d| d.rule.code == "IMP001").collect();
        assert_eq!(imp.len(), 1, "{ds:?}");
        // The Colony profile checks Colony's reading itself: no extra cell.
        let colony = Settings {
            profile: crate::config::Profile::Colony,
            ..Settings::default()
        };
        let ds = check_file(
            &SourceFile::new(
                "reply.txt",
                "~~~text\n```python\nx = json.codecs\n```\n~~~\n",
            ),
            &colony,
            &KnowledgeBase::new(),
        );
        assert_eq!(
            ds.iter().filter(|d| d.rule.code == "SBX005").count(),
            1,
            "{ds:?}"
        );
    }

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
