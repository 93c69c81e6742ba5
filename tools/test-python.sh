#!/usr/bin/env bash
# The Python package (python/): builds its wheel the way a user's
# `pip install ./python` does (maturin, abi3; baton's PTX embedded), installs
# it with torch into a virtual environment, and runs its pytest suite: import,
# op registration, argument validation (no GPU needed) and the GPU tests,
# which print SKIPPED without a Hopper GPU.
#
# The environment (default target/python-venv, or $BATON_PY_VENV) is made
# once and reused: the first run downloads torch from PyPI (its Linux wheel
# with the CUDA libraries it depends on, ~5.4 GB installed; 4 min 43 s on
# the CI machine, 2026-11-24), later runs only check it. The Rust build
# shares target/python; baton-runtime's build script builds the kernels'
# PTX into it as for any user (rebuilt only when kernels/ changes).
#
# Usage: tools/test-python.sh [pytest args...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ -d "$HOME/.cargo/bin" ]] && export PATH="$HOME/.cargo/bin:$PATH"
# shellcheck source=tools/env.sh
source tools/env.sh

VENV="${BATON_PY_VENV:-$ROOT/target/python-venv}"
WHEELS="$ROOT/target/python/wheels"
say() { printf '== python: %s\n' "$*"; }

START=$SECONDS
if [[ ! -x "$VENV/bin/python" ]]; then
    say "creating $VENV"
    python3 -m venv "$VENV"
fi
say "installing torch, maturin, pytest (once; then only checked)"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "torch>=2.4" "maturin>=1.5,<2" pytest
say "environment ready after $((SECONDS - START)) s"

export CARGO_TARGET_DIR="$ROOT/target/python"
# pip's build backend (maturin, no build isolation) runs from the venv.
export PATH="$VENV/bin:$PATH"
say "building the wheel: pip wheel ./python (maturin, release)"
rm -rf "$WHEELS"
mkdir -p "$WHEELS"
"$VENV/bin/pip" wheel --quiet --no-build-isolation --no-deps ./python -w "$WHEELS"
WHEEL="$(ls "$WHEELS"/baton-*.whl)"
say "built $(basename "$WHEEL") ($(du -h "$WHEEL" | cut -f1))"
case "$(basename "$WHEEL")" in
*-abi3-*) ;;
*)
    echo "test-python: $WHEEL is not an abi3 wheel" >&2
    exit 1
    ;;
esac
"$VENV/bin/pip" install --quiet --force-reinstall --no-deps "$WHEEL"

say "fmt, clippy and tests of the native part (Rust)"
(cd python && cargo fmt --check && cargo clippy --release --all-targets -- -D warnings && cargo test --release --quiet)

say "pytest (GPU tests print SKIPPED without a Hopper GPU)"
# From the repository root: `import baton` must find the installed wheel,
# not python/baton (which has no native module).
"$VENV/bin/python" -m pytest -q -rs -p no:cacheprovider python/tests "$@"
say "done in $((SECONDS - START)) s"
