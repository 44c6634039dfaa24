#!/usr/bin/env python3
"""Replay benchmark: cellguard vs Invariant's trace analyzer (PyPI `invariant-ai`, local policy
mode), the same rules on the same traces, in one run.

    python3 bench/replay/bench.py [--calls 10000000] [--tau PATH] [--invariant-sizes 250,500,1000]

Needs a release build (`cargo build --release`; the script builds it when missing). For the
Invariant half it creates `bench/out/venv`, installs `invariant-ai` from PyPI there (pinned by
INVARIANT_VERSION, default 0.3.5) and re-runs itself with that interpreter; `--no-venv` uses the
current interpreter instead. LOCAL_POLICY=1 is set (without it Invariant's `Policy` calls a
hosted API). When Invariant cannot be installed this is reported, and cellguard is still
measured.

Workloads:
1. tau-bench: the real GPT-4o airline run (200 conversations, 1,164 calls), three policy rules
   (tau.toml / TAU_POLICY). Invariant analyzes each conversation (`analyze`, one pass, every
   violation); cellguard replays the file with `--on-block keep` (every call judged against the
   recorded history, so both report every violating call). The violating calls are compared.
   Both tools are timed end to end and symmetrically: cellguard's run includes its process
   start, config parsing, reading the file and the JSON report; each Invariant run compiles
   the policy, `json.load`s the file and analyzes it (not included: the interpreter's start
   and `import invariant`). Best of --repeat / --inv-repeat runs, medians shown too, with the
   load average. cellguard's fixed cost (the same command on an empty `[]` trace) and its
   marginal rate (the difference) are shown separately; the headline ratio stays end to end.
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
import ast
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.join(ROOT, "target", "release", "cellguard")
TAU_DEFAULT = os.path.join(ROOT, "..", "..", "shared", "corpus", "traces", "tau-bench", "gpt-4o-airline.json")

# IPL string literals do not process escapes: `"\\b"` is a backslash and a `b`, not a word
# boundary, so every regex is written as an IPL raw string (`r"..."`) with single backslashes.
TAU_POLICY = r'''
from invariant import count
raise "explicit-confirmation" if:
    (call: ToolCall)
    match(r"^(book_reservation|cancel_reservation|update_reservation_.*)$", call.function.name)
    not count(min=1):
        (m: Message)
        m -> call
        m.role == "user"
        match(r"(?is).*\byes\b.*", m.content)
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
    match(r"^(cancel_reservation|update_reservation_.*)$", call.function.name)
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
    match(r"^.*\.delete_[^.]*$", call.function.name)

raise "plan-order" if:
    (call: ToolCall)
    match(r"^.*\.propose_plan$", call.function.name)
    not count(min=1):
        (prior: ToolCall)
        prior -> call
        match(r"^.*\.check_plan_conflicts$", prior.function.name)

raise "read-before-update" if:
    (call: ToolCall)
    match(r"^.*\.update_record$", call.function.name)
    not count(min=1):
        (prior: ToolCall)
        prior -> call
        match(r"^.*\.get_record$", prior.function.name)
        prior.function.arguments.record_id == call.function.arguments.record_id

raise "confirm-booking" if:
    (call: ToolCall)
    match(r"^.*\.book_[^.]*$", call.function.name)
    not count(min=1):
        (m: Message)
        m -> call
        m.role == "user"
        match(r"(?is).*\byes\b.*", m.content)

raise "spawn-rate" if:
    (call: ToolCall)
    match(r"^.*\.spawn_[^.]*$", call.function.name)
    count(min=5):
        (prior: ToolCall)
        prior -> call
        match(r"^.*\.spawn_[^.]*$", prior.function.name)
'''


VENV = os.path.join(ROOT, "bench", "out", "venv")


def ensure_venv():
    """Re-executes this script under bench/out/venv with invariant-ai installed (once)."""
    if "--no-venv" in sys.argv or os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    py = os.path.join(VENV, "bin", "python")
    version = os.environ.get("INVARIANT_VERSION", "0.3.5")
    try:
        if not os.path.exists(py):
            subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        have = subprocess.run([py, "-c", "import invariant"], capture_output=True).returncode == 0
        if not have:
            subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                            f"invariant-ai=={version}"], check=True)
    except (subprocess.CalledProcessError, OSError) as e:
        print(f"cannot set up {VENV} ({e}); running without it", file=sys.stderr)
        return
    os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])


def build():
    if not os.path.exists(BIN):
        subprocess.run(["cargo", "build", "--release", "--locked"], cwd=ROOT, check=True)


def timed_run(args, repeat=1):
    """Runs `args` `repeat` times; returns the best run's wall and CPU (user + system) seconds,
    the peak RSS (KiB), the median CPU seconds (`median`) and the last run's stdout."""
    best = None
    cpus = []
    for _ in range(repeat):
        cmd = ["/usr/bin/time", "-v"] + args if os.path.exists("/usr/bin/time") else args
        # getrusage, not os.times: the latter counts in clock ticks (10 ms), which rounds a short
        # run down to zero CPU seconds.
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        dt = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(args)} failed ({p.returncode}): {p.stderr.decode()[-2000:]}")
        m = re.search(rb"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
        rss = int(m.group(1)) if m else None
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        cpu = max(cpu, 1e-6)
        cpus.append(cpu)
        if best is None or cpu < best["cpu"]:
            best = {"wall": dt, "cpu": cpu, "rss": rss}
        best["out"] = p.stdout
    cpus.sort()
    best["median"] = cpus[len(cpus) // 2]
    return best


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
        # `e.key` is (rule index, trace indexes of the bound variables); `e.ranges` also
        # highlights objects the rule's quantifiers looked at (other calls), so only ranges in a
        # bound message count.
        bound = set()
        key = getattr(e, "key", None)
        if isinstance(key, str):  # invariant-ai 0.3.5 stores the repr of the tuple
            try:
                key = ast.literal_eval(key)
            except (ValueError, SyntaxError):
                key = None
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], tuple):
            bound = {k for k in key[1] if isinstance(k, int)}
        calls = []
        for r in e.ranges:
            path = getattr(r, "json_path", str(r))
            m = re.match(r"^(\d+)\.tool_calls\.(\d+)", path)
            if m:
                calls.append((int(m.group(1)), int(m.group(2))))
        own = [c for c in calls if c[0] in bound] or calls
        for mi, ci in own:
            out.add((n, cell_of.get(mi), ci))
    return out


