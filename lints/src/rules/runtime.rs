//! `RUN`: runtime semantics of the namespace (colony-reference §2.2, §4.0): coroutines that are
//! never awaited, guardrail blocks swallowed by broad `except`, and routes around the guardrail.

use super::Checker;
use crate::diagnostic::{Diagnostic, Edit, Fix, FixAvailability, Rule, RuleDoc, Severity};
use crate::parse;
use crate::semantic::{self, AwaitContext, BindingKind, CallKind, GuardKind};
use crate::source::TextRange;
use tree_sitter::Node;

/// RUN001 missing-await.
pub static MISSING_AWAIT: Rule = Rule {
    code: "RUN001",
    name: "missing-await",
    severity: Severity::Error,
    summary: "Coroutine from the namespace called without await: a silent no-op",
    fix: FixAvailability::Sometimes,
    doc: RuleDoc {
        what: "Reports calls of the namespace's coroutine functions (`run`, `browse`, `signal_completion` in Colony; `[namespace] async-names`) and of async knowledge-base tools that are not awaited, including `r = run(...)` and `[run(...) for ...]`. Not reported when the coroutine is handed to `asyncio.gather`/`wait`/`create_task`-style functions, or assigned to a name that is awaited later, or stored in a container literal (list, tuple, set, dict value) assigned to a name the cell reads again (`coros = [run(..)]` then `for c in coros: await c`).",
        why: "Calling a coroutine function only creates a coroutine: nothing is dispatched, nothing is recorded, and a later `r.success` raises `AttributeError`. Colony's validators do not check it.",
        example: "r = run(\"A.a.report\")\n",
        fixed_example: "r = await run(\"A.a.report\")\n",
        fix_safety: "Safe: inserts `await ` (parenthesised when the call is followed by `.attr`, `[...]` or `(...)`) where `await` is legal, at the top level of the cell (IPython runs cells with top-level await) or inside `async def`. No fix inside a plain `def`, a `lambda`, a class body or a generator expression.",
        options: "`[namespace] async-names`.",
        source: "Colony REPL await semantics (colony-reference §2.2, §7.3 case 24).",
        ..RuleDoc::EMPTY
    },
};

/// RUN002 swallowed-guardrail-block.
pub static SWALLOWED_GUARDRAIL_BLOCK: Rule = Rule {
    code: "RUN002",
    name: "swallowed-guardrail-block",
    severity: Severity::Warning,
    summary: "Action inside a try whose handler catches every exception, swallowing guardrail blocks",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports an action (or a call of a cell function that dispatches one) inside a `try` whose first handler able to catch `GuardrailBlockedError` is bare `except:`, `except Exception` or `except BaseException` (alone or in a tuple) and does not re-raise, and actions inside `with suppress(Exception)`. A handler naming `GuardrailBlockedError` first, or one that re-raises, is fine.",
        why: "A guardrail block raises `GuardrailBlockedError` to abort the cell atomically. A broad handler swallows it and the rest of the cell runs, which is the silent-failure pattern the atomic abort was built to prevent.",
        example: "try:\n    await run(\"A.a.respond\", content=\"Done.\")\nexcept Exception:\n    log(\"respond failed\")\n",
        fixed_example: "r = await run(\"A.a.respond\", content=\"Done.\")\nif not r.success:\n    log(\"respond failed\")\n",
        fix_safety: "No fix.",
        options: "None.",
        source: "Colony block handling (colony-reference §4.0.1).",
        ..RuleDoc::EMPTY
    },
};

