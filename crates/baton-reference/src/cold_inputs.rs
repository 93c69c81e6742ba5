//! Cold inputs for side-by-side timing: how many input sets each library
//! (ours, cuBLAS, cuBLASLt …) rotates through so that no timed launch finds
//! its operands in L2.
//!
//! **The rule.** Each library gets its *own* input sets (separate device
//! allocations, so separate L2 lines) and cycles through them, one set per
//! launch. A library's rotation reads more than twice the L2 cache
//! ([`sets_per_library`]): by the time it comes back to a set, its own
//! launches alone have read more than 2× L2 of other lines, and the other
//! libraries' launches, interleaved, as much again. So no launch reads what
//! the launch before it (of any library) just read, and none finds its own
//! last reads of the set still cached.
//!
//! **Why a rotation, not an L2 flush.** DeepGEMM's harness (and
//! [`crate::gemm_fp8_anchor`]) writes a 256 MB memset before every timed
//! call instead. That memset leaves L2 full of *dirty* lines, and the timed
//! kernel's first misses evict them: up to the whole L2 (50 MB on the H100)
//! is written back to DRAM inside the timed region. At byte-bound shapes
//! (a 1×4096×4096 GEMM reads 34 MB in ~12 µs) that write-back is as large
//! as the work being measured, and the achieved GB/s could never be set
//! against a copy's. A rotation leaves L2 holding the previous launches'
//! clean operand lines (and their small outputs), the state a model's
//! layer-after-layer GEMMs meet; it keeps the launches queued back to back
//! ([`crate::timing`]) with nothing else in the timed stream.
//!
//! **The limits.** At most [`MAX_SETS`] sets per library: a shape that reads
//! less than 2× L2 / [`MAX_SETS`] per launch (3 MB on the H100) is partly
//! L2-warm, for every library alike (each on its own sets). Sets are filled
//! by device-to-device copies of the first (same values, other addresses:
//! L2 caches by address), and every set is used once in the warm-up
//! ([`warmup_launches`]), so the copies' lines are not what the first timed
//! launches read.
//!
//! ```
//! use baton_reference::cold_inputs::{sets_per_library, warmup_launches};
//! let l2 = 50 << 20;
//! // 1×4096×4096 BF16 reads 32 MiB of B (and 8 KiB of A): 4 sets, 128 MiB.
//! assert_eq!(sets_per_library(2 * (4096 * 4096 + 4096), l2), 4);
//! // 4096³ reads 64 MiB: 2 sets.
//! assert_eq!(sets_per_library(2 * 2 * 4096 * 4096, l2), 2);
//! // 8192³ reads 256 MiB, more than 2× L2 alone: 1 set each.
//! assert_eq!(sets_per_library(2 * 2 * 8192 * 8192, l2), 1);
//! assert_eq!(warmup_launches(4), 4);
//! assert_eq!(warmup_launches(1), 3);
//! ```

use baton_runtime::Gpu;
use cudarc::driver::sys::CUdevice_attribute;

/// Most input sets one library rotates through.
pub const MAX_SETS: usize = 32;

/// L2 bytes assumed when the driver does not say (the H100's 50 MB).
pub const FALLBACK_L2_BYTES: usize = 50 << 20;

/// Fewest untimed launches per library before timing.
pub const MIN_WARMUP: usize = 3;

/// The device's L2 cache size in bytes (`CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE`;
/// [`FALLBACK_L2_BYTES`] if the driver does not answer).
///
/// ```no_run
/// let gpu = baton_runtime::Gpu::new(0)?;
/// assert!(baton_reference::cold_inputs::l2_bytes(&gpu) > 0);
/// # Ok::<(), baton_reference::Error>(())
/// ```
pub fn l2_bytes(gpu: &Gpu) -> usize {
    gpu.context()
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
        .ok()
        .and_then(|b| usize::try_from(b).ok())
        .filter(|&b| b > 0)
        .unwrap_or(FALLBACK_L2_BYTES)
}

/// Input sets one library rotates through when each launch reads
/// `read_bytes` of operands: the fewest whose reads together exceed
/// 2 × `l2_bytes`, between 1 and [`MAX_SETS`] (module doc).
///
/// ```
/// use baton_reference::cold_inputs::{MAX_SETS, sets_per_library};
/// assert_eq!(sets_per_library(8 << 20, 50 << 20), 13); // 13 × 8 MiB > 100 MiB
/// assert_eq!(sets_per_library(1, 50 << 20), MAX_SETS);
/// ```
pub fn sets_per_library(read_bytes: usize, l2_bytes: usize) -> usize {
    (2 * l2_bytes / read_bytes.max(1) + 1).clamp(1, MAX_SETS)
}

/// The method in one line, for a benchmark's header.
///
/// ```
/// let line = baton_reference::cold_inputs::describe(50 << 20);
/// assert!(line.contains("> 2× L2 (50 MiB)"), "{line}");
/// ```
pub fn describe(l2_bytes: usize) -> String {
    format!(
        "inputs: each library rotates through its own input sets, > 2× L2 ({} MiB) per rotation, at most {MAX_SETS} sets",
        l2_bytes >> 20
    )
}

/// Untimed launches per library before timing: every set once (so the
/// copies that filled them are out of L2 by the first timed launch), and
/// at least [`MIN_WARMUP`].
///
/// ```
/// assert_eq!(baton_reference::cold_inputs::warmup_launches(13), 13);
/// ```
pub fn warmup_launches(sets: usize) -> usize {
    sets.max(MIN_WARMUP)
}

#[cfg(test)]
mod tests {
    use super::*;

    const L2: usize = 50 << 20;

    #[test]
    fn a_rotation_reads_more_than_twice_l2_by_hand() {
        // 1×1024×4096 BF16: B is 8 MiB, A 8 KiB: 8,396,800 B per launch;
        // 104,857,600 / 8,396,800 = 12.49 → 13 sets (109 MB > 104.9 MB).
        let read = 2 * (1024 * 4096 + 4096);
        assert_eq!(sets_per_library(read, L2), 13);
        assert!(13 * read > 2 * L2 && 12 * read <= 2 * L2);
        // One launch of exactly 2× L2 is not *more* than 2× L2: 2 sets;
        // one byte more is: 1 set.
        assert_eq!(sets_per_library(2 * L2, L2), 2);
        assert_eq!(sets_per_library(2 * L2 + 1, L2), 1);
        // Tiny launches are capped.
        assert_eq!(sets_per_library(0, L2), MAX_SETS);
        assert_eq!(sets_per_library(16 << 10, L2), MAX_SETS);
    }

    #[test]
    fn every_set_is_used_once_before_timing() {
        for sets in 1..=MAX_SETS {
            let w = warmup_launches(sets);
            assert!(w >= sets && w >= MIN_WARMUP, "{sets}: {w}");
        }
    }
}
