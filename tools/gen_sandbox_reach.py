#!/usr/bin/env python3
"""Generate cellguard's sandbox reachability table (lints/src/rules/sandbox/reach.json).

Walks the attributes of every module in cellguard's default import allowlists (Colony's 11
modules and smolagents' BASE_BUILTIN_MODULES) on the running CPython and records which
attribute paths of at most MAX_STEPS steps reach a host-reaching module (os, sys, subprocess,
socket, builtins, importlib, inspect, ctypes, shutil, pathlib, io, pty, multiprocessing and their
C-level twins such as posix or _io).

The walk reads namespaces only (`vars()` of modules, classes along their MRO, and instances
with a `__dict__`): no descriptor, property or `__getattr__` hook runs, so importing the roots
is the only code executed. Dunder attributes are not followed (cellguard's SBX002 flags every
dunder access on its own).

Usage (from the repository root; see tools/README.md):

    python3 tools/gen_sandbox_reach.py > lints/src/rules/sandbox/reach.json

The output is deterministic for a given interpreter and set of installed packages.
"""

import ast
import importlib
import json
import pkgutil
import platform
import sys
import types

# Colony's ImportWhitelistValidator.ALLOWED_IMPORTS (colony-reference §3.3).
COLONY_ALLOWED = [
    "json", "re", "math", "itertools", "functools", "collections", "dataclasses",
    "typing", "datetime", "pydantic", "asyncio",
]
# smolagents BASE_BUILTIN_MODULES (guardrail-anchors §2.1).
SMOLAGENTS_ALLOWED = [
    "collections", "datetime", "itertools", "math", "queue", "random", "re", "stat",
    "statistics", "time", "unicodedata",
]
ROOTS = sorted(set(COLONY_ALLOWED) | set(SMOLAGENTS_ALLOWED))

# Modules that reach the host (issue 4), and the C-level or private modules that are the same
# capability under another name, mapped to the family they belong to.
TARGETS = {
    "os": "os", "posix": "os", "nt": "os",
    "sys": "sys",
    "subprocess": "subprocess", "_posixsubprocess": "subprocess",
    "socket": "socket", "_socket": "socket",
    "builtins": "builtins",
    "importlib": "importlib", "_imp": "importlib", "_frozen_importlib": "importlib",
    "_frozen_importlib_external": "importlib",
    "inspect": "inspect",
    "ctypes": "ctypes", "_ctypes": "ctypes",
    "shutil": "shutil",
    "pathlib": "pathlib",
    "io": "io", "_io": "io",
    "pty": "pty",
    "multiprocessing": "multiprocessing", "_multiprocessing": "multiprocessing",
}

# Module-level members of allowed modules that cellguard denies by default (a subset of
# config.rs DEFAULT_DENY_MEMBERS: the entries that name one object, whose other paths the
# table records as `deny_aliases`).
DEFAULT_DENY_MEMBERS = [
    "asyncio.create_subprocess_exec",
    "asyncio.create_subprocess_shell",
    "asyncio.open_connection",
    "asyncio.open_unix_connection",
    "asyncio.start_server",
    "asyncio.start_unix_server",
    "pydantic.ImportString",
]

MAX_STEPS = 3


def is_dunder(name):
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def target_family(mod):
    name = getattr(mod, "__name__", None)
    if not isinstance(name, str):
        return None
    if name in TARGETS:
        return TARGETS[name]
    root = name.split(".")[0]
    if root in TARGETS:
        return TARGETS[root]
    return None


# Families whose classes and functions are ordinary values when an allowed module re-exports
# them (`typing.Text` is `str`, `collections.abc` types): only the module objects count.
PLAIN_MEMBER_FAMILIES = {"builtins"}


def host_member_module(value):
    """The real name of the host-reaching module that defines class or function `value`
    (`pydantic.types.Path` -> `pathlib`), or None. Only classes and functions count (their
    `__module__` names where they live); instances, constants and the builtins family do not."""
    if not isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
        # A typing alias over such a class (`pydantic.SocketPath` is
        # `Annotated[pathlib.Path, PathType("socket")]`): its origin and arguments, read from
        # the instance's own namespace.
        try:
            d = object.__getattribute__(value, "__dict__")
        except Exception:
            return None
        if not isinstance(d, dict) or "__origin__" not in d:
            return None
        parts = [d.get("__origin__")] + list(d.get("__args__", ()) or ())
        for part in parts:
            if isinstance(part, type):
                home = host_member_module(part)
                if home is not None:
                    return home
        return None
    try:
        home = type.__dict__["__module__"].__get__(value) if isinstance(value, type) \
            else object.__getattribute__(value, "__module__")
    except Exception:
        return None
    if not isinstance(home, str):
        return None
    mod = sys.modules.get(home)
    fam = target_family(mod) if mod is not None else None
    if fam is None or fam in PLAIN_MEMBER_FAMILIES:
        return None
    return mod.__name__


