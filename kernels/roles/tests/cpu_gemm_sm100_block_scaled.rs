//! The sm_100a block-scaled GEMM's warp-role programs
//! (`gemm_sm100_block_scaled`, the source the GPU build compiles) on the
//! CPU: simulated TMA (A/B 128-byte swizzle, SF tiles as 3-D boxes of the
//! global SF atom layout), `tcgen05.cp` of the SF atoms into TMEM and the
//! block-scaled `tcgen05.mma` reading them where the PTX ISA places them.
//! MXFP8 and NVFP4; random elements and a different random scale for every
//! row and K block; ragged M, N and K; a NaN-poisoned D; every element
//! checked against an f64 reference of the dequantized inputs.
//!
//! Inputs are generated here from random codes (not quantized from f32, so
//! every code and scale occurs) in the layouts `baton_runtime::block_scaled`
//! produces — `baton::block_scale::SfLayout` for the scale factors, the
//! same TMA views as its `data_map` / `sf_map`. (This crate does not
//! dev-depend on baton-runtime: that crate's build script builds the PTX,
//! which compiles this crate.)

use baton::arch::cpu::tma::TensorMap;
use baton::block_scale::{Mxfp8, Nvfp4, SfLayout};
use baton::numeric::{E2m1, E4m3, SmallFloat, Ue4m3, Ue8m0};
use baton::tensor_map::{ElemType, L2Promotion, OobFill, Swizzle, TensorMapDesc};
use baton_kernel_roles::ctx::run_cta;
use baton_kernel_roles::gemm_sm100_block_scaled::{
    self as bs, BM, BN, BlockScaledGemmArgs, Mxfp8GemmSmem, Nvfp4GemmSmem, SUB_COLS, ScaledFormat,
    WARPS,
};

