//! A device API for GPU kernels compiled by rustc's own `nvptx64-nvidia-cuda` target, shaped
//! like rust-cuda's `cuda_std`, and a CPU simulator that runs the same kernel source.
//!
//! The crate holds no kernels, so a kernel crate built on it exports only its own entry
//! points. It compiles two ways from the same source:
//!
//! * for `nvptx64-nvidia-cuda` it is `#![no_std]` device code: the [`thread`] functions are
//!   the special registers, [`shared`] memory is `.shared` state space accessed with
//!   `ld.shared` / `st.shared`, and [`entry_points!`] turns kernel functions into PTX
//!   `.entry` functions;
//! * for the host it is an ordinary library whose device API is backed by [`sim`], a CPU
//!   simulator that runs each block's threads concurrently on real OS threads, with real
//!   barriers, and reports races, divergent barriers and out-of-bounds shared accesses.
//!
//! | module | what | CUDA C |
//! |---|---|---|
//! | [`thread`] | indices, dimensions, the block barrier | `threadIdx`, `blockIdx`, `__syncthreads()` |
//! | [`shared`], [`shared_array!`] | block-shared memory, static and dynamic | `__shared__`, `extern __shared__` |
//! | [`pipeline`] | asynchronous global → shared copies in groups | `cp.async`, `__pipeline_memcpy_async` |
//! | [`warp`] | lane index, register shuffles, ballot, warp sum | `__shfl_up_sync`, `__shfl_down_sync`, `__shfl_xor_sync`, `__ballot_sync` |
//! | [`intrinsics`] | FMA, NaN-propagating max, 16-byte loads | `fmaf`, `max.NaN.f32`, `float4` loads |
//! | [`atomic`] | global atomics, acquire loads and release stores between blocks | `atomicAdd`, `cuda::atomic_ref` |
//! | [`mma`] | tensor-core TF32 `mma.sync` m16n8k8 with documented fragment layouts, `cvt.rna.tf32.f32`, `ldmatrix` | `mma.sync`, `ldmatrix` (inline PTX) |
//! | [`entry_points!`] | exports kernels as PTX `.entry` functions, with launch bounds | `extern "C" __global__`, `__launch_bounds__` |
//! | [`launch`] | one launch shape, device limits and the typed error for exceeding them | `<<<grid, block, shared>>>` |
//! | [`catalogue`] | plain-data descriptions of entry points (parameters, block, grid rule, shared memory) that any host library can read | |
//! | [`sim`] (host only) | the CPU simulator that runs all of the above | |
//!
//! # A kernel crate
//!
//! ```ignore
//! #![no_std]
//! // `entry_points!` expands to `extern "gpu-kernel"` functions, which need this feature in
//! // the crate that invokes it.
//! #![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
//!
//! use nvptx_device::{entry_points, shared_array, thread};
//!
//! /// `out[i] = 2 · x[i]`, one thread per element.
//! pub unsafe fn double(x: *const f32, out: *mut f32, n: u32) {
//!     let i = thread::index_1d();
//!     if i < n {
//!         unsafe { *out.add(i as usize) = 2.0 * *x.add(i as usize) };
//!     }
//! }
//!
//! entry_points! {
//!     // ≤ 256 threads per block, 4 blocks per SM: ptxas caps the registers to fit.
//!     double_f32(x: *const f32, out: *mut f32, n: u32) => double, launch_bounds(256, 4);
//! }
//! ```
//!
//! Build it to PTX with `nvptx-builder` from a build script; it needs no `#[panic_handler]`
//! (this crate provides the nvptx one, and a second would be a duplicate lang item). Test it
//! on the host first with [`sim::launch`].
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_gpu_kernel, asm_experimental_arch, stdarch_nvptx)
)]
#![feature(core_intrinsics, allow_internal_unstable)]
#![allow(internal_features)]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod atomic;
pub mod catalogue;
pub mod intrinsics;
pub mod launch;
pub mod mma;
pub mod pipeline;
pub mod shared;
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
/// `, launch_bounds(MAX_THREADS, MIN_BLOCKS)` after an entry's kernel is CUDA C's
/// `__launch_bounds__`: the entry gets `.maxntid MAX_THREADS, 1, 1` and `.minnctapersm
/// MIN_BLOCKS` (none for 0), so that ptxas keeps each thread to `65536 / (MAX_THREADS ·
/// MIN_BLOCKS)` registers. Both are constant expressions. rustc has no attribute for them,
/// so the macro leaves a marker comment in the module,
/// `// nvptx-device:launch_bounds ENTRY MAX_THREADS MIN_BLOCKS`, which `nvptx-builder`
/// turns into the directives (a module built otherwise has none).
///
/// ```ignore
/// entry_points! {
///     matmul_tiled_static_tw16(m: *const f32, n: *const f32, out: *mut f32, h: u32, w: u32, k: u32)
///         => matmul_tiled_static::<16>;
///     sgemm_x(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
///         => multistage::sgemm_multistage::<128, 128, /* … */>, launch_bounds(256, 2);
/// }
/// ```
#[macro_export]
#[allow_internal_unstable(asm_experimental_arch)]
macro_rules! entry_points {
    ($( $(#[$meta:meta])*
        $entry:ident ( $($arg:ident : $ty:ty),* $(,)? ) => $($body:ident)::+ $(::<$($generic:tt),*> $(:: $method:ident)?)?
        $(, launch_bounds($threads:expr, $blocks:expr))?; )*) => {
        /// The exported entry points of this module's kernels.
        pub mod entry {
        #[allow(unused_imports)]
        use super::*;

        /// Each entry point's parameters, from its signature, for its
        /// [`KernelSpec`]($crate::catalogue::KernelSpec).
        #[allow(non_upper_case_globals)]
        pub mod params {
            #[allow(unused_imports)]
            use super::super::*;
            $(
                #[doc = concat!("The parameters of `", stringify!($entry), "`.")]
                pub const $entry: &[$crate::catalogue::Param] = $crate::params!($($arg: $ty),*);
            )*
        }
        $(
            $(#[$meta])*
            #[doc = concat!("Entry point `", stringify!($entry), "`.")]
            ///
            /// # Safety
            /// The same contract as the kernel function it calls.
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(no_mangle)]
            pub unsafe extern "gpu-kernel" fn $entry($($arg: $ty),*) {
                // SAFETY: forwarded unchanged; the caller upholds the kernel's contract.
                unsafe { super::$($body)::+ $(::<$($generic),*> $(:: $method)?)? ($($arg),*) }
            }

            $(
            #[cfg(target_arch = "nvptx64")]
            ::core::arch::global_asm!(
                concat!("// nvptx-device:launch_bounds ", stringify!($entry), " {t} {b}"),
                t = const { $threads as u32 },
                b = const { $blocks as u32 },
            );
            )?

            $(#[$meta])*
            #[doc = concat!("Entry point `", stringify!($entry), "`.")]
            ///
            /// # Safety
            /// The same contract as the kernel function it calls; run it in the simulator,
            /// inside `nvptx_device::sim::launch`.
            #[cfg(not(target_arch = "nvptx64"))]
            pub unsafe fn $entry($($arg: $ty),*) {
                // SAFETY: forwarded unchanged; the caller upholds the kernel's contract.
                unsafe { super::$($body)::+ $(::<$($generic),*> $(:: $method)?)? ($($arg),*) }
            }
        )*
        }
    };
}
