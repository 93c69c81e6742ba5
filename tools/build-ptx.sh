#!/usr/bin/env bash
# Builds baton's device kernels into PTX by building baton-runtime and
# baton-selftest, whose build scripts do it through baton-build (crates/baton-build; launch bounds,
# dynamic shared memory and the hot-kernel rule come from the kernels'
# KernelSpecs), and copies the modules out:
#   <out>/baton_sm90a.ptx        sm_90a, release: unbounded mbarrier waits
#   <out>/baton_sm90a_debug.ptx  sm_90a, debug assertions (bounded waits that
#                                report the hung site and trap), opt-level 3
#   <out>/baton_sm100a.ptx       sm_100a (Blackwell), release
# (the production GEMMs of kernels/, embedded by baton-runtime), the same
# three as baton_selftest_*.ptx (the test kernels of kernels/selftest,
# embedded by baton-selftest), plus <name>.ptxas.txt (`ptxas -v`)
# for each when ptxas is present.
#
# Usage: tools/build-ptx.sh [--check] [--out-dir DIR]
#   --check    fail unless ptxas checked every module and the nvptx64
#              build (kernel crates and baton) printed no warning
#   --out-dir  where to write (default: target/ptx in the repository)
#
# Exit status: 0 ok; 3 the device toolchain is missing (run
# tools/install-device-toolchain.sh); anything else: the build failed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CHECK=0
OUT_DIR="$ROOT/target/ptx"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --check) CHECK=1 ;;
        --out-dir) OUT_DIR="$2"; shift ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "build-ptx: unknown argument '$1' (allowed: --check, --out-dir DIR)" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$OUT_DIR"

cd "$ROOT"
LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
if ! env -u BATON_PTX_DIR -u BATON_SKIP_PTX cargo build --quiet -p baton-runtime -p baton-selftest \
        --message-format=json-render-diagnostics > "$LOG"; then
    echo "build-ptx: building baton-runtime and baton-selftest (and with them the kernels) failed" >&2
    exit 1
fi
# A build script's OUT_DIR, from cargo's build-script-executed message.
out_dir_of() {
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try: m = json.loads(line)
    except ValueError: continue
    pkg = m.get("package_id", "")
    if m.get("reason") == "build-script-executed" and ("/" + sys.argv[2] + "#") in pkg:
        print(m["out_dir"])
' "$LOG" "$1" | tail -1
}
copy_modules() { # package file-stem...
    local pkg="$1" src name
    shift
    src="$(out_dir_of "$pkg")"
    [[ -n "$src" ]] || { echo "build-ptx: cargo reported no build-script output directory for $pkg" >&2; exit 1; }
    # baton-build prints rustc's warnings for the nvptx64 build (which cargo
    # hides under --quiet) as cargo::warning lines into the build script's
    # output, next to its OUT_DIR: --check holds the kernels to none.
    if [[ $CHECK == 1 ]] && grep -q '^cargo::warning=baton-build: ' "$src/../output" 2>/dev/null; then
        echo "build-ptx: --check: $pkg's kernel build has warnings:" >&2
        sed -n 's/^cargo::warning=baton-build: /  /p' "$src/../output" | awk '!seen[$0]++' >&2
        exit 1
    fi
    if [[ ! -f "$src/$1.ptx" ]]; then
        echo "build-ptx: no PTX was built (device toolchain missing?): run tools/install-device-toolchain.sh" >&2
        exit 3
    fi
    for name in "$@"; do
        cp "$src/$name.ptx" "$OUT_DIR/$name.ptx"
        if [[ -f "$src/$name.ptxas.txt" ]]; then
            cp "$src/$name.ptxas.txt" "$OUT_DIR/$name.ptxas.txt"
        elif [[ $CHECK == 1 ]]; then
            echo "build-ptx: --check: $name.ptx was not checked by ptxas (install it: tools/install-device-toolchain.sh)" >&2
            exit 3
        fi
        echo "build-ptx: wrote $OUT_DIR/$name.ptx ($(grep -c '^\.visible \.entry' "$OUT_DIR/$name.ptx") kernels)"
    done
}
copy_modules baton-runtime baton_sm90a baton_sm90a_debug baton_sm100a
copy_modules baton-selftest baton_selftest_sm90a baton_selftest_sm90a_debug baton_selftest_sm100a
