//! Applying fixes: one pass applies every non-overlapping fix at or above an applicability
//! threshold; [`fix_file`] re-lints and repeats until nothing changes, as ruff's fix loop does
//! (`crates/ruff_linter/src/linter.rs`, lsp-linter-anchors §1.3):
//!
//! 1. fixes are sorted by position (then rule code, for a deterministic order); a fix whose first
//!    edit starts before the end of an edit already applied in this pass is skipped (it is
//!    picked up by the next pass, on re-linted text); identical fixes are applied once;
//! 2. the text is re-linted and the loop repeats, at most [`MAX_ITERATIONS`] times; a text seen
//!    before (a cycle) or the cap stops it, and the rules whose fixes were still being applied
//!    are reported as not converging;
//! 3. a pass that introduces a syntax error the text did not have is undone and retried one fix
//!    at a time, keeping only the fixes that parse (the offending rules are reported).
//!
//! Unlike Colony's recovery, which runs a validator's `fixed_code` without re-checking it
//! (colony-reference §3.1, §3.4), every pass here is re-checked by the whole rule set.
//!
//! Edits are byte ranges in file coordinates (the engine maps cell edits back to the file,
//! Markdown fences and JSON-escaped responses included, see `extract::SourceMap::edit_to_file`).
//! Line endings and text around an edit are kept byte for byte, so CRLF files, files without a
//! final newline and non-ASCII text are preserved. `DisplayOnly` fixes are never applied.

use crate::config::Settings;
use crate::diagnostic::{Applicability, Diagnostic, Edit, Fix};
use crate::kb::KnowledgeBase;
use crate::lint;
use crate::source::{SourceFile, TextRange};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use tree_sitter::Node;

/// The most fix passes [`fix_file`] runs before giving up (ruff's `MAX_ITERATIONS`).
pub const MAX_ITERATIONS: usize = 100;

/// The result of one pass over a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pass {
    /// The text after the pass.
    pub text: String,
    /// Rule codes of the fixes applied, with a count each.
    pub applied: BTreeMap<&'static str, usize>,
}

/// True when `fix` may be applied at `threshold` (`Safe` for `--fix`, `Unsafe` for
/// `--unsafe-fixes`). Display-only fixes never are.
pub fn is_applicable(fix: &Fix, threshold: Applicability) -> bool {
    fix.applicability != Applicability::DisplayOnly && fix.applicability >= threshold
}

fn edits_valid(text: &str, fix: &Fix) -> bool {
    let mut last = 0;
    for (i, e) in fix.edits.iter().enumerate() {
        let r = e.range;
        if r.end > text.len()
            || !text.is_char_boundary(r.start)
            || !text.is_char_boundary(r.end)
            || (i > 0 && r.start < last)
        {
            return false;
        }
        last = r.end;
    }
    true
}

