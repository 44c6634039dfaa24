//! Output formats for `cellguard replay`: text, json (spec §8 shape), json-lines (one decision
//! per line, summary last), SARIF 2.1.0, and a self-contained HTML report with a per-trace
//! timeline.

use cellguard_lints::replay::{
    BlockStreak, CompletionDecision, Decision, Report, TraceTotals, Verdict,
};
use cellguard_lints::trace::Skip;
use serde_json::{json, Value};
use std::io::{Seek, Write};

/// `--output-format` of `cellguard replay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReplayFormat {
    /// Human-readable report.
    Text,
    /// `{"summary": ..., "decisions": [...]}`.
    Json,
    /// One decision per line, the summary last.
    JsonLines,
    /// SARIF 2.1.0.
    Sarif,
    /// One self-contained HTML file.
    Html,
}

fn completion_json(c: &CompletionDecision) -> Value {
    json!({
        "trace": &*c.trace,
        "line": c.line,
        "cell": c.cell,
        "recorded": c.recorded.map(|a| if a { "allowed" } else { "rejected" }),
        "decision": if c.unreached { "unreached" } else {
            match &c.simulated { Some(v) if v.allowed => "allowed", Some(_) => "rejected", None => "unknown" }
        },
        "reason": c.simulated.as_ref().map(|v| v.reason.clone()),
        "suggestions": c.simulated.as_ref().map(|v| v.suggestions.clone()).unwrap_or_default(),
    })
}

/// True for the completions the human-readable reports list one by one (text lines, HTML rows,
/// SARIF results): those whose verdict would change, and those the simulated validator rejects.
/// `json` and `json-lines` carry every completion.
fn completion_listed(c: &CompletionDecision) -> bool {
    c.changed() || c.simulated.as_ref().is_some_and(|v| !v.allowed)
}

/// The recorded verdict of a completion in words: `accepted`, `rejected` or `unknown`.
fn completion_recorded(c: &CompletionDecision) -> &'static str {
    match c.recorded {
        Some(true) => "accepted",
        Some(false) => "rejected",
        None => "unknown",
    }
}

/// The simulated verdict of a completion in words, with the validator's reason:
/// `accepted: REASON`, `rejected: REASON`, `unreached`, or `unknown (...)` when the trace does
/// not record what the validator needs (issue 6 R4). Trace text is not escaped here.
fn completion_simulated(c: &CompletionDecision) -> String {
    match (&c.simulated, c.unreached) {
        (_, true) => "unreached".to_string(),
        (Some(v), _) => format!(
            "{}: {}",
            if v.allowed { "accepted" } else { "rejected" },
            v.reason
        ),
        (None, _) => "unknown (the trace does not record the results dict)".into(),
    }
}

/// Completions whose simulated verdict is unknown (not replayable: no goals and no recorded
/// reason, issue 6 R4): counted apart, they neither change nor stay.
fn completions_unknown(report: &Report) -> usize {
    report
        .completions
        .iter()
        .filter(|c| c.simulated.is_none() && !c.unreached)
        .count()
}

/// The run's totals as every machine-readable format writes them (`json` and `json-lines`
/// `summary`, SARIF `run.properties.summary`): the engine's summary (spec §8 plus
/// `records_read`), then `changed` (calls whose outcome changes), `matching` (`key`,
/// `substring`, or `mixed (key: ...; substring: ...)`), and, when any completion was replayed,
/// `completions`, `completions_changed` and `completions_unknown` (the text summary's
/// `Completions:` line).
fn summary_json(report: &Report) -> Value {
    let s = &report.summary;
    let mut v = s.to_json();
    v["changed"] = json!(s.changed);
    v["matching"] = json!(matching(report));
    if s.completions > 0 {
        v["completions"] = json!(s.completions);
        v["completions_changed"] = json!(s.completions_changed);
        v["completions_unknown"] = json!(completions_unknown(report));
    }
    v
}

/// A skipped record or reader warning as JSON: `{file, line, column, message}` (`line` 0: the
/// file as a whole; `column`: one-based byte column, or null), the message as standard error
/// shows it.
fn skip_json(s: &Skip) -> Value {
    json!({
        "file": s.path.display().to_string(),
        "line": s.line,
        "column": s.column,
        "message": cellguard_lints::trace::nonfinite::display(&s.message),
    })
}

/// The per-trace totals ([`trace_json`] of each, in order): the `json` report's `traces`,
/// SARIF's `run.properties.traces`, as the buffered writers build them (the CLI spools them,
/// [`DecisionSpool::add_trace`]).
#[cfg(test)]
fn traces_json(report: &Report) -> Value {
    Value::Array(report.traces.iter().map(trace_json).collect())
}

/// The `json` document: `summary`, `decisions`, then `traces` (per-trace totals),
/// `block_streaks` and `completions` (when any), and the keys of report sections; `decisions`
/// holds `report.decisions`, `block_streaks` `report.streaks` (the buffered form, kept as the
/// tests' reference for the streamed one).
#[cfg(test)]
pub fn json_report(report: &Report) -> Value {
    json_report_with(
        report,
        Value::Array(report.decisions.iter().map(Decision::to_json).collect()),
        traces_json(report),
        (!report.streaks.is_empty())
            .then(|| Value::Array(report.streaks.iter().map(streak_json).collect())),
    )
}

/// One `block_streaks` entry of the `json` report: `{trace, line, action_key, count, reason,
/// suggestion}`.
fn streak_json(s: &BlockStreak) -> Value {
    json!({"trace": &*s.trace, "line": s.line, "action_key": s.action_key, "count": s.count,
           "reason": s.reason, "suggestion": s.suggestion})
}

/// The `json` document with `decisions` and `traces` set to the given values, and
/// `block_streaks` when `streaks` is given (the report has any).
fn json_report_with(
    report: &Report,
    decisions: Value,
    traces: Value,
    streaks: Option<Value>,
) -> Value {
    let mut top = serde_json::Map::new();
    top.insert("summary".into(), summary_json(report));
    top.insert("decisions".into(), decisions);
    top.insert("traces".into(), traces);
    if let Some(streaks) = streaks {
        top.insert("block_streaks".into(), streaks);
    }
    if !report.completions.is_empty() {
        top.insert(
            "completions".into(),
            Value::Array(report.completions.iter().map(completion_json).collect()),
        );
    }
    if !report.skipped.is_empty() {
        top.insert(
            "skipped".into(),
            Value::Array(report.skipped.iter().map(skip_json).collect()),
        );
    }
    if !report.warnings.is_empty() {
        top.insert(
            "warnings".into(),
            Value::Array(report.warnings.iter().map(skip_json).collect()),
        );
    }
    if report.warnings.not_kept() > 0 {
        top.insert(
            "warnings_not_listed".into(),
            report.warnings.not_kept().into(),
        );
    }
    for s in &report.sections {
        for (k, v) in s.json() {
            top.insert(k, v);
        }
    }
    Value::Object(top)
}

/// Writes the `json` document from `report.decisions` (buffered; the tests' reference).
#[cfg(test)]
pub fn json(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(&json_report(report)).unwrap_or_default()
    )
}

/// Writes what `json-lines` prints after the (streamed) decisions: section lines, completions,
/// then `{"summary": ...}` last.
pub fn json_lines_tail(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    for s in &report.sections {
        for v in s.json_lines() {
            writeln!(out, "{v}")?;
        }
    }
    for c in &report.completions {
        writeln!(out, "{}", json!({"completion": completion_json(c)}))?;
    }
    for s in &report.skipped {
        writeln!(out, "{}", json!({"skipped": skip_json(s)}))?;
    }
    for s in &report.warnings {
        writeln!(out, "{}", json!({"warning": skip_json(s)}))?;
    }
    if report.warnings.not_kept() > 0 {
        writeln!(
            out,
            "{}",
            json!({"warnings_not_listed": report.warnings.not_kept()})
        )?;
    }
    writeln!(out, "{}", json!({"summary": summary_json(report)}))
}

/// The `json-lines` line that closes one trace (issue 6 T10), written when the trace ends:
/// `{"trace": NAME, "totals": {agent_id, format, epoch, on_block, config, calls, allowed,
/// blocked, unreached, changed}}` (the values of the `json` report's `traces` entry; its block
/// streaks were written as each ended, [`json_lines_streak`]).
///
/// Errors: those of `out`.
pub fn json_lines_trace_end(totals: &TraceTotals, out: &mut impl Write) -> std::io::Result<()> {
    let t = totals;
    writeln!(
        out,
        "{}",
        json!({"trace": &*t.trace, "totals": {"agent_id": agent_shown(t), "format": t.format, "epoch": t.epoch,
               "on_block": t.on_block, "config": t.config.as_deref(), "calls": t.calls, "allowed": t.allowed,
               "blocked": t.blocked, "unreached": t.unreached, "changed": t.changed}})
    )
}

/// The `json-lines` report's line of one block streak: `{"trace": NAME, "block_streak": {line,
/// action_key, count, reason, suggestion}}` (the `json` report's `block_streaks` entry).
pub fn json_lines_streak(s: &BlockStreak, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{}",
        json!({"trace": &*s.trace, "block_streak": {"line": s.line, "action_key": s.action_key,
               "count": s.count, "reason": s.reason, "suggestion": s.suggestion}})
    )
}

