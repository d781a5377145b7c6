//! A kernel crate of its own, built on `nvptx-device` and `kernels-gpu`: a fused linear layer
//! `out = relu(x @ W + b)` in one kernel, and the two elementwise kernels that the unfused
//! sequence (matmul, then bias, then relu) needs besides the matmul.
//!
//! It is what a downstream crate looks like: `#![no_std]`, the nightly features the
//! kernel ABI needs on `nvptx64`, kernels written against `nvptx_device`'s device API and
//! `kernels_gpu`'s building blocks (with `default-features = false`, so none of its entry
//! points come along), entry points exported with [`nvptx_device::entry_points!`]. The host
//! crate (`examples/fused-linear/host`) builds it to PTX with `nvptx-builder` from its
//! `build.rs`, and uses it as an ordinary dependency to run the same kernels in the CPU
//! simulator.
//!
//! The nvptx `#[panic_handler]` comes from `nvptx-device` (one per crate graph; a second
//! one here would be a duplicate lang item).
#![no_std]
// `extern "gpu-kernel"` (emitted by `entry_points!`) needs `abi_gpu_kernel` in the crate
// that invokes the macro; `shared_array!`'s inline PTX is allowed by the macro itself.
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]

use kernels_gpu::matmul::tiled::tiled_dot;
use kernels_gpu::matmul::{at, cdiv};
use nvptx_device::shared_array;
use nvptx_device::thread::index_1d;

/// Tile width of [`fused_linear`]: a `TW × TW` block per output tile, as
/// `matmul_tiled_static_tw16`, the kernel the unfused sequence uses.
pub const TW: usize = 16;

/// Threads per block of the elementwise kernels [`bias_add`] and [`relu`].
pub const BLOCK: u32 = 256;

/// `max(x, 0)`, as `max.f32` (a NaN input gives 0, as PTX's `max` does).
#[inline(always)]
pub fn relu_f32(x: f32) -> f32 {
    x.max(0.0)
}

/// `out[r, c] = relu(Σ_i x[r, i] · weight[i, c] + bias[c])` for this thread's `(r, c)`:
/// the tiled product of `kernels_gpu`'s matmuls ([`tiled_dot`]), whose epilogue adds the
/// bias and applies the activation in registers before the one store — no intermediate in
/// global memory.
///
/// `x` is `m × k`, `weight` `k × n`, `bias` `n`, `out` `m × n`, all row-major f32. Launch
/// a grid of `ceil(n / TW) × ceil(m / TW)` blocks of `TW × TW` threads, no dynamic shared
/// memory.
///
/// # Safety
/// The pointers reach that many valid floats, `m * k`, `k * n` and `m * n` fit in `u32`,
/// and the launch shape is as above.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn fused_linear(
    x: *const f32, weight: *const f32, bias: *const f32, out: *mut f32, m: u32, n: u32, k: u32,
) {
    let xs = shared_array!(f32; TW * TW);
    let ws = shared_array!(f32; TW * TW);
    // SAFETY: the caller's contract is tiled_dot's, and both tiles hold TW * TW. The
    // epilogue gets r < m and c < n, so bias[c] and out[r, c] are in bounds, and this
    // thread is the only writer of out[r, c].
    unsafe {
        tiled_dot(xs, ws, TW as u32, x, weight, m, n, k, |r, c, p| {
            *out.add(at(r, n, c)) = relu_f32(p + *bias.add(c as usize))
        })
    }
}

/// `out[r, c] = y[r, c] + bias[c]` for the `m × n` matrix `y`: the second launch of the
/// unfused sequence, reading the matmul's result back from global memory.
///
/// Launch 1D with `ceil(m * n / BLOCK)` blocks of [`BLOCK`] threads.
///
/// # Safety
/// `y` and `out` point to `m * n` floats (which fits in `u32`), `bias` to `n`, `n > 0`.
#[inline(always)]
pub unsafe fn bias_add(y: *const f32, bias: *const f32, out: *mut f32, m: u32, n: u32) {
    let i = index_1d();
    if i < m * n {
        // SAFETY: i < m * n and i % n < n; one writer per element.
        unsafe { *out.add(i as usize) = *y.add(i as usize) + *bias.add((i % n) as usize) };
    }
}

/// `out[i] = max(y[i], 0)` for `i < len`: the third launch of the unfused sequence.
///
/// Launch 1D with `ceil(len / BLOCK)` blocks of [`BLOCK`] threads.
///
/// # Safety
/// `y` and `out` point to `len` floats.
#[inline(always)]
pub unsafe fn relu(y: *const f32, out: *mut f32, len: u32) {
    let i = index_1d();
    if i < len {
        // SAFETY: i < len; one writer per element.
        unsafe { *out.add(i as usize) = relu_f32(*y.add(i as usize)) };
    }
}

/// Blocks of [`BLOCK`] threads for `len` elements, the elementwise kernels' 1D grid.
pub const fn elementwise_blocks(len: u32) -> u32 {
    cdiv(len, BLOCK)
}

nvptx_device::entry_points! {
    fused_linear_tw16(x: *const f32, weight: *const f32, bias: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => fused_linear;
    bias_add(y: *const f32, bias: *const f32, out: *mut f32, m: u32, n: u32) => bias_add;
    relu(y: *const f32, out: *mut f32, len: u32) => relu;
}
