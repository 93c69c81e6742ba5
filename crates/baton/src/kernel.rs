//! A kernel's ABI and geometry in one place: its parameter struct
//! ([`KernelParams`]), its [`KernelSpec`] (entry name, threads, cluster
//! shape, launch bounds, dynamic shared memory) and the [`kernel!`](crate::kernel!)
//! macro that declares the entry point against both.
//!
//! The same items compile for the host and for `nvptx64`, so the host crate
//! launches with the very struct and spec the kernel was compiled against:
//!
//! * the kernel entry takes exactly one parameter, a `#[repr(C)]` struct
//!   passed by value (rustc lowers it to one `.param .align A .b8 name_param_0[N]`
//!   kernel parameter, the layout the host copies from);
//! * `kernel!` checks at compile time that the entry's parameter type is the
//!   spec's `P` and that the spec's `name` is the entry's name;
//! * on `nvptx64` it also emits a [`SpecRecord`] as an exported static named
//!   [`SPEC_SYMBOL_PREFIX`]`<entry name>`; `baton-build` reads it from the PTX
//!   (a `.global` with an initializer), writes the launch bounds
//!   (`.maxntid`, `.minnctapersm`) onto the entry, checks the parameter size
//!   and removes the record from the PTX it embeds.
//!
//! ```
//! use baton::kernel::{KernelParams, KernelSpec};
//!
//! #[repr(C)]
//! #[derive(Clone, Copy)]
//! pub struct ScaleParams {
//!     pub out: *mut f32,
//!     pub input: *const f32,
//!     pub n: u32,
//!     pub factor: f32,
//! }
//! // SAFETY: `#[repr(C)]`, only raw pointers and plain numbers.
//! unsafe impl KernelParams for ScaleParams {}
//!
//! #[repr(C)]
//! pub struct ScaleSmem {
//!     pub staging: [f32; 256],
//! }
//!
//! pub const SCALE: KernelSpec<ScaleParams> =
//!     KernelSpec::new("scale", 256).with_dynamic_smem::<ScaleSmem>();
//!
//! baton::kernel! {
//!     #[spec(SCALE)]
//!     /// Multiplies `n` floats by `factor`.
//!     pub fn scale(p: ScaleParams) {
//!         let _ = p; // the body runs on the GPU only
//!     }
//! }
//! assert_eq!(SCALE.dynamic_smem_bytes, 1024);
//! ```
//!
//! A mismatch does not compile:
//!
//! ```compile_fail
//! # use baton::kernel::{KernelParams, KernelSpec};
//! # #[repr(C)] #[derive(Clone, Copy)] pub struct A { pub x: u32 }
//! # unsafe impl KernelParams for A {}
//! # #[repr(C)] #[derive(Clone, Copy)] pub struct B { pub x: u64 }
//! # unsafe impl KernelParams for B {}
//! pub const K: KernelSpec<A> = KernelSpec::new("k", 64);
//! baton::kernel! {
//!     #[spec(K)]
//!     pub fn k(p: B) {} // the spec says `A`
//! }
//! ```
//!
//! ```compile_fail
//! # use baton::kernel::{KernelParams, KernelSpec};
//! # #[repr(C)] #[derive(Clone, Copy)] pub struct A { pub x: u32 }
//! # unsafe impl KernelParams for A {}
//! pub const K: KernelSpec<A> = KernelSpec::new("k_old_name", 64);
//! baton::kernel! {
//!     #[spec(K)]
//!     pub fn k(p: A) {} // the spec names another entry
//! }
//! ```

use core::marker::PhantomData;

/// Prefix of the exported static that carries an entry's [`SpecRecord`]
/// into the PTX (`__baton_spec_<entry>`); `baton-build` parses and removes it.
///
/// ```
/// assert_eq!(baton::kernel::SPEC_SYMBOL_PREFIX, "__baton_spec_");
/// ```
pub const SPEC_SYMBOL_PREFIX: &str = "__baton_spec_";

