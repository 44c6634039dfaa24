//! The semantic model of one cell, shared by the `API`, `SHP` and `RUN` rule families.
//!
//! Built in one walk over the tree-sitter tree, then resolved:
//! - **Scopes and bindings** with Python's rules: module, `def`, `lambda`, `class` and
//!   comprehension scopes; names bound by assignments (tuple, list and star targets),
//!   augmented and annotated assignments, walrus (bound in the nearest non-comprehension
//!   scope), `for`/`with`/`except` targets, comprehension variables, parameters, `def`/`class`,
//!   imports, `del`, `match` captures; `global`/`nonlocal` move a binding to the declaring
//!   scope. Resolution is flow-insensitive: a name bound anywhere in a scope is bound in the
//!   whole scope (Python's own rule for function scopes, a safe approximation for the module).
//!   Class scopes are not visible from nested functions or comprehensions.
//! - **Call sites**: every call, with whether it is awaited, the loops and comprehensions
//!   around it, the cell function it belongs to, the `try` statements (and
//!   `contextlib.suppress` blocks) whose handlers would see its exceptions, and whether
//!   `await` is legal there (top level of an IPython cell or inside `async def`).
//! - **Action calls**. Colony dialect: a call of the namespace's `run` by bare name, when the
//!   cell does not rebind `run` (`asyncio.run`, `x.run`, `self.run`, `rerun` are not actions).
//!   The key is the first positional argument or `action_key=`; a constant is resolved through
//!   string literals, implicit and `+` concatenation, f-strings whose fields are constants, and
//!   variables bound exactly once to such a constant. Functions dialect (smolagents, CodeAct,
//!   BFCL): a call whose callee (a name or a dotted name such as `spotify.play`) is a
//!   knowledge-base tool whose root name the cell does not bind.
//! - **Unknown names**: calls whose root name is bound neither by the cell, the namespace,
//!   Python 3.11's builtins, nor (functions dialect) the knowledge base.
//!
//! Semantics borrowed from Colony's REPL (colony-reference §2.1-§2.2: `run` is async, takes the
//! key as its only positional argument or as `action_key=`) and from smolagents' CodeAgent
//! (tools are plain functions in the executor's namespace).

use crate::config::{Dialect, Settings};
use crate::kb::KnowledgeBase;
use crate::nodes::{NodeId, NodeTable};
use crate::parse;
use std::collections::{HashMap, HashSet};
use tree_sitter::{Node, Tree};

/// Deepest syntax nesting the model descends into; deeper subtrees are skipped (and
/// [`SemanticModel::truncated`] is set) so pathological input cannot exhaust the stack.
pub const MAX_DEPTH: usize = 200;

/// Every name in `dir(builtins)` of CPython 3.11, sorted (byte order).
pub const PYTHON_BUILTINS: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "False",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "None",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "True",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "__build_class__",
    "__debug__",
    "__doc__",
    "__import__",
    "__loader__",
    "__name__",
    "__package__",
    "__spec__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
];

/// True when `name` is a CPython 3.11 builtin.
pub fn is_builtin(name: &str) -> bool {
    PYTHON_BUILTINS.binary_search(&name).is_ok()
}

/// Index of a [`Scope`] in [`SemanticModel::scopes`].
pub type ScopeId = usize;
/// Index of a [`Function`] in [`SemanticModel::functions`].
pub type FunctionId = usize;
/// Index of a [`CallSite`] in [`SemanticModel::sites`].
pub type SiteId = usize;

/// What introduced a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    /// The cell itself.
    Module,
    /// A `def` or `async def` body.
    Function,
    /// A `lambda`.
    Lambda,
    /// A `class` body (invisible from nested functions and comprehensions).
    Class,
    /// A list/set/dict comprehension or generator expression.
    Comprehension,
}

/// How a name got bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingKind {
    /// `x = ...`, including tuple and star targets and chained assignments.
    Assignment,
    /// `x: T` without a value (makes the name local without binding it).
    Annotation,
    /// `x += ...`.
    AugmentedAssignment,
    /// `(x := ...)`.
    NamedExpression,
    /// `for x in ...`.
    ForTarget,
    /// `with ... as x`.
    WithTarget,
    /// `except E as x`.
    ExceptTarget,
    /// `[... for x in ...]`.
    ComprehensionTarget,
    /// A `def`/`lambda` parameter.
    Parameter,
    /// `def x(...)`.
    FunctionDef,
    /// `class x`.
    ClassDef,
    /// `import x`, `import a as x`, `from m import x`.
    Import,
    /// A capture in a `match` case pattern.
    MatchCapture,
    /// `del x` (makes the name local).
    Delete,
}

/// One binding of a name.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// How it was bound.
    pub kind: BindingKind,
    /// The identifier node that names it.
    pub name_node: Node<'a>,
    /// For `name = value` with a plain-name target (also through chained `a = b = value`):
    /// the value expression.
    pub value: Option<Node<'a>>,
}

/// A scope of the cell.
#[derive(Debug, Clone)]
pub struct Scope<'a> {
    /// Kind of scope.
    pub kind: ScopeKind,
    /// The node that introduced it (the module node for the cell).
    pub node: Node<'a>,
    /// Enclosing scope (`None` for the module).
    pub parent: Option<ScopeId>,
    /// Bindings by name, in source order.
    pub bindings: HashMap<String, Vec<Binding<'a>>>,
    /// Names declared `global` here.
    pub globals: HashSet<String>,
    /// Names declared `nonlocal` here.
    pub nonlocals: HashSet<String>,
    /// `from m import *` seen in this scope: any name may be bound.
    pub wildcard_import: bool,
}

/// A function defined in the cell (`def` or `lambda`).
#[derive(Debug, Clone)]
pub struct Function<'a> {
    /// The `function_definition` or `lambda` node.
    pub node: Node<'a>,
    /// The `def` name, or the variable a lambda is assigned to (`None` when anonymous).
    pub name: Option<String>,
    /// `async def`.
    pub is_async: bool,
    /// True for a `lambda`.
    pub is_lambda: bool,
    /// Its own scope.
    pub scope: ScopeId,
    /// The body (`block` of a `def`, expression of a `lambda`).
    pub body: Option<Node<'a>>,
}

/// Where `await` may be inserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AwaitContext {
    /// Top level of the cell (IPython runs cells with top-level await) or inside `async def`,
    /// including list/set/dict comprehensions there.
    Allowed,
    /// Inside a generator expression where `await` would turn it into an async generator.
    GeneratorExpression,
    /// Inside a plain `def`, a `lambda` or a class body.
    Forbidden,
}

/// Kind of guard around a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardKind {
    /// The call is in the body of a `try` statement.
    Try,
    /// The call is in a `with contextlib.suppress(...)` block.
    Suppress,
}

/// A `try` (or `suppress` block) whose handlers see the exceptions of a call.
#[derive(Debug, Clone)]
pub struct Guard<'a> {
    /// `try` or `suppress`.
    pub kind: GuardKind,
    /// The `try_statement` or `with_statement`.
    pub node: Node<'a>,
    /// The `except_clause` nodes, in order (empty for `suppress`).
    pub handlers: Vec<Node<'a>>,
    /// For `suppress`: the exception expressions passed to it.
    pub suppressed: Vec<Node<'a>>,
}

/// One call expression and its context.
#[derive(Debug, Clone)]
pub struct CallSite<'a> {
    /// The `call` node.
    pub node: Node<'a>,
    /// Its callee, parentheses removed.
    pub callee: Node<'a>,
    /// Scope the call is evaluated in.
    pub scope: ScopeId,
    /// Cell function whose body holds the call (`None` at top level).
    pub function: Option<FunctionId>,
    /// Loops and comprehensions around the call inside that function, outermost first
    /// (`for_statement`, `while_statement` or a comprehension node).
    pub loops: Vec<Node<'a>>,
    /// Guards around the call inside that function, outermost first.
    pub guards: Vec<Guard<'a>>,
    /// Whether `await` may be inserted in front of it.
    pub await_context: AwaitContext,
    /// The call is the operand of `await`.
    pub awaited: bool,
}

