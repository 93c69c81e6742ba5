//! The `wgmma` shared-memory descriptors of every input stage's A and B
//! tiles, derived from stage 0's by the stage index.

use baton::arch::ptx::wgmma::{SmemLayout, SplitDescriptor, descriptor_k_major};

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
