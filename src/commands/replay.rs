//! `cellguard replay TRACE... [--config FILE]`: recorded traces through simulated guardrails
//! (spec §7–§8).
//!
//! Exit codes: 0 when no call would be blocked (with `--expect-recorded`: when every simulated
//! decision equals the recorded one); 1 otherwise; 2 on usage, config or input errors.

use super::ExitStatus;
use crate::render::replay::{self as render, ReplayFormat};
use anyhow::Context;
use cellguard_lints::config::{self, Overrides, Profile};
use cellguard_lints::guardrails::config::{self as gconfig, OnBlock, ReplayConfig};
use cellguard_lints::guardrails::matching::MatchMode;
use cellguard_lints::policies::PolicyObserver;
use cellguard_lints::replay::{self, Decision, Options};
use cellguard_lints::trace::{self, Epoch, Format};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `cellguard replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// Trace files (`-` reads standard input).
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Config file with `[[guardrails]]`, `[[policies]]` and `[replay]` (default: the closest cellguard.toml
    /// to the first trace).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Input format (default: detected from the content).
    #[arg(long, value_parser = parse_format)]
    pub format: Option<Format>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReplayFormat::Text)]
    pub output_format: ReplayFormat,
    /// Write the report to this file instead of standard output.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// What a simulated block does to later evaluation (default: the runtime's own behaviour
    /// for the trace's epoch: stop-cell from 2026-06-20, drop before).
    #[arg(long, value_parser = parse_on_block)]
    pub on_block: Option<OnBlock>,
    /// Matching mode for every guardrail (overrides the config).
    #[arg(long = "match", value_parser = parse_match)]
    pub match_mode: Option<MatchMode>,
    /// Colony semantics epoch: pre-0620, 0620-0624, current, or a date (overrides the trace).
    #[arg(long, value_parser = Epoch::parse)]
    pub epoch: Option<Epoch>,
    /// List every call, not only blocked, unreached and changed ones.
    #[arg(long)]
    pub all_decisions: bool,
    /// Exit 1 only when a simulated decision differs from the recorded one (golden traces).
    #[arg(long)]
    pub expect_recorded: bool,
    /// Knowledge-base file or directory (repeatable), used to resolve keys.
    #[arg(long = "kb", value_name = "FILE_OR_DIR")]
    pub kb: Vec<PathBuf>,
    /// Rule profile (`colony` makes `substring` the default matching mode).
    #[arg(long, value_parser = parse_profile)]
    pub profile: Option<Profile>,
    /// Exit with 0 even when calls would be blocked.
    #[arg(long, short = 'e')]
    pub exit_zero: bool,
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::parse(s).ok_or_else(|| {
        format!("unknown trace format `{s}` (expected native, colony, openai-chat, pyagentic, swe-agent or agents-runstate)")
    })
}

fn parse_on_block(s: &str) -> Result<OnBlock, String> {
    OnBlock::parse(s)
        .ok_or_else(|| format!("unknown on-block mode `{s}` (expected keep, drop or stop-cell)"))
}

fn parse_match(s: &str) -> Result<MatchMode, String> {
    MatchMode::parse(s)
        .ok_or_else(|| format!("unknown match mode `{s}` (expected key or substring)"))
}

fn parse_profile(s: &str) -> Result<Profile, String> {
    match s {
        "strict" => Ok(Profile::Strict),
        "colony" => Ok(Profile::Colony),
        _ => Err(format!(
            "unknown profile `{s}` (expected `strict` or `colony`)"
        )),
    }
}

/// Where the engine's decisions and per-trace ends go while the replay runs: `json-lines`
/// writes each decision as it is made and, at the end of each trace, its block streaks and
/// totals, then flushes (issue 6 T10); `json`/`sarif` spool the decisions; `html` keeps a
/// bounded share. The first write error stops the writing and is returned after the run.
struct CliSink<'a> {
    out: &'a mut Box<dyn Write>,
    streaming: bool,
    html: bool,
    err: &'a mut Option<std::io::Error>,
    spool: &'a mut Option<render::DecisionSpool>,
    kept: &'a mut render::HtmlDecisions,
}

impl replay::DecisionSink for CliSink<'_> {
    fn decision(&mut self, d: &Decision) {
        if self.streaming && self.err.is_none() {
            if let Err(e) = d.write_json(&mut *self.out) {
                *self.err = Some(e);
            }
        }
        if let Some(sp) = self.spool.as_mut().filter(|_| self.err.is_none()) {
            if let Err(e) = sp.add(d) {
                *self.err = Some(e);
            }
        }
        if self.html {
            self.kept.add(d);
        }
    }

    fn trace_end(&mut self, totals: &replay::TraceTotals, streaks: &[replay::BlockStreak]) {
        if self.streaming && self.err.is_none() {
            let written = render::json_lines_trace_end(totals, streaks, &mut *self.out)
                .and_then(|()| self.out.flush());
            if let Err(e) = written {
                *self.err = Some(e);
            }
        }
    }
}

/// True when `a` and `b` name the same existing file (the same device and inode on Unix, so a
/// symlink, a hard link or `./x` are caught; the same canonical path elsewhere). `-` (standard
/// input) and files that do not exist are never the same.
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    if a.as_os_str() == "-" || b.as_os_str() == "-" {
        return false;
    }
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        ma.dev() == mb.dev() && ma.ino() == mb.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (ma, mb);
        matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
    }
}

/// Skips and warnings shown on standard error.
const SHOWN_SKIPS: usize = 50;

/// Runs `cellguard replay`.
pub fn run(args: ReplayArgs) -> anyhow::Result<ExitStatus> {
    let loaded = match &args.config {
        Some(p) => Some(config::load_file(p)?.ok_or_else(|| {
            anyhow::anyhow!("{}: no `[tool.cellguard]` table in this file", p.display())
        })?),
        None => {
            let first = &args.traces[0];
            let start = if first.as_os_str() == "-" {
                std::env::current_dir()?
            } else {
                first.clone()
            };
            config::discover(&start)?
        }
    };
    let overrides = Overrides {
        profile: args.profile,
        knowledge_base: args.kb.clone(),
        ..Default::default()
    };
    // Scanning a knowledge base uses the worker pool (with its large stacks).
    if !args.kb.is_empty()
        || loaded
            .as_ref()
            .is_some_and(|l| l.file.knowledge_base.is_some())
    {
        crate::start_worker_pool();
    }
    // Only the profile and the knowledge base: replay does not lint, so the lint settings
    // (import allowlist, rule selection) are neither resolved nor warned about.
    let project = config::ReplayProject::load(loaded.as_ref(), &overrides)?;
    let cfg: ReplayConfig = match &loaded {
        Some(l) => gconfig::from_loaded(l, project.profile, args.match_mode)?,
        None => {
            let mut c = ReplayConfig::default();
            if let Some(m) = args.match_mode {
                c.settings.mode = m;
            }
            c
        }
    };
    let policy_cfg = match &loaded {
        Some(l) => cellguard_lints::policies::config::from_loaded(l)?,
        None => Default::default(),
    };
    for w in &cfg.warnings {
        eprintln!("cellguard: warning: {w}");
    }
    if cfg.guardrails.is_empty() && policy_cfg.is_empty() {
        eprintln!(
            "cellguard: warning: no guardrails configured{}; every call is allowed",
            loaded
                .as_ref()
                .map(|l| format!(" in {}", l.path.display()))
                .unwrap_or_else(|| " (no config found; pass --config)".into())
        );
    }
    // Writing the report over one of the inputs would destroy it while it is read (issue 6
    // T4-6): refused before anything is opened for writing.
    if let Some(o) = &args.output {
        if let Some(t) = args.traces.iter().find(|t| same_file(o, t)) {
            anyhow::bail!(
                "{}: the report file is also an input trace ({}); choose another `-o`",
                o.display(),
                t.display()
            );
        }
    }
    let mut readers = Vec::new();
    for t in &args.traces {
        readers.push(trace::open(t, args.format)?);
    }

    let mut out: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p)
                .with_context(|| format!("{}: cannot write the report", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let streaming = args.output_format == ReplayFormat::JsonLines;
    let html = args.output_format == ReplayFormat::Html;
    let opts = Options {
        on_block: args.on_block,
        epoch: args.epoch,
        // The HTML timelines need every call (kept here, bounded, by the sink); json-lines
        // streams and text/json/sarif spool instead of keeping.
        all_decisions: args.all_decisions || html,
        keep_decisions: false,
    };
    let mut spool = render::DecisionSpool::new(args.output_format)
        .context("cannot create a temporary file for the report's decisions")?;
    let mut io_error: Option<std::io::Error> = None;
    let mut html_kept = render::HtmlDecisions::default();
    let report = {
        let mut sink = CliSink {
            out: &mut out,
            streaming,
            html,
            err: &mut io_error,
            spool: &mut spool,
            kept: &mut html_kept,
        };
        let mut observers: Vec<Box<dyn replay::Observer>> = Vec::new();
        if !policy_cfg.is_empty() {
            observers.push(Box::new(PolicyObserver::new(std::sync::Arc::new(
                policy_cfg,
            ))));
        }
        replay::run(&cfg, &project.kb, opts, &mut readers, observers, &mut sink)
    };
    if let Some(e) = io_error {
        return Err(e.into());
    }
    let mut shown = 0;
    for s in report.skipped.iter().chain(report.warnings.iter()) {
        if shown == SHOWN_SKIPS {
            break;
        }
        // Warnings quote trace text: control characters are escaped (issue 6 T7).
        // ... and the stand-ins of `NaN` / `Infinity` are shown as the tokens.
        eprintln!(
            "cellguard: warning: {}",
            crate::render::replay::ctl(&cellguard_lints::trace::nonfinite::display(&s.to_string()))
        );
        shown += 1;
    }
    let total_notes = report.summary.records_skipped as usize + report.warnings.len();
    if total_notes > shown {
        eprintln!("cellguard: warning: ... and {} more", total_notes - shown);
    }
    // A trace of which every record was skipped (a wrong `--format`, every line malformed)
    // replayed nothing: that is an input error, never a "nothing blocked" pass (issue 6 T3).
    for (path, reader) in args.traces.iter().zip(&readers) {
        let st = reader.stats();
        if st.read > 0 && st.accepted == 0 {
            anyhow::bail!(
                "{}: no record of the trace could be read as {} ({} read, {} skipped); check `--format` and the warnings above",
                path.display(),
                reader.format().as_str(),
                st.read,
                st.skipped
            );
        }
    }
    match args.output_format {
        ReplayFormat::Text | ReplayFormat::Json | ReplayFormat::Sarif => match spool {
            Some(sp) => match args.output_format {
                ReplayFormat::Text => sp.write_text(&report, &mut out)?,
                ReplayFormat::Json => sp.write_json(&report, &mut out)?,
                _ => sp.write_sarif(&report, &mut out)?,
            },
            None => anyhow::bail!("internal: no decision spool for the report"),
        },
        ReplayFormat::JsonLines => render::json_lines_tail(&report, &mut out)?,
        ReplayFormat::Html => render::html(&report, &html_kept, &mut out)?,
    }
    out.flush()?;
    let s = &report.summary;
    let findings = if args.expect_recorded {
        s.changed > 0 || s.completions_changed > 0
    } else {
        s.blocked > 0 || report.sections.iter().any(|sec| sec.has_findings())
    };
    Ok(if findings && !args.exit_zero {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}