def loadavg():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def fmt_rate(x):
    return f"{x:,.0f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10_000_000)
    ap.add_argument("--tau", default=TAU_DEFAULT)
    ap.add_argument("--invariant-sizes", default="250,500,1000")
    ap.add_argument("--repeat", type=int, default=9, help="cellguard runs per tau-bench figure (best and median)")
    ap.add_argument("--inv-repeat", type=int, default=3, help="Invariant runs on tau-bench (best and median)")
    ap.add_argument("--out")
    ap.add_argument("--workdir")
    ap.add_argument("--no-venv", action="store_true", help="use the current interpreter")
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
    cg_version = subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout.strip()
    p(f"Date: {time.strftime('%Y-%m-%d %H:%M %Z')}. Machine: {os.cpu_count()} cores, load average "
      f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the start; {cg_version} (release build, "
      f"single-threaded); Invariant {inv_version if have_inv else '-'} (LOCAL_POLICY=1), "
      f"Python {sys.version.split()[0]}.")
    p("Rates are per CPU second (user + system), i.e. per core: on a shared machine wall-clock "
      "time measures the other load as much as the tools.")
    p()

    # 1. tau-bench.
    tau = os.path.abspath(a.tau)
    if os.path.exists(tau):
        conv = json.load(open(tau))
        n_calls = sum(len(m.get("tool_calls") or []) for e in conv for m in e["traj"])
        cfg = os.path.join(HERE, "tau.toml")
        load0 = loadavg()
        # End to end: process start, config parsing, reading the file, replaying, the JSON
        # report. Best of N (other load only ever adds CPU time) and the median.
        r = cellguard(cfg, tau, ["--output-format", "json"], repeat=a.repeat)
        cg = violations_cellguard(r["out"])
        # Fixed cost: the same command on an empty conversation list (`[]`), same config.
        empty = os.path.join(work, "empty-chat.json")
        with open(empty, "w") as f:
            f.write("[]\n")
        r0 = cellguard(cfg, empty, ["--output-format", "json", "--format", "openai-chat"], repeat=a.repeat)
        p(f"## tau-bench airline ({len(conv)} conversations, {n_calls} calls, 3 rules)")
        p()
        p(f"Load average (1, 5, 15 min) before: {load0}. CPU seconds: best of {a.repeat} runs for "
          f"cellguard, of {a.inv_repeat} for Invariant (median in brackets).")
        p()
        p("| tool | what is timed | wall s | CPU s | calls per CPU second | violating calls |")
        p("|---|---|---|---|---|---|")
        p(f"| cellguard | process start, config, read, replay, JSON report | {r['wall']:.3f} | {r['cpu']:.4f} "
          f"({r['median']:.4f}) | {fmt_rate(n_calls / r['cpu'])} | {len(cg)} |")
        p(f"| cellguard | the same with an empty trace (`[]`): fixed cost | {r0['wall']:.3f} | {r0['cpu']:.4f} "
          f"({r0['median']:.4f}) | | |")
        marginal = max(r["cpu"] - r0["cpu"], 1e-6)
        p(f"| cellguard | marginal: difference of the two | | {marginal:.4f} | {fmt_rate(n_calls / marginal)} | |")
        if have_inv:
            # Like for like: each Invariant run compiles the policy (cellguard's run parses its
            # config) and loads the file (cellguard's reads and parses it). Not included:
            # the Python interpreter's start and `import invariant` (cellguard's process
            # start is included).
            best, runs, inv = None, [], set()
            for _ in range(a.inv_repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                pol = invariant_policy(TAU_POLICY)
                c1 = time.process_time()
                with open(tau) as f:
                    conv = json.load(f)
                got = set()
                for i, e in enumerate(conv):
                    got |= invariant_violations(pol, i, e["traj"])
                idt, icpu = time.perf_counter() - t0, time.process_time() - c0
                runs.append(icpu)
                inv = got
                if best is None or icpu < best[1]:
                    best = (idt, icpu, c1 - c0)
            idt, icpu, ccomp = best
            imed = sorted(runs)[len(runs) // 2]
            p(f"| Invariant | policy compilation, `json.load`, analyze | {idt:.3f} | {icpu:.3f} ({imed:.3f}) "
              f"| {fmt_rate(n_calls / icpu)} | {len(inv)} |")
            p(f"| Invariant | analyze and `json.load` only (compilation {ccomp:.4f} s excluded) | | "
              f"{icpu - ccomp:.3f} | {fmt_rate(n_calls / (icpu - ccomp))} | |")
            p()
            p(f"**Ratio, like for like (end to end, best of {a.repeat} vs best of {a.inv_repeat}): "
              f"{icpu / r['cpu']:,.0f}x** calls per CPU second (medians: {imed / r['median']:,.0f}x; "
              f"wall-clock: {idt / r['wall']:,.0f}x). Both include compiling the rules and reading "
              f"and parsing the {os.path.getsize(tau) / 1e6:.1f} MB file; cellguard's also its "
              f"process start, Invariant's not its interpreter start or `import`.")
            p(f"Without fixed costs (cellguard's marginal rate vs Invariant without compilation): "
              f"{(icpu - ccomp) / marginal:,.0f}x. Load average after: {loadavg()}.")
            p(f"Same violating calls: {cg == inv} (only cellguard: {sorted(cg - inv)[:10]}, "
              f"only Invariant: {sorted(inv - cg)[:10]}).")
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
    # Best of a few runs: on a shared machine other load only ever adds CPU time (cache and
    # memory-bandwidth contention), so the least is the closest to the tool's own cost.
    load_syn = loadavg()
    rb = cellguard(cfg, big, ["--output-format", "json-lines"], repeat=2)
    summary = json.loads(rb["out"].decode().strip().splitlines()[-1])["summary"]
    rs = cellguard(cfg, small, ["--output-format", "json-lines"], repeat=3)
    rate = a.calls / rb["cpu"]
    p(f"## synthetic ({a.calls:,} calls, {size / 1e9:.2f} GB native JSON Lines, 5 guardrails)")
    p()
    p(f"Best of 3 runs at N/10 calls, of 2 at N calls. Load average (1, 5, 15 min) before: {load_syn}; "
      f"after: {loadavg()}.")
    p()
    p("| tool | calls | wall s | CPU s | calls per CPU second (one core) | peak RSS |")
    p("|---|---|---|---|---|---|")
    for n, r in ((small_n, rs), (a.calls, rb)):
        p(f"| cellguard | {n:,} | {r['wall']:.2f} | {r['cpu']:.2f} | {fmt_rate(n / r['cpu'])} | {r['rss'] / 1024:.1f} MiB |")
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
            t0, c0 = time.perf_counter(), time.process_time()
            inv = invariant_violations(pol, 0, msgs)
            idt, icpu = time.perf_counter() - t0, time.process_time() - c0
            rc = cellguard(cfg, nat, ["--output-format", "json"], repeat=3)
            cg = violations_cellguard(rc["out"])
            best = max(best, n / icpu)
            rows.append((n, icpu, n / icpu, rc["cpu"], n / rc["cpu"], len(inv), len(cg), inv == cg))
        p("Invariant on prefixes of the same trace (chat form), cellguard on the same prefixes (CPU seconds):")
        p()
        p("| calls | Invariant CPU s | Invariant calls/s | cellguard CPU s | cellguard calls/s | violations (Invariant / cellguard) | same calls |")
        p("|---|---|---|---|---|---|---|")
        for n, icpu, ir, ccpu, cr, ni, nc, same in rows:
            p(f"| {n:,} | {icpu:.2f} | {fmt_rate(ir)} | {ccpu:.3f} | {fmt_rate(cr)} | {ni} / {nc} | {same} |")
        p()
        p(f"Throughput ratio, cellguard at {a.calls:,} calls vs Invariant's best prefix (CPU time): "
          f"**{rate / best:,.0f}x** ({fmt_rate(rate)} vs {fmt_rate(best)} calls per CPU second).")
        p()
    p(f"Peak RSS: {rs['rss'] / 1024:.1f} MiB at {small_n:,} calls, {rb['rss'] / 1024:.1f} MiB at {a.calls:,} calls "
      f"(history window {10_000:,} records).")
    p(f"Load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}.")
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    if not a.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    ensure_venv()
    main()
