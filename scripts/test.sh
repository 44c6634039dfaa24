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

# --- LSP client test (server issue 5): pytest-lsp drives the binary `cargo test` just built,
# with VS Code's client capabilities (set up by scripts/setup.sh).
CELLGUARD_BIN="$PWD/target/debug/cellguard" tests/lsp_client/.venv/bin/python -m pytest -q \
    -c tests/lsp_client/pytest.ini tests/lsp_client
