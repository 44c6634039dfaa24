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

use super::field::{FieldChild, F};
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
    /// An annotation (`x: T`, `-> T`).
    Type,
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
    ClassPattern,
    UnionPattern,
    DictPattern,
    CasePattern,
    AsPatternTarget,
    PatternList,
    TuplePattern,
    ListPattern,
    ExpressionList,
    Tuple,
    List,
    ListSplat,
    DeleteStatement,
    ExpressionStatement,
    Subscript,
    Set,
    Dictionary,
    ListComprehension,
    GeneratorExpression,
    SetComprehension,
    DictionaryComprehension,
    BinaryOperator,
    BooleanOperator,
    ConditionalExpression,
    UnaryOperator,
    ConcatenatedString,
    Integer,
    ArgumentList,
    DictionarySplat,
    Pair,
    True,
    False,
    /// tree-sitter's `ERROR` node (error recovery).
    Error,
}

impl K {
    /// Kinds whose children the pre-pass tells apart by field name.
    fn uses_fields(self) -> bool {
        matches!(
            self,
            K::Assignment
                | K::AugmentedAssignment
                | K::NamedExpression
                | K::ForStatement
                | K::ForInClause
                | K::DefaultParameter
                | K::TypedDefaultParameter
                | K::Lambda
                | K::Call
                | K::Attribute
                | K::KeywordArgument
                | K::FunctionDefinition
                | K::ClassDefinition
                | K::Subscript
                | K::ListComprehension
                | K::SetComprehension
                | K::GeneratorExpression
                | K::DictionaryComprehension
                | K::MatchStatement
        )
    }

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
    ("type", K::Type),
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
    ("class_pattern", K::ClassPattern),
    ("union_pattern", K::UnionPattern),
    ("dict_pattern", K::DictPattern),
    ("case_pattern", K::CasePattern),
    ("as_pattern_target", K::AsPatternTarget),
    ("pattern_list", K::PatternList),
    ("tuple_pattern", K::TuplePattern),
    ("list_pattern", K::ListPattern),
    ("expression_list", K::ExpressionList),
    ("tuple", K::Tuple),
    ("list", K::List),
    ("list_splat", K::ListSplat),
    ("delete_statement", K::DeleteStatement),
    ("expression_statement", K::ExpressionStatement),
    ("subscript", K::Subscript),
    ("set", K::Set),
    ("dictionary", K::Dictionary),
    ("list_comprehension", K::ListComprehension),
    ("generator_expression", K::GeneratorExpression),
    ("set_comprehension", K::SetComprehension),
    ("dictionary_comprehension", K::DictionaryComprehension),
    ("binary_operator", K::BinaryOperator),
    ("boolean_operator", K::BooleanOperator),
    ("conditional_expression", K::ConditionalExpression),
    ("unary_operator", K::UnaryOperator),
    ("concatenated_string", K::ConcatenatedString),
    ("integer", K::Integer),
    ("argument_list", K::ArgumentList),
    ("pair", K::Pair),
    ("dictionary_splat", K::DictionarySplat),
    ("true", K::True),
    ("false", K::False),
];

/// The kind of a node (named nodes only; anonymous nodes are [`K::Other`]).
pub fn kind(node: Node) -> K {
    kind_with_id(node, node.kind_id())
}

/// [`kind`] of `node` whose `Node::kind_id` is `kind_id` (read from a node table).
pub fn kind_with_id(node: Node, kind_id: u16) -> K {
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
    // Anonymous symbols have ids of their own, all mapped to `Other`.
    table
        .get(kind_id as usize)
        .copied()
        .unwrap_or(if node.is_error() { K::Error } else { K::Other })
}

/// A binding tree-sitter's error recovery lost: for an `=` token `eq` next to an `ERROR` node
/// (inside one, or right after one), the identifier that ends the text before it and the node
/// after it, as CPython would read `name = value`. `x = (1 +` followed by `g = getattr` parses
/// as `x <ERROR "= (1 + g"> = getattr`: the `=` binds `x` to `getattr` in the tree, but in the
/// text it binds `g`. The analysis binds such a name weakly (it keeps its other values too), so
/// a module or builtin bound where the tree is broken still reaches the code that uses it.
/// `None` for every `=` of a tree without errors.
pub fn loose_binding(eq: Node) -> Option<(Node, Node)> {
    if eq.is_named() || eq.kind() != "=" {
        return None;
    }
    let parent = eq.parent()?;
    let before = eq.prev_sibling()?;
    if !(parent.is_error() || before.is_error()) {
        return None;
    }
    let mut target = before;
    while let Some(last) = target.child_count().checked_sub(1) {
        target = target.child(last)?;
    }
    if target.kind() != "identifier" {
        return None;
    }
    let mut value = eq.next_named_sibling()?;
    while value.kind() == "comment" {
        value = value.next_named_sibling()?;
    }
    Some((target, value))
}

/// Callees that rewrite an argument in place or retarget its annotations (SBX005, SBX003):
/// their calls are triggers (a pattern for `matches!`).
macro_rules! IN_PLACE_MUTATORS {
    () => {
        "update_wrapper" | "wraps" | "dataclass" | "total_ordering"
    };
}

/// Attribute and keyword names that are triggers whatever they are attached to, besides the
/// frame-walk attributes ([`super::check::FRAME_ATTRS`]): import machinery, format methods
/// (their templates walk attributes), the `code=` argument of tools (analysed as code), and the
/// members reported on any receiver (`parse_file`, `add_done_callback`, task creation).
const TRIGGER_WORDS: &[&str] = &[
    "load_module",
    "exec_module",
    "find_module",
    "create_module",
    "format",
    "format_map",
    "vformat",
    "code",
    "model_rebuild",
    "update_forward_refs",
    // pydantic aliases read with `getattr` under `from_attributes` (SBX004).
    "alias",
    "validation_alias",
    "alias_generator",
    "_types_namespace",
    // Validation from attributes reads every field with `getattr` (round 6 S6-1, S6-3, S6-11).
    "from_attributes",
    "orm_mode",
    "from_orm",
    "model_validate",
    "validate_python",
    "GetterDict",
    // pydantic's frame-depth parameters (`sys._getframe(n)`, round 6 S6-15).
    "_parent_depth",
    "_parent_namespace_depth",
    // Methods the host runs to format or serialise a cell object (round 6 S6-12).
    "computed_field",
    "model_serializer",
    "field_serializer",
    "tzinfo",
    // On any receiver: pydantic's file loader on every model, and the asyncio scheduling
    // methods whose code runs on the host's loop after the cell (`SBX009`).
    "parse_file",
    "add_done_callback",
    "create_task",
    "ensure_future",
];

/// Builtins whose value matters to some rule besides the code-execution ones
/// ([`super::check::EXEC_BUILTINS`]): the import and class builders, the reflective ones, and the
/// ones that make strings with underscores out of plain data (`chr`, `bytes`, `bytearray`).
const HOT_BUILTINS: &[&str] = &[
    "__import__",
    "__build_class__",
    "getattr",
    "setattr",
    "hasattr",
    "delattr",
    "chr",
    "bytes",
    "bytearray",
    "type",
];

