//! Editor settings: `initializationOptions` and `workspace/didChangeConfiguration`.
//!
//! The shape follows ruff's server settings, in camelCase. Any of these forms is accepted:
//! `{"settings": {...}}` (ruff/Helix style), `{"cellguard": {...}}` (VS Code sections), or the
//! settings object itself. Unknown keys are ignored; a key of the wrong type is reported back as
//! a warning and left at its default, so a typo never stops the server.
//!
//! ```json
//! {
//!   "configuration": "configs/cellguard.toml",
//!   "knowledgeBase": ["kb/actions.json"],
//!   "profile": "strict", "dialect": "colony",
//!   "select": ["API", "SHP"], "extendSelect": [], "ignore": ["SHP004"],
//!   (also accepted as `lint.select`, `lint.extendSelect`, `lint.ignore`, as ruff spells them)
//!   "lint": {"enable": true},
//!   "fixAll": true,
//!   "codeAction": {"disableRuleComment": {"enable": true}, "fixViolation": {"enable": true}},
//!   "inlayHints": {"enable": true},
//!   "ruleDocsUrl": "https://example.org/rules/{name}.md"
//! }
//! ```
//!
//! Precedence, as in ruff: these editor settings override the project's config file (they
//! become the CLI-style overrides), and `configuration` replaces config discovery.

use cellguard_lints::config::{Dialect, Overrides, Profile};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Settings the editor sends.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientSettings {
    /// A config file used for every document instead of discovery (relative to the workspace).
    pub configuration: Option<String>,
    /// Extra knowledge-base files or directories (relative to the workspace).
    pub knowledge_base: Vec<String>,
    /// `strict` or `colony`.
    pub profile: Option<String>,
    /// `colony` or `functions`.
    pub dialect: Option<String>,
    /// Replaces the config's `select`.
    pub select: Option<Vec<String>>,
    /// Added to the selection.
    pub extend_select: Vec<String>,
    /// Removed from the selection.
    pub ignore: Vec<String>,
    /// Publish diagnostics at all (`lint.enable`).
    pub lint_enable: bool,
    /// Offer `source.fixAll.cellguard`.
    pub fix_all: bool,
    /// Offer "ignore CODE for this line".
    pub disable_rule_comment: bool,
    /// Offer a quick fix per fix.
    pub fix_violation: bool,
    /// Show the action-count inlay hint.
    pub inlay_hints: bool,
    /// Template of the rule documentation link (`codeDescription.href`), replacing the config's
    /// `rule-docs-url`: `{name}` and `{code}` are filled in.
    pub rule_docs_url: Option<String>,
}

impl Default for ClientSettings {
    fn default() -> Self {
        Self {
            configuration: None,
            knowledge_base: Vec::new(),
            profile: None,
            dialect: None,
            select: None,
            extend_select: Vec::new(),
            ignore: Vec::new(),
            lint_enable: true,
            fix_all: true,
            disable_rule_comment: true,
            fix_violation: true,
            inlay_hints: true,
            rule_docs_url: None,
        }
    }
}

/// Finds the settings object inside what a client sent.
fn settings_object(v: &Value) -> Option<&serde_json::Map<String, Value>> {
    let obj = v.as_object()?;
    if let Some(inner) = obj.get("cellguard").and_then(Value::as_object) {
        return Some(inner);
    }
    if let Some(inner) = obj.get("settings").and_then(Value::as_object) {
        return Some(inner);
    }
    Some(obj)
}

fn get<'a>(obj: &'a serde_json::Map<String, Value>, path: &[&str]) -> Option<&'a Value> {
    let mut cur = obj.get(path[0])?;
    for key in &path[1..] {
        cur = cur.get(key)?;
    }
    (!cur.is_null()).then_some(cur)
}

