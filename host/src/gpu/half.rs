//! Launching rung 17 ([`crate::plan::half`]) on the GPU: 16-bit matrices through tensor
//! maps, split along the depth where the run says so, rows padded where the
//! tensor-memory accelerator needs it, and f32 matrices converted on the device (to 16 bits,
//! or packed for TF32).

use super::Gpu;
use super::autotune::HalfChoice;
use super::tma::{TmaElement, map_view, tensor_map};
use crate::plan::gemv::GemvElement;
use crate::plan::half::{self, HalfFloat, HalfRun, Input, WsConfig, check_element};
use crate::plan::packed::Packing;
use crate::problem::error::Result;
use crate::problem::shape::MatmulShape;
use cudarc::driver::{CudaSlice, CudaViewMut, DevicePtr, DeviceRepr, ValidAsZeroBits};
use kernels_gpu::nvptx_device::catalogue::KernelSpec;
use kernels_gpu::nvptx_device::tma::TensorMap;
use kernels_gpu::nvptx_device::wgmma::Half;
use kernels_gpu::sgemm::repack::REPACK_16BIT;

/// [`REPACK_16BIT`]'s entry that copies 16-bit rows (its conversions: [`to_half`]).
const REPACK: &KernelSpec = &REPACK_16BIT[0];

impl Gpu {
    /// `host` rounded to `T` (to nearest even) and copied to a new device buffer.
    pub fn upload_half<T: HalfFloat + DeviceRepr>(&self, host: &[f32]) -> Result<CudaSlice<T>> {
        self.upload_of(&half::round_all::<T>(host))
    }

    /// The `rows × cols` f32 matrix `src` converted to `T` on the device (to nearest even),
    /// in a new buffer whose rows are `padded_cols >= cols` long, zero past `cols`.
    /// Asynchronous.
    pub fn convert_half<T: HalfFloat + DeviceRepr + ValidAsZeroBits>(
        &self, src: &CudaSlice<f32>, rows: u32, cols: u32, padded_cols: u32,
    ) -> Result<CudaSlice<T>> {
        super::output_len(src.len(), rows as usize * cols as usize)?;
        // SAFETY: `src` holds rows · cols floats (checked), what the conversion reads; `T`
        // is a 2-byte element type.
        unsafe { self.repack_padded(to_half::<T>(), src, rows, cols, padded_cols) }
    }

