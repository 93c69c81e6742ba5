#!/usr/bin/env bash
# Model-checks the pipeline protocols and the ordered barrier with loom (exhaustive within a
# preemption bound; see crates/baton/tests/loom_pipeline.rs), in release mode
# and a target directory of its own so the --cfg loom build does not evict
# the normal one.
#
# Usage: tools/test-loom.sh [extra cargo test args, e.g. a test name filter]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ -d "$HOME/.cargo/bin" ]] && export PATH="$HOME/.cargo/bin:$PATH"

export RUSTFLAGS="--cfg loom ${RUSTFLAGS:-}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target/loom}"
cargo test -p baton --release --test loom_pipeline --test loom_tile_pipeline --test loom_tmem_output --test loom_ordered_barrier --test loom_attention --test loom_split_fixup "$@"
