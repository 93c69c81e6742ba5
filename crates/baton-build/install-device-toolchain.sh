#!/usr/bin/env bash
# Installs what building the baton GPU kernels needs, idempotently:
#   * a Rust toolchain that can build `core` for nvptx64-nvidia-cuda
#     (Debian's rustc-web/cargo-web/rust-web-src: rustc >= 1.96 at /usr/bin
#     plus the standard library source, used with -Zbuild-std=core);
#   * ptxas for sm_90a, from the nvidia-cuda-nvcc wheel, into <tools>/cuda-nvcc;
#   * nvdisasm, from the nvidia-cuda-nvdisasm wheel, into <tools>/cuda-nvdisasm.
# <tools> is $BATON_TOOLS_DIR if set, else `.tools` of the baton checkout this
# script lives in (crates/baton-build/../../.tools), else
# ${XDG_CACHE_HOME:-~/.cache}/baton/tools: the places baton-build looks.
# Each step is skipped when its result is already present. Prints what it did.
#
# Usage: bash crates/baton-build/install-device-toolchain.sh
#        (tools/install-device-toolchain.sh in a checkout calls this)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ -n "${BATON_TOOLS_DIR:-}" ]]; then
    TOOLS="$BATON_TOOLS_DIR"
elif [[ -f "$HERE/../../tools/env.sh" ]]; then
    TOOLS="$(cd "$HERE/../.." && pwd)/.tools"
else
    TOOLS="${XDG_CACHE_HOME:-$HOME/.cache}/baton/tools"
fi
NVCC_WHEEL_VERSION="13.0.88"
MIN_RUSTC_MINOR=96
RUST_SRC=/usr/lib/rustlib/src/rust/library/core

say() { printf 'install-device-toolchain: %s\n' "$*"; }

rustc_ok() {
    [[ -x /usr/bin/rustc && -x /usr/bin/cargo && -d "$RUST_SRC" ]] || return 1
    local v minor
    v="$(/usr/bin/rustc --version 2>/dev/null | awk '{print $2}')" || return 1
    minor="$(echo "$v" | cut -d. -f2)"
    [[ "$(echo "$v" | cut -d. -f1)" == 1 && "$minor" =~ ^[0-9]+$ && "$minor" -ge "$MIN_RUSTC_MINOR" ]]
}

# --- 1. Rust for nvptx64 ----------------------------------------------------
if rustc_ok; then
    say "rust: present ($(/usr/bin/rustc --version)), library source at $RUST_SRC — skipped"
else
    if ! command -v apt-get >/dev/null; then
        say "ERROR: need /usr/bin/rustc >= 1.$MIN_RUSTC_MINOR with library source, and apt-get is not available to install rustc-web cargo-web rust-web-src" >&2
        exit 1
    fi
    SUDO=""
    if [[ "$(id -u)" != 0 ]]; then
        if command -v sudo >/dev/null; then SUDO="sudo"; else
            say "ERROR: installing rustc-web cargo-web rust-web-src needs root (or sudo)" >&2
            exit 1
        fi
    fi
    say "rust: installing rustc-web cargo-web rust-web-src via apt-get"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq rustc-web cargo-web rust-web-src
    if ! rustc_ok; then
        say "ERROR: after apt-get install, /usr/bin/rustc is '$(/usr/bin/rustc --version 2>&1 || true)'; need >= 1.$MIN_RUSTC_MINOR and $RUST_SRC" >&2
        exit 1
    fi
    say "rust: installed $(/usr/bin/rustc --version)"
fi

# --- 2. ptxas ------------------------------------------------------------------
PTXAS="$TOOLS/cuda-nvcc/nvidia/cu13/bin/ptxas"
if [[ -x "$PTXAS" ]] && "$PTXAS" --version >/dev/null 2>&1; then
    say "ptxas: present ($("$PTXAS" --version | tail -1)) — skipped"
else
    PY="$(command -v python3 || true)"
    if [[ -z "$PY" ]]; then
        say "ERROR: python3 (with pip) is needed to install ptxas from the nvidia-cuda-nvcc wheel" >&2
        exit 1
    fi
    say "ptxas: installing nvidia-cuda-nvcc==$NVCC_WHEEL_VERSION into $TOOLS/cuda-nvcc"
    rm -rf "$TOOLS/cuda-nvcc"
    mkdir -p "$TOOLS"
    PIP_ROOT_USER_ACTION=ignore "$PY" -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$TOOLS/cuda-nvcc" "nvidia-cuda-nvcc==$NVCC_WHEEL_VERSION"
    chmod +x "$TOOLS/cuda-nvcc/nvidia/cu13/bin/"* 2>/dev/null || true
    if ! "$PTXAS" --version >/dev/null 2>&1; then
        say "ERROR: ptxas not runnable at $PTXAS after installing the wheel" >&2
        exit 1
    fi
    say "ptxas: installed ($("$PTXAS" --version | tail -1))"
fi

# --- 3. nvdisasm (SASS for the zero-cost check) ------------------------------
# No 13.0.x wheel of nvdisasm exists on PyPI; 13.5 disassembles sm_90a cubins
# from ptxas 13.0.
NVDISASM_WHEEL_VERSION="13.5.37"
NVDISASM="$TOOLS/cuda-nvdisasm/nvidia/cu13/bin/nvdisasm"
if [[ -x "$NVDISASM" ]] && "$NVDISASM" --version >/dev/null 2>&1; then
    say "nvdisasm: present — skipped"
else
    say "nvdisasm: installing nvidia-cuda-nvdisasm==$NVDISASM_WHEEL_VERSION into $TOOLS/cuda-nvdisasm"
    rm -rf "$TOOLS/cuda-nvdisasm"
    mkdir -p "$TOOLS"
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$TOOLS/cuda-nvdisasm" "nvidia-cuda-nvdisasm==$NVDISASM_WHEEL_VERSION"
    chmod +x "$NVDISASM" 2>/dev/null || true
    "$NVDISASM" --version >/dev/null 2>&1 || { say "ERROR: nvdisasm not runnable at $NVDISASM" >&2; exit 1; }
    say "nvdisasm: installed"
fi

say "done; tools in $TOOLS (in a baton checkout, 'source tools/env.sh' exports RUSTC_DEVICE, CARGO_DEVICE, PTXAS and NVDISASM)"
