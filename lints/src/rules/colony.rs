//! `profile = "colony"`: Colony's own pre-execution validators reproduced exactly, defects
//! included, so a user can predict what Colony does with a cell (colony-reference §3.3-§3.5,
//! Polymathera/colony `src/polymathera/colony/agents/patterns/actions/code_constraints.py`).
//!
//! For every error string one of Colony's validators would return there is exactly one
//! diagnostic whose message is that string, character for character:
//!
//! | Colony validator | string | code |
//! |---|---|---|
//! | all three | `Syntax error: {msg} (<unknown>, line {n})` (reported once) | `SYN001` |
//! | APIKnowledgeBaseValidator | `Unknown action key '{key}'. Did you mean '{closest}'?` / `Unknown action key '{key}'.` | `API001` |
//! | ImportWhitelistValidator | `Blocked import: {name}` / `Blocked import: from {module}` | `IMP001` |
//! | IterationShapeValidator | `Too many actions in one iteration: ...`, `Too many browse() calls: ...`, `Code is too long: ...` | `SHP001`, `SHP003`, `SHP004` |
//!
//! The validators are run each on their own (in Colony only the first failing validator's
//! errors reach the model; which one fails first is visible from the codes). The engine
//! (`lint.rs`) reports every other rule at `info` in this profile and drops a strict
//! diagnostic that duplicates one of these (same code, overlapping range).
//!
//! Deliberate differences, all documented on the rule pages:
//! - `_closest_match` scans a Python `set`, so ties depend on `PYTHONHASHSEED`; here the tie is
//!   broken deterministically: the smallest distance, then the lexicographically smallest key.
//! - With no knowledge base loaded nothing is reported for keys (Colony's empty key set would
//!   reject every literal key; cellguard cannot know Colony's live key set without one).
//! - Keys whose middle segment is a per-process dynamic segment are treated as known, and a
//!   dynamic action is a suggestion candidate with the cell key's own middle segment (the one
//!   the model copied from the prompt of that process).

use super::Checker;
use crate::diagnostic::{Diagnostic, Fix, Severity};
use crate::extract::{py_isspace, py_strip_range};
use crate::kb::KnowledgeBase;
use crate::parse;
use crate::rules::{api, imports, shape, syntax};
use crate::source::TextRange;
use tree_sitter::Node;

/// Runs the three validators on the cell. When Colony's `ast.parse` fails, the syntax error
/// (which every validator would return identically) is the only finding.
pub fn check(checker: &mut Checker) {
    let root = checker.tree.root_node();
    if let Some(e) = syntax::syntax_error(checker.src, root) {
        let mut d = Diagnostic::new(
            &syntax::SYNTAX_ERROR,
            e.range,
            format!("Syntax error: {}", e.cpython_str()),
        );
        d.help = Some(format!(
            "Colony's validators all return this error; `ast.parse` raises {}",
            match e.class {
                syntax::tokenize::ErrorClass::Syntax => "SyntaxError",
                syntax::tokenize::ErrorClass::Indentation => "IndentationError",
                syntax::tokenize::ErrorClass::Tab => "TabError",
            }
        ));
        checker.report(d);
        return;
    }
    api_knowledge_base(checker, root);
    import_whitelist(checker, root);
    iteration_shape(checker, root);
}

