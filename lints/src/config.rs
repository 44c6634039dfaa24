//! Configuration: `cellguard.toml`, `.cellguard.toml`, or `[tool.cellguard]` in
//! `pyproject.toml`. The closest file to the checked path wins (no merging, as ruff does);
//! `extend = "path"` inherits from another file, the extending file's keys taking precedence.
//! CLI flags override every file ([`Overrides`]).
//!
//! Errors carry file:line:col ([`ConfigError`]); the CLI exits with code 2 on them. Problems that
//! do not stop a run (a `*` in the import allowlist, an entry that is not a module name, a
//! selection that enables no rule) are [`Settings::warnings`], also located.
//!
//! The JSON Schema of the file (`docs/cellguard.schema.json`) is generated from these structs
//! with the `schema` feature: a new section or key needs
//! `#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]` on its type, then
//! `CELLGUARD_UPDATE_SCHEMA=1 cargo test --test schema` to regenerate the file.

use crate::diagnostic::Rule;
use crate::kb::KnowledgeBase;
use serde::Deserialize;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A configuration problem, located when possible.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), .line.map(|l| format!(":{l}:{}", .column.unwrap_or(1))).unwrap_or_default())]
pub struct ConfigError {
    /// The config file (or `<cli>` for flags).
    pub path: PathBuf,
    /// One-based line.
    pub line: Option<usize>,
    /// One-based column.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl ConfigError {
    /// An error at a byte offset of `text`.
    pub fn at(path: &Path, text: &str, offset: Option<usize>, message: impl Into<String>) -> Self {
        let (line, column) = match offset {
            Some(o) => {
                let loc = crate::source::LineIndex::new(text).location(text, o);
                (Some(loc.row), Some(loc.column))
            }
            None => (None, None),
        };
        Self {
            path: path.to_path_buf(),
            line,
            column,
            message: message.into(),
        }
    }

    /// An error without a position.
    pub fn plain(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            line: None,
            column: None,
            message: message.into(),
        }
    }
}

/// Which rule set and message texts apply.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// All of cellguard's rules at their own severities (default).
    #[default]
    Strict,
    /// Colony's three validators reproduced exactly; everything else at `info`.
    Colony,
}

/// How a cell calls actions.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// `await run("Capability.key.method", **params)`.
    #[default]
    Colony,
    /// Tools called as plain functions (smolagents CodeAgent, CodeAct, BFCL).
    Functions,
}

/// `[lint]`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct LintSection {
    /// Rules to enable, replacing the default `["ALL"]`: codes (`API001`), family prefixes
    /// (`API`, `SHP00`), kebab-case rule names (`unknown-action`) or `ALL`.
    pub select: Option<Vec<String>>,
    /// Rules added to `select` (same forms).
    pub extend_select: Option<Vec<String>>,
    /// Rules removed from the selection (same forms); between `select`/`extend-select` and
    /// `ignore` the most specific selector wins, `ignore` on a tie.
    pub ignore: Option<Vec<String>>,
    /// Security rules that suppression comments *inside the checked file* may silence (same
    /// selector forms). By default they may not: the sandbox rules (`SBX`), the import
    /// allowlist's security findings (`IMP001`, `IMP002`) and `CG005` ignore `# noqa` and
    /// `# cellguard: ignore[...]`/`ignore-file[...]`, because the cell's author is the party
    /// they guard against. List codes here only for trusted, human-written files; `ignore` and
    /// `select` (the developer's configuration) always apply.
    pub allow_inline_suppressions: Option<Vec<String>>,
    /// `[lint.imports]`: the import allowlist (rule family `IMP`).
    pub imports: Option<ImportsSection>,
    /// `[lint.shape]`: limits of one cell (rule family `SHP`).
    pub shape: Option<ShapeSection>,
}

/// `[lint.imports]`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ImportsSection {
    /// Allowed modules, replacing the dialect's preset (Colony's 11 modules, or smolagents'
    /// `BASE_BUILTIN_MODULES`): `a.b` allows `a.b` and below (never the parent `a`), `a.*`
    /// allows `a` and below.
    pub allow: Option<Vec<String>>,
    /// Modules added to the allowlist (same forms).
    pub extend_allow: Option<Vec<String>>,
    /// Members of allowed modules that stay forbidden, replacing the default list
    /// (`asyncio.create_subprocess_exec`, `asyncio.open_connection`, ...). A list that leaves
    /// out default entries is reported as a configuration warning; to add entries and keep the
    /// defaults, use `extend-deny-members`.
    pub deny_members: Option<Vec<String>>,
    /// Members added to the deny list (the defaults, or `deny-members` when set), as ruff's
    /// `extend-*` keys do.
    pub extend_deny_members: Option<Vec<String>>,
}

/// `[lint.shape]`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ShapeSection {
    /// Maximum actions on one execution path of a cell (default 3, as Colony).
    pub max_actions: Option<u32>,
    /// Maximum `browse()` calls in a cell (default 1, as Colony).
    pub max_browse: Option<u32>,
    /// Maximum substantive lines in a cell: blank, comment-only and docstring lines excluded
    /// (default 50, as Colony).
    pub max_lines: Option<u32>,
}

/// `[namespace]`: the names a cell's REPL provides.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct NamespaceSection {
    /// The names to start from: `colony`, `smolagents` or `none`; defaults to the dialect's
    /// preset.
    #[cfg_attr(feature = "schema", schemars(with = "Option<schema::NamespacePreset>"))]
    pub preset: Option<String>,
    /// Every name bound before a cell runs, replacing the preset's.
    pub names: Option<Vec<String>>,
    /// Names added to the preset's.
    pub extend_names: Option<Vec<String>>,
    /// Names that are coroutine functions and must be awaited, replacing the preset's.
    pub async_names: Option<Vec<String>>,
    /// The action-dispatch function (`run` in Colony); `""` for none (functions dialect).
    pub run: Option<String>,
}

/// One config file as written. Sections owned by replay (`guardrails`, `policies`, `replay`)
/// are kept with their spans and parsed by the replay engine.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(
        title = "cellguard configuration",
        description = "cellguard.toml, .cellguard.toml, or the [tool.cellguard] table of pyproject.toml. See docs/configuration.md."
    )
)]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ConfigFile {
    /// `strict` (default): every rule at its own severity. `colony`: Colony's three validators
    /// reproduced exactly, everything else reported at `info`.
    pub profile: Option<Profile>,
    /// How cells call actions: `colony` (default, `await run("Cap.key.method", ...)`) or
    /// `functions` (tools called as functions: smolagents, CodeAct, BFCL).
    pub dialect: Option<Dialect>,
    /// Knowledge-base files (`cellguard-kb`/`colony-kb` JSON, OpenAI/MCP tool lists, JSON Lines
    /// of function docs) or directories, relative to this config file.
    pub knowledge_base: Option<Vec<String>>,
    /// Another config file to inherit from, relative to this one; this file's keys win.
    pub extend: Option<String>,
    /// Template of a rule's documentation URL (the JSON output's `url`, the language server's
    /// `codeDescription.href`): `{name}` is replaced by the rule name, `{code}` by its code;
    /// `""` turns links off. Unset: the `file://` URI of `docs/rules/<name>.md` in the source
    /// tree the binary was built from, when that file exists; else no link.
    pub rule_docs_url: Option<String>,
    /// How files are split into cells: `auto` (default, by extension), `python`, `markdown`,
    /// `response` or `jsonl`.
    #[cfg_attr(feature = "schema", schemars(with = "Option<schema::ExtractMode>"))]
    pub extract: Option<crate::extract::ExtractMode>,
    /// `[lint]`: rule selection, import allowlist, shape limits.
    pub lint: Option<LintSection>,
    /// `[namespace]`: the names a cell's REPL provides.
    pub namespace: Option<NamespaceSection>,
    /// `[[guardrails]]`: guardrails simulated by `cellguard replay` (checked by the replay
    /// engine).
    #[cfg_attr(feature = "schema", schemars(with = "Option<Vec<schema::Table>>"))]
    pub guardrails: Option<Vec<toml::Spanned<toml::Value>>>,
    /// `[[policies]]`: message and state policies simulated by `cellguard replay`.
    #[cfg_attr(feature = "schema", schemars(with = "Option<Vec<schema::Table>>"))]
    pub policies: Option<Vec<toml::Spanned<toml::Value>>>,
    /// `[replay]`: options of `cellguard replay`.
    #[cfg_attr(feature = "schema", schemars(with = "Option<schema::Table>"))]
    pub replay: Option<toml::Spanned<toml::Value>>,
    /// JSON Schema of this file, for editors; ignored by cellguard.
    #[serde(rename = "$schema")]
    pub schema: Option<String>,
}

#[derive(Deserialize)]
struct Pyproject {
    tool: Option<PyprojectTool>,
}

#[derive(Deserialize)]
struct PyprojectTool {
    cellguard: Option<ConfigFile>,
}

/// Stand-ins for types whose JSON Schema is not derived from their own definition.
#[cfg(feature = "schema")]
pub mod schema {
    /// How files are split into cells (mirrors [`crate::extract::ExtractMode`]).
    #[derive(schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    pub enum ExtractMode {
        /// By extension: `.py`/`.pyi` python, `.md`/`.markdown` markdown, `.txt`/`.json` response,
        /// `.jsonl`/`.ndjson` JSON Lines.
        Auto,
        /// The whole file is one cell.
        Python,
        /// Every `python`/`py` fenced block is a cell.
        Markdown,
        /// A raw LLM response, extracted as Colony/smolagents do.
        Response,
        /// JSON Lines: the `code` string of each line's object is a cell.
        Jsonl,
    }

    /// The REPL namespace preset.
    #[derive(schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    pub enum NamespacePreset {
        /// Colony's REPL: `run`, `browse`, `signal_completion`, ... (colony-reference §2.1).
        Colony,
        /// smolagents' CodeAgent: `final_answer` plus the knowledge base's tools.
        Smolagents,
        /// No pre-bound names.
        None,
    }

    /// A table whose keys are checked by the engine that reads it (replay, guardrails).
    pub type Table = serde_json::Map<String, serde_json::Value>;
}

/// One step of a path into a TOML document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TomlPath<'a> {
    /// A table key.
    Key(&'a str),
    /// An array index.
    Index(usize),
}

/// Byte offset in `text` of the value at `path` (e.g. `lint`, `select`, index 2), or `None` when
/// the text does not parse or has no such value. In a `pyproject.toml`, `path` is relative to
/// `[tool.cellguard]`.
pub fn locate(text: &str, is_pyproject: bool, path: &[TomlPath]) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let root = DeTable::parse(text).ok()?;
    let prefix = if is_pyproject {
        &[TomlPath::Key("tool"), TomlPath::Key("cellguard")][..]
    } else {
        &[][..]
    };
    let mut steps = prefix.iter().chain(path.iter());
    let first = match steps.next()? {
        TomlPath::Key(k) => root.get_ref().iter().find(|(key, _)| key.get_ref() == k)?.1,
        TomlPath::Index(_) => return None,
    };
    let mut cur = first;
    for step in steps {
        cur = match (step, cur.get_ref()) {
            (TomlPath::Key(k), DeValue::Table(t)) => {
                t.iter().find(|(key, _)| key.get_ref() == k)?.1
            }
            (TomlPath::Index(i), DeValue::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(cur.span().start)
}

fn is_pyproject(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()) == Some("pyproject.toml")
}

/// A parsed config file and where it came from.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    /// The file.
    pub path: PathBuf,
    /// Its text (spans in `file` index into it).
    pub text: String,
    /// The parsed content, after `extend` was applied.
    pub file: ConfigFile,
    /// Files inherited through `extend`, nearest first.
    pub extended: Vec<PathBuf>,
}

