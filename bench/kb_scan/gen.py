#!/usr/bin/env python3
"""Generates a realistic Colony-like Python source tree for the `cellguard kb scan` benchmark.

Usage: gen.py OUT_DIR [N_FILES=500] [SEED=7]

The tree mimics Colony's `agents/` package: capability modules (a capability class with
@action_executor methods, long docstrings, planning summaries, helper methods with real
bodies, pydantic models), subclass modules that inherit actions without mentioning the
decorator, agent/policy modules, and plain helper/model/test modules. About 40 % of the files
use the decorator, as in Colony (86 capability groups over ~300 agent modules).
Nothing here is copied from Colony; the shapes follow colony-reference.md §2.3.
"""
import os
import random
import sys

WORDS = ("page cache plan agent memory query cluster result event scope goal task mission "
         "issue review claim status summary graph node edge batch worker session user").split()
TYPES = ["str", "int", "bool", "float", "list[str]", "dict[str, Any]", "str | None",
         "int | None", "list[int]", 'Literal["fast", "slow"]', "Optional[str]", "set[str] | None"]


def w(r, n=1):
    return "_".join(r.choice(WORDS) for _ in range(n))


def sentence(r, n=12):
    s = " ".join(r.choice(WORDS) for _ in range(n))
    return s[0].upper() + s[1:] + "."


def helper_method(r, name):
    lines = [f"    async def {name}(self, {w(r)}: str, limit: int = 10) -> list[dict[str, Any]]:",
             f'        """{sentence(r)}"""',
             "        out: list[dict[str, Any]] = []",
             f"        for i, item in enumerate(self._{w(r)}_items):",
             "            if i >= limit:",
             "                break",
             f"            if item.get(\"{w(r)}\") is None:",
             "                continue",
             f"            out.append({{\"id\": item[\"id\"], \"score\": float(item.get(\"score\", 0.0)) * {r.randint(1, 9)}}})",
             "        try:",
             f"            await self.blackboard.write(key=f\"{w(r)}:{{self.agent.agent_id}}\", value=out)",
             "        except Exception as exc:  # noqa: BLE001",
             f"            logger.warning(\"write failed: %s\", exc)",
             "        return sorted(out, key=lambda d: d[\"score\"], reverse=True)",
             ""]
    return lines


def action_method(r, name, custom_key=False):
    params = []
    for i in range(r.randint(0, 5)):
        t = r.choice(TYPES)
        p = f"{w(r)}_{i}: {t}"
        if r.random() < 0.4:
            p += " = None" if "None" in t or "Optional" in t else (' = "fast"' if "Literal" in t else " = 3" if t == "int" else "")
        params.append(p)
    # required params must come first
    params.sort(key=lambda p: "=" in p)
    kw = []
    if custom_key:
        kw.append(f'action_key="{w(r, 2)}_{r.randint(0, 99999)}"')
    if r.random() < 0.5:
        kw.append("planning_summary=(\n            \"" + sentence(r, 10) + " \"\n            \"" + sentence(r, 8) + "\"\n        )")
    if r.random() < 0.1:
        kw.append("exclude_from_planning=True")
    if r.random() < 0.1:
        kw.append("emits_lifecycle=False")
    if r.random() < 0.1:
        kw.append('tags=frozenset({"memory", "expensive"})')
    sig = ", ".join(["self"] + params)
    lines = [f"    @action_executor({', '.join(kw)})",
             f"    async def {name}({sig}) -> dict[str, Any]:",
             f'        """{sentence(r)}',
             "",
             f"        {sentence(r, 20)}",
             f"        {sentence(r, 16)}",
             "",
             "        Args:"]
    for p in params:
        lines.append(f"            {p.split(':')[0]}: {sentence(r, 6)}")
    lines += ["",
              "        Returns:",
              f"            {sentence(r, 8)}",
              '        """',
              f"        state = await self._get_state()",
              f"        if not state.{w(r)}:",
              f"            return {{\"ok\": False, \"error\": \"{sentence(r, 4)}\"}}",
              f"        result = await self._{w(r)}_helper(state, {r.randint(1, 50)})",
              "        return {\"ok\": True, \"result\": result}",
              ""]
    return lines


