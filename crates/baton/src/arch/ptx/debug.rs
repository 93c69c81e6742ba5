//! Hang reports: a bounded wait that expires prints where it hung and traps.

use crate::protocol::diag::WaitSite;
use core::arch::asm;

unsafe extern "C" {
    /// CUDA's device-side printf, resolved by ptxas/the driver.
    fn vprintf(format: *const u8, args: *const u8) -> i32;
}

/// Aborts the kernel (`trap`); the launch fails with an illegal-instruction
/// error on the host.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: `trap` ends the thread's execution.
    unsafe { asm!("trap;", options(noreturn, nostack)) }
}

#[repr(C)]
struct HangArgs {
    pipeline: *const u8,
    role: *const u8,
    barrier: *const u8,
    stage: u32,
    phase: u32,
    block: u32,
    thread: u32,
}

/// Prints `site` with the block and thread that hung, then traps.
#[cold]
#[inline(never)]
pub fn report_hang(site: &WaitSite) -> ! {
    let args = HangArgs {
        pipeline: site.pipeline.as_ptr() as *const u8,
        role: site.role.name_c().as_ptr() as *const u8,
        barrier: site.role.barrier_name_c().as_ptr() as *const u8,
        stage: site.stage,
        phase: site.phase,
        block: super::block_idx_x(),
        thread: super::thread_idx_x(),
    };
    // SAFETY: the format string and argument record agree (3 strings, 4 u32).
    unsafe {
        vprintf(
            c"baton: wait timed out: pipeline %s, %s waiting on %s[%u] for phase parity %u (block %u, thread %u)\n"
                .as_ptr() as *const u8,
            &args as *const HangArgs as *const u8,
        );
    }
    trap()
}
