//! The CPU `tcgen05` simulation (`baton::arch::tcgen05` on the host): MMAs
//! of every kind against an f64 reference on random inputs, with operands
//! placed by the byte-exact simulated TMA (SWIZZLE_128B) or by hand (no
//! swizzle) and read back through the shared-memory descriptors; TMEM
//! allocator errors; the CTA-pair MMA; commit arrival counts.

use baton::arch::cpu::tma::{self, TensorMap};
use baton::arch::cpu::{BarrierRef, CpuBlock, CpuCluster, MbarrierCell, cluster_sync, elect_one};
use baton::arch::tcgen05::mma::{self, *};
use baton::arch::tcgen05::smem_addr;
use baton::arch::tcgen05::tmem::{self, TmemAddr};
use baton::block_scale::sf_tile_offset;
use baton::numeric::{Bf16, E2m1, E4m3, SmallFloat, Ue4m3, Ue8m0};
use baton::smem::SharedRef;
use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use baton::tile_pipeline::Tile;
use std::sync::atomic::{AtomicU32, Ordering};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

/// Shared memory: A and B as 128 rows × 128 bytes (SWIZZLE_128B atoms),
/// the TMA barrier, the MMA barrier and the TMEM address word.
#[repr(C)]
struct Smem {
    a: Tile<u8, 128, 128>,
    b: Tile<u8, 128, 128>,
    tma: MbarrierCell,
    mma: MbarrierCell,
    tmem: AtomicU32,
}

fn smem() -> Smem {
    Smem {
        a: Tile::new(),
        b: Tile::new(),
        tma: MbarrierCell::new(),
        mma: MbarrierCell::new(),
        tmem: AtomicU32::new(0),
    }
}

fn map(m: &[u8]) -> TensorMap {
    let d = TensorMapDesc::matrix_2d(
        ElemType::U8,
        m.as_ptr() as u64,
        128,
        128,
        128,
        128,
        128,
        Swizzle::B128,
    );
    unsafe { TensorMap::new(d) }.unwrap()
}

/// Loads `a`, `b` (128 × 128 bytes each, row-major) through the simulated
/// TMA with SWIZZLE_128B, allocates 256 TMEM columns, runs `issue(d)` on one
/// thread, commits, and returns the 128 × `n` f32 accumulator rows.
fn run(
    a: &[u8],
    b: &[u8],
    n: u32,
    issue: impl Fn(TmemAddr, SmemDescriptor, SmemDescriptor) + Sync,
) -> Vec<f32> {
    let (ma, mb) = (map(a), map(b));
    let out = std::sync::Mutex::new(vec![0f32; 128 * n as usize]);
    let block = CpuBlock::new(smem());
    block.run_warps(1, |_w, s| {
        let s = s.get();
        let (tb, mbar) = (
            BarrierRef::new(SharedRef::from_ref(&s.tma)),
            BarrierRef::new(SharedRef::from_ref(&s.mma)),
        );
        unsafe { tb.init(1) };
        unsafe { mbar.init(1) };
        elect_one(|| tb.arrive_expect_tx(2 * 128 * 128));
        unsafe { tma::load_2d(&ma, SharedRef::from_ref(&s.a), tb, 0, 0) };
        unsafe { tma::load_2d(&mb, SharedRef::from_ref(&s.b), tb, 0, 0) };
        tb.wait_parity(0, || unreachable!());
        let slot = SharedRef::from_ref(unsafe { &*s.tmem.as_ptr() });
        unsafe { tmem::alloc::<256>(slot) };
        unsafe { tmem::relinquish_alloc_permit() };
        let d = TmemAddr(s.tmem.load(Ordering::Relaxed));
        // K-major, 128-byte swizzle: 8-row atoms of 1024 bytes.
        let da = SmemDescriptor::new(
            smem_addr(SharedRef::from_ref(&s.a)),
            SmemLayout::Swizzle128B,
            16,
            1024,
        );
        let db = SmemDescriptor::new(
            smem_addr(SharedRef::from_ref(&s.b)),
            SmemLayout::Swizzle128B,
            16,
            1024,
        );
        issue(d, da, db);
        unsafe { mma::commit(mbar) };
        mbar.wait_parity(0, || unreachable!("one commit completes the phase"));
        let mut o = out.lock().unwrap();
        for row in 0..128 {
            for c in (0..n).step_by(32) {
                let v = unsafe { tmem::ld_32x32b_x32(d.offset(row, c)) };
                for (j, x) in v.iter().enumerate() {
                    o[(row * n + c) as usize + j] = f32::from_bits(*x);
                }
            }
        }
        unsafe { tmem::dealloc::<256>(d) };
    });
    out.into_inner().unwrap()
}

