//! Times the server's lint of one document after single-character edits, in process (no
//! JSON-RPC): `cargo run --release -p cellguard-server --example lint_timing -- FILE [N]`.
//! Prints the median and 95th percentile of N re-lints (default 200), each after inserting one
//! character in the middle of the file, with the incremental re-parse the server uses, next to
//! the engine alone (`lint::check_file`, a fresh parse) on the same texts.

use cellguard_lints::config::{Overrides, Resolver};
use cellguard_lints::source::PositionEncoding;
use cellguard_server::analysis::{self, Snapshot};
use cellguard_server::documents::{Document, Language};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tower_lsp_server::ls_types as lsp;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().expect("FILE"));
    let n: usize = args.next().map_or(200, |s| s.parse().expect("N"));
    let text = std::fs::read_to_string(&path).expect("read");
    let path = std::path::absolute(&path).unwrap();
    let uri = lsp::Uri::from_file_path(&path).unwrap();
    let mut doc = Document::new(uri, path.clone(), Language::Python, 1, 1, &text);
    let resolver = Arc::new(Resolver::new(Overrides::default()));
    let mid = doc.rope.len_lines() as u32 / 2;
    let mut times = Vec::new();
    let mut engine = Vec::new();
    let project = resolver.project_for(&path).expect("project");
    for v in 0..=n {
        if v > 0 {
            let change = lsp::TextDocumentContentChangeEvent {
                range: Some(lsp::Range::new(
                    lsp::Position::new(mid, 0),
                    lsp::Position::new(mid, 0),
                )),
                range_length: None,
                text: "#".into(),
            };
            doc.apply_changes(v as i32 + 1, vec![change], PositionEncoding::Utf16)
                .unwrap();
        }
        let snap = Snapshot {
            epoch: 1,
            version: doc.version,
            generation: 0,
            rope: doc.rope.clone(),
            path: path.clone(),
            language: Language::Python,
            tree: doc.tree.clone(),
            cells: doc.cells.clone(),
            rules: doc.rules.clone(),
            resolver: resolver.clone(),
            encoding: PositionEncoding::Utf16,
            lint_enabled: true,
        };
        // The engine alone on the same text (fresh parse, as `cellguard check` does).
        let file = cellguard_lints::SourceFile::new(path.clone(), doc.rope.to_string());
        let t = Instant::now();
        let _ = cellguard_lints::lint::check_file(&file, &project.settings, &project.kb);
        if v > 0 {
            engine.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        let t = Instant::now();
        let r = analysis::run(snap);
        let dt = t.elapsed().as_secs_f64() * 1000.0;
        doc.tree = r.whole_tree.clone();
        doc.cells = r.cell_cache.clone();
        doc.rules = r.rule_cache.clone();
        if v > 0 {
            times.push(dt);
        }
        if v == n {
            eprintln!("{} diagnostics", r.diagnostics.len());
        }
    }
    for (name, t) in [("server lint", &mut times), ("check_file ", &mut engine)] {
        t.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let p = |q: f64| t[((t.len() - 1) as f64 * q) as usize];
        println!(
            "{name}: {} runs, p50 {:.3} ms, p95 {:.3} ms, min {:.3} ms",
            t.len(),
            p(0.5),
            p(0.95),
            t[0]
        );
    }
}
