//! `cellguard check [PATHS|-]`: lint cells and report diagnostics.

use super::fixing::{self, Mode};
use super::ExitStatus;
use crate::render::{self, OutputFormat, Report};
use cellguard_lints::config::{Dialect, Overrides, Profile, Resolver};
use cellguard_lints::diagnostic::Applicability;
use cellguard_lints::extract::ExtractMode;
use cellguard_lints::SourceFile;
use rayon::prelude::*;
use std::io::Read;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `cellguard check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Files or directories to check; `-` reads standard input.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text, env = "CELLGUARD_OUTPUT_FORMAT")]
    pub output_format: OutputFormat,
    /// Rule codes or prefixes to enable (replaces the config's `select`), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub select: Option<Vec<String>>,
    /// Rule codes or prefixes to add to the selection, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub extend_select: Vec<String>,
    /// Rule codes or prefixes to disable, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// Use this config file for every path (no discovery).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Knowledge-base file or directory (repeatable); added to the config's.
    #[arg(long = "kb", value_name = "FILE_OR_DIR")]
    pub kb: Vec<PathBuf>,
    /// Rule profile.
    #[arg(long, value_parser = parse_profile)]
    pub profile: Option<Profile>,
    /// How cells call actions.
    #[arg(long, value_parser = parse_dialect)]
    pub dialect: Option<Dialect>,
    /// How files are split into cells.
    #[arg(long, value_parser = parse_extract)]
    pub extract: Option<ExtractMode>,
    /// File name to use for standard input (config discovery, messages, extraction mode).
    #[arg(long)]
    pub stdin_filename: Option<PathBuf>,
    /// Exit with 0 even when findings remain.
    #[arg(long, short = 'e')]
    pub exit_zero: bool,
    /// Print counts per rule instead of the findings.
    #[arg(long)]
    pub statistics: bool,
    /// Fix-related flags (`--fix`, `--unsafe-fixes`, `--diff`, `--show-fixes`, `--fix-only`,
    /// `--add-noqa`).
    #[command(flatten)]
    pub fixes: super::fixing::FixArgs,
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

fn parse_dialect(s: &str) -> Result<Dialect, String> {
    match s {
        "colony" => Ok(Dialect::Colony),
        "functions" => Ok(Dialect::Functions),
        _ => Err(format!(
            "unknown dialect `{s}` (expected `colony` or `functions`)"
        )),
    }
}

fn parse_extract(s: &str) -> Result<ExtractMode, String> {
    match s {
        "auto" => Ok(ExtractMode::Auto),
        "python" => Ok(ExtractMode::Python),
        "markdown" => Ok(ExtractMode::Markdown),
        "response" => Ok(ExtractMode::Response),
        _ => Err(format!(
            "unknown extraction mode `{s}` (expected auto, python, markdown or response)"
        )),
    }
}

/// Files to check: explicit files as given, directories walked (honouring `.gitignore`) for
/// checkable extensions, sorted for stable output.
fn collect_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_file() {
            files.push(p.clone());
            continue;
        }
        if !p.exists() {
            anyhow::bail!("{}: no such file or directory", p.display());
        }
        let found = std::sync::Mutex::new(Vec::new());
        ignore::WalkBuilder::new(p).build_parallel().run(|| {
            Box::new(|entry| {
                if let Ok(e) = entry {
                    if e.file_type().is_some_and(|t| t.is_file())
                        && ExtractMode::is_checkable_extension(e.path())
                    {
                        found
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(e.into_path());
                    }
                }
                ignore::WalkState::Continue
            })
        });
        files.extend(found.into_inner().unwrap_or_else(|e| e.into_inner()));
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// Runs `cellguard check`.
pub fn run(args: CheckArgs) -> anyhow::Result<ExitStatus> {
    let overrides = Overrides {
        profile: args.profile,
        dialect: args.dialect,
        select: args.select.clone(),
        extend_select: args.extend_select.clone(),
        ignore: args.ignore.clone(),
        knowledge_base: args.kb.clone(),
        extract: args.extract,
    };
    let resolver = match &args.config {
        Some(path) => Resolver::with_config(path, overrides)?,
        None => Resolver::new(overrides),
    };

    let stdin = args.paths.len() == 1 && args.paths[0].as_os_str() == "-";
    let sources: Vec<(PathBuf, SourceFile)> = if stdin {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes)?;
        let name = args
            .stdin_filename
            .clone()
            .unwrap_or_else(|| PathBuf::from("-"));
        vec![(name.clone(), SourceFile::from_bytes(name, &bytes))]
    } else {
        let files = collect_files(&args.paths)?;
        files
            .par_iter()
            .map(|f| -> anyhow::Result<(PathBuf, SourceFile)> {
                let bytes = std::fs::read(f)
                    .map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", f.display()))?;
                Ok((f.clone(), SourceFile::from_bytes(f.clone(), &bytes)))
            })
            .collect::<anyhow::Result<_>>()?
    };

    let mode = args.fixes.mode();
    let outcomes: Vec<fixing::Outcome> = sources
        .into_par_iter()
        .map(|(path, source)| -> anyhow::Result<_> {
            let lookup = if stdin {
                std::env::current_dir()?.join(&path)
            } else {
                path.clone()
            };
            let project = resolver.project_for(&lookup)?;
            let mut outcome = fixing::process(source, &project.settings, &project.kb, &args.fixes);
            let writes = matches!(mode, Mode::Fix | Mode::FixOnly | Mode::AddNoqa);
            if writes && !stdin && outcome.errors.is_empty() {
                if let Err(e) = fixing::write_back(&path, &outcome) {
                    outcome.errors.push(e);
                }
            }
            Ok(outcome)
        })
        .collect::<anyhow::Result<_>>()?;
    finish(&args, stdin, outcomes)
}

/// Prints what the mode calls for and computes the exit status.
fn finish(
    args: &CheckArgs,
    stdin: bool,
    outcomes: Vec<fixing::Outcome>,
) -> anyhow::Result<ExitStatus> {
    let mode = args.fixes.mode();
    let threshold = args.fixes.threshold();
    let mut stderr = std::io::stderr().lock();
    let mut failed = false;
    for o in &outcomes {
        for w in &o.warnings {
            writeln!(stderr, "warning: {w}")?;
        }
        for e in &o.errors {
            writeln!(stderr, "error: {e}")?;
            failed = true;
        }
    }
    let stdout = std::io::stdout();
    match mode {
        Mode::Diff => {
            let mut out = stdout.lock();
            let mut any = false;
            for o in &outcomes {
                if let Some(d) = fixing::unified_diff(o) {
                    write!(out, "{d}")?;
                    any = true;
                }
            }
            writeln!(stderr, "{}", fixing::fixed_line(&outcomes, threshold, true))?;
            return Ok(if failed {
                ExitStatus::Error
            } else if any {
                ExitStatus::Failure
            } else {
                ExitStatus::Success
            });
        }
        Mode::AddNoqa => {
            let added: usize = outcomes.iter().filter_map(|o| o.noqa).map(|n| n.0).sum();
            if stdin {
                if let Some(o) = outcomes.first() {
                    stdout.lock().write_all(o.source.text.as_bytes())?;
                }
            }
            writeln!(
                stderr,
                "Added {added} noqa directive{}.",
                fixing::plural(added)
            )?;
            return Ok(if failed {
                ExitStatus::Error
            } else {
                ExitStatus::Success
            });
        }
        Mode::FixOnly => {
            if stdin {
                if let Some(o) = outcomes.first() {
                    stdout.lock().write_all(o.source.text.as_bytes())?;
                }
            }
            if args.fixes.show_fixes {
                fixing::write_fix_summary(&outcomes, &mut stderr)?;
            }
            writeln!(
                stderr,
                "{}",
                fixing::fixed_line(&outcomes, threshold, false)
            )?;
            return Ok(if failed {
                ExitStatus::Error
            } else {
                ExitStatus::Success
            });
        }
        Mode::Fix | Mode::Report => {}
    }
    if mode == Mode::Fix && stdin {
        if let Some(o) = outcomes.first() {
            stdout.lock().write_all(o.source.text.as_bytes())?;
        }
    }
    let findings = outcomes.iter().any(|o| !o.diagnostics.is_empty());
    let fixed_total = fixing::total_fixed(&outcomes);
    let mut fix_summary = Vec::new();
    if mode == Mode::Fix && args.fixes.show_fixes {
        fixing::write_fix_summary(&outcomes, &mut fix_summary)?;
    }
    let report = Report {
        files: outcomes
            .into_iter()
            .map(|o| (o.source, o.diagnostics))
            .collect(),
    };
    // With stdin and --fix, standard output carries the fixed text.
    let mut out: Box<dyn Write> = if mode == Mode::Fix && stdin {
        Box::new(std::io::stderr())
    } else {
        Box::new(stdout.lock())
    };
    if args.statistics {
        render::statistics(&report, &mut out)?;
    } else {
        render::render(&report, args.output_format, &mut out)?;
        if matches!(
            args.output_format,
            OutputFormat::Text | OutputFormat::Concise
        ) {
            if mode == Mode::Fix && fixed_total > 0 {
                writeln!(
                    out,
                    "Fixed {fixed_total} error{}.",
                    fixing::plural(fixed_total)
                )?;
            }
            let all = report.files.iter().flat_map(|(_, ds)| ds.iter());
            if let Some(hint) = render::fixes::fixable_hint(all, threshold == Applicability::Unsafe)
            {
                writeln!(out, "{hint}")?;
            }
        }
    }
    out.write_all(&fix_summary)?;
    Ok(if failed {
        ExitStatus::Error
    } else if findings && !args.exit_zero {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}