/// A finding of the strict rules reported in the Colony profile: at `info`, since Colony does
/// not report it. When its message is word for word a string Colony's validators return (strict
/// `API001` words unknown keys as Colony does), a note saying why Colony stays silent is
/// appended, so that each Colony string is the message of exactly one diagnostic of the cell.
/// `colony` are the cell's Colony-profile findings.
///
/// A fix of an `API` rule that writes an action key Colony's validator does not know exactly (a
/// short or class-qualified key the dispatcher would resolve) would make Colony reject the cell:
/// it becomes display-only, saying so.
pub fn beyond_colony(mut d: Diagnostic, colony: &[Diagnostic], kb: &KnowledgeBase) -> Diagnostic {
    d.severity = Severity::Info;
    if d.rule.code.starts_with("API") {
        if let Some(fix) = d.fix.as_mut() {
            let rejected = fix.edits.iter().find_map(|e| {
                let key = e.content.trim_matches(|c| c == '"' || c == '\'');
                let colony_unknown =
                    !key.is_empty() && kb.get(key).is_none() && kb.resolve(key).action().is_some();
                colony_unknown.then(|| key.to_string())
            });
            if let Some(key) = rejected {
                fix.applicability = crate::diagnostic::Applicability::DisplayOnly;
                fix.message.push_str(&format!(
                    " (not applied in the Colony profile: Colony's validator accepts only exact \
                     keys and would reject `{key}`)"
                ));
            }
        }
    }
    if is_colony_string(d.rule.code, &d.message) {
        d.message.push_str(if colony.iter().any(|c| c.rule.code == "SYN001") {
            " (not reported by Colony, whose validators stop at the syntax error)"
        } else {
            " (not checked by Colony, whose validator reads only a string literal passed first to \
             the bare name `run`)"
        });
    }
    d
}

/// True when `message` has the form of a string Colony's validators return for `code`.
fn is_colony_string(code: &str, message: &str) -> bool {
    match code {
        "API001" => {
            message.starts_with("Unknown action key '")
                && (message.ends_with("'.") || message.ends_with("'?"))
        }
        "IMP001" => message.starts_with("Blocked import: "),
        "SHP001" => {
            message.starts_with("Too many actions in one iteration: ")
                && message.ends_with("do only that.")
        }
        "SHP003" => {
            message.starts_with("Too many browse() calls: ")
                && message.ends_with("for a specific action.")
        }
        "SHP004" => {
            message.starts_with("Code is too long: ")
                && message.ends_with("not a complete program.")
        }
        "SYN001" => message.starts_with("Syntax error: "),
        _ => false,
    }
}

/// Colony's `_closest_match`: the number of differing positions over the common length plus
/// the length difference (a padded Hamming distance, counted in code points), at most 3. Ties
/// go to the lexicographically smallest key (Colony: set iteration order).
pub fn closest_match<'k>(
    target: &str,
    candidates: impl IntoIterator<Item = &'k str>,
) -> Option<&'k str> {
    const MAX_DIST: usize = 3;
    let t: Vec<char> = target.chars().collect();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let cc: Vec<char> = c.chars().collect();
        let dist = t.iter().zip(&cc).filter(|(a, b)| a != b).count() + t.len().abs_diff(cc.len());
        if dist > MAX_DIST {
            continue;
        }
        let better = match best {
            None => true,
            Some((d, k)) => dist < d || (dist == d && c < k),
        };
        if better {
            best = Some((dist, c));
        }
    }
    best.map(|(_, k)| k)
}

/// `run(...)` with the bare name `run` as the function (parentheses ignored).
fn is_bare_run(call: Node, src: &str) -> bool {
    call.child_by_field_name("function")
        .map(parse::unparenthesize)
        .is_some_and(|f| f.kind() == "identifier" && parse::ident(f, src) == "run")
}

/// The first positional argument of a call when it is a `str` constant (`ast.Constant` with a
/// `str` value: plain, raw or `u` string literals and their implicit concatenation; not
/// f-strings, bytes, or anything starred).
fn first_str_constant<'t>(call: Node<'t>, src: &str) -> Option<(Node<'t>, String)> {
    let args = call.child_by_field_name("arguments")?;
    if args.kind() != "argument_list" {
        return None;
    }
    let mut cursor = args.walk();
    // Comments and backslash continuations are extras of the node, not arguments.
    let first = args
        .named_children(&mut cursor)
        .find(|n| !n.is_extra() && !matches!(n.kind(), "keyword_argument" | "dictionary_splat"))?;
    let inner = parse::unparenthesize(first);
    let strings: Vec<Node> = match inner.kind() {
        "string" => vec![inner],
        "concatenated_string" => {
            let mut c = inner.walk();
            inner
                .named_children(&mut c)
                .filter(|s| !s.is_extra())
                .collect()
        }
        _ => return None,
    };
    if strings.iter().any(|s| {
        let p = parse::string_prefix(*s, src);
        p.contains('f') || p.contains('b')
    }) {
        return None;
    }
    Some((first, parse::literal_str(inner, src)?))
}

