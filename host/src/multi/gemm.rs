//! `C = A·B` over several GPUs: `A` and `C` split by rows ([`crate::plan::shard::split`] at
//! multiples of the kernel's block rows), `B` sent to every device ([`super::peer`]), each device running
//! on its rows the kernel one GPU runs on the whole product, and `C`'s rows gathered on the
//! root or left where they were computed.
//!
//! **Bits.** The autotuned SGEMM is pinned once, on the root, for the whole shape
//! ([`autotune::choose`]: what [`Gpu::matmul_device`] runs for it), and each device runs that
//! choice for its rows ([`Tuned::for_rows`]): the same configuration over the same block
//! rows, so every element of `C` has the bits of one GPU's product, in every precision
//! (FP32, TF32, BF16). A named kernel runs as named.
//!
//! **Why rows and a broadcast.** Splitting `A` by rows leaves each output's summation as it
//! is and moves `B` whole; a 2-D split would move fewer bytes only for four devices and
//! more, square products, with the split-k and row-split choices to re-derive for column
//! blocks.
//!
//! **Transfers.** Every byte moves by the copy engines ([`super::peer`]), so the root's
//! multiprocessors compute its rows undisturbed. A device's copies to others run one after
//! another whatever streams they are queued on (measured on 4× H200), so each device
//! queues its own on one stream, in the order they are needed: the root sends each
//! device's first rows of `A`, then `B` panel by panel, then the other rows of `A`. Each
//! panel is cut into pieces owned by the other devices in turn; the root sends a piece to
//! its owner, which passes it on as it arrives (the root's links carry `B` once, as NCCL's
//! pipelined broadcast does). Each device sends each launch's rows of `C` back once
//! computed.
//!
//! **Overlap.** The root starts its rows at once. With a plain configuration, the other
//! devices receive `B` in column panels ([`crate::plan::shard::panels`]) and run their first
//! wave of rows over each panel as it arrives, then the rest of their rows over all of `B`,
//! put back together on the device ([`crate::plan::shard::tasks`]); otherwise their rows
//! run in two steps once all of `B` is there. A device's launches alternate between two
//! streams, so that one launch's last, partly filled wave overlaps the next launch. They
//! start later than the root, so the split gives the root more rows: after each product,
//! the time each device waited, computed and sent back is measured (CUDA events on its own
//! streams), and the next product of the same shape and kernel is split so that all would
//! end together ([`crate::plan::shard::balance`]). The split never changes the bits. The
//! product's buffers are kept for the next one with the same split.

use super::{Gpus, Rows, Shard, Shards, address, lock, peer};
use crate::gpu::Gpu;
use crate::gpu::autotune::{self, Tuned};
use crate::plan::kernels::MatmulKernel;
use crate::plan::shard::{self, PartTiming, Task};
use crate::problem::error::{DriverContext, Error, Result};
use crate::problem::shape::MatmulShape;
use crate::problem::tile::TileWidth;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

/// The kernel a multi-GPU product runs on every device: a named one, or the autotuner's
/// choice for the whole shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pinned {
    Kernel(MatmulKernel, TileWidth),
    Tuned(Tuned),
}

impl Pinned {
    fn name(self) -> String {
        match self {
            Self::Kernel(k, tw) if k.is_tiled() => format!("{}-tw{}", k.name(), tw.get()),
            Self::Kernel(k, _) => k.name().to_owned(),
            Self::Tuned(t) => t.name(),
        }
    }

    /// The choice for rows `rows` of the product of `m` rows alone ([`Tuned::for_rows`]).
    fn for_rows(self, rows: &Range<usize>, m: usize) -> Self {
        match self {
            Self::Tuned(t) => Self::Tuned(t.for_rows(rows.start as u32..rows.end as u32, m as u32)),
            other => other,
        }
    }

    /// The rows its blocks compute ([`MatmulKernel::block_rows`], [`Tuned::block_rows`]):
    /// the split's unit.
    fn block_rows(self) -> usize {
        match self {
            Self::Kernel(k, tw) => k.block_rows(tw) as usize,
            Self::Tuned(t) => t.block_rows() as usize,
        }
    }

    /// The rows one wave of its blocks covers on `gpu` for a part of shape `shape` (every
    /// block of that many rows across `n` runs at once): the plain autotuned configurations'
    /// (the driver's occupancy), else [`block_rows`](Self::block_rows).
    fn wave_rows(self, gpu: &Gpu, shape: MatmulShape) -> usize {
        let Self::Tuned(Tuned::Config(k)) = self else {
            return self.block_rows();
        };
        let g = k.config().geometry;
        let Ok(blocks) = gpu.blocks_per_sm(MatmulKernel::Sgemm(k), shape) else {
            return self.block_rows();
        };
        let per_wave = (blocks * gpu.multiprocessors()) / shape.n.div_ceil(g.bn).max(1);
        (per_wave.max(1) * g.bm) as usize
    }

