//! The kernel's roles on the CPU backend, against expected values computed
//! here from the definition `out[i] = 3·in[i] + 1 (mod 2³²)`.

use pipeline_kernel::{CHUNK, PipelineParams, STAGES, cpu};

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

fn check(n: u32, grid: u32, rng: &mut Rng) {
    let input: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
    let mut out = vec![0xDEAD_BEEFu32; n as usize];
    let p = PipelineParams {
        input: input.as_ptr(),
        out: out.as_mut_ptr(),
        n,
    };
    // SAFETY: both vectors hold n words and outlive the call.
    unsafe { cpu::run_grid(&p, grid) };
    for (i, (&x, &y)) in input.iter().zip(&out).enumerate() {
        let expected = (u64::from(x) * 3 + 1) as u32; // mod 2^32
        assert_eq!(y, expected, "n {n}, grid {grid}: out[{i}] for in {x:#x}");
    }
}

#[test]
fn ragged_sizes_and_grids_match_the_definition() {
    let mut rng = Rng::from_time();
    // Fewer chunks than stages, exactly the ring, many laps, ragged tails.
    for n in [
        1,
        CHUNK - 1,
        CHUNK * STAGES as u32,
        40 * CHUNK + 17,
        5000 + (rng.next() % 3000) as u32,
    ] {
        for grid in [1, 3] {
            check(n, grid, &mut rng);
        }
    }
}

#[test]
fn empty_input_writes_nothing_and_terminates() {
    let mut out = [7u32; 4];
    let p = PipelineParams {
        input: [].as_ptr(),
        out: out.as_mut_ptr(),
        n: 0,
    };
    // SAFETY: n = 0: nothing is read or written.
    unsafe { cpu::run_grid(&p, 2) };
    assert_eq!(out, [7; 4]);
}
