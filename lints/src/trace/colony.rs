//! Colony recordings (colony-reference §5.3, §5.7–5.9):
//!
//! - `colony-replay/1` objects (`{format, agent_id, semantics_epoch, cells: [...]}`, §5.8);
//! - the codegen-iterations endpoint output (a list of iterations with `step_index`,
//!   `generated_code`, `success`, `error`, `start_wall`, `run_call_trace`; or
//!   `{iterations: [...]}`), also as JSON Lines;
//! - a bare `run_call_trace` list (one cell);
//! - span exports (a list of span rows, or `{spans: [...]}`): the `EXECUTE_CODE` action spans
//!   carrying `metadata.run_call_trace` are the cells, ordered by `start_wall`; their child action
//!   spans give call times. One trace per agent (`FILE#N` when there are several).
//!
//! Replay reconstruction follows §5.9: `signal_completion` entries become `completion` records;
//! `blocked: true` entries are calls with status `blocked` whose `action_key` is the raw key the
//! guardrail saw; every other entry is a dispatched call whose `action_key` is the resolved key.
//! The raw key of a dispatched call is recovered from the cell code: the string literal of a
//! `run(...)` call (first argument or `action_key=`) that the dispatcher would resolve to the
//! recorded key (equal, a dot-suffix of it, or it with leading segments added), taken in source
//! order; when none matches, the raw key is the resolved key. The semantics epoch comes from the
//! recording (`semantics_epoch`) or, failing that, from the date of the first cell.

use super::convert::{self, opt_str};
use super::doc::{arr, map, obj, root_items, DocCtx, Item, Root};
use super::model::*;
use super::TraceError;
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tree_sitter::Node;

/// Converts a Colony document. A list of cells (codegen iterations, colony-replay `cells`) is
/// returned unconverted after its header, to be converted one cell at a time
/// ([`Cells::step`], issue 6 T5-12); any other shape is converted into `ctx` here (`None`).
///
/// Errors: a document with none of the shapes above.
pub(crate) fn read<'a>(ctx: &mut DocCtx, root: &Root<'a>) -> Result<Option<Cells<'a>>, TraceError> {
    if let Root::Value(v) = root {
        if let Some(o) = obj(v) {
            if let Some(cells) = o.get("cells").or(o.get("iterations")).copied() {
                let m = map(v).unwrap_or_default();
                let Some(list) = arr(cells) else {
                    return Err(ctx.error_at(cells, "`cells` must be a list"));
                };
                let items: Vec<Item> = list.into_iter().map(|r| (ctx.line_of(r), Ok(r))).collect();
                ctx.start_trace(None, Format::Colony);
                let line = ctx.line_of(v);
                return Ok(Some(Cells::start(ctx, items, &m, line)));
            }
            if let Some(spans) = o.get("spans").copied() {
                let Some(list) = arr(spans) else {
                    return Err(ctx.error_at(spans, "`spans` must be a list"));
                };
                let items: Vec<Item> = list.into_iter().map(|r| (ctx.line_of(r), Ok(r))).collect();
                span_traces(ctx, &items);
                return Ok(None);
            }
            if o.contains_key("run_call_trace") || o.contains_key("step_index") {
                ctx.start_trace(None, Format::Colony);
                let line = ctx.line_of(v);
                cells_trace(ctx, &[(line, Ok(*v))], &Map::new(), line);
                return Ok(None);
            }
            return Err(ctx.error_at(
                v,
                "not a Colony recording (expected `cells`, `iterations`, `spans` or `run_call_trace`)",
            ));
        }
    }
    let items = root_items(ctx, root).unwrap_or_default();
    let first = items
        .iter()
        .find_map(|(_, r)| r.as_ref().ok().and_then(|v| obj(v)));
    let Some(first) = first else {
        ctx.start_trace(None, Format::Colony);
        for (line, item) in &items {
            if let Err(e) = item {
                ctx.skip(*line, e.clone());
            } else {
                ctx.skip(*line, "a Colony record must be a JSON object");
            }
        }
        return Ok(None);
    };
    if first.contains_key("span_id") {
        span_traces(ctx, &items);
    } else if first.contains_key("call_index") && !first.contains_key("run_call_trace") {
        // A bare run-call-trace: one cell.
        ctx.start_trace(None, Format::Colony);
        let line = items.first().map_or(1, |i| i.0);
        header(ctx, line, &Map::new(), None);
        ctx.record(line, Record::Cell(CellRecord::default()));
        entries(
            ctx,
            &items,
            None,
            None,
            None,
            &[],
            &mut Approvals::default(),
        );
    } else {
        ctx.start_trace(None, Format::Colony);
        let line = items.first().map_or(1, |i| i.0);
        return Ok(Some(Cells::start(ctx, items, &Map::new(), line)));
    }
    Ok(None)
}

/// The epoch of a recording that started at `wall` (Unix seconds).
pub(crate) fn epoch_of_time(wall: f64) -> Epoch {
    let t0620 = convert::parse_rfc3339("2026-06-20T00:00:00Z").unwrap_or(f64::MAX);
    let t0624 = convert::parse_rfc3339("2026-06-24T00:00:00Z").unwrap_or(f64::MAX);
    if wall < t0620 {
        Epoch::Pre0620
    } else if wall < t0624 {
        Epoch::Mid0620
    } else {
        Epoch::Current
    }
}

fn header(ctx: &mut DocCtx, line: u64, root: &Map<String, Value>, first_wall: Option<f64>) {
    let epoch = root
        .get("semantics_epoch")
        .or(root.get("epoch"))
        .and_then(Value::as_str)
        .and_then(|s| Epoch::parse(s).ok())
        .or(first_wall.map(epoch_of_time));
    ctx.record(
        line,
        Record::Header(Box::new(Header {
            format: root
                .get("format")
                .and_then(Value::as_str)
                .unwrap_or("colony")
                .to_string(),
            version: None,
            source: Some("colony".into()),
            agent_id: root
                .get("agent_id")
                .and_then(Value::as_str)
                .map(str::to_string),
            epoch,
            goals: root.get("goals").and_then(Value::as_array).map(|g| {
                g.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            }),
            system_prompt: None,
            extra: Map::new(),
        })),
    );
}

/// Cell objects (colony-replay `cells` or codegen iterations), in order.
fn cells_trace(ctx: &mut DocCtx, items: &[Item], root: &Map<String, Value>, line: u64) {
    let mut cells = Cells::start(ctx, items.to_vec(), root, line);
    while cells.step(ctx) {}
}

/// The cells of one trace (colony-replay `cells` or codegen iterations), converted one at a
/// time ([`Cells::step`]) so that a reader holds the records of one cell, not those of the
/// whole recording (issue 6 T5-12): the items not yet converted, the next one's number, and
/// the approvals seen so far.
pub(crate) struct Cells<'a> {
    items: std::vec::IntoIter<Item<'a>>,
    state: CellState,
}

/// What the header of a list of cells takes from the cells themselves: the date of the first
/// cell and the first `agent_id`, each from the first item that has one ([`HeaderFacts::learn`]
/// on the items in order). A streaming reader learns them ahead of the cells it converts.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct HeaderFacts {
    /// The first item's date (Unix seconds).
    first_wall: Option<f64>,
    agent_id: Option<String>,
}

impl HeaderFacts {
    /// True when no later item can change the facts.
    pub(crate) fn complete(&self) -> bool {
        self.first_wall.is_some() && self.agent_id.is_some()
    }

    /// The keys an item may give a fact still unknown under (none when [`Self::complete`]).
    pub(crate) fn wanted_keys(&self) -> Vec<&'static str> {
        let mut keys = Vec::new();
        if self.first_wall.is_none() {
            keys.extend(["start_wall", "child_action_spans"]);
        }
        if self.agent_id.is_none() {
            keys.push("agent_id");
        }
        keys
    }

    /// Takes the facts item `r` gives that no item before it gave.
    pub(crate) fn learn(&mut self, r: &RawValue) {
        // The date of the first cell: its `start_wall` (codegen iterations) or, for cells
        // without one (`colony-replay/1`), the earliest `start_wall` of its child action spans,
        // so the same recording gets the same epoch in either shape (issue 6 T4-5).
        // An item is parsed whole only when it has one of the keys looked for (or cannot be
        // read as an object cheaply): a recording without them costs no second parse.
        let o = obj(r);
        let may_have = |keys: &[&str]| {
            o.as_ref()
                .is_none_or(|o| keys.iter().any(|k| o.contains_key(*k)))
        };
        let want_wall =
            self.first_wall.is_none() && may_have(&["start_wall", "child_action_spans"]);
        let want_agent = self.agent_id.is_none() && may_have(&["agent_id"]);
        if !want_wall && !want_agent {
            return;
        }
        let Some(m) = map(r) else {
            return;
        };
        if want_wall {
            let wall = m
                .get("start_wall")
                .and_then(Value::as_f64)
                .or_else(|| {
                    m.get("child_action_spans")?
                        .as_array()?
                        .iter()
                        .filter_map(|s| s.get("start_wall")?.as_f64())
                        .min_by(f64::total_cmp)
                })
                .map(convert::unix_seconds);
            self.first_wall = wall;
        }
        if want_agent {
            self.agent_id = m
                .get("agent_id")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
    }
}

/// The conversion state of a list of cells after its header: the next cell's number and the
/// approvals seen so far.
pub(crate) struct CellState {
    n: usize,
    approvals: Approvals,
}

impl CellState {
    /// Emits the trace's header at `line` (the fields of `root`, the document that holds the
    /// list or none, completed by `facts`) and returns the state before the first cell.
    pub(crate) fn start(
        ctx: &mut DocCtx,
        facts: &HeaderFacts,
        root: &Map<String, Value>,
        line: u64,
    ) -> Self {
        let mut root = root.clone();
        if !root.contains_key("agent_id") {
            if let Some(a) = &facts.agent_id {
                root.insert("agent_id".into(), Value::String(a.clone()));
            }
        }
        header(ctx, line, &root, facts.first_wall);
        CellState {
            n: 0,
            approvals: Approvals::default(),
        }
    }

    /// Converts the next cell, read at `line`, into `ctx`'s events (a skip when it is no cell).
    pub(crate) fn cell(&mut self, ctx: &mut DocCtx, line: u64, item: Result<&RawValue, String>) {
        let n = self.n;
        self.n += 1;
        cell(ctx, n, line, item, &mut self.approvals);
    }
}

impl<'a> Cells<'a> {
    /// Emits the trace's header at `line`: the fields of the `root` object (the document that
    /// holds the list, or none), the `agent_id` of the first item with one when `root` has
    /// none, and the epoch from the date of the first cell. The cells follow, one per
    /// [`Cells::step`].
    fn start(ctx: &mut DocCtx, items: Vec<Item<'a>>, root: &Map<String, Value>, line: u64) -> Self {
        let mut facts = HeaderFacts::default();
        for (_, r) in &items {
            if facts.complete() {
                break;
            }
            if let Ok(r) = r {
                facts.learn(r);
            }
        }
        let state = CellState::start(ctx, &facts, root, line);
        Cells {
            items: items.into_iter(),
            state,
        }
    }

    /// Converts the next cell into `ctx`'s events (a skip when it is no cell); false when every
    /// cell was converted.
    pub(crate) fn step(&mut self, ctx: &mut DocCtx) -> bool {
        let Some((line, item)) = self.items.next() else {
            return false;
        };
        self.state.cell(ctx, line, item);
        true
    }
}

