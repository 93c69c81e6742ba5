//! Warpgroup MMA (`wgmma`, sm_90a): shared-memory matrix descriptors, the
//! async fence/commit/wait protocol, and register reallocation.
//!
//! A warpgroup is 4 consecutive warps starting at a warp index divisible by
//! 4. The MMA itself is asynchronous: after [`fence`], issue one or more
//! `mma_*` ([`ops`]), [`commit_group`], and later [`wait_group::<N>`] — which
//! returns once at most `N` committed groups are still in flight. Only then
//! may the accumulators be read and the shared-memory operands be released
//! (e.g. by arriving on a pipeline's `empty` barrier).

use core::arch::asm;

#[path = "wgmma_ops.rs"]
pub mod ops;

/// `wgmma.fence.sync.aligned`: orders prior register/shared-memory accesses
/// before the next `wgmma.mma_async` of this warpgroup.
#[inline(always)]
pub fn fence() {
    // SAFETY: warpgroup-collective fence; all 128 threads execute it.
    unsafe { asm!("wgmma.fence.sync.aligned;", options(nostack)) };
}

/// `wgmma.commit_group.sync.aligned`: closes the group of MMAs issued since
/// the last commit.
#[inline(always)]
pub fn commit_group() {
    // SAFETY: warpgroup-collective.
    unsafe { asm!("wgmma.commit_group.sync.aligned;", options(nostack)) };
}

/// `wgmma.wait_group.sync.aligned N`: waits until at most `N` committed
/// groups are pending.
#[inline(always)]
pub fn wait_group<const N: u32>() {
    // SAFETY: warpgroup-collective; memory clobber keeps accumulator and
    // shared-memory accesses after it.
    unsafe { asm!("wgmma.wait_group.sync.aligned {n};", n = const N, options(nostack)) };
}

/// Shared-memory layouts a descriptor can describe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmemLayout {
    /// 128-byte swizzle (TMA `CU_TENSOR_MAP_SWIZZLE_128B`): rows of 128 bytes,
    /// 8-row (1024-byte) repeating atoms.
    Swizzle128B,
    /// 64-byte swizzle.
    Swizzle64B,
    /// 32-byte swizzle.
    Swizzle32B,
}

impl SmemLayout {
    const fn code(self) -> u64 {
        match self {
            SmemLayout::Swizzle128B => 1,
            SmemLayout::Swizzle64B => 2,
            SmemLayout::Swizzle32B => 3,
        }
    }

    /// Bytes per swizzled row.
    pub const fn row_bytes(self) -> u32 {
        match self {
            SmemLayout::Swizzle128B => 128,
            SmemLayout::Swizzle64B => 64,
            SmemLayout::Swizzle32B => 32,
        }
    }
}

/// Matrix descriptor of a K-major tile whose rows are `layout.row_bytes()`
/// long (the whole K extent of one swizzle atom), starting at shared address
/// `addr` (1024-byte aligned for the atom; K-offsets inside an atom are
/// added to the start address, as CUTLASS does).
///
/// Bits: `[0,14)` start >> 4, `[16,30)` leading byte offset >> 4 (unused for
/// swizzled K-major; 1), `[32,46)` stride byte offset >> 4 (8 rows), `[62,64)`
/// layout.
#[inline(always)]
pub const fn descriptor_k_major(addr: u32, layout: SmemLayout) -> u64 {
    let start = ((addr as u64) >> 4) & 0x3FFF;
    let leading = 1u64;
    let stride = ((8 * layout.row_bytes()) as u64 >> 4) & 0x3FFF;
    start | (leading << 16) | (stride << 32) | (layout.code() << 62)
}

