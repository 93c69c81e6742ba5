//! baton's test and evidence kernels, in a PTX module apart from the
//! production GEMMs (`kernels/`): the smoke kernels, the `pipeline` /
//! `epi_load` / tile-pipeline GPU tests, the deliberate hang of the hang
//! report, the zero-cost pair, and (feature `sm100`, `-C target-cpu=sm_100a`)
//! the `tcgen05` smoke kernels. Built for `nvptx64-nvidia-cuda` by
//! `baton-build` (from `baton-runtime`'s build script) into
//! `baton_selftest_sm90a[_debug].ptx` and `baton_selftest_sm100a.ptx`.
//!
//! Entries are declared with `baton::kernel!` against their `KernelSpec`s
//! and parameter structs in `kernels/abi` (`baton-kernels-abi`).
#![no_std]
#![feature(abi_ptx, asm_experimental_arch)]

#[cfg(not(target_arch = "nvptx64"))]
compile_error!(
    "baton-selftest-kernels builds only for nvptx64-nvidia-cuda: baton-runtime's build script \
     builds it with baton-build (after tools/install-device-toolchain.sh)"
);

pub mod pipeline;
/// sm_100a only: built into `baton_selftest_sm100a.ptx` with `--features sm100`.
#[cfg(feature = "sm100")]
pub mod sm100_smoke;
pub mod smem_io;
pub mod smoke;
pub mod tile_copy;
pub mod zero_cost;

/// A panic on the device ends the kernel with `trap`; the launch then fails
/// on the host with an illegal-instruction error.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    baton::arch::ptx::trap()
}