/// Converts cell number `n` (0-based) of a trace, read at `line`: its `cell` record, the
/// approvals its prompt shows, then its run-call-trace entries.
fn cell(
    ctx: &mut DocCtx,
    n: usize,
    line: u64,
    item: Result<&RawValue, String>,
    approvals: &mut Approvals,
) {
    let (o, m) = match item {
        Ok(v) => match (obj(v), map(v)) {
            (Some(o), Some(m)) => (o, m),
            _ => {
                ctx.skip(line, "a cell must be a JSON object");
                return;
            }
        },
        Err(e) => {
            ctx.skip(line, e);
            return;
        }
    };
    const CELL_KEYS: [&str; 8] = [
        "run_call_trace",
        "code",
        "generated_code",
        "iteration",
        "step_index",
        "cell_success",
        "action_id",
        "agent_step_span_id",
    ];
    let has_trace_metadata = o
        .get("metadata")
        .and_then(|md| obj(md))
        .is_some_and(|md| md.contains_key("run_call_trace"));
    if !has_trace_metadata && !CELL_KEYS.iter().any(|k| o.contains_key(*k)) {
        ctx.skip(
            line,
            "not a Colony cell (expected `run_call_trace`, `code`, `generated_code`, `iteration` or `step_index`)",
        );
        return;
    }
    let index = m
        .get("iteration")
        .or(m.get("step_index"))
        .and_then(Value::as_u64)
        .unwrap_or(n as u64);
    let code = match m.get("code").or(m.get("generated_code")) {
        Some(Value::String(s)) => Some(unwrap_code(s)),
        _ => None,
    };
    let success = m
        .get("cell_success")
        .or(m.get("success"))
        .and_then(Value::as_bool);
    let error = m
        .get("cell_error")
        .or(m.get("error"))
        .and_then(Value::as_str)
        .map(str::to_string);
    ctx.accept();
    ctx.record(
        line,
        Record::Cell(CellRecord {
            index: Some(index),
            code: code.clone(),
            success,
            error,
        }),
    );
    // The responses the cell's prompt shows had landed before its code ran.
    if let Some(Value::String(prompt)) = m.get("prompt") {
        approvals.prompt_bindings(ctx, line, prompt);
    }
    let (trace, parsed) = match o.get("run_call_trace") {
        Some(t) => (Some(*t), m.get("run_call_trace")),
        None => (
            o.get("metadata")
                .and_then(|md| obj(md))
                .and_then(|md| md.get("run_call_trace").copied()),
            m.get("metadata").and_then(|md| md.get("run_call_trace")),
        ),
    };
    let spans: Vec<(f64, Option<f64>)> = o
        .get("child_action_spans")
        .and_then(|s| arr(s))
        .map(|list| {
            let mut t: Vec<(f64, Option<f64>)> = list
                .iter()
                .filter_map(|s| map(s))
                .filter_map(|s| {
                    Some((
                        convert::unix_seconds(s.get("start_wall")?.as_f64()?),
                        s.get("end_wall")
                            .and_then(Value::as_f64)
                            .map(convert::unix_seconds),
                    ))
                })
                .collect();
            t.sort_by(|a, b| a.0.total_cmp(&b.0));
            t
        })
        .unwrap_or_default();
    if let Some(t) = trace {
        match arr(t) {
            Some(list) => {
                let list: Vec<Item> = list.into_iter().map(|r| (ctx.line_of(r), Ok(r))).collect();
                // The entries as the cell's parse read them (the same values each entry's own
                // parse gives), so they are not parsed again.
                let parsed = parsed.and_then(Value::as_array).map(Vec::as_slice);
                entries(
                    ctx,
                    &list,
                    parsed,
                    Some(index),
                    code.as_deref(),
                    &spans,
                    approvals,
                );
            }
            None => ctx.warn(
                line,
                "`run_call_trace` is not a list; cell replayed without calls",
            ),
        }
    }
}

/// Unwraps Colony's schema-constrained `{"code": "..."}` envelope (colony-reference §2.9).
fn unwrap_code(s: &str) -> String {
    let t = s.trim();
    if t.starts_with('{') {
        if let Ok(Value::Object(o)) = super::doc::value(t) {
            if let Some(c) = o.get("code") {
                return match c {
                    Value::String(c) => c.clone(),
                    other => other.to_string(),
                };
            }
        }
    }
    s.to_string()
}

/// The action-key literals of the `run(...)` calls of a cell, in source order. Fenced code is
/// taken from its python (or untagged) blocks.
pub fn run_literals(code: &str) -> Vec<String> {
    run_sites(code).literals
}

/// The `run(...)` call sites of a cell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSites {
    /// The action-key literals, in source order.
    pub literals: Vec<String>,
    /// Every call site has a literal key (no `run(k)` with a variable key).
    pub all_literal: bool,
    /// Every call site runs at most once, in source order: none is inside a branch, loop,
    /// comprehension, `try`, conditional expression, `and`/`or`, lambda or function definition.
    pub straight: bool,
}

/// Nodes under which a call site may run zero times, several times, or out of source order.
const NOT_STRAIGHT: &[&str] = &[
    "if_statement",
    "for_statement",
    "while_statement",
    "try_statement",
    "match_statement",
    "list_comprehension",
    "set_comprehension",
    "dictionary_comprehension",
    "generator_expression",
    "conditional_expression",
    "boolean_operator",
    "lambda",
    "function_definition",
    "class_definition",
];

/// Parents under which an identifier is only read (with the field it must be in, if any).
const READ_PARENTS: &[(&str, Option<&str>)] = &[
    ("argument_list", None),
    ("keyword_argument", Some("value")),
    ("binary_operator", None),
    ("comparison_operator", None),
    ("boolean_operator", None),
    ("not_operator", None),
    ("unary_operator", None),
    ("conditional_expression", None),
    ("parenthesized_expression", None),
    ("interpolation", None),
    ("return_statement", None),
    ("expression_statement", None),
    ("expression_list", None),
    ("list", None),
    ("set", None),
    ("tuple", None),
    ("pair", None),
    ("await", None),
    ("subscript", None),
    ("attribute", Some("object")),
    ("call", Some("function")),
    ("assignment", Some("right")),
    ("augmented_assignment", Some("right")),
];

/// Names through which code can rebind a variable without naming it as a target.
const DYNAMIC_NAMESPACE: &[&str] = &[
    "globals",
    "locals",
    "vars",
    "exec",
    "eval",
    "__import__",
    "__builtins__",
    "setattr",
    "delattr",
];

/// The names of a cell that hold one known string at every point after their binding (issue 6
/// T2, the variable key `k = "x"; await run(k)`): bound exactly once in the cell, by a
/// top-level `NAME = "literal"` statement (a plain or annotated assignment of a string literal,
/// not inside any block), and otherwise only read (an argument, operand, f-string part, the
/// object of an attribute, ...; any other use, such as a `for`, `with ... as`, walrus, import,
/// `del`, `global`, parameter or pattern target, counts as a second binding). A cell that names
/// `globals`, `locals`, `vars`, `exec`, `eval`, `setattr`, `delattr`, `__import__` or
/// `__builtins__` has none. Value: the string and the end byte of the binding statement.
fn cell_constants(root: Node, text: &str) -> FxHashMap<String, (String, usize)> {
    let mut defs: FxHashMap<&str, Vec<(String, usize)>> = FxHashMap::default();
    let mut spoiled: FxHashSet<&str> = FxHashSet::default();
    for node in crate::parse::walk(root) {
        if node.kind() != "identifier" {
            continue;
        }
        let name = crate::parse::text(node, text);
        if DYNAMIC_NAMESPACE.contains(&name) {
            return FxHashMap::default();
        }
        let Some(parent) = node.parent() else {
            continue;
        };
        let field_is = |f: &str| parent.child_by_field_name(f).map(|c| c.id()) == Some(node.id());
        if parent.kind() == "assignment" && field_is("left") {
            let top = parent
                .parent()
                .filter(|p| p.kind() == "expression_statement")
                .is_some_and(|p| p.parent().is_some_and(|m| m.kind() == "module"));
            let value = parent
                .child_by_field_name("right")
                .and_then(|r| crate::parse::literal_str(r, text));
            match value {
                Some(v) if top => defs.entry(name).or_default().push((v, parent.end_byte())),
                _ => {
                    spoiled.insert(name);
                }
            }
            continue;
        }
        let read = READ_PARENTS
            .iter()
            .any(|&(k, f)| parent.kind() == k && f.is_none_or(field_is))
            // `del k, j`, `with x as (k, j)`: a tuple or list there is a target.
            && !std::iter::successors(Some(parent), |n| n.parent())
                .take_while(|n| !matches!(n.kind(), "block" | "module"))
                .any(|n| matches!(n.kind(), "delete_statement" | "as_pattern_target"));
        if !read {
            spoiled.insert(name);
        }
    }
    defs.into_iter()
        .filter(|(n, d)| d.len() == 1 && !spoiled.contains(n))
        .filter_map(|(n, mut d)| d.pop().map(|v| (n.to_string(), v)))
        .collect()
}

/// The key of a `run(...)` key argument: a string literal, or a name that holds a known string
/// there ([`cell_constants`]: the use is after the binding and not inside a function, lambda
/// or class body, which could run at another time).
fn key_text(
    node: Node,
    text: &str,
    constants: &FxHashMap<String, (String, usize)>,
) -> Option<String> {
    if let Some(k) = crate::parse::literal_str(node, text) {
        return Some(k);
    }
    if node.kind() != "identifier" {
        return None;
    }
    let (value, bound_at) = constants.get(crate::parse::text(node, text))?;
    let mut up = node.parent();
    while let Some(n) = up {
        if matches!(
            n.kind(),
            "function_definition" | "lambda" | "class_definition"
        ) {
            return None;
        }
        up = n.parent();
    }
    (node.start_byte() >= *bound_at).then(|| value.clone())
}

/// The Python a recorded cell's `code` holds: its python-tagged and untagged fenced blocks when
/// it is Markdown with fences, else the whole text; one entry per block, in order.
fn python_texts(code: &str) -> Vec<String> {
    let mut texts = Vec::new();
    if code.contains("```") {
        for f in crate::extract::markdown::fences(code) {
            if f.lang.is_empty() || crate::extract::markdown::is_python_lang(&f.lang) {
                texts.push(code.get(f.body.as_range()).unwrap_or("").to_string());
            }
        }
    }
    if texts.is_empty() {
        texts.push(code.to_string());
    }
    texts
}

/// [`run_literals`] with what is known about the call sites (issue 6 T2: a literal is paired
/// with a recorded call only when the pairing is certain). A key held in a variable counts as a
/// literal when the variable holds one known string there ([`cell_constants`]).
pub fn run_sites(code: &str) -> RunSites {
    let texts = python_texts(code);
    let mut out = Vec::new();
    let (mut all_literal, mut straight) = (true, true);
    for text in &texts {
        let text = &crate::source::python_newlines(text);
        let tree = crate::parse::parse(text, None);
        let mut constants = None;
        for node in crate::parse::walk(tree.root_node()) {
            if node.kind() != "call" {
                continue;
            }
            let Some(func) = node.child_by_field_name("function") else {
                continue;
            };
            if func.kind() != "identifier" || crate::parse::text(func, text) != "run" {
                continue;
            }
            let Some(args) = node.child_by_field_name("arguments") else {
                continue;
            };
            let mut cursor = args.walk();
            let mut key = None;
            for (i, a) in args.named_children(&mut cursor).enumerate() {
                if a.kind() == "keyword_argument" {
                    let name = a.child_by_field_name("name");
                    if name.map(|n| crate::parse::text(n, text)) == Some("action_key") {
                        let consts =
                            constants.get_or_insert_with(|| cell_constants(tree.root_node(), text));
                        key = a
                            .child_by_field_name("value")
                            .and_then(|v| key_text(v, text, consts));
                    }
                } else if i == 0 {
                    let consts =
                        constants.get_or_insert_with(|| cell_constants(tree.root_node(), text));
                    key = key_text(a, text, consts);
                }
            }
            let mut up = node.parent();
            while let Some(n) = up {
                if NOT_STRAIGHT.contains(&n.kind()) {
                    straight = false;
                }
                up = n.parent();
            }
            match key {
                Some(k) => out.push(k),
                None => all_literal = false,
            }
        }
    }
    RunSites {
        literals: out,
        all_literal,
        straight: straight && all_literal,
    }
}

/// Classes whose handler certainly catches Colony's `GuardrailBlockedError` (which derives from
/// `Exception`), when the cell does not bind the name itself.
const CATCHES_BLOCK: &[&str] = &["Exception", "BaseException"];

/// The block's own class. A Colony cell has no such name (colony-reference §2.1), and every
/// `import` fails there (§2.7): a handler naming it raises `NameError` when a block reaches it,
/// unless the cell itself imported the name (issue 6 T6-2).
const BLOCK_CLASS: &str = "GuardrailBlockedError";

/// Builtin constants that start with a capital letter, like the exception classes.
const BUILTIN_CONSTANTS: &[&str] = &["Ellipsis", "False", "None", "NotImplemented", "True"];

/// True for a builtin exception class (warnings included) that is not one of
/// `GuardrailBlockedError`'s bases (`Exception`, `BaseException`): a handler naming only these
/// (and not rebinding them) lets the block pass. The classes are the capitalised names of
/// [`crate::semantic::PYTHON_BUILTINS`] (CPython 3.11's `dir(builtins)`) less its constants.
fn is_other_builtin_exception(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && crate::semantic::is_builtin(name)
        && !BUILTIN_CONSTANTS.contains(&name)
        && !CATCHES_BLOCK.contains(&name)
}

/// Ancestors an identifier may sit in while still being (part of) a binding target:
/// `Exception, x = ...`, `for (Exception, y) in ...`, `from m import Exception`.
const TARGET_WRAPPERS: &[&str] = &[
    "pattern_list",
    "tuple_pattern",
    "list_pattern",
    "tuple",
    "list",
    "parenthesized_expression",
    "list_splat_pattern",
    "dotted_name",
    "as_pattern_target",
];

/// How the cell binds a name (anywhere in its code).
#[derive(Debug, Clone, Copy, Default)]
struct Binding {
    /// By an `import` (`import m`, `from m import X`, `... as X`).
    import: bool,
    /// Otherwise (`X = ...`, `for X in ...`, `def X():`, `except E as X`, ...).
    other: bool,
}

