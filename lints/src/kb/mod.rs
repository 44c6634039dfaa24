//! The knowledge base: the actions an agent may call, their parameters and where they live.
//!
//! Key resolution reproduces Colony's dispatcher (`_get_executor_for_action`, colony-reference
//! §2.3): exact match, then the unique registered key ending in `.` + raw key, then dropping
//! leading dot-segments until an exact match appears. Per-process dynamic middle segments
//! (`CodeGenerationActionPolicy.3f9a01c2.wait_for_next_event`) match as wildcards.

pub mod export;
mod load;
pub mod prompt;
pub mod scan;
pub mod types;
pub use load::{
    collect_files, load_all_report, load_path, load_str, load_str_as, KbError, KbFormat, KbInput,
    KbLoad, KbWarning,
};
pub use scan::{ScanCache, ScanResult};

use std::collections::HashMap;
use std::path::PathBuf;

/// The keys Colony's prompt shows under `## Available Actions` that are not callable actions
/// (colony-reference §2.8): `str(ActionType.EXECUTE_CODE)` (group `repl`), `__repl_variables__`
/// (group `repl.variables`) and `__repl_guidance__` (group `repl.guidance`). APIKnowledgeBase
/// rejects them and dispatching `ActionType.EXECUTE_CODE` would run nested code.
pub const COLONY_PSEUDO_KEYS: [&str; 3] = [
    "ActionType.EXECUTE_CODE",
    "__repl_variables__",
    "__repl_guidance__",
];

/// Where an action is defined (for go-to-definition); line and column are one-based.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DefinitionLocation {
    /// Source file path, as recorded by the KB source.
    pub path: String,
    /// One-based line.
    pub line: u32,
    /// One-based column.
    #[serde(default = "one")]
    pub column: u32,
}

fn one() -> u32 {
    1
}

/// One parameter of an action.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Param {
    /// Keyword name.
    pub name: String,
    /// The full type as written (`list[str]`, `Literal["a", "b"]`, `int | None`), when known.
    pub ty: Option<String>,
    /// True when the type is a lossy rendering (Colony prompt text shows `list` for `list[str]`).
    pub approximate_type: bool,
    /// The type as Colony's prompt renders it (`SchemaDetail.SELECTIVE`: the annotation's
    /// `__name__`, else `str(annotation)`; colony-reference §2.8), when known.
    pub display_type: Option<String>,
    /// True when the call must pass it.
    pub required: bool,
    /// Default value as source text, when known.
    pub default: Option<String>,
    /// Keyword-only (after `*`).
    pub keyword_only: bool,
    /// Allowed literal values, when constrained: a JSON-schema `enum`, `Literal[...]`, or a BFCL
    /// description's `[Enum]: [...]` (on a list parameter the values constrain the elements).
    pub allowed: Option<Vec<serde_json::Value>>,
    /// Description from the docstring or schema.
    pub description: Option<String>,
}

