//! `[[policies]]` from config, validated with file:line:col errors.
//!
//! The config loader keeps `[[policies]]` as raw TOML; this module re-reads the text of the
//! file that defines it (the config itself, or the nearest file it `extend`s) with spans, so
//! every unknown key, wrong type or bad value is reported where it is written.
//!
//! ```toml
//! [[policies]]
//! kind = "tool-output-clip"     # append time
//! max-chars = 2000              # code points; default 8000
//! suffix = "\n…[output clipped]"
//!
//! [[policies]]
//! kind = "tool-eviction"        # compile time, in list order
//! keep-last-n = 3               # default 5; <= 0 evicts every result
//! stub = "[tool result evicted to save context]"
//! include-agent-results = true
//!
//! [[policies]]
//! kind = "sliding-window"
//! max-messages = 50
//!
//! [[policies]]
//! kind = "compaction"
//! max-input-tokens = 80000      # strict >
//! keep-recent = 10
//! placeholder-chars = 1000      # size of the simulated summary when none is recorded
//! # placeholder-text = "..."    # or its exact text
//! usage = "recorded"            # recorded | estimate | simulated
//!
//! [[policies]]
//! kind = "range"                # state policy
//! field = "score"               # or a list of fields; "*" for all
//! min = 0
//! max = 100
//! clamp = false
//! ```
//!
//! Every entry takes an optional `id` (default: the kind, plus `:FIELD` for state policies;
//! ids must be unique) and `description`. Message policies keep their config order, which is
//! the order of each phase's chain.

use super::clip::{ToolOutputClip, DEFAULT_MAX_CHARS, DEFAULT_SUFFIX};
use super::compaction::{
    placeholder, Compaction, UsageMode, DEFAULT_KEEP_RECENT, DEFAULT_MAX_INPUT_TOKENS,
    DEFAULT_PLACEHOLDER_CHARS,
};
use super::eviction::{ToolEviction, DEFAULT_KEEP_LAST_N, DEFAULT_STUB};
use super::state::{Check, StatePolicy};
use super::window::{SlidingWindow, DEFAULT_MAX_MESSAGES};
use super::MessagePolicy;
use crate::config::{ConfigError, LoadedConfig};
use crate::guardrails::toml_view::{boolean, get, number, string, Doc, SKind, SVal};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

/// The configured policies.
#[derive(Clone, Default)]
pub struct PolicyConfig {
    /// Message policies, in config order.
    pub messages: Vec<Arc<dyn MessagePolicy>>,
    /// State policies, in config order.
    pub state: Vec<StatePolicy>,
}

impl std::fmt::Debug for PolicyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<String> = self
            .messages
            .iter()
            .map(|p| format!("{} ({})", p.id(), p.kind()))
            .collect();
        f.debug_struct("PolicyConfig")
            .field("messages", &ids)
            .field("state", &self.state)
            .finish()
    }
}

impl PolicyConfig {
    /// True when no policy is configured.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty() && self.state.is_empty()
    }
}

/// Message policy kinds.
pub const MESSAGE_KINDS: [&str; 4] = [
    "tool-output-clip",
    "tool-eviction",
    "sliding-window",
    "compaction",
];
/// State policy kinds.
pub const STATE_KINDS: [&str; 5] = ["range", "regex", "max-length", "non-empty", "one-of"];

/// Reads `[[policies]]` of a loaded config (or of the file it extends).
///
/// Errors: every problem in `[[policies]]`, located at file:line:col; an extended file that
/// cannot be read.
pub fn from_loaded(loaded: &LoadedConfig) -> Result<PolicyConfig, ConfigError> {
    if loaded.file.policies.is_none() {
        return Ok(PolicyConfig::default());
    }
    let doc = Doc::parse(&loaded.path, loaded.text.clone())?;
    if let Some(v) = doc.root.get("policies") {
        return parse(&doc, v);
    }
    for p in &loaded.extended {
        let text = std::fs::read_to_string(p)
            .map_err(|e| ConfigError::plain(p, format!("cannot read config: {e}")))?;
        let doc = Doc::parse(p, text)?;
        if let Some(v) = doc.root.get("policies") {
            return parse(&doc, v);
        }
    }
    Ok(PolicyConfig::default())
}

