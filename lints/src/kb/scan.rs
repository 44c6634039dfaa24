//! The knowledge base from Python sources: every `@action_executor(...)` method of every agent
//! capability, keyed as Colony's dispatcher keys it. Nothing is imported or executed; the
//! sources are parsed with tree-sitter.
//!
//! Semantics reproduced (Colony `agents/patterns/actions/dispatcher.py`, colony-reference §2.3):
//! - `action_executor(action_key=None, *, input_schema, output_schema, reads, writes,
//!   exclude_from_planning=False, planning_summary=None, tags=None, interruptible=False,
//!   emits_lifecycle=True)` is a decorator *factory*: `@action_executor()` or
//!   `@action_executor(...)` marks a method; a bare `@action_executor` replaces the method with
//!   the factory's inner function, which carries no `_action_key`, so the method is **not**
//!   registered (reported as a warning).
//! - The decorator is recognised as `action_executor`, as any name it is imported under
//!   (`from ... import action_executor as ae`) or assigned to at module level, and as any
//!   attribute ending in `.action_executor` (`dispatcher.action_executor`).
//! - The registered key is `f"{obj.__class__.__name__}.{dispatch_key}.{str(action_key)}"`:
//!   the *instance's* class name (a subclass that inherits a decorated method registers it under
//!   its own name); `action_key` is the decorator argument or the method name (an enum member
//!   such as `ActionType.ANALYZE` gives `str(member)`: `ActionType.ANALYZE` for `(str, Enum)`
//!   enums, the value for `StrEnum` or an enum whose `__str__` returns `self.value`).
//! - `dispatch_key` is `_capability_key` or `capability_key` when it is a string. Capabilities
//!   default it to the class name (`get_capability_name()`); a string found statically (class
//!   attribute, `self._capability_key = "..."` or `super().__init__(capability_key="...")` in
//!   `__init__`, a `capability_key` property or `get_capability_name` returning a literal)
//!   replaces it. Agents and action policies (classes deriving from `Agent` / `ActionPolicy` /
//!   a `...Agent` / `...Policy` class) and plain provider objects get a random 8-hex segment
//!   per process: their keys are written `Class.*.action` and marked dynamic (a wildcard).
//! - The MRO is walked most-derived first and the first class defining a *name* wins: an
//!   override without the decorator removes the action, an override with it replaces it.
//!   Inheritance is followed across all scanned files (C3 linearisation); bases outside the
//!   scanned sources are opaque.
//! - Abstract classes (an `@abstractmethod` still unimplemented in the MRO) cannot be
//!   instantiated, so they register nothing; their actions appear under concrete subclasses.
//! - Standalone functions decorated at module level register, when passed as action
//!   providers, under their short key alone, in group `func.<name>`; a first parameter typed
//!   `Agent` is injected and hidden. A decorated function nested in a function body cannot be
//!   reached by the dispatcher and is reported.
//! - Parameters come from the signature (`self`/`cls` skipped, `*args` ignored, `**kwargs`
//!   accepted as pass-through, keyword-only after `*`), or from the fields of an
//!   `input_schema=` model found in the scanned sources. The description shown to the model is
//!   `planning_summary` or the docstring; an action with neither makes Colony raise when it
//!   builds the prompt (reported).

use super::{types, Action, DefinitionLocation, Group, KbError, KbWarning, KnowledgeBase, Param};
use crate::parse;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tree_sitter::Node;

/// True for `.py` and `.pyi` paths.
pub fn is_python_path(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("py" | "pyi")
    )
}

/// What a scan found.
#[derive(Debug, Clone, Default)]
pub struct ScanResult {
    /// The actions, groups and dynamic segments found (Colony's pseudo keys are included when
    /// any action was found).
    pub kb: KnowledgeBase,
    /// Problems worth a look, with file:line:col.
    pub warnings: Vec<KbWarning>,
    /// Python files considered.
    pub files_scanned: usize,
    /// Files whose facts were used (the others cannot define or inherit an action).
    pub files_parsed: usize,
    /// Files parsed by this call (fewer than `files_parsed` when a [`ScanCache`] had the others).
    pub files_parsed_now: usize,
}

/// Scans Python files and directories (walked recursively in parallel, honouring `.gitignore`,
/// `.ignore` and hidden-file rules as ripgrep does).
///
/// Errors: a path that does not exist. Unreadable files become warnings.
pub fn scan_paths(paths: &[PathBuf]) -> Result<ScanResult, KbError> {
    ScanCache::new().scan_paths(paths)
}

/// Scans in-memory sources given as `(path as displayed, text)`.
pub fn scan_sources(sources: &[(String, String)]) -> ScanResult {
    let inputs: Vec<Arc<SourceText>> = sources
        .iter()
        .map(|(p, t)| Arc::new(SourceText::new(p.clone(), t.clone())))
        .collect();
    let (facts, parsed_now) = parse_needed(&inputs, &HashMap::new());
    let mut result = link(&inputs, &facts);
    result.files_parsed_now = parsed_now;
    result
}

/// One file's text, with the cheap facts needed to decide whether to parse it.
#[derive(Debug)]
struct SourceText {
    path: String,
    text: String,
    mentions_decorator: bool,
}

impl SourceText {
    fn new(path: String, text: String) -> Self {
        let mentions_decorator = text.contains("action_executor");
        Self {
            path,
            text,
            mentions_decorator,
        }
    }
}

#[derive(Debug, Clone)]
struct CachedFile {
    /// Size and modification time when read.
    len: u64,
    mtime: Option<SystemTime>,
    /// When the contents were read.
    read_at: SystemTime,
    source: Arc<SourceText>,
    facts: Option<Arc<FileFacts>>,
}

/// A scan cache for long-running callers (the language server): files whose contents did not
/// change are not re-parsed; the cheap linking step (inheritance, keys) always runs again, so a
/// rename in one file updates every subclass. A file is re-read unless its size and
/// modification time are unchanged and that time was at least 2 s older than the last read
/// (so a rewrite within one timestamp tick is still seen, as git guards against "racy"
/// timestamps); a re-read file is re-parsed only when its contents changed. Thread-safe;
/// `scan_paths` on a warm cache costs a directory walk, a `stat` per file and the parse of the
/// changed files.
#[derive(Debug, Default)]
pub struct ScanCache {
    files: Mutex<HashMap<PathBuf, CachedFile>>,
}

impl ScanCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets one file (optional: deleted files drop out and changed files are re-parsed
    /// anyway; this only frees memory).
    pub fn invalidate(&self, path: &Path) {
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(path);
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.files.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Scans `paths` (files and directories), re-using unchanged files.
    ///
    /// Errors: a path that does not exist.
    pub fn scan_paths(&self, paths: &[PathBuf]) -> Result<ScanResult, KbError> {
        crate::workers::start_worker_pool();
        let mut warnings = Vec::new();
        let files = walk_python(paths)?;
        let previous: HashMap<PathBuf, CachedFile> = {
            let guard = self.files.lock().unwrap_or_else(|e| e.into_inner());
            files
                .iter()
                .filter_map(|f| guard.get(f).map(|c| (f.clone(), c.clone())))
                .collect()
        };
        let loaded: Vec<Result<CachedFile, KbWarning>> = files
            .par_iter()
            .map(|f| {
                let meta = std::fs::metadata(f).ok();
                let len = meta.as_ref().map_or(0, |m| m.len());
                let mtime = meta.as_ref().and_then(|m| m.modified().ok());
                if let Some(c) = previous.get(f) {
                    // As git does against "racy" timestamps: size and time are trusted only
                    // when the file was last modified well before it was read; otherwise
                    // (or when they differ) the contents decide.
                    let settled = mtime.is_some_and(|m| {
                        c.read_at
                            .duration_since(m)
                            .is_ok_and(|d| d >= std::time::Duration::from_secs(2))
                    });
                    if settled && c.len == len && c.mtime == mtime {
                        return Ok(c.clone());
                    }
                }
                let read_at = SystemTime::now();
                let bytes = std::fs::read(f).map_err(|e| KbWarning {
                    path: f.display().to_string(),
                    line: None,
                    column: None,
                    message: format!("cannot read: {e}"),
                })?;
                let text = String::from_utf8_lossy(&bytes);
                let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                if let Some(c) = previous.get(f) {
                    if c.source.text == text {
                        return Ok(CachedFile {
                            len,
                            mtime,
                            read_at,
                            ..c.clone()
                        });
                    }
                }
                Ok(CachedFile {
                    len,
                    mtime,
                    read_at,
                    source: Arc::new(SourceText::new(f.display().to_string(), text.to_string())),
                    facts: None,
                })
            })
            .collect();
        let mut entries = Vec::new();
        for (f, r) in files.iter().zip(loaded) {
            match r {
                Ok(c) => entries.push((f.clone(), c)),
                Err(w) => warnings.push(w),
            }
        }
        let inputs: Vec<Arc<SourceText>> = entries.iter().map(|(_, c)| c.source.clone()).collect();
        let known: HashMap<usize, Arc<FileFacts>> = entries
            .iter()
            .enumerate()
            .filter_map(|(i, (_, c))| c.facts.clone().map(|f| (i, f)))
            .collect();
        let (facts, parsed_now) = parse_needed(&inputs, &known);
        {
            let mut guard = self.files.lock().unwrap_or_else(|e| e.into_inner());
            for (i, (path, mut c)) in entries.into_iter().enumerate() {
                if c.facts.is_none() {
                    c.facts = facts[i].clone();
                }
                guard.insert(path, c);
            }
        }
        let mut result = link(&inputs, &facts);
        result.files_parsed_now = parsed_now;
        warnings.append(&mut result.warnings);
        result.warnings = warnings;
        Ok(result)
    }
}

/// Python files under `paths`, sorted and de-duplicated.
fn walk_python(paths: &[PathBuf]) -> Result<Vec<PathBuf>, KbError> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_file() {
            files.push(p.clone());
            continue;
        }
        if !p.is_dir() {
            return Err(KbError {
                path: p.display().to_string(),
                line: None,
                column: None,
                message: "no such file or directory".into(),
            });
        }
        let found = Mutex::new(Vec::new());
        ignore::WalkBuilder::new(p).build_parallel().run(|| {
            Box::new(|entry| {
                if let Ok(e) = entry {
                    if e.file_type().is_some_and(|t| t.is_file()) && is_python_path(e.path()) {
                        found
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(e.into_path());
                    }
                }
                ignore::WalkState::Continue
            })
        });
        files.extend(found.into_inner().unwrap_or_else(|e| e.into_inner()));
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// Parses the files that can matter: those mentioning the decorator, then (to a fixed point)
/// those mentioning a class, enum, model or constant name that a parsed file defines or
/// refers to. A subclass always names its base, so no inheritance is missed.
/// Returns the facts per input and how many files were parsed.
fn parse_needed(
    inputs: &[Arc<SourceText>],
    known: &HashMap<usize, Arc<FileFacts>>,
) -> (Vec<Option<Arc<FileFacts>>>, usize) {
    crate::workers::start_worker_pool();
    let mut parsed_now = 0;
    let mut facts: Vec<Option<Arc<FileFacts>>> = vec![None; inputs.len()];
    for (&i, f) in known {
        if i < facts.len() {
            facts[i] = Some(f.clone());
        }
    }
    let mut todo: Vec<usize> = (0..inputs.len())
        .filter(|&i| facts[i].is_none() && inputs[i].mentions_decorator)
        .collect();
    let mut names_seen: HashSet<String> = HashSet::new();
    let mut carriers: HashSet<String> = HashSet::new();
    loop {
        let parsed: Vec<(usize, Arc<FileFacts>)> = todo
            .par_iter()
            .map(|&i| (i, Arc::new(extract(&inputs[i].path, &inputs[i].text))))
            .collect();
        parsed_now += parsed.len();
        for (i, f) in parsed {
            facts[i] = Some(f);
        }
        // Names that make another file relevant: classes that carry an action (directly or
        // through a base, to a fixed point) and names the decorators refer to.
        loop {
            let before = carriers.len();
            for f in facts.iter().flatten() {
                for c in &f.classes {
                    if !carriers.contains(&c.name)
                        && (c.funcs.values().any(|m| m.deco.is_some())
                            || c.bases
                                .iter()
                                .any(|b| carriers.contains(b.rsplit('.').next().unwrap_or(b))))
                    {
                        carriers.insert(c.name.clone());
                    }
                }
            }
            if carriers.len() == before {
                break;
            }
        }
        let mut new_names = Vec::new();
        for f in facts.iter().flatten() {
            for n in f.deco_names() {
                if n.len() >= 3 && names_seen.insert(n.clone()) {
                    new_names.push(n);
                }
            }
        }
        for c in &carriers {
            if c.len() >= 3 && names_seen.insert(c.clone()) {
                new_names.push(c.clone());
            }
        }
        if new_names.is_empty() {
            break;
        }
        let Ok(ac) = aho_corasick::AhoCorasick::new(&new_names) else {
            break;
        };
        todo = (0..inputs.len())
            .into_par_iter()
            .filter(|&i| facts[i].is_none() && ac.is_match(&inputs[i].text))
            .collect();
        if todo.is_empty() {
            break;
        }
    }
    // Models named by `input_schema=` need their fields: re-read the files whose skeleton
    // dropped them.
    let schemas: HashSet<String> = facts
        .iter()
        .flatten()
        .flat_map(|f| f.schema_names())
        .collect();
    let again: Vec<usize> = (0..inputs.len())
        .filter(|&i| {
            facts[i]
                .as_ref()
                .is_some_and(|f| f.stripped.iter().any(|c| schemas.contains(c)))
        })
        .collect();
    let reparsed: Vec<(usize, Arc<FileFacts>)> = again
        .par_iter()
        .map(|&i| {
            (
                i,
                Arc::new(extract_with(&inputs[i].path, &inputs[i].text, false)),
            )
        })
        .collect();
    parsed_now += reparsed.len();
    for (i, f) in reparsed {
        facts[i] = Some(f);
    }
    (facts, parsed_now)
}

// ---------------------------------------------------------------------------------------------
// Per-file facts (parallel, no cross-file knowledge)
// ---------------------------------------------------------------------------------------------

/// A position in a file: one-based line and character column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Pos {
    line: u32,
    column: u32,
}

