//! The lint worker: one snapshot of a document in, diagnostics (engine and LSP forms), the
//! parsed trees and the resolved project out. Runs on a blocking thread, never on the main
//! loop; it is a pure function of the snapshot, so a result whose version is no longer current
//! is simply dropped by the caller.
//!
//! The rules are the CLI's (`lint::check_file_with`); only the trees come from here: the whole
//! Python text is re-parsed incrementally from the tree the document edited in step with each
//! change, and Markdown cells re-use the previous tree of an unchanged cell or re-parse a changed
//! cell incrementally from an edit computed by diffing its old and new text.

use crate::convert;
use crate::documents::Language;
use cellguard_lints::config::{Project, Resolver, Settings};
use cellguard_lints::extract::{self, Cell, ExtractMode, ExtractOptions, SourceMap};
use cellguard_lints::source::{LineIndex, PositionEncoding, TextRange};
use cellguard_lints::suppress::{self, DirectiveKind};
use cellguard_lints::{lint, parse, Diagnostic, Edit, KnowledgeBase, SourceFile};
use ropey::Rope;
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use tower_lsp_server::ls_types as lsp;
use tree_sitter::{InputEdit, Node, Point, Tree};

/// A cell's text and tree, kept between lints.
#[derive(Debug, Clone)]
pub struct CellTree {
    /// The cell text.
    pub text: Arc<str>,
    /// Its tree.
    pub tree: Tree,
}

/// One cell of a linted document, for hover, completion, definition and inlay hints.
#[derive(Debug, Clone)]
pub struct CellInfo {
    /// Zero-based index of the cell in its file.
    pub index: usize,
    /// Map from cell offsets to file offsets.
    pub map: SourceMap,
    /// The cell text; `None` when the cell is the whole file (see [`LintResult::text`]).
    pub text: Option<Arc<str>>,
    /// The cell's syntax tree.
    pub tree: Tree,
}

/// Everything one lint needs, copied out of the document under the lock (cheap: the rope and
/// the trees are reference counted).
pub struct Snapshot {
    /// Document epoch (see `Document::epoch`).
    pub epoch: u64,
    /// Document version.
    pub version: i32,
    /// Settings generation (bumped on every configuration reload).
    pub generation: u64,
    /// The text.
    pub rope: Rope,
    /// Path for config discovery and extraction by extension.
    pub path: PathBuf,
    /// What the client said the document is.
    pub language: Language,
    /// The whole-text Python tree, edited to match `rope` (the old tree of the re-parse).
    pub tree: Option<Tree>,
    /// Cell trees of the previous lint.
    pub cells: Arc<Vec<CellTree>>,
    /// Per-cell rule results of the previous lint (see [`RuleCache`]).
    pub rules: Option<Arc<RuleCache>>,
    /// Finds the project (config + KB) of `path`.
    pub resolver: Arc<Resolver>,
    /// Negotiated position encoding.
    pub encoding: PositionEncoding,
    /// False when the user turned linting off (`lint.enable = false`): trees are still built.
    pub lint_enabled: bool,
}

/// The outcome of linting one snapshot.
#[derive(Debug)]
pub struct LintResult {
    /// Document epoch.
    pub epoch: u64,
    /// Document version the result belongs to.
    pub version: i32,
    /// Settings generation the result was computed with (see `Shared::generation`).
    pub generation: u64,
    /// The document's path (config discovery, extraction by extension).
    pub path: PathBuf,
    /// The linted text.
    pub text: Arc<str>,
    /// The linted text as a rope (for position conversion).
    pub rope: Rope,
    /// Engine diagnostics, file byte offsets, sorted.
    pub diagnostics: Vec<Diagnostic>,
    /// The same diagnostics for the client.
    pub lsp: Vec<lsp::Diagnostic>,
    /// The cells with their trees.
    pub cells: Vec<CellInfo>,
    /// The project (config and KB) the document resolved to.
    pub project: Arc<Project>,
    /// The settings used (the project's, with the extraction mode the document's language asks).
    pub settings: Arc<Settings>,
    /// A config or KB error met while resolving the project (defaults were used instead).
    pub config_error: Option<String>,
    /// The new whole-text tree, when the document is one Python cell.
    pub whole_tree: Option<Tree>,
    /// Cell trees to keep for the next lint.
    pub cell_cache: Arc<Vec<CellTree>>,
    /// Per-cell rule results to keep for the next lint.
    pub rule_cache: Option<Arc<RuleCache>>,
}

/// The per-cell rule results of one lint ([`lint::CellResults`]) with what they were computed
/// with: a later lint re-uses them only for the same settings generation, the same project
/// (config and knowledge base, compared by identity: a reload builds new ones) and the same
/// extraction mode. Unchanged cells of a Markdown file, a response or a JSON Lines trace are then
/// not checked again.
#[derive(Debug)]
pub struct RuleCache {
    generation: u64,
    project: Arc<Project>,
    mode: ExtractMode,
    results: lint::CellResults,
}

impl LintResult {
    /// The text of a cell.
    pub fn cell_text<'a>(&'a self, cell: &'a CellInfo) -> &'a str {
        cell.text.as_deref().unwrap_or(&self.text)
    }

    /// The cell holding file offset `offset` and the offset inside it. An offset at the very end
    /// of a cell belongs to it (the cursor after the last character).
    pub fn cell_at(&self, offset: usize) -> Option<(&CellInfo, usize)> {
        self.cells
            .iter()
            .find_map(|c| file_to_cell(&c.map, offset).map(|o| (c, o)))
    }

    /// An empty result (used when a lint could not run).
    pub fn empty(epoch: u64, version: i32, generation: u64, path: PathBuf, rope: Rope) -> Self {
        let project = default_project();
        Self {
            epoch,
            version,
            generation,
            path,
            text: Arc::from(rope.to_string()),
            rope,
            diagnostics: Vec::new(),
            lsp: Vec::new(),
            cells: Vec::new(),
            settings: Arc::new(project.settings.clone()),
            project,
            config_error: None,
            whole_tree: None,
            cell_cache: Arc::new(Vec::new()),
            rule_cache: None,
        }
    }
}

