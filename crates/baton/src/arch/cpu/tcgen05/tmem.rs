//! Simulated TMEM allocation, `tcgen05.ld`/`st`/`cp` (see the
//! [parent module](super) for the CPU conventions).

use super::{operand_offset, smem_byte, tmem};
use crate::arch::cpu::cluster::with_cta;
pub use crate::arch::tmem_addr::TMEM_COLUMNS;
pub use crate::arch::tmem_addr::{TMEM_LANES, TmemAddr};
use crate::smem::SharedRef;

pub use crate::arch::tcgen05_desc::SmemDescriptor;

fn check_columns(cols: u32) {
    assert!(
        (32..=TMEM_COLUMNS).contains(&cols) && cols.is_power_of_two(),
        "baton cpu tcgen05: TMEM allocations are a power of two of columns in 32..=512, got {cols}"
    );
}

fn alloc_cols(cols: u32, dst: SharedRef<'_, u32>) {
    check_columns(cols);
    let first = tmem(|t| {
        assert!(
            !t.relinquished,
            "baton cpu tcgen05: TMEM alloc after relinquish_alloc_permit"
        );
        let first = (0..TMEM_COLUMNS / cols)
            .map(|i| i * cols)
            .find(|&s| t.allocs.iter().all(|&(a, n)| s + cols <= a || a + n <= s))
            .unwrap_or_else(|| {
                panic!(
                    "baton cpu tcgen05: TMEM over-allocation: {cols} columns requested, held {:?} (the simulation does not wait for another CTA to free columns)",
                    t.allocs
                )
            });
        t.allocs.push((first, cols));
        first
    });
    // SAFETY: the contract of `alloc` — `dst` is a word of this CTA's shared
    // memory in interior-mutable storage that no one else accesses until
    // the barrier that publishes it.
    unsafe { (dst.addr() as *mut u32).write_volatile(first) };
}

fn dealloc_cols(cols: u32, addr: TmemAddr) {
    check_columns(cols);
    tmem(|t| {
        let i = t
            .allocs
            .iter()
            .position(|&a| a == (addr.column(), cols))
            .unwrap_or_else(|| {
                panic!(
                    "baton cpu tcgen05: TMEM dealloc of {cols} columns at column {} that are not allocated as such (double free or wrong size; held {:?})",
                    addr.column(),
                    t.allocs
                )
            });
        t.allocs.swap_remove(i);
    });
}

/// `tcgen05.alloc.cta_group::1`: allocates `COLS` columns (a power of two
/// in `32..=512`) of the calling CTA's TMEM and writes their address (lane
/// 0) to `dst`. CPU: executed once by the warp's thread; panics on
/// over-allocation (the GPU would block) or after
/// [`relinquish_alloc_permit`].
///
/// ```
/// use baton::arch::cpu::CpuBlock;
/// use baton::arch::tcgen05::tmem::{self, TmemAddr};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// let block = CpuBlock::new(AtomicU32::new(u32::MAX));
/// block.run_warps(1, |_w, slot| {
///     let dst = baton::smem::SharedRef::from_ref(unsafe { &*slot.get().as_ptr() });
///     unsafe { tmem::alloc::<64>(dst) };
///     let addr = TmemAddr(slot.get().load(Ordering::Relaxed));
///     assert_eq!(addr.column(), 0);
///     unsafe { tmem::dealloc::<64>(addr) };
/// });
/// ```
///
/// # Safety
/// As the GPU form; on the CPU in addition `dst` lies in interior-mutable
/// storage (an `UnsafeCell`-backed word such as a `Tile<u32, ..>` word or
/// an atomic), since the simulation writes it through the shared reference.
pub unsafe fn alloc<const COLS: u32>(dst: SharedRef<'_, u32>) {
    alloc_cols(COLS, dst)
}

/// `tcgen05.relinquish_alloc_permit.cta_group::1`: later allocations by
/// this CTA panic.
///
/// # Safety
/// As the GPU form.
pub unsafe fn relinquish_alloc_permit() {
    tmem(|t| t.relinquished = true);
}

/// `tcgen05.dealloc.cta_group::1`: frees the `COLS` columns at `addr`;
/// panics unless exactly that allocation is held (double free, wrong size).
///
/// # Safety
/// As the GPU form.
pub unsafe fn dealloc<const COLS: u32>(addr: TmemAddr) {
    dealloc_cols(COLS, addr)
}

/// `tcgen05.alloc.cta_group::2`: each CTA of the pair executes it and
/// allocates in its own TMEM (same columns when both follow the same
/// sequence).
///
/// # Safety
/// As [`alloc`].
pub unsafe fn alloc_pair<const COLS: u32>(dst: SharedRef<'_, u32>) {
    alloc_cols(COLS, dst)
}

/// `tcgen05.relinquish_alloc_permit.cta_group::2`.
///
/// # Safety
/// As the GPU form.
pub unsafe fn relinquish_alloc_permit_pair() {
    tmem(|t| t.relinquished = true);
}

/// `tcgen05.dealloc.cta_group::2`: frees this CTA's columns.
///
/// # Safety
/// As the GPU form.
pub unsafe fn dealloc_pair<const COLS: u32>(addr: TmemAddr) {
    dealloc_cols(COLS, addr)
}

