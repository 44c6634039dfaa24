//! The context simulator: one conversation's raw log and working context, shaped by message
//! policies exactly as pyAgentic's agent loop shapes them (pyagentic-reference §1.3–§1.5, §1.8,
//! §3.5).
//!
//! - [`Simulator::append`] (pyAgentic `state.add_message`): the message joins the raw log
//!   (counted, never changed; the simulator does not keep it), then a copy goes through the
//!   append chain: each policy's `on_append` in config order, each seeing the previous one's
//!   output. A raise **vetoes** the item: it is not inserted and the rest of the chain is
//!   skipped.
//! - [`Simulator::compile`] (pyAgentic `state.compile_context`, before **every** provider call):
//!   the compile chain runs each policy's `on_compile` in config order over the working context
//!   with the previous inference's usage; a raise discards only that policy's output. The
//!   chain's result is **written back**, so evictions, drops and summaries persist. The figures
//!   of the context as sent are recorded ([`InferenceStats`]); then `last_usage` becomes this
//!   inference's recorded usage (kept unchanged when the inference failed, as pyAgentic does).
//!
//! Effects are found by comparing each policy's output with its input entry by entry (each
//! working-context entry has an identity): entries that disappear were *dropped*, or
//! *summarised* when the same step created a compaction summary; entries whose content changed
//! at compile time were *evicted* (stubbed); entries whose content an append-time policy changed
//! were *clipped*. Positions are raw-log positions ([`Msg`]).
//!
//! Pair safety: when a cut or a veto removes one side of a tool-call/result pair and the other
//! side stays, the remaining message is *orphaned* (providers reject such a request); every
//! inference sent with orphans lists them.
//!
//! Facts at risk: a tool result whose content left the working context (stubbed, dropped,
//! summarised or vetoed) before any inference was sent with it intact.
//!
//! Recorded summaries: a `compaction_summary` message record is summariser output, not part of
//! the raw log (pyAgentic never logs summaries). Its text (without the `[Summary of N earlier
//! messages]` header) is used by the next compaction the simulation performs; when it follows
//! the inference whose compile just compacted (no message in between), it replaces that
//! compaction's placeholder.
//!
//! Memory: only the working context and counters of the current conversation are kept.

use super::compaction::{recorded_summary_text, Trigger};
use super::{MessagePolicy, Msg};
use crate::trace::{InferenceRecord, MessageKind, MessageRecord, Usage};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// One compaction performed during a compile.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryNote {
    /// The compaction policy's id.
    pub policy: String,
    /// Messages folded into the summary (pyAgentic `compacted_count`).
    pub folded: u64,
    /// Code points of the summary message (header included).
    pub summary_chars: u64,
    /// True when the text came from a recorded summary, false for the placeholder.
    pub recorded: bool,
    /// Code points of the transcript the summariser would have received.
    pub transcript_chars: u64,
    /// The value the trigger compared with the threshold.
    pub trigger: Trigger,
    /// The threshold (`max-input-tokens`).
    pub threshold: i64,
}

/// What a compile-time policy sees besides the items: pyAgentic's `CompileEvent` fields that
/// matter here, and the summary source.
pub struct CompileCx<'a> {
    /// Usage of the previous successful inference as recorded (`event.last_usage`); `None` when
    /// it recorded none or there was none.
    pub last_usage: Option<Usage>,
    /// The simulator's own estimate of the previous inference's input tokens.
    pub simulated_usage: Option<Usage>,
    recorded: &'a mut VecDeque<Arc<str>>,
    notes: Vec<SummaryNote>,
}

impl<'a> CompileCx<'a> {
    /// A compile event with the given usages and recorded summaries (consumed front first).
    pub fn new(
        last_usage: Option<Usage>,
        simulated_usage: Option<Usage>,
        recorded: &'a mut VecDeque<Arc<str>>,
    ) -> Self {
        Self {
            last_usage,
            simulated_usage,
            recorded,
            notes: Vec::new(),
        }
    }

