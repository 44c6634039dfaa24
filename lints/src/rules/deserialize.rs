//! `SBX007` on pydantic's deprecated v1 deserialisers reached through a model on any receiver
//! (issue 4, third tester N2).
//!
//! pydantic 2 still ships the v1 API on every `BaseModel`, so Colony's pre-bound `ActionResult`,
//! `Action` and `Ref` (colony-reference §2.1) and every model a cell defines have it:
//!
//! - `Model.parse_raw(b, content_type="application/pickle", allow_pickle=True)` and
//!   `pydantic.deprecated.parse.load_str_bytes(...)` call `pickle.loads` on the cell's bytes, in
//!   the host, with the real builtins: a pickle runs any code (`cposix\nsystem\n...`);
//! - `Model.parse_file(path, ...)` reads a host file the cell names (and unpickles it under
//!   `allow_pickle=True`).
//!
//! The receiver is not known statically (a pre-bound model, a subclass, a value), so the rule
//! keys on the member and the keyword:
//!
//! - an `allow_pickle=` keyword whose value is not literally `False`, `None` or `0`, on any call
//!   (`parse_raw`, `parse_file`, `load_str_bytes`, `load_file`, and `numpy.load`, where it means
//!   the same);
//! - the strings `"allow_pickle"` and `"parse_file"` (also split into literal parts joined by
//!   `+` or implicit concatenation) where they can become a keyword or attribute name: a dict
//!   key (`**opts`), an element of a list, tuple or set (`dict.fromkeys`, `zip`), an argument
//!   of `methodcaller`, `fromkeys`, `dict`, `zip` or `partial`; not in `print("parse_file")` or
//!   a comparison;
//! - a call of a v1 loader (`parse_raw`, `parse_raw_as`, `parse_file`, `parse_file_as`,
//!   `load_str_bytes`, `load_file`) given a `**mapping` (the mapping can carry `allow_pickle`
//!   under a name built at runtime);
//! - such a loader other than `parse_file` (reported on every read, below) taken as a value
//!   instead of being called on the spot (`functools.partial(ActionResult.parse_raw, ...)`,
//!   `[M.parse_raw][0]`, `pr = parse_raw_as`): its keywords are then supplied where they cannot
//!   be checked (issue 4, fourth tester G28);
//! - a `content_type=` keyword whose constant value ends in `pickle`, on any call (the other half
//!   of pydantic's pickle switch);
//! - any `parse_file` attribute read on a receiver that is not a module or a module member
//!   (`M.parse_file`, `getattr(M, name)` with a folded name, `attrgetter`): reported by the
//!   sandbox analysis (`rules/sandbox/check.rs`), which follows names and aliases; module paths
//!   such as `pydantic.v1.parse_file_as` are judged by the `deny-members` list.
//!
//! A plain `Model.parse_raw('{"x": 1}')` (JSON, the default) stays clean: without
//! `allow_pickle` pydantic refuses the pickle content type.

use super::sandbox::DANGEROUS_MEMBER;
use super::Checker;
use crate::diagnostic::Diagnostic;
use crate::nodes::{NodeId, NodeTable};
use crate::parse;
use crate::semantic::BindingKind;
use std::collections::HashMap;

const HELP: &str = "pydantic's deprecated v1 API (`parse_raw`, `parse_file`, `load_str_bytes`) is on every model, Colony's pre-bound `ActionResult`/`Action`/`Ref` too; parse JSON with `Model.model_validate_json(text)` instead";

/// The identifier text as Python reads it (NFKC, PEP 3131).
fn ident(text: &str) -> std::borrow::Cow<'_, str> {
    parse::ident_name(text)
}

/// The value of a constant string built from literal parts: a literal, an implicit
/// concatenation, or literals joined by `+` (`"allow_" + "pickle"`).
fn folded_str(nodes: &NodeTable, id: NodeId, src: &str, depth: u32) -> Option<String> {
    if depth > 64 {
        return None;
    }
    match nodes.kind(id) {
        "string" | "concatenated_string" => parse::literal_str(nodes.node(id), src),
        "parenthesized_expression" => {
            let inner = nodes
                .named_children(id)
                .find(|&c| nodes.kind(c) != "comment")?;
            folded_str(nodes, inner, src, depth + 1)
        }
        "binary_operator" => {
            let op = nodes.child_by_field(id, "operator")?;
            if parse::text(nodes.node(op), src) != "+" {
                return None;
            }
            let l = folded_str(nodes, nodes.child_by_field(id, "left")?, src, depth + 1)?;
            let r = folded_str(nodes, nodes.child_by_field(id, "right")?, src, depth + 1)?;
            Some(l + &r)
        }
        _ => None,
    }
}

