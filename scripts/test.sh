#!/usr/bin/env bash
# The one test command (README.md): every Rust test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --locked