struct Rng(u64);
impl Rng {
    fn new(salt: u64) -> Self {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        Rng((t ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What the test needs of a format beyond the kernel's trait: random
/// element bytes and scale codes, and their decoding.
trait TestFormat: ScaledFormat {
    /// A random byte of packed elements (never NaN).
    fn elem_byte(r: &mut Rng) -> u8;
    /// Element `c` of a packed row, decoded.
    fn elem(row: &[u8], c: usize) -> f64;
    /// A random scale code (finite, non-zero, a spread of magnitudes).
    fn scale_code(r: &mut Rng) -> u8;
    /// A scale code, decoded.
    fn scale(code: u8) -> f64;
    /// The kernel for this format on one simulated CTA.
    fn run(args: &BlockScaledGemmArgs, cta: u32, grid: u32);
}

impl TestFormat for Mxfp8 {
    fn elem_byte(r: &mut Rng) -> u8 {
        let v = r.next() as u8;
        if v & 0x7f == 0x7f { v & 0xf8 } else { v } // e4m3 NaN → finite
    }
    fn elem(row: &[u8], c: usize) -> f64 {
        E4m3::from_bits(row[c]).to_f64()
    }
    fn scale_code(r: &mut Rng) -> u8 {
        120 + r.below(14) as u8 // ue8m0: 2^-7 ..= 2^6
    }
    fn scale(code: u8) -> f64 {
        Ue8m0::from_bits(code).to_f64()
    }
    fn run(args: &BlockScaledGemmArgs, cta: u32, grid: u32) {
        run_cta(Mxfp8GemmSmem::default(), WARPS, 4, |w, smem| {
            // SAFETY: every warp runs the roles with the same arguments; the
            // maps describe the buffers as BlockScaledGemmArgs says.
            unsafe { bs::gemm_mxfp8(w, smem, args, cta, grid) }
        });
    }
}

impl TestFormat for Nvfp4 {
    fn elem_byte(r: &mut Rng) -> u8 {
        r.next() as u8 // every e2m1 code is finite
    }
    fn elem(row: &[u8], c: usize) -> f64 {
        E2m1::from_bits((row[c / 2] >> (4 * (c % 2))) & 0xF).to_f64()
    }
    fn scale_code(r: &mut Rng) -> u8 {
        0x20 + r.below(0x30) as u8 // ue4m3: 1/8 ..= 12
    }
    fn scale(code: u8) -> f64 {
        Ue4m3::from_bits(code).to_f64()
    }
    fn run(args: &BlockScaledGemmArgs, cta: u32, grid: u32) {
        run_cta(Nvfp4GemmSmem::default(), WARPS, 4, |w, smem| {
            // SAFETY: as for MXFP8.
            unsafe { bs::gemm_nvfp4(w, smem, args, cta, grid) }
        });
    }
}

/// 16-byte aligned host bytes (TMA's base alignment).
struct Buf(Vec<u128>, usize);
impl Buf {
    fn new(bytes: &[u8]) -> Self {
        let mut v = vec![0u128; bytes.len().div_ceil(16)];
        // SAFETY: the u128 storage holds at least bytes.len() bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr() as *mut u8, bytes.len())
        };
        Buf(v, bytes.len())
    }
    fn addr(&self) -> u64 {
        self.0.as_ptr() as u64
    }
    fn bytes(&self) -> Vec<u8> {
        // SAFETY: the storage holds `self.1` bytes.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr() as *const u8, self.1) }.to_vec()
    }
}

fn tensor_map(desc: TensorMapDesc) -> TensorMap {
    // SAFETY: every buffer outlives its map (both live for the whole check),
    // and only the simulated TMA touches them while the CTAs run.
    unsafe { TensorMap::new(desc) }.expect("valid tensor map")
}

/// One block-scaled operand: `rows × k` packed elements and the SF bytes in
/// the global atom layout (padding bytes 0).
struct Operand {
    rows: usize,
    k: usize,
    data: Vec<u8>,
    layout: SfLayout,
    sf: Vec<u8>,
}

impl Operand {
    fn random<F: TestFormat>(r: &mut Rng, rows: usize, k: usize) -> Self {
        let data = (0..rows * k / F::ELEMS_PER_BYTE)
            .map(|_| F::elem_byte(r))
            .collect();
        let layout = SfLayout::new(rows, k / F::VEC);
        let mut sf = vec![0u8; layout.bytes()];
        for row in 0..rows {
            for c in 0..k / F::VEC {
                sf[layout.offset(row, c)] = F::scale_code(r);
            }
        }
        Operand {
            rows,
            k,
            data,
            layout,
            sf,
        }
    }
    fn value<F: TestFormat>(&self, row: usize, c: usize) -> f64 {
        let rb = self.k / F::ELEMS_PER_BYTE;
        F::elem(&self.data[row * rb..(row + 1) * rb], c)
            * F::scale(self.sf[self.layout.offset(row, c / F::VEC)])
    }
    /// The element map (`QuantizedMatrix::data_map` with box 128 × BK).
    fn data_map(&self, buf: &Buf, box_rows: u32) -> TensorMap {
        let row_bytes = (self.data.len() / self.rows) as u64;
        tensor_map(TensorMapDesc::matrix_2d(
            ElemType::U8,
            buf.addr(),
            self.rows as u64,
            row_bytes,
            row_bytes,
            box_rows,
            bs::BK_BYTES,
            Swizzle::B128,
        ))
    }
    /// The SF map (`QuantizedMatrix::sf_map`): the 3-D view of whole 512-byte
    /// atoms, box `[256, SFK / 2, 1]`.
    fn sf_map(&self, buf: &Buf, sfk: usize) -> TensorMap {
        let (dims, strides) = self.layout.tma_dims();
        tensor_map(TensorMapDesc {
            dtype: ElemType::U8,
            rank: 3,
            base: buf.addr(),
            dims,
            strides_bytes: strides,
            box_dims: [256, (sfk / 2) as u32, 1],
            swizzle: Swizzle::None,
            oob_fill: OobFill::Zero,
            l2_promotion: L2Promotion::None,
        })
    }
}

fn bf16_bits(x: f32) -> u16 {
    (x.to_bits() >> 16) as u16 // exact: inputs are made exact in bf16
}

fn bf16_to_f64(h: u16) -> f64 {
    f32::from_bits((h as u32) << 16) as f64
}

fn bf16_map(buf: &Buf, m: usize, n: usize) -> TensorMap {
    tensor_map(TensorMapDesc::matrix_2d(
        ElemType::BF16,
        buf.addr(),
        m as u64,
        n as u64,
        (n * 2) as u64,
        BM,
        SUB_COLS,
        Swizzle::B64,
    ))
}

/// Runs the roles for format `F` on `grid` simulated CTAs (one after
/// another: the persistent schedule makes them independent) and checks
/// every element of D.
fn check<F: TestFormat>(m: usize, n: usize, k: usize, alpha: f32, beta: f32, grid: u32) {
    let mut rng = Rng::new((m * 131 + n * 17 + k) as u64);
    let (a, b) = (
        Operand::random::<F>(&mut rng, m, k),
        Operand::random::<F>(&mut rng, n, k),
    );
    // C: bf16 in [-2, 2) with 8 significant bits.
    let c: Vec<u16> = (0..m * n)
        .map(|_| bf16_bits((rng.below(512) as f32 - 256.0) / 128.0))
        .collect();
    let c_bytes: Vec<u8> = c.iter().flat_map(|h| h.to_le_bytes()).collect();
    let (ab, bb, sfab, sfbb, cb) = (
        Buf::new(&a.data),
        Buf::new(&b.data),
        Buf::new(&a.sf),
        Buf::new(&b.sf),
        Buf::new(&c_bytes),
    );
    let db = Buf::new(&[0xc0, 0x7f].repeat(m * n)); // NaN: unwritten elements fail
    let (ma, mb) = (a.data_map(&ab, BM), b.data_map(&bb, BN));
    let (msfa, msfb) = (a.sf_map(&sfab, F::SFK), b.sf_map(&sfbb, F::SFK));
    let (mc, md) = (bf16_map(&cb, m, n), bf16_map(&db, m, n));
    let args = BlockScaledGemmArgs {
        tma_a: &ma,
        tma_b: &mb,
        tma_sfa: &msfa,
        tma_sfb: &msfb,
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
        F::run(&args, cta, grid);
    }
    let d: Vec<u16> = db
        .bytes()
        .chunks_exact(2)
        .map(|p| u16::from_le_bytes([p[0], p[1]]))
        .collect();
    let av: Vec<f64> = (0..m * k).map(|i| a.value::<F>(i / k, i % k)).collect();
    let bv: Vec<f64> = (0..n * k).map(|i| b.value::<F>(i / k, i % k)).collect();
    let (mut err2, mut ref2, mut worst) = (0f64, 0f64, 0f64);
    for i in 0..m {
        for j in 0..n {
            let (mut acc, mut mag) = (0f64, 0f64);
            for kk in 0..k {
                let t = av[i * k + kk] * bv[j * k + kk];
                acc += t;
                mag += t.abs();
            }
            let r = alpha as f64 * acc + beta as f64 * bf16_to_f64(c[i * n + j]);
            let got = bf16_to_f64(d[i * n + j]);
            assert!(
                !got.is_nan(),
                "{} {m}x{n}x{k}: D[{i}][{j}] not written (NaN)",
                F::NAME
            );
            // bf16 output (half an ulp of 8 significant bits) plus f32
            // accumulation error (one rounding per MMA, relative to Σ|terms|).
            let tol = r.abs() * (2f64.powi(-8) + 2f64.powi(-20))
                + alpha.abs() as f64 * mag * (k as f64) * 2f64.powi(-24)
                + 1e-30;
            worst = worst.max((got - r).abs() / tol);
            assert!(
                (got - r).abs() <= tol,
                "{} {m}x{n}x{k} beta {beta}: D[{i}][{j}] = {got}, reference {r}",
                F::NAME
            );
            err2 += (got - r).powi(2);
            ref2 += r * r;
        }
    }
    println!(
        "{} {m}x{n}x{k} alpha {alpha} beta {beta} grid {grid}: rel Frobenius error {:.2e}, worst element at {:.2} of its tolerance",
        F::NAME,
        (err2 / ref2).sqrt(),
        worst
    );
}

/// Runs `f` on a thread with room for a CTA's shared memory on its stack.
fn big_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p));
}