/// One callable action (Colony dialect) or tool (functions dialect).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Action {
    /// Canonical key: `Class.dispatch_key.method` in Colony, the function name for tools.
    pub key: String,
    /// Last segment of the key (the method or function name).
    pub short_key: String,
    /// Group (capability) the action belongs to.
    pub group: Option<String>,
    /// One-line summary (Colony: `planning_summary` or the docstring).
    pub summary: Option<String>,
    /// Parameters in signature order.
    pub params: Vec<Param>,
    /// Accepts `**kwargs` (unknown parameters are then passed through).
    pub accepts_extra_kwargs: bool,
    /// Whether the action accepts `**kwargs` is not known (a recorded prompt does not show it):
    /// `accepts_extra_kwargs` is then `false`, a merge takes the other source's value, and no
    /// conflict is reported about it.
    pub extra_kwargs_unknown: bool,
    /// Coroutine (must be awaited when called directly).
    pub is_async: bool,
    /// Hidden from the prompt but dispatchable.
    pub exclude_from_planning: bool,
    /// Belongs to a planning-tagged group.
    pub planning: bool,
    /// The middle segment is a per-process random string at runtime (treated as a wildcard).
    pub dynamic_segment: bool,
    /// Definition site, when the KB came from source.
    pub source: Option<DefinitionLocation>,
    /// Return type as written, when known.
    pub returns: Option<String>,
    /// Name of the Python method or function that implements the action (differs from the last
    /// key segment when the decorator sets `action_key`).
    pub method: Option<String>,
    /// The full docstring (cleaned as `inspect.getdoc` does), when known.
    pub docstring: Option<String>,
    /// The decorator's `tags` (sorted).
    pub tags: Vec<String>,
    /// The decorator's `emits_lifecycle` (Colony default `True`), when known.
    pub emits_lifecycle: Option<bool>,
    /// The decorator's `interruptible` (Colony default `False`), when known.
    pub interruptible: Option<bool>,
    /// The `action_key=` expression as written when it was not a string literal
    /// (`ActionType.ANALYZE`), kept so readers can see how the key was derived.
    pub action_key_expr: Option<String>,
}

/// A group of actions as Colony's prompt shows them (`### <group_key>`): one provider object
/// (capability, agent, policy) or one standalone function (`func.<name>`).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Group {
    /// `capability_key` for capabilities, `Class.<hex>` (written `Class.*`) for agents and
    /// policies, `func.<name>` for standalone functions.
    pub group_key: String,
    /// Python class of the provider, when the group is a class.
    pub provider_class: Option<String>,
    /// Middle key segment (`*` when it is random per process).
    pub dispatch_key: Option<String>,
    /// The middle key segment is a per-process random hex string at runtime.
    pub dynamic: bool,
    /// Group description shown in the prompt, when known.
    pub description: Option<String>,
    /// Group tags (`planning` marks planning-mode groups), sorted.
    pub tags: Vec<String>,
    /// File the provider is defined in, when known.
    pub source_path: Option<String>,
}

impl Action {
    /// Looks up a parameter by name.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// `key(name: type, name: type = default, ..., *, kw: type, **kwargs) -> returns`, the
    /// signature shown in hovers and rule help (`= ...` marks an optional parameter whose
    /// default is unknown; `*` precedes the keyword-only parameters, as in Python).
    pub fn signature(&self) -> String {
        let mut params: Vec<String> = Vec::new();
        let mut keyword_only = false;
        for p in &self.params {
            if p.keyword_only && !keyword_only {
                params.push("*".into());
            }
            keyword_only = p.keyword_only;
            params.push({
                let mut s = p.name.clone();
                if let Some(t) = &p.ty {
                    s.push_str(": ");
                    s.push_str(t);
                }
                if let Some(d) = &p.default {
                    s.push_str(" = ");
                    s.push_str(d);
                } else if !p.required {
                    s.push_str(" = ...");
                }
                s
            });
        }
        let mut out = format!("{}({}", self.key, params.join(", "));
        if self.accepts_extra_kwargs {
            out.push_str(if params.is_empty() {
                "**kwargs"
            } else {
                ", **kwargs"
            });
        }
        out.push(')');
        if let Some(r) = &self.returns {
            out.push_str(" -> ");
            out.push_str(r);
        }
        out
    }
}

/// How a raw key resolved, mirroring the dispatcher's steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// The key is registered as written.
    Exact(usize),
    /// Matched an action whose middle segment is dynamic (wildcard).
    Dynamic(usize),
    /// The unique registered key ending in `.` + raw key.
    Suffix(usize),
    /// Dropping leading segments gave a registered key.
    PrefixStrip(usize),
    /// Several registered keys end in `.` + raw key, and prefix stripping does not resolve it.
    Ambiguous(Vec<usize>),
    /// A pseudo key from the prompt (`__repl_guidance__`, `ActionType.EXECUTE_CODE`).
    Pseudo,
    /// Nothing matches.
    Unknown,
}

