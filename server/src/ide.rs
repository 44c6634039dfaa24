//! Knowledge-base features inside cells: hover, completion, go to definition and the
//! action-count inlay hint. All work on one [`LintResult`] (the text, cells and trees of the
//! current version) and a file byte offset.
//!
//! Action keys are found where the namespace's dispatch function (`run` in Colony) receives
//! them: the first positional argument or `action_key=`. In the `functions` dialect a tool is
//! the called name itself.

use crate::analysis::{CellInfo, LintResult};
use crate::convert;
use cellguard_lints::kb::{Action, Resolution};
use cellguard_lints::rules::shape::PathCounter;
use cellguard_lints::semantic::SemanticModel;
use cellguard_lints::source::{PositionEncoding, TextRange};
use cellguard_lints::{parse, rules, KnowledgeBase, Settings};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tower_lsp_server::ls_types as lsp;
use tree_sitter::Node;

/// An action key written in a `run(...)` call.
#[derive(Debug, Clone)]
pub struct KeyAt {
    /// The key's value.
    pub key: String,
    /// The range of the string literal's content (between the quotes), cell offsets.
    pub content: TextRange,
}

/// The string node around `offset` (or ending just before it), if any.
fn string_at(root: Node, offset: usize) -> Option<Node> {
    for o in [offset, offset.saturating_sub(1)] {
        let mut node = root.descendant_for_byte_range(o, o)?;
        loop {
            if node.kind() == "string" && node.start_byte() <= offset && offset <= node.end_byte() {
                return Some(node);
            }
            match node.parent() {
                Some(p) => node = p,
                None => break,
            }
        }
    }
    None
}

/// The content range of a string node (between its quotes).
fn string_content_range(string: Node) -> TextRange {
    let mut start = string.start_byte();
    let mut end = string.end_byte();
    let mut cursor = string.walk();
    for child in string.children(&mut cursor) {
        match child.kind() {
            "string_start" => start = child.end_byte(),
            "string_end" => end = child.start_byte(),
            _ => {}
        }
    }
    TextRange::new(start, end.max(start))
}

/// True when `call` calls the plain name `name`.
fn calls_name(call: Node, src: &str, name: &str) -> bool {
    call.kind() == "call"
        && call
            .child_by_field_name("function")
            .is_some_and(|f| f.kind() == "identifier" && parse::text(f, src) == name)
}

/// The action key string under `offset` when it is the key argument of a `run_name(...)` call.
pub fn key_at(root: Node, src: &str, offset: usize, run_name: &str) -> Option<KeyAt> {
    let string = string_at(root, offset)?;
    let parent = string.parent()?;
    let args = match parent.kind() {
        "argument_list" => {
            let first = parent.named_child(0)?;
            (first.id() == string.id()).then_some(parent)?
        }
        "keyword_argument" => {
            let name = parent.child_by_field_name("name")?;
            (parse::text(name, src) == "action_key").then_some(parent.parent()?)?
        }
        _ => return None,
    };
    let call = args.parent()?;
    if !calls_name(call, src, run_name) {
        return None;
    }
    Some(KeyAt {
        key: parse::literal_str(string, src)?,
        content: string_content_range(string),
    })
}

/// A called tool name under `offset` (functions dialect): the identifier and the action.
pub fn tool_at<'k>(
    root: Node,
    src: &str,
    offset: usize,
    kb: &'k KnowledgeBase,
) -> Option<(TextRange, &'k Action)> {
    for o in [offset, offset.saturating_sub(1)] {
        let node = root.descendant_for_byte_range(o, o)?;
        if node.kind() != "identifier" {
            continue;
        }
        let call = node.parent()?;
        if call.kind() == "call"
            && call
                .child_by_field_name("function")
                .is_some_and(|f| f.id() == node.id())
        {
            if let Some(a) = kb.get(parse::text(node, src)) {
                return Some((parse::range(node), a));
            }
        }
    }
    None
}

