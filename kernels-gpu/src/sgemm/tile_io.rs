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

use super::at;
use super::unroll::unroll;
use crate::intrinsics::load_f32x4;
use crate::shared::SharedSlice;

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
        src: *const f32,
        ld: u32,
        row0: u32,
        col0: u32,
        rows_left: u32,
        cols_left: u32,
        vectors_ok: bool,
        t: u32,
    ) -> Staged {
        let mut staged = [[0.0f32; 4]; MAX_VECS];
        if vectors_ok && rows_left >= ROWS as u32 && cols_left >= COLS as u32 {
            unroll!(j in Self::VECS => {
                let (r, c) = Self::position(t, j);
                // SAFETY: the whole tile is inside the matrix; ld, col0 and c are multiples
                // of 4 and src is 16-byte aligned, so the address is too.
                staged[j] = unsafe { load_f32x4(src.add(at(row0 + r, ld, col0 + c))) };
            });
        } else {
            unroll!(j in Self::VECS => {
                let (r, c) = Self::position(t, j);
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
