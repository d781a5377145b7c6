//! Launching the matmul kernels on the GPU.

use super::{Gpu, fault};
use crate::error::Result;
use crate::kernels::MatmulKernel;
use crate::sgemm::SgemmKernel;
use crate::shape::MatmulShape;
use crate::tile::TileWidth;
use cudarc::driver::CudaSlice;

impl Gpu {
    /// Runs `kernel` on device buffers: `out = a · b`. Asynchronous: it returns once the
    /// launch is queued; [`Gpu::synchronize`] or a download waits for it.
    ///
    /// Wrong buffer lengths are [`Error::InputLength`](crate::Error::InputLength); a grid, block or shared memory
    /// beyond this device's limits is [`Error::Launch`](crate::Error::Launch), before anything is queued.
    pub fn matmul_device(
        &self, kernel: MatmulKernel, tw: TileWidth, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        shape.check_buffers(a.len(), b.len(), out.len())?;
        if shape.is_trivial() {
            // Nothing to launch: an empty product, or k = 0 and a product of zeros.
            return self
                .stream
                .memset_zeros(out)
                .map_err(|e| fault(kernel.entry(tw), e));
        }
        // The autotuned SGEMM is whichever configuration is fastest here for this shape
        // (timed on these buffers the first time this shape is seen: see crate::autotune).
        let kernel = match kernel {
            MatmulKernel::Sgemm(auto @ (SgemmKernel::Autotuned | SgemmKernel::AutotunedTf32)) => {
                MatmulKernel::Sgemm(crate::autotune::choose(
                    self,
                    a,
                    b,
                    out,
                    shape,
                    auto.precision(),
                )?)
            }
            other => other,
        };
        // The device's own grid, block and shared-memory limits, not CUDA's defaults.
        let launch = kernel.launch_within(tw, &shape, &self.limits)?;
        let entry = kernel.entry(tw);
        let info = self.entry_info(entry)?;
        // `matmul_tiled_dynamic` takes its tile width as a last parameter `tw`.
        let takes_tw = kernel
            .spec(tw)
            .params
            .last()
            .is_some_and(|p| p.name == "tw");
        let (m, n, k, tw) = (shape.m, shape.n, shape.k, tw.get());
        let mut args = self.launcher(&info);
        args.buffer(a)
            .buffer(b)
            .buffer_mut(out)
            .scalar(&m)
            .scalar(&n)
            .scalar(&k);
        if takes_tw {
            args.scalar(&tw);
        }
        // SAFETY: (a, b, out, m, n, k[, tw]) as every matmul entry declares them (the
        // launcher checks the sizes against the PTX); the buffers have the lengths the
        // shape implies (checked above), and the shape fits u32 indices (MatmulShape).
        unsafe { args.launch(&launch) }
    }
}
