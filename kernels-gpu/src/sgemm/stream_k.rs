//! Stream-k: a product's work cut evenly among a fixed number `W` of blocks (*workers*, as
//! many as the device runs at once), whatever its number of output tiles. Where a plain
//! launch leaves a last wave of few tiles (364 tiles of 128 × 128 on 264 blocks at once run
//! as two waves, the second a third full), the workers share the last wave's tiles k-tile
//! by k-tile: as if the product had whole waves of tiles.
//!
//! Tiles are numbered as the grid's x (`cdiv(n, BN)` columns fastest, then y), each of
//! `iters = cdiv(k, BK)` k-tiles. The first [`dp_tiles`](StreamK::dp_tiles), whole waves
//! of `W`, are *data-parallel*: worker `w` runs tiles `w, w + W, …` whole, so the tiles that
//! run at once start at the same depth and share their operands' panels in L2. The rest, the
//! *stream* tiles, are one line of k-tiles, tile by tile, and stream worker `w` takes the
//! k-tiles `⌊w · total / S⌋ .. ⌊(w + 1) · total / S⌋` of their `total = tiles · iters` (`S`
//! the stream workers: `W`, or fewer where there are fewer k-tiles). The stream tiles are
//! the last partial wave, and a whole wave more where the partial one holds less than a
//! quarter of `W` tiles (so that no tile is cut into more than a few pieces), or every tile
//! where there are fewer than `W`. (Every tile streamed, the workers run their tiles at
//! depths apart and re-read their panels from memory: 3224 × 11515 × 1723 in 128 × 128
//! tiles took 3.59 ms on an H200, where the plain launch's two waves took 4.18.)
//!
//! A worker's k-tiles fall into *pieces*, one per output tile they touch: the end of one
//! tile, whole tiles, the start of another. The pieces of one tile belong to consecutive
//! workers and add up as serial split-k's slices do ([`split_k`](super::split_k)'s
//! module docs, [`SerialTurn`]): piece 0 stores its partial sum into the output, piece
//! `z > 0` waits until piece `z − 1` has said it is done (the tile's flag equal to `z`),
//! adds its own to what it reads back and passes the flag on, and the last piece applies
//! the epilogue and puts the flag back to 0. So every output is the pieces' FMA chains
//! (each in `k` order from `0.0`) added in `k` order: the same bits run to run, for a
//! given shape and `W`. Error bound: `k + p` roundings, `p ≤ min(W, iters)` the tile's
//! pieces ([`StreamK::roundings`]).
//!
//! **Rows of a product** (a multi-GPU product's part): a launch may run the schedule of the
//! whole product on rows `row0 ..` of it alone (`row0` a multiple of the tile's rows, so
//! its tiles are whole): every worker runs, each only its pieces of those rows' tiles
//! ([`StreamK::rows`]). Every piece is the whole product's, so every output has the bits
//! of the one launch over all rows.
//!
//! A worker runs its pieces last first: the start of its last tile, which waits for
//! nobody, then its whole tiles, then the end of its first tile, whose earlier pieces
//! (the last pieces of lower workers, run first by them) are long stored. Deadlock-free
//! whatever order the GPU starts blocks in: a block takes its worker number from a ticket,
//! a counter it increments as it starts, and a piece waits only for pieces of lower
//! workers, which have started and, by induction from worker 0 (whose first piece starts
//! its tile), finish.

use super::BlockTile;
use super::split_k::SerialTurn;
use core::ops::Range;
use nvptx_device::catalogue::Param;
use nvptx_device::shared::SharedSlice;
use nvptx_device::{atomic, thread};

/// The parameters of every stream-k entry: `(a, b, out, flags, m, n, k, row0, m_all,
/// workers)`: rows `row0 .. row0 + m` of a product of `m_all` rows run by `workers` workers
/// (`a` and `out` from that row on; `0, m, blocks` for a whole product), every dimension
/// whole tiles (the host pads them), `flags` the launch's ticket counter and one flag per
/// output tile of those rows ([`StreamK::flag_words`]).
pub const STREAM_PARAMS: &[Param] = nvptx_device::params!(
    a: *const f32, b: *const f32, out: *mut f32, flags: *mut u64, m: u32, n: u32, k: u32,
    row0: u32, m_all: u32, workers: u32
);

