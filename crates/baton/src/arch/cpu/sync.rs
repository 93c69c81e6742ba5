//! Atomics and thread primitives, switched to loom's under `--cfg loom` so the
//! model checker sees every shared access of the CPU backend.

#[cfg(loom)]
pub(crate) use loom::skip_branch;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom::thread::yield_now;
#[cfg(loom)]
pub(crate) use loom::thread_local;

/// Unsuccessful polls of one spin-wait after which a loom execution stops
/// branching (`loom::skip_branch`).
///
/// A spin-wait yields, and loom treats the switch after a yield as free (no
/// preemption). With two threads spinning at once (two consumers on the same
/// `full` barrier, warps in a block sync) it then explores the unfair
/// schedules in which they hand the CPU to each other forever while the
/// thread they wait for never runs; every such path ends in loom's
/// branch-limit panic, so without this cut-off any model with two
/// concurrent waiters fails. A failed poll changes no shared state, so what
/// is cut are executions that differ from explored ones by extra no-op
/// polls (and the free switches those polls grant). The rest of a cut
/// execution still runs with loom's default (least-yielded-first) schedule,
/// so its assertions still hold and a real hang still ends in the
/// branch-limit panic.
#[cfg(loom)]
pub(crate) const LOOM_POLLS_BEFORE_SKIP: u32 = 3;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::thread::yield_now;
#[cfg(not(loom))]
pub(crate) use std::thread_local;
