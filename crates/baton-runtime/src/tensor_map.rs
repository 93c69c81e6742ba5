//! Host TMA tensor maps: encode a [`TensorMapDesc`] with the driver
//! (`cuTensorMapEncodeTiled`) and upload the 128-byte maps to global memory,
//! where baton's kernels read them (`*const TensorMap` parameters).
//!
//! [`encode`] validates the description first
//! ([`TensorMapDesc::validate`]), so a bad shape, stride, box or swizzle is
//! an [`Error::TensorMap`] naming the value and the rule instead of a bare
//! `CUDA_ERROR_INVALID_VALUE` from the driver.
//!
//! ```no_run
//! use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
//! use baton_runtime::{Gpu, tensor_map};
//! use baton_runtime::cudarc::driver::DevicePtr;
//! let gpu = Gpu::new(0)?;
//! let a = gpu.stream().alloc_zeros::<u16>(300 * 200)?;
//! let (ptr, _sync) = a.device_ptr(gpu.stream());
//! let desc = TensorMapDesc::matrix_2d(ElemType::BF16, ptr, 300, 200, 400, 64, 64, Swizzle::B128);
//! let maps = tensor_map::upload(&gpu, &[tensor_map::encode(&desc)?])?;
//! let map_ptr = maps.ptr(0); // pass as the kernel's `*const TensorMap`
//! # Ok::<(), baton_runtime::Error>(())
//! ```

use crate::Gpu;
use crate::error::{Error, Result};
use baton::tensor_map::{ElemType, L2Promotion, OobFill, Swizzle, TensorMapDesc};
use cudarc::driver::sys::{
    self, CUtensorMap, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
    CUtensorMapL2promotion, CUtensorMapSwizzle,
};
use cudarc::driver::{CudaSlice, DevicePtr};

/// Size of an encoded tensor map (`CUtensorMap`) in bytes.
pub const MAP_BYTES: usize = 128;

/// Alignment a tensor map needs in global memory (the driver's `CUtensorMap`
/// is 64-byte aligned; [`upload`] places maps at multiples of 128 bytes of
/// an allocation, which the driver aligns to at least 256).
pub const MAP_ALIGN: usize = 64;

/// The 128 opaque bytes of an encoded tensor map, as the kernels read them.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct EncodedTensorMap(pub [u8; MAP_BYTES]);

impl std::fmt::Debug for EncodedTensorMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EncodedTensorMap(")?;
        for b in &self.0[..16] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "…)")
    }
}

impl EncodedTensorMap {
    /// The bytes.
    pub fn bytes(&self) -> &[u8; MAP_BYTES] {
        &self.0
    }
}

/// The driver's data type for `t` (FP8 types are moved as bytes).
pub fn cu_data_type(t: ElemType) -> CUtensorMapDataType {
    use CUtensorMapDataType::*;
    match t {
        ElemType::U8 | ElemType::FP8E4M3 | ElemType::FP8E5M2 => CU_TENSOR_MAP_DATA_TYPE_UINT8,
        ElemType::U16 => CU_TENSOR_MAP_DATA_TYPE_UINT16,
        ElemType::U32 => CU_TENSOR_MAP_DATA_TYPE_UINT32,
        ElemType::I32 => CU_TENSOR_MAP_DATA_TYPE_INT32,
        ElemType::U64 => CU_TENSOR_MAP_DATA_TYPE_UINT64,
        ElemType::I64 => CU_TENSOR_MAP_DATA_TYPE_INT64,
        ElemType::F16 => CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        ElemType::F32 => CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        ElemType::F64 => CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        ElemType::BF16 => CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    }
}

/// The driver's swizzle mode for `s`.
pub fn cu_swizzle(s: Swizzle) -> CUtensorMapSwizzle {
    match s {
        Swizzle::None => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        Swizzle::B32 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
        Swizzle::B64 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        Swizzle::B128 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
    }
}