impl Resolution {
    /// The action index when the key resolved to exactly one action.
    pub fn action(&self) -> Option<usize> {
        match self {
            Resolution::Exact(i)
            | Resolution::Dynamic(i)
            | Resolution::Suffix(i)
            | Resolution::PrefixStrip(i) => Some(*i),
            _ => None,
        }
    }
}

/// A candidate key for a misspelled one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    /// Index of the suggested action.
    pub action: usize,
    /// Edit distance (Damerau-Levenshtein, optimal string alignment) that ranked it.
    pub distance: usize,
    /// True when the distance was measured on the last segment only.
    pub by_last_segment: bool,
}

/// The set of known actions.
#[derive(Debug, Clone, Default)]
pub struct KnowledgeBase {
    /// All actions, in load order.
    pub actions: Vec<Action>,
    by_key: HashMap<String, usize>,
    by_short: HashMap<String, Vec<usize>>,
    /// Keys shown in prompts that are not callable.
    pub pseudo_keys: Vec<String>,
    /// Dynamic segment patterns (`CodeGenerationActionPolicy.*`).
    pub dynamic_segments: Vec<String>,
    /// Files the KB was loaded from.
    pub sources: Vec<PathBuf>,
    /// Group metadata, in first-seen order (actions refer to groups through [`Action::group`]).
    pub groups: Vec<Group>,
}

/// Two sources define the same action key with different parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeConflict {
    /// The action key.
    pub key: String,
    /// What differs, one human-readable item per difference
    /// (`parameter \`x\`: type \`list[str]\` vs \`str\``).
    pub differences: Vec<String>,
}

impl KnowledgeBase {
    /// An empty KB (every key is unknown).
    pub fn new() -> Self {
        Self::default()
    }

    /// True when no action is known. Rules that need a KB stay silent on an empty one.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    /// Adds an action; a later action with the same key replaces the earlier one (returned).
    pub fn insert(&mut self, action: Action) -> Option<Action> {
        if let Some(&i) = self.by_key.get(&action.key) {
            return Some(std::mem::replace(&mut self.actions[i], action));
        }
        let i = self.actions.len();
        self.by_key.insert(action.key.clone(), i);
        self.by_short
            .entry(action.short_key.clone())
            .or_default()
            .push(i);
        self.actions.push(action);
        None
    }

    /// Merges `other` into `self`; on equal keys `other` wins (see [`KnowledgeBase::merge_reporting`]
    /// for the field-level rules). Returns the keys whose parameters conflicted.
    pub fn merge(&mut self, other: KnowledgeBase) -> Vec<String> {
        self.merge_reporting(other)
            .into_iter()
            .map(|c| c.key)
            .collect()
    }

    /// Merges `other` into `self` with `other` taking precedence, and reports conflicts.
    ///
    /// Precedence (documented in docs/knowledge-base.md): an action of `other` replaces the
    /// action of `self` with the same key, except that information `other` lacks is kept from
    /// `self`: a missing summary, docstring, source location, method name or return type, and
    /// the exact type (with its allowed values) of a parameter whose type in `other` is only an
    /// approximate rendering consistent with it (a Colony prompt's `list` for `list[str]`).
    /// Group metadata merges the same way. Pseudo keys and dynamic segments are unioned.
    ///
    /// A conflict is reported when the two definitions disagree on parameter names,
    /// required-ness, exact types (or an approximate type inconsistent with the exact one),
    /// allowed values, or `**kwargs` acceptance.
    pub fn merge_reporting(&mut self, other: KnowledgeBase) -> Vec<MergeConflict> {
        let mut conflicts = Vec::new();
        for g in other.groups {
            self.upsert_group(g);
        }
        for mut a in other.actions {
            if let Some(&i) = self.by_key.get(&a.key) {
                let old = &self.actions[i];
                let differences = action_differences(old, &a);
                if !differences.is_empty() {
                    conflicts.push(MergeConflict {
                        key: a.key.clone(),
                        differences,
                    });
                }
                fill_from(&mut a, old);
            }
            self.insert(a);
        }
        for p in other.pseudo_keys {
            if !self.pseudo_keys.contains(&p) {
                self.pseudo_keys.push(p);
            }
        }
        for d in other.dynamic_segments {
            if !self.dynamic_segments.contains(&d) {
                self.dynamic_segments.push(d);
            }
        }
        self.sources.extend(other.sources);
        conflicts
    }

