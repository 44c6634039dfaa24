//! Where an asyncio task the cell creates ends up (`SBX009`'s fire-and-forget tasks).
//!
//! Colony runs every cell on the host's running event loop (colony-reference §2.1), so a task
//! the cell creates and never waits for keeps running on the host's loop after the cell's step
//! has returned, outside the executor's limits, like a `call_soon` callback. The shape is that
//! of ruff's `RUF006` (asyncio dangling task), widened to names: a task is consumed when the
//! cell awaits it, hands it to `gather`/`wait`/`wait_for`/`shield`/`as_completed`, cancels it, or
//! puts it in a list or dict (literal, comprehension, `dict(...)`, `.append`, `d[k] = t`) or a
//! name that is consumed that way, also through a `for` loop over that container, its
//! `.values()`/`.items()` or its items (`d[k]`). Handing it to something that returns while it
//! still runs does not consume it: `asyncio.wait` with a `timeout` or a `return_when` other than
//! `ALL_COMPLETED` consumes it only when the pending set it returns is consumed, and
//! `wait_for(shield(t), timeout)` cancels the shield, not the task. Everything else (an
//! expression statement, a set of background tasks, an attribute, a `return`, an unknown
//! function's argument) is dangling.
//!
//! Pure syntax over the tree-sitter tree; nothing is executed.

use super::field::{FieldChild, F};
use super::interp::{ident, unparen};
use crate::parse;
use tree_sitter::Node;

/// Functions that wait for (or cancel with) the tasks passed to them.
const CONSUMERS: &[&str] = &["gather", "wait", "wait_for", "shield", "as_completed"];

/// Methods that put a task into the container they are called on.
const COLLECTORS: &[&str] = &["append", "extend", "insert", "add", "update", "setdefault"];

/// Methods of a task that end it inside the cell.
const ENDERS: &[&str] = &["cancel"];

/// Where a value flows.
enum Sink<'t> {
    /// Awaited or handed to a consumer.
    Consumed,
    /// Stored in these names (all must be consumed). With `partial`, the names hold what
    /// `asyncio.wait(..., timeout=...)` returns before it is awaited: awaiting it is not
    /// enough, its pending set must be consumed too.
    Names(Vec<Node<'t>>, bool),
    /// Anywhere else.
    Dangling,
    /// Handed to something that returns while the task still runs (`asyncio.wait` with a
    /// timeout whose pending set is dropped, `wait_for(shield(t), timeout)`): never consumed,
    /// whatever awaits it.
    Leaked,
}

/// Methods of a dict (or list) of tasks whose result holds the same tasks.
const VIEWS: &[&str] = &["values", "items", "copy"];

/// Builtins whose result holds their argument's items (`dict((k, t) for ...)`).
const BUILDERS: &[&str] = &["dict", "list", "tuple", "set", "frozenset", "sorted"];

/// The last dotted segment of a callee (`asyncio.gather` -> `gather`).
fn callee_last(call: Node, src: &str) -> Option<String> {
    let f = unparen(call.field(F::Function)?);
    match f.kind_name() {
        "identifier" => Some(ident(f, src).into_owned()),
        "attribute" => Some(ident(f.field(F::Attribute)?, src).into_owned()),
        _ => None,
    }
}

/// The value of keyword argument `name` of `call`, or its positional argument `pos`.
fn argument<'t>(call: Node<'t>, name: &str, pos: Option<usize>, src: &str) -> Option<Node<'t>> {
    let args = call.field(F::Arguments)?;
    let mut c = args.walk();
    let items: Vec<Node<'t>> = args.named_children(&mut c).collect();
    let kw = items.iter().find_map(|a| {
        (a.kind_name() == "keyword_argument"
            && a.field(F::Name).is_some_and(|n| ident(n, src) == name))
        .then(|| a.field(F::Value))
        .flatten()
    });
    kw.or_else(|| {
        let positional: Vec<&Node<'t>> = items
            .iter()
            .filter(|a| !matches!(a.kind_name(), "keyword_argument" | "comment"))
            .collect();
        pos.and_then(|i| positional.get(i).map(|n| **n))
    })
}

/// True when `node` is given and is not the literal `None`.
fn not_none(node: Option<Node>, src: &str) -> bool {
    node.is_some_and(|n| parse::text(unparen(n), src).trim() != "None")
}

