//! `SHP`: the shape of one iteration (Colony IterationShapeValidator, colony-reference §3.5,
//! with path-aware counting done right).
//!
//! Only actions count: the namespace's `run` (Colony dialect) or knowledge-base tools
//! (functions dialect), never `asyncio.run` or `x.run`. A call of a function defined in the cell
//! counts that function's actions where it is called, not where it is defined.

use super::Checker;
use crate::diagnostic::{Diagnostic, FixAvailability, Rule, RuleDoc, Severity};
use crate::nodes::{NodeId, NodeTable};
use crate::parse;
use crate::semantic::{CallKind, FunctionId, SemanticModel, MAX_DEPTH};
use crate::source::{LineIndex, TextRange};
use std::collections::{HashMap, VecDeque};
use tree_sitter::Node;

/// SHP001 too-many-actions.
pub static TOO_MANY_ACTIONS: Rule = Rule {
    code: "SHP001",
    name: "too-many-actions",
    severity: Severity::Error,
    summary: "More actions on one execution path than the configured maximum",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Counts the actions one execution of the cell can dispatch, path by path: `if`/`elif`/`else`, `try`/`except`/`else`/`finally`, `match` cases and conditional expressions take the maximum of their branches; `x or y` and everything sequential add up; a nested `run(p=await run(...))` counts twice; a function defined in the cell counts its actions where it is called; a path ends at `raise` or `return` (a `raise` inside `try` goes on into its handlers). Reports the first action beyond the limit on the longest path.",
        why: "Colony rejects cells with more than `max_actions` `run()` calls, asking for a focused 1-N action step. Its counter sums `match` cases and conditional expressions (rejecting valid cells), counts `asyncio.run` and `x.run`, and counts a function body where it is defined rather than where it is called.",
        example: "await run(\"A.a.ack\")\nawait run(\"A.a.load\")\nawait run(\"A.a.analyze\")\nawait run(\"A.a.report\")\n",
        fixed_example: "await run(\"A.a.ack\")\nr = await run(\"A.a.analyze\")\nif r.success:\n    await run(\"A.a.report\")\nelse:\n    await run(\"A.a.retry\")\n",
        fix_safety: "No fix: splitting a cell is a planning decision.",
        options: "`[lint.shape] max-actions` (default 3, Colony's). With `profile = \"colony\"`, Colony's own count and message (docs/colony-profile.md).",
        source: "Colony IterationShapeValidator `_count_runs_per_path` (colony-reference §3.5, §7.2 cases 8-11, 15).",
        ..RuleDoc::EMPTY
    },
};

/// SHP002 action-in-loop.
pub static ACTION_IN_LOOP: Rule = Rule {
    code: "SHP002",
    name: "action-in-loop",
    severity: Severity::Warning,
    summary: "Action inside a loop or comprehension: unbounded dispatch count",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports an action dispatched inside a `for`/`while` loop (including a `while` condition) or a comprehension, and a call inside a loop of a cell function that dispatches actions.",
        why: "Colony counts a loop body once, so `for x in items: await run(...)` passes its shape check with 100 items and dispatches 100 actions in one iteration, out of reach of the action budget.",
        example: "for agent_id in params[\"agents\"]:\n    await run(\"A.a.ping\", agent_id=agent_id)\n",
        fixed_example: "await run(\"A.a.ping_all\", agent_ids=params[\"agents\"])\n",
        fix_safety: "No fix.",
        options: "None.",
        source: "Colony IterationShapeValidator under-count (colony-reference §3.5, §7.2 case 13).",
        ..RuleDoc::EMPTY
    },
};

/// SHP003 too-many-browse.
pub static TOO_MANY_BROWSE: Rule = Rule {
    code: "SHP003",
    name: "too-many-browse",
    severity: Severity::Error,
    summary: "More browse() calls than the configured maximum",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Counts every call of the namespace's `browse` (not `x.browse`, not a rebound `browse`), on every branch, as Colony does, and reports the first one beyond the limit.",
        why: "Colony rejects cells with more than `max_browse` `browse()` calls: models use `browse()` for discovery instead of the keys already listed in the prompt.",
        example: "await browse(\"agents\")\nawait browse(\"planning\")\n",
        fixed_example: "await browse(\"agents\")\n",
        fix_safety: "No fix.",
        options: "`[lint.shape] max-browse` (default 1, Colony's). With `profile = \"colony\"`, Colony's textual count and message (docs/colony-profile.md).",
        source: "Colony IterationShapeValidator browse count (colony-reference §3.5, §7.2 case 12).",
        ..RuleDoc::EMPTY
    },
};

