//! The host side of stream-K (`baton::protocol::stream_k`): the fixup
//! workspace a GEMM plan owns, and the four kernel arguments it adds.
//!
//! Every Hopper GEMM kernel (BF16 and FP8) takes a `StreamKParams`: the
//! workspace's pointers, the launch's epoch and the launch's schedule as
//! the host computed it (`StreamKSchedule::launch_words`); no stream-K
//! workers in it (`StreamKParams::OFF`) turn stream-K off (the pointers
//! are then never read).

use crate::Gpu;
use crate::error::{GemmError, Result};
use baton::protocol::tile_scheduler::StreamKSchedule;
use baton_kernels_abi::gemm_params::StreamKParams;
use cudarc::driver::{CudaSlice, DevicePtr};
use std::cell::Cell;

/// Full waves a new workspace adds to the stream-K region (the
/// `StreamKSchedule::new` policy).
pub(crate) const DEFAULT_EXTRA_WAVES: u32 = 1;

/// A plan's stream-K workspace: per CTA one `BM × BN` fp32 slot (two
/// consumer-warpgroup halves) and two flags (zeroed once, never cleared),
/// and the epoch of the last launch.
///
/// Split-K is the same schedule on a smaller grid
/// ([`split_k`](Self::split_k)): with `units` work units and exactly
/// `units · splits` workers, `StreamKSchedule` puts every unit in the
/// stream-K region and cuts its K blocks into `splits` contiguous ranges
/// (±1 K block). Each unit's finalizer adds its contributors' partials in
/// worker order, so the sum's order, and so its bits, are the same on
/// every launch.
pub(crate) struct StreamKWorkspace {
    min_segment: u32,
    /// Workers per unit when launched as split-K ([`split_k`](Self::split_k)).
    splits: Option<u32>,
    /// Full waves added to the stream-K region
    /// (`StreamKSchedule::with_extra_waves`).
    extra_waves: Cell<u32>,
    /// CTAs launched with stream-K (every resident worker).
    grid: u32,
    partials_ptr: u64,
    flags_ptr: u64,
    epoch: Cell<u32>,
    _partials: CudaSlice<f32>,
    _flags: CudaSlice<u32>,
}

/// Whether `splits` workers per unit can run `units` units of `k_blocks`
/// K blocks on `slots` resident workers: `1 ≤ splits ≤ max(1, min(slots /
/// units, k_blocks))` (1, whole units, always: with more units than
/// workers too), else [`GemmError::SplitKCount`] naming the bound.
///
/// ```ignore
/// assert!(check_split_k(8, 16, 512, 132).is_ok());
/// assert!(check_split_k(9, 16, 512, 132).is_err()); // 144 workers > 132
/// assert!(check_split_k(1, 289, 2, 132).is_ok()); // split-K off
/// ```
pub(crate) fn check_split_k(splits: u32, units: u32, k_blocks: u32, slots: u32) -> Result<()> {
    let max = (slots / units.max(1)).min(k_blocks).max(1);
    if splits == 0 || splits > max {
        return Err(GemmError::SplitKCount {
            splits,
            units,
            slots,
            k_blocks,
            max,
        }
        .into());
    }
    Ok(())
}

impl StreamKWorkspace {
    /// A workspace for `grid` CTAs of `tile_floats` (BM × BN) fp32 each;
    /// segments of at least `min_segment ≥ 1` K blocks.
    pub(crate) fn new(gpu: &Gpu, min_segment: u32, grid: u32, tile_floats: u32) -> Result<Self> {
        if min_segment == 0 {
            return Err(GemmError::StreamKSegmentZero.into());
        }
        let stream = gpu.stream();
        let partials = crate::device_memory::alloc_zeros::<f32>(
            gpu,
            "stream-K workspace (partial tiles)",
            grid as usize * tile_floats as usize,
        )?;
        let flags = crate::device_memory::alloc_zeros::<u32>(
            gpu,
            "stream-K workspace (flags)",
            2 * grid as usize,
        )?;
        let (partials_ptr, flags_ptr) = (partials.device_ptr(stream).0, flags.device_ptr(stream).0);
        Ok(Self {
            min_segment,
            splits: None,
            extra_waves: Cell::new(DEFAULT_EXTRA_WAVES),
            grid,
            partials_ptr,
            flags_ptr,
            epoch: Cell::new(0),
            _partials: partials,
            _flags: flags,
        })
    }

