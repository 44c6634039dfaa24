//! `API`: action keys and parameters checked against the knowledge base (Colony
//! APIKnowledgeBaseValidator, colony-reference §3.4, done as the dispatcher really resolves keys,
//! §2.3), and calls of names nobody binds.
//!
//! Every rule here except `API009` (and the missing key of a bare `run()`) needs a knowledge
//! base and stays silent without one. Actions are found by the shared
//! [`SemanticModel`](crate::semantic::SemanticModel): `run(...)` of the namespace in the Colony
//! dialect, knowledge-base tools called as functions in the functions dialect.

mod types;

use super::Checker;
use crate::config::Dialect;
use crate::diagnostic::{
    Applicability, Diagnostic, Edit, Fix, FixAvailability, Rule, RuleDoc, Severity,
};
use crate::kb::{Action, KnowledgeBase, Resolution};
use crate::parse;
use crate::semantic::{self, ActionCall, KeyForm, KeySource, SemanticModel};
use crate::source::TextRange;
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;

/// The knowledge base the API rule examples run against (`cellguard-kb/1`).
pub const DOC_KB: &str = r#"{
  "schema": "cellguard-kb/1",
  "pseudo_keys": ["__repl_guidance__", "ActionType.EXECUTE_CODE"],
  "groups": [
    {"group_key": "AgentPoolCapability", "actions": {
      "AgentPoolCapability.AgentPoolCapability.get_agent_status": {
        "params": [{"name": "agent_ids", "type": "list[str]", "required": true}]},
      "AgentPoolCapability.AgentPoolCapability.spawn_agents": {
        "params": [{"name": "count", "type": "int", "required": true},
                   {"name": "mode", "type": "Literal['fast', 'safe']", "required": false, "default": "'safe'"}]}}},
    {"group_key": "SessionOrchestratorCapability", "actions": {
      "SessionOrchestratorCapability.SessionOrchestratorCapability.respond_to_user": {
        "params": [{"name": "content", "type": "str", "required": true}]}}},
    {"group_key": "ChatCapability", "actions": {
      "ChatCapability.ChatCapability.respond_to_user": {
        "params": [{"name": "content", "type": "str", "required": true}]}}}
  ]
}"#;

/// API001 unknown-action.
pub static UNKNOWN_ACTION: Rule = Rule {
    code: "API001",
    name: "unknown-action",
    severity: Severity::Error,
    summary: "Action key that no registered action resolves to",
    fix: FixAvailability::Sometimes,
    doc: RuleDoc {
        what: "Reports an action key (a `run(...)` key in the Colony dialect, a dotted tool name such as `spotify.paly` in the functions dialect) that resolves to no action, even after the dispatcher's suffix and prefix-strip resolution. Suggests the closest keys by true edit distance (Damerau-Levenshtein on the whole key, else on the last segment), ties broken by distance, then shorter key, then key order.",
        why: "Colony's dispatcher answers `Unknown action type: {key}` as a failed result and the cell carries on, so the rest of the cell runs on a missing result. Colony's own validator measures a padded Hamming distance, misses one-character insertions, picks among ties by hash order, and auto-applies fixes that flip meaning (`get_status` -> `set_status`).",
        example: "r = await run(\"AgentPoolCapability.AgentPoolCapability.get_agent_statsu\", agent_ids=[])\n",
        fixed_example: "r = await run(\"AgentPoolCapability.AgentPoolCapability.get_agent_status\", agent_ids=[])\n",
        fix_safety: "Replaces the key literal's text (quotes kept) with the closest key. Safe only when that match is unique, its class prefix agrees with what was written, and the change is a typo rather than another word: when the differing words are antonym-like (`get`/`set`, `add`/`delete`, `push`/`pull`, `approve`/`reprove`, `enable`/`disable`, `lock`/`unlock`, ..., also inflected or compounded: `is_disabled`/`is_enabled`, `stopping`/`starting`, `stopup`/`startup`), or the written word is itself a word the knowledge base uses, the fix is display-only. Keys built from variables, f-strings or `+` concatenations get no fix; an implicit concatenation (`\"A.b.\" \"c\"`) is edited in the part that differs, keeping its split.",
        options: "`knowledge-base`, `--kb`; `dialect`. With `profile = \"colony\"`, Colony's exact-key check, padded Hamming suggestion and messages (docs/colony-profile.md).",
        source: "Colony APIKnowledgeBaseValidator and dispatcher `_get_executor_for_action` (colony-reference §2.3, §3.4, §7.3 cases 18, 21, 22).",
        example_kb: DOC_KB,
        ..RuleDoc::EMPTY
    },
};

/// API002 non-canonical-action-key.
pub static NON_CANONICAL_ACTION_KEY: Rule = Rule {
    code: "API002",
    name: "non-canonical-action-key",
    severity: Severity::Warning,
    summary: "Short or partial action key that the dispatcher resolves to a canonical key",
    fix: FixAvailability::Sometimes,
    doc: RuleDoc {
        what: "Reports a key the dispatcher resolves only through its fuzzy steps: the unique registered key ending in `.` + the key (`get_agent_status`, `AgentPoolCapability.get_agent_status`), or dropping leading segments. For actions whose middle segment is a per-process random string (`CodeGenerationActionPolicy.3f9a01c2.wait_for_next_event`), any spelling other than the unique short key is reported, since the random segment differs in every process.",
        why: "Colony's validator rejects such keys although the dispatcher accepts them, so the cell is regenerated for nothing; guardrails see the raw key, so patterns written for the canonical key miss the short one.",
        example: "await run(\"get_agent_status\", agent_ids=[\"agent-1\"])\n",
        fixed_example: "await run(\"AgentPoolCapability.AgentPoolCapability.get_agent_status\", agent_ids=[\"agent-1\"])\n",
        fix_safety: "Safe: replaces the key literal's text with the key the dispatcher resolves it to (quotes kept), which dispatches the same action. No fix when the key is not a single string literal.",
        options: "`knowledge-base`, `--kb`.",
        source: "Colony dispatcher `_get_executor_for_action` (colony-reference §2.3, §7.3 case 19).",
        example_kb: DOC_KB,
        ..RuleDoc::EMPTY
    },
};