/// The project used when no config applies or the config is broken: built-in defaults and an
/// empty knowledge base.
pub fn default_project() -> Arc<Project> {
    static DEFAULT: OnceLock<Arc<Project>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| {
            Arc::new(Project {
                config: None,
                settings: Settings::default(),
                kb: Arc::new(KnowledgeBase::new()),
                kb_paths: Vec::new(),
            })
        })
        .clone()
}

/// The extraction mode for a document: the config's `extract` when set, else the client's
/// language (`python`, `markdown`), else the file extension.
pub fn extract_mode(
    configured: ExtractMode,
    language: Language,
    path: &std::path::Path,
) -> ExtractMode {
    if configured != ExtractMode::Auto {
        return configured.resolve(path);
    }
    match language {
        Language::Python => ExtractMode::Python,
        Language::Markdown => ExtractMode::Markdown,
        Language::Other => ExtractMode::Auto.resolve(path),
    }
}

/// Cell offset of file offset `offset`, when it lies in (or at the end of) a verbatim segment.
pub fn file_to_cell(map: &SourceMap, offset: usize) -> Option<usize> {
    map.segments.iter().find_map(|s| {
        (s.len == s.file_len && offset >= s.file_start && offset <= s.file_start + s.file_len)
            .then(|| s.cell_start + (offset - s.file_start))
    })
}

/// Width in bytes of the UTF-8 byte order mark (U+FEFF) `text` starts with: 3, or 0.
///
/// The CLI never shows a BOM to the engine (`SourceFile::from_bytes` drops it, as CPython's
/// reading of a source file does, while `compile()` of a string holding one is a syntax
/// error); the server lints the text after it and moves every range by this width, so both
/// report the same diagnostics and fixes (anchors §5 #4). In LSP units the BOM is 3 UTF-8
/// bytes, 1 UTF-16 code unit or 1 UTF-32 character: converting the moved byte offsets with the
/// document's rope gives those.
pub fn bom_len(text: &str) -> usize {
    if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    }
}

/// Moves a diagnostic (range and fix edits) `by` bytes forward.
fn shift_diagnostic(d: &mut Diagnostic, by: usize) {
    let shift = |r: TextRange| TextRange::new(r.start + by, r.end + by);
    d.range = shift(d.range);
    if let Some(fix) = &mut d.fix {
        for e in &mut fix.edits {
            e.range = shift(e.range);
        }
    }
}

/// What a lint and a parse of one snapshot share: the text after any byte order mark, the
/// project and the settings with the document's extraction mode.
struct Prepared {
    bom: usize,
    file: SourceFile,
    project: Arc<Project>,
    config_error: Option<String>,
    mode: ExtractMode,
    settings: Settings,
}

fn prepare(snap: &Snapshot) -> Prepared {
    let mut text: String = snap.rope.to_string();
    let bom = bom_len(&text);
    if bom > 0 {
        text.drain(..bom);
    }
    let (project, config_error) = match snap.resolver.project_for(&snap.path) {
        Ok(p) => (p, None),
        Err(e) => (
            snap.resolver
                .project_without_config()
                .unwrap_or_else(|_| default_project()),
            Some(e.to_string()),
        ),
    };
    let mode = extract_mode(project.settings.extract, snap.language, &snap.path);
    let mut settings = project.settings.clone();
    settings.extract = mode;
    Prepared {
        bom,
        file: SourceFile::new(snap.path.clone(), text),
        project,
        config_error,
        mode,
        settings,
    }
}

/// Builds the tree of each cell (incrementally from the snapshot's trees) and records the
/// cells for hover, completion, definition and inlay hints.
struct Trees<'a> {
    snap: &'a Snapshot,
    bom: usize,
    cells: Vec<CellInfo>,
    cache: Vec<CellTree>,
    whole_tree: Option<Tree>,
}

impl<'a> Trees<'a> {
    fn new(snap: &'a Snapshot, bom: usize) -> Self {
        Self {
            snap,
            bom,
            cells: Vec::new(),
            cache: Vec::new(),
            whole_tree: None,
        }
    }

    /// The tree of `cell` of the file whose text (after any BOM) is `file_text`.
    fn tree_for(&mut self, file_text: &str, cell: &Cell) -> Tree {
        let whole_file = cell.text.len() == file_text.len()
            && cell.map.to_file(0) == 0
            && cell.text == file_text;
        let (tree, cell_text) = if whole_file {
            let tree = parse::parse(&cell.text, self.snap.tree.as_ref());
            self.whole_tree = Some(tree.clone());
            (tree, None)
        } else {
            let text: Arc<str> = Arc::from(cell.text.as_str());
            let tree = tree_from_cache(&self.snap.cells, cell.index, &text);
            self.cache.push(CellTree {
                text: text.clone(),
                tree: tree.clone(),
            });
            (tree, Some(text))
        };
        let mut map = cell.map.clone();
        let cell_text = if self.bom > 0 {
            for s in &mut map.segments {
                s.file_start += self.bom;
            }
            cell_text.or_else(|| Some(Arc::from(cell.text.as_str())))
        } else {
            cell_text
        };
        self.cells.push(CellInfo {
            index: cell.index,
            map,
            text: cell_text,
            tree: tree.clone(),
        });
        tree
    }
}

/// The whole document's text: `text` (after the BOM) with the BOM put back.
fn document_text(bom: usize, text: String) -> Arc<str> {
    if bom > 0 {
        Arc::from(format!("\u{feff}{text}"))
    } else {
        Arc::from(text)
    }
}