    /// The columns its blocks compute, where a product may run over panels of `b`'s
    /// columns ([`Tuned::block_cols`]; a named kernel runs as named, over all of them).
    fn block_cols(self) -> Option<usize> {
        match self {
            Self::Tuned(t) => t.block_cols().map(|c| c as usize),
            Self::Kernel(..) => None,
        }
    }

    fn entries(self) -> Vec<&'static str> {
        match self {
            Self::Kernel(k, tw) => vec![k.entry(tw)],
            Self::Tuned(t) => t.entries(),
        }
    }

    fn run(
        self, gpu: &Gpu, a: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        match self {
            Self::Kernel(k, tw) => gpu.matmul_device(k, tw, a, b, out, shape),
            Self::Tuned(t) => t.run(gpu, a, b, out, shape),
        }
    }
}

/// One device's part of a product: its rows, the kernel it ran on them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartRun {
    /// The device (an index into the [`Gpus`]).
    pub device: usize,
    /// Its rows of `A` and `C`.
    pub rows: Range<usize>,
    /// The kernel on its rows ([`Tuned::for_rows`] of the pinned one).
    pub kernel: String,
}

/// What a multi-GPU product ran, and (once it is done) how long each part took.
pub struct GemmRun {
    /// The kernel pinned for the whole shape.
    pub kernel: String,
    pub parts: Vec<PartRun>,
    marks: Arc<Vec<Option<Marks>>>,
}

impl GemmRun {
    /// Each part's milliseconds waiting for its operands, computing and sending its rows
    /// back (the root's: copying them into place), measured by CUDA events on its device;
    /// waits for the product. A device without rows has zeros.
    pub fn timings(&self) -> Result<Vec<PartTiming>> {
        timings(&self.parts, &self.marks)
    }
}

/// Events on one device around its part: `start` before anything of the product is queued
/// there, `ready` once its operands have arrived, `computed` after its kernels, `gathered`
/// once its rows of `C` have left (or been copied into place).
struct Marks {
    start: CudaEvent,
    ready: CudaEvent,
    computed: CudaEvent,
    gathered: CudaEvent,
}

fn mark(stream: &CudaStream) -> Result<CudaEvent> {
    stream
        .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .call("cuEventRecord")
}

fn timings(parts: &[PartRun], marks: &[Option<Marks>]) -> Result<Vec<PartTiming>> {
    let ms = |a: &CudaEvent, b: &CudaEvent| -> Result<f64> {
        Ok(f64::from(a.elapsed_ms(b).call("cuEventElapsedTime")?))
    };
    parts
        .iter()
        .zip(marks)
        .map(|(p, m)| {
            Ok(match m {
                None => PartTiming {
                    rows: 0,
                    wait_ms: 0.0,
                    compute_ms: 0.0,
                    gather_ms: 0.0,
                },
                Some(m) => PartTiming {
                    rows: p.rows.len(),
                    wait_ms: ms(&m.start, &m.ready)?,
                    compute_ms: ms(&m.ready, &m.computed)?,
                    gather_ms: ms(&m.computed, &m.gathered)?,
                },
            })
        })
        .collect()
}

/// Which product a split is for: the shape, the pinned kernel, whether `A` starts on the
/// root (sent from there) or already split, and whether `C` is gathered on the root.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    shape: (u32, u32, u32),
    kernel: String,
    from_root: bool,
    gathered: bool,
}

/// The last product queued: which, its parts, their marks.
type Last = (Key, Vec<PartRun>, Arc<Vec<Option<Marks>>>);

/// The last split of each product and the marks of the last one queued
/// ([the module's notes](self)).
#[derive(Default)]
pub(super) struct Balance {
    weights: HashMap<Key, Vec<f64>>,
    last: Option<Last>,
}

