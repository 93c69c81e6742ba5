//! The Hopper GEMM roles' tile-scheduler arithmetic (`sm90::schedule`, the
//! same source the sm_90a kernels compile) on the host: the grouped
//! rasterization visits every tile exactly once in the promised order, and
//! the tile rows of A load exactly M rows. Fresh random shapes each run.

use baton_kernel_roles::sm90::schedule::{TileRows, a_rows_loaded, tile_coords};

struct Rng(u64);
impl Rng {
    fn new() -> Self {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        println!("seed {t:#x}");
        Rng(t | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % n as u64) as u32
    }
}

#[test]
fn grouped_rasterization_is_a_bijection_walking_group_rows_column_by_column() {
    let mut rng = Rng::new();
    for _ in 0..200 {
        let (tiles_m, tiles_n, group_m) = (1 + rng.below(40), 1 + rng.below(40), 1 + rng.below(12));
        let mut seen = vec![false; (tiles_m * tiles_n) as usize];
        let mut prev: Option<(u32, u32)> = None;
        for t in 0..tiles_m * tiles_n {
            let (tm, tn) = tile_coords(t, tiles_m, tiles_n, group_m);
            assert!(
                tm < tiles_m && tn < tiles_n,
                "tile {t} → ({tm}, {tn}) outside {tiles_m}×{tiles_n}"
            );
            let i = (tm * tiles_n + tn) as usize;
            assert!(
                !seen[i],
                "tile ({tm}, {tn}) visited twice ({tiles_m}×{tiles_n}, group {group_m})"
            );
            seen[i] = true;
            // The group of tile rows this tile belongs to, and its height.
            let first = tm / group_m * group_m;
            let rows = group_m.min(tiles_m - first);
            if let Some((pm, pn)) = prev {
                let same_group = pm / group_m == tm / group_m;
                if same_group {
                    // Down the column, then to the next column's first row.
                    let down = pm + 1 == tm && pn == tn;
                    let next_col = pm == first + rows - 1 && tm == first && pn + 1 == tn;
                    assert!(
                        down || next_col,
                        "({pm}, {pn}) → ({tm}, {tn}) in group {first}..{}",
                        first + rows
                    );
                } else {
                    // A new group starts at its first row, column 0.
                    assert_eq!(
                        (pm, pn),
                        (first - 1, tiles_n - 1),
                        "previous group not finished"
                    );
                    assert_eq!((tm, tn), (first, 0));
                }
            } else {
                assert_eq!((tm, tn), (0, 0));
            }
            prev = Some((tm, tn));
        }
        assert!(seen.iter().all(|&s| s), "a tile was never visited");
    }
}

#[test]
fn tile_rows_load_exactly_m_rows_and_none_past_m() {
    let mut rng = Rng::new();
    for _ in 0..1000 {
        let bm = [64, 128, 256][rng.below(3) as usize];
        let m = 1 + rng.below(5000);
        let rows = TileRows {
            tiles_m: m.div_ceil(bm),
            tail_rows: m % bm,
            bm,
        };
        let loaded: u32 = (0..rows.tiles_m).map(|tm| rows.a_rows(tm)).sum();
        assert_eq!(loaded, m, "M = {m}, BM = {bm}");
        for tm in 0..rows.tiles_m {
            let r = rows.a_rows(tm);
            assert!(r > 0 && r <= bm);
            assert_eq!(r, a_rows_loaded(tm, rows.tiles_m, rows.tail_rows, bm));
            // Only the last tile row may be short.
            assert!(r == bm || tm == rows.tiles_m - 1);
        }
        // A cluster's tile rows past M load nothing.
        assert_eq!(rows.a_rows(rows.tiles_m), 0);
        assert_eq!(rows.a_rows(rows.tiles_m + 1 + rng.below(4)), 0);
    }
}
