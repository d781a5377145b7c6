//! The kernels-gpu PTX module, built by `build.rs` and embedded in the binary. Its text is
//! parsed by `nvptx_builder::ptx`, the one PTX parser of the project.

pub use nvptx_builder::ptx::{entry_body, entry_directives, entry_names, param_sizes};

/// The complete PTX module.
pub const KERNELS_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels_gpu.ptx"));

/// The module of the `hopper` feature's entry points (rung 14, `wgmma`), built for `sm_90a`:
/// loaded, on a GPU of compute capability 9.0 only, when one of them is first launched.
pub const HOPPER_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels_gpu_hopper.ptx"));
