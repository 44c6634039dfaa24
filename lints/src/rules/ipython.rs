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
//! `exit` and `quit` are reported on every read, not only calls: `exit._ip` (any attribute of
//! the `ExitAutocall`, through an alias `q = quit; q._ip`, a comprehension or a class pattern
//! `case object(_ip=sh)`) is IPython's `InteractiveShell`, whose `getoutput`, `system`, `ev` and
//! `run_cell("!cmd")` run shell commands and code in the host (issue 4, third tester N1).
//!
//! The same pass reports site's `_Printer` builtins ([`SITE_PRINTER_NAMES`]: `license`,
//! `credits`, `copyright`) in every dialect: `type(license)(name, text, files, dirs)` builds a
//! printer that reads any host file the cell names (N3). `credits()` and `copyright()` called
//! bare, with no argument, print fixed text and stay clean; `license()` pages on the host's
//! standard input (`input()` after 23 lines), so every use of it is reported. Under the
//! `functions` dialect `exit`/`quit` are site's `Quitter` (calling one closes the host's
//! standard input and raises `SystemExit` in the host): every read is reported there too.
//!
//! The builtin exceptions that are not `Exception`s ([`HOST_EXIT_EXCEPTIONS`]: `SystemExit`,
//! `KeyboardInterrupt`, ...) are reported in every dialect on every use but catching them
//! (`except SystemExit:`) and `isinstance`/`issubclass` tests: `raise SystemExit(0)` ends the
//! host interpreter as `exit()` does (issue 4 round 8, S8-12).
//!
//! Names are compared NFKC-normalised, as Python reads identifiers (PEP 3131: `ｅｘｉｔ` is
//! `exit`). This pass uses the cell's semantic model (scopes and bindings), so it runs with the
//! other families rather than in the SBX interpreter.

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
        "is IPython's exit helper: calling it asks the host's shell to shut down, and its `_ip` attribute is the host's `InteractiveShell` (shell commands, code)",
    ),
    (
        "quit",
        "is IPython's exit helper: calling it asks the host's shell to shut down, and its `_ip` attribute is the host's `InteractiveShell` (shell commands, code)",
    ),
];

/// site's `_Printer` builtins (`site.setcopyright`), present in every dialect's builtins (Colony's
/// restricted builtins keep them), with what each reaches and whether a bare call with no
/// argument is plain (`credits()` prints fixed text; `license()` pages on the host's stdin).
pub const SITE_PRINTER_NAMES: &[(&str, &str, bool)] = &[
    (
        "license",
        "is site's `_Printer`: `type(license)(name, text, files, dirs)` reads any host file the cell names, and calling it pages on the host's standard input",
        false,
    ),
    (
        "credits",
        "is site's `_Printer`: as a value, `type(credits)(name, text, files, dirs)` reads any host file the cell names (only the bare call `credits()` is plain)",
        true,
    ),
    (
        "copyright",
        "is site's `_Printer`: as a value, `type(copyright)(name, text, files, dirs)` reads any host file the cell names (only the bare call `copyright()` is plain)",
        true,
    ),
];

/// site's `exit`/`quit` (`Quitter`) under a namespace without IPython's: calling one closes the
/// host's standard input and raises `SystemExit` in the host process.
const SITE_QUITTER: &str = "is site's `Quitter`: calling it closes the host's standard input and raises `SystemExit` in the host, and `type(exit)` builds more of them";

/// The builtin exceptions that are not `Exception`s (round 8 S8-12): raised in a cell, they
/// pass every `except Exception` handler of the executor and the agent loop around it, and
/// `SystemExit` (what `raise SystemExit(0)`, `exit()` and `sys.exit()` raise) ends the host
/// interpreter, `KeyboardInterrupt` stops it as a Ctrl-C would.
pub const HOST_EXIT_EXCEPTIONS: &[&str] = &[
    "SystemExit",
    "KeyboardInterrupt",
    "GeneratorExit",
    "BaseException",
    "BaseExceptionGroup",
];

/// What a [`HOST_EXIT_EXCEPTIONS`] name reaches.
const HOST_EXIT: &str = "is not an `Exception`: raised in the cell (or subclassed and raised) it passes the executor's `except Exception` handlers, and `SystemExit` ends the host interpreter, `KeyboardInterrupt` stops it";

/// What `name` (NFKC-normalised) reaches when the cell reads it unbound, and whether a bare
/// no-argument call is plain; `None` for every other name.
fn reached(name: &str, ns: &crate::config::Namespace) -> Option<(&'static str, bool)> {
    if HOST_EXIT_EXCEPTIONS.contains(&name) {
        return Some((HOST_EXIT, false));
    }
    if let Some((_, what)) = IPYTHON_STATE_NAMES.iter().find(|(n, _)| *n == name) {
        if ns.names.contains(name) {
            return Some((what, false));
        }
        if matches!(name, "exit" | "quit") {
            return Some((SITE_QUITTER, false));
        }
        return None;
    }
    SITE_PRINTER_NAMES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, what, bare)| (*what, *bare))
}