/// RUN003 guardrail-bypass.
pub static GUARDRAIL_BYPASS: Rule = Rule {
    code: "RUN003",
    name: "guardrail-bypass",
    severity: Severity::Error,
    summary: "Route that dispatches actions without the runtime guardrail",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports `submit_action(...)` and capability calls through `_agent` or `_repl` (`_agent.get_capability_by_type(X).method(...)`), when those are the namespace's names, and every other read of those three names that the cell does not bind itself (`sh = _repl.shell`, `a = _agent`, `f(_repl)`, `q = submit_action`, `{\"s\": submit_action}`, `def f(s=submit_action)`): a value taken from them is used later without the guardrail (issue 4 round 3: `_repl.shell.getoutput(...)` runs shell commands).",
        why: "Only `run()` asks the runtime guardrail. Actions queued with `submit_action` run after the cell straight through the dispatcher, and direct capability calls never reach it, so guardrails cannot block them.",
        example: "submit_action(Action(action_type=\"A.a.delete_all\"))\n",
        fixed_example: "await run(\"A.a.delete_all\")\n",
        fix_safety: "No fix.",
        options: "`[namespace]`.",
        source: "Colony guardrail protocol (colony-reference §2.1, §4.0).",
        ..RuleDoc::EMPTY
    },
};

/// The family's rules.
pub static RULES: &[&Rule] = &[
    &MISSING_AWAIT,
    &SWALLOWED_GUARDRAIL_BLOCK,
    &GUARDRAIL_BYPASS,
];

/// Runs the family's checks.
pub fn check(checker: &mut Checker) {
    if checker.enabled(&MISSING_AWAIT) {
        missing_await(checker);
    }
    if checker.enabled(&SWALLOWED_GUARDRAIL_BLOCK) {
        swallowed_block(checker);
    }
    if checker.enabled(&GUARDRAIL_BYPASS) {
        bypass(checker);
    }
}

/// Functions that run or schedule the coroutines passed to them.
const COROUTINE_CONSUMERS: &[&str] = &[
    "gather",
    "wait",
    "wait_for",
    "shield",
    "create_task",
    "ensure_future",
    "as_completed",
    "run",
    "run_until_complete",
    "run_coroutine_threadsafe",
    "timeout",
];

/// True when the coroutine made by `call` is handed (directly, or inside a list, tuple, splat or
/// comprehension) to a function that runs it.
fn consumed(call: Node, src: &str) -> bool {
    let mut node = call;
    while let Some(parent) = node.parent() {
        match parent.kind() {
            "argument_list"
            | "list"
            | "tuple"
            | "set"
            | "list_splat"
            | "parenthesized_expression"
            | "list_comprehension"
            | "generator_expression"
            | "set_comprehension"
            | "expression_list"
            | "keyword_argument" => node = parent,
            "call" => {
                let Some(callee) = parent.child_by_field_name("function") else {
                    return false;
                };
                if callee.id() == node.id() {
                    return false;
                }
                let name = semantic::dotted_name(callee, src)
                    .or_else(|| {
                        callee
                            .child_by_field_name("attribute")
                            .map(|a| parse::text(a, src).to_string())
                    })
                    .unwrap_or_default();
                let last = name.rsplit('.').next().unwrap_or("");
                return COROUTINE_CONSUMERS.contains(&last);
            }
            _ => return false,
        }
    }
    false
}

/// True when the coroutine made by `call` is stored in a container literal (list, tuple,
/// set, dict value, at any depth) that is assigned to a target read elsewhere in the cell
/// (`coros = [run(..), run(..)]` then `for c in coros: await c`), or to an attribute or
/// subscript target: what happens to it then is not known, so neither RUN001 nor its `await`
/// fix can be right (new-user N-11: the fix made `await c` await an `ActionResult`).
fn stored_and_read(call: Node, src: &str, nodes: &crate::nodes::NodeTable) -> bool {
    let mut node = call;
    let mut in_container = false;
    while let Some(parent) = node.parent() {
        match parent.kind() {
            "list" | "tuple" | "set" | "dictionary" | "expression_list" => in_container = true,
            "pair" => {
                if parent.child_by_field_name("value").map(|v| v.id()) != Some(node.id()) {
                    return false;
                }
            }
            "parenthesized_expression" => {}
            "assignment" => {
                if !in_container
                    || parent.child_by_field_name("right").map(|r| r.id()) != Some(node.id())
                {
                    return false;
                }
                let Some(left) = parent.child_by_field_name("left") else {
                    return false;
                };
                if left.kind() != "identifier" {
                    return true;
                }
                let name = parse::ident(left, src);
                return nodes.of_kind("identifier").any(|id| {
                    let n = nodes.node(id);
                    n.id() != left.id() && parse::ident(n, src) == name
                });
            }
            _ => return false,
        }
        node = parent;
    }
    false
}

