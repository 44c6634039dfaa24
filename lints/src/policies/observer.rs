//! The policy replayer: watches the record stream of `cellguard replay` next to the guardrails
//! ([`crate::replay::Observer`]) and contributes the policy sections of the report.
//!
//! Per trace (conversation) it runs a [`Simulator`] over `message` and `inference` records and
//! replays `state` records through the state policies. Inference boundaries:
//!
//! - Recorded `inference` records (native traces; the OpenAI chat reader emits one per
//!   assistant message, flagged as inferred) are used as they come.
//! - A trace with no `inference` record (a pyAgentic message dump) gets boundaries inferred as
//!   pyagentic-reference §3.5 step 4 says: one before each assistant message, one before each
//!   maximal run of consecutive tool calls, and one at the end of a turn that ends on a tool
//!   result (pyAgentic's unrecorded max-depth call: before the next user message, or at the end
//!   of the trace). This over-counts when sync parallel tools were recorded as `C1,R1,C2,R2`;
//!   such inferences are flagged `inferred`. A trace with any `inference` record uses only
//!   its records: until the first one arrives both simulations run side by side (appends only,
//!   for the recorded one), then the inferred one is dropped; at the end of a trace without
//!   any, the recorded one is.
//! - A trace whose header says `view = "context"` records an already-shaped working context;
//!   policies are not re-applied to it (reference §3.4) and the report says so; its sizes per
//!   inference are reported as recorded (a simulation without policies).
//!
//! Memory: the simulator(s) of the current trace only; finished traces leave their figures.

use super::config::PolicyConfig;
use super::context::Simulator;
use super::report::{MessageSection, StateSection};
use super::state::{replay_write, StateTotals};
use crate::replay::{Observer, Section};
use crate::trace::{InferenceRecord, MessageKind, Record, TraceInfo};
use serde_json::Value;
use std::sync::Arc;

struct TraceRun {
    name: Arc<str>,
    file: Arc<str>,
    /// Boundaries from `inference` records.
    sim: Option<Simulator>,
    /// Boundaries inferred; dropped at the first `inference` record.
    inferred: Option<Simulator>,
    prev: Option<MessageKind>,
    last_line: u64,
}

impl TraceRun {
    fn sims(&mut self) -> impl Iterator<Item = &mut Simulator> {
        self.sim.iter_mut().chain(self.inferred.iter_mut())
    }
}

/// Replays message and state policies; see the module docs.
pub struct PolicyObserver {
    cfg: Arc<PolicyConfig>,
    capture: bool,
    run: Option<TraceRun>,
    messages: MessageSection,
    state: StateSection,
}

impl PolicyObserver {
    /// An observer for `cfg`.
    pub fn new(cfg: Arc<PolicyConfig>) -> Self {
        let messages = MessageSection::new(&cfg);
        let state = StateSection::new(&cfg);
        Self {
            cfg,
            capture: false,
            run: None,
            messages,
            state,
        }
    }

    /// Keeps every working context sent (and the final one) in the report: for tests and
    /// debugging; memory grows with the input.
    pub fn capturing(mut self) -> Self {
        self.capture = true;
        self
    }

    /// The message section so far (finished traces).
    pub fn message_section(&self) -> &MessageSection {
        &self.messages
    }

    /// The state section so far.
    pub fn state_section(&self) -> &StateSection {
        &self.state
    }

    /// Ends the current trace (also called by [`Observer::trace_end`]).
    pub fn end_trace(&mut self) {
        let Some(mut run) = self.run.take() else {
            return;
        };
        let sim = match run.inferred.take() {
            Some(mut sim) => {
                if run.prev.as_ref().is_some_and(MessageKind::is_tool_result) {
                    sim.compile(&inferred(), run.last_line);
                }
                if sim.inference_count() > 0 {
                    sim.note("the trace has no inference records: inference boundaries were inferred (pyagentic-reference §3.5)");
                }
                Some(sim)
            }
            None => run.sim.take(),
        };
        // Every conversation is listed, an empty one with 0 inferences (the summary's
        // `traces` count and `contexts` agree).
        if let Some(sim) = sim {
            self.messages.add(sim.finish());
        }
    }