/// The names the cell binds itself (`Exception = KeyError`, `for Exception in ...`, `import x
/// as Exception`, `def Exception():`, `from errors import GuardrailBlockedError`, ...): a
/// handler naming a rebound class may not catch what its builtin catches (issue 6 T5-4), and
/// one naming `GuardrailBlockedError` catches it only when the cell imported it (T6-2).
fn bound_names<'t>(root: Node, text: &'t str) -> FxHashMap<&'t str, Binding> {
    let mut out: FxHashMap<&str, Binding> = FxHashMap::default();
    for node in crate::parse::walk(root) {
        if node.kind() != "identifier" {
            continue;
        }
        let name = crate::parse::text(node, text);
        // A bare name in a `case` pattern is a capture: `case Exception:` binds it (T6-13).
        let capture = node
            .parent()
            .is_some_and(|p| p.kind() == "dotted_name" && p.named_child_count() == 1)
            && std::iter::successors(node.parent(), |n| n.parent())
                .take_while(|n| n.kind() != "block")
                .any(|n| n.kind() == "case_pattern");
        if capture {
            out.entry(name).or_default().other = true;
            continue;
        }
        if let Some(parent) = binding_parent(node) {
            let b = out.entry(name).or_default();
            match parent.kind() {
                "import_from_statement" | "import_statement" | "aliased_import" => b.import = true,
                _ => b.other = true,
            }
        }
    }
    out
}

/// The statement that binds the identifier `node`, when `node` is (part of) a binding target:
/// an assignment's or `for`'s left side, a walrus, `def`/`class` name, an import, a `with ... as`
/// or `except ... as` alias. `None` for a read (or a `case` capture, see [`bound_names`]).
fn binding_parent(node: Node) -> Option<Node> {
    let mut child = node;
    let mut up = node.parent();
    while let Some(n) = up.filter(|n| TARGET_WRAPPERS.contains(&n.kind())) {
        child = n;
        up = n.parent();
    }
    let parent = up?;
    let field_is = |f: &str| parent.child_by_field_name(f).map(|c| c.id()) == Some(child.id());
    let binds = match parent.kind() {
        "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
            field_is("left")
        }
        "named_expression"
        | "function_definition"
        | "class_definition"
        | "import_from_statement"
        | "import_statement" => field_is("name"),
        "aliased_import" => field_is("alias"),
        "with_item" | "except_clause" | "as_pattern" => {
            field_is("alias") || child.kind() == "as_pattern_target"
        }
        _ => false,
    };
    binds.then_some(parent)
}

/// Whether a handler (or `contextlib.suppress(...)`) catches a `GuardrailBlockedError`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Catches {
    /// Certainly not: it names only builtin classes that are not its bases.
    No,
    /// Certainly.
    Yes,
    /// Unknown: a class the cell binds itself or does not bind at all (`NameError` when a
    /// block reaches the handler), or an expression the replay cannot read.
    Unknown,
}

/// How the exception class expression `n` treats `GuardrailBlockedError`. `entered`: the
/// expression was evaluated without error whenever the code under it ran (the argument of a
/// `suppress(...)` entered before its body), so a name it uses is bound.
fn class_catches(n: Node, text: &str, bound: &FxHashMap<&str, Binding>, entered: bool) -> Catches {
    let t = crate::parse::text(n, text);
    match n.kind() {
        "identifier" => match bound.get(t) {
            Some(b) if t == BLOCK_CLASS && b.import && !b.other => Catches::Yes,
            Some(_) => Catches::Unknown,
            None if CATCHES_BLOCK.contains(&t) => Catches::Yes,
            None if t == BLOCK_CLASS && entered => Catches::Yes,
            None if is_other_builtin_exception(t) => Catches::No,
            None => Catches::Unknown,
        },
        "attribute" => {
            let root = t.split('.').next().unwrap_or(t).trim();
            let last = t.rsplit('.').next().unwrap_or(t).trim();
            let imported = bound.get(root).is_some_and(|b| b.import && !b.other);
            if !(imported || entered) {
                Catches::Unknown
            } else if last == BLOCK_CLASS || CATCHES_BLOCK.contains(&last) {
                Catches::Yes
            } else {
                Catches::Unknown
            }
        }
        "parenthesized_expression" | "tuple" => {
            // The whole tuple is evaluated before it is matched: one unknown name decides.
            let mut c = n.walk();
            let parts: Vec<Catches> = n
                .named_children(&mut c)
                .filter(|p| !p.is_extra())
                .map(|p| class_catches(p, text, bound, entered))
                .collect();
            if parts.is_empty() || parts.contains(&Catches::Unknown) {
                Catches::Unknown
            } else if parts.contains(&Catches::Yes) {
                Catches::Yes
            } else {
                Catches::No
            }
        }
        _ => Catches::Unknown,
    }
}

/// How the handler `clause` (an `except_clause`, also `except*`) treats a
/// `GuardrailBlockedError`: a bare `except:` catches it, else its class expression (without
/// `as e`) decides ([`class_catches`]).
fn handler_catches(clause: Node, text: &str, bound: &FxHashMap<&str, Binding>) -> Catches {
    let mut cursor = clause.walk();
    let Some(first) = clause
        .named_children(&mut cursor)
        .find(|n| n.kind() != "block" && !n.is_extra())
    else {
        return Catches::Yes; // bare `except:`
    };
    let ty = if first.kind() == "as_pattern" {
        match first.named_child(0) {
            Some(t) => t,
            None => return Catches::Unknown,
        }
    } else {
        first
    };
    class_catches(ty, text, bound, false)
}

/// True when the body of the handler `clause` holds a `raise` or an `assert` (`assert False`
/// in a handler is a common idiom, T6-13): the block (or what replaces it) goes on up.
fn handler_raises(clause: Node) -> bool {
    let mut cursor = clause.walk();
    let body = clause
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "block")
        .last();
    body.is_some_and(|b| {
        crate::parse::walk(b).any(|n| matches!(n.kind(), "raise_statement" | "assert_statement"))
    })
}

/// True when the handler `clause` of the `try` statement `stmt` changes nothing the rest of the
/// cell sees, except names it binds ([`reads_skipped_binding`] checks them): its body holds only
/// `pass`, `...`, constants (a docstring), `print(...)`/`log(...)`/`logger.<level>(...)` calls,
/// assignments of plain names, and a `continue` that ends the loop round anyway (the `try` is
/// the last statement of a loop body); none with an `await`, walrus, `yield`, lambda or
/// `run(...)` in it. Anything else (a `break`, `return`, an attribute or item store, a fallback
/// `await run(...)` that the guardrails may block in its turn) makes what follows the `try`
/// depend on the block in ways the recording cannot show (issue 6 T7-1, T7-7): the replay then
/// cannot tell whether the cell goes on, and the block aborts it (fail-closed).
fn handler_inert(stmt: Node, clause: Node, text: &str) -> bool {
    let mut cursor = clause.walk();
    let Some(body) = clause
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "block")
        .last()
    else {
        return false;
    };
    let last_in_loop = stmt.next_named_sibling().is_none()
        && stmt
            .parent()
            .and_then(|b| b.parent())
            .is_some_and(|l| matches!(l.kind(), "for_statement" | "while_statement"));
    let breaks = handler_breaks(stmt, clause).is_some();
    let mut c = body.walk();
    let inert = body
        .named_children(&mut c)
        .filter(|s| !s.is_extra())
        .all(|stmt| match stmt.kind() {
            "pass_statement" => true,
            "continue_statement" => last_in_loop,
            "break_statement" => breaks,
            "expression_statement" => {
                let mut c = stmt.walk();
                let exprs: Vec<Node> = stmt.named_children(&mut c).collect();
                exprs.len() == 1 && inert_expression(exprs[0], text)
            }
            _ => false,
        });
    inert
}

/// The loop that the handler `clause` of the `try` statement `stmt` leaves: its last statement
/// is a `break` and `stmt` is a statement of the loop's body. `None` otherwise (a `break` that
/// is not last, or from a `try` nested deeper, is not followed: the block then aborts the cell).
fn handler_breaks<'t>(stmt: Node<'t>, clause: Node<'t>) -> Option<Node<'t>> {
    let mut cursor = clause.walk();
    let body = clause
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "block")
        .last()?;
    let mut c = body.walk();
    let last = body
        .named_children(&mut c)
        .filter(|s| !s.is_extra())
        .last()?;
    if last.kind() != "break_statement" {
        return None;
    }
    let lp = stmt.parent().filter(|b| b.kind() == "block")?.parent()?;
    let in_body = lp.child_by_field_name("body").map(|b| b.id()) == stmt.parent().map(|b| b.id());
    (matches!(lp.kind(), "for_statement" | "while_statement") && in_body).then_some(lp)
}

/// Logging functions a handler may call without changing what the cell does next.
const LOG_FUNCTIONS: &[&str] = &["print", "log"];

/// Logger methods (`logger.warning(...)`, `logging.error(...)`) a handler may call.
const LOG_METHODS: &[&str] = &[
    "debug",
    "info",
    "warning",
    "warn",
    "error",
    "exception",
    "critical",
    "log",
];

/// True for an expression statement of an inert handler ([`handler_inert`]).
fn inert_expression(e: Node, text: &str) -> bool {
    let quiet = || {
        !crate::parse::walk(e).any(|n| match n.kind() {
            "await" | "named_expression" | "yield" | "lambda" => true,
            "call" => n
                .child_by_field_name("function")
                .is_some_and(|f| f.kind() == "identifier" && crate::parse::text(f, text) == "run"),
            _ => false,
        })
    };
    match e.kind() {
        "string"
        | "concatenated_string"
        | "ellipsis"
        | "integer"
        | "float"
        | "none"
        | "true"
        | "false" => quiet(),
        "assignment" | "augmented_assignment" => {
            let plain = e.child_by_field_name("left").is_some_and(|l| {
                crate::parse::walk(l)
                    .all(|n| n.kind() == "identifier" || TARGET_WRAPPERS.contains(&n.kind()))
            });
            plain && quiet()
        }
        "call" => {
            let logs = e
                .child_by_field_name("function")
                .is_some_and(|f| match f.kind() {
                    "identifier" => LOG_FUNCTIONS.contains(&crate::parse::text(f, text)),
                    "attribute" => f
                        .child_by_field_name("attribute")
                        .is_some_and(|a| LOG_METHODS.contains(&crate::parse::text(a, text))),
                    _ => false,
                });
            logs && quiet()
        }
        _ => false,
    }
}

/// True when code that a swallowed block skipped (`skipped`: the rest of the catching body
/// from the statement that raised, and the `try`'s `else`), or that only the block made run
/// (`skipped`: the catching handler), binds a name that the cell reads afterwards (issue 6
/// T7-7): `res = await run(...)` blocked, then `res.output` after the `try` raises `NameError`
/// (or reads an older value) in Python; `failed = True` in the handler, then `if not failed:`
/// skips what the recording shows. The recording cannot show either.
/// A read counts from the end of the skipped code on, until the name is rebound by a plain
/// assignment that runs whenever the catching statement `stmt` ran (a statement of the same
/// block); inside a loop around `stmt`, a read before it counts too (a later round).
/// Attribute names and keyword-argument names are not reads of a name.
fn reads_skipped_binding(stmt: Node, skipped: &[std::ops::Range<usize>], text: &str) -> bool {
    let Some(first) = skipped.iter().map(|r| r.start).min() else {
        return false;
    };
    let inside = |b: usize| skipped.iter().any(|r| r.contains(&b));
    let root = std::iter::successors(Some(stmt), |n| n.parent())
        .last()
        .unwrap_or(stmt);
    let names: FxHashSet<&str> = crate::parse::walk(root)
        .filter(|n| n.kind() == "identifier" && inside(n.start_byte()))
        .filter(|n| binding_parent(*n).is_some())
        .map(|n| crate::parse::text(n, text))
        .collect();
    if names.is_empty() {
        return false;
    }
    let loop_start = outer_loop(stmt).map(|r| r.start);
    let mut settled: FxHashSet<&str> = FxHashSet::default();
    for n in crate::parse::walk(root).filter(|n| n.kind() == "identifier") {
        let name = crate::parse::text(n, text);
        let at = n.start_byte();
        if !names.contains(name) || settled.contains(name) || inside(at) {
            continue;
        }
        let not_a_name = n.parent().is_some_and(|p| {
            let field = |f: &str| p.child_by_field_name(f).map(|c| c.id()) == Some(n.id());
            (p.kind() == "attribute" && field("attribute"))
                || (p.kind() == "keyword_argument" && field("name"))
        });
        if not_a_name {
            continue;
        }
        let binding = binding_parent(n);
        if at < first {
            if binding.is_none() && loop_start.is_some_and(|l| at >= l) {
                return true;
            }
            continue;
        }
        match binding {
            None => return true,
            Some(b) => {
                let same_block = b.kind() == "assignment"
                    && b.parent()
                        .filter(|p| p.kind() == "expression_statement")
                        .and_then(|p| p.parent())
                        .map(|p| p.id())
                        == stmt.parent().map(|p| p.id());
                if same_block {
                    settled.insert(name);
                }
            }
        }
    }
    false
}

