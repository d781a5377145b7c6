//! Launching the reductions and sliding averages on the GPU.

use super::{Gpu, fault};
use crate::plan::reduce::{self, ReduceKernel};
use crate::plan::sliding::{self, SlidingKernel, SlidingShape};
use crate::problem::axis::{self, Axis, AxisOp, AxisShape};
use crate::problem::error::{Error, Result};
use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};
use kernels_gpu::reduce::cols::ColumnPlan;

/// Device scratch of the scan sliding average: its ticket counter and each tile's published
/// prefix, zeroed before every launch. Allocate once, reuse across launches.
#[derive(Default)]
pub struct SlidingScratch {
    state: Option<CudaSlice<u64>>,
}

/// Device scratch of the column reductions: the first pass's partial rows. Allocate once,
/// reuse across launches.
#[derive(Default)]
pub struct AxisScratch {
    partials: Option<CudaSlice<f32>>,
}

/// Device buffers a sum needs besides its input: one partial per first-pass block, and the
/// result. Allocate once, reuse across sums.
pub struct ReduceScratch {
    partials: CudaSlice<f32>,
    /// The last sum, on the device.
    pub result: CudaSlice<f32>,
}

impl Gpu {
    pub fn reduce_scratch(&self) -> Result<ReduceScratch> {
        Ok(ReduceScratch {
            partials: self.zeros(reduce::MAX_BLOCKS as usize)?,
            result: self.zeros(1)?,
        })
    }

    /// One pass of `kernel` over `input[..n]`, one partial per block into `out`.
    fn reduce_pass(
        &self, kernel: ReduceKernel, input: &CudaView<f32>, n: u32, out: &mut CudaViewMut<f32>,
    ) -> Result<()> {
        let launch = kernel.launch(n);
        let info = self.entry_info(kernel.entry())?;
        let mut args = self.launcher(&info);
        args.view(input).scalar(&n).view_mut(out);
        // SAFETY: (input, n, partials) as the entry expects; `input` starts 16-byte aligned
        // (a device buffer, or a view of one at a multiple of 4 floats, as the sharded sums
        // take them); `out` holds at least one float per block (MAX_BLOCKS, or the result).
        unsafe { args.launch(&launch) }
    }

    /// Queues the sum of `input` into `scratch.result`: two launches (one if a single block
    /// suffices). The empty sum is 0.
    pub fn sum_device(
        &self, kernel: ReduceKernel, input: &CudaSlice<f32>, scratch: &mut ReduceScratch,
    ) -> Result<()> {
        let ReduceScratch { partials, result } = scratch;
        self.sum_parts(
            kernel,
            &input.as_view(),
            partials,
            &mut result.as_view_mut(),
        )
    }

    /// [`sum_device`](Self::sum_device) of a view, into `out[0]` (the sharded sums' chunks,
    /// each summed into its own element of the partials).
    pub(crate) fn sum_into(
        &self, kernel: ReduceKernel, input: &CudaView<f32>, scratch: &mut ReduceScratch,
        out: &mut CudaViewMut<f32>,
    ) -> Result<()> {
        self.sum_parts(kernel, input, &mut scratch.partials, out)
    }

    /// The first of [`sum_into`](Self::sum_into)'s passes (the only one where a single
    /// block suffices: then straight into `out`). Several devices queue their first passes
    /// before their second, so that each starts as soon as it can.
    pub(crate) fn sum_first_pass(
        &self, kernel: ReduceKernel, input: &CudaView<f32>, scratch: &mut ReduceScratch,
        out: &mut CudaViewMut<f32>,
    ) -> Result<()> {
        self.first_pass(kernel, input, &mut scratch.partials, out)
    }

    /// The second of [`sum_into`](Self::sum_into)'s passes, after
    /// [`sum_first_pass`](Self::sum_first_pass) over `len` values.
    pub(crate) fn sum_second_pass(
        &self, kernel: ReduceKernel, len: usize, scratch: &ReduceScratch,
        out: &mut CudaViewMut<f32>,
    ) -> Result<()> {
        self.second_pass(kernel, len, &scratch.partials, out)
    }