/// The agent id of a trace as reports show it (a `NaN` / `Infinity` stand-in as its token).
fn agent_shown(t: &TraceTotals) -> Option<std::borrow::Cow<'_, str>> {
    t.agent_id
        .as_deref()
        .map(cellguard_lints::trace::nonfinite::display)
}

/// ` [#N]` when the trace is one of several in its file (` [NAME]` for other names).
fn trace_tag(trace: &str, file: &str) -> String {
    match trace.strip_prefix(file) {
        Some("") => String::new(),
        Some(rest) => format!(" [{}]", ctl(rest)),
        None => format!(" [{}]", ctl(trace)),
    }
}

/// Escapes the control characters (C0 including CR/LF/TAB, DEL, C1) of trace-supplied text for
/// human-readable output as `\u{1b}`, so a key or reason from a trace can neither drive the
/// terminal (ANSI/OSC sequences) nor forge report lines (issue 6 T7). JSON formats escape
/// through serde instead.
pub fn ctl(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            o.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            o.push(c);
        }
    }
    std::borrow::Cow::Owned(o)
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The text report from `report.decisions` (buffered; the tests' reference for the streamed
/// form, [`DecisionSpool::write_text`]).
#[cfg(test)]
pub fn text(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    for d in &report.decisions {
        text_decision(d, false, out)?;
    }
    text_tail(
        report,
        !report.decisions.is_empty(),
        |out| {
            report
                .streaks
                .iter()
                .try_for_each(|st| text_streak(st, out))
        },
        out,
    )
}

/// The text report's line of one block streak: `FILE:LINE:[ #N] `KEY` blocked N times in a row
/// (block streak)`.
fn text_streak(st: &BlockStreak, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{}:{}:{} `{}` blocked {} times in a row (block streak)",
        ctl(&st.file),
        st.line,
        trace_tag(&st.trace, &st.file),
        ctl(&st.action_key),
        st.count
    )
}

/// The text report's lines of one listed decision: `FILE:LINE:[ #N] cell C, call I: `KEY`
/// recorded R, DECISION[, outcome changes]` (an unreached call's reason in parentheses after
/// `unreached`), then the indented `reason:` and `suggestion:` lines when present. Trace-supplied text has its control characters escaped ([`ctl`]).
/// With `color` (`--color`, resolved as `cellguard check` resolves it), the location is bold
/// and the decision coloured (blocked red, unreached yellow, allowed green) with ANSI escapes.
fn text_decision(d: &Decision, color: bool, out: &mut impl Write) -> std::io::Result<()> {
    use termcolor::{Color, ColorSpec};
    let where_ = trace_tag(&d.trace, &d.file);
    let cell = d.cell.map_or(String::new(), |c| format!("cell {c}, "));
    let key = if d.action_key != d.raw_key {
        format!(
            "`{}` (resolves to `{}`)",
            ctl(&d.raw_key),
            ctl(&d.action_key)
        )
    } else {
        format!("`{}`", ctl(&d.raw_key))
    };
    let (what, hue) = match d.decision {
        Verdict::Blocked => (
            format!("blocked by {}", ctl(d.guardrail.as_deref().unwrap_or("?"))),
            Color::Red,
        ),
        Verdict::Unreached => (
            match &d.reason {
                Some(r) => format!("unreached ({})", ctl(r)),
                None => "unreached".into(),
            },
            Color::Yellow,
        ),
        Verdict::Allowed => ("allowed".into(), Color::Green),
    };
    let location = format!("{}:{}:{where_}", ctl(&d.file), d.line);
    paint(out, color, ColorSpec::new().set_bold(true), &location)?;
    write!(
        out,
        " {cell}call {}: {key} recorded {}, ",
        d.index,
        d.recorded.as_str()
    )?;
    paint(
        out,
        color,
        ColorSpec::new().set_fg(Some(hue)).set_bold(true),
        &what,
    )?;
    if d.changed() {
        out.write_all(b", ")?;
        paint(
            out,
            color,
            ColorSpec::new().set_bold(true),
            "outcome changes",
        )?;
    }
    writeln!(out)?;
    if let Some(r) = d
        .reason
        .as_ref()
        .filter(|_| d.decision != Verdict::Unreached)
    {
        writeln!(out, "    reason: {}", ctl(r))?;
    }
    if let Some(s) = d.suggestion.as_deref().filter(|s| !s.is_empty()) {
        writeln!(out, "    suggestion: {}", ctl(s))?;
    }
    Ok(())
}

/// Writes `text`, wrapped in the ANSI escapes of `spec` and a reset when `color` is on.
fn paint(
    out: &mut impl Write,
    color: bool,
    spec: &termcolor::ColorSpec,
    text: &str,
) -> std::io::Result<()> {
    use termcolor::WriteColor;
    if !color {
        return out.write_all(text.as_bytes());
    }
    let mut w = termcolor::Ansi::new(out);
    w.set_color(spec)?;
    w.write_all(text.as_bytes())?;
    w.reset()
}

/// Trace names listed per config in the text report before `and N more`.
const TRACES_PER_CONFIG: usize = 10;

/// The text report's config line: `Config: PATH.` (or `none`) when every trace used the same,
/// else `Configs:` and one line per config with the traces that used it (issue 6 T4-7).
fn config_lines(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    let mut by_config: Vec<(Option<&str>, Vec<&str>)> = Vec::new();
    for t in &report.traces {
        let c = t.config.as_deref();
        match by_config.iter_mut().find(|(x, _)| *x == c) {
            Some((_, list)) => list.push(&t.trace),
            None => by_config.push((c, vec![&t.trace])),
        }
    }
    let name = |c: Option<&str>| c.map_or_else(|| "none".to_string(), |c| ctl(c).into_owned());
    match by_config.as_slice() {
        [] => Ok(()),
        [(c, _)] => writeln!(out, "Config: {}.", name(*c)),
        _ => {
            writeln!(out, "Configs:")?;
            for (c, traces) in &by_config {
                let shown: Vec<String> = traces
                    .iter()
                    .take(TRACES_PER_CONFIG)
                    .map(|t| ctl(t).into_owned())
                    .collect();
                let more = traces.len().saturating_sub(TRACES_PER_CONFIG);
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                writeln!(out, "  {}: {}{more}", name(*c), shown.join(", "))?;
            }
            Ok(())
        }
    }
}

/// What the text report prints after the listed decisions: changed or rejected completions,
/// block streaks (written by `streaks`, [`text_streak`] lines), a blank line when any decision
/// was listed (`listed`), the summary, blocks per guardrail, traces with blocks or changes, and
/// report sections.
fn text_tail<W: Write>(
    report: &Report,
    listed: bool,
    streaks: impl FnOnce(&mut W) -> std::io::Result<()>,
    out: &mut W,
) -> std::io::Result<()> {
    for c in report.completions.iter().filter(|c| completion_listed(c)) {
        writeln!(
            out,
            "{}:{}:{} signal_completion recorded {}, simulated {}",
            ctl(&c.file),
            c.line,
            trace_tag(&c.trace, &c.file),
            completion_recorded(c),
            ctl(&completion_simulated(c))
        )?;
    }
    streaks(out)?;
    let s = &report.summary;
    if listed {
        writeln!(out)?;
    }
    writeln!(
        out,
        "Replayed {}, {} ({}): {} allowed, {} blocked, {} unreached; {}.",
        plural(s.traces, "trace", "traces"),
        plural(s.calls, "call", "calls"),
        match &report.mixed_modes {
            Some(m) => format!("mixed matching: {m}"),
            None => format!("{} matching", report.mode.as_str()),
        },
        s.allowed,
        s.blocked,
        s.unreached,
        plural(s.changed, "outcome changes", "outcomes change")
    )?;
    writeln!(
        out,
        "Records: {} read, {} skipped.",
        s.records_read, s.records_skipped
    )?;
    config_lines(report, out)?;
    if s.completions > 0 {
        let unknown = completions_unknown(report);
        let unknown = if unknown > 0 {
            format!(", {unknown} unknown (not replayable)")
        } else {
            String::new()
        };
        writeln!(
            out,
            "Completions: {} replayed, {} would change{unknown}.",
            s.completions, s.completions_changed
        )?;
    }
    if !s.per_guardrail.is_empty() {
        writeln!(out, "Blocks per guardrail:")?;
        let w = s
            .per_guardrail
            .iter()
            .map(|(id, _)| id.len())
            .max()
            .unwrap_or(0);
        for (id, n) in &s.per_guardrail {
            writeln!(out, "  {id:<w$}  {n}")?;
        }
    }
    let changed: Vec<_> = report
        .traces
        .iter()
        .filter(|t| t.blocked + t.unreached + t.changed > 0)
        .collect();
    if !changed.is_empty() && report.traces.len() > 1 {
        writeln!(out, "Traces with blocks or changes:")?;
        for t in changed {
            let agent =
                agent_shown(t).map_or_else(String::new, |a| format!(" (agent {})", ctl(&a)));
            writeln!(
                out,
                "  {}{agent}: {} calls, {} blocked, {} unreached, {} changed ({}, epoch {}, on-block {})",
                ctl(&t.trace),
                t.calls,
                t.blocked,
                t.unreached,
                t.changed,
                ctl(&t.format),
                ctl(&t.epoch),
                ctl(&t.on_block)
            )?;
        }
    }
    for sec in &report.sections {
        writeln!(out, "\n{}\n{}", sec.title(), sec.text())?;
    }
    Ok(())
}

