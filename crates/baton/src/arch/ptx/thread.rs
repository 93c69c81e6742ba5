//! Thread, warp, block and cluster identity, and block/cluster barriers.

use core::arch::asm;

macro_rules! special_reg {
    ($(#[$doc:meta])* $name:ident, $reg:literal) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> u32 {
            let r: u32;
            // SAFETY: reads a special register; no memory effects.
            unsafe { asm!(concat!("mov.u32 {r}, ", $reg, ";"), r = out(reg32) r, options(pure, nomem, nostack)) };
            r
        }
    };
}

special_reg!(/// `threadIdx.x`.
    thread_idx_x, "%tid.x");
special_reg!(/// `blockIdx.x`.
    block_idx_x, "%ctaid.x");
special_reg!(/// `blockIdx.y`.
    block_idx_y, "%ctaid.y");
special_reg!(/// `gridDim.x`.
    grid_dim_x, "%nctaid.x");
special_reg!(/// `blockDim.x`.
    block_dim_x, "%ntid.x");
special_reg!(/// Lane of this thread in its warp (0..32).
    lane_id, "%laneid");
special_reg!(/// Rank of this CTA in its cluster.
    cluster_cta_rank, "%cluster_ctarank");
special_reg!(/// Number of CTAs in the cluster.
    cluster_size, "%cluster_nctarank");
special_reg!(/// The SM this thread runs on (`%smid`; for traces, not for indexing:
    /// not guaranteed contiguous).
    sm_id, "%smid");

/// Warp index in the block (`threadIdx.x / 32`); uniform across the warp.
#[inline(always)]
pub fn warp_idx() -> u32 {
    thread_idx_x() / 32
}

/// `x` of lane 0 in every lane (`shfl.sync.idx.b32 … 0, 0x1f, ~0`): for a
/// value that is already the same in all 32 lanes (a warp or warpgroup
/// index, say) this changes nothing but what ptxas can prove. Its result is
/// warp-uniform by construction, so ptxas may keep it and what is derived
/// from it (e.g. `wgmma` descriptors) in uniform registers and compute
/// them on the uniform datapath, instead of in per-thread registers copied
/// over with one `R2UR` per 32-bit half before each `wgmma` (what
/// DeepGEMM's `__shfl_sync(0xffffffff, threadIdx.x / 128, 0)` is for). All
/// 32 lanes must execute it (converged).
///
/// ```ignore
/// let wg = warp_uniform(thread_idx_x() / 128);
/// ```
#[inline(always)]
pub fn warp_uniform(x: u32) -> u32 {
    let r: u32;
    // SAFETY: warp-collective with full mask; callers run converged warps.
    unsafe {
        asm!(
            "shfl.sync.idx.b32 {r}, {x}, 0, 0x1f, 0xffffffff;",
            r = out(reg32) r,
            x = in(reg32) x,
            options(nomem, nostack)
        )
    };
    r
}

/// `x`, through a register move LLVM cannot see through, merge or move
/// (an `asm` block with side effects, not `pure`): what is computed from
/// the result stays where the call is, instead of being hoisted out of a
/// loop and kept live in registers across it (the persistent tile loops'
/// per-tile values, the pinned stage descriptors of the FP8 K loop, which
/// spilled without it). ptxas sees a plain `mov` and propagates it: the
/// SASS pays nothing.
///
/// ```ignore
/// let lane = opaque(tid) % 32; // derived here, not kept from before the loop
/// ```
#[inline(always)]
pub fn opaque(x: u32) -> u32 {
    let r: u32;
    // SAFETY: a register move (no memory, no state).
    unsafe {
        asm!("mov.b32 {r}, {x};", r = out(reg32) r, x = in(reg32) x, options(nomem, nostack))
    };
    r
}

/// `elect.sync` over the full warp: true in exactly one lane of the warp.
/// All 32 lanes must execute it (converged).
#[inline(always)]
pub fn elect_one() -> bool {
    let r: u32;
    // SAFETY: warp-collective with full mask; callers run converged warps.
    unsafe {
        asm!(
            "{{ .reg .pred p; elect.sync _|p, 0xffffffff; selp.u32 {r}, 1, 0, p; }}",
            r = out(reg32) r,
            options(nostack)
        )
    };
    r != 0
}

/// `bar.sync 0`: every thread of the block waits here; orders shared memory.
#[inline(always)]
pub fn sync_threads() {
    // SAFETY: block-wide barrier; all threads of the block must reach it.
    // Non-`.aligned` form: Rust inline asm is not `convergent`, so LLVM may
    // duplicate this block into both arms of a branch; `barrier.sync` (unlike
    // `bar.sync` = `barrier.sync.aligned`) stays correct when the threads of a
    // warp reach it through different instructions.
    unsafe { asm!("barrier.sync 0;", options(nostack)) };
}

