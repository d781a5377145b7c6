//! The slides' "better CUDA": each block copies its inputs plus the `window - 1` that follow
//! (the halo) into shared memory once, then every thread reads its windows there.
//!
//! Beyond the slides, for bandwidth: a block covers [`TILE`] outputs, four per thread, and
//! loads its tile with one 16-byte load per thread. One float per thread on a million short
//! blocks keeps too few bytes in flight and ran at half the copy bandwidth.

use super::BLOCK;
use nvptx_device::intrinsics::load_f32x4;
use nvptx_device::shared::dynamic_shared;
use nvptx_device::thread::{block_idx_x, sync_threads, thread_idx_x};

/// Outputs per thread.
pub const PER_THREAD: u32 = 4;
/// Outputs per block.
pub const TILE: u32 = BLOCK * PER_THREAD;

/// `a[i]`, or 0 past the end: partial tiles are padded so that every shared word is written.
///
/// # Safety
/// `a` points to `n` floats.
#[inline(always)]
unsafe fn load_or_zero(a: *const f32, n: u32, i: u32) -> f32 {
    if i < n {
        // SAFETY: i < n.
        unsafe { *a.add(i as usize) }
    } else {
        0.0
    }
}

/// `out[i] = mean(a[i .. i + window])`, windows read from a shared tile.
///
/// Launch `ceil((n - window + 1) / TILE)` blocks of [`BLOCK`] threads with
/// `(TILE + window - 1) * 4` bytes of dynamic shared memory.
///
/// # Safety
/// `1 <= window <= n`; `a` points to `n` floats and is 16-byte aligned, `out` to
/// `n - window + 1` floats.
#[inline(always)]
pub unsafe fn sliding_shared(a: *const f32, n: u32, window: u32, out: *mut f32) {
    let tile = dynamic_shared::<f32>();
    let t = thread_idx_x();
    let base = block_idx_x() * TILE;
    if base + TILE <= n {
        // SAFETY: base + 4t + 3 < base + TILE <= n; base is a multiple of TILE, so the
        // address is 16-byte aligned; 4t + 4 <= TILE fits the tile.
        unsafe { tile.set4_unchecked(4 * t, load_f32x4(a.add((base + 4 * t) as usize))) };
    } else {
        for q in 0..PER_THREAD {
            let j = q * BLOCK + t;
            // SAFETY: a holds n floats.
            tile.set(j, unsafe { load_or_zero(a, n, base + j) });
        }
    }
    // The halo, strided so that any window size works; zeros past the end are never
    // summed but keep every word written.
    let mut j = TILE + t;
    while j < TILE + window - 1 {
        // SAFETY: a holds n floats.
        tile.set(j, unsafe { load_or_zero(a, n, base + j) });
        j += BLOCK;
    }
    sync_threads();
    for q in 0..PER_THREAD {
        // Outputs t, t + BLOCK, ...: a warp reads consecutive words (no bank conflicts) and
        // writes consecutive outputs (coalesced).
        let o = q * BLOCK + t;
        let i = base + o;
        if i < n - window + 1 {
            let mut sum = 0.0f32;
            for j in 0..window {
                // SAFETY: o + j < TILE + window - 1, the tile's length.
                sum += unsafe { tile.get_unchecked(o + j) };
            }
            // SAFETY: i < n - window + 1; one writer per output.
            unsafe { *out.add(i as usize) = sum / window as f32 };
        }
    }
}

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    sliding_shared(a: *const f32, n: u32, window: u32, out: *mut f32) => sliding_shared;
}