#[test]
fn mxfp8_one_tile_exact_shape() {
    big_stack(|| check::<Mxfp8>(128, 128, 256, 1.0, 0.0, 1));
}

#[test]
fn mxfp8_ragged_shapes_persistent_grid_and_residual() {
    big_stack(|| {
        // Ragged M, N and K (K a multiple of 32 but not of the stage's
        // 128: zero-filled elements, padding SF columns); more tiles than
        // CTAs (accumulator and C stages wrap); more K stages than input
        // stages (the SF slots are reused).
        check::<Mxfp8>(200, 264, 160, 0.5, 0.75, 2);
        check::<Mxfp8>(1, 8, 32, -1.5, 1.0, 1);
        check::<Mxfp8>(130, 136, 800, 1.0, 0.0, 3);
    });
}

#[test]
fn nvfp4_one_tile_exact_shape() {
    big_stack(|| check::<Nvfp4>(128, 128, 512, 1.0, 0.0, 1));
}

#[test]
fn nvfp4_ragged_shapes_persistent_grid_and_residual() {
    big_stack(|| {
        // K a multiple of 32 (16-byte row pitch) but not of the stage's
        // 256: SF atoms past the tensor are zero-filled by the TMA.
        check::<Nvfp4>(200, 264, 288, 0.5, 0.75, 2);
        check::<Nvfp4>(1, 8, 32, -1.5, 1.0, 1);
        check::<Nvfp4>(130, 136, 1568, 1.0, 0.0, 3);
    });
}