/// Colony's APIKnowledgeBaseValidator (colony-reference §3.4).
fn api_knowledge_base(checker: &mut Checker, root: Node) {
    if checker.kb.is_empty() || !checker.enabled(&api::UNKNOWN_ACTION) {
        return;
    }
    let src = checker.src;
    let kb = checker.kb;
    let keys: Vec<&str> = kb
        .actions
        .iter()
        .filter(|a| !a.dynamic_segment)
        .map(|a| a.key.as_str())
        .collect();
    // Actions whose middle segment is random per process: (class, method).
    let dynamic: Vec<(&str, &str)> = kb
        .actions
        .iter()
        .filter(|a| a.dynamic_segment)
        .filter_map(|a| {
            let (class, rest) = a.key.split_once('.')?;
            Some((class, rest.rsplit_once('.')?.1))
        })
        .collect();
    let mut found = Vec::new();
    for node in parse::walk(root).filter(|n| n.kind() == "call") {
        if !is_bare_run(node, src) {
            continue;
        }
        let Some((arg, key)) = first_str_constant(node, src) else {
            continue;
        };
        let known =
            kb.get(&key).is_some() || matches!(kb.resolve(&key), crate::kb::Resolution::Dynamic(_));
        if known {
            continue;
        }
        // Colony compares with the live keys, whose random middle segment is the one the model
        // copied from the prompt: a dynamic action is a candidate with the cell's own middle
        // segment.
        let mut parts = key.splitn(3, '.');
        let middle = parts
            .next()
            .and(parts.next())
            .filter(|_| parts.next().is_some());
        let live: Vec<String> = match middle {
            Some(mid) => dynamic
                .iter()
                .map(|(class, method)| format!("{class}.{mid}.{method}"))
                .collect(),
            None => Vec::new(),
        };
        let candidates = keys.iter().copied().chain(live.iter().map(String::as_str));
        let closest = closest_match(&key, candidates).map(str::to_string);
        found.push((parse::range(arg), key, closest));
    }
    for (range, key, closest) in found {
        let d = match closest {
            Some(new) => {
                let edits = colony_fix_edits(src, &key, &new);
                let mut d = Diagnostic::new(
                    &api::UNKNOWN_ACTION,
                    range,
                    format!("Unknown action key '{key}'. Did you mean '{new}'?"),
                );
                if !edits.is_empty() {
                    d = d.with_fix(Fix::display_only(
                        format!(
                            "Colony's fix: rewrite `run('{key}'` to `run(\"{new}\"` everywhere in the cell"
                        ),
                        edits,
                    ));
                }
                d.with_help(
                    "Colony applies this rewrite automatically and runs the result unchecked; the \
                     suggestion is a padded Hamming match and may change the meaning",
                )
            }
            None => Diagnostic::new(
                &api::UNKNOWN_ACTION,
                range,
                format!("Unknown action key '{key}'."),
            ),
        };
        checker.report(d);
    }
}

