//! Configuration: `cellguard.toml`, `.cellguard.toml`, or `[tool.cellguard]` in
//! `pyproject.toml`. The closest file to the checked path wins (no merging, as ruff does);
//! `extend = "path"` inherits from another file, the extending file's keys taking precedence.
//! CLI flags override every file ([`Overrides`]).
//!
//! Errors carry file:line:col ([`ConfigError`]); the CLI exits with code 2 on them.

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
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct LintSection {
    /// Rule codes or prefixes to enable (replaces the default `ALL`).
    pub select: Option<Vec<String>>,
    /// Added to `select`.
    pub extend_select: Option<Vec<String>>,
    /// Removed from the selection.
    pub ignore: Option<Vec<String>>,
    /// `[lint.imports]`.
    pub imports: Option<ImportsSection>,
    /// `[lint.shape]`.
    pub shape: Option<ShapeSection>,
}

/// `[lint.imports]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ImportsSection {
    /// Allowed modules: `a.b` allows `a.b` and below (never the parent `a`), `a.*` allows `a`
    /// and below.
    pub allow: Option<Vec<String>>,
    /// Added to the preset allowlist.
    pub extend_allow: Option<Vec<String>>,
    /// Members of allowed modules that stay forbidden (`asyncio.create_subprocess_exec`).
    pub deny_members: Option<Vec<String>>,
}

/// `[lint.shape]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ShapeSection {
    /// Maximum actions on one execution path (Colony default 3).
    pub max_actions: Option<u32>,
    /// Maximum `browse()` calls (Colony default 1).
    pub max_browse: Option<u32>,
    /// Maximum substantive lines (Colony default 50).
    pub max_lines: Option<u32>,
}

/// `[namespace]`: the names a cell's REPL provides.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct NamespaceSection {
    /// `colony`, `smolagents` or `none`; defaults to the dialect's preset.
    pub preset: Option<String>,
    /// Replaces the preset's names.
    pub names: Option<Vec<String>>,
    /// Added to the names.
    pub extend_names: Option<Vec<String>>,
    /// Names that are coroutine functions (must be awaited).
    pub async_names: Option<Vec<String>>,
    /// The action-dispatch function (`run` in Colony).
    pub run: Option<String>,
}

