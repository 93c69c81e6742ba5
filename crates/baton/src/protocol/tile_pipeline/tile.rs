//! `Tile<T, ROWS, COLS>`: one TMA box worth of shared memory, and the views
//! the CPU backend gives to a role that holds the stage it lives in.

#[cfg(not(target_arch = "nvptx64"))]
use crate::tensor_map::Swizzle;
#[cfg(not(target_arch = "nvptx64"))]
use core::marker::PhantomData;

#[cfg(not(loom))]
use core::cell::UnsafeCell as UnsafeTileCell;
#[cfg(loom)]
use loom::cell::UnsafeCell as UnsafeTileCell;

/// A `ROWS × COLS` tile of `T` in shared memory, aligned to 1024 bytes (what
/// a 128-byte-swizzled TMA box needs).
///
/// The expect-tx byte count of a stage is derived from its tiles'
/// [`BYTES`](Self::BYTES), never written by hand.
///
/// **GPU**: never read or written by Rust code; TMA, `wgmma` and
/// `ld/st.shared` reach it through [`SharedRef::addr`](crate::smem::SharedRef::addr).
///
/// **CPU backend**: plain memory inside the simulated block's shared-memory
/// struct, with interior mutability (`UnsafeCell`; loom's under `--cfg loom`,
/// so the model checker tracks every access). The invariant that makes the
/// `Sync` impl sound is the pipeline protocol: only the role that holds the
/// stage (producer between acquiring and releasing it, consumers between
/// the `full` wait and their `empty` arrive) touches the tile, and the
/// mbarrier's release/acquire orders those accesses. Safe access goes
/// through [`TileView`]/[`TileViewMut`], which borrow a held stage guard.
///
/// ```
/// use baton::tile_pipeline::Tile;
/// assert_eq!(Tile::<u16, 64, 64>::BYTES, 8192);
/// assert_eq!(core::mem::align_of::<Tile<f32, 1, 128>>(), 1024);
/// ```
#[repr(C, align(1024))]
pub struct Tile<T, const ROWS: usize, const COLS: usize> {
    data: UnsafeTileCell<[[T; COLS]; ROWS]>,
}

// SAFETY: see the type's documentation: the pipeline protocol serializes the
// accesses of different threads (mbarrier release/acquire).
unsafe impl<T: Send, const ROWS: usize, const COLS: usize> Sync for Tile<T, ROWS, COLS> {}

