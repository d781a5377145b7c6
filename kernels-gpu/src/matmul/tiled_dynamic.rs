//! Tiled, dynamic shared memory, tile width chosen at run time: the lecture's first CUDA
//! version (`extern __shared__ float ms[]`, `int tw` argument).

use nvptx_device::shared::dynamic_shared;

use super::tiled::tiled_phases;

/// The tiled product with `tw` known only at run time.
///
/// Launch with a `tw × tw` block and `2 * tw * tw * 4` bytes of dynamic shared memory.
///
/// # Safety
/// See the [module contract](crate::matmul) and the launch shape above.
#[inline(always)]
pub unsafe fn matmul_tiled_dynamic(
    m: *const f32, n: *const f32, out: *mut f32, h: u32, w: u32, k: u32, tw: u32,
) {
    let (ms, ns) = dynamic_shared::<f32>().split_at(tw * tw);
    // SAFETY: forwarded contract; both halves hold tw*tw when the launch gave 2*tw*tw words.
    unsafe { tiled_phases(ms, ns, tw, m, n, out, h, w, k) }
}

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    matmul_tiled_dynamic(m: *const f32, n: *const f32, out: *mut f32, h: u32, w: u32, k: u32, tw: u32)
        => matmul_tiled_dynamic;
}