/// Arguments of a call, as written.
#[derive(Debug, Clone, Default)]
pub struct CallArgs<'a> {
    /// Positional arguments, in order.
    pub positional: Vec<Node<'a>>,
    /// Keyword arguments, including keys of `**{"k": v}` dict literals.
    pub keywords: Vec<Keyword<'a>>,
    /// A `*args` splat is present: positional count unknown.
    pub star_args: bool,
    /// A non-literal `**kwargs` splat is present: keyword set unknown.
    pub star_kwargs: bool,
}

/// One keyword argument.
#[derive(Debug, Clone, Copy)]
pub struct Keyword<'a> {
    /// Parameter name.
    pub name: &'a str,
    /// The identifier (or, inside a `**{...}` literal, the string key).
    pub name_node: Node<'a>,
    /// The value expression.
    pub value: Node<'a>,
    /// True when the name came from a `**{"k": v}` literal (not an identifier).
    pub from_dict_literal: bool,
}

/// How the action key of a call is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyForm {
    /// One string literal (plain or raw, or an f-string without fields).
    Literal,
    /// Implicit (`"a" "b"`) or `+` concatenation.
    Concatenation,
    /// An f-string with replacement fields.
    FString,
    /// A variable.
    Variable,
    /// An attribute such as `ActionType.EXECUTE_CODE`.
    Attribute,
    /// Any other expression.
    Other,
    /// No key given at all.
    Missing,
    /// Functions dialect: the key is the callee's (dotted) name.
    Callee,
}

/// Where the key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// First positional argument of `run`.
    Positional,
    /// `action_key=` keyword.
    Keyword,
    /// The callee (functions dialect).
    Callee,
}

/// The action key of an [`ActionCall`].
#[derive(Debug, Clone, Copy)]
pub struct ActionKey<'a> {
    /// The key expression (callee in the functions dialect); `None` when missing.
    pub expr: Option<Node<'a>>,
    /// Where it came from.
    pub source: KeySource,
    /// How it is written.
    pub form: KeyForm,
}

/// A call that dispatches an action.
#[derive(Debug, Clone)]
pub struct ActionCall<'a> {
    /// The call site.
    pub site: SiteId,
    /// The key.
    pub key: ActionKey<'a>,
    /// The constant key value, when it resolves.
    pub key_value: Option<String>,
    /// Parameters passed (for `run`, everything but the key).
    pub args: CallArgs<'a>,
}

/// A call whose root name the cell, the namespace, the builtins and the knowledge base all
/// leave unbound.
#[derive(Debug, Clone)]
pub struct UnknownName<'a> {
    /// The call site.
    pub site: SiteId,
    /// The unbound identifier (the callee, or the root of a dotted callee).
    pub node: Node<'a>,
    /// Its text.
    pub name: String,
    /// True when the identifier is the whole callee (`foo(...)`), false for `foo.bar(...)`.
    pub is_callee: bool,
}

/// Functions dialect: a dotted call under a tool namespace (`spotify.paly`) that is no tool.
#[derive(Debug, Clone)]
pub struct UnknownTool {
    /// The call site.
    pub site: SiteId,
    /// The dotted name as written.
    pub name: String,
}

/// What a call site is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// Index into [`SemanticModel::actions`].
    Action(usize),
    /// A namespace function other than `run` (`browse`, `signal_completion`, ...), unshadowed.
    Namespace,
    /// A function defined in the cell.
    CellFunction(FunctionId),
    /// Anything else.
    Other,
}

/// The semantic model of one cell. See the module docs.
#[derive(Debug)]
pub struct SemanticModel<'a> {
    /// The cell text.
    pub src: &'a str,
    /// The dialect it was built for.
    pub dialect: Dialect,
    /// Scopes; index 0 is the module.
    pub scopes: Vec<Scope<'a>>,
    /// Functions defined in the cell.
    pub functions: Vec<Function<'a>>,
    /// Every call, in source order of the call node.
    pub sites: Vec<CallSite<'a>>,
    /// What each site is (parallel to `sites`).
    pub kinds: Vec<CallKind>,
    /// Action calls.
    pub actions: Vec<ActionCall<'a>>,
    /// Unknown names in callee position.
    pub unknown_names: Vec<UnknownName<'a>>,
    /// Functions dialect: unknown tools under a tool namespace.
    pub unknown_tools: Vec<UnknownTool>,
    /// Names that appear as `await name` somewhere in the cell.
    pub awaited_names: HashSet<String>,
    /// For each function: true when calling it dispatches an action (directly or through
    /// other cell functions).
    pub dispatches: Vec<bool>,
    /// The tree was deeper than [`MAX_DEPTH`]; the deepest parts were not analysed.
    pub truncated: bool,
    site_by_node: HashMap<usize, SiteId>,
}

struct Frame<'a> {
    function: Option<FunctionId>,
    loops: Vec<Node<'a>>,
    guards: Vec<Guard<'a>>,
    await_context: AwaitContext,
}

struct Builder<'a, 'n> {
    src: &'a str,
    nodes: &'n NodeTable<'a>,
    scopes: Vec<Scope<'a>>,
    functions: Vec<Function<'a>>,
    function_by_node: HashMap<usize, FunctionId>,
    sites: Vec<CallSite<'a>>,
    frames: Vec<Frame<'a>>,
    awaited: HashSet<usize>,
    awaited_names: HashSet<String>,
    truncated: bool,
}

fn children<'a>(node: Node<'a>) -> Vec<Node<'a>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// The expression an `await` applies to, given the node tree-sitter puts under it. Python's
/// grammar binds `await` tighter than `**` (`power: await_primary '**' factor`), so
/// `await run() ** 2` awaits `run()`; tree-sitter-python parses it as `await (run() ** 2)`, so the
/// left operand of a `**` is followed down to what is really awaited.
fn awaited_operand(mut inner: Node<'_>) -> Node<'_> {
    while inner.kind() == "binary_operator"
        && inner
            .child_by_field_name("operator")
            .is_some_and(|op| op.kind() == "**")
    {
        match inner.child_by_field_name("left") {
            Some(left) => inner = parse::unparenthesize(left),
            None => break,
        }
    }
    inner
}

fn named_children<'a>(node: Node<'a>) -> Vec<Node<'a>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

fn is_comprehension(kind: &str) -> bool {
    matches!(
        kind,
        "list_comprehension"
            | "set_comprehension"
            | "dictionary_comprehension"
            | "generator_expression"
    )
}

/// True when `node` starts with the `async` keyword (`async def`, `async for`, `async with`).
pub fn is_async(node: Node) -> bool {
    node.child(0).is_some_and(|c| c.kind() == "async")
}

