//! Launching the kernels on the CPU simulator: the same launch shape as on the GPU.

use crate::backend::Backend;
use crate::plan::fusion::{intermediate_len, zip_launch};
use crate::plan::gemm::{GemmKernel, Resolved};
use crate::plan::half::{HalfFloat, HalfRun, Input};
use crate::plan::kernels::MatmulKernel;
use crate::plan::packed::Packing;
use crate::plan::reduce::{self, ReduceKernel};
use crate::plan::repack;
use crate::plan::row_split::RowSplit;
use crate::plan::sgemm::SgemmKernel;
use crate::plan::sliding::{self, SlidingKernel, SlidingShape};
use crate::plan::split_k::SplitK;
use crate::plan::stream_k::StreamRun;
use crate::problem::axis::{self, Axis, AxisOp, AxisShape};
use crate::problem::error::Result;
use crate::problem::gemm::Gemm;
use crate::problem::shape::MatmulShape;
use crate::problem::tile::TileWidth;
use kernels_gpu::catalogue::{Extent, SLIDING, SLIDING_SCAN};
use kernels_gpu::nvptx_device::launch::{Launch, Limits};
use kernels_gpu::nvptx_device::sim;
use kernels_gpu::nvptx_device::wgmma::Half;
use kernels_gpu::reduce::cols::ColumnPlan;
use kernels_gpu::sgemm::gemv::GemvSim;
use kernels_gpu::sgemm::repack::{REPACK, entry as repack_entry};
use kernels_gpu::sgemm::{CONFIGS, blas, split_k};

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

/// `len` zeros in 16-byte-aligned storage, for kernels that store four floats at once.
pub fn aligned_zeros(len: usize) -> Vec<Aligned> {
    vec![Aligned::default(); len.div_ceil(4)]
}

/// The first `len` floats of aligned storage, in place (`len <= 4 · v.len()`, else a
/// panic).
pub fn aligned_floats(v: &[Aligned], len: usize) -> &[f32] {
    assert!(
        len <= 4 * v.len(),
        "{len} floats from {} aligned words",
        v.len()
    );
    // SAFETY: `Aligned` is repr(C) around [f32; 4]: `v` holds 4 · v.len() >= len floats.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<f32>(), len) }
}

/// The first `len` floats of aligned storage, copied.
pub fn unaligned(v: &[Aligned], len: usize) -> Vec<f32> {
    aligned_floats(v, len).to_vec()
}

/// `x` copied into 16-byte-aligned storage, zero-padded to a whole number of 16 bytes (f32s,
/// or the BF16 bits of [`Simulator::gemm_bf16`]).
pub fn aligned_copy<T: bytemuck::Pod>(x: &[T]) -> Vec<Aligned> {
    let bytes: &[u8] = bytemuck::cast_slice(x);
    let mut v = vec![Aligned::default(); bytes.len().div_ceil(16)];
    // SAFETY: `v` holds 16 · v.len() >= bytes.len() bytes, and `Aligned` is plain f32s, for
    // which any bits are valid; the two do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr().cast::<u8>(), bytes.len())
    };
    v
}

/// A simulated launch's input and output in 16-byte-aligned storage, as device
/// allocations are, and the pointers the kernels take.
struct AlignedIo {
    input: Vec<Aligned>,
    out: Vec<Aligned>,
    outputs: usize,
}

impl AlignedIo {
    fn new(x: &[f32], outputs: usize) -> Self {
        Self {
            input: aligned_copy(x),
            out: aligned_zeros(outputs),
            outputs,
        }
    }

    /// (input, output): valid while `self` lives, which the launch borrows.
    fn ptrs(&mut self) -> (SharedPtr<f32>, SharedPtr<f32>) {
        (
            SharedPtr(self.input.as_ptr() as *mut f32),
            SharedPtr(self.out.as_mut_ptr() as *mut f32),
        )
    }

    fn output(&self) -> Vec<f32> {
        unaligned(&self.out, self.outputs)
    }
}

impl Simulator {
    /// `a · b` by split-k ([`crate::plan::split_k`]): the slice kernel into a workspace, then
    /// the reduction, as on the GPU (and with the same bits). `a` and `b` are used where
    /// they are: pass 16-byte-aligned slices for the vector paths.
    pub fn matmul_split_k(
        &self, s: SplitK, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let len = shape.lens().2;
        if shape.is_trivial() {
            return Ok(vec![0.0; len]);
        }
        let l = s.launch(shape)?;
        let partial = CONFIGS[s.config]
            .sim_split_k
            .expect("SplitK values name configurations with a split-k entry");
        let mut ws = aligned_zeros(l.workspace);
        let mut out = aligned_zeros(len);
        let (pa, pb, pw, po) = (
            SharedPtr(a.as_ptr() as *mut f32),
            SharedPtr(b.as_ptr() as *mut f32),
            SharedPtr(ws.as_mut_ptr().cast::<f32>()),
            SharedPtr(out.as_mut_ptr().cast::<f32>()),
        );
        let MatmulShape { m, k, n } = shape;
        let slice = l.slice;
        // SAFETY: a and b have the shape's lengths (checked above), ws holds the slices'
        // planes of m · n floats; the launch is the slice kernel's, the slices in z.
        self.launch(&l.partial, move || unsafe {
            partial(pa.get(), pb.get(), pw.get(), m, n, k, slice)
        })?;
        let planes = match &l.group {
            None => pw,
            Some(group) => {
                // The slices' planes added in groups into the planes after them.
                let (len, slices) = (m * n, l.slices);
                // SAFETY: ws holds the slices' planes, then room for the groups' (SplitK::
                // launch's workspace).
                let pg = unsafe { SharedPtr(pw.get().add(l.groups_at(len))) };
                // SAFETY: the slices' planes written by the launch before, the groups' after
                // them; the launch has the groups in y.
                self.launch(group, move || unsafe {
                    split_k::entry::sgemm_split_k_group(pw.get(), pg.get(), len, slices)
                })?;
                pg
            }
        };
        // SAFETY: planes holds l.groups planes, written by the launches before; out m · n.
        unsafe { self.reduce_planes(&l.reduce, planes, po, shape, l.groups) }?;
        Ok(unaligned(&out, len))
    }

