//! `cellguard rule CODE|--all`: print rule documentation.

use super::ExitStatus;
use cellguard_lints::rules;

/// Arguments of `cellguard rule`.
#[derive(Debug, clap::Args)]
pub struct RuleArgs {
    /// Rule code (`API001`) or name (`unknown-action`).
    #[arg(required_unless_present = "all")]
    pub code: Option<String>,
    /// Print every rule.
    #[arg(long, conflicts_with = "code")]
    pub all: bool,
    /// `text` or `json`.
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub output_format: String,
}

/// Prints the requested rule docs.
pub fn run(args: RuleArgs) -> anyhow::Result<ExitStatus> {
    let selected: Vec<_> = if args.all {
        rules::all_rules().collect()
    } else {
        let code = args.code.unwrap_or_default();
        match rules::find_rule(&code) {
            Some(r) => vec![r],
            None => anyhow::bail!("unknown rule `{code}` (see `cellguard rule --all`)"),
        }
    };
    if args.output_format == "json" {
        let v = if args.all {
            serde_json::to_string_pretty(&selected)?
        } else {
            serde_json::to_string_pretty(selected[0])?
        };
        println!("{v}");
    } else {
        for r in selected {
            println!(
                "# {} ({})\n\n{}\n\n{}\n",
                r.name, r.code, r.summary, r.doc.what
            );
        }
    }
    Ok(ExitStatus::Success)
}