/// The name a call's result is assigned to (`r = run(...)`).
fn assigned_name<'a>(call: Node<'a>, src: &'a str) -> Option<std::borrow::Cow<'a, str>> {
    let mut node = call;
    let mut parent = node.parent()?;
    while parent.kind() == "parenthesized_expression" {
        node = parent;
        parent = node.parent()?;
    }
    if parent.kind() != "assignment" || parent.child_by_field_name("right")?.id() != node.id() {
        return None;
    }
    let left = parent.child_by_field_name("left")?;
    (left.kind() == "identifier").then(|| parse::ident(left, src))
}

fn missing_await(checker: &mut Checker) {
    let model = checker.semantic();
    let ns = &checker.settings.namespace;
    let kb = checker.kb;
    let src = checker.src;
    for (i, site) in model.sites.iter().enumerate() {
        if site.awaited {
            continue;
        }
        let name = parse::ident(site.callee, src);
        let name = &*name;
        let is_coroutine = match model.kinds[i] {
            CallKind::Action(a) => match model.dialect {
                crate::config::Dialect::Colony => ns.async_names.contains(name),
                crate::config::Dialect::Functions => model.actions[a]
                    .key_value
                    .as_deref()
                    .and_then(|k| kb.get(k))
                    .is_some_and(|a| a.is_async),
            },
            CallKind::Namespace => ns.async_names.contains(name),
            _ => false,
        };
        if !is_coroutine
            || consumed(site.node, src)
            || stored_and_read(site.node, src, checker.nodes)
        {
            continue;
        }
        if assigned_name(site.node, src).is_some_and(|n| model.awaited_names.contains(&*n)) {
            continue;
        }
        let what = if matches!(model.kinds[i], CallKind::Action(_)) {
            "the action is never dispatched"
        } else {
            "it never runs"
        };
        let mut d = Diagnostic::new(
            &MISSING_AWAIT,
            parse::range(site.node),
            format!("`{name}()` is a coroutine function called without `await`: {what}"),
        );
        match site.await_context {
            AwaitContext::Allowed => {
                d = d.with_fix(Fix::safe("Insert `await`", await_edits(site.node)));
            }
            AwaitContext::GeneratorExpression => {
                d = d.with_help("`await` here would make the generator expression asynchronous: use a list comprehension with `await`");
            }
            AwaitContext::Forbidden => {
                let inside = match site.function.map(|f| &model.functions[f]) {
                    Some(f) if f.is_lambda => "a `lambda`".to_string(),
                    Some(f) => format!("the plain function `{}`", f.name.as_deref().unwrap_or("?")),
                    None => "a class body".to_string(),
                };
                d = d.with_help(format!(
                    "`await` is not allowed inside {inside}: make it `async def` and await its calls"
                ));
            }
        }
        checker.report(d);
    }
}

/// Edits inserting `await` before `call`, parenthesised when the call is the object of an
/// attribute, subscript or call (`await` binds looser than those).
fn await_edits(call: Node) -> Vec<Edit> {
    let wrap = call.parent().is_some_and(|p| {
        let field = match p.kind() {
            "attribute" => "object",
            "subscript" => "value",
            "call" => "function",
            _ => return false,
        };
        p.child_by_field_name(field)
            .is_some_and(|c| c.id() == call.id())
    });
    if wrap {
        vec![
            Edit::insert(call.start_byte(), "(await "),
            Edit::insert(call.end_byte(), ")"),
        ]
    } else {
        vec![Edit::insert(call.start_byte(), "await ")]
    }
}

