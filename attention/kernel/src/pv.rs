//! The `wgmma` shapes of O += P·V: P (64 × 16 per step) from registers, V
//! N-major in shared memory, N = the head dimension.

use baton::arch::wgmma::ops::{
    mma_rs_m64n64k16_f32_bf16_bt, mma_rs_m64n128k16_f32_bf16_bt, mma_rs_m64n256k16_f32_bf16_bt,
};

/// One RS `wgmma` shape: a warpgroup's 64 × N fp32 block, `ACC = N / 2`
/// registers per thread, K = 16.
pub trait PvMma<const ACC: usize> {
    /// Issues one `wgmma.mma_async` (no fence, no commit).
    ///
    /// # Safety
    /// As [`mma_rs_m64n128k16_f32_bf16_bt`].
    unsafe fn mma(acc: &mut [f32; ACC], a: [u32; 4], b: u64);
}

/// N = 64 (head dimension 64).
pub struct PvN64;
/// N = 128.
pub struct PvN128;
/// N = 256.
pub struct PvN256;

impl PvMma<32> for PvN64 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 32], a: [u32; 4], b: u64) {
        // SAFETY: forwarded.
        unsafe { mma_rs_m64n64k16_f32_bf16_bt(acc, a, b, true) }
    }
}
impl PvMma<64> for PvN128 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 64], a: [u32; 4], b: u64) {
        // SAFETY: forwarded.
        unsafe { mma_rs_m64n128k16_f32_bf16_bt(acc, a, b, true) }
    }
}
impl PvMma<128> for PvN256 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 128], a: [u32; 4], b: u64) {
        // SAFETY: forwarded.
        unsafe { mma_rs_m64n256k16_f32_bf16_bt(acc, a, b, true) }
    }
}