def c_twins():
    """C-level twins of pure-Python standard-library modules: `_X` whose every public member is
    the same object as `X`'s (`_operator` -> `operator`, `_functools` -> `functools`). The rules
    judge an import of `_X` as one of `X` (members, reach, deny lists: issue 4, N11). Twins that
    are host-reaching or classified themselves (`_io`, `_pickle`, `_codecs`, in TARGETS or
    C_MODULES) keep their own entry."""
    out = {}
    for name in sorted(sys.stdlib_module_names):
        if not name.startswith("_") or name.startswith("__") or name in TARGETS \
                or name in C_MODULES:
            continue
        py = name.lstrip("_")
        if py not in sys.stdlib_module_names or py in TARGETS:
            continue
        try:
            c = importlib.import_module(name)
            p = importlib.import_module(py)
        except Exception:
            continue
        if getattr(p, "__file__", None) is None or getattr(c, "__file__", "") == p.__file__:
            continue
        public = [k for k in vars(c) if isinstance(k, str) and not k.startswith("_")]
        if public and all(getattr(p, k, None) is vars(c)[k] for k in public):
            out[name] = p.__name__
    return out


def namespace(obj):
    """Attribute name -> value, read from namespaces only (no descriptors run)."""
    out = {}
    if isinstance(obj, types.ModuleType):
        d = getattr(obj, "__dict__", None)
        if isinstance(d, dict):
            out.update(d)
            # Lazy modules (PEP 562 `__getattr__`, e.g. pydantic 2) resolve the names they
            # advertise in `__all__` (or pydantic's `_dynamic_imports`) on first access;
            # resolve them the same way.
            if "__getattr__" in d:
                names = list(d.get("__all__", ()) or ())
                names += list(d.get("_dynamic_imports", {}) or {})
                for name in names:
                    if isinstance(name, str) and name not in out:
                        try:
                            out[name] = getattr(obj, name)
                        except Exception:
                            pass
        return out
    if isinstance(obj, type):
        try:
            mro = type.__dict__["__mro__"].__get__(obj)
        except Exception:
            mro = (obj,)
        for klass in reversed(mro):
            if klass is object:
                continue
            try:
                out.update(dict(type.__dict__["__dict__"].__get__(klass)))
            except Exception:
                pass
        return out
    try:
        d = object.__getattribute__(obj, "__dict__")
    except Exception:
        return out
    if isinstance(d, dict):
        out.update(d)
    return out


def load_submodules(root):
    """Imports every submodule of package `root` (and resolves the names a lazy PEP 562
    `__getattr__` advertises in `__all__` or pydantic's `_dynamic_imports`), so that the walk
    sees what a long-running host process has loaded: `pydantic.main`, `pydantic.fields`,
    `pydantic.type_adapter` are attributes of `pydantic` as soon as the host touched
    `BaseModel`, `Field` or `TypeAdapter`. `__main__` modules are skipped (they run programs)."""
    try:
        mod = importlib.import_module(root)
    except Exception as e:
        print(f"warning: cannot import {root}: {e}", file=sys.stderr)
        return None
    lazy = []
    for table in ("__all__", "_dynamic_imports"):
        names = getattr(mod, table, None) if table != "__all__" or "__getattr__" in vars(mod) else None
        if isinstance(names, (list, tuple, dict)):
            lazy.extend(n for n in names if isinstance(n, str))
    for name in lazy:
        try:
            getattr(mod, name)
        except Exception:
            pass
    path = getattr(mod, "__path__", None)
    if path is not None:
        for info in pkgutil.walk_packages(path, root + ".", onerror=lambda _name: None):
            if "__main__" in info.name.split("."):
                continue
            try:
                importlib.import_module(info.name)
            except Exception as e:  # platform-specific submodules (asyncio.windows_events)
                print(f"note: skipped {info.name}: {type(e).__name__}", file=sys.stderr)
    return mod


def walk():
    paths = {}      # "collections._sys" -> "sys" (family)
    members = {}    # "pydantic.types.Path" -> "pathlib" (a host module's class or function)
    modules = {}    # real module name -> {attr: real module name}
    for root in ROOTS:
        mod = load_submodules(root)
        if mod is None:  # a root that is not installed is reported, not fatal
            continue
        # Breadth-first from the root, MAX_STEPS attribute steps deep.
        seen = {id(mod)}
        frontier = [(root, mod)]
        for step in range(1, MAX_STEPS + 1):
            nxt = []
            for path, obj in frontier:
                ns = namespace(obj)
                is_mod = isinstance(obj, types.ModuleType)
                for name in sorted(ns, key=str):
                    if not isinstance(name, str) or is_dunder(name):
                        continue
                    value = ns[name]
                    sub = f"{path}.{name}"
                    if isinstance(value, types.ModuleType):
                        if is_mod:
                            modules.setdefault(obj.__name__, {})[name] = value.__name__
                        fam = target_family(value)
                        if fam is not None:
                            paths.setdefault(sub, value.__name__)
                    elif is_mod and target_family(obj) is None:
                        # A class or function of a host-reaching module re-exported under an
                        # allowed one (`pydantic.types.Path` is `pathlib.Path`): the path
                        # reaches that module's capability without naming it (issue 4, N12).
                        home = host_member_module(value)
                        if home is not None:
                            members.setdefault(sub, home)
                    # Modules are walked along every path (a path is a way in); other objects
                    # once per root, at their shortest path.
                    if isinstance(value, types.ModuleType):
                        if value is obj or sub.count(".") >= MAX_STEPS:
                            continue
                    elif id(value) in seen:
                        continue
                    seen.add(id(value))
                    if isinstance(value, (types.ModuleType, type)) or (
                        not isinstance(value, (int, float, str, bytes, bool, type(None)))
                        and hasattr(type(value), "__dict__")
                        and isinstance(namespace(value), dict)
                        and namespace(value)
                    ):
                        nxt.append((sub, value))
            frontier = nxt
    # A member under a path that already reaches a host module is reported there.
    members = {k: v for k, v in members.items()
               if not any(p.startswith("_") for p in k.split("."))
               and not any(k.rsplit(".", n)[0] in paths for n in range(1, k.count(".") + 1))}
    return paths, modules, members