/// API003 ambiguous-action-key.
pub static AMBIGUOUS_ACTION_KEY: Rule = Rule {
    code: "API003",
    name: "ambiguous-action-key",
    severity: Severity::Error,
    summary: "Short action key that matches several registered actions",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports a short or partial key that several registered keys end with, so the dispatcher's suffix step does not resolve it, and lists the candidates.",
        why: "The dispatcher answers `Unknown action type` for it at runtime, although it looks valid in the prompt.",
        example: "await run(\"respond_to_user\", content=\"Done.\")\n",
        fixed_example: "await run(\"SessionOrchestratorCapability.SessionOrchestratorCapability.respond_to_user\", content=\"Done.\")\n",
        fix_safety: "No fix: choosing between the candidates changes which action runs.",
        options: "`knowledge-base`, `--kb`.",
        source: "Colony dispatcher suffix resolution (colony-reference §2.3).",
        example_kb: DOC_KB,
        ..RuleDoc::EMPTY
    },
};

/// API004 unknown-parameter.
pub static UNKNOWN_PARAMETER: Rule = Rule {
    code: "API004",
    name: "unknown-parameter",
    severity: Severity::Error,
    summary: "Argument the action does not accept (Colony silently drops unknown keywords)",
    fix: FixAvailability::Sometimes,
    doc: RuleDoc {
        what: "Reports a keyword argument that is not a parameter of the resolved action (unless it accepts `**kwargs`), and positional arguments an action cannot take: `run()` takes the key as its only positional argument; a tool takes at most as many positional arguments as it has positional parameters.",
        why: "Colony validates action inputs with a Pydantic model whose `extra` setting is `ignore`: a misspelled optional parameter is dropped and its default used, with no error. An action without parameters raises `TypeError`, and `run(\"k\", x)` raises `TypeError` too.",
        example: "await run(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\", count=2, mdoe=\"fast\")\n",
        fixed_example: "await run(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\", count=2, mode=\"fast\")\n",
        fix_safety: "Renaming the keyword to the closest parameter is unsafe: the value, dropped until now, starts being used. Applicable only for a unique close match not already passed that no other unknown keyword of the call is closest to (two renames to one name would repeat a keyword, a `SyntaxError`); display-only otherwise.",
        options: "`knowledge-base`, `--kb`.",
        source: "Colony `run()` input binding (colony-reference §2.1, §2.2, §7.3 case 24).",
        example_kb: DOC_KB,
        ..RuleDoc::EMPTY
    },
};

/// API005 missing-parameter.
pub static MISSING_PARAMETER: Rule = Rule {
    code: "API005",
    name: "missing-parameter",
    severity: Severity::Error,
    summary: "Required parameter not passed",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports a call that does not pass every required parameter of the resolved action (not reported when a `**kwargs` splat may supply them), and a `run()` call without any action key.",
        why: "Colony's input validation fails (`Parameter validation failed: ...`) and the cell carries on with a failed result.",
        example: "await run(\"SessionOrchestratorCapability.SessionOrchestratorCapability.respond_to_user\")\n",
        fixed_example: "await run(\"SessionOrchestratorCapability.SessionOrchestratorCapability.respond_to_user\", content=\"Done.\")\n",
        fix_safety: "No fix: cellguard cannot invent the value.",
        options: "`knowledge-base`, `--kb`.",
        source: "Colony `run()` input binding (colony-reference §2.2).",
        example_kb: DOC_KB,
        ..RuleDoc::EMPTY
    },
};

/// API006 parameter-type-mismatch.
pub static PARAMETER_TYPE_MISMATCH: Rule = Rule {
    code: "API006",
    name: "parameter-type-mismatch",
    severity: Severity::Error,
    summary: "Literal argument of the wrong type or outside the allowed values",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Checks literal arguments (strings, numbers, booleans, `None`, lists, tuples, sets, dicts) against the parameter's full type from the knowledge base: `str`, `int`, `float`, `bool`, `None`, containers with element types, unions, `Optional` and `Literal[...]`/JSON-schema `enum` values. Other types, and non-literal arguments, are not judged. In the Colony dialect values are judged as Pydantic's lax mode coerces them (`\"5\"` fits `int`); in the functions dialect as the annotation says, `int` being accepted for `float`.",
        why: "Colony's prompt renders `list[str]` as `list` and `Literal['a','b']` as `Literal`, so models guess; a wrong value fails validation at runtime, or, for a string where a list is expected, is iterated character by character.",
        example: "await run(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\", count=\"two\")\n",
        fixed_example: "await run(\"AgentPoolCapability.AgentPoolCapability.spawn_agents\", count=2)\n",
        fix_safety: "No fix; the help line names the closest allowed value when there is one.",
        options: "`knowledge-base`, `--kb`; `dialect`.",
        source: "Colony prompt type rendering and Pydantic input validation (colony-reference §2.2, §2.8).",
        example_kb: DOC_KB,
        ..RuleDoc::EMPTY
    },
};

/// API007 dynamic-action-key.
pub static DYNAMIC_ACTION_KEY: Rule = Rule {
    code: "API007",
    name: "dynamic-action-key",
    severity: Severity::Warning,
    summary: "Action key computed at runtime (variable, f-string, concatenation) that cannot be checked",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Keys passed as `action_key=`, through a variable, an f-string or a concatenation are resolved when they are constant (a variable assigned exactly once to a constant, f-string fields that are such variables) and then checked like literals. This rule reports the keys that stay unknown until runtime.",
        why: "Colony's validator checks only a string literal passed positionally to a bare `run`, so every other form reaches the dispatcher unchecked; neither Colony nor cellguard can tell whether it names a registered action.",
        example: "key = params[\"next_action\"]\nawait run(key)\n",
        fixed_example: "await run(\"AgentPoolCapability.AgentPoolCapability.get_agent_status\", agent_ids=params[\"ids\"])\n",
        fix_safety: "No fix.",
        options: "`knowledge-base`, `--kb`.",
        source: "Colony APIKnowledgeBaseValidator gaps (colony-reference §3.4, §7.3 case 24).",
        example_kb: DOC_KB,
        ..RuleDoc::EMPTY
    },
};

/// API008 pseudo-action-key.
pub static PSEUDO_ACTION_KEY: Rule = Rule {
    code: "API008",
    name: "pseudo-action-key",
    severity: Severity::Error,
    summary: "Pseudo key from the prompt that is not callable",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports `run()` of a key that the prompt shows under `## Available Actions` but that is not an action: `__repl_guidance__`, `__repl_variables__`, `ActionType.EXECUTE_CODE` (as a string or as the enum attribute).",
        why: "Colony lists these REPL pseudo-groups with `await run(\"...\")` headers in every prompt. The first two are unknown to the dispatcher; `ActionType.EXECUTE_CODE` would run nested code.",
        example: "await run(\"__repl_guidance__\")\n",
        fixed_example: "await run(\"AgentPoolCapability.AgentPoolCapability.get_agent_status\", agent_ids=[\"agent-1\"])\n",
        fix_safety: "No fix.",
        options: "`pseudo_keys` in the knowledge base.",
        source: "Colony prompt layout, REPL pseudo-groups (colony-reference §2.8).",
        example_kb: DOC_KB,
        ..RuleDoc::EMPTY
    },
};

