//! Where an asyncio task the cell creates ends up (`SBX009`'s fire-and-forget tasks).
//!
//! Colony runs every cell on the host's running event loop (colony-reference §2.1), so a task
//! the cell creates and never waits for keeps running on the host's loop after the cell's step
//! has returned, outside the executor's limits, like a `call_soon` callback. The shape is that
//! of ruff's `RUF006` (asyncio dangling task), widened to names: a task is consumed when the
//! cell awaits it, hands it to `gather`/`wait`/`wait_for`/`shield`/`as_completed`, cancels it, or
//! puts it in a list (literal, comprehension, `.append`) or a name that is consumed that way,
//! also through a `for` loop over that list. Everything else (an expression statement, a set of
//! background tasks, an attribute, a `return`, an unknown function's argument) is dangling.
//!
//! Pure syntax over the tree-sitter tree; nothing is executed.

use super::field::{FieldChild, F};
use super::interp::{ident, unparen};
use crate::parse;
use tree_sitter::Node;

/// Functions that wait for (or cancel with) the tasks passed to them.
const CONSUMERS: &[&str] = &["gather", "wait", "wait_for", "shield", "as_completed"];

/// Methods that put a task into the container they are called on.
const COLLECTORS: &[&str] = &["append", "extend", "insert", "add"];

/// Methods of a task that end it inside the cell.
const ENDERS: &[&str] = &["cancel"];

/// Where a value flows.
enum Sink<'t> {
    /// Awaited or handed to a consumer.
    Consumed,
    /// Stored in these names (all must be consumed).
    Names(Vec<Node<'t>>),
    /// Anywhere else.
    Dangling,
}

/// The last dotted segment of a callee (`asyncio.gather` -> `gather`).
fn callee_last(call: Node, src: &str) -> Option<String> {
    let f = unparen(call.field(F::Function)?);
    match f.kind_name() {
        "identifier" => Some(ident(f, src).into_owned()),
        "attribute" => Some(ident(f.field(F::Attribute)?, src).into_owned()),
        _ => None,
    }
}

/// Follows the value of `node` up through brackets and containers to where it lands.
fn sink<'t>(mut node: Node<'t>, src: &str) -> Sink<'t> {
    for _ in 0..64 {
        let Some(p) = node.parent() else {
            return Sink::Dangling;
        };
        match p.kind_name() {
            "parenthesized_expression"
            | "list"
            | "tuple"
            | "set"
            | "expression_list"
            | "list_splat"
            | "keyword_argument" => node = p,
            "list_comprehension" | "set_comprehension" | "generator_expression"
                if p.field(F::Body).is_some_and(|b| b.id() == node.id()) =>
            {
                node = p;
            }
            "await" => return Sink::Consumed,
            "argument_list" => {
                let Some(call) = p.parent().filter(|c| c.kind_name() == "call") else {
                    return Sink::Dangling;
                };
                let last = callee_last(call, src).unwrap_or_default();
                if CONSUMERS.contains(&last.as_str()) {
                    return Sink::Consumed;
                }
                if COLLECTORS.contains(&last.as_str()) {
                    let recv = call
                        .field(F::Function)
                        .map(unparen)
                        .filter(|f| f.kind_name() == "attribute")
                        .and_then(|f| f.field(F::Object))
                        .map(unparen)
                        .filter(|o| o.kind_name() == "identifier");
                    return match recv {
                        Some(r) => Sink::Names(vec![r]),
                        None => Sink::Dangling,
                    };
                }
                return Sink::Dangling;
            }
            "assignment" => {
                if p.field(F::Right).is_none_or(|r| r.id() != node.id()) {
                    return Sink::Dangling;
                }
                let Some(left) = p.field(F::Left) else {
                    return Sink::Dangling;
                };
                let names = identifiers(left);
                return if names.is_empty() {
                    Sink::Dangling
                } else {
                    Sink::Names(names)
                };
            }
            "named_expression" => {
                return match p.field(F::Name) {
                    Some(n) => Sink::Names(vec![n]),
                    None => Sink::Dangling,
                };
            }
            _ => return Sink::Dangling,
        }
    }
    Sink::Dangling
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

/// True when some use of `name` (other than the binding `at`) consumes the task it holds.
fn name_consumed(root: Node, name: &str, at: Node, src: &str, depth: u32) -> bool {
    if depth > 4 {
        return false;
    }
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind_name() == "identifier" && n.id() != at.id() && ident(n, src) == name {
            if use_consumes(n, src, depth) {
                return true;
            }
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    false
}

/// True when the use `u` of a task-holding name consumes it.
fn use_consumes(u: Node, src: &str, depth: u32) -> bool {
    // `t.cancel()`
    if let Some(p) = u.parent() {
        if p.kind_name() == "attribute" && p.field(F::Object).is_some_and(|o| o.id() == u.id()) {
            return p
                .field(F::Attribute)
                .is_some_and(|a| ENDERS.contains(&&*ident(a, src)));
        }
        // `for t in tasks: await t` (also in comprehensions).
        if matches!(p.kind_name(), "for_statement" | "for_in_clause")
            && p.field(F::Right).is_some_and(|r| r.id() == u.id())
        {
            let root = if p.kind_name() == "for_statement" {
                p
            } else {
                p.parent().unwrap_or(p)
            };
            return p.field(F::Left).is_some_and(|l| {
                let targets = identifiers(l);
                !targets.is_empty()
                    && targets
                        .iter()
                        .all(|t| name_consumed(root, &ident(*t, src), *t, src, depth + 1))
            });
        }
    }
    match sink(u, src) {
        Sink::Consumed => true,
        Sink::Names(ns) => {
            let root = top(u);
            ns.iter()
                .all(|n| name_consumed(root, &ident(*n, src), *n, src, depth + 1))
        }
        Sink::Dangling => {
            // Any `await` around the use (`await asyncio.wait({t}, timeout=1)`).
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
pub fn dangling(call: Node, src: &str) -> bool {
    match sink(call, src) {
        Sink::Consumed => false,
        Sink::Dangling => true,
        Sink::Names(ns) => {
            let root = top(call);
            !ns.iter()
                .all(|n| name_consumed(root, &ident(*n, src), *n, src, 0))
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
