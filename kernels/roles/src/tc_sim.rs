//! CPU simulation of the `tcgen05` operations the sm_100a roles use, with
//! the names and signatures of `baton::arch::sm100` (so a role compiles
//! against either): tensor memory per simulated CTA, `kind::f16` MMA that
//! reads its operands from the CTA's shared memory **through the real
//! descriptor encodings**, `commit`, `tcgen05.ld`, and the fences.
//!
//! * Shared-memory addresses: a CPU CTA's "shared window" address is the
//!   byte offset from the start of its shared-memory struct (as a GPU
//!   shared address is an offset into the CTA's window); [`smem_offset`]
//!   turns a host reference into one, the MMA turns it back. The struct is
//!   1024-byte aligned (its tiles are), so swizzle patterns computed on
//!   offsets are the hardware's.
//! * TMEM: 128 lanes × 512 columns of 32-bit cells per CTA, allocated by
//!   power-of-two column counts; leaks, double frees and overflows panic.
//! * An MMA runs when issued (synchronously); `commit` then arrives once on
//!   its barrier — the completion the GPU signals asynchronously.
//! * `ld_32x32b_xN(addr)` returns row `addr.lane()`'s N columns from
//!   `addr.column()`: what lane `addr.lane() % 32` of the warp gets on the
//!   GPU (roles add the lane via `WarpCtx::tmem_row`).
//!
//! The context (which CTA's TMEM and shared memory) is per thread, set by
//! [`crate::ctx::run_cta`] for every warp thread of the CTA.

use baton::arch::cpu::BarrierRef;
use baton::arch::tcgen05_desc::{InstrDescriptor, SmemDescriptor};
use baton::arch::tmem_addr::{TMEM_COLUMNS, TMEM_LANES, TmemAddr};
use baton::smem::SharedRef;
use baton::tensor_map::Swizzle;
use std::cell::Cell;
use std::sync::Mutex;

/// One simulated CTA's tensor memory and shared-memory window.
pub struct CtaSim {
    smem_base: usize,
    smem_len: usize,
    tmem: Mutex<Tmem>,
}

struct Tmem {
    cells: Vec<u32>,
    /// Allocated column ranges `(first, count)`.
    allocs: Vec<(u32, u32)>,
}

impl CtaSim {
    /// A CTA whose shared memory is the `len` bytes at host address `base`.
    pub fn new(base: usize, len: usize) -> Self {
        Self {
            smem_base: base,
            smem_len: len,
            tmem: Mutex::new(Tmem {
                cells: vec![0; (TMEM_LANES * TMEM_COLUMNS) as usize],
                allocs: Vec::new(),
            }),
        }
    }

    /// Panics if TMEM columns are still allocated (a CTA must free all its
    /// columns before it exits).
    pub fn check_exit(&self) {
        let t = self.tmem.lock().unwrap();
        assert!(
            t.allocs.is_empty(),
            "CTA exits with TMEM columns still allocated: {:?}",
            t.allocs
        );
    }
}

