//! Host side of the smoke kernel (`kernels/src/smoke.rs`): one `mbarrier`
//! hands 32 words from a producer warp to a consumer warp.
//!
//! [`run`] draws fresh random input (never zeros), poisons the output,
//! launches, and checks every word: the 32 transformed values and the four
//! `try_wait.parity` results that pin down the barrier's phase semantics.

use crate::error::Result;
use baton_reference::random::XorShift;
use baton_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use baton_runtime::kernel_abi::smoke::{self as abi, ClusterSmokeParams, SmokeParams};
use baton_runtime::{Gpu, Kernels, LaunchConfig};

/// The kernel's name.
pub const KERNEL: &str = abi::SMOKE.name;
/// Words handed over.
pub const N: usize = abi::SMOKE_MAX_N as usize;
/// What unwritten output words hold.
pub const POISON: u32 = 0xDEAD_BEEF;

/// What the kernel computes from an input word.
pub const fn transform(x: u32) -> u32 {
    x.wrapping_mul(3).wrapping_add(1)
}

/// Input words for a seed: nonzero, and none whose expected output equals
/// [`POISON`] (so an unwritten word can never pass).
pub fn input(seed: u64) -> Vec<u32> {
    let mut rng = XorShift::new(seed);
    let mut v = Vec::with_capacity(N);
    while v.len() < N {
        let x = rng.next_u32();
        if x != 0 && transform(x) != POISON {
            v.push(x);
        }
    }
    v
}

/// One checked output word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// What the word means.
    pub name: String,
    /// Expected value.
    pub expected: u32,
    /// Value read back.
    pub got: u32,
}

impl Check {
    /// True when the kernel wrote the expected value.
    pub fn ok(&self) -> bool {
        self.expected == self.got
    }
}

/// The outcome of one smoke run.
#[derive(Clone, Debug)]
pub struct SmokeReport {
    /// Module the kernel came from.
    pub module: String,
    /// Seed of the input.
    pub seed: u64,
    /// Every output word, checked.
    pub checks: Vec<Check>,
}

impl SmokeReport {
    /// True when every check passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(Check::ok)
    }
    /// The failed checks.
    pub fn failures(&self) -> Vec<&Check> {
        self.checks.iter().filter(|c| !c.ok()).collect()
    }
}

/// The expected output for `input`: transformed words, then the four
/// phase flags `[fresh parity 0, fresh parity 1, after parity 0, after parity 1]`.
pub fn expected(input: &[u32]) -> Vec<Check> {
    let mut c: Vec<Check> = input
        .iter()
        .enumerate()
        .map(|(i, &x)| Check {
            name: format!("out[{i}] = in[{i}]*3+1"),
            expected: transform(x),
            got: POISON,
        })
        .collect();
    for (name, e) in [
        ("fresh barrier: try_wait.parity(0) (phase 0 pending)", 0),
        (
            "fresh barrier: try_wait.parity(1) (previous phase counts as complete)",
            1,
        ),
        (
            "after 32 arrivals: try_wait.parity(0) (phase 0 completed)",
            1,
        ),
        ("after 32 arrivals: try_wait.parity(1) (phase 1 pending)", 0),
    ] {
        c.push(Check {
            name: name.into(),
            expected: e,
            got: POISON,
        });
    }
    c
}

/// Runs the smoke kernel of `kernels` once on input drawn from `seed`.
pub fn run(gpu: &Gpu, kernels: &Kernels, seed: u64) -> Result<SmokeReport> {
    let kernel = kernels.kernel(&abi::SMOKE)?;
    let input = input(seed);
    let mut checks = expected(&input);
    let stream = gpu.stream();
    let d_in = stream.clone_htod(&input)?;
    let mut d_out = stream.clone_htod(&vec![POISON; checks.len()])?;
    {
        let (out, _out_sync) = d_out.device_ptr_mut(stream);
        let (input, _in_sync) = d_in.device_ptr(stream);
        let params = SmokeParams {
            out: out as *mut u32,
            input: input as *const u32,
            n: N as u32,
        };
        // SAFETY: `out` has n + 4 words, `input` n; both live until the
        // synchronization inside launch_sync.
        unsafe { kernel.launch_sync(stream, 1, &params)? };
    }
    let out = gpu.stream().clone_dtoh(&d_out)?;
    for (c, got) in checks.iter_mut().zip(out) {
        c.got = got;
    }
    Ok(SmokeReport {
        module: kernels.module_name().to_string(),
        seed,
        checks,
    })
}

/// The cluster smoke kernel's name (`kernels/src/smoke.rs`).
pub const CLUSTER_KERNEL: &str = abi::SMOKE_CLUSTER.name;
/// Words each block of the cluster kernel writes.
pub const CLUSTER_WORDS: usize = abi::CLUSTER_SMOKE_WORDS;

