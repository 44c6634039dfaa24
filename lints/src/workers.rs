//! rayon's global worker pool, built with stacks large enough for the rules' tree walks.
//!
//! The rule families run through `rayon::join` ([`crate::rules::check_cell_whole`]) and the
//! knowledge-base scan through parallel iterators; a deeply nested cell recurses deep in both.
//! rayon's default 2 MiB worker stacks overflow on such cells in a debug build (a CI run of
//! `lints/tests/sandbox_robustness.rs` aborted with "thread '<unknown>' has overflowed its
//! stack"), so every entry point that runs work on the pool calls [`start_worker_pool`] first:
//! the binary, the language server and the tests then all get the same pool without setting
//! it up themselves.

use std::sync::Once;

/// Stack size of each worker thread, in bytes (64 MiB).
pub const WORKER_STACK_BYTES: usize = 64 << 20;

/// Builds rayon's global pool with [`WORKER_STACK_BYTES`] stacks, once per process; later calls
/// cost one atomic load. The pool is built lazily, so a command that never runs parallel work
/// (a small `replay`) never starts its threads.
///
/// Errors: none reported. If something else built the global pool first (a host program
/// embedding this crate), that pool is kept as it is.
pub fn start_worker_pool() {
    static START: Once = Once::new();
    START.call_once(|| {
        let _ = rayon::ThreadPoolBuilder::new()
            .stack_size(WORKER_STACK_BYTES)
            .build_global();
    });
}
