//! Hopper's tensor-memory accelerator (TMA) from Rust: one thread copies a 2-D tile of a
//! row-major matrix from global to shared memory (`cp.async.bulk.tensor.2d`), and the
//! block learns that it has landed from an `mbarrier` in shared memory, which counts the
//! bytes the copies still owe. Compute capability 9.0 (PTX `sm_90`) only.
//!
//! ```text
//! bar.init();  fence_init();  sync_threads()       // once, one thread, then the block
//! bar.expect_tx(bytes);  copy_2d(.., &bar)           // one thread per stage refill
//! bar.wait(parity)                                   // every thread that reads the tile
//! ```
//!
//! The tile is `box_rows` rows of 32 words (128 bytes), stored with the 128-byte swizzle:
//! 16-byte chunk `c` of row `r` at chunk `c ^ (r % 8)` ([`crate::wgmma::sw128_index`]), the
//! layout `ldmatrix` reads without bank conflicts; the destination starts on a 1024-byte
//! boundary. Elements past the matrix are zero.
//!
//! A [`TensorMap`] describes the matrix and the tile. On the GPU it is the driver's opaque
//! 128-byte `CUtensorMap` (`cuTensorMapEncodeTiled`: `f32`, rank 2, a box of 32 × rows,
//! `CU_TENSOR_MAP_SWIZZLE_128B`, out-of-bounds elements zero), in global memory, written
//! before the launch. In the simulator it is [`TensorMap::simulated`], and the copy happens
//! when it is issued: a wait finds its phase complete or reports the kernel's mistake
//! (a kernel must order its waits after the copies they wait for with a block barrier,
//! as it must for the tile's readers anyway).

use crate::shared::SharedSlice;
use crate::wgmma::{ROW_WORDS, sw128_index};

/// Bytes of one row of a tile: 32 `f32`, one 128-byte swizzle row.
pub const ROW_BYTES: u32 = 4 * ROW_WORDS;

/// Where a destination tile must start in shared memory, in bytes.
pub const TILE_ALIGN: u32 = 1024;

/// The description of a matrix and of the tiles [`copy_2d`] takes from it: the driver's
/// `CUtensorMap` on the GPU (see the [module](self)), [`TensorMap::simulated`]'s fields in
/// the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct TensorMap(pub [u64; 16]);

impl TensorMap {
    /// The simulator's map of the `rows × cols` row-major `f32` matrix at `base` (rows of
    /// `cols` words), in tiles of `box_rows` rows of 32 words.
    pub fn simulated(base: *const f32, rows: u32, cols: u32, box_rows: u32) -> Self {
        Self::simulated_of(base as usize, rows, cols, box_rows, 0)
    }

    /// [`simulated`](Self::simulated) with TF32 as the map's element type
    /// (`CU_TENSOR_MAP_DATA_TYPE_TFLOAT32` on the GPU): each copy rounds every element to
    /// TF32, to the nearest with ties to even
    /// ([`tf32_round_even_bits`](crate::mma::tf32_round_even_bits)), as it lands.
    pub fn simulated_tf32(base: *const f32, rows: u32, cols: u32, box_rows: u32) -> Self {
        Self::simulated_of(base as usize, rows, cols, box_rows, TF32_CODE)
    }

    /// The simulator's map of the `rows × cols` row-major matrix of 2-byte elements
    /// (`bf16` or `f16` bits) at `base`, in tiles of `box_rows` rows of 64 elements
    /// ([`copy_2d_bytes`]).
    pub fn simulated_16bit(base: *const u16, rows: u32, cols: u32, box_rows: u32) -> Self {
        Self::simulated_of(base as usize, rows, cols, box_rows, 2)
    }