/// The schedule of a stream-k product of `m × k × n` in tiles of `bm × bn × bk` over
/// `workers` blocks: the same on the host (launch, flags, bounds, the CPU's model) and in
/// every block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamK {
    /// Output tiles: `cdiv(m, bm) · cdiv(n, bn)`.
    pub tiles: u32,
    /// Tile columns, `cdiv(n, bn)` (tile `t` is at row `t / cols`, column `t % cols`).
    pub cols: u32,
    /// k-tiles of each output tile, `cdiv(k, bk)` (at least 1).
    pub iters: u32,
    /// Workers: the launch's blocks (a part of the rows runs them all).
    pub workers: u32,
    /// The data-parallel tiles, whole waves of `workers` before the stream tiles.
    pub dp_tiles: u32,
    /// Workers of the stream tiles: `workers`, or their k-tiles where fewer.
    pub stream_workers: u32,
    bm: u32,
    bn: u32,
    bk: u32,
}

/// One piece of a worker's k-tiles: output tile `tile`'s k-tiles `first .. end` (indices
/// into the whole line of k-tiles), its place `slice` among the tile's pieces, and whether
/// it is the tile's last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The output tile.
    pub tile: u32,
    /// Its first k-tile in the line of all (`tile · iters` and on).
    pub first: u64,
    /// One past its last.
    pub end: u64,
    /// Pieces of the same tile before it (held by lower workers).
    pub slice: u32,
    /// Whether it ends the tile (applies the epilogue).
    pub last: bool,
}

impl StreamK {
    /// The schedule over `workers` blocks (at least 1).
    #[inline(always)]
    pub fn new(m: u32, n: u32, k: u32, bm: u32, bn: u32, bk: u32, workers: u32) -> Self {
        let cols = n.div_ceil(bn);
        let tiles = cols * m.div_ceil(bm);
        let iters = k.div_ceil(bk).max(1);
        let workers = workers.max(1);
        let (waves, last) = (tiles / workers, tiles % workers);
        // Whole waves before the stream tiles: all but the last partial one, and one fewer
        // where that holds less than a quarter of a wave (none past the tiles).
        let dp_waves = if 4 * last < workers {
            waves.saturating_sub(1)
        } else {
            waves
        };
        let dp_tiles = dp_waves * workers;
        let stream = u64::from(tiles - dp_tiles) * u64::from(iters);
        Self {
            tiles,
            cols,
            iters,
            workers,
            dp_tiles,
            stream_workers: (u64::from(workers).min(stream.max(1))) as u32,
            bm,
            bn,
            bk,
        }
    }

    /// Every tile's k-tiles.
    #[inline(always)]
    pub fn total(&self) -> u64 {
        u64::from(self.tiles) * u64::from(self.iters)
    }

    /// The first k-tile of the stream tiles, in the line of all.
    #[inline(always)]
    fn stream_first(&self) -> u64 {
        u64::from(self.dp_tiles) * u64::from(self.iters)
    }

    /// The stream tiles' k-tiles.
    #[inline(always)]
    fn stream_total(&self) -> u64 {
        self.total() - self.stream_first()
    }

    /// Stream worker `w`'s first k-tile, in the line of all: the stream tiles' first plus
    /// `⌊w · stream / S⌋` (all of them for `w >= S`).
    #[inline(always)]
    pub fn start(&self, w: u32) -> u64 {
        let w = u64::from(w.min(self.stream_workers));
        self.stream_first() + w * self.stream_total() / u64::from(self.stream_workers)
    }

    /// The stream worker whose k-tiles hold k-tile `x` of a stream tile: the last `w` with
    /// `start(w) <= x`, `⌊((x' + 1) · S − 1) / stream⌋` for `x'` the k-tile's place among
    /// the stream tiles'.
    #[inline(always)]
    pub fn worker_of(&self, x: u64) -> u32 {
        let x = x - self.stream_first();
        (((x + 1) * u64::from(self.stream_workers) - 1) / self.stream_total()) as u32
    }

    /// Data-parallel tile `t < dp_tiles` as one piece, whole.
    #[inline(always)]
    pub fn whole(&self, t: u32) -> Piece {
        let iters = u64::from(self.iters);
        Piece {
            tile: t,
            first: u64::from(t) * iters,
            end: u64::from(t + 1) * iters,
            slice: 0,
            last: true,
        }
    }

    /// Stream worker `w`'s piece that ends at k-tile `end` (`start(w) < end <= start(w + 1)`):
    /// the part of `end − 1`'s tile from `start(w)` or the tile's first k-tile, whichever
    /// is later.
    #[inline(always)]
    pub fn piece(&self, w: u32, end: u64) -> Piece {
        let iters = u64::from(self.iters);
        let tile = (end - 1) / iters;
        let tile_first = tile * iters;
        let first = self.start(w).max(tile_first);
        Piece {
            tile: tile as u32,
            first,
            end,
            slice: w - self.worker_of(tile_first),
            last: end == tile_first + iters,
        }
    }

