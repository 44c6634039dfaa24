//! Action-key patterns in the two matching modes (spec §8).
//!
//! **`substring`** reproduces Colony exactly (colony-reference §4.2–4.5): a pattern matches when
//! it is a case-insensitive substring of the key (`p.lower() in key.lower()`), anywhere in it.
//! The proposed call is matched on its raw key as written; history records on their resolved
//! key. So `plan` also matches `explain_plan`, and a short key such as `create_decomposition`
//! slips past `DesignProcessCapability.create_decomposition`.
//!
//! **`key`** (the default) matches segment-aware globs on the canonical key (the key resolved
//! through the knowledge base, else the recorded resolved key, else the raw key). Segments are
//! separated by `.`:
//!
//! - `**` matches zero or more whole segments; a segment that is exactly `*` at the start of a
//!   pattern is `**`;
//! - inside a segment, `*` matches any run of characters and `?` one character, never a `.`;
//! - a one-segment pattern `m` means `**.m` (any key whose last segment matches `m`, including a
//!   bare tool name `m`);
//! - a two-segment pattern `C.m` means `C.**.m` (class `C`, any dispatch key, method `m`), so
//!   Colony's class-qualified prefixes such as `DesignProcessCapability.create_decomposition`
//!   also cover custom middle segments (`DesignProcessCapability.design_process.create_decomposition`);
//! - patterns of three or more segments match segment for segment;
//! - matching is case-sensitive and anchored at both ends (`create_decomposition` does not match
//!   `create_decomposition_preview`).
//!
//! A canonical key that could not be resolved (no knowledge-base resolution and no recorded
//! resolved key) is *unresolved* (`partial`): it matches a pattern when some key Colony's
//! dispatcher could resolve it to would (colony-reference §2.3):
//!
//! - the key itself (step 1, exact match);
//! - when it has fewer than three segments, any key ending in those segments (step 2, suffix
//!   match: `create_decomposition`, `design_process.create_decomposition`);
//! - any key left after dropping leading segments (step 3, prefix strip:
//!   `functions.DesignProcessCapability.DesignProcessCapability.create_decomposition`). A
//!   stripped key must match the pattern exactly, as Colony's step 3 accepts only exact matches,
//!   so `Other.other.create_decomposition` is not taken for `DesignProcessCapability`'s action.
//!
//! So an unresolvable short or over-long key cannot slip past a gate (colony-reference §4.5).
//!
//! That "some reachable key matches" reading is right where a match *restricts* (a block list,
//! an approval gate, a rate-limit count, the target of an ordering rule). Where a match
//! *grants* (a capability-boundary allow list, an approval record covering the key, a prior
//! call that satisfies an ordering rule or a constraint's evidence), an unresolved key counts
//! only when **every** key it would be dispatched to matches ([`Pattern::matches_every`],
//! [`every_reachable`], which names those keys); otherwise
//! `DesignProcessCapability.ProjectAuthoringCapability.ProjectAuthoringCapability.delete_file`
//! would pass `allow = ["DesignProcessCapability.**"]` although the dispatcher sends it to
//! `ProjectAuthoringCapability.ProjectAuthoringCapability.delete_file` (issue 6 R3), and a short
//! key `delete_file` would pass `allow = ["DesignProcessCapability.**"]` because *some* key
//! ending in it is allowed.
//!
//! In both modes `|` separates alternatives within one pattern.

use std::fmt;

/// Matching mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchMode {
    /// Segment-aware glob on the canonical key (default).
    #[default]
    Key,
    /// Colony's case-insensitive substring on the key as written.
    Substring,
}

impl MatchMode {
    /// Every mode, in the order `--match` lists them.
    pub const ALL: [MatchMode; 2] = [MatchMode::Key, MatchMode::Substring];

    /// Parses `key` or `substring`.
    pub fn parse(s: &str) -> Option<MatchMode> {
        match s {
            "key" => Some(MatchMode::Key),
            "substring" => Some(MatchMode::Substring),
            _ => None,
        }
    }

