#!/usr/bin/env python3
"""Extract the benign real cells of the shared corpus into fixtures/benign/cells.jsonl.

Developer script, run once by hand (tests never read ../shared): it pulls the Python code out of
each corpus source (see fixtures/benign/README.md for sources and licences) and writes one JSON
object per line: {"id", "source", "dialect", "code"}. `dialect` is the cellguard dialect the
cell is written for (`colony` or `functions`).

Usage: python3 tools/extract_benign_cells.py ../shared/corpus > fixtures/benign/cells.jsonl
"""

import json
import pathlib
import re
import sys


def colony(root):
    for path in sorted((root / "cells/colony/py").glob("colony_*.py")):
        yield path.stem, f"cells/colony/py/{path.name}", "colony", path.read_text()


def smolagents(root):
    base = root / "cells/smolagents"
    for line in (base / "doc_run_logs.jsonl").read_text().splitlines():
        d = json.loads(line)
        yield d["id"], "cells/smolagents/doc_run_logs.jsonl", "functions", d["code"]
    for line in (base / "prompt_fewshot_cells.jsonl").read_text().splitlines():
        d = json.loads(line)
        yield d["id"], "cells/smolagents/prompt_fewshot_cells.jsonl", "functions", d["code"]
    for line in (base / "test_mock_model_outputs.jsonl").read_text().splitlines():
        d = json.loads(line)
        out = d["model_output"]
        blocks = re.findall(r"<code>(.*?)(?:</code>|```|$)", out, re.S)
        if not blocks:
            blocks = re.findall(r"```(?:py|python)?\n(.*?)(?:```|$)", out, re.S)
        for i, code in enumerate(b for b in blocks if b.strip()):
            yield f"{d['id']}_{i}", "cells/smolagents/test_mock_model_outputs.jsonl", "functions", code


def render_call(func, params):
    """A BFCL single-turn ground truth {func: {param: [allowed values]}} as one call."""
    args = []
    for name, allowed in params.items():
        values = [v for v in allowed if v != ""]
        if values:
            args.append(f"{name}={values[0]!r}")
    return f"{func}({', '.join(args)})"


def bfcl(root):
    base = root / "cells/bfcl/possible_answer"
    for path in sorted(base.glob("BFCL_v4_*.json")):
        for line in path.read_text().splitlines():
            d = json.loads(line)
            gt = d["ground_truth"]
            if path.name == "BFCL_v4_multi_turn_base.json":
                for turn, calls in enumerate(gt):
                    if calls:
                        yield (f"{d['id']}_turn{turn}", f"cells/bfcl/possible_answer/{path.name}",
                               "functions", "\n".join(calls) + "\n")
            else:
                calls = [render_call(f, p) for item in gt for f, p in item.items()]
                yield (d["id"], f"cells/bfcl/possible_answer/{path.name} (rendered)",
                       "functions", "\n".join(calls) + "\n")


def codeact(root):
    base = root / "cells/codeact-mint"
    files = sorted(base.glob("in_context_examples/**/with_tool.txt")) + sorted(
        base.glob("prompt_templates/*.txt"))
    for path in files:
        rel = path.relative_to(root).as_posix()
        for i, code in enumerate(re.findall(r"<execute>(.*?)</execute>", path.read_text(), re.S)):
            stem = path.relative_to(base).as_posix().replace("/", "_").removesuffix(".txt")
            yield f"codeact_{stem}_{i}", rel, "functions", code.strip("\n") + "\n"


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/corpus")
    for gen in (colony, smolagents, bfcl, codeact):
        for cid, source, dialect, code in gen(root):
            print(json.dumps({"id": cid, "source": source, "dialect": dialect, "code": code},
                             ensure_ascii=False))


if __name__ == "__main__":
    main()
