#!/usr/bin/env bash
# Fails when a generated source differs from what its generator prints now
# (run by tools/test.sh). Regenerate with the command each generator names.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
status=0
check() { # generator output
    if ! python3 "$1" | diff -q - "$2" > /dev/null; then
        echo "gen/check: $2 is out of date: run python3 $1 > $2" >&2
        status=1
    fi
}
check tools/gen/wgmma.py crates/baton/src/arch/ptx/wgmma_ops.rs
check tools/gen/tmem.py crates/baton/src/arch/sm100/tmem_ops.rs
check tools/gen/wgmma_wait.py kernels/roles/src/sm90/wgmma_wait.rs
exit $status