/// The launch of the cluster smoke kernel: `blocks` one-warp blocks in
/// clusters of `cluster` (x only), with `dynamic_smem_bytes` (the module's
/// `size_of` one barrier) each.
///
/// ```
/// use baton_runtime::LaunchLimits;
/// use baton_selftest::smoke;
/// let cfg = smoke::cluster_config(16, 8, 8);
/// assert_eq!(cfg.cluster, Some((8, 1, 1)));
/// cfg.validate(smoke::CLUSTER_KERNEL, &LaunchLimits::HOPPER).unwrap();
/// ```
pub fn cluster_config(blocks: u32, cluster: u32, dynamic_smem_bytes: u32) -> LaunchConfig {
    LaunchConfig {
        cluster: Some((cluster, 1, 1)),
        dynamic_smem_bytes,
        ..baton_runtime::launch_config(&abi::SMOKE_CLUSTER, blocks)
    }
}

/// Checks the cluster kernel's output `out` (`blocks * 4` words) for
/// clusters of `cluster`: one [`Check`] per property, counting the blocks
/// that got it right (expected: all of them).
pub fn cluster_checks(out: &[u32], blocks: u32, cluster: u32) -> Vec<Check> {
    let words: Vec<&[u32]> = out.chunks(CLUSTER_WORDS).take(blocks as usize).collect();
    let count = |f: &dyn Fn(u32, &[u32]) -> bool| {
        words
            .iter()
            .enumerate()
            .filter(|(b, w)| w.len() == CLUSTER_WORDS && f(*b as u32, w))
            .count() as u32
    };
    vec![
        Check {
            name: format!(
                "cluster ({cluster},1,1): %cluster_ctarank == block % {cluster} (blocks right)"
            ),
            expected: blocks,
            got: count(&|b, w| w[0] == b % cluster),
        },
        Check {
            name: format!("cluster ({cluster},1,1): %cluster_nctarank == {cluster} (blocks right)"),
            expected: blocks,
            got: count(&|_, w| w[1] == cluster),
        },
        Check {
            name: format!("cluster ({cluster},1,1): %ctaid.x == block (blocks right)"),
            expected: blocks,
            got: count(&|b, w| w[2] == b),
        },
        Check {
            name: format!(
                "cluster ({cluster},1,1): barrier completed by {cluster} remote arrivals (blocks right)"
            ),
            expected: blocks,
            got: count(&|_, w| w[3] == 1),
        },
    ]
}

/// Runs the cluster smoke kernel of `kernels`: `blocks` blocks in clusters
/// of `cluster`, each CTA's barrier completed by arrivals from every CTA of
/// its cluster through distributed shared memory.
pub fn run_cluster(gpu: &Gpu, kernels: &Kernels, blocks: u32, cluster: u32) -> Result<SmokeReport> {
    let kernel = kernels.kernel(&abi::SMOKE_CLUSTER)?;
    let stream = gpu.stream();
    let mut d_out = stream.clone_htod(&vec![POISON; blocks as usize * CLUSTER_WORDS])?;
    {
        let (out, _out_sync) = d_out.device_ptr_mut(stream);
        let params = ClusterSmokeParams {
            out: out as *mut u32,
        };
        let cfg = cluster_config(blocks, cluster, kernel.dynamic_smem_bytes());
        // SAFETY: `out` has blocks * 4 words and lives until the
        // synchronization below.
        unsafe { kernel.launch_with(stream, &cfg, &params)? };
        stream
            .synchronize()
            .map_err(|source| baton_runtime::Error::Launch {
                kernel: CLUSTER_KERNEL.to_string(),
                source,
            })?;
    }
    let out = gpu.stream().clone_dtoh(&d_out)?;
    Ok(SmokeReport {
        module: kernels.module_name().to_string(),
        seed: 0,
        checks: cluster_checks(&out, blocks, cluster),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_is_fresh_nonzero_and_cannot_hide_unwritten_words() {
        let a = input(1);
        let b = input(2);
        assert_eq!(a.len(), N);
        assert_ne!(a, b);
        assert!(a.iter().all(|&x| x != 0 && transform(x) != POISON));
        assert_eq!(a, input(1), "same seed, same input");
    }

    #[test]
    fn an_untouched_output_fails_every_check() {
        let c = expected(&input(7));
        assert_eq!(c.len(), N + 4);
        assert!(
            c.iter().all(|c| !c.ok()),
            "poison must never equal an expected value"
        );
    }

    #[test]
    fn cluster_checks_count_right_blocks() {
        let (blocks, cluster) = (8, 4);
        let mut out: Vec<u32> = (0..blocks)
            .flat_map(|b| [b % cluster, cluster, b, 1])
            .collect();
        assert!(cluster_checks(&out, blocks, cluster).iter().all(Check::ok));
        out[4 * 5] = 0; // block 5 reports rank 0 instead of 1
        out[4 * 7 + 3] = POISON; // block 7 never finished its wait
        let c = cluster_checks(&out, blocks, cluster);
        assert_eq!(c.iter().map(|c| c.got).collect::<Vec<_>>(), [7, 8, 8, 7]);
        let poisoned = vec![POISON; (blocks * 4) as usize];
        assert!(
            cluster_checks(&poisoned, blocks, cluster)
                .iter()
                .all(|c| c.got == 0)
        );
    }
}