impl ClientSettings {
    /// Reads settings from a client value. Returns the settings and a warning per key that had
    /// the wrong type. `null` or a non-object gives the defaults.
    pub fn from_value(v: &Value) -> (Self, Vec<String>) {
        let mut s = Self::default();
        let mut warnings = Vec::new();
        let Some(obj) = settings_object(v) else {
            return (s, warnings);
        };
        let string = |path: &[&str], warnings: &mut Vec<String>| -> Option<String> {
            let v = get(obj, path)?;
            match v.as_str() {
                Some(x) => Some(x.to_string()),
                None => {
                    warnings.push(format!("setting `{}` must be a string", path.join(".")));
                    None
                }
            }
        };
        // An empty (or blank) string is "not set": VS Code reads a contributed string setting
        // without a default as `""`, and that must mean "use the project config".
        let set = |v: String| (!v.trim().is_empty()).then(|| v.trim().to_string());
        s.configuration = string(&["configuration"], &mut warnings).and_then(set);
        s.profile = string(&["profile"], &mut warnings).and_then(set);
        s.dialect = string(&["dialect"], &mut warnings).and_then(set);
        s.rule_docs_url = string(&["ruleDocsUrl"], &mut warnings).and_then(set);
        let list = |path: &[&str], warnings: &mut Vec<String>| -> Option<Vec<String>> {
            let v = get(obj, path)?;
            let items = match v {
                Value::String(x) => return Some(vec![x.clone()]),
                Value::Array(items) => items,
                _ => {
                    warnings.push(format!(
                        "setting `{}` must be a list of strings",
                        path.join(".")
                    ));
                    return None;
                }
            };
            let strings: Option<Vec<String>> = items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect();
            if strings.is_none() {
                warnings.push(format!(
                    "setting `{}` must be a list of strings",
                    path.join(".")
                ));
            }
            // Blank entries are what an editor's list UI leaves behind, never a path or a
            // selector: dropped.
            strings.map(|v| {
                v.into_iter()
                    .filter(|x| !x.trim().is_empty())
                    .collect::<Vec<_>>()
            })
        };
        s.knowledge_base = list(&["knowledgeBase"], &mut warnings).unwrap_or_default();
        // `lint.select` / `lint.extendSelect` / `lint.ignore` too, as ruff's current settings
        // spell them (`ruff.lint.ignore`); the top-level key wins when both are given and it is
        // not empty (an empty list is what VS Code sends for an unset setting).
        let either = |key: &str, warnings: &mut Vec<String>| {
            list(&[key], warnings)
                .filter(|v| !v.is_empty())
                .or_else(|| list(&["lint", key], warnings))
        };
        // An empty `select` from an editor is "not set" (VS Code reads an array setting without
        // a default as `[]`); selecting no rule at all is `lint.enable = false`.
        s.select = either("select", &mut warnings).filter(|v| !v.is_empty());
        s.extend_select = either("extendSelect", &mut warnings).unwrap_or_default();
        s.ignore = either("ignore", &mut warnings).unwrap_or_default();
        let boolean = |path: &[&str], default: bool, warnings: &mut Vec<String>| -> bool {
            match get(obj, path) {
                None => default,
                Some(Value::Bool(b)) => *b,
                Some(_) => {
                    warnings.push(format!(
                        "setting `{}` must be true or false",
                        path.join(".")
                    ));
                    default
                }
            }
        };
        s.lint_enable = boolean(&["lint", "enable"], true, &mut warnings);
        s.fix_all = boolean(&["fixAll"], true, &mut warnings);
        s.disable_rule_comment = boolean(
            &["codeAction", "disableRuleComment", "enable"],
            true,
            &mut warnings,
        );
        s.fix_violation = boolean(
            &["codeAction", "fixViolation", "enable"],
            true,
            &mut warnings,
        );
        s.inlay_hints = boolean(&["inlayHints", "enable"], true, &mut warnings);
        // Also accept the flat spellings Helix and Neovim users write.
        if let Some(Value::Bool(b)) = obj.get("inlayHints") {
            s.inlay_hints = *b;
        }
        (s, warnings)
    }

