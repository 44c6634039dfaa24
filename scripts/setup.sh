#!/usr/bin/env bash
# One-time set-up on a fresh machine: fetch crates and build the release binary.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked
