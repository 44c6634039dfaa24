//! The replay engine: recorded traces pushed through simulated runtime guardrails (spec §8).
//!
//! For each trace, record by record, the engine rebuilds the call history exactly as the
//! modelled runtime does (colony-reference §0, §2.2, §4.0, §5.9):
//!
//! - **Epochs.** `current`: the history is cumulative across cells, with a cell boundary; a
//!   block aborts the rest of the cell. `0620-0624`: atomic blocks, but the history is cleared
//!   at every cell. `pre-0620`: the history is cleared at every cell and a block does not abort
//!   the cell. The epoch comes from `--epoch`, else `[replay] epoch`, else the trace header,
//!   else `current`.
//! - **No `CallRecord` for a blocked call**: only dispatched calls enter the history, in order,
//!   capped FIFO (10 000 by default, `[replay] history-cap`), the cell boundary shifting down
//!   with evictions.
//! - **The raw key as written** is what the guardrails check in `substring` mode (Colony checks
//!   before the dispatcher resolves the key); history records carry the resolved key. In `key`
//!   mode both are matched on the canonical key (see [`crate::guardrails::matching`]).
//! - **Approvals** come from `approval` records seen so far; `approve_once` is consumed at check
//!   time.
//! - **`--on-block`** says what a simulated block does to later evaluation: `keep` (the call
//!   enters the history as recorded, counterfactually), `drop` (it does not; later calls of the
//!   cell are still evaluated), `stop-cell` (it does not and the rest of the cell is
//!   *unreached*). Default: the runtime's own behaviour for the epoch (`stop-cell` from
//!   2026-06-20, `drop` before).
//! - A recorded-blocked call that the simulation allows enters the history with status
//!   `unknown` (it would have been dispatched; its outcome was never recorded).
//! - **Cells** start at `cell` records, and when a call names a different cell. Calls before
//!   any cell information share one implicit cell with no boundaries: the history is not
//!   cleared between them (also in the per-cell epochs), cell-scoped constraints see all of
//!   them, a block under `stop-cell` ends only its own call, and each call is its own step for
//!   the completion validator (issue 6 T5-11).
//! - **Block streaks**: the same raw key blocked 3, 6, 9, ... times in a row is reported, as
//!   Colony's `BlockStreakTracker` does; a successful dispatch resets the streak (§4.0.3). One
//!   entry per streak, with the count of its last diagnostic, given to the sink when the
//!   streak ends (issue 6 T5-7).
//! - **Completions**: the rule-based validator ([`crate::completion`]) is replayed on each
//!   `completion` record.
//!
//! Other replayers (message and state policies) observe the same record stream through
//! [`Observer`] and add [`Section`]s to the same [`Report`].

use crate::completion::{self, CompletionInput, CompletionVerdict};
use crate::guardrails::config::{CompletionMode, OnBlock, ReplayConfig};
use crate::guardrails::matching::{MatchMode, Pattern};
use crate::guardrails::{Bits, CallKeys, GuardrailSet, KeyBits, KeyCache, Proposed, TraceState};
use crate::kb::KnowledgeBase;
use crate::trace::{
    CallRecord, CallStatus, CompletionRecord, Epoch, Event, ReadStats, Record, Skip, TraceInfo,
    TraceReader,
};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The simulated outcome of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The guardrails allow it.
    Allowed,
    /// A guardrail blocks it.
    Blocked,
    /// Never evaluated: an earlier call of its cell was blocked and the cell aborted.
    Unreached,
}

impl Verdict {
    /// `allowed`, `blocked` or `unreached`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allowed => "allowed",
            Verdict::Blocked => "blocked",
            Verdict::Unreached => "unreached",
        }
    }
}

/// One call's recorded outcome and simulated decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Trace name (`FILE` or `FILE#N`).
    pub trace: Arc<str>,
    /// The input file.
    pub file: Arc<str>,
    /// One-based line of the call in the input.
    pub line: u64,
    /// Cell index, when known.
    pub cell: Option<u64>,
    /// Call index within the cell.
    pub index: u64,
    /// The key the guardrails matched on in key mode (canonical), i.e. the resolved key.
    pub action_key: String,
    /// The key as written.
    pub raw_key: String,
    /// Recorded outcome.
    pub recorded: CallStatus,
    /// Simulated decision.
    pub decision: Verdict,
    /// The blocking guardrail.
    pub guardrail: Option<Arc<str>>,
    /// Its reason; for an unreached call, why it was not reached ([`unreached_reason`]: its
    /// cell aborted, or a swallowed block skipped it; issue 6 T6-19).
    pub reason: Option<String>,
    /// Its suggestion.
    pub suggestion: Option<String>,
}

impl Decision {
    /// True when the simulated outcome differs from the recorded one (dispatched vs not).
    pub fn changed(&self) -> bool {
        let recorded_dispatched = self.recorded.dispatched();
        let simulated_dispatched = self.decision == Verdict::Allowed;
        recorded_dispatched != simulated_dispatched
    }

    /// Worth listing without `--all-decisions`: blocked, unreached, or changed.
    pub fn notable(&self) -> bool {
        self.decision != Verdict::Allowed || self.changed()
    }

    /// The JSON object of spec §8 plus the call's line: `{trace, line, cell, index, action_key,
    /// raw_key, recorded, decision, guardrail, reason, suggestion}` (`line`: one-based, in the
    /// trace's file, as the text and SARIF reports locate the call).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.json_view()).unwrap_or(Value::Null)
    }

    /// Writes [`Decision::to_json`]'s object as one line of compact JSON, without building a
    /// `Value` (the json-lines stream of long traces). The line is serialized into a buffer and
    /// handed to `w` in one write (serde_json writes each token separately, and every write
    /// through `dyn Write` is a virtual call).
    ///
    /// Errors: those of `w`.
    pub fn write_json(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut line = Vec::with_capacity(256);
        serde_json::to_writer(&mut line, &self.json_view()).map_err(std::io::Error::from)?;
        line.push(b'\n');
        w.write_all(&line)
    }

    fn json_view(&self) -> DecisionJson<'_> {
        DecisionJson {
            trace: &self.trace,
            line: self.line,
            cell: self.cell,
            index: self.index,
            action_key: &self.action_key,
            raw_key: &self.raw_key,
            recorded: self.recorded.as_str(),
            decision: self.decision.as_str(),
            guardrail: self.guardrail.as_deref(),
            reason: self.reason.as_deref(),
            suggestion: self.suggestion.as_deref(),
        }
    }
}

/// The serialized form of a [`Decision`], field order as in spec §8 (`line` after `trace`).
#[derive(Serialize)]
struct DecisionJson<'a> {
    trace: &'a str,
    line: u64,
    cell: Option<u64>,
    index: u64,
    action_key: &'a str,
    raw_key: &'a str,
    recorded: &'static str,
    decision: &'static str,
    guardrail: Option<&'a str>,
    reason: Option<&'a str>,
    suggestion: Option<&'a str>,
}

/// A replayed completion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompletionDecision {
    /// Trace name.
    pub trace: Arc<str>,
    /// Input file.
    pub file: Arc<str>,
    /// One-based line.
    pub line: u64,
    /// Cell index.
    pub cell: Option<u64>,
    /// Recorded verdict (`None` when not recorded).
    pub recorded: Option<bool>,
    /// Simulated verdict: `None` when unreached (its cell aborted) or undecidable.
    pub simulated: Option<CompletionVerdict>,
    /// True when its cell was aborted before it.
    pub unreached: bool,
}

impl CompletionDecision {
    /// True when recorded and simulated verdicts are both known and differ (or it is unreached).
    pub fn changed(&self) -> bool {
        match (&self.simulated, self.recorded) {
            (Some(s), Some(r)) => s.allowed != r,
            _ => self.unreached && self.recorded.is_some(),
        }
    }
}

/// A block streak (Colony `BlockStreakTracker`, colony-reference §4.0.3): the same key blocked
/// again and again. Colony emits a diagnostic at counts 3, 6, 9, ...; the replay reports one
/// entry per streak, with its last diagnostic (issue 6 T5-7: a streak of a million blocks is
/// one entry, not 333,333).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockStreak {
    /// Trace name.
    pub trace: Arc<str>,
    /// Input file.
    pub file: Arc<str>,
    /// Line of the block that reached the count (the streak's last diagnostic).
    pub line: u64,
    /// The key as written.
    pub action_key: String,
    /// Consecutive blocks of that key at the last diagnostic (a multiple of 3; Colony emitted
    /// `count / 3` diagnostics for the streak).
    pub count: u64,
    /// The latest block's reason.
    pub reason: String,
    /// The latest block's suggestion.
    pub suggestion: String,
}

/// Totals of one trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TraceTotals {
    /// Trace name.
    pub trace: Arc<str>,
    /// The trace's file, as the decisions' `file` names it.
    #[serde(skip)]
    pub file: Arc<str>,
    /// The agent that recorded the trace, from its header (`agent_id`: a native header, a
    /// colony-replay recording, the cells of codegen iterations, each agent of a span export;
    /// issue 6 T5-6); `None` when the recording names none.
    pub agent_id: Option<String>,
    /// The format it was read as.
    pub format: String,
    /// Calls.
    pub calls: u64,
    /// Allowed.
    pub allowed: u64,
    /// Blocked.
    pub blocked: u64,
    /// Unreached.
    pub unreached: u64,
    /// Calls whose outcome would change.
    pub changed: u64,
    /// Semantics epoch used.
    pub epoch: String,
    /// On-block mode used.
    pub on_block: String,
    /// The config file whose guardrails replayed the trace, as given or found
    /// ([`Options::config`]); `None` when no config was in effect.
    pub config: Option<Arc<str>>,
}

/// Run-wide totals (spec §8 `summary`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Traces replayed.
    pub traces: u64,
    /// Calls.
    pub calls: u64,
    /// Allowed.
    pub allowed: u64,
    /// Blocked.
    pub blocked: u64,
    /// Unreached.
    pub unreached: u64,
    /// Calls whose outcome would change.
    pub changed: u64,
    /// Source records read.
    pub records_read: u64,
    /// Source records skipped.
    pub records_skipped: u64,
    /// Blocks per guardrail id, in config order (every configured id, zero included).
    pub per_guardrail: Vec<(Arc<str>, u64)>,
    /// Completions replayed.
    pub completions: u64,
    /// Completions whose verdict would change.
    pub completions_changed: u64,
}

