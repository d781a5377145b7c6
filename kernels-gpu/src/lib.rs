//! Pure-Rust CUDA kernels and the small device API they are written in.
//!
//! The crate compiles two ways from the same source:
//!
//! * for `nvptx64-nvidia-cuda` it is a `#![no_std]` PTX module: every kernel named in an
//!   [`entry_points!`] list becomes a `.entry`, the [`thread`] functions are the special
//!   registers, and [`shared`] memory is `.shared` state space accessed with `ld.shared` /
//!   `st.shared`;
//! * for the host it is an ordinary library whose device API is backed by [`sim`], a CPU
//!   simulator that runs each block's threads concurrently on real OS threads, with real
//!   barriers, and reports races, divergent barriers and out-of-bounds shared accesses.
//!
//! The API is shaped like rust-cuda's `cuda_std` so kernels read like rust-cuda code:
//! `thread::thread_idx_x()`, `thread::sync_threads()`, `shared_array!`, `shared::dynamic_shared()`.
//!
//! # What is here
//!
//! | module | what | CUDA C |
//! |---|---|---|
//! | [`thread`] | indices, dimensions, the block barrier | `threadIdx`, `blockIdx`, `__syncthreads()` |
//! | [`shared`], [`shared_array!`] | block-shared memory, static and dynamic | `__shared__`, `extern __shared__` |
//! | [`pipeline`] | asynchronous global → shared copies in groups | `cp.async`, `__pipeline_memcpy_async` |
//! | [`warp`] | lane index, register shuffles, warp sum | `__shfl_down_sync`, `__shfl_xor_sync` |
//! | [`intrinsics`] | FMA, 16-byte loads | `fmaf`, `float4` loads |
//! | [`matmul`] | the lecture's matmul kernels, and their phase loop [`matmul::tiled::tiled_dot`] as a building block | |
//! | [`sgemm`] | SGEMM beyond the lecture: coalescing to warp tiling and double buffering, one rung per file | |
//! | [`reduce`], [`sliding`] | minitorch 3.5's sum reduction and sliding average | |
//! | [`entry_points!`] | exports kernels as PTX `.entry` functions | `extern "C" __global__` |
//! | [`sim`] (host only) | the CPU simulator that runs all of the above | |
//!
//! # Use from another kernel crate
//!
//! A kernel crate of your own depends on this one and reuses the device API and the
//! building blocks; its kernels and this crate's are linked into one PTX module by
//! `nvptx-builder`. It needs the nightly toolchain this crate needs (`-Zbuild-std=core`, the
//! `gpu-kernel` ABI), and on `nvptx64` the `abi_gpu_kernel` feature, because the functions
//! [`entry_points!`] expands to are `extern "gpu-kernel"`:
//!
//! ```ignore
//! #![no_std]
//! #![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
//!
//! use kernels_gpu::matmul::{at, tiled::tiled_dot};
//! use kernels_gpu::shared_array;
//!
//! /// out = relu(x @ w + b), one 16 × 16 block per output tile.
//! pub unsafe fn fused_linear(x: *const f32, w: *const f32, b: *const f32, out: *mut f32,
//!                            m: u32, n: u32, k: u32) {
//!     let (xs, ws) = (shared_array!(f32; 16 * 16), shared_array!(f32; 16 * 16));
//!     unsafe {
//!         tiled_dot(xs, ws, 16, x, w, m, n, k, |r, c, p| {
//!             *out.add(at(r, n, c)) = (p + *b.add(c as usize)).max(0.0)
//!         })
//!     }
//! }
//!
//! kernels_gpu::entry_points! {
//!     fused_linear_tw16(x: *const f32, w: *const f32, b: *const f32, out: *mut f32,
//!                       m: u32, n: u32, k: u32) => fused_linear;
//! }
//! ```
//!
//! It needs no `#[panic_handler]`: this crate provides the nvptx one (a second would be a
//! duplicate lang item). `shared_array!` and the other macros carry the unstable features
//! their expansions need. The module built from such a crate also contains this crate's own
//! entry points, since a cdylib exports every `#[no_mangle]` function of its dependencies.
//! The repository's `examples/fused-linear` is a complete example, host side included.
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_gpu_kernel, asm_experimental_arch, stdarch_nvptx)
)]
#![feature(core_intrinsics, allow_internal_unstable)]
#![allow(internal_features)]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod intrinsics;
pub mod matmul;
pub mod pipeline;
pub mod reduce;
pub mod sgemm;
pub mod shared;
pub mod sliding;
pub mod thread;
pub mod warp;

#[cfg(not(target_arch = "nvptx64"))]
pub mod sim;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // A kernel cannot unwind; trapping aborts the launch and the host sees an error.
    // SAFETY: `trap` only ends this kernel launch.
    unsafe { core::arch::asm!("trap;", options(noreturn, nostack)) }
}

/// Declares kernel entry points that call (possibly generic) Rust kernel functions, in a
/// submodule `entry` of the calling module: CUDA C's `extern "C" __global__`.
///
/// On the GPU each line becomes an exported `extern "gpu-kernel"` function, i.e. a PTX
/// `.entry` with exactly this name. On the host it becomes a plain `unsafe fn` of the same
/// name and signature, which the simulator launches. Either way the kernel body is written
/// once, in the function the entry forwards to.
///
/// ```ignore
/// entry_points! {
///     matmul_tiled_static_tw16(m: *const f32, n: *const f32, out: *mut f32, h: u32, w: u32, k: u32)
///         => matmul_tiled_static::<16>;
/// }
/// ```
#[macro_export]
macro_rules! entry_points {
    ($( $(#[$meta:meta])* $entry:ident ( $($arg:ident : $ty:ty),* $(,)? ) => $body:ident $(::<$($generic:tt),*>)?; )*) => {
        /// The exported entry points of this module's kernels.
        pub mod entry {
        #[allow(unused_imports)]
        use super::*;
        $(
            $(#[$meta])*
            #[doc = concat!("Entry point `", stringify!($entry), "`: calls [`", stringify!($body), "`](super::", stringify!($body), ").")]
            ///
            /// # Safety
            /// The same contract as the kernel function it calls.
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(no_mangle)]
            pub unsafe extern "gpu-kernel" fn $entry($($arg: $ty),*) {
                // SAFETY: forwarded unchanged; the caller upholds the kernel's contract.
                unsafe { super::$body $(::<$($generic),*>)? ($($arg),*) }
            }

            $(#[$meta])*
            #[doc = concat!("Entry point `", stringify!($entry), "`: calls [`", stringify!($body), "`](super::", stringify!($body), ").")]
            ///
            /// # Safety
            /// The same contract as the kernel function it calls; run it in the simulator,
            /// inside `kernels_gpu::sim::launch`.
            #[cfg(not(target_arch = "nvptx64"))]
            pub unsafe fn $entry($($arg: $ty),*) {
                // SAFETY: forwarded unchanged; the caller upholds the kernel's contract.
                unsafe { super::$body $(::<$($generic),*>)? ($($arg),*) }
            }
        )*
        }
    };
}