/// SHP004 cell-too-long.
pub static CELL_TOO_LONG: Rule = Rule {
    code: "SHP004",
    name: "cell-too-long",
    severity: Severity::Error,
    summary: "More substantive lines than the configured maximum",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Counts substantive lines: lines holding code, excluding blank lines, comment-only lines and the lines of docstrings and other bare string statements. Reports the first line beyond the limit.",
        why: "Colony rejects long cells to keep each iteration a focused step. Its own count keeps every line of a multi-line string, so a long docstring fails a one-statement cell.",
        example: "a = 1\nb = 2\nc = a + b\nlog(c)\n",
        fixed_example: "\"\"\"Add two numbers.\n\nA docstring does not count.\n\"\"\"\n# neither do comments\n\na = 1\nb = 2\nlog(a + b)\n",
        fix_safety: "No fix.",
        options: "`[lint.shape] max-lines` (default 50, Colony's). With `profile = \"colony\"`, Colony's count (string lines included) and message (docs/colony-profile.md).",
        source: "Colony IterationShapeValidator line count (colony-reference §3.5, §7.2 case 17).",
        example_config: "[lint.shape]\nmax-lines = 3\n",
        ..RuleDoc::EMPTY
    },
};

/// The family's rules.
pub static RULES: &[&Rule] = &[
    &TOO_MANY_ACTIONS,
    &ACTION_IN_LOOP,
    &TOO_MANY_BROWSE,
    &CELL_TOO_LONG,
];

/// Runs the family's checks.
pub fn check(checker: &mut Checker) {
    if checker.enabled(&TOO_MANY_ACTIONS) {
        too_many_actions(checker);
    }
    if checker.enabled(&ACTION_IN_LOOP) {
        action_in_loop(checker);
    }
    if checker.enabled(&TOO_MANY_BROWSE) {
        too_many_browse(checker);
    }
    if checker.enabled(&CELL_TOO_LONG) {
        cell_too_long(checker);
    }
}

/// The actions of one execution path, in order: where each is reported (the action call, or
/// the call of the cell function that dispatches it).
///
/// Stored run-length encoded: a call of a cell function that dispatches `n` actions is one run
/// of `n` at the call, so helpers calling helpers (each doubling the count) cost one run per
/// call site instead of one entry per action, and the count saturates instead of overflowing.
///
/// While a cell is being counted, a path also knows whether it falls through to what follows
/// (`dead` when every way through it ends in `raise` or `return`), and keeps the longest of its
/// ways that already left the cell or function (`exited`): `if a: run(); run(); run(); raise`
/// then `run()` is 3 actions on the longest path, not 4 (new-user N-12). [`PathCounter::path`]
/// returns the finished path: the longest of both.
#[derive(Debug, Clone, Default)]
pub struct ActionPath {
    /// Ranges of the counted calls in execution order, each with how many actions it counts
    /// for (consecutive runs never share a range).
    runs: VecDeque<(TextRange, usize)>,
    count: usize,
    /// No way through falls through: `runs` and `count` are empty.
    dead: bool,
    /// The longest way through that left by `raise` or `return` (never itself dead or exited).
    exited: Option<Box<ActionPath>>,
}

/// The longer of two optional paths (the first on a tie).
fn longest(a: Option<Box<ActionPath>>, b: Option<Box<ActionPath>>) -> Option<Box<ActionPath>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.count > a.count { b } else { a }),
        (a, b) => a.or(b),
    }
}

impl ActionPath {
    fn one(range: TextRange, n: usize) -> ActionPath {
        if n == 0 {
            return ActionPath::default();
        }
        ActionPath {
            runs: VecDeque::from([(range, n)]),
            count: n,
            ..ActionPath::default()
        }
    }

    /// Number of actions on the path (saturating at `usize::MAX`).
    pub fn count(&self) -> usize {
        self.count
    }