impl<'a> Builder<'a, '_> {
    fn new_scope(&mut self, kind: ScopeKind, node: Node<'a>, parent: Option<ScopeId>) -> ScopeId {
        self.scopes.push(Scope {
            kind,
            node,
            parent,
            bindings: HashMap::new(),
            globals: HashSet::new(),
            nonlocals: HashSet::new(),
            wildcard_import: false,
        });
        self.scopes.len() - 1
    }

    fn frame(&self) -> &Frame<'a> {
        // The builder always holds the module frame.
        &self.frames[self.frames.len() - 1]
    }

    fn frame_mut(&mut self) -> &mut Frame<'a> {
        let n = self.frames.len() - 1;
        &mut self.frames[n]
    }

    fn bind(
        &mut self,
        scope: ScopeId,
        name_node: Node<'a>,
        kind: BindingKind,
        value: Option<Node<'a>>,
    ) {
        let name = parse::ident(name_node, self.src);
        if name.is_empty() {
            return;
        }
        self.scopes[scope]
            .bindings
            .entry(name.into_owned())
            .or_default()
            .push(Binding {
                kind,
                name_node,
                value,
            });
    }

    /// Binds every name in an assignment-like target.
    fn bind_targets(
        &mut self,
        target: Node<'a>,
        scope: ScopeId,
        kind: BindingKind,
        value: Option<Node<'a>>,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            self.truncated = true;
            return;
        }
        match target.kind() {
            "identifier" => self.bind(scope, target, kind, value),
            k if crate::nodes::is_target_container(k) => {
                // Only a lone parenthesised name keeps the value (`(x) = 1`).
                let single = target.kind() == "parenthesized_expression"
                    || target.kind() == "as_pattern_target";
                for child in named_children(target) {
                    self.bind_targets(
                        child,
                        scope,
                        kind,
                        if single { value } else { None },
                        depth + 1,
                    );
                }
            }
            _ => {}
        }
    }

    fn nearest_non_comprehension(&self, mut scope: ScopeId) -> ScopeId {
        while self.scopes[scope].kind == ScopeKind::Comprehension {
            match self.scopes[scope].parent {
                Some(p) => scope = p,
                None => break,
            }
        }
        scope
    }

    fn visit_children(&mut self, id: NodeId, scope: ScopeId, depth: usize) {
        let nodes = self.nodes;
        for child in nodes.children(id) {
            self.visit(child, scope, depth + 1);
        }
    }

    fn visit(&mut self, id: NodeId, scope: ScopeId, depth: usize) {
        if depth > MAX_DEPTH {
            self.truncated = true;
            return;
        }
        let nodes = self.nodes;
        let node = nodes.node(id);
        match nodes.kind(id) {
            "function_definition" => self.visit_function(id, scope, depth),
            "lambda" => self.visit_lambda(id, scope, depth, None),
            "class_definition" => self.visit_class(id, scope, depth),
            k if is_comprehension(k) => self.visit_comprehension(id, scope, depth),
            "assignment" => {
                if let Some(left_id) = nodes.child_by_field(id, "left") {
                    let left = nodes.node(left_id);
                    let mut right = nodes.child_by_field(id, "right");
                    while let Some(r) = right.filter(|&r| nodes.kind(r) == "assignment") {
                        right = nodes.child_by_field(r, "right");
                    }
                    if right.is_none() {
                        self.bind_targets(left, scope, BindingKind::Annotation, None, depth);
                    } else {
                        let value = if left.kind() == "identifier" {
                            right
                        } else {
                            None
                        };
                        if let (Some(v), "identifier") = (value, left.kind()) {
                            let lambda = self.unparenthesize(v);
                            if nodes.kind(lambda) == "lambda" {
                                // `f = lambda ...`: the lambda is named after the variable.
                                self.bind(
                                    scope,
                                    left,
                                    BindingKind::Assignment,
                                    Some(nodes.node(v)),
                                );
                                for child in nodes.children(id) {
                                    if child == v {
                                        let name = parse::ident(left, self.src).into_owned();
                                        self.visit_lambda(lambda, scope, depth + 1, Some(name));
                                    } else if child != left_id {
                                        self.visit(child, scope, depth + 1);
                                    }
                                }
                                return;
                            }
                        }
                        self.bind_targets(
                            left,
                            scope,
                            BindingKind::Assignment,
                            value.map(|v| nodes.node(v)),
                            depth,
                        );
                    }
                }
                self.visit_children(id, scope, depth);
            }
            "augmented_assignment" => {
                if let Some(left) = nodes.child_by_field(id, "left") {
                    let left = nodes.node(left);
                    self.bind_targets(left, scope, BindingKind::AugmentedAssignment, None, depth);
                }
                self.visit_children(id, scope, depth);
            }
            "named_expression" => {
                if let Some(name) = nodes.child_by_field(id, "name") {
                    let target = self.nearest_non_comprehension(scope);
                    self.bind(
                        target,
                        nodes.node(name),
                        BindingKind::NamedExpression,
                        nodes.child_by_field(id, "value").map(|v| nodes.node(v)),
                    );
                }
                self.visit_children(id, scope, depth);
            }
            "for_statement" => self.visit_for(id, scope, depth),
            "while_statement" => {
                for child in nodes.children(id) {
                    if matches!(nodes.field(child), Some("condition") | Some("body")) {
                        self.frame_mut().loops.push(node);
                        self.visit(child, scope, depth + 1);
                        self.frame_mut().loops.pop();
                    } else {
                        self.visit(child, scope, depth + 1);
                    }
                }
            }
            "try_statement" => {
                let handlers: Vec<Node<'a>> = nodes
                    .named_children(id)
                    .filter(|&c| matches!(nodes.kind(c), "except_clause" | "except_group_clause"))
                    .map(|c| nodes.node(c))
                    .collect();
                for child in nodes.children(id) {
                    if nodes.field(child) == Some("body") {
                        self.frame_mut().guards.push(Guard {
                            kind: GuardKind::Try,
                            node,
                            handlers: handlers.clone(),
                            suppressed: Vec::new(),
                        });
                        self.visit(child, scope, depth + 1);
                        self.frame_mut().guards.pop();
                    } else {
                        self.visit(child, scope, depth + 1);
                    }
                }
            }
            "with_statement" => {
                let suppressed = self.suppressed_exceptions(node);
                for child in nodes.children(id) {
                    if nodes.field(child) == Some("body") && !suppressed.is_empty() {
                        self.frame_mut().guards.push(Guard {
                            kind: GuardKind::Suppress,
                            node,
                            handlers: Vec::new(),
                            suppressed: suppressed.clone(),
                        });
                        self.visit(child, scope, depth + 1);
                        self.frame_mut().guards.pop();
                    } else {
                        self.visit(child, scope, depth + 1);
                    }
                }
            }
            "with_item" => {
                if let Some(v) = nodes.child_by_field(id, "value") {
                    if nodes.kind(v) == "as_pattern" {
                        if let Some(alias) = nodes.child_by_field(v, "alias") {
                            let alias = nodes.node(alias);
                            self.bind_targets(alias, scope, BindingKind::WithTarget, None, depth);
                        }
                    }
                }
                self.visit_children(id, scope, depth);
            }
            "except_clause" | "except_group_clause" => {
                for child in nodes.named_children(id) {
                    if nodes.kind(child) == "as_pattern" {
                        if let Some(alias) = nodes.child_by_field(child, "alias") {
                            let alias = nodes.node(alias);
                            self.bind_targets(alias, scope, BindingKind::ExceptTarget, None, depth);
                        }
                    }
                }
                self.visit_children(id, scope, depth);
            }
            "import_statement" => {
                for name in nodes.children_by_field(id, "name") {
                    match nodes.kind(name) {
                        "aliased_import" => {
                            if let Some(alias) = nodes.child_by_field(name, "alias") {
                                self.bind(scope, nodes.node(alias), BindingKind::Import, None);
                            }
                        }
                        "dotted_name" => {
                            if let Some(first) = nodes.named_children(name).next() {
                                self.bind(scope, nodes.node(first), BindingKind::Import, None);
                            }
                        }
                        _ => {}
                    }
                }
            }
            "import_from_statement" | "future_import_statement" => {
                for name in nodes.children_by_field(id, "name") {
                    match nodes.kind(name) {
                        "aliased_import" => {
                            if let Some(alias) = nodes.child_by_field(name, "alias") {
                                self.bind(scope, nodes.node(alias), BindingKind::Import, None);
                            }
                        }
                        "dotted_name" => {
                            if let Some(last) = nodes.named_children(name).last() {
                                self.bind(scope, nodes.node(last), BindingKind::Import, None);
                            }
                        }
                        _ => {}
                    }
                }
                if nodes
                    .named_children(id)
                    .any(|c| nodes.kind(c) == "wildcard_import")
                {
                    self.scopes[scope].wildcard_import = true;
                }
            }
            "global_statement" | "nonlocal_statement" => {
                let global = nodes.kind(id) == "global_statement";
                for ident in nodes.named_children(id) {
                    if nodes.kind(ident) == "identifier" {
                        let name = parse::ident(nodes.node(ident), self.src).into_owned();
                        if global {
                            self.scopes[scope].globals.insert(name);
                        } else {
                            self.scopes[scope].nonlocals.insert(name);
                        }
                    }
                }
            }
            "delete_statement" => {
                for child in nodes.named_children(id) {
                    self.bind_targets(nodes.node(child), scope, BindingKind::Delete, None, depth);
                }
                self.visit_children(id, scope, depth);
            }
            "case_clause" => {
                for child in nodes.named_children(id) {
                    if nodes.kind(child) == "case_pattern" {
                        self.bind_captures(nodes.node(child), scope, depth);
                    }
                }
                self.visit_children(id, scope, depth);
            }
            "await" => {
                if let Some(inner) = nodes.named_children(id).next() {
                    let inner = awaited_operand(parse::unparenthesize(nodes.node(inner)));
                    match inner.kind() {
                        "call" => {
                            self.awaited.insert(inner.id());
                        }
                        "identifier" => {
                            self.awaited_names
                                .insert(parse::ident(inner, self.src).into_owned());
                        }
                        _ => {}
                    }
                }
                self.visit_children(id, scope, depth);
            }
            "call" => {
                if let Some(callee) = nodes.child_by_field(id, "function") {
                    let frame = self.frame();
                    let site = CallSite {
                        node,
                        callee: nodes.node(self.unparenthesize(callee)),
                        scope,
                        function: frame.function,
                        loops: frame.loops.clone(),
                        guards: frame.guards.clone(),
                        await_context: frame.await_context,
                        awaited: false,
                    };
                    self.sites.push(site);
                }
                self.visit_children(id, scope, depth);
            }
            _ => self.visit_children(id, scope, depth),
        }
    }

    /// Skips parentheses like [`parse::unparenthesize`]: `((x))` -> `x`.
    fn unparenthesize(&self, mut id: NodeId) -> NodeId {
        while self.nodes.kind(id) == "parenthesized_expression" {
            match self.nodes.named_children(id).next() {
                Some(inner) => id = inner,
                None => break,
            }
        }
        id
    }

    fn bind_captures(&mut self, node: Node<'a>, scope: ScopeId, depth: usize) {
        if depth > MAX_DEPTH {
            self.truncated = true;
            return;
        }
        let capture = |b: &mut Self, dotted: Node<'a>| {
            if dotted.kind() == "dotted_name" && dotted.named_child_count() == 1 {
                if let Some(id) = dotted.named_child(0) {
                    if parse::ident(id, b.src) != "_" {
                        b.bind(scope, id, BindingKind::MatchCapture, None);
                    }
                }
                true
            } else {
                false
            }
        };
        match node.kind() {
            "case_pattern" => {
                let kids = named_children(node);
                if kids.len() == 1 && capture(self, kids[0]) {
                    return;
                }
                for k in kids {
                    self.bind_captures(k, scope, depth + 1);
                }
            }
            "keyword_pattern" => {
                for k in named_children(node).into_iter().skip(1) {
                    if !capture(self, k) {
                        self.bind_captures(k, scope, depth + 1);
                    }
                }
            }
            "splat_pattern" => {
                for k in named_children(node) {
                    if k.kind() == "identifier" && parse::ident(k, self.src) != "_" {
                        self.bind(scope, k, BindingKind::MatchCapture, None);
                    }
                }
            }
            "as_pattern" => {
                let kids = named_children(node);
                if let Some(last) = kids.last() {
                    if last.kind() == "identifier" {
                        self.bind(scope, *last, BindingKind::MatchCapture, None);
                    }
                }
                for k in kids.iter().take(kids.len().saturating_sub(1)) {
                    self.bind_captures(*k, scope, depth + 1);
                }
            }
            "class_pattern" => {
                for k in named_children(node) {
                    if k.kind() == "case_pattern" {
                        self.bind_captures(k, scope, depth + 1);
                    }
                }
            }
            _ => {
                for k in named_children(node) {
                    self.bind_captures(k, scope, depth + 1);
                }
            }
        }
    }

    /// Exception expressions of `with suppress(E, ...)` / `with contextlib.suppress(...)`.
    fn suppressed_exceptions(&self, with: Node<'a>) -> Vec<Node<'a>> {
        let mut out = Vec::new();
        for clause in named_children(with) {
            if clause.kind() != "with_clause" {
                continue;
            }
            for item in named_children(clause) {
                let Some(mut value) = item.child_by_field_name("value") else {
                    continue;
                };
                if value.kind() == "as_pattern" {
                    match value.named_child(0) {
                        Some(v) => value = v,
                        None => continue,
                    }
                }
                if value.kind() != "call" {
                    continue;
                }
                let callee = value
                    .child_by_field_name("function")
                    .and_then(|f| dotted_name(f, self.src));
                if !matches!(callee.as_deref(), Some("suppress" | "contextlib.suppress")) {
                    continue;
                }
                if let Some(args) = value.child_by_field_name("arguments") {
                    out.extend(
                        named_children(args)
                            .into_iter()
                            .filter(|a| a.kind() != "keyword_argument" && !a.is_extra()),
                    );
                }
            }
        }
        out
    }

    fn bind_parameters(&mut self, params: NodeId, outer: ScopeId, inner: ScopeId, depth: usize) {
        let nodes = self.nodes;
        for p in nodes.named_children(params) {
            let pn = nodes.node(p);
            match nodes.kind(p) {
                "identifier" => self.bind(inner, pn, BindingKind::Parameter, None),
                "default_parameter" | "typed_default_parameter" => {
                    if let Some(name) = nodes.child_by_field(p, "name") {
                        let name = nodes.node(name);
                        self.bind_targets(name, inner, BindingKind::Parameter, None, depth);
                    }
                    for field in ["value", "type"] {
                        if let Some(v) = nodes.child_by_field(p, field) {
                            self.visit(v, outer, depth + 1);
                        }
                    }
                }
                "typed_parameter" => {
                    let ty = nodes.child_by_field(p, "type");
                    for c in nodes.named_children(p) {
                        if Some(c) == ty {
                            self.visit(c, outer, depth + 1);
                        } else {
                            self.bind_param_pattern(nodes.node(c), inner, depth);
                        }
                    }
                }
                _ => self.bind_param_pattern(pn, inner, depth),
            }
        }
    }

    fn bind_param_pattern(&mut self, p: Node<'a>, inner: ScopeId, depth: usize) {
        if depth > MAX_DEPTH {
            self.truncated = true;
            return;
        }
        match p.kind() {
            "identifier" => self.bind(inner, p, BindingKind::Parameter, None),
            "list_splat_pattern" | "dictionary_splat_pattern" | "tuple_pattern" => {
                for c in named_children(p) {
                    self.bind_param_pattern(c, inner, depth + 1);
                }
            }
            _ => {}
        }
    }

    fn visit_function(&mut self, id: NodeId, scope: ScopeId, depth: usize) {
        let nodes = self.nodes;
        let node = nodes.node(id);
        let name_node = nodes.child_by_field(id, "name").map(|n| nodes.node(n));
        if let Some(n) = name_node {
            self.bind(scope, n, BindingKind::FunctionDef, Some(node));
        }
        let inner = self.new_scope(ScopeKind::Function, node, Some(scope));
        if let Some(params) = nodes.child_by_field(id, "parameters") {
            self.bind_parameters(params, scope, inner, depth);
        }
        if let Some(rt) = nodes.child_by_field(id, "return_type") {
            self.visit(rt, scope, depth + 1);
        }
        let is_async = nodes
            .children(id)
            .next()
            .is_some_and(|c| nodes.kind(c) == "async");
        let body = nodes.child_by_field(id, "body");
        let fid = self.functions.len();
        self.functions.push(Function {
            node,
            name: name_node.map(|n| parse::ident(n, self.src).into_owned()),
            is_async,
            is_lambda: false,
            scope: inner,
            body: body.map(|b| nodes.node(b)),
        });
        self.function_by_node.insert(node.id(), fid);
        if let Some(body) = body {
            self.frames.push(Frame {
                function: Some(fid),
                loops: Vec::new(),
                guards: Vec::new(),
                await_context: if is_async {
                    AwaitContext::Allowed
                } else {
                    AwaitContext::Forbidden
                },
            });
            self.visit(body, inner, depth + 1);
            self.frames.pop();
        }
    }

    fn visit_lambda(&mut self, id: NodeId, scope: ScopeId, depth: usize, name: Option<String>) {
        let nodes = self.nodes;
        let node = nodes.node(id);
        let inner = self.new_scope(ScopeKind::Lambda, node, Some(scope));
        if let Some(params) = nodes.child_by_field(id, "parameters") {
            self.bind_parameters(params, scope, inner, depth);
        }
        let body = nodes.child_by_field(id, "body");
        let fid = self.functions.len();
        self.functions.push(Function {
            node,
            name,
            is_async: false,
            is_lambda: true,
            scope: inner,
            body: body.map(|b| nodes.node(b)),
        });
        self.function_by_node.insert(node.id(), fid);
        if let Some(body) = body {
            self.frames.push(Frame {
                function: Some(fid),
                loops: Vec::new(),
                guards: Vec::new(),
                await_context: AwaitContext::Forbidden,
            });
            self.visit(body, inner, depth + 1);
            self.frames.pop();
        }
    }

    fn visit_class(&mut self, id: NodeId, scope: ScopeId, depth: usize) {
        let nodes = self.nodes;
        let node = nodes.node(id);
        if let Some(n) = nodes.child_by_field(id, "name") {
            self.bind(scope, nodes.node(n), BindingKind::ClassDef, None);
        }
        for field in ["superclasses", "type_parameters"] {
            if let Some(s) = nodes.child_by_field(id, field) {
                self.visit(s, scope, depth + 1);
            }
        }
        let inner = self.new_scope(ScopeKind::Class, node, Some(scope));
        if let Some(body) = nodes.child_by_field(id, "body") {
            // A class body runs in place, inside the loops and guards around it, but `await`
            // is not legal there.
            let (function, loops, guards) = {
                let f = self.frame();
                (f.function, f.loops.clone(), f.guards.clone())
            };
            self.frames.push(Frame {
                function,
                loops,
                guards,
                await_context: AwaitContext::Forbidden,
            });
            self.visit(body, inner, depth + 1);
            self.frames.pop();
        }
    }

    fn visit_comprehension(&mut self, id: NodeId, scope: ScopeId, depth: usize) {
        let nodes = self.nodes;
        let node = nodes.node(id);
        let inner = self.new_scope(ScopeKind::Comprehension, node, Some(scope));
        let mut first_iter = None;
        if let Some(first) = nodes
            .named_children(id)
            .find(|&c| nodes.kind(c) == "for_in_clause")
        {
            first_iter = nodes.child_by_field(first, "right");
            if let Some(r) = first_iter {
                // The first iterable is evaluated once, in the enclosing scope.
                self.visit(r, scope, depth + 1);
            }
        }
        let (function, mut loops, guards, outer_await) = {
            let f = self.frame();
            (
                f.function,
                f.loops.clone(),
                f.guards.clone(),
                f.await_context,
            )
        };
        loops.push(node);
        let await_context = match (nodes.kind(id), outer_await) {
            ("generator_expression", AwaitContext::Allowed) => AwaitContext::GeneratorExpression,
            (_, a) => a,
        };
        self.frames.push(Frame {
            function,
            loops,
            guards,
            await_context,
        });
        for c in nodes.named_children(id) {
            if nodes.kind(c) == "for_in_clause" {
                if let Some(left) = nodes.child_by_field(c, "left") {
                    let left = nodes.node(left);
                    self.bind_targets(left, inner, BindingKind::ComprehensionTarget, None, depth);
                }
                for part in nodes.children(c) {
                    if Some(part) == first_iter {
                        continue;
                    }
                    self.visit(part, inner, depth + 1);
                }
            } else {
                self.visit(c, inner, depth + 1);
            }
        }
        self.frames.pop();
    }

    fn visit_for(&mut self, id: NodeId, scope: ScopeId, depth: usize) {
        let nodes = self.nodes;
        let node = nodes.node(id);
        if let Some(left) = nodes.child_by_field(id, "left") {
            let left = nodes.node(left);
            self.bind_targets(left, scope, BindingKind::ForTarget, None, depth);
        }
        for child in nodes.children(id) {
            if nodes.field(child) == Some("body") {
                self.frame_mut().loops.push(node);
                self.visit(child, scope, depth + 1);
                self.frame_mut().loops.pop();
            } else {
                self.visit(child, scope, depth + 1);
            }
        }
    }
}

