//! The reachability table: which attributes of the default allowed modules are modules, and which
//! attribute paths of at most three steps reach a host-reaching module (`os`, `sys`, `subprocess`,
//! `socket`, `builtins`, `importlib`, `inspect`, `ctypes`, `shutil`, `pathlib`, `io`, `pty`,
//! `multiprocessing`, and their C-level twins such as `posix` or `_io`).
//!
//! The data is generated on a real CPython by `tools/gen_sandbox_reach.py` (see
//! `tools/README.md`) and committed as `reach.json` next to this file; it is compiled into the
//! binary with `include_str!` and parsed once on first use.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The generated table as stored in `reach.json` (format `cellguard-sandbox-reach/1`).
#[derive(Debug, Default, Deserialize)]
pub struct Reach {
    /// Format tag, `cellguard-sandbox-reach/1`.
    #[serde(default)]
    pub format: String,
    /// CPython version the table was generated on (`3.11.7`).
    #[serde(default)]
    pub python: String,
    /// Maximum number of attribute steps walked from each root.
    #[serde(default)]
    pub max_steps: u32,
    /// The allowlisted modules walked (Colony's 11 and smolagents' `BASE_BUILTIN_MODULES`).
    #[serde(default)]
    pub roots: Vec<String>,
    /// Host-reaching module name -> family (`posix` -> `os`, `_io` -> `io`).
    #[serde(default)]
    pub targets: HashMap<String, String>,
    /// Attribute path from a root (`typing.contextlib.os`) -> the real name of the host-reaching
    /// module it ends on (`os`).
    #[serde(default)]
    pub paths: BTreeMap<String, String>,
    /// Real module name -> its module-valued attributes (attribute -> real module name).
    #[serde(default)]
    pub modules: HashMap<String, HashMap<String, String>>,
    /// Dotted import names whose module has another `__name__` (`os.path` -> `posixpath`).
    #[serde(default)]
    pub submodule_aliases: HashMap<String, String>,
    /// Other paths to a default denied member (`asyncio.subprocess.create_subprocess_exec` ->
    /// `asyncio.create_subprocess_exec`).
    #[serde(default)]
    pub deny_aliases: HashMap<String, String>,
    /// Public attribute paths of the allowed modules whose value is a class or function of a
    /// host-reaching module, or a typing alias over one (`pydantic.types.Path` -> `pathlib`,
    /// `pydantic.SocketPath` -> `pathlib`, `pydantic.import_module` -> `importlib`). They are
    /// default `deny-members` (SBX007): see [`crate::config::Settings::resolve`].
    #[serde(default)]
    pub host_members: BTreeMap<String, String>,
    /// Real module name -> its `__all__` (sorted), for the walked modules that define one: the
    /// names `from m import *` binds.
    #[serde(default)]
    pub exports: HashMap<String, Vec<String>>,
    /// Top-level module names of the standard library the table was generated on
    /// (`sys.stdlib_module_names`).
    #[serde(default)]
    pub stdlib_modules: HashSet<String>,
    #[serde(skip)]
    known: HashSet<String>,
    #[serde(skip)]
    root_set: HashSet<String>,
}

/// The first dotted segment of a module name.
fn root_of(name: &str) -> &str {
    name.split_once('.').map_or(name, |(r, _)| r)
}

const REACH_JSON: &str = include_str!("reach.json");

/// The table compiled into cellguard. Parsed once; an unparsable table (a broken
/// regeneration, caught by the tests) degrades to an empty table rather than a panic.
pub fn table() -> &'static Reach {
    static TABLE: OnceLock<Reach> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut reach: Reach = serde_json::from_str(REACH_JSON).unwrap_or_default();
        let mut known: HashSet<String> = reach.roots.iter().cloned().collect();
        for (name, attrs) in &reach.modules {
            known.insert(name.clone());
            known.extend(attrs.values().cloned());
        }
        known.extend(reach.targets.keys().cloned());
        reach.known = known;
        reach.root_set = reach.roots.iter().cloned().collect();
        reach
    })
}

