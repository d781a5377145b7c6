//! The harness of the GPU test binaries: libtest-compatible output in which, where there is
//! no GPU, every test is reported as *ignored* with the reason printed — never as passed.

use kernels_gpu_host::gpu::Gpu;
use libtest_mimic::{Arguments, Failed, Trial};
use std::sync::Arc;

/// One GPU test body.
pub type Test = Box<dyn FnOnce(&Gpu) -> Result<(), Failed> + Send>;

/// The GPU, or `None` after saying why the GPU tests will be skipped.
pub fn gpu() -> Option<Arc<Gpu>> {
    match Gpu::new() {
        Ok(gpu) => Some(Arc::new(gpu)),
        Err(e) => {
            eprintln!("GPU tests SKIPPED (reported as ignored): {e}");
            None
        }
    }
}

/// A trial that runs `f` on the GPU, ignored where there is none.
pub fn trial(
    gpu: &Option<Arc<Gpu>>, name: String,
    f: impl FnOnce(&Gpu) -> Result<(), Failed> + Send + 'static,
) -> Trial {
    let g = gpu.clone();
    let ignored = g.is_none();
    Trial::test(name, move || {
        f(g.as_deref().expect("ignored without a GPU"))
    })
    .with_ignored_flag(ignored)
}

/// Runs `trials` with the command line's libtest arguments, and exits.
pub fn run(trials: Vec<Trial>) -> ! {
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}
