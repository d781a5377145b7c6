//! Repacking a matrix into rows of another length: the copy that puts an operand whose rows
//! are not 16-byte aligned (`k` or `n` not a multiple of 4) into rows that are, padded with
//! zeros, so that every block of a product runs the rungs' 16-byte fast path; and the copy
//! of such a product's output back into the caller's rows.
//!
//! [`sgemm_repack`] writes a dense `rows × cols` matrix from the top-left
//! `src_rows × src_cols` of a matrix whose rows are `ld` floats apart, zero past it. Zero
//! columns and rows appended to the depth `k` of both operands add exact zero products at
//! the end of each FMA chain, which the rungs add anyway for a partial last k-tile (they
//! zero-fill it), so a product of repacked operands has the bits of the plain one.
//!
//! Rung 14 ([`super::wgmma`]) multiplies operands packed for `wgmma`: [`sgemm_repack_tf32`]
//! is the same copy with every value rounded to TF32 (`a`, rows of `k` padded), and
//! [`sgemm_transpose_tf32`] writes `b` transposed and rounded (`n` rows of `k` padded), so
//! that both run along the depth as `wgmma` needs them. Rung 15 ([`super::mma_packed`])
//! multiplies the same packed `b` with `mma.sync`, and `a` packed only where its rows are
//! not 16-byte aligned (it rounds `a`'s fragments itself: [`PackedConfig::rounds_a`]);
//! [`PACKED_CONFIGS`] lists both rungs' configurations. Rung 17's TF32 rows take operands
//! as these copies lay them out but unrounded ([`sgemm_repack`], [`sgemm_transpose`]): their
//! copies into shared memory round them.

use super::global::is_aligned16;
use super::unroll::unroll;
use nvptx_device::catalogue::KernelSpec;
use nvptx_device::intrinsics::{F32x4, opaque_u32, opaque_usize};
use nvptx_device::mma::{to_bf16, to_f16, to_tf32};
use nvptx_device::pipeline::{cp_async_16, cp_async_16_zfill};
use nvptx_device::shared::SharedSlice;
use nvptx_device::thread;
use nvptx_device::wgmma::{ATOM_ROWS, ROW_WORDS, sw128_index};

/// Threads per block of [`sgemm_repack`], each writing four consecutive floats of a row.
pub const REPACK_BLOCK: u32 = 256;

/// Thread `t`'s four outputs `dst[r·cols + c ..+ 4]` (fewer at the end of a row):
/// `src[r·ld + c]` where `r < src_rows` and `c < src_cols`, else zero. Row `r` and column
/// `c = 4·(t % quads)` come from the thread's index, with `quads = cdiv(cols, 4)`; one
/// 16-byte store where `cols % 4 == 0` and `dst` is 16-byte aligned.
///
/// Launch 1D with `cdiv(rows · cdiv(cols, 4), REPACK_BLOCK)` blocks of [`REPACK_BLOCK`].
///
/// # Safety
/// `src` holds `src_rows` rows of `ld >= src_cols` floats (the last one at least
/// `src_cols`); `dst` holds `rows · cols` floats and does not overlap `src`;
/// `rows · cdiv(cols, 4)` and `src_rows · ld` fit `u32`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_repack(
    src: *const f32, ld: u32, src_rows: u32, src_cols: u32, dst: *mut f32, rows: u32, cols: u32,
) {
    // SAFETY: forwarded.
    unsafe { repack::<false>(src, ld, src_rows, src_cols, dst, rows, cols) }
}

/// [`sgemm_repack`] with every copied value rounded to TF32 ([`to_tf32`]): `a` packed for
/// rungs 14 and 15. Launched as [`sgemm_repack`] ([`REPACK_TF32`]).
///
/// # Safety
/// As [`sgemm_repack`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_repack_tf32(
    src: *const f32, ld: u32, src_rows: u32, src_cols: u32, dst: *mut f32, rows: u32, cols: u32,
) {
    // SAFETY: forwarded.
    unsafe { repack::<true>(src, ld, src_rows, src_cols, dst, rows, cols) }
}