    /// `a · b` by serial split-k ([`kernels_gpu::sgemm::split_k`]'s module docs): one launch
    /// of `s`'s serial entry, as on the GPU, with the bits of
    /// [`matmul_split_k`](Self::matmul_split_k) for the same `s`. `a` and `b` are used where
    /// they are: pass 16-byte-aligned slices for the vector paths. The kernel leaves its
    /// flags all 0 for the next launch; anything else is a kernel bug, and panics.
    pub fn matmul_serial_split_k(
        &self, s: SplitK, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let len = shape.lens().2;
        if shape.is_trivial() {
            return Ok(vec![0.0; len]);
        }
        let l = s.serial_launch(shape)?;
        let entry = CONFIGS[s.config]
            .sim_serial_split_k
            .expect("a configuration with a serial spec has its simulator twin");
        let mut out = aligned_zeros(len);
        let mut flags = vec![0u64; l.flags];
        let (pa, pb, po, pf) = (
            SharedPtr(a.as_ptr() as *mut f32),
            SharedPtr(b.as_ptr() as *mut f32),
            SharedPtr(out.as_mut_ptr().cast::<f32>()),
            SharedPtr(flags.as_mut_ptr()),
        );
        let MatmulShape { m, k, n } = shape;
        let slice = l.slice;
        // SAFETY: a and b have the shape's lengths (checked above), out holds m · n floats,
        // flags the counter and a flag per tile, all 0; the launch is the configuration's
        // grid with the slices in z (SplitK::serial_launch).
        self.launch(&l.launch, move || unsafe {
            entry(pa.get(), pb.get(), po.get(), pf.get(), m, n, k, slice)
        })?;
        assert!(
            flags.iter().all(|&f| f == 0),
            "{s} {shape}: serial split-k left its flags set: {flags:?}"
        );
        Ok(unaligned(&out, len))
    }

    /// `a · b` by stream-k ([`kernels_gpu::sgemm::stream_k`]'s module docs): one launch of
    /// `s`'s stream-k entry, a block per worker, on the padded copies of a product that is
    /// not whole tiles (the repack kernel's, the output copied back), as on the GPU, with the
    /// bits of [`cpu_stream_k`](crate::plan::stream_k::cpu_stream_k). The kernel leaves its
    /// flags all 0 for the next launch; anything else is a kernel bug, and panics.
    pub fn matmul_stream_k(
        &self, s: StreamRun, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let len = shape.lens().2;
        let spec = s.spec()?;
        if shape.is_trivial() {
            return Ok(vec![0.0; len]);
        }
        let l = s.launch(shape)?;
        let entry = CONFIGS[s.config]
            .sim_stream_k
            .unwrap_or_else(|| panic!("{} has a stream-k spec and no simulator twin", spec.entry));
        let MatmulShape { m, n, .. } = shape;
        let p = l.padded;
        let whole = p.shape;
        let (la, lb, lo) = whole.lens();
        let (ap, bp) = self.copied_operands(
            a,
            b,
            shape,
            p.copy_a.then_some((whole.m, whole.k)),
            p.copy_b.then_some((whole.k, whole.n)),
        )?;
        let (ap, bp) = (aligned_floats(&ap, la), aligned_floats(&bp, lb));
        let mut out = aligned_zeros(lo);
        let mut flags = vec![0u64; l.flags];
        let (pa, pb, po, pf) = (
            SharedPtr(ap.as_ptr() as *mut f32),
            SharedPtr(bp.as_ptr() as *mut f32),
            SharedPtr(out.as_mut_ptr().cast::<f32>()),
            SharedPtr(flags.as_mut_ptr()),
        );
        let (row0, m_all, workers) = (l.row0, l.m_all, l.schedule.workers);
        // SAFETY: ap, bp and out hold the whole-tile product's m' × k', k' × n' and m' × n'
        // (the inputs, whose lengths are checked above, or their padded copies, zero past
        // them), 16-byte aligned; flags the counter and a flag per tile of these rows, all 0;
        // row0 and m_all checked by StreamRun::launch, whose grid is a block per worker.
        self.launch(&l.launch, move || unsafe {
            entry(
                pa.get(),
                pb.get(),
                po.get(),
                pf.get(),
                whole.m,
                whole.n,
                whole.k,
                row0,
                m_all,
                workers,
            )
        })?;
        assert!(
            flags.iter().all(|&f| f == 0),
            "{s} {shape}: stream-k left its flags set: {flags:?}"
        );
        let out = match p.copy_out {
            true => self.repacked_copy(aligned_floats(&out, lo), whole.n, m, n, m, n)?,
            false => out,
        };
        Ok(unaligned(&out, len))
    }

    /// [`split_k::REDUCE`](kernels_gpu::sgemm::split_k::REDUCE): `out` = the sum of the
    /// `slices` planes of `ws`, in plane order.
    ///
    /// # Safety
    /// `ws` holds `slices` planes of `shape`'s `m · n` outputs, `out` holds `m · n` floats,
    /// and `reduce` is the reduction's launch for them.
    unsafe fn reduce_planes(
        &self, reduce: &Launch, ws: SharedPtr<f32>, out: SharedPtr<f32>, shape: MatmulShape,
        slices: u32,
    ) -> Result<()> {
        let (len, n) = (shape.m * shape.n, shape.n); // fits u32 (MatmulShape)
        // SAFETY: the caller's contract.
        self.launch(reduce, move || unsafe {
            split_k::entry::sgemm_split_k_reduce(ws.get(), out.get(), len, n, slices)
        })
    }

