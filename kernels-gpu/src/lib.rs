//! Pure-Rust CUDA kernels, written against [`nvptx_device`]'s device API: the CUDA MODE
//! lecture 5 matmuls, an SGEMM ladder toward cuBLAS, and minitorch 3.5's reduction and
//! sliding average.
//!
//! | module | what |
//! |---|---|
//! | [`matmul`] | the lecture's matmul kernels, and their phase loop [`matmul::tiled::tiled_dot`] as a building block |
//! | [`sgemm`] | SGEMM beyond the lecture: coalescing to warp tiling, double buffering and `cp.async`, one rung per numbered file, every configuration one line of [`sgemm::CONFIGS`] |
//! | [`reduce`], [`sliding`] | minitorch 3.5's sum reduction and sliding average |
//! | [`catalogue`] (host only) | every entry point as plain data (parameters, block, grid rule, shared memory, launch bounds) for any host library |
//!
//! The crate compiles for `nvptx64-nvidia-cuda` (built to PTX by `nvptx-builder`) and for
//! the host, where every kernel runs in [`nvptx_device::sim`].
//!
//! # Features
//!
//! * `entries` (default): export the entry points. A kernel crate that reuses the building
//!   blocks ([`matmul::tiled::tiled_dot`], the SGEMM [`sgemm::parts`]) depends on this crate
//!   with `default-features = false`, and its PTX module then carries its own entries only.
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_gpu_kernel, asm_experimental_arch, stdarch_nvptx)
)]

#[macro_use]
mod macros;

#[cfg(not(target_arch = "nvptx64"))]
pub mod catalogue;
pub mod fusion;
pub mod matmul;
pub mod reduce;
pub mod sgemm;
pub mod sliding;

pub use nvptx_device;