/// How the `with` statement `w` treats a block raised in its body: `Yes` when it enters
/// `contextlib.suppress(...)` (or a bare `suppress`) of a class that catches
/// `GuardrailBlockedError`, `Unknown` when a `suppress` names only classes of unknown relation,
/// `No` otherwise.
fn with_catches(w: Node, text: &str, bound: &FxHashMap<&str, Binding>) -> Catches {
    let mut out = Catches::No;
    for call in crate::parse::walk(w)
        .take_while(|n| n.kind() != "block")
        .filter(|n| n.kind() == "with_item")
        .filter_map(|item| item.child_by_field_name("value"))
        .filter(|v| v.kind() == "call")
    {
        let func = call
            .child_by_field_name("function")
            .map_or("", |f| crate::parse::text(f, text));
        let Some(args) = call.child_by_field_name("arguments") else {
            continue;
        };
        if !(func == "suppress" || func.ends_with(".suppress")) {
            continue;
        }
        let mut c = args.walk();
        for a in args.named_children(&mut c).filter(|a| !a.is_extra()) {
            match class_catches(a, text, bound, true) {
                Catches::Yes => return Catches::Yes,
                Catches::Unknown => out = Catches::Unknown,
                Catches::No => {}
            }
        }
    }
    out
}

/// Node kinds that run their body any number of times.
const LOOPS: &[&str] = &[
    "for_statement",
    "while_statement",
    "list_comprehension",
    "set_comprehension",
    "dictionary_comprehension",
    "generator_expression",
];

/// Node kinds whose body runs at another time than the code around it.
const FUNCTIONS: &[&str] = &["function_definition", "lambda", "class_definition"];

/// The construct that swallows a block raised at one `run(...)` site (byte ranges of the cell
/// text, one python text of [`python_texts`]).
#[derive(Debug, Clone)]
struct Catch {
    /// The catching `try` (or `with suppress(...)`) statement.
    stmt: std::ops::Range<usize>,
    /// Its body and its `else`: a block leaves them (the recording's calls from them after the
    /// blocked one were never made).
    body: Vec<std::ops::Range<usize>>,
    /// Its handlers: calls from there ran in neither or only one world.
    handlers: Vec<std::ops::Range<usize>>,
    /// The `finally` clauses between the site and the catching statement, which still run.
    keep: Vec<std::ops::Range<usize>>,
    /// Start of the outermost loop inside the catching body around the site: the calls of the
    /// loop's later rounds are skipped too.
    inner_loop: Option<usize>,
    /// The outermost loop around the catching statement (within its function): its later rounds
    /// run every site in it again, after the catching statement.
    outer_loop: Option<std::ops::Range<usize>>,
}

/// A `run(...)` call site of a cell.
#[derive(Debug, Clone)]
struct Site {
    /// Which python text of the cell ([`python_texts`]) holds it.
    text: usize,
    start: usize,
    /// Its key, when known ([`key_text`]).
    key: Option<String>,
    /// Where a block there is swallowed; `None`: it escapes the cell (aborts it), or the
    /// replay cannot tell.
    catch: Option<Catch>,
    /// Innermost function, lambda or class body around it (node id).
    func: Option<usize>,
    /// It may run more than once (a loop or a function body around it).
    repeats: bool,
    /// Ids of the nodes around it that run only on a condition (a branch of an `if`, `match`,
    /// conditional expression, `and`/`or`, a loop body, a handler or `else`), each with its start.
    branches: Vec<(usize, usize)>,
    /// Ids of all nodes around it.
    ancestors: FxHashSet<usize>,
}

/// Node kinds whose children (other than a `try` body or `finally`) run only on a condition.
const BRANCHING: &[&str] = &[
    "if_statement",
    "elif_clause",
    "else_clause",
    "match_statement",
    "case_clause",
    "conditional_expression",
    "boolean_operator",
    "for_statement",
    "while_statement",
    "try_statement",
    "list_comprehension",
    "set_comprehension",
    "dictionary_comprehension",
    "generator_expression",
];

/// The innermost construct that swallows a block raised at `node` (a `run(...)` call): a `try`
/// whose body holds it and whose first handler able to catch it catches it without raising
/// again (an inner `try` whose handlers certainly do not catch, or catch and raise again, passes
/// the exception on), or a `with contextlib.suppress(Exception)`. `None` when the block
/// escapes the cell, or when the replay cannot tell where it goes: a function, lambda or class
/// body in between (the call runs at another time), or a handler that names a class of unknown
/// relation (issue 6 T6-2) before one that catches.
fn catcher(node: Node, text: &str, bound: &FxHashMap<&str, Binding>) -> Option<Catch> {
    let mut keep = Vec::new();
    let mut inner_loop = None;
    let mut below = node;
    let mut prev = node;
    let mut up = node.parent();
    while let Some(n) = up {
        let in_body = n.child_by_field_name("body").map(|b| b.id()) == Some(prev.id());
        let kind = n.kind();
        if FUNCTIONS.contains(&kind) {
            return None;
        }
        if LOOPS.contains(&kind) {
            inner_loop = Some(n.start_byte());
        }
        let swallows = |body: Vec<std::ops::Range<usize>>, handlers, keep| {
            let mut skipped = body.clone();
            skipped[0].start = below.start_byte();
            if reads_skipped_binding(n, &skipped, text) {
                return None;
            }
            Some(Catch {
                stmt: n.byte_range(),
                body,
                handlers,
                keep,
                inner_loop,
                outer_loop: outer_loop(n),
            })
        };
        match kind {
            "try_statement" if in_body => {
                let mut c = n.walk();
                let parts: Vec<Node> = n.named_children(&mut c).collect();
                let handlers: Vec<Node> = parts
                    .iter()
                    .filter(|h| matches!(h.kind(), "except_clause" | "except_group_clause"))
                    .copied()
                    .collect();
                for h in &handlers {
                    match handler_catches(*h, text, bound) {
                        Catches::No => continue,
                        Catches::Unknown => return None,
                        Catches::Yes if handler_raises(*h) => break,
                        Catches::Yes if !handler_inert(n, *h, text) => return None,
                        Catches::Yes if reads_skipped_binding(n, &[h.byte_range()], text) => {
                            return None
                        }
                        Catches::Yes => {
                            let handlers = handlers.iter().map(|h| h.byte_range()).collect();
                            if let Some(lp) = handler_breaks(n, *h) {
                                // The handler leaves the loop: the rest of the loop (this round
                                // and later ones) is skipped, the `try`'s `finally` runs.
                                keep.extend(
                                    parts
                                        .iter()
                                        .filter(|p| p.kind() == "finally_clause")
                                        .map(|p| p.byte_range()),
                                );
                                let skipped = below.start_byte()..lp.end_byte();
                                if reads_skipped_binding(lp, std::slice::from_ref(&skipped), text) {
                                    return None;
                                }
                                return Some(Catch {
                                    stmt: lp.byte_range(),
                                    body: vec![lp.byte_range()],
                                    handlers,
                                    keep,
                                    inner_loop: Some(lp.start_byte()),
                                    outer_loop: outer_loop(lp),
                                });
                            }
                            let mut body = vec![prev.byte_range()];
                            body.extend(
                                parts
                                    .iter()
                                    .filter(|p| p.kind() == "else_clause")
                                    .map(|p| p.byte_range()),
                            );
                            return swallows(body, handlers, keep);
                        }
                    }
                }
                keep.extend(
                    parts
                        .iter()
                        .filter(|p| p.kind() == "finally_clause")
                        .map(|p| p.byte_range()),
                );
            }
            "with_statement" if in_body => match with_catches(n, text, bound) {
                Catches::No => {}
                Catches::Unknown => return None,
                Catches::Yes => return swallows(vec![prev.byte_range()], Vec::new(), keep),
            },
            _ => {}
        }
        below = prev;
        prev = n;
        up = n.parent();
    }
    None
}

/// The outermost loop around `n` inside its function (or the cell), including the function
/// itself (which may be called again).
fn outer_loop(n: Node) -> Option<std::ops::Range<usize>> {
    let mut out = None;
    let mut up = n.parent();
    while let Some(p) = up {
        if LOOPS.contains(&p.kind()) || FUNCTIONS.contains(&p.kind()) {
            out = Some(p.byte_range());
        }
        if FUNCTIONS.contains(&p.kind()) {
            break;
        }
        up = p.parent();
    }
    out
}

/// The `run(...)` sites of a cell's code, in source order, with their keys and catchers.
fn cell_sites(code: &str) -> Vec<Site> {
    let mut out = Vec::new();
    for (ti, text) in python_texts(code).iter().enumerate() {
        let text = &crate::source::python_newlines(text);
        let tree = crate::parse::parse(text, None);
        let mut constants = None;
        let mut bound = None;
        for node in crate::parse::walk(tree.root_node()) {
            if node.kind() != "call" {
                continue;
            }
            let is_run = node
                .child_by_field_name("function")
                .is_some_and(|f| f.kind() == "identifier" && crate::parse::text(f, text) == "run");
            if !is_run {
                continue;
            }
            let Some(args) = node.child_by_field_name("arguments") else {
                continue;
            };
            // The cell's constants are worked out only for a key that is no literal (most
            // keys are literals: the walk over every identifier is then saved, issue 6 T5-17).
            let mut key_of = |v: Node| match crate::parse::literal_str(v, text) {
                Some(k) => Some(k),
                None if v.kind() == "identifier" => {
                    let consts =
                        constants.get_or_insert_with(|| cell_constants(tree.root_node(), text));
                    key_text(v, text, consts)
                }
                None => None,
            };
            let mut key = None;
            let mut c = args.walk();
            for (i, a) in args.named_children(&mut c).enumerate() {
                if a.kind() == "keyword_argument" {
                    if a.child_by_field_name("name")
                        .map(|n| crate::parse::text(n, text))
                        == Some("action_key")
                    {
                        key = a.child_by_field_name("value").and_then(&mut key_of);
                    }
                } else if i == 0 {
                    key = key_of(a);
                }
            }
            let bound = bound.get_or_insert_with(|| bound_names(tree.root_node(), text));
            let (mut func, mut repeats) = (None, false);
            let mut branches = Vec::new();
            let mut ancestors = FxHashSet::default();
            let mut child = node;
            let mut up = node.parent();
            while let Some(p) = up {
                ancestors.insert(p.id());
                let kind = p.kind();
                if FUNCTIONS.contains(&kind) {
                    func = func.or(Some(p.id()));
                    repeats = true;
                }
                repeats |= LOOPS.contains(&kind);
                let unconditional = kind == "try_statement"
                    && (p.child_by_field_name("body").map(|b| b.id()) == Some(child.id())
                        || child.kind() == "finally_clause");
                if BRANCHING.contains(&kind) && !unconditional {
                    branches.push((child.id(), child.start_byte()));
                }
                child = p;
                up = p.parent();
            }
            out.push(Site {
                text: ti,
                start: node.start_byte(),
                key,
                catch: catcher(node, text, bound),
                func,
                repeats,
                branches,
                ancestors,
            });
        }
    }
    out
}

/// True when a site with key `key` (`None`: unknown) could have made the call with key as
/// written `raw`, resolving to `resolved`.
fn site_could_make(key: Option<&str>, raw: &str, resolved: &str) -> bool {
    key.is_none_or(|k| k == raw || resolves_to(k, resolved))
}

/// Where a call site of the cell stands relative to a swallowed block: the recording's calls
/// after the block came first from the rest of the catching body (`inside`, never made once
/// the block is raised), from `finally` clauses on the way (`finally`, made), then, once the
/// recorded run left the catching statement, from anywhere after it (`outside`, made).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Place {
    key: Option<String>,
    /// In the rest of the catching body or its `else` (or in a loop inside it).
    inside: bool,
    /// Reached from the blocked site without a condition (among the catching body's branches).
    straight: bool,
    /// In a `finally` clause between the site and the catching statement.
    finally: bool,
    /// After the catching statement, or in a later round of a loop (or call of a function)
    /// around it.
    outside: bool,
    /// Could run at any time (another function body, a handler of the catching statement).
    anywhere: bool,
}

/// What a swallowed block does to a later recorded call of its cell ([`Swallowed::next_call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterBlock {
    /// From the rest of the catching `try` body or its `else`: never made.
    Skipped,
    /// From a `finally` on the way, or after the catching construct: made (evaluated).
    Runs,
    /// The replay cannot place it (several sites of the cell could have made it, on both sides
    /// of the catching construct, or none): the rest of the cell is treated as aborted
    /// (fail-closed, issue 6 T6-1).
    Unknown,
}

/// A block swallowed inside its cell (issue 6 T4-11, T5-4, T6-1; colony-reference §4.0.1):
/// Python leaves the catching `try` body at the blocked `run()`, so the cell's later calls from
/// the rest of that body (and its `else`) are never made, while calls after the `try` statement
/// (its `finally`, the code after it) are. [`Swallowed::next_call`] tells them apart for each
/// later recorded call of the cell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Swallowed {
    /// Every call site of the cell, in source order.
    sites: Vec<Place>,
    /// A loop inside the catching body goes round the blocked site: its sites can be met in
    /// any order.
    looped: bool,
    /// Inside and `finally` sites before this one were passed by earlier calls (without
    /// `looped`).
    cursor: usize,
    /// A later call was made after the catching construct: every later call runs.
    left: bool,
}