fn check(got: &[f32], want: &[f64], mag: &[f64], tol: f64) {
    for (i, ((g, w), m)) in got.iter().zip(want).zip(mag).enumerate() {
        assert!(
            (*g as f64 - w).abs() <= tol * m.max(1e-30),
            "element {i}: got {g}, want {w}"
        );
    }
}

#[test]
fn f16_kind_bf16_matches_f64_through_the_swizzled_tma_layout() {
    let mut r = Rng(1);
    // bf16 with 8 significant bits of small integers / 16: products and
    // sums of 64 are exact in f32.
    let make = |r: &mut Rng| -> Vec<u8> {
        (0..128 * 64)
            .flat_map(|_| {
                Bf16::from_f32((r.next() % 33) as f32 / 16.0 - 1.0)
                    .0
                    .to_le_bytes()
            })
            .collect()
    };
    let (a, b) = (make(&mut r), make(&mut r));
    let n = 128;
    let got = run(&a, &b, n, |d, da, db| {
        let idesc = InstrDescriptor::f16(F16Type::Bf16, AccType::F32, 128, n, Major::K, Major::K);
        for k in 0..4 {
            unsafe { mma_f16_ss(d, da.advance(32 * k), db.advance(32 * k), idesc, k > 0) };
        }
    });
    let el = |m: &[u8], row: usize, k: usize| {
        Bf16::from_bits(u16::from_le_bytes([
            m[row * 128 + 2 * k],
            m[row * 128 + 2 * k + 1],
        ]))
        .to_f64()
    };
    let want: Vec<f64> = (0..128 * n as usize)
        .map(|i| {
            (0..64)
                .map(|k| el(&a, i / 128, k) * el(&b, i % 128, k))
                .sum()
        })
        .collect();
    check(&got, &want, &vec![1.0; want.len()], 0.0);
}

/// Shared memory of the block-scaled chain: A (128 rows) and B (256 rows)
/// of 128 bytes per row (SWIZZLE_128B, loaded by the simulated TMA), the
/// SF tiles of A and B in `block_scale::sf_tile_offset` layout (16 SF
/// columns: 4 K atoms; A one row block, B two), barriers, TMEM address.
#[repr(C)]
struct BsSmem {
    a: Tile<u8, 128, 128>,
    b: Tile<u8, 256, 128>,
    sfa: Tile<u8, 128, 16>,
    sfb: Tile<u8, 256, 16>,
    tma: MbarrierCell,
    mma: MbarrierCell,
    tmem: AtomicU32,
}

/// SF columns held by the chain's SF tiles.
const CHAIN_SFK: usize = 16;

/// TMEM columns of the scale factors of K atom `ka` (4 SF columns): A's
/// one atom at `256 + 4·ka`, B's two row blocks at `272 + 8·ka` and `+4`.
fn chain_sf_tmem(d: TmemAddr, ka: u32) -> (TmemAddr, TmemAddr) {
    (d.offset(0, 256 + 4 * ka), d.offset(0, 272 + 8 * ka))
}

