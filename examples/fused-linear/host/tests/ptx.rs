//! The module built from `fused-linear-kernels` carries the entries that crate declares and
//! no other: `kernels-gpu`'s building blocks come without its entry points.

use fused_linear::{BIAS_RELU_ENTRY, FUSED_ENTRY, FUSED_LINEAR_PTX};

#[test]
fn module_holds_exactly_its_own_entries() {
    let mut entries = kernels_gpu_host::plan::ptx::entry_names(FUSED_LINEAR_PTX);
    entries.sort_unstable();
    let mut expected = vec![BIAS_RELU_ENTRY, FUSED_ENTRY];
    expected.sort_unstable();
    assert_eq!(entries, expected);
}