/// The SARIF result of one listed decision (blocked: error; unreached: note; allowed but
/// recorded blocked: warning), with its trace path as a URI reference.
fn sarif_result(d: &Decision) -> Value {
    let (rule, level, text) = match d.decision {
        Verdict::Blocked => (
            d.guardrail.as_deref().unwrap_or("guardrail").to_string(),
            "error",
            d.reason.clone().unwrap_or_default(),
        ),
        Verdict::Unreached => (
            "unreached".into(),
            "note",
            format!(
                "`{}` is never reached: {}",
                d.raw_key,
                d.reason
                    .as_deref()
                    .unwrap_or("an earlier call of its cell was blocked")
            ),
        ),
        Verdict::Allowed => (
            "outcome-changed".into(),
            "warning",
            format!(
                "`{}` was recorded as blocked but the configured guardrails allow it",
                d.raw_key
            ),
        ),
    };
    json!({
        "ruleId": rule,
        "level": level,
        "message": {"text": text},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": super::sarif::path_uri(&d.file)},
            "region": {"startLine": d.line}
        }}],
        "properties": {
            "trace": &*d.trace, "cell": d.cell, "index": d.index,
            "action_key": d.action_key, "raw_key": d.raw_key,
            "recorded": d.recorded.as_str(), "decision": d.decision.as_str(),
            "suggestion": d.suggestion,
        }
    })
}

/// The SARIF rule descriptors: one per guardrail that blocked, then `unreached` and
/// `outcome-changed`, then the sections'.
fn sarif_rules(report: &Report) -> Vec<Value> {
    let mut rules: Vec<Value> = report
        .summary
        .per_guardrail
        .iter()
        .map(|(id, _)| json!({"id": &**id, "shortDescription": {"text": format!("guardrail `{id}`")}}))
        .collect();
    rules.push(json!({"id": "unreached", "shortDescription": {"text": "call never evaluated: an earlier call of its cell was blocked, and the block aborted the cell or skipped the rest of the `try` body that swallowed it"}}));
    rules.push(json!({"id": "outcome-changed", "shortDescription": {"text": "recorded as blocked, allowed by the configured guardrails"}}));
    rules.push(json!({"id": "block-streak", "shortDescription": {"text": "the same key blocked again and again (Colony's BlockStreakTracker diagnostic)"}}));
    rules.push(json!({"id": "completion-validation", "shortDescription": {"text": "signal_completion whose replayed rule-based validation rejects it or changes its recorded verdict"}}));
    for s in &report.sections {
        rules.extend(s.sarif_rules());
    }
    rules
}

/// A SARIF location: the trace file as a URI reference, and the line when known (> 0).
fn sarif_location(file: &str, line: u64) -> Value {
    let mut loc = json!({"physicalLocation": {
        "artifactLocation": {"uri": super::sarif::path_uri(file)},
    }});
    if line > 0 {
        loc["physicalLocation"]["region"] = json!({"startLine": line});
    }
    loc
}

/// The SARIF result of one block streak (rule `block-streak`, level `note`): the text
/// report's streak line, with the latest block's reason and suggestion as properties.
fn sarif_streak(st: &BlockStreak) -> Value {
    json!({
        "ruleId": "block-streak",
        "level": "note",
        "message": {"text": format!("`{}` blocked {} times in a row (block streak)", st.action_key, st.count)},
        "locations": [sarif_location(&st.file, st.line)],
        "properties": {
            "trace": &*st.trace, "action_key": st.action_key, "count": st.count,
            "reason": st.reason, "suggestion": st.suggestion,
        }
    })
}

/// The SARIF result of one listed completion ([`completion_listed`]; rule
/// `completion-validation`): level `warning` when its verdict would change, `note` when it is
/// rejected as recorded. Message: the text report's line; properties: the `json` completion
/// object's fields plus `changed`.
fn sarif_completion(c: &CompletionDecision) -> Value {
    let mut props = completion_json(c);
    props["changed"] = json!(c.changed());
    json!({
        "ruleId": "completion-validation",
        "level": if c.changed() { "warning" } else { "note" },
        "message": {"text": format!(
            "signal_completion recorded {}, simulated {}",
            completion_recorded(c),
            completion_simulated(c)
        )},
        "locations": [sarif_location(&c.file, c.line)],
        "properties": props,
    })
}

/// The SARIF results that follow the decisions' and the block streaks': listed completions,
/// then the sections' results (trace paths as URI references).
fn tail_sarif_results(report: &Report) -> Vec<Value> {
    let mut results: Vec<Value> = report
        .completions
        .iter()
        .filter(|c| completion_listed(c))
        .map(sarif_completion)
        .collect();
    results.extend(section_sarif_results(report));
    results
}

/// The sections' SARIF results, trace paths as URI references.
fn section_sarif_results(report: &Report) -> Vec<Value> {
    let mut results = Vec::new();
    for s in &report.sections {
        results.extend(s.sarif_results());
    }
    // Trace paths as URI references, as `cellguard check` writes them (absolute paths become
    // `file://` URIs).
    for r in &mut results {
        if let Some(locs) = r.get_mut("locations").and_then(Value::as_array_mut) {
            for l in locs {
                if let Some(Value::String(u)) =
                    l.pointer_mut("/physicalLocation/artifactLocation/uri")
                {
                    *u = super::sarif::path_uri(u);
                }
            }
        }
    }
    results
}

/// A SARIF notification (`invocations[0].toolExecutionNotifications`) for a skipped record
/// (descriptor `record-skipped`) or a reader warning (`reader-warning`): level `warning`, the
/// message as standard error shows it (without the location, which is the notification's
/// `locations`; a byte column, when known, is the property `byte_column`, since SARIF columns
/// count UTF-16 code units).
fn sarif_notification(s: &Skip, descriptor: &str) -> Value {
    let mut n = json!({
        "descriptor": {"id": descriptor},
        "level": "warning",
        "message": {"text": cellguard_lints::trace::nonfinite::display(&s.message)},
        "locations": [sarif_location(&s.path.display().to_string(), s.line)],
    });
    if let Some(c) = s.column {
        n["properties"] = json!({"byte_column": c});
    }
    n
}

/// The run's tool-execution notifications: every kept skipped record and reader warning (the
/// first [`cellguard_lints::replay::MAX_KEPT_SKIPS`] of each), then one `note` counting those not
/// kept.
fn sarif_notifications(report: &Report) -> Vec<Value> {
    let mut out: Vec<Value> = report
        .skipped
        .iter()
        .map(|s| sarif_notification(s, "record-skipped"))
        .collect();
    let unkept = report
        .summary
        .records_skipped
        .saturating_sub(report.skipped.len() as u64);
    out.extend(
        report
            .warnings
            .iter()
            .map(|s| sarif_notification(s, "reader-warning")),
    );
    if report.warnings.not_kept() > 0 {
        out.push(json!({
            "descriptor": {"id": "reader-warning"},
            "level": "note",
            "message": {"text": format!("... and {} more warnings (not listed)", report.warnings.not_kept())},
        }));
    }
    if unkept > 0 {
        out.push(json!({
            "descriptor": {"id": "record-skipped"},
            "level": "note",
            "message": {"text": format!("... and {unkept} more skipped records (counted in run.properties.summary.records_skipped, not listed)")},
        }));
    }
    out
}

/// The run-level totals (`run.properties`): `summary` (the `json` summary, [`summary_json`])
/// and `traces` (the given value: the `json` report's per-trace totals).
fn sarif_run_properties(report: &Report, traces: Value) -> Value {
    json!({
        "summary": summary_json(report),
        "traces": traces,
    })
}

/// The matching mode in words: `key`, `substring`, or `mixed (key: a, b; substring: c)`.
fn matching(report: &Report) -> String {
    report.mixed_modes.as_ref().map_or_else(
        || report.mode.as_str().to_string(),
        |m| format!("mixed ({m})"),
    )
}

/// The SARIF document with `results` set to the given value: one run whose tool lists the
/// rules, whose invocation carries the skipped records and reader warnings as notifications,
/// and whose properties hold the run-level totals ([`sarif_run_properties`]).
fn sarif_doc(report: &Report, results: Value, traces: Value) -> Value {
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "cellguard",
                "informationUri": "https://github.com/cellguard/cellguard",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": sarif_rules(report),
                "notifications": [
                    {"id": "record-skipped", "shortDescription": {"text": "a malformed or unreadable trace record, skipped"}},
                    {"id": "reader-warning", "shortDescription": {"text": "a trace record read with a caveat (kept)"}},
                ],
            }},
            "invocations": [{
                "executionSuccessful": true,
                "toolExecutionNotifications": sarif_notifications(report),
            }],
            "properties": sarif_run_properties(report, traces),
            "results": results,
        }]
    })
}