    /// `key` or `substring`.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchMode::Key => "key",
            MatchMode::Substring => "substring",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Lit(String),
    Star,
    Any1,
}

#[derive(Debug, Clone, PartialEq)]
enum Seg {
    /// `**`: zero or more segments.
    Many,
    /// One segment, possibly with `*`/`?`.
    One(Vec<Tok>),
}

#[derive(Debug, Clone, PartialEq)]
enum Alt {
    /// Lower-cased needle.
    Sub(String),
    Glob(Vec<Seg>),
}

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    /// The pattern as written.
    pub text: String,
    /// Its mode.
    pub mode: MatchMode,
    alts: Vec<Alt>,
    /// Key mode: literals compare case-insensitively (the literals are stored lower-cased and
    /// keys are lower-cased before matching). Only for recorded action keys
    /// ([`Pattern::literal_key`]); config patterns are case-sensitive.
    fold: bool,
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn segment(s: &str) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut lit = String::new();
    for c in s.chars() {
        match c {
            '*' | '?' => {
                if !lit.is_empty() {
                    toks.push(Tok::Lit(std::mem::take(&mut lit)));
                }
                if c == '*' {
                    if toks.last() != Some(&Tok::Star) {
                        toks.push(Tok::Star);
                    }
                } else {
                    toks.push(Tok::Any1);
                }
            }
            c => lit.push(c),
        }
    }
    if !lit.is_empty() {
        toks.push(Tok::Lit(lit));
    }
    toks
}

impl Pattern {
    /// Compiles `text` in `mode`.
    ///
    /// Whitespace: a `substring` alternative is matched exactly as written, spaces included, as
    /// Colony's `p.lower() in key.lower()` does (issue 6 T5-21); a `key` alternative is trimmed
    /// of surrounding whitespace (no key segment holds whitespace, so `a | b` means `a|b`).
    ///
    /// Errors: an empty pattern or alternative; (key mode) an alternative of only whitespace or
    /// an empty segment (`a..b`, a leading or trailing `.`).
    pub fn compile(text: &str, mode: MatchMode) -> Result<Pattern, String> {
        if text.is_empty() {
            return Err("empty pattern".into());
        }
        let mut alts = Vec::new();
        for alt in text.split('|') {
            if alt.is_empty() {
                return Err(format!("pattern `{text}` has an empty alternative"));
            }
            let alt = match mode {
                MatchMode::Substring => alt,
                MatchMode::Key => alt.trim(),
            };
            if alt.is_empty() {
                return Err(format!(
                    "pattern `{text}` has an alternative of only whitespace (`key` mode trims \
                     whitespace around each alternative, and no key is empty)"
                ));
            }
            match mode {
                MatchMode::Substring => alts.push(Alt::Sub(alt.to_lowercase())),
                MatchMode::Key => {
                    let raw: Vec<&str> = alt.split('.').collect();
                    if raw.iter().any(|s| s.is_empty()) {
                        return Err(format!(
                            "pattern `{alt}` has an empty segment (keys are dot-separated names)"
                        ));
                    }
                    let mut segs: Vec<Seg> = raw
                        .iter()
                        .map(|s| {
                            if *s == "**" {
                                Seg::Many
                            } else {
                                Seg::One(segment(s))
                            }
                        })
                        .collect();
                    if raw[0] == "*" {
                        segs[0] = Seg::Many;
                    }
                    let has_many = segs.contains(&Seg::Many);
                    if segs.len() == 1 && !has_many {
                        segs.insert(0, Seg::Many);
                    } else if segs.len() == 2 && !has_many {
                        segs.insert(1, Seg::Many);
                    }
                    alts.push(Alt::Glob(segs));
                }
            }
        }
        Ok(Pattern {
            text: text.to_string(),
            mode,
            alts,
            fold: false,
        })
    }

