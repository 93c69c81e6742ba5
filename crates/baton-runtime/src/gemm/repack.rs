//! Re-packing one BF16 operand at a 128-byte row stride before the GEMM.
//!
//! The Hopper kernels load A and B through TMA in boxes whose rows are 128
//! bytes of K. When an operand's rows start a multiple of 128 bytes apart,
//! each box row is one 128-byte line of L2; otherwise (K = 2056: rows 4112
//! bytes apart) most box rows straddle two lines, and the L2 serves about
//! half the operand bytes per second ([`Machine::l2_unaligned_bytes_per_s`]
//! against [`Machine::l2_bytes_per_s`]). On compute-bound shapes that makes
//! the kernel L2-bound: session 16 measured 16384×4104×K at 0.386 ms for
//! K = 2048 and 0.512 ms for K = 2056 (ncu: 44.6 M L2 requests against 22 M).
//!
//! A plan can copy one operand (the one whose loads cost the most L2 time
//! per byte copied, usually the smaller) into a buffer it owns with rows
//! [`REPACK_ROW_BYTES`]-aligned, once per [`GemmPlan::run`](super::GemmPlan::run),
//! on the same stream, before the GEMM reads it. The cost model prices both
//! sides ([`plan_with_repack`]): the copy's DRAM traffic plus a launch
//! ([`repack_us`]) against the L2 time it saves; the heuristic re-packs only
//! where the estimate falls by at least [`REPACK_MIN_GAIN`].
//!
//! The copy is baton's own kernel, `baton_pitched_copy`
//! ([`crate::pitched_copy`]): 16-byte vector loads and stores (a GEMM
//! operand's rows are 16-byte aligned: TMA needs it) over every row's
//! chunks, a grid-stride loop on up to 8 blocks of 256 threads per SM. The
//! plan looks the kernel up when it is made (a module without it is an
//! error then, [`Error::UnknownKernel`](crate::Error::UnknownKernel), never
//! a silent fallback) and launches it on the GPU's stream, so a captured
//! graph replays the copy with the GEMM. Only the `K` columns of each row
//! are written: the padding up to the 128-byte stride stays as allocated
//! (zeros), and the GEMM's tensor maps, `K` columns wide at the re-packed
//! stride, never read it.

use super::GemmConfig;
use super::cost_model::{Machine, Problem, TileCost};
use super::heuristic::PlanGpu;
use super::operand::RowMajorOperand;
use crate::Result;
use crate::pitched_copy::{CopyKernel, PitchedCopy};
use cudarc::driver::CudaStream;

/// Which operand a plan re-packs: A (M×K) or B (N×K), both K-major.
///
/// ```
/// use baton_runtime::gemm::Repack;
/// assert_ne!(Repack::A, Repack::B);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repack {
    /// A (M×K): its M rows are copied.
    A,
    /// B (N×K): its N rows are copied.
    B,
}

/// The row stride, in bytes, a re-packed operand's rows are aligned to (one
/// L2 line: a TMA box row of 128 bytes then reads one line).
pub const REPACK_ROW_BYTES: usize = 128;

/// The fixed cost of the copy's launch, µs (predicted: one kernel launch,
/// `baton_pitched_copy`, enqueued ahead of the GEMM on the same stream).
pub const REPACK_LAUNCH_US: f64 = 2.0;

/// The bytes per second (read + written) the copy moves: fitted to
/// `baton_pitched_copy` with [`REPACK_LAUNCH_US`] (session 17, H100, `baton
/// bench repack --row-bytes 4112`, rows 2048 to 65536: 8.6 µs for 17.3 MB
/// up to 208 µs for 552 MB, 2.4–2.7 TB/s after the launch; the flat
/// device-to-device copy of the same bytes ran 1.9–3.0 TB/s, the driver's
/// pitched copy `cuMemcpy2DAsync`, which the plans used before, 1.1–1.4).
/// `docs/runs/2026-11-28-s17/call3/repack-bench.txt`.
pub const REPACK_BYTES_PER_S: f64 = 2.5e12;

/// The least relative gain in the estimate for which the heuristic
/// re-packs (the copy needs memory and a launch: not for a coin flip).
pub const REPACK_MIN_GAIN: f64 = 0.03;

/// The row stride, in BF16 elements, of a re-packed operand whose rows hold
/// `cols` elements: the next multiple of [`REPACK_ROW_BYTES`].
///
/// ```
/// use baton_runtime::gemm::repacked_ld;
/// assert_eq!(repacked_ld(2056), 2112);
/// assert_eq!(repacked_ld(2048), 2048);
/// ```
pub const fn repacked_ld(cols: usize) -> usize {
    cols.next_multiple_of(REPACK_ROW_BYTES / 2)
}

