// The crate's page (README.md) is its rustdoc front page. Only under rustdoc, so that editing
// the page does not rebuild the crate.
#![cfg_attr(doc, doc = include_str!("../README.md"))]

// The layers, lowest first: each module imports only its own layer and those below it
// (`tests/layers.rs` checks it). The binary (`main.rs`, `cli/`) sits on top.

// Saying on stderr what takes a while: imports nothing of the crate.
pub mod progress;

// What the unit tests share (temporary folders): imports nothing of the crate.
#[cfg(test)]
mod testing;

// What is asked: shapes, tiles, axes, the GEMM call, the error type.
pub mod problem;

// f64 references, error bounds and spot checks.
pub mod check;

// Which kernel and launch; the embedded PTX.
pub mod plan;

// The trait both backends implement.
pub mod backend;

// The backends: the CPU simulator, and the GPU (with cuBLAS and the autotuner).
pub mod gpu;
pub mod sim;

// Every GPU of a host through NCCL, and the same splits on simulated devices.
pub mod multi;

// The GEMM shape suite, over a GPU.
pub mod suite;

/// The launch shape and device limits the kernels and the simulator share, re-exported so
/// that users of this crate need no direct dependency on `nvptx-device`.
pub mod launch {
    pub use kernels_gpu::nvptx_device::launch::{
        FunctionLimits, Launch, Limit, LimitError, Limits,
    };
    pub use kernels_gpu::nvptx_device::thread::Dim3;
}

pub use backend::Backend;
pub use gpu::Gpu;
/// The kernel crate whose PTX this crate launches: its plain-data catalogue and building
/// blocks, at the version this crate was built with.
pub use kernels_gpu;
pub use kernels_gpu::sgemm::Precision;
pub use multi::Gpus;
pub use plan::gemm::GemmKernel;
pub use plan::kernels::{KernelSet, MatmulKernel};
pub use plan::sgemm::SgemmKernel;
pub use problem::error::{Error, Result};
pub use problem::gemm::{Gemm, Op, Order};
pub use problem::shape::MatmulShape;
pub use problem::tile::TileWidth;
pub use sim::Simulator;
