//! The problem's shape and layout, and the checks made before a launch.

use crate::error::{AttentionError, Dim, TensorName};
use baton_attention_abi::{HEAD_DIMS, HeadDimConfig, config_for};

/// Sizes of one attention call.
///
/// ```
/// let s = baton_attention::AttentionShape { batch: 2, seq_q: 100, seq_kv: 300, q_heads: 8, kv_heads: 1, head_dim: 128 };
/// assert_eq!(s.flops(false), 4.0 * 2.0 * 8.0 * 100.0 * 300.0 * 128.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttentionShape {
    /// Batch entries.
    pub batch: usize,
    /// Query rows per head.
    pub seq_q: usize,
    /// Key/value rows per head.
    pub seq_kv: usize,
    /// Query heads.
    pub q_heads: usize,
    /// Key/value heads (divides `q_heads`).
    pub kv_heads: usize,
    /// Head dimension (64, 128 or 256).
    pub head_dim: usize,
}

impl AttentionShape {
    /// Floating-point operations of the two GEMMs, `4·b·h·sq·skv·d`, halved
    /// when `causal` (the convention of FlashAttention's and PyTorch's
    /// benchmarks).
    pub fn flops(&self, causal: bool) -> f64 {
        let f = 4.0
            * self.batch as f64
            * self.q_heads as f64
            * self.seq_q as f64
            * self.seq_kv as f64
            * self.head_dim as f64;
        if causal { f / 2.0 } else { f }
    }
}

/// Element strides of a `[batch, seq, heads, head_dim]`-indexed tensor whose
/// head dimension is contiguous: element `(b, s, h, d)` is at `b·batch +
/// s·seq + h·head + d`.
///
/// ```
/// use baton_attention::Strides;
/// assert_eq!(Strides::bshd(10, 4, 64), Strides { batch: 2560, seq: 256, head: 64 });
/// assert_eq!(Strides::bhsd(10, 4, 64), Strides { batch: 2560, seq: 64, head: 640 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strides {
    /// Between batch entries.
    pub batch: usize,
    /// Between sequence rows.
    pub seq: usize,
    /// Between heads.
    pub head: usize,
}

impl Strides {
    /// Contiguous `[batch, seq, heads, d]` (FlashAttention's layout).
    pub fn bshd(seq: usize, heads: usize, d: usize) -> Self {
        Self {
            batch: seq * heads * d,
            seq: heads * d,
            head: d,
        }
    }
    /// Contiguous `[batch, heads, seq, d]` (PyTorch SDPA's layout).
    pub fn bhsd(seq: usize, heads: usize, d: usize) -> Self {
        Self {
            batch: heads * seq * d,
            seq: d,
            head: seq * d,
        }
    }
}

/// How the two consumer warpgroups of a CTA issue their `wgmma`s.
///
/// ```
/// assert_eq!(baton_attention::Schedule::default(), baton_attention::Schedule::PingPong);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// Each as soon as its operands are ready.
    Free,
    /// In turns (FA3's ping-pong: one's softmax runs under the other's
    /// GEMMs), ordered by `baton::ordered_barrier::OrderedBarrier`.
    #[default]
    PingPong,
    /// In turns, ordered by two named barriers (FA3's own mechanism).
    PingPongNamedBarriers,
}

impl Schedule {
    /// The kernel parameter's code (`AttentionParams::pingpong`).
    pub fn code(self) -> u32 {
        match self {
            Schedule::Free => 0,
            Schedule::PingPong => 1,
            Schedule::PingPongNamedBarriers => 2,
        }
    }
}

