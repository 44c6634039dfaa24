#!/usr/bin/env bash
# Fix loop: `cellguard check --diff` vs `ruff check --diff --no-cache`, measured in one run.
#
#   bash bench/fix.sh [CORPUS_DIR]
#
# `--diff` computes every fix (lint, apply, re-lint until stable) and prints the diff without
# writing, so the inputs stay unchanged between runs. Inputs:
#   (a) the corpus cell set (bench/corpus_cells.py, as bench/run.sh builds it);
#   (b) one file with N = 2000 top-level `import json` rows: cellguard removes each as IMP003
#       (pre-bound module, safe fix), ruff as F401/F811 (unused or redefined import, safe fix):
#       the same edit count, the same kind of edit.
# Uses ruff from PATH or installs it into bench/out/venv (as bench/run.sh does); hyperfine when
# installed, else bench/timeit.py. Results are appended to bench/out/fix-results.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/bench/out
mkdir -p "$OUT"
CORPUS=${1:-$ROOT/../shared/corpus}
[ -d "$CORPUS" ] || CORPUS=/work/shared/corpus
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
N=${N:-2000}

cargo build --release --locked --quiet
CG=$ROOT/target/release/cellguard
if command -v ruff >/dev/null 2>&1; then
    RUFF=$(command -v ruff)
else
    if [ ! -x "$OUT/venv/bin/ruff" ]; then
        python3 -m venv "$OUT/venv"
        "$OUT/venv/bin/python" -m pip install --quiet --disable-pip-version-check ruff
    fi
    RUFF=$OUT/venv/bin/ruff
fi

CELLS=$OUT/corpus-cells
NCELLS=$(python3 "$ROOT/bench/corpus_cells.py" "$CORPUS" "$CELLS")
MANY=$OUT/fix-many/imports.py
mkdir -p "$(dirname "$MANY")"
python3 -c "import sys; sys.stdout.write('import json\n' * int(sys.argv[1]) + 'x = 1\n')" "$N" >"$MANY"

# Sanity: both tools really fix every import of (b).
cg_fixes=$("$CG" check --diff "$MANY" 2>&1 >/dev/null | tail -1 || true)
ruff_fixes=$("$RUFF" check --no-cache --diff "$MANY" 2>&1 | grep -i "fix" | tail -1 || true)

{
echo "cellguard $("$CG" --version | cut -d' ' -f2) vs $("$RUFF" --version): --diff (fix loop, nothing written)"
echo "machine: $(nproc) cores, $(uname -sr)"
echo "(a) corpus cells: $NCELLS files; (b) $N imports in one file: cellguard '$cg_fixes', ruff '$ruff_fixes'"
} | tee -a "$OUT/fix-results.txt"

measure() { # NAME TARGET
    local name=$1 target=$2 cg_ms ruff_ms
    local cg="$CG check --diff $target"
    local ruff="$RUFF check --no-cache --diff $target"
    if command -v hyperfine >/dev/null 2>&1; then
        hyperfine -N -i --warmup "$WARMUP" --runs "$RUNS" --style none \
            --export-json "$OUT/fix-$name.json" -n cellguard "$cg" -n ruff "$ruff" >/dev/null
        read -r cg_ms ruff_ms < <(python3 -c '
import json, sys
r = {x["command"]: x["mean"] * 1000 for x in json.load(open(sys.argv[1]))["results"]}
print("%.2f %.2f" % (r["cellguard"], r["ruff"]))' "$OUT/fix-$name.json")
    else
        local res
        res=$(python3 "$ROOT/bench/timeit.py" "$RUNS" "$WARMUP" "cellguard=$cg" "ruff=$ruff")
        cg_ms=$(echo "$res" | awk '$1=="cellguard"{print $2}')
        ruff_ms=$(echo "$res" | awk '$1=="ruff"{print $2}')
    fi
    python3 -c 'import sys; n,c,r=sys.argv[1],float(sys.argv[2]),float(sys.argv[3]); print(f"{n:<14} cellguard {c:9.2f} ms   ruff {r:9.2f} ms   ratio {c/r:5.2f}x")' "$name" "$cg_ms" "$ruff_ms" | tee -a "$OUT/fix-results.txt"
}

echo "timer: $(command -v hyperfine >/dev/null 2>&1 && hyperfine --version || echo bench/timeit.py), $RUNS runs after $WARMUP warm-up" | tee -a "$OUT/fix-results.txt"
measure corpus-cells "$CELLS"
measure many-imports "$MANY"