fn toml_error(path: &Path, text: &str, e: toml::de::Error) -> ConfigError {
    ConfigError::at(
        path,
        text,
        e.span().map(|s| s.start),
        e.message().trim().to_string(),
    )
}

/// Parses one config file (a `pyproject.toml` without `[tool.cellguard]` gives `Ok(None)`),
/// following `extend`.
///
/// Errors: unreadable file, TOML syntax, unknown keys or wrong types (with line:col), an
/// `extend` cycle.
pub fn load_file(path: &Path) -> Result<Option<LoadedConfig>, ConfigError> {
    load_file_inner(path, &mut Vec::new())
}

fn load_file_inner(
    path: &Path,
    seen: &mut Vec<PathBuf>,
) -> Result<Option<LoadedConfig>, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::plain(path, format!("cannot read config: {e}")))?;
    let file = if is_pyproject(path) {
        match toml::from_str::<Pyproject>(&text) {
            Ok(p) => match p.tool.and_then(|t| t.cellguard) {
                Some(c) => c,
                None => return Ok(None),
            },
            Err(e) => return Err(toml_error(path, &text, e)),
        }
    } else {
        toml::from_str::<ConfigFile>(&text).map_err(|e| toml_error(path, &text, e))?
    };
    validate_file(&file, path, &text)?;
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if seen.contains(&canonical) {
        return Err(ConfigError::plain(path, "`extend` forms a cycle"));
    }
    seen.push(canonical);
    let mut loaded = LoadedConfig {
        path: path.to_path_buf(),
        text,
        file,
        extended: Vec::new(),
    };
    if let Some(ext) = loaded.file.extend.clone() {
        let base_path = path.parent().unwrap_or(Path::new(".")).join(&ext);
        let offset = locate(&loaded.text, is_pyproject(path), &[TomlPath::Key("extend")]);
        if !base_path.exists() {
            return Err(ConfigError::at(
                path,
                &loaded.text,
                offset,
                format!("`extend` target `{ext}` does not exist"),
            ));
        }
        let Some(base) = load_file_inner(&base_path, seen)? else {
            return Err(ConfigError::at(
                path,
                &loaded.text,
                offset,
                format!("`extend` target `{ext}` has no cellguard configuration"),
            ));
        };
        loaded.extended.push(base.path.clone());
        loaded.extended.extend(base.extended.iter().cloned());
        let base_dir = base.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let mut base_file = base.file;
        // KB paths stay relative to the file that names them.
        if let Some(kbs) = &mut base_file.knowledge_base {
            for k in kbs.iter_mut() {
                *k = base_dir.join(&*k).to_string_lossy().into_owned();
            }
        }
        loaded.file = overlay(base_file, loaded.file);
    }
    Ok(Some(loaded))
}

/// `child` keys win over `base` keys, table by table.
fn overlay(base: ConfigFile, child: ConfigFile) -> ConfigFile {
    let lint = match (base.lint, child.lint) {
        (Some(b), Some(c)) => Some(LintSection {
            select: c.select.or(b.select),
            extend_select: c.extend_select.or(b.extend_select),
            ignore: c.ignore.or(b.ignore),
            allow_inline_suppressions: c.allow_inline_suppressions.or(b.allow_inline_suppressions),
            imports: match (b.imports, c.imports) {
                (Some(bi), Some(ci)) => Some(ImportsSection {
                    allow: ci.allow.or(bi.allow),
                    extend_allow: ci.extend_allow.or(bi.extend_allow),
                    deny_members: ci.deny_members.or(bi.deny_members),
                    extend_deny_members: ci.extend_deny_members.or(bi.extend_deny_members),
                }),
                (b, c) => c.or(b),
            },
            shape: match (b.shape, c.shape) {
                (Some(bs), Some(cs)) => Some(ShapeSection {
                    max_actions: cs.max_actions.or(bs.max_actions),
                    max_browse: cs.max_browse.or(bs.max_browse),
                    max_lines: cs.max_lines.or(bs.max_lines),
                }),
                (b, c) => c.or(b),
            },
        }),
        (b, c) => c.or(b),
    };
    ConfigFile {
        profile: child.profile.or(base.profile),
        dialect: child.dialect.or(base.dialect),
        knowledge_base: child.knowledge_base.or(base.knowledge_base),
        extend: child.extend,
        rule_docs_url: child.rule_docs_url.or(base.rule_docs_url),
        extract: child.extract.or(base.extract),
        lint,
        namespace: child.namespace.or(base.namespace),
        guardrails: child.guardrails.or(base.guardrails),
        policies: child.policies.or(base.policies),
        replay: child.replay.or(base.replay),
        schema: child.schema.or(base.schema),
    }
}

/// Config file names looked for in each directory, in order of preference.
pub const CONFIG_NAMES: [&str; 3] = [".cellguard.toml", "cellguard.toml", "pyproject.toml"];

/// Finds the closest config for `path` (a file or directory), walking up to the filesystem root.
pub fn discover(path: &Path) -> Result<Option<LoadedConfig>, ConfigError> {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut dir = if abs.is_dir() {
        Some(abs.as_path())
    } else {
        abs.parent()
    };
    while let Some(d) = dir {
        for name in CONFIG_NAMES {
            let candidate = d.join(name);
            if candidate.is_file() {
                if let Some(c) = load_file(&candidate)? {
                    return Ok(Some(c));
                }
            }
        }
        dir = d.parent();
    }
    Ok(None)
}

/// Command-line overrides, applied on top of whatever file is in effect.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--profile`.
    pub profile: Option<Profile>,
    /// `--dialect`.
    pub dialect: Option<Dialect>,
    /// `--select` (replaces the file's select).
    pub select: Option<Vec<String>>,
    /// `--extend-select`.
    pub extend_select: Vec<String>,
    /// `--ignore` (added to the file's ignore).
    pub ignore: Vec<String>,
    /// `--kb` paths (relative to the working directory), added to the file's.
    pub knowledge_base: Vec<PathBuf>,
    /// `--extract`.
    pub extract: Option<crate::extract::ExtractMode>,
    /// The editor's `ruleDocsUrl` (replaces the file's `rule-docs-url`).
    pub rule_docs_url: Option<String>,
    /// Where these overrides come from, named in their errors in place of a file path:
    /// `<command line>` when `None`; the language server says `editor settings`.
    pub origin: Option<String>,
}

/// The REPL namespace a cell runs in.
#[derive(Debug, Clone, PartialEq)]
pub struct Namespace {
    /// The action-dispatch function (`run`), `None` in the functions dialect.
    pub run: Option<String>,
    /// Every name bound before the cell runs (functions, modules, values).
    pub names: BTreeSet<String>,
    /// Names that are coroutine functions and must be awaited.
    pub async_names: BTreeSet<String>,
    /// Modules pre-bound as names (`json`, `re`, ...).
    pub modules: BTreeSet<String>,
    /// True when the runtime's restricted builtins make every `import` and `class` fail
    /// (Colony, colony-reference §2.7).
    pub imports_fail_at_runtime: bool,
}

/// Colony's allowlist (ImportWhitelistValidator.ALLOWED_IMPORTS, colony-reference §3.3).
pub const COLONY_ALLOWED_IMPORTS: [&str; 11] = [
    "json",
    "re",
    "math",
    "itertools",
    "functools",
    "collections",
    "dataclasses",
    "typing",
    "datetime",
    "pydantic",
    "asyncio",
];

/// smolagents' `BASE_BUILTIN_MODULES` (corpus kb/smolagents/default_tools.json).
pub const SMOLAGENTS_BASE_BUILTIN_MODULES: [&str; 11] = [
    "collections",
    "datetime",
    "itertools",
    "math",
    "queue",
    "random",
    "re",
    "stat",
    "statistics",
    "time",
    "unicodedata",
];

impl Namespace {
    /// Colony's REPL namespace (colony-reference §2.1).
    pub fn colony() -> Self {
        let names = [
            "run",
            "browse",
            "signal_completion",
            "switch_mode",
            "log",
            "results",
            "params",
            "goals",
            "pages",
            "bb",
            "_run_call_trace",
            "json",
            "re",
            "math",
            "itertools",
            "functools",
            "defaultdict",
            "Counter",
            "dataclass",
            "submit_action",
            "Action",
            "ActionType",
            "ActionResult",
            "Ref",
            "_agent",
            "agent_id",
            "_repl",
            "In",
            "Out",
            "_",
            "__",
            "___",
            "_ih",
            "_oh",
            "_dh",
            "exit",
            "quit",
            "open",
            "get_ipython",
            "__builtin__",
            "__name__",
        ];
        Namespace {
            run: Some("run".into()),
            names: names.iter().map(|s| s.to_string()).collect(),
            async_names: ["run", "browse", "signal_completion"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            modules: ["json", "re", "math", "itertools", "functools"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            imports_fail_at_runtime: true,
        }
    }

    /// smolagents' CodeAgent namespace: `final_answer`, the tools of the KB, and the bare math
    /// functions its executor adds to the builtins (`BASE_PYTHON_TOOLS`: `ceil`, `sqrt`, ...;
    /// corpus kb/smolagents/default_tools.json).
    pub fn smolagents() -> Self {
        let names = [
            "final_answer",
            "ceil",
            "floor",
            "log",
            "exp",
            "sin",
            "cos",
            "tan",
            "asin",
            "acos",
            "atan",
            "atan2",
            "degrees",
            "radians",
            "sqrt",
        ];
        Namespace {
            run: None,
            names: names.iter().map(|s| s.to_string()).collect(),
            async_names: BTreeSet::new(),
            modules: BTreeSet::new(),
            imports_fail_at_runtime: false,
        }
    }

    /// No pre-bound names.
    pub fn empty() -> Self {
        Namespace {
            run: None,
            names: BTreeSet::new(),
            async_names: BTreeSet::new(),
            modules: BTreeSet::new(),
            imports_fail_at_runtime: false,
        }
    }
}

/// Rule selection after `select`, `extend-select` and `ignore`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSelection {
    enabled: BTreeSet<&'static str>,
}

impl RuleSelection {
    /// Every rule.
    pub fn all() -> Self {
        Self {
            enabled: crate::rules::all_rules().map(|r| r.code).collect(),
        }
    }

    /// True when `rule` is enabled.
    pub fn is_enabled(&self, rule: &Rule) -> bool {
        self.enabled.contains(rule.code)
    }

