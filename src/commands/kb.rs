//! `cellguard kb scan|import|show|export`: build, merge, inspect and export the knowledge base.
//!
//! - `scan PATHS`: the actions defined in Python sources (`@action_executor` methods), as
//!   `cellguard-kb/1` JSON.
//! - `import SOURCES`: merge KB files, OpenAI/MCP tool definitions, recorded Colony prompts and
//!   Python sources (later sources win; conflicts are warnings) into `cellguard-kb/1` JSON.
//! - `show [KEY]`: the project's KB (config `knowledge-base` plus `--kb`), or one action resolved
//!   as Colony's dispatcher resolves keys.
//! - `export --format kb|json-schema`: the project's KB as `cellguard-kb/1` or as a JSON Schema
//!   for constrained decoding.
//!
//! Warnings go to standard error as `warning: path:line:col: message`. Exit codes: 0 done,
//! 1 (`show KEY`) the key does not resolve to an action, 2 usage, configuration or input error.

use super::ExitStatus;
use cellguard_lints::config::{self, Dialect, Overrides, Project};
use cellguard_lints::kb::{
    self, export, KbFormat, KbWarning, KnowledgeBase, Resolution, ScanResult,
};
use std::io::{Read, Write};
use std::path::PathBuf;

/// Arguments of `cellguard kb`.
#[derive(Debug, clap::Args)]
pub struct KbArgs {
    #[command(subcommand)]
    pub command: KbCommand,
}

/// `cellguard kb` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum KbCommand {
    /// Scan Python sources for `@action_executor` methods and print the KB they define.
    Scan(ScanArgs),
    /// Merge KB sources (cellguard-kb, tool definitions, recorded prompts, Python) into one KB.
    Import(ImportArgs),
    /// Show the project's knowledge base, or one action (resolved like Colony's dispatcher).
    Show(ShowArgs),
    /// Export the project's knowledge base as cellguard-kb JSON or as a JSON Schema.
    Export(ExportArgs),
}

