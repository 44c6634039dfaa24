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

import importlib
import json
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

# Members of allowed modules that cellguard denies by default (config.rs DEFAULT_DENY_MEMBERS).
DEFAULT_DENY_MEMBERS = [
    "asyncio.create_subprocess_exec",
    "asyncio.create_subprocess_shell",
    "asyncio.open_connection",
    "asyncio.open_unix_connection",
    "asyncio.start_server",
    "asyncio.start_unix_server",
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


def namespace(obj):
    """Attribute name -> value, read from namespaces only (no descriptors run)."""
    out = {}
    if isinstance(obj, types.ModuleType):
        d = getattr(obj, "__dict__", None)
        if isinstance(d, dict):
            out.update(d)
            # Lazy modules (PEP 562 `__getattr__`, e.g. pydantic 2) resolve the names they
            # advertise in `__all__` on first access; resolve them the same way.
            if "__getattr__" in d:
                names = d.get("__all__", ())
                for name in list(names) if isinstance(names, (list, tuple)) else ():
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


def walk():
    paths = {}      # "collections._sys" -> "sys" (family)
    modules = {}    # real module name -> {attr: real module name}
    for root in ROOTS:
        try:
            mod = importlib.import_module(root)
        except Exception as e:  # a root that is not installed is reported, not fatal
            print(f"warning: cannot import {root}: {e}", file=sys.stderr)
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
    return paths, modules


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


def main():
    paths, modules = walk()
    modules = all_module_maps(modules)
    aliases = submodule_aliases()
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
    }
    json.dump(table, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