    /// Adds group metadata, or merges it into the group with the same key (fields the new
    /// value lacks are kept).
    pub fn upsert_group(&mut self, mut g: Group) {
        if let Some(old) = self.groups.iter_mut().find(|o| o.group_key == g.group_key) {
            g.provider_class = g.provider_class.or(old.provider_class.take());
            g.dispatch_key = g.dispatch_key.or(old.dispatch_key.take());
            g.description = g.description.or(old.description.take());
            g.source_path = g.source_path.or(old.source_path.take());
            if g.tags.is_empty() {
                g.tags = std::mem::take(&mut old.tags);
            }
            g.dynamic |= old.dynamic;
            *old = g;
        } else {
            self.groups.push(g);
        }
    }

    /// The metadata of group `key`.
    pub fn group(&self, key: &str) -> Option<&Group> {
        self.groups.iter().find(|g| g.group_key == key)
    }

    /// Adds Colony's pseudo keys ([`COLONY_PSEUDO_KEYS`]) when missing.
    pub fn add_colony_pseudo_keys(&mut self) {
        for p in COLONY_PSEUDO_KEYS {
            if !self.pseudo_keys.iter().any(|k| k == p) {
                self.pseudo_keys.push(p.to_string());
            }
        }
    }

    /// Adds a dynamic-segment pattern (`Class.*`) when missing.
    pub fn add_dynamic_segment(&mut self, pattern: &str) {
        if !self.dynamic_segments.iter().any(|d| d == pattern) {
            self.dynamic_segments.push(pattern.to_string());
        }
    }

    /// The action with exactly this key.
    pub fn get(&self, key: &str) -> Option<&Action> {
        self.by_key.get(key).map(|&i| &self.actions[i])
    }

    /// Actions whose last segment is `short`.
    pub fn by_short_key(&self, short: &str) -> &[usize] {
        self.by_short.get(short).map(Vec::as_slice).unwrap_or(&[])
    }

    /// True for a pseudo key (`__repl_guidance__`, `ActionType.EXECUTE_CODE`, ...).
    pub fn is_pseudo(&self, key: &str) -> bool {
        self.pseudo_keys.iter().any(|p| p == key)
    }

    fn dynamic_match(&self, raw: &str) -> Option<usize> {
        let mut parts = raw.splitn(3, '.');
        let (class, _middle, method) = (parts.next()?, parts.next()?, parts.next()?);
        if method.contains('.') {
            return None;
        }
        let dynamic: Vec<usize> = self
            .by_short_key(method)
            .iter()
            .copied()
            .filter(|&i| self.actions[i].dynamic_segment)
            .collect();
        if let Some(&i) = dynamic
            .iter()
            .find(|&&i| self.actions[i].key.split('.').next() == Some(class))
        {
            return Some(i);
        }
        // A class named by a `dynamic_segments` pattern (`CodeGenerationActionPolicy.*`) is the
        // runtime class of an agent or policy whose actions a static KB may list under a base
        // class (`EventDrivenActionPolicy`); the method then decides, when it is unique.
        let pattern_class = self
            .dynamic_segments
            .iter()
            .any(|d| d.strip_suffix(".*") == Some(class));
        match dynamic.as_slice() {
            [only] if pattern_class => Some(*only),
            _ => None,
        }
    }