    /// The most pieces one tile is cut into: each holds a k-tile at least, and each worker
    /// at most one piece of it.
    pub fn most_pieces(&self) -> u32 {
        self.stream_workers.min(self.iters)
    }

    /// Roundings per output in the worst case, on a depth of `k`: `k` in the pieces' FMA
    /// chains and one per added piece. The f32 bound is this many times `2⁻²⁴ · Σ|a||b|`.
    pub fn roundings(&self, k: u32) -> usize {
        k as usize + self.most_pieces() as usize
    }

    /// The tiles of rows `row0 .. row0 + rows` (`row0` a multiple of `bm`, `rows >= 1`).
    #[inline(always)]
    pub fn rows(&self, row0: u32, rows: u32) -> Range<u32> {
        let t0 = row0 / self.bm * self.cols;
        let t1 = ((row0 + rows).div_ceil(self.bm) * self.cols).min(self.tiles);
        t0..t1
    }

    /// 8-byte words of the flag buffer of a launch on `tiles` of the output's tiles: the
    /// ticket counter and one flag per tile.
    pub fn flag_words(tiles: usize) -> usize {
        1 + tiles
    }

    /// The block tile of tile `t` on rows `row0 ..` of the output, `m` of them (tile `t`'s
    /// rows among those).
    #[inline(always)]
    pub fn block_tile(&self, t: u32, row0: u32, m: u32, n: u32) -> BlockTile {
        BlockTile::at(
            t / self.cols * self.bm - row0,
            t % self.cols * self.bn,
            m,
            n,
        )
    }

    /// A piece's first column of `a` (row of `b`) and depth, on a depth of `k`.
    #[inline(always)]
    pub fn depth_of(&self, p: &Piece, k: u32) -> (u32, u32) {
        let tile_first = u64::from(p.tile) * u64::from(self.iters);
        let k0 = (p.first - tile_first) as u32 * self.bk;
        let k1 = ((p.end - tile_first) as u32 * self.bk).min(k);
        (k0, k1 - k0)
    }

