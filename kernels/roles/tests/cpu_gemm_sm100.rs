//! The sm_100a BF16 GEMM's warp-role programs (`gemm_sm100::gemm_bf16`, the
//! same source the GPU build compiles) on the CPU: a host thread per warp,
//! simulated TMA (byte-exact with the H100), TMEM and `tcgen05.mma`
//! reading the 128-byte-swizzled stages through the real descriptors.
//! Fresh random inputs, a NaN-poisoned D (an unwritten element fails),
//! every element checked against an f64 reference.

use baton::arch::cpu::tma::TensorMap;
use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use baton_kernel_roles::ctx::run_cta;
use baton_kernel_roles::gemm_sm100::{self, GemmArgs, GemmSmem, WARPS};

struct Rng(u64);
impl Rng {
    fn new() -> Self {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        Rng(t | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A bf16 in [-1, 1) with 8 significant bits (exact in bf16).
    fn bf16(&mut self) -> u16 {
        let v = (self.next() % 256) as f32 / 128.0 - 1.0;
        (v.to_bits() >> 16) as u16
    }
}

fn bf16_to_f64(h: u16) -> f64 {
    f32::from_bits((h as u32) << 16) as f64
}

/// 16-byte aligned host storage for `n` bf16 values (TMA's base alignment).
struct Buf(Vec<u128>, usize);
impl Buf {
    fn new(vals: &[u16]) -> Self {
        let mut v = vec![0u128; vals.len().div_ceil(8)];
        // SAFETY: the u128 storage holds at least vals.len() u16s.
        unsafe {
            std::ptr::copy_nonoverlapping(vals.as_ptr(), v.as_mut_ptr() as *mut u16, vals.len())
        };
        Buf(v, vals.len())
    }
    fn addr(&self) -> u64 {
        self.0.as_ptr() as u64
    }
    fn values(&self) -> Vec<u16> {
        // SAFETY: the storage holds `self.1` u16s.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr() as *const u16, self.1) }.to_vec()
    }
}

fn map(
    buf: &Buf,
    rows: usize,
    cols: usize,
    box_rows: u32,
    box_cols: u32,
    sw: Swizzle,
) -> TensorMap {
    let desc = TensorMapDesc::matrix_2d(
        ElemType::BF16,
        buf.addr(),
        rows as u64,
        cols as u64,
        (cols * 2) as u64,
        box_rows,
        box_cols,
        sw,
    );
    // SAFETY: the buffer outlives the map (both live for the whole test),
    // and only the simulated TMA touches it while the CTAs run.
    unsafe { TensorMap::new(desc) }.expect("valid tensor map")
}

/// Runs the role programs on `grid` simulated CTAs (one after another: the
/// persistent schedule makes them independent) and checks D.
fn check(m: usize, n: usize, k: usize, alpha: f32, beta: f32, grid: u32) {
    let mut rng = Rng::new();
    let a: Vec<u16> = (0..m * k).map(|_| rng.bf16()).collect();
    let b: Vec<u16> = (0..n * k).map(|_| rng.bf16()).collect();
    let c: Vec<u16> = (0..m * n).map(|_| rng.bf16()).collect();
    let (ab, bb, cb) = (Buf::new(&a), Buf::new(&b), Buf::new(&c));
    let db = Buf::new(&vec![0x7fc0u16; m * n]); // NaN: unwritten elements fail
    let (ma, mb) = (
        map(&ab, m, k, gemm_sm100::BM, gemm_sm100::BK, Swizzle::B128),
        map(&bb, n, k, gemm_sm100::BN, gemm_sm100::BK, Swizzle::B128),
    );
    let (mc, md) = (
        map(
            &cb,
            m,
            n,
            gemm_sm100::BM,
            gemm_sm100::SUB_COLS,
            Swizzle::B64,
        ),
        map(
            &db,
            m,
            n,
            gemm_sm100::BM,
            gemm_sm100::SUB_COLS,
            Swizzle::B64,
        ),
    );
    let args = GemmArgs {
        tma_a: &ma,
        tma_b: &mb,
        tma_c: &mc,
        tma_d: &md,
        m: m as u32,
        n: n as u32,
        k: k as u32,
        group_m: 2,
        alpha,
        beta,
    };
    for cta in 0..grid {
        run_cta(GemmSmem::default(), WARPS, 4, |w, smem| {
            // SAFETY: every warp of the CTA runs the roles with the same
            // arguments; the maps describe the buffers as GemmArgs says.
            unsafe { gemm_sm100::gemm_bf16(w, smem, &args, cta, grid) }
        });
    }
    let d = db.values();
    let (mut err2, mut ref2, mut worst) = (0f64, 0f64, 0f64);
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f64;
            for kk in 0..k {
                acc += bf16_to_f64(a[i * k + kk]) * bf16_to_f64(b[j * k + kk]);
            }
            let r = alpha as f64 * acc + beta as f64 * bf16_to_f64(c[i * n + j]);
            let got = bf16_to_f64(d[i * n + j]);
            assert!(!got.is_nan(), "{m}x{n}x{k}: D[{i}][{j}] not written (NaN)");
            // bf16 output: half an ulp of 8 significant bits, plus f32
            // accumulation error.
            let tol = r.abs() * 2f64.powi(-8) + 1e-3 * (k as f64).sqrt();
            worst = worst.max((got - r).abs() / tol);
            assert!(
                (got - r).abs() <= tol,
                "{m}x{n}x{k} beta {beta}: D[{i}][{j}] = {got}, reference {r}"
            );
            err2 += (got - r).powi(2);
            ref2 += r * r;
        }
    }
    println!(
        "{m}x{n}x{k} alpha {alpha} beta {beta} grid {grid}: rel Frobenius error {:.2e}, worst element at {:.2} of its tolerance",
        (err2 / ref2).sqrt(),
        worst
    );
}

/// Runs `f` on a thread with room for a CTA's 227 KiB of shared memory on
/// its stack.
fn big_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p));
}

#[test]
fn one_tile_exact_shape() {
    big_stack(|| check(128, 256, 128, 1.0, 0.0, 1));
}

#[test]
fn ragged_shapes_persistent_grid_and_residual() {
    big_stack(|| {
        // Ragged M, N and K (TMA zero-fills loads and clips stores); more
        // tiles than CTAs, so CTAs loop; both accumulator stages and C
        // stages wrap around.
        check(200, 264, 136, 1.0, 0.5, 2);
        check(1, 8, 8, -1.5, 1.0, 1);
        check(257, 520, 72, 0.75, 0.0, 3);
    });
}
