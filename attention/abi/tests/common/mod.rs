//! Test helpers shared by the attention CPU tests (`cpu_fwd`,
//! `cpu_consumer_step`): a seeded-from-time xorshift for fresh random bf16
//! inputs (the seed is printed, so a failure can be replayed) and bf16 → f64.

use baton::numeric::{Bf16, SmallFloat};

/// Xorshift64 seeded from the clock (printed).
pub struct Rng(u64);

impl Rng {
    /// A generator with a fresh seed, printed as `seed 0x…`.
    pub fn fresh() -> Self {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        println!("seed {t:#x}");
        Self(t | 1)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A bf16 in [-2, 2) (round to nearest even from f32).
    pub fn bf16(&mut self) -> u16 {
        let x = (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0;
        let b = (x as f32).to_bits();
        ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
    }
}

/// A bf16's bits as f64.
pub fn bf16(bits: u16) -> f64 {
    Bf16::from_bits(bits).to_f64()
}