/// How a handler treats `GuardrailBlockedError`.
#[derive(Debug, PartialEq, Eq)]
enum Catch {
    /// Names it: deliberate handling.
    Explicit,
    /// Catches it among everything else.
    Broad,
    /// Does not catch it (as far as cellguard can tell).
    Narrow,
}

/// Follows a name bound once, by a plain assignment, to its value (`E = Exception` then
/// `except E:`), a few steps deep; anything else is returned as it is.
type Resolve<'r, 't> = &'r dyn Fn(Node<'t>) -> Node<'t>;

fn classify_types<'t>(exprs: &[Node<'t>], src: &str, resolve: Resolve<'_, 't>) -> Catch {
    let mut names = Vec::new();
    for e in exprs {
        let e = parse::unparenthesize(resolve(*e));
        match e.kind() {
            "tuple" | "expression_list" => {
                let mut cursor = e.walk();
                let kids: Vec<Node> = e.named_children(&mut cursor).collect();
                for k in kids {
                    names.push(semantic::dotted_name(resolve(k), src));
                }
            }
            _ => names.push(semantic::dotted_name(e, src)),
        }
    }
    let last = |n: &Option<String>| {
        n.as_deref()
            .map(|n| n.rsplit('.').next().unwrap_or(n).to_string())
    };
    if names
        .iter()
        .any(|n| last(n).as_deref() == Some("GuardrailBlockedError"))
    {
        Catch::Explicit
    } else if names
        .iter()
        .any(|n| matches!(last(n).as_deref(), Some("Exception" | "BaseException")))
    {
        Catch::Broad
    } else {
        Catch::Narrow
    }
}

fn handler_catch<'t>(handler: Node<'t>, src: &str, resolve: Resolve<'_, 't>) -> Catch {
    let mut cursor = handler.walk();
    let ty = handler
        .named_children(&mut cursor)
        .find(|c| !matches!(c.kind(), "block" | "comment"));
    match ty {
        None => Catch::Broad, // bare `except:`
        Some(t) => {
            let t = if t.kind() == "as_pattern" {
                match t.named_child(0) {
                    Some(inner) => inner,
                    None => return Catch::Narrow,
                }
            } else {
                t
            };
            classify_types(&[t], src, resolve)
        }
    }
}

/// True when the handler body contains a `raise` outside nested functions and classes.
fn reraises(handler: Node) -> bool {
    let mut stack = vec![handler];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "raise_statement" => return true,
            "function_definition" | "lambda" | "class_definition" if n.id() != handler.id() => {
                continue
            }
            _ => {}
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    false
}

fn head(node: Node, src: &str) -> String {
    let text = parse::text(node, src);
    let first = text.lines().next().unwrap_or(text).trim_end();
    first.strip_suffix(':').unwrap_or(first).trim().to_string()
}

