//! The host's shared-memory sizes agree with the kernels' layouts: every
//! kernel that takes `dynamic_smem::<Layout>()` traps when given fewer than
//! `size_of::<Layout>()` bytes, and that size is visible in the PTX as the
//! comparison right after `%dynamic_smem_size`. A host constant smaller than
//! it would make every launch trap; this test catches it without a GPU.
//! Skips (fails under CI=true) when no PTX is embedded.

use baton_runtime::{Variant, gemm, ptx};
use xtask::codegen::{Dialect, kernel_body};

fn required_smem(ptx: &str, kernel: &str) -> u32 {
    let body =
        kernel_body(ptx, kernel, Dialect::Ptx).unwrap_or_else(|| panic!("{kernel} not in the PTX"));
    let at = body
        .find("%dynamic_smem_size")
        .unwrap_or_else(|| panic!("{kernel} does not check its shared memory size"));
    let line = body[at..]
        .lines()
        .find(|l| l.contains("setp.lt.u32"))
        .expect("size comparison");
    line.trim()
        .trim_end_matches(';')
        .rsplit(',')
        .next()
        .unwrap()
        .trim()
        .parse()
        .expect("a constant size")
}

/// Every configuration's host size equals what its kernel demands in `ptx`,
/// within the 227 KiB opt-in limit.
fn check_configs(ptx: &str, configs: &[gemm::GemmConfig]) {
    for &config in configs {
        let need = required_smem(ptx, config.kernel());
        let host = config.smem_bytes();
        println!(
            "{}: layout needs {need} bytes; host launches with {host}",
            config.kernel()
        );
        assert_eq!(
            host, need,
            "{config:?}: host smem_bytes() {host} != kernel layout {need}"
        );
        assert!(
            host <= 227 * 1024,
            "{config:?} exceeds the 227 KiB opt-in limit"
        );
    }
}

/// The PTX text, or `None` after skipping (failing under `CI=true`).
fn embedded(text: Option<&'static str>, what: &str) -> Option<&'static str> {
    if text.is_none() {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but no {what} PTX embedded");
        }
        baton_runtime::report_skip(&format!("no {what} PTX embedded"));
    }
    text
}

#[test]
fn gemm_host_smem_matches_the_kernel_layouts() {
    if let Some(text) = embedded(ptx::get(Variant::Release).ok(), "sm_90a") {
        check_configs(text, &gemm::GemmConfig::SM90);
    }
}

#[test]
fn sm100_gemm_host_smem_matches_the_kernel_layout() {
    if let Some(text) = embedded(ptx::sm100a(), "sm_100a") {
        check_configs(text, &gemm::GemmConfig::SM100);
    }
}

#[test]
fn fp8_gemm_host_smem_matches_the_kernel_layouts() {
    use baton_runtime::gemm::fp8 as gemm_fp8;
    if let Some(text) = embedded(ptx::get(Variant::Release).ok(), "sm_90a") {
        for kernel in gemm_fp8::VARIANTS {
            let need = required_smem(text, kernel);
            // The host's one source: the kernel spec, size_of the layout.
            let host = gemm_fp8::spec_of(kernel)
                .expect("a variant has a spec")
                .dynamic_smem_bytes;
            println!("{kernel}: layout needs {need} bytes; the spec says {host}");
            assert_eq!(
                host, need,
                "{kernel}: spec dynamic_smem_bytes {host} != kernel layout {need}"
            );
            assert!(
                host <= 227 * 1024,
                "{kernel} exceeds the 227 KiB opt-in limit"
            );
        }
    }
}

#[test]
fn block_scaled_host_smem_matches_the_kernel_layouts() {
    use baton::block_scale::{Mxfp8, Nvfp4};
    use baton_runtime::gemm::block_scaled::BlockScaledGemmFormat;
    if let Some(text) = embedded(ptx::sm100a(), "sm_100a") {
        // The host launches with the module's baton-spec record (size_of the
        // layout on the device); it must be what the kernel checks for.
        let specs = baton_runtime::device_specs(text);
        for kernel in [Mxfp8::KERNEL, Nvfp4::KERNEL] {
            let need = required_smem(text, kernel);
            let host = specs
                .iter()
                .find(|s| s.name == kernel)
                .unwrap_or_else(|| panic!("{kernel}: no baton-spec record in the sm_100a PTX"))
                .dynamic_smem_bytes;
            println!("{kernel}: layout needs {need} bytes; host launches with {host}");
            assert_eq!(host, need, "{kernel}: spec's dynamic smem != kernel layout");
            assert!(host <= 227 * 1024, "{kernel} exceeds 227 KiB");
        }
    }
}
