//! Launching the matmul kernels on the GPU.

use super::Gpu;
use crate::gpu::autotune::Tuned;
use crate::plan::gemv::{Gemv, GemvElement};
use crate::plan::kernels::MatmulKernel;
use crate::plan::repack;
use crate::plan::row_split::RowSplit;
use crate::plan::sgemm::SgemmKernel;
use crate::plan::split_k::{SplitK, SplitKLaunch};
use crate::plan::stream_k::{self, StreamRun};
use crate::problem::error::{DriverContext, Error, Result};
use crate::problem::shape::MatmulShape;
use crate::problem::tile::TileWidth;
use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DeviceRepr};
use kernels_gpu::catalogue::{Extent, KernelSpec};
use kernels_gpu::sgemm::repack::REPACK;

use std::sync::MutexGuard;

impl Gpu {
    /// Runs `kernel` on device buffers: `out = a · b`. Asynchronous: it returns once the
    /// launch is queued; [`Gpu::synchronize`] or a download waits for it.
    ///
    /// Wrong buffer lengths are [`Error::InputLength`]; a grid, block or shared memory
    /// beyond this device's limits is [`Error::Launch`], before anything is queued.
    pub fn matmul_device(
        &self, kernel: MatmulKernel, tw: TileWidth, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        if super::zero_if_trivial(&self.stream, kernel.entry(tw), a, b, out, shape)? {
            return Ok(());
        }
        // The autotuned SGEMM is whichever configuration (or split-k run of one) is fastest
        // here for this shape (timed on these buffers the first time this shape is seen:
        // see crate::gpu::autotune).
        let kernel = match kernel {
            MatmulKernel::Sgemm(auto) if auto.is_autotuned() => {
                match crate::gpu::autotune::choose(self, a, b, out, shape, auto.precision())? {
                    Tuned::Config(k) => MatmulKernel::Sgemm(k),
                    other => return other.run(self, a, b, out, shape),
                }
            }
            other => other,
        };
        // SAFETY: the buffers have the shape's lengths (checked above).
        unsafe {
            self.launch_matmul(
                kernel,
                tw,
                &a.as_view(),
                &b.as_view(),
                &mut out.as_view_mut(),
                shape,
            )
        }
    }

    /// The launch of [`matmul_device`](Self::matmul_device) past its checks, on parts of
    /// buffers.
    ///
    /// # Safety
    /// `a`, `b` and `out` hold at least the shape's `m·k`, `k·n` and `m·n` floats; the shape
    /// is not trivial; `kernel` is not the autotuned SGEMM.
    unsafe fn launch_matmul(
        &self, kernel: MatmulKernel, tw: TileWidth, a: &CudaView<f32>, b: &CudaView<f32>,
        out: &mut CudaViewMut<f32>, shape: MatmulShape,
    ) -> Result<()> {
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
        let tw = tw.get();
        let mut args = self.launcher(&info);
        args.view(a).view(b).view_mut(out).dims(&shape);
        if takes_tw {
            args.scalar(&tw);
        }
        // SAFETY: (a, b, out, m, n, k[, tw]) as every matmul entry declares them (the
        // launcher checks the sizes against the PTX); the buffers hold what the shape needs
        // (the caller's contract), and the shape fits u32 indices (MatmulShape).
        unsafe { args.launch(&launch) }
    }

