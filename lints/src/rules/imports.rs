//! `IMP`: imports, as Colony's ImportWhitelistValidator intends them (colony-reference §3.3) and
//! as its runtime really treats them (§2.7: restricted builtins make every `import` and `class`
//! fail).
//!
//! Allowlist semantics: an entry `a.b` allows `a.b` and its submodules but never the parent `a`;
//! `a.*` is the same as `a`. `from m import name` is judged on `m`, never on `name`.

use super::Checker;
use crate::diagnostic::{Diagnostic, Edit, Fix, FixAvailability, Rule, RuleDoc, Severity};
use crate::nodes::NodeTable;
use crate::parse;
use crate::source::TextRange;
use tree_sitter::Node;

/// IMP001 blocked-import.
pub static BLOCKED_IMPORT: Rule = Rule {
    code: "IMP001",
    name: "blocked-import",
    severity: Severity::Error,
    summary: "Import of a module outside the allowlist",
    fix: FixAvailability::Sometimes,
    doc: RuleDoc {
        what: "Checks every `import a.b.c` and `from a.b import x` (anywhere in the cell, including inside functions) against the import allowlist. The whole dotted path is checked: an entry `a.b` allows `a.b` and below but never the parent `a`.",
        why: "Modules such as `os`, `subprocess` or `socket` reach the host. Colony's validator rejects them by root only; cellguard checks the full path so an allowed child never authorises its parent.",
        example: "import os\n",
        fixed_example: "x = json.dumps({})\n",
        fix_safety: "Removing the import is unsafe: later uses of the name then fail.",
        options: "`[lint.imports] allow`, `extend-allow`. With `profile = \"colony\"`, Colony's root-only check and its `Blocked import: ...` messages (docs/colony-profile.md).",
        source: "Colony ImportWhitelistValidator (colony-reference §3.3); smolagents `authorized_imports` (guardrail-anchors §2.1).",
        ..RuleDoc::EMPTY
    },
};

/// IMP002 relative-import.
pub static RELATIVE_IMPORT: Rule = Rule {
    code: "IMP002",
    name: "relative-import",
    severity: Severity::Error,
    summary: "Relative import in a cell",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports `from . import x` and `from .m import x`.",
        why: "A cell is not part of a package. Colony's validator ignores the relative level, so `from . import secrets` passes and `from .json import loads` is judged as `json`.",
        example: "from . import secrets\n",
        fixed_example: "x = json.loads(\"{}\")\n",
        fix_safety: "No fix.",
        source: "Colony ImportWhitelistValidator defect (colony-reference §3.3, §7.4 case 26).",
        ..RuleDoc::EMPTY
    },
};

/// IMP003 import-fails-at-runtime.
pub static IMPORT_FAILS_AT_RUNTIME: Rule = Rule {
    code: "IMP003",
    name: "import-fails-at-runtime",
    severity: Severity::Error,
    summary: "An import or class statement the configured runtime cannot execute",
    fix: FixAvailability::Sometimes,
    doc: RuleDoc {
        what: "In a namespace whose restricted builtins have no `__import__` or `__build_class__` (Colony's default), reports every allowed `import` statement and every `class` definition. The help says what to use instead: the module itself when the namespace pre-binds it (`json`), the pre-bound names a `from` import asks for (`from collections import Counter`), or else the modules the namespace does pre-bind.",
        why: "Colony's REPL keeps only builtins without a leading underscore, so `import json` raises `ImportError: __import__ not found` and `class Foo: ...` raises `NameError: __build_class__ not found`, even though the validator accepted them. Only what the namespace pre-binds is usable: in Colony's, the modules `json`, `re`, `math`, `itertools` and `functools` and the names `defaultdict`, `Counter` and `dataclass` (colony-reference §2.1). The other modules of its allowlist (`collections`, `dataclasses`, `typing`, `datetime`, `pydantic`, `asyncio`) cannot be used at all, and `dataclass` is of no use without a `class` statement.",
        example: "import json\nx = json.dumps({})\n",
        fixed_example: "x = json.dumps({})\n",
        fix_safety: "Removing `import m` is safe when `m` is pre-bound in the namespace under the same name.",
        options: "`[namespace] preset`.",
        source: "Colony PolicyPythonREPL restricted builtins (colony-reference §2.7, §7.4 cases 27 and 29).",
        ..RuleDoc::EMPTY
    },
};