def all_module_maps(modules):
    """Module-valued attributes of every module that any recorded map points to, once."""
    todo = list(modules)
    done = set(modules)
    while todo:
        name = todo.pop()
        for target in list(modules.get(name, {}).values()):
            if target in done:
                continue
            done.add(target)
            mod = sys.modules.get(target)
            if mod is None:
                continue
            entry = {}
            for attr, value in namespace(mod).items():
                if isinstance(attr, str) and not is_dunder(attr) and isinstance(value, types.ModuleType):
                    entry[attr] = value.__name__
            if entry:
                modules[target] = entry
                todo.append(target)
    return modules


def submodule_aliases():
    """Dotted import names whose module object has another `__name__` (os.path -> posixpath)."""
    out = {}
    for key, mod in list(sys.modules.items()):
        name = getattr(mod, "__name__", None)
        if isinstance(name, str) and name != key and "." in key:
            out[key] = name
    return out


def deny_aliases():
    """Every path (through modules only, at most MAX_STEPS steps) to a default denied member."""
    out = {}
    wanted = {}
    for member in DEFAULT_DENY_MEMBERS:
        mod_name, _, attr = member.rpartition(".")
        try:
            obj = getattr(importlib.import_module(mod_name), attr)
        except Exception:
            continue
        wanted[id(obj)] = member
    for root in ROOTS:
        try:
            mod = importlib.import_module(root)
        except Exception:
            continue
        frontier = [(root, mod)]
        seen = {id(mod)}
        for _ in range(MAX_STEPS):
            nxt = []
            for path, m in frontier:
                for name, value in sorted(namespace(m).items(), key=lambda kv: str(kv[0])):
                    if not isinstance(name, str) or is_dunder(name):
                        continue
                    sub = f"{path}.{name}"
                    if id(value) in wanted and sub != wanted[id(value)]:
                        out[sub] = wanted[id(value)]
                    if isinstance(value, types.ModuleType) and id(value) not in seen:
                        seen.add(id(value))
                        nxt.append((sub, value))
            frontier = nxt
    return out


# ---- host-reaching modules (SBX006 and the allowlist warning) ------------------------------
#
# A module is host-reaching when its public API can, within HOST_STEPS calls, run code from a
# string, import a module by name, start a process or thread or other deferred execution, do
# file or network I/O, or hand out frames, code objects or the whole heap. The verdict is derived
# from the module sources of the running CPython (AST only: nothing is imported or run for it):
# every function and method records the capability sinks it calls and the functions it calls
# (same-module names, `module.function` through its imports, `self.method`), and the
# capabilities of a module are those its public functions, classes and methods reach within
# HOST_STEPS calls. Modules without Python source (C extensions) are classified by C_MODULES.

HOST_STEPS = 3

# Capability kinds, with the text a diagnostic shows.
KINDS = {
    "exec": "runs code from strings",
    "import": "imports modules by name",
    "process": "starts processes",
    "file": "reads or writes files",
    "network": "opens network connections",
    "deferred": "runs code later, in threads, timers, exit or signal handlers",
    "frames": "exposes execution frames or tracing hooks",
    "code": "builds code objects or loads pickles",
    "native": "calls native code or raw memory",
    "heap": "exposes every live object",
    "identity": "reads the host's environment, users, groups or machine identity",
    "argv": "reads the host process's command line",
}

# Builtins that are sinks when called by their bare name.
BUILTIN_SINKS = {
    "exec": "exec", "eval": "exec", "compile": "code", "__import__": "import", "open": "file",
}

# Sinks called as `module.attr(...)` (real module name -> attr -> kind; "*" = every attribute).
MODULE_SINKS = {
    "os": {**{a: "process" for a in (
        "system popen execl execle execlp execlpe execv execve execvp execvpe spawnl spawnle "
        "spawnlp spawnlpe spawnv spawnve spawnvp spawnvpe fork forkpty posix_spawn "
        "posix_spawnp kill killpg startfile").split()},
        **{a: "file" for a in (
        "open remove unlink rename renames replace mkdir makedirs rmdir removedirs listdir "
        "scandir walk fwalk chmod chown lchown symlink link truncate utime fdopen chdir "
        "mkfifo mknod chroot").split()},
        **{a: "identity" for a in (
        "environ environb getenv getenvb putenv unsetenv getlogin uname").split()}},
    "posix": {"system": "process", "fork": "process", "open": "file", "execv": "process"},
    "subprocess": {"*": "process"},
    "_posixsubprocess": {"*": "process"},
    "pty": {"spawn": "process", "fork": "process"},
    "multiprocessing": {"*": "process"},
    "socket": {**{a: "network" for a in (
        "socket create_connection create_server socketpair fromfd getaddrinfo "
        "gethostbyname gethostbyname_ex gethostbyaddr getfqdn getnameinfo").split()},
        "gethostname": "identity"},
    "_socket": {"*": "network"},
    "pwd": {"*": "identity"},
    "grp": {"*": "identity"},
    "spwd": {"*": "identity"},
    "winreg": {"*": "identity"},
    "_msi": {"*": "file"},  # `OpenDatabase(path)` (msilib)
    "_winreg": {"*": "identity"},
    "ssl": {"wrap_socket": "network", "create_connection": "network"},
    "importlib": {"import_module": "import", "__import__": "import", "reload": "import"},
    "importlib.util": {"*": "import"},
    "importlib.machinery": {"*": "import"},
    "_imp": {"*": "import"},
    "builtins": {k: v for k, v in BUILTIN_SINKS.items()},
    "io": {"open": "file", "FileIO": "file", "open_code": "file"},
    "_io": {"open": "file", "FileIO": "file", "open_code": "file"},
    "codecs": {"open": "file"},
    "shutil": {"*": "file"},
    "pathlib": {"Path": "file", "PosixPath": "file", "WindowsPath": "file"},
    "tempfile": {"*": "file"},
    "ctypes": {"*": "native"},
    "_ctypes": {"*": "native"},
    "mmap": {"mmap": "native"},
    "_thread": {"start_new_thread": "deferred", "start_new": "deferred"},
    "threading": {"Thread": "deferred", "Timer": "deferred"},
    "atexit": {"register": "deferred"},
    "signal": {"signal": "deferred", "setitimer": "deferred", "alarm": "deferred"},
    # `argv`/`orig_argv`: the host's command line, which a module reads when the caller gives
    # no arguments (`optparse.OptionParser().parse_args()`, `fileinput.input()`).
    "sys": {"settrace": "frames", "setprofile": "frames", "addaudithook": "deferred",
            "argv": "argv", "orig_argv": "argv"},
    "gc": {"get_objects": "heap", "get_referrers": "heap", "get_referents": "heap"},
    "pickle": {"loads": "code", "load": "code", "Unpickler": "code"},
    "_pickle": {"loads": "code", "load": "code", "Unpickler": "code"},
    "marshal": {"loads": "code", "load": "code"},
}