/// Named barrier `id` (1..16) over `threads` threads (a multiple of 32).
#[inline(always)]
pub fn named_barrier_sync(id: u32, threads: u32) {
    // SAFETY: exactly `threads` threads must reach barrier `id`.
    unsafe {
        asm!("barrier.sync {id}, {n};", id = in(reg32) id, n = in(reg32) threads, options(nostack))
    };
}

/// Cluster-wide barrier (`barrier.cluster.arrive.release` + `wait.acquire`).
/// With a cluster of one CTA it degenerates to a block barrier.
#[inline(always)]
pub fn cluster_sync() {
    // SAFETY: every thread of every CTA in the cluster must reach it.
    unsafe {
        asm!(
            // Non-`.aligned` forms, for the reason given in `sync_threads`.
            "barrier.cluster.arrive.release;",
            "barrier.cluster.wait.acquire;",
            options(nostack)
        )
    };
}

/// `griddepcontrol.wait`: blocks until every grid this one depends on
/// (the kernels before it on the stream) has completed and its memory
/// operations are visible. A kernel launched with programmatic stream
/// serialization (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`)
/// may start while its predecessor still runs; it must execute this before
/// its first access to memory a predecessor writes or reads. Without that
/// attribute it returns at once (the predecessor has finished).
#[inline(always)]
pub fn grid_dependency_wait() {
    // SAFETY: a wait with no operands; orders this thread's later memory
    // accesses after the prerequisite grids' (a compiler barrier too:
    // `asm!` without `nomem`).
    unsafe { asm!("griddepcontrol.wait;", options(nostack)) };
}

/// `griddepcontrol.launch_dependents`: lets the kernel after this one on
/// the stream, if launched with programmatic stream serialization, be
/// scheduled once every CTA of this grid has signalled or exited (its
/// CTAs then take SMs as this grid's CTAs leave them, and run their
/// prologue up to their own [`grid_dependency_wait`]). It does not make
/// this grid's memory visible to the dependent: that is the wait's job.
#[inline(always)]
pub fn grid_dependency_launch_dependents() {
    // SAFETY: a hint with no operands; no memory is accessed.
    unsafe { asm!("griddepcontrol.launch_dependents;", options(nostack)) };
}

/// `%globaltimer` in nanoseconds.
#[inline(always)]
pub fn global_timer_ns() -> u64 {
    let r: u64;
    // SAFETY: reads a special register (volatile: no `pure`).
    unsafe { asm!("mov.u64 {r}, %globaltimer;", r = out(reg64) r, options(nomem, nostack)) };
    r
}

/// `%clock64`: this SM's cycle counter (not synchronized across SMs).
#[inline(always)]
pub fn clock_cycles() -> u64 {
    let r: u64;
    // SAFETY: reads a special register (volatile: no `pure`).
    unsafe { asm!("mov.u64 {r}, %clock64;", r = out(reg64) r, options(nomem, nostack)) };
    r
}

/// `bar.warp.sync 0xffffffff`: converges the warp and orders the memory
/// accesses of its lanes (so one lane may then signal for all of them).
#[inline(always)]
pub fn sync_warp() {
    // SAFETY: all 32 lanes of the warp must reach it.
    unsafe { asm!("bar.warp.sync 0xffffffff;", options(nostack)) };
}

/// `st.shared.u32`: stores `value` at shared address `addr`.
///
/// # Safety
/// `addr` is a 4-byte-aligned shared address this thread may write
/// (the pipeline protocol says when).
#[inline(always)]
pub unsafe fn st_shared_u32(addr: u32, value: u32) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("st.shared.u32 [{a}], {v};", a = in(reg32) addr, v = in(reg32) value, options(nostack))
    };
}

/// `ld.shared.u32`: loads from shared address `addr`.
///
/// # Safety
/// `addr` is a 4-byte-aligned shared address whose contents this thread may
/// read (ordered after the writer by a barrier).
#[inline(always)]
pub unsafe fn ld_shared_u32(addr: u32) -> u32 {
    let v: u32;
    // SAFETY: forwarded to the caller. Not `pure`: the value depends on
    // other threads' writes ordered by barriers the compiler cannot see.
    unsafe {
        asm!("ld.shared.u32 {v}, [{a}];", a = in(reg32) addr, v = out(reg32) v, options(nostack, readonly))
    };
    v
}

/// `st.release.gpu.u32`: stores `v` at `ptr` with release semantics at
/// GPU scope: every memory operation this thread performed or observed
/// before it (cumulatively: also those ordered before it by a CTA
/// barrier) is visible to a thread of the same GPU that reads `v` with an
/// acquire at GPU scope ([`ld_acquire_gpu_u32`]). For flags that only CTAs
/// of one grid read: the system scope of a Rust `Ordering::Release` store
/// (`st.release.sys`, a `MEMBAR.ALL.SYS` in SASS) waits for the whole
/// memory system.
///
/// # Safety
/// `ptr` is a 4-byte-aligned address of global memory that every thread
/// accessing it meanwhile accesses atomically.
///
/// ```ignore
/// unsafe { st_release_gpu_u32(flag, epoch) };
/// ```
#[inline(always)]
pub unsafe fn st_release_gpu_u32(ptr: *mut u32, v: u32) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("st.release.gpu.u32 [{p}], {v};", p = in(reg64) ptr as u64, v = in(reg32) v, options(nostack))
    };
}

