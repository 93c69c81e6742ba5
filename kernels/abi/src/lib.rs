//! The ABI of baton's own kernels, one source for both sides: the
//! `#[repr(C)]` parameter struct, the [`KernelSpec`](baton::kernel::KernelSpec)
//! (entry name, threads, cluster, launch bounds, dynamic shared memory =
//! `size_of` the shared layout) and the shared-memory layout of every
//! kernel entry. The device crates (`kernels/`) declare their entries with
//! `baton::kernel!` against these specs; `baton-runtime` launches through
//! them (`Kernels::kernel(&SPEC)`), so a host/device mismatch does not
//! compile, and a new kernel or tile configuration touches one place.
//!
//! Compiles for the host and for `nvptx64` (`no_std`). Layout sizes are
//! those of the device: barrier cells are 8 bytes on the GPU and larger in
//! the host simulation, so the host launches with the dynamic shared memory
//! the module records (`TypedKernel::dynamic_smem_bytes`), never with a
//! host-side `size_of`.
//!
//! ```
//! use baton_kernels_abi::smoke;
//! assert_eq!(smoke::SMOKE.name, "baton_smoke_mbarrier");
//! assert_eq!(smoke::SMOKE.threads, 64);
//! ```
#![no_std]
#![warn(missing_docs)]

pub mod gemm_bf16;
pub mod gemm_bf16_swap_ab;
pub mod gemm_fp8;
pub mod gemm_params;
#[cfg(feature = "sm100")]
pub mod gemm_sm100;
pub mod pipeline;
pub mod pitched_copy;
pub mod sm100_smoke;
pub mod smoke;
pub mod tile_copy;
pub mod zero_cost;