impl<T, const ROWS: usize, const COLS: usize> Tile<T, ROWS, COLS> {
    /// Rows.
    pub const ROWS: usize = ROWS;
    /// Columns (the contiguous dimension).
    pub const COLS: usize = COLS;
    /// Payload bytes: `ROWS × COLS × size_of::<T>()` — what a TMA load of
    /// the whole tile completes on the barrier.
    pub const BYTES: u32 = {
        let b = ROWS * COLS * core::mem::size_of::<T>();
        assert!(b > 0 && b <= 227 * 1024, "a tile must fit in shared memory");
        b as u32
    };
    /// Bytes of one row.
    pub const ROW_BYTES: usize = COLS * core::mem::size_of::<T>();
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T: Copy + Default, const ROWS: usize, const COLS: usize> Default for Tile<T, ROWS, COLS> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T: Copy, const ROWS: usize, const COLS: usize> Tile<T, ROWS, COLS> {
    /// A tile filled with `T::default()` (CPU backend).
    pub fn new() -> Self
    where
        T: Default,
    {
        Self {
            data: UnsafeTileCell::new([[T::default(); COLS]; ROWS]),
        }
    }

    /// Runs `f` with a pointer to the tile's first byte, for reading.
    ///
    /// # Safety
    /// The caller holds the stage (no other thread writes the tile now).
    #[inline]
    pub unsafe fn with_ptr<R>(&self, f: impl FnOnce(*const u8) -> R) -> R {
        #[cfg(loom)]
        {
            self.data.with(|p| f(p as *const u8))
        }
        #[cfg(not(loom))]
        {
            f(self.data.get() as *const u8)
        }
    }

    /// Runs `f` with a pointer to the tile's first byte, for writing.
    ///
    /// # Safety
    /// The caller holds the stage as its producer (no other thread reads or
    /// writes the tile now).
    #[inline]
    pub unsafe fn with_mut_ptr<R>(&self, f: impl FnOnce(*mut u8) -> R) -> R {
        #[cfg(loom)]
        {
            self.data.with_mut(|p| f(p as *mut u8))
        }
        #[cfg(not(loom))]
        {
            f(self.data.get() as *mut u8)
        }
    }

    /// Byte offset of logical element `(row, col)` in a tile written with
    /// `swizzle` (a TMA box of exactly this shape).
    #[inline]
    pub const fn offset(swizzle: Swizzle, row: usize, col: usize) -> usize {
        swizzle.apply((row * COLS + col) * core::mem::size_of::<T>())
    }

    /// Element `(row, col)` of a tile laid out with `swizzle`.
    ///
    /// # Safety
    /// As [`with_ptr`](Self::with_ptr); `row < ROWS`, `col < COLS`.
    #[inline]
    pub unsafe fn read(&self, swizzle: Swizzle, row: usize, col: usize) -> T {
        assert!(row < ROWS && col < COLS, "tile index out of bounds");
        let off = Self::offset(swizzle, row, col);
        // SAFETY: `off` is inside the tile (the swizzle permutes 16-byte
        // chunks inside it) and aligned for `T` (elements never straddle a
        // chunk: size_of::<T>() divides 16 for the TMA element types).
        unsafe { self.with_ptr(|p| core::ptr::read_unaligned(p.add(off) as *const T)) }
    }

    /// Writes element `(row, col)` of a tile laid out with `swizzle`.
    ///
    /// # Safety
    /// As [`with_mut_ptr`](Self::with_mut_ptr); `row < ROWS`, `col < COLS`.
    #[inline]
    pub unsafe fn write(&self, swizzle: Swizzle, row: usize, col: usize, value: T) {
        assert!(row < ROWS && col < COLS, "tile index out of bounds");
        let off = Self::offset(swizzle, row, col);
        // SAFETY: as `read`.
        unsafe { self.with_mut_ptr(|p| core::ptr::write_unaligned(p.add(off) as *mut T, value)) }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
/// Read access to a tile of a stage the caller holds as a consumer (CPU
/// backend). Borrows the stage guard, so it cannot outlive the claim.
pub struct TileView<'g, T, const ROWS: usize, const COLS: usize> {
    tile: &'g Tile<T, ROWS, COLS>,
    swizzle: Swizzle,
    _guard: PhantomData<&'g ()>,
}

#[cfg(not(target_arch = "nvptx64"))]
impl<'g, T: Copy, const ROWS: usize, const COLS: usize> TileView<'g, T, ROWS, COLS> {
    /// A view of `tile`, laid out with `swizzle`.
    ///
    /// # Safety
    /// The caller holds the stage the tile belongs to for `'g` (guards call
    /// this with their own lifetime).
    pub unsafe fn new(tile: &'g Tile<T, ROWS, COLS>, swizzle: Swizzle) -> Self {
        Self {
            tile,
            swizzle,
            _guard: PhantomData,
        }
    }

    /// Logical element `(row, col)` (the swizzle is undone).
    pub fn get(&self, row: usize, col: usize) -> T {
        // SAFETY: the view's existence proves the stage is held.
        unsafe { self.tile.read(self.swizzle, row, col) }
    }

    /// Row `row` in logical order.
    pub fn row(&self, row: usize) -> [T; COLS] {
        core::array::from_fn(|c| self.get(row, c))
    }
}

#[cfg(not(target_arch = "nvptx64"))]
/// Write access to a tile of a stage the caller holds as its producer (CPU
/// backend).
pub struct TileViewMut<'g, T, const ROWS: usize, const COLS: usize> {
    tile: &'g Tile<T, ROWS, COLS>,
    swizzle: Swizzle,
    _guard: PhantomData<&'g mut ()>,
}

#[cfg(not(target_arch = "nvptx64"))]
impl<'g, T: Copy, const ROWS: usize, const COLS: usize> TileViewMut<'g, T, ROWS, COLS> {
    /// A writable view of `tile`, laid out with `swizzle`.
    ///
    /// # Safety
    /// The caller holds the stage as its only writer for `'g`.
    pub unsafe fn new(tile: &'g Tile<T, ROWS, COLS>, swizzle: Swizzle) -> Self {
        Self {
            tile,
            swizzle,
            _guard: PhantomData,
        }
    }

    /// Logical element `(row, col)`.
    pub fn get(&self, row: usize, col: usize) -> T {
        // SAFETY: the view proves exclusive access.
        unsafe { self.tile.read(self.swizzle, row, col) }
    }

    /// Sets logical element `(row, col)`.
    pub fn set(&mut self, row: usize, col: usize, value: T) {
        // SAFETY: the view proves exclusive access.
        unsafe { self.tile.write(self.swizzle, row, col, value) }
    }
}