/// Markdown for an action: signature with full types, summary, parameters, definition site.
pub fn action_markdown(action: &Action, note: Option<&str>) -> String {
    let mut md = format!("```python\n{}\n```\n", action.signature());
    if let Some(s) = &action.summary {
        let _ = write!(md, "\n{s}\n");
    }
    if let Some(n) = note {
        let _ = write!(md, "\n{n}\n");
    }
    if !action.params.is_empty() {
        md.push_str("\n**Parameters**\n\n");
        for p in &action.params {
            let mut line = format!("- `{}", p.name);
            if let Some(t) = &p.ty {
                let _ = write!(line, ": {t}");
            }
            if let Some(d) = &p.default {
                let _ = write!(line, " = {d}");
            }
            line.push('`');
            if p.required {
                line.push_str(" (required)");
            }
            if let Some(d) = &p.description {
                let _ = write!(line, ": {}", d.lines().next().unwrap_or(""));
            }
            md.push_str(&line);
            md.push('\n');
        }
    }
    if let Some(src) = &action.source {
        let _ = write!(md, "\nDefined in `{}:{}`\n", src.path, src.line);
    }
    md
}

/// Hover text for a raw key as the dispatcher resolves it.
pub fn key_hover_markdown(kb: &KnowledgeBase, raw: &str) -> Option<String> {
    if kb.is_empty() {
        return None;
    }
    let res = kb.resolve(raw);
    match &res {
        Resolution::Exact(i) | Resolution::Dynamic(i) => {
            Some(action_markdown(&kb.actions[*i], None))
        }
        Resolution::Suffix(i) | Resolution::PrefixStrip(i) => {
            let a = &kb.actions[*i];
            let how = if matches!(res, Resolution::Suffix(_)) {
                "unique suffix"
            } else {
                "dropping leading segments"
            };
            let note = format!("`{raw}` resolves to the canonical key `{}` ({how}).", a.key);
            Some(action_markdown(a, Some(&note)))
        }
        Resolution::Ambiguous(candidates) => {
            let mut md = format!("`{raw}` is ambiguous; it matches:\n\n");
            for i in candidates {
                let _ = writeln!(md, "- `{}`", kb.actions[*i].key);
            }
            Some(md)
        }
        Resolution::Pseudo => Some(format!(
            "`{raw}` is a pseudo key shown in prompts; it cannot be called."
        )),
        Resolution::Unknown => {
            let mut md = format!("Unknown action key `{raw}`.");
            let s = kb.suggest(raw, 3);
            if !s.is_empty() {
                md.push_str("\n\nDid you mean:\n\n");
                for s in s {
                    let _ = writeln!(md, "- `{}`", kb.actions[s.action].key);
                }
            }
            Some(md)
        }
    }
}

/// Markdown documentation of a rule (what `cellguard rule CODE` prints).
pub fn rule_markdown(rule: &cellguard_lints::Rule, settings: &Settings) -> String {
    let d = &rule.doc;
    let mut md = format!("# {} ({})\n\n{}\n", rule.name, rule.code, rule.summary);
    let mut section = |title: &str, body: &str, code: bool| {
        if body.is_empty() {
            return;
        }
        if code {
            let _ = write!(md, "\n**{title}**\n\n```python\n{}\n```\n", body.trim_end());
        } else if title.is_empty() {
            let _ = write!(md, "\n{body}\n");
        } else {
            let _ = write!(md, "\n**{title}** {body}\n");
        }
    };
    if d.what != rule.summary && d.what.trim_end_matches('.') != rule.summary.trim_end_matches('.')
    {
        section("", d.what, false);
    }
    section("Why:", d.why, false);
    section("Example", d.example, true);
    section("Use instead", d.fixed_example, true);
    section("Fix safety:", d.fix_safety, false);
    section("Options:", d.options, false);
    section("Source:", d.source, false);
    if let Some(url) = settings.rule_doc_url(rule) {
        let _ = write!(md, "\n[Documentation]({url})\n");
    }
    md
}

