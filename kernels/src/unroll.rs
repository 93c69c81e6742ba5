//! Compile-time loop unrolling: register arrays (wgmma accumulators) must be
//! indexed by constants, or LLVM moves them to local memory.

/// `unroll!(J in [0, 1, 2] { body })` expands `body` once per literal, with
/// `J` a `u32` constant in each copy.
#[macro_export]
macro_rules! unroll {
    ($j:ident in [$($n:literal),* $(,)?] $body:block) => {
        $( { const $j: u32 = $n; $body } )*
    };
}
