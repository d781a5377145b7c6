//! Rungs 14 and 15 on the GPU: TF32 products on packed operands ([`crate::plan::packed`]).

use super::Gpu;
use super::tma::{TmaElement, tensor_map};
use crate::plan::packed::{self, PackedConfig, Packing, pack_b_launch, packed_depth};
use crate::problem::error::{DriverContext, Result};
use crate::problem::shape::MatmulShape;
use cudarc::driver::{CudaSlice, CudaViewMut, DevicePtr};

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
        let info = self.entry_info(config.spec.entry)?;
        let (la, lb) = packed::packed_lens(config, shape);
        // Tensor maps after the operands, 128-byte aligned (the workspace's start is 256).
        let maps_at = (la + lb).next_multiple_of(32);
        let maps_len = if config.tma.is_some() { 64 } else { 0 };
        let mut workspace = self.workspace(maps_at + maps_len)?;
        let ws = workspace.as_mut().expect("allocated by Gpu::workspace");
        let (mut wa, mut rest) = ws.split_at_mut(la);
        let (mut wb, mut rest) = rest.split_at_mut(lb);
        let (_, mut wm) = rest.split_at_mut(maps_at - la - lb);
        let (m, k, n, kp) = (shape.m, shape.k, shape.n, packed_depth(shape.k));
        let packs_a = packed::packs_a(config, k);
        // SAFETY: `a` and `b` hold the shape's lengths (checked above); `wa` holds m rows
        // of kp where `a` is packed (`packed_lens`), `wb` n rows of kp.
        unsafe { self.pack_tf32(a, b, shape, packs_a.then_some(&mut wa), &mut wb) }?;
        if let Some(boxes) = config.tma {
            let a_at = if packs_a {
                wa.device_ptr(&self.stream).0
            } else {
                a.device_ptr(&self.stream).0
            };
            let b_at = wb.device_ptr(&self.stream).0;
            let maps = [
                tensor_map(a_at, m, kp, TmaElement::F32, boxes.a_rows)?,
                tensor_map(b_at, n, kp, TmaElement::F32, boxes.b_rows)?,
            ];
            let words: Vec<f32> = maps
                .iter()
                .flat_map(|map| map.0.iter().flat_map(|w| w.to_le_bytes()))
                .collect::<Vec<u8>>()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            self.stream
                .memcpy_htod(&words, &mut wm)
                .call("cuMemcpyHtoDAsync")?;
            let wm = wm.as_view();
            let (amap, bmap) = (wm.slice(0..32), wm.slice(32..64));
            let mut args = self.launcher(&info);
            args.view(&amap)
                .view(&bmap)
                .buffer_mut(out)
                .scalar(&m)
                .scalar(&n)
                .scalar(&kp);
            // SAFETY: (amap, bmap, out, m, n, k) as every rung-15 Hopper entry declares
            // them: the maps (128-byte aligned, written above, before the launch on the
            // stream) describe the packed `a` or the caller's (m rows of kp, 16-byte
            // aligned rows) and the packed `bt` (n rows of kp) in the configuration's tiles;
            // `out` m × n (checked above).
            return unsafe { args.launch(&launch) };
        }
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

    /// The packing of a TF32 product: `b` (`k × n`) into `wb`, transposed and rounded
    /// (`n` rows of [`packed_depth`], zero-padded), and where `wa` is given `a` (`m × k`)
    /// into it, rounded (`m` rows of the same depth). Asynchronous.
    ///
    /// # Safety
    /// `a` and `b` hold `shape`'s lengths; `wa` holds `m · kp` floats, `wb` `n · kp`.
    pub(super) unsafe fn pack_tf32(
        &self, a: &CudaSlice<f32>, b: &CudaSlice<f32>, shape: MatmulShape,
        wa: Option<&mut CudaViewMut<'_, f32>>, wb: &mut CudaViewMut<'_, f32>,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe {
            if let Some(wa) = wa {
                self.pack_a(a, shape, wa, Packing::Rounded)?;
            }
            self.pack_b(b, shape, wb, Packing::Rounded)
        }
    }

    /// `a` (`m × k`) into `wa`: `m` rows of [`packed_depth`], zero-padded, rounded to TF32
    /// or not as `packing` says ([`pack_tf32`](Self::pack_tf32)'s `a`). Asynchronous.
    ///
    /// # Safety
    /// `a` holds `shape`'s `m · k` floats; `wa` holds `m · kp`.
    pub(super) unsafe fn pack_a(
        &self, a: &CudaSlice<f32>, shape: MatmulShape, wa: &mut CudaViewMut<'_, f32>,
        packing: Packing,
    ) -> Result<()> {
        let (m, k, kp) = (shape.m, shape.k, packed_depth(shape.k));
        // SAFETY: `a` holds m rows of k, `wa` m rows of kp >= k (the caller's contract).
        unsafe { self.repack_with(packing.repack(), &a.as_view(), k, m, k, wa, m, kp) }
    }

    /// `b` (`k × n`) into `wb`, transposed: `n` rows of [`packed_depth`], zero-padded,
    /// rounded to TF32 or not as `packing` says ([`pack_tf32`](Self::pack_tf32)'s `bᵀ`).
    /// Asynchronous.
    ///
    /// # Safety
    /// `b` holds `shape`'s `k · n` floats; `wb` holds `n · kp`.
    pub(super) unsafe fn pack_b(
        &self, b: &CudaSlice<f32>, shape: MatmulShape, wb: &mut CudaViewMut<'_, f32>,
        packing: Packing,
    ) -> Result<()> {
        let (k, n, kp) = (shape.k, shape.n, packed_depth(shape.k));
        let pack_b = pack_b_launch(shape, &self.limits, packing)?;
        let b_info = self.entry_info(packing.transpose().entry)?;
        let mut args = self.launcher(&b_info);
        args.buffer(b)
            .scalar(&k)
            .scalar(&n)
            .view_mut(wb)
            .scalar(&kp);
        // SAFETY: (src, rows, cols, dst, ld): `b` holds k rows of n, `wb` n rows of kp >= k
        // (the caller's contract).
        unsafe { args.launch(&pack_b) }
    }
}