#[derive(Debug, Clone, PartialEq)]
enum KeyExpr {
    /// A string constant.
    Str(String),
    /// A (dotted) name to resolve: a constant, a class attribute or an enum member.
    Name(String),
    /// Anything else, as written.
    Other(String),
}

#[derive(Debug, Clone, Default)]
struct DecoratorArgs {
    bare: bool,
    action_key: Option<KeyExpr>,
    planning_summary: Option<KeyExpr>,
    exclude_from_planning: Option<bool>,
    emits_lifecycle: Option<bool>,
    interruptible: Option<bool>,
    tags: Vec<String>,
    input_schema: Option<String>,
    /// Arguments whose value could not be read statically (name, expression).
    unreadable: Vec<(String, String)>,
    pos: Pos,
}

#[derive(Debug, Clone, Default)]
struct FuncFacts {
    name: String,
    pos: Pos,
    is_async: bool,
    is_abstract: bool,
    deco: Option<DecoratorArgs>,
    params: Vec<Param>,
    /// Annotation of the first parameter (for standalone functions: an injected `Agent`).
    first_param: Option<(String, Option<String>)>,
    accepts_kwargs: bool,
    returns: Option<String>,
    docstring: Option<String>,
    /// A body that is a single `return <expr>` (for literal-returning accessors).
    returns_literal: Option<LiteralValue>,
}

#[derive(Debug, Clone, PartialEq)]
enum LiteralValue {
    Str(String),
    Strings(Vec<String>),
    /// `return self.value` (enum `__str__` overrides).
    SelfValue,
}

#[derive(Debug, Clone, Default)]
struct ClassFacts {
    name: String,
    bases: Vec<String>,
    metaclass: Option<String>,
    docstring: Option<String>,
    /// Names bound in the class body, in first-binding order.
    members: Vec<String>,
    /// Functions defined in the body (the last definition of a name wins, as in Python).
    funcs: HashMap<String, FuncFacts>,
    /// Class-level string constants.
    str_attrs: HashMap<String, String>,
    /// Class-level constants holding a set/list/tuple of strings.
    strings_attrs: HashMap<String, Vec<String>>,
    /// `_capability_key` found in `__init__` (assignment or `super().__init__(capability_key=)`).
    init_capability_key: Option<String>,
    /// Annotated fields (`name: T = default`), for `input_schema=` models.
    fields: Vec<Param>,
    /// Enum members: name -> string value when literal.
    enum_members: Vec<(String, Option<String>)>,
    /// Nesting: defined inside a function body.
    in_function: bool,
}

#[derive(Debug, Default)]
struct FileFacts {
    path: String,
    module: String,
    /// Local names bound to the decorator.
    aliases: HashSet<String>,
    /// `from M import N as L`: L -> (M, N); `import M as L`: L -> (M, "").
    imports: HashMap<String, (String, String)>,
    constants: HashMap<String, String>,
    classes: Vec<ClassFacts>,
    functions: Vec<FuncFacts>,
    warnings: Vec<KbWarning>,
    /// Field-only classes whose bodies the skeleton removed.
    stripped: Vec<String>,
}

impl FileFacts {
    /// Last segments of the `input_schema=` names of this file's decorators.
    fn schema_names(&self) -> Vec<String> {
        self.classes
            .iter()
            .flat_map(|c| c.funcs.values())
            .chain(self.functions.iter())
            .filter_map(|f| f.deco.as_ref()?.input_schema.as_deref())
            .map(|s| s.rsplit('.').next().unwrap_or(s).to_string())
            .collect()
    }

    /// Names the decorators of this file refer to (enums, models, constants).
    fn deco_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.classes {
            for f in c.funcs.values() {
                if let Some(d) = &f.deco {
                    collect_deco_names(d, &mut out);
                }
            }
        }
        for f in &self.functions {
            if let Some(d) = &f.deco {
                collect_deco_names(d, &mut out);
            }
        }
        out
    }
}

fn collect_deco_names(d: &DecoratorArgs, out: &mut Vec<String>) {
    for k in [&d.action_key, &d.planning_summary].into_iter().flatten() {
        if let KeyExpr::Name(n) = k {
            if let Some(first) = n.split('.').next() {
                out.push(first.to_string());
            }
        }
    }
    if let Some(s) = &d.input_schema {
        out.push(s.rsplit('.').next().unwrap_or(s).to_string());
    }
}

/// Dotted module name guessed from a path: `src/pkg/mod.py` -> `src.pkg.mod`,
/// `pkg/__init__.py` -> `pkg`.
fn module_of(path: &str) -> String {
    let p = path.replace('\\', "/");
    let p = p
        .strip_suffix(".pyi")
        .or_else(|| p.strip_suffix(".py"))
        .unwrap_or(&p);
    let p = p.strip_suffix("/__init__").unwrap_or(p);
    p.split('/')
        .filter(|s| !s.is_empty() && *s != "." && *s != "..")
        .collect::<Vec<_>>()
        .join(".")
}

struct Extractor<'a> {
    src: &'a str,
    /// Original (zero-based) row of each row of `src` when `src` is a skeleton.
    rows: Option<&'a [u32]>,
    /// Docstrings the skeleton took out, by skeleton row.
    docs: Option<&'a HashMap<u32, String>>,
    facts: FileFacts,
}

/// Extracts the facts of one file. Never fails: syntax errors become a warning and whatever
/// parsed is used.
fn extract(path: &str, text: &str) -> FileFacts {
    extract_with(path, text, true)
}

/// [`extract`], optionally keeping the bodies of field-only classes (`strip_data = false`),
/// which an `input_schema=` model needs.
fn extract_with(path: &str, text: &str, strip_data: bool) -> FileFacts {
    // Parse a skeleton with the bodies the extractor ignores blanked (the parse dominates the
    // cost of a scan); fall back to the full text when the skeleton does not parse cleanly.
    if let Some(sk) = skeleton(text, strip_data) {
        let tree = parse::parse(&sk.text, None);
        if !tree.root_node().has_error() {
            let mut facts = extract_tree(path, &sk.text, &tree, Some((&sk.rows, &sk.docs)));
            facts.stripped = sk.stripped;
            return facts;
        }
    }
    let tree = parse::parse(text, None);
    extract_tree(path, text, &tree, None)
}

fn extract_tree(
    path: &str,
    text: &str,
    tree: &tree_sitter::Tree,
    skeleton: Option<(&[u32], &HashMap<u32, String>)>,
) -> FileFacts {
    let root = tree.root_node();
    let mut ex = Extractor {
        src: text,
        rows: skeleton.map(|s| s.0),
        docs: skeleton.map(|s| s.1),
        facts: FileFacts {
            path: path.to_string(),
            module: module_of(path),
            ..Default::default()
        },
    };
    ex.facts.aliases.insert("action_executor".into());
    // First pass: imports and module-level aliases/constants (decorators may precede them in
    // odd files, so collect before walking definitions).
    ex.collect_bindings(root);
    ex.walk_block(root, Scope::Module);
    if root.has_error() {
        if let Some(bad) = parse::walk(root).find(|n| n.is_error() || n.is_missing()) {
            let pos = ex.pos(bad);
            ex.facts.warnings.push(KbWarning {
                path: path.to_string(),
                line: Some(pos.line as usize),
                column: Some(pos.column as usize),
                message: "syntax error; actions defined after this point may be missing".into(),
            });
        }
    }
    ex.facts
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Module,
    Function,
}

