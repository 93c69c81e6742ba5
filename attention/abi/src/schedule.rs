//! The persistent schedule: which query tile a CTA computes when, and how
//! many K/V blocks it reads. Pure arithmetic, shared by the kernel and the
//! host (and usable by a CPU run of the roles).
//!
//! A launch has `grid` CTAs (the host's choice, at most the tile count:
//! the SM count for the persistent schedule, or one CTA per tile); CTA `c`
//! computes work tiles
//! `c, c + grid, c + 2·grid, …` of the [`tile_count`] in the order of
//! [`work_tile`].

/// One work tile: query rows `bm·q_tile ..` (`bm`: the kernel's
/// [`HeadDimConfig::bm`](crate::HeadDimConfig::bm)) of `(batch, head)` number
/// `batch_head = batch · q_heads + head`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkTile {
    /// Query tile within the head.
    pub q_tile: u32,
    /// `batch · q_heads + head`.
    pub batch_head: u32,
}

/// Query tiles of `bm` rows per head: `⌈seq_q / bm⌉`.
///
/// ```
/// assert_eq!(baton_attention_abi::schedule::q_tiles(129, 128), 2);
/// assert_eq!(baton_attention_abi::schedule::q_tiles(4096, 192), 22);
/// ```
#[inline(always)]
pub const fn q_tiles(seq_q: u32, bm: u32) -> u32 {
    seq_q.div_ceil(bm)
}

/// Work tiles of a launch: `q_tiles(seq_q, bm) · batch_heads`.
///
/// ```
/// assert_eq!(baton_attention_abi::schedule::tile_count(1024, 128, 16), 128);
/// ```
#[inline(always)]
pub const fn tile_count(seq_q: u32, bm: u32, batch_heads: u32) -> u32 {
    q_tiles(seq_q, bm) * batch_heads
}

/// Work tile `t` (`< q_tiles · batch_heads`). Causal: in sections of
/// `heads_per_section` consecutive heads ([`heads_per_section`]), the
/// longest tiles of a section first (query tiles in descending order,
/// every head of the section for one query tile before the next), so that
/// the short tiles fill the end while the CTAs running together share few
/// heads' K/V (L2). Otherwise head by head (a head's tiles run together
/// and share its K/V in L2).
///
/// ```
/// use baton_attention_abi::schedule::{work_tile, WorkTile};
/// // 4 query tiles, 3 heads, sections of 2 heads (then 1).
/// assert_eq!(work_tile(0, 4, 3, 2, true), WorkTile { q_tile: 3, batch_head: 0 });
/// assert_eq!(work_tile(1, 4, 3, 2, true), WorkTile { q_tile: 3, batch_head: 1 });
/// assert_eq!(work_tile(7, 4, 3, 2, true), WorkTile { q_tile: 0, batch_head: 1 });
/// assert_eq!(work_tile(8, 4, 3, 2, true), WorkTile { q_tile: 3, batch_head: 2 });
/// assert_eq!(work_tile(11, 4, 3, 2, true), WorkTile { q_tile: 0, batch_head: 2 });
/// assert_eq!(work_tile(5, 4, 3, 2, false), WorkTile { q_tile: 1, batch_head: 1 });
/// ```
#[inline(always)]
pub const fn work_tile(
    t: u32,
    q_tiles: u32,
    batch_heads: u32,
    heads_per_section: u32,
    causal: bool,
) -> WorkTile {
    if causal {
        let per_section = heads_per_section * q_tiles;
        let section = t / per_section;
        let r = t - section * per_section;
        let first_head = section * heads_per_section;
        let left = batch_heads - first_head;
        let heads = if left < heads_per_section {
            left
        } else {
            heads_per_section
        };
        WorkTile {
            q_tile: q_tiles - 1 - r / heads,
            batch_head: first_head + r % heads,
        }
    } else {
        WorkTile {
            q_tile: t % q_tiles,
            batch_head: t / q_tiles,
        }
    }
}

/// L2 budget of one causal section's K and V: 16 MiB of the H100's 50 MB
/// L2, so that the CTAs running together share few heads' K/V (one CTA per
/// tile, d = 256 causal: +3.7 % over head by head; BENCHMARKS.md "Session 9
/// — ATTN-PERF").
pub const L2_SECTION_BYTES: u64 = 16 << 20;

/// Heads per causal section ([`work_tile`]): as many as keep their K and V
/// (`seq_kv · head_dim` bf16 each, shared by `heads_per_kv_head` query
/// heads) within [`L2_SECTION_BYTES`]; at least 1, at most `batch_heads`.
///
/// ```
/// use baton_attention_abi::schedule::heads_per_section;
/// assert_eq!(heads_per_section(4096, 128, 1, 64), 8);
/// assert_eq!(heads_per_section(4096, 128, 8, 128), 64);
/// assert_eq!(heads_per_section(1 << 20, 256, 1, 4), 1);
/// ```
pub const fn heads_per_section(
    seq_kv: u32,
    head_dim: u32,
    heads_per_kv_head: u32,
    batch_heads: u32,
) -> u32 {
    let kv_bytes = 4 * seq_kv as u64 * head_dim as u64;
    let n = L2_SECTION_BYTES * heads_per_kv_head as u64 / kv_bytes;
    if n < 1 {
        1
    } else if n > batch_heads as u64 {
        batch_heads
    } else {
        n as u32
    }
}

