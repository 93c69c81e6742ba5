//! GEMM plans (BF16 and FP8) kept per operand set and stream.
//!
//! A Python call has the same work to do as a Rust caller of
//! [`GemmPlan::run`] or [`Fp8GemmPlan::run`]: the plan (configuration and
//! split-K or stream-K from the cost model, tensor maps encoded once, fixup
//! workspace) is made with [`GemmPlan::from_views`] or
//! [`Fp8GemmPlan::from_views`] on the first call with an operand set and
//! kept here; later calls run it. A plan is a function of its operands'
//! addresses, shapes and strides, of the stream (its workspace is used in
//! that stream's order) and of whether the stream was capturing a graph
//! when it was made (the runtime gives a plan made under capture no
//! split-K or stream-K: a replay would repeat their epoch).
//!
//! Plans with a fixup workspace hold device memory (up to 17 MB each), so
//! each cache is cleared when it holds [`MAX_WITH_WORKSPACE`] of them or
//! [`CAPACITY`] plans in all; dropping a plan frees its workspace in its
//! stream's order, after the launches that used it.

use baton_runtime::gemm::GemmPlan;
use baton_runtime::gemm::fp8::Fp8GemmPlan;
use std::collections::HashMap;

/// A plan the cache can keep: whether it holds a fixup workspace.
pub trait CachedPlan {
    /// Whether the plan holds a split-K / stream-K workspace.
    fn holds_workspace(&self) -> bool;
}

impl CachedPlan for GemmPlan<'static> {
    fn holds_workspace(&self) -> bool {
        self.stream_k().is_some()
    }
}

impl CachedPlan for Fp8GemmPlan<'static> {
    fn holds_workspace(&self) -> bool {
        self.stream_k().is_some()
    }
}

/// What a plan is a function of: a kind tag, M, N, K, each operand's
/// address and row stride, the stream, and whether it was capturing.
pub type PlanKey = [u64; 16];

/// Plans kept before the cache is cleared.
pub const CAPACITY: usize = 1024;

/// Plans with a split-K / stream-K workspace kept before the cache is
/// cleared (at most about 280 MB of workspaces).
pub const MAX_WITH_WORKSPACE: usize = 16;

/// Plans by [`PlanKey`].
pub struct PlanCache<P> {
    entries: HashMap<PlanKey, P>,
    with_workspace: usize,
}

impl<P> Default for PlanCache<P> {
    fn default() -> Self {
        Self {
            entries: HashMap::new(),
            with_workspace: 0,
        }
    }
}

impl<P: CachedPlan> PlanCache<P> {
    /// The plan for `key`, made by `make` on the first call with it.
    pub fn get_or_make<E>(
        &mut self,
        key: &PlanKey,
        make: impl FnOnce() -> Result<P, E>,
    ) -> Result<&P, E> {
        if !self.entries.contains_key(key) {
            let plan = make()?;
            let workspace = plan.holds_workspace();
            if self.entries.len() >= CAPACITY
                || (workspace && self.with_workspace >= MAX_WITH_WORKSPACE)
            {
                self.entries.clear();
                self.with_workspace = 0;
            }
            self.with_workspace += workspace as usize;
            self.entries.insert(*key, plan);
        }
        Ok(&self.entries[key])
    }
}
