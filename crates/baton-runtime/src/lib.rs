//! # baton-runtime
//!
//! The public host library of baton: finds a Hopper (or Blackwell) GPU,
//! loads PTX (the sm_90a/sm_100a kernels embedded at build time, or a PTX
//! string of your own), launches kernels with thread block clusters and
//! large dynamic shared memory through the CUDA driver API (via [`cudarc`],
//! loaded at run time), encodes TMA tensor maps, and runs the GEMMs
//! ([`gemm`]: BF16 and blockwise FP8 on sm_90a, block-scaled MXFP8/NVFP4 on
//! sm_100a).
//!
//! It works on your own cudarc context and stream: [`Gpu::from_stream`]
//! wraps an existing `Arc<CudaStream>`, and every launch and GEMM of that
//! `Gpu` is enqueued on it.
//!
//! ```no_run
//! use baton_runtime::{Gpu, Variant, gemm};
//! let gpu = Gpu::new(0)?;                            // NoDriver / NoDevice / WrongArch
//! let kernels = gpu.load_kernels(Variant::Release)?; // PtxNotBuilt / PtxRejected
//! let (m, n, k) = (256, 256, 256);
//! let a = gpu.stream().alloc_zeros::<u16>(m * k)?;
//! let b = gpu.stream().alloc_zeros::<u16>(n * k)?;
//! let mut d = gpu.stream().alloc_zeros::<u16>(m * n)?;
//! gemm::gemm_bf16(&gpu, &kernels, &a, &b, None, &mut d, (m, n, k), 1.0, 0.0)?;
//! gpu.synchronize()?;
//! # Ok::<(), baton_runtime::Error>(())
//! ```
//!
//! Without a GPU, [`Gpu::new`] returns an error for which
//! [`Error::is_no_gpu`] is true; GPU tests print a skip reason on it.
//!
//! References (cuBLAS, f64), checks and benchmarks live in
//! `baton-reference`, the GPU self-tests in `baton-selftest`, and the
//! PTX/SASS tooling in `xtask`.
#![warn(missing_docs)]

pub mod block_scaled;
mod device_memory;
pub mod error;
pub mod gemm;
mod gpu;
mod launch;
pub mod pitched_copy;
pub mod ptx;
mod target;
pub mod tensor_map;
pub mod trace;

/// The README's Rust examples ("Use from Rust", the CPU pipeline), compiled
/// and run as this crate's doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// Parameter structs, `KernelSpec`s and shared layouts of baton's own
/// kernels (crate `baton-kernels-abi`).
pub use baton_kernels_abi as kernel_abi;
pub use cudarc;
pub use error::{Error, Result};
pub use gpu::{Gpu, Kernel, KernelAttrs, Kernels, report_skip};
pub use launch::{
    DeviceSpec, Grid, KernelArgs, LaunchConfig, LaunchLimits, PORTABLE_CLUSTER_SIZE, TypedKernel,
    device_specs, launch_config, programmatic_launch_enabled,
};
pub use target::{REQUIRED_ARCH, SM100A_ARCH, Target, Variant};

/// A kernel of `kernels/` and whether it is on a hot path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// Its (unmangled) name in the PTX.
    pub name: &'static str,
    /// What it does.
    pub about: &'static str,
    /// Hot kernels must compile (release variant) with no spills and no
    /// stack frame: `xtask/tests/ptxas.rs` enforces it.
    pub hot: bool,
}

