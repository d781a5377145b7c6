//! The [`Backend`] operations on host slices: upload, launch, wait, download.

use super::Gpu;
use super::vector::{AxisScratch, SlidingScratch};
use crate::backend::Backend;
use crate::plan::gemm::GemmKernel;
use crate::plan::kernels::MatmulKernel;
use crate::plan::reduce::{self, ReduceKernel};
use crate::plan::sliding::{SlidingKernel, SlidingShape};
use crate::problem::axis::{Axis, AxisOp, AxisShape};
use crate::problem::error::Result;
use crate::problem::gemm::Gemm;
use crate::problem::shape::MatmulShape;
use crate::problem::tile::TileWidth;

impl Backend for Gpu {
    fn matmul(
        &self, kernel: MatmulKernel, tw: TileWidth, a: &[f32], b: &[f32], shape: MatmulShape,
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

    /// Uploads the operands and `c`, runs [`Gpu::gemm_device`], downloads `c`.
    fn gemm(
        &self, call: &Gemm, kernel: GemmKernel, a: &[f32], b: &[f32], c: &mut [f32],
    ) -> Result<()> {
        call.check(a.len(), b.len(), c.len())?;
        self.reserve(4 * (a.len() + b.len() + c.len()) as u64)?;
        // An empty slice still needs a buffer to pass (the kernels read none of it).
        let upload = |x: &[f32]| self.upload(if x.is_empty() { &[0.0] } else { x });
        let (da, db, mut dc) = (upload(a)?, upload(b)?, upload(c)?);
        self.gemm_device(call, kernel, &da, &db, &mut dc)?;
        self.synchronize("gemm")?;
        if !c.is_empty() {
            c.copy_from_slice(&self.download(&dc)?);
        }
        Ok(())
    }

    /// The sum of a host slice.
    fn sum(&self, kernel: ReduceKernel, input: &[f32]) -> Result<f32> {
        reduce::check_len(input.len())?;
        let data = self.upload(input)?;
        let mut scratch = self.reduce_scratch()?;
        self.sum_device(kernel, &data, &mut scratch)?;
        self.synchronize(kernel.entry())?;
        Ok(self.download(&scratch.result)?[0])
    }

    /// The sliding average of a host slice.
    fn sliding_average(&self, kernel: SlidingKernel, a: &[f32], window: usize) -> Result<Vec<f32>> {
        let shape = SlidingShape::new(a.len(), window)?;
        if shape.outputs() == 0 {
            return Ok(vec![]);
        }
        let da = self.upload(a)?;
        let mut out = self.zeros(shape.outputs() as usize)?;
        let mut scratch = SlidingScratch::default();
        self.sliding_average_device(kernel, &da, window, &mut out, &mut scratch)?;
        self.synchronize(kernel.entry())?;
        self.download(&out)
    }

    /// `op` along `axis` of a host matrix.
    fn reduce_axis(
        &self, op: AxisOp, axis: Axis, x: &[f32], rows: usize, cols: usize,
    ) -> Result<Vec<f32>> {
        let (shape, outputs) = AxisShape::checked(op, axis, x.len(), rows, cols)?;
        if outputs == 0 {
            return Ok(vec![]);
        }
        // An empty matrix still needs a buffer to pass (the kernels read none of it).
        let dx = self.upload(if x.is_empty() { &[0.0] } else { x })?;
        let mut out = self.zeros(outputs)?;
        let mut scratch = AxisScratch::default();
        self.reduce_axis_device(op, axis, &dx, shape, &mut out, &mut scratch)?;
        self.synchronize("reduce_axis")?;
        self.download(&out)
    }
}