/// Options of one call.
///
/// ```
/// let o = baton_attention::AttentionOptions::default();
/// assert!(!o.causal && o.scale.is_none() && !o.debug);
/// assert_eq!(o.schedule, baton_attention::Schedule::PingPong);
/// assert_eq!(o.ctas, baton_attention::Ctas::PerSm);
/// assert_eq!(o.kv_block, baton_attention::KvBlock::Auto);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttentionOptions {
    /// Query row `i` attends to key rows `0..=i` only (PyTorch's
    /// `is_causal`: the mask aligned top-left when `seq_q ≠ seq_kv`).
    pub causal: bool,
    /// Score scale; `None`: `1/√head_dim`.
    pub scale: Option<f32>,
    /// Launch the debug PTX (bounded waits that report a hang).
    pub debug: bool,
    /// How the consumer warpgroups take turns (ping-pong by default: faster
    /// on 14 of 16 benchmark shapes, BENCHMARKS.md "Session 8 — attention").
    pub schedule: Schedule,
    /// How many CTAs the launch has (each computes query tiles one after
    /// the other, the next tile's loads overlapping this one's epilogue):
    /// by default one per SM. Non-causal calls stride over the tiles;
    /// causal calls at d = 64 (two warpgroups) and d = 128 follow a plan
    /// made on the host (`schedule::plan`: the unequal tiles, longest
    /// first, each to the CTA with the least work so far); other causal
    /// calls launch one per tile (the hardware dispatches the unequal
    /// tiles more evenly than a static stride). d = 256 always launches
    /// one CTA per tile (`HeadDimConfig::persistent`).
    pub ctas: Ctas,
    /// K/V rows per block at d = 64 (d = 128: always 128; d = 256: 64),
    /// on two consumer warpgroups ([`Warpgroups::Two`]).
    pub kv_block: KvBlock,
    /// Consumer warpgroups of the d = 64 kernels (d = 128, 256: two).
    pub warpgroups: Warpgroups,
}

/// Consumer warpgroups per CTA of the d = 64 kernels.
///
/// ```
/// assert_eq!(baton_attention::Warpgroups::default(), baton_attention::Warpgroups::Two);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Warpgroups {
    /// Two (128-row query tiles; K/V blocks by [`KvBlock`]).
    #[default]
    Two,
    /// Three (FA3's d = 64 CTA: 192-row query tiles, 80-row K/V blocks,
    /// causal or not; for comparisons: on the H100 it measured 1–2 %
    /// slower than two at seq 4k and 8.5 % slower at b16 s1024 causal,
    /// BENCHMARKS.md "Session 11 — ATTN").
    Three,
}

/// K/V rows per block of the d = 64 kernels.
///
/// ```
/// assert_eq!(baton_attention::KvBlock::default(), baton_attention::KvBlock::Auto);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KvBlock {
    /// 176 rows without a causal mask, 128 with one (a wide block
    /// computes more of each diagonal block in vain).
    #[default]
    Auto,
    /// 128 rows whatever the mask (the causal kernels; for comparisons).
    Narrow,
}

/// The launch's CTA count (never more than the work tiles).
///
/// ```
/// use baton_attention::Ctas;
/// assert_eq!(Ctas::default(), Ctas::PerSm);
/// assert_eq!(Ctas::Fixed(core::num::NonZeroU32::new(3).unwrap()).grid(100, 132), 3);
/// assert_eq!(Ctas::PerSm.grid(100, 132), 100);
/// assert_eq!(Ctas::PerTile.grid(1000, 132), 1000);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ctas {
    /// Persistent: one CTA per SM (a CTA fills an SM; causal calls: see
    /// [`AttentionOptions::ctas`]).
    #[default]
    PerSm,
    /// One CTA per work tile (not persistent, no plan; for comparisons).
    PerTile,
    /// This many (tests: several tiles per CTA at small sizes).
    Fixed(core::num::NonZeroU32),
}

impl Ctas {
    /// The grid for `tiles` work tiles on `sm_count` SMs.
    pub fn grid(self, tiles: u32, sm_count: u32) -> u32 {
        match self {
            Ctas::PerSm => tiles.min(sm_count),
            Ctas::PerTile => tiles,
            Ctas::Fixed(n) => tiles.min(n.get()),
        }
    }
}

impl Default for AttentionOptions {
    fn default() -> Self {
        Self {
            causal: false,
            scale: None,
            debug: false,
            schedule: Schedule::PingPong,
            ctas: Ctas::PerSm,
            kv_block: KvBlock::Auto,
            warpgroups: Warpgroups::Two,
        }
    }
}

/// What [`validate`] derived: the head dimension's configuration and the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Block sizes and stages of the head dimension.
    pub config: HeadDimConfig,
    /// The work tiles: `(⌈seq_q/128⌉, q_heads · batch)` (query tiles per
    /// head, heads of all batch entries); the launch's grid is their
    /// product, or the SM count when smaller (persistent CTAs).
    pub grid: (u32, u32),
}

const MAX_STRIDE: usize = 1 << 39;

