//! Which list, set and dict displays of a cell keep the contents they were written with.
//!
//! The interpreter folds a display (`["dumps"]`, `{"a": "dumps"}`) to its constant elements,
//! and names read from it (`for k in d.keys()`, `names[0]`, `d.items()`) to those constants.
//! That is only true while the container is not changed after it was built: round 5 H32/H33
//! added a name built from `chr` codes with `d[k] = ...`, `names.append(...)`, `u[0] = ...`
//! or `d.update(...)` and then read it back as "a constant". This module tells, for a display,
//! whether its container may change after it is built and what may be added to it:
//!
//! - a display held by a name the cell never mutates, aliases or hands to code that could
//!   mutate it keeps its contents ([`State::Frozen`]);
//! - a display held by a name the cell mutates only with visible stores (`d[k] = v`,
//!   `xs.append(v)`, `insert`, `extend`, `add`, `update`, `setdefault`, `|=`, `+=`) gets the
//!   stored values too, and reordering or removal (`pop`, `sort`, `del xs[i]`) makes every
//!   position hold any of its elements ([`State::Mutated`]);
//! - anything else (the name aliased, passed to a call that is not a known read-only builtin,
//!   returned, stored in another container or attribute, a mutating method taken as a value,
//!   a mutation inside a function or with a value that is not a literal, `globals()`/`vars()`
//!   in the cell) makes its contents unknown ([`State::Escaped`]).
//!
//! Names are matched by their text anywhere in the cell, in every scope, attribute names
//! included (`C.names.append(...)` mutates a class attribute `names`): a false match only makes
//! a container less precise. Values added by a mutation are taken only when they are literals
//! (no name in them), so the result does not depend on which names the analysis tracks.

use super::field::{FieldChild, F};
use crate::parse;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tree_sitter::Node;

/// How the functions of this module move around the cell's tree: parents and subtree walks
/// read from the cell's node table when there is one and it holds the node (tree-sitter 0.25's
/// `Node::parent` descends again from the root, scanning every ancestor's children, so a
/// parent lookup under a 1,000-statement module scans the module), else from the tree.
/// Same answers either way; `Nav::new(None)` is the tree alone.
#[derive(Clone, Copy)]
pub struct Nav<'a, 't> {
    table: Option<&'a crate::nodes::NodeTable<'t>>,
}

impl<'a, 't> Nav<'a, 't> {
    /// Navigation by `table` (the node table of the tree the nodes belong to) where it holds
    /// the node.
    pub fn new(table: Option<&'a crate::nodes::NodeTable<'t>>) -> Self {
        Nav { table }
    }

