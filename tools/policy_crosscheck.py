#!/usr/bin/env python3
"""Cross-checks `cellguard replay`'s message-policy figures against an independent simulation.

    python3 tools/policy_crosscheck.py CONFIG.toml CONVERSATIONS.json [--cellguard PATH]

CONVERSATIONS.json is a list of OpenAI chat conversations (tau-bench's shape: objects with a
`traj` message list, or bare message lists). CONFIG.toml holds `[[policies]]` (the four
built-ins; recorded usage is not modelled: conversations of this shape record none, so the
compaction trigger is the chars/4 estimate). The simulation below is written from
pyagentic-reference §2 and §3.5 and issue 8 item 4 alone, sharing no code with cellguard: each
assistant message is one inference whose compile sees every earlier non-system message; its
text becomes an assistant message and each tool call a tool-call message; each `tool` message
is a tool result; clip runs at append time, the compile chain in config order with its result
written back. It compares every inference's messages, chars, est_tokens, clipped, evicted,
dropped and summarized, and every conversation's peak, final and removed characters.

Exit code 0 when everything agrees, 1 otherwise (the first difference is printed).
"""
import argparse
import json
import os
import subprocess
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def simulate(policies, convs):
    out = {"inferences": [], "contexts": []}
    for n, conv in enumerate(convs):
        traj = conv["traj"] if isinstance(conv, dict) else conv
        raw, ctx, pending_clip = [], [], []
        infs = peak = 0
        pos = 0

        def add(m):
            raw.append(m)
            m = dict(m)
            for p in policies:
                if p["kind"] == "tool-output-clip" and m["kind"] == "tool_result":
                    mx = p.get("max-chars", 8000)
                    suffix = p.get("suffix", "\n\u2026[output clipped]")
                    if m["content"] and len(m["content"]) > mx:
                        m["content"] = m["content"][:mx] + suffix
                        pending_clip.append(m["pos"])
            ctx.append(m)

        def compile_():
            ev, dr, su = [], [], []
            cur = list(ctx)
            for p in policies:
                k = p["kind"]
                if k == "tool-eviction":
                    keep = p.get("keep-last-n", 5)
                    stub = p.get("stub", "[tool result evicted to save context]")
                    res = [i for i, m in enumerate(cur) if m["kind"] == "tool_result"]
                    for i in (res[:-keep] if keep > 0 else res):
                        if cur[i]["content"] != stub:
                            cur[i] = dict(cur[i], content=stub)
                            ev.append(cur[i]["pos"])
                elif k == "sliding-window":
                    mm = p.get("max-messages", 50)
                    if len(cur) > mm:
                        cut = len(cur) - mm
                        while cut < len(cur) and cur[cut]["kind"] == "tool_result":
                            cut += 1
                        dr += [m["pos"] for m in cur[:cut] if m["pos"] is not None]
                        cur = cur[cut:]
                elif k == "compaction":
                    keep = p.get("keep-recent", 10)
                    if len(cur) <= keep:
                        continue
                    if sum(len(m["content"] or "") for m in cur) // 4 <= p.get("max-input-tokens", 100000):
                        continue
                    cut = len(cur) - keep
                    while cut < len(cur) and cur[cut]["kind"] == "tool_result":
                        cut += 1
                    head, tail = cur[:cut], cur[cut:]
                    if not head:
                        continue
                    text = p.get("placeholder-text")
                    if text is None:
                        pc = p.get("placeholder-chars", 1000)
                        text = ("[simulated summary] " * (pc // 20 + 1))[:pc]
                    su += [m["pos"] for m in head if m["pos"] is not None]
                    summary = f"[Summary of {len(head)} earlier messages]\n" + text
                    cur = [dict(kind="summary", content=summary, pos=None)] + tail
            ctx[:] = cur
            return ev, dr, su

        for m in traj:
            role = m["role"]
            if role == "system":
                continue
            if role == "user":
                add(dict(kind="user", content=m.get("content"), pos=pos))
                pos += 1
            elif role == "assistant":
                ev, dr, su = compile_()
                chars = sum(len(x["content"] or "") for x in ctx)
                peak = max(peak, chars)
                out["inferences"].append(dict(
                    trace=n, inference=infs, messages=len(ctx), chars=chars, est_tokens=chars // 4,
                    clipped=sorted(pending_clip), evicted=sorted(ev), dropped=sorted(dr),
                    summarized=sorted(su)))
                pending_clip.clear()
                infs += 1
                if m.get("content"):
                    add(dict(kind="assistant", content=m["content"], pos=pos))
                    pos += 1
                for _ in m.get("tool_calls") or []:
                    add(dict(kind="tool_call", content=None, pos=pos))
                    pos += 1
            elif role == "tool":
                add(dict(kind="tool_result", content=m.get("content"), pos=pos))
                pos += 1
        final = sum(len(x["content"] or "") for x in ctx)
        raw_chars = sum(len(x["content"] or "") for x in raw)
        out["contexts"].append(dict(trace=n, inferences=infs, peak_chars=max(peak, final),
                                    final_chars=final, chars_removed=raw_chars - final))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("conversations")
    ap.add_argument("--cellguard", default=os.path.join(ROOT, "target", "release", "cellguard"))
    a = ap.parse_args()
    with open(a.config, "rb") as f:
        policies = tomllib.load(f).get("policies", [])
    sim = simulate(policies, json.load(open(a.conversations)))
    p = subprocess.run([a.cellguard, "replay", "--config", a.config, a.conversations,
                        "--output-format", "json", "--exit-zero"], capture_output=True, check=True)
    cg = json.loads(p.stdout)
    num = lambda t: int(t.rsplit("#", 1)[1]) if "#" in t else 0  # noqa: E731
    got_i = [dict({k: v for k, v in i.items() if k != "orphaned"}, trace=num(i["trace"]))
             for i in cg["inferences"]]
    got_c = [dict(c, trace=num(c["trace"])) for c in cg["contexts"]]
    for what, want, got in [("inference", sim["inferences"], got_i), ("conversation", sim["contexts"], got_c)]:
        if len(want) != len(got):
            print(f"{what}s: simulation {len(want)}, cellguard {len(got)}")
            return 1
        for w, g in zip(want, got):
            if w != g:
                print(f"first differing {what}:\n  simulation {w}\n  cellguard  {g}")
                return 1
    print(f"agree: {len(got_i)} inferences, {len(got_c)} conversations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
