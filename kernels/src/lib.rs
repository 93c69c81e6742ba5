//! baton's device kernels, built for `nvptx64-nvidia-cuda` / `sm_90a` into
//! one PTX module by `tools/build-ptx.sh` and loaded by `baton-runtime`.
//!
//! Kernels are `extern "ptx-kernel"` functions with unmangled names; the host
//! looks them up by those names (`baton_runtime::kernels`). Every kernel here
//! must be listed in `baton-runtime`'s kernel table and, when it is on a hot
//! path, in its `HOT_KERNELS` list (checked for spills by
//! `crates/baton-runtime/tests/ptxas.rs`).
//!
//! Build (needs the device toolchain; see `tools/install-device-toolchain.sh`):
//!
//! ```text
//! tools/build-ptx.sh --check
//! ```
#![no_std]
#![feature(abi_ptx, asm_experimental_arch)]

#[cfg(not(target_arch = "nvptx64"))]
compile_error!(
    "baton-kernels builds only for nvptx64-nvidia-cuda: use tools/build-ptx.sh \
     (after tools/install-device-toolchain.sh)"
);

#[macro_use]
mod unroll;
pub mod gemm_bf16;
mod gemm_common;
pub mod gemm_fp8;
pub mod pipeline;
pub mod smem_io;
pub mod smoke;
pub mod tile_copy;
pub mod zero_cost;

/// A panic on the device ends the kernel with `trap`; the launch then fails
/// on the host with an illegal-instruction error.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    baton::arch::sm90::trap()
}
