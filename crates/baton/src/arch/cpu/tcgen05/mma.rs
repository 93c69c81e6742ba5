//! Simulated `tcgen05.mma` (kind f16, mxf8f6f4, mxf4nvf4; one CTA and CTA
//! pairs) and `tcgen05.commit` (see the [parent module](super) for the CPU
//! conventions).

use super::{operand_offset, smem_byte};
use crate::arch::cpu::BarrierRef;
use crate::arch::cpu::cluster::{CtaWindow, with_cta};
use crate::arch::tmem_addr::TmemAddr;
use crate::numeric::{Bf16, E2m1, E4m3, E5m2, F16, SmallFloat, Ue4m3, Ue8m0};

pub use crate::arch::tcgen05_desc::{
    AccType, BlockScaledDescriptor, BlockScaledKind, BlockScaledType, F16Type, InstrDescriptor,
    Major, ScaleType, SmemDescriptor, SmemLayout,
};

/// Element formats the simulated MMAs read.
#[derive(Clone, Copy)]
enum Elem {
    F16,
    Bf16,
    E4m3,
    E5m2,
    E2m1,
}

impl Elem {
    fn bits(self) -> u32 {
        match self {
            Elem::F16 | Elem::Bf16 => 16,
            Elem::E4m3 | Elem::E5m2 => 8,
            Elem::E2m1 => 4,
        }
    }
}

/// Element `(row, k)` of a K-major operand described by `desc` in `cta`.
fn element(cta: &CtaWindow, desc: SmemDescriptor, e: Elem, row: u32, k: u32) -> f64 {
    let kbit = k * e.bits();
    let byte = |i: u32| smem_byte(cta, operand_offset(desc, row, kbit / 8 + i));
    match e {
        Elem::F16 => F16::from_bits(u16::from_le_bytes([byte(0), byte(1)])).to_f64(),
        Elem::Bf16 => Bf16::from_bits(u16::from_le_bytes([byte(0), byte(1)])).to_f64(),
        Elem::E4m3 => E4m3::from_bits(byte(0)).to_f64(),
        Elem::E5m2 => E5m2::from_bits(byte(0)).to_f64(),
        // Element 0 of a byte is its low nibble.
        Elem::E2m1 => E2m1::from_bits((byte(0) >> (kbit % 8)) & 0xF).to_f64(),
    }
}

/// Per-element scales of one MMA as seen by one CTA of the issuing group:
/// `scales(cta)` = (A's, `rows_a × k`; B's, `n × k`), row-major. `None`:
/// every scale is 1 (kind::f16).
type Scales<'s> = Option<&'s dyn Fn(&CtaWindow) -> (Vec<f64>, Vec<f64>)>;