    /// True when the code is enabled.
    pub fn is_code_enabled(&self, code: &str) -> bool {
        self.enabled.contains(code)
    }

    /// Codes enabled, sorted.
    pub fn codes(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.enabled.iter().copied()
    }
}

/// True when `selector` (a code, a prefix such as `API` or `API00`, a kebab-case rule name
/// such as `unknown-action`, or `ALL`; case-insensitive) matches `rule`.
pub fn selector_matches(selector: &str, rule: &Rule) -> bool {
    let s = selector.trim();
    !s.is_empty()
        && (s.eq_ignore_ascii_case("ALL")
            || rule.code.starts_with(&s.to_ascii_uppercase())
            || rule.name.eq_ignore_ascii_case(s))
}

/// Checks what serde cannot: rule selectors exist and the namespace preset is known. Errors
/// point at the offending array item or value.
fn validate_file(file: &ConfigFile, path: &Path, text: &str) -> Result<(), ConfigError> {
    let pyproject = is_pyproject(path);
    if let Some(lint) = &file.lint {
        for (key, list) in [
            ("select", &lint.select),
            ("extend-select", &lint.extend_select),
            ("ignore", &lint.ignore),
            ("allow-inline-suppressions", &lint.allow_inline_suppressions),
        ] {
            for (i, sel) in list.iter().flatten().enumerate() {
                if !is_known_selector(sel) {
                    let at = locate(
                        text,
                        pyproject,
                        &[
                            TomlPath::Key("lint"),
                            TomlPath::Key(key),
                            TomlPath::Index(i),
                        ],
                    );
                    return Err(ConfigError::at(
                        path,
                        text,
                        at,
                        unknown_selector_message(sel),
                    ));
                }
            }
        }
    }
    if let Some(preset) = file.namespace.as_ref().and_then(|n| n.preset.as_deref()) {
        if !matches!(preset, "colony" | "smolagents" | "none") {
            let at = locate(
                text,
                pyproject,
                &[TomlPath::Key("namespace"), TomlPath::Key("preset")],
            );
            return Err(ConfigError::at(
                path,
                text,
                at,
                unknown_preset_message(preset),
            ));
        }
    }
    Ok(())
}

fn unknown_selector_message(s: &str) -> String {
    format!(
        "unknown rule selector `{s}` (expected a code such as `API001`, a prefix such as `API`, a rule name, or `ALL`)"
    )
}

fn unknown_preset_message(p: &str) -> String {
    format!("unknown namespace preset `{p}` (expected `colony`, `smolagents` or `none`)")
}

/// True when `selector` matches at least one rule.
pub fn is_known_selector(selector: &str) -> bool {
    crate::rules::all_rules().any(|r| selector_matches(selector, r))
}

fn check_selectors(selectors: &[String], origin: &Path) -> Result<(), ConfigError> {
    match selectors.iter().find(|s| !is_known_selector(s)) {
        Some(s) => Err(ConfigError::plain(origin, unknown_selector_message(s))),
        None => Ok(()),
    }
}

/// A valid dotted module name, optionally ending in `.*` (an allowlist entry).
fn is_module_pattern(s: &str) -> bool {
    let s = s.strip_suffix(".*").unwrap_or(s);
    !s.is_empty()
        && s.split('.').all(|part| {
            let mut chars = part.chars();
            chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
                && chars.all(|c| c.is_alphanumeric() || c == '_')
        })
}

/// One layer of rule selection (ruff's semantics): a `select` replaces everything selected
/// before it; within the layer the most specific selector between `select`/`extend-select`
/// and `ignore` wins, `ignore` winning ties.
struct SelectionLayer<'a> {
    select: Option<&'a [String]>,
    extend_select: &'a [String],
    ignore: &'a [String],
}

impl SelectionLayer<'_> {
    fn apply(&self, enabled: &mut BTreeSet<&'static str>) {
        for rule in crate::rules::all_rules() {
            let best_select = self
                .select
                .unwrap_or_default()
                .iter()
                .chain(self.extend_select)
                .filter(|s| selector_matches(s, rule))
                .map(|s| spec_len(s))
                .max();
            let best_ignore = self
                .ignore
                .iter()
                .filter(|s| selector_matches(s, rule))
                .map(|s| spec_len(s))
                .max();
            let before = self.select.is_none() && enabled.contains(rule.code);
            let on = match (best_select, best_ignore) {
                (Some(s), Some(i)) => s > i,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => before,
            };
            if on {
                enabled.insert(rule.code);
            } else {
                enabled.remove(rule.code);
            }
        }
    }
}

/// Everything the rules need, resolved from a config file, presets and overrides.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Profile.
    pub profile: Profile,
    /// Dialect.
    pub dialect: Dialect,
    /// Enabled rules.
    pub rules: RuleSelection,
    /// Allowed modules (see [`ImportsSection::allow`]).
    pub allowed_imports: Vec<String>,
    /// Forbidden members of allowed modules.
    pub deny_members: Vec<String>,
    /// Shape limits.
    pub max_actions: u32,
    /// Shape limits.
    pub max_browse: u32,
    /// Shape limits.
    pub max_lines: u32,
    /// The REPL namespace.
    pub namespace: Namespace,
    /// Extraction mode.
    pub extract: crate::extract::ExtractMode,
    /// Warnings about the configuration itself (e.g. `*` in the allowlist), with file:line:col.
    pub warnings: Vec<ConfigError>,
    /// Protected codes (see [`is_protected_from_inline_suppression`]) that the configuration
    /// lets suppression comments silence anyway (`[lint] allow-inline-suppressions`).
    pub inline_suppressible: BTreeSet<&'static str>,
    /// The `rule-docs-url` template (see [`crate::rule_docs::rule_doc_url`]); `None` when
    /// unset.
    pub rule_docs_url: Option<String>,
}

/// True for the rules a suppression comment inside the checked cell cannot silence unless
/// `[lint] allow-inline-suppressions` lists them: the sandbox family `SBX`, the import
/// allowlist's security findings `IMP001` (import outside the allowlist) and `IMP002`
/// (relative import), and `CG005`, the finding about a comment that tries.
/// The cell is written by the model (or whoever injected its prompt), the party these rules
/// guard the host against, so its own comments cannot be trusted to turn them off.
pub fn is_protected_from_inline_suppression(rule: &Rule) -> bool {
    rule.code.starts_with("SBX") || matches!(rule.code, "IMP001" | "IMP002" | "CG005")
}

/// True for the rules that no comment can silence, whatever `[lint] allow-inline-suppressions`
/// says: `SYN001`. A cell that does not parse never runs (every Colony validator answers
/// `Syntax error: ...`), and every other rule saw only the part of it that parsed, so a `# noqa`
/// that hid the syntax error would pass a cell that cannot run and whose other findings are
/// unknown. ruff likewise never lets `# noqa` hide a syntax error. Only the configuration
/// (`ignore`, `--ignore`) turns `SYN001` off. A comment naming it suppresses nothing and is
/// reported as unused (`CG001`), not as an attack (`CG005`): a syntax error is no security
/// finding.
pub fn is_unsuppressible_by_comment(rule: &Rule) -> bool {
    rule.code == "SYN001"
}

impl Settings {
    /// The documentation URL of `rule` under these settings (see [`crate::rule_docs`]).
    pub fn rule_doc_url(&self, rule: &Rule) -> Option<String> {
        crate::rule_docs::rule_doc_url(rule, self.rule_docs_url.as_deref())
    }

    /// True when a suppression comment in the checked file may silence `rule`: any rule that is
    /// not protected ([`is_protected_from_inline_suppression`]), and the protected ones listed
    /// in `[lint] allow-inline-suppressions`; never `SYN001` ([`is_unsuppressible_by_comment`]).
    pub fn inline_suppressible(&self, rule: &Rule) -> bool {
        !is_unsuppressible_by_comment(rule)
            && (!is_protected_from_inline_suppression(rule)
                || self.inline_suppressible.contains(rule.code))
    }
}