    /// Compiles a recorded **action key** (data from a trace, e.g. an approval record's
    /// `action_type`) as a key-mode pattern in which every character is literal: no `|`
    /// alternatives, no `*`/`?`/`**` wildcards. It matches by the same key semantics as a
    /// config pattern of the same shape: the exact key (three or more segments, segment for
    /// segment), `C.m` for `C.**.m`, `m` for `**.m` (the documented short-key resolution), so
    /// an approval for `*`, `**`, `X.*` or `a|b` covers only a key holding those characters
    /// (issue 6 T8: an agent-chosen value must never act as a wildcard). Letter case is
    /// ignored, as Colony compares an approval's `action_type` with the key case-insensitively
    /// (colony-reference §4.5 step 3; issue 6 T4-15).
    ///
    /// Errors: an empty key or an empty segment (`a..b`, a leading or trailing `.`).
    pub fn literal_key(text: &str) -> Result<Pattern, String> {
        let raw: Vec<&str> = text.split('.').collect();
        if text.is_empty() || raw.iter().any(|s| s.is_empty()) {
            return Err(format!("action key `{text}` has an empty segment"));
        }
        let mut segs: Vec<Seg> = raw
            .iter()
            .map(|s| Seg::One(vec![Tok::Lit(s.to_lowercase())]))
            .collect();
        if segs.len() == 1 {
            segs.insert(0, Seg::Many);
        } else if segs.len() == 2 {
            segs.insert(1, Seg::Many);
        }
        Ok(Pattern {
            text: text.to_string(),
            mode: MatchMode::Key,
            alts: vec![Alt::Glob(segs)],
            fold: true,
        })
    }

    /// Substring mode: true when an alternative is a substring of `lower_key` (already
    /// lower-cased). Key mode: true when an alternative matches `key` (with `partial` as
    /// described in the module docs).
    pub fn matches(&self, key: &str, lower_key: &str, partial: bool) -> bool {
        self.matching_alt(key, lower_key, partial).is_some()
    }

    /// The index of the first matching alternative.
    pub fn matching_alt(&self, key: &str, lower_key: &str, partial: bool) -> Option<usize> {
        let folded;
        let key = if self.fold {
            folded = key.to_lowercase();
            folded.as_str()
        } else {
            key
        };
        let segs: Vec<&str> = if self.mode == MatchMode::Key {
            key.split('.').collect()
        } else {
            Vec::new()
        };
        self.alts.iter().position(|a| match a {
            Alt::Sub(n) => lower_key.contains(n.as_str()),
            Alt::Glob(p) => {
                glob(p, &segs)
                    || (partial
                        && ((segs.len() < 3 && (1..=p.len()).any(|j| glob(&p[j..], &segs)))
                            || (1..segs.len()).any(|i| glob(p, &segs[i..]))))
            }
        })
    }

    /// Calls `f` with `segs`, lower-cased when this pattern ignores case.
    fn with_folded<R>(&self, segs: &[&str], f: impl FnOnce(&[&str]) -> R) -> R {
        if self.fold {
            let lower: Vec<String> = segs.iter().map(|s| s.to_lowercase()).collect();
            let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
            f(&lower)
        } else {
            f(segs)
        }
    }

    /// Key mode: true when an alternative matches the segments `segs` exactly.
    fn glob_segs(&self, segs: &[&str]) -> bool {
        self.with_folded(segs, |segs| {
            self.alts.iter().any(|a| match a {
                Alt::Glob(p) => glob(p, segs),
                Alt::Sub(_) => false,
            })
        })
    }

    /// Key mode: true when some key `W.K` (`W` one or more segments, `K` = `segs`) matches, as
    /// the suffix match of a short key may reach (step 2, "some" reading).
    fn some_suffixed(&self, segs: &[&str]) -> bool {
        self.with_folded(segs, |segs| {
            self.alts.iter().any(|a| match a {
                Alt::Glob(p) => (1..=p.len()).any(|j| glob(&p[j..], segs)),
                Alt::Sub(_) => false,
            })
        })
    }