    /// A split-K workspace: `units` work units of `k_blocks` K blocks, each
    /// split across `splits` workers of `cluster` CTAs (`units · splits`
    /// workers, at most `slots`, all resident: a finalizer waits for its
    /// contributors), `tile_floats` (BM × BN) fp32 per CTA. The stream-K
    /// schedule runs with segments ≥ 1 K block and no extra waves.
    ///
    /// Errors: [`GemmError::SplitKCount`] unless `1 ≤ splits ≤ min(slots /
    /// units, k_blocks)` (callers give 1 no workspace: every unit whole).
    pub(crate) fn split_k(
        gpu: &Gpu,
        splits: u32,
        (units, k_blocks, slots): (u32, u32, u32),
        cluster: u32,
        tile_floats: u32,
    ) -> Result<Self> {
        check_split_k(splits, units, k_blocks, slots)?;
        let mut w = Self::new(gpu, 1, units * splits * cluster, tile_floats)?;
        w.extra_waves.set(0);
        w.splits = Some(splits);
        Ok(w)
    }

    /// Workers per unit, when this is a split-K workspace.
    pub(crate) fn splits(&self) -> Option<u32> {
        self.splits
    }

    /// Minimum segment, K blocks.
    pub(crate) fn min_segment(&self) -> u32 {
        self.min_segment
    }

    /// Full waves added to the stream-K region.
    pub(crate) fn extra_waves(&self) -> u32 {
        self.extra_waves.get()
    }

    /// Sets the full waves added to the stream-K region of a plan's
    /// workspace; an error when the plan has none (stream-K off).
    pub(crate) fn set_extra_waves_of(ws: Option<&Self>, waves: u32) -> Result<()> {
        match ws {
            Some(w) => {
                w.extra_waves.set(waves);
                Ok(())
            }
            None => Err(GemmError::StreamKOff.into()),
        }
    }

    /// CTAs a stream-K launch uses.
    pub(crate) fn grid(&self) -> u32 {
        self.grid
    }

    /// The stream-K parameters of a launch of `units` work units of
    /// `k_blocks` K blocks on this workspace's grid in clusters of
    /// `cluster` CTAs (`grid / cluster` workers), with a new nonzero epoch
    /// (flags from earlier launches never match it: 2^32 − 1 launches apart
    /// at the least) and the schedule computed here, once per launch
    /// (`StreamKSchedule::launch_words`; the kernel rebuilds it without
    /// dividing), or, for `None`, stream-K off.
    pub(crate) fn launch_params(
        ws: Option<&Self>,
        units: u32,
        k_blocks: u32,
        cluster: u32,
    ) -> StreamKParams {
        match ws {
            Some(w) => {
                let epoch = match w.epoch.get().wrapping_add(1) {
                    0 => 1,
                    e => e,
                };
                w.epoch.set(epoch);
                StreamKParams {
                    partials: w.partials_ptr as *mut f32,
                    flags: w.flags_ptr as *mut u32,
                    epoch,
                    schedule: w.schedule(units, k_blocks, cluster).launch_words(),
                }
            }
            None => StreamKParams::OFF,
        }
    }

    /// The stream-K schedule this workspace's launches of `units` units of
    /// `k_blocks` K blocks run, in clusters of `cluster` CTAs (what each
    /// kernel computed itself before session 20).
    fn schedule(&self, units: u32, k_blocks: u32, cluster: u32) -> StreamKSchedule {
        StreamKSchedule::with_extra_waves(
            units,
            k_blocks,
            self.grid / cluster.max(1),
            self.min_segment,
            self.extra_waves.get(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 units on 132 workers: up to 8 splits (128 workers); 9 would need
    /// 144. 2 K blocks cap the split at 2; 0 is never allowed.
    #[test]
    fn split_k_counts_by_hand() {
        assert!(check_split_k(8, 16, 512, 132).is_ok());
        assert!(check_split_k(1, 16, 512, 132).is_ok());
        // More units than workers: 1 (split-K off) is still allowed (it
        // was refused as "1..=0" before session 11), 2 is not.
        assert!(check_split_k(1, 289, 2, 132).is_ok());
        match check_split_k(2, 289, 8, 132) {
            Err(crate::Error::Gemm(GemmError::SplitKCount { max: 1, .. })) => {}
            other => panic!("2 splits of 289 units: {other:?}"),
        }
        for (splits, k_blocks, max) in [(9, 512, 8), (3, 2, 2), (0, 512, 8)] {
            match check_split_k(splits, 16, k_blocks, 132) {
                Err(crate::Error::Gemm(GemmError::SplitKCount { max: m, .. })) => {
                    assert_eq!(m, max)
                }
                other => panic!("{splits} splits of {k_blocks}: {other:?}"),
            }
        }
    }
}