/// `kb scan` arguments.
#[derive(Debug, clap::Args)]
pub struct ScanArgs {
    /// Python files or directories (walked recursively, honouring `.gitignore`).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// What to print: the KB (`kb`) or the JSON Schema of valid calls (`json-schema`).
    #[arg(long, value_enum, default_value_t = ExportFormat::Kb)]
    pub format: ExportFormat,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Do not print warnings and the summary line.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Input format of `kb import`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportFormat {
    /// Detect from the file: `.py` and directories are scanned, JSON is a KB or tool
    /// definitions, text with `## Available Actions` is a prompt.
    Auto,
    /// cellguard-kb/1 or colony-kb/1 JSON.
    Kb,
    /// OpenAI / MCP / Anthropic tool definitions (JSON or JSON Lines).
    Tools,
    /// A recorded Colony prompt (or JSON holding one).
    Prompt,
    /// Python sources.
    Python,
}

/// `kb import` arguments.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Sources, merged in order: a later source wins on equal keys. `-` reads standard input.
    #[arg(required = true)]
    pub sources: Vec<PathBuf>,
    /// Format of the sources (default: detected per source).
    #[arg(long, value_enum, default_value_t = ImportFormat::Auto)]
    pub format: ImportFormat,
    /// Output format.
    #[arg(long = "to", value_enum, default_value_t = ExportFormat::Kb)]
    pub to: ExportFormat,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Do not print warnings.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Output format of `kb show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormat {
    /// Human-readable.
    Text,
    /// A JSON list of `{key, short_key, params, summary, source}`.
    Json,
}

/// Where the project KB comes from (`show`, `export`).
#[derive(Debug, clap::Args)]
pub struct ProjectArgs {
    /// Knowledge-base file or directory (repeatable); added to the config's `knowledge-base`.
    #[arg(long = "kb", value_name = "FILE_OR_DIR")]
    pub kb: Vec<PathBuf>,
    /// Use this config file (default: discovered from the working directory).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Dialect (the colony dialect knows Colony's pseudo keys).
    #[arg(long, value_parser = super::one_of(super::names(["colony", "functions"]), parse_dialect))]
    pub dialect: Option<Dialect>,
}

/// `kb show` arguments.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// An action key, full or short, resolved as Colony's dispatcher resolves it.
    pub key: Option<String>,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ShowFormat::Text)]
    pub output_format: ShowFormat,
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// cellguard-kb/1 JSON.
    Kb,
    /// JSON Schema of valid `{"action_key": ..., "params": {...}}` objects.
    JsonSchema,
}

/// `kb export` arguments.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Kb)]
    pub format: ExportFormat,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
}

fn parse_dialect(s: &str) -> Option<Dialect> {
    match s {
        "colony" => Some(Dialect::Colony),
        "functions" => Some(Dialect::Functions),
        _ => None,
    }
}

/// Runs `cellguard kb ...`.
pub fn run(args: KbArgs) -> anyhow::Result<ExitStatus> {
    match args.command {
        KbCommand::Scan(a) => scan(a),
        KbCommand::Import(a) => import(a),
        KbCommand::Show(a) => show(a),
        KbCommand::Export(a) => export_cmd(a),
    }
}

fn print_warnings(warnings: &[KbWarning]) {
    let mut err = std::io::stderr().lock();
    for w in warnings {
        let _ = writeln!(err, "warning: {w}");
    }
}

/// Writes `kb` in `format` (pretty JSON plus a newline) to `output` or standard output.
fn write_kb(
    kb: &KnowledgeBase,
    format: ExportFormat,
    output: Option<&PathBuf>,
) -> anyhow::Result<()> {
    let mut buf = Vec::new();
    match format {
        ExportFormat::Kb => export::write_cellguard_kb(kb, &mut buf)?,
        ExportFormat::JsonSchema => {
            serde_json::to_writer_pretty(&mut buf, &export::to_json_schema(kb))?
        }
    }
    buf.push(b'\n');
    match output {
        Some(p) => std::fs::write(p, buf)
            .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", p.display()))?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&buf)?;
            out.flush()?;
        }
    }
    Ok(())
}

fn scan(args: ScanArgs) -> anyhow::Result<ExitStatus> {
    let result: ScanResult = kb::scan::scan_paths(&args.paths)?;
    write_kb(&result.kb, args.format, args.output.as_ref())?;
    if !args.quiet {
        print_warnings(&result.warnings);
        eprintln!(
            "scanned {} Python file{} ({} parsed): {} action{} in {} group{}",
            result.files_scanned,
            plural(result.files_scanned),
            result.files_parsed,
            result.kb.actions.len(),
            plural(result.kb.actions.len()),
            result.kb.groups.len(),
            plural(result.kb.groups.len()),
        );
    }
    Ok(ExitStatus::Success)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn import(args: ImportArgs) -> anyhow::Result<ExitStatus> {
    let mut merged = KnowledgeBase::new();
    let mut warnings = Vec::new();
    let mut origin: std::collections::HashMap<String, String> = Default::default();
    let mut stdin_used = false;
    for src in &args.sources {
        let name = src.display().to_string();
        let part = if src.as_os_str() == "-" {
            if stdin_used {
                anyhow::bail!("`-` (standard input) given more than once");
            }
            stdin_used = true;
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            load_text(&text, "<stdin>", args.format)?
        } else {
            match args.format {
                ImportFormat::Auto => {
                    let l = kb::load_all_report(std::slice::from_ref(src), None)?;
                    warnings.extend(l.warnings);
                    l.kb
                }
                ImportFormat::Python => {
                    let r = kb::scan::scan_paths(std::slice::from_ref(src))?;
                    warnings.extend(r.warnings);
                    r.kb
                }
                f => {
                    let bytes = std::fs::read(src)
                        .map_err(|e| anyhow::anyhow!("{name}: cannot read: {e}"))?;
                    load_text(&String::from_utf8_lossy(&bytes), &name, f)?
                }
            }
        };
        let keys: Vec<String> = part.actions.iter().map(|a| a.key.clone()).collect();
        for c in merged.merge_reporting(part) {
            let earlier = origin.get(&c.key).cloned().unwrap_or_default();
            warnings.push(KbWarning {
                path: name.clone(),
                line: None,
                column: None,
                message: format!(
                    "action `{}` is defined differently by {earlier} and {name} ({}); {name} wins",
                    c.key,
                    c.differences.join("; ")
                ),
            });
        }
        for k in keys {
            origin.insert(k, name.clone());
        }
    }
    write_kb(&merged, args.to, args.output.as_ref())?;
    if !args.quiet {
        print_warnings(&warnings);
    }
    Ok(ExitStatus::Success)
}

fn load_text(text: &str, name: &str, format: ImportFormat) -> anyhow::Result<KnowledgeBase> {
    let f = match format {
        ImportFormat::Auto => return Ok(kb::load_str(text, name)?),
        ImportFormat::Kb => KbFormat::CellguardKb,
        ImportFormat::Tools => KbFormat::Tools,
        ImportFormat::Prompt => KbFormat::Prompt,
        ImportFormat::Python => KbFormat::Python,
    };
    Ok(kb::load_str_as(text, name, f)?)
}

/// The project KB: config (given or discovered from the working directory) plus `--kb`.
fn project_kb(p: &ProjectArgs) -> anyhow::Result<KnowledgeBase> {
    let overrides = Overrides {
        knowledge_base: p.kb.clone(),
        dialect: p.dialect,
        ..Default::default()
    };
    let loaded = match &p.config {
        Some(path) => Some(config::load_file(path)?.ok_or_else(|| {
            anyhow::anyhow!(
                "{}: no `[tool.cellguard]` table in this file",
                path.display()
            )
        })?),
        None => config::discover(&std::env::current_dir()?)?,
    };
    let project = Project::load(loaded, &overrides)?;
    if project.kb_paths.is_empty() {
        anyhow::bail!(
            "no knowledge base: give `--kb FILE_OR_DIR` or set `knowledge-base` in cellguard.toml"
        );
    }
    let mut kb = (*project.kb).clone();
    if project.settings.dialect == Dialect::Colony {
        kb.add_colony_pseudo_keys();
    }
    Ok(kb)
}

fn export_cmd(args: ExportArgs) -> anyhow::Result<ExitStatus> {
    let kb = project_kb(&args.project)?;
    write_kb(&kb, args.format, args.output.as_ref())?;
    Ok(ExitStatus::Success)
}

fn show(args: ShowArgs) -> anyhow::Result<ExitStatus> {
    let kb = project_kb(&args.project)?;
    let mut out = std::io::stdout().lock();
    let Some(raw) = &args.key else {
        match args.output_format {
            ShowFormat::Json => {
                let list: Vec<_> = kb.actions.iter().map(export::show_json).collect();
                writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
            }
            ShowFormat::Text => print_all(&kb, &mut out)?,
        }
        return Ok(ExitStatus::Success);
    };
    let resolution = kb.resolve(raw);
    let matched: Vec<usize> = match &resolution {
        Resolution::Ambiguous(v) => v.clone(),
        r => r.action().into_iter().collect(),
    };
    if args.output_format == ShowFormat::Json {
        let list: Vec<_> = matched
            .iter()
            .map(|&i| export::show_json(&kb.actions[i]))
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
        // The list says what matched; why nothing (or more than one action) did goes to
        // standard error.
        if matched.len() != 1 {
            let mut why = Vec::new();
            explain_unresolved(&kb, raw, &resolution, &mut why)?;
            eprint!("{}", String::from_utf8_lossy(&why));
        }
        return Ok(if matched.is_empty() || matched.len() > 1 {
            ExitStatus::Failure
        } else {
            ExitStatus::Success
        });
    }
    match resolution {
        Resolution::Pseudo | Resolution::Unknown => {
            explain_unresolved(&kb, raw, &resolution, &mut out)?;
            Ok(ExitStatus::Failure)
        }
        Resolution::Ambiguous(v) => {
            explain_unresolved(&kb, raw, &Resolution::Ambiguous(v.clone()), &mut out)?;
            writeln!(out)?;
            for i in v {
                print_action(&kb, &kb.actions[i], None, &mut out)?;
                writeln!(out)?;
            }
            Ok(ExitStatus::Failure)
        }
        r => {
            let i = r.action().unwrap_or_default();
            let how = match r {
                Resolution::Exact(_) => None,
                Resolution::Dynamic(_) => {
                    Some("the middle segment is a per-process random segment (wildcard)")
                }
                Resolution::Suffix(_) => Some("unique suffix match"),
                Resolution::PrefixStrip(_) => Some("leading segments dropped"),
                _ => None,
            }
            .map(|h| format!("resolved from `{raw}`: {h}"));
            print_action(&kb, &kb.actions[i], how.as_deref(), &mut out)?;
            Ok(ExitStatus::Success)
        }
    }
}

/// Why `raw` names no single action: a pseudo key, unknown (with suggestions), or ambiguous.
fn explain_unresolved(
    kb: &KnowledgeBase,
    raw: &str,
    resolution: &Resolution,
    out: &mut impl Write,
) -> std::io::Result<()> {
    match resolution {
        Resolution::Pseudo => writeln!(out, "`{raw}` is a pseudo key: Colony's prompt lists it under `## Available Actions`, but it is not a callable action (APIKnowledgeBase rejects it)."),
        Resolution::Ambiguous(v) => writeln!(
            out,
            "`{raw}` is ambiguous: {} actions end in `.{raw}` (the dispatcher resolves none of them):",
            v.len()
        ),
        _ => {
            write!(out, "`{raw}` does not resolve to any known action.")?;
            let s = kb.suggest(raw, 3);
            if !s.is_empty() {
                let names: Vec<String> = s
                    .iter()
                    .map(|s| format!("`{}`", kb.actions[s.action].key))
                    .collect();
                write!(out, " Did you mean {}?", names.join(", "))?;
            }
            writeln!(out)
        }
    }
}

