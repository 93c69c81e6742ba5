//! The loaded kernels and the launch on the caller's stream.

use crate::error::{AttentionError, TensorName};
use crate::shape::{
    AttentionOptions, AttentionShape, Ctas, KvBlock, Strides, Warpgroups, validate,
};
use crate::{MODULE, PTX, PTX_DEBUG};
use baton::kernel::KernelSpec;
use baton_attention_abi::maps::OperandMaps;
use baton_attention_abi::schedule::{self, heads_per_section, tile_count};
use baton_attention_abi::{
    ATTENTION_D64, ATTENTION_D64_CAUSAL, ATTENTION_D64_W3, ATTENTION_D128, ATTENTION_D128_CAUSAL,
    ATTENTION_D256, AttentionParams, config_for_call,
};
use baton_runtime::cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use baton_runtime::{Gpu, TypedKernel, tensor_map};
use std::sync::Arc;

/// A read-only bf16 tensor (bits as `u16`) and its strides.
#[derive(Clone, Copy, Debug)]
pub struct TensorRef<'a> {
    /// The buffer.
    pub data: &'a CudaSlice<u16>,
    /// Its layout.
    pub strides: Strides,
}

/// The output tensor and its strides.
#[derive(Debug)]
pub struct TensorMut<'a> {
    /// The buffer.
    pub data: &'a mut CudaSlice<u16>,
    /// Its layout.
    pub strides: Strides,
}

/// A bf16 tensor by device address, for buffers cudarc does not own
/// (FFI: a PyTorch tensor's `data_ptr()`), used with
/// [`Attention::prepare_raw`].
///
/// ```
/// use baton_attention::{RawTensor, Strides};
/// let q = RawTensor { ptr: 0x7f00_0000_0000, len: 2 * 100 * 8 * 64, strides: Strides::bshd(100, 8, 64) };
/// assert_eq!(q.span_bytes(), 2 * 2 * 100 * 8 * 64);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RawTensor {
    /// Device address of element `(0, 0, 0, 0)`; 16-byte aligned.
    pub ptr: u64,
    /// Elements readable (or, for O, writable) from `ptr` on.
    pub len: usize,
    /// Its layout.
    pub strides: Strides,
}

impl RawTensor {
    /// Bytes from `ptr` that the tensor may touch (`2 · len`).
    pub fn span_bytes(&self) -> u64 {
        2 * self.len as u64
    }

    fn overlaps(&self, ptr: u64, bytes: u64) -> bool {
        self.ptr < ptr.saturating_add(bytes) && ptr < self.ptr.saturating_add(self.span_bytes())
    }
}

/// The attention entries loaded by [`Attention::new`], in the order of its
/// `release` and `debug` arrays: one list for loading and for finding the
/// call's kernel by its spec's name.
const KERNELS: [KernelSpec<AttentionParams>; 6] = [
    ATTENTION_D64,
    ATTENTION_D128,
    ATTENTION_D256,
    ATTENTION_D64_CAUSAL,
    ATTENTION_D64_W3,
    ATTENTION_D128_CAUSAL,
];

/// The attention kernels, loaded (release and debug PTX).
///
/// ```no_run
/// use baton_attention::*;
/// # fn main() -> Result<(), AttentionError> {
/// let gpu = baton_runtime::Gpu::new(0)?;
/// let attn = Attention::new(&gpu)?;
/// let shape = AttentionShape { batch: 1, seq_q: 1000, seq_kv: 1000, q_heads: 8, kv_heads: 8, head_dim: 128 };
/// let s = Strides::bshd(1000, 8, 128);
/// let stream = gpu.stream();
/// let n = 1000 * 8 * 128;
/// let (q, k, v) = (stream.alloc_zeros::<u16>(n).map_err(baton_runtime::Error::from)?, stream.alloc_zeros::<u16>(n).map_err(baton_runtime::Error::from)?, stream.alloc_zeros::<u16>(n).map_err(baton_runtime::Error::from)?);
/// let mut o = stream.alloc_zeros::<u16>(n).map_err(baton_runtime::Error::from)?;
/// attn.forward(stream, &shape, &AttentionOptions { causal: true, ..Default::default() },
///     TensorRef { data: &q, strides: s }, TensorRef { data: &k, strides: s }, TensorRef { data: &v, strides: s },
///     TensorMut { data: &mut o, strides: s }, None)?;
/// # Ok(()) }
/// ```
pub struct Attention {
    /// The kernels of [`KERNELS`], in its order.
    release: [TypedKernel<AttentionParams>; 6],
    debug: [TypedKernel<AttentionParams>; 6],
    /// The device's SMs: the persistent grid.
    sm_count: u32,
}