    fn sum_parts(
        &self, kernel: ReduceKernel, input: &CudaView<f32>, partials: &mut CudaSlice<f32>,
        out: &mut CudaViewMut<f32>,
    ) -> Result<()> {
        self.first_pass(kernel, input, partials, out)?;
        self.second_pass(kernel, input.len(), partials, out)
    }

    /// One pass where a single block suffices (straight into `out`), else the first pass
    /// into `partials`.
    fn first_pass(
        &self, kernel: ReduceKernel, input: &CudaView<f32>, partials: &mut CudaSlice<f32>,
        out: &mut CudaViewMut<f32>,
    ) -> Result<()> {
        let n = reduce::check_len(input.len())?;
        if n == 0 {
            return self
                .stream
                .memset_zeros(out)
                .map_err(|e| fault(kernel.entry(), e));
        }
        match reduce::first_pass_blocks(n) {
            1 => self.reduce_pass(kernel, input, n, out),
            _ => self.reduce_pass(kernel, input, n, &mut partials.as_view_mut()),
        }
    }

    /// The second pass over the partials of a first pass over `len` values (nothing where
    /// that pass wrote the sum).
    fn second_pass(
        &self, kernel: ReduceKernel, len: usize, partials: &CudaSlice<f32>,
        out: &mut CudaViewMut<f32>,
    ) -> Result<()> {
        let n = reduce::check_len(len)?;
        if n == 0 {
            return Ok(());
        }
        match reduce::first_pass_blocks(n) {
            1 => Ok(()),
            blocks => self.reduce_pass(kernel, &partials.as_view(), blocks, out),
        }
    }

    /// Queues the sliding average of `a` over windows of `window` into `out`, which must
    /// hold [`SlidingShape::outputs`] floats. The scan kernel keeps its state in `scratch`.
    pub fn sliding_average_device(
        &self, kernel: SlidingKernel, a: &CudaSlice<f32>, window: usize, out: &mut CudaSlice<f32>,
        scratch: &mut SlidingScratch,
    ) -> Result<()> {
        self.sliding_average_view(
            kernel,
            &a.as_view(),
            window,
            &mut out.as_view_mut(),
            scratch,
        )
    }

    /// [`sliding_average_device`](Self::sliding_average_device) on views (the sharded
    /// averages' chunks), which start 16-byte aligned.
    pub(crate) fn sliding_average_view(
        &self, kernel: SlidingKernel, a: &CudaView<f32>, window: usize, out: &mut CudaViewMut<f32>,
        scratch: &mut SlidingScratch,
    ) -> Result<()> {
        let shape = SlidingShape::new(a.len(), window)?;
        let outputs = shape.outputs() as usize;
        super::output_len(out.len(), outputs)?;
        if outputs == 0 {
            return Ok(());
        }
        // Large windows need more shared memory than a block may have: the launcher's
        // check makes that a typed error.
        let launch = kernel.launch(shape);
        let info = self.entry_info(kernel.entry())?;
        let (n, w) = (shape.n, shape.window);
        if kernel != SlidingKernel::Scan {
            let mut args = self.launcher(&info);
            args.view(a).scalar(&n).scalar(&w).view_mut(out);
            // SAFETY: (a, n, window, out) as the entry expects, with 1 <= window <= n and
            // `out` of n - window + 1 floats, both 16-byte aligned (the caller's views).
            return unsafe { args.launch(&launch) };
        }
        let words = sliding::scan_state_words(n);
        if scratch.state.as_ref().is_none_or(|s| s.len() != words) {
            scratch.state = None;
            scratch.state = Some(self.zeros_of::<u64>(words)?);
        }
        let state = scratch.state.as_mut().expect("allocated above");
        if sliding::scan_reads_state(w) {
            self.stream
                .memset_zeros(state)
                .map_err(|e| fault(kernel.entry(), e))?;
        }
        let mut args = self.launcher(&info);
        args.view(a)
            .scalar(&n)
            .scalar(&w)
            .view_mut(out)
            .buffer_mut(state);
        // SAFETY: (a, n, window, out, state) as the entry expects, with 1 <= window <= n,
        // `a` and `out` 16-byte aligned, `out` of n - window + 1 floats and `state` of state_words(n) words, zeroed where
        // the launch reads them, used by this launch alone (the stream orders launches).
        unsafe { args.launch(&launch) }
    }

