//! A small abstract interpreter over one cell: what each name and expression may evaluate to,
//! as far as sandbox escapes are concerned.
//!
//! Two views of the bindings exist:
//! - `globals`: every value ever bound to each name anywhere in the cell (all scopes merged),
//!   computed as a fixpoint over every binding site (assignments, augmented assignments, walrus,
//!   `for` targets, comprehension variables, tuple unpacking, parameters from defaults and from
//!   the arguments of in-cell calls, function and lambda return values, imports). It is used
//!   inside function bodies, lambdas, comprehensions and class bodies, where order is unknown.
//! - a flow-sensitive map for the cell's top level, owned by the checker (`check.rs`): straight-
//!   line statements update it strongly, compound statements weakly.
//!
//! Names that are never bound resolve to the namespace's pre-bound modules, to Python builtins,
//! or to [`Val::Unknown`].

use super::containers::{self, Added, State};
use super::field::{FieldChild, F};
use super::reach::Reach;
use super::scan::{self, NameId, Names, Relevance, K};
use super::value::*;
use crate::parse;
use crate::rules::imports::is_allowed;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;
use tree_sitter::Node;

/// Deepest expression nesting evaluated; deeper expressions are [`Val::Unknown`].
const MAX_DEPTH: u32 = 200;
/// Fixpoint rounds over the binding sites.
const MAX_ROUNDS: usize = 8;

/// The [`Val::Builtin`] standing for a metaclass the cell got hold of: `type(x)` of anything
/// (`type(int)` is `type`, `type(ActionResult)` pydantic's `ModelMetaclass`), or a class built
/// with a metaclass among its bases. Called with three arguments it builds a class.
pub const METACLASS: &str = "type()";

/// Python 3.11 builtins (plus IPython's `get_ipython`), interned for [`Val::Builtin`].
pub const BUILTINS: &[&str] = &[
    "__build_class__",
    "__import__",
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
    "get_ipython",
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

/// The interned builtin called `name`.
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTINS.iter().copied().find(|b| *b == name)
}

/// Configuration the interpreter needs.
#[derive(Clone, Copy)]
pub struct Config<'a> {
    /// Import allowlist entries (`[lint.imports] allow`).
    pub allow: &'a [String],
    /// Modules the namespace pre-binds (`json`, `re`, ...).
    pub prebound: &'a BTreeSet<String>,
    /// The reachability table.
    pub table: &'static Reach,
    /// `[lint.imports] deny-members` entries (members of their modules are tracked by path).
    pub deny: &'a [String],
}

/// Root modules whose members some rule looks at by path, besides the deny-members entries:
/// import machinery (`importlib.import_module`), `operator.attrgetter`, `sys.modules` and
/// asyncio's event loops.
const MEMBER_ROOTS: &[&str] = &[
    "importlib",
    "_frozen_importlib",
    "_frozen_importlib_external",
    "_imp",
    "imp",
    "operator",
    "sys",
    "asyncio",
    "functools",
    "typing",
    "typing_extensions",
    "dataclasses",
    "json",
];

/// The member path standing for a coroutine object the cell made by calling one of its
/// `async def` functions (`c = f()`): `await c` is the function's result; `c.send(None)` and
/// `c.throw(...)` drive it by hand (SBX009).
pub const COROUTINE: &str = "types.CoroutineType";

/// True when `v` is a coroutine object of the cell ([`COROUTINE`]).
pub fn is_coroutine(v: &Val) -> bool {
    matches!(v, Val::Member(p) if &**p == COROUTINE)
}

/// The names `del` statement `del_stmt` unbinds (`del a`, `del a, b`, `del (a, [b])`), not
/// the attributes or items it deletes.
pub fn deleted_names(del_stmt: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut stack: Vec<Node> = named_children(del_stmt);
    while let Some(t) = stack.pop() {
        match t.kind_name() {
            "identifier" => out.push(t),
            "expression_list" | "tuple" | "list" | "parenthesized_expression" => {
                stack.extend(named_children(t))
            }
            _ => {}
        }
    }
    out
}

/// The deny-members prefix that stands for the methods of any event loop.
pub const LOOP_PREFIX: &str = "asyncio.AbstractEventLoop.";

/// Denied event-loop method names that ordinary objects also have (`conn.close()`,
/// `timer.stop()`, `f.sendfile(...)`): reported on a resolved loop, never guessed on a receiver
/// cellguard cannot resolve (see [`is_denied_loop_method`]).
const GENERIC_METHOD_NAMES: &[&str] = &[
    "close",
    "stop",
    "set_debug",
    "sendfile",
    "getaddrinfo",
    "getnameinfo",
    "add_reader",
    "add_writer",
    "remove_reader",
    "remove_writer",
];

/// Names of other denied module members that ordinary objects commonly have as methods or
/// fields (`rng.seed(1)`, `path.exists()`, `self.logger`); with [`GENERIC_METHOD_NAMES`] they
/// make up [`is_generic_member_name`].
const GENERIC_OTHER_MEMBER_NAMES: &[&str] = &[
    "disable",
    "exists",
    "lexists",
    "finalize",
    "load",
    "save",
    "logger",
    "main",
    "ref",
    "register",
    "seed",
    "getstate",
    "setstate",
    "get_stack",
    "print_stack",
    "isdir",
    "isfile",
    "islink",
    "ismount",
    "getsize",
    "abspath",
    "realpath",
    "relpath",
    "Timer",
    "memmap",
    "fromfile",
    "open",
];

/// True when `name` is a denied module member (or event-loop method) that ordinary objects
/// commonly have (`client.close()`, `rng.seed(1)`, `path.exists()`, `self.logger`): such a
/// name is not reported on a receiver cellguard cannot resolve; the module itself, when
/// cellguard sees it, is still judged by the deny list. The one owner of both name lists.
pub fn is_generic_member_name(name: &str) -> bool {
    GENERIC_METHOD_NAMES.contains(&name) || GENERIC_OTHER_MEMBER_NAMES.contains(&name)
}

/// True when `deny` names `asyncio.AbstractEventLoop.<name>` literally (not through a glob)
/// and the name is specific to event loops: such a method name (`subprocess_shell`,
/// `call_later`) is reported on any receiver cellguard cannot resolve, since a loop passes
/// through futures, queues, tasks and `gather` results whose contents the analysis does not
/// follow. Names other objects commonly have (`close`, `stop`, [`GENERIC_METHOD_NAMES`]) are
/// left out: `client.close()` on an unresolved value is ordinary code.
pub fn is_denied_loop_method(name: &str, deny: &[String]) -> bool {
    denied_loop_method_by(name, |m| {
        deny.iter().any(|d| d.strip_prefix(LOOP_PREFIX) == Some(m))
    })
}

/// [`is_denied_loop_method`] with the deny list's loop entries given as a lookup: `denied(m)`
/// is true when the list holds `LOOP_PREFIX` + `m` (`m` may be the `_*` glob). Lets a caller
/// that asks for many names build a set of the entries once.
pub fn denied_loop_method_by(name: &str, denied: impl Fn(&str) -> bool) -> bool {
    if name.starts_with('_') {
        // The private loop methods no ordinary object has (round 5 H9: a loop laundered
        // through `next(itertools.chain([fut.get_loop()]))`), while the `_*` glob is denied.
        return PRIVATE_LOOP_METHODS.contains(&name) && (denied(name) || denied("_*"));
    }
    !GENERIC_METHOD_NAMES.contains(&name) && denied(name)
}

/// Private methods of asyncio's event loops (CPython 3.11 `base_events`, `selector_events`,
/// `unix_events`) that start processes, open transports or schedule callbacks, and that no
/// ordinary object has: reported on any receiver cellguard cannot resolve.
pub const PRIVATE_LOOP_METHODS: &[&str] = &[
    "_make_subprocess_transport",
    "_make_socket_transport",
    "_make_ssl_transport",
    "_make_datagram_transport",
    "_make_read_pipe_transport",
    "_make_write_pipe_transport",
    "_call_soon",
    "_add_callback",
    "_add_callback_signalsafe",
    "_run_once",
    "_add_reader",
    "_add_writer",
    "_start_serving",
    "_accept_connection",
    "_sock_connect",
    "_create_connection_transport",
    "_create_server_getaddrinfo",
    "_ensure_resolved",
    "_process_events",
    "_write_to_self",
    "_timer_handle_cancelled",
    "_set_coroutine_origin_tracking",
    "_asyncgen_finalizer_hook",
    "_asyncgen_firstiter_hook",
    "_child_watcher_callback",
    // The self-pipe sockets and the selector of a selector loop (round 9 S9-2:
    // `type(loop._ssock)` is `socket.socket`).
    "_ssock",
    "_csock",
    "_selector",
    "_read_from_self",
    "_make_self_pipe",
    "_close_self_pipe",
    "_default_executor",
];

/// True when `node` is an `async def`.
fn is_async_def(node: Node) -> bool {
    node.kind_name() == "function_definition"
        && node.child(0).is_some_and(|c| c.kind_name() == "async")
}

/// The first dotted segment of a name.
fn root_of(path: &str) -> &str {
    path.split_once('.').map_or(path, |(r, _)| r)
}

/// The roots of the members tracked by path (see [`Interp::member`]).
fn member_roots(cfg: &Config) -> Option<HashSet<String>> {
    let mut roots: HashSet<String> = MEMBER_ROOTS.iter().map(|r| r.to_string()).collect();
    for d in cfg.deny {
        let r = root_of(d);
        if r.contains('*') {
            return None;
        }
        roots.insert(r.to_string());
    }
    for (from, to) in &cfg.table.deny_aliases {
        if cfg.deny.iter().any(|d| d == to) {
            roots.insert(root_of(from).to_string());
        }
    }
    Some(roots)
}

/// Kind of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// Positional-or-keyword (or positional-only).
    Positional,
    /// Keyword-only.
    KwOnly,
    /// `*args`.
    Star,
    /// `**kwargs`.
    DStar,
}

/// A parameter of a function or lambda defined in the cell.
#[derive(Debug, Clone)]
pub struct Param<'t> {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: ParamKind,
    /// Its default value.
    pub default: Option<Node<'t>>,
}

/// A function or lambda defined in the cell.
#[derive(Debug, Clone)]
pub struct FuncInfo<'t> {
    /// The `function_definition` or `lambda` node.
    pub node: Node<'t>,
    /// Its parameters.
    pub params: Vec<Param<'t>>,
    /// What it may return.
    pub returns: VSet,
}

/// Values bound to the names of a cell, by [`NameId`]; an empty set means "not bound".
#[derive(Debug, Clone, Default)]
pub struct Bindings(pub Vec<VSet>);

impl Bindings {
    /// A map with room for `n` names, all unbound.
    pub fn new(n: usize) -> Self {
        Bindings(vec![VSet::default(); n])
    }
    /// The values bound to name `id` (empty when unbound).
    pub fn get(&self, id: NameId) -> Option<&VSet> {
        self.0.get(id as usize)
    }
    fn slot(&mut self, id: NameId) -> &mut VSet {
        let i = id as usize;
        if i >= self.0.len() {
            self.0.resize(i + 1, VSet::default());
        }
        &mut self.0[i]
    }
}

/// Where names are looked up.
pub enum Env<'e> {
    /// The merged bindings of the whole cell.
    Global,
    /// The flow-sensitive top-level bindings at one point of the cell.
    Flow(&'e Bindings),
    /// One extra binding on top of another environment (comprehension folding).
    Bind(&'e Env<'e>, &'e str, &'e VSet),
}

/// Why an attribute of a module leaves the sandbox (SBX005).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Escape {
    /// `m._x`: a private attribute of a module.
    Private {
        /// The module path.
        module: String,
        /// The module's real name.
        real: String,
        /// The attribute.
        name: String,
    },
    /// `m.a` is a module outside the allowlist (or a host-reaching one).
    Outside {
        /// `m.a`.
        path: String,
        /// Its real name.
        target: String,
        /// A recorded path from `m.a` to a host-reaching module, with that module.
        leads: Option<(String, String)>,
    },
    /// `m.a` where `m` was bound by `import m.sub` and only `m.sub` is allowed.
    Parent {
        /// `m`.
        module: String,
        /// `a`.
        name: String,
    },
    /// `m.a` on a module the table does not know, where `a` names a host-reaching module.
    Heuristic {
        /// `m.a`.
        path: String,
    },
}

/// Attribute names that name a host-reaching module, used for modules the table does not know
/// (third-party allowlisted packages): `numpy.ma.core.inspect`.
pub const HOST_MODULE_NAMES: &[&str] = &[
    "os",
    "posix",
    "nt",
    "sys",
    "subprocess",
    "socket",
    "builtins",
    "bltns",
    "importlib",
    "inspect",
    "ctypes",
    "shutil",
    "pty",
    "multiprocessing",
    "codecs",
];

/// Modules that are module attributes of allowed modules and hand out host state or run cell
/// code in the host, outside the reachability table's target families: threads
/// (`asyncio.base_events.threading`), the host's logging tree and files
/// (`asyncio.log.logging.FileHandler`), file reads (`traceback.linecache.getlines`), host-exit
/// and garbage-collection hooks (`weakref.finalize`, `gc`), the process-wide pickle/deepcopy
/// reducer table (`re.copyreg`), and the C modules behind `os`, `signal`, `socket`, `ssl`,
/// `pickle`, `ctypes` and the import system. Reported on receivers cellguard cannot resolve
/// like the host module names (round 6 S6-7; resolved module attributes are judged by the
/// table and the allowlist).
pub const UNKNOWN_RECEIVER_HOST_MODULES: &[&str] = &[
    "threading",
    "_thread",
    "logging",
    "traceback",
    "linecache",
    "weakref",
    "_weakref",
    "copyreg",
    "gc",
    "tokenize",
    "_posixsubprocess",
    "_signal",
    "_socket",
    "_ssl",
    "_imp",
    "_frozen_importlib",
    "_frozen_importlib_external",
    "_pickle",
    "_ctypes",
];

/// The host-reaching module an attribute `name` may be when its receiver is a value the
/// analysis cannot resolve, with a recorded module that has it (`("os", "contextlib")` for
/// `x.os`): such a receiver may be any module a cell can reach (a module laundered through a
/// container, a parameter, a call result, an instance attribute), so the attribute is an escape
/// when it names a host-reaching module attribute of some harmless module of the reachability
/// table (`x.contextlib.os`, `x._os`, `x.decoder.re.enum.sys`), or a host module outright
/// (`HOST_MODULE_NAMES`, for packages the table does not know). Ordinary private attributes
/// (`self._cache`) are not: only names the table records as module attributes count.
pub fn unknown_host_attr(name: &str) -> Option<(&'static str, &'static str)> {
    static MAP: std::sync::OnceLock<HashMap<String, (String, String)>> = std::sync::OnceLock::new();
    let map = MAP.get_or_init(|| {
        let table = super::reach::table();
        let mut map: HashMap<String, (String, String)> = HashMap::default();
        let mut mods: Vec<&String> = table.modules.keys().collect();
        mods.sort();
        for m in mods {
            if table.family(m).is_some() {
                continue;
            }
            let mut attrs: Vec<(&String, &String)> = table.modules[m].iter().collect();
            attrs.sort();
            for (a, t) in attrs {
                if table.family(t).is_some() && !is_dunder(a) {
                    map.entry(a.clone())
                        .or_insert_with(|| (t.clone(), m.clone()));
                }
            }
        }
        for n in HOST_MODULE_NAMES
            .iter()
            .chain(UNKNOWN_RECEIVER_HOST_MODULES)
        {
            map.entry(n.to_string())
                .or_insert_with(|| (n.to_string(), String::new()));
        }
        map
    });
    map.get(name).map(|(t, m)| (t.as_str(), m.as_str()))
}