    /// `node.parent()`.
    pub fn parent(self, node: Node<'t>) -> Option<Node<'t>> {
        if let Some(t) = self.table {
            if let Some(id) = t.index_of(node) {
                return t.parent(id).map(|p| t.node(p));
            }
        }
        node.parent()
    }

    /// Every node of the subtree of `root` in pre-order, named and anonymous (`parse::walk`).
    pub fn walk(self, root: Node<'t>) -> Box<dyn Iterator<Item = Node<'t>> + 'a>
    where
        't: 'a,
    {
        if let Some(t) = self.table {
            if let Some(id) = t.index_of(root) {
                return Box::new(t.nodes()[t.subtree(id)].iter().copied());
            }
        }
        Box::new(parse::walk(root))
    }

    /// Every identifier of the subtree of `root` with its parent, in pre-order (`walk`
    /// filtered to `identifier` nodes, and `parent` of each). With the table, kinds and parents
    /// are read from it by index, without a tree-sitter call or a parent search per node.
    pub fn identifiers(self, root: Node<'t>) -> Vec<(Node<'t>, Option<Node<'t>>)>
    where
        't: 'a,
    {
        if let Some(t) = self.table {
            if let Some(id) = t.index_of(root) {
                return t
                    .subtree(id)
                    .filter(|&i| t.kind(i) == "identifier")
                    .map(|i| (t.node(i), t.parent(i).map(|p| t.node(p))))
                    .collect();
            }
        }
        parse::walk(root)
            .filter(|n| n.kind_name() == "identifier")
            .map(|n| (n, n.parent()))
            .collect()
    }
}

/// Something a visible mutation adds to a container.
#[derive(Debug, Clone, Copy)]
pub enum Added<'t> {
    /// One element (`xs.append(v)`, `xs.insert(i, v)`, `s.add(v)`).
    Item(Node<'t>),
    /// A key and its value (`d[k] = v`, `d.setdefault(k, v)`; `xs[i] = v` stores `v`).
    Pair(Node<'t>, Option<Node<'t>>),
    /// The elements or pairs of an iterable or mapping (`xs.extend(v)`, `d.update(v)`,
    /// `xs += v`, `d |= v`).
    Elements(Node<'t>),
    /// A keyword of `d.update(k=v)`: the key is the keyword's text.
    Keyword(Node<'t>, Node<'t>),
}

/// How the contents of a display may change after it is built.
#[derive(Debug, Clone, Default)]
pub enum State<'t> {
    /// Nothing changes it: its elements are what it was written with.
    #[default]
    Frozen,
    /// Visible mutations only: what they add, and whether positions may move.
    Mutated {
        /// Values added by item stores and mutating methods.
        added: Vec<Added<'t>>,
        /// Elements were removed, reordered or replaced: a position may hold any element.
        smear: bool,
    },
    /// Its contents may become anything.
    Escaped,
}

/// How a cell uses one name that may hold a container.
#[derive(Debug, Clone, Default)]
struct NameUses<'t> {
    added: Vec<Added<'t>>,
    smear: bool,
    /// Mutated or handed out in a way cellguard cannot follow.
    escaped: bool,
    /// An element of it is aliased, handed out or mutated (matters for nested displays).
    element_escaped: bool,
}

/// The uses of every name of a cell: the cell-wide facts computed once per cell, each name's
/// [`NameUses`] on first demand (only the names that hold displays are ever asked for; the
/// classification of one name's identifiers reads nothing of the other names' but the
/// cell-wide facts, so computing it late gives what computing all of them at once gave).
#[derive(Debug, Default)]
pub struct Uses<'t> {
    /// The expressions standing for each name's identifiers (`obj.names` for an attribute
    /// name), in cell order, not yet classified.
    pending: HashMap<String, Vec<Node<'t>>>,
    /// Classified names (see [`Self::name_uses`]).
    names: std::cell::RefCell<HashMap<String, NameUses<'t>>>,
    /// Names the cell binds in any way (a read-only builtin it redefines is no longer
    /// read-only).
    rebound: HashSet<String>,
    /// `globals()`, `vars()`, `locals()`, `exec`, `eval`, `__dict__` appear in the cell: a
    /// name's container can be reached without its name.
    namespace_reached: bool,
    /// Names the cell binds other than by an import (`def g`, `g = lambda ...`): a display
    /// handed to such a callee may be kept or changed by the cell's own code.
    cell_bound: HashSet<String>,
}

/// Builtins that read their arguments without keeping or changing them.
const READ_ONLY_CALLS: &[&str] = &[
    "len",
    "NamedTuple",
    "TypedDict",
    "make_dataclass",
    "sorted",
    "list",
    "tuple",
    "set",
    "frozenset",
    "dict",
    "enumerate",
    "zip",
    "iter",
    "reversed",
    "print",
    "str",
    "repr",
    "min",
    "max",
    "sum",
    "any",
    "all",
    "bool",
    "isinstance",
    "hash",
    "format",
    "type",
];

/// Library functions that read their arguments without keeping or changing them.
const READ_ONLY_MEMBERS: &[(&str, &str)] = &[
    ("json", "dumps"),
    ("copy", "copy"),
    ("copy", "deepcopy"),
    ("random", "choice"),
    ("random", "sample"),
    ("statistics", "mean"),
    ("statistics", "median"),
    // They read the fields they are given (round 9 S9-15: `typing.NamedTuple("P", fields)`
    // must see what `fields` holds).
    ("typing", "NamedTuple"),
    ("typing", "TypedDict"),
    ("dataclasses", "make_dataclass"),
];

/// Methods that neither change a list, set or dict nor hand out a reference to it.
const READ_METHODS: &[&str] = &[
    "items",
    "keys",
    "values",
    "get",
    "copy",
    "count",
    "index",
    "union",
    "intersection",
    "difference",
    "symmetric_difference",
    "issubset",
    "issuperset",
    "isdisjoint",
];

/// Names whose presence lets code reach a container without naming it.
const NAMESPACE_NAMES: &[&str] = &[
    "globals", "vars", "locals", "exec", "eval", "__dict__", "compile",
];

/// A use of a name (or of an element of it).
enum Use<'t> {
    Read,
    Binding,
    Add(Vec<Added<'t>>),
    Smear,
    Escape,
}

fn paren_top<'t>(nav: Nav<'_, 't>, mut n: Node<'t>) -> Node<'t> {
    while let Some(p) = nav
        .parent(n)
        .filter(|p| p.kind_name() == "parenthesized_expression")
    {
        n = p;
    }
    n
}