/// The family's rules.
pub static RULES: &[&Rule] = &[&BLOCKED_IMPORT, &RELATIVE_IMPORT, &IMPORT_FAILS_AT_RUNTIME];

/// True when `module` (dotted) is allowed by `allow` entries.
pub fn is_allowed(module: &str, allow: &[String]) -> bool {
    allow.iter().any(|entry| {
        let entry = entry.trim();
        let entry = entry.strip_suffix(".*").unwrap_or(entry);
        entry == "*"
            || module == entry
            || (module.len() > entry.len()
                && module.starts_with(entry)
                && module.as_bytes()[entry.len()] == b'.')
    })
}

/// One imported module of an import statement.
#[derive(Debug, Clone)]
pub struct ImportedModule<'t> {
    /// The statement node.
    pub statement: Node<'t>,
    /// The node naming the module (`dotted_name`, `relative_import`, or the aliased name).
    pub module_node: Node<'t>,
    /// The statement's child for this module: the `dotted_name` or `aliased_import` of an
    /// `import` statement (what removing this one module removes), the module for `from`.
    pub name_node: Node<'t>,
    /// The dotted module name without leading dots (`""` for `from . import x`).
    pub module: String,
    /// Number of leading dots of a relative import.
    pub level: usize,
    /// The local name bound (`import a.b` binds `a`; `import a as x` binds `x`); for `from`
    /// imports, `None`.
    pub binds: Option<String>,
    /// `from` import.
    pub is_from: bool,
}

/// Every module imported by the cell, in source order.
pub fn imported_modules<'t>(root: Node<'t>, src: &str) -> Vec<ImportedModule<'t>> {
    imported_modules_in(&NodeTable::from_root(root), src)
}

/// [`imported_modules`] over a cell's node table.
pub fn imported_modules_in<'t>(nodes: &NodeTable<'t>, src: &str) -> Vec<ImportedModule<'t>> {
    let mut out = Vec::new();
    for (id, node) in nodes.iter() {
        match nodes.kind(id) {
            "import_statement" => {
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    let (dotted, binds) = match name.kind() {
                        "aliased_import" => {
                            let n = name.child_by_field_name("name");
                            let alias = name
                                .child_by_field_name("alias")
                                .map(|a| parse::ident(a, src).into_owned());
                            (n, alias)
                        }
                        _ => (Some(name), None),
                    };
                    let Some(dotted) = dotted else { continue };
                    let module = parse::ident_name(
                        &parse::text(dotted, src)
                            .split_whitespace()
                            .collect::<String>(),
                    )
                    .into_owned();
                    let binds = binds.or_else(|| module.split('.').next().map(str::to_string));
                    out.push(ImportedModule {
                        statement: node,
                        module_node: dotted,
                        name_node: name,
                        module,
                        level: 0,
                        binds,
                        is_from: false,
                    });
                }
            }
            "import_from_statement" => {
                let Some(m) = node.child_by_field_name("module_name") else {
                    continue;
                };
                let raw = parse::text(m, src).split_whitespace().collect::<String>();
                let raw = parse::ident_name(&raw).into_owned();
                let level = raw.chars().take_while(|&c| c == '.').count();
                out.push(ImportedModule {
                    statement: node,
                    module_node: m,
                    name_node: m,
                    module: raw[level..].to_string(),
                    level,
                    binds: None,
                    is_from: true,
                });
            }
            _ => {}
        }
    }
    out
}

