//! Tiled, static shared arrays, tile width fixed at compile time: the lecture's
//! `__shared__ float ms[tw][tw], ns[tw][tw]` with `constexpr int tw`.

use nvptx_device::shared_array;

use super::tiled::tiled_phases;

/// The tiled product with `TW × TW` static shared tiles.
///
/// Launch with a `TW × TW` block and no dynamic shared memory.
///
/// # Safety
/// See the [module contract](crate::matmul) and the launch shape above.
#[inline(always)]
pub unsafe fn matmul_tiled_static<const TW: usize>(
    m: *const f32, n: *const f32, out: *mut f32, h: u32, w: u32, k: u32,
) {
    let ms = shared_array!(f32; TW * TW);
    let ns = shared_array!(f32; TW * TW);
    // SAFETY: forwarded contract; both tiles hold TW*TW.
    unsafe { tiled_phases(ms, ns, TW as u32, m, n, out, h, w, k) }
}

tile_width_entries!(matmul_tiled_static:
    matmul_tiled_static_tw8 = 8,
    matmul_tiled_static_tw16 = 16,
    matmul_tiled_static_tw32 = 32,
);
