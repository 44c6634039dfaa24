#!/usr/bin/env python3
"""Keystroke-to-diagnostics latency of `cellguard server` and `ruff server`, in one run.

For each server and each file (a 1,000-line and a 30-line Colony cell file), the driver
opens the file, waits for its first diagnostics, then sends 200 single-character edits one at a
time (typing into a string literal and then a comment in the middle of the file, the way a
user types) and measures, for each `didChange`, the time until the `publishDiagnostics` with
the matching document version arrives. Both servers get the same text, the same edits and the
same client capabilities (push diagnostics, UTF-16), so the figures compare like with like.

With `--markdown`, a third file is measured for cellguard alone (`ruff server` does not lint
Markdown): a 1,000-line Markdown file of 30 fenced cells, edited in one cell, which shows the
server re-using the results of the cells an edit leaves unchanged.

Usage:
    python3 bench/lsp_latency.py [--cellguard PATH] [--ruff PATH] [--edits 200] [--json OUT]
                                 [--markdown] [--baseline PATH]

With `--baseline PATH`, a second cellguard binary (an older build) is timed in the same run on
the same files and edits, just before the first one, as `baseline` (before/after comparisons
under the same machine load).

`ruff` is looked up in bench/.venv (created with `pip install ruff` when missing) unless
`--ruff` is given. Results are printed as a table and written as JSON (default
bench/out/lsp_latency.json). Standard library only.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import queue
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cell_file(lines: int) -> str:
    """A Colony cell of about `lines` lines: run() calls, branches, dict work, comments."""
    out = ['"""A long recorded cell (benchmark input)."""']
    i = 0
    while len(out) < lines - 1:
        out += [
            f"status_{i} = await run(\"AgentPoolCapability.AgentPoolCapability.get_agent_status\", agent_ids=[\"agent-{i}\"])",
            f"if status_{i}.success and status_{i}.data.get(\"state\") == \"idle\":",
            f"    results[\"agent-{i}\"] = json.dumps(status_{i}.data, sort_keys=True)",
            f"else:",
            f"    log(\"agent-{i} is busy: \" + str(status_{i}.error))  # retry later",
            f"counts = Counter(w for w in goals[{i % 7}].split() if len(w) > 3)",
        ]
        i += 1
    out = out[: lines - 1]
    out.append("await signal_completion()")
    return "\n".join(out) + "\n"


def markdown_file(lines: int, cells: int) -> str:
    """A Markdown file of about `lines` lines: `cells` fenced Colony cells between prose."""
    per_cell = max(3, lines // cells - 4)
    out = ["# Recorded cells (benchmark input)", ""]
    for _ in range(cells):
        out += ["Next step:", "", "```python"]
        out += cell_file(per_cell).rstrip("\n").split("\n")
        out += ["```", ""]
    return "\n".join(out) + "\n"


class Server:
    """A language server process spoken to over stdio."""

    def __init__(self, cmd, cwd):
        self.proc = subprocess.Popen(
            cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.messages = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.partition(b":")
                if k.lower() == b"content-length":
                    length = int(v)
            body = out.read(length)
            self.messages.put((time.perf_counter(), json.loads(body)))

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            _, m = self.wait()
            if m.get("id") == rid and "method" not in m:
                return m.get("result")

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, timeout=60):
        t, m = self.messages.get(timeout=timeout)
        if "method" in m and "id" in m:
            # A request from the server (registerCapability, configuration...): answer it.
            result = [None] * len(m["params"].get("items", [])) if m["method"] == "workspace/configuration" else None
            self.send({"jsonrpc": "2.0", "id": m["id"], "result": result})
        return t, m

    def wait_diagnostics(self, uri, version, timeout=60):
        deadline = time.perf_counter() + timeout
        while True:
            t, m = self.wait(max(0.01, deadline - time.perf_counter()))
            if m.get("method") == "textDocument/publishDiagnostics":
                p = m["params"]
                if p["uri"] == uri and p.get("version") == version:
                    return t, p["diagnostics"]

    def close(self):
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()


CAPABILITIES = {
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {
        "synchronization": {"didSave": False},
        "publishDiagnostics": {"versionSupport": True},
    },
    "workspace": {"configuration": False},
}


def edits_for(text: str, count: int):
    """`count` single-character insertions: typing a word into a string literal, then into a
    comment, in the middle of the file. Returns (line, character, char) in UTF-16 units."""
    lines = text.split("\n")
    mid = len(lines) // 2
    # A line with a string argument: type inside the string, right after its opening quote.
    target = next(i for i in range(mid, len(lines)) if "log(\"" in lines[i])
    col = lines[target].index("log(\"") + 5
    comment_line = next(i for i in range(target + 1, len(lines)) if "#" in lines[i])
    comment_col = len(lines[comment_line])
    word = "the quick brown fox jumps over the lazy dog "
    out = []
    for k in range(count):
        ch = word[k % len(word)]
        if k < count // 2:
            out.append((target, col + k, ch))
        else:
            out.append((comment_line, comment_col + (k - count // 2), ch))
    return out


def measure(name, cmd, path: Path, text: str, edits, language="python"):
    uri = path.as_uri()
    server = Server(cmd, path.parent)
    server.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": path.parent.as_uri(),
            "workspaceFolders": [{"uri": path.parent.as_uri(), "name": "bench"}],
            "capabilities": CAPABILITIES,
        },
    )
    server.notify("initialized", {})
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}},
    )
    server.wait_diagnostics(uri, 1)
    latencies = []
    version = 1
    for line, character, ch in edits:
        version += 1
        change = {
            "range": {"start": {"line": line, "character": character}, "end": {"line": line, "character": character}},
            "text": ch,
        }
        sent = time.perf_counter()
        server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
        )
        received, _ = server.wait_diagnostics(uri, version)
        latencies.append((received - sent) * 1000.0)
    server.close()
    return latencies


def percentile(values, p):
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def find_ruff(explicit):
    if explicit:
        return explicit
    venv = ROOT / "bench" / ".venv"
    ruff = venv / "bin" / "ruff"
    if not ruff.exists():
        print("installing ruff into bench/.venv ...", file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "venv", str(venv)])
        subprocess.check_call([str(venv / "bin" / "pip"), "install", "--quiet", "ruff"])
    return str(ruff)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cellguard", default=str(ROOT / "target" / "release" / "cellguard"))
    ap.add_argument("--ruff", default=None)
    ap.add_argument("--edits", type=int, default=200)
    ap.add_argument("--json", default=str(ROOT / "bench" / "out" / "lsp_latency.json"))
    ap.add_argument("--markdown", action="store_true", help="also time a 30-cell Markdown file (cellguard only)")
    ap.add_argument("--baseline", default=None, help="another cellguard binary timed in the same run")
    args = ap.parse_args()
    if not Path(args.cellguard).exists():
        sys.exit(f"{args.cellguard} not found: run `cargo build --release` first")
    ruff = find_ruff(args.ruff)
    ruff_version = subprocess.run([ruff, "--version"], capture_output=True, text=True).stdout.strip()
    cg_version = subprocess.run([args.cellguard, "--version"], capture_output=True, text=True).stdout.strip()

    results = {"edits": args.edits, "servers": {"cellguard": cg_version, "ruff": ruff_version}, "files": {}}
    if args.baseline:
        results["servers"]["baseline"] = args.baseline
    results["loadavg_before"] = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else None
    with tempfile.TemporaryDirectory() as tmp:
        for label, lines in [("1000-line", 1000), ("30-line", 30)]:
            text = cell_file(lines)
            path = Path(tmp) / f"cell_{lines}.py"
            path.write_text(text)
            edits = edits_for(text, args.edits)
            row = {"lines": len(text.splitlines()), "bytes": len(text.encode())}
            servers = [("cellguard", [args.cellguard, "server"]), ("ruff", [ruff, "server"])]
            if args.baseline:
                servers.insert(0, ("baseline", [args.baseline, "server"]))
            for name, cmd in servers:
                lat = measure(name, cmd, path, text, edits)
                row[name] = {
                    "p50_ms": round(percentile(lat, 50), 3),
                    "p95_ms": round(percentile(lat, 95), 3),
                    "mean_ms": round(statistics.fmean(lat), 3),
                    "max_ms": round(max(lat), 3),
                }
            row["p95_ratio_cellguard_to_ruff"] = round(row["cellguard"]["p95_ms"] / row["ruff"]["p95_ms"], 3)
            results["files"][label] = row
        if args.markdown:
            text = markdown_file(1000, 30)
            path = Path(tmp) / "cells_1000.md"
            path.write_text(text)
            row = {"lines": len(text.splitlines()), "bytes": len(text.encode()), "cells": 30}
            servers = [("cellguard", args.cellguard)]
            if args.baseline:
                servers.insert(0, ("baseline", args.baseline))
            for name, binary in servers:
                lat = measure(name, [binary, "server"], path, text, edits_for(text, args.edits), "markdown")
                row[name] = {
                    "p50_ms": round(percentile(lat, 50), 3),
                    "p95_ms": round(percentile(lat, 95), 3),
                    "mean_ms": round(statistics.fmean(lat), 3),
                    "max_ms": round(max(lat), 3),
                }
            results["files"]["1000-line-md"] = row

    print(f"{cg_version} vs {ruff_version}; {args.edits} single-character edits per file")
    print(f"{'file':<10} {'server':<10} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8} {'max ms':>8}")
    for label, row in results["files"].items():
        for name in ["baseline", "cellguard", "ruff"]:
            if name not in row:
                continue
            r = row[name]
            print(f"{label:<10} {name:<10} {r['p50_ms']:>8.2f} {r['p95_ms']:>8.2f} {r['mean_ms']:>8.2f} {r['max_ms']:>8.2f}")
        if "p95_ratio_cellguard_to_ruff" in row:
            print(f"{label:<10} p95 cellguard/ruff = {row['p95_ratio_cellguard_to_ruff']:.2f}")
    if Path("/proc/loadavg").exists():
        results["loadavg_after"] = Path("/proc/loadavg").read_text().split()[:3]
        print(f"load average before {' '.join(results['loadavg_before'])}, after {' '.join(results['loadavg_after'])}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written {out}")


if __name__ == "__main__":
    main()