    /// The CLI-style overrides these settings stand for; relative paths are resolved against
    /// `root`.
    ///
    /// Errors: an unknown profile or dialect name.
    pub fn overrides(&self, root: &Path) -> Result<Overrides, String> {
        let profile = match self.profile.as_deref() {
            None => None,
            Some("strict") => Some(Profile::Strict),
            Some("colony") => Some(Profile::Colony),
            Some(other) => {
                return Err(format!(
                    "setting `profile`: unknown profile `{other}` (expected `strict` or `colony`)"
                ))
            }
        };
        let dialect = match self.dialect.as_deref() {
            None => None,
            Some("colony") => Some(Dialect::Colony),
            Some("functions") => Some(Dialect::Functions),
            Some(other) => {
                return Err(format!(
                "setting `dialect`: unknown dialect `{other}` (expected `colony` or `functions`)"
            ))
            }
        };
        Ok(Overrides {
            profile,
            dialect,
            select: self.select.clone(),
            extend_select: self.extend_select.clone(),
            ignore: self.ignore.clone(),
            knowledge_base: self
                .knowledge_base
                .iter()
                .map(|p| resolve_path(root, p))
                .collect(),
            extract: None,
            rule_docs_url: self.rule_docs_url.clone(),
            origin: Some("editor settings".to_string()),
        })
    }

    /// The `configuration` file, resolved against `root`.
    pub fn configuration_path(&self, root: &Path) -> Option<PathBuf> {
        self.configuration.as_deref().map(|c| resolve_path(root, c))
    }
}