/// Checks a call before launch: sizes ≥ 1, a supported head dimension,
/// `kv_heads | q_heads`, strides TMA accepts (multiples of 8 elements), and
/// buffers long enough for their shape and strides. `tensors` are `(strides,
/// buffer length in elements)` of Q, K, V, O in that order; `lse_len` the
/// logsumexp buffer's length if there is one.
///
/// ```
/// use baton_attention::{validate, AttentionShape, Strides};
/// let shape = AttentionShape { batch: 2, seq_q: 100, seq_kv: 70, q_heads: 8, kv_heads: 2, head_dim: 64 };
/// let (q, kv) = (Strides::bshd(100, 8, 64), Strides::bhsd(70, 2, 64));
/// let plan = validate(&shape, [(q, 2 * 100 * 8 * 64), (kv, 2 * 70 * 2 * 64), (kv, 2 * 70 * 2 * 64), (q, 2 * 100 * 8 * 64)], Some(2 * 8 * 100)).unwrap();
/// assert_eq!(plan.grid, (1, 16));
/// ```
pub fn validate(
    shape: &AttentionShape,
    tensors: [(Strides, usize); 4],
    lse_len: Option<usize>,
) -> Result<Plan, AttentionError> {
    for (dim, v) in [
        (Dim::Batch, shape.batch),
        (Dim::SeqQ, shape.seq_q),
        (Dim::SeqKv, shape.seq_kv),
        (Dim::QHeads, shape.q_heads),
        (Dim::KvHeads, shape.kv_heads),
        (Dim::HeadDim, shape.head_dim),
    ] {
        if v == 0 {
            return Err(AttentionError::ZeroSize { dim });
        }
    }
    let config = u32::try_from(shape.head_dim)
        .ok()
        .and_then(config_for)
        .map(|(c, _)| c)
        .ok_or(AttentionError::UnsupportedHeadDim {
            head_dim: shape.head_dim,
            supported: HEAD_DIMS,
        })?;
    if !shape.q_heads.is_multiple_of(shape.kv_heads) {
        return Err(AttentionError::KvHeadsNotDividing {
            q_heads: shape.q_heads,
            kv_heads: shape.kv_heads,
        });
    }
    let too_large = |dim, value: usize, max: usize, why| {
        if value > max {
            Err(AttentionError::TooLarge {
                dim,
                value,
                max,
                why,
            })
        } else {
            Ok(())
        }
    };
    let blocks_y = shape.q_heads.saturating_mul(shape.batch);
    too_large(
        Dim::QHeads,
        blocks_y,
        65535,
        "q_heads · batch is a 16-bit work-tile coordinate",
    )?;
    too_large(
        Dim::SeqQ,
        shape.seq_q,
        (i32::MAX as usize / blocks_y) * config.bm() as usize,
        "⌈seq_q/128⌉ · q_heads · batch work tiles, at most 2³¹ − 1",
    )?;
    too_large(Dim::SeqQ, shape.seq_q, 1 << 31, "32-bit row indices")?;
    too_large(Dim::SeqKv, shape.seq_kv, 1 << 31, "32-bit row indices")?;
    let names = [TensorName::Q, TensorName::K, TensorName::V, TensorName::O];
    for (name, (strides, len)) in names.into_iter().zip(tensors) {
        let (seq, heads) = match name {
            TensorName::Q | TensorName::O => (shape.seq_q, shape.q_heads),
            TensorName::K | TensorName::V => (shape.seq_kv, shape.kv_heads),
        };
        for (which, stride) in [
            ("batch", strides.batch),
            ("seq", strides.seq),
            ("head", strides.head),
        ] {
            if !stride.is_multiple_of(8) || stride >= MAX_STRIDE {
                return Err(AttentionError::MisalignedStride {
                    tensor: name,
                    which,
                    stride,
                });
            }
        }
        let needed = (shape.batch - 1) as u128 * strides.batch as u128
            + (seq - 1) as u128 * strides.seq as u128
            + (heads - 1) as u128 * strides.head as u128
            + shape.head_dim as u128;
        if (len as u128) < needed {
            return Err(AttentionError::WrongLength {
                tensor: name,
                len,
                needed: usize::try_from(needed).unwrap_or(usize::MAX),
            });
        }
    }
    if let Some(len) = lse_len {
        let needed = shape.batch * shape.q_heads * shape.seq_q;
        if len != needed {
            return Err(AttentionError::LseWrongLength { len, needed });
        }
    }
    Ok(Plan {
        config,
        grid: (
            shape.seq_q.div_ceil(config.bm() as usize) as u32,
            blocks_y as u32,
        ),
    })
}
