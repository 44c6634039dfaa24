#!/usr/bin/env bash
# The one test command (README "Test"): every test of the workspace. Snapshot tests never
# write snapshots here (INSTA_UPDATE=no): a changed output fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d .venv/bin ]; then
    export PATH="$PWD/.venv/bin:$PATH"
fi
export INSTA_UPDATE=no
cargo test --workspace --locked
