//! `cellguard-lints`: the rule engine behind `cellguard check`, `cellguard server` and
//! `cellguard replay`. Pure: text, configuration and knowledge base in, data out; no stdout, no
//! global state of its own (parallel work goes to rayon's global pool, built by [`workers`]),
//! safe to call from any thread.
//!
//! Data flows one way: [`source`] -> [`extract`] (cells) -> [`parse`] (tree-sitter) ->
//! [`rules`] (via [`lint`]) -> [`diagnostic`]s.

pub mod config;
pub mod diagnostic;
pub mod distance;
pub mod extract;
pub mod fix;
pub mod kb;
pub mod lint;
pub mod nodes;
pub mod parse;
pub mod response;
pub mod rule_docs;
pub mod rules;
pub mod semantic;
pub mod source;
pub mod suppress;
pub mod workers;

pub use config::{Dialect, Profile, Settings};
pub use diagnostic::{Applicability, Diagnostic, Edit, Fix, Rule, Severity};
pub use kb::KnowledgeBase;
pub use lint::check_file;
pub use source::{SourceFile, TextRange};
pub use workers::start_worker_pool;
pub mod completion;
pub mod guardrails;
pub mod policies;
pub mod pyregex;
pub mod replay;
pub mod trace;
