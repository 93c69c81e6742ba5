//! Event timing of GPU launches queued back to back.
//!
//! Every benchmark in baton compares kernels the same way: each launch is
//! bracketed by its own pair of events, and nothing synchronizes until all
//! launches of all repetitions are enqueued. The GPU is therefore busy when
//! each launch is enqueued, and the host's launch overhead (argument
//! packing, `cuLaunchKernelEx`, a library's heuristics: several to tens of
//! microseconds) overlaps earlier work for every kernel alike.
//!
//! Synchronizing after each launch instead makes the first event of each
//! launch fire on an idle GPU, so the measured time then includes that
//! host overhead — for whichever launch comes first after the
//! synchronization only, when several are timed per repetition.
//!
//! ```no_run
//! use baton_reference::timing::QueuedTimer;
//! use baton_runtime::Gpu;
//! let gpu = Gpu::new(0)?;
//! let mut timer = QueuedTimer::<2>::new();
//! for rep in 0..23 {
//!     timer.time(&gpu, 0, || Ok::<_, baton_runtime::Error>(()))?; // enqueue kernel A here
//!     timer.time(&gpu, 1, || Ok::<_, baton_runtime::Error>(()))?; // enqueue kernel B here
//! }
//! let [a, b] = timer.finish(&gpu, 3)?;
//! assert_eq!(a.len(), 20);
//! # let _ = b;
//! # Ok::<(), baton_reference::Error>(())
//! ```

use crate::Result;
use baton_runtime::Gpu;
use cudarc::driver::{CudaEvent, sys};

/// Collects event pairs around launches of `SLOTS` kinds (ours, the
/// reference, …), enqueued without synchronization; [`QueuedTimer::finish`]
/// synchronizes once and returns the times.
pub struct QueuedTimer<const SLOTS: usize> {
    slots: [Vec<(CudaEvent, CudaEvent)>; SLOTS],
}

impl<const SLOTS: usize> Default for QueuedTimer<SLOTS> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const SLOTS: usize> QueuedTimer<SLOTS> {
    /// A timer for `SLOTS` kinds of launch.
    pub fn new() -> Self {
        Self {
            slots: core::array::from_fn(|_| Vec::new()),
        }
    }

    /// Records an event, runs `enqueue` (which enqueues the launch to time
    /// on [`Gpu::stream`]), records a second event; counts the pair towards
    /// `slot`. Does not wait for the GPU.
    pub fn time<E>(
        &mut self,
        gpu: &Gpu,
        slot: usize,
        enqueue: impl FnOnce() -> std::result::Result<(), E>,
    ) -> Result<()>
    where
        crate::Error: From<E>,
    {
        let ctx = gpu.context();
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let (e0, e1) = (ctx.new_event(flags)?, ctx.new_event(flags)?);
        e0.record(gpu.stream())?;
        enqueue()?;
        e1.record(gpu.stream())?;
        self.slots[slot].push((e0, e1));
        Ok(())
    }

    /// Waits for everything enqueued, then returns each slot's times in
    /// milliseconds, in launch order, without its first `warmup` launches.
    pub fn finish(self, gpu: &Gpu, warmup: usize) -> Result<[Vec<f64>; SLOTS]> {
        gpu.synchronize()?;
        let mut out: [Vec<f64>; SLOTS] = core::array::from_fn(|_| Vec::new());
        for (times, pairs) in out.iter_mut().zip(&self.slots) {
            *times = pairs
                .iter()
                .skip(warmup)
                .map(|(e0, e1)| Ok(e0.elapsed_ms(e1)? as f64))
                .collect::<Result<_>>()?;
        }
        Ok(out)
    }
}

/// The median of `v` (the upper one of an even count); NaN when empty.
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_takes_the_middle_and_nan_when_empty() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 3.0);
        assert!(median(Vec::new()).is_nan());
    }
}
