//! Launching the matmul kernels on the GPU.

use super::{Gpu, fault};
use crate::error::{Error, Result};
use crate::kernels::MatmulKernel;
use crate::matmul::MatmulBackend;
use crate::shape::MatmulShape;
use crate::tile::TileWidth;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

impl Gpu {
    /// Runs `kernel` on device buffers: `out = a · b`. Asynchronous: it returns once the
    /// launch is queued; [`Gpu::synchronize`] or a download waits for it.
    pub fn matmul_device(
        &self,
        kernel: MatmulKernel,
        tw: TileWidth,
        a: &CudaSlice<f32>,
        b: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        shape.check_inputs(a.len(), b.len())?;
        let out_len = shape.lens().2;
        if out.len() != out_len {
            return Err(Error::InputLength {
                operand: "out",
                rows: shape.m as usize,
                cols: shape.n as usize,
                expected: out_len,
                actual: out.len(),
            });
        }
        if shape.is_trivial() {
            // Nothing to launch: an empty product, or k = 0 and a product of zeros.
            return self
                .stream
                .memset_zeros(out)
                .map_err(|e| fault(kernel.entry(tw), e));
        }
        let launch = kernel.launch(tw, &shape)?;
        let entry = kernel.entry(tw);
        let function = self.function(entry)?;
        let cfg = LaunchConfig {
            grid_dim: (launch.grid.x, launch.grid.y, launch.grid.z),
            block_dim: (launch.block.x, launch.block.y, launch.block.z),
            shared_mem_bytes: launch.dynamic_shared_bytes,
        };
        let (h, w, k, tw_arg) = (shape.m, shape.n, shape.k, tw.get());
        let mut args = self.stream.launch_builder(&function);
        args.arg(a).arg(b).arg(out).arg(&h).arg(&w).arg(&k);
        if kernel == MatmulKernel::TiledDynamic {
            args.arg(&tw_arg);
        }
        // SAFETY: the argument list matches the entry point's signature, the buffers have
        // the lengths the shape implies (checked above) and the shape fits u32 indices.
        unsafe { args.launch(cfg) }
            .map(drop)
            .map_err(|e| fault(entry, e))
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
