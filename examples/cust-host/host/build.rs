//! Builds `kernels-gpu` to PTX as the cudarc host (`host/build.rs`) does, with the same
//! target and overrides, so that both launch the same module: `$OUT_DIR/kernels_gpu.ptx`.
//! The kernel crate is found where cargo put it (`DEP_KERNELS_GPU_DIR`).

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