/// Node kinds an assignment or loop target nests its parts in (`a, (b, *c) = ...`).
const TARGET_CONTAINERS: &[&str] = &[
    "pattern_list",
    "tuple_pattern",
    "list_pattern",
    "list_splat_pattern",
    "tuple",
    "list",
    "parenthesized_expression",
    "expression_list",
    "list_splat",
];

/// True when `s` (a subscript or attribute) is a store target other than the whole left side
/// of a plain assignment: an element of an unpacking target (`a[0], b = ...`, `[a[0]] = ...`),
/// a `for` or comprehension target (`for a[0] in xs`, also inside a tuple), or a `with ... as`
/// target.
fn unpacked_store<'t>(nav: Nav<'_, 't>, s: Node<'t>) -> bool {
    let mut cur = s;
    let mut nested = false;
    while let Some(p) = nav.parent(cur) {
        match p.kind_name() {
            k if TARGET_CONTAINERS.contains(&k) => {
                nested = true;
                cur = p;
            }
            "assignment" => return nested && is(p, F::Left, cur),
            "for_statement" | "for_in_clause" => return is(p, F::Left, cur),
            "as_pattern_target" => return true,
            _ => return false,
        }
    }
    false
}

fn unparen(mut n: Node) -> Node {
    while n.kind_name() == "parenthesized_expression" {
        match n.named_child(0) {
            Some(c) => n = c,
            None => break,
        }
    }
    n
}

fn is(p: Node, f: F, n: Node) -> bool {
    p.field(f).is_some_and(|c| c.id() == n.id())
}

fn named(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

/// True when `n` is inside a function, lambda or class body: names there are not the
/// module-level bindings the values of a display are evaluated against.
fn in_nested_scope<'t>(nav: Nav<'_, 't>, n: Node<'t>) -> bool {
    let mut cur = nav.parent(n);
    while let Some(p) = cur {
        if matches!(
            p.kind_name(),
            "function_definition" | "lambda" | "class_definition"
        ) {
            return true;
        }
        cur = nav.parent(p);
    }
    false
}

/// True when `e` is a literal expression: no name is read in it (attribute and keyword names
/// aside), so its value does not depend on what the analysis tracks.
pub fn is_literal<'t>(nav: Nav<'_, 't>, e: Node<'t>) -> bool {
    nav.walk(e).all(|n| {
        n.kind_name() != "identifier"
            || nav.parent(n).is_some_and(|p| {
                (p.kind_name() == "attribute" && is(p, F::Attribute, n))
                    || (p.kind_name() == "keyword_argument" && is(p, F::Name, n))
            })
    })
}

