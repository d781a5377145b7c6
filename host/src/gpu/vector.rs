//! Launching the reductions and sliding averages on the GPU.

use super::{Gpu, fault};
use crate::error::{Error, Result};
use crate::reduce::{self, ReduceKernel};
use crate::sliding::{SlidingKernel, SlidingShape};
use cudarc::driver::CudaSlice;

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
        &self, kernel: ReduceKernel, input: &CudaSlice<f32>, n: u32, out: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let launch = kernel.launch(n);
        let info = self.entry_info(kernel.entry())?;
        let mut args = self.launcher(&info);
        args.buffer(input).scalar(&n).buffer_mut(out);
        // SAFETY: (input, n, partials) as the entry expects; device buffers are 256-byte
        // aligned; `out` holds at least one float per block (MAX_BLOCKS, or the result).
        unsafe { args.launch(&launch) }
    }

    /// Queues the sum of `input` into `scratch.result`: two launches (one if a single block
    /// suffices). The empty sum is 0.
    pub fn sum_device(
        &self, kernel: ReduceKernel, input: &CudaSlice<f32>, scratch: &mut ReduceScratch,
    ) -> Result<()> {
        let n = reduce::check_len(input.len())?;
        if n == 0 {
            return self
                .stream
                .memset_zeros(&mut scratch.result)
                .map_err(|e| fault(kernel.entry(), e));
        }
        let blocks = reduce::first_pass_blocks(n);
        if blocks == 1 {
            return self.reduce_pass(kernel, input, n, &mut scratch.result);
        }
        self.reduce_pass(kernel, input, n, &mut scratch.partials)?;
        self.reduce_pass(kernel, &scratch.partials, blocks, &mut scratch.result)
    }

    /// Queues the sliding average of `a` over windows of `window` into `out`, which must
    /// hold [`SlidingShape::outputs`] floats.
    pub fn sliding_average_device(
        &self, kernel: SlidingKernel, a: &CudaSlice<f32>, window: usize, out: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let shape = SlidingShape::new(a.len(), window)?;
        let outputs = shape.outputs() as usize;
        if out.len() != outputs {
            return Err(Error::InputLength {
                operand: "out",
                rows: 1,
                cols: outputs,
                expected: outputs,
                actual: out.len(),
            });
        }
        if outputs == 0 {
            return Ok(());
        }
        // Large windows need more shared memory than a block may have: the launcher's
        // check makes that a typed error.
        let launch = kernel.launch(shape.outputs(), shape.window);
        let info = self.entry_info(kernel.entry())?;
        let (n, w) = (shape.n, shape.window);
        let mut args = self.launcher(&info);
        args.buffer(a).scalar(&n).scalar(&w).buffer_mut(out);
        // SAFETY: (a, n, window, out) as the entry expects, with 1 <= window <= n and `out`
        // of n - window + 1 floats.
        unsafe { args.launch(&launch) }
    }
}
