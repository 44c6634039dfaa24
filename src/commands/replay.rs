//! `cellguard replay TRACE... [--config FILE]`: recorded traces through simulated guardrails
//! (spec §7–§8). Without `--config`, each trace is replayed with its own closest config.
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
    /// Config file with `[[guardrails]]`, `[[policies]]` and `[replay]` for every trace
    /// (default: for each trace, the closest cellguard.toml to it).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Input format (default: detected from the content).
    #[arg(long, value_parser = super::one_of(Format::ALL.map(|f| clap::builder::PossibleValue::new(f.as_str()).aliases(f.aliases())), Format::parse))]
    pub format: Option<Format>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReplayFormat::Text)]
    pub output_format: ReplayFormat,
    /// Write the report to this file instead of standard output.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// What a simulated block does to later evaluation (default: the runtime's own behaviour
    /// for the trace's epoch: stop-cell from 2026-06-20, drop before).
    #[arg(long, value_parser = super::one_of(super::names(OnBlock::ALL.map(OnBlock::as_str)), OnBlock::parse))]
    pub on_block: Option<OnBlock>,
    /// Matching mode for every guardrail (overrides the config).
    #[arg(long = "match", value_parser = super::one_of(super::names(MatchMode::ALL.map(MatchMode::as_str)), MatchMode::parse))]
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
    #[arg(long, value_parser = super::one_of(super::names(["strict", "colony"]), parse_profile))]
    pub profile: Option<Profile>,
    /// Exit with 0 even when calls would be blocked.
    #[arg(long, short = 'e')]
    pub exit_zero: bool,
}

fn parse_profile(s: &str) -> Option<Profile> {
    match s {
        "strict" => Some(Profile::Strict),
        "colony" => Some(Profile::Colony),
        _ => None,
    }
}

/// Where the engine's decisions and per-trace ends go while the replay runs: `json-lines`
/// writes each decision as it is made, each block streak when it ends (issue 6 T5-7) and, at
/// the end of each trace, its totals, then flushes (issue 6 T10); `json`/`sarif` spool the
/// decisions, the block streaks (issue 6 T6-11) and each trace's totals (issue 6 T5-16),
/// `text` the decisions and streaks; `html` keeps a bounded share of both. The first write error stops the writing and is returned after the run.
struct CliSink<'a> {
    out: &'a mut Box<dyn Write>,
    streaming: bool,
    html: bool,
    err: &'a mut Option<std::io::Error>,
    spool: &'a mut Option<render::DecisionSpool>,
    kept: &'a mut render::HtmlDecisions,
    /// The files of which a trace had calls (for [`forced_format_misread`], without keeping
    /// every trace's totals).
    files_with_calls: &'a mut Vec<std::sync::Arc<str>>,
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

    fn streak(&mut self, s: &replay::BlockStreak) {
        if self.streaming && self.err.is_none() {
            if let Err(e) = render::json_lines_streak(s, &mut *self.out) {
                *self.err = Some(e);
            }
        }
        if let Some(sp) = self.spool.as_mut().filter(|_| self.err.is_none()) {
            if let Err(e) = sp.add_streak(s) {
                *self.err = Some(e);
            }
        }
        if self.html {
            self.kept.add_streak(s);
        }
    }

    fn trace_end(&mut self, totals: &replay::TraceTotals) {
        if totals.calls > 0 && !self.files_with_calls.contains(&totals.file) {
            self.files_with_calls.push(totals.file.clone());
        }
        if let Some(sp) = self.spool.as_mut().filter(|_| self.err.is_none()) {
            if let Err(e) = sp.add_trace(totals) {
                *self.err = Some(e);
            }
        }
        if self.streaming && self.err.is_none() {
            let written = render::json_lines_trace_end(totals, &mut *self.out)
                .and_then(|()| self.out.flush());
            if let Err(e) = written {
                *self.err = Some(e);
            }
        }
    }
}

