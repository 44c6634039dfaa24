#!/usr/bin/env bash
# Message-policy replay: wall time and peak memory against the guardrail-only replay of the
# same trace (the peer: `cellguard replay` with one guardrail and no policies), measured in one
# run. No external tool simulates pyAgentic's policies, so the baseline is cellguard's own
# streaming replay; the figure of interest is the extra memory the policy replay needs.
#
#   bash bench/policies.sh
#
# Input: one generated native trace (bench/out/policies-long.jsonl): a single conversation of
# TURNS turns, each `user, inference, tool_call, tool_result (RESULT code points), inference,
# assistant`, so the raw log grows to about TURNS * (RESULT + 100) code points. Configs:
#   guardrails  one capability-boundary guardrail, no policies (baseline);
#   window      sliding-window max-messages = 50 (bounded working context);
#   stack       clip 500 + evict keep 5 + compaction at 20 000 tokens keeping 10;
#   clip        clip 500 only (the working context grows with the conversation: the model would
#               be sent all of it, so the replay holds all of it).
# Peak RSS comes from /usr/bin/time -v; wall time from hyperfine when installed, else
# bench/timeit.py. Results are appended to bench/out/policies-results.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/bench/out
mkdir -p "$OUT"
TURNS=${TURNS:-20000}
RESULT=${RESULT:-2000}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}

cargo build --release --locked --quiet
CG=$ROOT/target/release/cellguard
TRACE=$OUT/policies-long.jsonl
python3 - "$TRACE" "$TURNS" "$RESULT" <<'EOF'
import json, sys
path, turns, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
body = ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size]
with open(path, "w") as f:
    w = lambda r: f.write(json.dumps(r) + "\n")
    w({"rec": "header", "format": "cellguard-trace", "version": 1, "source": "bench"})
    for t in range(turns):
        w({"rec": "message", "turn": t, "msg": {"kind": "user", "content": f"question {t}: please look this up"}})
        w({"rec": "inference", "turn": t, "step": 0, "usage": {"input_tokens": 1000 + t, "output_tokens": 20}})
        w({"rec": "message", "turn": t, "msg": {"kind": "tool_call", "id": f"c{t}", "name": "search", "arguments": json.dumps({"q": t})}})
        w({"rec": "call", "raw_key": "search", "params": {"q": t}, "status": "ok", "call_id": f"c{t}"})
        w({"rec": "message", "turn": t, "msg": {"kind": "tool_result", "tool_call_id": f"c{t}", "name": "search", "content": body}})
        w({"rec": "inference", "turn": t, "step": 1})
        w({"rec": "message", "turn": t, "msg": {"kind": "assistant", "content": f"answer {t}: the result says lorem ipsum"}})
EOF
cat > "$OUT/pb-guardrails.toml" <<'EOF'
[[guardrails]]
id = "b"
kind = "capability-boundary"
block = ["*.delete_*"]
EOF
cat > "$OUT/pb-window.toml" <<'EOF'
[[policies]]
kind = "sliding-window"
max-messages = 50
EOF
cat > "$OUT/pb-stack.toml" <<'EOF'
[[policies]]
kind = "tool-output-clip"
max-chars = 500
[[policies]]
kind = "tool-eviction"
keep-last-n = 5
[[policies]]
kind = "compaction"
max-input-tokens = 20000
keep-recent = 10
usage = "estimate"
EOF
cat > "$OUT/pb-clip.toml" <<'EOF'
[[policies]]
kind = "tool-output-clip"
max-chars = 500
EOF
{
    echo "== $(date -u +%FT%TZ) policies bench: $(wc -c <"$TRACE") bytes, $TURNS turns, results of $RESULT code points"
    for c in guardrails window stack clip; do
        rss=$(/usr/bin/time -v "$CG" replay --config "$OUT/pb-$c.toml" "$TRACE" --output-format json \
            -o /dev/null 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}')
        echo "$c: peak RSS ${rss} KiB"
    done
    cmds=()
    hf=()
    for c in guardrails window stack clip; do
        cmd="$CG replay --config $OUT/pb-$c.toml $TRACE --output-format json -o /dev/null"
        cmds+=("$c=$cmd")
        hf+=(-n "$c" "$cmd")
    done
    if command -v hyperfine >/dev/null 2>&1; then
        hyperfine -N -i --runs "$RUNS" --warmup "$WARMUP" --style basic "${hf[@]}" 2>&1
    else
        python3 "$ROOT/bench/timeit.py" "$RUNS" "$WARMUP" "${cmds[@]}"
    fi
} | tee -a "$OUT/policies-results.txt"
