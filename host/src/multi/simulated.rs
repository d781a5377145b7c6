//! The multi-GPU splits on simulated devices: each device a [`Simulator`], each transfer a
//! copy between the devices' buffers, and every part the launch a GPU would make on it, in
//! 16-byte-aligned storage as device buffers are. Nothing is faster for it; the point is
//! that the CPU can check, bit for bit, that a split ([`crate::plan::shard`]) gives one
//! device's result: the split points, the halos and who sends them, the gather order, the
//! chunks' fixed combining order, and each device's choice of kernel for its rows
//! ([`Tuned::for_rows`]).

use crate::backend::Backend;
use crate::gpu::autotune::Tuned;
use crate::plan::half::Input;
use crate::plan::kernels::MatmulKernel;
use crate::plan::packed::PACKED_CONFIGS;
use crate::plan::reduce::ReduceKernel;
use crate::plan::shard::{self, AxisSplit, Chunks, SlidingPlan};
use crate::plan::sliding::SlidingKernel;
use crate::problem::axis::{Axis, AxisOp};
use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
use crate::problem::tile::TileWidth;
use crate::sim::{Simulator, aligned_copy, aligned_floats};
use std::ops::Range;

/// `devices` simulated devices, with vectors in chunks of `chunk`
/// ([`crate::multi::Gpus::set_vector_chunk`]).
pub struct SimulatedDevices {
    pub devices: usize,
    pub chunk: usize,
    sim: Simulator,
}

impl SimulatedDevices {
    /// [`Error::InvalidChunk`] unless `chunk` is a positive multiple of 4;
    /// [`Error::DeviceCount`] for no devices.
    pub fn new(devices: usize, chunk: usize) -> Result<Self> {
        Chunks::new(0, chunk)?;
        if devices == 0 {
            return Err(Error::DeviceCount {
                requested: 0,
                count: 0,
                why: "simulated devices".into(),
            });
        }
        Ok(Self {
            devices,
            chunk,
            sim: Simulator::default(),
        })
    }

    /// `a · b` by `kernel` on every device, split by rows in proportion to `weights` (one
    /// per device) at multiples of its block rows, each part computed from its own copy of
    /// its rows, then gathered in order.
    pub fn matmul(
        &self, kernel: MatmulKernel, tw: TileWidth, a: &[f32], b: &[f32], shape: MatmulShape,
        weights: &[f64],
    ) -> Result<Vec<f32>> {
        let align = kernel.block_rows(tw) as usize;
        self.by_rows(a, b, shape, weights, align, |_, a, b, part| {
            self.sim.matmul(kernel, tw, a, b, part)
        })
    }

    /// `a · b` by the autotuner's choice `tuned` for the whole shape, each device running
    /// [`Tuned::for_rows`] of it on its rows, as the GPUs do.
    pub fn matmul_tuned(
        &self, tuned: Tuned, a: &[f32], b: &[f32], shape: MatmulShape, weights: &[f64],
    ) -> Result<Vec<f32>> {
        let align = tuned.block_rows() as usize;
        self.by_rows(a, b, shape, weights, align, |rows, a, b, part| {
            let r = rows.start as u32..rows.end as u32;
            run_tuned(&self.sim, tuned.for_rows(r, shape.m), a, b, part)
        })
    }

