//! `cellguard check [PATHS|-]`: lint cells and report diagnostics.
//!
//! Pipeline: collect inputs (explicit files as given; directories walked in parallel honouring
//! `.gitignore`, `.ignore` and ruff's default excludes) -> per file, in parallel: read, find the
//! closest config, extract cells, run the rules (and, with `--fix`, `--diff`, `--fix-only` or
//! `--add-noqa`, apply fixes or write suppressions: see `fixing`) -> sort -> render -> exit code.
//!
//! Nothing is lost on a bad input: a file that cannot be read, a config that does not load, or
//! an internal error on one file is reported on stderr (`error: path[:line:col]: message`) and
//! the run goes on with the other files; the exit code is then 2. Exit codes: 0 clean (or
//! `--exit-zero`), 1 findings, 2 usage, configuration, I/O or internal error.

use super::fixing::{self, FixArgs, FixRecord, Mode};
use super::ExitStatus;
use crate::render::{self, FileReport, OutputFormat, RenderOptions, Report};
use cellguard_lints::config::{Dialect, Overrides, Profile, Project, Resolver};
use cellguard_lints::extract::ExtractMode;
use cellguard_lints::{rules, Applicability, SourceFile};
use clap::builder::PossibleValuesParser;
use clap::builder::TypedValueParser;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Arguments of `cellguard check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Files or directories to check (default: `.`); `-` reads standard input.
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(
        long,
        value_enum,
        default_value_t = OutputFormat::Text,
        env = "CELLGUARD_OUTPUT_FORMAT"
    )]
    pub output_format: OutputFormat,
    /// Write the report to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE", env = "CELLGUARD_OUTPUT_FILE")]
    pub output_file: Option<PathBuf>,
    /// Rules to enable, replacing the config's selection: codes (`API001`), family prefixes
    /// (`API`, `SHP00`), rule names (`unknown-action`) or `ALL`; comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "RULES", value_parser = parse_selector)]
    pub select: Option<Vec<String>>,
    /// Rules to add to the selection (same forms as `--select`).
    #[arg(long, value_delimiter = ',', value_name = "RULES", value_parser = parse_selector)]
    pub extend_select: Vec<String>,
    /// Rules to disable (same forms as `--select`).
    #[arg(long, value_delimiter = ',', value_name = "RULES", value_parser = parse_selector)]
    pub ignore: Vec<String>,
    /// Use this config file for every path (no discovery); its paths are relative to it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Knowledge-base file or directory, added to the config's (repeatable).
    #[arg(long = "kb", value_name = "FILE_OR_DIR")]
    pub kb: Vec<PathBuf>,
    /// Rule profile.
    #[arg(long, value_parser = PossibleValuesParser::new(["strict", "colony"]).map(|s| parse_profile(&s)))]
    pub profile: Option<Profile>,
    /// How cells call actions.
    #[arg(long, value_parser = PossibleValuesParser::new(["colony", "functions"]).map(|s| parse_dialect(&s)))]
    pub dialect: Option<Dialect>,
    /// How files are split into cells (`auto`: by extension).
    #[arg(long, value_parser = PossibleValuesParser::new(["auto", "python", "markdown", "response", "jsonl"]).map(|s| parse_extract(&s)))]
    pub extract: Option<ExtractMode>,
    /// File name for standard input: used for config discovery, the extraction mode and
    /// messages.
    #[arg(long, value_name = "PATH")]
    pub stdin_filename: Option<PathBuf>,
    /// Exit with 0 even when findings remain (errors still exit with 2).
    #[arg(long, short = 'e')]
    pub exit_zero: bool,
    /// Print the number of findings per rule instead of the findings.
    #[arg(long)]
    pub statistics: bool,
    /// Fix-related flags (`--fix`, `--unsafe-fixes`, `--diff`, `--show-fixes`, `--fix-only`,
    /// `--add-noqa`), see `fixing`.
    #[command(flatten)]
    pub fixes: FixArgs,
    /// Print the files that would be checked, and exit.
    #[arg(long, conflicts_with_all = ["statistics", "show_settings"])]
    pub show_files: bool,
    /// Print the resolved settings for the first file, and exit.
    #[arg(long, conflicts_with = "statistics")]
    pub show_settings: bool,
}

fn parse_profile(s: &str) -> Profile {
    match s {
        "colony" => Profile::Colony,
        _ => Profile::Strict,
    }
}

fn parse_dialect(s: &str) -> Dialect {
    match s {
        "functions" => Dialect::Functions,
        _ => Dialect::Colony,
    }
}

fn parse_extract(s: &str) -> ExtractMode {
    match s {
        "python" => ExtractMode::Python,
        "markdown" => ExtractMode::Markdown,
        "response" => ExtractMode::Response,
        "jsonl" => ExtractMode::Jsonl,
        _ => ExtractMode::Auto,
    }
}

/// Validates one rule selector at parse time, so `--select NOPE` is a usage error (exit 2).
fn parse_selector(s: &str) -> Result<String, String> {
    let s = s.trim();
    if rules::all_rules().any(|r| cellguard_lints::config::selector_matches(s, r)) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "unknown rule selector `{s}` (expected a code such as `API001`, a prefix such as `API`, a rule name, or `ALL`; see `cellguard rule --all`)"
        ))
    }
}

/// Directories never entered by a walk (ruff's default `exclude`), unless named explicitly.
pub const DEFAULT_EXCLUDES: [&str; 25] = [
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
];

/// Messages for stderr, collected while files are checked in parallel.
#[derive(Debug, Default)]
struct Problems {
    /// `warning: ...` lines (the run's exit code is unaffected).
    warnings: Vec<String>,
    /// `error: ...` lines (the run exits with 2).
    errors: Vec<String>,
}

/// `./a/./b.py` -> `a/b.py`; used for display and as the key of the deterministic order.
fn clean_path(p: &Path) -> PathBuf {
    let cleaned: PathBuf = p
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if cleaned.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        cleaned
    }
}

fn walk_error_is_warning(e: &ignore::Error) -> bool {
    match e {
        ignore::Error::Loop { .. } => true,
        ignore::Error::WithPath { err, .. } | ignore::Error::WithDepth { err, .. } => {
            walk_error_is_warning(err)
        }
        ignore::Error::Io(io) => io.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    }
}

/// Files to check: explicit files as given (whatever their extension), directories walked for
/// `.py`, `.pyi`, `.md` and `.markdown` files. Sorted and deduplicated.
fn collect_files(paths: &[PathBuf], problems: &mut Problems) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut roots = Vec::new();
    for p in paths {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => roots.push(p.clone()),
            Ok(_) => files.push(clean_path(p)),
            Err(e) => problems.errors.push(format!("{}: {e}", p.display())),
        }
    }
    if let Some((first, rest)) = roots.split_first() {
        let mut builder = ignore::WalkBuilder::new(first);
        for r in rest {
            builder.add(r);
        }
        builder
            .hidden(false)
            .require_git(false)
            .follow_links(false)
            .filter_entry(|e| {
                !(e.depth() > 0
                    && e.file_type().is_some_and(|t| t.is_dir())
                    && e.file_name()
                        .to_str()
                        .is_some_and(|n| DEFAULT_EXCLUDES.contains(&n)))
            });
        let found = Mutex::new(Vec::new());
        let walk_problems = Mutex::new(Problems::default());
        builder.build_parallel().run(|| {
            Box::new(|entry| {
                match entry {
                    Ok(e) => {
                        let Some(t) = e.file_type() else {
                            return ignore::WalkState::Continue;
                        };
                        let wanted = ExtractMode::is_checkable_extension(e.path());
                        if t.is_file() && wanted {
                            lock(&found).push(clean_path(e.path()));
                        } else if t.is_symlink() && wanted {
                            // A symlinked file is checked; symlinked directories are not
                            // entered (no loops).
                            match std::fs::metadata(e.path()) {
                                Ok(m) if m.is_file() => lock(&found).push(clean_path(e.path())),
                                Ok(_) => {}
                                Err(err) => lock(&walk_problems)
                                    .warnings
                                    .push(format!("{}: skipped: {err}", e.path().display())),
                            }
                        }
                    }
                    Err(err) => {
                        let msg = err.to_string();
                        let mut p = lock(&walk_problems);
                        if walk_error_is_warning(&err) {
                            p.warnings.push(format!("skipped: {msg}"));
                        } else {
                            p.errors.push(msg);
                        }
                    }
                }
                ignore::WalkState::Continue
            })
        });
        files.extend(found.into_inner().unwrap_or_else(|e| e.into_inner()));
        let wp = walk_problems
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        problems.warnings.extend(wp.warnings);
        problems.errors.extend(wp.errors);
    }
    files.sort();
    files.dedup();
    files
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One input of the run.
enum Input {
    File(PathBuf),
    Stdin { name: PathBuf, bytes: Vec<u8> },
}

/// What checking one input produced.
#[derive(Default)]
struct Outcome {
    report: Option<FileReport>,
    project: Option<Arc<Project>>,
    warnings: Vec<String>,
    errors: Vec<String>,
    /// What a fix mode did (`--fix`, `--diff`, `--add-noqa`...).
    fix: Option<FixRecord>,
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

fn check_input(input: Input, resolver: &Resolver, fix_args: &FixArgs) -> Outcome {
    let mut out = Outcome::default();
    let is_file = matches!(input, Input::File(_));
    let (path, lookup, bytes) = match input {
        Input::File(p) => match std::fs::read(&p) {
            Ok(b) => (p.clone(), p, b),
            Err(e) => {
                out.errors
                    .push(format!("{}: cannot read: {e}", p.display()));
                return out;
            }
        },
        Input::Stdin { name, bytes } => {
            let lookup = std::env::current_dir()
                .map(|d| d.join(&name))
                .unwrap_or_else(|_| name.clone());
            (name, lookup, bytes)
        }
    };
    let project = match resolver.project_for(&lookup) {
        Ok(p) => p,
        Err(e) => {
            // Reported once per config by the caller (deduplicated); the file is skipped rather
            // than checked with settings the user did not write.
            out.errors.push(config_error(e));
            return out;
        }
    };
    let bom = bytes.starts_with(b"\xEF\xBB\xBF");
    let source = SourceFile::from_bytes(path.clone(), &bytes);
    drop(bytes);
    if let Some(at) = source.invalid_utf8_at {
        let loc = source.location(at);
        out.warnings.push(format!(
            "{}:{}:{}: invalid UTF-8; the bytes were replaced with U+FFFD and the file was checked",
            path.display(),
            loc.row,
            loc.column
        ));
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        fixing::process(source, &project.settings, &project.kb, fix_args)
    }));
    match result {
        Ok(processed) => {
            out.warnings.extend(processed.warnings);
            out.errors.extend(processed.errors);
            let writes = matches!(fix_args.mode(), Mode::Fix | Mode::FixOnly | Mode::AddNoqa);
            if let Some(record) = &processed.record {
                if writes && is_file && out.errors.is_empty() {
                    if let Err(e) = fixing::write_back(&path, record) {
                        out.errors.push(e);
                    }
                }
            }
            out.fix = processed.record.map(|mut r| {
                r.stdin = !is_file;
                r.bom = bom;
                r
            });
            if !processed.diagnostics.is_empty() {
                out.report = Some(FileReport {
                    rule_docs_url: project.settings.rule_docs_url.clone(),
                    source: processed.source,
                    diagnostics: processed.diagnostics,
                });
            }
        }
        Err(p) => out.errors.push(format!(
            "{}: internal error while checking this file ({}); please report it with the file",
            path.display(),
            panic_message(p.as_ref())
        )),
    }
    out.project = Some(project);
    out
}

/// `path` relative to the working directory when it lies below it (config files are found by
/// absolute path), so messages read like the paths the user typed.
pub(crate) fn relative(path: &Path) -> PathBuf {
    match std::env::current_dir() {
        Ok(cwd) if path.is_absolute() => path
            .strip_prefix(&cwd)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}

/// A config error or warning as printed: `path:line:col: message`.
pub(crate) fn config_error(mut e: cellguard_lints::config::ConfigError) -> String {
    e.path = relative(&e.path);
    // Paths quoted in the message (the inputs of a knowledge-base conflict) too.
    if let Ok(cwd) = std::env::current_dir() {
        let prefix = format!("{}{}", cwd.display(), std::path::MAIN_SEPARATOR);
        if cwd.is_absolute() && e.message.contains(&prefix) {
            e.message = e.message.replace(&prefix, "");
        }
    }
    e.to_string()
}

/// How `--color` resolves: `auto` colours when the output is a terminal and `NO_COLOR` is unset
/// or empty.
pub fn use_color(choice: crate::commands::ColorChoice, to_terminal: bool) -> bool {
    match choice {
        crate::commands::ColorChoice::Always => true,
        crate::commands::ColorChoice::Never => false,
        crate::commands::ColorChoice::Auto => {
            to_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// Runs `cellguard check`.
pub fn run(args: CheckArgs, color: crate::commands::ColorChoice) -> anyhow::Result<ExitStatus> {
    let overrides = Overrides {
        profile: args.profile,
        dialect: args.dialect,
        select: args.select.clone(),
        extend_select: args.extend_select.clone(),
        ignore: args.ignore.clone(),
        knowledge_base: args.kb.clone(),
        extract: args.extract,
        rule_docs_url: None,
        origin: None,
    };
    let mut problems = Problems::default();
    let resolver = match &args.config {
        Some(path) => match Resolver::with_config(path, overrides) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {}", config_error(e));
                return Ok(ExitStatus::Error);
            }
        },
        None => Resolver::new(overrides),
    };

    let wants_stdin = args.paths.iter().any(|p| p.as_os_str() == "-")
        || (args.paths.is_empty() && args.stdin_filename.is_some());
    let mut paths: Vec<PathBuf> = args
        .paths
        .iter()
        .filter(|p| p.as_os_str() != "-")
        .cloned()
        .collect();
    if paths.is_empty() && !wants_stdin {
        paths.push(PathBuf::from("."));
    }
    let files = collect_files(&paths, &mut problems);

    if args.show_files {
        let mut out = std::io::stdout().lock();
        for f in &files {
            writeln!(out, "{}", f.display())?;
        }
        if wants_stdin {
            writeln!(out, "-")?;
        }
        return Ok(finish(&problems, ExitStatus::Success));
    }

    let mut inputs: Vec<Input> = files.into_iter().map(Input::File).collect();
    if wants_stdin {
        let mut bytes = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
            problems
                .errors
                .push(format!("-: cannot read standard input: {e}"));
        } else {
            let name = args
                .stdin_filename
                .clone()
                .map(|p| clean_path(&p))
                .unwrap_or_else(|| PathBuf::from("-"));
            inputs.push(Input::Stdin { name, bytes });
        }
    }

    if args.show_settings {
        let lookup = match inputs.first() {
            Some(Input::File(p)) => p.clone(),
            Some(Input::Stdin { name, .. }) => std::env::current_dir()?.join(name),
            None => PathBuf::from("."),
        };
        return match resolver.project_for(&lookup) {
            Ok(p) => {
                show_settings(&lookup, &p)?;
                Ok(finish(&problems, ExitStatus::Success))
            }
            Err(e) => {
                problems.errors.push(config_error(e));
                Ok(finish(&problems, ExitStatus::Error))
            }
        };
    }

    if inputs.is_empty() {
        if problems.errors.is_empty() {
            problems
                .warnings
                .push("No Python or Markdown files found under the given path(s)".to_string());
        }
        let status = if problems.errors.is_empty() {
            ExitStatus::Success
        } else {
            ExitStatus::Error
        };
        return Ok(finish(&problems, status));
    }

    cellguard_lints::start_worker_pool();
    let outcomes: Vec<Outcome> = inputs
        .into_par_iter()
        .map(|i| check_input(i, &resolver, &args.fixes))
        .collect();

    let mut reports = Vec::new();
    let mut records: Vec<FixRecord> = Vec::new();
    let mut projects: BTreeMap<String, Arc<Project>> = BTreeMap::new();
    for o in outcomes {
        problems.warnings.extend(o.warnings);
        for e in o.errors {
            if !problems.errors.contains(&e) {
                problems.errors.push(e);
            }
        }
        if let Some(p) = o.project {
            let key = p
                .config
                .as_ref()
                .map(|c| c.path.display().to_string())
                .unwrap_or_default();
            projects.entry(key).or_insert(p);
        }
        reports.extend(o.report);
        records.extend(o.fix);
    }
    records.sort_by(|a, b| a.path.cmp(&b.path));
    // Config warnings, once per config file in effect.
    let mut config_warnings = Vec::new();
    for p in projects.values() {
        for w in &p.settings.warnings {
            let w = config_error(w.clone());
            if !config_warnings.contains(&w) {
                config_warnings.push(w);
            }
        }
    }
    config_warnings.append(&mut problems.warnings);
    problems.warnings = config_warnings;

    let report = Report::new(reports);
    let mode = args.fixes.mode();
    if let Some(status) = fix_only_output(mode, &args, wants_stdin, &records, &problems)? {
        return Ok(finish(&problems, status));
    }
    // With standard input and `--fix`, standard output carries the fixed text and the report
    // goes to standard error (or `--output-file`).
    let fixed_to_stdout = mode == Mode::Fix && wants_stdin;
    if fixed_to_stdout {
        if let Some(r) = records.iter().find(|r| r.stdin) {
            std::io::stdout().lock().write_all(&r.output_bytes())?;
        }
    }
    let to_terminal = args.output_file.is_none()
        && if fixed_to_stdout {
            std::io::stderr().is_terminal()
        } else {
            std::io::stdout().is_terminal()
        };
    let opts = RenderOptions {
        color: use_color(color, to_terminal),
        unsafe_fixes: args.fixes.threshold() == Applicability::Unsafe,
        fixed: fixing::total_fixed(&records),
    };
    let mut buf: Vec<u8> = Vec::new();
    let human = !matches!(
        args.output_format,
        OutputFormat::Json | OutputFormat::JsonLines | OutputFormat::Sarif | OutputFormat::Junit
    );
    if report.files.is_empty() && !problems.errors.is_empty() && human {
        // Nothing to show, and "All checks passed!" would hide the errors below.
    } else if args.statistics {
        match args.output_format {
            OutputFormat::Json | OutputFormat::JsonLines => {
                render::statistics::render_json(&report, &opts, &mut buf)?
            }
            _ => render::statistics::render_text(&report, &opts, &mut buf)?,
        }
    } else {
        render::render(&report, args.output_format, &opts, &mut buf)?;
    }
    if mode == Mode::Fix && args.fixes.show_fixes && !args.fixes.no_show_fixes && human {
        fixing::write_fix_summary(&records, &mut buf)?;
    }
    match &args.output_file {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &buf) {
                problems
                    .errors
                    .push(format!("{}: cannot write the report: {e}", path.display()));
            }
        }
        None if fixed_to_stdout => {
            std::io::stderr().lock().write_all(&buf)?;
        }
        None => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (`cellguard check | head`) is not an error of the check.
            if let Err(e) = out.write_all(&buf).and_then(|_| out.flush()) {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    return Err(e.into());
                }
            }
        }
    }

    let status = if !problems.errors.is_empty() {
        ExitStatus::Error
    } else if report.has_failures() && !args.exit_zero {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    };
    Ok(finish(&problems, status))
}

/// The output of the modes that print no report (`--diff`, `--fix-only`, `--add-noqa`), and
/// their exit status; `None` for the reporting modes.
fn fix_only_output(
    mode: Mode,
    args: &CheckArgs,
    stdin: bool,
    records: &[FixRecord],
    problems: &Problems,
) -> anyhow::Result<Option<ExitStatus>> {
    let failed = !problems.errors.is_empty();
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    let stdin_text = || records.iter().find(|r| r.stdin).map(|r| r.output_bytes());
    let status = match mode {
        Mode::Report | Mode::Fix => return Ok(None),
        Mode::Diff => {
            let mut any = false;
            for r in records {
                if let Some(d) = r.unified_diff() {
                    stdout.write_all(d.as_bytes())?;
                    any = true;
                }
            }
            writeln!(stderr, "{}", fixing::fixed_line(records, true))?;
            if failed {
                ExitStatus::Error
            } else if any {
                ExitStatus::Failure
            } else {
                ExitStatus::Success
            }
        }
        Mode::FixOnly => {
            if stdin {
                if let Some(t) = stdin_text() {
                    stdout.write_all(&t)?;
                }
            }
            if args.fixes.show_fixes && !args.fixes.no_show_fixes {
                fixing::write_fix_summary(records, &mut stderr)?;
            }
            writeln!(stderr, "{}", fixing::fixed_line(records, false))?;
            if failed {
                ExitStatus::Error
            } else {
                ExitStatus::Success
            }
        }
        Mode::AddNoqa => {
            if stdin {
                if let Some(t) = stdin_text() {
                    stdout.write_all(&t)?;
                }
            }
            let added: usize = records.iter().filter_map(|r| r.noqa).map(|n| n.0).sum();
            writeln!(
                stderr,
                "Added {added} noqa directive{}.",
                fixing::plural(added)
            )?;
            if failed {
                ExitStatus::Error
            } else {
                ExitStatus::Success
            }
        }
    };
    Ok(Some(status))
}

/// Prints warnings and errors on stderr and returns `status`.
fn finish(problems: &Problems, status: ExitStatus) -> ExitStatus {
    let mut err = std::io::stderr().lock();
    for w in &problems.warnings {
        let _ = writeln!(err, "warning: {w}");
    }
    for e in &problems.errors {
        let _ = writeln!(err, "error: {e}");
    }
    status
}

fn show_settings(path: &Path, p: &Project) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "Resolved settings for: {}", path.display())?;
    match &p.config {
        Some(c) => {
            writeln!(out, "Config file: {}", c.path.display())?;
            for e in &c.extended {
                writeln!(out, "  extends: {}", e.display())?;
            }
        }
        None => writeln!(out, "Config file: none (built-in defaults)")?,
    }
    for k in &p.kb_paths {
        writeln!(out, "Knowledge base: {}", k.display())?;
    }
    let s = &p.settings;
    writeln!(out, "profile = {:?}", s.profile)?;
    writeln!(out, "dialect = {:?}", s.dialect)?;
    writeln!(out, "extract = {:?}", s.extract)?;
    writeln!(
        out,
        "rules = [{}]",
        s.rules.codes().collect::<Vec<_>>().join(", ")
    )?;
    writeln!(out, "imports.allow = {:?}", s.allowed_imports)?;
    writeln!(out, "imports.deny-members = {:?}", s.deny_members)?;
    writeln!(
        out,
        "shape = {{ max-actions = {}, max-browse = {}, max-lines = {} }}",
        s.max_actions, s.max_browse, s.max_lines
    )?;
    writeln!(out, "namespace.run = {:?}", s.namespace.run)?;
    writeln!(out, "namespace.names = {:?}", s.namespace.names)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_path_strips_current_dir() {
        assert_eq!(clean_path(Path::new("./a/./b.py")), PathBuf::from("a/b.py"));
        assert_eq!(clean_path(Path::new(".")), PathBuf::from("."));
        assert_eq!(clean_path(Path::new("/x/./y")), PathBuf::from("/x/y"));
    }

    #[test]
    fn selectors_are_checked_at_parse_time() {
        assert_eq!(parse_selector("API").unwrap(), "API");
        assert_eq!(parse_selector(" imp001 ").unwrap(), "imp001");
        assert!(parse_selector("NOPE").unwrap_err().contains("NOPE"));
    }

    #[test]
    fn color_auto_needs_a_terminal() {
        use crate::commands::ColorChoice;
        assert!(use_color(ColorChoice::Always, false));
        assert!(!use_color(ColorChoice::Never, true));
        assert!(!use_color(ColorChoice::Auto, false));
    }
}