/// [`sgemm_repack`], rounding to TF32 where `TF32`.
///
/// # Safety
/// As [`sgemm_repack`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn repack<const TF32: bool>(
    src: *const f32, ld: u32, src_rows: u32, src_cols: u32, dst: *mut f32, rows: u32, cols: u32,
) {
    let quads = cols.div_ceil(4);
    let t = thread::index_1d();
    if quads == 0 || t >= rows * quads {
        return;
    }
    let (r, c0) = (t / quads, 4 * (t % quads));
    let mut v = [0.0f32; 4];
    unroll!(4, |e| {
        let c = c0 + e as u32;
        if r < src_rows && c < src_cols {
            // SAFETY: r < src_rows and c < src_cols <= ld: inside `src`.
            let x = unsafe { *src.add((r * ld + c) as usize) };
            v[e] = if TF32 { f32::from_bits(to_tf32(x)) } else { x };
        }
    });
    let at = r as usize * cols as usize + c0 as usize;
    if cols.is_multiple_of(4) && is_aligned16(dst) {
        // SAFETY: c0 + 4 <= cols, so the four floats are inside row r of `dst`, and the
        // address is 16-byte aligned (cols and c0 multiples of 4, dst aligned).
        unsafe { *(dst.add(at) as *mut F32x4) = F32x4(v) };
    } else {
        unroll!(4, |e| {
            if c0 + (e as u32) < cols {
                // SAFETY: c0 + e < cols: inside row r of `dst`.
                unsafe { *dst.add(at + e) = v[e] };
            }
        });
    }
}

/// Thread `t`'s four 2-byte outputs `dst[r·cols + c ..+ 4]` (fewer at the end of a row):
/// `value(r, c)` where `r < src_rows` and `c < src_cols`, else zero; one 8-byte store where
/// `cols % 4 == 0` and `dst` is 8-byte aligned. Launched as [`sgemm_repack`].
///
/// # Safety
/// `value(r, c)` may be called for any `r < src_rows`, `c < src_cols`; `dst` holds
/// `rows · cols` elements; `rows · cdiv(cols, 4)` fits `u32`.
#[inline(always)]
unsafe fn repack_2byte(
    src_rows: u32, src_cols: u32, dst: *mut u16, rows: u32, cols: u32,
    value: impl Fn(u32, u32) -> u16,
) {
    let quads = cols.div_ceil(4);
    let t = thread::index_1d();
    if quads == 0 || t >= rows * quads {
        return;
    }
    let (r, c0) = (t / quads, 4 * (t % quads));
    let mut v = [0u16; 4];
    unroll!(4, |e| {
        let c = c0 + e as u32;
        if r < src_rows && c < src_cols {
            v[e] = value(r, c);
        }
    });
    let at = r as usize * cols as usize + c0 as usize;
    if cols.is_multiple_of(4) && dst.addr().is_multiple_of(8) {
        let word = |i: usize| v[2 * i] as u32 | (v[2 * i + 1] as u32) << 16;
        // SAFETY: c0 + 4 <= cols, so the four elements are inside row r of `dst`, 8-byte
        // aligned (cols and c0 multiples of 4, dst aligned).
        unsafe { *(dst.add(at) as *mut [u32; 2]) = [word(0), word(1)] };
    } else {
        unroll!(4, |e| {
            if c0 + (e as u32) < cols {
                // SAFETY: c0 + e < cols: inside row r of `dst`.
                unsafe { *dst.add(at + e) = v[e] };
            }
        });
    }
}

/// [`sgemm_repack`] for 2-byte elements (`bf16` or `f16` bits): rows of 16-bit operands
/// whose length is not a multiple of 8 padded for the tensor-memory accelerator (rung 17).
///
/// # Safety
/// As [`sgemm_repack`], in 2-byte elements.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn repack_16bit(
    src: *const u16, ld: u32, src_rows: u32, src_cols: u32, dst: *mut u16, rows: u32, cols: u32,
) {
    // SAFETY: inside `src` for r < src_rows, c < src_cols <= ld (the contract).
    let value = |r: u32, c: u32| unsafe { *src.add((r * ld + c) as usize) };
    // SAFETY: forwarded.
    unsafe { repack_2byte(src_rows, src_cols, dst, rows, cols, value) }
}

