//! The policy sections of the replay report, rendered by every `cellguard replay` output
//! format through [`crate::replay::Section`].
//!
//! `json` keys (message policies): `inferences` (one object per inference: `trace`,
//! `inference`, `messages`, `chars`, `est_tokens`, `clipped`, `evicted`, `dropped`,
//! `summarized`, `orphaned`; the effect fields list raw-log positions in ascending order; plus
//! `compactions`, the number of compactions the compile ran), `contexts` (one object
//! per conversation: `trace`, `inferences`, `peak_chars`, `final_chars`, `chars_removed`) and
//! `facts_at_risk` (`trace`, `position`, `line`, `name`, `tool_call_id`, `policy`, `effect`,
//! `inference`). State policies: `state_writes` (one object per finding) and `state_summary`.
//! `json-lines` prints the same objects one per line, wrapped as `{"inference": ...}`,
//! `{"context": ...}`, `{"fact_at_risk": ...}`, `{"state_write": ...}`.
//!
//! Findings (exit code 1, SARIF results): inferences sent with orphaned pairs (error: providers
//! reject such a request), facts at risk (warning), state writes a validator would veto or raise
//! on (warning); transforms are notes.

use super::config::PolicyConfig;
use super::context::{ContextTotals, FactAtRisk, InferenceStats, Outcome};
use super::state::{show, StateFinding, StateTotals};
use crate::replay::Section;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// `3, 5-8, 12`: positions with consecutive runs collapsed.
pub fn ranges(v: &[u64]) -> String {
    let mut sorted = v.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        out.push(if end == start {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(", ")
}

/// ` [#N]` when the trace is one of several in its file (` [NAME]` otherwise).
fn trace_tag(trace: &str, file: &str) -> String {
    match trace.strip_prefix(file) {
        Some("") => String::new(),
        Some(rest) => format!(" [{rest}]"),
        None => format!(" [{trace}]"),
    }
}

/// Positions in ascending order (two policies of one phase can touch the same inference).
fn sorted(v: &[u64]) -> Vec<u64> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// The `inferences` object of one inference: the spec's field names, exactly, plus
/// `compactions` (how many compactions this compile ran; a compaction that folds only an
/// earlier summary has no `summarized` position but is counted here).
pub fn inference_json(s: &InferenceStats) -> Value {
    json!({
        "trace": &*s.trace,
        "inference": s.inference,
        "messages": s.messages,
        "chars": s.chars,
        "est_tokens": s.est_tokens,
        "clipped": sorted(&s.clipped),
        "evicted": sorted(&s.evicted),
        "dropped": sorted(&s.dropped),
        "summarized": sorted(&s.summarized),
        "orphaned": sorted(&s.orphaned),
        "compactions": s.summaries.len(),
    })
}

/// The `contexts` object of one conversation (spec field names, exactly).
pub fn context_json(c: &ContextTotals) -> Value {
    json!({
        "trace": &*c.trace,
        "inferences": c.inferences,
        "peak_chars": c.peak_chars,
        "final_chars": c.final_chars,
        "chars_removed": c.chars_removed,
    })
}

/// The `facts_at_risk` object of one tool result.
pub fn fact_json(f: &FactAtRisk) -> Value {
    json!({
        "trace": &*f.trace,
        "position": f.position,
        "line": f.line,
        "name": f.name,
        "tool_call_id": f.tool_call_id,
        "policy": f.policy,
        "effect": f.effect,
        "inference": f.inference,
    })
}

/// The `state_writes` object of one finding (values read from `NaN` / `Infinity` as the
/// strings of those tokens, [`crate::trace::nonfinite::display_value`]).
pub fn state_json(f: &StateFinding) -> Value {
    use crate::trace::nonfinite::display_value;
    json!({
        "trace": &*f.trace,
        "line": f.line,
        "field": f.field,
        "op": f.op,
        "value": display_value(&f.value),
        "policy": f.policy,
        "kind": f.kind,
        "outcome": f.outcome.as_str(),
        "message": f.message,
        "result": f.result.as_ref().map(display_value),
        "committed": f.committed.as_ref().map(display_value),
        "actual": f.actual,
        "documented": f.documented,
    })
}

fn phase(kind: &str) -> &'static str {
    match kind {
        "tool-output-clip" => "append time",
        "tool-eviction" | "sliding-window" | "compaction" => "compile time",
        _ => "custom",
    }
}

/// The message-policy section: per-inference figures, per-conversation totals, facts at risk.
#[derive(Debug, Clone, Default)]
pub struct MessageSection {
    /// `(id, kind)` of each message policy, in order.
    pub policies: Vec<(String, String)>,
    /// Every inference replayed, in trace order.
    pub inferences: Vec<InferenceStats>,
    /// Per conversation.
    pub contexts: Vec<ContextTotals>,
    /// Facts at risk, in order.
    pub facts: Vec<FactAtRisk>,
    /// Run-level notes (e.g. traces not replayed).
    pub notes: Vec<String>,
}

impl MessageSection {
    /// An empty section for `cfg`.
    pub fn new(cfg: &PolicyConfig) -> Self {
        Self {
            policies: cfg
                .messages
                .iter()
                .map(|p| (p.id().to_string(), p.kind().to_string()))
                .collect(),
            ..Default::default()
        }
    }

    /// Adds a finished conversation.
    pub fn add(&mut self, o: Outcome) {
        self.inferences.extend(o.inferences);
        self.contexts.push(o.totals);
        self.facts.extend(o.facts);
    }

    /// Adds a run-level note.
    pub fn note(&mut self, n: String) {
        self.notes.push(n);
    }

    /// Inferences sent with at least one orphaned message.
    pub fn orphaned_inferences(&self) -> usize {
        self.inferences
            .iter()
            .filter(|s| !s.orphaned.is_empty())
            .count()
    }
}

fn effects_text(s: &InferenceStats) -> Vec<String> {
    let mut parts = Vec::new();
    if !s.clipped.is_empty() {
        parts.push(format!("clipped {}", ranges(&s.clipped)));
    }
    if !s.vetoed.is_empty() {
        parts.push(format!("vetoed {}", ranges(&s.vetoed)));
    }
    for (policy, effect, pos) in &s.by_policy {
        if !pos.is_empty() {
            parts.push(format!("{effect} {} by `{policy}`", ranges(pos)));
        }
    }
    for (policy, n) in &s.lost_summaries {
        parts.push(format!(
            "dropped the summary of {n} earlier messages by `{policy}`"
        ));
    }
    parts
}

impl Section for MessageSection {
    fn title(&self) -> String {
        "Message policies".into()
    }

    fn json(&self) -> Vec<(String, Value)> {
        vec![
            (
                "inferences".into(),
                Value::Array(self.inferences.iter().map(inference_json).collect()),
            ),
            (
                "contexts".into(),
                Value::Array(self.contexts.iter().map(context_json).collect()),
            ),
            (
                "facts_at_risk".into(),
                Value::Array(self.facts.iter().map(fact_json).collect()),
            ),
        ]
    }

    fn json_lines(&self) -> Vec<Value> {
        let mut out: Vec<Value> = self
            .inferences
            .iter()
            .map(|s| json!({ "inference": inference_json(s) }))
            .collect();
        out.extend(
            self.contexts
                .iter()
                .map(|c| json!({ "context": context_json(c) })),
        );
        out.extend(
            self.facts
                .iter()
                .map(|f| json!({ "fact_at_risk": fact_json(f) })),
        );
        out
    }

    fn text(&self) -> String {
        let mut t = String::new();
        let stack: Vec<String> = self
            .policies
            .iter()
            .map(|(id, kind)| {
                if id == kind {
                    format!("{kind} ({})", phase(kind))
                } else {
                    format!("`{id}` {kind} ({})", phase(kind))
                }
            })
            .collect();
        let _ = writeln!(t, "Policies in order: {}.", stack.join(", "));
        for s in &self.inferences {
            let effects = effects_text(s);
            if effects.is_empty()
                && s.orphaned.is_empty()
                && s.errors.is_empty()
                && s.summaries.is_empty()
            {
                continue;
            }
            let _ = writeln!(
                t,
                "{}:{}:{} inference {}: {} messages, {} chars (~{} tokens), raw log {} chars{}{}",
                s.file,
                s.line,
                trace_tag(&s.trace, &s.file),
                s.inference,
                s.messages,
                s.chars,
                s.est_tokens,
                s.raw_chars,
                if effects.is_empty() { "" } else { "; " },
                effects.join("; ")
            );
            for n in &s.summaries {
                let trigger = match n.trigger {
                    super::compaction::Trigger::Usage(u) => format!("previous usage {u} tokens"),
                    super::compaction::Trigger::Estimate(e) => format!("estimate {e} tokens"),
                };
                let _ = writeln!(
                    t,
                    "    `{}` compacted {} messages ({trigger} > {}) into a {} summary of {} chars; the summariser would read {} chars",
                    n.policy,
                    n.folded,
                    n.threshold,
                    if n.recorded { "recorded" } else { "placeholder" },
                    n.summary_chars,
                    n.transcript_chars
                );
            }
            if !s.orphaned.is_empty() {
                let _ = writeln!(
                    t,
                    "    orphaned {}: sent without their tool call/result partner, which a cut removed; providers reject this request",
                    ranges(&s.orphaned)
                );
            }
            for e in &s.errors {
                let _ = writeln!(t, "    {e}");
            }
        }
        for f in &self.facts {
            let when = match f.inference {
                Some(i) => format!("at inference {i}"),
                None => "at append time".into(),
            };
            let _ = writeln!(
                t,
                "{}:{}:{} fact at risk: tool result at position {}{}{} {} by `{}` {when}, before any inference saw it",
                f.file,
                f.line,
                trace_tag(&f.trace, &f.file),
                f.position,
                f.name.as_deref().map_or(String::new(), |n| format!(" (`{n}`")),
                match (&f.name, &f.tool_call_id) {
                    (Some(_), Some(id)) => format!(", call {id})"),
                    (Some(_), None) => ")".into(),
                    (None, Some(id)) => format!(" (call {id})"),
                    (None, None) => String::new(),
                },
                f.effect,
                f.policy
            );
        }
        for n in &self.notes {
            let _ = writeln!(t, "note: {n}");
        }
        if self.contexts.is_empty() {
            let _ = writeln!(t, "No conversation with message or inference records.");
            return t;
        }
        let _ = writeln!(
            t,
            "Conversations (chars = code points of message contents, system prompt excluded):"
        );
        for c in &self.contexts {
            let inferred = if c.inferred == c.inferences && c.inferences > 0 {
                " (inferred)".to_string()
            } else if c.inferred > 0 {
                format!(" ({} inferred)", c.inferred)
            } else {
                String::new()
            };
            let mut extra = Vec::new();
            if c.compactions > 0 {
                extra.push(format!(
                    "{} compaction{} ({} with a recorded summary)",
                    c.compactions,
                    if c.compactions == 1 { "" } else { "s" },
                    c.recorded_summaries_used
                ));
            }
            if c.facts_at_risk > 0 {
                extra.push(format!("{} facts at risk", c.facts_at_risk));
            }
            if c.orphaned_pairs > 0 {
                extra.push(format!("{} orphaned pairs", c.orphaned_pairs));
            }
            let saved: Vec<String> = c
                .saved_by_policy
                .iter()
                .filter(|(_, n)| *n != 0)
                .map(|(id, n)| format!("`{id}` {n}"))
                .collect();
            if !saved.is_empty() {
                extra.push(format!("chars removed by {}", saved.join(", ")));
            }
            let _ = writeln!(
                t,
                "  {}: {} inferences{inferred}, peak {} chars, final {} chars in {} of {} messages, {} of {} raw chars removed{}{}",
                c.trace,
                c.inferences,
                c.peak_chars,
                c.final_chars,
                c.final_messages,
                c.raw_messages,
                c.chars_removed,
                c.raw_chars,
                if extra.is_empty() { "" } else { "; " },
                extra.join(", ")
            );
            for n in &c.notes {
                let _ = writeln!(t, "    note: {n}");
            }
            if c.recorded_summaries_unused > 0 {
                let _ = writeln!(
                    t,
                    "    note: {} recorded summaries were not used by any simulated compaction",
                    c.recorded_summaries_unused
                );
            }
        }
        let facts: u64 = self.contexts.iter().map(|c| c.facts_at_risk).sum();
        let _ = writeln!(
            t,
            "{} conversations, {} inferences; {} sent with orphaned pairs; {} facts at risk.",
            self.contexts.len(),
            self.inferences.len(),
            self.orphaned_inferences(),
            facts
        );
        t
    }

    fn html(&self) -> String {
        let mut h = String::new();
        let stack: Vec<String> = self
            .policies
            .iter()
            .map(|(id, kind)| {
                if id == kind {
                    format!("<code>{}</code> ({})", esc(kind), phase(kind))
                } else {
                    format!("<code>{}</code> {} ({})", esc(id), esc(kind), phase(kind))
                }
            })
            .collect();
        let _ = write!(h, "<p>Policies in order: {}.</p>", stack.join(", "));
        let _ = write!(
            h,
            "<p class=\"muted\">Working-context size per inference (code points of message contents, system prompt excluded): \
             <span style=\"color:#9e9e9e\">&#9472;&#9472; raw log</span>, <span style=\"color:#1e88e5\">&#9472;&#9472; working context</span>; \
             <span style=\"color:#fb8c00\">&#9474; compaction</span>, <span style=\"color:#e53935\">&#9650; window drop</span>, \
             <span style=\"color:#8e24aa\">&#9679; eviction</span>, <span style=\"color:#e53935\">&#9711; orphaned pair sent</span>. Hover a point for details.</p>"
        );
        for n in &self.notes {
            let _ = write!(h, "<p class=\"muted\">note: {}</p>", esc(n));
        }
        let mut start = 0usize;
        for c in &self.contexts {
            let n = c.inferences as usize;
            let end = (start + n).min(self.inferences.len());
            let infs = &self.inferences[start..end];
            start = end;
            let open = if c.facts_at_risk + c.orphaned_pairs + c.compactions > 0 {
                " open"
            } else {
                ""
            };
            let _ = write!(
                h,
                "<details{open}><summary><code>{}</code> <span class=\"muted\">{} inferences, peak {} chars, final {} chars, {} removed of {} raw; {} compactions, {} facts at risk, {} orphaned pairs</span></summary>",
                esc(&c.trace),
                c.inferences,
                c.peak_chars,
                c.final_chars,
                c.chars_removed,
                c.raw_chars,
                c.compactions,
                c.facts_at_risk,
                c.orphaned_pairs
            );
            let saved: Vec<String> = c
                .saved_by_policy
                .iter()
                .map(|(id, n)| format!("<code>{}</code> {n}", esc(id)))
                .collect();
            if !saved.is_empty() {
                let _ = write!(
                    h,
                    "<p class=\"muted\">Net chars each policy took out of the working context: {}.</p>",
                    saved.join(", ")
                );
            }
            h.push_str(&chart(infs));
            let rows: Vec<&InferenceStats> = infs
                .iter()
                .filter(|s| {
                    !effects_text(s).is_empty() || !s.orphaned.is_empty() || !s.errors.is_empty()
                })
                .collect();
            if !rows.is_empty() {
                h.push_str("<table><tr><th>inference</th><th>line</th><th>messages</th><th>chars</th><th>raw chars</th><th>effects</th><th>orphaned</th></tr>");
                for s in rows {
                    let mut eff = effects_text(s).join("; ");
                    for e in &s.errors {
                        eff.push_str("; ");
                        eff.push_str(e);
                    }
                    let _ = write!(
                        h,
                        "<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        s.inference,
                        if s.inferred { " (inferred)" } else { "" },
                        s.line,
                        s.messages,
                        s.chars,
                        s.raw_chars,
                        esc(&eff),
                        esc(&ranges(&s.orphaned))
                    );
                }
                h.push_str("</table>");
            }
            h.push_str("</details>");
        }
        if !self.facts.is_empty() {
            h.push_str("<h3>Facts at risk</h3><table><tr><th>trace</th><th>line</th><th>position</th><th>tool</th><th>call</th><th>effect</th><th>policy</th><th>inference</th></tr>");
            for f in &self.facts {
                let _ = write!(
                    h,
                    "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
                    esc(&f.trace),
                    f.line,
                    f.position,
                    esc(f.name.as_deref().unwrap_or("")),
                    esc(f.tool_call_id.as_deref().unwrap_or("")),
                    f.effect,
                    esc(&f.policy),
                    f.inference.map_or("append".to_string(), |i| i.to_string())
                );
            }
            h.push_str("</table>");
        }
        h
    }

    fn sarif_results(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for s in self.inferences.iter().filter(|s| !s.orphaned.is_empty()) {
            out.push(json!({
                "ruleId": "orphaned-pair",
                "level": "error",
                "message": {"text": format!(
                    "inference {} of {} is sent with {} at {} {} whose tool call/result partner a cut removed; providers reject this request",
                    s.inference,
                    s.trace,
                    if s.orphaned.len() == 1 { "a message" } else { "messages" },
                    if s.orphaned.len() == 1 { "position" } else { "positions" },
                    ranges(&s.orphaned))},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": &*s.file},
                    "region": {"startLine": s.line.max(1)}
                }}],
                "properties": {"trace": &*s.trace, "inference": s.inference, "orphaned": s.orphaned},
            }));
        }
        for f in &self.facts {
            out.push(json!({
                "ruleId": "fact-at-risk",
                "level": "warning",
                "message": {"text": format!(
                    "tool result at position {}{} is {} by `{}` before any inference saw it",
                    f.position,
                    f.name.as_deref().map_or(String::new(), |n| format!(" (`{n}`)")),
                    f.effect,
                    f.policy)},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": &*f.file},
                    "region": {"startLine": f.line.max(1)}
                }}],
                "properties": {"trace": &*f.trace, "position": f.position, "policy": f.policy, "effect": f.effect, "inference": f.inference},
            }));
        }
        out
    }

    fn sarif_rules(&self) -> Vec<Value> {
        vec![
            json!({"id": "orphaned-pair", "shortDescription": {"text": "an inference is sent with a tool call or result whose partner a sliding-window or compaction cut removed (pyagentic-reference §2.3)"}}),
            json!({"id": "fact-at-risk", "shortDescription": {"text": "a tool result is stubbed, dropped, summarised or vetoed before any inference saw it"}}),
        ]
    }

    fn has_findings(&self) -> bool {
        !self.facts.is_empty() || self.orphaned_inferences() > 0
    }
}

