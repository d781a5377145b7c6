//! `kernels-gpu`'s PTX launched with [cust](https://crates.io/crates/cust), the host crate
//! of rust-cuda projects, from the kernel crate's plain-data catalogue
//! (`kernels_gpu::catalogue`): launch geometry, shared memory and parameter lists come from
//! the catalogue's rows ([`cust_plan`]), buffers are cust `DeviceBuffer<f32>`s, and the
//! kernels are queued with cust's `launch!`.
//!
//! Every launch is checked before the driver is called, as the cudarc host checks it: the
//! buffers' lengths and the argument list ([`cust_plan::PlanError`]), then the device's
//! limits and the function's own ([`LimitError`], the very type the cudarc host and the
//! simulator return).
//!
//! This crate links `libcuda.so.1` (through cust_raw): its programs start only where the
//! CUDA driver is installed. The build needs no toolkit: see `libcuda-stub`.

pub mod error;
pub mod gpu;

pub use error::{Error, Result};
pub use gpu::CustGpu;
pub use nvptx_device::launch::{FunctionLimits, Launch, LimitError, Limits};

/// The `kernels-gpu` PTX module, built by this crate's build script.
pub const KERNELS_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels_gpu.ptx"));
