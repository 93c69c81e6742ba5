//! CPU simulation of Hopper's warpgroup MMA (`wgmma`, sm_90a), with the
//! names and signatures of [`ptx::wgmma`](crate::arch) — reached as
//! [`arch::wgmma`](crate::arch::wgmma) on both targets, so one role program
//! compiles for sm_90a and runs here.
//!
//! * **Threads**: a `wgmma` is warpgroup-collective and each of the 128
//!   threads holds its own fragments, so a simulated warpgroup is 128 host
//!   threads, each standing for one GPU thread (one lane for barrier
//!   arrivals), started by [`run_warpgroup`] inside a simulated CTA
//!   ([`CpuBlock::run_warps`](super::CpuBlock::run_warps) /
//!   [`CpuCluster::run_warps`](super::CpuCluster::run_warps)), whose shared
//!   memory they read. The MMAs panic outside one, saying so.
//! * **Shared-memory operands** are read **through the descriptor**
//!   ([`wgmma_desc`](crate::arch::wgmma_desc): start, leading and stride
//!   byte offsets, swizzle mode), so a descriptor or a swizzle that disagrees
//!   with what the (simulated) TMA wrote reads wrong values, as on hardware.
//!   Addresses are offsets in the CTA's shared-memory window: [`smem_addr`].
//!   Simulated: K-major A and B with 128-, 64- and 32-byte swizzle, and
//!   MN-major ("transposed", `imm-trans-b = 1`) B with the same swizzles;
//!   layout code 0 (interleaved, no swizzle) panics as not simulated.
//! * **Fragments** follow the PTX ISA's tables (ISA 8.x, "Asynchronous
//!   Warpgroup Level Matrix Multiply-Accumulate Instructions" → "Register
//!   Fragments and Shared Memory Matrix Layouts" → "Matrix Fragments for
//!   wgmma.mma_async.m64nNk16", §9.7.15.5.1.1): with `warp = tid / 32`,
//!   `lane = tid % 32`, `g = lane / 4`, `t = lane % 4`,
//!   * accumulator element `i` (`0..N/2`) of thread `tid` is D's row
//!     `16·warp + g + 8·((i / 2) % 2)`, column `8·(i / 4) + 2·t + i % 2`
//!     ([`accumulator_position`]);
//!   * A from registers (`.bf16`, four `.b32` registers of two elements,
//!     element `2j` in bits 0..16 of register `j`, `2j + 1` in bits 16..32):
//!     element `e` (`0..8`) is A's row `16·warp + g + 8·((e / 2) % 2)`,
//!     column `2·t + e % 2 + 8·(e / 4)` ([`a_fragment_position`]).
//! * **Arithmetic**: each MMA runs when issued, in f64 over its K = 16
//!   products, rounded to f32 once per MMA and per element (`accumulate ==
//!   false`: scale-d = 0, D is overwritten). [`fence`], [`commit_group`] and
//!   [`wait_group`] are therefore no-ops: the simulation does not model an
//!   MMA still reading shared memory after its issue (releasing a stage
//!   before `wait_group` retired its MMAs is the loom model's concern:
//!   `crates/baton/tests/loom_attention.rs`).
//! * **Every MMA is collective** (SS and RS): a thread returns from it only
//!   once all 128 threads of its warpgroup have read its shared-memory
//!   operands, as a `wait_group` on the hardware returns only once the
//!   warpgroup's MMA (issued by all four warps) retired. So one thread may
//!   free a stage after its MMAs (the attention kernel's consumers release
//!   K and V from thread 0) without a lagging thread of the same warpgroup
//!   still reading it (before: a refilled K stage read by a late thread,
//!   one wrong row in 10⁴, seen with three consumer warpgroups).
//! * **RS MMAs** (A from registers) are collective: each thread posts its A
//!   registers, the 128 threads meet, and each computes its accumulators
//!   from every thread's A; all must issue the same B descriptor (`.aligned`),
//!   else the simulation panics.

use super::cluster::with_cta;
use super::warpgroup::with_thread;
use crate::numeric::{Bf16, SmallFloat};

pub mod ops;

pub use super::tcgen05::smem_addr;
pub use super::warpgroup::{WARPGROUP_THREADS, run_warpgroup};
pub use crate::arch::wgmma_desc::{
    SmemLayout, SplitDescriptor, descriptor_advance, descriptor_k_major, descriptor_mn_major,
};

