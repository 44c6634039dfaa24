//! Runtime guardrails declared in config (spec §8), evaluated call by call against a call
//! history rebuilt by the replay engine ([`crate::replay`]).
//!
//! Kinds (one module each): [`capability`] (`capability-boundary`), [`temporal`]
//! (`temporal-order`), [`args_aware`] (`args-aware-order`), [`approval`]
//! (`approval-required`), [`rate_limit`] (`rate-limit`), [`composite`] (`composite`). The
//! top-level `[[guardrails]]` list is evaluated like a composite: in order, the first block wins
//! (Colony `CompositeGuardrail`, colony-reference §4.6). Declarative predicates live in
//! [`predicates`], pattern matching in [`matching`], config parsing in [`config`].
//!
//! Evaluation is incremental: every pattern a guardrail looks up in the history (a
//! temporal-order `before`, an args-aware `required-prior` call, a rate-limit pattern) is a
//! *watch*; the history keeps, per watch, the positions of the records that match it, updated
//! when a record is appended or evicted. A check therefore costs a few lookups, not a scan of
//! the (up to 10 000-entry) history.

pub mod approval;
pub mod args_aware;
pub mod capability;
pub mod composite;
pub mod config;
pub mod matching;
pub mod predicates;
pub mod rate_limit;
pub mod semantic;
pub mod temporal;
pub mod toml_view;

use crate::trace::{ApprovalRecord, CallRecord, CallStatus, MessageRecord, RawJson};
use matching::{MatchMode, Pattern};
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{Map, Value};
use std::cell::OnceCell;
use std::collections::{BTreeSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

/// Colony's `_CALL_HISTORY_MAX_LEN` (colony-reference §9).
pub const DEFAULT_HISTORY_CAP: usize = 10_000;

/// A guardrail's refusal of one call (Colony `GuardrailDecision(allowed=False, ...)`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Block {
    /// Id of the guardrail that blocked (`outer/inner` inside a composite).
    pub guardrail: Arc<str>,
    /// Why.
    pub reason: String,
    /// What to do instead.
    pub suggestion: String,
}

/// One configured guardrail.
#[derive(Debug, Clone)]
pub struct Guardrail {
    /// Its id (`outer/inner` for composite members).
    pub id: Arc<str>,
    /// Its matching mode.
    pub mode: MatchMode,
    /// What it checks.
    pub kind: Kind,
}

/// Guardrail kinds.
#[derive(Debug, Clone)]
pub enum Kind {
    /// `capability-boundary`.
    Capability(capability::CapabilityBoundary),
    /// `temporal-order`.
    Temporal(temporal::TemporalOrder),
    /// `args-aware-order`.
    ArgsAware(args_aware::ArgsAware),
    /// `approval-required`.
    Approval(approval::ApprovalRequired),
    /// `rate-limit`.
    RateLimit(rate_limit::RateLimit),
    /// `composite`.
    Composite(composite::Composite),
    /// `semantic-constraint`.
    Semantic(semantic::SemanticConstraints),
}

impl Guardrail {
    /// The kind name as written in config.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::Capability(_) => "capability-boundary",
            Kind::Temporal(_) => "temporal-order",
            Kind::ArgsAware(_) => "args-aware-order",
            Kind::Approval(_) => "approval-required",
            Kind::RateLimit(_) => "rate-limit",
            Kind::Composite(_) => "composite",
            Kind::Semantic(_) => "semantic-constraint",
        }
    }

    /// Checks one proposed call. `None` allows it.
    pub fn check(&self, set: &GuardrailSet, call: &Proposed, st: &mut TraceState) -> Option<Block> {
        match &self.kind {
            Kind::Capability(g) => g.check(self, set, call),
            Kind::Temporal(g) => g.check(self, set, call, st),
            Kind::ArgsAware(g) => g.check(self, set, call, st),
            Kind::Approval(g) => g.check(self, set, call, st),
            Kind::RateLimit(g) => g.check(self, set, call, st),
            Kind::Composite(g) => g.check(set, call, st),
            Kind::Semantic(g) => g.check(self, set, call, st),
        }
    }

    /// Every composite member id in this subtree with the ids of the composites around it,
    /// outermost first: a member's block is also its composites' block (T8-1), so the report
    /// counts it for each of them.
    pub fn member_ancestors(&self) -> Vec<(Arc<str>, Vec<Arc<str>>)> {
        fn walk(g: &Guardrail, path: &mut Vec<Arc<str>>, out: &mut Vec<(Arc<str>, Vec<Arc<str>>)>) {
            if !path.is_empty() {
                out.push((g.id.clone(), path.clone()));
            }
            if let Kind::Composite(c) = &g.kind {
                path.push(g.id.clone());
                for m in &c.inner {
                    walk(m, path, out);
                }
                path.pop();
            }
        }
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out
    }

    /// Every guardrail id in this subtree (itself and composite members), in order.
    pub fn ids(&self) -> Vec<Arc<str>> {
        let mut out = vec![self.id.clone()];
        if let Kind::Composite(c) = &self.kind {
            for g in &c.inner {
                out.extend(g.ids());
            }
        }
        out
    }
}

/// A status filter on history records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatusSet {
    /// Bits: ok, error, blocked, unknown. Zero means any status.
    bits: u8,
}

impl StatusSet {
    fn bit(s: CallStatus) -> u8 {
        match s {
            CallStatus::Ok => 1,
            CallStatus::Error => 2,
            CallStatus::Blocked => 4,
            CallStatus::Unknown => 8,
        }
    }

    /// Any status (Colony's guardrails ignore the status of prior records).
    pub fn any() -> Self {
        StatusSet { bits: 0 }
    }

    /// Only the given statuses.
    pub fn of(statuses: &[CallStatus]) -> Self {
        StatusSet {
            bits: statuses.iter().fold(0, |b, s| b | Self::bit(*s)),
        }
    }

    /// True when `s` passes.
    pub fn allows(self, s: CallStatus) -> bool {
        self.bits == 0 || self.bits & Self::bit(s) != 0
    }
}

/// A history lookup some guardrail needs: records matching a pattern with a status.
#[derive(Debug, Clone)]
pub struct Watch {
    /// Pattern id.
    pub pattern: usize,
    /// Status filter.
    pub status: StatusSet,
    /// True when a matching record *grants* (a prior that satisfies an ordering rule or a
    /// constraint's evidence): a record with an unresolved key then matches only when every key
    /// it can reach matches ([`matching::Pattern::matches_every`]). False when matches count
    /// against the call (a rate limit): any reachable key counts.
    pub grant: bool,
}

/// An equality index for an args-aware rule whose `prior-params-match` only compares values
/// (`same` / `equal`): the newest history record matching the watch, per value tuple, so the
/// check is one lookup instead of a history scan.
#[derive(Debug, Clone)]
pub struct EqIndexSpec {
    /// The watch of the required prior.
    pub watch: usize,
    /// (prior param, target param) pairs.
    pub pairs: Vec<(String, String)>,
}

/// A membership index for an args-aware rule with `captures-subset-of` / `captures-any-in`
/// (issue 6 R11): per string, the history records matching the watch whose list param holds
/// it, so a check visits only records that can satisfy the capture test instead of scanning
/// the whole window.
#[derive(Debug, Clone)]
pub struct MemberIndexSpec {
    /// The watch of the required prior.
    pub watch: usize,
    /// The prior's list parameter (dotted path).
    pub param: String,
}

/// The compiled guardrail configuration.
#[derive(Debug, Clone, Default)]
pub struct GuardrailSet {
    /// The top-level guardrails, in order.
    pub guardrails: Vec<Guardrail>,
    /// Every pattern, by id.
    pub patterns: Vec<Pattern>,
    /// History watches, by id.
    pub watches: Vec<Watch>,
    /// Message watches (required prior messages), by id.
    pub message_watches: Vec<predicates::MessageWatch>,
    /// True when some predicate reads the params of prior records (they are then kept in the
    /// history).
    pub needs_prior_params: bool,
    /// Equality indexes, by id.
    pub eq_indexes: Vec<EqIndexSpec>,
    /// Membership indexes, by id.
    pub member_indexes: Vec<MemberIndexSpec>,
    /// Rate-limit counters, by id (one per `rate-limit` guardrail; see [`RateCounterSpec`]).
    pub rate_counters: Vec<RateCounterSpec>,
}