    /// The ranges of the counted calls, in execution order, each with the number of actions it
    /// counts for.
    pub fn runs(&self) -> impl Iterator<Item = (TextRange, usize)> + '_ {
        self.runs.iter().copied()
    }

    /// Where the `n`-th action (zero-based) of the path is reported.
    pub fn nth(&self, n: usize) -> Option<TextRange> {
        let mut seen = 0usize;
        for &(range, k) in &self.runs {
            seen = seen.saturating_add(k);
            if n < seen {
                return Some(range);
            }
        }
        None
    }

    /// This path followed by `other`: nothing follows a dead path; the ways `other` exits
    /// are reached through this path.
    fn then(mut self, mut other: ActionPath) -> ActionPath {
        if self.dead {
            return self;
        }
        let own_exit = self.exited.take();
        let via_other = other
            .exited
            .take()
            .map(|e| Box::new(self.clone().concat(*e)));
        let dead = other.dead;
        let mut out = self.concat(other);
        out.dead = dead;
        out.exited = longest(own_exit, via_other);
        out
    }

    /// The runs of `other` after this path's. The shorter run list is moved into the longer
    /// one (at its front or its back), so building a path costs `O(n log n)` whatever the
    /// nesting.
    fn concat(self, other: ActionPath) -> ActionPath {
        let count = self.count.saturating_add(other.count);
        let (mut a, mut b) = (self.runs, other.runs);
        // Adjacent runs of one call merge (only the total per call matters).
        if let (Some(last), Some(first)) = (a.back_mut(), b.front()) {
            if last.0 == first.0 {
                last.1 = last.1.saturating_add(first.1);
                b.pop_front();
            }
        }
        let runs = if a.len() >= b.len() {
            a.extend(b);
            a
        } else {
            while let Some(r) = a.pop_back() {
                b.push_front(r);
            }
            b
        };
        ActionPath {
            runs,
            count,
            ..ActionPath::default()
        }
    }

    /// The longer of two alternatives that fall through, and the longer of their exits.
    fn or(mut self, mut other: ActionPath) -> ActionPath {
        let exited = longest(self.exited.take(), other.exited.take());
        let mut out = match (self.dead, other.dead) {
            (true, _) => other,
            (false, true) => self,
            (false, false) if other.count > self.count => other,
            (false, false) => self,
        };
        out.exited = exited;
        out
    }

    /// This path, ended by `raise` or `return`: nothing after it is reached.
    fn exit(mut self) -> ActionPath {
        let earlier = self.exited.take();
        ActionPath {
            exited: longest(earlier, Some(Box::new(self))),
            dead: true,
            ..ActionPath::default()
        }
    }

    /// The longest way through, whether it falls through or exits.
    fn finish(mut self) -> ActionPath {
        let exited = self.exited.take().map(|e| *e);
        match (self.dead, exited) {
            (true, e) => e.unwrap_or_default(),
            (false, Some(e)) if e.count > self.count => e,
            (false, _) => self,
        }
    }
}

/// Path-aware action counting over a cell (see [`TOO_MANY_ACTIONS`]).
pub struct PathCounter<'m, 'a> {
    model: &'m SemanticModel<'a>,
    nodes: &'m NodeTable<'a>,
    /// Actions on the longest path through each cell function's body.
    memo: HashMap<FunctionId, usize>,
    active: Vec<FunctionId>,
}

impl<'m, 'a> PathCounter<'m, 'a> {
    /// A counter over `model`, whose tree is the one `nodes` holds.
    pub fn new(model: &'m SemanticModel<'a>, nodes: &'m NodeTable<'a>) -> Self {
        Self {
            model,
            nodes,
            memo: HashMap::new(),
            active: Vec::new(),
        }
    }

    /// The longest path through `node` (a node of the table's tree; an empty path otherwise),
    /// ending where the cell ends or at a `raise` or `return`.
    pub fn path(&mut self, node: Node<'a>) -> ActionPath {
        match self.nodes.id_of(node) {
            Some(id) => self.count(id, 0).finish(),
            None => ActionPath::default(),
        }
    }

    fn children_seq(&mut self, id: NodeId, depth: usize) -> ActionPath {
        let mut acc = ActionPath::default();
        for c in self.nodes.children(id) {
            acc = acc.then(self.count(c, depth + 1));
        }
        acc
    }

    fn field(&mut self, id: NodeId, field: &str, depth: usize) -> ActionPath {
        self.nodes
            .child_by_field(id, field)
            .map(|c| self.count(c, depth + 1))
            .unwrap_or_default()
    }

    /// The number of actions on the longest path through the body of `f` (only the number is
    /// kept: a call of `f` counts that many actions at the call).
    fn function_count(&mut self, f: FunctionId, depth: usize) -> usize {
        if let Some(&n) = self.memo.get(&f) {
            return n;
        }
        if self.active.contains(&f) {
            return 0; // recursion: counted once
        }
        self.active.push(f);
        let body = self.model.functions[f]
            .body
            .and_then(|b| self.nodes.id_of(b));
        let n = match body {
            Some(body) => self.count(body, depth + 1).finish().count(),
            None => 0,
        };
        self.active.pop();
        self.memo.insert(f, n);
        n
    }

