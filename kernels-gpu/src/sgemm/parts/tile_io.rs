//! Moving a `ROWS × COLS` tile of a row-major operand from global to shared memory 16 bytes
//! at a time, in two halves: [`load`](TileVectors::load) into registers, then
//! [`VecTile::store`] (as it is) or [`VecTile::store_transposed`] into shared memory. The
//! split lets the double-buffered rung keep the next tile's global loads in flight while it
//! computes on this one. (Rungs 3 and 4 move theirs one float at a time:
//! [`load_tiles_scalar`].)
//!
//! Thread `t` moves vectors `t, t + THREADS, ...` of the tile, vector `v` being row
//! `v / (COLS/4)`, columns `4·(v % (COLS/4))..+4`: a warp reads whole rows of the tile, so
//! its loads are coalesced.
//!
//! Each load is either the fast path, `VECS` 16-byte loads (`ld.global.v4`), or the checked
//! path, scalar loads that put zero outside the matrix. The choice is one block-uniform
//! branch per tile: fast only if the whole tile lies inside the matrix, its row length is a
//! multiple of 4 and its pointer 16-byte aligned (so every vector is aligned and inside).
//! Interior tiles of a large product all take the fast path; edge tiles, `k = 1` or odd
//! shapes take the checked one, and no thread ever reads outside the operands.

use crate::sgemm::parts::global::rows_aligned8;
use crate::sgemm::parts::unroll::unroll;
use crate::sgemm::{BlockTile, at};
use nvptx_device::intrinsics::{load_f32x2_nc, load_f32x4, load_f32x4_nc};
use nvptx_device::shared::SharedSlice;

/// The most 16-byte vectors one thread moves per tile ([`Staged`] holds this many).
pub const MAX_VECS: usize = 8;

/// A thread's share of one tile, in registers between its load and its store. Only the
/// first [`VECS`](TileVectors::VECS) entries are used; the rest are optimised away.
pub type Staged = [[f32; 4]; MAX_VECS];

/// The tiles of rungs 3 and 4 for the step at depth `k0`, one float at a time (before the
/// 16-byte loads): the block's `BM × BK` tile of `a` (`m × k`) into `a_tile[r * BK + c]` and
/// its `BK × BN` tile of `b` (`k × n`) into `b_tile[r * BN + c]`, zero outside the matrices.
/// Thread `t` of `threads` moves the elements `t, t + threads, …` of each, consecutive threads
/// on consecutive elements of a row.
///
/// # Safety
/// `a`, `b` and `tile` follow the [module contract](crate::sgemm) (`tile` is this block's);
/// `k0 < k`; `a_tile` holds `BM * BK` words and `b_tile` `BK * BN`; `threads` divides both
/// and `t < threads`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn load_tiles_scalar<const BM: usize, const BN: usize, const BK: usize>(
    a: *const f32, b: *const f32, k: u32, n: u32, tile: BlockTile, k0: u32,
    a_tile: SharedSlice<f32>, b_tile: SharedSlice<f32>, t: u32, threads: usize,
) {
    let (bn, bk) = (BN as u32, BK as u32);
    for j in 0..BM * BK / threads {
        let v = t + (j * threads) as u32;
        let (r, c) = (v / bk, v % bk);
        // SAFETY: the global read is guarded by both bounds; r * BK + c = v < BM * BK.
        unsafe {
            let x = if r < tile.rows_left && c < k - k0 {
                *a.add(at(tile.row0 + r, k, k0 + c))
            } else {
                0.0
            };
            a_tile.set_unchecked(v, x);
        }
    }
    for j in 0..BK * BN / threads {
        let v = t + (j * threads) as u32;
        let (r, c) = (v / bn, v % bn);
        // SAFETY: as above; v < BK * BN.
        unsafe {
            let x = if r < k - k0 && c < tile.cols_left {
                *b.add(at(k0 + r, n, tile.col0 + c))
            } else {
                0.0
            };
            b_tile.set_unchecked(v, x);
        }
    }
}

