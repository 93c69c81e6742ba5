//! Matrix views: a typed operand over device memory (a cudarc
//! `CudaSlice`/`CudaView`, or a raw pointer for FFI) with rows, columns,
//! leading dimension, layout, batch count and batch stride.
//!
//! Element `(b, r, c)` of a view lives at element offset
//! `b·batch_stride + r·ld + c` (row-major) or `b·batch_stride + c·ld + r`
//! (column-major) from its start. Views are checked when they are made
//! ([`MatrixDesc::check`]): the rules TMA imposes (16-byte base, 16-byte
//! strides), a leading dimension that covers a row (or column), and a buffer
//! that reaches the last element.
//!
//! ```no_run
//! use baton_runtime::Gpu;
//! use baton_runtime::gemm::element::bf16;
//! use baton_runtime::gemm::matrix::{Matrix, MatrixDesc};
//! let gpu = Gpu::new(0)?;
//! let buf = gpu.stream().alloc_zeros::<bf16>(4 * 100 * 72)?;
//! // 4 matrices of 100×64 rows with 72-element rows, one after another.
//! let a = Matrix::new(&buf, MatrixDesc::row_major(100, 64).with_ld(72).with_batch(4, 100 * 72))?;
//! assert_eq!(a.desc().batch, 4);
//! # Ok::<(), baton_runtime::Error>(())
//! ```

pub use crate::error::matrix::MatrixError;
use crate::gemm::element::Element;
use cudarc::driver::{DevicePtr, DevicePtrMut};
use std::marker::PhantomData;

/// Which index is contiguous.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Rows are contiguous: element `(r, c)` at `r·ld + c`.
    RowMajor,
    /// Columns are contiguous: element `(r, c)` at `c·ld + r`.
    ColMajor,
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Layout::RowMajor => "row-major",
            Layout::ColMajor => "column-major",
        })
    }
}

/// The shape of a (batched) matrix view, in elements.
///
/// ```
/// use baton_runtime::gemm::matrix::{Layout, MatrixDesc};
/// let d = MatrixDesc::col_major(3, 5);
/// assert_eq!((d.ld, d.layout, d.batch), (3, Layout::ColMajor, 1));
/// assert_eq!(d.transposed(), MatrixDesc::row_major(5, 3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatrixDesc {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Elements between the starts of consecutive rows (row-major) or
    /// columns (column-major).
    pub ld: usize,
    /// Row- or column-major.
    pub layout: Layout,
    /// Matrices in the batch (≥ 1).
    pub batch: usize,
    /// Elements between the starts of consecutive matrices (0: one matrix
    /// repeated, allowed for inputs).
    pub batch_stride: usize,
}