    /// The oldest recorded summary not used yet.
    pub fn take_recorded_summary(&mut self) -> Option<Arc<str>> {
        self.recorded.pop_front()
    }

    /// Records a compaction (for the report).
    pub fn note_summary(&mut self, note: SummaryNote) {
        self.notes.push(note);
    }

    /// Compactions noted so far.
    pub fn notes(&self) -> &[SummaryNote] {
        &self.notes
    }
}

/// The working context as sent to one inference, and what the policies did to it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InferenceStats {
    /// Trace name (`FILE` or `FILE#N`).
    pub trace: Arc<str>,
    /// Input file.
    pub file: Arc<str>,
    /// One-based line of the inference record (for an inferred boundary, of the message that
    /// follows it, or of the last message at the end of a trace).
    pub line: u64,
    /// 0-based index of the inference in its conversation.
    pub inference: u64,
    /// The boundary was inferred, not recorded.
    pub inferred: bool,
    /// The recorded inference failed (`last_usage` left unchanged).
    pub failed: bool,
    /// Messages in the working context sent.
    pub messages: u64,
    /// Code points of the message contents sent (system prompt excluded, as pyAgentic counts).
    pub chars: u64,
    /// `chars / 4` (floor): pyAgentic's own token estimate.
    pub est_tokens: u64,
    /// Messages in the raw log at that point.
    pub raw_messages: u64,
    /// Code points of the raw log's contents at that point.
    pub raw_chars: u64,
    /// Positions clipped (content changed at append time) since the previous inference.
    pub clipped: Vec<u64>,
    /// Positions stubbed by this compile.
    pub evicted: Vec<u64>,
    /// Positions dropped by this compile.
    pub dropped: Vec<u64>,
    /// Positions folded into a summary by this compile (an earlier summary folded again has no
    /// position and is counted in [`SummaryNote::folded`] only).
    pub summarized: Vec<u64>,
    /// Positions of messages sent without their pair partner, removed by a cut or veto.
    pub orphaned: Vec<u64>,
    /// Positions vetoed at append time since the previous inference.
    pub vetoed: Vec<u64>,
    /// `(policy id, effect, positions)` per policy that had an effect, in chain order.
    pub by_policy: Vec<(String, &'static str, Vec<u64>)>,
    /// `(policy id, N)` per earlier compaction summary (of N messages) this compile dropped
    /// (not folded into a new summary): what it still held is gone from the working context.
    pub lost_summaries: Vec<(String, u64)>,
    /// Compactions of this compile.
    pub summaries: Vec<SummaryNote>,
    /// `[PolicyError]` lines printed by pyAgentic (raising policies).
    pub errors: Vec<String>,
    /// The working context as sent (only when the simulator captures contexts).
    pub context: Option<Vec<Msg>>,
}

/// Totals of one conversation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContextTotals {
    /// Trace name.
    pub trace: Arc<str>,
    /// Input file.
    pub file: Arc<str>,
    /// Inferences replayed.
    pub inferences: u64,
    /// Of which inferred.
    pub inferred: u64,
    /// Messages in the raw log.
    pub raw_messages: u64,
    /// Code points of the raw log.
    pub raw_chars: u64,
    /// Largest working context (code points) sent to an inference or left at the end.
    pub peak_chars: u64,
    /// Code points of the working context at the end of the conversation.
    pub final_chars: u64,
    /// Messages in the working context at the end.
    pub final_messages: u64,
    /// Net code points the policies removed: raw log minus final working context (clip
    /// suffixes, stubs and summaries count against it, so it can be negative).
    pub chars_removed: i64,
    /// Tool results at risk (see [`FactAtRisk`]).
    pub facts_at_risk: u64,
    /// Distinct tool-call ids whose pair was broken by a cut or veto.
    pub orphaned_pairs: u64,
    /// Compactions performed, and how many used a recorded summary.
    pub compactions: u64,
    /// Compactions whose text came from a recorded summary.
    pub recorded_summaries_used: u64,
    /// Recorded summaries never used by a simulated compaction.
    pub recorded_summaries_unused: u64,
    /// `(policy id, net code points it took out)` per message policy, in config order: the
    /// parts of [`ContextTotals::chars_removed`] (an earlier summary folded or dropped again
    /// counts for the later policy).
    pub saved_by_policy: Vec<(String, i64)>,
    /// Notes on how the conversation was replayed.
    pub notes: Vec<String>,
    /// The final working context (only when capturing).
    pub final_context: Option<Vec<Msg>>,
}