/// Which 16-byte vectors of a `ROWS × COLS` tile each thread moves, and the loads of a
/// thread's vectors that follow from it: [`VecTile`] and [`PaddedTransposedTile`].
pub trait TileVectors {
    /// Rows of the tile.
    const ROWS: usize;
    /// Columns of the tile.
    const COLS: usize;
    /// Vectors each thread moves.
    const VECS: usize;

    /// The tile row and column of thread `t`'s vector `j` (`j < VECS`): the row `< ROWS`, the
    /// column a multiple of 4 and `+ 4 <= COLS`.
    fn position(t: u32, j: usize) -> (u32, u32);

    /// Thread `t`'s vectors of the tile whose top-left element is `src[row0, col0]`, in a
    /// matrix with `ld` columns that has `rows_left` rows and `cols_left` columns from there
    /// on; zero outside the matrix. `vectors_ok` says 16-byte loads are allowed at all:
    /// `ld % 4 == 0` and `src` 16-byte aligned.
    ///
    /// # Safety
    /// `src` points to a row-major matrix of `row0 + rows_left` rows of `ld` floats whose
    /// `row0 + r, col0 + c` offsets fit `u32` wherever `r < rows_left`, `c < cols_left`;
    /// `col0` is a multiple of 4; `cols_left <= ld - col0`; every thread of the block passes
    /// the same values except `t`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn load(
        src: *const f32, ld: u32, row0: u32, col0: u32, rows_left: u32, cols_left: u32,
        vectors_ok: bool, t: u32,
    ) -> Staged {
        // SAFETY: the caller's contract.
        unsafe {
            load_vectors::<Self, false, false>(
                src, ld, row0, col0, rows_left, cols_left, vectors_ok, t,
            )
        }
    }

    /// As [`load`](Self::load), with the fast path's 16-byte loads through the read-only
    /// data path ([`load_f32x4_nc`]).
    ///
    /// # Safety
    /// As [`load`](Self::load), and nothing writes `src` while the kernel runs.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn load_nc(
        src: *const f32, ld: u32, row0: u32, col0: u32, rows_left: u32, cols_left: u32,
        vectors_ok: bool, t: u32,
    ) -> Staged {
        // SAFETY: the caller's contract.
        unsafe {
            load_vectors::<Self, true, false>(
                src, ld, row0, col0, rows_left, cols_left, vectors_ok, t,
            )
        }
    }

    /// As [`load_nc`](Self::load_nc), with 8-byte loads for a whole tile on rows that are 8-
    /// but not 16-byte aligned (an `ld` of `4j + 2`), where [`load_nc`](Self::load_nc) makes
    /// four scalar loads a vector. A branch of its own in the loop: only the multistage
    /// rung's checked loop takes it (the larger rungs' single loop would carry it on their
    /// aligned products too).
    ///
    /// # Safety
    /// As [`load_nc`](Self::load_nc).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn load_nc_pairs(
        src: *const f32, ld: u32, row0: u32, col0: u32, rows_left: u32, cols_left: u32,
        vectors_ok: bool, t: u32,
    ) -> Staged {
        // SAFETY: the caller's contract.
        unsafe {
            load_vectors::<Self, true, true>(
                src, ld, row0, col0, rows_left, cols_left, vectors_ok, t,
            )
        }
    }
}

/// A `ROWS × COLS` tile moved by `THREADS` threads (a type only for its constants and
/// functions).
pub struct VecTile<const ROWS: usize, const COLS: usize, const THREADS: usize>;