/// A class defined by a `class` statement of the cell.
#[derive(Debug, Clone, Default)]
pub struct ClassInfo {
    /// Attribute names the class (or a cell base class) declares: class-body assignment and
    /// annotation targets (dataclass and `NamedTuple` fields, class attributes), method names,
    /// and `self.x = ...` targets inside its methods.
    pub fields: HashSet<String>,
    /// Calling the class yields an instance of it ([`Val::Inst`]): it is not decorated (except
    /// by `dataclass`), has no keyword arguments in its bases (`metaclass=`), defines no
    /// `__new__`, `__getattr__` or `__getattribute__`, and every base is a plain cell class or a
    /// plain library base (`object`, `NamedTuple`, `BaseModel`, `Exception`, `Enum`, builtin
    /// containers, ...).
    pub plain: bool,
    /// The decorators may replace the class with anything.
    pub decorated: bool,
    /// A base is one of asyncio's event loop classes (`class L(asyncio.SelectorEventLoop)`):
    /// its instances are event loops (round 9 S9-3).
    pub event_loop: bool,
}

/// Library base classes whose instances are ordinary objects (matched on the last dotted
/// segment of the base expression, subscripts removed: `typing.Generic[T]` is `Generic`).
const PLAIN_BASES: &[&str] = &[
    "object",
    "NamedTuple",
    "TypedDict",
    "BaseModel",
    "RootModel",
    "Generic",
    "Protocol",
    "ABC",
    "Exception",
    "BaseException",
    "ValueError",
    "RuntimeError",
    "KeyError",
    "TypeError",
    "LookupError",
    "Enum",
    "IntEnum",
    "StrEnum",
    "Flag",
    "dict",
    "list",
    "tuple",
    "str",
    "int",
    "float",
    "set",
    "frozenset",
    "bytes",
    "defaultdict",
    "OrderedDict",
    "Counter",
    "UserDict",
    "UserList",
    "JSONEncoder",
    "JSONDecoder",
];

/// The cell's classes, in source order, with `node.id()` -> index. A class name bound by
/// several `class` statements gets one entry per statement; bases are resolved by name to the
/// first class statement of that name.
pub fn collect_classes(root: Node, src: &str) -> (Vec<ClassInfo>, HashMap<usize, u32>) {
    let mut nodes: Vec<Node> = Vec::new();
    for n in parse::walk(root) {
        if n.kind_name() == "class_definition" && nodes.len() < 4096 {
            nodes.push(n);
        }
    }
    let mut by_name: HashMap<String, usize> = HashMap::default();
    for (i, n) in nodes.iter().enumerate() {
        if let Some(name) = n.field(F::Name) {
            by_name.entry(ident(name, src).into_owned()).or_insert(i);
        }
    }
    let mut infos: Vec<ClassInfo> = Vec::with_capacity(nodes.len());
    let mut bases: Vec<Vec<usize>> = Vec::with_capacity(nodes.len());
    for n in &nodes {
        let mut info = ClassInfo {
            plain: true,
            ..ClassInfo::default()
        };
        let mut cell_bases = Vec::new();
        if let Some(p) = n
            .parent()
            .filter(|p| p.kind_name() == "decorated_definition")
        {
            for dec in named_children(p) {
                if dec.kind_name() == "decorator" {
                    let t = &src[dec.byte_range()];
                    if !t.contains("dataclass") {
                        info.decorated = true;
                        info.plain = false;
                    }
                }
            }
        }
        if let Some(sup) = n.field(F::Superclasses) {
            for b in named_children(sup) {
                if b.kind_name() == "keyword_argument" {
                    info.plain = false;
                    continue;
                }
                let t = &src[b.byte_range()];
                let t = t.split('[').next().unwrap_or("").trim();
                let last = t.rsplit('.').next().unwrap_or("").trim();
                // `class L(((asyncio).SelectorEventLoop))`: the base without its parentheses.
                let bare = &src[unparen(b).byte_range()];
                let bare = bare.split('[').next().unwrap_or("");
                if bare
                    .rsplit('.')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .ends_with("EventLoop")
                {
                    info.event_loop = true;
                }
                if let Some(&i) = by_name.get(last).filter(|_| !t.contains('.')) {
                    cell_bases.push(i);
                } else if !PLAIN_BASES.contains(&last) {
                    info.plain = false;
                }
            }
        }
        if let Some(body) = n.field(F::Body) {
            for stmt in named_children(body) {
                let stmt = match stmt.kind_name() {
                    "decorated_definition" => stmt.field(F::Definition).unwrap_or(stmt),
                    _ => stmt,
                };
                match stmt.kind_name() {
                    "expression_statement" => {
                        for a in named_children(stmt) {
                            if a.kind_name() == "assignment" {
                                let mut t = a.field(F::Left);
                                let mut a = a;
                                while let Some(l) = t {
                                    if l.kind_name() == "identifier" {
                                        info.fields.insert(ident(l, src).into_owned());
                                    }
                                    match a
                                        .field(F::Right)
                                        .filter(|r| r.kind_name() == "assignment")
                                    {
                                        Some(r) => {
                                            a = r;
                                            t = r.field(F::Left);
                                        }
                                        None => t = None,
                                    }
                                }
                            }
                        }
                    }
                    "function_definition" => {
                        let Some(name) = stmt.field(F::Name) else {
                            continue;
                        };
                        let fname = ident(name, src).into_owned();
                        if matches!(
                            fname.as_str(),
                            "__new__" | "__getattr__" | "__getattribute__" | "__init_subclass__"
                        ) {
                            info.plain = false;
                        }
                        let this = stmt
                            .field(F::Parameters)
                            .and_then(|ps| named_children(ps).into_iter().next())
                            .filter(|p| p.kind_name() == "identifier")
                            .map(|p| ident(p, src).into_owned());
                        info.fields.insert(fname);
                        if let (Some(this), Some(b)) = (this, stmt.field(F::Body)) {
                            for m in parse::walk(b) {
                                if m.kind_name() != "assignment"
                                    && m.kind_name() != "augmented_assignment"
                                {
                                    continue;
                                }
                                let Some(l) =
                                    m.field(F::Left).filter(|l| l.kind_name() == "attribute")
                                else {
                                    continue;
                                };
                                if let (Some(o), Some(at)) =
                                    (l.field(F::Object), l.field(F::Attribute))
                                {
                                    if o.kind_name() == "identifier" && ident(o, src) == this {
                                        info.fields.insert(ident(at, src).into_owned());
                                    }
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        infos.push(info);
        bases.push(cell_bases);
    }
    // Inherit fields and plainness from cell bases (a bounded number of rounds: chains of
    // cell classes are short, and cycles by name only stop growing).
    for _ in 0..8 {
        let mut changed = false;
        for i in 0..infos.len() {
            for &b in &bases[i] {
                if b == i {
                    continue;
                }
                let (bf, bp) = (infos[b].fields.clone(), infos[b].plain);
                let me = &mut infos[i];
                if !bp && me.plain {
                    me.plain = false;
                    changed = true;
                }
                for f in bf {
                    changed |= me.fields.insert(f);
                }
            }
        }
        if !changed {
            break;
        }
    }
    let ids = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id(), i as u32))
        .collect();
    (infos, ids)
}

/// The interpreter state for one cell.
pub struct Interp<'t, 'a> {
    /// The cell text.
    pub src: &'a str,
    /// The node table of the cell's tree, when the caller has one (parents by a hash probe instead
    /// of tree-sitter's descent from the root).
    table: Option<&'a crate::nodes::NodeTable<'t>>,
    /// Configuration.
    pub cfg: Config<'a>,
    /// The identifiers of the cell.
    pub names: Names<'a>,
    /// Every value bound to each name anywhere in the cell (for the demanded names; see
    /// [`scan`](super::scan)).
    pub globals: Bindings,
    /// Functions and lambdas of the cell.
    pub funcs: Vec<FuncInfo<'t>>,
    /// Classes of the cell (see [`collect_classes`]).
    pub classes: Vec<ClassInfo>,
    /// `node.id()` of a class definition -> index in `classes`.
    pub class_ids: HashMap<usize, u32>,
    /// `node.id()` of a function or lambda -> index in `funcs`.
    pub func_ids: HashMap<usize, u32>,
    /// Names declared `global` or `nonlocal` inside functions (sorted, without duplicates).
    pub global_decls: Vec<NameId>,
    /// Binding sites, collected once, with the function a `return`/`yield` belongs to.
    sites: Vec<(Node<'t>, Option<u32>)>,
    /// `node.id()` of decorated function definitions.
    decorated: HashSet<usize>,
    /// `node.id()` of methods (function definitions directly in a class body): their names
    /// are not bound in the cell's namespace.
    methods: HashSet<usize>,
    /// Every name bound in the cell with the start byte of its binding site, in source order.
    pub bound: Vec<(usize, NameId)>,
    /// Whether the cell contains an assignment expression (`:=`) anywhere.
    pub has_walrus: bool,
    /// What can produce findings: hot positions and demanded names.
    pub relevance: Relevance,
    /// Evaluation cache of the reporting walk, keyed by `(node id, merged env)` and stamped with
    /// the generation it was computed in (see [`Interp::start_memo`]).
    memo: RefCell<HashMap<(usize, bool), (u32, VSet)>>,
    /// The current memo generation.
    generation: Cell<u32>,
    /// Variables read while the fixpoint evaluates a site (names, then function results).
    reads: RefCell<Option<Vec<u32>>>,
    /// Set when an evaluation met the depth bound.
    truncated: Cell<bool>,
    /// [`Interp::module_step`] results by (module value address, attribute name).
    #[allow(clippy::type_complexity)]
    step_memo: RefCell<HashMap<(usize, NameId), (Rc<ModVal>, VSet, Option<Escape>)>>,
    /// [`Interp::default_value`] results by name.
    default_memo: RefCell<HashMap<NameId, VSet>>,
    /// Roots of the members tracked by path; `None` when every member is (a deny-members
    /// entry starts with a wildcard).
    member_roots: Option<HashSet<String>>,
    /// The one member value standing for every member of a root that is not tracked.
    opaque_members: RefCell<HashMap<String, Val>>,
    /// How the cell uses each name that may hold a container (see
    /// [`containers`](super::containers)), collected on first use.
    containers: RefCell<Option<Rc<containers::Uses<'t>>>>,
    /// The cell's root node.
    root: Node<'t>,
    /// Names whose pre-bound value (namespace module, builtin, pre-bound object) may still
    /// reach a use although the cell binds them (see [`Interp::prebound_may_reach`]), computed
    /// on first use.
    prebound_reach: RefCell<Option<Rc<HashSet<NameId>>>>,
}

fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    scan::named_children(node)
}

/// The text of an identifier (or dotted name) as Python reads it: NFKC-normalised, so that
/// `ｅｖａｌ` is `eval` and `＿＿class＿＿` is `__class__` (PEP 3131).
pub fn ident<'s>(node: Node, src: &'s str) -> std::borrow::Cow<'s, str> {
    parse::ident(node, src)
}

/// The first named, non-comment child.
pub fn first_named(node: Node) -> Option<Node> {
    scan::first_named_child(node)
}

/// The capture names of the case patterns of `match` statement `m` (`case x:`, `case [a, *b]:`,
/// `case P(q=c)`, `case {"k": v, **rest}`, `case _ as a:`), each with whether it captures the
/// whole subject (`case x:`, `case <pattern> as x:` as the clause's only pattern).
pub fn match_captures<'t>(m: Node<'t>) -> Vec<(Node<'t>, bool)> {
    let mut out = Vec::new();
    let Some(body) = m.field(F::Body) else {
        return out;
    };
    for clause in named_children(body) {
        if clause.kind_name() != "case_clause" {
            continue;
        }
        let pats: Vec<Node<'t>> = named_children(clause)
            .into_iter()
            .filter(|c| c.kind_name() == "case_pattern")
            .collect();
        let single = pats.len() == 1;
        for pat in pats {
            // (node, parent kind, whole so far)
            let mut stack: Vec<(Node<'t>, &'static str, bool, u32)> =
                vec![(pat, "case_clause", single, 0)];
            while let Some((n, pk, whole, depth)) = stack.pop() {
                if depth > 200 {
                    continue;
                }
                let k = n.kind_name();
                if k == "identifier" {
                    let capture = match pk {
                        "dotted_name" => n.parent().is_some_and(|d| {
                            d.named_child_count() == 1
                                && d.parent().is_some_and(|g| g.kind_name() == "case_pattern")
                        }),
                        "splat_pattern"
                        | "as_pattern"
                        | "as_pattern_target"
                        | "dictionary_splat_pattern"
                        | "keyword_pattern" => true,
                        _ => false,
                    };
                    // `case C(a=x)`: the keyword's name is not a capture.
                    let kw_name = pk == "keyword_pattern"
                        && n.parent().and_then(|p| p.named_child(0)).map(|c| c.id())
                            == Some(n.id());
                    if capture && !kw_name {
                        out.push((n, whole));
                    }
                    continue;
                }
                let kids = named_children(n);
                let last = kids.last().map(|c| c.id());
                for c in kids {
                    let inner_whole = whole
                        && match k {
                            "case_pattern" | "dotted_name" => true,
                            // `<pattern> as x`: the alias is the whole subject.
                            "as_pattern" => Some(c.id()) == last,
                            "as_pattern_target" => true,
                            _ => false,
                        };
                    stack.push((c, k, inner_whole, depth + 1));
                }
            }
        }
    }
    out
}

/// Skips parentheses (and comments inside them).
pub fn unparen(mut node: Node) -> Node {
    while node.kind_name() == "parenthesized_expression" {
        match first_named(node) {
            Some(inner) => node = inner,
            None => break,
        }
    }
    node
}

/// Positional arguments, keyword arguments and whether `*`/`**` unpacking occurs.
pub fn call_args<'t>(
    args: Option<Node<'t>>,
    src: &str,
) -> (Vec<Node<'t>>, Vec<(String, Node<'t>)>, bool) {
    let mut pos = Vec::new();
    let mut kws = Vec::new();
    let mut splat = false;
    let Some(args) = args else {
        return (pos, kws, splat);
    };
    if args.kind_name() == "generator_expression" {
        return (vec![args], kws, splat);
    }
    for child in named_children(args) {
        match child.kind_name() {
            "keyword_argument" => {
                if let (Some(n), Some(v)) = (child.field(F::Name), child.field(F::Value)) {
                    kws.push((ident(n, src).into_owned(), v));
                }
            }
            "list_splat" | "dictionary_splat" => splat = true,
            _ => pos.push(child),
        }
    }
    (pos, kws, splat)
}

fn parse_int(text: &str) -> Option<i64> {
    let t: String = text.chars().filter(|c| *c != '_').collect();
    let lower = t.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else {
        lower.parse().ok()
    }
}

fn py_floordiv(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    let q = a.checked_div(b)?;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q.checked_sub(1)
    } else {
        Some(q)
    }
}

fn py_mod(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    let r = a.checked_rem(b)?;
    Some(if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    })
}

/// Binds `v` to the names of an assignment target in `map` (weakly: joined; strongly:
/// replaced). Returns true when `map` changed; the names that changed are pushed to `changed`.
/// Names `keep` rejects are skipped.
#[allow(clippy::too_many_arguments)]
pub fn bind_into(
    map: &mut Bindings,
    names: &Names,
    target: Node,
    v: &VSet,
    strong: bool,
    src: &str,
    keep: &dyn Fn(NameId) -> bool,
    changed: &mut Vec<NameId>,
) -> bool {
    bind_into_at(map, names, target, v, strong, src, keep, changed, 0)
}

#[allow(clippy::too_many_arguments)]
fn bind_into_at(
    map: &mut Bindings,
    names: &Names,
    target: Node,
    v: &VSet,
    strong: bool,
    src: &str,
    keep: &dyn Fn(NameId) -> bool,
    changed: &mut Vec<NameId>,
    depth: u32,
) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match target.kind_name() {
        "identifier" => {
            let Some(id) = names.get(&ident(target, src)) else {
                return false;
            };
            if !keep(id) {
                return false;
            }
            let slot = map.slot(id);
            let did = if strong {
                let did = *slot != *v;
                *slot = v.clone().or_unknown();
                did
            } else {
                slot.join(v)
            };
            if did {
                changed.push(id);
            }
            did
        }
        "pattern_list" | "tuple_pattern" | "list_pattern" | "expression_list" | "tuple"
        | "list" => {
            let items = named_children(target);
            let starred = items
                .iter()
                .any(|i| matches!(i.kind_name(), "list_splat_pattern" | "list_splat"));
            let n = items.len();
            let mut did = false;
            for (i, item) in items.iter().enumerate() {
                let part = if starred {
                    VSet::unknown()
                } else {
                    component(v, i, n)
                };
                did |= bind_into_at(
                    map,
                    names,
                    *item,
                    &part,
                    strong,
                    src,
                    keep,
                    changed,
                    depth + 1,
                );
            }
            did
        }
        "parenthesized_expression" | "as_pattern_target" | "list_splat_pattern" | "list_splat" => {
            match first_named(target) {
                Some(inner) => {
                    let val = if target.kind_name().contains("splat") {
                        VSet::unknown()
                    } else {
                        v.clone()
                    };
                    bind_into_at(
                        map,
                        names,
                        inner,
                        &val,
                        strong,
                        src,
                        keep,
                        changed,
                        depth + 1,
                    )
                }
                None => false,
            }
        }
        _ => false,
    }
}

