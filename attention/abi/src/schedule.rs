//! The persistent schedule: which query tile a CTA computes when, and how
//! many K/V blocks it reads. Pure arithmetic, shared by the kernel and the
//! host (and usable by a CPU run of the roles).
//!
//! A launch has `grid` CTAs (the host's choice, at most the tile count:
//! the SM count for the persistent schedule, or one CTA per tile); CTA `c`
//! computes work tiles
//! `c, c + grid, c + 2·grid, …` of the [`tile_count`] in the order of
//! [`work_tile`].

use crate::BM;

/// One work tile: query rows `BM·q_tile ..` of `(batch, head)` number
/// `batch_head = batch · q_heads + head`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkTile {
    /// Query tile within the head.
    pub q_tile: u32,
    /// `batch · q_heads + head`.
    pub batch_head: u32,
}

/// Query tiles per head: `⌈seq_q / BM⌉`.
///
/// ```
/// assert_eq!(baton_attention_abi::schedule::q_tiles(129), 2);
/// ```
#[inline(always)]
pub const fn q_tiles(seq_q: u32) -> u32 {
    seq_q.div_ceil(BM)
}

/// Work tiles of a launch: `q_tiles(seq_q) · batch_heads`.
///
/// ```
/// assert_eq!(baton_attention_abi::schedule::tile_count(1024, 16), 128);
/// ```
#[inline(always)]
pub const fn tile_count(seq_q: u32, batch_heads: u32) -> u32 {
    q_tiles(seq_q) * batch_heads
}

/// Work tile `t` (`< q_tiles · batch_heads`). Causal: the longest first
/// (query tiles in descending order, every head of one query tile before
/// the next, so that each CTA's static stride takes a mix of long and short
/// tiles); otherwise head by head (a head's tiles run together and share
/// its K/V in L2).
///
/// ```
/// use baton_attention_abi::schedule::{work_tile, WorkTile};
/// // 4 query tiles, 2 heads.
/// assert_eq!(work_tile(0, 4, 2, true), WorkTile { q_tile: 3, batch_head: 0 });
/// assert_eq!(work_tile(1, 4, 2, true), WorkTile { q_tile: 3, batch_head: 1 });
/// assert_eq!(work_tile(7, 4, 2, true), WorkTile { q_tile: 0, batch_head: 1 });
/// assert_eq!(work_tile(5, 4, 2, false), WorkTile { q_tile: 1, batch_head: 1 });
/// ```
#[inline(always)]
pub const fn work_tile(t: u32, q_tiles: u32, batch_heads: u32, causal: bool) -> WorkTile {
    if causal {
        WorkTile {
            q_tile: q_tiles - 1 - t / batch_heads,
            batch_head: t % batch_heads,
        }
    } else {
        WorkTile {
            q_tile: t % q_tiles,
            batch_head: t / q_tiles,
        }
    }
}

/// K/V blocks of `block_n` rows that query rows `q_row0 .. q_row0 + BM`
/// read: all of `⌈seq_kv / block_n⌉`, or, causal (top-left: row `i` sees
/// columns `0..=i`), those up to the tile's last row.
///
/// ```
/// use baton_attention_abi::schedule::kv_blocks;
/// assert_eq!(kv_blocks(0, 1000, 1000, 128, false), 8);
/// assert_eq!(kv_blocks(0, 1000, 1000, 128, true), 1);
/// assert_eq!(kv_blocks(896, 1000, 1000, 128, true), 8);
/// ```
#[inline(always)]
pub const fn kv_blocks(q_row0: u32, seq_q: u32, seq_kv: u32, block_n: u32, causal: bool) -> u32 {
    let all = seq_kv.div_ceil(block_n);
    if causal {
        let last_row = if q_row0 + BM < seq_q {
            q_row0 + BM
        } else {
            seq_q
        } - 1;
        let reach = last_row / block_n + 1;
        if reach < all { reach } else { all }
    } else {
        all
    }
}