impl Attention {
    /// Loads the kernels on `gpu` (fails with `Error::PtxNotBuilt`-like
    /// runtime errors when the PTX is missing or does not match the specs).
    pub fn new(gpu: &Gpu) -> Result<Self, AttentionError> {
        let load = |ptx: &str| -> Result<[TypedKernel<AttentionParams>; 6], AttentionError> {
            let module = gpu.load_ptx(ptx, MODULE)?;
            let [a, b, c, d, e, f] = &KERNELS;
            Ok([
                module.kernel(a)?,
                module.kernel(b)?,
                module.kernel(c)?,
                module.kernel(d)?,
                module.kernel(e)?,
                module.kernel(f)?,
            ])
        };
        Ok(Self {
            release: load(PTX)?,
            debug: load(PTX_DEBUG)?,
            sm_count: gpu.sm_count(),
        })
    }

    /// Enqueues `O = softmax(scale·Q·Kᵀ [+ causal mask])·V` on `stream`
    /// (the context `gpu` was created in), and the fp32 logsumexp into `lse`
    /// (`[batch, q_heads, seq_q]`) when given. Every check of [`validate`]
    /// runs first; nothing is enqueued when one fails. Returns once the
    /// work is enqueued: the buffers' cudarc events order later uses.
    #[allow(clippy::too_many_arguments)]
    pub fn forward(
        &self,
        stream: &Arc<CudaStream>,
        shape: &AttentionShape,
        opts: &AttentionOptions,
        q: TensorRef<'_>,
        k: TensorRef<'_>,
        v: TensorRef<'_>,
        o: TensorMut<'_>,
        lse: Option<&mut CudaSlice<f32>>,
    ) -> Result<(), AttentionError> {
        Ok(self
            .prepare(stream, shape, opts, q, k, v, o, lse)?
            .launch()?)
    }