/// The rule code (or family prefix) under `offset` inside a suppression comment, with its
/// range (cell offsets) and the hover text.
pub fn suppression_code_hover(
    root: Node,
    src: &str,
    offset: usize,
    settings: &Settings,
) -> Option<(TextRange, String)> {
    let comment = [offset, offset.saturating_sub(1)]
        .into_iter()
        .find_map(|o| {
            let n = root.descendant_for_byte_range(o, o)?;
            (n.kind() == "comment").then_some(n)
        })?;
    let text = parse::text(comment, src);
    let lower = text.to_ascii_lowercase();
    if !(lower.contains("cellguard") || lower.contains("noqa")) {
        return None;
    }
    let rel = offset.checked_sub(comment.start_byte())?.min(text.len());
    let bytes = text.as_bytes();
    // The word at `rel` made of bytes `is_word` accepts.
    let word_at = |is_word: &dyn Fn(u8) -> bool| {
        let mut start = rel;
        while start > 0 && is_word(bytes[start - 1]) {
            start -= 1;
        }
        let mut end = rel;
        while end < bytes.len() && is_word(bytes[end]) {
            end += 1;
        }
        (start, end)
    };
    let range_of = |(start, end): (usize, usize)| {
        TextRange::new(comment.start_byte() + start, comment.start_byte() + end)
    };
    // A rule name (`ignore[unknown-action]`, docs/fixes-and-suppressions.md) is a rule
    // reference like a code (issue 5 S7).
    let name = word_at(&|c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_');
    if let Some(rule) = text.get(name.0..name.1).and_then(rules::find_rule) {
        return Some((range_of(name), rule_markdown(rule, settings)));
    }
    let (start, end) = word_at(&|c: u8| c.is_ascii_alphanumeric());
    let word = text.get(start..end)?;
    if word.is_empty() {
        return None;
    }
    let range = range_of((start, end));
    if let Some(rule) = rules::find_rule(word) {
        return Some((range, rule_markdown(rule, settings)));
    }
    let upper = word.to_ascii_uppercase();
    let family: Vec<_> = rules::all_rules()
        .filter(|r| r.code.starts_with(&upper) && upper.chars().all(|c| c.is_ascii_uppercase()))
        .collect();
    if family.is_empty() {
        return None;
    }
    let mut md = format!("Rules matching `{upper}`:\n\n");
    for r in family {
        let _ = writeln!(md, "- `{}` {}: {}", r.code, r.name, r.summary);
    }
    Some((range, md))
}

/// Hover at file offset `offset`.
pub fn hover(result: &LintResult, offset: usize, enc: PositionEncoding) -> Option<lsp::Hover> {
    let (cell, co) = result.cell_at(offset)?;
    let src = result.cell_text(cell);
    let root = cell.tree.root_node();
    let (range, md) = if let Some(h) = suppression_code_hover(root, src, co, &result.settings) {
        h
    } else if let Some(k) = result
        .settings
        .namespace
        .run
        .as_deref()
        .and_then(|run| key_at(root, src, co, run))
    {
        (k.content, key_hover_markdown(&result.project.kb, &k.key)?)
    } else if let Some((range, action)) = tool_at(root, src, co, &result.project.kb) {
        (range, action_markdown(action, None))
    } else {
        return None;
    };
    Some(lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: md,
        }),
        range: Some(cell_range_to_lsp(result, cell, range, enc)),
    })
}

/// A cell range as an LSP range in the file.
pub fn cell_range_to_lsp(
    result: &LintResult,
    cell: &CellInfo,
    range: TextRange,
    enc: PositionEncoding,
) -> lsp::Range {
    convert::range_of(&result.rope, cell.map.range_to_file(range), enc)
}

/// Go to definition: the source location of the action under `offset`, when the knowledge base
/// recorded one and the file exists.
pub fn definition(
    result: &LintResult,
    offset: usize,
    enc: PositionEncoding,
) -> Option<lsp::Location> {
    let (cell, co) = result.cell_at(offset)?;
    let src = result.cell_text(cell);
    let root = cell.tree.root_node();
    let kb = &result.project.kb;
    let action = match result
        .settings
        .namespace
        .run
        .as_deref()
        .and_then(|run| key_at(root, src, co, run))
    {
        Some(k) => kb.resolve(&k.key).action().map(|i| &kb.actions[i])?,
        None => tool_at(root, src, co, kb)?.1,
    };
    let loc = action.source.as_ref()?;
    let path = locate_source(&loc.path, result)?;
    let line = loc.line.saturating_sub(1);
    let col = loc.column.saturating_sub(1);
    let character = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| {
            let line_text = text.lines().nth(line as usize)?;
            let byte: usize = line_text
                .chars()
                .take(col as usize)
                .map(char::len_utf8)
                .sum();
            let prefix = &line_text[..byte];
            Some(match enc {
                PositionEncoding::Utf8 => prefix.len(),
                PositionEncoding::Utf16 => prefix.encode_utf16().count(),
                PositionEncoding::Utf32 => prefix.chars().count(),
            } as u32)
        })
        .unwrap_or(col);
    let uri = lsp::Uri::from_file_path(&path)?;
    let pos = lsp::Position::new(line, character);
    Some(lsp::Location::new(uri, lsp::Range::new(pos, pos)))
}