/// The path a block-scaled kernel takes: A (128 × 128 bytes) and B (256 ×
/// 128 bytes) through the simulated TMA with SWIZZLE_128B; scale codes
/// `sa[r][c]` / `sb[n][c]` (`CHAIN_SFK` SF columns) written to shared
/// memory at `sf_tile_offset(r, c, 16)`; every 512-byte atom copied to
/// TMEM by `tcgen05.cp.32x128b.warpx4` (columns from [`chain_sf_tmem`]);
/// then `issue(d, a_desc, b_desc)` runs the MMAs; returns D, 128 × 256.
fn run_block_scaled(
    a: &[u8],
    b: &[u8],
    sa: &[[u8; CHAIN_SFK]],
    sb: &[[u8; CHAIN_SFK]],
    issue: impl Fn(TmemAddr, SmemDescriptor, SmemDescriptor) + Sync,
) -> Vec<f32> {
    let map_rows = |m: &[u8], rows: usize| {
        let d = TensorMapDesc::matrix_2d(
            ElemType::U8,
            m.as_ptr() as u64,
            rows as u64,
            128,
            128,
            rows as u32,
            128,
            Swizzle::B128,
        );
        unsafe { TensorMap::new(d) }.unwrap()
    };
    let (ma, mb) = (map_rows(a, 128), map_rows(b, 256));
    let out = std::sync::Mutex::new(vec![0f32; 128 * 256]);
    let block = CpuBlock::new(BsSmem {
        a: Tile::new(),
        b: Tile::new(),
        sfa: Tile::new(),
        sfb: Tile::new(),
        tma: MbarrierCell::new(),
        mma: MbarrierCell::new(),
        tmem: AtomicU32::new(0),
    });
    block.run_warps(1, |_w, s| {
        let s = s.get();
        // The SF tiles, in the layout the SF TMA lands (block_scale).
        for (rows, tile_rows, codes) in [
            (128, &s.sfa as *const _ as *const u8, sa),
            (256, &s.sfb as *const _ as *const u8, sb),
        ] {
            for (r, row) in codes.iter().enumerate().take(rows) {
                for (c, &code) in row.iter().enumerate() {
                    unsafe {
                        (tile_rows as *mut u8)
                            .add(sf_tile_offset(r, c, CHAIN_SFK))
                            .write(code)
                    };
                }
            }
        }
        let (tb, mbar) = (
            BarrierRef::new(SharedRef::from_ref(&s.tma)),
            BarrierRef::new(SharedRef::from_ref(&s.mma)),
        );
        unsafe { tb.init(1) };
        unsafe { mbar.init(1) };
        elect_one(|| tb.arrive_expect_tx(384 * 128));
        unsafe { tma::load_2d(&ma, SharedRef::from_ref(&s.a), tb, 0, 0) };
        unsafe { tma::load_2d(&mb, SharedRef::from_ref(&s.b), tb, 0, 0) };
        tb.wait_parity(0, || unreachable!());
        let slot = SharedRef::from_ref(unsafe { &*s.tmem.as_ptr() });
        unsafe { tmem::alloc::<512>(slot) };
        let d = TmemAddr(s.tmem.load(Ordering::Relaxed));
        let desc = |addr: u32| SmemDescriptor::new(addr, SmemLayout::Swizzle128B, 16, 1024);
        // SF atoms: 32 rows of 16 contiguous bytes (no swizzle, 8-row
        // groups 128 bytes apart).
        let sf_desc = |addr: u32| SmemDescriptor::new(addr, SmemLayout::Interleave, 0, 128);
        let (sfa0, sfb0) = (
            smem_addr(SharedRef::from_ref(&s.sfa)),
            smem_addr(SharedRef::from_ref(&s.sfb)),
        );
        for ka in 0..(CHAIN_SFK / 4) as u32 {
            let (ta, tb) = chain_sf_tmem(d, ka);
            unsafe {
                tmem::cp_32x128b_warpx4(ta, sf_desc(sfa0 + 512 * ka));
                for rb in 0..2 {
                    let atom = sf_tile_offset(128 * rb as usize, 4 * ka as usize, CHAIN_SFK) as u32;
                    tmem::cp_32x128b_warpx4(tb.offset(0, 4 * rb), sf_desc(sfb0 + atom));
                }
            }
        }
        issue(
            d,
            desc(smem_addr(SharedRef::from_ref(&s.a))),
            desc(smem_addr(SharedRef::from_ref(&s.b))),
        );
        unsafe { mma::commit(mbar) };
        mbar.wait_parity(0, || unreachable!("one commit completes the phase"));
        let mut o = out.lock().unwrap();
        for row in 0..128 {
            for c in (0..256).step_by(32) {
                let v = unsafe { tmem::ld_32x32b_x32(d.offset(row, c)) };
                for (j, x) in v.iter().enumerate() {
                    o[(row * 256 + c) as usize + j] = f32::from_bits(*x);
                }
            }
        }
        unsafe { tmem::dealloc::<512>(d) };
    });
    out.into_inner().unwrap()
}

