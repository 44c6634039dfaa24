//! Suppression comments, applied by the engine after the rules ran, and the `CG` meta findings
//! about the comments themselves (unused, unknown, duplicated codes; malformed comments).
//!
//! Forms (the keywords are case-insensitive, spaces after `#` and around `:` are allowed):
//!
//! - `# cellguard: ignore[CODE, ...]` at the end of a line: covers that physical line; when the
//!   line ends a logical line (a statement or compound-statement header continued over several
//!   rows by brackets, backslashes or a multi-line string) it covers the whole logical line, and
//!   it always covers a multi-line string that closes on that line.
//! - `# cellguard: ignore[CODE, ...]` on its own line: covers the whole statement that starts on
//!   the next line (the body included for `if`/`for`/`def`...). Other comment lines may sit in
//!   between (stacked suppressions); a blank line detaches it. Inside brackets, where no statement
//!   starts, it covers the next physical line.
//! - `# cellguard: ignore-file[CODE, ...]` on its own line: covers the whole file (every cell of a
//!   Markdown document or response, and the extraction findings).
//! - `# noqa: CODE, ...` (flake8/ruff compatible; codes separated by commas and/or spaces; text
//!   after the last code is a reason) and the blanket `# noqa`: line forms like a trailing
//!   `ignore`. The blanket form exists only for `noqa`; `# cellguard: ignore` without codes is a
//!   `CG004` finding and suppresses nothing.
//!
//! Codes are exact rule codes (`API001`), never prefixes (`API` or `API00` match nothing and are
//! reported as unknown), as in ruff. The `cellguard:` forms also accept kebab-case rule names
//! (`ignore[unknown-action]`). In `# noqa` lists, codes whose letters are no cellguard family
//! (`E501`, `F401`) belong to other linters and are left alone, as ruff's `lint.external` does.
//!
//! Comments are found as tree-sitter `comment` nodes, so `"# noqa"` inside a string is not a
//! suppression. Several directives may share one comment (`# type: ignore  # noqa: API001`).
//!
//! Unused codes (nothing of that rule was suppressed there, or the rule is not enabled), an
//! unused blanket `# noqa`, unknown codes and duplicated codes are reported as `CG001`-`CG003`
//! with a safe fix that removes them, and the whole comment when nothing else is left in it
//! (the whole row when the comment stood alone). A suppression covers `CG` findings about
//! itself when it lists their code; `ignore-file[CG001]` turns them off for the file.
//!
//! Semantics follow ruff's `noqa`/`ruff: ignore` and RUF100/RUF102 (lsp-linter-anchors §1.2).

use crate::config::Settings;
use crate::diagnostic::{Diagnostic, Edit, Fix, Rule};
use crate::extract::Cell;
use crate::nodes::NodeTable;
use crate::rules::{self, meta};
use crate::source::{LineIndex, TextRange};
use std::collections::BTreeSet;
use tree_sitter::{Node, Tree};

/// The syntax of a suppression directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectiveKind {
    /// `# noqa` or `# noqa: CODES`.
    Noqa,
    /// `# cellguard: ignore[CODES]`.
    Ignore,
    /// `# cellguard: ignore-file[CODES]`.
    IgnoreFile,
}

/// One code written in a suppression directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectiveCode {
    /// The text as written.
    pub text: String,
    /// Its range (cell coordinates).
    pub range: TextRange,
    /// The rule it names, when it names one.
    pub rule: Option<&'static Rule>,
    /// True for a `# noqa` code of another linter (not a cellguard family): never reported.
    pub foreign: bool,
}

/// How a directive is malformed (reported as `CG004`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// What is wrong, as shown to the user.
    pub message: String,
}

/// One suppression directive found in a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// Its syntax.
    pub kind: DirectiveKind,
    /// From its `#` to the end of its code list (or closing bracket), cell coordinates.
    pub range: TextRange,
    /// The whole comment it is part of.
    pub comment: TextRange,
    /// The codes, in order (empty for a blanket `# noqa`).
    pub codes: Vec<DirectiveCode>,
    /// From the first code's start to the last code's end; `None` without codes.
    pub codes_range: Option<TextRange>,
    /// True when the comment is alone on its row.
    pub own_line: bool,
    /// Set when the directive is malformed; it then suppresses nothing.
    pub malformed: Option<Malformed>,
}

impl Directive {
    /// True for a blanket `# noqa` (no code list).
    pub fn is_blanket(&self) -> bool {
        self.kind == DirectiveKind::Noqa && self.codes.is_empty() && self.malformed.is_none()
    }
}

/// The rows (zero-based, inclusive) a line directive covers, or the whole file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// Rows `start..=end` of the cell.
    Rows(usize, usize),
    /// Nothing (an own-line `ignore` with no statement after it).
    Nothing,
    /// Every diagnostic of the file.
    File,
}

/// Parses the suppression directives of one comment's text. `offset` is the comment's start in
/// the cell text (ranges are returned in cell coordinates).
pub fn parse_comment(text: &str, offset: usize, own_line: bool) -> Vec<Directive> {
    let comment = TextRange::new(offset, offset + text.len());
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(rel) = text[pos..].find('#') {
        let at = pos + rel;
        match parse_directive(text, at) {
            Some((mut d, end)) => {
                d.range = TextRange::new(offset + at, offset + end);
                d.comment = comment;
                d.own_line = own_line;
                for c in &mut d.codes {
                    c.range = c.range.shifted(offset);
                }
                d.codes_range = d.codes_range.map(|r| r.shifted(offset));
                out.push(d);
                pos = end.max(at + 1);
            }
            None => pos = at + 1,
        }
    }
    out
}

