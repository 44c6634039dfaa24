//! `[replay]` and `[[guardrails]]` from config (spec §8), validated with file:line:col errors.
//!
//! The config loader keeps these sections as raw TOML; this module re-reads the text that
//! defines them (the file itself, or the file it `extend`s) with spans for every key and value,
//! so an unknown key, a value of the wrong type, a bad pattern or regex is reported where it
//! is written.

use super::args_aware::{ArgsAware, Prior, Rule};
use super::matching::{MatchMode, Pattern};
use super::predicates::{MessageWatch, ParamCond, PriorMatch, Test};
use super::toml_view::{self, boolean, get, string, Doc, SKind, SVal, Table};
use super::*;
use crate::config::{ConfigError, LoadedConfig, Profile};
use crate::trace::{CallStatus, Epoch};
use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

/// What a simulated block does to later evaluation (spec §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnBlock {
    /// Keep the blocked call in the history as if it had run (counterfactual).
    Keep,
    /// Leave it out of the history; later calls of the cell are still evaluated.
    Drop,
    /// Leave it out and abort the cell: later calls of the cell are unreached (Colony since
    /// 2026-06-20).
    StopCell,
}

impl OnBlock {
    /// Every mode, in the order `--on-block` lists them.
    pub const ALL: [OnBlock; 3] = [OnBlock::Keep, OnBlock::Drop, OnBlock::StopCell];

    /// Parses `keep`, `drop` or `stop-cell`.
    pub fn parse(s: &str) -> Option<OnBlock> {
        match s {
            "keep" => Some(OnBlock::Keep),
            "drop" => Some(OnBlock::Drop),
            "stop-cell" => Some(OnBlock::StopCell),
            _ => None,
        }
    }

    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            OnBlock::Keep => "keep",
            OnBlock::Drop => "drop",
            OnBlock::StopCell => "stop-cell",
        }
    }

    /// The modelled runtime's own behaviour in `epoch`: `stop-cell` from 2026-06-20 (atomic
    /// abort), `drop` before (the blocked `run()` returned a failed result, recorded no
    /// `CallRecord`, and the cell carried on).
    pub fn for_epoch(epoch: Epoch) -> OnBlock {
        if epoch.atomic_blocks() {
            OnBlock::StopCell
        } else {
            OnBlock::Drop
        }
    }
}

/// Completion validation replayed on `completion` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompletionMode {
    /// Colony's `RuleBasedCompletionValidator` (colony-reference §6).
    RuleBased,
    /// No completion validation.
    None,
}

/// `[replay]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplaySettings {
    /// Default matching mode (`match`): `key` in the strict profile, `substring` in `colony`.
    pub mode: MatchMode,
    /// `on-block`; `None` follows the epoch ([`OnBlock::for_epoch`]).
    pub on_block: Option<OnBlock>,
    /// `epoch`; `None` takes the trace header's, else `current`.
    pub epoch: Option<Epoch>,
    /// `history-cap` (Colony: 10 000).
    pub history_cap: usize,
    /// `agent-id`: the agent's own id when the trace header has none.
    pub agent_id: Option<String>,
    /// `completion`.
    pub completion: CompletionMode,
    /// `planning-patterns`: actions that count as planning, not domain work, for the
    /// rule-based completion validator (key-mode patterns; the KB's planning flag also counts).
    pub planning: Vec<String>,
}

impl Default for ReplaySettings {
    fn default() -> Self {
        Self {
            mode: MatchMode::Key,
            on_block: None,
            epoch: None,
            history_cap: DEFAULT_HISTORY_CAP,
            agent_id: None,
            completion: CompletionMode::RuleBased,
            planning: Vec::new(),
        }
    }
}

/// The replay configuration: settings plus compiled guardrails.
#[derive(Debug, Clone, Default)]
pub struct ReplayConfig {
    /// `[replay]`.
    pub settings: ReplaySettings,
    /// `[[guardrails]]`.
    pub guardrails: GuardrailSet,
    /// Problems that leave the config usable but probably not as meant
    /// (`FILE:LINE:COL: message`), for the CLI to print as warnings.
    pub warnings: Vec<String>,
}

/// Guardrail ids the reports use for their own rules (SARIF `ruleId`s of the synthetic results
/// for unreached and changed calls, block streaks and completion validation): a guardrail may
/// not take them, or its blocks would share a rule id with those results (issue 6 T4-12, T4-3).
pub const RESERVED_IDS: [(&str, &str); 4] = [
    ("unreached", "calls never reached"),
    ("outcome-changed", "calls whose recorded outcome changes"),
    ("block-streak", "block streaks"),
    ("completion-validation", "replayed completion validation"),
];

/// Compiles a guardrail pattern located at `span`. A `substring` pattern holding glob
/// characters (`*`, `?`) is compiled as the literal substring Colony would use, with a warning:
/// no action key contains them, so the pattern almost certainly disarms its guardrail
/// (issue 6 R14). Likewise a `substring` alternative with whitespace at either end is matched
/// as written, as Colony does, with a warning (issue 6 T5-21). A `key` pattern holding
/// fnmatch / shell glob syntax (`[`, `]`, `{`, `}`, `,`) or whitespace inside an alternative is
/// compiled as written, with a warning: it matches nothing (issue 6 N2-8).
fn compile_pattern(
    d: &Doc,
    text: &str,
    mode: MatchMode,
    span: &Range<usize>,
) -> Result<Pattern, ConfigError> {
    let p = Pattern::compile(text, mode).map_err(|m| d.error(span, m))?;
    let forced = d.forced_substring.get();
    if mode == MatchMode::Substring && text.contains(['*', '?']) {
        let remedy = if forced {
            "`--match substring` forces that mode (drop the flag, or remove them)"
        } else {
            "use `match = \"key\"` or remove them"
        };
        d.warn(
            span,
            format!(
                "pattern `{text}` contains glob characters but is matched as a substring (Colony \
                 has no globs), so it matches only keys that contain them literally; {remedy}"
            ),
        );
    }
    if mode == MatchMode::Substring && text.split('|').any(|a| a.trim() != a) {
        let remedy = if forced {
            "remove it; `--match substring` forces that mode"
        } else {
            "remove it, or use `match = \"key\"`, which trims it"
        };
        d.warn(
            span,
            format!(
                "pattern `{text}` has whitespace at the start or end of an alternative; \
                 `substring` mode matches it as written, as Colony does, so it matches only keys \
                 that contain that whitespace ({remedy})"
            ),
        );
    }
    if mode == MatchMode::Key {
        // fnmatch / shell glob syntax, or a space inside an alternative: `key` mode matches
        // them literally, and no action key holds them (issue 6 N2-8).
        let odd: Vec<String> = text
            .split('|')
            .flat_map(|a| a.trim().chars())
            .filter(|c| matches!(c, '[' | ']' | '{' | '}' | ',') || c.is_whitespace())
            .map(|c| format!("{c:?}"))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if !odd.is_empty() {
            d.warn(
                span,
                format!(
                    "pattern `{text}` holds {}, which `key` mode matches literally (its globs \
                     are only `*`, `?` and `**`: no `[...]` sets or `{{a,b}}` alternatives; \
                     write alternatives as `a|b`), and no action key contains it, so it \
                     matches nothing",
                    odd.join(", ")
                ),
            );
        }
    }
    Ok(p)
}

