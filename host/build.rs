//! Builds `kernels-gpu` to PTX (no GPU needed) and leaves two modules in `$OUT_DIR` for
//! `include_str!`: `kernels_gpu.ptx`, every entry point for `sm_80` (`KERNELS_GPU_ARCH` /
//! `KERNELS_GPU_PTX` override the target), and `kernels_gpu_hopper.ptx`, the entry points of
//! the `hopper` feature alone (rung 14's `wgmma`), for `sm_90a` with PTX ISA 8.0, in a
//! target directory of its own so that neither build invalidates the other. Launch bounds
//! come from the kernels' own `entry_points!` lines (the builder applies them). The kernel
//! crate is found where cargo put it (`DEP_KERNELS_GPU_DIR`, from its build script).

fn main() {
    let out_dir =
        std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let build = |builder: Result<nvptx_builder::PtxBuilder, nvptx_builder::BuildError>| {
        builder
            .and_then(|b| b.build_in_out_dir())
            .unwrap_or_else(|e| nvptx_builder::fail(e));
    };
    build(
        nvptx_builder::PtxBuilder::for_dependency("DEP_KERNELS_GPU_DIR")
            .map(|b| b.target_from_env("KERNELS_GPU_ARCH", "KERNELS_GPU_PTX")),
    );
    build(
        nvptx_builder::PtxBuilder::for_dependency("DEP_KERNELS_GPU_DIR").map(|b| {
            b.arch("sm_90a")
                .ptx_version("ptx80")
                .no_default_features()
                .feature("hopper")
                .module_name("kernels_gpu_hopper")
                .target_dir(out_dir.join("ptx-target-hopper"))
        }),
    );
}
