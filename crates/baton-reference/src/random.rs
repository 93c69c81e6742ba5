//! Seedable random inputs for checks and benchmarks.
//!
//! ```
//! use baton_reference::random::XorShift;
//! let mut a = XorShift::new(42);
//! let mut b = XorShift::new(42);
//! assert_eq!(a.next_u64(), b.next_u64()); // same seed, same stream
//! let fresh = XorShift::new(XorShift::seed_from_time()); // a new one per run
//! # let _ = fresh;
//! ```

/// xorshift64* — tiny, seedable, good enough for test inputs.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator from `seed` (0 is replaced by a fixed odd constant).
    pub fn new(seed: u64) -> Self {
        Self(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }
    /// A seed from the clock and the process id: fresh for every run.
    pub fn seed_from_time() -> u64 {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        t ^ ((std::process::id() as u64) << 32) ^ 0x2545_F491_4F6C_DD1D
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Next random `u32`.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
}
