//! A kernel crate of its own, built on `nvptx-device` and `kernels-gpu`: a fused linear layer
//! `out = relu(x @ W + b)` in one kernel — the SGEMM ladder's multistage configuration with
//! a bias-and-relu [epilogue](kernels_gpu::sgemm::epilogue) — and the elementwise kernel that
//! the unfused sequence (matmul, then bias and relu) needs besides the matmul.
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

use kernels_gpu::matmul::cdiv;
use kernels_gpu::sgemm::epilogue::{Activation, Linear, Relu};
use nvptx_device::catalogue::{DynamicShared, GridRule, KernelSpec};
use nvptx_device::thread::{Dim3, index_1d};

/// The SGEMM configuration the fused kernel runs: rung 10 (`cp.async` multistage, grouped
/// block order). Its plain entry point in `kernels-gpu`, [`config::ENTRY`], is the unfused
/// sequence's matmul, so the two differ only in the epilogue.
pub use kernels_gpu::sgemm::configs::sgemm_multistage_swizzled_128x128x16_w64x32 as config;

/// Threads per block of the elementwise kernel [`bias_relu`].
pub const BLOCK: u32 = 256;

/// `max(x, 0)`, as the epilogue applies it (`max.f32`: a NaN input gives 0).
#[inline(always)]
pub fn relu_f32(x: f32) -> f32 {
    Relu.apply(x)
}

/// `out[r, c] = relu(Σ_i x[r, i] · weight[i, c] + bias[c])`: [`config`]'s kernel with the
/// epilogue `relu(acc + bias[c])` applied in registers before the one store — no
/// intermediate in global memory.
///
/// `x` is `m × k`, `weight` `k × n`, `bias` `n`, `out` `m × n`, all row-major f32. Launch as
/// [`FUSED_LINEAR`] says.
///
/// # Safety
/// The pointers reach that many valid floats, `m * k`, `k * n` and `m * n` fit in `u32`,
/// `out` overlaps no input, and the launch is [`FUSED_LINEAR`]'s.
#[inline(always)]
pub unsafe fn fused_linear(
    x: *const f32, weight: *const f32, bias: *const f32, out: *mut f32, m: u32, n: u32, k: u32,
) {
    // SAFETY: the caller's contract is the configuration's, and `bias` holds n floats.
    unsafe { config::run(x, weight, out, m, n, k, Linear::bias_act(bias, Relu)) }
}

/// `out[r, c] = relu(y[r, c] + bias[c])` for the `m × n` matrix `y`: the unfused sequence's
/// second launch, reading the matmul's result back from global memory. The same operations
/// in the same order as the fused epilogue, so both give the same bits.
///
/// Launch as [`BIAS_RELU`] says, for `m · n` items.
///
/// # Safety
/// `y` and `out` point to `m * n` floats (which fits in `u32`), `bias` to `n`, `n > 0`.
#[inline(always)]
pub unsafe fn bias_relu(y: *const f32, bias: *const f32, out: *mut f32, m: u32, n: u32) {
    let i = index_1d();
    if i < m * n {
        // SAFETY: i < m * n and i % n < n; one writer per element.
        unsafe {
            *out.add(i as usize) = relu_f32(*y.add(i as usize) + *bias.add((i % n) as usize))
        };
    }
}

nvptx_device::entry_points! {
    fused_linear(x: *const f32, weight: *const f32, bias: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => fused_linear, launch_bounds(config::GEOMETRY.threads, config::MIN_BLOCKS);
    bias_relu(y: *const f32, bias: *const f32, out: *mut f32, m: u32, n: u32) => bias_relu;
}

/// How to launch [`fused_linear`]: [`config`]'s geometry with this entry's parameters.
pub const FUSED_LINEAR: KernelSpec = config::GEOMETRY.spec_with_params(
    "fused_linear",
    entry::params::fused_linear,
    Some(config::MIN_BLOCKS),
);

/// How to launch [`bias_relu`]: 1-D blocks of [`BLOCK`] threads, one per element.
pub const BIAS_RELU: KernelSpec = KernelSpec {
    entry: "bias_relu",
    params: entry::params::bias_relu,
    block: Dim3::x(BLOCK),
    grid: GridRule::Items {
        per_block: BLOCK,
        max_blocks: 0,
    },
    static_shared_bytes: 0,
    dynamic_shared: DynamicShared::None,
    launch_bounds: None,
    cluster: 1,
};

/// Blocks of [`BLOCK`] threads for `len` elements.
pub const fn elementwise_blocks(len: u32) -> u32 {
    cdiv(len, BLOCK)
}
