//! Builds `kernel/` for `nvptx64-nvidia-cuda` into `$OUT_DIR/kv_kernel_sm90a.ptx`
//! (release: plain waits) and `kv_kernel_sm90a_debug.ptx` (debug
//! assertions: bounded waits that report a hung pipeline), with launch bounds
//! and the shared-memory declaration from the kernel's `KernelSpec`.

fn main() {
    baton_build::KernelCrate::new("kernel")
        .target(baton_build::Target::Sm90a)
        .variant(baton_build::Variant::Release)
        .variant(baton_build::Variant::Debug)
        .build_or_exit();
}