/// Finds a KB source path on disk: absolute, or relative to a KB path, the config directory or
/// the working directory.
fn locate_source(recorded: &str, result: &LintResult) -> Option<PathBuf> {
    let p = Path::new(recorded);
    if p.is_absolute() {
        return p.exists().then(|| p.to_path_buf());
    }
    let mut bases: Vec<PathBuf> = Vec::new();
    for k in &result.project.kb_paths {
        if k.is_dir() {
            bases.push(k.clone());
        }
        if let Some(parent) = k.parent() {
            bases.push(parent.to_path_buf());
        }
    }
    for s in &result.project.kb.sources {
        if let Some(parent) = s.parent() {
            bases.push(parent.to_path_buf());
        }
    }
    if let Some(c) = &result.project.config {
        if let Some(parent) = c.path.parent() {
            bases.push(parent.to_path_buf());
        }
    }
    if let Ok(cwd) = std::env::current_dir() {
        bases.push(cwd);
    }
    bases.into_iter().map(|b| b.join(p)).find(|c| c.is_file())
}

/// The scanner's view of the text before the cursor.
#[derive(Debug, Default)]
struct CallScan {
    /// Byte offset of each open bracket, innermost last, with the bracket char.
    open: Vec<(usize, u8)>,
    /// Inside a string at the end: (quote start offset, content start offset, quote char).
    in_string: Option<(usize, usize, u8)>,
    /// Keyword names seen at the innermost bracket's level (`name=`).
    keywords: Vec<Vec<String>>,
    /// True when only whitespace follows the last `(` or `,` of the innermost level
    /// (apart from the identifier being typed).
    at_argument_start: bool,
}