/// Default members of allowed modules that reach the host (spec §2 `SBX`, rule SBX007). The
/// same objects reached under other names (`asyncio.subprocess.create_subprocess_exec`,
/// `pydantic.types.ImportString`) are matched through the reachability table;
/// `asyncio.AbstractEventLoop.*` stands for the methods of any event loop
/// (`asyncio.get_running_loop().subprocess_shell`), and the `asyncio.*.name` globs catch the
/// same methods reached through a loop class (`asyncio.base_events.BaseEventLoop.subprocess_shell`).
///
/// What each group does: processes (`create_subprocess_*`, `subprocess_*`), network
/// (`open_connection`, `start_server`, `create_connection`, `create_server`, `sock_connect`,
/// the other `sock_*` socket calls, `start_tls`, `getaddrinfo`, `getnameinfo`), file I/O (`sendfile`, pydantic's `parse_file`, numpy's loaders and savers),
/// imports by name (`pydantic.ImportString`, pydantic v1's `PyObject`), pickle loading
/// (`pydantic.deprecated.parse.load_str_bytes`, `pickle.loads` under `allow_pickle=True`; the
/// same methods on any model are reported by `rules/deserialize.rs`), and code that runs later
/// in the host, outside the cell's limits (`call_soon`, `call_soon_threadsafe`, `call_later`,
/// `call_at`, `run_in_executor`, `asyncio.to_thread`, signal and fd callbacks, task factories
/// and exception handlers installed on the host's loop, `atexit.register`, `threading.Timer`,
/// `weakref.finalize`); every `_private` member of an event loop (`_make_subprocess_transport`
/// spawns a process, `_run_once`/`_ready` drive the host's loop); also a task's host frames
/// (`get_stack`, `print_stack`), pydantic's path types (`FilePath`, `DirectoryPath`, `NewPath`
/// hand out `pathlib.Path` objects) and pydantic v1's `BaseSettings` (reads the host's
/// environment) and `import_string`; and the host-reading members of otherwise plain modules:
/// `os.path.expanduser`/`expandvars` (the host's environment and user database),
/// `uuid.getnode`/`uuid1` (the host's MAC address) and `zoneinfo.reset_tzpath` (points tzdata
/// lookups at a cell-chosen directory); `os.path`'s readers of the host's working directory
/// (`abspath`, `realpath`, `relpath`) and its probes of the host's file system (`exists`,
/// `isfile`, `isdir`, `islink`, `ismount`, `getsize`, `getmtime`, `samefile`, ...), so that an
/// `os.path` allowance means path-string arithmetic (`join`, `splitext`, `basename`,
/// `normpath`); and the functions that change state the host process shares with every cell:
/// `random.seed`/`setstate`/`getstate` (the host's global RNG, whose state predicts the host's
/// later draws; a cell's own `random.Random(seed)` stays usable), `time.tzset`, `decimal.setcontext`, `warnings.filterwarnings`/`simplefilter`/
/// `resetwarnings` and `logging.disable`/`basicConfig` (the same kind of host mutation as
/// `json.dumps = f`, `SBX005`, but made by a call).
///
/// The host loop's own state is denied the same way, because the loop and its policy are the
/// host's (Colony runs every cell on the host's running loop): `stop`, `close`, `set_debug`,
/// `run_forever`, `set_task_factory`, `set_exception_handler`, `set_default_executor`,
/// `shutdown_asyncgens`, `shutdown_default_executor`, `call_exception_handler` and the
/// `remove_reader`/`remove_writer`/`remove_signal_handler` counterparts of the callback
/// installers (they silence the host's own sockets and signals) on a loop,
/// `asyncio.set_event_loop_policy`, `asyncio.set_event_loop` and a policy's `set_event_loop`, and
/// the child watchers (`asyncio.get_child_watcher`, `set_child_watcher`, a watcher's
/// `add_child_handler`/`attach_loop`: the watcher calls the cell's callback from a host thread),
/// `asyncio.run_coroutine_threadsafe` (schedules a coroutine on a loop from outside it), and
/// `asyncio.all_tasks` (hands out the host's tasks, which the cell could cancel or complete),
/// and a task's `get_context` (`asyncio.current_task().get_context()` is the host task's
/// `contextvars.Context`: its items are the host's context variables, which the cell could read
/// or set for the host code that runs after it; round 8 S8-14), and the private state of a
/// policy, task or future (`asyncio.get_event_loop_policy()._local._loop` is the host's
/// loop, `fut._loop`, `task._coro`; round 7 S7-15).
/// The `asyncio.*.name` globs catch the same functions reached through the submodule that
/// defines them (`asyncio.threads.to_thread`, `asyncio.events.set_event_loop`).
///
/// Private standard-library modules re-export host objects under other names: `_weakrefset.ref`
/// and `_threading_local.ref` are `weakref.ref` (a callback the host's garbage collector runs
/// after the cell, like `weakref.finalize`), `_threading_local.current_thread` hands out the
/// host's threads (round 4 G23); allowing such a module also gets a configuration warning.
///
/// `call_soon` is denied like `call_later(0, ...)`: the callback runs on the host's loop after
/// the cell's current step, whether or not the cell awaits anything, so it outlives the cell's
/// checks and limits. Resolving a future needs no callback: `fut.set_result(x)` directly.
pub const DEFAULT_DENY_MEMBERS: &[&str] = &[
    "asyncio.create_subprocess_exec",
    "asyncio.create_subprocess_shell",
    "asyncio.open_connection",
    "asyncio.open_unix_connection",
    "asyncio.start_server",
    "asyncio.start_unix_server",
    "asyncio.AbstractEventLoop.subprocess_exec",
    "asyncio.AbstractEventLoop.subprocess_shell",
    "asyncio.AbstractEventLoop.create_connection",
    "asyncio.AbstractEventLoop.create_server",
    "asyncio.AbstractEventLoop.create_unix_connection",
    "asyncio.AbstractEventLoop.create_unix_server",
    "asyncio.AbstractEventLoop.create_datagram_endpoint",
    "asyncio.AbstractEventLoop.connect_read_pipe",
    "asyncio.AbstractEventLoop.connect_write_pipe",
    "asyncio.AbstractEventLoop.connect_accepted_socket",
    "asyncio.AbstractEventLoop.sock_connect",
    "asyncio.AbstractEventLoop.sendfile",
    "asyncio.AbstractEventLoop.sock_sendfile",
    "asyncio.AbstractEventLoop.getaddrinfo",
    "asyncio.AbstractEventLoop.getnameinfo",
    "asyncio.AbstractEventLoop.sock_accept",
    "asyncio.AbstractEventLoop.sock_recv",
    "asyncio.AbstractEventLoop.sock_recv_into",
    "asyncio.AbstractEventLoop.sock_recvfrom",
    "asyncio.AbstractEventLoop.sock_recvfrom_into",
    "asyncio.AbstractEventLoop.sock_sendall",
    "asyncio.AbstractEventLoop.sock_sendto",
    "asyncio.AbstractEventLoop.start_tls",
    "asyncio.AbstractEventLoop.run_in_executor",
    "asyncio.AbstractEventLoop.call_later",
    "asyncio.AbstractEventLoop.call_at",
    "asyncio.AbstractEventLoop.call_soon",
    "asyncio.AbstractEventLoop.call_soon_threadsafe",
    "asyncio.AbstractEventLoop.add_signal_handler",
    "asyncio.AbstractEventLoop.add_reader",
    "asyncio.AbstractEventLoop.add_writer",
    "asyncio.AbstractEventLoop.remove_reader",
    "asyncio.AbstractEventLoop.remove_writer",
    "asyncio.AbstractEventLoop.remove_signal_handler",
    "asyncio.AbstractEventLoop.set_task_factory",
    "asyncio.AbstractEventLoop.set_exception_handler",
    "asyncio.AbstractEventLoop.set_default_executor",
    "asyncio.AbstractEventLoop.stop",
    "asyncio.AbstractEventLoop.close",
    "asyncio.AbstractEventLoop.set_debug",
    "asyncio.AbstractEventLoop.run_forever",
    "asyncio.AbstractEventLoop.shutdown_asyncgens",
    "asyncio.AbstractEventLoop.shutdown_default_executor",
    "asyncio.AbstractEventLoop.call_exception_handler",
    "asyncio.AbstractEventLoop._make_subprocess_transport",
    "asyncio.AbstractEventLoop._*",
    "asyncio.AbstractEventLoopPolicy.set_event_loop",
    "asyncio.AbstractEventLoopPolicy.get_child_watcher",
    "asyncio.AbstractEventLoopPolicy.set_child_watcher",
    "asyncio.AbstractEventLoopPolicy._*",
    "asyncio.Task._*",
    "asyncio.Future._*",
    "asyncio.to_thread",
    "asyncio.run_coroutine_threadsafe",
    "asyncio.set_event_loop_policy",
    "asyncio.set_event_loop",
    "asyncio.all_tasks",
    "asyncio.Task.get_context",
    "asyncio.*.Task.get_context",
    "asyncio.*.to_thread",
    "asyncio.*.run_coroutine_threadsafe",
    "asyncio.*.set_event_loop_policy",
    "asyncio.*.set_event_loop",
    "asyncio.*.all_tasks",
    "asyncio.get_child_watcher",
    "asyncio.set_child_watcher",
    "asyncio.*.get_child_watcher",
    "asyncio.*.set_child_watcher",
    "asyncio.*.add_child_handler",
    "asyncio.*.attach_loop",
    "asyncio.*.subprocess_exec",
    "asyncio.*.subprocess_shell",
    "asyncio.*.create_connection",
    "asyncio.*.create_server",
    "asyncio.*.create_unix_connection",
    "asyncio.*.create_unix_server",
    "asyncio.*.create_datagram_endpoint",
    "asyncio.*.connect_read_pipe",
    "asyncio.*.connect_write_pipe",
    "asyncio.*.connect_accepted_socket",
    "asyncio.*.sock_connect",
    "asyncio.*.sendfile",
    "asyncio.*.getaddrinfo",
    "asyncio.*.getnameinfo",
    "asyncio.*.sock_accept",
    "asyncio.*.sock_recv",
    "asyncio.*.sock_recv_into",
    "asyncio.*.sock_recvfrom",
    "asyncio.*.sock_recvfrom_into",
    "asyncio.*.sock_sendall",
    "asyncio.*.sock_sendto",
    "asyncio.*.start_tls",
    "asyncio.*.remove_reader",
    "asyncio.*.remove_writer",
    "asyncio.*.remove_signal_handler",
    "asyncio.*.shutdown_asyncgens",
    "asyncio.*.shutdown_default_executor",
    "asyncio.*.call_exception_handler",
    "asyncio.*.run_in_executor",
    "asyncio.*.call_later",
    "asyncio.*.call_at",
    "asyncio.*.call_soon",
    "asyncio.*.call_soon_threadsafe",
    "asyncio.*.add_signal_handler",
    "asyncio.*.set_task_factory",
    "asyncio.*.set_exception_handler",
    "asyncio.*.set_default_executor",
    "asyncio.*EventLoop.stop",
    "asyncio.*EventLoop.close",
    "asyncio.*EventLoop.set_debug",
    "asyncio.*EventLoop.run_forever",
    "asyncio.*._make_subprocess_transport",
    "asyncio.*EventLoop._*",
    "asyncio.*.get_stack",
    "asyncio.*.print_stack",
    "pydantic.ImportString",
    "pydantic.types.ImportString",
    "pydantic.v1.PyObject",
    "pydantic.v1.types.PyObject",
    "pydantic.*parse_file*",
    "pydantic.*load_file",
    "pydantic.*load_str_bytes",
    "pydantic.*FilePath",
    "pydantic.*DirectoryPath",
    "pydantic.*NewPath",
    "pydantic.*PathType",
    "pydantic.v1.BaseSettings",
    "pydantic.v1.env_settings.*",
    "pydantic.v1.utils.import_string",
    // `getattr_migration(module)(name)` is `sys.modules[module].__dict__[name]` (round 6 S6-13).
    "pydantic.*getattr_migration",
    // `GetterDict(obj)[key]` is `getattr(obj, key)` for any key (round 6 S6-11).
    "pydantic.*GetterDict",
    // `types` internals re-exported by pydantic v1 and `dataclasses`: code objects from bytes,
    // functions from them, classes whose namespace a callback fills (round 6 S6-6).
    "pydantic.*CodeType",
    "pydantic.*FunctionType",
    "pydantic.*new_class",
    "pydantic.*prepare_class",
    "pydantic.*resolve_bases",
    "pydantic.*ModuleType",
    "dataclasses.FunctionType",
    // `python -m json.tool` inside the host: the host's `sys.argv`, files, `sys.exit` (S6-31).
    "json.tool.main",
    // Empties `typing`'s process-wide overload registry (round 6 S6-28).
    "typing.clear_overloads",
    // asyncio's `logging.Logger` instance: the host's handlers, streams and logging switches
    // (round 6 S6-19).
    "asyncio.*.logger",
    "os.path.expanduser",
    "os.path.expandvars",
    "genericpath.exists",
    "genericpath.isfile",
    "genericpath.isdir",
    "genericpath.islink",
    "genericpath.isjunction",
    "genericpath.getsize",
    "genericpath.getmtime",
    "genericpath.getatime",
    "genericpath.getctime",
    "genericpath.samefile",
    "genericpath.sameopenfile",
    "posixpath.expanduser",
    "posixpath.expandvars",
    "ntpath.expanduser",
    "ntpath.expandvars",
    "os.path.abspath",
    "os.path.realpath",
    "os.path.relpath",
    "os.path.exists",
    "os.path.lexists",
    "os.path.isfile",
    "os.path.isdir",
    "os.path.islink",
    "os.path.ismount",
    "os.path.isjunction",
    "os.path.getsize",
    "os.path.getmtime",
    "os.path.getatime",
    "os.path.getctime",
    "os.path.samefile",
    "os.path.sameopenfile",
    "posixpath.abspath",
    "posixpath.realpath",
    "posixpath.relpath",
    "posixpath.exists",
    "posixpath.lexists",
    "posixpath.isfile",
    "posixpath.isdir",
    "posixpath.islink",
    "posixpath.ismount",
    "posixpath.isjunction",
    "posixpath.getsize",
    "posixpath.getmtime",
    "posixpath.getatime",
    "posixpath.getctime",
    "posixpath.samefile",
    "posixpath.sameopenfile",
    "ntpath.abspath",
    "ntpath.realpath",
    "ntpath.relpath",
    "ntpath.exists",
    "ntpath.lexists",
    "ntpath.isfile",
    "ntpath.isdir",
    "ntpath.islink",
    "ntpath.ismount",
    "ntpath.isjunction",
    "ntpath.getsize",
    "ntpath.getmtime",
    "ntpath.getatime",
    "ntpath.getctime",
    "ntpath.samefile",
    "ntpath.sameopenfile",
    "random.seed",
    "random.setstate",
    "random.getstate",
    "time.tzset",
    "decimal.setcontext",
    "warnings.filterwarnings",
    "warnings.simplefilter",
    "warnings.resetwarnings",
    "logging.disable",
    "logging.basicConfig",
    "uuid.getnode",
    "uuid.uuid1",
    "zoneinfo.reset_tzpath",
    "atexit.register",
    "threading.Timer",
    "weakref.finalize",
    "_weakrefset.ref",
    "_threading_local.ref",
    "_threading_local.current_thread",
    "numpy.load",
    "numpy.save",
    "numpy.savez",
    "numpy.savez_compressed",
    "numpy.savetxt",
    "numpy.loadtxt",
    "numpy.genfromtxt",
    "numpy.fromfile",
    "numpy.memmap",
    "numpy.ctypeslib",
    "numpy.DataSource",
];

