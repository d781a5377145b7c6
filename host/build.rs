//! Builds `kernels-gpu` to PTX (no GPU needed) and leaves it in `$OUT_DIR/kernels_gpu.ptx`
//! for `include_str!`. `KERNELS_GPU_ARCH` / `KERNELS_GPU_PTX` override the target. Launch
//! bounds come from the kernels' own `entry_points!` lines (the builder applies them). The
//! kernel crate is found where cargo put it (`DEP_KERNELS_GPU_DIR`, from its build script).

fn main() {
    println!("cargo:rerun-if-env-changed=KERNELS_GPU_ARCH");
    println!("cargo:rerun-if-env-changed=KERNELS_GPU_PTX");
    let arch = std::env::var("KERNELS_GPU_ARCH").unwrap_or_else(|_| "sm_80".into());
    let ptx = std::env::var("KERNELS_GPU_PTX").unwrap_or_else(|_| "ptx78".into());
    let kernels = std::env::var("DEP_KERNELS_GPU_DIR")
        .expect("kernels-gpu's build script names its folder (DEP_KERNELS_GPU_DIR)");
    nvptx_builder::PtxBuilder::new(kernels)
        .arch(&arch)
        .ptx_version(&ptx)
        .build_in_out_dir()
        .unwrap_or_else(|e| nvptx_builder::fail(e));
}
