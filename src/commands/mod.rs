//! Subcommands. Each returns the process exit status or an error (exit code 2).

pub mod check;
pub mod rule;

use clap::{Parser, Subcommand};

/// Exit status of a completed run (errors exit with 2 through `main`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Nothing found.
    Success = 0,
    /// Findings (or blocked calls) remain.
    Failure = 1,
}

/// Linter, language server and trace replayer for LLM-written agent code cells.
#[derive(Debug, Parser)]
#[command(name = "cellguard", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check code cells (.py, Markdown fences, raw LLM responses) against the rules.
    Check(check::CheckArgs),
    /// Print the documentation of a rule (or of all rules).
    Rule(rule::RuleArgs),
    /// Run the language server on stdio.
    Server,
}

/// Dispatches a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Rule(args) => rule::run(args),
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
