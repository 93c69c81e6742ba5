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
//! Scale factors (block-scaled MMAs; the simulation's layout, **not checked
//! on hardware**): row `r` of A reads the cell at lane `r`, column
//! `sfa.column()` (M = 128); row `n` of B the cell at lane `n % 128`, column
//! `sfb.column() + n / 128`. MXFP8 uses byte `sf_id` of the cell (one scale
//! per 32 K); NVFP4 its four bytes in K order (one per 16 K).
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
