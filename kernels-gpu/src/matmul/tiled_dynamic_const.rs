//! Tiled, dynamic shared memory, tile width fixed at compile time: the lecture's
//! `template<int tw> __global__ void matmul_k(...)` fix for the slow dynamic kernel.

use nvptx_device::shared::dynamic_shared;

use super::tiled::tiled_phases;

/// The tiled product with dynamic shared tiles and a compile-time `TW`.
///
/// Launch with a `TW × TW` block and `2 * TW * TW * 4` bytes of dynamic shared memory.
///
/// # Safety
/// See the [module contract](crate::matmul) and the launch shape above.
#[inline(always)]
pub unsafe fn matmul_tiled_dynamic_const<const TW: usize>(
    m: *const f32, n: *const f32, out: *mut f32, h: u32, w: u32, k: u32,
) {
    let (ms, ns) = dynamic_shared::<f32>().split_at((TW * TW) as u32);
    // SAFETY: forwarded contract; both halves hold TW*TW when the launch gave 2*TW*TW words.
    unsafe { tiled_phases(ms, ns, TW as u32, m, n, out, h, w, k) }
}

tile_width_entries!(matmul_tiled_dynamic_const:
    matmul_tiled_dynamic_const_tw8 = 8,
    matmul_tiled_dynamic_const_tw16 = 16,
    matmul_tiled_dynamic_const_tw32 = 32,
);