/// Random scale codes, `rows` × `CHAIN_SFK`, in `lo..lo + span`.
fn scale_codes(r: &mut Rng, rows: usize, lo: u8, span: u32) -> Vec<[u8; CHAIN_SFK]> {
    (0..rows)
        .map(|_| [0; CHAIN_SFK].map(|_: u8| lo + (r.next() % span) as u8))
        .collect()
}

/// Compares D with `Σ_k term(m, n, k)` in f64, relative to `Σ |term|`.
fn check_terms(got: &[f32], k: usize, term: impl Fn(usize, usize, usize) -> f64) {
    for m in 0..128 {
        for n in 0..256 {
            let (want, mag) = (0..k).fold((0.0, 0.0), |(s, a), kk| {
                let t = term(m, n, kk);
                (s + t, a + t.abs())
            });
            let g = got[m * 256 + n] as f64;
            assert!(
                (g - want).abs() <= 1e-6 * mag.max(1e-30),
                "D[{m}][{n}]: got {g}, want {want}"
            );
        }
    }
}

#[test]
fn mxf8f6f4_sf_tile_in_smem_through_cp_scales_every_row_column_and_k_block() {
    let mut r = Rng(2);
    let fp8 = |r: &mut Rng, n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                let v = r.next() as u8;
                if v & 0x7f == 0x7f { 0x38 } else { v } // no NaN
            })
            .collect()
    };
    let (a, b) = (fp8(&mut r, 128 * 128), fp8(&mut r, 256 * 128));
    // ue8m0 2^-7..2^7, a different scale for every row and K block. K =
    // 128 = 4 MMAs of 32 = SF columns 0..4 (one atom; the tiles' other
    // atoms hold scales no MMA may read).
    let (sa, sb) = (
        scale_codes(&mut r, 128, 120, 15),
        scale_codes(&mut r, 256, 120, 15),
    );
    let got = run_block_scaled(&a, &b, &sa, &sb, |d, da, db| {
        let (sfa, sfb) = chain_sf_tmem(d, 0);
        for k in 0..4 {
            let idesc = BlockScaledDescriptor::mxf8f6f4(
                BlockScaledType::E4m3,
                BlockScaledType::E4m3,
                128,
                256,
            )
            .with_scale_ids(k, k);
            unsafe {
                mma_mxf8f6f4_ss(
                    d,
                    da.advance(32 * k),
                    db.advance(32 * k),
                    idesc,
                    sfa,
                    sfb,
                    k > 0,
                )
            };
        }
    });
    check_terms(&got, 128, |m, n, k| {
        E4m3::from_bits(a[m * 128 + k]).to_f64()
            * E4m3::from_bits(b[n * 128 + k]).to_f64()
            * Ue8m0::from_bits(sa[m][k / 32]).to_f64()
            * Ue8m0::from_bits(sb[n][k / 32]).to_f64()
    });
}

#[test]
fn mxf4nvf4_sf_tile_in_smem_through_cp_scales_every_row_column_and_k_block() {
    let mut r = Rng(3);
    let bytes = |r: &mut Rng, n: usize| -> Vec<u8> { (0..n).map(|_| r.next() as u8).collect() };
    let (a, b) = (bytes(&mut r, 128 * 128), bytes(&mut r, 256 * 128));
    // K = 256 e2m1 per row = 4 MMAs of 64; ue4m3 1/4..4, one per 16 K:
    // 16 SF columns, MMA `k` reading K atom `k`.
    let (sa, sb) = (
        scale_codes(&mut r, 128, 0x28, 0x20),
        scale_codes(&mut r, 256, 0x28, 0x20),
    );
    let got = run_block_scaled(&a, &b, &sa, &sb, |d, da, db| {
        let idesc = BlockScaledDescriptor::nvf4(ScaleType::Ue4m3, 128, 256);
        for k in 0..4 {
            let (sfa, sfb) = chain_sf_tmem(d, k);
            unsafe {
                mma_mxf4nvf4_ss(
                    d,
                    da.advance(32 * k),
                    db.advance(32 * k),
                    idesc,
                    sfa,
                    sfb,
                    k > 0,
                )
            };
        }
    });
    let fp4 = |m: &[u8], row: usize, k: usize| {
        E2m1::from_bits((m[row * 128 + k / 2] >> (4 * (k % 2))) & 0xF).to_f64()
    };
    check_terms(&got, 256, |m, n, k| {
        fp4(&a, m, k)
            * fp4(&b, n, k)
            * Ue4m3::from_bits(sa[m][k / 16]).to_f64()
            * Ue4m3::from_bits(sb[n][k / 16]).to_f64()
    });
}