impl<'t> Uses<'t> {
    /// Collects the uses of every identifier of the cell under `root` (classified per name on
    /// demand, see [`Uses`]).
    pub fn collect(nav: Nav<'_, 't>, root: Node<'t>, src: &str) -> Self {
        let mut out = Uses::default();
        // Names the cell binds to something of its own: a read-only builtin it redefines is
        // no longer read-only (`len = lambda xs: xs.append(...)`).
        let mut rebound: HashSet<String> = HashSet::default();
        let mut cell_bound: HashSet<String> = HashSet::default();
        let identifiers = nav.identifiers(root);
        for &(n, parent) in &identifiers {
            let t = parse::text(n, src);
            if NAMESPACE_NAMES.contains(&t) {
                out.namespace_reached = true;
            }
            if let Some(p) = parent {
                let binds = match p.kind_name() {
                    "function_definition" | "class_definition" => is(p, F::Name, n),
                    "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                        is(p, F::Left, n)
                    }
                    "named_expression" => is(p, F::Name, n),
                    "aliased_import" => is(p, F::Alias, n),
                    "dotted_name" => nav.parent(p).is_some_and(|g| {
                        g.kind_name() == "import_from_statement" && !is(g, F::ModuleName, p)
                    }),
                    "pattern_list" | "tuple_pattern" | "list_pattern" | "as_pattern_target" => true,
                    _ => false,
                };
                if binds {
                    if !rebound.contains(t) {
                        rebound.insert(t.to_string());
                    }
                    if !matches!(p.kind_name(), "aliased_import" | "dotted_name") {
                        cell_bound.insert(t.to_string());
                    }
                }
            }
        }
        for &(n, parent) in &identifiers {
            let Some(p) = parent else { continue };
            // The expression the name stands for: `obj.names` for an attribute name.
            let e = match p.kind_name() {
                "attribute" if is(p, F::Attribute, n) => p,
                "keyword_argument" | "default_parameter" | "typed_default_parameter"
                    if is(p, F::Name, n) =>
                {
                    continue
                }
                "parameters"
                | "lambda_parameters"
                | "typed_parameter"
                | "list_splat_pattern"
                | "dictionary_splat_pattern"
                | "keyword_pattern"
                | "function_definition"
                | "class_definition"
                | "global_statement"
                | "nonlocal_statement"
                | "dotted_name"
                | "aliased_import"
                | "import_statement"
                | "import_from_statement" => continue,
                _ => n,
            };
            let name = parse::text(n, src);
            match out.pending.get_mut(name) {
                Some(v) => v.push(e),
                None => {
                    out.pending.insert(name.to_string(), vec![e]);
                }
            }
        }
        out.rebound = rebound;
        out.cell_bound = cell_bound;
        out
    }

    /// The uses of `name` (`None` when no identifier of the cell stands for it), classified on
    /// first demand and kept.
    fn name_uses(&self, nav: Nav<'_, 't>, name: &str, src: &str) -> Option<NameUses<'t>> {
        if let Some(u) = self.names.borrow().get(name) {
            return Some(u.clone());
        }
        let exprs = self.pending.get(name)?;
        // A placeholder while classifying: a loop variable's uses may lead back to this name
        // (`for v in xs: ...` inside a loop over `v`).
        self.names
            .borrow_mut()
            .insert(name.to_string(), NameUses::default());
        // A loop variable bound to this name's elements (`for v in d.values(): v[0] = ...`)
        // changes the element it is bound to (round 9 S9-15).
        let changes = |loop_var: &str| {
            self.name_uses(nav, loop_var, src)
                .is_some_and(|u| u.escaped || u.smear || !u.added.is_empty())
        };
        let read_only = |name: &str| {
            if let Some((m, f)) = name.split_once('.') {
                READ_ONLY_MEMBERS.contains(&(m, f)) && !self.cell_bound.contains(m)
            } else {
                READ_ONLY_CALLS.contains(&name) && !self.rebound.contains(name)
            }
        };
        let mut entry = NameUses::default();
        for &e in exprs {
            match classify(nav, e, src, &read_only, &changes, 0) {
                (Use::Read | Use::Binding, elem) => entry.element_escaped |= elem,
                (Use::Add(a), elem) => {
                    entry.element_escaped |= elem;
                    if a.iter().any(|x| in_nested_scope(nav, added_node(x))) {
                        entry.escaped = true;
                    } else if a.iter().all(|x| added_literal(nav, x)) {
                        entry.added.extend(a);
                    } else {
                        entry.escaped = true;
                    }
                }
                (Use::Smear, elem) => {
                    entry.element_escaped |= elem;
                    entry.smear = true;
                }
                (Use::Escape, _) => entry.escaped = true,
            }
        }
        self.names
            .borrow_mut()
            .insert(name.to_string(), entry.clone());
        Some(entry)
    }

    /// How the contents of `display` (a list, set, dict or tuple display) may change after it
    /// is built.
    pub fn state(&self, nav: Nav<'_, 't>, display: Node<'t>, src: &str) -> State<'t> {
        // A tuple never changes; a list or dict inside it is a display of its own.
        if matches!(display.kind_name(), "tuple" | "expression_list") {
            return State::Frozen;
        }
        let mut nested = false;
        let mut cur = display;
        let holder = loop {
            let up = paren_top(nav, cur);
            let Some(p) = nav.parent(up) else {
                return State::Frozen;
            };
            match p.kind_name() {
                "list" | "tuple" | "set" | "expression_list" | "dictionary" => {
                    nested = true;
                    cur = p;
                }
                "pair" => {
                    nested = true;
                    match nav.parent(p) {
                        Some(d) => cur = d,
                        None => return State::Escaped,
                    }
                }
                "list_splat" | "dictionary_splat" => {
                    // `[*xs]`, `{**d}`: copied into the enclosing display.
                    cur = p;
                }
                "conditional_expression" | "boolean_operator" => cur = p,
                "assignment" if is(p, F::Right, up) => match p.field(F::Left).map(unparen) {
                    Some(l) if l.kind_name() == "identifier" => break l,
                    _ => return State::Escaped,
                },
                "named_expression" if is(p, F::Value, up) => match p.field(F::Name) {
                    Some(l) => break l,
                    None => return State::Escaped,
                },
                "default_parameter" | "typed_default_parameter" if is(p, F::Value, up) => {
                    match p.field(F::Name) {
                        Some(l) => break l,
                        None => return State::Escaped,
                    }
                }
                // Consumed on the spot: nothing else can see the container.
                "augmented_assignment" if is(p, F::Right, up) && !nested => return State::Frozen,
                "for_statement" | "for_in_clause" if is(p, F::Right, up) && !nested => {
                    return State::Frozen
                }
                "attribute" | "subscript" if !nested => return State::Frozen,
                "comparison_operator"
                | "not_operator"
                | "binary_operator"
                | "interpolation"
                | "expression_statement" => return State::Frozen,
                // `match [json, 0]:`, `match *[json],:` (re-parsed with `~`): the patterns
                // read the elements; nothing else holds the container.
                "match_statement" => return State::Frozen,
                "unary_operator" => cur = p,
                "argument_list" | "keyword_argument" => {
                    let call = if p.kind_name() == "keyword_argument" {
                        nav.parent(p).and_then(|a| nav.parent(a))
                    } else {
                        nav.parent(p)
                    };
                    // A cell function or lambda may keep or change it; a library function
                    // may too, but the cell cannot read it back except through the call's
                    // result, which is unknown.
                    let cell_code = call.is_some_and(|c| {
                        // A lambda among the other arguments (`reduce(lambda a, x: ..., xs,
                        // [])`) may change it; one inside the display is an element.
                        c.field(F::Arguments).is_some_and(|a| {
                            named(a).into_iter().any(|arg| {
                                (arg.end_byte() <= display.start_byte()
                                    || arg.start_byte() >= display.end_byte())
                                    && parse::walk(arg).any(|x| x.kind_name() == "lambda")
                            })
                        }) || c.field(F::Function).map(unparen).is_some_and(|f| {
                            f.kind_name() == "identifier"
                                && self.cell_bound.contains(parse::text(f, src))
                        })
                    });
                    return if cell_code {
                        State::Escaped
                    } else {
                        State::Frozen
                    };
                }
                _ => return State::Escaped,
            }
        };
        if self.namespace_reached {
            return State::Escaped;
        }
        let name = parse::text(holder, src);
        let Some(u) = self.name_uses(nav, name, src) else {
            return State::Frozen;
        };
        if nested {
            return if u.escaped || u.element_escaped || !u.added.is_empty() || u.smear {
                State::Escaped
            } else {
                State::Frozen
            };
        }
        if u.escaped {
            State::Escaped
        } else if u.added.is_empty() && !u.smear {
            State::Frozen
        } else {
            State::Mutated {
                added: u.added.clone(),
                smear: u.smear,
            }
        }
    }
}