# What each family of TARGETS gives, for targets whose source shows no sink.
FAMILY_KINDS = {
    "os": ["process", "file"], "sys": ["import", "frames"], "subprocess": ["process"],
    "socket": ["network"], "builtins": ["exec", "import", "file"], "importlib": ["import"],
    "inspect": ["frames"], "ctypes": ["native"], "shutil": ["file"], "pathlib": ["file"],
    "io": ["file"], "pty": ["process"], "multiprocessing": ["process"],
}

# Modules without Python source, classified by hand (what their functions do).
C_MODULES = {
    "posix": ["process", "file"], "nt": ["process", "file"], "sys": ["import", "frames"],
    "builtins": ["exec", "import", "file"], "_imp": ["import"], "_io": ["file"],
    "_socket": ["network"], "_ssl": ["network"], "select": ["network"],
    "_posixsubprocess": ["process"], "_multiprocessing": ["process"],
    "_posixshmem": ["native"], "_ctypes": ["native"], "_ctypes_test": ["native"],
    "mmap": ["native"], "_thread": ["deferred"], "atexit": ["deferred"],
    "_signal": ["deferred"], "faulthandler": ["file", "deferred"], "gc": ["heap"],
    "marshal": ["code"], "_pickle": ["code"], "_lsprof": ["exec", "frames"],
    "_tracemalloc": ["frames"], "fcntl": ["file"], "termios": ["file"], "resource": ["process"],
    "readline": ["file"], "syslog": ["file"], "_sqlite3": ["file"], "_dbm": ["file"],
    "_gdbm": ["file"], "_curses": ["file"], "_tkinter": ["exec"], "ossaudiodev": ["file"],
    "grp": ["identity"], "pwd": ["identity"], "spwd": ["identity"], "nis": ["network"],
    "_xxsubinterpreters": ["exec"], "_testcapi": ["native"], "_testinternalcapi": ["native"],
    "_crypt": [], "_uuid": ["identity"],  # `generate_time_safe` embeds the host's MAC address
    # Windows and macOS modules (not importable here, classified for allowlists written there).
    "_winapi": ["process", "file"], "msvcrt": ["file"], "winreg": ["identity"],
    "_overlapped": ["file", "network"], "winsound": ["file"], "_msi": ["file"],
    "_scproxy": ["identity"],
    # `setlocale(LC_ALL, "")` reads the host's LANG/LC_* variables and changes the whole
    # host process's locale.
    "_locale": ["identity"],
    # `warn_explicit(..., filename, lineno)` prints that line of a cell-given file (linecache).
    "_warnings": ["file"],
    # `register(search)` installs a codec search function the host's later `encode`/`decode`
    # calls run.
    "_codecs": ["deferred"],
    # `get_running_loop()` hands out the host's event loop (its process and network methods
    # are denied under asyncio's names only); `Task.get_stack` hands out host frames.
    "_asyncio": ["deferred", "frames"],
}

# Command-line entry points (`base64.main()` reads `sys.argv`): not public API of a cell.
ENTRY_POINTS = {"main", "test", "_main", "_test"}

# Host-reaching third-party packages users put in allowlists (no source walk: not installed).
# Template and serialisation engines: jinja2's non-sandboxed `Environment`/`Template` reach
# Python attributes from template text (`lipsum|attr(...)` to `__globals__`), mako and
# chameleon compile templates to Python, yaml's `load`/`unsafe_load` with the full or unsafe
# loader (and ruamel's unsafe loader) build any Python object (`!!python/object/apply:os.system`),
# jsonpickle and joblib unpickle.
THIRD_PARTY = {
    "jinja2": ["exec"], "mako": ["exec"], "chameleon": ["exec"], "yaml": ["code", "exec"],
    "ruamel": ["code", "exec"], "jsonpickle": ["code"], "joblib": ["code", "file"],
    "requests": ["network"], "httpx": ["network"], "aiohttp": ["network"],
    "urllib3": ["network"], "cffi": ["native"],
    "paramiko": ["process", "network"], "fabric": ["process", "network"],
    "boto3": ["network"], "botocore": ["network"], "docker": ["process", "network"],
    "psutil": ["process", "identity"], "pexpect": ["process"], "sh": ["process"],
    "dill": ["code"], "cloudpickle": ["code"],
}