/// `ld.acquire.gpu.u32`: loads the `u32` at `ptr` with acquire semantics at
/// GPU scope (the reading side of [`st_release_gpu_u32`]).
///
/// # Safety
/// As [`st_release_gpu_u32`].
///
/// ```ignore
/// while unsafe { ld_acquire_gpu_u32(flag) } != epoch {}
/// ```
#[inline(always)]
pub unsafe fn ld_acquire_gpu_u32(ptr: *const u32) -> u32 {
    let v: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("ld.acquire.gpu.u32 {v}, [{p}];", p = in(reg64) ptr as u64, v = out(reg32) v, options(nostack))
    };
    v
}

/// `st.global.v4.f32`: stores four floats at `ptr` (one 16-byte store).
///
/// # Safety
/// `ptr` is a 16-byte-aligned global address of 4 floats this thread may
/// write.
#[inline(always)]
pub unsafe fn st_global_v4_f32(ptr: *mut f32, v: [f32; 4]) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "st.global.v4.f32 [{p}], {{{a}, {b}, {c}, {d}}};",
            p = in(reg64) ptr as u64,
            a = in(reg32) v[0], b = in(reg32) v[1], c = in(reg32) v[2], d = in(reg32) v[3],
            options(nostack)
        )
    };
}

/// `ld.global.v4.f32`: loads four floats from `ptr` (one 16-byte load;
/// a coherent load, not `.nc`: the data may have been written by another
/// CTA during this launch, ordered before this thread by an acquire).
///
/// # Safety
/// `ptr` is a 16-byte-aligned global address of 4 floats whose writers are
/// ordered before this load (acquire + barrier).
#[inline(always)]
pub unsafe fn ld_global_v4_f32(ptr: *const f32) -> [f32; 4] {
    let (a, b, c, d): (f32, f32, f32, f32);
    // SAFETY: forwarded to the caller. Not `pure`: another CTA's writes,
    // ordered by synchronization the compiler cannot see, decide the value.
    unsafe {
        asm!(
            "ld.global.v4.f32 {{{a}, {b}, {c}, {d}}}, [{p}];",
            p = in(reg64) ptr as u64,
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            options(nostack, readonly)
        )
    };
    [a, b, c, d]
}

/// `ld.global.nc.v4.u32`: loads 16 bytes from `ptr` through the read-only
/// (non-coherent) data path, as four words (a bulk copy's source).
///
/// # Safety
/// `ptr` is a 16-byte-aligned global address of 16 readable bytes that no
/// thread of this launch writes (the non-coherent cache would not see the
/// write: the data must be constant for the kernel's lifetime; writes of
/// earlier launches on the stream are visible).
#[inline(always)]
pub unsafe fn ld_global_nc_v4_u32(ptr: *const [u32; 4]) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: forwarded to the caller. `readonly`, not `pure`: the value
    // depends on memory the compiler cannot see.
    unsafe {
        asm!(
            "ld.global.nc.v4.u32 {{{a}, {b}, {c}, {d}}}, [{p}];",
            p = in(reg64) ptr as u64,
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            options(nostack, readonly)
        )
    };
    [a, b, c, d]
}

/// `st.global.u32`: stores one word (4 bytes) at `ptr`.
///
/// # Safety
/// `ptr` is a 4-byte-aligned global address of 4 bytes this thread may
/// write (no other thread of the launch reads or writes them unordered).
///
/// ```ignore
/// unsafe { st_global_u32(d.add(i), pack_bf16x2(x0, x1)) };
/// ```
#[inline(always)]
pub unsafe fn st_global_u32(ptr: *mut u32, v: u32) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "st.global.u32 [{p}], {v};",
            p = in(reg64) ptr as u64,
            v = in(reg32) v,
            options(nostack)
        )
    };
}

/// `st.global.v4.u32`: stores four words (16 bytes) at `ptr` in one store.
///
/// # Safety
/// `ptr` is a 16-byte-aligned global address of 16 bytes this thread may
/// write (no other thread of the launch reads or writes them unordered).
#[inline(always)]
pub unsafe fn st_global_v4_u32(ptr: *mut [u32; 4], v: [u32; 4]) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "st.global.v4.u32 [{p}], {{{a}, {b}, {c}, {d}}};",
            p = in(reg64) ptr as u64,
            a = in(reg32) v[0], b = in(reg32) v[1], c = in(reg32) v[2], d = in(reg32) v[3],
            options(nostack)
        )
    };
}