/// Builds the replay configuration from a loaded config file. `profile` is the effective
/// profile (CLI override or the file's); `force` (`--match`) sets the matching mode of every
/// guardrail, overriding `[replay] match` and per-guardrail `match`.
///
/// Errors: every problem in `[replay]` or `[[guardrails]]`, located at file:line:col.
pub fn from_loaded(
    loaded: &LoadedConfig,
    profile: Profile,
    force: Option<MatchMode>,
) -> Result<ReplayConfig, ConfigError> {
    // The file that defines each section: the config itself, else the nearest extended file.
    let mut files = vec![(loaded.path.clone(), loaded.text.clone())];
    for p in &loaded.extended {
        let text = std::fs::read_to_string(p)
            .map_err(|e| ConfigError::plain(p, format!("cannot read config: {e}")))?;
        files.push((p.clone(), text));
    }
    let mut docs = Vec::new();
    for (p, t) in files {
        docs.push(Doc::parse(&p, t)?);
    }
    let find = |key: &str| docs.iter().find(|d| d.root.get(key).is_some());
    let mut settings = match find("replay").and_then(|d| Some((d, d.root.get("replay")?))) {
        Some((d, r)) => parse_settings(d, r, profile)?,
        None => ReplaySettings {
            mode: default_mode(profile),
            ..Default::default()
        },
    };
    if let Some(m) = force {
        settings.mode = m;
    }
    // `[[guardrails]]` of every file in the `extend` chain, the farthest base first: an
    // extending file adds guardrails to its base's (issue 6 T12), ids unique across the chain.
    let sections: Vec<(&Doc, &SVal)> = docs
        .iter()
        .rev()
        .filter_map(|d| Some((d, d.root.get("guardrails")?)))
        .collect();
    for (d, _) in &sections {
        d.forced_substring.set(force == Some(MatchMode::Substring));
    }
    let guardrails = parse_guardrail_sections(&sections, settings.mode, force.is_some())?;
    let warnings = docs.iter().flat_map(|d| d.warnings.take()).collect();
    Ok(ReplayConfig {
        settings,
        guardrails,
        warnings,
    })
}

/// Parses config text (a `cellguard.toml`, or a `pyproject.toml` when `path` is named so).
///
/// Errors: as [`from_loaded`], plus TOML syntax.
pub fn parse_str(
    path: &Path,
    text: &str,
    profile: Profile,
    force: Option<MatchMode>,
) -> Result<ReplayConfig, ConfigError> {
    let doc = Doc::parse(path, text.to_string())?;
    let mut settings = match doc.root.get("replay") {
        Some(r) => parse_settings(&doc, r, profile)?,
        None => ReplaySettings {
            mode: default_mode(profile),
            ..Default::default()
        },
    };
    if let Some(m) = force {
        settings.mode = m;
    }
    let guardrails = match doc.root.get("guardrails") {
        Some(g) => parse_guardrails(&doc, g, settings.mode, force.is_some())?,
        None => GuardrailSet::default(),
    };
    Ok(ReplayConfig {
        settings,
        guardrails,
        warnings: doc.warnings.take(),
    })
}

fn default_mode(profile: Profile) -> MatchMode {
    match profile {
        Profile::Strict => MatchMode::Key,
        Profile::Colony => MatchMode::Substring,
    }
}

fn table<'a>(d: &Doc, v: &'a SVal, what: &str) -> Result<Table<'a>, ConfigError> {
    v.table().ok_or_else(|| {
        d.error(
            &v.span,
            format!("{what} must be a table, found {}", v.describe()),
        )
    })
}