/// [`sgemm_repack`] from f32 to `bf16` bits, rounded to nearest even ([`to_bf16`]), or with
/// `F16` to `f16` bits ([`to_f16`]): f32 operands for rung 17, padded on the way where their
/// rows need it (entry points `convert_bf16` and `convert_f16`).
///
/// # Safety
/// As [`sgemm_repack`], `dst` in 2-byte elements.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn convert_16bit<const F16: bool>(
    src: *const f32, ld: u32, src_rows: u32, src_cols: u32, dst: *mut u16, rows: u32, cols: u32,
) {
    let value = |r: u32, c: u32| {
        // SAFETY: inside `src` for r < src_rows, c < src_cols <= ld (the contract).
        let x = unsafe { *src.add((r * ld + c) as usize) };
        if F16 { to_f16(x) } else { to_bf16(x) }
    };
    // SAFETY: forwarded.
    unsafe { repack_2byte(src_rows, src_cols, dst, rows, cols, value) }
}

/// Edge of the square tiles [`sgemm_transpose_tf32`] moves through shared memory.
pub const TRANSPOSE_TILE: u32 = 32;
/// Rows of threads of a [`sgemm_transpose_tf32`] block (of [`TRANSPOSE_TILE`] threads each):
/// each thread moves `TRANSPOSE_TILE / TRANSPOSE_ROWS` values of each tile.
pub const TRANSPOSE_ROWS: u32 = 8;
/// Tiles a [`sgemm_transpose_tf32`] block moves, stacked along the depth (the rows of
/// `src`): each thread has this many loads in flight before the block's one barrier, which
/// is what keeps the copy near the device's bandwidth (one tile a block left it waiting on
/// the loads' latency).
pub const TRANSPOSE_STACK: u32 = 4;
/// Depths (rows of `src`, columns of the packed `b`) a [`sgemm_transpose_tf32`] block covers.
pub const TRANSPOSE_DEPTHS: u32 = TRANSPOSE_TILE * TRANSPOSE_STACK;

/// `b` packed for rungs 14 and 15: `dst[j·ld + i]` = `src[i·cols + j]` rounded to TF32 for
/// `i < rows`, zero for `rows <= i < ld`, for every `j < cols` — the `rows × cols` matrix
/// `src` transposed into `cols` rows of `ld`. Each block moves [`TRANSPOSE_STACK`] 32 × 32
/// tiles, stacked along `i`, through shared memory, so that it reads and writes whole
/// 128-byte rows: with 16-byte loads and stores where `cols` and `ld` are multiples of 4
/// and both matrices 16-byte aligned (each thread one quad of each tile each way), else
/// one float at a time (four of each tile each way). Every load of a block is issued
/// before its one barrier.
///
/// Launch with 32 × 8 threads per block on a `cdiv(cols, 32) × cdiv(ld, TRANSPOSE_DEPTHS)`
/// grid ([`TRANSPOSE_TF32`] for an `ld × cols` extent).
///
/// # Safety
/// `src` holds `rows · cols` floats, `dst` holds `cols · ld` and does not overlap it,
/// `rows <= ld`, and both products fit `u32`.
#[inline(always)]
pub unsafe fn sgemm_transpose_tf32(src: *const f32, rows: u32, cols: u32, dst: *mut f32, ld: u32) {
    // SAFETY: forwarded.
    unsafe { transpose::<true>(src, rows, cols, dst, ld) }
}

/// [`sgemm_transpose_tf32`] without the rounding: `b` transposed for rung 17's TF32 rows,
/// whose copies round it ([`TRANSPOSE`]).
///
/// # Safety
/// As [`sgemm_transpose_tf32`].
#[inline(always)]
pub unsafe fn sgemm_transpose(src: *const f32, rows: u32, cols: u32, dst: *mut f32, ld: u32) {
    // SAFETY: forwarded.
    unsafe { transpose::<false>(src, rows, cols, dst, ld) }
}

