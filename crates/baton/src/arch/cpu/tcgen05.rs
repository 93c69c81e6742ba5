//! CPU simulation of Blackwell's tensor memory and `tcgen05` operations,
//! with the names and signatures of [`arch::sm100`](crate::arch) — reached as
//! [`arch::tcgen05`](crate::arch::tcgen05) on both targets, so one role
//! program compiles for sm_100a and runs here.
//!
//! Context: every function reads the calling thread's simulated CTA (set by
//! [`CpuBlock::run_warps`](super::CpuBlock::run_warps) /
//! [`CpuCluster::run_warps`](super::CpuCluster::run_warps)); called outside
//! one they panic saying so.
//!
//! * **Shared-memory addresses** in descriptors are offsets into the CTA's
//!   shared-memory window, as on the GPU: [`smem_addr`] gives one (the GPU
//!   form returns the `.shared` address). Operands are read **through the
//!   descriptor encodings** (start, LBO, SBO, layout: no swizzle and the
//!   32/64/128-byte swizzles, K-major), so a descriptor that disagrees with
//!   the layout the simulated TMA wrote reads wrong values, as on hardware.
//! * **TMEM**: 128 lanes × 512 32-bit cells per CTA; power-of-two
//!   allocations of 32..=512 columns at multiples of their size; a leak
//!   (CTA exit with columns held), a double or mismatched free, an
//!   allocation after `relinquish_alloc_permit`, over-allocation, or an
//!   access outside an allocation panics.
//! * **MMAs** run when issued (in f64, rounded to f32 per MMA); `commit`
//!   then performs its one arrival — the completion the GPU signals
//!   asynchronously.
//! * **Per-lane data**: a CPU warp is one thread, so `ld_32x32b_xN(addr)`
//!   returns the columns of row `addr.lane()` — what GPU thread
//!   `addr.lane() % 32` of the warp gets — and `st_32x32b_xN` writes that
//!   row: role code adds the lane to the quarter base inside its per-lane
//!   loop (`WarpCtx::tmem_row`). Fences and waits are no-ops.
//!
//! Scale factors (block-scaled MMAs), as the PTX ISA specifies them (the
//! `tcgen05` sections "Block Scaling" — with its subsections "Scale Factor
//! A ID" / "Scale Factor B ID" and their layout figures for
//! `scale_vec::1X` and `::4X` — "Data Movement Shape" and `tcgen05.cp`'s
//! `.32x128b.warpx4`; §9.7.16.10.7 in ISA 8.8), checked against CUTLASS
//! (`cute::UMMA::tmem_sf_frg`, the 4x1 data path):
//!
//! * The MMA reads the scale-factor word of row `r` of A (`r < 128`, the
//!   CTA's own rows) at TMEM column `sfa.column() + r / 32`, and of row `n`
//!   of B (`n < N`, every row of B, also in each CTA of a pair) at column
//!   `sfb.column() + n / 32`; in each case at lane `r % 32` of **every**
//!   32-lane partition: the ISA requires the scale factors to be
//!   "duplicated to all 32 lane partitions". The simulation panics when
//!   the four copies differ. `sfa`/`sfb` name lane 0.
//! * Within the word: `scale_vec::1X` (MXFP8, one scale per 32 K, K = 32
//!   per MMA) uses byte `sf_id` (the descriptor's scale-factor ids: "the
//!   byte offset in the Tensor Memory word"); `scale_vec::4X` (NVFP4, one
//!   per 16 K, K = 64) uses bytes 0..4 for K 0..16, 16..32, 32..48, 48..64
//!   (id 0).
//! * `tcgen05.cp.32x128b.warpx4` copies 32 rows × 16 bytes of shared memory
//!   (through its descriptor) to lanes `r`, `r + 32`, `r + 64`, `r + 96`,
//!   four columns, byte `j` of a row to byte `j % 4` of column `j / 4`.
//!   Applied to one 512-byte SF atom of [`crate::block_scale`] (16 bytes at
//!   `16·i` hold the four SF columns of rows `i`, `i + 32`, `i + 64`,
//!   `i + 96`) it puts row `r`'s four SF columns in column `r / 32`, bytes in
//!   K order, in all four partitions — exactly what the MMA reads; an
//!   operand of 256 rows takes its second atom at columns `+4..+8`.
//!
//! Not checked on hardware (no Blackwell GPU here).
//!
//! Number formats decode through [`crate::numeric`].

use super::cluster::{CtaWindow, with_cta};
use crate::arch::tcgen05_desc::SmemDescriptor;
use crate::arch::tmem_addr::{TMEM_COLUMNS, TMEM_LANES};
use crate::smem::SharedRef;
use std::sync::{Mutex, MutexGuard};

/// One CTA's simulated TMEM: 128 lanes × 512 32-bit cells and the
/// allocated column ranges.
pub(crate) struct TmemState {
    inner: Mutex<TmemInner>,
}

struct TmemInner {
    cells: Vec<u32>,
    /// Allocated column ranges `(first, count)`.
    allocs: Vec<(u32, u32)>,
    relinquished: bool,
}