    /// [`forward`](Self::forward) in two steps: checks, encodes and uploads
    /// the tensor maps once; [`PreparedAttention::launch`] then enqueues the
    /// kernel alone (what a benchmark times), as often as wanted, on
    /// `stream`. The buffers stay borrowed while the result lives.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare<'a>(
        &'a self,
        stream: &Arc<CudaStream>,
        shape: &AttentionShape,
        opts: &AttentionOptions,
        q: TensorRef<'_>,
        k: TensorRef<'_>,
        v: TensorRef<'_>,
        o: TensorMut<'a>,
        lse: Option<&'a mut CudaSlice<f32>>,
    ) -> Result<PreparedAttention<'a>, AttentionError> {
        let o_len = o.data.len();
        let (q_ptr, _q_sync) = q.data.device_ptr(stream);
        let (k_ptr, _k_sync) = k.data.device_ptr(stream);
        let (v_ptr, _v_sync) = v.data.device_ptr(stream);
        let (o_ptr, _o_sync) = o.data.device_ptr_mut(stream);
        let lse_len = lse.as_ref().map(|l| l.len());
        let mut lse_guard = lse.map(|l| l.device_ptr_mut(stream));
        let lse_ptr = lse_guard.as_mut().map_or(0, |(p, _)| *p);
        let raw = |ptr, len, strides| RawTensor { ptr, len, strides };
        // SAFETY: the buffers are cudarc allocations of `stream`'s context,
        // borrowed (O and lse exclusively) for as long as the result lives.
        unsafe {
            self.prepare_raw(
                stream,
                shape,
                opts,
                [
                    raw(q_ptr, q.data.len(), q.strides),
                    raw(k_ptr, k.data.len(), k.strides),
                    raw(v_ptr, v.data.len(), v.strides),
                    raw(o_ptr, o_len, o.strides),
                ],
                lse_len.map(|len| (lse_ptr, len)),
            )
        }
    }

    /// [`prepare`](Self::prepare) on tensors given by address (FFI: the
    /// Python package's PyTorch tensors): `tensors` are Q, K, V, O in that
    /// order, `lse` the logsumexp's address and length in floats. Checks
    /// everything [`validate`] checks, 16-byte aligned addresses, and that O
    /// meets no input.
    ///
    /// # Safety
    /// Each address must name device memory of `stream`'s context holding
    /// `len` elements from it, live until the kernel has run, and nothing
    /// else may write Q, K, V or read O and lse meanwhile.
    ///
    /// ```no_run
    /// use baton_attention::*;
    /// # fn main() -> Result<(), AttentionError> {
    /// let gpu = baton_runtime::Gpu::new(0)?;
    /// let attn = Attention::new(&gpu)?;
    /// let shape = AttentionShape { batch: 1, seq_q: 256, seq_kv: 256, q_heads: 2, kv_heads: 2, head_dim: 64 };
    /// let s = Strides::bhsd(256, 2, 64);
    /// let n = 256 * 2 * 64;
    /// let stream = gpu.stream();
    /// let buf = stream.alloc_zeros::<u16>(4 * n).map_err(baton_runtime::Error::from)?;
    /// let (base, _sync) = baton_runtime::cudarc::driver::DevicePtr::device_ptr(&buf, &stream);
    /// let t = |i: u64| RawTensor { ptr: base + i * 2 * n as u64, len: n, strides: s };
    /// // SAFETY: four disjoint quarters of a live allocation of this stream's context.
    /// unsafe { attn.prepare_raw(stream, &shape, &AttentionOptions::default(), [t(0), t(1), t(2), t(3)], None)? }.launch()?;
    /// # Ok(()) }
    /// ```
    pub unsafe fn prepare_raw(
        &self,
        stream: &Arc<CudaStream>,
        shape: &AttentionShape,
        opts: &AttentionOptions,
        tensors: [RawTensor; 4],
        lse: Option<(u64, usize)>,
    ) -> Result<PreparedAttention<'_>, AttentionError> {
        let scale = opts.scale.unwrap_or(1.0 / (shape.head_dim as f32).sqrt());
        if !(scale.is_finite() && scale > 0.0) {
            return Err(AttentionError::BadScale { scale });
        }
        let [q, k, v, o] = tensors;
        let plan = validate(
            shape,
            [
                (q.strides, q.len),
                (k.strides, k.len),
                (v.strides, v.len),
                (o.strides, o.len),
            ],
            lse.map(|(_, len)| len),
        )?;
        let names = [TensorName::Q, TensorName::K, TensorName::V, TensorName::O];
        for (tensor, t) in names.into_iter().zip(tensors) {
            if !t.ptr.is_multiple_of(16) {
                return Err(AttentionError::MisalignedAddress {
                    tensor,
                    addr: t.ptr,
                });
            }
        }
        for (tensor, t) in names.into_iter().zip([q, k, v]) {
            if o.overlaps(t.ptr, t.span_bytes()) {
                return Err(AttentionError::OutputOverlaps { tensor });
            }
        }
        let lse_ptr = lse.map_or(0, |(p, _)| p);
        // validate checked the head dimension; the call's kernel by mask,
        // warpgroups and K/V block (`config_for_call`).
        let narrow = opts.kv_block == KvBlock::Narrow;
        let three = opts.warpgroups == Warpgroups::Three;
        let (config, spec) = config_for_call(plan.config.head_dim, opts.causal, narrow, three)
            .ok_or(AttentionError::UnsupportedHeadDim {
                head_dim: shape.head_dim,
                supported: AttentionError::SUPPORTED,
            })?;
        let bn = config.block_n;
        let (q_ptr, k_ptr, v_ptr, o_ptr) = (q.ptr, k.ptr, v.ptr, o.ptr);

        // One rank-3 map per batch entry and tensor (`OperandMaps`).
        let mut maps = Vec::with_capacity(4 * shape.batch);
        let mut heads_inner = 0u32;
        for (t, (base, strides, seq, heads, box_rows)) in [
            (q_ptr, q.strides, shape.seq_q, shape.q_heads, 64),
            (k_ptr, k.strides, shape.seq_kv, shape.kv_heads, bn),
            (v_ptr, v.strides, shape.seq_kv, shape.kv_heads, bn),
            (o_ptr, o.strides, shape.seq_q, shape.q_heads, 64),
        ]
        .into_iter()
        .enumerate()
        {
            let layout = OperandMaps::new(seq, heads, strides.seq, strides.head, box_rows);
            heads_inner |= (layout.heads_inner as u32) << t;
            for b in 0..shape.batch {
                let base = base + (2 * b * strides.batch) as u64;
                maps.push(tensor_map::encode(&layout.desc(base, shape.head_dim))?);
            }
        }
        let mut bytes: Vec<u8> = maps.iter().flat_map(|m| m.0).collect();
        let batch_heads = plan.grid.1;
        let sections = heads_per_section(
            shape.seq_kv as u32,
            shape.head_dim as u32,
            (shape.q_heads / shape.kv_heads) as u32,
            batch_heads,
        );
        let tiles = tile_count(shape.seq_q as u32, config.bm(), batch_heads);
        // Causal calls on the planned kernels (`HeadDimConfig::planned`:
        // d = 64 on two warpgroups, d = 128) run a planned schedule
        // (`schedule::plan`: the tiles, longest first, each to the CTA with
        // the least work so far), one CTA per SM by default: +3 to +18 %
        // over one CTA per tile (BENCHMARKS.md "Session 11 — ATTN round
        // 2"). Other causal calls with the default CTA count launch one CTA
        // per tile (the hardware's dispatch balances the unequal tiles
        // better than the static stride: Session 9), as `PerTile` does;
        // d = 256 always does.
        let planned = config.planned && opts.causal && opts.ctas != Ctas::PerTile;
        let grid = if planned || (config.persistent && !(opts.causal && opts.ctas == Ctas::PerSm)) {
            opts.ctas.grid(tiles, self.sm_count)
        } else {
            tiles
        };
        if planned {
            let order = schedule::plan(
                shape.seq_q as u32,
                shape.seq_kv as u32,
                config.bm(),
                config.block_n,
                batch_heads,
                sections,
                grid,
            );
            assert!(schedule::check_plan(&order, tiles, grid), "a bad tile plan");
            bytes.extend(order.iter().flat_map(|x| x.to_le_bytes()));
        }
        // Stream-ordered: copied before the kernel, freed after it.
        let maps_buf = stream
            .clone_htod(&bytes)
            .map_err(baton_runtime::Error::from)?;
        let (maps_ptr, _maps_sync) = maps_buf.device_ptr(stream);
        let map_bytes = tensor_map::MAP_BYTES as u64;
        let per_tensor = shape.batch as u64 * map_bytes;
        let params = AttentionParams {
            q_maps: maps_ptr as *const _,
            k_maps: (maps_ptr + per_tensor) as *const _,
            v_maps: (maps_ptr + 2 * per_tensor) as *const _,
            o_maps: (maps_ptr + 3 * per_tensor) as *const _,
            lse: lse_ptr as *mut f32,
            seq_q: shape.seq_q as u32,
            seq_kv: shape.seq_kv as u32,
            q_heads: shape.q_heads as u32,
            batch_heads,
            heads_per_section: sections,
            heads_per_kv_head: (shape.q_heads / shape.kv_heads) as u32,
            causal: opts.causal as u32,
            heads_inner,
            pingpong: opts.schedule.code(),
            scale_log2: scale * std::f32::consts::LOG2_E,
            tile_order: if planned {
                (maps_ptr + 4 * per_tensor) as *const u32
            } else {
                std::ptr::null()
            },
        };
        let which = KERNELS.iter().position(|k| k.name == spec.name).ok_or(
            AttentionError::UnsupportedHeadDim {
                head_dim: shape.head_dim,
                supported: AttentionError::SUPPORTED,
            },
        )?;
        let kernel = if opts.debug {
            &self.debug[which]
        } else {
            &self.release[which]
        };
        drop(_maps_sync);
        Ok(PreparedAttention {
            kernel,
            stream: stream.clone(),
            grid,
            params,
            _maps: maps_buf,
            _buffers: std::marker::PhantomData,
        })
    }
}

