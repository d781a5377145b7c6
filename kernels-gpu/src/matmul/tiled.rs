//! The phase loop shared by every tiled kernel: the lecture's `matmul_tiled_bk` body.
//!
//! Each block computes a `tw × tw` tile of `out`. In phase `ph` its threads copy one tile of
//! `m` and one of `n` into shared memory (zero outside the matrices), wait, accumulate the
//! tile product, and wait again before the tiles are overwritten.

use crate::intrinsics::fma;
use crate::shared::SharedSlice;
use crate::thread::{self, sync_threads};

use super::{at, cdiv};

/// Runs all phases and returns this thread's output coordinates `(r, c)` and its dot
/// product `Σ_i m[r, i] · n[i, c]`, without writing anything: the building block for kernels
/// that do more with the product than store it (a bias and an activation, say).
///
/// `r`, `c` may lie outside the matrices (partial edge tiles): check `r < h && c < w`
/// before using the product. Every thread of the block must call it (it has barriers).
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
    ms: SharedSlice<f32>,
    ns: SharedSlice<f32>,
    tw: u32,
    m: *const f32,
    n: *const f32,
    h: u32,
    w: u32,
    k: u32,
) -> (u32, u32, f32) {
    let tc = thread::thread_idx_x();
    let tr = thread::thread_idx_y();
    let r = thread::block_idx_y() * tw + tr;
    let c = thread::block_idx_x() * tw + tc;

    let mut p = 0.0f32;
    for ph in 0..cdiv(k, tw) {
        let idx = ph * tw;
        // SAFETY: (all four shared accesses) tr, tc, i < tw and both tiles hold tw*tw.
        // The global reads are guarded by the same bounds as the lecture's ternaries.
        unsafe {
            ms.set_unchecked(
                tr * tw + tc,
                if r < h && idx + tc < k { *m.add(at(r, k, idx + tc)) } else { 0.0 },
            );
            ns.set_unchecked(
                tr * tw + tc,
                if c < w && idx + tr < k { *n.add(at(idx + tr, w, c)) } else { 0.0 },
            );
        }
        sync_threads();
        for i in 0..tw {
            // SAFETY: see above.
            p = fma(unsafe { ms.get_unchecked(tr * tw + i) }, unsafe { ns.get_unchecked(tw * i + tc) }, p);
        }
        sync_threads();
    }
    (r, c, p)
}

/// Runs all phases for this thread's output element and writes it to `out`.
///
/// # Safety
/// As [`tiled_dot`], and `out` points to `h * w` floats.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn tiled_phases(
    ms: SharedSlice<f32>,
    ns: SharedSlice<f32>,
    tw: u32,
    m: *const f32,
    n: *const f32,
    out: *mut f32,
    h: u32,
    w: u32,
    k: u32,
) {
    // SAFETY: forwarded contract.
    let (r, c, p) = unsafe { tiled_dot(ms, ns, tw, m, n, h, w, k) };
    if r < h && c < w {
        // SAFETY: r < h and c < w; this thread is the only writer of out[r, c].
        unsafe { *out.add(at(r, w, c)) = p };
    }
}