impl Reach {
    /// The real name of the module that attribute `attr` of module `real` is, when the table
    /// records it.
    pub fn module_attr(&self, real: &str, attr: &str) -> Option<&str> {
        self.modules
            .get(real)
            .and_then(|m| m.get(attr))
            .map(String::as_str)
    }

    /// True when the table walked `real` (or its root is a walked root): its non-module
    /// attributes are then known to be plain members.
    pub fn knows(&self, real: &str) -> bool {
        self.known.contains(real) || self.root_set.contains(root_of(real))
    }

    /// True when `from real import *` binds `name`: it is in the module's `__all__` when the
    /// table records one, else it is public (no leading `_`), Python's rule for modules without
    /// `__all__`.
    pub fn star_binds(&self, real: &str, name: &str) -> bool {
        match self.exports.get(real) {
            Some(all) => all.binary_search_by(|n| n.as_str().cmp(name)).is_ok(),
            None => !name.starts_with('_'),
        }
    }

    /// The real name of an imported dotted module (`os.path` -> `posixpath`).
    pub fn real_name(&self, dotted: &str) -> String {
        self.submodule_aliases
            .get(dotted)
            .cloned()
            .unwrap_or_else(|| dotted.to_string())
    }

    /// The host-reaching family of module `real` (`posix` -> `os`, `importlib.util` ->
    /// `importlib`), when it is one.
    pub fn family(&self, real: &str) -> Option<&str> {
        if let Some(f) = self.targets.get(real) {
            return Some(f);
        }
        self.targets.get(root_of(real)).map(String::as_str)
    }

