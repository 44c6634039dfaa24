#!/usr/bin/env python3
"""Materialise the corpus cell set as one .py file per cell, so that cellguard and ruff check
exactly the same files, with a cellguard.toml per source naming the matching knowledge base.

usage: corpus_cells.py CORPUS_DIR OUT_DIR   (prints the number of cells written)

Sources (see the corpus README): Colony cells (py/), smolagents run-log and few-shot cells,
BFCL ground-truth calls (multi-turn turns and single-turn answers rendered as calls), and the
CodeAct <execute> blocks. Only reads the corpus; nothing is executed.
"""
import json
import pathlib
import re
import shutil
import sys


def write(out: pathlib.Path, name: str, code: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_text(code if code.endswith("\n") else code + "\n", encoding="utf-8")


def jsonl(path: pathlib.Path):
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def call(func: str, params: dict) -> str:
    args = ", ".join(f"{k}={v[0]!r}" for k, v in params.items() if v)
    return f"{func}({args})"


def main() -> int:
    corpus, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    if out.exists():
        shutil.rmtree(out)
    cells = corpus / "cells"
    kb = (corpus / "kb").resolve()
    n = 0

    colony = out / "colony"
    for p in sorted((cells / "colony" / "py").glob("*.py")):
        write(colony, p.name, p.read_text(encoding="utf-8"))
        n += 1
    (colony / "cellguard.toml").write_text(
        f'dialect = "colony"\nknowledge-base = ["{kb / "colony" / "colony-kb.json"}"]\n'
    )

    smol = out / "smolagents"
    for f in ["doc_run_logs.jsonl", "prompt_fewshot_cells.jsonl"]:
        for rec in jsonl(cells / "smolagents" / f):
            write(smol, rec["id"] + ".py", rec["code"])
            n += 1
    (smol / "cellguard.toml").write_text(
        f'dialect = "functions"\nknowledge-base = ["{kb / "smolagents" / "default_tools.json"}"]\n'
    )

    bfcl = out / "bfcl"
    for p in sorted((cells / "bfcl" / "possible_answer").glob("*.json")):
        for rec in jsonl(p):
            gt = rec["ground_truth"]
            if p.name.endswith("multi_turn_base.json"):
                for t, turn in enumerate(gt):
                    write(bfcl, f"{rec['id']}_turn{t}.py", "\n".join(turn))
                    n += 1
            else:
                lines = [call(f, params) for entry in gt for f, params in entry.items()]
                write(bfcl, rec["id"] + ".py", "\n".join(lines))
                n += 1
    (bfcl / "cellguard.toml").write_text(
        f'dialect = "functions"\nknowledge-base = ["{kb / "bfcl" / "multi_turn_func_doc"}"]\n'
    )

    codeact = out / "codeact"
    for i, p in enumerate(sorted((cells / "codeact-mint").rglob("*.txt"))):
        for j, block in enumerate(re.findall(r"<execute>(.*?)</execute>", p.read_text(), re.S)):
            write(codeact, f"{i:02d}_{j}.py", block.strip("\n"))
            n += 1
    (codeact / "cellguard.toml").write_text(
        f'dialect = "functions"\nknowledge-base = ["{kb / "codeact-mint" / "tools.json"}"]\n'
    )
    print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