    /// The simulator's fields: the matrix's address, rows, columns, the rows of a box, and
    /// the element size where it is 2 bytes (0 for `f32`, [`TF32_CODE`] for f32 rounded to
    /// TF32).
    fn simulated_of(base: usize, rows: u32, cols: u32, box_rows: u32, size: u64) -> Self {
        let mut words = [0u64; 16];
        words[0] = base as u64;
        words[1] = rows as u64;
        words[2] = cols as u64;
        words[3] = box_rows as u64;
        words[4] = size;
        Self(words)
    }
}

/// The element code of [`TensorMap::simulated_tf32`]'s maps.
const TF32_CODE: u64 = 4 | 1 << 8;

/// Elements of 2 bytes in one row of a 128-byte-swizzled tile.
pub const ROW_HALVES: u32 = ROW_BYTES / 2;

pub use crate::mbarrier::{Mbarrier, fence_init};

/// Copies the tile of `map` whose first element is column `x`, row `y` (elements past the
/// matrix are zero) to `dst[at..]`, swizzled, completing `bytes` (`box_rows · 128`) of
/// `bar`'s phase (`cp.async.bulk.tensor.2d...mbarrier::complete_tx::bytes`).
///
/// # Safety
/// One thread; `map` points to a [`TensorMap`] of the launch (in global memory on the GPU)
/// for this tile shape; the tile fits `dst` from `at`, whose byte address is a multiple of
/// [`TILE_ALIGN`]; nothing reads or writes it until `bar`'s phase completes; the phase
/// expects these bytes ([`Mbarrier::expect_tx`]).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn copy_2d(
    dst: SharedSlice<f32>, at: u32, map: *const TensorMap, x: u32, y: u32, bar: &Mbarrier,
) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}}}], [{b}];",
            d = in(reg32) dst.byte_address() + 4 * at, m = in(reg64) map, x = in(reg32) x,
            y = in(reg32) y, b = in(reg32) bar.addr(), options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        if !(dst.byte_address() + 4 * at).is_multiple_of(TILE_ALIGN) {
            panic!("TMA: a 128-byte-swizzled tile must start on a 1024-byte boundary");
        }
        // SAFETY: the caller passes a map of the launch, of f32 elements.
        let (box_rows, elements) = unsafe { sim_read_box::<f32>(map, x, y, ROW_WORDS) };
        // SAFETY: as above.
        let code = unsafe { (*map).0[4] };
        for (r, c, v) in elements {
            let v = f32::from_bits(sim_landed_bits(code, v));
            // SAFETY: checked (the simulator reports an access past `dst`).
            unsafe { dst.set_unchecked(at + sw128_index(r, c), v) };
        }
        bar.landed(box_rows * ROW_BYTES);
    }
}