/// API009 unknown-name.
pub static UNKNOWN_NAME: Rule = Rule {
    code: "API009",
    name: "unknown-name",
    severity: Severity::Error,
    summary: "Call of a name that is not in the namespace, the knowledge base or the cell",
    fix: FixAvailability::Sometimes,
    doc: RuleDoc {
        what: "Reports a call whose name (or the root of whose dotted name) is bound neither by the cell (assignments, loops, comprehensions, parameters, `def`, imports, ...), the configured namespace, Python 3.11's builtins, nor, in the functions dialect, the knowledge base's tools. Suggests the closest known name. The fences of a Markdown file run one after another in one REPL namespace, so a name an earlier fence binds at module level (or a `global` in one of its functions, or any name after `from m import *`) counts as bound in the later fences.",
        why: "The call raises `NameError` and fails the cell. Colony's docs call `signal_complete()`, which does not exist, and its prompt advertises `asyncio` and `collections`, which are not bound (colony-reference §2.1). In the functions dialect an unknown tool is exactly such a name.",
        example: "await signal_complete()\n",
        fixed_example: "await signal_completion()\n",
        fix_safety: "Replacing the name with a unique close match is unsafe (the call starts doing something); with several candidates the fix is display-only.",
        options: "`[namespace]` (`preset`, `names`, `extend-names`); `knowledge-base` in the functions dialect. Silent in the functions dialect without a knowledge base.",
        source: "Colony REPL namespace (colony-reference §2.1); smolagents CodeAgent tool namespace.",
        example_kb: DOC_KB,
        ..RuleDoc::EMPTY
    },
};

/// The family's rules.
pub static RULES: &[&Rule] = &[
    &UNKNOWN_ACTION,
    &NON_CANONICAL_ACTION_KEY,
    &AMBIGUOUS_ACTION_KEY,
    &UNKNOWN_PARAMETER,
    &MISSING_PARAMETER,
    &PARAMETER_TYPE_MISMATCH,
    &DYNAMIC_ACTION_KEY,
    &PSEUDO_ACTION_KEY,
    &UNKNOWN_NAME,
];

/// Runs the family's checks.
pub fn check(checker: &mut Checker) {
    if !RULES.iter().any(|r| checker.enabled(r)) {
        return;
    }
    let model = checker.semantic();
    for action in &model.actions {
        check_action(checker, &model, action);
    }
    if !checker.kb.is_empty() {
        for tool in &model.unknown_tools {
            unknown_tool(checker, &model, tool);
        }
    }
    for name in &model.unknown_names {
        unknown_name(checker, &model, name);
    }
}

fn range(node: Node) -> TextRange {
    parse::range(node)
}

