//! The ABI of baton's FlashAttention-style forward kernels (sm_90a), shared
//! by the device crate (`attention/kernel`, built by `baton-build`) and the
//! host (`baton-attention`): what both sides must agree on, in one place.
//!
//! `O = softmax(scale·Q·Kᵀ [+ causal mask])·V` per (batch, query head), bf16
//! in and out, fp32 accumulation. A CTA computes query tiles of one head
//! each, one after the other ([`schedule`]: the host launches one CTA per
//! SM or one per tile; with a causal mask the longest tiles first). Each
//! kernel's [`HeadDimConfig`] is the single source of its shape: `W`
//! consumer warpgroups ([`HeadDimConfig::consumer_warpgroups`]: 2, or 3 for
//! FA3's 192-row d = 64 tiles), query tiles of [`HeadDimConfig::bm`] = 64·W
//! rows, [`HeadDimConfig::threads`] = 128·(1 + W) threads:
//!
//! | warps | role |
//! |---|---|
//! | 0 (one lane) | TMA producer, per tile: K_0, each warpgroup's Q rows (the [`QPayload`] pipeline: stage order warpgroup 0's, 1's, …), V_0, then K_j and V_j ([`KvPayload`], one `InputTilePipeline` for K and one for V) |
//! | 1–3 | idle (their registers go to the consumers) |
//! | 4–7, 8–11 (, 12–15) | consumer warpgroups, 64 query rows each: `wgmma` S = Q·Kᵀ (both operands in shared memory), online softmax (exp2, rescaling), `wgmma` O += P·V (P from registers), then O through shared memory and TMA stores |
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![warn(missing_docs)]

pub mod layout;
pub mod maps;
pub mod params;
pub mod schedule;

pub use layout::{AttnSmem, KvPayload, KvStage, QPayload, QStage};
pub use params::AttentionParams;

use baton::kernel::KernelSpec;

/// Query rows per consumer warpgroup.
pub const WG_ROWS: usize = 64;
/// Columns of one TMA box and one 128-byte-swizzle atom: 64 bf16.
pub const BOX_COLS: usize = 64;
/// Registers of the whole CTA at launch: the H100's 64 K registers per SM
/// (one CTA per SM), which `setmaxnreg` redistributes among the roles.
pub const REGISTER_FILE: u32 = 65536;
/// Shared-memory budget of one CTA (the sm_90 opt-in maximum).
pub const SMEM_LIMIT: usize = 227 * 1024;

/// The head dimensions the kernels support.
pub const HEAD_DIMS: [u32; 3] = [64, 128, 256];

/// One kernel's configuration: consumer warpgroups (hence query rows per
/// tile and threads), K/V rows per block and stages. The host's launch
/// (grid, threads, box sizes) and the kernel (its `fwd::run`
/// instantiation, checked against it at compile time) both derive from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadDimConfig {
    /// Head dimension.
    pub head_dim: u32,
    /// Consumer warpgroups of 64 query rows each (2 or 3); each arrives
    /// once to free a K/V stage, and they take turns on the tensor cores.
    pub consumer_warpgroups: u32,
    /// K/V rows per block (the N of S = Q·Kᵀ).
    pub block_n: u32,
    /// Stages of K.
    pub k_stages: u32,
    /// Stages of V.
    pub v_stages: u32,
    /// Stages of Q (one warpgroup's 64 rows each; 2: one per warpgroup, 3:
    /// warpgroup 0's next rows load during the tile).
    pub q_stages: u32,
    /// The kernel loops over work tiles (persistent CTAs); `false`: it
    /// computes one tile per CTA and is launched with one CTA per tile.
    pub persistent: bool,
    /// The kernel follows a planned schedule
    /// ([`AttentionParams::tile_order`], [`schedule::plan`]) when given one:
    /// the causal entries; the host plans their causal calls, one CTA per
    /// SM.
    pub planned: bool,
    /// The next tile's first Q·Kᵀ is issued with this tile's last P·V and
    /// runs under this tile's epilogue (each warpgroup holds two tiles' Q
    /// rows: `q_stages` ≥ 2 · `consumer_warpgroups`).
    pub cross_tile: bool,
}

impl HeadDimConfig {
    /// Query rows per work tile: 64 per consumer warpgroup.
    ///
    /// ```
    /// assert_eq!(baton_attention_abi::D128.bm(), 128);
    /// assert_eq!(baton_attention_abi::D64_W3.bm(), 192);
    /// ```
    #[inline(always)]
    pub const fn bm(&self) -> u32 {
        WG_ROWS as u32 * self.consumer_warpgroups
    }