impl Swallowed {
    /// What the block does to the next recorded call of the cell (key as written `raw`,
    /// resolving to `resolved`). The call came from one of the sites whose key could have made
    /// it: from the rest of the catching body when only such sites could have (or when the
    /// first of them is reached from the blocked site without a condition, as the recorded run
    /// finished that body before leaving it), from a `finally` on the way when only such a site
    /// could have, and from after the catching construct when only such sites could have
    /// (from then on every call runs). Anything else is [`AfterBlock::Unknown`].
    pub fn next_call(&mut self, raw: &str, resolved: &str) -> AfterBlock {
        if self.left {
            return AfterBlock::Runs;
        }
        let (mut inside, mut finally, mut outside) = (None, None, false);
        for (i, p) in self.sites.iter().enumerate() {
            if !site_could_make(p.key.as_deref(), raw, resolved) {
                continue;
            }
            if p.anywhere {
                return AfterBlock::Unknown;
            }
            let ahead = self.looped || i >= self.cursor;
            if p.inside && ahead && inside.is_none() {
                inside = Some((i, p.straight));
            }
            if p.finally && ahead && finally.is_none() {
                finally = Some(i);
            }
            outside |= p.outside;
        }
        match (inside, finally, outside) {
            (Some((i, straight)), None, o) if straight || !o => {
                self.cursor = i + 1;
                AfterBlock::Skipped
            }
            (None, Some(i), false) => {
                self.cursor = i + 1;
                AfterBlock::Runs
            }
            (None, None, true) => {
                self.left = true;
                AfterBlock::Runs
            }
            _ => AfterBlock::Unknown,
        }
    }
}

/// How a block of the call with key as written `raw` (resolving to `resolved`) ends in the
/// cell code (issue 6 T4-11, T5-4, T6-1, T6-2; colony-reference §4.0.1): `Some` when it is
/// certainly swallowed, i.e. every `run(...)` call site that could have made the call sits in
/// the body of a `try` whose first handler able to catch `GuardrailBlockedError` does so
/// without raising again (or of a `with contextlib.suppress(Exception)`), with no function,
/// lambda or class body in between, and all of them leave the cell in the same place; `None`
/// when the block may escape (aborts the cell) or the replay cannot place it. A site could have
/// made the call when its key (a literal, or a variable holding one, as in [`run_sites`]) is
/// `raw` or resolves to `resolved`, or when its key is unknown. `before` is the number of the
/// cell's calls before this one: when no site of the cell can run twice (no loop or function
/// around any), the call came from a site at or after that rank. Taken from the cell's python
/// (or untagged) blocks, like [`run_sites`].
///
/// The same as [`CellSites::new`]`(code)`[`.swallowed_block(raw, resolved, before)`](CellSites::swallowed_block);
/// a caller with several blocks in the same code analyses it once with [`CellSites::new`].
pub fn swallowed_block(code: &str, raw: &str, resolved: &str, before: u64) -> Option<Swallowed> {
    CellSites::new(code).swallowed_block(raw, resolved, before)
}

/// The `run(...)` call sites of one cell's code, analysed once (parse, the cell's constants,
/// each site's key, catcher and enclosing constructs; issue 6 T5-17), so that each block in
/// that code is then placed by a lookup over the sites ([`CellSites::swallowed_block`]) instead
/// of a new analysis.
#[derive(Debug, Default)]
pub struct CellSites {
    sites: Vec<Site>,
    /// No site can run twice (no loop or function around any).
    once: bool,
}

impl CellSites {
    /// Analyses the call sites of a cell's `code`.
    pub fn new(code: &str) -> Self {
        let sites = cell_sites(code);
        let once = sites.iter().all(|s| !s.repeats);
        CellSites { sites, once }
    }

    /// How a block of the call with key as written `raw` (resolving to `resolved`), after
    /// `before` earlier calls of its cell, ends in this code: as [`swallowed_block`] says.
    pub fn swallowed_block(&self, raw: &str, resolved: &str, before: u64) -> Option<Swallowed> {
        let sites = &self.sites;
        let mut out: Option<Swallowed> = None;
        for (at, site) in sites.iter().enumerate() {
            if !site_could_make(site.key.as_deref(), raw, resolved)
                || (self.once && (at as u64) < before)
            {
                continue;
            }
            let s = placed(sites, at)?;
            if out.as_ref().is_some_and(|o| *o != s) {
                return None;
            }
            out = Some(s);
        }
        out
    }
}

/// The later call sites of a cell placed relative to a block swallowed at site `at`; `None`
/// when it is not swallowed.
fn placed(sites: &[Site], at: usize) -> Option<Swallowed> {
    let b = &sites[at];
    let catch = b.catch.as_ref()?;
    let within = |r: &[std::ops::Range<usize>], s: usize| r.iter().any(|r| r.contains(&s));
    let places = sites
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut p = Place {
                key: s.key.clone(),
                ..Place::default()
            };
            if s.text != b.text {
                p.outside = s.text > b.text;
                return p;
            }
            if s.func != b.func || within(&catch.handlers, s.start) {
                p.anywhere = true;
                return p;
            }
            p.finally = within(&catch.keep, s.start);
            p.inside = !p.finally
                && within(&catch.body, s.start)
                && (i > at || catch.inner_loop.is_some_and(|l| s.start >= l));
            p.straight = s
                .branches
                .iter()
                .filter(|(_, start)| within(&catch.body, *start))
                .all(|(id, _)| b.ancestors.contains(id));
            p.outside = s.start >= catch.stmt.end
                || catch
                    .outer_loop
                    .as_ref()
                    .is_some_and(|r| r.contains(&s.start))
                || (catch.stmt.contains(&s.start)
                    && !within(&catch.body, s.start)
                    && !within(&catch.handlers, s.start));
            p
        })
        .collect();
    Some(Swallowed {
        sites: places,
        looped: catch.inner_loop.is_some(),
        cursor: 0,
        left: false,
    })
}

/// True when the dispatcher could resolve the literal `raw` to `resolved` (exact, unique
/// suffix, or prefix strip; colony-reference §2.3).
fn resolves_to(raw: &str, resolved: &str) -> bool {
    raw == resolved
        || (resolved.len() > raw.len()
            && resolved.ends_with(raw)
            && resolved.as_bytes()[resolved.len() - raw.len() - 1] == b'.')
        || (raw.len() > resolved.len()
            && raw.ends_with(resolved)
            && raw.as_bytes()[raw.len() - resolved.len() - 1] == b'.')
}

/// Converts one cell's run-call-trace entries: `items` (each with its line), and, when the
/// caller parsed them already, `parsed`, the same entries as values (in the same order, read
/// instead of parsing each item again).
fn entries(
    ctx: &mut DocCtx,
    items: &[Item],
    parsed: Option<&[Value]>,
    cell: Option<u64>,
    code: Option<&str>,
    spans: &[(f64, Option<f64>)],
    approvals: &mut Approvals,
) {
    let sites = code.map(run_sites).unwrap_or_default();
    let literals = &sites.literals;
    let mut cursor = 0usize;
    let mut dispatched = 0usize;
    for (i, (line, item)) in items.iter().enumerate() {
        let m = match parsed.and_then(|p| p.get(i)) {
            Some(Value::Object(m)) => Some(std::borrow::Cow::Borrowed(m)),
            Some(_) => None,
            None => item
                .as_ref()
                .ok()
                .and_then(|r: &&RawValue| map(r))
                .map(std::borrow::Cow::Owned),
        };
        let Some(m) = m else {
            ctx.skip(
                *line,
                match item {
                    Err(e) => e.clone(),
                    Ok(r) => super::doc::not_object(r.get(), "a run-call-trace entry"),
                },
            );
            continue;
        };
        let key = opt_str(&m, "action_key").ok().flatten();
        if key.as_deref() == Some("signal_completion") {
            let success = m.get("success").and_then(Value::as_bool);
            let preview = m
                .get("output_preview")
                .and_then(Value::as_str)
                .unwrap_or("");
            let error = m.get("error").and_then(Value::as_str).unwrap_or("");
            let (reason, suggestions) = match success {
                Some(true) => (
                    preview
                        .strip_prefix("Completion accepted: ")
                        .map(str::to_string),
                    Vec::new(),
                ),
                _ => (
                    error.strip_prefix("Rejected: ").map(str::to_string),
                    preview
                        .split("; ")
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect(),
                ),
            };
            ctx.accept();
            ctx.record(
                *line,
                Record::from(CompletionRecord {
                    cell,
                    allowed: success,
                    reason,
                    suggestions,
                    goals: None,
                    results: None,
                }),
            );
            continue;
        }
        let mut warnings = Vec::new();
        let call = convert::call(&m, &mut warnings);
        for w in warnings {
            ctx.warn(*line, format!("run-call-trace entry: {w}"));
        }
        let mut call = match call {
            Ok(c) => c,
            Err(e) => {
                ctx.skip(*line, format!("malformed run-call-trace entry: {e}"));
                continue;
            }
        };
        call.cell = cell;
        if call.status == CallStatus::Blocked {
            // The key of a blocked entry is the raw key the guardrail saw.
            if call.raw_key.is_none() {
                call.raw_key = call.action_key.take();
            }
        } else {
            if call.raw_key.is_none() {
                if let Some(resolved) = call.action_key.as_deref() {
                    // The key as written, only where the pairing with a call site is certain
                    // (issue 6 T2): straight-line code whose every call site has a literal
                    // (source order pairs), or every call site literal and all that resolve to
                    // this key equal. Otherwise the resolved key stands, with a note.
                    let found = if sites.straight {
                        (cursor..literals.len())
                            .chain(0..cursor.min(literals.len()))
                            .find(|&i| resolves_to(&literals[i], resolved))
                    } else if sites.all_literal {
                        let mut c =
                            (0..literals.len()).filter(|&i| resolves_to(&literals[i], resolved));
                        let first = c.next();
                        first.filter(|&f| c.all(|i| literals[i] == literals[f]))
                    } else {
                        None
                    };
                    match found {
                        Some(i) => {
                            call.raw_key = Some(literals[i].as_str().into());
                            if i >= cursor {
                                cursor = i + 1;
                            }
                        }
                        None if code.is_some() && !sites.straight => ctx.warn(
                            *line,
                            format!(
                                "the key as written of the call of `{resolved}` cannot be told from the cell code (a call site in a branch or loop, or a key that is not a literal); the resolved key is checked as the raw key"
                            ),
                        ),
                        None => {}
                    }
                }
            }
            if let Some(&(start, end)) = spans.get(dispatched) {
                call.start = call.start.or(Some(start));
                call.end = call.end.or(end);
            }
            dispatched += 1;
        }
        ctx.accept();
        let approval = approvals.seen_in_call(&call);
        ctx.record(*line, Record::from(call));
        if let Some(a) = approval {
            approvals.emit(ctx, *line, a);
        }
    }
}

/// Colony's `HumanApprovalCapability` method that opens a request (colony-reference §4.5).
const REQUEST_METHOD: &str = "request_human_approval";
/// Its on-demand lookup of a request's state and response.
const LOOKUP_METHOD: &str = "get_response";

/// The human approvals a Colony recording shows, turned into `approval` records for the
/// `approval-required` guardrail (issue 6 T4-23; colony-reference §4.5 and the KB's
/// `HumanApprovalCapability`):
///
/// - a dispatched, successful `...request_human_approval(question, action_type=T, ...)` whose
///   output (`{ok, request_id}`) names its request id: the request `request_id` covers `T`;
/// - a successful `...get_response(request_id)` whose output (`{ok, state, response:
///   {request_id, choice, explanation, ...}}`) shows a response with a `choice`: an `approval`
///   record right after that call (the response had landed by then);
/// - a cell's `prompt` (codegen iterations) that shows the planner-context binding
///   `human_approval_response:<request_id>` with its value (`{..., choice, explanation}`): an
///   `approval` record at the start of that cell.
///
/// Outputs are read as JSON or as the Python `repr` Colony records (`output_preview`, cut at
/// 200 characters): the quoted `'key': 'value'` pairs found in the text. A response's action
/// type is the one of its request in the same trace; a response to a request the recording does
/// not show has none, so a typed choice (`approve_once`, `approve_all`) then approves nothing
/// (it is reported), while a legacy untyped choice (`approve`, `yes`, ...) approves any gated
/// key, as Colony's store does. A response repeated unchanged (the same binding in every later
/// prompt) is recorded once.
#[derive(Debug, Default)]
struct Approvals {
    /// Request id -> the action type it covers (`None`: untyped).
    requests: FxHashMap<String, Option<String>>,
    /// (request id, choice) already recorded.
    recorded: FxHashSet<(String, String)>,
}

