//! The test kernels' own PTX module (`kernels/selftest`: smoke, pipeline
//! and tile-pipeline tests, the zero-cost pair, the hang kernel, the sm_100a
//! smoke kernels), built by this crate's build script with `baton-build` and
//! embedded here, apart from the runtime's production module.

use baton_runtime::{Error, Gpu, KernelInfo, Kernels, Target, Variant};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/selftest_ptx.rs"));
}

pub use embedded::SOURCE;

/// The embedded test-kernel PTX of `variant` (`baton_selftest_sm90a.ptx` or
/// `baton_selftest_sm90a_debug.ptx`), or [`Error::PtxNotBuilt`].
///
/// ```
/// use baton_runtime::Variant;
/// match baton_selftest::kernels::ptx(Variant::Release) {
///     Ok(text) => assert!(text.contains(".entry baton_smoke_mbarrier")),
///     Err(e) => assert!(matches!(e, baton_runtime::Error::PtxNotBuilt { .. })),
/// }
/// ```
pub fn ptx(variant: Variant) -> Result<&'static str, Error> {
    match variant {
        Variant::Release => embedded::RELEASE_PTX,
        Variant::Debug => embedded::DEBUG_PTX,
    }
    .ok_or(Error::PtxNotBuilt {
        variant,
        built: SOURCE,
    })
}

/// The `ptxas -v` output of [`ptx`]'s module, if ptxas was available when
/// it was built.
///
/// ```
/// let _ = baton_selftest::kernels::ptxas_report(baton_runtime::Variant::Release);
/// ```
pub fn ptxas_report(variant: Variant) -> Option<&'static str> {
    match variant {
        Variant::Release => embedded::RELEASE_PTXAS,
        Variant::Debug => embedded::DEBUG_PTXAS,
    }
}

/// The sm_100a build (`baton_selftest_sm100a.ptx`: the `tcgen05` smoke
/// kernels and the tests that use no `wgmma`), if built.
///
/// ```
/// if let Some(text) = baton_selftest::kernels::sm100a() {
///     assert!(text.contains(".target sm_100a"));
/// }
/// ```
pub fn sm100a() -> Option<&'static str> {
    embedded::SM100A_PTX
}

/// Loads the test kernels of `variant` for `gpu`'s [`Target`]:
/// `baton_selftest_sm90a[_debug]` on Hopper, `baton_selftest_sm100a`
/// (release only, [`Error::NoBuild`] otherwise) on Blackwell.
///
/// ```no_run
/// let gpu = baton_runtime::Gpu::new(0)?;
/// let kernels = baton_selftest::kernels::load_kernels(&gpu, baton_runtime::Variant::Release)?;
/// assert!(kernels.names().iter().any(|n| n == "baton_smoke_mbarrier"));
/// # Ok::<(), baton_runtime::Error>(())
/// ```
pub fn load_kernels(gpu: &Gpu, variant: Variant) -> Result<Kernels, Error> {
    match gpu.target() {
        Target::Sm90a => gpu.load_ptx(
            ptx(variant)?,
            match variant {
                Variant::Release => "baton_selftest_sm90a",
                Variant::Debug => "baton_selftest_sm90a_debug",
            },
        ),
        Target::Sm100a => {
            let text = sm100a()
                .filter(|_| variant == Variant::Release)
                .ok_or(Error::NoBuild {
                    target: gpu.target(),
                    variant,
                })?;
            gpu.load_ptx(text, "baton_selftest_sm100a")
        }
    }
}

/// Every kernel `kernels/selftest` defines (sm_90a module), and whether it
/// is hot; names and hotness from the kernels' `KernelSpec`s.
/// `xtask/tests/ptxas.rs` fails when the PTX and this table disagree.
///
/// ```
/// assert!(baton_selftest::kernels::KERNELS.iter().any(|k| k.name == "baton_smoke_mbarrier" && k.hot));
/// ```
pub const KERNELS: &[KernelInfo] = &[
    KernelInfo {
        name: baton_runtime::kernel_abi::smoke::SMOKE.name,
        about: "smoke: one mbarrier hands 32 words from a producer warp to a consumer warp",
        hot: baton_runtime::kernel_abi::smoke::SMOKE.hot,
    },
    KernelInfo {
        name: baton_runtime::kernel_abi::smoke::SMOKE_CLUSTER.name,
        about: "smoke: cluster launch; each CTA's mbarrier completed by remote arrivals from its cluster",
        hot: baton_runtime::kernel_abi::smoke::SMOKE_CLUSTER.hot,
    },
    KernelInfo {
        name: baton_runtime::kernel_abi::pipeline::HANDOFF.name,
        about: "pipeline test: scoped produce/consume through a 4-stage ring",
        hot: baton_runtime::kernel_abi::pipeline::HANDOFF.hot,
    },
    KernelInfo {
        name: baton_runtime::kernel_abi::pipeline::EXPLICIT.name,
        about: "pipeline test: explicit-signal stages (consume_explicit, release_without_signal)",
        hot: baton_runtime::kernel_abi::pipeline::EXPLICIT.hot,
    },
    KernelInfo {
        name: baton_runtime::kernel_abi::pipeline::EPI_LOAD.name,
        about: "epilogue-load pipeline test: D = C * beta",
        hot: baton_runtime::kernel_abi::pipeline::EPI_LOAD.hot,
    },
    KernelInfo {
        name: baton_runtime::kernel_abi::zero_cost::PIPELINE.name,
        about: "zero-cost bench: handoff loop written with baton::pipeline",
        hot: baton_runtime::kernel_abi::zero_cost::PIPELINE.hot,
    },
    KernelInfo {
        name: baton_runtime::kernel_abi::zero_cost::HANDWRITTEN.name,
        about: "zero-cost bench: the same loop with hand-written mbarrier PTX",
        hot: baton_runtime::kernel_abi::zero_cost::HANDWRITTEN.hot,
    },
    KernelInfo {
        name: baton_runtime::kernel_abi::pipeline::HANG.name,
        about: "hang report test: a consumer waits on a stage nobody fills (debug PTX: bounded, prints, traps)",
        hot: baton_runtime::kernel_abi::pipeline::HANG.hot,
    },
    KernelInfo {
        name: baton_runtime::kernel_abi::tile_copy::COPY.name,
        about: "tile_pipeline test: TMA tile loads through InputTilePipeline, TMA stores out",
        hot: baton_runtime::kernel_abi::tile_copy::COPY.hot,
    },
    KernelInfo {
        name: baton_runtime::kernel_abi::tile_copy::COPY_MULTICAST.name,
        about: "tile_pipeline test: the tile copy with 2-CTA cluster multicast",
        hot: baton_runtime::kernel_abi::tile_copy::COPY_MULTICAST.hot,
    },
];
