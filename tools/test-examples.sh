#!/usr/bin/env bash
# Builds every example under examples/ the way a user does — `cargo build`
# in its folder: baton-build turns kernel/ into PTX, then the host binary —
# checks formatting and clippy (-D warnings) of the host and kernel crates,
# runs the kernel crates' CPU tests (`cargo test` in kernel/: the same role
# code on baton's CPU backend) and the host crates' tests (04's checker),
# and runs each host binary (on a machine
# without a GPU it must print SKIPPED and exit 0).
#
# All examples share one target directory (default target/examples, or
# $EXAMPLES_TARGET_DIR), so cudarc, baton and baton-runtime build once.
# BATON_SKIP_PTX=1: the examples embed their own kernels, never baton's, so
# baton-runtime's build script skips building baton's kernel crate (a plain
# `cargo build` by a user builds it too; it is only slower).
#
# Usage: tools/test-examples.sh [--bundle DIR]
#   $EXAMPLES_FILTER: only the examples whose folder name contains it.
#   --bundle DIR: instead of the checks, build every example's host binary
#   (release) into DIR/examples/ and list them in DIR/examples.tsv
#   (name <TAB> relative path), for tools/gpu-suite.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ -d "$HOME/.cargo/bin" ]] && export PATH="$HOME/.cargo/bin:$PATH"
# shellcheck source=tools/env.sh
source tools/env.sh
export CARGO_TARGET_DIR="${EXAMPLES_TARGET_DIR:-$ROOT/target/examples}"
export BATON_SKIP_PTX=1

BUNDLE=""
if [[ "${1:-}" == "--bundle" ]]; then
    BUNDLE="${2:?usage: tools/test-examples.sh --bundle DIR}"
    mkdir -p "$BUNDLE/examples"
    BUNDLE="$(cd "$BUNDLE" && pwd)"
    : > "$BUNDLE/examples.tsv"
fi

step() { printf '\n== examples: %s\n' "$*"; }
START=$SECONDS
for dir in examples/*/; do
    name="$(basename "$dir")"
    [[ -f "$dir/Cargo.toml" && -d "$dir/kernel" ]] || continue
    [[ -n "${EXAMPLES_FILTER:-}" && "$name" != *"$EXAMPLES_FILTER"* ]] && continue
    bin="$(sed -n 's/^name = "\(.*\)"/\1/p' "$dir/Cargo.toml" | head -1)"
    if [[ -n "$BUNDLE" ]]; then
        step "$name: release host binary -> $BUNDLE/examples/$name"
        (cd "$dir" && cargo build --locked --release --quiet)
        cp "$CARGO_TARGET_DIR/release/$bin" "$BUNDLE/examples/$name"
        command -v strip >/dev/null && strip --strip-debug "$BUNDLE/examples/$name"
        printf 'example::%s\texamples/%s\n' "$name" "$name" >> "$BUNDLE/examples.tsv"
        continue
    fi
    step "$name: cargo fmt --check (host, kernel)"
    (cd "$dir" && cargo fmt --check)
    (cd "$dir/kernel" && cargo fmt --check)
    step "$name: cargo build (kernel -> PTX through baton-build, host binary)"
    (cd "$dir" && cargo build --locked)
    step "$name: cargo clippy --all-targets -D warnings (host, kernel)"
    (cd "$dir" && cargo clippy --locked --all-targets --quiet -- -D warnings)
    (cd "$dir/kernel" && cargo clippy --locked --all-targets --quiet -- -D warnings)
    step "$name: cargo test in kernel/ (roles on the CPU backend) and in the host crate (its checker)"
    (cd "$dir/kernel" && cargo test --locked)
    (cd "$dir" && cargo test --locked)
    step "$name: host binary (no GPU here: must print SKIPPED and exit 0)"
    out="$("$CARGO_TARGET_DIR/debug/$bin" 2>&1)" || { echo "$out"; echo "examples: $name's host binary failed" >&2; exit 1; }
    echo "$out"
    if ! grep -q -e '^SKIPPED' -e '^PASS' <<< "$out"; then
        echo "examples: $name's host binary printed neither SKIPPED nor PASS" >&2
        exit 1
    fi
done
step "done in $((SECONDS - START)) s"