fn skip_ws(text: &str, mut i: usize) -> usize {
    let b = text.as_bytes();
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

fn starts_with_ci(text: &str, at: usize, word: &str) -> bool {
    text.get(at..at + word.len())
        .is_some_and(|s| s.eq_ignore_ascii_case(word))
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The families of cellguard's rules (`SYN`, `API`, ..., `CG`).
fn families() -> BTreeSet<&'static str> {
    rules::all_rules().map(|r| r.family()).collect()
}

fn classify(token: &str, noqa: bool) -> (Option<&'static Rule>, bool) {
    let rule = rules::find_rule(token);
    if rule.is_some() || !noqa {
        return (rule, false);
    }
    let letters: String = token
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_uppercase();
    (None, !families().contains(letters.as_str()))
}

/// Parses one directive starting at the `#` at `at`; returns it (relative ranges) and the end
/// of its text.
fn parse_directive(text: &str, at: usize) -> Option<(Directive, usize)> {
    let b = text.as_bytes();
    let i = skip_ws(text, at + 1);
    let blank = |kind, end, malformed: Option<String>| Directive {
        kind,
        range: TextRange::new(at, end),
        comment: TextRange::default(),
        codes: Vec::new(),
        codes_range: None,
        own_line: false,
        malformed: malformed.map(|message| Malformed { message }),
    };
    if starts_with_ci(text, i, "noqa") {
        let after = i + 4;
        if after < b.len() && is_word_byte(b[after]) {
            return None;
        }
        let j = skip_ws(text, after);
        if j < b.len() && b[j] == b':' {
            let (codes, end) = parse_noqa_codes(text, j + 1);
            if codes.is_empty() {
                // What stands after the colon, when it is a word (`# noqa: SBX`, `# noqa: all`).
                let k = skip_ws(text, j + 1);
                let word: String = text[k..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let message = if word.is_empty() {
                    "`# noqa:` is followed by no rule code; write `# noqa: CODE` (or a bare `# noqa` for every rule)".to_string()
                } else if families().contains(word.to_ascii_uppercase().as_str()) {
                    let family = word.to_ascii_uppercase();
                    let example = rules::all_rules()
                        .find(|r| r.family() == family)
                        .map_or_else(|| format!("{family}001"), |r| r.code.to_string());
                    format!(
                        "`# noqa: {word}` names a rule family; suppressions take exact codes (`# noqa: {example}`)"
                    )
                } else {
                    format!(
                        "`# noqa: {word}` is not a rule code; write `# noqa: CODE` (or a bare `# noqa` for every rule)"
                    )
                };
                let d = blank(DirectiveKind::Noqa, j + 1, Some(message));
                return Some((d, j + 1));
            }
            let mut d = blank(DirectiveKind::Noqa, end, None);
            d.codes_range = Some(TextRange::new(codes[0].range.start, end));
            d.codes = codes;
            return Some((d, end));
        }
        return Some((blank(DirectiveKind::Noqa, after, None), after));
    }
    if !starts_with_ci(text, i, "cellguard") {
        return None;
    }
    let j = skip_ws(text, i + "cellguard".len());
    if j >= b.len() || b[j] != b':' {
        return None;
    }
    let k = skip_ws(text, j + 1);
    let word_end = k + text[k..].bytes().take_while(|&c| is_word_byte(c)).count();
    let word = text[k..word_end].to_ascii_lowercase();
    let kind = match word.as_str() {
        "ignore" => DirectiveKind::Ignore,
        "ignore-file" => DirectiveKind::IgnoreFile,
        _ => {
            let shown = if word.is_empty() { "(nothing)" } else { &word };
            let d = blank(
                DirectiveKind::Ignore,
                word_end.max(k),
                Some(format!(
                    "unknown cellguard directive `{shown}`: expected `ignore[CODE, ...]` or `ignore-file[CODE, ...]`"
                )),
            );
            return Some((d, word_end.max(k)));
        }
    };
    let l = skip_ws(text, word_end);
    if l >= b.len() || b[l] != b'[' {
        let d = blank(
            kind,
            word_end,
            Some(format!(
                "`# cellguard: {word}` needs a list of rule codes, e.g. `# cellguard: {word}[API001]`; only `# noqa` has a blanket form"
            )),
        );
        return Some((d, word_end));
    }
    let Some(close_rel) = text[l..].find(']') else {
        let d = blank(
            kind,
            text.len(),
            Some(format!("`# cellguard: {word}[` is never closed with `]`")),
        );
        return Some((d, text.len()));
    };
    let close = l + close_rel;
    let mut codes = Vec::new();
    let mut p = l + 1;
    while p < close {
        let c = b[p];
        if c == b',' || c == b' ' || c == b'\t' {
            p += 1;
            continue;
        }
        let len = text[p..close].find([',', ' ', '\t']).unwrap_or(close - p);
        let token = &text[p..p + len];
        let (rule, _) = classify(token, false);
        codes.push(DirectiveCode {
            text: token.to_string(),
            range: TextRange::new(p, p + len),
            rule,
            foreign: false,
        });
        p += len;
    }
    if codes.is_empty() {
        let d = blank(
            kind,
            close + 1,
            Some(format!(
                "`# cellguard: {word}[]` lists no rule code; only `# noqa` has a blanket form"
            )),
        );
        return Some((d, close + 1));
    }
    let mut d = blank(kind, close + 1, None);
    d.codes_range = Some(TextRange::new(
        codes[0].range.start,
        codes.last().map(|c| c.range.end).unwrap_or(close),
    ));
    d.codes = codes;
    Some((d, close + 1))
}

/// Codes after `# noqa:`: `[A-Za-z]+[0-9]+` tokens separated by commas and/or whitespace; the
/// list ends at the first token that is not a code (the rest is a reason).
fn parse_noqa_codes(text: &str, from: usize) -> (Vec<DirectiveCode>, usize) {
    let b = text.as_bytes();
    let mut codes = Vec::new();
    let mut end = from;
    let mut p = from;
    loop {
        while p < b.len() && (b[p] == b',' || b[p] == b' ' || b[p] == b'\t') {
            p += 1;
        }
        let letters = text[p..]
            .bytes()
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
        let digits = text[p + letters..]
            .bytes()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let q = p + letters + digits;
        if letters == 0 || digits == 0 || (q < b.len() && is_word_byte(b[q])) {
            break;
        }
        let token = &text[p..q];
        let (rule, foreign) = classify(token, true);
        codes.push(DirectiveCode {
            text: token.to_string(),
            range: TextRange::new(p, q),
            rule,
            foreign,
        });
        end = q;
        p = q;
    }
    (codes, end)
}

/// Rows joined into logical lines: by brackets spanning rows, by backslash continuations and by
/// strings spanning rows (Python's tokenizer rules, computed on the tree-sitter tree).
#[derive(Debug, Clone)]
pub struct LogicalLines {
    /// `first[r]`: the first row of the logical line containing row `r`.
    first: Vec<usize>,
    /// `last[r]`: the last row of the logical line containing row `r`.
    last: Vec<usize>,
}

impl LogicalLines {
    /// Computes the logical lines of `src` from its tree.
    pub fn new(tree: &Tree, _src: &str, index: &LineIndex) -> Self {
        Self::from_table(&NodeTable::new(tree), index)
    }

    /// Computes the logical lines from the node table of the cell's tree.
    pub fn from_table(table: &NodeTable, index: &LineIndex) -> Self {
        let rows = index.line_count();
        let mut joined = vec![false; rows];
        let mut join = |a: usize, b: usize| {
            for j in joined.iter_mut().take(b.min(rows)).skip(a) {
                *j = true;
            }
        };
        let mut stack: Vec<(&str, usize)> = Vec::new();
        for (id, node) in table.iter() {
            match table.kind(id) {
                "line_continuation" => {
                    let r = node.start_position().row;
                    join(r, r + 1);
                }
                "string" => {
                    let (a, b) = (node.start_position().row, node.end_position().row);
                    if b > a {
                        join(a, b);
                    }
                }
                _ => {}
            }
            if table.child_count(id) > 1 {
                stack.clear();
                for child in table.children(id) {
                    if table.is_named(child) {
                        continue;
                    }
                    match table.kind(child) {
                        k @ ("(" | "[" | "{") => {
                            stack.push((k, table.node(child).start_position().row))
                        }
                        k @ (")" | "]" | "}") => {
                            let open = match k {
                                ")" => "(",
                                "]" => "[",
                                _ => "{",
                            };
                            if let Some(pos) = stack.iter().rposition(|(o, _)| *o == open) {
                                let (_, row) = stack[pos];
                                stack.truncate(pos);
                                let end = table.node(child).end_position().row;
                                if end > row {
                                    join(row, end);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        let mut first = vec![0; rows];
        let mut last = vec![0; rows];
        let mut start = 0;
        for r in 0..rows {
            first[r] = start;
            if !joined[r] || r + 1 == rows {
                for l in last.iter_mut().take(r + 1).skip(start) {
                    *l = r;
                }
                start = r + 1;
            }
        }
        LogicalLines { first, last }
    }

    /// First row of the logical line containing `row`.
    pub fn first_row(&self, row: usize) -> usize {
        self.first
            .get(row)
            .copied()
            .unwrap_or_else(|| self.first.last().copied().unwrap_or(0))
    }

    /// Last row of the logical line containing `row`.
    pub fn last_row(&self, row: usize) -> usize {
        self.last
            .get(row)
            .copied()
            .unwrap_or_else(|| self.last.last().copied().unwrap_or(0))
    }
}

/// True for tree-sitter-python statement kinds.
pub fn is_statement(kind: &str) -> bool {
    kind.ends_with("_statement")
        || matches!(
            kind,
            "function_definition" | "class_definition" | "decorated_definition"
        )
}

/// A parsed cell's suppression directives with what each one covers.
#[derive(Debug, Clone)]
pub struct CellSuppressions {
    /// Directives in source order, each with its coverage.
    pub directives: Vec<(Directive, Coverage)>,
    index: LineIndex,
}

impl CellSuppressions {
    /// Finds the directives of a cell (from its `comment` nodes) and computes their coverage.
    pub fn new(src: &str, tree: &Tree) -> Self {
        Self::from_table(src, &NodeTable::new(tree))
    }

    /// [`CellSuppressions::new`] from the node table of the cell's tree.
    pub fn from_table(src: &str, table: &NodeTable) -> Self {
        let index = LineIndex::new(src);
        // The directives of each comment, in source order; most cells have none, and then
        // nothing else needs computing.
        let mut found: Vec<(Node, usize, bool, Vec<Directive>)> = Vec::new();
        for id in table.of_kind("comment") {
            let c = table.node(id);
            // A comment token runs to the end of its row; a CRLF row's `\r` is no part of it.
            let text = crate::parse::text(c, src).trim_end_matches('\r');
            let row = c.start_position().row;
            let row_start = index.line_start(row).unwrap_or(0);
            let own_line = src
                .get(row_start..c.start_byte())
                .is_some_and(|s| s.trim().is_empty());
            let ds = parse_comment(text, c.start_byte(), own_line);
            if !ds.is_empty() {
                found.push((c, row, own_line, ds));
            }
        }
        if found.is_empty() {
            return CellSuppressions {
                directives: Vec::new(),
                index,
            };
        }
        let logical = LogicalLines::from_table(table, &index);
        let mut leaves: Vec<Node> = Vec::new();
        let mut statement_at: std::collections::BTreeMap<usize, Node> = Default::default();
        // Strings closing on a row, by end row: the first row of the longest one.
        let mut string_first: std::collections::BTreeMap<usize, usize> = Default::default();
        for (id, node) in table.iter() {
            let kind = table.kind(id);
            if kind != "comment"
                && table.child_count(id) == 0
                && node.end_byte() > node.start_byte()
            {
                leaves.push(node);
            }
            if is_statement(kind) {
                let e = statement_at.entry(node.start_byte()).or_insert(node);
                if node.end_byte() > e.end_byte() {
                    *e = node;
                }
            }
            if kind == "string" {
                let (a, b) = (node.start_position().row, node.end_position().row);
                if b > a {
                    let e = string_first.entry(b).or_insert(a);
                    *e = (*e).min(a);
                }
            }
        }
        let mut rows_not_comments: Option<Vec<usize>> = None;
        let mut directives = Vec::new();
        for (c, row, own_line, ds) in found {
            for d in ds {
                if d.malformed.is_some() {
                    directives.push((d, Coverage::Nothing));
                    continue;
                }
                let coverage = match d.kind {
                    DirectiveKind::IgnoreFile => {
                        if own_line {
                            Coverage::File
                        } else {
                            let mut d = d;
                            d.malformed = Some(Malformed {
                                message: "`# cellguard: ignore-file[...]` must be on its own line; at the end of a line it suppresses nothing".into(),
                            });
                            directives.push((d, Coverage::Nothing));
                            continue;
                        }
                    }
                    DirectiveKind::Ignore if own_line => {
                        let rows = rows_not_comments
                            .get_or_insert_with(|| non_comment_rows_before(src, &index));
                        own_line_coverage(rows, c, &leaves, &statement_at)
                    }
                    _ => {
                        let mut first = row;
                        if logical.last_row(row) == row {
                            first = logical.first_row(row);
                        }
                        if let Some(&s) = string_first.get(&row) {
                            first = first.min(s);
                        }
                        Coverage::Rows(first, row)
                    }
                };
                directives.push((d, coverage));
            }
        }
        CellSuppressions { directives, index }
    }

    /// For each row, the line directives (indices into `directives`) that cover it; built once
    /// per cell so matching diagnostics to directives stays linear.
    fn by_row(&self) -> Vec<Vec<usize>> {
        let mut rows: Vec<Vec<usize>> = vec![Vec::new(); self.index.line_count()];
        for (di, (d, cov)) in self.directives.iter().enumerate() {
            if d.malformed.is_some() || d.kind == DirectiveKind::IgnoreFile {
                continue;
            }
            if let Coverage::Rows(a, b) = *cov {
                for r in rows.iter_mut().take(b + 1).skip(a) {
                    r.push(di);
                }
            }
        }
        rows
    }
}

/// `out[r]`: how many of the rows before row `r` are not comment rows (blank or code), for
/// `r` up to the row count; a row range holds only comment rows when the counts at its ends
/// are equal.
fn non_comment_rows_before(src: &str, index: &LineIndex) -> Vec<usize> {
    let mut out = Vec::with_capacity(index.line_count() + 1);
    let mut n = 0;
    out.push(0);
    for r in 0..index.line_count() {
        let a = index.line_start(r).unwrap_or(src.len());
        let b = index.line_end(r, src);
        if !src
            .get(a..b)
            .is_some_and(|t| t.trim_start().starts_with('#'))
        {
            n += 1;
        }
        out.push(n);
    }
    out
}

fn own_line_coverage(
    non_comment_rows_before: &[usize],
    comment: Node,
    leaves: &[Node],
    statement_at: &std::collections::BTreeMap<usize, Node>,
) -> Coverage {
    let end = comment.end_byte();
    let i = leaves.partition_point(|l| l.start_byte() < end);
    let Some(next) = leaves.get(i) else {
        return Coverage::Nothing;
    };
    let row = comment.start_position().row;
    let next_row = next.start_position().row;
    // Only comment rows may stand between the suppression and the code it covers.
    let count = |r: usize| {
        non_comment_rows_before
            .get(r)
            .or(non_comment_rows_before.last())
            .copied()
            .unwrap_or(0)
    };
    if next_row > row + 1 && count(next_row) != count(row + 1) {
        return Coverage::Nothing;
    }
    match statement_at.get(&next.start_byte()) {
        Some(stmt) => Coverage::Rows(stmt.start_position().row, stmt.end_position().row),
        None => Coverage::Rows(next_row, next_row),
    }
}

/// Per-directive bookkeeping while applying suppressions.
struct Usage {
    /// For each code index: it suppressed something.
    used: Vec<bool>,
    /// A blanket noqa suppressed something.
    blanket_used: bool,
    /// Codes of protected findings a blanket noqa covered but may not suppress (sorted, unique).
    blanket_protected: BTreeSet<&'static str>,
}

/// Applies the suppressions of every cell of a file: removes suppressed diagnostics from
/// `per_cell` (cell coordinates) and `file_diagnostics` (file coordinates, suppressible by
/// `ignore-file` only), and adds the `CG` findings about the directives to `per_cell`.
///
/// `cells`, `trees` and `per_cell` are parallel slices.
pub fn apply(
    cells: &[Cell],
    trees: &[Tree],
    per_cell: &mut [Vec<Diagnostic>],
    file_diagnostics: &mut Vec<Diagnostic>,
    settings: &Settings,
) {
    let sups: Vec<CellSuppressions> = cells
        .iter()
        .zip(trees)
        .map(|(c, t)| CellSuppressions::from_table(&c.text, &NodeTable::new(t)))
        .collect();
    apply_with_suppressions(cells, &sups, per_cell, file_diagnostics, settings);
}

/// [`apply`] with the directives of each cell already found (parallel to `cells`), as
/// [`CellSuppressions::from_table`] finds them from the cell's text and node table. The language
/// server keeps them for cells whose text did not change.
pub fn apply_with_suppressions(
    cells: &[Cell],
    sups: &[CellSuppressions],
    per_cell: &mut [Vec<Diagnostic>],
    file_diagnostics: &mut Vec<Diagnostic>,
    settings: &Settings,
) {
    let mut usage: Vec<Vec<Usage>> = sups
        .iter()
        .map(|s| {
            s.directives
                .iter()
                .map(|(d, _)| Usage {
                    used: vec![false; d.codes.len()],
                    blanket_used: false,
                    blanket_protected: BTreeSet::new(),
                })
                .collect()
        })
        .collect();

    // File-level codes: (cell, directive, code index) per rule code.
    let mut file_level: Vec<(usize, usize, usize, &'static str)> = Vec::new();
    for (ci, s) in sups.iter().enumerate() {
        for (di, (d, cov)) in s.directives.iter().enumerate() {
            if *cov == Coverage::File {
                for (k, code) in d.codes.iter().enumerate() {
                    // A security rule cannot be turned off from inside the cell (CG005).
                    if let Some(rule) = code.rule.filter(|r| settings.inline_suppressible(r)) {
                        file_level.push((ci, di, k, rule.code));
                    }
                }
            }
        }
    }
    let suppressed_by_file = |code: &str, usage: &mut Vec<Vec<Usage>>| -> bool {
        let mut hit = false;
        for &(ci, di, k, c) in &file_level {
            if c == code {
                usage[ci][di].used[k] = true;
                hit = true;
            }
        }
        hit
    };

    file_diagnostics.retain(|d| !suppressed_by_file(d.rule.code, &mut usage));

    for (ci, diagnostics) in per_cell.iter_mut().enumerate() {
        let s = &sups[ci];
        if s.directives.is_empty() && file_level.is_empty() {
            continue;
        }
        let by_row = s.by_row();
        diagnostics.retain(|diag| {
            if suppressed_by_file(diag.rule.code, &mut usage) {
                return false;
            }
            let mut hit = false;
            let row = s.index.line_of(diag.range.start);
            let suppressible = settings.inline_suppressible(diag.rule);
            for &di in by_row.get(row).map(Vec::as_slice).unwrap_or(&[]) {
                let d = &s.directives[di].0;
                if d.is_blanket() {
                    if suppressible {
                        usage[ci][di].blanket_used = true;
                        hit = true;
                    } else if !crate::config::is_unsuppressible_by_comment(diag.rule) {
                        usage[ci][di].blanket_protected.insert(diag.rule.code);
                    }
                    continue;
                }
                if !suppressible {
                    continue;
                }
                for (k, code) in d.codes.iter().enumerate() {
                    if code.rule.is_some_and(|r| r.code == diag.rule.code) {
                        usage[ci][di].used[k] = true;
                        hit = true;
                    }
                }
            }
            !hit
        });
    }

    // Meta findings, per directive.
    for (ci, s) in sups.iter().enumerate() {
        let mut meta_findings = Vec::new();
        for (di, (d, _)) in s.directives.iter().enumerate() {
            meta_findings.extend(directive_findings(
                &cells[ci].text,
                d,
                &usage[ci][di],
                settings,
            ));
        }
        for m in meta_findings {
            if suppressed_by_file(m.rule.code, &mut usage) {
                continue;
            }
            if settings.rules.is_enabled(m.rule) {
                per_cell[ci].push(m);
            }
        }
        per_cell[ci].sort_by(|a, b| {
            a.range
                .start
                .cmp(&b.range.start)
                .then(a.rule.code.cmp(b.rule.code))
        });
    }
}

/// The `CG` findings about one directive.
fn directive_findings(
    src: &str,
    d: &Directive,
    usage: &Usage,
    settings: &Settings,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let lists = |rule: &Rule| {
        d.codes
            .iter()
            .any(|c| c.rule.is_some_and(|r| r.code == rule.code))
    };
    if let Some(m) = &d.malformed {
        if !lists(&meta::INVALID_SUPPRESSION) {
            out.push(Diagnostic::new(
                &meta::INVALID_SUPPRESSION,
                d.range,
                format!("Invalid suppression comment: {}", m.message),
            ));
        }
        return out;
    }
    if d.is_blanket() {
        if !usage.blanket_protected.is_empty() {
            let codes: Vec<String> = usage
                .blanket_protected
                .iter()
                .map(|c| format!("`{c}`"))
                .collect();
            out.push(
                Diagnostic::new(
                    &meta::SECURITY_SUPPRESSION,
                    d.range,
                    format!(
                        "A `noqa` comment in the cell cannot suppress the security finding{} {} on this line: the cell's author is the party these rules guard against",
                        if codes.len() == 1 { "" } else { "s" },
                        codes.join(", ")
                    ),
                )
                .with_help(
                    "Fix the code; to silence these rules for trusted files, use `[lint] allow-inline-suppressions` or `ignore` in the configuration",
                ),
            );
        }
        if !usage.blanket_used && usage.blanket_protected.is_empty() {
            out.push(
                Diagnostic::new(
                    &meta::UNUSED_SUPPRESSION,
                    d.range,
                    "Unused blanket `noqa` directive",
                )
                .with_fix(Fix::safe(
                    "Remove unused `noqa` directive",
                    vec![remove_directive(src, d)],
                )),
            );
        }
        return out;
    }
    let mut seen: BTreeSet<&'static str> = BTreeSet::new();
    let mut duplicated = Vec::new();
    let mut unknown = Vec::new();
    let mut unused = Vec::new();
    let mut non_enabled = Vec::new();
    let mut protected = Vec::new();
    for (k, c) in d.codes.iter().enumerate() {
        if c.foreign {
            continue;
        }
        match c.rule {
            None => unknown.push(k),
            Some(rule) => {
                if !seen.insert(rule.code) {
                    duplicated.push(k);
                } else if crate::config::is_unsuppressible_by_comment(rule) {
                    // It suppresses nothing, whether or not the finding is there.
                    unused.push(k);
                } else if !settings.inline_suppressible(rule) {
                    protected.push(k);
                } else if usage.used[k] || rule.family() == meta::FAMILY {
                    // Meta codes suppress findings about the directive itself.
                } else if settings.rules.is_enabled(rule) {
                    unused.push(k);
                } else {
                    non_enabled.push(k);
                }
            }
        }
    }
    let names = |ks: &[usize]| {
        ks.iter()
            .map(|&k| format!("`{}`", d.codes[k].text))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let word = match d.kind {
        DirectiveKind::Noqa => "`noqa` directive",
        DirectiveKind::Ignore => "`cellguard: ignore` suppression",
        DirectiveKind::IgnoreFile => "`cellguard: ignore-file` suppression",
    };
    let range_of = |ks: &[usize]| {
        if ks.len() == 1 {
            d.codes[ks[0]].range
        } else {
            d.range
        }
    };
    if !protected.is_empty() {
        // Never silenced by the comment itself: `CG005` is protected too.
        out.push(
            Diagnostic::new(
                &meta::SECURITY_SUPPRESSION,
                range_of(&protected),
                format!(
                    "A {word} in the cell cannot suppress security rule{} {}: the cell's author is the party these rules guard against, so the finding stays reported",
                    if protected.len() == 1 { "" } else { "s" },
                    names(&protected)
                ),
            )
            .with_help(
                "Fix the code; to silence these rules for trusted files, use `[lint] allow-inline-suppressions` or `ignore` in the configuration",
            )
            .with_fix(Fix::safe(
                fix_title(d, &protected, "security-rule"),
                vec![remove_codes(src, d, &protected)],
            )),
        );
    }
    if (!unused.is_empty() || !non_enabled.is_empty()) && !lists(&meta::UNUSED_SUPPRESSION) {
        let mut parts = Vec::new();
        if !unused.is_empty() {
            parts.push(format!("unused: {}", names(&unused)));
        }
        if !non_enabled.is_empty() {
            parts.push(format!("non-enabled: {}", names(&non_enabled)));
        }
        let mut ks: Vec<usize> = unused.iter().chain(&non_enabled).copied().collect();
        ks.sort_unstable();
        out.push(
            Diagnostic::new(
                &meta::UNUSED_SUPPRESSION,
                range_of(&ks),
                format!("Unused {word} ({})", parts.join("; ")),
            )
            .with_fix(Fix::safe(
                fix_title(d, &ks, "unused"),
                vec![remove_codes(src, d, &ks)],
            )),
        );
    }
    if !unknown.is_empty() && !lists(&meta::UNKNOWN_SUPPRESSION_CODE) {
        let prefix_hint = unknown.iter().any(|&k| {
            let t = d.codes[k].text.to_ascii_uppercase();
            rules::all_rules().any(|r| r.code.starts_with(&t) && r.code != t)
        });
        let mut message = format!("Unknown rule code in {word}: {}", names(&unknown));
        if prefix_hint {
            message.push_str(" (suppressions take exact codes, not prefixes)");
        }
        let mut diag =
            Diagnostic::new(&meta::UNKNOWN_SUPPRESSION_CODE, range_of(&unknown), message).with_fix(
                Fix::safe(
                    fix_title(d, &unknown, "unknown"),
                    vec![remove_codes(src, d, &unknown)],
                ),
            );
        if let [k] = unknown[..] {
            if let Some(s) = closest_code(&d.codes[k].text) {
                diag = diag.with_help(format!("Did you mean `{s}`?"));
            }
        }
        out.push(diag);
    }
    if !duplicated.is_empty() && !lists(&meta::DUPLICATED_SUPPRESSION_CODE) {
        out.push(
            Diagnostic::new(
                &meta::DUPLICATED_SUPPRESSION_CODE,
                range_of(&duplicated),
                format!("Duplicated code in {word}: {}", names(&duplicated)),
            )
            .with_fix(Fix::safe(
                fix_title(d, &duplicated, "duplicated"),
                vec![remove_codes(src, d, &duplicated)],
            )),
        );
    }
    out
}

fn fix_title(d: &Directive, ks: &[usize], what: &str) -> String {
    if ks.len() == d.codes.len() {
        "Remove the suppression comment".to_string()
    } else {
        let codes: Vec<_> = ks
            .iter()
            .map(|&k| format!("`{}`", d.codes[k].text))
            .collect();
        format!(
            "Remove {what} code{} {}",
            if ks.len() == 1 { "" } else { "s" },
            codes.join(", ")
        )
    }
}

/// The closest rule code to `text`, when one is at edit distance 2 or less.
pub fn closest_code(text: &str) -> Option<&'static str> {
    let t = text.to_ascii_uppercase();
    rules::all_rules()
        .map(|r| (strsim::levenshtein(&t, r.code), r.code))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, c)| c)
}

/// An edit removing the codes `ks` from directive `d`, or the whole directive when none remain.
pub fn remove_codes(src: &str, d: &Directive, ks: &[usize]) -> Edit {
    let kept: Vec<&str> = d
        .codes
        .iter()
        .enumerate()
        .filter(|(k, _)| !ks.contains(k))
        .map(|(_, c)| c.text.as_str())
        .collect();
    match (kept.is_empty(), d.codes_range) {
        (false, Some(r)) => Edit::replace(r, kept.join(", ")),
        _ => remove_directive(src, d),
    }
}

/// An edit removing directive `d`: with the rest of its comment when only a reason follows it,
/// with the whitespace before it, and with its whole row when the comment stood alone.
pub fn remove_directive(src: &str, d: &Directive) -> Edit {
    let comment_text = src.get(d.comment.as_range()).unwrap_or("");
    let rel_end = d.range.end - d.comment.start;
    let rest = comment_text.get(rel_end..).unwrap_or("");
    let end = match rest.find('#') {
        Some(i) => d.range.end + i,
        None => d.comment.end,
    };
    if end < d.comment.end {
        // Another pragma follows in the same comment: keep it where this one started.
        return Edit::delete(TextRange::new(d.range.start, end));
    }
    let mut start = d.range.start;
    while start > 0 && matches!(src.as_bytes()[start - 1], b' ' | b'\t') {
        start -= 1;
    }
    let at_row_start = start == 0 || src.as_bytes()[start - 1] == b'\n';
    if !at_row_start {
        return Edit::delete(TextRange::new(start, end));
    }
    // The comment was alone on its row: delete the row.
    delete_rows(src, start, end)
}

/// Deletes the whole rows spanning `start..end` (where `start` is a row start): the newline
/// before them when there is a previous row (so the last row of a Markdown fence keeps the
/// closing fence in place), otherwise the newline after them.
pub fn delete_rows(src: &str, start: usize, end: usize) -> Edit {
    let bytes = src.as_bytes();
    // `end` may be followed by `\r\n` or `\n`.
    let mut line_end = end;
    while line_end < bytes.len() && bytes[line_end] != b'\n' && bytes[line_end] != b'\r' {
        line_end += 1;
    }
    if start > 0 {
        let mut prev = start - 1; // the '\n' ending the previous row
        if prev > 0 && bytes[prev - 1] == b'\r' {
            prev -= 1;
        }
        return Edit::delete(TextRange::new(prev, line_end));
    }
    let mut next = line_end;
    if next < bytes.len() && bytes[next] == b'\r' {
        next += 1;
    }
    if next < bytes.len() && bytes[next] == b'\n' {
        next += 1;
    }
    Edit::delete(TextRange::new(start, next))
}

/// The `# noqa` edits that suppress `diagnostics` (cell coordinates) in a parsed cell: one per
/// target row, placed at the end of the logical line holding each diagnostic's start (after
/// the closing quotes of a multi-line string, on the last row of a continued statement, never
/// inside a string), merged into an existing `# noqa: ...` on that row. `CG` findings are
/// skipped (they are about suppressions). Returns no edit for a cell with syntax errors, where
/// rows cannot be placed safely.
pub fn add_noqa_edits(src: &str, tree: &Tree, diagnostics: &[Diagnostic]) -> Vec<Edit> {
    if tree.root_node().has_error() {
        return Vec::new();
    }
    let index = LineIndex::new(src);
    let logical = LogicalLines::new(tree, src, &index);
    let mut by_row: std::collections::BTreeMap<usize, BTreeSet<&'static str>> = Default::default();
    for d in diagnostics {
        if d.rule.family() == meta::FAMILY {
            continue;
        }
        let row = logical.last_row(index.line_of(d.range.start.min(src.len())));
        by_row.entry(row).or_default().insert(d.rule.code);
    }
    let mut comments_by_row: std::collections::BTreeMap<usize, Node> = Default::default();
    for node in crate::parse::walk(tree.root_node()).filter(|n| n.kind() == "comment") {
        comments_by_row
            .entry(node.start_position().row)
            .or_insert(node);
    }
    let mut edits = Vec::new();
    for (row, codes) in by_row {
        let row_start = index.line_start(row).unwrap_or(src.len());
        let row_end = index.line_end(row, src);
        if let Some(c) = comments_by_row.get(&row) {
            let own_line = src
                .get(row_start..c.start_byte())
                .is_some_and(|s| s.trim().is_empty());
            let directives = parse_comment(crate::parse::text(*c, src), c.start_byte(), own_line);
            if directives.iter().any(|d| d.is_blanket()) {
                continue;
            }
            let target = directives
                .iter()
                .find(|d| d.kind == DirectiveKind::Noqa && d.malformed.is_none())
                .or_else(|| {
                    directives.iter().find(|d| {
                        d.kind == DirectiveKind::Ignore && d.malformed.is_none() && !own_line
                    })
                });
            if let Some(d) = target {
                let mut list: Vec<String> = d.codes.iter().map(|c| c.text.clone()).collect();
                for code in &codes {
                    if !d
                        .codes
                        .iter()
                        .any(|c| c.rule.is_some_and(|r| r.code == *code))
                    {
                        list.push(code.to_string());
                    }
                }
                if let Some(r) = d.codes_range {
                    if list.len() > d.codes.len() {
                        edits.push(Edit::replace(r, list.join(", ")));
                    }
                }
                continue;
            }
            let list: Vec<&str> = codes.into_iter().collect();
            edits.push(Edit::insert(
                c.start_byte(),
                format!("# noqa: {}  ", list.join(", ")),
            ));
            continue;
        }
        let line = src.get(row_start..row_end).unwrap_or("");
        let content_end = row_start + line.trim_end().len();
        let list: Vec<&str> = codes.into_iter().collect();
        let sep = if content_end == row_start { "" } else { "  " };
        edits.push(Edit::insert(
            content_end,
            format!("{sep}# noqa: {}", list.join(", ")),
        ));
    }
    edits
}

/// The cell offset of file offset `offset`, when it lies in text copied verbatim into the cell.
fn cell_offset(map: &crate::extract::SourceMap, offset: usize) -> Option<usize> {
    map.segments.iter().find_map(|s| {
        (s.len == s.file_len && s.file_start <= offset && offset <= s.file_start + s.file_len)
            .then(|| s.cell_start + (offset - s.file_start))
    })
}

/// The edit that suppresses one diagnostic (file coordinates, as `check_file` returns it) with
/// a `# noqa: CODE` comment, placed as `--add-noqa` places it: for the language server's
/// "ignore for this line" action. `None` for findings outside any cell (extraction findings),
/// `CG` findings, cells with syntax errors, and the security rules a comment cannot suppress
/// ([`Settings::inline_suppressible`]).
pub fn noqa_edit(
    file: &crate::source::SourceFile,
    settings: &Settings,
    diagnostic: &Diagnostic,
) -> Option<Edit> {
    if !settings.inline_suppressible(diagnostic.rule) {
        return None;
    }
    let ex = crate::extract::extract_with(
        file,
        settings.extract,
        &crate::extract::ExtractOptions::from_settings(settings),
    );
    let cell = match diagnostic.cell {
        Some(i) => ex.cells.iter().find(|c| c.index == i)?,
        None => ex
            .cells
            .iter()
            .find(|c| cell_offset(&c.map, diagnostic.range.start).is_some())?,
    };
    let start = cell_offset(&cell.map, diagnostic.range.start)?;
    let tree = crate::parse::parse(&cell.text, None);
    let mut local = diagnostic.clone();
    local.range = TextRange::empty(start);
    let edit = add_noqa_edits(&cell.text, &tree, std::slice::from_ref(&local))
        .into_iter()
        .next()?;
    cell.map.edit_to_file(&edit)
}

/// The outcome of [`add_noqa`] on one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedNoqa {
    /// The file text with the `# noqa` comments written.
    pub text: String,
    /// Number of comments written or extended.
    pub added: usize,
    /// Findings left unsuppressed: in cells with syntax errors, or whose row cannot be written
    /// back to the file (text the extractor synthesised).
    pub skipped: usize,
}

/// `--add-noqa`: writes a `# noqa: CODES` comment for every current finding of `file` (see
/// [`add_noqa_edits`] for the placement); findings already suppressed get nothing, existing
/// `# noqa` lists are extended. Findings of rules a comment cannot suppress
/// ([`Settings::inline_suppressible`]: `SBX*`, `IMP001`, `IMP002` by default) get no comment and
/// count as skipped. Running it twice changes nothing the second time.
pub fn add_noqa(
    file: &crate::source::SourceFile,
    settings: &Settings,
    kb: &crate::kb::KnowledgeBase,
) -> AddedNoqa {
    let ex = crate::extract::extract_with(
        file,
        settings.extract,
        &crate::extract::ExtractOptions::from_settings(settings),
    );
    let trees: Vec<Tree> = ex
        .cells
        .iter()
        .map(|c| crate::parse::parse(&c.text, None))
        .collect();
    let mut per_cell: Vec<Vec<Diagnostic>> = ex
        .cells
        .iter()
        .zip(&trees)
        .map(|(c, t)| crate::lint::check_parsed_cell(c, t, settings, kb))
        .collect();
    let mut file_diags: Vec<Diagnostic> = ex
        .diagnostics
        .into_iter()
        .filter(|d| settings.rules.is_enabled(d.rule))
        .collect();
    apply(&ex.cells, &trees, &mut per_cell, &mut file_diags, settings);
    let mut skipped = file_diags.len();
    let mut edits = Vec::new();
    for ((cell, tree), diags) in ex.cells.iter().zip(&trees).zip(&per_cell) {
        // Security findings cannot be suppressed by a comment in the cell: they stay, counted
        // as skipped.
        let (diags, protected): (Vec<Diagnostic>, Vec<Diagnostic>) = diags
            .iter()
            .filter(|d| d.rule.family() != meta::FAMILY)
            .cloned()
            .partition(|d| settings.inline_suppressible(d.rule));
        skipped += protected.len();
        let diags = &diags;
        let wanted = diags.len();
        if wanted == 0 {
            continue;
        }
        let cell_edits = add_noqa_edits(&cell.text, tree, diags);
        if cell_edits.is_empty() {
            skipped += wanted;
        }
        for e in cell_edits {
            match cell.map.edit_to_file(&e) {
                Some(fe) => edits.push(fe),
                None => skipped += 1,
            }
        }
    }
    let added = edits.len();
    let text = if edits.is_empty() {
        file.text.clone()
    } else {
        let d = Diagnostic::new(&meta::UNUSED_SUPPRESSION, TextRange::default(), "add noqa")
            .with_fix(Fix::safe("Add `# noqa` comments", edits));
        crate::fix::apply_fixes(&file.text, &[d], crate::diagnostic::Applicability::Safe)
            .map(|p| p.text)
            .unwrap_or_else(|| file.text.clone())
    };
    AddedNoqa {
        text,
        added,
        skipped,
    }
}

#[cfg(test)]
mod tests;
