//! Encoded TMA tensor maps in device memory, kept per operand set.
//!
//! baton's GEMM kernels take their tensor maps as pointers to global
//! memory (`GemmBf16Params::tma_a: *const TensorMap`). A map is a pure
//! function of its operand's address, shape, stride and box, so the maps of
//! one call are encoded and copied to the device once, on the first call
//! with that operand set ([`MapKey`]), and every later call with the same
//! set launches with no allocation, no copy and no synchronization — which
//! is what lets a call be captured in a CUDA graph after a warm-up call,
//! and what keeps the per-call host cost to a hash lookup.
//!
//! A first call (a miss) allocates from a bump arena of 64 KiB device
//! chunks and copies the maps synchronously on the cache's own stream, in
//! relaxed stream-capture mode (as torch's caching allocator does), so that
//! even a miss inside a graph capture works: the maps are in device memory
//! before the kernel node that reads them is recorded. Entries are never
//! freed or rewritten (a graph may replay them at any time): memory grows
//! by 128 bytes per map per distinct operand set. (When the kernels take
//! their maps by value as kernel parameters, this cache goes away.)

use baton_runtime::cudarc::driver::sys;
use baton_runtime::tensor_map::EncodedTensorMap;
use std::collections::HashMap;

/// Bytes of one encoded map in device memory (64-byte aligned slots).
pub const MAP_BYTES: u64 = 128;
/// Bytes of one arena chunk.
pub const CHUNK_BYTES: u64 = 64 * 1024;

/// What the maps of one launch are a function of: the kernel and every
/// operand's address, sizes and stride (the boxes follow from the kernel).
pub type MapKey = [u64; 16];

/// Device-resident tensor maps by [`MapKey`], in a never-freed arena.
#[derive(Default)]
pub struct MapCache {
    entries: HashMap<MapKey, u64>,
    /// Current chunk: next free byte and end.
    next: u64,
    end: u64,
    /// Device bytes held by the arena.
    held: u64,
    /// The stream the maps are copied on (created on the first miss).
    upload: Option<Stream>,
}

/// A CUDA stream owned by the cache.
struct Stream(sys::CUstream);
// SAFETY: a CUstream handle may be used from any thread of the process;
// the cache is behind a Mutex.
unsafe impl Send for Stream {}

/// Why maps could not be put on the device.
#[derive(Debug, thiserror::Error)]
#[error("tensor maps to device memory: {call} failed with {result:?}")]
pub struct UploadError {
    call: &'static str,
    result: sys::CUresult,
}

fn check(call: &'static str, result: sys::CUresult) -> Result<(), UploadError> {
    if result == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(UploadError { call, result })
    }
}

/// Switches the calling thread to relaxed stream-capture mode for its
/// lifetime (allocation and a synchronous copy on another stream are then
/// allowed while a stream is being captured).
struct RelaxedCapture(sys::CUstreamCaptureMode);

impl RelaxedCapture {
    fn new() -> Result<Self, UploadError> {
        let mut mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
        // SAFETY: writes the previous mode into `mode`.
        check("cuThreadExchangeStreamCaptureMode", unsafe {
            sys::cuThreadExchangeStreamCaptureMode(&mut mode)
        })?;
        Ok(RelaxedCapture(mode))
    }
}

impl Drop for RelaxedCapture {
    fn drop(&mut self) {
        // SAFETY: restores the mode saved in `new`.
        unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut self.0) };
    }
}

impl MapCache {
    /// Device address of the maps for `key` (map `i` at `+ 128 · i`),
    /// encoding them with `encode` and copying them to the device on the
    /// first call with `key`. The device's context must be current.
    pub fn get_or_upload<E>(
        &mut self,
        key: &MapKey,
        encode: impl FnOnce() -> Result<Vec<EncodedTensorMap>, E>,
    ) -> Result<u64, E>
    where
        E: From<UploadError>,
    {
        if let Some(&addr) = self.entries.get(key) {
            return Ok(addr);
        }
        let maps = encode()?;
        let bytes: Vec<u8> = maps.iter().flat_map(|m| m.0).collect();
        let addr = self.upload(&bytes)?;
        self.entries.insert(*key, addr);
        Ok(addr)
    }

    /// Operand sets cached.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Device bytes held.
    pub fn held_bytes(&self) -> u64 {
        self.held
    }

    fn upload(&mut self, bytes: &[u8]) -> Result<u64, UploadError> {
        let size = (bytes.len() as u64).next_multiple_of(MAP_BYTES);
        let _relaxed = RelaxedCapture::new()?;
        if self.next + size > self.end {
            let chunk = CHUNK_BYTES.max(size);
            let mut p: sys::CUdeviceptr = 0;
            // SAFETY: writes one device pointer.
            check("cuMemAlloc", unsafe {
                sys::cuMemAlloc_v2(&mut p, chunk as usize)
            })?;
            self.next = p;
            self.end = p + chunk;
            self.held += chunk;
        }
        let stream = match &self.upload {
            Some(s) => s.0,
            None => {
                let mut s: sys::CUstream = std::ptr::null_mut();
                // SAFETY: writes one stream handle.
                check("cuStreamCreate", unsafe {
                    sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)
                })?;
                self.upload = Some(Stream(s));
                s
            }
        };
        let addr = self.next;
        // SAFETY: `addr .. addr + bytes.len()` lies in a chunk this cache
        // allocated and has not handed out before; `bytes` outlives the
        // copy (synchronized below).
        check("cuMemcpyHtoDAsync", unsafe {
            sys::cuMemcpyHtoDAsync_v2(addr, bytes.as_ptr().cast(), bytes.len(), stream)
        })?;
        // SAFETY: a stream this cache created.
        check("cuStreamSynchronize", unsafe {
            sys::cuStreamSynchronize(stream)
        })?;
        self.next += size;
        Ok(addr)
    }
}
