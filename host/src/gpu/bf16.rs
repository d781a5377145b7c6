//! Launching the BF16 GEMM ([`crate::plan::bf16`]) on the GPU.

use super::Gpu;
use crate::plan::bf16::{self, Bf16Config};
use crate::problem::error::Result;
use crate::problem::shape::MatmulShape;
use cudarc::driver::CudaSlice;

impl Gpu {
    /// `host` rounded to BF16 ([`bf16::round`]) and copied to a new device buffer.
    pub fn upload_bf16(&self, host: &[f32]) -> Result<CudaSlice<u16>> {
        self.upload_of(&bf16::round_all(host))
    }

    /// `out = a · b` by `config` (rung 13): `a` (`m × k`) and `b` (`k × n`) BF16, row-major;
    /// `out` f32. Asynchronous, like [`matmul_device`](Self::matmul_device), with the same
    /// errors: wrong buffer lengths are [`Error::InputLength`](crate::Error::InputLength), a
    /// launch beyond the device's limits [`Error::Launch`](crate::Error::Launch).
    pub fn gemm_bf16_device(
        &self, config: &Bf16Config, a: &CudaSlice<u16>, b: &CudaSlice<u16>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        if super::zero_if_trivial(&self.stream, config.spec.entry, a, b, out, shape)? {
            return Ok(());
        }
        let launch = bf16::launch(config, shape, &self.limits)?;
        let info = self.entry_info(config.spec.entry)?;
        let mut args = self.launcher(&info);
        args.buffer(a).buffer(b).buffer_mut(out).dims(&shape);
        // SAFETY: (a, b, out, m, n, k) as every BF16 entry declares them (the launcher checks
        // the sizes against the PTX); the buffers have the lengths the shape implies (checked
        // above), and the shape fits u32 indices (MatmulShape).
        unsafe { args.launch(&launch) }
    }
}
