//! The `wgmma` shared-memory descriptors of every input stage's A and B
//! tiles, derived from stage 0's by the stage index.

use baton::arch::ptx::wgmma::{
    SmemLayout, SplitDescriptor, descriptor_k_major, descriptor_mn_major,
};

/// Bytes of one 64 × 64 bf16 TMA box with 128-byte rows (64 rows of K, 64
/// elements of M or N each): an MN-major tile is a row of such boxes along
/// M or N, each box one 128-byte-swizzle atom column.
pub const MN_BOX_BYTES: u32 = 64 * 128;

/// The `wgmma` descriptors (K-major, 128-byte swizzle) of the A and B tiles
/// of every input stage, derived from stage 0's by the stage index: one
/// multiply-add per operand in the main loop instead of re-encoding each
/// stage's addresses (shift, mask, or).
///
/// ```ignore
/// let st0 = input.stage(0);
/// let descs = StageDescriptors::new(
///     smem_field!(st0, Stage, a).addr() + wg * 64 * 128,
///     smem_field!(st0, Stage, b).addr(),
///     core::mem::size_of::<Stage>() as u32,
/// );
/// let (da, db) = descs.at(stage.index());
/// ```
#[derive(Clone, Copy)]
pub struct StageDescriptors {
    a0: SplitDescriptor,
    b0: SplitDescriptor,
    /// Stage stride in 16-byte units.
    stage_units: u32,
}

impl StageDescriptors {
    /// Descriptors of stage 0's A tile at `a0` and B tile at `b0` (shared
    /// addresses), stages `stage_bytes` apart (a multiple of 16; the stages
    /// lie below 256 KiB, so the start-address field never overflows: see
    /// `SplitDescriptor::advance`).
    ///
    /// ```ignore
    /// let descs = StageDescriptors::new(a0, b0, stage_bytes);
    /// ```
    #[inline(always)]
    pub fn new(a0: u32, b0: u32, stage_bytes: u32) -> Self {
        Self {
            a0: SplitDescriptor::new(descriptor_k_major(a0, SmemLayout::Swizzle128B)),
            b0: SplitDescriptor::new(descriptor_k_major(b0, SmemLayout::Swizzle128B)),
            stage_units: stage_bytes / 16,
        }
    }

    /// Descriptors of stage 0's A and B tiles (as [`new`](Self::new)) where
    /// A (`a_mn_major`) and/or B (`b_mn_major`) may be MN-major: such a
    /// tile is a row of 64 × 64 boxes ([`MN_BOX_BYTES`] apart, each 64 K
    /// rows of 128 bytes, 128-byte swizzle), described by
    /// `descriptor_mn_major` with the boxes as MN atoms and 8-row K groups
    /// 1024 bytes apart; the `wgmma` then needs the operand's transpose bit.
    /// With both false this is [`new`](Self::new).
    ///
    /// ```ignore
    /// let descs = StageDescriptors::with_layouts(a0, b0, stage_bytes, true, false);
    /// ```
    #[inline(always)]
    pub fn with_layouts(
        a0: u32,
        b0: u32,
        stage_bytes: u32,
        a_mn_major: bool,
        b_mn_major: bool,
    ) -> Self {
        let desc = |addr: u32, mn_major: bool| {
            if mn_major {
                descriptor_mn_major(addr, SmemLayout::Swizzle128B, MN_BOX_BYTES, 1024)
            } else {
                descriptor_k_major(addr, SmemLayout::Swizzle128B)
            }
        };
        Self {
            a0: SplitDescriptor::new(desc(a0, a_mn_major)),
            b0: SplitDescriptor::new(desc(b0, b_mn_major)),
            stage_units: stage_bytes / 16,
        }
    }

    /// (A, B) descriptors of stage `stage`, a constant at the call (one
    /// arm per stage of a `match` on the stage index): each is the stage-0
    /// descriptor plus an immediate, the stage-0 half passed through an
    /// opaque register move first ([`pinned`]) so that LLVM computes it in
    /// the arm instead of hoisting every stage's descriptors out of the
    /// loop into registers (2 × 4 per stage: 128x128_db then spilled 52
    /// bytes). With a warp-uniform stage 0, ptxas builds them on the
    /// uniform datapath (`UIADD3` off the stage-0 uniform registers, at most
    /// one `R2UR` per operand), where the per-thread stage index of
    /// [`at`](Self::at) costs an `IMAD` and an `R2UR` per 32-bit half of
    /// each of the K block's descriptors.
    ///
    /// ```ignore
    /// let (da, db) = match consumer.index() { 0 => descs.at_pinned(0), 1 => descs.at_pinned(1), _ => unreachable!() };
    /// ```
    #[inline(always)]
    pub fn at_pinned(self, stage: u32) -> (SplitDescriptor, SplitDescriptor) {
        let units = stage * self.stage_units;
        (
            SplitDescriptor {
                lo: pinned(self.a0.lo).wrapping_add(units),
                hi: self.a0.hi,
            },
            SplitDescriptor {
                lo: pinned(self.b0.lo).wrapping_add(units),
                hi: self.b0.hi,
            },
        )
    }

    /// (A, B) descriptors of stage `stage`.
    ///
    /// ```ignore
    /// let (da, db) = descs.at(stage.index());
    /// ```
    #[inline(always)]
    pub fn at(self, stage: u32) -> (SplitDescriptor, SplitDescriptor) {
        let units = stage * self.stage_units;
        (self.a0.advance_units(units), self.b0.advance_units(units))
    }
}

/// `x`, kept where the call is ([`baton::arch::ptx::opaque`] on the GPU;
/// see [`StageDescriptors::at_pinned`]); the value itself on the host.
///
/// ```ignore
/// let lo = pinned(a0.lo).wrapping_add(3 * stage_units);
/// ```
#[inline(always)]
fn pinned(x: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        baton::arch::ptx::opaque(x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x
    }
}