/// `p` if absolute (after `~/` expansion), else `root/p`.
pub fn resolve_path(root: &Path, p: &str) -> PathBuf {
    if let Some(rest) = p.strip_prefix("~/") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(rest);
        }
    }
    let path = PathBuf::from(p);
    if path.is_absolute() {
        path
    } else {
        root.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every setting the VS Code extension contributes (editors/vscode/package.json) is sent by
    /// extension.js and understood by the server: set to a non-default value, it parses without
    /// a warning and changes the settings. Editor-only keys (`path`, `trace.server`) are skipped.
    #[test]
    fn vscode_settings_reach_the_server() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/vscode");
        let package: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("package.json")).unwrap())
                .unwrap();
        let extension = std::fs::read_to_string(dir.join("extension.js")).unwrap();
        let properties = package["contributes"]["configuration"]["properties"]
            .as_object()
            .unwrap();
        let mut checked = 0;
        for (name, schema) in properties {
            let key = name.strip_prefix("cellguard.").unwrap();
            if matches!(key, "path" | "trace.server") {
                continue;
            }
            assert!(
                extension.contains(&format!("\"{key}\"")),
                "extension.js does not send `{key}`"
            );
            let sample = match schema["type"].as_str() {
                Some("boolean") => Value::Bool(!schema["default"].as_bool().unwrap()),
                Some("array") => json!(["API"]),
                Some("string") => match schema["enum"].as_array() {
                    Some(values) => values.last().unwrap().clone(),
                    None => json!("sample/{name}"),
                },
                other => panic!("`{name}`: unexpected type {other:?}"),
            };
            let mut value = sample;
            for part in key.split('.').rev() {
                value = json!({ part: value });
            }
            let (settings, warnings) = ClientSettings::from_value(&json!({ "settings": value }));
            assert!(warnings.is_empty(), "`{key}`: {warnings:?}");
            assert_ne!(
                settings,
                ClientSettings::default(),
                "`{key}` is ignored by the server"
            );
            checked += 1;
        }
        assert_eq!(checked, properties.len() - 2);
        assert!(properties.contains_key("cellguard.ruleDocsUrl"));
    }

    #[test]
    fn nested_forms_and_defaults() {
        for v in [
            json!({"settings": {"select": ["API"], "lint": {"enable": false}}}),
            json!({"cellguard": {"select": "API", "lint": {"enable": false}}}),
            json!({"select": ["API"], "lint": {"enable": false}}),
        ] {
            let (s, w) = ClientSettings::from_value(&v);
            assert!(w.is_empty(), "{w:?}");
            assert_eq!(s.select, Some(vec!["API".to_string()]));
            assert!(!s.lint_enable);
            assert!(s.fix_all);
        }
        assert_eq!(
            ClientSettings::from_value(&Value::Null).0,
            ClientSettings::default()
        );
    }

    /// ruff users write `lint.ignore` (`ruff.lint.ignore`): it was silently ignored.
    #[test]
    fn lint_table_spellings_of_select_and_ignore() {
        let (s, w) = ClientSettings::from_value(&json!({"cellguard": {
            "lint": {"select": ["API"], "extendSelect": ["SHP"], "ignore": ["IMP001"], "enable": true}
        }}));
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(s.select, Some(vec!["API".to_string()]));
        assert_eq!(s.extend_select, vec!["SHP".to_string()]);
        assert_eq!(s.ignore, vec!["IMP001".to_string()]);
        // The top-level spelling wins.
        let (s, _) =
            ClientSettings::from_value(&json!({"ignore": ["API001"], "lint": {"ignore": ["X"]}}));
        assert_eq!(s.ignore, vec!["API001".to_string()]);
    }

    #[test]
    fn wrong_types_warn_and_keep_defaults() {
        let (s, w) =
            ClientSettings::from_value(&json!({"fixAll": "yes", "ignore": [1], "profile": 3}));
        assert!(s.fix_all);
        assert!(s.ignore.is_empty());
        assert_eq!(s.profile, None);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("`profile`"), "{w:?}");
    }

    /// issue 5 S9: VS Code's values for settings without a default (`""`, `[]`) are "not
    /// set", so the project config applies and no error is shown.
    #[test]
    fn empty_values_from_vscode_are_unset() {
        let (s, w) = ClientSettings::from_value(&json!({"cellguard": {
            "profile": "", "dialect": " ", "configuration": "", "select": [],
            "knowledgeBase": [""], "ignore": ["", "API001"], "extendSelect": [],
            "path": "", "trace": {"server": "off"}
        }}));
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(s.profile, None);
        assert_eq!(s.dialect, None);
        assert_eq!(s.configuration, None);
        assert_eq!(s.select, None);
        assert!(s.knowledge_base.is_empty());
        assert_eq!(s.ignore, vec!["API001".to_string()]);
        let o = s.overrides(Path::new("/ws")).unwrap();
        assert_eq!(o.profile, None);
        assert_eq!(o.select, None);
        // `lint.select` is read when the top-level `select` is empty.
        let (s, _) =
            ClientSettings::from_value(&json!({"select": [], "lint": {"select": ["API"]}}));
        assert_eq!(s.select, Some(vec!["API".to_string()]));
        // A real value is still checked.
        let (s, _) = ClientSettings::from_value(&json!({"profile": " strict "}));
        assert_eq!(
            s.overrides(Path::new("/ws")).unwrap().profile,
            Some(Profile::Strict)
        );
    }

    #[test]
    fn overrides_resolve_paths_and_reject_unknown_names() {
        let (s, _) = ClientSettings::from_value(
            &json!({"knowledgeBase": ["kb.json", "/abs/kb"], "profile": "colony"}),
        );
        let o = s.overrides(Path::new("/ws")).unwrap();
        assert_eq!(
            o.knowledge_base,
            vec![PathBuf::from("/ws/kb.json"), PathBuf::from("/abs/kb")]
        );
        assert_eq!(o.profile, Some(Profile::Colony));
        let (s, _) = ClientSettings::from_value(&json!({"dialect": "nope"}));
        assert!(s.overrides(Path::new("/ws")).unwrap_err().contains("nope"));
    }
}