/// Applies, in one pass, every fix of `diagnostics` (file coordinates of `text`) at or above
/// `threshold` that does not overlap a fix already applied in the pass. Fixes with edits out of
/// bounds, off character boundaries or unsorted are skipped. Returns `None` when no fix applies.
pub fn apply_fixes(
    text: &str,
    diagnostics: &[Diagnostic],
    threshold: Applicability,
) -> Option<Pass> {
    let mut fixes: Vec<(&Fix, &'static str)> = diagnostics
        .iter()
        .filter_map(|d| d.fix.as_ref().map(|f| (f, d.rule.code)))
        .filter(|(f, _)| is_applicable(f, threshold) && !f.edits.is_empty() && edits_valid(text, f))
        .collect();
    fixes.sort_by(|(a, ca), (b, cb)| {
        (a.range().start, a.range().end, *ca).cmp(&(b.range().start, b.range().end, *cb))
    });
    let mut out = String::with_capacity(text.len());
    let mut last_pos: Option<usize> = None;
    let mut copied = 0;
    let mut applied: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut applied_fixes: Vec<&Fix> = Vec::new();
    let mut applied_edits: HashSet<&[Edit]> = HashSet::new();
    for (fix, code) in fixes {
        if applied_edits.contains(fix.edits.as_slice()) {
            // The same change proposed by two findings: already made.
            *applied.entry(code).or_default() += 1;
            continue;
        }
        let first = fix.edits[0].range.start;
        if last_pos.is_some_and(|p| p > first) {
            continue;
        }
        if last_pos == Some(first)
            && (fix.edits[0].range.is_empty()
                || applied_fixes
                    .last()
                    .and_then(|f| f.edits.last())
                    .is_some_and(|e| e.range.is_empty()))
        {
            // Two insertions (or an insertion next to a replacement) at one offset: their
            // order would be arbitrary; leave the second for the next pass.
            continue;
        }
        for e in &fix.edits {
            out.push_str(&text[copied..e.range.start]);
            out.push_str(&e.content);
            copied = e.range.end;
        }
        last_pos = Some(copied);
        *applied.entry(code).or_default() += 1;
        applied_fixes.push(fix);
        applied_edits.insert(fix.edits.as_slice());
    }
    if applied.is_empty() {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(Pass { text: out, applied })
}

/// How a fix loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixStatus {
    /// No applicable fix is left.
    Converged,
    /// The loop hit [`MAX_ITERATIONS`] or came back to a text it had already produced; these
    /// rules' fixes were still being applied.
    NotConverged {
        /// Rule codes, sorted.
        rules: Vec<&'static str>,
    },
}

/// The outcome of fixing one file.
#[derive(Debug, Clone)]
pub struct FixedFile {
    /// The text after fixing (equal to the input when nothing applied).
    pub text: String,
    /// Fixes applied per rule code, over all passes.
    pub fixed: BTreeMap<&'static str, usize>,
    /// Number of passes that applied at least one fix.
    pub passes: usize,
    /// How the loop ended.
    pub status: FixStatus,
    /// Rules whose fixes introduced a syntax error and were rolled back (sorted).
    pub reverted: Vec<&'static str>,
    /// The diagnostics of the final text (file coordinates), suppressions applied.
    pub diagnostics: Vec<Diagnostic>,
}

impl FixedFile {
    /// Total number of fixes applied.
    pub fn fixed_count(&self) -> usize {
        self.fixed.values().sum()
    }
}

fn syntax_errors(diagnostics: &[Diagnostic]) -> usize {
    diagnostics
        .iter()
        .filter(|d| d.rule.code == crate::rules::syntax::SYNTAX_ERROR.code)
        .count()
}

/// Fixes `file` until no applicable fix is left (see the module doc). `threshold` is
/// `Applicability::Safe` for `--fix` and `Applicability::Unsafe` for `--unsafe-fixes`.
pub fn fix_file(
    file: &SourceFile,
    settings: &Settings,
    kb: &KnowledgeBase,
    threshold: Applicability,
) -> FixedFile {
    let relint =
        |text: &str| lint::check_file(&SourceFile::new(file.path.clone(), text), settings, kb);
    fix_with(&file.text, threshold, &relint)
}

/// The fix loop of [`fix_file`] over any lint function (`lint(text)` returns the diagnostics
/// of a text, in its coordinates). A syntax error is a diagnostic of rule `SYN001`.
pub fn fix_with(text: &str, threshold: Applicability, relint: &Relint) -> FixedFile {
    let mut text = text.to_string();
    let mut diagnostics = relint(&text);
    let mut fixed: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut seen: HashSet<String> = HashSet::new();
    seen.insert(text.clone());
    let mut reverted: BTreeSet<&'static str> = BTreeSet::new();
    let mut passes = 0;
    let mut status = FixStatus::Converged;
    while let Some(pass) = apply_fixes(&text, &diagnostics, threshold) {
        if passes == MAX_ITERATIONS {
            status = FixStatus::NotConverged {
                rules: pass.applied.keys().copied().collect(),
            };
            break;
        }
        let mut next_diags = relint(&pass.text);
        let mut pass = pass;
        if syntax_errors(&next_diags) > syntax_errors(&diagnostics) {
            // Retry one fix at a time, keeping those that do not break the syntax.
            let (t, d, applied, bad) = one_by_one(&text, &diagnostics, threshold, relint);
            reverted.extend(bad);
            if applied.is_empty() {
                break;
            }
            pass = Pass { text: t, applied };
            next_diags = d;
        }
        passes += 1;
        for (code, n) in &pass.applied {
            *fixed.entry(code).or_default() += n;
        }
        text = pass.text;
        diagnostics = next_diags;
        if !seen.insert(text.clone()) {
            status = FixStatus::NotConverged {
                rules: pass.applied.keys().copied().collect(),
            };
            break;
        }
    }
    FixedFile {
        text,
        fixed,
        passes,
        status,
        reverted: reverted.into_iter().collect(),
        diagnostics,
    }
}

/// A lint function for [`fix_with`]: the diagnostics of a text.
pub type Relint<'a> = dyn Fn(&str) -> Vec<Diagnostic> + 'a;

/// Applies the fixes of one pass one at a time, re-linting after each and dropping those that
/// add a syntax error. Returns the text, its diagnostics, the fixes kept and the rules dropped.
fn one_by_one(
    text: &str,
    diagnostics: &[Diagnostic],
    threshold: Applicability,
    relint: &Relint,
) -> (
    String,
    Vec<Diagnostic>,
    BTreeMap<&'static str, usize>,
    Vec<&'static str>,
) {
    let base_errors = syntax_errors(diagnostics);
    let mut current = text.to_string();
    let mut current_diags = diagnostics.to_vec();
    let mut applied: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut bad = Vec::new();
    let mut candidates: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.fix.as_ref().is_some_and(|f| is_applicable(f, threshold)))
        .collect();
    // Later fixes first, so earlier offsets stay valid while applying.
    candidates.sort_by_key(|d| std::cmp::Reverse(d.fix.as_ref().map(|f| f.range().start)));
    let mut last_start: Option<usize> = None;
    for d in candidates {
        let Some(fix) = d.fix.as_ref() else { continue };
        if last_start.is_some_and(|s| fix.range().end > s) {
            continue;
        }
        let single = Diagnostic {
            fix: Some(fix.clone()),
            ..d.clone()
        };
        let Some(pass) = apply_fixes(&current, std::slice::from_ref(&single), threshold) else {
            continue;
        };
        let next = relint(&pass.text);
        if syntax_errors(&next) > base_errors {
            bad.push(d.rule.code);
            continue;
        }
        last_start = Some(fix.range().start);
        for (c, n) in pass.applied {
            *applied.entry(c).or_default() += n;
        }
        current = pass.text;
        current_diags = next;
    }
    (current, current_diags, applied, bad)
}