/// A kernel's parameter struct: what the host copies into the launch's
/// parameter buffer and the kernel receives as its one by-value argument.
///
/// # Safety
/// The implementing type must be `#[repr(C)]` (or `#[repr(transparent)]`
/// over such a type) and made only of fields whose layout is identical on the
/// host (64-bit) and on `nvptx64`: raw pointers (`*const T`, `*mut T`, e.g.
/// `*const TensorMap`), integers, floats, `bool`, arrays and `#[repr(C)]`
/// structs of these. No references, no `usize`-sized padding assumptions
/// beyond what `repr(C)` fixes, no `Drop`. The host copies the bytes of the
/// value as they are (padding included) into the launch.
///
/// ```
/// #[repr(C)]
/// #[derive(Clone, Copy)]
/// pub struct CopyParams {
///     pub dst: *mut u32,
///     pub src: *const u32,
///     pub n: u32,
/// }
/// // SAFETY: repr(C), raw pointers and an integer.
/// unsafe impl baton::kernel::KernelParams for CopyParams {}
/// ```
pub unsafe trait KernelParams: Copy + 'static {}

/// The launch geometry and build contract of one kernel entry, for the
/// parameter struct `P`. The host launches from it (block, cluster, dynamic
/// shared memory) and `baton-build` writes its launch bounds into the PTX.
///
/// Blocks are one-dimensional (`threads` along x); a cluster is
/// `cluster[0] × cluster[1] × cluster[2]` blocks and the host launches every
/// grid with it (`[1, 1, 1]`: no cluster attribute).
///
/// ```
/// use baton::kernel::KernelSpec;
/// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u32 }
/// # unsafe impl baton::kernel::KernelParams for P {}
/// #[repr(C)]
/// pub struct Layout { pub a: [u8; 4096] }
/// const SPEC: KernelSpec<P> = KernelSpec::new("gemm", 384)
///     .with_cluster([2, 1, 1])
///     .with_dynamic_smem::<Layout>()
///     .hot();
/// assert_eq!(SPEC.cluster_size(), 2);
/// assert_eq!(SPEC.dynamic_smem_bytes, 4096);
/// assert!(SPEC.hot);
/// ```
pub struct KernelSpec<P> {
    /// The entry's (unmangled) name in the PTX; must equal the function name.
    pub name: &'static str,
    /// Threads per block (x; y = z = 1). Written as `.maxntid threads, 1, 1`.
    pub threads: u32,
    /// Blocks per cluster (x, y, z); `[1, 1, 1]` launches without clusters.
    pub cluster: [u32; 3],
    /// Blocks per SM the kernel is compiled for (`.minnctapersm`; ptxas caps
    /// registers so that this many fit). 0: no `.minnctapersm`.
    pub min_blocks_per_sm: u32,
    /// Bytes of dynamic shared memory each block is launched with; write it
    /// as `size_of` of the kernel's shared layout ([`KernelSpec::with_dynamic_smem`]).
    /// Evaluated for the target being compiled: the device's value reaches
    /// the host through the PTX (`baton-build` records it), and launches use
    /// that one — on the host, layouts holding barrier cells are larger (the
    /// CPU simulation's cells are 16 bytes, the GPU's 8).
    pub dynamic_smem_bytes: u32,
    /// A hot kernel: `baton-build` fails the build when ptxas reports spills
    /// or a stack frame for it in the release variant (the debug variant's
    /// hang reports call `vprintf`, which needs a stack frame).
    pub hot: bool,
    params: PhantomData<fn(P)>,
}

impl<P> Clone for KernelSpec<P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for KernelSpec<P> {}

impl<P> core::fmt::Debug for KernelSpec<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KernelSpec")
            .field("name", &self.name)
            .field("threads", &self.threads)
            .field("cluster", &self.cluster)
            .field("min_blocks_per_sm", &self.min_blocks_per_sm)
            .field("dynamic_smem_bytes", &self.dynamic_smem_bytes)
            .field("hot", &self.hot)
            .finish()
    }
}

impl<P> KernelSpec<P> {
    /// The entry `name` with `threads` threads per block: no cluster, one
    /// block per SM (`.minnctapersm 1`), no dynamic shared memory, not hot.
    /// Panics (at compile time in a `const`) when `threads` is 0 or above 1024.
    ///
    /// ```
    /// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u32 }
    /// # unsafe impl baton::kernel::KernelParams for P {}
    /// const S: baton::kernel::KernelSpec<P> = baton::kernel::KernelSpec::new("k", 64);
    /// assert_eq!((S.threads, S.cluster, S.min_blocks_per_sm), (64, [1, 1, 1], 1));
    /// ```
    pub const fn new(name: &'static str, threads: u32) -> Self {
        assert!(
            threads >= 1 && threads <= 1024,
            "KernelSpec: threads per block must be in 1..=1024"
        );
        assert!(!name.is_empty(), "KernelSpec: the entry name is empty");
        Self {
            name,
            threads,
            cluster: [1, 1, 1],
            min_blocks_per_sm: 1,
            dynamic_smem_bytes: 0,
            hot: false,
            params: PhantomData,
        }
    }