def model_class(r, name):
    lines = [f"class {name}(BaseModel):", f'    """{sentence(r)}"""', ""]
    for i in range(r.randint(3, 8)):
        lines.append(f"    {w(r)}_{i}: {r.choice(TYPES)} = Field(default=None, description=\"{sentence(r, 5)}\")")
    lines.append("")
    return lines


HEADER = ["from __future__ import annotations", "", "import asyncio", "import logging",
          "from typing import Any, Literal, Optional", "", "from pydantic import BaseModel, Field", ""]


def capability_file(r, idx):
    cls = f"{w(r).title().replace('_', '')}{idx}Capability"
    alias = r.random() < 0.15
    lines = [f'"""{sentence(r)}"""', ""] + HEADER
    if alias:
        lines += ["from polymathera.colony.agents.patterns.actions import dispatcher as disp", ""]
        deco = "disp.action_executor"
    else:
        lines += ["from polymathera.colony.agents.base import AgentCapability",
                  "from polymathera.colony.agents.patterns.actions.dispatcher import action_executor", ""]
        deco = "action_executor"
    lines += ["logger = logging.getLogger(__name__)", ""]
    for m in range(r.randint(1, 3)):
        lines += model_class(r, f"{cls}Model{m}")
    lines += [f"class {cls}(AgentCapability):",
              f'    """{sentence(r)}', "", f"    {sentence(r, 20)}", '    """', ""]
    if r.random() < 0.2:
        lines += [f'    _capability_key = "{w(r)}_{idx}"', ""]
    lines += ["    def __init__(self, agent=None, scope_id=None):",
              "        super().__init__(agent=agent, scope_id=scope_id)",
              f"        self._{w(r)}_items: list[dict[str, Any]] = []", ""]
    if r.random() < 0.3:
        lines += ["    def get_capability_tags(self) -> frozenset[str]:",
                  f'        return frozenset({{"{r.choice(["planning", "memory", "agents"])}"}})', ""]
    n = r.randint(2, 9)
    for k in range(n):
        block = action_method(r, f"{w(r, 2)}_{k}", custom_key=r.random() < 0.15)
        if deco != "action_executor":
            block[0] = block[0].replace("@action_executor", "@" + deco)
        lines += block
        if r.random() < 0.7:
            lines += helper_method(r, f"_{w(r)}_helper_{k}")
    return lines


def subclass_file(r, idx, bases):
    base_mod, base = r.choice(bases)
    cls = f"Extended{idx}{base}"
    lines = HEADER + [f"from {base_mod} import {base}", "", f"class {cls}({base}):",
                      f'    """{sentence(r)}"""', ""]
    for k in range(r.randint(1, 4)):
        lines += helper_method(r, f"_{w(r)}_extra_{k}")
    return lines


def plain_file(r, idx):
    lines = [f'"""{sentence(r)}"""', ""] + HEADER
    for m in range(r.randint(1, 4)):
        lines += model_class(r, f"Record{idx}_{m}")
    lines += [f"class Service{idx}:", f'    """{sentence(r)}"""', ""]
    for k in range(r.randint(2, 8)):
        lines += helper_method(r, f"{w(r)}_{k}")
    lines += [f"def build_{w(r)}(config: dict[str, Any]) -> Service{idx}:",
              f"    return Service{idx}(**config)", ""]
    return lines


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    r = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
    bases = []
    total = 0
    for i in range(n):
        kind = r.random()
        pkg = os.path.join(out, "agents", f"pkg{i % 25}")
        os.makedirs(pkg, exist_ok=True)
        name = f"mod{i}.py"
        module = f"agents.pkg{i % 25}.mod{i}"
        if kind < 0.40 or not bases:
            lines = capability_file(r, i)
            cls_line = next(l for l in lines if l.startswith("class ") and "Capability(" in l)
            bases.append((module, cls_line.split()[1].split("(")[0]))
        elif kind < 0.50:
            lines = subclass_file(r, i, bases)
        else:
            lines = plain_file(r, i)
        text = "\n".join(lines) + "\n"
        total += len(text)
        with open(os.path.join(pkg, name), "w") as f:
            f.write(text)
    print(f"{n} files, {total} bytes, {total // n} bytes/file on average")


if __name__ == "__main__":
    main()