    /// The spelling of action `i` that resolves in every process: its key, except for actions
    /// whose middle segment is a per-process random string (colony-reference §2.3), where only
    /// the short key resolves everywhere (when it is unique).
    pub fn canonical_key(&self, i: usize) -> &str {
        let Some(a) = self.actions.get(i) else {
            return "";
        };
        if a.dynamic_segment && self.resolve(&a.short_key) == Resolution::Suffix(i) {
            &a.short_key
        } else {
            &a.key
        }
    }

    /// Resolves a raw key as Colony's dispatcher does (colony-reference §2.3).
    pub fn resolve(&self, raw: &str) -> Resolution {
        if let Some(&i) = self.by_key.get(raw) {
            return Resolution::Exact(i);
        }
        if self.is_pseudo(raw) {
            return Resolution::Pseudo;
        }
        if let Some(i) = self.dynamic_match(raw) {
            return Resolution::Dynamic(i);
        }
        // Suffix: registered keys ending in "." + raw. The last segment narrows the search.
        let last = raw.rsplit('.').next().unwrap_or(raw);
        let suffix = format!(".{raw}");
        let matches: Vec<usize> = self
            .by_short_key(last)
            .iter()
            .copied()
            .filter(|&i| self.actions[i].key.ends_with(&suffix))
            .collect();
        if matches.len() == 1 {
            return Resolution::Suffix(matches[0]);
        }
        // Prefix strip: drop leading segments until an exact match appears.
        let mut rest = raw;
        while let Some(dot) = rest.find('.') {
            rest = &rest[dot + 1..];
            if let Some(&i) = self.by_key.get(rest) {
                return Resolution::PrefixStrip(i);
            }
        }
        if matches.len() > 1 {
            return Resolution::Ambiguous(matches);
        }
        Resolution::Unknown
    }

    /// Up to `limit` keys close to `raw`, best first. Distances are true edit distances
    /// (optimal-string-alignment Damerau-Levenshtein): on the whole key first, else on the last
    /// segment; a candidate is kept when the distance is at most a third of the longer string
    /// (at least 1, at most 3). Ties break by distance, then the shorter candidate key, then key order, so
    /// results never depend on hashing.
    pub fn suggest(&self, raw: &str, limit: usize) -> Vec<Suggestion> {
        let raw_last = raw.rsplit('.').next().unwrap_or(raw);
        let (raw_len, last_len) = (raw.chars().count(), raw_last.chars().count());
        // A candidate is kept when its distance is at most a third of the longer string (1..=3):
        // the bounded distance rejects the others early (on the length difference first).
        let threshold = |a: usize, b: usize| (a.max(b) / 3).clamp(1, 3);
        let mut found: Vec<Suggestion> = Vec::new();
        for (i, a) in self.actions.iter().enumerate() {
            let whole_limit = threshold(raw_len, a.key.chars().count());
            match crate::distance::osa_within(raw, &a.key, whole_limit) {
                Some(0) => continue,
                Some(whole) => {
                    found.push(Suggestion {
                        action: i,
                        distance: whole,
                        by_last_segment: false,
                    });
                    continue;
                }
                None => {}
            }
            let seg_limit = threshold(last_len, a.short_key.chars().count());
            if let Some(seg) = crate::distance::osa_within(raw_last, &a.short_key, seg_limit) {
                found.push(Suggestion {
                    action: i,
                    distance: seg,
                    by_last_segment: true,
                });
            }
        }
        found.sort_by(|x, y| {
            x.distance
                .cmp(&y.distance)
                .then(
                    self.actions[x.action]
                        .key
                        .len()
                        .cmp(&self.actions[y.action].key.len()),
                )
                .then(self.actions[x.action].key.cmp(&self.actions[y.action].key))
        });
        found.truncate(limit);
        found
    }
}

