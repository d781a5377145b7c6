//! Sums, reductions along an axis and sliding averages over several GPUs, each the same
//! launches one GPU makes on the same pieces, so that no result depends on the device count
//! or on timing ([`crate::plan::shard`]):
//!
//! - a **sum** is cut into chunks of [`Gpus::vector_chunk`] elements; each device sums its
//!   chunks, each into its own partial; the partials are gathered on the root in chunk
//!   order and summed there by the same two-pass reduction. Bit-identical for any device
//!   count (and run to run); where the input is one chunk, the partial is the sum, equal to
//!   [`crate::gpu::Gpu::sum_device`]'s. Error bound: [`sum_error_depth`] roundings.
//! - a **reduction along rows** runs on each device's rows and gathers the outputs; one
//!   **along columns** runs its first pass on each device's row segments
//!   ([`crate::plan::shard::axis_rows_align`]) and its second on the root over the gathered
//!   partial rows: both bit-identical to [`crate::gpu::Gpu::reduce_axis_device`]'s.
//! - a **sliding average** is computed chunk by chunk of outputs, each device's from its
//!   own inputs and the halo of `window - 1` values the devices after it send it (NCCL
//!   send/receive, into room kept after its part): bit-identical for any device count, and
//!   to [`crate::gpu::Gpu::sliding_average_device`]'s where the input is one chunk.

use super::{Gpus, Piece, Shard, Shards, address, stream};
use crate::gpu::AxisScratch;
use crate::plan::reduce::{self, ReduceKernel};
use crate::plan::shard::{self, AxisSplit, Chunks, SlidingPlan};
use crate::plan::sliding::{SlidingKernel, SlidingShape};
use crate::problem::axis::{Axis, AxisOp, AxisShape};
use crate::problem::error::{Error, Result};
use cudarc::driver::CudaSlice;

/// The roundings on any input's way to a sharded sum of `len` values in chunks of `chunk`:
/// a chunk's two passes ([`reduce::error_depth`] of the longest chunk) and, with more than
/// one chunk, the pass over the chunks' partials. `|sum - exact| <= depth · 2⁻²⁴ · Σ|x|`.
pub fn sum_error_depth(len: usize, chunk: usize) -> u32 {
    let chunks = len.div_ceil(chunk.max(1));
    let longest = len.min(chunk) as u32;
    let depth = reduce::error_depth(longest);
    if chunks > 1 {
        depth + reduce::error_depth(chunks as u32)
    } else {
        depth
    }
}

/// Whether `sum` of `x` (summed in chunks of `chunk`) is within [`sum_error_depth`]'s bound
/// of the f64 reference.
pub fn sum_within_bound(sum: f32, x: &[f32], chunk: usize) -> bool {
    sum_within_bound_of(sum, reduce::reference(x), x.len(), chunk)
}

/// [`sum_within_bound`] against the f64 reference `(sum, Σ|x|)` of `len` values
/// ([`reduce::reference`]), computed once.
pub fn sum_within_bound_of(
    sum: f32, (exact, magnitude): (f64, f64), len: usize, chunk: usize,
) -> bool {
    let bound = sum_error_depth(len, chunk) as f64 * (f32::EPSILON as f64 / 2.0) * magnitude;
    if exact.is_finite() {
        (sum as f64 - exact).abs() <= bound
    } else {
        (sum as f64).is_nan() == exact.is_nan()
    }
}

impl Gpus {
    /// The vector `x` on the devices: runs of whole chunks ([`Gpus::vector_chunk`]), even,
    /// with `room` elements after each part (a sliding average's halo).
    pub fn upload_vector(&self, x: &[f32], room: usize) -> Result<Shards> {
        let layout = Chunks::new(x.len(), self.chunk)?.shards(&vec![1.0; self.len()]);
        self.upload_rows(x, x.len(), 1, &layout, room)
    }

    /// The sum of `x` by `kernel` over every device ([the module](self)).
    pub fn sum(&self, kernel: ReduceKernel, x: &[f32]) -> Result<f32> {
        let dx = self.upload_vector(x, 0)?;
        let root = self.gpu(0);
        let mut result = root.zeros(1)?;
        self.sum_sharded(kernel, &dx, &mut result)?;
        self.synchronize()?;
        Ok(root.download(&result)?[0])
    }