/// Every kernel `kernels/` defines (the production module; the test kernels
/// of `kernels/selftest` are listed by `baton_selftest::kernels::KERNELS`).
/// Names and hotness come from the kernels' `KernelSpec`s ([`kernel_abi`]);
/// `xtask/tests/ptxas.rs` fails when the PTX and this table disagree.
pub const KERNELS: &[KernelInfo] = &[
    KernelInfo {
        name: "baton_gemm_bf16_128x256",
        about: "bf16 GEMM, 128x256x64 tiles, 4 stages, TMA + wgmma, warp-specialized",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x256_c2",
        about: "bf16 GEMM, 128x256x64 tiles, 2-CTA clusters sharing B by TMA multicast",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x224_c2",
        about: "bf16 GEMM, 128x224x64 tiles, 2-CTA clusters (N multiple of 224)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x192_c2",
        about: "bf16 GEMM, 128x192x64 tiles, 2-CTA clusters (N multiple of 192)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x160_c2",
        about: "bf16 GEMM, 128x160x64 tiles, 2-CTA clusters (N multiple of 160)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x128_c2",
        about: "bf16 GEMM, 128x128x64 tiles, 2-CTA clusters sharing B by TMA multicast",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x128",
        about: "bf16 GEMM, 128x128x64 tiles, 6 stages",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x64",
        about: "bf16 GEMM, 128x64x64 tiles, 8 stages (skinny problems)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x32",
        about: "bf16 GEMM, 128x32x64 tiles, 8 stages (few tile rows: twice the CTAs of 128x64)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_256x128",
        about: "bf16 GEMM, 256x128x64 tiles, 4 stages, each consumer warpgroup 128 rows (2 x m64n128k16)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_256x128_c2",
        about: "bf16 GEMM, 256x128x64 tiles, 2-CTA clusters sharing B by TMA multicast",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x128_pingpong",
        about: "bf16 GEMM, ping-pong: 128x128x64 tiles, each consumer warpgroup owns whole tiles, epilogue under the other's main loop",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x128_pingpong_c2",
        about: "bf16 GEMM, ping-pong 128x128x64 tiles, 2-CTA clusters sharing B by TMA multicast",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_swap_ab_16",
        about: "bf16 GEMM for small M (swap-AB: D^T = B·A^T), 128 rows of N x 16 of M x 64 tiles, transposed TMA-store epilogue",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_swap_ab_32",
        about: "bf16 GEMM for small M (swap-AB), 128 rows of N x 32 of M x 64 tiles",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_swap_ab_64",
        about: "bf16 GEMM for small M (swap-AB), 128 rows of N x 64 of M x 64 tiles",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_swap_ab_narrow_16",
        about: "bf16 GEMM for small M (narrow swap-AB), 64 rows of N x 16 of M x 64 tiles, one consumer warpgroup, 16 stages",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_swap_ab_narrow_32",
        about: "bf16 GEMM for small M (narrow swap-AB), 64 rows of N x 32 of M x 64 tiles, 16 stages",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_swap_ab_narrow_64",
        about: "bf16 GEMM for small M (narrow swap-AB), 64 rows of N x 64 of M x 64 tiles, 12 stages",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_swap_ab_narrow_128",
        about: "bf16 GEMM (narrow swap-AB), 64 rows of N x 128 of M x 64 tiles, m64n128k16 on one consumer warpgroup: L2-fed 128x64 plans without C",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_swap_ab_narrow_64_c2",
        about: "bf16 GEMM for small M (narrow swap-AB 64 of N x 64 of M) in 2-CTA clusters along N sharing A by TMA multicast",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_swap_ab_narrow_128_c2",
        about: "bf16 GEMM (narrow swap-AB 64 of N x 128 of M) in 2-CTA clusters along N sharing A by TMA multicast",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x256_am",
        about: "bf16 GEMM, 128x256x64 tiles, A M-major (column-major A), wgmma imm-trans-a",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x256_bn",
        about: "bf16 GEMM, 128x256x64 tiles, B N-major (K x N row-major B), wgmma imm-trans-b",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x256_ambn",
        about: "bf16 GEMM, 128x256x64 tiles, A M-major and B N-major, both transpose bits",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x128_am",
        about: "bf16 GEMM, 128x128x64 tiles, A M-major (column-major A), wgmma imm-trans-a",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x128_bn",
        about: "bf16 GEMM, 128x128x64 tiles, B N-major (K x N row-major B), wgmma imm-trans-b",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_bf16_128x128_ambn",
        about: "bf16 GEMM, 128x128x64 tiles, A M-major and B N-major, both transpose bits",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_128x128",
        about: "blockwise-scaled FP8 GEMM (e4m3, 1x128 A / 128x128 B scales, per-K promotion), 128x128x128 tiles, 6 stages",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_128x128_db",
        about: "blockwise-scaled FP8 GEMM, two partial accumulators (MMAs of K block kb+1 overlap kb's promotion)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_128x128_db_c2",
        about: "blockwise-scaled FP8 GEMM, two partials, 2-CTA clusters along M sharing B by TMA multicast",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_128x192",
        about: "blockwise-scaled FP8 GEMM, 128x192x128 tiles, 5 stages, one partial (two B-scale blocks per tile)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_128x64_db",
        about: "blockwise-scaled FP8 GEMM, 128x64x128 tiles, 8 stages, two partials (small M)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_256x128",
        about: "blockwise-scaled FP8 GEMM, 256x128x128 tiles, 4 stages, two 64-row waves per warpgroup, no stream-K (see 256x128_sk)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_128x256",
        about: "blockwise-scaled FP8 GEMM, 128x256x128 tiles, 4 stages, two 128-column waves per warpgroup (small M, wide N)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_128x96_db",
        about: "blockwise-scaled FP8 GEMM, 128x96x128 tiles, 6 stages, two partials (a tile may straddle two B-scale blocks)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_128x32_db",
        about: "blockwise-scaled FP8 GEMM, 128x32x128 tiles, 10 stages, two partials (small M, few columns)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_256x96",
        about: "blockwise-scaled FP8 GEMM, 256x96x128 tiles, 4 stages, two 64-row waves per warpgroup, no stream-K",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_256x88",
        about: "blockwise-scaled FP8 GEMM, 256x88x128 tiles, 4 stages, two 64-row waves per warpgroup (wave counts; last 24 columns stored from registers)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_256x88_mca",
        about: "blockwise-scaled FP8 GEMM, 256x88 tiles in 2-CTA clusters along N sharing A by TMA multicast",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_256x128_sk",
        about: "blockwise-scaled FP8 GEMM, 256x128x128 tiles with stream-K and split-K (the data-parallel 256x128 has none)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_256x128_mca",
        about: "blockwise-scaled FP8 GEMM, 256x128x128 tiles, 2-CTA clusters along N sharing A by TMA multicast, no stream-K",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_256x128_mca_3stage",
        about: "blockwise-scaled FP8 GEMM, 256x128x128 tiles sharing A over 2-CTA clusters, 3 stages and whole-tile D staging (short K)",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_64x128_db",
        about: "blockwise-scaled FP8 GEMM, 64x128x128 tiles, 8 stages, one consumer warpgroup (256 threads), small M",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_64x64_db",
        about: "blockwise-scaled FP8 GEMM, 64x64x128 tiles, 12 stages, one consumer warpgroup (256 threads), small M",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_64x56_db",
        about: "blockwise-scaled FP8 GEMM, 64x56x128 tiles, 12 stages, one consumer warpgroup (256 threads), small M",
        hot: true,
    },
    KernelInfo {
        name: "baton_gemm_fp8_blockwise_64x32_db",
        about: "blockwise-scaled FP8 GEMM, 64x32x128 tiles, 12 stages, one consumer warpgroup (256 threads), small M",
        hot: true,
    },
    KernelInfo {
        name: "baton_pitched_copy",
        about: "pitched row copy (a BF16 GEMM operand re-packed to 128-byte rows), 16-byte vectors where aligned, grid-stride",
        hot: true,
    },
];