/// The identifier at the root of an attribute chain (`a` in `a.b.c`), or `None` when the
/// chain starts with anything else (a call, a subscript, a literal).
pub fn root_identifier(node: Node) -> Option<Node> {
    let mut n = parse::unparenthesize(node);
    loop {
        match n.kind() {
            "identifier" => return Some(n),
            "attribute" => n = parse::unparenthesize(n.child_by_field_name("object")?),
            _ => return None,
        }
    }
}

/// The dotted name of an identifier or attribute chain (`a.b.c`), or `None` when any part is
/// not a plain name. Iterative, so arbitrarily long chains cannot exhaust the stack.
pub fn dotted_name(node: Node, src: &str) -> Option<String> {
    let mut parts = Vec::new();
    let mut n = parse::unparenthesize(node);
    loop {
        match n.kind() {
            "identifier" => {
                parts.push(parse::ident(n, src));
                break;
            }
            "attribute" => {
                parts.push(parse::ident(n.child_by_field_name("attribute")?, src));
                n = parse::unparenthesize(n.child_by_field_name("object")?);
            }
            _ => return None,
        }
    }
    parts.reverse();
    Some(parts.join("."))
}

/// The arguments of a call as written.
pub fn call_args<'a>(call: Node<'a>, src: &'a str) -> CallArgs<'a> {
    let mut out = CallArgs::default();
    let Some(args) = call.child_by_field_name("arguments") else {
        return out;
    };
    if args.kind() == "generator_expression" {
        out.positional.push(args);
        return out;
    }
    for a in named_children(args) {
        if a.is_extra() {
            continue; // comments and backslash continuations (`line_continuation`)
        }
        match a.kind() {
            "keyword_argument" => {
                if let (Some(n), Some(v)) = (
                    a.child_by_field_name("name"),
                    a.child_by_field_name("value"),
                ) {
                    out.keywords.push(Keyword {
                        name: parse::text(n, src),
                        name_node: n,
                        value: v,
                        from_dict_literal: false,
                    });
                }
            }
            "list_splat" => out.star_args = true,
            "dictionary_splat" => {
                let inner = a.named_child(0).map(parse::unparenthesize);
                match inner.filter(|d| d.kind() == "dictionary") {
                    Some(dict) => {
                        for pair in named_children(dict) {
                            let key = pair.child_by_field_name("key");
                            let value = pair.child_by_field_name("value");
                            let name = key.and_then(|k| {
                                let k = parse::unparenthesize(k);
                                (k.kind() == "string" && parse::literal_str(k, src).is_some())
                                    .then_some(k)
                            });
                            match (pair.kind(), name, value) {
                                ("pair", Some(k), Some(v)) => {
                                    // Names come from the literal's content (quotes excluded).
                                    let content = string_content_range(k);
                                    out.keywords.push(Keyword {
                                        name: src.get(content.0..content.1).unwrap_or(""),
                                        name_node: k,
                                        value: v,
                                        from_dict_literal: true,
                                    });
                                }
                                _ if pair.is_extra() => {}
                                _ => out.star_kwargs = true,
                            }
                        }
                    }
                    None => out.star_kwargs = true,
                }
            }
            _ => out.positional.push(a),
        }
    }
    out
}