/// What differs between two definitions of one action (empty when they agree).
fn action_differences(old: &Action, new: &Action) -> Vec<String> {
    let mut out = Vec::new();
    for p in &old.params {
        match new.param(&p.name) {
            None => out.push(format!("parameter `{}` only in the earlier source", p.name)),
            Some(q) => {
                if p.required != q.required {
                    out.push(format!(
                        "parameter `{}`: {} vs {}",
                        p.name,
                        if p.required { "required" } else { "optional" },
                        if q.required { "required" } else { "optional" }
                    ));
                }
                if let (Some(a), Some(b)) = (&p.ty, &q.ty) {
                    if !types::consistent(a, p.approximate_type, b, q.approximate_type) {
                        out.push(format!("parameter `{}`: type `{a}` vs `{b}`", p.name));
                    }
                }
                let shown = |v: &Option<Vec<serde_json::Value>>| match v {
                    Some(v) => serde_json::Value::from(v.clone()).to_string(),
                    None => "any value".to_string(),
                };
                // A missing list is a difference only when that side's type is exact (a
                // prompt's `Literal` has lost its values).
                let differs = match (&p.allowed, &q.allowed) {
                    (Some(a), Some(b)) => a != b,
                    (Some(_), None) => q.ty.is_some() && !q.approximate_type,
                    (None, Some(_)) => p.ty.is_some() && !p.approximate_type,
                    (None, None) => false,
                };
                if differs {
                    out.push(format!(
                        "parameter `{}`: allowed values {} vs {}",
                        p.name,
                        shown(&p.allowed),
                        shown(&q.allowed)
                    ));
                }
            }
        }
    }
    for q in &new.params {
        if old.param(&q.name).is_none() {
            out.push(format!("parameter `{}` only in the later source", q.name));
        }
    }
    if old.accepts_extra_kwargs != new.accepts_extra_kwargs
        && !old.extra_kwargs_unknown
        && !new.extra_kwargs_unknown
    {
        out.push(format!(
            "`**kwargs` accepted: {} vs {}",
            old.accepts_extra_kwargs, new.accepts_extra_kwargs
        ));
    }
    out
}

/// Keeps in `new` what only `old` knows (see [`KnowledgeBase::merge_reporting`]).
fn fill_from(new: &mut Action, old: &Action) {
    macro_rules! keep {
        ($($f:ident),*) => {$(
            if new.$f.is_none() {
                new.$f = old.$f.clone();
            }
        )*};
    }
    keep!(
        group,
        summary,
        source,
        returns,
        method,
        docstring,
        emits_lifecycle,
        interruptible,
        action_key_expr
    );
    if new.tags.is_empty() {
        new.tags = old.tags.clone();
    }
    if new.extra_kwargs_unknown {
        new.accepts_extra_kwargs = old.accepts_extra_kwargs;
        new.extra_kwargs_unknown = old.extra_kwargs_unknown;
    }
    for q in &mut new.params {
        let Some(p) = old.param(&q.name) else {
            continue;
        };
        let exact_old = p.ty.is_some() && !p.approximate_type;
        let better = match (&q.ty, q.approximate_type) {
            (None, _) => exact_old,
            (Some(b), true) => {
                exact_old && types::consistent(p.ty.as_deref().unwrap_or(""), false, b, true)
            }
            // The same type with module-qualified names (a prompt's `str(annotation)`): the
            // earlier, shorter spelling is kept.
            // or the bare head of the earlier generic (`Page` for `Page[T]`): the earlier,
            // more precise spelling is kept.
            (Some(b), false) => p.ty.as_deref().is_some_and(|a| {
                exact_old
                    && ((a.len() < b.len() && types::same_modulo_qualification(a, b))
                        || types::is_bare_head_of(b, a))
            }),
        };
        if better {
            q.ty = p.ty.clone();
            q.approximate_type = false;
            if q.allowed.is_none() {
                q.allowed = p.allowed.clone();
            }
            if q.display_type.is_none() {
                q.display_type = p.display_type.clone();
            }
        }
        if q.description.is_none() {
            q.description = p.description.clone();
        }
        if q.default.is_none() && !q.required {
            q.default = p.default.clone();
        }
    }
}