/// Matrix descriptor of an MN-major operand (`imm-trans-b = 1` for B: N
/// contiguous, e.g. attention's V stored `[kv rows, head dim]`) in swizzled
/// atoms: each atom is 8 K-rows of `layout.row_bytes()` bytes of consecutive
/// MN elements, 1024-byte aligned for 128-byte swizzle (what a TMA box with
/// 128-byte rows writes). `mn_atom_stride` is the byte distance between atoms
/// adjacent in MN (the next 64 bf16 columns: the next TMA box), `k_group_stride`
/// between atoms adjacent in K (the next 8 rows: 1024 for 128-byte rows).
///
/// Bits as [`descriptor_k_major`], with the leading byte offset `[16,30)` =
/// `mn_atom_stride >> 4` and the stride byte offset `[32,46)` =
/// `k_group_stride >> 4` (CUTLASS's canonical `((T,8,m),(8,k)) :
/// ((1,T,LBO),(8T,SBO))` for 128-byte swizzle).
///
/// ```
/// use baton::arch::ptx::wgmma::{descriptor_mn_major, SmemLayout};
/// let d = descriptor_mn_major(0x8000, SmemLayout::Swizzle128B, 16384, 1024);
/// assert_eq!(d & 0x3FFF, 0x8000 >> 4);
/// assert_eq!((d >> 16) & 0x3FFF, 16384 >> 4);
/// assert_eq!((d >> 32) & 0x3FFF, 1024 >> 4);
/// assert_eq!(d >> 62, 1);
/// ```
#[inline(always)]
pub const fn descriptor_mn_major(
    addr: u32,
    layout: SmemLayout,
    mn_atom_stride: u32,
    k_group_stride: u32,
) -> u64 {
    let start = ((addr as u64) >> 4) & 0x3FFF;
    let leading = ((mn_atom_stride as u64) >> 4) & 0x3FFF;
    let stride = ((k_group_stride as u64) >> 4) & 0x3FFF;
    start | (leading << 16) | (stride << 32) | (layout.code() << 62)
}

/// Adds `bytes` (a multiple of 16) to a descriptor's start address — how a
/// K loop steps through a swizzle atom (32 bytes per K = 16 of bf16).
#[inline(always)]
pub const fn descriptor_advance(desc: u64, bytes: u32) -> u64 {
    desc + ((bytes as u64) >> 4)
}

/// A descriptor as its two 32-bit words: the low word (start address,
/// leading offset) changes per stage and K step, the high word (stride,
/// layout) is a constant. Advancing only the low word and joining the
/// halves just before the `wgmma` ([`SplitDescriptor::join`], an opaque
/// `mov.b64` LLVM cannot fold back into a 64-bit add) keeps the main loops
/// free of 64-bit carry chains.
///
/// ```
/// use baton::arch::ptx::wgmma::{descriptor_k_major, SmemLayout, SplitDescriptor};
/// let d = descriptor_k_major(0x4400, SmemLayout::Swizzle128B);
/// let s = SplitDescriptor::new(d).advance(64);
/// assert_eq!(s.lo as u64 | (s.hi as u64) << 32, d + 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitDescriptor {
    /// Bits 0..32: start address / 16, leading-dimension offset.
    pub lo: u32,
    /// Bits 32..64: stride offset, layout.
    pub hi: u32,
}

impl SplitDescriptor {
    /// Splits a descriptor.
    #[inline(always)]
    pub const fn new(desc: u64) -> Self {
        Self {
            lo: desc as u32,
            hi: (desc >> 32) as u32,
        }
    }

    /// The descriptor `bytes` (a multiple of 16) further along: as
    /// [`descriptor_advance`], in the low word only — the start-address
    /// field (address / 16, bits 0..14) of a shared-memory address below
    /// 256 KiB never carries into bit 32.
    #[inline(always)]
    pub const fn advance(self, bytes: u32) -> Self {
        self.advance_units(bytes >> 4)
    }

    /// The descriptor `units` × 16 bytes further along.
    #[inline(always)]
    pub const fn advance_units(self, units: u32) -> Self {
        Self {
            lo: self.lo.wrapping_add(units),
            hi: self.hi,
        }
    }

    /// The 64-bit descriptor, joined by `mov.b64` on the GPU.
    #[inline(always)]
    pub fn join(self) -> u64 {
        #[cfg(target_arch = "nvptx64")]
        {
            let d: u64;
            // SAFETY: a register move.
            unsafe {
                asm!("mov.b64 {d}, {{{lo}, {hi}}};", d = out(reg64) d, lo = in(reg32) self.lo, hi = in(reg32) self.hi, options(pure, nomem, nostack))
            };
            d
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.lo as u64 | (self.hi as u64) << 32
        }
    }
}

/// `setmaxnreg.inc.sync.aligned.u32 N`: this warpgroup asks for `N`
/// registers per thread (a multiple of 8 in 24..=256). Takes effect only when
/// the kernel has a register cap at entry; the whole warpgroup executes it.
#[inline(always)]
pub fn setmaxnreg_inc<const N: u32>() {
    // SAFETY: warpgroup-collective.
    unsafe { asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const N, options(nostack)) };
}

/// `setmaxnreg.dec.sync.aligned.u32 N`: this warpgroup releases registers
/// down to `N` per thread.
#[inline(always)]
pub fn setmaxnreg_dec<const N: u32>() {
    // SAFETY: warpgroup-collective.
    unsafe { asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const N, options(nostack)) };
}