    /// Key mode: true when *every* key `W.K` (`W` one or more arbitrary segments, `K` =
    /// `segs`) matches one alternative: the alternative starts with wildcard segments (`**`,
    /// `*`) that absorb `W` and possibly a head of `K`, and the rest matches the remainder of
    /// `K` exactly. A sufficient test (an exotic glob that covers every such key in another
    /// way is not recognised), so it errs towards "not covered".
    fn every_suffixed(&self, segs: &[&str]) -> bool {
        self.with_folded(segs, |segs| self.every_suffixed_exact(segs))
    }

    /// [`Pattern::every_suffixed`] without case folding.
    fn every_suffixed_exact(&self, segs: &[&str]) -> bool {
        self.alts.iter().any(|a| {
            let Alt::Glob(p) = a else { return false };
            let mut stars = 0;
            let mut many = false;
            for (u, seg) in p.iter().enumerate() {
                match seg {
                    Seg::Many => many = true,
                    Seg::One(t) if t.as_slice() == [Tok::Star] => stars += 1,
                    _ => break,
                }
                // `p[..=u]` matches any run of at least `stars` segments when it holds a `**`:
                // `W` plus the first `i` segments of `K`.
                if many && (0..=segs.len()).any(|i| stars <= i + 1 && glob(&p[u + 1..], &segs[i..]))
                {
                    return true;
                }
            }
            false
        })
    }

    /// Key mode: true when every key ending in `segs` (`W.K`, `W` one or more segments) that
    /// `gate` matches is matched by this pattern too: this pattern covers every such key, or
    /// each alternative of `gate` that reaches some such key is also an alternative of this
    /// pattern (an approval whose action type repeats the gate's pattern). Sufficient, not
    /// necessary (errs towards "not covered").
    pub fn covers_suffixed_within(&self, gate: &Pattern, segs: &[&str]) -> bool {
        self.every_suffixed(segs)
            || gate.alts.iter().all(|a| match a {
                Alt::Glob(p) => {
                    !(1..=p.len()).any(|j| glob(&p[j..], segs))
                        || if self.fold {
                            self.alts.contains(&lower_alt(a))
                        } else {
                            self.alts.contains(a)
                        }
                }
                Alt::Sub(_) => true,
            })
    }

    /// Key mode, for an unresolved key where a match *grants* (see the module docs): true when
    /// every key the dispatcher could resolve `key` to matches this pattern.
    pub fn matches_every(&self, key: &str) -> bool {
        every_reachable(
            key,
            |_, _| true,
            |segs, suffixed| {
                if suffixed {
                    self.every_suffixed(segs)
                } else {
                    self.glob_segs(segs)
                }
            },
        )
    }

    /// Key mode: [`Pattern::matches`] of a reachable key (`suffixed`: any key ending in
    /// `segs`, "some" reading), for [`every_reachable`]'s `within`.
    pub fn reaches(&self, segs: &[&str], suffixed: bool) -> bool {
        if suffixed {
            self.some_suffixed(segs)
        } else {
            self.glob_segs(segs)
        }
    }

    /// Key mode: [`Pattern::matches_every`] of a reachable key (`suffixed`: every key ending in
    /// `segs`), for [`every_reachable`]'s `cover`.
    pub fn covers(&self, segs: &[&str], suffixed: bool) -> bool {
        if suffixed {
            self.every_suffixed(segs)
        } else {
            self.glob_segs(segs)
        }
    }

    /// Convenience: matches `key`, lower-casing it when needed, not partial.
    pub fn is_match(&self, key: &str) -> bool {
        match self.mode {
            MatchMode::Substring => self.matches(key, &key.to_lowercase(), false),
            MatchMode::Key => self.matches(key, "", false),
        }
    }
}