    fn count(&mut self, id: NodeId, depth: usize) -> ActionPath {
        if depth > MAX_DEPTH {
            return ActionPath::default();
        }
        let nodes = self.nodes;
        match nodes.kind(id) {
            "call" => {
                let before = self.children_seq(id, depth);
                let node = nodes.node(id);
                let own = match self.model.call_kind(node) {
                    CallKind::Action(_) => ActionPath::one(parse::range(node), 1),
                    CallKind::CellFunction(f) => {
                        ActionPath::one(parse::range(node), self.function_count(f, depth))
                    }
                    _ => ActionPath::default(),
                };
                before.then(own)
            }
            "if_statement" => {
                let cond = self.field(id, "condition", depth);
                let body = self.field(id, "consequence", depth);
                let alternatives: Vec<NodeId> =
                    nodes.children_by_field(id, "alternative").collect();
                let rest = self.alternatives(&alternatives, depth);
                cond.then(body.or(rest))
            }
            "conditional_expression" => {
                let parts: Vec<NodeId> = nodes
                    .named_children(id)
                    .filter(|&c| nodes.kind(c) != "comment")
                    .collect();
                match parts.as_slice() {
                    [a, cond, b] => {
                        let cond = self.count(*cond, depth + 1);
                        let a = self.count(*a, depth + 1);
                        let b = self.count(*b, depth + 1);
                        cond.then(a.or(b))
                    }
                    _ => self.children_seq(id, depth),
                }
            }
            "raise_statement" | "return_statement" => self.children_seq(id, depth).exit(),
            "try_statement" => {
                // A way out of the body by `raise` may be caught: the handlers follow the
                // body's longest way, whichever it is.
                let body = self.field(id, "body", depth);
                let body_any = body.clone().finish();
                let mut handlers = ActionPath::default();
                let mut orelse = ActionPath::default();
                let mut finally = ActionPath::default();
                for c in nodes.named_children(id) {
                    match nodes.kind(c) {
                        "except_clause" | "except_group_clause" => {
                            handlers = handlers.or(self.count(c, depth + 1));
                        }
                        "else_clause" => orelse = self.count(c, depth + 1),
                        "finally_clause" => finally = self.count(c, depth + 1),
                        _ => {}
                    }
                }
                let normal = body.then(orelse);
                let failed = body_any.then(handlers);
                normal.or(failed).then(finally)
            }
            "match_statement" => {
                let subject = self.field(id, "subject", depth);
                let mut best = ActionPath::default();
                if let Some(body) = nodes.child_by_field(id, "body") {
                    for case in nodes.named_children(body) {
                        best = best.or(self.count(case, depth + 1));
                    }
                }
                subject.then(best)
            }
            "function_definition" => {
                // Decorators, defaults and annotations run at definition; the body where called.
                let body = nodes.child_by_field(id, "body");
                let mut acc = ActionPath::default();
                for c in nodes.children(id).filter(|&c| Some(c) != body) {
                    acc = acc.then(self.count(c, depth + 1));
                }
                acc
            }
            "lambda" => self.field(id, "parameters", depth),
            _ => self.children_seq(id, depth),
        }
    }

    /// The `elif`/`else` chain of an `if`: each `elif` is its condition then its body or the
    /// rest of the chain; an `else` ends it. Iterative, so a chain of any length cannot exhaust
    /// the stack (the parts are counted in source order, as a recursive descent would).
    fn alternatives(&mut self, alternatives: &[NodeId], depth: usize) -> ActionPath {
        let mut elifs: Vec<(ActionPath, ActionPath)> = Vec::new();
        let mut tail = ActionPath::default();
        for &alt in alternatives {
            if self.nodes.kind(alt) == "elif_clause" {
                let cond = self.field(alt, "condition", depth);
                let body = self.field(alt, "consequence", depth);
                elifs.push((cond, body));
            } else {
                tail = self.count(alt, depth + 1);
                break;
            }
        }
        for (cond, body) in elifs.into_iter().rev() {
            tail = cond.then(body.or(tail));
        }
        tail
    }
}

fn too_many_actions(checker: &mut Checker) {
    let model = checker.semantic();
    if model.actions.is_empty() {
        return;
    }
    let max = checker.settings.max_actions as usize;
    let path = PathCounter::new(&model, checker.nodes).path(checker.tree.root_node());
    if path.count() <= max {
        return;
    }
    let index = LineIndex::new(checker.src);
    let mut lines: Vec<usize> = path
        .runs()
        .map(|(r, _)| index.line_of(r.start) + 1)
        .collect();
    lines.dedup();
    let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let noun = if model.dialect == crate::config::Dialect::Functions {
        "tool calls"
    } else {
        "run() calls"
    };
    checker.report(
        Diagnostic::new(
            &TOO_MANY_ACTIONS,
            path.nth(max).unwrap_or_default(),
            format!(
                "Too many actions in one iteration: {} {noun}, maximum is {max} (on the longest execution path)",
                path.count()
            ),
        )
        .with_help(format!(
            "The longest path dispatches on lines {}; write a focused step of at most {max}",
            lines.join(", ")
        )),
    );
}

