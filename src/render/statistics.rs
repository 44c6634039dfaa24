//! `--statistics`: one row per rule with its count, most frequent first (ties by code), as
//! ruff prints them: `COUNT<TAB>CODE<TAB>[*] name`. The fix column appears when any counted
//! diagnostic has an applicable fix: `[*]` all of them, `[-]` some, `[ ]` none. JSON
//! (`--output-format json|json-lines`) gives `[{code, name, count, fixable, fixable_count}]`.

use super::{summary, RenderOptions, Report};
use std::collections::BTreeMap;
use std::io::Write;

/// One row.
#[derive(Debug, serde::Serialize)]
pub struct Row {
    /// Rule code.
    pub code: &'static str,
    /// Rule name.
    pub name: &'static str,
    /// Number of diagnostics.
    pub count: usize,
    /// True when every one of them has an applicable fix.
    pub fixable: bool,
    /// How many have an applicable fix.
    pub fixable_count: usize,
}

/// Rows, most frequent first, ties by code.
pub fn rows(report: &Report, opts: &RenderOptions) -> Vec<Row> {
    let mut by_code: BTreeMap<&'static str, Row> = BTreeMap::new();
    for (_, d) in report.diagnostics() {
        let row = by_code.entry(d.rule.code).or_insert(Row {
            code: d.rule.code,
            name: d.rule.name,
            count: 0,
            fixable: false,
            fixable_count: 0,
        });
        row.count += 1;
        if opts.marks_fix(d) {
            row.fixable_count += 1;
        }
    }
    let mut rows: Vec<Row> = by_code
        .into_values()
        .map(|mut r| {
            r.fixable = r.fixable_count == r.count;
            r
        })
        .collect();
    rows.sort_by(|a, b| b.count.cmp(&a.count).then(a.code.cmp(b.code)));
    rows
}

/// Text table followed by the summary line.
pub fn render_text(
    report: &Report,
    opts: &RenderOptions,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let rows = rows(report, opts);
    let count_w = rows
        .iter()
        .map(|r| r.count.to_string().len())
        .max()
        .unwrap_or(1);
    let code_w = rows.iter().map(|r| r.code.len()).max().unwrap_or(1);
    let any_fix = rows.iter().any(|r| r.fixable_count > 0);
    for r in &rows {
        let marker = if !any_fix {
            ""
        } else if r.fixable {
            "[*] "
        } else if r.fixable_count > 0 {
            "[-] "
        } else {
            "[ ] "
        };
        writeln!(
            out,
            "{:>count_w$}\t{:<code_w$}\t{marker}{}",
            r.count, r.code, r.name
        )?;
    }
    writeln!(out, "{}", summary(report))
}

/// JSON array of rows.
pub fn render_json(
    report: &Report,
    opts: &RenderOptions,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &rows(report, opts))?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    #[test]
    fn statistics_text() {
        let mut out = Vec::new();
        render_text(&testing::report(), &RenderOptions::default(), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "1\tAPI002\t[*] non-canonical-action-key\n\
             1\tIMP001\t[ ] blocked-import\n\
             1\tIMP003\t[ ] import-fails-at-runtime\n\
             1\tRUN001\t[ ] missing-await\n\
             Found 4 diagnostics (2 errors, 1 warning, 1 info).\n"
        );
    }

    #[test]
    fn statistics_json() {
        let mut out = Vec::new();
        let opts = RenderOptions {
            unsafe_fixes: true,
            ..Default::default()
        };
        render_json(&testing::report(), &opts, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v[0]["code"], "API002");
        assert_eq!(v[3]["code"], "RUN001");
        assert_eq!(v[3]["fixable"], true);
        assert_eq!(v[1]["fixable_count"], 0);
    }
}