/// Grant-polarity matching of an unresolved key (issue 6 R3): true when every key Colony's
/// dispatcher would resolve `key` to (see below), *among those `within` accepts*, is accepted
/// by `cover`. Both closures get a reachable key as segments and `suffixed`: `false` for that
/// exact key, `true` for "any key ending in these segments" (`within` then answers whether
/// *some* such key is concerned, `cover` whether *every* such key is covered).
///
/// The keys, by the dispatcher's steps (colony-reference §2.3) and the shape of its registry
/// (compound keys `Class.dispatch.action` have three segments; standalone functions one):
/// - three or more segments: the last three (the key itself when it has three; a longer key
///   can only be registered through its prefix strip, which stops at the first registered
///   candidate, the compound key it ends with);
/// - two segments: any key ending in them (suffix match) and the last segment (prefix strip
///   to a standalone function);
/// - one segment: the key itself (a standalone function) and any key ending in it.
///
/// Assumed: a three-segment key names a registered action (the prompt shows agents these
/// keys). Colony would send an *unregistered* three-segment key on to a standalone function
/// named like its last segment; that route is not modelled here (the "some" reading of gates
/// and block lists does include it).
///
/// An allow list is `every_reachable(key, |_, _| true, |k, s| allow.any(covers k))`; an
/// approval for a gated key is `every_reachable(key, gated, approved)`: the approval must cover
/// every reachable key the gate applies to.
pub fn every_reachable(
    key: &str,
    within: impl Fn(&[&str], bool) -> bool,
    cover: impl Fn(&[&str], bool) -> bool,
) -> bool {
    first_uncovered(key, within, cover).is_none()
}

/// The first reachable key of [`every_reachable`] that `within` accepts and `cover` does not,
/// as text (`**.K` for "some key ending in `K`"); `None` when every one is covered.
pub fn first_uncovered(
    key: &str,
    within: impl Fn(&[&str], bool) -> bool,
    cover: impl Fn(&[&str], bool) -> bool,
) -> Option<String> {
    let segs: Vec<&str> = key.split('.').collect();
    let n = segs.len();
    let exact = &segs[n.saturating_sub(if n >= 3 { 3 } else { 1 })..];
    if within(exact, false) && !cover(exact, false) {
        return Some(exact.join("."));
    }
    (n < 3 && within(&segs, true) && !cover(&segs, true)).then(|| format!("**.{key}"))
}

/// `a` with its literals lower-cased (to compare a config alternative with a case-folded one).
fn lower_alt(a: &Alt) -> Alt {
    match a {
        Alt::Sub(n) => Alt::Sub(n.clone()),
        Alt::Glob(segs) => Alt::Glob(
            segs.iter()
                .map(|s| match s {
                    Seg::Many => Seg::Many,
                    Seg::One(toks) => Seg::One(
                        toks.iter()
                            .map(|t| match t {
                                Tok::Lit(l) => Tok::Lit(l.to_lowercase()),
                                t => t.clone(),
                            })
                            .collect(),
                    ),
                })
                .collect(),
        ),
    }
}

fn glob(p: &[Seg], k: &[&str]) -> bool {
    match p.split_first() {
        None => k.is_empty(),
        Some((Seg::Many, rest)) => (0..=k.len()).any(|i| glob(rest, &k[i..])),
        Some((Seg::One(toks), rest)) => match k.split_first() {
            Some((first, krest)) => seg_match(toks, first) && glob(rest, krest),
            None => false,
        },
    }
}

fn seg_match(toks: &[Tok], s: &str) -> bool {
    match toks.split_first() {
        None => s.is_empty(),
        Some((Tok::Lit(l), rest)) => s
            .strip_prefix(l.as_str())
            .is_some_and(|r| seg_match(rest, r)),
        Some((Tok::Any1, rest)) => {
            let mut chars = s.chars();
            chars.next().is_some() && seg_match(rest, chars.as_str())
        }
        Some((Tok::Star, rest)) => {
            if rest.is_empty() {
                return true;
            }
            let mut i = 0;
            loop {
                if seg_match(rest, &s[i..]) {
                    return true;
                }
                match s[i..].chars().next() {
                    Some(c) => i += c.len_utf8(),
                    None => return false,
                }
            }
        }
    }
}

