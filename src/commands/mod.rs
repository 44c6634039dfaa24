//! Subcommands. Each returns the process exit status or an error (exit code 2).

pub mod check;
pub mod fixing;
pub mod kb;
pub mod replay;
pub mod rule;

use clap::{Parser, Subcommand};

/// Exit status of a completed run (errors exit with 2 through `main`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Nothing found.
    Success = 0,
    /// Findings (or blocked calls) remain.
    Failure = 1,
    /// A usage, configuration, I/O or internal error happened (other results were still
    /// reported).
    Error = 2,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    /// Always emit ANSI colours.
    Always,
    /// Never emit colours.
    Never,
}

/// The value parser of an option with a fixed set of values: `--help` and the error for any
/// other value list `values` (aliases accepted, not listed), and each is read by `parse`, the
/// library's own parser of those names.
pub(crate) fn one_of<T: Clone + Send + Sync + 'static>(
    values: impl IntoIterator<Item = clap::builder::PossibleValue>,
    parse: fn(&str) -> Option<T>,
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(values).try_map(move |s: String| {
        parse(&s).ok_or_else(|| format!("internal: `{s}` is listed but not read"))
    })
}

/// Possible values from names (no aliases).
pub(crate) fn names(
    names: impl IntoIterator<Item = &'static str>,
) -> impl Iterator<Item = clap::builder::PossibleValue> {
    names.into_iter().map(clap::builder::PossibleValue::new)
}

/// Linter, language server and trace replayer for LLM-written agent code cells.
#[derive(Debug, Parser)]
#[command(name = "cellguard", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// When to use colours in human-readable output.
    #[arg(long, value_enum, global = true, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check code cells (.py, Markdown fences, raw LLM responses) against the rules.
    Check(check::CheckArgs),
    /// Replay recorded agent traces through simulated runtime guardrails.
    Replay(replay::ReplayArgs),
    /// Print the documentation of a rule (or of all rules).
    Rule(rule::RuleArgs),
    /// Build, merge, inspect and export the knowledge base of actions.
    Kb(kb::KbArgs),
    /// Run the language server on stdio.
    Server,
}

/// Dispatches a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    match cli.command {
        Command::Check(args) => check::run(args, cli.color),
        Command::Replay(args) => replay::run(args, cli.color),
        Command::Rule(args) => rule::run(args),
        Command::Kb(args) => kb::run(args),
        Command::Server => {
            // LSP: exit code 0 after `shutdown` then `exit`, 1 when the client exits without
            // `shutdown`.
            let clean = cellguard_server::run_stdio().map_err(anyhow::Error::msg)?;
            Ok(if clean {
                ExitStatus::Success
            } else {
                ExitStatus::Failure
            })
        }
    }
}