/// Replaces the text of a plain string literal key with `new_key`, keeping prefix and quotes.
fn key_literal_fix(
    model: &SemanticModel,
    action: &ActionCall,
    new_key: &str,
    applicability: Applicability,
) -> Option<Fix> {
    let expr = parse::unparenthesize(action.key.expr?);
    if action.key.form == KeyForm::Callee {
        // Functions dialect: the key is the callee, a plain dotted name.
        if semantic::dotted_name(expr, model.src).is_none()
            || !new_key.split('.').all(is_identifier)
        {
            return None;
        }
        return Some(Fix::new(
            applicability,
            format!("Replace with `{new_key}`"),
            vec![Edit::replace(range(expr), new_key)],
        ));
    }
    if action.key.form == KeyForm::Concatenation && expr.kind() == "concatenated_string" {
        // `"A.b." "c"`: edit the part that differs, keeping the split (see
        // `fix::replace_string_value`).
        let edit = crate::fix::replace_string_value(expr, model.src, new_key)?;
        return Some(Fix::new(
            applicability,
            format!("Replace with `{new_key}`"),
            vec![edit],
        ));
    }
    if action.key.form != KeyForm::Literal || !semantic::is_plain_string(expr, model.src) {
        return None;
    }
    let prefix = parse::string_prefix(expr, model.src);
    let (start, end) = semantic::string_content_range(expr);
    let opening = model.src.get(expr.start_byte()..start).unwrap_or("");
    let quote = opening.chars().last().unwrap_or('"');
    if new_key.contains(quote)
        || new_key.contains(['\\', '\n', '\r'])
        || (prefix.contains('f') && new_key.contains(['{', '}']))
    {
        return None;
    }
    Some(Fix::new(
        applicability,
        format!("Replace with `{new_key}`"),
        vec![Edit::replace(TextRange::new(start, end), new_key)],
    ))
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

fn key_range(model: &SemanticModel, action: &ActionCall) -> TextRange {
    match action.key.expr {
        Some(e) => range(e),
        None => range(model.sites[action.site].node),
    }
}

fn check_action(checker: &mut Checker, model: &SemanticModel, action: &ActionCall) {
    let kb = checker.kb;
    let dialect = model.dialect;
    if action.key.form == KeyForm::Missing {
        let call = model.sites[action.site].node;
        checker.report(
            Diagnostic::new(
                &MISSING_PARAMETER,
                range(call),
                "`run()` is called without an action key",
            )
            .with_help(
                "Pass the key as the first argument: `await run(\"Capability.key.method\", ...)`",
            ),
        );
        return;
    }
    if model.dialect == Dialect::Colony {
        extra_positionals(checker, action);
    }
    if kb.is_empty() {
        return;
    }
    let Some(raw) = action.key_value.as_deref() else {
        dynamic_key(checker, model, action);
        return;
    };
    let key_range = key_range(model, action);
    let index = match kb.resolve(raw) {
        Resolution::Pseudo => {
            let detail = if raw == "ActionType.EXECUTE_CODE" {
                "; dispatching it would run nested code"
            } else {
                ""
            };
            checker.report(
                Diagnostic::new(
                    &PSEUDO_ACTION_KEY,
                    key_range,
                    format!("`{raw}` is a pseudo key shown in the prompt, not a callable action{detail}"),
                )
                .with_help("Call one of the actions listed under `## Available Actions`"),
            );
            return;
        }
        Resolution::Unknown => {
            unknown_action(checker, model, action, raw, key_range);
            return;
        }
        Resolution::Ambiguous(candidates) => {
            let mut keys: Vec<&str> = candidates
                .iter()
                .map(|&i| kb.actions[i].key.as_str())
                .collect();
            keys.sort_unstable();
            checker.report(
                Diagnostic::new(
                    &AMBIGUOUS_ACTION_KEY,
                    key_range,
                    format!(
                        "Action key `{raw}` is ambiguous: {} registered actions end with it",
                        keys.len()
                    ),
                )
                .with_help(format!("Use the full key: {}", backticked(&keys, 5))),
            );
            return;
        }
        Resolution::Exact(i) => {
            if kb.canonical_key(i) != raw {
                non_canonical(checker, model, action, raw, i, key_range);
            }
            i
        }
        Resolution::Dynamic(i) | Resolution::Suffix(i) | Resolution::PrefixStrip(i) => {
            if kb.canonical_key(i) != raw {
                non_canonical(checker, model, action, raw, i, key_range);
            }
            i
        }
    };
    let Some(def) = kb.actions.get(index) else {
        return;
    };
    check_arguments(checker, model, action, raw, def, dialect);
}

/// `run()` takes the key as its only positional argument (colony-reference §2.1): any other
/// positional argument raises `TypeError`, whatever the key.
fn extra_positionals(checker: &mut Checker, action: &ActionCall) {
    for arg in &action.args.positional {
        checker.report(
            Diagnostic::new(
                &UNKNOWN_PARAMETER,
                range(*arg),
                "`run()` takes the action key as its only positional argument; this argument raises `TypeError`",
            )
            .with_help("Pass action parameters by keyword: `await run(\"key\", name=value)`"),
        );
    }
}

fn non_canonical(
    checker: &mut Checker,
    model: &SemanticModel,
    action: &ActionCall,
    raw: &str,
    index: usize,
    key_range: TextRange,
) {
    let kb = checker.kb;
    let canonical = kb.canonical_key(index).to_string();
    let message = if kb.actions[index].dynamic_segment && canonical == kb.actions[index].short_key {
        format!("Action key `{raw}` has a middle segment that is random per process at runtime; `{canonical}` resolves in every process")
    } else {
        format!("Action key `{raw}` is not canonical: the dispatcher resolves it to `{canonical}`")
    };
    let mut d = Diagnostic::new(&NON_CANONICAL_ACTION_KEY, key_range, message);
    if let Some(fix) = key_literal_fix(model, action, &canonical, Applicability::Safe) {
        d = d.with_fix(fix);
    } else {
        d = d.with_help(format!("Write the key as `{canonical}`"));
    }
    checker.report(d);
}

fn dynamic_key(checker: &mut Checker, model: &SemanticModel, action: &ActionCall) {
    let Some(expr) = action.key.expr else {
        return;
    };
    let src = model.src;
    let via = if action.key.source == KeySource::Keyword {
        " passed as `action_key=`"
    } else {
        ""
    };
    let message = match action.key.form {
        KeyForm::Variable => format!(
            "Action key{via} comes from `{}`, which is not bound to one constant string; it cannot be checked",
            parse::text(parse::unparenthesize(expr), src)
        ),
        KeyForm::FString => format!("Action key{via} is an f-string with runtime fields; it cannot be checked"),
        KeyForm::Concatenation => format!("Action key{via} is concatenated at runtime; it cannot be checked"),
        _ => format!("Action key{via} is computed at runtime; it cannot be checked"),
    };
    checker.report(
        Diagnostic::new(&DYNAMIC_ACTION_KEY, range(expr), message).with_help(
            "Pass the key as a string literal: `await run(\"Capability.key.method\", ...)`",
        ),
    );
}

/// Candidates for a misspelled key, with the applicability of replacing it by the best one.
struct KeyChoice {
    keys: Vec<String>,
    best: Option<(String, Applicability)>,
    /// Why the best candidate is not applied automatically.
    caution: Option<String>,
}

fn choose_key(kb: &KnowledgeBase, raw: &str) -> KeyChoice {
    let suggestions = kb.suggest(raw, 5);
    let Some(best) = suggestions.first() else {
        return KeyChoice {
            keys: Vec::new(),
            best: None,
            caution: None,
        };
    };
    let ties = suggestions
        .iter()
        .filter(|s| s.distance == best.distance)
        .count();
    let cand = &kb.actions[best.action];
    let target = kb.canonical_key(best.action).to_string();
    let (written, against) = if best.by_last_segment {
        (
            raw.rsplit('.').next().unwrap_or(raw),
            cand.short_key.as_str(),
        )
    } else {
        (raw, cand.key.as_str())
    };
    // With a last-segment match, what was written before the last segment must still lead to
    // the candidate once the last segment is corrected.
    let consistent = !best.by_last_segment
        || match raw.rsplit_once('.') {
            None => true,
            Some((prefix, _)) => {
                kb.resolve(&format!("{prefix}.{}", cand.short_key)).action() == Some(best.action)
            }
        };
    let vocabulary = kb_vocabulary(kb);
    let caution = if ties > 1 {
        Some(format!("{ties} keys are equally close"))
    } else if let Some(change) = meaning_change(written, against, &vocabulary) {
        Some(change)
    } else if !consistent {
        Some("the part before the last segment names another capability".to_string())
    } else {
        None
    };
    let applicability = if caution.is_none() {
        Applicability::Safe
    } else {
        Applicability::DisplayOnly
    };
    let mut keys: Vec<String> = Vec::new();
    for s in &suggestions {
        let k = kb.canonical_key(s.action).to_string();
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    KeyChoice {
        keys,
        best: Some((target, applicability)),
        caution,
    }
}

fn unknown_action(
    checker: &mut Checker,
    model: &SemanticModel,
    action: &ActionCall,
    raw: &str,
    key_range: TextRange,
) {
    let kb = checker.kb;
    let what = if model.dialect == Dialect::Functions {
        "tool"
    } else {
        "action key"
    };
    let choice = choose_key(kb, raw);
    let mut d = Diagnostic::new(
        &UNKNOWN_ACTION,
        key_range,
        format!("Unknown {what} '{raw}'.{}", did_you_mean(&choice.keys)),
    );
    if let Some(caution) = &choice.caution {
        d = d.with_help(format!("Not applied automatically: {caution}"));
    }
    if let Some((best, applicability)) = &choice.best {
        if let Some(fix) = key_literal_fix(model, action, best, *applicability) {
            d = d.with_fix(fix);
        }
    }
    checker.report(d);
}

fn unknown_tool(checker: &mut Checker, model: &SemanticModel, tool: &semantic::UnknownTool) {
    let kb = checker.kb;
    let site = &model.sites[tool.site];
    let choice = choose_key(kb, &tool.name);
    let mut d = Diagnostic::new(
        &UNKNOWN_ACTION,
        range(site.callee),
        format!(
            "Unknown tool '{}'.{}",
            tool.name,
            did_you_mean(&choice.keys)
        ),
    );
    if let Some(caution) = &choice.caution {
        d = d.with_help(format!("Not applied automatically: {caution}"));
    }
    if let Some((best, applicability)) = &choice.best {
        d = d.with_fix(Fix::new(
            *applicability,
            format!("Replace with `{best}`"),
            vec![Edit::replace(range(site.callee), best.clone())],
        ));
    }
    checker.report(d);
}

/// ` Did you mean 'k'?` in Colony's wording (empty without candidates).
fn did_you_mean(keys: &[String]) -> String {
    let quoted: Vec<String> = keys.iter().take(3).map(|k| format!("'{k}'")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => format!(" Did you mean {one}?"),
        many => {
            let more = if keys.len() > 3 {
                format!(" (and {} more)", keys.len() - 3)
            } else {
                String::new()
            };
            format!(" Did you mean one of {}{more}?", many.join(", "))
        }
    }
}

fn did_you_mean_name(names: &[String]) -> String {
    match names {
        [one] => format!("Did you mean `{one}`?"),
        many => format!("Did you mean one of {}?", backticked(many, 3)),
    }
}

fn backticked<S: AsRef<str>>(items: &[S], limit: usize) -> String {
    let mut out: Vec<String> = items
        .iter()
        .take(limit)
        .map(|s| format!("`{}`", s.as_ref()))
        .collect();
    if items.len() > limit {
        out.push(format!("and {} more", items.len() - limit));
    }
    out.join(", ")
}

fn check_arguments(
    checker: &mut Checker,
    model: &SemanticModel,
    action: &ActionCall,
    raw: &str,
    def: &Action,
    dialect: Dialect,
) {
    let args = &action.args;
    let lax = dialect == Dialect::Colony;
    let mut passed: HashSet<&str> = HashSet::new();
    // Positional arguments.
    let positional_params: Vec<&crate::kb::Param> =
        def.params.iter().filter(|p| !p.keyword_only).collect();
    let mut positional_bound = Vec::new();
    for (i, arg) in args.positional.iter().enumerate() {
        if dialect == Dialect::Colony {
            continue; // reported by `extra_positionals`, with or without a KB
        }
        match positional_params.get(i) {
            Some(p) if !args.star_args => {
                passed.insert(p.name.as_str());
                positional_bound.push((*p, *arg));
            }
            Some(_) => {}
            None => {
                if !args.star_args {
                    checker.report(Diagnostic::new(
                        &UNKNOWN_PARAMETER,
                        range(*arg),
                        format!(
                            "`{raw}` takes {} positional argument{} but {} were given",
                            positional_params.len(),
                            if positional_params.len() == 1 {
                                ""
                            } else {
                                "s"
                            },
                            args.positional.len()
                        ),
                    ));
                }
            }
        }
    }
    for kw in &args.keywords {
        passed.insert(kw.name);
    }
    // Parameters not passed, and the closest of them to each unknown keyword: two unknown
    // keywords renamed to one parameter would repeat a keyword (a `SyntaxError`).
    let candidates: Vec<&str> = def
        .params
        .iter()
        .map(|p| p.name.as_str())
        .filter(|p| !passed.contains(p))
        .collect();
    let mut suggested: HashMap<&str, usize> = HashMap::new();
    if !def.accepts_extra_kwargs {
        for kw in &args.keywords {
            if def.param(kw.name).is_none() {
                if let Some(best) = closest(kw.name, &candidates).first() {
                    *suggested.entry(*best).or_default() += 1;
                }
            }
        }
    }
    // Keyword arguments.
    for kw in &args.keywords {
        let Some(param) = def.param(kw.name) else {
            if def.accepts_extra_kwargs {
                continue;
            }
            let consequence = match dialect {
                // `run(action_key, **params)`: the key is already bound (colony-reference
                // §2.1, "no action parameter may itself be named `action_key`").
                Dialect::Colony if kw.name == "action_key" => {
                    " (`action_key` is `run()`'s own first parameter, so the call raises `TypeError: run() got multiple values for argument 'action_key'`)"
                }
                Dialect::Colony if def.params.is_empty() => {
                    " (it has no parameters, so the call raises `TypeError`)"
                }
                Dialect::Colony => "; Colony silently drops it",
                Dialect::Functions => "",
            };
            let mut d = Diagnostic::new(
                &UNKNOWN_PARAMETER,
                range(kw.name_node),
                format!("`{raw}` has no parameter `{}`{consequence}", kw.name),
            );
            let close = closest(kw.name, &candidates);
            match close.as_slice() {
                [] => {
                    if !def.params.is_empty() {
                        let names: Vec<&str> = def.params.iter().map(|p| p.name.as_str()).collect();
                        d = d.with_help(format!("Parameters: {}", backticked(&names, 8)));
                    }
                }
                [best, rest @ ..] => {
                    let owned: Vec<String> = close.iter().map(|s| s.to_string()).collect();
                    let shared = suggested.get(best).is_some_and(|&n| n > 1);
                    d = d.with_help(if shared {
                        format!(
                            "{} Not applied automatically: another unknown keyword of this call is also closest to `{best}`",
                            did_you_mean_name(&owned)
                        )
                    } else {
                        did_you_mean_name(&owned)
                    });
                    if !kw.from_dict_literal {
                        let applicability = if rest.is_empty() && !shared {
                            Applicability::Unsafe
                        } else {
                            Applicability::DisplayOnly
                        };
                        d = d.with_fix(Fix::new(
                            applicability,
                            format!("Rename to `{best}`"),
                            vec![Edit::replace(range(kw.name_node), *best)],
                        ));
                    }
                }
            }
            checker.report(d);
            continue;
        };
        type_check(checker, model, raw, param, kw.value, lax);
    }
    for (param, arg) in positional_bound {
        type_check(checker, model, raw, param, arg, lax);
    }
    // Missing required parameters.
    if args.star_kwargs || (dialect == Dialect::Functions && args.star_args) {
        return;
    }
    let missing: Vec<&str> = def
        .params
        .iter()
        .filter(|p| p.required && !passed.contains(p.name.as_str()))
        .map(|p| p.name.as_str())
        .collect();
    if !missing.is_empty() {
        let plural = if missing.len() == 1 { "" } else { "s" };
        checker.report(
            Diagnostic::new(
                &MISSING_PARAMETER,
                key_range(model, action),
                format!(
                    "`{raw}` is missing required parameter{plural} {}",
                    backticked(&missing, 8)
                ),
            )
            .with_help(format!("Signature: {}", def.signature())),
        );
    }
}

fn type_check(
    checker: &mut Checker,
    model: &SemanticModel,
    raw: &str,
    param: &crate::kb::Param,
    value: Node,
    lax: bool,
) {
    let lit = types::literal(value, model.src, 0);
    if lit == types::Lit::NotLiteral {
        return;
    }
    let mut ty = match param.ty.as_deref() {
        Some(t) if !param.approximate_type => types::parse_type(t),
        _ => types::Ty::Unknown,
    };
    if let Some(allowed) = param.allowed.as_ref() {
        let scalars = allowed.iter().all(|v| !v.is_array() && !v.is_object());
        if scalars && !allowed.is_empty() {
            let values = types::Ty::Literal(allowed.clone());
            // On a list parameter the values constrain the elements (BFCL `door: array`
            // with `[Enum]: ["driver", ...]`).
            ty = match ty {
                types::Ty::List(_) => types::Ty::List(Box::new(values)),
                types::Ty::Set(_) => types::Ty::Set(Box::new(values)),
                types::Ty::Tuple(_) => types::Ty::Tuple(Some(Box::new(values))),
                _ => values,
            };
        }
    }
    // An optional parameter without a known default, or defaulting to `None`, accepts `None`
    // (tool schemas rarely spell out `"null"` for optional arguments).
    let none_default = !param.required
        && param
            .default
            .as_deref()
            .is_none_or(|d| d == "None" || d == "null");
    if none_default {
        ty = match ty {
            types::Ty::Literal(mut values) => {
                values.push(serde_json::Value::Null);
                types::Ty::Literal(values)
            }
            t @ (types::Ty::Unknown | types::Ty::Any) => t,
            t => types::Ty::Union(vec![t, types::Ty::NoneType]),
        };
    }
    let verdict = types::judge(&ty, &lit, lax);
    let types::Verdict::Mismatch(reason) = verdict else {
        return;
    };
    let expected =
        types::describe(&ty).unwrap_or_else(|| format!("`{}`", param.ty.as_deref().unwrap_or("?")));
    let mut d = Diagnostic::new(
        &PARAMETER_TYPE_MISMATCH,
        range(value),
        format!(
            "Argument `{}` of `{raw}` expects {expected}, {reason}",
            param.name
        ),
    );
    if let (types::Ty::Literal(values), types::Lit::Str(Some(s))) = (&ty, &lit) {
        let strings: Vec<&str> = values.iter().filter_map(|v| v.as_str()).collect();
        if let [best, ..] = closest(s, &strings).as_slice() {
            d = d.with_help(format!("Did you mean '{best}'?"));
        }
    }
    checker.report(d);
}

/// Names within edit distance of `name` (at most a third of the longer length, between 1 and
/// 3; case and `_`/`-` differences count as distance 0), best first, ties by name.
fn closest<'s>(name: &str, candidates: &[&'s str]) -> Vec<&'s str> {
    fn norm(s: &str) -> impl Iterator<Item = char> + '_ {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
    }
    let name_len = name.chars().count();
    if name_len < 3 {
        return Vec::new(); // one- and two-letter names are close to everything
    }
    let mut scored: Vec<(usize, &str)> = candidates
        .iter()
        .filter(|c| **c != name)
        .filter_map(|c| {
            let c_len = c.chars().count();
            let limit = (name_len.max(c_len) / 3).clamp(1, 3);
            let d = if norm(c).eq(norm(name)) {
                0
            } else {
                crate::distance::osa_within(name, c, limit)?
            };
            (d <= limit && d < c_len).then_some((d, *c))
        })
        .collect();
    scored.sort();
    scored.dedup();
    match scored.first() {
        Some(&(best, _)) => scored
            .into_iter()
            .filter(|(d, _)| *d == best)
            .map(|(_, c)| c)
            .collect(),
        None => Vec::new(),
    }
}