fn print_all(kb: &KnowledgeBase, out: &mut impl Write) -> std::io::Result<()> {
    let mut order: Vec<Option<String>> = Vec::new();
    for a in &kb.actions {
        if !order.contains(&a.group) {
            order.push(a.group.clone());
        }
    }
    for g in &order {
        let actions: Vec<_> = kb.actions.iter().filter(|a| &a.group == g).collect();
        match g {
            Some(key) => {
                let meta = kb.group(key);
                let mut tags = meta.map(|m| m.tags.clone()).unwrap_or_default();
                if meta.is_some_and(|m| m.dynamic) {
                    tags.push("dynamic key segment".into());
                }
                let tags = if tags.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", tags.join(", "))
                };
                writeln!(
                    out,
                    "{key} ({} action{}){tags}",
                    actions.len(),
                    plural(actions.len())
                )?;
            }
            None => writeln!(out, "(no group) ({} actions)", actions.len())?,
        }
        for a in actions {
            let mut flags = Vec::new();
            if a.exclude_from_planning {
                flags.push("not in prompt");
            }
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!("  [{}]", flags.join(", "))
            };
            writeln!(out, "  {}{flags}", a.signature())?;
            if let Some(s) = &a.summary {
                writeln!(out, "      {}", one_line(s, 100))?;
            }
        }
        writeln!(out)?;
    }
    if !kb.pseudo_keys.is_empty() {
        writeln!(
            out,
            "pseudo keys (shown in Colony prompts, not callable): {}",
            kb.pseudo_keys.join(", ")
        )?;
    }
    writeln!(
        out,
        "{} action{} in {} group{}",
        kb.actions.len(),
        plural(kb.actions.len()),
        order.len(),
        plural(order.len())
    )
}