    /// `a · b` by a rung-16 kernel ([`crate::plan::gemv`]) on a device of
    /// [`MULTIPROCESSORS`](Self::MULTIPROCESSORS): the kernel over `g`'s slices of `k` (into
    /// a workspace where there are several, then the reduction, or in the same launch where
    /// the run is fused), as on the GPU, with the bits of
    /// [`Gemv::cpu`](crate::plan::gemv::Gemv::cpu). `a` and `b` are used where they are:
    /// pass 16-byte-aligned slices for the vector paths. A fused run leaves its tile counters
    /// all 0 for the next launch; anything else is a kernel bug, and panics. `E` is f32, or
    /// `half::bf16` for the configurations of BF16 operands ([`Error::ElementMismatch`](crate::Error::ElementMismatch)
    /// otherwise).
    pub fn matmul_gemv<E: crate::plan::gemv::GemvElement>(
        &self, g: crate::plan::gemv::Gemv, a: &[E], b: &[E], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        g.check_element::<E>()?;
        shape.check_inputs(a.len(), b.len())?;
        let len = shape.lens().2;
        if shape.is_trivial() {
            return Ok(vec![0.0; len]);
        }
        let l = g.launch(shape, Self::MULTIPROCESSORS, &self.limits)?;
        let entry = g.config().sim;
        let mut ws = aligned_zeros(l.workspace);
        let mut out = aligned_zeros(len);
        let mut flags = vec![0u64; l.flags];
        // The bytes of a and b, as the entry's operand type reads them (checked above: f32,
        // or BF16 bits).
        let (pa, pb, po) = (
            SharedPtr(a.as_ptr() as *mut u8),
            SharedPtr(b.as_ptr() as *mut u8),
            SharedPtr(out.as_mut_ptr().cast::<f32>()),
        );
        // Null where unused, as the GPU host passes them.
        let pw = SharedPtr(if l.slices > 1 {
            ws.as_mut_ptr().cast::<f32>()
        } else {
            std::ptr::null_mut()
        });
        let pf = SharedPtr(if l.flags > 0 {
            flags.as_mut_ptr()
        } else {
            std::ptr::null_mut()
        });
        let MatmulShape { m, k, n } = shape;
        let slice = l.slice;
        // SAFETY: a and b have the shape's lengths (checked above), out holds m · n floats,
        // ws the slices' planes where there are several, flags a counter per tile (all 0)
        // where the run is fused; the configuration covers the shape with this launch
        // (Gemv::launch).
        self.launch(&l.main, move || unsafe {
            let (o, w, f) = (po.get(), pw.get(), pf.get());
            match entry {
                GemvSim::F32(e) => e(pa.get().cast(), pb.get().cast(), o, w, f, m, n, k, slice),
                GemvSim::Bf16(e) => e(pa.get().cast(), pb.get().cast(), o, w, f, m, n, k, slice),
            }
        })?;
        if let Some(reduce) = &l.reduce {
            // SAFETY: ws holds the slices' planes of m · n floats, out holds m · n.
            unsafe { self.reduce_planes(reduce, pw, po, shape, l.slices) }?;
        }
        assert!(
            flags.iter().all(|&f| f == 0),
            "{g} {shape}: the fused run left its tile counters set: {flags:?}"
        );
        Ok(unaligned(&out, len))
    }

    /// `a · b` split by rows ([`crate::plan::row_split`]): `r.top` on rows `0..r.rows`, then
    /// [`matmul_split_k`](Self::matmul_split_k) on the rest, as on the GPU (and with the same
    /// bits). [`Error::RowSplit`](crate::Error::RowSplit) unless `1 <= r.rows < m`.
    pub fn matmul_rows(
        &self, r: RowSplit, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        if shape.is_trivial() {
            return Ok(vec![0.0; shape.lens().2]);
        }
        let (top, bottom) = r.parts(shape)?;
        let a_rows = r.rows as usize * shape.k as usize;
        let mut out = self.matmul(
            MatmulKernel::Sgemm(r.top),
            TileWidth::Tw16,
            &a[..a_rows],
            b,
            top,
        )?;
        out.extend(self.matmul_split_k(r.bottom, &a[a_rows..], b, bottom)?);
        Ok(out)
    }

    /// `a · b` by `kernel` on repacked operands ([`crate::plan::repack`]): the repack kernel's
    /// copies and the configuration on 16-byte-aligned padded rows, as on the GPU (and with
    /// the same bits, those of `kernel` on `a` and `b`).
    pub fn matmul_repacked(
        &self, kernel: SgemmKernel, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let (m, k, n) = (shape.m, shape.k, shape.n);
        if shape.is_trivial() {
            return Ok(vec![0.0; shape.lens().2]);
        }
        let config = kernel.config();
        if let (Some(spec), Some(entry)) = (&config.strided, config.sim_strided) {
            let plan = repack::Strided::of(config, shape)?;
            let (ap, bp) = self.copied_operands(
                a,
                b,
                shape,
                plan.copy_a.then_some((m, plan.lda())),
                plan.copy_b.then_some((plan.k, plan.ldb)),
            )?;
            let (la, lb) = (
                m as usize * plan.lda() as usize,
                plan.k as usize * plan.ldb as usize,
            );
            let (ap, bp) = (aligned_floats(&ap, la), aligned_floats(&bp, lb));
            let mut out = aligned_zeros(shape.lens().2);
            let (pa, pb, po) = (
                SharedPtr(ap.as_ptr() as *mut f32),
                SharedPtr(bp.as_ptr() as *mut f32),
                SharedPtr(out.as_mut_ptr().cast::<f32>()),
            );
            let (depth, lda, ldb) = (plan.k, plan.lda(), plan.ldb);
            let launch = spec.launch(Extent::Matrix { rows: m, cols: n }, 0);
            // SAFETY: ap holds m rows of lda >= depth floats, bp depth rows of ldb >= n (zero
            // past the operands), out m · n; the launch is the configuration's grid.
            self.launch(&launch, move || unsafe {
                entry(pa.get(), pb.get(), po.get(), m, n, depth, lda, ldb)
            })?;
            return Ok(unaligned(&out, shape.lens().2));
        }
        let p = repack::padded(shape)?;
        let (la, lb, _) = p.lens();
        let ap = self.repacked_copy(a, k, m, k, m, p.k)?;
        let bp = self.repacked_copy(b, n, k, n, p.k, p.n)?;
        let (ap, bp) = (aligned_floats(&ap, la), aligned_floats(&bp, lb));
        let out = self.matmul(MatmulKernel::Sgemm(kernel), TileWidth::Tw16, ap, bp, p)?;
        let out = self.repacked_copy(&out, p.n, m, n, m, n)?;
        Ok(unaligned(&out, m as usize * n as usize))
    }

