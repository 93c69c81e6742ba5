//! The TMA tile-copy kernels (`kernels/src/tile_copy.rs`, issue #5) on a
//! real GPU: bit-exact copies of fresh random bf16 matrices into a poisoned
//! output, every element checked, for shapes that are and are not multiples
//! of the 64 × 64 tile, with and without 2-CTA cluster multicast, release
//! and debug PTX. Without a CUDA GPU each test prints
//! `SKIPPED: no CUDA GPU (<reason>)` and returns.

use baton_reference::random::XorShift;
use baton_runtime::{Error, Gpu, Variant};
use baton_selftest::tile_copy::{self, Mode};

fn copy_all(variant: Variant, shapes: &[(usize, usize)]) {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels =
        baton_selftest::kernels::load_kernels(&gpu, variant).unwrap_or_else(|e| panic!("{e}"));
    let mut failed = Vec::new();
    for &(rows, cols) in shapes {
        for mode in Mode::ALL {
            let seed = XorShift::seed_from_time() ^ (rows * 31 + cols) as u64;
            let c = tile_copy::check(&gpu, &kernels, mode, rows, cols, seed)
                .unwrap_or_else(|e| panic!("{variant} {mode} {rows}x{cols}: {e}"));
            println!(
                "{variant} {:<32} {rows:>5}x{cols:<5} grid {:>4}: {} ({} mismatches, {} unwritten, {} guard, {:.2} ms, seed {:#x})",
                mode.kernel(),
                c.grid,
                if c.passed() { "PASS" } else { "FAIL" },
                c.mismatches,
                c.unwritten,
                c.guard_clobbered,
                c.ms,
                c.seed
            );
            if !c.passed() {
                failed.push(format!("{c:?}"));
            }
        }
    }
    assert!(failed.is_empty(), "failed copies:\n{}", failed.join("\n"));
}

const SHAPES: &[(usize, usize)] = &[
    (256, 256),
    (300, 200),
    (65, 72),
    (1000, 520),
    (64, 8),
    (1, 64),
    (4096, 4096),
];

/// The shapes to copy: all of [`SHAPES`], or without the 4096 × 4096 one
/// under `BATON_SMALL=1` (the GPU suite's sanitizer mode).
fn shapes() -> &'static [(usize, usize)] {
    if std::env::var("BATON_SMALL").as_deref() == Ok("1") {
        &SHAPES[..SHAPES.len() - 1]
    } else {
        SHAPES
    }
}

#[test]
fn tile_copy_is_bit_exact_release() {
    copy_all(Variant::Release, shapes());
}

#[test]
fn tile_copy_is_bit_exact_debug() {
    copy_all(Variant::Debug, shapes());
}

#[test]
fn unaligned_rows_are_a_tensor_map_error() {
    let Some(gpu) = Gpu::for_test() else { return };
    let kernels = baton_selftest::kernels::load_kernels(&gpu, Variant::Release)
        .unwrap_or_else(|e| panic!("{e}"));
    // 100 bf16 columns = 200-byte rows: not a multiple of 16 bytes.
    let e = tile_copy::check(&gpu, &kernels, Mode::Plain, 64, 100, 1).unwrap_err();
    assert!(
        matches!(e, baton_selftest::Error::Runtime(Error::TensorMap(_))),
        "{e:?}"
    );
    println!("{e}");
}
