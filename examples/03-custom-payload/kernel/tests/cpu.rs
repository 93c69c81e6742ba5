//! The K/V roles on the CPU backend (simulated TMA with the 128-byte
//! swizzle and zero fill past the last row): every output word against
//! `Σ_c K[r][c]·V[r][c] mod 2³²` computed here, for fresh random K and V.

use baton::arch::cpu::tma::TensorMap;
use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use kv_kernel::payload::{DIM, ROWS};
use kv_kernel::{KvParams, cpu};

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

fn desc(base: u64, rows: usize) -> TensorMapDesc {
    TensorMapDesc::matrix_2d(
        ElemType::U32,
        base,
        rows as u64,
        DIM as u64,
        DIM as u64 * 4,
        ROWS as u32,
        DIM as u32,
        Swizzle::B128,
    )
}

fn check(rows: usize, grid: u32, rng: &mut Rng) {
    let k: Vec<u32> = (0..rows * DIM).map(|_| rng.next() as u32).collect();
    let v: Vec<u32> = (0..rows * DIM).map(|_| rng.next() as u32).collect();
    let mut out = vec![0xDEAD_BEEFu32; rows + 1];
    // SAFETY: the vectors outlive the maps; nothing else touches them while
    // `run_grid` runs.
    let km = unsafe { TensorMap::new(desc(k.as_ptr() as u64, rows)) }.unwrap();
    let vm = unsafe { TensorMap::new(desc(v.as_ptr() as u64, rows)) }.unwrap();
    let p = KvParams {
        k_map: &km,
        v_map: &vm,
        out: out.as_mut_ptr(),
        rows: rows as u32,
    };
    // SAFETY: as above; `out` holds rows (+1 guard) words.
    unsafe { cpu::run_grid(&p, grid) };
    for r in 0..rows {
        let expected = (0..DIM)
            .map(|c| u64::from(k[r * DIM + c]) * u64::from(v[r * DIM + c]))
            .fold(0u64, u64::wrapping_add) as u32;
        assert_eq!(out[r], expected, "rows {rows}, grid {grid}: out[{r}]");
    }
    assert_eq!(
        out[rows], 0xDEAD_BEEF,
        "rows {rows}: a word past the output was written"
    );
}

#[test]
fn random_k_and_v_give_every_row_dot_product() {
    let mut rng = Rng::from_time();
    let ragged = (33 + rng.next() % 500) as usize;
    for rows in [1, ROWS, 3 * ROWS + 5, ragged] {
        for grid in [1, 2] {
            check(rows, grid, &mut rng);
        }
    }
}
