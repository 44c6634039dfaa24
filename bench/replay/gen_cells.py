#!/usr/bin/env python3
"""Writes a native trace of cells that keep running into a guardrail (issue 6 T5-17), for timing
the replay of swallowed blocks.

    gen_cells.py N OUT.jsonl [--lines L] [--same] [--config OUT.toml]

N cells, each a `cell` record whose code has L (default 30) `x = await run("S.S.ok", a=i)` lines
and then `try: await run("S.S.bad_<n>") except Exception: pass`, followed by its two calls (the
`ok` call, then the `bad_<n>` call). With --same every cell has the same code (`bad_0`), else
each cell its own `bad_<n>`. --config writes the matching configuration: `S.S.bad_*` blocked,
`on-block = "stop-cell"`, so every cell's second call is a block the code swallows.
Time with `/usr/bin/time cellguard replay OUT.jsonl --config OUT.toml --output-format json-lines`.
"""
import argparse
import json

ap = argparse.ArgumentParser()
ap.add_argument("n", type=int)
ap.add_argument("out")
ap.add_argument("--lines", type=int, default=30)
ap.add_argument("--same", action="store_true")
ap.add_argument("--config")
a = ap.parse_args()

with open(a.out, "w") as f:
    for c in range(a.n):
        bad = "S.S.bad_0" if a.same else f"S.S.bad_{c}"
        code = 'x = await run("S.S.ok", a=i)\n' * a.lines
        code += f'try:\n    await run("{bad}")\nexcept Exception:\n    pass\n'
        f.write(json.dumps({"rec": "cell", "index": c, "code": code, "success": True}) + "\n")
        f.write(json.dumps({"rec": "call", "cell": c, "index": 0, "raw_key": "S.S.ok",
                            "params": {"a": c}, "status": "ok"}) + "\n")
        f.write(json.dumps({"rec": "call", "cell": c, "index": 1, "raw_key": bad,
                            "status": "ok"}) + "\n")
if a.config:
    with open(a.config, "w") as f:
        f.write('[replay]\non-block = "stop-cell"\n\n[[guardrails]]\nid = "bad"\n'
                'kind = "capability-boundary"\nblock = ["S.S.bad_*"]\n')