/// Inline SVG: raw-log and working-context size per inference, with effect marks.
fn chart(infs: &[InferenceStats]) -> String {
    if infs.is_empty() {
        return "<p class=\"muted\">no inference</p>".into();
    }
    let (w, hgt) = (720.0f64, 220.0f64);
    let (left, right, top, bottom) = (70.0, 16.0, 14.0, 30.0);
    let pw = w - left - right;
    let ph = hgt - top - bottom;
    let ymax = infs
        .iter()
        .map(|s| s.raw_chars.max(s.chars))
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let n = infs.len();
    let x = |i: usize| -> f64 {
        if n == 1 {
            left + pw / 2.0
        } else {
            left + pw * i as f64 / (n - 1) as f64
        }
    };
    let y = |v: u64| -> f64 { top + ph - ph * v as f64 / ymax };
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{hgt}\" viewBox=\"0 0 {w} {hgt}\" role=\"img\" aria-label=\"context size per inference\" style=\"font:11px system-ui,sans-serif\">"
    );
    let _ = write!(
        s,
        "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{:.1}\" stroke=\"#999\"/><line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>",
        top + ph,
        top + ph,
        left + pw,
        top + ph
    );
    for q in 0..=4u64 {
        let v = (ymax as u64) * q / 4;
        let yy = y(v);
        if q > 0 {
            let _ = write!(
                s,
                "<line x1=\"{left}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"#eee\"/>",
                left + pw
            );
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{v}</text>",
            left - 4.0,
            yy + 4.0
        );
    }
    let _ = write!(
        s,
        "<text x=\"12\" y=\"{:.1}\" transform=\"rotate(-90 12 {:.1})\" text-anchor=\"middle\">chars</text>",
        top + ph / 2.0,
        top + ph / 2.0
    );
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">0</text><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">inference</text>",
        x(0),
        hgt - 12.0,
        x(n - 1),
        hgt - 12.0,
        n - 1,
        left + pw / 2.0,
        hgt - 2.0
    );
    for (i, st) in infs.iter().enumerate() {
        if !st.summaries.is_empty() {
            let _ = write!(
                s,
                "<line x1=\"{:.1}\" y1=\"{top}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#fb8c00\" stroke-width=\"2\"><title>inference {}: compaction folded {} messages</title></line>",
                x(i),
                x(i),
                top + ph,
                st.inference,
                st.summaries.iter().map(|n| n.folded).sum::<u64>()
            );
        }
    }
    let line = |vals: &dyn Fn(&InferenceStats) -> u64| -> String {
        infs.iter()
            .enumerate()
            .map(|(i, st)| format!("{:.1},{:.1}", x(i), y(vals(st))))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = write!(
        s,
        "<polyline fill=\"none\" stroke=\"#9e9e9e\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\" points=\"{}\"/>",
        line(&|st| st.raw_chars)
    );
    let _ = write!(
        s,
        "<polyline fill=\"none\" stroke=\"#1e88e5\" stroke-width=\"2\" points=\"{}\"/>",
        line(&|st| st.chars)
    );
    for (i, st) in infs.iter().enumerate() {
        let mut title = format!(
            "inference {}{} (line {}): {} messages, {} chars (~{} tokens); raw log {} messages, {} chars",
            st.inference,
            if st.inferred { " (inferred)" } else { "" },
            st.line,
            st.messages,
            st.chars,
            st.est_tokens,
            st.raw_messages,
            st.raw_chars
        );
        for e in effects_text(st) {
            title.push_str("; ");
            title.push_str(&e);
        }
        if !st.orphaned.is_empty() {
            title.push_str(&format!("; orphaned {}", ranges(&st.orphaned)));
        }
        let (cx, cy) = (x(i), y(st.chars));
        let _ = write!(
            s,
            "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"3\" fill=\"#1e88e5\"><title>{}</title></circle>",
            esc(&title)
        );
        if !st.orphaned.is_empty() {
            let _ = write!(
                s,
                "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"7\" fill=\"none\" stroke=\"#e53935\" stroke-width=\"2\"/>"
            );
        }
        if !st.dropped.is_empty() {
            let _ = write!(
                s,
                "<path d=\"M{:.1},{:.1} l-4,7 h8 z\" fill=\"#e53935\"><title>window dropped {}</title></path>",
                cx,
                top,
                esc(&ranges(&st.dropped))
            );
        }
        if !st.evicted.is_empty() {
            let _ = write!(
                s,
                "<circle cx=\"{cx:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#8e24aa\"><title>evicted {}</title></circle>",
                top + ph - 5.0,
                esc(&ranges(&st.evicted))
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// The state-policy section: each write a validator would veto, raise on, or transform.
#[derive(Debug, Clone, Default)]
pub struct StateSection {
    /// `(id, kind, fields)` of each state policy, in order.
    pub policies: Vec<(String, &'static str, Vec<String>)>,
    /// Findings, in trace order.
    pub findings: Vec<StateFinding>,
    /// Counters.
    pub totals: StateTotals,
}

impl StateSection {
    /// An empty section for `cfg`.
    pub fn new(cfg: &PolicyConfig) -> Self {
        Self {
            policies: cfg
                .state
                .iter()
                .map(|p| (p.id.clone(), p.check.kind(), p.fields.clone()))
                .collect(),
            ..Default::default()
        }
    }

    fn summary_json(&self) -> Value {
        let t = &self.totals;
        json!({"writes": t.writes, "checked": t.checked, "vetoed": t.vetoed, "raised": t.raised, "transformed": t.transformed})
    }
}

impl Section for StateSection {
    fn title(&self) -> String {
        "State policies".into()
    }

    fn json(&self) -> Vec<(String, Value)> {
        vec![
            (
                "state_writes".into(),
                Value::Array(self.findings.iter().map(state_json).collect()),
            ),
            ("state_summary".into(), self.summary_json()),
        ]
    }

    fn json_lines(&self) -> Vec<Value> {
        let mut out: Vec<Value> = self
            .findings
            .iter()
            .map(|f| json!({ "state_write": state_json(f) }))
            .collect();
        out.push(json!({ "state_summary": self.summary_json() }));
        out
    }

    fn text(&self) -> String {
        let mut t = String::new();
        for f in &self.findings {
            let what = match f.outcome {
                super::state::Outcome::Vetoed => "would be vetoed",
                super::state::Outcome::Raised => "would raise",
                super::state::Outcome::Transformed => "would be transformed",
            };
            let _ = writeln!(
                t,
                "{}:{}:{} `{}` {} {}: {what} by `{}` ({}): {}",
                f.file,
                f.line,
                trace_tag(&f.trace, &f.file),
                f.field,
                f.op,
                show(&f.value),
                f.policy,
                f.kind,
                f.message
            );
            let _ = writeln!(t, "    pyAgentic: {}", f.actual);
            if let Some(d) = &f.documented {
                let _ = writeln!(t, "    its docs say: {d}");
            }
        }
        let s = &self.totals;
        let _ = writeln!(
            t,
            "State writes: {} replayed, {} to fields with policies; {} would be vetoed, {} would raise (committed anyway), {} transformed.",
            s.writes, s.checked, s.vetoed, s.raised, s.transformed
        );
        t
    }

    fn html(&self) -> String {
        let mut h = String::new();
        let s = &self.totals;
        let _ = write!(
            h,
            "<p>{} state writes replayed, {} to fields with policies: {} would be vetoed, {} would raise (committed anyway), {} transformed.</p>",
            s.writes, s.checked, s.vetoed, s.raised, s.transformed
        );
        if self.findings.is_empty() {
            return h;
        }
        h.push_str("<table><tr><th>trace</th><th>line</th><th>field</th><th>op</th><th>value</th><th>policy</th><th>outcome</th><th>why</th><th>pyAgentic does</th><th>its docs say</th></tr>");
        for f in &self.findings {
            let _ = write!(
                h,
                "<tr><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td><code>{}</code> {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&f.trace),
                f.line,
                esc(&f.field),
                esc(&f.op),
                esc(&show(&f.value)),
                esc(&f.policy),
                f.kind,
                f.outcome.as_str(),
                esc(&f.message),
                esc(&f.actual),
                esc(f.documented.as_deref().unwrap_or(""))
            );
        }
        h.push_str("</table>");
        h
    }

    fn sarif_results(&self) -> Vec<Value> {
        self.findings
            .iter()
            .map(|f| {
                let level = match f.outcome {
                    super::state::Outcome::Transformed => "note",
                    _ => "warning",
                };
                json!({
                    "ruleId": f.policy,
                    "level": level,
                    "message": {"text": format!("`{}` {} {}: {} ({}). pyAgentic: {}", f.field, f.op, show(&f.value), f.outcome.as_str(), f.message, f.actual)},
                    "locations": [{"physicalLocation": {
                        "artifactLocation": {"uri": &*f.file},
                        "region": {"startLine": f.line.max(1)}
                    }}],
                    "properties": {"trace": &*f.trace, "field": f.field, "op": f.op, "outcome": f.outcome.as_str(), "committed": f.committed.as_ref().map(crate::trace::nonfinite::display_value), "documented": f.documented},
                })
            })
            .collect()
    }

    fn sarif_rules(&self) -> Vec<Value> {
        self.policies
            .iter()
            .map(|(id, kind, fields)| json!({"id": id, "shortDescription": {"text": format!("state policy `{kind}` on {}", fields.join(", "))}}))
            .collect()
    }

    fn has_findings(&self) -> bool {
        self.totals.vetoed + self.totals.raised > 0
    }
}
