//! A GEMM launch's timeline trace: the layout, one source for the kernels
//! that write it ([`stamp`], a no-op unless the kernels are built with
//! their `trace` feature: `BATON_TRACE=1` when `baton-runtime` builds them)
//! and the host that reads it (`baton_runtime::trace`, `baton trace gemm`).
//!
//! The traced module holds one global array, [`SYMBOL`], of
//! [`MAX_CTAS`] × [`EVENTS`] records of two `u64`: `%globaltimer` (ns, the
//! same clock on every SM) and `%clock64` (this SM's cycles). Record
//! `cta · EVENTS + event` is CTA `cta`'s [`Event`]; a record whose timer is
//! 0 was not reached. The host zeroes the array before the traced launch;
//! CTAs from [`MAX_CTAS`] on are not recorded.
//!
//! ```
//! use baton_kernel_roles::trace::{Event, EVENTS, record_index};
//! assert_eq!(record_index(2, Event::Synced), 2 * EVENTS + 1);
//! assert_eq!(Event::ALL.len(), EVENTS);
//! ```

/// The traced module's global array.
pub const SYMBOL: &str = "BATON_TRACE";
/// CTAs recorded (launch-order index `blockIdx.x`; more are not recorded).
pub const MAX_CTAS: usize = 1024;
/// Events per CTA.
pub const EVENTS: usize = 10;
/// `u64`s per record: `%globaltimer`, `%clock64`.
pub const WORDS_PER_RECORD: usize = 2;
/// `u64`s of the whole array.
pub const WORDS: usize = MAX_CTAS * EVENTS * WORDS_PER_RECORD;

/// A point in a GEMM CTA's life, and which thread records it.
///
/// ```
/// use baton_kernel_roles::trace::Event;
/// assert_eq!(Event::Exit.name(), "exit");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Event {
    /// Thread 0 enters the kernel (before barrier initialization).
    Entry = 0,
    /// Thread 0 leaves the CTA's (or cluster's) setup barrier.
    Synced = 1,
    /// The producer lane starts its role.
    ProducerStart = 2,
    /// The producer lane issued its last stage's loads.
    LastLoadIssued = 3,
    /// The producer lane finished (after draining the ring).
    ProducerDone = 4,
    /// Consumer warpgroup 0's thread 0 found its first stage full (the
    /// BF16 main loops only: in the FP8 ones, and in the producer's loop,
    /// a stamp costs spills under their register limits).
    FirstFull = 5,
    /// Consumer warpgroup 0's last main loop retired its MMAs (BF16 only,
    /// as [`FirstFull`](Self::FirstFull)).
    LastMainloopDone = 6,
    /// Consumer warpgroup 0 issued its last epilogue store.
    LastStoreIssued = 7,
    /// Consumer warpgroup 0 waited for its stores and leaves.
    Exit = 8,
    /// `%smid` of the CTA in the timer word (clock word 1 when written),
    /// written by thread 0 at entry ([`stamp_sm_id`]).
    SmId = 9,
}

impl Event {
    /// Every event, in index order.
    pub const ALL: [Event; EVENTS] = [
        Event::Entry,
        Event::Synced,
        Event::ProducerStart,
        Event::LastLoadIssued,
        Event::ProducerDone,
        Event::FirstFull,
        Event::LastMainloopDone,
        Event::LastStoreIssued,
        Event::Exit,
        Event::SmId,
    ];

    /// A short name for tables.
    ///
    /// ```
    /// assert_eq!(baton_kernel_roles::trace::Event::FirstFull.name(), "first full");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Event::Entry => "entry",
            Event::Synced => "synced",
            Event::ProducerStart => "producer start",
            Event::LastLoadIssued => "last load issued",
            Event::ProducerDone => "producer done",
            Event::FirstFull => "first full",
            Event::LastMainloopDone => "last mainloop done",
            Event::LastStoreIssued => "last store issued",
            Event::Exit => "exit",
            Event::SmId => "sm id",
        }
    }
}

/// The record index of CTA `cta`'s `event` (multiply by
/// [`WORDS_PER_RECORD`] for the `u64` offset).
///
/// ```
/// use baton_kernel_roles::trace::{Event, record_index};
/// assert_eq!(record_index(0, Event::Exit), 8);
/// ```
pub const fn record_index(cta: usize, event: Event) -> usize {
    cta * EVENTS + event as usize
}