/// A checked call with its tensor maps uploaded ([`Attention::prepare`]);
/// borrows Q, K, V (shared), O and the logsumexp (exclusive) for `'a`.
pub struct PreparedAttention<'a> {
    kernel: &'a TypedKernel<AttentionParams>,
    stream: Arc<CudaStream>,
    /// CTAs (each computes work tiles `blockIdx.x + i·grid`).
    grid: u32,
    params: AttentionParams,
    _maps: CudaSlice<u8>,
    _buffers: std::marker::PhantomData<&'a mut ()>,
}

impl PreparedAttention<'_> {
    /// Enqueues the kernel on the prepared stream (every check was made
    /// by [`Attention::prepare`]; only the driver can refuse now).
    pub fn launch(&self) -> Result<(), baton_runtime::Error> {
        // SAFETY: validate checked that every map's box reach stays inside
        // its buffer (TMA clips and zero-fills at the dims), that lse holds
        // batch·q_heads·seq_q floats, and the grid; the buffers are borrowed
        // for the life of `self` (O and lse exclusively) and the maps are
        // owned by it; a CudaSlice is freed in stream order, after this kernel.
        unsafe {
            self.kernel
                .launch(&self.stream, (self.grid, 1, 1), &self.params)?
        };
        Ok(())
    }
}
