//! Builds `kernels-gpu` to PTX as the cudarc host (`host/build.rs`) does, with the same
//! target and overrides, so that both launch the same module: `$OUT_DIR/kernels_gpu.ptx`.
//! The kernel crate is found where cargo put it (`DEP_KERNELS_GPU_DIR`).

fn main() {
    nvptx_builder::PtxBuilder::for_dependency("DEP_KERNELS_GPU_DIR")
        .map(|b| b.target_from_env("KERNELS_GPU_ARCH", "KERNELS_GPU_PTX"))
        .and_then(|b| b.build_in_out_dir())
        .unwrap_or_else(|e| nvptx_builder::fail(e));
}