impl MatrixDesc {
    /// A packed row-major `rows × cols` matrix (ld = cols, batch 1).
    pub const fn row_major(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            ld: cols,
            layout: Layout::RowMajor,
            batch: 1,
            batch_stride: rows * cols,
        }
    }

    /// A packed column-major `rows × cols` matrix (ld = rows, batch 1).
    pub const fn col_major(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            ld: rows,
            layout: Layout::ColMajor,
            batch: 1,
            batch_stride: rows * cols,
        }
    }

    /// The same view with leading dimension `ld` (elements); a packed batch
    /// stride follows it.
    pub const fn with_ld(mut self, ld: usize) -> Self {
        self.ld = ld;
        self.batch_stride = self.outer() * ld;
        self
    }

    /// The same view as `batch` matrices, `batch_stride` elements apart.
    pub const fn with_batch(mut self, batch: usize, batch_stride: usize) -> Self {
        self.batch = batch;
        self.batch_stride = batch_stride;
        self
    }

    /// The same memory read as the transposed matrix (rows ↔ columns,
    /// row- ↔ column-major).
    pub const fn transposed(self) -> Self {
        Self {
            rows: self.cols,
            cols: self.rows,
            layout: match self.layout {
                Layout::RowMajor => Layout::ColMajor,
                Layout::ColMajor => Layout::RowMajor,
            },
            ..self
        }
    }

    /// Elements of the contiguous index (columns if row-major, rows if
    /// column-major).
    pub const fn inner(&self) -> usize {
        match self.layout {
            Layout::RowMajor => self.cols,
            Layout::ColMajor => self.rows,
        }
    }

    /// Elements of the strided index (rows if row-major, columns if
    /// column-major).
    pub const fn outer(&self) -> usize {
        match self.layout {
            Layout::RowMajor => self.rows,
            Layout::ColMajor => self.cols,
        }
    }

    /// Elements from the start to one past the last element of one matrix.
    pub const fn matrix_span(&self) -> usize {
        (self.outer() - 1) * self.ld + self.inner()
    }

    /// Elements from the start to one past the last element of the last
    /// batch (the buffer length the view needs), `None` on overflow.
    pub fn span(&self) -> Option<usize> {
        (self.batch - 1)
            .checked_mul(self.batch_stride)?
            .checked_add((self.outer() - 1).checked_mul(self.ld)?)?
            .checked_add(self.inner())
    }

    /// Checks the view of `len` elements of `T` at device address `address`
    /// as operand `operand`: dimensions ≥ 1 and below 2^31, batch ≥ 1,
    /// `ld` ≥ the contiguous dimension, 16-byte base address, `ld` and (for
    /// batch > 1) the batch stride multiples of 16 bytes, and a buffer that
    /// reaches the last element.
    ///
    /// ```
    /// use baton_runtime::gemm::matrix::{MatrixDesc, MatrixError};
    /// let d = MatrixDesc::row_major(3, 8).with_batch(2, 24);
    /// assert!(d.check::<u16>("A", 0x1000, 48).is_ok());
    /// assert_eq!(
    ///     d.check::<u16>("A", 0x1000, 47),
    ///     Err(MatrixError::TooShort { operand: "A", needed: 48, len: 47 })
    /// );
    /// ```
    pub fn check<T: Element>(
        &self,
        operand: &'static str,
        address: u64,
        len: usize,
    ) -> Result<(), MatrixError> {
        if self.rows == 0 || self.cols == 0 {
            return Err(MatrixError::EmptyDimension {
                operand,
                rows: self.rows,
                cols: self.cols,
            });
        }
        if self.batch == 0 {
            return Err(MatrixError::ZeroBatch { operand });
        }
        const DIM_LIMIT: usize = 1 << 31;
        const STRIDE_LIMIT: usize = 1 << 40;
        if self.rows >= DIM_LIMIT
            || self.cols >= DIM_LIMIT
            || self.batch >= DIM_LIMIT
            || self.ld.saturating_mul(T::BYTES) >= STRIDE_LIMIT
            || self.batch_stride.saturating_mul(T::BYTES) >= STRIDE_LIMIT
        {
            return Err(MatrixError::TooLarge { operand });
        }
        if self.ld < self.inner() {
            return Err(MatrixError::LeadingDimensionTooSmall {
                operand,
                layout: self.layout,
                ld: self.ld,
                min: self.inner(),
            });
        }
        let multiple = 16 / T::BYTES;
        let aligned = |stride: &'static str, elems: usize| {
            if (elems * T::BYTES).is_multiple_of(16) {
                Ok(())
            } else {
                Err(MatrixError::StrideNotAligned {
                    operand,
                    stride,
                    elems,
                    bytes: elems * T::BYTES,
                    elem: T::NAME,
                    multiple,
                })
            }
        };
        // A single row/column has no stride to align, but TMA still needs
        // one for its (unused) second dimension.
        aligned("leading dimension", self.ld)?;
        if self.batch > 1 {
            aligned("batch stride", self.batch_stride)?;
        }
        if !address.is_multiple_of(16) {
            return Err(MatrixError::BaseNotAligned { operand, address });
        }
        let needed = self.span().ok_or(MatrixError::TooLarge { operand })?;
        if needed > len {
            return Err(MatrixError::TooShort {
                operand,
                needed,
                len,
            });
        }
        Ok(())
    }

    /// [`check`](Self::check) for an output: also no two batches may
    /// share an element (batch stride ≥ one matrix's span).
    pub fn check_output<T: Element>(
        &self,
        operand: &'static str,
        address: u64,
        len: usize,
    ) -> Result<(), MatrixError> {
        self.check::<T>(operand, address, len)?;
        if self.batch > 1 && self.batch_stride < self.matrix_span() {
            return Err(MatrixError::OutputBatchesOverlap {
                operand,
                batch_stride: self.batch_stride,
                matrix: self.matrix_span(),
            });
        }
        Ok(())
    }
}

