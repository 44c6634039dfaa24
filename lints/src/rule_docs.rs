//! Where a rule's documentation lives: the one URL shown both as the CLI's JSON `url` (ruff's
//! field of the same name) and as the language server's `codeDescription.href`.
//!
//! The rule docs are the pages `cellguard rule --all --write-docs docs/rules` writes from the
//! rule registry, one `docs/rules/<rule-name>.md` per rule, checked in. The URL is, in order:
//! - the `rule-docs-url` template of the configuration (or the editor setting `ruleDocsUrl`),
//!   with `{name}` replaced by the rule's kebab-case name and `{code}` by its code; an empty
//!   template means "no link";
//! - else the `file://` URI of `docs/rules/<rule-name>.md` in the source tree this binary was
//!   built from, when that file exists at run time;
//! - else none (JSON `url: null`, no `codeDescription`) rather than a link that leads nowhere.

use crate::diagnostic::Rule;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The rule docs directory of the source tree the binary was built from
/// (`<repository>/docs/rules`; this crate lives in `<repository>/lints`).
pub fn source_docs_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .unwrap_or(manifest)
        .join("docs")
        .join("rules")
}

/// The documentation URL of `rule` under `template` (the resolved `rule-docs-url` setting,
/// `None` when unset). See the module docs for the order; `None` means no link.
pub fn rule_doc_url(rule: &Rule, template: Option<&str>) -> Option<String> {
    match template {
        Some(t) if t.trim().is_empty() => None,
        Some(t) => Some(t.replace("{name}", rule.name).replace("{code}", rule.code)),
        None => default_urls().get(rule.code).cloned().flatten(),
    }
}

/// The default URL of every rule, computed once: the `file://` URI of its page in
/// [`source_docs_dir`] when that file exists.
fn default_urls() -> &'static HashMap<&'static str, Option<String>> {
    static URLS: OnceLock<HashMap<&'static str, Option<String>>> = OnceLock::new();
    URLS.get_or_init(|| {
        let dir = source_docs_dir();
        crate::rules::all_rules()
            .map(|r| {
                let page = dir.join(format!("{}.md", r.name));
                (r.code, page.is_file().then(|| file_uri(&page)))
            })
            .collect()
    })
}

/// The `file://` URI of an absolute path, percent-encoding every byte outside RFC 3986's
/// unreserved set, `/` and `:` (so spaces and non-ASCII names give a valid URI).
pub fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut out = String::from("file://");
    if !text.starts_with('/') {
        // A Windows drive path: `file:///C:/...`.
        out.push('/');
    }
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(code: &str) -> &'static Rule {
        crate::rules::find_rule(code).unwrap()
    }

    #[test]
    fn a_template_fills_name_and_code_and_an_empty_one_disables_links() {
        let r = rule("API001");
        assert_eq!(
            rule_doc_url(r, Some("https://example.org/rules/{name}.md#{code}")).as_deref(),
            Some("https://example.org/rules/unknown-action.md#API001")
        );
        assert_eq!(rule_doc_url(r, Some("")), None);
        assert_eq!(rule_doc_url(r, Some("  ")), None);
    }

    #[test]
    fn the_default_is_the_checked_in_page_of_the_source_tree() {
        let r = rule("API001");
        let page = source_docs_dir().join("unknown-action.md");
        assert!(page.is_file(), "{} is missing", page.display());
        let url = rule_doc_url(r, None).unwrap();
        assert_eq!(url, file_uri(&page));
        assert!(url.starts_with("file:///") && url.ends_with("/docs/rules/unknown-action.md"));
    }

    #[test]
    fn file_uris_are_percent_encoded() {
        assert_eq!(
            file_uri(Path::new("/a b/é/x.md")),
            "file:///a%20b/%C3%A9/x.md"
        );
        assert_eq!(file_uri(Path::new("C:\\d\\x.md")), "file:///C:/d/x.md");
    }
}
