//! CPU simulation of Blackwell's tensor memory and `tcgen05` operations.

use crate::arch::tmem_addr::{TMEM_COLUMNS, TMEM_LANES};
use std::sync::Mutex;

/// One CTA's simulated TMEM: 128 lanes × 512 32-bit cells and the
/// allocated column ranges.
pub(crate) struct TmemState {
    inner: Mutex<TmemInner>,
}

struct TmemInner {
    #[allow(dead_code)] // read by the tcgen05 simulation (next step)
    cells: Vec<u32>,
    /// Allocated column ranges `(first, count)`.
    allocs: Vec<(u32, u32)>,
}

impl TmemState {
    pub(crate) fn new() -> Self {
        Self {
            inner: Mutex::new(TmemInner {
                cells: vec![0; (TMEM_LANES * TMEM_COLUMNS) as usize],
                allocs: Vec::new(),
            }),
        }
    }

    /// Panics if columns are still allocated when CTA `rank` exits.
    pub(crate) fn check_exit(&self, rank: u32) {
        let t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        assert!(
            t.allocs.is_empty(),
            "baton cpu: CTA {rank} exits with TMEM columns still allocated (first column, count): {:?}",
            t.allocs
        );
    }
}