/// `[lint.imports]` entries with their byte offsets in the config text, for warnings.
#[derive(Deserialize, Default)]
struct SpanProbe {
    lint: Option<SpanProbeLint>,
    tool: Option<SpanProbeTool>,
}

#[derive(Deserialize)]
struct SpanProbeTool {
    cellguard: Option<Box<SpanProbe>>,
}

#[derive(Deserialize)]
struct SpanProbeLint {
    imports: Option<SpanProbeImports>,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct SpanProbeImports {
    allow: Option<Vec<toml::Spanned<String>>>,
    extend_allow: Option<Vec<toml::Spanned<String>>>,
    deny_members: Option<Vec<toml::Spanned<String>>>,
    extend_deny_members: Option<Vec<toml::Spanned<String>>>,
}

/// Offsets of each `[lint.imports]` list entry (`allow`, `extend-allow`, `deny-members`) in a
/// config text; empty when the text does not parse that way.
fn import_entry_offsets(text: &str) -> Vec<(&'static str, String, usize)> {
    let probe: SpanProbe = toml::from_str(text).unwrap_or_default();
    let imports = match (probe.lint, probe.tool) {
        (Some(l), _) => l.imports,
        (None, Some(t)) => t.cellguard.and_then(|c| c.lint).and_then(|l| l.imports),
        _ => None,
    };
    let mut out = Vec::new();
    if let Some(i) = imports {
        for (key, list) in [
            ("allow", i.allow),
            ("extend-allow", i.extend_allow),
            ("deny-members", i.deny_members),
            ("extend-deny-members", i.extend_deny_members),
        ] {
            for e in list.unwrap_or_default() {
                // The span covers the quotes; point at the first character of the value.
                let offset = e.span().start + 1;
                out.push((key, e.into_inner(), offset));
            }
        }
    }
    out
}

/// Warnings about `[lint.imports]`: `*` (the allowlist is off), entries that let in a
/// host-reaching module (`ctypes`, `os.*`), and deny-members entries that name no member.
fn import_warnings(
    allowed: &[String],
    deny: &[String],
    origin: &Path,
    text: &str,
) -> Vec<ConfigError> {
    let offsets = import_entry_offsets(text);
    let at = |keys: &[&str], value: &str| {
        offsets
            .iter()
            .find(|(k, v, _)| keys.contains(k) && v == value)
            .map(|(_, _, o)| *o)
    };
    let mut warnings = Vec::new();
    let mut seen = BTreeSet::new();
    for entry in allowed {
        let e = entry.trim();
        if !seen.insert(e.to_string()) {
            continue;
        }
        let offset = at(&["allow", "extend-allow"], entry);
        if e == "*" {
            warnings.push(ConfigError::at(
                origin,
                text,
                offset,
                "`*` in the import allowlist allows every module, including `os` and `subprocess`",
            ));
            continue;
        }
        if !is_module_pattern(e) {
            warnings.push(ConfigError::at(
                origin,
                text,
                offset,
                format!(
                    "`{e}` in the import allowlist is not a module name (`a.b` or `a.*`); it matches no import"
                ),
            ));
            continue;
        }
        let module = e.strip_suffix(".*").unwrap_or(e);
        if let Some(why) = crate::rules::sandbox::host_module_entry(module) {
            warnings.push(ConfigError::at(
                origin,
                text,
                offset,
                format!(
                    "`{e}` in the import allowlist lets in a module that reaches the host ({why})"
                ),
            ));
        } else {
            // An entry allows its submodules too (`email` lets in `email.utils`, `a.*` is `a`
            // and below): name the host-reaching ones.
            // By the module's real name: `os.path` is `posixpath`, whose parent is not `os`.
            // Private submodules (`zoneinfo._tzpath`) are not named: SBX005 reports any use.
            let real = crate::rules::sandbox::reach::table().real_name(module);
            let under: Vec<&str> = crate::rules::sandbox::host_modules_under(&real)
                .into_iter()
                .filter(|m| {
                    m.strip_prefix(real.as_str())
                        .is_none_or(|rest| !rest.split('.').any(|p| p.starts_with('_')))
                })
                .collect();
            let table = crate::rules::sandbox::reach::table();
            let root = module.split('.').next().unwrap_or(module);
            if root.starts_with('_')
                && !root.starts_with("__")
                && table.stdlib_modules.contains(root)
                && !table.submodule_aliases.contains_key(root)
            {
                // `_weakrefset`, `_threading_local`, `_strptime`: implementation modules whose
                // members are other modules' objects under new names (`_weakrefset.ref` is
                // `weakref.ref`), which the checks of the public module do not cover. C twins
                // (`_operator` is `operator`) are checked as their public module.
                warnings.push(ConfigError::at(
                    origin,
                    text,
                    offset,
                    format!(
                        "`{e}` in the import allowlist is a private implementation module of the standard library: its members are other modules' objects under other names (`_weakrefset.ref` is `weakref.ref`, `_threading_local.current_thread` hands out the host's threads) that cellguard does not check as the public module's; allow the public module instead"
                    ),
                ));
            }
            if under.is_empty() && !table.stdlib_modules.is_empty() && !table.has_data_for(root) {
                warnings.push(ConfigError::at(
                    origin,
                    text,
                    offset,
                    format!(
                        "`{e}` in the import allowlist is a third-party module cellguard has no reach data for: which of its attributes lead to `os`, `subprocess`, files or code execution is unknown (only its `_private` and host-named attributes are reported); review it, deny its dangerous members with `extend-deny-members`, or add it to tools/gen_sandbox_reach.py"
                    ),
                ));
            }
            if !under.is_empty() {
                let shown: Vec<String> = under.iter().take(5).map(|m| format!("`{m}`")).collect();
                let more = if under.len() > 5 {
                    format!(" and {} more", under.len() - 5)
                } else {
                    String::new()
                };
                let what = if e.ends_with(".*") {
                    "expands to"
                } else {
                    "also allows"
                };
                warnings.push(ConfigError::at(
                    origin,
                    text,
                    offset,
                    format!(
                        "`{e}` in the import allowlist {what} every submodule of `{module}`, including host-reaching ones: {}{more}",
                        shown.join(", ")
                    ),
                ));
            }
        }
    }
    for entry in deny {
        let e = entry.trim();
        if !e.contains('.') || e.starts_with('.') || e.ends_with('.') {
            warnings.push(ConfigError::at(
                origin,
                text,
                at(&["deny-members", "extend-deny-members"], entry),
                format!("deny-members entry `{e}` names no member (expected `module.member`)"),
            ));
        }
    }
    warnings
}

/// The configuration warning for a `deny-members` list that replaces the defaults and leaves
/// out default entries of modules the allowlist lets in (`asyncio.open_connection` when
/// `asyncio` is allowed), or `None` when it keeps them all (exactly or through a glob such as
/// `asyncio.*`). Users who meant to add entries want `extend-deny-members` (ruff's `extend-*`
/// convention); a deliberate replacement is still allowed, the warning only names what it drops.
fn dropped_default_denials(
    replaced: &[String],
    allowed: &[String],
    origin: &Path,
    text: &str,
    pyproject: bool,
) -> Option<ConfigError> {
    use crate::rules::imports::is_allowed;
    use crate::rules::sandbox::check::glob_match;
    let dropped: Vec<&str> = DEFAULT_DENY_MEMBERS
        .iter()
        .copied()
        .filter(|d| {
            let module = d.split('.').next().unwrap_or(d);
            is_allowed(module, allowed)
                && !replaced
                    .iter()
                    .any(|e| e.trim() == *d || glob_match(e.trim(), d))
        })
        .collect();
    if dropped.is_empty() {
        return None;
    }
    let shown: Vec<String> = dropped.iter().take(4).map(|d| format!("`{d}`")).collect();
    let more = if dropped.len() > 4 {
        format!(" and {} more", dropped.len() - 4)
    } else {
        String::new()
    };
    let at = locate(
        text,
        pyproject,
        &[
            TomlPath::Key("lint"),
            TomlPath::Key("imports"),
            TomlPath::Key("deny-members"),
        ],
    );
    Some(ConfigError::at(
        origin,
        text,
        at,
        format!(
            "`deny-members` replaces the default deny list and no longer denies {} default member{} of allowed modules ({}{more}); use `extend-deny-members` to add entries and keep the defaults",
            dropped.len(),
            if dropped.len() == 1 { "" } else { "s" },
            shown.join(", ")
        ),
    ))
}

impl Default for Settings {
    fn default() -> Self {
        Settings::resolve(&ConfigFile::default(), None, &Overrides::default())
            .expect("default settings are valid")
    }
}

impl Settings {
    /// Resolves settings from a parsed file (or defaults) plus overrides.
    ///
    /// Errors: unknown rule selectors, an unknown namespace preset.
    pub fn resolve(
        file: &ConfigFile,
        loaded: Option<&LoadedConfig>,
        ov: &Overrides,
    ) -> Result<Settings, ConfigError> {
        let (origin, text) = match loaded {
            Some(l) => (l.path.clone(), l.text.as_str()),
            None => (PathBuf::from("<defaults>"), ""),
        };
        let lint = file.lint.clone().unwrap_or_default();
        let profile = ov.profile.or(file.profile).unwrap_or_default();
        let dialect = ov.dialect.or(file.dialect).unwrap_or_default();

        let pyproject = loaded.is_some_and(|l| is_pyproject(&l.path));
        if loaded.is_none() {
            // Files read from disk were validated with positions when they were loaded.
            validate_file(file, &origin, text)?;
        }
        let cli = PathBuf::from(ov.origin.as_deref().unwrap_or("<command line>"));
        for list in [
            ov.select.as_ref(),
            Some(&ov.extend_select),
            Some(&ov.ignore),
        ]
        .into_iter()
        .flatten()
        {
            check_selectors(list, &cli)?;
        }
        let mut enabled = BTreeSet::new();
        let all = ["ALL".to_string()];
        for layer in [
            SelectionLayer {
                select: Some(&all),
                extend_select: &[],
                ignore: &[],
            },
            SelectionLayer {
                select: lint.select.as_deref(),
                extend_select: lint.extend_select.as_deref().unwrap_or_default(),
                ignore: lint.ignore.as_deref().unwrap_or_default(),
            },
            SelectionLayer {
                select: ov.select.as_deref(),
                extend_select: &ov.extend_select,
                ignore: &ov.ignore,
            },
        ] {
            layer.apply(&mut enabled);
        }
        let mut warnings = Vec::new();
        if enabled.is_empty() {
            let at = locate(text, pyproject, &[TomlPath::Key("lint")]);
            warnings.push(ConfigError::at(
                &origin,
                text,
                at,
                "the rule selection enables no rule: nothing will be reported",
            ));
        }

        let imports = lint.imports.clone().unwrap_or_default();
        let preset_allow: Vec<String> = match dialect {
            Dialect::Colony => COLONY_ALLOWED_IMPORTS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Dialect::Functions => SMOLAGENTS_BASE_BUILTIN_MODULES
                .iter()
                .map(|s| s.to_string())
                .collect(),
        };
        let mut allowed_imports = imports.allow.clone().unwrap_or(preset_allow);
        allowed_imports.extend(imports.extend_allow.clone().unwrap_or_default());
        let mut deny_members = imports.deny_members.clone().unwrap_or_else(|| {
            // The defaults, plus the generated paths under which allowed modules re-export a
            // host module's class or function (`pydantic.types.Path` is `pathlib.Path`).
            let generated = crate::rules::sandbox::reach::table().host_members.keys();
            DEFAULT_DENY_MEMBERS
                .iter()
                .map(|s| s.to_string())
                .chain(generated.cloned())
                .collect()
        });
        for e in imports.extend_deny_members.clone().unwrap_or_default() {
            if !deny_members.contains(&e) {
                deny_members.push(e);
            }
        }
        warnings.extend(import_warnings(
            &allowed_imports,
            &deny_members,
            &origin,
            text,
        ));
        if let Some(replaced) = &imports.deny_members {
            warnings.extend(dropped_default_denials(
                replaced,
                &allowed_imports,
                &origin,
                text,
                pyproject,
            ));
        }

        let shape = lint.shape.clone().unwrap_or_default();
        let ns_section = file.namespace.clone().unwrap_or_default();
        let mut namespace = match ns_section.preset.as_deref() {
            Some("colony") => Namespace::colony(),
            Some("smolagents") => Namespace::smolagents(),
            Some("none") => Namespace::empty(),
            Some(other) => {
                let at = locate(
                    text,
                    pyproject,
                    &[TomlPath::Key("namespace"), TomlPath::Key("preset")],
                );
                return Err(ConfigError::at(
                    &origin,
                    text,
                    at,
                    unknown_preset_message(other),
                ));
            }
            None => match dialect {
                Dialect::Colony => Namespace::colony(),
                Dialect::Functions => Namespace::smolagents(),
            },
        };
        if let Some(names) = &ns_section.names {
            namespace.names = names.iter().cloned().collect();
        }
        namespace
            .names
            .extend(ns_section.extend_names.clone().unwrap_or_default());
        if let Some(a) = &ns_section.async_names {
            namespace.async_names = a.iter().cloned().collect();
        }
        if let Some(run) = &ns_section.run {
            namespace.run = if run.is_empty() {
                None
            } else {
                Some(run.clone())
            };
        }

        Ok(Settings {
            profile,
            dialect,
            rules: RuleSelection { enabled },
            allowed_imports,
            deny_members,
            max_actions: shape.max_actions.unwrap_or(3),
            max_browse: shape.max_browse.unwrap_or(1),
            max_lines: shape.max_lines.unwrap_or(50),
            namespace,
            extract: ov.extract.or(file.extract).unwrap_or_default(),
            rule_docs_url: ov
                .rule_docs_url
                .clone()
                .or_else(|| file.rule_docs_url.clone()),
            warnings,
            inline_suppressible: crate::rules::all_rules()
                .filter(|r| is_protected_from_inline_suppression(r))
                .filter(|r| {
                    lint.allow_inline_suppressions
                        .iter()
                        .flatten()
                        .any(|s| selector_matches(s, r))
                })
                .map(|r| r.code)
                .collect(),
        })
    }
}

fn spec_len(s: &str) -> usize {
    if s.eq_ignore_ascii_case("ALL") {
        0
    } else {
        s.len()
    }
}

/// Settings plus the knowledge base they name: what checking one file needs.
#[derive(Debug, Clone)]
pub struct Project {
    /// The config file in effect, when any.
    pub config: Option<LoadedConfig>,
    /// Resolved settings.
    pub settings: Settings,
    /// The merged knowledge base.
    pub kb: Arc<KnowledgeBase>,
    /// KB files and directories in effect (absolute or relative to the working directory).
    pub kb_paths: Vec<PathBuf>,
}

impl Project {
    /// True when a change of `path` (created, changed or deleted) can change this project's
    /// knowledge base: `path` is one of the KB inputs, or a Python source or a top-level
    /// `*.json`/`*.jsonl` file under a KB directory. The language server calls
    /// [`Resolver::clear`] on such changes.
    pub fn kb_depends_on(&self, path: &Path) -> bool {
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let path = abs(path);
        self.kb_paths.iter().any(|k| {
            let k = abs(k);
            if path == k {
                return true;
            }
            let Ok(rel) = path.strip_prefix(&k) else {
                return false;
            };
            crate::kb::scan::is_python_path(&path)
                || (rel.components().count() == 1
                    && matches!(
                        path.extension().and_then(|e| e.to_str()),
                        Some("json" | "jsonl")
                    ))
        })
    }

