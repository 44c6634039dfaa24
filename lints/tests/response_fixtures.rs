//! Raw-response extraction (colony-reference §2.9 and §7.1, smolagents and CodeAct replies) on
//! the inputs in `fixtures/response/`. Each `NAME.EXT` has a hand-checked `NAME.expected.json`
//! with the cells and extraction diagnostics of both readings: `strict` (cellguard's default)
//! and `colony` (exactly what Colony's extractor runs). In the strict reading, a cell marked
//! `colony_reading` is the code Colony would run where it reads the reply differently (checked by
//! the security rules only). `CELLGUARD_BLESS=1` rewrites the expected
//! files from the current output, for review with `git diff`.

use cellguard_lints::extract::{extract_with, CellOrigin, ExtractMode, ExtractOptions, Extraction};
use cellguard_lints::response::decode_json_string;
use cellguard_lints::SourceFile;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/response")
}

/// Every segment of every cell maps back to the file text it claims to come from (up to
/// CPython's line ends: a lone `\r` of the file is `\n` in the cell, byte for byte).
fn assert_maps_back(file: &SourceFile, ex: &Extraction, name: &str) {
    let lines = |s: &str| s.replace('\r', "\n");
    for cell in &ex.cells {
        for s in &cell.map.segments {
            let cell_part = &cell.text[s.cell_start..s.cell_start + s.len];
            let file_part = &file.text[s.file_start..s.file_start + s.file_len];
            if s.len == s.file_len {
                assert_eq!(
                    lines(cell_part),
                    lines(file_part),
                    "{name}: verbatim segment {s:?}"
                );
            } else {
                let (decoded, _) = decode_json_string(file_part, s.file_start);
                assert_eq!(
                    lines(cell_part),
                    lines(&decoded),
                    "{name}: escape segment {s:?}"
                );
            }
        }
    }
}

fn render(file: &SourceFile, ex: &Extraction) -> Value {
    let cells: Vec<Value> = ex
        .cells
        .iter()
        .map(|c| {
            let loc = file.location(c.map.to_file(0));
            let mut v = json!({"text": c.text, "starts_at": [loc.row, loc.column]});
            if c.origin == CellOrigin::ColonyReading {
                // The code Colony runs where it reads the reply differently (security rules only).
                v["colony_reading"] = json!(true);
            }
            v
        })
        .collect();
    let diagnostics: Vec<Value> = ex
        .diagnostics
        .iter()
        .map(|d| {
            let (s, e) = (file.location(d.range.start), file.location(d.range.end));
            json!({
                "code": d.rule.code,
                "range": [s.row, s.column, e.row, e.column],
                "message": d.message,
            })
        })
        .collect();
    json!({"cells": cells, "multi_cell": ex.multi_cell, "diagnostics": diagnostics})
}

#[test]
fn response_fixtures_match_expected() {
    let bless = std::env::var_os("CELLGUARD_BLESS").is_some();
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            !name.ends_with(".expected.json") && name != "README.md"
        })
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 30, "fixtures missing: {}", inputs.len());
    let mut failures = Vec::new();
    for input in &inputs {
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(input).unwrap();
        let file = SourceFile::from_bytes(input, &bytes);
        let mut got = serde_json::Map::new();
        for (key, colony_exact) in [("strict", false), ("colony", true)] {
            let ex = extract_with(
                &file,
                ExtractMode::Response,
                &ExtractOptions { colony_exact },
            );
            assert_maps_back(&file, &ex, &name);
            for d in &ex.diagnostics {
                assert!(d.range.end <= file.text.len(), "{name}: {d:?}");
                assert!(file.text.is_char_boundary(d.range.start), "{name}: {d:?}");
                assert!(file.text.is_char_boundary(d.range.end), "{name}: {d:?}");
            }
            got.insert(key.to_string(), render(&file, &ex));
        }
        let got = Value::Object(got);
        let stem = name.rsplit_once('.').map(|(s, _)| s).unwrap_or(&name);
        let expected_path = fixtures().join(format!("{stem}.expected.json"));
        if bless {
            std::fs::write(
                &expected_path,
                serde_json::to_string_pretty(&got).unwrap() + "\n",
            )
            .unwrap();
            continue;
        }
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(&expected_path)
                .unwrap_or_else(|_| panic!("missing {}", expected_path.display())),
        )
        .unwrap();
        if expected != got {
            failures.push(format!(
                "{name}:\n expected {}\n      got {}",
                serde_json::to_string_pretty(&expected).unwrap(),
                serde_json::to_string_pretty(&got).unwrap()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
