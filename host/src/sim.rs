//! Launching the kernels on the CPU simulator: the same launch shape as on the GPU.

use crate::backend::Backend;
use crate::error::Result;
use crate::kernels::MatmulKernel;
use crate::reduce::{self, ReduceKernel};
use crate::shape::MatmulShape;
use crate::sliding::{SlidingKernel, SlidingShape};
use crate::tile::TileWidth;
use kernels_gpu::nvptx_device::launch::{Launch, Limits};
use kernels_gpu::nvptx_device::sim;

/// Runs kernels from `kernels-gpu` on host threads, with the simulator's checks.
#[derive(Clone, Debug, Default)]
pub struct Simulator {
    pub limits: Limits,
}

pub use kernels_gpu::nvptx_device::sim::SharedPtr;

/// 16-byte-aligned storage for kernels that load four floats at once, as device
/// allocations (256-byte aligned) allow.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
pub struct Aligned(pub [f32; 4]);

/// `x` copied into 16-byte-aligned storage (zero-padded to a multiple of 4).
pub fn aligned_copy(x: &[f32]) -> Vec<Aligned> {
    let mut v = vec![Aligned::default(); x.len().div_ceil(4)];
    for (chunk, dst) in x.chunks(4).zip(v.iter_mut()) {
        dst.0[..chunk.len()].copy_from_slice(chunk);
    }
    v
}

impl Simulator {
    /// Runs `kernel` for every thread of `launch`: grid, block, dynamic shared bytes.
    ///
    /// The simulator checks the launch against [`Simulator::limits`] as a GPU would: a
    /// launch beyond them is [`Error::Launch`](crate::Error::Launch), the same error as on a
    /// GPU; what it finds wrong inside the kernel is [`Error::Simulator`](crate::Error::Simulator).
    pub fn launch(&self, launch: &Launch, kernel: impl Fn() + Sync) -> Result<()> {
        Ok(sim::launch(launch, &self.limits, kernel)?)
    }
}

impl Backend for Simulator {
    /// The sum of `input`, by two launches of `kernel` as on the GPU.
    fn sum(&self, kernel: ReduceKernel, input: &[f32]) -> Result<f32> {
        let n = reduce::check_len(input.len())?;
        if n == 0 {
            return Ok(0.0);
        }
        let data = aligned_copy(input);
        let partials = self.reduce_pass(kernel, data.as_ptr() as *const f32, n)?;
        if let [sum] = partials[..] {
            return Ok(sum);
        }
        let blocks = partials.len() as u32;
        let partials = aligned_copy(&partials);
        Ok(self.reduce_pass(kernel, partials.as_ptr() as *const f32, blocks)?[0])
    }

    /// The sliding average of `a` over windows of `window`, by `kernel`.
    fn sliding_average(&self, kernel: SlidingKernel, a: &[f32], window: usize) -> Result<Vec<f32>> {
        let shape = SlidingShape::new(a.len(), window)?;
        let mut out = vec![0.0f32; shape.outputs() as usize];
        if out.is_empty() {
            return Ok(out);
        }
        let launch = kernel.launch(shape.outputs(), shape.window);
        // The shared kernel loads 16 bytes at a time, as device allocations allow.
        let aligned = aligned_copy(a);
        let (pa, po) = (
            SharedPtr(aligned.as_ptr() as *mut f32),
            SharedPtr(out.as_mut_ptr()),
        );
        let SlidingShape { n, window } = shape;
        let entry = kernel.config().sim;
        // SAFETY: a has n floats, 16-byte aligned; out has n - window + 1; 1 <= window <= n.
        self.launch(&launch, move || unsafe {
            entry(pa.get(), n, window, po.get())
        })?;
        Ok(out)
    }

    fn matmul(
        &self, kernel: MatmulKernel, tw: TileWidth, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let mut out = vec![0.0f32; shape.lens().2];
        if shape.is_trivial() {
            return Ok(out);
        }
        let launch = kernel.launch(tw, &shape)?;
        let (pm, pn, o) = (
            SharedPtr(a.as_ptr() as *mut f32),
            SharedPtr(b.as_ptr() as *mut f32),
            SharedPtr(out.as_mut_ptr()),
        );
        let MatmulShape { m: h, k, n: w } = shape;
        let entry = kernel.sim_entry(tw);
        // SAFETY: the buffers have the shape's lengths (checked above), the shape fits u32
        // indices (MatmulShape), and `launch` is the kernel's launch shape. (a, b, out, m,
        // n, k), as the lecture's (m, n, out, h, w, k).
        let run = move || unsafe {
            entry(
                pm.get() as *const f32,
                pn.get() as *const f32,
                o.get(),
                h,
                w,
                k,
            )
        };
        self.launch(&launch, run)?;
        Ok(out)
    }
}