# Exposing these classes hands out code objects / functions built from them.
CODE_CLASSES = {"CodeType", "FunctionType", "LambdaType", "FrameType"}

# Derived verdicts overridden after review, each with the reason (None = not host-reaching).
# Modules in the default allowlists are not listed at all: SBX005 (this table) and the
# `deny-members` defaults cover their dangerous members.
HOST_OVERRIDES = {
    "getopt": None,     # file access only through gettext's lookup of installed catalogs
    "gettext": ["file"],  # reads `.mo` catalogs from a caller-given `localedir`
    "urllib.error": None,  # exception classes (their base wraps a response object, never opens)
    "tomllib._parser": None,  # parses text or an open binary file it is given
    # `os.path`: path strings. Its readers of the host's environment, user database, working
    # directory and file system (`expanduser`, `expandvars`, `abspath`, `realpath`, `exists`,
    # `getsize`, ...) are default `deny-members` (config.rs), so that `join`/`splitext` stay
    # usable.
    "posixpath": None,
    "ntpath": None,
    "genericpath": None,
    "encodings": None,  # imports only `encodings.<codec>` by sanitised codec name
    "distutils": ["process", "file"],  # the build system: compilers, `spawn`, file utilities
    "pickle": ["code", "import"],  # `pickle.loads` runs `find_class` imports (C `_pickle`)
    "signal": ["deferred"],
    "sqlite3": ["file"],
    "multiprocessing": ["process"],
    "concurrent.futures": ["process", "deferred"],  # lazy `ProcessPoolExecutor`
    "concurrent.futures.process": ["process", "deferred"],
    "concurrent.futures.thread": ["deferred"],
    "test": ["process", "exec"],  # the regression suite; `test.support` runs interpreters
    # `uuid4`/`UUID` are plain values. The readers of the host's MAC address, `getnode` and
    # `uuid1`, are default `deny-members` (config.rs); the commands they run are fixed.
    "uuid": None,
    # Opens tzdata files by validated key under `TZPATH`; `reset_tzpath(to=[dir])`, which
    # would point it at a cell-chosen directory, is a default `deny-member` (config.rs).
    "zoneinfo": None,
    # `mimetypes` is NOT overridden: `read_mime_types(path)`, `init([path])` and
    # `MimeTypes([path])` read cell-given files (issue 4 F12; the derivation sees the `open`).
    "enum": None,       # `sys._getframe` only to name its own module
    # `locale` is NOT overridden: `getdefaultlocale()` reads the host's LANG/LC_* variables and
    # `setlocale` changes the whole host process's locale.
    "platform": ["process", "identity"],  # `architecture` runs `file` on a cell-given path;
    # `node`/`uname` give the host's name
    "types": ["code"],
    "operator": None,
    # `FrameSummary(path, n, name).line`, `format_list`/`print_list` read lines of cell-given
    # files through linecache (a property read, which the derivation does not follow), and
    # `walk_stack(None)`/`extract_stack()` hand out the host's frames.
    "traceback": ["file", "frames"],
    # `_Printer(name, data, files, dirs)()` prints cell-given files (`license`), and
    # `Quitter()` (`exit`/`quit`) closes the host's stdin; classes only, so not derived.
    "_sitebuiltins": ["file"],
    # Importing it runs `webbrowser.open` (module-level code, not derived).
    "antigravity": ["process", "network"],
    # `copyreg.pickle(type, fn)` installs a reducer in the host's global dispatch table: the
    # host's later pickling runs the cell's function.
    "copyreg": ["deferred"],
    # The `select` module's pollers (`select` is listed) over any host file descriptor number.
    "selectors": ["network"],
    # Windows only (not shipped here): `OpenDatabase(path)`, `init_database(path, ...)`.
    "msilib": ["file"],
}


def _stdlib_sources():
    """Real module name -> source path, for every pure-Python module of the standard library."""
    import os
    import sysconfig
    root = sysconfig.get_paths()["stdlib"]
    names = set(sys.stdlib_module_names)
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        parts = [] if rel == "." else rel.split(os.sep)
        if parts and (parts[0] not in names
                      or not os.path.exists(os.path.join(dirpath, "__init__.py"))):
            dirnames[:] = []
            continue
        dirnames.sort()
        for f in sorted(filenames):
            if not f.endswith(".py"):
                continue
            stem = f[:-3]
            if not parts and stem not in names:
                continue
            dotted = parts + ([] if stem == "__init__" else [stem])
            if not all(p.isidentifier() for p in dotted) or "__main__" in dotted:
                continue
            out[".".join(dotted)] = os.path.join(dirpath, f)
    return out


