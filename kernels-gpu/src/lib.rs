// The crate's page (README.md) is its rustdoc front page. Only under rustdoc, so that editing
// the page rebuilds neither the crate nor the PTX modules built on it.
#![cfg_attr(doc, doc = include_str!("../README.md"))]
#![no_std]
// `#[warp_tiled]` (the SGEMM warp tile's parameters on its kernels) is a `macro_rules!`
// attribute.
#![feature(macro_attr)]
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