/// A tool result the model never saw intact.
#[derive(Debug, Clone, PartialEq)]
pub struct FactAtRisk {
    /// Trace name.
    pub trace: Arc<str>,
    /// Input file.
    pub file: Arc<str>,
    /// One-based line of the result message.
    pub line: u64,
    /// Raw-log position.
    pub position: u64,
    /// Tool name.
    pub name: Option<String>,
    /// The call it answers.
    pub tool_call_id: Option<String>,
    /// The policy that removed it.
    pub policy: String,
    /// `evicted`, `dropped`, `summarized` or `vetoed`.
    pub effect: &'static str,
    /// The inference whose compile removed it (`None` for an append-time veto).
    pub inference: Option<u64>,
}

/// What a conversation's simulation produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// Per inference, in order.
    pub inferences: Vec<InferenceStats>,
    /// Totals.
    pub totals: ContextTotals,
    /// Facts at risk, in order.
    pub facts: Vec<FactAtRisk>,
}

struct Provisional {
    uid: u64,
    stats: usize,
    peak_before: u64,
    policy: usize,
}

/// One conversation's simulation.
pub struct Simulator {
    policies: Vec<Arc<dyn MessagePolicy>>,
    trace: Arc<str>,
    file: Arc<str>,
    capture: bool,
    ctx: Vec<Msg>,
    next_uid: u64,
    next_pos: u64,
    raw_chars: u64,
    raw_messages: u64,
    last_usage: Option<Usage>,
    simulated_usage: Option<Usage>,
    overhead_chars: u64,
    recorded: VecDeque<Arc<str>>,
    clipped: Vec<u64>,
    vetoed: Vec<u64>,
    errors: Vec<String>,
    cut_calls: HashSet<Arc<str>>,
    cut_results: HashSet<Arc<str>>,
    orphaned_pairs: HashSet<Arc<str>>,
    inferences: Vec<InferenceStats>,
    facts: Vec<FactAtRisk>,
    peak: u64,
    compactions: u64,
    recorded_used: u64,
    provisional: Option<Provisional>,
    notes: Vec<String>,
    saved: Vec<i64>,
    /// Tool-call ids seen in the raw log (to spot stray results).
    call_ids: HashSet<String>,
    /// Tool results answering no earlier call: count, and the first (line, id).
    stray: (u64, Option<(u64, String)>),
}

fn chars_of(items: &[Msg]) -> u64 {
    items.iter().map(|m| m.chars() as u64).sum()
}

fn push_unique(v: &mut Vec<u64>, x: u64) {
    if !v.contains(&x) {
        v.push(x);
    }
}

impl Simulator {
    /// A simulator for the conversation `trace` (read from `file`) under `policies` (config
    /// order). With `capture`, every context sent and the final one are kept in the outcome.
    pub fn new(
        policies: Vec<Arc<dyn MessagePolicy>>,
        trace: Arc<str>,
        file: Arc<str>,
        capture: bool,
    ) -> Self {
        let policies_len = policies.len();
        Self {
            policies,
            trace,
            file,
            capture,
            ctx: Vec::new(),
            next_uid: 1,
            next_pos: 0,
            raw_chars: 0,
            raw_messages: 0,
            last_usage: None,
            simulated_usage: None,
            overhead_chars: 0,
            recorded: VecDeque::new(),
            clipped: Vec::new(),
            vetoed: Vec::new(),
            errors: Vec::new(),
            cut_calls: HashSet::new(),
            cut_results: HashSet::new(),
            orphaned_pairs: HashSet::new(),
            inferences: Vec::new(),
            facts: Vec::new(),
            peak: 0,
            compactions: 0,
            recorded_used: 0,
            provisional: None,
            notes: Vec::new(),
            saved: vec![0; policies_len],
            call_ids: HashSet::new(),
            stray: (0, None),
        }
    }