/// The estimated time of re-packing a `rows × cols` BF16 operand, µs:
/// [`REPACK_LAUNCH_US`] plus reading it and writing the copy at
/// [`REPACK_BYTES_PER_S`] (the machine's DRAM rate if that is lower).
///
/// ```
/// use baton_runtime::gemm::repack_us;
/// use baton_runtime::gemm::cost_model::Machine;
/// let m = Machine::H100_BF16;
/// // 4104 × 2056 bf16: 16.9 MB read, 17.3 MB written.
/// let want = 2.0 + (4104.0 * 2056.0 * 2.0 + 4104.0 * 2112.0 * 2.0) / 2.5e12 * 1e6;
/// assert!((repack_us(4104, 2056, &m) - want).abs() < 1e-9);
/// ```
pub fn repack_us(rows: usize, cols: usize, machine: &Machine) -> f64 {
    let bytes = (rows * cols * 2 + rows * repacked_ld(cols) * 2) as f64;
    REPACK_LAUNCH_US + bytes / REPACK_BYTES_PER_S.min(machine.dram_bytes_per_s) * 1e6
}

/// The heuristic's plan for a BF16 problem whose operand rows may be
/// misaligned: configuration, split-K count, the operand re-packed (if
/// any) and the estimate, copy included.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RepackPlan {
    /// The tile configuration.
    pub config: GemmConfig,
    /// Split-K workers per unit (1: whole).
    pub splits: u32,
    /// The operand copied to rows [`REPACK_ROW_BYTES`]-aligned, if any.
    pub repack: Option<Repack>,
    /// The cost model's estimate of the chosen plan.
    pub cost: TileCost,
}

/// The sm_90a plan of an M×N×K BF16 GEMM whose A and B rows lie `a_ld` and
/// `b_ld` elements apart: the least estimate of
/// [`GemmConfig::plan_among_for`] over the operands as given, A re-packed
/// and B re-packed (each only where its rows are not
/// [`REPACK_ROW_BYTES`]-aligned; its copy priced by [`repack_us`]), a
/// re-packed plan taken only if it gains at least [`REPACK_MIN_GAIN`].
///
/// ```
/// use baton_runtime::gemm::{GemmConfig, Repack, plan_with_repack};
/// let slots = |c: GemmConfig| 132 / c.cluster_m();
/// // 16384×4104×2056: L2-bound on rows of 4112 bytes; copying B (17 MB) pays.
/// let p = plan_with_repack(16384, 4104, 2056, (2056, 2056), false, slots);
/// assert_eq!(p.repack, Some(Repack::B));
/// // 64 rows: DRAM-bound, the copy would cost more than it saves.
/// assert_eq!(plan_with_repack(64, 4104, 2056, (2056, 2056), false, slots).repack, None);
/// // Aligned rows: nothing to re-pack.
/// assert_eq!(plan_with_repack(16384, 4104, 2048, (2048, 2048), false, slots).repack, None);
/// ```
pub fn plan_with_repack(
    m: usize,
    n: usize,
    k: usize,
    (a_ld, b_ld): (usize, usize),
    has_c: bool,
    gpu: impl PlanGpu + Copy,
) -> RepackPlan {
    let machine = gpu.machine();
    let candidates = GemmConfig::candidates_for_operands(m, has_c);
    let given = Problem::bf16(m, n, k).with_row_bytes(2.0 * a_ld as f64, 2.0 * b_ld as f64);
    let plan = |p: &Problem, repack| {
        let (config, cost) = GemmConfig::plan_among_for(&candidates, p, gpu);
        RepackPlan {
            config,
            splits: cost.splits as u32,
            repack,
            cost,
        }
    };
    let mut best = plan(&given, None);
    let aligned = |ld: usize| (2 * ld).is_multiple_of(REPACK_ROW_BYTES);
    let repacked_bytes = 2.0 * repacked_ld(k) as f64;
    let options = [
        (
            Repack::A,
            !aligned(a_ld),
            m,
            given.with_row_bytes(repacked_bytes, given.b_row_bytes),
        ),
        (
            Repack::B,
            !aligned(b_ld),
            n,
            given.with_row_bytes(given.a_row_bytes, repacked_bytes),
        ),
    ];
    let bar = best.cost.estimate_us() * (1.0 - REPACK_MIN_GAIN);
    for (which, misaligned, rows, p) in options {
        if !misaligned {
            continue;
        }
        let candidate = plan(&p.with_repack_us(repack_us(rows, k, &machine)), Some(which));
        if candidate.cost.estimate_us() < bar.min(best.cost.estimate_us()) {
            best = candidate;
        }
    }
    best
}

