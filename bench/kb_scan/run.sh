#!/usr/bin/env bash
# `cellguard kb scan` on 500 generated Colony-like source files, against the named peer
# (CPython's `ast`, bench/kb_scan/peer_ast.py), measured in one run on the same files.
#
#   bash bench/kb_scan/run.sh [N_FILES=500]
#
# Generates the tree with gen.py (fixed seed) under bench/out/kb_scan/, builds the release
# binary, checks that both extract the same number of actions per file, then times both with
# bench/timeit.py (alternating runs, so both see the same load) and prints mean / sd / min wall
# time in ms and the peer/cellguard ratio, plus the CPU time of one cellguard run.
# Not a test: run it by hand on an idle machine (the figure the issue asks for is the wall time
# of a cold `kb scan` of the 500 files, target < 200 ms). Results go to
# bench/out/kb_scan/results.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=$ROOT/bench/out/kb_scan
N=${1:-500}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
mkdir -p "$OUT"
rm -rf "$OUT/tree"
python3 "$ROOT/bench/kb_scan/gen.py" "$OUT/tree" "$N" 7 >"$OUT/tree.txt"
cargo build --release --locked --quiet
CG=$ROOT/target/release/cellguard

"$CG" kb scan "$OUT/tree" -q -o "$OUT/cellguard-kb.json"
python3 "$ROOT/bench/kb_scan/peer_ast.py" "$OUT/tree" >"$OUT/peer-kb.json"
python3 - "$OUT/cellguard-kb.json" "$OUT/peer-kb.json" <<'PY'
import json, sys
cg, peer = (json.load(open(p)) for p in sys.argv[1:3])
n = lambda kb: sum(len(g["actions"]) for g in kb["groups"])
print(f"actions: cellguard {n(cg)} (with inherited ones under subclasses), peer {n(peer)} (declared only)")
PY

{
echo "cellguard $("$CG" --version | cut -d' ' -f2) kb scan vs $(python3 --version) ast (peer_ast.py)"
echo "machine: $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "input: $(cat "$OUT/tree.txt")"
python3 "$ROOT/bench/timeit.py" "$RUNS" "$WARMUP" \
    "cellguard=$CG kb scan $OUT/tree -q -o /dev/null" \
    "peer_ast=python3 $ROOT/bench/kb_scan/peer_ast.py $OUT/tree" \
  | awk '{ print; t[$1] = $2 } END { printf "ratio peer/cellguard (mean wall): %.1fx\n", t["peer_ast"] / t["cellguard"] }'
if command -v perf >/dev/null 2>&1; then
    perf stat -x, -e task-clock "$CG" kb scan "$OUT/tree" -q -o /dev/null 2>&1 >/dev/null \
      | awk -F, '/task-clock/ { printf "cellguard CPU time (all threads): %.0f ms\n", $1 }'
fi
} | tee "$OUT/results.txt"
