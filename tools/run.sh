#!/usr/bin/env bash
# The main job. On a machine with a usable Hopper GPU (and PTX in the build):
# the smoke kernel, then the flagship BF16 GEMM — verified against an f64
# reference and cuBLAS, then benchmarked against cuBLAS side by side
# (`baton bench gemm`: table, geometric mean, gemm-bench.png). Without one:
# the pipeline demo on the CPU backend (`baton demo`).
#
# Usage: tools/run.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ -d "$HOME/.cargo/bin" ]] && export PATH="$HOME/.cargo/bin:$PATH"

if [[ -x "$ROOT/.device-bundle/bin/baton" ]] && ! command -v cargo >/dev/null; then
    BATON="$ROOT/.device-bundle/bin/baton"   # device machine: no toolchain, use the bundle
else
    cargo build --release --quiet -p baton-cli --bin baton
    BATON="$ROOT/target/release/baton"
fi

set +e
"$BATON" probe
rc=$?
set -e
case "$rc" in
    0) "$BATON" smoke && exec "$BATON" bench gemm ;;
    77) echo "(no usable GPU here: running the CPU demo instead)"; exec "$BATON" demo ;;
    *) echo "run.sh: 'baton probe' failed (exit $rc)" >&2; exit "$rc" ;;
esac
