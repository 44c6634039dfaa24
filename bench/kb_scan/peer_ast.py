#!/usr/bin/env python3
"""The peer for `cellguard kb scan`: static extraction of @action_executor methods with
CPython's own `ast` module, the method the corpus' colony-kb/1 file was built with (no code
imported or executed).

usage: peer_ast.py DIR > kb.json

Deliberately minimal (a floor for the peer's cost, not a competitor on features): walks every
.py file, parses it with `ast.parse`, and for each class method or module function decorated
with `action_executor(...)` / `x.action_executor(...)` records the key `Class.Class.method`
(or the `action_key=` string), the parameters (name, annotation and default unparsed from the AST),
`planning_summary` or the docstring. No inheritance, aliases or capability keys.
"""
import ast
import json
import os
import sys


def is_deco(d):
    f = d.func if isinstance(d, ast.Call) else d
    return (isinstance(f, ast.Name) and f.id == "action_executor") or (
        isinstance(f, ast.Attribute) and f.attr == "action_executor")


def action(cls, fn, src):
    deco = next(d for d in fn.decorator_list if is_deco(d))
    key, summary = fn.name, None
    if isinstance(deco, ast.Call):
        for kw in deco.keywords:
            if kw.arg == "action_key" and isinstance(kw.value, ast.Constant):
                key = kw.value.value
            if kw.arg == "planning_summary" and isinstance(kw.value, ast.Constant):
                summary = kw.value.value
    args = fn.args.posonlyargs + fn.args.args
    defaults = [None] * (len(args) - len(fn.args.defaults)) + fn.args.defaults
    params = []
    for a, d in list(zip(args, defaults))[1 if cls else 0:]:
        params.append({"name": a.arg,
                       "type": ast.unparse(a.annotation) if a.annotation else None,
                       "required": d is None,
                       "default": ast.unparse(d) if d is not None else None})
    for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults):
        params.append({"name": a.arg,
                       "type": ast.unparse(a.annotation) if a.annotation else None,
                       "required": d is None, "keyword_only": True})
    full = f"{cls}.{cls}.{key}" if cls else key
    return full, {"summary": summary or ast.get_docstring(fn), "params": params,
                  "accepts_extra_kwargs": fn.args.kwarg is not None, "source_line": fn.lineno}


def main():
    groups = []
    for root, _, files in os.walk(sys.argv[1]):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                src = f.read()
            try:
                tree = ast.parse(src)
            except SyntaxError:
                continue
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    actions = {}
                    for item in node.body:
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                                is_deco(d) for d in item.decorator_list):
                            k, v = action(node.name, item, src)
                            actions[k] = v
                    if actions:
                        groups.append({"group_key": node.name, "source_path": path, "actions": actions})
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                        is_deco(d) for d in node.decorator_list):
                    k, v = action(None, node, src)
                    groups.append({"group_key": f"func.{node.name}", "source_path": path, "actions": {k: v}})
    json.dump({"schema": "colony-kb/1", "groups": groups}, sys.stdout)


if __name__ == "__main__":
    main()