    /// `out = a · b` by the run the autotuner chooses for `shape` and `T`
    /// ([`autotune::choose_half`](super::autotune::choose_half): timed on these buffers the
    /// first time a shape is seen, cached after): rung 17, or on BF16 operands a rung-16
    /// kernel where one covers the shape ([`gemm_half_choice_device`](Self::gemm_half_choice_device)).
    /// Returns the choice.
    pub fn gemm_half_auto_device<T: HalfFloat + GemvElement + DeviceRepr + ValidAsZeroBits>(
        &self, a: &CudaSlice<T>, b: &CudaSlice<T>, out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<HalfChoice> {
        let choice = super::autotune::choose_half(self, a, b, out, shape)?;
        self.gemm_half_choice_device(choice, a, b, out, shape)?;
        Ok(choice)
    }

    /// `a · b` as [`gemm_half_auto_device`](Self::gemm_half_auto_device) computes it (f32
    /// accumulation), returned in a new buffer of `T`: each output rounded to `T` (to
    /// nearest even) by one more pass over it on the device ([`convert_half`](Self::convert_half)),
    /// so the bits are those of converting the f32 product. The option of 16-bit outputs;
    /// the product's f32 outputs go through a buffer of their own first (not stored in 16
    /// bits by the kernel itself). Asynchronous, with
    /// [`gemm_half_auto_device`](Self::gemm_half_auto_device)'s errors. Returns the buffer
    /// and the choice.
    pub fn gemm_half_auto_to_half<T: HalfFloat + GemvElement + DeviceRepr + ValidAsZeroBits>(
        &self, a: &CudaSlice<T>, b: &CudaSlice<T>, shape: MatmulShape,
    ) -> Result<(CudaSlice<T>, HalfChoice)> {
        let mut out = self.zeros(shape.lens().2)?;
        let choice = self.gemm_half_auto_device(a, b, &mut out, shape)?;
        Ok((self.convert_half(&out, shape.m, shape.n, shape.n)?, choice))
    }

    /// `out = a · b` by `choice`: [`gemm_half_run_device`](Self::gemm_half_run_device) for
    /// a run of rung 17, [`matmul_gemv_device`](Self::matmul_gemv_device) for a rung-16 run
    /// on the operands as they are. Asynchronous, with their errors.
    pub fn gemm_half_choice_device<T: HalfFloat + GemvElement + DeviceRepr + ValidAsZeroBits>(
        &self, choice: HalfChoice, a: &CudaSlice<T>, b: &CudaSlice<T>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        match choice {
            HalfChoice::Ws(run) => self.gemm_half_run_device(run, a, b, out, shape),
            HalfChoice::Gemv(g) => self.matmul_gemv_device(g, a, b, out, shape),
        }
    }

    /// `out = a · b` by `config` (rung 17, Hopper only), unsplit:
    /// [`gemm_half_run_device`](Self::gemm_half_run_device).
    pub fn gemm_half_device<T: HalfFloat + DeviceRepr + ValidAsZeroBits>(
        &self, config: &'static WsConfig, a: &CudaSlice<T>, b: &CudaSlice<T>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        self.gemm_half_run_device(HalfRun { config, splits: 1 }, a, b, out, shape)
    }

    /// `out = a · b` by `run` (rung 17, Hopper only): `a` (`m × k`) and `b` (`k × n`)
    /// row-major `bf16` or `f16`, `out` f32 row-major. Where `k` or `n` is not a multiple
    /// of 8 the operand whose rows are not whole 16-byte units is copied into padded rows
    /// first; a split run computes its slices into the workspace and adds them in order.
    /// Asynchronous, like [`matmul_device`](Self::matmul_device), with its errors; and
    /// [`Error::NeedsHopper`](crate::Error::NeedsHopper) on another GPU,
    /// [`Error::ElementMismatch`](crate::Error::ElementMismatch) for a configuration of
    /// another element type.
    pub fn gemm_half_run_device<T: HalfFloat + DeviceRepr + ValidAsZeroBits>(
        &self, run: HalfRun, a: &CudaSlice<T>, b: &CudaSlice<T>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        if self.trivial_half::<T, _>(run, a, b, out, shape)? {
            return Ok(());
        }
        // SAFETY: `a` and `b` hold the shape's `T`s (checked), what the copy entry reads.
        unsafe { self.launch_half::<T, T>(run, a, b, out, shape, None) }
    }

    /// `out = a · b` by `run` on f32 matrices (`a` `m × k`, `b` `k × n`, row-major), each
    /// converted to `T` on the device first (to nearest even, into rows padded for the
    /// accelerator): what [`Precision::Bf16`](kernels_gpu::sgemm::Precision::Bf16) runs on
    /// a Hopper. The conversion's cost is part of the call; [`convert_half`](Self::convert_half)
    /// times it alone. Asynchronous, with the errors of
    /// [`gemm_half_run_device`](Self::gemm_half_run_device).
    pub fn matmul_half_from_f32<T: HalfFloat + DeviceRepr + ValidAsZeroBits>(
        &self, run: HalfRun, a: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        if self.trivial_half::<T, _>(run, a, b, out, shape)? {
            return Ok(());
        }
        // SAFETY: `a` and `b` hold the shape's f32s (checked), what the conversion reads.
        unsafe { self.launch_half::<T, f32>(run, a, b, out, shape, Some(to_half::<T>())) }
    }

    /// `out = a · b` by `run`, a TF32 configuration of rung 17, on f32 matrices (`a`
    /// `m × k`, `b` `k × n`, row-major): `b` packed into the workspace first as for rung 14
    /// but unrounded (transposed, rows of `k` padded to a multiple of 4:
    /// [`crate::plan::packed`], [`Packing::Plain`]) unless the configuration reads it as it
    /// lies ([`WsConfig::row_major_b`]; then it is copied only where its rows are not whole
    /// 16-byte units, into rows of `n` rounded up to 4), `a` copied (padded) only where its
    /// rows are not whole 16-byte units ([`tf32_packs_a`](crate::plan::half::tf32_packs_a)),
    /// then the product, split as the run says, through tensor maps of TF32 elements: the
    /// accelerator rounds both operands (to nearest, ties to even) as it copies them. The
    /// packing is part of the call. Asynchronous, with the errors of
    /// [`gemm_half_run_device`](Self::gemm_half_run_device).
    pub fn matmul_tf32_ws(
        &self, run: HalfRun, a: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        if self.trivial_ws(run, Input::Tf32, a, b, out, shape)? {
            return Ok(());
        }
        // A GPU that is not a Hopper refuses the entry before anything is queued.
        self.entry_info(run.config.spec.entry)?;
        let (m, n, k) = (shape.m, shape.n, shape.k);
        let kp = crate::plan::packed::packed_depth(k);
        let packs_a = crate::plan::half::tf32_packs_a(k);
        let row_b = run.config.row_major_b;
        // Rows of `b` as the kernel reads it: n4 of them as it lies (copied where n4 != n).
        let n4 = n.next_multiple_of(4);
        // Each a multiple of 4 floats: the packed `b` starts 16-byte aligned after `a`.
        let la = if packs_a { m as usize * kp as usize } else { 0 };
        let lb = match (row_b, n4 == n) {
            (true, true) => 0,
            (true, false) => k as usize * n4 as usize,
            (false, _) => n as usize * kp as usize,
        };
        let floats = run.workspace_floats(shape);
        let mut workspace = self.workspace(la + lb + floats)?;
        let ws = workspace.as_mut().expect("allocated by Gpu::workspace");
        let (mut wa, mut rest) = ws.split_at_mut(la);
        let (mut wb, mut rest) = rest.split_at_mut(lb);
        // SAFETY: `a` and `b` hold the shape's lengths (checked), `wa` m rows of kp where
        // `a` is packed, `wb` n rows of kp where `b` is packed or k rows of n4 where it is
        // copied.
        unsafe {
            if packs_a {
                self.pack_a(a, shape, &mut wa, Packing::Plain)?;
            }
            if !row_b {
                self.pack_b(b, shape, &mut wb, Packing::Plain)?;
            } else if n4 != n {
                let copy = Packing::Plain.repack();
                self.repack_with(copy, &b.as_view(), n, k, n, &mut wb, k, n4)?;
            }
        }
        let (bm, bk) = (run.config.geometry.bm, run.config.geometry.bk);
        // The packed `a`, or the caller's: m rows of k = kp floats (k % 4 == 0), 16-byte
        // aligned (a device allocation).
        let a_at = if packs_a {
            wa.device_ptr(&self.stream).0
        } else {
            a.device_ptr(&self.stream).0
        };
        let b_map = if !row_b {
            let rows = run.config.transposed_b_box_rows();
            tensor_map(wb.device_ptr(&self.stream).0, n, kp, TmaElement::Tf32, rows)?
        } else if n4 != n {
            tensor_map(wb.device_ptr(&self.stream).0, k, n4, TmaElement::Tf32, bk)?
        } else {
            tensor_map(b.device_ptr(&self.stream).0, k, n, TmaElement::Tf32, bk)?
        };
        let maps = [tensor_map(a_at, m, kp, TmaElement::Tf32, bm)?, b_map];
        let planes = (floats > 0).then(|| rest.slice_mut(..floats));
        // SAFETY: the maps describe `a` (copied or the caller's, m rows of kp) and `b` (the
        // packed `bᵀ`, n rows of kp; or k rows of n4, copied or the caller's where n4 = n),
        // 16-byte aligned, in the configuration's boxes; the planes
        // hold `splits` planes of m · n; `out` m · n (checked); the configuration
        // multiplies TF32.
        unsafe { self.launch_ws(run, maps, planes, out, shape) }
    }

    /// The checks of a rung-17 product of `T`s ([`Self::trivial_ws`]).
    fn trivial_half<T: HalfFloat, E>(
        &self, run: HalfRun, a: &CudaSlice<E>, b: &CudaSlice<E>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<bool> {
        self.trivial_ws(run, T::INPUT, a, b, out, shape)
    }

    /// The checks of a rung-17 product of `input` elements ([`check_element`], the lengths
    /// of `a`, `b` and `out`), and whether it is trivial: `out` zeroed, nothing to launch.
    fn trivial_ws<E>(
        &self, run: HalfRun, input: Input, a: &CudaSlice<E>, b: &CudaSlice<E>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<bool> {
        check_element(run, input)?;
        super::zero_if_trivial(&self.stream, run.config.spec.entry, a, b, out, shape)
    }

    /// The launches of a 16-bit rung-17 product past its checks: each operand whose rows
    /// are not whole 16-byte units (`k` or `n` not a multiple of 8), or every operand where
    /// `convert` names the f32 → `T` entry, copied through it (or [`REPACK`]) into padded
    /// rows in the workspace (no allocation per call), then the tensor maps, then
    /// [`launch_ws`](Self::launch_ws) into the workspace's planes when split.
    ///
    /// # Safety
    /// `a` and `b` hold `m · k` and `k · n` `S`s, each at the start of its allocation
    /// (16-byte aligned): `T`s where `convert` is `None`, f32s where it names the
    /// conversion; `out` holds `m · n` floats; `run`'s configuration is of element type
    /// `T`; the product is not trivial.
    unsafe fn launch_half<T: HalfFloat + DeviceRepr, S>(
        &self, run: HalfRun, a: &CudaSlice<S>, b: &CudaSlice<S>, out: &mut CudaSlice<f32>,
        shape: MatmulShape, convert: Option<&KernelSpec>,
    ) -> Result<()> {
        let (m, n, k) = (shape.m, shape.n, shape.k);
        // Rows of whole 16-byte units for the accelerator: `a`'s of k8, `b`'s of n8.
        let (k8, n8) = (k.next_multiple_of(8), n.next_multiple_of(8));
        let (copy_a, copy_b) = (convert.is_some() || k8 != k, convert.is_some() || n8 != n);
        // Floats of the workspace a copy of `rows × cols` 2-byte elements takes: a multiple
        // of 4, so that what follows starts 16-byte aligned.
        let floats_of = |copy: bool, rows: u32, cols: u32| match copy {
            true => (rows as usize * cols as usize)
                .div_ceil(2)
                .next_multiple_of(4),
            false => 0,
        };
        let (la, lb) = (floats_of(copy_a, m, k8), floats_of(copy_b, k, n8));
        let floats = run.workspace_floats(shape);
        let mut workspace = self.workspace(la + lb + floats)?;
        let ws = workspace.as_mut().expect("allocated by Gpu::workspace");
        let (mut wa, mut rest) = ws.split_at_mut(la);
        let (mut wb, mut rest) = rest.split_at_mut(lb);
        let spec = convert.unwrap_or(REPACK);
        // SAFETY: `a` and `b` as the caller promises (rows of k and n `S`s, what `spec`
        // reads); `wa` holds m rows of k8 and `wb` k rows of n8 2-byte elements where
        // copied (sized above), seen as the u16s the entry writes.
        unsafe {
            if copy_a {
                let mut dst = wa
                    .transmute_mut::<u16>(m as usize * k8 as usize)
                    .expect("sized");
                self.repack_with(spec, &a.as_view(), k, m, k, &mut dst, m, k8)?;
            }
            if copy_b {
                let mut dst = wb
                    .transmute_mut::<u16>(k as usize * n8 as usize)
                    .expect("sized");
                self.repack_with(spec, &b.as_view(), n, k, n, &mut dst, k, n8)?;
            }
        }
        let at = |copy: bool, w: &CudaViewMut<'_, f32>, x: &CudaSlice<S>| match copy {
            true => w.device_ptr(&self.stream).0,
            false => x.device_ptr(&self.stream).0,
        };
        let element = match T::HALF {
            Half::Bf16 => TmaElement::Bf16,
            Half::F16 => TmaElement::F16,
        };
        let (bm, bk) = (run.config.geometry.bm, run.config.geometry.bk);
        let maps = [
            tensor_map(at(copy_a, &wa, a), m, k8, element, bm)?,
            tensor_map(at(copy_b, &wb, b), k, n8, element, bk)?,
        ];
        let planes = (floats > 0).then(|| rest.slice_mut(..floats));
        // SAFETY: the maps describe `a` (m rows of k8) and `b` (k rows of n8) `T`s, copied
        // into the workspace or the caller's where their rows were whole 16-byte units
        // already (16-byte aligned either way), in the configuration's boxes; the planes
        // hold `splits` planes of m · n where split; `out` m · n (the caller's contract).
        unsafe { self.launch_ws(run, maps, planes, out, shape) }
    }

    /// The launches of a rung-17 product on its tensor maps: the product (into `planes`
    /// when split), then the reduction of the planes into `out`.
    ///
    /// # Safety
    /// `maps` describe `a` and `b` as `run`'s configuration reads them (element type,
    /// layout, boxes), in device memory that outlives the launch; `planes` is given, of
    /// `splits · m · n` floats, when `run` is split; `out` holds `m · n` floats and
    /// overlaps neither; the product is not trivial.
    unsafe fn launch_ws(
        &self, run: HalfRun, maps: [TensorMap; 2], mut planes: Option<CudaViewMut<'_, f32>>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        let info = self.entry_info(run.config.spec.entry)?;
        let mut launch = half::launch(run, shape, self.multiprocessors, &self.limits)?;
        if launch.cluster > 1 {
            let resident = self.resident_blocks(&info, &launch)?;
            launch = half::launch(run, shape, resident, &self.limits)?;
        }
        let (m, n) = (shape.m, shape.n);
        let maps = self.tensor_maps(maps)?;
        let (_, buffer) = maps.as_ref().expect("tensor_maps fills the buffer");
        let (amap, bmap) = (map_view(buffer, 0), map_view(buffer, 1));
        let splits = run.splits.max(1);
        let mut args = self.launcher(&info);
        args.view(&amap).view(&bmap);
        match planes.as_mut() {
            Some(planes) => args.view_mut(planes),
            None => args.buffer_mut(out),
        };
        args.dims(&shape).scalar(&splits);
        // SAFETY: (amap, bmap, out, m, n, k, splits) as every rung-17 entry declares them:
        // the maps (on the stream before the launch) as the caller promises; the output
        // holds `splits` planes of m·n f32 (the planes, or `out`) and overlaps neither.
        unsafe { args.launch(&launch) }?;
        drop(args);
        if let Some(planes) = planes {
            // SAFETY: the planes were written by the launch above, on the stream; `out`
            // holds m · n floats (the caller's contract).
            unsafe {
                self.split_k_reduce(&planes.as_view(), &mut out.as_view_mut(), m * n, n, splits)
            }?;
        }
        Ok(())
    }

    /// A new buffer of `rows × padded` 2-byte elements: the dense `rows × cols` `src` through
    /// the repack entry `spec` (a copy, or a conversion from f32), zero past `cols`.
    ///
    /// # Safety
    /// `src` holds `rows · cols` elements of the entry's source type; `T` is a 2-byte type.
    unsafe fn repack_padded<S, T: DeviceRepr + ValidAsZeroBits>(
        &self, spec: &KernelSpec, src: &CudaSlice<S>, rows: u32, cols: u32, padded: u32,
    ) -> Result<CudaSlice<T>> {
        let mut dst = self.zeros_of::<T>(rows as usize * padded as usize)?;
        let mut view = dst_view(&mut dst);
        // SAFETY: `src` as the caller promises (rows of `cols`, so `ld = cols`); `dst` holds
        // rows · padded 2-byte elements, seen as the u16s the entry writes.
        unsafe {
            self.repack_with(
                spec,
                &src.as_view(),
                cols,
                rows,
                cols,
                &mut view,
                rows,
                padded,
            )
        }?;
        Ok(dst)
    }
}

/// The repack entry that converts f32 to `T` ([`crate::plan::half::conversion`]).
fn to_half<T: HalfFloat>() -> &'static KernelSpec {
    crate::plan::half::conversion(T::HALF)
}

/// `buf` seen as the 2-byte elements a repack entry writes.
fn dst_view<T: DeviceRepr>(buf: &mut CudaSlice<T>) -> CudaViewMut<'_, u16> {
    let len = buf.len();
    // SAFETY: T is a 2-byte element type (bf16, f16), so `len` u16s cover the buffer.
    unsafe { buf.transmute_mut::<u16>(len) }.expect("a 2-byte element type")
}
