//! baton's FlashAttention-style forward kernels for sm_90a, one entry per
//! head dimension (64, 128, 256), written on baton's public API: the ABI
//! (parameters, payloads, shared layout, specs) is `baton-attention-abi`;
//! the CTA program is [`fwd`](mod@fwd) (on the thread of
//! [`thread`](mod@thread)), the per-K/V-block softmax step on
//! plain fragments [`softmax`](mod@softmax), its per-thread math
//! [`math`](mod@math), the first GEMM's `wgmma` shapes [`qk`](mod@qk)
//! and the second GEMM's [`pv`](mod@pv). The crate builds for nvptx64
//! only; `attention/abi/tests/cpu_fwd.rs` compiles the same files on the
//! host and runs the CTA program on baton's CPU backend.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![warn(missing_docs)]

#[cfg(target_arch = "nvptx64")]
pub mod fwd;
#[cfg(target_arch = "nvptx64")]
pub mod math;
#[cfg(target_arch = "nvptx64")]
pub mod pv;
#[cfg(target_arch = "nvptx64")]
pub mod qk;
#[cfg(target_arch = "nvptx64")]
pub mod softmax;
#[cfg(target_arch = "nvptx64")]
pub mod thread;

use baton_attention_abi::{
    ATTENTION_D64, ATTENTION_D64_CAUSAL, ATTENTION_D64_W3, ATTENTION_D128, ATTENTION_D128_CAUSAL,
    ATTENTION_D256, AttentionParams, D64, D64_CAUSAL, D64_W3, D128, D128_CAUSAL, D256,
};

// Each entry's `fwd::run` instantiation is its ABI configuration (the
// host launches by the configuration), and its roles' registers fit the
// CTA's pool (`setmaxnreg.inc` would hang).
const _: () =
    assert!(D64.is_instance(1, 176, 3, 3, 2, 2, true, false) && D64.registers_fit(40, 232));
const _: () = assert!(D64_CAUSAL.is_instance(1, 128, 3, 3, 2, 2, true, true));
const _: () = assert!(D64_CAUSAL.registers_fit(40, 232));
const _: () =
    assert!(D64_W3.is_instance(1, 80, 3, 3, 3, 3, true, false) && D64_W3.registers_fit(32, 160));
const _: () =
    assert!(D128.is_instance(2, 128, 3, 2, 3, 2, true, false) && D128.registers_fit(40, 232));
const _: () = assert!(D128_CAUSAL.is_instance(2, 128, 3, 2, 3, 2, true, true));
const _: () =
    assert!(D256.is_instance(4, 64, 2, 2, 2, 2, false, false) && D256.registers_fit(24, 240));

baton::kernel! {
    #[spec(ATTENTION_D64)]
    /// Attention forward, head dimension 64 (see `baton_attention_abi`).
    pub fn baton_attention_fwd_d64(p: AttentionParams) {
        fwd::run::<1, 176, 3, 3, 2, 2, 88, 32, 44, 40, 232, true, 0, false, false, qk::QkN176, pv::PvN64>(&p);
    }
}

baton::kernel! {
    #[spec(ATTENTION_D64_CAUSAL)]
    /// Attention forward, head dimension 64, causal calls (128-row K/V blocks).
    pub fn baton_attention_fwd_d64_causal(p: AttentionParams) {
        fwd::run::<
            1,
            128,
            3,
            3,
            2,
            2,
            64,
            32,
            32,
            40,
            232,
            true,
            0,
            false,
            true,
            qk::QkN128,
            pv::PvN64,
        >(&p);
    }
}

baton::kernel! {
    #[spec(ATTENTION_D64_W3)]
    /// Attention forward, head dimension 64, on three consumer warpgroups
    /// (192-row query tiles, 80-row K/V blocks; causal or not).
    pub fn baton_attention_fwd_d64_w3(p: AttentionParams) {
        fwd::run::<
            1,
            80,
            3,
            3,
            3,
            3,
            40,
            32,
            20,
            32,
            160,
            true,
            0,
            false,
            false,
            qk::QkN80,
            pv::PvN64,
        >(&p);
    }
}

baton::kernel! {
    #[spec(ATTENTION_D128)]
    /// Attention forward, head dimension 128.
    pub fn baton_attention_fwd_d128(p: AttentionParams) {
        fwd::run::<2, 128, 3, 2, 3, 2, 64, 64, 32, 40, 232, true, 0, false, false, qk::QkN128, pv::PvN128>(&p);
    }
}

baton::kernel! {
    #[spec(ATTENTION_D128_CAUSAL)]
    /// Attention forward, head dimension 128, causal calls (planned).
    pub fn baton_attention_fwd_d128_causal(p: AttentionParams) {
        fwd::run::<2, 128, 3, 2, 3, 2, 64, 64, 32, 40, 232, true, 0, false, true, qk::QkN128, pv::PvN128>(&p);
    }
}

baton::kernel! {
    #[spec(ATTENTION_D256)]
    /// Attention forward, head dimension 256.
    pub fn baton_attention_fwd_d256(p: AttentionParams) {
        fwd::run::<4, 64, 2, 2, 2, 2, 32, 128, 16, 24, 240, false, 0, true, false, qk::QkN64, pv::PvN256>(&p);
    }
}

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    baton::arch::ptx::trap()
}