    /// Queues `op` along `axis` of the row-major `shape` matrix `x` into `out`, which must
    /// hold [`AxisShape::outputs`] floats; column reductions of several row segments keep
    /// their partials in `scratch`.
    pub fn reduce_axis_device(
        &self, op: AxisOp, axis: Axis, x: &CudaSlice<f32>, shape: AxisShape,
        out: &mut CudaSlice<f32>, scratch: &mut AxisScratch,
    ) -> Result<()> {
        let elements = shape.rows as usize * shape.cols as usize;
        if x.len() < elements.max(1) {
            return Err(Error::InputLength {
                operand: "x",
                rows: shape.rows as usize,
                cols: shape.cols as usize,
                expected: elements,
                actual: x.len(),
            });
        }
        shape.check_op(op, axis)?;
        let outputs = shape.outputs(axis) as usize;
        super::output_len(out.len(), outputs)?;
        if outputs == 0 {
            return Ok(());
        }
        let AxisShape { rows, cols } = shape;
        match axis {
            Axis::Rows => {
                let info = self.entry_info(axis::rows_config(op).spec.entry)?;
                let scale = op.scale(cols);
                let mut args = self.launcher(&info);
                args.buffer(x)
                    .scalar(&rows)
                    .scalar(&cols)
                    .scalar(&scale)
                    .buffer_mut(out);
                // SAFETY: (x, rows, cols, scale, out) as the entry expects: x holds
                // rows · cols floats, out rows; device buffers are 256-byte aligned.
                unsafe { args.launch(&shape.rows_launch(op)) }
            }
            Axis::Cols => {
                let plan = shape.cols_plan();
                let scale = op.scale(rows);
                if plan.segments == 1 {
                    return self.cols_pass(op, x, rows, cols, &plan, scale, &mut out.as_view_mut());
                }
                let len = plan.segments as usize * cols as usize;
                if scratch.partials.as_ref().is_none_or(|p| p.len() != len) {
                    scratch.partials = None;
                    scratch.partials = Some(self.zeros(len)?);
                }
                let partials = scratch.partials.as_mut().expect("allocated above");
                self.cols_pass(op, x, rows, cols, &plan, 1.0, &mut partials.as_view_mut())?;
                let finish = shape.finish_plan(&plan);
                let out = &mut out.as_view_mut();
                self.cols_pass(op, partials, plan.segments, cols, &finish, scale, out)
            }
        }
    }

    /// One column pass over the `rows × cols` matrix `x` into `plan.segments` rows of
    /// `out` (the sharded column reductions run each device's part of the first pass, and
    /// the second, with this).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cols_pass(
        &self, op: AxisOp, x: &CudaSlice<f32>, rows: u32, cols: u32, plan: &ColumnPlan, scale: f32,
        out: &mut CudaViewMut<f32>,
    ) -> Result<()> {
        let info = self.entry_info(axis::cols_config(op).spec.entry)?;
        let mut args = self.launcher(&info);
        args.buffer(x)
            .scalar(&rows)
            .scalar(&cols)
            .scalar(&plan.rows_per_segment)
            .scalar(&scale)
            .view_mut(out);
        // SAFETY: (x, rows, cols, rows_per_segment, scale, out) as the entry expects: x
        // holds rows · cols floats, out segments · cols (the callers size both), 16-byte
        // aligned (a buffer, or a view of one at a multiple of 4 floats where cols is);
        // rows_per_segment · segments >= rows (column_plan).
        unsafe { args.launch(&AxisShape::cols_launch(op, plan)) }
    }
}