    /// Queues the sum of the sharded vector `x` (one column, parts of whole chunks, as
    /// [`Gpus::upload_vector`] makes them) into `result`, one float on the root.
    pub fn sum_sharded(
        &self, kernel: ReduceKernel, x: &Shards, result: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let chunks = self.vector_layout(x)?;
        crate::gpu::output_len(result.len(), 1)?;
        self.check_on("result", result, 0)?;
        let root = self.gpu(0);
        let count = chunks.count();
        if count == 0 {
            return root
                .stream()
                .memset_zeros(result)
                .map_err(|e| crate::gpu::fault(kernel.entry(), e));
        }
        // Every chunk's sum into its own element of the partials on the root: written there
        // by each device's kernels where the devices reach each other directly, else into
        // partials of each device's own, copied there. The launches are queued a pass over a
        // chunk of every device at a time, so that no device waits for the host to queue
        // another's work before it starts.
        let mut all = root.uninit(count)?;
        // From here on, every return waits for every device before `all` goes.
        let settle = self.settle();
        let mut own: Vec<Option<CudaSlice<f32>>> = vec![];
        let mut kept = super::lock(&self.sum_scratch);
        kept.resize_with(self.len(), || None);
        for p in &x.parts {
            let gpu = self.gpu(p.device);
            let mine = chunks.within(&p.rows);
            let local = (p.device != 0 && !mine.is_empty() && !self.direct)
                .then(|| gpu.uninit(mine.len()))
                .transpose()?;
            own.push(local);
            if kept[p.device].is_none() {
                kept[p.device] = Some(gpu.reduce_scratch()?);
            }
        }
        let most = x
            .parts
            .iter()
            .map(|p| chunks.within(&p.rows).len())
            .max()
            .unwrap_or(0);
        for i in 0..most {
            // Every device's first pass over its `i`-th chunk, then every second pass.
            for second in [false, true] {
                for (p, local) in x.parts.iter().zip(own.iter_mut()) {
                    let mine = chunks.within(&p.rows);
                    let Some(scratch) = kept[p.device].as_mut().filter(|_| i < mine.len()) else {
                        continue;
                    };
                    let c = mine.start + i;
                    let r = chunks.range(c);
                    let mut slot = match local.as_mut() {
                        Some(l) => l.slice_mut(i..i + 1),
                        // On a device other than the root: written across the link, which
                        // `direct` says its kernels can (peer access, pools opened).
                        None => all.slice_mut(c..c + 1),
                    };
                    let gpu = self.gpu(p.device);
                    if second {
                        gpu.sum_second_pass(kernel, r.len(), scratch, &mut slot)?;
                    } else {
                        let input = p.buf.slice(r.start - p.rows.start..r.end - p.rows.start);
                        gpu.sum_first_pass(kernel, &input, scratch, &mut slot)?;
                    }
                }
            }
        }
        let pieces: Vec<Piece> = x
            .parts
            .iter()
            .zip(&own)
            .filter_map(|(p, local)| {
                let mine = chunks.within(&p.rows);
                Some(Piece {
                    device: p.device,
                    src: local.as_ref()?,
                    at: mine.start,
                    len: mine.len(),
                })
            })
            .collect();
        self.gather_pieces(&pieces, &mut all)?;
        // The root's stream waits for every device's partials (and every device's for the
        // root's, before `all` is freed).
        settle.done()?;
        if count == 1 {
            // One chunk: its sum is the sum, as one GPU's single-kernel sum.
            return root
                .stream()
                .memcpy_dtod(&all, result)
                .map_err(|e| crate::gpu::fault(kernel.entry(), e));
        }
        let scratch = kept[0].as_mut().expect("the root's scratch, made above");
        root.sum_into(kernel, &all.as_view(), scratch, &mut result.as_view_mut())
    }

    /// The chunks of the sharded vector `x`, checked: one column, parts of whole chunks.
    fn vector_layout(&self, x: &Shards) -> Result<Chunks> {
        if x.cols != 1 {
            return Err(Error::InputLength {
                operand: "x",
                rows: x.rows,
                cols: 1,
                expected: x.rows,
                actual: x.rows * x.cols,
            });
        }
        shard::check_layout(x.rows, self.chunk, &x.layout())?;
        Chunks::new(x.rows, self.chunk)
    }