/// True for a literal that turns pickle off (`False`, `None`, `0`).
fn literally_off(nodes: &NodeTable, id: NodeId, src: &str) -> bool {
    match nodes.kind(id) {
        "false" | "none" => true,
        "integer" => parse::text(nodes.node(id), src)
            .trim_start_matches('0')
            .is_empty(),
        _ => false,
    }
}

/// The member name of a callee (`M.parse_raw` -> `parse_raw`, `parse_raw` -> `parse_raw`).
fn callee_member<'s>(nodes: &NodeTable, call: NodeId, src: &'s str) -> Option<&'s str> {
    let mut f = nodes.child_by_field(call, "function")?;
    // `(M.parse_raw)(...)`
    for _ in 0..64 {
        if nodes.kind(f) != "parenthesized_expression" {
            break;
        }
        f = nodes
            .named_children(f)
            .find(|&c| nodes.kind(c) != "comment")?;
    }
    let name = match nodes.kind(f) {
        "attribute" => nodes.child_by_field(f, "attribute")?,
        "identifier" => f,
        _ => return None,
    };
    Some(parse::text(nodes.node(name), src))
}

/// Reports pickle-enabled and file-reading pydantic deserialisation on any receiver.
pub fn check(checker: &mut Checker) {
    if !checker.enabled(&DANGEROUS_MEMBER) {
        return;
    }
    let nodes = checker.nodes;
    let src = checker.src;
    let mut found = Vec::new();
    // Strings folded at their outermost expression only.
    for id in 0..nodes.len() {
        match nodes.kind(id) {
            "keyword_argument" => {
                let (Some(k), Some(v)) = (
                    nodes.child_by_field(id, "name"),
                    nodes.child_by_field(id, "value"),
                ) else {
                    continue;
                };
                let key = ident(parse::text(nodes.node(k), src));
                if key == "content_type"
                    && folded_str(nodes, v, src, 0)
                        .is_some_and(|t| t.trim().to_ascii_lowercase().ends_with("pickle"))
                {
                    found.push((
                        parse::range(nodes.node(id)),
                        "`content_type=` a pickle type selects pydantic's pickle loader (`parse_raw`, `parse_raw_as`, `load_str_bytes`): `pickle.loads` runs any code in the host".to_string(),
                    ));
                }
                if key == "allow_pickle" && !literally_off(nodes, v, src) {
                    found.push((
                        parse::range(nodes.node(id)),
                        "`allow_pickle=` lets pydantic's `parse_raw`/`parse_file`/`load_str_bytes` (and `numpy.load`) unpickle the data: `pickle.loads` runs any code in the host".to_string(),
                    ));
                }
            }
            "string" | "concatenated_string" | "binary_operator" => {
                // Only the outermost constant expression (`"a" + "b"` once, not its parts).
                if nodes.parent(id).is_some_and(|p| {
                    matches!(nodes.kind(p), "binary_operator" | "concatenated_string")
                        && folded_str(nodes, p, src, 0).is_some()
                }) {
                    continue;
                }
                let Some(s) = folded_str(nodes, id, src, 0) else {
                    continue;
                };
                if matches!(s.as_str(), "allow_pickle" | "parse_file")
                    && !reaches_lookup(nodes, id, src)
                {
                    continue;
                }
                if s == "allow_pickle" {
                    found.push((
                        parse::range(nodes.node(id)),
                        "The string `\"allow_pickle\"` names pydantic's pickle switch (a `**` keyword or `getattr` name): `parse_raw`/`parse_file` then unpickle the data, and `pickle.loads` runs any code in the host".to_string(),
                    ));
                } else if s == "parse_file" {
                    found.push((
                        parse::range(nodes.node(id)),
                        "The string `\"parse_file\"` names pydantic's `parse_file`, which reads a host file the cell names (and unpickles it with `allow_pickle=True`)".to_string(),
                    ));
                }
            }
            "call" => {
                let Some(member) = callee_member(nodes, id, src) else {
                    continue;
                };
                if !is_v1_loader(&ident(member)) {
                    continue;
                }
                let Some(args) = nodes.child_by_field(id, "arguments") else {
                    continue;
                };
                if let Some(splat) = nodes
                    .named_children(args)
                    .find(|&a| nodes.kind(a) == "dictionary_splat")
                {
                    found.push((
                        parse::range(nodes.node(splat)),
                        format!("`{member}(**...)`: the mapping can carry `allow_pickle=True`, and pydantic then unpickles the data (`pickle.loads` runs any code in the host)"),
                    ));
                }
            }
            "identifier" | "attribute" if loader_as_value(checker, nodes, id, src) => {
                let name = match nodes.kind(id) {
                    "attribute" => nodes.child_by_field(id, "attribute").unwrap_or(id),
                    _ => id,
                };
                found.push((
                    parse::range(nodes.node(name)),
                    format!("`{}` taken as a value: pydantic's deprecated v1 loader unpickles the data when it is later called with `allow_pickle` (a keyword that can then be built at runtime), and `pickle.loads` runs any code in the host", parse::text(nodes.node(name), src)),
                ));
            }
            _ => {}
        }
    }
    let mut seen = HashMap::new();
    for (range, message) in found {
        if seen.insert((range.start, range.end), ()).is_some() {
            continue;
        }
        checker.report(Diagnostic::new(&DANGEROUS_MEMBER, range, message).with_help(HELP));
    }
}