fn unknown_name(checker: &mut Checker, model: &SemanticModel, unknown: &semantic::UnknownName) {
    let kb = checker.kb;
    let ns = &checker.settings.namespace;
    let name = unknown.name.as_str();
    let message = if unknown.is_callee {
        format!("`{name}` is not defined: it is not in the namespace, the cell or the builtins")
    } else {
        format!("`{name}` is not defined: it is not in the namespace, the cell or the builtins, so this call raises `NameError`")
    };
    let mut d = Diagnostic::new(&UNKNOWN_NAME, range(unknown.node), message);
    if model.dialect == Dialect::Colony && unknown.is_callee && !kb.by_short_key(name).is_empty() {
        let target = match kb.resolve(name).action() {
            Some(i) => kb.canonical_key(i).to_string(),
            None => name.to_string(),
        };
        d = d.with_help(format!(
            "`{name}` is an action, not a function: call it as `await run(\"{target}\", ...)`"
        ));
        checker.report(d);
        return;
    }
    let is_module = crate::config::COLONY_ALLOWED_IMPORTS.contains(&name)
        || crate::config::SMOLAGENTS_BASE_BUILTIN_MODULES.contains(&name);
    if is_module {
        let pre_bound: Vec<&str> = ns.modules.iter().map(String::as_str).collect();
        let runtime = if ns.imports_fail_at_runtime {
            " and `import` fails at runtime"
        } else {
            ""
        };
        let usable = if pre_bound.is_empty() {
            String::new()
        } else {
            format!("; pre-bound modules: {}", backticked(&pre_bound, 8))
        };
        checker.report(d.with_help(format!(
            "The namespace does not bind the module `{name}`{runtime}{usable}"
        )));
        return;
    }
    let mut candidates: Vec<&str> = ns.names.iter().map(String::as_str).collect();
    candidates.extend(
        semantic::PYTHON_BUILTINS
            .iter()
            .copied()
            .filter(|b| !b.starts_with('_')),
    );
    candidates.extend(model.bound_names());
    if model.dialect == Dialect::Functions {
        candidates.extend(kb.actions.iter().map(|a| a.key.as_str()));
    }
    candidates.sort_unstable();
    candidates.dedup();
    let close = closest(name, &candidates);
    if let [best, rest @ ..] = close.as_slice() {
        let owned: Vec<String> = close.iter().map(|s| s.to_string()).collect();
        d = d.with_help(did_you_mean_name(&owned));
        let vocabulary = kb_vocabulary(kb);
        let applicability = if rest.is_empty() && !meaning_changes(name, best, &vocabulary) {
            Applicability::Unsafe
        } else {
            Applicability::DisplayOnly
        };
        d = d.with_fix(Fix::new(
            applicability,
            format!("Replace with `{best}`"),
            vec![Edit::replace(range(unknown.node), *best)],
        ));
    }
    checker.report(d);
}