/// Attributes that give a namespace, the builtins module or a callable whatever their object
/// is (`x.__dict__`, `f.__globals__`, `frame.f_builtins`, `print.__self__`).
const VALUE_ATTRS: &[&str] = &[
    "__builtins__",
    "__builtin__",
    "__globals__",
    "__dict__",
    "__self__",
    "__call__",
    "f_globals",
    "f_locals",
    "f_builtins",
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
    /// Sorted byte offsets of the identifiers of non-plain names (the hot positions that can
    /// produce objects: builtins, modules, members, namespaces, functions).
    pub obj_hot: Vec<u32>,
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
    /// True when the byte range `[start, end)` holds an identifier of a non-plain name: only
    /// then can its value hold a builtin, module, member, namespace or cell function.
    pub fn is_obj_hot(&self, start: usize, end: usize) -> bool {
        if self.all {
            return true;
        }
        let i = self.obj_hot.partition_point(|p| (*p as usize) < start);
        self.obj_hot.get(i).is_some_and(|p| (*p as usize) < end)
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
    /// The arguments of a call.
    call_args: bool,
    /// Whether the value of the range's expression may be (part of) the value of the
    /// enclosing range's expression: a function it holds is held there too.
    carries_up: bool,
}

/// One identifier occurrence.
#[derive(Debug, Clone, Copy)]
struct Occ {
    pos: u32,
    name: NameId,
    range: u32,
    /// Read as a name (not an attribute name, keyword, parameter or import part).
    lookup: bool,
    /// The attribute chain it is the object of (`x` in `x.a.b`), or [`NONE`].
    chain: u32,
    /// Whether its value may be (part of) the value of its range's expression.
    carries: bool,
}

/// A call site whose argument range binds the parameters of cell functions.
#[derive(Debug, Clone)]
struct CallRec {
    range: u32,
    site: u32,
    /// The callee identifier, or [`NONE`].
    callee_name: u32,
    /// `node.id()` of a lambda callee, or 0.
    callee_lambda: usize,
    /// The argument ranges with the parameter each binds.
    args: SmallVec<[(u32, Slot); 4]>,
}

/// Which parameter an argument binds (as the interpreter's `bind_call_args` does; `*x` and
/// `**x` arguments bind nothing).
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// The n-th positional argument: the n-th positional parameter, or `*args`.
    Pos(u32),
    /// A keyword argument: the positional or keyword-only parameter of that name.
    Kw(NameId),
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
    /// Positional parameters in order.
    positional: SmallVec<[NameId; 4]>,
    /// The `*args` parameter.
    star: Option<NameId>,
    /// Keyword-only parameters.
    kw_only: SmallVec<[NameId; 2]>,
}

impl FuncFacts {
    /// The parameter an argument in `slot` binds.
    fn param_for(&self, slot: Slot) -> Option<NameId> {
        match slot {
            Slot::Pos(i) => self.positional.get(i as usize).copied().or(self.star),
            Slot::Kw(k) => self
                .positional
                .iter()
                .chain(self.kw_only.iter())
                .find(|p| **p == k)
                .copied(),
        }
    }
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
    /// `node.id()` of function definitions directly in a class body (methods).
    pub methods: rustc_hash::FxHashSet<usize>,
    /// `node.id()` of relative `from` imports.
    relative_imports: rustc_hash::FxHashSet<usize>,
    /// Lambdas: the range they are in and whether their value is that range's value.
    lambda_seeds: Vec<(u32, bool)>,
    /// Attribute chains on a name (`os.path.join`): the occurrence of the name and the
    /// attribute names in order.
    chains: Vec<(u32, SmallVec<[NameId; 4]>)>,
    /// Every name bound in the cell with the start byte of its binding site, in source order.
    pub bound: Vec<(usize, NameId)>,
    /// Whether the cell contains an assignment expression anywhere.
    pub has_walrus: bool,
    /// Whether the cell contains a `class` statement anywhere.
    pub has_class: bool,
    /// Names declared `global` or `nonlocal`.
    pub global_decls: Vec<NameId>,
    ranges: Vec<RangeRec>,
    occs: Vec<Occ>,
    triggers: Vec<(u32, u32)>,
    calls: Vec<CallRec>,
    imported: Vec<NameId>,
    /// Names whose value matters whatever their bindings: generic classes of the cell, whose
    /// subscripts evaluate type parameters (`Box[s]`, SBX003).
    generic_classes: Vec<NameId>,
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
    /// A class body (a `block` whose parent is a `class_definition`).
    class_body: bool,
    /// The attribute chain an `attribute` node belongs to.
    chain: u32,
    /// Positional arguments entered so far (an `argument_list`).
    positional: u32,
    /// Whether this node's value may be (part of) its range's value (see [`passes`]).
    carries: bool,
    /// A call whose arguments may be its value (`getattr(f, "__call__")`, `d.get(k, f)`).
    args_carry: bool,
    /// An attribute whose object may be its value (`f.__call__`, `d.get`), or a starred
    /// `match` subject (`match *xs, 1:`, re-parsed with `~` for `*`), whose operand's elements
    /// are the subject's.
    obj_carries: bool,
}

/// Whether the value of a child (reached through `field`) of a node may be (part of) the
/// node's value, as far as cell functions go: containers, parentheses, conditionals, the value
/// of a subscript, the callee of a call (its results), comprehension bodies, walrus and nested
/// assignments, and the special cases recorded in the frame.
fn passes(p: &Frame, field: Option<&str>) -> bool {
    match p.k {
        K::ParenthesizedExpression
        | K::List
        | K::Tuple
        | K::Set
        | K::ExpressionList
        | K::Dictionary
        | K::Pair
        | K::ConditionalExpression
        | K::BooleanOperator
        | K::ListSplat
        | K::DictionarySplat
        | K::ArgumentList => true,
        K::NamedExpression => field == Some("value"),
        K::Assignment => field == Some("right"),
        K::KeywordArgument => field == Some("value"),
        K::Subscript => field == Some("value"),
        K::MatchStatement => field == Some("subject"),
        K::Call => field == Some("function") || (field == Some("arguments") && p.args_carry),
        K::Attribute => field == Some("object") && p.obj_carries,
        // Its only named child is the operand (fields are not read for unary operators).
        K::UnaryOperator => p.obj_carries,
        K::ListComprehension
        | K::SetComprehension
        | K::GeneratorExpression
        | K::DictionaryComprehension => field == Some("body"),
        _ => false,
    }
}

struct Walker<'t, 's, 'f> {
    src: &'s str,
    names: &'f mut Names<'s>,
    facts: &'f mut Facts<'t>,
    cur_range: u32,
    /// The tree has `ERROR` or `MISSING` nodes (only then can a binding be lost).
    has_error: bool,
    /// The value node (`node.id()`) of the last loose binding ([`loose_binding`]) met, and the
    /// name it binds: its value range feeds that name.
    loose_value: Option<(usize, NameId)>,
}

impl<'t, 's, 'f> Walker<'t, 's, 'f> {
    fn name(&mut self, node: Node) -> NameId {
        let text = ident(node, self.src);
        self.names.intern(text)
    }

