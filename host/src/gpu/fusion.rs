//! The fusion lesson on the GPU ([`crate::plan::fusion`]).

use super::Gpu;
use crate::gpu::AxisScratch;
use crate::plan::fusion::{intermediate_len, zip_launch};
use crate::problem::axis::{Axis, AxisOp, AxisShape};
use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
use cudarc::driver::CudaSlice;

impl Gpu {
    /// Queues the zip: `tmp[(i·n + j)·k + l] = a[i, l] · b[l, j]`; `tmp` holds `m·n·k`
    /// floats.
    pub fn zip_device(
        &self, a: &CudaSlice<f32>, b: &CudaSlice<f32>, tmp: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        shape.check_inputs(a.len(), b.len())?;
        let len = intermediate_len(shape)?;
        let rows = shape.m as usize * shape.n as usize;
        Error::check_len("tmp", rows, shape.k as usize, tmp.len())?;
        if len == 0 {
            return Ok(());
        }
        let info = self.entry_info(kernels_gpu::catalogue::ZIP.entry)?;
        let mut args = self.launcher(&info);
        args.buffer(a).buffer(b).buffer_mut(tmp).dims(&shape);
        // SAFETY: (a, b, tmp, m, n, k) as the entry declares them; the lengths are checked
        // above and m·n·k fits u32.
        unsafe { args.launch(&zip_launch(len)) }
    }

    /// Queues `out = a · b` as zip into `tmp`, then the row sums of `tmp` into `out`.
    #[allow(clippy::too_many_arguments)]
    pub fn zip_reduce_matmul_device(
        &self, a: &CudaSlice<f32>, b: &CudaSlice<f32>, tmp: &mut CudaSlice<f32>,
        out: &mut CudaSlice<f32>, scratch: &mut AxisScratch, shape: MatmulShape,
    ) -> Result<()> {
        self.zip_device(a, b, tmp, shape)?;
        let rows = shape.m as usize * shape.n as usize;
        if shape.k == 0 {
            return self
                .stream
                .memset_zeros(out)
                .map_err(|e| super::fault("memset", e));
        }
        let axis = AxisShape::new(rows, shape.k as usize)?;
        self.reduce_axis_device(AxisOp::Sum, Axis::Rows, tmp, axis, out, scratch)
    }
}
