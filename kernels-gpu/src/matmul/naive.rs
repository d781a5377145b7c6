//! One thread per output element, straight from global memory: the lecture's `matmul_k`.

use crate::intrinsics::fma;
use crate::thread;

/// Block edge the host launches [`matmul_naive`] with (the lecture's `tpb = dim3(16, 16)`).
pub const BLOCK: u32 = 16;

/// `out[r, c] = Σ_i m[r, i] · n[i, c]` for the thread's `(r, c)`.
///
/// # Safety
/// See the [module contract](crate::matmul).
#[inline(always)]
pub unsafe fn matmul_naive(m: *const f32, n: *const f32, out: *mut f32, h: u32, w: u32, k: u32) {
    let (r, c) = thread::index_2d();
    if r >= h || c >= w {
        return;
    }
    let mut o = 0.0f32;
    for i in 0..k {
        // SAFETY: r < h, c < w and i < k keep both indices inside the inputs.
        let (a, b) = unsafe { (*m.add((r * k + i) as usize), *n.add((i * w + c) as usize)) };
        o = fma(a, b, o);
    }
    // SAFETY: r < h and c < w; this thread is the only writer of out[r, c].
    unsafe { *out.add((r * w + c) as usize) = o };
}

crate::entry_points! {
    matmul_naive(m: *const f32, n: *const f32, out: *mut f32, h: u32, w: u32, k: u32)
        => matmul_naive;
}
