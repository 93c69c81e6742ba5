//! baton's FlashAttention-style forward kernels for sm_90a, one entry per
//! head dimension (64, 128, 256), written on baton's public API: the ABI
//! (parameters, payloads, shared layout, specs) is `baton-attention-abi`;
//! the CTA program is [`fwd`](mod@fwd) (on the thread of
//! [`thread`](mod@thread)), the per-K/V-block softmax step on
//! plain fragments [`softmax`](mod@softmax), its per-thread math
//! [`math`](mod@math), the first GEMM's `wgmma` shapes [`qk`](mod@qk)
//! and the second GEMM's [`pv`](mod@pv). The crate builds for nvptx64
//! only; `attention/abi/tests/cpu_fwd.rs` compiles the same files on the
//! host and runs the CTA program on baton's CPU backend. The entries are
//! listed once, in `entries.rs` (`attention_entries!`: one entry = one
//! kernel, its spec, ABI configuration and `fwd::run` instantiation), which
//! both this crate and `cpu_fwd.rs` expand.
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

#[macro_use]
mod entries;

use baton_attention_abi::{
    ATTENTION_D64, ATTENTION_D64_CAUSAL, ATTENTION_D64_W3, ATTENTION_D128, ATTENTION_D128_CAUSAL,
    ATTENTION_D256, AttentionParams, D64, D64_CAUSAL, D64_W3, D128, D128_CAUSAL, D256,
};

/// Declares each entry of [`attention_entries!`] as a `baton::kernel!`
/// running its `fwd::run` instantiation, and asserts at compile time that
/// the instantiation is the entry's ABI configuration (the host launches by
/// the configuration) and that its roles' registers fit the CTA's pool
/// (`setmaxnreg.inc` would hang).
macro_rules! declare_entries {
    ($($(#[$doc:meta])* $name:ident($spec:ident, $config:ident) = fwd::run::<$nb:literal, $bn:literal, $sk:literal, $sv:literal, $sq:literal, $w:literal, $sacc:literal, $oacc:literal, $pack:literal, $pr:literal, $cr:literal, $persistent:literal, $emu:literal, $early:literal, $plan:literal, $xt:literal, $s:ty, $o:ty>;)*) => {$(
        const _: () = assert!($config.is_instance($nb, $bn, $sk, $sv, $sq, $w, $persistent, $plan, $xt));
        const _: () = assert!($config.registers_fit($pr, $cr));

        baton::kernel! {
            #[spec($spec)]
            $(#[$doc])*
            pub fn $name(p: AttentionParams) {
                fwd::run::<$nb, $bn, $sk, $sv, $sq, $w, $sacc, $oacc, $pack, $pr, $cr, $persistent, $emu, $early, $plan, $xt, $s, $o>(&p);
            }
        }
    )*};
}

attention_entries!(declare_entries);

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    baton::arch::ptx::trap()
}