/// True when the `asyncio.wait` call `call` may return before every task it waits for is done:
/// a `timeout` that is not `None`, or a `return_when` other than `ALL_COMPLETED`.
pub fn wait_is_partial(call: Node, src: &str) -> bool {
    not_none(argument(call, "timeout", None, src), src)
        || argument(call, "return_when", None, src).is_some_and(|r| {
            !parse::text(unparen(r), src)
                .trim()
                .ends_with("ALL_COMPLETED")
        })
}

/// Follows the value of `node` up through brackets and containers to where it lands; with
/// `partial`, `node` is an `asyncio.wait` call that may return early (its pending set must be
/// consumed).
fn sink_from<'t>(mut node: Node<'t>, src: &str, mut partial: bool) -> Sink<'t> {
    for _ in 0..64 {
        let Some(p) = node.parent() else {
            return Sink::Dangling;
        };
        let call_of_args = match p.kind_name() {
            "argument_list" => p.parent().filter(|c| c.kind_name() == "call"),
            // `dict((k, t) for ...)`: a lone generator argument is the call's argument list.
            "call" if p.field(F::Arguments).is_some_and(|a| a.id() == node.id()) => Some(p),
            _ => None,
        };
        if let Some(call) = call_of_args {
            if partial {
                return Sink::Leaked;
            }
            let last = callee_last(call, src).unwrap_or_default();
            let bare = call
                .field(F::Function)
                .map(unparen)
                .is_some_and(|f| f.kind_name() == "identifier");
            match last.as_str() {
                // The pending tasks of a wait that may return early must be consumed.
                "wait" if wait_is_partial(call, src) => {
                    node = call;
                    partial = true;
                    continue;
                }
                // `wait_for(shield(t), timeout)` cancels the shield, never the task.
                "wait_for"
                    if unparen(node).kind_name() == "call"
                        && callee_last(unparen(node), src).as_deref() == Some("shield")
                        && not_none(argument(call, "timeout", Some(1), src), src) =>
                {
                    return Sink::Leaked;
                }
                // A shielded task is consumed when its shield is.
                "shield" => {
                    node = call;
                    continue;
                }
                l if CONSUMERS.contains(&l) => return Sink::Consumed,
                l if bare && BUILDERS.contains(&l) => {
                    node = call;
                    continue;
                }
                l if COLLECTORS.contains(&l) => {
                    let recv = call
                        .field(F::Function)
                        .map(unparen)
                        .filter(|f| f.kind_name() == "attribute")
                        .and_then(|f| f.field(F::Object))
                        .map(unparen)
                        .filter(|o| o.kind_name() == "identifier");
                    return match recv {
                        Some(r) => Sink::Names(vec![r], false),
                        None => Sink::Dangling,
                    };
                }
                _ => return Sink::Dangling,
            }
        }
        match p.kind_name() {
            "parenthesized_expression"
            | "list"
            | "tuple"
            | "set"
            | "dictionary"
            | "expression_list"
            | "list_splat"
            | "dictionary_splat"
            | "keyword_argument" => node = p,
            // A dict of tasks (`{k: create_task(...)}`) holds them as values.
            "pair" if p.field(F::Value).is_some_and(|v| v.id() == node.id()) => node = p,
            "list_comprehension"
            | "set_comprehension"
            | "generator_expression"
            | "dictionary_comprehension"
                if p.field(F::Body).is_some_and(|b| b.id() == node.id()) =>
            {
                node = p;
            }
            "await" if !partial => return Sink::Consumed,
            // `done, pending = await asyncio.wait(ts, timeout=...)`: the pending set.
            "await" => {
                let mut a = p;
                while let Some(pp) = a
                    .parent()
                    .filter(|x| x.kind_name() == "parenthesized_expression")
                {
                    a = pp;
                }
                let Some(asg) = a.parent().filter(|x| {
                    x.kind_name() == "assignment"
                        && x.field(F::Right).is_some_and(|r| r.id() == a.id())
                }) else {
                    return Sink::Leaked;
                };
                let Some(left) = asg.field(F::Left) else {
                    return Sink::Leaked;
                };
                return match left.kind_name() {
                    "identifier" => Sink::Names(vec![left], false),
                    "pattern_list" | "tuple_pattern" | "list_pattern" => {
                        let mut c = left.walk();
                        let parts: Vec<Node> = left.named_children(&mut c).collect();
                        match parts.as_slice() {
                            // `while pending: done, pending = await wait(pending, ...)`
                            // runs until no task is pending.
                            [_, pending]
                                if pending.kind_name() == "identifier"
                                    && while_guarded(asg, &ident(*pending, src), src) =>
                            {
                                Sink::Consumed
                            }
                            [_, pending] if pending.kind_name() == "identifier" => {
                                Sink::Names(vec![*pending], false)
                            }
                            _ => Sink::Leaked,
                        }
                    }
                    _ => Sink::Leaked,
                };
            }
            // `for f in asyncio.as_completed(...)`, `for t in [create_task(...)]`.
            "for_statement" | "for_in_clause"
                if p.field(F::Right).is_some_and(|r| r.id() == node.id()) =>
            {
                if partial {
                    return Sink::Leaked;
                }
                let names = p.field(F::Left).map(identifiers).unwrap_or_default();
                return if names.is_empty() {
                    Sink::Dangling
                } else {
                    Sink::Names(names, false)
                };
            }
            "assignment" => {
                if p.field(F::Right).is_none_or(|r| r.id() != node.id()) {
                    return Sink::Dangling;
                }
                let Some(left) = p.field(F::Left) else {
                    return Sink::Dangling;
                };
                // `tasks[k] = create_task(...)`: an item of the container `tasks`.
                if left.kind_name() == "subscript" {
                    return match left.field(F::Value).map(unparen) {
                        Some(v) if v.kind_name() == "identifier" && !partial => {
                            Sink::Names(vec![v], false)
                        }
                        _ => Sink::Dangling,
                    };
                }
                let names = identifiers(left);
                return if names.is_empty() {
                    Sink::Dangling
                } else {
                    Sink::Names(names, partial)
                };
            }
            "named_expression" => {
                return match p.field(F::Name) {
                    Some(n) => Sink::Names(vec![n], partial),
                    None => Sink::Dangling,
                };
            }
            _ => return Sink::Dangling,
        }
    }
    Sink::Dangling
}