/// Scans Python text (a window ending at the cursor) for brackets, strings and comments.
fn scan(text: &str) -> CallScan {
    let b = text.as_bytes();
    let mut s = CallScan {
        keywords: vec![Vec::new()],
        ..Default::default()
    };
    let mut i = 0;
    let mut last_sep_or_word: Option<usize> = None; // end of last `(`/`,` at innermost level
    while i < b.len() {
        let c = b[i];
        match c {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' => {
                let triple = b.len() >= i + 3 && b[i + 1] == c && b[i + 2] == c;
                let qlen = if triple { 3 } else { 1 };
                let start = i;
                let content = i + qlen;
                let mut j = content;
                let mut closed = false;
                while j < b.len() {
                    if b[j] == b'\\' {
                        j += 2;
                        continue;
                    }
                    if !triple && b[j] == b'\n' {
                        break;
                    }
                    if b[j] == c
                        && (!triple || (b.len() >= j + 3 && b[j + 1] == c && b[j + 2] == c))
                    {
                        closed = true;
                        j += qlen;
                        break;
                    }
                    j += 1;
                }
                if !closed && j >= b.len() {
                    s.in_string = Some((start, content, c));
                    return s;
                }
                i = j;
                s.at_argument_start = false;
                continue;
            }
            b'(' | b'[' | b'{' => {
                s.open.push((i, c));
                s.keywords.push(Vec::new());
                last_sep_or_word = Some(i + 1);
            }
            b')' | b']' | b'}' => {
                if s.open.pop().is_some() {
                    s.keywords.pop();
                }
                last_sep_or_word = None;
            }
            b',' => last_sep_or_word = Some(i + 1),
            b'=' => {
                let next_eq = b.get(i + 1) == Some(&b'=');
                let prev_op = i > 0 && matches!(b[i - 1], b'=' | b'!' | b'<' | b'>');
                if !next_eq && !prev_op {
                    // `name=` at this level: record the identifier before it.
                    let before = text[..i].trim_end();
                    let ident: String = before
                        .chars()
                        .rev()
                        .take_while(|ch| ch.is_alphanumeric() || *ch == '_')
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    if !ident.is_empty() {
                        if let Some(k) = s.keywords.last_mut() {
                            k.push(ident);
                        }
                    }
                } else if next_eq {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    s.at_argument_start = match last_sep_or_word {
        Some(p) => {
            let rest = &text[p.min(text.len())..];
            let rest = rest.trim_start();
            rest.chars().all(|ch| ch.is_alphanumeric() || ch == '_')
        }
        None => false,
    };
    s
}

/// How far before the cursor completion looks (bytes), starting at a line start.
const WINDOW: usize = 4096;

fn window_start(src: &str, cursor: usize) -> usize {
    let mut start = cursor.saturating_sub(WINDOW);
    while start > 0 && !src.is_char_boundary(start) {
        start -= 1;
    }
    if start > 0 {
        // Start at a line start so a string or comment is not cut in half.
        start = src[start..cursor]
            .find('\n')
            .map_or(cursor, |i| start + i + 1);
    }
    start
}

/// The plain name called just before byte `end` of `text` (`run` in `await run (`); empty for
/// an attribute call such as `x.run(` or anything that is not a name.
fn ident_before(text: &str, end: usize) -> &str {
    let head = text[..end].trim_end();
    let start = head
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
        .last()
        .map_or(head.len(), |(i, _)| i);
    if head[..start].trim_end().ends_with('.') {
        return "";
    }
    &head[start..]
}

/// Completion at file offset `offset`: action keys inside the key string of `run(`, parameter
/// names inside the argument list of an action call.
/// The text a completion inserts for action `i`: the spelling the linter accepts
/// (`KnowledgeBase::canonical_key`, the spelling `API002` asks for): its key, or for an action
/// whose middle segment is random per process (`Class.*.name`) its short key when that resolves
/// to it in every process. `None` when no literal spells the action in every process (a
/// dynamic-segment action whose short key is ambiguous): such a key would be flagged, so it is
/// not offered (issue 5 S10).
fn insertable_key(kb: &cellguard_lints::kb::KnowledgeBase, i: usize) -> Option<String> {
    let a = kb.actions.get(i)?;
    let key = kb.canonical_key(i);
    if a.dynamic_segment && (key == a.key || key.split('.').any(|s| s == "*")) {
        return None;
    }
    Some(key.to_string())
}

pub fn completion(
    result: &LintResult,
    offset: usize,
    enc: PositionEncoding,
) -> Vec<lsp::CompletionItem> {
    let Some((cell, co)) = result.cell_at(offset) else {
        return Vec::new();
    };
    let src = result.cell_text(cell);
    let co = co.min(src.len());
    // Never complete inside a comment.
    if let Some(n) = cell
        .tree
        .root_node()
        .descendant_for_byte_range(co.saturating_sub(1), co.saturating_sub(1))
    {
        if n.kind() == "comment" && n.start_byte() < co {
            return Vec::new();
        }
    }
    let kb = &result.project.kb;
    if kb.is_empty() {
        return Vec::new();
    }
    let start = window_start(src, co);
    let window = &src[start..co];
    let sc = scan(window);
    let run_name = result.settings.namespace.run.as_deref();
    if let Some((quote_start, content_start, _quote)) = sc.in_string {
        // Key completion: the string must be the first argument (or `action_key=`) of run(.
        let Some(&(paren, b'(')) = sc.open.last() else {
            return Vec::new();
        };
        let callee = ident_before(window, paren);
        if Some(callee) != run_name {
            return Vec::new();
        }
        let between = window[paren + 1..quote_start].trim();
        let prefix_ok = between.is_empty()
            || between
                .strip_prefix("action_key")
                .is_some_and(|r| r.trim() == "=")
            || between.chars().all(|c| "rRuU".contains(c));
        if !prefix_ok {
            return Vec::new();
        }
        let content_start = start + content_start;
        // The replaced range runs to the end of the key characters after the cursor.
        let tail = src[co..]
            .char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '.'))
            .map_or(src.len(), |(i, _)| co + i);
        let range = cell_range_to_lsp(result, cell, TextRange::new(content_start, tail), enc);
        return kb
            .actions
            .iter()
            .enumerate()
            .filter_map(|(i, a)| Some((a, insertable_key(kb, i)?)))
            .map(|(a, insert)| lsp::CompletionItem {
                // The label is what gets inserted, so no view of the item shows a key the
                // linter flags; the registered key (`Class.*.name`) is shown beside it.
                label: insert.clone(),
                label_details: (insert != a.key).then(|| lsp::CompletionItemLabelDetails {
                    detail: None,
                    description: Some(a.key.clone()),
                }),
                insert_text: Some(insert.clone()),
                kind: Some(lsp::CompletionItemKind::FUNCTION),
                detail: Some(a.signature()),
                documentation: a.summary.as_ref().map(|s| {
                    lsp::Documentation::MarkupContent(lsp::MarkupContent {
                        kind: lsp::MarkupKind::Markdown,
                        value: s.clone(),
                    })
                }),
                filter_text: Some(a.key.clone()),
                sort_text: Some(format!("{}{}", u8::from(a.exclude_from_planning), a.key)),
                text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit::new(
                    range, insert,
                ))),
                ..Default::default()
            })
            .collect();
    }
    // Parameter names.
    let Some(&(paren, b'(')) = sc.open.last() else {
        return Vec::new();
    };
    if !sc.at_argument_start {
        return Vec::new();
    }
    let callee = ident_before(window, paren);
    let args = &window[paren + 1..];
    let action = if Some(callee) == run_name {
        let Some(key) = first_key_literal(args) else {
            return Vec::new();
        };
        match kb.resolve(&key).action() {
            Some(i) => &kb.actions[i],
            None => return Vec::new(),
        }
    } else {
        match kb.get(callee) {
            Some(a) => a,
            None => return Vec::new(),
        }
    };
    let used: Vec<String> = sc.keywords.last().cloned().unwrap_or_default();
    action
        .params
        .iter()
        .filter(|p| !used.contains(&p.name))
        .map(|p| lsp::CompletionItem {
            label: p.name.clone(),
            kind: Some(lsp::CompletionItemKind::FIELD),
            detail: Some(match (&p.ty, &p.default) {
                (Some(t), Some(d)) => format!("{t} = {d}"),
                (Some(t), None) => t.clone(),
                (None, Some(d)) => format!("= {d}"),
                (None, None) => String::new(),
            }),
            documentation: p.description.as_ref().map(|d| {
                lsp::Documentation::MarkupContent(lsp::MarkupContent {
                    kind: lsp::MarkupKind::Markdown,
                    value: d.clone(),
                })
            }),
            insert_text: Some(format!("{}=", p.name)),
            sort_text: Some(format!("{}{}", u8::from(!p.required), p.name)),
            ..Default::default()
        })
        .collect()
}

