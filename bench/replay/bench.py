#!/usr/bin/env python3
"""Replay benchmark: cellguard vs Invariant's trace analyzer (PyPI `invariant-ai`, local policy
mode), the same rules on the same traces, in one run.

    python3 bench/replay/bench.py [--calls 10000000] [--tau PATH] [--invariant-sizes 250,500,1000]

Needs a release build (`cargo build --release`; the script builds it when missing) and, for the
Invariant half, `pip install invariant-ai` (LOCAL_POLICY=1 is set here; without it Invariant's
`Policy` calls a hosted API). Missing Invariant is reported, and cellguard is still measured.

Workloads:
1. tau-bench: the real GPT-4o airline run (200 conversations, 1,164 calls), three policy rules
   (tau.toml / TAU_POLICY). Invariant analyzes each conversation (`analyze`, one pass, every
   violation); cellguard replays the file with `--on-block keep` (every call judged against the
   recorded history, so both report every violating call). The violating calls are compared.
2. synthetic: gen_synthetic.py writes a trace of N calls (default 10 million) as native JSON
   Lines; cellguard streams it with five guardrails (synthetic.toml). Invariant cannot analyze
   that (its join is brute force), so it runs on prefixes of the same trace in chat form
   (sizes from --invariant-sizes), where both tools' verdicts are compared call by call; the
   throughput ratio uses Invariant's best prefix throughput (which only falls as traces grow).
3. memory: cellguard's peak RSS (`/usr/bin/time -v`) at N/10 and N calls: it must not grow with
   trace length beyond the history window.

Prints a Markdown report; `--out FILE` also writes it.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.join(ROOT, "target", "release", "cellguard")
TAU_DEFAULT = os.path.join(ROOT, "..", "..", "shared", "corpus", "traces", "tau-bench", "gpt-4o-airline.json")

TAU_POLICY = r'''
from invariant import count
raise "explicit-confirmation" if:
    (call: ToolCall)
    match("^(book_reservation|cancel_reservation|update_reservation_.*)$", call.function.name)
    not count(min=1):
        (m: Message)
        m -> call
        m.role == "user"
        match("(?is).*\\byes\\b.*", m.content)
        not count(min=1):
            (m2: Message)
            m -> m2
            m2 -> call
            m2.role == "user"

raise "user-before-booking" if:
    (call: ToolCall)
    call is tool:book_reservation
    not count(min=1):
        (prior: ToolCall)
        prior -> call
        prior is tool:get_user_details

raise "reservation-before-change" if:
    (call: ToolCall)
    match("^(cancel_reservation|update_reservation_.*)$", call.function.name)
    not count(min=1):
        (prior: ToolCall)
        prior -> call
        prior is tool:get_reservation_details
        prior.function.arguments.reservation_id == call.function.arguments.reservation_id
'''

SYNTHETIC_POLICY = r'''
from invariant import count
raise "no-delete" if:
    (call: ToolCall)
    match("^.*\\.delete_[^.]*$", call.function.name)

raise "plan-order" if:
    (call: ToolCall)
    match("^.*\\.propose_plan$", call.function.name)
    not count(min=1):
        (prior: ToolCall)
        prior -> call
        match("^.*\\.check_plan_conflicts$", prior.function.name)

raise "read-before-update" if:
    (call: ToolCall)
    match("^.*\\.update_record$", call.function.name)
    not count(min=1):
        (prior: ToolCall)
        prior -> call
        match("^.*\\.get_record$", prior.function.name)
        prior.function.arguments.record_id == call.function.arguments.record_id

raise "confirm-booking" if:
    (call: ToolCall)
    match("^.*\\.book_[^.]*$", call.function.name)
    not count(min=1):
        (m: Message)
        m -> call
        m.role == "user"
        match("(?is).*\\byes\\b.*", m.content)

raise "spawn-rate" if:
    (call: ToolCall)
    match("^.*\\.spawn_[^.]*$", call.function.name)
    count(min=5):
        (prior: ToolCall)
        prior -> call
        match("^.*\\.spawn_[^.]*$", prior.function.name)
'''


def build():
    if not os.path.exists(BIN):
        subprocess.run(["cargo", "build", "--release", "--locked"], cwd=ROOT, check=True)


def timed_run(args, repeat=1):
    """Best wall time of `repeat` runs, peak RSS (KiB) and stdout of the last run."""
    best, rss, out = None, None, b""
    for _ in range(repeat):
        cmd = ["/usr/bin/time", "-v"] + args if os.path.exists("/usr/bin/time") else args
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        dt = time.perf_counter() - t0
        if p.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(args)} failed ({p.returncode}): {p.stderr.decode()[-2000:]}")
        m = re.search(rb"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
        rss = int(m.group(1)) if m else None
        best = dt if best is None else min(best, dt)
        out = p.stdout
    return best, rss, out


def cellguard(config, trace, extra=(), repeat=1):
    args = [BIN, "replay", "--config", config, trace, "--exit-zero"] + list(extra)
    return timed_run(args, repeat)


def violations_cellguard(report_json):
    """Set of (trace index, cell, call index) blocked."""
    out = set()
    for d in json.loads(report_json)["decisions"]:
        if d["decision"] != "blocked":
            continue
        t = d["trace"]
        n = int(t.rsplit("#", 1)[1]) if "#" in t else 0
        out.add((n, d["cell"], d["index"]))
    return out


def invariant_policy(src):
    os.environ["LOCAL_POLICY"] = "1"
    # Invariant aborts rules after 100 evaluation steps by default; these rules need more.
    os.environ.setdefault("INVARIANT_MAX_ITERATIONS", str(10**15))
    from invariant.analyzer import LocalPolicy  # noqa: E402

    return LocalPolicy.from_string(src)


def invariant_violations(policy, n, messages):
    """Analyzes one conversation; returns the violating calls as (n, cell, index), cells
    counted as the assistant messages with tool calls (as cellguard's chat reader does)."""
    cell_of = {}
    c = 0
    for i, m in enumerate(messages):
        if m.get("role") == "assistant" and m.get("tool_calls"):
            cell_of[i] = c
            c += 1
    out = set()
    for e in policy.analyze(messages).errors:
        for r in e.ranges:
            path = getattr(r, "json_path", str(r))
            m = re.match(r"^(\d+)\.tool_calls\.(\d+)", path)
            if m:
                out.add((n, cell_of.get(int(m.group(1))), int(m.group(2))))
    return out


def fmt_rate(x):
    return f"{x:,.0f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10_000_000)
    ap.add_argument("--tau", default=TAU_DEFAULT)
    ap.add_argument("--invariant-sizes", default="250,500,1000")
    ap.add_argument("--out")
    ap.add_argument("--workdir")
    a = ap.parse_args()
    build()
    work = a.workdir or tempfile.mkdtemp(prefix="cellguard-bench-")
    os.makedirs(work, exist_ok=True)
    lines = ["# cellguard replay benchmark", ""]
    p = lambda s="": (print(s), lines.append(s))  # noqa: E731
    try:
        import invariant  # noqa: F401
        have_inv = True
        inv_version = subprocess.run([sys.executable, "-m", "pip", "show", "invariant-ai"],
                                     capture_output=True, text=True).stdout
        inv_version = re.search(r"Version: (\S+)", inv_version)
        inv_version = inv_version.group(1) if inv_version else "?"
    except ImportError as e:
        have_inv = False
        p(f"Invariant is not installed ({e}); only cellguard is measured. `pip install invariant-ai`.")
    p(f"Machine: {os.cpu_count()} cores; cellguard single-threaded; Invariant {inv_version if have_inv else '-'} (LOCAL_POLICY=1).")
    p()

    # 1. tau-bench.
    tau = os.path.abspath(a.tau)
    if os.path.exists(tau):
        conv = json.load(open(tau))
        n_calls = sum(len(m.get("tool_calls") or []) for e in conv for m in e["traj"])
        cfg = os.path.join(HERE, "tau.toml")
        dt, rss, out = cellguard(cfg, tau, ["--output-format", "json"], repeat=5)
        cg = violations_cellguard(out)
        p(f"## tau-bench airline ({len(conv)} conversations, {n_calls} calls, 3 rules)")
        p()
        p("| tool | seconds | calls/s | violating calls |")
        p("|---|---|---|---|")
        p(f"| cellguard | {dt:.3f} | {fmt_rate(n_calls / dt)} | {len(cg)} |")
        if have_inv:
            pol = invariant_policy(TAU_POLICY)
            t0 = time.perf_counter()
            inv = set()
            for i, e in enumerate(conv):
                inv |= invariant_violations(pol, i, e["traj"])
            idt = time.perf_counter() - t0
            p(f"| Invariant | {idt:.3f} | {fmt_rate(n_calls / idt)} | {len(inv)} |")
            p()
            p(f"Ratio (cellguard / Invariant calls per second): **{idt / dt:,.0f}x** "
              f"(cellguard time includes process start and reading the 4 MB file).")
            p(f"Same violating calls: {cg == inv} (only cellguard: {sorted(cg - inv)[:10]}, only Invariant: {sorted(inv - cg)[:10]}).")
        p()

    # 2. synthetic.
    big = os.path.join(work, f"synthetic-{a.calls}.jsonl")
    if not os.path.exists(big):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, os.path.join(HERE, "gen_synthetic.py"), str(a.calls), big], check=True)
        print(f"(generated {big} in {time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    small_n = max(a.calls // 10, 1)
    small = os.path.join(work, f"synthetic-{small_n}.jsonl")
    if not os.path.exists(small):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_synthetic.py"), str(small_n), small], check=True)
    cfg = os.path.join(HERE, "synthetic.toml")
    size = os.path.getsize(big)
    dt, rss_big, out = cellguard(cfg, big, ["--output-format", "json-lines"], repeat=1)
    summary = json.loads(out.decode().strip().splitlines()[-1])["summary"]
    dts, rss_small, _ = cellguard(cfg, small, ["--output-format", "json-lines"], repeat=1)
    rate = a.calls / dt
    p(f"## synthetic ({a.calls:,} calls, {size / 1e9:.2f} GB native JSON Lines, 5 guardrails)")
    p()
    p("| tool | calls | seconds | calls/s | peak RSS |")
    p("|---|---|---|---|---|")
    p(f"| cellguard | {small_n:,} | {dts:.2f} | {fmt_rate(small_n / dts)} | {rss_small / 1024:.1f} MiB |")
    p(f"| cellguard | {a.calls:,} | {dt:.2f} | {fmt_rate(rate)} | {rss_big / 1024:.1f} MiB |")
    p()
    p(f"cellguard summary at {a.calls:,} calls: {json.dumps(summary)}")
    p()
    if have_inv:
        pol = invariant_policy(SYNTHETIC_POLICY)
        best = 0.0
        rows = []
        for n in [int(x) for x in a.invariant_sizes.split(",") if x]:
            nat = os.path.join(work, f"prefix-{n}.jsonl")
            chat = os.path.join(work, f"prefix-{n}.json")
            subprocess.run([sys.executable, os.path.join(HERE, "gen_synthetic.py"), str(n), nat, "--chat", chat], check=True)
            msgs = json.load(open(chat))
            t0 = time.perf_counter()
            inv = invariant_violations(pol, 0, msgs)
            idt = time.perf_counter() - t0
            cdt, _, cout = cellguard(cfg, nat, ["--output-format", "json"], repeat=3)
            cg = violations_cellguard(cout)
            best = max(best, n / idt)
            rows.append((n, idt, n / idt, cdt, n / cdt, len(inv), len(cg), inv == cg))
        p("Invariant on prefixes of the same trace (chat form), cellguard on the same prefixes:")
        p()
        p("| calls | Invariant s | Invariant calls/s | cellguard s | cellguard calls/s | violations (Invariant / cellguard) | same calls |")
        p("|---|---|---|---|---|---|---|")
        for n, idt, ir, cdt, cr, ni, nc, same in rows:
            p(f"| {n:,} | {idt:.2f} | {fmt_rate(ir)} | {cdt:.3f} | {fmt_rate(cr)} | {ni} / {nc} | {same} |")
        p()
        p(f"Throughput ratio, cellguard at {a.calls:,} calls vs Invariant's best prefix: "
          f"**{rate / best:,.0f}x** ({fmt_rate(rate)} vs {fmt_rate(best)} calls/s).")
        p()
    p(f"Peak RSS: {rss_small / 1024:.1f} MiB at {small_n:,} calls, {rss_big / 1024:.1f} MiB at {a.calls:,} calls "
      f"(history window {10_000:,} records).")
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    if not a.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