    /// A recorded path that starts at `path` and reaches a host-reaching module
    /// (`typing.contextlib` -> `("typing.contextlib.os", "os")`), shortest first.
    pub fn leads_to<'s>(&'s self, path: &'s str) -> Option<(&'s str, &'s str)> {
        if let Some(t) = self.paths.get(path) {
            return Some((path, t));
        }
        let prefix = format!("{path}.");
        self.paths
            .range(prefix.clone()..)
            .take_while(|(p, _)| p.starts_with(&prefix))
            .min_by_key(|(p, _)| (p.matches('.').count(), p.len()))
            .map(|(p, t)| (p.as_str(), t.as_str()))
    }

    /// True when cellguard has reach data for top-level module `root`: a standard-library
    /// module, a walked root (`pydantic`), or a classified host-reaching package (`requests`).
    /// A third-party package outside these (`jinja2`'s siblings, `pandas`) is analysed only by
    /// the fallback (its `_private` and host-named attributes).
    pub fn has_data_for(&self, root: &str) -> bool {
        self.stdlib_modules.contains(root)
            || self.root_set.contains(root)
            || crate::rules::sandbox::host_module(root).is_some()
    }

    /// The default denied member that `path` is another name for.
    pub fn deny_alias(&self, path: &str) -> Option<&str> {
        self.deny_aliases.get(path).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_parses_and_holds_the_documented_paths() {
        let t = table();
        assert_eq!(t.format, "cellguard-sandbox-reach/1");
        assert_eq!(t.max_steps, 3);
        for (path, target) in [
            ("collections._sys", "sys"),
            ("statistics.sys", "sys"),
            ("datetime.sys", "sys"),
            ("typing.sys", "sys"),
            ("typing.contextlib.os", "os"),
            ("dataclasses.inspect.os", "os"),
            ("dataclasses.builtins", "builtins"),
            ("json.codecs.sys", "sys"),
            ("re.enum.sys", "sys"),
            ("asyncio.base_events.subprocess", "subprocess"),
            ("asyncio.base_events.socket", "socket"),
            ("statistics.random._os", "os"),
            ("asyncio.base_events.events.subprocess", "subprocess"),
            ("random._os", "os"),
            ("queue.threading._os", "os"),
            ("pydantic.dataclasses.sys", "sys"),
        ] {
            assert_eq!(
                t.paths.get(path).map(String::as_str),
                Some(target),
                "{path}"
            );
        }
        assert_eq!(t.module_attr("collections", "_sys"), Some("sys"));
        assert_eq!(t.module_attr("typing", "contextlib"), Some("contextlib"));
        assert_eq!(t.real_name("os.path"), "posixpath");
        assert_eq!(t.family("posix"), Some("os"));
        assert_eq!(t.family("importlib.util"), Some("importlib"));
        assert_eq!(
            t.leads_to("typing.contextlib"),
            Some(("typing.contextlib.os", "os"))
        );
        assert_eq!(
            t.deny_alias("asyncio.subprocess.create_subprocess_exec"),
            Some("asyncio.create_subprocess_exec")
        );
        assert!(t.knows("json.decoder"));
        assert!(!t.knows("numpy"));
    }

    /// Third tester N11/N12: C twins are judged as their Python module, and the classes and
    /// functions of host modules re-exported by allowed ones are recorded (and denied).
    #[test]
    fn c_twins_and_host_members() {
        let t = table();
        assert_eq!(t.real_name("_operator"), "operator");
        assert_eq!(t.real_name("_functools"), "functools");
        assert_eq!(t.real_name("_collections"), "collections");
        // Host-reaching twins keep their own verdict.
        assert_eq!(t.real_name("_io"), "_io");
        assert_eq!(t.real_name("_pickle"), "_pickle");
        for (path, module) in [
            ("pydantic.types.Path", "pathlib"),
            ("pydantic.SocketPath", "pathlib"),
            ("pydantic.import_module", "importlib"),
            ("json.tool.Path", "pathlib"),
        ] {
            assert_eq!(
                t.host_members.get(path).map(String::as_str),
                Some(module),
                "{path}"
            );
        }
        // Private paths are SBX005's, plain builtins re-exported (`typing.Text`) are values.
        assert!(t.host_members.keys().all(|k| !k.contains("._")));
        assert!(!t.host_members.contains_key("typing.Text"));
        let s = crate::config::Settings::default();
        assert!(s.deny_members.iter().any(|d| d == "pydantic.types.Path"));
    }

    /// The `host_modules` half of the table after the second tester's F12 audit (modules that
    /// open cell-given paths, read the host's identity or environment, or touch the network).
    #[test]
    fn host_modules_cover_identity_paths_and_network() {
        use crate::rules::sandbox::{host_module, host_module_entry};
        let identity = "reads the host's environment, users, groups or machine identity";
        for m in ["pwd", "grp", "spwd", "locale", "_locale", "winreg", "_uuid"] {
            assert_eq!(host_module(m), Some(identity), "{m}");
        }
        assert_eq!(
            host_module("mimetypes"),
            Some(format!("reads or writes files; {identity}").as_str())
        );
        assert_eq!(
            host_module("traceback"),
            Some("reads or writes files; exposes execution frames or tracing hooks")
        );
        assert_eq!(
            host_module("email.utils"),
            Some("opens network connections")
        );
        assert_eq!(host_module("asynchat"), Some("opens network connections"));
        assert_eq!(
            host_module("copyreg"),
            Some("runs code later, in threads, timers, exit or signal handlers")
        );
        for m in [
            "curses", // `from _curses import *`
            "tty",    // `from termios import *`
            "sqlite3.dbapi2",
            "wsgiref.handlers", // `CGIHandler` hands the host's environment to the app
            "getpass",
            "_sitebuiltins",
            "antigravity",
            "selectors",
            "msilib",
            "psutil",
            "paramiko",
        ] {
            assert!(host_module(m).is_some(), "{m} is host-reaching");
        }
        assert!(host_module("os").is_some_and(|r| r.ends_with(identity)));
        // Plain modules stay out; the host-reading members of `os.path`, `uuid` and `zoneinfo`
        // are default deny-members instead.
        for m in [
            "string",
            "uuid",
            "zoneinfo",
            "os.path",
            "posixpath",
            "email",
            "html",
            "csv",
            "textwrap",
            "base64",
            "hashlib",
            "secrets",
            "difflib",
            "enum",
            "operator",
        ] {
            assert_eq!(host_module_entry(m), None, "{m} is not host-reaching");
        }
        for d in [
            "os.path.expandvars",
            "uuid.getnode",
            "uuid.uuid1",
            "zoneinfo.reset_tzpath",
        ] {
            assert!(crate::config::DEFAULT_DENY_MEMBERS.contains(&d), "{d}");
        }
    }
}