impl Approvals {
    /// The approval a dispatched call shows (a lookup's response), after noting the request a
    /// `request_human_approval` call opened.
    fn seen_in_call(&mut self, call: &CallRecord) -> Option<ApprovalRecord> {
        if call.status != CallStatus::Ok {
            return None;
        }
        let key = call.action_key.as_deref().or(call.raw_key.as_deref())?;
        let method = key.rsplit('.').next().unwrap_or(key);
        if method != REQUEST_METHOD && method != LOOKUP_METHOD {
            return None;
        }
        let output = match call.result.value() {
            Value::String(s) => s,
            Value::Null => return None,
            other => other.to_string(),
        };
        // Only the top-level fields count (issue 6): a `choice` or `request_id` nested deeper
        // (in the response's `extra`, in an echoed `question`) is not the response's.
        let fields = quoted_pairs(&output);
        let field = |k: &str| {
            fields
                .iter()
                .find(|p| p.top() && p.key == k)
                .map(|p| p.value.clone())
        };
        // A lookup's response is the dict under its output's `response` key, or the output
        // itself when it has none (a bare response).
        let has_response = fields.iter().any(|p| p.under("response"));
        let response_field = |k: &str| {
            fields
                .iter()
                .find(|p| {
                    p.key == k
                        && if has_response {
                            p.under("response")
                        } else {
                            p.top()
                        }
                })
                .map(|p| p.value.clone())
        };
        let params = call.params.value();
        let param = |k: &str| params.get(k).and_then(Value::as_str).map(str::to_string);
        if method == REQUEST_METHOD {
            if let Some(id) = field("request_id") {
                let action_type = param("action_type").filter(|t| !t.trim().is_empty());
                self.requests.insert(id, action_type);
            }
            return None;
        }
        if field("state").is_some_and(|s| s != "ready") {
            return None;
        }
        let choice = response_field("choice")?;
        let request_id = response_field("request_id").or_else(|| param("request_id"));
        Some(self.record(request_id, choice, response_field("explanation")))
    }

    /// An approval record for a response to `request_id`, typed by its request.
    fn record(
        &self,
        request_id: Option<String>,
        choice: String,
        explanation: Option<String>,
    ) -> ApprovalRecord {
        let action_type = request_id
            .as_ref()
            .and_then(|id| self.requests.get(id).cloned().flatten());
        ApprovalRecord {
            request_id,
            action_type,
            choice,
            explanation,
            call_id: None,
        }
    }

    /// Records `a` at `line` unless the same response was recorded before; a typed choice
    /// without an action type is reported, saying why it has none: its request is not in the
    /// recording, or the request was recorded without an `action_type` (issue 6 T6-7).
    fn emit(&mut self, ctx: &mut DocCtx, line: u64, a: ApprovalRecord) {
        let id = a.request_id.clone().unwrap_or_default();
        if !self.recorded.insert((id.clone(), a.choice.clone())) {
            return;
        }
        if a.action_type.is_none() && matches!(a.choice.as_str(), "approve_once" | "approve_all") {
            let why = if self.requests.contains_key(&id) {
                format!("its request (`{REQUEST_METHOD}`) was recorded without an `action_type`")
            } else {
                format!("the request (`{REQUEST_METHOD}` with its `action_type`) is not in the recording")
            };
            ctx.warn(
                line,
                format!(
                    "human approval `{}` of request `{id}`: {why}, so the action it approves is unknown and it approves nothing",
                    a.choice
                ),
            );
        }
        ctx.record(line, Record::from(a));
    }

    /// The `human_approval_response:<request_id>` bindings a prompt shows, each with its
    /// value: a `{...}` right after the key (or its closing quote) and a `=` or `:` (spaces
    /// allowed around it), read
    /// up to its matching `}` (at most 2,000 bytes). A mention of the key that is not such a
    /// binding (the agent's own code echoed in the prompt, `bb.get("human_approval_response:r1")`,
    /// or a binding whose value is not a dict) gives nothing, and so does a value whose
    /// `request_id` names another request (issue 6 T6-16: any later dict with a `choice` was
    /// taken). Only a key opening a line outside fenced code counts (T7-2, see below).
    fn prompt_bindings(&mut self, ctx: &mut DocCtx, line: u64, prompt: &str) {
        let prefix = crate::guardrails::approval::RESPONSE_CONTEXT_KEY_PREFIX;
        if !prompt.contains(prefix) {
            return;
        }
        // Only a binding the planner context shows counts (issue 6 T7-2): its key opens a line
        // (after indentation, a `-`/`*` list marker, or the `{`/`,` of a mapping, the key
        // possibly quoted), outside fenced code blocks. The same text inside echoed code (a
        // fence), a comment (`# human_approval_response:...`), a quoted message (`> ...`) or
        // a string is not an approval.
        let mut in_fence = false;
        let mut off = 0;
        let mut echoed = None;
        for text in prompt.split_inclusive('\n') {
            let start = off;
            off += text.len();
            let t = text.trim_start();
            if t.starts_with("```") || t.starts_with("~~~") {
                in_fence = !in_fence;
                continue;
            }
            let mut from = 0;
            while let Some(at) = text[from..].find(prefix) {
                let at = from + at;
                from = at + prefix.len();
                let before = &text[..at];
                let before = before.strip_suffix(['"', '\'']).unwrap_or(before);
                let real = !in_fence
                    && before
                        .chars()
                        .all(|c| matches!(c, ' ' | '\t' | '-' | '*' | '{' | ','));
                let Some((id, request_id, choice, explanation)) =
                    binding_at(&prompt[start + at + prefix.len()..])
                else {
                    continue;
                };
                if !real {
                    echoed.get_or_insert(id);
                    continue;
                }
                let a = self.record(request_id, choice, explanation);
                self.emit(ctx, line, a);
            }
        }
        if let Some(id) = echoed {
            ctx.warn(
                line,
                format!(
                    "`{prefix}{id}` with a choice appears in this prompt only inside code, a comment or quoted text, not as a planner-context binding: not taken as an approval"
                ),
            );
        }
    }
}

/// A prompt binding: its id, and the response's `request_id`, `choice` and `explanation`.
type PromptBinding = (String, Option<String>, String, Option<String>);

/// The binding at `rest` (the text right after `human_approval_response:`). `None` when no
/// `{...}` follows the key (or its closing quote) and a `=` or `:`, when the dict has no
/// top-level `choice`, or when its `request_id` names another request.
fn binding_at(rest: &str) -> Option<PromptBinding> {
    let id_len = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(rest.len());
    let id = &rest[..id_len];
    // A key written quoted (a JSON or `repr` mapping: `"human_approval_response:ID": {`) ends
    // with its quote.
    let after = &rest[id_len..];
    let after = after.strip_prefix(['"', '\'']).unwrap_or(after);
    let value = after
        .trim_start_matches([' ', '\t'])
        .strip_prefix(['=', ':'])
        .map(|v| v.trim_start_matches([' ', '\t']))
        .filter(|v| v.starts_with('{'))?;
    let value = balanced(&value[..floor_char_boundary(value, 2000)]);
    // The binding's own fields only (a nested dict's `choice` is not the response's).
    let fields = quoted_pairs(value);
    let field = |k: &str| {
        fields
            .iter()
            .find(|p| p.top() && p.key == k)
            .map(|p| p.value.clone())
    };
    let choice = field("choice")?;
    let request_id = match field("request_id") {
        Some(r) if !id.is_empty() && r != id => return None,
        Some(r) => Some(r),
        None => (!id.is_empty()).then(|| id.to_string()),
    };
    Some((id.to_string(), request_id, choice, field("explanation")))
}

/// The largest char boundary of `s` at or below `max` bytes.
fn floor_char_boundary(s: &str, max: usize) -> usize {
    let mut i = max.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The text of the `{...}` that `s` starts with, up to its matching `}` (quoted text skipped),
/// or all of `s` when it is cut short.
fn balanced(s: &str) -> &str {
    let b = s.as_bytes();
    let (mut depth, mut i, mut quote) = (0usize, 0usize, None::<u8>);
    while i < b.len() {
        match (quote, b[i]) {
            (Some(_), b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, c @ (b'\'' | b'"')) => quote = Some(c),
            (None, b'{') => depth += 1,
            (None, b'}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return &s[..=i];
                }
            }
            _ => {}
        }
        i += 1;
    }
    s
}

/// A `'key': 'value'` pair found by [`quoted_pairs`], with where it sits.
#[derive(Debug, Clone, PartialEq)]
struct Pair {
    /// The keys of the dicts around the pair, outermost first (`None` for the outermost dict,
    /// a list element or a dict written without a key): `[None, Some("response")]` for the
    /// pairs of `{'ok': True, 'response': {...}}`'s response.
    path: Vec<Option<String>>,
    key: String,
    value: String,
}

impl Pair {
    /// True when the pair is a field of the outermost dict.
    fn top(&self) -> bool {
        self.path.len() == 1
    }

    /// True when the pair is a field of the dict under the outermost dict's `key`.
    fn under(&self, key: &str) -> bool {
        self.path.len() == 2 && self.path[1].as_deref() == Some(key)
    }
}

/// The `'key': 'value'` (or `"key": "value"`) pairs of a JSON or Python-`repr` text, at any
/// depth, in order, each with the keys of the dicts around it: a quoted key, a colon, a quoted
/// value. Pairs whose value is not a string (`None`, `True`, a number, a dict) are left out; a
/// text cut short keeps the pairs before the cut. Escapes `\\`, `\'`, `\"`, `\n`, `\t` are
/// decoded; any other escape is kept as written.
fn quoted_pairs(text: &str) -> Vec<Pair> {
    /// The quoted string at byte `i` (a quote) and the byte after it; `None` when unterminated.
    fn quoted(b: &[u8], text: &str, i: usize) -> Option<(String, usize)> {
        let q = b[i];
        let mut out = String::new();
        let mut j = i + 1;
        let mut from = j;
        while j < b.len() {
            match b[j] {
                c if c == q => {
                    out.push_str(&text[from..j]);
                    return Some((out, j + 1));
                }
                b'\\' if j + 1 < b.len() => {
                    out.push_str(&text[from..j]);
                    match b[j + 1] {
                        b'n' => out.push('\n'),
                        b't' => out.push('\t'),
                        c @ (b'\\' | b'\'' | b'"') => out.push(c as char),
                        _ => {
                            from = j;
                            j += 2;
                            continue;
                        }
                    }
                    j += 2;
                    from = j;
                }
                _ => j += 1,
            }
        }
        None
    }
    let b = text.as_bytes();
    let skip_ws = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let mut pairs = Vec::new();
    // The dicts (and lists) open at `i`: the key each was written under.
    let mut open: Vec<Option<String>> = Vec::new();
    // The key whose non-string value starts next.
    let mut pending: Option<String> = None;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\'' && b[i] != b'"' {
            match b[i] {
                b'{' | b'[' => open.push(pending.take()),
                b'}' | b']' => {
                    open.pop();
                    pending = None;
                }
                b',' => pending = None,
                _ => {}
            }
            i += 1;
            continue;
        }
        let Some((key, after)) = quoted(b, text, i) else {
            break;
        };
        let colon = skip_ws(after);
        if b.get(colon) != Some(&b':') {
            i = after;
            continue;
        }
        let v = skip_ws(colon + 1);
        if matches!(b.get(v), Some(b'\'' | b'"')) {
            if let Some((value, end)) = quoted(b, text, v) {
                pairs.push(Pair {
                    path: open.clone(),
                    key,
                    value,
                });
                i = end;
                continue;
            }
            break;
        }
        pending = Some(key);
        i = v;
    }
    pairs
}