/// What a `rate-limit` guardrail counts, kept apart from the history's FIFO cap (issue 6
/// T4-29): the cap models what Colony's own guardrails can see (10 000 records), but a rate
/// limit is cellguard's own, and a `max` or a `per-calls` window beyond the cap must still be
/// reachable. Each counter holds the sequence numbers and times of the dispatched calls
/// matching its watch: those still in the history, plus the newest `max` (enough to decide
/// whether `max` is reached), plus, for a `per-calls` window, every one inside that window.
/// Memory is bounded by the configuration (`history-cap + max`, or `history-cap + per-calls`),
/// never by the trace's length.
#[derive(Debug, Clone, PartialEq)]
pub struct RateCounterSpec {
    /// The watch whose matching records are counted.
    pub watch: usize,
    /// The limit's `max`: the newest `max` matches are always held.
    pub max: u64,
    /// A `per-calls` window: every match among the last N records is held.
    pub per_calls: Option<u64>,
}

impl GuardrailSet {
    /// Adds a rate-limit counter; returns its id (each `rate-limit` guardrail has its own).
    pub fn add_rate_counter(&mut self, spec: RateCounterSpec) -> usize {
        self.rate_counters.push(spec);
        self.rate_counters.len() - 1
    }

    /// Adds a pattern; returns its id. Identical patterns share an id.
    pub fn add_pattern(&mut self, p: Pattern) -> usize {
        if let Some(i) = self.patterns.iter().position(|q| *q == p) {
            return i;
        }
        self.patterns.push(p);
        self.patterns.len() - 1
    }

    /// Adds a watch (`grant`: see [`Watch::grant`]); returns its id. Identical watches share
    /// an id.
    pub fn add_watch(&mut self, pattern: usize, status: StatusSet, grant: bool) -> usize {
        if let Some(i) = self
            .watches
            .iter()
            .position(|w| w.pattern == pattern && w.status == status && w.grant == grant)
        {
            return i;
        }
        self.watches.push(Watch {
            pattern,
            status,
            grant,
        });
        self.watches.len() - 1
    }

    /// True when nothing is configured.
    pub fn is_empty(&self) -> bool {
        self.guardrails.is_empty()
    }

    /// Every guardrail id, top-level and composite members, in order.
    pub fn ids(&self) -> Vec<Arc<str>> {
        self.guardrails.iter().flat_map(Guardrail::ids).collect()
    }

    /// Evaluates the top-level list like a composite: the first block wins. Messages that
    /// satisfied a `consume = true` prior are spent only when the call is allowed, so a call a
    /// later guardrail blocks leaves them for the retry, whatever the guardrails' order (issue 6
    /// T5-19; `approve_once` approvals are still consumed at check time, as Colony does,
    /// colony-reference §4.5).
    pub fn check(&self, call: &Proposed, st: &mut TraceState) -> Option<Block> {
        st.pending_consume.clear();
        let block = self.guardrails.iter().find_map(|g| g.check(self, call, st));
        if block.is_none() {
            for &w in &st.pending_consume {
                self.message_watches[w].consume(&mut st.messages[w]);
            }
        }
        st.pending_consume.clear();
        block
    }
}

/// Which patterns match one key string, as a bit set over pattern ids.
pub type Bits = Rc<[u64]>;

fn bit(bits: &[u64], i: usize) -> bool {
    bits.get(i / 64)
        .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
}

/// The key-mode pattern bits of one canonical key: `any` (the pattern matches some key it can
/// reach) and `every` (it matches every key it can reach); the same bits for a resolved key.
#[derive(Debug, Clone)]
pub struct KeyBits {
    /// Some reachable key matches (restricting matches: gates, block lists, counts).
    pub any: Bits,
    /// Every reachable key matches (granting matches: allow lists, satisfying priors).
    pub every: Bits,
}

/// Caches the pattern bits of key strings (keys repeat a lot in real traces). Bounded: cleared
/// when it grows past a limit.
#[derive(Debug, Default)]
pub struct KeyCache {
    sub: FxHashMap<Box<str>, Bits>,
    full: FxHashMap<Box<str>, Bits>,
    partial: FxHashMap<Box<str>, KeyBits>,
}

const KEY_CACHE_LIMIT: usize = 100_000;

impl KeyCache {
    /// Bits of the substring-mode patterns matching `key` (as written).
    pub fn substring(&mut self, set: &GuardrailSet, key: &str) -> Bits {
        if let Some(b) = self.sub.get(key) {
            return b.clone();
        }
        let lower = key.to_lowercase();
        let b = compute(set, MatchMode::Substring, key, &lower, false);
        if self.sub.len() > KEY_CACHE_LIMIT {
            self.sub.clear();
        }
        self.sub.insert(key.into(), b.clone());
        b
    }

    /// Bits of the key-mode patterns matching the canonical `key` (`partial`: unresolved,
    /// see [`KeyBits`]).
    pub fn key(&mut self, set: &GuardrailSet, key: &str, partial: bool) -> KeyBits {
        if !partial {
            if let Some(b) = self.full.get(key) {
                return KeyBits {
                    any: b.clone(),
                    every: b.clone(),
                };
            }
            let b = compute(set, MatchMode::Key, key, "", false);
            if self.full.len() > KEY_CACHE_LIMIT {
                self.full.clear();
            }
            self.full.insert(key.into(), b.clone());
            return KeyBits {
                any: b.clone(),
                every: b,
            };
        }
        if let Some(b) = self.partial.get(key) {
            return b.clone();
        }
        let any = compute(set, MatchMode::Key, key, "", true);
        let mut words = vec![0u64; set.patterns.len().div_ceil(64).max(1)];
        for (i, p) in set.patterns.iter().enumerate() {
            if p.mode == MatchMode::Key && bit(&any, i) && p.matches_every(key) {
                words[i / 64] |= 1 << (i % 64);
            }
        }
        let b = KeyBits {
            any,
            every: words.into(),
        };
        if self.partial.len() > KEY_CACHE_LIMIT {
            self.partial.clear();
        }
        self.partial.insert(key.into(), b.clone());
        b
    }
}

fn compute(set: &GuardrailSet, mode: MatchMode, key: &str, lower: &str, partial: bool) -> Bits {
    let mut words = vec![0u64; set.patterns.len().div_ceil(64).max(1)];
    for (i, p) in set.patterns.iter().enumerate() {
        if p.mode == mode && p.matches(key, lower, partial) {
            words[i / 64] |= 1 << (i % 64);
        }
    }
    words.into()
}

/// The keys of one call, as each matching mode sees it (borrowed from the call record and the
/// knowledge base).
#[derive(Debug, Clone, Copy)]
pub struct CallKeys<'k> {
    /// As written by the agent (what Colony's guardrails see).
    pub raw: &'k str,
    /// As resolved by the recording runtime's dispatcher (what Colony's history records carry).
    pub resolved: &'k str,
    /// The canonical key (KB resolution, else the resolved key, else the raw key).
    pub canonical: &'k str,
    /// True when the canonical key could not be established (no knowledge-base resolution, no
    /// recorded resolved key): patterns then match every key the dispatcher could resolve it to.
    pub partial: bool,
}