/// Byte range between the opening and closing quotes of a `string` node.
pub fn string_content_range(node: Node) -> (usize, usize) {
    let mut start = node.start_byte();
    let mut end = node.end_byte();
    for c in children(node) {
        match c.kind() {
            "string_start" => start = c.end_byte(),
            "string_end" => end = c.start_byte(),
            _ => {}
        }
    }
    (start, end.max(start))
}

/// True when a `string` node is a plain literal whose source content equals its value: no
/// prefix other than `r`/`u`/`f`, no escape sequences, no interpolations. Such literals can be
/// edited in place by replacing [`string_content_range`].
pub fn is_plain_string(node: Node, src: &str) -> bool {
    if node.kind() != "string" {
        return false;
    }
    let prefix = parse::string_prefix(node, src);
    if prefix.contains('b') {
        return false;
    }
    parse::walk(node).all(|n| !matches!(n.kind(), "escape_sequence" | "interpolation"))
}

impl<'a> SemanticModel<'a> {
    /// Builds the model of one parsed cell.
    pub fn build(tree: &'a Tree, src: &'a str, settings: &Settings, kb: &KnowledgeBase) -> Self {
        Self::build_with_table(&NodeTable::new(tree), src, settings, kb)
    }

    /// [`SemanticModel::build`] from the node table of the cell's tree.
    pub fn build_with_table(
        nodes: &NodeTable<'a>,
        src: &'a str,
        settings: &Settings,
        kb: &KnowledgeBase,
    ) -> Self {
        let root = nodes.node(0);
        let mut b = Builder {
            src,
            nodes,
            scopes: Vec::new(),
            functions: Vec::new(),
            function_by_node: HashMap::new(),
            sites: Vec::new(),
            frames: vec![Frame {
                function: None,
                loops: Vec::new(),
                guards: Vec::new(),
                await_context: AwaitContext::Allowed,
            }],
            awaited: HashSet::new(),
            awaited_names: HashSet::new(),
            truncated: false,
        };
        let module = b.new_scope(ScopeKind::Module, root, None);
        b.visit_children(0, module, 0);
        b.resolve_declarations();
        for site in &mut b.sites {
            site.awaited = b.awaited.contains(&site.node.id());
        }
        b.sites
            .sort_by_key(|s| (s.node.start_byte(), s.node.end_byte()));
        let mut model = SemanticModel {
            src,
            dialect: settings.dialect,
            scopes: b.scopes,
            site_by_node: b
                .sites
                .iter()
                .enumerate()
                .map(|(i, s)| (s.node.id(), i))
                .collect(),
            functions: b.functions,
            sites: b.sites,
            kinds: Vec::new(),
            actions: Vec::new(),
            unknown_names: Vec::new(),
            unknown_tools: Vec::new(),
            awaited_names: b.awaited_names,
            dispatches: Vec::new(),
            truncated: b.truncated,
        };
        let function_by_node = b.function_by_node;
        model.classify(settings, kb, &function_by_node);
        model.compute_dispatches();
        model
    }

