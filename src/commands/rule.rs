//! `cellguard rule CODE|--all`: print rule documentation, as `ruff rule` does
//! (lsp-linter-anchors §1.5).
//!
//! Text mode prints Markdown: `# name (CODE)`, the family, severity and fix availability, then
//! the doc sections (what it does, why, a failing example and the fixed version, fix safety,
//! options, source of the semantics). JSON mode prints one object (an array with `--all`) with
//! `name`, `code`, `family`, `linter` (the family's description), `summary`, `severity`,
//! `fix_availability` (`always|sometimes|none`), `fix` (ruff's sentence), the doc fields and
//! `explanation` (the Markdown body). An unknown code is a usage error (exit 2) with the
//! closest code or name suggested.

use super::ExitStatus;
use cellguard_lints::diagnostic::{FixAvailability, Rule};
use cellguard_lints::rules;
use std::fmt::Write as _;
use std::io::Write;

/// Arguments of `cellguard rule`.
#[derive(Debug, clap::Args)]
pub struct RuleArgs {
    /// Rule code (`API001`, case-insensitive) or name (`unknown-action`).
    #[arg(required_unless_present = "all")]
    pub code: Option<String>,
    /// Print every rule.
    #[arg(long, conflicts_with = "code")]
    pub all: bool,
    /// `text` (Markdown) or `json`.
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub output_format: String,
}

/// What a rule family models, shown as "Derived from ...".
pub fn family_description(family: &str) -> &'static str {
    match family {
        "SYN" => "parsing and extraction (Colony `_extract_code`, `ast.parse`)",
        "IMP" => "imports (Colony ImportWhitelistValidator and restricted builtins)",
        "SBX" => "sandbox escapes (beyond Colony's validators)",
        "API" => {
            "action keys and parameters (Colony APIKnowledgeBaseValidator, dispatcher resolution)"
        }
        "SHP" => "iteration shape (Colony IterationShapeValidator)",
        "RUN" => "runtime semantics of the REPL namespace",
        "CG" => "cellguard's own meta rules (suppression comments)",
        _ => "cellguard",
    }
}

/// ruff's sentence for fix availability.
pub fn fix_sentence(fix: FixAvailability) -> &'static str {
    match fix {
        FixAvailability::Always => "Fix is always available.",
        FixAvailability::Sometimes => "Fix is sometimes available.",
        FixAvailability::None => "Fix is not available.",
    }
}

fn fix_word(fix: FixAvailability) -> &'static str {
    match fix {
        FixAvailability::Always => "always",
        FixAvailability::Sometimes => "sometimes",
        FixAvailability::None => "none",
    }
}

fn code_block(out: &mut String, lang: &str, text: &str) {
    let fence = if text.contains("```") { "````" } else { "```" };
    let _ = writeln!(out, "{fence}{lang}");
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}");
}

/// The Markdown body of a rule's doc (everything after the title and metadata lines).
pub fn explanation(rule: &Rule) -> String {
    let d = &rule.doc;
    let mut out = String::new();
    let section = |out: &mut String, title: &str, body: &str| {
        if !body.trim().is_empty() {
            let _ = writeln!(out, "## {title}\n\n{}\n", body.trim_end());
        }
    };
    section(
        &mut out,
        "What it does",
        if d.what.is_empty() {
            rule.summary
        } else {
            d.what
        },
    );
    section(&mut out, "Why is this bad?", d.why);
    if !d.example.is_empty() {
        // Examples run as raw responses or Markdown are not Python.
        let lang = if d.example_config.contains("\"response\"") {
            "text"
        } else if d.example_config.contains("\"markdown\"") {
            "markdown"
        } else {
            "python"
        };
        out.push_str("## Example\n\n");
        code_block(&mut out, lang, d.example);
        if !d.fixed_example.is_empty() {
            out.push_str("\nUse instead:\n\n");
            code_block(&mut out, lang, d.fixed_example);
        }
        if !d.example_kb.is_empty() {
            out.push_str("\nWith this knowledge base:\n\n");
            code_block(&mut out, "json", d.example_kb);
        }
        if !d.example_config.is_empty() {
            out.push_str("\nWith this configuration (`cellguard.toml`):\n\n");
            code_block(&mut out, "toml", d.example_config);
        }
        out.push('\n');
    }
    section(&mut out, "Fix safety", d.fix_safety);
    section(&mut out, "Options", d.options);
    section(&mut out, "Source", d.source);
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// The full Markdown text of `cellguard rule CODE`.
pub fn render_text(rule: &Rule) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {} ({})\n", rule.name, rule.code);
    let _ = writeln!(
        out,
        "Derived from the **{}** family: {}.\n",
        rule.family(),
        family_description(rule.family())
    );
    let _ = writeln!(out, "Default severity: {}.\n", rule.severity.as_str());
    let _ = writeln!(out, "{}\n", fix_sentence(rule.fix));
    let _ = writeln!(out, "{}\n", rule.summary);
    out.push_str(&explanation(rule));
    out
}