fn line_of(src: &str, offset: usize) -> usize {
    src.as_bytes()[..offset.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn swallowed_block<'a>(checker: &mut Checker<'a>) {
    let model = checker.semantic();
    let src = checker.src;
    let sites: Vec<usize> = model.dispatching_sites().collect();
    let resolve = |mut n: Node<'a>| -> Node<'a> {
        for _ in 0..8 {
            let inner = parse::unparenthesize(n);
            if inner.kind() != "identifier" {
                break;
            }
            let name = parse::ident(inner, src);
            match model.bindings(innermost_scope(&model, inner), &name) {
                [b] if b.kind == BindingKind::Assignment && b.value.is_some() => {
                    n = b.value.unwrap_or(n);
                }
                _ => break,
            }
        }
        n
    };
    for i in sites {
        let site = &model.sites[i];
        let mut swallower: Option<(Node, String)> = None;
        'guards: for guard in site.guards.iter().rev() {
            match guard.kind {
                GuardKind::Suppress => match classify_types(&guard.suppressed, src, &resolve) {
                    Catch::Broad => {
                        swallower = Some((guard.node, head(guard.node, src)));
                        break 'guards;
                    }
                    Catch::Explicit => break 'guards,
                    Catch::Narrow => {}
                },
                GuardKind::Try => {
                    for h in &guard.handlers {
                        match handler_catch(*h, src, &resolve) {
                            Catch::Explicit => break 'guards,
                            Catch::Broad if reraises(*h) => continue 'guards,
                            Catch::Broad => {
                                swallower = Some((*h, head(*h, src)));
                                break 'guards;
                            }
                            Catch::Narrow => {}
                        }
                    }
                }
            }
        }
        let Some((handler, text)) = swallower else {
            continue;
        };
        let subject = match model.kinds[i] {
            CallKind::CellFunction(f) => format!(
                "`{}()`, which dispatches actions,",
                model.functions[f].name.as_deref().unwrap_or("<lambda>")
            ),
            _ => "Action".to_string(),
        };
        let place = if handler.kind() == "with_statement" {
            format!("inside `{text}`, which swallows")
        } else {
            format!("inside `try` whose handler `{text}` swallows")
        };
        checker.report(
            Diagnostic::new(
                &SWALLOWED_GUARDRAIL_BLOCK,
                parse::range(site.node),
                format!(
                    "{subject} {place} `GuardrailBlockedError`: a guardrail block no longer aborts the cell"
                ),
            )
            .with_help(if handler.kind() == "with_statement" {
                format!(
                    "Line {}: suppress narrower exceptions, or check `result.success` instead",
                    line_of(src, handler.start_byte())
                )
            } else {
                format!(
                    "Line {}: add `except GuardrailBlockedError: raise` before it, re-raise, or catch narrower exceptions",
                    line_of(src, handler.start_byte())
                )
            }),
        );
    }
}

/// The identifier at the root of a call chain (`_agent` in `_agent.a(x).b(y)`).
fn chain_root(node: Node) -> Option<Node> {
    let mut n = parse::unparenthesize(node);
    loop {
        n = match n.kind() {
            "identifier" => return Some(n),
            "attribute" => n.child_by_field_name("object")?,
            "call" => n.child_by_field_name("function")?,
            "subscript" => n.child_by_field_name("value")?,
            "await" => n.named_child(0)?,
            _ => return None,
        };
        n = parse::unparenthesize(n);
    }
}

/// The innermost scope whose node contains `node` (the module when none does): where a
/// name read at `node` is looked up.
/// The innermost scope of the semantic model that contains `node`.
pub(crate) fn innermost_scope(model: &crate::semantic::SemanticModel, node: Node) -> usize {
    let r = node.byte_range();
    model
        .scopes
        .iter()
        .enumerate()
        .filter(|(_, s)| s.node.start_byte() <= r.start && r.end <= s.node.end_byte())
        .min_by_key(|(_, s)| s.node.end_byte() - s.node.start_byte())
        .map_or(0, |(i, _)| i)
}

