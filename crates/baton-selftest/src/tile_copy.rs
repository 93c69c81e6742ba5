//! Host side of the TMA tile-copy kernels (`kernels/src/tile_copy.rs`):
//! `baton_tile_copy_bf16` and its 2-CTA-cluster multicast variant copy a
//! row-major bf16 matrix through `baton::tile_pipeline::InputTilePipeline`
//! in 64 × 64 tiles (TMA loads in, TMA stores out).
//!
//! [`TileCopyPlan`] encodes the two tensor maps (through
//! [`baton_runtime::tensor_map`]) and sizes the grid; [`check`] copies fresh random
//! data into a poisoned output and compares every element bit for bit.
//!
//! ```no_run
//! use baton_reference::random::XorShift;
//! use baton_runtime::{Gpu, Variant};
//! use baton_selftest::tile_copy::{self, Mode};
//! let gpu = Gpu::new(0)?;
//! let kernels = baton_selftest::kernels::load_kernels(&gpu, Variant::Release)?;
//! let c = tile_copy::check(&gpu, &kernels, Mode::Multicast, 300, 200, XorShift::seed_from_time())?;
//! assert!(c.passed(), "{c:?}");
//! # Ok::<(), baton_selftest::Error>(())
//! ```

use crate::error::{Error, Result, TileCopyRule};
use baton::kernel::KernelSpec;
use baton::tensor_map::{ElemType, L2Promotion, Swizzle, TensorMapDesc};
use baton_reference::random::XorShift;
use baton_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use baton_runtime::kernel_abi::tile_copy::{self as abi, TileCopyParams};
use baton_runtime::tensor_map::{self, DeviceTensorMaps};
use baton_runtime::{Gpu, Kernels, LaunchConfig, TypedKernel};
use std::time::Instant;

/// The plain kernel.
pub const KERNEL: &str = abi::COPY.name;
/// The 2-CTA-cluster multicast kernel.
pub const MULTICAST_KERNEL: &str = abi::COPY_MULTICAST.name;
/// Tile edge in rows and bf16 columns (`TILE` in the kernels).
pub const TILE: u32 = abi::TILE;
/// Threads per CTA: a producer warpgroup and a consumer warpgroup.
pub const THREADS: u32 = abi::THREADS;
/// Output value before a copy (a bf16 NaN pattern the inputs never use).
pub const POISON: u16 = 0xFFFF;
/// Poisoned elements after the output matrix, checked untouched: TMA stores
/// must clip at the tensor's edge.
pub const GUARD: usize = 4096;

/// Which kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `baton_tile_copy_bf16`: one CTA per tile at a time, 64 × 64 boxes.
    Plain,
    /// `baton_tile_copy_bf16_multicast`: clusters of 2 CTAs; each loads one
    /// 32 × 64 half of the tile and multicasts it to both.
    Multicast,
}

impl Mode {
    /// Both kernels.
    pub const ALL: [Mode; 2] = [Mode::Plain, Mode::Multicast];

    /// The kernel's spec.
    pub const fn spec(self) -> &'static KernelSpec<TileCopyParams> {
        match self {
            Mode::Plain => &abi::COPY,
            Mode::Multicast => &abi::COPY_MULTICAST,
        }
    }

    /// The kernel's name.
    pub const fn kernel(self) -> &'static str {
        self.spec().name
    }

    /// CTAs per cluster (1: launched without the cluster attribute).
    pub const fn cluster(self) -> u32 {
        self.spec().cluster_size()
    }

    /// Rows of one TMA box (load and store maps).
    pub const fn box_rows(self) -> u32 {
        TILE / self.cluster()
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Plain => "plain",
            Mode::Multicast => "multicast",
        })
    }
}

/// The tensor map of a `rows × cols` row-major bf16 matrix at `ptr` as the
/// kernels expect it (box `box_rows × 64`, 128-byte swizzle).
pub fn matrix_desc(
    ptr: u64,
    rows: usize,
    cols: usize,
    mode: Mode,
    l2: L2Promotion,
) -> TensorMapDesc {
    TensorMapDesc {
        l2_promotion: l2,
        ..TensorMapDesc::matrix_2d(
            ElemType::BF16,
            ptr,
            rows as u64,
            cols as u64,
            cols as u64 * 2,
            mode.box_rows(),
            TILE,
            Swizzle::B128,
        )
    }
}

/// A tile copy bound to its source and destination: tensor maps encoded and
/// uploaded, grid sized, so [`launch`](Self::launch) only enqueues the
/// kernel. Borrows both buffers (the destination mutably) while it lives.
pub struct TileCopyPlan<'a> {
    mode: Mode,
    kernel: TypedKernel<TileCopyParams>,
    maps: DeviceTensorMaps,
    tiles_m: u32,
    tiles_n: u32,
    slots: u32,
    grid: u32,
    _buffers: std::marker::PhantomData<(&'a CudaSlice<u16>, &'a mut CudaSlice<u16>)>,
}

