//! Parameter structs of the Hopper GEMMs (BF16 and blockwise-scaled FP8),
//! shared by every tile configuration of each.

use baton::kernel::KernelParams;

/// An encoded tensor map passed by value in a kernel's parameters: the
/// driver's 128 opaque `CUtensorMap` bytes. TMA needs it 64-byte aligned:
/// the parameter structs put their maps first (offsets multiples of 128,
/// checked at compile time), and `baton-build` declares every entry's
/// parameter `.param .align 64` (rustc's nvptx ABI cannot pass a struct
/// aligned above 16 bytes, so the Rust type is `align(16)`). The kernel
/// points TMA at it in the parameter space through
/// `baton::entry_param_address!` (the counterpart of CUDA C++'s
/// `__grid_constant__ const CUtensorMap`), so launches need no device
/// memory for their maps and a CUDA graph captures them with the launch.
///
/// ```
/// use baton_kernels_abi::gemm_params::TensorMapParam;
/// assert_eq!((size_of::<TensorMapParam>(), align_of::<TensorMapParam>()), (128, 16));
/// assert_eq!(TensorMapParam::UNUSED.bytes, [0; 128]);
/// ```
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapParam {
    /// The encoded map (`cuTensorMapEncodeTiled`'s output).
    pub bytes: [u8; 128],
}

impl TensorMapParam {
    /// All zeros: a map the kernel never reads.
    pub const UNUSED: TensorMapParam = TensorMapParam { bytes: [0; 128] };
}

/// The stream-K workspace a Hopper GEMM takes, and the launch's stream-K
/// schedule as the host computed it: `schedule` is
/// `StreamKSchedule::launch_words` of
/// `StreamKSchedule::with_extra_waves(units, k_blocks, workers, ..)` for
/// this launch's units, K blocks and workers (the kernel rebuilds it with
/// `StreamKSchedule::from_launch_words`, without dividing). With
/// `schedule[1] == 0` (no stream-K workers: [`OFF`](Self::OFF)) stream-K is
/// off and the pointers are never touched (may be null).
///
/// ```
/// let sk = baton_kernels_abi::gemm_params::StreamKParams::OFF;
/// assert_eq!(sk.schedule, [0; 4]);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StreamKParams {
    /// `2 · grid · BM · BN` floats of partial accumulators.
    pub partials: *mut f32,
    /// `2 · grid` flags (zeroed once).
    pub flags: *mut u32,
    /// Differs from the previous launch's on these buffers (≠ 0).
    pub epoch: u32,
    /// `[dp_units, sk_workers, sk_base, sk_extra | splits << 16]`
    /// (`StreamKSchedule::launch_words`); all 0: stream-K off.
    pub schedule: [u32; 4],
}

impl StreamKParams {
    /// Stream-K off.
    pub const OFF: StreamKParams = StreamKParams {
        partials: core::ptr::null_mut(),
        flags: core::ptr::null_mut(),
        epoch: 0,
        schedule: [0; 4],
    };
}

/// Parameters of the BF16 GEMMs: `D = alpha·A·Bᵀ + beta·C`, for `batch`
/// matrices in one launch (strided batched GEMM). The tensor maps travel
/// by value ([`TensorMapParam`], first, at 64-byte aligned offsets), all
/// rank 3 (dims {columns, rows, batch}): 720 bytes.
///
/// ```
/// use baton_kernels_abi::gemm_params::{GemmBf16Params, StreamKParams, TensorMapParam};
/// let p = GemmBf16Params {
///     tma_a: TensorMapParam::UNUSED, tma_b: TensorMapParam::UNUSED,
///     tma_c: TensorMapParam::UNUSED, tma_d: TensorMapParam::UNUSED,
///     tma_a_tail: TensorMapParam::UNUSED,
///     m: 4096, n: 4096, k: 4096, group_m: 8, alpha: 1.0, beta: 0.0,
///     stream_k: StreamKParams::OFF, tail_rows: 0, batch: 1, batch_broadcast: 0,
/// };
/// assert_eq!((size_of::<GemmBf16Params>(), p.tail_rows), (720, 0));
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GemmBf16Params {
    /// A: bf16, dims {K, M, batch}, box {64, 128, 1}, 128-byte swizzle.
    pub tma_a: TensorMapParam,
    /// B: bf16, dims {K, N, batch}, box {64, BN, 1}, 128-byte swizzle.
    pub tma_b: TensorMapParam,
    /// C: bf16, dims {N, M, batch}, box {32, 64, 1}, 64-byte swizzle (read only when `beta ≠ 0`).
    pub tma_c: TensorMapParam,
    /// D: as C.
    pub tma_d: TensorMapParam,
    /// A with a box of `tail_rows` rows (read only when `tail_rows ≠ 0`).
    pub tma_a_tail: TensorMapParam,
    /// Rows of A, C, D.
    pub m: u32,
    /// Rows of B, columns of C, D.
    pub n: u32,
    /// Reduction length.
    pub k: u32,
    /// Cluster-unit rows per rasterization group (≥ 1).
    pub group_m: u32,
    /// Scale of the product.
    pub alpha: f32,
    /// Scale of C.
    pub beta: f32,
    /// Stream-K workspace.
    pub stream_k: StreamKParams,
    /// `M mod 128`.
    pub tail_rows: u32,
    /// Matrices in this launch (≥ 1): work units are `batch` × the tiles
    /// of one matrix, matrix `b` at coordinate `b` of the maps' third
    /// dimension.
    pub batch: u32,
    /// Inputs shared by the whole batch ([`BROADCAST_A`] | [`BROADCAST_B`]
    /// | [`BROADCAST_C`]): read at batch coordinate 0 (their maps have a
    /// batch dimension of 1: TMA refuses a zero stride).
    pub batch_broadcast: u32,
}
// SAFETY: repr(C) of tensor-map bytes, numbers and a repr(C) struct of
// raw pointers and numbers.
unsafe impl KernelParams for GemmBf16Params {}