#[test]
fn block_scaled_mma_requires_scale_factors_in_all_four_lane_partitions() {
    // Scale factors stored by one warp (`tcgen05.st` reaches its own 32
    // lanes only) instead of `tcgen05.cp ... warpx4`: the ISA requires the
    // copies in every 32-lane partition, the simulation refuses.
    expect_panic("not duplicated to all four 32-lane partitions", |_s| {
        let block = CpuBlock::new(smem());
        block.run_warps(1, |_w, s| {
            let s = s.get();
            let slot = SharedRef::from_ref(unsafe { &*s.tmem.as_ptr() });
            unsafe { tmem::alloc::<256>(slot) };
            let d = TmemAddr(s.tmem.load(Ordering::Relaxed));
            for lane in 0..32 {
                unsafe { tmem::st_32x32b_x8(d.offset(lane, 128), [0x7f7f_7f7f; 8]) };
            }
            let desc = SmemDescriptor::new(
                smem_addr(SharedRef::from_ref(&s.a)),
                SmemLayout::Swizzle128B,
                16,
                1024,
            );
            let idesc = BlockScaledDescriptor::mxf8f6f4(
                BlockScaledType::E4m3,
                BlockScaledType::E4m3,
                128,
                128,
            );
            unsafe {
                mma_mxf8f6f4_ss(
                    d,
                    desc,
                    desc,
                    idesc,
                    d.offset(0, 128),
                    d.offset(0, 132),
                    false,
                )
            };
        });
    });
}

#[test]
fn interleave_descriptor_reads_core_matrices_and_cp_replicates_quarters() {
    // A/B written by hand in the no-swizzle K-major core-matrix layout
    // (LBO 128 between the two K halves, SBO 256 between 8-row groups).
    let block = CpuBlock::new(smem());
    block.run_warps(1, |_w, s| {
        let s = s.get();
        let put = |t: &Tile<u8, 128, 128>, row: usize, k: usize, v: f32| {
            let off = (row / 8) * 256 + (k / 8) * 128 + (row % 8) * 16 + (k % 8) * 2;
            let bytes = Bf16::from_f32(v).0.to_le_bytes();
            unsafe {
                t.with_mut_ptr(|p| {
                    *p.add(off) = bytes[0];
                    *p.add(off + 1) = bytes[1];
                })
            };
        };
        for row in 0..128 {
            for k in 0..16 {
                put(&s.a, row, k, (row * 16 + k) as f32 % 7.0 - 3.0);
            }
        }
        for row in 0..16 {
            for k in 0..16 {
                put(&s.b, row, k, (row + 2 * k) as f32 % 5.0 - 2.0);
            }
        }
        let slot = SharedRef::from_ref(unsafe { &*s.tmem.as_ptr() });
        unsafe { tmem::alloc::<32>(slot) };
        let d = TmemAddr(s.tmem.load(Ordering::Relaxed));
        let desc = |t: &Tile<u8, 128, 128>| {
            SmemDescriptor::new(
                smem_addr(SharedRef::from_ref(t)),
                SmemLayout::Interleave,
                128,
                256,
            )
        };
        let idesc = InstrDescriptor::f16(F16Type::Bf16, AccType::F32, 128, 16, Major::K, Major::K);
        unsafe { mma_f16_ss(d, desc(&s.a), desc(&s.b), idesc, false) };
        for row in [0u32, 37, 127] {
            let v = unsafe { tmem::ld_32x32b_x16(d.offset(row, 0)) };
            for n in 0..16u32 {
                let want: f32 = (0..16)
                    .map(|k| ((row * 16 + k) as f32 % 7.0 - 3.0) * ((n + 2 * k) as f32 % 5.0 - 2.0))
                    .sum();
                assert_eq!(f32::from_bits(v[n as usize]), want, "D[{row}][{n}]");
            }
        }
        // tcgen05.cp 32x128b.warpx4: 32 rows of 16 bytes (row r of the
        // descriptor's core matrices) into every lane quarter.
        unsafe { tmem::cp_32x128b_warpx4(d.offset(0, 16), desc(&s.a)) };
        for q in 0..4u32 {
            let v = unsafe { tmem::ld_32x32b_x4(d.offset(32 * q + 9, 16)) };
            let want: Vec<u8> = (0..16)
                .map(|j| unsafe { s.a.with_ptr(|p| *p.add(256 + 16 + j)) })
                .collect();
            assert_eq!(
                v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
                want,
                "quarter {q}"
            );
        }
        unsafe { tmem::dealloc::<32>(d) };
    });
}

