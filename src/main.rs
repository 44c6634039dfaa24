//! `cellguard`: lint, language server and trace replayer for LLM-written agent code cells.
//!
//! Exit codes: 0 clean, 1 findings, 2 usage, configuration or internal error.

mod commands;
mod render;

use clap::Parser;
use std::process::ExitCode;

/// mimalloc instead of the system allocator: the replay of long traces allocates a few small
/// strings per record, and glibc's malloc/free were about a tenth of its time.
///
/// Built with its `no_thp` feature: mimalloc does not ask the kernel for transparent huge pages
/// (`madvise(MADV_HUGEPAGE)`). With them, every page of memory it gives back and takes again is a
/// 2 MiB page the kernel zeroes on the first touch; the language server, which frees most of
/// what a lint allocated before the next keystroke's lint, spent 0.7-1.2 ms of system time per
/// edit of a 1,000-line cell in that zeroing, and kept twice the resident memory (bench/lsp_latency.py
/// edits: 117 -> 63 MB peak RSS).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
        // A reader that closed the pipe early (`cellguard kb show | head`) is not an error:
        // exit quietly, as `cat` does.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