/// One edit that deletes statement `stmt` from `src` (text of the cell that holds it): the
/// statement and its `;` separator when it shares its row with others; its whole rows otherwise
/// (a trailing comment on its last row goes with it); `pass` in its place when it is the only
/// statement of a block, so the block stays valid.
pub fn delete_statement(stmt: Node, src: &str) -> Edit {
    let range = TextRange::new(stmt.start_byte(), stmt.end_byte());
    if let Some(parent) = stmt.parent() {
        if parent.kind() == "block" {
            let mut cursor = parent.walk();
            let others = parent
                .named_children(&mut cursor)
                .filter(|n| n.kind() != "comment" && n.id() != stmt.id())
                .count();
            if others == 0 {
                return Edit::replace(range, "pass");
            }
        }
    }
    let next = stmt.next_sibling();
    if let Some(semi) = next.filter(|n| n.kind() == ";") {
        // `import os; x = 1` -> `x = 1`
        let mut end = semi.end_byte();
        let bytes = src.as_bytes();
        while end < bytes.len() && matches!(bytes[end], b' ' | b'\t') {
            end += 1;
        }
        let at_row_end = end >= bytes.len() || matches!(bytes[end], b'\n' | b'\r' | b'#');
        if !at_row_end {
            return Edit::delete(TextRange::new(range.start, end));
        }
    }
    if let Some(semi) = stmt.prev_sibling().filter(|n| n.kind() == ";") {
        // `x = 1; import os` -> `x = 1`
        let mut start = semi.start_byte();
        let bytes = src.as_bytes();
        while start > 0 && matches!(bytes[start - 1], b' ' | b'\t') {
            start -= 1;
        }
        let end = match next.filter(|n| n.kind() == ";") {
            Some(s) => s.end_byte(),
            None => range.end,
        };
        return Edit::delete(TextRange::new(start, end));
    }
    let row_start = src[..range.start].rfind('\n').map(|i| i + 1).unwrap_or(0);
    if !src[row_start..range.start].trim().is_empty() {
        return Edit::delete(range);
    }
    let mut end = range.end;
    if let Some(semi) = next.filter(|n| n.kind() == ";") {
        end = semi.end_byte();
    }
    // Whole rows: up to the end of the last row (a trailing comment included).
    let row_end = src[end..]
        .find(['\n', '\r'])
        .map(|i| end + i)
        .unwrap_or(src.len());
    crate::suppress::delete_rows(src, row_start, row_end)
}