#[test]
fn pair_mma_splits_m_and_n_across_two_ctas_and_multicasts_the_commit() {
    // M = 256 (128 rows of A per CTA), N = 32 (16 rows of B per CTA), K = 16.
    let cluster = CpuCluster::new([smem(), smem()]);
    let a_val = |rank: u32, row: u32, k: u32| ((rank * 128 + row + 3 * k) % 9) as f32 - 4.0;
    let b_val = |n: u32, k: u32| ((n * 5 + k) % 7) as f32 - 3.0;
    cluster.run_warps(1, |w, s| {
        let rank = w.cta_rank();
        let s = s.get();
        let put = |t: &Tile<u8, 128, 128>, row: u32, k: u32, v: f32| {
            let off = (row / 8) * 256 + (k / 8) * 128 + (row % 8) * 16 + (k % 8) * 2;
            let bytes = Bf16::from_f32(v).0.to_le_bytes();
            unsafe {
                t.with_mut_ptr(|p| {
                    *p.add(off as usize) = bytes[0];
                    *p.add(off as usize + 1) = bytes[1];
                })
            };
        };
        for row in 0..128 {
            for k in 0..16 {
                put(&s.a, row, k, a_val(rank, row, k));
            }
        }
        for row in 0..16 {
            for k in 0..16 {
                put(&s.b, row, k, b_val(rank * 16 + row, k));
            }
        }
        let mbar = BarrierRef::new(SharedRef::from_ref(&s.mma));
        unsafe { mbar.init(1) };
        let slot = SharedRef::from_ref(unsafe { &*s.tmem.as_ptr() });
        unsafe { tmem::alloc_pair::<32>(slot) };
        cluster_sync();
        let d = TmemAddr(s.tmem.load(Ordering::Relaxed));
        if rank == 0 {
            let desc = |t: &Tile<u8, 128, 128>| {
                SmemDescriptor::new(
                    smem_addr(SharedRef::from_ref(t)),
                    SmemLayout::Interleave,
                    128,
                    256,
                )
            };
            let idesc =
                InstrDescriptor::f16_pair(F16Type::Bf16, AccType::F32, 256, 32, Major::K, Major::K);
            unsafe { mma_f16_ss_pair(d, desc(&s.a), desc(&s.b), idesc, false) };
            unsafe { mma::commit_pair_multicast(mbar, 0b11) };
        }
        mbar.wait_parity(0, || {
            unreachable!("the leader's multicast commit arrives here")
        });
        for row in [0u32, 77, 127] {
            let v = unsafe { tmem::ld_32x32b_x32(d.offset(row, 0)) };
            for n in 0..32 {
                let want: f32 = (0..16).map(|k| a_val(rank, row, k) * b_val(n, k)).sum();
                assert_eq!(
                    f32::from_bits(v[n as usize]),
                    want,
                    "CTA {rank} D[{row}][{n}]"
                );
            }
        }
        cluster_sync();
        unsafe { tmem::dealloc_pair::<32>(d) };
    });
}