    /// `a · b` by `tuned` split as the GPUs run a product gathered on the root
    /// ([`shard::product_plan`]): the root's rows in one launch, each other device's in its
    /// launches over a panel of `b`'s columns (packed into a matrix of its own, as each
    /// device receives it) or over all of `b`. `wave(rows, cols)` stands for a GPU's
    /// occupancy: the rows of one wave of blocks over `cols` columns of a part of `rows`.
    pub fn matmul_tuned_gathered(
        &self, tuned: Tuned, a: &[f32], b: &[f32], shape: MatmulShape, weights: &[f64],
        wave: impl Fn(usize, usize) -> usize,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
        let layout = shard::split(m, weights, tuned.block_rows() as usize);
        let candidate = match tuned.block_cols() {
            Some(bn) => shard::panels(n, shard::PRODUCT_PANELS, bn as usize),
            None => shard::panels(n, 1, 1),
        };
        let plan = shard::product_plan(&layout, candidate, n, true, |_, rows, cols| {
            Ok(wave(rows, cols))
        })?;
        let mut out = vec![0.0; shape.lens().2];
        for task in plan.tasks.iter().flatten() {
            let (rows, cols) = (
                &task.rows,
                task.panel.map_or(0..n, |p| plan.panels[p].clone()),
            );
            let own_a = aligned_copy(&a[rows.start * k..rows.end * k]);
            let panel: Vec<f32> = (0..k)
                .flat_map(|i| b[i * n + cols.start..i * n + cols.end].iter().copied())
                .collect();
            let own_b = aligned_copy(&panel);
            let part = MatmulShape::new(rows.len(), k, cols.len())?;
            let c = run_tuned(
                &self.sim,
                tuned.for_rows(rows.start as u32..rows.end as u32, shape.m),
                aligned_floats(&own_a, rows.len() * k),
                aligned_floats(&own_b, panel.len()),
                part,
            )?;
            for (i, row) in c.chunks(cols.len()).enumerate() {
                let at = (rows.start + i) * n + cols.start;
                out[at..at + cols.len()].copy_from_slice(row);
            }
        }
        Ok(out)
    }

    /// One device's whole run of `tuned` (the reference the splits are checked against).
    pub fn matmul_tuned_one(
        &self, tuned: Tuned, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        let (a, b) = (aligned_copy(a), aligned_copy(b));
        let (la, lb, _) = shape.lens();
        run_tuned(
            &self.sim,
            tuned,
            aligned_floats(&a, la),
            aligned_floats(&b, lb),
            shape,
        )
    }

    fn by_rows(
        &self, a: &[f32], b: &[f32], shape: MatmulShape, weights: &[f64], align: usize,
        part: impl Fn(&Range<usize>, &[f32], &[f32], MatmulShape) -> Result<Vec<f32>>,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let (k, n) = (shape.k as usize, shape.n as usize);
        let layout = shard::split(shape.m as usize, weights, align);
        // `b` as each device has it, broadcast: a buffer of its own.
        let b_copy = aligned_copy(b);
        let b = aligned_floats(&b_copy, b.len());
        let mut out = Vec::with_capacity(shape.lens().2);
        for rows in layout.iter().filter(|r| !r.is_empty()) {
            let own = aligned_copy(&a[rows.start * k..rows.end * k]);
            let a_part = aligned_floats(&own, rows.len() * k);
            let p = MatmulShape::new(rows.len(), k, n)?;
            out.extend(part(rows, a_part, b, p)?);
        }
        out.resize(shape.lens().2, 0.0);
        Ok(out)
    }

    /// The sum of `x` by `kernel`: each chunk's sum, then (more than one chunk) the sum of
    /// the partials in chunk order, whichever device summed each.
    pub fn sum(&self, kernel: ReduceKernel, x: &[f32]) -> Result<f32> {
        let chunks = Chunks::new(x.len(), self.chunk)?;
        let mut partials = vec![0.0f32; chunks.count()];
        for shard in chunks.shards(&vec![1.0; self.devices]) {
            // A device's own copy of its part, as it holds it.
            let own = aligned_copy(&x[shard.clone()]);
            let own = aligned_floats(&own, shard.len());
            for c in chunks.within(&shard) {
                let r = chunks.range(c);
                partials[c] = self
                    .sim
                    .sum(kernel, &own[r.start - shard.start..r.end - shard.start])?;
            }
        }
        match partials[..] {
            [] => Ok(0.0),
            [one] => Ok(one),
            _ => self.sim.sum(kernel, &partials),
        }
    }