/// Names of the hot kernels (see [`KernelInfo::hot`]).
pub fn hot_kernels() -> impl Iterator<Item = &'static str> {
    KERNELS.iter().filter(|k| k.hot).map(|k| k.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_not_built_names_the_installer() {
        let msg = Error::PtxNotBuilt {
            variant: Variant::Debug,
            built: "not built: baton-runtime's `gemm-kernels` feature is off",
        }
        .to_string();
        assert!(msg.contains("`gemm-kernels` feature is off"), "{msg}");
        assert!(msg.contains("debug PTX"), "{msg}");
        assert!(msg.contains("tools/install-device-toolchain.sh"), "{msg}");
        assert!(msg.contains("BATON_PTX_DIR"), "{msg}");
    }

    #[test]
    fn wrong_arch_says_what_is_required() {
        let e = Error::WrongArch {
            ordinal: 0,
            name: "NVIDIA A100".into(),
            found: (8, 0),
            required: REQUIRED_ARCH,
        };
        let msg = e.to_string();
        assert!(
            msg.contains("8.0")
                && msg.contains("9.0")
                && msg.contains("sm_90a")
                && msg.contains("A100"),
            "{msg}"
        );
        assert!(!e.is_no_gpu());
        assert!(msg.contains("10.0") && msg.contains("sm_100a"), "{msg}");
    }

    #[test]
    fn targets_map_to_one_compute_capability_each() {
        for t in Target::ALL {
            assert_eq!(
                Target::of_compute_capability(t.compute_capability()),
                Some(t)
            );
        }
        for cc in [(8, 0), (8, 9), (9, 1), (10, 1), (10, 3), (12, 0)] {
            assert_eq!(Target::of_compute_capability(cc), None, "{cc:?}");
        }
        let shown = Target::Sm100a.to_string();
        assert!(
            shown.contains("sm_100a") && shown.contains("10.0") && shown.contains("B200"),
            "{shown}"
        );
    }

    #[test]
    fn no_build_names_target_and_variant() {
        let msg = Error::NoBuild {
            target: Target::Sm100a,
            variant: Variant::Debug,
        }
        .to_string();
        assert!(msg.contains("debug") && msg.contains("sm_100a"), "{msg}");
    }

    #[test]
    fn stream_and_kernel_lookup_errors_say_what_to_do() {
        let msg = Error::ForeignStream {
            ordinal: 0,
            stream_ordinal: 1,
        }
        .to_string();
        assert!(
            msg.contains("device 1") && msg.contains("Gpu::from_stream"),
            "{msg}"
        );
        let unknown = |available: Vec<String>| {
            Error::UnknownKernel {
                name: "k".into(),
                module: "m".into(),
                available,
            }
            .to_string()
        };
        assert!(unknown(vec![]).ends_with("(none)"), "{}", unknown(vec![]));
        let msg = unknown(vec!["a".into(), "b".into()]);
        assert!(msg.contains("`k`") && msg.ends_with("a, b"), "{msg}");
    }

    #[test]
    fn no_gpu_errors_are_classified() {
        assert!(Error::NoDriver { detail: "x".into() }.is_no_gpu());
        assert!(
            Error::NoDevice {
                ordinal: 1,
                count: 1,
                detail: "x".into()
            }
            .is_no_gpu()
        );
    }

    #[test]
    fn launch_error_names_kernel_and_driver_code() {
        use cudarc::driver::{DriverError, sys::CUresult};
        let e = Error::Launch {
            kernel: "k".into(),
            source: DriverError(CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION),
        };
        let msg = e.to_string();
        assert!(
            msg.contains("`k`") && msg.contains("ILLEGAL_INSTRUCTION"),
            "{msg}"
        );
    }

    #[test]
    fn embedded_ptx_matches_the_build_state() {
        // Either both variants are embedded, or loading says why not.
        match (ptx::get(Variant::Release), ptx::get(Variant::Debug)) {
            (Ok(r), Ok(d)) => {
                for k in KERNELS {
                    for (v, text) in [("release", r), ("debug", d)] {
                        assert!(
                            ptx::entry_names(text).iter().any(|n| n == k.name),
                            "{} missing from {v} PTX",
                            k.name
                        );
                    }
                }
                assert!(r.contains(".target sm_90a"));
            }
            (Err(e), Err(_)) => {
                assert!(matches!(e, Error::PtxNotBuilt { .. }));
                println!("SKIPPED (partly): no PTX embedded ({})", ptx::SOURCE);
            }
            _ => panic!("only one variant embedded ({})", ptx::SOURCE),
        }
    }
}
