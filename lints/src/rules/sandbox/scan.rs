//! The relevance pre-pass of the sandbox analysis: one walk over the cell that finds which parts
//! of it can produce a finding at all, so that the interpreter ([`super::interp`]) and the
//! reporting walk ([`super::check`]) only spend time there.
//!
//! # What it computes
//!
//! - **Hot positions.** Every finding of the family needs, inside the syntax node it is reported
//!   from, either a *trigger* (a dunder name, a frame or import-machinery attribute, a
//!   `format`/`format_map`/`vformat` method, a `code=` keyword, an `import` or `exec`
//!   statement, a string literal containing `_`, `\` or `%`) or an identifier of a *non-plain*
//!   name. A name is non-plain when it may hold something other than unknown objects and plain
//!   data: a module, a module member, a namespace dict, a builtin that matters (`getattr`,
//!   `eval`, `chr`, ...), a function whose results are non-plain, or a string that may contain
//!   `_` or `%`. Non-plainness is computed as a forward closure over binding sites: a name is
//!   non-plain when its unbound value is (pre-bound and allowlisted modules, modules of the
//!   reachability table, the builtins above), when it is bound by an import, or when some
//!   binding of it (assignment, augmented assignment, walrus, `for` target, default value, call
//!   argument of an in-cell function, returned value) has a hot position in its value.
//!   The positions of triggers and of identifiers of non-plain names are the hot positions; a
//!   node is hot when its byte range holds one. The reporting walk never visits a node that is
//!   not hot: no rule of the family can fire there (see the argument in `check.rs`).
//! - **Demanded names.** The reporting walk evaluates expressions only inside hot *units*
//!   (a simple statement, or one header piece of a compound statement). Every name read there is
//!   demanded, and so, transitively, is every name read by a binding of a demanded name (its
//!   value, the arguments of calls that bind a demanded parameter, the returned values of a
//!   demanded function). Only binding sites of demanded names take part in the fixpoint of the
//!   interpreter; the reporting walk only applies top-level bindings of demanded names.
//!   A cell that reads namespaces by name (`vars`, `globals`, `locals`, `__globals__`,
//!   `f_globals`, `f_locals`) demands every name.
//!
//! Both results are over-approximations; with gating off (see [`Relevance::all`]) every node is
//! hot and every name demanded, which the differential tests compare against.
//!
//! The walk is a single tree-cursor traversal; the closures are linear in the number of
//! identifiers and binding sites (each name, range and site is marked at most once).

use super::interp::{builtin, ident, Config};
use crate::rules::imports::is_allowed;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::borrow::Cow;
use std::sync::OnceLock;
use tree_sitter::{Node, TreeCursor};

/// A dense index of an interned identifier text (NFKC-normalised).
pub type NameId = u32;

/// "None" for `u32` indices.
pub const NONE: u32 = u32::MAX;

/// The interned identifier texts of a cell.
#[derive(Debug, Default)]
pub struct Names<'s> {
    map: FxHashMap<Cow<'s, str>, NameId>,
    texts: Vec<Cow<'s, str>>,
}

impl<'s> Names<'s> {
    /// The id of `text`, interning it.
    pub fn intern(&mut self, text: Cow<'s, str>) -> NameId {
        if let Some(id) = self.map.get(&*text) {
            return *id;
        }
        let id = self.texts.len() as NameId;
        self.texts.push(text.clone());
        self.map.insert(text, id);
        id
    }
    /// The id of `text`, when some identifier of the cell spells it.
    pub fn get(&self, text: &str) -> Option<NameId> {
        self.map.get(text).copied()
    }
    /// The text of a name.
    pub fn text(&self, id: NameId) -> &str {
        self.texts.get(id as usize).map(|t| &**t).unwrap_or("")
    }
    /// Number of names.
    pub fn len(&self) -> usize {
        self.texts.len()
    }
    /// True when the cell has no identifiers.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}

/// The node kinds the pre-pass and the walks distinguish, by tree-sitter kind id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum K {
    Other,
    Identifier,
    String,
    Assignment,
    AugmentedAssignment,
    NamedExpression,
    ForStatement,
    ForInClause,
    AsPattern,
    FunctionDefinition,
    Lambda,
    ReturnStatement,
    Yield,
    Call,
    ImportStatement,
    ImportFromStatement,
    ClassDefinition,
    GlobalStatement,
    NonlocalStatement,
    DecoratedDefinition,
    ExecStatement,
    DefaultParameter,
    TypedDefaultParameter,
    Module,
    Block,
    IfStatement,
    ElifClause,
    ElseClause,
    WhileStatement,
    TryStatement,
    ExceptClause,
    ExceptGroupClause,
    FinallyClause,
    WithStatement,
    MatchStatement,
    CaseClause,
    Comment,
    ParenthesizedExpression,
    Attribute,
    KeywordArgument,
    Parameters,
    LambdaParameters,
    TypedParameter,
    ListSplatPattern,
    DictionarySplatPattern,
    DottedName,
    AliasedImport,
    RelativeImport,
    KeywordPattern,
    CasePattern,
    AsPatternTarget,
    PatternList,
    TuplePattern,
    ListPattern,
    ExpressionList,
    Tuple,
    List,
    ListSplat,
}