    /// Builds a project from an optional config and overrides, loading the knowledge base.
    ///
    /// Errors: settings errors, and KB files that cannot be loaded (reported at the config line
    /// naming them).
    pub fn load(config: Option<LoadedConfig>, ov: &Overrides) -> Result<Project, ConfigError> {
        Self::load_with_cache(config, ov, None)
    }

    /// [`Project::load`] re-using the parse of unchanged Python sources of the KB from `cache`
    /// (see [`crate::kb::ScanCache`]). KB warnings (scan findings such as a bare
    /// `@action_executor`, and conflicting definitions of one key) are added to
    /// [`Settings::warnings`].
    ///
    /// Errors: as [`Project::load`].
    pub fn load_with_cache(
        config: Option<LoadedConfig>,
        ov: &Overrides,
        cache: Option<&crate::kb::ScanCache>,
    ) -> Result<Project, ConfigError> {
        let file = config.as_ref().map(|c| c.file.clone()).unwrap_or_default();
        let mut settings = Settings::resolve(&file, config.as_ref(), ov)?;
        let (kb, kb_paths, kb_warnings) =
            load_project_kb(config.as_ref(), &file, ov, settings.dialect, cache)?;
        settings.warnings.extend(kb_warnings);
        Ok(Project {
            config,
            settings,
            kb: Arc::new(kb),
            kb_paths,
        })
    }
}

/// What `cellguard replay` needs of a project: the profile and the knowledge base. Unlike
/// [`Project`] it does not resolve the lint settings (rule selection, import allowlist,
/// namespace), whose validation costs a noticeable part of replaying a small trace and whose
/// warnings replay does not show.
#[derive(Debug, Clone)]
pub struct ReplayProject {
    /// `--profile`, else the file's `profile`, else the default.
    pub profile: Profile,
    /// The merged knowledge base, as [`Project::load`] builds it for the same inputs.
    pub kb: Arc<KnowledgeBase>,
}

impl ReplayProject {
    /// Loads the profile and knowledge base of an optional config plus overrides.
    ///
    /// Errors: as [`Project::load`] for the knowledge base (a missing or unreadable KB file,
    /// reported at the config line naming it). Lint settings errors cannot occur here: a file
    /// read from disk was validated when it was loaded, and replay passes no rule selectors.
    pub fn load(config: Option<&LoadedConfig>, ov: &Overrides) -> Result<Self, ConfigError> {
        let default_file = ConfigFile::default();
        let file = config.map(|c| &c.file).unwrap_or(&default_file);
        let profile = ov.profile.or(file.profile).unwrap_or_default();
        let dialect = ov.dialect.or(file.dialect).unwrap_or_default();
        let (kb, _, _) = load_project_kb(config, file, ov, dialect, None)?;
        Ok(Self {
            profile,
            kb: Arc::new(kb),
        })
    }
}

/// The knowledge base named by a config's `knowledge-base` and by `--kb`, with the paths in
/// effect and the KB warnings (scan findings, conflicting definitions), as [`ConfigError`]s.
///
/// Errors: a KB path that does not exist (at the config line naming it, or for `--kb` the
/// path), a KB file that cannot be loaded.
fn load_project_kb(
    config: Option<&LoadedConfig>,
    file: &ConfigFile,
    ov: &Overrides,
    dialect: Dialect,
    cache: Option<&crate::kb::ScanCache>,
) -> Result<(KnowledgeBase, Vec<PathBuf>, Vec<ConfigError>), ConfigError> {
    let mut kb_paths = Vec::new();
    if let (Some(c), Some(list)) = (config, &file.knowledge_base) {
        let dir = c.path.parent().unwrap_or(Path::new("."));
        for (i, k) in list.iter().enumerate() {
            let p = dir.join(k);
            if !p.exists() {
                let offset = locate(
                    &c.text,
                    is_pyproject(&c.path),
                    &[TomlPath::Key("knowledge-base"), TomlPath::Index(i)],
                );
                return Err(ConfigError::at(
                    &c.path,
                    &c.text,
                    offset,
                    format!("knowledge base `{k}` does not exist"),
                ));
            }
            kb_paths.push(p);
        }
    }
    for p in &ov.knowledge_base {
        if !p.exists() {
            return Err(ConfigError::plain(
                p,
                "knowledge base given with --kb does not exist",
            ));
        }
        kb_paths.push(p.clone());
    }
    let loaded = crate::kb::load_all_report(&kb_paths, cache).map_err(|e| {
        let path = PathBuf::from(&e.path);
        ConfigError {
            path,
            line: e.line,
            column: e.column,
            message: e.message,
        }
    })?;
    let warnings: Vec<ConfigError> = loaded
        .warnings
        .into_iter()
        .map(|w| ConfigError {
            path: PathBuf::from(w.path),
            line: w.line,
            column: w.column,
            message: w.message,
        })
        .collect();
    let mut kb = loaded.kb;
    if dialect == crate::config::Dialect::Colony {
        // Colony's prompt always lists these pseudo keys (colony-reference §2.8).
        kb.add_colony_pseudo_keys();
    }
    Ok((kb, kb_paths, warnings))
}

/// Finds and caches the project for each checked path (closest config per directory).
/// Thread-safe; used by parallel directory walks and by the language server.
#[derive(Debug, Default)]
pub struct Resolver {
    overrides: Overrides,
    /// Parses of the KB's Python sources, kept across [`Resolver::clear`] (entries are
    /// validated by size and modification time, so they are never stale).
    scan_cache: crate::kb::ScanCache,
    /// `--config`: one file for everything.
    fixed: Option<Arc<Project>>,
    by_config: Mutex<HashMap<Option<PathBuf>, Arc<Project>>>,
    by_dir: Mutex<HashMap<PathBuf, Option<PathBuf>>>,
}

impl Resolver {
    /// A resolver that discovers configs per path.
    pub fn new(overrides: Overrides) -> Self {
        Self {
            overrides,
            ..Default::default()
        }
    }

