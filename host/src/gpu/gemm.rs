//! Launching a [`Gemm`] on device buffers.

use super::{EntryInfo, Gpu};
use crate::plan::gemm::{GemmKernel, Resolved};
use crate::problem::error::Result;
use crate::problem::gemm::{Gemm, Problem};
use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};
use kernels_gpu::nvptx_device::launch::Launch;
use kernels_gpu::sgemm::blas::{BlasConfig, SCALE_C};

impl Gpu {
    /// `c = α·op(a)·op(b) + β·c` as `call` describes it, on device buffers, by `kernel`.
    /// Asynchronous, like [`matmul_device`](Self::matmul_device). Every bad argument is a
    /// typed error found before anything is queued ([`Gemm::check`]); a call with no outputs
    /// queues nothing. Elements of `c` between its rows (a leading dimension beyond `n`) and
    /// between its batches are left as they are.
    pub fn gemm_device(
        &self, call: &Gemm, kernel: GemmKernel, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        c: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let p = call.check(a.len(), b.len(), c.len())?;
        if p.is_empty() {
            return Ok(());
        }
        let (a, b) = p.operands(a, b);
        match kernel.resolve(&p, self.multiprocessors)? {
            Resolved::Matmul(kernel, tw, shape) => self.matmul_device(kernel, tw, a, b, c, shape),
            Resolved::Blas(config) => self.blas_device(config, &p, a, b, c),
            Resolved::ScaleC => self.scale_c_device(&p, c),
        }
    }

    /// `C = β·C` for a problem that [scales only](Problem::scales_only): no operand is read.
    fn scale_c_device(&self, p: &Problem, c: &mut CudaSlice<f32>) -> Result<()> {
        let Some(launch) = p.scale_c_launch(&self.limits)? else {
            return Ok(());
        };
        let info = self.entry_info(SCALE_C.entry)?;
        let dims = [p.m, p.n, p.ldc];
        let mut args = self.launcher(&info);
        args.buffer_mut(c).scalars(&dims).scalar(&p.stride_c);
        args.scalar(&p.batch).scalar(&p.beta);
        // SAFETY: the parameters as SCALE_C_PARAMS declares them (checked against the PTX);
        // Gemm::check found every output inside `c`, m·n within u32 (a span of `c`) and
        // the outputs disjoint; the problem is not empty, so n >= 1.
        unsafe { args.launch(&launch) }
    }

    /// Rung-12 configuration `config` on a checked problem (operands in the problem's order).
    fn blas_device(
        &self, config: &BlasConfig, p: &Problem, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        c: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let info = self.entry_info(config.spec.entry)?;
        for part in p.launches(config, &self.limits)? {
            let (oa, ob, oc) = p.offsets(part.first);
            // Inside the buffers: the problem has products, so every matrix spans elements.
            let (a, b, mut c) = (a.slice(oa..), b.slice(ob..), c.slice_mut(oc..));
            self.blas_part(&info, &part.launch, p, &a, &b, &mut c)?;
        }
        Ok(())
    }

    /// One launch of a rung-12 configuration: the products of `launch`'s z extent, from
    /// the first one in each view.
    fn blas_part(
        &self, info: &EntryInfo, launch: &Launch, p: &Problem, a: &CudaView<f32>,
        b: &CudaView<f32>, c: &mut CudaViewMut<f32>,
    ) -> Result<()> {
        // m, n, k, lda, ldb, ldc; the batch strides; α, β.
        let dims = [p.m, p.n, p.k, p.lda, p.ldb, p.ldc];
        let strides = [p.stride_a, p.stride_b, p.stride_c];
        let mut args = self.launcher(info);
        args.view(a).view(b).view_mut(c).scalars(&dims);
        args.scalars(&strides).scalar(&p.alpha).scalar(&p.beta);
        // SAFETY: the parameters as BLAS_PARAMS declares them (the launcher checks their
        // sizes against the PTX); Gemm::check found every product's matrices inside the
        // buffers, their offsets within u32 and the outputs disjoint, and the views start
        // at this launch's first product, so its grid.z products are inside them; `c` is
        // borrowed mutably, so it is neither `a` nor `b`.
        unsafe { args.launch(launch) }
    }
}