impl K {
    /// Kinds whose children are statements or statement parts: their non-structural children
    /// are units.
    fn structural(self) -> bool {
        matches!(
            self,
            K::Module
                | K::Block
                | K::IfStatement
                | K::ElifClause
                | K::ElseClause
                | K::ForStatement
                | K::WhileStatement
                | K::TryStatement
                | K::ExceptClause
                | K::ExceptGroupClause
                | K::FinallyClause
                | K::WithStatement
                | K::MatchStatement
                | K::CaseClause
                | K::FunctionDefinition
                | K::ClassDefinition
                | K::DecoratedDefinition
        )
    }
}

const KIND_NAMES: &[(&str, K)] = &[
    ("identifier", K::Identifier),
    ("string", K::String),
    ("assignment", K::Assignment),
    ("augmented_assignment", K::AugmentedAssignment),
    ("named_expression", K::NamedExpression),
    ("for_statement", K::ForStatement),
    ("for_in_clause", K::ForInClause),
    ("as_pattern", K::AsPattern),
    ("function_definition", K::FunctionDefinition),
    ("lambda", K::Lambda),
    ("return_statement", K::ReturnStatement),
    ("yield", K::Yield),
    ("call", K::Call),
    ("import_statement", K::ImportStatement),
    ("import_from_statement", K::ImportFromStatement),
    ("class_definition", K::ClassDefinition),
    ("global_statement", K::GlobalStatement),
    ("nonlocal_statement", K::NonlocalStatement),
    ("decorated_definition", K::DecoratedDefinition),
    ("exec_statement", K::ExecStatement),
    ("default_parameter", K::DefaultParameter),
    ("typed_default_parameter", K::TypedDefaultParameter),
    ("module", K::Module),
    ("block", K::Block),
    ("if_statement", K::IfStatement),
    ("elif_clause", K::ElifClause),
    ("else_clause", K::ElseClause),
    ("while_statement", K::WhileStatement),
    ("try_statement", K::TryStatement),
    ("except_clause", K::ExceptClause),
    ("except_group_clause", K::ExceptGroupClause),
    ("finally_clause", K::FinallyClause),
    ("with_statement", K::WithStatement),
    ("match_statement", K::MatchStatement),
    ("case_clause", K::CaseClause),
    ("comment", K::Comment),
    ("parenthesized_expression", K::ParenthesizedExpression),
    ("attribute", K::Attribute),
    ("keyword_argument", K::KeywordArgument),
    ("parameters", K::Parameters),
    ("lambda_parameters", K::LambdaParameters),
    ("typed_parameter", K::TypedParameter),
    ("list_splat_pattern", K::ListSplatPattern),
    ("dictionary_splat_pattern", K::DictionarySplatPattern),
    ("dotted_name", K::DottedName),
    ("aliased_import", K::AliasedImport),
    ("relative_import", K::RelativeImport),
    ("keyword_pattern", K::KeywordPattern),
    ("case_pattern", K::CasePattern),
    ("as_pattern_target", K::AsPatternTarget),
    ("pattern_list", K::PatternList),
    ("tuple_pattern", K::TuplePattern),
    ("list_pattern", K::ListPattern),
    ("expression_list", K::ExpressionList),
    ("tuple", K::Tuple),
    ("list", K::List),
    ("list_splat", K::ListSplat),
];

/// The kind of a node (named nodes only; anonymous nodes are [`K::Other`]).
pub fn kind(node: Node) -> K {
    static TABLE: OnceLock<Vec<K>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        let n = lang.node_kind_count();
        let mut t = vec![K::Other; n + 1];
        for (id, slot) in t.iter_mut().enumerate().take(n) {
            let Ok(id16) = u16::try_from(id) else { break };
            if !lang.node_kind_is_named(id16) {
                continue;
            }
            if let Some(name) = lang.node_kind_for_id(id16) {
                if let Some((_, k)) = KIND_NAMES.iter().find(|(s, _)| *s == name) {
                    *slot = *k;
                }
            }
        }
        t
    });
    if !node.is_named() {
        return K::Other;
    }
    table
        .get(node.kind_id() as usize)
        .copied()
        .unwrap_or(K::Other)
}