/// `tcgen05.wait::ld`: no-op (loads complete when they return).
pub fn wait_ld() {}

/// `tcgen05.wait::st`: no-op (stores complete when they return).
pub fn wait_st() {}

macro_rules! ld_st {
    ($($n:literal $ld:ident $st:ident),*) => {$(
        /// `tcgen05.ld.32x32b`: the columns `addr.column()..` of row
        /// `addr.lane()` (what GPU lane `addr.lane() % 32` of the warp gets).
        /// Panics outside an allocation.
        ///
        /// # Safety
        /// As the GPU form.
        pub unsafe fn $ld(addr: TmemAddr) -> [u32; $n] {
            tmem(|t| {
                t.check(addr.lane(), addr.column(), $n, "tcgen05.ld");
                let at = t.at(addr.lane(), addr.column());
                t.cells[at..at + $n].try_into().unwrap()
            })
        }

        /// `tcgen05.st.32x32b`: writes `v` into columns `addr.column()..` of
        /// row `addr.lane()`. Panics outside an allocation.
        ///
        /// # Safety
        /// As the GPU form.
        pub unsafe fn $st(addr: TmemAddr, v: [u32; $n]) {
            tmem(|t| {
                t.check(addr.lane(), addr.column(), $n, "tcgen05.st");
                let at = t.at(addr.lane(), addr.column());
                t.cells[at..at + $n].copy_from_slice(&v);
            })
        }
    )*};
}

ld_st!(
    1 ld_32x32b_x1 st_32x32b_x1,
    2 ld_32x32b_x2 st_32x32b_x2,
    4 ld_32x32b_x4 st_32x32b_x4,
    8 ld_32x32b_x8 st_32x32b_x8,
    16 ld_32x32b_x16 st_32x32b_x16,
    32 ld_32x32b_x32 st_32x32b_x32
);

/// Copies `rows` rows of `bytes` bytes (read through `src` as a K-major
/// matrix) into TMEM lanes `lanes(row)`, columns from `dst.column()`, in the
/// CTA `cta_rank`.
fn copy(
    dst: TmemAddr,
    src: SmemDescriptor,
    rows: u32,
    bytes: u32,
    replicas: &[u32],
    cta_rank: Option<u32>,
) {
    with_cta("tcgen05.cp", |cta, cluster, rank| {
        let cta = match cta_rank {
            Some(r) => &cluster.ctas[r as usize],
            None => {
                let _ = rank;
                cta
            }
        };
        let data: Vec<u8> = (0..rows * bytes)
            .map(|i| smem_byte(cta, operand_offset(src, i / bytes, i % bytes)))
            .collect();
        let mut t = cta.tmem.lock();
        for &base_lane in replicas {
            for r in 0..rows {
                let lane = base_lane + r;
                t.check(lane, dst.column(), bytes / 4, "tcgen05.cp");
                for c in 0..bytes / 4 {
                    let i = (r * bytes + 4 * c) as usize;
                    let at = t.at(lane, dst.column() + c);
                    t.cells[at] = u32::from_le_bytes(data[i..i + 4].try_into().unwrap());
                }
            }
        }
    })
}

/// `tcgen05.cp.32x128b.warpx4`: 32 rows × 16 bytes from `src` into lanes
/// `dst.lane() + 32q + r` (each lane quarter `q` gets the same rows), 4
/// columns. Bytes land little-endian: byte `j` of a row is byte `j % 4` of
/// column `j / 4`.
///
/// # Safety
/// As the GPU form.
pub unsafe fn cp_32x128b_warpx4(dst: TmemAddr, src: SmemDescriptor) {
    let l = dst.lane();
    copy(dst, src, 32, 16, &[l, l + 32, l + 64, l + 96], None)
}

/// `tcgen05.cp.128x128b`: 128 rows × 16 bytes into lanes 0..128, 4 columns.
///
/// # Safety
/// As the GPU form.
pub unsafe fn cp_128x128b(dst: TmemAddr, src: SmemDescriptor) {
    copy(dst, src, 128, 16, &[dst.lane()], None)
}

/// `tcgen05.cp.4x256b`: 4 rows × 32 bytes into lanes `dst.lane()..+4`, 8
/// columns.
///
/// # Safety
/// As the GPU form.
pub unsafe fn cp_4x256b(dst: TmemAddr, src: SmemDescriptor) {
    copy(dst, src, 4, 32, &[dst.lane()], None)
}

/// `tcgen05.cp.cta_group::2.32x128b.warpx4`, issued by the leader: each CTA
/// of the pair copies from its own shared memory into its own TMEM.
///
/// # Safety
/// As the GPU form.
pub unsafe fn cp_32x128b_warpx4_pair(dst: TmemAddr, src: SmemDescriptor) {
    let l = dst.lane();
    let leader = crate::arch::cpu::cluster_cta_rank() & !1;
    for r in [leader, leader + 1] {
        copy(dst, src, 32, 16, &[l, l + 32, l + 64, l + 96], Some(r))
    }
}