/// A call proposed for dispatch, as the guardrails see it.
#[derive(Debug)]
pub struct Proposed<'a> {
    /// Its keys.
    pub keys: &'a CallKeys<'a>,
    /// Substring-mode pattern bits of the raw key.
    pub sub_bits: Bits,
    /// Key-mode pattern bits of the canonical key.
    pub key_bits: KeyBits,
    /// Its parameters.
    pub params: &'a RawJson,
    parsed: OnceCell<Map<String, Value>>,
    /// Its time (Unix seconds), or the latest time seen in the trace.
    pub now: Option<f64>,
    /// Its recorded outcome and error text (read by verifiers that replay a recorded verdict).
    pub recorded: Option<(CallStatus, Option<&'a str>)>,
    /// Its recorded call id (`call_id`), which per-call approvals answer (issue 6 T6-10).
    pub call_id: Option<&'a str>,
}

impl<'a> Proposed<'a> {
    /// A proposed call.
    pub fn new(
        keys: &'a CallKeys<'a>,
        sub_bits: Bits,
        key_bits: KeyBits,
        params: &'a RawJson,
        now: Option<f64>,
    ) -> Self {
        Self {
            keys,
            sub_bits,
            key_bits,
            params,
            parsed: OnceCell::new(),
            now,
            recorded: None,
            call_id: None,
        }
    }

    /// True when pattern `pid` matches this call (in the pattern's own mode), for a match that
    /// *restricts* the call (a gate, a block list, a rule's target): an unresolved key matches
    /// when some key it can reach does.
    pub fn matches(&self, set: &GuardrailSet, pid: usize) -> bool {
        match set.patterns[pid].mode {
            MatchMode::Substring => bit(&self.sub_bits, pid),
            MatchMode::Key => bit(&self.key_bits.any, pid),
        }
    }

    /// True when pattern `pid` matches this call for a match that *grants* (an exemption): an
    /// unresolved key matches only when every key it can reach does (issue 6 R3).
    pub fn matches_every(&self, set: &GuardrailSet, pid: usize) -> bool {
        match set.patterns[pid].mode {
            MatchMode::Substring => bit(&self.sub_bits, pid),
            MatchMode::Key => bit(&self.key_bits.every, pid),
        }
    }

    /// The key a guardrail in `mode` reports: the raw key (substring) or the canonical key.
    pub fn key(&self, mode: MatchMode) -> &str {
        match mode {
            MatchMode::Substring => self.keys.raw,
            MatchMode::Key => self.keys.canonical,
        }
    }

    /// The parameters as an object (parsed once).
    pub fn params(&self) -> &Map<String, Value> {
        self.parsed.get_or_init(|| self.params.object())
    }
}

/// The params and result objects of a history record.
pub type ParsedPrior = (Map<String, Value>, Map<String, Value>);

/// One record of the rebuilt call history (Colony `CallRecord`, colony-reference §5.1).
#[derive(Debug, Clone)]
pub struct HistEntry {
    /// Position in the trace's history (increasing, never reused).
    pub seq: u64,
    /// Completion time (Colony stamps `start_wall` after dispatch).
    pub wall: Option<f64>,
    /// Recorded status.
    pub status: CallStatus,
    /// Parameters (kept only when a predicate reads prior params).
    pub params: Option<RawJson>,
    /// Result (kept only when a predicate reads prior params: `same`/`equal` fall back to
    /// fields of the result).
    pub result: Option<RawJson>,
    /// Params and result parsed, once, when a predicate first reads them (boxed: most
    /// records are never parsed, and the history holds up to `history-cap` of them).
    pub parsed: OnceCell<Box<ParsedPrior>>,
}

/// A result as an object: a JSON object, or a string holding one (chat tool output).
pub fn result_object(result: &RawJson) -> Map<String, Value> {
    match result.value() {
        Value::Object(m) => m,
        Value::String(s) if s.trim_start().starts_with('{') => match crate::trace::json_value(&s) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

impl HistEntry {
    /// The params and result objects (parsed once).
    pub fn objects(&self) -> &(Map<String, Value>, Map<String, Value>) {
        self.parsed.get_or_init(|| {
            Box::new((
                self.params
                    .as_ref()
                    .map(RawJson::object)
                    .unwrap_or_default(),
                self.result.as_ref().map(result_object).unwrap_or_default(),
            ))
        })
    }
}

/// Canonical text of a value for equality indexes, equal exactly when `predicates::json_eq`
/// holds: numbers by exact value at any depth ([`predicates::PyNumber`]: `1` equals `1.0`, `true`
/// equals `1`, `-0.0` equals `0`, `2**53 + 1` does not equal `2**53`, as in Python),
/// object members in sorted key order (objects are unordered).
fn canonical(v: Option<&Value>, out: &mut String) {
    match v {
        None | Some(Value::Null) => out.push('\u{1}'),
        Some(v @ (Value::Number(_) | Value::Bool(_))) => {
            if let Some(n) = predicates::PyNumber::of(v) {
                out.push_str(&n.text());
            }
        }
        Some(Value::Array(a)) => {
            out.push('[');
            for x in a {
                canonical(Some(x), out);
                out.push(',');
            }
            out.push(']');
        }
        Some(Value::Object(o)) => {
            let mut members: Vec<(&String, &Value)> = o.iter().collect();
            members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (k, x) in members {
                out.push_str(&Value::from(k.as_str()).to_string());
                out.push(':');
                canonical(Some(x), out);
                out.push(',');
            }
            out.push('}');
        }
        // A non-finite number read from `NaN` / `Infinity` (`trace::nonfinite`): `Infinity`
        // as the float; a `NaN` equals nothing, not even another `NaN` (Python), so each one
        // gets a text of its own.
        // A big integer (`trace::nonfinite::big_int_of_str`) as the number it is, so that it
        // keys as an equal integral float does (or, beyond `i128`, as its own literal).
        Some(Value::String(s))
            if crate::trace::nonfinite::number_of_str(s).is_some()
                || crate::trace::nonfinite::big_int_of_str(s).is_some() =>
        {
            match predicates::PyNumber::of(v.unwrap_or(&Value::Null)) {
                Some(predicates::PyNumber::Float(f)) if f.is_nan() => {
                    static NANS: std::sync::atomic::AtomicU64 =
                        std::sync::atomic::AtomicU64::new(0);
                    let n = NANS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    out.push_str(&format!("NaN#{n}"));
                }
                Some(n) => out.push_str(&n.text()),
                None => out.push_str(s),
            }
        }
        Some(other) => out.push_str(&other.to_string()),
    }
    out.push('\u{0}');
}

/// Borrowed top-level members of a JSON object, looked up by name without building a map.
struct TopFields<'n> {
    names: &'n [&'n str],
}

impl<'de> serde::de::DeserializeSeed<'de> for TopFields<'_> {
    type Value = Vec<Option<&'de serde_json::value::RawValue>>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for TopFields<'_> {
    type Value = Vec<Option<&'de serde_json::value::RawValue>>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = vec![None; self.names.len()];
        while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match self.names.iter().position(|n| *n == k) {
                // A repeated key: the last one wins, as in a parsed map.
                Some(i) => out[i] = Some(map.next_value::<&'de serde_json::value::RawValue>()?),
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

/// The raw texts of the top-level members `names` of the JSON object `json` (`None` per
/// missing member), or `None` when `json` is not an object. Flat objects are read by hand.
fn top_fields<'a>(json: &'a str, names: &[&str]) -> Option<Fields<'a>> {
    if let Some((members, _)) = crate::trace::flat::object(json) {
        return Some(
            names
                .iter()
                .map(|n| members.iter().rev().find(|(k, _)| k == n).map(|(_, v)| *v))
                .collect(),
        );
    }
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(json);
    let found = TopFields { names }.deserialize(&mut de).ok()?;
    Some(found.into_iter().map(|r| r.map(|r| r.get())).collect())
}

/// Values of the named members (inline for up to four names: computed on every indexed call).
type Fields<'a> = smallvec::SmallVec<[Option<&'a str>; 4]>;