/// Copies the tile of `map` whose first element is column `x`, row `y` — `box_rows` rows of
/// 128 bytes (64 elements of 2 bytes or 32 of 4, as the map says), zero past the matrix — to
/// byte `offset` of `dst`, swizzled (16-byte chunk `c` of row `r` at `c ^ (r % 8)`), completing
/// `box_rows · 128` bytes of `bar`'s phase. With `mask` nonzero the copy is multicast: the tile
/// lands at the same offset in every block of the cluster whose rank's bit is set in `mask`,
/// each block's barrier at `bar`'s offset completing the bytes
/// (`.multicast::cluster`).
///
/// # Safety
/// One thread; `map` points to a [`TensorMap`] of the launch (in global memory on the GPU)
/// for this tile shape; the tile fits `dst` from `offset`, whose byte
/// address is a multiple of [`TILE_ALIGN`], in every block it lands in; nothing reads or
/// writes it there until the barrier's phase completes; each such phase expects these bytes.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn copy_2d_bytes(
    dst: SharedSlice<u32>, offset: u32, map: *const TensorMap, x: u32, y: u32, bar: &Mbarrier,
    mask: u16,
) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's contract.
    unsafe {
        if mask == 0 {
            core::arch::asm!(
                "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}}}], [{b}];",
                d = in(reg32) dst.byte_address() + offset, m = in(reg64) map, x = in(reg32) x,
                y = in(reg32) y, b = in(reg32) bar.addr(), options(nostack, preserves_flags));
        } else {
            core::arch::asm!(
                "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{m}, {{{x}, {y}}}], [{b}], {k};",
                d = in(reg32) dst.byte_address() + offset, m = in(reg64) map, x = in(reg32) x,
                y = in(reg32) y, b = in(reg32) bar.addr(), k = in(reg16) mask,
                options(nostack, preserves_flags));
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let start = dst.byte_address() + offset;
        if !start.is_multiple_of(TILE_ALIGN) {
            panic!("TMA: a 128-byte-swizzled tile must start on a 1024-byte boundary");
        }
        if mask == 0 {
            // SAFETY: the caller's contract.
            unsafe { sim_land(dst, offset, map, x, y, bar) };
            return;
        }
        let ranks = crate::cluster::blocks();
        if u32::from(mask) >> ranks != 0 {
            panic!("TMA: a multicast to cluster ranks {mask:#b}, in a cluster of {ranks} blocks");
        }
        for rank in (0..ranks).filter(|r| mask & (1 << r) != 0) {
            let (dst, bar) = (dst.in_rank(rank), bar.in_rank(rank));
            // SAFETY: the caller's contract, in every block the mask names.
            crate::sim::cluster::on_rank(rank, || unsafe {
                sim_land(dst, offset, map, x, y, &bar)
            });
        }
    }
}

/// The simulator's side of [`copy_2d_bytes`] into one block: the tile written to `dst` from
/// byte `offset`, swizzled, and its bytes landed on `bar`.
///
/// # Safety
/// As [`copy_2d_bytes`]'s, for the running block.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
unsafe fn sim_land(
    dst: SharedSlice<u32>, offset: u32, map: *const TensorMap, x: u32, y: u32, bar: &Mbarrier,
) {
    let start = dst.byte_address() + offset;
    // SAFETY: the caller passes a map of the launch.
    let words = unsafe { (*map).0 };
    // The accelerator writes through its own proxy, ordered with the readers by the
    // barrier, not by block barriers: outside the race checker.
    if words[4] != 2 {
        // SAFETY: as above, of 4-byte elements.
        let (box_rows, elements) = unsafe { sim_read_box::<f32>(map, x, y, ROW_WORDS) };
        for (r, c, v) in elements {
            let byte = crate::wgmma::swizzle(start + r * ROW_BYTES + 4 * c) - dst.byte_address();
            dst.set_quiet(byte / 4, sim_landed_bits(words[4], v));
        }
        bar.landed(box_rows * ROW_BYTES);
        return;
    }
    // SAFETY: as above, of 2-byte elements.
    let (box_rows, elements) = unsafe { sim_read_box::<u16>(map, x, y, ROW_HALVES) };
    for (r, c, v) in elements {
        let byte = crate::wgmma::swizzle(start + r * ROW_BYTES + 2 * c) - dst.byte_address();
        let (word, high) = (byte / 4, (byte / 2) % 2 == 1);
        // An even element comes first in its word (the swizzle moves 16-byte chunks).
        let old = if high { dst.get_quiet(word) } else { 0 };
        let new = if high {
            (old & 0xffff) | (u32::from(v) << 16)
        } else {
            u32::from(v)
        };
        dst.set_quiet(word, new);
    }
    bar.landed(box_rows * ROW_BYTES);
}