/// Test hook: `CELLGUARD_SERVER_RULES_DELAY_MS` (read once) makes every lint of a document
/// version after its first wait that long between parsing and the rules, standing in for the
/// rules of a very large file so the integration tests can check, without timing anything,
/// that requests do not wait for a lint and that a superseded lint is abandoned.
fn rules_delay() -> Option<std::time::Duration> {
    static DELAY: OnceLock<Option<std::time::Duration>> = OnceLock::new();
    *DELAY.get_or_init(|| {
        std::env::var("CELLGUARD_SERVER_RULES_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(std::time::Duration::from_millis)
    })
}

/// Lints one snapshot. `None` when the lint was abandoned because `superseded` said the
/// document has a newer version (checked after parsing and after the rules, before the
/// conversion of the diagnostics); the caller lints the newer text instead.
///
/// A text starting with a byte order mark is linted without it (see [`bom_len`]): the trees and
/// the per-cell caches are those of the text after the BOM, and the result (ranges, fixes, cell
/// maps, `text`, `rope`) is in the coordinates of the whole document.
pub fn run_unless(snap: Snapshot, superseded: impl Fn() -> bool) -> Option<LintResult> {
    let parsed = parse_cells(&snap);
    if snap.version > 1 {
        if let Some(d) = rules_delay() {
            std::thread::sleep(d);
        }
    }
    if superseded() {
        return None;
    }
    let Prepared {
        bom,
        ref file,
        ref project,
        mode,
        ref settings,
        ..
    } = parsed.prepared;
    let empty = lint::CellResults::default();
    let previous = snap
        .rules
        .as_deref()
        .filter(|c| {
            c.generation == snap.generation && Arc::ptr_eq(&c.project, project) && c.mode == mode
        })
        .map_or(&empty, |c| &c.results);
    // The rules get the trees just built (in cell order, as `check_file_cached` asks for them).
    let mut built = parsed.cells.iter().map(|c| c.tree.clone());
    let (mut diagnostics, results) = lint::check_file_cached(
        file,
        settings,
        &project.kb,
        |_| built.next().unwrap_or_else(|| parse::parse("", None)),
        previous,
    );
    if superseded() {
        return None;
    }
    let rule_cache = Arc::new(RuleCache {
        generation: snap.generation,
        project: project.clone(),
        mode,
        results,
    });
    if !snap.lint_enabled {
        diagnostics.clear();
    }
    if bom > 0 {
        for d in &mut diagnostics {
            shift_diagnostic(d, bom);
        }
    }
    let lsp_diagnostics = diagnostics
        .iter()
        .enumerate()
        .map(|(i, d)| {
            convert::to_lsp_diagnostic(&snap.rope, d, i, snap.version, snap.encoding, settings)
        })
        .collect();
    Some(parsed.into_result(snap, diagnostics, lsp_diagnostics, Some(rule_cache)))
}

/// Lints one snapshot to the end (see [`run_unless`]).
pub fn run(snap: Snapshot) -> LintResult {
    run_unless(snap, || false).expect("never superseded")
}

/// Parses one snapshot without running any rule: the trees, cells, project and settings of
/// the current text for hover, completion, definition and inlay hints, which must not wait
/// for a lint (on a large file the rules take seconds; the incremental parse milliseconds).
/// `diagnostics` and `lsp` are empty and `rule_cache` is `None`.
pub fn parse_only(snap: Snapshot) -> LintResult {
    parse_cells(&snap).into_result(snap, Vec::new(), Vec::new(), None)
}

/// The parse half of a lint, shared by [`run_unless`] and [`parse_only`]: the project and
/// settings of the document, and each extracted cell with its tree (from the snapshot's cell
/// cache where possible).
struct Parsed {
    prepared: Prepared,
    cells: Vec<CellInfo>,
    cache: Vec<CellTree>,
    whole_tree: Option<Tree>,
}

fn parse_cells(snap: &Snapshot) -> Parsed {
    let prepared = prepare(snap);
    let extraction = extract::extract_with(
        &prepared.file,
        prepared.settings.extract,
        &ExtractOptions::from_settings(&prepared.settings),
    );
    let mut trees = Trees::new(snap, prepared.bom);
    for cell in &extraction.cells {
        trees.tree_for(&prepared.file.text, cell);
    }
    let Trees {
        cells,
        cache,
        whole_tree,
        ..
    } = trees;
    Parsed {
        prepared,
        cells,
        cache,
        whole_tree,
    }
}

impl Parsed {
    /// The result of the snapshot `snap` this was parsed from, with the rules' output (empty
    /// for a parse-only result).
    fn into_result(
        self,
        snap: Snapshot,
        diagnostics: Vec<Diagnostic>,
        lsp: Vec<lsp::Diagnostic>,
        rule_cache: Option<Arc<RuleCache>>,
    ) -> LintResult {
        let Prepared {
            bom,
            file,
            project,
            config_error,
            settings,
            ..
        } = self.prepared;
        LintResult {
            epoch: snap.epoch,
            version: snap.version,
            generation: snap.generation,
            text: document_text(bom, file.text),
            path: snap.path,
            rope: snap.rope,
            diagnostics,
            lsp,
            cells: self.cells,
            settings: Arc::new(settings),
            project,
            config_error,
            whole_tree: self.whole_tree,
            cell_cache: Arc::new(self.cache),
            rule_cache,
        }
    }
}

/// The tree of a cell: the previous tree of an identical cell, or an incremental re-parse of
/// the previous cell at the same index, or a fresh parse.
fn tree_from_cache(cache: &[CellTree], index: usize, text: &str) -> Tree {
    if let Some(same) = cache.iter().find(|c| &*c.text == text) {
        return same.tree.clone();
    }
    if let Some(prev) = cache.get(index) {
        let mut old = prev.tree.clone();
        old.edit(&diff_edit(&prev.text, text));
        return parse::parse(text, Some(&old));
    }
    parse::parse(text, None)
}

/// The single edit turning `old` into `new`: everything between their common prefix and their
/// common suffix, on character boundaries.
pub fn diff_edit(old: &str, new: &str) -> InputEdit {
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let mut prefix = ob.iter().zip(nb).take_while(|(a, b)| a == b).count();
    while prefix > 0 && !(old.is_char_boundary(prefix) && new.is_char_boundary(prefix)) {
        prefix -= 1;
    }
    let max_suffix = ob.len().min(nb.len()) - prefix;
    let mut suffix = ob
        .iter()
        .rev()
        .zip(nb.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while suffix > 0
        && !(old.is_char_boundary(ob.len() - suffix) && new.is_char_boundary(nb.len() - suffix))
    {
        suffix -= 1;
    }
    InputEdit {
        start_byte: prefix,
        old_end_byte: ob.len() - suffix,
        new_end_byte: nb.len() - suffix,
        start_position: point_in(old, prefix),
        old_end_position: point_in(old, ob.len() - suffix),
        new_end_position: point_in(new, nb.len() - suffix),
    }
}

/// Row and byte column of `byte` in `text`, counting rows at `\n` as tree-sitter does.
pub fn point_in(text: &str, byte: usize) -> Point {
    let before = &text.as_bytes()[..byte.min(text.len())];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    Point::new(row, before.len() - line_start)
}

/// The text `# cellguard: ignore[CODE]` comments are made of.
pub fn ignore_comment(codes: &str) -> String {
    format!("# cellguard: ignore[{codes}]")
}

/// True when `offset` lies strictly inside a string literal (so text inserted there would
/// become part of the string).
fn inside_string(root: Node, offset: usize) -> bool {
    let Some(mut node) = root.descendant_for_byte_range(offset, offset) else {
        return false;
    };
    loop {
        if matches!(node.kind(), "string" | "string_content")
            && node.start_byte() < offset
            && offset < node.end_byte()
        {
            return true;
        }
        match node.parent() {
            Some(p) => node = p,
            None => return false,
        }
    }
}

/// The comment that starts on the cell line `line_start..line_end`, if any (its byte range).
fn comment_on_line(root: Node, src: &str, line_start: usize, line_end: usize) -> Option<TextRange> {
    let line = &src[line_start..line_end];
    for (i, _) in line.match_indices('#') {
        let at = line_start + i;
        if let Some(n) = root.descendant_for_byte_range(at, at + 1) {
            if n.kind() == "comment" && n.start_byte() == at {
                return Some(TextRange::new(n.start_byte(), n.end_byte()));
            }
        }
    }
    None
}

/// Start and end (before `\r\n`/`\n`) of the cell line holding `offset`.
fn line_bounds(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let start = src[..offset].rfind('\n').map_or(0, |i| i + 1);
    let mut end = src[offset..].find('\n').map_or(src.len(), |i| offset + i);
    if end > start && src.as_bytes()[end - 1] == b'\r' {
        end -= 1;
    }
    (start, end)
}

/// The edit (cell coordinates) that makes row `row_start..row_end` carry `code` in a
/// trailing `# cellguard: ignore[...]`: added to such a directive already in the row's comment,
/// else appended at the end of the row (after any other comment, which keeps pragmas such as
/// `# type: ignore` at the start of their comment). `None` when the code is already listed.
fn trailing_ignore_edit(
    root: Node,
    src: &str,
    row_start: usize,
    row_end: usize,
    code: &str,
) -> Option<Edit> {
    if let Some(c) = comment_on_line(root, src, row_start, row_end) {
        let own_line = src[row_start..c.start].trim().is_empty();
        let directives = suppress::parse_comment(&src[c.as_range()], c.start, own_line);
        let ignores = directives
            .iter()
            .filter(|d| d.kind == DirectiveKind::Ignore && d.malformed.is_none());
        for d in ignores.clone() {
            if d.codes
                .iter()
                .any(|x| x.rule.is_some_and(|r| r.code == code))
            {
                return None;
            }
        }
        if let Some(d) = ignores.clone().find(|d| d.codes_range.is_some()) {
            let mut list: Vec<String> = d.codes.iter().map(|c| c.text.clone()).collect();
            list.push(code.to_string());
            return d.codes_range.map(|r| Edit::replace(r, list.join(", ")));
        }
        if own_line {
            // Text added to a comment alone on its row would cover the next statement.
            return None;
        }
    }
    let line = &src[row_start..row_end];
    let content_end = row_start + line.trim_end().len();
    let sep = if content_end == row_start { "" } else { "  " };
    Some(Edit::insert(
        content_end,
        format!("{sep}{}", ignore_comment(code)),
    ))
}

/// The edit that suppresses `d` with `# cellguard: ignore[CODE]`, placed where the engine's
/// suppression rules make it cover the diagnostic and the code stays valid:
/// - at the end of the logical line holding the diagnostic's start (after the closing quotes of
///   a multi-line string, on the last row of a statement continued by brackets or a backslash),
///   merged into a `# cellguard: ignore[...]` already there;
/// - in a cell with syntax errors (logical lines unknown): at the end of the diagnostic's own
///   row when that row does not end inside a string or with a backslash, else on its own line
///   just above (with the row's indentation) when that is outside any string and not after a
///   backslash continuation; else nowhere (`None`).
///
/// `None` too when the code is already listed there, when the diagnostic is outside every cell,
/// and for the security rules a comment in the cell cannot suppress (`SBX*`, `IMP001`, `IMP002`,
/// `CG005`, unless `[lint] allow-inline-suppressions` lists them): offering the comment would
/// only add a `CG005` error.
/// Returns file coordinates.
pub fn ignore_edit(result: &LintResult, d: &Diagnostic) -> Option<Edit> {
    if !result.settings.inline_suppressible(d.rule) {
        return None;
    }
    let code = d.rule.code;
    let offset = d.range.start;
    let (cell, co) = result
        .cells
        .iter()
        .filter(|c| d.cell.is_none_or(|i| i == c.index))
        .find_map(|c| file_to_cell(&c.map, offset).map(|o| (c, o)))?;
    let src = result.cell_text(cell);
    let root = cell.tree.root_node();
    let co = co.min(src.len());
    if !root.has_error() {
        let index = LineIndex::new(src);
        let logical = suppress::LogicalLines::new(&cell.tree, src, &index);
        let row = logical.last_row(index.line_of(co));
        let row_start = index.line_start(row)?;
        let row_end = index.line_end(row, src);
        let edit = trailing_ignore_edit(root, src, row_start, row_end, code)?;
        return cell.map.edit_to_file(&edit);
    }
    let (line_start, line_end) = line_bounds(src, co);
    let line = &src[line_start..line_end];
    if !line.trim_end().ends_with('\\') && !inside_string(root, line_end) {
        let edit = trailing_ignore_edit(root, src, line_start, line_end, code)?;
        return cell.map.edit_to_file(&edit);
    }
    // Own line above.
    let prev_continued = line_start > 0 && {
        let (ps, pe) = line_bounds(src, line_start - 1);
        src[ps..pe].trim_end().ends_with('\\')
    };
    if prev_continued || inside_string(root, line_start) {
        return None;
    }
    let rope = &result.rope;
    let file_line = rope.byte_to_line(offset.min(rope.len_bytes()));
    // Never before a byte order mark.
    let file_line_start = rope.line_to_byte(file_line).max(bom_len(&result.text));
    let line_text: Cow<str> = rope.line(file_line).into();
    let indent: String = line_text
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let eol = if line_text.ends_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    Some(Edit::insert(
        file_line_start,
        format!("{indent}{}{eol}", ignore_comment(code)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellguard_lints::config::Overrides;

    fn lint_text(path: &str, language: Language, text: &str) -> LintResult {
        run(Snapshot {
            epoch: 0,
            version: 1,
            generation: 0,
            rope: Rope::from_str(text),
            path: PathBuf::from(path),
            language,
            tree: None,
            cells: Arc::new(Vec::new()),
            rules: None,
            resolver: Arc::new(Resolver::new(Overrides::default())),
            encoding: PositionEncoding::Utf16,
            lint_enabled: true,
        })
    }

    fn apply(text: &str, e: &Edit) -> String {
        let mut s = text.to_string();
        s.replace_range(e.range.as_range(), &e.content);
        s
    }

    /// The text after the ignore edit of the first `code` finding; also checks that the
    /// engine then suppresses that finding.
    fn ignore_code(text: &str, path: &str, language: Language, code: &str) -> Option<String> {
        let r = lint_text(path, language, text);
        let d = r.diagnostics.iter().find(|d| d.rule.code == code)?;
        let fixed = ignore_edit(&r, d).map(|e| apply(text, &e))?;
        let after = lint_text(path, language, &fixed);
        let still = after
            .diagnostics
            .iter()
            .filter(|x| x.rule.code == code)
            .count();
        let before = r.diagnostics.iter().filter(|x| x.rule.code == code).count();
        assert!(still < before, "{code} not suppressed by:\n{fixed}");
        let syntax = |r: &LintResult| {
            r.diagnostics
                .iter()
                .filter(|x| x.rule.code == "SYN001")
                .count()
        };
        assert!(
            syntax(&after) <= syntax(&r),
            "the comment broke the code:\n{fixed}"
        );
        Some(fixed)
    }

    fn ignore_for(text: &str, path: &str, language: Language) -> Option<String> {
        ignore_code(text, path, language, "IMP003")
    }

    /// G25: no "ignore for this line" edit for the security rules a comment cannot silence.
    #[test]
    fn no_ignore_comment_for_security_rules() {
        let text = "import os\nx = json.codecs\n";
        let r = lint_text("/nonexistent/a.py", Language::Python, text);
        let codes: Vec<_> = r.diagnostics.iter().map(|d| d.rule.code).collect();
        assert_eq!(codes, vec!["IMP001", "SBX005"]);
        for d in &r.diagnostics {
            assert_eq!(ignore_edit(&r, d), None, "{}", d.rule.code);
        }
    }

    /// G10: a lone `\r` ends a line for CPython and for the LSP (ropey `cr_lines`): the code
    /// after `# comment\r` is checked and its position is on the next line.
    #[test]
    fn lone_cr_line_ends_are_lines_for_rules_and_positions() {
        let text = "x = 1  # note\ry = json.codecs\r\nz = 2\n";
        let r = lint_text("/nonexistent/a.py", Language::Python, text);
        let i = r
            .diagnostics
            .iter()
            .position(|d| d.rule.code == "SBX005")
            .expect("SBX005 after the lone CR");
        assert_eq!(r.lsp[i].range.start, lsp::Position::new(1, 9));
        assert_eq!(
            convert::offset_of(&r.rope, r.lsp[i].range.start, PositionEncoding::Utf16),
            r.diagnostics[i].range.start
        );
    }

    #[test]
    fn ignore_comment_goes_at_the_end_of_a_plain_line() {
        assert_eq!(
            ignore_for("import json\n", "/nonexistent/a.py", Language::Python).as_deref(),
            Some("import json  # cellguard: ignore[IMP003]\n")
        );
    }

    #[test]
    fn ignore_comment_joins_an_existing_list_and_is_not_repeated() {
        let text = "import json  # cellguard: ignore[SHP002]\n";
        let fixed = ignore_for(text, "/nonexistent/a.py", Language::Python).unwrap();
        assert_eq!(fixed, "import json  # cellguard: ignore[SHP002, IMP003]\n");
        assert_eq!(
            ignore_for(&fixed, "/nonexistent/a.py", Language::Python),
            None
        );
    }

    #[test]
    fn ignore_comment_goes_after_continuations_and_multiline_strings() {
        assert_eq!(
            ignore_for(
                "import json, \\\n    re\n",
                "/nonexistent/a.py",
                Language::Python
            )
            .as_deref(),
            Some("import json, \\\n    re  # cellguard: ignore[IMP003]\n")
        );
        // A diagnostic on the first row of a statement spanning rows by brackets and a
        // multi-line string: the comment goes after the closing quotes and bracket.
        let fixed = ignore_for(
            "x = (1,\n  2) if y else \"\"\"a\n\"\"\"; import json\n",
            "/nonexistent/a.py",
            Language::Python,
        );
        assert_eq!(
            fixed.as_deref(),
            Some(
                "x = (1,\n  2) if y else \"\"\"a\n\"\"\"; import json  # cellguard: ignore[IMP003]\n"
            )
        );
    }

    #[test]
    fn ignore_comment_goes_after_an_existing_pragma() {
        assert_eq!(
            ignore_for(
                "import json  # type: ignore\n",
                "/nonexistent/a.py",
                Language::Python
            )
            .as_deref(),
            Some("import json  # type: ignore  # cellguard: ignore[IMP003]\n")
        );
    }

    #[test]
    fn ignore_comment_in_a_cell_with_a_syntax_error() {
        // The cell does not parse: the physical row gets the comment when that is safe.
        let text = "import json\nx = (\n";
        assert_eq!(
            ignore_code(text, "/nonexistent/a.py", Language::Python, "IMP003").as_deref(),
            Some("import json  # cellguard: ignore[IMP003]\nx = (\n")
        );
    }

    #[test]
    fn ignore_comment_in_an_indented_markdown_fence_keeps_the_indent() {
        let md = "- item\n\n  ```python\n  import json\n  ```\n";
        let fixed = ignore_for(md, "/nonexistent/a.md", Language::Markdown).unwrap();
        assert_eq!(
            fixed,
            "- item\n\n  ```python\n  import json  # cellguard: ignore[IMP003]\n  ```\n"
        );
    }

    #[test]
    fn markdown_cells_reuse_and_reparse_trees() {
        let md1 = "```python\nimport os\n```\n\n```py\nx = 1\n```\n";
        let r1 = lint_text("/nonexistent/a.md", Language::Markdown, md1);
        assert_eq!(r1.cells.len(), 2);
        assert_eq!(r1.diagnostics.len(), 1);
        let md2 = "```python\nimport json, os\n```\n\n```py\nx = 1\n```\n";
        let r2 = run(Snapshot {
            epoch: 0,
            version: 2,
            generation: 0,
            rope: Rope::from_str(md2),
            path: PathBuf::from("/nonexistent/a.md"),
            language: Language::Markdown,
            tree: None,
            cells: r1.cell_cache.clone(),
            rules: r1.rule_cache.clone(),
            resolver: Arc::new(Resolver::new(Overrides::default())),
            encoding: PositionEncoding::Utf16,
            lint_enabled: true,
        });
        let fresh = parse::parse("import json, os\n", None);
        assert_eq!(
            r2.cells[0].tree.root_node().to_sexp(),
            fresh.root_node().to_sexp()
        );
        let os = md2.find("os").unwrap();
        let i = r2
            .diagnostics
            .iter()
            .position(|d| d.rule.code == "IMP001")
            .unwrap();
        assert_eq!(r2.diagnostics[i].range, TextRange::new(os, os + 2));
        assert_eq!(r2.lsp[i].range.start, lsp::Position::new(1, 13));
    }

    #[test]
    fn diff_edit_is_on_char_boundaries() {
        let e = diff_edit("a = 'é'\n", "a = 'ê'\n");
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (5, 7, 7));
        let e = diff_edit("abc", "abXc");
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (2, 2, 3));
        let e = diff_edit("x\ny", "x\ny\nz");
        assert_eq!(e.new_end_position, Point::new(2, 1));
    }
}

/// Incremental lints (trees and per-cell rule results kept between edits) against fresh ones.
#[cfg(test)]
mod incremental_properties {
    use super::*;
    use cellguard_lints::config::Overrides;
    use proptest::prelude::*;

    /// Cell bodies that give findings of several families, file-level and line suppressions,
    /// and text that edits can turn into fences, comments and strings.
    const CELLS: &[&str] = &[
        "import os\nx = 1\n",
        "# cellguard: ignore-file[IMP001]\ny = 2\n",
        "status = await run(\"AgentPoolCapability.get_agent_status\", agent_ids=[\"a\"])\n",
        "import subprocess  # noqa: IMP001\nprint(eval(\"1\"))\n",
        "def f(:\n    pass\n",
        "data = json.loads(\"{}\")  # noqa\n",
        "obj = ().__class__.__base__\n",
        "for i in range(3):\n    await run(\"X.y\")\n",
    ];

    /// A Markdown document of fenced cells separated by prose.
    fn document(cells: &[usize]) -> String {
        let mut out = String::from("Intro\n\n");
        for &c in cells {
            out.push_str("```python\n");
            out.push_str(CELLS[c % CELLS.len()]);
            out.push_str("```\n\ntext\n\n");
        }
        out
    }

    /// One edit: delete `len` characters at `at` (a fraction of the text) and insert `text`.
    fn edit() -> impl Strategy<Value = (f64, usize, String)> {
        (
            0.0..1.0f64,
            0usize..4,
            prop::sample::select(vec![
                "",
                "x",
                "\n",
                "#",
                "\"",
                "`",
                "```",
                "import os\n",
                " noqa",
                "(",
                ":",
                "    ",
                "__class__",
                "ignore-file[SBX002]",
            ])
            .prop_map(str::to_string),
        )
    }

    fn apply(text: &str, (at, len, insert): &(f64, usize, String)) -> String {
        let chars: Vec<char> = text.chars().collect();
        let start = ((chars.len() as f64) * at) as usize;
        let end = (start + len).min(chars.len());
        let mut out: String = chars[..start].iter().collect();
        out.push_str(insert);
        out.extend(&chars[end..]);
        out
    }

    fn snapshot(text: &str, version: i32, previous: Option<&LintResult>) -> Snapshot {
        Snapshot {
            epoch: 0,
            version,
            generation: 0,
            rope: Rope::from_str(text),
            path: PathBuf::from("/nonexistent/doc.md"),
            language: Language::Markdown,
            tree: None,
            cells: previous.map_or_else(|| Arc::new(Vec::new()), |r| r.cell_cache.clone()),
            rules: previous.and_then(|r| r.rule_cache.clone()),
            resolver: resolver(),
            encoding: PositionEncoding::Utf16,
            lint_enabled: true,
        }
    }

    /// One resolver for the whole test, so every lint resolves to the same project (as in the
    /// server between reloads) and the rule cache is used.
    fn resolver() -> Arc<Resolver> {
        static R: OnceLock<Arc<Resolver>> = OnceLock::new();
        R.get_or_init(|| Arc::new(Resolver::new(Overrides::default())))
            .clone()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// After every edit of a random sequence, the incremental lint's diagnostics are those
        /// of a fresh lint of the same text by the server and by the CLI's engine.
        #[test]
        fn incremental_lints_equal_fresh_ones(
            cells in prop::collection::vec(0usize..CELLS.len(), 1..5),
            edits in prop::collection::vec(edit(), 1..12),
        ) {
            let mut text = document(&cells);
            let mut previous = run(snapshot(&text, 1, None));
            for (i, e) in edits.iter().enumerate() {
                text = apply(&text, e);
                let incremental = run(snapshot(&text, i as i32 + 2, Some(&previous)));
                let fresh = run(snapshot(&text, i as i32 + 2, None));
                prop_assert_eq!(&incremental.diagnostics, &fresh.diagnostics, "text {:?}", text);
                prop_assert_eq!(&incremental.lsp, &fresh.lsp);
                let cli = lint::check_file(
                    &SourceFile::new("/nonexistent/doc.md", text.clone()),
                    &fresh.settings,
                    &fresh.project.kb,
                );
                prop_assert_eq!(&incremental.diagnostics, &cli);
                previous = incremental;
            }
        }
    }

    /// Top-level statements for single large Python cells: findings of every family, value
    /// flow across statements (SBX folding a name bound earlier, a v1 loader imported and then
    /// taken as a value), row-sharing statements, and line and file suppressions.
    const STATEMENTS: &[&str] = &[
        "import os\n",
        "import subprocess  # noqa: IMP001\n",
        "name = \"o\" + \"s\"\n",
        "mod = __import__(name)\n",
        "field = params[\"field\"]\nvalue = getattr(results, field)\n",
        "obj = ().__class__.__base__\n",
        "status = await run(\"AgentPoolCapability.get_agent_status\", agent_ids=[\"a\"])\n",
        "for i in range(3):\n    await run(\"X.y\")\n",
        "run(\"A.b.c\")\n",
        "try:\n    x = 1\nexcept Exception:\n    pass\n",
        "def f(:\n    pass\n",
        "data = json.loads(\"{}\")  # noqa\n",
        "# cellguard: ignore-file[IMP001]\n",
        "from pydantic.v1 import parse_raw\n",
        "loader = parse_raw\n",
        "m = Model.parse_raw(t, allow_pickle=True)\n",
        "class C:\n    def __eq__(self, o):\n        return True\n",
        "x = 1; import sys\n",
        "    y = 2\n",
        "s = 'abc'  # a comment\n",
        "eval(code)  # cellguard: ignore[SBX003]\n",
        "if ok:\n    import json\nelse:\n    log(\"busy \" + str(e))  # retry\n",
        "\n",
        "parse_raw = 1\n",
    ];

    /// Word changes that keep a cell parsing while changing what other statements see: a
    /// binding renamed or turned into another kind, a folded string, an action key, a loop, a
    /// suppression code.
    const SWAPS: &[(&str, &str)] = &[
        ("parse_raw", "parse_rax"),
        ("parse_rax", "parse_raw"),
        ("import parse_raw", "import json as parse_raw"),
        ("\"s\"", "\"t\""),
        ("\"t\"", "\"s\""),
        ("name", "nam"),
        ("nam ", "name "),
        ("getattr", "getatr"),
        ("field", "fiel"),
        ("run(", "rum("),
        ("await ", ""),
        ("for i in range(3):", "if i:"),
        ("noqa", "noqb"),
        ("IMP001", "SBX002"),
        ("__class__", "__klass__"),
        ("Exception", "ValueError"),
        ("import os", "import json"),
        ("ignore-file", "ignore"),
        ("x = 1", "x = eval"),
        ("\"a\"", "\"b\""),
    ];

    /// One edit of a Python cell: either delete `len` characters at `at` (a fraction of the
    /// text) and insert `text`, or (`swap`) replace the occurrence of a [`SWAPS`] word at `at`
    /// (a fraction of its occurrences).
    fn cell_edit() -> impl Strategy<Value = (f64, usize, String, Option<usize>)> {
        (
            0.0..1.0f64,
            0usize..4,
            prop::sample::select(vec![
                "",
                "x",
                "\n",
                "#",
                "\"",
                "'",
                "import os\n",
                " noqa",
                "(",
                ")",
                ":",
                "    ",
                "__class__",
                ";",
                "parse_raw",
                "\r\n",
                "\r",
                "import ",
                "\\",
                "run(\"A.b\")",
                "# cellguard: ignore-file[SBX002]\n",
            ])
            .prop_map(str::to_string),
            prop::option::weighted(0.5, 0..SWAPS.len()),
        )
    }

    fn apply_cell(
        text: &str,
        (at, len, insert, swap): &(f64, usize, String, Option<usize>),
    ) -> String {
        let Some(k) = swap else {
            return apply(text, &(*at, *len, insert.clone()));
        };
        let (from, to) = SWAPS[*k];
        let hits: Vec<usize> = text.match_indices(from).map(|(i, _)| i).collect();
        if hits.is_empty() {
            return text.to_string();
        }
        let i = hits[((hits.len() as f64) * at) as usize % hits.len()];
        format!("{}{}{}", &text[..i], to, &text[i + from.len()..])
    }

    /// A snapshot of a Python document after `previous`, with its whole-file tree edited the
    /// way the server edits it.
    fn python_snapshot(
        text: &str,
        version: i32,
        previous: Option<(&str, &LintResult)>,
    ) -> Snapshot {
        python_snapshot_in(false, text, version, previous)
    }

    /// [`python_snapshot`], linted with `profile = "colony"` when `colony` is set.
    fn python_snapshot_in(
        colony: bool,
        text: &str,
        version: i32,
        previous: Option<(&str, &LintResult)>,
    ) -> Snapshot {
        let tree = previous.and_then(|(old, r)| {
            let mut t = r.whole_tree.clone()?;
            t.edit(&diff_edit(old, text));
            Some(t)
        });
        Snapshot {
            rope: Rope::from_str(text),
            path: PathBuf::from("/nonexistent/cell.py"),
            language: Language::Python,
            tree,
            resolver: if colony {
                colony_resolver()
            } else {
                resolver()
            },
            ..snapshot(text, version, previous.map(|(_, r)| r))
        }
    }

    /// One resolver with `profile = "colony"`, shared like [`resolver`].
    fn colony_resolver() -> Arc<Resolver> {
        static R: OnceLock<Arc<Resolver>> = OnceLock::new();
        R.get_or_init(|| {
            Arc::new(Resolver::new(Overrides {
                profile: Some(cellguard_lints::config::Profile::Colony),
                ..Overrides::default()
            }))
        })
        .clone()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// One large cell of many top-level statements: after every edit, the lint re-using the
        /// previous tree, cell and per-statement results equals a fresh lint (engine and LSP
        /// diagnostics) and the CLI's.
        #[test]
        fn incremental_statement_results_equal_fresh_ones(
            statements in prop::collection::vec(0usize..STATEMENTS.len(), 8..40),
            edits in prop::collection::vec(cell_edit(), 1..16),
            colony in any::<bool>(),
        ) {
            let python_snapshot = |text: &str, version: i32, previous: Option<(&str, &LintResult)>| {
                python_snapshot_in(colony, text, version, previous)
            };
            let mut text: String = statements.iter().map(|&i| STATEMENTS[i]).collect();
            let mut previous = run(python_snapshot(&text, 1, None));
            for (i, e) in edits.iter().enumerate() {
                let old = text.clone();
                text = apply_cell(&text, e);
                let incremental = run(python_snapshot(&text, i as i32 + 2, Some((&old, &previous))));
                let fresh = run(python_snapshot(&text, i as i32 + 2, None));
                prop_assert_eq!(&incremental.diagnostics, &fresh.diagnostics, "text {:?}", text);
                prop_assert_eq!(&incremental.lsp, &fresh.lsp);
                let cli = lint::check_file(
                    &SourceFile::new("/nonexistent/cell.py", text.clone()),
                    &fresh.settings,
                    &fresh.project.kb,
                );
                prop_assert_eq!(&incremental.diagnostics, &cli);
                previous = incremental;
            }
        }
    }

    /// An edit inside one statement of a large cell re-runs the per-unit families on that
    /// statement only; the findings of the statements after it move with the text.
    #[test]
    fn an_edit_in_one_statement_reuses_the_other_statements_results() {
        let v1: String = (0..50)
            .map(|i| format!("import mod{i}\nx{i} = \"a\"\n"))
            .collect();
        let r1 = run(python_snapshot(&v1, 1, None));
        let v2 = v1.replacen("x7 = \"a\"", "x7 = \"ab\"", 1);
        let r2 = run(python_snapshot(&v2, 2, Some((&v1, &r1))));
        let cache = r2.rule_cache.as_ref().expect("a rule cache");
        // 100 units, two per-unit families (IMP and SBX007): all but the edited unit re-used.
        assert_eq!(cache.results.reused_units(), 2 * 99);
        let fresh = run(python_snapshot(&v2, 2, None));
        assert_eq!(r2.diagnostics, fresh.diagnostics);
        let imp: Vec<usize> = r2
            .diagnostics
            .iter()
            .filter(|d| d.rule.code == "IMP001")
            .map(|d| d.range.start)
            .collect();
        assert_eq!(imp.len(), 50);
        let after = v2.find("import mod8\n").unwrap() + "import ".len();
        assert!(imp.contains(&after), "{imp:?}");
    }

    /// An edit in one cell of a Markdown file re-uses the other cells' rule results and still
    /// reports what changed in the edited one.
    #[test]
    fn unchanged_cells_keep_their_results() {
        let v1 = document(&[0, 3, 5]);
        let r1 = run(snapshot(&v1, 1, None));
        let cache = r1.rule_cache.as_ref().expect("a rule cache");
        assert_eq!(cache.results.len(), 3);
        let v2 = v1.replacen("x = 1", "import sys", 1);
        let r2 = run(snapshot(&v2, 2, Some(&r1)));
        assert_eq!(r2.rule_cache.as_ref().map(|c| c.results.reused()), Some(2));
        let codes = |r: &LintResult| -> Vec<(&str, usize)> {
            r.diagnostics
                .iter()
                .map(|d| (d.rule.code, d.cell.unwrap_or(99)))
                .collect()
        };
        let fresh = run(snapshot(&v2, 2, None));
        assert_eq!(codes(&r2), codes(&fresh));
        assert!(codes(&r2).contains(&("IMP001", 0)), "{:?}", codes(&r2));
        assert_eq!(
            codes(&r2)
                .iter()
                .filter(|(c, i)| *c == "IMP001" && *i == 0)
                .count(),
            2
        );
    }
}