/// True when `node` is inside a `while` loop whose condition reads `name` (`while pending:`,
/// `while len(pending) > 0:`), with no function boundary in between.
fn while_guarded(node: Node, name: &str, src: &str) -> bool {
    let mut cur = node;
    while let Some(p) = cur.parent() {
        match p.kind_name() {
            "function_definition" | "lambda" | "class_definition" => return false,
            "while_statement"
                if p.field(F::Condition).is_some_and(|c| {
                    parse::walk(c).any(|n| n.kind_name() == "identifier" && ident(n, src) == name)
                }) =>
            {
                return true;
            }
            _ => {}
        }
        cur = p;
    }
    false
}

/// The plain names of an assignment target (`t`, `a, b`, `[a, b]`); a subscript or attribute
/// target makes the whole list empty (the task lands in an object cellguard does not follow).
fn identifiers(target: Node) -> Vec<Node> {
    match target.kind_name() {
        "identifier" => vec![target],
        "pattern_list" | "tuple_pattern" | "list_pattern" | "parenthesized_expression" => {
            let mut out = Vec::new();
            let mut c = target.walk();
            for k in target.named_children(&mut c) {
                let ids = identifiers(k);
                if ids.is_empty() {
                    return Vec::new();
                }
                out.extend(ids);
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The uses of the cell's names that [`dangling`] follows, indexed once per cell: the
/// identifiers by name (one walk of the tree, on the first lookup) and, per scope root, name,
/// depth and mode, the uses that consume what the name holds. A cell that creates many tasks
/// then costs one walk plus a short list per task, not a walk of the cell per task (round 7
/// S7-17: a thousand `t{i} = asyncio.create_task(...)` took five seconds, quadratic).
#[derive(Default)]
pub struct Uses<'t> {
    /// Identifiers by the name they spell, in pre-order; `None` until the first lookup.
    idents: Option<rustc_hash::FxHashMap<String, Vec<Node<'t>>>>,
    /// `(root id, name, depth, partial)` -> ids of the uses below the root that consume.
    consuming: rustc_hash::FxHashMap<(usize, String, u32, bool), Vec<usize>>,
    /// Identifier uses examined so far: the work the scaling test counts.
    pub examined: usize,
}

impl<'t> Uses<'t> {
    /// The identifiers spelling `name` inside `root` (the whole tree is indexed on first use).
    fn named(&mut self, root: Node<'t>, name: &str, src: &str) -> Vec<Node<'t>> {
        let idents = self.idents.get_or_insert_with(|| {
            let mut map: rustc_hash::FxHashMap<String, Vec<Node<'t>>> = Default::default();
            let mut stack = vec![top(root)];
            while let Some(n) = stack.pop() {
                if n.kind_name() == "identifier" {
                    map.entry(ident(n, src).into_owned()).or_default().push(n);
                    continue;
                }
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                stack.extend(kids.into_iter().rev());
            }
            map
        });
        let (lo, hi) = (root.start_byte(), root.end_byte());
        idents
            .get(name)
            .map(|l| {
                l.iter()
                    .filter(|n| n.start_byte() >= lo && n.end_byte() <= hi)
                    .copied()
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// True when some use of `name` (other than the binding `at`) consumes the task it holds
/// (`partial`: the wait result it holds, see [`Sink::Names`]).
fn name_consumed<'t>(
    cx: &mut Uses<'t>,
    root: Node<'t>,
    name: &str,
    at: Node<'t>,
    src: &str,
    depth: u32,
    partial: bool,
) -> bool {
    if depth > 4 {
        return false;
    }
    let key = (root.id(), name.to_string(), depth, partial);
    if let Some(ids) = cx.consuming.get(&key) {
        return ids.iter().any(|i| *i != at.id());
    }
    let mut ids = Vec::new();
    for n in cx.named(root, name, src) {
        cx.examined += 1;
        if use_consumes(cx, n, src, depth, partial) {
            ids.push(n.id());
        }
    }
    let found = ids.iter().any(|i| *i != at.id());
    cx.consuming.insert(key, ids);
    found
}

/// True when the loop `p` (a `for` statement or clause) consumes what its targets bind: every
/// target, or with `last_only` (`for k, t in tasks.items()`) the last one.
fn loop_consumes<'t>(
    cx: &mut Uses<'t>,
    p: Node<'t>,
    src: &str,
    depth: u32,
    last_only: bool,
) -> bool {
    let root = if p.kind_name() == "for_statement" {
        p
    } else {
        p.parent().unwrap_or(p)
    };
    p.field(F::Left).is_some_and(|l| {
        let mut targets = identifiers(l);
        if last_only {
            targets = targets.pop().into_iter().collect();
        }
        !targets.is_empty()
            && targets
                .iter()
                .all(|t| name_consumed(cx, root, &ident(*t, src), *t, src, depth + 1, false))
    })
}

/// True when the use `u` of a task-holding name (or of a container of tasks, or an item or
/// view of one) consumes it.
fn use_consumes<'t>(cx: &mut Uses<'t>, u: Node<'t>, src: &str, depth: u32, partial: bool) -> bool {
    if let Some(p) = u.parent() {
        if p.kind_name() == "attribute" && p.field(F::Object).is_some_and(|o| o.id() == u.id()) {
            let attr = p.field(F::Attribute).map(|a| ident(a, src).into_owned());
            let attr = attr.as_deref().unwrap_or("");
            // `t.cancel()`
            if ENDERS.contains(&attr) {
                return !partial;
            }
            // `tasks.values()`, `tasks.items()`: the same tasks.
            let call = p
                .parent()
                .filter(|c| {
                    c.kind_name() == "call"
                        && c.field(F::Function).is_some_and(|f| f.id() == p.id())
                })
                .filter(|_| !partial && VIEWS.contains(&attr));
            let Some(call) = call else {
                return false;
            };
            if attr == "items" {
                if let Some(l) = call.parent().filter(|l| {
                    matches!(l.kind_name(), "for_statement" | "for_in_clause")
                        && l.field(F::Right).is_some_and(|r| r.id() == call.id())
                }) {
                    return loop_consumes(cx, l, src, depth, true);
                }
            }
            return use_consumes(cx, call, src, depth, false);
        }
        // `tasks[k]`: an item of a container of tasks.
        if !partial
            && p.kind_name() == "subscript"
            && p.field(F::Value).is_some_and(|v| v.id() == u.id())
        {
            return use_consumes(cx, p, src, depth, false);
        }
        // `for t in tasks: await t` (also in comprehensions).
        if !partial
            && matches!(p.kind_name(), "for_statement" | "for_in_clause")
            && p.field(F::Right).is_some_and(|r| r.id() == u.id())
        {
            return loop_consumes(cx, p, src, depth, false);
        }
    }
    match sink_from(u, src, partial) {
        Sink::Consumed => true,
        Sink::Leaked => false,
        Sink::Names(ns, part) => {
            let root = top(u);
            ns.iter()
                .all(|n| name_consumed(cx, root, &ident(*n, src), *n, src, depth + 1, part))
        }
        Sink::Dangling if partial => false,
        Sink::Dangling => {
            // Any `await` around the use (`await helper(t)`).
            let mut cur = u;
            while let Some(p) = cur.parent() {
                if p.kind_name() == "await" {
                    return true;
                }
                if p.kind_name().ends_with("_statement") || p.kind_name() == "block" {
                    return false;
                }
                cur = p;
            }
            false
        }
    }
}

fn top(mut n: Node) -> Node {
    while let Some(p) = n.parent() {
        n = p;
    }
    n
}

/// True when the task made by `call` is never awaited, gathered, waited for or cancelled in
/// the cell.
/// An `asyncio.wait` call that may return early (see [`wait_is_partial`]) is followed to its
/// pending set.
pub fn dangling<'t>(cx: &mut Uses<'t>, call: Node<'t>, src: &str) -> bool {
    let partial = callee_last(call, src).as_deref() == Some("wait") && wait_is_partial(call, src);
    match sink_from(call, src, partial) {
        Sink::Consumed => false,
        Sink::Dangling | Sink::Leaked => true,
        Sink::Names(ns, part) => {
            let root = top(call);
            !ns.iter()
                .all(|n| name_consumed(cx, root, &ident(*n, src), *n, src, 0, part))
        }
    }
}

/// True when `recv` (the receiver of `recv.create_task(...)`) is the `as` name of an enclosing
/// `async with` (`async with asyncio.TaskGroup() as tg:`): the group awaits its tasks.
pub fn task_group_receiver(call: Node, recv: Node, src: &str) -> bool {
    let name = ident(recv, src);
    let mut cur = call;
    while let Some(p) = cur.parent() {
        if p.kind_name() == "with_statement" {
            let mut stack = vec![p];
            while let Some(n) = stack.pop() {
                if n.kind_name() == "block" {
                    continue;
                }
                if n.kind_name() == "as_pattern" {
                    if let Some(a) = n.field(F::Alias) {
                        if parse::text(a, src).trim() == name {
                            return true;
                        }
                    }
                }
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c));
            }
        }
        cur = p;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs [`dangling`] on every `create_task`/`ensure_future` call of `src` with one shared
    /// [`Uses`]: (dangling calls, identifier uses examined).
    fn scan(src: &str) -> (usize, usize) {
        let tree = crate::parse::parse(src, None);
        let mut cx = Uses::default();
        let calls: Vec<Node> = crate::parse::walk(tree.root_node())
            .filter(|n| {
                n.kind_name() == "call"
                    && matches!(
                        callee_last(*n, src).as_deref(),
                        Some("create_task" | "ensure_future")
                    )
            })
            .collect();
        let dangling_calls = calls.iter().filter(|c| dangling(&mut cx, **c, src)).count();
        (dangling_calls, cx.examined)
    }

    /// Round 7 S7-17: every task of a cell that makes many looked through the whole cell
    /// for the uses of its name, so n tasks cost n walks of an n-statement cell. The uses are
    /// now indexed once: the work (identifier uses examined) grows linearly with the number of
    /// tasks, whether each task has its own name or all reuse one. Counted, not timed.
    #[test]
    fn many_tasks_cost_linear_work() {
        for n in [200usize, 400, 800] {
            let mut own = String::from("import asyncio\n");
            let mut reused = String::from("import asyncio\n");
            for i in 0..n {
                own.push_str(&format!("t{i} = asyncio.create_task(w({i}))\n"));
                reused.push_str(&format!("t = asyncio.ensure_future(w({i}))\nr = await t\n"));
            }
            for i in 0..n {
                own.push_str(&format!("v{i} = await t{i}\n"));
            }
            let (d_own, w_own) = scan(&own);
            let (d_reused, w_reused) = scan(&reused);
            assert_eq!((d_own, d_reused), (0, 0), "every task is awaited");
            assert!(w_own <= 3 * n, "n = {n}: {w_own} uses examined");
            assert!(w_reused <= 3 * n, "n = {n}: {w_reused} uses examined");
        }
        // A task that is never awaited is still found among many awaited ones.
        let mut src = String::from("import asyncio\n");
        for i in 0..300 {
            src.push_str(&format!("t = asyncio.create_task(w({i}))\nawait t\n"));
        }
        src.push_str("u = asyncio.create_task(w(0))\n");
        assert_eq!(scan(&src).0, 1);
    }
}
