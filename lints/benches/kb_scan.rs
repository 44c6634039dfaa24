//! In-process timing of the knowledge-base scan, cold and through a warm `ScanCache` (what the
//! language server pays after one file changed). Not a test; run by hand on an idle machine:
//!
//! ```sh
//! python3 bench/kb_scan/gen.py /tmp/kbgen 500
//! KB_SCAN_DIR=/tmp/kbgen cargo bench -p cellguard-lints --bench kb_scan
//! ```
//!
//! The CLI figure (process start included) and the comparison with the peer are in
//! `bench/kb_scan/run.sh`.

use cellguard_lints::kb::{scan, ScanCache};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let Some(dir) = std::env::var_os("KB_SCAN_DIR").map(PathBuf::from) else {
        eprintln!("set KB_SCAN_DIR to a tree made by bench/kb_scan/gen.py");
        return;
    };
    let runs = 15;
    let mut cold = Vec::new();
    let mut actions = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let r = scan::scan_paths(std::slice::from_ref(&dir)).expect("scan");
        cold.push(t.elapsed());
        actions = r.kb.actions.len();
    }
    // Warm: one file rewritten between scans.
    let cache = ScanCache::new();
    let first = cache.scan_paths(std::slice::from_ref(&dir)).expect("scan");
    let victim = first
        .kb
        .actions
        .first()
        .and_then(|a| a.source.as_ref())
        .map(|s| PathBuf::from(&s.path))
        .expect("an action");
    let original = std::fs::read_to_string(&victim).expect("read");
    let mut warm = Vec::new();
    for i in 0..runs {
        std::fs::write(&victim, format!("{original}\n# edit {i}\n")).expect("write");
        let t = Instant::now();
        let r = cache.scan_paths(std::slice::from_ref(&dir)).expect("scan");
        warm.push(t.elapsed());
        assert_eq!(r.files_parsed_now, 1);
    }
    std::fs::write(&victim, original).expect("restore");
    println!(
        "{} files, {actions} actions: cold scan median {:.1} ms, warm rescan after one edit median {:.1} ms ({runs} runs each)",
        first.files_scanned,
        median(cold).as_secs_f64() * 1e3,
        median(warm).as_secs_f64() * 1e3,
    );
}
