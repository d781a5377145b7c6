//! Moving a `ROWS × COLS` tile of a row-major operand from global to shared memory 16 bytes
//! at a time, in two halves: [`VecTile::load`] into registers, then [`VecTile::store`] (as it
//! is) or [`VecTile::store_transposed`] into shared memory. The split lets the double-buffered
//! rung keep the next tile's global loads in flight while it computes on this one.
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

use crate::sgemm::at;
use crate::sgemm::parts::unroll::unroll;
use nvptx_device::intrinsics::{load_f32x4, load_f32x4_nc};
use nvptx_device::shared::SharedSlice;

/// The most 16-byte vectors one thread moves per tile ([`Staged`] holds this many).
pub const MAX_VECS: usize = 8;

/// A thread's share of one tile, in registers between its load and its store. Only the
/// first [`VecTile::VECS`] entries are used; the rest are optimised away.
pub type Staged = [[f32; 4]; MAX_VECS];

/// A `ROWS × COLS` tile moved by `THREADS` threads (a type only for its constants and
/// functions).
pub struct VecTile<const ROWS: usize, const COLS: usize, const THREADS: usize>;

impl<const ROWS: usize, const COLS: usize, const THREADS: usize> VecTile<ROWS, COLS, THREADS> {
    /// 16-byte vectors per tile row.
    const PER_ROW: usize = COLS / 4;
    /// Vectors each thread moves.
    pub const VECS: usize = ROWS * COLS / 4 / THREADS;
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