fn added_node<'t>(a: &Added<'t>) -> Node<'t> {
    match a {
        Added::Item(n) | Added::Elements(n) | Added::Pair(n, _) | Added::Keyword(_, n) => *n,
    }
}

fn added_literal<'t>(nav: Nav<'_, 't>, a: &Added<'t>) -> bool {
    match a {
        Added::Item(n) | Added::Elements(n) | Added::Keyword(_, n) => is_literal(nav, *n),
        Added::Pair(k, v) => is_literal(nav, *k) && v.is_none_or(|v| is_literal(nav, v)),
    }
}

/// How expression `e` (a name, an attribute naming it, or an element path `xs[0]`) is used,
/// and whether an element of it is handed out. `depth` > 0 for element paths.
fn classify<'t>(
    nav: Nav<'_, 't>,
    e: Node<'t>,
    src: &str,
    read_only: &dyn Fn(&str) -> bool,
    changes: &dyn Fn(&str) -> bool,
    depth: u32,
) -> (Use<'t>, bool) {
    // Iterated by a loop whose variable is then changed: an element is (round 9 S9-15).
    let loop_changes = |lp: Node<'t>| {
        lp.field(F::Left).is_some_and(|l| {
            nav.walk(l)
                .any(|t| t.kind_name() == "identifier" && changes(parse::text(t, src)))
        })
    };
    let elem = depth > 0;
    // An element path: any mutation of it is an unknown change to the container.
    let on_elem = |u: Use<'t>| -> (Use<'t>, bool) {
        match u {
            Use::Read | Use::Binding => (Use::Read, false),
            _ => (Use::Read, true),
        }
    };
    let up = paren_top(nav, e);
    let Some(p) = nav.parent(up) else {
        return (Use::Read, false);
    };
    let u = match p.kind_name() {
        "assignment" if is(p, F::Left, up) => {
            if elem {
                Use::Escape
            } else {
                Use::Binding
            }
        }
        "pattern_list" | "tuple_pattern" | "list_pattern" | "list_splat_pattern" => Use::Binding,
        "augmented_assignment" if is(p, F::Left, up) => {
            let op = p.field(F::Operator).map(|o| parse::text(o, src));
            match (op, p.field(F::Right)) {
                (Some("+=" | "|="), Some(r)) if !elem => Use::Add(vec![Added::Elements(r)]),
                _ => Use::Escape,
            }
        }
        "for_statement" | "for_in_clause" if is(p, F::Right, up) => {
            if loop_changes(p) {
                return (Use::Read, true);
            }
            Use::Read
        }
        "for_statement" | "for_in_clause" => Use::Binding,
        "subscript" if is(p, F::Value, up) => {
            let s = paren_top(nav, p);
            let key = p.child_by_field_name("subscript");
            let parent = nav.parent(s);
            let store = parent.filter(|a| a.kind_name() == "assignment" && is(*a, F::Left, s));
            if let Some(a) = store {
                if elem {
                    Use::Escape
                } else {
                    match (key, a.field(F::Right)) {
                        // `xs[:] = [...]`, `xs[1:2] = ...`: the elements of the value.
                        (Some(k), Some(v)) if k.kind_name() == "slice" => {
                            Use::Add(vec![Added::Elements(v)])
                        }
                        (Some(k), v) => Use::Add(vec![Added::Pair(k, v)]),
                        _ => Use::Escape,
                    }
                }
            } else if unpacked_store(nav, s) {
                // `opts["a"], n = "__class__", 0`, `for names[0] in [...]`,
                // `[None for names[0] in xs]`, `with f() as d["k"]`: a store whose value
                // cellguard does not pair with the key (round 9 S9-15).
                Use::Escape
            } else if parent.is_some_and(|a| a.kind_name() == "delete_statement")
                || parent.is_some_and(|a| {
                    a.kind_name() == "expression_list"
                        && nav
                            .parent(a)
                            .is_some_and(|d| d.kind_name() == "delete_statement")
                })
            {
                if elem {
                    Use::Escape
                } else {
                    Use::Smear
                }
            } else if parent
                .is_some_and(|a| a.kind_name() == "augmented_assignment" && is(a, F::Left, s))
            {
                Use::Escape
            } else {
                // An element read: what happens to the element may change the container.
                let (inner, inner_elem) = classify(nav, p, src, read_only, changes, depth + 1);
                match inner {
                    Use::Read | Use::Binding => return (Use::Read, inner_elem),
                    Use::Escape => return (Use::Read, true),
                    _ => return (Use::Escape, true),
                }
            }
        }
        "attribute" if is(p, F::Object, up) => {
            let name = p.field(F::Attribute).map_or("", |a| parse::text(a, src));
            let a = paren_top(nav, p);
            let call = nav
                .parent(a)
                .filter(|c| c.kind_name() == "call" && is(*c, F::Function, a));
            let args: Vec<Node> = call
                .and_then(|c| c.field(F::Arguments))
                .map(named)
                .unwrap_or_default();
            if READ_METHODS.contains(&name) {
                // `for v in d.values():`, `for k, v in d.items():` hand out the elements.
                let lp = call
                    .and_then(|c| nav.parent(paren_top(nav, c)))
                    .filter(|lp| {
                        matches!(lp.kind_name(), "for_statement" | "for_in_clause")
                            && call.is_some_and(|c| is(*lp, F::Right, paren_top(nav, c)))
                    });
                if matches!(name, "values" | "items") && lp.is_some_and(loop_changes) {
                    return (Use::Read, true);
                }
                Use::Read
            } else if elem {
                // A method of an element (`names[0].upper()`): strings and numbers have no
                // mutating methods; a nested container's are.
                match name {
                    "append" | "extend" | "insert" | "add" | "update" | "setdefault" | "pop"
                    | "popitem" | "remove" | "discard" | "clear" | "sort" | "reverse" => {
                        Use::Escape
                    }
                    _ if name.starts_with("__") => Use::Escape,
                    _ => Use::Read,
                }
            } else if call.is_none() {
                Use::Escape
            } else {
                let plain = args.iter().all(|a| {
                    !matches!(
                        a.kind_name(),
                        "list_splat" | "dictionary_splat" | "keyword_argument"
                    )
                });
                match (name, args.as_slice()) {
                    ("append" | "add", [v]) if plain => Use::Add(vec![Added::Item(*v)]),
                    ("insert", [_, v]) if plain => Use::Add(vec![Added::Item(*v)]),
                    ("extend", [v]) if plain => Use::Add(vec![Added::Elements(*v)]),
                    ("setdefault", [k]) if plain => Use::Add(vec![Added::Pair(*k, None)]),
                    ("setdefault", [k, v]) if plain => Use::Add(vec![Added::Pair(*k, Some(*v))]),
                    ("update", _) => {
                        let mut out = Vec::new();
                        let mut ok = true;
                        for a in &args {
                            match a.kind_name() {
                                "keyword_argument" => match (a.field(F::Name), a.field(F::Value)) {
                                    (Some(k), Some(v)) => out.push(Added::Keyword(k, v)),
                                    _ => ok = false,
                                },
                                "list_splat" | "dictionary_splat" => ok = false,
                                _ => out.push(Added::Elements(*a)),
                            }
                        }
                        if ok {
                            Use::Add(out)
                        } else {
                            Use::Escape
                        }
                    }
                    (
                        "pop" | "popitem" | "remove" | "discard" | "clear" | "sort" | "reverse",
                        _,
                    ) => Use::Smear,
                    _ => Use::Escape,
                }
            }
        }
        "argument_list" | "keyword_argument" | "list_splat" | "dictionary_splat" => {
            // The call the name is an argument of.
            let mut c = p;
            while matches!(
                c.kind_name(),
                "keyword_argument" | "list_splat" | "dictionary_splat"
            ) {
                match nav.parent(c) {
                    Some(x) => c = x,
                    None => break,
                }
            }
            if c.kind_name() != "argument_list" {
                // `[*xs]`, `{**d}`: copied into a new container.
                return if elem {
                    on_elem(Use::Escape)
                } else {
                    (Use::Read, false)
                };
            }
            let callee = nav
                .parent(c)
                .filter(|x| x.kind_name() == "call")
                .and_then(|x| x.field(F::Function))
                .map(unparen);
            let pure = callee.is_some_and(|f| match f.kind_name() {
                "identifier" => read_only(parse::text(f, src)),
                // `", ".join(names)`, `"{}".format(d)`: methods of a string literal;
                // `json.dumps(d)`, `copy.deepcopy(xs)`: library readers.
                "attribute" => f.field(F::Object).map(unparen).is_some_and(|o| {
                    matches!(o.kind_name(), "string" | "concatenated_string")
                        || (o.kind_name() == "identifier"
                            && f.field(F::Attribute).is_some_and(|a| {
                                read_only(&format!(
                                    "{}.{}",
                                    parse::text(o, src),
                                    parse::text(a, src)
                                ))
                            }))
                }),
                _ => false,
            });
            if pure {
                Use::Read
            } else {
                Use::Escape
            }
        }
        "comparison_operator"
        | "not_operator"
        | "interpolation"
        | "expression_statement"
        | "delete_statement"
        | "if_statement"
        | "while_statement"
        | "assert_statement"
        | "elif_clause"
        | "binary_operator"
        | "format_expression" => Use::Read,
        "subscript" => Use::Read,
        "expression_list"
            if nav
                .parent(p)
                .is_some_and(|d| d.kind_name() == "delete_statement") =>
        {
            Use::Read
        }
        _ => Use::Escape,
    };
    if elem {
        on_elem(u)
    } else {
        (u, false)
    }
}