impl Summary {
    /// The JSON object of spec §8 (plus `records_read`).
    pub fn to_json(&self) -> Value {
        let per: serde_json::Map<String, Value> = self
            .per_guardrail
            .iter()
            .map(|(id, n)| (id.to_string(), Value::from(*n)))
            .collect();
        json!({
            "traces": self.traces,
            "calls": self.calls,
            "allowed": self.allowed,
            "blocked": self.blocked,
            "unreached": self.unreached,
            "records_read": self.records_read,
            "records_skipped": self.records_skipped,
            "per_guardrail": per,
        })
    }
}

/// A report section contributed by another replayer (message/state policies): rendered by
/// every output format next to the guardrail results.
pub trait Section: Send {
    /// Section title (text and HTML headings).
    fn title(&self) -> String;
    /// Top-level keys added to the `json` output.
    fn json(&self) -> Vec<(String, Value)>;
    /// Lines emitted by `json-lines` before the summary.
    fn json_lines(&self) -> Vec<Value> {
        Vec::new()
    }
    /// Plain-text rendering.
    fn text(&self) -> String;
    /// A self-contained HTML fragment (inline SVG allowed), e.g. a context-size plot per trace.
    fn html(&self) -> String;
    /// SARIF `results` entries.
    fn sarif_results(&self) -> Vec<Value> {
        Vec::new()
    }
    /// SARIF rule descriptors for the `ruleId`s of [`Section::sarif_results`].
    fn sarif_rules(&self) -> Vec<Value> {
        Vec::new()
    }
    /// True when the section has findings (exit code 1).
    fn has_findings(&self) -> bool {
        false
    }
}

/// Something that watches the record stream next to the guardrail replay.
pub trait Observer {
    /// A trace begins.
    fn trace_start(&mut self, info: &TraceInfo);
    /// A record of the current trace.
    fn record(&mut self, info: &TraceInfo, line: u64, record: &Record);
    /// The current trace ended.
    fn trace_end(&mut self, info: &TraceInfo);
    /// All input is read: the observer's report sections.
    fn finish(self: Box<Self>) -> Vec<Box<dyn Section>>;
}

/// Warnings: the first [`MAX_KEPT_SKIPS`] kept (read as a slice), and how many there were in
/// all (issue 6 N2-4: the count of those not listed is reported).
#[derive(Debug, Default, Clone)]
pub struct Warnings {
    kept: Vec<Skip>,
    total: u64,
}

impl Warnings {
    /// Counts a warning, keeping it when fewer than [`MAX_KEPT_SKIPS`] are kept.
    pub fn push(&mut self, w: Skip) {
        self.total += 1;
        if self.kept.len() < MAX_KEPT_SKIPS {
            self.kept.push(w);
        }
    }

    /// Every warning, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The warnings counted but not kept.
    pub fn not_kept(&self) -> u64 {
        self.total.saturating_sub(self.kept.len() as u64)
    }

    /// Adds `other`'s warnings after these (kept while there is room; all counted).
    fn merge(&mut self, other: Warnings) {
        let total = self.total + other.total;
        let room = MAX_KEPT_SKIPS.saturating_sub(self.kept.len());
        self.kept.extend(other.kept.into_iter().take(room));
        self.total = total;
    }
}

impl std::ops::Deref for Warnings {
    type Target = [Skip];
    fn deref(&self) -> &[Skip] {
        &self.kept
    }
}

impl<'a> IntoIterator for &'a Warnings {
    type Item = &'a Skip;
    type IntoIter = std::slice::Iter<'a, Skip>;
    fn into_iter(self) -> Self::IntoIter {
        self.kept.iter()
    }
}

/// The whole report.
#[derive(Default)]
pub struct Report {
    /// Totals.
    pub summary: Summary,
    /// Listed decisions (notable ones, or all with `all_decisions`), in trace order.
    pub decisions: Vec<Decision>,
    /// Per-trace totals, in order (none when [`Options::keep_traces`] is off).
    pub traces: Vec<TraceTotals>,
    /// Replayed completions.
    pub completions: Vec<CompletionDecision>,
    /// Block-streak diagnostics, in order.
    pub streaks: Vec<BlockStreak>,
    /// Skipped records (the first [`MAX_KEPT_SKIPS`]; the count is in the summary).
    pub skipped: Vec<Skip>,
    /// Reader and replay warnings (the first [`MAX_KEPT_SKIPS`] kept, all counted).
    pub warnings: Warnings,
    /// Matching mode, for the header of renderings.
    pub mode: MatchMode,
    /// When the guardrails use both matching modes: which guardrail uses which
    /// (`key: a, b; substring: c`), for the summary line.
    pub mixed_modes: Option<String>,
    /// Sections from other replayers.
    pub sections: Vec<Box<dyn Section>>,
}

impl Report {
    /// Appends the report of another run (the traces of another config, issue 6 T4-7) after
    /// this one's: totals add up, blocks per guardrail add up by id (ids new to this report are
    /// appended in the other's order), listed decisions, traces, completions and streaks follow
    /// this report's, kept skips and warnings stay within [`MAX_KEPT_SKIPS`], and sections are
    /// appended. When the two runs match differently, the matching mode becomes mixed: each
    /// side's description (its `mixed_modes`, else `MODE: ids`) joined with `; `.
    pub fn merge(&mut self, other: Report) {
        let (a, b) = (&mut self.summary, other.summary);
        a.traces += b.traces;
        a.calls += b.calls;
        a.allowed += b.allowed;
        a.blocked += b.blocked;
        a.unreached += b.unreached;
        a.changed += b.changed;
        a.records_read += b.records_read;
        a.records_skipped += b.records_skipped;
        a.completions += b.completions;
        a.completions_changed += b.completions_changed;
        let describe = |mode: MatchMode, mixed: &Option<String>, per: &[(Arc<str>, u64)]| {
            mixed.clone().unwrap_or_else(|| {
                let ids: Vec<&str> = per.iter().map(|(id, _)| &**id).collect();
                format!("{}: {}", mode.as_str(), ids.join(", "))
            })
        };
        if self.mode != other.mode || self.mixed_modes.is_some() || other.mixed_modes.is_some() {
            let mine = describe(self.mode, &self.mixed_modes, &a.per_guardrail);
            let theirs = describe(other.mode, &other.mixed_modes, &b.per_guardrail);
            self.mixed_modes = Some(if mine == theirs {
                mine
            } else {
                format!("{mine}; {theirs}")
            });
        }
        for (id, n) in b.per_guardrail {
            match a.per_guardrail.iter_mut().find(|(x, _)| *x == id) {
                Some((_, m)) => *m += n,
                None => a.per_guardrail.push((id, n)),
            }
        }
        self.decisions.extend(other.decisions);
        self.traces.extend(other.traces);
        self.completions.extend(other.completions);
        self.streaks.extend(other.streaks);
        let room = MAX_KEPT_SKIPS.saturating_sub(self.skipped.len());
        self.skipped.extend(other.skipped.into_iter().take(room));
        self.warnings.merge(other.warnings);
        self.sections.extend(other.sections);
    }
}

impl std::fmt::Debug for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Report")
            .field("summary", &self.summary)
            .field("decisions", &self.decisions.len())
            .field("sections", &self.sections.len())
            .finish()
    }
}

/// Skips and warnings kept in the report (all are counted).
pub const MAX_KEPT_SKIPS: usize = 1000;

/// Run options from the command line (each overrides `[replay]`).
#[derive(Debug, Clone)]
pub struct Options {
    /// `--on-block`.
    pub on_block: Option<OnBlock>,
    /// `--epoch`.
    pub epoch: Option<Epoch>,
    /// `--all-decisions`: list every call, not only notable ones.
    pub all_decisions: bool,
    /// Keep listed decisions in the report (off when they are streamed to a sink, so memory
    /// stays bounded).
    pub keep_decisions: bool,
    /// Keep block streaks in the report (off when the sink writes them as they end,
    /// [`DecisionSink::streak`], so memory stays bounded; issue 6 T5-7).
    pub keep_streaks: bool,
    /// Keep each trace's totals in the report's `traces` (off when the sink writes or spools
    /// them as each trace ends, [`DecisionSink::trace_end`], so memory stays flat in the number
    /// of traces; issue 6 T5-16). The summary counts every trace either way.
    pub keep_traces: bool,
    /// The path of the config the guardrails come from, as shown in the report's per-trace
    /// totals ([`TraceTotals::config`]); `None` when the run has no config file.
    pub config: Option<Arc<str>>,
    /// Qualify every guardrail id the report shows by [`Options::config`], as `CONFIG:ID`
    /// (decisions' `guardrail`, blocks per guardrail, the matching summary): set when one
    /// report merges runs of different configs, whose ids may coincide (issue 6 T6-6). No
    /// effect without a config.
    pub qualify_ids: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            on_block: None,
            epoch: None,
            all_decisions: false,
            keep_decisions: true,
            keep_streaks: true,
            keep_traces: true,
            config: None,
            qualify_ids: false,
        }
    }
}

/// Receives the listed decisions (blocked, unreached or changed calls; every call with
/// `all_decisions`) as they are made, for streaming output.
pub trait DecisionSink {
    /// One listed decision.
    fn decision(&mut self, d: &Decision);
    /// A block streak ended (a successful dispatch, a block of another key, or the end of the
    /// trace), with its last diagnostic; given before the decision that ended it, in the order
    /// the report's `streaks` get them. A streaming report writes it here (issue 6 T5-7), the
    /// others spool it (issue 6 T6-11).
    fn streak(&mut self, _s: &BlockStreak) {}
    /// The current trace ended: its totals, the value the report's `traces` gets. Called once
    /// per trace, after its last decision and streak; a streaming report writes the totals and
    /// flushes here (issue 6 T10).
    fn trace_end(&mut self, _totals: &TraceTotals) {}
}

impl<F: FnMut(&Decision)> DecisionSink for F {
    fn decision(&mut self, d: &Decision) {
        self(d)
    }
}

struct CellStats {
    domain_ok: bool,
    failed: bool,
}