/// Span exports: one trace per agent, cells from `EXECUTE_CODE` action spans.
fn span_traces(ctx: &mut DocCtx, items: &[Item]) {
    struct Span {
        line: u64,
        id: String,
        parent: Option<String>,
        agent: String,
        start: f64,
        end: Option<f64>,
        m: Map<String, Value>,
    }
    let mut spans = Vec::new();
    for (line, item) in items {
        let Some(m) = item.as_ref().ok().and_then(|r| map(r)) else {
            ctx.skip(
                *line,
                match item {
                    Err(e) => e.clone(),
                    Ok(_) => "a span must be a JSON object".into(),
                },
            );
            continue;
        };
        let id = m
            .get("span_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        spans.push(Span {
            line: *line,
            id,
            parent: m
                .get("parent_span_id")
                .and_then(Value::as_str)
                .map(str::to_string),
            agent: m
                .get("agent_id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            start: m
                .get("start_wall")
                .and_then(Value::as_f64)
                .map_or(f64::MAX, convert::unix_seconds),
            end: m
                .get("end_wall")
                .and_then(Value::as_f64)
                .map(convert::unix_seconds),
            m,
        });
    }
    let is_cell = |s: &Span| {
        s.m.get("metadata")
            .and_then(|md| md.get("run_call_trace"))
            .is_some()
            || s.m
                .get("input_summary")
                .and_then(|i| i.get("action_type"))
                .and_then(Value::as_str)
                .is_some_and(|t| t.to_ascii_lowercase().contains("execute_code"))
    };
    let mut agents: Vec<String> = Vec::new();
    for s in &spans {
        if is_cell(s) && !agents.contains(&s.agent) {
            agents.push(s.agent.clone());
        }
    }
    // Spans that are neither cells nor children of a cell are read and accepted (they carry no
    // replayable call); children give call times.
    for s in &spans {
        if !is_cell(s) {
            ctx.accept();
        }
    }
    let several = agents.len() > 1;
    for (n, agent) in agents.iter().enumerate() {
        ctx.start_trace(several.then_some(n), Format::Colony);
        let mut cells: Vec<&Span> = spans
            .iter()
            .filter(|s| is_cell(s) && &s.agent == agent)
            .collect();
        cells.sort_by(|a, b| a.start.total_cmp(&b.start));
        let mut root = Map::new();
        if !agent.is_empty() {
            root.insert("agent_id".into(), Value::String(agent.clone()));
        }
        let first_wall = cells.first().map(|c| c.start).filter(|t| *t < f64::MAX);
        header(ctx, cells.first().map_or(1, |c| c.line), &root, first_wall);
        let mut approvals = Approvals::default();
        for (i, c) in cells.iter().enumerate() {
            ctx.accept();
            let code =
                c.m.get("input_summary")
                    .and_then(|x| x.get("parameters"))
                    .and_then(|p| p.get("code"))
                    .and_then(Value::as_str)
                    .map(unwrap_code);
            ctx.record(
                c.line,
                Record::Cell(CellRecord {
                    index: Some(i as u64),
                    code: code.clone(),
                    success: c.m.get("status").and_then(Value::as_str).map(|s| s == "ok"),
                    error: c.m.get("error").and_then(Value::as_str).map(str::to_string),
                }),
            );
            let mut children: Vec<(f64, Option<f64>)> = spans
                .iter()
                .filter(|s| s.parent.as_deref() == Some(c.id.as_str()) && !c.id.is_empty())
                .map(|s| (s.start, s.end))
                .collect();
            children.sort_by(|a, b| a.0.total_cmp(&b.0));
            let trace =
                c.m.get("metadata")
                    .and_then(|md| md.get("run_call_trace"))
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice);
            // Entries come from a parsed value: give them the cell span's line.
            let raws: Vec<Box<RawValue>> = trace
                .iter()
                .filter_map(|e| serde_json::value::to_raw_value(e).ok())
                .collect();
            let list: Vec<Item> = raws.iter().map(|r| (c.line, Ok(r.as_ref()))).collect();
            // `raws` holds every entry (a `Value` always serializes), in order.
            let parsed = (raws.len() == trace.len()).then_some(trace);
            entries(
                ctx,
                &list,
                parsed,
                Some(i as u64),
                code.as_deref(),
                &children,
                &mut approvals,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{read_str, Event};

    /// Issue 6 (get_response top-level `choice`): pairs carry the keys of the dicts around
    /// them, so a lookup reads its response's own fields, not a nested dict's.
    /// (A list counts as a level, under its key.)
    #[test]
    fn quoted_pairs_know_their_dict() {
        let text = "{'ok': True, 'state': 'ready', 'response': {'extra': {'choice': 'approve_all'}, 'l': [{'request_id': 'x'}], 'choice': 'reject', \"n\": 1}, 'tail': 'z'}";
        let got: Vec<(usize, Option<String>, String, String)> = quoted_pairs(text)
            .into_iter()
            .map(|p| {
                (
                    p.path.len(),
                    p.path.last().cloned().flatten(),
                    p.key,
                    p.value,
                )
            })
            .collect();
        let want = |d: usize, under: Option<&str>, k: &str, v: &str| {
            (d, under.map(str::to_string), k.to_string(), v.to_string())
        };
        assert_eq!(
            got,
            vec![
                want(1, None, "state", "ready"),
                want(3, Some("extra"), "choice", "approve_all"),
                want(4, None, "request_id", "x"),
                want(2, Some("response"), "choice", "reject"),
                want(1, None, "tail", "z"),
            ]
        );
        let pairs = quoted_pairs(text);
        let top: Vec<&str> = pairs
            .iter()
            .filter(|p| p.under("response"))
            .map(|p| p.key.as_str())
            .collect();
        assert_eq!(top, ["choice"]);
    }

    #[test]
    fn other_builtin_exceptions_are_the_builtin_classes_but_the_blocks_bases() {
        let all: Vec<&str> = crate::semantic::PYTHON_BUILTINS
            .iter()
            .copied()
            .filter(|n| is_other_builtin_exception(n))
            .collect();
        // CPython 3.11: 74 capitalised names in `dir(builtins)`, 5 of them constants, 2 of
        // them the block's bases.
        assert_eq!(all.len(), 67, "{all:?}");
        for n in [
            "ValueError",
            "KeyboardInterrupt",
            "SystemExit",
            "UserWarning",
            "Warning",
        ] {
            assert!(all.contains(&n), "{n}");
        }
        for n in [
            "Exception",
            "BaseException",
            "None",
            "True",
            "Ellipsis",
            "GuardrailBlockedError",
            "int",
            "Foo",
        ] {
            assert!(!is_other_builtin_exception(n), "{n}");
        }
    }

    #[test]
    fn literals_in_source_order() {
        let code = "r = await run(\"get_agent_status\", agent_ids=[\"a\"])\nawait run(action_key='X.y.z')\nawait x.run('no')\nk = 'v'\nk = 'w'\nawait run(k)\n";
        assert_eq!(run_literals(code), vec!["get_agent_status", "X.y.z"]);
        let fenced = "Here:\n```python\nawait run('a.b')\n```\n";
        assert_eq!(run_literals(fenced), vec!["a.b"]);
        // Issue 6 T2: what is known about the call sites.
        let s = run_sites(code);
        assert!(!s.all_literal && !s.straight);
        let s = run_sites("if False:\n    await run('a')\nawait run('X.X.a')\n");
        assert!(s.all_literal && !s.straight);
        let s = run_sites("await run('a')\nx = [1 for i in y]\nawait run('X.X.b')\n");
        assert!(s.all_literal && s.straight);
        let s = run_sites("await asyncio.gather(*[run('a') for i in y])\n");
        assert!(s.all_literal && !s.straight);
    }

    /// Issue 6 T4-11: a block is swallowed when every `run()` that could have made the call
    /// sits in a `try` body whose handler catches `GuardrailBlockedError` and does not raise.
    #[test]
    fn swallowing_try_blocks() {
        fn block_swallowed(code: &str, raw: &str, resolved: &str) -> bool {
            swallowed_block(code, raw, resolved, 0).is_some()
        }
        let blocks_swallowed = |code: &str| block_swallowed(code, "a", "A.A.a");
        // The tester's cell: the blocked delete is guarded, the other call is not.
        let cell = "try:\n    await run(\"A.A.delete_x\")\nexcept Exception:\n    pass\nawait run(\"A.A.check_plan_conflicts\")\n";
        assert!(block_swallowed(cell, "A.A.delete_x", "A.A.delete_x"));
        assert!(!block_swallowed(
            cell,
            "A.A.check_plan_conflicts",
            "A.A.check_plan_conflicts"
        ));
        // A short literal resolving to the key counts; a variable key could be any call.
        assert!(block_swallowed(
            "try:\n    await run('delete_x')\nexcept Exception:\n    pass\nawait run('A.A.b')\n",
            "delete_x",
            "A.A.delete_x"
        ));
        assert!(!block_swallowed(
            "try:\n    await run('A.A.delete_x')\nexcept Exception:\n    pass\nawait run(k)\n",
            "A.A.delete_x",
            "A.A.delete_x"
        ));
        assert!(!block_swallowed(cell, "A.A.other", "A.A.other"));
        for code in [
            "try:\n    await run('A.A.a')\nexcept Exception:\n    pass\n",
            "try:\n    await run('a')\nexcept:\n    pass\n",
            "try:\n    await run('a')\nexcept (ValueError, BaseException) as e:\n    print(e)\n",
            "import errors\ntry:\n    await run('a')\nexcept errors.GuardrailBlockedError:\n    pass\n",
            "from errors import GuardrailBlockedError\ntry:\n    await run('a')\nexcept (KeyError, GuardrailBlockedError):\n    pass\n",
            "try:\n    await run('a')\nexcept ValueError:\n    pass\nexcept Exception:\n    x = 1\n",
            "for k in ks:\n    try:\n        await run(k)\n    except Exception:\n        continue\nawait run('b')\n",
            "async def f():\n    try:\n        await run('a')\n    except Exception:\n        pass\nawait f()\n",
            "try:\n    if x:\n        await run('a')\nexcept Exception:\n    pass\n",
        ] {
            assert!(blocks_swallowed(code), "{code:?}");
        }
        for code in [
            "x = 1\n",
            "await run('a')\n",
            "try:\n    await run('a')\nexcept Exception:\n    pass\nawait run('A.A.a')\n",
            "try:\n    await run('a')\nexcept ValueError:\n    pass\n",
            "try:\n    await run('a')\nexcept Exception:\n    raise\n",
            "try:\n    await run('a')\nexcept Exception as e:\n    if x:\n        raise RuntimeError() from e\n",
            "try:\n    await run('a')\nfinally:\n    pass\n",
            "try:\n    pass\nexcept Exception:\n    await run('a')\n",
            "try:\n    async def f():\n        await run('a')\nexcept Exception:\n    pass\nawait f()\n",
            // Issue 6 T6-2: a Colony cell has no `GuardrailBlockedError` (nor `errors`): the
            // handler raises `NameError` when the block reaches it, alone, in a tuple or after
            // a handler that does not match; a handler of an unknown class may catch or not.
            "try:\n    await run('a')\nexcept GuardrailBlockedError:\n    pass\n",
            "try:\n    await run('a')\nexcept errors.GuardrailBlockedError:\n    pass\n",
            "try:\n    await run('a')\nexcept (ValueError, GuardrailBlockedError):\n    pass\n",
            "try:\n    await run('a')\nexcept KeyError:\n    pass\nexcept GuardrailBlockedError:\n    pass\n",
            "try:\n    try:\n        await run('a')\n    except MyError:\n        pass\nexcept Exception:\n    pass\n",
            // The first handler that catches decides: it raises again.
            "try:\n    await run('a')\nexcept Exception:\n    raise\nexcept BaseException:\n    pass\n",
            // Issue 6 T6-13: an `assert` in the handler, a `case` capture rebinding the class,
            // `builtins` (not bound in a cell).
            "try:\n    await run('a')\nexcept Exception:\n    assert False, 'unreachable'\n",
            "match 1:\n    case Exception:\n        pass\ntry:\n    await run('a')\nexcept Exception:\n    pass\n",
            "try:\n    await run('a')\nexcept builtins.Exception:\n    pass\n",
        ] {
            assert!(!blocks_swallowed(code), "{code:?}");
        }
    }

    /// Issue 6 T7-1, T7-7: the block is swallowed with certainty only when the handler changes
    /// nothing the rest of the cell reads and the rest does not read what the block skipped.
    #[test]
    fn swallowed_only_when_the_rest_of_the_cell_cannot_tell() {
        let swallowed = |code: &str| swallowed_block(code, "a", "A.A.a", 0).is_some();
        for code in [
            // T7-1: a fallback call in the handler may be blocked in its turn.
            "try:\n    await run('a')\nexcept Exception:\n    await run('fallback')\nawait run('b')\n",
            "try:\n    await run('a')\nexcept Exception:\n    r = await run('fallback')\n",
            // T7-7: the blocked statement's target is read after the `try`.
            "try:\n    res = await run('a')\nexcept Exception as e:\n    log(f'failed: {e}')\nawait run('b', item=res.output['id'])\n",
            "try:\n    res = await run('a')\nexcept Exception:\n    res = None\nawait run('b', item=res.output['id'])\n",
            "try:\n    res = await run('a')\n    n = len(res.output)\nexcept Exception:\n    pass\nprint(n)\n",
            // A flag set by the handler, a deferred raise, a `break` out of the loop.
            "failed = False\ntry:\n    await run('a')\nexcept Exception:\n    failed = True\nif not failed:\n    await run('b')\n",
            "err = None\ntry:\n    await run('a')\nexcept Exception as e:\n    err = e\nif err:\n    raise err\nawait run('b')\n",
            "ok = True\nfor k in ['a']:\n    try:\n        await run(k)\n    except Exception:\n        ok = False\n        break\nif ok:\n    await run('b')\n",
            // Read in a later round of a loop around the `try`.
            "for k in ks:\n    if res:\n        await run('b')\n    try:\n        res = await run('a')\n    except Exception:\n        pass\n",
            // `continue` skipping the rest of the round, a store into an object.
            "for i in range(3):\n    try:\n        await run('a')\n    except Exception:\n        continue\n    await run('b')\n",
            "try:\n    await run('a')\nexcept Exception:\n    state.failed = True\n",
            "with contextlib.suppress(Exception):\n    res = await run('a')\nawait run('b', x=res)\n",
        ] {
            assert!(!swallowed(code), "{code:?}");
        }
        for code in [
            "try:\n    res = await run('a')\nexcept Exception as e:\n    log(e)\nres = await run('b')\nuse(res)\n",
            "try:\n    await run('a')\nexcept Exception:\n    logger.warning('x')\n    count = 1\n    \"doc\"\nawait run('b')\n",
            "try:\n    res = await run('a')\n    use(res)\nexcept Exception:\n    pass\nawait run('b', res=1, x=y.res)\n",
            "for i in range(3):\n    try:\n        await run('a')\n    except Exception:\n        continue\n",
            "for i in range(3):\n    try:\n        await run('a')\n    except Exception:\n        log(i)\n        break\n    await run('b')\nawait run('c')\n",
        ] {
            assert!(swallowed(code), "{code:?}");
        }
    }

    /// Issue 6 T5-4: a swallowed block leaves the `try` body at the blocked call: the later
    /// calls of that body (and its `else`) are skipped, those of its `finally` and after it are
    /// not; `with contextlib.suppress(Exception)` swallows like a `try`; a rebound `Exception`
    /// catches nothing certain.
    #[test]
    fn swallowed_block_skips_the_rest_of_its_try_body() {
        // (code, calls after the blocked `bad` in recorded order, which of them are skipped)
        let cases: &[(&str, &[&str], &[bool])] = &[
            (
                "try:\n    await run('bad')\n    await run('backup')\nexcept Exception:\n    pass\nawait run('write')\n",
                &["backup", "write"],
                &[true, false],
            ),
            (
                "try:\n    await run('bad')\n    await run('ok')\nexcept Exception:\n    pass\nawait run('ok')\n",
                &["ok", "ok"],
                &[true, false],
            ),
            (
                "try:\n    try:\n        await run('bad')\n        await run('x')\n    finally:\n        await run('f')\n    await run('y')\nexcept Exception:\n    pass\nelse:\n    await run('e')\nawait run('z')\n",
                &["x", "f", "y", "e", "z"],
                &[true, false, true, true, false],
            ),
            (
                "try:\n    try:\n        await run('bad')\n        await run('x')\n    except KeyError:\n        pass\n    await run('y')\nexcept BaseException:\n    pass\nelse:\n    await run('e')\n",
                &["x", "y", "e"],
                &[true, true, true],
            ),
            (
                "with contextlib.suppress(Exception):\n    await run('bad')\n    await run('x')\nawait run('y')\n",
                &["x", "y"],
                &[true, false],
            ),
            (
                "for i in range(3):\n    try:\n        await run('bad')\n        await run('x')\n    except Exception:\n        continue\n",
                &["x", "bad", "x"],
                &[true, false, false],
            ),
        ];
        let breaks = "for i in range(3):\n    try:\n        await run('bad')\n        await run('x')\n    except Exception:\n        break\n    finally:\n        await run('f')\n    await run('y')\nawait run('z')\n";
        let mut s = swallowed_block(breaks, "bad", "S.S.bad", 0).expect("swallowed");
        let got: Vec<AfterBlock> = ["x", "f", "y", "bad", "z"]
            .iter()
            .map(|c| s.next_call(c, &format!("S.S.{c}")))
            .collect();
        // The recording went on with the loop; after the block the handler leaves it.
        assert_eq!(
            got,
            [
                AfterBlock::Skipped,
                AfterBlock::Runs,
                AfterBlock::Skipped,
                AfterBlock::Skipped,
                AfterBlock::Runs
            ]
        );
        for (code, calls, skipped) in cases {
            let mut s = swallowed_block(code, "bad", "S.S.bad", 0)
                .unwrap_or_else(|| panic!("not swallowed: {code:?}"));
            let got: Vec<bool> = calls
                .iter()
                .map(|c| s.next_call(c, &format!("S.S.{c}")) == AfterBlock::Skipped)
                .collect();
            assert_eq!(&got, skipped, "{code:?}");
        }
        for code in [
            "Exception = KeyError\ntry:\n    await run('bad')\nexcept Exception:\n    pass\n",
            "from errors import GuardrailBlockedError as BaseException\ntry:\n    await run('bad')\nexcept BaseException:\n    pass\n",
            "with contextlib.suppress(KeyError):\n    await run('bad')\n",
            "with open('f') as f:\n    await run('bad')\n",
        ] {
            assert!(
                swallowed_block(code, "bad", "S.S.bad", 0).is_none(),
                "{code:?}"
            );
        }
        // The call's rank in the cell picks its site when the key occurs twice.
        let code = "try:\n    await run('bad')\n    await run('x')\nexcept Exception:\n    pass\ntry:\n    await run('bad')\nexcept Exception:\n    pass\nawait run('x')\n";
        let mut s = swallowed_block(code, "bad", "S.S.bad", 2).unwrap();
        assert_eq!(s.next_call("x", "S.S.x"), AfterBlock::Runs);
        // At rank 0 either site could have made it, and they leave the cell in different
        // places: not placed (issue 6 T6-1).
        assert!(swallowed_block(code, "bad", "S.S.bad", 0).is_none());
    }

    /// Issue 6 T6-1: a block whose candidate sites sit under different catching constructs is
    /// not placed; a loop inside the catching body does not go round again; a later call the
    /// code cannot place (both inside and after the catching body, conditionally) is unknown.
    #[test]
    fn swallowed_block_is_placed_only_with_certainty() {
        let untaken = "await run('b')\ntry:\n    await run('b')\n    if dry_run:\n        await run('bad', preview=True)\nexcept Exception:\n    pass\nwith contextlib.suppress(Exception):\n    await run('bad')\n    await run('a')\nawait run('c')\n";
        assert!(swallowed_block(untaken, "bad", "S.S.bad", 2).is_none());
        let later_if = "try:\n    for i in range(2):\n        await run('bad', i=i)\n    await run('a')\n    if i > 5:\n        await run('bad', final=True)\nexcept Exception:\n    pass\nawait run('c')\n";
        assert!(swallowed_block(later_if, "bad", "S.S.bad", 0).is_none());
        // (code, calls after the blocked `bad`, what the block does to each)
        use AfterBlock::*;
        let cases: &[(&str, &[&str], &[AfterBlock])] = &[
            (
                "with contextlib.suppress(Exception):\n    for item in [1, 2]:\n        await run('a', item=item)\n        await run('bad', item=item)\nawait run('c', item=2)\n",
                &["a", "bad", "c"],
                &[Skipped, Skipped, Runs],
            ),
            (
                "try:\n    for i in range(2):\n        await run('bad', i=i)\n    await run('a')\nexcept Exception:\n    pass\nawait run('c')\n",
                &["bad", "a", "c"],
                &[Skipped, Skipped, Runs],
            ),
            // `a` may come from the untaken branch of this round or from the next round.
            (
                "for i in range(3):\n    try:\n        await run('bad')\n        if i:\n            await run('a')\n    except Exception:\n        pass\n    await run('a')\n",
                &["a"],
                &[Unknown],
            ),
            // A function defined in the cell may make a call at any time.
            (
                "async def f():\n    await run('a')\ntry:\n    await run('bad')\n    await f()\nexcept Exception:\n    pass\nawait f()\n",
                &["a"],
                &[Unknown],
            ),
            // No site of the cell could have made it.
            (
                "try:\n    await run('bad')\nexcept Exception:\n    pass\n",
                &["zzz"],
                &[Unknown],
            ),
        ];
        for (code, calls, want) in cases {
            let mut s = swallowed_block(code, "bad", "S.S.bad", 0)
                .unwrap_or_else(|| panic!("not swallowed: {code:?}"));
            let got: Vec<AfterBlock> = calls
                .iter()
                .map(|c| s.next_call(c, &format!("S.S.{c}")))
                .collect();
            assert_eq!(&got, want, "{code:?}");
        }
    }

    /// Issue 6 T2: a variable key counts as a literal only where the variable holds one known
    /// string (bound once, at top level, to a literal, before the use, never rebound).
    #[test]
    fn variable_keys_with_one_known_value() {
        let known = |code: &str| {
            let s = run_sites(code);
            (s.literals, s.all_literal, s.straight)
        };
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // The tester's var.json cell: Colony saw `create_decomposition` for call 0.
        let full = "DesignProcessCapability.DesignProcessCapability.create_decomposition";
        let code = format!("k = \"create_decomposition\"\nawait run(k, dry_run=False)\nawait run(\"{full}\", dry_run=True)");
        assert_eq!(
            known(&code),
            (v(&["create_decomposition", full]), true, true)
        );
        // Reads of the name elsewhere, `action_key=`, an annotation, a use in a branch.
        assert_eq!(
            known("k: str = 'a.b'\nprint(k, f'{k}', k.upper(), k in d)\nif x:\n    await run(action_key=k)\n"),
            (v(&["a.b"]), true, false)
        );
        // Not known: each of these rebinds the name, binds it in a block, or uses it before
        // its binding, inside a function, or where the namespace can change under it.
        for code in [
            "k = 'a'\nk = 'b'\nawait run(k)\n",
            "await run(k)\nk = 'a'\n",
            "k = 'a'\nk += 'b'\nawait run(k)\n",
            "k = 'a'\nfor k in ks:\n    pass\nawait run(k)\n",
            "k = 'a'\nx = [k for k in ks]\nawait run(k)\n",
            "k = 'a'\nif (k := f()):\n    pass\nawait run(k)\n",
            "k = 'a'\nwith f() as k:\n    pass\nawait run(k)\n",
            "k = 'a'\nwith f() as (k, j):\n    pass\nawait run(k)\n",
            "k = 'a'\ndel k, j\nawait run(k)\n",
            "k = 'a'\nimport k\nawait run(k)\n",
            "k = 'a'\ndef g():\n    global k\n    k = 'b'\ng()\nawait run(k)\n",
            "k = 'a'\nasync def g():\n    await run(k)\nawait g()\n",
            "k = 'a'\nglobals()['k'] = 'b'\nawait run(k)\n",
            "k = 'a'\nexec('k = 1')\nawait run(k)\n",
            "if x:\n    k = 'a'\nawait run(k)\n",
            "try:\n    k = 'a'\nexcept E as k:\n    pass\nawait run(k)\n",
            "k = f'a{b}'\nawait run(k)\n",
            "k = j = 'a'\nawait run(k)\n",
            "k, j = 'a', 'b'\nawait run(k)\n",
            "k = 'a'\nmatch x:\n    case k:\n        pass\nawait run(k)\n",
            "def f(k='b'):\n    pass\nk = 'a'\nawait run(k)\n",
        ] {
            let (lits, all, _) = known(code);
            assert!(lits.is_empty() && !all, "{code:?}: {lits:?}");
        }
    }

    #[test]
    fn replay_shape_recovers_raw_keys_and_blocks() {
        let text = r#"{"format": "colony-replay/1", "agent_id": "agent-5d0c9e11", "semantics_epoch": "0620-0624",
 "cells": [{"iteration": 7, "code": "await run(\"get_agent_status\", agent_ids=[\"agent-1\"])\nawait run(\"respond_to_user\", content=\"x\")",
   "cell_success": false, "cell_error": "GuardrailBlockedError: Blocked by guardrail: respond_to_user: r.",
   "run_call_trace": [
     {"call_index": 0, "action_key": "AgentPoolCapability.AgentPoolCapability.get_agent_status", "parameters": {"agent_ids": ["agent-1"]}, "success": true, "error": null, "output_preview": "{}", "blocked": false},
     {"call_index": 1, "action_key": "respond_to_user", "parameters": {"content": "x"}, "success": false, "error": "Blocked: r", "output_preview": "", "blocked": true},
     {"call_index": 2, "action_key": "signal_completion", "success": false, "error": "Rejected: No results have been stored.", "output_preview": "Store action results in the results dict before completing.", "blocked": false}
   ],
   "child_action_spans": [{"span_id": "s", "start_wall": 1786500000.12, "end_wall": 1786500000.31}]}]}"#;
        let events: Vec<Event> = read_str("c.json", text, None).unwrap().collect();
        let recs: Vec<&Record> = events
            .iter()
            .filter_map(|e| match e {
                Event::Record { record, .. } => Some(record),
                _ => None,
            })
            .collect();
        let Record::Header(h) = recs[0] else { panic!() };
        assert_eq!(h.epoch, Some(Epoch::Mid0620));
        assert_eq!(h.agent_id.as_deref(), Some("agent-5d0c9e11"));
        let Record::Call(c0) = recs[2] else { panic!() };
        assert_eq!(c0.raw(), "get_agent_status");
        assert_eq!(
            c0.resolved(),
            "AgentPoolCapability.AgentPoolCapability.get_agent_status"
        );
        assert_eq!(c0.status, CallStatus::Ok);
        assert_eq!(c0.start, Some(1786500000.12));
        let Record::Call(c1) = recs[3] else { panic!() };
        assert_eq!(
            (c1.raw(), c1.status),
            ("respond_to_user", CallStatus::Blocked)
        );
        let Record::Completion(done) = recs[4] else {
            panic!()
        };
        assert_eq!(done.allowed, Some(false));
        assert_eq!(done.reason.as_deref(), Some("No results have been stored."));
    }
}