    /// The sliding average of `a`: each device holds its part and room after it, receives
    /// its halo from the devices after it ([`SlidingPlan::transfers`], copied here), and
    /// computes its chunks of outputs from its own buffer alone.
    pub fn sliding_average(
        &self, kernel: SlidingKernel, a: &[f32], window: usize,
    ) -> Result<Vec<f32>> {
        let layout = Chunks::new(a.len(), self.chunk)?.shards(&vec![1.0; self.devices]);
        let plan = SlidingPlan::new(a.len(), window, self.chunk, layout.clone())?;
        let room = plan.halo_room();
        let mut held: Vec<Vec<f32>> = layout
            .iter()
            .map(|r| {
                let mut v = a[r.clone()].to_vec();
                // What the room holds before the halo arrives: nothing a kernel may read.
                v.resize(r.len() + room, f32::NAN);
                v
            })
            .collect();
        for t in plan.transfers() {
            let (from, to) = (&layout[t.from], &layout[t.to]);
            let piece = held[t.from][t.range.start - from.start..t.range.end - from.start].to_vec();
            let at = to.len() + (t.range.start - to.end);
            held[t.to][at..at + piece.len()].copy_from_slice(&piece);
        }
        let mut out = Vec::with_capacity(plan.outputs());
        for (d, r) in layout.iter().enumerate() {
            for job in plan.jobs(d) {
                let input = &held[d][job.inputs.start - r.start..job.inputs.end - r.start];
                out.extend(self.sim.sliding_average(kernel, input, window)?);
            }
        }
        Ok(out)
    }

    /// `op` along `axis` of the `rows × cols` matrix `x`: each device's rows reduced on
    /// their own (rows), or each device's row segments' partials gathered and combined by
    /// the second pass (columns); a single-pass column reduction on one device.
    pub fn reduce_axis(
        &self, op: AxisOp, axis: Axis, x: &[f32], rows: usize, cols: usize,
    ) -> Result<Vec<f32>> {
        let (shape, _, split) = shard::axis_split(op, axis, x.len(), rows, cols, self.devices)?;
        let layout = match split {
            AxisSplit::Empty => return Ok(vec![]),
            AxisSplit::One => return self.sim.reduce_axis(op, axis, x, rows, cols),
            AxisSplit::Rows(layout) => layout,
        };
        let part_of = |r: &Range<usize>| &x[r.start * cols..r.end * cols];
        let mut out = vec![];
        match axis {
            Axis::Rows => {
                for r in layout.iter().filter(|r| !r.is_empty()) {
                    out.extend(self.sim.reduce_axis(op, axis, part_of(r), r.len(), cols)?);
                }
            }
            Axis::Cols => {
                let plan = shape.cols_plan();
                for r in layout.iter().filter(|r| !r.is_empty()) {
                    let part = shard::cols_part_plan(&plan, r.len());
                    let (rows, c) = (r.len() as u32, cols as u32);
                    out.extend(self.sim.cols_pass(op, part_of(r), rows, c, &part, 1.0)?);
                }
                let finish = shape.finish_plan(&plan);
                let scale = op.scale(shape.rows);
                let c = cols as u32;
                out = self
                    .sim
                    .cols_pass(op, &out, plan.segments, c, &finish, scale)?;
            }
        }
        Ok(out)
    }
}

/// `tuned` on the simulator, as [`Tuned::run`] runs it on a GPU.
fn run_tuned(
    sim: &Simulator, tuned: Tuned, a: &[f32], b: &[f32], shape: MatmulShape,
) -> Result<Vec<f32>> {
    match tuned {
        Tuned::Config(k) => sim.matmul(MatmulKernel::Sgemm(k), TileWidth::Tw16, a, b, shape),
        Tuned::SplitK(s) => sim.matmul_split_k(s, a, b, shape),
        Tuned::Serial(s) => sim.matmul_serial_split_k(s, a, b, shape),
        Tuned::Stream(s) => sim.matmul_stream_k(s, a, b, shape),
        Tuned::Rows(r) => sim.matmul_rows(r, a, b, shape),
        Tuned::Repacked(k) => sim.matmul_repacked(k, a, b, shape),
        Tuned::Tiled(r) => sim.matmul_tiles(r, a, b, shape),
        Tuned::Packed(i) => sim.matmul_packed(PACKED_CONFIGS[i], a, b, shape),
        Tuned::Half(r) if r.config.input == Input::Tf32 => sim.matmul_tf32_ws(r, a, b, shape),
        Tuned::Half(r) => sim.matmul_half_from_f32(r, a, b, shape),
        Tuned::Gemv(g) => sim.matmul_gemv(g, a, b, shape),
    }
}
