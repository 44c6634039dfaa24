//! The JSON Schema of the config (`docs/cellguard.schema.json`) is generated from the serde
//! structs of `cellguard_lints::config` and must stay in sync with them; the config examples the
//! repository ships must satisfy both the schema and serde.
//!
//! Regenerate after changing the config structs:
//! `CELLGUARD_UPDATE_SCHEMA=1 cargo test --test schema`.

#[path = "support/json_schema.rs"]
mod json_schema;

use cellguard_lints::config::ConfigFile;
use json_schema::validate;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn generated() -> Value {
    serde_json::to_value(schemars::schema_for!(ConfigFile)).unwrap()
}

fn checked_in() -> Value {
    let text = std::fs::read_to_string(root().join("docs/cellguard.schema.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn schema_file_matches_the_serde_structs() {
    let schema = generated();
    let path = root().join("docs/cellguard.schema.json");
    if std::env::var_os("CELLGUARD_UPDATE_SCHEMA").is_some() {
        let mut text = serde_json::to_string_pretty(&schema).unwrap();
        text.push('\n');
        std::fs::write(&path, text).unwrap();
    }
    assert!(
        checked_in() == schema,
        "docs/cellguard.schema.json is out of date with lints/src/config.rs; run \
         `CELLGUARD_UPDATE_SCHEMA=1 cargo test --test schema`"
    );
}

fn validate_toml(text: &str) -> Result<(), String> {
    let value: toml::Value = toml::from_str(text).map_err(|e| e.to_string())?;
    let json = serde_json::to_value(value).unwrap();
    let schema = checked_in();
    validate(&schema, &schema["$defs"], &json, "")
}

/// The TOML blocks of a Markdown file that hold a whole `cellguard.toml`.
fn toml_blocks(md: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(md).unwrap();
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for line in text.lines() {
        match &mut cur {
            None if line.trim_start() == "```toml" => cur = Some(String::new()),
            Some(b) if line.trim_start() == "```" => {
                blocks.push(std::mem::take(b));
                cur = None;
            }
            Some(b) => {
                b.push_str(line);
                b.push('\n');
            }
            None => {}
        }
    }
    blocks
        .into_iter()
        .filter(|b| !b.contains("[[rule]]"))
        .map(|b| {
            if b.contains("[tool.cellguard") {
                // The table's content is what the schema describes.
                let v: toml::Value = toml::from_str(&b).unwrap();
                toml::to_string(&v["tool"]["cellguard"]).unwrap()
            } else {
                b
            }
        })
        .collect()
}

#[test]
fn shipped_configs_satisfy_schema_and_serde() {
    let mut checked = 0;
    let mut texts = vec![(
        "fixtures/example/cellguard.toml".to_string(),
        std::fs::read_to_string(root().join("fixtures/example/cellguard.toml")).unwrap(),
    )];
    for (i, b) in toml_blocks(&root().join("docs/configuration.md"))
        .into_iter()
        .enumerate()
    {
        texts.push((format!("docs/configuration.md block {i}"), b));
    }
    for (name, text) in texts {
        validate_toml(&text).unwrap_or_else(|e| panic!("{name}: schema: {e}"));
        toml::from_str::<ConfigFile>(&text).unwrap_or_else(|e| panic!("{name}: serde: {e}"));
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} configs checked");
}

#[test]
fn schema_and_serde_reject_the_same_mistakes() {
    let cases = [
        "[lint]\nselectt = [\"API\"]\n",
        "profile = \"lenient\"\n",
        "[lint.shape]\nmax-actions = \"3\"\n",
        "[lint.shape]\nmax-actions = -1\n",
        "knowledge-base = \"kb.json\"\n",
        "[namespace]\npreset = 3\n",
        "extract = \"html\"\n",
    ];
    for text in cases {
        assert!(validate_toml(text).is_err(), "schema accepts {text:?}");
        assert!(
            toml::from_str::<ConfigFile>(text).is_err(),
            "serde accepts {text:?}"
        );
    }
    let fine = "profile = \"colony\"\ndialect = \"functions\"\nextract = \"markdown\"\n\
                [lint.imports]\nallow = [\"json\"]\n[namespace]\npreset = \"smolagents\"\n\
                [[guardrails]]\nkind = \"anything\"\n";
    validate_toml(fine).unwrap();
    toml::from_str::<ConfigFile>(fine).unwrap();
}

#[test]
fn schema_offers_completion_for_every_top_level_key() {
    let schema = checked_in();
    let props = schema["properties"].as_object().unwrap();
    for key in [
        "profile",
        "dialect",
        "knowledge-base",
        "extend",
        "extract",
        "lint",
        "namespace",
        "guardrails",
        "policies",
    ] {
        assert!(props.contains_key(key), "schema lacks `{key}`");
        assert!(
            props[key].get("description").is_some() || props[key].get("$ref").is_some(),
            "`{key}` has no description"
        );
    }
    assert_eq!(schema["additionalProperties"], Value::Bool(false));
}
