//! The smoke kernel on a real GPU: both PTX variants, fresh random input,
//! poisoned output, every word checked. Without a CUDA GPU it prints
//! `SKIPPED: no CUDA GPU (<reason>)` and returns.

use baton_reference::random::XorShift;
use baton_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use baton_runtime::kernel_abi::smoke::{SMOKE, SmokeParams};
use baton_runtime::{Error, Gpu, LaunchConfig, Variant};
use baton_selftest::smoke;

#[test]
fn smoke_kernel_hands_data_through_an_mbarrier() {
    let Some(gpu) = Gpu::for_test() else { return };
    println!(
        "GPU: {} (sm_{}{}, {} SMs)",
        gpu.name(),
        gpu.arch().0,
        gpu.arch().1,
        gpu.sm_count()
    );
    for variant in Variant::ALL {
        let kernels =
            baton_selftest::kernels::load_kernels(&gpu, variant).unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..3 {
            let seed = XorShift::seed_from_time();
            let report =
                smoke::run(&gpu, &kernels, seed).unwrap_or_else(|e| panic!("{variant}: {e}"));
            assert!(
                report.passed(),
                "{variant} seed {seed:#x}: failed checks: {:#?}",
                report.failures()
            );
        }
    }
}

#[test]
fn oversized_shared_memory_is_refused_before_launch() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = baton_selftest::kernels::load_kernels(&gpu, Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let k = kernels.kernel(&SMOKE).unwrap();
    let requested = gpu.max_smem_optin() + 1024;
    let cfg = LaunchConfig {
        dynamic_smem_bytes: requested,
        ..k.launch_config(1)
    };
    let stream = gpu.stream();
    let mut out = stream.alloc_zeros::<u32>(smoke::N + 4).unwrap();
    let input = stream.clone_htod(&smoke::input(1)).unwrap();
    let (out_ptr, _out_sync) = out.device_ptr_mut(stream);
    let (in_ptr, _in_sync) = input.device_ptr(stream);
    let params = SmokeParams {
        out: out_ptr as *mut u32,
        input: in_ptr as *const u32,
        n: smoke::N as u32,
    };
    // SAFETY: real buffers of the kernel's sizes; the launch is refused
    // before it is enqueued.
    let err = unsafe { k.launch_with(stream, &cfg, &params) }.unwrap_err();
    match err {
        Error::SmemTooLarge {
            requested: r, max, ..
        } => {
            assert_eq!(r, requested);
            assert!(max <= gpu.max_smem_optin());
        }
        other => panic!("expected SmemTooLarge, got {other}"),
    }
}

#[test]
fn unknown_kernel_lists_the_module() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = baton_selftest::kernels::load_kernels(&gpu, Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    let msg = kernels
        .get("no_such_kernel")
        .err()
        .expect("must fail")
        .to_string();
    assert!(
        msg.contains("no_such_kernel") && msg.contains(smoke::KERNEL),
        "{msg}"
    );
}

#[test]
fn bad_ptx_is_rejected_with_the_jit_log() {
    let Some(gpu) = Gpu::for_test() else { return };
    let bad = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry broken() { this_is_not_ptx; }\n";
    match gpu.load_ptx(bad, "broken") {
        Err(Error::PtxRejected { log, .. }) => {
            assert!(!log.is_empty(), "JIT log should explain the error")
        }
        Err(e) => panic!("expected PtxRejected, got {e}"),
        Ok(_) => panic!("invalid PTX was accepted"),
    }
}

#[test]
fn cluster_launch_and_remote_mbarrier_arrivals() {
    let Some(gpu) = Gpu::for_test() else { return };
    for variant in Variant::ALL {
        let kernels =
            baton_selftest::kernels::load_kernels(&gpu, variant).unwrap_or_else(|e| panic!("{e}"));
        // 16 needs the non-portable cluster attribute, which launch sets.
        for cluster in [1, 2, 4, 8, 16] {
            let blocks = 3 * cluster;
            let r = smoke::run_cluster(&gpu, &kernels, blocks, cluster)
                .unwrap_or_else(|e| panic!("{variant}, clusters of {cluster}: {e}"));
            assert!(
                r.passed(),
                "{variant}, clusters of {cluster}: {:#?}",
                r.failures()
            );
        }
    }
}
