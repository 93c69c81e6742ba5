//! Typed references into a thread block's shared memory.
//!
//! On the GPU, shared memory is addressed by 32-bit offsets in the shared
//! window: `mbarrier`, `cp.async.bulk.tensor`, `wgmma` descriptors and
//! `ldmatrix`/`stmatrix` all take such an address. A [`SharedRef<'a, T>`]
//! carries that address together with the type stored there, so a kernel can
//! carve its dynamic shared memory into barrier arrays and tile stages with
//! ordinary `#[repr(C)]` structs and [`smem_field!`](crate::smem_field),
//! computed at compile time with `offset_of!` — no pointer arithmetic by hand.
//!
//! On the CPU backend the same type wraps a plain `&'a T` into memory shared
//! by the threads that simulate the block's warps.
//!
//! ```
//! use baton::smem::SharedRef;
//! use baton::smem_field;
//!
//! #[repr(C)]
//! struct Layout {
//!     tiles: [[u32; 4]; 2],
//!     flag: u32,
//! }
//! let storage = Layout { tiles: [[0; 4]; 2], flag: 7 };
//! let smem = SharedRef::from_ref(&storage);
//! let flag = smem_field!(smem, Layout, flag);
//! assert_eq!(*flag.get(), 7);
//! let tile1 = smem_field!(smem, Layout, tiles).at(1);
//! assert_eq!(tile1.get().len(), 4);
//! ```

use core::marker::PhantomData;

/// A reference to a `T` in the block's shared memory, valid for `'a`.
///
/// `Copy`, pointer-sized (a `u32` on the GPU). It grants no Rust-level access
/// to the bytes on the GPU: shared memory is read and written through the
/// arch backend's instructions (or by the async proxies: TMA, wgmma), which
/// take [`SharedRef::addr`].
pub struct SharedRef<'a, T> {
    #[cfg(target_arch = "nvptx64")]
    addr: u32,
    #[cfg(not(target_arch = "nvptx64"))]
    ptr: &'a T,
    _life: PhantomData<&'a T>,
}

impl<T> Clone for SharedRef<'_, T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedRef<'_, T> {}

#[cfg(target_arch = "nvptx64")]
impl<'a, T> SharedRef<'a, T> {
    /// Wraps a shared-window address.
    ///
    /// # Safety
    /// `addr` must be the shared-memory address of a properly aligned `T`
    /// that stays allocated to this block for `'a`.
    #[inline(always)]
    pub const unsafe fn from_addr(addr: u32) -> Self {
        Self {
            addr,
            _life: PhantomData,
        }
    }

    /// The 32-bit shared-window address.
    #[inline(always)]
    pub const fn addr(self) -> u32 {
        self.addr
    }

    #[inline(always)]
    const unsafe fn offset_raw<U>(self, bytes: usize) -> SharedRef<'a, U> {
        // SAFETY: forwarded to the caller.
        unsafe { SharedRef::from_addr(self.addr + bytes as u32) }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<'a, T> SharedRef<'a, T> {
    /// Wraps a reference into memory shared by the simulated block.
    #[inline(always)]
    pub const fn from_ref(r: &'a T) -> Self {
        Self {
            ptr: r,
            _life: PhantomData,
        }
    }

    /// The referenced value.
    #[inline(always)]
    pub const fn get(self) -> &'a T {
        self.ptr
    }

    /// The address, as an integer (CPU backend: the host address).
    #[inline(always)]
    pub fn addr(self) -> usize {
        self.ptr as *const T as usize
    }

    #[inline(always)]
    unsafe fn offset_raw<U>(self, bytes: usize) -> SharedRef<'a, U> {
        // SAFETY: forwarded to the caller: `bytes` is the offset of a `U`
        // inside the `T`, so the result stays inside the same allocation.
        let p = unsafe { (self.ptr as *const T as *const u8).add(bytes) } as *const U;
        SharedRef::from_ref(unsafe { &*p })
    }
}

impl<'a, T> SharedRef<'a, T> {
    /// Projects to a field at byte offset `offset`, whose type is given by the
    /// `witness` accessor (never called; it only names the field's type).
    ///
    /// Use [`smem_field!`](crate::smem_field), which supplies both from the
    /// field name.
    ///
    /// # Safety
    /// `offset` must be the offset of the field that `witness` returns.
    #[inline(always)]
    pub unsafe fn project<U>(self, offset: usize, _witness: fn(&T) -> &U) -> SharedRef<'a, U> {
        // SAFETY: forwarded to the caller.
        unsafe { self.offset_raw(offset) }
    }
}

impl<'a, T, const N: usize> SharedRef<'a, [T; N]> {
    /// The `i`-th element of a shared array. Panics (CPU) or traps (GPU) when
    /// `i >= N`.
    #[inline(always)]
    pub fn at(self, i: usize) -> SharedRef<'a, T> {
        assert!(i < N, "shared array index out of bounds");
        // SAFETY: i < N, elements are contiguous.
        unsafe { self.offset_raw(i * core::mem::size_of::<T>()) }
    }

    /// The `i`-th element without a bounds check.
    ///
    /// # Safety
    /// `i < N`.
    #[inline(always)]
    pub unsafe fn at_unchecked(self, i: usize) -> SharedRef<'a, T> {
        // SAFETY: forwarded to the caller.
        unsafe { self.offset_raw(i * core::mem::size_of::<T>()) }
    }
}

/// Projects a [`SharedRef`] to one field of a `#[repr(C)]` struct:
/// `smem_field!(smem, Layout, barriers)`. The offset comes from
/// `core::mem::offset_of!`, so the carve-up is a compile-time constant.
///
/// ```
/// # use baton::{smem::SharedRef, smem_field};
/// #[repr(C)]
/// struct S { a: u64, b: [u32; 2] }
/// let s = S { a: 1, b: [2, 3] };
/// let b = smem_field!(SharedRef::from_ref(&s), S, b);
/// assert_eq!(*b.at(1).get(), 3);
/// ```
#[macro_export]
macro_rules! smem_field {
    ($smem:expr, $ty:ty, $field:ident) => {{
        let base: $crate::smem::SharedRef<'_, $ty> = $smem;
        // SAFETY: the offset and the witness name the same field of `$ty`.
        unsafe { base.project(::core::mem::offset_of!($ty, $field), |s: &$ty| &s.$field) }
    }};
}
