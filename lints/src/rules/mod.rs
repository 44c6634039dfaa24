//! The rules, one module per family. Each module declares its [`Rule`]s as statics, lists them in
//! a `RULES` slice and exposes `check(&mut Checker)`.

pub mod api;
pub mod cancel;
pub mod colony;
pub mod deserialize;
pub mod encoding;
pub mod imports;
pub mod ipython;
pub mod meta;
pub mod runtime;
pub mod sandbox;
pub mod shape;
pub mod syntax;

use crate::config::Settings;
use crate::diagnostic::{Diagnostic, Rule};
use crate::extract::Cell;
use crate::kb::KnowledgeBase;
use crate::nodes::NodeTable;
use crate::semantic::SemanticModel;
use std::cell::OnceCell;
use std::sync::Arc;
use tree_sitter::Tree;

/// Every rule of every family, in code order within each family.
pub fn all_rules() -> impl Iterator<Item = &'static Rule> {
    [
        syntax::RULES,
        imports::RULES,
        sandbox::RULES,
        api::RULES,
        shape::RULES,
        runtime::RULES,
        meta::RULES,
    ]
    .into_iter()
    .flatten()
    .copied()
}

/// Looks a rule up by code (case-insensitive) or by kebab-case name.
pub fn find_rule(code_or_name: &str) -> Option<&'static Rule> {
    all_rules().find(|r| r.code.eq_ignore_ascii_case(code_or_name) || r.name == code_or_name)
}

/// What a rule sees while checking one cell. Ranges reported here are offsets into
/// `checker.src` (the cell text); the engine maps them to the file.
pub struct Checker<'a> {
    /// The cell being checked.
    pub cell: &'a Cell,
    /// The cell text.
    pub src: &'a str,
    /// Its syntax tree.
    pub tree: &'a Tree,
    /// Every node of the tree in pre-order, with parents, fields and subtree extents: iterate
    /// this instead of walking the tree (see [`crate::nodes`]).
    pub nodes: &'a NodeTable<'a>,
    /// Resolved settings.
    pub settings: &'a Settings,
    /// The knowledge base (possibly empty).
    pub kb: &'a KnowledgeBase,
    diagnostics: Vec<Diagnostic>,
    semantic: OnceCell<Arc<SemanticModel<'a>>>,
}

impl<'a> Checker<'a> {
    /// A checker for one parsed cell whose node table is already built.
    pub fn with_table(
        cell: &'a Cell,
        tree: &'a Tree,
        nodes: &'a NodeTable<'a>,
        settings: &'a Settings,
        kb: &'a KnowledgeBase,
    ) -> Self {
        Checker {
            cell,
            src: &cell.text,
            tree,
            nodes,
            settings,
            kb,
            diagnostics: Vec::new(),
            semantic: OnceCell::new(),
        }
    }

    /// The cell's semantic model (scopes, bindings, call sites, action calls), built on first
    /// use and shared by every rule family.
    pub fn semantic(&self) -> Arc<SemanticModel<'a>> {
        self.semantic
            .get_or_init(|| {
                Arc::new(SemanticModel::build_with_table(
                    self.nodes,
                    self.src,
                    self.settings,
                    self.kb,
                ))
            })
            .clone()
    }

    /// True when `rule` is selected; rules test this before expensive work.
    pub fn enabled(&self, rule: &Rule) -> bool {
        self.settings.rules.is_enabled(rule)
    }

    /// Records a diagnostic when its rule is selected.
    pub fn report(&mut self, diagnostic: Diagnostic) {
        if self.enabled(diagnostic.rule) {
            self.diagnostics.push(diagnostic);
        }
    }

    /// The diagnostics recorded so far.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// A checker for one statement of the cell `whole` checks (`nodes` is that statement's
    /// table): it shares `whole`'s semantic model, built on demand from the whole cell.
    pub fn for_unit<'w: 'a>(whole: &Checker<'w>, nodes: &'a NodeTable<'a>) -> Checker<'a> {
        let semantic = OnceCell::new();
        let model: Arc<SemanticModel<'a>> = whole.semantic();
        let _ = semantic.set(model);
        Checker {
            cell: whole.cell,
            src: whole.src,
            tree: whole.tree,
            nodes,
            settings: whole.settings,
            kb: whole.kb,
            diagnostics: Vec::new(),
            semantic,
        }
    }

    /// Consumes the checker, returning its diagnostics (cell coordinates).
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diagnostics
    }
}

/// A rule family whose findings are local to the top-level statements of a cell: run on the
/// node table of one statement (`Checker::nodes` holds that statement's subtree, `src` and
/// `tree` are still the whole cell's), it reports exactly the findings a whole-cell run reports
/// inside that statement, given the family's context key. The engine
/// ([`crate::lint::check_cell_incremental`]) runs such families per unit of statements and
/// re-uses the results of units whose text and context key are unchanged.
pub struct UnitFamily {
    /// The family prefix (`IMP`).
    pub family: &'static str,
    /// Runs the family on the statement whose table `checker` holds.
    pub run: fn(&mut Checker),
    /// Everything outside a unit's own text that the family's findings in that unit depend on,
    /// as a key computed from the whole-cell checker (its semantic model is shared with the
    /// per-unit checkers). Settings and knowledge base are fixed for a cache and not part of it.
    pub context: fn(&Checker) -> u64,
}

/// The families that run per unit of top-level statements (see [`UnitFamily`]); every other
/// family runs on the whole cell in [`check_cell_whole`].
///
/// - `IMP`: each finding is an import statement (its module name, its fix deleting the
///   statement's rows) or a `class` head, read from that node, the settings, and the text of
///   the rows the statement sits on (the fix also reads the row terminator before the unit,
///   which the unit key holds); no context.
/// - `SBX007` of `rules/deserialize.rs`: keywords, strings and calls inside the statement,
///   plus, for a bare v1 loader name taken as a value, whether the module binds that name by
///   imports alone: that one bit per loader name is the context key.
pub static UNIT_FAMILIES: &[UnitFamily] = &[
    UnitFamily {
        family: "IMP",
        run: imports::check,
        context: |_| 0,
    },
    UnitFamily {
        family: "SBX007",
        run: deserialize::check,
        context: deserialize::context_key,
    },
];

/// Runs every rule family on one cell.
pub fn check_cell(checker: &mut Checker) {
    check_cell_whole(checker);
    for family in UNIT_FAMILIES {
        (family.run)(checker);
    }
}

/// Runs the families that are not in [`UNIT_FAMILIES`] on one cell.
///
/// The `SBX` analysis (its own interpreter over the tree; no semantic model) runs alongside
/// the other families (`rayon::join`: on another core when one is free, inline otherwise), and
/// its findings are put where the sequential order puts them, after `IMP` and before `API`.
/// The pool is rayon's global one, with large stacks ([`crate::workers`]).
pub fn check_cell_whole(checker: &mut Checker) {
    crate::workers::start_worker_pool();
    let mut sbx = Checker::with_table(
        checker.cell,
        checker.tree,
        checker.nodes,
        checker.settings,
        checker.kb,
    );
    let (sbx, at) = rayon::join(
        move || {
            sandbox::check(&mut sbx);
            sbx.into_diagnostics()
        },
        || {
            syntax::check(checker);
            let at = checker.diagnostics.len();
            api::check(checker);
            ipython::check(checker);
            cancel::check(checker);
            encoding::check(checker);
            shape::check(checker);
            runtime::check(checker);
            at
        },
    );
    checker.diagnostics.splice(at..at, sbx);
}