/// `D (+)= Σ_k A[m][k]·B[n][k]·scale` over the CTAs of the issuing group:
/// CTA `ranks[h]` holds rows `h·M/ranks.len()..` of A and D and rows
/// `h·N/ranks.len()..` of B; each CTA's rows of D use the scales that CTA
/// holds (its own rows of A, every row of B).
#[allow(clippy::too_many_arguments)]
fn run_mma(
    what: &str,
    d: TmemAddr,
    a: SmemDescriptor,
    b: SmemDescriptor,
    (ea, eb): (Elem, Elem),
    (m, n, k): (u32, u32, u32),
    pair: bool,
    scales: Scales<'_>,
    accumulate: bool,
) {
    with_cta(what, |_, cluster, rank| {
        let ranks: Vec<u32> = if pair {
            assert!(
                rank % 2 == 0 && rank + 1 < cluster.ctas.len() as u32,
                "baton cpu tcgen05: {what} (cta_group::2) is issued by the even CTA of a pair; CTA {rank} of a cluster of {}",
                cluster.ctas.len()
            );
            vec![rank, rank + 1]
        } else {
            vec![rank]
        };
        let g = ranks.len() as u32;
        let (rows_a, rows_b) = (m / g, n / g);
        assert!(
            rows_a <= 128,
            "baton cpu tcgen05: {what}: M / CTAs must be at most 128"
        );
        assert_eq!(
            d.lane(),
            0,
            "baton cpu tcgen05: {what}: the accumulator starts at lane 0"
        );
        // B rows, gathered from every CTA of the group.
        let b_raw: Vec<f64> = (0..n * k)
            .map(|x| {
                let (row, kk) = (x / k, x % k);
                let cta = &cluster.ctas[ranks[(row / rows_b) as usize] as usize];
                element(cta, b, eb, row % rows_b, kk)
            })
            .collect();
        for &r in &ranks {
            let cta = &cluster.ctas[r as usize];
            // Scales are read before the MMA takes the accumulator's lock.
            let (sa, sb) = match scales {
                Some(f) => f(cta),
                None => (
                    vec![1.0; (rows_a * k) as usize],
                    vec![1.0; (n * k) as usize],
                ),
            };
            let av: Vec<f64> = (0..rows_a * k)
                .map(|x| element(cta, a, ea, x / k, x % k) * sa[x as usize])
                .collect();
            let bv: Vec<f64> = b_raw.iter().zip(&sb).map(|(v, s)| v * s).collect();
            let mut t = cta.tmem.lock();
            t.check(d.lane() + rows_a - 1, d.column(), n, what);
            for row in 0..rows_a {
                for col in 0..n {
                    let at = t.at(row, d.column() + col);
                    let mut acc = if accumulate {
                        f32::from_bits(t.cells[at]) as f64
                    } else {
                        0.0
                    };
                    for kk in 0..k {
                        acc += av[(row * k + kk) as usize] * bv[(col * k + kk) as usize];
                    }
                    t.cells[at] = (acc as f32).to_bits();
                }
            }
        }
    })
}

fn f16_mma(
    what: &str,
    d: TmemAddr,
    a: SmemDescriptor,
    b: SmemDescriptor,
    idesc: InstrDescriptor,
    acc: bool,
    pair: bool,
) {
    let i = idesc.0;
    assert_eq!(
        (i >> 4) & 3,
        1,
        "baton cpu tcgen05: simulated kind::f16 MMAs accumulate in f32"
    );
    assert_eq!(
        (i >> 15) & 3,
        0,
        "baton cpu tcgen05: simulated MMAs take K-major operands"
    );
    let ty = |code: u32| match code {
        0 => Elem::F16,
        1 => Elem::Bf16,
        c => panic!("baton cpu tcgen05: kind::f16 operand type code {c} is not simulated"),
    };
    let (n, m) = (((i >> 17) & 0x3F) << 3, ((i >> 24) & 0x1F) << 4);
    run_mma(
        what,
        d,
        a,
        b,
        (ty((i >> 7) & 7), ty((i >> 10) & 7)),
        (m, n, 16),
        pair,
        None,
        acc,
    );
}

/// The scale-factor words of `rows` rows of one operand in `cta`'s TMEM
/// from `sf` (lane 0): row `r`'s word is at column `sf.column() + r / 32`,
/// lane `r % 32` of **each** 32-lane partition (PTX ISA, "Block Scaling":
/// scale factors "need to be duplicated to all 32 lane partitions of
/// tensor memory"; the layout figures of "Scale Factor A ID" / "Scale
/// Factor B ID"; CUTLASS `UMMA::tmem_sf_frg`, 4x1 data path). Panics when
/// the four copies differ (the ISA leaves the result undefined) or the
/// cells are not allocated.
fn sf_words(cta: &CtaWindow, sf: TmemAddr, rows: u32, what: &str, operand: &str) -> Vec<u32> {
    assert_eq!(
        sf.lane(),
        0,
        "baton cpu tcgen05: {what}: scale factors of {operand} start at lane 0 (they fill all four lane partitions)"
    );
    let t = cta.tmem.lock();
    (0..rows)
        .map(|r| {
            let col = sf.column() + r / 32;
            let copies: [u32; 4] = core::array::from_fn(|q| {
                let lane = r % 32 + 32 * q as u32;
                t.check(lane, col, 1, "block-scaled MMA scale factor");
                t.cells[t.at(lane, col)]
            });
            assert!(
                copies.iter().all(|&c| c == copies[0]),
                "baton cpu tcgen05: {what}: the scale factors of {operand} row {r} (TMEM column {col}, lane {} of each partition) are not duplicated to all four 32-lane partitions: {copies:08x?} (PTX ISA, Block Scaling; tcgen05.cp .32x128b.warpx4 writes all four)",
                r % 32
            );
            copies[0]
        })
        .collect()
}