    /// Threads per CTA: the producer warpgroup and the consumer warpgroups.
    ///
    /// ```
    /// assert_eq!(baton_attention_abi::D128.threads(), 384);
    /// assert_eq!(baton_attention_abi::D64_W3.threads(), 512);
    /// ```
    pub const fn threads(&self) -> u32 {
        128 * (1 + self.consumer_warpgroups)
    }

    /// Registers per thread at launch (ptxas's cap for `threads` per CTA,
    /// one CTA per SM: the register file shared out, in steps of 8).
    ///
    /// ```
    /// assert_eq!(baton_attention_abi::D128.launch_registers(), 168);
    /// assert_eq!(baton_attention_abi::D64_W3.launch_registers(), 128);
    /// ```
    pub const fn launch_registers(&self) -> u32 {
        REGISTER_FILE / self.threads() / 8 * 8
    }

    /// Whether `setmaxnreg` can give the producer warpgroup `producer` and
    /// each consumer warpgroup `consumer` registers per thread: the CTA's
    /// pool is `threads · launch_registers` (asking for more hangs
    /// `setmaxnreg.inc`: Session 10's 32 + 2·240 at 384 threads).
    ///
    /// ```
    /// use baton_attention_abi::{D128, D64_W3};
    /// assert!(D128.registers_fit(40, 232) && !D128.registers_fit(32, 240));
    /// assert!(D64_W3.registers_fit(32, 160) && !D64_W3.registers_fit(40, 160));
    /// ```
    pub const fn registers_fit(&self, producer: u32, consumer: u32) -> bool {
        128 * (producer + self.consumer_warpgroups * consumer)
            <= self.threads() * self.launch_registers()
    }

    /// Whether a kernel instantiation (`fwd::run`'s `NB` column boxes, `BN`
    /// K/V rows, `SK`, `SV`, `SQ` stages, `W` consumer warpgroups,
    /// persistence, `PLAN`, `CROSS_TILE`) is this configuration: the kernel entries
    /// assert it at compile time.
    ///
    /// ```
    /// assert!(baton_attention_abi::D128.is_instance(2, 128, 2, 2, 4, 2, true, false, true));
    /// assert!(baton_attention_abi::D128_CAUSAL.is_instance(2, 128, 2, 2, 4, 2, true, true, true));
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub const fn is_instance(
        &self,
        nb: usize,
        bn: usize,
        sk: usize,
        sv: usize,
        sq: usize,
        w: usize,
        persistent: bool,
        planned: bool,
        cross_tile: bool,
    ) -> bool {
        self.head_dim as usize == 64 * nb
            && self.block_n as usize == bn
            && self.k_stages as usize == sk
            && self.v_stages as usize == sv
            && self.q_stages as usize == sq
            && self.consumer_warpgroups as usize == w
            && self.persistent == persistent
            && self.planned == planned
            && self.cross_tile == cross_tile
    }
}