    /// Launches in clusters of `cluster` blocks (every dimension >= 1, at
    /// most 16 blocks in all).
    ///
    /// ```
    /// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u32 }
    /// # unsafe impl baton::kernel::KernelParams for P {}
    /// const S: baton::kernel::KernelSpec<P> = baton::kernel::KernelSpec::new("k", 64).with_cluster([2, 1, 1]);
    /// assert_eq!(S.cluster_size(), 2);
    /// ```
    pub const fn with_cluster(mut self, cluster: [u32; 3]) -> Self {
        assert!(
            cluster[0] >= 1 && cluster[1] >= 1 && cluster[2] >= 1,
            "KernelSpec: every cluster dimension must be at least 1"
        );
        assert!(
            cluster[0] * cluster[1] * cluster[2] <= 16,
            "KernelSpec: a cluster holds at most 16 blocks"
        );
        self.cluster = cluster;
        self
    }

    /// Compiles for `n` resident blocks per SM (`.minnctapersm n`; 0 leaves
    /// it out).
    ///
    /// ```
    /// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u32 }
    /// # unsafe impl baton::kernel::KernelParams for P {}
    /// const S: baton::kernel::KernelSpec<P> = baton::kernel::KernelSpec::new("k", 64).with_min_blocks_per_sm(2);
    /// assert_eq!(S.min_blocks_per_sm, 2);
    /// ```
    pub const fn with_min_blocks_per_sm(mut self, n: u32) -> Self {
        self.min_blocks_per_sm = n;
        self
    }

    /// Dynamic shared memory of `size_of::<Layout>()` bytes: the kernel's
    /// shared layout is the one source of the byte count.
    ///
    /// ```
    /// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u32 }
    /// # unsafe impl baton::kernel::KernelParams for P {}
    /// #[repr(C)]
    /// struct Layout { ring: [[u8; 1024]; 3] }
    /// const S: baton::kernel::KernelSpec<P> = baton::kernel::KernelSpec::new("k", 64).with_dynamic_smem::<Layout>();
    /// assert_eq!(S.dynamic_smem_bytes, 3072);
    /// ```
    pub const fn with_dynamic_smem<Layout>(self) -> Self {
        self.with_dynamic_smem_bytes(core::mem::size_of::<Layout>())
    }

    /// Dynamic shared memory of `bytes` bytes (prefer
    /// [`KernelSpec::with_dynamic_smem`]). Panics above `u32::MAX`.
    ///
    /// ```
    /// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u32 }
    /// # unsafe impl baton::kernel::KernelParams for P {}
    /// const S: baton::kernel::KernelSpec<P> = baton::kernel::KernelSpec::new("k", 64).with_dynamic_smem_bytes(512);
    /// assert_eq!(S.dynamic_smem_bytes, 512);
    /// ```
    pub const fn with_dynamic_smem_bytes(mut self, bytes: usize) -> Self {
        assert!(
            bytes <= u32::MAX as usize,
            "KernelSpec: dynamic shared memory above u32::MAX bytes"
        );
        self.dynamic_smem_bytes = bytes as u32;
        self
    }

    /// Marks the kernel hot: the build fails when ptxas reports spills or a
    /// stack frame for it.
    ///
    /// ```
    /// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u32 }
    /// # unsafe impl baton::kernel::KernelParams for P {}
    /// const S: baton::kernel::KernelSpec<P> = baton::kernel::KernelSpec::new("k", 64).hot();
    /// assert!(S.hot);
    /// ```
    pub const fn hot(mut self) -> Self {
        self.hot = true;
        self
    }

    /// The same spec under another entry name (for several entries of one
    /// geometry, e.g. a kernel and its reference twin).
    ///
    /// ```
    /// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u32 }
    /// # unsafe impl baton::kernel::KernelParams for P {}
    /// const A: baton::kernel::KernelSpec<P> = baton::kernel::KernelSpec::new("a", 64);
    /// const B: baton::kernel::KernelSpec<P> = A.renamed("b");
    /// assert_eq!((B.name, B.threads), ("b", 64));
    /// ```
    pub const fn renamed(mut self, name: &'static str) -> Self {
        assert!(!name.is_empty(), "KernelSpec: the entry name is empty");
        self.name = name;
        self
    }