/// One literal part of a string expression: where its content lies and how it is quoted.
struct StringPart {
    /// Offset of the part's content in the expression's value.
    value_start: usize,
    /// The content's range in the source.
    content: TextRange,
    /// The quote (`"`, `'`, `"""` or `'''`).
    quote: String,
    /// The lower-cased prefix letters.
    prefix: String,
}

fn string_parts(expr: Node, src: &str) -> Option<Vec<StringPart>> {
    let expr = crate::parse::unparenthesize(expr);
    let strings: Vec<Node> = match expr.kind() {
        "string" => vec![expr],
        "concatenated_string" => {
            let mut c = expr.walk();
            // Comments between the parts are extras of the node, not parts.
            let parts: Vec<Node> = expr
                .named_children(&mut c)
                .filter(|p| !p.is_extra())
                .collect();
            if parts.iter().any(|p| p.kind() != "string") {
                return None;
            }
            parts
        }
        _ => return None,
    };
    let mut out = Vec::new();
    let mut value_len = 0;
    for s in strings {
        let prefix = crate::parse::string_prefix(s, src);
        if prefix.contains('b') {
            return None;
        }
        if crate::parse::walk(s).any(|n| matches!(n.kind(), "escape_sequence" | "interpolation")) {
            return None;
        }
        let start = s.child(0).filter(|c| c.kind() == "string_start")?;
        let end = s
            .child(s.child_count().checked_sub(1)?)
            .filter(|c| c.kind() == "string_end")?;
        let opening = crate::parse::text(start, src);
        let quote = opening
            .trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .to_string();
        let content = TextRange::new(start.end_byte(), end.start_byte());
        out.push(StringPart {
            value_start: value_len,
            content,
            quote,
            prefix,
        });
        value_len += content.len();
    }
    Some(out)
}

/// An edit that changes the value of a constant string expression (`"..."`, `r'...'`, a
/// triple-quoted string, or an implicit concatenation such as `"A.b." "c"`) to `new_value`,
/// touching only the part of the source that differs: quotes, prefixes and the split of an
/// implicit concatenation over several rows are kept. When the difference spans two parts of a
/// concatenation the whole expression is replaced by one literal in the first part's quotes.
/// `None` for bytes, f-strings with fields, strings with escape sequences, and values that the
/// quotes cannot hold unescaped (the quote itself, a backslash, a newline in a one-line string).
pub fn replace_string_value(expr: Node, src: &str, new_value: &str) -> Option<Edit> {
    let parts = string_parts(expr, src)?;
    let old: String = parts
        .iter()
        .map(|p| src.get(p.content.as_range()).unwrap_or(""))
        .collect();
    if old == new_value {
        return None;
    }
    // Common prefix and suffix, on character boundaries.
    let mut pre = old
        .bytes()
        .zip(new_value.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(pre) || !new_value.is_char_boundary(pre) {
        pre -= 1;
    }
    let max_suf = old.len().min(new_value.len()) - pre;
    let mut suf = old
        .bytes()
        .rev()
        .zip(new_value.bytes().rev())
        .take(max_suf)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - suf)
        || !new_value.is_char_boundary(new_value.len() - suf)
    {
        suf -= 1;
    }
    let (a, b) = (pre, old.len() - suf);
    let replacement = &new_value[pre..new_value.len() - suf];
    let fits = |p: &StringPart, text: &str| {
        let triple = p.quote.len() == 3;
        let q = p.quote.chars().next().unwrap_or('"');
        let unsafe_text = text.contains(q)
            || text.contains('\\')
            || (!triple && text.contains(['\n', '\r']))
            || (p.prefix.contains('f') && text.contains(['{', '}']));
        !unsafe_text
    };
    // The part holding the changed region (an insertion at a boundary goes to the earlier part).
    let holder = parts
        .iter()
        .find(|p| p.value_start <= a && b <= p.value_start + p.content.len());
    if let Some(p) = holder {
        if fits(p, replacement) {
            let start = p.content.start + (a - p.value_start);
            let end = p.content.start + (b - p.value_start);
            return Some(Edit::replace(TextRange::new(start, end), replacement));
        }
        return None;
    }
    let first = &parts[0];
    if !fits(first, new_value) {
        return None;
    }
    let expr = crate::parse::unparenthesize(expr);
    let opening = &src[expr.start_byte()..first.content.start];
    Some(Edit::replace(
        crate::parse::range(expr),
        format!("{opening}{new_value}{}", first.quote),
    ))
}

#[cfg(test)]
mod tests;