/// [`canonical`] of a raw value, without parsing the common cases (plain strings, numbers,
/// null). Returns false when the value is missing or `null` (or unreadable, which the key
/// writes as missing).
fn canonical_raw(v: Option<&str>, out: &mut String) -> bool {
    let Some(t) = v else {
        canonical(None, out);
        return false;
    };
    let b = t.as_bytes();
    match b.first() {
        // Without escapes the recorded text is what serde_json would write.
        // (A non-finite stand-in takes the general way.)
        Some(b'"')
            if !b.contains(&b'\\')
                && t.get(1..t.len().saturating_sub(1)).is_none_or(|x| {
                    crate::trace::nonfinite::number_of_str(x).is_none()
                        && crate::trace::nonfinite::big_int_of_str(x).is_none()
                }) =>
        {
            out.push_str(t);
            out.push('\u{0}');
            true
        }
        Some(b'n') => {
            canonical(None, out);
            false
        }
        _ => match crate::trace::json_value(t) {
            Ok(v) => {
                canonical(Some(&v), out);
                !v.is_null()
            }
            Err(_) => {
                canonical(None, out);
                false
            }
        },
    }
}

/// The index key of the call with `params` (as the target, `prior = false`) or of a prior
/// record with `params` and `result` (`prior = true`: a member missing from the params is
/// looked up in the result object), without parsing whole objects when the names are plain
/// member names. Equal to [`prior_key`] / [`target_key`] over the parsed objects.
pub fn index_key(spec: &EqIndexSpec, params: &RawJson, result: &RawJson, prior: bool) -> String {
    let mut k = String::new();
    index_key_into(spec, params, result, prior, &mut k);
    k
}

/// [`index_key`], written into `k` (cleared first), so that a caller indexing every call reuses
/// one buffer. Returns true when every named value was found and is not `null` (a target
/// without one names no record, issue 6 T16), so that the caller need not parse the params
/// to ask.
pub fn index_key_into(
    spec: &EqIndexSpec,
    params: &RawJson,
    result: &RawJson,
    prior: bool,
    k: &mut String,
) -> bool {
    k.clear();
    let names: smallvec::SmallVec<[&str; 4]> = spec
        .pairs
        .iter()
        .map(|(pp, tp)| if prior { pp.as_str() } else { tp.as_str() })
        .collect();
    let fast = if names.iter().any(|n| n.contains('.')) {
        None
    } else {
        match params.json() {
            None => Some(smallvec::smallvec![None; names.len()]),
            Some(j) => top_fields(j, &names),
        }
    };
    let Some(found) = fast else {
        let p = params.object();
        let r = if prior {
            result_object(result)
        } else {
            Map::new()
        };
        k.push_str(&if prior {
            prior_key(spec, &p, &r)
        } else {
            target_key(spec, &p)
        });
        return names.iter().all(|n| {
            predicates::lookup(&p, n)
                .or_else(|| predicates::lookup(&r, n))
                .is_some_and(|v| !v.is_null())
        });
    };
    let mut result_obj: Option<Map<String, Value>> = None;
    let mut complete = true;
    for (name, v) in names.iter().zip(&found) {
        complete &= match v {
            Some(v) => canonical_raw(Some(v), k),
            // `lookup(prior).or_else(lookup(result))`: a missing param falls back to the
            // result (parsed once, only then).
            None if prior => {
                let r = result_obj.get_or_insert_with(|| result_object(result));
                let v = predicates::lookup(r, name);
                canonical(v, k);
                v.is_some_and(|v| !v.is_null())
            }
            None => {
                canonical(None, k);
                false
            }
        };
    }
    complete
}

/// The index key of a prior record (`prior` params, else `result` fields).
pub fn prior_key(
    spec: &EqIndexSpec,
    prior: &Map<String, Value>,
    result: &Map<String, Value>,
) -> String {
    let mut k = String::new();
    for (pp, _) in &spec.pairs {
        canonical(
            predicates::lookup(prior, pp).or_else(|| predicates::lookup(result, pp)),
            &mut k,
        );
    }
    k
}

/// The index key a proposed call looks up.
pub fn target_key(spec: &EqIndexSpec, target: &Map<String, Value>) -> String {
    let mut k = String::new();
    for (_, tp) in &spec.pairs {
        canonical(predicates::lookup(target, tp), &mut k);
    }
    k
}

/// The call history of one trace as the modelled runtime builds it: cumulative with a cell
/// boundary, FIFO-capped (colony-reference §4.0, §7.6 case 48), with per-watch match indexes.
#[derive(Debug)]
pub struct History {
    entries: VecDeque<HistEntry>,
    next_seq: u64,
    boundary: usize,
    cap: usize,
    hits: Vec<VecDeque<u64>>,
    /// Rate-limit counters (see [`RateCounterSpec`]): their specs and, per counter, the
    /// `(sequence number, time)` of the matches held, oldest first.
    rates: Vec<(RateCounterSpec, RateHits)>,
}

/// The matches a rate-limit counter holds: `(sequence number, time)`, oldest first.
pub type RateHits = VecDeque<(u64, Option<f64>)>;

impl History {
    /// An empty history with a FIFO cap and `watches` watch indexes.
    pub fn new(cap: usize, watches: usize) -> Self {
        Self::with_rate_counters(cap, watches, &[])
    }

    /// An empty history with a FIFO cap, `watches` watch indexes and the given rate-limit
    /// counters.
    pub fn with_rate_counters(cap: usize, watches: usize, rates: &[RateCounterSpec]) -> Self {
        Self {
            entries: VecDeque::new(),
            next_seq: 0,
            boundary: 0,
            cap: cap.max(1),
            hits: vec![VecDeque::new(); watches],
            rates: rates.iter().map(|r| (r.clone(), VecDeque::new())).collect(),
        }
    }

    /// `(sequence number, time)` of the matches rate-limit counter `r` holds, oldest first:
    /// every match still in the history, the newest `max`, and (with `per-calls`) every match
    /// in that window (see [`RateCounterSpec`]). Times are the records' (`HistEntry::wall`).
    pub fn rate_hits(&self, r: usize) -> &RateHits {
        &self.rates[r].1
    }

    /// Number of records (Colony `len(call_history)`).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Index where the current cell's records start (Colony `cell_start_index`).
    pub fn cell_start(&self) -> usize {
        self.boundary
    }

    /// Sequence number of the oldest record still held.
    pub fn first_seq(&self) -> u64 {
        self.next_seq - self.entries.len() as u64
    }

    /// Sequence number the next record will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The record with sequence number `seq`, while it is held.
    pub fn get(&self, seq: u64) -> Option<&HistEntry> {
        let first = self.first_seq();
        if seq < first {
            return None;
        }
        self.entries.get((seq - first) as usize)
    }

    /// Sequence numbers of held records matching watch `w`, oldest first.
    pub fn hits(&self, w: usize) -> &VecDeque<u64> {
        &self.hits[w]
    }

    /// Marks a cell boundary: per-cell epochs clear the history, cumulative ones move the
    /// boundary to the end.
    pub fn new_cell(&mut self, cumulative: bool) {
        if cumulative {
            self.boundary = self.entries.len();
        } else {
            self.entries.clear();
            for h in &mut self.hits {
                h.clear();
            }
            for (_, h) in &mut self.rates {
                h.clear();
            }
            self.boundary = 0;
        }
    }

    /// Appends a dispatched call. `matching` lists the watches its keys match (status already
    /// checked). Evicts the oldest record past the cap, shifting the boundary down (clamped at 0).
    pub fn push(&mut self, mut entry: HistEntry, matching: impl Iterator<Item = usize>) {
        entry.seq = self.next_seq;
        self.next_seq += 1;
        for w in matching {
            self.hits[w].push_back(entry.seq);
            for (spec, h) in &mut self.rates {
                if spec.watch == w {
                    h.push_back((entry.seq, entry.wall));
                }
            }
        }
        self.entries.push_back(entry);
        while self.entries.len() > self.cap {
            if let Some(old) = self.entries.pop_front() {
                for h in &mut self.hits {
                    while h.front().is_some_and(|&s| s <= old.seq) {
                        h.pop_front();
                    }
                }
            }
            self.boundary = self.boundary.saturating_sub(1);
        }
        // Rate-limit counters drop a match once it has left the history, is not among the
        // newest `max`, and is outside the `per-calls` window.
        let first = self.first_seq();
        let next = self.next_seq;
        for (spec, h) in &mut self.rates {
            while let Some(&(seq, _)) = h.front() {
                let held = seq >= first
                    || h.len() as u64 <= spec.max
                    || spec
                        .per_calls
                        .is_some_and(|n| seq >= next.saturating_sub(n));
                if held {
                    break;
                }
                h.pop_front();
            }
        }
    }
}