impl<const ROWS: usize, const COLS: usize, const THREADS: usize> TileVectors
    for VecTile<ROWS, COLS, THREADS>
{
    const ROWS: usize = ROWS;
    const COLS: usize = COLS;
    const VECS: usize = ROWS * COLS / 4 / THREADS;

    #[inline(always)]
    fn position(t: u32, j: usize) -> (u32, u32) {
        let () = Self::VALID;
        (
            t / Self::PER_ROW as u32 + (j * Self::ROW_STEP) as u32,
            (t % Self::PER_ROW as u32) * 4,
        )
    }
}

impl<const ROWS: usize, const COLS: usize, const THREADS: usize> VecTile<ROWS, COLS, THREADS> {
    /// 16-byte vectors per tile row.
    const PER_ROW: usize = COLS / 4;
    /// Tile rows between a thread's consecutive vectors.
    const ROW_STEP: usize = THREADS / (COLS / 4);
    /// Every thread moves the same whole number of vectors, at the same column each time.
    const VALID: () = assert!(
        COLS.is_multiple_of(4)
            && THREADS.is_multiple_of(COLS / 4)
            && (ROWS * COLS / 4).is_multiple_of(THREADS)
            && ROWS * COLS / 4 >= THREADS
            && ROWS * COLS / 4 / THREADS <= MAX_VECS
    );

    /// Stores `staged` (from [`load`](TileVectors::load) by the same `t`) as rows of the tile:
    /// `dst[offset + r * COLS + c ..+ 4]`, one 16-byte shared store per vector.
    ///
    /// # Safety
    /// `dst` holds `offset + ROWS * COLS` words and `offset` is a multiple of 4.
    #[inline(always)]
    pub unsafe fn store(dst: SharedSlice<f32>, offset: u32, staged: &Staged, t: u32) {
        // SAFETY: the caller's contract; the rows are `COLS` apart.
        unsafe { Self::store_rows::<COLS>(dst, offset, staged, t) }
    }

    /// [`store`](Self::store) into a tile whose rows are `LD >= COLS` floats apart:
    /// `dst[offset + r * LD + c ..+ 4]`.
    ///
    /// # Safety
    /// `dst` holds `offset + ROWS * LD` words, and `offset` and `LD` are multiples of 4.
    #[inline(always)]
    pub unsafe fn store_rows<const LD: usize>(
        dst: SharedSlice<f32>, offset: u32, staged: &Staged, t: u32,
    ) {
        unroll!(Self::VECS, |j| {
            let (r, c) = Self::position(t, j);
            // SAFETY: r < ROWS and c + 4 <= COLS <= LD, so the vector is inside and aligned.
            unsafe { dst.set4_unchecked(offset + r * LD as u32 + c, staged[j]) };
        });
    }

    /// Thread `t`'s vectors of the tile whose top-left element is `src[row0, col0]` (rows
    /// `ld` floats apart), copied global → shared by `cp.async` into
    /// `dst[offset + r * LD + c ..+ 4]` without passing through registers; the caller commits
    /// and waits for them ([`nvptx_device::pipeline`]).
    ///
    /// # Safety
    /// The whole tile is inside the matrix, `ld`, `col0`, `offset` and `LD` are multiples of
    /// 4, `src` is 16-byte aligned, `dst` holds `offset + ROWS * LD` words, and nothing
    /// writes `src` or reads those words of `dst` until the copies have been waited for.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn copy_async<const LD: usize>(
        dst: SharedSlice<f32>, offset: u32, src: *const f32, ld: u32, row0: u32, col0: u32, t: u32,
    ) {
        unroll!(Self::VECS, |j| {
            let (r, c) = Self::position(t, j);
            // SAFETY: the caller's contract: inside both, 16-byte aligned at both ends.
            unsafe {
                nvptx_device::pipeline::cp_async_16(
                    dst,
                    offset + r * LD as u32 + c,
                    src.add(at(row0 + r, ld, col0 + c)),
                )
            };
        });
    }

    /// Stores `staged` transposed, element `[r][c]` at `dst[offset + c * ROWS + r]`: the
    /// tile's columns become contiguous, so a thread's `TM` values of one column of an `a`
    /// tile are one or two 16-byte shared loads instead of `TM` strided ones.
    ///
    /// # Safety
    /// `dst` holds `offset + ROWS * COLS` words.
    #[inline(always)]
    pub unsafe fn store_transposed(dst: SharedSlice<f32>, offset: u32, staged: &Staged, t: u32) {
        unroll!(Self::VECS, |j| {
            let (r, c) = Self::position(t, j);
            unroll!(4, |e| {
                let at = offset + (c + e as u32) * ROWS as u32 + r;
                // SAFETY: c + e < COLS and r < ROWS.
                unsafe { dst.set_unchecked(at, staged[j][e]) };
            });
        });
    }
}

