#!/usr/bin/env python3
"""Writes a synthetic trace of N calls, streamed (constant memory), for the replay benchmark.

    gen_synthetic.py N OUT.jsonl [--chat OUT.json]

OUT.jsonl is native cellguard-trace JSON Lines. With --chat, the same trace is also written as
an OpenAI chat message list (the input Invariant's analyzer reads); only use it for small N.
Cells of 1-3 calls over a small Colony-like vocabulary; user messages now and then (some say
"yes"); record ids from a small pool, so the read-before-update rule both passes and fails.
Deterministic (seeded).
"""
import json
import random
import sys

KEYS = [
    ("Store.store.list_records", 30),
    ("Search.search.search", 20),
    ("Store.store.get_record", 15),
    ("Store.store.update_record", 10),
    ("Planner.planner.check_plan_conflicts", 5),
    ("Planner.planner.propose_plan", 5),
    ("Booking.booking.book_slot", 5),
    ("Store.store.delete_record", 2),
    ("Pool.pool.spawn_worker", 1),
]
NAMES = [k for k, _ in KEYS]
WEIGHTS = [w for _, w in KEYS]


def events(n, rng):
    calls = 0
    cell = 0
    t = 1_780_000_000.0
    while calls < n:
        if rng.random() < 0.08:
            yes = rng.random() < 0.5
            yield ("msg", "Yes, go ahead." if yes else "Could you check something first?")
        k = min(rng.choice((1, 1, 2, 3)), n - calls)
        picks = rng.choices(NAMES, WEIGHTS, k=k)
        yield ("cell", cell, [(key, rng.randrange(200), t + i * 0.01) for i, key in enumerate(picks)])
        cell += 1
        calls += k
        t += 1.0


def main():
    n = int(sys.argv[1])
    out = sys.argv[2]
    chat_out = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--chat" else None
    rng = random.Random(7)
    chat = [] if chat_out else None
    with open(out, "w", buffering=1 << 20) as f:
        w = f.write
        w('{"rec":"header","format":"cellguard-trace","version":1,"source":"synthetic","epoch":"current"}\n')
        call_id = 0
        for ev in events(n, rng):
            if ev[0] == "msg":
                w('{"rec":"message","msg":{"kind":"user","role":"user","content":%s}}\n' % json.dumps(ev[1]))
                if chat is not None:
                    chat.append({"role": "user", "content": ev[1]})
                continue
            _, cell, calls = ev
            w('{"rec":"cell","index":%d}\n' % cell)
            tool_calls = []
            for i, (key, rid, ts) in enumerate(calls):
                w('{"rec":"call","cell":%d,"index":%d,"raw_key":"%s","params":{"record_id":"r%d"},"status":"ok","start":%.2f,"end":%.2f}\n'
                  % (cell, i, key, rid, ts, ts + 0.005))
                if chat is not None:
                    tool_calls.append({"id": "c%d" % call_id, "type": "function",
                                       "function": {"name": key, "arguments": json.dumps({"record_id": "r%d" % rid})}})
                    call_id += 1
            if chat is not None:
                chat.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
                for tc in tool_calls:
                    chat.append({"role": "tool", "tool_call_id": tc["id"], "content": "ok"})
    if chat_out:
        with open(chat_out, "w") as f:
            json.dump(chat, f)


if __name__ == "__main__":
    main()