/// Reports blocked, relative and runtime-failing imports, and `class` statements in runtimes
/// without `__build_class__`.
pub fn check(checker: &mut Checker) {
    let src = checker.src;
    let nodes = checker.nodes;
    let ns = &checker.settings.namespace;
    for imp in imported_modules_in(nodes, src) {
        let range = parse::range(imp.module_node);
        if imp.level > 0 {
            checker.report(Diagnostic::new(
                &RELATIVE_IMPORT,
                range,
                format!(
                    "Relative import `{}` in a cell: a cell is not part of a package",
                    parse::text(imp.module_node, src)
                ),
            ));
            continue;
        }
        if !is_allowed(&imp.module, &checker.settings.allowed_imports) {
            checker.report(
                Diagnostic::new(
                    &BLOCKED_IMPORT,
                    range,
                    format!("Import of `{}` is not allowed", imp.module),
                )
                .with_help(format!(
                    "Allowed modules: {}",
                    checker.settings.allowed_imports.join(", ")
                ))
                .with_fix(Fix::unsafe_edit(
                    format!("Remove the import of `{}`", imp.module),
                    vec![remove_import(&imp, src)],
                )),
            );
            continue;
        }
        if ns.imports_fail_at_runtime {
            let root_name = imp.module.split('.').next().unwrap_or("");
            let help = runtime_import_help(&imp, root_name, ns, src);
            let mut diagnostic = Diagnostic::new(
                &IMPORT_FAILS_AT_RUNTIME,
                parse::range(imp.statement),
                format!(
                    "`{}` fails at runtime: the restricted builtins have no `__import__`",
                    first_line(parse::text(imp.statement, src))
                ),
            )
            .with_help(help);
            // `import m` where `m` is pre-bound under the same name: removing it keeps the name
            // bound to the same module, so the fix is safe.
            if !imp.is_from
                && imp.binds.as_deref() == Some(imp.module.as_str())
                && ns.modules.contains(&imp.module)
            {
                diagnostic = diagnostic.with_fix(Fix::safe(
                    format!(
                        "Remove `import {}` (pre-bound in the namespace)",
                        imp.module
                    ),
                    vec![remove_import(&imp, src)],
                ));
            }
            checker.report(diagnostic);
        }
    }
    if ns.imports_fail_at_runtime {
        for node in nodes.of_kind("class_definition").map(|id| nodes.node(id)) {
            let name = node
                .child_by_field_name("name")
                .map(|n| parse::text(n, src))
                .unwrap_or("?");
            let head_end = node
                .child_by_field_name("name")
                .map(|n| n.end_byte())
                .unwrap_or(node.start_byte());
            let help = if ns.names.contains("dataclass") {
                "Use a dict instead of a class (the pre-bound `dataclass` needs a `class` statement too)"
            } else {
                "Use a dict instead of a class"
            };
            checker.report(
                Diagnostic::new(
                    &IMPORT_FAILS_AT_RUNTIME,
                    TextRange::new(node.start_byte(), head_end),
                    format!("`class {name}` fails at runtime: the restricted builtins have no `__build_class__`"),
                )
                .with_help(help),
            );
        }
    }
}

/// Members of allowlisted modules that a namespace may pre-bind as bare names (Colony's binds
/// `defaultdict`, `Counter` and `dataclass`, colony-reference §2.1): module -> names.
const KNOWN_MEMBERS: &[(&str, &[&str])] = &[
    (
        "collections",
        &[
            "Counter",
            "OrderedDict",
            "defaultdict",
            "deque",
            "namedtuple",
        ],
    ),
    ("dataclasses", &["asdict", "dataclass", "field"]),
];