    /// The turn a block takes around the store of piece `p` ([`SerialTurn`]'s hand-off on
    /// the tile's flag, word `1 + p.tile − tiles.start` of `flags`), on rows `row0 ..` of
    /// the output, `m` of them, whose tiles are `tiles`.
    ///
    /// # Safety
    /// `p.tile` is in `tiles`; `flags` holds [`flag_words`](Self::flag_words) words for
    /// them.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn turn(
        &self, p: &Piece, flags: *mut u64, tiles: &Range<u32>, row0: u32, m: u32, n: u32, k: u32,
    ) -> SerialTurn {
        let (k0, depth) = self.depth_of(p, k);
        // SAFETY: p.tile is in `tiles`, so the word is inside flags (the caller's contract).
        let flag = unsafe { flags.add(1 + (p.tile - tiles.start) as usize) };
        SerialTurn::piece(
            self.block_tile(p.tile, row0, m, n),
            k0,
            depth,
            p.slice,
            p.last,
            flag,
        )
    }

    /// This block's worker number: thread 0 takes a ticket from the counter `flags[0]` (the
    /// block that takes the launch's last, `gridDim.x − 1`, puts it back to 0) and the
    /// block reads it through `ticket`, one shared word.
    ///
    /// # Safety
    /// Every thread of the block calls it once, first thing; the grid is 1-D; `flags`' first
    /// word is 0 at the start of the launch (every launch leaves it so), 8-byte aligned, and
    /// touched by nothing else during it.
    #[inline(always)]
    pub unsafe fn take(ticket: SharedSlice<u32>, flags: *mut u64) -> u32 {
        if thread::thread_idx_x() == 0 {
            let counter = flags as *mut u32;
            let blocks = thread::grid_dim_x();
            // SAFETY: flags[0]'s low word is the counter, touched only atomically.
            let t = unsafe { atomic::fetch_add_u32(counter, 1) };
            if t == blocks - 1 {
                // SAFETY: as above; every block has taken its ticket.
                unsafe { atomic::fetch_add_u32(counter, blocks.wrapping_neg()) };
            }
            ticket.set(0, t);
        }
        thread::sync_threads();
        ticket.get(0)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;

    /// Every k-tile belongs to exactly one piece; a tile's pieces are consecutive workers'
    /// in `k` order, numbered from 0, the last one marked.
    fn covers(s: &StreamK) {
        let mut owner = vec![None; s.total() as usize];
        let mut tile_pieces = vec![vec![]; s.tiles as usize];
        assert!(
            s.dp_tiles.is_multiple_of(s.workers) && s.dp_tiles <= s.tiles,
            "{s:?}"
        );
        for t in 0..s.dp_tiles {
            let p = s.whole(t);
            for x in p.first..p.end {
                assert_eq!(owner[x as usize], None, "{s:?}: k-tile {x} twice");
                owner[x as usize] = Some(t % s.workers);
            }
            tile_pieces[t as usize].push((t % s.workers, p));
        }
        for w in 0..s.stream_workers {
            let (start, mut end) = (s.start(w), s.start(w + 1));
            assert!(end > start, "{s:?}: worker {w} has no work");
            while end > start {
                let p = s.piece(w, end);
                assert!(p.first < p.end && p.first >= start, "{s:?} {p:?}");
                for x in p.first..p.end {
                    assert_eq!(owner[x as usize], None, "{s:?}: k-tile {x} twice");
                    owner[x as usize] = Some(w);
                    assert_eq!(s.worker_of(x), w, "{s:?}: k-tile {x}");
                }
                tile_pieces[p.tile as usize].push((w, p));
                end = p.first;
            }
        }
        assert!(
            owner.iter().all(Option::is_some),
            "{s:?}: a k-tile left out"
        );
        assert_eq!(s.start(s.workers + 1), s.total(), "{s:?}");
        for (t, pieces) in tile_pieces.iter_mut().enumerate() {
            pieces.sort_by_key(|(w, _)| *w);
            let first_w = pieces[0].0;
            for (z, (w, p)) in pieces.iter().enumerate() {
                assert_eq!(
                    (p.slice as usize, *w as usize),
                    (z, first_w as usize + z),
                    "{s:?} {t}"
                );
                assert_eq!(p.last, z == pieces.len() - 1, "{s:?} {t}");
            }
            assert!(pieces.len() as u32 <= s.most_pieces(), "{s:?} {t}");
        }
    }

    #[test]
    fn pieces_cover_every_k_tile_once_in_order() {
        for (m, n, k) in [(1, 1, 1), (3224, 1723, 11515), (130, 70, 33), (64, 64, 16)] {
            for (bm, bn, bk) in [(128, 128, 16), (64, 32, 16), (32, 128, 8)] {
                for workers in [1, 2, 3, 7, 132, 264, 1000, 100_000] {
                    covers(&StreamK::new(m, n, k, bm, bn, bk, workers));
                }
            }
        }
    }

    #[test]
    fn whole_waves_run_data_parallel_and_the_rest_is_streamed() {
        // 364 tiles on 264 workers: one wave whole, 100 tiles streamed.
        let s = StreamK::new(3224, 1723, 11515, 128, 128, 16, 264);
        assert_eq!((s.tiles, s.dp_tiles, s.stream_workers), (364, 264, 264));
        // 270 tiles: the partial wave (6) is under a quarter of one, so a wave more streams.
        let s = StreamK::new(128 * 27, 128 * 10, 1024, 128, 128, 16, 264);
        assert_eq!((s.tiles, s.dp_tiles), (270, 0));
        let s = StreamK::new(128 * 54, 128 * 10, 1024, 128, 128, 16, 264);
        assert_eq!((s.tiles, s.dp_tiles), (540, 264));
        // Fewer tiles than workers: all streamed.
        let s = StreamK::new(300, 300, 4096, 128, 128, 16, 264);
        assert_eq!((s.tiles, s.dp_tiles, s.stream_workers), (9, 0, 264));
    }

    #[test]
    fn depths_tile_k_and_workers_are_capped_by_the_work() {
        let s = StreamK::new(100, 100, 50, 64, 64, 16, 1000);
        assert_eq!((s.tiles, s.iters, s.stream_workers), (4, 4, 16));
        // Worker 3 holds tile 0's last k-tile: 48 .. 50 (k is not whole tiles).
        let p = s.piece(3, 4);
        assert_eq!((p.tile, p.slice, p.last), (0, 3, true));
        assert_eq!(s.depth_of(&p, 50), (48, 2));
        assert_eq!(s.roundings(50), 54);
    }

    #[test]
    fn rows_take_their_tiles() {
        // 300 rows of 64-row tiles, 2 columns: 10 tiles.
        let s = StreamK::new(300, 100, 64, 64, 64, 16, 6);
        assert_eq!(s.rows(0, 300), 0..10);
        assert_eq!(s.rows(128, 64), 4..6);
        assert_eq!(s.rows(256, 44), 8..10);
        let t = s.block_tile(5, 128, 64, 100);
        assert_eq!((t.row0, t.col0), (0, 64));
    }
}