    /// `a · b` by `run` on operands padded to whole tiles ([`repack::tiles`]), as on the GPU
    /// ([`crate::gpu::Gpu::matmul_tiles_device`]): the repack kernel's copies of the operands
    /// its padding copies, the run on the padded product, and the repack kernel's copy of the
    /// output's first `m` rows of `n`, with the GPU's bits. Where the padding would change
    /// nothing, `run` itself.
    pub fn matmul_tiles(
        &self, run: repack::TiledRun, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        if shape.is_trivial() {
            return Ok(vec![0.0; shape.lens().2]);
        }
        let (m, n) = (shape.m, shape.n);
        let inner = |a: &[f32], b: &[f32], shape: MatmulShape| match run {
            repack::TiledRun::Config(kernel) => {
                self.matmul(MatmulKernel::Sgemm(kernel), TileWidth::Tw16, a, b, shape)
            }
            repack::TiledRun::Split(s) => self.matmul_split_k(s, a, b, shape),
        };
        let Some(t) = run.tiles(shape)? else {
            let (ap, bp) = (aligned_copy(a), aligned_copy(b));
            let (la, lb, _) = shape.lens();
            return inner(aligned_floats(&ap, la), aligned_floats(&bp, lb), shape);
        };
        let p = t.shape;
        let (la, lb, _) = p.lens();
        let (ap, bp) = self.copied_operands(
            a,
            b,
            shape,
            t.copy_a.then_some((p.m, p.k)),
            t.copy_b.then_some((p.k, p.n)),
        )?;
        let out = inner(aligned_floats(&ap, la), aligned_floats(&bp, lb), p)?;
        if !t.copy_out {
            return Ok(out);
        }
        let out = self.repacked_copy(&out, p.n, m, n, m, n)?;
        Ok(unaligned(&out, m as usize * n as usize))
    }

    /// `shape`'s operands in 16-byte aligned storage: `a` repacked by the repack kernel into
    /// `a_to`'s rows × columns (zero-padded) where given, else copied as it is; `b` likewise.
    fn copied_operands(
        &self, a: &[f32], b: &[f32], shape: MatmulShape, a_to: Option<(u32, u32)>,
        b_to: Option<(u32, u32)>,
    ) -> Result<(Vec<Aligned>, Vec<Aligned>)> {
        let (m, k, n) = (shape.m, shape.k, shape.n);
        let ap = match a_to {
            Some((rows, cols)) => self.repacked_copy(a, k, m, k, rows, cols)?,
            None => aligned_copy(a),
        };
        let bp = match b_to {
            Some((rows, cols)) => self.repacked_copy(b, n, k, n, rows, cols)?,
            None => aligned_copy(b),
        };
        Ok((ap, bp))
    }

    /// The repack kernel's copy of the top-left `src_rows × src_cols` of `src` (rows `ld`
    /// apart) into a dense, 16-byte aligned `rows × cols`, zero past it.
    fn repacked_copy(
        &self, src: &[f32], ld: u32, src_rows: u32, src_cols: u32, rows: u32, cols: u32,
    ) -> Result<Vec<Aligned>> {
        assert!(
            src.len() >= (src_rows as usize).saturating_sub(1) * ld as usize + src_cols as usize
                && src_cols <= ld,
            "repacked_copy: {src_rows} rows of {ld} from {} floats",
            src.len()
        );
        let mut dst = aligned_zeros(rows as usize * cols as usize);
        let (ps, pd) = (
            SharedPtr(src.as_ptr() as *mut f32),
            SharedPtr(dst.as_mut_ptr().cast::<f32>()),
        );
        // SAFETY: src holds src_rows rows of ld >= src_cols floats (asserted above), dst
        // rows · cols.
        self.launch(&repack::launch(&REPACK, rows, cols), move || unsafe {
            repack_entry::sgemm_repack(ps.get(), ld, src_rows, src_cols, pd.get(), rows, cols)
        })?;
        Ok(dst)
    }

    /// Runs `kernel` for every thread of `launch`: grid, block, dynamic shared bytes.
    ///
    /// The simulator checks the launch against [`Simulator::limits`] as a GPU would: a
    /// launch beyond them is [`Error::Launch`](crate::Error::Launch), the same error as on a
    /// GPU; what it finds wrong inside the kernel is [`Error::Simulator`](crate::Error::Simulator).
    pub fn launch(&self, launch: &Launch, kernel: impl Fn() + Sync) -> Result<()> {
        Ok(sim::launch(launch, &self.limits, kernel)?)
    }
}

impl Simulator {
    /// `out = a · b` by the BF16 GEMM `config` (rung 13) on BF16 bits ([`crate::plan::bf16`]),
    /// `a` `m × k` and `b` `k × n` row-major. The operands are copied into 16-byte-aligned
    /// storage first, as device allocations are, so the blocks take the same paths as on a
    /// GPU.
    pub fn gemm_bf16(
        &self, config: &crate::plan::bf16::Bf16Config, a: &[u16], b: &[u16], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let mut out = vec![0.0f32; shape.lens().2];
        if shape.is_trivial() {
            return Ok(out);
        }
        let launch = crate::plan::bf16::launch(config, shape, &self.limits)?;
        let (a, b) = (aligned_copy(a), aligned_copy(b));
        let (pa, pb, o) = (
            SharedPtr(a.as_ptr().cast::<u16>() as *mut u16),
            SharedPtr(b.as_ptr().cast::<u16>() as *mut u16),
            SharedPtr(out.as_mut_ptr()),
        );
        let MatmulShape { m, k, n } = shape;
        let entry = config.sim;
        let run = move || {
            let (a, b) = (pa.get().cast_const(), pb.get().cast_const());
            // SAFETY: the copies hold the shape's lengths (checked above), the shape fits u32
            // indices (MatmulShape), and `launch` is the configuration's.
            unsafe { entry(a, b, o.get(), m, n, k) }
        };
        self.launch(&launch, run)?;
        Ok(out)
    }
}

