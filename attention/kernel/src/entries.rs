//! The attention kernel entries, listed once: [`attention_entries!`] is
//! the one source of truth for which kernels exist and how each
//! instantiates `fwd::run`. `lib.rs` declares the PTX entries from it;
//! `attention/abi/tests/cpu_fwd.rs` (which compiles this file on the host)
//! dispatches a spec name to the same instantiation on baton's CPU
//! backend.

/// Lists every attention forward kernel entry and hands the list to the
/// macro `$then`. One entry is one kernel: its doc comment, its name (the
/// PTX entry, and its `KernelSpec`'s `name`), its `KernelSpec` (from
/// `baton_attention_abi`), its `HeadDimConfig` (the ABI configuration the
/// host launches it by), and the `fwd::run` instantiation that is the
/// kernel: `NB` column boxes, `BN` K/V rows, `SK`, `SV`, `SQ` stages, `W`
/// consumer warpgroups, `SACC`, `OACC`, `PACK`, the producer's and the
/// consumers' registers, `PERSISTENT`, `EMU`, `EARLY_RESCALE`, `PLAN`, and
/// the two GEMMs' `wgmma` shapes (`qk::QkN*`, `pv::PvN*`).
///
/// Each entry is
/// `name(SPEC, CONFIG) = fwd::run::<NB, BN, …, S, O>;` and `$then`
/// matches that shape; `lib.rs`'s `declare_entries!` asserts at compile
/// time that the instantiation is `CONFIG` (`HeadDimConfig::is_instance`)
/// and that its roles' registers fit the CTA's pool.
macro_rules! attention_entries {
    ($then:ident) => {
        $then! {
            /// Attention forward, head dimension 64 (see `baton_attention_abi`).
            baton_attention_fwd_d64(ATTENTION_D64, D64) = fwd::run::<1, 176, 3, 3, 2, 2, 88, 32, 44, 40, 232, true, 0, false, false, false, qk::QkN176, pv::PvN64>;
            /// Attention forward, head dimension 64, causal calls (128-row K/V blocks).
            baton_attention_fwd_d64_causal(ATTENTION_D64_CAUSAL, D64_CAUSAL) = fwd::run::<1, 128, 3, 3, 4, 2, 64, 32, 32, 40, 232, true, 0, false, true, true, qk::QkN128, pv::PvN64>;
            /// Attention forward, head dimension 64, on three consumer warpgroups
            /// (192-row query tiles, 80-row K/V blocks; causal or not).
            baton_attention_fwd_d64_w3(ATTENTION_D64_W3, D64_W3) = fwd::run::<1, 80, 3, 3, 3, 3, 40, 32, 20, 32, 160, true, 0, false, false, false, qk::QkN80, pv::PvN64>;
            /// Attention forward, head dimension 128.
            baton_attention_fwd_d128(ATTENTION_D128, D128) = fwd::run::<2, 128, 2, 2, 4, 2, 64, 64, 32, 40, 232, true, 0, false, false, true, qk::QkN128, pv::PvN128>;
            /// Attention forward, head dimension 128, causal calls (planned).
            baton_attention_fwd_d128_causal(ATTENTION_D128_CAUSAL, D128_CAUSAL) = fwd::run::<2, 128, 2, 2, 4, 2, 64, 64, 32, 40, 232, true, 0, false, true, true, qk::QkN128, pv::PvN128>;
            /// Attention forward, head dimension 256.
            baton_attention_fwd_d256(ATTENTION_D256, D256) = fwd::run::<4, 64, 2, 2, 2, 2, 32, 128, 16, 24, 240, false, 0, true, false, false, qk::QkN64, pv::PvN256>;
        }
    };
}