/// Element `i` of an `n`-element unpacking of `v`.
pub(crate) fn component(v: &VSet, i: usize, n: usize) -> VSet {
    let mut out = VSet::default();
    for val in v.iter() {
        match as_sequence(val) {
            Some(items) if items.len() == n => {
                out.join(&items[i]);
            }
            _ => {
                out.push(Val::Unknown);
            }
        }
    }
    out.or_unknown()
}

impl<'t, 'a> Interp<'t, 'a> {
    /// Builds the interpreter for a cell: the relevance pre-pass, then the merged bindings of
    /// the demanded names.
    pub fn new(root: Node<'t>, src: &'a str, cfg: Config<'a>) -> Self {
        Self::with_gate(root, src, cfg, true)
    }

    /// As [`Interp::new`]; with `gate` false every node is treated as hot and every name as
    /// demanded (the reference the gated analysis is tested against).
    pub fn with_gate(root: Node<'t>, src: &'a str, cfg: Config<'a>, gate: bool) -> Self {
        Self::with_table(root, None, src, cfg, gate)
    }

    /// As [`Interp::with_gate`], with the node table of the tree `root` is the root of (the
    /// cell's shared [`NodeTable`](crate::nodes::NodeTable)) when there is one: the relevance
    /// pre-pass reads the table instead of walking the tree, and parents are looked up in it
    /// (see [`Interp::parent`]). Same results either way.
    pub fn with_table(
        root: Node<'t>,
        table: Option<&'a crate::nodes::NodeTable<'t>>,
        src: &'a str,
        cfg: Config<'a>,
        gate: bool,
    ) -> Self {
        let table = table.filter(|t| !t.is_empty() && t.node(0).id() == root.id());
        let mut names = Names::default();
        let mut facts = match table {
            Some(t) => scan::collect_table(t, src, &mut names),
            None => scan::collect(root, src, &mut names),
        };
        let n = names.len();
        let mut me = Interp {
            src,
            cfg,
            names,
            globals: Bindings::new(n),
            funcs: Vec::with_capacity(facts.funcs.len()),
            func_ids: HashMap::default(),
            classes: Vec::new(),
            class_ids: HashMap::default(),
            global_decls: Vec::new(),
            sites: Vec::new(),
            decorated: HashSet::default(),
            methods: HashSet::default(),
            bound: Vec::new(),
            has_walrus: facts.has_walrus,
            relevance: Relevance::default(),
            memo: RefCell::new(HashMap::default()),
            generation: Cell::new(0),
            reads: RefCell::new(None),
            truncated: Cell::new(false),
            step_memo: RefCell::new(HashMap::default()),
            default_memo: RefCell::new(HashMap::default()),
            member_roots: member_roots(&cfg),
            opaque_members: RefCell::new(HashMap::default()),
            table,
            containers: RefCell::new(None),
            root,
            prebound_reach: RefCell::new(None),
        };
        me.relevance = scan::relevance(&mut facts, &me.names, &me.cfg, gate, &|x, sites, chain| {
            me.chain_is_opaque(x, sites, chain)
        });
        if facts.has_class {
            (me.classes, me.class_ids) = collect_classes(root, src);
        }
        me.func_ids = std::mem::take(&mut facts.func_ids);
        me.global_decls = std::mem::take(&mut facts.global_decls);
        me.global_decls.sort_unstable();
        me.global_decls.dedup();
        me.decorated = std::mem::take(&mut facts.decorated);
        me.methods = std::mem::take(&mut facts.methods);
        me.bound = std::mem::take(&mut facts.bound);
        for f in std::mem::take(&mut facts.funcs) {
            me.register_function(f);
        }
        if me.relevance.any_hot() {
            let needed: Vec<u32> = (0..facts.sites.len())
                .filter(|s| me.relevance.needed.get(*s).copied().unwrap_or(false))
                .map(|s| s as u32)
                .collect();
            me.sites = std::mem::take(&mut facts.sites);
            me.fixpoint(needed);
        }
        me
    }

    /// The cell's node table, when the interpreter was given one (see [`Interp::with_table`]).
    pub fn table(&self) -> Option<&'a crate::nodes::NodeTable<'t>> {
        self.table
    }

    /// Parents and walks of the cell's tree through its node table (see
    /// [`containers::Nav`]).
    pub fn nav(&self) -> containers::Nav<'a, 't> {
        containers::Nav::new(self.table)
    }

    /// Every node of the subtree of `root` in pre-order, named and anonymous (`parse::walk`),
    /// read from the cell's node table when it holds `root`. The iterator borrows the table,
    /// not the interpreter.
    pub fn walk(&self, root: Node<'t>) -> Box<dyn Iterator<Item = Node<'t>> + 'a> {
        if let Some(t) = self.table {
            if let Some(id) = t.index_of(root) {
                return Box::new(t.nodes()[t.subtree(id)].iter().copied());
            }
        }
        Box::new(parse::walk(root))
    }

