//! The block of the tensor-core rungs 11 and 13 ([`tensor_core`](crate::sgemm::tensor_core),
//! [`bf16`](crate::sgemm::bf16)): a `BM × BN` block tile of warp tiles of `MI × NI` `mma`
//! tiles (16 × 8 each), operand tiles `BK` deep copied into shared stages in 16-byte chunks
//! of `CHUNK` elements (4 f32, or 8 BF16) by `THREADS` threads. [`MmaTile`] holds what the
//! rungs share; each rung adds its copies, loads and `mma`s in an `impl` of its own
//! (`#[mma_tiled(CHUNK)] impl MmaTile { .. }`).

use crate::sgemm::tensor_core::{chunk_of, warp_origin};
use nvptx_device::warp::WARP_SIZE;

/// `#[mma_tiled]` on the [`MmaTile`] type, its `impl` block or a kernel makes it generic over
/// the block parameters `BM, BN, BK, MI, NI` (then, for the type, `THREADS, CHUNK`), as
/// [`MmaTile`] describes them, before the item's own generics: the one place they are
/// listed.
///
/// * `#[mma_tiled] pub unsafe fn name<const X: T, .., E: Epilogue>(args) { body }` (any own
///   const generics, then optionally `E`);
/// * `#[mma_tiled] pub struct MmaTile;` and `#[mma_tiled] impl MmaTile { items }`;
/// * `#[mma_tiled(4)] impl MmaTile { items }`: items of `MmaTile<.., THREADS, 4>` alone;
/// * `#[mma_tiled(packed)]` on a kernel: `BM, BN, MI, NI` alone, for rung 15, whose depth is
///   fixed.
///
/// As [`warp_tiled`](crate::sgemm::parts::warp_tile::warp_tiled): the body names `BM` and
/// the others as its own, and rustfmt formats the items as any other.
macro_rules! mma_tiled {
    attr() ($(#[$attr:meta])* $vis:vis unsafe fn $name:ident
        <$(const $c:ident: $ct:ty),* $(, E: $bound:path)? $(,)?>($($arg:tt)*) $body:block) => {
        $(#[$attr])*
        $vis unsafe fn $name<
            const BM: usize, const BN: usize, const BK: usize, const MI: usize, const NI: usize,
            $(const $c: $ct,)* $(E: $bound)?
        >($($arg)*) $body
    };
    attr(packed) ($(#[$attr:meta])* $vis:vis unsafe fn $name:ident
        <$(const $c:ident: $ct:ty),* $(, E: $bound:path)? $(,)?>($($arg:tt)*) $body:block) => {
        $(#[$attr])*
        $vis unsafe fn $name<
            const BM: usize, const BN: usize, const MI: usize, const NI: usize,
            $(const $c: $ct,)* $(E: $bound)?
        >($($arg)*) $body
    };
    attr() ($(#[$attr:meta])* $vis:vis struct MmaTile;) => {
        $(#[$attr])*
        $vis struct MmaTile<
            const BM: usize, const BN: usize, const BK: usize, const MI: usize, const NI: usize,
            const THREADS: usize, const CHUNK: usize,
        >;
    };
    attr() ($(#[$attr:meta])* impl MmaTile $items:tt) => {
        $(#[$attr])*
        impl<
            const BM: usize, const BN: usize, const BK: usize, const MI: usize, const NI: usize,
            const THREADS: usize, const CHUNK: usize,
        > MmaTile<BM, BN, BK, MI, NI, THREADS, CHUNK> $items
    };
    attr($chunk:literal) ($(#[$attr:meta])* impl MmaTile $items:tt) => {
        $(#[$attr])*
        impl<
            const BM: usize, const BN: usize, const BK: usize, const MI: usize, const NI: usize,
            const THREADS: usize,
        > $crate::sgemm::parts::mma_tile::MmaTile<BM, BN, BK, MI, NI, THREADS, $chunk> $items
    };
}
pub(crate) use mma_tiled;

/// The parameters of a tensor-core block (a type only for its constants and functions):
/// block tile `BM × BN`, shared tiles `BK` deep, warp tiles of `MI × NI` mma tiles
/// (`WM × WN = 16·MI × 8·NI` outputs), `THREADS = (BM/WM)·(BN/WN)·32`, and `CHUNK` elements
/// per 16-byte chunk of a stage.
#[mma_tiled]
pub struct MmaTile;

#[mma_tiled]
impl MmaTile {
    /// Rows of a warp tile.
    pub const WM: usize = 16 * MI;
    /// Columns of a warp tile.
    pub const WN: usize = 8 * NI;
    /// Elements of a 16-byte chunk.
    pub const ELEMS: u32 = CHUNK as u32;
    /// 16-byte chunks per thread of one `a` tile.
    pub const A_COPIES: usize = BM * BK / CHUNK / THREADS;
    /// 16-byte chunks per thread of one `b` tile.
    pub const B_COPIES: usize = BK * BN / CHUNK / THREADS;
    /// Words of one stage of the `a` ring.
    pub const A_STAGE: u32 = (BM * BK * 4 / CHUNK) as u32;
    /// Words of one stage of the `b` ring.
    pub const B_STAGE: u32 = (BK * BN * 4 / CHUNK) as u32;
    /// The parameters fit: warps tile the block in whole mma tiles, and every thread copies
    /// the same whole number of chunks. (Each rung adds what its swizzles need.)
    pub const FITS: bool = BM.is_multiple_of(16 * MI)
        && BN.is_multiple_of(8 * NI)
        && THREADS == (BM / (16 * MI)) * (BN / (8 * NI)) * WARP_SIZE as usize
        && (BM * BK / CHUNK).is_multiple_of(THREADS)
        && (BK * BN / CHUNK).is_multiple_of(THREADS)
        && BM * BK / CHUNK >= THREADS
        && BK * BN / CHUNK >= THREADS;

    /// The first row and column of thread `t`'s warp tile in the block tile.
    #[inline(always)]
    pub fn warp_of(t: u32) -> (u32, u32) {
        warp_origin(t, BN, Self::WM, Self::WN)
    }

    /// Row and first word of thread `t`'s chunk `j` of an `a` tile: consecutive threads on
    /// consecutive chunks of a row, so a warp reads whole rows of `a`.
    #[inline(always)]
    pub fn a_chunk(t: u32, j: usize) -> (u32, u32) {
        chunk_of(t, j, THREADS, BK / CHUNK)
    }

    /// Row and first word of thread `t`'s chunk `j` of a `b` tile.
    #[inline(always)]
    pub fn b_chunk(t: u32, j: usize) -> (u32, u32) {
        chunk_of(t, j, THREADS, BN / CHUNK)
    }
}

/// The `b` fragments of two adjacent 8-column mma tiles that one `ldmatrix.x4` loads
/// (matrices 0 and 1, then 2 and 3), each fragment's two registers as `mma` takes them.
#[inline(always)]
pub fn b_fragment_pair([b0, b1, b2, b3]: [u32; 4]) -> ([u32; 2], [u32; 2]) {
    ([b0, b1], [b2, b3])
}