    /// A resolver that uses one config file for everything (`--config`).
    ///
    /// Errors: the file cannot be loaded.
    pub fn with_config(path: &Path, overrides: Overrides) -> Result<Self, ConfigError> {
        let loaded = load_file(path)?
            .ok_or_else(|| ConfigError::plain(path, "no `[tool.cellguard]` table in this file"))?;
        let project = Project::load(Some(loaded), &overrides)?;
        Ok(Self {
            overrides,
            fixed: Some(Arc::new(project)),
            ..Default::default()
        })
    }

    fn config_path_for_dir(&self, dir: &Path) -> Result<Option<PathBuf>, ConfigError> {
        if let Some(hit) = self
            .by_dir
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(dir)
        {
            return Ok(hit.clone());
        }
        let found = discover(dir)?.map(|c| c.path);
        self.by_dir
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dir.to_path_buf(), found.clone());
        Ok(found)
    }

    /// The config file in effect for `file` (a file or directory): the `--config` file, else
    /// the closest config found walking up from the file's directory ([`discover`], cached per
    /// directory); `None` when there is none. `cellguard check` finds each file's settings this
    /// way, and `cellguard replay` each trace's guardrails.
    ///
    /// Errors: a config file on the way up cannot be loaded.
    pub fn config_path_for(&self, file: &Path) -> Result<Option<PathBuf>, ConfigError> {
        if let Some(p) = &self.fixed {
            return Ok(p.config.as_ref().map(|c| c.path.clone()));
        }
        let abs = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        let dir = if abs.is_dir() {
            abs.clone()
        } else {
            abs.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        self.config_path_for_dir(&dir)
    }

    /// The project for a checked file.
    ///
    /// Errors: the closest config (or its KB) cannot be loaded.
    pub fn project_for(&self, file: &Path) -> Result<Arc<Project>, ConfigError> {
        if let Some(p) = &self.fixed {
            return Ok(p.clone());
        }
        let config_path = self.config_path_for(file)?;
        self.project_of_config(config_path)
    }

    /// The project of no config file: built-in defaults plus the overrides. The language
    /// server uses it for a document whose config cannot be loaded, so that the editor's own
    /// settings keep applying while a project file is broken (new-user N-6). Cached as
    /// [`Resolver::project_for`] caches a file without a config.
    ///
    /// Errors: the overrides do not resolve, or a knowledge base they name cannot be loaded.
    pub fn project_without_config(&self) -> Result<Arc<Project>, ConfigError> {
        self.project_of_config(None)
    }

    fn project_of_config(&self, config_path: Option<PathBuf>) -> Result<Arc<Project>, ConfigError> {
        if let Some(p) = self
            .by_config
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&config_path)
        {
            return Ok(p.clone());
        }
        let loaded = match &config_path {
            Some(p) => load_file(p)?,
            None => None,
        };
        let project = Arc::new(Project::load_with_cache(
            loaded,
            &self.overrides,
            Some(&self.scan_cache),
        )?);
        // Two threads that both missed keep the project stored first, so every caller of the
        // same config sees one project (the language server re-uses per-cell results only for
        // the project they were computed with, compared by identity).
        Ok(self
            .by_config
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(config_path)
            .or_insert(project)
            .clone())
    }

    /// Forgets every cached config and KB (after a config or KB file changed). The next
    /// [`Resolver::project_for`] rebuilds the KB, re-parsing only the Python sources that
    /// changed since they were last scanned.
    pub fn clear(&self) {
        self.by_config
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.by_dir
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn unknown_key_is_located() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "cellguard.toml",
            "profile = \"strict\"\n[lint]\nselectt = [\"API\"]\n",
        );
        let e = load_file(&p).unwrap_err();
        assert_eq!((e.line, e.column), (Some(3), Some(1)));
        assert!(
            e.message.contains("unknown field `selectt`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn pyproject_without_table_is_skipped_and_closest_wins() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "cellguard.toml", "profile = \"colony\"\n");
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        write(&sub, "pyproject.toml", "[project]\nname = \"x\"\n");
        let found = discover(&sub.join("a.py")).unwrap().unwrap();
        assert_eq!(found.file.profile, Some(Profile::Colony));
        write(
            &sub,
            "pyproject.toml",
            "[tool.cellguard]\nprofile = \"strict\"\n",
        );
        let found = discover(&sub.join("a.py")).unwrap().unwrap();
        assert_eq!(found.file.profile, Some(Profile::Strict));
    }