class _ModScan:
    """Sinks and call edges of every function of one module (AST only)."""

    def __init__(self, name, tree, module_names, is_pkg):
        self.name = name
        self.is_pkg = is_pkg
        self.ast_only = set()   # functions whose `compile` is `ast.parse`'s (PyCF_ONLY_AST)
        self.aliases = {}       # local name -> ("mod", real) or ("attr", (module, attr))
        self.funcs = {}         # qualname -> {"sinks": set, "calls": set of (module, short)}
        self.by_short = {}      # short name -> [qualname]
        self.public = []        # qualnames that are public API
        self.defines = set()    # public module-level names
        self.star_from = []     # modules this one re-exports with `from m import *`
        self.bases = {}         # top-level class -> [(module, name)] of its bases
        self.module_names = module_names
        self._imports(tree)
        self._scan(tree)

    def _imports(self, tree):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.aliases[a.asname] = ("mod", a.name)
                    else:
                        top = a.name.split(".")[0]
                        self.aliases[top] = ("mod", top)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = self.name.split(".")
                    parent = parent[: len(parent) - node.level] if not self.is_pkg else parent[: len(parent) - node.level + 1]
                    base = ".".join(parent + ([base] if base else []))
                for a in node.names:
                    if a.name == "*":
                        self.star_from.append(base)
                        continue
                    local = a.asname or a.name
                    full = f"{base}.{a.name}" if base else a.name
                    if full in self.module_names:
                        self.aliases[local] = ("mod", full)
                    else:
                        self.aliases[local] = ("attr", (base, a.name))
        # Module-level re-bindings of imported members (`_start_new_thread =
        # _thread.start_new_thread` in threading).
        for node in tree.body:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)):
                continue
            chain = self._chain(node.value)
            if not chain:
                continue
            mod, rest = self._resolve(chain)
            if mod is not None and len(rest) == 1:
                self.aliases.setdefault(node.targets[0].id, ("attr", (mod, rest[0])))

    def _chain(self, node):
        """`a.b.c` -> ["a", "b", "c"], or None."""
        out = []
        while isinstance(node, ast.Attribute):
            out.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            out.append(node.id)
            return out[::-1]
        return None

    def _resolve(self, chain):
        """A dotted chain -> (real module, remaining attrs) when its base is an imported module."""
        kind, val = self.aliases.get(chain[0], (None, None))
        if kind == "mod":
            mod, rest = val, chain[1:]
            while rest and f"{mod}.{rest[0]}" in self.module_names:
                mod, rest = f"{mod}.{rest[0]}", rest[1:]
            return mod, rest
        if kind == "attr":
            return val[0], [val[1]] + chain[1:]
        return None, None

    def _sink(self, mod, attr):
        table = MODULE_SINKS.get(mod) or {}
        return table.get(attr) or table.get("*")

    def _scan(self, tree):
        scan = self

        class V(ast.NodeVisitor):
            def __init__(self):
                self.stack = []
                self.cls = []

            def cur(self):
                return self.stack[-1] if self.stack else None

            def visit_ClassDef(self, node):
                if not self.stack and not self.cls:
                    if not node.name.startswith("_"):
                        scan.defines.add(node.name)
                        scan.public.append(node.name)
                    # Constructing the class runs its bases' constructors (`WSGIServer` is a
                    # `socketserver.TCPServer`).
                    info = scan.funcs.setdefault(node.name, {"sinks": set(), "calls": set()})
                    bases = scan.bases.setdefault(node.name, [])
                    for base in node.bases:
                        chain = scan._chain(base)
                        if not chain:
                            continue
                        mod, rest = scan._resolve(chain)
                        if mod is not None and len(rest) == 1:
                            info["calls"].add((mod, rest[0]))
                            bases.append((mod, rest[0]))
                        elif mod is None and len(chain) == 1:
                            info["calls"].add((scan.name, chain[0]))
                            bases.append((scan.name, chain[0]))
                self.cls.append(node.name)
                self.generic_visit(node)
                self.cls.pop()

            def _func(self, node):
                qual = ".".join(self.cls + [node.name]) if not self.stack else f"{self.stack[-1]}.<{node.name}>"
                scan.funcs.setdefault(qual, {"sinks": set(), "calls": set()})
                if any(
                    (isinstance(n, ast.Name) and n.id == "PyCF_ONLY_AST")
                    or (isinstance(n, ast.Attribute) and n.attr == "PyCF_ONLY_AST")
                    for n in ast.walk(node)
                ):
                    # `ast.parse`: its `compile` builds a syntax tree, never code.
                    scan.ast_only.add(qual)
                scan.by_short.setdefault(node.name, []).append(qual)
                if not self.stack:
                    owner_public = all(not c.startswith("_") for c in self.cls)
                    me_public = not node.name.startswith("_") or (
                        node.name.startswith("__") and node.name.endswith("__"))
                    if (owner_public and me_public and (self.cls or not node.name.startswith("_"))
                            and not (not self.cls and node.name in ENTRY_POINTS)):
                        scan.public.append(qual)
                    if not self.cls and not node.name.startswith("_"):
                        scan.defines.add(node.name)
                self.stack.append(qual)
                saved = self.cls
                self.cls = []
                self.generic_visit(node)
                self.cls = saved
                self.stack.pop()
                if not self.stack and self.cls:
                    # The class's constructor edge.
                    cls_key = self.cls[-1]
                    scan.funcs.setdefault(cls_key, {"sinks": set(), "calls": set()})
                    if node.name in ("__init__", "__new__", "__post_init__"):
                        scan.funcs[cls_key]["calls"].add((scan.name, qual))

            visit_FunctionDef = _func
            visit_AsyncFunctionDef = _func

            def visit_Subscript(self, node):
                f = self.cur()
                if f is not None:
                    ch = self._chain_of(node.value)
                    if ch:
                        mod, rest = scan._resolve(ch)
                        constant = isinstance(node.slice, ast.Constant)
                        if (mod == "sys" and rest == ["modules"] and not constant
                                and isinstance(node.ctx, ast.Load)):
                            scan.funcs[f]["sinks"].add("import")
                self.generic_visit(node)

            def _chain_of(self, n):
                return scan._chain(n)

            def visit_Call(self, node):
                f = self.cur()
                if f is not None:
                    info = scan.funcs[f]
                    fn = node.func
                    if isinstance(fn, ast.Name):
                        if fn.id == "compile" and f in scan.ast_only:
                            # `ast.parse`: compiles to a syntax tree, never to code.
                            self.generic_visit(node)
                            return
                        if fn.id in BUILTIN_SINKS and fn.id not in scan.aliases:
                            info["sinks"].add(BUILTIN_SINKS[fn.id])
                        kind, val = scan.aliases.get(fn.id, (None, None))
                        if kind == "attr":
                            s = scan._sink(*val)
                            if s:
                                info["sinks"].add(s)
                            info["calls"].add(val)
                        else:
                            info["calls"].add((scan.name, fn.id))
                    elif isinstance(fn, ast.Attribute):
                        ch = scan._chain(fn)
                        mod, rest = scan._resolve(ch) if ch else (None, None)
                        if mod is not None and rest:
                            s = scan._sink(mod, rest[0])
                            if s:
                                info["sinks"].add(s)
                            info["calls"].add((mod, rest[0]) if len(rest) == 1 else (mod, rest[-1]))
                        elif (isinstance(fn.value, ast.Name) and fn.value.id in ("self", "cls")
                              and "." in f):
                            # self.m(): the method of the same class, else any method m of
                            # this module (inherited).
                            info["calls"].add((scan.name, f"{f.split('.')[0]}.{fn.attr}"))
                        elif not (fn.attr.startswith("__") and fn.attr.endswith("__")):
                            # obj.m(): methods of this module named m (never dunders, which
                            # every class has: `super().__init__()` would reach them all).
                            info["calls"].add((scan.name, fn.attr))
                self.generic_visit(node)

            def _owner(self):
                if self.stack:
                    return self.stack[-1]
                if self.cls:
                    key = self.cls[-1]
                    scan.funcs.setdefault(key, {"sinks": set(), "calls": set()})
                    return key
                return None

            def visit_Attribute(self, node):
                f = self._owner()
                if f is not None and isinstance(node.ctx, ast.Load):
                    ch = scan._chain(node)
                    mod, rest = scan._resolve(ch) if ch else (None, None)
                    if mod is not None and len(rest) == 1:
                        s = scan._sink(mod, rest[0])
                        if s:
                            scan.funcs[f]["sinks"].add(s)
                self.generic_visit(node)

            def visit_Name(self, node):
                f = self._owner()
                if (f is not None and isinstance(node.ctx, ast.Load)
                        and node.id in BUILTIN_SINKS and node.id not in scan.aliases
                        and not (node.id == "compile" and f in scan.ast_only)):
                    scan.funcs[f]["sinks"].add(BUILTIN_SINKS[node.id])
                # A sink imported by name (`from os import environ`).
                kind, val = scan.aliases.get(node.id, (None, None))
                if f is not None and isinstance(node.ctx, ast.Load) and kind == "attr":
                    s = scan._sink(*val)
                    if s:
                        scan.funcs[f]["sinks"].add(s)

        V().visit(tree)
        for node in tree.body:
            targets = []
            if isinstance(node, ast.Assign):
                targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            for t in targets:
                if not t.startswith("_"):
                    self.defines.add(t)