/// SARIF 2.1.0 from `report.decisions` (buffered; the tests' reference for the streamed form):
/// one result per listed decision, rule = guardrail id, then the sections' results.
#[cfg(test)]
pub fn sarif(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    let mut results: Vec<Value> = report
        .decisions
        .iter()
        .filter(|d| d.notable())
        .map(sarif_result)
        .collect();
    results.extend(report.streaks.iter().map(sarif_streak));
    results.extend(tail_sarif_results(report));
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(&sarif_doc(
            report,
            Value::Array(results),
            traces_json(report)
        ))
        .unwrap_or_default()
    )
}

/// The listed decisions of a `text`, `json` or `sarif` report, written as they are made (each
/// one formatted into an anonymous temporary file: text lines, or JSON pretty-printed at its
/// final indentation) and copied into the report when the totals are known, so that the
/// report's memory does not grow with the number of listed decisions (the disk holds them
/// instead: about the size of the report). `json` and `sarif` put totals before the decisions
/// (`json`: `summary` first; `sarif`: the rules, one per guardrail that blocked, before
/// `results`), so their decisions cannot go straight to the output. `text` lists decisions
/// first, but the report is written only once the replay has ended well (a trace none of whose
/// records could be read ends the run with exit 2 and no report, issue 6 T3), and warnings go
/// to standard error before it; spooling keeps both. The per-trace totals of `json` (`traces`)
/// and `sarif` (`run.properties.traces`) are spooled the same way, into a second temporary
/// file, as each trace ends ([`DecisionSpool::add_trace`]), so a file of many short traces
/// does not hold a JSON tree per trace until the end (issue 6 T5-16), and so are the block
/// streaks, into a third, as each streak ends ([`DecisionSpool::add_streak`]; issue 6 T6-11:
/// an agent alternating between blocked actions made one entry per streak, 2-4 KB each, stay
/// in memory until the end). The bytes equal those of the buffered writers.
pub struct DecisionSpool {
    format: ReplayFormat,
    /// The listed decisions (text lines, or the items of `decisions` / `results`).
    decisions: Spill,
    /// The items of the per-trace totals array (`json` and `sarif`; `None` for `text`).
    traces: Option<Spill>,
    /// The block streaks (text lines, the items of `block_streaks`, or SARIF results that
    /// follow the decisions').
    streaks: Spill,
    /// ANSI colours in the text report ([`DecisionSpool::set_color`]).
    color: bool,
}

/// One spooled part of a report: an anonymous temporary file and the number of items in it.
struct Spill {
    file: std::io::BufWriter<std::fs::File>,
    entries: u64,
}

impl Spill {
    /// Errors: the temporary file cannot be created.
    fn new() -> std::io::Result<Self> {
        Ok(Spill {
            file: std::io::BufWriter::new(tempfile::tempfile()?),
            entries: 0,
        })
    }

    /// Appends `v` as one item of a JSON array whose items are indented by `indent`: pretty
    /// printed, every line indented, separated from the previous item by `,` and a newline.
    ///
    /// Errors: writing the temporary file.
    fn push(&mut self, v: &Value, indent: &str) -> std::io::Result<()> {
        if self.entries > 0 {
            self.file.write_all(b",\n")?;
        }
        self.entries += 1;
        let text = serde_json::to_string_pretty(v).map_err(std::io::Error::from)?;
        // JSON strings never hold a raw newline, so every line break is the formatter's.
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                self.file.write_all(b"\n")?;
            }
            self.file.write_all(indent.as_bytes())?;
            self.file.write_all(line.as_bytes())?;
        }
        Ok(())
    }

    /// Appends the items of `other` (spooled at the same indentation) after this spill's.
    ///
    /// Errors: writing this temporary file, reading back `other`'s.
    fn append(&mut self, other: Spill) -> std::io::Result<()> {
        if other.entries == 0 {
            return Ok(());
        }
        if self.entries > 0 {
            self.file.write_all(b",\n")?;
        }
        self.entries += other.entries;
        other.copy_to(&mut self.file)
    }

    /// Copies the spooled bytes to `out`.
    ///
    /// Errors: those of `out` and of reading back the temporary file.
    fn copy_to(self, out: &mut impl Write) -> std::io::Result<()> {
        let mut file = self.file.into_inner().map_err(|e| e.into_error())?;
        file.seek(std::io::SeekFrom::Start(0))?;
        std::io::copy(&mut file, out)?;
        Ok(())
    }
}

/// Marker value of a spooled array's place in the document before it is spliced in.
const SPLICE: &str = "cellguard-replay-spool";

/// One per-trace totals entry: `{trace, agent_id, format, epoch, on_block, config, calls,
/// allowed, blocked, unreached, changed}` (`agent_id`: the agent the recording names, or null,
/// issue 6 T5-6; `config`: the config file the trace was replayed with, or null).
fn trace_json(t: &TraceTotals) -> Value {
    json!({"trace": &*t.trace, "agent_id": agent_shown(t), "format": t.format, "epoch": t.epoch, "on_block": t.on_block,
           "config": t.config.as_deref(), "calls": t.calls, "allowed": t.allowed,
           "blocked": t.blocked, "unreached": t.unreached, "changed": t.changed})
}

impl DecisionSpool {
    /// A spool for `format` (`Text`, `Json` or `Sarif`; `None` for the others: `json-lines`
    /// streams, `html` keeps a bounded sample, [`HtmlDecisions`]).
    ///
    /// Errors: a temporary file cannot be created.
    pub fn new(format: ReplayFormat) -> std::io::Result<Option<Self>> {
        if !matches!(
            format,
            ReplayFormat::Text | ReplayFormat::Json | ReplayFormat::Sarif
        ) {
            return Ok(None);
        }
        Ok(Some(DecisionSpool {
            format,
            decisions: Spill::new()?,
            traces: match format {
                ReplayFormat::Text => None,
                _ => Some(Spill::new()?),
            },
            streaks: Spill::new()?,
            color: false,
        }))
    }

    /// Colours the text report's decisions with ANSI escapes (`--color`; off by default, and
    /// without effect on the other formats).
    pub fn set_color(&mut self, on: bool) {
        self.color = on && self.format == ReplayFormat::Text;
    }

