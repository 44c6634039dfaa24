//! `SBX003` on handlers that swallow the cancellation which stops a cell (round 7 S7-8).
//!
//! Colony has no per-cell timeout: only /abort stops a cell, by cancelling its task
//! (colony-reference §2.2, "`CancelledError` is ... re-raised"), and executors that do have a
//! limit use `asyncio.wait_for`, which cancels the cell and then *waits* for it to finish. The
//! cancellation arrives as `asyncio.CancelledError` at the `await` the cell is suspended in. A
//! handler that catches it there and does not re-raise lets the cell run on after the abort or
//! the timeout, as long as it likes (on CPython 3.11, `wait_for(cell(), 0.1)` of a loop that
//! swallows it returned after the loop's 1.5 s, not 0.1 s).
//!
//! Reported: an `except` clause that can catch `CancelledError` (bare `except:`,
//! `BaseException`, `CancelledError` under any module or alias, alone or in a tuple) on a
//! `try` whose body awaits (`await`, `async for`, `async with`, outside nested functions), when
//! the handler has no `raise`; and `with contextlib.suppress(...)` of such a type around an
//! `await`. `except Exception` does not catch `CancelledError` (a `BaseException` since
//! Python 3.8) and is not reported; a handler that re-raises (`except CancelledError: cleanup();
//! raise`) is deliberate handling. `asyncio.shield` (the other way a cell's work outlives its
//! cancellation) is reported by the SBX analysis with the fire-and-forget tasks (`SBX009`).
//!
//! Pure syntax plus the semantic model's bindings (to follow `C = asyncio.CancelledError` and
//! `from asyncio import CancelledError as C`); nothing is executed.

use super::runtime::innermost_scope;
use super::sandbox::CODE_EXECUTION_BUILTIN;
use super::Checker;
use crate::diagnostic::Diagnostic;
use crate::parse;
use crate::semantic::{BindingKind, SemanticModel};
use tree_sitter::Node;

/// Reports handlers and `suppress` blocks that swallow a cancellation at an `await`.
pub fn check(checker: &mut Checker) {
    if !checker.enabled(&CODE_EXECUTION_BUILTIN) {
        return;
    }
    let nodes = checker.nodes;
    let src = checker.src;
    let model = checker.semantic();
    let mut found = Vec::new();
    for id in nodes.of_kind("try_statement") {
        let t = nodes.node(id);
        let Some(body) = t.child_by_field_name("body") else {
            continue;
        };
        if !awaits(body) {
            continue;
        }
        let mut c = t.walk();
        for h in t.named_children(&mut c) {
            if h.kind() != "except_clause" {
                continue;
            }
            if handler_catches_cancel(h, src, &model) && !reraises(h) {
                found.push((
                    parse::range(head_range(h)),
                    format!(
                        "`{}` around an `await` swallows the cancellation that stops the cell (an abort, an executor's timeout): the cell runs on after it",
                        head(h, src)
                    ),
                ));
            }
        }
    }
    for id in nodes.of_kind("with_statement") {
        let w = nodes.node(id);
        let Some(body) = w.child_by_field_name("body") else {
            continue;
        };
        if !awaits(body) {
            continue;
        }
        let mut c = w.walk();
        let items: Vec<Node> = w
            .named_children(&mut c)
            .filter(|n| n.kind() == "with_clause")
            .flat_map(|cl| {
                let mut cc = cl.walk();
                cl.named_children(&mut cc).collect::<Vec<_>>()
            })
            .collect();
        for item in items {
            let Some(v) = item.child_by_field_name("value") else {
                continue;
            };
            let v = parse::unparenthesize(v);
            if v.kind() != "call" {
                continue;
            }
            let callee = v
                .child_by_field_name("function")
                .map(|f| parse::text(f, src))
                .unwrap_or("");
            if callee.rsplit('.').next() != Some("suppress") {
                continue;
            }
            let Some(args) = v.child_by_field_name("arguments") else {
                continue;
            };
            let mut ac = args.walk();
            let catches = args
                .named_children(&mut ac)
                .any(|a| type_catches_cancel(a, src, &model, 0));
            if catches {
                found.push((
                    parse::range(v),
                    format!(
                        "`{}` around an `await` swallows the cancellation that stops the cell (an abort, an executor's timeout): the cell runs on after it",
                        parse::text(v, src)
                    ),
                ));
            }
        }
    }
    // `raise asyncio.CancelledError()` (round 9 S9-21): a `BaseException`, so it passes the
    // executor's `except Exception` and unwinds the host's own task, like `SystemExit`.
    let mut raised = Vec::new();
    // Without the name in the text there is nothing to find (and the per-identifier lookups
    // below would cost a scan of every binding of every name).
    let mentioned = src.contains("CancelledError");
    let mut verdicts: std::collections::HashMap<(usize, String), bool> = Default::default();
    for id in nodes.of_kind("attribute").filter(|_| mentioned) {
        let a = nodes.node(id);
        if a.child_by_field_name("attribute")
            .is_some_and(|n| parse::ident(n, src) == "CancelledError")
            && !handled_or_tested(a, src)
            && a.parent().is_none_or(|p| p.kind() != "attribute")
        {
            raised.push(a);
        }
    }
    for id in nodes.of_kind("identifier").filter(|_| mentioned) {
        let n = nodes.node(id);
        if n.parent().is_some_and(|p| {
            matches!(
                p.kind(),
                "attribute" | "keyword_argument" | "aliased_import" | "dotted_name"
            )
        }) {
            continue;
        }
        let name = parse::ident(n, src);
        if name == "BaseException" {
            continue;
        }
        let key = (innermost_scope(&model, n), name.into_owned());
        let catches = match verdicts.get(&key) {
            Some(v) => *v,
            None => {
                let v = type_catches_cancel(n, src, &model, 0);
                verdicts.insert(key, v);
                v
            }
        };
        if catches && !handled_or_tested(n, src) {
            raised.push(n);
        }
    }
    for n in raised {
        found.push((
            parse::range(n),
            format!(
                "`{}` is not an `Exception`: raised in the cell (or subclassed and raised) it passes the executor's `except Exception` handlers and cancels the host's own task",
                parse::text(n, src)
            ),
        ));
    }
    for (range, message) in found {
        checker.report(
            Diagnostic::new(&CODE_EXECUTION_BUILTIN, range, message).with_help(
                "Re-raise it (`except asyncio.CancelledError: ...; raise`), or catch `Exception`, which does not include it",
            ),
        );
    }
}