/// A read-only (batched) matrix of `T` in device memory, borrowed for `'a`.
///
/// Made from a cudarc buffer ([`new`](Self::new)) or, for FFI, from a raw
/// device pointer ([`from_raw`](Self::from_raw)). The GEMMs enqueue their
/// work on their [`Gpu`](crate::Gpu)'s stream: make that `Gpu` with
/// [`Gpu::from_stream`](crate::Gpu::from_stream) on the stream (and so the
/// CUDA context) the operands belong to.
#[derive(Clone, Copy, Debug)]
pub struct Matrix<'a, T> {
    address: u64,
    len: usize,
    desc: MatrixDesc,
    _data: PhantomData<&'a [T]>,
}

/// A writable (batched) matrix of `T` in device memory, borrowed mutably
/// for `'a`: a GEMM's D.
#[derive(Debug)]
pub struct MatrixMut<'a, T> {
    address: u64,
    len: usize,
    desc: MatrixDesc,
    _data: PhantomData<&'a mut [T]>,
}

impl<'a, T: Element> Matrix<'a, T> {
    /// A view of `data` (a `CudaSlice<T>` or `CudaView<T>`) described by
    /// `desc`. Errors: the rules of [`MatrixDesc::check`], naming operand
    /// `A` (the GEMMs re-check each view under its own name).
    ///
    /// ```no_run
    /// use baton_runtime::gemm::matrix::{Matrix, MatrixDesc};
    /// let gpu = baton_runtime::Gpu::new(0)?;
    /// let buf = gpu.stream().alloc_zeros::<u16>(64 * 64)?;
    /// let a = Matrix::new(&buf.slice(..), MatrixDesc::row_major(64, 64))?;
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    pub fn new<V: DevicePtr<T>>(data: &'a V, desc: MatrixDesc) -> Result<Self, MatrixError> {
        let (address, _sync) = data.device_ptr(data.stream());
        desc.check::<T>("A", address, data.len())?;
        Ok(Self {
            address,
            len: data.len(),
            desc,
            _data: PhantomData,
        })
    }

    /// A view of `len` elements of `T` at device address `address`.
    ///
    /// # Safety
    /// For all of `'a`: `address .. address + len·size_of::<T>()` is device
    /// memory of the CUDA context of the `Gpu` the view is used with,
    /// readable and holding valid `T`s, that nothing writes while the GEMMs
    /// enqueued on it may run; work that produced it is ordered before
    /// those GEMMs on their stream (the caller synchronizes other streams,
    /// e.g. PyTorch's current stream is the `Gpu`'s stream).
    ///
    /// ```
    /// use baton_runtime::gemm::matrix::{Matrix, MatrixDesc};
    /// // SAFETY: never launched; a view is plain data until a GEMM uses it.
    /// let a = unsafe { Matrix::<u16>::from_raw(0x10000, 64, MatrixDesc::row_major(8, 8)) }?;
    /// assert_eq!(a.address(), 0x10000);
    /// # Ok::<(), baton_runtime::gemm::matrix::MatrixError>(())
    /// ```
    pub unsafe fn from_raw(
        address: u64,
        len: usize,
        desc: MatrixDesc,
    ) -> Result<Self, MatrixError> {
        desc.check::<T>("A", address, len)?;
        Ok(Self {
            address,
            len,
            desc,
            _data: PhantomData,
        })
    }