    /// `out = a · b` by split-k ([`crate::plan::split_k`]): `s`'s configuration over slices of
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
        // SAFETY: the buffers have the shape's lengths (checked above).
        unsafe { self.launch_split_k(s, &a.as_view(), &b.as_view(), &mut out.as_view_mut(), shape) }
    }

    /// `out = a · b` by serial split-k ([`kernels_gpu::sgemm::split_k`]'s module docs): one
    /// launch of `s`'s serial entry, the slices of each output tile adding up in order
    /// through `out`, with the [`Gpu`]'s flag buffer (grown as needed, left all 0 by every
    /// launch). Asynchronous, like [`matmul_device`](Self::matmul_device), with the same
    /// errors and [`Error::EntryNotFound`] for a configuration
    /// without a serial entry; the bits of [`matmul_split_k_device`](Self::matmul_split_k_device)
    /// with the same `s`, run to run.
    pub fn matmul_serial_split_k_device(
        &self, s: SplitK, a: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        let Some(spec) = s.serial_spec() else {
            return Err(Error::EntryNotFound {
                entry: s.serial_name(),
            });
        };
        if super::zero_if_trivial(&self.stream, spec.entry, a, b, out, shape)? {
            return Ok(());
        }
        let l = s.serial_launch(shape)?;
        let info = self.entry_info(spec.entry)?;
        let mut flags = self.serial_flags(l.flags)?;
        let flags = flags.as_mut().expect("allocated by Gpu::serial_flags");
        let mut args = self.launcher(&info);
        args.buffer(a).buffer(b).buffer_mut(out).buffer_mut(flags);
        args.dims(&shape).scalar(&l.slice);
        // SAFETY: (a, b, out, flags, m, n, k, slice) as every serial entry declares them (the
        // launcher checks the sizes); a, b and out have the shape's lengths (checked above);
        // flags holds the ticket counter and a flag per output tile, all 0 (zeroed when
        // allocated, and every launch on this stream leaves them so); the grid is the
        // configuration's tiles with cdiv(k, slice) slices in z, as the kernel counts them.
        unsafe { args.launch(&l.launch) }
    }

    /// `out = a · b` by stream-k ([`kernels_gpu::sgemm::stream_k`]'s module docs): one
    /// launch of `s`'s stream-k entry, a block per worker, the pieces of each output tile
    /// adding up in order through the output, with the [`Gpu`]'s flag buffer (as serial
    /// split-k's); a product that is not whole tiles runs on padded copies in the [`Gpu`]'s
    /// workspace ([`stream_k::Padded`]), the output copied back. Asynchronous, like
    /// [`matmul_device`](Self::matmul_device), with the same errors and those of
    /// [`StreamRun::launch`]; the bits of [`stream_k::cpu_stream_k`], run to run.
    pub fn matmul_stream_k_device(
        &self, s: StreamRun, a: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        let spec = s.spec()?;
        if super::zero_if_trivial(&self.stream, spec.entry, a, b, out, shape)? {
            return Ok(());
        }
        let l = s.launch(shape)?;
        let p = l.padded;
        if p.workspace() == 0 {
            // SAFETY: a, b and out have the shape's lengths (checked above), whole tiles.
            return unsafe {
                self.launch_stream_k(spec, &l, &a.as_view(), &b.as_view(), &mut out.as_view_mut())
            };
        }
        let mut workspace = self.workspace(p.workspace())?;
        let ws = workspace.as_mut().expect("allocated by Gpu::workspace");
        // SAFETY: a, b and out have the shape's lengths (checked above), the workspace
        // p.workspace() floats; the launch runs the whole-tile product it is given.
        unsafe {
            self.on_padded(p, a, b, out, shape, ws.as_view_mut(), |a, b, out, _| {
                self.launch_stream_k(spec, &l, a, b, out)
            })
        }
    }

    /// Runs `run` on the padded product `p` of `shape`: the operands it copies repacked
    /// (zero-padded) into the start of `ws`, `a`'s then `b`'s, and its output into the part
    /// after them where the output is copied, then that output's first `m` rows of `n`
    /// copied into `out`. `run` gets the padded operands and output and the rest of `ws`.
    ///
    /// # Safety
    /// `a`, `b` and `out` hold `shape`'s operands and output; `p` pads `shape`; `ws` holds
    /// at least `p.workspace()` floats; `run` launches on the stream.
    #[allow(clippy::too_many_arguments)]
    unsafe fn on_padded(
        &self, p: repack::Padded, a: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>,
        shape: MatmulShape, mut ws: CudaViewMut<f32>,
        run: impl FnOnce(
            &CudaView<f32>,
            &CudaView<f32>,
            &mut CudaViewMut<f32>,
            CudaViewMut<f32>,
        ) -> Result<()>,
    ) -> Result<()> {
        let (m, k, n) = (shape.m, shape.k, shape.n);
        let whole = p.shape;
        let (la, lb, lo) = p.copies();
        let (mut wa, mut rest) = ws.split_at_mut(la);
        let (mut wb, mut rest) = rest.split_at_mut(lb);
        let (mut wo, rest) = rest.split_at_mut(lo);
        // SAFETY: a, b and out have the shape's lengths (the caller's contract); wa holds m'
        // rows of k' where a is copied, wb k' rows of n' where b is, wo m' rows of n' where
        // the output is (Padded::copies), each starting a multiple of 4 floats into the
        // workspace, so 16-byte aligned; `run` reads the copies (zero past the operands) or
        // the operands as they are (then already of the padded product's shape).
        unsafe {
            if p.copy_a {
                self.repack(&a.as_view(), k, m, k, &mut wa, whole.m, whole.k)?;
            }
            if p.copy_b {
                self.repack(&b.as_view(), n, k, n, &mut wb, whole.k, whole.n)?;
            }
            let a = if p.copy_a { wa.as_view() } else { a.as_view() };
            let b = if p.copy_b { wb.as_view() } else { b.as_view() };
            if p.copy_out {
                run(&a, &b, &mut wo, rest)?;
                self.repack(&wo.as_view(), whole.n, m, n, &mut out.as_view_mut(), m, n)
            } else {
                run(&a, &b, &mut out.as_view_mut(), rest)
            }
        }
    }

    /// The launch of a stream-k entry `spec` as `l` says, on `a`, `b` and `out` of its
    /// whole-tile product ([`stream_k::StreamLaunch::padded`]).
    ///
    /// # Safety
    /// `a`, `b` and `out` hold the whole-tile product's `m' × k'`, `k' × n'` and `m' × n'`
    /// (zero past the product's operands), 16-byte aligned; `l` is `StreamRun::launch` for
    /// `spec`'s run.
    unsafe fn launch_stream_k(
        &self, spec: &KernelSpec, l: &stream_k::StreamLaunch, a: &CudaView<f32>, b: &CudaView<f32>,
        out: &mut CudaViewMut<f32>,
    ) -> Result<()> {
        let whole = l.padded.shape;
        let info = self.entry_info(spec.entry)?;
        let mut flags = self.serial_flags(l.flags)?;
        let flags = flags.as_mut().expect("allocated by Gpu::serial_flags");
        let mut args = self.launcher(&info);
        args.view(a).view(b).view_mut(out).buffer_mut(flags);
        args.scalar(&whole.m)
            .scalar(&whole.n)
            .scalar(&whole.k)
            .scalar(&l.row0)
            .scalar(&l.m_all)
            .scalar(&l.schedule.workers);
        // SAFETY: (a, b, out, flags, m, n, k, row0, m_all, workers) as every stream-k entry
        // declares them (the launcher checks the sizes); the buffers as the caller promises,
        // every dimension whole tiles; flags holds the ticket counter and a flag per output
        // tile of these rows, all 0 (zeroed when allocated, and every launch on this stream
        // leaves them so); row0 and m_all whole tiles, checked by StreamRun::launch, whose
        // 1-D grid is a block per worker, as the kernel counts them.
        unsafe { args.launch(&l.launch) }
    }

    /// The flag buffer of serial split-k products and fused rung-16 runs, locked, holding
    /// at least `words` (grown to the largest size asked for so far, zeroed when it grows;
    /// the kernels leave it all 0). One `Gpu` runs everything on one stream, so launches
    /// that share it run one after another.
    fn serial_flags(&self, words: usize) -> Result<MutexGuard<'_, Option<CudaSlice<u64>>>> {
        let mut flags = self.serial_flags.lock().unwrap_or_else(|e| e.into_inner());
        if flags.as_ref().is_none_or(|f| f.len() < words) {
            *flags = None; // free the old one first
            *flags = Some(self.zeros_of::<u64>(words)?);
        }
        Ok(flags)
    }

    /// The launches of [`matmul_split_k_device`](Self::matmul_split_k_device) past its
    /// checks, on parts of buffers.
    ///
    /// # Safety
    /// As [`launch_matmul`](Self::launch_matmul).
    unsafe fn launch_split_k(
        &self, s: SplitK, a: &CudaView<f32>, b: &CudaView<f32>, out: &mut CudaViewMut<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        let l = s.launch(shape)?;
        let mut workspace = self.workspace(l.workspace)?;
        let ws = workspace.as_mut().expect("allocated by Gpu::workspace");
        // SAFETY: the caller's contract; ws holds l.workspace floats.
        unsafe { self.split_k_on(s, &l, a, b, out, shape, ws.as_view_mut()) }
    }

    /// The launches of split-k run `l` of `s` on `shape`: the slices into the planes at the
    /// start of `ws`, grouped where `l` says, then their reduction into `out`.
    ///
    /// # Safety
    /// As [`launch_matmul`](Self::launch_matmul); `ws` holds `l.workspace` floats.
    #[allow(clippy::too_many_arguments)]
    unsafe fn split_k_on(
        &self, s: SplitK, l: &SplitKLaunch, a: &CudaView<f32>, b: &CudaView<f32>,
        out: &mut CudaViewMut<f32>, shape: MatmulShape, mut ws: CudaViewMut<f32>,
    ) -> Result<()> {
        let (m, n) = (shape.m, shape.n);
        let info = self.entry_info(s.spec().entry)?;
        let mut args = self.launcher(&info);
        args.view(a).view(b).view_mut(&mut ws);
        args.dims(&shape).scalar(&l.slice);
        // SAFETY: (a, b, ws, m, n, k, slice) as the slice entry declares them; a and b hold
        // the shape's operands (the caller's contract), ws holds slices · m · n floats, and
        // the grid has cdiv(k, slice) slices in z.
        unsafe { args.launch(&l.partial) }?;
        drop(args);
        let len = m * n;
        let planes = match &l.group {
            None => ws.as_view(),
            Some(group) => {
                // The slices' planes added in groups into the planes after them.
                let (slices, mut groups) = ws.split_at_mut(l.groups_at(len));
                let slices = slices.as_view();
                let info = self.entry_info(kernels_gpu::sgemm::split_k::GROUP.entry)?;
                let mut args = self.launcher(&info);
                args.view(&slices)
                    .view_mut(&mut groups)
                    .scalar(&len)
                    .scalar(&l.slices);
                // SAFETY: (ws, groups, len, splits) as the group entry declares them: the
                // slices' planes written by the launch before on the same stream, then room
                // for l.groups planes (SplitK::launch's workspace); the groups in y.
                unsafe { args.launch(group) }?;
                ws.slice(l.groups_at(len)..)
            }
        };
        // SAFETY: planes holds l.groups planes of m · n floats, written by the launches before
        // on the same stream; out holds at least m · n (the caller's contract).
        unsafe { self.split_k_reduce(&planes, out, len, n, l.groups) }
    }

    /// `out = a · b` by `run` on operands padded to whole tiles of its configuration
    /// ([`repack::tiles`]): the operands that its padding copies, zero-padded, and the
    /// padded output in the [`Gpu`]'s workspace, then the output's first `m` rows of `n`
    /// copied into `out`. Where the padding would copy nothing, `run` itself. The bits of
    /// `run` on the padded operands: a plain configuration's on `a` and `b` as they are (the
    /// padding adds exact zero products), a split-k run's on the padded depth's slices.
    /// Asynchronous, with the errors of [`matmul_device`](Self::matmul_device).
    pub fn matmul_tiles_device(
        &self, run: repack::TiledRun, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        let entry = match run {
            repack::TiledRun::Config(k) => k.entry(),
            repack::TiledRun::Split(s) => s.spec().entry,
        };
        if super::zero_if_trivial(&self.stream, entry, a, b, out, shape)? {
            return Ok(());
        }
        let Some(p) = run.tiles(shape)? else {
            return match run {
                repack::TiledRun::Config(k) => {
                    self.matmul_device(MatmulKernel::Sgemm(k), TileWidth::Tw16, a, b, out, shape)
                }
                repack::TiledRun::Split(s) => self.matmul_split_k_device(s, a, b, out, shape),
            };
        };
        // The run on the padded product, a split-k one with its launches.
        enum Inner {
            Plain(SgemmKernel),
            Split(SplitK, SplitKLaunch),
        }
        let inner = match run {
            repack::TiledRun::Config(k) => Inner::Plain(k),
            repack::TiledRun::Split(s) => Inner::Split(s, s.launch(p.shape)?),
        };
        let planes = match &inner {
            Inner::Split(_, l) => l.workspace,
            Inner::Plain(_) => 0,
        };
        let mut workspace = self.workspace(p.workspace() + planes)?;
        let ws = workspace.as_mut().expect("allocated by Gpu::workspace");
        // SAFETY: a, b and out have the shape's lengths (checked above); the workspace holds
        // the copies and, after them, the split-k run's planes for the padded product.
        unsafe {
            self.on_padded(
                p,
                a,
                b,
                out,
                shape,
                ws.as_view_mut(),
                |a, b, out, rest| match inner {
                    Inner::Split(s, l) => self.split_k_on(s, &l, a, b, out, p.shape, rest),
                    Inner::Plain(k) => {
                        let kernel = MatmulKernel::Sgemm(k);
                        self.launch_matmul(kernel, TileWidth::Tw16, a, b, out, p.shape)
                    }
                },
            )
        }
    }

    /// `out = a · b` by a rung-16 kernel ([`crate::plan::gemv`]): `g`'s configuration over
    /// its slices of `k` (as many as [`Gemv::slices`] gives on this device), each into its
    /// own plane of the [`Gpu`]'s workspace where there are several, then the reduction of
    /// the planes in order. Asynchronous, like [`matmul_device`](Self::matmul_device), with
    /// its errors, [`Error::GemvBound`] for a configuration that does not cover the shape
    /// and [`Error::ElementMismatch`] for one that reads another element type than `E`
    /// (f32, or `half::bf16` for the `-bf16-inputs` configurations); the bits of
    /// [`Gemv::cpu`], run to run.
    pub fn matmul_gemv_device<E: GemvElement + DeviceRepr>(
        &self, g: Gemv, a: &CudaSlice<E>, b: &CudaSlice<E>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        g.check_element::<E>()?;
        let spec = &g.config().spec;
        if super::zero_if_trivial(&self.stream, spec.entry, a, b, out, shape)? {
            return Ok(());
        }
        let l = g.launch(shape, self.multiprocessors, &self.limits)?;
        let info = self.entry_info(spec.entry)?;
        // Several slices write their planes into the workspace; a fused run's tiles count
        // themselves in on the flags, which every launch leaves 0.
        let mut workspace = match l.slices {
            1 => None,
            _ => Some(self.workspace(l.workspace)?),
        };
        let mut flags = match l.flags {
            0 => None,
            words => Some(self.serial_flags(words)?),
        };
        let null = 0u64;
        let mut args = self.launcher(&info);
        args.buffer(a).buffer(b).buffer_mut(out);
        match workspace.as_mut() {
            Some(w) => args.buffer_mut(w.as_mut().expect("allocated by Gpu::workspace")),
            None => args.scalar(&null),
        };
        match flags.as_mut() {
            Some(f) => args.buffer_mut(f.as_mut().expect("allocated by Gpu::serial_flags")),
            None => args.scalar(&null),
        };
        args.dims(&shape).scalar(&l.slice);
        // SAFETY: (a, b, out, ws, flags, m, n, k, slice) as every rung-16 entry declares them
        // (the launcher checks the sizes); a, b and out have the shape's lengths (checked
        // above); ws holds the slices' planes of m · n floats where there are several
        // (else null, unread); flags one 4-byte counter per tile, all 0, where the run is
        // fused (else null); the configuration covers the shape (Gemv::launch), and the
        // grid's y extent is the slices, cdiv(k, slice).
        unsafe { args.launch(&l.main) }?;
        drop(flags);
        match (l.reduce, workspace) {
            // SAFETY: the workspace holds the slices' planes, written just before on the
            // same stream; out holds m · n floats.
            (Some(_), Some(ws)) => unsafe {
                let ws = ws.as_ref().expect("allocated by Gpu::workspace");
                let (m, n) = (shape.m, shape.n);
                self.split_k_reduce(&ws.as_view(), &mut out.as_view_mut(), m * n, n, l.slices)
            },
            _ => Ok(()),
        }
    }

    /// The split-k reduction ([`kernels_gpu::sgemm::split_k::sgemm_split_k_reduce`]): `out`
    /// = the sum of the `splits` planes of `len = m · n` floats in `ws`, added in order.
    ///
    /// # Safety
    /// `ws` holds `splits · len` floats written before on the stream; `out` at least `len`.
    pub(super) unsafe fn split_k_reduce(
        &self, ws: &CudaView<f32>, out: &mut CudaViewMut<f32>, len: u32, n: u32, splits: u32,
    ) -> Result<()> {
        let launch = crate::plan::split_k::reduce_launch(len);
        let info = self.entry_info(kernels_gpu::sgemm::split_k::REDUCE.entry)?;
        let mut args = self.launcher(&info);
        args.view(ws)
            .view_mut(out)
            .scalar(&len)
            .scalar(&n)
            .scalar(&splits);
        // SAFETY: (ws, out, len, n, splits) as the reduction declares them; the buffers as
        // the caller promises.
        unsafe { args.launch(&launch) }
    }

    /// `out = a · b` split by rows ([`crate::plan::row_split`]): rows `0..r.rows` by `r.top`,
    /// the rest by the split-k run `r.bottom`, one after the other on the stream.
    /// Asynchronous, with the errors of [`matmul_device`](Self::matmul_device), and
    /// [`Error::RowSplit`] unless `1 <= r.rows < m`.
    pub fn matmul_rows_device(
        &self, r: RowSplit, a: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        if super::zero_if_trivial(&self.stream, r.top.entry(), a, b, out, shape)? {
            return Ok(());
        }
        let (top, bottom) = r.parts(shape)?;
        let rows = r.rows as usize;
        let (a_rows, out_rows) = (rows * shape.k as usize, rows * shape.n as usize);
        // SAFETY: the buffers have the shape's lengths (checked above): the first `rows`
        // rows of a and out hold the top part's, the rest the bottom part's.
        unsafe {
            self.launch_matmul(
                MatmulKernel::Sgemm(r.top),
                TileWidth::Tw16,
                &a.slice(..a_rows),
                &b.as_view(),
                &mut out.slice_mut(..out_rows),
                top,
            )?;
            self.launch_split_k(
                r.bottom,
                &a.slice(a_rows..),
                &b.as_view(),
                &mut out.slice_mut(out_rows..),
                bottom,
            )
        }
    }

    /// `out = a · b` by `kernel` on repacked operands ([`crate::plan::repack`]). A
    /// configuration with a strided entry: the operands that need it copied into the
    /// workspace ([`repack::Strided`]: the depth in whole tiles, `b`'s rows a multiple of 4),
    /// and the product stored in place. Any other: `a` and `b` copied into the workspace
    /// with rows of `k` and `n` rounded up to 4 (zero-padded), the product there, and its
    /// rows copied back into `out`. Asynchronous, with the errors of
    /// [`matmul_device`](Self::matmul_device); the bits of `kernel` on `a` and `b` as they
    /// are.
    pub fn matmul_repacked_device(
        &self, kernel: SgemmKernel, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        if super::zero_if_trivial(&self.stream, kernel.entry(), a, b, out, shape)? {
            return Ok(());
        }
        let config = kernel.config();
        if let Some(spec) = &config.strided {
            let plan = repack::Strided::of(config, shape)?;
            // SAFETY: a, b and out have the shape's lengths (checked above).
            return unsafe { self.launch_strided(spec, plan, a, b, out, shape) };
        }
        let p = repack::padded(shape)?;
        let (la, lb, lo) = p.lens();
        let mut workspace = self.workspace(la + lb + lo)?;
        let ws = workspace.as_mut().expect("allocated by Gpu::workspace");
        let (mut wa, mut rest) = ws.split_at_mut(la);
        let (mut wb, mut rest) = rest.split_at_mut(lb);
        let (mut wo, _) = rest.split_at_mut(lo);
        let (m, k, n) = (shape.m, shape.k, shape.n);
        // SAFETY: a, b and out have the shape's lengths (checked above); wa, wb and wo the
        // padded product's (la, lb, lo floats, each a multiple of 4 from the workspace's
        // start, so 16-byte aligned).
        unsafe {
            self.repack(&a.as_view(), k, m, k, &mut wa, m, p.k)?;
            self.repack(&b.as_view(), n, k, n, &mut wb, p.k, p.n)?;
            self.launch_matmul(
                MatmulKernel::Sgemm(kernel),
                TileWidth::Tw16,
                &wa.as_view(),
                &wb.as_view(),
                &mut wo,
                p,
            )?;
            self.repack(&wo.as_view(), p.n, m, n, &mut out.as_view_mut(), m, n)
        }
    }

    /// A strided entry `spec` on `shape` as `plan` says: the operands it copies into the
    /// workspace, zero-padded, the others as they are, and the product stored in `out`.
    ///
    /// # Safety
    /// `a`, `b` and `out` hold `shape`'s operands and output; `plan` is
    /// [`repack::Strided::of`] of `spec`'s configuration and `shape`.
    unsafe fn launch_strided(
        &self, spec: &KernelSpec, plan: repack::Strided, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        let (m, k, n) = (shape.m, shape.k, shape.n);
        let mut workspace = self.workspace(plan.workspace(m).max(1))?;
        let ws = workspace.as_mut().expect("allocated by Gpu::workspace");
        let (mut wa, mut wb) = ws.split_at_mut(plan.a_copy(m));
        // SAFETY: a and b have the shape's lengths (the caller's contract); wa holds m rows of
        // lda where a is copied, wb plan.k rows of ldb where b is (Strided::workspace), each
        // starting a multiple of 4 floats into the workspace, so 16-byte aligned.
        unsafe {
            if plan.copy_a {
                self.repack(&a.as_view(), k, m, k, &mut wa, m, plan.lda())?;
            }
            if plan.copy_b {
                self.repack(&b.as_view(), n, k, n, &mut wb, plan.k, plan.ldb)?;
            }
        }
        let a = if plan.copy_a {
            wa.as_view()
        } else {
            a.as_view()
        };
        let b = if plan.copy_b {
            wb.as_view()
        } else {
            b.as_view()
        };
        let info = self.entry_info(spec.entry)?;
        let lda = plan.lda();
        let mut args = self.launcher(&info);
        args.view(&a).view(&b).buffer_mut(out);
        args.scalar(&shape.m)
            .scalar(&shape.n)
            .scalar(&plan.k)
            .scalar(&lda)
            .scalar(&plan.ldb);
        let launch = spec.launch(Extent::Matrix { rows: m, cols: n }, 0);
        // SAFETY: (a, b, out, m, n, k, lda, ldb) as every strided entry declares them: a holds
        // m rows of lda >= plan.k floats (zero from k on where copied; lda = k = plan.k where
        // not), b plan.k rows of ldb >= n (likewise), out m · n; the grid is the
        // configuration's over the output.
        unsafe { args.launch(&launch) }
    }

    /// The workspace of split-k and repacked products, locked, holding at least `floats`
    /// (grown to the largest size asked for so far; its contents are whatever the last
    /// user left). Never empty: the driver refuses an allocation of no bytes, and a caller
    /// that needs none still gets one to split.
    pub(super) fn workspace(
        &self, floats: usize,
    ) -> Result<MutexGuard<'_, Option<CudaSlice<f32>>>> {
        let mut workspace = self.workspace.lock().unwrap_or_else(|e| e.into_inner());
        if workspace.as_ref().is_none_or(|w| w.len() < floats) {
            *workspace = None; // free the old one first
            *workspace = Some(self.zeros(floats.max(4))?);
        }
        Ok(workspace)
    }

    /// One launch of [`kernels_gpu::sgemm::repack::sgemm_repack`]: the top-left
    /// `src_rows × src_cols` of `src` (rows `ld` apart) into the dense `rows × cols` `dst`,
    /// zero past it.
    ///
    /// # Safety
    /// `src` holds `src_rows · ld` floats with `src_cols <= ld`, `dst` holds `rows · cols`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn repack(
        &self, src: &CudaView<f32>, ld: u32, src_rows: u32, src_cols: u32,
        dst: &mut CudaViewMut<f32>, rows: u32, cols: u32,
    ) -> Result<()> {
        // SAFETY: the caller's contract, for the f32 repack entry.
        unsafe { self.repack_with(&REPACK, src, ld, src_rows, src_cols, dst, rows, cols) }
    }

    /// One launch of the repack entry `spec` (the f32 one, or a 16-bit copy or conversion):
    /// the top-left `src_rows × src_cols` of `src` (rows `ld` apart) into the dense
    /// `rows × cols` `dst`, zero past it.
    ///
    /// # Safety
    /// `src` holds `src_rows · ld` elements of the entry's source type with
    /// `src_cols <= ld`, `dst` `rows · cols` of its destination type.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn repack_with<S, D>(
        &self, spec: &KernelSpec, src: &CudaView<S>, ld: u32, src_rows: u32, src_cols: u32,
        dst: &mut CudaViewMut<D>, rows: u32, cols: u32,
    ) -> Result<()> {
        let info = self.entry_info(spec.entry)?;
        let mut args = self.launcher(&info);
        args.view(src)
            .scalar(&ld)
            .scalar(&src_rows)
            .scalar(&src_cols)
            .view_mut(dst)
            .scalar(&rows)
            .scalar(&cols);
        // SAFETY: the parameters as the entry declares them; the buffers as the caller
        // promises.
        unsafe { args.launch(&repack::launch(spec, rows, cols)) }
    }

    /// How many blocks of `kernel` run at once on one SM with the block and dynamic shared
    /// memory of its launch for `shape` (the driver's occupancy calculator, which counts
    /// its registers and shared memory).
    pub fn blocks_per_sm(&self, kernel: MatmulKernel, shape: MatmulShape) -> Result<u32> {
        let tw = TileWidth::Tw16;
        let launch = kernel.launch_within(tw, &shape, &self.limits)?;
        let threads = launch.block.x * launch.block.y * launch.block.z;
        self.entry_blocks_per_sm(kernel.entry(tw), threads, launch.dynamic_shared_bytes)
    }

    /// Blocks of `s`'s stream-k entry that one multiprocessor runs at once (its own
    /// registers, which the loop over its pieces raises above the plain entry's): the
    /// workers that are all resident at once.
    pub fn stream_k_blocks_per_sm(&self, s: StreamRun) -> Result<u32> {
        let threads = kernels_gpu::sgemm::CONFIGS[s.config].geometry.threads;
        self.entry_blocks_per_sm(s.spec()?.entry, threads, 0)
    }

    /// Blocks of `entry` of `threads` threads and `dynamic_shared_bytes` that one
    /// multiprocessor runs at once (the driver's occupancy).
    fn entry_blocks_per_sm(
        &self, entry: &str, threads: u32, dynamic_shared_bytes: u32,
    ) -> Result<u32> {
        let info = self.entry_info(entry)?;
        info.function()
            .occupancy_max_active_blocks_per_multiprocessor(
                threads,
                dynamic_shared_bytes as usize,
                None,
            )
            .call("cuOccupancyMaxActiveBlocksPerMultiprocessor")
    }
}