    #[test]
    fn extend_inherits_and_child_wins() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "base.toml",
            "profile = \"colony\"\n[lint.shape]\nmax-actions = 5\nmax-lines = 9\n",
        );
        let p = write(
            dir.path(),
            "cellguard.toml",
            "extend = \"base.toml\"\n[lint.shape]\nmax-actions = 2\n",
        );
        let c = load_file(&p).unwrap().unwrap();
        let s = Settings::resolve(&c.file, Some(&c), &Overrides::default()).unwrap();
        assert_eq!(
            (s.profile, s.max_actions, s.max_lines),
            (Profile::Colony, 2, 9)
        );
    }

    #[test]
    fn select_ignore_most_specific_wins() {
        let file = ConfigFile {
            lint: Some(LintSection {
                select: Some(vec!["API".into()]),
                ignore: Some(vec!["API00".into()]),
                extend_select: Some(vec!["API001".into()]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let s = Settings::resolve(&file, None, &Overrides::default()).unwrap();
        assert!(s.rules.is_code_enabled("API001"));
        assert!(!s.rules.is_code_enabled("API002"));
        assert!(!s.rules.is_code_enabled("SHP001"));
    }

    #[test]
    fn bad_selector_is_an_error() {
        let ov = Overrides {
            select: Some(vec!["NOPE".into()]),
            ..Default::default()
        };
        let e = Settings::resolve(&ConfigFile::default(), None, &ov).unwrap_err();
        assert!(e.message.contains("NOPE"));
    }

    #[test]
    fn locate_finds_nested_values_in_both_file_kinds() {
        let text = "profile = \"strict\"\n[lint]\nselect = [\"API\", \"NOPE\"]\n";
        let at = locate(
            text,
            false,
            &[
                TomlPath::Key("lint"),
                TomlPath::Key("select"),
                TomlPath::Index(1),
            ],
        )
        .unwrap();
        assert_eq!(&text[at..at + 6], "\"NOPE\"");
        let py = "[project]\nname = \"x\"\n[tool.cellguard.lint]\nignore = [\"SHP\"]\n";
        let at = locate(
            py,
            true,
            &[
                TomlPath::Key("lint"),
                TomlPath::Key("ignore"),
                TomlPath::Index(0),
            ],
        )
        .unwrap();
        assert_eq!(&py[at..at + 5], "\"SHP\"");
        assert_eq!(locate("x = [", false, &[TomlPath::Key("x")]), None);
    }

    #[test]
    fn bad_selector_in_file_points_at_the_item() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "cellguard.toml",
            "[lint]\nselect = [\n  \"API\",\n  \"NOPE1\",\n]\n",
        );
        let e = load_file(&p).unwrap_err();
        assert_eq!((e.line, e.column), (Some(4), Some(3)));
        assert!(e.message.contains("`NOPE1`"), "{}", e.message);
    }

    #[test]
    fn cli_select_replaces_the_config_layer_as_in_ruff() {
        // Config ignores IMP001; `--select IMP001` starts a new layer and enables it.
        let file = ConfigFile {
            lint: Some(LintSection {
                ignore: Some(vec!["IMP001".into()]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let s = Settings::resolve(&file, None, &Overrides::default()).unwrap();
        assert!(!s.rules.is_code_enabled("IMP001"));
        assert!(s.rules.is_code_enabled("IMP002"));
        let ov = Overrides {
            select: Some(vec!["IMP001".into()]),
            ..Default::default()
        };
        let s = Settings::resolve(&file, None, &ov).unwrap();
        assert_eq!(s.rules.codes().collect::<Vec<_>>(), vec!["IMP001"]);
        // Without --select, CLI ignore/extend-select add to the config's selection.
        let ov = Overrides {
            extend_select: vec!["blocked-import".into()],
            ignore: vec!["SHP".into()],
            ..Default::default()
        };
        let s = Settings::resolve(&file, None, &ov).unwrap();
        assert!(s.rules.is_code_enabled("IMP001"));
        assert!(!s.rules.is_code_enabled("SHP001"));
        assert!(s.rules.is_code_enabled("API001"));
    }

    #[test]
    fn equal_specificity_ignore_wins() {
        let file = ConfigFile {
            lint: Some(LintSection {
                select: Some(vec!["API".into()]),
                ignore: Some(vec!["api".into()]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let s = Settings::resolve(&file, None, &Overrides::default()).unwrap();
        assert_eq!(s.rules.codes().count(), 0);
        assert_eq!(s.warnings.len(), 1);
        assert!(s.warnings[0].message.contains("enables no rule"));
    }

    #[test]
    fn allowlist_warnings_are_located() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "cellguard.toml",
            "[lint.imports]\nallow = [\"json\", \"*\"]\nextend-allow = [\"os/path\", \"numpy.*\"]\n",
        );
        let c = load_file(&p).unwrap().unwrap();
        let s = Settings::resolve(&c.file, Some(&c), &Overrides::default()).unwrap();
        let w: Vec<_> = s.warnings.iter().map(|w| (w.line, w.column)).collect();
        assert_eq!(
            w,
            vec![
                (Some(2), Some(19)),
                (Some(3), Some(18)),
                (Some(3), Some(29))
            ]
        );
        assert!(s.warnings[0].message.contains("`*`"));
        assert!(s.warnings[1].message.contains("`os/path`"));
        assert!(
            s.warnings[2].message.contains("`numpy.*`")
                && s.warnings[2].message.contains("no reach data")
        );
    }

    fn resolve_text(text: &str) -> Settings {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "cellguard.toml", text);
        let c = load_file(&p).unwrap().unwrap();
        Settings::resolve(&c.file, Some(&c), &Overrides::default()).unwrap()
    }

    #[test]
    fn extend_deny_members_keeps_the_defaults() {
        // Issue 4 F19: adding one entry must not drop the network and subprocess denials.
        let s = resolve_text("[lint.imports]\nextend-deny-members = [\"json.loads\"]\n");
        for d in DEFAULT_DENY_MEMBERS {
            assert!(s.deny_members.iter().any(|e| e == d), "{d} kept");
        }
        assert_eq!(
            s.deny_members.last().map(String::as_str),
            Some("json.loads")
        );
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        // On top of a replaced list too, once.
        let s = resolve_text(
            "[lint.imports]\ndeny-members = [\"asyncio.*\", \"pydantic.*\", \"json.tool.*\", \"typing.clear_overloads\", \"dataclasses.FunctionType\"]\nextend-deny-members = [\"asyncio.*\", \"json.loads\"]\n",
        );
        assert_eq!(
            s.deny_members,
            vec![
                "asyncio.*",
                "pydantic.*",
                "json.tool.*",
                "typing.clear_overloads",
                "dataclasses.FunctionType",
                "json.loads"
            ]
        );
        assert!(
            s.warnings.is_empty(),
            "a glob that keeps every default: {:?}",
            s.warnings
        );
    }

    /// Round 4 G23: private standard-library modules re-export host objects under other
    /// names (`_weakrefset.ref` is `weakref.ref`): a warning, and the known ones denied.
    #[test]
    fn private_stdlib_modules_in_the_allowlist_warn() {
        let s = resolve_text(
            "dialect = \"functions\"\n[lint.imports]\nextend-allow = [\"copy\", \"_weakrefset\", \"_threading_local\", \"__future__\", \"_operator\"]\n",
        );
        let private: Vec<_> = s
            .warnings
            .iter()
            .filter(|w| w.message.contains("private implementation module"))
            .collect();
        assert_eq!(private.len(), 2, "{:?}", s.warnings);
        assert!(
            private[0].message.starts_with("`_weakrefset`"),
            "{}",
            private[0].message
        );
        assert_eq!((private[0].line, private[0].column), (Some(3), Some(26)));
        assert!(private[1].message.starts_with("`_threading_local`"));
        for d in [
            "_weakrefset.ref",
            "_threading_local.ref",
            "_threading_local.current_thread",
        ] {
            assert!(s.deny_members.iter().any(|e| e == d), "{d} denied");
        }
        let clean =
            resolve_text("dialect = \"functions\"\n[lint.imports]\nextend-allow = [\"copy\"]\n");
        assert!(clean.warnings.is_empty(), "{:?}", clean.warnings);
    }

    #[test]
    fn replacing_deny_members_warns_about_dropped_defaults() {
        // The example the docs used to show: keeps two entries, drops the network denials.
        let s = resolve_text(
            "[lint.imports]\ndeny-members = [\"asyncio.create_subprocess_exec\", \"asyncio.create_subprocess_shell\"]\n",
        );
        assert_eq!(s.deny_members.len(), 2);
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        let w = &s.warnings[0];
        assert_eq!((w.line, w.column), (Some(2), Some(16)));
        assert!(
            w.message.contains("`asyncio.open_connection`"),
            "{}",
            w.message
        );
        assert!(w.message.contains("extend-deny-members"), "{}", w.message);
        assert!(
            !w.message.contains("create_subprocess_exec`,"),
            "{}",
            w.message
        );
        // Defaults of modules the allowlist does not let in are not worth a warning: with
        // smolagents' modules only `random`'s and `time`'s host-state calls are dropped.
        let s = resolve_text(
            "dialect = \"functions\"\n[lint.imports]\ndeny-members = [\"requests.*\"]\n",
        );
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        assert!(
            s.warnings[0]
                .message
                .contains("4 default members of allowed modules (`random.seed`, `random.setstate`, `random.getstate`, `time.tzset`)"),
            "{}",
            s.warnings[0].message
        );
        let s = resolve_text(
            "dialect = \"functions\"\n[lint.imports]\nallow = [\"re\"]\ndeny-members = [\"requests.*\"]\n",
        );
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        let s = resolve_text("[lint.imports]\ndeny-members = []\n");
        assert_eq!(s.warnings.len(), 1);
        // Entries of either list that name no member are located in their own list.
        let s = resolve_text(
            "dialect = \"functions\"\n[lint.imports]\nextend-deny-members = [\"json\"]\n",
        );
        assert_eq!(s.warnings.len(), 1);
        assert_eq!(
            (s.warnings[0].line, s.warnings[0].column),
            (Some(3), Some(25))
        );
        assert!(s.warnings[0].message.contains("names no member"));
    }

    #[test]
    fn host_reaching_and_star_entries_are_warnings() {
        // Issue 4 F10/F18: modules that run strings, import by name, build code or do I/O, and
        // star entries whose submodules do, from the generated table.
        let s = resolve_text(
            "dialect = \"functions\"\n[lint.imports]\nextend-allow = [\"timeit\", \"pydoc\", \"types\", \"linecache\", \"concurrent.*\", \"xmlrpc.*\", \"textwrap\", \"email.*\", \"os.path\", \"test.*\"]\n",
        );
        let w: Vec<&str> = s.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(w.len(), 8, "{w:#?}");
        assert!(w[0].starts_with("`timeit` in the import allowlist lets in a module that reaches the host (runs code from strings"), "{}", w[0]);
        assert!(w[1].contains("`pydoc`") && w[1].contains("imports modules by name"));
        assert!(w[2].contains("`types`") && w[2].contains("builds code objects"));
        assert!(w[3].contains("`linecache`") && w[3].contains("reads or writes files"));
        assert!(
            w[4].contains("`concurrent.*`") && w[4].contains("`concurrent.futures.process`"),
            "{}",
            w[4]
        );
        assert!(w[5].contains("`xmlrpc.*`") && w[5].contains("`xmlrpc.server`"));
        // `email.utils.make_msgid()` looks up the host's name (`socket.getfqdn`).
        assert_eq!(
            w[6],
            "`email.*` in the import allowlist expands to every submodule of `email`, including host-reaching ones: `email.utils`"
        );
        assert!(w[7].contains("`test.*`"), "{}", w[7]);
        assert_eq!(s.warnings[0].column, Some(18));
    }

    #[test]
    fn host_identity_and_user_path_modules_are_warnings() {
        // Issue 4 second tester F12: modules that read cell-given files (`mimetypes`), the
        // host's user and group database (`pwd`, `grp`, `spwd`) or its environment (`locale`),
        // and files and frames (`traceback`) are host-reaching like `bz2`; `string` (its
        // Formatter walks attributes, which the SBX rules check on the fields) and `uuid`,
        // `zoneinfo`, `os.path` (whose host-reading members are default deny-members) are not.
        let s = resolve_text(
            "dialect = \"functions\"\n[lint.imports]\nextend-allow = [\"mimetypes\", \"pwd\", \"grp\", \"spwd\", \"locale\", \"traceback\", \"bz2\", \"string\", \"uuid\", \"zoneinfo\", \"os.path\"]\n",
        );
        let w: Vec<&str> = s.warnings.iter().map(|w| w.message.as_str()).collect();
        let identity = "reads the host's environment, users, groups or machine identity";
        assert_eq!(
            w,
            vec![
                format!("`mimetypes` in the import allowlist lets in a module that reaches the host (reads or writes files; {identity})").as_str(),
                format!("`pwd` in the import allowlist lets in a module that reaches the host ({identity})").as_str(),
                format!("`grp` in the import allowlist lets in a module that reaches the host ({identity})").as_str(),
                format!("`spwd` in the import allowlist lets in a module that reaches the host ({identity})").as_str(),
                format!("`locale` in the import allowlist lets in a module that reaches the host ({identity})").as_str(),
                "`traceback` in the import allowlist lets in a module that reaches the host (reads or writes files; exposes execution frames or tracing hooks)",
                "`bz2` in the import allowlist lets in a module that reaches the host (reads or writes files)",
            ]
        );
        assert_eq!(
            (s.warnings[1].line, s.warnings[1].column),
            (Some(3), Some(31))
        );
        // The readers of those not listed are denied by default.
        for m in [
            "os.path.expanduser",
            "os.path.expandvars",
            "posixpath.expandvars",
            "uuid.getnode",
            "uuid.uuid1",
            "zoneinfo.reset_tzpath",
        ] {
            assert!(s.deny_members.iter().any(|d| d == m), "{m} denied");
        }
    }

    #[test]
    fn package_entries_name_their_host_reaching_submodules() {
        // `email` allows `email.utils` as `email.*` does; `os.path` is judged as `posixpath`
        // (no warning naming its parent `os`), and a package without host-reaching submodules
        // stays silent.
        let s = resolve_text(
            "dialect = \"functions\"\n[lint.imports]\nextend-allow = [\"email\", \"os.path\", \"os.path.*\", \"html\", \"xmlrpc\"]\n",
        );
        let w: Vec<&str> = s.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(
            w,
            vec![
                "`email` in the import allowlist also allows every submodule of `email`, including host-reaching ones: `email.utils`",
                "`xmlrpc` in the import allowlist also allows every submodule of `xmlrpc`, including host-reaching ones: `xmlrpc.client`, `xmlrpc.server`",
            ]
        );
    }

    #[test]
    fn template_engines_and_unknown_third_party_modules_are_warnings() {
        // Issue 4 third tester N10: jinja2/yaml/mako are classified host-reaching; a
        // third-party module without reach data gets its own warning; the standard library,
        // the walked roots and C twins (`_operator` is `operator`) stay silent.
        let s = resolve_text(
            "dialect = \"functions\"\n[lint.imports]\nextend-allow = [\"jinja2\", \"yaml\", \"mako.template\", \"pandas\", \"attrs.*\", \"pydantic\", \"textwrap\", \"_operator\"]\n",
        );
        let w: Vec<&str> = s.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(w.len(), 5, "{w:#?}");
        assert_eq!(
            w[0],
            "`jinja2` in the import allowlist lets in a module that reaches the host (runs code from strings)"
        );
        assert!(w[1].starts_with("`yaml` in the import allowlist lets in a module that reaches the host (runs code from strings; builds code objects or loads pickles)"), "{}", w[1]);
        assert!(
            w[2].starts_with("`mako.template` in the import allowlist lets in"),
            "{}",
            w[2]
        );
        assert!(w[3].starts_with("`pandas` in the import allowlist is a third-party module cellguard has no reach data for"), "{}", w[3]);
        assert!(
            w[4].starts_with("`attrs.*` in the import allowlist is a third-party module"),
            "{}",
            w[4]
        );
        assert_eq!(s.warnings[3].column, Some(53));
    }

    #[test]
    fn module_patterns() {
        assert!(is_module_pattern("a.b_c.d"));
        assert!(is_module_pattern("numpy.*"));
        assert!(!is_module_pattern("*"));
        assert!(!is_module_pattern("a..b"));
        assert!(!is_module_pattern("1a"));
        assert!(!is_module_pattern("os path"));
    }
}