    /// Blocks per cluster (1 without clusters).
    ///
    /// ```
    /// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u32 }
    /// # unsafe impl baton::kernel::KernelParams for P {}
    /// assert_eq!(baton::kernel::KernelSpec::<P>::new("k", 64).cluster_size(), 1);
    /// ```
    pub const fn cluster_size(&self) -> u32 {
        self.cluster[0] * self.cluster[1] * self.cluster[2]
    }
}

/// What `kernel!` exports to the build for one entry: the spec's numbers,
/// `#[repr(C)]` so `baton-build` reads it from the PTX initializer bytes
/// (little-endian `u32`s, in field order).
///
/// ```
/// use baton::kernel::{KernelSpec, SpecRecord};
/// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u64 }
/// # unsafe impl baton::kernel::KernelParams for P {}
/// const S: KernelSpec<P> = KernelSpec::new("k", 128).hot();
/// let r = SpecRecord::of(&S);
/// assert_eq!((r.magic, r.threads, r.flags, r.param_bytes), (SpecRecord::MAGIC, 128, SpecRecord::FLAG_HOT, 8));
/// assert_eq!(core::mem::size_of::<SpecRecord>(), SpecRecord::BYTES);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecRecord {
    /// [`SpecRecord::MAGIC`].
    pub magic: u32,
    /// [`SpecRecord::VERSION`] of this layout.
    pub version: u32,
    /// [`KernelSpec::threads`].
    pub threads: u32,
    /// [`KernelSpec::cluster`].
    pub cluster: [u32; 3],
    /// [`KernelSpec::min_blocks_per_sm`].
    pub min_blocks_per_sm: u32,
    /// [`KernelSpec::dynamic_smem_bytes`].
    pub dynamic_smem_bytes: u32,
    /// [`SpecRecord::FLAG_HOT`] when [`KernelSpec::hot`].
    pub flags: u32,
    /// `size_of::<P>()`: checked against the entry's `.param` array.
    pub param_bytes: u32,
}

impl SpecRecord {
    /// `"BATN"` as a little-endian `u32`.
    pub const MAGIC: u32 = u32::from_le_bytes(*b"BATN");
    /// The layout version `baton-build` understands.
    pub const VERSION: u32 = 1;
    /// The record's size in bytes.
    pub const BYTES: usize = 40;
    /// [`SpecRecord::flags`] bit: the kernel is hot.
    pub const FLAG_HOT: u32 = 1;

    /// The record of `spec`.
    ///
    /// ```
    /// # #[repr(C)] #[derive(Clone, Copy)] pub struct P { pub x: u32 }
    /// # unsafe impl baton::kernel::KernelParams for P {}
    /// let r = baton::kernel::SpecRecord::of(&baton::kernel::KernelSpec::<P>::new("k", 32));
    /// assert_eq!(r.param_bytes, 4);
    /// ```
    pub const fn of<P: KernelParams>(spec: &KernelSpec<P>) -> SpecRecord {
        let param_bytes = core::mem::size_of::<P>();
        assert!(
            param_bytes > 0,
            "KernelParams: the parameter struct is empty"
        );
        SpecRecord {
            magic: Self::MAGIC,
            version: Self::VERSION,
            threads: spec.threads,
            cluster: spec.cluster,
            min_blocks_per_sm: spec.min_blocks_per_sm,
            dynamic_smem_bytes: spec.dynamic_smem_bytes,
            flags: if spec.hot { Self::FLAG_HOT } else { 0 },
            param_bytes: param_bytes as u32,
        }
    }
}

const _: () = assert!(core::mem::size_of::<SpecRecord>() == SpecRecord::BYTES);