    /// The tile row and column of thread `t`'s vector `j` (`j < VECS`).
    #[inline(always)]
    pub fn position(t: u32, j: usize) -> (u32, u32) {
        let () = Self::VALID;
        (
            t / Self::PER_ROW as u32 + (j * Self::ROW_STEP) as u32,
            (t % Self::PER_ROW as u32) * 4,
        )
    }

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
    pub unsafe fn load(
        src: *const f32, ld: u32, row0: u32, col0: u32, rows_left: u32, cols_left: u32,
        vectors_ok: bool, t: u32,
    ) -> Staged {
        // SAFETY: the caller's contract.
        unsafe {
            load_vectors::<ROWS, COLS, false>(
                Self::VECS,
                |j| Self::position(t, j),
                src,
                ld,
                row0,
                col0,
                rows_left,
                cols_left,
                vectors_ok,
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
    pub unsafe fn load_nc(
        src: *const f32, ld: u32, row0: u32, col0: u32, rows_left: u32, cols_left: u32,
        vectors_ok: bool, t: u32,
    ) -> Staged {
        // SAFETY: the caller's contract.
        unsafe {
            load_vectors::<ROWS, COLS, true>(
                Self::VECS,
                |j| Self::position(t, j),
                src,
                ld,
                row0,
                col0,
                rows_left,
                cols_left,
                vectors_ok,
            )
        }
    }

    /// Stores `staged` (from [`load`](Self::load) by the same `t`) as rows of the tile:
    /// `dst[offset + r * COLS + c ..+ 4]`, one 16-byte shared store per vector.
    ///
    /// # Safety
    /// `dst` holds `offset + ROWS * COLS` words and `offset` is a multiple of 4.
    #[inline(always)]
    pub unsafe fn store(dst: SharedSlice<f32>, offset: u32, staged: &Staged, t: u32) {
        unroll!(j in Self::VECS => {
            let (r, c) = Self::position(t, j);
            // SAFETY: r < ROWS and c + 4 <= COLS, so the vector is inside and aligned.
            unsafe { dst.set4_unchecked(offset + r * COLS as u32 + c, staged[j]) };
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
        unroll!(j in Self::VECS => {
            let (r, c) = Self::position(t, j);
            unroll!(e in 4 => {
                let at = offset + (c + e as u32) * ROWS as u32 + r;
                // SAFETY: c + e < COLS and r < ROWS.
                unsafe { dst.set_unchecked(at, staged[j][e]) };
            });
        });
    }
}

/// The body of every tile load: vector `j < vecs` of the thread is at tile position
/// `position(j)` (row, column; the column a multiple of 4 and `+ 4 <= COLS`, the row
/// `< ROWS`). Fast path (`ld.global.v4`, or `ld.global.nc.v4` if `NC`) only if the whole
/// tile is inside the matrix and `vectors_ok`; else checked scalar loads, zero outside.
///
/// # Safety
/// As [`VecTile::load`], and if `NC`, nothing writes `src` while the kernel runs.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn load_vectors<const ROWS: usize, const COLS: usize, const NC: bool>(
    vecs: usize, position: impl Fn(usize) -> (u32, u32), src: *const f32, ld: u32, row0: u32,
    col0: u32, rows_left: u32, cols_left: u32, vectors_ok: bool,
) -> Staged {
    let mut staged = [[0.0f32; 4]; MAX_VECS];
    if vectors_ok && rows_left >= ROWS as u32 && cols_left >= COLS as u32 {
        unroll!(j in vecs => {
            let (r, c) = position(j);
            // SAFETY: the whole tile is inside the matrix; ld, col0 and c are multiples
            // of 4 and src is 16-byte aligned, so the address is too.
            staged[j] = unsafe {
                let p = src.add(at(row0 + r, ld, col0 + c));
                if NC { load_f32x4_nc(p) } else { load_f32x4(p) }
            };
        });
    } else {
        unroll!(j in vecs => {
            let (r, c) = position(j);
            unroll!(e in 4 => {
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

impl<const ROWS: usize, const COLS: usize, const THREADS: usize, const LD: usize>
    PaddedTransposedTile<ROWS, COLS, THREADS, LD>
{
    /// Vectors per lane group along a row.
    const PR: usize = if COLS >= 8 { 2 } else { 1 };
    /// Column chunks of `4 · PR` floats per row.
    const CHUNKS: usize = COLS / (4 * Self::PR);
    /// Vectors each thread moves.
    pub const VECS: usize = ROWS * COLS / 4 / THREADS;
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

    /// The tile row and column of thread `t`'s vector `j` (`j < VECS`).
    #[inline(always)]
    pub fn position(t: u32, j: usize) -> (u32, u32) {
        let () = Self::VALID;
        let (chunk, block) = (j % Self::CHUNKS, j / Self::CHUNKS);
        (
            t / Self::PR as u32 + (block * Self::ROW_STEP) as u32,
            (chunk * 4 * Self::PR) as u32 + (t % Self::PR as u32) * 4,
        )
    }

    /// Thread `t`'s vectors of the tile, as [`VecTile::load_nc`] (read-only data path).
    ///
    /// # Safety
    /// As [`VecTile::load_nc`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn load_nc(
        src: *const f32, ld: u32, row0: u32, col0: u32, rows_left: u32, cols_left: u32,
        vectors_ok: bool, t: u32,
    ) -> Staged {
        // SAFETY: the caller's contract.
        unsafe {
            load_vectors::<ROWS, COLS, true>(
                Self::VECS,
                |j| Self::position(t, j),
                src,
                ld,
                row0,
                col0,
                rows_left,
                cols_left,
                vectors_ok,
            )
        }
    }

    /// Stores `staged` (from [`load_nc`](Self::load_nc) by the same `t`) transposed:
    /// element `[r][c]` at `dst[offset + c * LD + r]`.
    ///
    /// # Safety
    /// `dst` holds `offset + COLS * LD` words.
    #[inline(always)]
    pub unsafe fn store_transposed(dst: SharedSlice<f32>, offset: u32, staged: &Staged, t: u32) {
        unroll!(j in Self::VECS => {
            let (r, c) = Self::position(t, j);
            unroll!(e in 4 => {
                let at = offset + (c + e as u32) * LD as u32 + r;
                // SAFETY: c + e < COLS and r < ROWS <= LD.
                unsafe { dst.set_unchecked(at, staged[j][e]) };
            });
        });
    }
}