struct Run<'a> {
    info: TraceInfo,
    name: Arc<str>,
    file: Arc<str>,
    epoch: Epoch,
    epoch_fixed: bool,
    on_block: OnBlock,
    on_block_fixed: bool,
    state: TraceState,
    cell: Option<u64>,
    cells_seen: bool,
    aborted: bool,
    /// Why the current cell's later calls are unreached, once `aborted` or `swallowed` is set.
    stop: Stop,
    /// Set with `aborted` when the aborting block was also recorded as blocked: a later record
    /// of the same cell then proves the recording's cell went on (the block was swallowed by a
    /// `try/except` in the cell, colony-reference §4.0.1). Holds the cell's `failed` flag from
    /// before the block.
    swallow_evidence: Option<bool>,
    pos: u64,
    last_time: Option<f64>,
    totals: TraceTotals,
    goals: Option<Vec<String>>,
    streak: Option<(String, u64)>,
    /// The current streak's last diagnostic, once it reached 3 blocks.
    open_streak: Option<BlockStreak>,
    cell_stats: CellStats,
    has_domain_work: bool,
    /// The epoch came from the CLI, the config or the trace (not the default).
    epoch_known: bool,
    /// The current cell's code, to tell whether a block is swallowed
    /// ([`crate::trace::colony::block_swallowed`]).
    cell_code: Option<String>,
    /// A block swallowed inside the current cell: which of the cell's later calls it skips
    /// (the rest of the catching `try` body; issue 6 T5-4).
    swallowed: Option<crate::trace::colony::Swallowed>,
    /// Raw keys whose knowledge-base resolution disagreed with the recorded key (warned once).
    kb_warned: rustc_hash::FxHashSet<Box<str>>,
    /// A call with only a resolved key was warned about under `substring` matching (once per
    /// trace, issue 6 T7-13).
    raw_unknown_warned: bool,
    /// A call recorded as blocked that the simulation allows was reported (once per trace,
    /// issue 6 T7-14).
    unblocked_warned: bool,
    cfg: &'a ReplayConfig,
}

/// The day Colony's code-generation policy and its runtime guardrails became the default
/// (colony-reference §0, 2026-04-08): a call dated earlier is no Colony guardrail recording.
const COLONY_CODEGEN_FROM: &str = "2026-04-08T00:00:00Z";

/// Colony's default planning capabilities (colony-reference §2.3: cache analysis, plan
/// learning, plan coordination, plan evaluation, replanning; class names as in Colony's
/// knowledge base): their actions are planning actions, not domain work, for the rule-based
/// completion validator (§5.4 `planning_actions`, §6) when the config sets no
/// `planning-patterns` and the knowledge base flags no planning action (issue 6 T4-25).
/// A key counts when its first segment (the capability class) is one of these and it has more
/// segments.
pub const DEFAULT_PLANNING: [&str; 5] = [
    "CacheAnalysisCapability",
    "PlanLearningCapability",
    "PlanCoordinationCapability",
    "PlanEvaluationCapability",
    "ReplanningCapability",
];

/// Which calls are planning actions, not domain work, for the rule-based completion validator
/// (colony-reference §5.4 `planning_actions`, §6): the config's `planning-patterns`, the
/// knowledge base's planning flags, else Colony's default planning capabilities
/// ([`DEFAULT_PLANNING`]).
struct PlanningTest {
    /// Some knowledge-base action is flagged as planning.
    kb_has_planning: bool,
    /// `planning-patterns`, compiled in key mode.
    patterns: Vec<Pattern>,
    /// Whether Colony's default planning capabilities ([`DEFAULT_PLANNING`]) apply: neither the
    /// config (`planning-patterns`) nor the knowledge base says which actions are planning.
    default: bool,
}

impl PlanningTest {
    /// True when the call with `keys` is a planning action.
    fn test(&self, kb: &KnowledgeBase, keys: &CallKeys) -> bool {
        // The defaults name the capability class: the first segment of a resolved key; of an
        // unresolved one, the first of the last three segments it resolves to (a key with
        // fewer segments could be any class's action and does not count).
        if self.default {
            let class = if keys.partial {
                nth_last_segment(keys.canonical, 2)
            } else {
                keys.canonical.split_once('.').map(|(c, _)| c)
            };
            if class.is_some_and(|c| DEFAULT_PLANNING.contains(&c)) {
                return true;
            }
        }
        if self.patterns.is_empty() && !self.kb_has_planning {
            return false;
        }
        if let Some(a) = kb.get(keys.canonical) {
            if a.planning {
                return true;
            }
        }
        self.patterns
            .iter()
            .any(|p| p.matches(keys.canonical, "", keys.partial))
    }
}

/// `key.rsplit('.').nth(n)`, by a byte scan (it runs on every call of a trace).
fn nth_last_segment(key: &str, n: usize) -> Option<&str> {
    let b = key.as_bytes();
    let mut end = b.len();
    for _ in 0..n {
        end = b[..end].iter().rposition(|&c| c == b'.')?;
    }
    let start = b[..end]
        .iter()
        .rposition(|&c| c == b'.')
        .map_or(0, |i| i + 1);
    // Both ends are at ASCII dots (or the ends of the key): char boundaries.
    key.get(start..end)
}

/// The guardrail replayer. Feed it reader events; collect the report at the end.
/// Cell codes whose call-site analyses [`SwallowCache`] keeps.
const SWALLOW_CODES: usize = 16;

/// The call-site analyses ([`crate::trace::colony::CellSites`]) of the cell codes seen last
/// (issue 6 T5-17): analysing a cell's code (its parse, constants and each site's catcher) costs
/// 0.5-2 ms of CPU for 35-120 lines, and a cell's code is the same for every block in it and
/// often for many cells. Each code is analysed once; each block is then placed by a lookup
/// over the sites, which gives the same result as analysing the code again, so the replay's
/// decisions do not change. At most [`SWALLOW_CODES`] codes (the least recently used dropped
/// first), so memory stays flat over any number of cells.
#[derive(Default)]
struct SwallowCache {
    /// Most recently used last.
    codes: Vec<(Box<str>, crate::trace::colony::CellSites)>,
    /// Codes analysed so far (for the tests).
    #[cfg(test)]
    analyses: usize,
}

impl SwallowCache {
    /// How a block of the call with key as written `raw` (resolving to `resolved`), the
    /// call after `before` earlier ones of its cell, ends in the cell `code`: as
    /// [`crate::trace::colony::swallowed_block`] says, with the code analysed once.
    fn swallowed(
        &mut self,
        code: &str,
        raw: &str,
        resolved: &str,
        before: u64,
    ) -> Option<crate::trace::colony::Swallowed> {
        match self.codes.iter().rposition(|(c, _)| **c == *code) {
            Some(i) => {
                let e = self.codes.remove(i);
                self.codes.push(e);
            }
            None => {
                if self.codes.len() >= SWALLOW_CODES {
                    self.codes.remove(0);
                }
                #[cfg(test)]
                {
                    self.analyses += 1;
                }
                self.codes
                    .push((code.into(), crate::trace::colony::CellSites::new(code)));
            }
        }
        self.codes
            .last()
            .and_then(|(_, sites)| sites.swallowed_block(raw, resolved, before))
    }
}

pub struct Replayer<'a> {
    cfg: &'a ReplayConfig,
    kb: &'a KnowledgeBase,
    opts: Options,
    cache: KeyCache,
    canon: rustc_hash::FxHashMap<Box<str>, Option<usize>>,
    planning: PlanningTest,
    run: Option<Run<'a>>,
    report: Report,
    per_guardrail: HashMap<Arc<str>, u64>,
    ids: Vec<Arc<str>>,
    /// Whether any pattern uses (substring, key) matching.
    modes: (bool, bool),
    /// The empty pattern set.
    no_bits: Bits,
    /// Swallowed-block analyses of recent cell codes.
    swallow_cache: SwallowCache,
    /// Each guardrail id and the id the report shows for it, when ids are qualified
    /// ([`Options::qualify_ids`]); empty otherwise.
    shown_ids: rustc_hash::FxHashMap<Arc<str>, Arc<str>>,
    /// Each composite member's (shown) id and its composites' (shown) ids: a member's block
    /// counts for its composites too (T8-1).
    ancestors: rustc_hash::FxHashMap<Arc<str>, Vec<Arc<str>>>,
}

impl<'a> Replayer<'a> {
    /// A replayer for `cfg`, resolving keys through `kb` (may be empty).
    pub fn new(cfg: &'a ReplayConfig, kb: &'a KnowledgeBase, opts: Options) -> Self {
        let prefix = opts.config.clone().filter(|_| opts.qualify_ids);
        let shown_ids: rustc_hash::FxHashMap<Arc<str>, Arc<str>> = match &prefix {
            Some(p) => cfg
                .guardrails
                .ids()
                .into_iter()
                .map(|id| {
                    let q = Arc::from(format!("{p}:{id}"));
                    (id, q)
                })
                .collect(),
            None => rustc_hash::FxHashMap::default(),
        };
        let ids: Vec<Arc<str>> = cfg
            .guardrails
            .ids()
            .into_iter()
            .map(|id| shown_ids.get(&id).cloned().unwrap_or(id))
            .collect();
        let show = |id: Arc<str>| shown_ids.get(&id).cloned().unwrap_or(id);
        let ancestors = cfg
            .guardrails
            .guardrails
            .iter()
            .flat_map(|g| g.member_ancestors())
            .map(|(id, up)| (show(id), up.into_iter().map(show).collect()))
            .collect();
        Self {
            ancestors,
            cfg,
            kb,
            opts,
            cache: KeyCache::default(),
            canon: Default::default(),
            planning: PlanningTest {
                kb_has_planning: kb.actions.iter().any(|a| a.planning),
                patterns: cfg
                    .settings
                    .planning
                    .iter()
                    .filter_map(|p| Pattern::compile(p, MatchMode::Key).ok())
                    .collect(),
                default: cfg.settings.planning.is_empty() && !kb.actions.iter().any(|a| a.planning),
            },
            run: None,
            report: Report {
                mode: single_mode(&cfg.guardrails.guardrails).unwrap_or(cfg.settings.mode),
                mixed_modes: mixed_modes(&cfg.guardrails.guardrails, prefix.as_deref()),
                ..Default::default()
            },
            per_guardrail: HashMap::new(),
            ids,
            modes: (
                cfg.guardrails
                    .patterns
                    .iter()
                    .any(|p| p.mode == MatchMode::Substring),
                cfg.guardrails
                    .patterns
                    .iter()
                    .any(|p| p.mode == MatchMode::Key),
            ),
            no_bits: vec![0u64; cfg.guardrails.patterns.len().div_ceil(64).max(1)].into(),
            swallow_cache: SwallowCache::default(),
            shown_ids,
        }
    }

