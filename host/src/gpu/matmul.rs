//! Launching the matmul kernels on the GPU.

use super::{Gpu, KernelArg, fault};
use crate::error::Result;
use crate::kernels::MatmulKernel;
use crate::matmul::MatmulBackend;
use crate::sgemm::SgemmKernel;
use crate::shape::MatmulShape;
use crate::tile::TileWidth;
use cudarc::driver::CudaSlice;

impl Gpu {
    /// Runs `kernel` on device buffers: `out = a · b`. Asynchronous: it returns once the
    /// launch is queued; [`Gpu::synchronize`] or a download waits for it.
    ///
    /// Wrong buffer lengths are [`Error::InputLength`](crate::Error::InputLength); a grid, block or shared memory
    /// beyond this device's limits is [`Error::GridTooLarge`](crate::Error::GridTooLarge) or
    /// [`Error::LaunchExceedsDevice`](crate::Error::LaunchExceedsDevice), before anything is queued.
    pub fn matmul_device(
        &self,
        kernel: MatmulKernel,
        tw: TileWidth,
        a: &CudaSlice<f32>,
        b: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
        shape: MatmulShape,
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
            MatmulKernel::Sgemm(SgemmKernel::Autotuned) => {
                MatmulKernel::Sgemm(crate::autotune::choose(self, a, b, out, shape)?)
            }
            other => other,
        };
        // The device's own grid, block and shared-memory limits, not CUDA's defaults.
        let launch = kernel.launch_within(tw, &shape, &self.limits)?;
        let mut args = vec![
            KernelArg::buffer(a),
            KernelArg::buffer(b),
            KernelArg::buffer(out),
            KernelArg::U32(shape.m),
            KernelArg::U32(shape.n),
            KernelArg::U32(shape.k),
        ];
        if kernel == MatmulKernel::TiledDynamic {
            args.push(KernelArg::U32(tw.get()));
        }
        // SAFETY: (m, n, out, h, w, k[, tw]) as every matmul entry declares them (the SGEMM
        // ones name them a, b, out, m, n, k; launch_raw checks the sizes against the PTX);
        // the buffers have the lengths the shape implies (checked above), the shape fits
        // u32 indices (MatmulShape), and `out` is borrowed mutably, so nothing else uses it
        // while the launch is queued on this stream.
        unsafe { self.launch_raw(kernel.entry(tw), &launch, &args) }
    }
}

impl MatmulBackend for Gpu {
    fn matmul(
        &self,
        kernel: MatmulKernel,
        tw: TileWidth,
        a: &[f32],
        b: &[f32],
        shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let (la, lb, lo) = shape.lens();
        self.reserve(4 * (la + lb + lo) as u64)?;
        let (da, db) = (self.upload(a)?, self.upload(b)?);
        let mut out = self.zeros(lo)?;
        self.matmul_device(kernel, tw, &da, &db, &mut out, shape)?;
        self.synchronize(kernel.entry(tw))?;
        self.download(&out)
    }
}