fn bypass(checker: &mut Checker) {
    let model = checker.semantic();
    let ns = &checker.settings.namespace;
    let src = checker.src;
    let mut capability_calls: Vec<(usize, TextRange)> = Vec::new();
    let mut submit_calls: Vec<TextRange> = Vec::new();
    for (i, site) in model.sites.iter().enumerate() {
        let callee_name = parse::ident(site.callee, src);
        if model.kinds[i] == CallKind::Namespace && callee_name == "submit_action" {
            submit_calls.push(parse::range(site.callee));
            checker.report(
                Diagnostic::new(
                    &GUARDRAIL_BYPASS,
                    parse::range(site.node),
                    "`submit_action()` queues an action that runs after the cell without the runtime guardrail",
                )
                .with_help("Dispatch actions with `await run(\"key\", ...)` so guardrails check them"),
            );
            continue;
        }
        let Some(root) = chain_root(site.callee) else {
            continue;
        };
        let root_name = parse::ident(root, src);
        let root_name = &*root_name;
        if !matches!(root_name, "_agent" | "_repl")
            || !ns.names.contains(root_name)
            || model.lookup(site.scope, root_name).is_some()
        {
            continue;
        }
        capability_calls.push((i, parse::range(site.callee)));
    }
    // Any other read of `_agent`/`_repl` (`sh = _repl.shell`, `a = _agent`, `f(_agent)`) or of
    // `submit_action` (`f = submit_action`, `{"s": submit_action}`, a default argument): the
    // value leaves the calls above, and whatever is reached from it (the host's shell, the
    // capabilities, the queue) is used without the runtime guardrail.
    let nodes = checker.nodes;
    let mut reads: Vec<(TextRange, String)> = Vec::new();
    for id in 0..nodes.len() {
        if nodes.kind(id) != "identifier" {
            continue;
        }
        let node = nodes.node(id);
        let name = parse::ident(node, src).into_owned();
        if !matches!(name.as_str(), "_agent" | "_repl" | "submit_action")
            || !ns.names.contains(name.as_str())
            || model.lookup(innermost_scope(&model, node), &name).is_some()
        {
            continue;
        }
        let field = nodes.field(id);
        let parent_kind = nodes.parent(id).map(|p| nodes.kind(p));
        let not_a_read = matches!(
            (parent_kind, field),
            (Some("attribute"), Some("attribute"))
                | (Some("keyword_argument"), Some("name"))
                | (Some("assignment" | "augmented_assignment"), Some("left"))
                | (Some("parameters" | "lambda_parameters"), _)
                | (
                    Some("default_parameter" | "typed_default_parameter"),
                    Some("name")
                )
        ) || (parent_kind == Some("typed_parameter") && field != Some("type"));
        let range = parse::range(node);
        if not_a_read
            || submit_calls.contains(&range)
            || capability_calls
                .iter()
                .any(|&(_, callee)| callee.contains_range(range))
        {
            continue;
        }
        reads.push((range, name));
    }
    for (range, name) in reads {
        let what = if name == "_repl" {
            "the host's REPL (its shell runs commands and code)"
        } else if name == "submit_action" {
            "the runtime's action queue (what it queues runs after the cell)"
        } else {
            "the host's agent (its capabilities run without the guardrail)"
        };
        checker.report(
            Diagnostic::new(
                &GUARDRAIL_BYPASS,
                range,
                format!("`{name}` is {what}: a value taken from it is used without the runtime guardrail"),
            )
            .with_help("Dispatch actions with `await run(\"key\", ...)` so guardrails check them"),
        );
    }
    // Report each chain once, at its outermost call.
    for &(i, _) in &capability_calls {
        let node_range = parse::range(model.sites[i].node);
        let inner = capability_calls
            .iter()
            .any(|&(j, callee)| j != i && callee.contains_range(node_range));
        if inner {
            continue;
        }
        let site = &model.sites[i];
        let text = parse::text(site.callee, src);
        let shown: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let root = chain_root(site.callee)
            .map(|r| parse::text(r, src))
            .unwrap_or("_agent");
        let shown = match site.callee.child_by_field_name("attribute") {
            Some(attr) if shown.chars().count() > 48 => {
                format!("{root}.….{}", parse::text(attr, src))
            }
            _ => shown,
        };
        checker.report(
            Diagnostic::new(
                &GUARDRAIL_BYPASS,
                parse::range(site.node),
                format!("`{shown}(...)` calls the runtime through `{root}`, bypassing the runtime guardrail"),
            )
            .with_help("Dispatch actions with `await run(\"key\", ...)` so guardrails check them"),
        );
    }
}