/// The body of every tile load ([`TileVectors::load`], [`TileVectors::load_nc`]): fast path
/// (`ld.global.v4`, or `ld.global.nc.v4` if `NC`) only if the whole tile is inside the matrix
/// and `vectors_ok`; a whole tile whose rows are not 16-byte aligned by scalar loads without
/// bounds checks (by 8-byte loads where the rows are 8-byte aligned, if `PAIRS`); else
/// checked scalar loads, zero outside.
///
/// # Safety
/// As [`TileVectors::load`], and if `NC`, nothing writes `src` while the kernel runs.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn load_vectors<L: TileVectors + ?Sized, const NC: bool, const PAIRS: bool>(
    src: *const f32, ld: u32, row0: u32, col0: u32, rows_left: u32, cols_left: u32,
    vectors_ok: bool, t: u32,
) -> Staged {
    // The 8-byte pairs are read-only loads (only `load_nc_pairs` asks for them).
    const { assert!(!PAIRS || NC) };
    let mut staged = [[0.0f32; 4]; MAX_VECS];
    let inside = rows_left >= L::ROWS as u32 && cols_left >= L::COLS as u32;
    if vectors_ok && inside {
        unroll!(L::VECS, |j| {
            let (r, c) = L::position(t, j);
            // SAFETY: the whole tile is inside the matrix; ld, col0 and c are multiples
            // of 4 and src is 16-byte aligned, so the address is too.
            staged[j] = unsafe {
                let p = src.add(at(row0 + r, ld, col0 + c));
                if NC { load_f32x4_nc(p) } else { load_f32x4(p) }
            };
        });
    } else if PAIRS && inside && rows_aligned8(ld, src) {
        // A whole tile on rows that are 8- but not 16-byte aligned (`ld % 4 == 2`): two
        // 8-byte loads per vector (col0 + c is a multiple of 4, so each pair is aligned).
        unroll!(L::VECS, |j| {
            let (r, c) = L::position(t, j);
            unroll!(2, |h| {
                // SAFETY: the whole tile is inside the matrix; the pair's offset is even and
                // the rows 8-byte aligned.
                let pair =
                    unsafe { load_f32x2_nc(src.add(at(row0 + r, ld, col0 + c + 2 * h as u32))) };
                staged[j][2 * h] = pair[0];
                staged[j][2 * h + 1] = pair[1];
            });
        });
    } else if inside {
        // A whole tile on rows that are not 8-byte aligned (an odd `ld`): four scalar loads
        // per vector, without the per-element bounds checks of an edge tile.
        unroll!(L::VECS, |j| {
            let (r, c) = L::position(t, j);
            unroll!(4, |e| {
                // SAFETY: the whole tile is inside the matrix.
                staged[j][e] = unsafe { *src.add(at(row0 + r, ld, col0 + c + e as u32)) };
            });
        });
    } else {
        unroll!(L::VECS, |j| {
            let (r, c) = L::position(t, j);
            unroll!(4, |e| {
                let ce = c + e as u32;
                if r < rows_left && ce < cols_left {
                    // SAFETY: [row0 + r, col0 + ce] is inside the matrix.
                    staged[j][e] = unsafe { *src.add(at(row0 + r, ld, col0 + ce)) };
                }
            });
        });
    }
    staged
}