    /// Its shape.
    pub fn desc(&self) -> &MatrixDesc {
        &self.desc
    }
    /// The device address of its first element.
    pub fn address(&self) -> u64 {
        self.address
    }
    /// Elements of the buffer it views.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the buffer is empty (never, for a checked view).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Re-checks it as `operand` (the GEMM's name for it).
    pub(crate) fn check_as(&self, operand: &'static str) -> Result<(), MatrixError> {
        self.desc.check::<T>(operand, self.address, self.len)
    }
    /// The bytes it may read, `[address, address + bytes)`.
    pub(crate) fn byte_range(&self) -> (u64, u64) {
        (
            self.address,
            (self.desc.span().unwrap_or(0) * T::BYTES) as u64,
        )
    }
}

impl<'a, T: Element> MatrixMut<'a, T> {
    /// A writable view of `data` described by `desc`. Errors: the rules of
    /// [`MatrixDesc::check_output`], naming operand `D`.
    ///
    /// ```no_run
    /// use baton_runtime::gemm::matrix::{MatrixMut, MatrixDesc};
    /// let gpu = baton_runtime::Gpu::new(0)?;
    /// let mut buf = gpu.stream().alloc_zeros::<u16>(64 * 64)?;
    /// let d = MatrixMut::new(&mut buf, MatrixDesc::row_major(64, 64))?;
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    pub fn new<V: DevicePtrMut<T>>(data: &'a mut V, desc: MatrixDesc) -> Result<Self, MatrixError> {
        let len = data.len();
        let stream = data.stream().clone();
        let (address, _sync) = data.device_ptr_mut(&stream);
        desc.check_output::<T>("D", address, len)?;
        Ok(Self {
            address,
            len,
            desc,
            _data: PhantomData,
        })
    }

    /// A writable view of `len` elements of `T` at device address
    /// `address`.
    ///
    /// # Safety
    /// As [`Matrix::from_raw`], and nothing else reads or writes the memory
    /// while the GEMMs enqueued on it may run (except as their C).
    ///
    /// ```
    /// use baton_runtime::gemm::matrix::{MatrixMut, MatrixDesc, MatrixError};
    /// let desc = MatrixDesc::row_major(8, 8).with_batch(2, 32);
    /// // SAFETY: never launched.
    /// let e = unsafe { MatrixMut::<u16>::from_raw(0x10000, 128, desc) }.unwrap_err();
    /// assert!(matches!(e, MatrixError::OutputBatchesOverlap { .. }));
    /// ```
    pub unsafe fn from_raw(
        address: u64,
        len: usize,
        desc: MatrixDesc,
    ) -> Result<Self, MatrixError> {
        desc.check_output::<T>("D", address, len)?;
        Ok(Self {
            address,
            len,
            desc,
            _data: PhantomData,
        })
    }