/// The edits of Colony's `fixed_code` for one `(old, new)` pair: every match of
/// `run\(\s*(['"])OLD\1` anywhere in the text (also `rerun(`, `self.run(`, comments and strings)
/// replaced by `run("NEW"`.
pub fn colony_fix_edits(src: &str, old: &str, new: &str) -> Vec<crate::diagnostic::Edit> {
    let e = regex::escape(old);
    let Ok(re) = regex::Regex::new(&format!(r#"run\(\s*(?:'{e}'|"{e}")"#)) else {
        return Vec::new();
    };
    re.find_iter(src)
        .map(|m| {
            crate::diagnostic::Edit::replace(
                TextRange::new(m.start(), m.end()),
                format!("run(\"{new}\""),
            )
        })
        .collect()
}

/// The module roots Colony allows: the configured allowlist read as a set of root names
/// (`a.*` counts as `a`; entries with a dot can never equal a root).
fn allowed_roots(checker: &Checker) -> Vec<String> {
    checker
        .settings
        .allowed_imports
        .iter()
        .map(|a| a.trim().strip_suffix(".*").unwrap_or(a.trim()).to_string())
        .collect()
}

/// The dotted name of a `dotted_name` node without whitespace or comments.
fn dotted(node: Node, src: &str) -> String {
    let mut cursor = node.walk();
    let parts: Vec<std::borrow::Cow<str>> = node
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "identifier")
        .map(|n| parse::ident(n, src))
        .collect();
    if parts.is_empty() {
        parse::ident(node, src).into_owned()
    } else {
        parts.join(".")
    }
}

/// Colony's ImportWhitelistValidator (colony-reference §3.3): module roots only, every alias of
/// `import a, b`, `from m import x` judged on `m`'s root, the relative level ignored.
fn import_whitelist(checker: &mut Checker, root: Node) {
    if !checker.enabled(&imports::BLOCKED_IMPORT) {
        return;
    }
    let src = checker.src;
    let allowed = allowed_roots(checker);
    let is_allowed = |module: &str| {
        let r = module.split('.').next().unwrap_or("");
        allowed.iter().any(|a| a == r)
    };
    let mut found = Vec::new();
    for node in parse::walk(root) {
        match node.kind() {
            "import_statement" => {
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    let dn = if name.kind() == "aliased_import" {
                        name.child_by_field_name("name")
                    } else {
                        Some(name)
                    };
                    let Some(dn) = dn else { continue };
                    let module = dotted(dn, src);
                    if !is_allowed(&module) {
                        found.push((parse::range(dn), format!("Blocked import: {module}")));
                    }
                }
            }
            "import_from_statement" => {
                let Some(m) = node.child_by_field_name("module_name") else {
                    continue;
                };
                let dn = if m.kind() == "relative_import" {
                    let mut c = m.walk();
                    let inner = m.named_children(&mut c).find(|n| n.kind() == "dotted_name");
                    match inner {
                        Some(d) => d,
                        // `from . import x`: no module, nothing checked.
                        None => continue,
                    }
                } else {
                    m
                };
                let module = dotted(dn, src);
                if !is_allowed(&module) {
                    found.push((parse::range(dn), format!("Blocked import: from {module}")));
                }
            }
            "future_import_statement" => {
                // `from __future__ import x`: the module is `__future__`.
                let start = node.start_byte();
                let text = parse::text(node, src);
                let range = text
                    .find("__future__")
                    .map(|i| TextRange::new(start + i, start + i + "__future__".len()))
                    .unwrap_or_else(|| parse::range(node));
                if !is_allowed("__future__") {
                    found.push((range, "Blocked import: from __future__".to_string()));
                }
            }
            _ => {}
        }
    }
    for (range, message) in found {
        checker.report(Diagnostic::new(&imports::BLOCKED_IMPORT, range, message));
    }
}

/// Colony's `_is_call(node, name)`: a call of the bare name, or of `X.name` where `X` is a
/// simple name (so `asyncio.run(...)` and `agent.browse()` match).
pub fn is_colony_call(node: Node, src: &str, name: &str) -> bool {
    if node.kind() != "call" {
        return false;
    }
    let Some(f) = node
        .child_by_field_name("function")
        .map(parse::unparenthesize)
    else {
        return false;
    };
    match f.kind() {
        "identifier" => parse::ident(f, src) == name,
        "attribute" => {
            let object = f.child_by_field_name("object").map(parse::unparenthesize);
            let attr = f.child_by_field_name("attribute");
            object.is_some_and(|o| o.kind() == "identifier")
                && attr.is_some_and(|a| parse::ident(a, src) == name)
        }
        _ => false,
    }
}