/// Reports reads of [`IPYTHON_STATE_NAMES`] that resolve to the REPL namespace, and of site's
/// [`SITE_PRINTER_NAMES`] and `Quitter` builtins that resolve to the builtins.
pub fn check(checker: &mut Checker) {
    if !checker.enabled(&CODE_EXECUTION_BUILTIN) {
        return;
    }
    let ns = &checker.settings.namespace;
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
        let name = parse::ident(node, src);
        let name = &*name;
        let Some((what, bare_call_ok)) = reached(name, ns) else {
            continue;
        };
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
        if bare_call_ok && is_bare_call(nodes, id) {
            continue;
        }
        let exit_exception = HOST_EXIT_EXCEPTIONS.contains(&name);
        if exit_exception && handled_or_tested(nodes, src, id) {
            continue;
        }
        let help = if exit_exception {
            "A cell ends by returning or raising an ordinary exception (`raise RuntimeError(...)`); catching these (`except SystemExit:`) and `isinstance` tests are fine"
        } else if SITE_PRINTER_NAMES.iter().any(|(n, _, _)| *n == name) {
            "site adds `license`, `credits` and `copyright` to the builtins; their class opens the files it is given (issue 4, N3)"
        } else if ns.names.contains(name) {
            "IPython seeds the REPL namespace with its history and exit helpers (colony-reference §2.1); they pass every Colony validator and reach state outside the cell"
        } else {
            "site adds `exit` and `quit` to the builtins; a cell ends by returning, never by exiting the host"
        };
        found.push((parse::range(node), format!("`{name}` {what}"), help));
    }
    for (range, message, help) in found {
        checker.report(Diagnostic::new(&CODE_EXECUTION_BUILTIN, range, message).with_help(help));
    }
}

/// True when identifier `id` is the type of an `except` clause (`except SystemExit:`,
/// `except (KeyboardInterrupt, SystemExit) as e:`) or the class argument of `isinstance` /
/// `issubclass`: uses that catch or test the exception without raising it.
fn handled_or_tested(nodes: &crate::nodes::NodeTable, src: &str, id: crate::nodes::NodeId) -> bool {
    let mut cur = id;
    while let Some(p) = nodes.parent(cur) {
        match nodes.kind(p) {
            "tuple" | "parenthesized_expression" | "expression_list" => cur = p,
            // `except E as e`: the type, not the alias.
            "as_pattern" => {
                if nodes.named_children(p).next() != Some(cur) {
                    return false;
                }
                cur = p;
            }
            "except_clause" | "except_group_clause" => return true,
            "argument_list" => {
                let args: Vec<_> = nodes.named_children(p).collect();
                let Some(call) = nodes.parent(p) else {
                    return false;
                };
                let callee = nodes.child_by_field(call, "function");
                let tester = callee.is_some_and(|f| {
                    nodes.kind(f) == "identifier"
                        && matches!(parse::text(nodes.node(f), src), "isinstance" | "issubclass")
                });
                return tester && args.len() == 2 && args[1] == cur;
            }
            _ => return false,
        }
    }
    false
}

/// True when identifier `id` is the callee of a call with no argument (`credits()`).
fn is_bare_call(nodes: &crate::nodes::NodeTable, id: crate::nodes::NodeId) -> bool {
    let Some(call) = nodes.parent(id) else {
        return false;
    };
    if nodes.kind(call) != "call" || nodes.field(id) != Some("function") {
        return false;
    }
    nodes.child_by_field(call, "arguments").is_some_and(|a| {
        nodes.kind(a) == "argument_list" && nodes.named_children(a).next().is_none()
    })
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
                "25..29 `exit` is IPython's exit helper: calling it asks the host's shell to shut down, and its `_ip` attribute is the host's `InteractiveShell` (shell commands, code)",
            ]
        );
    }

    #[test]
    fn shell_through_exit_nfkc_and_site_printers() {
        // `exit._ip` is the shell; the NFKC spelling is the same name.
        assert_eq!(
            sbx003("sh = \u{ff45}\u{ff58}\u{ff49}\u{ff54}._ip\n", "").len(),
            1
        );
        // `type(license)` builds a file reader; `credits()` bare is plain, its value is not.
        let src = "P = type(license)\ncredits()\ncopyright()\nc = type(credits)\n";
        assert_eq!(
            sbx003(src, "dialect = \"functions\"\n")
                .iter()
                .map(|m| m.split(' ').next().unwrap().to_string())
                .collect::<Vec<_>>(),
            vec!["9..16", "49..56"]
        );
        // A cell's own `license` is its own.
        assert!(sbx003("license = \"MIT\"\nprint(type(license), license)\n", "").is_empty());
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
        // smolagents' namespace has no IPython names; its `exit` is site's `Quitter`.
        assert!(sbx003("print(_dh, Out)\n", "dialect = \"functions\"\n").is_empty());
        assert_eq!(
            sbx003("exit()\n", "dialect = \"functions\"\n"),
            vec!["0..4 `exit` is site's `Quitter`: calling it closes the host's standard input and raises `SystemExit` in the host, and `type(exit)` builds more of them"]
        );
        // Deselecting SBX003 silences it.
        assert!(sbx003("print(_dh)\n", "[lint]\nignore = [\"SBX003\"]\n").is_empty());
    }
}
