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
pub mod reduce;
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
/// submodule `entry` of the calling module.
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
            /// The same contract as the kernel function it calls; run it through [`crate::sim`].
            #[cfg(not(target_arch = "nvptx64"))]
            pub unsafe fn $entry($($arg: $ty),*) {
                // SAFETY: forwarded unchanged; the caller upholds the kernel's contract.
                unsafe { super::$body $(::<$($generic),*>)? ($($arg),*) }
            }
        )*
        }
    };
}