/// [`GemmBf16Params::batch_broadcast`] bit: one A for the whole batch.
pub const BROADCAST_A: u32 = 1;
/// [`GemmBf16Params::batch_broadcast`] bit: one B for the whole batch.
pub const BROADCAST_B: u32 = 2;
/// [`GemmBf16Params::batch_broadcast`] bit: one C for the whole batch.
pub const BROADCAST_C: u32 = 4;

/// Parameters of the blockwise-scaled FP8 GEMMs (e4m3; 1×128 A scales,
/// 128×128 B scales). The tensor maps travel by value
/// ([`TensorMapParam`]).
///
/// ```
/// use baton_kernels_abi::gemm_params::{GemmFp8Params, StreamKParams, TensorMapParam};
/// let p = GemmFp8Params {
///     tma_a: TensorMapParam::UNUSED, tma_b: TensorMapParam::UNUSED,
///     tma_sa: TensorMapParam::UNUSED, tma_d: TensorMapParam::UNUSED,
///     tma_a_tail: TensorMapParam::UNUSED, tma_sa_tail: TensorMapParam::UNUSED,
///     b_scales: core::ptr::null(),
///     m: 128, n: 7168, k: 16384, tail_rows: 0, sa_ld: 128, stream_k: StreamKParams::OFF,
///     d: core::ptr::null_mut(), d_ld: 7168,
/// };
/// assert_eq!(p.k % 128, 0);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GemmFp8Params {
    /// A: u8, dims {K, M}, box {128, BM}, 128-byte swizzle.
    pub tma_a: TensorMapParam,
    /// B: u8, dims {K, N}, box {128, BN}, 128-byte swizzle.
    pub tma_b: TensorMapParam,
    /// A scales `[K/128][sa_ld]` read as one vector: f32, dims
    /// {(K/128 − 1)·sa_ld + M, 1}, box {132, 1} (one 128-row box of
    /// `BlockwiseFP8PaddedTilePayload`).
    pub tma_sa: TensorMapParam,
    /// D: bf16, dims {N, M}, box {32, 64}, 64-byte swizzle.
    pub tma_d: TensorMapParam,
    /// A with a box of `tail_rows` rows (read only when `tail_rows ≠ 0`).
    pub tma_a_tail: TensorMapParam,
    /// The A-scale vector with the box of the last tile row's partial
    /// 128-row box: `a_scale_box_floats(tail_rows mod 128)` floats (read
    /// only when that is not 0).
    pub tma_sa_tail: TensorMapParam,
    /// `⌈N/128⌉ · K/128` f32 B scales in global memory.
    pub b_scales: *const f32,
    /// Rows of A, D.
    pub m: u32,
    /// Rows of B, columns of D.
    pub n: u32,
    /// Reduction length (a positive multiple of 128).
    pub k: u32,
    /// `M mod BM`.
    pub tail_rows: u32,
    /// Floats between the A scales of consecutive K blocks (`≥ M`; any
    /// value: the scales are read as one vector).
    pub sa_ld: u32,
    /// Stream-K workspace.
    pub stream_k: StreamKParams,
    /// D's base address (the matrix `tma_d` describes), for the columns a
    /// tile holds past its last whole 32-column epilogue sub-tile (widths
    /// that are not multiples of 32: 256×88), which the kernel stores
    /// from registers; the other kernels never read it.
    pub d: *mut u16,
    /// Elements between D's rows (`tma_d`'s row stride / 2).
    pub d_ld: u32,
}
// SAFETY: repr(C) of tensor-map bytes, raw pointers, numbers and a
// repr(C) struct of raw pointers and numbers.
unsafe impl KernelParams for GemmFp8Params {}

// TMA reads the by-value maps in place: each at a 64-byte aligned offset of
// the (64-byte aligned) parameter.
const _: () = {
    use core::mem::offset_of;
    let offsets = [
        offset_of!(GemmBf16Params, tma_a),
        offset_of!(GemmBf16Params, tma_b),
        offset_of!(GemmBf16Params, tma_c),
        offset_of!(GemmBf16Params, tma_d),
        offset_of!(GemmBf16Params, tma_a_tail),
        offset_of!(GemmFp8Params, tma_a),
        offset_of!(GemmFp8Params, tma_b),
        offset_of!(GemmFp8Params, tma_sa),
        offset_of!(GemmFp8Params, tma_d),
        offset_of!(GemmFp8Params, tma_a_tail),
        offset_of!(GemmFp8Params, tma_sa_tail),
    ];
    let mut i = 0;
    while i < offsets.len() {
        assert!(
            offsets[i] % 64 == 0,
            "a by-value tensor map is not 64-byte aligned"
        );
        i += 1;
    }
};