/// d = 64: 176-row K/V blocks (FA3's wider block for the short turns of
/// d = 64; 192 spills: S's 96 accumulators, P's 48 and O's 32 registers
/// leave the tile loop too few), 3 K and 3 V stages.
pub const D64: HeadDimConfig = HeadDimConfig {
    head_dim: 64,
    consumer_warpgroups: 2,
    block_n: 176,
    k_stages: 3,
    v_stages: 3,
    q_stages: 2,
    persistent: true,
    planned: false,
    cross_tile: false,
};
/// d = 64 with a causal mask: 128-row K/V blocks, 3 K and 3 V stages,
/// planned (on the planned schedule it ran as fast as the 176-row block at
/// seq 4k and 10 % faster at seq 1k, BENCHMARKS.md "Session 11 — ATTN
/// round 2"; one CTA per tile the 176-row block was 4–11 % slower,
/// Session 9); cross-tile with 4 Q stages (its short tiles' head under the
/// tile before's epilogue: +4.5 % at seq 4k, +7 % at seq 1k, BENCHMARKS.md
/// "Session 12 — ATTN"; the other entries measured 0.5–2.5 % slower with it,
/// or do not fit 4 Q stages); the O stores' read wait deferred past the
/// next tile's softmax 0, and the next Q rows loaded behind K_1/V_1: +8 %
/// at seq 1k, +3 % at seq 4k (BENCHMARKS.md "Session 13 — ATTN").
pub const D64_CAUSAL: HeadDimConfig = HeadDimConfig {
    head_dim: 64,
    consumer_warpgroups: 2,
    block_n: 128,
    k_stages: 3,
    v_stages: 3,
    q_stages: 4,
    persistent: true,
    planned: true,
    cross_tile: true,
};
/// d = 128: 128-row K/V blocks, 3 K and 2 V stages (3 + 3 fill the 227
/// KiB exactly, leaving no room for the ordered barrier's 16 bytes, which
/// the tiles' 1024-byte alignment turns into 1 KiB).
pub const D128: HeadDimConfig = HeadDimConfig {
    head_dim: 128,
    consumer_warpgroups: 2,
    block_n: 128,
    k_stages: 2,
    v_stages: 2,
    q_stages: 4,
    persistent: true,
    planned: false,
    cross_tile: true,
};
/// d = 128 with a causal mask: [`D128`], planned (its own entry, so that
/// the non-causal entry keeps the code without the plan's check).
pub const D128_CAUSAL: HeadDimConfig = HeadDimConfig {
    planned: true,
    ..D128
};
/// d = 256: 64-row K/V blocks, 2 K and 2 V stages; one tile per CTA (the
/// tile loop's state does not fit beside the 128 O accumulators without
/// spills: ptxas, Session 9).
pub const D256: HeadDimConfig = HeadDimConfig {
    head_dim: 256,
    consumer_warpgroups: 2,
    block_n: 64,
    k_stages: 2,
    v_stages: 2,
    q_stages: 2,
    persistent: false,
    planned: false,
    cross_tile: false,
};

/// d = 64 on three consumer warpgroups (FA3's d = 64 CTA: 192-row query
/// tiles, 512 threads, consumers at 160 registers, producer 32): 80-row
/// K/V blocks, 3 K, 3 V and 3 Q stages (one per warpgroup); causal or not.
/// The block is what the consumers' 160 registers hold without spills
/// (ptxas, Session 11): the loop keeps S (`block_n/2` accumulators), P
/// (`block_n/4`), O (32) and ~60 registers of state; 64 rows need ~140,
/// 80 fit, 96 spill 4 bytes, 128 (FA3's causal block) ~200 bytes. (FA3's
/// non-causal 192-row block keeps P in shared memory instead.) Not the
/// default: on the H100 it ran 1–2 % slower than the two-warpgroup kernels
/// at seq 4k and 8.5 % slower at b16 s1024 causal (BENCHMARKS.md "Session
/// 11 — ATTN"); the host API runs it on request (`Warpgroups::Three`).
pub const D64_W3: HeadDimConfig = HeadDimConfig {
    head_dim: 64,
    consumer_warpgroups: 3,
    block_n: 80,
    k_stages: 3,
    v_stages: 3,
    q_stages: 3,
    persistent: true,
    planned: false,
    cross_tile: false,
};

/// Shared memory of the d = 64 kernel.
pub type Smem64 = AttnSmem<1, 176, 3, 3, 2>;
/// Shared memory of the three-warpgroup d = 64 kernel.
pub type Smem64W3 = AttnSmem<1, 80, 3, 3, 3, 3>;
/// Shared memory of the causal d = 64 kernel.
pub type Smem64Causal = AttnSmem<1, 128, 3, 3, 4>;
/// Shared memory of the d = 128 kernel.
pub type Smem128 = AttnSmem<2, 128, 2, 2, 4>;
/// Shared memory of the d = 256 kernel.
pub type Smem256 = AttnSmem<4, 64, 2, 2, 2>;

const fn spec<Smem>(name: &'static str, cfg: HeadDimConfig) -> KernelSpec<AttentionParams> {
    assert!(core::mem::size_of::<Smem>() <= SMEM_LIMIT);
    KernelSpec::new(name, cfg.threads()).with_dynamic_smem::<Smem>()
}

/// The d = 64 forward kernel.
///
/// ```
/// assert_eq!(baton_attention_abi::ATTENTION_D64.threads, 384);
/// ```
pub const ATTENTION_D64: KernelSpec<AttentionParams> =
    spec::<Smem64>("baton_attention_fwd_d64", D64).hot();
/// The d = 64 forward kernel for causal calls ([`D64_CAUSAL`]).
///
/// ```
/// assert_eq!(baton_attention_abi::ATTENTION_D64_CAUSAL.name, "baton_attention_fwd_d64_causal");
/// ```
pub const ATTENTION_D64_CAUSAL: KernelSpec<AttentionParams> =
    spec::<Smem64Causal>("baton_attention_fwd_d64_causal", D64_CAUSAL).hot();
