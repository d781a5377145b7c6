// The crate's page (README.md) is its rustdoc front page. Only under rustdoc, so that editing
// the page does not rebuild the crate.
#![cfg_attr(doc, doc = include_str!("../README.md"))]

pub mod autotune;
pub mod axis;
pub mod backend;
pub mod bf16;
pub mod budget;
pub mod data;
pub mod error;
pub mod fusion;
pub mod gemm;
pub mod gpu;
pub mod kernels;
pub mod packed;
pub mod progress;
pub mod ptx;
pub mod reduce;
pub mod reference;
pub mod repack;
pub mod report;
pub mod row_split;
pub mod sgemm;
pub mod shape;
pub mod sim;
pub mod sliding;
pub mod split_k;
pub mod spot;
pub mod suite;
pub mod tile;

pub use backend::Backend;
/// The launch shape and device limits the kernels and the simulator share, re-exported so
/// that users of this crate need no direct dependency on `nvptx-device`.
pub mod launch {
    pub use kernels_gpu::nvptx_device::launch::{
        FunctionLimits, Launch, Limit, LimitError, Limits,
    };
    pub use kernels_gpu::nvptx_device::thread::Dim3;
}
pub use error::Error;
pub use gemm::{Gemm, GemmKernel, Op, Order};
pub use kernels::{KernelSet, MatmulKernel};
/// The kernel crate whose PTX this crate launches: its plain-data catalogue and building
/// blocks, at the version this crate was built with.
pub use kernels_gpu;
pub use kernels_gpu::sgemm::Precision;
pub use sgemm::SgemmKernel;
pub use shape::MatmulShape;
pub use tile::TileWidth;