/// Loads and merges every KB input in `paths` (KB files, Python sources, source directories,
/// recorded prompts), later paths taking precedence; see [`load_all_report`] for the rules.
///
/// Errors: the first input that cannot be loaded.
pub fn load_all(paths: &[PathBuf]) -> Result<KnowledgeBase, KbError> {
    load_all_report(paths, None).map(|l| l.kb)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kb(keys: &[&str]) -> KnowledgeBase {
        let mut kb = KnowledgeBase::new();
        for k in keys {
            kb.insert(Action {
                key: k.to_string(),
                short_key: k.rsplit('.').next().unwrap().to_string(),
                ..Default::default()
            });
        }
        kb
    }

    #[test]
    fn resolution_follows_dispatcher() {
        let kb = kb(&[
            "AgentPoolCapability.AgentPoolCapability.get_agent_status",
            "SessionOrchestratorCapability.SessionOrchestratorCapability.respond_to_user",
            "Other.Other.respond_to_user",
        ]);
        assert_eq!(
            kb.resolve("AgentPoolCapability.AgentPoolCapability.get_agent_status"),
            Resolution::Exact(0)
        );
        assert_eq!(kb.resolve("get_agent_status"), Resolution::Suffix(0));
        assert_eq!(
            kb.resolve("AgentPoolCapability.get_agent_status"),
            Resolution::Suffix(0)
        );
        assert_eq!(
            kb.resolve("X.AgentPoolCapability.AgentPoolCapability.get_agent_status"),
            Resolution::PrefixStrip(0)
        );
        assert_eq!(
            kb.resolve("respond_to_user"),
            Resolution::Ambiguous(vec![1, 2])
        );
        assert_eq!(kb.resolve("nope"), Resolution::Unknown);
    }

    #[test]
    fn dynamic_segments_resolve_through_patterns() {
        let mut kb = kb(&["EventDrivenActionPolicy.EventDrivenActionPolicy.wait_for_next_event"]);
        kb.actions[0].dynamic_segment = true;
        kb.dynamic_segments = vec!["CodeGenerationActionPolicy.*".into()];
        assert_eq!(
            kb.resolve("CodeGenerationActionPolicy.3f9a01c2.wait_for_next_event"),
            Resolution::Dynamic(0)
        );
        assert_eq!(
            kb.resolve("EventDrivenActionPolicy.0badf00d.wait_for_next_event"),
            Resolution::Dynamic(0)
        );
        assert_eq!(
            kb.resolve("Other.3f9a01c2.wait_for_next_event"),
            Resolution::Unknown
        );
        assert_eq!(kb.canonical_key(0), "wait_for_next_event");
    }

    fn param(name: &str, ty: &str, approx: bool, required: bool) -> Param {
        Param {
            name: name.into(),
            ty: Some(ty.into()),
            approximate_type: approx,
            required,
            allowed: types::allowed_values(ty),
            ..Default::default()
        }
    }

    #[test]
    fn merge_later_wins_but_keeps_what_it_lacks() {
        let exact = Action {
            key: "A.A.f".into(),
            short_key: "f".into(),
            summary: Some("From source.".into()),
            source: Some(DefinitionLocation {
                path: "a.py".into(),
                line: 3,
                column: 15,
            }),
            params: vec![
                param("ids", "list[str]", false, true),
                param("mode", "Literal['x', 'y']", false, false),
            ],
            ..Default::default()
        };
        let approx = Action {
            key: "A.A.f".into(),
            short_key: "f".into(),
            summary: Some("From prompt.".into()),
            params: vec![
                param("ids", "list", true, true),
                param("mode", "Literal", true, false),
            ],
            ..Default::default()
        };
        let mut kb = KnowledgeBase::new();
        kb.insert(exact.clone());
        let mut later = KnowledgeBase::new();
        later.insert(approx.clone());
        assert_eq!(kb.merge_reporting(later), vec![]);
        let f = kb.get("A.A.f").unwrap();
        assert_eq!(f.summary.as_deref(), Some("From prompt."));
        assert_eq!(f.source, exact.source);
        assert_eq!(f.params, exact.params);

        // An inconsistent approximate type, a changed requirement and a new parameter conflict.
        let mut other = approx.clone();
        other.params = vec![
            param("ids", "dict", true, false),
            param("extra", "int", false, true),
        ];
        let mut later = KnowledgeBase::new();
        later.insert(other);
        let conflicts = kb.merge_reporting(later);
        assert_eq!(
            conflicts,
            vec![MergeConflict {
                key: "A.A.f".into(),
                differences: vec![
                    "parameter `ids`: required vs optional".into(),
                    "parameter `ids`: type `list[str]` vs `dict`".into(),
                    "parameter `mode` only in the earlier source".into(),
                    "parameter `extra` only in the later source".into(),
                ],
            }]
        );
        assert_eq!(
            kb.get("A.A.f").unwrap().params[0].ty.as_deref(),
            Some("dict")
        );
    }

    #[test]
    fn suggestions_use_edit_distance_and_are_deterministic() {
        let kb = kb(&[
            "A.A.spawn_agents",
            "A.A.spawn_agentx",
            "AgentPoolCapability.AgentPoolCapability.get_agent_status",
        ]);
        let s = kb.suggest(
            "xAgentPoolCapability.AgentPoolCapability.get_agent_status",
            3,
        );
        assert_eq!(s[0].action, 2);
        assert_eq!(s[0].distance, 1);
        let s = kb.suggest("A.A.spawn_agent", 3);
        assert_eq!(s.iter().map(|s| s.action).collect::<Vec<_>>(), vec![0, 1]);
    }

    /// The suggestions computed without pruning: the distance of every pair.
    fn exhaustive_suggest(
        kb: &KnowledgeBase,
        raw: &str,
        limit: usize,
    ) -> Vec<(usize, usize, bool)> {
        let raw_last = raw.rsplit('.').next().unwrap_or(raw);
        let threshold =
            |a: &str, b: &str| (a.chars().count().max(b.chars().count()) / 3).clamp(1, 3);
        let mut found = Vec::new();
        for (i, a) in kb.actions.iter().enumerate() {
            let whole = strsim::osa_distance(raw, &a.key);
            if whole == 0 {
                continue;
            }
            let seg = strsim::osa_distance(raw_last, &a.short_key);
            if whole <= threshold(raw, &a.key) {
                found.push((i, whole, false));
            } else if seg <= threshold(raw_last, &a.short_key) {
                found.push((i, seg, true));
            }
        }
        found.sort_by(|x, y| {
            x.1.cmp(&y.1)
                .then(kb.actions[x.0].key.len().cmp(&kb.actions[y.0].key.len()))
                .then(kb.actions[x.0].key.cmp(&kb.actions[y.0].key))
        });
        found.truncate(limit);
        found
    }

    proptest::proptest! {
        /// Length pruning never changes the suggestions, their distances or their order.
        #[test]
        fn pruned_suggestions_equal_the_exhaustive_ones(
            raw in "[abAé._]{0,14}",
            keys in proptest::collection::vec("[abAé_]{1,5}\\.[abAé_]{1,5}\\.[abAé_]{1,9}", 1..24),
        ) {
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            let kb = kb(&refs);
            let got: Vec<(usize, usize, bool)> = kb
                .suggest(&raw, 5)
                .iter()
                .map(|s| (s.action, s.distance, s.by_last_segment))
                .collect();
            proptest::prop_assert_eq!(got, exhaustive_suggest(&kb, &raw, 5));
        }
    }
}