    fn set(&self) -> &'a GuardrailSet {
        &self.cfg.guardrails
    }

    /// Feeds one reader event; decisions go to `sink` as they are made.
    pub fn event(&mut self, e: &Event, sink: &mut dyn DecisionSink) {
        match e {
            Event::TraceStart(info) => {
                self.end_trace(sink);
                self.start_trace(info);
            }
            Event::Record { line, record } => {
                if self.run.is_none() {
                    // Records before any trace start belong to an anonymous trace.
                    self.start_trace(&TraceInfo {
                        name: "<trace>".into(),
                        path: "<trace>".into(),
                        format: crate::trace::Format::Native,
                    });
                }
                self.record(*line, record, sink);
            }
            Event::Skipped(s) => {
                if self.report.skipped.len() < MAX_KEPT_SKIPS {
                    self.report.skipped.push(s.clone());
                }
            }
            Event::Warning(w) => self.report.warnings.push(w.clone()),
        }
    }

    /// Adds a finished reader's counters.
    pub fn add_stats(&mut self, s: &ReadStats) {
        self.report.summary.records_read += s.read;
        self.report.summary.records_skipped += s.skipped;
    }

    /// Replays every event of `reader`, then adds its counters.
    pub fn replay_reader(&mut self, reader: &mut dyn TraceReader, sink: &mut dyn DecisionSink) {
        for e in &mut *reader {
            self.event(&e, sink);
        }
        self.end_trace(sink);
        let stats = reader.stats();
        self.add_stats(&stats);
    }

    /// The trace currently being replayed.
    pub fn current_trace(&self) -> Option<&TraceInfo> {
        self.run.as_ref().map(|r| &r.info)
    }

    fn start_trace(&mut self, info: &TraceInfo) {
        let s = &self.cfg.settings;
        let epoch = self.opts.epoch.or(s.epoch);
        let on_block = self.opts.on_block.or(s.on_block);
        let e = epoch.unwrap_or_default();
        let name: Arc<str> = info.name.as_str().into();
        let ob = on_block.unwrap_or(OnBlock::for_epoch(e));
        let file: Arc<str> = info.path.display().to_string().into();
        self.run = Some(Run {
            info: info.clone(),
            name: name.clone(),
            file: file.clone(),
            epoch: e,
            epoch_fixed: epoch.is_some(),
            on_block: ob,
            on_block_fixed: on_block.is_some(),
            state: TraceState::new(&self.cfg.guardrails, s.history_cap, s.agent_id.clone()),
            cell: None,
            cells_seen: false,
            aborted: false,
            stop: Stop::Aborted(0),
            swallow_evidence: None,
            pos: 0,
            last_time: None,
            totals: TraceTotals {
                trace: name,
                file,
                format: info.format.as_str().into(),
                epoch: e.as_str().into(),
                on_block: ob.as_str().into(),
                config: self.opts.config.clone(),
                ..Default::default()
            },
            goals: None,
            streak: None,
            open_streak: None,
            cell_stats: CellStats {
                domain_ok: false,
                failed: false,
            },
            has_domain_work: false,
            kb_warned: Default::default(),
            raw_unknown_warned: false,
            unblocked_warned: false,
            epoch_known: epoch.is_some(),
            cell_code: None,
            swallowed: None,
            cfg: self.cfg,
        });
    }

    /// Closes the current trace: its totals join the summary and the report, and `sink` gets
    /// them with the trace's block streaks.
    fn end_trace(&mut self, sink: &mut dyn DecisionSink) {
        if let Some(mut run) = self.run.take() {
            run.finish_cell();
            close_streak(
                &mut run.open_streak,
                &mut self.report.streaks,
                self.opts.keep_streaks,
                sink,
            );
            sink.trace_end(&run.totals);
            let t = &run.totals;
            let s = &mut self.report.summary;
            s.traces += 1;
            s.calls += t.calls;
            s.allowed += t.allowed;
            s.blocked += t.blocked;
            s.unreached += t.unreached;
            s.changed += t.changed;
            if self.opts.keep_traces {
                self.report.traces.push(run.totals);
            }
        }
    }

    /// Finishes the run and returns the report.
    pub fn finish(mut self) -> Report {
        // A trace still open (a caller feeding [`Replayer::event`] without
        // [`Replayer::replay_reader`]) is closed without a sink.
        self.end_trace(&mut |_: &Decision| {});
        self.report.summary.per_guardrail = self
            .ids
            .iter()
            .map(|id| (id.clone(), self.per_guardrail.get(id).copied().unwrap_or(0)))
            .collect();
        self.report
    }

    fn record(&mut self, line: u64, record: &Record, sink: &mut dyn DecisionSink) {
        match record {
            Record::Call(c) => return self.call(line, c, sink),
            Record::Completion(c) => return self.completion(line, c),
            _ => {}
        }
        let set = self.set();
        let Some(run) = self.run.as_mut() else { return };
        match record {
            Record::Header(h) => {
                run.epoch_known |= h.epoch.is_some();
                if !run.epoch_fixed {
                    if let Some(e) = h.epoch {
                        run.epoch = e;
                        run.totals.epoch = e.as_str().into();
                        if !run.on_block_fixed {
                            run.on_block = OnBlock::for_epoch(e);
                            run.totals.on_block = run.on_block.as_str().into();
                        }
                    }
                }
                if h.agent_id.is_some() {
                    run.state.agent_id = h.agent_id.clone();
                    run.totals.agent_id = h.agent_id.clone();
                }
                if h.goals.is_some() {
                    run.goals = h.goals.clone();
                }
            }
            Record::Cell(c) => {
                run.new_cell(c.index);
                run.cells_seen = true;
                run.cell_code.clone_from(&c.code);
            }
            Record::Call(_) | Record::Completion(_) => {}
            Record::Approval(a) => run.state.approvals.add(a),
            Record::Message(m) => {
                run.state.on_message(set, m);
                note_undecided(&mut self.report.warnings, &run.file, line, &mut run.state);
            }
            Record::Override(o) => run
                .state
                .semantic
                .set_disabled(&o.constraint_id, o.disabled),
            Record::Inference(_) | Record::State(_) => {}
        }
    }

    /// The action index the knowledge base resolves `raw` to (cached per raw key).
    fn kb_index(&mut self, raw: &str) -> Option<usize> {
        if self.kb.is_empty() {
            return None;
        }
        if let Some(&k) = self.canon.get(raw) {
            return k;
        }
        let mut k = self.kb.resolve(raw).action();
        // A full key of a class the KB names as dynamic (`dynamic_segments`, e.g.
        // `CodeGenerationActionPolicy.*`: a per-process middle segment) is a key of the live
        // registry, where Colony's dispatcher finds it by exact match; a static KB that lists the
        // action under another class (a base class) must not move it there (issue 6 T4-27).
        if let Some(i) = k {
            let mut segs = raw.split('.');
            let class = segs.next().unwrap_or("");
            let full = segs.count() == 2;
            if full
                && self.kb.actions[i].key.split('.').next() != Some(class)
                && self
                    .kb
                    .dynamic_segments
                    .iter()
                    .any(|d| d.strip_suffix(".*") == Some(class))
            {
                k = None;
            }
        }
        if self.canon.len() > 100_000 {
            self.canon.clear();
        }
        self.canon.insert(raw.into(), k);
        k
    }

    fn keys<'c>(&mut self, c: &'c CallRecord) -> CallKeys<'c>
    where
        'a: 'c,
    {
        let raw = c.raw();
        let kb: &'a KnowledgeBase = self.kb;
        let kb_key = self.kb_index(raw).map(|i| kb.actions[i].key.as_str());
        let recorded = c.action_key.as_deref().filter(|k| !k.is_empty());
        // The recorded resolved key is what the runtime dispatched (colony-reference §5.1,
        // §5.9 step 3): it wins over the knowledge base's guess (issue 6 T4-22).
        let resolved = recorded.or(kb_key).unwrap_or(raw);
        // Unresolved: matched against every key Colony's dispatcher could resolve it to
        // (suffix match for short keys, prefix strip for long ones; see `matching`).
        let partial = kb_key.is_none() && recorded.is_none();
        CallKeys {
            raw,
            resolved,
            canonical: resolved,
            partial,
        }
    }

    /// Warns (once per trace and raw key) when the knowledge base resolves `raw` to another key
    /// than the one the trace records: the recorded key is used (issue 6 T4-22). Without a
    /// knowledge-base resolution, and when a guardrail matches in `key` mode, warns when the
    /// recorded key is none Colony's dispatcher could resolve `raw` to ([`dispatch_reaches`]):
    /// a trace writer's bug or a tampered trace that would otherwise move a gated call out of
    /// its rules silently (issue 6 T5-10).
    fn note_kb_disagreement(&mut self, line: u64, raw: &str, recorded: &str) {
        let message = match self.kb_index(raw) {
            Some(i) => {
                let kb_key = self.kb.actions[i].key.as_str();
                if kb_key == recorded {
                    return;
                }
                format!(
                    "the knowledge base resolves `{raw}` to `{kb_key}`, but the trace records the call as dispatched to `{recorded}`; the recorded key is checked"
                )
            }
            None => {
                if !self.modes.1 || dispatch_reaches(raw, recorded) {
                    return;
                }
                format!(
                    "the trace records `{raw}` as dispatched to `{recorded}`, a key Colony's dispatcher cannot resolve `{raw}` to (exact match, suffix match of a short key, prefix strip; colony-reference §2.3); `key` mode checks the recorded key, so rules on `{raw}` do not apply to this call: check the trace writer"
                )
            }
        };
        let Some(run) = self.run.as_mut() else { return };
        if run.kb_warned.len() >= MAX_KEPT_SKIPS || !run.kb_warned.insert(raw.into()) {
            return;
        }
        warn(&mut self.report.warnings, &run.file, line, message);
    }

    /// Warns, once per trace, that a call's key as written is unknown (only the resolved
    /// `action_key` is recorded) while a guardrail matches in `substring` mode: the resolved
    /// key is checked in its place, whereas Colony checks the key as written
    /// (colony-reference §4.5 bypasses; issue 6 T7-13).
    fn note_raw_unknown(&mut self, line: u64, resolved: &str) {
        let Some(run) = self.run.as_mut() else { return };
        if run.raw_unknown_warned {
            return;
        }
        run.raw_unknown_warned = true;
        warn(
            &mut self.report.warnings,
            &run.file,
            line,
            format!(
                "the key as written of the call of `{resolved}` is unknown (the record has only the resolved `action_key`, no `raw_key`): `substring` matching checks the resolved key in its place, while Colony checks the key as written (a short key or a custom middle segment is gated differently); warned once per trace"
            ),
        );
    }

    fn call(&mut self, line: u64, c: &CallRecord, sink: &mut dyn DecisionSink) {
        let keys = self.keys(c);
        if self.modes.0 && c.raw_key.is_none() {
            if let Some(resolved) = c.action_key.as_deref().filter(|k| !k.is_empty()) {
                self.note_raw_unknown(line, resolved);
            }
        }
        if let Some(rec) = c.action_key.as_deref().filter(|k| !k.is_empty()) {
            self.note_kb_disagreement(line, keys.raw, rec);
        }
        let set = self.set();
        let all = self.opts.all_decisions;
        // Pattern bits per matching mode; a mode no pattern uses costs nothing.
        let sub_bits: Bits = if self.modes.0 {
            self.cache.substring(set, keys.raw)
        } else {
            self.no_bits.clone()
        };
        let key_bits: KeyBits = if self.modes.1 {
            self.cache.key(set, keys.canonical, keys.partial)
        } else {
            KeyBits {
                any: self.no_bits.clone(),
                every: self.no_bits.clone(),
            }
        };
        let hist_sub: Bits = if keys.resolved == keys.raw || !self.modes.0 {
            sub_bits.clone()
        } else {
            self.cache.substring(set, keys.resolved)
        };
        let Some(run) = self.run.as_mut() else { return };
        match c.cell {
            Some(ci) if run.cell != Some(ci) || !run.cells_seen => {
                run.new_cell(Some(ci));
                run.cells_seen = true;
            }
            // No cell information so far: no boundary to go by (issue 6 T5-11).
            _ => {}
        }
        run.resume_if_swallowed();
        if !run.epoch_known {
            // Only the first call is looked at: the epoch cannot change mid-trace.
            run.epoch_known = true;
            if let Some(t) = c.start.or(c.end) {
                let era = crate::trace::convert::parse_rfc3339(COLONY_CODEGEN_FROM).unwrap_or(0.0);
                let e = crate::trace::colony::epoch_of_time(t);
                if t >= era && e != run.epoch {
                    warn(
                        &mut self.report.warnings,
                        &run.file,
                        line,
                        format!(
                            "the trace names no semantics epoch (header `epoch` or `recorded_at`) and is replayed as `{}`, but its first call is dated in the `{}` epoch; if it is a Colony recording of that time, pass `--epoch {}` or set the header's `recorded_at` (call times do not pick the epoch: native traces come from any runtime)",
                            run.epoch.as_str(),
                            e.as_str(),
                            e.as_str()
                        ),
                    );
                }
            }
        }
        let index = c.index.unwrap_or(run.pos);
        run.pos += 1;
        let now = c.start.or(c.end).or(run.last_time);
        if let Some(w) = c.end.or(c.start) {
            run.last_time = Some(run.last_time.map_or(w, |l| l.max(w)));
        }
        let mut verdict = Verdict::Allowed;
        let mut block = None;
        let after = run
            .swallowed
            .as_mut()
            .map(|s| s.next_call(keys.raw, keys.resolved));
        if after == Some(crate::trace::colony::AfterBlock::Unknown) {
            // The replay cannot tell whether the swallowed block skips this call: the rest of
            // the cell is treated as aborted (fail-closed, issue 6 T6-1).
            run.aborted = true;
            run.swallowed = None;
            if let Stop::Swallowed(at) = run.stop {
                run.stop = Stop::Unplaced(at);
            }
        }
        let skipped = after == Some(crate::trace::colony::AfterBlock::Skipped);
        let mut unreached_by = None;
        if run.aborted || skipped {
            verdict = Verdict::Unreached;
            unreached_by = Some(run.stop);
        } else {
            let mut proposed = Proposed::new(&keys, sub_bits, key_bits.clone(), &c.params, now);
            proposed.recorded = Some((c.status, c.error.as_deref()));
            proposed.call_id = c.call_id.as_deref();
            block = set.check(&proposed, &mut run.state);
            if let Some(b) = block.as_mut() {
                if let Some(q) = self.shown_ids.get(&b.guardrail) {
                    b.guardrail = q.clone();
                }
            }
            drop(proposed);
            note_undecided(&mut self.report.warnings, &run.file, line, &mut run.state);
            let hist_status = match c.status {
                CallStatus::Blocked => CallStatus::Unknown,
                s => s,
            };
            match &block {
                None => {
                    if c.status == CallStatus::Blocked && !run.unblocked_warned {
                        // The recording went on from the block (the agent's reaction to it);
                        // the modelled runtime would have dispatched the call and gone on with
                        // its cell instead. Say so once per trace (issue 6 T7-14).
                        run.unblocked_warned = true;
                        warn(
                            &mut self.report.warnings,
                            &run.file,
                            line,
                            format!(
                                    "`{}` was recorded blocked and is now allowed (outcome changes): it enters the history as dispatched, with an unknown result; the rest of its cell, which the recording does not have, is not replayed, and later calls are replayed as recorded (the recorded run's reaction to the block), not as the agent would have gone on; warned once per trace",
                                keys.raw
                            ),
                        );
                    }
                    if hist_status == CallStatus::Ok {
                        // Any successful dispatch resets the block streak.
                        run.streak = None;
                        close_streak(
                            &mut run.open_streak,
                            &mut self.report.streaks,
                            self.opts.keep_streaks,
                            sink,
                        );
                    }
                    run.state
                        .record_call(set, &hist_sub, &key_bits, hist_status, c);
                    if hist_status == CallStatus::Error {
                        run.cell_stats.failed = true;
                    } else if !run.cell_stats.domain_ok
                        // Only the completion validator reads `domain_ok` (through
                        // `has_domain_work`): the planning test runs only when it can change it.
                        && run.cfg.settings.completion != CompletionMode::None
                        && !self.planning.test(self.kb, &keys)
                    {
                        run.cell_stats.domain_ok = true;
                    }
                }
                Some(b) => {
                    let count = match &mut run.streak {
                        Some((k, n)) if *k == keys.raw => {
                            *n += 1;
                            *n
                        }
                        _ => {
                            close_streak(
                                &mut run.open_streak,
                                &mut self.report.streaks,
                                self.opts.keep_streaks,
                                sink,
                            );
                            run.streak = Some((keys.raw.to_string(), 1));
                            1
                        }
                    };
                    if count % 3 == 0 {
                        run.open_streak = Some(BlockStreak {
                            trace: run.name.clone(),
                            file: run.file.clone(),
                            line,
                            action_key: shown(keys.raw),
                            count,
                            reason: shown(&b.reason),
                            suggestion: shown(&b.suggestion),
                        });
                    }
                    verdict = Verdict::Blocked;
                    *self.per_guardrail.entry(b.guardrail.clone()).or_insert(0) += 1;
                    for up in self.ancestors.get(&b.guardrail).into_iter().flatten() {
                        *self.per_guardrail.entry(up.clone()).or_insert(0) += 1;
                    }
                    let failed_before = run.cell_stats.failed;
                    run.cell_stats.failed = true;
                    match run.on_block {
                        // A call blocked in the recording too was never dispatched in either
                        // world: it belongs to no history (colony-reference §4.0).
                        OnBlock::Keep if c.status.dispatched() => {
                            run.state
                                .record_call(set, &hist_sub, &key_bits, hist_status, c)
                        }
                        OnBlock::Keep | OnBlock::Drop => {}
                        // No cell information: the extent of the blocked call's cell is
                        // unknown, so the block ends only the call (issue 6 T5-11).
                        OnBlock::StopCell if !run.cells_seen => {}
                        OnBlock::StopCell => {
                            let before = run.pos.saturating_sub(1);
                            let swallowed = run.cell_code.as_deref().and_then(|code| {
                                self.swallow_cache
                                    .swallowed(code, keys.raw, keys.resolved, before)
                            });
                            match swallowed {
                                // The cell's code catches the `GuardrailBlockedError` around
                                // every `run()` that could have made the call: Colony's cell
                                // goes on after the catching `try`, without the call and the
                                // rest of that `try` body (issue 6 T4-11, T5-4). A block the
                                // recording shows too was swallowed there already: the recorded
                                // calls after it are the ones the cell made.
                                Some(s) => {
                                    if c.status.dispatched() {
                                        run.swallowed = Some(s);
                                        run.stop = Stop::Swallowed(line);
                                    }
                                }
                                None => {
                                    run.aborted = true;
                                    run.stop = Stop::Aborted(line);
                                    if !c.status.dispatched() {
                                        run.swallow_evidence = Some(failed_before);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if !run.cells_seen {
            // Without cell information each call is its own step for the completion
            // validator's step summaries (colony-reference §5.4).
            run.finish_cell();
        }
        let changed = c.status.dispatched() != (verdict == Verdict::Allowed);
        let tot = &mut run.totals;
        tot.calls += 1;
        match verdict {
            Verdict::Allowed => tot.allowed += 1,
            Verdict::Blocked => tot.blocked += 1,
            Verdict::Unreached => tot.unreached += 1,
        }
        if changed {
            tot.changed += 1;
        }
        if !(all || verdict != Verdict::Allowed || changed) {
            return;
        }
        let (guardrail, reason, suggestion) = match block {
            Some(b) => (
                Some(b.guardrail),
                Some(shown(&b.reason)),
                Some(shown(&b.suggestion)),
            ),
            None => (None, unreached_by.map(unreached_reason), None),
        };
        let d = Decision {
            trace: run.name.clone(),
            file: run.file.clone(),
            line,
            cell: run.cell,
            index,
            action_key: shown(keys.canonical),
            raw_key: shown(keys.raw),
            recorded: c.status,
            decision: verdict,
            guardrail,
            reason,
            suggestion,
        };
        sink.decision(&d);
        if self.opts.keep_decisions {
            self.report.decisions.push(d);
        }
    }

    fn completion(&mut self, line: u64, c: &CompletionRecord) {
        let Some(run) = self.run.as_mut() else { return };
        if let Some(ci) = c.cell {
            if run.cell != Some(ci) {
                run.new_cell(Some(ci));
                run.cells_seen = true;
            }
        }
        run.resume_if_swallowed();
        if run.cfg.settings.completion == CompletionMode::None {
            return;
        }
        let simulated = if run.aborted {
            None
        } else {
            match completion::goals_for(c, run.goals.as_deref()) {
                Some(goals) => completion::rule_based(CompletionInput {
                    goals: Some(goals),
                    has_domain_work: run.has_domain_work,
                    results: c.results,
                }),
                None => None,
            }
        };
        let d = CompletionDecision {
            trace: run.name.clone(),
            file: run.file.clone(),
            line,
            cell: run.cell,
            recorded: c.allowed,
            simulated,
            unreached: run.aborted,
        };
        self.report.summary.completions += 1;
        if d.changed() {
            self.report.summary.completions_changed += 1;
        }
        self.report.completions.push(d);
    }
}

impl Run<'_> {
    /// Closes the current cell's step summary (Colony builds it after the cell).
    fn finish_cell(&mut self) {
        if self.cell_stats.domain_ok && !self.cell_stats.failed {
            self.has_domain_work = true;
        }
        self.cell_stats = CellStats {
            domain_ok: false,
            failed: false,
        };
    }

    /// A record of the current cell follows an aborting block that the recording also shows:
    /// the recorded cell went on, so the block was swallowed inside the cell
    /// (colony-reference §4.0.1) and the replay goes on with it.
    fn resume_if_swallowed(&mut self) {
        if let Some(failed) = self.swallow_evidence.take() {
            self.aborted = false;
            self.cell_stats.failed = failed;
        }
    }

    fn new_cell(&mut self, index: Option<u64>) {
        self.finish_cell();
        self.cell = index;
        self.aborted = false;
        self.swallow_evidence = None;
        self.cell_code = None;
        self.swallowed = None;
        self.pos = 0;
        self.state.new_cell(self.epoch.cumulative_history());
    }
}

/// Why the later calls of a cell are unreached after a block (issue 6 T6-19), with the trace
/// line of that block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The block aborted the cell (`stop-cell`, no handler of the cell's code swallows it).
    Aborted(u64),
    /// The block was raised out of the rest of its `try` body (or `with
    /// contextlib.suppress(...)` body) and swallowed there: the calls of that rest are skipped,
    /// the cell goes on after the statement (colony-reference §4.0.1).
    Swallowed(u64),
    /// The block was swallowed, but the replay cannot place a later call relative to it: the
    /// rest of the cell is treated as aborted (fail-closed, issue 6 T6-1).
    Unplaced(u64),
}

/// The reason an unreached call is given ([`Decision::reason`]): what the block at which trace
/// line did to its cell.
fn unreached_reason(stop: Stop) -> String {
    match stop {
        Stop::Aborted(line) => format!("its cell was aborted by the block at line {line}"),
        Stop::Swallowed(line) => format!(
            "skipped: the block at line {line} raised out of the enclosing `try` (or `with suppress`) body, which swallowed it; the cell goes on after that statement"
        ),
        Stop::Unplaced(line) => format!(
            "the block at line {line} was swallowed, but the replay cannot tell whether it skips this call: the rest of the cell is treated as aborted"
        ),
    }
}

/// Ends the open block streak, if any: `sink` gets it, and the report keeps it when `keep`.
fn close_streak(
    open: &mut Option<BlockStreak>,
    kept: &mut Vec<BlockStreak>,
    keep: bool,
    sink: &mut dyn DecisionSink,
) {
    if let Some(s) = open.take() {
        sink.streak(&s);
        if keep {
            kept.push(s);
        }
    }
}

/// The (id, matching mode) of every guardrail that matches keys itself (composite members,
/// not the composites).
/// True when Colony's dispatcher could resolve the raw key `raw` to the key `resolved`
/// (colony-reference §2.3): the same key (exact match), a key ending in the segments of a raw
/// key of fewer than three segments (suffix match), or a key left after dropping leading
/// segments of `raw` (prefix strip). Case-sensitive, as the dispatcher's lookups are.
fn dispatch_reaches(raw: &str, resolved: &str) -> bool {
    let ends_with_segments = |long: &str, short: &str| {
        long.strip_suffix(short)
            .is_some_and(|head| head.ends_with('.'))
    };
    raw == resolved
        || (raw.split('.').count() < 3 && ends_with_segments(resolved, raw))
        || ends_with_segments(raw, resolved)
}

fn leaf_modes(guardrails: &[crate::guardrails::Guardrail]) -> Vec<(&str, MatchMode)> {
    fn walk<'g>(gs: &'g [crate::guardrails::Guardrail], out: &mut Vec<(&'g str, MatchMode)>) {
        for g in gs {
            match &g.kind {
                crate::guardrails::Kind::Composite(c) => walk(&c.inner, out),
                _ => out.push((&g.id, g.mode)),
            }
        }
    }
    let mut leaves = Vec::new();
    walk(guardrails, &mut leaves);
    leaves
}

/// The matching mode every guardrail uses, when there are guardrails and they agree.
fn single_mode(guardrails: &[crate::guardrails::Guardrail]) -> Option<MatchMode> {
    let leaves = leaf_modes(guardrails);
    let first = leaves.first()?.1;
    leaves.iter().all(|(_, m)| *m == first).then_some(first)
}

/// `key: a, b; substring: c` when the guardrails use both matching modes; each id as
/// `PREFIX:ID` with a `prefix` ([`Options::qualify_ids`]).
fn mixed_modes(
    guardrails: &[crate::guardrails::Guardrail],
    prefix: Option<&str>,
) -> Option<String> {
    let leaves = leaf_modes(guardrails);
    let ids = |m: MatchMode| -> Vec<String> {
        leaves
            .iter()
            .filter(|(_, x)| *x == m)
            .map(|(id, _)| match prefix {
                Some(p) => format!("{p}:{id}"),
                None => id.to_string(),
            })
            .collect()
    };
    let (key, sub) = (ids(MatchMode::Key), ids(MatchMode::Substring));
    if key.is_empty() || sub.is_empty() {
        return None;
    }
    Some(format!(
        "key: {}; substring: {}",
        key.join(", "),
        sub.join(", ")
    ))
}

/// What [`run`] read from one input: its format and final counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputRead {
    /// The format the input was read as.
    pub format: crate::trace::Format,
    /// The reader's counters once it was exhausted.
    pub stats: crate::trace::ReadStats,
    /// The format standard input's content was detected as under a forced format
    /// ([`crate::trace::TraceReader::detected`]).
    pub detected: Option<crate::trace::Format>,
}

/// Replays inputs one after another with `observers` watching the same stream, and returns
/// the report (guardrail results plus the observers' sections) and, per input in order, what
/// was read from it.
///
/// `inputs` are taken one at a time: each reader is opened when its turn comes (the iterator
/// typically calls [`crate::trace::open`]) and dropped, closing its file, once read, so any
/// number of trace files can be replayed in one run without holding more than one open
/// (issue 6 T4-26).
///
/// Errors: the first input that cannot be opened (the replay stops there).
pub fn run<I>(
    cfg: &ReplayConfig,
    kb: &KnowledgeBase,
    opts: Options,
    inputs: I,
    observers: Vec<Box<dyn Observer>>,
    sink: &mut dyn DecisionSink,
) -> Result<(Report, Vec<InputRead>), crate::trace::TraceError>
where
    I: IntoIterator<Item = Result<crate::trace::BoxedReader, crate::trace::TraceError>>,
{
    let mut read = Vec::new();
    let mut observers = observers;
    let mut rp = Replayer::new(cfg, kb, opts);
    for reader in inputs {
        let mut reader = reader?;
        let mut current: Option<TraceInfo> = None;
        for e in reader.by_ref() {
            match &e {
                Event::TraceStart(info) => {
                    if let Some(prev) = current.take() {
                        for o in observers.iter_mut() {
                            o.trace_end(&prev);
                        }
                    }
                    for o in observers.iter_mut() {
                        o.trace_start(info);
                    }
                    current = Some(info.clone());
                }
                Event::Record { line, record } => {
                    if let Some(info) = &current {
                        for o in observers.iter_mut() {
                            o.record(info, *line, record);
                        }
                    }
                }
                _ => {}
            }
            rp.event(&e, sink);
        }
        if let Some(prev) = current.take() {
            for o in observers.iter_mut() {
                o.trace_end(&prev);
            }
        }
        rp.end_trace(sink);
        let stats = reader.stats();
        rp.add_stats(&stats);
        read.push(InputRead {
            format: reader.format(),
            stats,
            detected: reader.detected(),
        });
    }
    let mut report = rp.finish();
    for o in observers {
        report.sections.extend(o.finish());
    }
    Ok((report, read))
}

/// Text from a trace (or composed from it) as a report shows it: the stand-ins of `NaN`,
/// `Infinity` and `-Infinity` (`trace::nonfinite`) written as Python's `json` writes them,
/// never the internal marker.
fn shown(s: &str) -> String {
    crate::trace::nonfinite::display(s).into_owned()
}

/// Moves the regex evaluations the guardrails gave up on while deciding the record at `line`
/// into the report's warnings (`FILE:LINE: guardrail ...`), up to [`MAX_KEPT_SKIPS`] (issue 6
/// T13: an undecidable regex is decided conservatively and always reported).
fn note_undecided(
    warnings: &mut Warnings,
    file: &str,
    line: u64,
    state: &mut crate::guardrails::TraceState,
) {
    for message in state.undecided.drain(..) {
        warn(warnings, file, line, message);
    }
}

/// Counts a replay warning about `file:line` (no column), kept unless [`MAX_KEPT_SKIPS`] are
/// kept already.
fn warn(warnings: &mut Warnings, file: &str, line: u64, message: String) {
    warnings.push(Skip {
        path: std::path::PathBuf::from(file),
        line,
        column: None,
        message,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Profile;
    use crate::guardrails::config::parse_str;
    use crate::trace::read_str;

    /// Issue 6 T5-17: the swallowed-block cache gives the analysis's own results, for codes and
    /// calls seen again after others (beyond its bounds), and holds at most its bounds.
    #[test]
    fn swallow_cache_agrees_with_the_analysis_and_stays_bounded() {
        let code = |n: usize| {
            format!(
                "x = await run(\"S.S.ok\")\ntry:\n    await run(\"S.S.bad_{n}\")\n    await run(\"S.S.after\")\nexcept Exception:\n    pass\nawait run(\"S.S.end\")\n"
            )
        };
        let mut cache = SwallowCache::default();
        let mut calls = Vec::new();
        for round in 0..2 {
            for n in 0..SWALLOW_CODES + 3 {
                for before in 0..3 {
                    calls.push((
                        code(n % (SWALLOW_CODES + 3 - round)),
                        format!("S.S.bad_{n}"),
                        before,
                    ));
                }
            }
        }
        // One code with many calls.
        for before in 0..70 {
            calls.push((code(0), "S.S.bad_0".into(), before % 66));
        }
        calls.push((code(0), "bad_0".into(), 1));
        calls.push((code(0), "S.S.ok".into(), 0));
        let mut swallowed = 0;
        for (code, key, before) in &calls {
            let want = crate::trace::colony::swallowed_block(code, key, key, *before);
            let got = cache.swallowed(code, key, key, *before);
            assert_eq!(
                format!("{got:?}"),
                format!("{want:?}"),
                "{code} {key} {before}"
            );
            swallowed += usize::from(got.is_some());
            assert!(cache.codes.len() <= SWALLOW_CODES);
        }
        // Both kinds of answers were checked.
        assert!(swallowed > 0 && swallowed < calls.len(), "{swallowed}");
    }

    /// Issue 6 T5-17 split: a code is analysed once for all the blocks in it (each block is a
    /// lookup), and again only after it was dropped from the cache.
    #[test]
    fn swallow_cache_analyses_each_code_once() {
        let code = |n: usize| {
            format!("try:\n    await run(\"S.S.a_{n}\")\nexcept Exception:\n    pass\ntry:\n    await run(\"S.S.b_{n}\")\nexcept Exception:\n    pass\n")
        };
        let mut cache = SwallowCache::default();
        for n in 0..SWALLOW_CODES {
            for (key, before) in [("a", 0), ("b", 1), ("a", 0), ("b", 1)] {
                let key = format!("S.S.{key}_{n}");
                assert!(cache.swallowed(&code(n), &key, &key, before).is_some());
            }
        }
        assert_eq!(cache.analyses, SWALLOW_CODES);
        // A new code drops the least recently used one (code 0), analysed again when met.
        assert!(cache
            .swallowed(&code(99), "S.S.a_99", "S.S.a_99", 0)
            .is_some());
        assert!(cache.swallowed(&code(1), "S.S.b_1", "S.S.b_1", 1).is_some());
        assert_eq!(cache.analyses, SWALLOW_CODES + 1);
        assert!(cache.swallowed(&code(0), "S.S.a_0", "S.S.a_0", 0).is_some());
        assert_eq!(cache.analyses, SWALLOW_CODES + 2);
    }

    use std::path::Path;

    fn replay(config: &str, trace: &str, kb: &KnowledgeBase, opts: Options) -> Report {
        let cfg = parse_str(Path::new("c.toml"), config, Profile::Strict, None).unwrap();
        let readers = vec![read_str("t.jsonl", trace, None)];
        run(&cfg, kb, opts, readers, Vec::new(), &mut |_: &Decision| {})
            .unwrap()
            .0
    }

    fn verdicts(r: &Report) -> Vec<(String, &'static str)> {
        r.decisions
            .iter()
            .map(|d| (d.raw_key.clone(), d.decision.as_str()))
            .collect()
    }

    fn all() -> Options {
        Options {
            all_decisions: true,
            ..Default::default()
        }
    }

    /// The planning test's byte scan gives `rsplit('.').nth(n)`.
    #[test]
    fn nth_last_segment_is_rsplit_nth() {
        for key in [
            "",
            ".",
            "..",
            "a",
            "a.b",
            "a.b.c",
            "X.a.b.c",
            ".a.b",
            "a..b",
            "a.b.",
            "é.ü.ß.x",
        ] {
            for n in 0..5 {
                assert_eq!(
                    nth_last_segment(key, n),
                    key.rsplit('.').nth(n),
                    "{key:?} {n}"
                );
            }
        }
    }

    /// Issue 6 T4-25: without `planning-patterns` (and no KB planning flags), the actions of
    /// Colony's default planning capabilities are planning, not domain work; a short key
    /// (any class's action) is not; configured patterns replace the defaults.
    #[test]
    fn default_planning_capabilities_are_not_domain_work() {
        let completion = |config: &str, key: &str| {
            let trace = format!(
                "{{\"rec\":\"cell\",\"index\":0,\"success\":true}}\n\
                 {{\"rec\":\"call\",\"cell\":0,\"index\":0,\"raw_key\":\"{key}\",\"params\":{{}},\"status\":\"ok\"}}\n\
                 {{\"rec\":\"cell\",\"index\":1,\"success\":true}}\n\
                 {{\"rec\":\"completion\",\"cell\":1,\"goals\":[\"g\"],\"results\":{{\"a\":1}}}}\n"
            );
            let r = replay(config, &trace, &KnowledgeBase::new(), all());
            let v = r.completions[0].simulated.as_ref().unwrap();
            (v.allowed, v.reason.clone())
        };
        let rule = "[replay]\ncompletion = \"rule-based\"\n";
        let no_domain = (
            false,
            "No successful domain actions have been executed yet.".to_string(),
        );
        let domain = (true, "Domain work completed with 1 result(s).".to_string());
        for key in [
            "PlanCoordinationCapability.PlanCoordinationCapability.propose_plan",
            "ReplanningCapability.replanning.should_replan",
            "X.CacheAnalysisCapability.CacheAnalysisCapability.analyze_cache",
        ] {
            assert_eq!(completion(rule, key), no_domain, "{key}");
        }
        for key in [
            "propose_plan",
            "PlanCoordinationCapability.propose_plan",
            "Store.store.update_record",
            "MyPlanCoordinationCapability.x.y",
        ] {
            assert_eq!(completion(rule, key), domain, "{key}");
        }
        let own = format!("{rule}planning-patterns = [\"Store.**\"]\n");
        assert_eq!(completion(&own, "Store.store.update_record"), no_domain);
        assert_eq!(
            completion(
                &own,
                "PlanCoordinationCapability.PlanCoordinationCapability.propose_plan"
            ),
            domain
        );
    }

    /// Issue 6 T4-22: the recorded resolved key wins over the knowledge base's resolution of
    /// the raw key (with one warning per raw key and trace when they disagree); the KB still
    /// resolves calls that record no resolved key.
    #[test]
    fn recorded_key_wins_over_the_kb() {
        let mut kb = KnowledgeBase::new();
        kb.insert(crate::kb::Action {
            key: "Other.Other.create_decomposition".into(),
            short_key: "create_decomposition".into(),
            ..Default::default()
        });
        let config = "[[guardrails]]\nid = \"a\"\nkind = \"approval-required\"\npatterns = [\"DesignProcessCapability.*.create_decomposition\"]\n";
        let call = |k: Option<&str>| {
            let ak = k.map_or(String::new(), |k| format!(",\"action_key\":\"{k}\""));
            format!("{{\"rec\":\"call\",\"raw_key\":\"create_decomposition\"{ak},\"params\":{{\"dry_run\":false}},\"status\":\"ok\"}}\n")
        };
        let design = "DesignProcessCapability.DesignProcessCapability.create_decomposition";
        let trace = [
            call(Some(design)),
            call(Some(design)),
            call(Some("Other.Other.create_decomposition")),
            call(None),
        ]
        .concat();
        let r = replay(config, &trace, &kb, all());
        let got: Vec<(&str, &str)> = r
            .decisions
            .iter()
            .map(|d| (d.action_key.as_str(), d.decision.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (design, "blocked"),
                (design, "blocked"),
                ("Other.Other.create_decomposition", "allowed"),
                ("Other.Other.create_decomposition", "allowed"),
            ]
        );
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(r.warnings[0]
            .message
            .contains("the recorded key is checked"));
        assert_eq!(r.warnings[0].line, 1);
    }

    /// Issue 6 T4-10: time windows on a trace without times fail closed, as documented, but
    /// the reasons say the ages are unknown and the trace gets one warning per guardrail.
    #[test]
    fn time_windows_without_times_say_so() {
        let config = "[[guardrails]]\nid = \"r\"\nkind = \"rate-limit\"\npattern = \"*.search\"\nmax = 1\nper-seconds = 1\n\
                      [[guardrails]]\nid = \"fresh\"\nkind = \"args-aware-order\"\ntarget = \"*.book\"\nrequired-prior = \"*.search\"\nmax-age-seconds = 3600\n";
        // One call per cell: a block ends its cell.
        let cell = std::cell::Cell::new(0);
        let call = |k: &str, t: &str| {
            cell.set(cell.get() + 1);
            format!("{{\"rec\":\"call\",\"cell\":{},\"raw_key\":\"A.A.{k}\",\"params\":{{}},\"status\":\"ok\"{t}}}\n", cell.get())
        };
        let trace = [
            call("search", ""),
            call("search", ""),
            call("book", ""),
            call("book", ""),
        ]
        .concat();
        let r = replay(config, &trace, &KnowledgeBase::new(), all());
        let reasons: Vec<&str> = r
            .decisions
            .iter()
            .filter_map(|d| d.reason.as_deref())
            .collect();
        assert_eq!(
            reasons,
            vec![
                "'A.A.search' exceeds the rate limit of 1 call(s) matching '*.search' per 1 second(s); 1 already made (1 of them with no known age: this call has no recorded time, counted as inside the window).",
                "'A.A.book' requires a recent '*.search' call matching its args; none in the last 3600 second(s) (1 '*.search' call(s) there have no known age: this call has no recorded time, and max-age-seconds = 3600 does not count them as recent).",
                "'A.A.book' requires a recent '*.search' call matching its args; none in the last 3600 second(s) (1 '*.search' call(s) there have no known age: this call has no recorded time, and max-age-seconds = 3600 does not count them as recent).",
            ]
        );
        let warned: Vec<&str> = r.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(warned.len(), 2, "{warned:?}");
        assert!(warned[0].starts_with("guardrail `r`: `per-seconds` needs call times"));
        assert!(warned[1].starts_with("guardrail `fresh`: `max-age-seconds` needs call times"));
        // With times, nothing is said and the windows decide.
        let timed = [
            call("search", ",\"start\":1786500000"),
            call("search", ",\"start\":1786500005"),
            call("book", ",\"start\":1786500010"),
        ]
        .concat();
        let r = replay(config, &timed, &KnowledgeBase::new(), all());
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert_eq!(
            verdicts(&r),
            vec![
                ("A.A.search".to_string(), "allowed"),
                ("A.A.search".to_string(), "allowed"),
                ("A.A.book".to_string(), "allowed"),
            ]
        );
    }

    /// Issue 6 T4-27: a full key of a class the KB names as dynamic keeps its class (the live
    /// registry has it exactly); the KB's base-class entry is not used for it.
    #[test]
    fn dynamic_class_full_keys_keep_their_class() {
        let mut kb = KnowledgeBase::new();
        kb.insert(crate::kb::Action {
            key: "EventDrivenActionPolicy.*.wait_for_next_event".into(),
            short_key: "wait_for_next_event".into(),
            dynamic_segment: true,
            ..Default::default()
        });
        kb.dynamic_segments = vec!["CodeGenerationActionPolicy.*".into()];
        let config = "[[guardrails]]\nid = \"b\"\nkind = \"capability-boundary\"\nblock = [\"CodeGenerationActionPolicy.*.wait_for_next_event\"]\n";
        let call = |k: &str| {
            format!("{{\"rec\":\"call\",\"raw_key\":\"{k}\",\"params\":{{}},\"status\":\"ok\"}}\n")
        };
        let trace = [
            call("CodeGenerationActionPolicy.3f9a01c2.wait_for_next_event"),
            call("EventDrivenActionPolicy.0a1b2c3d.wait_for_next_event"),
        ]
        .concat();
        let r = replay(config, &trace, &kb, all());
        let got: Vec<(&str, &str)> = r
            .decisions
            .iter()
            .map(|d| (d.action_key.as_str(), d.decision.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "CodeGenerationActionPolicy.3f9a01c2.wait_for_next_event",
                    "blocked"
                ),
                ("EventDrivenActionPolicy.*.wait_for_next_event", "allowed"),
            ]
        );
    }

    /// Issue 6 T4-30: in `substring` mode an `a|b` capability pattern is Colony's prefix list:
    /// the reason names the alternative that matched, the suggestion lists the alternatives.
    #[test]
    fn substring_alternatives_read_as_colony_prefix_lists() {
        let trace =
            "{\"rec\":\"call\",\"cell\":0,\"raw_key\":\"A.A.propose_plan\",\"status\":\"ok\"}\n";
        let block = "[replay]\nmatch = \"substring\"\n[[guardrails]]\nid = \"b\"\nkind = \"capability-boundary\"\nblock = [\"delete|Propose\"]\n";
        let r = replay(block, trace, &KnowledgeBase::new(), all());
        assert_eq!(
            r.decisions[0].reason.as_deref(),
            Some("Action 'A.A.propose_plan' is blocked by guardrail (prefix 'Propose').")
        );
        let allow = "[replay]\nmatch = \"substring\"\n[[guardrails]]\nid = \"b\"\nkind = \"capability-boundary\"\nallow = [\"check|Other\", \"x\"]\n";
        let r = replay(allow, trace, &KnowledgeBase::new(), all());
        assert_eq!(
            r.decisions[0].suggestion.as_deref(),
            Some("Allowed prefixes: ['check', 'Other', 'x']")
        );
        // Key mode keeps the patterns as written.
        let key = allow.replace("match = \"substring\"", "match = \"key\"");
        let r = replay(&key, trace, &KnowledgeBase::new(), all());
        assert_eq!(
            r.decisions[0].suggestion.as_deref(),
            Some("Allowed patterns: ['check|Other', 'x']")
        );
    }

    /// Issue 6 T5-10: which recorded keys the dispatcher could reach from a raw key.
    #[test]
    fn dispatch_reaches_exact_suffix_and_prefix_strip() {
        assert!(dispatch_reaches("Fs.Fs.read", "Fs.Fs.read"));
        assert!(dispatch_reaches("delete_file", "Fs.Fs.delete_file"));
        assert!(dispatch_reaches("Fs.delete_file", "Fs.Fs.delete_file"));
        assert!(dispatch_reaches("x.Fs.Fs.read", "Fs.Fs.read"));
        assert!(!dispatch_reaches("Fs.Fs.delete_file", "Fs.Fs.read"));
        assert!(!dispatch_reaches("delete_file", "Fs.Fs.read"));
        assert!(!dispatch_reaches("delete_file", "Fs.Fs.undelete_file"));
        assert!(!dispatch_reaches("A.B.delete_file", "X.B.delete_file"));
    }

    #[test]
    fn kb_resolves_short_keys_in_key_mode() {
        let mut kb = KnowledgeBase::new();
        kb.insert(crate::kb::Action {
            key: "DesignProcessCapability.design_process.create_decomposition".into(),
            short_key: "create_decomposition".into(),
            ..Default::default()
        });
        let config = "[[guardrails]]\nid = \"a\"\nkind = \"approval-required\"\npatterns = [\"DesignProcessCapability.create_decomposition\"]\n";
        let trace = "{\"rec\":\"call\",\"raw_key\":\"create_decomposition\",\"params\":{\"dry_run\":false},\"status\":\"ok\"}\n";
        let r = replay(config, trace, &kb, all());
        assert_eq!(r.decisions[0].decision, Verdict::Blocked);
        assert_eq!(
            r.decisions[0].action_key,
            "DesignProcessCapability.design_process.create_decomposition"
        );
        // Substring mode (Colony) lets the short key through.
        let sub = config.replace(
            "[[guardrails]]",
            "[replay]\nmatch = \"substring\"\n[[guardrails]]",
        );
        let r = replay(&sub, trace, &kb, all());
        assert_eq!(r.decisions[0].decision, Verdict::Allowed);
    }

    #[test]
    fn raw_key_is_checked_before_resolution_in_substring_mode() {
        // The guardrail sees the key as written; the history carries the resolved key.
        let config = "[replay]\nmatch = \"substring\"\n[[guardrails]]\nid = \"o\"\nkind = \"temporal-order\"\nrules = [{ before = \"Pool.Pool.get_status\", after = \"Pool.Pool.spawn\" }]\n";
        let trace = "{\"rec\":\"call\",\"cell\":0,\"raw_key\":\"get_status\",\"action_key\":\"Pool.Pool.get_status\",\"status\":\"ok\"}\n\
                     {\"rec\":\"call\",\"cell\":1,\"raw_key\":\"spawn\",\"action_key\":\"Pool.Pool.spawn\",\"status\":\"ok\"}\n\
                     {\"rec\":\"call\",\"cell\":2,\"raw_key\":\"Pool.Pool.spawn\",\"status\":\"ok\"}\n";
        let r = replay(config, trace, &KnowledgeBase::new(), all());
        assert_eq!(
            verdicts(&r),
            vec![
                ("get_status".to_string(), "allowed"),
                ("spawn".to_string(), "allowed"),
                ("Pool.Pool.spawn".to_string(), "allowed")
            ]
        );
    }

    #[test]
    fn epoch_from_header_date_and_cli_override() {
        let config =
            "[[guardrails]]\nid = \"b\"\nkind = \"capability-boundary\"\nblock = [\"x\"]\n";
        let trace = "{\"rec\":\"header\",\"recorded_at\":\"2026-06-01T10:00:00Z\"}\n\
                     {\"rec\":\"call\",\"cell\":0,\"raw_key\":\"a.a.x\",\"status\":\"ok\"}\n\
                     {\"rec\":\"call\",\"cell\":0,\"raw_key\":\"a.a.y\",\"status\":\"ok\"}\n";
        let r = replay(config, trace, &KnowledgeBase::new(), all());
        assert_eq!(r.traces[0].epoch, "pre-0620");
        assert_eq!(r.traces[0].on_block, "drop");
        assert_eq!(r.summary.unreached, 0);
        let r = replay(
            config,
            trace,
            &KnowledgeBase::new(),
            Options {
                epoch: Some(Epoch::Current),
                ..all()
            },
        );
        assert_eq!(
            (r.traces[0].on_block.as_str(), r.summary.unreached),
            ("stop-cell", 1)
        );
    }

    #[test]
    fn approve_once_is_consumed_even_when_a_later_guardrail_blocks() {
        let config = "[[guardrails]]\nid = \"a\"\nkind = \"approval-required\"\npatterns = [\"apply\"]\n\
                      [[guardrails]]\nid = \"b\"\nkind = \"capability-boundary\"\nblock = [\"*.apply\"]\n";
        let trace = "{\"rec\":\"approval\",\"request_id\":\"r\",\"action_type\":\"apply\",\"choice\":\"approve_once\"}\n\
                     {\"rec\":\"call\",\"cell\":0,\"raw_key\":\"X.x.apply\",\"status\":\"ok\"}\n\
                     {\"rec\":\"call\",\"cell\":1,\"raw_key\":\"X.x.apply\",\"status\":\"ok\"}\n";
        let r = replay(config, trace, &KnowledgeBase::new(), all());
        let by: Vec<Option<&str>> = r.decisions.iter().map(|d| d.guardrail.as_deref()).collect();
        assert_eq!(by, vec![Some("b"), Some("a")]);
    }

    #[test]
    fn recorded_block_allowed_by_simulation_enters_history_as_unknown() {
        let config = "[[guardrails]]\nid = \"o\"\nkind = \"temporal-order\"\nrules = [{ before = \"prep\", after = \"go\", status = \"ok\" }]\n\
                      [[guardrails]]\nid = \"o2\"\nkind = \"temporal-order\"\nrules = [{ before = \"prep\", after = \"run\" }]\n";
        let trace =
            "{\"rec\":\"call\",\"cell\":0,\"raw_key\":\"a.a.prep\",\"status\":\"blocked\"}\n\
                     {\"rec\":\"call\",\"cell\":1,\"raw_key\":\"a.a.go\",\"status\":\"ok\"}\n\
                     {\"rec\":\"call\",\"cell\":2,\"raw_key\":\"a.a.run\",\"status\":\"ok\"}\n";
        let r = replay(config, trace, &KnowledgeBase::new(), all());
        assert_eq!(
            verdicts(&r),
            vec![
                ("a.a.prep".to_string(), "allowed"),
                ("a.a.go".to_string(), "blocked"),
                ("a.a.run".to_string(), "allowed")
            ]
        );
        assert!(r.decisions[0].changed());
    }

    #[test]
    fn streamed_decisions_are_not_kept() {
        let config =
            "[[guardrails]]\nid = \"b\"\nkind = \"capability-boundary\"\nblock = [\"x\"]\n";
        let trace = "{\"rec\":\"call\",\"raw_key\":\"a.a.x\",\"status\":\"ok\"}\n";
        let cfg = parse_str(Path::new("c.toml"), config, Profile::Strict, None).unwrap();
        let readers = vec![read_str("t.jsonl", trace, None)];
        let mut seen = 0;
        let (r, _) = run(
            &cfg,
            &KnowledgeBase::new(),
            Options {
                keep_decisions: false,
                ..Default::default()
            },
            readers,
            Vec::new(),
            &mut |_: &Decision| seen += 1,
        )
        .unwrap();
        assert_eq!((seen, r.decisions.len(), r.summary.blocked), (1, 0, 1));
    }
}