impl Simulator {
    /// `out = a · b` by rung 14's or 15's `config` ([`crate::plan::packed`]): `b` packed
    /// transposed (rounded to TF32, depth padded to a multiple of 4) and, where
    /// [`packs_a`](crate::plan::packed::packs_a) says so, `a` packed by the GPU's packing kernels,
    /// then the product: rung 14's `wgmma` with each thread's accumulators
    /// read through the descriptors and the 128-byte swizzle as the hardware reads them,
    /// rung 15's `ldmatrix` and `mma.sync` by their PTX fragment layouts. Rung 14's
    /// configurations, and some of rung 15's, need a Hopper's shared memory: run them in a
    /// simulator with [`Limits::HOPPER`](kernels_gpu::nvptx_device::launch::Limits::HOPPER).
    pub fn matmul_packed(
        &self, config: &crate::plan::packed::PackedConfig, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        use crate::plan::packed::packs_a;
        shape.check_inputs(a.len(), b.len())?;
        let mut out = vec![0.0f32; shape.lens().2];
        if shape.is_trivial() {
            return Ok(out);
        }
        let launch = crate::plan::packed::launch(config, shape, &self.limits)?;
        let MatmulShape { m, k, n } = shape;
        let kp = crate::plan::packed::packed_depth(k);
        let (mut ap, mut bp) = (
            self.pack_a(a, shape, packs_a(config, k), Packing::Rounded)?,
            self.pack_b(b, shape, Packing::Rounded)?,
        );
        let (pa, pb) = (
            SharedPtr(ap.as_mut_ptr().cast::<f32>()),
            SharedPtr(bp.as_mut_ptr().cast::<f32>()),
        );
        let o = SharedPtr(out.as_mut_ptr());
        let entry = config.sim;
        // SAFETY: the packed operands hold m and n rows of kp (a multiple of 4), 16-byte
        // aligned; `out` m × n; `launch` is the configuration's.
        self.launch(&launch, move || unsafe {
            entry(pa.get(), pb.get(), o.get(), m, n, kp)
        })?;
        Ok(out)
    }

    /// A TF32 product's `a` (`shape`'s, its length checked by the caller), by the GPU's
    /// packing kernels ([`crate::plan::packed`]): `m` rows of the packed depth, rounded or
    /// not as `packing` says, where `packs_a`, else a 16-byte-aligned copy of `a` as it is,
    /// as a device allocation is aligned.
    fn pack_a(
        &self, a: &[f32], shape: MatmulShape, packs_a: bool, packing: Packing,
    ) -> Result<Vec<Aligned>> {
        use crate::plan::packed::{pack_a_launch, packed_depth};
        let MatmulShape { m, k, .. } = shape;
        let kp = packed_depth(k);
        let mut ap = aligned_zeros(if packs_a {
            m as usize * kp as usize
        } else {
            a.len()
        });
        let sa = SharedPtr(a.as_ptr() as *mut f32);
        let pa = SharedPtr(ap.as_mut_ptr().cast::<f32>());
        if packs_a {
            // SAFETY: `a` holds m rows of k (the caller checked), `ap` m rows of kp >= k.
            self.launch(&pack_a_launch(shape, packing), move || unsafe {
                repack_twin(packing)(sa.get(), k, m, k, pa.get(), m, kp)
            })?;
        } else {
            // SAFETY: `ap` holds a.len() floats (aligned_zeros), apart from `a`.
            unsafe { core::ptr::copy_nonoverlapping(a.as_ptr(), pa.get(), a.len()) };
        }
        Ok(ap)
    }

    /// A TF32 product's `bᵀ`, as [`pack_a`](Self::pack_a) packs `a`: `n` rows of the packed
    /// depth.
    fn pack_b(&self, b: &[f32], shape: MatmulShape, packing: Packing) -> Result<Vec<Aligned>> {
        use crate::plan::packed::{pack_b_launch, packed_depth};
        let MatmulShape { k, n, .. } = shape;
        let kp = packed_depth(k);
        let mut bp = aligned_zeros(n as usize * kp as usize);
        let sb = SharedPtr(b.as_ptr() as *mut f32);
        let pb = SharedPtr(bp.as_mut_ptr().cast::<f32>());
        let launch = pack_b_launch(shape, &self.limits, packing)?;
        // SAFETY: `b` holds k rows of n, `bp` n rows of kp.
        self.launch(&launch, move || unsafe {
            transpose_twin(packing)(sb.get(), k, n, pb.get(), kp)
        })?;
        Ok(bp)
    }

