//! The kernels-gpu PTX module, built by `build.rs` and embedded in the binary.

/// The complete PTX module.
pub const KERNELS_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels_gpu.ptx"));

/// Names of the `.entry` functions declared in `ptx`, in order.
pub fn entry_names(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.trim_start().strip_prefix(".visible .entry "))
        .map(|rest| rest.split('(').next().unwrap_or(rest).trim())
        .collect()
}
