//! Architecture backends.
//!
//! Exactly one backend is *current* for a compilation target and is re-exported
//! as [`current`]: `sm90` on `nvptx64`, [`cpu`] everywhere else.
//! `sm100` (nvptx64 only) adds Blackwell's tensor memory and `tcgen05` MMA
//! on top of `sm90`; only kernels built for sm_100a may call it.
//! [`tcgen05_desc`] holds its descriptor encodings, on every target so that
//! host tests check them. The protocol
//! code (`crate::protocol`) only calls the operations every backend provides:
//!
//! | operation | sm90 (PTX) | cpu |
//! |---|---|---|
//! | [`BarrierRef::init`](current::BarrierRef::init) | `mbarrier.init` | store |
//! | `arrive` | `mbarrier.arrive` (one per thread) | one arrival per simulated lane |
//! | `arrive_expect_tx` | `mbarrier.arrive.expect_tx` | same, on atomics |
//! | `try_wait_parity` | `mbarrier.try_wait.parity` | load + compare |
//! | `wait_parity` | try_wait loop (bounded in debug builds) | spin + yield, bounded |
//! | `fence_barrier_init` | `fence.mbarrier_init.release.cluster` | no-op |

#[cfg(not(target_arch = "nvptx64"))]
pub mod cpu;
#[cfg(target_arch = "nvptx64")]
pub mod sm100;
#[cfg(target_arch = "nvptx64")]
pub mod sm90;
pub mod tcgen05_desc;
pub mod tmem_addr;

#[cfg(not(target_arch = "nvptx64"))]
pub use cpu as current;
#[cfg(target_arch = "nvptx64")]
pub use sm90 as current;