impl TmemInner {
    fn check(&self, lane: u32, col: u32, cols: u32, what: &str) {
        assert!(
            lane < TMEM_LANES && col + cols <= TMEM_COLUMNS,
            "baton cpu tcgen05: {what} at lane {lane}, columns {col}..{} is outside TMEM (128 × 512)",
            col + cols
        );
        assert!(
            self.allocs
                .iter()
                .any(|&(a, m)| a <= col && col + cols <= a + m),
            "baton cpu tcgen05: {what} of TMEM columns {col}..{} that are not allocated (held: {:?})",
            col + cols,
            self.allocs
        );
    }
    fn at(&self, lane: u32, col: u32) -> usize {
        (lane * TMEM_COLUMNS + col) as usize
    }
}

// Used by the cluster runner, which loom builds leave out.
#[cfg_attr(loom, allow(dead_code))]
impl TmemState {
    pub(crate) fn new() -> Self {
        Self {
            inner: Mutex::new(TmemInner {
                cells: vec![0; (TMEM_LANES * TMEM_COLUMNS) as usize],
                allocs: Vec::new(),
                relinquished: false,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, TmemInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Panics if columns are still allocated when CTA `rank` exits.
    pub(crate) fn check_exit(&self, rank: u32) {
        let t = self.lock();
        assert!(
            t.allocs.is_empty(),
            "baton cpu: CTA {rank} exits with TMEM columns still allocated (first column, count): {:?}",
            t.allocs
        );
    }
}

fn tmem<R>(f: impl FnOnce(&mut TmemInner) -> R) -> R {
    with_cta("tcgen05", |cta, _, _| f(&mut cta.tmem.lock()))
}

/// The shared-memory address of `r` as descriptors and `tcgen05` operands
/// take it: on the CPU its byte offset in the calling thread's CTA window
/// (on the GPU, the `.shared` address). Panics when `r` is not in the CTA's
/// shared memory.
///
/// ```
/// use baton::arch::cpu::CpuBlock;
/// use baton::arch::tcgen05::smem_addr;
/// let block = CpuBlock::new([0u32; 4]);
/// block.run_warps(1, |_w, smem| assert_eq!(smem_addr(smem.at(2)), 8));
/// ```
pub fn smem_addr<T>(r: SharedRef<'_, T>) -> u32 {
    with_cta("smem_addr", |cta, _, rank| {
        let a = r.addr();
        assert!(
            a >= cta.base && a + core::mem::size_of::<T>() <= cta.base + cta.len,
            "baton cpu tcgen05: address {a:#x} is not in CTA {rank}'s shared memory"
        );
        (a - cta.base) as u32
    })
}

/// `tcgen05.fence::before_thread_sync`: a no-op on the CPU (every simulated
/// operation completes, under a lock, before it returns).
///
/// ```
/// baton::arch::tcgen05::fence_before_thread_sync();
/// ```
pub fn fence_before_thread_sync() {}

/// `tcgen05.fence::after_thread_sync`: a no-op on the CPU.
///
/// ```
/// baton::arch::tcgen05::fence_after_thread_sync();
/// ```
pub fn fence_after_thread_sync() {}

/// Byte `i` of `cta`'s shared memory window. Panics outside it.
fn smem_byte(cta: &CtaWindow, i: usize) -> u8 {
    assert!(
        i < cta.len,
        "baton cpu tcgen05: descriptor reads shared byte {i}, outside the CTA's {} bytes",
        cta.len
    );
    // SAFETY: in bounds of the CTA's shared memory (checked); the operand
    // stages are loaded and not written while an MMA reads them (pipeline
    // protocol), so the read races with no write.
    unsafe { ((cta.base + i) as *const u8).read_volatile() }
}

/// Byte offset of byte `kbyte` of row `row` of a K-major matrix described by
/// `desc` (canonical layouts of the `tcgen05` shared-memory descriptor).
fn operand_offset(desc: SmemDescriptor, row: u32, kbyte: u32) -> usize {
    use crate::tensor_map::Swizzle;
    let start = ((desc.0 & 0x3FFF) << 4) as usize;
    let lead = (((desc.0 >> 16) & 0x3FFF) << 4) as usize;
    let stride = (((desc.0 >> 32) & 0x3FFF) << 4) as usize;
    let (r, k) = (row as usize, kbyte as usize);
    match desc.0 >> 61 {
        // No swizzle: 8-row × 16-byte core matrices, `lead` between core
        // matrices adjacent in K, `stride` between 8-row groups.
        0 => start + (r / 8) * stride + (k / 16) * lead + (r % 8) * 16 + k % 16,
        // Swizzled K-major: 8 rows of the swizzle width per atom, atoms
        // `stride` apart; the swizzle permutes 16-byte chunks by address bits.
        2 => Swizzle::B128.apply(start + (r / 8) * stride + (r % 8) * 128 + k),
        4 => Swizzle::B64.apply(start + (r / 8) * stride + (r % 8) * 64 + k),
        6 => Swizzle::B32.apply(start + (r / 8) * stride + (r % 8) * 32 + k),
        other => panic!(
            "baton cpu tcgen05: shared-memory descriptor layout code {other} is not simulated"
        ),
    }
}

pub mod mma;
pub mod tmem;
