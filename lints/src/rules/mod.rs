//! The rules, one module per family. Each module declares its [`Rule`]s as statics, lists them in
//! a `RULES` slice and exposes `check(&mut Checker)`.

pub mod api;
pub mod colony;
pub mod deserialize;
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

    /// Consumes the checker, returning its diagnostics (cell coordinates).
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diagnostics
    }
}

/// Runs every rule family on one cell.
///
/// The `SBX` analysis (its own interpreter over the tree; no semantic model) runs alongside
/// the other families (`rayon::join`: on another core when one is free, inline otherwise), and
/// its findings are put where the sequential order puts them, after `IMP` and before `API`.
pub fn check_cell(checker: &mut Checker) {
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
            imports::check(checker);
            let at = checker.diagnostics.len();
            api::check(checker);
            ipython::check(checker);
            deserialize::check(checker);
            shape::check(checker);
            runtime::check(checker);
            at
        },
    );
    checker.diagnostics.splice(at..at, sbx);
}
