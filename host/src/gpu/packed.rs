//! Rungs 14 and 15 on the GPU: TF32 products on packed operands ([`crate::packed`]).

use super::Gpu;
use crate::error::Result;
use crate::packed::{self, PackedConfig, pack_a_launch, pack_b_launch, packed_depth};
use crate::shape::MatmulShape;
use cudarc::driver::CudaSlice;
use kernels_gpu::sgemm::repack::{REPACK_TF32, TRANSPOSE_TF32};

impl Gpu {
    /// `out = a · b` (`a` `m × k`, `b` `k × n`, `out` `m × n`, row-major f32) by rung 14 or
    /// 15 in configuration `config`: `b` packed into the workspace (transposed, rounded to
    /// TF32, depth padded to a multiple of 4), `a` too (rounded, padded) where
    /// [`packs_a`](packed::packs_a) says so, then the product by `wgmma` or `mma.sync`.
    /// Asynchronous, like [`matmul_device`](Self::matmul_device), with its errors, and for
    /// rung 14 [`Error::NeedsHopper`](crate::Error::NeedsHopper) on a GPU that is not
    /// compute capability 9.0, before anything is queued.
    pub fn matmul_packed_device(
        &self, config: &PackedConfig, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        if super::zero_if_trivial(&self.stream, config.spec.entry, a, b, out, shape)? {
            return Ok(());
        }
        let launch = packed::launch(config, shape, &self.limits)?;
        let pack_b = pack_b_launch(shape, &self.limits)?;
        let info = self.entry_info(config.spec.entry)?;
        let b_info = self.entry_info(TRANSPOSE_TF32.entry)?;
        let (la, lb) = packed::packed_lens(config, shape);
        let mut workspace = self.workspace(la + lb)?;
        let ws = workspace.as_mut().expect("allocated by Gpu::workspace");
        let (mut wa, mut rest) = ws.split_at_mut(la);
        let (mut wb, _) = rest.split_at_mut(lb);
        let (m, k, n, kp) = (shape.m, shape.k, shape.n, packed_depth(shape.k));
        let packs_a = packed::packs_a(config, k);

        if packs_a {
            let a_info = self.entry_info(REPACK_TF32.entry)?;
            let mut args = self.launcher(&a_info);
            args.buffer(a)
                .scalar(&k)
                .scalar(&m)
                .scalar(&k)
                .view_mut(&mut wa)
                .scalar(&m)
                .scalar(&kp);
            // SAFETY: (src, ld, src_rows, src_cols, dst, rows, cols) as the entry declares
            // them: `a` holds m rows of k (checked above), `wa` m rows of kp >= k.
            unsafe { args.launch(&pack_a_launch(shape)) }?;
        }
        let mut args = self.launcher(&b_info);
        args.buffer(b)
            .scalar(&k)
            .scalar(&n)
            .view_mut(&mut wb)
            .scalar(&kp);
        // SAFETY: (src, rows, cols, dst, ld): `b` holds k rows of n, `wb` n rows of kp >= k.
        unsafe { args.launch(&pack_b) }?;
        let (wa, wb) = (wa.as_view(), wb.as_view());
        let mut args = self.launcher(&info);
        if packs_a {
            args.view(&wa);
        } else {
            args.buffer(a);
        }
        args.view(&wb)
            .buffer_mut(out)
            .scalar(&m)
            .scalar(&n)
            .scalar(&kp);
        // SAFETY: (a, bt, out, m, n, k) as every rung-14 and rung-15 entry declares them:
        // `wa` and `wb` hold m and n rows of kp (a multiple of 4), 16-byte aligned (the
        // workspace's start and la, a multiple of 4 floats, after it); where `a` is not
        // packed, it holds m rows of k = kp (`packs_a`), a device allocation's start, and
        // the configuration rounds it itself; `out` m × n (checked above).
        unsafe { args.launch(&launch) }
    }
}