/// The traced module's array (`.global` in the PTX, found by the host
/// through [`SYMBOL`]); written only by [`stamp`] and [`stamp_sm_id`].
#[cfg(all(target_arch = "nvptx64", feature = "trace"))]
#[unsafe(no_mangle)]
pub static mut BATON_TRACE: [u64; WORDS] = [0; WORDS];

/// Records `event` for this CTA: `%globaltimer` and `%clock64`. With
/// `first`, only if the record is still empty (the host zeroes the array
/// before the launch), so a per-tile call site keeps its first tile's time;
/// without, the last call wins. Call it from one thread per event (the
/// [`Event`]'s doc says which). Compiles to nothing without the `trace`
/// feature, and on the host.
///
/// ```
/// use baton_kernel_roles::trace::{Event, stamp};
/// stamp(Event::Entry, false); // a no-op on the host
/// ```
#[inline(always)]
pub fn stamp(event: Event, first: bool) {
    #[cfg(all(target_arch = "nvptx64", feature = "trace"))]
    {
        use baton::arch::ptx::{clock_cycles, global_timer_ns};
        let (cta, p) = record_address(event);
        if cta < MAX_CTAS as u32 {
            // SAFETY: `p` is this CTA's record (cta < MAX_CTAS), 16-byte
            // aligned; each record has one writer (one thread per event
            // and CTA); volatile, so the stores stay where the event is.
            unsafe {
                if !first || p.read_volatile() == 0 {
                    let (t, c) = (global_timer_ns(), clock_cycles());
                    p.write_volatile(t);
                    p.add(1).write_volatile(c);
                }
            }
        }
    }
    #[cfg(not(all(target_arch = "nvptx64", feature = "trace")))]
    let _ = (event, first);
}

/// `blockIdx.x` and the address of its `event` record, read where the
/// stamp is (asm without `pure`): as plain values LLVM hoists them to the
/// kernel's start, and the 64-bit address then lives through the main loop
/// (spills in the kernels at their register limit).
#[cfg(all(target_arch = "nvptx64", feature = "trace"))]
#[inline(always)]
fn record_address(event: Event) -> (u32, *mut u64) {
    use core::arch::asm;
    let cta: u32;
    let base: u64;
    // SAFETY: reads a special register and a symbol's address; no memory
    // is accessed.
    unsafe {
        asm!("mov.u32 {c}, %ctaid.x;", c = out(reg32) cta, options(nomem, nostack));
        asm!("mov.u64 {b}, BATON_TRACE;", b = out(reg64) base, options(nomem, nostack));
    }
    let i = record_index(cta as usize, event) * WORDS_PER_RECORD;
    // `BATON_TRACE`'s address is a .global one; generic = global on sm_90.
    let _ = core::ptr::addr_of!(BATON_TRACE);
    (cta, (base as *mut u64).wrapping_add(i))
}

/// [`stamp`] by consumer warpgroup 0's thread 0 (thread 128 of a Hopper
/// GEMM CTA) only; every other thread passes.
///
/// ```
/// baton_kernel_roles::trace::stamp_consumer0(baton_kernel_roles::trace::Event::Exit, false);
/// ```
#[inline(always)]
pub fn stamp_consumer0(event: Event, first: bool) {
    #[cfg(all(target_arch = "nvptx64", feature = "trace"))]
    if baton::arch::ptx::thread_idx_x() == 128 {
        stamp(event, first);
    }
    #[cfg(not(all(target_arch = "nvptx64", feature = "trace")))]
    let _ = (event, first);
}

/// Records this CTA's `%smid` in its [`Event::SmId`] record (timer word;
/// clock word 1 marks it present). A no-op without the `trace` feature.
///
/// ```
/// baton_kernel_roles::trace::stamp_sm_id(); // a no-op on the host
/// ```
#[inline(always)]
pub fn stamp_sm_id() {
    #[cfg(all(target_arch = "nvptx64", feature = "trace"))]
    {
        let (cta, p) = record_address(Event::SmId);
        if cta < MAX_CTAS as u32 {
            // SAFETY: as in `stamp`; thread 0 alone writes this record.
            unsafe {
                p.write_volatile(baton::arch::ptx::sm_id() as u64);
                p.add(1).write_volatile(1);
            }
        }
    }
}