def host_modules(exclude_roots):
    """Real module name -> sorted capability kinds, for host-reaching standard-library modules."""
    sources = _stdlib_sources()
    names = set(sources) | set(sys.builtin_module_names) | set(C_MODULES)
    scans = {}
    for name, path in sources.items():
        try:
            with open(path, "rb") as fh:
                tree = ast.parse(fh.read())
        except (SyntaxError, ValueError, OSError):
            continue
        scans[name] = _ModScan(name, tree, names, path.endswith("__init__.py"))

    def callees(mod, short):
        """The functions a call edge `(module, name)` can reach: the function or class `name`,
        or `Class.method` for `self.method()` (falling back to every `method` of the module
        when the class inherits it), or every function of the module with that short name."""
        s = scans.get(mod)
        if s is None:
            return []
        if short in s.funcs:
            return [(mod, short)] + [(mod, q) for q in s.by_short.get(short, ()) if q != short
                                     and "." not in short]
        last = short.rsplit(".", 1)[-1]
        if "." in short and last.startswith("__") and last.endswith("__"):
            return []
        return [(mod, q) for q in s.by_short.get(last, ())]

    memo = {}

    def kinds_of(mod, qual):
        key = (mod, qual)
        if key in memo:
            return memo[key]
        found = set()
        frontier = [(mod, qual)]
        seen = {(mod, qual)}
        for depth in range(HOST_STEPS + 1):
            nxt = []
            for m, q in frontier:
                s = scans.get(m)
                if s is None:
                    if m in C_MODULES and depth > 0:
                        pass
                    continue
                info = s.funcs.get(q)
                if info is None:
                    continue
                found |= info["sinks"]
                if depth == HOST_STEPS:
                    continue
                for cm, cshort in info["calls"]:
                    for c in callees(cm, cshort):
                        if c not in seen:
                            seen.add(c)
                            nxt.append(c)
            frontier = nxt
        memo[key] = found
        return found

    inherited_memo = {}

    def inherited(mod, cls, depth=0):
        """Kinds of the public methods a class inherits from its bases, in any module
        (`asynchat.async_chat` inherits `create_socket` and `connect` from
        `asyncore.dispatcher`)."""
        key = (mod, cls)
        if key in inherited_memo:
            return inherited_memo[key]
        inherited_memo[key] = set()
        found = set()
        s = scans.get(mod)
        if s is None or depth > 8:
            return found
        for bm, bn in s.bases.get(cls, ()):
            b = scans.get(bm)
            # Classes of the default allowlists' modules (`typing.Protocol`, `typing.NamedTuple`)
            # are covered by SBX005/SBX007 themselves, and a C base's module-level verdict says
            # nothing about its methods (`io.RawIOBase` opens no file).
            if b is None or bm.split(".")[0] in exclude_roots:
                continue
            for q in b.funcs:
                owner, _, meth = q.partition(".")
                if owner == bn and meth and "." not in meth and "<" not in meth and (
                        not meth.startswith("_") or meth == "__call__"):
                    found |= kinds_of(bm, q)
            found |= inherited(bm, bn, depth + 1)
        inherited_memo[key] = found
        return found

    out = {}
    for name, s in scans.items():
        kinds = set()
        for q in s.public:
            kinds |= kinds_of(name, q)
            if "." not in q and q in s.bases:
                kinds |= inherited(name, q)
        if s.is_pkg:
            # A package's facade: public names it re-exports from its own submodules
            # (`unittest.TestLoader` is `unittest.loader.TestLoader`).
            for local, (kind, val) in s.aliases.items():
                if kind == "attr" and not local.startswith("_") and val[0].startswith(name + "."):
                    for c in callees(*val):
                        kinds |= kinds_of(*c)
        if s.defines & CODE_CLASSES:
            kinds.add("code")
        if kinds:
            out[name] = kinds
    for name, kinds in C_MODULES.items():
        if kinds:
            out[name] = set(kinds)
    # `from m import *` re-exports m's public API (`curses` is `_curses`, `tty` is `termios`).
    changed = True
    while changed:
        changed = False
        for name, s in scans.items():
            for src in s.star_from:
                extra = out.get(src, set()) - out.get(name, set())
                if extra:
                    out.setdefault(name, set()).update(extra)
                    changed = True
    for name, kinds in HOST_OVERRIDES.items():
        if kinds is None:
            out.pop(name, None)
        else:
            out[name] = set(kinds)
    for name, kinds in THIRD_PARTY.items():
        out[name] = set(kinds)
    # The host-reaching modules of the issue are host-reaching whatever their source shows
    # (`io.open` is `_io.open`, defined in C).
    for name, family in TARGETS.items():
        out.setdefault(name, set(FAMILY_KINDS[family]))
    for name in list(out):
        parts = name.split(".")
        if parts[0] in exclude_roots or (
            len(parts) > 1 and any(p.startswith(("test", "idle_test")) for p in parts[1:])
        ) or parts[0] == "turtledemo":
            del out[name]
    order = list(KINDS)
    return {k: sorted(v, key=order.index) for k, v in sorted(out.items())}