/// The driver's out-of-bounds fill for `o`.
pub fn cu_oob_fill(o: OobFill) -> CUtensorMapFloatOOBfill {
    match o {
        OobFill::Zero => CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        OobFill::NanRequestZeroFma => {
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
        }
    }
}

/// The driver's L2 promotion for `p`.
pub fn cu_l2_promotion(p: L2Promotion) -> CUtensorMapL2promotion {
    match p {
        L2Promotion::None => CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
        L2Promotion::B64 => CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
        L2Promotion::B128 => CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        L2Promotion::B256 => CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
    }
}

/// The L2 promotion of a streamed GEMM operand whose rows start
/// `row_pitch_bytes` apart: 256 bytes where every row starts on a 128-byte
/// line (each box row is one line; a promoted request of an even line
/// brings the next K block's line with it), 128 bytes otherwise.
///
/// Rows that are not whole lines (K = 2056 in BF16: rows of 4112 bytes)
/// put each box row across two lines; promoted to 256 bytes, such a
/// request often spans two 256-byte regions and fetches four lines for
/// the two it touches. Measured on an H200 (session 23, BENCHMARKS.md),
/// 128-byte promotion ran 5–9 % faster there (64×4104×2056 narrow swap-AB
/// 14.3 → 13.1 µs, 128×4104×2056 128×64 18.7 → 17.2), and no slower at
/// K = 2048, where either promotion ran the same.
///
/// ```
/// use baton::tensor_map::L2Promotion;
/// use baton_runtime::tensor_map::operand_l2_promotion;
/// assert_eq!(operand_l2_promotion(4096), L2Promotion::B256);
/// assert_eq!(operand_l2_promotion(4112), L2Promotion::B128);
/// assert_eq!(operand_l2_promotion(4128), L2Promotion::B128);
/// ```
pub fn operand_l2_promotion(row_pitch_bytes: u64) -> baton::tensor_map::L2Promotion {
    if row_pitch_bytes.is_multiple_of(128) {
        baton::tensor_map::L2Promotion::B256
    } else {
        baton::tensor_map::L2Promotion::B128
    }
}

/// Encodes the map of a packed row-major `rows × cols` matrix of `dtype`
/// at `ptr`, moved in `box_rows × box_cols` boxes with `swizzle`: zero fill
/// out of bounds and the L2 promotion of [`operand_l2_promotion`], as the
/// GEMMs' streaming operands want. Validation and errors as [`encode`].
#[allow(clippy::too_many_arguments)]
pub fn encode_matrix(
    ptr: u64,
    dtype: baton::tensor_map::ElemType,
    rows: u64,
    cols: u64,
    box_rows: u32,
    box_cols: u32,
    swizzle: baton::tensor_map::Swizzle,
) -> Result<EncodedTensorMap> {
    encode_strided_matrix(ptr, dtype, rows, cols, cols, box_rows, box_cols, swizzle)
}

/// [`encode_matrix`] of a row-major matrix whose rows start `ld` elements
/// apart (`ld ≥ cols`; `ld · size` a multiple of 16 bytes, which
/// [`encode`]'s validation checks).
///
/// ```no_run
/// use baton::tensor_map::{ElemType, Swizzle};
/// let _gpu = baton_runtime::Gpu::new(0)?;
/// let map = baton_runtime::tensor_map::encode_strided_matrix(
///     0x7f00_0000_0000, ElemType::BF16, 100, 60, 64, 64, 64, Swizzle::B128)?;
/// # Ok::<(), baton_runtime::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn encode_strided_matrix(
    ptr: u64,
    dtype: baton::tensor_map::ElemType,
    rows: u64,
    cols: u64,
    ld: u64,
    box_rows: u32,
    box_cols: u32,
    swizzle: baton::tensor_map::Swizzle,
) -> Result<EncodedTensorMap> {
    let mut desc = TensorMapDesc::matrix_2d(
        dtype,
        ptr,
        rows,
        cols,
        ld * dtype.bytes() as u64,
        box_rows,
        box_cols,
        swizzle,
    );
    desc.l2_promotion = operand_l2_promotion(desc.strides_bytes[0]);
    encode(&desc)
}