#[test]
fn pair_block_scaled_mma_uses_each_ctas_own_sfa_and_the_full_sfb() {
    // cta_group::2 MXFP8, M = 256 (128 rows of A per CTA), N = 64 (32 rows
    // of B per CTA), K = 32. Each CTA holds the scale factors of its own
    // rows of A and of every row of B (the same SFB atom in both CTAs), as
    // `tcgen05.cp.cta_group::2` copies each CTA's shared memory into its
    // own TMEM.
    let new_smem = || BsSmem {
        a: Tile::new(),
        b: Tile::new(),
        sfa: Tile::new(),
        sfb: Tile::new(),
        tma: MbarrierCell::new(),
        mma: MbarrierCell::new(),
        tmem: AtomicU32::new(0),
    };
    let cluster = CpuCluster::new([new_smem(), new_smem()]);
    let a_val = |rank: u32, row: u32, k: u32| (((rank * 128 + row) * 7 + 3 * k) % 13) as f32 - 6.0;
    let b_val = |n: u32, k: u32| ((n * 5 + k) % 9) as f32 - 4.0;
    let sa = |rank: u32, row: u32| 124 + ((rank * 128 + row) * 5 % 7) as u8;
    let sb = |n: u32| 123 + (n * 3 % 8) as u8;
    cluster.run_warps(1, |w, s| {
        let rank = w.cta_rank();
        let s = s.get();
        // No swizzle, K-major core matrices: K = 32 bytes = two 16-byte
        // halves 128 bytes apart (LBO), 8-row groups 256 bytes apart (SBO).
        let put = |t: *const u8, row: u32, k: u32, v: f32| {
            let off = (row / 8) * 256 + (k / 16) * 128 + (row % 8) * 16 + k % 16;
            unsafe { (t as *mut u8).add(off as usize).write(E4m3::from_f32(v).0) };
        };
        let sf = |t: *const u8, row: u32, code: u8| unsafe {
            (t as *mut u8)
                .add(sf_tile_offset(row as usize, 0, CHAIN_SFK))
                .write(code)
        };
        for row in 0..128 {
            for k in 0..32 {
                put(&s.a as *const _ as *const u8, row, k, a_val(rank, row, k));
            }
            sf(&s.sfa as *const _ as *const u8, row, sa(rank, row));
        }
        for row in 0..32 {
            for k in 0..32 {
                put(
                    &s.b as *const _ as *const u8,
                    row,
                    k,
                    b_val(rank * 32 + row, k),
                );
            }
        }
        for n in 0..64 {
            sf(&s.sfb as *const _ as *const u8, n, sb(n));
        }
        let mbar = BarrierRef::new(SharedRef::from_ref(&s.mma));
        unsafe { mbar.init(1) };
        let slot = SharedRef::from_ref(unsafe { &*s.tmem.as_ptr() });
        unsafe { tmem::alloc_pair::<128>(slot) };
        cluster_sync();
        let d = TmemAddr(s.tmem.load(Ordering::Relaxed));
        if rank == 0 {
            let desc = |t: *const u8, layout, lbo, sbo| {
                SmemDescriptor::new(
                    smem_addr(SharedRef::from_ref(unsafe { &*t })),
                    layout,
                    lbo,
                    sbo,
                )
            };
            let (sfa, sfb) = (d.offset(0, 64), d.offset(0, 68));
            unsafe {
                tmem::cp_32x128b_warpx4_pair(
                    sfa,
                    desc(
                        &s.sfa as *const _ as *const u8,
                        SmemLayout::Interleave,
                        0,
                        128,
                    ),
                );
                tmem::cp_32x128b_warpx4_pair(
                    sfb,
                    desc(
                        &s.sfb as *const _ as *const u8,
                        SmemLayout::Interleave,
                        0,
                        128,
                    ),
                );
                let idesc = BlockScaledDescriptor::mxf8f6f4_pair(
                    BlockScaledType::E4m3,
                    BlockScaledType::E4m3,
                    256,
                    64,
                );
                mma_mxf8f6f4_ss_pair(
                    d,
                    desc(
                        &s.a as *const _ as *const u8,
                        SmemLayout::Interleave,
                        128,
                        256,
                    ),
                    desc(
                        &s.b as *const _ as *const u8,
                        SmemLayout::Interleave,
                        128,
                        256,
                    ),
                    idesc,
                    sfa,
                    sfb,
                    false,
                );
                mma::commit_pair_multicast(mbar, 0b11);
            }
        }
        mbar.wait_parity(0, || {
            unreachable!("the leader's multicast commit arrives here")
        });
        for (row, c) in [0u32, 45, 127]
            .into_iter()
            .flat_map(|r| [(r, 0u32), (r, 32)])
        {
            let v = unsafe { tmem::ld_32x32b_x32(d.offset(row, c)) };
            for j in 0..32u32 {
                let n = c + j;
                let want: f64 = (0..32)
                    .map(|k| a_val(rank, row, k) as f64 * b_val(n, k) as f64)
                    .sum::<f64>()
                    * Ue8m0::from_bits(sa(rank, row)).to_f64()
                    * Ue8m0::from_bits(sb(n)).to_f64();
                assert_eq!(
                    f32::from_bits(v[j as usize]) as f64,
                    want,
                    "CTA {rank} D[{row}][{n}]"
                );
            }
        }
        cluster_sync();
        unsafe { tmem::dealloc_pair::<128>(d) };
    });
}

