//! Which kernel build runs where: the GPU [`Target`] and the build
//! [`Variant`]. A leaf module: it depends on nothing else in the crate.

/// Compute capability the sm_90a kernels need.
pub const REQUIRED_ARCH: (u32, u32) = (9, 0);

/// Compute capability the sm_100a kernels need.
pub const SM100A_ARCH: (u32, u32) = (10, 0);

/// Which kernel build a GPU runs: architecture-specific (`a`) PTX runs only
/// on the one compute capability it was built for.
///
/// ```
/// use baton_runtime::Target;
/// assert_eq!(Target::of_compute_capability((9, 0)), Some(Target::Sm90a));
/// assert_eq!(Target::of_compute_capability((10, 0)), Some(Target::Sm100a));
/// assert_eq!(Target::of_compute_capability((8, 0)), None); // A100: no build
/// assert_eq!(Target::of_compute_capability((12, 0)), None); // RTX 50xx: no build
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// Hopper (H100, H200, GH200), compute capability 9.0: `baton_sm90a.ptx`
    /// (every kernel, release and debug builds).
    Sm90a,
    /// Blackwell datacenter (B200, GB200), compute capability 10.0:
    /// `baton_sm100a.ptx` (the `tcgen05` kernels and those without `wgmma`;
    /// release build only).
    Sm100a,
}

impl Target {
    /// Every target baton builds kernels for.
    pub const ALL: [Target; 2] = [Target::Sm90a, Target::Sm100a];

    /// The target whose kernels run on compute capability `cc`, if any.
    pub const fn of_compute_capability(cc: (u32, u32)) -> Option<Target> {
        match cc {
            REQUIRED_ARCH => Some(Target::Sm90a),
            SM100A_ARCH => Some(Target::Sm100a),
            _ => None,
        }
    }

    /// The compute capability this target's kernels run on.
    pub const fn compute_capability(self) -> (u32, u32) {
        match self {
            Target::Sm90a => REQUIRED_ARCH,
            Target::Sm100a => SM100A_ARCH,
        }
    }

    /// The PTX target name (`sm_90a`, `sm_100a`).
    pub const fn name(self) -> &'static str {
        match self {
            Target::Sm90a => "sm_90a",
            Target::Sm100a => "sm_100a",
        }
    }

    /// The GPUs of this target, for messages.
    pub const fn gpus(self) -> &'static str {
        match self {
            Target::Sm90a => "Hopper: H100, H200, GH200",
            Target::Sm100a => "Blackwell: B200, GB200",
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (major, minor) = self.compute_capability();
        write!(
            f,
            "{} (compute capability {major}.{minor}, {})",
            self.name(),
            self.gpus()
        )
    }
}

/// Which build of the kernels to load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Optimized, unbounded `mbarrier` waits: what benchmarks run.
    Release,
    /// Debug assertions on (still `opt-level=3`): bounded waits that print
    /// the hung pipeline, role, stage and phase, then trap.
    Debug,
}

impl Variant {
    /// Both variants.
    pub const ALL: [Variant; 2] = [Variant::Release, Variant::Debug];

    /// The PTX module's name: `baton_sm90a` or `baton_sm90a_debug`.
    pub const fn module_name(self) -> &'static str {
        match self {
            Variant::Release => "baton_sm90a",
            Variant::Debug => "baton_sm90a_debug",
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Variant::Release => "release",
            Variant::Debug => "debug",
        })
    }
}