    /// `a · b` by rung 17's TF32 `run` on f32 matrices, as
    /// [`Gpu::matmul_tf32_ws`](crate::gpu::Gpu::matmul_tf32_ws) runs it: `b` packed by the
    /// GPU's packing kernel (transposed, unrounded, depth padded to a multiple of 4), or, for
    /// a configuration that reads it as it lies, copied into rows of `n` rounded up to 4
    /// where they are not whole 16-byte units; `a` copied (padded) only where
    /// [`tf32_packs_a`](crate::plan::half::tf32_packs_a) says; then the product as
    /// [`gemm_half`](Self::gemm_half) runs a 16-bit one, the copies into shared memory
    /// rounding both operands to TF32 (ties to even) as the GPU's TF32 maps do. Needs
    /// [`Limits::HOPPER`]'s shared memory.
    pub fn matmul_tf32_ws(
        &self, run: HalfRun, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        crate::plan::half::check_element(run, crate::plan::half::Input::Tf32)?;
        if shape.is_trivial() {
            return Ok(vec![0.0f32; shape.lens().2]);
        }
        let packs_a = crate::plan::half::tf32_packs_a(shape.k);
        let ap = self.pack_a(a, shape, packs_a, Packing::Plain)?;
        if !run.config.row_major_b {
            let bp = self.pack_b(b, shape, Packing::Plain)?;
            return self.ws_product(run, &ap, &bp, shape);
        }
        // `b` as it lies, rows copied (by the same entry as `a`) into rows of `n` rounded up
        // to 4 where they are not whole 16-byte units, as the GPU does.
        let MatmulShape { k, n, .. } = shape;
        let n4 = n.next_multiple_of(4);
        let mut rows = aligned_zeros(k as usize * n4 as usize);
        if n4 == n {
            // SAFETY: `rows` holds b.len() floats (aligned_zeros), apart from `b`.
            unsafe {
                core::ptr::copy_nonoverlapping(b.as_ptr(), rows.as_mut_ptr().cast(), b.len())
            };
        } else {
            let (sb, pb) = (
                SharedPtr(b.as_ptr() as *mut f32),
                SharedPtr(rows.as_mut_ptr().cast::<f32>()),
            );
            let launch = repack::launch(Packing::Plain.repack(), k, n4);
            // SAFETY: `b` holds k rows of n (checked), `rows` k rows of n4 >= n.
            self.launch(&launch, move || unsafe {
                repack_twin(Packing::Plain)(sb.get(), n, k, n, pb.get(), k, n4)
            })?;
        }
        self.ws_product(run, &ap, &rows, shape)
    }

    /// `a · b` by rung 17's `run` on 16-bit matrices ([`crate::plan::half`]), as
    /// [`Gpu::gemm_half_run_device`](crate::gpu::Gpu::gemm_half_run_device) runs it: `k`
    /// and `n` padded to multiples of 8 where they are not, the persistent grid of
    /// [`MULTIPROCESSORS`](Self::MULTIPROCESSORS) blocks, split slices into planes added in
    /// order. The producer's copies, the ring's barriers, `setmaxnreg` and `wgmma` run with
    /// the device API's simulator semantics: a wait nothing completes is a deadlock error,
    /// an operand out of its layout a wrong product. Needs [`Limits::HOPPER`]'s shared
    /// memory.
    pub fn gemm_half<T: HalfFloat>(
        &self, run: HalfRun, a: &[T], b: &[T], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let bits = |x: &[T]| -> Vec<u16> { bytemuck::cast_slice(x).to_vec() };
        self.half_product(run, T::HALF, &bits(a), &bits(b), shape)
    }

    /// [`gemm_half`](Self::gemm_half) with its outputs rounded to `T` (to nearest even) by
    /// the GPU's conversion entry, as
    /// [`Gpu::gemm_half_auto_to_half`](crate::gpu::Gpu::gemm_half_auto_to_half) returns
    /// them (for `run`).
    pub fn gemm_half_to_half<T: HalfFloat>(
        &self, run: HalfRun, a: &[T], b: &[T], shape: MatmulShape,
    ) -> Result<Vec<T>> {
        let out = self.gemm_half(run, a, b, shape)?;
        let MatmulShape { m, n, .. } = shape;
        let mut bits = vec![0u16; out.len()];
        let (src, dst) = (
            SharedPtr(out.as_ptr() as *mut f32),
            SharedPtr(bits.as_mut_ptr()),
        );
        let convert = match T::HALF {
            Half::Bf16 => repack_entry::convert_bf16,
            Half::F16 => repack_entry::convert_f16,
        };
        let launch = repack::launch(crate::plan::half::conversion(T::HALF), m, n);
        // SAFETY: `out` holds m rows of n floats, `bits` m rows of n 2-byte elements.
        self.launch(&launch, move || unsafe {
            convert(src.get(), n, m, n, dst.get(), m, n)
        })?;
        Ok(bytemuck::cast_slice(&bits).to_vec())
    }

    /// [`gemm_half`](Self::gemm_half) of f32 matrices rounded to `bf16` first, as
    /// [`Gpu::matmul_half_from_f32`](crate::gpu::Gpu::matmul_half_from_f32) does.
    pub fn matmul_half_from_f32(
        &self, run: HalfRun, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let round = |x: &[f32]| -> Vec<u16> {
            x.iter()
                .map(|&v| kernels_gpu::nvptx_device::mma::to_bf16(v))
                .collect()
        };
        self.half_product(run, Half::Bf16, &round(a), &round(b), shape)
    }

    /// The product of 16-bit bits `a` and `b` of element type `half` by `run`.
    fn half_product(
        &self, run: HalfRun, half: Half, a: &[u16], b: &[u16], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        let input = match half {
            Half::Bf16 => Input::Bf16,
            Half::F16 => Input::F16,
        };
        crate::plan::half::check_element(run, input)?;
        let (m, n, k) = (shape.m, shape.n, shape.k);
        if shape.is_trivial() {
            return Ok(vec![0.0f32; shape.lens().2]);
        }
        let (k8, n8) = (k.next_multiple_of(8), n.next_multiple_of(8));
        let pad = |x: &[u16], rows: u32, cols: u32, to: u32| -> Vec<Aligned> {
            let mut padded = vec![0u16; rows as usize * to as usize];
            for r in 0..rows as usize {
                let row = &x[r * cols as usize..(r + 1) * cols as usize];
                padded[r * to as usize..][..cols as usize].copy_from_slice(row);
            }
            aligned_copy(&padded)
        };
        self.ws_product(run, &pad(a, m, k, k8), &pad(b, k, n, n8), shape)
    }