    /// Indentation of the closing bracket of the decisions' array: `decisions` (json) is a key
    /// of the top object, `results` (sarif) a key of `runs[0]`.
    fn close_indent(&self) -> &'static str {
        match self.format {
            ReplayFormat::Sarif => "      ",
            _ => "  ",
        }
    }

    /// Indentation of the closing bracket of the per-trace totals' array: `traces` is a key of
    /// the top object (json) or of `runs[0].properties` (sarif). Also that of `block_streaks`
    /// (json), a key of the top object.
    fn traces_close_indent(&self) -> &'static str {
        match self.format {
            ReplayFormat::Sarif => "        ",
            _ => "  ",
        }
    }

    /// Adds one listed decision (SARIF lists only blocked, unreached and changed calls).
    ///
    /// Errors: writing the temporary file.
    pub fn add(&mut self, d: &Decision) -> std::io::Result<()> {
        let indent = format!("{}  ", self.close_indent());
        match self.format {
            ReplayFormat::Text => {
                self.decisions.entries += 1;
                text_decision(d, self.color, &mut self.decisions.file)
            }
            ReplayFormat::Sarif if d.notable() => self.decisions.push(&sarif_result(d), &indent),
            ReplayFormat::Sarif => Ok(()),
            _ => self.decisions.push(&d.to_json(), &indent),
        }
    }

    /// Adds the totals of a trace that ended, in replay order (`json`: an item of `traces`;
    /// `sarif`: of `run.properties.traces`; `text` keeps nothing here: it reads
    /// `report.traces`).
    ///
    /// Errors: writing the temporary file.
    pub fn add_trace(&mut self, t: &TraceTotals) -> std::io::Result<()> {
        let indent = format!("{}  ", self.traces_close_indent());
        match self.traces.as_mut() {
            Some(sp) => sp.push(&trace_json(t), &indent),
            None => Ok(()),
        }
    }

    /// Adds a block streak that ended, in replay order (`text`: a line after the changed
    /// completions; `json`: an item of `block_streaks`; `sarif`: a result after the decisions').
    ///
    /// Errors: writing the temporary file.
    pub fn add_streak(&mut self, st: &BlockStreak) -> std::io::Result<()> {
        match self.format {
            ReplayFormat::Text => {
                self.streaks.entries += 1;
                text_streak(st, &mut self.streaks.file)
            }
            ReplayFormat::Sarif => {
                let indent = format!("{}  ", self.close_indent());
                self.streaks.push(&sarif_streak(st), &indent)
            }
            _ => {
                let indent = format!("{}  ", self.traces_close_indent());
                self.streaks.push(&streak_json(st), &indent)
            }
        }
    }

    /// Writes the text report: the spooled decisions' lines, then the rest ([`text_tail`],
    /// with the spooled streaks' lines).
    ///
    /// Errors: those of `out` and of reading back the temporary files.
    pub fn write_text(self, report: &Report, out: &mut impl Write) -> std::io::Result<()> {
        let listed = self.decisions.entries > 0;
        self.decisions.copy_to(out)?;
        let streaks = self.streaks;
        text_tail(report, listed, |out| streaks.copy_to(out), out)
    }

    /// Writes the whole document: `doc` with each spooled array of `splices` (the key whose
    /// value is [`SPLICE`] in `doc`, the indentation of that key, the items; in document order)
    /// in place of its marker.
    fn write_doc(
        doc: &Value,
        splices: Vec<(&str, &str, Spill)>,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(doc).map_err(std::io::Error::from)?;
        let mut from = 0;
        for (key, close_indent, spill) in splices {
            // The key at exactly its own indentation (nested keys are deeper, and a quote
            // inside a string is escaped), so the match is the array's place.
            let marker = format!("\n{close_indent}\"{key}\": \"{SPLICE}\"");
            let at = from
                + text[from..].find(&marker).ok_or_else(|| {
                    std::io::Error::other(format!("internal: no `{key}` in the report document"))
                })?;
            let value_at = at + marker.len() - SPLICE.len() - 2;
            out.write_all(&text.as_bytes()[from..value_at])?;
            if spill.entries == 0 {
                out.write_all(b"[]")?;
            } else {
                out.write_all(b"[\n")?;
                spill.copy_to(out)?;
                write!(out, "\n{close_indent}]")?;
            }
            from = at + marker.len();
        }
        out.write_all(&text.as_bytes()[from..])?;
        out.write_all(b"\n")
    }

    /// The spooled per-trace totals (an empty spill for a spool without them).
    ///
    /// Errors: the temporary file cannot be created.
    fn take_traces(&mut self) -> std::io::Result<Spill> {
        match self.traces.take() {
            Some(t) => Ok(t),
            None => Spill::new(),
        }
    }

    /// Writes the `json` document (the shape of the buffered `json_report`) with the spooled
    /// decisions and per-trace totals.
    ///
    /// Errors: those of `out` and of reading back the temporary files.
    pub fn write_json(mut self, report: &Report, out: &mut impl Write) -> std::io::Result<()> {
        let doc = json_report_with(
            report,
            Value::String(SPLICE.into()),
            Value::String(SPLICE.into()),
            (self.streaks.entries > 0).then(|| Value::String(SPLICE.into())),
        );
        let traces = self.take_traces()?;
        let (close, traces_close) = (self.close_indent(), self.traces_close_indent());
        let mut splices = vec![
            ("decisions", close, self.decisions),
            ("traces", traces_close, traces),
        ];
        if self.streaks.entries > 0 {
            splices.push(("block_streaks", traces_close, self.streaks));
        }
        Self::write_doc(&doc, splices, out)
    }

    /// Writes the SARIF document with the spooled decisions' results, the spooled block
    /// streaks', then the completions' and sections', and the spooled per-trace totals.
    ///
    /// Errors: those of `out` and of reading back the temporary files.
    pub fn write_sarif(mut self, report: &Report, out: &mut impl Write) -> std::io::Result<()> {
        let traces = self.take_traces()?;
        let (close, traces_close) = (self.close_indent(), self.traces_close_indent());
        let indent = format!("{close}  ");
        let mut results = self.decisions;
        results.append(self.streaks)?;
        for v in tail_sarif_results(report) {
            results.push(&v, &indent)?;
        }
        let doc = sarif_doc(
            report,
            Value::String(SPLICE.into()),
            Value::String(SPLICE.into()),
        );
        // `run.properties` (with `traces`) comes before `results` in the document.
        Self::write_doc(
            &doc,
            vec![
                ("traces", traces_close, traces),
                ("results", close, results),
            ],
            out,
        )
    }
}

/// Escapes text for HTML; control characters other than newline and tab are written as
/// `\u{1b}` (issue 6 T7), as in the text report.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => {
                o.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => o.push(c),
        }
    }
    o
}

/// Calls of each trace drawn one mark each from its start (the prefix of the timeline).
const TIMELINE_CAP: usize = 2000;

/// Blocked, unreached and changed calls kept for the HTML report (drawn on their timelines and
/// listed in the table); the rest are counted.
const NOTABLE_CAP: usize = 10_000;

/// One item of a trace's HTML timeline.
enum Mark {
    /// A call drawn as one mark.
    Call(Decision),
    /// Calls between two drawn marks that are only counted, drawn as one count marker: `allowed`
    /// allowed calls (recorded as dispatched) past [`TIMELINE_CAP`] and `not_drawn` blocked,
    /// unreached or changed calls past [`NOTABLE_CAP`], in any order.
    Counted { allowed: u64, not_drawn: u64 },
}

/// The decisions an HTML report keeps while a replay streams, as per-trace timelines: the first
/// [`TIMELINE_CAP`] calls of each trace as one mark each; after that every blocked, unreached or
/// changed call (the first [`NOTABLE_CAP`] of the report) keeps its mark and the calls between
/// two kept marks are one count marker (issue 6 T4-9): allowed calls, and blocked, unreached
/// or changed ones past the cap, folded together (issue 6 T6-3: past the cap a trace no longer
/// alternates two markers per block). Memory and the page stay bounded: at most
/// [`TIMELINE_CAP`] marks per trace plus [`NOTABLE_CAP`] marks, and one marker between two kept
/// marks. Block streaks are kept the same way: the first [`NOTABLE_CAP`] of the report, the
/// others counted (issue 6 T6-11).
#[derive(Default)]
pub struct HtmlDecisions {
    /// The first [`NOTABLE_CAP`] block streaks, in replay order.
    streaks: Vec<BlockStreak>,
    /// Block streaks beyond [`NOTABLE_CAP`]: counted, not kept.
    omitted_streaks: u64,
    /// Timelines in replay order: trace name and its items.
    timelines: Vec<(std::sync::Arc<str>, Vec<Mark>)>,
    /// Blocked, unreached and changed calls beyond [`NOTABLE_CAP`]: counted, not kept.
    omitted_notable: u64,
    /// Allowed calls drawn as part of count markers.
    elided_allowed: u64,
    in_trace: usize,
    notable: usize,
}

impl HtmlDecisions {
    /// Offers one decision (every call of every trace, in replay order).
    pub fn add(&mut self, d: &Decision) {
        if self.timelines.last().map(|(t, _)| &**t) != Some(&*d.trace) {
            self.timelines.push((d.trace.clone(), Vec::new()));
            self.in_trace = 0;
        }
        self.in_trace += 1;
        let in_prefix = self.in_trace <= TIMELINE_CAP;
        let notable = d.notable();
        let Some((_, marks)) = self.timelines.last_mut() else {
            return;
        };
        if notable && self.notable < NOTABLE_CAP {
            self.notable += 1;
            marks.push(Mark::Call(d.clone()));
        } else if notable || !in_prefix {
            let (a, n) = (u64::from(!notable), u64::from(notable));
            self.omitted_notable += n;
            self.elided_allowed += a;
            match marks.last_mut() {
                Some(Mark::Counted { allowed, not_drawn }) => {
                    *allowed += a;
                    *not_drawn += n;
                }
                _ => marks.push(Mark::Counted {
                    allowed: a,
                    not_drawn: n,
                }),
            }
        } else {
            marks.push(Mark::Call(d.clone()));
        }
    }

    /// Offers one block streak that ended (every one of the report, in replay order).
    pub fn add_streak(&mut self, st: &BlockStreak) {
        if self.streaks.len() < NOTABLE_CAP {
            self.streaks.push(st.clone());
        } else {
            self.omitted_streaks += 1;
        }
    }

    /// The kept decisions, in replay order.
    fn decisions(&self) -> impl Iterator<Item = &Decision> {
        self.timelines.iter().flat_map(|(_, m)| {
            m.iter().filter_map(|m| match m {
                Mark::Call(d) => Some(d),
                _ => None,
            })
        })
    }
}

/// The hover text of a call's timeline mark.
fn mark_title(d: &Decision) -> String {
    let mut title = format!(
        "line {} cell {} call {}: {} (recorded {}) {}",
        d.line,
        d.cell.map_or("-".into(), |c| c.to_string()),
        d.index,
        d.raw_key,
        d.recorded.as_str(),
        d.decision.as_str()
    );
    match (&d.reason, &d.guardrail) {
        (Some(r), Some(g)) => title.push_str(&format!(" [{g}] {r}")),
        (Some(r), None) => title.push_str(&format!(": {r}")),
        _ => {}
    }
    if d.changed() {
        title.push_str(" (outcome changes)");
    }
    title
}