thread_local! {
    static CTA: Cell<*const CtaSim> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with `cta` as this thread's simulated CTA.
pub fn with_cta<R>(cta: &CtaSim, f: impl FnOnce() -> R) -> R {
    let prev = CTA.with(|c| c.replace(cta as *const CtaSim));
    let r = f();
    CTA.with(|c| c.set(prev));
    r
}

fn cta<R>(f: impl FnOnce(&CtaSim) -> R) -> R {
    let p = CTA.with(|c| c.get());
    assert!(
        !p.is_null(),
        "tcgen05 simulation used outside a simulated CTA (run roles with ctx::run_cta)"
    );
    // SAFETY: set by `with_cta` for the duration of the CTA's run, which
    // outlives every call made inside it.
    f(unsafe { &*p })
}

/// The shared-window address (offset from the CTA's shared memory) of `r`.
pub fn smem_offset<T>(r: SharedRef<'_, T>) -> u32 {
    cta(|c| {
        let a = r.addr();
        assert!(
            a >= c.smem_base && a < c.smem_base + c.smem_len,
            "address outside the CTA's shared memory"
        );
        (a - c.smem_base) as u32
    })
}

/// `tcgen05.fence::before_thread_sync` (no-op: the simulation is sequentially consistent per operation).
pub fn fence_before_thread_sync() {}

/// `tcgen05.fence::after_thread_sync` (no-op).
pub fn fence_after_thread_sync() {}

/// Tensor memory.
pub mod tmem {
    use super::*;

    /// Allocates `COLS` columns and writes their address to the word at
    /// `dst` (a shared-memory `u32` given as its shared-window address,
    /// see [`smem_offset`]).
    ///
    /// # Safety
    /// `dst` is a 4-byte word of the CTA's shared memory no one else
    /// accesses until the barrier that publishes it.
    pub unsafe fn alloc_at<const COLS: u32>(dst: u32) {
        assert!(
            (32..=TMEM_COLUMNS).contains(&COLS) && COLS.is_power_of_two(),
            "TMEM allocations are a power of two of columns in 32..=512"
        );
        cta(|c| {
            let mut t = c.tmem.lock().unwrap();
            // First fit at a multiple of COLS.
            let first = (0..TMEM_COLUMNS / COLS)
                .map(|i| i * COLS)
                .find(|&s| t.allocs.iter().all(|&(a, n)| s + COLS <= a || a + n <= s))
                .unwrap_or_else(|| {
                    panic!("TMEM full: {COLS} columns requested, held {:?}", t.allocs)
                });
            t.allocs.push((first, COLS));
            assert!(dst as usize + 4 <= c.smem_len);
            // SAFETY: in bounds of the CTA's shared memory (checked); the
            // caller guarantees exclusive access.
            unsafe { ((c.smem_base + dst as usize) as *mut u32).write_unaligned(first) };
        });
    }

    /// `tcgen05.relinquish_alloc_permit` (no-op).
    ///
    /// # Safety
    /// None beyond the GPU form's contract.
    pub unsafe fn relinquish_alloc_permit() {}

    /// Frees the `COLS` columns at `addr`.
    ///
    /// # Safety
    /// None on the CPU (misuse panics).
    pub unsafe fn dealloc<const COLS: u32>(addr: TmemAddr) {
        cta(|c| {
            let mut t = c.tmem.lock().unwrap();
            let i = t
                .allocs
                .iter()
                .position(|&a| a == (addr.column(), COLS))
                .unwrap_or_else(|| {
                    panic!(
                        "TMEM dealloc of {COLS} columns at {} that are not allocated (held {:?})",
                        addr.column(),
                        t.allocs
                    )
                });
            t.allocs.swap_remove(i);
        });
    }

    /// Row `addr.lane()`, columns `addr.column()..+32`.
    ///
    /// # Safety
    /// None on the CPU (out-of-range addresses panic).
    pub unsafe fn ld_32x32b_x32(addr: TmemAddr) -> [u32; 32] {
        cta(|c| {
            let t = c.tmem.lock().unwrap();
            let (lane, col) = (addr.lane(), addr.column());
            assert!(
                lane < TMEM_LANES && col + 32 <= TMEM_COLUMNS,
                "TMEM load out of range"
            );
            check_allocated(&t, col, 32);
            let at = (lane * TMEM_COLUMNS + col) as usize;
            t.cells[at..at + 32].try_into().unwrap()
        })
    }

    /// `tcgen05.wait::ld` (no-op: loads complete when they return).
    pub fn wait_ld() {}

    pub(super) fn check_allocated(t: &Tmem, col: u32, n: u32) {
        assert!(
            t.allocs.iter().any(|&(a, m)| a <= col && col + n <= a + m),
            "TMEM columns {col}..{} are not allocated (held {:?})",
            col + n,
            t.allocs
        );
    }
}

/// `tcgen05.mma` and `tcgen05.commit`.
pub mod mma {
    use super::*;

    /// Element `(row, k)` (bf16/f16 bits) of a K-major operand described by
    /// `desc`, in the CTA's shared memory.
    fn operand(c: &CtaSim, desc: SmemDescriptor, row: u32, k: u32) -> u16 {
        let start = ((desc.0 & 0x3FFF) << 4) as usize;
        let lead = (((desc.0 >> 16) & 0x3FFF) << 4) as usize;
        let stride = (((desc.0 >> 32) & 0x3FFF) << 4) as usize;
        let layout = desc.0 >> 61;
        let (r, k) = (row as usize, k as usize);
        let off = match layout {
            // No swizzle: 8 × 16-byte core matrices; `lead` between core
            // matrices adjacent in K, `stride` between 8-row groups.
            0 => start + (r / 8) * stride + (k / 8) * lead + (r % 8) * 16 + (k % 8) * 2,
            // 128-byte swizzle: 8 rows of 128 bytes per atom, atoms
            // `stride` apart; the swizzle XORs address bits [4, 7) with
            // [7, 10).
            2 => Swizzle::B128.apply(start + (r / 8) * stride + (r % 8) * 128 + k * 2),
            4 => Swizzle::B64.apply(start + (r / 8) * stride + (r % 8) * 64 + k * 2),
            6 => Swizzle::B32.apply(start + (r / 8) * stride + (r % 8) * 32 + k * 2),
            other => panic!("shared-memory descriptor layout {other} is not simulated"),
        };
        assert!(off + 2 <= c.smem_len, "MMA operand outside shared memory");
        // SAFETY: in bounds (checked); the operand's stage is loaded and not
        // written while the MMA runs (pipeline protocol).
        unsafe { ((c.smem_base + off) as *const u16).read_unaligned() }
    }

    fn to_f32(bits: u16, bf16: bool) -> f32 {
        if bf16 {
            f32::from_bits((bits as u32) << 16)
        } else {
            // IEEE half → f32.
            let s = ((bits >> 15) as u32) << 31;
            let e = ((bits >> 10) & 0x1F) as i32;
            let m = (bits & 0x3FF) as u32;
            let v = match e {
                0 => (m as f32) * 2f32.powi(-24),
                31 => {
                    if m == 0 {
                        f32::INFINITY
                    } else {
                        f32::NAN
                    }
                }
                _ => (1.0 + m as f32 / 1024.0) * 2f32.powi(e - 15),
            };
            f32::from_bits(v.to_bits() | s)
        }
    }

    /// `D (+)= A·Bᵀ` for an `M × N × 16` `kind::f16` MMA with f32
    /// accumulators: A `M × 16` and B `N × 16`, K-major, in shared memory.
    ///
    /// # Safety
    /// As the GPU form; on the CPU misuse panics.
    pub unsafe fn mma_f16_ss(
        d: TmemAddr,
        a: SmemDescriptor,
        b: SmemDescriptor,
        idesc: InstrDescriptor,
        accumulate: bool,
    ) {
        let i = idesc.0;
        assert_eq!(
            (i >> 4) & 3,
            1,
            "simulated kind::f16 MMAs accumulate in f32"
        );
        let (a_bf16, b_bf16) = ((i >> 7) & 7 == 1, (i >> 10) & 7 == 1);
        assert!((i >> 15) & 3 == 0, "simulated MMAs take K-major operands");
        let n = ((i >> 17) & 0x3F) << 3;
        let m = ((i >> 24) & 0x1F) << 4;
        assert!(m == 128, "simulated cta_group::1 MMAs have M = 128");
        cta(|c| {
            let av: Vec<f32> = (0..m * 16)
                .map(|x| to_f32(operand(c, a, x / 16, x % 16), a_bf16))
                .collect();
            let bv: Vec<f32> = (0..n * 16)
                .map(|x| to_f32(operand(c, b, x / 16, x % 16), b_bf16))
                .collect();
            let mut t = c.tmem.lock().unwrap();
            tmem::check_allocated(&t, d.column(), n);
            assert_eq!(d.lane(), 0, "an M = 128 accumulator starts at lane 0");
            for row in 0..m {
                for col in 0..n {
                    let at = (row * TMEM_COLUMNS + d.column() + col) as usize;
                    let mut acc = if accumulate {
                        f32::from_bits(t.cells[at])
                    } else {
                        0.0
                    };
                    for k in 0..16 {
                        acc = av[(row * 16 + k) as usize].mul_add(bv[(col * 16 + k) as usize], acc);
                    }
                    t.cells[at] = acc.to_bits();
                }
            }
        });
    }

    /// One arrival on `bar` once the MMAs issued before are done (at once:
    /// they ran when issued).
    ///
    /// # Safety
    /// As the GPU form (one thread; the barrier counts one arrival for it).
    pub unsafe fn commit(bar: BarrierRef<'_>) {
        baton::arch::cpu::elect_one(|| bar.arrive());
    }
}
