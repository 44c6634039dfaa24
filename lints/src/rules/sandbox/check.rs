//! The reporting walk: visits the cell's statements in order with a flow-sensitive environment
//! for the top level (function bodies, lambdas, comprehensions and class bodies use the merged
//! bindings), and reports every escape it finds.

use super::field::{FieldChild, F};
use super::interp::{
    bind_into, call_args, first_named, ident, unknown_host_attr, unparen, Bindings, Env, Escape,
    Interp,
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

/// Dunder attributes whose *read* is ordinary code (`type(e).__name__`, `hasattr(x,
/// "__iter__")`, `iter(xs).__next__`): they return strings or bound protocol methods, and every
/// escape from them needs a further dunder, which is reported. Stores, deletions and augmented
/// assignments of these are still reported.
pub const BENIGN_DUNDER_READS: &[&str] = &[
    "__name__",
    "__qualname__",
    "__doc__",
    "__version__",
    "__next__",
    "__iter__",
    "__len__",
    "__contains__",
    "__aiter__",
    "__anext__",
];

/// Attributes of frames, tracebacks, generators and coroutines that walk execution frames.
pub const FRAME_ATTRS: &[&str] = &[
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

/// Modules that reach the host, with what they give (SBX006 when an allowlist lets them in).
const HOST_MODULES: &[(&str, &str)] = &[
    ("os", "processes, files and the environment"),
    ("posix", "processes, files and the environment"),
    ("nt", "processes, files and the environment"),
    (
        "sys",
        "every loaded module (`sys.modules`) and the interpreter's frames",
    ),
    ("subprocess", "shell commands"),
    ("_posixsubprocess", "shell commands"),
    ("socket", "the network"),
    ("_socket", "the network"),
    ("builtins", "`eval`, `exec`, `open` and `__import__`"),
    ("importlib", "imports by name"),
    ("_imp", "imports by name"),
    ("imp", "imports by name"),
    ("pkgutil", "imports by name"),
    ("runpy", "running modules and files"),
    ("zipimport", "imports by name"),
    ("inspect", "frames and the globals of any function"),
    (
        "ctypes",
        "native code (`ctypes.CDLL(\"libc.so.6\").system`)",
    ),
    ("_ctypes", "native code"),
    ("cffi", "native code"),
    ("mmap", "raw memory and files"),
    ("shutil", "files and shell-like operations"),
    ("pathlib", "files"),
    ("io", "files (`io.open`)"),
    ("_io", "files"),
    ("codecs", "files (`codecs.open`)"),
    ("glob", "the file system"),
    ("tempfile", "files"),
    ("shelve", "files and pickle"),
    ("sqlite3", "database files"),
    ("pickle", "arbitrary code on load"),
    ("_pickle", "arbitrary code on load"),
    ("marshal", "code objects"),
    ("code", "an interactive interpreter"),
    ("codeop", "compiling code"),
    ("pty", "a shell on a terminal"),
    ("multiprocessing", "processes"),
    ("signal", "signal handlers"),
    ("gc", "every live object (`gc.get_objects`)"),
    ("pdb", "a debugger"),
    ("distutils", "the build system and shell commands"),
    ("venv", "environments and shell commands"),
    ("webbrowser", "launching programs"),
    ("urllib", "the network"),
    ("http", "the network"),
    ("ftplib", "the network"),
    ("smtplib", "the network"),
    ("telnetlib", "the network"),
    (
        "requests",
        "the network (server-side request forgery, CVE-2026-2654)",
    ),
    ("httpx", "the network"),
    ("aiohttp", "the network"),
    ("urllib3", "the network"),
];

/// What an allowlist entry's module gives when it reaches the host: the module itself, or its
/// root package, unless the dotted name is an alias of a harmless module (`os.path` is
/// `posixpath`).
pub fn host_module_entry(module: &str) -> Option<&'static str> {
    let real = super::reach::table().real_name(module);
    if real != module {
        return host_module(&real);
    }
    host_module(module)
}

/// What a host-reaching module gives, when `module` (or its root) is one.
pub fn host_module(module: &str) -> Option<&'static str> {
    let root = module.split('.').next().unwrap_or(module);
    HOST_MODULES
        .iter()
        .find(|(m, _)| *m == module || *m == root)
        .map(|(_, why)| *why)
}

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
    /// Names of dicts that got a dunder-method key by item assignment (`ns["__del__"] = f`),
    /// with that key: a class namespace for a three-argument `type(...)`.
    dunder_keyed: Vec<(String, String)>,
    /// Keyword patterns (by node id) -> their `match` subject and the keywords above them.
    kw_subjects: rustc_hash::FxHashMap<usize, (Option<Node<'t>>, Vec<String>)>,
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
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "tuple"
            | "list"
            | "expression_list"
            | "parenthesized_expression"
            | "list_splat_pattern"
            | "list_splat"
            | "as_pattern_target" => {
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
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind_name() != "comment")
        .collect()
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
    let name_only = ck == K::Identifier
        && match pk {
            K::Attribute => field == Some("attribute"),
            K::KeywordArgument => field == Some("name"),
            K::FunctionDefinition
            | K::ClassDefinition
            | K::DefaultParameter
            | K::TypedDefaultParameter
            | K::NamedExpression => field == Some("name"),
            K::Parameters
            | K::LambdaParameters
            | K::TypedParameter
            | K::ListSplatPattern
            | K::DictionarySplatPattern
            | K::DottedName
            | K::AliasedImport
            | K::ImportStatement
            | K::ImportFromStatement
            | K::RelativeImport
            | K::GlobalStatement
            | K::NonlocalStatement
            | K::KeywordPattern
            | K::CasePattern
            | K::AsPatternTarget => true,
            _ => false,
        };
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
        "traceback" => matches!(name, "walk_stack" | "walk_tb"),
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
            dunder_keyed: Vec::new(),
            kw_subjects: Default::default(),
        }
    }

    /// Runs the walk from the module node and returns the findings, in discovery order.
    pub fn run(mut self, root: Node<'t>) -> Vec<Finding> {
        if !self.it.relevance.any_hot() {
            // Nothing in the cell can produce a finding (see `scan`).
            return Vec::new();
        }
        let mut flow = Bindings::new(self.it.names.len());
        for g in self.it.global_decls.clone() {
            if let Some(v) = self.it.globals.get(g) {
                let v = v.clone();
                flow.0[g as usize] = v;
            }
        }
        self.run_block(root, &mut flow, true, 0);
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
            "if_statement" | "for_statement" | "while_statement" | "try_statement"
            | "with_statement" | "match_statement" => {
                let names: Vec<NameId> = self
                    .it
                    .names_bound_in(stmt)
                    .filter(|n| self.it.demands(*n))
                    .collect();
                for n in names {
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
        if node.kind_name() == "for_statement" {
            if let Some(r) = node.field(F::Right) {
                self.check_tree(r, Some(flow), NodeCtx::ROOT);
                if let Some(l) = node.field(F::Left) {
                    self.check_tree(l, Some(flow), NodeCtx::STORE);
                    if self.binds_demanded(l) {
                        let v = elements(&self.it.eval(r, &Env::Flow(flow), 0));
                        self.bind_flow(flow, l, &v, false);
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
            match child.kind_name() {
                "block" => self.run_block(child, flow, false, depth + 1),
                "elif_clause"
                | "else_clause"
                | "except_clause"
                | "except_group_clause"
                | "finally_clause"
                | "case_clause" => self.run_parts(child, flow, depth + 1),
                _ => {
                    self.check_tree(child, Some(flow), NodeCtx::ROOT);
                    self.bind_walrus(child, flow);
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
    }

    fn run_def(&mut self, def: Node<'t>, flow: &mut Bindings, strong: bool, decorated: bool) {
        self.check_def_name(def);
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
        if let Some(b) = class.field(F::Body) {
            self.check_tree(b, None, NodeCtx::CLASS_BODY);
            self.check_class_bindings(b);
        }
        if let Some(name) = class.field(F::Name) {
            self.bind_flow(flow, name, &VSet::unknown(), strong);
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
                "assignment" => {
                    if let Some(l) = n.field(F::Left) {
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

    fn bind_walrus(&mut self, node: Node<'t>, flow: &mut Bindings) {
        if !self.it.has_walrus {
            return;
        }
        for n in parse::walk(node) {
            if n.kind_name() == "named_expression" {
                if let (Some(name), Some(value)) = (n.field(F::Name), n.field(F::Value)) {
                    if self.binds_demanded(name) {
                        let v = self.it.eval(value, &Env::Flow(flow), 0);
                        self.bind_flow(flow, name, &v, false);
                    }
                }
            }
        }
    }

    fn apply_bindings(&mut self, stmt: Node<'t>, flow: &mut Bindings, strong: bool) {
        self.bind_walrus(stmt, flow);
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
        let mut stack: Vec<(Node<'t>, K, bool, NodeCtx)> =
            vec![(node, kind(node), flow.is_none(), start)];
        while let Some((n, nk, global, nctx)) = stack.pop() {
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
            let mut kids = Children::new(n);
            while let Some((c, field)) = kids.next(with_field) {
                if c.is_named() && self.it.is_hot(c) {
                    let ck = kind(c);
                    if ck != K::Comment {
                        let cctx = child_ctx(nk, &nctx, ck, field);
                        stack.push((c, ck, inner_global, cctx));
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
            K::Call => self.check_call(node, env, nctx),
            K::FunctionDefinition => self.check_def_name(node),
            K::Assignment => self.check_assignment(node, env, nctx),
            K::List | K::Tuple | K::Set if nctx.ctx == Ctx::Load => {
                for item in named(node) {
                    self.check_escape(item, env, "stored in a container");
                }
            }
            K::Dictionary => {
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
            K::DottedName if nctx.pattern && named(node).len() > 1 => {
                self.check_pattern_name(node, env);
            }
            K::MatchStatement => self.record_match(node),
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

    // ---- attributes -------------------------------------------------------------------------

    fn check_attribute(&mut self, node: Node<'t>, env: &Env, nctx: &NodeCtx) {
        let (Some(obj), Some(attr)) = (node.field(F::Object), node.field(F::Attribute)) else {
            return;
        };
        let name = ident(attr, self.it.src);
        let name = &*name;
        let ctx = nctx.ctx;
        let arange = parse::range(attr);
        // Calling `__init__`, `__repr__` or `__str__` directly (`super().__init__(...)`) is
        // ordinary code (smolagents' `ALLOWED_DUNDER_METHODS`).
        let allowed_call =
            ctx == Ctx::Load && ALLOWED_DUNDER_METHODS.contains(&name) && nctx.callee;
        if is_dunder(name)
            && !allowed_call
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
        if FRAME_ATTRS.contains(&name) {
            self.report(
                &FRAME_WALK,
                arange,
                format!("`{name}` walks execution frames: frames expose the globals and builtins of the code that runs the cell"),
                None,
            );
        }
        let objv = self.it.eval(obj, env, 0);
        if objv.strs().next().is_some() && matches!(name, "format" | "format_map") {
            self.check_format(obj, &objv);
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

    /// Findings for reading attribute `name` of a value that may be any of `objv` (an attribute
    /// expression, a keyword pattern, a format field, an `attrgetter` path): module escapes and
    /// denied members on module values, and, when the receiver may be a value the analysis
    /// cannot resolve, an attribute that names a host-reaching module attribute of some module
    /// (see [`unknown_host_attr`]). `shown` is the receiver's text; empty for a store, where
    /// only known modules are checked.
    fn attr_findings(&mut self, objv: &VSet, name: &str, range: TextRange, shown: &str) {
        let mut opaque = false;
        for v in objv.iter() {
            match v {
                Val::Module(m) => {
                    let (res, esc) = self.it.module_step(m, name);
                    self.module_findings(m, name, &res, esc, range);
                }
                Val::Member(p) if !is_dunder(name) => {
                    let path = format!("{p}.{name}");
                    self.deny_check(&path, range);
                    opaque = true;
                }
                Val::Unknown | Val::Func(_) => opaque = true,
                _ => {}
            }
        }
        if !opaque || shown.is_empty() {
            return;
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
                    "case_pattern" | "union_pattern" | "as_pattern" | "class_pattern" => {
                        stack.push((c, path.clone()));
                    }
                    _ => {}
                }
            }
        }
    }

    /// What the subject of the class pattern holding keyword pattern `kw` may be, and its text
    /// (see [`Self::record_match`]); unknown when the pattern sits in a sequence or mapping
    /// pattern or the statement has several subjects.
    fn pattern_subject(&self, kw: Node<'t>, env: &Env) -> (VSet, String) {
        let Some((subject, path)) = self.kw_subjects.get(&kw.id()) else {
            return (VSet::unknown(), "the match subject".to_string());
        };
        let (mut v, mut shown) = match subject {
            Some(s) => (self.it.eval(*s, env, 0), short(self.text(*s))),
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

    /// Reports `path` when a deny-members entry matches it; true when it did.
    fn deny_check(&mut self, path: &str, range: TextRange) -> bool {
        let hit = self.deny.matches(path, self.it.cfg.table);
        match hit {
            Some(entry) => {
                let shown = path.replace("asyncio.AbstractEventLoop", "asyncio event loop");
                self.report(
                    &DANGEROUS_MEMBER,
                    range,
                    format!("`{shown}` is a denied member of an allowed module (`{entry}`)"),
                    Some("It reaches processes, files or the network; see `[lint.imports] deny-members`".into()),
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
                "type" if pos.len() == 3 => self.check_type_dict(pos[2], env),
                _ => {}
            }
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
        // str.format / format_map / Formatter().format / vformat: the template's fields walk
        // attributes and items of the arguments.
        let mut format_handled = false;
        if inner_callee.kind_name() == "attribute" {
            if let (Some(obj), Some(attr)) = (
                inner_callee.field(F::Object),
                inner_callee.field(F::Attribute),
            ) {
                let m = ident(attr, self.it.src).into_owned();
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
        // fm(t, d)`): its fields are checked on unknown arguments.
        if !format_handled && cv.only_unknown() && !self.is_namespace_callee(inner_callee) {
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
                    if is_dunder(&s) && !BENIGN_DUNDER_READS.contains(&s.as_str()) {
                        self.report(
                            &DUNDER_ACCESS,
                            parse::range(a),
                            format!("Dunder name `{s}` passed to `{}`, which cellguard cannot resolve", short(self.text(callee))),
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
            let tree = parse::parse(&code, None);
            let it = Interp::with_gate(
                tree.root_node(),
                &code,
                super::interp::Config { ..self.it.cfg },
                !self.it.relevance.all,
            );
            let mut inner = Sbx::new(it, self.deny_entries, self.namespace_names);
            inner.nesting = self.nesting + 1;
            for f in inner.run(tree.root_node()) {
                self.report(
                    f.rule,
                    parse::range(arg),
                    format!("In code passed to {label}: {}", f.message),
                    f.help,
                );
            }
        }
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
        let names = self.it.eval(pos[1], env, 0);
        let objs = self.it.eval(pos[0], env, 0);
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
                if b == "setattr" && is_method_dunder(&s) {
                    self.report(
                        &DUNDER_METHOD_DEFINITION,
                        range,
                        format!("`setattr` installs dunder method `{s}`"),
                        Some(dunder_method_help()),
                    );
                }
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
    /// than the defaults are SBX002; names that cannot be folded are SBX004.
    fn check_wrapper_names(
        &mut self,
        func: &str,
        pos: &[Node<'t>],
        kws: &[(String, Node<'t>)],
        env: &Env,
    ) {
        let skip = if func == "update_wrapper" { 2 } else { 1 };
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
                }
            }
            // A display of names with one that cannot be folded (`(name,)`).
            if v.iter()
                .any(|x| matches!(x, Val::Seq(items) if items.iter().any(|i| i.has_unknown())))
            {
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

    fn check_type_dict(&mut self, dict: Node<'t>, env: &Env) {
        let inner = unparen(dict);
        // `type("A", (), dict(__del__=f))`, `collections.OrderedDict(__del__=f)`.
        if inner.kind_name() == "call" {
            let (_, kws, _) = call_args(inner.field(F::Arguments), self.it.src);
            for (k, v) in kws {
                if is_method_dunder(&k) {
                    self.report(
                        &DUNDER_METHOD_DEFINITION,
                        parse::range(v),
                        format!("`type(...)` defines dunder method `{k}` on a new class"),
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
                    format!("`type(...)` defines dunder method `{k}` on a new class (set as an item of `{name}`)"),
                    Some(dunder_method_help()),
                );
            }
        }
        let v = self.it.eval(dict, env, 0);
        for d in v.iter() {
            if let Val::Dict(pairs) = d {
                for (k, _) in pairs.iter() {
                    for s in k.strs() {
                        if is_dunder(s) && !ALLOWED_DUNDER_METHODS.contains(&s) {
                            let s = s.to_string();
                            self.report(
                                &DUNDER_METHOD_DEFINITION,
                                parse::range(dict),
                                format!("`type(...)` defines dunder method `{s}` on a new class"),
                                Some(dunder_method_help()),
                            );
                        }
                    }
                }
            }
        }
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
                let dunders: Vec<&str> = attrs
                    .iter()
                    .copied()
                    .filter(|a| is_dunder(a) && !BENIGN_DUNDER_READS.contains(a))
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

    fn check_def_name(&mut self, def: Node<'t>) {
        if let Some(name) = def.field(F::Name) {
            let n = ident(name, self.it.src);
            let n = &*n;
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
        // Reflective builtins stored through attributes or subscripts.
        if let Some(r) = right {
            if matches!(unparen(left).kind_name(), "attribute" | "subscript") {
                self.check_escape(r, env, "stored in an attribute or item");
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
                    self.builtin_refs(name_node, &res, &name, false);
                }
            }
            _ => {}
        }
    }

    /// SBX006 for an import of `module` that the allowlist lets in. `binds_root` is true for a
    /// plain `import a.b`, which binds (and so hands out) the root package `a`.
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