/// Python 3's `str.isprintable()` for one character: false for the Unicode general categories
/// "Other" (Cc, Cf, Cs, Co, Cn: controls, format characters, surrogates, private use,
/// unassigned) and "Separator" (Zs, Zl, Zp) except the ASCII space. The categories come from
/// the `regex` crate's Unicode tables (Python's own `unicodedata` may be a Unicode version
/// older or newer, which only matters for characters assigned in between).
pub fn py_is_printable(c: char) -> bool {
    static NOT_PRINTABLE: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"^[\p{C}\p{Z}]$").ok());
    if c.is_ascii() {
        return c == ' ' || c.is_ascii_graphic();
    }
    let mut buf = [0u8; 4];
    !NOT_PRINTABLE
        .as_ref()
        .is_some_and(|re| re.is_match(c.encode_utf8(&mut buf)))
}

/// Python's `repr()` of a string (single quotes unless the string contains a single quote and
/// no double quote), as Colony's messages interpolate lists with `{list}`: `\\`, `\n`, `\r`,
/// `\t` and the quote escaped, every other character that is not printable
/// ([`py_is_printable`]) written `\xhh`, `\uhhhh` or `\Uhhhhhhhh` (issue 6 T4-1), the rest as is.
pub fn py_repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if py_is_printable(c) => out.push(c),
            c => {
                let cp = c as u32;
                out.push_str(&if cp < 0x100 {
                    format!("\\x{cp:02x}")
                } else if cp < 0x10000 {
                    format!("\\u{cp:04x}")
                } else {
                    format!("\\U{cp:08x}")
                })
            }
        }
    }
    out.push(quote);
    out
}

