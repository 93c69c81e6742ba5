//! Simulated typed `wgmma.mma_async` BF16 shapes, with the names and
//! signatures of the generated PTX wrappers (`ptx::wgmma::ops`); see the
//! [parent module](super) for the CPU conventions. The FP8 shapes are not
//! simulated.

/// One SS shape: both operands K-major shared-memory descriptors.
macro_rules! ss_shape {
    ($name:ident, $n:literal, $acc:literal) => {
        #[doc = concat!("`wgmma.mma_async.sync.aligned.m64n", $n, "k16.f32.bf16.bf16`, simulated: bf16 × bf16 → f32, K = 16;")]
        #[doc = concat!("this thread's ", $acc, " accumulators of the warpgroup's 64×", $n, " tile.")]
        /// `a` and `b` are K-major shared-memory descriptors; `accumulate ==
        /// false` overwrites `acc` (scale-d = 0).
        ///
        /// # Safety
        /// As on the GPU: issued by all 128 threads of a simulated warpgroup
        /// ([`run_warpgroup`](super::run_warpgroup)); the descriptors name
        /// initialized shared memory of the calling CTA that nobody writes
        /// while the MMA reads it (it panics outside the CTA's window).
        ///
        /// ```
        /// use baton::arch::cpu::{CpuBlock, wgmma};
        /// use baton::arch::wgmma::{SmemLayout, descriptor_k_major};
        #[doc = concat!("let block = CpuBlock::new([0x3F80u16; (64 + ", $n, ") * 64]); // bf16 1.0")]
        /// block.run_warps(1, |_warp, _smem| {
        ///     wgmma::run_warpgroup(|_tid| {
        #[doc = concat!("        let mut acc = [0f32; ", $acc, "];")]
        ///         let a = descriptor_k_major(0, SmemLayout::Swizzle128B);
        ///         let b = descriptor_k_major(64 * 128, SmemLayout::Swizzle128B);
        ///         // SAFETY: all 128 threads issue it; the block's memory is initialized.
        #[doc = concat!("        unsafe { wgmma::ops::", stringify!($name), "(&mut acc, a, b, false) };")]
        ///         assert!(acc.iter().all(|&d| d == 16.0));
        ///     });
        /// });
        /// ```
        pub unsafe fn $name(acc: &mut [f32; $acc], a: u64, b: u64, accumulate: bool) {
            super::mma_ss(stringify!($name), acc, a, b, accumulate)
        }
    };
}

/// One RS shape: A from registers, B an MN-major descriptor.
macro_rules! rs_shape {
    ($name:ident, $n:literal, $acc:literal) => {
        #[doc = concat!("`wgmma.mma_async.sync.aligned.m64n", $n, "k16.f32.bf16.bf16` with A from registers and B")]
        /// MN-major (`imm-trans-b = 1`), simulated: `a` is this thread's
        /// four registers of A's fragment (bf16 pairs, see the parent
        /// module), `b` B's descriptor; `accumulate == false` overwrites
        /// `acc`.
        ///
        /// # Safety
        /// As on the GPU: issued by all 128 threads of a simulated warpgroup
        /// ([`run_warpgroup`](super::run_warpgroup)) with the same `b`; it
        /// names initialized shared memory of the calling CTA that nobody
        /// writes while the MMA reads it.
        ///
        /// ```
        /// use baton::arch::cpu::{CpuBlock, wgmma};
        /// use baton::arch::wgmma::{SmemLayout, descriptor_mn_major};
        /// // B: N/64 atoms of 16 K-rows × 64 columns (128 bytes).
        #[doc = concat!("let block = CpuBlock::new([0x3F80u16; ", $n, " * 16]); // bf16 1.0")]
        /// block.run_warps(1, |_warp, _smem| {
        ///     wgmma::run_warpgroup(|_tid| {
        #[doc = concat!("        let mut acc = [0f32; ", $acc, "];")]
        ///         let b = descriptor_mn_major(0, SmemLayout::Swizzle128B, 16 * 128, 1024);
        ///         // SAFETY: all 128 threads issue it with the same B.
        #[doc = concat!("        unsafe { wgmma::ops::", stringify!($name), "(&mut acc, [0x3F80_3F80; 4], b, false) };")]
        ///         assert!(acc.iter().all(|&d| d == 16.0));
        ///     });
        /// });
        /// ```
        pub unsafe fn $name(acc: &mut [f32; $acc], a: [u32; 4], b: u64, accumulate: bool) {
            super::mma_rs_bt(stringify!($name), acc, a, b, accumulate)
        }
    };
}

ss_shape!(mma_m64n256k16_f32_bf16, 256, 128);
ss_shape!(mma_m64n224k16_f32_bf16, 224, 112);
ss_shape!(mma_m64n192k16_f32_bf16, 192, 96);
ss_shape!(mma_m64n176k16_f32_bf16, 176, 88);
ss_shape!(mma_m64n160k16_f32_bf16, 160, 80);
ss_shape!(mma_m64n80k16_f32_bf16, 80, 40);
ss_shape!(mma_m64n128k16_f32_bf16, 128, 64);
ss_shape!(mma_m64n64k16_f32_bf16, 64, 32);
rs_shape!(mma_rs_m64n256k16_f32_bf16_bt, 256, 128);
rs_shape!(mma_rs_m64n128k16_f32_bf16_bt, 128, 64);
rs_shape!(mma_rs_m64n64k16_f32_bf16_bt, 64, 32);
