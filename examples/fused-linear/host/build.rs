//! Builds the example's own kernel crate, `../kernels`, to PTX (no GPU or CUDA toolkit
//! needed) and leaves it in `$OUT_DIR/fused_linear_kernels.ptx` for `include_str!`.
//! `KERNELS_GPU_ARCH` / `KERNELS_GPU_PTX` override the target, as for `host`.

fn main() {
    nvptx_builder::PtxBuilder::new("../kernels")
        .target_from_env("KERNELS_GPU_ARCH", "KERNELS_GPU_PTX")
        .build_in_out_dir()
        .unwrap_or_else(|e| nvptx_builder::fail(e));
}