/// Every file the run reads, with what it is: the traces, each group's config and the files it
/// `extend`s, and the knowledge bases (`--kb`, a config's `knowledge-base`, resolved as the
/// config loader resolves them).
fn run_inputs(args: &ReplayArgs, groups: &[Group]) -> Vec<(&'static str, PathBuf)> {
    let mut out: Vec<(&'static str, PathBuf)> = args
        .traces
        .iter()
        .map(|t| ("an input trace", t.clone()))
        .collect();
    out.extend(args.kb.iter().map(|k| ("a knowledge base", k.clone())));
    for l in groups.iter().filter_map(|g| g.loaded.as_ref()) {
        out.push(("a config file", l.path.clone()));
        out.extend(l.extended.iter().map(|e| ("a config file", e.clone())));
        let dir = l.path.parent().unwrap_or(std::path::Path::new("."));
        for k in l.file.knowledge_base.iter().flatten() {
            out.push(("a knowledge base", dir.join(k)));
        }
    }
    out
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

/// Issue 6 T4-13: a format forced with `--format` that gave nothing to replay from `path` (no
/// trace of the file has a call or a completion) while detection reads the file as another
/// format: a misread, never a clean run (`--format colony` on a native trace accepts its `cell`
/// lines as Colony cells without calls). Returns the format detected (or why none is), `None`
/// when the file gave a call (`files_with_calls`: the files of which a trace had calls) or a
/// completion, or is detected as `forced`. Standard input cannot
/// be read again to detect it: it is not judged.
fn forced_format_misread(
    path: &std::path::Path,
    forced: Format,
    files_with_calls: &[std::sync::Arc<str>],
    report: &replay::Report,
    input: &replay::InputRead,
) -> Option<String> {
    let name = path.display().to_string();
    let numbered = format!("{name}#");
    let of_file = |t: &str| t == name || t.starts_with(&numbered);
    let replayed = files_with_calls.iter().any(|f| **f == *name)
        || report.completions.iter().any(|c| of_file(&c.trace));
    if replayed {
        return None;
    }
    if path.as_os_str() == "-" {
        // Standard input cannot be read again: its reader detected the content's format
        // (issue 6 T6-8). Content of no detectable format says nothing either way.
        return input
            .detected
            .filter(|d| *d != forced)
            .map(|d| d.as_str().to_string());
    }
    match trace::open(path, None) {
        Ok(r) if r.format() == forced => None,
        Ok(r) => Some(r.format().as_str().to_string()),
        Err(e) => Some(format!("no trace format ({})", e.message)),
    }
}

/// A new temporary file in the directory of the report file `target` (so that renaming it over
/// `target` is atomic), created with the permissions `File::create` would give (`0o666` less
/// the umask on Unix).
///
/// Errors: the directory is missing or not writable (the message names `target`).
fn report_file_beside(target: &std::path::Path) -> anyhow::Result<tempfile::NamedTempFile> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut b = tempfile::Builder::new();
    b.prefix(".cellguard-report-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    b.tempfile_in(&dir)
        .with_context(|| format!("{}: cannot write the report", target.display()))
}

/// Where a finished `-o` report goes ([`run`]).
enum PendingReport {
    /// A new file: the temporary file beside it is renamed to it.
    Rename(tempfile::TempPath, PathBuf),
    /// An existing regular file: the anonymous temporary file (the report) is copied over its
    /// content, so the file itself (mode, owner, links) stays.
    CopyOver(std::fs::File, PathBuf),
}

impl PendingReport {
    /// Moves the finished report to its target.
    ///
    /// Errors: the rename, or opening, reading back or writing the files (the message names
    /// the target).
    fn finish(self) -> anyhow::Result<()> {
        use std::io::Seek;
        match self {
            PendingReport::Rename(tmp, target) => tmp
                .persist(&target)
                .map(drop)
                .with_context(|| format!("{}: cannot write the report", target.display())),
            PendingReport::CopyOver(mut report, target) => {
                let written = (|| -> std::io::Result<()> {
                    report.seek(std::io::SeekFrom::Start(0))?;
                    let mut dest = std::fs::OpenOptions::new()
                        .write(true)
                        .truncate(true)
                        .open(&target)?;
                    std::io::copy(&mut report, &mut dest)?;
                    dest.flush()
                })();
                written.with_context(|| format!("{}: cannot write the report", target.display()))
            }
        }
    }
}

/// An anonymous temporary file for the report that will be copied over the existing file
/// `target`: in the target's directory when it can be created there, else in the system's
/// temporary directory.
///
/// Errors: neither place can hold it (the message names both).
fn spool_file_for(target: &std::path::Path) -> anyhow::Result<std::fs::File> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    tempfile::tempfile_in(&dir).or_else(|_| tempfile::tempfile()).with_context(|| {
        format!(
            "{}: cannot create a temporary file for the report in {} or in {} (the system's temporary directory: set `TMPDIR` to a writable one)",
            target.display(),
            dir.display(),
            std::env::temp_dir().display()
        )
    })
}

/// Skips and warnings shown on standard error.
const SHOWN_SKIPS: usize = 50;

/// The traces replayed with one config: the config (`None`: none was given or found), its
/// guardrails, policies and knowledge base, and the indices of its traces in the command line.
struct Group {
    loaded: Option<config::LoadedConfig>,
    traces: Vec<usize>,
}

/// The config of every trace: `--config` for all, else each trace's closest config, found as
/// `cellguard check` finds a file's ([`config::Resolver::config_path_for`]; standard input
/// from the working directory). Traces are grouped by config in order of first appearance.
///
/// Errors (issue 6 T4-7: a trace must never be replayed without the guardrails of its own
/// project while the others get theirs): some traces have a config and others none; a config
/// that cannot be loaded.
fn group_by_config(args: &ReplayArgs) -> anyhow::Result<Vec<Group>> {
    let config_error = |e| anyhow::anyhow!(super::check::config_error(e));
    if let Some(p) = &args.config {
        let loaded = config::load_file(p).map_err(config_error)?.ok_or_else(|| {
            anyhow::anyhow!("{}: no `[tool.cellguard]` table in this file", p.display())
        })?;
        return Ok(vec![Group {
            loaded: Some(loaded),
            traces: (0..args.traces.len()).collect(),
        }]);
    }
    let resolver = config::Resolver::new(Overrides::default());
    let mut paths: Vec<(Option<PathBuf>, Vec<usize>)> = Vec::new();
    for (i, t) in args.traces.iter().enumerate() {
        let lookup = if t.as_os_str() == "-" {
            std::env::current_dir()?.join("-")
        } else {
            t.clone()
        };
        let found = resolver.config_path_for(&lookup).map_err(config_error)?;
        match paths.iter_mut().find(|(p, _)| *p == found) {
            Some((_, list)) => list.push(i),
            None => paths.push((found, vec![i])),
        }
    }
    if paths.len() > 1 {
        if let Some((_, without)) = paths.iter().find(|(p, _)| p.is_none()) {
            let names: Vec<String> = without
                .iter()
                .map(|&i| args.traces[i].display().to_string())
                .collect();
            anyhow::bail!(
                "{}: no cellguard config found for {} (the other traces have one); add a cellguard.toml to {} project or pass `--config`",
                names.join(", "),
                if names.len() == 1 { "this trace" } else { "these traces" },
                if names.len() == 1 { "its" } else { "their" },
            );
        }
    }
    paths
        .into_iter()
        .map(|(p, traces)| {
            let loaded = match p {
                Some(p) => config::load_file(&p).map_err(config_error)?,
                None => None,
            };
            Ok(Group { loaded, traces })
        })
        .collect()
}

/// Errors when some traces' configs declare guardrails and another trace's closest config
/// declares none (a lint-only `[tool.cellguard]` table of a sub-package, issue 6 T6-15, or one
/// with only `[[policies]]`, T7-12: policies never gate a call): that config shadows the
/// project's guardrails for its traces, which would be replayed unchecked next to gated ones,
/// the case T4-7 refuses for a trace with no config at all.
fn refuse_ungated_groups(
    args: &ReplayArgs,
    groups: &[Group],
    inputs: &[Loaded],
) -> anyhow::Result<()> {
    if !inputs.iter().any(Loaded::gated) {
        return Ok(());
    }
    let Some((g, l)) = groups.iter().zip(inputs).find(|(_, l)| !l.gated()) else {
        return Ok(());
    };
    let names: Vec<String> = g
        .traces
        .iter()
        .map(|&i| args.traces[i].display().to_string())
        .collect();
    anyhow::bail!(
        "{}: {} configures no guardrails for {} (the other traces' configs do); declare them there, `extend` the project's config, or pass `--config`",
        names.join(", "),
        l.label.as_deref().unwrap_or("its config"),
        if names.len() == 1 { "this trace" } else { "these traces" },
    )
}

/// A group's replay inputs, loaded before anything is written.
struct Loaded {
    project: config::ReplayProject,
    cfg: ReplayConfig,
    policies: cellguard_lints::policies::config::PolicyConfig,
    /// The config path as reports show it (relative to the working directory when below it).
    label: Option<std::sync::Arc<str>>,
}

impl Loaded {
    /// Whether the config declares any guardrail (policies shape the context, they never gate
    /// a call).
    fn gated(&self) -> bool {
        !self.cfg.guardrails.is_empty()
    }
}

/// Loads the guardrails, policies and knowledge base of one group and prints their warnings.
fn load_group(args: &ReplayArgs, g: &Group, overrides: &Overrides) -> anyhow::Result<Loaded> {
    let loaded = g.loaded.as_ref();
    // Only the profile and the knowledge base: replay does not lint, so the lint settings
    // (import allowlist, rule selection) are neither resolved nor warned about.
    let project = config::ReplayProject::load(loaded, overrides)?;
    let cfg: ReplayConfig = match loaded {
        Some(l) => gconfig::from_loaded(l, project.profile, args.match_mode)?,
        None => {
            let mut c = ReplayConfig::default();
            if let Some(m) = args.match_mode {
                c.settings.mode = m;
            }
            c
        }
    };
    let policies = match loaded {
        Some(l) => cellguard_lints::policies::config::from_loaded(l)?,
        None => Default::default(),
    };
    for w in &cfg.warnings {
        eprintln!("cellguard: warning: {w}");
    }
    let label = loaded.map(|l| super::check::relative(&l.path).display().to_string().into());
    Ok(Loaded {
        project,
        cfg,
        policies,
        label,
    })
}

/// Runs `cellguard replay`; `color` (`--color`) applies to the text report, resolved as
/// `cellguard check` resolves it.
pub fn run(args: ReplayArgs, color: super::ColorChoice) -> anyhow::Result<ExitStatus> {
    let groups = group_by_config(&args)?;
    let overrides = Overrides {
        profile: args.profile,
        knowledge_base: args.kb.clone(),
        ..Default::default()
    };
    let mut inputs = Vec::new();
    for g in &groups {
        inputs.push(load_group(&args, g, &overrides)?);
    }
    refuse_ungated_groups(&args, &groups, &inputs)?;
    // A config with only policies replays them and says nothing of calls: no warning there.
    for l in inputs
        .iter()
        .filter(|l| !l.gated() && l.policies.is_empty())
    {
        eprintln!(
            "cellguard: warning: no guardrails configured{}; every call is allowed",
            l.label
                .as_deref()
                .map(|l: &str| format!(" in {l}"))
                .unwrap_or_else(|| " (no config found; pass --config)".into())
        );
    }
    // Writing the report over one of the inputs would destroy it (issue 6 T4-6: a trace while
    // it is read; T7-4: the config, an `extend` base or a knowledge base the guardrails come
    // from): refused before anything is opened for writing.
    if let Some(o) = &args.output {
        if let Some((what, p)) = run_inputs(&args, &groups)
            .into_iter()
            .find(|(_, p)| same_file(o, p))
        {
            anyhow::bail!(
                "{}: the report file is also {what} of this run ({}); choose another `-o`",
                o.display(),
                p.display()
            );
        }
    }
    // `-o`: the report goes to a temporary file and reaches the target only once the run has
    // ended without an error, so a failed run leaves an earlier report as it was (issue 6
    // T5-14). A new report file is created beside the target and renamed to it. An existing
    // regular file is written in place from the finished temporary file, so it keeps its mode,
    // owner, hard links and ACLs and the directory need not be writable (issue 6 T6-9). A
    // target that exists and is not a regular file (`/dev/null`, a FIFO) is written directly; a
    // symbolic link is followed, as `File::create` would. Dropping `pending` on an error path
    // deletes the temporary file.
    let (mut out, pending): (Box<dyn Write>, Option<PendingReport>) = match &args.output {
        Some(p) => match std::fs::metadata(p) {
            Ok(m) if !m.is_file() => (
                Box::new(std::io::BufWriter::new(PipeSink::new(
                    std::fs::OpenOptions::new()
                        .write(true)
                        .open(p)
                        .with_context(|| format!("{}: cannot write the report", p.display()))?,
                ))),
                None,
            ),
            Ok(_) => {
                // Refused now rather than after the whole replay.
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(p)
                    .with_context(|| format!("{}: cannot write the report", p.display()))?;
                let file = spool_file_for(p)?;
                let copy = file
                    .try_clone()
                    .with_context(|| format!("{}: cannot write the report", p.display()))?;
                (
                    Box::new(std::io::BufWriter::new(file)),
                    Some(PendingReport::CopyOver(copy, p.clone())),
                )
            }
            Err(_) => {
                let (file, tmp) = report_file_beside(p)?.into_parts();
                (
                    Box::new(std::io::BufWriter::new(file)),
                    Some(PendingReport::Rename(tmp, p.clone())),
                )
            }
        },
        None => (
            Box::new(std::io::BufWriter::new(PipeSink::new(
                std::io::stdout().lock(),
            ))),
            None,
        ),
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
        // json-lines writes each block streak when it ends (issue 6 T5-7), text/json/sarif
        // spool them and html keeps a bounded share (issue 6 T6-11).
        keep_streaks: false,
        // json-lines writes each trace's totals when it ends, json and sarif spool them (issue
        // 6 T5-16); text and html read them at the end.
        keep_traces: matches!(args.output_format, ReplayFormat::Text | ReplayFormat::Html),
        config: None,
        // Traces of different projects: each guardrail id is shown as `CONFIG:ID`, so two
        // projects' guardrails of the same id are counted apart (issue 6 T6-6).
        qualify_ids: groups.len() > 1,
    };
    let mut spool = render::DecisionSpool::new(args.output_format).with_context(|| {
        format!(
            "cannot create a temporary file for the report's decisions in {} (the system's temporary directory: set `TMPDIR` to a writable one)",
            std::env::temp_dir().display()
        )
    })?;
    if let Some(sp) = spool.as_mut() {
        use std::io::IsTerminal;
        let to_terminal = args.output.is_none() && std::io::stdout().is_terminal();
        sp.set_color(super::check::use_color(color, to_terminal));
    }
    let mut io_error: Option<std::io::Error> = None;
    let mut html_kept = render::HtmlDecisions::default();
    let mut files_with_calls = Vec::new();
    // One run per config, in order; their reports are merged into one.
    let mut report: Option<replay::Report> = None;
    // What was read of each trace, in the groups' order.
    let mut read = Vec::new();
    for (input, g) in inputs.into_iter().zip(&groups) {
        let mut sink = CliSink {
            out: &mut out,
            streaming,
            html,
            err: &mut io_error,
            spool: &mut spool,
            kept: &mut html_kept,
            files_with_calls: &mut files_with_calls,
        };
        let mut observers: Vec<Box<dyn replay::Observer>> = Vec::new();
        if !input.policies.is_empty() {
            observers.push(Box::new(PolicyObserver::new(std::sync::Arc::new(
                input.policies,
            ))));
        }
        let opts = Options {
            config: input.label,
            ..opts.clone()
        };
        // Each trace is opened when its turn comes and closed once read (issue 6 T4-26).
        let group_inputs = g
            .traces
            .iter()
            .map(|&i| trace::open(&args.traces[i], args.format));
        let (r, group_read) = replay::run(
            &input.cfg,
            &input.project.kb,
            opts,
            group_inputs,
            observers,
            &mut sink,
        )?;
        read.extend(group_read);
        match &mut report {
            Some(all) => all.merge(r),
            None => report = Some(r),
        }
    }
    let Some(report) = report else {
        anyhow::bail!("internal: no trace was replayed");
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
    // Every skipped record and warning, kept in the report or not (issue 6 N2-4).
    let total_notes = report.summary.records_skipped as usize + report.warnings.total() as usize;
    if total_notes > shown {
        eprintln!("cellguard: warning: ... and {} more", total_notes - shown);
    }
    // A trace of which every record was skipped (a wrong `--format`, every line malformed)
    // replayed nothing: that is an input error, never a "nothing blocked" pass (issue 6 T3).
    let replayed = groups
        .iter()
        .flat_map(|g| &g.traces)
        .map(|&i| &args.traces[i]);
    for (path, input) in replayed.zip(&read) {
        let st = input.stats;
        if st.read > 0 && st.accepted == 0 {
            anyhow::bail!(
                "{}: no record of the trace could be read as {} ({} read, {} skipped); check `--format` and the warnings above",
                path.display(),
                input.format.as_str(),
                st.read,
                st.skipped
            );
        }
        if let Some(forced) = args.format {
            if let Some(detected) =
                forced_format_misread(path, forced, &files_with_calls, &report, input)
            {
                anyhow::bail!(
                    "{}: read as {} (`--format {}`), the file gave no call or completion ({} records read, {} accepted, {} skipped), and its content is detected as {detected}; check `--format`",
                    path.display(),
                    forced.as_str(),
                    forced.as_str(),
                    st.read,
                    st.accepted,
                    st.skipped
                );
            }
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
    drop(out);
    if let Some(p) = pending {
        p.finish()?;
    }
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

/// A writer whose reader may close the pipe early (`cellguard replay ... | head`, a FIFO given
/// to `-o`): once a write fails with `BrokenPipe`, the rest of the report is dropped instead of
/// ending the run, so the replay still runs to its end and the exit code still says whether a
/// call was blocked (issue 6 T6-17: the run used to stop and exit 0). Other errors (a full
/// disk) pass through and end the run with exit 2.
struct PipeSink<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> PipeSink<W> {
    fn new(inner: W) -> Self {
        PipeSink {
            inner,
            closed: false,
        }
    }

    /// `Ok(default)` in place of a `BrokenPipe` error, remembering that the reader is gone.
    fn absorb<T>(&mut self, r: std::io::Result<T>, default: T) -> std::io::Result<T> {
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(default)
            }
            r => r,
        }
    }
}

impl<W: Write> Write for PipeSink<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let r = self.inner.write(buf);
        self.absorb(r, buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.inner.flush();
        self.absorb(r, ())
    }
}