    /// The current working context.
    pub fn context(&self) -> &[Msg] {
        &self.ctx
    }

    /// Messages appended to the raw log so far.
    pub fn raw_messages(&self) -> u64 {
        self.raw_messages
    }

    /// Inferences compiled so far.
    pub fn inference_count(&self) -> u64 {
        self.inferences.len() as u64
    }

    /// Adds fixed prompt overhead (system prompt, tool schemas), in code points: not part of
    /// the working context, only of the `simulated` usage estimate.
    pub fn add_overhead(&mut self, chars: u64) {
        self.overhead_chars += chars;
    }

    /// Adds a note to the conversation's totals.
    pub fn note(&mut self, note: impl Into<String>) {
        let note = note.into();
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    fn fresh_uid(&mut self) -> u64 {
        let u = self.next_uid;
        self.next_uid += 1;
        u
    }

    /// A message enters the raw log and, through the append chain, the working context.
    /// `system` messages only count as prompt overhead; `compaction_summary` messages are
    /// recorded summariser output (see the module docs).
    pub fn append(&mut self, rec: &MessageRecord, line: u64) {
        match rec.kind {
            MessageKind::System => {
                self.overhead_chars += rec.chars() as u64;
                return;
            }
            MessageKind::CompactionSummary => {
                let text = recorded_summary_text(rec.content.as_deref().unwrap_or(""));
                self.recorded_summary(text.into());
                return;
            }
            _ => {}
        }
        if rec.kind.is_tool_call() {
            if let Some(id) = &rec.id {
                self.call_ids.insert(id.clone());
            }
        } else if rec.kind.is_tool_result() {
            if let Some(id) = rec
                .tool_call_id
                .as_ref()
                .filter(|id| !self.call_ids.contains(*id))
            {
                self.stray.0 += 1;
                self.stray.1.get_or_insert_with(|| (line, id.clone()));
            }
        }
        self.provisional = None;
        let pos = self.next_pos;
        self.next_pos += 1;
        let mut m = Msg::from_record(rec);
        m.pos = Some(pos);
        m.line = line;
        m.uid = self.fresh_uid();
        self.raw_messages += 1;
        self.raw_chars += m.chars() as u64;
        for (pi, p) in self.policies.clone().iter().enumerate() {
            match p.on_append(&m) {
                Ok(Some(mut new)) => {
                    self.saved[pi] += m.chars() as i64 - new.chars() as i64;
                    new.pos = m.pos;
                    new.line = m.line;
                    new.uid = m.uid;
                    if new.content() != m.content() {
                        push_unique(&mut self.clipped, pos);
                    }
                    m = new;
                }
                Ok(None) => {}
                Err(e) => {
                    self.saved[pi] += m.chars() as i64;
                    self.errors.push(format!(
                        "[PolicyError] {}.on_append vetoed append: {e}",
                        p.id()
                    ));
                    self.vetoed.push(pos);
                    // It never entered the working context: not "clipped".
                    self.clipped.retain(|&p| p != pos);
                    self.partner_removed(&m);
                    if m.is_tool_result() {
                        self.fact(&m, p.id(), "vetoed", None);
                    }
                    return;
                }
            }
        }
        self.ctx.push(m);
    }

    fn recorded_summary(&mut self, text: Arc<str>) {
        if let Some(p) = self.provisional.take() {
            if let Some(i) = self.ctx.iter().position(|m| m.uid == p.uid) {
                let n = self.ctx[i].compacted_count.unwrap_or(0);
                let content = format!("[Summary of {n} earlier messages]\n{text}");
                let old = self.ctx[i].chars() as i64;
                let new_chars = content.chars().count() as i64;
                if let Some(x) = self.saved.get_mut(p.policy) {
                    *x += old - new_chars;
                }
                self.ctx[i] = self.ctx[i].with_content(Some(&content));
                let chars = chars_of(&self.ctx);
                self.peak = p.peak_before.max(chars);
                self.recorded_used += 1;
                let capture = self.capture.then(|| self.ctx.clone());
                if let Some(s) = self.inferences.get_mut(p.stats) {
                    s.chars = chars;
                    s.est_tokens = chars / 4;
                    if let Some(note) = s.summaries.iter_mut().rev().find(|n| !n.recorded) {
                        note.recorded = true;
                        note.summary_chars = self.ctx[i].chars() as u64;
                    }
                    if !s.failed {
                        if let Some(u) = self.simulated_usage.as_mut() {
                            u.input_tokens =
                                (self.overhead_chars + chars + args_chars(&self.ctx)) / 4;
                        }
                    }
                    if capture.is_some() {
                        s.context = capture;
                    }
                }
                return;
            }
        }
        self.recorded.push_back(text);
    }

    fn fact(&mut self, m: &Msg, policy: &str, effect: &'static str, inference: Option<u64>) {
        let Some(position) = m.pos else { return };
        self.facts.push(FactAtRisk {
            trace: self.trace.clone(),
            file: self.file.clone(),
            line: m.line,
            position,
            name: m.name.as_deref().map(str::to_string),
            tool_call_id: m.tool_call_id.as_deref().map(str::to_string),
            policy: policy.to_string(),
            effect,
            inference,
        });
    }

    /// One side of a pair left the working context.
    fn partner_removed(&mut self, m: &Msg) {
        if m.is_tool_call() {
            if let Some(id) = &m.id {
                if !self.cut_results.remove(id) {
                    self.cut_calls.insert(id.clone());
                }
            }
        } else if m.is_tool_result() {
            if let Some(id) = &m.tool_call_id {
                if !self.cut_calls.remove(id) {
                    self.cut_results.insert(id.clone());
                }
            }
        }
    }

    /// Compares one compile step's input and output; assigns identities to new entries.
    fn diff(
        &mut self,
        policy: &str,
        before: &[Msg],
        after: &mut [Msg],
        stats: &mut InferenceStats,
        inference: u64,
    ) -> Option<u64> {
        let index: HashMap<u64, usize> =
            before.iter().enumerate().map(|(i, m)| (m.uid, i)).collect();
        let mut kept: HashSet<u64> = HashSet::with_capacity(after.len());
        let mut summary_uid = None;
        let mut evicted = Vec::new();
        let mut at_risk = Vec::new();
        for m in after.iter_mut() {
            let existing = index.get(&m.uid).copied().filter(|_| m.uid != 0);
            match existing {
                Some(bi) if kept.insert(m.uid) => {
                    if m.content() != before[bi].content() {
                        m.replaced = true;
                        if let Some(p) = m.pos {
                            push_unique(&mut evicted, p);
                        }
                        if m.is_tool_result() && !m.seen && !m.at_risk {
                            m.at_risk = true;
                            at_risk.push(m.clone());
                        }
                    }
                }
                _ => {
                    m.uid = self.fresh_uid();
                    kept.insert(m.uid);
                    if m.kind == MessageKind::CompactionSummary {
                        summary_uid = Some(m.uid);
                    }
                }
            }
        }
        for m in &at_risk {
            self.fact(m, policy, "evicted", Some(inference));
        }
        let effect = if summary_uid.is_some() {
            "summarized"
        } else {
            "dropped"
        };
        let mut removed = Vec::new();
        for b in before.iter().filter(|b| !kept.contains(&b.uid)) {
            if let Some(p) = b.pos {
                removed.push(p);
            } else if b.kind == MessageKind::CompactionSummary && summary_uid.is_none() {
                stats
                    .lost_summaries
                    .push((policy.to_string(), b.compacted_count.unwrap_or(0)));
            }
            self.partner_removed(b);
            if b.is_tool_result() && !b.seen && !b.at_risk {
                self.fact(b, policy, effect, Some(inference));
            }
        }
        if !evicted.is_empty() {
            for &p in &evicted {
                push_unique(&mut stats.evicted, p);
            }
            stats
                .by_policy
                .push((policy.to_string(), "evicted", evicted));
        }
        if !removed.is_empty() || summary_uid.is_some() {
            let list = if summary_uid.is_some() {
                &mut stats.summarized
            } else {
                &mut stats.dropped
            };
            for &p in &removed {
                push_unique(list, p);
            }
            stats.by_policy.push((policy.to_string(), effect, removed));
        }
        summary_uid
    }

    /// Runs the compile chain before one inference, writes the result back, and records the
    /// context as sent. `line` locates the inference in the input.
    pub fn compile(&mut self, inf: &InferenceRecord, line: u64) {
        self.provisional = None;
        let index = self.inferences.len() as u64;
        let failed = inf
            .status
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case("error") || s.eq_ignore_ascii_case("failed"));
        let mut stats = InferenceStats {
            trace: self.trace.clone(),
            file: self.file.clone(),
            line,
            inference: index,
            inferred: inf.inferred,
            failed,
            raw_messages: self.raw_messages,
            raw_chars: self.raw_chars,
            clipped: std::mem::take(&mut self.clipped),
            vetoed: std::mem::take(&mut self.vetoed),
            errors: std::mem::take(&mut self.errors),
            ..Default::default()
        };
        let mut items = std::mem::take(&mut self.ctx);
        let mut recorded = std::mem::take(&mut self.recorded);
        let mut placeholder_summary: Option<(u64, usize)> = None;
        {
            let mut cx = CompileCx::new(self.last_usage, self.simulated_usage, &mut recorded);
            for (pi, p) in self.policies.clone().iter().enumerate() {
                let before_notes = cx.notes.len();
                match p.on_compile(&mut cx, &items) {
                    Ok(Some(mut new)) => {
                        self.saved[pi] += chars_of(&items) as i64 - chars_of(&new) as i64;
                        let uid = self.diff(p.id(), &items, &mut new, &mut stats, index);
                        if let Some(u) = uid {
                            if cx.notes[before_notes..].iter().any(|n| !n.recorded) {
                                placeholder_summary = Some((u, pi));
                            } else if cx.notes.len() > before_notes {
                                placeholder_summary = None;
                            }
                        }
                        items = new;
                    }
                    Ok(None) => {
                        // A compaction that noted a summary but returned nothing cannot
                        // happen with the built-ins; drop any stray note.
                        cx.notes.truncate(before_notes);
                    }
                    Err(e) => {
                        cx.notes.truncate(before_notes);
                        stats
                            .errors
                            .push(format!("[PolicyError] {}.on_compile: {e}", p.id()));
                    }
                }
            }
            stats.summaries = std::mem::take(&mut cx.notes);
        }
        self.recorded = recorded;
        self.compactions += stats.summaries.len() as u64;
        self.recorded_used += stats.summaries.iter().filter(|n| n.recorded).count() as u64;
        self.ctx = items;
        let chars = chars_of(&self.ctx);
        stats.messages = self.ctx.len() as u64;
        stats.chars = chars;
        stats.est_tokens = chars / 4;
        stats.orphaned = self.orphans();
        for m in self.ctx.iter_mut() {
            if m.is_tool_result() && !m.replaced {
                m.seen = true;
            }
        }
        if !failed {
            self.last_usage = inf.usage;
            self.simulated_usage = Some(Usage {
                input_tokens: (self.overhead_chars + chars + args_chars(&self.ctx)) / 4,
                output_tokens: 0,
                total_tokens: 0,
            });
        }
        let peak_before = self.peak;
        self.peak = self.peak.max(chars);
        if self.capture {
            stats.context = Some(self.ctx.clone());
        }
        let stats_index = self.inferences.len();
        self.inferences.push(stats);
        self.provisional = placeholder_summary.map(|(uid, policy)| Provisional {
            uid,
            stats: stats_index,
            peak_before,
            policy,
        });
    }