/// A rank-3 map of `batch` row-major `rows × cols` matrices (rows `ld`
/// elements apart, matrix `b` at `ptr + b · batch_stride` elements), moved
/// in `box_rows × box_cols × 1` boxes: dims {cols, rows, batch}. With
/// `batch == 1` the batch stride is never used (it is set to one whole
/// matrix, which TMA accepts). TMA needs the batch stride in bytes a
/// multiple of 16 and at least `rows · ld` elements (no zero stride:
/// a matrix shared by a batch is `batch = 1`, read at coordinate 0).
///
/// ```no_run
/// use baton::tensor_map::{ElemType, Swizzle};
/// let _gpu = baton_runtime::Gpu::new(0)?;
/// // 3 matrices of 100 × 60 (ld 64), 6400 elements apart.
/// let map = baton_runtime::tensor_map::encode_strided_batch(
///     0x7f00_0000_0000, ElemType::BF16, 100, 60, 64, 3, 6400, 64, 64, Swizzle::B128)?;
/// # Ok::<(), baton_runtime::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn encode_strided_batch(
    ptr: u64,
    dtype: baton::tensor_map::ElemType,
    rows: u64,
    cols: u64,
    ld: u64,
    batch: u64,
    batch_stride: u64,
    box_rows: u32,
    box_cols: u32,
    swizzle: baton::tensor_map::Swizzle,
) -> Result<EncodedTensorMap> {
    let bytes = dtype.bytes() as u64;
    let mut desc = TensorMapDesc::matrix_2d(
        dtype,
        ptr,
        rows,
        cols,
        ld * bytes,
        box_rows,
        box_cols,
        swizzle,
    );
    desc.rank = 3;
    desc.dims[2] = batch;
    desc.strides_bytes[1] = if batch == 1 {
        (rows * ld * bytes).next_multiple_of(16)
    } else {
        batch_stride * bytes
    };
    desc.l2_promotion = operand_l2_promotion(desc.strides_bytes[0]);
    encode(&desc)
}

/// Encodes `desc` into a tiled TMA tensor map (rank 2 or 3, element strides
/// 1, no interleave). Call it with the GPU's context current on the thread
/// (after [`Gpu::new`], or [`Gpu::context`]`.bind_to_thread()` on another
/// thread): on H100 the driver refused valid descriptions encoded before any
/// context existed.
///
/// Errors: [`Error::TensorMap`] when [`TensorMapDesc::validate`] refuses
/// the description (checked before anything touches the driver, so these
/// come back on machines without a GPU too); [`Error::NoDriver`] when
/// `libcuda` cannot be loaded; [`Error::TensorMapEncode`] when the driver
/// refuses a description that passed validation.
pub fn encode(desc: &TensorMapDesc) -> Result<EncodedTensorMap> {
    desc.validate()?;
    // SAFETY: only tries to dlopen the driver library.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::NoDriver {
            detail: "libcuda.so was not found; tensor maps are encoded by the driver".into(),
        });
    }
    // Idempotent; the encoder needs an initialized driver, not a context.
    cudarc::driver::result::init().map_err(|e| Error::NoDriver {
        detail: format!("cuInit failed: {}", crate::error::describe(&e)),
    })?;
    let rank = desc.rank as usize; // 2 or 3: validated
    let elem_strides = [1u32; baton::tensor_map::MAX_RANK];
    let mut map = CUtensorMap { opaque: [0; 16] };
    // SAFETY: `dims`, `box_dims` and `elem_strides` have at least `rank`
    // entries and `strides_bytes` at least `rank - 1`; `map` is a valid
    // out-pointer. The driver only records `base`; it is not dereferenced.
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            cu_data_type(desc.dtype),
            rank as u32,
            desc.base as *mut std::ffi::c_void,
            desc.dims.as_ptr(),
            desc.strides_bytes.as_ptr(),
            desc.box_dims.as_ptr(),
            elem_strides.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            cu_swizzle(desc.swizzle),
            cu_l2_promotion(desc.l2_promotion),
            cu_oob_fill(desc.oob_fill),
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(Error::TensorMapEncode {
            desc: *desc,
            no_current_context: matches!(cudarc::driver::result::ctx::get_current(), Ok(None)),
            source: cudarc::driver::DriverError(r),
        });
    }
    let mut bytes = [0u8; MAP_BYTES];
    for (chunk, word) in bytes.chunks_exact_mut(8).zip(map.opaque) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    Ok(EncodedTensorMap(bytes))
}

