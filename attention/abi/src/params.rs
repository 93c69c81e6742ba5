//! The kernel parameter struct, passed by value.

use baton::arch::current::tma::TensorMap;
use baton::kernel::KernelParams;

/// Parameters of the attention kernels ([`ATTENTION_D64`](crate::ATTENTION_D64),
/// …). Tensors are bf16 with the head dimension contiguous; their other
/// strides are free (layouts `[b, s, h, d]` and `[b, h, s, d]` alike), which
/// the tensor maps carry: one rank-3 map per batch entry, dims `{d, seq,
/// heads}`, or `{d, heads, seq}` when the head stride is the smaller one
/// (TMA wants strides that grow with the dimension; [`heads_inner`](Self::heads_inner)),
/// 128-byte swizzle.
///
/// ```
/// let p = baton_attention_abi::AttentionParams {
///     q_maps: core::ptr::null(), k_maps: core::ptr::null(), v_maps: core::ptr::null(),
///     o_maps: core::ptr::null(), lse: core::ptr::null_mut(),
///     seq_q: 1, seq_kv: 1, q_heads: 1, batch_heads: 1, heads_per_section: 1, heads_per_kv_head: 1, causal: 0, heads_inner: 0, pingpong: 0, scale_log2: 1.0,
///     tile_order: core::ptr::null(),
/// };
/// assert_eq!(p.seq_q, 1);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AttentionParams {
    /// Q, `[batch]` maps: dims `{d, seq_q, q_heads}`, box `{64, 64, 1}` (or
    /// heads and seq swapped, see [`heads_inner`](Self::heads_inner)).
    pub q_maps: *const TensorMap,
    /// K, `[batch]` maps: dims `{d, seq_kv, kv_heads}`, box `{64, block_n, 1}`.
    pub k_maps: *const TensorMap,
    /// V, `[batch]` maps: as K.
    pub v_maps: *const TensorMap,
    /// O, `[batch]` maps: as Q (the stores clip at `seq_q`).
    pub o_maps: *const TensorMap,
    /// Null, or the fp32 logsumexp (natural log of the row's softmax
    /// denominator, scores scaled), `[batch, q_heads, seq_q]` contiguous.
    pub lse: *mut f32,
    /// Query rows per head (≥ 1).
    pub seq_q: u32,
    /// Key/value rows per head (≥ 1).
    pub seq_kv: u32,
    /// Query heads.
    pub q_heads: u32,
    /// `batch · q_heads`: work tile `(q_tile, batch_head)` has `batch_head
    /// = batch · q_heads + head` (see [`schedule`](crate::schedule)).
    pub batch_heads: u32,
    /// Heads per causal section of the schedule
    /// ([`schedule::heads_per_section`](crate::schedule::heads_per_section), ≥ 1).
    pub heads_per_section: u32,
    /// Query heads sharing one K/V head (`q_heads / kv_heads`; 1 without GQA).
    pub heads_per_kv_head: u32,
    /// 1: query row `i` attends to key rows `0..=i` (PyTorch's `is_causal`,
    /// the mask aligned top-left); 0: to all.
    pub causal: u32,
    /// Bit `t` set: tensor `t` (0 Q, 1 K, 2 V, 3 O) has its maps' dims in
    /// the order `{d, heads, seq}` (box `{64, 1, rows}`).
    pub heads_inner: u32,
    /// How the two consumer warpgroups issue their `wgmma`s: 0 each as
    /// soon as its operands are ready; 1 in turns (FA3's ping-pong: one's
    /// softmax runs under the other's GEMMs) ordered by baton's
    /// `OrderedBarrier` (mbarriers); 2 in turns ordered by two named
    /// barriers (`bar.sync`/`bar.arrive`, FA3's own mechanism).
    pub pingpong: u32,
    /// `scale · log2(e)`: scores are `exp2`ed after this factor.
    pub scale_log2: f32,
    /// Null: CTA `c` computes work tiles `c, c + grid, …` (the stride
    /// schedule); else a planned schedule in global memory
    /// ([`schedule::plan`](crate::schedule::plan)'s layout: `grid + 1`
    /// offsets, then the tiles of CTA 0, CTA 1, …).
    pub tile_order: *const u32,
}

// SAFETY: repr(C) of raw pointers and numbers, the same layout on host and
// device.
unsafe impl KernelParams for AttentionParams {}
