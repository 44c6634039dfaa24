//! `cellguard`: lint, language server and trace replayer for LLM-written agent code cells.
//!
//! Exit codes: 0 clean, 1 findings, 2 usage, configuration or internal error.

mod commands;
mod render;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match commands::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => 2,
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match commands::run(cli) {
        Ok(status) => ExitCode::from(status as u8),
        Err(e) => {
            eprintln!("cellguard: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