/// The key in `"key"` or `action_key="key"` at the start of an argument list's text.
fn first_key_literal(args: &str) -> Option<String> {
    let t = args.trim_start();
    let t = match t.strip_prefix("action_key") {
        Some(r) => r.trim_start().strip_prefix('=')?.trim_start(),
        None => t,
    };
    let t = t.trim_start_matches(['r', 'R', 'u', 'U']);
    let q = t.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &t[1..];
    let end = body.find(q)?;
    let key = &body[..end];
    (!key.contains(['\\', '\n'])).then(|| key.to_string())
}

/// The action count of a cell for its inlay hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActionCount {
    /// Actions on the longest execution path, each loop body counted once (SHP001's count).
    pub path: usize,
    /// True when an action is dispatched inside a loop or comprehension (directly or through a
    /// cell function): the count is unbounded, as SHP002 (`action-in-loop`) defines it.
    pub unbounded: bool,
    /// The configured maximum (`max-actions`).
    pub max: u32,
}

/// The path-aware action count of a cell (the longest execution path, counted by the shape
/// rule's own [`PathCounter`], as SHP001 counts it; unbounded when SHP002 would report an
/// action in a loop) and the configured maximum. `None` for a cell without actions.
pub fn action_count(
    cell_src: &str,
    tree: &tree_sitter::Tree,
    settings: &cellguard_lints::Settings,
    kb: &KnowledgeBase,
) -> Option<ActionCount> {
    let nodes = cellguard_lints::nodes::NodeTable::new(tree);
    let model = SemanticModel::build_with_table(&nodes, cell_src, settings, kb);
    if model.actions.is_empty() {
        return None;
    }
    let path = PathCounter::new(&model, &nodes).path(tree.root_node());
    let unbounded = model
        .dispatching_sites()
        .any(|i| !model.sites[i].loops.is_empty());
    Some(ActionCount {
        path: path.count(),
        unbounded,
        max: settings.max_actions,
    })
}