fn check_keys(d: &Doc, t: Table, allowed: &[&str], what: &str) -> Result<(), ConfigError> {
    for (k, span, _) in t {
        if !allowed.contains(&k.as_str()) {
            return Err(d.error(
                span,
                format!(
                    "unknown key `{k}` in {what} (expected one of: {})",
                    allowed.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

fn opt_string(d: &Doc, t: Table, key: &str) -> Result<Option<String>, ConfigError> {
    get(t, key)
        .map(|v| string(d, v, &format!("`{key}`")))
        .transpose()
}

fn strings(d: &Doc, v: &SVal, what: &str) -> Result<Vec<(String, Range<usize>)>, ConfigError> {
    match &v.kind {
        SKind::Array(a) => a
            .iter()
            .map(|x| string(d, x, &format!("every entry of {what}")).map(|s| (s, x.span.clone())))
            .collect(),
        SKind::Str(s) => Ok(vec![(s.clone(), v.span.clone())]),
        _ => Err(d.error(
            &v.span,
            format!("{what} must be a list of strings, found {}", v.describe()),
        )),
    }
}

fn uint(d: &Doc, v: &SVal, what: &str) -> Result<u64, ConfigError> {
    match v.kind {
        SKind::Int(n) if n >= 0 => Ok(n as u64),
        SKind::Int(n) => Err(d.error(&v.span, format!("{what} must not be negative, found {n}"))),
        _ => Err(d.error(
            &v.span,
            format!("{what} must be an integer, found {}", v.describe()),
        )),
    }
}

/// A non-negative finite number (rates, windows in seconds).
fn number(d: &Doc, v: &SVal, what: &str) -> Result<f64, ConfigError> {
    let x = toml_view::number(d, v, what)?;
    if x < 0.0 {
        return Err(d.error(&v.span, format!("{what} must be a non-negative number")));
    }
    Ok(x)
}

fn mode_of(d: &Doc, v: &SVal) -> Result<MatchMode, ConfigError> {
    let s = string(d, v, "`match`")?;
    MatchMode::parse(&s).ok_or_else(|| {
        d.error(
            &v.span,
            format!("unknown match mode `{s}` (expected `key` or `substring`)"),
        )
    })
}

fn parse_settings(d: &Doc, v: &SVal, profile: Profile) -> Result<ReplaySettings, ConfigError> {
    let t = table(d, v, "`[replay]`")?;
    check_keys(
        d,
        t,
        &[
            "match",
            "on-block",
            "epoch",
            "history-cap",
            "agent-id",
            "completion",
            "planning-patterns",
        ],
        "`[replay]`",
    )?;
    let mut s = ReplaySettings {
        mode: default_mode(profile),
        ..Default::default()
    };
    if let Some(m) = get(t, "match") {
        s.mode = mode_of(d, m)?;
    }
    if let Some(o) = get(t, "on-block") {
        let text = string(d, o, "`on-block`")?;
        s.on_block = Some(OnBlock::parse(&text).ok_or_else(|| {
            d.error(
                &o.span,
                format!(
                    "unknown `on-block` value `{text}` (expected `keep`, `drop` or `stop-cell`)"
                ),
            )
        })?);
    }
    if let Some(e) = get(t, "epoch") {
        let text = match &e.kind {
            SKind::Datetime(x) => x.clone(),
            _ => string(d, e, "`epoch`")?,
        };
        s.epoch = Some(Epoch::parse(&text).map_err(|m| d.error(&e.span, m))?);
    }
    if let Some(c) = get(t, "history-cap") {
        let n = uint(d, c, "`history-cap`")?;
        if n == 0 {
            return Err(d.error(&c.span, "`history-cap` must be at least 1"));
        }
        s.history_cap = n as usize;
    }
    s.agent_id = opt_string(d, t, "agent-id")?;
    if let Some(c) = get(t, "completion") {
        let text = string(d, c, "`completion`")?;
        s.completion = match text.as_str() {
            "rule-based" => CompletionMode::RuleBased,
            "none" => CompletionMode::None,
            _ => {
                return Err(d.error(
                    &c.span,
                    format!(
                        "unknown `completion` value `{text}` (expected `rule-based` or `none`)"
                    ),
                ))
            }
        };
    }
    if let Some(p) = get(t, "planning-patterns") {
        for (text, span) in strings(d, p, "`planning-patterns`")? {
            Pattern::compile(&text, MatchMode::Key).map_err(|m| d.error(&span, m))?;
            s.planning.push(text);
        }
    }
    Ok(s)
}

fn parse_guardrails(
    d: &Doc,
    v: &SVal,
    default: MatchMode,
    force: bool,
) -> Result<GuardrailSet, ConfigError> {
    parse_guardrail_sections(&[(d, v)], default, force)
}

/// The `guardrails` arrays of several files (an `extend` chain, base first) as one set, in
/// order. A guardrail id may appear only once across all of them.
fn parse_guardrail_sections(
    sections: &[(&Doc, &SVal)],
    default: MatchMode,
    force: bool,
) -> Result<GuardrailSet, ConfigError> {
    let mut set = GuardrailSet::default();
    let mut ids = HashSet::new();
    for &(d, v) in sections {
        let SKind::Array(items) = &v.kind else {
            return Err(d.error(
                &v.span,
                format!(
                    "`guardrails` must be an array of tables (`[[guardrails]]`), found {}",
                    v.describe()
                ),
            ));
        };
        for item in items {
            let g = parse_one(d, item, default, force, None, "", &mut set, &mut ids)?;
            set.guardrails.push(g);
        }
    }
    Ok(set)
}

const KINDS: &str = "capability-boundary, temporal-order, args-aware-order, approval-required, rate-limit, composite, semantic-constraint";

#[allow(clippy::too_many_arguments)]
fn parse_one(
    d: &Doc,
    v: &SVal,
    inherited: MatchMode,
    force: bool,
    parent: Option<&str>,
    default_id: &str,
    set: &mut GuardrailSet,
    ids: &mut HashSet<String>,
) -> Result<Guardrail, ConfigError> {
    let what_top = if parent.is_some() {
        "an inner guardrail"
    } else {
        "a guardrail"
    };
    let t = table(d, v, &format!("{what_top} entry"))?;
    let kind_v = get(t, "kind")
        .ok_or_else(|| d.error(&v.span, format!("{what_top} needs a `kind` ({KINDS})")))?;
    let kind = string(d, kind_v, "`kind`")?;
    let id = match (get(t, "id"), parent) {
        (Some(i), p) => {
            let own = string(d, i, "`id`")?;
            if own.trim().is_empty() {
                return Err(d.error(&i.span, "`id` must not be empty"));
            }
            let full = match p {
                Some(p) => format!("{p}/{own}"),
                None => own,
            };
            if let Some((_, what)) = RESERVED_IDS.iter().find(|(r, _)| *r == full) {
                return Err(d.error(
                    &i.span,
                    format!("guardrail id `{full}` is reserved (the SARIF report's rule for {what}); choose another id"),
                ));
            }
            if !ids.insert(full.clone()) {
                return Err(d.error(&i.span, format!("duplicate guardrail id `{full}`")));
            }
            full
        }
        (None, Some(p)) => {
            let full = format!("{p}/{default_id}");
            ids.insert(full.clone());
            full
        }
        (None, None) => return Err(d.error(&v.span, "a guardrail needs an `id`")),
    };
    let mode = match get(t, "match") {
        Some(m) if !force => mode_of(d, m)?,
        _ => inherited,
    };
    let common = ["id", "kind", "match", "description"];
    let what = format!("a `{kind}` guardrail");
    let allowed = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut a: Vec<&str> = common.to_vec();
        a.extend_from_slice(extra);
        a
    };
    let pattern =
        |set: &mut GuardrailSet, text: &str, span: &Range<usize>| -> Result<usize, ConfigError> {
            let p = compile_pattern(d, text, mode, span)?;
            Ok(set.add_pattern(p))
        };
    let kind_value = match kind.as_str() {
        "capability-boundary" => {
            check_keys(d, t, &allowed(&["allow", "block"]), &what)?;
            if get(t, "allow").is_none() && get(t, "block").is_none() {
                return Err(d.error(&v.span, format!("{what} needs `allow` or `block`")));
            }
            let mut allow = None;
            let mut allow_text = Vec::new();
            if let Some(a) = get(t, "allow") {
                let mut ids = Vec::new();
                for (s, span) in strings(d, a, "`allow`")? {
                    ids.push(pattern(set, &s, &span)?);
                    allow_text.push(s);
                }
                allow = Some(ids);
            }
            let mut block = Vec::new();
            if let Some(b) = get(t, "block") {
                for (s, span) in strings(d, b, "`block`")? {
                    block.push(pattern(set, &s, &span)?);
                }
            }
            Kind::Capability(capability::CapabilityBoundary {
                allow,
                block,
                allow_text,
            })
        }
        "temporal-order" => {
            check_keys(d, t, &allowed(&["rules"]), &what)?;
            let rules_v = get(t, "rules").ok_or_else(|| {
                d.error(
                    &v.span,
                    format!("{what} needs `rules = [{{ before = \"...\", after = \"...\" }}]`"),
                )
            })?;
            let SKind::Array(list) = &rules_v.kind else {
                return Err(d.error(&rules_v.span, "`rules` must be an array of tables"));
            };
            if list.is_empty() {
                return Err(d.error(&rules_v.span, "`rules` must not be empty"));
            }
            let mut rules = Vec::new();
            for r in list {
                let rt = table(d, r, "a temporal-order rule")?;
                check_keys(
                    d,
                    rt,
                    &["before", "after", "status"],
                    "a temporal-order rule",
                )?;
                let before_v = get(rt, "before")
                    .ok_or_else(|| d.error(&r.span, "a temporal-order rule needs `before`"))?;
                let after_v = get(rt, "after")
                    .ok_or_else(|| d.error(&r.span, "a temporal-order rule needs `after`"))?;
                let before = string(d, before_v, "`before`")?;
                let after = string(d, after_v, "`after`")?;
                let status = match get(rt, "status") {
                    Some(s) => statuses(d, s)?,
                    None => StatusSet::any(),
                };
                let bp = pattern(set, &before, &before_v.span)?;
                let ap = pattern(set, &after, &after_v.span)?;
                rules.push(temporal::OrderRule {
                    after: ap,
                    before_watch: set.add_watch(bp, status, true),
                    before_text: before,
                });
            }
            Kind::Temporal(temporal::TemporalOrder { rules })
        }
        "args-aware-order" => {
            const RULE_KEYS: [&str; 8] = [
                "target",
                "applies-when",
                "required-prior",
                "max-age-calls",
                "max-age-seconds",
                "prior-params-match",
                "require-status",
                "suggestion",
            ];
            let mut keys = allowed(&["rules"]);
            keys.extend_from_slice(&RULE_KEYS);
            check_keys(d, t, &keys, &what)?;
            let mut rules = Vec::new();
            match get(t, "rules") {
                Some(rv) => {
                    if RULE_KEYS.iter().any(|k| get(t, k).is_some()) {
                        return Err(d.error(&rv.span, "give either `rules = [...]` or one rule's keys (`target`, ...) inline, not both"));
                    }
                    let SKind::Array(list) = &rv.kind else {
                        return Err(d.error(&rv.span, "`rules` must be an array of tables"));
                    };
                    if list.is_empty() {
                        return Err(d.error(&rv.span, "`rules` must not be empty"));
                    }
                    for r in list {
                        let rt = table(d, r, "an args-aware rule")?;
                        check_keys(d, rt, &RULE_KEYS, "an args-aware rule")?;
                        rules.push(args_rule(d, r, rt, mode, set)?);
                    }
                }
                None => rules.push(args_rule(d, v, t, mode, set)?),
            }
            Kind::ArgsAware(ArgsAware { rules })
        }
        "approval-required" => {
            check_keys(
                d,
                t,
                &allowed(&["patterns", "dry-run-exempt", "approvals"]),
                &what,
            )?;
            let pv = get(t, "patterns")
                .ok_or_else(|| d.error(&v.span, format!("{what} needs `patterns`")))?;
            let mut patterns = Vec::new();
            for (s, span) in strings(d, pv, "`patterns`")? {
                patterns.push(pattern(set, &s, &span)?);
            }
            if patterns.is_empty() {
                // An approval gate over no pattern gates nothing (issue 6 N2-6).
                return Err(d.error(
                    &pv.span,
                    "`patterns` must not be empty (an approval gate over no pattern gates nothing)",
                ));
            }
            let dry_run_exempt = match get(t, "dry-run-exempt") {
                Some(b) => boolean(d, b, "`dry-run-exempt`")?,
                None => true,
            };
            let use_records = match get(t, "approvals") {
                Some(a) => match string(d, a, "`approvals`")?.as_str() {
                    "records" => true,
                    "none" => false,
                    other => {
                        return Err(d.error(
                            &a.span,
                            format!(
                            "unknown `approvals` value `{other}` (expected `records` or `none`)"
                        ),
                        ))
                    }
                },
                None => true,
            };
            Kind::Approval(approval::ApprovalRequired {
                patterns,
                dry_run_exempt,
                use_records,
            })
        }
        "rate-limit" => {
            check_keys(
                d,
                t,
                &allowed(&[
                    "pattern",
                    "max",
                    "per-calls",
                    "per-seconds",
                    "status",
                    "suggestion",
                ]),
                &what,
            )?;
            let pv = get(t, "pattern")
                .ok_or_else(|| d.error(&v.span, format!("{what} needs `pattern`")))?;
            let ptext = string(d, pv, "`pattern`")?;
            let pid = pattern(set, &ptext, &pv.span)?;
            let mv =
                get(t, "max").ok_or_else(|| d.error(&v.span, format!("{what} needs `max`")))?;
            let max = uint(d, mv, "`max`")?;
            let window = match (get(t, "per-calls"), get(t, "per-seconds")) {
                (Some(c), None) => {
                    let n = uint(d, c, "`per-calls`")?;
                    if n == 0 {
                        return Err(d.error(&c.span, "`per-calls` must be at least 1"));
                    }
                    rate_limit::Window::Calls(n)
                }
                (None, Some(s)) => {
                    let x = number(d, s, "`per-seconds`")?;
                    if x == 0.0 {
                        return Err(d.error(&s.span, "`per-seconds` must be positive"));
                    }
                    rate_limit::Window::Seconds(x)
                }
                (Some(_), Some(s)) => {
                    return Err(d.error(&s.span, "give `per-calls` or `per-seconds`, not both"))
                }
                (None, None) => {
                    return Err(d.error(
                        &v.span,
                        format!("{what} needs `per-calls` or `per-seconds`"),
                    ))
                }
            };
            let status = match get(t, "status") {
                Some(s) => statuses(d, s)?,
                None => StatusSet::any(),
            };
            let watch = set.add_watch(pid, status, false);
            let counter = set.add_rate_counter(super::RateCounterSpec {
                watch,
                max,
                per_calls: match window {
                    rate_limit::Window::Calls(n) => Some(n),
                    rate_limit::Window::Seconds(_) => None,
                },
            });
            Kind::RateLimit(rate_limit::RateLimit {
                pattern: pid,
                watch,
                counter,
                max,
                window,
                suggestion: opt_string(d, t, "suggestion")?.unwrap_or_default(),
            })
        }
        "semantic-constraint" => {
            check_keys(
                d,
                t,
                &allowed(&["constraints", "escalation-threshold"]),
                &what,
            )?;
            let cv = get(t, "constraints").ok_or_else(|| {
                d.error(&v.span, format!("{what} needs `constraints = [...]` (or `[[guardrails.constraints]]` tables)"))
            })?;
            let SKind::Array(list) = &cv.kind else {
                return Err(d.error(&cv.span, "`constraints` must be an array of tables"));
            };
            if list.is_empty() {
                return Err(d.error(&cv.span, "`constraints` must not be empty"));
            }
            let mut cids = HashSet::new();
            let mut constraints = Vec::new();
            for c in list {
                constraints.push(semantic_constraint(d, c, mode, set, &mut cids)?);
            }
            let escalation_threshold = match get(t, "escalation-threshold") {
                Some(x) => uint(d, x, "`escalation-threshold`")?,
                None => 2,
            };
            Kind::Semantic(semantic::SemanticConstraints {
                constraints,
                escalation_threshold,
            })
        }
        "composite" => {
            check_keys(d, t, &allowed(&["guardrails"]), &what)?;
            let gv = get(t, "guardrails").ok_or_else(|| {
                d.error(&v.span, "a composite guardrail needs at least one inner guardrail (`guardrails = [...]`)")
            })?;
            let SKind::Array(list) = &gv.kind else {
                return Err(d.error(&gv.span, "`guardrails` must be an array of tables"));
            };
            if list.is_empty() {
                return Err(d.error(
                    &gv.span,
                    "a composite guardrail needs at least one inner guardrail",
                ));
            }
            let names = member_default_ids(list);
            let mut inner = Vec::new();
            for (g, name) in list.iter().zip(&names) {
                inner.push(parse_one(d, g, mode, force, Some(&id), name, set, ids)?);
            }
            Kind::Composite(composite::Composite { inner })
        }
        other => {
            return Err(d.error(
                &kind_v.span,
                format!("unknown guardrail kind `{other}` (expected one of: {KINDS})"),
            ))
        }
    };
    Ok(Guardrail {
        id: id.into(),
        mode,
        kind: kind_value,
    })
}

/// The ids composite members without an `id` get (T8-1): their kind (`capability-boundary`),
/// then `kind-2`, `kind-3`, ... when that kind appears again or a sibling's own `id` takes the
/// name; a position index would say nothing about the member. Entries with an `id` (or that are
/// not tables, an error reported later) get an unused placeholder.
fn member_default_ids(list: &[SVal]) -> Vec<String> {
    let field = |v: &SVal, k: &str| {
        v.table()
            .and_then(|t| get(t, k))
            .and_then(|x| match &x.kind {
                SKind::Str(s) => Some(s.clone()),
                _ => None,
            })
    };
    let mut taken: HashSet<String> = list.iter().filter_map(|v| field(v, "id")).collect();
    list.iter()
        .map(|v| {
            if field(v, "id").is_some() {
                return String::new();
            }
            let kind = field(v, "kind").unwrap_or_else(|| "member".to_string());
            let mut name = kind.clone();
            let mut n = 2;
            while taken.contains(&name) {
                name = format!("{kind}-{n}");
                n += 1;
            }
            taken.insert(name.clone());
            name
        })
        .collect()
}

/// `prior-params-match = { captures-subset-of, captures-any-in, same, equal }`; capture tests
/// need a capturing regex among `conds` (named `conds_name` in the error).
fn prior_params_match(
    d: &Doc,
    pm: &SVal,
    conds: &[ParamCond],
    conds_name: &str,
) -> Result<PriorMatch, ConfigError> {
    let pt = table(d, pm, "`prior-params-match`")?;
    check_keys(
        d,
        pt,
        &["captures-subset-of", "captures-any-in", "same", "equal"],
        "`prior-params-match`",
    )?;
    let mut m = PriorMatch {
        captures_subset_of: opt_string(d, pt, "captures-subset-of")?,
        captures_any_in: opt_string(d, pt, "captures-any-in")?,
        equal: Vec::new(),
    };
    if let Some(s) = get(pt, "same") {
        for (p, _) in strings(d, s, "`same`")? {
            m.equal.push((p.clone(), p));
        }
    }
    if let Some(e) = get(pt, "equal") {
        for (k, _, val) in table(d, e, "`equal`")? {
            m.equal
                .push((k.clone(), string(d, val, "a value of `equal`")?));
        }
    }
    if (m.captures_subset_of.is_some() || m.captures_any_in.is_some())
        && !conds.iter().any(|c| matches!(c.test, Test::Regex { .. }))
    {
        return Err(d.error(
            &pm.span,
            format!(
                "`captures-subset-of` / `captures-any-in` need an {conds_name} regex that captures"
            ),
        ));
    }
    Ok(m)
}

/// A table or a list of tables of param conditions (`applies-when`, `precondition`).
fn param_conds(d: &Doc, a: &SVal, what: &str) -> Result<Vec<ParamCond>, ConfigError> {
    match &a.kind {
        SKind::Table(_) => Ok(vec![param_cond(d, a)?]),
        SKind::Array(list) => list.iter().map(|c| param_cond(d, c)).collect(),
        _ => Err(d.error(
            &a.span,
            format!("{what} must be a table or a list of tables"),
        )),
    }
}

/// One `[[guardrails.constraints]]` entry of a `semantic-constraint` guardrail.
fn semantic_constraint(
    d: &Doc,
    v: &SVal,
    mode: MatchMode,
    set: &mut GuardrailSet,
    ids: &mut HashSet<String>,
) -> Result<semantic::Constraint, ConfigError> {
    let t = table(d, v, "a semantic constraint")?;
    check_keys(
        d,
        t,
        &[
            "id",
            "rule",
            "applies-to",
            "scope",
            "mode",
            "precondition",
            "verifier",
            "evidence",
            "prior-params-match",
            "reason",
            "suggestion",
        ],
        "a semantic constraint",
    )?;
    let iv = get(t, "id").ok_or_else(|| d.error(&v.span, "a semantic constraint needs an `id`"))?;
    let id = string(d, iv, "`id`")?;
    if id.trim().is_empty() {
        return Err(d.error(&iv.span, "`id` must not be empty"));
    }
    if !ids.insert(id.clone()) {
        return Err(d.error(&iv.span, format!("duplicate constraint id `{id}`")));
    }
    let av = get(t, "applies-to").ok_or_else(|| {
        d.error(
            &v.span,
            "a semantic constraint needs `applies-to` (action patterns)",
        )
    })?;
    let mut applies_to = Vec::new();
    for (s, span) in strings(d, av, "`applies-to`")? {
        applies_to.push(set.add_pattern(compile_pattern(d, &s, mode, &span)?));
    }
    let scope = match get(t, "scope") {
        None => semantic::Scope::Cell,
        Some(x) => match string(d, x, "`scope`")?.as_str() {
            "cell" => semantic::Scope::Cell,
            "session" => semantic::Scope::Session,
            other => {
                return Err(d.error(
                    &x.span,
                    format!("unknown `scope` `{other}` (expected `cell` or `session`)"),
                ))
            }
        },
    };
    let advise = match get(t, "mode") {
        None => false,
        Some(x) => match string(d, x, "`mode`")?.as_str() {
            "block" => false,
            "advise" => true,
            other => {
                return Err(d.error(
                    &x.span,
                    format!("unknown `mode` `{other}` (expected `block` or `advise`)"),
                ))
            }
        },
    };
    let precondition = match get(t, "precondition") {
        Some(a) => param_conds(d, a, "`precondition`")?,
        None => Vec::new(),
    };
    let verifier_name = match get(t, "verifier") {
        Some(x) => Some((string(d, x, "`verifier`")?, x)),
        None => None,
    };
    let evidence_only = |k: &str| -> Result<(), ConfigError> {
        match get(t, k) {
            Some(x) => Err(d.error(&x.span, format!("`{k}` belongs to the `evidence` verifier"))),
            None => Ok(()),
        }
    };
    let verifier = match verifier_name.as_ref().map(|(n, x)| (n.as_str(), *x)) {
        None | Some(("evidence", _)) => {
            let ev = get(t, "evidence").ok_or_else(|| {
                d.error(
                    &v.span,
                    "a semantic constraint needs `evidence = { call = \"pattern\" }` or a `verifier` (`recorded`, `satisfied`, `unsatisfied`)",
                )
            })?;
            let et = table(d, ev, "`evidence`")?;
            check_keys(d, et, &["call", "status"], "`evidence`")?;
            let cv = get(et, "call")
                .ok_or_else(|| d.error(&ev.span, "`evidence` needs `call` (a pattern)"))?;
            let ctext = string(d, cv, "`call`")?;
            let pid = set.add_pattern(compile_pattern(d, &ctext, mode, &cv.span)?);
            let status = match get(et, "status") {
                Some(x) => statuses(d, x)?,
                None => StatusSet::any(),
            };
            let prior_match = match get(t, "prior-params-match") {
                None => None,
                Some(pm) => {
                    set.needs_prior_params = true;
                    Some(prior_params_match(d, pm, &precondition, "`precondition`")?)
                }
            };
            semantic::Verifier::Evidence {
                watch: set.add_watch(pid, status, true),
                prior_match,
            }
        }
        Some((name, x)) => {
            evidence_only("evidence")?;
            evidence_only("prior-params-match")?;
            match name {
                "recorded" => semantic::Verifier::Recorded,
                "satisfied" => semantic::Verifier::Fixed(true),
                "unsatisfied" => semantic::Verifier::Fixed(false),
                other => {
                    return Err(d.error(
                        &x.span,
                        format!("unknown `verifier` `{other}` (expected `evidence`, `recorded`, `satisfied` or `unsatisfied`)"),
                    ))
                }
            }
        }
    };
    Ok(semantic::Constraint {
        id,
        applies_to,
        scope,
        advise,
        precondition,
        verifier,
        reason: opt_string(d, t, "reason")?.unwrap_or_default(),
        suggestion: opt_string(d, t, "suggestion")?.unwrap_or_default(),
    })
}

fn statuses(d: &Doc, v: &SVal) -> Result<StatusSet, ConfigError> {
    let mut list = Vec::new();
    for (s, span) in strings(d, v, "`status`")? {
        if s == "any" {
            return Ok(StatusSet::any());
        }
        match CallStatus::parse(&s) {
            Some(st) if s == st.as_str() => list.push(st),
            _ => {
                return Err(d.error(
                    &span,
                    format!(
                    "unknown status `{s}` (expected `ok`, `error`, `blocked`, `unknown` or `any`)"
                ),
                ))
            }
        }
    }
    Ok(StatusSet::of(&list))
}

fn args_rule(
    d: &Doc,
    v: &SVal,
    t: Table,
    mode: MatchMode,
    set: &mut GuardrailSet,
) -> Result<Rule, ConfigError> {
    let tv =
        get(t, "target").ok_or_else(|| d.error(&v.span, "an args-aware rule needs `target`"))?;
    let ttext = string(d, tv, "`target`")?;
    let target = set.add_pattern(compile_pattern(d, &ttext, mode, &tv.span)?);
    let applies_when = match get(t, "applies-when") {
        Some(a) => param_conds(d, a, "`applies-when`")?,
        None => Vec::new(),
    };
    let require_status = match get(t, "require-status") {
        Some(s) => Some(statuses(d, s)?),
        None => None,
    };
    let prior = match get(t, "required-prior") {
        // A rule without a prior would never block: almost certainly a mistake. Colony's
        // empty `required_prior` (which skips the rule) stays expressible as `""`.
        None => {
            return Err(d.error(
                &v.span,
                "an args-aware rule needs `required-prior` (a call pattern, `{ call = ... }` or `{ message = ... }`; `\"\"` for Colony's rule that never blocks)",
            ))
        }
        Some(p) => match &p.kind {
            SKind::Str(s) if s.is_empty() => {
                // Kept for Colony's rule, but never silent: an empty value is more often a
                // template or environment substitution gone wrong (issue 6 T7-11).
                d.warn(
                    &p.span,
                    "`required-prior = \"\"` makes this rule never block (Colony skips a rule \
                     whose required_prior is empty); give the prior call's pattern, or remove \
                     the rule"
                        .to_string(),
                );
                Prior::Nothing
            }
            SKind::Str(s) => {
                let pid =
                    set.add_pattern(compile_pattern(d, s, mode, &p.span)?);
                Prior::Call {
                    watch: set.add_watch(pid, require_status.unwrap_or_default(), true),
                    text: s.clone(),
                }
            }
            SKind::Table(pt) => {
                check_keys(d, pt, &["call", "status", "message"], "`required-prior`")?;
                match (get(pt, "call"), get(pt, "message")) {
                    (Some(c), None) => {
                        let s = string(d, c, "`call`")?;
                        let status = match (get(pt, "status"), get(t, "require-status")) {
                            (Some(st), Some(rs)) => {
                                let inline = statuses(d, st)?;
                                // One condition in two places: differing values would silently
                                // let one win (issue 6 T14).
                                if Some(inline) != require_status {
                                    let later = if st.span.start > rs.span.start { st } else { rs };
                                    return Err(d.error(
                                        &later.span,
                                        "`require-status` and `required-prior.status` disagree; give the prior's status once",
                                    ));
                                }
                                inline
                            }
                            (Some(st), None) => statuses(d, st)?,
                            (None, _) => require_status.unwrap_or_default(),
                        };
                        let pid = set.add_pattern(
                            compile_pattern(d, &s, mode, &c.span)?,
                        );
                        Prior::Call {
                            watch: set.add_watch(pid, status, true),
                            text: s,
                        }
                    }
                    (None, Some(m)) => {
                        if let Some(st) = get(pt, "status") {
                            return Err(d.error(
                                &st.span,
                                "`status` applies to a prior call, not a message",
                            ));
                        }
                        let w = message_watch(d, m)?;
                        set.message_watches.push(w);
                        Prior::Message {
                            watch: set.message_watches.len() - 1,
                        }
                    }
                    (Some(_), Some(m)) => {
                        return Err(d.error(&m.span, "give `call` or `message`, not both"))
                    }
                    (None, None) => {
                        return Err(d.error(&p.span, "`required-prior` needs `call` or `message`"))
                    }
                }
            }
            _ => {
                return Err(d.error(
                    &p.span,
                    format!(
                        "`required-prior` must be a pattern string or a table, found {}",
                        p.describe()
                    ),
                ))
            }
        },
    };
    let max_age_calls = get(t, "max-age-calls")
        .map(|m| uint(d, m, "`max-age-calls`"))
        .transpose()?;
    let max_age_seconds = get(t, "max-age-seconds")
        .map(|m| number(d, m, "`max-age-seconds`"))
        .transpose()?;
    if matches!(prior, Prior::Message { .. }) {
        for k in [
            "max-age-calls",
            "max-age-seconds",
            "prior-params-match",
            "require-status",
        ] {
            if let Some(x) = get(t, k) {
                return Err(d.error(
                    &x.span,
                    format!("`{k}` applies to a prior call, not a message"),
                ));
            }
        }
    }
    let prior_match = match get(t, "prior-params-match") {
        None => None,
        Some(pm) => Some(prior_params_match(d, pm, &applies_when, "`applies-when`")?),
    };
    // Value-only comparisons against a prior call are answered by an equality index; capture
    // predicates scan the history (and need prior params kept).
    let mut eq_index = None;
    let mut member_index = None;
    if let (Prior::Call { watch, .. }, Some(m)) = (&prior, &prior_match) {
        if m.captures_subset_of.is_none() && m.captures_any_in.is_none() && !m.equal.is_empty() {
            set.eq_indexes.push(EqIndexSpec {
                watch: *watch,
                pairs: m.equal.clone(),
            });
            eq_index = Some(set.eq_indexes.len() - 1);
        } else {
            set.needs_prior_params = true;
            if let Some(param) = m.captures_subset_of.as_ref().or(m.captures_any_in.as_ref()) {
                set.member_indexes.push(MemberIndexSpec {
                    watch: *watch,
                    param: param.clone(),
                });
                member_index = Some(set.member_indexes.len() - 1);
            }
        }
    }
    Ok(Rule {
        eq_index,
        member_index,
        target,
        applies_when,
        prior,
        max_age_calls,
        max_age_seconds,
        prior_match,
        suggestion: opt_string(d, t, "suggestion")?.unwrap_or_default(),
    })
}

/// A Python `re` pattern (Colony's guardrails use `re.findall` / `re.search`).
fn regex(d: &Doc, v: &SVal, what: &str) -> Result<crate::pyregex::PyRegex, ConfigError> {
    let s = string(d, v, what)?;
    crate::pyregex::PyRegex::new(&s)
        .map_err(|e| d.error(&v.span, format!("invalid regex in {what}: {e}")))
}

fn param_cond(d: &Doc, v: &SVal) -> Result<ParamCond, ConfigError> {
    let t = table(d, v, "an `applies-when` condition")?;
    check_keys(
        d,
        t,
        &[
            "param",
            "equals",
            "not-equals",
            "in",
            "not-in",
            "present",
            "regex",
            "exclude-self",
        ],
        "an `applies-when` condition",
    )?;
    let pv = get(t, "param")
        .ok_or_else(|| d.error(&v.span, "an `applies-when` condition needs `param`"))?;
    let param = string(d, pv, "`param`")?;
    let tests: Vec<&str> = ["equals", "not-equals", "in", "not-in", "present", "regex"]
        .into_iter()
        .filter(|k| get(t, k).is_some())
        .collect();
    if tests.len() != 1 {
        return Err(d.error(
            &v.span,
            "an `applies-when` condition needs exactly one of `equals`, `not-equals`, `in`, `not-in`, `present`, `regex`",
        ));
    }
    if let Some(x) = get(t, "exclude-self") {
        if tests[0] != "regex" {
            return Err(d.error(&x.span, "`exclude-self` applies to a `regex` condition"));
        }
    }
    let list = |x: &SVal| -> Result<Vec<serde_json::Value>, ConfigError> {
        match &x.kind {
            SKind::Array(a) => Ok(a.iter().map(SVal::to_json).collect()),
            _ => Err(d.error(&x.span, "`in` / `not-in` must be a list")),
        }
    };
    let test = match tests[0] {
        "equals" => Test::Equals(get(t, "equals").map(SVal::to_json).unwrap_or_default()),
        "not-equals" => {
            Test::NotEquals(get(t, "not-equals").map(SVal::to_json).unwrap_or_default())
        }
        "in" => Test::In(list(get(t, "in").expect("checked"))?),
        "not-in" => Test::NotIn(list(get(t, "not-in").expect("checked"))?),
        "present" => Test::Present(boolean(
            d,
            get(t, "present").expect("checked"),
            "`present`",
        )?),
        _ => Test::Regex {
            re: regex(d, get(t, "regex").expect("checked"), "`regex`")?,
            exclude_self: match get(t, "exclude-self") {
                Some(x) => boolean(d, x, "`exclude-self`")?,
                None => false,
            },
        },
    };
    Ok(ParamCond { param, test })
}

fn message_watch(d: &Doc, v: &SVal) -> Result<MessageWatch, ConfigError> {
    let t = table(d, v, "`message`")?;
    check_keys(
        d,
        t,
        &[
            "role",
            "kind",
            "content-regex",
            "latest",
            "consume",
            "max-age-messages",
        ],
        "`message`",
    )?;
    let cv = get(t, "content-regex")
        .ok_or_else(|| d.error(&v.span, "`message` needs `content-regex`"))?;
    Ok(MessageWatch {
        role: opt_string(d, t, "role")?,
        kind: opt_string(d, t, "kind")?,
        content: regex(d, cv, "`content-regex`")?,
        latest: get(t, "latest")
            .map(|x| boolean(d, x, "`latest`"))
            .transpose()?
            .unwrap_or(false),
        consume: get(t, "consume")
            .map(|x| boolean(d, x, "`consume`"))
            .transpose()?
            .unwrap_or(false),
        max_age_messages: get(t, "max-age-messages")
            .map(|x| uint(d, x, "`max-age-messages`"))
            .transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> (Option<usize>, Option<usize>, String) {
        let e = parse_str(Path::new("cellguard.toml"), text, Profile::Strict, None).unwrap_err();
        (e.line, e.column, e.message)
    }

    #[test]
    fn spec_example_parses() {
        let text = r#"
[replay]
match = "key"
on-block = "stop-cell"

[[guardrails]]
id = "boundary"
kind = "capability-boundary"
allow = ["AgentPoolCapability.*", "SessionOrchestratorCapability.*"]
block = ["*.delete_*"]

[[guardrails]]
id = "plan-order"
kind = "temporal-order"
rules = [{ before = "*.check_plan_conflicts", after = "*.propose_plan" }]

[[guardrails]]
id = "status-claims"
kind = "args-aware-order"
target = "*.respond_to_user"
applies-when = { param = "content", regex = "agent-[0-9a-f]+", exclude-self = true }
required-prior = { call = "*.get_agent_status", status = "ok" }
prior-params-match = { captures-subset-of = "agent_ids" }
max-age-calls = 20
suggestion = "Call get_agent_status for those agents first."

[[guardrails]]
id = "approval"
kind = "approval-required"
patterns = ["DesignProcessCapability.*.create_decomposition"]
dry-run-exempt = true

[[guardrails]]
id = "spawn-rate"
kind = "rate-limit"
pattern = "*.spawn_*"
max = 5
per-calls = 50
"#;
        let c = parse_str(Path::new("cellguard.toml"), text, Profile::Strict, None).unwrap();
        assert_eq!(c.settings.on_block, Some(OnBlock::StopCell));
        let ids: Vec<String> = c.guardrails.ids().iter().map(|s| s.to_string()).collect();
        assert_eq!(
            ids,
            vec![
                "boundary",
                "plan-order",
                "status-claims",
                "approval",
                "spawn-rate"
            ]
        );
        assert!(c.guardrails.needs_prior_params);
    }

    /// T8-1: composite members without `id` are named by their kind, never by position, and
    /// never take a name a sibling's own `id` holds.
    #[test]
    fn anonymous_composite_members_are_named_by_kind() {
        let text = r#"
[[guardrails]]
id = "outer"
kind = "composite"
guardrails = [
  { kind = "capability-boundary", block = ["*.a"] },
  { id = "capability-boundary-2", kind = "capability-boundary", block = ["*.b"] },
  { kind = "capability-boundary", block = ["*.c"] },
  { kind = "rate-limit", pattern = "*.d", max = 1, per-calls = 5 },
]
"#;
        let c = parse_str(Path::new("cellguard.toml"), text, Profile::Strict, None).unwrap();
        let ids: Vec<String> = c.guardrails.ids().iter().map(|s| s.to_string()).collect();
        assert_eq!(
            ids,
            vec![
                "outer",
                "outer/capability-boundary",
                "outer/capability-boundary-2",
                "outer/capability-boundary-3",
                "outer/rate-limit"
            ]
        );
        let up: Vec<(String, Vec<String>)> = c.guardrails.guardrails[0]
            .member_ancestors()
            .into_iter()
            .map(|(id, a)| (id.to_string(), a.iter().map(|s| s.to_string()).collect()))
            .collect();
        assert_eq!(
            up[3],
            ("outer/rate-limit".to_string(), vec!["outer".to_string()])
        );
    }

    #[test]
    fn errors_are_located() {
        assert_eq!(
            err("[[guardrails]]\nid = \"a\"\nkind = \"temporal-order\"\nrules = [{ before = \"x\", aftr = \"y\" }]\n"),
            (Some(4), Some(26), "unknown key `aftr` in a temporal-order rule (expected one of: before, after, status)".to_string())
        );
        let (l, c, m) =
            err("[[guardrails]]\nid = \"a\"\nkind = \"capability-boundry\"\nblock = [\"x\"]\n");
        assert_eq!((l, c), (Some(3), Some(8)));
        assert!(
            m.starts_with("unknown guardrail kind `capability-boundry`"),
            "{m}"
        );
        let (l, c, m) = err("[[guardrails]]\nid = \"a\"\nkind = \"args-aware-order\"\ntarget = \"x\"\napplies-when = { param = \"c\", regex = \"(\" }\n");
        assert_eq!((l, c), (Some(5), Some(39)));
        assert!(m.starts_with("invalid regex in `regex`"), "{m}");
        let (l, _, m) = err("[[guardrails]]\nid = \"c\"\nkind = \"composite\"\nguardrails = []\n");
        assert_eq!(l, Some(4));
        assert_eq!(
            m,
            "a composite guardrail needs at least one inner guardrail"
        );
        let (l, _, m) = err("[[guardrails]]\nid = \"a\"\nkind = \"capability-boundary\"\nblock = [\"a..b\"]\n[[guardrails]]\nid = \"a\"\n");
        assert_eq!(
            (l, m.as_str()),
            (
                Some(4),
                "pattern `a..b` has an empty segment (keys are dot-separated names)"
            )
        );
        let (l, _, m) = err("[[guardrails]]\nid = \"a\"\nkind = \"capability-boundary\"\nblock = [\"x\"]\n[[guardrails]]\nid = \"a\"\nkind = \"capability-boundary\"\nblock = [\"y\"]\n");
        assert_eq!((l, m.as_str()), (Some(6), "duplicate guardrail id `a`"));
        let (l, _, m) = err("[replay]\non-block = \"halt\"\n");
        assert_eq!(l, Some(2));
        assert!(m.contains("expected `keep`, `drop` or `stop-cell`"));
        let (l, _, m) =
            err("[[guardrails]]\nid = \"r\"\nkind = \"rate-limit\"\npattern = \"x\"\nmax = 2\n");
        assert_eq!(
            (l, m.as_str()),
            (
                Some(1),
                "a `rate-limit` guardrail needs `per-calls` or `per-seconds`"
            )
        );
    }

    #[test]
    fn colony_profile_defaults_to_substring() {
        let c = parse_str(
            Path::new("c.toml"),
            "[[guardrails]]\nid = \"b\"\nkind = \"capability-boundary\"\nblock = [\"plan\"]\n",
            Profile::Colony,
            None,
        )
        .unwrap();
        assert_eq!(c.guardrails.guardrails[0].mode, MatchMode::Substring);
        assert_eq!(c.settings.mode, MatchMode::Substring);
    }
}