/// Attribute and keyword names that are triggers whatever they are attached to: frame walks,
/// import machinery, format methods (their templates walk attributes) and the `code=` argument of
/// tools (analysed as code).
const TRIGGER_WORDS: &[&str] = &[
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
    "load_module",
    "exec_module",
    "find_module",
    "create_module",
    "format",
    "format_map",
    "vformat",
    "code",
];

/// Builtins whose value matters to some rule: reported ones, reflective ones, and the ones that
/// make strings with underscores out of plain data (`chr`, `bytes`, `bytearray`).
const HOT_BUILTINS: &[&str] = &[
    "__import__",
    "__build_class__",
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
    "getattr",
    "setattr",
    "hasattr",
    "delattr",
    "chr",
    "bytes",
    "bytearray",
];

/// Names that read namespaces by a computed name: with any of them in the cell, every name is
/// demanded.
const DYNAMIC_NAMESPACE: &[&str] = &[
    "vars",
    "globals",
    "locals",
    "__globals__",
    "f_globals",
    "f_locals",
];

/// What the pre-pass found.
#[derive(Debug, Default)]
pub struct Relevance {
    /// Every node hot and every name demanded (gating off).
    pub all: bool,
    /// Sorted byte offsets of the hot positions.
    pub hot: Vec<u32>,
    /// Demanded names (by [`NameId`]).
    pub demanded: Vec<bool>,
    /// Demanded function results (by function index).
    pub demanded_returns: Vec<bool>,
    /// Binding sites (by index in the site list) that take part in the fixpoint.
    pub needed: Vec<bool>,
}

impl Relevance {
    /// True when the byte range `[start, end)` holds a hot position.
    pub fn is_hot(&self, start: usize, end: usize) -> bool {
        if self.all {
            return true;
        }
        let i = self.hot.partition_point(|p| (*p as usize) < start);
        self.hot.get(i).is_some_and(|p| (*p as usize) < end)
    }
    /// True when any position of the cell is hot.
    pub fn any_hot(&self) -> bool {
        self.all || !self.hot.is_empty()
    }
    /// True when name `id` is demanded.
    pub fn demands(&self, id: NameId) -> bool {
        self.all || self.demanded.get(id as usize).copied().unwrap_or(false)
    }
}

/// A range of the cell whose value feeds some variables (a binding's value) or that is a unit.
#[derive(Debug, Clone)]
struct RangeRec {
    parent: u32,
    /// Variables this range's value is bound to.
    sinks: SmallVec<[u32; 2]>,
    /// The callee name of a call whose arguments this range holds (read by the binding).
    callee: u32,
    /// A lambda body: demanding it demands the lambda's result.
    lambda_body: bool,
    /// A unit (statement or statement part).
    unit: bool,
}

/// One identifier occurrence.
#[derive(Debug, Clone, Copy)]
struct Occ {
    pos: u32,
    name: NameId,
    range: u32,
    /// Read as a name (not an attribute name, keyword, parameter or import part).
    lookup: bool,
}

/// A call site whose argument range binds the parameters of cell functions.
#[derive(Debug, Clone, Copy)]
struct CallRec {
    range: u32,
    site: u32,
    /// The callee identifier, or [`NONE`].
    callee_name: u32,
    /// `node.id()` of a lambda callee, or 0.
    callee_lambda: usize,
}

/// Per-function facts the pre-pass records.
#[derive(Debug, Clone, Default)]
pub struct FuncFacts {
    /// The def name (none for lambdas).
    pub def_name: Option<NameId>,
    /// Parameter names.
    pub params: SmallVec<[NameId; 4]>,
    /// Parameter names with a default value.
    pub defaulted: SmallVec<[NameId; 2]>,
}

/// Variables are names (`0..names`) and function results (`names + f`), encoded during the walk
/// with [`RET`] set for results.
const RET: u32 = 1 << 31;

/// The raw facts of the walk, before the closures.
#[derive(Default)]
pub struct Facts<'t> {
    /// Binding sites in pre-order, with the function a `return`/`yield` belongs to.
    pub sites: Vec<(Node<'t>, Option<u32>)>,
    /// Variables each site binds (encoded with [`RET`]).
    site_targets: Vec<SmallVec<[u32; 2]>>,
    /// Functions and lambdas in pre-order.
    pub funcs: Vec<Node<'t>>,
    /// Facts per function.
    pub func_facts: Vec<FuncFacts>,
    /// `node.id()` -> function index.
    pub func_ids: FxHashMap<usize, u32>,
    /// `node.id()` of decorated function definitions.
    pub decorated: rustc_hash::FxHashSet<usize>,
    /// Every name bound in the cell with the start byte of its binding site, in source order.
    pub bound: Vec<(usize, NameId)>,
    /// Whether the cell contains an assignment expression anywhere.
    pub has_walrus: bool,
    /// Names declared `global` or `nonlocal`.
    pub global_decls: Vec<NameId>,
    ranges: Vec<RangeRec>,
    occs: Vec<Occ>,
    triggers: Vec<(u32, u32)>,
    calls: Vec<CallRec>,
    imported: Vec<NameId>,
}

