//! Atomics and thread primitives, switched to loom's under `--cfg loom` so the
//! model checker sees every shared access of the CPU backend.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom::thread::yield_now;
#[cfg(loom)]
pub(crate) use loom::thread_local;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::thread::yield_now;
#[cfg(not(loom))]
pub(crate) use std::thread_local;