fn loop_name(node: Node) -> &'static str {
    match node.kind() {
        "for_statement" if crate::semantic::is_async(node) => "an `async for` loop",
        "for_statement" => "a `for` loop",
        "while_statement" => "a `while` loop",
        "list_comprehension" => "a list comprehension",
        "set_comprehension" => "a set comprehension",
        "dictionary_comprehension" => "a dict comprehension",
        "generator_expression" => "a generator expression",
        _ => "a loop",
    }
}

fn action_in_loop(checker: &mut Checker) {
    let model = checker.semantic();
    for i in model.dispatching_sites() {
        let site = &model.sites[i];
        let Some(innermost) = site.loops.last() else {
            continue;
        };
        let where_ = loop_name(*innermost);
        let message = match model.kinds[i] {
            CallKind::CellFunction(f) => format!(
                "`{}()` dispatches actions and is called inside {where_}: the number of actions is unbounded",
                model.functions[f].name.as_deref().unwrap_or("<lambda>")
            ),
            _ => format!(
                "Action inside {where_}: it is dispatched once per iteration, so the number of actions is unbounded"
            ),
        };
        let help = if innermost.kind() == "while_statement" {
            "Dispatch once and let the next iteration check again"
        } else {
            "Dispatch one action that takes the whole list, or handle one item per iteration"
        };
        checker.report(
            Diagnostic::new(&ACTION_IN_LOOP, parse::range(site.node), message).with_help(help),
        );
    }
}

fn too_many_browse(checker: &mut Checker) {
    let model = checker.semantic();
    let max = checker.settings.max_browse as usize;
    let calls: Vec<usize> = model.namespace_calls("browse").collect();
    if calls.len() <= max {
        return;
    }
    let site = &model.sites[calls[max]];
    checker.report(
        Diagnostic::new(
            &TOO_MANY_BROWSE,
            parse::range(site.node),
            format!("Too many browse() calls: {}, maximum is {max}", calls.len()),
        )
        .with_help("Use the exact keys listed under `## Available Actions`; browse only for parameter details"),
    );
}

/// Byte ranges that never make a line substantive: comments and bare string statements
/// (docstrings).
fn non_substantive(nodes: &NodeTable) -> Vec<TextRange> {
    let mut out = Vec::new();
    for (id, node) in nodes.iter() {
        match nodes.kind(id) {
            "comment" => out.push(parse::range(node)),
            "expression_statement" => {
                let mut kids = nodes.named_children(id);
                if let (Some(only), None) = (kids.next(), kids.next()) {
                    if matches!(
                        parse::unparenthesize(nodes.node(only)).kind(),
                        "string" | "concatenated_string"
                    ) {
                        out.push(parse::range(node));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Ranges of the substantive lines of a cell (trimmed), in order.
pub fn substantive_lines(src: &str, root: Node) -> Vec<TextRange> {
    substantive_lines_in(src, &NodeTable::from_root(root))
}

/// [`substantive_lines`] over the cell's node table.
pub fn substantive_lines_in(src: &str, nodes: &NodeTable) -> Vec<TextRange> {
    let mut excluded = vec![false; src.len()];
    for r in non_substantive(nodes) {
        for b in excluded.iter_mut().take(r.end.min(src.len())).skip(r.start) {
            *b = true;
        }
    }
    let mut out = Vec::new();
    let mut start = 0;
    for line in src.split_inclusive('\n') {
        let end = start + line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        let substantive = content
            .char_indices()
            .any(|(i, c)| !c.is_whitespace() && !excluded[start + i]);
        if substantive {
            let lead = content.len() - content.trim_start().len();
            out.push(TextRange::new(
                start + lead,
                start + content.trim_end().len(),
            ));
        }
        start = end;
    }
    out
}

fn cell_too_long(checker: &mut Checker) {
    let max = checker.settings.max_lines as usize;
    let lines = substantive_lines_in(checker.src, checker.nodes);
    if lines.len() <= max {
        return;
    }
    checker.report(
        Diagnostic::new(
            &CELL_TOO_LONG,
            lines[max],
            format!(
                "Code is too long: {} lines, maximum is {max} (blank, comment and docstring lines not counted)",
                lines.len()
            ),
        )
        .with_help("Write a focused step; move long explanations into comments or docstrings"),
    );
}