/// Lower-cased words of an identifier or key: split on `.`, `_`, `-`, digits and camelCase.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn kb_vocabulary(kb: &KnowledgeBase) -> HashSet<String> {
    kb.actions.iter().flat_map(|a| words(&a.key)).collect()
}

/// Verb and state pairs whose swap inverts what an action does.
const ANTONYMS: &[(&str, &str)] = &[
    ("get", "set"),
    ("get", "put"),
    ("add", "del"),
    ("add", "delete"),
    ("add", "remove"),
    ("add", "rm"),
    ("add", "sub"),
    ("add", "subtract"),
    ("append", "pop"),
    ("insert", "delete"),
    ("insert", "remove"),
    ("create", "delete"),
    ("create", "destroy"),
    ("create", "drop"),
    ("make", "delete"),
    ("push", "pull"),
    ("push", "pop"),
    ("approve", "reprove"),
    ("approve", "reject"),
    ("approve", "deny"),
    ("accept", "reject"),
    ("accept", "decline"),
    ("allow", "deny"),
    ("allow", "block"),
    ("allow", "disallow"),
    ("grant", "revoke"),
    ("enable", "disable"),
    ("open", "close"),
    ("start", "stop"),
    ("start", "end"),
    ("start", "finish"),
    ("begin", "end"),
    ("show", "hide"),
    ("lock", "unlock"),
    ("load", "unload"),
    ("load", "save"),
    ("load", "store"),
    ("read", "write"),
    ("send", "receive"),
    ("send", "recv"),
    ("import", "export"),
    ("upload", "download"),
    ("buy", "sell"),
    ("encode", "decode"),
    ("encrypt", "decrypt"),
    ("pause", "resume"),
    ("suspend", "resume"),
    ("attach", "detach"),
    ("connect", "disconnect"),
    ("subscribe", "unsubscribe"),
    ("follow", "unfollow"),
    ("mute", "unmute"),
    ("pin", "unpin"),
    ("login", "logout"),
    ("include", "exclude"),
    ("increase", "decrease"),
    ("increment", "decrement"),
    ("inc", "dec"),
    ("up", "down"),
    ("in", "out"),
    ("on", "off"),
    ("min", "max"),
    ("first", "last"),
    ("before", "after"),
    ("next", "prev"),
    ("next", "previous"),
    ("true", "false"),
    ("yes", "no"),
    ("mount", "unmount"),
    ("link", "unlink"),
    ("block", "unblock"),
    ("ban", "unban"),
    ("archive", "unarchive"),
    ("freeze", "unfreeze"),
    ("merge", "split"),
    ("join", "leave"),
    ("join", "split"),
    ("assign", "unassign"),
    ("claim", "release"),
    ("acquire", "release"),
    ("spawn", "kill"),
    ("spawn", "terminate"),
    ("commit", "rollback"),
    ("do", "undo"),
    ("redo", "undo"),
    ("apply", "revert"),
    ("install", "uninstall"),
    ("register", "unregister"),
    ("register", "deregister"),
    ("publish", "unpublish"),
    ("share", "unshare"),
    ("import", "export"),
    ("enter", "exit"),
    ("list", "delete"),
    ("win", "lose"),
    ("like", "unlike"),
    ("star", "unstar"),
    ("watch", "unwatch"),
    ("select", "deselect"),
    ("check", "uncheck"),
    ("pos", "neg"),
    ("high", "low"),
    ("upper", "lower"),
    ("left", "right"),
    ("old", "new"),
];