    /// The scope that binds `name` as seen from `scope`, following Python's rules (class
    /// scopes are skipped unless `scope` is the class itself; `global` jumps to the module).
    pub fn lookup(&self, scope: ScopeId, name: &str) -> Option<ScopeId> {
        let mut current = Some(scope);
        let mut first = true;
        while let Some(id) = current {
            let s = &self.scopes[id];
            if s.kind == ScopeKind::Class && !first {
                current = s.parent;
                continue;
            }
            if s.globals.contains(name) {
                return self.scopes[0].bindings.contains_key(name).then_some(0);
            }
            if s.bindings.contains_key(name) {
                return Some(id);
            }
            current = s.parent;
            first = false;
        }
        None
    }

    /// The bindings of `name` visible from `scope` (empty when unbound in the cell).
    pub fn bindings(&self, scope: ScopeId, name: &str) -> &[Binding<'a>] {
        self.lookup(scope, name)
            .and_then(|s| self.scopes[s].bindings.get(name))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// True when a `from m import *` in `scope` or an enclosing scope may bind any name.
    pub fn wildcard_visible(&self, scope: ScopeId) -> bool {
        let mut current = Some(scope);
        while let Some(id) = current {
            if self.scopes[id].wildcard_import {
                return true;
            }
            current = self.scopes[id].parent;
        }
        false
    }

    /// Every name bound anywhere in the cell, sorted (for suggestions).
    pub fn bound_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .scopes
            .iter()
            .flat_map(|s| s.bindings.keys().map(String::as_str))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The call site of a `call` node.
    pub fn site_of(&self, call: Node) -> Option<SiteId> {
        self.site_by_node.get(&call.id()).copied()
    }

    /// The kind of a `call` node (`Other` for nodes that are no call).
    pub fn call_kind(&self, call: Node) -> CallKind {
        self.site_of(call)
            .map(|s| self.kinds[s])
            .unwrap_or(CallKind::Other)
    }

    /// The action call at a site, when the site is one.
    pub fn action_at(&self, site: SiteId) -> Option<&ActionCall<'a>> {
        match self.kinds.get(site) {
            Some(CallKind::Action(i)) => self.actions.get(*i),
            _ => None,
        }
    }

    /// The constant string value of `expr` evaluated in `scope`: string literals (plain, raw,
    /// f-strings whose fields are constants without conversions or format specs), implicit and
    /// `+` concatenation, parentheses, and names bound exactly once (`k = "a.b"`) to such a
    /// constant. `None` for anything computed at runtime.
    pub fn const_str(&self, expr: Node<'a>, scope: ScopeId) -> Option<String> {
        self.const_str_inner(expr, scope, 0)
    }

