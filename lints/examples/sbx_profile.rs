//! Developer tool: times the SBX analysis against the tree-sitter parse on Python files, and
//! checks that the gated analysis reports what the ungated one does.
//!
//! ```sh
//! cargo run --release -p cellguard-lints --example sbx_profile -- [--ungated] [--diff] PATH...
//! ```
//!
//! Prints, per path given, the parse time, the SBX time, their ratio, the number of findings,
//! and (with `--diff`) any file where gated and ungated findings differ. Not a benchmark of
//! record (see `bench/`); a quick look while working on `rules/sandbox`.

use cellguard_lints::config::{ConfigFile, Overrides, Settings};
use cellguard_lints::parse;
use cellguard_lints::rules::sandbox::analyse;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let Ok(rd) = std::fs::read_dir(p) else { return };
        let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for e in entries {
            if !e.ends_with("site-packages") {
                files(&e, out);
            }
        }
    } else if p.extension().is_some_and(|x| x == "py") {
        out.push(p.to_path_buf());
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ungated = args.iter().any(|a| a == "--ungated");
    let diff = args.iter().any(|a| a == "--diff");
    let file: ConfigFile = toml::from_str("").unwrap_or_default();
    let settings = match Settings::resolve(&file, None, &Overrides::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("settings: {e}");
            std::process::exit(2);
        }
    };
    for root in args.iter().filter(|a| !a.starts_with("--")) {
        let mut fs = Vec::new();
        files(Path::new(root), &mut fs);
        let (mut t_parse, mut t_sbx) = (Duration::ZERO, Duration::ZERO);
        let mut findings = 0;
        let mut bytes = 0;
        for f in &fs {
            let Ok(raw) = std::fs::read(f) else { continue };
            let src = String::from_utf8_lossy(&raw).into_owned();
            bytes += src.len();
            let t = Instant::now();
            let tree = parse::parse(&src, None);
            t_parse += t.elapsed();
            let t = Instant::now();
            let got = analyse(&tree, &src, &settings, !ungated);
            t_sbx += t.elapsed();
            findings += got.len();
            if diff {
                let key = |v: &[cellguard_lints::rules::sandbox::check::Finding]| {
                    v.iter()
                        .map(|x| format!("{} {:?} {}", x.rule.code, x.range, x.message))
                        .collect::<Vec<_>>()
                };
                let other = analyse(&tree, &src, &settings, ungated);
                if key(&got) != key(&other) {
                    println!("DIFF {}", f.display());
                }
            }
        }
        println!(
            "{root}: {} files, {} kB, parse {:.1} ms, sbx {:.1} ms ({:.2}x parse), {findings} findings",
            fs.len(),
            bytes / 1000,
            t_parse.as_secs_f64() * 1e3,
            t_sbx.as_secs_f64() * 1e3,
            t_sbx.as_secs_f64() / t_parse.as_secs_f64().max(1e-9),
        );
    }
}
