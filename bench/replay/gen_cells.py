#!/usr/bin/env python3
"""Writes a native trace of cells that keep running into a guardrail (issue 6 T5-17), for timing
the replay of swallowed blocks.

    gen_cells.py N OUT.jsonl [--lines L] [--same] [--blocks B] [--config OUT.toml]

N cells, each a `cell` record whose code has L (default 30) `x = await run("S.S.ok", a=i)` lines
and then `try: await run("S.S.bad_<n>") except Exception: pass`, followed by its two calls (the
`ok` call, then the `bad_<n>` call). With --same every cell has the same code (`bad_0`), else
each cell its own `bad_<n>`. With --blocks B (default 1) the cell has B such `try` statements, with
keys `bad_<n>_<j>` (`bad_0_<j>` with --same), and B blocked calls after the `ok` call: B blocks
in the same code, each a different key (issue 6 T5-17 split). --config writes the matching configuration: `S.S.bad_*` blocked,
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
ap.add_argument("--blocks", type=int, default=1)
ap.add_argument("--config")
a = ap.parse_args()

with open(a.out, "w") as f:
    for c in range(a.n):
        bad = "S.S.bad_0" if a.same else f"S.S.bad_{c}"
        bads = [bad] if a.blocks == 1 else [f"{bad}_{j}" for j in range(a.blocks)]
        code = 'x = await run("S.S.ok", a=i)\n' * a.lines
        for b in bads:
            code += f'try:\n    await run("{b}")\nexcept Exception:\n    pass\n'
        f.write(json.dumps({"rec": "cell", "index": c, "code": code, "success": True}) + "\n")
        f.write(json.dumps({"rec": "call", "cell": c, "index": 0, "raw_key": "S.S.ok",
                            "params": {"a": c}, "status": "ok"}) + "\n")
        for j, b in enumerate(bads):
            f.write(json.dumps({"rec": "call", "cell": c, "index": 1 + j, "raw_key": b,
                                "status": "ok"}) + "\n")
if a.config:
    with open(a.config, "w") as f:
        f.write('[replay]\non-block = "stop-cell"\n\n[[guardrails]]\nid = "bad"\n'
                'kind = "capability-boundary"\nblock = ["S.S.bad_*"]\n')
