#!/usr/bin/env bash
# cellguard check vs ruff check --no-cache, measured in one run on the same files.
#
#   bash bench/run.sh [CORPUS_DIR]      (default corpus: ../shared/corpus next to the repo)
#
# Builds the release binary, installs ruff from PyPI into bench/out/venv if it is not on PATH,
# installs hyperfine from Debian when possible (else uses bench/timeit.py), and times:
#   (a) the corpus cell set, one .py file per cell (bench/corpus_cells.py), each source with a
#       cellguard.toml naming its knowledge base;
#   (b) the installed CPython standard library (a real tree of ~2,000 files);
#   (c) the largest file of the standard library alone;
#   (d) a single small cell file, including process start.
# Both tools run with their default rules, exit codes ignored, output discarded; ruff with
# --no-cache. Prints mean wall times and the cellguard/ruff ratio per input.
# Not a test: run it by hand on an idle machine. Results go to bench/out/results.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/bench/out
mkdir -p "$OUT"
CORPUS=${1:-$ROOT/../shared/corpus}
[ -d "$CORPUS" ] || CORPUS=/work/shared/corpus
RUNS=${RUNS:-10}          # runs of the small inputs (corpus cells, small cell)
WARMUP=${WARMUP:-3}
RUNS_LARGE=${RUNS_LARGE:-3}  # runs of the large inputs (stdlib, large file), after 1 warm-up

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

if ! command -v hyperfine >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get install -y -qq hyperfine >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq hyperfine >/dev/null 2>&1; }) || true
fi

# Inputs.
CELLS=$OUT/corpus-cells
NCELLS=$(python3 "$ROOT/bench/corpus_cells.py" "$CORPUS" "$CELLS")
STDLIB=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
# Files each tool checks under the stdlib (both skip site-packages and other default excludes).
"$CG" check --show-files "$STDLIB" 2>/dev/null >"$OUT/stdlib-files-cellguard.txt" || true
"$RUFF" check --show-files "$STDLIB" 2>/dev/null | grep -E '\.pyi?$' >"$OUT/stdlib-files-ruff.txt" || true
NSTD=$(wc -l <"$OUT/stdlib-files-cellguard.txt")
NSTD_RUFF=$(wc -l <"$OUT/stdlib-files-ruff.txt")
STD_BYTES=$(xargs -d '\n' cat <"$OUT/stdlib-files-cellguard.txt" | wc -c)
LARGE=$(find "$STDLIB" -name '*.py' -not -path '*/site-packages/*' -not -path '*/test/*' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2)
SMALL=$OUT/small/cell.py
mkdir -p "$OUT/small"
cp "$ROOT/fixtures/example/cells/merge_feature.py" "$SMALL"

{
echo "cellguard $("$CG" --version | cut -d' ' -f2) vs $("$RUFF" --version)"
echo "machine: $(nproc) cores, $(uname -sr)"
echo "(a) corpus cells: $NCELLS files under $CELLS"
echo "(b) stdlib: $STDLIB: cellguard checks $NSTD files ($STD_BYTES bytes), ruff $NSTD_RUFF"
echo "(c) large file: $LARGE ($(wc -c <"$LARGE") bytes, $(wc -l <"$LARGE") lines)"
echo "(d) small cell: $SMALL ($(wc -l <"$SMALL") lines)"
} | tee "$OUT/results.txt"

measure() { # NAME RUNS WARMUP TARGET...
    local name=$1 RUNS=$2 WARMUP=$3; shift 3
    local cg="$CG check --exit-zero --output-format concise $*"
    local ruff="$RUFF check --no-cache --exit-zero --output-format concise $*"
    local cg_ms ruff_ms
    if command -v hyperfine >/dev/null 2>&1; then
        hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style none \
            --export-json "$OUT/$name.json" -n cellguard "$cg" -n ruff "$ruff" >/dev/null
        read -r cg_ms ruff_ms < <(python3 -c '
import json, sys
r = {x["command"]: x["mean"] * 1000 for x in json.load(open(sys.argv[1]))["results"]}
print("%.2f %.2f" % (r["cellguard"], r["ruff"]))' "$OUT/$name.json")
    else
        local res
        res=$(python3 "$ROOT/bench/timeit.py" "$RUNS" "$WARMUP" "cellguard=$cg" "ruff=$ruff")
        cg_ms=$(echo "$res" | awk '$1=="cellguard"{print $2}')
        ruff_ms=$(echo "$res" | awk '$1=="ruff"{print $2}')
    fi
    python3 -c 'import sys; n,c,r=sys.argv[1],float(sys.argv[2]),float(sys.argv[3]); print(f"{n:<14} cellguard {c:9.2f} ms   ruff {r:9.2f} ms   ratio {c/r:5.2f}x")' "$name" "$cg_ms" "$ruff_ms" | tee -a "$OUT/results.txt"
}

echo "timer: $(command -v hyperfine >/dev/null 2>&1 && hyperfine --version || echo bench/timeit.py); $RUNS runs after $WARMUP warm-ups (large inputs: $RUNS_LARGE after 1); load before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/results.txt"
measure corpus-cells "$RUNS" "$WARMUP" "$CELLS"
measure small-cell "$RUNS" "$WARMUP" "$SMALL"
measure large-file "$RUNS_LARGE" 1 "$LARGE"
measure stdlib "$RUNS_LARGE" 1 "$STDLIB"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/results.txt"