/// [`sgemm_transpose_tf32`], rounding to TF32 where `TF32`.
///
/// # Safety
/// As [`sgemm_transpose_tf32`].
#[inline(always)]
unsafe fn transpose<const TF32: bool>(
    src: *const f32, rows: u32, cols: u32, dst: *mut f32, ld: u32,
) {
    const EDGE: u32 = TRANSPOSE_TILE;
    const PITCH: u32 = EDGE + 1;
    const STACK: usize = TRANSPOSE_STACK as usize;
    const TILE_WORDS: u32 = EDGE * PITCH;
    // Tile `s`: tile[s][r][c] (r along `rows`, c along `cols`), a column of padding so that
    // reading down a column is conflict-free.
    let tile = nvptx_device::shared_array!(f32; (TILE_WORDS * TRANSPOSE_STACK) as usize);
    let (j0, i0) = (
        thread::block_idx_x() * EDGE,
        thread::block_idx_y() * TRANSPOSE_DEPTHS,
    );
    let round = |x: f32| if TF32 { f32::from_bits(to_tf32(x)) } else { x };
    let vector =
        cols.is_multiple_of(4) && ld.is_multiple_of(4) && is_aligned16(src) && is_aligned16(dst);
    if vector {
        // Thread `q + 8·r`: quad `q` of row `r` of each tile, in and out.
        let lin = thread::thread_idx_y() * EDGE + thread::thread_idx_x();
        let (q, r) = (lin % 8, lin / 8);
        let j = j0 + 4 * q;
        let mut v = [[0.0f32; 4]; STACK];
        unroll!(STACK, |s| {
            let i = i0 + EDGE * s as u32 + r;
            if i < rows && j < cols {
                // SAFETY: i < rows and j + 4 <= cols (cols % 4 == 0): inside `src`, 16-byte
                // aligned (cols, j multiples of 4, `src` aligned).
                v[s] = unsafe { *(src.add((i * cols + j) as usize) as *const F32x4) }.0;
            }
        });
        unroll!(STACK, |s| {
            let at = TILE_WORDS * s as u32 + r * PITCH + 4 * q;
            unroll!(4, |e| tile.set(at + e as u32, round(v[s][e])));
        });
        thread::sync_threads();
        let jj = j0 + r;
        unroll!(STACK, |s| {
            let ii = i0 + EDGE * s as u32 + 4 * q;
            if jj < cols && ii < ld {
                let mut w = [0.0f32; 4];
                let at = TILE_WORDS * s as u32 + r;
                unroll!(4, |e| w[e] = tile.get(at + (4 * q + e as u32) * PITCH));
                // SAFETY: jj < cols and ii + 4 <= ld (ld % 4 == 0): inside `dst`, aligned.
                unsafe { *(dst.add((jj * ld + ii) as usize) as *mut F32x4) = F32x4(w) };
            }
        });
    } else {
        let (tx, ty) = (thread::thread_idx_x(), thread::thread_idx_y());
        unroll!(STACK, |s| {
            unroll!((EDGE / TRANSPOSE_ROWS) as usize, |u| {
                let row = ty + TRANSPOSE_ROWS * u as u32;
                let (i, j) = (i0 + EDGE * s as u32 + row, j0 + tx);
                let v = if i < rows && j < cols {
                    // SAFETY: i < rows and j < cols: inside `src`.
                    round(unsafe { *src.add((i * cols + j) as usize) })
                } else {
                    0.0
                };
                tile.set(TILE_WORDS * s as u32 + row * PITCH + tx, v);
            });
        });
        thread::sync_threads();
        unroll!(STACK, |s| {
            unroll!((EDGE / TRANSPOSE_ROWS) as usize, |u| {
                let row = ty + TRANSPOSE_ROWS * u as u32;
                let (j, i) = (j0 + row, i0 + EDGE * s as u32 + tx);
                if j < cols && i < ld {
                    let v = tile.get(TILE_WORDS * s as u32 + tx * PITCH + row);
                    // SAFETY: j < cols and i < ld: inside `dst`.
                    unsafe { *dst.add((j * ld + i) as usize) = v };
                }
            });
        });
    }
}

/// How to launch entry point `$entry`, as [`REPACK`] describes.
#[cfg(not(target_arch = "nvptx64"))]
macro_rules! repack_spec {
    ($entry:ident) => {
        KernelSpec::items(
            stringify!($entry),
            entry::params::$entry,
            REPACK_BLOCK,
            REPACK_BLOCK,
        )
    };
}

/// How to launch [`sgemm_repack`] for a `rows × cols` destination (as items: its
/// `rows · cdiv(cols, 4)` quads). (Host only, as the catalogue.)
#[cfg(not(target_arch = "nvptx64"))]
pub const REPACK: KernelSpec = repack_spec!(sgemm_repack);