/// `a == b` in a `const` context (what `kernel!` checks the entry name with).
///
/// ```
/// assert!(baton::kernel::str_eq("a", "a"));
/// assert!(!baton::kernel::str_eq("a", "ab"));
/// ```
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Declares a kernel entry point checked against its [`KernelSpec`]:
///
/// ```text
/// baton::kernel! {
///     #[spec(path::TO::SPEC)]
///     /// docs, other attributes
///     pub fn entry_name(p: Params) { body }
/// }
/// ```
///
/// expands, on `nvptx64`, to
/// `#[unsafe(no_mangle)] pub unsafe extern "ptx-kernel" fn entry_name(p: Params)`
/// (the crate needs `#![feature(abi_ptx)]` there) plus the exported
/// [`SpecRecord`] `__baton_spec_entry_name`; on every target to compile-time
/// checks that `SPEC` is a `KernelSpec<Params>`, that `Params: KernelParams`
/// and that `SPEC.name == "entry_name"`. On the host the entry itself is left
/// out, so a kernel crate also builds as a host library that exports its
/// specs and parameter structs. The body is an `unsafe fn` body: wrap unsafe
/// operations in `unsafe { }` with a `// SAFETY:` comment.
///
/// ```
/// # use baton::kernel::{KernelParams, KernelSpec};
/// #[repr(C)]
/// #[derive(Clone, Copy)]
/// pub struct FillParams { pub out: *mut u32, pub value: u32 }
/// // SAFETY: repr(C) of a raw pointer and an integer.
/// unsafe impl KernelParams for FillParams {}
/// pub const FILL: KernelSpec<FillParams> = KernelSpec::new("fill", 32);
///
/// baton::kernel! {
///     #[spec(FILL)]
///     pub fn fill(p: FillParams) {
///         let _ = p;
///     }
/// }
/// ```
#[macro_export]
macro_rules! kernel {
    (
        #[spec($spec:path)]
        $(#[$attr:meta])*
        $vis:vis fn $name:ident ($p:ident : $params:ty) $body:block
    ) => {
        $(#[$attr])*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        $vis unsafe extern "ptx-kernel" fn $name($p: $params) $body

        const _: () = {
            // The entry's parameter type is the spec's `P` (a type error otherwise).
            const SPEC: &$crate::kernel::KernelSpec<$params> = &$spec;
            assert!(
                $crate::kernel::str_eq(SPEC.name, ::core::stringify!($name)),
                ::core::concat!(
                    "kernel!: the spec's `name` differs from the entry name `",
                    ::core::stringify!($name),
                    "`"
                )
            );
            #[cfg(target_arch = "nvptx64")]
            #[used]
            #[unsafe(export_name = ::core::concat!("__baton_spec_", ::core::stringify!($name)))]
            static RECORD: $crate::kernel::SpecRecord = $crate::kernel::SpecRecord::of(SPEC);
            #[cfg(not(target_arch = "nvptx64"))]
            let _ = $crate::kernel::SpecRecord::of(SPEC);
        };
    };
}

/// The generic address of a kernel entry's parameter struct, in the kernel
/// parameter space where the driver placed it: what CUDA C++ gets from a
/// `__grid_constant__` parameter. Use it inside the entry `entry_name`
/// (declared with [`kernel!`](crate::kernel!)) to point TMA at a tensor map
/// passed by value in the parameters (`.param .align 64 .b8
/// entry_name_param_0[N]`) without the copy to local memory that taking
/// the address of the Rust value would make:
///
/// ```text
/// mov.b64        %rd, entry_name_param_0;   // the param-space address
/// cvta.param.u64 %rd, %rd;                  // to a generic address (PTX ISA 7.7+)
/// ```
///
/// Evaluates to a `*const u8` (add `core::mem::offset_of!(Params, field)`
/// for a field). Only on `nvptx64`, only inside that entry (PTX names the
/// parameter `entry_name_param_0` in its own scope). The memory is
/// read-only and lives for the whole launch. The kernel crate needs
/// `#![feature(asm_experimental_arch)]` (the asm expands in it).
///
/// ```ignore
/// baton::kernel! {
///     #[spec(COPY)]
///     pub fn copy(p: CopyParams) {
///         let params = baton::entry_param_address!(copy);
///         let map = params.add(core::mem::offset_of!(CopyParams, map)) as *const TensorMap;
///     }
/// }
/// ```
#[macro_export]
macro_rules! entry_param_address {
    ($entry:ident) => {{
        let address: u64;
        // SAFETY: reads the address of the entry's own parameter symbol (no
        // memory access); `cvta.param` is defined for kernel parameters.
        unsafe {
            ::core::arch::asm!(
                ::core::concat!("mov.b64 {a}, ", ::core::stringify!($entry), "_param_0;"),
                "cvta.param.u64 {a}, {a};",
                a = out(reg64) address,
                // Not `pure`: each use computes it again where it stands
                // (two instructions), instead of a value held in registers
                // across the kernel.
                options(nomem, nostack, preserves_flags),
            );
        }
        address as *const u8
    }};
}
