//! The reporting walk: visits the cell's statements in order with a flow-sensitive environment
//! for the top level (function bodies, lambdas, comprehensions and class bodies use the merged
//! bindings), and reports every escape it finds.

use super::field::{FieldChild, F};
use super::interp::{
    bind_into, call_args, component, first_named, ident, is_coroutine, is_denied_loop_method,
    unknown_host_attr, unparen, Bindings, Env, Escape, Interp, LOOP_PREFIX, METACLASS,
};
use super::scan::{kind, Children, NameId, K};
use super::value::*;
use super::{
    CODE_EXECUTION_BUILTIN, DANGEROUS_MEMBER, DUNDER_ACCESS, DUNDER_METHOD_DEFINITION,
    DYNAMIC_ATTRIBUTE_ACCESS, DYNAMIC_IMPORT, FRAME_WALK, MODULE_ESCAPE, UNSAFE_MODULE_ALLOWED,
};
use crate::diagnostic::Rule;
use crate::parse;
use crate::rules::imports::is_allowed;
use crate::source::TextRange;
use rustc_hash::FxHashSet as HashSet;
use std::collections::BTreeSet;
use tree_sitter::Node;

mod narrow;

/// Dunder attributes whose *read* is ordinary code (`type(e).__name__`, `hasattr(x,
/// "__iter__")`, `iter(xs).__next__`): they return strings or bound protocol methods, and every
/// escape from them needs a further dunder, which is reported. Stores, deletions and augmented
/// assignments of these are still reported.
pub const BENIGN_DUNDER_READS: &[&str] = &[
    "__name__",
    "__qualname__",
    "__module__",
    "__doc__",
    "__version__",
    "__next__",
    "__iter__",
    "__len__",
    "__contains__",
    "__aiter__",
    "__anext__",
    // Exception chaining (`raise X from e`, then `err.__cause__`) and an enum class's members
    // (`Color.__members__`): exceptions and enum members the cell already holds (round 8
    // S8-8, S8-9); `__traceback__` on them is still reported.
    "__cause__",
    "__context__",
    "__members__",
];

/// How the deny list names a method of asyncio's tasks (`asyncio.Task.get_context`): such a
/// method is reported on task values and, named literally, on receivers cellguard cannot
/// resolve.
pub const TASK_PREFIX: &str = "asyncio.Task.";

/// Name attributes of a class (strings): `x.__class__` is ordinary code when its only use is an
/// immediately following read of one of these (`e.__class__.__name__`, the same string as
/// `type(e).__name__`).
pub const CLASS_NAME_READS: &[&str] = &["__name__", "__qualname__", "__module__"];

/// True when `node` (an attribute `x.__class__`, or a format field step) is used only by an
/// immediately following load of a [`CLASS_NAME_READS`] attribute: `e.__class__.__name__`,
/// `(e.__class__).__qualname__`. A store, deletion or augmented assignment of that name
/// (`e.__class__.__name__ = "X"`), a call of `__class__`, or any other use (`.__mro__`,
/// `c = e.__class__`, passing it) is not.
fn class_name_only(node: Node, src: &str) -> bool {
    let mut cur = node;
    let mut parent = match cur.parent() {
        Some(p) => p,
        None => return false,
    };
    while kind(parent) == K::ParenthesizedExpression {
        cur = parent;
        parent = match cur.parent() {
            Some(p) => p,
            None => return false,
        };
    }
    if kind(parent) != K::Attribute || parent.field(F::Object).map(|o| o.id()) != Some(cur.id()) {
        return false;
    }
    let Some(attr) = parent.field(F::Attribute) else {
        return false;
    };
    if !CLASS_NAME_READS.contains(&&*ident(attr, src)) {
        return false;
    }
    // The name read must be a load: climb through the kinds that pass a target context down.
    let mut n = parent;
    while let Some(p) = n.parent() {
        match kind(p) {
            K::PatternList
            | K::TuplePattern
            | K::ListPattern
            | K::ListSplatPattern
            | K::ParenthesizedExpression
            | K::Tuple
            | K::List
            | K::ExpressionList
            | K::ListSplat
            | K::AsPatternTarget => n = p,
            K::Assignment | K::ForStatement | K::ForInClause | K::AugmentedAssignment => {
                return p.field(F::Left).map(|l| l.id()) != Some(n.id());
            }
            K::AsPattern => return p.field(F::Alias).map(|l| l.id()) != Some(n.id()),
            K::DeleteStatement => return false,
            _ => return true,
        }
    }
    true
}

/// The public methods of the builtin types a cell may subclass (CPython 3.11). A host that
/// treats a value as its base type calls them without knowing it holds a subclass:
/// `json.dumps` and `pickle` call `items()` of a `dict` subclass, `copy.deepcopy` calls
/// `append`/`extend` of a `list` subclass, and host code calls `get`, `keys`, `split`, ... on
/// what it believes is a `dict` or a `str`. Overriding one is a deferred hook like `__eq__`
/// (round 4 G32). Empty for other names.
pub fn builtin_base_methods(base: &str) -> &'static [&'static str] {
    const DICT: &[&str] = &[
        "clear",
        "copy",
        "fromkeys",
        "get",
        "items",
        "keys",
        "pop",
        "popitem",
        "setdefault",
        "update",
        "values",
    ];
    const LIST: &[&str] = &[
        "append",
        "clear",
        "copy",
        "count",
        "extend",
        "index",
        "insert",
        "pop",
        "remove",
        "reverse",
        "sort",
        "appendleft",
        "extendleft",
        "popleft",
        "rotate",
    ];
    const SET: &[&str] = &[
        "add",
        "clear",
        "copy",
        "difference",
        "difference_update",
        "discard",
        "intersection",
        "intersection_update",
        "isdisjoint",
        "issubset",
        "issuperset",
        "pop",
        "remove",
        "symmetric_difference",
        "symmetric_difference_update",
        "union",
        "update",
    ];
    const STR: &[&str] = &[
        "capitalize",
        "casefold",
        "center",
        "count",
        "decode",
        "encode",
        "endswith",
        "expandtabs",
        "find",
        "format",
        "format_map",
        "hex",
        "index",
        "isalnum",
        "isalpha",
        "isascii",
        "isdecimal",
        "isdigit",
        "isidentifier",
        "islower",
        "isnumeric",
        "isprintable",
        "isspace",
        "istitle",
        "isupper",
        "join",
        "ljust",
        "lower",
        "lstrip",
        "maketrans",
        "partition",
        "removeprefix",
        "removesuffix",
        "replace",
        "rfind",
        "rindex",
        "rjust",
        "rpartition",
        "rsplit",
        "rstrip",
        "split",
        "splitlines",
        "startswith",
        "strip",
        "swapcase",
        "title",
        "translate",
        "upper",
        "zfill",
    ];
    const NUM: &[&str] = &[
        "as_integer_ratio",
        "bit_count",
        "bit_length",
        "conjugate",
        "from_bytes",
        "to_bytes",
        "fromhex",
        "hex",
        "is_integer",
    ];
    const COUNTER: &[&str] = &[
        "clear",
        "copy",
        "fromkeys",
        "get",
        "items",
        "keys",
        "pop",
        "popitem",
        "setdefault",
        "update",
        "values",
        "elements",
        "most_common",
        "subtract",
        "total",
    ];
    const ORDERED: &[&str] = &[
        "clear",
        "copy",
        "fromkeys",
        "get",
        "items",
        "keys",
        "pop",
        "popitem",
        "setdefault",
        "update",
        "values",
        "move_to_end",
    ];
    match base {
        "dict" | "defaultdict" => DICT,
        "Counter" => COUNTER,
        "OrderedDict" => ORDERED,
        "list" | "deque" => LIST,
        "set" | "frozenset" => SET,
        "tuple" => &["count", "index"],
        "str" | "bytes" | "bytearray" => STR,
        "int" | "float" | "complex" | "bool" => NUM,
        _ => &[],
    }
}

/// Module members that are builtin-type bases for [`builtin_base_methods`].
const BUILTIN_BASE_MEMBERS: &[(&str, &str)] = &[
    ("collections.OrderedDict", "OrderedDict"),
    ("collections.defaultdict", "defaultdict"),
    ("collections.Counter", "Counter"),
    ("collections.deque", "deque"),
];

/// The builtin type (a key of [`builtin_base_methods`]) a base class expression names by its
/// last dotted segment: `dict`, `collections.OrderedDict`, `Counter` (pre-bound by Colony),
/// `deque`. `None` for other names.
pub fn builtin_base_name(last: &str) -> Option<&'static str> {
    BUILTIN_BASE_MEMBERS
        .iter()
        .map(|(_, b)| *b)
        .chain([
            "dict",
            "list",
            "set",
            "frozenset",
            "tuple",
            "str",
            "bytes",
            "bytearray",
            "int",
            "float",
            "complex",
            "bool",
        ])
        .find(|x| *x == last)
}

/// Attributes of frames, tracebacks, generators and coroutines that walk execution frames, and
/// the methods that hand frames out on any receiver (`asyncio.Task.get_stack` returns the
/// frames of a task, which may be one of the host's from `asyncio.all_tasks()`;
/// `Task.print_stack` and `traceback.print_stack` print them).
pub const FRAME_ATTRS: &[&str] = &[
    "get_stack",
    "print_stack",
    "tb_frame",
    "tb_next",
    "f_back",
    "f_globals",
    "f_locals",
    "f_builtins",
    "f_code",
    "f_trace",
    "gi_frame",
    "gi_code",
    "gi_yieldfrom",
    "cr_frame",
    "cr_code",
    "cr_await",
    "cr_origin",
    "ag_frame",
    "ag_code",
    "ag_await",
];

/// Builtins that execute code, read or write the host, or expose namespaces (SBX003).
pub const EXEC_BUILTINS: &[&str] = &[
    "eval",
    "exec",
    "compile",
    "open",
    "input",
    "breakpoint",
    "globals",
    "locals",
    "vars",
    "help",
    "get_ipython",
];

pub use super::ALLOWED_DUNDER_METHODS;

/// Dunder names a class body binds as data, not as methods the interpreter calls later.
const DATA_DUNDERS: &[&str] = &[
    "__slots__",
    "__doc__",
    "__module__",
    "__qualname__",
    "__annotations__",
    "__match_args__",
    "__name__",
    "__version__",
    "__all__",
];

/// Attributes `functools.update_wrapper`/`wraps` copy by default (`WRAPPER_ASSIGNMENTS`,
/// `WRAPPER_UPDATES`): naming them is ordinary code.
const WRAPPER_DEFAULTS: &[&str] = &[
    "__module__",
    "__name__",
    "__qualname__",
    "__doc__",
    "__annotations__",
    "__type_params__",
    "__dict__",
    "__wrapped__",
];

/// Builtins that read or write attributes by a name given as a value.
const REFLECTIVE: &[&str] = &["getattr", "setattr", "delattr", "hasattr"];

/// Host-reaching modules (SBX006 when an allowlist lets them in): the list generated by
/// `tools/gen_sandbox_reach.py` from the standard library's sources (`host_modules` in
/// `reach.json`), with what each gives.
pub use super::{host_module, host_module_entry};

/// True when `pattern` (with `*` wildcards) matches `text`. Byte-wise, without allocating.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == text;
    }
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0usize, 0usize);
    let (mut star, mut mark) = (None, 0usize);
    while ti < t.len() {
        if pi < p.len() && p[pi] != b'*' && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

/// The `deny-members` entries, compiled: exact entries in a map, glob entries in order, and the
/// root modules any entry can match (most paths are rejected by one lookup).
struct DenyList<'a> {
    entries: &'a [String],
    exact: rustc_hash::FxHashMap<&'a str, usize>,
    globs: Vec<usize>,
    roots: HashSet<&'a str>,
    any_root: bool,
}

fn root_of(path: &str) -> &str {
    path.split_once('.').map_or(path, |(r, _)| r)
}

impl<'a> DenyList<'a> {
    fn new(entries: &'a [String], table: &'static super::reach::Reach) -> Self {
        let mut d = DenyList {
            entries,
            exact: Default::default(),
            globs: Vec::new(),
            roots: HashSet::default(),
            any_root: false,
        };
        for (i, e) in entries.iter().enumerate() {
            if e.contains('*') {
                d.globs.push(i);
                if root_of(e).contains('*') {
                    d.any_root = true;
                }
            } else {
                d.exact.entry(e.as_str()).or_insert(i);
            }
            d.roots.insert(root_of(e));
        }
        // Other names of a denied member (`asyncio.subprocess.create_subprocess_exec`).
        for (from, to) in &table.deny_aliases {
            if d.exact.contains_key(to.as_str()) {
                d.roots.insert(root_of(from));
            }
        }
        d
    }

    /// The first entry (in configuration order) that matches `path` or the denied member
    /// `path` is another name for.
    fn matches(&self, path: &str, table: &super::reach::Reach) -> Option<&'a str> {
        if self.entries.is_empty() || (!self.any_root && !self.roots.contains(root_of(path))) {
            return None;
        }
        let mut best = self.exact.get(path).copied();
        if let Some(alias) = table.deny_alias(path) {
            if let Some(i) = self.exact.get(alias) {
                best = Some(best.map_or(*i, |b| b.min(*i)));
            }
        }
        for &i in &self.globs {
            if best.is_some_and(|b| b < i) {
                break;
            }
            if glob_match(&self.entries[i], path) {
                best = Some(i);
                break;
            }
        }
        best.map(|i| self.entries[i].as_str())
    }
}

/// How an attribute or name is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Load,
    Store,
    Del,
    Aug,
}

/// One finding, before it becomes a diagnostic.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The rule.
    pub rule: &'static Rule,
    /// Byte range in the cell.
    pub range: TextRange,
    /// Message.
    pub message: String,
    /// Help line.
    pub help: Option<String>,
}

/// Syntax nodes by a name (see [`Sbx::binding_sources`]).
type NodesByName<'t> = rustc_hash::FxHashMap<String, Vec<Node<'t>>>;

/// The node kinds [`CellIndex`] lists: the kinds the whole-cell scans of [`Sbx`] look for.
const INDEXED_KINDS: &[&str] = &[
    "assignment",
    "augmented_assignment",
    "named_expression",
    "class_definition",
    "function_definition",
    "for_statement",
    "for_in_clause",
    "subscript",
    "call",
];

/// The nodes of one cell (the tree [`Sbx::run`] walks) the whole-cell scans look for, built
/// with one walk on first use: the nodes of each of [`INDEXED_KINDS`] and the identifiers by
/// name ([`ident`]), each with its position in pre-order, so that a scan for one name or kind
/// reads a short list instead of testing every node of the cell. Lists are in pre-order.
#[derive(Default)]
struct CellIndex<'t> {
    /// Nodes of the indexed kinds, by kind.
    kinds: rustc_hash::FxHashMap<&'static str, Vec<(u32, Node<'t>)>>,
    /// Identifiers, by the name they spell.
    idents: rustc_hash::FxHashMap<String, Vec<(u32, Node<'t>)>>,
}

impl<'t> CellIndex<'t> {
    /// `nodes` are the cell's nodes in pre-order with their kinds.
    fn new(nodes: impl Iterator<Item = (Node<'t>, &'static str)>, src: &str) -> Self {
        let mut me = CellIndex::default();
        for (i, (n, k)) in nodes.enumerate() {
            if k == "identifier" {
                let name = ident(n, src);
                match me.idents.get_mut(&*name) {
                    Some(list) => list.push((i as u32, n)),
                    None => {
                        me.idents.insert(name.into_owned(), vec![(i as u32, n)]);
                    }
                }
            } else if INDEXED_KINDS.contains(&k) {
                me.kinds.entry(k).or_default().push((i as u32, n));
            }
        }
        me
    }

    /// The union of some lists, in pre-order, each node once.
    fn merged<'s>(lists: impl Iterator<Item = &'s [(u32, Node<'t>)]>) -> Vec<Node<'t>>
    where
        't: 's,
    {
        let mut all: Vec<(u32, Node<'t>)> = Vec::new();
        let mut parts = 0;
        for l in lists {
            all.extend_from_slice(l);
            parts += 1;
        }
        if parts > 1 {
            all.sort_unstable_by_key(|(i, _)| *i);
            all.dedup_by_key(|(i, _)| *i);
        }
        all.into_iter().map(|(_, n)| n).collect()
    }

    /// The nodes of the given kinds (each one of [`INDEXED_KINDS`]), in pre-order.
    fn of_kinds(&self, kinds: &[&str]) -> Vec<Node<'t>> {
        debug_assert!(kinds.iter().all(|k| INDEXED_KINDS.contains(k)));
        Self::merged(
            kinds
                .iter()
                .filter_map(|k| self.kinds.get(k))
                .map(Vec::as_slice),
        )
    }

    /// The identifiers spelling one of `names`, in pre-order.
    fn identifiers(&self, names: &[&str]) -> Vec<Node<'t>> {
        Self::merged(
            names
                .iter()
                .filter_map(|k| self.idents.get(*k))
                .map(Vec::as_slice),
        )
    }
}

/// How [`Sbx::check_in_place_mutator`] tells which rewriter a callee is (`update_wrapper`,
/// `dataclass`, ...): the callee node, its values and the names to look for.
type RewriterOf<'t, 'a, 'b> =
    dyn Fn(&mut Sbx<'t, 'a>, Node<'t>, &VSet, &[&str]) -> Option<String> + 'b;

/// The sandbox checker for one cell.
pub struct Sbx<'t, 'a> {
    it: Interp<'t, 'a>,
    deny_entries: &'a [String],
    deny: DenyList<'a>,
    namespace_names: &'a BTreeSet<String>,
    findings: Vec<Finding>,
    seen: HashSet<(&'static str, usize, usize)>,
    /// How deep inside code strings (`exec("...")`) this checker runs.
    nesting: u32,
    /// Inside [`Self::check_type_expression`]: code strings are annotations or type strings,
    /// which evaluators may run in another module's globals (see `check_free_host_names`).
    in_type_expr: bool,
    /// Names of dicts that got a dunder-method key by item assignment (`ns["__del__"] = f`),
    /// with that key: a class namespace for a three-argument `type(...)`.
    dunder_keyed: Vec<(String, String)>,
    /// Keyword patterns (by node id) -> their `match` subject and the keywords above them.
    kw_subjects: rustc_hash::FxHashMap<usize, (Option<Node<'t>>, Vec<String>)>,
    /// The module node of the cell (set by [`Sbx::run`]).
    root: Option<Node<'t>>,
    /// Modules of the `from m import *` statements seen so far (code strings of the cell run
    /// in the same globals, so their names may be bound by these too).
    star_modules: Vec<String>,
    /// Positional sub-patterns of class patterns whose class's `__match_args__` cellguard
    /// knows (by node id) -> the `match` subject, the attributes read above them, and the
    /// attribute they read.
    pos_subjects: rustc_hash::FxHashMap<usize, (Option<Node<'t>>, Vec<String>, String)>,
    /// The cell's nodes by kind and identifiers by name (filled on first use; see
    /// [`Sbx::index`]).
    index: std::cell::OnceCell<CellIndex<'t>>,
    /// [`Sbx::denied_last_segment`] results by attribute name.
    denied_last: rustc_hash::FxHashMap<String, bool>,
    /// [`Sbx::module_denied_entry`] results by attribute name.
    module_denied: rustc_hash::FxHashMap<String, Option<&'a str>>,
    /// Class definitions of the cell by name (filled on first use).
    class_defs: Option<rustc_hash::FxHashMap<String, Node<'t>>>,
    /// Right-hand sides of the plain assignments (`name = value`, `name += value`) of the
    /// cell by target name (filled on first use), to see how a string was built. Shared
    /// slices: a name can be assigned thousands of times in a long cell, and
    /// [`Sbx::assignments_of`] is asked for it at every use of the name.
    assigned: Option<rustc_hash::FxHashMap<String, std::rc::Rc<[Node<'t>]>>>,
    /// [`Sbx::binding_sources`] beyond plain assignments (`for` and comprehension iterables,
    /// unpacking, parameter defaults) and the `return` values of cell functions, by name
    /// (filled on first use: one walk of the cell).
    flows: Option<(NodesByName<'t>, NodesByName<'t>)>,
    /// The expression [`Sbx::host_in_value`] last found a host object at (`asyncio` in
    /// `sorted([asyncio], key=id)[0]`).
    laundered_at: Option<Node<'t>>,
    /// [`Sbx::sealed`] by class node id (a walk of the cell each).
    sealed_memo: rustc_hash::FxHashMap<usize, bool>,
    /// [`Sbx::scoped_instance`] by identifier node id (`None` also while it is computed, so
    /// that mutually recursive binders end).
    narrow_memo: rustc_hash::FxHashMap<usize, Option<Vec<u32>>>,
    /// `Sbx::bindings_of`: by name, the number of bindings per scope node id (`None` when a
    /// `global`/`nonlocal` statement names it).
    bindings_memo: rustc_hash::FxHashMap<String, Option<rustc_hash::FxHashMap<usize, usize>>>,
    /// Whether [`Sbx::host_laundered`] finds a host object for a name (by name) or another
    /// expression (by `#` and node id), for [`Sbx::scoped_instance`]'s argument checks.
    laundered_memo: rustc_hash::FxHashMap<String, bool>,
    /// The uses of names that [`super::tasks::dangling`] follows (indexed on first use).
    task_uses: super::tasks::Uses<'t>,
}

/// Whether `t` reads like a class name (`JSONEncoder`, `ActionResult`): an upper-case first
/// letter and at least one lower-case letter (so not a constant like `MAXSIZE`).
fn class_like(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_uppercase()) && t.chars().any(|c| c.is_ascii_lowercase())
}

/// Whether the value `x` is a host object that can receive a host write: a module, or a class
/// of a module (not a function passed as a value, `map(json.loads, lines)`, nor a coroutine
/// function). A member of an untracked module is one opaque value per root module
/// (`collections`), so `last` (the last name of the chain or the name that holds it) tells a
/// class there.
fn is_host_receiver_value(x: &Val, last: &str) -> bool {
    match x {
        Val::Module(_) => true,
        Val::Member(p) => {
            !is_coroutine(x)
                && if p.contains('.') {
                    p.rsplit('.').next().is_some_and(class_like)
                } else {
                    class_like(last)
                }
        }
        _ => false,
    }
}

fn short(s: &str) -> String {
    let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 60 {
        let mut t: String = one_line.chars().take(57).collect();
        t.push_str("...");
        t
    } else {
        one_line
    }
}

/// True for a class attribute value that is a plain constant (`None`, `"x"`, `("a",)`): such
/// a binding defines no method.
fn constant_value(r: Node) -> bool {
    matches!(
        unparen(r).kind_name(),
        "string"
            | "concatenated_string"
            | "integer"
            | "float"
            | "none"
            | "true"
            | "false"
            | "tuple"
            | "list"
            | "expression_list"
    ) && !parse::walk(r).any(|x| matches!(x.kind_name(), "lambda" | "identifier" | "call"))
}

/// The identifiers an assignment target binds (`a`, `[a, *b]`, `(a, b), c`); attributes and
/// subscripts bind none.
fn target_names(target: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut stack = vec![(target, 0u32)];
    while let Some((n, depth)) = stack.pop() {
        if depth > 200 {
            continue;
        }
        match n.kind() {
            "identifier" => out.push(n),
            k if crate::nodes::is_target_container(k) => {
                stack.extend(named(n).into_iter().map(|c| (c, depth + 1)));
            }
            _ => {}
        }
    }
    out
}

/// A dunder name that defines a method the interpreter calls on its own (not an allowed
/// method, not a data dunder).
fn is_method_dunder(name: &str) -> bool {
    is_dunder(name) && !ALLOWED_DUNDER_METHODS.contains(&name) && !DATA_DUNDERS.contains(&name)
}

fn named(node: Node) -> Vec<Node> {
    super::scan::named_children(node)
}

fn is_field(parent: Node, f: F, node: Node) -> bool {
    parent.field(f).map(|n| n.id()) == Some(node.id())
}

/// What the walk knows about a node from its ancestors (computed top-down: tree-sitter's
/// `parent()` scans siblings from the root, which is quadratic on wide nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NodeCtx {
    /// Load, store, delete or augmented-assignment position.
    ctx: Ctx,
    /// The callee of a call (through parentheses).
    callee: bool,
    /// An identifier that names something rather than reading it (attribute name, keyword,
    /// definition name, parameter, import part).
    name_only: bool,
    /// A block that is a class body.
    class_block: bool,
    /// A statement directly in a class body.
    class_stmt: bool,
    /// An assignment statement directly in a class body.
    class_assign: bool,
    /// A node whose parent is a `match` pattern.
    pattern: bool,
}

impl NodeCtx {
    const ROOT: NodeCtx = NodeCtx {
        ctx: Ctx::Load,
        callee: false,
        name_only: false,
        class_block: false,
        class_stmt: false,
        class_assign: false,
        pattern: false,
    };
    const STORE: NodeCtx = NodeCtx {
        ctx: Ctx::Store,
        ..NodeCtx::ROOT
    };
    const CLASS_BODY: NodeCtx = NodeCtx {
        class_block: true,
        ..NodeCtx::ROOT
    };

    /// True for an identifier that is read.
    fn is_load(&self) -> bool {
        !self.name_only && matches!(self.ctx, Ctx::Load | Ctx::Aug)
    }
}

/// The context of `child` (reached through `field`) of `parent`.
fn child_ctx(pk: K, pctx: &NodeCtx, ck: K, field: Option<&str>) -> NodeCtx {
    let ctx = match pk {
        K::Assignment | K::ForStatement | K::ForInClause if field == Some("left") => Ctx::Store,
        K::AugmentedAssignment if field == Some("left") => Ctx::Aug,
        K::AsPattern if field == Some("alias") => Ctx::Store,
        K::DeleteStatement => Ctx::Del,
        K::PatternList
        | K::TuplePattern
        | K::ListPattern
        | K::ListSplatPattern
        | K::ParenthesizedExpression
        | K::Tuple
        | K::List
        | K::ExpressionList
        | K::ListSplat
        | K::AsPatternTarget => pctx.ctx,
        _ => Ctx::Load,
    };
    let callee = (pk == K::Call && field == Some("function"))
        || (pk == K::ParenthesizedExpression && pctx.callee);
    let name_only = ck == K::Identifier && super::scan::declares_name(pk, field);
    NodeCtx {
        ctx,
        callee,
        name_only,
        class_block: pk == K::ClassDefinition && field == Some("body"),
        class_stmt: pctx.class_block && ck == K::ExpressionStatement,
        class_assign: pctx.class_stmt && ck == K::Assignment,
        pattern: super::scan::pattern_parent(pk),
    }
}

/// Parent kinds under which `child_ctx` looks at the field name of a child.
fn needs_field(pk: K) -> bool {
    matches!(
        pk,
        K::Assignment
            | K::ForStatement
            | K::ForInClause
            | K::AugmentedAssignment
            | K::AsPattern
            | K::Call
            | K::Attribute
            | K::KeywordArgument
            | K::FunctionDefinition
            | K::ClassDefinition
            | K::DefaultParameter
            | K::TypedDefaultParameter
            | K::NamedExpression
    )
}

fn importlib_family(real: &str) -> bool {
    let root = real.split('.').next().unwrap_or(real);
    matches!(
        root,
        "importlib" | "_frozen_importlib" | "_frozen_importlib_external" | "_imp" | "imp"
    )
}

fn frame_function(module: &str, name: &str) -> bool {
    match module {
        "sys" => matches!(
            name,
            "_getframe" | "_current_frames" | "settrace" | "setprofile" | "_getframemodulename"
        ),
        "inspect" => matches!(
            name,
            "currentframe" | "stack" | "trace" | "getouterframes" | "getinnerframes"
        ),
        "traceback" => matches!(
            name,
            "walk_stack" | "walk_tb" | "extract_stack" | "format_stack" | "print_stack"
        ),
        // asyncio's own stack helper: `traceback.walk_stack` from its caller's caller (round 6
        // S6-22).
        "asyncio.format_helpers" => name == "extract_stack",
        "logging" => name == "currentframe",
        "threading" => matches!(name, "settrace" | "setprofile" | "settrace_all_threads"),
        _ => false,
    }
}

/// The arguments of a format call, to resolve its fields: positional and keyword values
/// (`str.format`), a mapping (`format_map`, `vformat`'s kwargs), a sequence (`vformat`'s args).
/// `opaque` when some argument is unpacked or unknown: every field may be anything.
#[derive(Default)]
struct FormatArgs {
    pos: Vec<VSet>,
    kws: Vec<(String, VSet)>,
    mapping: Option<VSet>,
    seq: Option<VSet>,
    opaque: bool,
}

impl<'t, 'a> Sbx<'t, 'a> {
    /// A checker over an interpreted cell.
    pub fn new(
        it: Interp<'t, 'a>,
        deny: &'a [String],
        namespace_names: &'a BTreeSet<String>,
    ) -> Self {
        let table = it.cfg.table;
        Sbx {
            it,
            deny_entries: deny,
            deny: DenyList::new(deny, table),
            namespace_names,
            findings: Vec::new(),
            seen: HashSet::default(),
            nesting: 0,
            in_type_expr: false,
            dunder_keyed: Vec::new(),
            kw_subjects: Default::default(),
            root: None,
            star_modules: Vec::new(),
            pos_subjects: Default::default(),
            index: std::cell::OnceCell::new(),
            denied_last: Default::default(),
            module_denied: Default::default(),
            class_defs: None,
            assigned: None,
            flows: None,
            laundered_at: None,
            sealed_memo: Default::default(),
            narrow_memo: Default::default(),
            bindings_memo: Default::default(),
            laundered_memo: Default::default(),
            task_uses: Default::default(),
        }
    }

    /// Runs the walk from the module node and returns the findings, in discovery order.
    pub fn run(mut self, root: Node<'t>) -> Vec<Finding> {
        self.root = Some(root);
        if !self.it.relevance.any_hot() {
            // Nothing in the cell can produce a finding (see `scan`), except the bodies the
            // host runs later, which are checked by their shape (a property of a cell
            // `SyntaxError`, round 9 S9-27).
            self.check_host_run_hooks();
            self.dedupe();
            return self.findings;
        }
        let mut flow = Bindings::new(self.it.names.len());
        for g in self.it.global_decls.clone() {
            // Bound by a function at a time cellguard does not know: the pre-bound value
            // (`global json` in a function never called) and the function's values.
            self.seed_prebound(&mut flow, g);
            if let Some(v) = self.it.globals.get(g) {
                let v = v.clone();
                flow.0[g as usize].join(&v);
            }
        }
        self.run_block(root, &mut flow, true, 0);
        self.check_attribute_validation();
        self.check_host_run_hooks();
        self.check_module_dunder_bindings();
        // Stars of the enclosing cell, for the code strings it runs (`exec`, annotations).
        for m in self.star_modules.clone() {
            if self.nesting > 0 {
                self.check_star_import(&m);
            }
        }
        self.dedupe();
        self.findings
    }

    /// Drops a value-based builtin finding (SBX001/SBX003) nested inside another of the same
    /// rule (`__builtins__` inside `__builtins__.eval`). O(n log n).
    fn dedupe(&mut self) {
        let is_value_rule =
            |code: &str| code == DYNAMIC_IMPORT.code || code == CODE_EXECUTION_BUILTIN.code;
        // Spans of the two rules sorted by (rule, start, end), with the running maximum end of
        // each rule's spans.
        let mut spans: Vec<(&'static str, usize, usize)> = self
            .findings
            .iter()
            .filter(|f| is_value_rule(f.rule.code))
            .map(|f| (f.rule.code, f.range.start, f.range.end))
            .collect();
        if spans.len() < 2 {
            return;
        }
        spans.sort_unstable();
        spans.dedup();
        let mut max_end = Vec::with_capacity(spans.len());
        for (i, s) in spans.iter().enumerate() {
            let prev = match i {
                0 => None,
                _ if spans[i - 1].0 != s.0 => None,
                _ => Some(max_end[i - 1]),
            };
            max_end.push(prev.map_or(s.2, |m: usize| m.max(s.2)));
        }
        // Nested: some other span of the rule starts before it and ends at or after its end, or
        // starts with it and ends after it.
        let nested = |f: &Finding| -> bool {
            if !is_value_rule(f.rule.code) {
                return false;
            }
            let key = (f.rule.code, f.range.start);
            let lo = spans.partition_point(|s| s.0 < f.rule.code);
            let before = spans.partition_point(|s| (s.0, s.1) < key);
            let upto = spans.partition_point(|s| (s.0, s.1) <= key);
            (before > lo && max_end[before - 1] >= f.range.end)
                || (upto > before && spans[upto - 1].2 > f.range.end)
        };
        let keep: Vec<bool> = self.findings.iter().map(|f| !nested(f)).collect();
        let mut keep = keep.into_iter();
        self.findings.retain(|_| keep.next().unwrap_or(true));
    }

    fn report(
        &mut self,
        rule: &'static Rule,
        range: TextRange,
        message: String,
        help: Option<String>,
    ) {
        if self.seen.insert((rule.code, range.start, range.end)) {
            self.findings.push(Finding {
                rule,
                range,
                message,
                help,
            });
        }
    }

    fn text(&self, node: Node) -> &'a str {
        self.it.text(node)
    }

    // ---- statements -------------------------------------------------------------------------

    fn run_block(&mut self, block: Node<'t>, flow: &mut Bindings, strong: bool, depth: u32) {
        for stmt in named(block) {
            self.run_stmt(stmt, flow, strong, depth);
        }
    }

    /// Before a weak (conditional) binding of name `id` at the top level: an unbound slot
    /// stands for the pre-bound value (a namespace module, a builtin), which still reaches the
    /// paths where the binding does not run, so the slot starts from it.
    fn seed_prebound(&self, flow: &mut Bindings, id: NameId) {
        if let Some(slot) = flow.0.get_mut(id as usize) {
            if slot.is_empty() {
                let d = self.it.default_value(self.it.names.text(id));
                if !d.only_unknown() {
                    *slot = d;
                }
            }
        }
    }

    /// Binds `v` to the demanded names of `target` in the top-level environment.
    fn bind_flow(&self, flow: &mut Bindings, target: Node, v: &VSet, strong: bool) {
        let relevance = &self.it.relevance;
        bind_into(
            flow,
            &self.it.names,
            target,
            v,
            strong,
            self.it.src,
            &|id| relevance.demands(id),
            &mut Vec::new(),
        );
        if !self.it.global_decls.is_empty() {
            for t in target_names(target) {
                if let Some(id) = self.it.name_id(t) {
                    self.keep_global_values(flow, id);
                }
            }
        }
    }

    /// After a top-level binding of a name some function declares `global`: the function may
    /// run later (any call cellguard cannot place) and rebind it, so the slot also holds every
    /// value bound to the name anywhere (round 9 S9-15: `names = ["count"]` after
    /// `def f(): global names; names = ["__class__"]`, then `f()`).
    fn keep_global_values(&self, flow: &mut Bindings, id: NameId) {
        if !self.it.is_global_decl(id) || !self.it.demands(id) {
            return;
        }
        if let Some(g) = self.it.globals.get(id) {
            let g = g.clone();
            flow.0[id as usize].join(&g);
        }
    }

    /// True when some name the target binds is demanded (so its value must be computed).
    fn binds_demanded(&self, target: Node) -> bool {
        if self.it.relevance.all {
            return true;
        }
        let mut stack = vec![(target, 0u32)];
        while let Some((n, depth)) = stack.pop() {
            if depth > 200 {
                continue;
            }
            match n.kind_name() {
                "identifier" if self.it.name_id(n).is_some_and(|id| self.it.demands(id)) => {
                    return true;
                }
                "identifier" => {}
                "pattern_list"
                | "tuple_pattern"
                | "list_pattern"
                | "expression_list"
                | "tuple"
                | "list"
                | "parenthesized_expression"
                | "as_pattern_target"
                | "list_splat_pattern"
                | "list_splat" => {
                    stack.extend(named(n).into_iter().map(|c| (c, depth + 1)));
                }
                _ => {}
            }
        }
        false
    }

    fn run_stmt(&mut self, stmt: Node<'t>, flow: &mut Bindings, strong: bool, depth: u32) {
        if depth > 48 {
            self.check_tree(stmt, None, NodeCtx::ROOT);
            return;
        }
        // Bindings tree-sitter's error recovery lost (`scan::loose_binding`) may take effect
        // anywhere in the statement, before or after what the tree shows: bound weakly before
        // it and again after it (once, for a statement of the cell's top level: that covers the
        // statements nested in it).
        let broken = depth == 0 && stmt.has_error();
        if broken {
            self.bind_loose(stmt, flow);
        }
        self.run_stmt_parts(stmt, flow, strong, depth);
        if broken {
            self.bind_loose(stmt, flow);
        }
    }

    /// Binds weakly, in the top-level environment, the names of the lost bindings
    /// ([`scan::loose_binding`]) of statement `stmt`, outside function, lambda and class bodies.
    fn bind_loose(&mut self, stmt: Node<'t>, flow: &mut Bindings) {
        let mut stack = vec![stmt];
        let mut found: Vec<(Node<'t>, Node<'t>)> = Vec::new();
        while let Some(n) = stack.pop() {
            if matches!(
                n.kind_name(),
                "function_definition" | "lambda" | "class_definition"
            ) {
                continue;
            }
            if let Some(b) = super::scan::loose_binding(n) {
                found.push(b);
            }
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
        }
        if found.is_empty() {
            return;
        }
        self.it.start_memo();
        for (target, value) in found {
            if !self.binds_demanded(target) {
                continue;
            }
            if let Some(id) = self.it.name_id(target) {
                self.seed_prebound(flow, id);
            }
            let v = self.it.eval(value, &Env::Flow(flow), 0);
            self.bind_flow(flow, target, &v, false);
            self.it.start_memo();
        }
    }

    fn run_stmt_parts(&mut self, stmt: Node<'t>, flow: &mut Bindings, strong: bool, depth: u32) {
        match stmt.kind_name() {
            "function_definition" => self.run_def(stmt, flow, strong, false),
            "class_definition" => self.run_class(stmt, flow, strong),
            "decorated_definition" => {
                for child in named(stmt) {
                    match child.kind_name() {
                        "decorator" => self.check_tree(child, Some(flow), NodeCtx::ROOT),
                        "function_definition" => self.run_def(child, flow, strong, true),
                        _ => self.run_stmt(child, flow, strong, depth + 1),
                    }
                }
            }
            // tree-sitter's error recovery can wrap whole statements (`g = getattr; x = (1 +`)
            // in an `ERROR` node: they are run as statements, so that the names they bind
            // keep their values for the code after them (round 6 H18). A binding inside an
            // error may or may not happen (the recovery may have misread the text), so it is
            // weak: the name keeps its earlier values too.
            "ERROR" => {
                for child in named(stmt) {
                    self.run_stmt(child, flow, false, depth + 1);
                }
            }
            "if_statement" | "for_statement" | "while_statement" | "try_statement"
            | "with_statement" | "match_statement" => {
                let names: Vec<NameId> = self
                    .it
                    .names_bound_in(stmt)
                    .filter(|n| self.it.demands(*n))
                    .collect();
                for n in names {
                    self.seed_prebound(flow, n);
                    if let Some(g) = self.it.globals.get(n) {
                        let g = g.clone();
                        if let Some(slot) = flow.0.get_mut(n as usize) {
                            slot.join(&g);
                        }
                    }
                }
                self.run_parts(stmt, flow, depth);
            }
            _ => {
                self.check_tree(stmt, Some(flow), NodeCtx::ROOT);
                self.apply_bindings(stmt, flow, strong);
            }
        }
    }

    /// The pieces of a compound statement: headers checked, blocks run, bindings weak.
    fn run_parts(&mut self, node: Node<'t>, flow: &mut Bindings, depth: u32) {
        if node.kind_name() == "match_statement" {
            self.record_match(node);
        }
        // Names bound for sure while the statement's parts run (a `for` target in its body,
        // a walrus in a header), with their values from before it: inside, they are the new
        // values only (`for open in files: print(open)` reads no builtin: new-user N-10);
        // after it, either (a loop may run zero times).
        let mut restore: Vec<(NameId, VSet)> = Vec::new();
        if node.kind_name() == "for_statement" {
            if let Some(r) = node.field(F::Right) {
                self.check_tree(r, Some(flow), NodeCtx::ROOT);
                if let Some(l) = node.field(F::Left) {
                    self.check_tree(l, Some(flow), NodeCtx::STORE);
                    if self.binds_demanded(l) {
                        let v = elements(&self.it.eval(r, &Env::Flow(flow), 0));
                        self.save_slots(l, flow, &mut restore);
                        self.bind_flow(flow, l, &v, true);
                    }
                }
            }
        }
        for child in named(node) {
            if node.kind_name() == "for_statement"
                && (is_field(node, F::Left, child) || is_field(node, F::Right, child))
            {
                continue;
            }
            if node.kind_name() == "for_statement" && child.kind_name() == "else_clause" {
                // A loop's `else` also runs after zero iterations: the target's old value.
                Self::rejoin(flow, std::mem::take(&mut restore));
            }
            match child.kind_name() {
                "block" => self.run_block(child, flow, false, depth + 1),
                "elif_clause"
                | "else_clause"
                | "except_clause"
                | "except_group_clause"
                | "finally_clause"
                | "case_clause" => self.run_parts(child, flow, depth + 1),
                "ERROR" => self.run_stmt(child, flow, false, depth + 1),
                _ => {
                    self.check_tree(child, Some(flow), NodeCtx::ROOT);
                    if self.it.has_walrus {
                        for n in parse::walk(child) {
                            if let Some(name) = n
                                .field(F::Name)
                                .filter(|_| n.kind_name() == "named_expression")
                            {
                                self.save_slots(name, flow, &mut restore);
                            }
                        }
                    }
                    self.bind_walrus(child, flow, true);
                    if child.kind_name() == "with_clause" {
                        for n in parse::walk(child) {
                            if n.kind_name() == "as_pattern" {
                                if let Some(a) = n.field(F::Alias) {
                                    self.bind_flow(flow, a, &VSet::unknown(), false);
                                }
                            }
                        }
                    }
                }
            }
        }
        Self::rejoin(flow, restore);
    }

    /// Records the current value of every name `target` binds (once per name) for a later
    /// [`Self::rejoin`].
    fn save_slots(&self, target: Node<'t>, flow: &Bindings, saved: &mut Vec<(NameId, VSet)>) {
        for n in parse::walk(target) {
            if n.kind_name() != "identifier" {
                continue;
            }
            if let Some(id) = self.it.name_id(n) {
                if !saved.iter().any(|(s, _)| *s == id) {
                    let v = flow.0.get(id as usize).cloned().unwrap_or_default();
                    saved.push((id, v));
                }
            }
        }
    }

    /// Joins the values saved by [`Self::save_slots`] back in: after the statement the names
    /// may still hold them.
    fn rejoin(flow: &mut Bindings, saved: Vec<(NameId, VSet)>) {
        for (id, v) in saved {
            if let Some(slot) = flow.0.get_mut(id as usize) {
                slot.join(&v);
            }
        }
    }

    fn run_def(&mut self, def: Node<'t>, flow: &mut Bindings, strong: bool, decorated: bool) {
        self.check_def_name(def);
        if self.it.is_hot(def) {
            self.check_generator_cleanup(def);
        }
        if let Some(p) = def.field(F::Parameters) {
            self.check_tree(p, Some(flow), NodeCtx::ROOT);
        }
        if let Some(r) = def.field(F::ReturnType) {
            self.check_tree(r, Some(flow), NodeCtx::ROOT);
        }
        if let Some(b) = def.field(F::Body) {
            self.check_tree(b, None, NodeCtx::ROOT);
        }
        if let (Some(name), Some(id)) =
            (def.field(F::Name), self.it.func_ids.get(&def.id()).copied())
        {
            let mut v = VSet::one(Val::Func(id));
            if decorated {
                v.push(Val::Unknown);
            }
            self.bind_flow(flow, name, &v, strong);
        }
    }

    fn run_class(&mut self, class: Node<'t>, flow: &mut Bindings, strong: bool) {
        if let Some(s) = class.field(F::Superclasses) {
            self.check_tree(s, Some(flow), NodeCtx::ROOT);
        }
        self.check_class_base_overrides(class, &Env::Flow(flow));
        self.check_generic_parametrizations(class);
        if let Some(b) = class.field(F::Body) {
            self.check_tree(b, None, NodeCtx::CLASS_BODY);
            self.check_class_bindings(b);
        }
        if let Some(name) = class.field(F::Name) {
            let v = self.it.class_value(class);
            self.bind_flow(flow, name, &v, strong);
        }
    }

    /// SBX009 for every dunder name a class body binds, whatever the binding form: assignment
    /// targets of any shape (`[__del__] = [f]`, `__del__, x = f, 1`, `(__hash__) = ...`),
    /// augmented assignments, `for` targets, walrus, `match` captures, `with ... as`, `import
    /// ... as` and nested classes. Plain assignments of constants (`__hash__ = None`,
    /// `__slots__ = ("a",)`) and data dunders (`__slots__`, `__doc__`, ...) are not methods.
    fn check_class_bindings(&mut self, body: Node<'t>) {
        // Parent and grandparent kinds travel with the nodes (`parent()` rescans from the root).
        let mut stack: Vec<(Node<'t>, u32, &'static str, &'static str)> = named(body)
            .into_iter()
            .map(|n| (n, 0, "block", "class_definition"))
            .collect();
        let mut bound: Vec<(Node<'t>, &'static str)> = Vec::new();
        while let Some((n, depth, pk, gk)) = stack.pop() {
            if depth > 200 {
                continue;
            }
            let mut descend = true;
            match n.kind() {
                // Their own scopes (a method's name is checked as a definition).
                "function_definition"
                | "lambda"
                | "list_comprehension"
                | "set_comprehension"
                | "dictionary_comprehension"
                | "generator_expression" => descend = false,
                "decorated_definition" => {
                    descend = n
                        .field(F::Definition)
                        .is_some_and(|d| d.kind() == "class_definition");
                    if descend {
                        stack.extend(
                            n.field(F::Definition)
                                .into_iter()
                                .map(|d| (d, depth + 1, n.kind(), pk)),
                        );
                        descend = false;
                    }
                }
                "class_definition" => {
                    if let Some(name) = n.field(F::Name) {
                        bound.push((name, "a nested class"));
                    }
                    descend = false;
                }
                // The class namespace's annotations dict read by name: `dataclass(C)` pastes
                // its keys into the source of the `__init__` it `exec`s (round 6 S6-26).
                "identifier" if ident(n, self.it.src) == "__annotations__" => {
                    self.report(
                        &DUNDER_ACCESS,
                        parse::range(n),
                        "Use of the class body's `__annotations__` dict: `dataclasses.dataclass` pastes its keys, as field names, into the `__init__` source it executes".into(),
                        Some("Declare fields with annotations (`x: int`)".into()),
                    );
                }
                "assignment" => {
                    if let Some(l) = n.field(F::Left) {
                        // `__module__ = "os"`: `typing.get_type_hints` and pydantic resolve the
                        // class's string annotations in `sys.modules[__module__]` (round 6
                        // S6-27: `x: "system"` is then `os.system`).
                        if l.kind() == "identifier" && ident(l, self.it.src) == "__module__" {
                            self.report(
                                &DUNDER_ACCESS,
                                parse::range(l),
                                "Binding `__module__` in a class body: `typing.get_type_hints` and pydantic resolve the class's string annotations in the globals of the module it names (`sys.modules[__module__]`)".into(),
                                Some("Leave `__module__` to Python".into()),
                            );
                        }
                        let constant = n.field(F::Right).is_none_or(constant_value);
                        if !(constant && l.kind() == "identifier") {
                            let how = if constant {
                                "an unpacking assignment"
                            } else {
                                "an assignment"
                            };
                            for t in target_names(l) {
                                bound.push((t, how));
                            }
                        }
                    }
                }
                "augmented_assignment" => {
                    if let Some(l) = n.field(F::Left) {
                        for t in target_names(l) {
                            bound.push((t, "an augmented assignment"));
                        }
                    }
                }
                "for_statement" => {
                    if let Some(l) = n.field(F::Left) {
                        for t in target_names(l) {
                            bound.push((t, "a `for` target"));
                        }
                    }
                }
                "named_expression" => {
                    if let Some(name) = n.field(F::Name) {
                        bound.push((name, "an assignment expression"));
                    }
                }
                "as_pattern" => {
                    let in_except = matches!(pk, "except_clause" | "except_group_clause");
                    if !in_except {
                        if let Some(a) = n.field(F::Alias) {
                            for t in target_names(a) {
                                bound.push((t, "an `as` target"));
                            }
                        } else if let Some(a) =
                            named(n).into_iter().last().filter(|_| pk == "case_pattern")
                        {
                            // A `match` as-pattern (`case object() as __del__:`) has no
                            // `alias` field: its name is the last child.
                            bound.push((a, "a `match` as-pattern"));
                        }
                    }
                }
                "aliased_import" => {
                    if let Some(a) = n.field(F::Alias) {
                        bound.push((a, "an import"));
                    }
                    descend = false;
                }
                "import_from_statement" => {
                    let mut c = n.walk();
                    for name in n.children_by_field_name("name", &mut c) {
                        if name.kind() == "dotted_name" {
                            if let Some(first) = first_named(name) {
                                bound.push((first, "an import"));
                            }
                        }
                    }
                    // Aliases are handled as children.
                }
                "identifier" => {
                    // A capture pattern: `case __del__:`, `case [__del__]`, `case C(a=__del__)`.
                    let capture = (pk == "dotted_name"
                        && matches!(
                            gk,
                            "case_pattern"
                                | "class_pattern"
                                | "keyword_pattern"
                                | "union_pattern"
                                | "list_pattern"
                                | "tuple_pattern"
                                | "dict_pattern"
                                | "as_pattern"
                        ))
                        || pk == "splat_pattern";
                    if capture {
                        bound.push((n, "a `match` capture"));
                    }
                    descend = false;
                }
                _ => {}
            }
            if descend {
                let k = n.kind();
                stack.extend(named(n).into_iter().map(|c| (c, depth + 1, k, pk)));
            }
        }
        for (t, how) in bound {
            if t.kind() != "identifier" {
                continue;
            }
            let name = ident(t, self.it.src).into_owned();
            if is_dunder(&name)
                && !ALLOWED_DUNDER_METHODS.contains(&name.as_str())
                && !DATA_DUNDERS.contains(&name.as_str())
            {
                self.report(
                    &DUNDER_METHOD_DEFINITION,
                    parse::range(t),
                    format!("Class body binds dunder method `{name}` through {how}"),
                    Some(dunder_method_help()),
                );
            }
        }
    }

    /// True when walrus `w` (under `top`) may not run when `top` runs: it sits in the right
    /// operand of `and`/`or`, in a conditional expression, a comprehension or a lambda.
    fn walrus_conditional(&self, w: Node<'t>, top: Node<'t>) -> bool {
        let mut child = w;
        let mut depth = 0;
        while let Some(p) = self.it.parent(child) {
            if child.id() == top.id() || depth > 200 {
                break;
            }
            match p.kind_name() {
                "boolean_operator" if p.field(F::Right).is_some_and(|r| r.id() == child.id()) => {
                    return true
                }
                // A branch (not the condition, which always runs: `a if (x := f()) else b`).
                "conditional_expression"
                    if named(p).get(1).is_none_or(|c| c.id() != child.id()) =>
                {
                    return true;
                }
                "list_comprehension"
                | "set_comprehension"
                | "dictionary_comprehension"
                | "generator_expression"
                | "lambda" => return true,
                _ => {}
            }
            child = p;
            depth += 1;
        }
        false
    }

    /// Binds the walrus targets in `node`: strongly when `strong` and the walrus always runs
    /// when `node` does, else weakly.
    fn bind_walrus(&mut self, node: Node<'t>, flow: &mut Bindings, strong: bool) {
        if !self.it.has_walrus {
            return;
        }
        for n in parse::walk(node) {
            if n.kind_name() == "named_expression" {
                if let (Some(name), Some(value)) = (n.field(F::Name), n.field(F::Value)) {
                    if self.binds_demanded(name) {
                        // `x = 0 and (json := {})`: a walrus that may not run leaves the
                        // pre-bound value (round 5 H27).
                        let conditional = self.walrus_conditional(n, node);
                        if conditional {
                            if let Some(id) = self.it.name_id(name) {
                                self.seed_prebound(flow, id);
                            }
                        }
                        let v = self.it.eval(value, &Env::Flow(flow), 0);
                        self.bind_flow(flow, name, &v, strong && !conditional);
                    }
                }
            }
        }
    }

    fn apply_bindings(&mut self, stmt: Node<'t>, flow: &mut Bindings, strong: bool) {
        self.bind_walrus(stmt, flow, false);
        match stmt.kind_name() {
            "expression_statement" => {
                for e in named(stmt) {
                    match e.kind_name() {
                        "assignment" => {
                            // `a = b = v` binds both targets to `v`.
                            let mut targets = Vec::new();
                            let mut cur = e;
                            let value = loop {
                                if let Some(l) = cur.field(F::Left) {
                                    targets.push(l);
                                }
                                match cur.field(F::Right) {
                                    Some(r) if r.kind_name() == "assignment" => cur = r,
                                    Some(r) => break Some(r),
                                    None => break None,
                                }
                            };
                            let Some(value) = value else { continue };
                            if !targets.iter().any(|t| self.binds_demanded(*t)) {
                                continue;
                            }
                            let v = self.it.eval(value, &Env::Flow(flow), 0);
                            for t in targets {
                                self.bind_flow(flow, t, &v, strong);
                            }
                        }
                        "augmented_assignment" => {
                            if let (Some(l), Some(r)) = (e.field(F::Left), e.field(F::Right)) {
                                if l.kind_name() == "identifier" && self.binds_demanded(l) {
                                    let v = self.it.eval_augmented(e, l, r, &Env::Flow(flow), 0);
                                    self.bind_flow(flow, l, &v, strong);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            // `del x`: the name is the builtin or host value again (round 7 S7-22).
            "delete_statement" => {
                for t in super::interp::deleted_names(stmt) {
                    let name = ident(t, self.it.src);
                    let Some(id) = self.it.names.get(&name) else {
                        continue;
                    };
                    if !self.it.demands(id) {
                        continue;
                    }
                    let v = self.it.default_value(&name);
                    let slot = &mut flow.0[id as usize];
                    if strong {
                        *slot = v;
                    } else {
                        slot.join(&v);
                    }
                }
            }
            "import_statement" | "import_from_statement" => {
                for (name, v, _) in self.it.import_bindings(stmt) {
                    let Some(id) = self.it.names.get(&name) else {
                        continue;
                    };
                    if !self.it.demands(id) {
                        continue;
                    }
                    let slot = &mut flow.0[id as usize];
                    if strong {
                        *slot = v;
                    } else {
                        slot.join(&v);
                    }
                }
            }
            _ => {}
        }
    }

    // ---- expression walk --------------------------------------------------------------------

    /// Checks every hot node under `node` (no rule can fire elsewhere, see `scan`). `flow` is
    /// the top-level environment, or `None` for the merged one; lambdas, comprehensions, function
    /// and class bodies always use the merged one.
    fn check_tree(&mut self, node: Node<'t>, flow: Option<&Bindings>, start: NodeCtx) {
        // The environment is fixed for the whole walk: evaluations can be cached.
        self.it.start_memo();
        if !self.it.is_hot(node) {
            return;
        }
        // The hot nodes in pre-order, with their environment and context.
        let mut order: Vec<(Node<'t>, K, bool, NodeCtx)> = Vec::new();
        // Children come from the cell's node table when it holds `node` (plain array reads),
        // from the tree otherwise; `NO_ID` marks a node read from the tree.
        const NO_ID: usize = usize::MAX;
        let table = self.it.table();
        let root_id = table.and_then(|t| t.id_of(node)).unwrap_or(NO_ID);
        let mut stack: Vec<(Node<'t>, K, bool, NodeCtx, usize)> =
            vec![(node, kind(node), flow.is_none(), start, root_id)];
        while let Some((n, nk, global, nctx, id)) = stack.pop() {
            order.push((n, nk, global, nctx));
            let inner_global = global
                || matches!(
                    nk,
                    K::Lambda
                        | K::ListComprehension
                        | K::GeneratorExpression
                        | K::SetComprehension
                        | K::DictionaryComprehension
                        | K::FunctionDefinition
                        | K::ClassDefinition
                );
            let with_field = needs_field(nk);
            let first = stack.len();
            match table.filter(|_| id != NO_ID) {
                Some(t) => {
                    for cid in t.children(id) {
                        let c = t.node(cid);
                        if t.is_named(cid) && self.it.is_hot(c) {
                            let ck = kind(c);
                            if ck != K::Comment {
                                let field = if with_field { t.field(cid) } else { None };
                                let cctx = child_ctx(nk, &nctx, ck, field);
                                stack.push((c, ck, inner_global, cctx, cid));
                            }
                        }
                    }
                }
                None => {
                    let mut kids = Children::new(n);
                    while let Some((c, field)) = kids.next(with_field) {
                        if c.is_named() && self.it.is_hot(c) {
                            let ck = kind(c);
                            if ck != K::Comment {
                                let cctx = child_ctx(nk, &nctx, ck, field);
                                stack.push((c, ck, inner_global, cctx, NO_ID));
                            }
                        }
                    }
                }
            }
            stack[first..].reverse();
        }
        let env_of = |global: bool| match (global, flow) {
            (false, Some(f)) => Env::Flow(f),
            _ => Env::Global,
        };
        // Evaluate bottom-up first, so that every evaluation finds its operands cached and long
        // chains cost one step per node.
        for (n, nk, global, _) in order.iter().rev() {
            if matches!(
                nk,
                K::Attribute
                    | K::Call
                    | K::Subscript
                    | K::BinaryOperator
                    | K::ParenthesizedExpression
                    | K::BooleanOperator
                    | K::ConditionalExpression
                    | K::UnaryOperator
            ) {
                self.it.eval(*n, &env_of(*global), 0);
            }
        }
        for (n, nk, global, nctx) in order {
            self.check_node(n, nk, &env_of(global), &nctx);
        }
    }

    fn check_node(&mut self, node: Node<'t>, nk: K, env: &Env, nctx: &NodeCtx) {
        match nk {
            K::Identifier => self.check_identifier(node, env, nctx),
            K::Attribute => self.check_attribute(node, env, nctx),
            K::Subscript => self.check_subscript(node, env, nctx),
            K::Call => {
                self.check_call(node, env, nctx);
                self.check_namespace_update(node, env);
            }
            K::FunctionDefinition => {
                self.check_def_name(node);
                self.check_generator_cleanup(node);
            }
            K::ClassDefinition => {
                self.check_class_base_overrides(node, env);
                self.check_generic_parametrizations(node);
            }
            K::Type => {
                // A string annotation is evaluated as code by `typing.get_type_hints`,
                // `typing.ForwardRef`, pydantic and `functools.singledispatch().register`.
                if let Some(a) = first_named(node) {
                    self.check_type_expression(
                        a,
                        env,
                        "a string annotation, which `typing.get_type_hints`, pydantic and `functools.singledispatch` evaluate",
                    );
                }
            }
            K::Assignment => self.check_assignment(node, env, nctx),
            K::AugmentedAssignment => self.check_inplace_alias(node, env),
            K::List | K::Tuple | K::Set if nctx.ctx == Ctx::Load => {
                for item in named(node) {
                    self.check_escape(item, env, "stored in a container");
                }
            }
            K::Dictionary => {
                for pair in named(node) {
                    if let (Some(k), Some(v)) = (pair.field(F::Key), pair.field(F::Value)) {
                        let keys: Vec<String> =
                            self.it.eval(k, env, 0).strs().map(str::to_string).collect();
                        for key in keys {
                            self.check_computed_alias(&key, v, env);
                        }
                    }
                }
                for pair in named(node) {
                    for f in [F::Key, F::Value] {
                        if let Some(x) = pair.field(f) {
                            self.check_escape(x, env, "stored in a container");
                        }
                    }
                }
            }
            K::Yield => {
                if let Some(e) = first_named(node) {
                    self.check_escape(e, env, "yielded");
                }
            }
            K::KeywordPattern => {
                if let Some(n) = first_named(node) {
                    let name = ident(n, self.it.src).into_owned();
                    let name = &*name;
                    if is_dunder(name) && !BENIGN_DUNDER_READS.contains(&name) {
                        self.report(
                            &DUNDER_ACCESS,
                            parse::range(n),
                            format!("Class pattern reads dunder attribute `{name}`"),
                            Some("A keyword in a class pattern is an attribute read (`getattr(subject, name)`)".into()),
                        );
                    }
                    if FRAME_ATTRS.contains(&name) {
                        self.report(
                            &FRAME_WALK,
                            parse::range(n),
                            format!("Class pattern reads frame attribute `{name}`: frames expose the globals and builtins of the code that runs the cell"),
                            None,
                        );
                    }
                    // `case C(name=p)` reads `subject.name`: the same checks as an attribute.
                    let (subject, shown) = self.pattern_subject(node, env);
                    self.attr_findings(&subject, name, parse::range(n), &shown);
                }
            }
            K::ClassPattern => self.check_positional_patterns(node, env),
            K::DottedName if nctx.pattern && named(node).len() > 1 => {
                self.check_pattern_name(node, env);
            }
            K::MatchStatement => self.record_match(node),
            K::Error => self.check_error_region(node, env),
            K::ReturnStatement => {
                if let Some(e) = first_named(node) {
                    self.check_escape(e, env, "returned from a function");
                }
            }
            K::ImportStatement | K::ImportFromStatement => self.check_import(node),
            K::ExecStatement => self.report(
                &CODE_EXECUTION_BUILTIN,
                parse::range(node),
                "`exec` statement executes arbitrary code".into(),
                None,
            ),
            _ => {}
        }
    }

    // ---- names ------------------------------------------------------------------------------

    fn check_identifier(&mut self, node: Node<'t>, env: &Env, nctx: &NodeCtx) {
        if nctx.ctx == Ctx::Del {
            self.check_deleted_name(node);
            return;
        }
        // A plain name holds no builtin or module (and `__loader__` is not plain).
        if !nctx.is_load() || !self.it.is_obj_hot(node) {
            return;
        }
        let name = ident(node, self.it.src);
        let name = &*name;
        if matches!(name, "__loader__" | "__spec__") {
            self.report(
                &DYNAMIC_IMPORT,
                parse::range(node),
                format!("`{name}` exposes the import machinery (`{name}.load_module`)"),
                None,
            );
            return;
        }
        self.check_host_state(node);
        let v = self.it.lookup(name, env);
        self.builtin_refs(node, &v, name, nctx.callee);
        if matches!(name, "__builtins__" | "__builtin__")
            && v.iter()
                .any(|x| matches!(x, Val::Module(m) if &*m.real == "builtins"))
        {
            self.report(
                &CODE_EXECUTION_BUILTIN,
                parse::range(node),
                format!("`{name}` is the builtins module: it hands out `eval`, `exec`, `open` and `__import__`"),
                Some("IPython binds `__builtin__` in the REPL namespace (colony-reference §2.7)".into()),
            );
        } else if !matches!(name, "__builtins__" | "__builtin__")
            && v.iter().any(
                |x| matches!(x, Val::Module(m) if &*m.real == "builtins" && &*m.path == "builtins"),
            )
            && !v
                .iter()
                .any(|x| matches!(x, Val::Module(m) if matches!(m.state, ModState::Ok | ModState::Parent)))
        {
            self.report(
                &CODE_EXECUTION_BUILTIN,
                parse::range(node),
                format!("`{name}` is the builtins module: it hands out `eval`, `exec`, `open` and `__import__`"),
                None,
            );
        }
        // The parent of an allowed submodule (`import os.path` binds `os`) used as a value
        // other than the object of an attribute or a plain alias (`[os]`, `f(os)`,
        // `next(iter((os,)))`): once inside a container or a call, its attributes are
        // attributes of an unknown receiver, and `m.getcwd()` is no longer seen.
        let parent_mod: Option<std::rc::Rc<ModVal>> = v.iter().find_map(|x| match x {
            Val::Module(m) if m.state == ModState::Parent => Some(m.clone()),
            _ => None,
        });
        if let Some(m) = parent_mod {
            let parent = self.it.parent(node);
            let benign = parent.is_some_and(|p| match p.kind_name() {
                "attribute" => p.field(F::Object).is_some_and(|o| o.id() == node.id()),
                "assignment" => p.field(F::Right).is_some_and(|r| r.id() == node.id()),
                "import_statement" | "import_from_statement" | "aliased_import" | "dotted_name" => {
                    true
                }
                _ => false,
            });
            if !benign {
                self.report(
                    &MODULE_ESCAPE,
                    parse::range(node),
                    format!("`{name}` is module `{}`, the parent of an allowed submodule, used as a value: its attributes (`getcwd`, `environ`, `system`) leave the allowlist wherever the value goes", m.real),
                    Some("Only the allowed submodule may be used: `import os.path` allows `os.path.join(...)`, not `os` itself".into()),
                );
            }
        }
    }

    /// True when the binding (or `del`) of `name` at `n` is in the cell's module scope: not in a
    /// class body, lambda or comprehension, and inside a function only under `global name`.
    fn binds_at_module_scope(&self, n: Node<'t>, name: &str) -> bool {
        let src = self.it.src;
        // A walrus target in a comprehension binds in the scope around the comprehension
        // (PEP 572): `[(__package__ := "os") for _ in [0]]` at the top level binds the
        // module's `__package__` (round 9 S9-1).
        let walrus = self.it.parent(n).is_some_and(|p| {
            p.kind_name() == "named_expression"
                && p.field(F::Name).is_some_and(|c| c.id() == n.id())
        });
        let mut cur = n;
        while let Some(p) = self.it.parent(cur) {
            match p.kind_name() {
                "list_comprehension"
                | "set_comprehension"
                | "dictionary_comprehension"
                | "generator_expression"
                    if walrus =>
                {
                    cur = p
                }
                "class_definition"
                | "lambda"
                | "list_comprehension"
                | "set_comprehension"
                | "dictionary_comprehension"
                | "generator_expression" => return false,
                "function_definition" => {
                    return self.it.walk(p).any(|g| {
                        g.kind_name() == "global_statement"
                            && named(g).iter().any(|x| ident(*x, src) == name)
                    })
                }
                _ => cur = p,
            }
        }
        true
    }

    /// `del name` (round 7 S7-22). Deleting `__builtins__` from the cell's globals makes
    /// CPython hand the host's full builtins module to the next `exec` on the same globals
    /// (Colony's next cell, `exec(code, globals())`): `exec` puts `__builtins__` back from the
    /// caller's frame. Deleting a name whose value before the cell is a dangerous builtin
    /// (`eval`, `getattr`, `__import__`) or a builtin the host namespace shadows (`del open`
    /// when the namespace binds its own `open`) makes every later use, in this cell and the
    /// next, the builtin itself.
    fn check_deleted_name(&mut self, node: Node<'t>) {
        let name = ident(node, self.it.src);
        let name = &*name;
        if name == "__builtins__" {
            self.report(
                &CODE_EXECUTION_BUILTIN,
                parse::range(node),
                format!("Deleting `{name}`: the next `exec` on these globals (the next cell) puts the host's full builtins module back, with `eval`, `exec`, `open` and `__import__`"),
                Some("A restricted namespace is only as strong as its `__builtins__` entry; leave it alone".into()),
            );
            return;
        }
        let Some(b) = super::interp::builtin(name) else {
            return;
        };
        // A function's (or class body's) own local: deleting it unbinds nothing the rest of
        // the cell or the next one sees.
        if !self.binds_at_module_scope(node, name) {
            return;
        }
        let dangerous = EXEC_BUILTINS.contains(&b)
            || REFLECTIVE.contains(&b)
            || matches!(b, "__import__" | "__build_class__");
        let shadowed = self.namespace_names.contains(name);
        if dangerous || shadowed {
            self.report(
                &CODE_EXECUTION_BUILTIN,
                parse::range(node),
                format!("`del {name}` unbinds `{name}`: later uses, in this cell and the next, reach the builtin `{b}`{}", if shadowed { " instead of the namespace's own" } else { "" }),
                Some("Bind the name to something else instead of deleting it".into()),
            );
        }
    }

    /// Reports dangerous builtins a node's value may be (value-based: aliases included).
    fn builtin_refs(&mut self, node: Node<'t>, v: &VSet, text: &str, callee: bool) {
        for b in v.builtins().collect::<Vec<_>>() {
            let via = if text == b {
                format!("`{b}`")
            } else {
                format!("`{}` is `{b}`, which", short(text))
            };
            match b {
                "__import__" if !callee || node.kind_name() != "identifier" || text != b => self
                    .report(
                        &DYNAMIC_IMPORT,
                        parse::range(node),
                        format!("{via} imports any module by name, bypassing the import allowlist"),
                        None,
                    ),
                "__build_class__" => self.report(
                    &DUNDER_ACCESS,
                    parse::range(node),
                    format!("{via} builds classes without a `class` statement"),
                    None,
                ),
                "input" if callee => {
                    self.report(
                            &CODE_EXECUTION_BUILTIN,
                            parse::range(node),
                            format!("{via} reads the host's standard input: the cell blocks or reads what it should not"),
                            None,
                        );
                }
                "input" => {}
                b if EXEC_BUILTINS.contains(&b) => self.report(
                    &CODE_EXECUTION_BUILTIN,
                    parse::range(node),
                    format!("{via} {}", exec_reason(b)),
                    exec_help(b),
                ),
                _ => {}
            }
        }
    }

    /// SBX004 for a `getattr`-like builtin (or an alias of one) standing loose in an `ERROR`
    /// node: tree-sitter's error recovery lost the syntax around it (`mod = ga(re, "_x")` read
    /// as a call of `mod` with `ga` in an error), so cellguard cannot tell what it is applied to
    /// or which attribute it reaches (round 6 H18).
    fn check_error_region(&mut self, node: Node<'t>, env: &Env) {
        for c in named(node) {
            if c.kind_name() != "identifier" {
                continue;
            }
            // The name a lost binding binds (`ga = getattr` read as loose tokens) is bound,
            // not used: its uses are checked where they are.
            let mut after = c;
            let eq = loop {
                match after.next_sibling() {
                    Some(n) => break Some(n),
                    None => match after.parent() {
                        Some(p) => after = p,
                        None => break None,
                    },
                }
            };
            let bound_here = eq
                .and_then(super::scan::loose_binding)
                .is_some_and(|(t, _)| t.id() == c.id());
            if bound_here {
                continue;
            }
            let v = self.it.eval(c, env, 0);
            let text = self.text(c);
            for b in v.builtins().filter(|b| REFLECTIVE.contains(b)) {
                let via = if text == b {
                    format!("`{b}`")
                } else {
                    format!("`{}` is `{b}`, which", short(text))
                };
                self.report(
                    &DYNAMIC_ATTRIBUTE_ACCESS,
                    parse::range(c),
                    format!("{via} stands in a part of the cell tree-sitter could not parse: cellguard cannot tell which attribute it reaches"),
                    Some("Fix the syntax error so the cell can be checked".into()),
                );
            }
        }
    }

    // ---- attributes -------------------------------------------------------------------------

    /// True when the cell defines `len` itself (round 5 H30: `len = lambda t: t.clear()`).
    fn len_rebound(&self) -> bool {
        self.root.is_some_and(|r| {
            super::containers::cell_binds(self.it.nav(), r, self.it.src, "len", true)
        })
    }

    /// SBX005 for a use of a name the host pre-binds for its own bookkeeping
    /// ([`HOST_STATE_NAMES`]) other than `len(...)` of it.
    fn check_host_state(&mut self, node: Node<'t>) {
        if node.kind_name() != "identifier" {
            return;
        }
        let name = ident(node, self.it.src).into_owned();
        if HOST_STATE_NAMES.contains(&name.as_str())
            && self.namespace_names.contains(&name)
            && self.prebound_kept(&name)
            && (!is_len_argument(node, self.it.src) || self.len_rebound())
        {
            self.report(
                &MODULE_ESCAPE,
                parse::range(node),
                format!("`{name}` is the host's own record of the actions the cell ran (Colony copies it into the action result's metadata, which traces and audits read): the cell can erase or forge it"),
                Some("Read only its length (`len(...)`); keep your own list of what the cell did".into()),
            );
        }
    }

    fn check_attribute(&mut self, node: Node<'t>, env: &Env, nctx: &NodeCtx) {
        let (Some(obj), Some(attr)) = (node.field(F::Object), node.field(F::Attribute)) else {
            return;
        };
        self.check_host_state(unparen(obj));
        let name = ident(attr, self.it.src);
        let name = &*name;
        let ctx = nctx.ctx;
        let arange = parse::range(attr);
        // Calling `__init__`, `__repr__` or `__str__` directly (`super().__init__(...)`) is
        // ordinary code (smolagents' `ALLOWED_DUNDER_METHODS`).
        let allowed_call =
            ctx == Ctx::Load && ALLOWED_DUNDER_METHODS.contains(&name) && nctx.callee;
        // `e.__class__.__name__` is `type(e).__name__`: a string (FP1, round 4).
        let class_name = name == "__class__"
            && ctx == Ctx::Load
            && !nctx.callee
            && class_name_only(node, self.it.src);
        // `object.__setattr__(self, "field", v)` in a method of the cell's own class: the
        // documented way to set a field of a frozen dataclass (round 6 S6-25).
        let own_field_store = name == "__setattr__"
            && ctx == Ctx::Load
            && nctx.callee
            && self.own_field_setattr(node, obj, env);
        if is_dunder(name)
            && !allowed_call
            && !class_name
            && !own_field_store
            && (ctx != Ctx::Load || !BENIGN_DUNDER_READS.contains(&name))
        {
            let what = match ctx {
                Ctx::Load => "Read of",
                Ctx::Store => "Assignment to",
                Ctx::Del => "Deletion of",
                Ctx::Aug => "Augmented assignment to",
            };
            self.report(
                &DUNDER_ACCESS,
                arange,
                format!("{what} dunder attribute `{name}`"),
                dunder_help(name),
            );
        }
        // A coroutine driven by hand (`c = f(); c.send(None)`, `map(c.send, [None])`): it
        // hands out what its innermost `await` suspended on, the host's own future under
        // `run(...)` (whose `get_loop()` is the host's event loop), and one left suspended runs
        // its `finally`/`except` clauses when the host's garbage collector closes it.
        if ctx == Ctx::Load
            && matches!(name, "send" | "throw")
            && self.it.eval(obj, env, 0).iter().any(is_coroutine)
        {
            self.report(
                &DUNDER_METHOD_DEFINITION,
                arange,
                format!("`.{name}` drives a coroutine by hand: it hands out what the coroutine awaits (the host's own future under `run(...)`), and a coroutine left suspended runs its cleanup in the host after the cell"),
                Some("`await` the coroutine instead".into()),
            );
        }
        if ctx == Ctx::Load
            && matches!(
                name,
                "load_module" | "exec_module" | "find_module" | "create_module"
            )
        {
            self.report(
                &DYNAMIC_IMPORT,
                arange,
                format!("`{name}` is import machinery: it loads modules by name, bypassing the import allowlist"),
                Some("`BuiltinImporter().load_module(\"os\")` is reached from the class hierarchy (smolagents PR #861)".into()),
            );
        }
        // `R = type("R", (dict,), {}); R.items = spy`, `class R(dict): ...; R.items = spy`,
        // `r = R(); r.items = spy`: the same override as putting it in the class body
        // (round 5 H3(b), round 6).
        if ctx == Ctx::Store {
            let value = self
                .it
                .parent(node)
                .filter(|a| a.kind_name() == "assignment" && is_field(*a, F::Left, node))
                .and_then(|a| a.field(F::Right));
            self.check_base_method_store(obj, &[(name.to_string(), arange)], value, env);
        }
        // A mutating method of host state taken as a value (H23).
        if ctx == Ctx::Load && !nctx.callee {
            self.check_host_mutator_call(node, env, true);
        }
        if FRAME_ATTRS.contains(&name) {
            self.report(
                &FRAME_WALK,
                arange,
                format!("`{name}` walks execution frames: frames expose the globals and builtins of the code that runs the cell"),
                None,
            );
        }
        let objv = match self.self_instance(obj) {
            Some(id) => VSet::one(Val::Inst(id)),
            None => self.narrowed_value(obj, env),
        };
        // A name bound by a `match` capture (`match [json, 0]: case [m, _]: m.dumps = f`).
        let objv = match unparen(obj) {
            o if o.kind_name() == "identifier" && objv.only_unknown() => {
                let n = ident(o, self.it.src).into_owned();
                self.capture_value(&n, env).unwrap_or(objv)
            }
            _ => objv,
        };
        // A private member of a pre-bound object or class (`ActionType._member_map_`,
        // `bb._store`): host internals, as `_private` module attributes are (G27).
        if name.starts_with('_') && !is_dunder(name) && objv.only_unknown() {
            let root = self.host_shared(obj, 0).filter(|r| {
                !HOST_DATA_NAMES.contains(&r.as_str()) && !HOST_STATE_NAMES.contains(&r.as_str())
            });
            if let Some(root) = root {
                let shown = short(self.text(obj));
                self.report(
                    &MODULE_ESCAPE,
                    arange,
                    format!("`{name}` is a private member of `{shown}`, which belongs to `{root}`, an object the host put in the namespace: the cell reaches (and can change) the host's internals"),
                    Some("Use the object's public API".into()),
                );
            }
        }
        if ctx != Ctx::Load {
            let verb = match ctx {
                Ctx::Del => "Deleting",
                Ctx::Aug => "Augmenting",
                _ => "Assigning",
            };
            // The value stored, when it is a plain `target = value` assignment.
            let stored = self
                .it
                .parent(node)
                .filter(|p| {
                    p.kind_name() == "assignment"
                        && p.field(F::Left).is_some_and(|l| l.id() == node.id())
                })
                .and_then(|p| p.field(F::Right))
                .map(|r| self.it.eval(r, env, 0));
            self.host_write(obj, &objv, name, verb, arange, stored.as_ref());
        }
        if objv.strs().next().is_some() && matches!(name, "format" | "format_map") {
            self.check_format(obj, &objv);
            // `f = tmpl.format`, `map(tmpl.format, xs)`, `partial(tmpl.format_map)`: the bound
            // method is called later with arguments cellguard cannot see, so the template's
            // fields are walked on unknown receivers.
            if !nctx.callee && ctx == Ctx::Load {
                let args = FormatArgs {
                    opaque: true,
                    ..FormatArgs::default()
                };
                self.check_format_fields(obj, &objv, &args);
            }
        }
        // A loop method on a receiver cellguard cannot resolve: the loop may have come
        // through a future, a queue, a task result or `gather` (see `is_denied_loop_method`).
        if ctx == Ctx::Load
            && objv.has_unknown()
            && !objv
                .iter()
                .any(|v| matches!(v, Val::Member(p) if p.starts_with("asyncio.")))
            && is_denied_loop_method(name, self.it.cfg.deny)
        {
            self.deny_check(&format!("{LOOP_PREFIX}{name}"), arange);
        }
        // A task method named literally in the deny list (`get_context`) on a receiver
        // cellguard cannot resolve: tasks pass through lists, `gather`, `wait` and callbacks
        // unseen (round 8 S8-14). A method a class of the cell declares is the cell's own.
        if ctx == Ctx::Load
            && objv.has_unknown()
            && !name.starts_with('_')
            && !objv
                .iter()
                .any(|v| matches!(v, Val::Member(_) | Val::Module(_)))
            && self
                .it
                .cfg
                .deny
                .iter()
                .any(|d| d.strip_prefix(TASK_PREFIX) == Some(name))
            && !self.it.classes.iter().any(|c| c.fields.contains(name))
        {
            self.deny_check(&format!("{TASK_PREFIX}{name}"), arange);
        }
        // A module laundered through a value flow cellguard does not follow (`A =
        // sorted([asyncio], key=id)[0]`): its private and denied attributes are checked as
        // the module's (round 5 H2, H12).
        if ctx == Ctx::Load
            && objv.only_unknown()
            && (is_private(name) || self.denied_last_segment(name))
        {
            self.laundered_at = None;
            if self.host_laundered(obj, 0).is_some() {
                if let Some(at) = self.laundered_at {
                    let v = self.it.eval(at, &Env::Global, 0);
                    for x in v.iter() {
                        match x {
                            Val::Module(m) => {
                                let (res, esc) = self.it.module_step(m, name);
                                self.module_findings(m, name, &res, esc, arange);
                            }
                            Val::Member(p) if !is_coroutine(x) => {
                                self.deny_check(&format!("{p}.{name}"), arange);
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
        if matches!(ctx, Ctx::Load | Ctx::Aug) {
            let shown = short(self.text(obj));
            self.attr_findings(&objv, name, arange, &shown);
        } else {
            self.attr_findings(&objv, name, arange, "");
        }
        if ctx == Ctx::Load && self.it.is_obj_hot(node) {
            let v = self.it.eval(node, env, 0);
            self.builtin_refs(node, &v, self.text(node), nctx.callee);
        }
    }

    /// For a generic class of the cell (`Generic[...]` or `RootModel` among its bases, as a
    /// generic pydantic model has), the parameters of every subscript of its name in the cell
    /// (`Box[s]`): pydantic evaluates them as type expressions when it builds the parametrized
    /// model (G8). Subscripts inside the class statement itself are left out.
    fn check_generic_parametrizations(&mut self, class: Node<'t>) {
        let generic = class.child_by_field_name("superclasses").is_some_and(|b| {
            let t = self.text(b);
            t.contains("Generic") || t.contains("RootModel")
        });
        let (true, Some(name)) = (generic, class.field(F::Name)) else {
            return;
        };
        let name = ident(name, self.it.src).into_owned();
        let (start, end) = (class.start_byte(), class.end_byte());
        let Some(index) = self.index() else { return };
        let subs: Vec<Node<'t>> = index
            .of_kinds(&["subscript"])
            .into_iter()
            .filter(|n| {
                (n.start_byte() >= end || n.end_byte() <= start)
                    && n.field(F::Value).map(unparen).is_some_and(|v| {
                        v.kind_name() == "identifier" && ident(v, self.it.src) == name
                    })
            })
            .collect();
        for n in subs {
            let mut c = n.walk();
            let items: Vec<Node<'t>> = n
                .children_by_field_name("subscript", &mut c)
                .flat_map(|x| {
                    if x.kind_name() == "tuple" {
                        named(x)
                    } else {
                        vec![x]
                    }
                })
                .collect();
            let label =
                format!("`{name}[...]`, which evaluates its parameters as type expressions");
            self.check_type_args(items, &Env::Global, &label, false);
        }
    }

    /// True when subscripting `value` (whose values are `vals`) parametrizes a class whose
    /// parameters are evaluated as types at once: pydantic's `RootModel` and a generic class of
    /// the cell (one with `Generic[...]` or `RootModel` among its bases, as a generic pydantic
    /// model has).
    fn type_subscript_evaluator(&mut self, value: Node<'t>, vals: &VSet) -> bool {
        let member = vals.iter().any(|v| {
            matches!(v, Val::Member(p) if p.starts_with("pydantic") && p.ends_with("RootModel"))
        });
        if member {
            return true;
        }
        let v = unparen(value);
        if v.kind_name() != "identifier" {
            return false;
        }
        if !vals.iter().any(|x| matches!(x, Val::Class(_))) {
            return false;
        }
        let name = ident(v, self.it.src).into_owned();
        let Some(index) = self.index() else {
            return false;
        };
        index.of_kinds(&["class_definition"]).into_iter().any(|n| {
            n.field(F::Name)
                .is_some_and(|c| ident(c, self.it.src) == name)
                && n.child_by_field_name("superclasses").is_some_and(|b| {
                    let t = self.text(b);
                    t.contains("Generic") || t.contains("RootModel")
                })
        })
    }

    /// What a name bound only by `match` capture patterns may hold: for each capture of it
    /// (`case [m, _]:`, `case [x] as m:`, `case m:`), the part of the subject at the capture's
    /// position in list and tuple patterns. `None` when the name has other bindings
    /// (assignments) or no capture; unknown for positions inside class, mapping or starred
    /// patterns. (Round 4 G33: a host module laundered through a capture.)
    fn capture_value(&mut self, name: &str, env: &Env) -> Option<VSet> {
        self.root?;
        if !self.assignments_of(name).is_empty() || !self.it.src.contains("case") {
            return None;
        }
        let mut out = VSet::default();
        for n in self.index()?.identifiers(&[name]) {
            let Some(p) = self.it.parent(n) else { continue };
            let pat = match p.kind_name() {
                "dotted_name"
                    if p.named_child_count() == 1
                        && self
                            .it
                            .parent(p)
                            .is_some_and(|g| g.kind_name() == "case_pattern") =>
                {
                    p
                }
                "as_pattern"
                    if p.named_children(&mut p.walk()).last().map(|l| l.id()) == Some(n.id()) =>
                {
                    p
                }
                "splat_pattern" => {
                    out.push(Val::Unknown);
                    continue;
                }
                _ => continue,
            };
            let v = self.pattern_position_value(pat, env);
            out.join(&v);
        }
        (!out.is_empty()).then_some(out)
    }

    /// The value the subject of the enclosing `match` has at pattern node `pat`'s position (see
    /// [`Self::capture_value`]).
    fn pattern_position_value(&mut self, pat: Node<'t>, env: &Env) -> VSet {
        let mut steps: Vec<(usize, usize)> = Vec::new();
        let mut cur = pat;
        let clause = loop {
            let Some(p) = self.it.parent(cur) else {
                return VSet::unknown();
            };
            match p.kind_name() {
                "case_pattern" | "as_pattern" | "union_pattern" | "dotted_name" => {}
                "list_pattern" | "tuple_pattern" | "case_clause" => {
                    let items: Vec<Node<'t>> = named(p)
                        .into_iter()
                        .filter(|c| c.kind_name() == "case_pattern")
                        .collect();
                    let starred = items.iter().any(|i| {
                        i.named_child(0)
                            .is_some_and(|c| c.kind_name() == "splat_pattern")
                    });
                    if p.kind_name() == "case_clause" && items.len() <= 1 {
                        break p;
                    }
                    let Some(i) = items.iter().position(|c| c.id() == cur.id()) else {
                        return VSet::unknown();
                    };
                    if starred {
                        return VSet::unknown();
                    }
                    steps.push((i, items.len()));
                    if p.kind_name() == "case_clause" {
                        break p;
                    }
                }
                _ => return VSet::unknown(),
            }
            cur = p;
        };
        let Some(ms) = self
            .it
            .parent(clause)
            .and_then(|b| self.it.parent(b))
            .filter(|m| m.kind_name() == "match_statement")
        else {
            return VSet::unknown();
        };
        let mut c = ms.walk();
        let subjects: Vec<Node<'t>> = ms.children_by_field_name("subject", &mut c).collect();
        let starred = subjects.iter().any(|s| self.text(*s).starts_with('*'));
        let mut v = match subjects.as_slice() {
            // `match *[json], 1:` (re-parsed with `~` for `*`, see `soft_keywords`): a tuple
            // of the starred sequences' elements and the other subjects.
            _ if starred => {
                let mut items = Vec::new();
                for s in &subjects {
                    if !self.text(*s).starts_with('*') {
                        items.push(self.it.eval(*s, env, 0));
                        continue;
                    }
                    // `*xs` is a `list_splat` to the grammar; `*[...]` was re-parsed as `~[...]`.
                    let operand = match s.kind_name() {
                        "unary_operator" => s.field(F::Argument),
                        _ => first_named(*s),
                    };
                    let inner = operand.map(|a| self.it.eval(a, env, 0));
                    let seq = inner.as_ref().and_then(|v| match v.iter().next() {
                        Some(x) if v.len() == 1 => super::value::as_sequence(x),
                        _ => None,
                    });
                    match seq {
                        Some(elems) => items.extend(elems.iter().cloned()),
                        None => return VSet::unknown(),
                    }
                }
                VSet::one(Val::seq(items))
            }
            [s] => {
                let s = *s;
                let v = self.it.eval(s, env, 0);
                // A list subject re-parsed with parentheses (`match [x]:`, see
                // `soft_keywords`) is still a list of its elements.
                if self.text(s).starts_with('[') && s.kind_name() != "list" {
                    match s.kind_name() {
                        "parenthesized_expression" => VSet::one(Val::seq(vec![v])),
                        "tuple" => v,
                        _ => VSet::unknown(),
                    }
                } else {
                    v
                }
            }
            many => VSet::one(Val::seq(
                many.iter().map(|s| self.it.eval(*s, env, 0)).collect(),
            )),
        };
        for (i, n) in steps.into_iter().rev() {
            v = component(&v, i, n);
        }
        v
    }

    /// True when `attr` (an `object.__setattr__` attribute, `object` the builtin) is the callee
    /// of `object.__setattr__(self, "name", value)`, `self` being an instance of a sealed cell
    /// class ([`Self::self_instance`]) and `name` a constant non-dunder attribute the class
    /// declares: that is `self.name = value` on the cell's own object, the way a frozen
    /// dataclass's `__post_init__` sets its fields (Python's `dataclasses` documentation).
    fn own_field_setattr(&mut self, attr: Node<'t>, obj: Node<'t>, env: &Env) -> bool {
        let Some(call) = self.it.parent(attr).filter(|c| {
            c.kind_name() == "call" && c.field(F::Function).is_some_and(|f| f.id() == attr.id())
        }) else {
            return false;
        };
        let (pos, kws, splat) = call_args(call.field(F::Arguments), self.it.src);
        if pos.len() != 3 || !kws.is_empty() || splat {
            return false;
        }
        let is_object = {
            let v = self.it.eval(obj, env, 0);
            !v.is_empty() && v.iter().all(|x| matches!(x, Val::Builtin("object")))
        };
        if !is_object {
            return false;
        }
        let names = self.it.eval(pos[1], env, 0);
        if names.has_unknown() || names.strs().next().is_none() {
            return false;
        }
        let Some(id) = self.self_instance(unparen(pos[0])) else {
            return false;
        };
        let Some(info) = self.it.classes.get(id as usize) else {
            return false;
        };
        let own = names
            .strs()
            .all(|n| !is_dunder(n) && info.fields.contains(n));
        own
    }

    /// The cell class whose instance `obj` is when `obj` is the first parameter (`self`) of an
    /// undecorated method defined directly in the body of a plain cell class
    /// ([`super::interp::ClassInfo::plain`]) that is sealed: the cell reads the class's name
    /// only to call it (`Device(...)`) or as the base of a class that is sealed too, and never
    /// reads `type`. The method can then only run bound to an instance of the class (a
    /// `Device.describe(json)` or `type(d).describe(m)` call would hand it anything), so
    /// `self.os` reads the field `os` the class declares (issue 4 round 3, false positive).
    fn self_instance(&mut self, obj: Node<'t>) -> Option<u32> {
        if obj.kind_name() != "identifier" {
            return None;
        }
        let src = self.it.src;
        let name = ident(obj, src);
        let mut cur = obj;
        let def = loop {
            let p = self.it.parent(cur)?;
            match p.kind_name() {
                "function_definition" => break p,
                "lambda" | "class_definition" => return None,
                _ => cur = p,
            }
        };
        let first = def.field(F::Parameters).and_then(first_named)?;
        if first.kind_name() != "identifier" || ident(first, src) != name {
            return None;
        }
        let class = self
            .it
            .parent(def)
            .filter(|b| b.kind_name() == "block")
            .and_then(|b| self.it.parent(b))
            .filter(|c| c.kind_name() == "class_definition")?;
        let id = *self.it.class_ids.get(&class.id())?;
        if !self.it.classes.get(id as usize)?.plain || !self.sealed(class, 0) {
            return None;
        }
        Some(id)
    }

    /// True when the cell uses class `class`'s name only as a callee or as the base of a class
    /// that is itself sealed, and never reads the name `type` (see [`Self::self_instance`]).
    fn sealed(&mut self, class: Node<'t>, depth: u32) -> bool {
        if let Some(&b) = self.sealed_memo.get(&class.id()) {
            return b;
        }
        let b = self.sealed_uncached(class, depth);
        self.sealed_memo.insert(class.id(), b);
        b
    }

    fn sealed_uncached(&mut self, class: Node<'t>, depth: u32) -> bool {
        let src = self.it.src;
        let (Some(index), Some(cname)) = (self.index(), class.field(F::Name)) else {
            return false;
        };
        if depth > 8 {
            return false;
        }
        let cname = ident(cname, src);
        // `typing.get_origin(typing.Type[int])` is `type`, obtained without reading its name
        // (round 6 S6-21).
        if !index.identifiers(&["get_origin"]).is_empty() {
            return false;
        }
        // The only identifiers the loop looks at: reads of `type` and of the class name.
        let ids = index.identifiers(&["type", &cname]);
        for n in ids {
            let t = ident(n, src);
            // `type` read anywhere (`(type)(d)`, `t = type`) may hand out the class, except
            // to store or read a data attribute (`type(self).count += 1`).
            let attr_name = self.it.parent(n).is_some_and(|p| {
                p.kind_name() == "attribute"
                    && p.field(F::Attribute).is_some_and(|a| a.id() == n.id())
            });
            if t == "type" && !attr_name && !self.type_data_access(n) {
                return false;
            }
            if t != cname || attr_name || n.id() == class.field(F::Name).map_or(0, |c| c.id()) {
                continue;
            }
            // `Tally.count += 1`, `print(Tally.count)`: a data attribute of the class.
            if self.it.parent(n).is_some_and(|a| {
                a.kind_name() == "attribute" && a.field(F::Object).is_some_and(|o| o.id() == n.id())
            }) && self
                .it
                .parent(n)
                .is_some_and(|a| self.data_attribute_use(a))
            {
                continue;
            }
            // Through parentheses: `(Device)(...)` is a call of the class.
            let mut e = n;
            while let Some(p) = self
                .it
                .parent(e)
                .filter(|p| p.kind_name() == "parenthesized_expression")
            {
                e = p;
            }
            let Some(p) = self.it.parent(e) else { continue };
            let callee =
                p.kind_name() == "call" && p.field(F::Function).is_some_and(|f| f.id() == e.id());
            if callee {
                continue;
            }
            let sub = (p.kind_name() == "argument_list")
                .then(|| self.it.parent(p))
                .flatten()
                .filter(|c| c.kind_name() == "class_definition");
            match sub {
                Some(c) if self.sealed(c, depth + 1) => continue,
                _ => return false,
            }
        }
        true
    }

    /// True when identifier `n` (`type`) is the callee of `type(<name>).attr` used only to
    /// store, delete or read a data attribute of the class: the attribute is an assignment
    /// target (`type(self).count += 1`), or a read that is not called and whose name no
    /// function or lambda of the cell is bound to. Such a use hands no method of the class a
    /// foreign `self` (see [`Self::sealed`]).
    fn type_data_access(&mut self, n: Node<'t>) -> bool {
        let Some(call) = self.it.parent(n).filter(|c| {
            c.kind_name() == "call" && c.field(F::Function).is_some_and(|f| f.id() == n.id())
        }) else {
            return false;
        };
        let args = call.field(F::Arguments).map(named).unwrap_or_default();
        if !matches!(args.as_slice(), [a] if a.kind_name() == "identifier") {
            return false;
        }
        let Some(attr) = self.it.parent(call).filter(|a| {
            a.kind_name() == "attribute" && a.field(F::Object).is_some_and(|o| o.id() == call.id())
        }) else {
            return false;
        };
        self.data_attribute_use(attr)
    }

    /// True when attribute node `attr` (`C.count`, `type(self).count`) stores, deletes or
    /// reads a data attribute: it is an assignment target, or a read that is not called and
    /// whose name no `def` of the cell has and no non-constant assignment binds (a method
    /// taken as a value could be called with a foreign `self`).
    fn data_attribute_use(&mut self, attr: Node<'t>) -> bool {
        let src = self.it.src;
        let Some(aname) = attr.field(F::Attribute).map(|a| ident(a, src).into_owned()) else {
            return false;
        };
        let Some(p) = self.it.parent(attr) else {
            return false;
        };
        let stored = matches!(p.kind_name(), "assignment" | "augmented_assignment")
            && p.field(F::Left).is_some_and(|l| l.id() == attr.id());
        if stored || p.kind_name() == "delete_statement" {
            return true;
        }
        if p.kind_name() == "call" && p.field(F::Function).is_some_and(|f| f.id() == attr.id()) {
            return false;
        }
        let Some(index) = self.index() else {
            return false;
        };
        !index
            .of_kinds(&["function_definition", "assignment"])
            .into_iter()
            .any(|d| match d.kind_name() {
                "function_definition" => d.field(F::Name).is_some_and(|x| ident(x, src) == aname),
                "assignment" => {
                    d.field(F::Left)
                        .is_some_and(|l| l.kind_name() == "identifier" && ident(l, src) == aname)
                        && d.field(F::Right).is_some_and(|r| {
                            !matches!(
                                r.kind_name(),
                                "string"
                                    | "concatenated_string"
                                    | "integer"
                                    | "float"
                                    | "true"
                                    | "false"
                                    | "none"
                                    | "list"
                                    | "dictionary"
                                    | "set"
                                    | "tuple"
                            )
                        })
                }
                _ => false,
            })
    }

    /// The nearest `def` enclosing `n` (not crossing a lambda or class body).
    fn enclosing_def(&self, n: Node<'t>) -> Option<Node<'t>> {
        let mut cur = n;
        loop {
            let p = self.it.parent(cur)?;
            match p.kind_name() {
                "function_definition" => return Some(p),
                "lambda" | "class_definition" => return None,
                _ => cur = p,
            }
        }
    }

    /// True when `name`, the first parameter of method `def`, is bound again inside it
    /// (`self = other`, `for self in xs`, `(self, a) = ...`, `global self`, a walrus).
    fn rebinds_in(&self, def: Node<'t>, name: &str) -> bool {
        let src = self.it.src;
        let first = def
            .field(F::Parameters)
            .and_then(first_named)
            .map(|f| f.id());
        self.it.walk(def).any(|n| {
            if n.kind_name() != "identifier" || Some(n.id()) == first || ident(n, src) != name {
                return false;
            }
            binds_name(&self.it, n)
        })
    }

    /// The namespace name whose object `e` is or belongs to, when `e` is shared with the host:
    /// a name the namespace pre-binds that the cell does not rebind (`bb`, `ActionResult`),
    /// an attribute of one (`bb.store`), its class (`type(bb)`), or a cell name assigned only
    /// such values (`B = type(bb)`).
    fn host_shared(&mut self, e: Node<'t>, depth: u32) -> Option<String> {
        if depth > 8 {
            return None;
        }
        let e = unparen(e);
        match e.kind_name() {
            "identifier" => {
                let n = ident(e, self.it.src).into_owned();
                let rhs = self.assignments_of(&n);
                if rhs.is_empty() {
                    return self.namespace_names.contains(&n).then_some(n);
                }
                // Bound on some paths only: the pre-bound object reaches the others (H27).
                if self.namespace_names.contains(&n) && self.prebound_kept(&n) {
                    return Some(n);
                }
                let mut found = None;
                for r in rhs.iter().copied() {
                    found = Some(self.host_shared(r, depth + 1)?);
                }
                found
            }
            "attribute" => self.host_shared(e.field(F::Object)?, depth + 1),
            "call" => {
                let f = unparen(e.field(F::Function)?);
                if f.kind_name() != "identifier" || ident(f, self.it.src) != "type" {
                    return None;
                }
                let args = named(e.field(F::Arguments)?);
                match args.as_slice() {
                    [a] => self.host_shared(*a, depth + 1),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The host object that may reach `e` through value flows cellguard does not model (round 5
    /// H1): `R = sorted([json], key=id)[0]`, `functools.reduce(lambda a, b: b, [0, X])`,
    /// `[x for x in [ActionResult]][0]`, `def g(): return ActionType`, `for R in (0, X)`,
    /// `*_, R = [0, X]`, `def g(m=X)`. `e` is a name (followed through its assignments, `for`
    /// and comprehension targets, unpacking and parameter defaults) or an expression; a host
    /// object is a module, a module member, a name the namespace pre-binds (not the cell's data
    /// such as `results`), or a class hierarchy read with `.mro()`, used as a value anywhere in
    /// the expression (an element, an argument, a lambda body), not as the callee or the
    /// receiver of a call (`json.dumps(x)` is a string, `ActionResult(...)` a new instance).
    /// Values of the cell's functions are followed into their `return`s.
    fn host_laundered(&mut self, e: Node<'t>, depth: u32) -> Option<String> {
        if depth > 4 {
            return None;
        }
        let e = unparen(e);
        if e.kind_name() == "identifier" {
            let n = ident(e, self.it.src).into_owned();
            for src in self.binding_sources(&n) {
                if let Some(h) = self.host_in_value(src, depth + 1) {
                    return Some(h);
                }
            }
            return None;
        }
        self.host_in_value(e, depth + 1)
    }

    /// The expressions a cell name may get its value from: assignments and walruses, `for`
    /// and comprehension iterables, unpacking assignments and parameter defaults.
    fn binding_sources(&mut self, name: &str) -> Vec<Node<'t>> {
        let mut out = self.assignments_of(name).to_vec();
        self.index_flows();
        if let Some((sources, _)) = &self.flows {
            out.extend(sources.get(name).into_iter().flatten().copied());
        }
        out
    }

    /// Fills [`Self::flows`].
    fn index_flows(&mut self) {
        if self.flows.is_some() {
            return;
        }
        let mut sources: NodesByName<'t> = Default::default();
        let mut returns: NodesByName<'t> = Default::default();
        let src = self.it.src;
        // The names a target binds (`a`, `(a, *b)`, `[x, y]`), not attributes or items.
        fn targets<'t>(t: Node<'t>, src: &str, out: &mut Vec<String>) {
            match t.kind_name() {
                "identifier" => out.push(ident(t, src).into_owned()),
                "pattern_list"
                | "tuple_pattern"
                | "list_pattern"
                | "tuple"
                | "list"
                | "list_splat_pattern"
                | "parenthesized_expression"
                | "list_splat" => {
                    for c in named(t) {
                        targets(c, src, out);
                    }
                }
                _ => {}
            }
        }
        if let Some(root) = self.root {
            let raised: Vec<Node<'t>> = self
                .it
                .walk(root)
                .filter(|r| r.kind_name() == "raise_statement")
                .filter_map(first_named)
                .collect();
            for n in self.it.walk(root) {
                // `results["m"] = X` then `results["m"]`: the data names' items (key `name[]`).
                if n.kind_name() == "assignment" {
                    if let (Some(l), Some(r)) = (n.field(F::Left).map(unparen), n.field(F::Right)) {
                        let base = (l.kind_name() == "subscript")
                            .then(|| l.field(F::Value))
                            .flatten()
                            .map(unparen)
                            .filter(|b| b.kind_name() == "identifier");
                        if let Some(b) = base {
                            sources
                                .entry(format!("{}[]", ident(b, src)))
                                .or_default()
                                .push(r);
                        }
                    }
                }
                // `goals.append(X)`, `pages.insert(0, X)`: items of the name (key `name[]`).
                if n.kind_name() == "call" {
                    let f = n
                        .field(F::Function)
                        .map(unparen)
                        .filter(|f| f.kind_name() == "attribute");
                    let base = f
                        .and_then(|f| f.field(F::Object))
                        .map(unparen)
                        .filter(|b| b.kind_name() == "identifier");
                    let meth = f.and_then(|f| f.field(F::Attribute)).map(|a| ident(a, src));
                    if let (Some(b), Some(m)) = (base, meth) {
                        if matches!(
                            &*m,
                            "append"
                                | "extend"
                                | "insert"
                                | "add"
                                | "update"
                                | "setdefault"
                                | "appendleft"
                        ) {
                            let args = n.field(F::Arguments).map(named).unwrap_or_default();
                            sources
                                .entry(format!("{}[]", ident(b, src)))
                                .or_default()
                                .extend(args);
                        }
                    }
                }
                // `except E as e`: what the cell raises (`raise ValueError(X)`, `e.args[0]`).
                if n.kind_name() == "as_pattern"
                    && self.it.parent(n).is_some_and(|p| {
                        matches!(p.kind_name(), "except_clause" | "except_group_clause")
                    })
                {
                    if let Some(a) = n.field(F::Alias) {
                        let mut names = Vec::new();
                        targets(a, src, &mut names);
                        if let Some(id) = named(a).first().filter(|i| i.kind_name() == "identifier")
                        {
                            names.push(ident(*id, src).into_owned());
                        }
                        for name in names {
                            sources
                                .entry(name)
                                .or_default()
                                .extend(raised.iter().copied());
                        }
                    }
                }
                let (bound, value) = match n.kind_name() {
                    "for_statement" | "for_in_clause" => (n.field(F::Left), n.field(F::Right)),
                    "assignment" => match n.field(F::Left) {
                        Some(l) if l.kind_name() != "identifier" => (Some(l), n.field(F::Right)),
                        _ => (None, None),
                    },
                    "default_parameter" | "typed_default_parameter" => {
                        (n.field(F::Name), n.field(F::Value))
                    }
                    "return_statement" => {
                        let def = {
                            let mut cur = n;
                            loop {
                                match self.it.parent(cur) {
                                    Some(p) if p.kind_name() == "function_definition" => {
                                        break Some(p)
                                    }
                                    Some(p) if p.kind_name() == "class_definition" => break None,
                                    Some(p) => cur = p,
                                    None => break None,
                                }
                            }
                        };
                        if let (Some(d), Some(v)) = (def, first_named(n)) {
                            if let Some(f) = d.field(F::Name) {
                                returns
                                    .entry(ident(f, src).into_owned())
                                    .or_default()
                                    .push(v);
                            }
                        }
                        (None, None)
                    }
                    _ => (None, None),
                };
                if let (Some(b), Some(v)) = (bound, value) {
                    let mut names = Vec::new();
                    targets(b, src, &mut names);
                    for name in names {
                        sources.entry(name).or_default().push(v);
                    }
                }
            }
        }
        self.flows = Some((sources, returns));
    }

    /// The host object used as a value somewhere inside expression `e` (see
    /// [`Self::host_laundered`]).
    fn host_in_value(&mut self, e: Node<'t>, depth: u32) -> Option<String> {
        let src = self.it.src;
        // `type(r).mro()`, `type(bb).mro()`: the bases of a host class.
        let mros: Vec<Node<'t>> = self
            .it
            .walk(e)
            .filter(|c| c.kind_name() == "call")
            .filter_map(|c| c.field(F::Function).map(unparen))
            .filter(|f| {
                f.kind_name() == "attribute"
                    && f.field(F::Attribute)
                        .is_some_and(|a| ident(a, src) == "mro")
            })
            .filter_map(|f| f.field(F::Object))
            .collect();
        for o in mros {
            if let Some(h) = self.host_derived(o, &Env::Global, 0) {
                return Some(h);
            }
        }
        let ids: Vec<Node<'t>> = self
            .it
            .walk(e)
            .filter(|n| n.kind_name() == "identifier")
            .collect();
        for n in ids {
            let Some(p) = self.it.parent(n) else { continue };
            // Attribute names, keyword names and parameters are not values.
            let named_only = match p.kind_name() {
                "attribute" => p.field(F::Attribute).is_some_and(|a| a.id() == n.id()),
                "keyword_argument" | "default_parameter" | "typed_default_parameter" => {
                    p.field(F::Name).is_some_and(|a| a.id() == n.id())
                }
                "parameters"
                | "lambda_parameters"
                | "typed_parameter"
                | "list_splat_pattern"
                | "dictionary_splat_pattern"
                | "keyword_pattern" => true,
                _ => false,
            };
            if named_only {
                continue;
            }
            // The top of the attribute chain `n` starts (`json.JSONEncoder`,
            // `((functools).reduce)`), through parentheses.
            let top = chain_top(&self.it, n);
            // Through parentheses: `(g)()` calls `g`.
            let callee = paren_top(&self.it, top);
            let called = self.it.parent(callee).is_some_and(|c| {
                c.kind_name() == "call"
                    && c.field(F::Function).is_some_and(|f| f.id() == callee.id())
            });
            let name = ident(n, src).into_owned();
            if called {
                // `X.mro()`: the host's base classes.
                let mro = top.kind_name() == "attribute"
                    && top
                        .field(F::Attribute)
                        .is_some_and(|a| ident(a, src) == "mro");
                if mro && self.host_root(n).is_some() {
                    return Some(format!("`{}`", short(self.text(top))));
                }
                // `g()` of a cell function: what it returns.
                if top.id() == n.id() && depth < 4 {
                    if let Some(h) = self.function_returns_host(&name, depth + 1) {
                        return Some(h);
                    }
                }
                continue;
            }
            if top.id() != n.id() {
                // An attribute chain used as a value: a module, a class of a module
                // (`json.JSONEncoder`) or a part of a pre-bound object is a host object; a
                // module function (`map(json.loads, lines)`) is not a receiver.
                let v = self.it.eval(top, &Env::Global, 0);
                // Members of untracked modules are one opaque value per root module
                // (`collections`): the chain's last name tells a class.
                let last = top
                    .field(F::Attribute)
                    .map(|a| ident(a, src).into_owned())
                    .unwrap_or_default();
                if v.iter().any(|x| is_host_receiver_value(x, &last)) {
                    self.laundered_at = Some(top);
                    return Some(format!("`{}`", short(self.text(top))));
                }
                if v.has_unknown() {
                    if let Some(h) = self.host_derived(top, &Env::Global, 0) {
                        return Some(h);
                    }
                }
                // `e.args[0]`, `R._cache`: a part of a cell name that holds a host object.
                if depth < 4 && !self.binding_sources(&name).is_empty() {
                    if let Some(h) = self.host_laundered(n, depth + 1) {
                        return Some(h);
                    }
                }
                continue;
            }
            if let Some(h) = self.host_root(n) {
                self.laundered_at = Some(n);
                return Some(h);
            }
            // `results["m"]`: what the cell stored into an item of the name.
            let held = paren_top(&self.it, n);
            let p = self.it.parent(held).unwrap_or(p);
            if p.kind_name() == "subscript"
                && p.field(F::Value).is_some_and(|v| v.id() == held.id())
                && depth < 4
            {
                self.index_flows();
                let stored: Vec<Node<'t>> = self
                    .flows
                    .as_ref()
                    .and_then(|(f, _)| f.get(&format!("{name}[]")))
                    .cloned()
                    .unwrap_or_default();
                for v in stored {
                    if let Some(h) = self.host_in_value(v, depth + 1) {
                        return Some(h);
                    }
                }
            }
            if depth < 4 && !self.binding_sources(&name).is_empty() {
                if let Some(h) = self.host_laundered(n, depth + 1) {
                    return Some(h);
                }
            }
        }
        None
    }

    /// The host object identifier `n` names (a module, a module member, a pre-bound
    /// non-data name the cell never rebinds), for a message.
    fn host_root(&mut self, n: Node<'t>) -> Option<String> {
        let name = ident(n, self.it.src).into_owned();
        if HOST_DATA_NAMES.contains(&name.as_str()) {
            return None;
        }
        // Modules, classes of modules (`json.JSONEncoder`), pre-bound classes and objects:
        // functions passed as values (`map(json.loads, lines)`, `map(log, msgs)`) are not
        // receivers of host writes.
        let v = self.it.eval(n, &Env::Global, 0);
        if v.iter().any(|x| is_host_receiver_value(x, &name)) {
            return Some(format!("`{name}`"));
        }
        if self.prebound_kept(&name)
            && self.namespace_names.contains(&name)
            && (class_like(&name) || HOST_STATE_NAMES.contains(&name.as_str()) || name == "bb")
        {
            return Some(format!("`{name}`"));
        }
        None
    }

    /// The host object a cell function `name` may return (its `return` values).
    fn function_returns_host(&mut self, name: &str, depth: u32) -> Option<String> {
        self.index_flows();
        let rets: Vec<Node<'t>> = self
            .flows
            .as_ref()
            .and_then(|(_, r)| r.get(name))
            .cloned()
            .unwrap_or_default();
        for r in rets {
            if let Some(h) = self.host_in_value(r, depth + 1) {
                return Some(h);
            }
        }
        None
    }

    /// The host object `e` is derived from when every store into it is a host write, even a
    /// data setting, with the text a message shows: an attribute or item taken out of a
    /// pre-bound object (`ActionResult.model_config`, `ActionResult.model_fields["x"]`,
    /// `bb.store`), a pre-bound class itself (`ActionResult`, `ActionType`: the host makes its
    /// instances from it), the class of a value that is not the cell's own (`type(r)` of an
    /// action result, `type(json.JSONDecoder())`, `type(queue.Queue().not_empty)`: a host
    /// class), and cell names assigned only such values (`B = type(bb)`). Names that hold the
    /// cell's own data ([`HOST_DATA_NAMES`]: `results`, `params`, ...) are not host objects
    /// here. Round 4 G2, G14, G27, G30.
    fn host_derived(&mut self, e: Node<'t>, env: &Env, depth: u32) -> Option<String> {
        if depth > 8 {
            return None;
        }
        let e = unparen(e);
        match e.kind_name() {
            "identifier" => {
                let n = ident(e, self.it.src).into_owned();
                let rhs = self.assignments_of(&n);
                // Never bound by the cell, or bound on some paths only (the pre-bound value
                // reaches the others, round 5 H27).
                if rhs.is_empty() || self.prebound_kept(&n) {
                    // The host's own objects (the blackboard, the agent, the REPL): replacing
                    // one of their attributes changes what the host and other agents see
                    // (round 5 H10: `bb.data = {...}`).
                    let object = matches!(n.as_str(), "bb" | "_agent" | "_repl");
                    if object && self.namespace_names.contains(&n) {
                        return Some(format!("`{n}`, an object the host put in the namespace"));
                    }
                    if class_like(&n)
                        && self.namespace_names.contains(&n)
                        && !HOST_DATA_NAMES.contains(&n.as_str())
                    {
                        return Some(format!("`{n}`, a class the host put in the namespace"));
                    }
                    if rhs.is_empty() {
                        return None;
                    }
                }
                let mut found = None;
                for r in rhs.iter().copied() {
                    found = Some(self.host_derived(r, env, depth + 1)?);
                }
                found
            }
            "attribute" | "subscript" => {
                let inner = e.field(if e.kind_name() == "attribute" {
                    F::Object
                } else {
                    F::Value
                })?;
                if let Some(root) = self.host_shared(inner, depth + 1) {
                    if !HOST_DATA_NAMES.contains(&root.as_str()) {
                        return Some(format!(
                            "`{}`, part of `{root}`, an object the host put in the namespace",
                            short(self.text(e))
                        ));
                    }
                }
                self.host_derived(inner, env, depth + 1)
                    .map(|_| format!("`{}`, part of a host class", short(self.text(e))))
            }
            "call" => {
                let f = e.field(F::Function)?;
                let args = named(e.field(F::Arguments)?);
                let [a] = args.as_slice() else {
                    return None;
                };
                if !self.it.eval(f, env, 0).has_builtin("type")
                    || a.kind_name() == "keyword_argument"
                {
                    return None;
                }
                // `type(x)` of a value of the cell (a literal, a display, an instance of a
                // cell class, a cell function or class, a module) is a builtin or cell class;
                // of anything else (an action result, an object from a module's API, a
                // pre-bound object, a parameter) it may be a host class.
                // `type(self)` in a method of a sealed cell class (`type(self).count += 1`):
                // the class or a cell subclass, never a host class.
                if let Some(id) = self.self_instance(*a) {
                    let def = self.enclosing_def(*a);
                    let rebound = def.is_some_and(|d| self.rebinds_in(d, &ident(*a, self.it.src)));
                    if !rebound && self.it.classes.get(id as usize).is_some() {
                        return None;
                    }
                }
                let v = self.it.eval(*a, env, 0);
                let foreign = v.iter().any(|x| matches!(x, Val::Unknown | Val::Member(_)));
                foreign.then(|| {
                    format!(
                        "`{}`, the class of a value that is not the cell's own (a host class)",
                        short(self.text(e))
                    )
                })
            }
            _ => None,
        }
    }

    /// SBX005 for writing or deleting attribute `name` of a host object: a module (allowed,
    /// pre-bound or imported; modules are shared with the host through `sys.modules`), a
    /// module member (`json.JSONEncoder`, `re.compile`), or a name the namespace pre-binds that
    /// the cell never rebinds (`Counter`, `ActionResult`). The host then runs the cell's
    /// replacement (`json.dumps = spy`, `ActionResult.model_dump = forged`).
    fn host_write(
        &mut self,
        obj: Node<'t>,
        objv: &VSet,
        name: &str,
        verb: &str,
        range: TextRange,
        stored: Option<&VSet>,
    ) {
        let shown = short(self.text(obj));
        // Members and pre-bound objects: only deletions and stored callables (behaviour
        // patches) count, not data settings such as `pd.options.display.max_rows = 50`.
        let behaviour = verb == "Deleting"
            || stored.is_some_and(|v| {
                v.iter()
                    .any(|x| matches!(x, Val::Func(_) | Val::Builtin(_) | Val::Member(_)))
            });
        if let Some(what) = self.host_object(obj, objv, behaviour) {
            self.report(
                &MODULE_ESCAPE,
                range,
                format!("{verb} attribute `{name}` of `{shown}` patches {what}: it is shared with the host, which then runs the cell's replacement"),
                Some("Modules and pre-bound objects are shared with the host process; wrap them in a local function instead of patching them".into()),
            );
        }
    }

    /// What host object `obj` (whose values are `objv`) may be, described for a message: a
    /// module, and, when `behaviour` (the write installs or removes code), a module member or a
    /// name the namespace pre-binds that the cell never rebinds. `None` for the cell's own
    /// objects.
    fn host_object(&mut self, obj: Node<'t>, objv: &VSet, behaviour: bool) -> Option<String> {
        // A name bound by a `match` capture (`case [m]: setattr(m, "dumps", f)`).
        let captured = match unparen(obj) {
            o if o.kind_name() == "identifier" && objv.only_unknown() => {
                let n = ident(o, self.it.src).into_owned();
                self.capture_value(&n, &Env::Global)
            }
            _ => None,
        };
        let objv = captured.as_ref().unwrap_or(objv);
        for v in objv.iter() {
            match v {
                Val::Module(m) => return Some(format!("module `{}`", m.real)),
                Val::Member(p) if behaviour && !is_coroutine(v) => {
                    return Some(format!("`{p}`, a member of a module"))
                }
                // A class of a module (`json.JSONEncoder.key_separator = ...`): even a data
                // setting changes every instance the host makes.
                Val::Member(p)
                    if !is_coroutine(v)
                        && p.rsplit('.').next().is_some_and(|l| {
                            l.starts_with(|c: char| c.is_ascii_uppercase())
                                && l.chars().any(|c| c.is_ascii_lowercase())
                        }) =>
                {
                    return Some(format!("class `{p}` of a module"))
                }
                _ => {}
            }
        }
        // A pre-bound object, its attributes and `type(...)` of it, also through aliases
        // (`B = type(bb)`); `type(bb)` is the metaclass-call value plus anything.
        let opaque = objv
            .iter()
            .all(|v| matches!(v, Val::Unknown) || matches!(v, Val::Builtin(b) if *b == METACLASS));
        // A pre-bound name the cell rebinds on some paths only still holds the host's object
        // on the others, whatever the cell's bindings are (round 5 H27).
        let kept_prebound = {
            let o = unparen(obj);
            o.kind_name() == "identifier" && {
                let n = ident(o, self.it.src).into_owned();
                self.namespace_names.contains(&n)
                    && !HOST_DATA_NAMES.contains(&n.as_str())
                    && self.prebound_kept(&n)
            }
        };
        let opaque = opaque || kept_prebound;
        if behaviour && opaque {
            if let Some(n) = self.host_shared(obj, 0) {
                return Some(format!("`{n}`, an object the host put in the namespace"));
            }
        }
        // Parts of pre-bound objects, pre-bound classes and host classes reached with
        // `type(...)`: a data setting changes what the host does too (G2, G14, G30).
        if opaque {
            if let Some(what) = self.host_derived(obj, &Env::Global, 0) {
                return Some(what);
            }
        }
        // A host object laundered through a value flow cellguard does not follow (H1).
        if objv.has_unknown() {
            if let Some(h) = self.host_laundered(obj, 0) {
                return Some(format!(
                    "what may be {h}, passed through a value flow cellguard does not follow (a host object)"
                ));
            }
        }
        None
    }

    /// SBX003 for `functools.wraps(f)` / `update_wrapper(w, f)` where `f` is not the cell's own
    /// function or class (a pre-bound host function such as `run`, `log`, `json.dumps`, or a
    /// value cellguard cannot resolve) and the wrapper has string annotations (or the cell has
    /// `from __future__ import annotations`): `__wrapped__` makes `typing.get_type_hints`,
    /// `functools.singledispatch` and pydantic evaluate the wrapper's annotations in the
    /// globals of `f`'s module, with the host's unrestricted builtins, so a bare name such as
    /// `os` or a host global in the annotation reaches the host.
    fn check_wrapped_globals(&mut self, node: Node<'t>, callee: Node<'t>, cv: &VSet, env: &Env) {
        let is = |vals: &VSet, name: &str| {
            vals.iter()
                .any(|v| matches!(v, Val::Member(p) if p.ends_with(&format!("functools.{name}"))))
        };
        let (pos, kws, _) = call_args(node.field(F::Arguments), self.it.src);
        let kw = |name: &str| kws.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
        // (wrapped, wrapper): the wrapper is a node whose value is a function, or the
        // definition a `@wraps(f)` decorator is applied to.
        let mut site: Option<(Node<'t>, Node<'t>)> = None;
        if is(cv, "update_wrapper") {
            if let (Some(w), Some(f)) = (
                pos.first().copied().or_else(|| kw("wrapper")),
                pos.get(1).copied().or_else(|| kw("wrapped")),
            ) {
                site = Some((f, w));
            }
        } else if is(cv, "wraps") {
            let wrapped = pos.first().copied().or_else(|| kw("wrapped"));
            let def = self
                .it
                .parent(node)
                .filter(|p| p.kind_name() == "decorator")
                .and_then(|d| self.it.parent(d))
                .and_then(|d| d.field(F::Definition));
            if let (Some(f), Some(def)) = (wrapped, def) {
                site = Some((f, def));
            }
        } else {
            let inner = unparen(callee);
            if inner.kind_name() == "call"
                && inner
                    .field(F::Function)
                    .is_some_and(|c| is(&self.it.eval(c, env, 0), "wraps"))
            {
                let (ipos, ikws, _) = call_args(inner.field(F::Arguments), self.it.src);
                let wrapped = ipos
                    .first()
                    .copied()
                    .or_else(|| ikws.iter().find(|(k, _)| k == "wrapped").map(|(_, v)| *v));
                if let (Some(f), Some(w)) = (wrapped, pos.first().copied()) {
                    site = Some((f, w));
                }
            }
        }
        let Some((wrapped, wrapper)) = site else {
            return;
        };
        let defs: Vec<Node<'t>> = if wrapper.kind_name() == "function_definition" {
            vec![wrapper]
        } else {
            self.it
                .eval(wrapper, env, 0)
                .iter()
                .filter_map(|v| match v {
                    Val::Func(id) => self.it.funcs.get(*id as usize).map(|f| f.node),
                    _ => None,
                })
                .collect()
        };
        let future = self.it.src.contains("from __future__ import annotations");
        if !defs.iter().any(|d| has_string_annotation(*d, future)) {
            return;
        }
        let own = self
            .it
            .eval(wrapped, env, 0)
            .iter()
            .all(|v| matches!(v, Val::Func(_) | Val::Class(_)));
        if own {
            return;
        }
        let shown = short(self.text(wrapped));
        self.report(
            &CODE_EXECUTION_BUILTIN,
            parse::range(wrapped),
            format!("Wrapping `{shown}`, which is not a function of the cell, makes the wrapper's string annotations evaluate in the globals of `{shown}`'s module (with the host's builtins) when `typing.get_type_hints`, `functools.singledispatch` or pydantic read them"),
            Some("Wrap the cell's own function, or write the annotations as types instead of strings".into()),
        );
    }

    /// SBX005 for a call that rewrites its argument in place when the argument is a host
    /// object: `functools.update_wrapper(W, f)` and `functools.wraps(f)(W)` (they copy `f`'s
    /// `__dict__` into `W` and set `W.__wrapped__` and the `assigned` names),
    /// `dataclasses.dataclass(W)` / `dataclass(...)(W)` and `functools.total_ordering(W)` (they
    /// set methods on the class `W`). The same host write as `W.x = f`, without store syntax.
    fn check_in_place_mutator(&mut self, node: Node<'t>, callee: Node<'t>, cv: &VSet, env: &Env) {
        let (pos, kws, _) = call_args(node.field(F::Arguments), self.it.src);
        // The function a callee is: a module member, or a name the namespace pre-binds
        // (Colony binds `dataclass`) that the cell does not rebind.
        let member = |this: &mut Self, c: Node<'t>, vals: &VSet, names: &[&str]| {
            let by_value = vals.iter().find_map(|v| match v {
                Val::Member(p) => names
                    .iter()
                    .find(|n| p.ends_with(&format!(".{n}")) || &**p == **n)
                    .map(|n| n.to_string()),
                _ => None,
            });
            by_value.or_else(|| {
                let c = unparen(c);
                if c.kind_name() != "identifier" || !vals.only_unknown() {
                    return None;
                }
                let n = ident(c, this.it.src).into_owned();
                (names.contains(&n.as_str())
                    && this.namespace_names.contains(&n)
                    && this.prebound_kept(&n))
                .then_some(n)
            })
        };
        let mut target: Option<(Node<'t>, String)> = None;
        if let Some(f) = member(
            self,
            callee,
            cv,
            &["update_wrapper", "total_ordering", "dataclass"],
        ) {
            let kw = if f == "update_wrapper" {
                "wrapper"
            } else {
                "cls"
            };
            let arg = pos
                .first()
                .copied()
                .or_else(|| kws.iter().find(|(k, _)| k == kw).map(|(_, v)| *v));
            target = arg.map(|a| (a, f));
        }
        let inner = unparen(callee);
        if target.is_none() && inner.kind_name() == "call" {
            if let Some(f) = inner.field(F::Function).and_then(|c| {
                let v = self.it.eval(c, env, 0);
                member(self, c, &v, &["wraps", "dataclass"])
            }) {
                target = pos.first().map(|a| (*a, f));
            }
        }
        self.check_wrapped_globals(node, callee, cv, env);
        // `update_wrapper(*[json, c])`, `dataclass(**{"cls": ActionResult})`: the target is
        // in a spread argument cellguard cannot take apart (round 5 H11).
        let rewriter = member(
            self,
            callee,
            cv,
            &["update_wrapper", "total_ordering", "dataclass"],
        );
        if let Some(f) = rewriter.filter(|_| target.is_none()) {
            let splats: Vec<Node<'t>> = node
                .field(F::Arguments)
                .map(named)
                .unwrap_or_default()
                .into_iter()
                .filter(|a| matches!(a.kind_name(), "list_splat" | "dictionary_splat"))
                .collect();
            for sp in splats {
                if let Some(h) = self.host_in_value(sp, 0) {
                    self.report(
                        &MODULE_ESCAPE,
                        parse::range(sp),
                        format!("`{f}` gets its target from a spread argument that holds {h}: it rewrites its target in place (it sets attributes on it), a host object shared with the host"),
                        Some("Pass the cell's own function or class; wrap host objects in a local function instead of rewriting them".into()),
                    );
                    break;
                }
            }
        }
        // `map(functools.update_wrapper, [json], [c])`, `reduce(update_wrapper, [c], json)`,
        // `partial(dataclass, eq=False)(ActionResult)`, `map(functools.wraps(c), [json])`: a
        // rewriter passed as a value to a call whose other arguments hold a host object.
        self.check_rewriter_values(node, env, &member);
        let Some((arg, f)) = target else {
            return;
        };
        let objv = self.it.eval(arg, env, 0);
        if let Some(what) = self.host_object(arg, &objv, true) {
            let shown = short(self.text(arg));
            self.report(
                &MODULE_ESCAPE,
                parse::range(arg),
                format!("`{f}` rewrites `{shown}` in place (it sets attributes on it), patching {what}: it is shared with the host, which then runs what the cell put there"),
                Some("Pass the cell's own function or class; wrap host objects in a local function instead of rewriting them".into()),
            );
        }
    }

    /// SBX005 for an in-place rewriter (`functools.update_wrapper`, `functools.wraps(...)`,
    /// `dataclass`/`dataclass(...)`, `functools.total_ordering`) passed as an argument of call
    /// `node` whose other arguments (or, when `node` is itself called, the outer call's
    /// arguments) hold a host object: the rewriter then runs on that object unseen.
    fn check_rewriter_values(
        &mut self,
        node: Node<'t>,
        env: &Env,
        member: &RewriterOf<'t, 'a, '_>,
    ) {
        let args = node.field(F::Arguments).map(named).unwrap_or_default();
        if args.is_empty() || args.len() > 16 {
            return;
        }
        let mut found: Option<(Node<'t>, String)> = None;
        for a in &args {
            let a = match a.kind_name() {
                "keyword_argument" => match a.field(F::Value) {
                    Some(v) => v,
                    None => continue,
                },
                _ => *a,
            };
            let u = unparen(a);
            let v = self.it.eval(u, env, 0);
            let direct = member(
                self,
                u,
                &v,
                &["update_wrapper", "total_ordering", "dataclass"],
            );
            let made = (u.kind_name() == "call")
                .then(|| u.field(F::Function))
                .flatten()
                .and_then(|c| {
                    let cv = self.it.eval(c, env, 0);
                    member(self, c, &cv, &["wraps", "dataclass"])
                });
            if let Some(f) = direct.or(made) {
                found = Some((a, f));
                break;
            }
        }
        let Some((rw, f)) = found else { return };
        let mut scope: Vec<Node<'t>> = args.into_iter().filter(|a| a.id() != rw.id()).collect();
        if let Some(outer) = self.it.parent(node).filter(|p| {
            p.kind_name() == "call" && p.field(F::Function).is_some_and(|c| c.id() == node.id())
        }) {
            scope.extend(outer.field(F::Arguments).map(named).unwrap_or_default());
        }
        for a in scope {
            if let Some(h) = self.host_in_value(a, 0) {
                self.report(
                    &MODULE_ESCAPE,
                    parse::range(rw),
                    format!("`{f}` passed as a value to a call that also gets {h}: it rewrites its target in place (it sets attributes on it), here a host object shared with the host"),
                    Some("Call it directly on the cell's own function or class; never rewrite host objects".into()),
                );
                return;
            }
        }
    }

    /// SBX005 for `x op= y` (`|=`, `+=`, `-=`, `&=`, `^=`, `*=`) where name `x` is an alias of
    /// host state (`c = ActionResult.model_config; c |= {...}`, `d = bb.data; d |= {...}`):
    /// the operator changes the dict or list in place, like `c.update(...)` (round 5 H28).
    fn check_inplace_alias(&mut self, node: Node<'t>, env: &Env) {
        let Some(left) = node.field(F::Left).map(unparen) else {
            return;
        };
        let op = node.field(F::Operator).map(|o| self.text(o)).unwrap_or("");
        if left.kind_name() != "identifier"
            || !matches!(op, "|=" | "+=" | "-=" | "&=" | "^=" | "*=")
        {
            return;
        }
        let name = ident(left, self.it.src).into_owned();
        let Some(root) = self.root else { return };
        let src = self.it.src;
        // The plain assignments of the name (not this or other augmented ones).
        let rhs: Vec<Node<'t>> = self
            .it
            .walk(root)
            .filter(|n| n.kind_name() == "assignment")
            .filter(|n| {
                n.field(F::Left)
                    .is_some_and(|l| l.kind_name() == "identifier" && ident(l, src) == name)
            })
            .filter_map(|n| n.field(F::Right))
            .collect();
        for r in rhs {
            let what = self.host_state(r, env, false);
            if let Some(w) = what {
                self.report(
                    &MODULE_ESCAPE,
                    parse::range(node),
                    format!("`{name} {op} ...` changes `{name}` in place, which holds host state ({w}): it is shared with the host, which then runs with what the cell put there"),
                    Some("Copy host data before changing it (`dict(x)`); never change host classes, models or module state".into()),
                );
                return;
            }
        }
    }

    /// What host state `recv` (an attribute's object, a subscript's value) is, when changing
    /// it in place changes the host: a module member (`copy.dispatch_table`,
    /// `collections.abc.Mapping`) or a host-derived object ([`Self::host_derived`]). `root_ok`
    /// counts a pre-bound class itself (`ActionResult.model_rebuild()`); otherwise a bare
    /// pre-bound name is left out (`Counter.update(c, x)` updates the cell's counter).
    fn host_state(&mut self, recv: Node<'t>, env: &Env, root_ok: bool) -> Option<String> {
        let r = unparen(recv);
        let vals = self.it.eval(r, env, 0);
        if let Some(p) = vals.iter().find_map(|v| match v {
            Val::Member(p) if !is_coroutine(v) => Some(p.clone()),
            _ => None,
        }) {
            // Members of untracked modules are one opaque value per module: show the text.
            let p = if p.contains('.') {
                p.to_string()
            } else {
                short(self.text(r))
            };
            return Some(format!("`{p}`, a module member"));
        }
        let opaque = vals
            .iter()
            .all(|v| matches!(v, Val::Unknown) || matches!(v, Val::Builtin(b) if *b == METACLASS));
        if !opaque {
            return None;
        }
        let bare = r.kind_name() == "identifier" && {
            let n = ident(r, self.it.src).into_owned();
            self.assignments_of(&n).is_empty()
        };
        if bare && !root_ok {
            return None;
        }
        self.host_derived(r, env, 0).or_else(|| {
            self.host_laundered(r, 0).map(|h| {
                format!("what may be {h}, passed through a value flow cellguard does not follow")
            })
        })
    }

    /// SBX004 for a pydantic alias cellguard cannot read in a cell that validates from
    /// attributes: with `from_attributes=True` (a keyword or a `model_config` key) pydantic reads
    /// `getattr(obj, alias)` for every field, so an `alias`/`validation_alias` built at runtime
    /// or an `alias_generator` of the cell is a getattr with a computed name (`alias_generator =
    /// lambda n: "__" + n + "__"` hands out `object.__getattribute__` when the model validates
    /// its own class). Constant non-dunder aliases and library generators (`to_camel`) are
    /// fine; constant dunders are SBX002 where the string is folded. Round 4 G7.
    fn check_computed_alias(&mut self, key: &str, value: Node<'t>, env: &Env) {
        if !matches!(key, "alias" | "validation_alias" | "alias_generator")
            || !self.it.src.contains("from_attributes")
        {
            return;
        }
        let v = self.it.eval(value, env, 0);
        let computed = if key == "alias_generator" {
            v.iter()
                .any(|x| matches!(x, Val::Func(_) | Val::Unknown | Val::Builtin(_)))
        } else {
            v.has_unknown() || v.strs().next().is_none()
        };
        if computed {
            self.report(
                &DYNAMIC_ATTRIBUTE_ACCESS,
                parse::range(value),
                format!("`{key}` that cellguard cannot read, in a cell that validates from attributes: pydantic reads each field with `getattr(obj, alias)`, a getattr by a computed name"),
                Some("Use constant aliases (or a library generator such as `to_camel`)".into()),
            );
        }
    }

    /// pydantic validation from attributes is `getattr(obj, name)` for every field of the model,
    /// done by pydantic in C with names the cell never writes as attribute reads: the field's
    /// `alias`/`validation_alias` when it has a constant one (`Field(alias="_sys")`), and the
    /// field name itself (`sys: Any`, read back through `model_dump()`, `dict(m)` or iteration).
    /// A cell validates from attributes when it mentions `from_attributes` (v2: a keyword of
    /// `model_validate`/`validate_python`, a `model_config` key, a class keyword) or pydantic
    /// v1's `orm_mode`/`from_orm`. Then every field read of every model (annotated class-body
    /// names of the cell's classes, keyword fields of `create_model`) is checked as that
    /// `getattr`: dunders are SBX002, frame attributes SBX008, and the rest are checked like the
    /// attribute written out on the objects the cell validates that model from
    /// (`M.model_validate(collections, from_attributes=True)` with `s: Any =
    /// Field(alias="_sys")` reads `collections._sys`, SBX005). For a model the cell does not
    /// visibly validate (nested models, `create_model` results, a model validated from a value
    /// cellguard cannot resolve), the object may be anything, and a host-reaching name (`sys`,
    /// `_os`, `codecs`) is reported. Round 6 S6-1, S6-3, S6-11.
    fn check_attribute_validation(&mut self) {
        let src = self.it.src;
        if !(src.contains("from_attributes")
            || src.contains("orm_mode")
            || src.contains("from_orm"))
        {
            return;
        }
        let Some(ix) = self.index() else { return };
        let calls = ix.of_kinds(&["call"]);
        let classes = ix.of_kinds(&["class_definition"]);
        // The objects each cell class is validated from, by class id.
        let mut receivers: rustc_hash::FxHashMap<u32, (VSet, String)> = Default::default();
        // Each model's attribute reads (name, where to report) and its class id, if any.
        type Reads = Vec<(String, TextRange)>;
        let mut models: Vec<(Reads, Option<u32>)> = Vec::new();
        for call in calls {
            let Some(callee) = call.field(F::Function).map(unparen) else {
                continue;
            };
            let (pos, kws, _) = call_args(call.field(F::Arguments), src);
            let last = match callee.kind_name() {
                "attribute" => callee.field(F::Attribute).map(|a| ident(a, src)),
                "identifier" => Some(ident(callee, src)),
                _ => None,
            };
            if last.as_deref() == Some("create_model") {
                let mut reads = Vec::new();
                for (k, v) in &kws {
                    if k.starts_with("__") {
                        continue;
                    }
                    if let Some(kw) = v.parent().filter(|p| p.kind_name() == "keyword_argument") {
                        if let Some(name) = kw.field(F::Name) {
                            reads.push((k.clone(), parse::range(name)));
                        }
                    }
                    self.field_aliases(*v, &mut reads);
                }
                models.push((reads, None));
            } else if callee.kind_name() == "attribute" {
                let (Some(model), Some(attr)) =
                    (callee.field(F::Object), callee.field(F::Attribute))
                else {
                    continue;
                };
                let method = ident(attr, src);
                if !matches!(&*method, "model_validate" | "validate_python" | "from_orm") {
                    continue;
                }
                let Some(obj) = pos
                    .first()
                    .copied()
                    .or_else(|| kws.iter().find(|(k, _)| k == "obj").map(|(_, v)| *v))
                else {
                    continue;
                };
                // `TypeAdapter(M).validate_python(obj)`: the model is the adapter's argument.
                let mut model = unparen(model);
                if method == "validate_python" && model.kind_name() == "call" {
                    let (mpos, _, _) = call_args(model.field(F::Arguments), src);
                    match mpos.first() {
                        Some(m) => model = unparen(*m),
                        None => continue,
                    }
                }
                let objv = self.it.eval(obj, &Env::Global, 0);
                let shown = short(self.text(obj));
                for v in self.it.eval(model, &Env::Global, 0).iter() {
                    if let Val::Class(id) = v {
                        let e = receivers
                            .entry(*id)
                            .or_insert_with(|| (VSet::default(), shown.clone()));
                        e.0.join(&objv);
                    }
                }
            }
        }
        for class in classes {
            let Some(&id) = self.it.class_ids.get(&class.id()) else {
                continue;
            };
            let Some(body) = class.field(F::Body) else {
                continue;
            };
            let mut reads = Vec::new();
            for st in named(body) {
                let Some(a) = first_named(st)
                    .filter(|a| a.kind_name() == "assignment" && a.field(F::Type).is_some())
                else {
                    continue;
                };
                if let Some(l) = a.field(F::Left).filter(|l| l.kind_name() == "identifier") {
                    reads.push((ident(l, src).into_owned(), parse::range(l)));
                }
                for f in [F::Type, F::Right] {
                    if let Some(x) = a.field(f) {
                        self.field_aliases(x, &mut reads);
                    }
                }
            }
            models.push((reads, Some(id)));
        }
        for (reads, id) in models {
            let (objv, shown) = id
                .and_then(|id| receivers.get(&id).cloned())
                .unwrap_or_else(|| (VSet::unknown(), "validated_obj".to_string()));
            let inert = id.is_some_and(|i| !receivers.contains_key(&i) && self.model_inert(i));
            for (name, range) in reads {
                if is_dunder(&name) {
                    if !BENIGN_DUNDER_READS.contains(&name.as_str()) {
                        self.report(
                            &DUNDER_ACCESS,
                            range,
                            format!("pydantic reads dunder attribute `{name}` of {shown} with `getattr` when it validates from attributes"),
                            Some("Validation from attributes (`from_attributes`, `orm_mode`, `from_orm`) reads each field's alias or name as an attribute".into()),
                        );
                    }
                    continue;
                }
                if FRAME_ATTRS.contains(&name.as_str()) {
                    self.report(
                        &FRAME_WALK,
                        range,
                        format!("pydantic reads frame attribute `{name}` with `getattr` when it validates from attributes: frames expose globals and builtins"),
                        None,
                    );
                }
                // A model the cell never hands to a validator from attributes (round 8
                // S8-3): its fields are data, not attribute reads of some object.
                if inert {
                    continue;
                }
                self.attr_findings(&objv, &name, range, &shown);
            }
        }
    }

    /// The constant names a field's `Field(...)` calls (in its annotation or default, also
    /// nested: `Annotated[Any, Field(alias="a")]`, `(Any, Field(alias="a"))`) give as `alias` or
    /// `validation_alias`, with the range of the value, pushed onto `out`. String arguments of
    /// `AliasChoices(...)`/`AliasPath(...)` values count too.
    fn field_aliases(&mut self, root: Node<'t>, out: &mut Vec<(String, TextRange)>) {
        let mut stack = vec![root];
        let mut budget = 4096u32;
        while let Some(n) = stack.pop() {
            budget = budget.saturating_sub(1);
            if budget == 0 {
                return;
            }
            if n.kind_name() == "keyword_argument" {
                if let (Some(k), Some(v)) = (n.field(F::Name), n.field(F::Value)) {
                    if matches!(&*ident(k, self.it.src), "alias" | "validation_alias") {
                        let mut vals = self.it.eval(v, &Env::Global, 0);
                        if unparen(v).kind_name() == "call" {
                            let (vpos, _, _) =
                                call_args(unparen(v).field(F::Arguments), self.it.src);
                            for a in vpos {
                                vals.join(&self.it.eval(a, &Env::Global, 0));
                            }
                        }
                        for s in vals.strs() {
                            out.push((s.to_string(), parse::range(v)));
                        }
                    }
                }
            }
            stack.extend(named(n));
        }
    }

    /// SBX005 for a method call that changes a host object in place: a container method
    /// (`update`, `setdefault`, `pop`, `clear`, `append`, ...) or an ABC's `register` on a
    /// module member or a part of a pre-bound object (`ActionResult.model_config.update(...)`,
    /// `ActionType._member_map_.clear()`, `copy.dispatch_table.update(...)`,
    /// `collections.abc.Mapping.register(str)`), and pydantic's `model_rebuild` of a pre-bound
    /// model (it rebuilds the host's validator and schema from fields the cell may have
    /// changed). Round 4 G2, G21, G24, G27.
    ///
    /// With `as_value`, `callee` is the method taken as a value without being called on the
    /// spot (`map(ActionResult.model_config.update, [...])`, `sorted(xs, key=bb.data.update)`,
    /// `partial(X.setdefault, k)`, `u = X.update`): whoever calls it later changes the same
    /// host object (round 5 H23, the CVE-2025-5120 shape for writes).
    fn check_host_mutator_call(&mut self, callee: Node<'t>, env: &Env, as_value: bool) {
        let c = unparen(callee);
        if c.kind_name() != "attribute" {
            return;
        }
        let (Some(recv), Some(attr)) = (c.field(F::Object), c.field(F::Attribute)) else {
            return;
        };
        let method = ident(attr, self.it.src).into_owned();
        let rebuild = matches!(method.as_str(), "model_rebuild" | "update_forward_refs");
        if !rebuild && !HOST_MUTATORS.contains(&method.as_str()) {
            return;
        }
        // `ActionResult.register(dict)`: an ABC's registry is host-wide (G24).
        let root_ok = rebuild || method == "register";
        let Some(what) = self.host_state(recv, env, root_ok) else {
            return;
        };
        let shown = short(self.text(recv));
        let msg = if as_value {
            format!("`{shown}.{method}` taken as a value is a bound method of host state ({what}): whatever calls it (`map`, a `key=`, `partial`, a later call) changes the host's object in place")
        } else if rebuild {
            format!("`{shown}.{method}()` rebuilds {what}: the host's own model, whose validators and schema the host uses for every instance it makes")
        } else {
            format!("`{shown}.{method}(...)` changes host state in place ({what}): it is shared with the host, which then runs with what the cell put there")
        };
        self.report(
            &MODULE_ESCAPE,
            parse::range(attr),
            msg,
            Some("Copy host data before changing it (`dict(x)`, `list(x)`); never change host classes, models or module state".into()),
        );
    }

    /// Findings for reading attribute `name` of a value that may be any of `objv` (an attribute
    /// expression, a keyword pattern, a format field, an `attrgetter` path): module escapes and
    /// denied members on module values, and, when the receiver may be a value the analysis
    /// cannot resolve, an attribute that names a host-reaching module attribute of some module
    /// (see [`unknown_host_attr`]). `shown` is the receiver's text; empty for a store, where
    /// only known modules are checked.
    fn attr_findings(&mut self, objv: &VSet, name: &str, range: TextRange, shown: &str) {
        // Any receiver: futures and tasks of every kind (the host's too) take callbacks that
        // run on the host's loop after the cell's step, like `call_soon`.
        // pydantic's deprecated `parse_file` is on every model (Colony's pre-bound
        // `ActionResult`, `Action`, `Ref` too): reported on any receiver but a module or a
        // module member, which the deny list judges (`pydantic.*parse_file*`).
        if name == "parse_file"
            && !shown.is_empty()
            && !objv
                .iter()
                .all(|v| matches!(v, Val::Module(_) | Val::Member(_)))
        {
            self.report(
                &DANGEROUS_MEMBER,
                range,
                "`parse_file` is pydantic's deprecated v1 loader on every model: it reads a host file the cell names (and unpickles it with `allow_pickle=True`)".into(),
                Some("pydantic's deprecated v1 API (`parse_raw`, `parse_file`, `load_str_bytes`) is on every model, Colony's pre-bound `ActionResult`/`Action`/`Ref` too; parse JSON with `Model.model_validate_json(text)` instead".into()),
            );
        }
        if name == "add_done_callback" && !shown.is_empty() {
            self.report(
                &DUNDER_METHOD_DEFINITION,
                range,
                "`add_done_callback` schedules a callback that the host's event loop runs after the cell's step, outside the cell's limits (like `call_soon`)".into(),
                Some("Await the future or task and run the code in the cell: `r = await fut`".into()),
            );
        }
        let mut opaque = false;
        for v in objv.iter() {
            match v {
                Val::Module(m) => {
                    let (res, esc) = self.it.module_step(m, name);
                    self.module_findings(m, name, &res, esc, range);
                    let real = m.real.clone();
                    self.allowed_submodule(&real, name, &res, range);
                }
                Val::Member(p) if !is_dunder(name) => {
                    let path = format!("{p}.{name}");
                    self.deny_check(&path, range);
                    opaque = true;
                }
                Val::Unknown | Val::Func(_) => opaque = true,
                // An instance (or the class) of a cell class: a field the class declares holds
                // data the cell stored (`d.os` of `@dataclass class Device: os: str`).
                Val::Class(id) | Val::Inst(id)
                    if !self
                        .it
                        .classes
                        .get(*id as usize)
                        .is_some_and(|c| c.fields.contains(name)) =>
                {
                    opaque = true;
                }
                _ => {}
            }
        }
        if !opaque || shown.is_empty() {
            return;
        }
        // A denied member of a module named on a receiver that may be that module
        // (`asyncio` out of a generator, then `m.create_subprocess_exec`; round 6 S6-30).
        if let Some(entry) = self.module_denied_entry(name) {
            self.report(
                &DANGEROUS_MEMBER,
                range,
                format!("`{shown}.{name}` may be a denied member of an allowed module (`{entry}`): cellguard cannot tell what `{shown}` is, and a module passed through a value flow is still that module"),
                Some("It reaches processes, files, the network or host state, or runs code later in the host; see `[lint.imports] deny-members`".into()),
            );
        }
        if let Some((target, via)) = unknown_host_attr(name) {
            let example = if via.is_empty() {
                String::new()
            } else {
                format!(" (`{via}.{name}` is `{target}`)")
            };
            self.report(
                &MODULE_ESCAPE,
                range,
                format!("`{shown}.{name}` may be module `{target}`, which reaches the host: cellguard cannot tell what `{shown}` is, and `{name}` is a host-reaching attribute of modules{example}"),
                Some("A module passed through a container, parameter, call or instance attribute is still a module; attributes named after host modules are reported whatever the receiver".into()),
            );
        }
    }

    /// Records, for every keyword pattern of `match` statement `m` that sits in class patterns
    /// all the way up, the subject expression (when there is one) and the keywords read on the
    /// way (`case C(a=D(b=x))`: `b` reads `subject.a.b`). Top-down, so no `parent()` scans.
    fn record_match(&mut self, m: Node<'t>) {
        let mut cursor = m.walk();
        let subjects: Vec<Node<'t>> = m.children_by_field_name("subject", &mut cursor).collect();
        let subject = if subjects.len() == 1 {
            Some(subjects[0])
        } else {
            None
        };
        // `match getattr: case g:` binds the subject under another name (round 9 S9-16).
        for s in &subjects {
            self.check_escape(*s, &Env::Global, "bound by a `match` capture pattern");
        }
        let Some(body) = m.field(F::Body) else { return };
        let mut stack: Vec<(Node<'t>, Vec<String>)> = Vec::new();
        for clause in named(body) {
            for c in named(clause) {
                if c.kind() == "case_pattern" {
                    stack.push((c, Vec::new()));
                }
            }
        }
        while let Some((n, path)) = stack.pop() {
            if path.len() > 64 {
                continue;
            }
            for c in named(n) {
                match c.kind() {
                    "keyword_pattern" => {
                        self.kw_subjects.insert(c.id(), (subject, path.clone()));
                        let kids = named(c);
                        if let Some(first) = kids.first() {
                            let mut p = path.clone();
                            p.push(ident(*first, self.it.src).into_owned());
                            for v in kids.iter().skip(1) {
                                stack.push((*v, p.clone()));
                            }
                        }
                    }
                    "class_pattern" => {
                        // Positional sub-patterns read the attributes named by the class's
                        // `__match_args__` (`case P(Q(o))` with `@dataclass class P: base_events:
                        // int` reads `subject.base_events`).
                        let args = named(c)
                            .first()
                            .filter(|f| f.kind() == "dotted_name")
                            .and_then(|f| self.match_args(&ident(*f, self.it.src), 0));
                        let mut i = 0usize;
                        for k in named(c) {
                            match k.kind() {
                                "case_pattern" => {
                                    match args.as_ref().and_then(|a| a.get(i)) {
                                        Some(field) => {
                                            self.pos_subjects.insert(
                                                k.id(),
                                                (subject, path.clone(), field.clone()),
                                            );
                                            let mut p = path.clone();
                                            p.push(field.clone());
                                            stack.push((k, p));
                                        }
                                        None => stack.push((k, path.clone())),
                                    }
                                    i += 1;
                                }
                                "keyword_pattern" => {
                                    self.kw_subjects.insert(k.id(), (subject, path.clone()));
                                    let kids = named(k);
                                    if let Some(first) = kids.first() {
                                        let mut p = path.clone();
                                        p.push(ident(*first, self.it.src).into_owned());
                                        for v in kids.iter().skip(1) {
                                            stack.push((*v, p.clone()));
                                        }
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    "case_pattern" | "union_pattern" | "as_pattern" => {
                        stack.push((c, path.clone()));
                    }
                    _ => {}
                }
            }
        }
    }

    /// True when `node` is the type of modules: `type(m)` of a module value, `types.ModuleType`,
    /// or a name assigned one of those in the cell.
    fn is_module_type(&mut self, node: Node<'t>, env: &Env, depth: u32) -> bool {
        let node = unparen(node);
        match node.kind_name() {
            "call" => {
                let (targs, _, _) = call_args(node.field(F::Arguments), self.it.src);
                targs.len() == 1
                    && node
                        .field(F::Function)
                        .is_some_and(|f| self.it.eval(f, env, 0).has_builtin("type"))
                    && self
                        .it
                        .eval(targs[0], env, 0)
                        .iter()
                        .any(|v| matches!(v, Val::Module(_)))
            }
            "identifier" | "attribute" if self.text(node).trim_end().ends_with("ModuleType") => {
                true
            }
            "identifier" if depth < 4 => {
                let name = ident(node, self.it.src).into_owned();
                self.assignments_of(&name)
                    .iter()
                    .copied()
                    .any(|r| r.id() != node.id() && self.is_module_type(r, &Env::Global, depth + 1))
            }
            _ => false,
        }
    }

    /// The attribute names a class pattern on class `name` reads positionally: the class's
    /// `__match_args__`, when the class is defined in the cell with an explicit
    /// `__match_args__ = (...)` (folded from constants) or is a dataclass or `NamedTuple`,
    /// whose generated `__match_args__` are its annotated fields in order (fields of base
    /// classes defined in the cell first). `None` for classes cellguard cannot see.
    fn match_args(&mut self, name: &str, depth: u32) -> Option<Vec<String>> {
        if depth > 8 {
            return None;
        }
        if self.class_defs.is_none() {
            let mut defs = rustc_hash::FxHashMap::default();
            if let Some(index) = self.index() {
                for n in index.of_kinds(&["class_definition"]) {
                    if let Some(id) = n.field(F::Name) {
                        defs.entry(ident(id, self.it.src).into_owned()).or_insert(n);
                    }
                }
            }
            self.class_defs = Some(defs);
        }
        let Some(class) = self.class_defs.as_ref()?.get(name).copied() else {
            return self.functional_match_args(name);
        };
        let body = class.field(F::Body)?;
        let mut fields: Vec<String> = Vec::new();
        let mut kw_only_rest = false;
        for stmt in named(body) {
            let Some(a) = first_named(stmt).filter(|a| a.kind_name() == "assignment") else {
                continue;
            };
            let Some(l) = a.field(F::Left).filter(|l| l.kind_name() == "identifier") else {
                continue;
            };
            let lname = ident(l, self.it.src).into_owned();
            if lname == "__match_args__" {
                let r = a.field(F::Right)?;
                let v = self.it.eval(r, &Env::Global, 0);
                let mut out = Vec::new();
                for x in v.iter() {
                    if let Some(items) = as_sequence(x) {
                        for item in items {
                            if let Some(s) = item.strs().next() {
                                out.push(s.to_string());
                            }
                        }
                    }
                }
                return Some(out);
            }
            if a.child_by_field_name("type").is_some() {
                let ty = a
                    .child_by_field_name("type")
                    .map(|t| self.text(t))
                    .unwrap_or("");
                // `dataclasses` leaves out of `__match_args__` what `__init__` does not take
                // positionally: class variables, fields after `_: KW_ONLY`, and fields
                // declared `field(kw_only=True)` or `field(init=False)`.
                let value: String = a
                    .field(F::Right)
                    .map(|r| self.text(r))
                    .unwrap_or("")
                    .split_whitespace()
                    .collect();
                if ty.contains("KW_ONLY") {
                    kw_only_rest = true;
                } else if !ty.contains("ClassVar")
                    && !kw_only_rest
                    && !value.contains("kw_only=True")
                    && !value.contains("init=False")
                {
                    fields.push(lname);
                }
            }
        }
        let decorator: Option<String> = self
            .it
            .parent(class)
            .filter(|p| p.kind_name() == "decorated_definition")
            .and_then(|p| {
                named(p)
                    .into_iter()
                    .find(|d| d.kind_name() == "decorator" && self.text(*d).contains("dataclass"))
            })
            .map(|d| self.text(d).split_whitespace().collect());
        let decorated = decorator.is_some();
        if decorator
            .as_deref()
            .is_some_and(|d| d.contains("kw_only=True") || d.contains("match_args=False"))
        {
            // No positional fields of its own (`match_args=False` keeps the inherited ones).
            fields.clear();
        }
        let bases: Vec<Node<'t>> = class.field(F::Superclasses).map(named).unwrap_or_default();
        let named_tuple = bases
            .iter()
            .any(|b| self.text(unparen(*b)).ends_with("NamedTuple"));
        if !decorated && !named_tuple {
            return None;
        }
        let mut all = Vec::new();
        for b in bases {
            let b = unparen(b);
            if b.kind_name() == "identifier" {
                let bname = ident(b, self.it.src).into_owned();
                if bname != name {
                    if let Some(inherited) = self.match_args(&bname, depth + 1) {
                        all.extend(inherited);
                    }
                }
            }
        }
        for f in fields {
            if !all.contains(&f) {
                all.push(f);
            }
        }
        Some(all)
    }

    /// `__match_args__` of a class built by a call and assigned to `name`: `type("P", (), {
    /// "__match_args__": (...)})`, `dataclasses.make_dataclass("P", ["a", ("b", int)])`,
    /// `collections.namedtuple("P", "a b")` and `typing.NamedTuple("P", [("a", int)])`.
    fn functional_match_args(&mut self, name: &str) -> Option<Vec<String>> {
        let strings = |it: &Interp<'t, 'a>, n: Node<'t>| -> Vec<String> {
            it.eval(n, &Env::Global, 0)
                .strs()
                .map(str::to_string)
                .collect()
        };
        for r in self.assignments_of(name).iter().copied() {
            let r = unparen(r);
            if r.kind_name() != "call" {
                continue;
            }
            let Some((last, pos, kws)) = self.call_parts(r) else {
                continue;
            };
            let mut out: Vec<String> = Vec::new();
            match last.as_str() {
                "type" if pos.len() == 3 => {
                    let d = unparen(pos[2]);
                    if d.kind_name() != "dictionary" {
                        continue;
                    }
                    for pair in named(d) {
                        let (Some(k), Some(v)) = (pair.field(F::Key), pair.field(F::Value)) else {
                            continue;
                        };
                        if strings(&self.it, k).iter().any(|k| k == "__match_args__") {
                            for x in self.it.eval(v, &Env::Global, 0).iter() {
                                for item in as_sequence(x).unwrap_or_default() {
                                    out.extend(item.strs().next().map(str::to_string));
                                }
                            }
                            return Some(out);
                        }
                    }
                }
                "make_dataclass" | "NamedTuple" | "namedtuple" => {
                    if let Some(fields) = pos.get(1).copied().or_else(|| {
                        kws.iter()
                            .find(|(k, _)| k == "fields" || k == "field_names")
                            .map(|(_, v)| *v)
                    }) {
                        let fields = unparen(fields);
                        match fields.kind_name() {
                            "list" | "tuple" => {
                                for item in named(fields) {
                                    let item = unparen(item);
                                    let head = if matches!(item.kind_name(), "tuple" | "list") {
                                        named(item).first().copied()
                                    } else {
                                        Some(item)
                                    };
                                    if let Some(h) = head {
                                        out.extend(strings(&self.it, h).into_iter().take(1));
                                    }
                                }
                            }
                            _ => {
                                for s in strings(&self.it, fields).into_iter().take(1) {
                                    out.extend(
                                        s.split(|c: char| c == ',' || c.is_whitespace())
                                            .filter(|x| !x.is_empty())
                                            .map(str::to_string),
                                    );
                                }
                            }
                        }
                    }
                    if last == "NamedTuple" {
                        out.extend(kws.iter().map(|(k, _)| k.clone()));
                    }
                    return Some(out);
                }
                _ => {}
            }
        }
        None
    }

    /// Checks the positional sub-patterns of class pattern `node` whose attribute names come
    /// from `__match_args__` (see [`Self::match_args`]), like keyword patterns.
    fn check_positional_patterns(&mut self, node: Node<'t>, env: &Env) {
        for k in named(node) {
            let Some((subject, path, name)) = self.pos_subjects.get(&k.id()).cloned() else {
                continue;
            };
            let range = parse::range(k);
            if is_dunder(&name) && !BENIGN_DUNDER_READS.contains(&name.as_str()) {
                self.report(
                    &DUNDER_ACCESS,
                    range,
                    format!("Positional class pattern reads dunder attribute `{name}` (named by the class's `__match_args__`)"),
                    Some("A positional sub-pattern is `getattr(subject, __match_args__[i])`".into()),
                );
            }
            if FRAME_ATTRS.contains(&name.as_str()) {
                self.report(
                    &FRAME_WALK,
                    range,
                    format!("Positional class pattern reads frame attribute `{name}` (named by the class's `__match_args__`): frames expose the globals and builtins of the code that runs the cell"),
                    None,
                );
            }
            let (subjv, shown) = self.subject_value(subject, &path, env);
            self.attr_findings(&subjv, &name, range, &shown);
        }
    }

    /// The value and text of a `match` subject after reading the attributes of `path`.
    fn subject_value(
        &self,
        subject: Option<Node<'t>>,
        path: &[String],
        env: &Env,
    ) -> (VSet, String) {
        let (mut v, mut shown) = match subject {
            Some(s) => (self.it.eval(s, env, 0), short(self.text(s))),
            None => (VSet::unknown(), "the match subject".to_string()),
        };
        for name in path {
            let mut next = VSet::default();
            for x in v.iter() {
                next.join(&self.it.attr_value(x, name));
            }
            v = next.or_unknown();
            shown = format!("{shown}.{name}");
        }
        (v, shown)
    }

    /// What the subject of the class pattern holding keyword pattern `kw` may be, and its text
    /// (see [`Self::record_match`]); unknown when the pattern sits in a sequence or mapping
    /// pattern or the statement has several subjects.
    fn pattern_subject(&self, kw: Node<'t>, env: &Env) -> (VSet, String) {
        match self.kw_subjects.get(&kw.id()) {
            Some((subject, path)) => self.subject_value(*subject, path, env),
            None => (VSet::unknown(), "the match subject".to_string()),
        }
    }

    /// A dotted name in a `match` pattern (`case typing.contextlib.os.name:`, the class of a class
    /// pattern) evaluates its attribute chain: each step is checked like an attribute.
    fn check_pattern_name(&mut self, node: Node<'t>, env: &Env) {
        let parts = named(node);
        let Some(first) = parts.first() else { return };
        let mut v = self.it.lookup(&ident(*first, self.it.src), env);
        let mut shown = ident(*first, self.it.src).into_owned();
        for part in &parts[1..] {
            let name = ident(*part, self.it.src).into_owned();
            if is_dunder(&name) && !BENIGN_DUNDER_READS.contains(&name.as_str()) {
                self.report(
                    &DUNDER_ACCESS,
                    parse::range(*part),
                    format!("Pattern reads dunder attribute `{name}`"),
                    dunder_help(&name),
                );
            }
            self.attr_findings(&v, &name, parse::range(*part), &shown);
            let mut next = VSet::default();
            for x in v.iter() {
                next.join(&self.it.attr_value(x, &name));
            }
            v = next.or_unknown();
            shown = format!("{shown}.{name}");
        }
    }

    /// Findings for `m.name` on a module value: escapes, import machinery, frames, denials.
    fn module_findings(
        &mut self,
        m: &ModVal,
        name: &str,
        res: &VSet,
        esc: Option<Escape>,
        range: TextRange,
    ) {
        if let Some(e) = esc {
            let (msg, help) = self.escape_message(&e);
            self.report(&MODULE_ESCAPE, range, msg, help);
        }
        if importlib_family(&m.real) && !is_dunder(name) {
            self.report(
                &DYNAMIC_IMPORT,
                range,
                format!("`{}.{name}` is import machinery: it imports modules by name, bypassing the import allowlist", m.path),
                None,
            );
        }
        if &*m.real == "sys" && name == "modules" {
            self.report(
                &DYNAMIC_IMPORT,
                range,
                format!(
                    "`{}.modules` hands out every loaded module (`sys.modules[\"os\"]`)",
                    m.path
                ),
                None,
            );
        }
        if frame_function(&m.real, name) {
            self.report(
                &FRAME_WALK,
                range,
                format!(
                    "`{}.{name}` gives access to execution frames and their globals",
                    m.path
                ),
                None,
            );
        }
        for r in res.iter() {
            match r {
                Val::Member(p) => {
                    self.deny_check(p, range);
                }
                Val::Module(rm) if !self.deny_check(&rm.real, range) => {
                    self.deny_check(&rm.path, range);
                }
                _ => {}
            }
        }
    }

    fn escape_message(&self, e: &Escape) -> (String, Option<String>) {
        let table = self.it.cfg.table;
        match e {
            Escape::Private { module, real, name } => {
                let target = table
                    .module_attr(real, name)
                    .map(|t| format!(" (it is module `{t}`)"))
                    .unwrap_or_default();
                (
                    format!("`{module}.{name}` is a private attribute of module `{module}`{target}"),
                    Some("Private module attributes hold what a module imported for itself (`collections._sys` is `sys`); use the public API".into()),
                )
            }
            Escape::Outside { path, target, leads } => {
                let msg = match table.family(target) {
                    Some(f) => format!("`{path}` is module `{target}`, which reaches the host (`{f}`)"),
                    None => format!("`{path}` is module `{target}`, outside the import allowlist"),
                };
                let help = match leads {
                    Some((p, t)) if p != path => Some(format!("From there `{p}` reaches `{t}`")),
                    _ => Some("An allowed module's attributes include the modules it imported; they are not allowed by allowing it".into()),
                };
                (msg, help)
            }
            Escape::Parent { module, name } => (
                format!("`{module}.{name}` uses module `{module}`, which is not allowed: only some of its submodules are"),
                Some(format!("`import {module}.x` binds the parent `{module}`; allowing a submodule never allows its parent")),
            ),
            Escape::Heuristic { path } => (
                format!("`{path}` reaches a host module through an allowed module"),
                Some("This module is not in cellguard's reachability table; the attribute name is that of a host-reaching module".into()),
            ),
        }
    }

    /// `SBX009` for an asyncio task the cell creates and never awaits, gathers, waits for or
    /// cancels ([`super::tasks`]): `asyncio.create_task`, `ensure_future`, `gather`, `shield`,
    /// the `asyncio.Task` constructor, `as_completed` (it wraps its coroutines in tasks when
    /// called) and an `asyncio.wait` that may return early (its pending set), also through
    /// aliases and `getattr`, and `.create_task`/`.ensure_future` on any receiver but the `as`
    /// name of an enclosing `async with` (a `TaskGroup` awaits its tasks).
    fn check_task(&mut self, node: Node<'t>, callee: Node<'t>, cv: &VSet) {
        const MAKERS: &[&str] = &[
            "create_task",
            "ensure_future",
            "gather",
            "shield",
            "Task",
            "as_completed",
        ];
        let resolved = cv.iter().any(|v| {
            matches!(v, Val::Member(p) if p.starts_with("asyncio")
            && !p.contains("TaskGroup")
            && p.rsplit('.').next().is_some_and(|l| {
                MAKERS.contains(&l)
                    || (l == "wait" && super::tasks::wait_is_partial(node, self.it.src))
            }))
        });
        let f = unparen(callee);
        let by_name = !resolved
            && cv.iter().all(|v| matches!(v, Val::Unknown))
            && f.kind_name() == "attribute"
            && f.field(F::Attribute).is_some_and(|a| {
                matches!(&*ident(a, self.it.src), "create_task" | "ensure_future")
            })
            && !f.field(F::Object).map(unparen).is_some_and(|o| {
                o.kind_name() == "identifier"
                    && super::tasks::task_group_receiver(node, o, self.it.src)
            });
        // `shield(t)` of a task the cell holds by name makes no task of its own: `t` is
        // followed from where it was made (through the shield, see `tasks`).
        let shields_name = f
            .field(F::Attribute)
            .or(Some(f).filter(|f| f.kind_name() == "identifier"))
            .is_some_and(|a| &*ident(a, self.it.src) == "shield")
            && node
                .field(F::Arguments)
                .and_then(first_named)
                .is_some_and(|a| unparen(a).kind_name() == "identifier");
        // `asyncio.shield(x)`: what it shields keeps running when the cell is cancelled (an
        // abort, an executor's timeout), however the shield itself is awaited (round 7 S7-8).
        let shield = cv.iter().any(|v| {
            matches!(v, Val::Member(p) if p.starts_with("asyncio") && p.rsplit('.').next() == Some("shield"))
        });
        if shield {
            self.report(
                &DUNDER_METHOD_DEFINITION,
                parse::range(node),
                format!("`{}` protects its argument from cancellation: when the cell is aborted or timed out, the shielded work keeps running on the host's event loop", short(self.text(callee))),
                Some("Await the work directly; a cell must stop when it is cancelled".into()),
            );
            return;
        }
        if (resolved || by_name)
            && !shields_name
            && super::tasks::dangling(&mut self.task_uses, node, self.it.src)
        {
            self.report(
                &DUNDER_METHOD_DEFINITION,
                parse::range(node),
                format!("`{}` starts a task the cell never awaits, gathers or cancels: it keeps running on the host's event loop after the cell has finished", short(self.text(callee))),
                Some("Await the task in the cell (`await t`, `await asyncio.gather(*tasks)`), or use `async with asyncio.TaskGroup() as tg:`".into()),
            );
        }
    }

    /// Reports `path` when a deny-members entry matches it; true when it did.
    fn deny_check(&mut self, path: &str, range: TextRange) -> bool {
        let hit = self.deny.matches(path, self.it.cfg.table);
        match hit {
            Some(entry) => {
                let shown = path
                    .replace(
                        "asyncio.AbstractEventLoopPolicy",
                        "asyncio event-loop policy",
                    )
                    .replace("asyncio.AbstractEventLoop", "asyncio event loop");
                self.report(
                    &DANGEROUS_MEMBER,
                    range,
                    format!("`{shown}` is a denied member of an allowed module (`{entry}`)"),
                    Some("It reaches processes, files, the network or host state, or runs code later in the host; see `[lint.imports] deny-members`".into()),
                );
                true
            }
            None => false,
        }
    }

    // ---- subscripts -------------------------------------------------------------------------

    fn check_subscript(&mut self, node: Node<'t>, env: &Env, nctx: &NodeCtx) {
        let Some(value) = node.field(F::Value) else {
            return;
        };
        let mut cursor = node.walk();
        let subs: Vec<Node> = node
            .children_by_field_name("subscript", &mut cursor)
            .filter(|c| c.kind_name() != "comment")
            .collect();
        if subs.len() != 1 || subs[0].kind_name() == "slice" {
            return;
        }
        let sub = subs[0];
        let ctx = nctx.ctx;

        let vals = self.it.eval(value, env, 0);
        let keys = self.it.eval(sub, env, 0);
        self.check_namespace_keys(&vals, &keys, parse::range(sub), ctx, value);
        // `vars(r)["items"] = spy`, `R.__dict__["items"] = spy` (round 6).
        if ctx == Ctx::Store {
            if let Some(owner) = self.namespace_owner(value) {
                let written: Vec<(String, TextRange)> = keys
                    .strs()
                    .map(|k| (k.to_string(), parse::range(sub)))
                    .collect();
                let stored = self
                    .it
                    .parent(node)
                    .filter(|a| a.kind_name() == "assignment" && is_field(*a, F::Left, node))
                    .and_then(|a| a.field(F::Right));
                self.check_base_method_store(owner, &written, stored, env);
            }
        }
        // `ActionResult.model_config["json_schema_extra"] = f`, `copy.dispatch_table[T] = f`,
        // `del ActionType._member_map_["X"]`: an item store into host state (G2, G21).
        if ctx != Ctx::Load {
            if let Some(what) = self.host_state(value, env, false) {
                let shown = short(self.text(value));
                let verb = match ctx {
                    Ctx::Del => "Deleting",
                    Ctx::Aug => "Augmenting",
                    _ => "Writing",
                };
                self.report(
                    &MODULE_ESCAPE,
                    parse::range(node),
                    format!("{verb} an item of `{shown}` changes host state ({what}): it is shared with the host, which then runs with what the cell put there"),
                    Some("Copy host data before changing it (`dict(x)`); never change host classes, models or module state".into()),
                );
            }
        }
        if ctx == Ctx::Load && self.type_subscript_evaluator(value, &vals) {
            // `pydantic.RootModel[s]`, `Box[s]` of a generic model: the parameters are type
            // expressions pydantic evaluates when it builds the parametrized class (G8).
            let items = if sub.kind_name() == "tuple" {
                named(sub)
            } else {
                vec![sub]
            };
            let label = format!(
                "`{}[...]`, which evaluates its parameters as type expressions",
                short(self.text(value))
            );
            self.check_type_args(items, env, &label, false);
        }
        if ctx == Ctx::Load && self.it.is_obj_hot(node) {
            let v = self.it.eval(node, env, 0);
            self.builtin_refs(node, &v, self.text(node), nctx.callee);
        }
    }

    /// Keys read from (or written to) namespace dicts and dict-form modules (`vars(m)["_os"]`,
    /// `m.__dict__.get(k)`, `__builtins__["eval"]`): the same checks as attributes.
    fn check_namespace_keys(
        &mut self,
        vals: &VSet,
        keys: &VSet,
        srange: TextRange,
        ctx: Ctx,
        value: Node<'t>,
    ) {
        let mut namespace = false;
        for v in vals.iter() {
            let inner = match v {
                Val::Ns(inner) => inner.as_ref().clone(),
                Val::Module(_) => v.clone(),
                _ => continue,
            };
            namespace = true;
            for k in keys.strs().map(str::to_string).collect::<Vec<_>>() {
                if is_dunder(&k) && (ctx != Ctx::Load || !BENIGN_DUNDER_READS.contains(&k.as_str()))
                {
                    self.report(
                        &DUNDER_ACCESS,
                        srange,
                        format!("Namespace dict lookup of dunder `{k}`"),
                        dunder_help(&k),
                    );
                }
                match &inner {
                    Val::Module(m) => {
                        let (res, esc) = self.it.module_step(m, &k);
                        self.module_findings(m, &k, &res, esc, srange);
                    }
                    // `vars(x)["_os"]` on a value cellguard cannot resolve is `x._os`.
                    Val::Unknown if ctx == Ctx::Load && !is_dunder(&k) => {
                        let shown = short(self.text(value));
                        self.attr_findings(&VSet::unknown(), &k, srange, &shown);
                    }
                    _ => {}
                }
            }
        }
        if namespace && keys.has_unknown() {
            self.report(
                &DYNAMIC_ATTRIBUTE_ACCESS,
                srange,
                format!(
                    "Namespace dict `{}` read with a computed key",
                    short(self.text(value))
                ),
                Some("The name it reads cannot be checked; write the attribute out".into()),
            );
        }
    }

    // ---- calls ------------------------------------------------------------------------------

    fn check_call(&mut self, node: Node<'t>, env: &Env, nctx: &NodeCtx) {
        let Some(callee) = node.field(F::Function) else {
            return;
        };
        let (pos, kws, splat) = call_args(node.field(F::Arguments), self.it.src);
        let cv = self.it.eval(callee, env, 0);
        let crange = parse::range(callee);
        self.check_task(node, callee, &cv);
        for b in cv.builtins().collect::<Vec<_>>() {
            match b {
                "getattr" | "hasattr" | "setattr" | "delattr" => {
                    self.check_reflective(node, b, &pos, splat, env)
                }
                "__import__" => {
                    let arg = pos
                        .first()
                        .copied()
                        .or_else(|| kws.iter().find(|(k, _)| k == "name").map(|(_, v)| *v));
                    let names: Vec<String> = arg
                        .map(|a| self.it.eval(a, env, 0))
                        .map(|v| v.strs().map(str::to_string).collect())
                        .unwrap_or_default();
                    let msg = if names.is_empty() {
                        "`__import__` with a computed module name imports any module, bypassing the import allowlist".to_string()
                    } else {
                        format!(
                            "`__import__` imports `{}` by name, bypassing the import allowlist",
                            names.join("`, `")
                        )
                    };
                    self.report(&DYNAMIC_IMPORT, crange, msg, None);
                }
                "type" if pos.len() == 3 => {
                    self.check_type_dict(pos[2], env, "type(...)");
                    self.check_type_base_overrides(pos[1], pos[2], env);
                }
                // `type(int)("M", (), ns)`, `T = type(Ref); T("M", (Ref,), ns)`, and calls of a
                // metaclass the cell built: only when the call looks like a class build (a
                // constant name or a bases tuple), not `type(self)(a, b, c)`.
                METACLASS if pos.len() == 3 => {
                    let name_str = self.it.eval(pos[0], env, 0).strs().next().is_some();
                    let bases_seq = self
                        .it
                        .eval(pos[1], env, 0)
                        .iter()
                        .any(|v| matches!(v, Val::Seq(_)));
                    if name_str || bases_seq {
                        self.check_type_dict(pos[2], env, "type(...)");
                        self.check_type_base_overrides(pos[1], pos[2], env);
                    }
                }
                _ => {}
            }
        }
        self.check_in_place_mutator(node, callee, &cv, env);
        self.check_host_mutator_call(callee, env, false);
        for (k, v) in &kws {
            self.check_computed_alias(k, *v, env);
            // pydantic's `TypeAdapter(t, _parent_depth=n)` and `model_rebuild(
            // _parent_namespace_depth=n)` take `sys._getframe(n)` and evaluate type strings in
            // that frame's globals and locals: past the cell's frame, the executor's (round 6
            // S6-15). The default (2) is the caller's frame.
            if matches!(k.as_str(), "_parent_depth" | "_parent_namespace_depth")
                && self.text(unparen(*v)) != "2"
            {
                self.report(
                    &FRAME_WALK,
                    parse::range(*v),
                    format!("`{k}` makes pydantic take `sys._getframe(n)` and evaluate type strings in that frame's globals and locals, which may be the executor's"),
                    Some("Leave `_parent_depth`/`_parent_namespace_depth` at their default".into()),
                );
            }
        }
        // `str.format` / `str.format_map` passed as a value (`partial(str.format, t)`,
        // `map(str.format, ts, xs)`): the templates among the following arguments (or their
        // elements) are formatted on arguments cellguard cannot see.
        if let Some(i) = pos.iter().position(|a| {
            let t: String = self
                .text(unparen(*a))
                .chars()
                .filter(|c| !c.is_whitespace() && !matches!(c, '(' | ')' | '\\'))
                .collect();
            matches!(
                t.as_str(),
                "str.format" | "str.format_map" | "string.Formatter().format"
            )
        }) {
            let mut tv = VSet::default();
            for a in pos.iter().skip(i + 1) {
                let v = self.it.eval(*a, env, 0);
                tv.join(&v);
                for x in v.iter() {
                    if let Val::Seq(items) = x {
                        for item in items.iter() {
                            tv.join(item);
                        }
                    }
                }
            }
            if tv.strs().next().is_some() {
                let args = FormatArgs {
                    opaque: true,
                    ..FormatArgs::default()
                };
                self.check_format(node, &tv);
                self.check_format_fields(node, &tv, &args);
            }
        }
        // `Model.model_rebuild(_types_namespace={...})` (and pydantic v1's
        // `update_forward_refs(**localns)`) evaluates the model's string annotations against
        // a namespace the cell supplies, with the host's unrestricted builtins.
        if let Some(method) = unparen(callee)
            .field(F::Attribute)
            .filter(|_| unparen(callee).kind_name() == "attribute")
            .map(|a| ident(a, self.it.src).into_owned())
        {
            let types_ns = kws.iter().find(|(k, _)| k == "_types_namespace");
            if (method == "model_rebuild" && (types_ns.is_some() || splat))
                || (method == "update_forward_refs" && (!kws.is_empty() || splat))
            {
                let at = types_ns.map(|(_, v)| *v).unwrap_or(node);
                self.report(
                    &CODE_EXECUTION_BUILTIN,
                    parse::range(at),
                    format!("`{method}` with a namespace from the cell evaluates the model's string annotations in it, with the host's builtins"),
                    Some("Define the referenced types before the model, or call `model_rebuild()` without a namespace".into()),
                );
            }
        }
        // `dataclasses.make_dataclass(..., namespace=ns)` puts `ns` into the class body.
        let callee_text: String = self
            .text(unparen(callee))
            .chars()
            .filter(|c| !c.is_whitespace() && !matches!(c, '(' | ')' | '\\'))
            .collect();
        if callee_text.rsplit('.').next() == Some("make_dataclass")
            || cv
                .iter()
                .any(|v| matches!(v, Val::Member(p) if p.ends_with(".make_dataclass")))
        {
            if let Some((_, ns)) = kws.iter().find(|(k, _)| k == "namespace") {
                self.check_type_dict(*ns, env, "make_dataclass(...)");
            }
        }
        if callee_text.rsplit('.').next() == Some("create_model")
            || cv
                .iter()
                .any(|v| matches!(v, Val::Member(p) if p.ends_with(".create_model")))
        {
            self.check_create_model(node, &kws, env);
        }
        // Code strings: what `exec("...")` or a tool's `code=` argument would run.
        for b in cv.builtins().collect::<Vec<_>>() {
            if matches!(b, "eval" | "exec" | "compile") {
                let arg = pos
                    .first()
                    .copied()
                    .or_else(|| kws.iter().find(|(k, _)| k == "source").map(|(_, v)| *v));
                if let Some(a) = arg {
                    self.check_code_string(a, env, &format!("`{b}`"));
                }
            }
        }
        self.check_type_sinks(callee, &cv, &pos, &kws, env);
        if cv.only_unknown() {
            if let Some((_, a)) = kws.iter().find(|(k, _)| k == "code") {
                let label = format!("`{}(code=...)`", short(self.text(callee)));
                self.check_code_string(*a, env, &label);
            }
        }
        let inner_callee = unparen(callee);
        if inner_callee.kind_name() == "attribute" {
            if let (Some(obj), Some(attr)) = (
                inner_callee.field(F::Object),
                inner_callee.field(F::Attribute),
            ) {
                if matches!(
                    &*ident(attr, self.it.src),
                    "get" | "pop" | "setdefault" | "__getitem__" | "__setitem__"
                ) {
                    if let Some(first) = pos.first() {
                        let vals = self.it.eval(obj, env, 0);
                        let keys = self.it.eval(*first, env, 0);
                        self.check_namespace_keys(
                            &vals,
                            &keys,
                            parse::range(*first),
                            Ctx::Load,
                            obj,
                        );
                    }
                }
            }
        }
        for v in cv.iter() {
            if let Val::Member(p) = v {
                let last = p.rsplit('.').next().unwrap_or("");
                if importlib_family(p) && inner_callee.kind_name() != "attribute" {
                    self.report(
                        &DYNAMIC_IMPORT,
                        crange,
                        format!("`{}` is `{p}`: it imports modules by name, bypassing the import allowlist", short(self.text(callee))),
                        None,
                    );
                }
                if p.starts_with("operator.") && matches!(last, "attrgetter" | "methodcaller") {
                    // The names are read later, with `getattr`, from an object cellguard does
                    // not see here: checked as attributes of an unknown receiver.
                    let named_args: &[Node<'t>] = if last == "methodcaller" {
                        &pos[..pos.len().min(1)]
                    } else {
                        &pos
                    };
                    for a in named_args {
                        let v = self.it.eval(*a, env, 0);
                        let names: Vec<String> = v.strs().map(str::to_string).collect();
                        for n in names {
                            if let Some(d) = n
                                .split('.')
                                .find(|s| is_dunder(s) && !BENIGN_DUNDER_READS.contains(s))
                            {
                                self.report(
                                    &DUNDER_ACCESS,
                                    parse::range(*a),
                                    format!("`{last}` reads dunder attribute `{d}`"),
                                    None,
                                );
                            }
                            let mut cur = VSet::unknown();
                            let mut shown = format!("{last}(...)");
                            for seg in n.split('.') {
                                if FRAME_ATTRS.contains(&seg) {
                                    self.report(
                                        &FRAME_WALK,
                                        parse::range(*a),
                                        format!("`{last}` reads frame attribute `{seg}`: frames expose globals and builtins"),
                                        None,
                                    );
                                }
                                if !is_dunder(seg) {
                                    self.attr_findings(&cur, seg, parse::range(*a), &shown);
                                }
                                let mut next = VSet::default();
                                for x in cur.iter() {
                                    next.join(&self.it.attr_value(x, seg));
                                }
                                cur = next.or_unknown();
                                shown = format!("{shown}.{seg}");
                            }
                        }
                        if v.has_unknown() {
                            self.report(
                                &DYNAMIC_ATTRIBUTE_ACCESS,
                                parse::range(*a),
                                format!("`{last}` with a computed attribute name: cellguard cannot tell which attribute it reaches"),
                                Some("`operator.attrgetter(name)(obj)` is `getattr(obj, name)`".into()),
                            );
                        }
                    }
                }
                if p.starts_with("functools.") && matches!(last, "update_wrapper" | "wraps") {
                    self.check_wrapper_names(last, &pos, &kws, env);
                }
                // A library metaclass called as `type(name, bases, ns)` is (`typing.ABCMeta`,
                // `typing.NamedTupleMeta`, `enum.EnumMeta`): the namespace's dunder keys are
                // methods of the new class (round 6 S6-20).
                if pos.len() == 3 && (last.ends_with("Meta") || last == "EnumType") {
                    self.check_type_dict(pos[2], env, "type(...)");
                    self.check_type_base_overrides(pos[1], pos[2], env);
                }
                if inner_callee.kind_name() != "attribute" && !self.deny_entries.is_empty() {
                    self.deny_check(p, crange);
                }
            }
        }
        // `operator.attrgetter("a.b")(obj)` reads `obj.a.b`.
        if inner_callee.kind_name() == "call" {
            if let (Some(inner_fn), Some(obj)) = (inner_callee.field(F::Function), pos.first()) {
                let getter = self
                    .it
                    .eval(inner_fn, env, 0)
                    .iter()
                    .any(|v| matches!(v, Val::Member(p) if &**p == "operator.attrgetter"));
                if getter {
                    let (ipos, _, _) = call_args(inner_callee.field(F::Arguments), self.it.src);
                    let objv = self.it.eval(*obj, env, 0);
                    for a in ipos {
                        let names: Vec<String> =
                            self.it.eval(a, env, 0).strs().map(str::to_string).collect();
                        for n in names {
                            let mut cur = objv.clone();
                            let mut shown = short(self.text(*obj));
                            for seg in n.split('.') {
                                if !is_dunder(seg) {
                                    self.attr_findings(&cur, seg, parse::range(a), &shown);
                                }
                                let mut next = VSet::default();
                                for x in cur.iter() {
                                    next.join(&self.it.attr_value(x, seg));
                                }
                                cur = next.or_unknown();
                                shown = format!("{shown}.{seg}");
                            }
                        }
                    }
                }
            }
        }
        // `ABC.register(type(module))`: module objects become virtual instances of a class, so
        // class patterns on it (`case P(Q(o))`) read module attributes.
        if inner_callee.kind_name() == "attribute"
            && inner_callee
                .field(F::Attribute)
                .is_some_and(|a| &*ident(a, self.it.src) == "register")
        {
            for arg in pos.iter().map(|a| unparen(*a)) {
                if self.is_module_type(arg, env, 0) {
                    self.report(
                        &MODULE_ESCAPE,
                        parse::range(arg),
                        format!("`{}` registers the module type as a virtual subclass: class patterns on that class then match modules and read their attributes (`case P(Q(o))`)", short(self.text(node))),
                        Some("A positional class pattern reads the attributes named by `__match_args__`; on a module that walks to other modules".into()),
                    );
                }
            }
        }
        // str.format / format_map / Formatter().format / vformat: the template's fields walk
        // attributes and items of the arguments.
        let mut format_handled = false;
        if inner_callee.kind_name() == "attribute" {
            if let (Some(obj), Some(attr)) = (
                inner_callee.field(F::Object),
                inner_callee.field(F::Attribute),
            ) {
                let m = ident(attr, self.it.src).into_owned();
                if &*m == "get_field" && pos.len() + kws.len() == 3 {
                    // `Formatter().get_field("0.__class__", args, kwargs)`: a field path.
                    if let Some(first) = pos.first() {
                        self.check_field_path(&m, *first, pos.get(1).copied(), env);
                    }
                }
                if matches!(&*m, "format" | "format_map" | "vformat") {
                    self.check_hidden_template(&m, node, obj, &pos, &kws, splat, env);
                }
                if matches!(&*m, "format" | "format_map" | "vformat") {
                    format_handled = true;
                    let ov = self.it.eval(obj, env, 0);
                    let it = &self.it;
                    let ev = |n: Option<&Node<'t>>| n.map(|a| it.eval(*a, env, 0));
                    if ov.strs().next().is_some() {
                        // `"...".format(a, k=v)` / `"...".format_map(d)`.
                        let args = match &*m {
                            "format_map" => FormatArgs {
                                mapping: ev(pos.first()),
                                ..FormatArgs::default()
                            },
                            _ => FormatArgs {
                                pos: pos.iter().map(|a| self.it.eval(*a, env, 0)).collect(),
                                kws: kws
                                    .iter()
                                    .map(|(k, a)| (k.clone(), self.it.eval(*a, env, 0)))
                                    .collect(),
                                opaque: splat,
                                ..FormatArgs::default()
                            },
                        };
                        self.check_format_fields(obj, &ov, &args);
                    } else if let Some(first) = pos.first() {
                        // `str.format(t, ...)`, `Formatter().format(t, ...)`,
                        // `str.format_map(t, d)`, `Formatter().vformat(t, args, kwargs)`.
                        let fv = self.it.eval(*first, env, 0);
                        if fv.strs().next().is_some() {
                            let args = match &*m {
                                "format_map" => FormatArgs {
                                    mapping: ev(pos.get(1)),
                                    ..FormatArgs::default()
                                },
                                "vformat" => FormatArgs {
                                    seq: ev(pos.get(1)),
                                    mapping: ev(pos.get(2)),
                                    ..FormatArgs::default()
                                },
                                _ => FormatArgs {
                                    pos: pos[1..]
                                        .iter()
                                        .map(|a| self.it.eval(*a, env, 0))
                                        .collect(),
                                    kws: kws
                                        .iter()
                                        .map(|(k, a)| (k.clone(), self.it.eval(*a, env, 0)))
                                        .collect(),
                                    opaque: splat,
                                    ..FormatArgs::default()
                                },
                            };
                            self.check_format(*first, &fv);
                            self.check_format_fields(*first, &fv, &args);
                        }
                    }
                }
            }
        }
        // A template handed to a callable cellguard cannot resolve (`fm = str.format_map;
        // fm(t, d)`): its fields are checked on unknown arguments. A `str` method called
        // through the type (`str.center(t, 31)`) is no such callable: it formats nothing.
        let str_method = inner_callee.kind_name() == "attribute"
            && inner_callee.field(F::Attribute).is_some_and(|a| {
                let m = ident(a, self.it.src);
                !matches!(&*m, "format" | "format_map")
                    && builtin_base_methods("str").contains(&&*m)
            })
            && inner_callee.field(F::Object).is_some_and(|o| {
                let ov = self.it.eval(o, env, 0);
                !ov.is_empty() && ov.iter().all(|v| matches!(v, Val::Builtin("str")))
            });
        if !format_handled
            && !str_method
            && cv.only_unknown()
            && !self.is_namespace_callee(inner_callee)
        {
            if let Some(first) = pos.first() {
                let fv = self.it.eval(*first, env, 0);
                if fv.strs().any(|s| s.contains('{')) {
                    self.check_format(*first, &fv);
                    let args = FormatArgs {
                        opaque: true,
                        ..FormatArgs::default()
                    };
                    self.check_format_fields(*first, &fv, &args);
                }
            }
        }
        // A dunder name handed to a callable cellguard cannot resolve.
        if cv.only_unknown() && !self.is_namespace_callee(inner_callee) {
            let args: Vec<Node> = pos
                .iter()
                .copied()
                .chain(kws.iter().map(|(_, v)| *v))
                .collect();
            for a in args {
                // Only hot arguments can fold to a dunder name.
                if !self.it.is_hot(a) {
                    continue;
                }
                let strs: Vec<String> =
                    self.it.eval(a, env, 0).strs().map(str::to_string).collect();
                for s in strs {
                    // A dotted path (`attrgetter("__class__.__base__")` under another name)
                    // walks each of its parts (round 9 S9-10).
                    let dunder = s
                        .split('.')
                        .find(|p| is_dunder(p) && !BENIGN_DUNDER_READS.contains(p));
                    if let Some(part) = dunder {
                        let part = part.to_string();
                        let s = if part == s {
                            format!("`{s}`")
                        } else {
                            format!("`{part}` (in `{s}`)")
                        };
                        self.report(
                            &DUNDER_ACCESS,
                            parse::range(a),
                            format!("Dunder name {s} passed to `{}`, which cellguard cannot resolve", short(self.text(callee))),
                            Some("If this calls `getattr` under another name (an alias from an earlier cell, a tool), it reads a dunder attribute".into()),
                        );
                    }
                }
            }
        }
        // Reflective builtins passed as values.
        let args: Vec<Node> = pos
            .iter()
            .copied()
            .chain(kws.iter().map(|(_, v)| *v))
            .collect();
        for a in args {
            self.check_escape(a, env, "passed as an argument");
        }
        if let Some(al) = node.field(F::Arguments) {
            for c in named(al) {
                if matches!(c.kind_name(), "list_splat" | "dictionary_splat") {
                    if let Some(inner) = first_named(c) {
                        self.check_escape(inner, env, "passed as an argument");
                    }
                }
            }
        }
        // What the call returns (`getattr(__builtins__, "open")`, `vars(m).get("eval")`).
        if (!cv.only_unknown() || inner_callee.kind_name() == "attribute")
            && self.it.is_obj_hot(node)
        {
            let v = self.it.eval(node, env, 0);
            self.builtin_refs(node, &v, self.text(node), nctx.callee);
        }
    }

    /// Analyses a code string (folded from constants) as a cell of its own and reports its
    /// findings at the argument, prefixed with where the code goes.
    fn check_code_string(&mut self, arg: Node<'t>, env: &Env, label: &str) {
        if self.nesting >= 3 {
            return;
        }
        let codes: Vec<String> = self
            .it
            .eval(arg, env, 0)
            .strs()
            .filter(|s| s.len() <= 20_000)
            .take(2)
            .map(str::to_string)
            .collect();
        for code in codes {
            // compile()/exec() end lines at a lone `\r` too.
            let code = crate::source::python_newlines(&code).into_owned();
            let parsed = parse::parse(&code, None);
            // The same-length literal rewrite a top-level cell gets (`repair`): a `\N` bytes
            // literal would otherwise hide the rest of the code string from the analysis.
            // Offsets are unchanged.
            let repaired = crate::rules::syntax::repair::rewrite_mis_scanned_strings(
                parsed.root_node(),
                &code,
            );
            let (text, tree) = match &repaired {
                Some((fixed, t)) => (fixed.as_str(), t),
                None => (code.as_str(), &parsed),
            };
            let it = Interp::with_gate(
                tree.root_node(),
                text,
                super::interp::Config { ..self.it.cfg },
                !self.it.relevance.all,
            );
            let mut inner = Sbx::new(it, self.deny_entries, self.namespace_names);
            inner.nesting = self.nesting + 1;
            inner.star_modules = self.star_modules.clone();
            // A plain literal whose text is the code (no escapes, no prefix that changes it):
            // findings point into the string.
            let offset = (arg.kind_name() == "string")
                .then(|| {
                    let parts: Vec<Node> = named(arg)
                        .into_iter()
                        .filter(|c| !matches!(c.kind_name(), "string_start" | "string_end"))
                        .collect();
                    match parts.as_slice() {
                        [c] if c.kind_name() == "string_content"
                            && c.named_child_count() == 0
                            && self.text(*c) == code =>
                        {
                            Some(c.start_byte())
                        }
                        _ => None,
                    }
                })
                .flatten();
            let free_hosts = if self.in_type_expr {
                self.free_host_names(tree.root_node(), text)
            } else {
                Vec::new()
            };
            let mut found = inner.run(tree.root_node());
            for (name, r) in free_hosts {
                found.push(Finding {
                    rule: &MODULE_ESCAPE,
                    range: r,
                    message: format!("`{name}` is not bound by the cell: a type string is evaluated in the globals of the module its class or function belongs to (the host's `__main__` when the executor runs the cell as `__main__`, the wrapped function's module after `functools.wraps`, any module named by `module=`), where `{name}` is the host's module"),
                    help: Some("Import what the annotation names in the cell, or write the type itself instead of a string".into()),
                });
            }
            for f in found {
                let range = match offset {
                    Some(o) if f.range.end <= code.len() => {
                        TextRange::new(o + f.range.start, o + f.range.end)
                    }
                    _ => parse::range(arg),
                };
                self.report(
                    f.rule,
                    range,
                    format!("In code passed to {label}: {}", f.message),
                    f.help,
                );
            }
        }
    }

    /// The identifiers of type-string code (parsed as `root` from `code`) that read a
    /// host-reaching module name (`os`, `sys`, `subprocess`, `codecs`, `builtins`, ... : a
    /// module of the reachability table's host families) that neither the string nor the
    /// enclosing cell binds. Round 4 G6(b), G26.
    fn free_host_names(&mut self, root: Node, code: &str) -> Vec<(String, TextRange)> {
        let mut out = Vec::new();
        // A code string's own tree: never in the cell's node table.
        for n in parse::walk(root) {
            if n.kind_name() != "identifier" {
                continue;
            }
            let attr_name = n.parent().is_some_and(|p| {
                (p.kind_name() == "attribute"
                    && p.field(F::Attribute).is_some_and(|a| a.id() == n.id()))
                    || (p.kind_name() == "keyword_argument"
                        && p.field(F::Name).is_some_and(|a| a.id() == n.id()))
            });
            if attr_name {
                continue;
            }
            let name = ident(n, code).into_owned();
            let host = super::interp::HOST_MODULE_NAMES.contains(&name.as_str())
                || matches!(name.as_str(), "io" | "pathlib")
                || self.it.cfg.table.family(&name).is_some();
            if !host {
                continue;
            }
            let bound_outer = self
                .it
                .names
                .get(&name)
                .is_some_and(|id| self.it.bound.iter().any(|(_, b)| *b == id))
                || !self.assignments_of(&name).is_empty();
            let bound_inner = code.contains(&format!("import {name}"));
            if !bound_outer
                && !bound_inner
                && !out.iter().any(|(x, _): &(String, TextRange)| *x == name)
            {
                out.push((name, parse::range(n)));
            }
        }
        out
    }

    /// Checks an annotation (or another type expression that `typing` or pydantic evaluates):
    /// every string in a type position is code (`x: "os.system"`, `Optional["..."]`,
    /// `list["..."]`); strings inside `Literal[...]`, the metadata of `Annotated[T, ...]` and
    /// call arguments (`constr(pattern="...")`) are values and are left alone. A type
    /// expression that folds to a string (`"".join(["...", "..."])`) is that code; one that
    /// builds a string at runtime ([`Self::runtime_string`]) is reported itself (SBX003), as
    /// `eval` of a computed string would be.
    fn check_type_expression(&mut self, expr: Node<'t>, env: &Env, label: &str) {
        let was = std::mem::replace(&mut self.in_type_expr, true);
        self.check_type_expression_inner(expr, env, label);
        self.in_type_expr = was;
    }

    fn check_type_expression_inner(&mut self, expr: Node<'t>, env: &Env, label: &str) {
        let mut strings: Vec<Node<'t>> = Vec::new();
        let mut stack = vec![(expr, 0u32)];
        while let Some((n, depth)) = stack.pop() {
            if depth > 64 {
                continue;
            }
            match n.kind_name() {
                "string" | "concatenated_string" => strings.push(n),
                // A name, attribute or call in a type position: a string it holds is code
                // (`T = "..."; Optional[T]`, `anns["t"]`), a string built at runtime is
                // SBX003, and a name bound to a type expression is that expression
                // (`T = Optional[p]; TypeAdapter(T)`).
                "identifier" | "attribute" | "call" => {
                    let v = self.it.eval(n, env, 0);
                    if v.strs().next().is_some() {
                        self.check_code_string(n, env, label);
                    } else if self.runtime_string(n, false, 0) {
                        self.report(
                            &CODE_EXECUTION_BUILTIN,
                            parse::range(n),
                            format!("A string built at runtime is used as {label}: it is evaluated as code that cellguard cannot check"),
                            Some("Write the type out (`x: int`, `x: \"Order\"`); a computed annotation runs whatever string it builds".into()),
                        );
                    } else if n.kind_name() == "identifier" && depth < 8 {
                        let name = ident(n, self.it.src).into_owned();
                        for r in self.assignments_of(&name).iter().copied().take(4) {
                            let r = unparen(r);
                            if r.id() != n.id()
                                && matches!(
                                    r.kind_name(),
                                    "subscript" | "binary_operator" | "tuple"
                                )
                            {
                                stack.push((r, depth + 1));
                            }
                        }
                    }
                }
                "subscript" if self.it.eval(n, env, 0).strs().next().is_some() => {
                    // `anns["t"]`: a lookup that yields a string.
                    self.check_code_string(n, env, label);
                }
                // `x: anns["t"]` parses as a generic type in an annotation: look the key up
                // like a subscript (the parameters are type nodes, checked on their own).
                "generic_type" => {
                    let kids = named(n);
                    let (Some(obj), Some(tp)) = (
                        kids.first().copied(),
                        kids.iter()
                            .find(|k| k.kind_name() == "type_parameter")
                            .copied(),
                    ) else {
                        continue;
                    };
                    let key = named(tp)
                        .first()
                        .copied()
                        .map(|t| first_named(t).unwrap_or(t));
                    if let Some(key) = key {
                        self.dict_lookup_strings(obj, key, env, depth, &mut stack);
                    }
                }
                "subscript" => {
                    // `anns["t"]` with `anns = {"t": "..."}`: the value a constant key selects
                    // from a dict display assigned to the name.
                    if let (Some(obj), Some(key)) = (
                        n.field(F::Value).map(unparen),
                        n.child_by_field_name("subscript"),
                    ) {
                        self.dict_lookup_strings(obj, key, env, depth, &mut stack);
                    }
                    let head = n
                        .field(F::Value)
                        .map(|v| {
                            self.text(unparen(v))
                                .rsplit('.')
                                .next()
                                .unwrap_or("")
                                .trim()
                                .to_string()
                        })
                        .unwrap_or_default();
                    if head == "Literal" {
                        continue;
                    }
                    let mut c = n.walk();
                    let subs: Vec<Node<'t>> =
                        n.children_by_field_name("subscript", &mut c).collect();
                    let subs: Vec<Node<'t>> = if subs.len() == 1 && subs[0].kind_name() == "tuple" {
                        named(subs[0])
                    } else {
                        subs
                    };
                    for (i, sub) in subs.into_iter().enumerate() {
                        if head == "Annotated" && i > 0 {
                            break;
                        }
                        stack.push((sub, depth + 1));
                    }
                }
                // A type expression that folds to a string (`"pydantic." + "ImportString"`,
                // `"".join(...)` handled above) is that code; one that builds a string at
                // runtime (`"in" + suffix`) is SBX003.
                "binary_operator" | "parenthesized_expression"
                    if self.it.eval(n, env, 0).strs().next().is_some() =>
                {
                    self.check_code_string(n, env, label);
                }
                "binary_operator"
                    if self.runtime_string(n, false, 0) && {
                        let op = n.field(F::Operator).map(|o| self.text(o)).unwrap_or("");
                        op != "|"
                    } =>
                {
                    self.report(
                        &CODE_EXECUTION_BUILTIN,
                        parse::range(n),
                        format!("A string built at runtime is used as {label}: it is evaluated as code that cellguard cannot check"),
                        Some("Write the type out (`x: int`, `x: \"Order\"`); a computed annotation runs whatever string it builds".into()),
                    );
                }
                "binary_operator"
                | "tuple"
                | "list"
                | "parenthesized_expression"
                | "expression_list" => {
                    for c in named(n) {
                        stack.push((c, depth + 1));
                    }
                }
                _ => {}
            }
        }
        for s in strings {
            self.check_code_string(s, env, label);
        }
    }

    /// For `name[key]` in a type position, with `name = {...}` a dict display in the cell:
    /// pushes the values its constant keys select, so strings among them are checked as code.
    fn dict_lookup_strings(
        &mut self,
        obj: Node<'t>,
        key: Node<'t>,
        env: &Env,
        depth: u32,
        stack: &mut Vec<(Node<'t>, u32)>,
    ) {
        let obj = unparen(obj);
        if obj.kind_name() != "identifier" || depth >= 8 {
            return;
        }
        let keys: Vec<String> = self
            .it
            .eval(key, env, 0)
            .strs()
            .map(str::to_string)
            .collect();
        let name = ident(obj, self.it.src).into_owned();
        for r in self.assignments_of(&name).iter().copied().take(4) {
            let r = unparen(r);
            if r.kind_name() != "dictionary" {
                continue;
            }
            for pair in named(r) {
                let (Some(k), Some(v)) = (pair.field(F::Key), pair.field(F::Value)) else {
                    continue;
                };
                let kv = self.it.eval(k, &Env::Global, 0);
                if kv.strs().any(|x| keys.iter().any(|y| y == x)) {
                    stack.push((v, depth + 1));
                }
            }
        }
        // Values the cell stores into the name later (`anns["t"] = "<code>"`, round 5 H32
        // addendum 5): under a key that matches or that cellguard cannot fold.
        let Some(root) = self.root else { return };
        let src = self.it.src;
        let stores: Vec<(Node<'t>, Node<'t>)> = self
            .it
            .walk(root)
            .filter(|a| a.kind_name() == "assignment")
            .filter_map(|a| {
                let l = unparen(a.field(F::Left)?);
                let base = unparen(l.field(F::Value)?);
                (l.kind_name() == "subscript"
                    && base.kind_name() == "identifier"
                    && ident(base, src) == name)
                    .then_some((l.child_by_field_name("subscript")?, a.field(F::Right)?))
            })
            .collect();
        for (k, v) in stores {
            let kv = self.it.eval(k, &Env::Global, 0);
            if kv.has_unknown() || kv.strs().any(|x| keys.iter().any(|y| y == x)) {
                stack.push((v, depth + 1));
            }
        }
    }

    /// `.format`/`.format_map` (and `Formatter().format`/`vformat`, `str.format(t, ...)`) on a
    /// template whose text cellguard cannot see (SBX004): decoded at runtime (`json.loads`,
    /// `.decode()`, `bytes.fromhex`, `base64`, `unquote`, `chr`), joined from values it cannot
    /// fold, or derived from those ([`Self::runtime_string`] in strict mode), when some
    /// argument is not a plain literal (a number or string constant): the template's fields
    /// then walk attributes and items of that argument (`{0.__init__.__globals__}`) that no
    /// check sees. Templates built from visible literal text (`prefix + " {}"`, f-strings) and
    /// calls whose arguments are all literals are not reported.
    #[allow(clippy::too_many_arguments)]
    fn check_hidden_template(
        &mut self,
        method: &str,
        call: Node<'t>,
        obj: Node<'t>,
        pos: &[Node<'t>],
        kws: &[(String, Node<'t>)],
        splat: bool,
        env: &Env,
    ) {
        let ov = self.it.eval(obj, env, 0);
        let obj_text = self.text(obj);
        let via_first = method == "vformat"
            || ov.has_builtin("str")
            || obj_text.contains("Formatter")
            || (unparen(obj).kind_name() == "identifier"
                && self
                    .assignments_of(&ident(unparen(obj), self.it.src))
                    .iter()
                    .any(|r| self.text(*r).contains("Formatter")));
        let src = self.it.src;
        // Builtin scalars: format fields only read attributes and items, and from a `str`,
        // `int`, `float`, `bool` or `None` no such path reaches a function's globals or a
        // module (round 5 H5: `tmpl.format(name=agent_id, n=len(pages))`).
        fn plain_in(n: Node, src: &str) -> bool {
            let n = unparen(n);
            match n.kind_name() {
                "integer" | "float" | "true" | "false" | "none" => true,
                // An f-string or any string literal is a `str`.
                "string" | "concatenated_string" => true,
                "unary_operator" => first_named(n).is_some_and(|c| plain_in(c, src)),
                "binary_operator" => {
                    n.field(F::Left).is_some_and(|c| plain_in(c, src))
                        && n.field(F::Right).is_some_and(|c| plain_in(c, src))
                }
                "identifier" => &*ident(n, src) == "agent_id",
                "call" => n.field(F::Function).is_some_and(|f| {
                    f.kind_name() == "identifier"
                        && matches!(
                            &*ident(f, src),
                            "len" | "str" | "int" | "float" | "round" | "bool" | "repr" | "abs"
                        )
                }),
                "dictionary" | "tuple" | "list" => named(n).into_iter().all(|c| {
                    if c.kind_name() == "pair" {
                        c.field(F::Key).is_some_and(|k| plain_in(k, src))
                            && c.field(F::Value).is_some_and(|v| plain_in(v, src))
                    } else {
                        plain_in(c, src)
                    }
                }),
                _ => false,
            }
        }
        let plain = |n: Node| plain_in(n, src);
        if via_first {
            // `str.format(*parts)`: the template itself comes out of the unpacked value.
            let first_arg = call
                .field(F::Arguments)
                .and_then(|a| named(a).into_iter().next());
            if let Some(sp) = first_arg.filter(|a| a.kind_name() == "list_splat") {
                if !first_named(sp).is_some_and(plain) {
                    self.report(
                        &DYNAMIC_ATTRIBUTE_ACCESS,
                        parse::range(sp),
                        format!("`{method}` takes its template from an unpacked value cellguard cannot see: its fields (`{{0.attr}}`, `{{0[key]}}`) walk attributes of the arguments unchecked"),
                        Some("Pass a template literal as the first argument".into()),
                    );
                }
                return;
            }
        }
        let (template, args): (Node<'t>, Vec<Node<'t>>) = if via_first {
            let Some(first) = pos.first() else { return };
            (
                *first,
                pos[1..]
                    .iter()
                    .copied()
                    .chain(kws.iter().map(|(_, v)| *v))
                    .collect(),
            )
        } else {
            (
                obj,
                pos.iter()
                    .copied()
                    .chain(kws.iter().map(|(_, v)| *v))
                    .collect(),
            )
        };
        let tv = self.it.eval(template, env, 0);
        // Known texts are checked field by field; a template that may also be something else
        // (an item of a container changed by an unpacking store, round 9 S9-15) goes on.
        if tv.strs().next().is_some() && !tv.has_unknown() {
            return;
        }
        if !splat && args.iter().all(|a| plain(*a)) {
            return;
        }
        let msg = if self.runtime_string(template, true, 0) {
            format!("`{method}` with a template built at runtime from text cellguard cannot see: its fields (`{{0.attr}}`, `{{0[key]}}`) walk attributes of the arguments unchecked")
        } else if self.opaque_template(template, env, 0) {
            format!("`{method}` with a template cellguard cannot see (`{}` comes from a container, a call, a parameter or host data): its fields (`{{0.attr}}`, `{{0[key]}}`) walk attributes of the arguments unchecked", short(self.text(template)))
        } else {
            return;
        };
        self.report(
            &DYNAMIC_ATTRIBUTE_ACCESS,
            parse::range(template),
            msg,
            Some("Use a template literal, or format only plain values (`str(x)`) into it".into()),
        );
    }

    /// True when the format template `node` (which cellguard could not fold to constant
    /// strings) may hold text it cannot see (round 4 G34): a value taken out of a container or
    /// host data (`results["t"]`, `sorted(ts)[0]`), returned by a call (`max(ts)`,
    /// `next(iter(ts))`, `params.get("fmt", "...")`), an attribute, a parameter or loop
    /// variable, and anything derived from those (`t.strip()`, `a + b` with both sides such
    /// values, `t % x`, a conditional with such a branch). Literals, f-strings and
    /// concatenations with visible literal text (`header + ": {}"`) are visible. Names are
    /// resolved through their plain assignments in the cell; a name with none is opaque.
    fn opaque_template(&mut self, node: Node<'t>, env: &Env, depth: u32) -> bool {
        if depth > 8 {
            return true;
        }
        let node = unparen(node);
        match node.kind_name() {
            "string"
            | "concatenated_string"
            | "integer"
            | "float"
            | "true"
            | "false"
            | "none"
            | "list"
            | "tuple"
            | "dictionary"
            | "set"
            | "list_comprehension"
            | "dictionary_comprehension"
            | "set_comprehension"
            | "lambda" => false,
            "binary_operator" => {
                let op = node.field(F::Operator).map(|o| self.text(o)).unwrap_or("");
                let (l, r) = (node.field(F::Left), node.field(F::Right));
                match op {
                    "+" => {
                        l.is_none_or(|l| self.opaque_template(l, env, depth + 1))
                            && r.is_none_or(|r| self.opaque_template(r, env, depth + 1))
                    }
                    "%" | "*" => l.is_none_or(|l| self.opaque_template(l, env, depth + 1)),
                    _ => false,
                }
            }
            "conditional_expression" => {
                let kids = named(node);
                let branches: Vec<Node<'t>> = [kids.first(), kids.get(2)]
                    .into_iter()
                    .flatten()
                    .copied()
                    .collect();
                branches
                    .into_iter()
                    .any(|c| self.opaque_template(c, env, depth + 1))
            }
            "call" => {
                // `t.strip()`, `t.replace(a, b)`: as opaque as `t`.
                if let Some(f) = node.field(F::Function).map(unparen) {
                    if f.kind_name() == "attribute" {
                        let m = f
                            .field(F::Attribute)
                            .map(|a| ident(a, self.it.src).into_owned())
                            .unwrap_or_default();
                        if matches!(
                            m.as_str(),
                            "replace"
                                | "lower"
                                | "upper"
                                | "strip"
                                | "lstrip"
                                | "rstrip"
                                | "title"
                                | "capitalize"
                                | "casefold"
                                | "swapcase"
                                | "removeprefix"
                                | "removesuffix"
                                | "center"
                                | "ljust"
                                | "rjust"
                                | "zfill"
                                | "expandtabs"
                        ) {
                            return f
                                .field(F::Object)
                                .is_none_or(|o| self.opaque_template(o, env, depth + 1));
                        }
                    }
                }
                self.it.eval(node, env, 0).strs().next().is_none()
            }
            "identifier" => {
                let name = ident(node, self.it.src).into_owned();
                let rhs = self.assignments_of(&name);
                if rhs.is_empty() {
                    // `for t in ["{} items", "{:>8} left"]:`: a loop over a display of
                    // visible templates.
                    if let Some(iters) = self.for_iterables_of(&name) {
                        return iters.into_iter().any(|it| {
                            !matches!(unparen(it).kind_name(), "list" | "tuple" | "set")
                                || named(unparen(it))
                                    .into_iter()
                                    .any(|e| self.opaque_template(e, env, depth + 1))
                        });
                    }
                    return self.it.eval(node, env, 0).strs().next().is_none();
                }
                rhs.iter()
                    .any(|&r| r.id() != node.id() && self.opaque_template(r, env, depth + 1))
            }
            // `t["row"]` of a display the cell changed in ways cellguard cannot follow.
            "subscript" => {
                let v = self.it.eval(node, env, 0);
                v.strs().next().is_none() || v.has_unknown()
            }
            _ => self.it.eval(node, env, 0).strs().next().is_none(),
        }
    }

    /// `Formatter().get_field(path, args, kwargs)` (three arguments, unlike Django's
    /// `_meta.get_field(name)`): the path is
    /// a format field name walked with `getattr` and `[]` (SBX002 for a dunder step, SBX008 for
    /// a frame attribute, SBX005 for a module escape on the given arguments); a path cellguard
    /// cannot fold is SBX004.
    fn check_field_path(
        &mut self,
        method: &str,
        path: Node<'t>,
        args: Option<Node<'t>>,
        env: &Env,
    ) {
        let v = self.it.eval(path, env, 0);
        let strs: Vec<String> = v.strs().map(str::to_string).collect();
        if strs.is_empty() || v.has_unknown() {
            self.report(
                &DYNAMIC_ATTRIBUTE_ACCESS,
                parse::range(path),
                format!("`{method}` with a field path cellguard cannot fold: it walks attributes of the arguments unchecked"),
                Some("`Formatter().get_field(\"0.attr\", args, kwargs)` is `getattr(args[0], \"attr\")`".into()),
            );
        }
        let argv = args.map(|a| self.it.eval(a, env, 0));
        for s in strs {
            let template = format!("{{{}}}", s.replace(['{', '}'], ""));
            let fargs = FormatArgs {
                seq: argv.clone(),
                opaque: argv.is_none(),
                ..FormatArgs::default()
            };
            let tv = VSet::str(template);
            self.check_format(path, &tv);
            self.check_format_fields(path, &tv, &fargs);
        }
    }

    /// Calls that evaluate strings as type expressions in the cell's globals:
    /// `typing.ForwardRef(s)`, `pydantic.TypeAdapter(s)`, `typing._eval_type`, the functional
    /// forms `typing.TypedDict("T", {"a": s})`, `typing.NamedTuple("T", [("a", s)])`,
    /// `dataclasses.make_dataclass("C", [("a", s)])` and `pydantic.create_model("M", a=(s,
    /// ...))` (whose string types `typing.get_type_hints` and pydantic evaluate). The callee is
    /// recognised by value (a member of `typing`, `typing_extensions`, `pydantic` or
    /// `dataclasses`, aliases included) or, when it cannot be resolved, by its name.
    fn check_type_sinks(
        &mut self,
        callee: Node<'t>,
        cv: &VSet,
        pos: &[Node<'t>],
        kws: &[(String, Node<'t>)],
        env: &Env,
    ) {
        const ROOTS: &[&str] = &[
            "typing",
            "typing_extensions",
            "pydantic",
            "dataclasses",
            "collections",
        ];
        let mut sink: Option<String> = None;
        let mut opaque_root = false;
        for v in cv.iter() {
            if let Val::Member(p) = v {
                let root = p.split('.').next().unwrap_or("");
                if ROOTS.contains(&root) {
                    if p.contains('.') {
                        sink = Some(p.rsplit('.').next().unwrap_or("").to_string());
                    } else {
                        // An untracked module's members are one opaque value: use the text.
                        opaque_root = true;
                    }
                }
            }
        }
        if sink.is_none() && (cv.only_unknown() || opaque_root) {
            let t = self.text(unparen(callee));
            sink = Some(t.rsplit('.').next().unwrap_or("").trim().to_string());
        }
        let Some(sink) = sink else { return };
        let kw = |name: &str| kws.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
        let label = format!(
            "`{}`, which evaluates it as a type expression",
            short(self.text(callee))
        );
        let mut types: Vec<Node<'t>> = Vec::new();
        match sink.as_str() {
            "ForwardRef"
            | "_eval_type"
            | "eval_type_backport"
            | "eval_type_lenient"
            | "evaluate_forward_ref"
            | "_type_check" => {
                types.extend(pos.first().copied().or_else(|| kw("arg")));
            }
            "TypeAdapter" => types.extend(pos.first().copied().or_else(|| kw("type"))),
            // `TypeVar("T", bound="os.system")`, constraints `TypeVar("T", "a", "b")` and
            // defaults: typing wraps their strings in `ForwardRef`s, which `get_type_hints`
            // and pydantic evaluate when a generic is resolved (round 8 S8-13).
            "TypeVar" | "ParamSpec" | "TypeVarTuple" => {
                types.extend(pos.iter().skip(1).copied());
                types.extend(kw("bound"));
                types.extend(kw("default"));
            }
            // pydantic v1's `typing.resolve_annotations(raw, module_name)`: every string value
            // of `raw` is evaluated in `sys.modules[module_name]` (G17).
            "resolve_annotations" => {
                if let Some(d) = pos.first().copied().or_else(|| kw("raw_annotations")) {
                    let mut d = unparen(d);
                    if d.kind_name() == "identifier" {
                        let n = ident(d, self.it.src).into_owned();
                        if let Some(r) = self
                            .assignments_of(&n)
                            .iter()
                            .copied()
                            .map(unparen)
                            .find(|r| r.kind_name() == "dictionary")
                        {
                            d = r;
                        }
                    }
                    if d.kind_name() == "dictionary" {
                        for pair in named(d) {
                            types.extend(pair.field(F::Value));
                        }
                    } else {
                        types.push(d);
                    }
                }
            }
            "namedtuple" => {}
            "TypedDict" | "NamedTuple" | "make_dataclass" | "create_model" => {
                let second = if sink == "create_model" {
                    None
                } else {
                    pos.get(1).copied().or_else(|| kw("fields"))
                };
                if let Some(f) = second.map(unparen) {
                    match f.kind_name() {
                        "dictionary" | "list" | "tuple" => types.extend(field_type_nodes(f)),
                        _ => {
                            // Fields held by a name (`fields = [("x", "int")]`, round 9
                            // S9-15): the displays assigned to it are checked as written, and
                            // a value cellguard cannot read in full (changed by an unpacking
                            // store, appended from a computed string, a parameter) is reported:
                            // its type strings are code `get_type_hints` evaluates.
                            if f.kind_name() == "identifier" {
                                let n = ident(f, self.it.src).into_owned();
                                for r in self.assignments_of(&n).iter().copied() {
                                    types.extend(field_type_nodes(unparen(r)));
                                }
                            }
                            fn unreadable(v: &VSet, depth: u32) -> bool {
                                v.iter().any(|x| match x {
                                    Val::Seq(items) => {
                                        depth < 2 && items.iter().any(|i| unreadable(i, depth + 1))
                                    }
                                    Val::Dict(pairs) => {
                                        depth < 2
                                            && pairs.iter().any(|(k, v)| {
                                                unreadable(k, depth + 1) || unreadable(v, depth + 1)
                                            })
                                    }
                                    Val::Str(_) | Val::Int(_) | Val::Builtin(_) | Val::Class(_) => {
                                        false
                                    }
                                    Val::Member(_) | Val::Module(_) => false,
                                    _ => true,
                                })
                            }
                            // The displays bound to the name, evaluated where they are built
                            // (with what the cell does to them afterwards); any other source
                            // (a parameter, a call, an unpacking) cannot be read.
                            let unread = if f.kind_name() == "identifier" {
                                let n = ident(f, self.it.src).into_owned();
                                let sources = self.binding_sources(&n);
                                sources.is_empty()
                                    || sources.into_iter().any(|r| {
                                        let r = unparen(r);
                                        !matches!(r.kind_name(), "list" | "tuple" | "dictionary")
                                            || unreadable(&self.it.eval(r, env, 0), 0)
                                    })
                            } else {
                                unreadable(&self.it.eval(f, env, 0), 0)
                            };
                            if unread {
                                self.report(
                                    &CODE_EXECUTION_BUILTIN,
                                    parse::range(f),
                                    format!("The fields of `{sink}` come from `{}`, which cellguard cannot read in full: their type strings are code that `typing.get_type_hints` and pydantic evaluate", short(self.text(f))),
                                    Some("Write the fields as a literal list or dict in the call".into()),
                                );
                            }
                        }
                    }
                }
                for (k, v) in kws {
                    if k.starts_with("__")
                        || matches!(
                            k.as_str(),
                            "total"
                                | "closed"
                                | "fields"
                                | "bases"
                                | "namespace"
                                | "frozen"
                                | "module"
                                | "rename"
                                | "defaults"
                        )
                    {
                        continue;
                    }
                    let v = unparen(*v);
                    if sink == "create_model" && v.kind_name() == "tuple" {
                        types.extend(named(v).first().copied());
                    } else {
                        types.push(v);
                    }
                }
            }
            _ => return,
        }
        // `ForwardRef(s, module="os")`, `TypeAdapter(s, module=...)`,
        // `create_model(..., __module__=...)`, `namedtuple(..., module=...)`,
        // `resolve_annotations(raw, "os")`: the strings (the model's or class's annotations)
        // are evaluated in a loaded module's namespace, found by name in `sys.modules`, with
        // that module's globals and builtins (G12, G17).
        let module_arg = match sink.as_str() {
            "ForwardRef" => kw("module").or_else(|| pos.get(2).copied()),
            "resolve_annotations" => kw("module_name").or_else(|| pos.get(1).copied()),
            "create_model" => kw("__module__"),
            "TypeAdapter" | "namedtuple" | "make_dataclass" | "NamedTuple" | "TypedDict" => {
                kw("module")
            }
            _ => None,
        };
        if let Some(m) = module_arg.filter(|m| unparen(*m).kind_name() != "none") {
            let names: Vec<String> = self.it.eval(m, env, 0).strs().map(str::to_string).collect();
            let shown = if names.is_empty() {
                "a computed module".to_string()
            } else {
                format!("`{}`", names.join("`, `"))
            };
            let callee_name = short(self.text(unparen(callee)));
            self.report(
                &DYNAMIC_IMPORT,
                parse::range(m),
                format!("`{callee_name}` with a module name evaluates its type strings in the namespace of {shown}, looked up by name in `sys.modules` (that module's globals and builtins, not the cell's)"),
                Some("Leave the module out: types are then resolved in the cell's own namespace".into()),
            );
        }
        // `ForwardRef` takes nothing but a string: any argument it cannot fold is computed.
        let only_strings = matches!(sink.as_str(), "ForwardRef" | "evaluate_forward_ref");
        self.check_type_args(types, env, &label, only_strings);
    }

    /// Checks arguments that a type evaluator evaluates (see [`Self::check_type_sinks`]): a
    /// string is code ([`Self::check_type_expression`]), a string built at runtime is SBX003.
    fn check_type_args(
        &mut self,
        types: Vec<Node<'t>>,
        env: &Env,
        label: &str,
        only_strings: bool,
    ) {
        for t in types {
            let v = self.it.eval(t, env, 0);
            if matches!(unparen(t).kind_name(), "string" | "concatenated_string")
                || v.strs().next().is_some()
            {
                self.check_type_expression(t, env, label);
            } else if only_strings || self.runtime_string(t, false, 0) {
                self.report(
                    &CODE_EXECUTION_BUILTIN,
                    parse::range(t),
                    format!("A string built at runtime is passed to {label}: it is evaluated as code that cellguard cannot check"),
                    Some("Pass the type itself, or a string literal cellguard can check".into()),
                );
            } else {
                self.check_type_expression(t, env, label);
            }
        }
    }

    /// True when `node` builds a string at runtime from parts cellguard cannot fold. With
    /// `strict` (format templates), only strings whose text is hidden count: decoded ones
    /// (`json.loads`, `.decode()`, `bytes.fromhex`, `codecs.decode`, `base64`, `unquote`,
    /// `chr`, `translate`), joins of values cellguard cannot fold, and anything derived from
    /// those (concatenation, slicing, case methods, `replace`). Without it, any concatenation,
    /// `%`/`format`, f-string or `str(...)` of something unknown counts too. A name counts when
    /// some plain assignment of it in the cell does.
    fn runtime_string(&mut self, node: Node<'t>, strict: bool, depth: u32) -> bool {
        const DECODERS: &[&str] = &[
            "loads",
            "decode",
            "fromhex",
            "unhexlify",
            "a2b_hex",
            "b64decode",
            "b32decode",
            "b16decode",
            "a85decode",
            "b85decode",
            "urlsafe_b64decode",
            "standard_b64decode",
            "decodebytes",
            "unquote",
            "unquote_plus",
            "unescape",
            "translate",
            "chr",
        ];
        const DERIVED: &[&str] = &[
            "replace",
            "lower",
            "upper",
            "strip",
            "lstrip",
            "rstrip",
            "title",
            "capitalize",
            "casefold",
            "swapcase",
            "removeprefix",
            "removesuffix",
            "center",
            "ljust",
            "rjust",
            "zfill",
            "expandtabs",
        ];
        if depth > 6 {
            return false;
        }
        let node = unparen(node);
        match node.kind_name() {
            "string" => !strict && named(node).iter().any(|c| c.kind_name() == "interpolation"),
            "concatenated_string" => {
                !strict && parse::walk(node).any(|c| c.kind_name() == "interpolation")
            }
            "binary_operator" => {
                let op = node.field(F::Operator).map(|o| self.text(o)).unwrap_or("");
                if !matches!(op, "+" | "%") {
                    return false;
                }
                if !strict {
                    return true;
                }
                let (l, r) = (node.field(F::Left), node.field(F::Right));
                l.is_some_and(|l| self.runtime_string(l, strict, depth + 1))
                    || r.is_some_and(|r| self.runtime_string(r, strict, depth + 1))
            }
            "subscript" => node
                .field(F::Value)
                .is_some_and(|v| self.runtime_string(v, strict, depth + 1)),
            "conditional_expression" => named(node)
                .into_iter()
                .any(|c| self.runtime_string(c, strict, depth + 1)),
            "call" => {
                let Some(f) = node.field(F::Function).map(unparen) else {
                    return false;
                };
                let last = match f.kind_name() {
                    "identifier" => ident(f, self.it.src).into_owned(),
                    "attribute" => f
                        .field(F::Attribute)
                        .map(|a| ident(a, self.it.src).into_owned())
                        .unwrap_or_default(),
                    _ => return false,
                };
                if DECODERS.contains(&last.as_str()) {
                    return true;
                }
                if last == "join" {
                    let (args, _, _) = call_args(node.field(F::Arguments), self.it.src);
                    return args.first().is_some_and(|a| {
                        let v = self.it.eval(*a, &Env::Global, 0);
                        !strict || v.has_unknown() || elements(&v).has_unknown()
                    });
                }
                if DERIVED.contains(&last.as_str())
                    || (!strict
                        && matches!(
                            last.as_str(),
                            "format" | "format_map" | "str" | "repr" | "ascii"
                        ))
                {
                    if f.kind_name() == "attribute" {
                        return !strict
                            || f.field(F::Object)
                                .is_some_and(|o| self.runtime_string(o, strict, depth + 1));
                    }
                    return !strict;
                }
                false
            }
            "identifier" => {
                let name = ident(node, self.it.src).into_owned();
                let rhs = self.assignments_of(&name);
                rhs.iter()
                    .any(|&r| r.id() != node.id() && self.runtime_string(r, strict, depth + 1))
            }
            _ => false,
        }
    }

    /// The field names of a class of the cell that `name` (a `getattr`/`setattr` name argument)
    /// takes in turn, as constants: `f.name` for `f` looping over `dataclasses.fields(x)`, and
    /// a name looping over `C.model_fields` (also `.keys()`), `C.__fields__`,
    /// `C.__dataclass_fields__` or `C._fields` (`collections.namedtuple`, `typing.NamedTuple`),
    /// where `x`/`C` is a class of the cell or an instance of one. The names are what the class
    /// declares ([`super::interp::ClassInfo::fields`]), so `getattr(r, f.name)` over the cell's
    /// own fields is checked as the reads it is instead of as a computed name, and the same
    /// loop on another object (`getattr(random, f.name)` with a field `_os`) is reported for
    /// the attribute it reads. `None` for any other shape. Round 6 S6-29.
    fn declared_field_names(&mut self, name: Node<'t>, env: &Env) -> Option<VSet> {
        let n = unparen(name);
        let (var, via_attr) = match n.kind_name() {
            "attribute" => {
                let a = n.field(F::Attribute)?;
                let o = unparen(n.field(F::Object)?);
                if ident(a, self.it.src) != "name" || o.kind_name() != "identifier" {
                    return None;
                }
                (ident(o, self.it.src).into_owned(), true)
            }
            "identifier" => (ident(n, self.it.src).into_owned(), false),
            _ => return None,
        };
        let mut out = VSet::default();
        for it in self.for_iterables_of(&var)? {
            let mut it = unparen(it);
            // `C.model_fields.keys()`
            if !via_attr && it.kind_name() == "call" {
                let f = unparen(it.field(F::Function)?);
                let (pos, kws, splat) = call_args(it.field(F::Arguments), self.it.src);
                if f.kind_name() == "attribute"
                    && f.field(F::Attribute)
                        .is_some_and(|a| ident(a, self.it.src) == "keys")
                    && pos.is_empty()
                    && kws.is_empty()
                    && !splat
                {
                    it = unparen(f.field(F::Object)?);
                }
            }
            let owner = if via_attr {
                // `dataclasses.fields(x)`
                if it.kind_name() != "call" {
                    return None;
                }
                let f = it.field(F::Function)?;
                let is_fields = self
                    .it
                    .eval(f, env, 0)
                    .iter()
                    .all(|v| matches!(v, Val::Member(p) if &**p == "dataclasses.fields"));
                let (pos, _, _) = call_args(it.field(F::Arguments), self.it.src);
                if !is_fields || pos.len() != 1 {
                    return None;
                }
                pos[0]
            } else {
                if it.kind_name() != "attribute" {
                    return None;
                }
                let a = ident(it.field(F::Attribute)?, self.it.src).into_owned();
                if !matches!(
                    &*a,
                    "model_fields" | "__fields__" | "__dataclass_fields__" | "_fields"
                ) {
                    // `for n in self._FIELDS` over a class-body tuple of names (round 8 S8-6).
                    let ov = self.narrowed_value(it.field(F::Object)?, env);
                    let mut names = Vec::new();
                    for v in ov.iter() {
                        match v {
                            Val::Class(id) | Val::Inst(id) => {
                                names.extend(self.class_constant_names(*id, &a)?)
                            }
                            _ => return None,
                        }
                    }
                    if names.is_empty() {
                        return None;
                    }
                    for s in names {
                        out.push(Val::str(s));
                    }
                    continue;
                }
                it.field(F::Object)?
            };
            let ov = self.narrowed_value(owner, env);
            let mut names: Option<Vec<String>> = None;
            if !ov.is_empty() && ov.iter().all(|v| matches!(v, Val::Class(_) | Val::Inst(_))) {
                let mut all = Vec::new();
                for v in ov.iter() {
                    if let Val::Class(id) | Val::Inst(id) = v {
                        let info = self.it.classes.get(*id as usize)?;
                        all.extend(info.fields.iter().cloned());
                    }
                }
                names = Some(all);
            } else if unparen(owner).kind_name() == "identifier" {
                let o = ident(unparen(owner), self.it.src).into_owned();
                names = self.functional_match_args(&o);
            }
            for s in names? {
                out.push(Val::str(s));
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// The iterables of the `for` loops and comprehension clauses whose target is exactly
    /// `name`, or `None` when there are none.
    fn for_iterables_of(&self, name: &str) -> Option<Vec<Node<'t>>> {
        let out: Vec<Node<'t>> = self
            .index()?
            .of_kinds(&["for_statement", "for_in_clause"])
            .into_iter()
            .filter(|n| {
                n.field(F::Left)
                    .is_some_and(|l| l.kind_name() == "identifier" && ident(l, self.it.src) == name)
            })
            .filter_map(|n| n.field(F::Right))
            .collect();
        (!out.is_empty()).then_some(out)
    }

    /// The deny-members entry a module-level function or object called `name` matches, for an
    /// attribute read on a receiver cellguard cannot resolve: an entry `m.name` (or
    /// `m.*.name`) whose last segment is exactly `name`, whose other segments are module names
    /// (lower case: class members such as `asyncio.AbstractEventLoop.stop` are judged on loop
    /// values), and whose root module the allowlist or the namespace lets the cell reach. A
    /// name a class of the cell declares (`self.logger` of a cell class) may be that field
    /// instead and is left alone. Memoised by name.
    fn module_denied_entry(&mut self, name: &str) -> Option<&'a str> {
        if let Some(v) = self.module_denied.get(name) {
            return *v;
        }
        let declared = super::interp::is_generic_member_name(name)
            || self.it.classes.iter().any(|c| c.fields.contains(name));
        let entries: &'a [String] = self.deny_entries;
        let found = if declared {
            None
        } else {
            entries.iter().map(String::as_str).find(|e| {
                let Some((prefix, last)) = e.rsplit_once('.') else {
                    return false;
                };
                let root = root_of(e);
                last == name
                    && !root.contains('*')
                    && prefix
                        .split('.')
                        .all(|seg| !seg.chars().any(|c| c.is_ascii_uppercase()))
                    && (is_allowed(root, self.it.cfg.allow) || self.it.cfg.prebound.contains(root))
            })
        };
        self.module_denied.insert(name.to_string(), found);
        found
    }

    /// True when `name` matches the last segment of some deny-members entry (not `*`),
    /// memoised by name: the test runs for every attribute read on an unknown receiver.
    fn denied_last_segment(&mut self, name: &str) -> bool {
        if let Some(v) = self.denied_last.get(name) {
            return *v;
        }
        let v = self.deny_entries.iter().any(|d| {
            d.rsplit('.')
                .next()
                .is_some_and(|l| l != "*" && glob_match(l, name))
        });
        self.denied_last.insert(name.to_string(), v);
        v
    }

    /// The index of the cell's nodes ([`CellIndex`]), built on first use; `None` before
    /// [`Sbx::run`] set the root.
    fn index(&self) -> Option<&CellIndex<'t>> {
        let root = self.root?;
        Some(
            self.index
                .get_or_init(|| CellIndex::new(self.it.walk_kinds(root), self.it.src)),
        )
    }

    /// The right-hand sides of the plain assignments of `name` in the cell.
    /// True when the value the namespace pre-binds to `name` may still be what `name` holds
    /// somewhere in the cell: the cell never binds it, or binds it only on some paths (round 5
    /// H27: `if False: ActionResult = ...`; see [`Interp::prebound_may_reach`]).
    fn prebound_kept(&mut self, name: &str) -> bool {
        self.assignments_of(name).is_empty()
            || self
                .it
                .names
                .get(name)
                .is_some_and(|id| self.it.prebound_may_reach(id))
    }

    /// The right-hand sides of the plain assignments of `name` in the cell, in source order (a
    /// cheap shared slice: see `assigned`).
    fn assignments_of(&mut self, name: &str) -> std::rc::Rc<[Node<'t>]> {
        if self.assigned.is_none() {
            let mut map: rustc_hash::FxHashMap<String, Vec<Node<'t>>> = Default::default();
            if let Some(index) = self.index() {
                let kinds = ["assignment", "augmented_assignment", "named_expression"];
                for n in index.of_kinds(&kinds) {
                    let (l, r) = match n.kind_name() {
                        "assignment" | "augmented_assignment" => {
                            (n.field(F::Left), n.field(F::Right))
                        }
                        "named_expression" => (n.field(F::Name), n.field(F::Value)),
                        _ => continue,
                    };
                    if let (Some(l), Some(r)) = (l, r) {
                        if l.kind_name() == "identifier" {
                            map.entry(ident(l, self.it.src).into_owned())
                                .or_default()
                                .push(r);
                        }
                    }
                }
            }
            self.assigned = Some(map.into_iter().map(|(k, v)| (k, v.into())).collect());
        }
        self.assigned
            .as_ref()
            .and_then(|m| m.get(name))
            .cloned()
            .unwrap_or_else(|| std::rc::Rc::from([]))
    }

    fn is_namespace_callee(&self, callee: Node) -> bool {
        callee.kind_name() == "identifier"
            && self.namespace_names.contains(&*ident(callee, self.it.src))
    }

    fn check_reflective(
        &mut self,
        node: Node<'t>,
        b: &str,
        pos: &[Node<'t>],
        splat: bool,
        env: &Env,
    ) {
        let range = parse::range(node);
        if pos.len() < 2 {
            if splat {
                self.report(
                    &DYNAMIC_ATTRIBUTE_ACCESS,
                    range,
                    format!("`{b}` with unpacked arguments: the attribute name cannot be checked"),
                    None,
                );
            }
            return;
        }
        let store = matches!(b, "setattr" | "delattr");
        let mut names = self.it.eval(pos[1], env, 0);
        if names.has_unknown() {
            if let Some(fields) = self.declared_field_names(pos[1], env) {
                names = fields;
            }
        }
        let objs = self.it.eval(pos[0], env, 0);
        if store {
            let shown_names: Vec<String> = names.strs().map(str::to_string).collect();
            let shown = if shown_names.is_empty() {
                "(computed)".to_string()
            } else {
                shown_names.join("`/`")
            };
            let verb = if b == "setattr" {
                "Setting"
            } else {
                "Deleting"
            };
            let stored = pos.get(2).map(|v| self.it.eval(*v, env, 0));
            self.host_write(pos[0], &objs, &shown, verb, range, stored.as_ref());
            if b == "setattr" {
                // `setattr(R, "items", spy)` on a class built on `dict` (round 6).
                let written: Vec<(String, TextRange)> =
                    names.strs().map(|n| (n.to_string(), range)).collect();
                self.check_base_method_store(pos[0], &written, pos.get(2).copied(), env);
            }
        }
        let mut any_dunder = false;
        for s in names.strs().map(str::to_string).collect::<Vec<_>>() {
            if is_dunder(&s) && (store || !BENIGN_DUNDER_READS.contains(&s.as_str())) {
                any_dunder = true;
                let verb = match b {
                    "setattr" => "writes",
                    "delattr" => "deletes",
                    "hasattr" => "probes",
                    _ => "reads",
                };
                self.report(
                    &DUNDER_ACCESS,
                    range,
                    format!("`{b}` {verb} dunder attribute `{s}`"),
                    dunder_help(&s),
                );
                continue;
            }
            if FRAME_ATTRS.contains(&s.as_str()) {
                self.report(
                    &FRAME_WALK,
                    range,
                    format!(
                        "`{b}` reads frame attribute `{s}`: frames expose globals and builtins"
                    ),
                    None,
                );
            }
            // The same checks as the attribute written out (`getattr(m, "_os")` is `m._os`).
            let shown = if store {
                String::new()
            } else {
                short(self.text(pos[0]))
            };
            self.attr_findings(&objs, &s, range, &shown);
        }
        if names.has_unknown() && !any_dunder {
            self.report(
                &DYNAMIC_ATTRIBUTE_ACCESS,
                range,
                format!("`{b}` with a computed attribute name: cellguard cannot tell which attribute it reaches"),
                Some("Write the attribute out (`obj.name`) so it can be checked".into()),
            );
        }
    }

    /// `functools.update_wrapper(w, f, assigned, updated)` / `functools.wraps(f, assigned,
    /// updated)` read every name of `assigned` and `updated` from the wrapped object with
    /// `getattr` and write (or `update`) it on the wrapper with `setattr`:
    /// `updated=("__globals__",)` merges a module's globals into the cell. Dunder names other
    /// than the defaults are SBX002; names that cannot be folded are SBX004; every other name
    /// is checked as `getattr(f, name)` is (`assigned=("_os",)` on `random` reads `random._os`,
    /// SBX005; round 6 S6-5).
    fn check_wrapper_names(
        &mut self,
        func: &str,
        pos: &[Node<'t>],
        kws: &[(String, Node<'t>)],
        env: &Env,
    ) {
        let skip = if func == "update_wrapper" { 2 } else { 1 };
        let wrapped = kws
            .iter()
            .find(|(k, _)| k == "wrapped")
            .map(|(_, v)| *v)
            .or_else(|| pos.get(skip - 1).copied());
        let wrapped_v = wrapped.map(|w| (self.it.eval(w, env, 0), short(self.text(w))));
        // The default `updated=("__dict__",)` merges the wrapped object's namespace into the
        // wrapper: for a module, every global of it (`w.operator`, `w.enum.sys`) is then an
        // attribute of the wrapper, which cellguard no longer sees as a module (round 7 S7-1,
        // round 9 S9-10).
        let updated_given = kws.iter().any(|(k, _)| k == "updated") || pos.len() > skip + 1;
        if !updated_given {
            if let (Some(w), Some((objs, shown))) = (wrapped, &wrapped_v) {
                let module = objs.iter().find_map(|v| match v {
                    Val::Module(m) => Some(format!("module `{}`", m.real)),
                    _ => None,
                });
                // A host object the namespace pre-binds (`bb`: its `_agent`, round 9 S9-10).
                let host = || self.host_shared(w, 0).map(|h| format!("the host's `{h}`"));
                if let Some(m) = module.or_else(host) {
                    self.report(
                        &MODULE_ESCAPE,
                        parse::range(w),
                        format!("`{func}` copies the namespace of {m} (`{shown}.__dict__`) onto the wrapper: everything it holds (the modules it imports, private state) is then an attribute of the wrapper"),
                        Some("Wrap functions, not modules; pass `updated=()` if only the name and docstring are wanted".into()),
                    );
                }
            }
        }
        let mut args: Vec<Node<'t>> = pos.iter().skip(skip).take(2).copied().collect();
        args.extend(
            kws.iter()
                .filter(|(k, _)| k == "assigned" || k == "updated")
                .map(|(_, v)| *v),
        );
        for a in args {
            let v = self.it.eval(a, env, 0);
            let items = elements(&v);
            let mut computed = false;
            for s in items.strs().map(str::to_string).collect::<Vec<_>>() {
                if is_dunder(&s) && !WRAPPER_DEFAULTS.contains(&s.as_str()) {
                    self.report(
                        &DUNDER_ACCESS,
                        parse::range(a),
                        format!("`{func}` copies dunder attribute `{s}` with `getattr`/`setattr` by name"),
                        Some("`update_wrapper(w, json.dumps, updated=(\"__globals__\",))` merges a module's globals into the cell".into()),
                    );
                } else if let Some((objs, shown)) = &wrapped_v {
                    // The read `getattr(wrapped, s)`, checked as the attribute written out.
                    self.attr_findings(objs, &s, parse::range(a), shown);
                }
            }
            // A display of names with one that cannot be folded (`(name,)`), or a value that
            // is not a sequence cellguard can read (`names()`, `DEFAULTS + extra`).
            if v.iter().any(|x| match x {
                Val::Seq(items) => items.iter().any(|i| i.has_unknown()),
                Val::Str(_) => false,
                _ => true,
            }) {
                computed = true;
            }
            if computed {
                self.report(
                    &DYNAMIC_ATTRIBUTE_ACCESS,
                    parse::range(a),
                    format!("`{func}` with computed attribute names: cellguard cannot tell which attributes it copies"),
                    None,
                );
            }
        }
    }

    /// [`Self::check_string_dunder_body`] for a value installed as `__repr__`/`__str__`: a
    /// lambda, or a name or expression whose values are cell functions.
    fn check_string_dunder_value(&mut self, name: &str, at: Node<'t>, value: Node<'t>, env: &Env) {
        let v = unparen(value);
        if v.kind_name() == "lambda" {
            if let Some(b) = v.field(F::Body) {
                self.check_string_dunder_body(name, at, b);
            }
            return;
        }
        // A wrapper object (`functools.partial(f)`, `lru_cache(f)`, `wraps(g)(f)`) or a host
        // function (`partial(json.dumps, ...)`, `log`): cellguard cannot check what it runs,
        // and the host calls it (round 5 H20).
        let opaque = if v.kind_name() == "call" {
            Some(format!("is `{}`, a call result", short(self.text(v))))
        } else {
            self.it
                .eval(v, env, 0)
                .iter()
                .any(|x| matches!(x, Val::Member(_) | Val::Module(_)))
                .then(|| format!("is `{}`, a host callable", short(self.text(v))))
        };
        if let Some(w) = opaque {
            self.report(
                &DUNDER_METHOD_DEFINITION,
                parse::range(at),
                format!("`{name}` {w} whose code cellguard cannot check: it runs in the host whenever the object crosses into it (an exception the cell raises, `log(obj)`, `results[k] = obj`, IPython displaying the cell's value), after the cell and outside its checks"),
                Some("Let `__repr__`/`__str__` be a lambda or `def` that only builds and returns a string from the object's fields".into()),
            );
            return;
        }
        let bodies: Vec<Node<'t>> = self
            .it
            .eval(v, env, 0)
            .iter()
            .filter_map(|x| match x {
                Val::Func(id) => self
                    .it
                    .funcs
                    .get(*id as usize)
                    .and_then(|f| f.node.field(F::Body)),
                _ => None,
            })
            .collect();
        for b in bodies {
            self.check_string_dunder_body(name, at, b);
        }
    }

    fn check_type_dict(&mut self, dict: Node<'t>, env: &Env, label: &str) {
        let inner = unparen(dict);
        // `type("E", (Exception,), {"__str__": lambda s: print(...) or "x"})`,
        // `dict(__repr__=f)` (G16).
        match inner.kind_name() {
            "dictionary" => {
                for pair in named(inner) {
                    let (Some(k), Some(v)) = (pair.field(F::Key), pair.field(F::Value)) else {
                        continue;
                    };
                    let keys: Vec<String> =
                        self.it.eval(k, env, 0).strs().map(str::to_string).collect();
                    for key in keys {
                        if string_hook(&key) {
                            self.check_string_dunder_value(&key, k, v, env);
                        }
                    }
                }
            }
            "call" => {
                let (_, kws, _) = call_args(inner.field(F::Arguments), self.it.src);
                for (k, v) in kws {
                    if string_hook(&k) {
                        self.check_string_dunder_value(&k, v, v, env);
                    }
                }
            }
            _ => {}
        }
        // `type("A", (), dict(__del__=f))`, `collections.OrderedDict(__del__=f)`.
        if inner.kind_name() == "call" {
            let (_, kws, _) = call_args(inner.field(F::Arguments), self.it.src);
            for (k, v) in kws {
                if is_method_dunder(&k) {
                    self.report(
                        &DUNDER_METHOD_DEFINITION,
                        parse::range(v),
                        format!("`{label}` defines dunder method `{k}` on a new class"),
                        Some(dunder_method_help()),
                    );
                }
            }
        }
        // `ns["__del__"] = f; type("A", (), ns)`.
        if inner.kind_name() == "identifier" {
            let name = ident(inner, self.it.src).into_owned();
            let keys: Vec<String> = self
                .dunder_keyed
                .iter()
                .filter(|(n, _)| *n == name)
                .map(|(_, k)| k.clone())
                .collect();
            for k in keys {
                self.report(
                    &DUNDER_METHOD_DEFINITION,
                    parse::range(dict),
                    format!("`{label}` defines dunder method `{k}` on a new class (set as an item of `{name}`)"),
                    Some(dunder_method_help()),
                );
            }
        }
        let v = self.it.eval(dict, env, 0);
        if let Some(why) = self.unfolded_namespace(inner, &v, env) {
            self.report(
                &DUNDER_ACCESS,
                parse::range(dict),
                format!("A class is built at runtime from a namespace cellguard cannot read ({why}): its keys may define dunder methods, `__match_args__` or `__instancecheck__`"),
                Some("Write the class as a `class` statement, or pass a dict display with constant keys".into()),
            );
        }
        for d in v.iter() {
            if let Val::Dict(pairs) = d {
                for (k, _) in pairs.iter() {
                    for s in k.strs() {
                        if is_dunder(s) && !ALLOWED_DUNDER_METHODS.contains(&s) {
                            let s = s.to_string();
                            self.report(
                                &DUNDER_METHOD_DEFINITION,
                                parse::range(dict),
                                format!("`{label}` defines dunder method `{s}` on a new class"),
                                Some(dunder_method_help()),
                            );
                        }
                    }
                }
            }
        }
    }

    /// `pydantic.create_model(name, __validators__=ns, **fields)` (round 7 S7-9). pydantic
    /// pastes the `__validators__` dict into the new model's class namespace whatever its keys
    /// (`{"__del__": f}`, `{"__getattr__": f}`, `{"__init_subclass__": classmethod(f)}` become
    /// methods the interpreter calls later), and leaves a field whose name is a dunder
    /// (`__del__=(object, f)`) on the class as that attribute: both are checked like the
    /// namespace of `type(name, bases, ns)`. Keys of `**fields` that cellguard cannot fold are
    /// SBX002, as an unreadable class namespace is.
    fn check_create_model(&mut self, call: Node<'t>, kws: &[(String, Node<'t>)], env: &Env) {
        /// `create_model`'s own double-underscore parameters (pydantic v1 and v2).
        const PARAMS: &[&str] = &[
            "__config__",
            "__doc__",
            "__base__",
            "__module__",
            "__validators__",
            "__cls_kwargs__",
            "__slots__",
        ];
        if let Some((_, ns)) = kws.iter().find(|(k, _)| k == "__validators__") {
            self.check_type_dict(*ns, env, "create_model(...)");
        }
        for (k, v) in kws {
            if is_dunder(k)
                && !PARAMS.contains(&k.as_str())
                && !ALLOWED_DUNDER_METHODS.contains(&k.as_str())
            {
                self.report(
                    &DUNDER_METHOD_DEFINITION,
                    parse::range(*v),
                    format!("`create_model` field `{k}` is left on the model class as its `{k}`"),
                    Some(dunder_method_help()),
                );
            }
        }
        let Some(args) = call.field(F::Arguments) else {
            return;
        };
        for a in named(args) {
            if a.kind_name() != "dictionary_splat" {
                continue;
            }
            let Some(inner) = named(a).into_iter().next() else {
                continue;
            };
            self.check_type_dict(inner, env, "create_model(...)");
        }
    }

    /// The builtin base types (see [`builtin_base_methods`]) among the values of `bases`.
    fn builtin_bases(&self, nodes: &[Node<'t>], vals: &[VSet]) -> Vec<&'static str> {
        let mut out = Vec::new();
        for n in nodes {
            let t = self.text(unparen(*n)).trim_end();
            let last = t.rsplit('.').next().unwrap_or(t).trim();
            let last = self.type_of_builtin_value(unparen(*n)).unwrap_or(last);
            if let Some(b) = builtin_base_name(last) {
                if !out.contains(&b) {
                    out.push(b);
                }
            }
        }
        for v in vals {
            for x in v.iter() {
                let b = match x {
                    Val::Builtin(b) => Some(*b),
                    Val::Member(p) => BUILTIN_BASE_MEMBERS
                        .iter()
                        .find(|(m, _)| **m == **p)
                        .map(|(_, b)| *b),
                    _ => None,
                };
                if let Some(b) = b.filter(|b| !builtin_base_methods(b).is_empty()) {
                    if !out.contains(&b) {
                        out.push(b);
                    }
                }
            }
        }
        out
    }

    /// For a base written `type(<value>)` (round 5 H3, H15): the builtin type of the value when
    /// it is a literal (`type({})` is `dict`, `type("")` is `str`), one of Colony's data
    /// containers (`type(results)` is `dict`, `type(goals)` is `list`) or a value that folds
    /// to a string, dict or sequence.
    fn type_of_builtin_value(&self, n: Node<'t>) -> Option<&'static str> {
        if n.kind_name() != "call" {
            return None;
        }
        let f = unparen(n.field(F::Function)?);
        if f.kind_name() != "identifier" || ident(f, self.it.src) != "type" {
            return None;
        }
        let (pos, kws, splat) = call_args(n.field(F::Arguments), self.it.src);
        let [a] = pos.as_slice() else { return None };
        if !kws.is_empty() || splat {
            return None;
        }
        let a = unparen(*a);
        let by_kind = match a.kind_name() {
            "dictionary" | "dictionary_comprehension" => Some("dict"),
            "list" | "list_comprehension" => Some("list"),
            "set" | "set_comprehension" => Some("set"),
            "tuple" => Some("tuple"),
            "string" | "concatenated_string" => {
                let prefix: String = self
                    .text(a)
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .collect();
                Some(if prefix.to_ascii_lowercase().contains('b') {
                    "bytes"
                } else {
                    "str"
                })
            }
            "integer" => Some("int"),
            "float" => Some("float"),
            "identifier" => match &*ident(a, self.it.src) {
                "results" | "params" => Some("dict"),
                "goals" | "pages" => Some("list"),
                _ => None,
            },
            _ => None,
        };
        if by_kind.is_some() {
            return by_kind;
        }
        let v = self.it.eval(a, &Env::Global, 0);
        if v.is_empty() || v.has_unknown() {
            return None;
        }
        let mut kinds = v.iter().map(|x| match x {
            Val::Str(_) => Some("str"),
            Val::Dict(_) => Some("dict"),
            _ => None,
        });
        let first = kinds.next()??;
        kinds.all(|k| k == Some(first)).then_some(first)
    }

    /// The builtin bases of the class the cell binds to `name`, when it builds one: a
    /// `type(name, bases, ns)` call assigned to it or a `class name(dict):` statement.
    fn builtin_bases_of_name(&mut self, name: &str, env: &Env) -> Vec<&'static str> {
        let mut out = Vec::new();
        for r in self.assignments_of(name).iter().copied() {
            let r = unparen(r);
            if r.kind_name() != "call" {
                continue;
            }
            let (pos, _, _) = call_args(r.field(F::Arguments), self.it.src);
            if pos.len() != 3 {
                continue;
            }
            let callee = self.it.eval(r.field(F::Function).unwrap_or(r), env, 0);
            if !callee
                .iter()
                .any(|v| matches!(v, Val::Builtin(b) if *b == "type" || *b == METACLASS))
            {
                continue;
            }
            let bv = self.it.eval(pos[1], env, 0);
            let items: Vec<VSet> = bv
                .iter()
                .filter_map(|v| match v {
                    Val::Seq(items) => Some(items.iter().cloned().collect::<Vec<_>>()),
                    _ => None,
                })
                .flatten()
                .collect();
            let display: Vec<Node<'t>> = match unparen(pos[1]).kind_name() {
                "tuple" | "list" => named(unparen(pos[1])),
                _ => Vec::new(),
            };
            for b in self.builtin_bases(&display, &items) {
                if !out.contains(&b) {
                    out.push(b);
                }
            }
        }
        out
    }

    /// SBX009 for methods written into a class the cell built on a builtin base, or into an
    /// instance of one, after the class was made: `R.items = spy`, `setattr(R, "items", spy)`,
    /// `r.items = spy`, `vars(r)["items"] = spy`, `r.__dict__.update(items=spy)`. The host
    /// finds them as it finds a method in the class body (`json.dumps` calls `r.items()`, and
    /// an instance attribute shadows the class's method). `obj` is the class or instance
    /// written to, `names` the attribute names with where to report each, `value` the value
    /// stored when there is one: a constant (`r.items = None`, `C.__hash__ = None`) is data,
    /// not a method, and is not reported.
    fn check_base_method_store(
        &mut self,
        obj: Node<'t>,
        names: &[(String, TextRange)],
        value: Option<Node<'t>>,
        env: &Env,
    ) {
        if names.is_empty() || value.is_some_and(constant_value) {
            return;
        }
        // A dunder method written onto any object (`C.__del__ = f`, `setattr(C, "__eq__", f)`,
        // `vars(C)["__hash__"] = f`): installed like `def __del__` in the class body.
        for (n, range) in names {
            if is_method_dunder(n) {
                self.report(
                    &DUNDER_METHOD_DEFINITION,
                    *range,
                    format!(
                        "Writing `{n}` onto `{}` installs a dunder method",
                        short(self.text(obj))
                    ),
                    Some(dunder_method_help()),
                );
            }
        }
        let bases = self.holder_builtin_bases(obj, env, 0);
        if !bases.is_empty() {
            self.report_base_overrides(&bases, names.to_vec());
        }
    }

    /// The builtin bases of the class behind `obj`, when the cell built it: a class of a
    /// `class` statement or an instance of one (through [`Val::Class`]/[`Val::Inst`], cell
    /// base classes followed: `class S(R)`), a class built with `type(name, (dict,), ns)`
    /// bound to the name `obj` spells, an instance made by calling such a name (`r = R()`),
    /// and a name bound to another such name (`S = R`).
    fn holder_builtin_bases(&mut self, obj: Node<'t>, env: &Env, depth: u32) -> Vec<&'static str> {
        let obj = unparen(obj);
        let mut out: Vec<&'static str> = Vec::new();
        if depth > 4 {
            return out;
        }
        let add = |out: &mut Vec<&'static str>, bs: Vec<&'static str>| {
            for b in bs {
                if !out.contains(&b) {
                    out.push(b);
                }
            }
        };
        let v = self.it.eval(obj, env, 0);
        for x in v.iter() {
            if let Val::Class(id) | Val::Inst(id) = x {
                let bs = self.class_builtin_bases(*id, 0);
                add(&mut out, bs);
            }
        }
        if obj.kind_name() == "identifier" {
            let name = ident(obj, self.it.src).into_owned();
            let bs = self.builtin_bases_of_name(&name, env);
            add(&mut out, bs);
            // A class statement's name, resolved syntactically as `collect_classes` does: the
            // gated analysis need not have demanded the name (`r = R(); object.__setattr__(r,
            // ...)` reads `R` only through `r`'s binding).
            for id in self.class_ids_named(&name) {
                let bs = self.class_builtin_bases(id, 0);
                add(&mut out, bs);
            }
            for r in self.assignments_of(&name).iter().copied() {
                let r = unparen(r);
                let named_class = match r.kind_name() {
                    "identifier" => Some(r),
                    "call" => r
                        .field(F::Function)
                        .map(unparen)
                        .filter(|f| f.kind_name() == "identifier"),
                    _ => None,
                };
                if let Some(c) = named_class.filter(|c| ident(*c, self.it.src) != name) {
                    let bs = self.holder_builtin_bases(c, env, depth + 1);
                    add(&mut out, bs);
                }
            }
        }
        out
    }

    /// The builtin bases of the cell's class `id` (a `class` statement), through its cell base
    /// classes and bases built with `type(...)`.
    fn class_builtin_bases(&mut self, id: u32, depth: u32) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        if depth > 8 {
            return out;
        }
        let Some(class) = self.index().and_then(|ix| {
            ix.of_kinds(&["class_definition"])
                .into_iter()
                .find(|c| self.it.class_ids.get(&c.id()) == Some(&id))
        }) else {
            return out;
        };
        let nodes: Vec<Node<'t>> = class
            .field(F::Superclasses)
            .map(named)
            .unwrap_or_default()
            .into_iter()
            .filter(|b| b.kind_name() != "keyword_argument")
            .collect();
        let vals: Vec<VSet> = nodes
            .iter()
            .map(|b| self.it.eval(*b, &Env::Global, 0))
            .collect();
        out = self.builtin_bases(&nodes, &vals);
        // Cell base classes by name, as `collect_classes` resolves them (a base name need not
        // be demanded by the gated analysis, so its value may be unknown).
        for n in &nodes {
            let mut found = Vec::new();
            if unparen(*n).kind_name() == "identifier" {
                let name = ident(unparen(*n), self.it.src).into_owned();
                for b in self.class_ids_named(&name) {
                    if b != id {
                        found.extend(self.class_builtin_bases(b, depth + 1));
                    }
                }
                found.extend(self.builtin_bases_of_name(&name, &Env::Global));
            }
            for b in found {
                if !out.contains(&b) {
                    out.push(b);
                }
            }
        }
        out
    }

    /// The cell's classes (`class` statements) named `name`.
    fn class_ids_named(&mut self, name: &str) -> Vec<u32> {
        let Some(ix) = self.index() else {
            return Vec::new();
        };
        ix.of_kinds(&["class_definition"])
            .into_iter()
            .filter(|c| {
                c.field(F::Name)
                    .is_some_and(|n| ident(n, self.it.src) == name)
            })
            .filter_map(|c| self.it.class_ids.get(&c.id()).copied())
            .collect()
    }

    /// The object whose namespace dict `n` is: `x` for `vars(x)` (the builtin) and for
    /// `x.__dict__`.
    fn namespace_owner(&mut self, n: Node<'t>) -> Option<Node<'t>> {
        let n = unparen(n);
        match n.kind_name() {
            "attribute" => n
                .field(F::Attribute)
                .filter(|a| ident(*a, self.it.src) == "__dict__")
                .and(n.field(F::Object)),
            "call" => {
                let f = n.field(F::Function)?;
                let is_vars = self
                    .it
                    .eval(f, &Env::Global, 0)
                    .builtins()
                    .any(|b| b == "vars");
                let (pos, kws, splat) = call_args(n.field(F::Arguments), self.it.src);
                match pos.as_slice() {
                    [x] if is_vars && kws.is_empty() && !splat => Some(*x),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `vars(r).update(items=spy)`, `r.__dict__.update({"items": spy})`,
    /// `vars(r).setdefault("items", spy)`, `vars(r).__setitem__("items", spy)`, and the explicit
    /// `__setattr__` forms (`type.__setattr__(R, "items", spy)`,
    /// `object.__setattr__(r, "items", spy)`, `r.__setattr__("items", spy)`):
    /// [`Self::check_base_method_store`] for the names.
    fn check_namespace_update(&mut self, node: Node<'t>, env: &Env) {
        let Some(callee) = node.field(F::Function).map(unparen) else {
            return;
        };
        if callee.kind_name() != "attribute" {
            return;
        }
        let (Some(obj), Some(method)) = (callee.field(F::Object), callee.field(F::Attribute))
        else {
            return;
        };
        let method = ident(method, self.it.src).into_owned();
        if method == "__setattr__" {
            let (pos, _, _) = call_args(node.field(F::Arguments), self.it.src);
            // On a type (`type.__setattr__(R, name, v)`, `dict.__setattr__(r, name, v)`) the
            // holder is the first argument; on anything else the method is bound to it.
            let unbound = self
                .it
                .eval(obj, env, 0)
                .iter()
                .any(|v| matches!(v, Val::Builtin(_) | Val::Class(_)));
            let (holder, name, value) = match (unbound, pos.as_slice()) {
                (true, [h, n, v, ..]) => (*h, *n, *v),
                (false, [n, v, ..]) => (obj, *n, *v),
                _ => return,
            };
            self.check_key_store(holder, name, parse::range(node), Some(value), env);
            return;
        }
        if !matches!(method.as_str(), "update" | "setdefault" | "__setitem__") {
            return;
        }
        let Some(owner) = self.namespace_owner(obj) else {
            return;
        };
        let range = parse::range(node);
        let (pos, kws, _) = call_args(node.field(F::Arguments), self.it.src);
        // Keyword arguments with their values; keys of dict displays (constant values
        // dropped), and of other dicts with values cellguard cannot see.
        for (k, v) in &kws {
            self.check_base_method_store(owner, &[(k.clone(), parse::range(*v))], Some(*v), env);
        }
        match method.as_str() {
            "update" => {
                let mut names: Vec<(String, TextRange)> = Vec::new();
                for p in &pos {
                    if unparen(*p).kind_name() == "dictionary" {
                        for pair in named(unparen(*p)) {
                            if let (Some(k), Some(v)) = (pair.field(F::Key), pair.field(F::Value)) {
                                self.check_key_store(owner, k, parse::range(k), Some(v), env);
                            }
                        }
                        continue;
                    }
                    for d in self.it.eval(*p, env, 0).iter() {
                        if let Val::Dict(pairs) = d {
                            for (k, _) in pairs.iter() {
                                names.extend(k.strs().map(|s| (s.to_string(), range)));
                            }
                        }
                    }
                }
                self.check_base_method_store(owner, &names, None, env);
            }
            _ => {
                if let Some(k) = pos.first() {
                    self.check_key_store(owner, *k, range, pos.get(1).copied(), env);
                }
            }
        }
    }

    /// [`Self::check_base_method_store`] for the constant names `key` folds to, each reported
    /// at `at`: the written names of `setattr`-like stores and namespace-dict updates.
    fn check_key_store(
        &mut self,
        holder: Node<'t>,
        key: Node<'t>,
        at: TextRange,
        value: Option<Node<'t>>,
        env: &Env,
    ) {
        let names: Vec<(String, TextRange)> = self
            .it
            .eval(key, env, 0)
            .strs()
            .map(|s| (s.to_string(), at))
            .collect();
        self.check_base_method_store(holder, &names, value, env);
    }

    fn report_base_overrides(&mut self, bases: &[&'static str], names: Vec<(String, TextRange)>) {
        for (n, range) in names {
            let Some(base) = bases
                .iter()
                .find(|b| builtin_base_methods(b).contains(&n.as_str()))
            else {
                continue;
            };
            self.report(
                &DUNDER_METHOD_DEFINITION,
                range,
                format!("A subclass of `{base}` overrides its `{n}` method: the host calls it on a value it treats as a `{base}` (`json.dumps` and `pickle` call `items()` of a dict subclass, `copy.deepcopy` calls `append`/`extend` of a list subclass), running cell code after the cell has finished (like `__eq__`)"),
                Some("Store a plain `dict`/`list` (convert with `dict(x)`), or give the method a name the base type does not have".into()),
            );
        }
    }

    /// SBX009 for a class statement on a builtin container or scalar base (`class R(dict):`)
    /// whose body binds one of the base's own methods (`def items(self)`, `keys = f`).
    fn check_class_base_overrides(&mut self, class: Node<'t>, env: &Env) {
        let nodes: Vec<Node<'t>> = class
            .field(F::Superclasses)
            .map(named)
            .unwrap_or_default()
            .into_iter()
            .filter(|b| b.kind_name() != "keyword_argument")
            .collect();
        let vals: Vec<VSet> = nodes.iter().map(|b| self.it.eval(*b, env, 0)).collect();
        let bases = self.builtin_bases(&nodes, &vals);
        if bases.is_empty() {
            return;
        }
        let Some(body) = class.field(F::Body) else {
            return;
        };
        let mut names = Vec::new();
        for st in named(body) {
            let st = match st.kind_name() {
                "decorated_definition" => st.field(F::Definition).unwrap_or(st),
                "expression_statement" => first_named(st).unwrap_or(st),
                _ => st,
            };
            let target = match st.kind_name() {
                "function_definition" => st.field(F::Name),
                "assignment" => st.field(F::Left).filter(|l| l.kind_name() == "identifier"),
                _ => None,
            };
            if let Some(t) = target {
                names.push((ident(t, self.it.src).into_owned(), parse::range(t)));
            }
        }
        self.report_base_overrides(&bases, names);
    }

    /// SBX009 for `type(name, (dict,), {"items": f})`: a class built at runtime on a builtin
    /// base whose namespace overrides one of the base's own methods (round 4 G32).
    fn check_type_base_overrides(&mut self, bases: Node<'t>, ns: Node<'t>, env: &Env) {
        let bv = self.it.eval(bases, env, 0);
        let items: Vec<VSet> = bv
            .iter()
            .filter_map(|v| match v {
                Val::Seq(items) => Some(items.iter().cloned().collect::<Vec<_>>()),
                _ => None,
            })
            .flatten()
            .collect();
        let display: Vec<Node<'t>> = match unparen(bases).kind_name() {
            "tuple" | "list" => named(unparen(bases)),
            _ => Vec::new(),
        };
        let bases = self.builtin_bases(&display, &items);
        if bases.is_empty() {
            return;
        }
        let range = parse::range(ns);
        let mut names = Vec::new();
        let inner = unparen(ns);
        if inner.kind_name() == "call" {
            let (_, kws, _) = call_args(inner.field(F::Arguments), self.it.src);
            names.extend(kws.into_iter().map(|(k, v)| (k, parse::range(v))));
        }
        for d in self.it.eval(ns, env, 0).iter() {
            if let Val::Dict(pairs) = d {
                for (k, _) in pairs.iter() {
                    names.extend(k.strs().map(|s| (s.to_string(), range)));
                }
            }
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        names.dedup_by(|a, b| a.0 == b.0);
        self.report_base_overrides(&bases, names);
    }

    /// Why the namespace of a class built at runtime (`type(name, bases, ns)`) cannot be read,
    /// or `None` when every key is known: a dict display whose keys all fold to constants, or
    /// `dict(k=v, ...)`, or a name bound to one that the cell only fills with constant keys
    /// (`ns["x"] = 1`). Keys from `dict.fromkeys`, `dict(zip(...))`, pairs, `**` unpacking,
    /// `ns[k] = ...` with a computed key, `ns.update(...)` with such a dict, or any other
    /// expression are unknown.
    fn unfolded_namespace(&self, inner: Node<'t>, v: &VSet, env: &Env) -> Option<String> {
        if inner.kind_name() == "call" {
            let (pos, _, splat) = call_args(inner.field(F::Arguments), self.it.src);
            let callee = inner.field(F::Function).map(|f| self.text(f)).unwrap_or("");
            if matches!(callee, "dict" | "OrderedDict" | "collections.OrderedDict")
                && pos.is_empty()
                && !splat
            {
                return None;
            }
        }
        let folded = !v.is_empty()
            && v.iter().all(|d| match d {
                Val::Dict(pairs) => pairs
                    .iter()
                    .all(|(k, _)| !k.is_empty() && k.iter().all(|x| matches!(x, Val::Str(_)))),
                _ => false,
            });
        if !folded {
            return Some(format!("`{}`", short(self.text(inner))));
        }
        if inner.kind_name() != "identifier" {
            return None;
        }
        // A name: how the cell fills it after binding it.
        let name = ident(inner, self.it.src);
        for n in self.index()?.of_kinds(&["subscript", "call"]) {
            match n.kind_name() {
                "subscript" => {
                    let Some(obj) = n.field(F::Value).map(unparen) else {
                        continue;
                    };
                    if obj.kind_name() != "identifier" || ident(obj, self.it.src) != name {
                        continue;
                    }
                    let stored = self.it.parent(n).is_some_and(|p| {
                        matches!(p.kind_name(), "assignment" | "augmented_assignment")
                            && p.field(F::Left).is_some_and(|l| l.id() == n.id())
                    });
                    if !stored {
                        continue;
                    }
                    let key = n.child_by_field_name("subscript");
                    let kv = key.map(|k| self.it.eval(k, env, 0));
                    if !kv.is_some_and(|kv| {
                        !kv.is_empty() && kv.iter().all(|x| matches!(x, Val::Str(_)))
                    }) {
                        return Some(format!("`{name}[...]` is set with a computed key"));
                    }
                }
                "call" => {
                    let Some(f) = n.field(F::Function).map(unparen) else {
                        continue;
                    };
                    if f.kind_name() != "attribute" {
                        continue;
                    }
                    let (Some(o), Some(a)) =
                        (f.field(F::Object).map(unparen), f.field(F::Attribute))
                    else {
                        continue;
                    };
                    let method = ident(a, self.it.src);
                    if o.kind_name() == "identifier"
                        && ident(o, self.it.src) == name
                        && matches!(
                            &*method,
                            "update" | "setdefault" | "__setitem__" | "__ior__"
                        )
                    {
                        return Some(format!("`{name}.{method}(...)` fills it"));
                    }
                }
                _ => {}
            }
        }
        None
    }

    fn check_format(&mut self, node: Node<'t>, v: &VSet) {
        for s in v.strs().map(str::to_string).collect::<Vec<_>>() {
            let Some(pieces) = parse_format(&s) else {
                continue;
            };
            for p in pieces {
                let FormatPiece::Field(f) = p else { continue };
                let attrs: Vec<&str> = f
                    .steps
                    .iter()
                    .filter_map(|st| match st {
                        FormatStep::Attr(a) => Some(a.as_str()),
                        FormatStep::Index(_) => None,
                    })
                    .collect();
                // `{0.__class__.__name__}`: the class is read only for its name (FP1).
                let dunders: Vec<&str> = f
                    .steps
                    .iter()
                    .enumerate()
                    .filter_map(|(i, st)| match st {
                        FormatStep::Attr(a) => Some((i, a.as_str())),
                        FormatStep::Index(_) => None,
                    })
                    .filter(|&(i, a)| {
                        let class_name = a == "__class__"
                            && matches!(f.steps.get(i + 1),
                                Some(FormatStep::Attr(n)) if CLASS_NAME_READS.contains(&n.as_str()));
                        is_dunder(a) && !BENIGN_DUNDER_READS.contains(&a) && !class_name
                    })
                    .map(|(_, a)| a)
                    .collect();
                if !dunders.is_empty() {
                    self.report(
                        &DUNDER_ACCESS,
                        parse::range(node),
                        format!(
                            "Format field `{{{}}}` reads dunder attribute{} `{}`",
                            short(&f.text),
                            if dunders.len() > 1 { "s" } else { "" },
                            dunders.join("`, `")
                        ),
                        Some("`str.format` walks attributes in C: `\"{0.__class__}\".format(x)` reads `x.__class__`".into()),
                    );
                }
                if let Some(a) = attrs.iter().find(|a| FRAME_ATTRS.contains(a)) {
                    self.report(
                        &FRAME_WALK,
                        parse::range(node),
                        format!(
                            "Format field `{{{}}}` reads frame attribute `{a}`",
                            short(&f.text)
                        ),
                        None,
                    );
                }
            }
        }
    }

    /// The value a format field's argument (`0`, `name`, empty for automatic numbering, whose
    /// index is `auto`) may be.
    fn format_arg(&self, args: &FormatArgs, arg: &str, auto: usize) -> VSet {
        let index = if arg.is_empty() {
            Some(auto)
        } else {
            arg.parse::<usize>().ok()
        };
        let mut out = VSet::default();
        match index {
            Some(i) => {
                if let Some(v) = args.pos.get(i) {
                    out.join(v);
                }
                if let Some(seq) = &args.seq {
                    for v in seq.iter() {
                        out.join(&self.it.index_value(v, &Val::Int(i as i64)));
                    }
                }
            }
            None => {
                if let Some((_, v)) = args.kws.iter().find(|(k, _)| k == arg) {
                    out.join(v);
                }
                if let Some(m) = &args.mapping {
                    for v in m.iter() {
                        out.join(&self.it.index_value(v, &Val::str(arg)));
                    }
                }
            }
        }
        if args.opaque {
            out.push(Val::Unknown);
        }
        out.or_unknown()
    }

    /// Walks the fields of the templates `v` (the value of `node`) on the call's arguments:
    /// every attribute step is checked like an attribute of the argument
    /// (`"{0.contextlib.os.environ}".format(typing)` is `typing.contextlib.os`), every item step
    /// like a subscript (`{0.sys.modules[os]}`). Dunder and frame steps are reported by
    /// [`Self::check_format`].
    fn check_format_fields(&mut self, node: Node<'t>, v: &VSet, args: &FormatArgs) {
        let range = parse::range(node);
        for s in v.strs().map(str::to_string).collect::<Vec<_>>() {
            let Some(pieces) = parse_format(&s) else {
                continue;
            };
            let mut auto = 0usize;
            for p in pieces {
                let FormatPiece::Field(f) = p else { continue };
                let mut cur = self.format_arg(args, &f.arg, auto);
                if f.arg.is_empty() {
                    auto += 1;
                }
                let mut shown = if f.arg.is_empty() {
                    format!("{{{}}}", auto - 1)
                } else {
                    format!("{{{}}}", f.arg)
                };
                for st in &f.steps {
                    let mut next = VSet::default();
                    match st {
                        FormatStep::Attr(a) => {
                            if !is_dunder(a) {
                                self.attr_findings(&cur, a, range, &shown);
                            }
                            for x in cur.iter() {
                                next.join(&self.it.attr_value(x, a));
                            }
                            shown = format!("{shown}.{a}");
                        }
                        FormatStep::Index(k) => {
                            let key = match k.parse::<i64>() {
                                Ok(i) if k.bytes().all(|b| b.is_ascii_digit()) => Val::Int(i),
                                _ => Val::str(k.as_str()),
                            };
                            let keys = VSet::one(key.clone());
                            self.check_namespace_keys(&cur, &keys, range, Ctx::Load, node);
                            for x in cur.iter() {
                                next.join(&self.it.index_value(x, &key));
                            }
                            shown = format!("{shown}[{k}]");
                        }
                    }
                    cur = next.or_unknown();
                }
            }
        }
    }

    fn check_escape(&mut self, node: Node<'t>, env: &Env, how: &str) {
        // Reflective builtins and cell functions come only from non-plain names.
        if !self.it.is_obj_hot(node) {
            return;
        }
        let mut v = self.it.eval(node, env, 0);
        // A function or lambda that hands out a reflective builtin smuggles it just the same.
        let returned: Vec<VSet> = v
            .iter()
            .filter_map(|x| match x {
                Val::Func(id) => self.it.funcs.get(*id as usize).map(|f| f.returns.clone()),
                _ => None,
            })
            .collect();
        for r in &returned {
            v.join(r);
        }
        for b in v.builtins().collect::<Vec<_>>() {
            if REFLECTIVE.contains(&b) {
                self.report(
                    &DYNAMIC_ATTRIBUTE_ACCESS,
                    parse::range(node),
                    format!("`{b}` {how}: the attribute names it will be called with cannot be checked"),
                    Some("Higher-order use of `getattr` (`map(getattr, [m], [\"_os\"])`) was CVE-2025-5120".into()),
                );
            }
        }
    }

    // ---- definitions ------------------------------------------------------------------------

    /// SBX009 for a generator (or async generator) whose `yield` sits inside a `try` with a
    /// `finally` clause or an `except` that catches `GeneratorExit` (bare, `BaseException`,
    /// `GeneratorExit`), or inside a `with`/`async with` block: that code runs when the
    /// generator is closed, which for a generator left suspended (stored, or abandoned by a
    /// `break`) is when the host garbage-collects it or the host event loop finalizes it,
    /// after the cell has finished and outside its limits: the same class as `__del__`.
    /// Functions decorated as context managers (`contextlib.contextmanager`,
    /// `asynccontextmanager`) are exempt: their generator is closed by the `with` that uses
    /// it, inside the cell, and one never entered never runs its cleanup.
    fn check_generator_cleanup(&mut self, def: Node<'t>) {
        let Some(body) = def.field(F::Body) else {
            return;
        };
        if let Some(p) = self
            .it
            .parent(def)
            .filter(|p| p.kind_name() == "decorated_definition")
        {
            // The decorator must be contextlib's: a cell-defined `contextmanager = lambda f:
            // f` (or a rebound `contextlib`) turns nothing off (round 5 H24).
            let src = self.it.src;
            let root = self.root;
            let library = |d: Node<'t>| {
                let Some(e) = first_named(d).map(unparen) else {
                    return false;
                };
                let base = match e.kind_name() {
                    "identifier" => parse::text(e, src),
                    "attribute" => e
                        .field(F::Object)
                        .map(unparen)
                        .filter(|o| o.kind_name() == "identifier")
                        .map_or("", |o| parse::text(o, src)),
                    _ => return false,
                };
                !base.is_empty()
                    && !root.is_some_and(|r| {
                        super::containers::cell_binds(self.it.nav(), r, src, base, false)
                    })
            };
            if named(p).iter().any(|d| {
                d.kind_name() == "decorator"
                    && self.text(*d).trim_end().ends_with("contextmanager")
                    && library(*d)
            }) {
                return;
            }
        }
        /// True when `node` holds a `yield` of the function itself (not of a nested function,
        /// lambda or class).
        fn own_yield(node: Node, skip: Option<usize>) -> bool {
            let mut stack = vec![(node, 0u32)];
            while let Some((n, depth)) = stack.pop() {
                if depth > 200 || Some(n.id()) == skip {
                    continue;
                }
                match n.kind_name() {
                    "yield" => return true,
                    "function_definition" | "lambda" | "class_definition" => continue,
                    _ => {
                        let mut c = n.walk();
                        stack.extend(n.named_children(&mut c).map(|k| (k, depth + 1)));
                    }
                }
            }
            false
        }
        if !own_yield(body, None) {
            return;
        }
        let name = def
            .field(F::Name)
            .map(|n| ident(n, self.it.src).into_owned())
            .unwrap_or_default();
        let is_async = self.text(def).trim_start().starts_with("async");
        let who = if is_async {
            "the host event loop's async-generator finalizer"
        } else {
            "the host's garbage collector"
        };
        let help = Some("Exhaust or `close()` the generator inside the cell, or move the cleanup out of the generator".to_string());
        let mut stack = vec![(body, 0u32)];
        while let Some((n, depth)) = stack.pop() {
            if depth > 200 {
                continue;
            }
            match n.kind_name() {
                "function_definition" | "lambda" | "class_definition" => continue,
                "try_statement" => {
                    let finally = named(n)
                        .into_iter()
                        .find(|c| c.kind_name() == "finally_clause");
                    let guarded = own_yield(n, finally.map(|f| f.id()));
                    if guarded {
                        if let Some(f) = finally {
                            let kw = f.child(0).unwrap_or(f);
                            self.report(
                                &DUNDER_METHOD_DEFINITION,
                                parse::range(kw),
                                format!("Generator `{name}` runs this `finally` block when it is closed: left suspended, it is closed by {who}, after the cell has finished (like `__del__`)"),
                                help.clone(),
                            );
                        }
                        for e in named(n) {
                            if !matches!(e.kind_name(), "except_clause" | "except_group_clause") {
                                continue;
                            }
                            let header: String = named(e)
                                .into_iter()
                                .take_while(|c| c.kind_name() != "block")
                                .map(|c| self.text(c).to_string())
                                .collect::<Vec<_>>()
                                .join(" ");
                            let types = named(e)
                                .into_iter()
                                .find(|c| c.kind_name() != "block")
                                .map(|c| match kind(c) {
                                    K::AsPattern => first_named(c).unwrap_or(c),
                                    _ => c,
                                });
                            let catches_exit = header.trim().is_empty()
                                || header.contains("GeneratorExit")
                                || header.contains("BaseException")
                                || types.is_some_and(|t| {
                                    self.may_be_generator_exit(t, &mut HashSet::default())
                                });
                            if catches_exit {
                                let kw = e.child(0).unwrap_or(e);
                                self.report(
                                    &DUNDER_METHOD_DEFINITION,
                                    parse::range(kw),
                                    format!("Generator `{name}` runs this handler when it is closed (`GeneratorExit`): left suspended, it is closed by {who}, after the cell has finished (like `__del__`)"),
                                    help.clone(),
                                );
                            }
                        }
                    }
                }
                "with_statement" => {
                    let block = n.field(F::Body);
                    if block.is_some_and(|b| own_yield(b, None)) {
                        let end = named(n)
                            .into_iter()
                            .find(|c| c.kind_name() == "with_clause")
                            .map_or(n.start_byte(), |c| c.end_byte());
                        self.report(
                            &DUNDER_METHOD_DEFINITION,
                            TextRange::new(n.start_byte(), end.max(n.start_byte())),
                            format!("Generator `{name}` runs this `with` block's exit when it is closed: left suspended, it is closed by {who}, after the cell has finished (like `__del__`)"),
                            help.clone(),
                        );
                    }
                }
                _ => {}
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c).map(|k| (k, depth + 1)));
        }
    }

    /// True unless the `except` type expression `t` provably never evaluates to
    /// `GeneratorExit` or `BaseException` (the classes that catch the `GeneratorExit` that
    /// `close()` throws in). Names are resolved through every binding the cell makes of them
    /// (round 4 G31: `E = GeneratorExit` bound outside the generator): a class or function the
    /// cell defines, a module member (`json.JSONDecodeError`), and a name the cell never binds
    /// (a builtin such as `ValueError`, or a host name) cannot be either; a tuple, `a + b` or
    /// conditional is checked part by part; anything cellguard cannot resolve (a parameter, a
    /// `for` target, a subscript, a call, an attribute of a cell value) may be.
    fn may_be_generator_exit(&self, t: Node<'t>, seen: &mut HashSet<String>) -> bool {
        if seen.len() > 64 {
            return true;
        }
        let t = unparen(t);
        match kind(t) {
            K::Identifier => {
                let name = ident(t, self.it.src);
                if matches!(&*name, "GeneratorExit" | "BaseException") {
                    return true;
                }
                // Each name is resolved once: a cycle (`A = B`, `B = A`) adds nothing.
                if !seen.insert(name.to_string()) {
                    return false;
                }
                let mut root = t;
                while let Some(p) = self.it.parent(root) {
                    root = p;
                }
                // The cell's identifiers from its index; a code string's by a walk.
                let ids: Vec<Node<'t>> = match self.index() {
                    Some(index) if self.root.is_some_and(|r| r.id() == root.id()) => {
                        index.identifiers(&[&name])
                    }
                    _ => self
                        .it
                        .walk(root)
                        .filter(|n| kind(*n) == K::Identifier && ident(*n, self.it.src) == name)
                        .collect(),
                };
                ids.into_iter()
                    .any(|n| self.binding_may_be_generator_exit(n, seen))
            }
            K::Attribute => {
                let Some(a) = t.field(F::Attribute) else {
                    return true;
                };
                if matches!(&*ident(a, self.it.src), "GeneratorExit" | "BaseException") {
                    return true;
                }
                // A dotted module path the cell never rebinds: a module member.
                let mut o = t.field(F::Object);
                while let Some(x) = o {
                    match kind(x) {
                        K::Attribute => o = x.field(F::Object),
                        K::Identifier => return self.may_be_generator_exit(x, seen),
                        _ => return true,
                    }
                }
                true
            }
            K::Tuple | K::List | K::ExpressionList => named(t)
                .into_iter()
                .any(|c| self.may_be_generator_exit(c, seen)),
            K::BinaryOperator => [F::Left, F::Right].into_iter().any(|f| {
                t.field(f)
                    .is_none_or(|c| self.may_be_generator_exit(c, seen))
            }),
            K::ConditionalExpression => {
                // `A if cond else B`: the first and last named children are the values.
                let kids = named(t);
                kids.first()
                    .is_none_or(|c| self.may_be_generator_exit(*c, seen))
                    || kids
                        .get(2)
                        .is_none_or(|c| self.may_be_generator_exit(*c, seen))
            }
            _ => true,
        }
    }

    /// For an occurrence `n` of a name: true when it binds the name to a value that may be
    /// `GeneratorExit`/`BaseException` (see [`Self::may_be_generator_exit`]); false for a
    /// read, a deletion, a class or function definition, and an import of another name.
    fn binding_may_be_generator_exit(&self, n: Node<'t>, seen: &mut HashSet<String>) -> bool {
        let Some(p) = self.it.parent(n) else {
            return false;
        };
        match kind(p) {
            K::ClassDefinition | K::FunctionDefinition if is_field(p, F::Name, n) => return false,
            K::Attribute | K::KeywordArgument => return false,
            K::GlobalStatement | K::NonlocalStatement => return false,
            K::Assignment if is_field(p, F::Left, n) => {
                // `E = X` (also `E = F = X`, whose right side is the next assignment).
                let mut r = p.field(F::Right);
                while let Some(x) = r.filter(|x| kind(*x) == K::Assignment) {
                    r = x.field(F::Right);
                }
                return r.is_none_or(|r| self.may_be_generator_exit(r, seen));
            }
            K::NamedExpression if is_field(p, F::Name, n) => {
                return p
                    .field(F::Value)
                    .is_none_or(|v| self.may_be_generator_exit(v, seen));
            }
            K::DottedName | K::AliasedImport => {
                let mut stmt = p;
                while !matches!(kind(stmt), K::ImportStatement | K::ImportFromStatement) {
                    match self.it.parent(stmt) {
                        Some(x) => stmt = x,
                        None => return true,
                    }
                }
                let text = self.text(stmt);
                return text.contains("GeneratorExit") || text.contains("BaseException");
            }
            pk if super::scan::declares_name(pk, None) || pk == K::Parameters => return true,
            _ => {}
        }
        // A target position (destructuring, `for`, `with ... as`, augmented): unresolved.
        let mut cur = n;
        let mut parent = p;
        loop {
            match kind(parent) {
                K::PatternList
                | K::TuplePattern
                | K::ListPattern
                | K::ListSplatPattern
                | K::ParenthesizedExpression
                | K::Tuple
                | K::List
                | K::ExpressionList
                | K::ListSplat
                | K::AsPatternTarget => {}
                K::Assignment | K::ForStatement | K::ForInClause | K::AugmentedAssignment => {
                    return is_field(parent, F::Left, cur)
                }
                K::AsPattern => return is_field(parent, F::Alias, cur),
                K::DefaultParameter | K::TypedDefaultParameter => {
                    return is_field(parent, F::Name, cur)
                }
                K::TypedParameter => return first_named(parent).map(|f| f.id()) == Some(cur.id()),
                _ => return false,
            }
            cur = parent;
            match self.it.parent(parent) {
                Some(x) => parent = x,
                None => return false,
            }
        }
    }

    fn check_def_name(&mut self, def: Node<'t>) {
        if let Some(name) = def.field(F::Name) {
            let n = ident(name, self.it.src);
            let n = &*n;
            if string_hook(n) {
                if let Some(body) = def.field(F::Body) {
                    self.check_string_dunder_body(n, name, body);
                }
            }
            if is_dunder(n) && !ALLOWED_DUNDER_METHODS.contains(&n) {
                self.report(
                    &DUNDER_METHOD_DEFINITION,
                    parse::range(name),
                    format!("Definition of dunder method `{n}`"),
                    Some(dunder_method_help()),
                );
            }
        }
    }

    /// SBX009 for a `__repr__`/`__str__` whose body (a function body or a lambda's expression)
    /// does more than build and return a string. The two are exempt from the dunder-method
    /// rule (smolagents' `ALLOWED_DUNDER_METHODS`), but they run in the host whenever a cell
    /// object crosses into it: an exception the cell raises is formatted by the host's error
    /// handler, `log(obj)` and `results[k] = obj` are formatted by host code after the cell
    /// (round 4 G16). A body that only reads attributes and calls string-building functions
    /// and methods ([`STRING_BUILDING_CALLS`]) is fine; a call of anything else, a store into an
    /// attribute or item, `global`/`nonlocal`, `del`, `await` or `yield` is reported at
    /// `name_at`, once per body.
    fn check_string_dunder_body(&mut self, name: &str, name_at: Node<'t>, body: Node<'t>) {
        let src = self.it.src;
        let (methods, properties) = self.class_methods_around(body);
        // The method's receiver, whatever it is called (`self`, or a renamed first parameter).
        let first_param: Option<String> = self
            .it
            .parent(body)
            .filter(|d| matches!(d.kind_name(), "function_definition" | "lambda"))
            .and_then(|d| d.field(F::Parameters))
            .and_then(first_named)
            .filter(|p| p.kind_name() == "identifier")
            .map(|p| ident(p, src).into_owned());
        let mut what: Option<String> = None;
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            let found = match n.kind_name() {
                // Nested definitions only run when called, which is a call (lambdas are
                // walked: `map(lambda x: print(x), ...)`).
                "function_definition" | "class_definition" if n.id() != body.id() => continue,
                "call" => n.field(F::Function).and_then(|f| {
                    let f = unparen(f);
                    let callee = match f.kind_name() {
                        "identifier" => ident(f, src).into_owned(),
                        "attribute" => f
                            .field(F::Attribute)
                            .map(|a| ident(a, src).into_owned())
                            .unwrap_or_default(),
                        _ => String::new(),
                    };
                    // A name on the list that the cell binds to its own function or class
                    // (`def timedelta(...)`) runs cell code.
                    // `self.items()` where the class defines `items`: the class's own method,
                    // not the builtin one of the list (round 9 S9-26).
                    // (`self.__repr__()` from `__str__` is checked in its own right.)
                    let own_method = f.kind_name() == "attribute"
                        && methods.contains(&callee)
                        && !string_hook(&callee)
                        && callee != "__format__"
                        && f.field(F::Object).map(unparen).is_some_and(|o| {
                            o.kind_name() == "identifier"
                                && (matches!(&*ident(o, src), "self" | "cls")
                                    || first_param.as_deref() == Some(&*ident(o, src)))
                        });
                    let cell_code = own_method
                        || (f.kind_name() == "identifier"
                            && (self
                                .it
                                .eval(f, &Env::Global, 0)
                                .iter()
                                .any(|x| matches!(x, Val::Func(_) | Val::Class(_)))
                                || self.root.is_some_and(|r| {
                                    super::containers::cell_binds(
                                        self.it.nav(),
                                        r,
                                        src,
                                        &callee,
                                        false,
                                    )
                                })));
                    if !STRING_BUILDING_CALLS.contains(&callee.as_str()) || cell_code {
                        return Some(format!("calls `{}`", short(self.text(f))));
                    }
                    // Unbounded work with a "read-only" builtin (round 9 S9-17): a `range`
                    // whose bounds are not small constants or `len(...)`.
                    if callee == "range" && f.kind_name() == "identifier" {
                        let (pos, _, _) = call_args(n.field(F::Arguments), src);
                        let small = |a: &Node<'t>| {
                            let a = unparen(*a);
                            match a.kind_name() {
                                "integer" => self
                                    .text(a)
                                    .replace('_', "")
                                    .parse::<u64>()
                                    .is_ok_and(|v| v <= 100_000),
                                "unary_operator" => true,
                                "call" => a
                                    .field(F::Function)
                                    .is_some_and(|f| self.text(unparen(f)) == "len"),
                                _ => false,
                            }
                        };
                        if !pos.iter().all(small) {
                            return Some("loops over a `range` cellguard cannot bound".to_string());
                        }
                    }
                    // `map(bomb, xs)`, `sorted(xs, key=bomb)`: a higher-order string builder
                    // runs its callable argument; a cell function there runs cell code
                    // (round 5 H20 addendum; lambdas are walked below).
                    let (pos, kws, _) = call_args(n.field(F::Arguments), src);
                    let callables: Vec<Node<'t>> = match callee.as_str() {
                        "map" | "filter" | "reduce" => pos.first().copied().into_iter().collect(),
                        _ => kws
                            .iter()
                            .filter(|(k, _)| k == "key")
                            .map(|(_, v)| *v)
                            .collect(),
                    };
                    callables.into_iter().find_map(|c| {
                        let cell_fn = self
                            .it
                            .eval(c, &Env::Global, 0)
                            .iter()
                            .any(|x| matches!(x, Val::Func(_)))
                            || self.cell_function_ref(c, &methods);
                        // Anything but a string builder (`map(str, xs)`, `key=len`) or
                        // `filter(None, xs)` runs host code implicitly: `map(print, xs)`,
                        // `map(os_system, cmds)` (round 8 S8-11).
                        let uc = unparen(c);
                        let last = match uc.kind_name() {
                            "identifier" => Some(ident(uc, src).into_owned()),
                            "attribute" => {
                                uc.field(F::Attribute).map(|a| ident(a, src).into_owned())
                            }
                            _ => None,
                        };
                        let builder = uc.kind_name() == "none"
                            || last.is_some_and(|l| STRING_BUILDING_CALLS.contains(&l.as_str()));
                        let runs_code = cell_fn || !builder;
                        (runs_code && uc.kind_name() != "lambda").then(|| {
                            format!(
                                "runs `{}` through `{}`",
                                short(self.text(c)),
                                short(self.text(f))
                            )
                        })
                    })
                }),
                "assignment" | "augmented_assignment" => n.field(F::Left).and_then(|l| {
                    let l = unparen(l);
                    (!matches!(
                        l.kind_name(),
                        "identifier" | "pattern_list" | "tuple_pattern"
                    ))
                    .then(|| format!("stores into `{}`", short(self.text(l))))
                }),
                "global_statement" | "nonlocal_statement" => {
                    Some("rebinds names outside the method".to_string())
                }
                // `while True: pass` builds no string.
                "while_statement" => Some("loops with `while`".to_string()),
                // `self.label` where `label` is a `@property` of the class runs its getter
                // (round 6 S6-16).
                "attribute" => n
                    .field(F::Attribute)
                    .map(|a| ident(a, src))
                    .filter(|a| properties.contains(&**a))
                    .map(|a| format!("reads property `{a}`, whose getter is cell code")),
                "delete_statement" => Some("deletes".to_string()),
                "await" => Some("awaits".to_string()),
                "yield" => Some("yields".to_string()),
                // Unbounded work with "read-only" builtins (round 9 S9-17): a power, a
                // repetition by a large constant, a `range` whose bounds are not small
                // constants or `len(...)`.
                "binary_operator" => {
                    let op = n.field(F::Operator).map(|o| self.text(o)).unwrap_or("");
                    let big = |e: Option<Node<'t>>| {
                        e.map(unparen).is_some_and(|e| {
                            e.kind_name() == "integer"
                                && self
                                    .text(e)
                                    .replace('_', "")
                                    .parse::<u64>()
                                    .map_or(true, |v| v > 10_000)
                        })
                    };
                    // A power by a small constant exponent costs a bounded multiple of its
                    // base's size (`c ** 2`), and of two constants it is a small number
                    // (`2 ** 10`); any other power may be huge (`10 ** 11`, `x ** n`).
                    let int = |e: Option<Node<'t>>| {
                        e.map(unparen)
                            .filter(|e| e.kind_name() == "integer")
                            .and_then(|e| self.text(e).replace('_', "").parse::<u64>().ok())
                    };
                    let small_exponent = match (int(n.field(F::Left)), int(n.field(F::Right))) {
                        (_, None) => false,
                        (None, Some(e)) => e <= 100,
                        (Some(b), Some(e)) => u32::try_from(e)
                            .ok()
                            .and_then(|e| b.checked_pow(e))
                            .is_some_and(|v| v <= 10_000),
                    };
                    match op {
                        "**" if !small_exponent => {
                            Some("raises to a power (unbounded work)".to_string())
                        }
                        "*" if big(n.field(F::Left)) || big(n.field(F::Right)) => {
                            Some("repeats by a large number (unbounded work)".to_string())
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(w) = found {
                if what.is_none() {
                    what = Some(w);
                }
                continue;
            }
            stack.extend(named(n));
        }
        if let Some(w) = what {
            self.report(
                &DUNDER_METHOD_DEFINITION,
                parse::range(name_at),
                format!("`{name}` {w}: it runs in the host whenever the object crosses into it (an exception the cell raises, `log(obj)`, `results[k] = obj`, IPython displaying the cell's value or reporting its exception, pydantic formatting or serialising the model), after the cell and outside its checks"),
                Some("Let `__repr__`/`__str__` (and the methods the host calls to format or serialise an object) only build and return a value from the object's fields".into()),
            );
        }
    }

    /// The method names and the `@property` (`functools.cached_property`) names of the class
    /// whose method body is `body` (empty when `body` is not a method body of a `class`
    /// statement).
    fn class_methods_around(&self, body: Node<'t>) -> (HashSet<String>, HashSet<String>) {
        let mut methods = HashSet::default();
        let mut props = HashSet::default();
        let mut up = body.parent().and_then(|d| d.parent());
        if up.is_some_and(|p| p.kind_name() == "decorated_definition") {
            up = up.and_then(|p| p.parent());
        }
        let Some(class_body) = up.filter(|b| {
            b.kind_name() == "block"
                && b.parent()
                    .is_some_and(|c| c.kind_name() == "class_definition")
        }) else {
            return (methods, props);
        };
        for st in named(class_body) {
            let (def, decorators) = if st.kind_name() == "decorated_definition" {
                (st.field(F::Definition), decorator_names(st, self.it.src))
            } else {
                (Some(st), Vec::new())
            };
            let Some(def) = def.filter(|d| d.kind_name() == "function_definition") else {
                continue;
            };
            if let Some(n) = def.field(F::Name) {
                let n = ident(n, self.it.src).into_owned();
                if decorators.iter().any(|d| {
                    matches!(
                        d.as_str(),
                        "property" | "cached_property" | "computed_field"
                    )
                }) {
                    props.insert(n.clone());
                }
                methods.insert(n);
            }
        }
        (methods, props)
    }

    /// True when `c` names cell code: a function the cell defines by name (`key=spin`), or
    /// `self.m` / `cls.m` for a method `m` of the enclosing class (`map(self.fmt, xs)`).
    fn cell_function_ref(&mut self, c: Node<'t>, methods: &HashSet<String>) -> bool {
        let c = unparen(c);
        match c.kind_name() {
            "identifier" => {
                let n = ident(c, self.it.src).into_owned();
                self.index().is_some_and(|ix| {
                    ix.of_kinds(&["function_definition"])
                        .iter()
                        .any(|d| d.field(F::Name).is_some_and(|m| ident(m, self.it.src) == n))
                })
            }
            "attribute" => c
                .field(F::Attribute)
                .is_some_and(|a| methods.contains(&*ident(a, self.it.src))),
            _ => false,
        }
    }

    /// The last dotted segment of the callee of `call` as written (`PlainSerializer` for
    /// `pydantic.PlainSerializer(f)`), with its positional and keyword arguments.
    #[allow(clippy::type_complexity)]
    fn call_parts(
        &self,
        call: Node<'t>,
    ) -> Option<(String, Vec<Node<'t>>, Vec<(String, Node<'t>)>)> {
        let f = call.field(F::Function).map(unparen)?;
        let last = self
            .text(f)
            .rsplit('.')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        let (pos, kws, _) = call_args(call.field(F::Arguments), self.it.src);
        Some((last, pos, kws))
    }

    /// Round 9 S9-1, S9-22: a module-level binding of `__name__` (or `__package__`, `__spec__`,
    /// `__loader__`, `__file__`), by any binder (`=`, `for`, walrus, `match` capture, `global`
    /// in a function), is SBX002: every class the cell defines later takes `__module__` from
    /// `__name__`, and string annotations are then resolved in that module's globals. A
    /// module-level `__getattr__`/`__dir__` bound other than by `def` (`__getattr__ = lambda
    /// n: ...`, `for`, `match`) is SBX009 like the `def` form: PEP 562 calls it in the host.
    fn check_module_dunder_bindings(&mut self) {
        const NAMES: &[&str] = &[
            "__name__",
            "__package__",
            "__spec__",
            "__loader__",
            "__file__",
            "__getattr__",
            "__dir__",
        ];
        let Some(idx) = self.index() else {
            return;
        };
        let src = self.it.src;
        let mut found = Vec::new();
        for n in idx.identifiers(NAMES) {
            // `def __getattr__(name):` is a dunder method definition already.
            if self
                .it
                .parent(n)
                .is_some_and(|p| p.kind_name() == "function_definition")
                || !binds_name(&self.it, n)
            {
                continue;
            }
            let name = ident(n, src).into_owned();
            if self.binds_at_module_scope(n, &name) {
                found.push((n, name));
            }
        }
        for (n, name) in found {
            if matches!(name.as_str(), "__getattr__" | "__dir__") {
                self.report(
                    &DUNDER_METHOD_DEFINITION,
                    parse::range(n),
                    format!("Binding the cell's module-level `{name}`: Python calls it for every failed attribute lookup on the module (PEP 562), in the host, after the cell"),
                    Some(dunder_method_help()),
                );
            } else {
                self.report(
                    &DUNDER_ACCESS,
                    parse::range(n),
                    format!("Binding the cell's global `{name}`: classes, `typing.NamedTuple`/`TypedDict` and pydantic models take their `__module__` from it, and `typing.get_type_hints` then resolves their string annotations in `sys.modules[{name}]` (`__name__ = \"os\"` makes `x: \"system\"` `os.system`)"),
                    None,
                );
            }
        }
    }

    /// The annotated class attributes (`total: int`: dataclass, `NamedTuple`, pydantic
    /// fields) of every class of the cell, by class name, with those of its cell bases
    /// (round 9 S9-29).
    fn annotated_class_fields(&mut self) -> rustc_hash::FxHashMap<String, HashSet<String>> {
        let src = self.it.src;
        let mut own: rustc_hash::FxHashMap<String, (HashSet<String>, Vec<String>)> =
            Default::default();
        let Some(ix) = self.index() else {
            return Default::default();
        };
        for c in ix.of_kinds(&["class_definition"]) {
            let Some(name) = c.field(F::Name) else {
                continue;
            };
            let entry = own.entry(ident(name, src).into_owned()).or_default();
            if let Some(body) = c.field(F::Body) {
                for st in named(body) {
                    for e in named(st) {
                        if e.kind_name() == "assignment" && e.field(F::Type).is_some() {
                            if let Some(l) =
                                e.field(F::Left).filter(|l| l.kind_name() == "identifier")
                            {
                                entry.0.insert(ident(l, src).into_owned());
                            }
                        }
                    }
                }
            }
            if let Some(b) = c.field(F::Superclasses) {
                entry.1.extend(
                    named(b)
                        .into_iter()
                        .map(unparen)
                        .filter(|x| x.kind_name() == "identifier")
                        .map(|x| ident(x, src).into_owned()),
                );
            }
        }
        let mut out: rustc_hash::FxHashMap<String, HashSet<String>> = Default::default();
        for name in own.keys() {
            let mut acc: HashSet<String> = HashSet::default();
            let mut stack = vec![name.clone()];
            let mut seen: HashSet<String> = HashSet::default();
            while let Some(n) = stack.pop() {
                if seen.len() > 64 || !seen.insert(n.clone()) {
                    continue;
                }
                if let Some((f, b)) = own.get(&n) {
                    acc.extend(f.iter().cloned());
                    stack.extend(b.iter().cloned());
                }
            }
            out.insert(name.clone(), acc);
        }
        out
    }

    /// SBX009 for the methods the host runs to format or serialise a cell object, which run
    /// outside the executor's limits like `__repr__`/`__str__`: pydantic's `@computed_field`
    /// getters (the model's `repr`/`str` call them), `@model_serializer`/`@field_serializer`
    /// methods (`model_dump` in the host runs them), and `utcoffset`/`tzname`/`dst` of a cell
    /// `tzinfo` class (any formatting of an aware `datetime` calls them). Their bodies get
    /// [`Self::check_string_dunder_body`]. Round 6 S6-12.
    fn check_host_run_hooks(&mut self) {
        let src = self.it.src;
        if !(src.contains("computed_field")
            || src.contains("_serializer")
            || src.contains("Serializer")
            || src.contains("json_encoders")
            || src.contains("tzinfo")
            || src.contains("date")
            || src.contains("time")
            || src.contains("property"))
        {
            return;
        }
        let class_fields = if src.contains("property") {
            self.annotated_class_fields()
        } else {
            Default::default()
        };
        let Some(ix) = self.index() else { return };
        for def in ix.of_kinds(&["function_definition"]) {
            let (Some(name), Some(body)) = (def.field(F::Name), def.field(F::Body)) else {
                continue;
            };
            let n = ident(name, src).into_owned();
            let decorated = def
                .parent()
                .filter(|p| p.kind_name() == "decorated_definition")
                .map(|p| decorator_names(p, src))
                .unwrap_or_default();
            let hook = decorated.iter().any(|d| {
                matches!(
                    d.as_str(),
                    "computed_field" | "model_serializer" | "field_serializer"
                )
            }) || {
                let mut up = def.parent();
                if up.is_some_and(|p| p.kind_name() == "decorated_definition") {
                    up = up.and_then(|p| p.parent());
                }
                let sup = up
                    .and_then(|b| b.parent())
                    .filter(|c| c.kind_name() == "class_definition")
                    .and_then(|c| c.field(F::Superclasses));
                let bases = sup.map(|b| self.text(b)).unwrap_or("");
                // The last dotted part of each base (`collections.UserString` -> `UserString`).
                let base_names: Vec<&str> = sup
                    .map(|b| {
                        named(b)
                            .into_iter()
                            .map(|x| {
                                let t = self.text(unparen(x));
                                let t = t.split('[').next().unwrap_or(t);
                                t.rsplit('.').next().unwrap_or(t).trim()
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let property = decorated
                    .iter()
                    .any(|d| matches!(d.as_str(), "property" | "cached_property"));
                (matches!(n.as_str(), "utcoffset" | "tzname" | "dst") && bases.contains("tzinfo"))
                    // `str(d)`/`format(d, spec)` of a `datetime`/`date` subclass call these by
                    // name (round 9 S9-28).
                    || (matches!(n.as_str(), "isoformat" | "strftime" | "ctime")
                        && (bases.contains("date") || bases.contains("time")))
                    // The host's traceback formatter reads these of a `SyntaxError` the cell
                    // raises (round 9 S9-27).
                    || (property
                        && matches!(
                            n.as_str(),
                            "text" | "filename" | "lineno" | "offset" | "msg" | "end_lineno"
                                | "end_offset" | "print_file_and_line"
                        )
                        && (bases.contains("Error") || bases.contains("Exception")))
                    // A property shadowing a field of a cell base class (the dataclass's
                    // generated `__repr__` reads it), or `data` of a `UserString`/`UserDict`/
                    // `UserList` subclass (their `__str__`/`__repr__` read it) (round 9 S9-29).
                    || (property
                        && ((n == "data"
                            && base_names.iter().any(|b| {
                                matches!(*b, "UserString" | "UserDict" | "UserList")
                            }))
                            || base_names.iter().any(|b| {
                                class_fields.get(*b).is_some_and(|f| f.contains(&n))
                            })))
            };
            if hook {
                self.check_string_dunder_body(&n, name, body);
            }
        }
        // Serializers handed to pydantic by value run when the host dumps the model, like a
        // `@field_serializer` (round 9 S9-18): `Annotated[T, PlainSerializer(f)]`,
        // `WrapSerializer(f)`, `ConfigDict(json_encoders={T: f})`. A lambda's body, or the
        // body of the cell function named, gets the same restriction.
        let mut hooks: Vec<Node<'t>> = Vec::new();
        let (calls, defs) = match self.index() {
            Some(ix) => (
                ix.of_kinds(&["call"]),
                ix.of_kinds(&["function_definition"]),
            ),
            None => return,
        };
        for call in calls {
            let Some((last, pos, kws)) = self.call_parts(call) else {
                continue;
            };
            match last.as_str() {
                "PlainSerializer" | "WrapSerializer" => {
                    hooks.extend(
                        pos.first()
                            .copied()
                            .or_else(|| kws.iter().find(|(k, _)| k == "func").map(|(_, v)| *v)),
                    );
                }
                "ConfigDict" | "dict" => {
                    if let Some((_, enc)) = kws.iter().find(|(k, _)| k == "json_encoders") {
                        let enc = unparen(*enc);
                        if enc.kind_name() == "dictionary" {
                            for pair in named(enc) {
                                hooks.extend(pair.field(F::Value));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        for h in hooks {
            let h = unparen(h);
            match h.kind_name() {
                "lambda" => {
                    if let Some(b) = h.field(F::Body) {
                        self.check_string_dunder_body("serializer", h, b);
                    }
                }
                "identifier" => {
                    let n = ident(h, src).into_owned();
                    if let Some(def) = defs
                        .iter()
                        .find(|d| d.field(F::Name).is_some_and(|m| ident(m, src) == n))
                    {
                        if let (Some(name), Some(body)) = (def.field(F::Name), def.field(F::Body)) {
                            self.check_string_dunder_body(&n, name, body);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn check_assignment(&mut self, node: Node<'t>, env: &Env, nctx: &NodeCtx) {
        let (Some(left), right) = (node.field(F::Left), node.field(F::Right)) else {
            return;
        };
        // `__eq__ = lambda s, o: True` in a class body.
        let in_class = nctx.class_assign;
        if in_class && left.kind_name() == "identifier" {
            let n = ident(left, self.it.src);
            let n = &*n;
            let constant = right.is_none_or(constant_value);
            if is_dunder(n) && !ALLOWED_DUNDER_METHODS.contains(&n) && !constant {
                self.report(
                    &DUNDER_METHOD_DEFINITION,
                    parse::range(left),
                    format!("Class attribute `{n}` defines a dunder method"),
                    Some(dunder_method_help()),
                );
            }
            if string_hook(n) {
                if let Some(r) = right {
                    self.check_string_dunder_value(n, left, r, env);
                }
            }
        }
        // `ns["__d" + "el__"] = f`: remembered for `type(name, bases, ns)`.
        let target = unparen(left);
        if target.kind_name() == "subscript" {
            let key = target.child_by_field_name("subscript");
            if let (Some(obj), Some(key)) = (target.field(F::Value).map(unparen), key) {
                if obj.kind_name() == "identifier" {
                    let keys: Vec<String> = self
                        .it
                        .eval(key, env, 0)
                        .strs()
                        .map(str::to_string)
                        .collect();
                    for k in keys {
                        if is_method_dunder(&k) {
                            let o = ident(obj, self.it.src).into_owned();
                            self.dunder_keyed.push((o, k));
                        }
                    }
                }
            }
        }
        // Reflective builtins stored through attributes or subscripts, or bound in a class
        // body, which makes them class attributes (`class K: g = getattr` then
        // `K.g(m, "_os")`, `k = K; k.g(...)`, a subclass's `L.g`: new-user N-8).
        if let Some(r) = right {
            // `d["g"], other = getattr, 1`, `S.pick, x = getattr, 1`: the same store through
            // an unpacking target (round 9 S9-16).
            let unpacking = matches!(
                unparen(left).kind_name(),
                "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list"
            );
            if matches!(unparen(left).kind_name(), "attribute" | "subscript") {
                self.check_escape(r, env, "stored in an attribute or item");
            } else if unpacking
                && self
                    .it
                    .walk(left)
                    .any(|t| matches!(t.kind_name(), "attribute" | "subscript"))
            {
                let r = unparen(r);
                let items = if matches!(r.kind_name(), "expression_list" | "tuple" | "list") {
                    named(r)
                } else {
                    vec![r]
                };
                for item in items {
                    self.check_escape(item, env, "stored in an attribute or item by unpacking");
                }
            } else if in_class {
                self.check_escape(r, env, "bound in a class body (a class attribute)");
            }
        }
    }

    // ---- imports ----------------------------------------------------------------------------

    fn check_import(&mut self, node: Node<'t>) {
        let allow = self.it.cfg.allow;
        let private_segment = |m: &str| {
            m.split('.')
                .skip(1)
                .find(|s| is_private(s))
                .map(str::to_string)
        };
        match node.kind_name() {
            "import_statement" => {
                for child in named(node) {
                    let dotted = match child.kind_name() {
                        "aliased_import" => child.field(F::Name),
                        "dotted_name" => Some(child),
                        _ => None,
                    };
                    let Some(dotted) = dotted else { continue };
                    let module: String = ident(dotted, self.it.src).split_whitespace().collect();
                    let range = parse::range(dotted);
                    if let Some(seg) = private_segment(&module) {
                        self.report(
                            &MODULE_ESCAPE,
                            range,
                            format!("`import {module}` imports private module `{seg}`"),
                            Some("Private submodules hold what a package imported for itself; import the public module".into()),
                        );
                    }
                    self.unsafe_allowed(&module, child.kind_name() == "dotted_name", range, allow);
                }
            }
            "import_from_statement" => {
                let Some(m) = node.field(F::ModuleName) else {
                    return;
                };
                if m.kind_name() == "relative_import" {
                    return;
                }
                let module: String = ident(m, self.it.src).split_whitespace().collect();
                if let Some(seg) = private_segment(&module) {
                    self.report(
                        &MODULE_ESCAPE,
                        parse::range(m),
                        format!("`from {module} import ...` imports from private module `{seg}`"),
                        None,
                    );
                }
                self.unsafe_allowed(&module, false, parse::range(m), allow);
                if named(node)
                    .iter()
                    .any(|c| c.kind_name() == "wildcard_import")
                {
                    self.check_star_import(&module);
                    self.star_modules.push(module.clone());
                }
                let bindings = self.it.import_bindings(node);
                let base = std::rc::Rc::new(ModVal::new(
                    module.clone(),
                    self.it.cfg.table.real_name(&module),
                    if is_allowed(&module, allow) {
                        ModState::Ok
                    } else {
                        ModState::Blocked
                    },
                ));
                for (_, _, name_node) in bindings {
                    let name: String = ident(name_node, self.it.src).split_whitespace().collect();
                    let (res, esc) = self.it.module_step(&base, &name);
                    let range = parse::range(name_node);
                    if is_dunder(&name) && !BENIGN_DUNDER_READS.contains(&name.as_str()) {
                        self.report(
                            &DUNDER_ACCESS,
                            range,
                            format!(
                                "`from {module} import {name}` reads dunder attribute `{name}`"
                            ),
                            dunder_help(&name),
                        );
                    }
                    self.module_findings(&base, &name, &res, esc, range);
                    self.allowed_submodule(&module, &name, &res, range);
                    self.builtin_refs(name_node, &res, &name, false);
                }
            }
            _ => {}
        }
    }

    /// `from module import *` binds every public global of a module that has no `__all__`,
    /// the modules it imported for itself included (`from asyncio.base_subprocess import *`
    /// binds `subprocess`, `from asyncio.trsock import *` binds `socket`). The table records
    /// each module's module-valued attributes but not its `__all__`, so the star import is
    /// taken to bind all of them: every name the cell reads that the table records as a module
    /// attribute of `module` is checked as `module.name` (SBX005 when that leaves the
    /// allowlist), and every read name whose `module.name` is a denied member is SBX007
    /// (`from asyncio import *` then `create_subprocess_shell(...)`). For a module the table
    /// does not know (a third-party package), its exports are unknown: every read name that is
    /// a host-reaching module attribute of some module ([`unknown_host_attr`]) may be bound by
    /// the star import. Reads are reported wherever they are (the analysis does not decide
    /// whether a later binding of the same name always wins); cells without a star import are
    /// never affected.
    fn check_star_import(&mut self, module: &str) {
        let Some(root) = self.root else { return };
        let allow = self.it.cfg.allow;
        let table = self.it.cfg.table;
        let base = std::rc::Rc::new(ModVal::new(
            module.to_string(),
            table.real_name(module),
            if is_allowed(module, allow) {
                ModState::Ok
            } else {
                ModState::Blocked
            },
        ));
        let known = table.knows(&base.real);
        if !known && base.state == ModState::Blocked {
            // An import the allowlist blocks is already IMP001.
            return;
        }
        let src = self.it.src;
        // Every identifier the cell reads, in order.
        let mut reads: Vec<Node<'t>> = Vec::new();
        let mut stack: Vec<(Node<'t>, K, NodeCtx, u32)> =
            vec![(root, kind(root), NodeCtx::ROOT, 0)];
        while let Some((n, nk, nctx, depth)) = stack.pop() {
            if depth > 400 {
                continue;
            }
            if nk == K::Identifier {
                if nctx.is_load() {
                    reads.push(n);
                }
                continue;
            }
            if nk == K::DottedName && nctx.pattern && n.named_child_count() > 1 {
                // `case subprocess.PIPE:` reads its first name.
                reads.extend(first_named(n));
            }
            let first = stack.len();
            let mut kids = Children::new(n);
            while let Some((c, field)) = kids.next(true) {
                if c.is_named() {
                    let ck = kind(c);
                    if ck != K::Comment {
                        stack.push((c, ck, child_ctx(nk, &nctx, ck, field), depth + 1));
                    }
                }
            }
            stack[first..].reverse();
        }
        for n in reads {
            let name = ident(n, src).into_owned();
            if is_dunder(&name) || (known && !table.star_binds(&base.real, &name)) {
                continue;
            }
            let range = parse::range(n);
            let from = format!("`{name}` may be bound by `from {module} import *`");
            if known {
                if table.module_attr(&base.real, &name).is_some() {
                    let (_, esc) = self.it.module_step(&base, &name);
                    if let Some(e) = esc {
                        let (msg, help) = self.escape_message(&e);
                        self.report(
                            &MODULE_ESCAPE,
                            range,
                            format!("{from} (its `__all__`, or without one every public global, the modules it imported included): {msg}"),
                            help,
                        );
                    }
                }
            } else if let Some((target, _)) = unknown_host_attr(&name) {
                self.report(
                    &MODULE_ESCAPE,
                    range,
                    format!("{from}: cellguard does not know what `{module}` exports, and `{name}` is the name of host-reaching module `{target}`"),
                    Some("Import the names you need explicitly (`from m import a, b`) so they can be checked".into()),
                );
            }
            let path = format!("{}.{name}", base.real);
            if self.deny.matches(&path, table).is_some() {
                self.deny_check(&path, range);
            } else if *base.path != *base.real {
                self.deny_check(&format!("{}.{name}", base.path), range);
            }
        }
    }

    /// SBX006 for an import of `module` that the allowlist lets in. `binds_root` is true for a
    /// plain `import a.b`, which binds (and so hands out) the root package `a`.
    /// SBX006 for a submodule reached as a name of its allowed parent, by `from parent import
    /// sub` or `parent.sub` (`from lib2to3.pgen2 import driver`, `email.utils`), when the
    /// submodule is host-reaching: the same module `import parent.sub` binds (round 6 S6-18).
    /// `res` is what the step from `parent` to `name` gives; only module values count.
    fn allowed_submodule(&mut self, parent: &str, name: &str, res: &VSet, range: TextRange) {
        if is_private(name) || !res.iter().any(|v| matches!(v, Val::Module(_))) {
            return;
        }
        let sub = format!("{parent}.{name}");
        if super::host_module(&sub).is_some() && super::host_module(parent).is_none() {
            let allow = self.it.cfg.allow;
            self.unsafe_allowed(&sub, false, range, allow);
        }
    }

    fn unsafe_allowed(
        &mut self,
        module: &str,
        binds_root: bool,
        range: TextRange,
        allow: &[String],
    ) {
        if !is_allowed(module, allow) {
            return;
        }
        let real = self.it.cfg.table.real_name(module);
        let mut candidates = vec![real.clone()];
        if real == module {
            candidates.push(module.split('.').next().unwrap_or(module).to_string());
        }
        let root = module.split('.').next().unwrap_or(module);
        if binds_root && is_allowed(root, allow) {
            candidates.push(root.to_string());
        }
        let Some((hit, why)) = candidates
            .iter()
            .find_map(|c| host_module(c).map(|w| (c.clone(), w)))
        else {
            return;
        };
        let entry = allow
            .iter()
            .find(|a| is_allowed(&hit, std::slice::from_ref(a)))
            .cloned()
            .unwrap_or_default();
        self.report(
            &UNSAFE_MODULE_ALLOWED,
            range,
            format!("`{hit}` is allowed by the allowlist entry `{entry}`, but it reaches the host: {why}"),
            Some("Remove the entry, or allow only the members you need and deny the rest (`[lint.imports] deny-members`)".into()),
        );
    }
}

fn exec_reason(b: &str) -> &'static str {
    match b {
        "eval" | "exec" => "executes arbitrary code",
        "compile" => "compiles arbitrary code into code objects",
        "open" => "reads and writes the host's files",
        "breakpoint" => "starts a debugger that runs arbitrary code",
        "globals" | "locals" => "exposes the namespace, including `__builtins__`",
        "vars" => "exposes an object's namespace (`vars(m)[\"_os\"]`)",
        "help" => "runs the pager, which can start a shell",
        "get_ipython" => "hands out IPython's shell (`get_ipython().system(...)`)",
        _ => "reaches the host",
    }
}

fn exec_help(b: &str) -> Option<String> {
    match b {
        "open" | "get_ipython" => Some("IPython puts `open` and `get_ipython` in the REPL namespace; they pass every Colony validator (colony-reference §2.7)".into()),
        "eval" | "exec" | "compile" => Some("Aliases (`f = eval`), attribute forms (`__builtins__.eval`) and decorators (`@exec`) are the same call".into()),
        _ => None,
    }
}

fn dunder_help(name: &str) -> Option<String> {
    let h = match name {
        "__class__" | "__base__" | "__bases__" | "__mro__" | "__subclasses__" => {
            "Walking the class hierarchy reaches every loaded class, `subprocess.Popen` included (CVE-2025-9959)"
        }
        "__globals__" | "__builtins__" | "__dict__" | "__code__" | "__closure__" => {
            "Function and module namespaces hold `__builtins__` and every imported module"
        }
        "__self__" => "A builtin's `__self__` is the builtins module (`callable.__self__.exec`)",
        "__getattribute__" | "__getattr__" => {
            "Calling `__getattribute__` directly skips the checks on attribute names (CVE-2025-9959)"
        }
        "__traceback__" => "Tracebacks lead to frames and their globals",
        "__import__" => "`__import__` imports any module by name",
        _ => "Dunder attributes expose interpreter internals; stores to them change how objects behave (CVE-2026-4963)",
    };
    Some(h.to_string())
}

fn dunder_method_help() -> String {
    "Dunder methods run later, when the interpreter calls them (garbage collection, comparison, `with`), outside the executor's checks and limits (smolagents #2395); only `__init__`, `__repr__` and `__str__` are safe".into()
}

/// Names the host pre-binds for its own bookkeeping (Colony's `_run_call_trace`, the policy's
/// list of dispatched actions, colony-reference §2.1): any use but `len(...)` may mutate or
/// alias it (SBX005).
pub const HOST_STATE_NAMES: &[&str] = &["_run_call_trace"];

/// The dunder methods exempt from SBX009 that build a string for the host
/// (see `check_string_dunder_body`).
const STRING_DUNDERS: &[&str] = &["__repr__", "__str__"];

/// IPython's display and traceback hooks, which the host's IPython calls on the cell's objects
/// (its last expression value, an exception leaving the cell) after the cell: the same kind of
/// host-run code as `__repr__`/`__str__` (round 5 H6). `_repr_<mime>_` hooks match by shape.
const IPYTHON_HOOKS: &[&str] = &[
    "_render_traceback_",
    "_ipython_display_",
    "_repr_mimebundle_",
    "_repr_pretty_",
    "_ipython_key_completions_",
];

/// True for the methods whose body must only build a string ([`STRING_DUNDERS`] and
/// [`IPYTHON_HOOKS`], `_repr_html_`, `_repr_markdown_`, ...).
pub(crate) fn string_hook(name: &str) -> bool {
    STRING_DUNDERS.contains(&name)
        || IPYTHON_HOOKS.contains(&name)
        || (name.len() > "_repr__".len() && name.starts_with("_repr_") && name.ends_with('_'))
}

/// Callee names (functions or methods) a `__repr__`/`__str__` may call while building its
/// string: conversions, formatting, string and read-only container methods.
const STRING_BUILDING_CALLS: &[&str] = &[
    "str",
    "repr",
    "ascii",
    "format",
    "len",
    "type",
    "int",
    "float",
    "bool",
    "round",
    "abs",
    "min",
    "max",
    "sum",
    "sorted",
    "reversed",
    "map",
    "filter",
    "zip",
    "enumerate",
    "range",
    "list",
    "tuple",
    "dict",
    "set",
    "frozenset",
    "isinstance",
    "hex",
    "oct",
    "bin",
    "chr",
    "ord",
    "super",
    "join",
    "format_map",
    "upper",
    "lower",
    "strip",
    "lstrip",
    "rstrip",
    "replace",
    "split",
    "rsplit",
    "splitlines",
    "title",
    "capitalize",
    "casefold",
    "center",
    "ljust",
    "rjust",
    "zfill",
    "startswith",
    "endswith",
    "encode",
    "decode",
    "items",
    "keys",
    "values",
    "get",
    "count",
    "index",
    "find",
    "rfind",
    "partition",
    "rpartition",
    "expandtabs",
    "swapcase",
    "isoformat",
    "strftime",
    // datetime's pure conversions: a `utcoffset` must return a `timedelta`, a serializer
    // converts to UTC (round 9 S9-11, S9-12).
    "timedelta",
    "astimezone",
    "date",
    "timestamp",
    "total_seconds",
    "isocalendar",
    "weekday",
    "isoweekday",
    "__repr__",
    "__str__",
    "__format__",
];

/// Methods that change a container or an ABC in place (see `check_host_mutator_call`).
pub const HOST_MUTATORS: &[&str] = &[
    "update",
    "setdefault",
    "pop",
    "popitem",
    "clear",
    "append",
    "appendleft",
    "extend",
    "extendleft",
    "insert",
    "remove",
    "add",
    "discard",
    "sort",
    "reverse",
    "rotate",
    "move_to_end",
    "register",
    "__setitem__",
    "__delitem__",
];

/// Names Colony pre-binds that hold the cell's own data (its parameters, goals, pages and
/// outputs; colony-reference §2.1), not host machinery: items and attributes taken out of
/// them are the cell's data, so stores into them are not host writes.
pub const HOST_DATA_NAMES: &[&str] = &[
    "results", "params", "goals", "pages", "agent_id", "__name__",
];

/// True when `node` is the only argument of a call of `len`.
fn is_len_argument(node: Node, src: &str) -> bool {
    let Some(args) = node.parent().filter(|p| p.kind_name() == "argument_list") else {
        return false;
    };
    args.named_child_count() == 1
        && args
            .parent()
            .and_then(|c| c.field(F::Function))
            .is_some_and(|f| f.kind_name() == "identifier" && parse::text(f, src) == "len")
}

/// True when function definition `def` has an annotation that is evaluated later: a string
/// (also nested, `list["T"]`), or any annotation when `future` (`from __future__ import
/// annotations` makes every annotation a string).
/// The last dotted segment of each decorator of `decorated` (a `decorated_definition`), call
/// arguments dropped: `@pydantic.computed_field(repr=True)` is `computed_field`.
fn decorator_names(decorated: Node, src: &str) -> Vec<String> {
    named(decorated)
        .into_iter()
        .filter(|d| d.kind_name() == "decorator")
        .map(|d| {
            let t = parse::text(d, src).trim_start_matches('@').trim();
            let t = t.split('(').next().unwrap_or(t).trim();
            t.rsplit('.').next().unwrap_or(t).trim().to_string()
        })
        .collect()
}

fn has_string_annotation(def: Node, future: bool) -> bool {
    fn has_string(n: Node) -> bool {
        if matches!(n.kind_name(), "string" | "concatenated_string") {
            return true;
        }
        named(n).into_iter().any(has_string)
    }
    let mut anns: Vec<Node> = Vec::new();
    if let Some(params) = def.field(F::Parameters) {
        for p in named(params) {
            if let Some(t) = p.field(F::Type) {
                anns.push(t);
            }
        }
    }
    if let Some(r) = def.field(F::ReturnType) {
        anns.push(r);
    }
    anns.iter().any(|a| future || has_string(*a))
}

/// `n` with the parentheses around it (`((x))` for `x`): the node its parent sees. Parents
/// come from the interpreter's node table when it has one ([`Interp::parent`]).
fn paren_top<'t>(it: &Interp<'t, '_>, mut n: Node<'t>) -> Node<'t> {
    while let Some(p) = it
        .parent(n)
        .filter(|p| p.kind_name() == "parenthesized_expression")
    {
        n = p;
    }
    n
}

/// The type expressions of the fields display `f` of a functional `TypedDict`/`NamedTuple`/
/// `make_dataclass` call: the values of a dict display (`{"a": "int"}`), the second items of
/// the pairs of a list or tuple display (`[("a", "int")]`); none for anything else.
fn field_type_nodes(f: Node) -> Vec<Node> {
    match f.kind_name() {
        "dictionary" => named(f)
            .into_iter()
            .filter_map(|pair| pair.field(F::Value))
            .collect(),
        "list" | "tuple" => named(f)
            .into_iter()
            .map(unparen)
            .filter(|item| matches!(item.kind_name(), "tuple" | "list"))
            .filter_map(|item| named(item).get(1).copied())
            .collect(),
        _ => Vec::new(),
    }
}

/// True when identifier `n` sits where it binds its name: an assignment, `for` or walrus
/// target (also inside tuple/list targets), a `def`/`class` name, a parameter, an import
/// alias, a `global`/`nonlocal`/`del` name or a capture pattern. Shared by the rebinding
/// checks of [`Sbx`] and the narrowing of `check/narrow.rs`.
fn binds_name<'t>(it: &Interp<'t, '_>, n: Node<'t>) -> bool {
    let mut cur = n;
    while let Some(p) = it.parent(cur) {
        match p.kind_name() {
            "tuple"
            | "list"
            | "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "parenthesized_expression"
            | "list_splat_pattern"
            | "list_splat" => cur = p,
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                return p.field(F::Left).is_some_and(|l| l.id() == cur.id());
            }
            "named_expression" => return p.field(F::Name).is_some_and(|l| l.id() == cur.id()),
            "function_definition" | "class_definition" => {
                return p.field(F::Name).is_some_and(|l| l.id() == cur.id());
            }
            "default_parameter" | "typed_default_parameter" => {
                return p.field(F::Name).is_some_and(|l| l.id() == cur.id());
            }
            "keyword_argument" | "attribute" => return false,
            "as_pattern_target"
            | "global_statement"
            | "nonlocal_statement"
            | "parameters"
            | "lambda_parameters"
            | "typed_parameter"
            | "dictionary_splat_pattern"
            | "dotted_name"
            | "aliased_import"
            | "case_pattern"
            | "keyword_pattern"
            | "splat_pattern"
            | "delete_statement" => return true,
            _ => return false,
        }
    }
    false
}

/// The top of the attribute chain `n` is the object of, through parentheses:
/// `json.JSONEncoder` for `json`, and `((functools).reduce)`'s `(functools).reduce` for
/// `functools`. `n` itself when it is not the object of an attribute.
fn chain_top<'t>(it: &Interp<'t, '_>, n: Node<'t>) -> Node<'t> {
    let mut top = n;
    loop {
        let up = paren_top(it, top);
        match it.parent(up).filter(|a| {
            a.kind_name() == "attribute" && a.field(F::Object).is_some_and(|o| o.id() == up.id())
        }) {
            Some(a) => top = a,
            None => return top,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match(
            "asyncio.open_connection",
            "asyncio.open_connection"
        ));
        assert!(!glob_match(
            "asyncio.open_connection",
            "asyncio.open_connections"
        ));
        assert!(glob_match("requests.*", "requests.get"));
        assert!(!glob_match("requests.*", "requests"));
        assert!(glob_match("numpy.save*", "numpy.savez_compressed"));
        assert!(glob_match("*.system", "os.system"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
    }

    #[test]
    fn host_modules() {
        assert!(host_module("ctypes.util").is_some());
        assert!(host_module("json").is_none());
        assert!(host_module_entry("os.path").is_none());
        assert!(host_module_entry("os").is_some());
        assert!(host_module_entry("importlib.util").is_some());
    }
}