/// pydantic's deprecated v1 loaders that can unpickle (`allow_pickle`) or read host files.
fn is_v1_loader(name: &str) -> bool {
    V1_LOADERS.contains(&name)
}

/// The names [`is_v1_loader`] accepts.
const V1_LOADERS: &[&str] = &[
    "parse_raw",
    "parse_raw_as",
    "parse_file",
    "parse_file_as",
    "load_str_bytes",
    "load_file",
];

/// What [`check`]'s findings inside one top-level statement depend on beyond that statement's
/// text: for each v1 loader name, whether the module binds it, and only by imports (the test
/// [`loader_as_value`] makes of a bare name). One bit per name; `0` when the rule is off (then
/// [`check`] reports nothing).
pub fn context_key(checker: &Checker) -> u64 {
    if !checker.enabled(&DANGEROUS_MEMBER) {
        return 0;
    }
    let model = checker.semantic();
    let mut key = 1u64;
    for (i, name) in V1_LOADERS.iter().enumerate() {
        let b = model.bindings(0, name);
        if !b.is_empty() && b.iter().all(|b| b.kind == BindingKind::Import) {
            key |= 2 << i;
        }
    }
    key
}

/// True when `id` (an `identifier` or `attribute`) names a v1 loader ([`is_v1_loader`]) that is
/// used as a value rather than called on the spot: not the callee of a call, not a store target,
/// not a name being defined or imported. A bare name counts only when the cell binds it by
/// `import` alone (`from pydantic.v1 import parse_raw_as`), not when it defines it.
fn loader_as_value(checker: &Checker, nodes: &NodeTable, id: NodeId, src: &str) -> bool {
    let name_node = match nodes.kind(id) {
        "attribute" => match nodes.child_by_field(id, "attribute") {
            Some(a) => a,
            None => return false,
        },
        "identifier" => id,
        _ => return false,
    };
    let name = ident(parse::text(nodes.node(name_node), src)).into_owned();
    // `parse_file` reads are reported wherever they occur (rules/sandbox/check.rs).
    if !is_v1_loader(&name) || name == "parse_file" {
        return false;
    }
    let Some(parent) = nodes.parent(id) else {
        return false;
    };
    if nodes.kind(id) == "identifier" {
        // The `attribute` field of `x.parse_raw` is judged as the attribute node.
        if nodes.kind(parent) == "attribute" && nodes.field(id) == Some("attribute") {
            return false;
        }
        if !matches!(
            nodes.kind(parent),
            "argument_list"
                | "list"
                | "tuple"
                | "set"
                | "pair"
                | "expression_list"
                | "assignment"
                | "augmented_assignment"
                | "named_expression"
                | "return_statement"
                | "yield"
                | "parenthesized_expression"
                | "subscript"
                | "conditional_expression"
                | "boolean_operator"
                | "lambda"
                | "keyword_argument"
                | "default_parameter"
                | "list_splat"
                | "attribute"
        ) {
            return false;
        }
        if nodes.kind(parent) == "keyword_argument" && nodes.field(id) == Some("name") {
            return false;
        }
        if matches!(
            nodes.kind(parent),
            "assignment" | "augmented_assignment" | "named_expression"
        ) && matches!(nodes.field(id), Some("left" | "name"))
        {
            return false;
        }
        let model = checker.semantic();
        let b = model.bindings(0, &name);
        if b.is_empty() || !b.iter().all(|b| b.kind == BindingKind::Import) {
            return false;
        }
    }
    // Climb parentheses to the expression's real position.
    let mut cur = id;
    let mut up = parent;
    for _ in 0..64 {
        if nodes.kind(up) != "parenthesized_expression" {
            break;
        }
        cur = up;
        match nodes.parent(up) {
            Some(p) => up = p,
            None => return false,
        }
    }
    match nodes.kind(up) {
        // Called on the spot: the call's keywords are checked.
        "call" if nodes.field(cur) == Some("function") => false,
        // `M.parse_raw.__doc__`-style reads go through the attribute: the outer node decides.
        "attribute" if nodes.field(cur) == Some("object") => false,
        // Store and delete targets read nothing.
        "assignment" | "augmented_assignment" if nodes.field(cur) == Some("left") => false,
        "delete_statement" => false,
        _ => true,
    }
}