/// How to launch [`repack_16bit`] and [`convert_16bit`]'s `convert_bf16` and `convert_f16`:
/// as [`REPACK`], one spec each.
#[cfg(not(target_arch = "nvptx64"))]
pub const REPACK_16BIT: [KernelSpec; 3] = [
    repack_spec!(repack_16bit),
    repack_spec!(convert_bf16),
    repack_spec!(convert_f16),
];

/// How to launch [`sgemm_repack_tf32`], as [`REPACK`].
#[cfg(not(target_arch = "nvptx64"))]
pub const REPACK_TF32: KernelSpec = repack_spec!(sgemm_repack_tf32);

/// How to launch transposing entry point `$entry`, as [`TRANSPOSE_TF32`] describes.
#[cfg(not(target_arch = "nvptx64"))]
macro_rules! transpose_spec {
    ($entry:ident) => {
        KernelSpec {
            entry: stringify!($entry),
            params: entry::params::$entry,
            block: nvptx_device::thread::Dim3::xy(TRANSPOSE_TILE, TRANSPOSE_ROWS),
            grid: nvptx_device::catalogue::GridRule::Tiles {
                rows: TRANSPOSE_DEPTHS,
                cols: TRANSPOSE_TILE,
            },
            static_shared_bytes: TRANSPOSE_STACK * TRANSPOSE_TILE * (TRANSPOSE_TILE + 1) * 4,
            dynamic_shared: nvptx_device::catalogue::DynamicShared::None,
            launch_bounds: None,
            cluster: 1,
        }
    };
}

/// How to launch [`sgemm_transpose_tf32`]: a tile rule over its `ld × cols` destination
/// seen transposed (`rows`: the `ld` depths, `cols`: the columns of `src`).
#[cfg(not(target_arch = "nvptx64"))]
pub const TRANSPOSE_TF32: KernelSpec = transpose_spec!(sgemm_transpose_tf32);

/// How to launch [`sgemm_transpose`], as [`TRANSPOSE_TF32`].
#[cfg(not(target_arch = "nvptx64"))]
pub const TRANSPOSE: KernelSpec = transpose_spec!(sgemm_transpose);

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    sgemm_repack(
        src: *const f32, ld: u32, src_rows: u32, src_cols: u32, dst: *mut f32, rows: u32,
        cols: u32
    ) => sgemm_repack;
    sgemm_repack_tf32(
        src: *const f32, ld: u32, src_rows: u32, src_cols: u32, dst: *mut f32, rows: u32,
        cols: u32
    ) => sgemm_repack_tf32;
    sgemm_transpose_tf32(src: *const f32, rows: u32, cols: u32, dst: *mut f32, ld: u32)
        => sgemm_transpose_tf32;
    sgemm_transpose(src: *const f32, rows: u32, cols: u32, dst: *mut f32, ld: u32)
        => sgemm_transpose;
    repack_16bit(
        src: *const u16, ld: u32, src_rows: u32, src_cols: u32, dst: *mut u16, rows: u32,
        cols: u32
    ) => repack_16bit;
    convert_bf16(
        src: *const f32, ld: u32, src_rows: u32, src_cols: u32, dst: *mut u16, rows: u32,
        cols: u32
    ) => convert_16bit::<false>;
    convert_f16(
        src: *const f32, ld: u32, src_rows: u32, src_cols: u32, dst: *mut u16, rows: u32,
        cols: u32
    ) => convert_16bit::<true>;
}