/// The d = 64 forward kernel on three consumer warpgroups ([`D64_W3`]).
///
/// ```
/// assert_eq!(baton_attention_abi::ATTENTION_D64_W3.threads, 512);
/// ```
pub const ATTENTION_D64_W3: KernelSpec<AttentionParams> =
    spec::<Smem64W3>("baton_attention_fwd_d64_w3", D64_W3).hot();
/// The d = 128 forward kernel.
///
/// ```
/// assert_eq!(baton_attention_abi::ATTENTION_D128.name, "baton_attention_fwd_d128");
/// ```
pub const ATTENTION_D128: KernelSpec<AttentionParams> =
    spec::<Smem128>("baton_attention_fwd_d128", D128).hot();
/// The d = 128 forward kernel for causal calls ([`D128_CAUSAL`]).
///
/// ```
/// assert_eq!(baton_attention_abi::ATTENTION_D128_CAUSAL.name, "baton_attention_fwd_d128_causal");
/// ```
pub const ATTENTION_D128_CAUSAL: KernelSpec<AttentionParams> =
    spec::<Smem128>("baton_attention_fwd_d128_causal", D128_CAUSAL).hot();
/// The d = 256 forward kernel. Not yet `.hot()`: ptxas compiles the entry
/// at the 168-register cap of 384 threads and spills (the 128 O
/// accumulators, 32 S and 16 P registers need the consumers' 232).
///
/// ```
/// assert_eq!(baton_attention_abi::ATTENTION_D256.threads, 384);
/// ```
pub const ATTENTION_D256: KernelSpec<AttentionParams> =
    spec::<Smem256>("baton_attention_fwd_d256", D256).hot();

/// The configuration and spec of a head dimension (its non-causal kernel
/// of Session 9: 176-row K/V blocks at d = 64, 128-row at d = 128), `None`
/// if unsupported; [`config_for_call`] picks a call's kernel.
///
/// ```
/// let (cfg, spec) = baton_attention_abi::config_for(128).unwrap();
/// assert_eq!((cfg.block_n, spec.name), (128, "baton_attention_fwd_d128"));
/// assert!(baton_attention_abi::config_for(96).is_none());
/// ```
pub const fn config_for(head_dim: u32) -> Option<(HeadDimConfig, KernelSpec<AttentionParams>)> {
    match head_dim {
        64 => Some((D64, ATTENTION_D64)),
        128 => Some((D128, ATTENTION_D128)),
        256 => Some((D256, ATTENTION_D256)),
        _ => None,
    }
}

/// The configuration and spec of a call: [`config_for`], except d = 64:
/// with `three_warpgroups` [`D64_W3`] (causal or not), else with a causal
/// mask or `narrow` [`D64_CAUSAL`] (128-row K/V blocks; `narrow` without a
/// causal mask is for comparisons); `None` if unsupported. (A 176-row
/// d = 128 kernel, FA3's block for non-causal d = 128, spills 32–44 bytes
/// at 240 registers: Session 10.)
///
/// ```
/// use baton_attention_abi::config_for_call;
/// let (cfg, spec) = config_for_call(64, true, false, false).unwrap();
/// assert_eq!((cfg.block_n, spec.name), (128, "baton_attention_fwd_d64_causal"));
/// assert_eq!(config_for_call(64, false, false, false).unwrap().0.block_n, 176);
/// assert_eq!(config_for_call(64, false, true, false).unwrap().0.block_n, 128);
/// assert_eq!(config_for_call(64, true, false, true).unwrap().0.bm(), 192);
/// assert_eq!(config_for_call(128, false, false, true).unwrap().0.block_n, 128);
/// assert_eq!(config_for_call(128, true, false, false).unwrap().1.name, "baton_attention_fwd_d128_causal");
/// ```
pub const fn config_for_call(
    head_dim: u32,
    causal: bool,
    narrow: bool,
    three_warpgroups: bool,
) -> Option<(HeadDimConfig, KernelSpec<AttentionParams>)> {
    if head_dim == 64 && three_warpgroups {
        return Some((D64_W3, ATTENTION_D64_W3));
    }
    if head_dim == 64 && (causal || narrow) {
        return Some((D64_CAUSAL, ATTENTION_D64_CAUSAL));
    }
    if head_dim == 128 && causal {
        return Some((D128_CAUSAL, ATTENTION_D128_CAUSAL));
    }
    config_for(head_dim)
}