/// Stores the tile at byte `offset` of `src` — `box_rows` rows of 128 bytes (32 `f32`, or 64
/// elements of 2 bytes, as the map says), 128-byte swizzled as [`copy_2d_bytes`] leaves a
/// tile — to the matrix of `map` from column `x`, row `y`; elements past the matrix are not
/// written (`cp.async.bulk.tensor.2d.global.shared::cta.bulk_group`). The store belongs to
/// the calling thread's next [`bulk_commit_group`]; it reads `src` at some point before the
/// [`bulk_wait_group_read`] that covers its group returns (the simulator: at that wait).
///
/// # Safety
/// One thread; `map` points to a [`TensorMap`] of the launch (in global memory on the GPU)
/// for this tile shape, of a matrix that nothing else reads or writes until the kernel
/// ends; the tile lies inside `src` from `offset`, a multiple of [`TILE_ALIGN`] bytes from
/// the start of shared memory; every thread that wrote it did so before a
/// [`fence_proxy_async`](crate::wgmma::fence_proxy_async) that a barrier orders before this
/// call, and nothing writes it until this thread's wait for the store's group has returned;
/// the thread waits for it before it returns.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn store_2d_bytes(
    src: SharedSlice<u32>, offset: u32, map: *const TensorMap, x: u32, y: u32,
) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [{m}, {{{x}, {y}}}], [{s}];",
            m = in(reg64) map, x = in(reg32) x, y = in(reg32) y,
            s = in(reg32) src.byte_address() + offset, options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let start = src.byte_address() + offset;
        if !start.is_multiple_of(TILE_ALIGN) {
            panic!("TMA: a 128-byte-swizzled tile must start on a 1024-byte boundary");
        }
        // SAFETY: the caller passes a map of the launch.
        let words = unsafe { (*map).0 };
        let (base, rows, cols, box_rows) = (
            words[0] as usize,
            words[1] as u32,
            words[2] as u32,
            words[3] as u32,
        );
        let size = if words[4] == 2 { 2u32 } else { 4 };
        let row_elems = ROW_BYTES / size;
        if start + box_rows * ROW_BYTES > src.byte_address() + 4 * src.len() {
            panic!(
                "TMA: a store of {box_rows} rows of 128 bytes from shared byte {start}, past the end of its array"
            );
        }
        let run = move || {
            for r in 0..box_rows {
                for c in 0..row_elems {
                    let (row, col) = (y + r, x + c);
                    if row >= rows || col >= cols {
                        continue;
                    }
                    let byte = crate::wgmma::swizzle(start + r * ROW_BYTES + size * c);
                    let word = src.get_quiet((byte - src.byte_address()) / 4);
                    let at = row as usize * cols as usize + col as usize;
                    // SAFETY: inside the matrix the map describes (the caller's contract).
                    unsafe {
                        if size == 4 {
                            *(base as *mut u32).add(at) = word;
                        } else {
                            let half = (word >> (16 * ((byte / 2) % 2))) as u16;
                            *(base as *mut u16).add(at) = half;
                        }
                    }
                }
            }
        };
        let location = core::panic::Location::caller().into();
        crate::sim::context::with(|t| {
            t.bulk.issue(crate::sim::bulk::BulkStore {
                run: std::boxed::Box::new(run),
                location,
            })
        });
    }
}

