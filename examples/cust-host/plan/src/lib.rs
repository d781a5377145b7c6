//! What a host launching `kernels-gpu`'s PTX with cust needs from the kernel crate, and
//! nothing that needs the CUDA driver: it is tested on any machine (`cargo test -p
//! cust-plan`), unlike the cust crate, whose binaries need `libcuda.so.1` to start.
//!
//! - [`kernel`]: the entry points the host runs, as rows of `kernels_gpu::catalogue`.
//! - [`args`]: the checks made before the driver is called: buffer lengths, 32-bit sizes,
//!   the argument list against the entry's parameters, and the launch shape each problem
//!   gets ([`args::MatmulPlan`], [`args::sum_passes`], [`args::SlidingPlan`]).
//! - [`reference`]: f64 results to compare with, and the median of timings.
//!
//! The launch limits and their error are `nvptx_device::launch`'s, the ones the cudarc host
//! (`kernels-gpu-host`) and the simulator use: a launch is refused the same way by all.

pub mod args;
pub mod kernel;
pub mod reference;

pub use args::PlanError;
pub use kernel::Kernel;
