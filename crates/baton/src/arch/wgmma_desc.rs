//! Encodings of Hopper's `wgmma` shared-memory matrix descriptor: plain
//! `const` arithmetic, compiled on every target so that the host tests check
//! them and the CPU simulation ([`cpu::wgmma`](crate::arch::cpu::wgmma))
//! decodes what the role code encodes; the `ptx` backend re-exports them
//! from `ptx::wgmma`.
//!
//! Layout: PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
//! Instructions" → "Matrix Descriptor Format" (§9.7.15.5.1.2.2 in ISA 8.x;
//! bits `[0,14)` start address >> 4, `[16,30)` leading-dimension byte
//! offset >> 4, `[32,46)` stride-dimension byte offset >> 4, `[49,52)` base
//! offset (0 here: atoms 1024-byte aligned), `[62,64)` swizzle mode);
//! CUTLASS `cute/arch/mma_sm90_desc.hpp` (`GmmaDescriptor`).

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

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
    /// The descriptor's layout field (bits `[62, 64)`): 1 = 128-byte,
    /// 2 = 64-byte, 3 = 32-byte swizzle.
    ///
    /// ```
    /// use baton::arch::wgmma_desc::SmemLayout;
    /// assert_eq!(SmemLayout::Swizzle128B.code(), 1);
    /// ```
    pub const fn code(self) -> u64 {
        match self {
            SmemLayout::Swizzle128B => 1,
            SmemLayout::Swizzle64B => 2,
            SmemLayout::Swizzle32B => 3,
        }
    }

    /// Bytes per swizzled row.
    ///
    /// ```
    /// use baton::arch::wgmma_desc::SmemLayout;
    /// assert_eq!(SmemLayout::Swizzle128B.row_bytes(), 128);
    /// ```
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
///
/// ```
/// use baton::arch::wgmma_desc::{descriptor_k_major, SmemLayout};
/// let d = descriptor_k_major(0x4400, SmemLayout::Swizzle128B);
/// assert_eq!(d & 0x3FFF, 0x4400 >> 4);
/// assert_eq!((d >> 32) & 0x3FFF, 1024 >> 4); // 8 rows of 128 bytes
/// assert_eq!(d >> 62, 1);
/// ```
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
/// use baton::arch::wgmma_desc::{descriptor_mn_major, SmemLayout};
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
///
/// ```
/// use baton::arch::wgmma_desc::{descriptor_advance, descriptor_k_major, SmemLayout};
/// let d = descriptor_k_major(0x4400, SmemLayout::Swizzle128B);
/// assert_eq!(descriptor_advance(d, 32), descriptor_k_major(0x4420, SmemLayout::Swizzle128B));
/// ```
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
/// use baton::arch::wgmma_desc::{descriptor_k_major, SmemLayout, SplitDescriptor};
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
    ///
    /// ```
    /// use baton::arch::wgmma_desc::SplitDescriptor;
    /// let s = SplitDescriptor::new(0x1234_5678_9abc_def0);
    /// assert_eq!((s.lo, s.hi), (0x9abc_def0, 0x1234_5678));
    /// ```
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
    ///
    /// ```
    /// use baton::arch::wgmma_desc::SplitDescriptor;
    /// assert_eq!(SplitDescriptor::new(0x40).advance(32).lo, 0x42);
    /// ```
    #[inline(always)]
    pub const fn advance(self, bytes: u32) -> Self {
        self.advance_units(bytes >> 4)
    }

    /// The descriptor `units` × 16 bytes further along.
    ///
    /// ```
    /// use baton::arch::wgmma_desc::SplitDescriptor;
    /// assert_eq!(SplitDescriptor::new(0x40).advance_units(2).lo, 0x42);
    /// ```
    #[inline(always)]
    pub const fn advance_units(self, units: u32) -> Self {
        Self {
            lo: self.lo.wrapping_add(units),
            hi: self.hi,
        }
    }

    /// The 64-bit descriptor, joined by `mov.b64` on the GPU.
    ///
    /// ```
    /// use baton::arch::wgmma_desc::SplitDescriptor;
    /// assert_eq!(SplitDescriptor::new(0x1_0000_0002).join(), 0x1_0000_0002);
    /// ```
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
