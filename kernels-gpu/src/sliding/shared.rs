//! The slides' "better CUDA": each block copies its `BLOCK` inputs plus the `window - 1`
//! that follow (the halo) into shared memory once, then every thread reads its window there.

use super::BLOCK;
use crate::shared::dynamic_shared;
use crate::thread::{block_idx_x, sync_threads, thread_idx_x};

/// `out[i] = mean(a[i .. i + window])`, windows read from a shared tile.
///
/// Launch like [`sliding_naive`](super::naive::sliding_naive), with
/// `(BLOCK + window - 1) * 4` bytes of dynamic shared memory.
///
/// # Safety
/// `1 <= window <= n`; `a` points to `n` floats, `out` to `n - window + 1`.
#[inline(always)]
pub unsafe fn sliding_shared(a: *const f32, n: u32, window: u32, out: *mut f32) {
    let tile = dynamic_shared::<f32>();
    let t = thread_idx_x();
    let base = block_idx_x() * BLOCK;
    // Tile plus halo, strided so that any window size works; zeros past the end are
    // never summed but keep every word written.
    let mut j = t;
    while j < BLOCK + window - 1 {
        // SAFETY: read only below n.
        let v = if base + j < n {
            unsafe { *a.add((base + j) as usize) }
        } else {
            0.0
        };
        tile.set(j, v);
        j += BLOCK;
    }
    sync_threads();
    let i = base + t;
    if i < n - window + 1 {
        let mut sum = 0.0f32;
        for j in 0..window {
            // SAFETY: t + j < BLOCK + window - 1, the tile's length.
            sum += unsafe { tile.get_unchecked(t + j) };
        }
        // SAFETY: i < n - window + 1; one writer per output.
        unsafe { *out.add(i as usize) = sum / window as f32 };
    }
}

crate::entry_points! {
    sliding_shared(a: *const f32, n: u32, window: u32, out: *mut f32) => sliding_shared;
}
