//! `cellguard check [PATHS|-]`: lint cells and report diagnostics.

use super::ExitStatus;
use crate::render::{self, OutputFormat, Report};
use cellguard_lints::config::{Dialect, Overrides, Profile, Resolver};
use cellguard_lints::extract::ExtractMode;
use cellguard_lints::{lint, SourceFile};
use rayon::prelude::*;
use std::io::Read;
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

    let results: Vec<_> = sources
        .into_par_iter()
        .map(|(path, source)| -> anyhow::Result<_> {
            let lookup = if stdin {
                std::env::current_dir()?.join(&path)
            } else {
                path.clone()
            };
            let project = resolver.project_for(&lookup)?;
            let diagnostics = lint::check_file(&source, &project.settings, &project.kb);
            Ok((source, diagnostics))
        })
        .collect::<anyhow::Result<_>>()?;

    let report = Report { files: results };
    let mut out = std::io::stdout().lock();
    if args.statistics {
        render::statistics(&report, &mut out)?;
    } else {
        render::render(&report, args.output_format, &mut out)?;
    }
    let findings = report.files.iter().any(|(_, d)| !d.is_empty());
    Ok(if findings && !args.exit_zero {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}
