#!/usr/bin/env bash
# One-time set-up on a fresh machine (README "Set-up"): checks the toolchain, installs the
# Python test dependencies of requirements-dev.txt into .venv (when it lists any), fetches the
# crates and builds the release binary target/release/cellguard.
#
# Needs: Rust >= 1.85 (cargo) and, only when requirements-dev.txt lists packages, Python 3 with
# venv. Reaches only crates.io, PyPI and Debian's archive.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo not found. Install Rust 1.85 or newer (rustup), then run this again." >&2
    exit 1
fi

if grep -qvE '^[[:space:]]*(#|$)' requirements-dev.txt 2>/dev/null; then
    if ! python3 -m venv --help >/dev/null 2>&1; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            apt-get update -qq && apt-get install -y -qq python3-venv
        else
            echo "setup: python3 with the venv module is needed (Debian: apt-get install python3-venv)." >&2
            exit 1
        fi
    fi
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
fi

# --- LSP client test (server issue 5): pytest-lsp, a real third-party LSP client, in its own
# venv (tests/lsp_client/.venv, ignored by git); scripts/test.sh runs it.
if ! python3 -m venv --help >/dev/null 2>&1; then
    echo "setup: python3 with the venv module is needed for tests/lsp_client (Debian: apt-get install python3-venv)." >&2
    exit 1
fi
[ -x tests/lsp_client/.venv/bin/python ] || python3 -m venv tests/lsp_client/.venv
tests/lsp_client/.venv/bin/python -m pip install --quiet --disable-pip-version-check \
    -r tests/lsp_client/requirements.txt
# --- end LSP client test ---

cargo fetch --locked
cargo build --release --locked
echo "setup: built $(pwd)/target/release/cellguard"