/// The approvals of one action type (case-insensitive; colony-reference §4.5 compares action
/// types ignoring case): which responses of that type are active, by arrival slot.
#[derive(Debug)]
struct TypeApprovals {
    /// The action type as first written.
    text: String,
    /// Key-mode pattern of the action type, every character literal (compiled once with
    /// [`Pattern::literal_key`]: a recorded action type is data, never a glob).
    pattern: Option<Pattern>,
    /// Slots of its `approve_all` responses.
    all: BTreeSet<u64>,
    /// Slots of its unconsumed `approve_once` responses.
    once: BTreeSet<u64>,
}

/// One answered request: its action type (lower-cased, the [`Approvals::types`] key), or, for
/// a consumed `approve_once`, only that it was consumed.
#[derive(Debug)]
struct Answer {
    /// Lower-cased action type; `None` when untyped (or consumed).
    ty: Option<String>,
    consumed: bool,
}

/// Recorded human-approval responses (Colony `HumanApprovalCapability`, colony-reference §4.5):
/// in arrival order (a slot per response); a response to an already answered request replaces
/// it in its slot. Indexed so that a check costs a few hash lookups whatever the number of
/// approvals (issue 6 T5-9): request ids by hash; action types by their lower-cased text and,
/// for `key` mode, by their last segment (a literal action type covers only keys with that
/// last segment, whatever its form: three segments exact, `C.**.m`, `**.m`); a consumed
/// `approve_once` is dropped, keeping only its request id (a later answer to that request
/// stays consumed). In `substring` mode a check tests each distinct action type once (a
/// substring test has no such index).
#[derive(Debug, Default)]
pub struct Approvals {
    next: u64,
    /// Live answers by slot (a consumed `approve_once` without request id is removed).
    slots: FxHashMap<u64, Answer>,
    /// Request id -> slot.
    by_id: FxHashMap<String, u64>,
    /// Slot -> request id (the id a check reports).
    ids: FxHashMap<u64, String>,
    /// Lower-cased action type -> its approvals (types with no active approval are removed).
    types: FxHashMap<String, TypeApprovals>,
    /// Lower-cased last segment of an action type -> the lower-cased types ending in it.
    by_last: FxHashMap<String, FxHashSet<String>>,
    /// Slots of legacy untyped approve-like responses.
    legacy: BTreeSet<u64>,
    /// Answers for one call each (OpenAI Agents SDK per-call approvals, issue 6 T6-10): call
    /// id -> the action type and whether it approves (the latest answer for the call counts).
    scoped: FxHashMap<String, (TypeApprovals, bool)>,
}

/// Legacy untyped approve-like choices (case-insensitive).
const COMPAT_CHOICES: [&str; 6] = [
    "approve", "approved", "yes", "granted", "accept", "accepted",
];

/// The lower-cased last segment of a key or action type (the `key`-mode index of approvals).
fn last_segment(key: &str) -> String {
    key.rsplit('.').next().unwrap_or(key).to_lowercase()
}

impl Approvals {
    /// Records a response.
    pub fn add(&mut self, r: &ApprovalRecord) {
        if let Some(call) = &r.call_id {
            // For that call only: it never covers another call, and is not consumed.
            match r.action_type.as_deref().filter(|t| !t.is_empty()) {
                Some(t) => {
                    let approves = matches!(r.choice.as_str(), "approve_once" | "approve_all");
                    let e = TypeApprovals {
                        text: t.to_string(),
                        pattern: Pattern::literal_key(t).ok(),
                        all: BTreeSet::new(),
                        once: BTreeSet::new(),
                    };
                    self.scoped.insert(call.clone(), (e, approves));
                }
                None => {
                    self.scoped.remove(call);
                }
            }
            return;
        }
        let (slot, consumed) = match r.request_id.as_ref().and_then(|id| self.by_id.get(id)) {
            Some(&slot) => {
                let consumed = self.remove(slot).is_some_and(|a| a.consumed);
                (slot, consumed)
            }
            None => {
                let slot = self.next;
                self.next += 1;
                if let Some(id) = &r.request_id {
                    self.by_id.insert(id.clone(), slot);
                    self.ids.insert(slot, id.clone());
                }
                (slot, false)
            }
        };
        let typed = r.action_type.as_deref().filter(|t| !t.is_empty());
        let ty = typed.map(str::to_lowercase);
        if let (Some(t), Some(lower)) = (typed, &ty) {
            let e = self.types.entry(lower.clone()).or_insert_with(|| {
                self.by_last
                    .entry(last_segment(lower))
                    .or_default()
                    .insert(lower.clone());
                TypeApprovals {
                    text: t.to_string(),
                    pattern: Pattern::literal_key(t).ok(),
                    all: BTreeSet::new(),
                    once: BTreeSet::new(),
                }
            });
            match r.choice.as_str() {
                "approve_all" => {
                    e.all.insert(slot);
                }
                "approve_once" if !consumed => {
                    e.once.insert(slot);
                }
                _ => {}
            }
            self.prune_type(lower);
        } else if COMPAT_CHOICES.contains(&r.choice.to_lowercase().as_str()) {
            self.legacy.insert(slot);
        }
        self.slots.insert(slot, Answer { ty, consumed });
    }

    /// Takes the answer in `slot` out of the indexes (for its replacement).
    fn remove(&mut self, slot: u64) -> Option<Answer> {
        let a = self.slots.remove(&slot)?;
        self.legacy.remove(&slot);
        if let Some(t) = &a.ty {
            if let Some(e) = self.types.get_mut(t) {
                e.all.remove(&slot);
                e.once.remove(&slot);
            }
            self.prune_type(t);
        }
        Some(a)
    }

    /// Drops the index entry of action type `t` once it holds no active approval.
    fn prune_type(&mut self, t: &str) {
        if self
            .types
            .get(t)
            .is_some_and(|e| e.all.is_empty() && e.once.is_empty())
        {
            self.types.remove(t);
            let last = last_segment(t);
            if let Some(s) = self.by_last.get_mut(&last) {
                s.remove(t);
                if s.is_empty() {
                    self.by_last.remove(&last);
                }
            }
        }
    }

    fn covers(
        e: &TypeApprovals,
        mode: MatchMode,
        key: &str,
        lower_key: &str,
        gates: Option<&[&Pattern]>,
    ) -> bool {
        match mode {
            MatchMode::Substring => lower_key.contains(&e.text.to_lowercase()),
            MatchMode::Key => e.pattern.as_ref().is_some_and(|p| match gates {
                None => p.matches(key, "", false),
                // An approval grants: it covers an unresolved key only when it covers every
                // reachable key the gate applies to (issue 6 R3).
                Some(gates) => matching::every_reachable(
                    key,
                    |k, s| gates.iter().any(|g| g.reaches(k, s)),
                    |k, s| {
                        if s {
                            gates.iter().all(|g| p.covers_suffixed_within(g, k))
                        } else {
                            p.covers(k, false)
                        }
                    },
                ),
            }),
        }
    }