/// True when the constant string `id` sits where it can become a keyword or an attribute name:
/// a dict display's key (a `**` mapping), an element of a list, tuple or set (`dict.fromkeys`,
/// `zip`, `dict([...])` pairs), or an argument of `methodcaller`, `fromkeys`, `dict`, `zip` or
/// `partial`. A name given to `getattr`/`attrgetter`, also through a variable, is an attribute
/// read, which the sandbox analysis reports (`rules/sandbox/check.rs`). Elsewhere (`print(...)`,
/// a comparison, a message) the string names nothing.
fn reaches_lookup(nodes: &NodeTable, id: NodeId, src: &str) -> bool {
    let mut cur = id;
    for _ in 0..64 {
        let Some(p) = nodes.parent(cur) else {
            return false;
        };
        match nodes.kind(p) {
            "parenthesized_expression" => cur = p,
            "pair" => return nodes.child_by_field(p, "key") == Some(cur),
            "list" | "tuple" | "set" => return true,
            "argument_list" => {
                let Some(call) = nodes.parent(p) else {
                    return false;
                };
                return callee_member(nodes, call, src).is_some_and(|m| {
                    matches!(
                        &*ident(m),
                        "methodcaller" | "fromkeys" | "dict" | "zip" | "partial"
                    )
                });
            }
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::config::{ConfigFile, Overrides, Settings};
    use crate::{check_file, KnowledgeBase, SourceFile};

    fn sbx007(src: &str, config: &str) -> Vec<String> {
        let file: ConfigFile = toml::from_str(config).unwrap();
        let settings = Settings::resolve(&file, None, &Overrides::default()).unwrap();
        let f = SourceFile::new("cell.py", src);
        check_file(&f, &settings, &KnowledgeBase::new())
            .into_iter()
            .filter(|d| d.rule.code == "SBX007")
            .map(|d| format!("{}..{}", d.range.start, d.range.end))
            .collect()
    }

    #[test]
    fn pickle_switch_and_file_loader_on_any_receiver() {
        // keyword on a pre-bound model
        assert_eq!(
            sbx007("ActionResult.parse_raw(b, content_type=\"application/pickle\", allow_pickle=True)\n", ""),
            vec!["26..59", "61..78"]
        );
        // the switch as a dict key, built from parts
        assert_eq!(
            sbx007(
                "o = {\"allow_\" + \"pickle\": 1}\nRef.parse_raw(b, **o)\n",
                ""
            ),
            vec!["5..24", "46..49"]
        );
        // parse_file on any receiver, plain
        assert_eq!(
            sbx007("Action.parse_file(\"/etc/hostname\")\n", ""),
            vec!["7..17"]
        );
    }

    #[test]
    fn v1_loaders_taken_as_values_or_given_mappings() {
        // G28: the keyword name built at runtime, the loader passed around as a value.
        for (src, want) in [
            (
                "f = functools.partial(ActionResult.parse_raw, b)\n",
                "35..44",
            ),
            ("pr = [ActionResult.parse_raw][0]\n", "19..28"),
            ("pr = (Ref.parse_raw)\n", "10..19"),
            ("g = getattr(x, k) or Action.parse_raw\n", "28..37"),
            ("run_it(Action.load_str_bytes)\n", "14..28"),
            ("t.parse_raw_as(int, b, **opts)\n", "23..29"),
            (
                "from pydantic.v1 import parse_raw_as\npr = parse_raw_as\n",
                "42..54",
            ),
            ("Model.parse_file_as(int, p, **o)\n", "28..31"),
        ] {
            assert_eq!(sbx007(src, ""), vec![want], "{src}");
        }
        // A module path is also judged by the deny list (`pydantic.v1.parse_file_as`).
        assert_eq!(
            sbx007("pydantic.v1.parse_file_as(int, p, **o)\n", ""),
            vec!["12..25", "34..37"]
        );
    }

    #[test]
    fn json_parse_raw_and_switched_off_pickle_are_clean() {
        let src = "m = ActionResult.parse_raw('{\"x\": 1}', content_type=\"application/json\")\nn = Ref.parse_raw(b, allow_pickle=False)\nd = json.loads(s)\nclass P:\n    parse_file = None\n";
        assert!(sbx007(src, "").is_empty(), "{:?}", sbx007(src, ""));
    }
}