/// Inflectional endings (`disabled`, `stopping`, `pushes`, `starter`) under which a word keeps
/// the meaning of its verb.
const INFLECTIONS: &[&str] = &["s", "es", "d", "ed", "ing", "er", "ers", "en"];

/// The ending that `word` adds to `root`: `"inflection"` when `word` is `root` itself or an
/// inflection of it (`stop` -> `stopped`, `close` -> `closing`, `get` -> `getting`), or the other
/// letters that follow `root` (`start` -> `startup`, `enable` -> `enablement`).
fn ending<'w>(root: &str, word: &'w str) -> Option<&'w str> {
    if let Some(rest) = word.strip_prefix(root) {
        let undoubled = root
            .chars()
            .last()
            .and_then(|c| rest.strip_prefix(c))
            .filter(|r| matches!(*r, "ed" | "ing" | "er" | "ers" | "en"));
        // `close` -> `closed`, `closer`: the ending's own `e` is the root's.
        let after_e = root.ends_with('e') && INFLECTIONS.contains(&format!("e{rest}").as_str());
        if rest.is_empty() || INFLECTIONS.contains(&rest) || undoubled.is_some() || after_e {
            return Some("inflection");
        }
        return Some(rest);
    }
    // A silent final `e` dropped before a vowel ending: `close` -> `closing`.
    let stem = root.strip_suffix('e')?;
    let rest = word.strip_prefix(stem)?;
    matches!(rest, "ing" | "ed" | "er" | "ers").then_some("inflection")
}

/// True when `a` and `b` are the antonym-like roots `x` and `y` carrying the same kind of
/// ending: both inflected (`disabled`/`enabled`, `stopping`/`starting`) or the same letters
/// (`startup`/`stopup`, `enablement`/`disablement`).
fn antonym_forms(a: &str, b: &str, x: &str, y: &str) -> bool {
    matches!((ending(x, a), ending(y, b)), (Some(ea), Some(eb)) if ea == eb)
}

fn antonyms(a: &str, b: &str) -> bool {
    if ANTONYMS
        .iter()
        .any(|&(x, y)| antonym_forms(a, b, x, y) || antonym_forms(a, b, y, x))
    {
        return true;
    }
    // Negating prefixes: `able`/`disable` style pairs not in the table.
    ["un", "dis", "de", "non", "in", "im", "re"]
        .iter()
        .any(|p| {
            (a.strip_prefix(p) == Some(b) && b.len() >= 3)
                || (b.strip_prefix(p) == Some(a) && a.len() >= 3)
        })
}

