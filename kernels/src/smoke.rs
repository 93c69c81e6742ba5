//! The smoke kernel: one `mbarrier` handing 32 words from a producer warp to
//! a consumer warp through dynamic shared memory.
//!
//! Launch: grid (1,1,1), block (64,1,1), at least
//! [`SMOKE_SMEM_BYTES`] bytes of dynamic shared memory; `n <= 32`;
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
use baton::arch::sm90::{self as arch, BarrierRef, MbarrierCell};
use baton::protocol::diag::{Role, WaitSite};
use baton::smem_field;

/// Words the kernel moves at most (one per producer lane).
pub const SMOKE_MAX_N: u32 = 32;

/// Shared-memory layout of the smoke kernel.
#[repr(C)]
pub struct SmokeLayout {
    /// The barrier warp 1 waits on.
    pub bar: MbarrierCell,
    /// The words warp 0 hands over.
    pub data: [u32; 32],
}

/// Dynamic shared memory the smoke kernel needs.
pub const SMOKE_SMEM_BYTES: usize = core::mem::size_of::<SmokeLayout>();

/// See the module documentation.
///
/// # Safety
/// `input` holds `n` readable words and `out` `n + 4` writable words, in
/// device memory; launched as the module documentation says.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn baton_smoke_mbarrier(out: *mut u32, input: *const u32, n: u32) {
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
