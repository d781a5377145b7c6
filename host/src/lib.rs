//! Host side of the project: the embedded PTX, typed launchers for its kernels on a GPU
//! (through cudarc) or on the CPU simulator, a CPU reference, and timing.
//!
//! Layers, as in cudarc: [`gpu::Gpu`] owns the context and module (checked raw launches);
//! [`backend::Backend`] is the typed API on top, one object-safe trait for the GPU and the
//! simulator alike.

pub mod autotune;
pub mod axis;
pub mod backend;
pub mod budget;
pub mod data;
pub mod error;
pub mod fusion;
pub mod gemm;
pub mod gpu;
pub mod kernels;
pub mod ptx;
pub mod reduce;
pub mod reference;
pub mod report;
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
