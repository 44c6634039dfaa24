//! `SBX003` on the IPython names of a REPL namespace that reach state outside the cell.
//!
//! IPython seeds its `user_ns` with its history and exit helpers, so Colony's REPL namespace
//! holds them next to the pre-bound modules (colony-reference §2.1, "IPython extras", verified on
//! IPython 8.12): `_dh` (the host process's working directories), `In`/`_ih` (the source of every
//! cell the REPL ran), `Out`/`_oh` (the result objects of earlier cells) and `exit`/`quit`
//! (IPython's `ExitAutocall`: `ask_exit()` shuts the host's shell down; Colony's restricted
//! builtins drop the builtin `exit`/`quit`, not these). They pass every Colony validator.
//!
//! A name is reported where the cell reads it and neither the cell binds it (in the scope of
//! the read or an enclosing one, or through `from m import *`) nor the namespace lacks it: with
//! the `functions` dialect, or a namespace without IPython's names, nothing is reported.
//! `get_ipython`, `open` and `__builtin__` are reported by the SBX analysis itself.
//!
//! This pass uses the cell's semantic model (scopes and bindings), so it runs with the other
//! families rather than in the SBX interpreter.

use super::sandbox::CODE_EXECUTION_BUILTIN;
use super::Checker;
use crate::diagnostic::Diagnostic;
use crate::parse;
use std::collections::HashMap;

/// IPython's names that reach state outside the cell, with what each reaches.
pub const IPYTHON_STATE_NAMES: &[(&str, &str)] = &[
    (
        "_dh",
        "is IPython's directory history: it holds the host process's working directories",
    ),
    (
        "In",
        "is IPython's input history: it holds the source of every cell the REPL ran",
    ),
    (
        "_ih",
        "is IPython's input history: it holds the source of every cell the REPL ran",
    ),
    (
        "Out",
        "is IPython's output cache: it holds the result objects of earlier cells",
    ),
    (
        "_oh",
        "is IPython's output cache: it holds the result objects of earlier cells",
    ),
    (
        "exit",
        "is IPython's exit helper: calling it asks the host's shell to shut down",
    ),
    (
        "quit",
        "is IPython's exit helper: calling it asks the host's shell to shut down",
    ),
];

/// Reports reads of [`IPYTHON_STATE_NAMES`] that resolve to the REPL namespace.
pub fn check(checker: &mut Checker) {
    if !checker.enabled(&CODE_EXECUTION_BUILTIN) {
        return;
    }
    let ns = &checker.settings.namespace;
    if !IPYTHON_STATE_NAMES
        .iter()
        .any(|(n, _)| ns.names.contains(*n))
    {
        return;
    }
    let nodes = checker.nodes;
    let src = checker.src;
    let model = checker.semantic();
    // Scope-introducing node -> its scope.
    let scope_of_node: HashMap<usize, usize> = model
        .scopes
        .iter()
        .enumerate()
        .map(|(i, s)| (s.node.id(), i))
        .collect();
    let mut found = Vec::new();
    for id in nodes.of_kind("identifier") {
        let node = nodes.node(id);
        let name = parse::text(node, src);
        let Some((_, what)) = IPYTHON_STATE_NAMES.iter().find(|(n, _)| *n == name) else {
            continue;
        };
        if !ns.names.contains(name) {
            continue;
        }
        // Not a name read: `x.Out`, `f(Out=1)`, `import a.exit`, `def exit()`.
        let parent_kind = nodes.parent(id).map(|p| nodes.kind(p));
        if matches!(
            (parent_kind, nodes.field(id)),
            (Some("attribute"), Some("attribute"))
                | (Some("keyword_argument"), Some("name"))
                | (Some("dotted_name"), _)
                | (
                    Some("function_definition" | "class_definition"),
                    Some("name")
                )
        ) {
            continue;
        }
        let scope = nodes
            .ancestors(id)
            .find_map(|a| scope_of_node.get(&nodes.node(a).id()).copied())
            .unwrap_or(0);
        if model.lookup(scope, name).is_some() || model.wildcard_visible(scope) {
            continue;
        }
        found.push((parse::range(node), format!("`{name}` {what}")));
    }
    for (range, message) in found {
        checker.report(
            Diagnostic::new(&CODE_EXECUTION_BUILTIN, range, message).with_help(
                "IPython seeds the REPL namespace with its history and exit helpers (colony-reference §2.1); they pass every Colony validator and reach state outside the cell",
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{ConfigFile, Overrides, Settings};
    use crate::{check_file, KnowledgeBase, SourceFile};

    fn sbx003(src: &str, config: &str) -> Vec<String> {
        let file: ConfigFile = toml::from_str(config).unwrap();
        let settings = Settings::resolve(&file, None, &Overrides::default()).unwrap();
        let f = SourceFile::new("cell.py", src);
        check_file(&f, &settings, &KnowledgeBase::new())
            .into_iter()
            .filter(|d| d.rule.code == "SBX003")
            .map(|d| format!("{}..{} {}", d.range.start, d.range.end, d.message))
            .collect()
    }

    #[test]
    fn namespace_reads_are_reported_with_what_they_reach() {
        let src = "print(_dh[0])\nh = In[-1]\nexit()\n";
        assert_eq!(
            sbx003(src, ""),
            vec![
                "6..9 `_dh` is IPython's directory history: it holds the host process's working directories",
                "18..20 `In` is IPython's input history: it holds the source of every cell the REPL ran",
                "25..29 `exit` is IPython's exit helper: calling it asks the host's shell to shut down",
            ]
        );
    }

    #[test]
    fn bound_names_attributes_keywords_and_other_namespaces_are_not() {
        let src = "Out = {}\nprint(Out)\ndef f(_oh):\n    return _oh\nx = results.In\nr = await run(\"A.b.c\", exit=1)\nclass K:\n    quit = 1\n    q = quit\n";
        assert_eq!(sbx003(src, ""), Vec::<String>::new());
        // A name bound only in a function stays the namespace's elsewhere.
        assert_eq!(
            sbx003("def f():\n    Out = 1\n    return Out\nprint(Out)\n", "").len(),
            1
        );
        // `from m import *` may bind anything: not reported.
        assert!(sbx003("from json import *\nprint(Out)\n", "").is_empty());
        // smolagents' namespace has no IPython names.
        assert!(sbx003("print(_dh, Out)\nexit()\n", "dialect = \"functions\"\n").is_empty());
        // Deselecting SBX003 silences it.
        assert!(sbx003("print(_dh)\n", "[lint]\nignore = [\"SBX003\"]\n").is_empty());
    }
}
