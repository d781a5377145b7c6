//! Builds `kernels-gpu` to PTX (no GPU needed) and leaves two modules in `$OUT_DIR` for
//! `include_str!`: `kernels_gpu.ptx`, every entry point for `sm_80` (`KERNELS_GPU_ARCH` /
//! `KERNELS_GPU_PTX` override the target), and `kernels_gpu_hopper.ptx`, the entry points of
//! the `hopper` feature alone (rung 14's `wgmma`), for `sm_90a` with PTX ISA 8.0. The two
//! builds run at once, each in a target directory of its own that every profile shares
//! (`nvptx_builder::shared_target_dir`), so that neither invalidates the other and a second
//! profile finds them built. Launch bounds come from the kernels' own `entry_points!` lines
//! (the builder applies them). The kernel crate is found where cargo put it
//! (`DEP_KERNELS_GPU_DIR`, from its build script).

use nvptx_builder::{BuildError, PtxBuilder};

fn main() {
    let kernels = || PtxBuilder::for_dependency("DEP_KERNELS_GPU_DIR");
    let main = kernels().map(|b| b.target_from_env("KERNELS_GPU_ARCH", "KERNELS_GPU_PTX"));
    let hopper = kernels().map(|b| {
        b.arch("sm_90a")
            .ptx_version("ptx80")
            .no_default_features()
            .feature("hopper")
            .module_name("kernels_gpu_hopper")
    });
    let build = |builder: Result<PtxBuilder, BuildError>| builder?.build_in_out_dir();
    let (main, hopper) = std::thread::scope(|s| {
        let hopper = s.spawn(|| build(hopper));
        (build(main), hopper.join())
    });
    let hopper = hopper.unwrap_or_else(|_| {
        Err(BuildError::Io(std::io::Error::other(
            "the sm_90a build panicked",
        )))
    });
    for result in [main, hopper] {
        if let Err(e) = result {
            nvptx_builder::fail(e);
        }
    }
}