/// `wgmma.fence.sync.aligned`: a no-op on the CPU (each MMA completes at
/// issue).
///
/// ```
/// baton::arch::wgmma::fence();
/// ```
#[inline]
pub fn fence() {}

/// `wgmma.commit_group.sync.aligned`: a no-op on the CPU.
///
/// ```
/// baton::arch::wgmma::commit_group();
/// ```
#[inline]
pub fn commit_group() {}

/// `wgmma.wait_group.sync.aligned N`: a no-op on the CPU (no MMA is ever
/// in flight).
///
/// ```
/// baton::arch::wgmma::wait_group::<0>();
/// ```
#[inline]
pub fn wait_group<const N: u32>() {}

/// `setmaxnreg.inc`: a no-op on the CPU.
///
/// ```
/// baton::arch::wgmma::setmaxnreg_inc::<240>();
/// ```
#[inline]
pub fn setmaxnreg_inc<const N: u32>() {}

/// `setmaxnreg.dec`: a no-op on the CPU.
///
/// ```
/// baton::arch::wgmma::setmaxnreg_dec::<24>();
/// ```
#[inline]
pub fn setmaxnreg_dec<const N: u32>() {}

/// D's `(row, column)` held by accumulator element `i` of warpgroup thread
/// `tid` (`m64nNk16`, f32 accumulators; see the module docs for the table).
///
/// ```
/// use baton::arch::cpu::wgmma::accumulator_position;
/// assert_eq!(accumulator_position(0, 0), (0, 0));
/// assert_eq!(accumulator_position(5, 3), (1 + 8, 2 + 1)); // lane 5: g 1, t 1
/// assert_eq!(accumulator_position(32, 4), (16, 8)); // warp 1, second chunk
/// ```
pub const fn accumulator_position(tid: u32, i: u32) -> (u32, u32) {
    let (warp, lane) = (tid / 32, tid % 32);
    (
        16 * warp + lane / 4 + 8 * ((i / 2) % 2),
        8 * (i / 4) + 2 * (lane % 4) + i % 2,
    )
}

/// A's `(row, column)` held by element `e` (`0..8`: register `e / 2`, low
/// half for even `e`) of warpgroup thread `tid`'s register A fragment
/// (`m64nNk16`, `.bf16`; see the module docs for the table).
///
/// ```
/// use baton::arch::cpu::wgmma::a_fragment_position;
/// assert_eq!(a_fragment_position(0, 0), (0, 0));
/// assert_eq!(a_fragment_position(6, 3), (1 + 8, 4 + 1)); // lane 6: g 1, t 2
/// assert_eq!(a_fragment_position(64, 5), (32, 9)); // warp 2
/// ```
pub const fn a_fragment_position(tid: u32, e: u32) -> (u32, u32) {
    let (warp, lane) = (tid / 32, tid % 32);
    (
        16 * warp + lane / 4 + 8 * ((e / 2) % 2),
        2 * (lane % 4) + e % 2 + 8 * (e / 4),
    )
}

/// A decoded `wgmma` shared-memory descriptor.
#[derive(Clone, Copy, Debug)]
struct Desc {
    start: usize,
    leading: usize,
    stride: usize,
    swizzle: crate::tensor_map::Swizzle,
    row_bytes: usize,
}

impl Desc {
    fn decode(desc: u64, what: &str) -> Self {
        use crate::tensor_map::Swizzle;
        let field = |shift: u32| (((desc >> shift) & 0x3FFF) << 4) as usize;
        let (swizzle, row_bytes) = match desc >> 62 {
            1 => (Swizzle::B128, 128),
            2 => (Swizzle::B64, 64),
            3 => (Swizzle::B32, 32),
            _ => panic!(
                "baton cpu wgmma: {what}: descriptor layout 0 (interleaved, no swizzle) is not simulated; the simulated layouts are 128-, 64- and 32-byte swizzle (codes 1, 2, 3)"
            ),
        };
        Self {
            start: field(0),
            leading: field(16),
            stride: field(32),
            swizzle,
            row_bytes,
        }
    }

    /// Byte offset of element `(row, k)` (bf16) of a K-major operand: rows
    /// of `row_bytes` (the K extent of one atom), 8-row atoms `stride`
    /// apart; the swizzle permutes 16-byte chunks by address bits, so atoms
    /// must be aligned to `8 · row_bytes` as TMA writes them.
    fn k_major(&self, row: u32, k: u32) -> usize {
        let (r, kb) = (row as usize, 2 * k as usize);
        self.swizzle
            .apply(self.start + (r / 8) * self.stride + (r % 8) * self.row_bytes + kb)
    }

