//! `--output-format sarif`: SARIF 2.1.0 (OASIS), as read by GitHub code scanning and IDEs.
//!
//! One run; `tool.driver.rules` lists every rule with its summary, documentation and default
//! level; each result has `ruleId`, `ruleIndex`, `level`, `message.text`, one physical location
//! with a region, and `fixes[].artifactChanges[].replacements[]` when a fix exists. Columns are
//! Unicode code points (`columnKind: unicodeCodePoints`, SARIF's default being UTF-16), and
//! `endColumn` is exclusive. Levels: error → `error`, warning → `warning`, info and hint →
//! `note`. Artifact URIs are the display paths, percent-encoded (relative to the working
//! directory, or `file://` URIs for absolute paths).

use super::{display_path, Report};
use cellguard_lints::source::SourceLocation;
use cellguard_lints::{rules, Severity, SourceFile, TextRange};
use serde_json::{json, Value};
use std::io::Write;

/// SARIF `level` of a severity.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info | Severity::Hint => "note",
    }
}

/// Percent-encodes a path into a URI reference (absolute paths become `file://` URIs).
pub fn path_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if path.starts_with('/') {
        format!("file://{out}")
    } else {
        out
    }
}

fn region(file: &SourceFile, range: TextRange) -> Value {
    let s: SourceLocation = file.location(range.start);
    let e: SourceLocation = file.location(range.end);
    json!({
        "startLine": s.row,
        "startColumn": s.column,
        "endLine": e.row,
        "endColumn": e.column,
    })
}

/// The whole SARIF log as a JSON value.
pub fn log(report: &Report) -> Value {
    let all: Vec<&'static cellguard_lints::Rule> = rules::all_rules().collect();
    let rules_json: Vec<Value> = all
        .iter()
        .map(|r| {
            let mut full = r.doc.what.to_string();
            if !r.doc.why.is_empty() {
                full.push_str("\n\n");
                full.push_str(r.doc.why);
            }
            if full.is_empty() {
                full = r.summary.to_string();
            }
            json!({
                "id": r.code,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": full},
                "help": {"text": format!("{}\n\nRun `cellguard rule {}` for the full documentation.", r.summary, r.code)},
                "defaultConfiguration": {"level": level(r.severity)},
                "properties": {"tags": [r.family()]},
            })
        })
        .collect();
    let results: Vec<Value> = report
        .diagnostics()
        .map(|(file, d)| {
            let uri = path_uri(&display_path(file));
            let mut result = json!({
                "ruleId": d.rule.code,
                "ruleIndex": all.iter().position(|r| r.code == d.rule.code),
                "level": level(d.severity),
                "message": {"text": match &d.help {
                    Some(h) => format!("{}\n{}", d.message, h),
                    None => d.message.clone(),
                }},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri},
                        "region": region(file, d.range),
                    }
                }],
            });
            if let Some(fix) = &d.fix {
                result["fixes"] = json!([{
                    "description": {"text": fix.message},
                    "artifactChanges": [{
                        "artifactLocation": {"uri": uri},
                        "replacements": fix.edits.iter().map(|e| json!({
                            "deletedRegion": region(file, e.range),
                            "insertedContent": {"text": e.content},
                        })).collect::<Vec<_>>(),
                    }],
                }]);
                result["properties"] = json!({"applicability": fix.applicability.as_str()});
            }
            if let Some(cell) = d.cell {
                if result.get("properties").is_none() {
                    result["properties"] = json!({});
                }
                result["properties"]["cell"] = json!(cell + 1);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "cellguard",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules_json,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// Writes the SARIF log, pretty-printed.
pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &log(report))?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::super::{testing, OutputFormat, RenderOptions};
    use super::*;

    #[test]
    fn sarif_results_snapshot() {
        // The rule table follows the rule set (other issues add rules); snapshot the results.
        let mut log = log(&testing::report());
        let results = log["runs"][0]["results"].as_array_mut().unwrap();
        for r in results.iter_mut() {
            r.as_object_mut().unwrap().remove("ruleIndex");
        }
        insta::assert_json_snapshot!(results);
    }

    #[test]
    fn sarif_shape() {
        let text = testing::rendered(OutputFormat::Sarif, &RenderOptions::default());
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["version"], "2.1.0");
        let run = &v["runs"][0];
        assert_eq!(run["columnKind"], "unicodeCodePoints");
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), cellguard_lints::rules::all_rules().count());
        for r in run["results"].as_array().unwrap() {
            let idx = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[idx]["id"], r["ruleId"]);
        }
        let levels: Vec<_> = run["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["level"].as_str().unwrap())
            .collect();
        assert_eq!(levels, vec!["error", "error", "warning", "note"]);
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(path_uri("a b/c#d.py"), "a%20b/c%23d.py");
        assert_eq!(path_uri("/tmp/x.py"), "file:///tmp/x.py");
    }
}