/// Parses the `[[policies]]` of config text (a `cellguard.toml`, or a `pyproject.toml` when
/// `path` is named so).
///
/// Errors: TOML syntax, and as [`from_loaded`].
pub fn parse_str(path: &Path, text: &str) -> Result<PolicyConfig, ConfigError> {
    let doc = Doc::parse(path, text.to_string())?;
    match doc.root.get("policies") {
        Some(v) => parse(&doc, v),
        None => Ok(PolicyConfig::default()),
    }
}

fn int(d: &Doc, v: &SVal, what: &str) -> Result<i64, ConfigError> {
    match v.kind {
        SKind::Int(n) => Ok(n),
        _ => Err(d.error(
            &v.span,
            format!("{what} must be an integer, found {}", v.describe()),
        )),
    }
}

fn non_negative(d: &Doc, v: &SVal, what: &str, why: &str) -> Result<i64, ConfigError> {
    let n = int(d, v, what)?;
    if n < 0 {
        return Err(d.error(
            &v.span,
            format!(
                "{what} must not be negative, found {n}{}",
                why.replace("{abs}", &n.unsigned_abs().to_string())
            ),
        ));
    }
    Ok(n)
}

fn parse(d: &Doc, v: &SVal) -> Result<PolicyConfig, ConfigError> {
    let SKind::Array(items) = &v.kind else {
        return Err(d.error(
            &v.span,
            format!(
                "`policies` must be an array of tables (`[[policies]]`), found {}",
                v.describe()
            ),
        ));
    };
    let mut cfg = PolicyConfig::default();
    let mut ids = HashSet::new();
    for item in items {
        parse_one(d, item, &mut cfg, &mut ids)?;
    }
    Ok(cfg)
}

