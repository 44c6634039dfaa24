#!/usr/bin/env python3
"""Writes a Colony codegen-iterations recording (colony-reference §5.7) of N calls, for measuring
the Colony reader's memory (issue 6 T5-12).

    gen_colony.py N OUT.json [--per-cell K] [--lines] [--indent I]

N calls in cells of K (default 10) calls each: a list of iterations (`step_index`,
`generated_code`, `success`, `error`, `start_wall`, `run_call_trace`), pretty-printed with I
(default 2) spaces as the endpoint's output is usually saved, or one iteration per line with
--lines. The calls cycle through the keys of `synthetic.toml` (a delete every 50th call, a
spawn every 7th), so that configuration blocks some of them.
Measure with `/usr/bin/time -v cellguard replay OUT.json --config synthetic.toml --output-format json`.
"""
import argparse
import json

ap = argparse.ArgumentParser()
ap.add_argument("n", type=int)
ap.add_argument("out")
ap.add_argument("--per-cell", type=int, default=10)
ap.add_argument("--lines", action="store_true")
ap.add_argument("--indent", type=int, default=2)
a = ap.parse_args()

KEYS = ["S.S.get_record", "S.S.update_record", "S.S.propose_plan", "S.S.check_plan_conflicts"]


def key(i):
    if i % 50 == 49:
        return "S.S.delete_record"
    if i % 7 == 6:
        return "S.S.spawn_agent"
    return KEYS[i % len(KEYS)]


with open(a.out, "w") as f:
    if not a.lines:
        f.write("[\n")
    cells = (a.n + a.per_cell - 1) // a.per_cell
    for c in range(cells):
        calls = range(c * a.per_cell, min(a.n, (c + 1) * a.per_cell))
        code = "".join(f'await run("{key(i).split(".")[-1]}", record_id={i // 3})\n' for i in calls)
        trace = [{"call_index": j, "action_key": key(i), "parameters": {"record_id": i // 3},
                  "success": True, "error": None, "output_preview": "{'ok': True}",
                  "blocked": False, "line_number": j + 1}
                 for j, i in enumerate(calls)]
        it = {"step_index": c, "agent_step_span_id": f"span_{c:012d}", "prompt": "## Runtime\n...",
              "generated_code": json.dumps({"code": code}), "success": True, "error": None,
              "duration_ms": 800, "mode": "execution", "start_wall": 1786500000.0 + c,
              "run_call_trace": trace}
        if a.lines:
            f.write(json.dumps(it) + "\n")
        else:
            text = json.dumps(it, indent=a.indent or None)
            f.write(("  " if a.indent else "") + text.replace("\n", "\n  " if a.indent else "\n"))
            f.write(",\n" if c + 1 < cells else "\n")
    if not a.lines:
        f.write("]\n")
