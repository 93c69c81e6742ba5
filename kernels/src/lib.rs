//! baton's production kernels (the GEMMs), built for `nvptx64-nvidia-cuda` /
//! `sm_90a` into one PTX module by `baton-build` (from `baton-runtime`'s
//! build script) and loaded by `baton-runtime`. With the `sm100` feature (and
//! `-C target-cpu=sm_100a`) the same build makes `baton_sm100a.ptx`: the
//! Blackwell GEMMs. Test and evidence kernels live apart, in
//! `kernels/selftest` (their own PTX module).
//!
//! Kernels are declared with `baton::kernel!` against their `KernelSpec`s and
//! `#[repr(C)]` parameter structs in `kernels/abi` (`baton-kernels-abi`),
//! which the host launches through (`Kernels::kernel(&SPEC)`); the spec says
//! whether a kernel is hot (no spills, no stack frame: the build fails
//! otherwise) and gives its launch bounds and shared memory.
//!
//! Build (needs the device toolchain; see `tools/install-device-toolchain.sh`):
//!
//! ```text
//! cargo build -p baton-runtime      # or: tools/build-ptx.sh --check --out-dir DIR
//! ```
#![no_std]
#![feature(abi_ptx)]
// `baton::entry_param_address!` (tensor maps by value) expands to inline PTX
// here, in the Hopper kernels (the sm_100a build has none of its own).
#![cfg_attr(not(feature = "sm100"), feature(asm_experimental_arch))]

#[cfg(not(target_arch = "nvptx64"))]
compile_error!(
    "baton-kernels builds only for nvptx64-nvidia-cuda: baton-runtime's build script builds it \
     with baton-build (after tools/install-device-toolchain.sh)"
);

// The `wgmma` kernels are Hopper-only (sm_100a has no `wgmma`), so the
// sm_100a build (feature `sm100`) leaves them out.
#[cfg(not(feature = "sm100"))]
pub mod gemm_bf16;
#[cfg(not(feature = "sm100"))]
pub mod gemm_bf16_swap_ab;
#[cfg(not(feature = "sm100"))]
pub mod gemm_fp8;
/// sm_100a only: built into `baton_sm100a.ptx` with `--features sm100`.
#[cfg(feature = "sm100")]
pub mod gemm_sm100;
/// The pitched row copy (re-packing a GEMM operand to 128-byte rows);
/// in every build.
pub mod pitched_copy;

/// A panic on the device ends the kernel with `trap`; the launch then fails
/// on the host with an illegal-instruction error.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    baton::arch::ptx::trap()
}
