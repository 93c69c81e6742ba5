//! Builds `attention/kernel` for `nvptx64-nvidia-cuda` into
//! `$OUT_DIR/baton_attention_kernel_sm90a.ptx` (release) and
//! `…_sm90a_debug.ptx` (bounded waits that report a hung pipeline), with
//! launch bounds and shared memory from the kernels' `KernelSpec`s.

fn main() {
    baton_build::KernelCrate::new("../../attention/kernel")
        .target(baton_build::Target::Sm90a)
        .variant(baton_build::Variant::Release)
        .variant(baton_build::Variant::Debug)
        .build_or_exit();
}
