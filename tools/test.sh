#!/usr/bin/env bash
# The whole check, as CI runs it: device toolchain, formatting, lints, every
# test of the workspace (CPU backend, parsers, error paths; GPU tests skip
# without a GPU), the ptxas checks of the kernels, and the examples
# (tools/test-examples.sh).
#
# Usage: tools/test.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ -d "$HOME/.cargo/bin" ]] && export PATH="$HOME/.cargo/bin:$PATH"

step() { printf '\n== %s\n' "$*"; }

# Build scripts that run from here on leave their output newer than this.
STAMP="$(mktemp)"
trap 'rm -f "$STAMP"' EXIT

step "device toolchain (rustc-web for nvptx64, ptxas)"
bash tools/install-device-toolchain.sh

step "PTX build through baton-build + ptxas -v (target/ptx/*.ptxas.txt; hot kernels held to no spills/stack)"
bash tools/build-ptx.sh --check

step "generated sources up to date (tools/gen/check.sh)"
bash tools/gen/check.sh

step "cargo fmt --check"
cargo fmt --all --check
(cd kernels && cargo fmt --check)
(cd kernels/selftest && cargo fmt --check)
(cd crates/baton-build/tests/fixture-kernel && cargo fmt --check)

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "baton-reference builds without cuBLAS; baton-runtime does not enable cudarc's cublas/cublaslt"
cargo clippy -p baton-reference --no-default-features --all-targets -- -D warnings
if cargo tree -p baton-runtime -e features -i cudarc | grep -q 'cudarc feature "cublas'; then
    echo "baton-runtime enables cudarc's cuBLAS features; they belong to baton-reference" >&2
    exit 1
fi

step "cargo test --workspace (ptxas hot-kernel checks in xtask/tests/ptxas.rs)"
cargo test --workspace

step "examples (tools/test-examples.sh: each example's cargo build, fmt, clippy, CPU tests, host binary)"
bash tools/test-examples.sh

step "kernel crates build warning-free for nvptx64 (baton-build's cargo::warning lines: baton-attention, the examples' kernels)"
# rustc's warnings of a nested nvptx64 build reach cargo only as the build
# script's cargo::warning lines (tools/build-ptx.sh --check covers
# baton-runtime's and baton-selftest's kernels the same way).
if find target -path '*/build/*/output' -newer "$STAMP" -print0 |
    xargs -0 -r grep -h '^cargo::warning=baton-build: ' | sort -u | grep .; then
    echo "a kernel crate's nvptx64 build printed the warnings above" >&2
    exit 1
fi

step "loom model checks (tools/test-loom.sh: pipeline and tile pipeline protocols, incl. broken-protocol controls)"
bash tools/test-loom.sh

step "Python package (tools/test-python.sh: pip wheel ./python with the PTX, torch, pytest: import, ops, argument validation; GPU tests SKIPPED)"
bash tools/test-python.sh

step "OK"
