#!/usr/bin/env bash
# Builds baton's device kernels (kernels/) into PTX:
#   <out>/baton_sm90a.ptx        sm_90a, release: unbounded mbarrier waits
#   <out>/baton_sm90a_debug.ptx  sm_90a, debug assertions on (bounded waits
#                                that report the hung site and trap), opt-level 3
#   <out>/baton_sm100a.ptx       sm_100a (Blackwell), release, with the kernels
#                                behind the kernels crate's `sm100` feature
# and declares the dynamic shared memory symbol at module scope.
#
# Usage: tools/build-ptx.sh [--check] [--out-dir DIR]
#   --check    also runs `ptxas -arch=<its sm> -v` on each PTX file and writes
#              <out>/<name>.ptxas.txt (fails if ptxas rejects a file)
#   --out-dir  where to write (default: target/ptx in the repository)
#
# Exit status: 0 ok; 3 the device toolchain is missing (run
# tools/install-device-toolchain.sh); anything else: the build failed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=tools/env.sh
source "$ROOT/tools/env.sh"

CHECK=0
OUT_DIR="$ROOT/target/ptx"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --check) CHECK=1 ;;
        --out-dir) OUT_DIR="$2"; shift ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "build-ptx: unknown argument '$1' (allowed: --check, --out-dir DIR)" >&2; exit 2 ;;
    esac
    shift
done

missing() {
    echo "build-ptx: device toolchain missing: $1" >&2
    echo "build-ptx: run tools/install-device-toolchain.sh (installs rustc-web/cargo-web/rust-web-src and ptxas), then retry" >&2
    exit 3
}

[[ -x "$RUSTC_DEVICE" ]] || missing "$RUSTC_DEVICE not found (need rustc >= 1.96 that can build core for nvptx64)"
[[ -x "$CARGO_DEVICE" ]] || missing "$CARGO_DEVICE not found"
SYSROOT="$("$RUSTC_DEVICE" --print sysroot)"
[[ -d "$SYSROOT/lib/rustlib/src/rust/library/core" ]] || missing "no standard library source under $SYSROOT/lib/rustlib/src (package rust-web-src)"
if [[ $CHECK == 1 ]]; then
    [[ -x "$PTXAS" ]] || missing "ptxas not found at $PTXAS"
fi

mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"

# Declared by the build, not the kernels: PTX forbids `.extern .shared`
# inside a function body (see baton::arch::sm90::DYNAMIC_SMEM_SYMBOL).
SMEM_DECL='.extern .shared .align 1024 .b8 baton_dynamic_smem[];'

build_variant() { # profile output-name sm [cargo feature] [target features]
    local profile="$1" name="$2" sm="$3" features="${4:-}" tfeatures="${5:-}" dir
    # A clean environment for the nested cargo: when called from a build
    # script, the outer cargo's variables (target dir, rustflags, wrappers,
    # jobserver) must not leak into the nvptx build.
    (
        cd "$ROOT/kernels"
        env -u CARGO_TARGET_DIR -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS -u RUSTC_WRAPPER \
            -u RUSTC_WORKSPACE_WRAPPER -u CARGO_BUILD_TARGET -u CARGO_MAKEFLAGS -u MAKEFLAGS \
            -u MFLAGS -u CARGO_PRIMARY_PACKAGE -u CARGO_MANIFEST_DIR -u CARGO_PKG_NAME \
            -u RUSTDOCFLAGS -u CARGO_BUILD_RUSTFLAGS -u CARGO \
            RUSTC="$RUSTC_DEVICE" RUSTC_BOOTSTRAP=1 \
            "$CARGO_DEVICE" rustc --quiet --profile "$profile" -Zbuild-std=core \
            --target nvptx64-nvidia-cuda ${features:+--features "$features"} -- \
            --emit=asm -C target-cpu="$sm" ${tfeatures:+-C target-feature="$tfeatures"} -C linker=/bin/true
    )
    dir="$profile"
    [[ "$profile" == dev ]] && dir=debug
    local src="$ROOT/kernels/target/nvptx64-nvidia-cuda/$dir/deps/baton_kernels.s"
    [[ -f "$src" ]] || { echo "build-ptx: expected PTX at $src after the build" >&2; exit 1; }
    local dst="$OUT_DIR/$name.ptx"
    if grep -q baton_dynamic_smem "$src"; then
        grep -q '^\.address_size 64$' "$src" || { echo "build-ptx: no '.address_size 64' line in $src" >&2; exit 1; }
        sed "/^\.address_size 64\$/a $SMEM_DECL" "$src" > "$dst.tmp"
    else
        cp "$src" "$dst.tmp"
    fi
    # Launch bounds from kernels/launch-bounds.txt: `.maxntid`/`.minnctapersm`
    # after the entry's parameter list.
    awk -v table="$ROOT/kernels/launch-bounds.txt" '
        BEGIN { while ((getline l < table) > 0) { if (l ~ /^[[:space:]]*(#|$)/) continue; split(l, f, " "); nt[f[1]] = f[2]; mb[f[1]] = f[3] } }
        { print }
        /^\.visible \.entry / { name = $3; sub(/\(.*/, "", name); pending = (name in nt) ? name : "" }
        pending != "" && $0 == ")" { print ".maxntid " nt[pending] ", 1, 1"; print ".minnctapersm " mb[pending]; pending = "" }
    ' "$dst.tmp" > "$dst.lb" && mv "$dst.lb" "$dst.tmp"
    mv "$dst.tmp" "$dst"
    echo "build-ptx: wrote $dst ($(grep -c '^\.visible \.entry' "$dst") kernels)"
    if [[ $CHECK == 1 ]]; then
        if ! "$PTXAS" -arch="$sm" -v "$dst" -o "$OUT_DIR/$name.cubin" > "$OUT_DIR/$name.ptxas.txt" 2>&1; then
            cat "$OUT_DIR/$name.ptxas.txt" >&2
            echo "build-ptx: ptxas rejected $dst (log above, also in $OUT_DIR/$name.ptxas.txt)" >&2
            exit 1
        fi
        echo "build-ptx: ptxas ok -> $OUT_DIR/$name.ptxas.txt"
    fi
}

build_variant release baton_sm90a sm_90a
build_variant ptx-debug baton_sm90a_debug sm_90a
# PTX ISA 8.7 (rustc emits 8.6 for sm_100a by default): `kind::mxf4nvf4`
# (NVFP4 MMA) needs it; drivers of CUDA 12.8 and later load it.
build_variant sm100 baton_sm100a sm_100a sm100 +ptx87