    /// The product by rung 17's `run` of the operands whose elements `ap` and `bp` hold as
    /// its entry reads them (rows of whole 16 bytes; `b` transposed for TF32): the persistent
    /// grid of [`MULTIPROCESSORS`](Self::MULTIPROCESSORS) blocks, split slices into planes
    /// added in order.
    fn ws_product(
        &self, run: HalfRun, ap: &[Aligned], bp: &[Aligned], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        let (m, n, k) = (shape.m, shape.n, shape.k);
        let mut out = vec![0.0f32; shape.lens().2];
        let launch = crate::plan::half::launch(run, shape, Self::MULTIPROCESSORS, &self.limits)?;
        let planes = run.workspace_floats(shape);
        let mut ws = vec![0.0f32; planes.max(1)];
        let splits = run.splits.max(1);
        let target = if splits > 1 {
            SharedPtr(ws.as_mut_ptr())
        } else {
            SharedPtr(out.as_mut_ptr())
        };
        let (pa, pb) = (
            SharedPtr(ap.as_ptr() as *mut u8),
            SharedPtr(bp.as_ptr() as *mut u8),
        );
        let entry = run.config.sim;
        // SAFETY: `ap` and `bp` hold the operands' elements as the entry reads them, 16-byte
        // aligned, which it maps as it does on a GPU (the caller's contract); the target
        // holds `splits` planes of m · n floats; `launch` is the run's.
        self.launch(&launch, move || unsafe {
            entry(pa.get(), pb.get(), target.get(), m, n, k, splits)
        })?;
        if splits > 1 {
            let (w, o) = (SharedPtr(ws.as_mut_ptr()), SharedPtr(out.as_mut_ptr()));
            let reduce = crate::plan::split_k::reduce_launch(m * n);
            // SAFETY: `ws` holds splits planes of m · n floats, `out` m · n.
            self.launch(&reduce, move || unsafe {
                split_k::entry::sgemm_split_k_reduce(w.get(), o.get(), m * n, n, splits)
            })?;
        }
        Ok(out)
    }

    /// The multiprocessors [`GemmKernel::Auto`] assumes in the simulator: two, so the
    /// 128 × 128 tiles run wherever they make two blocks and the 64 × 64 ones elsewhere (the
    /// tests' small shapes take both).
    pub const MULTIPROCESSORS: u32 = 2;
}

impl Simulator {
    /// One pass of `kernel` over `input[..n]`, one partial per block.
    pub(crate) fn reduce_pass(
        &self, kernel: ReduceKernel, input: *const f32, n: u32,
    ) -> Result<Vec<f32>> {
        let launch = kernel.launch(n);
        let mut partials = vec![0.0f32; launch.grid.x as usize];
        let (i, p) = (
            SharedPtr(input as *mut f32),
            SharedPtr(partials.as_mut_ptr()),
        );
        let entry = kernel.config().sim;
        // SAFETY: `input` holds n floats in 16-byte-aligned storage, `partials` one per block.
        self.launch(&launch, move || unsafe { entry(i.get(), n, p.get()) })?;
        Ok(partials)
    }
}

impl Simulator {
    /// `a · b` as zip then reduce, in the simulator: the intermediate, then its row sums.
    pub fn zip_reduce_matmul(&self, a: &[f32], b: &[f32], shape: MatmulShape) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let len = intermediate_len(shape)?;
        let outputs = shape.lens().2;
        if len == 0 {
            return Ok(vec![0.0; outputs]);
        }
        let mut tmp = vec![0.0f32; len as usize];
        let (pa, pb, pt) = (
            SharedPtr(a.as_ptr() as *mut f32),
            SharedPtr(b.as_ptr() as *mut f32),
            SharedPtr(tmp.as_mut_ptr()),
        );
        let MatmulShape { m, k, n } = shape;
        // SAFETY: a and b have the shape's lengths (checked above), tmp holds m·n·k floats,
        // which fits u32; the launch covers them.
        self.launch(&zip_launch(len), move || unsafe {
            kernels_gpu::fusion::entry::zip_mul(pa.get(), pb.get(), pt.get(), m, n, k)
        })?;
        self.reduce_axis(AxisOp::Sum, Axis::Rows, &tmp, outputs, k as usize)
    }
}

impl Simulator {
    /// One column pass of `op` over the row-major `rows × cols` matrix `x` (at least
    /// `rows · cols` floats), as `plan` splits it, into `plan.segments` rows of `cols`
    /// outputs scaled by `scale`: the launch a column reduction makes for each of its passes
    /// (the sharded column reductions run each device's part of the first pass with it).
    pub(crate) fn cols_pass(
        &self, op: AxisOp, x: &[f32], rows: u32, cols: u32, plan: &ColumnPlan, scale: f32,
    ) -> Result<Vec<f32>> {
        let outputs = plan.segments as usize * cols as usize;
        let elements = (rows as usize * cols as usize).min(x.len());
        let mut io = AlignedIo::new(&x[..elements], outputs);
        let (px, po) = io.ptrs();
        let entry = axis::cols_config(op).sim;
        let per = plan.rows_per_segment;
        // SAFETY: x holds rows · cols floats, out segments · cols, both 16-byte aligned;
        // per · segments >= rows (the plan's).
        self.launch(&AxisShape::cols_launch(op, plan), move || unsafe {
            entry(px.get(), rows, cols, per, scale, po.get())
        })?;
        Ok(io.output())
    }
}