fn one_line(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn print_action(
    kb: &KnowledgeBase,
    a: &kb::Action,
    how: Option<&str>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    writeln!(out, "{}", a.key)?;
    if let Some(h) = how {
        writeln!(out, "  {h}")?;
    }
    if let Some(g) = &a.group {
        let tags = kb
            .group(g)
            .map(|m| m.tags.clone())
            .filter(|t| !t.is_empty())
            .map(|t| format!(" [{}]", t.join(", ")))
            .unwrap_or_default();
        writeln!(out, "  group: {g}{tags}")?;
    }
    let mut flags = Vec::new();
    if a.is_async {
        flags.push("async".to_string());
    }
    if a.planning {
        flags.push("planning mode".into());
    }
    if a.exclude_from_planning {
        flags.push("excluded from planning (dispatchable, not shown in the prompt)".into());
    }
    if a.dynamic_segment {
        flags.push("per-process key segment (written `*`)".into());
    }
    if a.interruptible == Some(true) {
        flags.push("interruptible".into());
    }
    if a.emits_lifecycle == Some(false) {
        flags.push("no lifecycle events".into());
    }
    if !flags.is_empty() {
        writeln!(out, "  {}", flags.join(", "))?;
    }
    if let Some(m) = &a.method {
        if *m != a.short_key {
            writeln!(out, "  method: {m}")?;
        }
    }
    if let Some(s) = &a.summary {
        writeln!(out, "  summary: {}", one_line(s, 200))?;
    }
    if a.params.is_empty() && !a.accepts_extra_kwargs {
        writeln!(out, "  parameters: none")?;
    } else {
        writeln!(out, "  parameters:")?;
        for p in &a.params {
            let mut line = format!("    {}", p.name);
            if let Some(t) = &p.ty {
                line.push_str(": ");
                line.push_str(t);
                if p.approximate_type {
                    line.push_str(" (approximate)");
                }
            }
            if let Some(d) = &p.default {
                line.push_str(" = ");
                line.push_str(d);
            }
            let mut notes = Vec::new();
            if p.required {
                notes.push("required".to_string());
            }
            if p.keyword_only {
                notes.push("keyword-only".into());
            }
            if let Some(v) = &p.allowed {
                notes.push(format!(
                    "one of {}",
                    v.iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            if !notes.is_empty() {
                line.push_str(&format!("  ({})", notes.join("; ")));
            }
            writeln!(out, "{line}")?;
            if let Some(d) = &p.description {
                writeln!(out, "        {}", one_line(d, 100))?;
            }
        }
        if a.accepts_extra_kwargs {
            writeln!(out, "    **kwargs (extra parameters are passed through)")?;
        }
    }
    if let Some(r) = &a.returns {
        writeln!(out, "  returns: {r}")?;
    }
    if let Some(s) = &a.source {
        writeln!(out, "  defined at {}:{}:{}", s.path, s.line, s.column)?;
    }
    Ok(())
}
