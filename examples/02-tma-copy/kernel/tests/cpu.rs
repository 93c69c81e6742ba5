//! The TMA copy roles on the CPU backend (simulated TMA, 128-byte swizzle,
//! zero fill and clipping at the edges): every element of fresh random
//! matrices arrives bit for bit, and nothing past the destination is written.

use baton::arch::cpu::tma::TensorMap;
use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use tma_copy_kernel::{TILE, TmaCopyParams, cpu};

/// Poison of the destination and its guard (a bf16 NaN the inputs avoid).
const POISON: u16 = 0xFFFF;
/// Guard elements after the destination matrix.
const GUARD: usize = 4096;

/// SplitMix64: fresh inputs per run (seed printed for replay).
struct Rng(u64);
impl Rng {
    fn from_time() -> Self {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        println!("seed {t:#x}");
        Rng(t)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn desc(base: u64, rows: usize, cols: usize) -> TensorMapDesc {
    TensorMapDesc::matrix_2d(
        ElemType::BF16,
        base,
        rows as u64,
        cols as u64,
        cols as u64 * 2,
        TILE,
        TILE,
        Swizzle::B128,
    )
}

fn check(rows: usize, cols: usize, grid: u32, rng: &mut Rng) {
    let src: Vec<u16> = (0..rows * cols)
        .map(|_| rng.next() as u16 & 0x7FFF)
        .collect();
    let mut dst = vec![POISON; rows * cols + GUARD];
    // SAFETY: both vectors outlive the maps, and nothing else touches them
    // while `run_grid` runs.
    let load = unsafe { TensorMap::new(desc(src.as_ptr() as u64, rows, cols)) }.unwrap();
    let store = unsafe { TensorMap::new(desc(dst.as_mut_ptr() as u64, rows, cols)) }.unwrap();
    let p = TmaCopyParams {
        load_map: &load,
        store_map: &store,
        tiles_m: rows.div_ceil(TILE as usize) as u32,
        tiles_n: cols.div_ceil(TILE as usize) as u32,
    };
    // SAFETY: as above.
    unsafe { cpu::run_grid(&p, grid) };
    for (i, (&s, &d)) in src.iter().zip(&dst).enumerate() {
        assert_eq!(
            d,
            s,
            "{rows}×{cols}, grid {grid}: element ({}, {})",
            i / cols,
            i % cols
        );
    }
    assert!(
        dst[rows * cols..].iter().all(|&g| g == POISON),
        "{rows}×{cols}: a store wrote past the matrix"
    );
}

#[test]
fn random_matrices_copy_bit_exactly() {
    let mut rng = Rng::from_time();
    // One tile, a partial tile, whole tiles, ragged in both dimensions
    // (columns: multiples of 8, so rows are 16-byte aligned as TMA needs).
    let ragged = (70 + rng.next() % 200) as usize;
    let ragged_cols = 8 * (9 + rng.next() % 30) as usize;
    for (rows, cols) in [
        (64, 64),
        (1, 8),
        (128, 192),
        (ragged, ragged_cols),
        (300, 200),
    ] {
        for grid in [1, 4] {
            check(rows, cols, grid, &mut rng);
        }
    }
}
