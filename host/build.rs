//! Builds `kernels-gpu` to PTX (no GPU needed) and leaves it in `$OUT_DIR/kernels_gpu.ptx`
//! for `include_str!`. `KERNELS_GPU_ARCH` / `KERNELS_GPU_PTX` override the target. Launch
//! bounds come from the kernels' own `entry_points!` lines (the builder applies them). The
//! kernel crate is found where cargo put it (`DEP_KERNELS_GPU_DIR`, from its build script).

fn main() {
    nvptx_builder::PtxBuilder::for_dependency("DEP_KERNELS_GPU_DIR")
        .map(|b| b.target_from_env("KERNELS_GPU_ARCH", "KERNELS_GPU_PTX"))
        .and_then(|b| b.build_in_out_dir())
        .unwrap_or_else(|e| nvptx_builder::fail(e));
}