/// The HTML report: summary, blocks per guardrail, a timeline per trace (one mark per call,
/// blocked calls in red, unreached in grey, changed outcomes outlined; long traces elided as
/// [`HtmlDecisions`] keeps them, with count markers), the blocked, unreached and changed calls,
/// block streaks (those `kept` holds), completions and report sections. `kept` should have been
/// offered every call and every block streak.
pub fn html(report: &Report, kept: &HtmlDecisions, out: &mut impl Write) -> std::io::Result<()> {
    let s = &report.summary;
    let mut h = String::new();
    h.push_str(r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>cellguard replay</title><style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f4f4f4}
.tl{display:flex;flex-wrap:wrap;gap:2px;margin:4px 0 10px}.c{width:12px;height:18px;border-radius:2px;display:inline-block}
.allowed{background:#4caf50}.blocked{background:#e53935}.unreached{background:#bdbdbd}.changed{outline:2px solid #1e88e5;outline-offset:1px}
.cellgap{width:4px}.muted{color:#777}details{margin:2px 0}summary{cursor:pointer}code{background:#f6f6f6;padding:0 3px}
.legend span{margin-right:14px}.gap{font-size:11px;color:#555;background:#eef5ee;border:1px dashed #9c9;border-radius:2px;padding:0 3px;line-height:16px}.gap.more{background:#fdecea;border-color:#e99}
</style></head><body>"#);
    h.push_str("<h1>cellguard replay</h1>");
    h.push_str(&format!(
        "<table><tr><th>traces</th><th>calls</th><th>allowed</th><th>blocked</th><th>unreached</th><th>outcomes change</th><th>records read</th><th>records skipped</th><th>matching</th></tr><tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr></table>",
        s.traces, s.calls, s.allowed, s.blocked, s.unreached, s.changed, s.records_read, s.records_skipped, esc(&report.mixed_modes.as_ref().map_or_else(|| report.mode.as_str().to_string(), |m| format!("mixed ({m})")))
    ));
    if !s.per_guardrail.is_empty() {
        h.push_str(
            "<h2>Blocks per guardrail</h2><table><tr><th>guardrail</th><th>blocked</th></tr>",
        );
        for (id, n) in &s.per_guardrail {
            h.push_str(&format!(
                "<tr><td><code>{}</code></td><td>{n}</td></tr>",
                esc(id)
            ));
        }
        h.push_str("</table>");
    }
    h.push_str(&format!("<h2>Timelines</h2><p class=\"legend\"><span><i class=\"c lg allowed\"></i> allowed</span><span><i class=\"c lg blocked\"></i> blocked</span><span><i class=\"c lg unreached\"></i> unreached</span><span><i class=\"c lg allowed changed\"></i> outcome changes</span> (one mark per call, cells separated by gaps; hover for details)</p><p class=\"elision\">The first {TIMELINE_CAP} calls of each trace are drawn one mark each. After that, every blocked, unreached or changed call keeps its mark and each run of allowed calls between them is drawn as one marker <span class=\"gap\">+N allowed</span>{}.</p>",
        if kept.omitted_notable > 0 {
            format!("; the report keeps the first {NOTABLE_CAP} blocked, unreached or changed calls, the others are counted in <span class=\"gap more\">+N not drawn</span> markers (every one is in <code>--output-format json-lines</code>)")
        } else {
            String::new()
        }
    ));
    let by_trace: std::collections::HashMap<&str, &Vec<Mark>> =
        kept.timelines.iter().map(|(t, m)| (&**t, m)).collect();
    let none = Vec::new();
    for t in &report.traces {
        let marks = by_trace.get(&*t.trace).copied().unwrap_or(&none);
        let open = if t.blocked + t.unreached + t.changed > 0 {
            " open"
        } else {
            ""
        };
        let elided: u64 = marks
            .iter()
            .map(|m| match m {
                Mark::Counted { allowed, .. } => *allowed,
                Mark::Call(_) => 0,
            })
            .sum();
        let elided = if elided > 0 {
            format!("; timeline elided: {elided} allowed calls shown as counts")
        } else {
            String::new()
        };
        let agent = agent_shown(t).map_or_else(String::new, |a| {
            format!(
                " <span class=\"muted\">agent</span> <code>{}</code>",
                esc(&a)
            )
        });
        let config = t
            .config
            .as_deref()
            .map_or_else(String::new, |c| format!(", config <code>{}</code>", esc(c)));
        h.push_str(&format!(
            "<details{open}><summary><code>{}</code>{agent} <span class=\"muted\">{} calls, {} blocked, {} unreached, {} changed; format {}, epoch {}, on-block {}{config}{elided}</span></summary><div class=\"tl\">",
            esc(&t.trace), t.calls, t.blocked, t.unreached, t.changed, esc(&t.format), esc(&t.epoch), esc(&t.on_block)
        ));
        let mut last_cell = None;
        let mut drawn = 0u64;
        for m in marks {
            match m {
                Mark::Call(d) => {
                    if last_cell.is_some() && last_cell != Some(d.cell) {
                        h.push_str("<i class=\"cellgap\"></i>");
                    }
                    last_cell = Some(d.cell);
                    drawn += 1;
                    let changed = if d.changed() { " changed" } else { "" };
                    h.push_str(&format!(
                        "<i class=\"c {}{changed}\" title=\"{}\"></i>",
                        d.decision.as_str(),
                        esc(&mark_title(d))
                    ));
                }
                Mark::Counted { allowed, not_drawn } => {
                    last_cell = None;
                    drawn += allowed + not_drawn;
                    h.push_str(&match (allowed, not_drawn) {
                        (n, 0) => format!(
                            "<span class=\"gap\" title=\"{n} allowed calls, not drawn one by one\">+{n} allowed</span>"
                        ),
                        (0, n) => format!(
                            "<span class=\"gap more\" title=\"{n} blocked, unreached or changed calls beyond the report's {NOTABLE_CAP}\">+{n} not drawn</span>"
                        ),
                        (a, n) => format!(
                            "<span class=\"gap more\" title=\"{a} allowed calls and {n} blocked, unreached or changed calls beyond the report's {NOTABLE_CAP}, in replay order, not drawn one by one\">+{a} allowed, +{n} not drawn</span>"
                        ),
                    });
                }
            }
        }
        if drawn < t.calls {
            h.push_str(&format!(
                "<span class=\"muted\">{} calls not listed</span>",
                t.calls - drawn
            ));
        }
        h.push_str("</div></details>");
    }
    let notable: Vec<&Decision> = kept.decisions().filter(|d| d.notable()).collect();
    if !notable.is_empty() {
        h.push_str("<h2>Blocked, unreached and changed calls</h2><table><tr><th>trace</th><th>line</th><th>cell</th><th>call</th><th>raw key</th><th>recorded</th><th>decision</th><th>guardrail</th><th>reason</th><th>suggestion</th></tr>");
        for d in notable {
            h.push_str(&format!(
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&d.trace), d.line, d.cell.map_or(String::new(), |c| c.to_string()), d.index, esc(&d.raw_key),
                d.recorded.as_str(), d.decision.as_str(), esc(d.guardrail.as_deref().unwrap_or("")),
                esc(d.reason.as_deref().unwrap_or("")), esc(d.suggestion.as_deref().unwrap_or(""))
            ));
        }
        h.push_str("</table>");
        if kept.omitted_notable > 0 {
            h.push_str(&format!(
                "<p class=\"muted\">… and {} more (every one is in <code>--output-format json-lines</code>).</p>",
                kept.omitted_notable
            ));
        }
    }
    html_streaks_and_completions(report, kept, &mut h);
    html_skips(report, &mut h);
    for sec in &report.sections {
        h.push_str(&format!("<h2>{}</h2>{}", esc(&sec.title()), sec.html()));
    }
    h.push_str("</body></html>\n");
    out.write_all(h.as_bytes())
}

/// The HTML report's skipped records and reader warnings (those kept, as standard error shows
/// them; a last line counts the skipped records not kept).
fn html_skips(report: &Report, h: &mut String) {
    if report.skipped.is_empty() && report.warnings.is_empty() {
        return;
    }
    h.push_str("<h2>Skipped records and warnings</h2><table><tr><th>kind</th><th>file</th><th>line</th><th>column</th><th>message</th></tr>");
    for (kind, list) in [
        ("skipped", &report.skipped[..]),
        ("warning", &report.warnings[..]),
    ] {
        for s in list {
            h.push_str(&format!(
                "<tr><td>{kind}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&s.path.display().to_string()),
                s.line,
                s.column.map_or(String::new(), |c| c.to_string()),
                esc(&cellguard_lints::trace::nonfinite::display(&s.message))
            ));
        }
    }
    h.push_str("</table>");
    let unkept = report
        .summary
        .records_skipped
        .saturating_sub(report.skipped.len() as u64);
    if unkept > 0 {
        h.push_str(&format!(
            "<p class=\"muted\">… and {unkept} more skipped records (counted, not listed).</p>"
        ));
    }
    if report.warnings.not_kept() > 0 {
        h.push_str(&format!(
            "<p class=\"muted\">… and {} more warnings (not listed).</p>",
            report.warnings.not_kept()
        ));
    }
}

/// The HTML report's block streaks (a table, as the text report's streak lines, of those
/// `kept` holds; a last line counts the others) and completions (the counts of the text
/// summary, then a table of the listed ones: [`completion_listed`]).
fn html_streaks_and_completions(report: &Report, kept: &HtmlDecisions, h: &mut String) {
    if !kept.streaks.is_empty() {
        h.push_str("<h2>Block streaks</h2><table><tr><th>trace</th><th>line</th><th>key</th><th>blocked in a row</th><th>latest reason</th><th>suggestion</th></tr>");
        for st in &kept.streaks {
            h.push_str(&format!(
                "<tr><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&st.trace), st.line, esc(&st.action_key), st.count, esc(&st.reason), esc(&st.suggestion)
            ));
        }
        h.push_str("</table>");
        if kept.omitted_streaks > 0 {
            h.push_str(&format!(
                "<p class=\"muted\">… and {} more block streaks (every one is in <code>--output-format json-lines</code>).</p>",
                kept.omitted_streaks
            ));
        }
    }
    let s = &report.summary;
    if s.completions == 0 {
        return;
    }
    let unknown = completions_unknown(report);
    h.push_str(&format!(
        "<h2>Completions</h2><p>{} replayed, {} would change{}.</p>",
        s.completions,
        s.completions_changed,
        if unknown > 0 {
            format!(", {unknown} unknown (not replayable)")
        } else {
            String::new()
        }
    ));
    let listed: Vec<&CompletionDecision> = report
        .completions
        .iter()
        .filter(|c| completion_listed(c))
        .collect();
    if listed.is_empty() {
        return;
    }
    h.push_str("<table><tr><th>trace</th><th>line</th><th>cell</th><th>recorded</th><th>simulated</th><th>changes</th><th>suggestions</th></tr>");
    for c in listed {
        let suggestions = c
            .simulated
            .as_ref()
            .map(|v| v.suggestions.join("; "))
            .unwrap_or_default();
        h.push_str(&format!(
            "<tr class=\"completion\"><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.trace),
            c.line,
            c.cell.map_or(String::new(), |c| c.to_string()),
            completion_recorded(c),
            esc(&completion_simulated(c)),
            if c.changed() { "yes" } else { "no" },
            esc(&suggestions)
        ));
    }
    h.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellguard_lints::replay::{Section, Summary, TraceTotals};
    use cellguard_lints::trace::CallStatus;
    use std::sync::Arc;

    /// A report section with SARIF results (sections' results follow the decisions').
    struct Extra(usize);

    impl Section for Extra {
        fn title(&self) -> String {
            "extra".into()
        }
        fn json(&self) -> Vec<(String, Value)> {
            vec![("extra".into(), json!({"n": self.0}))]
        }
        fn text(&self) -> String {
            String::new()
        }
        fn html(&self) -> String {
            String::new()
        }
        fn sarif_rules(&self) -> Vec<Value> {
            vec![json!({"id": "extra-rule"})]
        }
        fn sarif_results(&self) -> Vec<Value> {
            (0..self.0)
                .map(|i| json!({"ruleId": "extra-rule", "message": {"text": format!("extra {i}")},
                    "locations": [{"physicalLocation": {"artifactLocation": {"uri": "/abs/p q.jsonl"}}}]}))
                .collect()
        }
    }

    /// A report of `traces` traces of `calls` listed decisions each, cycling through blocked,
    /// unreached, allowed-and-changed and allowed (not notable: absent from SARIF), with
    /// strings that need escaping and a multi-line reason.
    fn report(traces: usize, calls: usize, extra: Option<usize>) -> Report {
        let mut r = Report::default();
        for t in 0..traces {
            let name: Arc<str> = format!("dir/t \"{t}\".jsonl").into();
            for i in 0..calls {
                let (decision, recorded) = match i % 4 {
                    0 => (Verdict::Blocked, CallStatus::Ok),
                    1 => (Verdict::Unreached, CallStatus::Ok),
                    2 => (Verdict::Allowed, CallStatus::Blocked),
                    _ => (Verdict::Allowed, CallStatus::Ok),
                };
                r.decisions.push(Decision {
                    trace: name.clone(),
                    file: name.clone(),
                    line: (i + 1) as u64,
                    cell: (i % 2 == 0).then_some(i as u64 / 2),
                    index: i as u64,
                    action_key: format!("Cap.k.m{i}"),
                    raw_key: format!("k.m{i}\u{1b}"),
                    recorded,
                    decision,
                    guardrail: (decision == Verdict::Blocked).then(|| Arc::from("gate")),
                    reason: (decision == Verdict::Blocked).then(|| "line 1\nline \"2\"".into()),
                    suggestion: (i % 3 == 0).then(|| "ask {first}".into()),
                });
            }
            // One block streak per three calls, its text with characters to escape.
            for i in 0..calls / 3 {
                r.streaks.push(BlockStreak {
                    trace: name.clone(),
                    file: name.clone(),
                    line: 3 * i as u64 + 3,
                    action_key: format!("k.s{i}\u{1b}"),
                    count: 3 * (i as u64 + 1),
                    reason: "blocked \"s\"\nagain".into(),
                    suggestion: format!("<wait {i}>"),
                });
            }
            r.traces.push(TraceTotals {
                trace: name,
                format: "native".into(),
                calls: calls as u64,
                blocked: calls.div_ceil(4) as u64,
                epoch: "current".into(),
                on_block: "stop-cell".into(),
                config: (t % 2 == 1).then(|| Arc::from("cfg \"x\".toml")),
                ..Default::default()
            });
        }
        r.summary = Summary {
            traces: traces as u64,
            calls: (traces * calls) as u64,
            per_guardrail: if traces * calls > 0 {
                vec![(Arc::from("gate"), 1)]
            } else {
                Vec::new()
            },
            ..Default::default()
        };
        if let Some(n) = extra {
            r.sections.push(Box::new(Extra(n)));
        }
        r
    }

    fn streamed(r: &Report, format: ReplayFormat) -> String {
        let mut sp = DecisionSpool::new(format).unwrap().unwrap();
        for d in &r.decisions {
            sp.add(d).unwrap();
        }
        for t in &r.traces {
            sp.add_trace(t).unwrap();
        }
        for st in &r.streaks {
            sp.add_streak(st).unwrap();
        }
        let mut out = Vec::new();
        match format {
            ReplayFormat::Text => sp.write_text(r, &mut out).unwrap(),
            ReplayFormat::Json => sp.write_json(r, &mut out).unwrap(),
            _ => sp.write_sarif(r, &mut out).unwrap(),
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn streamed_json_and_sarif_equal_the_buffered_documents() {
        for traces in [0, 1, 3] {
            for calls in [0, 1, 2, 3, 4, 9] {
                for extra in [None, Some(0), Some(1), Some(3)] {
                    let r = report(traces, calls, extra);
                    let what = format!("{traces} traces x {calls} calls, section {extra:?}");

                    let mut buffered = Vec::new();
                    json(&r, &mut buffered).unwrap();
                    let stream = streamed(&r, ReplayFormat::Json);
                    assert_eq!(stream, String::from_utf8(buffered).unwrap(), "json, {what}");
                    let v: Value = serde_json::from_str(&stream).unwrap();
                    let ds = v["decisions"].as_array().unwrap();
                    assert_eq!(ds.len(), traces * calls, "json, {what}");
                    for (got, d) in ds.iter().zip(&r.decisions) {
                        assert_eq!(got, &d.to_json(), "json, {what}");
                    }
                    // The spooled per-trace totals (issue 6 T5-16).
                    let ts = v["traces"].as_array().unwrap();
                    assert_eq!(ts.len(), traces, "json, {what}");
                    for (got, t) in ts.iter().zip(&r.traces) {
                        assert_eq!(got["trace"], json!(&*t.trace), "{what}");
                        assert_eq!(got["blocked"], json!(calls.div_ceil(4)), "{what}");
                        assert_eq!(got["config"], json!(t.config.as_deref()), "{what}");
                    }
                    // The spooled block streaks (issue 6 T6-11), in order; no key without any.
                    let streaks = traces * (calls / 3);
                    assert_eq!(r.streaks.len(), streaks, "{what}");
                    match v.get("block_streaks") {
                        None => assert_eq!(streaks, 0, "json, {what}"),
                        Some(got) => {
                            let got = got.as_array().unwrap();
                            assert_eq!(got.len(), streaks, "json, {what}");
                            for (g, st) in got.iter().zip(&r.streaks) {
                                assert_eq!(g["line"], json!(st.line), "{what}");
                                assert_eq!(g["action_key"], json!(st.action_key), "{what}");
                                assert_eq!(g["reason"], json!(st.reason), "{what}");
                            }
                        }
                    }

                    let mut buffered = Vec::new();
                    sarif(&r, &mut buffered).unwrap();
                    let stream = streamed(&r, ReplayFormat::Sarif);
                    assert_eq!(
                        stream,
                        String::from_utf8(buffered).unwrap(),
                        "sarif, {what}"
                    );
                    let v: Value = serde_json::from_str(&stream).unwrap();
                    assert_eq!(
                        v["runs"][0]["properties"]["traces"],
                        traces_json(&r),
                        "sarif, {what}"
                    );
                    let results = v["runs"][0]["results"].as_array().unwrap();
                    let notable: Vec<&Decision> =
                        r.decisions.iter().filter(|d| d.notable()).collect();
                    // Every fourth call is allowed as recorded: not a SARIF result.
                    assert_eq!(notable.len(), traces * (calls - calls / 4), "{what}");
                    assert_eq!(
                        results.len(),
                        notable.len() + streaks + extra.unwrap_or(0),
                        "sarif, {what}"
                    );
                    for (got, d) in results.iter().zip(&notable) {
                        assert_eq!(
                            got["locations"][0]["physicalLocation"]["region"]["startLine"],
                            json!(d.line),
                            "{what}"
                        );
                        assert_eq!(got["properties"]["index"], json!(d.index), "{what}");
                        assert_eq!(
                            got["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                            json!(super::super::sarif::path_uri(&d.file)),
                            "{what}"
                        );
                    }
                    let after = &results[notable.len()..];
                    for (got, st) in after.iter().zip(&r.streaks) {
                        assert_eq!(got["ruleId"], json!("block-streak"), "{what}");
                        assert_eq!(got["properties"]["count"], json!(st.count), "{what}");
                        assert_eq!(
                            got["locations"][0]["physicalLocation"]["region"]["startLine"],
                            json!(st.line),
                            "{what}"
                        );
                    }
                    for (i, got) in after[streaks..].iter().enumerate() {
                        assert_eq!(got["message"]["text"], json!(format!("extra {i}")));
                        assert_eq!(
                            got["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                            json!("file:///abs/p%20q.jsonl"),
                            "{what}"
                        );
                    }
                    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
                    assert_eq!(
                        rules.last().unwrap()["id"],
                        json!(if extra.is_some() {
                            "extra-rule"
                        } else {
                            "completion-validation"
                        })
                    );
                }
            }
        }
    }

    /// Past [`NOTABLE_CAP`] kept blocked calls, the others are counted in `+N not drawn`
    /// markers (and the page says so); every call of the trace is drawn or counted once.
    #[test]
    fn html_timeline_counts_blocks_beyond_the_report_cap() {
        let mut r = report(1, 0, None);
        let name = r.traces[0].trace.clone();
        let calls = 2 * NOTABLE_CAP as u64 + 4000;
        r.traces[0].calls = calls;
        let mut kept = HtmlDecisions::default();
        for i in 0..calls {
            let blocked = i % 2 == 0;
            kept.add(&Decision {
                trace: name.clone(),
                file: name.clone(),
                line: i + 1,
                cell: Some(0),
                index: i,
                action_key: "A.k".into(),
                raw_key: "A.k".into(),
                recorded: CallStatus::Ok,
                decision: if blocked {
                    Verdict::Blocked
                } else {
                    Verdict::Allowed
                },
                guardrail: blocked.then(|| Arc::from("gate")),
                reason: None,
                suggestion: None,
            });
        }
        // Blocked: the first NOTABLE_CAP kept, the rest (calls / 2 - NOTABLE_CAP) counted.
        let blocked = calls / 2;
        assert_eq!(kept.omitted_notable, blocked - NOTABLE_CAP as u64);
        let mut out = Vec::new();
        html(&r, &kept, &mut out).unwrap();
        let h = String::from_utf8(out).unwrap();
        assert_eq!(h.matches("<i class=\"c blocked").count(), NOTABLE_CAP);
        let sum = |marker: &str| -> u64 {
            h.split(marker)
                .skip(1)
                .map(|s| s.split(' ').next().unwrap().parse::<u64>().unwrap())
                .sum()
        };
        // Past the cap, blocks and allowed calls alternate: one folded marker holds them all
        // (issue 6 T6-3), not two markers per block.
        let folded =
            format!("beyond the report's {NOTABLE_CAP}, in replay order, not drawn one by one\">+");
        assert_eq!(h.matches(&folded).count(), 1);
        let tail = h.split(&folded).nth(1).unwrap();
        let (a, n) = tail.split_once(" allowed, +").unwrap();
        let n = n.split(' ').next().unwrap();
        let (folded_allowed, folded_not_drawn): (u64, u64) =
            (a.parse().unwrap(), n.parse().unwrap());
        let not_drawn = sum(&format!("beyond the report's {NOTABLE_CAP}\">+")) + folded_not_drawn;
        assert_eq!(not_drawn, kept.omitted_notable);
        let allowed_marks = h.matches("<i class=\"c allowed").count() as u64;
        let allowed_counted = sum("allowed calls, not drawn one by one\">+") + folded_allowed;

        assert_eq!(
            NOTABLE_CAP as u64 + not_drawn + allowed_marks + allowed_counted,
            calls
        );
        // The first TIMELINE_CAP calls are drawn one by one: half of them allowed.
        assert_eq!(allowed_marks, TIMELINE_CAP as u64 / 2);
        assert!(h.contains("the others are counted in"));
        assert!(h.contains(&format!("… and {} more", kept.omitted_notable)));
    }

    /// The HTML report keeps the first [`NOTABLE_CAP`] block streaks, in order, and counts
    /// the others (issue 6 T6-11: every streak used to stay in memory until the end).
    #[test]
    fn html_keeps_the_first_streaks_and_counts_the_rest() {
        let r = report(1, 0, None);
        for (n, more) in [(3, 0), (NOTABLE_CAP + 7, 7)] {
            let mut kept = HtmlDecisions::default();
            for i in 0..n {
                kept.add_streak(&BlockStreak {
                    trace: r.traces[0].trace.clone(),
                    file: r.traces[0].trace.clone(),
                    line: i as u64 + 1,
                    action_key: format!("S.S.k{i}"),
                    count: 3,
                    reason: "r".into(),
                    suggestion: "<s>".into(),
                });
            }
            assert_eq!(kept.streaks.len(), n - more);
            let mut out = Vec::new();
            html(&r, &kept, &mut out).unwrap();
            let h = String::from_utf8(out).unwrap();
            let table = h.split("<h2>Block streaks</h2>").nth(1).unwrap();
            let table = table.split("</table>").next().unwrap();
            assert_eq!(table.matches("<tr><td>").count(), n - more);
            let last = n - more - 1;
            assert!(table.ends_with(&format!(
                "<td>{}</td><td><code>S.S.k{last}</code></td><td>3</td><td>r</td><td>&lt;s&gt;</td></tr>",
                last + 1
            )));
            assert_eq!(
                h.contains(&format!("… and {more} more block streaks")),
                more > 0
            );
        }
    }

    #[test]
    fn spool_is_only_for_text_json_and_sarif() {
        for f in [ReplayFormat::JsonLines, ReplayFormat::Html] {
            assert!(DecisionSpool::new(f).unwrap().is_none());
        }
        for f in [ReplayFormat::Text, ReplayFormat::Json, ReplayFormat::Sarif] {
            assert!(DecisionSpool::new(f).unwrap().is_some());
        }
    }

    /// The streamed text report equals the buffered one, with 0, 1 or more listed decisions
    /// (the blank line before the summary only when any was listed), and lists each decision
    /// in order with its escaped key, reason and suggestion.
    #[test]
    fn streamed_text_equals_the_buffered_report() {
        for traces in [0, 1, 3] {
            for calls in [0, 1, 2, 3, 4, 9] {
                for extra in [None, Some(2)] {
                    let r = report(traces, calls, extra);
                    let what = format!("{traces} traces x {calls} calls, section {extra:?}");
                    let mut buffered = Vec::new();
                    text(&r, &mut buffered).unwrap();
                    let stream = streamed(&r, ReplayFormat::Text);
                    assert_eq!(stream, String::from_utf8(buffered).unwrap(), "{what}");
                    let heads: Vec<&str> = stream
                        .lines()
                        .filter(|l| l.starts_with("dir/t ") && !l.ends_with("(block streak)"))
                        .collect();
                    assert_eq!(heads.len(), traces * calls, "{what}");
                    for (l, d) in heads.iter().zip(&r.decisions) {
                        assert!(
                            l.contains(&format!("call {}: `k.m{}\\u{{1b}}`", d.index, d.index)),
                            "{what}: {l}"
                        );
                    }
                    assert_eq!(
                        stream
                            .matches("    reason: line 1\\u{a}line \"2\"\n")
                            .count(),
                        traces * calls.div_ceil(4),
                        "{what}"
                    );
                    assert!(!stream.contains('\u{1b}'), "{what}");
                    // The spooled block streaks (issue 6 T6-11), in order, after the decisions.
                    let streak_lines: Vec<&str> = stream
                        .lines()
                        .filter(|l| l.ends_with("(block streak)"))
                        .collect();
                    assert_eq!(streak_lines.len(), r.streaks.len(), "{what}");
                    for (l, st) in streak_lines.iter().zip(&r.streaks) {
                        assert_eq!(
                            *l,
                            format!(
                                "{}:{}: `{}` blocked {} times in a row (block streak)",
                                st.file,
                                st.line,
                                ctl(&st.action_key),
                                st.count
                            ),
                            "{what}"
                        );
                    }
                    let summary = stream.find("Replayed ").unwrap();
                    assert_eq!(
                        &stream[summary.saturating_sub(2)..summary] == "\n\n",
                        traces * calls > 0,
                        "{what}"
                    );
                }
            }
        }
    }
}