fn sum_children(node: Node, src: &str) -> u64 {
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    children.into_iter().map(|c| count_runs(c, src)).sum()
}

fn block_of(node: Node) -> Option<Node> {
    node.child_by_field_name("body")
        .or_else(|| node.child_by_field_name("consequence"))
        .or_else(|| {
            let mut c = node.walk();
            let b = node.named_children(&mut c).find(|n| n.kind() == "block");
            b
        })
}

fn count_opt(node: Option<Node>, src: &str) -> u64 {
    node.map(|n| count_runs(n, src)).unwrap_or(0)
}

/// The `orelse` of an `if`/`elif` chain starting at `clauses[0]`.
fn orelse(clauses: &[Node], src: &str) -> u64 {
    match clauses.first() {
        None => 0,
        Some(c) if c.kind() == "elif_clause" => {
            count_opt(c.child_by_field_name("condition"), src)
                + count_opt(block_of(*c), src).max(orelse(&clauses[1..], src))
        }
        Some(c) => count_opt(block_of(*c), src),
    }
}

/// Colony's `_count_runs_per_path` (colony-reference §3.5): a matching `run` call counts 1 plus
/// its children; `if` takes the test plus the larger branch (`elif` nests in the else branch);
/// `try` takes `max(body + else, body + max(handler bodies)) + finally`, handler types ignored;
/// everything else, `match`, `try/except*` and conditional expressions included, sums its
/// children.
pub fn count_runs(node: Node, src: &str) -> u64 {
    if is_colony_call(node, src, "run") {
        return 1 + sum_children(node, src);
    }
    match node.kind() {
        "if_statement" => {
            let mut cursor = node.walk();
            let clauses: Vec<Node> = node
                .named_children(&mut cursor)
                .filter(|n| matches!(n.kind(), "elif_clause" | "else_clause"))
                .collect();
            count_opt(node.child_by_field_name("condition"), src)
                + count_opt(node.child_by_field_name("consequence"), src).max(orelse(&clauses, src))
        }
        "try_statement" => {
            let mut cursor = node.walk();
            let children: Vec<Node> = node.named_children(&mut cursor).collect();
            // `except*` (an except clause with a `*` token; `except_group_clause` in some
            // grammar versions) makes it a TryStar, which Colony sums like any other node.
            let star = children.iter().any(|c| {
                c.kind() == "except_group_clause"
                    || (c.kind() == "except_clause" && c.child(1).is_some_and(|t| t.kind() == "*"))
            });
            if star {
                return sum_children(node, src);
            }
            let body = count_opt(node.child_by_field_name("body"), src);
            let mut handlers = 0;
            let (mut else_, mut finally) = (0, 0);
            for c in children {
                match c.kind() {
                    "except_clause" => handlers = handlers.max(count_opt(block_of(c), src)),
                    "else_clause" => else_ = count_opt(block_of(c), src),
                    "finally_clause" => finally = count_opt(block_of(c), src),
                    _ => {}
                }
            }
            (body + else_).max(body + handlers) + finally
        }
        _ => sum_children(node, src),
    }
}

/// Colony's substantive lines: `code.strip().split("\n")`, keeping lines that are not blank and
/// whose stripped text does not start with `#`. Returns their ranges (stripped) in the cell.
/// `lone_cr` lists the offsets where the cell text has a `\n` that was a lone `\r` in the code
/// Colony sees ([`crate::extract::Cell::lone_cr`]): Colony's `split("\n")` does not split there.
pub fn substantive_lines(src: &str, lone_cr: &[usize]) -> Vec<TextRange> {
    let (a, b) = py_strip_range(src);
    let mut out = Vec::new();
    let mut offset = a;
    let mut lines = Vec::new();
    let mut start = a;
    for (i, _) in src[a..b].match_indices('\n') {
        let at = a + i;
        if lone_cr.binary_search(&at).is_err() {
            lines.push(&src[start..at]);
            start = at + 1;
        }
    }
    lines.push(&src[start..b]);
    for line in lines {
        let t = line.trim_matches(py_isspace);
        if !t.is_empty() && !t.starts_with('#') {
            let lead = line.len() - line.trim_start_matches(py_isspace).len();
            out.push(TextRange::new(offset + lead, offset + lead + t.len()));
        }
        offset += line.len() + 1;
    }
    out
}