    /// Byte offset of element `(mn, k)` (bf16) of an MN-major operand: atoms
    /// of 8 K-rows × `row_bytes` of consecutive MN elements, `leading` apart
    /// in MN and `stride` apart in K (8 rows).
    fn mn_major(&self, mn: u32, k: u32) -> usize {
        let per_row = self.row_bytes / 2;
        let (n, k) = (mn as usize, k as usize);
        self.swizzle.apply(
            self.start
                + (n / per_row) * self.leading
                + (k / 8) * self.stride
                + (k % 8) * self.row_bytes
                + (n % per_row) * 2,
        )
    }
}

/// The bf16 at byte `offset` of the calling thread's CTA shared memory.
fn smem_bf16(base: usize, len: usize, offset: usize, what: &str) -> f64 {
    assert!(
        offset + 2 <= len,
        "baton cpu wgmma: {what} reads shared byte {offset}, outside the CTA's {len} bytes"
    );
    // SAFETY: in bounds of the CTA's shared memory (checked); operand stages
    // are loaded and not written while an MMA reads them (pipeline
    // protocol), so the read races with no write. Unaligned reads are fine.
    let bits = unsafe { ((base + offset) as *const u16).read_unaligned() };
    Bf16::from_bits(bits).to_f64()
}

/// `D (+)= A·B` for this thread's `ACC = N/2` accumulators, K = 16: `a(row,
/// k)` and `b(n, k)` give the operands.
fn accumulate_fragment<const ACC: usize>(
    acc: &mut [f32; ACC],
    tid: u32,
    accumulate: bool,
    a: impl Fn(u32, u32) -> f64,
    b: impl Fn(u32, u32) -> f64,
) {
    for (i, d) in acc.iter_mut().enumerate() {
        let (row, col) = accumulator_position(tid, i as u32);
        let sum: f64 = (0..16).map(|k| a(row, k) * b(col, k)).sum();
        *d = if accumulate {
            (*d as f64 + sum) as f32
        } else {
            sum as f32
        };
    }
}

/// SS MMA, both operands K-major in shared memory (`wgmma … {a}, {b}, p,
/// 1, 1, 0, 0`).
pub(crate) fn mma_ss<const ACC: usize>(
    what: &str,
    acc: &mut [f32; ACC],
    a: u64,
    b: u64,
    accumulate: bool,
) {
    with_thread(what, |coll, tid| {
        let (da, db) = (Desc::decode(a, what), Desc::decode(b, what));
        with_cta(what, |cta, _, _| {
            let (base, len) = (cta.base, cta.len);
            accumulate_fragment(
                acc,
                tid,
                accumulate,
                |r, k| smem_bf16(base, len, da.k_major(r, k), what),
                |n, k| smem_bf16(base, len, db.k_major(n, k), what),
            );
        });
        // Collective: every thread has read the operands.
        coll.meet(what);
    });
}

/// RS MMA: A from the 128 threads' registers, B MN-major in shared memory
/// (`wgmma … {a0..a3}, {b}, p, 1, 1, 1`).
pub(crate) fn mma_rs_bt<const ACC: usize>(
    what: &str,
    acc: &mut [f32; ACC],
    a: [u32; 4],
    b: u64,
    accumulate: bool,
) {
    with_thread(what, |coll, tid| {
        let db = Desc::decode(b, what);
        // Every thread's A, as a 64 × 16 matrix.
        let mut am = [[0f64; 16]; 64];
        coll.exchange(what, tid, (a, b), |slots| {
            for (t, &(regs, bt)) in slots.iter().enumerate() {
                assert_eq!(
                    bt, b,
                    "baton cpu wgmma: {what}: thread {t} issued B descriptor {bt:#x}, thread {tid} {b:#x}; a `.aligned` MMA takes one operand for the warpgroup"
                );
                for e in 0..8u32 {
                    let (row, col) = a_fragment_position(t as u32, e);
                    let bits = (regs[(e / 2) as usize] >> (16 * (e % 2))) as u16;
                    am[row as usize][col as usize] = Bf16::from_bits(bits).to_f64();
                }
            }
        });
        with_cta(what, |cta, _, _| {
            let (base, len) = (cta.base, cta.len);
            accumulate_fragment(
                acc,
                tid,
                accumulate,
                |r, k| am[r as usize][k as usize],
                |n, k| smem_bf16(base, len, db.mn_major(n, k), what),
            );
        });
        // Collective: every thread has read B.
        coll.meet(what);
    });
}
