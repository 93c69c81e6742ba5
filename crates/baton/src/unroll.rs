//! Compile-time loop unrolling for kernel code: register arrays (MMA
//! accumulators, `tcgen05.ld` results) must be indexed by constants, or
//! LLVM moves them to local memory.

/// `unroll!(J in [0, 1, 2] { body })` expands `body` once per literal, with
/// `J` a `u32` constant in each copy.
///
/// ```
/// let regs = [10u32, 20, 30, 40];
/// let mut sum = 0;
/// baton::unroll!(J in [0, 1, 2, 3] {
///     sum += regs[J as usize]; // a constant index in every copy
/// });
/// assert_eq!(sum, 100);
/// ```
#[macro_export]
macro_rules! unroll {
    ($j:ident in [$($n:literal),* $(,)?] $body:block) => {
        $( { const $j: u32 = $n; $body } )*
    };
}