/// True when the cell under `root` binds `name` itself anywhere, in any scope: an assignment,
/// augmented assignment, `for` or comprehension target, unpacking, walrus, `def`/`class`
/// name, parameter, `except ... as`/`with ... as`/`match` capture, `global` declaration, and
/// (when `imports`) an import. Exemptions keyed on a builtin's or a library function's name
/// (`len(_run_call_trace)`, `@contextmanager`) hold only when the cell does not define the
/// name (round 5 H24, H30).
pub fn cell_binds<'t>(
    nav: Nav<'_, 't>,
    root: Node<'t>,
    src: &str,
    name: &str,
    imports: bool,
) -> bool {
    nav.walk(root).any(|n| {
        if n.kind_name() != "identifier" || parse::text(n, src) != name {
            return false;
        }
        let Some(p) = nav.parent(n) else { return false };
        let mut up = paren_top(nav, n);
        // Through unpacking targets: `a, len = ...`, `[len, *_] = ...`.
        while let Some(t) = nav
            .parent(up)
            .filter(|t| TARGET_CONTAINERS.contains(&t.kind_name()))
        {
            up = t;
        }
        let target = nav.parent(up).is_some_and(|t| {
            matches!(
                t.kind_name(),
                "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause"
            ) && is(t, F::Left, up)
        });
        target
            || match p.kind_name() {
                "function_definition" | "class_definition" => is(p, F::Name, n),
                "named_expression" => is(p, F::Name, n),
                "default_parameter" | "typed_default_parameter" => is(p, F::Name, n),
                "parameters"
                | "lambda_parameters"
                | "typed_parameter"
                | "as_pattern_target"
                | "global_statement"
                | "nonlocal_statement"
                | "case_pattern"
                | "keyword_pattern"
                | "dictionary_splat_pattern" => true,
                "as_pattern" => is(p, F::Alias, n),
                "aliased_import" => imports && is(p, F::Alias, n),
                "dotted_name" => {
                    imports
                        && nav.parent(p).is_some_and(|g| {
                            matches!(g.kind_name(), "import_from_statement" | "import_statement")
                                && !is(g, F::ModuleName, p)
                        })
                }
                _ => false,
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::NodeTable;

    /// A summary of a [`State`] that can be compared.
    fn summary(s: &State, src: &str) -> String {
        match s {
            State::Frozen => "frozen".into(),
            State::Escaped => "escaped".into(),
            State::Mutated { added, smear } => {
                let texts: Vec<&str> = added
                    .iter()
                    .map(|a| crate::parse::text(added_node(a), src))
                    .collect();
                format!("mutated {texts:?} smear={smear}")
            }
        }
    }

    /// Names are classified on first demand ([`Uses::name_uses`]): the state of every display
    /// is the same whatever order the displays are asked about in, and a second ask (served
    /// from the kept classification) agrees with the first.
    #[test]
    fn display_states_do_not_depend_on_the_order_names_are_classified_in() {
        let src = "names = [\"a\"]\nnames.append(\"b\")\nd = {\"k\": 1}\nd[\"j\"] = x\n\
                   ys = [1, 2]\nys.sort()\nzs = [[1]]\nzs[0].append(2)\nlen = f\nws = [3]\n\
                   len(ws)\nvs = [4]\nprint(vs)\nn = 0\nn += 1\nu = [5]\ng(u)\n";
        let tree = crate::parse::parse(src, None);
        let table = NodeTable::new(&tree);
        let root = tree.root_node();
        let displays: Vec<Node> = (0..table.len())
            .filter(|&i| matches!(table.kind(i), "list" | "dictionary"))
            .map(|i| table.node(i))
            .collect();
        assert!(displays.len() >= 8, "{}", displays.len());
        for nav in [Nav::new(Some(&table)), Nav::new(None)] {
            let forward = Uses::collect(nav, root, src);
            let a: Vec<String> = displays
                .iter()
                .map(|&d| summary(&forward.state(nav, d, src), src))
                .collect();
            let backward = Uses::collect(nav, root, src);
            let mut b: Vec<String> = displays
                .iter()
                .rev()
                .map(|&d| summary(&backward.state(nav, d, src), src))
                .collect();
            b.reverse();
            assert_eq!(a, b);
            let again: Vec<String> = displays
                .iter()
                .map(|&d| summary(&forward.state(nav, d, src), src))
                .collect();
            assert_eq!(a, again);
            // What the classification found, so the test is not vacuous.
            assert_eq!(a[0], "mutated [\"\\\"b\\\"\"] smear=false", "{a:?}");
            assert!(a.contains(&"escaped".to_string()), "{a:?}");
            assert!(a.contains(&"frozen".to_string()), "{a:?}");
        }
    }

    /// `Nav::identifiers` reads the table when it has one; the answers are the tree's.
    #[test]
    fn identifiers_from_the_table_are_the_tree_s() {
        for src in [
            "",
            "x = 1\n",
            "def f(a, *b, c=d, **e):\n    return g(a).h[i]\n",
            "from m import (a as b, c)\nclass K(B):\n    y: T = [z for z in w]\n",
            "x = (\n",
        ] {
            let tree = crate::parse::parse(src, None);
            let table = NodeTable::new(&tree);
            let root = tree.root_node();
            let from_tree = Nav::new(None).identifiers(root);
            assert_eq!(
                Nav::new(Some(&table)).identifiers(root),
                from_tree,
                "{src:?}"
            );
            assert!(from_tree
                .iter()
                .all(|(n, p)| n.kind() == "identifier" && *p == n.parent()));
            // A subtree root: only its own identifiers.
            if let Some(first) = root.named_child(0) {
                let inner = Nav::new(Some(&table)).identifiers(first);
                assert_eq!(inner, Nav::new(None).identifiers(first), "{src:?}");
            }
        }
        let tree = crate::parse::parse("a.b(c)\n", None);
        let names: Vec<&str> = Nav::new(None)
            .identifiers(tree.root_node())
            .into_iter()
            .map(|(n, _)| crate::parse::text(n, "a.b(c)\n"))
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
    }
}
