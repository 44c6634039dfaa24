#!/usr/bin/env python3
"""Responsiveness of `cellguard server` on a multi-megabyte document (issue 5 S2).

Generates a Python file of about `--mb` megabytes (the benchmark cell of lsp_latency.py
repeated, with emoji and CJK comment lines), then, for each binary given, in one run:

- `cli`: wall time of `cellguard check --output-format json FILE` (read, lint, print);
- `open`: didOpen to the first publishDiagnostics;
- `hover idle`: a hover on an action key when nothing runs;
- `hover after edit`: a one-line edit, then 0.5 s later a hover; time to its answer;
- `completion after edit`: right after, a completion request;
- `edit->publish`: from that edit to the publishDiagnostics of its version;
- `burst`: 5 one-character edits 0.2 s apart, from the first to the publish of the last.

Usage:
    python3 bench/lsp_big_file.py [--cellguard PATH] [--baseline PATH] [--mb 5] [--json OUT]

With `--baseline PATH` an older build is measured first on the same file (before/after under
the same machine load). Standard library only; results printed as a table and written as JSON
(default bench/out/lsp_big_file.json).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_latency import Server, cell_file, CAPABILITIES, ROOT  # noqa: E402


def big_file(mb: float) -> str:
    cell = cell_file(60)
    extra = "# 😀 漢字 comment line with emoji and CJK\n"
    out = []
    size = 0
    while size < mb * 1_000_000:
        out.append(cell)
        out.append(extra)
        size += len(cell.encode()) + len(extra.encode())
    return "".join(out)


def rng(l1, c1, l2, c2):
    return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}


def measure(binary: str, path: Path, text: str):
    uri = path.as_uri()
    res = {}
    t0 = time.perf_counter()
    subprocess.run([binary, "check", "--output-format", "json", str(path)],
                   cwd=path.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    res["cli"] = time.perf_counter() - t0
    s = Server([binary, "server"], path.parent)
    s.request("initialize", {"processId": os.getpid(), "rootUri": path.parent.as_uri(),
                             "capabilities": CAPABILITIES})
    s.notify("initialized", {})
    t0 = time.perf_counter()
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                       "version": 1, "text": text}})
    s.wait_diagnostics(uri, 1, timeout=600)
    res["open"] = time.perf_counter() - t0
    hover = {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 40}}
    t0 = time.perf_counter()
    s.request("textDocument/hover", hover)
    res["hover idle"] = time.perf_counter() - t0
    edit_at = time.perf_counter()
    s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                        "contentChanges": [{"range": rng(0, 0, 0, 0),
                                                            "text": "y = 2\n"}]})
    time.sleep(0.5)
    hover["position"]["line"] = 2
    t0 = time.perf_counter()
    s.request("textDocument/hover", hover)
    res["hover after edit"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    s.request("textDocument/completion", hover)
    res["completion after edit"] = time.perf_counter() - t0
    s.wait_diagnostics(uri, 2, timeout=600)
    res["edit->publish"] = time.perf_counter() - edit_at
    t0 = time.perf_counter()
    for k in range(5):
        s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3 + k},
                                            "contentChanges": [{"range": rng(0, 0, 0, 0),
                                                                "text": "z"}]})
        time.sleep(0.2)
    s.wait_diagnostics(uri, 7, timeout=600)
    res["burst"] = time.perf_counter() - t0
    s.close()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cellguard", default=str(ROOT / "target/release/cellguard"))
    ap.add_argument("--baseline")
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--json", default=str(ROOT / "bench/out/lsp_big_file.json"))
    args = ap.parse_args()
    text = big_file(args.mb)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "big.py"
        path.write_text(text)
        runs = {}
        if args.baseline:
            runs["baseline"] = measure(args.baseline, path, text)
        runs["cellguard"] = measure(args.cellguard, path, text)
    print(f"file: {len(text.encode()) / 1e6:.2f} MB, {text.count(chr(10))} lines")
    keys = list(next(iter(runs.values())).keys())
    print(f"{'':24}" + "".join(f"{n:>12}" for n in runs))
    for k in keys:
        print(f"{k:24}" + "".join(f"{runs[n][k]:>11.3f}s" for n in runs))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"mb": args.mb, "runs": runs}, indent=2))


if __name__ == "__main__":
    main()
