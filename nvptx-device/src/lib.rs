// The crate's page (README.md) is its rustdoc front page. Only under rustdoc, so that editing
// the page rebuilds neither the crate nor the PTX modules built on it.
#![cfg_attr(doc, doc = include_str!("../README.md"))]
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_gpu_kernel, asm_experimental_arch, stdarch_nvptx)
)]
#![feature(core_intrinsics, allow_internal_unstable, macro_attr)]
// The simulator's current thread, read at every shared access (`sim::context`).
#![cfg_attr(not(target_arch = "nvptx64"), feature(thread_local))]
#![allow(internal_features)]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

/// `instruction!("ptx;", ..)`: PTX instructions without operands (fences, commits,
/// barriers) on the GPU, as one `asm!`; nothing in the simulator. Expanded only in
/// functions whose own contract is the instructions' (a fence has none).
macro_rules! instruction {
    ($($ptx:literal),+) => {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the contract of the function it is expanded in.
        unsafe {
            core::arch::asm!($($ptx),+, options(nostack, preserves_flags));
        }
    };
}

/// `#[pure_instruction("ptx", reg)]` on `fn name(x: f32) -> T { body }`, or
/// `#[pure_instruction("ptx")]` on `fn name() -> u32 { body }`: on the GPU the function is the
/// one PTX instruction `ptx`, without side effects, from `x`'s bits into a `reg` register
/// (`"cvt.rn.f16.f32 {o}, {x};"`), or from nothing into a 32-bit one (`"mov.u32 {o},
/// %laneid;"`); `body` is the simulator's.
macro_rules! pure_instruction {
    attr($ptx:literal, $reg:ident)
        ($(#[$m:meta])* $vis:vis fn $name:ident($x:ident: f32) -> $ty:ty $body:block) => {
        $(#[$m])*
        $vis fn $name($x: f32) -> $ty {
            #[cfg(target_arch = "nvptx64")]
            {
                let out: $ty;
                // SAFETY: a register-to-register instruction.
                unsafe {
                    core::arch::asm!($ptx, o = out($reg) out, x = in(reg32) $x.to_bits(),
                                     options(pure, nomem, nostack, preserves_flags));
                }
                out
            }
            #[cfg(not(target_arch = "nvptx64"))]
            $body
        }
    };
    attr($ptx:literal) ($(#[$m:meta])* $vis:vis fn $name:ident() -> u32 $body:block) => {
        $(#[$m])*
        $vis fn $name() -> u32 {
            #[cfg(target_arch = "nvptx64")]
            {
                let out: u32;
                // SAFETY: reads a special register.
                unsafe {
                    core::arch::asm!($ptx, o = out(reg32) out,
                                     options(pure, nomem, nostack, preserves_flags));
                }
                out
            }
            #[cfg(not(target_arch = "nvptx64"))]
            $body
        }
    };
}

pub mod atomic;
pub mod catalogue;
pub mod cluster;
pub mod intrinsics;
pub mod launch;
pub mod mbarrier;
pub mod mma;
pub mod pipeline;
pub mod shared;
pub mod thread;
pub mod tma;
pub mod warp;
pub mod wgmma;

#[cfg(not(target_arch = "nvptx64"))]
pub mod sim;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // A kernel cannot unwind; trapping aborts the launch and the host sees an error.
    // SAFETY: `trap` only ends this kernel launch.
    unsafe { core::arch::asm!("trap;", options(noreturn, nostack)) }
}

/// Its first argument: `entry_points!`'s optional values with their defaults.
#[doc(hidden)]
#[macro_export]
macro_rules! __first {
    ($first:expr $(, $rest:expr)*) => {
        $first
    };
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
/// MIN_BLOCKS)` registers. `launch_bounds(MAX_THREADS, MIN_BLOCKS, CLUSTER)` also gives it
/// CUDA C's `__cluster_dims__(CLUSTER, 1, 1)`, `.reqnctapercluster CLUSTER, 1, 1` (sm_90
/// and later): every launch of it runs in clusters of CLUSTER blocks along x
/// ([`crate::cluster`]), with no launch attribute. All are constant expressions. rustc has
/// no attribute for them, so the macro leaves a marker comment in the module,
/// `// nvptx-device:launch_bounds ENTRY MAX_THREADS MIN_BLOCKS CLUSTER`, which
/// `nvptx-builder` turns into the directives (a module built otherwise has none).
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
        $(, launch_bounds($threads:expr, $blocks:expr $(, $cluster:expr)?))?; )*) => {
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
                concat!("// nvptx-device:launch_bounds ", stringify!($entry), " {t} {b} {c}"),
                t = const { $threads as u32 },
                b = const { $blocks as u32 },
                c = const { $crate::__first!($($cluster,)? 1) as u32 },
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