struct Frame {
    k: K,
    /// Range to restore when leaving the node.
    saved_range: u32,
    /// The function the node is in (for `return`/`yield`).
    func: Option<u32>,
    /// Targets of the binding whose value child is still to come.
    targets: SmallVec<[u32; 2]>,
    /// The function index of a `function_definition`/`lambda` node, or of a parameter list.
    own_func: Option<u32>,
    /// Call record index of a `call` node.
    call: u32,
}

struct Walker<'t, 's, 'f> {
    src: &'s str,
    names: &'f mut Names<'s>,
    facts: &'f mut Facts<'t>,
    cur_range: u32,
}

impl<'t, 's, 'f> Walker<'t, 's, 'f> {
    fn name(&mut self, node: Node) -> NameId {
        let text = ident(node, self.src);
        self.names.intern(text)
    }

    fn push_range(&mut self, sinks: SmallVec<[u32; 2]>, unit: bool) -> u32 {
        let id = self.facts.ranges.len() as u32;
        self.facts.ranges.push(RangeRec {
            parent: self.cur_range,
            sinks,
            callee: NONE,
            lambda_body: false,
            unit,
        });
        self.cur_range = id;
        id
    }

    /// Names an assignment target binds, as `bind_into` binds them.
    fn targets(&mut self, target: Node, out: &mut SmallVec<[u32; 2]>, depth: u32) {
        if depth > 200 {
            return;
        }
        match kind(target) {
            K::Identifier => {
                let id = self.name(target);
                out.push(id);
            }
            K::PatternList
            | K::TuplePattern
            | K::ListPattern
            | K::ExpressionList
            | K::Tuple
            | K::List
            | K::ParenthesizedExpression
            | K::AsPatternTarget
            | K::ListSplatPattern
            | K::ListSplat => {
                let mut c = target.walk();
                for child in target.named_children(&mut c) {
                    if kind(child) != K::Comment {
                        self.targets(child, out, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    /// Every identifier under `node`, as the old `bound` list recorded them.
    fn record_bound(&mut self, start: usize, node: Node) {
        let mut cursor = node.walk();
        loop {
            let n = cursor.node();
            if kind(n) == K::Identifier {
                let id = self.name(n);
                self.facts.bound.push((start, id));
            }
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.node() == node {
                    return;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
            }
        }
    }

    fn site(&mut self, node: Node<'t>, func: Option<u32>, targets: SmallVec<[u32; 2]>) -> u32 {
        let id = self.facts.sites.len() as u32;
        self.facts.sites.push((node, func));
        self.facts.site_targets.push(targets);
        id
    }

    fn register_function(&mut self, node: Node<'t>, k: K) -> u32 {
        let id = self.facts.funcs.len() as u32;
        self.facts.funcs.push(node);
        self.facts.func_ids.insert(node.id(), id);
        let mut facts = FuncFacts::default();
        if k == K::FunctionDefinition {
            if let Some(n) = node.child_by_field_name("name") {
                facts.def_name = Some(self.name(n));
            }
        }
        if let Some(ps) = node.child_by_field_name("parameters") {
            let mut c = ps.walk();
            for p in ps.named_children(&mut c) {
                let (name_node, has_default) = match kind(p) {
                    K::Identifier => (Some(p), false),
                    K::DefaultParameter | K::TypedDefaultParameter => {
                        (p.child_by_field_name("name"), true)
                    }
                    K::TypedParameter => {
                        let inner = p.named_child(0);
                        match inner.map(kind) {
                            Some(K::ListSplatPattern | K::DictionarySplatPattern) => {
                                (inner.and_then(|i| i.named_child(0)), false)
                            }
                            _ => (inner, false),
                        }
                    }
                    K::ListSplatPattern | K::DictionarySplatPattern => (p.named_child(0), false),
                    _ => (None, false),
                };
                let Some(name_node) = name_node else { continue };
                let pid = self.name(name_node);
                facts.params.push(pid);
                if has_default {
                    facts.defaulted.push(pid);
                }
            }
        }
        self.facts.func_facts.push(facts);
        id
    }

    /// Names bound by an import statement.
    fn import_targets(&mut self, node: Node, k: K) -> SmallVec<[u32; 2]> {
        let mut out = SmallVec::new();
        match k {
            K::ImportStatement => {
                let mut c = node.walk();
                for child in node.named_children(&mut c) {
                    match kind(child) {
                        K::AliasedImport => {
                            if let Some(a) = child.child_by_field_name("alias") {
                                out.push(self.name(a));
                            }
                        }
                        K::DottedName => {
                            if let Some(first) = child.named_child(0) {
                                out.push(self.name(first));
                            }
                        }
                        _ => {}
                    }
                }
            }
            K::ImportFromStatement => {
                let mut c = node.walk();
                for child in node.children_by_field_name("name", &mut c) {
                    let n = match kind(child) {
                        K::AliasedImport => child.child_by_field_name("alias"),
                        _ => Some(child),
                    };
                    let Some(n) = n else { continue };
                    // `from m import a.b` is not Python, but a dotted name binds its text.
                    let text: String = ident(n, self.src).split_whitespace().collect();
                    out.push(self.names.intern(Cow::Owned(text)));
                }
            }
            _ => {}
        }
        out
    }

    /// Called when the cursor enters `node` (reached through `field` of the parent frame).
    fn enter(&mut self, node: Node<'t>, field: Option<&str>, stack: &mut Vec<Frame>) {
        let k = kind(node);
        let parent = stack.last();
        let pk = parent.map(|f| f.k).unwrap_or(K::Other);
        // The function a `return`/`yield` belongs to: a def's children are in it, a class's are
        // not (lambdas do not count, as in Python's grammar for `return`).
        let func = parent.and_then(|f| match f.k {
            K::FunctionDefinition => f.own_func,
            K::ClassDefinition => None,
            _ => f.func,
        });
        let saved = self.cur_range;
        // Units: the non-structural children of structural nodes.
        if !k.structural() && k != K::Comment && pk.structural() && node.is_named() {
            self.push_range(SmallVec::new(), true);
        }
        // Value ranges of the enclosing binding.
        if let Some(p) = parent {
            match (p.k, field) {
                (K::Assignment | K::AugmentedAssignment, Some("right"))
                | (K::NamedExpression, Some("value"))
                | (K::ForStatement | K::ForInClause, Some("right")) => {
                    let sinks = p.targets.clone();
                    self.push_range(sinks, false);
                }
                (K::DefaultParameter | K::TypedDefaultParameter, Some("value")) => {
                    let sinks = p.targets.clone();
                    self.push_range(sinks, false);
                }
                (K::Lambda, Some("body")) => {
                    if let Some(f) = p.own_func {
                        let r = self.push_range(SmallVec::from_slice(&[RET | f]), false);
                        self.facts.ranges[r as usize].lambda_body = true;
                    }
                }
                (K::Call, Some("arguments")) => {
                    let r = self.push_range(SmallVec::new(), false);
                    if let Some(c) = self.facts.calls.get_mut(p.call as usize) {
                        c.range = r;
                    }
                }
                _ => {}
            }
        }
        let mut frame = Frame {
            k,
            saved_range: saved,
            func,
            targets: SmallVec::new(),
            own_func: None,
            call: NONE,
        };
        match k {
            K::Identifier => {
                let name = self.name(node);
                let lookup = !name_only(pk, field);
                self.facts.occs.push(Occ {
                    pos: node.start_byte() as u32,
                    name,
                    range: self.cur_range,
                    lookup,
                });
            }
            K::String => {
                let t = crate::parse::text(node, self.src);
                if t.bytes().any(|b| matches!(b, b'_' | b'\\' | b'%')) {
                    self.facts
                        .triggers
                        .push((node.start_byte() as u32, self.cur_range));
                }
            }
            K::ExecStatement => {
                self.facts
                    .triggers
                    .push((node.start_byte() as u32, self.cur_range));
            }
            K::Assignment | K::AugmentedAssignment | K::ForStatement | K::ForInClause => {
                let mut t = SmallVec::new();
                if let Some(left) = node.child_by_field_name("left") {
                    if k == K::AugmentedAssignment {
                        if kind(left) == K::Identifier {
                            t.push(self.name(left));
                        }
                    } else {
                        self.targets(left, &mut t, 0);
                    }
                    self.record_bound(node.start_byte(), left);
                }
                self.site(node, func, t.clone());
                frame.targets = t;
            }
            K::NamedExpression => {
                self.facts.has_walrus = true;
                let mut t = SmallVec::new();
                if let Some(n) = node.child_by_field_name("name") {
                    self.targets(n, &mut t, 0);
                    self.record_bound(node.start_byte(), n);
                }
                self.site(node, func, t.clone());
                frame.targets = t;
            }
            K::AsPattern => {
                let mut t = SmallVec::new();
                if let Some(a) = node.child_by_field_name("alias") {
                    self.targets(a, &mut t, 0);
                    self.record_bound(node.start_byte(), a);
                }
                self.site(node, func, t);
            }
            K::FunctionDefinition | K::Lambda => {
                let f = self.register_function(node, k);
                let facts = self.facts.func_facts[f as usize].clone();
                let mut t: SmallVec<[u32; 2]> = SmallVec::new();
                if let Some(d) = facts.def_name {
                    t.push(d);
                } else {
                    t.push(RET | f);
                }
                t.extend(facts.defaulted.iter().copied());
                if k == K::FunctionDefinition {
                    if let Some(n) = node.child_by_field_name("name") {
                        self.record_bound(node.start_byte(), n);
                    }
                }
                self.site(node, func, t);
                frame.own_func = Some(f);
            }
            K::Parameters | K::LambdaParameters => {
                frame.own_func = parent.and_then(|p| p.own_func);
            }
            K::DefaultParameter | K::TypedDefaultParameter => {
                if let Some(n) = node.child_by_field_name("name") {
                    frame.targets.push(self.name(n));
                }
            }
            K::ReturnStatement => {
                let t: SmallVec<[u32; 2]> = func.map(|f| RET | f).into_iter().collect();
                self.site(node, func, t.clone());
                // The returned expression is the statement's only content.
                self.push_range(t, false);
            }
            K::Yield => {
                let t = func.map(|f| RET | f).into_iter().collect();
                self.site(node, func, t);
            }
            K::Call => {
                let site = self.site(node, func, SmallVec::new());
                let mut rec = CallRec {
                    range: NONE,
                    site,
                    callee_name: NONE,
                    callee_lambda: 0,
                };
                if let Some(callee) = node.child_by_field_name("function") {
                    let callee = super::interp::unparen(callee);
                    match kind(callee) {
                        K::Identifier => rec.callee_name = self.name(callee),
                        K::Lambda => rec.callee_lambda = callee.id(),
                        _ => {}
                    }
                }
                frame.call = self.facts.calls.len() as u32;
                self.facts.calls.push(rec);
            }
            K::ImportStatement | K::ImportFromStatement => {
                let t = self.import_targets(node, k);
                self.facts.imported.extend(t.iter().copied());
                self.record_bound(node.start_byte(), node);
                self.site(node, func, t);
                self.facts
                    .triggers
                    .push((node.start_byte() as u32, self.cur_range));
            }
            K::ClassDefinition => {
                let mut t = SmallVec::new();
                if let Some(n) = node.child_by_field_name("name") {
                    t.push(self.name(n));
                    self.record_bound(node.start_byte(), n);
                }
                self.site(node, func, t);
            }
            K::GlobalStatement | K::NonlocalStatement => {
                let mut c = node.walk();
                let kids: Vec<Node> = node.named_children(&mut c).collect();
                for n in kids {
                    if kind(n) == K::Identifier {
                        let id = self.name(n);
                        self.facts.global_decls.push(id);
                    }
                }
            }
            K::DecoratedDefinition => {
                if let Some(d) = node.child_by_field_name("definition") {
                    if kind(d) == K::FunctionDefinition {
                        self.facts.decorated.insert(d.id());
                    }
                }
            }
            _ => {}
        }
        stack.push(frame);
    }
}

/// True for an identifier that names something rather than reading it (same positions as the
/// reporting walk's `name_only`).
fn name_only(pk: K, field: Option<&str>) -> bool {
    match pk {
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
    }
}

/// Walks the cell once and records the facts the interpreter and the closures need.
pub fn collect<'t, 's>(root: Node<'t>, src: &'s str, names: &mut Names<'s>) -> Facts<'t> {
    let mut facts = Facts::default();
    let mut w = Walker {
        src,
        names,
        facts: &mut facts,
        cur_range: NONE,
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut cursor: TreeCursor<'t> = root.walk();
    loop {
        let node = cursor.node();
        let field = cursor.field_name();
        w.enter(node, field, &mut stack);
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if let Some(f) = stack.pop() {
                w.cur_range = f.saved_range;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                // Back at the root: everything has been left.
                return facts;
            }
        }
    }
}

impl Facts<'_> {
    /// The variables a site binds, decoded (`names + f` for function results).
    pub fn site_vars(&self, site: usize, n_names: usize) -> impl Iterator<Item = usize> + '_ {
        self.site_targets
            .get(site)
            .into_iter()
            .flatten()
            .map(move |v| decode(*v, n_names))
    }
}

fn decode(v: u32, n_names: usize) -> usize {
    if v & RET != 0 {
        n_names + (v & !RET) as usize
    } else {
        v as usize
    }
}

/// True when an unbound `name` already has a value that matters (see [`Relevance`]).
fn default_interesting(name: &str, cfg: &Config) -> bool {
    name == "__builtins__"
        || name == "__builtin__"
        || cfg.prebound.contains(name)
        || (builtin(name).is_some() && HOT_BUILTINS.contains(&name))
        || is_allowed(name, cfg.allow)
        || cfg.table.family(name).is_some()
        || cfg.table.modules.contains_key(name)
}

/// Compressed adjacency lists.
struct Csr {
    offsets: Vec<u32>,
    items: Vec<u32>,
}

impl Csr {
    fn build(n: usize, pairs: impl Iterator<Item = (usize, u32)> + Clone) -> Csr {
        let mut offsets = vec![0u32; n + 1];
        for (k, _) in pairs.clone() {
            offsets[k + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut items = vec![0u32; offsets[n] as usize];
        for (k, v) in pairs {
            items[fill[k] as usize] = v;
            fill[k] += 1;
        }
        Csr { offsets, items }
    }
    fn get(&self, k: usize) -> &[u32] {
        match (self.offsets.get(k), self.offsets.get(k + 1)) {
            (Some(a), Some(b)) => &self.items[*a as usize..*b as usize],
            _ => &[],
        }
    }
}

/// Computes hot positions, demanded names and needed sites from the facts of the walk. With
/// `gate` false, everything is hot, demanded and needed.
pub fn relevance(facts: &mut Facts, names: &Names, cfg: &Config, gate: bool) -> Relevance {
    let n_names = names.len();
    let n_funcs = facts.funcs.len();
    let n_vars = n_names + n_funcs;
    let n_sites = facts.sites.len();
    if !gate {
        return Relevance {
            all: true,
            hot: Vec::new(),
            demanded: vec![true; n_names],
            demanded_returns: vec![true; n_funcs],
            needed: vec![true; n_sites],
        };
    }
    // Resolve the parameters a call may bind: functions named like the callee, or every function
    // when the callee name is bound otherwise too (an alias may hold any function).
    let mut defs_by_name: FxHashMap<NameId, SmallVec<[u32; 2]>> = FxHashMap::default();
    for (f, ff) in facts.func_facts.iter().enumerate() {
        if let Some(d) = ff.def_name {
            defs_by_name.entry(d).or_default().push(f as u32);
        }
    }
    // Names that may hold a function other than their own defs: bound by a value (assignment,
    // augmented assignment, walrus, `for` target) or a parameter.
    let mut otherwise_bound = vec![false; n_names];
    for (s, targets) in facts.site_targets.iter().enumerate() {
        let binds_value = facts.sites.get(s).is_some_and(|(n, _)| {
            matches!(
                kind(*n),
                K::Assignment
                    | K::AugmentedAssignment
                    | K::NamedExpression
                    | K::ForStatement
                    | K::ForInClause
            )
        });
        if binds_value {
            for t in targets {
                if t & RET == 0 {
                    otherwise_bound[*t as usize] = true;
                }
            }
        }
    }
    for ff in &facts.func_facts {
        for p in &ff.params {
            otherwise_bound[*p as usize] = true;
        }
    }
    let all_params: SmallVec<[u32; 2]> = facts
        .func_facts
        .iter()
        .flat_map(|f| f.params.iter().copied())
        .collect();
    for c in facts.calls.clone() {
        let mut sinks: SmallVec<[u32; 2]> = SmallVec::new();
        if c.callee_lambda != 0 {
            if let Some(f) = facts.func_ids.get(&c.callee_lambda) {
                sinks.extend(facts.func_facts[*f as usize].params.iter().copied());
            }
        } else if c.callee_name != NONE {
            if otherwise_bound
                .get(c.callee_name as usize)
                .copied()
                .unwrap_or(false)
            {
                sinks = all_params.clone();
            } else if let Some(fs) = defs_by_name.get(&c.callee_name) {
                for f in fs {
                    sinks.extend(facts.func_facts[*f as usize].params.iter().copied());
                }
            }
        }
        if sinks.is_empty() {
            continue;
        }
        if let Some(r) = facts.ranges.get_mut(c.range as usize) {
            r.sinks = sinks.clone();
            r.callee = c.callee_name;
        }
        if let Some(t) = facts.site_targets.get_mut(c.site as usize) {
            *t = sinks;
        }
    }

    // ---- closure A: non-plain variables -------------------------------------------------------
    let n_ranges = facts.ranges.len();
    let occ_by_name = Csr::build(
        n_names,
        facts
            .occs
            .iter()
            .enumerate()
            .map(|(i, o)| (o.name as usize, i as u32)),
    );
    let mut nonplain = vec![false; n_vars];
    let mut range_hot = vec![false; n_ranges];
    let mut queue: Vec<usize> = Vec::new();
    let mark = |v: usize, nonplain: &mut Vec<bool>, queue: &mut Vec<usize>| {
        if !nonplain[v] {
            nonplain[v] = true;
            queue.push(v);
        }
    };
    for id in 0..n_names {
        let t = names.text(id as NameId);
        if t.contains("__") || TRIGGER_WORDS.contains(&t) || default_interesting(t, cfg) {
            mark(id, &mut nonplain, &mut queue);
        }
    }
    for id in facts.imported.clone() {
        mark(id as usize, &mut nonplain, &mut queue);
    }
    let ranges = &facts.ranges;
    let heat =
        |r: u32, range_hot: &mut Vec<bool>, nonplain: &mut Vec<bool>, queue: &mut Vec<usize>| {
            let mut r = r;
            while r != NONE && !range_hot[r as usize] {
                range_hot[r as usize] = true;
                for s in &ranges[r as usize].sinks {
                    let v = decode(*s, n_names);
                    if !nonplain[v] {
                        nonplain[v] = true;
                        queue.push(v);
                    }
                }
                r = ranges[r as usize].parent;
            }
        };
    for (_, r) in &facts.triggers {
        heat(*r, &mut range_hot, &mut nonplain, &mut queue);
    }
    while let Some(v) = queue.pop() {
        if v < n_names {
            for o in occ_by_name.get(v) {
                let r = facts.occs[*o as usize].range;
                heat(r, &mut range_hot, &mut nonplain, &mut queue);
            }
        } else if let Some(d) = facts.func_facts[v - n_names].def_name {
            if !nonplain[d as usize] {
                nonplain[d as usize] = true;
                queue.push(d as usize);
            }
        }
    }
    // Hot positions: triggers and identifiers of non-plain names, merged in order.
    let mut hot: Vec<u32> = Vec::with_capacity(facts.triggers.len());
    let mut ti = facts.triggers.iter().map(|(p, _)| *p).peekable();
    for o in &facts.occs {
        if !nonplain[o.name as usize] {
            continue;
        }
        while let Some(t) = ti.next_if(|t| *t <= o.pos) {
            hot.push(t);
        }
        hot.push(o.pos);
    }
    hot.extend(ti);
    if hot.is_empty() {
        return Relevance {
            all: false,
            hot,
            demanded: vec![false; n_names],
            demanded_returns: vec![false; n_funcs],
            needed: vec![false; n_sites],
        };
    }

    // ---- closure B: demanded variables ----------------------------------------------------------
    let dynamic = DYNAMIC_NAMESPACE
        .iter()
        .filter_map(|n| names.get(n))
        .any(|id| !occ_by_name.get(id as usize).is_empty());
    let mut demanded = vec![dynamic; n_vars];
    if !dynamic {
        let var_ranges = Csr::build(
            n_vars,
            facts.ranges.iter().enumerate().flat_map(|(r, rec)| {
                rec.sinks
                    .iter()
                    .map(move |s| (decode(*s, n_names), r as u32))
            }),
        );
        let children = Csr::build(
            n_ranges,
            facts
                .ranges
                .iter()
                .enumerate()
                .filter(|(_, rec)| rec.parent != NONE)
                .map(|(r, rec)| (rec.parent as usize, r as u32)),
        );
        let direct = Csr::build(
            n_ranges,
            facts
                .occs
                .iter()
                .filter(|o| o.lookup && o.range != NONE)
                .map(|o| (o.range as usize, o.name)),
        );
        let mut range_dem = vec![false; n_ranges];
        let mut rstack: Vec<u32> = (0..n_ranges as u32)
            .filter(|r| facts.ranges[*r as usize].unit && range_hot[*r as usize])
            .collect();
        let mut vstack: Vec<usize> = Vec::new();
        loop {
            if let Some(r) = rstack.pop() {
                if range_dem[r as usize] {
                    continue;
                }
                range_dem[r as usize] = true;
                let rec = &facts.ranges[r as usize];
                for n in direct.get(r as usize) {
                    vstack.push(*n as usize);
                }
                if rec.lambda_body {
                    vstack.extend(rec.sinks.iter().map(|s| decode(*s, n_names)));
                }
                if rec.callee != NONE {
                    vstack.push(rec.callee as usize);
                }
                rstack.extend_from_slice(children.get(r as usize));
            } else if let Some(v) = vstack.pop() {
                if demanded[v] {
                    continue;
                }
                demanded[v] = true;
                rstack.extend_from_slice(var_ranges.get(v));
                if v < n_names {
                    if let Some(fs) = defs_by_name.get(&(v as NameId)) {
                        vstack.extend(fs.iter().map(|f| n_names + *f as usize));
                    }
                }
            } else {
                break;
            }
        }
    }
    let needed: Vec<bool> = (0..n_sites)
        .map(|s| facts.site_vars(s, n_names).any(|v| demanded[v]))
        .collect();
    let demanded_returns = demanded[n_names..].to_vec();
    demanded.truncate(n_names);
    Relevance {
        all: false,
        hot,
        demanded,
        demanded_returns,
        needed,
    }
}
