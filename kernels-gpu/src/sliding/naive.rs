//! One thread per output, every window read from global memory.

use nvptx_device::thread::index_1d;

/// `out[i] = mean(a[i .. i + window])` for this thread's `i`.
///
/// Launch 1D with `ceil((n - window + 1) / BLOCK)` blocks of [`BLOCK`](super::BLOCK).
///
/// # Safety
/// `1 <= window <= n`; `a` points to `n` floats, `out` to `n - window + 1`.
#[inline(always)]
pub unsafe fn sliding_naive(a: *const f32, n: u32, window: u32, out: *mut f32) {
    let i = index_1d();
    if i > n - window {
        return;
    }
    let mut sum = 0.0f32;
    for j in 0..window {
        // SAFETY: i + j < (n - window + 1) + window - 1 = n.
        sum += unsafe { *a.add((i + j) as usize) };
    }
    // SAFETY: i < n - window + 1; one writer per output.
    unsafe { *out.add(i as usize) = sum / window as f32 };
}

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    sliding_naive(a: *const f32, n: u32, window: u32, out: *mut f32) => sliding_naive;
}