    /// A per-call answer approving the call with id `call_id` (key `key`), when its action type
    /// covers the key (as in [`Approvals::check`]): the call id, else `None` (no answer for
    /// this call, or a rejection). Nothing is consumed.
    pub fn check_call(
        &self,
        call_id: Option<&str>,
        mode: MatchMode,
        key: &str,
        gates: Option<&[&Pattern]>,
    ) -> Option<String> {
        let id = call_id?;
        let (e, approves) = self.scoped.get(id)?;
        (*approves && Self::covers(e, mode, key, &key.to_lowercase(), gates))
            .then(|| id.to_string())
    }

    /// Colony `has_active_approval_for`: an `approve_all` whose action type covers the key
    /// (not consumed); else the first unconsumed `approve_once` that covers it (consumed now,
    /// at check time); else a legacy untyped approve-like response (any gated key, not
    /// consumed). Returns the request id (or `""`) that allowed the call (the earliest
    /// answered of those that could). `gates`: for an unresolved key in `key` mode, the gate
    /// patterns; an approval then covers the key only when it covers every key the key can
    /// reach that a gate applies to.
    pub fn check(
        &mut self,
        mode: MatchMode,
        key: &str,
        gates: Option<&[&Pattern]>,
    ) -> Option<String> {
        let lower_key = key.to_lowercase();
        let covering: Vec<&str> = {
            let candidates: Box<dyn Iterator<Item = &String>> = match mode {
                MatchMode::Key => Box::new(
                    self.by_last
                        .get(&last_segment(key))
                        .into_iter()
                        .flat_map(|s| s.iter()),
                ),
                // Each distinct action type once; with more types than the key has substrings,
                // the key's substrings are looked up instead, so a check costs at most a few
                // thousand lookups whatever the number of approvals (issue 6 T6-14).
                MatchMode::Substring => {
                    let n = lower_key.chars().count();
                    if self.types.len() <= n * (n + 1) / 2 {
                        Box::new(self.types.keys())
                    } else {
                        let types = &self.types;
                        let key = lower_key.as_str();
                        let mut seen = FxHashSet::default();
                        Box::new(
                            key.char_indices()
                                .flat_map(move |(i, _)| {
                                    key[i..]
                                        .char_indices()
                                        .map(move |(j, c)| &key[i..i + j + c.len_utf8()])
                                })
                                .filter_map(move |s| types.get_key_value(s).map(|(k, _)| k))
                                .filter(move |k| seen.insert(k.as_str())),
                        )
                    }
                }
            };
            candidates
                .filter(|t| {
                    self.types
                        .get(t.as_str())
                        .is_some_and(|e| Self::covers(e, mode, key, &lower_key, gates))
                })
                .map(String::as_str)
                .collect()
        };
        let first = |pick: fn(&TypeApprovals) -> Option<u64>| {
            covering
                .iter()
                .filter_map(|t| self.types.get(*t).and_then(pick).map(|s| (s, *t)))
                .min()
        };
        fn id(ids: &FxHashMap<u64, String>, slot: u64) -> String {
            ids.get(&slot).cloned().unwrap_or_default()
        }
        if let Some((slot, _)) = first(|e| e.all.first().copied()) {
            return Some(id(&self.ids, slot));
        }
        if let Some((slot, t)) = first(|e| e.once.first().copied()) {
            let t = t.to_string();
            let found = id(&self.ids, slot);
            if let Some(e) = self.types.get_mut(&t) {
                e.once.remove(&slot);
            }
            self.prune_type(&t);
            // Consumed: only the request id stays, so that a later answer to it stays consumed.
            if self.ids.contains_key(&slot) {
                if let Some(a) = self.slots.get_mut(&slot) {
                    a.consumed = true;
                    a.ty = None;
                }
            } else {
                self.slots.remove(&slot);
            }
            return Some(found);
        }
        self.legacy.first().map(|&slot| id(&self.ids, slot))
    }
}

/// Per-trace guardrail state: the history, approvals and message watches.
#[derive(Debug)]
pub struct TraceState {
    /// The rebuilt call history.
    pub history: History,
    /// Recorded approvals.
    pub approvals: Approvals,
    /// State of each message watch.
    pub messages: Vec<predicates::MessageState>,
    /// Messages seen so far.
    pub message_count: u64,
    /// Message watches (`consume = true`) that satisfied the call being checked, spent by
    /// [`GuardrailSet::check`] only if the call is allowed.
    pub pending_consume: Vec<usize>,
    /// The recording agent's own id (for `exclude-self`).
    pub agent_id: Option<String>,
    /// Equality indexes: value key -> newest sequence number.
    pub eq: Vec<FxHashMap<String, u64>>,
    /// Membership indexes: list element -> sequence numbers of the records holding it,
    /// oldest first.
    pub members: Vec<FxHashMap<String, std::collections::VecDeque<u64>>>,
    /// Semantic-constraint streaks, downgrades and operator overrides.
    pub semantic: semantic::SemanticState,
    /// Regex evaluations the engine gave up on since the replay last took them, as warning
    /// texts naming the guardrail (issue 6 T13); decided conservatively, never as "no match".
    pub undecided: Vec<String>,
    /// Guardrails already warned (in `undecided`) that a time window met a call or record
    /// without a time in this trace (issue 6 T4-10).
    time_warned: Vec<Arc<str>>,
    /// Buffer for equality-index keys (reused across calls).
    key_buf: String,
}

impl TraceState {
    /// Notes once per trace and guardrail (as a warning through `undecided`) that its time
    /// window (`window`: `per-seconds` or `max-age-seconds`) met a call or record with no
    /// recorded time, which counts as inside a `rate-limit` window and as too old for
    /// `max-age-seconds`: unknown ages never let a call through (issue 6 T4-10).
    pub fn note_unknown_time(&mut self, guardrail: &Arc<str>, window: &str) {
        if self.time_warned.contains(guardrail) {
            return;
        }
        self.time_warned.push(guardrail.clone());
        let effect = if window == "per-seconds" {
            "counts toward the limit"
        } else {
            "does not count as recent"
        };
        self.undecided.push(format!(
            "guardrail `{guardrail}`: `{window}` needs call times, but this trace has a call or record without one; a record of unknown age {effect} (fail closed; warned once per trace)"
        ));
    }

    /// Fresh state for a trace.
    pub fn new(set: &GuardrailSet, history_cap: usize, agent_id: Option<String>) -> Self {
        Self {
            history: History::with_rate_counters(
                history_cap,
                set.watches.len(),
                &set.rate_counters,
            ),
            approvals: Approvals::default(),
            messages: set
                .message_watches
                .iter()
                .map(|_| predicates::MessageState::default())
                .collect(),
            message_count: 0,
            pending_consume: Vec::new(),
            agent_id,
            eq: vec![FxHashMap::default(); set.eq_indexes.len()],
            members: vec![FxHashMap::default(); set.member_indexes.len()],
            semantic: semantic::SemanticState::with_cap(history_cap),
            undecided: Vec::new(),
            time_warned: Vec::new(),
            key_buf: String::new(),
        }
    }

    /// Marks a cell boundary (see [`History::new_cell`]).
    pub fn new_cell(&mut self, cumulative: bool) {
        self.history.new_cell(cumulative);
        if !cumulative {
            for m in &mut self.eq {
                m.clear();
            }
            for m in &mut self.members {
                m.clear();
            }
        }
    }

    /// Feeds a message record to the message watches.
    pub fn on_message(&mut self, set: &GuardrailSet, m: &MessageRecord) {
        let seq = self.message_count;
        self.message_count += 1;
        for (w, st) in set.message_watches.iter().zip(self.messages.iter_mut()) {
            w.observe(st, seq, m, &mut self.undecided);
        }
    }

