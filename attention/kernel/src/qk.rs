//! The `wgmma` shapes of S = Q·Kᵀ: Q and K K-major in shared memory
//! (SS), N = the K/V block's rows. Named through `baton::arch::wgmma`, so
//! the same role code issues the PTX instruction on sm_90a and the CPU
//! simulation on the host (`attention/abi/tests/cpu_fwd.rs`).

use baton::arch::wgmma::ops::{
    mma_m64n64k16_f32_bf16, mma_m64n80k16_f32_bf16, mma_m64n128k16_f32_bf16,
    mma_m64n176k16_f32_bf16,
};

/// One SS `wgmma` shape: a warpgroup's 64 × N fp32 block of S, `ACC = N / 2`
/// registers per thread, K = 16.
///
/// ```ignore
/// // SAFETY: all 128 threads of the warpgroup issue it; Q and K are loaded.
/// unsafe { QkN128::mma(&mut s, q_desc, k_desc, kk > 0) };
/// ```
pub trait QkMma<const ACC: usize> {
    /// Issues one `wgmma.mma_async` (no fence, no commit);
    /// `accumulate == false` overwrites `acc`.
    ///
    /// # Safety
    /// As [`mma_m64n128k16_f32_bf16`].
    unsafe fn mma(acc: &mut [f32; ACC], a: u64, b: u64, accumulate: bool);
}

/// N = 64: the d = 256 kernel's 64-row K/V block.
///
/// ```ignore
/// let mut s = [0f32; 32];
/// // SAFETY: all 128 threads of the warpgroup issue it; Q and K are loaded.
/// unsafe { QkN64::mma(&mut s, q_desc, k_desc, false) };
/// ```
pub struct QkN64;
/// N = 80: the three-warpgroup d = 64 kernel's K/V block.
///
/// ```ignore
/// let mut s = [0f32; 40];
/// // SAFETY: all 128 threads of the warpgroup issue it; Q and K are loaded.
/// unsafe { QkN80::mma(&mut s, q_desc, k_desc, false) };
/// ```
pub struct QkN80;
/// N = 128: the 128-row K/V block (d = 128; d = 64 causal).
///
/// ```ignore
/// let mut s = [0f32; 64];
/// // SAFETY: all 128 threads of the warpgroup issue it; Q and K are loaded.
/// unsafe { QkN128::mma(&mut s, q_desc, k_desc, false) };
/// ```
pub struct QkN128;
/// N = 176: the d = 64 kernel's K/V block.
///
/// ```ignore
/// let mut s = [0f32; 88];
/// // SAFETY: all 128 threads of the warpgroup issue it; Q and K are loaded.
/// unsafe { QkN176::mma(&mut s, q_desc, k_desc, false) };
/// ```
pub struct QkN176;

impl QkMma<32> for QkN64 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 32], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n64k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl QkMma<40> for QkN80 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 40], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n80k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl QkMma<64> for QkN128 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 64], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n128k16_f32_bf16(acc, a, b, accumulate) }
    }
}
impl QkMma<88> for QkN176 {
    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 88], a: u64, b: u64, accumulate: bool) {
        // SAFETY: forwarded.
        unsafe { mma_m64n176k16_f32_bf16(acc, a, b, accumulate) }
    }
}