/// Closes this thread's group of the bulk stores ([`store_2d_bytes`]) issued since the last
/// one (`cp.async.bulk.commit_group`).
#[inline(always)]
pub fn bulk_commit_group() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: no operands; groups this thread's issued bulk operations.
    unsafe {
        core::arch::asm!(
            "cp.async.bulk.commit_group;",
            options(nostack, preserves_flags)
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    crate::sim::context::with(|t| t.bulk.commit());
}

/// Waits until at most `N` of this thread's committed groups of bulk stores still read
/// their shared-memory sources (`cp.async.bulk.wait_group.read N`): the sources of the
/// older ones may then be written again.
#[inline(always)]
pub fn bulk_wait_group_read<const N: u32>() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: waits on this thread's own bulk groups.
    unsafe {
        core::arch::asm!("cp.async.bulk.wait_group.read {n};", n = const N,
                         options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    crate::sim::context::with(|t| t.bulk.wait(N as usize));
}

/// Waits until at most `N` of this thread's committed groups of bulk stores are still
/// incomplete (`cp.async.bulk.wait_group N`): the older ones have written global memory.
#[inline(always)]
pub fn bulk_wait_group<const N: u32>() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: waits on this thread's own bulk groups.
    unsafe {
        core::arch::asm!("cp.async.bulk.wait_group {n};", n = const N,
                         options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    crate::sim::context::with(|t| t.bulk.wait(N as usize));
}

/// The bits an f32 element `v` lands as through a map of element code `code`: rounded to
/// TF32 (ties to even) where the map's type is TF32, else as they are.
#[cfg(not(target_arch = "nvptx64"))]
fn sim_landed_bits(code: u64, v: f32) -> u32 {
    if code == TF32_CODE {
        crate::mma::tf32_round_even_bits(v.to_bits())
    } else {
        v.to_bits()
    }
}

/// The simulator's reading of the box whose first element is column `x`, row `y` of the
/// matrix of `T` that `map` describes: its rows, and `(r, c, value)` for each of them and
/// the `row_elems` elements of each, zero past the matrix.
///
/// # Safety
/// `map` points to a [`TensorMap`] of `T` elements, and its matrix outlives the iterator.
#[cfg(not(target_arch = "nvptx64"))]
unsafe fn sim_read_box<T: Copy + Default>(
    map: *const TensorMap, x: u32, y: u32, row_elems: u32,
) -> (u32, impl Iterator<Item = (u32, u32, T)>) {
    // SAFETY: the caller's contract.
    let words = unsafe { (*map).0 };
    let (base, rows, cols, box_rows) = (
        words[0] as usize as *const T,
        words[1] as u32,
        words[2] as u32,
        words[3] as u32,
    );
    let elements = (0..box_rows).flat_map(move |r| {
        (0..row_elems).map(move |c| {
            let (row, col) = (y + r, x + c);
            let v = if row < rows && col < cols {
                // SAFETY: inside the matrix the map describes (the caller's contract).
                unsafe { *base.add(row as usize * cols as usize + col as usize) }
            } else {
                T::default()
            };
            (r, c, v)
        })
    });
    (box_rows, elements)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::dynamic_shared;
    use crate::thread::{sync_threads, thread_idx_x};
    use std::string::ToString;
    use std::sync::Mutex;
    use std::vec;
    use std::vec::Vec;

    const BOX_ROWS: u32 = 8;

    fn launch(kernel: impl Fn() + Sync) -> Result<(), crate::sim::SimError> {
        // The alignment slack, one tile, one barrier.
        crate::sim::one_block(64, TILE_ALIGN + BOX_ROWS * ROW_BYTES + 8, kernel)
    }

    /// The words of one box as `copy` (thread 0's, given the barrier whose phase expects
    /// the box's bytes) lands it at the start of the aligned tile, once the phase completes.
    fn one_box(copy: impl Fn(&Mbarrier) + Sync) -> Vec<u32> {
        let got = Mutex::new(vec![0u32; (BOX_ROWS * ROW_WORDS) as usize]);
        launch(|| {
            let words = dynamic_shared::<u32>().aligned_to(TILE_ALIGN);
            let bar = Mbarrier::new(words.split_at(BOX_ROWS * ROW_WORDS).1, 0);
            let t = thread_idx_x();
            if t == 0 {
                // SAFETY: one thread, then the fence and the barrier.
                unsafe { bar.init() };
                fence_init();
            }
            sync_threads();
            if t == 0 {
                // SAFETY: one thread, before the copy it expects.
                unsafe { bar.expect_tx(BOX_ROWS * ROW_BYTES) };
                copy(&bar);
            }
            sync_threads();
            // SAFETY: the phase's copy was issued before the barrier.
            unsafe { bar.wait(0) };
            if t == 0 {
                let mut out = got.lock().unwrap();
                for (i, v) in out.iter_mut().enumerate() {
                    // SAFETY: inside the tile.
                    *v = unsafe { words.get_unchecked(i as u32) };
                }
            }
        })
        .unwrap();
        got.into_inner().unwrap()
    }

    #[test]
    fn a_copy_lands_swizzled_zero_past_the_matrix_and_completes_its_phase() {
        // A 5 × 36 matrix; the tile of 8 rows × 32 words from row 1, column 8 reaches past
        // both edges.
        let (rows, cols, x, y) = (5u32, 36u32, 8u32, 1u32);
        let m: Vec<f32> = (0..rows * cols).map(|i| i as f32 + 1.0).collect();
        let map = TensorMap::simulated(m.as_ptr(), rows, cols, BOX_ROWS);
        let got = one_box(|bar| {
            let tile = dynamic_shared::<f32>().aligned_to(TILE_ALIGN);
            // SAFETY: the map is this matrix's; the tile fits and is aligned.
            unsafe { copy_2d(tile, 0, &map, x, y, bar) };
        });
        let got: Vec<f32> = got.into_iter().map(f32::from_bits).collect();
        for r in 0..BOX_ROWS {
            for c in 0..ROW_WORDS {
                let (row, col) = (y + r, x + c);
                let want = if row < rows && col < cols {
                    m[(row * cols + col) as usize]
                } else {
                    0.0
                };
                assert_eq!(got[sw128_index(r, c) as usize], want, "row {r}, column {c}");
            }
        }
    }

    #[test]
    fn a_copy_through_a_tf32_map_rounds_to_nearest_even() {
        // One box of 8 rows × 32 words: ties with an even and an odd last kept bit, values
        // just under and over a tie, a negative tie, an infinity and a NaN.
        let (rows, cols) = (BOX_ROWS, ROW_WORDS);
        let low = [0x1000u32, 0x0fff, 0x1001, 0x0000, 0x1fff];
        let m: Vec<f32> = (0..rows * cols)
            .map(|i| {
                let kept = 0x3f80_0000 | ((i * 0x2000) & 0x007f_e000);
                let sign = if i % 3 == 0 { 0x8000_0000 } else { 0 };
                match i {
                    7 => f32::INFINITY,
                    11 => f32::NAN,
                    _ => f32::from_bits(sign | kept | low[i as usize % low.len()]),
                }
            })
            .collect();
        let map = TensorMap::simulated_tf32(m.as_ptr(), rows, cols, BOX_ROWS);
        let got = one_box(|bar| {
            let words = dynamic_shared::<u32>().aligned_to(TILE_ALIGN);
            // SAFETY: the map is this matrix's; the tile fits and is aligned.
            unsafe { copy_2d_bytes(words, 0, &map, 0, 0, bar, 0) };
        });
        let (mut ties_down, mut ties_up) = (0, 0);
        for r in 0..rows {
            for c in 0..cols {
                let v = m[(r * cols + c) as usize].to_bits();
                let g = got[sw128_index(r, c) as usize];
                assert_eq!(
                    g,
                    crate::mma::tf32_round_even_bits(v),
                    "row {r}, column {c}"
                );
                if v & 0x7f80_0000 != 0x7f80_0000 && v & 0x1fff == 0x1000 {
                    // A tie goes to the neighbour whose last kept bit is even.
                    assert_eq!(g & 0x2000, 0, "{v:#x} → {g:#x}");
                    if g == v & !0x1fff {
                        ties_down += 1;
                    } else {
                        ties_up += 1;
                    }
                }
            }
        }
        assert!(ties_down > 0 && ties_up > 0, "{ties_down} {ties_up}");
        assert!(f32::from_bits(got[sw128_index(0, 11) as usize]).is_nan());
        assert_eq!(got[sw128_index(0, 7) as usize], f32::INFINITY.to_bits());
    }

    /// Thread 0 writes `value(r, c)` to element `(r, c)` of a swizzled tile, stores it to
    /// `matrix` (`rows × cols`, from column `x`, row `y`) and, where `wait`, waits for the
    /// store; `between` runs after the commit, before the wait.
    fn store_tile(
        matrix: &mut [f32], (rows, cols): (u32, u32), (x, y): (u32, u32),
        value: impl Fn(u32, u32) -> f32 + Sync, between: impl Fn(SharedSlice<u32>) + Sync,
        wait: bool,
    ) -> Result<(), crate::sim::SimError> {
        let map = TensorMap::simulated(matrix.as_mut_ptr(), rows, cols, BOX_ROWS);
        launch(|| {
            let tile = dynamic_shared::<u32>().aligned_to(TILE_ALIGN);
            if thread_idx_x() == 0 {
                for r in 0..BOX_ROWS {
                    for c in 0..ROW_WORDS {
                        tile.set(sw128_index(r, c), value(r, c).to_bits());
                    }
                }
                crate::wgmma::fence_proxy_async();
                // SAFETY: the map is this matrix's; the tile fits and is aligned; it is
                // written again only by `between`, whose effect the tests look for.
                unsafe { store_2d_bytes(tile, 0, &map, x, y) };
                bulk_commit_group();
                between(tile);
                if wait {
                    bulk_wait_group_read::<0>();
                }
            }
        })
    }

    #[test]
    fn a_store_lands_unswizzled_and_clipped_at_the_matrix_edges() {
        // A 5 × 36 matrix; the tile of 8 rows × 32 words to row 1, column 8 reaches past
        // both edges, which it must not write.
        let (rows, cols, x, y) = (5u32, 36u32, 8u32, 1u32);
        let mut m = vec![-1.0f32; (rows * cols) as usize];
        let value = |r: u32, c: u32| (100 * r + c) as f32;
        store_tile(&mut m, (rows, cols), (x, y), value, |_| {}, true).unwrap();
        for row in 0..rows {
            for col in 0..cols {
                let want = if row >= y && col >= x {
                    value(row - y, col - x)
                } else {
                    -1.0
                };
                assert_eq!(
                    m[(row * cols + col) as usize],
                    want,
                    "row {row}, column {col}"
                );
            }
        }
    }

    #[test]
    fn a_store_reads_its_source_as_late_as_its_wait() {
        // Written again between the store's issue and its wait: the simulator stores the
        // new values, as a GPU may, so a kernel that does this fails its tests.
        let mut m = vec![0.0f32; 8 * 32];
        let rewrite = |tile: SharedSlice<u32>| tile.set(sw128_index(2, 3), 7.5f32.to_bits());
        store_tile(&mut m, (8, 32), (0, 0), |_, _| 1.0, rewrite, true).unwrap();
        assert_eq!(m[2 * 32 + 3], 7.5);
        assert_eq!(m[2 * 32 + 4], 1.0);
    }

    #[test]
    fn a_store_not_waited_for_is_an_error() {
        let mut m = vec![0.0f32; 8 * 32];
        let err = store_tile(&mut m, (8, 32), (0, 0), |_, _| 1.0, |_| {}, false).unwrap_err();
        assert!(err.to_string().contains("not waited for"), "{err}");
        assert!(
            m.iter().all(|&v| v == 0.0),
            "a store never waited for never lands here"
        );
    }

    #[test]
    fn a_wait_before_its_copies_is_an_error() {
        let err = launch(|| {
            let words = dynamic_shared::<u32>()
                .aligned_to(TILE_ALIGN)
                .split_at(BOX_ROWS * ROW_WORDS)
                .1;
            let bar = Mbarrier::new(words, 0);
            if thread_idx_x() == 0 {
                // SAFETY: one thread, then the fence and the barrier.
                unsafe { bar.init() };
                fence_init();
            }
            sync_threads();
            // Nothing was copied: phase 0 has not completed.
            // SAFETY: deliberately broken (the simulator reports it).
            unsafe { bar.wait(0) };
        })
        .unwrap_err();
        assert!(err.to_string().contains("mbarrier"), "{err}");
    }
}
