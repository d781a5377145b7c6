//! Launching the matmul kernels on the GPU.

use super::Gpu;
use crate::autotune::Tuned;
use crate::error::Result;
use crate::kernels::MatmulKernel;
use crate::shape::MatmulShape;
use crate::split_k::SplitK;
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
        if super::zero_if_trivial(&self.stream, kernel.entry(tw), a, b, out, shape)? {
            return Ok(());
        }
        // The autotuned SGEMM is whichever configuration (or split-k run of one) is fastest
        // here for this shape (timed on these buffers the first time this shape is seen:
        // see crate::autotune).
        let kernel = match kernel {
            MatmulKernel::Sgemm(auto) if auto.is_autotuned() => {
                match crate::autotune::choose(self, a, b, out, shape, auto.precision())? {
                    Tuned::Config(k) => MatmulKernel::Sgemm(k),
                    Tuned::SplitK(s) => return self.matmul_split_k_device(s, a, b, out, shape),
                }
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

    /// `out = a · b` by split-k ([`crate::split_k`]): `s`'s configuration over slices of
    /// `k` into the [`Gpu`]'s workspace (grown as needed), then the reduction of the slices
    /// in order. Asynchronous, like [`matmul_device`](Self::matmul_device), with the same
    /// errors; deterministic run to run.
    pub fn matmul_split_k_device(
        &self, s: SplitK, a: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        if super::zero_if_trivial(&self.stream, s.spec().entry, a, b, out, shape)? {
            return Ok(());
        }
        let l = s.launch(shape)?;
        let mut workspace = self.workspace.lock().unwrap_or_else(|e| e.into_inner());
        if workspace.as_ref().is_none_or(|w| w.len() < l.workspace) {
            *workspace = None; // free the old one first
            *workspace = Some(self.zeros(l.workspace)?);
        }
        let ws = workspace.as_mut().expect("allocated above");
        let (m, n, k, slice) = (shape.m, shape.n, shape.k, l.slice);
        let info = self.entry_info(s.spec().entry)?;
        let mut args = self.launcher(&info);
        args.buffer(a)
            .buffer(b)
            .buffer_mut(ws)
            .scalar(&m)
            .scalar(&n)
            .scalar(&k)
            .scalar(&slice);
        // SAFETY: (a, b, ws, m, n, k, slice) as the slice entry declares them; a and b have
        // the shape's lengths (checked above), ws holds slices · m · n floats, and the grid
        // has cdiv(k, slice) slices in z.
        unsafe { args.launch(&l.partial) }?;
        let (len, slices) = (m * n, l.slices);
        let info = self.entry_info(kernels_gpu::sgemm::split_k::REDUCE.entry)?;
        let mut args = self.launcher(&info);
        args.buffer(ws)
            .buffer_mut(out)
            .scalar(&len)
            .scalar(&n)
            .scalar(&slices);
        // SAFETY: (ws, out, len, n, splits) as the reduction declares them; ws holds slices
        // planes of len = m · n floats (written by the launch before, on the same stream),
        // out holds len (checked above).
        unsafe { args.launch(&l.reduce) }
    }
}