def exports(names):
    """Real module name -> sorted `__all__`, for the modules among `names` that define one."""
    out = {}
    for name in sorted(names):
        mod = sys.modules.get(name)
        # Read the namespace only: a lazy module's `__getattr__` is not run.
        ns = getattr(mod, "__dict__", None) if mod is not None else None
        value = ns.get("__all__") if isinstance(ns, dict) else None
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            out[name] = sorted(set(value))
    return out


def main():
    import warnings
    warnings.simplefilter("ignore")  # deprecation noise from resolving lazy names
    paths, modules, members = walk()
    modules = all_module_maps(modules)
    aliases = submodule_aliases()
    aliases.update(c_twins())
    versions = {}
    for root in ROOTS:
        mod = sys.modules.get(root)
        v = getattr(mod, "__version__", None) or getattr(mod, "VERSION", None)
        if isinstance(v, str):
            versions[root] = v
    table = {
        "format": "cellguard-sandbox-reach/1",
        "generator": "tools/gen_sandbox_reach.py",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": sys.platform,
        "package_versions": versions,
        "max_steps": MAX_STEPS,
        "roots": ROOTS,
        "targets": TARGETS,
        "paths": dict(sorted(paths.items())),
        "modules": {k: dict(sorted(v.items())) for k, v in sorted(modules.items())},
        "submodule_aliases": dict(sorted(aliases.items())),
        "deny_aliases": dict(sorted(deny_aliases().items())),
        "host_members": dict(sorted(members.items())),
        # `__all__` of every walked module that defines one: the names `from m import *`
        # binds (without `__all__` it binds every public name, `_private` ones excepted).
        "exports": exports(set(ROOTS) | set(modules) | {
            v for attrs in modules.values() for v in attrs.values()}),
        "host_steps": HOST_STEPS,
        "host_kinds": KINDS,
        "host_modules": host_modules(set(ROOTS)),
        # Top-level standard-library names: an allowlist entry outside them, the walked roots
        # and the host modules is a third-party module cellguard has no reach data for.
        "stdlib_modules": sorted(sys.stdlib_module_names),
    }
    json.dump(table, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