    /// Its shape.
    pub fn desc(&self) -> &MatrixDesc {
        &self.desc
    }
    /// The device address of its first element.
    pub fn address(&self) -> u64 {
        self.address
    }
    /// Elements of the buffer it views.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the buffer is empty (never, for a checked view).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Re-checks it as `operand`.
    pub(crate) fn check_as(&self, operand: &'static str) -> Result<(), MatrixError> {
        self.desc.check_output::<T>(operand, self.address, self.len)
    }
    /// The bytes it may write, `[address, address + bytes)`.
    pub(crate) fn byte_range(&self) -> (u64, u64) {
        (
            self.address,
            (self.desc.span().unwrap_or(0) * T::BYTES) as u64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::element::{E4M3, bf16};

    const BASE: u64 = 0x7f00_0000_0000;

    #[test]
    fn packed_views_pass() {
        for d in [MatrixDesc::row_major(3, 8), MatrixDesc::col_major(8, 3)] {
            assert_eq!(d.span(), Some(24));
            assert!(d.check::<bf16>("A", BASE, 24).is_ok());
            assert!(d.check_output::<bf16>("D", BASE, 24).is_ok());
        }
        // A broadcast input: stride 0 repeats one matrix.
        let d = MatrixDesc::row_major(3, 16).with_batch(5, 0);
        assert!(d.check::<E4M3>("B", BASE, 48).is_ok());
    }

    #[test]
    fn every_rule_has_its_error() {
        let r = MatrixDesc::row_major;
        assert_eq!(
            r(0, 8).check::<u16>("A", BASE, 64),
            Err(MatrixError::EmptyDimension {
                operand: "A",
                rows: 0,
                cols: 8
            })
        );
        assert_eq!(
            r(1, 8).with_batch(0, 8).check::<u16>("B", BASE, 64),
            Err(MatrixError::ZeroBatch { operand: "B" })
        );
        assert_eq!(
            MatrixDesc::col_major(16, 2)
                .with_ld(8)
                .check::<u16>("B", BASE, 64),
            Err(MatrixError::LeadingDimensionTooSmall {
                operand: "B",
                layout: Layout::ColMajor,
                ld: 8,
                min: 16
            })
        );
        assert_eq!(
            r(2, 12).check::<u16>("A", BASE, 64),
            Err(MatrixError::StrideNotAligned {
                operand: "A",
                stride: "leading dimension",
                elems: 12,
                bytes: 24,
                elem: "bf16 (u16 bits)",
                multiple: 8
            })
        );
        assert!(matches!(
            r(2, 16).with_batch(2, 40).check::<u8>("A", BASE, 80),
            Err(MatrixError::StrideNotAligned {
                stride: "batch stride",
                multiple: 16,
                ..
            })
        ));
        assert_eq!(
            r(2, 8).check::<u16>("C", BASE + 8, 64),
            Err(MatrixError::BaseNotAligned {
                operand: "C",
                address: BASE + 8
            })
        );
        assert_eq!(
            r(2, 8).with_ld(16).check::<u16>("A", BASE, 23),
            Err(MatrixError::TooShort {
                operand: "A",
                needed: 24,
                len: 23
            })
        );
        assert_eq!(
            r(1 << 31, 8).check::<u16>("A", BASE, usize::MAX),
            Err(MatrixError::TooLarge { operand: "A" })
        );
        assert_eq!(
            r(2, 8).with_batch(2, 8).check_output::<u16>("D", BASE, 64),
            Err(MatrixError::OutputBatchesOverlap {
                operand: "D",
                batch_stride: 8,
                matrix: 16
            })
        );
        // The same overlap is fine for an input.
        assert!(r(2, 8).with_batch(2, 8).check::<u16>("A", BASE, 64).is_ok());
    }

    #[test]
    fn messages_name_rule_and_allowed_values() {
        let e = MatrixDesc::row_major(2, 12)
            .check::<u16>("A", BASE, 64)
            .unwrap_err();
        let s = e.to_string();
        assert!(s.contains("16 bytes") && s.contains("multiple of 8"), "{s}");
        let s = MatrixError::LayoutNotSupported {
            operand: "A",
            layout: Layout::ColMajor,
            dtype: "FP8 e4m3",
            rule: "FP8 operands must be K-major on Hopper",
        }
        .to_string();
        assert!(
            s.contains("column-major") && s.contains("K-major on Hopper"),
            "{s}"
        );
    }

    #[test]
    fn raw_views_check_their_description() {
        // SAFETY: never launched; views are plain data until a GEMM runs.
        let a = unsafe { Matrix::<bf16>::from_raw(BASE, 10, MatrixDesc::row_major(2, 8)) };
        assert_eq!(
            a.unwrap_err(),
            MatrixError::TooShort {
                operand: "A",
                needed: 16,
                len: 10
            }
        );
        // SAFETY: as above.
        let d =
            unsafe { MatrixMut::<bf16>::from_raw(BASE, 16, MatrixDesc::row_major(2, 8)) }.unwrap();
        assert_eq!(d.byte_range(), (BASE, 32));
    }
}