    /// The sliding average of `a` over windows of `window` by `kernel` over every device
    /// ([the module](self)): `a.len() - window + 1` outputs, none if the window is longer.
    pub fn sliding_average(
        &self, kernel: SlidingKernel, a: &[f32], window: usize,
    ) -> Result<Vec<f32>> {
        let layout = Chunks::new(a.len(), self.chunk)?.shards(&vec![1.0; self.len()]);
        let plan = SlidingPlan::new(a.len(), window, self.chunk, layout.clone())?;
        let mut x = self.upload_rows(a, a.len(), 1, &layout, plan.halo_room())?;
        let out = self.sliding_average_sharded(kernel, &mut x, window)?;
        out.download(self)
    }

    /// Queues the sliding average of the sharded vector `x` over windows of `window`: each
    /// device receives its halo from the devices after it, into the room after its part
    /// ([`Gpus::upload_vector`]'s `room`: at least [`SlidingPlan::halo_room`], else
    /// [`Error::HaloRoom`]), then computes its outputs, which stay on it: output `i` on the
    /// device that holds input `i`.
    pub fn sliding_average_sharded(
        &self, kernel: SlidingKernel, x: &mut Shards, window: usize,
    ) -> Result<Shards> {
        self.vector_layout(x)?;
        let plan = SlidingPlan::new(x.rows, window, self.chunk, x.layout())?;
        // Each launch's shape, checked before anything is queued.
        SlidingShape::new(x.rows.min(self.chunk + window - 1), window)?;
        for (d, p) in x.parts.iter().enumerate() {
            let needed = plan.halo(d).len();
            if p.room(1) < needed {
                return Err(Error::HaloRoom {
                    device: d,
                    needed,
                    room: p.room(1),
                });
            }
        }
        let transfers = plan.transfers();
        if !transfers.is_empty() {
            let settle = self.settle();
            self.transfers_follow_kernels()?;
            let comm = self.comm()?;
            comm.group(|| {
                for t in &transfers {
                    let (from, to) = (&x.parts[t.from], &x.parts[t.to]);
                    let src = t.range.start - from.rows.start;
                    let dst = to.rows.len() + (t.range.start - to.rows.end);
                    let len = t.range.len();
                    let (sent, received) = (address(&from.buf, src), address(&to.buf, dst));
                    let (sender, receiver) = (&self.devices[t.from], &self.devices[t.to]);
                    // SAFETY: elements `src..src + len` of the sender's part are its own
                    // values, only read; `dst..dst + len` lie in the room after the
                    // receiver's part (checked above), written by this receive alone, read
                    // by launches queued after it on a stream that waits for it; both parts
                    // are borrowed until the device streams wait for the transfers (below).
                    unsafe {
                        comm.send(t.from, sent, len, t.to, stream(sender))?;
                        comm.recv(t.to, received, len, t.from, stream(receiver))?;
                    }
                }
                Ok(())
            })?;
            drop(comm);
            settle.done()?;
        }
        let mut parts = vec![];
        for (d, p) in x.parts.iter().enumerate() {
            let gpu = self.gpu(p.device);
            let outputs = plan.device_outputs(d);
            let mut out = gpu.uninit(outputs.len().max(1))?;
            let mut scratch = crate::gpu::SlidingScratch::default();
            for job in plan.jobs(d) {
                let at = |i: usize| i - p.rows.start;
                let input = p.buf.slice(at(job.inputs.start)..at(job.inputs.end));
                let o = job.outputs.start - outputs.start..job.outputs.end - outputs.start;
                let mut slot = out.slice_mut(o);
                gpu.sliding_average_view(kernel, &input, window, &mut slot, &mut scratch)?;
            }
            parts.push(Shard {
                device: p.device,
                rows: outputs,
                buf: out,
            });
        }
        Ok(Shards {
            rows: plan.outputs(),
            cols: 1,
            parts,
        })
    }

    /// `op` along `axis` of the row-major `rows × cols` matrix `x` over every device
    /// ([the module](self)); a column reduction of one pass (too few rows to split into
    /// segments) runs on the root alone.
    pub fn reduce_axis(
        &self, op: AxisOp, axis: Axis, x: &[f32], rows: usize, cols: usize,
    ) -> Result<Vec<f32>> {
        let (_, outputs, split) = shard::axis_split(op, axis, x.len(), rows, cols, self.len())?;
        let layout = match split {
            AxisSplit::Empty => return Ok(vec![]),
            AxisSplit::One => {
                return crate::backend::Backend::reduce_axis(self.gpu(0), op, axis, x, rows, cols);
            }
            AxisSplit::Rows(layout) => layout,
        };
        let dx = self.upload_rows(x, rows, cols, &layout, 0)?;
        let root = self.gpu(0);
        let mut out = root.zeros(outputs)?;
        self.reduce_axis_sharded(op, axis, &dx, &mut out)?;
        self.synchronize()?;
        root.download(&out)
    }

