//! Launching a [`Gemm`] on device buffers.

use super::Gpu;
use crate::plan::gemm::{GemmKernel, Resolved};
use crate::problem::error::Result;
use crate::problem::gemm::{Gemm, Problem};
use cudarc::driver::CudaSlice;
use kernels_gpu::sgemm::blas::BlasConfig;

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
        }
    }

    /// Rung-12 configuration `config` on a checked problem (operands in the problem's order).
    fn blas_device(
        &self, config: &BlasConfig, p: &Problem, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        c: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let launch = p.launch(config, &self.limits)?;
        let info = self.entry_info(config.spec.entry)?;
        let mut args = self.launcher(&info);
        args.buffer(a)
            .buffer(b)
            .buffer_mut(c)
            .scalar(&p.m)
            .scalar(&p.n)
            .scalar(&p.k)
            .scalar(&p.lda)
            .scalar(&p.ldb)
            .scalar(&p.ldc)
            .scalar(&p.stride_a)
            .scalar(&p.stride_b)
            .scalar(&p.stride_c)
            .scalar(&p.alpha)
            .scalar(&p.beta);
        // SAFETY: the parameters as BLAS_PARAMS declares them (the launcher checks their
        // sizes against the PTX); Gemm::check found every product's matrices inside the
        // buffers, their offsets within u32 and the outputs disjoint; `c` is borrowed
        // mutably, so it is neither `a` nor `b`.
        unsafe { args.launch(&launch) }
    }
}