/// Python's `repr()` of a list of strings: `['a', 'b']`.
pub fn py_repr_list(items: &[String]) -> String {
    let parts: Vec<String> = items.iter().map(|s| py_repr_str(s)).collect();
    format!("[{}]", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(p: &str, k: &str) -> bool {
        Pattern::compile(p, MatchMode::Key)
            .unwrap()
            .matches(k, "", false)
    }

    /// Issue 6 T5-21: `substring` matches a pattern as written (Colony does not strip it);
    /// `key` trims each alternative; a whitespace-only alternative is named as such.
    #[test]
    fn whitespace_is_kept_in_substring_mode_and_trimmed_in_key_mode() {
        let sub = |p: &str, k: &str| {
            Pattern::compile(p, MatchMode::Substring)
                .unwrap()
                .matches(k, &k.to_lowercase(), false)
        };
        assert!(!sub(" ok", "S.S.ok"));
        assert!(!sub("bad\t", "S.S.bad"));
        assert!(!sub(" ", "S.S.bad"));
        assert!(sub(" OK", "say ok"));
        assert!(sub("x| bad", "S.S.x"));
        assert!(key(" ok | bad", "S.S.bad"));
        let e = Pattern::compile("\u{a0}", MatchMode::Key).unwrap_err();
        assert!(e.contains("only whitespace"), "{e}");
        assert_eq!(
            Pattern::compile("", MatchMode::Substring).unwrap_err(),
            "empty pattern"
        );
        assert!(Pattern::compile("a||b", MatchMode::Substring)
            .unwrap_err()
            .contains("empty alternative"));
    }

    fn partial(p: &str, k: &str) -> bool {
        Pattern::compile(p, MatchMode::Key)
            .unwrap()
            .matches(k, "", true)
    }

    #[test]
    fn spec_examples_in_key_mode() {
        let pool = "AgentPoolCapability.AgentPoolCapability.get_agent_status";
        assert!(key("AgentPoolCapability.*", pool));
        assert!(!key(
            "AgentPoolCapability.*",
            "SessionOrchestratorCapability.S.respond_to_user"
        ));
        assert!(key("*.delete_*", "X.X.delete_everything"));
        assert!(key("*.delete_*", "delete_everything"));
        assert!(!key("*.delete_*", "X.X.undelete_everything"));
        assert!(key("*.check_plan_conflicts", "P.P.check_plan_conflicts"));
        let gate = "DesignProcessCapability.*.create_decomposition";
        assert!(key(
            gate,
            "DesignProcessCapability.DesignProcessCapability.create_decomposition"
        ));
        assert!(key(
            gate,
            "DesignProcessCapability.design_process.create_decomposition"
        ));
        assert!(!key(
            gate,
            "DesignProcessCapability.design_process.create_decomposition_preview"
        ));
        assert!(!key(gate, "Other.design_process.create_decomposition"));
    }

    #[test]
    fn short_forms_and_alternatives() {
        // Colony's class-qualified prefix form covers custom middle segments.
        let p = "DesignProcessCapability.create_decomposition";
        assert!(key(
            p,
            "DesignProcessCapability.design_process.create_decomposition"
        ));
        assert!(key(
            "book_reservation|cancel_reservation",
            "cancel_reservation"
        ));
        assert!(key("update_reservation_*", "update_reservation_flights"));
        assert!(!key("update_reservation_*", "get_reservation_details"));
        assert!(key("**", "anything.at.all"));
        assert!(key("a.b?.c", "a.bx.c"));
        assert!(!key("a.b?.c", "a.b.c"));
    }

    #[test]
    fn partial_keys_cannot_slip_past() {
        let gate = "DesignProcessCapability.*.create_decomposition";
        assert!(partial(gate, "create_decomposition"));
        assert!(partial(gate, "design_process.create_decomposition"));
        assert!(!partial(gate, "create_decomposition_preview"));
        assert!(!partial("A.B.c", "d"));
        // Prefix strip (colony-reference §2.3 step 3): extra leading segments (issue 6 R3).
        assert!(partial(
            gate,
            "functions.DesignProcessCapability.DesignProcessCapability.create_decomposition"
        ));
        assert!(partial(
            "DesignProcessCapability.create_decomposition",
            "x.y.DesignProcessCapability.DesignProcessCapability.create_decomposition"
        ));
        assert!(partial("book_reservation", "functions.book_reservation"));
        // A stripped key must match exactly: a different full key is not gated.
        assert!(!partial(gate, "Other.other.create_decomposition"));
        assert!(!partial(gate, "x.Other.other.create_decomposition"));
        // A resolved key is matched as it is.
        assert!(!key(
            gate,
            "functions.DesignProcessCapability.DesignProcessCapability.create_decomposition"
        ));
    }

    #[test]
    fn grants_need_every_reachable_key() {
        let every = |p: &str, k: &str| {
            Pattern::compile(p, MatchMode::Key)
                .unwrap()
                .matches_every(k)
        };
        let allow = "DesignProcessCapability.**";
        // Extra leading segments: the dispatcher strips them (issue 6 R3 re-test).
        let slip = "DesignProcessCapability.ProjectAuthoringCapability.ProjectAuthoringCapability.delete_file";
        assert!(partial(allow, slip), "some reachable key matches");
        assert!(!every(allow, slip), "but not every one");
        assert!(every(
            allow,
            "DesignProcessCapability.DesignProcessCapability.create_decomposition"
        ));
        assert!(every(
            allow,
            "functions.DesignProcessCapability.DesignProcessCapability.x"
        ));
        // Short keys reach any key ending in them (suffix match) and a standalone function.
        assert!(!every(allow, "delete_file"));
        assert!(!every(allow, "DesignProcessCapability.delete_file"));
        assert!(every("get_*", "get_agent_status"));
        assert!(every("get_*", "functions.get_agent_status"));
        assert!(every("*.get_agent_status", "get_agent_status"));
        assert!(every("**", "a"));
        assert!(!every("A.b.get_agent_status", "get_agent_status"));
        assert!(
            !every("*.*.get_agent_status", "get_agent_status"),
            "needs two segments before"
        );
        // A union of patterns covers what no single one does.
        let a = Pattern::compile("A.**", MatchMode::Key).unwrap();
        let m = Pattern::compile("m", MatchMode::Key).unwrap();
        let union =
            |k: &str| every_reachable(k, |_, _| true, |s, x| a.covers(s, x) || m.covers(s, x));
        assert!(union("A.m"));
        assert!(!every("A.**", "A.m"));
        assert!(!union("A.n"));
        assert_eq!(
            first_uncovered(slip, |_, _| true, |s, x| a.covers(s, x)).as_deref(),
            Some("ProjectAuthoringCapability.ProjectAuthoringCapability.delete_file")
        );
        // An approval repeating the gate's pattern covers every gated key ending in a short key.
        let gate = Pattern::compile(
            "DesignProcessCapability.create_decomposition",
            MatchMode::Key,
        )
        .unwrap();
        assert!(gate.covers_suffixed_within(&gate, &["create_decomposition"]));
        let wide = Pattern::compile("create_decomposition", MatchMode::Key).unwrap();
        assert!(!gate.covers_suffixed_within(&wide, &["create_decomposition"]));
    }

    #[test]
    fn substring_mode_is_colony() {
        let p = Pattern::compile("plan", MatchMode::Substring).unwrap();
        assert!(p.is_match("X.x.explain_plan"));
        assert!(p.is_match("PLANNER"));
        let p = Pattern::compile(
            "DesignProcessCapability.create_decomposition",
            MatchMode::Substring,
        )
        .unwrap();
        assert!(!p.is_match("create_decomposition"));
        assert!(p.is_match("DesignProcessCapability.DesignProcessCapability.create_decomposition"));
        assert!(!p.is_match("DesignProcessCapability.design_process.create_decomposition"));
    }

    #[test]
    fn bad_patterns() {
        assert!(Pattern::compile("", MatchMode::Key).is_err());
        assert!(Pattern::compile("a..b", MatchMode::Key).is_err());
        assert!(Pattern::compile("a|", MatchMode::Substring).is_err());
    }

    #[test]
    fn python_repr() {
        assert_eq!(py_repr_list(&["Analysis".into()]), "['Analysis']");
        assert_eq!(
            py_repr_list(&["it's".into(), "a\\b".into()]),
            "[\"it's\", 'a\\\\b']"
        );
        assert_eq!(py_repr_list(&[]), "[]");
        // Issue 6 T4-1: every character that Python 3's `str.isprintable()` rejects is escaped,
        // as `repr(["nb\u00a0sp", ...])` prints it (checked against CPython 3).
        let items: Vec<String> = [
            "nb\u{a0}sp",
            "ls\u{2028}x",
            "pu\u{e000}x",
            "un\u{378}x",
            "sm\u{1F600}x",
            "soft\u{ad}hy",
            "bom\u{feff}x",
            "cr\rx",
            "nel\u{85}",
            "zw\u{200b}sp",
            "nul\0\u{7f}",
            "tag\u{e0041}",
            "pv\u{f0000}",
            "é中",
            "sp\u{3000}",
            "ps\u{2029}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            py_repr_list(&items),
            "['nb\\xa0sp', 'ls\\u2028x', 'pu\\ue000x', 'un\\u0378x', 'sm\u{1F600}x', 'soft\\xadhy', \
             'bom\\ufeffx', 'cr\\rx', 'nel\\x85', 'zw\\u200bsp', 'nul\\x00\\x7f', 'tag\\U000e0041', \
             'pv\\U000f0000', 'é中', 'sp\\u3000', 'ps\\u2029']"
        );
        for c in [' ', 'a', '~', 'é', '中', '\u{1F600}', '\u{2010}'] {
            assert!(py_is_printable(c), "{c:?}");
        }
        for c in [
            '\t', '\u{7f}', '\u{a0}', '\u{378}', '\u{e000}', '\u{2028}', '\u{200e}',
        ] {
            assert!(!py_is_printable(c), "{c:?}");
        }
    }
}