    /// Feeds one record of the current trace.
    pub fn record(&mut self, info: &TraceInfo, line: u64, record: &Record) {
        if self.run.is_none() {
            self.trace_start(info);
        }
        let Some(run) = self.run.as_mut() else { return };
        match record {
            Record::Header(h) => {
                if run.sim.is_none() {
                    return;
                }
                if h.extra.get("view").and_then(Value::as_str) == Some("context") {
                    self.messages.note(format!(
                        "{}: the trace records an already-shaped working context (header `view = \"context\"`); message policies are not re-applied, its sizes are reported as recorded",
                        run.name
                    ));
                    // Sizes as recorded: the same simulation without policies.
                    let make = |with: bool| {
                        with.then(|| {
                            Simulator::new(
                                Vec::new(),
                                run.name.clone(),
                                run.file.clone(),
                                self.capture,
                            )
                        })
                    };
                    run.sim = make(run.sim.is_some());
                    run.inferred = make(run.inferred.is_some());
                }
                let mut overhead = h
                    .system_prompt
                    .as_ref()
                    .map_or(0, |p| p.chars().count() as u64);
                if let Some(n) = h.extra.get("tool_schemas_chars").and_then(Value::as_u64) {
                    overhead += n;
                }
                for sim in run.sims() {
                    sim.add_overhead(overhead);
                }
            }
            Record::Message(m) => {
                if run.sim.is_none() {
                    return;
                }
                run.last_line = line;
                let boundary = match &m.kind {
                    MessageKind::System | MessageKind::CompactionSummary => false,
                    MessageKind::Assistant => true,
                    k if k.is_tool_call() => !run.prev.as_ref().is_some_and(|p| p.is_tool_call()),
                    MessageKind::User => run.prev.as_ref().is_some_and(|p| p.is_tool_result()),
                    _ => false,
                };
                if let Some(sim) = run.inferred.as_mut().filter(|_| boundary) {
                    sim.compile(&inferred(), line);
                }
                for sim in run.sims() {
                    sim.append(m, line);
                }
                if !matches!(m.kind, MessageKind::System | MessageKind::CompactionSummary) {
                    run.prev = Some(m.kind.clone());
                }
            }
            Record::Inference(inf) => {
                let Some(sim) = run.sim.as_mut() else { return };
                run.last_line = line;
                run.inferred = None;
                sim.compile(inf, line);
            }
            Record::State(s) => {
                if self.cfg.state.is_empty() {
                    return;
                }
                let mut totals = StateTotals::default();
                std::mem::swap(&mut totals, &mut self.state.totals);
                let found =
                    replay_write(&self.cfg.state, s, &run.name, &run.file, line, &mut totals);
                self.state.totals = totals;
                self.state.findings.extend(found);
            }
            _ => {}
        }
    }

    /// Starts a trace (also called by [`Observer::trace_start`]).
    pub fn trace_start(&mut self, info: &TraceInfo) {
        self.end_trace();
        let name: Arc<str> = info.name.as_str().into();
        let file: Arc<str> = info.path.display().to_string().into();
        let make = || {
            (!self.cfg.messages.is_empty()).then(|| {
                Simulator::new(
                    self.cfg.messages.clone(),
                    name.clone(),
                    file.clone(),
                    self.capture,
                )
            })
        };
        let (sim, inferred) = (make(), make());
        self.run = Some(TraceRun {
            name,
            file,
            sim,
            inferred,
            prev: None,
            last_line: 0,
        });
    }

    /// Finishes and returns the sections (message policies, then state policies; only those
    /// with configured policies).
    pub fn into_sections(mut self) -> (Option<MessageSection>, Option<StateSection>) {
        self.end_trace();
        (
            (!self.cfg.messages.is_empty()).then_some(self.messages),
            (!self.cfg.state.is_empty()).then_some(self.state),
        )
    }
}

fn inferred() -> InferenceRecord {
    InferenceRecord {
        inferred: true,
        ..Default::default()
    }
}

impl Observer for PolicyObserver {
    fn trace_start(&mut self, info: &TraceInfo) {
        PolicyObserver::trace_start(self, info);
    }

    fn record(&mut self, info: &TraceInfo, line: u64, record: &Record) {
        PolicyObserver::record(self, info, line, record);
    }

    fn trace_end(&mut self, _info: &TraceInfo) {
        self.end_trace();
    }

    fn finish(self: Box<Self>) -> Vec<Box<dyn Section>> {
        let (m, s) = self.into_sections();
        let mut out: Vec<Box<dyn Section>> = Vec::new();
        if let Some(m) = m {
            out.push(Box::new(m));
        }
        if let Some(s) = s {
            out.push(Box::new(s));
        }
        out
    }
}