    /// Queues `op` along `axis` of the matrix `x`, spread by rows over the devices, into
    /// `out` on the root ([`AxisShape::outputs`] floats). A column reduction needs its parts
    /// cut at its first pass's row segments ([`crate::plan::shard::axis_rows_align`]: else
    /// [`Error::ShardLayout`]); one of a single pass gathers `x` on the root first.
    pub fn reduce_axis_sharded(
        &self, op: AxisOp, axis: Axis, x: &Shards, out: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let shape = AxisShape::new(x.rows, x.cols)?;
        shape.check_op(op, axis)?;
        crate::gpu::output_len(out.len(), shape.outputs(axis) as usize)?;
        self.check_on("out", out, 0)?;
        if shape.outputs(axis) == 0 {
            return Ok(());
        }
        let cols = x.cols;
        let root = self.gpu(0);
        match (axis, shard::axis_rows_align(shape, axis)) {
            (Axis::Rows, _) => {
                let mut outs = vec![];
                for p in &x.parts {
                    let gpu = self.gpu(p.device);
                    let part = AxisShape::new(p.rows.len(), cols)?;
                    let mut o = gpu.uninit(p.rows.len().max(1))?;
                    if !p.rows.is_empty() {
                        let (mut scratch, o) = (AxisScratch::default(), &mut o);
                        gpu.reduce_axis_device(op, axis, &p.buf, part, o, &mut scratch)?;
                    }
                    outs.push(o);
                }
                let pieces: Vec<Piece> = x
                    .parts
                    .iter()
                    .zip(&outs)
                    .map(|(p, o)| Piece {
                        device: p.device,
                        src: o,
                        at: p.rows.start,
                        len: p.rows.len(),
                    })
                    .collect();
                self.gather_pieces(&pieces, out)
            }
            (Axis::Cols, None) => {
                let mut whole = root.uninit((x.rows * cols).max(1))?;
                self.gather(x, &mut whole)?;
                root.reduce_axis_device(op, axis, &whole, shape, out, &mut AxisScratch::default())
            }
            (Axis::Cols, Some(per)) => {
                shard::check_layout(x.rows, per, &x.layout())?;
                let plan = shape.cols_plan();
                let mut all = root.uninit(plan.segments as usize * cols)?;
                let mut own: Vec<Option<CudaSlice<f32>>> = vec![];
                for p in &x.parts {
                    let gpu = self.gpu(p.device);
                    if p.rows.is_empty() {
                        own.push(None);
                        continue;
                    }
                    let part = shard::cols_part_plan(&plan, p.rows.len());
                    let first = p.rows.start / per * cols;
                    let len = part.segments as usize * cols;
                    let rows = p.rows.len() as u32;
                    match p.device {
                        0 => {
                            let mut slot = all.slice_mut(first..first + len);
                            gpu.cols_pass(op, &p.buf, rows, cols as u32, &part, 1.0, &mut slot)?;
                            own.push(None);
                        }
                        _ => {
                            let mut partial = gpu.uninit(len)?;
                            let slot = &mut partial.as_view_mut();
                            gpu.cols_pass(op, &p.buf, rows, cols as u32, &part, 1.0, slot)?;
                            own.push(Some(partial));
                        }
                    }
                }
                let pieces: Vec<Piece> = x
                    .parts
                    .iter()
                    .zip(&own)
                    .filter_map(|(p, partial)| {
                        let partial = partial.as_ref()?;
                        Some(Piece {
                            device: p.device,
                            src: partial,
                            at: p.rows.start / per * cols,
                            len: partial.len(),
                        })
                    })
                    .collect();
                self.gather_pieces(&pieces, &mut all)?;
                let finish = shape.finish_plan(&plan);
                let scale = op.scale(shape.rows);
                let segments = plan.segments;
                let o = &mut out.as_view_mut();
                root.cols_pass(op, &all, segments, cols as u32, &finish, scale, o)
            }
        }
    }
}