fn all_kinds() -> String {
    MESSAGE_KINDS
        .iter()
        .chain(STATE_KINDS.iter())
        .copied()
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_one(
    d: &Doc,
    v: &SVal,
    cfg: &mut PolicyConfig,
    ids: &mut HashSet<String>,
) -> Result<(), ConfigError> {
    let Some(t) = v.table() else {
        return Err(d.error(
            &v.span,
            format!("a policy entry must be a table, found {}", v.describe()),
        ));
    };
    let kind_v = get(t, "kind").ok_or_else(|| {
        d.error(
            &v.span,
            format!("a policy needs a `kind` ({})", all_kinds()),
        )
    })?;
    let kind = string(d, kind_v, "`kind`")?;
    let message = MESSAGE_KINDS.contains(&kind.as_str());
    if !message && !STATE_KINDS.contains(&kind.as_str()) {
        return Err(d.error(
            &kind_v.span,
            format!(
                "unknown policy kind `{kind}` (expected one of: {})",
                all_kinds()
            ),
        ));
    }
    let extra: &[&str] = match kind.as_str() {
        "tool-output-clip" => &["max-chars", "suffix"],
        "tool-eviction" => &["keep-last-n", "stub", "include-agent-results"],
        "sliding-window" => &["max-messages"],
        "compaction" => &[
            "max-input-tokens",
            "keep-recent",
            "placeholder-chars",
            "placeholder-text",
            "usage",
        ],
        "range" => &["field", "min", "max", "clamp"],
        "regex" => &["field", "pattern", "match"],
        "max-length" => &["field", "max", "truncate"],
        "non-empty" => &["field"],
        _ => &["field", "values"],
    };
    for (k, span, _) in t {
        if !["id", "kind", "description"].contains(&k.as_str()) && !extra.contains(&k.as_str()) {
            let mut allowed = vec!["id", "kind", "description"];
            allowed.extend_from_slice(extra);
            return Err(d.error(
                span,
                format!(
                    "unknown key `{k}` in a `{kind}` policy (expected one of: {})",
                    allowed.join(", ")
                ),
            ));
        }
    }
    let fields = if message {
        Vec::new()
    } else {
        let f = get(t, "field").ok_or_else(|| {
            d.error(
                &v.span,
                format!("a `{kind}` policy needs a `field` (a state field name, a list of them, or \"*\")"),
            )
        })?;
        let list = match &f.kind {
            SKind::Str(s) => vec![s.clone()],
            SKind::Array(a) if !a.is_empty() => a
                .iter()
                .map(|x| string(d, x, "every entry of `field`"))
                .collect::<Result<Vec<_>, _>>()?,
            SKind::Array(_) => return Err(d.error(&f.span, "`field` must not be empty")),
            _ => {
                return Err(d.error(
                    &f.span,
                    format!(
                        "`field` must be a string or a list of strings, found {}",
                        f.describe()
                    ),
                ))
            }
        };
        if let Some(bad) = list.iter().find(|s| s.trim().is_empty()) {
            return Err(d.error(
                &f.span,
                format!("`field` entries must not be empty ({bad:?})"),
            ));
        }
        list
    };
    let id = match get(t, "id") {
        Some(i) => {
            let s = string(d, i, "`id`")?;
            if s.trim().is_empty() {
                return Err(d.error(&i.span, "`id` must not be empty"));
            }
            if !ids.insert(s.clone()) {
                return Err(d.error(&i.span, format!("duplicate policy id `{s}`")));
            }
            s
        }
        None => {
            let s = if message {
                kind.clone()
            } else {
                format!("{kind}:{}", fields.join(","))
            };
            if !ids.insert(s.clone()) {
                return Err(d.error(
                    &kind_v.span,
                    format!("duplicate policy id `{s}` (the default id of this `{kind}` policy); give it an `id`"),
                ));
            }
            s
        }
    };
    if let Some(desc) = get(t, "description") {
        string(d, desc, "`description`")?;
    }
    match kind.as_str() {
        "tool-output-clip" => {
            let mut p = ToolOutputClip {
                id,
                max_chars: DEFAULT_MAX_CHARS,
                suffix: DEFAULT_SUFFIX.into(),
            };
            if let Some(x) = get(t, "max-chars") {
                p.max_chars = non_negative(
                    d,
                    x,
                    "`max-chars`",
                    " (pyAgentic would slice from the end and keep all but the last {abs} code points)",
                )?;
            }
            if let Some(x) = get(t, "suffix") {
                p.suffix = string(d, x, "`suffix`")?;
            }
            cfg.messages.push(Arc::new(p));
        }
        "tool-eviction" => {
            let mut p = ToolEviction {
                id,
                keep_last_n: DEFAULT_KEEP_LAST_N,
                stub: DEFAULT_STUB.into(),
                include_agent_results: true,
            };
            if let Some(x) = get(t, "keep-last-n") {
                p.keep_last_n = int(d, x, "`keep-last-n`")?;
            }
            if let Some(x) = get(t, "stub") {
                p.stub = string(d, x, "`stub`")?;
            }
            if let Some(x) = get(t, "include-agent-results") {
                p.include_agent_results = boolean(d, x, "`include-agent-results`")?;
            }
            cfg.messages.push(Arc::new(p));
        }
        "sliding-window" => {
            let mut p = SlidingWindow {
                id,
                max_messages: DEFAULT_MAX_MESSAGES,
            };
            if let Some(x) = get(t, "max-messages") {
                p.max_messages = int(d, x, "`max-messages`")?;
            }
            cfg.messages.push(Arc::new(p));
        }
        "compaction" => {
            let mut p = Compaction {
                id,
                max_input_tokens: DEFAULT_MAX_INPUT_TOKENS,
                keep_recent: DEFAULT_KEEP_RECENT,
                placeholder: Arc::from(""),
                usage: UsageMode::Recorded,
            };
            if let Some(x) = get(t, "max-input-tokens") {
                p.max_input_tokens = non_negative(d, x, "`max-input-tokens`", "")?;
            }
            if let Some(x) = get(t, "keep-recent") {
                p.keep_recent = int(d, x, "`keep-recent`")?;
            }
            let chars = match get(t, "placeholder-chars") {
                Some(x) => {
                    let n = non_negative(d, x, "`placeholder-chars`", "")?;
                    if n > 10_000_000 {
                        return Err(
                            d.error(&x.span, "`placeholder-chars` must be at most 10000000")
                        );
                    }
                    Some(n as usize)
                }
                None => None,
            };
            p.placeholder = match get(t, "placeholder-text") {
                Some(x) => {
                    if let Some(c) = get(t, "placeholder-chars") {
                        return Err(d.error(
                            &c.span,
                            "give either `placeholder-chars` or `placeholder-text`, not both",
                        ));
                    }
                    string(d, x, "`placeholder-text`")?.into()
                }
                None => placeholder(chars.unwrap_or(DEFAULT_PLACEHOLDER_CHARS)).into(),
            };
            if let Some(x) = get(t, "usage") {
                let s = string(d, x, "`usage`")?;
                p.usage = UsageMode::parse(&s).ok_or_else(|| {
                    d.error(
                        &x.span,
                        format!("unknown `usage` value `{s}` (expected `recorded`, `estimate` or `simulated`)"),
                    )
                })?;
            }
            cfg.messages.push(Arc::new(p));
        }
        "range" => {
            let min = get(t, "min").map(|x| number(d, x, "`min`")).transpose()?;
            let max = get(t, "max").map(|x| number(d, x, "`max`")).transpose()?;
            if min.is_none() && max.is_none() {
                return Err(d.error(&v.span, "a `range` policy needs `min`, `max` or both"));
            }
            if let (Some(lo), Some(hi)) = (min, max) {
                if lo > hi {
                    let span = get(t, "min").map_or(v.span.clone(), |x| x.span.clone());
                    return Err(
                        d.error(&span, format!("`min` ({lo}) is greater than `max` ({hi})"))
                    );
                }
            }
            let clamp = match get(t, "clamp") {
                Some(x) => boolean(d, x, "`clamp`")?,
                None => false,
            };
            cfg.state.push(StatePolicy {
                id,
                fields,
                check: Check::Range { min, max, clamp },
            });
        }
        "regex" => {
            let x = get(t, "pattern")
                .ok_or_else(|| d.error(&v.span, "a `regex` policy needs a `pattern`"))?;
            let pattern = string(d, x, "`pattern`")?;
            let re = crate::pyregex::PyRegex::new(&pattern)
                .map_err(|e| d.error(&x.span, format!("invalid Python regex in `pattern`: {e}")))?;
            let mode = match get(t, "match") {
                None => crate::pyregex::MatchMode::Search,
                Some(m) => {
                    let s = string(d, m, "`match`")?;
                    crate::pyregex::MatchMode::parse(&s).ok_or_else(|| {
                        d.error(
                            &m.span,
                            format!(
                                "unknown `match` `{s}` (expected one of: search, match, fullmatch)"
                            ),
                        )
                    })?
                }
            };
            cfg.state.push(StatePolicy {
                id,
                fields,
                check: Check::Regex(re, mode),
            });
        }
        "max-length" => {
            let x = get(t, "max")
                .ok_or_else(|| d.error(&v.span, "a `max-length` policy needs `max`"))?;
            let max = non_negative(d, x, "`max`", "")? as u64;
            let truncate = match get(t, "truncate") {
                Some(x) => boolean(d, x, "`truncate`")?,
                None => false,
            };
            cfg.state.push(StatePolicy {
                id,
                fields,
                check: Check::MaxLength { max, truncate },
            });
        }
        "non-empty" => cfg.state.push(StatePolicy {
            id,
            fields,
            check: Check::NonEmpty,
        }),
        _ => {
            let x = get(t, "values")
                .ok_or_else(|| d.error(&v.span, "a `one-of` policy needs `values`"))?;
            let values = match &x.kind {
                SKind::Array(a) if !a.is_empty() => a.iter().map(SVal::to_json).collect(),
                SKind::Array(_) => return Err(d.error(&x.span, "`values` must not be empty")),
                _ => {
                    return Err(d.error(
                        &x.span,
                        format!("`values` must be a list, found {}", x.describe()),
                    ))
                }
            };
            cfg.state.push(StatePolicy {
                id,
                fields,
                check: Check::OneOf(values),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_str(Path::new("c.toml"), text)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn errors_are_located() {
        assert_eq!(
            err("[[policies]]\nkind = \"clip\"\n"),
            "c.toml:2:8: unknown policy kind `clip` (expected one of: tool-output-clip, tool-eviction, sliding-window, compaction, range, regex, max-length, non-empty, one-of)"
        );
        assert_eq!(
            err("[[policies]]\nkind = \"tool-output-clip\"\nmax-chars = -3\n"),
            "c.toml:3:13: `max-chars` must not be negative, found -3 (pyAgentic would slice from the end and keep all but the last 3 code points)"
        );
        assert_eq!(
            err("[[policies]]\nkind = \"sliding-window\"\nmax_messages = 3\n"),
            "c.toml:3:1: unknown key `max_messages` in a `sliding-window` policy (expected one of: id, kind, description, max-messages)"
        );
        assert_eq!(
            err("[[policies]]\nkind = \"regex\"\nfield = \"f\"\npattern = \"(\"\n"),
            "c.toml:4:11: invalid Python regex in `pattern`: missing ), unterminated subpattern at position 0"
        );
        assert_eq!(
            err("[[policies]]\nkind = \"compaction\"\n[[policies]]\nkind = \"compaction\"\n"),
            "c.toml:4:8: duplicate policy id `compaction` (the default id of this `compaction` policy); give it an `id`"
        );
        assert_eq!(
            err("[[policies]]\nkind = \"range\"\nfield = \"x\"\nmin = 5\nmax = 1\n"),
            "c.toml:4:7: `min` (5) is greater than `max` (1)"
        );
        assert_eq!(
            err("[[policies]]\nkind = \"non-empty\"\n"),
            "c.toml:1:1: a `non-empty` policy needs a `field` (a state field name, a list of them, or \"*\")"
        );
        assert_eq!(
            err("policies = 3\n"),
            "c.toml:1:12: `policies` must be an array of tables (`[[policies]]`), found an integer"
        );
    }

    #[test]
    fn pyproject_errors_are_located_in_the_file() {
        let text = "[project]\nname = \"x\"\n\n[tool.cellguard]\nprofile = \"strict\"\n\n[[tool.cellguard.policies]]\nkind = \"tool-eviction\"\nstub = 3\n";
        let e = parse_str(Path::new("pyproject.toml"), text).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pyproject.toml:9:8: `stub` must be a string, found an integer"
        );
        let ok = parse_str(
            Path::new("pyproject.toml"),
            &text.replace("stub = 3", "stub = \"-\""),
        )
        .unwrap();
        assert_eq!(ok.messages[0].id(), "tool-eviction");
    }

    #[test]
    fn defaults_are_pyagentic_defaults() {
        let cfg = parse_str(
            Path::new("c.toml"),
            "[[policies]]\nkind = \"tool-output-clip\"\n[[policies]]\nkind = \"tool-eviction\"\n[[policies]]\nkind = \"sliding-window\"\n[[policies]]\nkind = \"compaction\"\n[[policies]]\nkind = \"non-empty\"\nfield = [\"a\", \"b\"]\n",
        )
        .unwrap();
        let kinds: Vec<(&str, &str)> = cfg.messages.iter().map(|p| (p.id(), p.kind())).collect();
        assert_eq!(
            kinds,
            vec![
                ("tool-output-clip", "tool-output-clip"),
                ("tool-eviction", "tool-eviction"),
                ("sliding-window", "sliding-window"),
                ("compaction", "compaction")
            ]
        );
        assert_eq!(cfg.state[0].id, "non-empty:a,b");
        assert_eq!(cfg.state[0].fields, vec!["a", "b"]);
    }
}