impl<'a> Extractor<'a> {
    fn text(&self, n: Node) -> &'a str {
        parse::text(n, self.src)
    }

    /// The source text of `n` on one line, as a KB records annotations and defaults: comments
    /// dropped, whitespace runs outside string literals collapsed to one space (none just inside
    /// brackets), string literals kept byte for byte. With `annotation`, a trailing comma before
    /// a closing bracket is dropped too (`list[\n    str,\n]` -> `list[str]`).
    fn one_line(&self, n: Node, annotation: bool) -> String {
        // Protected (string) and skipped (comment) byte ranges, in order (an explicit stack:
        // annotations can nest deeply).
        let mut spans: Vec<(usize, usize, bool)> = Vec::new();
        let mut stack = vec![n];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "comment" => spans.push((node.start_byte(), node.end_byte(), false)),
                "string" => spans.push((node.start_byte(), node.end_byte(), true)),
                _ => {
                    let mut c = node.walk();
                    let children: Vec<Node> = node.children(&mut c).collect();
                    stack.extend(children.into_iter().rev());
                }
            }
        }
        one_line_text(self.src, n.start_byte(), n.end_byte(), &spans, annotation)
    }

    fn pos(&self, n: Node) -> Pos {
        let start = n.start_byte();
        let col_bytes = n.start_position().column;
        let line_start = start.saturating_sub(col_bytes);
        let column = self
            .src
            .get(line_start..start)
            .map(|s| s.chars().count())
            .unwrap_or(col_bytes);
        let row = n.start_position().row;
        let row = self
            .rows
            .and_then(|r| r.get(row).copied())
            .map(|r| r as usize)
            .unwrap_or(row);
        Pos {
            line: u32::try_from(row + 1).unwrap_or(u32::MAX),
            column: u32::try_from(column + 1).unwrap_or(u32::MAX),
        }
    }

    fn warn(&mut self, pos: Pos, message: String) {
        self.facts.warnings.push(KbWarning {
            path: self.facts.path.clone(),
            line: Some(pos.line as usize),
            column: Some(pos.column as usize),
            message,
        });
    }

    /// Imports anywhere at module level (also inside `if`/`try`), decorator aliases and string
    /// constants.
    fn collect_bindings(&mut self, block: Node) {
        let mut cursor = block.walk();
        let children: Vec<Node> = block.named_children(&mut cursor).collect();
        for stmt in children {
            match stmt.kind() {
                "import_from_statement" => self.import_from(stmt),
                "import_statement" => {
                    let mut c = stmt.walk();
                    for name in stmt.children_by_field_name("name", &mut c) {
                        match name.kind() {
                            "dotted_name" => {
                                let full = self.text(name).to_string();
                                let first = full.split('.').next().unwrap_or(&full).to_string();
                                self.facts
                                    .imports
                                    .insert(first.clone(), (first, String::new()));
                            }
                            "aliased_import" => {
                                if let (Some(n), Some(a)) = (
                                    name.child_by_field_name("name"),
                                    name.child_by_field_name("alias"),
                                ) {
                                    self.facts.imports.insert(
                                        self.text(a).to_string(),
                                        (self.text(n).to_string(), String::new()),
                                    );
                                }
                            }
                            _ => {}
                        }
                    }
                }
                "expression_statement" => {
                    let Some(assign) = stmt.named_child(0).filter(|n| n.kind() == "assignment")
                    else {
                        continue;
                    };
                    let (Some(left), Some(right)) = (
                        assign.child_by_field_name("left"),
                        assign.child_by_field_name("right"),
                    ) else {
                        continue;
                    };
                    if left.kind() != "identifier" {
                        continue;
                    }
                    let name = self.text(left).to_string();
                    if self.is_decorator_ref(right) {
                        self.facts.aliases.insert(name);
                    } else {
                        // `action_executor = something_else`: the name no longer is Colony's.
                        self.facts.aliases.remove(&name);
                        if let Some(v) = parse::literal_str(right, self.src) {
                            self.facts.constants.insert(name, v);
                        }
                    }
                }
                "function_definition" | "class_definition" | "decorated_definition" => {
                    // A module that defines its own `action_executor` (a registry decorator of
                    // another framework, a pytest fixture, a ROS callback) does not use
                    // Colony's: its decorated methods are no actions. Colony's own definition
                    // (in its dispatcher module) is recognised by its `planning_summary` /
                    // `exclude_from_planning` parameters.
                    let def = if stmt.kind() == "decorated_definition" {
                        stmt.child_by_field_name("definition")
                    } else {
                        Some(stmt)
                    };
                    let Some(def) = def else { continue };
                    let named = def
                        .child_by_field_name("name")
                        .is_some_and(|n| self.facts.aliases.contains(self.text(n)));
                    if !named {
                        continue;
                    }
                    let colony_like = def.kind() == "function_definition"
                        && def.child_by_field_name("parameters").is_some_and(|p| {
                            let t = self.text(p);
                            t.contains("planning_summary") || t.contains("exclude_from_planning")
                        });
                    if !colony_like {
                        if let Some(n) = def.child_by_field_name("name") {
                            let n = self.text(n).to_string();
                            self.facts.aliases.remove(&n);
                        }
                    }
                }
                "if_statement" | "try_statement" | "with_statement" | "block" | "else_clause"
                | "elif_clause" | "except_clause" | "finally_clause" => {
                    self.collect_bindings(stmt);
                    if let Some(b) = stmt.child_by_field_name("consequence") {
                        self.collect_bindings(b);
                    }
                    if let Some(b) = stmt.child_by_field_name("body") {
                        self.collect_bindings(b);
                    }
                }
                _ => {}
            }
        }
    }

    fn import_from(&mut self, stmt: Node) {
        let Some(module) = stmt.child_by_field_name("module_name") else {
            return;
        };
        let module_text = self.text(module).to_string();
        let module_abs = if module.kind() == "relative_import" {
            // `.x` / `..x` relative to this file's package.
            let dots = module_text.chars().take_while(|&c| c == '.').count();
            let rest = &module_text[dots..];
            let mut parts: Vec<&str> = self.facts.module.split('.').collect();
            let is_init = self.facts.path.ends_with("__init__.py");
            let drop = if is_init { dots - 1 } else { dots };
            for _ in 0..drop.min(parts.len()) {
                parts.pop();
            }
            let mut m = parts.join(".");
            if !rest.is_empty() {
                if !m.is_empty() {
                    m.push('.');
                }
                m.push_str(rest);
            }
            m
        } else {
            module_text
        };
        let mut c = stmt.walk();
        for name in stmt.children_by_field_name("name", &mut c) {
            let (orig, local) = match name.kind() {
                "dotted_name" => (self.text(name).to_string(), self.text(name).to_string()),
                "aliased_import" => match (
                    name.child_by_field_name("name"),
                    name.child_by_field_name("alias"),
                ) {
                    (Some(n), Some(a)) => (self.text(n).to_string(), self.text(a).to_string()),
                    _ => continue,
                },
                _ => continue,
            };
            if orig == "action_executor" {
                self.facts.aliases.insert(local.clone());
            }
            self.facts.imports.insert(local, (module_abs.clone(), orig));
        }
    }

    /// True when `expr` names the decorator factory (not called).
    fn is_decorator_ref(&self, expr: Node) -> bool {
        let expr = parse::unparenthesize(expr);
        match expr.kind() {
            "identifier" => self.facts.aliases.contains(self.text(expr)),
            "attribute" => expr
                .child_by_field_name("attribute")
                .is_some_and(|a| self.text(a) == "action_executor"),
            _ => false,
        }
    }

    fn walk_block(&mut self, block: Node, scope: Scope) {
        let mut cursor = block.walk();
        let children: Vec<Node> = block.named_children(&mut cursor).collect();
        for stmt in children {
            self.statement(stmt, scope, &[]);
        }
    }

    fn statement(&mut self, stmt: Node, scope: Scope, decorators: &[Node]) {
        match stmt.kind() {
            "decorated_definition" => {
                let mut c = stmt.walk();
                let decos: Vec<Node> = stmt
                    .named_children(&mut c)
                    .filter(|n| n.kind() == "decorator")
                    .collect();
                if let Some(def) = stmt.child_by_field_name("definition") {
                    self.statement(def, scope, &decos);
                }
            }
            "function_definition" => {
                let f = self.function(stmt, decorators, false);
                match scope {
                    Scope::Module => {
                        if f.deco.as_ref().is_some_and(|d| !d.bare) {
                            self.facts.functions.push(f);
                        } else if let Some(d) = &f.deco {
                            let pos = d.pos;
                            self.bare_warning(pos, &f.name);
                        }
                    }
                    Scope::Function => {
                        if let Some(d) = &f.deco {
                            let pos = d.pos;
                            let name = f.name.clone();
                            self.warn(pos, format!("`@action_executor` on `{name}`, a function nested in a function body: the dispatcher only sees module-level functions and class methods; ignored"));
                        }
                    }
                }
                if let Some(body) = stmt.child_by_field_name("body") {
                    self.walk_block(body, Scope::Function);
                }
            }
            "class_definition" => {
                let class = self.class(stmt, scope == Scope::Function);
                self.facts.classes.push(class);
            }
            "if_statement" | "try_statement" | "with_statement" | "for_statement"
            | "while_statement" | "match_statement" | "block" | "else_clause" | "elif_clause"
            | "except_clause" | "finally_clause" | "case_clause" => {
                let mut c = stmt.walk();
                let kids: Vec<Node> = stmt.named_children(&mut c).collect();
                for k in kids {
                    self.statement(k, scope, &[]);
                }
            }
            "expression_statement" if scope == Scope::Function => {
                // Lambdas and nested defs can only appear through other statements.
            }
            _ => {}
        }
    }

    fn bare_warning(&mut self, pos: Pos, name: &str) {
        self.warn(pos, format!("bare `@action_executor` on `{name}`: Colony's `action_executor` is a decorator factory, so this replaces `{name}` with the factory's inner function and the action is never registered; write `@action_executor()`"));
    }

    /// Reads the decorator arguments when one of `decorators` is the action decorator.
    fn decorator_args(&mut self, decorators: &[Node]) -> Option<DecoratorArgs> {
        for d in decorators {
            let Some(expr) = d.named_child(0) else {
                continue;
            };
            let expr = parse::unparenthesize(expr);
            if self.is_decorator_ref(expr) {
                return Some(DecoratorArgs {
                    bare: true,
                    pos: self.pos(*d),
                    ..Default::default()
                });
            }
            if expr.kind() != "call" {
                continue;
            }
            let Some(func) = expr.child_by_field_name("function") else {
                continue;
            };
            if !self.is_decorator_ref(func) {
                continue;
            }
            let mut args = DecoratorArgs {
                pos: self.pos(*d),
                ..Default::default()
            };
            let Some(arglist) = expr.child_by_field_name("arguments") else {
                return Some(args);
            };
            let mut c = arglist.walk();
            let mut positional = 0;
            for a in arglist.named_children(&mut c) {
                match a.kind() {
                    "keyword_argument" => {
                        let (Some(n), Some(v)) = (
                            a.child_by_field_name("name"),
                            a.child_by_field_name("value"),
                        ) else {
                            continue;
                        };
                        let name = self.text(n);
                        self.decorator_kw(&mut args, name, v);
                    }
                    "comment" => {}
                    "list_splat" | "dictionary_splat" => {
                        args.unreadable.push(("*".into(), self.text(a).to_string()));
                    }
                    _ => {
                        if positional == 0 {
                            self.decorator_kw(&mut args, "action_key", a);
                        }
                        positional += 1;
                    }
                }
            }
            return Some(args);
        }
        None
    }

    fn key_expr(&self, v: Node) -> Option<KeyExpr> {
        let v = parse::unparenthesize(v);
        if let Some(s) = parse::literal_str(v, self.src) {
            return Some(KeyExpr::Str(s));
        }
        if self.text(v) == "None" {
            return None;
        }
        if let Some(d) = parse::dotted_name(v, self.src) {
            return Some(KeyExpr::Name(d));
        }
        Some(KeyExpr::Other(self.one_line(v, false)))
    }

    fn decorator_kw(&self, args: &mut DecoratorArgs, name: &str, v: Node) {
        let bool_of = |n: Node| match self.text(parse::unparenthesize(n)) {
            "True" => Some(true),
            "False" | "None" => Some(false),
            _ => None,
        };
        match name {
            "action_key" => args.action_key = self.key_expr(v),
            "planning_summary" => args.planning_summary = self.key_expr(v),
            "exclude_from_planning" | "emits_lifecycle" | "interruptible" => {
                let b = bool_of(v);
                if b.is_none() {
                    args.unreadable
                        .push((name.to_string(), self.one_line(v, false)));
                }
                match name {
                    "exclude_from_planning" => args.exclude_from_planning = b,
                    "emits_lifecycle" => args.emits_lifecycle = b,
                    _ => args.interruptible = b,
                }
            }
            "tags" => match self.string_collection(v) {
                Some(t) => args.tags = t,
                None if self.text(v) == "None" => {}
                None => args
                    .unreadable
                    .push(("tags".into(), self.one_line(v, false))),
            },
            "input_schema" => {
                if let Some(d) = parse::dotted_name(v, self.src) {
                    if d != "None" {
                        args.input_schema = Some(d);
                    }
                }
            }
            _ => {}
        }
    }

    /// `frozenset({"a", "b"})`, `{"a"}`, `["a"]`, `("a",)`, `set(["a"])` -> the strings.
    fn string_collection(&self, v: Node) -> Option<Vec<String>> {
        let v = parse::unparenthesize(v);
        match v.kind() {
            "call" => {
                let f = self.text(v.child_by_field_name("function")?);
                if !matches!(f, "frozenset" | "set" | "list" | "tuple") {
                    return None;
                }
                let args = v.child_by_field_name("arguments")?;
                let mut c = args.walk();
                let inner: Vec<Node> = args.named_children(&mut c).collect();
                match inner.as_slice() {
                    [] => Some(Vec::new()),
                    [one] => self.string_collection(*one),
                    _ => None,
                }
            }
            "set" | "list" | "tuple" => {
                let mut out = Vec::new();
                let mut c = v.walk();
                for item in v.named_children(&mut c) {
                    if item.kind() == "comment" {
                        continue;
                    }
                    out.push(parse::literal_str(item, self.src)?);
                }
                out.sort();
                out.dedup();
                Some(out)
            }
            "string" | "concatenated_string" => parse::literal_str(v, self.src).map(|s| vec![s]),
            _ => None,
        }
    }

    /// Facts of one `def`; `is_method` skips the first parameter (`self`/`cls`) unless the
    /// method is a `@staticmethod`.
    fn function(&mut self, def: Node, decorators: &[Node], is_method: bool) -> FuncFacts {
        let name = def
            .child_by_field_name("name")
            .map(|n| self.text(n).to_string())
            .unwrap_or_default();
        let pos = def
            .child_by_field_name("name")
            .map(|n| self.pos(n))
            .unwrap_or_else(|| self.pos(def));
        let is_async = def.child(0).is_some_and(|c| c.kind() == "async");
        let mut is_abstract = false;
        let mut is_static = false;
        let mut is_class = false;
        for d in decorators {
            let Some(e) = d.named_child(0) else { continue };
            let t = parse::dotted_name(e, self.src).unwrap_or_default();
            let last = t.rsplit('.').next().unwrap_or("");
            match last {
                "abstractmethod" => is_abstract = true,
                "staticmethod" => is_static = true,
                "classmethod" => is_class = true,
                _ => {}
            }
        }
        let deco = self.decorator_args(decorators);
        let body = def.child_by_field_name("body");
        let docstring = body.and_then(|b| self.docstring(b));
        let returns = def
            .child_by_field_name("return_type")
            .map(|t| clean_annotation(&self.one_line(t, true)));
        let mut f = FuncFacts {
            name,
            pos,
            is_async,
            is_abstract,
            deco,
            returns,
            docstring,
            ..Default::default()
        };
        if let Some(params) = def.child_by_field_name("parameters") {
            self.parameters(params, &mut f, is_method && (!is_static || is_class));
        }
        if let Some(b) = body {
            f.returns_literal = self.single_return(b);
        }
        f
    }

    /// Literal value of a body that is (after an optional docstring) one `return <literal>`.
    fn single_return(&self, body: Node) -> Option<LiteralValue> {
        let mut c = body.walk();
        let stmts: Vec<Node> = body
            .named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .collect();
        let ret = match stmts.as_slice() {
            [r] => *r,
            [d, r]
                if d.kind() == "expression_statement"
                    && d.named_child(0).is_some_and(|s| s.kind() == "string") =>
            {
                *r
            }
            _ => return None,
        };
        if ret.kind() != "return_statement" {
            return None;
        }
        let v = parse::unparenthesize(ret.named_child(0)?);
        if let Some(s) = parse::literal_str(v, self.src) {
            return Some(LiteralValue::Str(s));
        }
        let t = self.text(v);
        if matches!(t, "self.value" | "str(self.value)" | "self._value_") {
            return Some(LiteralValue::SelfValue);
        }
        self.string_collection(v).map(LiteralValue::Strings)
    }

    fn docstring(&self, body: Node) -> Option<String> {
        let first = body.named_child(0)?;
        if first.kind() != "expression_statement" {
            return None;
        }
        let s = first.named_child(0)?;
        if !matches!(s.kind(), "string" | "concatenated_string") {
            return None;
        }
        if self.text(s) == "\"\"" {
            let row = u32::try_from(s.start_position().row).unwrap_or(u32::MAX);
            if let Some(d) = self.docs.and_then(|docs| docs.get(&row)) {
                return Some(cleandoc(d));
            }
        }
        parse::literal_str(s, self.src).map(|d| cleandoc(&d))
    }

    fn parameters(&mut self, params: Node, f: &mut FuncFacts, skip_first: bool) {
        let mut c = params.walk();
        let mut keyword_only = false;
        let mut first = true;
        let doc_args = f
            .docstring
            .as_deref()
            .map(docstring_args)
            .unwrap_or_default();
        let children: Vec<Node> = params.named_children(&mut c).collect();
        let mut positional_only = children.iter().any(|n| n.kind() == "positional_separator");
        for p in children {
            let kind = p.kind();
            if kind == "comment" {
                continue;
            }
            if kind == "keyword_separator" {
                keyword_only = true;
                continue;
            }
            if kind == "positional_separator" {
                positional_only = false;
                continue;
            }
            // Splats (typed or not).
            let splat = if matches!(kind, "list_splat_pattern" | "dictionary_splat_pattern") {
                Some(kind)
            } else if kind == "typed_parameter" {
                p.named_child(0)
                    .map(|n| n.kind())
                    .filter(|k| matches!(*k, "list_splat_pattern" | "dictionary_splat_pattern"))
            } else {
                None
            };
            if let Some(s) = splat {
                if s == "dictionary_splat_pattern" {
                    f.accepts_kwargs = true;
                } else {
                    keyword_only = true;
                }
                first = false;
                continue;
            }
            let (name_node, ty, default) = match kind {
                "identifier" => (Some(p), None, None),
                "typed_parameter" => (p.named_child(0), p.child_by_field_name("type"), None),
                "default_parameter" => (
                    p.child_by_field_name("name"),
                    None,
                    p.child_by_field_name("value"),
                ),
                "typed_default_parameter" => (
                    p.child_by_field_name("name"),
                    p.child_by_field_name("type"),
                    p.child_by_field_name("value"),
                ),
                _ => (None, None, None),
            };
            let Some(name_node) = name_node else {
                continue;
            };
            let name = self.text(name_node).to_string();
            let ty = ty.map(|t| clean_annotation(&self.one_line(t, true)));
            if first {
                first = false;
                f.first_param = Some((name.clone(), ty.clone()));
                if skip_first {
                    continue;
                }
            }
            let default = default.map(|d| self.one_line(d, false));
            if positional_only && f.deco.as_ref().is_some_and(|d| !d.bare) {
                let pos = self.pos(name_node);
                self.warn(pos, format!("`{name}` is positional-only, but `run(...)` passes every parameter by keyword: Colony's call of `{}` fails with a TypeError when it is given", f.name));
            }
            f.params.push(Param {
                allowed: ty.as_deref().and_then(types::allowed_values),
                display_type: Some(
                    ty.as_deref()
                        .map(types::colony_display)
                        .unwrap_or_else(|| "Any".into()),
                ),
                description: doc_args.get(&name).cloned(),
                required: default.is_none(),
                default,
                keyword_only,
                approximate_type: false,
                ty,
                name,
            });
        }
    }

    fn class(&mut self, def: Node, in_function: bool) -> ClassFacts {
        let name_node = def.child_by_field_name("name");
        let mut class = ClassFacts {
            name: name_node
                .map(|n| self.text(n).to_string())
                .unwrap_or_default(),
            in_function,
            ..Default::default()
        };
        if let Some(sup) = def.child_by_field_name("superclasses") {
            let mut c = sup.walk();
            for a in sup.named_children(&mut c) {
                match a.kind() {
                    "keyword_argument" => {
                        if a.child_by_field_name("name")
                            .is_some_and(|n| self.text(n) == "metaclass")
                        {
                            class.metaclass = a
                                .child_by_field_name("value")
                                .and_then(|v| parse::dotted_name(v, self.src));
                        }
                    }
                    "comment" => {}
                    _ => {
                        // `Generic[T]`, `Base[int]`: the subscripted value is the base.
                        let base = if a.kind() == "subscript" {
                            a.child_by_field_name("value").unwrap_or(a)
                        } else {
                            a
                        };
                        if let Some(d) = parse::dotted_name(base, self.src) {
                            class.bases.push(d);
                        }
                    }
                }
            }
        }
        if let Some(body) = def.child_by_field_name("body") {
            class.docstring = self.docstring(body);
            self.class_body(body, &mut class);
        }
        class
    }

    fn bind(class: &mut ClassFacts, name: &str) {
        if !class.members.iter().any(|m| m == name) {
            class.members.push(name.to_string());
        }
    }

    fn class_body(&mut self, block: Node, class: &mut ClassFacts) {
        let mut c = block.walk();
        let stmts: Vec<Node> = block.named_children(&mut c).collect();
        for stmt in stmts {
            let (def, decos) = if stmt.kind() == "decorated_definition" {
                let mut c2 = stmt.walk();
                let decos: Vec<Node> = stmt
                    .named_children(&mut c2)
                    .filter(|n| n.kind() == "decorator")
                    .collect();
                match stmt.child_by_field_name("definition") {
                    Some(d) => (d, decos),
                    None => continue,
                }
            } else {
                (stmt, Vec::new())
            };
            match def.kind() {
                "function_definition" => {
                    let f = self.function(def, &decos, true);
                    if let Some(d) = &f.deco {
                        if d.bare {
                            let pos = d.pos;
                            let name = f.name.clone();
                            self.bare_warning(pos, &name);
                        }
                    }
                    if f.name == "__init__" {
                        if let Some(body) = def.child_by_field_name("body") {
                            class.init_capability_key = self
                                .init_capability_key(body, def)
                                .or(class.init_capability_key.take());
                        }
                    }
                    if let Some(body) = def.child_by_field_name("body") {
                        self.walk_block(body, Scope::Function);
                    }
                    Self::bind(class, &f.name);
                    let mut f = f;
                    if f.deco.as_ref().is_some_and(|d| d.bare) {
                        // Not registered by Colony: keep the name (it overrides) but no action.
                        f.deco = None;
                    }
                    class.funcs.insert(f.name.clone(), f);
                }
                "class_definition" => {
                    let inner = self.class(def, class.in_function);
                    Self::bind(class, &inner.name);
                    self.facts.classes.push(inner);
                }
                "expression_statement" => self.class_assignment(def, class),
                "if_statement" | "try_statement" | "with_statement" | "block" | "else_clause"
                | "elif_clause" | "except_clause" | "finally_clause" => {
                    let mut c2 = def.walk();
                    let kids: Vec<Node> = def.named_children(&mut c2).collect();
                    for k in kids {
                        if k.kind() == "block" || k.kind().ends_with("_clause") {
                            self.class_body(k, class);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn class_assignment(&mut self, stmt: Node, class: &mut ClassFacts) {
        let Some(assign) = stmt.named_child(0).filter(|n| n.kind() == "assignment") else {
            return;
        };
        let Some(left) = assign.child_by_field_name("left") else {
            return;
        };
        let right = assign.child_by_field_name("right");
        let ty = assign.child_by_field_name("type");
        let targets: Vec<Node> = match left.kind() {
            "identifier" => vec![left],
            "pattern_list" | "tuple_pattern" => {
                let mut c = left.walk();
                left.named_children(&mut c)
                    .filter(|n| n.kind() == "identifier")
                    .collect()
            }
            _ => Vec::new(),
        };
        for t in &targets {
            let name = self.text(*t).to_string();
            if right.is_some() {
                Self::bind(class, &name);
            }
            if let Some(r) = right {
                if let Some(s) = parse::literal_str(r, self.src) {
                    class.str_attrs.insert(name.clone(), s.clone());
                    class.enum_members.push((name.clone(), Some(s)));
                } else {
                    if let Some(v) = self.string_collection(r) {
                        class.strings_attrs.insert(name.clone(), v);
                    }
                    class.enum_members.push((name.clone(), None));
                }
            }
        }
        // Annotated field (pydantic model / dataclass).
        if let (Some(ty), [t]) = (ty, targets.as_slice()) {
            let name = self.text(*t).to_string();
            if name.starts_with('_') || self.text(ty).starts_with("ClassVar") {
                return;
            }
            let ty = clean_annotation(&self.one_line(ty, true));
            let (default, required) = match right {
                None => (None, true),
                Some(r) => self.field_default(r),
            };
            class.fields.push(Param {
                allowed: types::allowed_values(&ty),
                display_type: Some(types::colony_display(&ty)),
                ty: Some(ty),
                required,
                default,
                name,
                ..Default::default()
            });
        }
    }

    /// Default of a model field: `= value`, `= Field(default=...)`, `= Field(...)` (required),
    /// `= Field(default_factory=...)`.
    fn field_default(&self, r: Node) -> (Option<String>, bool) {
        let r = parse::unparenthesize(r);
        if r.kind() == "call" {
            let f = r
                .child_by_field_name("function")
                .and_then(|f| parse::dotted_name(f, self.src))
                .unwrap_or_default();
            if f.rsplit('.').next() == Some("Field") {
                let Some(args) = r.child_by_field_name("arguments") else {
                    return (None, true);
                };
                let mut c = args.walk();
                for a in args.named_children(&mut c) {
                    if a.kind() == "keyword_argument" {
                        let n = a
                            .child_by_field_name("name")
                            .map(|n| self.text(n))
                            .unwrap_or("");
                        let v = a
                            .child_by_field_name("value")
                            .map(|v| self.one_line(v, false))
                            .unwrap_or_default();
                        if n == "default" {
                            return (Some(v.clone()), v == "...");
                        }
                        if n == "default_factory" {
                            return (Some(format!("{v}()")), false);
                        }
                    } else if a.kind() != "comment" {
                        let v = self.one_line(a, false);
                        let req = v == "..." || v == "Ellipsis";
                        return (if req { None } else { Some(v) }, req);
                    }
                }
                return (None, true);
            }
        }
        (Some(self.one_line(r, false)), false)
    }

    /// `self._capability_key = "x"`, `self.capability_key = "x"`, or
    /// `super().__init__(..., capability_key="x")` (also through a parameter with a literal
    /// default) in an `__init__` body.
    fn init_capability_key(&self, body: Node, def: Node) -> Option<String> {
        let param_defaults: HashMap<String, String> = def
            .child_by_field_name("parameters")
            .map(|ps| {
                let mut c = ps.walk();
                ps.named_children(&mut c)
                    .filter(|p| matches!(p.kind(), "default_parameter" | "typed_default_parameter"))
                    .filter_map(|p| {
                        let n = self.text(p.child_by_field_name("name")?).to_string();
                        let v = parse::literal_str(p.child_by_field_name("value")?, self.src)?;
                        Some((n, v))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let value = |v: Node| -> Option<String> {
            parse::literal_str(v, self.src).or_else(|| {
                let v = parse::unparenthesize(v);
                (v.kind() == "identifier")
                    .then(|| param_defaults.get(self.text(v)).cloned())
                    .flatten()
            })
        };
        let mut found = None;
        for n in parse::walk(body) {
            match n.kind() {
                "assignment" => {
                    let (Some(l), Some(r)) = (
                        n.child_by_field_name("left"),
                        n.child_by_field_name("right"),
                    ) else {
                        continue;
                    };
                    let lt = self.text(l);
                    if lt == "self._capability_key" || lt == "self.capability_key" {
                        if let Some(v) = value(r) {
                            found = Some(v);
                        }
                    }
                }
                "call" => {
                    let Some(f) = n.child_by_field_name("function") else {
                        continue;
                    };
                    if !self.text(f).ends_with("__init__") {
                        continue;
                    }
                    let Some(args) = n.child_by_field_name("arguments") else {
                        continue;
                    };
                    let mut c = args.walk();
                    for a in args.named_children(&mut c) {
                        if a.kind() == "keyword_argument"
                            && a.child_by_field_name("name")
                                .is_some_and(|k| self.text(k) == "capability_key")
                        {
                            if let Some(v) = a.child_by_field_name("value").and_then(value) {
                                found = found.or(Some(v));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        found
    }
}

/// Renders `src[start..end]` on one line (see `Extractor::one_line`): `spans` are the sorted
/// `(start, end, protected)` byte ranges of string literals (protected: copied as they are) and
/// comments (dropped).
fn one_line_text(
    src: &str,
    start: usize,
    end: usize,
    spans: &[(usize, usize, bool)],
    annotation: bool,
) -> String {
    struct Out {
        text: String,
        pending_space: bool,
        /// The last character pushed ends a protected (string) piece.
        last_protected: bool,
        annotation: bool,
    }
    impl Out {
        fn plain(&mut self, piece: &str) {
            for c in piece.chars() {
                if c.is_whitespace() {
                    self.pending_space = !self.text.is_empty();
                    continue;
                }
                let prev = if self.last_protected {
                    None
                } else {
                    self.text.chars().next_back()
                };
                if matches!(c, ']' | ')' | '}') {
                    if self.annotation && prev == Some(',') {
                        self.text.pop();
                    }
                    self.pending_space = false;
                }
                self.separator(prev);
                self.text.push(c);
                self.last_protected = false;
            }
        }
        fn protected(&mut self, piece: &str) {
            let prev = if self.last_protected {
                None
            } else {
                self.text.chars().next_back()
            };
            self.separator(prev);
            self.text.push_str(piece);
            self.last_protected = true;
        }
        fn separator(&mut self, prev: Option<char>) {
            if self.pending_space && !matches!(prev, Some('[' | '(' | '{')) {
                self.text.push(' ');
            }
            self.pending_space = false;
        }
    }
    let end = end.min(src.len());
    let mut out = Out {
        text: String::with_capacity(end.saturating_sub(start)),
        pending_space: false,
        last_protected: false,
        annotation,
    };
    let mut at = start;
    for &(s, e, protected) in spans {
        if s < at || e > end {
            continue;
        }
        out.plain(src.get(at..s).unwrap_or(""));
        if protected {
            out.protected(src.get(s..e).unwrap_or(""));
        } else {
            // A comment ends its line: it separates what surrounds it.
            out.plain(" ");
        }
        at = e;
    }
    out.plain(src.get(at..end).unwrap_or(""));
    out.text
}

/// An annotation as written (already on one line, see `Extractor::one_line`), without the
/// quotes of a whole-string forward reference (`"Model"` -> `Model`).
fn clean_annotation(s: &str) -> String {
    let trimmed = s.trim();
    if trimmed.len() >= 2 {
        let (a, b) = (trimmed.as_bytes()[0], trimmed.as_bytes()[trimmed.len() - 1]);
        if (a == b'"' || a == b'\'')
            && a == b
            && !trimmed[1..trimmed.len() - 1].contains(['"', '\''])
        {
            return trimmed[1..trimmed.len() - 1].to_string();
        }
    }
    trimmed.to_string()
}

/// `inspect.cleandoc`: tabs expanded, the first line's leading whitespace and the common
/// indentation of the others removed, leading and trailing blank lines dropped.
pub fn cleandoc(doc: &str) -> String {
    let expanded = doc.replace('\t', "        ");
    let lines: Vec<&str> = expanded.lines().collect();
    if lines.is_empty() {
        return String::new();
    }
    let margin = lines[1..]
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    out.push(lines[0].trim_start().trim_end().to_string());
    for l in &lines[1..] {
        let cut = l
            .char_indices()
            .nth(margin)
            .map(|(i, _)| i)
            .unwrap_or(l.len());
        let cut = if l[..cut].trim().is_empty() { cut } else { 0 };
        out.push(l[cut..].trim_end().to_string());
    }
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

/// The first paragraph of a docstring on one line.
fn first_paragraph(doc: &str) -> String {
    doc.split("\n\n")
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parameter descriptions from a Google-style `Args:` section or Sphinx `:param x:` fields.
fn docstring_args(doc: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut in_args = false;
    let mut args_indent = 0usize;
    let mut current: Option<(String, String)> = None;
    let mut entry_indent = None::<usize>;
    let flush = |cur: &mut Option<(String, String)>, out: &mut HashMap<String, String>| {
        if let Some((n, d)) = cur.take() {
            out.insert(n, d.trim().to_string());
        }
    };
    for line in doc.lines() {
        let trimmed = line.trim();
        let indent = line.len() - line.trim_start().len();
        if let Some(rest) = trimmed.strip_prefix(":param ") {
            // `:param name: text` or `:param type name: text`
            if let Some((lhs, d)) = rest.split_once(':') {
                if let Some(n) = lhs.split_whitespace().last() {
                    flush(&mut current, &mut out);
                    current = Some((n.to_string(), d.trim().to_string()));
                    in_args = false;
                    continue;
                }
            }
        }
        if matches!(
            trimmed,
            "Args:" | "Arguments:" | "Parameters:" | "Keyword Args:" | "Keyword Arguments:"
        ) {
            flush(&mut current, &mut out);
            in_args = true;
            args_indent = indent;
            entry_indent = None;
            continue;
        }
        if !in_args {
            if let Some((_, d)) = &mut current {
                if trimmed.is_empty() || trimmed.starts_with(':') {
                    flush(&mut current, &mut out);
                } else {
                    d.push(' ');
                    d.push_str(trimmed);
                }
            }
            continue;
        }
        if trimmed.is_empty() {
            continue;
        }
        if indent <= args_indent {
            // A new section ends the arguments.
            flush(&mut current, &mut out);
            in_args = false;
            continue;
        }
        let ei = *entry_indent.get_or_insert(indent);
        if indent == ei {
            if let Some((lhs, d)) = trimmed.split_once(':') {
                let name = lhs
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches('*');
                if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    flush(&mut current, &mut out);
                    current = Some((name.to_string(), d.trim().to_string()));
                    continue;
                }
            }
        }
        if let Some((_, d)) = &mut current {
            d.push(' ');
            d.push_str(trimmed);
        }
    }
    flush(&mut current, &mut out);
    out
}

// ---------------------------------------------------------------------------------------------
// Skeleton: function bodies blanked before parsing
// ---------------------------------------------------------------------------------------------

/// Functions whose bodies the extractor reads (dispatch keys, group tags and descriptions,
/// enum `__str__`).
const KEEP_BODIES: [&str; 7] = [
    // A module's own `action_executor`: its signature tells Colony's factory from another
    // framework's decorator of the same name.
    "action_executor",
    "__init__",
    "capability_key",
    "get_capability_name",
    "get_capability_tags",
    "get_action_group_description",
    "__str__",
];

/// One logical line: byte range (the newline included) and the indentation of its first
/// physical line, in bytes.
#[derive(Debug, Clone, Copy)]
struct LogicalLine {
    start: usize,
    end: usize,
    indent: usize,
    /// End of the code before a trailing comment (for the `:` test).
    code_end: usize,
}

/// Splits Python text into logical lines (brackets, strings and backslash continuations
/// join physical lines). A best-effort tokenizer: it only has to be right often; the caller
/// checks its output.
fn logical_lines(text: &str) -> Vec<LogicalLine> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let mut indent = 0;
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
            indent += 1;
        }
        let mut depth = 0i32;
        let mut code_end = None;
        loop {
            if i >= b.len() {
                break;
            }
            match b[i] {
                b'\n' => {
                    if depth > 0 {
                        i += 1;
                        continue;
                    }
                    i += 1;
                    break;
                }
                b'\\' => {
                    i += 2;
                }
                b'#' => {
                    code_end.get_or_insert(i);
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    if depth > 0 {
                        code_end = None;
                    }
                }
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    i += 1;
                }
                b')' | b']' | b'}' => {
                    depth = (depth - 1).max(0);
                    i += 1;
                }
                q @ (b'"' | b'\'') => {
                    // A prefix (r, b, f, u...) is just letters before the quote; raw strings
                    // still cannot end on an escaped quote, so escapes are skipped alike.
                    let triple = i + 2 < b.len() && b[i + 1] == q && b[i + 2] == q;
                    if triple {
                        i += 3;
                        while i < b.len() {
                            if b[i] == b'\\' {
                                i += 2;
                            } else if b[i] == q && i + 2 < b.len() && b[i + 1] == q && b[i + 2] == q
                            {
                                i += 3;
                                break;
                            } else {
                                i += 1;
                            }
                        }
                    } else {
                        i += 1;
                        while i < b.len() && b[i] != b'\n' {
                            if b[i] == b'\\' {
                                i += 2;
                            } else if b[i] == q {
                                i += 1;
                                break;
                            } else {
                                i += 1;
                            }
                        }
                    }
                }
                _ => i += 1,
            }
        }
        let end = i.min(b.len());
        let ce = code_end.unwrap_or(end);
        out.push(LogicalLine {
            start,
            end,
            indent,
            code_end: ce,
        });
    }
    out
}

/// The function name of a `def` / `async def` logical line whose body starts on the next
/// line, else `None`.
fn def_header<'t>(text: &'t str, l: &LogicalLine) -> Option<&'t str> {
    let line = text.get(l.start + l.indent..l.end)?;
    let rest = line
        .strip_prefix("async ")
        .map(str::trim_start)
        .unwrap_or(line)
        .strip_prefix("def ")?;
    let code = text.get(l.start..l.code_end)?.trim_end();
    if !code.ends_with(':') {
        return None;
    }
    let name_end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..name_end])
}

/// A skeleton of a Python file: the text with unneeded function bodies removed, and the
/// original zero-based row of each of its rows.
#[derive(Debug)]
struct Skeleton {
    text: String,
    rows: Vec<u32>,
    /// Docstrings taken out of the text (decoded), by the skeleton row of the `""` left in
    /// their place: lexing long docstrings is a large share of a parse.
    docs: HashMap<u32, String>,
    /// Classes whose field-only bodies were removed.
    stripped: Vec<String>,
}

/// Removes what the extractor does not need, so the parse (the cost of a scan) is small:
/// - the body of every function, keeping the docstring of a decorated function (taken out into
///   [`Skeleton::docs`]) or else a `0` statement, so the text still parses;
/// - the whole signature of an undecorated function (`def name(): 0`): only its name matters
///   (it may override an action);
/// - with `strip_data`, the body of a class made only of annotated fields (a pydantic model or
///   a dataclass), whose name is returned in [`Skeleton::stripped`]: the caller re-reads the
///   file without stripping when a decorator names that class as `input_schema`.
///
/// Whole lines are removed or rewritten, so every other line is unchanged and
/// [`Skeleton::rows`] maps it back. Bodies mentioning `action_executor` or `class ` are kept
/// (nested definitions), as are those of [`KEEP_BODIES`], and any body in which a line at or
/// left of the header's indentation looks like a definition (a tokenizer confusion is resolved
/// on the safe side). `None` when nothing was removed.
fn skeleton(text: &str, strip_data: bool) -> Option<Skeleton> {
    let lines = logical_lines(text);
    // (start, end, replacement, docstring taken out) byte edits, in order and disjoint.
    let mut edits: Vec<(usize, usize, String, Option<String>)> = Vec::new();
    let mut stripped = Vec::new();
    let is_blank = |l: &LogicalLine| {
        let t = text.get(l.start..l.end).unwrap_or("").trim();
        t.is_empty() || t.starts_with('#')
    };
    let code = |l: &LogicalLine| {
        text.get(l.start + l.indent..l.code_end)
            .unwrap_or("")
            .trim_end()
    };
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let def_name = def_header(text, &l);
        let class_name = if def_name.is_none() && strip_data {
            class_header(text, &l)
        } else {
            None
        };
        if def_name.is_none() && class_name.is_none() {
            i += 1;
            continue;
        }
        // Body: following lines more indented than the header (blank lines included).
        let mut j = i + 1;
        let mut last_code = None;
        while j < lines.len() && (is_blank(&lines[j]) || lines[j].indent > l.indent) {
            if !is_blank(&lines[j]) {
                last_code = Some(j);
            }
            j += 1;
        }
        let Some(last) = last_code else {
            i += 1;
            continue;
        };
        let body_start = lines[i + 1].start;
        let body_end = lines[last].end;
        let body = &text[body_start..body_end];
        if !text[..body_end].ends_with('\n') {
            i += 1;
            continue;
        }
        let first = (i + 1..=last)
            .find(|&k| !is_blank(&lines[k]))
            .unwrap_or(last);
        let fl = lines[first];
        let first_text = &text[fl.start + fl.indent..fl.end];
        let starts_string = |t: &str| {
            t.trim_start_matches(['r', 'R', 'u', 'U'])
                .starts_with(['"', '\''])
        };
        if let Some(class) = class_name {
            // Only annotated fields (and a docstring, `pass`, `...`), all at the body's indent.
            let data_only = !body.contains("capability_key")
                && !body.contains("_action_")
                && (first..=last).filter(|&k| !is_blank(&lines[k])).all(|k| {
                    let c = code(&lines[k]);
                    lines[k].indent == fl.indent
                        && ((k == first && starts_string(c))
                            || c == "pass"
                            || c == "..."
                            || is_annotated_field(c))
                });
            if data_only {
                stripped.push(class.to_string());
                edits.push((fl.start + fl.indent, body_end, "0\n".into(), None));
                i = last + 1;
            } else {
                i += 1;
            }
            continue;
        }
        let name = def_name.unwrap_or_default();
        let unsafe_body = KEEP_BODIES.contains(&name)
            || body.contains("action_executor")
            || body.contains("class ")
            || body.lines().any(|pl| {
                let t = pl.trim_start();
                let ind = pl.len() - t.len();
                !t.is_empty()
                    && ind <= l.indent
                    && (t.starts_with("def ")
                        || t.starts_with("async ")
                        || t.starts_with('@')
                        || t.starts_with("class "))
            });
        if unsafe_body {
            i += 1;
            continue;
        }
        let decorated = (0..i)
            .rev()
            .find(|&k| !is_blank(&lines[k]))
            .is_some_and(|k| {
                lines[k].indent == l.indent
                    && text[lines[k].start + lines[k].indent..].starts_with('@')
            });
        if !decorated {
            edits.push((
                l.start + l.indent,
                body_end,
                format!("def {name}(): 0\n"),
                None,
            ));
            i = last + 1;
            continue;
        }
        // A decorated function: keep its docstring (an action's description), else put `0`
        // in place of the first statement.
        let decoded = if starts_string(first_text) {
            match types::python_literal_to_json(first_text.trim()) {
                Some(serde_json::Value::String(d)) => Some(d),
                _ => None,
            }
        } else {
            None
        };
        if let Some(doc) = decoded {
            edits.push((fl.start + fl.indent, body_end, "\"\"\n".into(), Some(doc)));
        } else if starts_string(first_text) {
            if first < last {
                edits.push((lines[first + 1].start, body_end, String::new(), None));
            }
        } else {
            edits.push((fl.start + fl.indent, body_end, "0\n".into(), None));
        }
        i = last + 1;
    }
    if edits.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len() / 2);
    let mut rows: Vec<u32> = vec![0];
    let mut docs = HashMap::new();
    let mut orig_row: u32 = 0;
    let mut pos = 0;
    let newlines = |s: &str| u32::try_from(s.bytes().filter(|&b| b == b'\n').count()).unwrap_or(0);
    for (start, end, replacement, doc) in edits {
        let kept = &text[pos..start];
        out.push_str(kept);
        for _ in kept.bytes().filter(|&b| b == b'\n') {
            orig_row += 1;
            rows.push(orig_row);
        }
        orig_row += newlines(&text[start..end]);
        if replacement.is_empty() {
            // The removal starts at a line start: the current output row now holds the
            // original row at `end`.
            if let Some(last) = rows.last_mut() {
                *last = orig_row;
            }
        } else {
            if let Some(d) = doc {
                docs.insert(u32::try_from(rows.len() - 1).unwrap_or(u32::MAX), d);
            }
            out.push_str(&replacement);
            rows.push(orig_row);
        }
        pos = end;
    }
    let rest = &text[pos..];
    out.push_str(rest);
    for _ in rest.bytes().filter(|&b| b == b'\n') {
        orig_row += 1;
        rows.push(orig_row);
    }
    Some(Skeleton {
        text: out,
        rows,
        docs,
        stripped,
    })
}

/// The class name of a `class Name...:` logical line whose body starts on the next line.
fn class_header<'t>(text: &'t str, l: &LogicalLine) -> Option<&'t str> {
    let rest = text
        .get(l.start + l.indent..l.end)?
        .strip_prefix("class ")?;
    let code = text.get(l.start..l.code_end)?.trim_end();
    if !code.ends_with(':') {
        return None;
    }
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// `name: annotation` or `name: annotation = value` (a class-level field).
fn is_annotated_field(code: &str) -> bool {
    let Some((name, rest)) = code.split_once(':') else {
        return false;
    };
    let name = name.trim_end();
    !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && !matches!(name, "else" | "try" | "finally" | "lambda" | "except")
        && !rest.trim().is_empty()
        && !rest.starts_with('=')
}

// ---------------------------------------------------------------------------------------------
// Linking (sequential): class resolution, MRO, keys
// ---------------------------------------------------------------------------------------------

/// A class reference after resolution.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ClassRef {
    /// (file index, class index).
    Known(usize, usize),
    /// A base outside the scanned sources, by its last name segment.
    External(String),
}

struct Linker<'a> {
    files: Vec<(usize, &'a FileFacts)>,
    by_name: HashMap<&'a str, Vec<(usize, usize)>>,
    mro_cache: HashMap<(usize, usize), Vec<ClassRef>>,
    warnings: Vec<KbWarning>,
}

impl<'a> Linker<'a> {
    fn class(&self, fi: usize, ci: usize) -> &'a ClassFacts {
        &self.files[fi].1.classes[ci]
    }

    fn file(&self, fi: usize) -> &'a FileFacts {
        self.files[fi].1
    }

    fn module_matches(file_module: &str, wanted: &str) -> bool {
        !wanted.is_empty()
            && (file_module == wanted
                || file_module.ends_with(&format!(".{wanted}"))
                || wanted.ends_with(&format!(".{file_module}")))
    }

    /// Resolves a class reference written in file `fi`.
    fn resolve(&self, fi: usize, written: &str) -> ClassRef {
        let file = self.file(fi);
        let last = written.rsplit('.').next().unwrap_or(written);
        let candidates = self.by_name.get(last).cloned().unwrap_or_default();
        if !written.contains('.') {
            if let Some(&(f, c)) = candidates
                .iter()
                .find(|(f, c)| *f == fi && !self.class(*f, *c).in_function)
            {
                return ClassRef::Known(f, c);
            }
            if let Some((module, orig)) = file.imports.get(written) {
                let orig_last = orig.rsplit('.').next().unwrap_or(orig);
                let cands = self.by_name.get(orig_last).cloned().unwrap_or_default();
                if let Some(&(f, c)) = cands
                    .iter()
                    .find(|(f, _)| Self::module_matches(&self.file(*f).module, module))
                {
                    return ClassRef::Known(f, c);
                }
                if let Some(&(f, c)) = cands.first() {
                    return ClassRef::Known(f, c);
                }
                return ClassRef::External(orig_last.to_string());
            }
        } else {
            let first = written.split('.').next().unwrap_or("");
            let module = file.imports.get(first).map(|(m, o)| {
                let base = if o.is_empty() {
                    m.clone()
                } else {
                    format!("{m}.{o}")
                };
                let mid = written[first.len()..]
                    .trim_start_matches('.')
                    .rsplit_once('.')
                    .map(|(m, _)| m.to_string())
                    .unwrap_or_default();
                if mid.is_empty() {
                    base
                } else {
                    format!("{base}.{mid}")
                }
            });
            if let Some(module) = module {
                if let Some(&(f, c)) = candidates
                    .iter()
                    .find(|(f, _)| Self::module_matches(&self.file(*f).module, &module))
                {
                    return ClassRef::Known(f, c);
                }
            }
        }
        match candidates.as_slice() {
            [] => ClassRef::External(last.to_string()),
            [only] => ClassRef::Known(only.0, only.1),
            many => {
                // Prefer a module-level class; then the first in path order.
                let pick = many
                    .iter()
                    .find(|(f, c)| !self.class(*f, *c).in_function)
                    .unwrap_or(&many[0]);
                ClassRef::Known(pick.0, pick.1)
            }
        }
    }

    fn direct_bases(&self, fi: usize, ci: usize) -> Vec<ClassRef> {
        self.class(fi, ci)
            .bases
            .iter()
            .filter(|b| b.as_str() != "object")
            .map(|b| self.resolve(fi, b))
            .filter(|r| *r != ClassRef::Known(fi, ci))
            .collect()
    }

    /// C3 linearisation (falls back to depth-first order when the hierarchy is inconsistent or
    /// cyclic).
    fn mro(&mut self, fi: usize, ci: usize) -> Vec<ClassRef> {
        let mut stack = Vec::new();
        self.mro_inner(fi, ci, &mut stack)
    }

    fn mro_inner(
        &mut self,
        fi: usize,
        ci: usize,
        stack: &mut Vec<(usize, usize)>,
    ) -> Vec<ClassRef> {
        if let Some(m) = self.mro_cache.get(&(fi, ci)) {
            return m.clone();
        }
        let me = ClassRef::Known(fi, ci);
        if stack.contains(&(fi, ci)) || stack.len() > 64 {
            return vec![me];
        }
        stack.push((fi, ci));
        let bases = self.direct_bases(fi, ci);
        let mut seqs: Vec<Vec<ClassRef>> = Vec::new();
        for b in &bases {
            seqs.push(match b {
                ClassRef::Known(f, c) => self.mro_inner(*f, *c, stack),
                ext => vec![ext.clone()],
            });
        }
        seqs.push(bases.clone());
        stack.pop();
        let mut out = vec![me];
        match c3_merge(seqs.clone()) {
            Some(m) => out.extend(m),
            None => {
                for s in seqs {
                    for r in s {
                        if !out.contains(&r) {
                            out.push(r);
                        }
                    }
                }
            }
        }
        self.mro_cache.insert((fi, ci), out.clone());
        out
    }
}

fn c3_merge(mut seqs: Vec<Vec<ClassRef>>) -> Option<Vec<ClassRef>> {
    let mut out = Vec::new();
    loop {
        seqs.retain(|s| !s.is_empty());
        if seqs.is_empty() {
            return Some(out);
        }
        let mut chosen = None;
        for s in &seqs {
            let head = &s[0];
            if !seqs.iter().any(|t| t[1..].contains(head)) {
                chosen = Some(head.clone());
                break;
            }
        }
        let head = chosen?;
        for s in &mut seqs {
            if s.first() == Some(&head) {
                s.remove(0);
            }
        }
        out.push(head);
    }
}

/// How a provider class's middle key segment is decided.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Dispatch {
    /// A fixed string (capability key or class name).
    Fixed(String),
    /// Random per process (agents, policies, plain provider objects).
    Dynamic,
}

fn is_agent_like(name: &str) -> bool {
    name == "Agent"
        || name == "ActionPolicy"
        || name.ends_with("Agent")
        || name.ends_with("ActionPolicy")
        || name.ends_with("Policy")
}

fn is_capability_like(name: &str) -> bool {
    name == "AgentCapability" || name.ends_with("Capability")
}

/// Bases that say nothing about what a class is.
fn is_neutral_base(name: &str) -> bool {
    matches!(
        name,
        "ABC" | "Generic" | "Protocol" | "object" | "BaseModel" | "Enum" | "str" | "int"
    )
}

fn link(inputs: &[Arc<SourceText>], facts: &[Option<Arc<FileFacts>>]) -> ScanResult {
    let files: Vec<(usize, &FileFacts)> = facts
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.as_deref().map(|f| (i, f)))
        .collect();
    let mut by_name: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for (fi, (_, f)) in files.iter().enumerate() {
        for (ci, c) in f.classes.iter().enumerate() {
            by_name.entry(c.name.as_str()).or_default().push((fi, ci));
        }
    }
    let mut linker = Linker {
        files,
        by_name,
        mro_cache: HashMap::new(),
        warnings: Vec::new(),
    };
    let mut kb = KnowledgeBase::new();
    for (_, f) in &linker.files {
        linker.warnings.extend(f.warnings.iter().cloned());
    }
    for fi in 0..linker.files.len() {
        let nclasses = linker.file(fi).classes.len();
        for ci in 0..nclasses {
            register_class(&mut linker, &mut kb, fi, ci);
        }
        let nfuncs = linker.file(fi).functions.len();
        for i in 0..nfuncs {
            register_function(&mut linker, &mut kb, fi, i);
        }
    }
    if !kb.actions.is_empty() {
        kb.add_colony_pseudo_keys();
    }
    ScanResult {
        kb,
        warnings: linker.warnings,
        files_scanned: inputs.len(),
        files_parsed: linker.files.len(),
        files_parsed_now: 0,
    }
}