#[test]
fn commit_arrives_once_per_barrier_in_the_mask() {
    let cluster = CpuCluster::new((0..3).map(|_| MbarrierCell::new()));
    cluster.run_warps(1, |w, cell| {
        let bar = BarrierRef::new(cell);
        // CTAs 0 and 2 expect two commits (one plain from CTA 0, one
        // multicast from CTA 1); CTA 1 expects one (its own plain commit).
        unsafe { bar.init(if w.cta_rank() == 1 { 1 } else { 2 }) };
        cluster_sync();
        match w.cta_rank() {
            0 => unsafe { mma::commit(bar) },
            1 => unsafe {
                mma::commit_multicast(bar, 0b101);
                mma::commit(bar)
            },
            _ => unsafe { mma::commit(bar) },
        }
        bar.wait_parity(0, || unreachable!());
        cluster_sync();
        assert_eq!(
            bar.current_parity(),
            1,
            "exactly one phase: no extra arrivals"
        );
    });
}

fn expect_panic(msg: &str, body: impl Fn(SharedRef<'_, u32>) + Sync) {
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        CpuBlock::new(AtomicU32::new(0)).run_warps(1, |_w, s| {
            body(SharedRef::from_ref(unsafe { &*s.get().as_ptr() }))
        })
    }))
    .expect_err("must panic");
    let text = err
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        text.contains(msg),
        "panic {text:?} does not mention {msg:?}"
    );
}

#[test]
fn tmem_allocator_reports_misuse() {
    expect_panic("exits with TMEM columns still allocated", |s| unsafe {
        tmem::alloc::<64>(s)
    });
    expect_panic("not allocated as such", |s| unsafe {
        tmem::alloc::<64>(s);
        let a = TmemAddr(s.get().to_owned());
        tmem::dealloc::<64>(a);
        tmem::dealloc::<64>(a);
    });
    expect_panic("over-allocation", |s| unsafe {
        tmem::alloc::<512>(s);
        tmem::alloc::<32>(s);
    });
    expect_panic("power of two", |s| unsafe { tmem::alloc::<48>(s) });
    expect_panic("after relinquish", |s| unsafe {
        tmem::relinquish_alloc_permit();
        tmem::alloc::<32>(s);
    });
    expect_panic("not allocated", |_s| unsafe {
        let _ = tmem::ld_32x32b_x1(TmemAddr(0));
    });
    expect_panic("needs a simulated CTA", |_s| {
        std::thread::scope(|sc| {
            sc.spawn(|| unsafe {
                tmem::wait_ld();
                let _ = tmem::ld_32x32b_x1(TmemAddr(0));
            })
            .join()
            .map_err(std::panic::resume_unwind)
            .unwrap()
        });
    });
}
