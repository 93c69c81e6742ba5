//! The FP8 GEMMs' in-place A-scale path on the CPU backend's simulated TMA
//! (byte-exact, zero fill included): the host's maps
//! (`TensorMapDesc::vector` over `(K/128 − 1)·ld + M` floats, boxes of a
//! whole box's rows — 132 floats, 68 for 64-row tiles — and of the last
//! tile row's partial box), the producer's loads
//! (`fp8_a_scales::load_a_scales`, the code the kernels run) and the
//! consumers' indexing (`a_scale_offset`, box `i` at
//! `A_SCALE_BOX_STRIDE · i`), for 64-, 128- and 256-row tiles, K-block strides
//! `ld` that are and are not multiples of 4, ragged M, with NaN in the
//! buffer's padding between K blocks and past its end: every row below M
//! reads its own scale (finite), the stage's barrier completes exactly the
//! bytes the kernel expects (`4 · a_scale_floats(a_rows)` on top of A
//! and B), and every index a consumer reads lies inside `a_scales`.

use baton::arch::cpu::tma::TensorMap;
use baton::arch::cpu::{BarrierRef, MbarrierCell};
use baton::smem::SharedRef;
use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
use baton::tile_pipeline::{
    A_SCALE_BOX_ROWS, A_SCALE_BOX_STRIDE, BlockwiseFP8PaddedStage, BlockwiseFP8PaddedTilePayload,
    TilePayload, a_scale_box_floats, a_scale_floats, a_scale_whole_box_rows,
};
use baton_kernel_roles::sm90::fp8_a_scales::{a_scale_offset, load_a_scales};

/// 16-byte aligned host floats (TMA's base alignment), `n` of them, NaN.
fn nan_buffer(n: usize) -> Vec<u128> {
    let nan = f32::NAN.to_bits() as u128;
    vec![nan | nan << 32 | nan << 64 | nan << 96; n.div_ceil(4)]
}

fn floats(buf: &mut [u128]) -> &mut [f32] {
    // SAFETY: u128 storage reinterpreted as 4 f32 each.
    unsafe { core::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut f32, buf.len() * 4) }
}

/// The scale of (row, K block): finite, distinct.
fn scale(row: usize, kb: usize) -> f32 {
    1.0 + row as f32 / 1024.0 + kb as f32
}

fn check<const BM: usize>(m: usize, k_blocks: usize, ld: usize) {
    const BN: usize = 32;
    type Stage<const BM: usize> = BlockwiseFP8PaddedStage<BM, 32, 128>;
    assert!(ld >= m);
    // The caller's buffer [K/128][ld]: scales in columns < M, NaN in the
    // padding between K blocks and in the storage past the vector.
    let len = (k_blocks - 1) * ld + m;
    let mut buf = nan_buffer(len + 64);
    for kb in 0..k_blocks {
        for r in 0..m {
            floats(&mut buf)[kb * ld + r] = scale(r, kb);
        }
    }
    let base = buf.as_ptr() as u64;
    // The host's maps (`Fp8GemmPlan::for_operands`).
    let tail_rows = (m % BM) as u32;
    let sa_tail_rows = tail_rows % A_SCALE_BOX_ROWS;
    let desc = |floats: u32| TensorMapDesc::vector(ElemType::F32, base, len as u64, floats);
    // SAFETY: `buf` outlives the maps.
    let whole = a_scale_whole_box_rows(BM as u32);
    let tma_sa = unsafe { TensorMap::new(desc(a_scale_box_floats(whole))) }.unwrap();
    let tail_box = if sa_tail_rows == 0 {
        A_SCALE_BOX_ROWS
    } else {
        sa_tail_rows
    };
    let tma_sa_tail = unsafe { TensorMap::new(desc(a_scale_box_floats(tail_box))) }.unwrap();
    // The kernels' maps are closures returning the map's address.
    let map = |m: &TensorMap| {
        let p = m as *const TensorMap;
        move || p
    };
    let stage: Box<Stage<BM>> = Box::default();
    let st = SharedRef::from_ref(&*stage);
    let a_only =
        BlockwiseFP8PaddedTilePayload::<BM, BN, 128>::TMA_BYTES - (BM * 128 + BN * 128) as u32;
    assert_eq!(a_only, 4 * a_scale_floats(BM as u32));
    for tm in 0..m.div_ceil(BM) {
        let row0 = tm * BM;
        let a_rows = (m - row0).min(BM) as u32;
        for kb in 0..k_blocks {
            let cell = MbarrierCell::new();
            let bar = BarrierRef::new(SharedRef::from_ref(&cell));
            // SAFETY: a fresh barrier of this thread.
            unsafe { bar.init(1) };
            // The kernel's expect-tx share of the A scales.
            bar.arrive_expect_tx(4 * a_scale_floats(a_rows));
            // SAFETY: the maps describe the vector; the stage is ours.
            unsafe {
                load_a_scales::<BM, BN, 128, _>(
                    st,
                    bar,
                    (map(&tma_sa), map(&tma_sa_tail)),
                    a_rows,
                    row0 as u32,
                    kb as u32,
                    ld as u32,
                )
            };
            assert!(
                bar.try_wait_parity(0),
                "M {m} ld {ld} tile {tm} kb {kb}: the loads completed the expected bytes"
            );
            let off = a_scale_offset(kb as u32, ld as u32) as usize;
            for r in 0..BM {
                let at = A_SCALE_BOX_STRIDE as usize * (r / 128) + off + r % 128;
                // Every index a consumer reads (rows past M too) is inside
                // a_scales.
                assert!(
                    at < 2 * BM,
                    "index {at} outside a_scales of {} floats",
                    2 * BM
                );
                if row0 + r < m {
                    // SAFETY: the loads completed (waited above).
                    let v = unsafe { stage.a_scales.read(Swizzle::None, at / BM, at % BM) };
                    assert_eq!(
                        v,
                        scale(row0 + r, kb),
                        "M {m} ld {ld} BM {BM} tile {tm} kb {kb} row {r}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_scales_in_place_for_any_k_block_stride() {
    for (m, ld) in [
        (66, 66),   // packed, 264-byte rows
        (66, 67),   // odd stride
        (66, 68),   // DeepGEMM's TMA-aligned layout
        (1, 1),     // decode
        (3, 3),     // decode
        (3, 5),     // decode, padded stride
        (130, 130), // one full tile row and a 2-row tail
        (130, 203), // stride not a multiple of 4, much larger than M
        (128, 131), // no tail
        (256, 257), // two full 128-row tiles
        (387, 391), // 256-row tiles: a full one and a 131-row tail (one full + one partial box)
        (200, 201), // 256-row: a 200-row tail
        (255, 255), // 256-row: a 255-row tail (box floats 132 + 128)
    ] {
        for k_blocks in [1, 2, 5] {
            check::<64>(m, k_blocks, ld);
            check::<128>(m, k_blocks, ld);
            check::<256>(m, k_blocks, ld);
        }
    }
}

#[test]
fn every_offset_of_the_first_scale_in_its_granule() {
    // ld ≡ 1, 2, 3 (mod 4) walk the first scale through offsets 0..4.
    for ld in [129, 130, 131, 132] {
        let offs: std::collections::BTreeSet<u32> =
            (0..8).map(|kb| a_scale_offset(kb, ld)).collect();
        let want = if ld % 4 == 0 {
            1
        } else if ld % 2 == 0 {
            2
        } else {
            4
        };
        assert_eq!(offs.len(), want, "ld {ld}");
        check::<128>(ld as usize - 1, 8, ld as usize);
    }
}