    fn push_range(&mut self, sinks: SmallVec<[u32; 2]>, unit: bool) -> u32 {
        self.push_range_carrying(sinks, unit, false)
    }

    fn push_range_carrying(&mut self, sinks: SmallVec<[u32; 2]>, unit: bool, up: bool) -> u32 {
        let id = self.facts.ranges.len() as u32;
        self.facts.ranges.push(RangeRec {
            parent: self.cur_range,
            sinks,
            callee: NONE,
            lambda_body: false,
            unit,
            call_args: false,
            carries_up: up,
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
            if let Some(n) = node.field(F::Name) {
                facts.def_name = Some(self.name(n));
            }
        }
        if let Some(ps) = node.field(F::Parameters) {
            let mut c = ps.walk();
            let mut kw_only = false;
            for p in ps.named_children(&mut c) {
                // (name, has default, 0 plain / 1 star / 2 double star)
                let (name_node, has_default, splat) = match kind(p) {
                    K::Identifier => (Some(p), false, 0),
                    K::DefaultParameter | K::TypedDefaultParameter => (p.field(F::Name), true, 0),
                    K::TypedParameter => {
                        let inner = p.named_child(0);
                        match inner.map(kind) {
                            Some(K::ListSplatPattern) => {
                                (inner.and_then(|i| i.named_child(0)), false, 1)
                            }
                            Some(K::DictionarySplatPattern) => {
                                (inner.and_then(|i| i.named_child(0)), false, 2)
                            }
                            _ => (inner, false, 0),
                        }
                    }
                    K::ListSplatPattern => (p.named_child(0), false, 1),
                    K::DictionarySplatPattern => (p.named_child(0), false, 2),
                    _ => {
                        if p.kind() == "keyword_separator" {
                            kw_only = true;
                        }
                        (None, false, 0)
                    }
                };
                let Some(name_node) = name_node else { continue };
                let pid = self.name(name_node);
                facts.params.push(pid);
                if has_default {
                    facts.defaulted.push(pid);
                }
                match splat {
                    1 => {
                        facts.star = Some(pid);
                        kw_only = true;
                    }
                    2 => {}
                    _ if kw_only => facts.kw_only.push(pid),
                    _ => facts.positional.push(pid),
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
                            if let Some(a) = child.field(F::Alias) {
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
                        K::AliasedImport => child.field(F::Alias),
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
    fn enter(&mut self, node: Node<'t>, k: K, field: Option<&str>, stack: &mut Vec<Frame>) {
        // Positional arguments entered so far in an argument list (this one included).
        if let Some(top) = stack.last_mut() {
            if top.k == K::ArgumentList
                && node.is_named()
                && !matches!(
                    k,
                    K::Comment | K::ListSplat | K::DictionarySplat | K::KeywordArgument
                )
            {
                top.positional += 1;
            }
        }
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
        let carries = parent.is_none_or(|p| p.carries && passes(p, field));
        let ranges_before = self.facts.ranges.len();
        // Units: the non-structural children of structural nodes, and of the root whatever its
        // kind. The reporting walk runs every named child of the root as a statement
        // (`Sbx::run_block`), and tree-sitter's error recovery can make the root an `ERROR`
        // node instead of a `module` (`}vars=(...)(:`): its children are units all the same,
        // or the names they read would not be demanded and the gated analysis would skip
        // their bindings.
        let holds_units = pk.structural() || stack.len() == 1;
        if !k.structural() && k != K::Comment && holds_units && node.is_named() {
            self.push_range(SmallVec::new(), true);
        }
        // Value ranges of the enclosing binding.
        if let Some(p) = parent {
            match (p.k, field) {
                (K::Assignment | K::AugmentedAssignment, Some("right"))
                | (K::NamedExpression, Some("value"))
                | (K::ForStatement | K::ForInClause, Some("right")) => {
                    let sinks = p.targets.clone();
                    self.push_range_carrying(sinks, false, carries);
                }
                (K::DefaultParameter | K::TypedDefaultParameter, Some("value")) => {
                    let sinks = p.targets.clone();
                    self.push_range_carrying(sinks, false, carries);
                }
                // A `match` subject flows into the names its case patterns capture.
                (K::MatchStatement, Some("subject")) => {
                    let sinks = p.targets.clone();
                    self.push_range_carrying(sinks, false, carries);
                }
                (K::Lambda, Some("body")) => {
                    if let Some(f) = p.own_func {
                        let r = self.push_range_carrying(
                            SmallVec::from_slice(&[RET | f]),
                            false,
                            false,
                        );
                        self.facts.ranges[r as usize].lambda_body = true;
                    }
                }
                (K::Call, Some("arguments")) => {
                    let r = self.push_range_carrying(SmallVec::new(), false, carries);
                    self.facts.ranges[r as usize].call_args = true;
                    if let Some(c) = self.facts.calls.get_mut(p.call as usize) {
                        c.range = r;
                        self.facts.ranges[r as usize].callee = c.callee_name;
                        // `f(x for x in y)`: the generator is the one positional argument.
                        if k == K::GeneratorExpression {
                            c.args.push((r, Slot::Pos(0)));
                        }
                    }
                }
                (K::ArgumentList, _) if p.call != NONE && node.is_named() => {
                    let slot = match k {
                        K::Comment | K::ListSplat | K::DictionarySplat => None,
                        K::KeywordArgument => node.field(F::Name).map(|n| Slot::Kw(self.name(n))),
                        _ => Some(Slot::Pos(p.positional.saturating_sub(1))),
                    };
                    if let Some(slot) = slot {
                        let r = self.push_range_carrying(SmallVec::new(), false, carries);
                        if let Some(c) = self.facts.calls.get_mut(p.call as usize) {
                            self.facts.ranges[r as usize].callee = c.callee_name;
                            c.args.push((r, slot));
                        }
                    }
                }
                _ => {}
            }
        }
        // A binding tree-sitter's error recovery lost (`x = (1 +` / `g = getattr`): the value
        // after the loose `=` feeds the name before it.
        if self.has_error && node.is_named() {
            if let Some((_, target)) = self.loose_value.filter(|(v, _)| *v == node.id()) {
                self.loose_value = None;
                self.push_range_carrying(SmallVec::from_slice(&[target]), false, carries);
            }
        }
        // Within a range of its own, a node's value is the range's value.
        let carries = carries || self.facts.ranges.len() > ranges_before;
        let mut frame = Frame {
            k,
            saved_range: saved,
            func,
            targets: SmallVec::new(),
            own_func: None,
            call: NONE,
            class_body: k == K::Block && pk == K::ClassDefinition,
            chain: NONE,
            positional: 0,
            carries,
            args_carry: false,
            obj_carries: false,
        };
        if k == K::ArgumentList {
            frame.call = parent.map_or(NONE, |p| if p.k == K::Call { p.call } else { NONE });
        }
        if k == K::UnaryOperator && pk == K::MatchStatement {
            frame.obj_carries = crate::parse::text(node, self.src).starts_with('*');
        }
        if self.has_error && !node.is_named() {
            if let Some((target, value)) = loose_binding(node) {
                let id = self.name(target);
                self.record_bound(node.start_byte(), target);
                self.site(node, func, SmallVec::from_slice(&[id]));
                self.loose_value = Some((value.id(), id));
            }
        }
        match k {
            K::Identifier => {
                let name = self.name(node);
                let lookup = !name_only(pk, field);
                let mut occ_chain = NONE;
                if pk == K::Attribute {
                    if field == Some("object") {
                        occ_chain = parent.map_or(NONE, |p| p.chain);
                    }
                    if let Some(chain) = self
                        .facts
                        .chains
                        .get_mut(parent.map_or(NONE, |p| p.chain) as usize)
                    {
                        match field {
                            Some("object") => chain.0 = self.facts.occs.len() as u32,
                            Some("attribute") => chain.1.push(name),
                            _ => {}
                        }
                    }
                }
                self.facts.occs.push(Occ {
                    pos: node.start_byte() as u32,
                    name,
                    range: self.cur_range,
                    lookup,
                    chain: occ_chain,
                    carries,
                });
            }
            K::Attribute => {
                // `f.__call__`, `f.__dict__[...]` and dict methods (`d.get`) may be functions
                // held by their object.
                let t = crate::parse::text(node, self.src).trim_end();
                let last = t
                    .rsplit(|c: char| c == '.' || c.is_whitespace())
                    .next()
                    .unwrap_or("");
                frame.obj_carries = last.starts_with("__")
                    || matches!(
                        last,
                        "get" | "pop" | "setdefault" | "copy" | "keys" | "values"
                    );
                // `x.os` on a receiver the analysis may resolve to a cell class instance
                // (`@dataclass class Device: os: str`): the receiver's value decides whether
                // the attribute is reported, so its unit is evaluated.
                // An attribute written or deleted (`json.dumps = f`, `del Counter.x`): the
                // receiver decides whether it is a host object being patched.
                if matches!(
                    (pk, field),
                    (K::Assignment | K::AugmentedAssignment, Some("left"))
                ) || pk == K::DeleteStatement
                {
                    self.facts
                        .triggers
                        .push((node.start_byte() as u32, self.cur_range));
                }
                // Host state changed without store syntax (`ActionResult.model_config.update(...)`,
                // `copy.dispatch_table.clear()`) and private members of pre-bound objects
                // (`ActionType._member_map_`): the receiver decides (SBX005).
                if (last.starts_with('_') && !last.starts_with("__"))
                    || super::check::HOST_MUTATORS.contains(&last)
                {
                    self.facts
                        .triggers
                        .push((node.start_byte() as u32, self.cur_range));
                }
                // `c.send` / `c.throw` drive a coroutine when `c` is one (SBX009), and
                // `x.get_loop()` is an event loop: the receiver's value decides.
                // `object.__setattr__(self, k, v)`: the folded name `k` decides whether it
                // sets a field the cell's class declares (round 6 S6-25, round 8 S8-5).
                if matches!(last, "send" | "throw" | "get_loop" | "__setattr__") {
                    self.facts
                        .triggers
                        .push((node.start_byte() as u32, self.cur_range));
                }
                if self.facts.has_class && super::interp::unknown_host_attr(last).is_some() {
                    self.facts
                        .triggers
                        .push((node.start_byte() as u32, self.cur_range));
                }
                // The outermost attribute of a chain starts it; inner ones (objects of an
                // attribute) continue it.
                frame.chain = match parent {
                    Some(p) if p.k == K::Attribute && field == Some("object") => p.chain,
                    _ => {
                        self.facts.chains.push((NONE, SmallVec::new()));
                        (self.facts.chains.len() - 1) as u32
                    }
                };
            }
            // An item written or deleted (`ActionResult.model_config["k"] = f`,
            // `copy.dispatch_table[T] = f`): the receiver decides whether it is host state
            // (SBX005); the cell's own data names (`results[k] = v`) are not.
            K::Subscript
                if matches!(
                    (pk, field),
                    (K::Assignment | K::AugmentedAssignment, Some("left"))
                ) || pk == K::DeleteStatement =>
            {
                let data = node.field(F::Value).is_some_and(|v| {
                    kind(v) == K::Identifier
                        && super::check::HOST_DATA_NAMES.contains(&crate::parse::text(v, self.src))
                });
                if !data {
                    self.facts
                        .triggers
                        .push((node.start_byte() as u32, self.cur_range));
                }
            }
            K::String => {
                let t = crate::parse::text(node, self.src);
                if t.bytes().any(|b| matches!(b, b'_' | b'\\' | b'%')) {
                    self.facts
                        .triggers
                        .push((node.start_byte() as u32, self.cur_range));
                }
            }
            K::Type
                if {
                    let t = crate::parse::text(node, self.src);
                    t.bytes()
                        .any(|b| matches!(b, b'"' | b'\'' | b'(' | b'+' | b'%'))
                        || (node
                            .named_child(0)
                            .is_some_and(|c| kind(c) == K::Identifier)
                            && !matches!(
                                t.trim(),
                                "int"
                                    | "str"
                                    | "float"
                                    | "bool"
                                    | "bytes"
                                    | "list"
                                    | "dict"
                                    | "set"
                                    | "tuple"
                                    | "object"
                                    | "complex"
                                    | "type"
                                    | "frozenset"
                                    | "bytearray"
                                    | "Any"
                                    | "None"
                            ))
                } =>
            {
                // A string annotation (or one nested in a subscript, or an annotation that
                // builds a string) is code: `typing.get_type_hints`, pydantic and
                // `functools.singledispatch` evaluate it in the cell's globals.
                self.facts
                    .triggers
                    .push((node.start_byte() as u32, self.cur_range));
            }
            K::ClassPattern
                if {
                    let mut c = node.walk();
                    let positional = node
                        .named_children(&mut c)
                        .any(|k| k.kind() == "case_pattern");
                    positional
                } =>
            {
                // A positional sub-pattern reads the attribute its class's `__match_args__`
                // names.
                self.facts
                    .triggers
                    .push((node.start_byte() as u32, self.cur_range));
            }
            K::ExecStatement | K::KeywordPattern => {
                // A keyword pattern reads an attribute of the match subject by name.
                self.facts
                    .triggers
                    .push((node.start_byte() as u32, self.cur_range));
            }
            K::DottedName if pattern_parent(pk) && node.named_child_count() > 1 => {
                // A dotted value or class name in a `match` pattern is an attribute chain.
                self.facts
                    .triggers
                    .push((node.start_byte() as u32, self.cur_range));
            }
            K::Assignment | K::AugmentedAssignment | K::ForStatement | K::ForInClause => {
                let mut t = SmallVec::new();
                if let Some(left) = node.field(F::Left) {
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
                if let Some(n) = node.field(F::Name) {
                    self.targets(n, &mut t, 0);
                    self.record_bound(node.start_byte(), n);
                }
                self.site(node, func, t.clone());
                frame.targets = t;
            }
            K::MatchStatement => {
                // The capture names of its case patterns (`case [m, _]:`, `case x as m:`).
                let mut t: SmallVec<[u32; 2]> = SmallVec::new();
                let mut c = node.walk();
                let mut stack = vec![node];
                while let Some(n) = stack.pop() {
                    let parent = n.parent().map(|p| p.kind()).unwrap_or("");
                    match kind(n) {
                        K::Identifier
                            if matches!(parent, "dotted_name" | "as_pattern" | "splat_pattern") =>
                        {
                            let id = self.name(n);
                            if !t.contains(&id) {
                                t.push(id);
                            }
                            // Bound at the statement (round 9 S9-15: `case names:` rebinds
                            // `names` for the code after the `match`).
                            self.record_bound(node.start_byte(), n);
                        }
                        K::Block if n.parent().is_some_and(|p| kind(p) == K::CaseClause) => {}
                        _ => stack.extend(n.named_children(&mut c)),
                    }
                }
                // A binding site of the captures (the interpreter leaves their values to
                // `check`'s capture resolution): they are not "never bound" names.
                self.site(node, func, t.clone());
                frame.targets = t;
            }
            K::AsPattern => {
                let mut t = SmallVec::new();
                if let Some(a) = node.field(F::Alias) {
                    self.targets(a, &mut t, 0);
                    self.record_bound(node.start_byte(), a);
                }
                self.site(node, func, t);
            }
            K::FunctionDefinition | K::Lambda => {
                if k == K::Lambda {
                    self.facts.lambda_seeds.push((self.cur_range, carries));
                }
                // A method's name is bound in its class namespace, which no bare name outside
                // the class statement sees.
                let n = stack.len();
                let in_class_body = |i: usize| stack.get(i).is_some_and(|f| f.class_body);
                let method = k == K::FunctionDefinition
                    && n >= 1
                    && (in_class_body(n - 1)
                        || (pk == K::DecoratedDefinition && n >= 2 && in_class_body(n - 2)));
                let f = self.register_function(node, k);
                if method {
                    self.facts.func_facts[f as usize].def_name = None;
                    self.facts.methods.insert(node.id());
                }
                let facts = self.facts.func_facts[f as usize].clone();
                let mut t: SmallVec<[u32; 2]> = SmallVec::new();
                if let Some(d) = facts.def_name {
                    t.push(d);
                } else if k == K::Lambda {
                    t.push(RET | f);
                }
                t.extend(facts.defaulted.iter().copied());
                if k == K::FunctionDefinition {
                    if let Some(n) = node.field(F::Name) {
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
                if let Some(n) = node.field(F::Name) {
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
                // A `yield` inside `try` or `with` in its own function: the generator's cleanup
                // may run when the host closes it (SBX009).
                let guarded = stack
                    .iter()
                    .rev()
                    .take_while(|f| {
                        !matches!(f.k, K::FunctionDefinition | K::Lambda | K::ClassDefinition)
                    })
                    .any(|f| matches!(f.k, K::TryStatement | K::WithStatement));
                if guarded {
                    self.facts
                        .triggers
                        .push((node.start_byte() as u32, self.cur_range));
                }
            }
            K::Call => {
                let site = self.site(node, func, SmallVec::new());
                let mut rec = CallRec {
                    range: NONE,
                    site,
                    callee_name: NONE,
                    callee_lambda: 0,
                    args: SmallVec::new(),
                };
                if let Some(callee) = node.field(F::Function) {
                    let callee = super::interp::unparen(callee);
                    match kind(callee) {
                        K::Identifier => {
                            rec.callee_name = self.name(callee);
                            // `type(name, bases, ns)` builds a class from a namespace dict
                            // whose keys may have been set elsewhere (`ns["__del__"] = f`).
                            if matches!(
                                self.names.text(rec.callee_name),
                                "type" | IN_PLACE_MUTATORS!()
                            ) {
                                self.facts
                                    .triggers
                                    .push((node.start_byte() as u32, self.cur_range));
                            }
                            // Builtins whose result holds their arguments.
                            frame.args_carry = matches!(
                                self.names.text(rec.callee_name),
                                "getattr" | "list" | "tuple" | "reversed"
                            );
                        }
                        K::Lambda => rec.callee_lambda = callee.id(),
                        K::Attribute => {
                            let t = crate::parse::text(callee, self.src).trim_end();
                            let last = t
                                .rsplit(|c: char| c == '.' || c.is_whitespace())
                                .next()
                                .unwrap_or("");
                            frame.args_carry = matches!(last, "get" | "pop" | "setdefault");
                            // `functools.update_wrapper(W, f)`, `dataclasses.dataclass(W)`:
                            // calls that rewrite a possibly-host argument in place.
                            if matches!(last, IN_PLACE_MUTATORS!()) {
                                self.facts
                                    .triggers
                                    .push((node.start_byte() as u32, self.cur_range));
                            }
                        }
                        _ => {}
                    }
                }
                frame.call = self.facts.calls.len() as u32;
                self.facts.calls.push(rec);
            }
            K::ImportStatement | K::ImportFromStatement => {
                let t = self.import_targets(node, k);
                // `from . import x` binds an unknown value (the analysis does not follow
                // relative imports); the statement itself is still checked.
                let relative = k == K::ImportFromStatement
                    && node
                        .field(F::ModuleName)
                        .is_some_and(|m| kind(m) == K::RelativeImport);
                if relative {
                    self.facts.relative_imports.insert(node.id());
                } else {
                    self.facts.imported.extend(t.iter().copied());
                }
                self.record_bound(node.start_byte(), node);
                self.site(node, func, t);
                self.facts
                    .triggers
                    .push((node.start_byte() as u32, self.cur_range));
            }
            K::ClassDefinition => {
                self.facts.has_class = true;
                // A class on a builtin base (`class R(dict):`) may override the base's own
                // methods, which the host calls (SBX009).
                if let Some(sup) = node.field(F::Superclasses) {
                    let mut c = sup.walk();
                    let builtin_base = sup.named_children(&mut c).any(|b| {
                        let t = crate::parse::text(super::interp::unparen(b), self.src);
                        let last = t.rsplit('.').next().unwrap_or(t).trim();
                        super::check::builtin_base_name(last).is_some()
                    });
                    if builtin_base {
                        self.facts
                            .triggers
                            .push((node.start_byte() as u32, self.cur_range));
                    }
                }
                let mut t = SmallVec::new();
                if let Some(n) = node.field(F::Name) {
                    t.push(self.name(n));
                    self.record_bound(node.start_byte(), n);
                    let generic = node.field(F::Superclasses).is_some_and(|b| {
                        let bt = crate::parse::text(b, self.src);
                        bt.contains("Generic")
                            || bt.contains("RootModel")
                            || bt.contains("EventLoop")
                    });
                    if generic {
                        let id = self.name(n);
                        self.facts.generic_classes.push(id);
                    }
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
                if let Some(d) = node.field(F::Definition) {
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

/// True for a parent kind whose dotted-name children are `match` patterns (a value pattern
/// `case a.b:`, the class of a class pattern, a keyword pattern's value, a capture `case x:`).
pub fn pattern_parent(pk: K) -> bool {
    matches!(
        pk,
        K::CasePattern
            | K::ClassPattern
            | K::KeywordPattern
            | K::UnionPattern
            | K::ListPattern
            | K::TuplePattern
            | K::DictPattern
            | K::AsPattern
    )
}

/// True for an identifier that names something rather than reading it: an assignment or `for`
/// target (written, not read) or a [`declares_name`] position.
fn name_only(pk: K, field: Option<&str>) -> bool {
    match pk {
        K::Assignment | K::ForStatement | K::ForInClause => field == Some("left"),
        _ => declares_name(pk, field),
    }
}

/// True for an identifier child (in `field` of a `pk` node) that is a name being declared or an
/// attribute/keyword name, never a read of a variable: shared by the relevance pre-pass and the
/// reporting walk.
pub fn declares_name(pk: K, field: Option<&str>) -> bool {
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
        has_error: root.has_error(),
        loose_value: None,
    };
    // One frame and one child iterator per entered node.
    let mut stack: Vec<Frame> = Vec::new();
    w.enter(root, kind(root), None, &mut stack);
    let mut iters: Vec<Children<'t>> = vec![Children::new(root)];
    while let Some(it) = iters.last_mut() {
        // Field names cost a lookup: only the parents that look at them ask.
        let with_field = stack.last().is_some_and(|p| p.k.uses_fields());
        match it.next(with_field) {
            Some((child, field)) => {
                w.enter(child, kind(child), field, &mut stack);
                iters.push(Children::new(child));
            }
            None => {
                iters.pop();
                if let Some(f) = stack.pop() {
                    w.cur_range = f.saved_range;
                }
            }
        }
    }
    facts
}

/// As [`collect`], fed from the cell's node table (built once per cell and shared by every
/// rule family) instead of a tree walk: the same nodes in the same order, with the same field
/// names, without tree-sitter's per-child lookups. `table` must be the table of the tree whose
/// root is `table.node(0)`.
pub fn collect_table<'t, 's>(
    table: &crate::nodes::NodeTable<'t>,
    src: &'s str,
    names: &mut Names<'s>,
) -> Facts<'t> {
    let mut facts = Facts::default();
    if table.is_empty() {
        return facts;
    }
    let mut w = Walker {
        src,
        names,
        facts: &mut facts,
        cur_range: NONE,
        has_error: table.node(0).has_error(),
        loose_value: None,
    };
    let mut stack: Vec<Frame> = Vec::new();
    // One past the subtree of each entered node, innermost last (one per frame of `stack`).
    let mut open: Vec<usize> = Vec::new();
    for id in 0..table.len() {
        while open.last().is_some_and(|&end| id >= end) {
            open.pop();
            if let Some(f) = stack.pop() {
                w.cur_range = f.saved_range;
            }
        }
        // Field names only for the parents that look at them, as in `collect`.
        let field = match stack.last() {
            Some(p) if id != 0 && p.k.uses_fields() => table.field(id),
            _ => None,
        };
        let node = table.node(id);
        w.enter(
            node,
            kind_with_id(node, table.kind_id(id)),
            field,
            &mut stack,
        );
        open.push(table.subtree_end(id));
    }
    facts
}

/// Nodes with more children than this are iterated with a tree cursor.
const WIDE: usize = 12;

/// The children of a node, in order, with their field names on request. A narrow node is read
/// by index (`ts_node_child` scans from the first child, which is cheaper than a cursor step for
/// a few children); a wide one with a tree cursor, so that iterating stays linear.
pub enum Children<'t> {
    /// By index.
    Index {
        /// The parent.
        node: Node<'t>,
        /// The next index.
        i: usize,
        /// The number of children.
        n: usize,
    },
    /// By cursor.
    Cursor {
        /// The cursor, on the previous child once started.
        cursor: TreeCursor<'t>,
        /// Whether the cursor has moved to the first child.
        started: bool,
    },
}

impl<'t> Children<'t> {
    /// The children of `node`.
    pub fn new(node: Node<'t>) -> Self {
        let n = node.child_count();
        if n > WIDE {
            Children::Cursor {
                cursor: node.walk(),
                started: false,
            }
        } else {
            Children::Index { node, i: 0, n }
        }
    }

    /// The next child, with its field name when `with_field` is set.
    pub fn next(&mut self, with_field: bool) -> Option<(Node<'t>, Option<&'static str>)> {
        match self {
            Children::Index { node, i, n } => {
                while *i < *n {
                    let idx = *i;
                    *i += 1;
                    if let Some(c) = node.child(idx) {
                        let f = if with_field {
                            u32::try_from(idx)
                                .ok()
                                .and_then(|x| node.field_name_for_child(x))
                        } else {
                            None
                        };
                        return Some((c, f));
                    }
                }
                None
            }
            Children::Cursor { cursor, started } => {
                let moved = if *started {
                    cursor.goto_next_sibling()
                } else {
                    *started = true;
                    cursor.goto_first_child()
                };
                if !moved {
                    return None;
                }
                let f = if with_field {
                    cursor.field_name()
                } else {
                    None
                };
                Some((cursor.node(), f))
            }
        }
    }
}

/// The named children of `node` other than comments, in order: what
/// `node.named_children(&mut node.walk())` without the comments gives, read as [`Children`]
/// reads them (by index for a narrow node: no cursor to allocate and no sibling steps through
/// tree-sitter's hidden nodes, the bulk of the reporting walk's child lists).
///
/// Inside [`super::field::with_table`], the children of the table's nodes are read from it.
pub fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let from_table = super::field::table_children(node, |kids| {
        kids.filter(|&(_, named, kind)| named && kind != "comment")
            .map(|(c, ..)| c)
            .collect()
    });
    if let Some(out) = from_table {
        return out;
    }
    let mut out = Vec::new();
    let mut kids = Children::new(node);
    while let Some((c, _)) = kids.next(false) {
        if c.is_named() && c.kind_name() != "comment" {
            out.push(c);
        }
    }
    out
}

/// The first of [`named_children`], without collecting the others.
pub fn first_named_child(node: Node) -> Option<Node> {
    let from_table = super::field::table_children(node, |kids| {
        for (c, named, kind) in kids {
            if named && kind != "comment" {
                return Some(c);
            }
        }
        None
    });
    if let Some(first) = from_table {
        return first;
    }
    let mut kids = Children::new(node);
    while let Some((c, _)) = kids.next(false) {
        if c.is_named() && c.kind_name() != "comment" {
            return Some(c);
        }
    }
    None
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
    super::check::HOST_STATE_NAMES.contains(&name)
        || name == "__builtins__"
        || name == "__builtin__"
        || cfg.prebound.contains(name)
        || (builtin(name).is_some()
            && (HOT_BUILTINS.contains(&name) || super::check::EXEC_BUILTINS.contains(&name)))
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

/// A test of an attribute chain on a name bound only by imports: see [`relevance`].
pub type BoringChain<'t, 'f> = dyn Fn(NameId, &[Node<'t>], &[NameId]) -> bool + 'f;

/// Computes hot positions, demanded names and needed sites from the facts of the walk. With
/// `gate` false, everything is hot, demanded and needed.
/// `boring(name, sites, chain)` tells whether every value `name` may hold (it is bound only by
/// the import statements `sites`, or not at all) makes the attribute chain `chain` an opaque
/// module member with no finding on the way (`os.getcwd`, `json.dumps`).
pub fn relevance<'t>(
    facts: &mut Facts<'t>,
    names: &Names,
    cfg: &Config,
    gate: bool,
    boring: &BoringChain<'t, '_>,
) -> Relevance {
    let n_names = names.len();
    let n_funcs = facts.funcs.len();
    let n_vars = n_names + n_funcs;
    let n_sites = facts.sites.len();
    if !gate {
        return Relevance {
            all: true,
            hot: Vec::new(),
            obj_hot: Vec::new(),
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
    let occ_by_name = Csr::build(
        n_names,
        facts
            .occs
            .iter()
            .enumerate()
            .map(|(i, o)| (o.name as usize, i as u32)),
    );
    // Occurrences that may read the cell's namespace by a computed name: the builtins where
    // they are read, the frame and function attributes anywhere.
    let mut dynamic_occs: Vec<u32> = Vec::new();
    for n in DYNAMIC_NAMESPACE {
        if let Some(id) = names.get(n) {
            for o in occ_by_name.get(id as usize) {
                if facts.occs[*o as usize].lookup || !matches!(*n, "vars" | "globals" | "locals") {
                    dynamic_occs.push(*o);
                }
            }
        }
    }
    // The parameters an argument binds, given what the call may call.
    let func_facts = &facts.func_facts;
    let slot_params = |funcs: &mut dyn Iterator<Item = u32>, slot: Slot| -> SmallVec<[u32; 2]> {
        let mut out: SmallVec<[u32; 2]> = SmallVec::new();
        for f in funcs {
            if let Some(p) = func_facts[f as usize].param_for(slot) {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        out
    };
    let n_funcs_u32 = n_funcs as u32;
    let method_funcs: rustc_hash::FxHashSet<u32> = facts
        .funcs
        .iter()
        .enumerate()
        .filter(|(_, n)| facts.methods.contains(&n.id()))
        .map(|(f, _)| f as u32)
        .collect();
    // The functions a call may call, given whether its callee name may hold any function.
    let candidates = |c: &CallRec, any: bool| -> SmallVec<[u32; 4]> {
        if c.callee_lambda != 0 {
            return facts
                .func_ids
                .get(&c.callee_lambda)
                .copied()
                .into_iter()
                .collect();
        }
        if c.callee_name == NONE {
            return SmallVec::new();
        }
        if any {
            // Methods are never values of the analysis (their names are not bound): no call
            // reaches them.
            return (0..n_funcs_u32)
                .filter(|f| !method_funcs.contains(f))
                .collect();
        }
        defs_by_name
            .get(&c.callee_name)
            .map(|fs| fs.iter().copied().collect())
            .unwrap_or_default()
    };
    // Names that may hold a cell function: def names, and names bound from a value that
    // mentions one or holds a lambda (through arguments to the parameters they bind). Only
    // calls of such names bind parameters.
    let mut may_func = vec![false; n_names];
    // Names that may hold a function through a binding (not only their own defs): a call of such
    // a name may call any function.
    let mut holds_any = vec![false; n_names];
    {
        let mut arg_call = vec![(NONE, 0u32); facts.ranges.len()];
        for (i, c) in facts.calls.iter().enumerate() {
            for (j, (r, _)) in c.args.iter().enumerate() {
                if let Some(slot) = arg_call.get_mut(*r as usize) {
                    *slot = (i as u32, j as u32);
                }
            }
        }
        let mut range_f = vec![false; facts.ranges.len()];
        let mut queue: Vec<usize> = defs_by_name.keys().map(|d| *d as usize).collect();
        for d in &queue {
            may_func[*d] = true;
        }
        // Arguments that may be functions, passed to a callee that is not (yet) known to hold
        // any function: bound to its defs now, to every function once it is.
        let mut waiting: FxHashMap<NameId, Vec<(u32, u32)>> = FxHashMap::default();
        let ranges = &facts.ranges;
        let calls = &facts.calls;
        let mark = |v: usize,
                    may_func: &mut Vec<bool>,
                    holds_any: &mut Vec<bool>,
                    queue: &mut Vec<usize>| {
            if v < n_names {
                let newly_any = !holds_any[v];
                holds_any[v] = true;
                if !may_func[v] {
                    may_func[v] = true;
                    queue.push(v);
                } else if newly_any {
                    // Calls of it waiting for this to be known.
                    queue.push(v);
                }
            }
        };
        let mut heat = |r: u32,
                        may_func: &mut Vec<bool>,
                        holds_any: &mut Vec<bool>,
                        queue: &mut Vec<usize>,
                        waiting: &mut FxHashMap<NameId, Vec<(u32, u32)>>| {
            let mut r = r;
            while r != NONE && !range_f[r as usize] {
                range_f[r as usize] = true;
                let rec = &ranges[r as usize];
                for s in &rec.sinks {
                    if s & RET == 0 {
                        mark(*s as usize, may_func, holds_any, queue);
                    }
                }
                let (ci, ai) = arg_call[r as usize];
                if let Some(c) = calls.get(ci as usize) {
                    let slot = c.args[ai as usize].1;
                    let i = c.callee_name as usize;
                    let bound = c.callee_name != NONE && otherwise_bound[i];
                    let any = bound && holds_any[i];
                    for p in slot_params(&mut candidates(c, any).into_iter(), slot) {
                        mark(p as usize, may_func, holds_any, queue);
                    }
                    if bound && !any {
                        waiting.entry(c.callee_name).or_default().push((ci, ai));
                    }
                }
                // A function in the range's value is in the enclosing range's value only if the
                // range's expression carries into it.
                r = if rec.carries_up { rec.parent } else { NONE };
            }
        };
        for (r, carries) in facts.lambda_seeds.clone() {
            if carries {
                heat(r, &mut may_func, &mut holds_any, &mut queue, &mut waiting);
            }
        }
        // A namespace read by name may hand out any function.
        for o in dynamic_occs
            .iter()
            .filter(|o| facts.occs[**o as usize].carries)
        {
            heat(
                facts.occs[*o as usize].range,
                &mut may_func,
                &mut holds_any,
                &mut queue,
                &mut waiting,
            );
        }
        while let Some(v) = queue.pop() {
            if holds_any[v] {
                if let Some(pending) = waiting.remove(&(v as NameId)) {
                    for (ci, ai) in pending {
                        let c = &facts.calls[ci as usize];
                        let slot = c.args[ai as usize].1;
                        for p in slot_params(&mut candidates(c, true).into_iter(), slot) {
                            let p = p as usize;
                            let newly_any = !holds_any[p];
                            holds_any[p] = true;
                            if !may_func[p] || newly_any {
                                may_func[p] = true;
                                queue.push(p);
                            }
                        }
                    }
                }
            }
            for o in occ_by_name.get(v) {
                let o = &facts.occs[*o as usize];
                // An attribute of a function is not a function (`f.__call__` is, and
                // `f.__dict__[...]` may be one: dunder attributes keep it).
                let through_attribute = o.chain != NONE
                    && facts.chains.get(o.chain as usize).is_none_or(|c| {
                        !c.1.first()
                            .is_some_and(|n| names.text(*n).starts_with("__"))
                    });
                if o.lookup && o.carries && !through_attribute {
                    heat(
                        o.range,
                        &mut may_func,
                        &mut holds_any,
                        &mut queue,
                        &mut waiting,
                    );
                }
            }
        }
    }
    // Each argument's sinks: the parameters it binds.
    let mut arg_sinks: Vec<(u32, SmallVec<[u32; 2]>)> = Vec::new();
    let mut call_targets: Vec<(u32, SmallVec<[u32; 2]>)> = Vec::new();
    for c in &facts.calls {
        let i = c.callee_name as usize;
        let any = c.callee_name != NONE && otherwise_bound[i] && holds_any[i];
        let funcs = candidates(c, any);
        if funcs.is_empty() {
            continue;
        }
        let mut all: SmallVec<[u32; 2]> = SmallVec::new();
        for (r, slot) in &c.args {
            let sinks = slot_params(&mut funcs.iter().copied(), *slot);
            for p in &sinks {
                if !all.contains(p) {
                    all.push(*p);
                }
            }
            arg_sinks.push((*r, sinks));
        }
        call_targets.push((c.site, all));
    }
    for (r, sinks) in arg_sinks {
        if let Some(rec) = facts.ranges.get_mut(r as usize) {
            rec.sinks = sinks;
        }
    }
    for (site, targets) in call_targets {
        if let Some(t) = facts.site_targets.get_mut(site as usize) {
            *t = targets;
        }
    }

    // Occurrences that start a boring attribute chain: names bound only by absolute imports (or
    // never bound), whose chain ends on an opaque member.
    let mut import_only: Vec<Option<SmallVec<[Node; 1]>>> = vec![Some(SmallVec::new()); n_names];
    for (s, targets) in facts.site_targets.iter().enumerate() {
        let Some((node, _)) = facts.sites.get(s) else {
            continue;
        };
        let import = matches!(kind(*node), K::ImportStatement | K::ImportFromStatement)
            && !facts.relative_imports.contains(&node.id());
        for t in targets {
            if t & RET != 0 {
                continue;
            }
            let slot = &mut import_only[*t as usize];
            match slot {
                Some(v) if import => v.push(*node),
                _ => *slot = None,
            }
        }
    }
    for ff in &facts.func_facts {
        for p in &ff.params {
            import_only[*p as usize] = None;
        }
    }
    for g in &facts.global_decls {
        import_only[*g as usize] = None;
    }
    let mut boring_occ = vec![false; facts.occs.len()];
    let mut verdicts: FxHashMap<(NameId, SmallVec<[NameId; 4]>), bool> = FxHashMap::default();
    for (occ, chain) in &facts.chains {
        let Some(o) = facts.occs.get(*occ as usize) else {
            continue;
        };
        if chain.is_empty() {
            continue;
        }
        let Some(sites) = &import_only[o.name as usize] else {
            continue;
        };
        let key = (o.name, chain.clone());
        let verdict = *verdicts
            .entry(key)
            .or_insert_with(|| boring(o.name, sites, chain));
        boring_occ[*occ as usize] = verdict;
    }

    // ---- closure A: non-plain variables -------------------------------------------------------
    let n_ranges = facts.ranges.len();
    let mut nonplain = vec![false; n_vars];
    // Names that are triggers by their text wherever they occur (attribute, keyword and
    // definition names included); other names matter only where they are read.
    let mut text_trigger = vec![false; n_names];
    let mut range_hot = vec![false; n_ranges];
    let mut queue: Vec<usize> = Vec::new();
    let mark = |v: usize, nonplain: &mut Vec<bool>, queue: &mut Vec<usize>| {
        if !nonplain[v] {
            nonplain[v] = true;
            queue.push(v);
        }
    };
    // Attribute names whose value matters whatever the object is (namespaces, the builtins
    // module, bound builtins): they taint values, not only positions.
    let mut value_attr = vec![false; n_names];
    // The deny list's last segments and loop-method entries, as sets: every name is tested
    // against them (a scan of the list per name was a tenth of the analysis on large cells).
    let deny_last: rustc_hash::FxHashSet<&str> = cfg
        .deny
        .iter()
        .filter_map(|d| d.rsplit('.').next())
        .collect();
    let deny_loop: rustc_hash::FxHashSet<&str> = cfg
        .deny
        .iter()
        .filter_map(|d| d.strip_prefix(super::interp::LOOP_PREFIX))
        .collect();
    for id in 0..n_names {
        let t = names.text(id as NameId);
        if t.contains("__")
            || TRIGGER_WORDS.contains(&t)
            || super::check::FRAME_ATTRS.contains(&t)
            || super::interp::unknown_host_attr(t).is_some()
            || super::interp::denied_loop_method_by(t, |m| deny_loop.contains(m))
            // A denied module member on a receiver that may be the module (round 6 S6-30).
            || deny_last.contains(t)
            || super::host_submodule_name(t)
            || super::check::string_hook(t)
        {
            text_trigger[id] = true;
        }
        if VALUE_ATTRS.contains(&t) {
            value_attr[id] = true;
            mark(id, &mut nonplain, &mut queue);
        } else if default_interesting(t, cfg) {
            mark(id, &mut nonplain, &mut queue);
        }
    }
    for id in facts.generic_classes.clone() {
        mark(id as usize, &mut nonplain, &mut queue);
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
                let occ = &facts.occs[*o as usize];
                if boring_occ[*o as usize] || !(occ.lookup || value_attr[v]) {
                    continue;
                }
                let r = occ.range;
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
    let mut obj_hot: Vec<u32> = Vec::new();
    let mut ti = facts.triggers.iter().map(|(p, _)| *p).peekable();
    for (i, o) in facts.occs.iter().enumerate() {
        let n = o.name as usize;
        let value = nonplain[n] && !boring_occ[i] && (o.lookup || value_attr[n]);
        if !value && !text_trigger[n] {
            continue;
        }
        while let Some(t) = ti.next_if(|t| *t <= o.pos) {
            hot.push(t);
        }
        hot.push(o.pos);
        if value {
            obj_hot.push(o.pos);
        }
    }
    hot.extend(ti);
    if hot.is_empty() {
        return Relevance {
            all: false,
            hot,
            obj_hot,
            demanded: vec![false; n_names],
            demanded_returns: vec![false; n_funcs],
            needed: vec![false; n_sites],
        };
    }

    // ---- closure B: demanded variables ----------------------------------------------------------
    // A namespace read by name in a hot unit may read any name: every name is demanded.
    let unit_of = |mut r: u32| {
        while r != NONE && !facts.ranges[r as usize].unit {
            r = facts.ranges[r as usize].parent;
        }
        r
    };
    let dynamic = dynamic_occs.iter().any(|o| {
        let u = unit_of(facts.occs[*o as usize].range);
        u != NONE && range_hot[u as usize]
    });
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
        obj_hot,
        demanded,
        demanded_returns,
        needed,
    }
}