/// True when `plural` is an English plural of `singular` (`agent`/`agents`, `box`/`boxes`,
/// `query`/`queries`).
fn plural_of(singular: &str, plural: &str) -> bool {
    plural.strip_suffix('s') == Some(singular)
        || plural.strip_suffix("es") == Some(singular)
        || plural
            .strip_suffix("ies")
            .is_some_and(|stem| singular.strip_suffix('y') == Some(stem))
}

/// True when turning `written` into `candidate` swaps words rather than fixing a typo; see
/// [`meaning_change`].
fn meaning_changes(written: &str, candidate: &str, vocabulary: &HashSet<String>) -> bool {
    meaning_change(written, candidate, vocabulary).is_some()
}

/// Why turning `written` into `candidate` swaps words rather than fixing a typo: the differing
/// words are antonym-like, or a differing written word is itself a word the knowledge base uses
/// (so the author chose another word), or whole words are added or dropped. `None` for a
/// typo-level change (misspelling, separators, singular/plural).
fn meaning_change(written: &str, candidate: &str, vocabulary: &HashSet<String>) -> Option<String> {
    let a = words(written);
    let b = words(candidate);
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let ra = &a[prefix..a.len() - suffix];
    let rb = &b[prefix..b.len() - suffix];
    if (ra.is_empty() && rb.is_empty()) || ra.concat() == rb.concat() {
        return None; // `getstatus` vs `get_status`: only separators differ
    }
    if ra.is_empty() || rb.is_empty() {
        let words: Vec<&String> = ra.iter().chain(rb).collect();
        let shown: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
        return Some(format!(
            "the suggestion {} {}",
            if ra.is_empty() { "adds" } else { "drops" },
            shown.join(", ")
        ));
    }
    for x in ra {
        if let Some(y) = rb.iter().find(|y| antonyms(x, y)) {
            return Some(format!("`{x}` and `{y}` have opposite meanings"));
        }
    }
    if let ([x], [y]) = (ra, rb) {
        if plural_of(x, y) || plural_of(y, x) {
            return None; // `spawn_agent` -> `spawn_agents`: a typo-level change
        }
    }
    ra.iter()
        .find(|x| !rb.contains(x) && vocabulary.contains(*x))
        .map(|x| format!("`{x}` is a word of its own, not a typo"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `closest` without pruning: the distance of every candidate.
    fn exhaustive_closest<'s>(name: &str, candidates: &[&'s str]) -> Vec<&'s str> {
        let norm = |s: &str| -> String {
            s.chars()
                .filter(|c| *c != '_' && *c != '-')
                .flat_map(char::to_lowercase)
                .collect()
        };
        if name.chars().count() < 3 {
            return Vec::new();
        }
        let mut scored: Vec<(usize, &str)> = candidates
            .iter()
            .filter(|c| **c != name)
            .filter_map(|c| {
                let d = if norm(c) == norm(name) {
                    0
                } else {
                    strsim::osa_distance(name, c)
                };
                let limit = (name.chars().count().max(c.chars().count()) / 3).clamp(1, 3);
                (d <= limit && d < c.chars().count()).then_some((d, *c))
            })
            .collect();
        scored.sort();
        scored.dedup();
        match scored.first() {
            Some(&(best, _)) => scored
                .into_iter()
                .filter(|(d, _)| *d == best)
                .map(|(_, c)| c)
                .collect(),
            None => Vec::new(),
        }
    }

    proptest::proptest! {
        /// Length pruning never changes which names are suggested.
        #[test]
        fn pruned_closest_equals_the_exhaustive_one(
            name in "[abAé_-]{0,12}",
            candidates in proptest::collection::vec("[abBé_-]{0,12}", 0..30),
        ) {
            let refs: Vec<&str> = candidates.iter().map(String::as_str).collect();
            proptest::prop_assert_eq!(closest(&name, &refs), exhaustive_closest(&name, &refs));
        }
    }

    #[test]
    fn words_split_case_and_separators() {
        assert_eq!(
            words("AgentPool.get_agentStatus"),
            vec!["agent", "pool", "get", "agent", "status"]
        );
    }

    #[test]
    fn meaning_changes_flags_word_swaps_not_typos() {
        let vocab: HashSet<String> = ["x", "k", "set", "status", "agent", "get", "label", "del"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(meaning_changes("X.k.get_status", "X.k.set_status", &vocab));
        assert!(meaning_changes("add_label", "del_label", &vocab));
        assert!(meaning_changes("push", "pull", &vocab));
        assert!(meaning_changes("approve", "reprove", &vocab));
        assert!(meaning_changes("enable_x", "disable_x", &vocab));
        assert!(meaning_changes("unlock", "lock", &vocab));
        // Inflected and compounded forms of antonym-like verbs.
        assert!(meaning_changes("is_disabled", "is_enabled", &vocab));
        assert!(meaning_changes("was_stopped", "was_started", &vocab));
        assert!(meaning_changes("setting", "getting", &vocab));
        assert!(meaning_changes("pulled_items", "pushed_items", &vocab));
        assert!(meaning_changes("is_closed", "is_opened", &vocab));
        assert!(meaning_changes("closer", "opener", &vocab));
        assert!(meaning_changes("stopup", "startup", &vocab));
        assert!(meaning_changes("disablement", "enablement", &vocab));
        assert!(meaning_changes("stop_job", "started_job", &vocab));
        assert!(!meaning_changes("is_enabeld", "is_enabled", &vocab));
        assert!(!meaning_changes("startd", "started", &vocab));
        assert!(!meaning_changes(
            "get_agent_statsu",
            "get_agent_status",
            &vocab
        ));
        assert!(!meaning_changes(
            "get_agentstatus",
            "get_agent_status",
            &vocab
        ));
        assert!(!meaning_changes("spawn_agent", "spawn_agents", &vocab));
        assert!(!meaning_changes("list_query", "list_queries", &vocab));
        // `agent` is a KB word: choosing it over `agents` is a different word, not a typo.
        assert!(meaning_changes("get_status", "get_agent_status", &vocab));
    }

    #[test]
    fn closest_is_deterministic() {
        assert_eq!(
            closest("signal_complete", &["signal_completion", "switch_mode"]),
            vec!["signal_completion"]
        );
        assert_eq!(
            closest("agentIds", &["agent_ids", "count"]),
            vec!["agent_ids"]
        );
        assert_eq!(closest("mdoe", &["mode", "node"]), vec!["mode"]);
        assert_eq!(closest("xyz", &["count"]), Vec::<&str>::new());
        assert_eq!(closest("f", &["g", "_"]), Vec::<&str>::new());
    }
}
