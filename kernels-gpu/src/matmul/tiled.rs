//! The phase loop shared by every tiled kernel: the lecture's `matmul_tiled_bk` body.
//!
//! Each block computes a `tw × tw` tile of `out`. In phase `ph` its threads copy one tile of
//! `m` and one of `n` into shared memory (zero outside the matrices), wait, accumulate the
//! tile product, and wait again before the tiles are overwritten.

use nvptx_device::intrinsics::fma;
use nvptx_device::shared::SharedSlice;
use nvptx_device::thread::{self, sync_threads};

use super::{at, cdiv};

/// Runs all phases for this thread's output element `(r, c)` and, if it lies inside the
/// output, hands `(r, c, Σ_i m[r, i] · n[i, c])` to `epilogue`: the building block for
/// kernels that do more with the product than store it (a bias and an activation, say).
///
/// Every thread of the block must call it (it has barriers). The epilogue runs inside, after
/// the loop, rather than on a returned value: the same code returned as a tuple compiled to
/// a different branch structure that measured 4–8% slower at tile width 32.
///
/// `tw` is a plain argument: when the caller passes a constant (a const generic), inlining
/// makes the inner loop's trip count and the shared indices compile-time constants — the
/// difference between the lecture's dynamic kernel and its template version.
///
/// # Safety
/// The [matmul contract](crate::matmul) for `m` and `n`, a `tw × tw` block, and `ms`, `ns`
/// of at least `tw * tw` elements each.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn tiled_dot(
    ms: SharedSlice<f32>, ns: SharedSlice<f32>, tw: u32, m: *const f32, n: *const f32, h: u32,
    w: u32, k: u32, epilogue: impl FnOnce(u32, u32, f32),
) {
    let tc = thread::thread_idx_x();
    let tr = thread::thread_idx_y();
    let r = thread::block_idx_y() * tw + tr;
    let c = thread::block_idx_x() * tw + tc;

    let mut p = 0.0f32;
    for ph in 0..cdiv(k, tw) {
        let idx = ph * tw;
        // SAFETY: (all four shared accesses) tr, tc, i < tw and both tiles hold tw*tw.
        // The global reads are guarded by the same bounds as the lecture's ternaries.
        // Their indices stay wrapping u32 on purpose: with the no-wrap `at()` LLVM turned
        // the guarded loads into branches instead of selects, 4–8% slower at tw 32.
        unsafe {
            ms.set_unchecked(
                tr * tw + tc,
                if r < h && idx + tc < k {
                    *m.add((tc + idx + r * k) as usize)
                } else {
                    0.0
                },
            );
            ns.set_unchecked(
                tr * tw + tc,
                if c < w && idx + tr < k {
                    *n.add(((tr + idx) * w + c) as usize)
                } else {
                    0.0
                },
            );
        }
        sync_threads();
        for i in 0..tw {
            // SAFETY: see above.
            p = fma(
                unsafe { ms.get_unchecked(tr * tw + i) },
                unsafe { ns.get_unchecked(tw * i + tc) },
                p,
            );
        }
        sync_threads();
    }

    if r < h && c < w {
        epilogue(r, c, p);
    }
}

/// Runs all phases for this thread's output element and writes it to `out`.
///
/// # Safety
/// As [`tiled_dot`], and `out` points to `h * w` floats.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn tiled_phases(
    ms: SharedSlice<f32>, ns: SharedSlice<f32>, tw: u32, m: *const f32, n: *const f32,
    out: *mut f32, h: u32, w: u32, k: u32,
) {
    // SAFETY: forwarded contract; the epilogue gets r < h and c < w, and this thread is
    // the only writer of out[r, c].
    unsafe {
        tiled_dot(ms, ns, tw, m, n, h, w, k, |r, c, p| {
            *out.add(at(r, w, c)) = p
        })
    }
}
