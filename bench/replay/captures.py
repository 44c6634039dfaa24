#!/usr/bin/env python3
"""Capture-test benchmark (issue 6 R11): `captures-subset-of` / `captures-any-in` when the
captured ids recur, the shapes the black-box re-test found quadratic (40,000 calls: 13 s; 50 ids
per call: over 120 s).

    python3 bench/replay/captures.py [--calls 40000] [--bin target/release/cellguard] [--workdir DIR]

Writes each trace (native JSON Lines, alternating `get_agent_status(agent_ids=[...])` and
`respond_to_user(content="agent-.. is up")`), replays it with `captures.toml` (the re-test's
config: one `captures-subset-of` rule, plus a `captures-any-in` rule with `max-age-calls`) and
prints CPU seconds and calls per CPU second per shape:

- `p1-one-unseen`: status `[aa]`, every claim names `aa bb` (`bb` never seen);
- `p2-alternating`: status alternates `[aa]` / `[bb]`, every claim names `aa bb` (both seen, never
  together);
- `p3-50-ids-one-unseen`: status holds 50 ids, the claim names the same 50 plus one never seen;
- `p4-two-halves`: status alternates two disjoint 25-id halves, the claim names all 50 (every id
  seen, no record holds them all: the intersection's worst case);
- `p5-satisfied`: status holds 50 ids, the claim names 10 of them (allowed).

Timing is CPU time (user + system) of the `cellguard replay` process, best of --repeat runs.
"""
import argparse
import json
import os
import resource
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def ids(prefix, n):
    return [f"agent-{prefix}{i:x}" for i in range(n)]


SHAPES = {
    "p1-one-unseen": lambda i: (["agent-aa"], "agent-aa agent-bb is up"),
    "p2-alternating": lambda i: ([["agent-aa"], ["agent-bb"]][i % 2], "agent-aa agent-bb is up"),
    "p3-50-ids-one-unseen": lambda i: (ids("", 50), " ".join(ids("", 50)) + " agent-fff is up"),
    "p4-two-halves": lambda i: ([ids("a", 25), ids("b", 25)][i % 2], " ".join(ids("a", 25) + ids("b", 25))),
    "p5-satisfied": lambda i: (ids("", 50), " ".join(ids("", 10)) + " are up"),
}


def write(path, shape, calls):
    with open(path, "w") as f:
        for i in range(calls // 2):
            status, claim = SHAPES[shape](i)
            f.write(json.dumps({"rec": "call", "cell": 2 * i, "index": 0, "raw_key": "A.A.get_agent_status",
                                "params": {"agent_ids": status}, "status": "ok"}) + "\n")
            f.write(json.dumps({"rec": "call", "cell": 2 * i + 1, "index": 0, "raw_key": "S.S.respond_to_user",
                                "params": {"content": claim}, "status": "ok"}) + "\n")


def cpu_run(args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise RuntimeError(p.stderr.decode()[-2000:])
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=40_000)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "cellguard"))
    ap.add_argument("--workdir", default="/tmp/cellguard-captures-bench")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    cfg = os.path.join(HERE, "captures.toml")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {a.calls:,} calls per trace; "
          f"best of {a.repeat} runs (CPU s)")
    print()
    print("| shape | CPU s | calls per CPU second | blocked |")
    print("|---|---|---|---|")
    for shape in SHAPES:
        path = os.path.join(a.workdir, f"{shape}-{a.calls}.jsonl")
        if not os.path.exists(path):
            write(path, shape, a.calls)
        best = None
        for _ in range(a.repeat):
            cpu, out = cpu_run([a.bin, "replay", "--config", cfg, path, "--output-format", "json-lines", "--exit-zero"])
            best = cpu if best is None else min(best, cpu)
        blocked = json.loads(out.decode().strip().splitlines()[-1])["summary"]["blocked"]
        print(f"| {shape} | {best:.3f} | {a.calls / best:,.0f} | {blocked:,} |")
    print()
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