    /// Appends a dispatched call to the history with status `status`, indexing it under every
    /// watch whose pattern its history keys match (`sub_bits` from the resolved key, `key_bits`
    /// from the canonical key).
    pub fn record_call(
        &mut self,
        set: &GuardrailSet,
        sub_bits: &[u64],
        key_bits: &KeyBits,
        status: CallStatus,
        call: &CallRecord,
    ) {
        let (wall, params, result) = (call.wall(), &call.params, &call.result);
        let matches_watch = |w: &Watch| {
            let hit = match set.patterns[w.pattern].mode {
                MatchMode::Substring => bit(sub_bits, w.pattern),
                MatchMode::Key if w.grant => bit(&key_bits.every, w.pattern),
                MatchMode::Key => bit(&key_bits.any, w.pattern),
            };
            hit && w.status.allows(status)
        };
        let seq = self.history.next_seq();
        for (spec, map) in set.eq_indexes.iter().zip(self.eq.iter_mut()) {
            if !matches_watch(&set.watches[spec.watch]) {
                continue;
            }
            // The key is built in a reused buffer and copied only when new (the same few
            // values recur).
            index_key_into(spec, params, result, true, &mut self.key_buf);
            match map.get_mut(self.key_buf.as_str()) {
                Some(s) => *s = seq,
                None => {
                    map.insert(self.key_buf.clone(), seq);
                }
            }
            if map.len() > 4 * self.history.cap {
                let first = self.history.first_seq();
                map.retain(|_, s| *s >= first);
            }
        }
        for (spec, map) in set.member_indexes.iter().zip(self.members.iter_mut()) {
            if !matches_watch(&set.watches[spec.watch]) {
                continue;
            }
            let obj = params.object();
            let first = self.history.first_seq();
            let mut add = |x: &str| {
                let q = map.entry(x.to_string()).or_default();
                // Records that left the history go (memory bounded by the window).
                while q.front().is_some_and(|&s| s < first) {
                    q.pop_front();
                }
                if q.back() != Some(&seq) {
                    q.push_back(seq);
                }
            };
            // The values `predicates::PriorMatch` counts as members: the list's strings, or
            // the param itself when it is a string.
            match predicates::lookup(&obj, &spec.param) {
                Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).for_each(&mut add),
                Some(Value::String(x)) => add(x),
                _ => {}
            }
            if map.len() > 4 * self.history.cap {
                let first = self.history.first_seq();
                map.retain(|_, q| {
                    while q.front().is_some_and(|&s| s < first) {
                        q.pop_front();
                    }
                    !q.is_empty()
                });
            }
        }
        let matching = set
            .watches
            .iter()
            .enumerate()
            .filter_map(|(i, w)| matches_watch(w).then_some(i));
        let entry = HistEntry {
            seq: 0,
            wall,
            status,
            params: set.needs_prior_params.then(|| params.clone()),
            result: set.needs_prior_params.then(|| result.clone()),
            parsed: OnceCell::new(),
        };
        self.history.push(entry, matching);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(h: &mut History, n: usize) {
        for _ in 0..n {
            h.push(
                HistEntry {
                    seq: 0,
                    wall: None,
                    status: CallStatus::Ok,
                    params: None,
                    result: None,
                    parsed: OnceCell::new(),
                },
                std::iter::once(0),
            );
        }
    }