    fn const_str_inner(&self, expr: Node<'a>, scope: ScopeId, depth: usize) -> Option<String> {
        if depth > 16 {
            return None;
        }
        let expr = parse::unparenthesize(expr);
        match expr.kind() {
            "string" => self.string_value(expr, scope, depth),
            "concatenated_string" => {
                let mut out = String::new();
                for part in named_children(expr).into_iter().filter(|p| !p.is_extra()) {
                    out.push_str(&self.string_value(part, scope, depth)?);
                }
                Some(out)
            }
            "binary_operator" => {
                let op = expr.child_by_field_name("operator")?;
                if op.kind() != "+" {
                    return None;
                }
                let l =
                    self.const_str_inner(expr.child_by_field_name("left")?, scope, depth + 1)?;
                let r =
                    self.const_str_inner(expr.child_by_field_name("right")?, scope, depth + 1)?;
                Some(l + &r)
            }
            "identifier" => {
                let name = parse::ident(expr, self.src);
                let binding_scope = self.lookup(scope, &name)?;
                match self.scopes[binding_scope].bindings.get(&*name)?.as_slice() {
                    [Binding {
                        kind: BindingKind::Assignment,
                        value: Some(v),
                        ..
                    }] => self.const_str_inner(*v, binding_scope, depth + 1),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn string_value(&self, node: Node<'a>, scope: ScopeId, depth: usize) -> Option<String> {
        if node.kind() != "string" {
            return None;
        }
        let has_fields = named_children(node)
            .iter()
            .any(|c| c.kind() == "interpolation");
        if !has_fields {
            return parse::literal_str(node, self.src);
        }
        let prefix = parse::string_prefix(node, self.src);
        if prefix.contains('b') {
            return None;
        }
        let raw = prefix.contains('r');
        let mut out = String::new();
        for child in children(node) {
            match child.kind() {
                "string_content" => {
                    let mut last = child.start_byte();
                    for esc in children(child) {
                        out.push_str(self.src.get(last..esc.start_byte())?);
                        let t = parse::text(esc, self.src);
                        if esc.kind() == "escape_sequence" && !raw {
                            out.push_str(&parse::unescape(t));
                        } else {
                            out.push_str(t);
                        }
                        last = esc.end_byte();
                    }
                    out.push_str(self.src.get(last..child.end_byte())?);
                }
                "escape_sequence" => {
                    let t = parse::text(child, self.src);
                    out.push_str(&if raw {
                        t.to_string()
                    } else {
                        parse::unescape(t)
                    });
                }
                "interpolation" => {
                    // Only `{expr}`: conversions (`!r`) and format specs change the text.
                    let parts = named_children(child);
                    if parts.len() != 1 {
                        return None;
                    }
                    let e = child.child_by_field_name("expression")?;
                    out.push_str(&self.const_str_inner(e, scope, depth + 1)?);
                }
                _ => {}
            }
        }
        Some(out)
    }

    fn key_form(&self, expr: Node<'a>) -> KeyForm {
        let e = parse::unparenthesize(expr);
        match e.kind() {
            "string" => {
                if named_children(e)
                    .iter()
                    .any(|c| c.kind() == "interpolation")
                {
                    KeyForm::FString
                } else {
                    KeyForm::Literal
                }
            }
            "concatenated_string" => {
                if parse::walk(e).any(|c| c.kind() == "interpolation") {
                    KeyForm::FString
                } else {
                    KeyForm::Concatenation
                }
            }
            "binary_operator" => KeyForm::Concatenation,
            "identifier" => KeyForm::Variable,
            "attribute" => KeyForm::Attribute,
            _ => KeyForm::Other,
        }
    }

    fn is_unbound(&self, scope: ScopeId, name: &str) -> bool {
        self.lookup(scope, name).is_none() && !self.wildcard_visible(scope)
    }

    fn classify(
        &mut self,
        settings: &Settings,
        kb: &KnowledgeBase,
        function_by_node: &HashMap<usize, FunctionId>,
    ) {
        let ns = &settings.namespace;
        let src = self.src;
        let mut kinds = Vec::with_capacity(self.sites.len());
        let mut actions = Vec::new();
        let mut unknown_names = Vec::new();
        let mut unknown_tools = Vec::new();
        let mut seen_unknown: HashSet<usize> = HashSet::new();
        let tool_roots: HashSet<&str> = kb
            .actions
            .iter()
            .filter_map(|a| a.key.split_once('.').map(|(root, _)| root))
            .collect();
        for (i, site) in self.sites.iter().enumerate() {
            let callee = site.callee;
            let mut kind = CallKind::Other;
            if callee.kind() == "identifier" {
                let name = parse::ident(callee, src);
                let name = &*name;
                if let Some(binding_scope) = self.lookup(site.scope, name) {
                    let bindings = &self.scopes[binding_scope].bindings[name];
                    if let [only] = bindings.as_slice() {
                        let def = match only.kind {
                            BindingKind::FunctionDef => only.value,
                            BindingKind::Assignment => only
                                .value
                                .map(parse::unparenthesize)
                                .filter(|v| v.kind() == "lambda"),
                            _ => None,
                        };
                        if let Some(fid) = def.and_then(|d| function_by_node.get(&d.id())) {
                            kind = CallKind::CellFunction(*fid);
                        }
                    }
                } else if !self.wildcard_visible(site.scope) {
                    if settings.dialect == Dialect::Colony && ns.run.as_deref() == Some(name) {
                        actions.push(self.colony_action(i, kb));
                        kind = CallKind::Action(actions.len() - 1);
                    } else if settings.dialect == Dialect::Functions && kb.get(name).is_some() {
                        actions.push(self.tool_action(i));
                        kind = CallKind::Action(actions.len() - 1);
                    } else if ns.names.contains(name) {
                        kind = CallKind::Namespace;
                    }
                }
            } else if settings.dialect == Dialect::Functions {
                if let (Some(dotted), Some(root)) =
                    (dotted_name(callee, src), root_identifier(callee))
                {
                    let root_name = parse::ident(root, src);
                    let root_name = &*root_name;
                    if self.is_unbound(site.scope, root_name) && !ns.names.contains(root_name) {
                        if kb.get(&dotted).is_some() {
                            actions.push(self.tool_action(i));
                            kind = CallKind::Action(actions.len() - 1);
                        } else if tool_roots.contains(root_name) && kb.get(root_name).is_none() {
                            unknown_tools.push(UnknownTool {
                                site: i,
                                name: dotted,
                            });
                            kinds.push(kind);
                            continue;
                        }
                    }
                }
            }
            if kind == CallKind::Other {
                if let Some(root) = root_identifier(callee) {
                    let name = parse::ident(root, src);
                    let name = &*name;
                    let known = !self.is_unbound(site.scope, name)
                        || ns.names.contains(name)
                        || ns.modules.contains(name)
                        || is_builtin(name)
                        || (settings.dialect == Dialect::Functions
                            && (kb.get(name).is_some() || tool_roots.contains(name)))
                        || (settings.dialect == Dialect::Functions && kb.is_empty());
                    if !known && seen_unknown.insert(root.id()) {
                        unknown_names.push(UnknownName {
                            site: i,
                            node: root,
                            name: name.to_string(),
                            is_callee: root.id() == callee.id(),
                        });
                    }
                }
            }
            kinds.push(kind);
        }
        self.kinds = kinds;
        self.actions = actions;
        self.unknown_names = unknown_names;
        self.unknown_tools = unknown_tools;
    }

    fn colony_action(&self, site: SiteId, kb: &KnowledgeBase) -> ActionCall<'a> {
        let s = &self.sites[site];
        let mut args = call_args(s.node, self.src);
        let keyword = args
            .keywords
            .iter()
            .position(|k| k.name == "action_key" && !k.from_dict_literal);
        let (expr, source) = if !args.positional.is_empty() {
            (Some(args.positional.remove(0)), KeySource::Positional)
        } else if let Some(k) = keyword {
            (Some(args.keywords.remove(k).value), KeySource::Keyword)
        } else {
            (None, KeySource::Positional)
        };
        let form = expr.map(|e| self.key_form(e)).unwrap_or(KeyForm::Missing);
        let key_value = match (expr, form) {
            (Some(e), KeyForm::Attribute) => dotted_name(e, self.src).filter(|d| kb.is_pseudo(d)),
            (Some(e), _) => self.const_str(e, s.scope),
            (None, _) => None,
        };
        ActionCall {
            site,
            key: ActionKey { expr, source, form },
            key_value,
            args,
        }
    }

    fn tool_action(&self, site: SiteId) -> ActionCall<'a> {
        let s = &self.sites[site];
        ActionCall {
            site,
            key: ActionKey {
                expr: Some(s.callee),
                source: KeySource::Callee,
                form: KeyForm::Callee,
            },
            key_value: dotted_name(s.callee, self.src),
            args: call_args(s.node, self.src),
        }
    }

    fn compute_dispatches(&mut self) {
        let mut dispatches = vec![false; self.functions.len()];
        for (i, site) in self.sites.iter().enumerate() {
            if let (CallKind::Action(_), Some(f)) = (self.kinds[i], site.function) {
                dispatches[f] = true;
            }
        }
        loop {
            let mut changed = false;
            for (i, site) in self.sites.iter().enumerate() {
                if let (CallKind::CellFunction(target), Some(f)) = (self.kinds[i], site.function) {
                    if dispatches[target] && !dispatches[f] {
                        dispatches[f] = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        self.dispatches = dispatches;
    }

    /// Sites that dispatch at least one action when they run: action calls, and calls of cell
    /// functions that dispatch actions. Each comes with the function it is in.
    pub fn dispatching_sites(&self) -> impl Iterator<Item = SiteId> + '_ {
        (0..self.sites.len()).filter(|&i| match self.kinds[i] {
            CallKind::Action(_) => true,
            CallKind::CellFunction(f) => self.dispatches.get(f).copied().unwrap_or(false),
            _ => false,
        })
    }

    /// Namespace function calls named `name` (unshadowed).
    pub fn namespace_calls<'s>(&'s self, name: &'s str) -> impl Iterator<Item = SiteId> + 's {
        (0..self.sites.len()).filter(move |&i| {
            self.kinds[i] == CallKind::Namespace
                && parse::ident(self.sites[i].callee, self.src) == name
        })
    }
}

impl<'a> Builder<'a, '_> {
    /// Moves bindings declared `global`/`nonlocal` to the scope that owns them.
    fn resolve_declarations(&mut self) {
        for id in 0..self.scopes.len() {
            let globals: Vec<String> = self.scopes[id].globals.iter().cloned().collect();
            let nonlocals: Vec<String> = self.scopes[id].nonlocals.iter().cloned().collect();
            if id != 0 {
                for name in globals {
                    if let Some(b) = self.scopes[id].bindings.remove(&name) {
                        self.scopes[0].bindings.entry(name).or_default().extend(b);
                    }
                }
            }
            for name in nonlocals {
                let Some(b) = self.scopes[id].bindings.remove(&name) else {
                    continue;
                };
                let mut target = self.scopes[id].parent;
                while let Some(t) = target {
                    let s = &self.scopes[t];
                    if (s.kind == ScopeKind::Function || s.kind == ScopeKind::Lambda)
                        && (s.bindings.contains_key(&name) || s.parent.is_none())
                    {
                        break;
                    }
                    target = s.parent;
                }
                if let Some(t) = target.filter(|&t| t != 0) {
                    self.scopes[t].bindings.entry(name).or_default().extend(b);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model_of<'a>(
        tree: &'a Tree,
        src: &'a str,
        settings: &Settings,
        kb: &KnowledgeBase,
    ) -> SemanticModel<'a> {
        SemanticModel::build(tree, src, settings, kb)
    }

    fn keys(src: &str) -> Vec<Option<String>> {
        let tree = parse::parse(src, None);
        let m = model_of(&tree, src, &Settings::default(), &KnowledgeBase::new());
        m.actions.iter().map(|a| a.key_value.clone()).collect()
    }

    #[test]
    fn only_the_namespace_run_is_an_action() {
        let src = "await run('a')\nasyncio.run(main())\nx.run('b')\nself.run('c')\nrerun('d')\nr = run(\"e\")\n";
        assert_eq!(keys(src), vec![Some("a".into()), Some("e".into())]);
    }

    #[test]
    fn rebinding_run_disables_it() {
        assert_eq!(
            keys("def run(k):\n    pass\nrun('a')\n"),
            Vec::<Option<String>>::new()
        );
        assert_eq!(
            keys("from x import run\nrun('a')\n"),
            Vec::<Option<String>>::new()
        );
        // A parameter named `run` shadows only inside its function.
        assert_eq!(
            keys("def f(run):\n    run('a')\nawait run('b')\n"),
            vec![Some("b".into())]
        );
        // A comprehension variable named `run` is local to the comprehension.
        assert_eq!(
            keys("[run for run in xs]\nawait run('c')\n"),
            vec![Some("c".into())]
        );
    }

    #[test]
    fn constant_keys_resolve() {
        let src = "k = 'A.b'\nawait run(k)\nawait run(action_key=\"x\" 'y')\nawait run(f'p{k}')\nawait run('a' + 'b')\nawait run(f'{z}')\nj = 'a'\nj = 'b'\nawait run(j)\n";
        assert_eq!(
            keys(src),
            vec![
                Some("A.b".into()),
                Some("xy".into()),
                Some("pA.b".into()),
                Some("ab".into()),
                None,
                None
            ]
        );
    }

    #[test]
    fn call_context_is_recorded() {
        let src = "try:\n    for x in xs:\n        await run('a')\nexcept Exception:\n    pass\ndef f():\n    run('b')\n[run('c') for c in cs]\n(run('d') for d in ds)\n";
        let tree = parse::parse(src, None);
        let m = model_of(&tree, src, &Settings::default(), &KnowledgeBase::new());
        let a = &m.sites[m.actions[0].site];
        assert!(a.awaited);
        assert_eq!(a.loops.len(), 1);
        assert_eq!(a.guards.len(), 1);
        assert_eq!(a.guards[0].handlers.len(), 1);
        let b = &m.sites[m.actions[1].site];
        assert_eq!(b.function, Some(0));
        assert_eq!(b.await_context, AwaitContext::Forbidden);
        let c = &m.sites[m.actions[2].site];
        assert_eq!((c.loops.len(), c.await_context), (1, AwaitContext::Allowed));
        let d = &m.sites[m.actions[3].site];
        assert_eq!(d.await_context, AwaitContext::GeneratorExpression);
    }

    #[test]
    fn bindings_cover_every_target_form() {
        let src = "a, *b = xs\n(c := 1)\nfor d, e in xs: pass\nwith f() as (g, h): pass\ntry: pass\nexcept E as i: pass\ndef j(k, l=1, *m, n: int = 2, **o): pass\nimport p.q, r as s\nfrom t import u, v as w\nmatch z:\n    case {\"k\": y, **rest}: pass\n    case [1, *others] | P(x=cap) as whole: pass\nx += 1\nclass C: pass\ndel gone\n";
        let tree = parse::parse(src, None);
        let m = model_of(&tree, src, &Settings::default(), &KnowledgeBase::new());
        let module: Vec<&str> = {
            let mut v: Vec<&str> = m.scopes[0].bindings.keys().map(String::as_str).collect();
            v.sort();
            v
        };
        assert_eq!(
            module,
            vec![
                "C", "a", "b", "c", "cap", "d", "e", "g", "gone", "h", "i", "j", "others", "p",
                "rest", "s", "u", "w", "whole", "x", "y"
            ]
        );
        let f = &m.scopes[m.functions[0].scope];
        let mut params: Vec<&str> = f.bindings.keys().map(String::as_str).collect();
        params.sort();
        assert_eq!(params, vec!["k", "l", "m", "n", "o"]);
    }

    #[test]
    fn unknown_names_skip_builtins_namespace_and_cell_names() {
        let src = "print(len(x))\nawait signal_complete()\nasyncio.gather()\njson.dumps({})\ndef helper(): pass\nhelper()\nfor fn in fs:\n    fn()\n[g() for g in gs]\n";
        let tree = parse::parse(src, None);
        let m = model_of(&tree, src, &Settings::default(), &KnowledgeBase::new());
        let names: Vec<&str> = m.unknown_names.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(names, vec!["signal_complete", "asyncio"]);
    }

    #[test]
    fn global_declaration_moves_binding_to_module() {
        let src = "def f():\n    global run\n    run = 1\nawait run('a')\n";
        assert_eq!(keys(src), Vec::<Option<String>>::new());
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 5000;
        let src = format!("x = {}1{}\n", "(".repeat(depth), ")".repeat(depth));
        let tree = parse::parse(&src, None);
        let m = model_of(&tree, &src, &Settings::default(), &KnowledgeBase::new());
        assert!(m.actions.is_empty());
    }

    #[test]
    fn long_attribute_chains_do_not_overflow() {
        let src = format!("{}()\n", vec!["a"; 20000].join("."));
        let tree = parse::parse(&src, None);
        let m = model_of(&tree, &src, &Settings::default(), &KnowledgeBase::new());
        assert_eq!(m.unknown_names.len(), 1);
        assert_eq!(
            dotted_name(m.sites[0].callee, &src).map(|d| d.len()),
            Some(20000 * 2 - 1)
        );
    }

    #[test]
    fn builtins_are_sorted() {
        assert!(PYTHON_BUILTINS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_builtin("print") && is_builtin("ExceptionGroup") && !is_builtin("run"));
    }
}