impl Gpus {
    /// `out = a · b` with `a`, `b` and `out` on the root (device 0), by `kernel` (its tile
    /// width `tw` where it has one) on every device ([the module](self)): rows of `out`
    /// bit-identical to [`Gpu::matmul_device`]'s. Queued: [`Gpus::synchronize`] waits. The
    /// errors of `Gpu::matmul_device`, and [`Error::WrongDevice`] for a buffer elsewhere.
    pub fn matmul_device(
        &self, kernel: MatmulKernel, tw: TileWidth, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<GemmRun> {
        shape.check_buffers(a.len(), b.len(), out.len())?;
        self.check_on("out", out, 0)?;
        if shape.is_trivial() {
            let root = self.gpu(0);
            crate::gpu::zero_if_trivial(root.stream(), kernel.entry(tw), a, b, out, shape)?;
            return Ok(self.no_run(kernel, tw));
        }
        let pinned = self.pin_on_root(kernel, tw, a, b, out, shape)?;
        let (_, run) = self.product(pinned, Rows::Root(a), b, shape, Some(out))?;
        Ok(run)
    }

    /// [`matmul_device`](Self::matmul_device) with the rows of the product left on the
    /// devices that computed them.
    pub fn matmul_sharded(
        &self, kernel: MatmulKernel, tw: TileWidth, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<(Shards, GemmRun)> {
        shape.check_inputs(a.len(), b.len())?;
        if shape.is_trivial() {
            let layout = shard::even(shape.m as usize, self.len(), 1);
            let zeros = self.zeros_rows(shape.m as usize, shape.n as usize, &layout)?;
            return Ok((zeros, self.no_run(kernel, tw)));
        }
        // Pinning (and tuning, the first time) needs an output of the whole shape.
        let mut scratch = self.gpu(0).uninit(shape.lens().2)?;
        let pinned = self.pin_on_root(kernel, tw, a, b, &mut scratch, shape)?;
        drop(scratch);
        let (shards, run) = self.product(pinned, Rows::Root(a), b, shape, None)?;
        Ok((shards.expect("a product left on the devices"), run))
    }

    /// `a · b` on host slices over every device: each uploads its rows of `a`, `b` goes to
    /// the root and is broadcast, each computes its rows and downloads them. The autotuned
    /// SGEMM is pinned for the whole shape: from this process's or the cache's choice, else
    /// tuned on the root on the whole product where it fits there (then bit-identical to
    /// one GPU's), else on the root's rows alone (a product one GPU cannot hold has no
    /// one-GPU result to match).
    pub fn matmul(
        &self, kernel: MatmulKernel, tw: TileWidth, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
        if shape.is_trivial() {
            return Ok(vec![0.0; m * n]);
        }
        let root = self.gpu(0);
        let db = root.upload(b)?;
        let pinned = match kernel {
            MatmulKernel::Sgemm(sk) if sk.is_autotuned() => {
                let precision = sk.precision();
                match autotune::cached(root, shape, precision)? {
                    Some(t) => Pinned::Tuned(t),
                    None => Pinned::Tuned(self.tune_from_host(a, &db, shape, precision)?),
                }
            }
            other => Pinned::Kernel(other, tw),
        };
        let key = Key {
            shape: (shape.m, shape.k, shape.n),
            kernel: pinned.name(),
            from_root: false,
            gathered: false,
        };
        let layout = self.layout(&key, m, pinned.block_rows());
        let da = self.upload_rows(a, m, k, &layout, 0)?;
        let (c, _) = self.product(pinned, Rows::Shards(&da), &db, shape, None)?;
        c.expect("a product left on the devices").download(self)
    }

    /// The autotuner's choice for `shape`, timed on the root: on the whole product where it
    /// fits there, else on the root's share of the rows.
    fn tune_from_host(
        &self, a: &[f32], b: &CudaSlice<f32>, shape: MatmulShape,
        precision: kernels_gpu::sgemm::Precision,
    ) -> Result<Tuned> {
        let root = self.gpu(0);
        let (la, _, lo) = shape.lens();
        match root.reserve(4 * (la + lo) as u64) {
            Ok(()) => {
                let da = root.upload(a)?;
                let mut out = root.uninit(lo)?;
                autotune::choose(root, &da, b, &mut out, shape, precision)
            }
            Err(Error::OutOfDeviceMemory { .. }) => {
                let rows = shard::even(shape.m as usize, self.len(), 1)[0].len();
                let part = MatmulShape::new(rows, shape.k as usize, shape.n as usize)?;
                let (la, _, lo) = part.lens();
                let da = root.upload(&a[..la])?;
                let mut out = root.uninit(lo)?;
                autotune::choose(root, &da, b, &mut out, part, precision)
            }
            Err(e) => Err(e),
        }
    }

    /// The kernel `kernel` runs on the root for `shape`: the autotuned SGEMM's choice (tuned
    /// on `a`, `b` and `out` the first time), else `kernel` itself.
    fn pin_on_root(
        &self, kernel: MatmulKernel, tw: TileWidth, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<Pinned> {
        shape.check_buffers(a.len(), b.len(), out.len())?;
        for (name, buf) in [("a", a), ("b", b)] {
            self.check_on(name, buf, 0)?;
        }
        Ok(match kernel {
            MatmulKernel::Sgemm(k) if k.is_autotuned() => Pinned::Tuned(autotune::choose(
                self.gpu(0),
                a,
                b,
                out,
                shape,
                k.precision(),
            )?),
            other => Pinned::Kernel(other, tw),
        })
    }

    /// A run with nothing launched (an empty or all-zero product).
    fn no_run(&self, kernel: MatmulKernel, tw: TileWidth) -> GemmRun {
        GemmRun {
            kernel: Pinned::Kernel(kernel, tw).name(),
            parts: vec![],
            marks: Arc::new(vec![]),
        }
    }

    /// Zeroed rows of `cols` on the devices, as `layout` splits them.
    fn zeros_rows(&self, rows: usize, cols: usize, layout: &[Range<usize>]) -> Result<Shards> {
        self.shards(rows, cols, layout, |device, r| {
            self.gpu(device).zeros((r.len() * cols).max(1))
        })
    }

    /// Rows of `cols` on the devices as `layout` splits them, part `d` in `buf(d, rows)`.
    fn shards(
        &self, rows: usize, cols: usize, layout: &[Range<usize>],
        mut buf: impl FnMut(usize, &Range<usize>) -> Result<CudaSlice<f32>>,
    ) -> Result<Shards> {
        let parts = layout
            .iter()
            .enumerate()
            .map(|(device, r)| {
                Ok(Shard {
                    device,
                    rows: r.clone(),
                    buf: buf(device, r)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Shards { rows, cols, parts })
    }

    /// The split of `m` rows for `key`: balanced from the last run of the same product
    /// where there was one (its timings read now, which waits for it), else even.
    fn layout(&self, key: &Key, m: usize, align: usize) -> Vec<Range<usize>> {
        let mut balance = lock(&self.balance);
        if let Some((last_key, parts, marks)) = balance.last.take()
            && let Some(w) = timings(&parts, &marks)
                .ok()
                .and_then(|t| shard::balance(&t))
        {
            balance.weights.insert(last_key, w);
        }
        let weights = balance
            .weights
            .get(key)
            .cloned()
            .unwrap_or_else(|| vec![1.0; self.len()]);
        shard::split(m, &weights, align)
    }

    /// Queues the product: `b` (on the root) broadcast, each device's rows of `a` from the
    /// root or from `a`'s shards, each device's part computed by `pinned`, and the rows of
    /// the product gathered into `out` on the root, or, without `out`, returned where they
    /// were computed.
    fn product(
        &self, pinned: Pinned, a: Rows<'_>, b: &CudaSlice<f32>, shape: MatmulShape,
        mut out: Option<&mut CudaSlice<f32>>,
    ) -> Result<(Option<Shards>, GemmRun)> {
        let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
        let key = Key {
            shape: (shape.m, shape.k, shape.n),
            kernel: pinned.name(),
            from_root: matches!(a, Rows::Root(_)),
            gathered: out.is_some(),
        };
        let layout = match a {
            Rows::Root(_) => self.layout(&key, m, pinned.block_rows()),
            Rows::Shards(s) => {
                let layout = s.layout();
                if s.cols != k || s.rows != m || layout.len() != self.len() {
                    return Err(Error::InputLength {
                        operand: "a",
                        rows: m,
                        cols: k,
                        expected: m * k,
                        actual: s.rows * s.cols,
                    });
                }
                layout
            }
        };
        let parts: Vec<PartRun> = layout
            .iter()
            .enumerate()
            .map(|(device, rows)| PartRun {
                device,
                rows: rows.clone(),
                kernel: pinned.for_rows(rows, m).name(),
            })
            .collect();
        self.prepare(pinned, &parts, m)?;
        let only_root = layout.iter().skip(1).all(|r| r.is_empty());
        let mut marks: Vec<Option<Marks>> = vec![];

        // The root alone (one device, or a product too small to split): as one GPU runs it.
        if only_root {
            let root = self.gpu(0);
            let start = mark(root.stream())?;
            let shards_a;
            let a0 = match a {
                Rows::Root(a) => a,
                Rows::Shards(s) => {
                    shards_a = &s.parts[0].buf;
                    shards_a
                }
            };
            let ready = mark(root.stream())?;
            let mut own = None;
            let c0 = match out.as_deref_mut() {
                Some(out) => out,
                None => own.insert(root.uninit(m * n)?),
            };
            pinned.run(root, a0, b, c0, shape)?;
            let computed = mark(root.stream())?;
            let gathered = mark(root.stream())?;
            marks.push(Some(Marks {
                start,
                ready,
                computed,
                gathered,
            }));
            marks.extend((1..self.len()).map(|_| None));
            let shards = match own {
                Some(buf) => {
                    let mut own = Some(buf);
                    Some(self.shards(m, n, &layout, |d, _| match own.take() {
                        Some(buf) if d == 0 => Ok(buf),
                        _ => self.gpu(d).zeros(1),
                    })?)
                }
                None => None,
            };
            return Ok((shards, self.finish(key, pinned, parts, marks)));
        }

        // Each device's launches ([`shard::tasks`]). Where its rows of `a` come from the root
        // and its rows of `c` go back there, every device but the root runs its part in
        // steps, so that it starts before all of its operands have arrived and sends rows of
        // `c` back while it still computes. With a plain configuration, `b`'s columns travel
        // in panels: a device's first wave of rows runs over each panel in turn (its first
        // launch needs those few rows of `a` and one panel of `b`), then its other rows over
        // all of `b`, put back together on the device once every panel is there. Otherwise
        // its rows run in two steps over all of `b`, the first whole waves. Steps end at
        // multiples of the block rows and panels at multiples of the block columns, and a
        // plain configuration computes each element of `c` alone, so they change no bits.
        let stepped = matches!(a, Rows::Root(_)) && out.is_some();
        let mut candidate = match (stepped, pinned.block_cols()) {
            (true, Some(bn)) => shard::panels(n, shard::PRODUCT_PANELS, bn),
            _ => shard::panels(n, 1, 1),
        };
        // Panels hold `b` twice on every other device (its panels, and `b` put back
        // together): only where each has room for its part with the second copy
        // ([`Gpu::reserve`], which counts what its pool keeps of freed buffers), unless the
        // buffers kept from the last run of this product hold it already.
        let held = lock(&self.workspace)
            .as_ref()
            .is_some_and(|w| w.key.key == key && w.key.panels.len() > 1);
        if candidate.len() > 1 && !held {
            for (d, r) in layout.iter().enumerate().skip(1) {
                let needed = 4 * (2 * k * n + r.len() * (k + n));
                match self.gpu(d).reserve(needed as u64) {
                    Ok(()) => {}
                    Err(Error::OutOfDeviceMemory { .. }) => {
                        candidate = shard::panels(n, 1, 1);
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        let shard::ProductPlan {
            panels: panel_cols,
            tasks,
        } = shard::product_plan(&layout, candidate, n, stepped, |d, rows, cols| {
            Ok(pinned.wave_rows(self.gpu(d), MatmulShape::new(rows, k, cols)?))
        })?;
        let panels = panel_cols.len();
        let cols = |t: &Task| t.panel.map_or(0..n, |p| panel_cols[p].clone());
        // Each device's steps of rows: its launches' rows in order, each once.
        let steps: Vec<Vec<Range<usize>>> = tasks
            .iter()
            .map(|ts| {
                let mut s: Vec<Range<usize>> = ts.iter().map(|t| t.rows.clone()).collect();
                s.dedup();
                s
            })
            .collect();
        // Buffers: each step's rows of `a` (unless they are a shard already) and each
        // launch's part of the product; on every device but the root, each panel of `b` (all
        // of `b` where it is one panel) and, where a launch takes all columns of several
        // panels, `b` put back together.
        let own_a = matches!(a, Rows::Root(_));
        let part_buffers = |d: usize| -> Result<StepBuffers> {
            let gpu = self.gpu(d);
            let a_part = match own_a {
                true => steps[d]
                    .iter()
                    .map(|s| gpu.uninit(s.len() * k))
                    .collect::<Result<_>>()?,
                false => vec![],
            };
            let c_part = tasks[d]
                .iter()
                .map(|t| gpu.uninit(t.rows.len() * cols(t).len()))
                .collect::<Result<_>>()?;
            Ok((a_part, c_part))
        };
        // A gathered product's buffers are those of the last one where its split is the
        // same ([`Workspace`]).
        let reuse = WorkspaceKey {
            key: key.clone(),
            tasks: tasks.clone(),
            panels: panel_cols.clone(),
        };
        let kept = match stepped {
            true => lock(&self.workspace).take_if(|w| w.key == reuse),
            false => None,
        };
        let (kept, mut bufs) = match kept {
            Some(w) => (true, w.bufs),
            None => (false, Bufs::default()),
        };
        if !kept {
            let (a0, c0) = part_buffers(0)?;
            bufs.a_steps.push(a0);
            bufs.c_tasks.push(c0);
            bufs.recv.push(vec![]);
            bufs.whole.push(None);
        }
        let Bufs {
            recv,
            whole,
            a_steps,
            c_tasks,
        } = &mut bufs;
        // From here on, every return waits for the transfers before these buffers go.
        let settle = self.settle();
        let (mut ready, mut computed, mut gathered) = (vec![], vec![], vec![]);
        // The root runs its rows first, before anything of the other devices is queued:
        // they need nothing from them. Its rows of `a` are copied into a buffer of their own
        // (the kernels take whole buffers).
        let root = self.gpu(0);
        let mut starts = vec![mark(root.stream())?];
        if let (Rows::Root(a), Some(a0)) = (a, a_steps[0].first_mut()) {
            let len = layout[0].len() * k;
            root.stream()
                .memcpy_dtod(&a.slice(..len), a0)
                .call("cuMemcpyDtoD")?;
        }
        ready.push(mark(root.stream())?);
        if let Some(task) = tasks[0].first() {
            let a_part = match a {
                Rows::Root(_) => &a_steps[0][0],
                Rows::Shards(s) => &s.parts[0].buf,
            };
            let shape = MatmulShape::new(task.rows.len(), k, n)?;
            pinned
                .for_rows(&task.rows, m)
                .run(root, a_part, b, &mut c_tasks[0][0], shape)?;
        }
        computed.push(mark(root.stream())?);
        if let (Some(out), Some(c0)) = (out.as_deref_mut(), c_tasks[0].first()) {
            let len = layout[0].len() * n;
            root.stream()
                .memcpy_dtod(c0, &mut out.slice_mut(..len))
                .call("cuMemcpyDtoD")?;
        }
        gathered.push(mark(root.stream())?);
        // Each part's clock starts when the root's does (once the root's earlier work is
        // done): a device that finished the previous product early would otherwise count
        // its idle time as waiting for operands, get fewer rows next time and idle longer.
        // It starts before its buffers are made, which the host's time counts then.
        for d in 1..self.len() {
            let stream = self.gpu(d).stream();
            stream.wait(&starts[0]).call("cuStreamWaitEvent")?;
            starts.push(mark(stream)?);
        }
        for d in (1..self.len()).filter(|_| !kept) {
            let gpu = self.gpu(d);
            recv.push(
                panel_cols
                    .iter()
                    .map(|c| gpu.uninit(k * c.len()))
                    .collect::<Result<_>>()?,
            );
            let joined = panels > 1 && tasks[d].iter().any(|t| t.panel.is_none());
            whole.push(if joined {
                Some(gpu.uninit(k * n)?)
            } else {
                None
            });
            let (a_part, c_part) = part_buffers(d)?;
            a_steps.push(a_part);
            c_tasks.push(c_part);
        }
        // Each device's other streams follow its buffers; the root's sends, its start (the
        // writes of `a` and `b`; not its kernel) and every device's buffers.
        let sends = self.devices[0].transfers();
        sends.wait(&starts[0]).call("cuStreamWaitEvent")?;
        for d in 1..self.len() {
            let made = peer::mark(self.gpu(d).stream())?;
            for t in self.devices[d].other_streams().chain([sends]) {
                t.wait(&made).call("cuStreamWaitEvent")?;
            }
        }
        // The operands, by the copy engines ([`super::peer`]), each copy pushed by the
        // device that holds the data, on its transfer stream, in the order they are needed
        // (a device's copies run one after another): from the root, every device's first
        // step's rows of `a`, then the panels of `b` in order, then the other steps' rows.
        // Each panel is cut into pieces, each owned by one device but the root, in turn:
        // the root sends every piece to its owner, which passes it on to the other devices
        // as it arrives. So the root's links carry `b` once, however many devices there are.
        let mut a_arrived: Vec<Vec<CudaEvent>> = (0..self.len()).map(|_| vec![]).collect();
        let mut send_a = |i: usize| -> Result<()> {
            let Rows::Root(a) = a else { return Ok(()) };
            for d in 1..self.len() {
                let (Some(s), Some(dst)) = (steps[d].get(i), a_steps[d].get(i)) else {
                    continue;
                };
                // SAFETY: rows `s` of `a` on the root into a buffer of as many floats on
                // device `d`, written by this copy alone; the root's sends follow its start
                // (the writes of `a`) and every device's (their allocations); every stream
                // waits for every copy before this call returns (`settle`).
                unsafe {
                    self.copy_peer(
                        sends,
                        (d, address(dst, 0)),
                        (0, address(a, s.start * k)),
                        s.len() * k,
                    )
                }?;
                a_arrived[d].push(peer::mark(sends)?);
            }
            Ok(())
        };
        send_a(0)?;
        let senders = self.len() - 1;
        let per_panel = (PIECES / panels).max(1);
        // (panel, rows of `b`, owner)
        let pieces: Vec<(usize, Range<usize>, usize)> = (0..panels)
            .flat_map(|p| {
                shard::pieces(k, senders, per_panel, 1)
                    .into_iter()
                    .map(move |(r, o)| (p, r, o))
            })
            .collect();
        let mut arrived = vec![];
        for (p, r, o) in &pieces {
            let c = &panel_cols[*p];
            // SAFETY: rows `r` of panel `c` of `b` (k × n on the root) into the same rows of
            // the owner's copy of the panel (k × c.len()), written by this copy alone;
            // ordered as the rows of `a`.
            unsafe {
                self.copy_peer_2d(
                    sends,
                    (*o, address(&recv[*o][*p], r.start * c.len()), c.len()),
                    (0, address(b, r.start * n + c.start), n),
                    c.len(),
                    r.len(),
                )
            }?;
            arrived.push(peer::mark(sends)?);
        }
        for i in 1..steps.iter().map(Vec::len).max().unwrap_or(0) {
            send_a(i)?;
        }
        // Each owner passes each of its pieces on once it has arrived; what a device waits
        // for is the last piece of a panel from each sender (copies on one stream run in
        // order). `last[p][o][d]`: the last piece of panel `p` owner `o` passed to device `d`.
        let mut last: Vec<Vec<Vec<Option<CudaEvent>>>> = (0..panels)
            .map(|_| {
                (0..self.len())
                    .map(|_| (0..self.len()).map(|_| None).collect())
                    .collect()
            })
            .collect();
        for (j, (p, r, o)) in pieces.iter().enumerate() {
            let (o, w) = (*o, panel_cols[*p].len());
            for d in (1..self.len()).filter(|&d| d != o) {
                let lane = self.devices[o].transfers();
                lane.wait(&arrived[j]).call("cuStreamWaitEvent")?;
                // SAFETY: the owner's copy of the panel holds rows `r` once `arrived[j]` has
                // passed; device `d`'s copy is written there by this copy alone; ordered as
                // above.
                unsafe {
                    self.copy_peer(
                        lane,
                        (d, address(&recv[d][*p], r.start * w)),
                        (o, address(&recv[o][*p], r.start * w)),
                        r.len() * w,
                    )
                }?;
                last[*p][o][d] = Some(peer::mark(lane)?);
            }
        }
        // Makes `stream` (of device `d`) wait until panel `p` has arrived there: its own
        // pieces (in order on the root's transfer stream) and every other owner's.
        let wait_panel = |stream: &CudaStream, d: usize, p: usize| -> Result<()> {
            if let Some(j) = pieces.iter().rposition(|&(q, _, o)| q == p && o == d) {
                stream.wait(&arrived[j]).call("cuStreamWaitEvent")?;
            }
            for event in last[p].iter().filter_map(|to| to[d].as_ref()) {
                stream.wait(event).call("cuStreamWaitEvent")?;
            }
            Ok(())
        };
        // `b` put back together from its panels, on each device's local stream.
        let mut joined: Vec<Option<CudaEvent>> = (0..self.len()).map(|_| None).collect();
        for d in 1..self.len() {
            let Some(dst) = whole[d].as_ref() else {
                continue;
            };
            let lane = self.devices[d].local();
            for (p, c) in panel_cols.iter().enumerate() {
                wait_panel(lane, d, p)?;
                // SAFETY: panel `p` (k × c.len(), arrived once the waits pass) into its
                // columns of `b` (k × n) on the same device, written by this copy alone;
                // ordered as above.
                unsafe {
                    self.copy_peer_2d(
                        lane,
                        (d, address(dst, c.start), n),
                        (d, address(&recv[d][p], 0), c.len()),
                        c.len(),
                        k,
                    )
                }?;
            }
            joined[d] = Some(peer::mark(lane)?);
        }

        // Each device runs its launches once their operands have arrived, alternately
        // through its own handle and its second one ([`super::Device::side`]), so that the
        // blocks of one launch fill what the last, partly filled wave of the one before
        // leaves free; where `c` is gathered, it sends each launch's part to the root as soon
        // as it is computed.
        for (d, ts) in tasks.iter().enumerate().skip(1) {
            let own = self.gpu(d).stream();
            let t = self.devices[d].transfers();
            for (i, task) in ts.iter().enumerate() {
                let gpu = match i % 2 {
                    0 => self.gpu(d),
                    _ => self.devices[d].side(),
                };
                let stream = gpu.stream();
                let step = steps[d]
                    .iter()
                    .position(|s| *s == task.rows)
                    .expect("every launch's rows are a step");
                if let Some(event) = a_arrived[d].get(step) {
                    stream.wait(event).call("cuStreamWaitEvent")?;
                }
                let b_part = match (task.panel, &whole[d], &joined[d]) {
                    (Some(p), ..) => {
                        wait_panel(stream, d, p)?;
                        &recv[d][p]
                    }
                    (None, Some(whole), Some(event)) => {
                        stream.wait(event).call("cuStreamWaitEvent")?;
                        whole
                    }
                    // One panel: all of `b`.
                    (None, ..) => {
                        wait_panel(stream, d, 0)?;
                        &recv[d][0]
                    }
                };
                if i == 0 {
                    ready.push(mark(own)?);
                }
                let a_part = match a {
                    Rows::Root(_) => &a_steps[d][step],
                    Rows::Shards(s) => &s.parts[d].buf,
                };
                let c = &mut c_tasks[d][i];
                let w = cols(task);
                let shape = MatmulShape::new(task.rows.len(), k, w.len())?;
                pinned
                    .for_rows(&task.rows, m)
                    .run(gpu, a_part, b_part, c, shape)?;
                if let Some(out) = out.as_deref_mut() {
                    follow(t, stream)?;
                    // SAFETY: `c` holds this launch's rows and columns of the product,
                    // written by the kernel the transfer stream now follows; that block of
                    // `out` on the root is written by this copy alone; every stream waits
                    // for it before this call returns (`settle`).
                    unsafe {
                        self.copy_peer_2d(
                            t,
                            (0, address(out, task.rows.start * n + w.start), n),
                            (d, address(c, 0), w.len()),
                            w.len(),
                            task.rows.len(),
                        )
                    }?;
                }
            }
            if ts.is_empty() {
                ready.push(mark(own)?);
            }
            follow(own, self.devices[d].side().stream())?;
            computed.push(mark(own)?);
            gathered.push(match out {
                Some(_) => mark(t)?,
                None => mark(own)?,
            });
        }
        let shards = match out {
            Some(_) => None,
            None => {
                let mut c_tasks = std::mem::take(c_tasks).into_iter();
                Some(self.shards(m, n, &layout, |d, _| {
                    match c_tasks.next().and_then(|c| c.into_iter().next()) {
                        Some(c) => Ok(c),
                        None => self.gpu(d).zeros(1),
                    }
                })?)
            }
        };
        // Every stream waits for every copy: the root's product is whole there, and the
        // buffers dropped below are freed after the copies that read them.
        settle.done()?;
        if stepped {
            *lock(&self.workspace) = Some(Workspace { key: reuse, bufs });
        }
        for (d, (((start, ready), computed), gathered)) in starts
            .into_iter()
            .zip(ready)
            .zip(computed)
            .zip(gathered)
            .enumerate()
        {
            let has_rows = !layout[d].is_empty();
            marks.push(has_rows.then_some(Marks {
                start,
                ready,
                computed,
                gathered,
            }));
        }
        Ok((shards, self.finish(key, pinned, parts, marks)))
    }

    /// Compiles `pinned`'s entries on every device with rows, all at once, before anything
    /// is queued: a device compiling its first launch would hold the others back.
    fn prepare(&self, pinned: Pinned, parts: &[PartRun], m: usize) -> Result<()> {
        let missing: Vec<(&Gpu, Vec<&'static str>)> = parts
            .iter()
            .filter(|p| !p.rows.is_empty())
            .map(|p| (self.gpu(p.device), pinned.for_rows(&p.rows, m).entries()))
            .filter(|(gpu, entries)| entries.iter().any(|e| !gpu.is_loaded(e)))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        std::thread::scope(|s| {
            let jobs: Vec<_> = missing
                .into_iter()
                .map(|(gpu, entries)| s.spawn(move || gpu.load_entries(&entries)))
                .collect();
            jobs.into_iter()
                .map(|j| j.join().expect("a compiling thread panicked"))
                .collect::<Result<Vec<()>>>()
        })?;
        Ok(())
    }

    /// Keeps this run's marks for the next split, and describes it.
    fn finish(
        &self, key: Key, pinned: Pinned, parts: Vec<PartRun>, marks: Vec<Option<Marks>>,
    ) -> GemmRun {
        let marks = Arc::new(marks);
        lock(&self.balance).last = Some((key, parts.clone(), Arc::clone(&marks)));
        GemmRun {
            kernel: pinned.name(),
            parts,
            marks,
        }
    }
}

/// The buffers of the last product gathered on the root ([`Gpus::product`]), kept for the
/// next one with the same split: the host took longer to make them (tens of buffers over
/// the devices, each device's start waiting for them) than the root's link takes to send a
/// device its first operands. They are memory the devices' pools would keep anyway
/// ([`Gpu::keep_freed_memory`]); the next product of another split frees them.
pub(super) struct Workspace {
    key: WorkspaceKey,
    bufs: Bufs,
}

/// Which split a [`Workspace`] is for.
#[derive(Clone, PartialEq, Eq)]
struct WorkspaceKey {
    key: Key,
    tasks: Vec<Vec<Task>>,
    panels: Vec<Range<usize>>,
}

/// A product's buffers, each indexed by device: the panels of `b` received, `b` put back
/// together, the steps' rows of `a`, the launches' parts of `c`.
/// One device's steps' rows of `a` and launches' parts of `c`.
type StepBuffers = (Vec<CudaSlice<f32>>, Vec<CudaSlice<f32>>);

#[derive(Default)]
struct Bufs {
    recv: Vec<Vec<CudaSlice<f32>>>,
    whole: Vec<Option<CudaSlice<f32>>>,
    a_steps: Vec<Vec<CudaSlice<f32>>>,
    c_tasks: Vec<Vec<CudaSlice<f32>>>,
}

/// The pieces of `b` per device but the root ([`Gpus::product`]), over all its panels:
/// enough that each arrives quickly and flows on to the other devices while the next is on
/// its way.
const PIECES: usize = 8;

/// Makes `waiter` wait for the work queued so far on `on` (two streams of one device).
fn follow(waiter: &CudaStream, on: &CudaStream) -> Result<()> {
    waiter.join(on).call("cuStreamWaitEvent")
}