/// The JSON object of one rule.
pub fn render_json(rule: &Rule) -> serde_json::Value {
    let d = &rule.doc;
    serde_json::json!({
        "name": rule.name,
        "code": rule.code,
        "family": rule.family(),
        "linter": family_description(rule.family()),
        "summary": rule.summary,
        "severity": rule.severity.as_str(),
        "fix_availability": fix_word(rule.fix),
        "fix": fix_sentence(rule.fix),
        "what": d.what,
        "why": d.why,
        "example": d.example,
        "fixed_example": d.fixed_example,
        "fix_safety": d.fix_safety,
        "options": d.options,
        "source": d.source,
        "example_kb": d.example_kb,
        "example_config": d.example_config,
        "explanation": explanation(rule),
    })
}

/// The closest code or rule name to `query` (edit distance on codes and names).
pub fn suggest(query: &str) -> Option<&'static Rule> {
    let q = query.trim();
    let upper = q.to_ascii_uppercase();
    let lower = q.to_ascii_lowercase();
    rules::all_rules()
        .map(|r| {
            let by_code = strsim::levenshtein(&upper, r.code);
            let by_name = strsim::levenshtein(&lower, r.name);
            (by_code.min(by_name), r)
        })
        .filter(|(d, r)| *d <= 3.max(r.name.len() / 3))
        .min_by_key(|(d, r)| (*d, r.code))
        .map(|(_, r)| r)
}

/// Prints the requested rule docs.
pub fn run(args: RuleArgs) -> anyhow::Result<ExitStatus> {
    let selected: Vec<&'static Rule> = if args.all {
        rules::all_rules().collect()
    } else {
        let code = args.code.unwrap_or_default();
        match rules::find_rule(code.trim()) {
            Some(r) => vec![r],
            None => {
                let hint = match suggest(&code) {
                    Some(r) => format!("; did you mean `{}` ({})?", r.code, r.name),
                    None => "; see `cellguard rule --all`".to_string(),
                };
                anyhow::bail!("unknown rule `{code}`{hint}");
            }
        }
    };
    let mut out = std::io::stdout().lock();
    if args.output_format == "json" {
        let v = if args.all {
            serde_json::Value::Array(selected.iter().map(|r| render_json(r)).collect())
        } else {
            render_json(selected[0])
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        let texts: Vec<String> = selected.iter().map(|r| render_text(r)).collect();
        writeln!(out, "{}", texts.join("\n\n"))?;
    }
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_doc_has_every_section() {
        let rule = rules::find_rule("IMP003").unwrap();
        let text = render_text(rule);
        assert!(
            text.starts_with("# import-fails-at-runtime (IMP003)\n\n"),
            "{text}"
        );
        for needle in [
            "Derived from the **IMP** family",
            "Default severity: error.",
            "Fix is sometimes available.",
            "## What it does",
            "## Why is this bad?",
            "## Example\n\n```python\nimport json\nx = json.dumps({})\n```",
            "Use instead:\n\n```python\nx = json.dumps({})\n```",
            "## Fix safety",
            "## Options",
            "## Source",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
    }

    #[test]
    fn json_doc_fields() {
        let v = render_json(rules::find_rule("cg001").unwrap());
        assert_eq!(v["code"], "CG001");
        assert_eq!(v["name"], "unused-suppression");
        assert_eq!(v["family"], "CG");
        assert_eq!(v["severity"], "warning");
        assert_eq!(v["fix_availability"], "always");
        assert_eq!(v["example"], "x = 1  # noqa: IMP003\n");
        assert!(v["explanation"].as_str().unwrap().contains("## Fix safety"));
    }

    #[test]
    fn suggestions_for_unknown_codes() {
        assert_eq!(suggest("API01").map(|r| r.code), Some("API001"));
        assert_eq!(suggest("IMP0001").map(|r| r.code), Some("IMP001"));
        assert_eq!(suggest("blocked-imports").map(|r| r.code), Some("IMP001"));
        assert_eq!(suggest("zzzzzzzzzzzzzzzzzzzz").map(|r| r.code), None);
    }
}