impl<'a> TileCopyPlan<'a> {
    /// Plans copying the `rows × cols` bf16 matrix in `src` to `dst` (both
    /// row-major, densely packed, at the start of the buffers).
    ///
    /// Errors: [`Error::TileCopyShape`] for an empty matrix or buffers
    /// shorter than `rows · cols`; `baton_runtime::Error::TensorMap` when the shape
    /// cannot be described to TMA (e.g. `cols` not a multiple of 8: rows
    /// must be multiples of 16 bytes apart).
    pub fn new(
        gpu: &Gpu,
        kernels: &Kernels,
        mode: Mode,
        src: &'a CudaSlice<u16>,
        dst: &'a mut CudaSlice<u16>,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        let kernel = kernels.kernel(mode.spec())?;
        let elements = rows.checked_mul(cols);
        let bad = |rule| Error::TileCopyShape {
            kernel: mode.kernel(),
            rows,
            cols,
            rule,
        };
        match elements {
            Some(0) => return Err(bad(TileCopyRule::Empty)),
            None => return Err(bad(TileCopyRule::TooLarge)),
            Some(n) if src.len() < n || dst.len() < n => {
                return Err(bad(TileCopyRule::BufferTooSmall {
                    needed: n,
                    src: src.len(),
                    dst: dst.len(),
                }));
            }
            Some(_) => {}
        }
        let (tiles_m, tiles_n) = (rows.div_ceil(TILE as usize), cols.div_ceil(TILE as usize));
        let tiles = u32::try_from(tiles_m * tiles_n).map_err(|_| bad(TileCopyRule::TooLarge))?;
        let stream = gpu.stream();
        let src_ptr = {
            let (p, _sync) = src.device_ptr(stream);
            p
        };
        let dst_ptr = {
            let (p, _sync) = dst.device_ptr_mut(stream);
            p
        };
        let maps = tensor_map::upload(
            gpu,
            &[
                tensor_map::encode(&matrix_desc(src_ptr, rows, cols, mode, L2Promotion::B256))?,
                tensor_map::encode(&matrix_desc(dst_ptr, rows, cols, mode, L2Promotion::None))?,
            ],
        )?;
        let c = mode.cluster();
        // CTAs that fit on the GPU at once (the kernels stride over tiles).
        let smem = kernel.dynamic_smem_bytes();
        let slots = kernel
            .kernel()
            .max_active_clusters((c, 1, 1), THREADS, smem)
            .ok()
            .filter(|&n| n > 0)
            .map(|n| n * c)
            .unwrap_or_else(|| {
                let per_sm = (228 * 1024 / (smem + 1024)).min(2048 / THREADS);
                gpu.sm_count() * per_sm / c * c
            })
            .max(c);
        // Default: `cluster` CTAs per SM (fewer for small matrices), so
        // every SM has the same load bytes in flight — a multicast CTA loads
        // half tiles. Measured on H100 (16384² bf16, `baton bench
        // tile-copy` sweeps the grid): plain 0.97 of a device memcpy's
        // bandwidth at one CTA per SM, 0.91 with all six that fit;
        // multicast 0.77 at one per SM, 0.95 at two, 0.83 at six.
        let grid = tiles.saturating_mul(c).min(slots).min(gpu.sm_count() * c);
        Ok(Self {
            mode,
            kernel,
            maps,
            tiles_m: tiles_m as u32,
            tiles_n: tiles_n as u32,
            slots,
            grid,
            _buffers: std::marker::PhantomData,
        })
    }

    /// Launches `ctas` CTAs from now on instead of the default (tuning);
    /// rounded up to a whole cluster. The kernels stride over the tiles, so
    /// any grid copies everything.
    pub fn set_grid(&mut self, ctas: u32) {
        let c = self.mode.cluster();
        self.grid = ctas.max(1).div_ceil(c) * c;
    }

    /// Which kernel.
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// 64 × 64 tiles copied.
    pub fn tiles(&self) -> u32 {
        self.tiles_m * self.tiles_n
    }
    /// CTAs launched.
    pub fn grid(&self) -> u32 {
        self.grid
    }
    /// CTAs that can be resident at once (`cuOccupancyMaxActiveClusters` ×
    /// cluster size); the default grid is at most `cluster size` per SM.
    pub fn resident_ctas(&self) -> u32 {
        self.slots
    }
    /// The launch configuration.
    pub fn config(&self) -> LaunchConfig {
        self.kernel.launch_config(self.grid)
    }