impl Backend for Simulator {
    /// `call` by `kernel`, on the slices where they are (pass 16-byte-aligned slices for the
    /// vector and `cp.async` paths, as device allocations are).
    fn gemm(
        &self, call: &Gemm, kernel: GemmKernel, a: &[f32], b: &[f32], c: &mut [f32],
    ) -> Result<()> {
        let p = call.check(a.len(), b.len(), c.len())?;
        if p.is_empty() {
            return Ok(());
        }
        let (a, b) = p.operands(a, b);
        let config = match kernel.resolve(&p, Self::MULTIPROCESSORS)? {
            Resolved::Matmul(kernel, tw, shape) => {
                let out = self.matmul(kernel, tw, a, b, shape)?;
                c.copy_from_slice(&out); // plain: c holds exactly m · n
                return Ok(());
            }
            Resolved::Blas(config) => config,
            Resolved::ScaleC => {
                let Some(launch) = p.scale_c_launch(&self.limits)? else {
                    return Ok(());
                };
                let pc = SharedPtr(c.as_mut_ptr());
                // SAFETY: Gemm::check found every output inside `c`, m·n within u32 and the
                // outputs disjoint; the problem is not empty, so n >= 1.
                return self.launch(&launch, move || unsafe {
                    blas::entry::sgemm_blas_scale_c(
                        pc.get(),
                        p.m,
                        p.n,
                        p.ldc,
                        p.stride_c,
                        p.batch,
                        p.beta,
                    )
                });
            }
        };
        let entry = config.sim;
        for part in p.launches(config, &self.limits)? {
            let (oa, ob, oc) = p.offsets(part.first);
            // Inside the slices: the problem has products, so every matrix spans elements.
            let (pa, pb, pc) = (
                SharedPtr(a[oa..].as_ptr() as *mut f32),
                SharedPtr(b[ob..].as_ptr() as *mut f32),
                SharedPtr(c[oc..].as_mut_ptr()),
            );
            // SAFETY: Gemm::check found every product's matrices inside the slices, their
            // offsets within u32 and the outputs disjoint, and the pointers start at this
            // launch's first product; `c` is borrowed mutably, so it is neither `a` nor
            // `b`, and the kernels write only its outputs.
            self.launch(&part.launch, move || unsafe {
                entry(
                    pa.get(),
                    pb.get(),
                    pc.get(),
                    p.m,
                    p.n,
                    p.k,
                    p.lda,
                    p.ldb,
                    p.ldc,
                    p.stride_a,
                    p.stride_b,
                    p.stride_c,
                    p.alpha,
                    p.beta,
                )
            })?;
        }
        Ok(())
    }

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
        let outputs = shape.outputs() as usize;
        if outputs == 0 {
            return Ok(vec![]);
        }
        let launch = kernel.launch(shape);
        // The kernels load and store 16 bytes at a time, as device allocations allow.
        let mut io = AlignedIo::new(a, outputs);
        let (pa, po) = io.ptrs();
        let SlidingShape { n, window } = shape;
        match kernel {
            SlidingKernel::Naive | SlidingKernel::Shared => {
                let entry = SLIDING[kernel as usize].sim;
                // SAFETY: a has n floats, 16-byte aligned; out has n - window + 1, 16-byte
                // aligned; 1 <= window <= n.
                self.launch(&launch, move || unsafe {
                    entry(pa.get(), n, window, po.get())
                })?;
            }
            SlidingKernel::Scan => {
                // Zeroed where the launch reads it, as on the GPU; elsewhere all ones, which
                // a launch that did read it (a ticket, a head) would not survive unnoticed.
                let fill = if sliding::scan_reads_state(window) {
                    0
                } else {
                    u64::MAX
                };
                let mut state = vec![fill; sliding::scan_state_words(n)];
                let ps = SharedPtr(state.as_mut_ptr());
                let entry = SLIDING_SCAN.sim;
                // SAFETY: as above, and `state` is the launch's scratch state, zeroed where it
                // is read.
                self.launch(&launch, move || unsafe {
                    entry(pa.get(), n, window, po.get(), ps.get())
                })?;
            }
        }
        Ok(io.output())
    }

    /// `op` along `axis` of `x`, by the same launches as on the GPU.
    fn reduce_axis(
        &self, op: AxisOp, axis: Axis, x: &[f32], rows: usize, cols: usize,
    ) -> Result<Vec<f32>> {
        let (shape, outputs) = AxisShape::checked(op, axis, x.len(), rows, cols)?;
        let AxisShape { rows, cols } = shape;
        if outputs == 0 {
            return Ok(vec![]);
        }
        if axis == Axis::Cols {
            let plan = shape.cols_plan();
            let scale = op.scale(rows);
            if plan.segments == 1 {
                return self.cols_pass(op, x, rows, cols, &plan, scale);
            }
            let partials = self.cols_pass(op, x, rows, cols, &plan, 1.0)?;
            let finish = shape.finish_plan(&plan);
            return self.cols_pass(op, &partials, plan.segments, cols, &finish, scale);
        }
        let mut io = AlignedIo::new(x, outputs);
        let (px, po) = io.ptrs();
        let entry = axis::rows_config(op).sim;
        let scale = op.scale(cols);
        // SAFETY: x holds rows · cols floats, out rows, both 16-byte aligned; the launch is
        // the kernel's for this shape.
        self.launch(&shape.rows_launch(op), move || unsafe {
            entry(px.get(), rows, cols, scale, po.get())
        })?;
        Ok(io.output())
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
        let run = move || {
            let (m, n) = (pm.get().cast_const(), pn.get().cast_const());
            // SAFETY: the buffers have the shape's lengths (checked above), the shape fits u32
            // indices (MatmulShape), and `launch` is the kernel's launch shape. (a, b, out, m,
            // n, k), as the lecture's (m, n, out, h, w, k).
            unsafe { entry(m, n, o.get(), h, w, k) }
        };
        self.launch(&launch, run)?;
        Ok(out)
    }
}

/// The simulator's twin of `packing`'s [`transpose`](Packing::transpose) entry.
fn transpose_twin(packing: Packing) -> unsafe fn(*const f32, u32, u32, *mut f32, u32) {
    match packing {
        Packing::Rounded => repack_entry::sgemm_transpose_tf32,
        Packing::Plain => repack_entry::sgemm_transpose,
    }
}

/// The simulator's twin of `packing`'s [`repack`](Packing::repack) entry.
fn repack_twin(packing: Packing) -> unsafe fn(*const f32, u32, u32, u32, *mut f32, u32, u32) {
    match packing {
        Packing::Rounded => repack_entry::sgemm_repack_tf32,
        Packing::Plain => repack_entry::sgemm_repack,
    }
}