/// Thread `t`'s share, in a block of `threads`, of the `cp.async` copies of a packed
/// operand's k-tiles into stages, as rungs 14 and 15 read them: depths `k0..k0 + 32` of the
/// operand's rows `row0..row0 + rows` (`src` holds `limit` rows of `k` words), one 128-byte
/// row per tile row in the 128-byte swizzle ([`sw128_index`]). Chunk `v` of a tile is row
/// `v / 8`, depths `4·(v % 8)..+4`; the thread copies chunks `t + j·threads` below `8·rows`.
/// Rows past `limit` and depths past `k` are zero-filled without a read.
///
/// Made once per block, so that a k-tile costs little more than its copies: all the
/// thread's chunks lie at one depth, `threads / 8` rows apart, so each one's source is a
/// fixed stride past the one before and, where `threads` is a multiple of 64 (the rows then
/// 8 apart, a whole swizzle atom), its place in a stage a constant past the first. A k-tile
/// whose rows and depths all lie inside the operand, as nearly all do, is copied without a
/// bounds check. (Computing every chunk's index, bounds and swizzle afresh cost seven
/// integer instructions per copy, as many as the tile's `mma` in rung 15.)
#[derive(Clone, Copy)]
pub struct PackedCopy {
    /// The operand, read at no other place: what a zero-filled chunk names as its source.
    origin: *const f32,
    /// The thread's first chunk at depth 0: row `row0 + t / 8`, depth `4·(t % 8)`.
    src: *const f32,
    /// Words from one of the thread's chunks to the next in `src`: `threads / 8` rows.
    stride: usize,
    /// The thread's first row of the tile, `t / 8`, and the depth of its chunks in a k-tile.
    r0: u32,
    c: u32,
    /// Rows of the operand from the tile's first (the tile's rows past them are zero).
    rows_left: u32,
    rows: u32,
    k: u32,
    threads: u32,
}

impl PackedCopy {
    /// Thread `t`'s copies, in a block of `threads` (a multiple of 8), of the `rows`-row
    /// tiles of the packed operand `src` (`limit` rows of `k` words) from row `row0 <
    /// limit`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        rows: u32, row0: u32, limit: u32, src: *const f32, k: u32, t: u32, threads: u32,
    ) -> Self {
        let (r0, c) = (t / 8, 4 * (t % 8));
        Self {
            origin: src,
            src: src.wrapping_add((row0 + r0) as usize * k as usize + c as usize),
            stride: (threads / 8) as usize * k as usize,
            r0,
            c,
            rows_left: limit - row0,
            rows,
            k,
            threads,
        }
    }

    /// Issues the copies of k-tile `k0..k0 + 32` into the tile at word `base` of `ring`.
    /// `rows` and `threads` are constants after inlining, so the loops unroll.
    ///
    /// # Safety
    /// `src` is 16-byte aligned and holds `limit` rows of `k` words, `k` a multiple of 4
    /// and `limit · k` fitting `u32`; the tile lies inside `ring`, which nobody reads before
    /// the copies are waited for and a barrier passed.
    #[inline(always)]
    pub unsafe fn issue(&self, ring: SharedSlice<f32>, base: u32, k0: u32) {
        let (rows, threads) = (self.rows, self.threads);
        let chunks = rows * ROW_WORDS / 4;
        let step = threads / 8;
        // Chunk j: its row of the tile, its word in the stage and its source. The first
        // word and the stride go through `opaque_*`, so that each copy's addresses are
        // one register plus a constant, or the last source plus the stride (see there).
        let row = |j: usize| self.r0 + j as u32 * step;
        let first = opaque_u32(base + sw128_index(self.r0, self.c));
        let at = |j: usize| {
            if step.is_multiple_of(ATOM_ROWS) {
                first + j as u32 * step * ROW_WORDS
            } else {
                base + sw128_index(row(j), self.c)
            }
        };
        let (src, stride) = (
            self.src.wrapping_add(k0 as usize),
            opaque_usize(self.stride),
        );
        // Always true for a whole number of chunks per thread (constants: the check folds).
        let exists = |j: usize| chunks.is_multiple_of(threads) || row(j) < rows;
        if self.rows_left >= rows && k0 + ROW_WORDS <= self.k {
            let mut from = src;
            unroll!(chunks.div_ceil(threads) as usize, |j| {
                if exists(j) {
                    // SAFETY: the chunk's row and depths lie inside `src` (the tile's rows
                    // and depths all do), 16-byte aligned; it lies inside the tile.
                    unsafe { cp_async_16(ring, at(j), from) };
                }
                from = from.wrapping_add(stride);
            });
        } else {
            let from = |j: usize| src.wrapping_add(j * stride);
            let depth_inside = k0 + self.c < self.k;
            unroll!(chunks.div_ceil(threads) as usize, |j| {
                if exists(j) {
                    let full = row(j) < self.rows_left && depth_inside;
                    // SAFETY: where `full`, the chunk lies inside `src` (k % 4 == 0), 16-byte
                    // aligned; otherwise the operand itself is an aligned placeholder that is
                    // not read. The chunk lies inside the tile, 16-byte aligned.
                    unsafe {
                        cp_async_16_zfill(
                            ring,
                            at(j),
                            if full { from(j) } else { self.origin },
                            full,
                        )
                    };
                }
            });
        }
    }
}