/// Per-element scales of `rows` rows × `k` (one MMA's K) read from the
/// scale-factor words: `scale_vec::1X` (mxf8f6f4) takes byte `id` of the
/// word for every K of the MMA ("Scale Factor A/B ID": the byte offset);
/// `scale_vec::4X` (mxf4nvf4) bytes 0..4 for K 0..16, 16..32, ... (id 0).
fn sf_scales(words: &[u32], kind: BlockScaledKind, ty: ScaleType, id: u32, k: u32) -> Vec<f64> {
    let decode = |byte: u8| match ty {
        ScaleType::Ue8m0 => Ue8m0::from_bits(byte).to_f64(),
        ScaleType::Ue4m3 => Ue4m3::from_bits(byte).to_f64(),
    };
    words
        .iter()
        .flat_map(|w| {
            let bytes = w.to_le_bytes();
            (0..k).map(move |kk| {
                decode(match kind {
                    BlockScaledKind::Mxf8f6f4 => bytes[id as usize],
                    BlockScaledKind::Mxf4nvf4 => bytes[(kk / 16) as usize],
                })
            })
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn block_scaled(
    what: &str,
    kind: BlockScaledKind,
    d: TmemAddr,
    a: SmemDescriptor,
    b: SmemDescriptor,
    idesc: BlockScaledDescriptor,
    sfa: TmemAddr,
    sfb: TmemAddr,
    acc: bool,
    pair: bool,
) {
    assert_eq!(
        (idesc.0 >> 15) & 3,
        0,
        "baton cpu tcgen05: simulated MMAs take K-major operands"
    );
    let (ca, cb) = idesc.format_codes();
    let ty = |c: u32| match (kind, c) {
        (BlockScaledKind::Mxf8f6f4, 0) => Elem::E4m3,
        (BlockScaledKind::Mxf8f6f4, 1) => Elem::E5m2,
        (BlockScaledKind::Mxf4nvf4, 1) => Elem::E2m1,
        (_, c) => panic!("baton cpu tcgen05: {what}: operand format code {c} is not simulated"),
    };
    if kind == BlockScaledKind::Mxf4nvf4 {
        assert_eq!(
            idesc.scale_ids(),
            (0, 0),
            "baton cpu tcgen05: {what}: scale_vec::4X uses whole cells (scale ids 0)"
        );
    }
    let (m, n, k) = (idesc.m(), idesc.n(), kind.k());
    let rows_a = if pair { m / 2 } else { m };
    assert_eq!(
        rows_a, 128,
        "baton cpu tcgen05: {what}: only M = 128 per CTA (data path layouts D and A) is simulated for block-scaled MMAs"
    );
    let (a_id, b_id) = idesc.scale_ids();
    let scales = |cta: &CtaWindow| {
        let wa = sf_words(cta, sfa, rows_a, what, "A");
        let wb = sf_words(cta, sfb, n, what, "B");
        (
            sf_scales(&wa, kind, idesc.scale_type(), a_id, k),
            sf_scales(&wb, kind, idesc.scale_type(), b_id, k),
        )
    };
    run_mma(
        what,
        d,
        a,
        b,
        (ty(ca), ty(cb)),
        (m, n, k),
        pair,
        Some(&scales),
        acc,
    );
}

macro_rules! mma_fns {
    ($($(#[$doc:meta])* $name:ident, $pair:literal;)*) => {$(
        $(#[$doc])*
        ///
        /// CPU: runs when issued, reading A and B through their descriptors
        /// from the CTA(s) shared memory; panics on formats or layouts the
        /// simulation does not model, or accumulator columns not allocated.
        ///
        /// # Safety
        /// As the GPU form.
        pub unsafe fn $name(d: TmemAddr, a: SmemDescriptor, b: SmemDescriptor, idesc: InstrDescriptor, accumulate: bool) {
            f16_mma(stringify!($name), d, a, b, idesc, accumulate, $pair)
        }
    )*};
}

mma_fns!(
    /// `tcgen05.mma.cta_group::1.kind::f16`: `D (+)= A·Bᵀ` with bf16/f16
    /// operands (K = 16), f32 accumulators.
    mma_f16_ss, false;
    /// `tcgen05.mma.cta_group::2.kind::f16`, issued by the pair's even CTA:
    /// each CTA's A (M/2 rows) times B (N/2 rows from each CTA) into its
    /// own TMEM.
    mma_f16_ss_pair, true;
);

macro_rules! block_scaled_fns {
    ($($(#[$doc:meta])* $name:ident, $kind:ident, $pair:literal;)*) => {$(
        $(#[$doc])*
        ///
        /// CPU: as [`mma_f16_ss`], each product scaled by A's and B's scale
        /// factors read from TMEM (layout in the [parent module](super)).
        ///
        /// # Safety
        /// As the GPU form.
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $name(d: TmemAddr, a: SmemDescriptor, b: SmemDescriptor, idesc: BlockScaledDescriptor, sfa: TmemAddr, sfb: TmemAddr, accumulate: bool) {
            block_scaled(stringify!($name), BlockScaledKind::$kind, d, a, b, idesc, sfa, sfb, accumulate, $pair)
        }
    )*};
}

block_scaled_fns!(
    /// `kind::mxf8f6f4.block_scale.scale_vec::1X` (MXFP8, K = 32).
    mma_mxf8f6f4_ss, Mxf8f6f4, false;
    /// The CTA-pair MXFP8 MMA.
    mma_mxf8f6f4_ss_pair, Mxf8f6f4, true;
    /// `kind::mxf4nvf4.block_scale.scale_vec::4X` (NVFP4, K = 64).
    mma_mxf4nvf4_ss, Mxf4nvf4, false;
    /// The CTA-pair NVFP4 MMA.
    mma_mxf4nvf4_ss_pair, Mxf4nvf4, true;
);

/// `tcgen05.commit.cta_group::1`: one arrival on `bar` (the MMAs issued
/// before already ran).
///
/// # Safety
/// As the GPU form (the barrier counts this one arrival).
pub unsafe fn commit(bar: BarrierRef<'_>) {
    bar.arrive_count(1);
}

/// `tcgen05.commit…multicast::cluster`: one arrival on the barrier at
/// `bar`'s offset in every CTA of `cta_mask`. Panics on a mask naming CTAs
/// outside the cluster.
///
/// # Safety
/// As the GPU form.
pub unsafe fn commit_multicast(bar: BarrierRef<'_>, cta_mask: u16) {
    crate::arch::cpu::tma::validate_cta_mask(cta_mask);
    for r in (0..16u32).filter(|r| cta_mask >> r & 1 != 0) {
        bar.in_cta(r).arrive_count(1);
    }
}

/// `tcgen05.commit.cta_group::2…multicast::cluster`: as [`commit_multicast`].
///
/// # Safety
/// As the GPU form.
pub unsafe fn commit_pair_multicast(bar: BarrierRef<'_>, cta_mask: u16) {
    // SAFETY: forwarded.
    unsafe { commit_multicast(bar, cta_mask) }
}