/// A `ROWS × COLS` tile (`COLS` = the depth `BK` of an `a` tile) moved by `THREADS` threads
/// into a transposed shared tile whose rows are `LD >= ROWS` floats apart: element `[r][c]`
/// at `dst[offset + c * LD + r]`. With `LD = ROWS + 4` (and `ROWS` a multiple of 32) and
/// each warp storing 16 consecutive rows of at most 2 vectors (8 columns) each, the
/// transposed scalar stores are free of bank conflicts: for one element of the vectors, the
/// lanes of the two columns `4` apart land `4·LD ≡ 16 (mod 32)` banks apart, each on 16
/// consecutive banks. ([`VecTile`] gives a warp `COLS/4` vectors per row: at `COLS = 8` 2-way
/// conflicts without padding, at 16 four-way.)
///
/// Vector `j` of thread `t`: chunk `j % CHUNKS` of 8 columns (`PR = 2` vectors), row
/// `t / PR + (j / CHUNKS) · THREADS / PR`, column `8 · (j % CHUNKS) + 4 · (t % PR)`. Each
/// lane pair reads 32 contiguous bytes of a row: whole sectors where `k % 8 == 0`.
pub struct PaddedTransposedTile<
    const ROWS: usize,
    const COLS: usize,
    const THREADS: usize,
    const LD: usize,
>;

impl<const ROWS: usize, const COLS: usize, const THREADS: usize, const LD: usize> TileVectors
    for PaddedTransposedTile<ROWS, COLS, THREADS, LD>
{
    const ROWS: usize = ROWS;
    const COLS: usize = COLS;
    const VECS: usize = ROWS * COLS / 4 / THREADS;

    #[inline(always)]
    fn position(t: u32, j: usize) -> (u32, u32) {
        let () = Self::VALID;
        let (chunk, block) = (j % Self::CHUNKS, j / Self::CHUNKS);
        (
            t / Self::PR as u32 + (block * Self::ROW_STEP) as u32,
            (chunk * 4 * Self::PR) as u32 + (t % Self::PR as u32) * 4,
        )
    }
}

impl<const ROWS: usize, const COLS: usize, const THREADS: usize, const LD: usize>
    PaddedTransposedTile<ROWS, COLS, THREADS, LD>
{
    /// Vectors per lane group along a row.
    const PR: usize = if COLS >= 8 { 2 } else { 1 };
    /// Column chunks of `4 · PR` floats per row.
    const CHUNKS: usize = COLS / (4 * Self::PR);
    /// Rows between a thread's row blocks.
    const ROW_STEP: usize = THREADS / Self::PR;
    const VALID: () = assert!(
        COLS.is_multiple_of(4 * Self::PR)
            && ROWS.is_multiple_of(Self::ROW_STEP)
            && Self::VECS == Self::CHUNKS * (ROWS / Self::ROW_STEP)
            && Self::VECS >= 1
            && Self::VECS <= MAX_VECS
            && LD >= ROWS
            && LD.is_multiple_of(4)
    );

    /// Stores `staged` (from [`load_nc`](TileVectors::load_nc) by the same `t`) transposed:
    /// element `[r][c]` at `dst[offset + c * LD + r]`.
    ///
    /// # Safety
    /// `dst` holds `offset + COLS * LD` words.
    #[inline(always)]
    pub unsafe fn store_transposed(dst: SharedSlice<f32>, offset: u32, staged: &Staged, t: u32) {
        unroll!(Self::VECS, |j| {
            let (r, c) = Self::position(t, j);
            unroll!(4, |e| {
                let at = offset + (c + e as u32) * LD as u32 + r;
                // SAFETY: c + e < COLS and r < ROWS <= LD.
                unsafe { dst.set_unchecked(at, staged[j][e]) };
            });
        });
    }
}