    /// Positions of working-context messages whose pair partner a cut or veto removed.
    fn orphans(&mut self) -> Vec<u64> {
        if self.cut_calls.is_empty() && self.cut_results.is_empty() {
            return Vec::new();
        }
        let calls: HashSet<&str> = self
            .ctx
            .iter()
            .filter(|m| m.is_tool_call())
            .filter_map(|m| m.id.as_deref())
            .collect();
        let results: HashSet<&str> = self
            .ctx
            .iter()
            .filter(|m| m.is_tool_result())
            .filter_map(|m| m.tool_call_id.as_deref())
            .collect();
        let mut out = Vec::new();
        let mut pairs = Vec::new();
        for m in &self.ctx {
            let orphan = if m.is_tool_result() {
                m.tool_call_id
                    .as_ref()
                    .filter(|id| self.cut_calls.contains(*id) && !calls.contains(&***id))
            } else if m.is_tool_call() {
                m.id.as_ref()
                    .filter(|id| self.cut_results.contains(*id) && !results.contains(&***id))
            } else {
                None
            };
            if let Some(id) = orphan {
                pairs.push(id.clone());
                if let Some(p) = m.pos {
                    out.push(p);
                }
            }
        }
        self.orphaned_pairs.extend(pairs);
        out
    }

    /// Ends the conversation: per-inference figures, totals and facts at risk.
    pub fn finish(mut self) -> Outcome {
        if let (n, Some((line, id))) = &self.stray {
            let more = if *n > 1 {
                format!(" (and {} more)", n - 1)
            } else {
                String::new()
            };
            let note = format!(
                "{}:{line}: tool result `{id}` answers no earlier tool call{more}: a stray result, which providers reject in every request that contains it (not made by a policy, so not counted as orphaned)",
                self.file
            );
            self.note(note);
        }
        let final_chars = chars_of(&self.ctx);
        let inferred = self.inferences.iter().filter(|s| s.inferred).count() as u64;
        let totals = ContextTotals {
            trace: self.trace.clone(),
            file: self.file.clone(),
            inferences: self.inferences.len() as u64,
            inferred,
            raw_messages: self.raw_messages,
            raw_chars: self.raw_chars,
            peak_chars: self.peak.max(final_chars),
            final_chars,
            final_messages: self.ctx.len() as u64,
            chars_removed: self.raw_chars as i64 - final_chars as i64,
            facts_at_risk: self.facts.len() as u64,
            orphaned_pairs: self.orphaned_pairs.len() as u64,
            compactions: self.compactions,
            recorded_summaries_used: self.recorded_used,
            recorded_summaries_unused: self.recorded.len() as u64,
            saved_by_policy: self
                .policies
                .iter()
                .map(|p| p.id().to_string())
                .zip(self.saved)
                .collect(),
            notes: self.notes,
            final_context: self.capture.then_some(self.ctx),
        };
        Outcome {
            inferences: self.inferences,
            totals,
            facts: self.facts,
        }
    }
}

/// Code points of tool-call arguments (sent to the provider, but not counted by pyAgentic's
/// estimate).
fn args_chars(items: &[Msg]) -> u64 {
    items
        .iter()
        .filter_map(|m| m.arguments.as_deref())
        .map(|a| a.chars().count() as u64)
        .sum()
}