/// Encoded tensor maps in one device allocation, map `i` at byte
/// `128 · i` (64-byte aligned, as TMA requires).
pub struct DeviceTensorMaps {
    buf: CudaSlice<u8>,
    base: u64,
    count: usize,
}

impl std::fmt::Debug for DeviceTensorMaps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceTensorMaps")
            .field("base", &format_args!("{:#x}", self.base))
            .field("count", &self.count)
            .finish()
    }
}

impl DeviceTensorMaps {
    /// Device address of map `i` (a kernel's `*const TensorMap`).
    ///
    /// # Panics
    /// When `i` is not below [`len`](Self::len).
    pub fn ptr(&self, i: usize) -> u64 {
        assert!(
            i < self.count,
            "tensor map {i} of {} uploaded maps",
            self.count
        );
        self.base + (i * MAP_BYTES) as u64
    }
    /// Number of maps.
    pub fn len(&self) -> usize {
        self.count
    }
    /// True when no map was uploaded.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// The device buffer holding the maps.
    pub fn buffer(&self) -> &CudaSlice<u8> {
        &self.buf
    }
}

/// Copies `maps` into one new device allocation on `gpu`'s stream (in
/// order: kernels launched on that stream afterwards see them).
pub fn upload(gpu: &Gpu, maps: &[EncodedTensorMap]) -> Result<DeviceTensorMaps> {
    let bytes: Vec<u8> = maps.iter().flat_map(|m| m.0).collect();
    let stream = gpu.stream();
    let buf = if bytes.is_empty() {
        stream.alloc_zeros::<u8>(MAP_BYTES)?
    } else {
        stream.clone_htod(&bytes)?
    };
    let base = {
        let (p, _sync) = buf.device_ptr(stream);
        p
    };
    debug_assert!(base.is_multiple_of(MAP_ALIGN as u64));
    Ok(DeviceTensorMaps {
        buf,
        base,
        count: maps.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton::tensor_map::TensorMapError;

    fn bf16(rows: u64, cols: u64) -> TensorMapDesc {
        TensorMapDesc::matrix_2d(
            ElemType::BF16,
            0x10_0000,
            rows,
            cols,
            cols * 2,
            64,
            64,
            Swizzle::B128,
        )
    }

    /// Encoding refuses `desc` with `Error::TensorMap(want)`, before any
    /// driver call (so this runs without a GPU), with a readable message.
    fn refused(desc: TensorMapDesc, want: TensorMapError, words: &[&str]) {
        let e = encode(&desc).expect_err("description must be refused");
        match &e {
            Error::TensorMap(got) => assert_eq!(*got, want),
            other => panic!("expected Error::TensorMap({want:?}), got {other:?}"),
        }
        let msg = e.to_string();
        assert!(msg.starts_with("invalid TMA tensor map: "), "{msg}");
        for w in words {
            assert!(msg.contains(w), "{msg:?} lacks {w:?}");
        }
    }

    #[test]
    fn rank_is_2_or_3() {
        for rank in [0, 1, 4, 5] {
            refused(
                TensorMapDesc {
                    rank,
                    ..bf16(64, 64)
                },
                TensorMapError::RankUnsupported { rank },
                &["rank", "2 or 3"],
            );
        }
    }

    #[test]
    fn misaligned_base() {
        refused(
            TensorMapDesc {
                base: 0x10_0008,
                ..bf16(64, 64)
            },
            TensorMapError::BaseMisaligned { base: 0x10_0008 },
            &["0x100008", "16-byte"],
        );
    }

    #[test]
    fn row_pitch_not_a_multiple_of_16() {
        // 100 bf16 columns: 200-byte rows.
        refused(
            bf16(64, 100),
            TensorMapError::StrideMisaligned {
                dim: 1,
                stride: 200,
            },
            &["200", "multiple of 16"],
        );
    }

    #[test]
    fn overlapping_rows_and_huge_strides() {
        let d = TensorMapDesc {
            strides_bytes: [64, 64 * 64],
            ..bf16(64, 64)
        };
        refused(
            d,
            TensorMapError::StrideTooSmall {
                dim: 1,
                stride: 64,
                min: 128,
            },
            &["64", "128"],
        );
        let d = TensorMapDesc {
            strides_bytes: [1 << 40, 1 << 41],
            ..bf16(64, 64)
        };
        refused(
            d,
            TensorMapError::StrideTooLarge {
                dim: 1,
                stride: 1 << 40,
            },
            &["2^40"],
        );
    }

    #[test]
    fn zero_and_huge_dimensions() {
        refused(
            bf16(0, 64),
            TensorMapError::DimZero { dim: 1 },
            &["dimension 1", "is 0"],
        );
        let d = TensorMapDesc {
            dims: [64, (1 << 32) + 1, 1],
            ..bf16(64, 64)
        };
        refused(
            d,
            TensorMapError::DimTooLarge {
                dim: 1,
                value: (1 << 32) + 1,
            },
            &["2^32"],
        );
    }

    #[test]
    fn box_limits_and_swizzle_span() {
        let d = TensorMapDesc {
            box_dims: [64, 257, 1],
            ..bf16(512, 64)
        };
        refused(
            d,
            TensorMapError::BoxDimOutOfRange { dim: 1, value: 257 },
            &["257", "1..=256"],
        );
        let d = TensorMapDesc {
            box_dims: [4, 64, 1],
            ..bf16(64, 64)
        };
        refused(
            d,
            TensorMapError::InnerBoxNotMultipleOf16 { bytes: 8 },
            &["8 bytes", "multiple of 16"],
        );
        for (sw, span) in [(Swizzle::B32, 32), (Swizzle::B64, 64), (Swizzle::B128, 128)] {
            let d = TensorMapDesc {
                swizzle: sw,
                box_dims: [span / 2 + 8, 8, 1],
                ..bf16(64, 256)
            };
            refused(
                d,
                TensorMapError::InnerBoxExceedsSwizzle {
                    bytes: span + 16,
                    span,
                },
                &["swizzle span"],
            );
        }
    }

    #[test]
    fn nan_fill_needs_a_float_type() {
        let d = TensorMapDesc {
            dtype: ElemType::U8,
            oob_fill: OobFill::NanRequestZeroFma,
            box_dims: [64, 64, 1],
            ..TensorMapDesc::matrix_2d(ElemType::U8, 0, 64, 64, 64, 64, 64, Swizzle::B64)
        };
        refused(
            d,
            TensorMapError::NanFillRequiresFloat {
                dtype: ElemType::U8,
            },
            &["NaN", "U8"],
        );
    }

    #[test]
    fn rank_3_descriptions_are_checked_in_dimension_2() {
        // [cols, rows, batch] with a batch stride smaller than one matrix.
        let d = TensorMapDesc {
            rank: 3,
            dims: [64, 64, 4],
            strides_bytes: [128, 128 * 32],
            box_dims: [64, 64, 2],
            ..bf16(64, 64)
        };
        refused(
            d,
            TensorMapError::StrideTooSmall {
                dim: 2,
                stride: 128 * 32,
                min: 128 * 64,
            },
            &["dimension 2"],
        );
        let d = TensorMapDesc {
            box_dims: [64, 64, 0],
            strides_bytes: [128, 128 * 64],
            ..d
        };
        refused(
            d,
            TensorMapError::BoxDimOutOfRange { dim: 2, value: 0 },
            &["box dimension 2"],
        );
    }

    #[test]
    fn driver_enums_agree_with_the_description_values() {
        use ElemType::*;
        for t in [
            U8, U16, U32, I32, U64, I64, F16, BF16, F32, F64, FP8E4M3, FP8E5M2,
        ] {
            assert_eq!(cu_data_type(t) as u32, t.cu_data_type(), "{t:?}");
        }
        for s in [Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128] {
            assert_eq!(cu_swizzle(s) as u32, s.cu_value(), "{s:?}");
        }
        for o in [OobFill::Zero, OobFill::NanRequestZeroFma] {
            assert_eq!(cu_oob_fill(o) as u32, o.cu_value(), "{o:?}");
        }
        for p in [
            L2Promotion::None,
            L2Promotion::B64,
            L2Promotion::B128,
            L2Promotion::B256,
        ] {
            assert_eq!(cu_l2_promotion(p) as u32, p.cu_value(), "{p:?}");
        }
    }

    #[test]
    fn valid_descriptions_reach_the_driver() {
        // Without a driver: NoDriver (not a TensorMap error). With a GPU,
        // the driver encodes all of these (rank 2 and 3, every swizzle,
        // bf16/f16/f32/fp8/u8).
        let base = 0x10_0000;
        let mut descs = vec![];
        for (t, sw) in [
            (ElemType::BF16, Swizzle::B128),
            (ElemType::F16, Swizzle::B64),
            (ElemType::F32, Swizzle::B32),
            (ElemType::FP8E4M3, Swizzle::None),
            (ElemType::U8, Swizzle::B128),
        ] {
            let cols = 256;
            let span = sw.span_bytes().unwrap_or(128);
            let box_cols = span / t.bytes();
            let pitch = cols * t.bytes() as u64;
            let d = TensorMapDesc::matrix_2d(t, base, 300, cols, pitch, 32, box_cols, sw);
            descs.push(d);
            descs.push(TensorMapDesc {
                rank: 3,
                dims: [cols, 300, 3],
                strides_bytes: [pitch, pitch * 300],
                box_dims: [box_cols, 32, 2],
                ..d
            });
        }
        for d in &descs {
            assert_eq!(d.validate(), Ok(()), "{d:?}");
        }
        // SAFETY: only tries to dlopen the driver library.
        if !unsafe { sys::is_culib_present() } {
            for d in &descs {
                assert!(matches!(encode(d), Err(Error::NoDriver { .. })), "{d:?}");
            }
            return;
        }
        // Diagnostic: before any context exists on this thread.
        println!("before Gpu::new: {:?}", encode(&descs[0]).map(|_| "ok"));
        let _gpu = match Gpu::new(0) {
            Ok(g) => g,
            Err(e) if e.is_no_gpu() => {
                println!("SKIPPED (partly): no CUDA GPU ({e})");
                return;
            }
            Err(e) => panic!("a GPU is present but unusable: {e}"),
        };
        let failures: Vec<String> = descs
            .iter()
            .filter_map(|d| match encode(d) {
                Ok(map) if map.0.iter().any(|&b| b != 0) => None,
                Ok(_) => Some(format!("{d:?}: all-zero map")),
                Err(e) => Some(format!("{d:?}: {e}")),
            })
            .collect();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn driver_refusal_names_the_description() {
        use cudarc::driver::{DriverError, sys::CUresult};
        let e = Error::TensorMapEncode {
            desc: bf16(300, 200),
            no_current_context: true,
            source: DriverError(CUresult::CUDA_ERROR_INVALID_VALUE),
        };
        let msg = e.to_string();
        assert!(
            msg.contains("cuTensorMapEncodeTiled")
                && msg.contains("[200, 300]")
                && msg.contains("[64, 64]")
                && msg.contains("B128")
                && msg.contains("INVALID_VALUE")
                && msg.contains("no CUDA context is current"),
            "{msg}"
        );
    }
}