/// The names of every class in an MRO (known classes by name, external bases by last segment).
fn mro_names(linker: &Linker, mro: &[ClassRef]) -> Vec<String> {
    mro.iter()
        .map(|r| match r {
            ClassRef::Known(f, c) => linker.class(*f, *c).name.clone(),
            ClassRef::External(n) => n.clone(),
        })
        .collect()
}

/// First value found in MRO order.
fn mro_find<'a, T>(
    linker: &Linker<'a>,
    mro: &[ClassRef],
    mut get: impl FnMut(&'a ClassFacts) -> Option<T>,
) -> Option<T> {
    mro.iter().find_map(|r| match r {
        ClassRef::Known(f, c) => get(linker.class(*f, *c)),
        ClassRef::External(_) => None,
    })
}

fn literal_str_of(f: &FuncFacts) -> Option<String> {
    match &f.returns_literal {
        Some(LiteralValue::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

fn register_class(linker: &mut Linker, kb: &mut KnowledgeBase, fi: usize, ci: usize) {
    let class = linker.class(fi, ci);
    let mro = linker.mro(fi, ci);
    // Does anything in the MRO carry an action?
    let has_action = mro.iter().any(|r| match r {
        ClassRef::Known(f, c) => linker
            .class(*f, *c)
            .funcs
            .values()
            .any(|m| m.deco.is_some()),
        ClassRef::External(_) => false,
    });
    if !has_action {
        return;
    }
    // Walk the MRO: the first class binding a name decides it.
    let mut seen: HashSet<&str> = HashSet::new();
    let mut chosen: Vec<(usize, usize, &FuncFacts)> = Vec::new();
    let mut abstract_left: Vec<&str> = Vec::new();
    for r in &mro {
        let ClassRef::Known(f, c) = r else { continue };
        let cf = linker.class(*f, *c);
        for name in &cf.members {
            if !seen.insert(name.as_str()) {
                continue;
            }
            if let Some(func) = cf.funcs.get(name) {
                if func.is_abstract {
                    abstract_left.push(name.as_str());
                }
                if func.deco.is_some() {
                    chosen.push((*f, *c, func));
                }
            }
        }
    }
    if !abstract_left.is_empty() {
        return;
    }
    let names = mro_names(linker, &mro);
    // The middle segment.
    let cap_key = mro_find(linker, &mro, |c| {
        c.str_attrs
            .get("_capability_key")
            .cloned()
            .or_else(|| c.init_capability_key.clone())
    })
    .or_else(|| {
        mro_find(linker, &mro, |c| {
            c.str_attrs.get("capability_key").cloned().or_else(|| {
                c.funcs
                    .get("capability_key")
                    .and_then(literal_str_of)
                    .or_else(|| c.funcs.get("get_capability_name").and_then(literal_str_of))
            })
        })
    });
    let capability = names.iter().skip(1).any(|n| is_capability_like(n));
    let agent = names.iter().skip(1).any(|n| is_agent_like(n));
    let has_external_base = mro.iter().skip(1).any(|r| match r {
        ClassRef::External(n) => !is_neutral_base(n),
        _ => false,
    });
    let has_known_base = mro.iter().skip(1).any(|r| matches!(r, ClassRef::Known(..)));
    let dispatch = match cap_key {
        Some(k) => Dispatch::Fixed(k),
        None if capability => Dispatch::Fixed(class.name.clone()),
        None if agent => Dispatch::Dynamic,
        // A base outside the scanned sources is most likely a capability base.
        None if has_external_base || has_known_base => Dispatch::Fixed(class.name.clone()),
        None => Dispatch::Dynamic,
    };
    let (mid, group_key, dynamic) = match &dispatch {
        Dispatch::Fixed(k) => (k.clone(), k.clone(), false),
        Dispatch::Dynamic => ("*".to_string(), format!("{}.*", class.name), true),
    };
    let tags = mro_find(linker, &mro, |c| {
        c.funcs
            .get("get_capability_tags")
            .and_then(|f| match &f.returns_literal {
                Some(LiteralValue::Strings(v)) => Some(v.clone()),
                Some(LiteralValue::Str(s)) => Some(vec![s.clone()]),
                _ => None,
            })
            .or_else(|| c.strings_attrs.get("_action_tags").cloned())
    })
    .unwrap_or_default();
    let planning = tags.iter().any(|t| t == "planning");
    let description = mro_find(linker, &mro, |c| {
        c.str_attrs
            .get("_action_group_description")
            .cloned()
            .or_else(|| {
                c.funcs
                    .get("get_action_group_description")
                    .and_then(literal_str_of)
            })
    })
    .or_else(|| class.docstring.clone());
    let path = linker.file(fi).path.clone();
    kb.upsert_group(Group {
        group_key: group_key.clone(),
        provider_class: Some(class.name.clone()),
        dispatch_key: Some(mid.clone()),
        dynamic,
        description,
        tags,
        source_path: Some(path.clone()),
    });
    if dynamic {
        kb.add_dynamic_segment(&format!("{}.*", class.name));
    }
    // Colony fills a dict in MRO order: a later registration of the same key replaces the
    // earlier one but keeps its position.
    let mut order: Vec<String> = Vec::new();
    let mut winners: HashMap<String, (usize, usize, &FuncFacts, Option<String>)> = HashMap::new();
    for (f, c, func) in chosen {
        let Some(deco) = &func.deco else { continue };
        let (action_key, expr) = evaluate_action_key(linker, f, deco, &func.name);
        let key = format!("{}.{mid}.{action_key}", class.name);
        let where_ = format!("{}.{}", linker.class(f, c).name, func.name);
        if let Some((pf, pc, prev, _)) = winners.get(&key) {
            let prev = format!("{}.{}", linker.class(*pf, *pc).name, prev.name);
            let pos = deco.pos;
            linker.warnings.push(KbWarning {
                path: linker.file(f).path.clone(),
                line: Some(pos.line as usize),
                column: Some(pos.column as usize),
                message: format!("`{prev}` and `{where_}` both register `{key}`; Colony keeps the one met last in MRO order (`{where_}`)"),
            });
        } else {
            order.push(key.clone());
        }
        winners.insert(key, (f, c, func, expr));
    }
    for key in order {
        let Some((f, _, func, expr)) = winners.remove(&key) else {
            continue;
        };
        let Some(deco) = &func.deco else { continue };
        let action = build_action(
            linker,
            f,
            func,
            deco,
            key,
            Some(group_key.clone()),
            expr,
            planning,
            dynamic,
        );
        kb.insert(action);
    }
}

fn register_function(linker: &mut Linker, kb: &mut KnowledgeBase, fi: usize, i: usize) {
    let func = &linker.file(fi).functions[i];
    let Some(deco) = &func.deco else { return };
    let (key, expr) = evaluate_action_key(linker, fi, deco, &func.name);
    let group_key = format!("func.{}", func.name);
    kb.upsert_group(Group {
        group_key: group_key.clone(),
        provider_class: None,
        dispatch_key: None,
        dynamic: false,
        description: Some(format!("Actions from function {}", func.name)),
        tags: deco.tags.clone(),
        source_path: Some(linker.file(fi).path.clone()),
    });
    // A first parameter typed as an Agent is injected by the dispatcher.
    let inject_first = func.first_param.as_ref().is_some_and(|(_, ty)| {
        ty.as_deref().is_some_and(|t| {
            let h = types::head(t);
            h == "Agent" || h.ends_with("Agent")
        })
    });
    let mut action = build_action(
        linker,
        fi,
        func,
        deco,
        key,
        Some(group_key),
        expr,
        false,
        false,
    );
    if inject_first {
        if let Some((name, _)) = &func.first_param {
            if action.params.first().is_some_and(|p| &p.name == name) {
                action.params.remove(0);
            }
        }
    }
    kb.insert(action);
}

/// The key string Colony registers for a decorator's `action_key`, and the expression as
/// written when it was not a literal.
fn evaluate_action_key(
    linker: &mut Linker,
    fi: usize,
    deco: &DecoratorArgs,
    method: &str,
) -> (String, Option<String>) {
    match &deco.action_key {
        None => (method.to_string(), None),
        Some(KeyExpr::Str(s)) if s.is_empty() => (method.to_string(), None),
        Some(KeyExpr::Str(s)) => (s.clone(), None),
        Some(KeyExpr::Name(n)) => match resolve_name_value(linker, fi, n) {
            Some(v) => (v, Some(n.clone())),
            None => {
                let pos = deco.pos;
                linker.warnings.push(KbWarning {
                    path: linker.file(fi).path.clone(),
                    line: Some(pos.line as usize),
                    column: Some(pos.column as usize),
                    message: format!("`action_key={n}` cannot be evaluated from the scanned sources; the method name `{method}` is used"),
                });
                (method.to_string(), Some(n.clone()))
            }
        },
        Some(KeyExpr::Other(e)) => {
            let pos = deco.pos;
            linker.warnings.push(KbWarning {
                path: linker.file(fi).path.clone(),
                line: Some(pos.line as usize),
                column: Some(pos.column as usize),
                message: format!(
                    "`action_key={e}` is not a constant; the method name `{method}` is used"
                ),
            });
            (method.to_string(), Some(e.clone()))
        }
    }
}

/// The string value of a name used as `action_key` or `planning_summary`: a module constant
/// (here or imported), a class constant `C.NAME`, or an enum member `E.M` (`str(E.M)`).
fn resolve_name_value(linker: &mut Linker, fi: usize, name: &str) -> Option<String> {
    let file = linker.file(fi);
    if !name.contains('.') {
        if let Some(v) = file.constants.get(name) {
            return Some(v.clone());
        }
        let (module, orig) = file.imports.get(name)?;
        let orig = orig.clone();
        let module = module.clone();
        for (_, f) in &linker.files {
            if Linker::module_matches(&f.module, &module) {
                if let Some(v) = f.constants.get(&orig) {
                    return Some(v.clone());
                }
            }
        }
        return linker
            .files
            .iter()
            .find_map(|(_, f)| f.constants.get(&orig).cloned());
    }
    let (owner, member) = name.rsplit_once('.')?;
    let owner_ref = linker.resolve(fi, owner);
    match owner_ref {
        ClassRef::Known(f, c) => {
            let mro = linker.mro(f, c);
            let names = mro_names(linker, &mro);
            let is_enum = names.iter().any(|n| {
                matches!(
                    n.as_str(),
                    "Enum" | "StrEnum" | "IntEnum" | "ReprEnum" | "Flag" | "IntFlag"
                )
            });
            let class = linker.class(f, c);
            if !is_enum {
                return class.str_attrs.get(member).cloned();
            }
            if !class.enum_members.iter().any(|(m, _)| m == member) {
                return None;
            }
            let value = class
                .enum_members
                .iter()
                .find(|(m, _)| m == member)
                .and_then(|(_, v)| v.clone());
            let str_is_value = names.iter().any(|n| n == "StrEnum")
                || mro_find(linker, &mro, |c| {
                    c.funcs
                        .get("__str__")
                        .map(|f| f.returns_literal == Some(LiteralValue::SelfValue))
                })
                .unwrap_or(false);
            if str_is_value {
                value
            } else {
                Some(format!("{}.{member}", class.name))
            }
        }
        ClassRef::External(owner_name) => {
            // An enum outside the sources: Colony's `ActionType` is a `(str, Enum)`, whose
            // `str()` is `ActionType.MEMBER`. Other owners cannot be evaluated.
            if owner_name == "ActionType" {
                Some(format!("ActionType.{member}"))
            } else {
                None
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn build_action(
    linker: &mut Linker,
    fi: usize,
    func: &FuncFacts,
    deco: &DecoratorArgs,
    key: String,
    group: Option<String>,
    action_key_expr: Option<String>,
    planning: bool,
    dynamic: bool,
) -> Action {
    let path = linker.file(fi).path.clone();
    let pos = deco.pos;
    for (arg, expr) in &deco.unreadable {
        linker.warnings.push(KbWarning {
            path: path.clone(),
            line: Some(pos.line as usize),
            column: Some(pos.column as usize),
            message: format!(
                "`{arg}={expr}` on `{}` cannot be read statically; Colony's default is assumed",
                func.name
            ),
        });
    }
    let planning_summary = match &deco.planning_summary {
        Some(KeyExpr::Str(s)) => Some(s.clone()),
        Some(KeyExpr::Name(n)) => resolve_name_value(linker, fi, n),
        _ => None,
    };
    if planning_summary.as_deref().is_none_or(str::is_empty)
        && func.docstring.as_deref().is_none_or(str::is_empty)
        && !deco.exclude_from_planning.unwrap_or(false)
    {
        linker.warnings.push(KbWarning {
            path: path.clone(),
            line: Some(func.pos.line as usize),
            column: Some(func.pos.column as usize),
            message: format!("action `{key}` has neither `planning_summary` nor a docstring: Colony raises `ValueError` when it builds the prompt"),
        });
    }
    if !func.is_async {
        linker.warnings.push(KbWarning {
            path: path.clone(),
            line: Some(func.pos.line as usize),
            column: Some(func.pos.column as usize),
            message: format!("action `{key}` is not `async`: Colony's dispatcher awaits what `{}` returns, so the call fails with a TypeError unless it returns an awaitable", func.name),
        });
    }
    let mut params = func.params.clone();
    let mut accepts_kwargs = func.accepts_kwargs;
    if let Some(schema) = &deco.input_schema {
        match linker.resolve(fi, schema) {
            ClassRef::Known(f, c) => {
                let mro = linker.mro(f, c);
                let mut fields: Vec<Param> = Vec::new();
                for r in mro.iter().rev() {
                    if let ClassRef::Known(f2, c2) = r {
                        for p in &linker.class(*f2, *c2).fields {
                            fields.retain(|q| q.name != p.name);
                            fields.push(p.clone());
                        }
                    }
                }
                params = fields;
                // Pydantic models ignore unknown fields unless configured otherwise.
                accepts_kwargs = false;
            }
            ClassRef::External(_) => linker.warnings.push(KbWarning {
                path: path.clone(),
                line: Some(pos.line as usize),
                column: Some(pos.column as usize),
                message: format!("`input_schema={schema}` is not in the scanned sources; parameters are read from the signature of `{}`", func.name),
            }),
        }
    }
    let summary = planning_summary
        .clone()
        .filter(|s| !s.is_empty())
        .or_else(|| func.docstring.as_deref().map(first_paragraph))
        .filter(|s| !s.is_empty());
    let short_key = key.rsplit('.').next().unwrap_or(&key).to_string();
    Action {
        short_key,
        group,
        summary,
        params,
        accepts_extra_kwargs: accepts_kwargs,
        extra_kwargs_unknown: false,
        is_async: func.is_async,
        exclude_from_planning: deco.exclude_from_planning.unwrap_or(false),
        planning,
        dynamic_segment: dynamic,
        source: Some(DefinitionLocation {
            path,
            line: func.pos.line,
            column: func.pos.column,
        }),
        returns: func.returns.clone(),
        method: Some(func.name.clone()),
        docstring: func.docstring.clone().filter(|d| !d.is_empty()),
        tags: deco.tags.clone(),
        emits_lifecycle: Some(deco.emits_lifecycle.unwrap_or(true)),
        interruptible: Some(deco.interruptible.unwrap_or(false)),
        action_key_expr,
        key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(files: &[(&str, &str)]) -> ScanResult {
        let v: Vec<(String, String)> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        scan_sources(&v)
    }

    fn keys(r: &ScanResult) -> Vec<&str> {
        r.kb.actions.iter().map(|a| a.key.as_str()).collect()
    }

    const CAP: &str =
        "from colony.dispatcher import action_executor\nfrom colony.base import AgentCapability\n";

    #[test]
    fn decorator_forms_and_aliases() {
        let src = "from colony.dispatcher import action_executor as ae\nimport colony.dispatcher as d\nfrom colony import dispatcher\nfrom colony.base import AgentCapability\nexe = d.action_executor\n\nclass C(AgentCapability):\n    @ae()\n    async def a(self): \"\"\"A.\"\"\"\n    @d.action_executor(planning_summary='B.')\n    async def b(self): pass\n    @dispatcher.action_executor\n    async def bare(self): \"\"\"x\"\"\"\n    @exe(action_key='see')\n    def c(self): \"\"\"C.\"\"\"\n    @other()\n    async def not_action(self): \"\"\"n\"\"\"\n";
        let r = scan(&[("m.py", src)]);
        assert_eq!(keys(&r), vec!["C.C.a", "C.C.b", "C.C.see"]);
        assert!(!r.kb.actions[2].is_async);
        assert_eq!(r.kb.actions[1].summary.as_deref(), Some("B."));
        assert_eq!(r.warnings.len(), 2);
        assert!(r.warnings[0]
            .message
            .starts_with("bare `@action_executor` on `bare`"));
        assert_eq!(
            (r.warnings[0].line, r.warnings[0].column),
            (Some(12), Some(5))
        );
        assert_eq!(r.warnings[1].message, "action `C.C.see` is not `async`: Colony's dispatcher awaits what `c` returns, so the call fails with a TypeError unless it returns an awaitable");
    }

    #[test]
    fn parameters_from_signature() {
        let src = format!("{CAP}class C(AgentCapability):\n    @action_executor()\n    async def f(self, a, b: list[str], c: Literal['x', \"y\"] = 'x', d: int | None = None,\n                *, e: dict[\n                    str, int\n                ], f: bool = False, **kw) -> dict[str, Any]:\n        '''F.\n\n        Args:\n            a: The a.\n            b (list[str]): The b,\n                continued.\n        '''\n");
        let r = scan(&[("m.py", &src)]);
        let f = &r.kb.actions[0];
        type Row<'a> = (&'a str, Option<&'a str>, bool, Option<&'a str>, bool);
        let got: Vec<Row> = f
            .params
            .iter()
            .map(|p| {
                (
                    p.name.as_str(),
                    p.ty.as_deref(),
                    p.required,
                    p.default.as_deref(),
                    p.keyword_only,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("a", None, true, None, false),
                ("b", Some("list[str]"), true, None, false),
                ("c", Some("Literal['x', \"y\"]"), false, Some("'x'"), false),
                ("d", Some("int | None"), false, Some("None"), false),
                ("e", Some("dict[str, int]"), true, None, true),
                ("f", Some("bool"), false, Some("False"), true),
            ]
        );
        assert!(f.accepts_extra_kwargs);
        assert_eq!(f.returns.as_deref(), Some("dict[str, Any]"));
        assert_eq!(
            f.param("c").unwrap().allowed,
            Some(vec![serde_json::json!("x"), serde_json::json!("y")])
        );
        assert_eq!(f.param("a").unwrap().description.as_deref(), Some("The a."));
        assert_eq!(
            f.param("b").unwrap().description.as_deref(),
            Some("The b, continued.")
        );
        assert_eq!(f.param("b").unwrap().display_type.as_deref(), Some("list"));
        assert_eq!(f.source.as_ref().map(|s| (s.line, s.column)), Some((5, 15)));
    }

    #[test]
    fn inheritance_across_files_overrides_and_c3() {
        let base = format!("{CAP}class Base(AgentCapability):\n    @action_executor()\n    async def shared(self, x: int): \"\"\"S.\"\"\"\n    @action_executor()\n    async def dropped(self): \"\"\"D.\"\"\"\n    @action_executor()\n    async def replaced(self, a: int): \"\"\"R.\"\"\"\n");
        let sub = "from .base import Base\nfrom colony.dispatcher import action_executor\nclass Left(Base):\n    def dropped(self): pass\nclass Right(Base):\n    @action_executor()\n    async def replaced(self, b: str): \"\"\"R2.\"\"\"\nclass Diamond(Left, Right):\n    pass\n";
        // `sub.py` names `Base` and is parsed because of it.
        let r = scan(&[("pkg/base.py", &base), ("pkg/sub.py", sub)]);
        assert_eq!(
            keys(&r),
            vec![
                "Base.Base.shared",
                "Base.Base.dropped",
                "Base.Base.replaced",
                "Left.Left.shared",
                "Left.Left.replaced",
                "Right.Right.replaced",
                "Right.Right.shared",
                "Right.Right.dropped",
                // C3: Diamond, Left, Right, Base: `dropped` is plain in Left, `replaced` from Right.
                "Diamond.Diamond.replaced",
                "Diamond.Diamond.shared",
            ]
        );
        let d = r.kb.get("Diamond.Diamond.replaced").unwrap();
        assert_eq!(d.params[0].name, "b");
        assert_eq!(d.source.as_ref().unwrap().path, "pkg/sub.py");
        assert_eq!(r.files_parsed, 2);
    }

    #[test]
    fn abstract_classes_register_nothing() {
        let src = format!("{CAP}from abc import abstractmethod\nclass A(AgentCapability):\n    @abstractmethod\n    def backend(self): ...\n    @action_executor()\n    async def go(self): \"\"\"Go.\"\"\"\nclass B(A):\n    def backend(self): return 1\n");
        let r = scan(&[("m.py", &src)]);
        assert_eq!(keys(&r), vec!["B.B.go"]);
    }

    #[test]
    fn dispatch_keys() {
        let src = format!("{CAP}from colony.base import Agent, ActionPolicy\nclass K1(AgentCapability):\n    capability_key = 'k1'\n    @action_executor()\n    async def a(self): \"\"\"A.\"\"\"\nclass K2(AgentCapability):\n    def __init__(self, agent):\n        super().__init__(agent)\n        self._capability_key = 'k2'\n    @action_executor()\n    async def a(self): \"\"\"A.\"\"\"\nclass K3(AgentCapability):\n    @property\n    def capability_key(self) -> str:\n        return 'k3'\n    @action_executor()\n    async def a(self): \"\"\"A.\"\"\"\nclass K4(K1):\n    pass\nclass P(ActionPolicy):\n    @action_executor()\n    async def a(self): \"\"\"A.\"\"\"\nclass MyAgent(Agent):\n    @action_executor()\n    async def a(self): \"\"\"A.\"\"\"\nclass Plain:\n    @action_executor()\n    async def a(self): \"\"\"A.\"\"\"\n");
        let r = scan(&[("m.py", &src)]);
        assert_eq!(
            keys(&r),
            vec![
                "K1.k1.a",
                "K2.k2.a",
                "K3.k3.a",
                "K4.k1.a",
                "P.*.a",
                "MyAgent.*.a",
                "Plain.*.a"
            ]
        );
        assert_eq!(r.kb.dynamic_segments, vec!["P.*", "MyAgent.*", "Plain.*"]);
        assert_eq!(r.kb.get("K4.k1.a").unwrap().group.as_deref(), Some("k1"));
        let p = r.kb.get("P.*.a").unwrap();
        assert!(p.dynamic_segment);
        assert_eq!(p.group.as_deref(), Some("P.*"));
        assert_eq!(
            r.kb.resolve("P.0a1b2c3d.a"),
            crate::kb::Resolution::Dynamic(4)
        );
    }

    #[test]
    fn enum_and_constant_keys() {
        let enums = "from enum import Enum, StrEnum\nKEY = 'from_const'\nclass AT(str, Enum):\n    X = 'x'\nclass SE(StrEnum):\n    Y = 'y_value'\nclass VE(str, Enum):\n    Z = 'z_value'\n    def __str__(self):\n        return self.value\nclass Holder:\n    NAME = 'held'\n";
        let caps = format!("{CAP}from .enums import AT, SE, VE, KEY, Holder\nfrom colony.models import ActionType\nclass C(AgentCapability):\n    @action_executor(action_key=AT.X)\n    async def a(self): \"\"\"A.\"\"\"\n    @action_executor(SE.Y)\n    async def b(self): \"\"\"B.\"\"\"\n    @action_executor(action_key=VE.Z)\n    async def c(self): \"\"\"C.\"\"\"\n    @action_executor(action_key=KEY)\n    async def d(self): \"\"\"D.\"\"\"\n    @action_executor(action_key=Holder.NAME)\n    async def e(self): \"\"\"E.\"\"\"\n    @action_executor(action_key=ActionType.ANALYZE)\n    async def f(self): \"\"\"F.\"\"\"\n    @action_executor(action_key=unknown_name)\n    async def g(self): \"\"\"G.\"\"\"\n    @action_executor(action_key=f'{{x}}')\n    async def h(self): \"\"\"H.\"\"\"\n");
        let r = scan(&[("p/enums.py", enums), ("p/caps.py", &caps)]);
        assert_eq!(
            keys(&r),
            vec![
                "C.C.AT.X",
                "C.C.y_value",
                "C.C.z_value",
                "C.C.from_const",
                "C.C.held",
                "C.C.ActionType.ANALYZE",
                "C.C.g",
                "C.C.h",
            ]
        );
        assert_eq!(
            r.kb.get("C.C.g").unwrap().action_key_expr.as_deref(),
            Some("unknown_name")
        );
        let msgs: Vec<&str> = r.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(msgs.len(), 2, "{msgs:?}");
        assert!(msgs[0].contains("`action_key=unknown_name` cannot be evaluated"));
        assert!(msgs[1].contains("is not a constant"));
        // The enum key resolves from its dotted suffix as the dispatcher would.
        assert_eq!(r.kb.resolve("AT.X"), crate::kb::Resolution::Suffix(0));
    }

    #[test]
    fn standalone_functions_and_misuse() {
        let src = "from colony.dispatcher import action_executor\nfrom colony.base import Agent\n\n@action_executor(action_key='negotiate', tags={'game'})\nasync def run_game(owner: Agent, issue: str):\n    \"\"\"Run.\"\"\"\n\n@action_executor()\nasync def helper(x: int):\n    \"\"\"Help.\"\"\"\n\ndef outer():\n    @action_executor()\n    async def inner(): \"\"\"I.\"\"\"\n\nclass C:\n    @action_executor()\n    async def undocumented(self, x: int): pass\n";
        let r = scan(&[("m.py", src)]);
        assert_eq!(keys(&r), vec!["C.*.undocumented", "negotiate", "helper"]);
        let g = r.kb.get("negotiate").unwrap();
        assert_eq!(g.group.as_deref(), Some("func.run_game"));
        assert_eq!(
            g.params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            vec!["issue"]
        );
        assert_eq!(g.tags, vec!["game"]);
        assert_eq!(r.kb.get("helper").unwrap().params[0].name, "x");
        let msgs: Vec<&str> = r.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(msgs.len(), 2, "{msgs:?}");
        assert!(msgs[0].contains("nested in a function body"));
        assert!(msgs[1].contains("neither `planning_summary` nor a docstring"));
    }

    #[test]
    fn input_schema_model_and_tags_and_description() {
        let src = format!("{CAP}from pydantic import BaseModel, Field\nclass Spec(BaseModel):\n    role: str\n    count: int = 1\n    mode: Literal['a', 'b'] = Field(default='a', description='m')\n    extra: list[str] = Field(default_factory=list)\n    must: str = Field(...)\nclass C(AgentCapability):\n    _action_group_description = 'Group text.'\n    def get_capability_tags(self):\n        return frozenset({{'planning'}})\n    @action_executor(input_schema=Spec, exclude_from_planning=True, tags=frozenset(['x', 'a']))\n    async def spawn(self, **kwargs): \"\"\"Spawn.\"\"\"\n");
        let r = scan(&[("m.py", &src)]);
        let a = &r.kb.actions[0];
        let got: Vec<(&str, bool, Option<&str>)> = a
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.required, p.default.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("role", true, None),
                ("count", false, Some("1")),
                ("mode", false, Some("'a'")),
                ("extra", false, Some("list()")),
                ("must", true, None),
            ]
        );
        assert!(!a.accepts_extra_kwargs);
        assert!(a.exclude_from_planning && a.planning);
        assert_eq!(a.tags, vec!["a", "x"]);
        let g = r.kb.group("C").unwrap();
        assert_eq!(g.description.as_deref(), Some("Group text."));
        assert_eq!(g.tags, vec!["planning"]);
    }

    #[test]
    fn broken_sources_never_panic() {
        for src in [
            "class C(:\n    @action_executor(\n    async def f(self",
            "@action_executor()\n",
            "class C(AgentCapability):\n    @action_executor(action_key=)\n    async def f(self): '''x'''\n",
            "\u{feff}class \u{e9}(AgentCapability):\n    @action_executor()\n    async def \u{e9}t\u{e9}(self, \u{e0}: str): '''x'''\n",
            "class A(B):\n    pass\nclass B(A):\n    @action_executor()\n    async def f(self): '''x'''\n",
        ] {
            let r = scan(&[("x.py", src)]);
            let _ = r.kb.actions.len();
        }
        let r = scan(&[(
            "x.py",
            "class C(AgentCapability):\n    @action_executor()\n    async def f(self: 'C', x: str): '''x'''\n    def g(self\n",
        )]);
        assert!(r.kb.actions.iter().any(|a| a.short_key == "f"));
        assert!(r
            .warnings
            .iter()
            .any(|w| w.message.starts_with("syntax error")));
        // Column counted in characters.
        let r = scan(&[("x.py", "class C(AgentCapability):\n    @action_executor()\n    async def f(self): '''x'''\nclass D(AgentCapability):\n    x = '\u{e9}\u{e9}'; y = 1\n")]);
        assert_eq!(r.kb.actions[0].source.as_ref().map(|s| s.column), Some(15));
    }

    #[test]
    fn cache_reparses_only_changed_files() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("cap.py");
        std::fs::write(&f, format!("{CAP}class C(AgentCapability):\n    @action_executor()\n    async def old(self): '''x'''\n")).unwrap();
        let cache = ScanCache::new();
        let r1 = cache.scan_paths(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(keys(&r1), vec!["C.C.old"]);
        assert_eq!(r1.files_parsed_now, 1);
        let r2 = cache.scan_paths(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(keys(&r2), vec!["C.C.old"]);
        assert_eq!((r2.files_parsed, r2.files_parsed_now), (1, 0));
        // Same size, same second: the contents decide.
        std::fs::write(&f, format!("{CAP}class C(AgentCapability):\n    @action_executor()\n    async def new(self): '''x'''\n")).unwrap();
        let r3 = cache.scan_paths(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(keys(&r3), vec!["C.C.new"]);
        assert_eq!(r3.files_parsed_now, 1);
        assert!(scan_paths(&[dir.path().join("missing")]).is_err());
    }

    #[test]
    fn skeleton_keeps_structure_and_offsets() {
        let src = "class C(X):\n    def __init__(self):\n        self._capability_key = 'k'\n    @act()\n    async def f(self, a: int = 1) -> str:\n        '''Doc.'''\n        s = \"\"\"\ndef not_a_def():\n\"\"\"\n        return (a +\n           2)\n    def g(self):\n        x = {'\u{e9}': 1}\n        # comment\n\n        return x\n    def h(self): return 1\n    def k(self):\n        ...\n    @act()\n    def m(self):\n        '''Doc2.'''\n        return 1\n";
        let skel = skeleton(src, true).unwrap();
        let sk = skel.text.as_str();
        // Every kept line maps back to the same original line.
        let orig: Vec<&str> = src.split('\n').collect();
        for (i, line) in sk.split('\n').enumerate() {
            let o = orig[skel.rows[i] as usize];
            let t = line.trim();
            assert!(
                line == o
                    || matches!(t, "0" | "\"\"")
                    || (t.starts_with("def ") && t.ends_with("(): 0")),
                "{line:?} vs {o:?}"
            );
        }
        assert!(sk.contains("self._capability_key = 'k'"));
        assert!(sk.contains("'''Doc.'''"));
        assert_eq!(skel.docs.values().collect::<Vec<_>>(), vec!["Doc2."]);
        // The body holding a low-indented `def` inside a string is kept whole (safe side).
        assert!(sk.contains("not_a_def"));
        assert!(!sk.contains("return x"));
        assert!(sk.contains("def h(self): return 1"));
        assert!(!parse::parse(sk, None).root_node().has_error());
        assert!(sk.contains("\n    def k(): 0\n"));
        // Field-only classes are stripped (and named), others are not.
        let models = "class M(BaseModel):\n    '''Doc.'''\n    a: int = 1\n    b: list[str] = Field(\n        default_factory=list)\nclass E(str, Enum):\n    X = 'x'\nclass K(Base):\n    _capability_key: str = 'k'\n";
        let skel = skeleton(models, true).unwrap();
        assert_eq!(skel.stripped, vec!["M"]);
        assert!(skel
            .text
            .starts_with("class M(BaseModel):\n    0\nclass E(str, Enum):\n    X = 'x'\n"));
        assert_eq!(skel.rows[2], 5);
        assert!(skeleton(models, false).is_none());
    }

    #[test]
    fn cleandoc_and_args() {
        assert_eq!(
            cleandoc("  First.\n\n      Indented.\n    Less.\n  "),
            "First.\n\n  Indented.\nLess."
        );
        let a = docstring_args("Do.\n\nArgs:\n    x: The x.\n    y (int): The y\n        on two lines.\n\nReturns:\n    z: not an arg.\n");
        assert_eq!(a.get("x").map(String::as_str), Some("The x."));
        assert_eq!(a.get("y").map(String::as_str), Some("The y on two lines."));
        assert_eq!(a.get("z"), None);
        let s = docstring_args(":param x: Sphinx x.\n:param int y: Sphinx y.\n:returns: r");
        assert_eq!(s.get("y").map(String::as_str), Some("Sphinx y."));
    }
}
