# Source me: `source tools/env.sh`. Exports where the device toolchain lives
# (installed by tools/install-device-toolchain.sh). Harmless when it is absent:
# the variables then name paths that do not exist, and tools/build-ptx.sh says
# what to run.
_baton_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
export BATON_ROOT="$_baton_root"
# rustc/cargo that build `core` for nvptx64-nvidia-cuda (Debian rustc-web).
export RUSTC_DEVICE="${RUSTC_DEVICE:-/usr/bin/rustc}"
export CARGO_DEVICE="${CARGO_DEVICE:-/usr/bin/cargo}"
# ptxas from the nvidia-cuda-nvcc wheel (sm_90a, sm_100a).
export PTXAS="${PTXAS:-$_baton_root/.tools/cuda-nvcc/nvidia/cu13/bin/ptxas}"
# nvdisasm from the nvidia-cuda-nvdisasm wheel (SASS of the zero-cost check).
export NVDISASM="${NVDISASM:-$_baton_root/.tools/cuda-nvdisasm/nvidia/cu13/bin/nvdisasm}"
unset _baton_root