/// One config file as written. Sections owned by replay (`guardrails`, `policies`, `replay`)
/// are kept with their spans and parsed by the replay engine.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ConfigFile {
    /// `strict` or `colony`.
    pub profile: Option<Profile>,
    /// `colony` or `functions`.
    pub dialect: Option<Dialect>,
    /// KB files or source directories, relative to the config file.
    pub knowledge_base: Option<Vec<String>>,
    /// Another config file to inherit from, relative to this one.
    pub extend: Option<String>,
    /// Extraction mode for files checked under this config.
    pub extract: Option<crate::extract::ExtractMode>,
    /// `[lint]`.
    pub lint: Option<LintSection>,
    /// `[namespace]`.
    pub namespace: Option<NamespaceSection>,
    /// `[[guardrails]]`, parsed by the replay engine.
    pub guardrails: Option<Vec<toml::Spanned<toml::Value>>>,
    /// `[[policies]]`, parsed by the policy replayer.
    pub policies: Option<Vec<toml::Spanned<toml::Value>>>,
    /// `[replay]`.
    pub replay: Option<toml::Spanned<toml::Value>>,
    /// JSON Schema hint for editors; ignored.
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
    let is_pyproject = path.file_name().and_then(|n| n.to_str()) == Some("pyproject.toml");
    let file = if is_pyproject {
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
        let offset = loaded.text.find(&ext);
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
            imports: match (b.imports, c.imports) {
                (Some(bi), Some(ci)) => Some(ImportsSection {
                    allow: ci.allow.or(bi.allow),
                    extend_allow: ci.extend_allow.or(bi.extend_allow),
                    deny_members: ci.deny_members.or(bi.deny_members),
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

    /// smolagents' CodeAgent namespace: `final_answer` plus the tools of the KB.
    pub fn smolagents() -> Self {
        Namespace {
            run: None,
            names: ["final_answer"].iter().map(|s| s.to_string()).collect(),
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

/// True when `selector` (a code, a prefix such as `API` or `API00`, or `ALL`) matches `rule`.
pub fn selector_matches(selector: &str, rule: &Rule) -> bool {
    let s = selector.trim();
    s.eq_ignore_ascii_case("ALL") || rule.code.starts_with(&s.to_ascii_uppercase())
}

fn check_selectors(selectors: &[String], origin: &Path, text: &str) -> Result<(), ConfigError> {
    for s in selectors {
        if !crate::rules::all_rules().any(|r| selector_matches(s, r)) {
            let offset = if text.is_empty() {
                None
            } else {
                text.find(&format!("\"{s}\"")).map(|o| o + 1)
            };
            return Err(ConfigError::at(
                origin,
                text,
                offset,
                format!("unknown rule selector `{s}`"),
            ));
        }
    }
    Ok(())
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
}

/// Default members of allowed modules that reach the host (spec §2 `SBX`, rule SBX007). The
/// same objects reached under other names (`asyncio.subprocess.create_subprocess_exec`) are
/// matched through the reachability table; `asyncio.AbstractEventLoop.*` stands for the methods
/// of any event loop (`asyncio.get_running_loop().subprocess_shell`).
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
    "asyncio.AbstractEventLoop.sock_connect",
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
        let module = e.strip_suffix(".*").unwrap_or(e);
        if let Some(why) = crate::rules::sandbox::check::host_module(module) {
            warnings.push(ConfigError::at(
                origin,
                text,
                offset,
                format!(
                    "`{e}` in the import allowlist lets in a module that reaches the host ({why})"
                ),
            ));
        }
    }
    for entry in deny {
        let e = entry.trim();
        if !e.contains('.') || e.starts_with('.') || e.ends_with('.') {
            warnings.push(ConfigError::at(
                origin,
                text,
                at(&["deny-members"], entry),
                format!("deny-members entry `{e}` names no member (expected `module.member`)"),
            ));
        }
    }
    warnings
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

        for list in [&lint.select, &lint.extend_select, &lint.ignore]
            .into_iter()
            .flatten()
        {
            check_selectors(list, &origin, text)?;
        }
        let cli = PathBuf::from("<command line>");
        for list in [
            ov.select.as_ref(),
            Some(&ov.extend_select),
            Some(&ov.ignore),
        ]
        .into_iter()
        .flatten()
        {
            check_selectors(list, &cli, "")?;
        }
        let select = ov
            .select
            .clone()
            .or(lint.select.clone())
            .unwrap_or_else(|| vec!["ALL".into()]);
        let mut extend = lint.extend_select.clone().unwrap_or_default();
        extend.extend(ov.extend_select.iter().cloned());
        let mut ignore = lint.ignore.clone().unwrap_or_default();
        ignore.extend(ov.ignore.iter().cloned());
        let enabled = crate::rules::all_rules()
            .filter(|r| {
                select
                    .iter()
                    .chain(extend.iter())
                    .any(|s| selector_matches(s, r))
            })
            .filter(|r| {
                // The most specific selector wins between select and ignore (ruff semantics).
                let best_select = select
                    .iter()
                    .chain(extend.iter())
                    .filter(|s| selector_matches(s, r))
                    .map(|s| spec_len(s))
                    .max();
                let best_ignore = ignore
                    .iter()
                    .filter(|s| selector_matches(s, r))
                    .map(|s| spec_len(s))
                    .max();
                match (best_select, best_ignore) {
                    (Some(s), Some(i)) => s > i,
                    (Some(_), None) => true,
                    _ => false,
                }
            })
            .map(|r| r.code)
            .collect();

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
        let deny_members = imports
            .deny_members
            .clone()
            .unwrap_or_else(|| DEFAULT_DENY_MEMBERS.iter().map(|s| s.to_string()).collect());
        let warnings = import_warnings(&allowed_imports, &deny_members, &origin, text);

        let shape = lint.shape.clone().unwrap_or_default();
        let ns_section = file.namespace.clone().unwrap_or_default();
        let mut namespace = match ns_section.preset.as_deref() {
            Some("colony") => Namespace::colony(),
            Some("smolagents") => Namespace::smolagents(),
            Some("none") => Namespace::empty(),
            Some(other) => {
                let offset = text.find(&format!("\"{other}\"")).map(|o| o + 1);
                return Err(ConfigError::at(&origin, text, offset, format!("unknown namespace preset `{other}` (expected `colony`, `smolagents` or `none`)")));
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
            warnings,
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
    /// Builds a project from an optional config and overrides, loading the knowledge base.
    ///
    /// Errors: settings errors, and KB files that cannot be loaded (reported at the config line
    /// naming them).
    pub fn load(config: Option<LoadedConfig>, ov: &Overrides) -> Result<Project, ConfigError> {
        let file = config.as_ref().map(|c| c.file.clone()).unwrap_or_default();
        let settings = Settings::resolve(&file, config.as_ref(), ov)?;
        let mut kb_paths = Vec::new();
        if let (Some(c), Some(list)) = (&config, &file.knowledge_base) {
            let dir = c.path.parent().unwrap_or(Path::new("."));
            for k in list {
                let p = dir.join(k);
                if !p.exists() {
                    let offset = c.text.find(&format!("\"{k}\"")).map(|o| o + 1);
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
        let kb = crate::kb::load_all(&kb_paths).map_err(|e| {
            let path = PathBuf::from(&e.path);
            ConfigError {
                path,
                line: e.line,
                column: e.column,
                message: e.message,
            }
        })?;
        Ok(Project {
            config,
            settings,
            kb: Arc::new(kb),
            kb_paths,
        })
    }
}

/// Finds and caches the project for each checked path (closest config per directory).
/// Thread-safe; used by parallel directory walks and by the language server.
#[derive(Debug, Default)]
pub struct Resolver {
    overrides: Overrides,
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

    /// The project for a checked file.
    ///
    /// Errors: the closest config (or its KB) cannot be loaded.
    pub fn project_for(&self, file: &Path) -> Result<Arc<Project>, ConfigError> {
        if let Some(p) = &self.fixed {
            return Ok(p.clone());
        }
        let abs = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        let dir = if abs.is_dir() {
            abs.clone()
        } else {
            abs.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        let config_path = self.config_path_for_dir(&dir)?;
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
        let project = Arc::new(Project::load(loaded, &self.overrides)?);
        self.by_config
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(config_path, project.clone());
        Ok(project)
    }

    /// Forgets every cached config and KB (after a config or KB file changed).
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
}