/// Inlay hints `actions N/MAX` at the end of each cell's first line, for cells in `range`.
pub fn inlay_hints(
    result: &LintResult,
    range: TextRange,
    enc: PositionEncoding,
) -> Vec<lsp::InlayHint> {
    let mut hints = Vec::new();
    for cell in &result.cells {
        let src = result.cell_text(cell);
        let Some(count) = action_count(src, &cell.tree, &result.settings, &result.project.kb)
        else {
            continue;
        };
        let max = count.max;
        let first_line_end = src.find('\n').unwrap_or(src.len());
        let first_line_end = src[..first_line_end].trim_end_matches('\r').len();
        let at = cell.map.to_file(first_line_end);
        if at < range.start || at > range.end {
            continue;
        }
        hints.push(lsp::InlayHint {
            position: convert::position_of(&result.rope, at, enc),
            label: lsp::InlayHintLabel::String(if count.unbounded {
                format!("actions ∞/{max}")
            } else {
                format!("actions {}/{max}", count.path)
            }),
            kind: None,
            text_edits: None,
            tooltip: Some(lsp::InlayHintTooltip::String(if count.unbounded {
                format!(
                    "an action is dispatched inside a loop or comprehension, so the number of actions is unbounded (SHP002); {} on the longest path counting each loop body once; at most {max} allowed (SHP001)",
                    count.path
                )
            } else {
                format!(
                    "{} action call(s) on the longest execution path of this cell; at most {max} allowed (SHP001)",
                    count.path
                )
            })),
            padding_left: Some(true),
            padding_right: None,
            data: None,
        });
    }
    hints
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scanner_finds_the_open_call_and_strings() {
        let s = scan("x = await run(\"Agent.get");
        assert_eq!(s.in_string, Some((14, 15, b'"')));
        assert_eq!(s.open.last().map(|o| o.0), Some(13));
        let s = scan("await run('A.b', x=1, ");
        assert!(s.in_string.is_none());
        assert!(s.at_argument_start);
        assert_eq!(s.keywords.last().unwrap(), &vec!["x".to_string()]);
        let s = scan("await run('A.b', x=(1 == 2), y");
        assert!(s.at_argument_start);
        assert_eq!(s.keywords.last().unwrap(), &vec!["x".to_string()]);
        let s = scan("await run('A.b', x=fo");
        assert!(!s.at_argument_start);
        let s = scan("s = '''a(\nb'''; f(");
        assert!(s.in_string.is_none());
        assert_eq!(s.open.len(), 1);
        let s = scan("# run(\"x\nrun(");
        assert_eq!(s.open.len(), 1);
    }

    #[test]
    fn first_key_literal_forms() {
        assert_eq!(first_key_literal(" \"A.b\", x=1").as_deref(), Some("A.b"));
        assert_eq!(first_key_literal("action_key = 'k'").as_deref(), Some("k"));
        assert_eq!(first_key_literal("key, x=1"), None);
    }

    #[test]
    fn ident_before_skips_whitespace() {
        assert_eq!(ident_before("await run (", 10), "run");
        assert_eq!(ident_before("x.run(", 5), "");
        assert_eq!(ident_before("(run(", 4), "run");
    }
}