/// True when `block` awaits outside nested functions, lambdas and classes (`await`,
/// `async for`, `async with`, an async comprehension).
fn awaits(block: Node) -> bool {
    let mut stack = vec![block];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "await" => return true,
            "function_definition" | "lambda" | "class_definition" => continue,
            "for_statement" | "with_statement" | "for_in_clause" => {
                let mut c = n.walk();
                if n.children(&mut c).any(|k| k.kind() == "async") {
                    return true;
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    false
}

/// True when the `except` clause `h` catches `CancelledError`: bare `except:`, or a type
/// (alone, in a tuple, before `as`) that [`type_catches_cancel`].
fn handler_catches_cancel(h: Node, src: &str, model: &SemanticModel) -> bool {
    let mut c = h.walk();
    let ty = h
        .named_children(&mut c)
        .find(|k| !matches!(k.kind(), "block" | "comment"));
    match ty {
        None => true,
        Some(t) => {
            let t = if t.kind() == "as_pattern" {
                match t.named_child(0) {
                    Some(inner) => inner,
                    None => return false,
                }
            } else {
                t
            };
            type_catches_cancel(t, src, model, 0)
        }
    }
}

/// True when the exception type expression `t` is or includes `CancelledError` or
/// `BaseException`, followed through tuples, plain single assignments (`C =
/// asyncio.CancelledError`) and import aliases (`from asyncio import CancelledError as C`).
fn type_catches_cancel(t: Node, src: &str, model: &SemanticModel, depth: u32) -> bool {
    if depth > 8 {
        return false;
    }
    let t = parse::unparenthesize(t);
    match t.kind() {
        "tuple" | "expression_list" | "list" => {
            let mut c = t.walk();
            let kids: Vec<Node> = t.named_children(&mut c).collect();
            kids.into_iter()
                .any(|k| type_catches_cancel(k, src, model, depth + 1))
        }
        "attribute" => t
            .child_by_field_name("attribute")
            .is_some_and(|a| parse::ident(a, src) == "CancelledError"),
        "identifier" => {
            let name = parse::ident(t, src);
            let scope = innermost_scope(model, t);
            let bindings = model.bindings(scope, &name);
            if bindings.is_empty() {
                return matches!(&*name, "CancelledError" | "BaseException");
            }
            bindings.iter().any(|b| match b.kind {
                BindingKind::Assignment => b
                    .value
                    .is_some_and(|v| type_catches_cancel(v, src, model, depth + 1)),
                BindingKind::Import => b
                    .name_node
                    .parent()
                    .filter(|p| p.kind() == "aliased_import")
                    .and_then(|p| p.child_by_field_name("name"))
                    .map_or(&*name == "CancelledError", |n| {
                        parse::text(n, src).rsplit('.').next() == Some("CancelledError")
                    }),
                _ => false,
            })
        }
        _ => false,
    }
}

/// True when `n` is only caught or tested: the type of an `except` clause (alone, in a tuple,
/// before `as`), an argument of `suppress(...)`, or the class argument of `isinstance` /
/// `issubclass`.
fn handled_or_tested(n: Node, src: &str) -> bool {
    let mut cur = n;
    while let Some(p) = cur.parent() {
        match p.kind() {
            "tuple" | "parenthesized_expression" | "expression_list" => cur = p,
            "as_pattern" => {
                if p.named_child(0).map(|c| c.id()) != Some(cur.id()) {
                    return false;
                }
                cur = p;
            }
            "except_clause" | "except_group_clause" => return true,
            "argument_list" => {
                let Some(call) = p.parent() else {
                    return false;
                };
                let callee = call
                    .child_by_field_name("function")
                    .map(|f| parse::text(f, src))
                    .unwrap_or("");
                let last = callee.rsplit('.').next().unwrap_or("");
                if last == "suppress" {
                    return true;
                }
                let mut c = p.walk();
                let args: Vec<Node> = p.named_children(&mut c).collect();
                return matches!(last, "isinstance" | "issubclass")
                    && args.len() == 2
                    && args[1].id() == cur.id();
            }
            _ => return false,
        }
    }
    false
}

/// True when the handler contains a `raise` outside nested functions and classes.
fn reraises(handler: Node) -> bool {
    let mut stack = vec![handler];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "raise_statement" => return true,
            "function_definition" | "lambda" | "class_definition" => continue,
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    false
}

/// The `except ...` head of a handler, without its body.
fn head_range(h: Node) -> Node {
    let mut c = h.walk();
    let ty = h
        .named_children(&mut c)
        .find(|k| !matches!(k.kind(), "block" | "comment"));
    ty.or_else(|| h.child(0)).unwrap_or(h)
}

/// The text of the handler's first line, without the colon (`except asyncio.CancelledError`).
fn head(h: Node, src: &str) -> String {
    let text = parse::text(h, src);
    let first = text.lines().next().unwrap_or(text).trim_end();
    let first = first.split(':').next().unwrap_or(first);
    first.trim().to_string()
}