/// Colony's IterationShapeValidator (colony-reference §3.5).
fn iteration_shape(checker: &mut Checker, root: Node) {
    let src = checker.src;
    let (max_actions, max_browse, max_lines) = (
        checker.settings.max_actions as u64,
        checker.settings.max_browse as u64,
        checker.settings.max_lines as usize,
    );
    let nth_call = |name: &str, n: u64| {
        parse::walk(root)
            .filter(|c| is_colony_call(*c, src, name))
            .nth(n as usize)
            .map(parse::range)
    };
    let run_count = count_runs(root, src);
    if run_count > max_actions {
        let range = nth_call("run", max_actions).unwrap_or_default();
        checker.report(Diagnostic::new(
            &shape::TOO_MANY_ACTIONS,
            range,
            format!(
                "Too many actions in one iteration: {run_count} run() calls, maximum is \
                 {max_actions}. Each iteration should be a focused step of 1\u{2013}{max_actions} \
                 actions, not a complete program. Pick the most important next action and do \
                 only that."
            ),
        ));
    }
    let browse_count = parse::walk(root)
        .filter(|c| is_colony_call(*c, src, "browse"))
        .count() as u64;
    if browse_count > max_browse {
        let range = nth_call("browse", max_browse).unwrap_or_default();
        checker.report(Diagnostic::new(
            &shape::TOO_MANY_BROWSE,
            range,
            format!(
                "Too many browse() calls: {browse_count}, maximum is {max_browse}. Action keys \
                 are already shown in the prompt \u{2014} use the exact keys from Available \
                 Actions. Use browse() only to look up parameter details for a specific action."
            ),
        ));
    }
    let lines = substantive_lines(src, &checker.cell.lone_cr);
    if lines.len() > max_lines {
        checker.report(Diagnostic::new(
            &shape::CELL_TOO_LONG,
            lines[max_lines],
            format!(
                "Code is too long: {} lines, maximum is {max_lines}. Write a focused step, not a \
                 complete program.",
                lines.len()
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_hamming_distance() {
        let keys = [
            "AgentPoolCapability.AgentPoolCapability.get_agent_status",
            "A.A.spawn_agents",
            "A.A.spawn_agentx",
        ];
        // One inserted character at the start shifts every position: no suggestion.
        assert_eq!(
            closest_match(
                "xAgentPoolCapability.AgentPoolCapability.get_agent_status",
                keys
            ),
            None
        );
        assert_eq!(
            closest_match(
                "AgentPoolCapability.AgentPoolCapability.get_agent_statsu",
                keys
            ),
            Some("AgentPoolCapability.AgentPoolCapability.get_agent_status")
        );
        // A tie (distance 1 to both) goes to the smaller key.
        assert_eq!(
            closest_match("A.A.spawn_agent", keys),
            Some("A.A.spawn_agents")
        );
        // Distance 3 is still a match, 4 is not.
        assert_eq!(closest_match("X.k.abc", ["X.k.xyz"]), Some("X.k.xyz"));
        assert_eq!(closest_match("X.k.abcd", ["X.k.wxyz"]), None);
    }

    #[test]
    fn fix_edits_follow_colonys_regex() {
        let src =
            "a = await run('old')\nb = rerun(\"old\")\nc = run( 'old', x=1)\nd = run('''old''')\n";
        let edits = colony_fix_edits(src, "old", "new");
        let hit: Vec<&str> = edits.iter().map(|e| &src[e.range.as_range()]).collect();
        assert_eq!(hit, vec!["run('old'", "run(\"old\"", "run( 'old'"]);
        assert!(edits.iter().all(|e| e.content == "run(\"new\""));
    }
}