    /// [`Interp::walk`] with each node's kind, read from the node table by index when it
    /// holds `root` (no tree-sitter call per node).
    pub fn walk_kinds(
        &self,
        root: Node<'t>,
    ) -> Box<dyn Iterator<Item = (Node<'t>, &'static str)> + 'a> {
        if let Some(t) = self.table {
            if let Some(id) = t.index_of(root) {
                return Box::new(t.subtree(id).map(move |i| (t.node(i), t.kind(i))));
            }
        }
        Box::new(parse::walk(root).map(|n| (n, n.kind_name())))
    }

    /// `node.parent()`, read from the cell's node table when there is one and it holds `node`
    /// (tree-sitter 0.25's `Node::parent` descends again from the root, scanning the children
    /// of every ancestor: a top-level statement's parent lookup scans the whole module).
    pub fn parent(&self, node: Node<'t>) -> Option<Node<'t>> {
        if let Some(t) = self.table {
            if let Some(id) = t.index_of(node) {
                return t.parent(id).map(|p| t.node(p));
            }
        }
        node.parent()
    }

    /// The value of module member `path`. Members of modules no rule looks at by path
    /// (anything but deny-members roots, import machinery, `operator`, `sys`, `asyncio`) are
    /// one opaque member per root module: what they are is never reported, and tracking each
    /// path (`enum.Enum.__members__.items...`) only grows value sets.
    pub fn member(&self, path: &str) -> Val {
        let Some(roots) = &self.member_roots else {
            return Val::member(path);
        };
        let root = root_of(path);
        if roots.contains(root) {
            return Val::member(path);
        }
        self.opaque_members
            .borrow_mut()
            .entry(root.to_string())
            .or_insert_with(|| Val::member(root))
            .clone()
    }

    /// True when, whatever `name` holds (bound only by the import statements `sites`, or not
    /// at all), the attribute chain `chain` on it is an opaque module member or unknown, with no
    /// escape, import machinery, frame function or denied member on the way: no rule can fire
    /// on such a chain, so the pre-pass does not count its name as hot there.
    fn chain_is_opaque(&self, name: NameId, sites: &[Node<'t>], chain: &[NameId]) -> bool {
        let text = self.names.text(name).to_string();
        if super::check::HOST_STATE_NAMES.contains(&text.as_str()) {
            return false;
        }
        let mut vals: Vec<Val> = self.default_value(&text).iter().cloned().collect();
        for site in sites {
            for (bound, v, _) in self.import_bindings(*site) {
                if bound == text {
                    vals.extend(v.iter().cloned());
                }
            }
        }
        let tracked = |path: &str| match &self.member_roots {
            None => true,
            Some(roots) => roots.contains(root_of(path)),
        };
        // Modules whose functions some rule reports by name.
        let special = |real: &str| {
            tracked(real)
                || matches!(
                    root_of(real),
                    "builtins" | "inspect" | "traceback" | "threading"
                )
        };
        for (i, a) in chain.iter().enumerate() {
            let a = self.names.text(*a);
            if is_dunder(a) {
                return false;
            }
            let last = i + 1 == chain.len();
            let mut next = Vec::new();
            for v in &vals {
                match v {
                    Val::Module(m) => {
                        if special(&m.real) || special(&m.path) {
                            return false;
                        }
                        let (res, esc) = self.module_step(m, a);
                        if esc.is_some() {
                            return false;
                        }
                        for r in res.iter() {
                            match r {
                                Val::Member(p) if !tracked(p) => next.push(r.clone()),
                                Val::Module(rm)
                                    if !last && !special(&rm.real) && !special(&rm.path) =>
                                {
                                    next.push(r.clone())
                                }
                                Val::Unknown => next.push(Val::Unknown),
                                _ => return false,
                            }
                        }
                    }
                    Val::Member(p) if !tracked(p) => next.push(v.clone()),
                    Val::Unknown => next.push(Val::Unknown),
                    _ => return false,
                }
            }
            vals = next;
        }
        true
    }

    /// The text of a node.
    pub fn text(&self, node: Node) -> &'a str {
        parse::text(node, self.src)
    }

    /// True when `node` may produce a finding (its range holds a hot position).
    pub fn is_hot(&self, node: Node) -> bool {
        self.relevance.is_hot(node.start_byte(), node.end_byte())
    }

    /// True when `node` may evaluate to an object some rule looks for (a builtin, module,
    /// member, namespace or cell function): only identifiers of non-plain names produce them.
    pub fn is_obj_hot(&self, node: Node) -> bool {
        self.relevance
            .is_obj_hot(node.start_byte(), node.end_byte())
    }

    /// The id of the name an identifier node spells.
    pub fn name_id(&self, node: Node) -> Option<NameId> {
        self.names.get(&ident(node, self.src))
    }

    /// True when name `id` is demanded (its bindings are tracked).
    pub fn demands(&self, id: NameId) -> bool {
        self.relevance.demands(id)
    }

    /// Registers a `function_definition` or `lambda` node (in pre-order, as the pre-pass did).
    fn register_function(&mut self, node: Node<'t>) {
        let mut params = Vec::new();
        if let Some(ps) = node.field(F::Parameters) {
            let mut kw_only = false;
            for p in named_children(ps) {
                let (name_node, default, kind) = match p.kind_name() {
                    "identifier" => (Some(p), None, None),
                    "default_parameter" | "typed_default_parameter" => {
                        (p.field(F::Name), p.field(F::Value), None)
                    }
                    "typed_parameter" => {
                        let inner = first_named(p);
                        match inner.map(|i| i.kind_name()) {
                            Some("list_splat_pattern") => {
                                (inner.and_then(first_named), None, Some(ParamKind::Star))
                            }
                            Some("dictionary_splat_pattern") => {
                                (inner.and_then(first_named), None, Some(ParamKind::DStar))
                            }
                            _ => (inner, None, None),
                        }
                    }
                    "list_splat_pattern" => (first_named(p), None, Some(ParamKind::Star)),
                    "dictionary_splat_pattern" => (first_named(p), None, Some(ParamKind::DStar)),
                    "keyword_separator" => {
                        kw_only = true;
                        continue;
                    }
                    _ => continue,
                };
                let Some(name_node) = name_node else { continue };
                let kind = match kind {
                    Some(ParamKind::Star) => {
                        kw_only = true;
                        ParamKind::Star
                    }
                    Some(k) => k,
                    None if kw_only => ParamKind::KwOnly,
                    None => ParamKind::Positional,
                };
                params.push(Param {
                    name: ident(name_node, self.src).into_owned(),
                    kind,
                    default,
                });
            }
        }
        // A parameter may receive anything from callers cellguard cannot see.
        for p in &params {
            if let Some(id) = self.names.get(&p.name) {
                self.globals.slot(id).push(Val::Unknown);
            }
        }
        self.funcs.push(FuncInfo {
            node,
            params,
            returns: VSet::default(),
        });
    }

    /// Names bound by binding sites that start inside `node` (any scope).
    pub fn names_bound_in(&self, node: Node) -> impl Iterator<Item = NameId> + '_ {
        let (start, end) = (node.start_byte(), node.end_byte());
        let from = self.bound.partition_point(|(b, _)| *b < start);
        self.bound[from..]
            .iter()
            .take_while(move |(b, _)| *b < end)
            .map(|(_, n)| *n)
    }

    /// Starts a new evaluation cache generation (the reporting walk calls this whenever the
    /// environment it evaluates in may have changed). O(1): stale entries are ignored.
    pub fn start_memo(&self) {
        let g = self.generation.get().wrapping_add(1);
        self.generation.set(if g == 0 { 1 } else { g });
    }

    /// Records that the site being evaluated read variable `v`.
    fn note_read(&self, v: u32) {
        if let Some(log) = self.reads.borrow_mut().as_mut() {
            log.push(v);
        }
    }

    /// Values bound by a site that has been evaluated twice already are widened: plain data
    /// (strings, numbers, sequences) becomes [`Val::Unknown`] so that loops (`i += 1`)
    /// converge; values that carry escapes (builtins, modules, functions, dunder or private
    /// names) keep propagating.
    fn widened(v: &VSet, widen: bool) -> VSet {
        if !widen {
            return v.clone();
        }
        v.iter()
            .map(|x| match x {
                Val::Str(s) if s.starts_with('_') => x.clone(),
                Val::Str(_) | Val::Int(_) | Val::Bytes(_) | Val::Seq(_) | Val::Dict(_) => {
                    Val::Unknown
                }
                other => other.clone(),
            })
            .collect()
    }

    fn bind_global(&mut self, target: Node, v: &VSet, widen: bool, changed: &mut Vec<u32>) {
        let v = Self::widened(v, widen);
        let relevance = &self.relevance;
        bind_into(
            &mut self.globals,
            &self.names,
            target,
            &v,
            false,
            self.src,
            &|id| relevance.demands(id),
            changed,
        );
    }

    fn join_global(&mut self, name: &str, v: &VSet, widen: bool, changed: &mut Vec<u32>) {
        let Some(id) = self.names.get(name) else {
            return;
        };
        if !self.relevance.demands(id) {
            return;
        }
        let v = Self::widened(v, widen);
        if self.globals.slot(id).join(&v) {
            changed.push(id);
        }
    }

    fn join_returns(&mut self, f: u32, v: &VSet, widen: bool, changed: &mut Vec<u32>) {
        let v = Self::widened(v, widen);
        let n = self.names.len() as u32;
        if let Some(func) = self.funcs.get_mut(f as usize) {
            if func.returns.join(&v) {
                changed.push(n + f);
            }
        }
    }

    /// The merged bindings: a worklist over the needed binding sites. A site is evaluated again
    /// only when a variable it read (a name, or a function's results) changed; it is evaluated
    /// in rounds in source order, so a site sees what earlier sites bound in the same round.
    /// Values a site binds from its third evaluation on are widened, and no site is evaluated
    /// more than [`MAX_ROUNDS`] times.
    fn fixpoint(&mut self, mut current: Vec<u32>) {
        let n_sites = self.sites.len();
        let n_vars = self.names.len() + self.funcs.len();
        let mut readers: Vec<Vec<u32>> = vec![Vec::new(); n_vars];
        let mut site_reads: Vec<Vec<u32>> = vec![Vec::new(); n_sites];
        let mut evals = vec![0u8; n_sites];
        let mut in_current = vec![false; n_sites];
        let mut in_next = vec![false; n_sites];
        let mut changed: Vec<u32> = Vec::new();
        while !current.is_empty() {
            for s in &current {
                in_current[*s as usize] = true;
            }
            let mut next: Vec<u32> = Vec::new();
            for &s in &current {
                let si = s as usize;
                in_current[si] = false;
                if evals[si] as usize >= MAX_ROUNDS {
                    continue;
                }
                let widen = evals[si] >= 2;
                evals[si] += 1;
                *self.reads.borrow_mut() = Some(Vec::new());
                changed.clear();
                self.run_site(si, widen, &mut changed);
                let mut log = self.reads.borrow_mut().take().unwrap_or_default();
                log.sort_unstable();
                log.dedup();
                for v in log {
                    let known = &mut site_reads[si];
                    if let Err(pos) = known.binary_search(&v) {
                        known.insert(pos, v);
                        if let Some(r) = readers.get_mut(v as usize) {
                            r.push(s);
                        }
                    }
                }
                for v in changed.drain(..) {
                    for &t in readers.get(v as usize).map(|r| r.as_slice()).unwrap_or(&[]) {
                        let ti = t as usize;
                        if !in_current[ti] && !in_next[ti] {
                            in_next[ti] = true;
                            next.push(t);
                        }
                    }
                }
            }
            next.sort_unstable();
            for t in &next {
                in_next[*t as usize] = false;
            }
            current = next;
        }
    }

    /// Evaluates one binding site in the merged environment and binds what it binds.
    fn run_site(&mut self, i: usize, widen: bool, changed: &mut Vec<u32>) {
        let (node, func) = self.sites[i];
        match node.kind_name() {
            "assignment" => {
                if let (Some(left), Some(r)) = (node.field(F::Left), node.field(F::Right)) {
                    let v = self.eval(r, &Env::Global, 0);
                    self.bind_global(left, &v, widen, changed);
                }
            }
            "augmented_assignment" => {
                if let (Some(l), Some(r)) = (node.field(F::Left), node.field(F::Right)) {
                    if l.kind_name() == "identifier" {
                        let v = self.eval_augmented(node, l, r, &Env::Global, 0);
                        self.bind_global(l, &v, widen, changed);
                    }
                }
            }
            "named_expression" => {
                if let (Some(n), Some(v)) = (node.field(F::Name), node.field(F::Value)) {
                    let v = self.eval(v, &Env::Global, 0);
                    self.bind_global(n, &v, widen, changed);
                }
            }
            "for_statement" | "for_in_clause" => {
                if let (Some(l), Some(r)) = (node.field(F::Left), node.field(F::Right)) {
                    let v = elements(&self.eval(r, &Env::Global, 0));
                    self.bind_global(l, &v, widen, changed);
                }
            }
            "as_pattern" => {
                if let Some(alias) = node.field(F::Alias) {
                    self.bind_global(alias, &VSet::unknown(), widen, changed);
                }
            }
            // `match ["__class__"]: case names:` rebinds `names` (round 9 S9-15): a capture of
            // the whole subject holds the subject, any other capture something cellguard does
            // not follow.
            "match_statement" => {
                let subject = {
                    let mut c = node.walk();
                    let subjects: Vec<Node<'t>> =
                        node.children_by_field_name("subject", &mut c).collect();
                    match subjects.as_slice() {
                        [one] => self.eval(*one, &Env::Global, 0),
                        _ => VSet::unknown(),
                    }
                };
                for (capture, whole) in match_captures(node) {
                    let v = if whole {
                        let mut v = subject.clone();
                        v.push(Val::Unknown);
                        v
                    } else {
                        VSet::unknown()
                    };
                    self.bind_global(capture, &v, widen, changed);
                }
            }
            "function_definition" => {
                if let (Some(name), Some(id)) =
                    (node.field(F::Name), self.func_ids.get(&node.id()).copied())
                {
                    if !self.methods.contains(&node.id()) {
                        let mut v = VSet::one(Val::Func(id));
                        if self.decorated.contains(&node.id()) {
                            v.push(Val::Unknown);
                        }
                        self.bind_global(name, &v, widen, changed);
                    }
                    self.bind_defaults(id, widen, changed);
                }
            }
            "lambda" => {
                if let Some(id) = self.func_ids.get(&node.id()).copied() {
                    self.bind_defaults(id, widen, changed);
                    if let Some(body) = node.field(F::Body) {
                        let v = self.eval(body, &Env::Global, 0);
                        self.join_returns(id, &v, widen, changed);
                    }
                }
            }
            "return_statement" => {
                if let Some(id) = func {
                    let v = match first_named(node) {
                        Some(e) => self.eval(e, &Env::Global, 0),
                        None => VSet::unknown(),
                    };
                    self.join_returns(id, &v, widen, changed);
                }
            }
            "yield" => {
                if let Some(id) = func {
                    self.join_returns(id, &VSet::unknown(), false, changed);
                }
            }
            "call" => self.bind_call_args(node, widen, changed),
            "import_statement" | "import_from_statement" => {
                for (name, v, _) in self.import_bindings(node) {
                    self.join_global(&name, &v, widen, changed);
                }
            }
            "class_definition" => {
                if let Some(name) = node.field(F::Name) {
                    let v = self.class_value(node);
                    self.bind_global(name, &v, widen, changed);
                }
            }
            // A binding lost in an `ERROR` node (see `scan::loose_binding`).
            "=" => {
                if let Some((target, value)) = scan::loose_binding(node) {
                    let v = self.eval(value, &Env::Global, 0);
                    self.bind_global(target, &v, widen, changed);
                }
            }
            _ => {}
        }
    }

    /// What the name of class statement `node` is bound to: the cell class, plus anything
    /// when a decorator other than `dataclass` may replace it.
    pub fn class_value(&self, node: Node) -> VSet {
        match self.class_ids.get(&node.id()) {
            Some(&id) => {
                let mut v = VSet::one(Val::Class(id));
                if self.classes[id as usize].decorated {
                    v.push(Val::Unknown);
                }
                v
            }
            None => VSet::unknown(),
        }
    }

    fn bind_defaults(&mut self, id: u32, widen: bool, changed: &mut Vec<u32>) {
        let params = self.funcs[id as usize].params.clone();
        for p in params {
            if let Some(d) = p.default {
                let v = self.eval(d, &Env::Global, 0);
                self.join_global(&p.name, &v, widen, changed);
            }
        }
    }

    /// Binds the arguments of a call to a cell function's parameters.
    fn bind_call_args(&mut self, call: Node<'t>, widen: bool, changed: &mut Vec<u32>) {
        let Some(callee) = call.field(F::Function) else {
            return;
        };
        let callee = unparen(callee);
        let may_be_func = match callee.kind_name() {
            "lambda" => true,
            "identifier" => match self.name_id(callee) {
                Some(id) => {
                    self.note_read(id);
                    self.globals
                        .get(id)
                        .is_some_and(|v| v.iter().any(|x| matches!(x, Val::Func(_))))
                }
                None => false,
            },
            _ => false,
        };
        if !may_be_func {
            return;
        }
        let ids: Vec<u32> = self
            .eval(callee, &Env::Global, 0)
            .iter()
            .filter_map(|v| match v {
                Val::Func(id) => Some(*id),
                _ => None,
            })
            .collect();
        if ids.is_empty() {
            return;
        }
        let (pos, kws, _) = call_args(call.field(F::Arguments), self.src);
        let pos_vals: Vec<VSet> = pos.iter().map(|p| self.eval(*p, &Env::Global, 0)).collect();
        let kw_vals: Vec<(String, VSet)> = kws
            .iter()
            .map(|(k, v)| (k.clone(), self.eval(*v, &Env::Global, 0)))
            .collect();
        for id in ids {
            let params = self.funcs[id as usize].params.clone();
            let positional: Vec<&Param> = params
                .iter()
                .filter(|p| p.kind == ParamKind::Positional)
                .collect();
            for (i, v) in pos_vals.iter().enumerate() {
                let target = positional
                    .get(i)
                    .copied()
                    .or_else(|| params.iter().find(|p| p.kind == ParamKind::Star));
                if let Some(p) = target {
                    let v = if p.kind == ParamKind::Star {
                        VSet::one(Val::seq(vec![v.clone()]))
                    } else {
                        v.clone()
                    };
                    self.join_global(&p.name, &v, widen, changed);
                }
            }
            for (k, v) in &kw_vals {
                if let Some(p) = params.iter().find(|p| {
                    p.name == *k && matches!(p.kind, ParamKind::Positional | ParamKind::KwOnly)
                }) {
                    self.join_global(&p.name, v, widen, changed);
                }
            }
        }
    }
    /// Names bound by an import statement, with their values and the node naming each.
    pub fn import_bindings(&self, node: Node<'t>) -> Vec<(String, VSet, Node<'t>)> {
        let mut out = Vec::new();
        let table = self.cfg.table;
        match node.kind_name() {
            "import_statement" => {
                for child in named_children(node) {
                    let (dotted, alias) = match child.kind_name() {
                        "aliased_import" => (child.field(F::Name), child.field(F::Alias)),
                        "dotted_name" => (Some(child), None),
                        _ => continue,
                    };
                    let Some(dotted) = dotted else { continue };
                    let module: String = ident(dotted, self.src).split_whitespace().collect();
                    let allowed = is_allowed(&module, self.cfg.allow);
                    match alias {
                        Some(a) => {
                            let v = Val::module(ModVal::new(
                                module.clone(),
                                table.real_name(&module),
                                if allowed {
                                    ModState::Ok
                                } else {
                                    ModState::Blocked
                                },
                            ));
                            out.push((ident(a, self.src).into_owned(), VSet::one(v), dotted));
                        }
                        None => {
                            let root = module.split('.').next().unwrap_or("").to_string();
                            let state = if !allowed {
                                ModState::Blocked
                            } else if is_allowed(&root, self.cfg.allow) {
                                ModState::Ok
                            } else {
                                ModState::Parent
                            };
                            let v = Val::module(ModVal::new(
                                root.clone(),
                                table.real_name(&root),
                                state,
                            ));
                            out.push((root, VSet::one(v), dotted));
                        }
                    }
                }
            }
            "import_from_statement" => {
                let Some(m) = node.field(F::ModuleName) else {
                    return out;
                };
                let relative = m.kind_name() == "relative_import";
                let module: String = ident(m, self.src).split_whitespace().collect();
                let base = std::rc::Rc::new(ModVal::new(
                    module.clone(),
                    table.real_name(&module),
                    if is_allowed(&module, self.cfg.allow) {
                        ModState::Ok
                    } else {
                        ModState::Blocked
                    },
                ));
                let mut cursor = node.walk();
                for child in node.children_by_field_name("name", &mut cursor) {
                    let (name_node, alias) = match child.kind_name() {
                        "aliased_import" => (child.field(F::Name), child.field(F::Alias)),
                        _ => (Some(child), None),
                    };
                    let Some(name_node) = name_node else { continue };
                    let name: String = ident(name_node, self.src).split_whitespace().collect();
                    let bound = alias
                        .map(|a| ident(a, self.src).into_owned())
                        .unwrap_or_else(|| name.clone());
                    let v = if relative {
                        VSet::unknown()
                    } else {
                        self.module_step(&base, &name).0
                    };
                    out.push((bound, v, name_node));
                }
            }
            _ => {}
        }
        out
    }

    /// The value of a name never bound in the cell (or not yet, at the top level).
    pub fn default_value(&self, name: &str) -> VSet {
        // Cached so that module values keep one identity (see `module_step`).
        let id = self.names.get(name);
        if let Some(v) = id.and_then(|id| self.default_memo.borrow().get(&id).cloned()) {
            return v;
        }
        let v = self.default_value_uncached(name);
        if let Some(id) = id {
            self.default_memo.borrow_mut().insert(id, v.clone());
        }
        v
    }

    fn default_value_uncached(&self, name: &str) -> VSet {
        if name == "__builtins__" || name == "__builtin__" {
            return VSet::one(Val::module(ModVal::new(
                "builtins",
                "builtins",
                ModState::Quiet,
            )));
        }
        if self.cfg.prebound.contains(name) {
            return VSet::one(Val::module(ModVal::new(
                name.to_string(),
                self.cfg.table.real_name(name),
                ModState::Ok,
            )));
        }
        if let Some(b) = builtin(name) {
            return VSet::one(Val::Builtin(b));
        }
        // REPL state persists across cells: an unbound name that is an allowlisted module was
        // most likely imported by an earlier cell; another module name the table knows (a host
        // module, or one the allowlist blocks) is followed as a blocked module.
        if is_allowed(name, self.cfg.allow) {
            return VSet::one(Val::module(ModVal::new(
                name.to_string(),
                self.cfg.table.real_name(name),
                ModState::Ok,
            )));
        }
        if self.cfg.table.family(name).is_some() || self.cfg.table.modules.contains_key(name) {
            return VSet::one(Val::module(ModVal::new(
                name.to_string(),
                name.to_string(),
                ModState::Blocked,
            )));
        }
        VSet::unknown()
    }

    /// True when a function declares `id` `global` (or `nonlocal`).
    pub fn is_global_decl(&self, id: NameId) -> bool {
        self.global_decls.binary_search(&id).is_ok()
    }

    /// What `name` may be in `env`.
    pub fn lookup(&self, name: &str, env: &Env) -> VSet {
        match env {
            Env::Bind(parent, n, v) => {
                if *n == name {
                    (*v).clone()
                } else {
                    self.lookup(name, parent)
                }
            }
            Env::Flow(map) => match self.names.get(name).and_then(|id| map.get(id)) {
                Some(v) if !v.is_empty() => v.clone(),
                _ => self.default_value(name),
            },
            Env::Global => {
                let id = self.names.get(name);
                if let Some(id) = id {
                    self.note_read(id);
                }
                match id.and_then(|id| self.globals.get(id).map(|v| (id, v))) {
                    Some((id, v)) if !v.is_empty() => {
                        // A conditional binding (`if c: json = {}`, `try`/`except`, a walrus
                        // in `and`, a `global` in a function never called) leaves the
                        // pre-bound value on the other paths: the union holds both.
                        let d = self.default_value(name);
                        if !d.only_unknown() && self.prebound_may_reach(id) {
                            let mut v = v.clone();
                            v.join(&d);
                            v
                        } else {
                            v.clone()
                        }
                    }
                    _ => self.default_value(name),
                }
            }
        }
    }

    /// True when the value a name had before the cell (a namespace module, a builtin, a
    /// pre-bound host object) may still be what the name holds at some use, although the cell
    /// binds the name: a may-alias over control flow, made conservative. The pre-bound value
    /// is shadowed for good only when
    /// - every binding of the name is in a function, lambda, class body or comprehension scope
    ///   (a local: Python never reads the pre-bound value there), with no `global` declaration
    ///   of it; or
    /// - an unconditional top-level statement (`json = {}`, `def json():`, `import x as json`,
    ///   not inside `if`/`for`/`while`/`try`/`with`/`match`, not a walrus) rebinds it before
    ///   any other occurrence of the name in the cell (`json = json or {}` reads it first).
    ///
    /// Otherwise every binding is a possible definition and the pre-bound value another one
    /// (`if False: json = {}` leaves the host's `json` on the path that runs).
    pub fn prebound_may_reach(&self, id: NameId) -> bool {
        if self.prebound_reach.borrow().is_none() {
            let set = self.compute_prebound_reach();
            *self.prebound_reach.borrow_mut() = Some(Rc::new(set));
        }
        self.prebound_reach
            .borrow()
            .as_ref()
            .is_some_and(|s| s.contains(&id))
    }

    fn compute_prebound_reach(&self) -> HashSet<NameId> {
        // Scopes other than the module's: bindings strictly inside them are local.
        let mut scopes: Vec<(usize, usize)> = Vec::new();
        // Occurrences that are not reads of a variable: attribute names, keyword names,
        // the names of import statements.
        let mut not_ref: HashSet<usize> = HashSet::default();
        let mut skip_until = 0usize;
        let mut first_ref: HashMap<NameId, usize> = HashMap::default();
        // The end of the first unconditional top-level rebinding of each name, and the start
        // bytes of the identifiers it binds.
        let mut rebind: HashMap<NameId, usize> = HashMap::default();
        let mut target_starts: HashSet<usize> = HashSet::default();
        for stmt in named_children(self.root) {
            let mut targets: Vec<Node<'t>> = Vec::new();
            let def = if stmt.kind_name() == "decorated_definition" {
                stmt.field(F::Definition)
            } else {
                Some(stmt)
            };
            match def.map(|d| (d, d.kind_name())) {
                Some((d, "function_definition" | "class_definition")) => {
                    targets.extend(d.field(F::Name));
                }
                Some((_, "import_statement" | "import_from_statement")) => {
                    for (name, _, _) in self.import_bindings(stmt) {
                        if let Some(id) = self.names.get(&name) {
                            rebind.entry(id).or_insert(stmt.end_byte());
                        }
                    }
                }
                Some((_, "expression_statement")) => {
                    for e in named_children(stmt) {
                        let mut cur = e;
                        while cur.kind_name() == "assignment" && cur.field(F::Right).is_some() {
                            if let Some(l) = cur.field(F::Left) {
                                let mut stack = vec![l];
                                while let Some(t) = stack.pop() {
                                    match t.kind_name() {
                                        "identifier" => targets.push(t),
                                        "pattern_list"
                                        | "tuple_pattern"
                                        | "list_pattern"
                                        | "parenthesized_expression"
                                        | "list_splat_pattern" => stack.extend(named_children(t)),
                                        _ => {}
                                    }
                                }
                            }
                            match cur.field(F::Right) {
                                Some(r) => cur = r,
                                None => break,
                            }
                        }
                    }
                }
                _ => {}
            }
            for t in targets {
                if let Some(id) = self.name_id(t) {
                    target_starts.insert(t.start_byte());
                    rebind.entry(id).or_insert(stmt.end_byte());
                }
            }
        }
        let mut ids: Vec<(usize, NameId)> = Vec::new();
        // Names a `del` statement unbinds anywhere in the cell: after it the name is the
        // builtin or host value again (round 7 S7-22: `eval = print; del eval; eval(s)`).
        let mut deleted: HashSet<NameId> = HashSet::default();
        for n in self.walk(self.root) {
            let k = n.kind_name();
            match k {
                "delete_statement" => {
                    for t in deleted_names(n) {
                        if let Some(id) = self.name_id(t) {
                            deleted.insert(id);
                        }
                    }
                }
                "function_definition"
                | "lambda"
                | "class_definition"
                | "list_comprehension"
                | "set_comprehension"
                | "dictionary_comprehension"
                | "generator_expression" => {
                    scopes.push((n.start_byte(), n.end_byte()));
                }
                "attribute" => {
                    if let Some(a) = n.field(F::Attribute) {
                        not_ref.insert(a.start_byte());
                    }
                }
                "keyword_argument" => {
                    if let Some(a) = n.field(F::Name) {
                        not_ref.insert(a.start_byte());
                    }
                }
                "import_statement" | "import_from_statement" | "future_import_statement" => {
                    skip_until = skip_until.max(n.end_byte());
                }
                "identifier" => {
                    let b = n.start_byte();
                    if let Some(id) = self.name_id(n) {
                        ids.push((b, id));
                        if b >= skip_until && !not_ref.contains(&b) && !target_starts.contains(&b) {
                            first_ref.entry(id).or_insert(b);
                        }
                    }
                }
                _ => {}
            }
        }
        let inside = |b: usize| scopes.iter().any(|(s, e)| *s < b && b < *e);
        let mut top_bound: HashSet<NameId> = self.global_decls.iter().copied().collect();
        for (b, id) in &self.bound {
            if !top_bound.contains(id) && !inside(*b) {
                top_bound.insert(*id);
            }
        }
        let _ = ids;
        top_bound
            .into_iter()
            .filter(|id| match rebind.get(id) {
                Some(end) => first_ref.get(id).is_some_and(|r| r < end),
                None => true,
            })
            .chain(deleted)
            .collect()
    }

    /// One attribute step from module `m`: the value of `m.name`, and the escape it is, if any.
    ///
    /// Cached per module value and attribute name: a chain like `os.path.join` is stepped once
    /// however often the walk evaluates it.
    pub fn module_step(&self, m: &Rc<ModVal>, name: &str) -> (VSet, Option<Escape>) {
        let Some(id) = self.names.get(name) else {
            return self.module_step_uncached(m, name);
        };
        let key = (Rc::as_ptr(m) as usize, id);
        if let Some((_, v, e)) = self.step_memo.borrow().get(&key) {
            return (v.clone(), e.clone());
        }
        let (v, e) = self.module_step_uncached(m, name);
        // The entry keeps `m` alive, so its address cannot be reused by another module value.
        self.step_memo
            .borrow_mut()
            .insert(key, (m.clone(), v.clone(), e.clone()));
        (v, e)
    }

    fn module_step_uncached(&self, m: &ModVal, name: &str) -> (VSet, Option<Escape>) {
        let table = self.cfg.table;
        if &*m.real == "builtins" {
            if let Some(b) = builtin(name) {
                return (VSet::one(Val::Builtin(b)), None);
            }
        }
        if &*m.real == "functools" {
            // The default attribute lists of `update_wrapper`/`wraps` (CPython 3.11), so that
            // `WRAPPER_UPDATES + ("__globals__",)` folds.
            let names: &[&str] = match name {
                "WRAPPER_ASSIGNMENTS" => &[
                    "__module__",
                    "__name__",
                    "__qualname__",
                    "__doc__",
                    "__annotations__",
                ],
                "WRAPPER_UPDATES" => &["__dict__"],
                _ => &[],
            };
            if !names.is_empty() {
                let items = names.iter().map(|n| VSet::one(Val::str(*n))).collect();
                return (VSet::one(Val::seq(items)), None);
            }
        }
        if name == "__import__" && m.real.starts_with("importlib") {
            // `importlib.__import__` is an `__import__` work-alike.
            return (VSet::one(Val::Builtin("__import__")), None);
        }
        if is_dunder(name) {
            return (
                self.dunder_value(&Val::module(m.clone()), name)
                    .unwrap_or_else(VSet::unknown),
                None,
            );
        }
        if &*m.real == "builtins" {
            return (VSet::unknown(), None);
        }
        if &*m.real == "sys" && name == "modules" {
            return (VSet::one(Val::member("sys.modules")), None);
        }
        let path = format!("{}.{}", m.path, name);
        let real_sub = format!("{}.{}", m.real, name);
        let quiet = m.state == ModState::Quiet;
        let blocked = m.state == ModState::Blocked;
        let harmless_parent = table.family(&m.real).is_none();
        if let Some(t) = table.module_attr(&m.real, name) {
            let is_sub = t == real_sub
                || table.submodule_aliases.get(&real_sub).map(String::as_str) == Some(t)
                || table.submodule_aliases.get(&path).map(String::as_str) == Some(t);
            let allowed = if is_sub {
                is_allowed(&real_sub, self.cfg.allow) || is_allowed(&path, self.cfg.allow)
            } else {
                is_allowed(t, self.cfg.allow)
            };
            let unsafe_target = table.family(t).is_some();
            let escape =
                if quiet || (blocked && !is_private(name) && !(unsafe_target && harmless_parent)) {
                    None
                } else if is_private(name) {
                    Some(Escape::Private {
                        module: m.path.to_string(),
                        real: m.real.to_string(),
                        name: name.to_string(),
                    })
                } else if m.state == ModState::Parent && !(is_sub && allowed) {
                    Some(Escape::Parent {
                        module: m.path.to_string(),
                        name: name.to_string(),
                    })
                } else if unsafe_target || !allowed {
                    Some(Escape::Outside {
                        path: path.clone(),
                        target: t.to_string(),
                        leads: table
                            .leads_to(&path)
                            .map(|(p, t)| (p.to_string(), t.to_string())),
                    })
                } else {
                    None
                };
            let state = if quiet || escape.is_some() {
                ModState::Quiet
            } else if blocked {
                ModState::Blocked
            } else {
                ModState::Ok
            };
            let v = Val::module(ModVal::new(path, t.to_string(), state));
            return (VSet::one(v), escape);
        }
        let escape = if quiet {
            None
        } else if is_private(name) {
            Some(Escape::Private {
                module: m.path.to_string(),
                real: m.real.to_string(),
                name: name.to_string(),
            })
        } else if m.state == ModState::Parent && !is_allowed(&real_sub, self.cfg.allow) {
            Some(Escape::Parent {
                module: m.path.to_string(),
                name: name.to_string(),
            })
        } else if !table.knows(&m.real)
            && (HOST_MODULE_NAMES.contains(&name)
                || (matches!(name, "io" | "_io" | "pathlib")
                    && table.stdlib_modules.contains(root_of(&m.real))))
            && (!blocked || harmless_parent)
        {
            // `io`/`pathlib` only on standard-library modules (`pickletools.io`, round 4
            // G22): third-party packages have submodules of those names (`scipy.io`).
            Some(Escape::Heuristic { path: path.clone() })
        } else {
            None
        };
        let state = if quiet || escape.is_some() {
            ModState::Quiet
        } else {
            m.state
        };
        if !table.knows(&m.real) {
            // A module the table never walked: the attribute may be a submodule.
            let v = Val::module(ModVal::new(path, real_sub, state));
            return (VSet::one(v), escape);
        }
        (VSet::one(self.member(&real_sub)), escape)
    }

    /// Values that dunder and frame attributes produce on any object.
    fn dunder_value(&self, v: &Val, name: &str) -> Option<VSet> {
        let builtins_mod = || Val::module(ModVal::new("builtins", "builtins", ModState::Quiet));
        Some(VSet::one(match name {
            "__builtins__" => builtins_mod(),
            "__globals__" | "f_globals" | "f_locals" => Val::ns(Val::Main),
            "f_builtins" => Val::ns(builtins_mod()),
            "__dict__" => Val::ns(v.clone()),
            "__self__" if matches!(v, Val::Builtin(_)) => builtins_mod(),
            "__call__" if matches!(v, Val::Builtin(_) | Val::Func(_)) => v.clone(),
            _ => return None,
        }))
    }

    /// What attribute `name` of a value may be.
    pub fn attr_value(&self, v: &Val, name: &str) -> VSet {
        if let Val::Module(m) = v {
            return self.module_step(m, name).0;
        }
        if let Some(special) = self.dunder_value(v, name) {
            return special;
        }
        // A task's, future's, runner's or asyncio primitive's `_loop` is the event loop it runs
        // on (round 9 S9-2: `asyncio.current_task()._loop._ssock` is the host loop's socket).
        if name == "_loop"
            && !matches!(
                v,
                Val::Str(_)
                    | Val::Bytes(_)
                    | Val::Int(_)
                    | Val::Seq(_)
                    | Val::Dict(_)
                    | Val::Inst(_)
                    | Val::Class(_)
            )
        {
            return VSet::one(Val::member("asyncio.AbstractEventLoop"));
        }
        match v {
            Val::Member(p) if !is_dunder(name) && p.len() < 512 => {
                VSet::one(self.member(&format!("{p}.{name}")))
            }
            Val::Main if !is_dunder(name) => self.lookup(name, &Env::Global),
            _ => VSet::unknown(),
        }
    }

    /// What `v[key]` may be.
    pub fn index_value(&self, v: &Val, key: &Val) -> VSet {
        match (v, key) {
            (Val::Str(s), Val::Int(i)) => {
                let n = s.chars().count() as i64;
                let i = if *i < 0 { i + n } else { *i };
                match s.chars().nth(usize::try_from(i).unwrap_or(usize::MAX)) {
                    Some(c) => VSet::one(Val::str(c.to_string())),
                    None => VSet::unknown(),
                }
            }
            (Val::Seq(items), Val::Int(i)) => {
                let n = items.len() as i64;
                let i = if *i < 0 { i + n } else { *i };
                usize::try_from(i)
                    .ok()
                    .and_then(|i| items.get(i))
                    .cloned()
                    .unwrap_or_else(VSet::unknown)
                    .or_unknown()
            }
            (Val::Bytes(b), Val::Int(i)) => {
                let n = b.len() as i64;
                let i = if *i < 0 { i + n } else { *i };
                usize::try_from(i)
                    .ok()
                    .and_then(|i| b.get(i))
                    .map(|x| VSet::one(Val::Int(*x as i64)))
                    .unwrap_or_else(VSet::unknown)
            }
            (Val::Dict(pairs), k) => {
                let mut out = VSet::default();
                for (ks, vs) in pairs.iter() {
                    if ks.iter().any(|x| x == k) || ks.has_unknown() {
                        out.join(vs);
                    }
                }
                out.or_unknown()
            }
            (Val::Ns(inner), Val::Str(k)) => match inner.as_ref() {
                Val::Main => self.lookup(k, &Env::Global),
                other => self.attr_value(other, k),
            },
            (Val::Module(m), Val::Str(k)) => self.module_step(m, k).0,
            (Val::Member(p), Val::Str(k)) if &**p == "sys.modules" => VSet::one(Val::module(
                ModVal::new(k.clone(), self.cfg.table.real_name(k), ModState::Quiet),
            )),
            _ => VSet::unknown(),
        }
    }

    /// Evaluates an expression.
    ///
    /// Expressions nested deeper than [`MAX_DEPTH`] below `node` evaluate to
    /// [`Val::Unknown`]. During the reporting walk results are cached per node and environment;
    /// a result that met the depth bound is not cached, so a cached value never depends on how
    /// deep the evaluation that computed it started (the walk evaluates bottom-up, so every
    /// evaluation finds its operands cached and chains of any length evaluate exactly).
    pub fn eval(&self, node: Node<'t>, env: &Env, depth: u32) -> VSet {
        if depth > MAX_DEPTH {
            self.truncated.set(true);
            return VSet::unknown();
        }
        let gen = self.generation.get();
        let key = match env {
            _ if gen == 0 => None,
            _ if matches!(scan::kind(node), scan::K::Identifier) => None,
            Env::Global => Some((node.id(), true)),
            Env::Flow(_) => Some((node.id(), false)),
            Env::Bind(..) => None,
        };
        if let Some(k) = key {
            if let Some((g, v)) = self.memo.borrow().get(&k) {
                if *g == gen {
                    return v.clone();
                }
            }
        }
        let outer = self.truncated.replace(false);
        let v = self.eval_uncached(node, env, depth);
        let cut = self.truncated.get();
        self.truncated.set(outer || cut);
        if let (Some(k), false) = (key, cut) {
            self.memo.borrow_mut().insert(k, (gen, v.clone()));
        }
        v
    }

    fn eval_uncached(&self, node: Node<'t>, env: &Env, depth: u32) -> VSet {
        let d = depth + 1;
        match scan::kind(node) {
            K::ParenthesizedExpression => match first_named(node) {
                Some(inner) => self.eval(inner, env, d),
                None => VSet::unknown(),
            },
            K::Identifier => self.lookup(&ident(node, self.src), env),
            K::String => self.fold_string(node, env, d),
            K::ConcatenatedString => {
                let parts: Vec<VSet> = named_children(node)
                    .into_iter()
                    .map(|c| self.fold_string(c, env, d))
                    .collect();
                if parts
                    .iter()
                    .all(|p| p.iter().all(|v| matches!(v, Val::Bytes(_))))
                {
                    let mut out = Vec::new();
                    for p in &parts {
                        if let Some(Val::Bytes(b)) = p.0.first() {
                            out.extend_from_slice(b);
                        }
                    }
                    return VSet::one(Val::bytes(out));
                }
                match concat_product(&parts) {
                    Some(v) => v.into_iter().map(Val::str).collect(),
                    None => VSet::unknown(),
                }
            }
            K::Integer => match parse_int(self.text(node)) {
                Some(i) => VSet::one(Val::Int(i)),
                None => VSet::unknown(),
            },
            K::True => VSet::one(Val::Int(1)),
            K::False => VSet::one(Val::Int(0)),
            K::Attribute => {
                let (Some(obj), Some(attr)) = (node.field(F::Object), node.field(F::Attribute))
                else {
                    return VSet::unknown();
                };
                let name = ident(attr, self.src);
                let mut out = VSet::default();
                for v in self.eval(obj, env, d).iter() {
                    out.join(&self.attr_value(v, &name));
                }
                out.or_unknown()
            }
            K::Subscript => self.eval_subscript(node, env, d),
            // A container a call builds (`list(xs)`, `names.copy()`, `json.loads("[...]")`) is
            // the cell's to change like a display.
            K::Call => self.container_value(node, self.eval_call(node, env, d), d),
            K::BinaryOperator => {
                let (Some(l), Some(r), Some(op)) = (
                    node.field(F::Left),
                    node.field(F::Right),
                    node.field(F::Operator),
                ) else {
                    return VSet::unknown();
                };
                let lv = self.eval(l, env, d);
                let rv = self.eval(r, env, d);
                binop(self.text(op), &lv, &rv)
            }
            K::UnaryOperator => {
                let (Some(arg), Some(op)) = (node.field(F::Argument), node.field(F::Operator))
                else {
                    return VSet::unknown();
                };
                let op = self.text(op);
                self.eval(arg, env, d)
                    .iter()
                    .map(|v| match (op, v) {
                        ("-", Val::Int(i)) => i.checked_neg().map(Val::Int).unwrap_or(Val::Unknown),
                        ("+", Val::Int(i)) => Val::Int(*i),
                        ("~", Val::Int(i)) => Val::Int(!i),
                        _ => Val::Unknown,
                    })
                    .collect()
            }
            K::BooleanOperator => {
                let mut out = VSet::default();
                for f in [F::Left, F::Right] {
                    if let Some(c) = node.field(f) {
                        out.join(&self.eval(c, env, d));
                    }
                }
                out.or_unknown()
            }
            K::ConditionalExpression => {
                let kids = named_children(node);
                let mut out = VSet::default();
                for i in [0, 2] {
                    if let Some(c) = kids.get(i) {
                        out.join(&self.eval(*c, env, d));
                    }
                }
                out.or_unknown()
            }
            K::NamedExpression => match node.field(F::Value) {
                Some(v) => self.eval(v, env, d),
                None => VSet::unknown(),
            },
            K::Assignment => match node.field(F::Right) {
                Some(v) => self.eval(v, env, d),
                None => VSet::unknown(),
            },
            K::KeywordArgument => match node.field(F::Value) {
                Some(v) => self.eval(v, env, d),
                None => VSet::unknown(),
            },
            K::Lambda => match self.func_ids.get(&node.id()) {
                Some(id) => VSet::one(Val::Func(*id)),
                None => VSet::unknown(),
            },
            K::List | K::Tuple | K::Set | K::ExpressionList => {
                let items = named_children(node);
                if items.len() > MAX_SEQ || items.iter().any(|i| i.kind_name() == "list_splat") {
                    return VSet::unknown();
                }
                let v = Val::seq(items.into_iter().map(|i| self.eval(i, env, d)).collect());
                self.display_value(node, v, d)
            }
            K::Dictionary => {
                let items = named_children(node);
                if items.len() > MAX_SEQ {
                    return VSet::unknown();
                }
                let mut pairs = Vec::new();
                for p in items {
                    match (p.field(F::Key), p.field(F::Value)) {
                        (Some(k), Some(v)) if p.kind_name() == "pair" => {
                            pairs.push((self.eval(k, env, d), self.eval(v, env, d)))
                        }
                        _ => pairs.push((VSet::unknown(), VSet::unknown())),
                    }
                }
                self.display_value(node, Val::dict(pairs), d)
            }
            K::ListComprehension | K::GeneratorExpression | K::SetComprehension => {
                let v = self.eval_comprehension(node, env, d);
                self.container_value(node, v, d)
            }
            // `await c`: the result of a coroutine the cell defined (its returns), or of an
            // awaitable that hands back a value it was given (`asyncio.sleep(0, x)`).
            _ if node.kind_name() == "await" => match first_named(node) {
                Some(inner) => self
                    .eval(inner, env, d)
                    .iter()
                    .filter(|v| !is_coroutine(v))
                    .cloned()
                    .collect::<VSet>()
                    .or_unknown(),
                None => VSet::unknown(),
            },
            _ => VSet::unknown(),
        }
    }

    /// The value of `node`, an expression that builds a container (a list, tuple, set or dict
    /// display, a comprehension, a call returning a list or dict) evaluated to `vs`, given
    /// what the cell does to its container afterwards (round 5 H32/H33: `d["k"] = name`,
    /// `names.append(name)` after `d = {...}`, `names = [...]`): a container that is mutated
    /// also holds what the visible mutations add, with every position of a list holding any
    /// of its elements; one that is changed in ways cellguard cannot follow (aliased, passed to
    /// code that may change it, a computed value stored) also holds unknown values. See
    /// [`containers::Uses::state`].
    fn container_value(&self, node: Node<'t>, vs: VSet, d: u32) -> VSet {
        if !vs.iter().any(|v| matches!(v, Val::Seq(_) | Val::Dict(_))) {
            return vs;
        }
        let mut out = VSet::default();
        for v in vs.iter() {
            out.join(&self.display_value(node, v.clone(), d));
        }
        out
    }

    /// See [`Self::container_value`]: one value of `node`.
    fn display_value(&self, node: Node<'t>, v: Val, d: u32) -> VSet {
        let uses = {
            let mut slot = self.containers.borrow_mut();
            match &*slot {
                Some(u) => u.clone(),
                None => {
                    let mut root = node;
                    while let Some(p) = self.parent(root) {
                        root = p;
                    }
                    let u = Rc::new(containers::Uses::collect(self.nav(), root, self.src));
                    *slot = Some(u.clone());
                    u
                }
            }
        };
        let unknown = VSet::unknown;
        match (uses.state(self.nav(), node, self.src), v) {
            (State::Frozen, v) => VSet::one(v),
            (State::Escaped, Val::Seq(items)) => {
                let mut out: Vec<VSet> = items
                    .iter()
                    .map(|s| {
                        let mut s = s.clone();
                        s.join(&unknown());
                        s
                    })
                    .collect();
                out.push(unknown());
                VSet::one(Val::seq(out))
            }
            (State::Escaped, Val::Dict(pairs)) => {
                let mut out = (*pairs).clone();
                out.push((unknown(), unknown()));
                VSet::one(Val::dict(out))
            }
            (State::Mutated { added, .. }, Val::Seq(items)) => {
                // Stores, inserts and removals move positions: every position may hold any
                // element, the added ones included.
                let mut all = VSet::default();
                for s in items.iter() {
                    all.join(s);
                }
                let mut n = items.len();
                for a in &added {
                    match a {
                        Added::Item(x) | Added::Pair(_, Some(x)) => {
                            all.join(&self.eval(*x, &Env::Global, d));
                            n += 1;
                        }
                        Added::Elements(x) => {
                            for v in self.eval(*x, &Env::Global, d).iter() {
                                match v {
                                    Val::Seq(xs) => {
                                        for s in xs.iter() {
                                            all.join(s);
                                            n += 1;
                                        }
                                    }
                                    Val::Dict(ps) => {
                                        for (k, _) in ps.iter() {
                                            all.join(k);
                                            n += 1;
                                        }
                                    }
                                    _ => {
                                        all.join(&unknown());
                                        n += 1;
                                    }
                                }
                            }
                        }
                        Added::Pair(_, None) | Added::Keyword(..) => {
                            all.join(&unknown());
                            n += 1;
                        }
                    }
                }
                let all = all.or_unknown();
                VSet::one(Val::seq(vec![all; n.clamp(1, MAX_SEQ)]))
            }
            (State::Mutated { added, .. }, Val::Dict(pairs)) => {
                let mut out = (*pairs).clone();
                for a in &added {
                    match a {
                        Added::Pair(k, v) => out.push((
                            self.eval(*k, &Env::Global, d),
                            v.map_or_else(unknown, |v| self.eval(v, &Env::Global, d)),
                        )),
                        Added::Keyword(k, v) => out.push((
                            VSet::one(Val::str(ident(*k, self.src).as_ref())),
                            self.eval(*v, &Env::Global, d),
                        )),
                        Added::Elements(x) => {
                            for v in self.eval(*x, &Env::Global, d).iter() {
                                match v {
                                    Val::Dict(ps) => out.extend(ps.iter().cloned()),
                                    _ => out.push((unknown(), unknown())),
                                }
                            }
                        }
                        Added::Item(_) => out.push((unknown(), unknown())),
                    }
                }
                VSet::one(Val::dict(out))
            }
            (_, v) => VSet::one(v),
        }
    }

    /// The value of `left op= right`.
    pub fn eval_augmented(
        &self,
        node: Node<'t>,
        l: Node<'t>,
        r: Node<'t>,
        env: &Env,
        depth: u32,
    ) -> VSet {
        let op = node
            .field(F::Operator)
            .map(|o| self.text(o).trim_end_matches('='))
            .unwrap_or("");
        let lv = self.eval(l, env, depth + 1);
        let rv = self.eval(r, env, depth + 1);
        binop(op, &lv, &rv)
    }

    fn eval_comprehension(&self, node: Node<'t>, env: &Env, d: u32) -> VSet {
        let kids = named_children(node);
        let fors: Vec<Node> = kids
            .iter()
            .copied()
            .filter(|k| k.kind_name() == "for_in_clause")
            .collect();
        let has_if = kids.iter().any(|k| k.kind_name() == "if_clause");
        let Some(body) = node.field(F::Body) else {
            return VSet::unknown();
        };
        if fors.len() != 1 || has_if {
            return VSet::unknown();
        }
        let (Some(left), Some(right)) = (fors[0].field(F::Left), fors[0].field(F::Right)) else {
            return VSet::unknown();
        };
        if left.kind_name() != "identifier" {
            return VSet::unknown();
        }
        let var = ident(left, self.src);
        let var = &*var;
        let mut out = VSet::default();
        for it in self.eval(right, env, d).iter().take(4) {
            let Some(items) = as_sequence(it) else {
                out.push(Val::Unknown);
                continue;
            };
            let mut elems = Vec::new();
            for item in &items {
                let inner = Env::Bind(env, var, item);
                elems.push(self.eval(body, &inner, d));
            }
            out.push(Val::seq(elems));
        }
        out.or_unknown()
    }

    fn eval_subscript(&self, node: Node<'t>, env: &Env, d: u32) -> VSet {
        let Some(value) = node.field(F::Value) else {
            return VSet::unknown();
        };
        let mut cursor = node.walk();
        let subs: Vec<Node> = node
            .children_by_field_name("subscript", &mut cursor)
            .filter(|c| c.kind_name() != "comment")
            .collect();
        if subs.len() != 1 {
            return VSet::unknown();
        }
        let values = self.eval(value, env, d);
        let sub = subs[0];
        let mut out = VSet::default();
        if sub.kind_name() == "slice" {
            let Some((start, stop, step)) = self.slice_bounds(sub, env, d) else {
                return VSet::unknown();
            };
            for v in values.iter() {
                let r = match v {
                    Val::Str(s) => {
                        let chars: Vec<char> = s.chars().collect();
                        slice_indices(chars.len(), start, stop, step).map(|ix| {
                            Val::str(ix.into_iter().map(|i| chars[i]).collect::<String>())
                        })
                    }
                    Val::Bytes(b) => slice_indices(b.len(), start, stop, step)
                        .map(|ix| Val::Bytes(ix.into_iter().map(|i| b[i]).collect())),
                    Val::Seq(items) => slice_indices(items.len(), start, stop, step)
                        .map(|ix| Val::seq(ix.into_iter().map(|i| items[i].clone()).collect())),
                    _ => None,
                };
                out.push(r.unwrap_or(Val::Unknown));
            }
            return out.or_unknown();
        }
        let keys = self.eval(sub, env, d);
        for v in values.iter() {
            for k in keys.iter() {
                out.join(&self.index_value(v, k));
            }
        }
        out.or_unknown()
    }

    #[allow(clippy::type_complexity)]
    fn slice_bounds(
        &self,
        slice: Node<'t>,
        env: &Env,
        d: u32,
    ) -> Option<(Option<i64>, Option<i64>, Option<i64>)> {
        let mut parts: [Option<i64>; 3] = [None, None, None];
        let mut idx = 0usize;
        let mut cursor = slice.walk();
        for child in slice.children(&mut cursor) {
            if child.kind_name() == ":" {
                idx += 1;
                if idx > 2 {
                    return None;
                }
                continue;
            }
            if !child.is_named() || child.kind_name() == "comment" {
                continue;
            }
            let v = self.eval(child, env, d);
            match v.0.as_slice() {
                [Val::Int(i)] => parts[idx] = Some(*i),
                _ => return None,
            }
        }
        Some((parts[0], parts[1], parts[2]))
    }

    fn eval_call(&self, node: Node<'t>, env: &Env, d: u32) -> VSet {
        let Some(callee) = node.field(F::Function) else {
            return VSet::unknown();
        };
        let (pos, kws, _) = call_args(node.field(F::Arguments), self.src);
        let mut callee_vals = VSet::default();
        let mut out = VSet::default();
        let callee_inner = unparen(callee);
        if callee_inner.kind_name() == "attribute" {
            if let (Some(obj), Some(attr)) = (
                callee_inner.field(F::Object),
                callee_inner.field(F::Attribute),
            ) {
                let method = ident(attr, self.src);
                for rv in self.eval(obj, env, d).iter() {
                    match self.method_call(rv, &method, &pos, &kws, env, d) {
                        Some(v) => {
                            out.join(&v);
                        }
                        None => {
                            callee_vals.join(&self.attr_value(rv, &method));
                        }
                    }
                }
            }
        } else {
            callee_vals = self.eval(callee, env, d);
            // The host's `run(...)` dispatcher (Colony) returns a coroutine too.
            if callee_inner.kind_name() == "identifier"
                && self.text(callee_inner) == "run"
                && callee_vals.only_unknown()
            {
                out.push(Val::member(COROUTINE));
            }
        }
        for cv in callee_vals.iter() {
            let v = match cv {
                Val::Builtin(b) => self.builtin_call(b, &pos, &kws, env, d),
                Val::Member(p) => self.member_call(p, &pos, &kws, env, d),
                Val::Class(id) if self.classes[*id as usize].event_loop => {
                    VSet::one(Val::member("asyncio.AbstractEventLoop"))
                }
                Val::Class(id) if self.classes[*id as usize].plain => VSet::one(Val::Inst(*id)),
                Val::Func(id) => {
                    self.note_read(self.names.len() as u32 + *id);
                    let f = self.funcs.get(*id as usize);
                    let mut r = f.map(|f| f.returns.clone()).unwrap_or_default();
                    // Calling an `async def` makes a coroutine object; `await` gives its result.
                    if f.is_some_and(|f| is_async_def(f.node)) {
                        r.push(Val::member(COROUTINE));
                    }
                    r.or_unknown()
                }
                _ => VSet::unknown(),
            };
            out.join(&v);
        }
        out.or_unknown()
    }

    fn member_call(
        &self,
        path: &str,
        pos: &[Node<'t>],
        kws: &[(String, Node<'t>)],
        env: &Env,
        d: u32,
    ) -> VSet {
        let last = path.rsplit('.').next().unwrap_or(path);
        if (path.starts_with("importlib") || path.starts_with("_frozen_importlib"))
            && last == "import_module"
        {
            let arg = pos
                .first()
                .copied()
                .or_else(|| kws.iter().find(|(k, _)| k == "name").map(|(_, v)| *v));
            return match arg {
                Some(a) => self
                    .eval(a, env, d)
                    .iter()
                    .map(|v| match v {
                        Val::Str(s) => Val::module(ModVal::new(
                            s.clone(),
                            self.cfg.table.real_name(s),
                            ModState::Blocked,
                        )),
                        _ => Val::Unknown,
                    })
                    .collect(),
                None => VSet::unknown(),
            };
        }
        // pydantic v1's `GetterDict(obj)` is a mapping whose items are `getattr(obj, key)`: the
        // object's namespace, as `vars(obj)` (round 6 S6-11).
        if path.starts_with("pydantic") && last == "GetterDict" {
            return match pos.first() {
                Some(a) => self
                    .eval(*a, env, d)
                    .iter()
                    .map(|x| Val::ns(x.clone()))
                    .collect(),
                None => VSet::unknown(),
            };
        }
        if path == "json.loads" {
            // A JSON string constant decodes to a string (`json.loads('"_\\u005fclass__"')`).
            let Some(a) = pos.first() else {
                return VSet::unknown();
            };
            return self
                .eval(*a, env, d)
                .iter()
                .map(|v| match v {
                    Val::Str(s) => match serde_json::from_str::<serde_json::Value>(s) {
                        Ok(serde_json::Value::String(t)) => Val::str(t),
                        _ => Val::Unknown,
                    },
                    _ => Val::Unknown,
                })
                .collect();
        }
        // ... and a loop built from one of asyncio's loop classes (`asyncio.SelectorEventLoop()`,
        // `asyncio.unix_events.SelectorEventLoop()`; round 9 S9-3).
        if path.starts_with("asyncio")
            && (matches!(
                last,
                "get_running_loop" | "get_event_loop" | "new_event_loop"
            ) || last.ends_with("EventLoop"))
        {
            return VSet::one(Val::member("asyncio.AbstractEventLoop"));
        }
        // A task (the host's own from `current_task()`): its denied members
        // (`asyncio.Task.get_context`, round 8 S8-14) apply to the result.
        if path.starts_with("asyncio")
            && matches!(
                last,
                "current_task" | "create_task" | "ensure_future" | "Task"
            )
        {
            return VSet::one(Val::member("asyncio.Task"));
        }
        // The host's policy, or a new one of the host's policy classes
        // (`asyncio.DefaultEventLoopPolicy()`): its private state (`_local._loop` is the
        // host's running loop) and its loop and watcher methods are denied (round 7 S7-15).
        if path.starts_with("asyncio")
            && (last == "get_event_loop_policy" || last.ends_with("EventLoopPolicy"))
        {
            return VSet::one(Val::member("asyncio.AbstractEventLoopPolicy"));
        }
        if path.starts_with("asyncio") && last == "Future" {
            return VSet::one(Val::member("asyncio.Future"));
        }
        // `dataclasses.replace(x, **changes)` is a new instance of `type(x)`, like `C(...)`
        // (round 9 S9-13: `cfg = replace(cfg, port=9090)` kept `cfg` an instance of `Config`).
        if path == "dataclasses.replace" {
            if let Some(first) = pos.first() {
                let v = self.eval(*first, env, d);
                if !v.is_empty() && v.iter().all(|x| matches!(x, Val::Inst(_))) {
                    return v;
                }
            }
            return VSet::unknown();
        }
        // `await asyncio.sleep(0, x)` is `x`.
        if path == "asyncio.sleep" || path == "asyncio.tasks.sleep" {
            let result = pos
                .get(1)
                .copied()
                .or_else(|| kws.iter().find(|(k, _)| k == "result").map(|(_, v)| *v));
            return match result {
                Some(r) => self.eval(r, env, d),
                None => VSet::unknown(),
            };
        }
        VSet::unknown()
    }

    fn builtin_call(
        &self,
        b: &str,
        pos: &[Node<'t>],
        kws: &[(String, Node<'t>)],
        env: &Env,
        d: u32,
    ) -> VSet {
        let arg = |i: usize| pos.get(i).map(|p| self.eval(*p, env, d));
        let kw = |name: &str| {
            kws.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| self.eval(*v, env, d))
        };
        let map1 = |f: &dyn Fn(&Val) -> Option<Val>| -> VSet {
            match arg(0) {
                Some(v) => v.iter().map(|x| f(x).unwrap_or(Val::Unknown)).collect(),
                None => VSet::unknown(),
            }
        };
        match b {
            // `anext(agen)`, `aiter(agen)` of an async generator of the cell: an awaitable
            // whose `.send(None)` drives it by hand (round 9 S9-23).
            "anext" | "aiter" if arg(0).is_some_and(|v| v.iter().any(is_coroutine)) => {
                let mut v = VSet::one(Val::member(COROUTINE));
                v.push(Val::Unknown);
                v
            }
            "getattr" => {
                let (Some(objs), Some(names)) = (arg(0), arg(1)) else {
                    return VSet::unknown();
                };
                let mut out = VSet::default();
                for o in objs.iter() {
                    for n in names.iter() {
                        match n {
                            Val::Str(s) => out.join(&self.attr_value(o, s)),
                            _ => out.push(Val::Unknown),
                        };
                    }
                }
                if let Some(default) = arg(2) {
                    out.join(&default);
                }
                out.or_unknown()
            }
            "vars" => match arg(0) {
                None => VSet::one(Val::ns(Val::Main)),
                Some(v) => v.iter().map(|x| Val::ns(x.clone())).collect(),
            },
            "globals" | "locals" => VSet::one(Val::ns(Val::Main)),
            "__import__" => {
                let Some(names) = arg(0).or_else(|| kw("name")) else {
                    return VSet::unknown();
                };
                let full = pos.len() >= 4 || kw("fromlist").is_some();
                names
                    .iter()
                    .map(|n| match n {
                        Val::Str(s) => {
                            let path: &str = if full {
                                s
                            } else {
                                s.split('.').next().unwrap_or("")
                            };
                            Val::module(ModVal::new(
                                path,
                                self.cfg.table.real_name(path),
                                ModState::Blocked,
                            ))
                        }
                        _ => Val::Unknown,
                    })
                    .collect()
            }
            "chr" => map1(&|v| match v {
                Val::Int(i) => u32::try_from(*i)
                    .ok()
                    .and_then(char::from_u32)
                    .map(|c| Val::str(c.to_string())),
                _ => None,
            }),
            "ord" => map1(&|v| match v {
                Val::Str(s) if s.chars().count() == 1 => {
                    s.chars().next().map(|c| Val::Int(c as i64))
                }
                _ => None,
            }),
            "str" => {
                if pos.is_empty() {
                    return VSet::one(Val::str(String::new()));
                }
                map1(&|v| display(v).map(Val::str))
            }
            "int" => {
                let base = match arg(1) {
                    Some(b) => match b.0.as_slice() {
                        [Val::Int(b)] if (2..=36).contains(b) => *b as u32,
                        _ => return VSet::unknown(),
                    },
                    None => 10,
                };
                map1(&|v| match v {
                    Val::Int(i) => Some(Val::Int(*i)),
                    Val::Str(s) => i64::from_str_radix(s.trim(), base).ok().map(Val::Int),
                    _ => None,
                })
            }
            // `type(x)` is a class's metaclass (`type`, pydantic's `ModelMetaclass`, `ABCMeta`):
            // calling it with three arguments builds a class the way `type(...)` does. A class
            // built by a metaclass with a metaclass among its bases is a metaclass too
            // (`M = type("M", (type,), {...})`).
            "type" | METACLASS if pos.len() == 3 => {
                let metaclass_base = self.eval(pos[1], env, d).iter().any(|b| {
                    as_sequence(b).is_some_and(|items| {
                        items
                            .iter()
                            .any(|i| i.has_builtin("type") || i.has_builtin(METACLASS))
                    })
                });
                if metaclass_base {
                    VSet::of(vec![Val::Builtin(METACLASS), Val::Unknown])
                } else {
                    VSet::unknown()
                }
            }
            "type" if pos.len() == 1 && kws.is_empty() => {
                VSet::of(vec![Val::Builtin(METACLASS), Val::Unknown])
            }
            "list" | "tuple" => {
                if pos.is_empty() {
                    return VSet::one(Val::seq(Vec::new()));
                }
                map1(&|v| as_sequence(v).map(Val::seq))
            }
            // An iterator over a known sequence is the sequence (`next(iter([json]))`); its
            // next item, and the smallest or largest one, may be any of its elements.
            "iter" if pos.len() == 1 => map1(&|v| as_sequence(v).map(Val::seq)),
            "next" | "min" | "max" if pos.len() == 1 || (b == "next" && pos.len() == 2) => {
                let mut out = VSet::default();
                for v in arg(0).unwrap_or_default().iter() {
                    match as_sequence(v) {
                        Some(items) => {
                            for i in &items {
                                out.join(i);
                            }
                        }
                        None => {
                            out.push(Val::Unknown);
                        }
                    }
                }
                if let Some(default) = arg(1) {
                    out.join(&default);
                }
                out.or_unknown()
            }
            // `max(a, b)`: either argument.
            "min" | "max" => {
                let mut out = VSet::default();
                for p in pos {
                    out.join(&self.eval(*p, env, d));
                }
                out.or_unknown()
            }
            "reversed" => map1(&|v| {
                as_sequence(v).map(|mut items| {
                    items.reverse();
                    Val::seq(items)
                })
            }),
            "bytes" | "bytearray" => map1(&|v| match v {
                Val::Seq(items) => {
                    let mut out = Vec::new();
                    for i in items.iter() {
                        match i.0.as_slice() {
                            [Val::Int(x)] if (0..256).contains(x) => out.push(*x as u8),
                            _ => return None,
                        }
                    }
                    Some(Val::bytes(out))
                }
                Val::Str(s) => Some(Val::bytes(s.as_bytes())),
                Val::Bytes(b) => Some(Val::Bytes(b.clone())),
                _ => None,
            }),
            _ => VSet::unknown(),
        }
    }

    /// Methods of constant receivers (`"".join`, `"{}".format`, `b"".decode`, `vars(m).get`).
    /// `None` when the receiver or the method is not modelled.
    fn method_call(
        &self,
        recv: &Val,
        method: &str,
        pos: &[Node<'t>],
        kws: &[(String, Node<'t>)],
        env: &Env,
        d: u32,
    ) -> Option<VSet> {
        // Every task, future and loop policy hands out an event loop (`fut.get_loop()`,
        // `asyncio.get_event_loop_policy().get_event_loop()`): whatever the receiver, the
        // loop's denied members apply to the result.
        if matches!(
            method,
            "get_loop" | "_get_loop" | "get_event_loop" | "get_running_loop" | "new_event_loop"
        ) && !matches!(recv, Val::Module(_) | Val::Str(_) | Val::Bytes(_))
        {
            return Some(VSet::one(Val::member("asyncio.AbstractEventLoop")));
        }
        if method == "create_task"
            && matches!(recv, Val::Member(p) if &**p == "asyncio.AbstractEventLoop")
        {
            return Some(VSet::one(Val::member("asyncio.Task")));
        }
        // An async generator's step (`agen.asend(None)`, `agen.__anext__()`, `athrow`) is an
        // awaitable driven like a coroutine: `.send(None)` on it hands out what the generator
        // awaits (round 9 S9-23).
        if matches!(
            method,
            "asend" | "athrow" | "aclose" | "__anext__" | "__aiter__"
        ) && is_coroutine(recv)
        {
            return Some(VSet::one(Val::member(COROUTINE)));
        }
        // A sealed pydantic model of the cell validated from pure data (`M.model_validate_json(
        // text)`, `M.model_validate({...})` of constants) or copied (`m.model_copy()`): an
        // instance of it, like `M(...)` (round 9 S9-8). Not when the cell validates from
        // attributes (`from_attributes`, `orm_mode`: fields are read with `getattr` from any
        // object) or `update=` replaces fields.
        if let Val::Class(id) | Val::Inst(id) = recv {
            // A method of that name the class declares itself may return anything.
            let plain = self
                .classes
                .get(*id as usize)
                .is_some_and(|c| c.plain && !c.fields.contains(method));
            let from_attrs = self.src.contains("from_attributes") || self.src.contains("orm_mode");
            if plain && !from_attrs && kws.is_empty() {
                fn pure(v: &VSet, depth: u32) -> bool {
                    !v.is_empty()
                        && v.iter().all(|x| match x {
                            Val::Str(_) | Val::Bytes(_) | Val::Int(_) => true,
                            Val::Seq(items) => {
                                depth < 4 && items.iter().all(|i| pure(i, depth + 1))
                            }
                            Val::Dict(pairs) => {
                                depth < 4
                                    && pairs
                                        .iter()
                                        .all(|(k, v)| pure(k, depth + 1) && pure(v, depth + 1))
                            }
                            _ => false,
                        })
                }
                let of_class = matches!(recv, Val::Class(_));
                let ok = match method {
                    "model_validate_json" | "parse_raw" if of_class => true,
                    "model_validate" | "parse_obj" if of_class => {
                        pos.len() == 1 && pure(&self.eval(pos[0], env, d), 0)
                    }
                    "model_copy" | "copy" if !of_class => pos.is_empty(),
                    _ => false,
                };
                if ok {
                    return Some(VSet::one(Val::Inst(*id)));
                }
            }
        }
        // `loop.create_future()`: a future of the host's loop (its `_loop`, `_callbacks`, ...
        // are denied like a task's private state; round 7 S7-15).
        if method == "create_future"
            && matches!(recv, Val::Member(p) if &**p == "asyncio.AbstractEventLoop")
        {
            return Some(VSet::one(Val::member("asyncio.Future")));
        }
        match recv {
            Val::Str(s) => self.str_method(s, method, pos, kws, env, d),
            Val::Bytes(b) => match method {
                "decode" => Some(match String::from_utf8(b.to_vec()) {
                    Ok(s) => VSet::str(s),
                    Err(_) => VSet::unknown(),
                }),
                _ => None,
            },
            Val::Builtin("str") if !pos.is_empty() && !is_dunder(method) => {
                let mut out = VSet::default();
                for r in self.eval(pos[0], env, d).iter() {
                    match r {
                        Val::Str(s) => out.join(
                            &self
                                .str_method(s, method, &pos[1..], kws, env, d)
                                .unwrap_or_else(VSet::unknown),
                        ),
                        _ => out.push(Val::Unknown),
                    };
                }
                Some(out.or_unknown())
            }
            Val::Builtin("bytes") if method == "fromhex" => {
                let v = self.eval(*pos.first()?, env, d);
                Some(
                    v.iter()
                        .map(|x| match x {
                            Val::Str(s) => decode_hex(s).map(Val::bytes).unwrap_or(Val::Unknown),
                            _ => Val::Unknown,
                        })
                        .collect(),
                )
            }
            Val::Ns(inner) if matches!(method, "get" | "pop" | "setdefault") => {
                let keys = self.eval(*pos.first()?, env, d);
                let mut out = VSet::default();
                for k in keys.iter() {
                    out.join(&self.index_value(&Val::Ns(inner.clone()), k));
                }
                if let Some(default) = pos.get(1) {
                    out.join(&self.eval(*default, env, d));
                }
                Some(out.or_unknown())
            }
            Val::Dict(pairs) => match method {
                "get" | "pop" | "setdefault" => {
                    let keys = self.eval(*pos.first()?, env, d);
                    let mut out = VSet::default();
                    for k in keys.iter() {
                        out.join(&self.index_value(recv, k));
                    }
                    if let Some(default) = pos.get(1) {
                        out.join(&self.eval(*default, env, d));
                    }
                    Some(out.or_unknown())
                }
                "keys" => Some(VSet::one(Val::seq(
                    pairs.iter().map(|(k, _)| k.clone()).collect(),
                ))),
                "values" => Some(VSet::one(Val::seq(
                    pairs.iter().map(|(_, v)| v.clone()).collect(),
                ))),
                // `for k, v in {...}.items()`: the pairs, so constant keys stay constants.
                "items" => Some(VSet::one(Val::seq(
                    pairs
                        .iter()
                        .map(|(k, v)| VSet::one(Val::seq(vec![k.clone(), v.clone()])))
                        .collect(),
                ))),
                "copy" => Some(VSet::one(recv.clone())),
                _ => None,
            },
            _ => None,
        }
    }

    fn str_method(
        &self,
        s: &str,
        method: &str,
        pos: &[Node<'t>],
        kws: &[(String, Node<'t>)],
        env: &Env,
        d: u32,
    ) -> Option<VSet> {
        let args: Vec<VSet> = pos.iter().map(|p| self.eval(*p, env, d)).collect();
        let single_str = |i: usize| -> Option<Vec<String>> {
            let v = args.get(i)?;
            let strs: Vec<String> = v.strs().map(str::to_string).collect();
            (strs.len() == v.0.len() && !strs.is_empty()).then_some(strs)
        };
        let one = |r: String| Some(VSet::str(r));
        match method {
            "join" => {
                let it = args.first()?;
                let mut out = VSet::default();
                for itv in it.iter() {
                    let Some(items) = as_sequence(itv) else {
                        out.push(Val::Unknown);
                        continue;
                    };
                    let mut parts = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            parts.push(VSet::one(Val::str(s.to_string())));
                        }
                        parts.push(item.clone());
                    }
                    match concat_product(&parts) {
                        Some(v) => {
                            for x in v {
                                out.push(Val::str(x));
                            }
                        }
                        None => {
                            out.push(Val::Unknown);
                        }
                    }
                }
                Some(out.or_unknown())
            }
            "format" => {
                let kw_vals: Vec<(String, VSet)> = kws
                    .iter()
                    .map(|(k, v)| (k.clone(), self.eval(*v, env, d)))
                    .collect();
                Some(fold_format(s, &args, &kw_vals).unwrap_or_else(VSet::unknown))
            }
            "format_map" => {
                let mapping = args.first()?;
                let mut out = VSet::default();
                for m in mapping.iter() {
                    let Val::Dict(pairs) = m else {
                        out.push(Val::Unknown);
                        continue;
                    };
                    let kw_vals: Option<Vec<(String, VSet)>> = pairs
                        .iter()
                        .map(|(k, v)| match k.0.as_slice() {
                            [Val::Str(k)] => Some((k.to_string(), v.clone())),
                            _ => None,
                        })
                        .collect();
                    match kw_vals.and_then(|kv| fold_format(s, &[], &kv)) {
                        Some(v) => out.join(&v),
                        None => out.push(Val::Unknown),
                    };
                }
                Some(out.or_unknown())
            }
            "replace" => {
                let (olds, news) = (single_str(0)?, single_str(1)?);
                let count = match args.get(2).map(|c| c.0.as_slice()) {
                    None => None,
                    Some([Val::Int(n)]) => Some(*n),
                    Some(_) => return Some(VSet::unknown()),
                };
                let mut out = VSet::default();
                for o in &olds {
                    for n in &news {
                        let r = match count {
                            Some(c) if c >= 0 => s.replacen(o.as_str(), n, c as usize),
                            _ => {
                                if o.is_empty() && s.len() * (n.len() + 1) > MAX_STR {
                                    out.push(Val::Unknown);
                                    continue;
                                }
                                s.replace(o.as_str(), n)
                            }
                        };
                        out.join(&VSet::str(r));
                    }
                }
                Some(out.or_unknown())
            }
            "upper" => one(s.to_uppercase()),
            "lower" | "casefold" => one(s.to_lowercase()),
            "swapcase" => one(s
                .chars()
                .flat_map(|c| {
                    if c.is_uppercase() {
                        c.to_lowercase().collect::<Vec<_>>()
                    } else {
                        c.to_uppercase().collect::<Vec<_>>()
                    }
                })
                .collect()),
            "title" => one(title_case(s)),
            "capitalize" => {
                let mut cs = s.chars();
                one(match cs.next() {
                    Some(f) => f
                        .to_uppercase()
                        .chain(cs.as_str().to_lowercase().chars())
                        .collect(),
                    None => String::new(),
                })
            }
            "strip" | "lstrip" | "rstrip" => {
                let chars: Vec<char> = match args.first() {
                    None => Vec::new(),
                    Some(_) => single_str(0)?.first()?.chars().collect(),
                };
                let pred = |c: char| {
                    if chars.is_empty() {
                        c.is_whitespace()
                    } else {
                        chars.contains(&c)
                    }
                };
                one(match method {
                    "strip" => s.trim_matches(pred).to_string(),
                    "lstrip" => s.trim_start_matches(pred).to_string(),
                    _ => s.trim_end_matches(pred).to_string(),
                })
            }
            "removeprefix" | "removesuffix" => {
                let a = single_str(0)?;
                Some(
                    a.iter()
                        .map(|x| {
                            let r = if method == "removeprefix" {
                                s.strip_prefix(x.as_str())
                            } else {
                                s.strip_suffix(x.as_str())
                            };
                            Val::str(r.unwrap_or(s).to_string())
                        })
                        .collect(),
                )
            }
            "encode" => Some(VSet::one(Val::bytes(s.as_bytes()))),
            // Padding: the template survives inside the padded string, so format fields
            // stay visible (`"{0.__globals__}".rjust(1).format(f)`, round 6 S6-4).
            "ljust" | "rjust" | "center" | "zfill" | "expandtabs" => {
                let fill = match (method, args.get(1)) {
                    ("zfill", _) => Some('0'),
                    ("expandtabs", _) | (_, None) => Some(' '),
                    (_, Some(_)) => single_str(1).filter(|f| f.len() == 1).and_then(|f| {
                        let mut cs = f[0].chars();
                        cs.next().filter(|_| cs.next().is_none())
                    }),
                };
                let widths: Option<Vec<i64>> = match args.first() {
                    None if method == "expandtabs" => Some(vec![8]),
                    None => None,
                    Some(v) => v
                        .iter()
                        .map(|x| match x {
                            Val::Int(n) => Some(*n),
                            _ => None,
                        })
                        .collect(),
                };
                let mut out = VSet::default();
                match widths {
                    Some(ws) if !ws.is_empty() => {
                        for w in ws {
                            let r = fill.and_then(|f| pad(s, method, w, f));
                            out.push(r.map_or(Val::Unknown, Val::str));
                        }
                    }
                    // A tab size cellguard cannot fold: the text with tabs removed, as single
                    // spaces and as eight columns (a field keeps its text unless a tab is in
                    // it).
                    _ if method == "expandtabs" => {
                        for w in [0, 1, 8] {
                            out.push(pad(s, method, w, ' ').map_or(Val::Unknown, Val::str));
                        }
                    }
                    // A width cellguard cannot fold: padding adds fill characters around the
                    // text, which leaves every format field as it is unless the fill is a brace.
                    _ => match fill {
                        Some(f) if f != '{' && f != '}' => {
                            out.push(Val::str(s.to_string()));
                        }
                        _ => {
                            out.push(Val::Unknown);
                        }
                    },
                }
                Some(out)
            }
            "split" => {
                if args.len() > 1 || !kws.is_empty() {
                    return Some(VSet::unknown());
                }
                let parts: Vec<String> = match args.first() {
                    None => s.split_whitespace().map(str::to_string).collect(),
                    Some(_) => {
                        let sep = single_str(0)?;
                        if sep.len() != 1 || sep[0].is_empty() {
                            return Some(VSet::unknown());
                        }
                        s.split(sep[0].as_str()).map(str::to_string).collect()
                    }
                };
                if parts.len() > MAX_SEQ {
                    return Some(VSet::unknown());
                }
                Some(VSet::one(Val::seq(
                    parts.into_iter().map(|p| VSet::one(Val::str(p))).collect(),
                )))
            }
            _ => None,
        }
    }

    /// Folds a string literal, including f-strings whose interpolations fold.
    fn fold_string(&self, node: Node<'t>, env: &Env, d: u32) -> VSet {
        if node.kind_name() != "string" {
            return self.eval(node, env, d);
        }
        let prefix = parse::string_prefix(node, self.src);
        let raw = prefix.contains('r');
        if prefix.contains('b') {
            let mut out = Vec::new();
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                match child.kind_name() {
                    "string_content" => {
                        let mut inner = child.walk();
                        let mut last = child.start_byte();
                        for esc in child.children(&mut inner) {
                            out.extend_from_slice(
                                self.src
                                    .get(last..esc.start_byte())
                                    .unwrap_or("")
                                    .as_bytes(),
                            );
                            push_bytes_escape(&mut out, self.text(esc), raw);
                            last = esc.end_byte();
                        }
                        out.extend_from_slice(
                            self.src
                                .get(last..child.end_byte())
                                .unwrap_or("")
                                .as_bytes(),
                        );
                    }
                    "escape_sequence" => push_bytes_escape(&mut out, self.text(child), raw),
                    _ => {}
                }
            }
            return VSet::one(Val::bytes(out));
        }
        let mut parts: Vec<VSet> = Vec::new();
        let mut lit = String::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind_name() {
                "string_content" => {
                    let mut inner = child.walk();
                    let mut last = child.start_byte();
                    for esc in child.children(&mut inner) {
                        lit.push_str(self.src.get(last..esc.start_byte()).unwrap_or(""));
                        match decode_escape(self.text(esc), esc.kind_name(), raw) {
                            Some(t) => lit.push_str(&t),
                            None => return VSet::unknown(),
                        }
                        last = esc.end_byte();
                    }
                    lit.push_str(self.src.get(last..child.end_byte()).unwrap_or(""));
                }
                "escape_sequence" | "escape_interpolation" => {
                    match decode_escape(self.text(child), child.kind_name(), raw) {
                        Some(t) => lit.push_str(&t),
                        None => return VSet::unknown(),
                    }
                }
                "interpolation" => {
                    if child.field(F::FormatSpecifier).is_some() {
                        return VSet::unknown();
                    }
                    if let Some(conv) = child.field(F::TypeConversion) {
                        if self.text(conv) != "!s" {
                            return VSet::unknown();
                        }
                    }
                    let Some(expr) = child.field(F::Expression) else {
                        return VSet::unknown();
                    };
                    let v = self.eval(expr, env, d);
                    let strs: Option<Vec<Val>> =
                        v.iter().map(|x| display(x).map(Val::str)).collect();
                    let Some(strs) = strs else {
                        return VSet::unknown();
                    };
                    parts.push(VSet::one(Val::str(std::mem::take(&mut lit))));
                    parts.push(strs.into_iter().collect());
                }
                _ => {}
            }
        }
        parts.push(VSet::one(Val::str(lit)));
        match concat_product(&parts) {
            Some(v) => v.into_iter().map(Val::str).collect(),
            None => VSet::unknown(),
        }
    }
}

/// Decodes one escape of a str literal; `None` for a `\N{...}` name the folding does not know
/// (the literal is then unknown rather than wrong).
fn decode_escape(text: &str, kind: &str, raw: bool) -> Option<String> {
    if kind == "escape_interpolation" {
        return Some(text.chars().next().map(String::from).unwrap_or_default());
    }
    if raw {
        return Some(text.to_string());
    }
    if let Some(name) = text.strip_prefix("\\N{").and_then(|t| t.strip_suffix('}')) {
        return unicode_name(name).map(String::from);
    }
    Some(parse::unescape(text))
}

/// The characters of `\N{NAME}` escapes that spell identifiers (`\N{LOW LINE}` is `_`).
fn unicode_name(name: &str) -> Option<char> {
    let name = name.trim().to_ascii_uppercase();
    let digits = [
        "ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE",
    ];
    match name.as_str() {
        "LOW LINE" => Some('_'),
        "FULL STOP" => Some('.'),
        "SPACE" => Some(' '),
        "HYPHEN-MINUS" => Some('-'),
        _ => {
            if let Some(l) = name.strip_prefix("LATIN SMALL LETTER ") {
                let mut cs = l.chars();
                return match (cs.next(), cs.next()) {
                    (Some(c), None) if c.is_ascii_uppercase() => Some(c.to_ascii_lowercase()),
                    _ => None,
                };
            }
            if let Some(l) = name.strip_prefix("LATIN CAPITAL LETTER ") {
                let mut cs = l.chars();
                return match (cs.next(), cs.next()) {
                    (Some(c), None) if c.is_ascii_uppercase() => Some(c),
                    _ => None,
                };
            }
            let d = name.strip_prefix("DIGIT ")?;
            digits
                .iter()
                .position(|x| *x == d)
                .and_then(|i| char::from_digit(i as u32, 10))
        }
    }
}

fn push_bytes_escape(out: &mut Vec<u8>, esc: &str, raw: bool) {
    if raw {
        out.extend_from_slice(esc.as_bytes());
        return;
    }
    if let Some(h) = esc.strip_prefix("\\x") {
        if let Ok(b) = u8::from_str_radix(h, 16) {
            out.push(b);
            return;
        }
    }
    let s = parse::unescape(esc);
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if (c as u32) < 256 => out.push(c as u32 as u8),
        _ => out.extend_from_slice(s.as_bytes()),
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let digits: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    if digits.len() % 2 != 0 {
        return None;
    }
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(&p.iter().collect::<String>(), 16).ok())
        .collect()
}

/// `l op r` over every pair of values (bounded).
pub fn binop(op: &str, l: &VSet, r: &VSet) -> VSet {
    let mut out = VSet::default();
    for a in l.iter() {
        for b in r.iter() {
            out.push(binop1(op, a, b).unwrap_or(Val::Unknown));
            if out.0.len() >= MAX_SET {
                out.push(Val::Unknown);
                return out;
            }
        }
    }
    out.or_unknown()
}

fn binop1(op: &str, a: &Val, b: &Val) -> Option<Val> {
    use Val::*;
    Some(match (op, a, b) {
        ("+", Str(x), Str(y)) => {
            if x.len() + y.len() > MAX_STR {
                return None;
            }
            Val::str(format!("{x}{y}"))
        }
        ("+", Bytes(x), Bytes(y)) => {
            if x.len() + y.len() > MAX_STR {
                return None;
            }
            Val::bytes([&x[..], &y[..]].concat())
        }
        ("+", Seq(x), Seq(y)) => {
            if x.len() + y.len() > MAX_SEQ {
                return None;
            }
            Val::seq([x.as_slice(), y.as_slice()].concat())
        }
        ("*", Str(s), Int(n)) | ("*", Int(n), Str(s)) => {
            let n = usize::try_from(*n).unwrap_or(0);
            if s.len().checked_mul(n)? > MAX_STR {
                return None;
            }
            Val::str(s.repeat(n))
        }
        ("*", Seq(s), Int(n)) | ("*", Int(n), Seq(s)) => {
            let n = usize::try_from(*n).unwrap_or(0);
            if s.len().checked_mul(n)? > MAX_SEQ {
                return None;
            }
            Val::seq((0..n).flat_map(|_| s.iter().cloned()).collect())
        }
        ("%", Str(t), args) => {
            let v = fold_percent(t, args)?;
            match v.0.as_slice() {
                [one] => one.clone(),
                _ => return None,
            }
        }
        (op, Int(x), Int(y)) => Int(match op {
            "+" => x.checked_add(*y)?,
            "-" => x.checked_sub(*y)?,
            "*" => x.checked_mul(*y)?,
            "//" => py_floordiv(*x, *y)?,
            "%" => py_mod(*x, *y)?,
            "**" => x.checked_pow(u32::try_from(*y).ok()?)?,
            "<<" => x.checked_shl(u32::try_from(*y).ok()?)?,
            ">>" => x.checked_shr(u32::try_from(*y).ok()?)?,
            "&" => x & y,
            "|" => x | y,
            "^" => x ^ y,
            _ => return None,
        }),
        _ => return None,
    })
}

/// `s.ljust(width, fill)` (and `rjust`, `center`, `zfill`, `expandtabs(width)`) as CPython 3.11
/// computes it (widths count code points; `center` puts the odd fill character where
/// `Objects/unicodeobject.c` does). `None` when the result would be longer than [`MAX_STR`].
fn pad(s: &str, method: &str, width: i64, fill: char) -> Option<String> {
    if method == "expandtabs" {
        let mut out = String::new();
        let mut col: i64 = 0;
        for c in s.chars() {
            match c {
                '\t' => {
                    if width > 0 {
                        let n = width - col % width;
                        if out.len() as i64 + n > MAX_STR as i64 {
                            return None;
                        }
                        out.extend(std::iter::repeat_n(' ', n as usize));
                        col += n;
                    }
                }
                '\n' | '\r' => {
                    out.push(c);
                    col = 0;
                }
                _ => {
                    out.push(c);
                    col += 1;
                }
            }
        }
        return Some(out);
    }
    let len = s.chars().count() as i64;
    if width <= len {
        return Some(s.to_string());
    }
    if width - len > MAX_STR as i64 {
        return None;
    }
    let marg = width - len;
    let (left, right) = match method {
        "ljust" => (0, marg),
        "rjust" | "zfill" => (marg, 0),
        _ => {
            let left = marg / 2 + (marg & width & 1);
            (left, marg - left)
        }
    };
    let fills = |n: i64| std::iter::repeat_n(fill, n as usize);
    let mut out = String::new();
    if method == "zfill" && (s.starts_with('+') || s.starts_with('-')) {
        let mut cs = s.chars();
        out.extend(cs.next());
        out.extend(fills(left));
        out.push_str(cs.as_str());
        return Some(out);
    }
    out.extend(fills(left));
    out.push_str(s);
    out.extend(fills(right));
    Some(out)
}
