//! `wgmma` shapes of S = Q·Kᵀ that the kernel roles' table
//! (`baton_kernel_roles::sm90::mainloop_bf16`) does not have: N = 176, the
//! d = 64 kernel's K/V block.

use baton::arch::ptx::wgmma::ops::mma_m64n176k16_f32_bf16;
use baton_kernel_roles::sm90::mainloop_bf16::Bf16Mma;

/// `wgmma.m64n176k16` bf16 (88 accumulators).
pub struct Bf16N176;

impl Bf16Mma<88> for Bf16N176 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 88], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n176k16_f32_bf16(acc, a, b, accumulate) }
    }
}