/// One configuration of a rung that multiplies packed TF32 operands (`a` as
/// [`sgemm_repack_tf32`] writes it, `b` as [`sgemm_transpose_tf32`] does): rung 14's `wgmma`
/// ([`super::wgmma::WGMMA_CONFIGS`], Hopper only) and rung 15's `mma.sync`
/// ([`super::mma_packed::MMA_PACKED_CONFIGS`]). How to launch it and what runs it.
#[derive(Clone, Copy, Debug)]
pub struct PackedConfig {
    /// The name on command lines and in reports (the entry point with `-` for `_`).
    pub name: &'static str,
    /// Its tile sizes and shared memory.
    pub geometry: super::Geometry,
    /// How to launch it, on packed operands `(a, bt, out, m, n, k)`.
    pub spec: KernelSpec,
    /// Whether it is its rung's default.
    pub default: bool,
    /// Whether it rounds its `a` fragments itself (rung 15, whose `mma` operands pass
    /// through registers; rung 14's `wgmma` reads `a` from shared memory as it is), so that
    /// an `a` whose rows are already 16-byte aligned (`k % 4 == 0`) needs no packing: see
    /// the host's `packed::packs_a`. Rounding a rounded value again changes nothing.
    pub rounds_a: bool,
    /// Where the configuration's entry takes tensor maps of the packed operands instead of
    /// pointers to them (rung 15 on a Hopper, [`super::mma_packed::sgemm_mma_tma`]): the
    /// rows of the tiles to map them in.
    pub tma: Option<super::mma_packed::TmaBoxes>,
    /// The entry point as the simulator calls it.
    #[cfg(not(target_arch = "nvptx64"))]
    pub sim: super::MatmulEntry,
}

/// One row of a packed rung's table: the [`PackedConfig`] of entry point `$entry` (the
/// calling module's `entry::$entry` is its simulator twin), launched as `$geometry` says,
/// with launch bounds of `$min_blocks` blocks per SM (an `Option<u32>`), its rung's default
/// where `$default`, rounding its own `a` fragments where `$rounds_a`.
macro_rules! packed_config {
    ($entry:ident, $geometry:expr, $min_blocks:expr, $default:expr, $rounds_a:expr) => {
        PackedConfig {
            name: dashed!(stringify!($entry)),
            geometry: $geometry,
            spec: $geometry.spec(stringify!($entry), $min_blocks),
            default: $default,
            rounds_a: $rounds_a,
            tma: None,
            #[cfg(not(target_arch = "nvptx64"))]
            sim: entry::$entry,
        }
    };
}
pub(super) use packed_config;

/// Rung 14's configurations, then rung 15's, then rung 15's on the tensor-memory
/// accelerator: every product of packed TF32 operands.
pub const PACKED_CONFIGS: [&PackedConfig; PACKED_COUNT] = {
    let (wgmma, mma, tma) = (
        super::wgmma::WGMMA_CONFIGS,
        super::mma_packed::MMA_PACKED_CONFIGS,
        super::mma_packed::MMA_TMA_CONFIGS,
    );
    let mut all = [&wgmma[0]; PACKED_COUNT];
    let mut i = 0;
    while i < PACKED_COUNT {
        all[i] = if i < wgmma.len() {
            &wgmma[i]
        } else if i < wgmma.len() + mma.len() {
            &mma[i - wgmma.len()]
        } else {
            &tma[i - wgmma.len() - mma.len()]
        };
        i += 1;
    }
    all
};

/// How many [`PACKED_CONFIGS`] there are.
pub const PACKED_COUNT: usize = super::wgmma::WGMMA_CONFIGS.len()
    + super::mma_packed::MMA_PACKED_CONFIGS.len()
    + super::mma_packed::MMA_TMA_CONFIGS.len();
