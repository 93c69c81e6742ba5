//! What a hung wait reports: which pipeline, which role, which barrier, stage
//! and phase.

use core::ffi::CStr;

/// The side of a pipeline a thread plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Fills stages; waits on `empty[stage]`, arrives on `full[stage]`.
    Producer,
    /// Drains stages; waits on `full[stage]`, arrives on `empty[stage]`.
    Consumer,
    /// A group of an [`OrderedBarrier`](super::ordered_barrier::OrderedBarrier):
    /// waits on `turn[turn × GROUPS + group]`, arrives on the next group's.
    OrderedGroup,
}

impl Role {
    /// `"producer"`, `"consumer"` or `"ordered group"`, NUL-terminated for
    /// device printf.
    pub const fn name_c(self) -> &'static CStr {
        match self {
            Role::Producer => c"producer",
            Role::Consumer => c"consumer",
            Role::OrderedGroup => c"ordered group",
        }
    }

    /// The barrier array this role waits on: `"empty"` (producer), `"full"`
    /// (consumer) or `"turn"` (ordered group).
    pub const fn barrier_name_c(self) -> &'static CStr {
        match self {
            Role::Producer => c"empty",
            Role::Consumer => c"full",
            Role::OrderedGroup => c"turn",
        }
    }
}

/// Where a wait happened; built lazily, only when a bounded wait expires.
///
/// ```
/// use baton::protocol::diag::{Role, WaitSite};
/// let site = WaitSite { pipeline: c"mainloop", role: Role::Consumer, stage: 2, phase: 1 };
/// assert_eq!(site.to_string(), "pipeline mainloop: consumer waiting on full[2] for phase parity 1");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct WaitSite {
    /// The pipeline's name (given at construction).
    pub pipeline: &'static CStr,
    /// Who waited.
    pub role: Role,
    /// Stage index of the barrier waited on.
    pub stage: u32,
    /// Phase parity waited for.
    pub phase: u32,
}

impl core::fmt::Display for WaitSite {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "pipeline {}: {} waiting on {}[{}] for phase parity {}",
            self.pipeline.to_str().unwrap_or("?"),
            self.role.name_c().to_str().unwrap_or("?"),
            self.role.barrier_name_c().to_str().unwrap_or("?"),
            self.stage,
            self.phase
        )
    }
}