    #[test]
    fn index_keys_equal_the_parsed_map_keys() {
        let spec = EqIndexSpec {
            watch: 0,
            pairs: vec![
                ("reservation_id".into(), "reservation_id".into()),
                ("n".into(), "count".into()),
            ],
        };
        let raw = |t: &str| {
            RawJson::from_raw(serde_json::value::RawValue::from_string(t.to_string()).unwrap())
        };
        let cases = [
            (r#"{"reservation_id": "X1", "n": 1}"#, r#"null"#),
            (r#"{"n": 1.0, "reservation_id": "caf\u00e9"}"#, r#"null"#),
            (r#"{"n": null}"#, r#"{"reservation_id": "R9", "n": 7}"#),
            (
                r#"{"x": {"reservation_id": "no"}}"#,
                r#""{\"reservation_id\": \"R2\"}""#,
            ),
            (
                r#"{"reservation_id": ["a", 1], "n": {"b": 2, "a": true}, "reservation_id": "dup"}"#,
                r#"null"#,
            ),
            (r#"[1, 2]"#, r#"{"reservation_id": "R3"}"#),
            (r#"{"reservation_id": "a\"b", "n": -0.5e3}"#, r#"null"#),
            (r#"{"reservation_id": "R1", "count": 2}"#, r#"null"#),
            (r#"{"reservation_id": "R1", "count": null}"#, r#"null"#),
            (
                r#"{"reservation_id": [null], "count": {"a": null}}"#,
                r#"null"#,
            ),
            (r#"{"reservation_id": "R1"}"#, r#"{"n": 3}"#),
        ];
        // The flag `index_key_into` returns: every value found (the prior's in its params,
        // else its result) and not null, as the parsed objects say.
        let complete = |names: &[&str], objects: &[&Map<String, Value>]| {
            names.iter().all(|n| {
                objects
                    .iter()
                    .find_map(|o| predicates::lookup(o, n))
                    .is_some_and(|v| !v.is_null())
            })
        };
        for (params, result) in cases {
            let (p, r) = (raw(params), raw(result));
            let (po, ro) = (p.object(), result_object(&r));
            let mut k = String::new();
            assert_eq!(
                index_key_into(&spec, &p, &r, true, &mut k),
                complete(&["reservation_id", "n"], &[&po, &ro]),
                "prior complete {params} / {result}"
            );
            assert_eq!(k, prior_key(&spec, &po, &ro), "prior {params} / {result}");
            assert_eq!(
                index_key_into(&spec, &p, &r, false, &mut k),
                complete(&["reservation_id", "count"], &[&po]),
                "target complete {params}"
            );
            assert_eq!(k, target_key(&spec, &po), "target {params}");
        }
        let none = RawJson::none();
        assert_eq!(
            index_key(&spec, &none, &none, false),
            target_key(&spec, &Map::new())
        );
        // Dotted paths go the general way.
        let dotted = EqIndexSpec {
            watch: 0,
            pairs: vec![("a.b".into(), "a.b".into())],
        };
        let p = raw(r#"{"a": {"b": 3}}"#);
        assert_eq!(
            index_key(&dotted, &p, &none, true),
            prior_key(&dotted, &p.object(), &Map::new())
        );
        let mut k = String::new();
        assert!(index_key_into(&dotted, &p, &none, false, &mut k));
        assert!(!index_key_into(
            &dotted,
            &raw(r#"{"a": {"b": null}}"#),
            &none,
            false,
            &mut k
        ));
        assert!(!index_key_into(
            &dotted,
            &raw(r#"{"a": 1}"#),
            &none,
            false,
            &mut k
        ));
    }

    #[test]
    fn history_lifecycle_colony_case_48() {
        // After cell 0 makes three calls the boundary becomes 3.
        let mut h = History::new(10_000, 1);
        push(&mut h, 3);
        h.new_cell(true);
        assert_eq!(h.cell_start(), 3);
        push(&mut h, 2);
        assert_eq!((h.len(), h.cell_start()), (5, 3));
        // Overflowing the cap by 5 shifts the boundary down by 5, clamped at 0.
        let mut h = History::new(10, 1);
        push(&mut h, 8);
        h.new_cell(true);
        assert_eq!(h.cell_start(), 8);
        push(&mut h, 7);
        assert_eq!((h.len(), h.cell_start(), h.first_seq()), (10, 3, 5));
        assert_eq!(h.hits(0).len(), 10);
        assert_eq!(h.hits(0).front(), Some(&5));
        push(&mut h, 5);
        assert_eq!(h.cell_start(), 0);
        // Per-cell epochs clear everything.
        h.new_cell(false);
        assert!(h.is_empty() && h.hits(0).is_empty());
    }

    /// Issue 6 T4-29: rate-limit counters outlive the history's FIFO cap as far as their
    /// `max` and `per-calls` window need, and no further; per-cell epochs clear them.
    #[test]
    fn rate_counters_are_not_cut_by_the_history_cap() {
        let specs = [
            RateCounterSpec {
                watch: 0,
                max: 12,
                per_calls: None,
            },
            RateCounterSpec {
                watch: 0,
                max: 3,
                per_calls: Some(20),
            },
            RateCounterSpec {
                watch: 0,
                max: 2,
                per_calls: None,
            },
        ];
        let mut h = History::with_rate_counters(10, 1, &specs);
        push(&mut h, 15);
        assert_eq!((h.len(), h.hits(0).len(), h.first_seq()), (10, 10, 5));
        let seqs = |h: &History, r: usize| -> Vec<u64> {
            h.rate_hits(r).iter().map(|&(s, _)| s).collect()
        };
        // The newest `max` = 12 matches.
        assert_eq!(seqs(&h, 0), (3..15).collect::<Vec<_>>());
        // Every match among the last 20 records (all 15 so far).
        assert_eq!(seqs(&h, 1), (0..15).collect::<Vec<_>>());
        // `max` below the cap: what the history holds.
        assert_eq!(seqs(&h, 2), (5..15).collect::<Vec<_>>());
        push(&mut h, 15);
        assert_eq!(seqs(&h, 0), (18..30).collect::<Vec<_>>());
        assert_eq!(seqs(&h, 1), (10..30).collect::<Vec<_>>());
        assert_eq!(seqs(&h, 2), (20..30).collect::<Vec<_>>());
        h.new_cell(false);
        assert!((0..3).all(|r| h.rate_hits(r).is_empty()));
    }

    /// Issue 6 T6-14: in `substring` mode, with more approved action types than the key has
    /// substrings, the check looks the key's substrings up and finds the same approvals.
    #[test]
    fn substring_approvals_with_many_types() {
        let rec = |id: String, t: String, c: &str| ApprovalRecord {
            request_id: Some(id),
            action_type: Some(t),
            choice: c.into(),
            explanation: None,
            call_id: None,
        };
        let mut a = Approvals::default();
        for i in 0..200 {
            a.add(&rec(
                format!("r{i}"),
                format!("S.S.thing{i}"),
                "approve_all",
            ));
        }
        assert_eq!(a.check(MatchMode::Substring, "S.S.cancel", None), None);
        a.add(&rec("once".into(), "CANCEL".into(), "approve_once"));
        a.add(&rec("all".into(), "s.s.Can".into(), "approve_all"));
        a.add(&rec("later".into(), "ancel".into(), "approve_all"));
        // `approve_all` first (the earliest answered of those covering), never consumed.
        assert_eq!(
            a.check(MatchMode::Substring, "S.S.cancel", None),
            Some("all".into())
        );
        assert_eq!(
            a.check(MatchMode::Substring, "S.S.cancel", None),
            Some("all".into())
        );
        assert_eq!(
            a.check(MatchMode::Substring, "X.X.cancel", None),
            Some("later".into())
        );
        // Every type occurring in the key covers it: the earliest answered wins.
        assert_eq!(
            a.check(MatchMode::Substring, "S.S.thing17x", None),
            Some("r1".into())
        );
        assert_eq!(
            a.check(MatchMode::Substring, "S.S.thing1", None),
            Some("r1".into())
        );
        assert_eq!(a.check(MatchMode::Substring, "X.Y.z", None), None);
    }

    /// Issue 6 T6-10: an answer for one call id approves that call only, is not consumed, and
    /// a rejection by id is not satisfied by another call's approval.
    #[test]
    fn per_call_approvals_answer_their_own_call_only() {
        let rec = |call: &str, c: &str| ApprovalRecord {
            request_id: Some(call.into()),
            action_type: Some("sensitive_tool".into()),
            choice: c.into(),
            explanation: None,
            call_id: Some(call.into()),
        };
        let mut a = Approvals::default();
        a.add(&rec("c2", "approve_once"));
        a.add(&rec("c1", "reject"));
        for mode in [MatchMode::Key, MatchMode::Substring] {
            assert_eq!(
                a.check_call(Some("c2"), mode, "sensitive_tool", None),
                Some("c2".into())
            );
            assert_eq!(
                a.check_call(Some("c2"), mode, "sensitive_tool", None),
                Some("c2".into())
            );
            assert_eq!(a.check_call(Some("c1"), mode, "sensitive_tool", None), None);
            assert_eq!(a.check_call(None, mode, "sensitive_tool", None), None);
            assert_eq!(a.check_call(Some("c2"), mode, "other_tool", None), None);
            // Scoped answers never reach the unscoped approvals.
            assert_eq!(a.check(mode, "sensitive_tool", None), None);
        }
        // A later answer for the same call replaces the earlier one.
        a.add(&rec("c2", "reject"));
        assert_eq!(
            a.check_call(Some("c2"), MatchMode::Key, "sensitive_tool", None),
            None
        );
    }

    #[test]
    fn approvals_follow_has_active_approval_for() {
        let rec = |id: &str, t: Option<&str>, c: &str| ApprovalRecord {
            request_id: Some(id.into()),
            action_type: t.map(Into::into),
            choice: c.into(),
            explanation: None,
            call_id: None,
        };
        let mut a = Approvals::default();
        a.add(&rec("r1", Some("X.apply"), "approve_once"));
        a.add(&rec("r2", Some("X.apply"), "reject"));
        let key = "X.X.apply";
        assert_eq!(
            a.check(MatchMode::Substring, key, None).as_deref(),
            Some("r1")
        );
        assert_eq!(a.check(MatchMode::Substring, key, None), None, "consumed");
        // A later answer to the same request replaces it in place.
        a.add(&rec("r2", Some("X.apply"), "approve_all"));
        assert_eq!(
            a.check(MatchMode::Substring, key, None).as_deref(),
            Some("r2")
        );
        assert_eq!(
            a.check(MatchMode::Substring, key, None).as_deref(),
            Some("r2")
        );
        // Typed choices are case-sensitive; legacy untyped ones are not, and cover any key.
        let mut b = Approvals::default();
        b.add(&rec("r3", Some("X.apply"), "APPROVE_ALL"));
        assert_eq!(b.check(MatchMode::Substring, key, None), None);
        b.add(&rec("r4", None, "Yes"));
        assert_eq!(
            b.check(MatchMode::Substring, "Other.o.thing", None)
                .as_deref(),
            Some("r4")
        );
    }

    /// Issue 6 T4-15: in key mode too, an approval's action type covers a key whatever the
    /// letter case (Colony compares case-insensitively), while its characters stay literal
    /// and its segments still count.
    #[test]
    fn key_mode_approvals_ignore_letter_case() {
        let gate = Pattern::compile(
            "DesignProcessCapability.create_decomposition",
            MatchMode::Key,
        )
        .unwrap();
        let key = "DesignProcessCapability.DesignProcessCapability.create_decomposition";
        for (t, covered) in [
            ("DesignProcessCapability.create_decomposition", true),
            ("designprocesscapability.create_decomposition", true),
            ("DESIGNPROCESSCAPABILITY.CREATE_DECOMPOSITION", true),
            ("CREATE_DECOMPOSITION", true),
            ("create_decomposition", true),
            (
                "designprocesscapability.designprocesscapability.create_decomposition",
                true,
            ),
            ("Other.create_decomposition", false),
            ("CREATE_DECOMPOSITION_preview", false),
            ("*", false),
            ("DESIGNPROCESSCAPABILITY.*", false),
        ] {
            let mut a = Approvals::default();
            a.add(&ApprovalRecord {
                request_id: Some("r".into()),
                action_type: Some(t.into()),
                choice: "approve_all".into(),
                explanation: None,
                call_id: None,
            });
            assert_eq!(
                a.check(MatchMode::Key, key, None).is_some(),
                covered,
                "{t} on {key}"
            );
            // An unresolved short key: the approval must cover every key the gate reaches.
            assert_eq!(
                a.check(MatchMode::Key, "create_decomposition", Some(&[&gate]))
                    .is_some(),
                covered && !t.contains('.') || t.eq_ignore_ascii_case(&gate.text),
                "{t} on the short key"
            );
        }
    }
}