/// Backticked, comma-separated.
fn ticks<S: AsRef<str>>(items: &[S]) -> String {
    items
        .iter()
        .map(|s| format!("`{}`", s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The names a `from m import a, b as c` statement imports (`a`, `b`), in order.
fn from_import_names(statement: Node, src: &str) -> Vec<String> {
    let mut cursor = statement.walk();
    statement
        .children_by_field_name("name", &mut cursor)
        .filter_map(|n| match n.kind() {
            "aliased_import" => n.child_by_field_name("name"),
            _ => Some(n),
        })
        .map(|n| parse::text(n, src).to_string())
        .collect()
}

/// IMP003's help on an import in a namespace where no import runs: the module itself when it
/// is pre-bound, the pre-bound names a `from` import asks for, or else what the namespace does
/// pre-bind (its modules, and its names from the imported module).
fn runtime_import_help(
    imp: &ImportedModule,
    root: &str,
    ns: &crate::config::Namespace,
    src: &str,
) -> String {
    if ns.modules.contains(root) {
        return format!("`{root}` is pre-bound in the namespace: use it without importing");
    }
    let names = if imp.is_from {
        from_import_names(imp.statement, src)
    } else {
        Vec::new()
    };
    let bound: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| ns.names.contains(*n))
        .collect();
    if !bound.is_empty() && bound.len() == names.len() {
        let (verb, it) = if bound.len() == 1 {
            ("is", "it")
        } else {
            ("are", "them")
        };
        return format!(
            "{} {verb} pre-bound in the namespace: use {it} without importing",
            ticks(&bound)
        );
    }
    let modules: Vec<&str> = ns.modules.iter().map(String::as_str).collect();
    let usable = if modules.is_empty() {
        "the namespace pre-binds no module".to_string()
    } else {
        format!("the pre-bound modules are {}", ticks(&modules))
    };
    let members: Vec<&str> = KNOWN_MEMBERS
        .iter()
        .filter(|(m, _)| *m == root)
        .flat_map(|(_, names)| names.iter().copied())
        .filter(|n| ns.names.contains(*n))
        .collect();
    let of_it = if members.is_empty() {
        String::new()
    } else {
        format!("; of `{root}`, it pre-binds {}", ticks(&members))
    };
    format!("`{root}` is allowed but not pre-bound in the namespace, and no `import` runs in it: {usable}{of_it}")
}

/// The edit removing one imported module: the whole statement for a `from` import or an
/// `import` of a single module (see [`crate::fix::delete_statement`]), only that module's entry
/// otherwise (`import os, json` -> `import json`). Every such edit spans the whole statement, so
/// two removals from one statement never apply in the same fix pass.
pub fn remove_import(imp: &ImportedModule, src: &str) -> Edit {
    let stmt = imp.statement;
    if imp.is_from {
        return crate::fix::delete_statement(stmt, src);
    }
    let mut cursor = stmt.walk();
    let names: Vec<Node> = stmt.children_by_field_name("name", &mut cursor).collect();
    let others: Vec<&str> = names
        .iter()
        .filter(|n| n.id() != imp.name_node.id())
        .map(|n| parse::text(*n, src))
        .collect();
    if others.is_empty() {
        return crate::fix::delete_statement(stmt, src);
    }
    Edit::replace(parse::range(stmt), format!("import {}", others.join(", ")))
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s).trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowlist_semantics() {
        let allow: Vec<String> = ["json", "a.b", "c.*"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(is_allowed("json", &allow));
        assert!(is_allowed("json.decoder", &allow));
        assert!(is_allowed("a.b", &allow));
        assert!(is_allowed("a.b.c", &allow));
        assert!(!is_allowed("a", &allow));
        assert!(!is_allowed("a.bc", &allow));
        assert!(is_allowed("c", &allow));
        assert!(is_allowed("c.d", &allow));
        assert!(!is_allowed("jsonx", &allow));
    }

    fn help_for(src: &str, ns: &crate::config::Namespace) -> Vec<String> {
        let tree = parse::parse(src, None);
        imported_modules(tree.root_node(), src)
            .iter()
            .map(|imp| {
                let root = imp.module.split('.').next().unwrap_or("");
                runtime_import_help(imp, root, ns, src)
            })
            .collect()
    }

    #[test]
    fn runtime_import_help_names_what_is_pre_bound() {
        // Issue 4 (second tester): the help used to say "Only the namespace's pre-bound modules
        // are usable" for `import asyncio`, which reads as if the allowlisted modules were.
        let colony = crate::config::Namespace::colony();
        assert_eq!(
            help_for("import asyncio
from typing import Any
import json.decoder
", &colony),
            vec![
                "`asyncio` is allowed but not pre-bound in the namespace, and no `import` runs in it: the pre-bound modules are `functools`, `itertools`, `json`, `math`, `re`",
                "`typing` is allowed but not pre-bound in the namespace, and no `import` runs in it: the pre-bound modules are `functools`, `itertools`, `json`, `math`, `re`",
                "`json` is pre-bound in the namespace: use it without importing",
            ]
        );
        assert_eq!(
            help_for(
                "from collections import Counter as C
from collections import Counter, deque
from dataclasses import field
",
                &colony
            ),
            vec![
                "`Counter` is pre-bound in the namespace: use it without importing",
                "`collections` is allowed but not pre-bound in the namespace, and no `import` runs in it: the pre-bound modules are `functools`, `itertools`, `json`, `math`, `re`; of `collections`, it pre-binds `Counter`, `defaultdict`",
                "`dataclasses` is allowed but not pre-bound in the namespace, and no `import` runs in it: the pre-bound modules are `functools`, `itertools`, `json`, `math`, `re`; of `dataclasses`, it pre-binds `dataclass`",
            ]
        );
        // A namespace that pre-binds no module says so instead of listing nothing.
        let mut bare = crate::config::Namespace::colony();
        bare.modules.clear();
        bare.names.clear();
        assert_eq!(
            help_for("import collections
", &bare),
            vec!["`collections` is allowed but not pre-bound in the namespace, and no `import` runs in it: the namespace pre-binds no module"]
        );
    }
}