/// Enqueues the copy of `src` (one matrix, K-major, `rows × cols` BF16)
/// into `dst_address` with rows `dst_ld` elements apart, on `stream`, by
/// `copier` (`baton_pitched_copy`): the `cols` elements of each row,
/// nothing of the padding after them. Errors before anything is enqueued
/// when the copy is refused ([`PitchedCopy::params`]: `dst_ld < cols`, the
/// destination overlapping `src`); [`Error::Launch`](crate::Error::Launch)
/// when the driver refuses the launch.
///
/// # Safety
/// `src` must describe a live device matrix and `dst_address` a live device
/// buffer of at least `(rows − 1) · dst_ld + cols` elements that nothing
/// else reads or writes until the work enqueued after this on `stream` is
/// done.
pub(crate) unsafe fn enqueue_copy(
    stream: &CudaStream,
    copier: &CopyKernel,
    src: &RowMajorOperand,
    dst_address: u64,
    dst_ld: u64,
) -> Result<()> {
    let elem = src.elem.bytes() as u64;
    let copy = PitchedCopy {
        dst: dst_address,
        dst_pitch: elem * dst_ld,
        src: src.address,
        src_pitch: elem * src.ld,
        row_bytes: elem * src.cols,
        rows: src.rows,
    };
    // SAFETY: the caller's contract: both ranges are live device memory of
    // the sizes above, ordered on `stream`.
    unsafe { copier.enqueue(stream, &copy) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::cost_model::TileShape;
    use crate::gemm::cost_model::tests::close;

    /// 4096×4104×2056 on 128×256 pairs (66 slots): 16 × 17 = 272 units, 544
    /// tiles, 33 K blocks of 64 (2112 of K loaded); per tile 128 A rows and
    /// 128 B rows (half of 256, multicast) of 2112 × 2 bytes = 540,672
    /// bytes each. As given both run at the unaligned rate; B re-packed, its
    /// half at the aligned rate.
    #[test]
    fn a_repacked_operand_loads_at_the_aligned_rate_by_hand() {
        let m = Machine::H100_BF16;
        let t = TileShape {
            bm: 128,
            bn: 256,
            bk: 64,
            cluster_m: 2,
            speed: 1.0,
        };
        let given = Problem::bf16(4096, 4104, 2056);
        let half = 544.0 * 540_672.0;
        let c = t.cost(&given, &m, 66);
        assert!(close(c.l2_us, 2.0 * half / 4.55e12 * 1e6), "{c:?}");
        let b_repacked = given
            .with_row_bytes(4112.0, 4224.0)
            .with_repack_us(repack_us(4104, 2056, &m));
        let r = t.cost(&b_repacked, &m, 66);
        assert!(
            close(r.l2_us, (half / 4.55e12 + half / 11.6e12) * 1e6),
            "{r:?}"
        );
        // The copy is on the estimate, outside the max of the floors.
        assert_eq!(r.repack_us, repack_us(4104, 2056, &m));
        assert!(close(
            r.estimate_us(),
            r.math_us.max(r.dram_us).max(r.l2_us) + r.repack_us
        ));
        // Same math and DRAM: the re-packed operand is the same bytes.
        assert_eq!((r.math_us, r.dram_us), (c.math_us, c.dram_us));
    }

    /// The heuristic re-packs only a misaligned operand, and only where
    /// the copy pays: at 16384 rows it copies B (17 MB, the smaller one);
    /// with B's rows already 128-byte aligned (a strided view) it copies
    /// A or nothing, never B; with both aligned, nothing.
    #[test]
    fn the_copy_is_taken_only_where_it_pays() {
        let slots = |c: GemmConfig| 132 / c.cluster_m();
        let p = plan_with_repack(16384, 4104, 2056, (2056, 2056), false, slots);
        assert_eq!(p.repack, Some(Repack::B));
        let aligned = plan_with_repack(16384, 4104, 2056, (2112, 2112), false, slots);
        assert_eq!(aligned.repack, None);
        // Copying costs more than reading aligned rows in place.
        assert!(p.cost.estimate_us() > aligned.cost.estimate_us());
        let b_aligned = plan_with_repack(16384, 4104, 2056, (2056, 2112), false, slots);
        assert_ne!(b_aligned.repack, Some(Repack::B));
        // 64 rows: DRAM-bound, no copy pays.
        assert_eq!(
            plan_with_repack(64, 4104, 2056, (2056, 2056), false, slots).repack,
            None
        );
    }
}
