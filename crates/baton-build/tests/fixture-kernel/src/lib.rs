//! Fixture: two kernels declared with `baton::kernel!`, one using dynamic
//! shared memory, both with parameter structs passed by value.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use baton::kernel::{KernelParams, KernelSpec};

/// `out[i] = input[i] * factor + bias` for `i < n`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct AxpbParams {
    pub out: *mut f32,
    pub input: *const f32,
    pub n: u32,
    pub factor: f32,
    pub bias: f32,
}
// SAFETY: repr(C), raw pointers and plain numbers.
unsafe impl KernelParams for AxpbParams {}

pub const AXPB: KernelSpec<AxpbParams> = KernelSpec::new("fixture_axpb", 128).hot();

/// Staging buffer of the reversing kernel.
#[repr(C)]
pub struct ReverseSmem {
    pub words: [u32; 256],
}

/// Reverses 256 words through shared memory.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ReverseParams {
    pub out: *mut u32,
    pub input: *const u32,
}
// SAFETY: repr(C) of raw pointers.
unsafe impl KernelParams for ReverseParams {}

pub const REVERSE: KernelSpec<ReverseParams> = KernelSpec::new("fixture_reverse", 256)
    .with_cluster([2, 1, 1])
    .with_min_blocks_per_sm(2)
    .with_dynamic_smem::<ReverseSmem>();

baton::kernel! {
    #[spec(AXPB)]
    /// See [`AxpbParams`].
    pub fn fixture_axpb(p: AxpbParams) {
        let i = baton::arch::ptx::block_idx_x() * 128 + baton::arch::ptx::thread_idx_x();
        if i < p.n {
            // SAFETY: i < n, the buffers hold n floats.
            unsafe { *p.out.add(i as usize) = *p.input.add(i as usize) * p.factor + p.bias };
        }
    }
}

baton::kernel! {
    #[spec(REVERSE)]
    /// See [`ReverseParams`].
    pub fn fixture_reverse(p: ReverseParams) {
        use baton::arch::ptx as arch;
        // SAFETY: this kernel is the only user of its dynamic shared memory;
        // sync_threads orders the accesses.
        let smem = unsafe { arch::dynamic_smem::<ReverseSmem>() };
        let t = arch::thread_idx_x() as usize;
        let words = baton::smem_field!(smem, ReverseSmem, words);
        // SAFETY: t < 256; input holds 256 words.
        let v = unsafe { *p.input.add(t) };
        // SAFETY: words.at(t) is this thread's own slot of the layout.
        unsafe { arch::st_shared_u32(words.at(t).addr(), v) };
        arch::sync_threads();
        // SAFETY: written by thread 255 - t before the barrier.
        let w = unsafe { arch::ld_shared_u32(words.at(255 - t).addr()) };
        // SAFETY: out holds 256 words.
        unsafe { *p.out.add(t) = w };
    }
}

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    baton::arch::ptx::trap()
}