/// K/V blocks of `block_n` rows that query rows `q_row0 .. q_row0 + bm`
/// read: all of `⌈seq_kv / block_n⌉`, or, causal (top-left: row `i` sees
/// columns `0..=i`), those up to the tile's last row.
///
/// ```
/// use baton_attention_abi::schedule::kv_blocks;
/// assert_eq!(kv_blocks(0, 1000, 1000, 128, 128, false), 8);
/// assert_eq!(kv_blocks(0, 1000, 1000, 128, 128, true), 1);
/// assert_eq!(kv_blocks(896, 1000, 1000, 128, 128, true), 8);
/// assert_eq!(kv_blocks(0, 1000, 1000, 192, 128, true), 2);
/// ```
#[inline(always)]
pub const fn kv_blocks(
    q_row0: u32,
    seq_q: u32,
    seq_kv: u32,
    bm: u32,
    block_n: u32,
    causal: bool,
) -> u32 {
    let all = seq_kv.div_ceil(block_n);
    if causal {
        let last_row = if q_row0 + bm < seq_q {
            q_row0 + bm
        } else {
            seq_q
        } - 1;
        let reach = last_row / block_n + 1;
        if reach < all { reach } else { all }
    } else {
        all
    }
}

/// A planned schedule (host only): the work tiles `0..tiles` of a causal
/// launch dealt to `grid` persistent CTAs the way the hardware deals one
/// CTA per tile, but without a CTA launch and a pipeline fill per tile:
/// in [`work_tile`]'s order (longest first, in sections), each tile to the
/// CTA with the least work so far (ties: the lowest CTA), a tile costing
/// its K/V blocks ([`kv_blocks`]) plus one (its last P·V and epilogue).
///
/// The kernel reads it from
/// [`AttentionParams::tile_order`](crate::AttentionParams::tile_order):
/// `grid + 1` offsets, then the tiles; CTA `c` computes
/// `order[grid + 1 + k]` for `k` in `order[c] .. order[c + 1]`, in that
/// order. Every tile is in exactly one CTA's list ([`check_plan`]).
///
/// ```
/// use baton_attention_abi::schedule::{check_plan, plan};
/// // 4 query tiles of 128 rows, 1 head, 2 CTAs: tiles 0..4 are query
/// // tiles 3, 2, 1, 0 (4, 3, 2, 1 blocks): CTA 0 takes 3 (4 blocks) then
/// // 0 (1), CTA 1 takes 2 (3) then 1 (2).
/// let p = plan(512, 512, 128, 128, 1, 1, 2);
/// assert_eq!(p, [0, 2, 4, 0, 3, 1, 2]);
/// assert!(check_plan(&p, 4, 2));
/// ```
#[cfg(not(target_arch = "nvptx64"))]
#[allow(clippy::too_many_arguments)]
pub fn plan(
    seq_q: u32,
    seq_kv: u32,
    bm: u32,
    block_n: u32,
    batch_heads: u32,
    heads_per_section: u32,
    grid: u32,
) -> Vec<u32> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let qt = q_tiles(seq_q, bm);
    let tiles = qt * batch_heads;
    let grid = grid.clamp(1, tiles.max(1));
    // (load, cta), least load first, then the lowest CTA.
    let mut heap: BinaryHeap<Reverse<(u64, u32)>> = (0..grid).map(|c| Reverse((0, c))).collect();
    let mut lists = vec![Vec::new(); grid as usize];
    for t in 0..tiles {
        let w = work_tile(t, qt, batch_heads, heads_per_section, true);
        let cost = kv_blocks(w.q_tile * bm, seq_q, seq_kv, bm, block_n, true) as u64 + 1;
        let Reverse((load, c)) = heap.pop().expect("grid ≥ 1");
        lists[c as usize].push(t);
        heap.push(Reverse((load + cost, c)));
    }
    let mut out = Vec::with_capacity((grid + 1 + tiles) as usize);
    let mut off = 0;
    for l in &lists {
        out.push(off);
        off += l.len() as u32;
    }
    out.push(off);
    for l in lists {
        out.extend(l);
    }
    out
}

/// Whether `order` is a plan of `tiles` work tiles on `grid` CTAs
/// ([`plan`]'s layout): `grid + 1` non-decreasing offsets from 0 to
/// `tiles`, then every tile in `0..tiles` exactly once. The kernel trusts
/// the plan (a tile missing leaves its O unwritten, a tile twice is
/// computed twice); the host checks each one it makes.
///
/// ```
/// use baton_attention_abi::schedule::check_plan;
/// assert!(check_plan(&[0, 1, 2, 1, 0], 2, 2));
/// assert!(!check_plan(&[0, 1, 2, 1, 1], 2, 2)); // tile 1 twice, 0 missing
/// assert!(!check_plan(&[0, 2, 1, 1, 0], 2, 2)); // offsets decrease
/// assert!(!check_plan(&[0, 1, 2, 1, 2], 2, 2)); // tile 2 out of range
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub fn check_plan(order: &[u32], tiles: u32, grid: u32) -> bool {
    let (g, n) = (grid as usize, tiles as usize);
    if order.len() != g + 1 + n || order[0] != 0 || order[g] != tiles {
        return false;
    }
    if order[..=g].windows(2).any(|w| w[0] > w[1]) {
        return false;
    }
    let mut seen = vec![false; n];
    for &t in &order[g + 1..] {
        match seen.get_mut(t as usize) {
            Some(s) if !*s => *s = true,
            _ => return false,
        }
    }
    true
}