    /// Enqueues the copy on `gpu`'s stream.
    pub fn launch(&self, gpu: &Gpu) -> Result<()> {
        let params = TileCopyParams {
            load_map: self.maps.ptr(0) as *const _,
            store_map: self.maps.ptr(1) as *const _,
            tiles_m: self.tiles_m,
            tiles_n: self.tiles_n,
        };
        // SAFETY: tensor maps in global memory with the boxes the kernels'
        // host contract asks for; the plan borrows both buffers, so the
        // maps' addresses stay valid until the copy completes.
        Ok(unsafe { self.kernel.launch(gpu.stream(), self.grid, &params) }?)
    }
}

/// Outcome of one verified copy.
#[derive(Clone, Debug)]
pub struct CopyCheck {
    /// Which kernel.
    pub mode: Mode,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// CTAs launched.
    pub grid: u32,
    /// The input seed (fresh each run).
    pub seed: u64,
    /// Elements that differ from the source (unwritten ones included).
    pub mismatches: usize,
    /// Of those, elements still holding [`POISON`].
    pub unwritten: usize,
    /// Guard elements after the matrix that were overwritten.
    pub guard_clobbered: usize,
    /// First mismatch: (row, col, got, want).
    pub first_mismatch: Option<(usize, usize, u16, u16)>,
    /// Wall time of the launch up to synchronization, milliseconds.
    pub ms: f64,
}

impl CopyCheck {
    /// Bit-exact copy and nothing written past the matrix.
    pub fn passed(&self) -> bool {
        self.mismatches == 0 && self.guard_clobbered == 0
    }
}

/// `n` random bf16 bit patterns, never 0 and never [`POISON`].
pub fn random_bf16(n: usize, rng: &mut XorShift) -> Vec<u16> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let w = rng.next_u64();
        for k in 0..4 {
            if out.len() == n {
                break;
            }
            let v = (w >> (16 * k)) as u16 | 1;
            out.push(if v == POISON { 0x3F81 } else { v });
        }
    }
    out
}

/// Copies a fresh random `rows × cols` bf16 matrix with `mode`'s kernel
/// into a poisoned destination and checks every element (and a guard
/// region after the matrix).
pub fn check(
    gpu: &Gpu,
    kernels: &Kernels,
    mode: Mode,
    rows: usize,
    cols: usize,
    seed: u64,
) -> Result<CopyCheck> {
    let mut rng = XorShift::new(seed);
    let src_host = random_bf16(rows * cols, &mut rng);
    let stream = gpu.stream();
    let src = stream.clone_htod(&src_host)?;
    let mut dst = stream.clone_htod(&vec![POISON; rows * cols + GUARD])?;
    let grid;
    let start = Instant::now();
    {
        let plan = TileCopyPlan::new(gpu, kernels, mode, &src, &mut dst, rows, cols)?;
        grid = plan.grid();
        plan.launch(gpu)?;
        stream
            .synchronize()
            .map_err(|source| baton_runtime::Error::Launch {
                kernel: mode.kernel().into(),
                source,
            })?;
    }
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let out = stream.clone_dtoh(&dst)?;
    let (body, guard) = out.split_at(rows * cols);
    let mut c = CopyCheck {
        mode,
        rows,
        cols,
        grid,
        seed,
        mismatches: 0,
        unwritten: 0,
        guard_clobbered: guard.iter().filter(|&&g| g != POISON).count(),
        first_mismatch: None,
        ms,
    };
    for (i, (&got, &want)) in body.iter().zip(&src_host).enumerate() {
        if got != want {
            c.mismatches += 1;
            c.unwritten += usize::from(got == POISON);
            c.first_mismatch
                .get_or_insert((i / cols, i % cols, got, want));
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_data_avoids_zero_and_poison() {
        let mut rng = XorShift::new(7);
        let v = random_bf16(100_003, &mut rng);
        assert_eq!(v.len(), 100_003);
        assert!(v.iter().all(|&x| x != 0 && x != POISON));
        let distinct: std::collections::HashSet<_> = v.iter().collect();
        assert!(distinct.len() > 20_000);
    }

    #[test]
    fn descriptions_validate_for_the_test_shapes() {
        for mode in Mode::ALL {
            for (r, c) in [
                (256, 256),
                (300, 200),
                (65, 72),
                (1000, 520),
                (16384, 16384),
            ] {
                let d = matrix_desc(0x1000, r, c, mode, L2Promotion::B256);
                assert_eq!(d.validate(), Ok(()), "{mode} {r}x{c}");
                assert_eq!(
                    d.box_bytes() * mode.cluster(),
                    TILE * TILE * 2,
                    "a cluster's boxes make one tile"
                );
            }
        }
        // 100 columns: 200-byte rows cannot be described.
        assert!(
            matrix_desc(0x1000, 64, 100, Mode::Plain, L2Promotion::None)
                .validate()
                .is_err()
        );
    }
}
