//! The smoke kernel: one `mbarrier` handing 32 words from a producer warp to
//! a consumer warp through dynamic shared memory.
//!
//! Launch: grid (1,1,1), block (64,1,1), at least
//! `size_of::<SmokeLayout>()` bytes of dynamic shared memory (the spec
//! `baton_kernels_abi::smoke::SMOKE`); `n <= 32`;
//! `out` holds `n + 4` words.
//!
//! * thread 0 initializes the barrier (count 32), records
//!   `try_wait.parity(0)` and `try_wait.parity(1)` on the fresh barrier
//!   (expected 0 and 1: a fresh barrier is in phase 0, whose predecessor
//!   counts as complete), fences the init and the block synchronizes;
//! * warp 0 copies `input[0..n)` into shared memory and each of its 32 lanes
//!   arrives once, completing phase 0;
//! * warp 1 waits for parity 0, then writes `out[i] = data[i] * 3 + 1` and
//!   records `try_wait.parity(0)` and `try_wait.parity(1)` again (expected 1
//!   and 0: phase 0 completed, phase 1 has not).
//!
//! Output: `out[0..n)` the transformed data; `out[n..n+4)` =
//! `[fresh parity0, fresh parity1, after parity0, after parity1]`.

use crate::smem_io::{ld_shared_u32, st_shared_u32};
use baton::arch::ptx::{self as arch, BarrierRef};
use baton::protocol::diag::{Role, WaitSite};
use baton::smem_field;
use baton_kernels_abi::smoke as abi;
pub use baton_kernels_abi::smoke::{
    CLUSTER_SMOKE_WORDS, ClusterSmokeLayout, ClusterSmokeParams, SMOKE_MAX_N, SmokeLayout,
    SmokeParams,
};

baton::kernel! {
    #[spec(abi::SMOKE)]
    /// See the module documentation.
    ///
    /// # Safety
    /// `input` holds `n` readable words and `out` `n + 4` writable words, in
    /// device memory; launched as the module documentation says.
    pub fn baton_smoke_mbarrier(p: SmokeParams) {
        let SmokeParams { out, input, n } = p;
        if n > SMOKE_MAX_N || arch::block_dim_x() != 64 {
            arch::trap();
        }
        // SAFETY: this kernel is the only user of the block's dynamic shared
        // memory; the barrier orders the accesses to `data`.
        let smem = unsafe { arch::dynamic_smem::<SmokeLayout>() };
        let bar = BarrierRef::new(smem_field!(smem, SmokeLayout, bar));
        let data = smem_field!(smem, SmokeLayout, data);
        let tid = arch::thread_idx_x();
        let n_us = n as usize;

        if tid == 0 {
            // SAFETY: one thread initializes before the block barrier below.
            unsafe { bar.init(32) };
            let fresh0 = bar.try_wait_parity(0) as u32;
            let fresh1 = bar.try_wait_parity(1) as u32;
            // SAFETY: out has n + 4 words.
            unsafe {
                out.add(n_us).write_volatile(fresh0);
                out.add(n_us + 1).write_volatile(fresh1);
            }
            arch::fence_barrier_init();
        }
        arch::sync_threads();

        let lane = arch::lane_id();
        match arch::warp_idx() {
            0 => {
                if lane < n {
                    // SAFETY: lane < n, input has n words.
                    let v = unsafe { input.add(lane as usize).read_volatile() };
                    st_shared_u32(data.at(lane as usize), v);
                }
                bar.arrive();
            }
            _ => {
                bar.wait_parity(0, || WaitSite {
                    pipeline: c"smoke",
                    role: Role::Consumer,
                    stage: 0,
                    phase: 0,
                });
                if lane < n {
                    let v = ld_shared_u32(data.at(lane as usize));
                    // SAFETY: lane < n, out has n + 4 words.
                    unsafe {
                        out.add(lane as usize)
                            .write_volatile(v.wrapping_mul(3).wrapping_add(1))
                    };
                }
                let after0 = bar.try_wait_parity(0) as u32;
                let after1 = bar.try_wait_parity(1) as u32;
                if lane == 0 {
                    // SAFETY: out has n + 4 words.
                    unsafe {
                        out.add(n_us + 2).write_volatile(after0);
                        out.add(n_us + 3).write_volatile(after1);
                    }
                }
            }
        }
    }
}

baton::kernel! {
    #[spec(abi::SMOKE_CLUSTER)]
    /// Cluster smoke kernel: checks the launch's cluster shape and cross-CTA
    /// `mbarrier` arrivals through distributed shared memory.
    ///
    /// Launch: any grid whose x is a multiple of the cluster's x, clusters of
    /// `(c, 1, 1)` with `c <= 32`, block (32, 1, 1), at least 8 bytes of dynamic
    /// shared memory; `out` holds `grid.x * 4` words. Thread 0 of each CTA
    /// initializes its barrier with count `c`; after a cluster barrier, thread
    /// `t < c` of every CTA arrives once on the barrier of CTA `t` of the cluster
    /// (`mapa` + `mbarrier.arrive.release.cluster`), so each barrier's phase 0
    /// completes only when all `c` CTAs have arrived. Every thread waits for it;
    /// thread 0 then writes `[cluster rank, cluster size, block index, 1]` to
    /// `out[4 * block ..]`. A final cluster barrier keeps every CTA's shared
    /// memory alive until all remote arrivals are done.
    ///
    /// The arrivals are spread over threads on purpose: with `if tid == 0`
    /// both before and after a `cluster_sync`, LLVM jump-threads the barrier into
    /// two copies, one per branch, and `barrier.cluster.*.aligned` executed from
    /// two different instructions by one warp is undefined behaviour in PTX.
    ///
    /// # Safety
    /// `out` holds `grid.x * 4` writable words of device memory.
    pub fn baton_smoke_cluster(p: ClusterSmokeParams) {
        let ClusterSmokeParams { out } = p;
        // SAFETY: the kernel is the only user of its dynamic shared memory.
        let smem = unsafe { arch::dynamic_smem::<ClusterSmokeLayout>() };
        let bar = BarrierRef::new(smem_field!(smem, ClusterSmokeLayout, bar));
        let rank = arch::cluster_cta_rank();
        let size = arch::cluster_size();
        let tid = arch::thread_idx_x();
        if size > 32 || arch::block_dim_x() != 32 {
            arch::trap();
        }
        if tid == 0 {
            // SAFETY: one thread initializes, before the cluster barrier.
            unsafe { bar.init(size) };
            arch::fence_barrier_init();
        }
        arch::cluster_sync();
        if tid < size {
            bar.arrive_cluster(tid);
        }
        bar.wait_parity(0, || WaitSite {
            pipeline: c"smoke-cluster",
            role: Role::Consumer,
            stage: 0,
            phase: 0,
        });
        if tid == 0 {
            let base = arch::block_idx_x() as usize * CLUSTER_SMOKE_WORDS;
            // SAFETY: out holds grid.x * 4 words.
            unsafe {
                out.add(base).write_volatile(rank);
                out.add(base + 1).write_volatile(size);
                out.add(base + 2).write_volatile(arch::block_idx_x());
                out.add(base + 3).write_volatile(1);
            }
        }
        arch::cluster_sync();
    }
}
