//! Work spread over several devices: which rows, elements and chunks each device takes, which
//! halo it needs from its neighbours, and in which order partial results are combined. Pure
//! functions of the problem and the device count; the multi-GPU handle
//! ([`crate::multi::Gpus`]) and the simulated devices ([`crate::multi::simulated`]) run what
//! these describe.
//!
//! Every split here is chosen so that a device count never changes a result's bits:
//!
//! - A product `C = A·B` is split by rows of `A` and `C` at multiples of its kernel's block
//!   rows ([`crate::plan::kernels::MatmulKernel::block_rows`], or the autotuned choice's).
//!   Each device then runs the kernel one GPU would run on exactly the block rows one GPU's
//!   blocks would cover, and no output element's summation changes: the parts are
//!   bit-identical to the rows of one GPU's product.
//! - A flat vector (a sum, a sliding average) is cut into chunks of a fixed size
//!   ([`VECTOR_CHUNK`] unless the caller sets another) that do not depend on the device
//!   count; a device takes a run of whole chunks. Each chunk is summed, or averaged, on its
//!   own, the same way on one device or on eight, and the chunks' partial sums are combined
//!   in chunk order by one fixed reduction ([`Chunks`]). So a sharded sum is bit-identical
//!   for any number of devices, and equal to one GPU's single-kernel sum where the input
//!   is one chunk.
//! - A column reduction is split at multiples of its first pass's row segment, so that each
//!   device computes exactly the segment partials one GPU's first pass computes, and the
//!   one GPU's second pass combines them ([`axis_rows_align`]).

use crate::problem::axis::{Axis, AxisOp, AxisShape};
use crate::problem::error::{Error, Result};
use kernels_gpu::reduce::cols::ColumnPlan;
use std::ops::Range;

/// The least common multiple of `a` and `b` (both at least 1): the rows a split must land
/// on for two kernels' blocks at once (a row split's two parts).
pub fn lcm(a: u32, b: u32) -> u32 {
    let (mut x, mut y) = (a.max(1), b.max(1));
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a.max(1) / x * b.max(1)
}

/// Elements of one chunk of a sharded vector: 2²⁸ floats (1 GiB). A sum of 2³² floats is
/// then 16 chunks, whole runs of them for 1, 2, 4, 8 or 16 devices; each chunk is long
/// enough that its launches' ramp-up and tail are a small part of its time, and short
/// enough for the kernels' 32-bit indices (with a window of up to about 2³¹).
pub const VECTOR_CHUNK: usize = 1 << 28;

/// Splits `len` items into one contiguous range per weight, in order, cut only at multiples
/// of `align` (the last range ends at `len`), with the units of `align` items dealt in
/// proportion to the weights (the largest remainders first, ties to the lower index). A
/// weight of 0 gets an empty range; all weights 0 (or none positive and finite) share
/// evenly. Ranges may be empty where there are fewer units than devices.
pub fn split(len: usize, weights: &[f64], align: usize) -> Vec<Range<usize>> {
    let parts = weights.len();
    if parts == 0 {
        return vec![];
    }
    let align = align.max(1);
    let units = len.div_ceil(align);
    let usable = |w: f64| if w.is_finite() && w > 0.0 { w } else { 0.0 };
    let total: f64 = weights.iter().map(|&w| usable(w)).sum();
    let weights: Vec<f64> = if total > 0.0 {
        weights.iter().map(|&w| usable(w) / total).collect()
    } else {
        vec![1.0 / parts as f64; parts]
    };
    let exact: Vec<f64> = weights.iter().map(|w| w * units as f64).collect();
    let mut share: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
    let dealt: usize = share.iter().sum();
    let mut order: Vec<usize> = (0..parts).filter(|&i| weights[i] > 0.0).collect();
    order.sort_by(|&i, &j| {
        let (ri, rj) = (exact[i] - exact[i].floor(), exact[j] - exact[j].floor());
        rj.total_cmp(&ri).then(i.cmp(&j))
    });
    for &i in order.iter().cycle().take(units.saturating_sub(dealt)) {
        share[i] += 1;
    }
    let mut unit = 0;
    share
        .iter()
        .map(|&s| {
            let r = (unit * align).min(len)..((unit + s) * align).min(len);
            unit += s;
            r
        })
        .collect()
}

/// [`split`] with equal weights.
pub fn even(len: usize, parts: usize, align: usize) -> Vec<Range<usize>> {
    split(len, &vec![1.0; parts], align)
}

/// The rows of a `rows × cols` reduction along `axis` that a split must land on: any row
/// for a reduction of each row; for a reduction of each column, the row segment of its
/// first pass (where it has more than one), so that each device computes whole segments'
/// partials. `None` where the column reduction is one pass (a single segment): it cannot be
/// split without changing its bits, and runs on one device.
pub fn axis_rows_align(shape: AxisShape, axis: Axis) -> Option<usize> {
    match axis {
        Axis::Rows => Some(1),
        Axis::Cols => {
            let plan = shape.cols_plan();
            (plan.segments > 1).then_some(plan.rows_per_segment as usize)
        }
    }
}

/// The first pass of a column reduction over `rows` of its rows, which start at a segment
/// of `plan` (the whole matrix's): the same segments, as many as those rows hold.
pub fn cols_part_plan(plan: &ColumnPlan, rows: usize) -> ColumnPlan {
    ColumnPlan {
        segments: rows.div_ceil(plan.rows_per_segment.max(1) as usize) as u32,
        ..*plan
    }
}

/// How a reduction along an axis spreads over devices ([`axis_split`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AxisSplit {
    /// No outputs: nothing to run.
    Empty,
    /// A single-pass column reduction: on one device.
    One,
    /// Rows of the matrix per device, cut at [`axis_rows_align`].
    Rows(Vec<Range<usize>>),
}

/// The checked shape of a reduction of `len` values as `rows × cols` by `op` along `axis`,
/// its outputs, and how it spreads over `devices` evenly.
pub fn axis_split(
    op: AxisOp, axis: Axis, len: usize, rows: usize, cols: usize, devices: usize,
) -> Result<(AxisShape, usize, AxisSplit)> {
    let (shape, outputs) = AxisShape::checked(op, axis, len, rows, cols)?;
    let split = match (outputs, axis_rows_align(shape, axis)) {
        (0, _) => AxisSplit::Empty,
        (_, None) => AxisSplit::One,
        (_, Some(align)) => AxisSplit::Rows(even(rows, devices, align)),
    };
    Ok((shape, outputs, split))
}

/// A flat vector of `len` elements cut into chunks of `chunk`: chunk `c` is
/// `c·chunk .. min((c + 1)·chunk, len)`. The sum of the vector is the sum, by one two-pass
/// reduction, of the chunks' sums in chunk order, whichever device summed each chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunks {
    pub len: usize,
    pub chunk: usize,
}

impl Chunks {
    /// [`Error::InvalidChunk`] for a chunk that is not a positive multiple of 4 (the
    /// kernels read 16 bytes at a time, so every chunk must start 16-byte aligned).
    pub fn new(len: usize, chunk: usize) -> Result<Self> {
        if chunk == 0 || !chunk.is_multiple_of(4) {
            return Err(Error::InvalidChunk { chunk });
        }
        Ok(Self { len, chunk })
    }

    /// Chunks in all (none for an empty vector).
    pub fn count(&self) -> usize {
        self.len.div_ceil(self.chunk)
    }

    /// Chunk `c`'s elements.
    pub fn range(&self, c: usize) -> Range<usize> {
        let start = (c * self.chunk).min(self.len);
        start..(start + self.chunk).min(self.len)
    }

    /// The chunks inside `elements`, a device's range of whole chunks (as [`Chunks::shards`]
    /// makes them).
    pub fn within(&self, elements: &Range<usize>) -> Range<usize> {
        elements.start.div_ceil(self.chunk)..elements.end.div_ceil(self.chunk)
    }

    /// Each device's elements, runs of whole chunks in proportion to `weights`.
    pub fn shards(&self, weights: &[f64]) -> Vec<Range<usize>> {
        split(self.len, weights, self.chunk)
    }
}

/// The sliding average of `n` values over windows of `window`, spread over devices that hold
/// the input in `shards` (contiguous, in order, starting at 0 and ending at `n`, cut at
/// multiples of `chunk`). Output `i` is the mean of `a[i .. i + window]`; the outputs are
/// cut into chunks of `chunk` like the input, and output chunk `c` is computed, on whichever
/// device holds input element `c·chunk`, from its own view of the input,
/// `a[c·chunk .. min((c + 1)·chunk + window - 1, n)]`, by one launch: the same launch on
/// one device or on eight, so every device count gives the same bits. A device's last
/// chunks read up to `window - 1` values past its shard: the halo, sent by the devices
/// after it ([`SlidingPlan::transfers`]) into room kept after its shard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlidingPlan {
    pub n: usize,
    pub window: usize,
    pub chunk: usize,
    pub shards: Vec<Range<usize>>,
}

/// Elements `range` of the input, sent by device `from` to device `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub from: usize,
    pub to: usize,
    pub range: Range<usize>,
}

/// One launch of a sliding average: outputs `outputs` from inputs `inputs` (both global
/// indices; `inputs.start == outputs.start`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlidingJob {
    pub outputs: Range<usize>,
    pub inputs: Range<usize>,
}

impl SlidingPlan {
    /// Checks that `shards` cover `0..n` in order at multiples of `chunk` (the shards
    /// [`Chunks::shards`] makes), and that the window is at least 1
    /// ([`Error::InvalidWindow`]); [`Error::ShardLayout`] otherwise.
    pub fn new(n: usize, window: usize, chunk: usize, shards: Vec<Range<usize>>) -> Result<Self> {
        if window == 0 {
            return Err(Error::InvalidWindow { window, len: n });
        }
        Chunks::new(n, chunk)?;
        check_layout(n, chunk, &shards)?;
        Ok(Self {
            n,
            window,
            chunk,
            shards,
        })
    }

    /// `n - window + 1` outputs, or none where the window is longer than the input.
    pub fn outputs(&self) -> usize {
        (self.n + 1).saturating_sub(self.window)
    }

    /// The outputs device `d` computes: those that start in its shard.
    pub fn device_outputs(&self, d: usize) -> Range<usize> {
        let s = &self.shards[d];
        let out = self.outputs();
        s.start.min(out)..s.end.min(out)
    }

    /// The inputs device `d` reads: its shard's from where its outputs start, and the
    /// halo after it. Empty where it has no outputs.
    pub fn device_inputs(&self, d: usize) -> Range<usize> {
        let o = self.device_outputs(d);
        if o.is_empty() {
            return o;
        }
        o.start..(o.end + self.window - 1).min(self.n)
    }

    /// The halo of device `d`: the inputs it reads past its shard.
    pub fn halo(&self, d: usize) -> Range<usize> {
        let end = self.device_inputs(d).end;
        let start = self.shards[d].end;
        start..end.max(start)
    }

    /// The most halo any device needs: the room to keep after each shard.
    pub fn halo_room(&self) -> usize {
        (0..self.shards.len())
            .map(|d| self.halo(d).len())
            .max()
            .unwrap_or(0)
    }

    /// What each device sends: every piece of every halo, from the device whose shard
    /// holds it, in order of the receiving device, then of the elements. A halo longer
    /// than the next shard comes from several devices.
    pub fn transfers(&self) -> Vec<Transfer> {
        let mut out = vec![];
        for to in 0..self.shards.len() {
            let halo = self.halo(to);
            for (from, s) in self.shards.iter().enumerate().skip(to + 1) {
                let piece = halo.start.max(s.start)..halo.end.min(s.end);
                if !piece.is_empty() {
                    out.push(Transfer {
                        from,
                        to,
                        range: piece,
                    });
                }
            }
        }
        out
    }

    /// The launches of device `d`, one per output chunk it computes.
    pub fn jobs(&self, d: usize) -> Vec<SlidingJob> {
        let outputs = self.device_outputs(d);
        let mut jobs = vec![];
        let mut start = outputs.start;
        while start < outputs.end {
            let end = ((start / self.chunk + 1) * self.chunk).min(outputs.end);
            jobs.push(SlidingJob {
                outputs: start..end,
                inputs: start..(end + self.window - 1).min(self.n),
            });
            start = end;
        }
        jobs
    }
}

/// [`Error::ShardLayout`] unless `shards` cover `0..len` in order, each starting at a
/// multiple of `align` (or, empty, at the end).
pub fn check_layout(len: usize, align: usize, shards: &[Range<usize>]) -> Result<()> {
    let mut at = 0;
    for s in shards {
        let aligned = s.start.is_multiple_of(align.max(1)) || s.start == len;
        if s.start != at || s.end < s.start || !aligned {
            return Err(Error::ShardLayout {
                len,
                align,
                shards: shards.to_vec(),
            });
        }
        at = s.end;
    }
    if at != len || shards.is_empty() {
        return Err(Error::ShardLayout {
            len,
            align,
            shards: shards.to_vec(),
        });
    }
    Ok(())
}

/// What one device's part of a product cost last time: the milliseconds before its
/// compute could start (its operands arriving), of its compute over `rows` rows, and of its
/// output's way back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartTiming {
    pub rows: usize,
    pub wait_ms: f64,
    pub compute_ms: f64,
    pub gather_ms: f64,
}

/// Weights for [`split`] that would make every part of the next run of the same product end
/// at once, from `last`: a device's time is taken as its wait plus its rows times its
/// measured time per row (compute and gather), and the rows are dealt so that these are
/// equal. `None` where the timings say nothing (no device computed any rows, or a time
/// that is not finite and positive): keep the last split.
pub fn balance(last: &[PartTiming]) -> Option<Vec<f64>> {
    let per_row: Vec<Option<f64>> = last
        .iter()
        .map(|p| {
            let t = (p.compute_ms + p.gather_ms) / p.rows as f64;
            (p.rows > 0 && t.is_finite() && t > 0.0 && p.wait_ms.is_finite()).then_some(t)
        })
        .collect();
    let rows: usize = last.iter().map(|p| p.rows).sum();
    if rows == 0 || per_row.iter().all(Option::is_none) {
        return None;
    }
    // A device that did no rows last time gets the slowest device's rate.
    let slowest = per_row.iter().flatten().copied().fold(0.0, f64::max);
    let rate: Vec<f64> = per_row.iter().map(|t| t.unwrap_or(slowest)).collect();
    let wait: Vec<f64> = last.iter().map(|p| p.wait_ms.max(0.0)).collect();
    // The end time T at which Σ max(0, (T - wait) / rate) = rows, by bisection.
    let rows_at = |t: f64| -> f64 {
        wait.iter()
            .zip(&rate)
            .map(|(w, r)| ((t - w) / r).max(0.0))
            .sum()
    };
    let (mut lo, mut hi) = (0.0, wait.iter().copied().fold(0.0, f64::max));
    while rows_at(hi) < rows as f64 {
        hi = 2.0 * hi + rate.iter().copied().fold(0.0, f64::max) * rows as f64;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if rows_at(mid) < rows as f64 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(
        wait.iter()
            .zip(&rate)
            .map(|(w, r)| ((hi - w) / r).max(0.0))
            .collect(),
    )
}

/// A product's `b` in pieces for every device but the root ([`crate::multi::gemm`]):
/// `per_device` pieces for each of `senders` devices, cut from `len` elements at multiples
/// of `align`, each with its owner (1 to `senders`, in turn), which receives it from the root
/// and passes it on. Empty pieces (a short `b`) are left out.
pub fn pieces(
    len: usize, senders: usize, per_device: usize, align: usize,
) -> Vec<(Range<usize>, usize)> {
    if senders == 0 {
        return vec![];
    }
    even(len, senders * per_device, align)
        .into_iter()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .map(|(j, r)| (r, 1 + j % senders))
        .collect()
}

/// A device's `rows` in the steps it runs them in ([`crate::multi::gemm`]): two, the first
/// whole waves of `wave` rows and about half the rows, so that the steps leave no more
/// partly filled waves than the rows in one launch; one where half the rows are less than
/// a wave; none for no rows.
pub fn steps(rows: Range<usize>, wave: usize) -> Vec<Range<usize>> {
    if rows.is_empty() {
        return vec![];
    }
    let first = (rows.len() / 2 / wave.max(1)) * wave.max(1);
    match first {
        0 => vec![rows],
        _ => vec![rows.start..rows.start + first, rows.start + first..rows.end],
    }
}

/// One launch of a device's part of a product ([`crate::multi::gemm`]): rows of `a` and `c`
/// times one panel of `b`'s columns, or all of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    pub rows: Range<usize>,
    /// Its columns: panel `p` of [`panels`], or every column (`None`).
    pub panel: Option<usize>,
}

/// `n` columns of `b` in `count` panels cut at multiples of `align` (a kernel's block
/// columns), so that a device can start on the first before the rest of `b` has arrived.
/// Empty panels (a narrow `b`) are left out.
pub fn panels(n: usize, count: usize, align: usize) -> Vec<Range<usize>> {
    even(n, count.max(1), align)
        .into_iter()
        .filter(|r| !r.is_empty())
        .collect()
}

/// A device's `rows` as the launches it runs them in, in order ([`crate::multi::gemm`]).
/// With more than one panel (of `panels`) and at least two waves of `panel_wave` rows (a
/// wave of blocks over one panel's columns): the first wave's rows times each panel in
/// turn, so that the first launch needs its few rows of `a` and one panel of `b`; then the
/// other rows over all columns, their last wave of `wave` rows (a wave over all columns) a
/// launch of its own where there is more than one, so that only its rows of `c` are left to
/// send once the device has computed. Otherwise the [`steps`] of all the rows, each over all
/// columns. None for no rows.
pub fn tasks(rows: Range<usize>, panels: usize, panel_wave: usize, wave: usize) -> Vec<Task> {
    let whole = |rows: Range<usize>| Task { rows, panel: None };
    if panels > 1 && panel_wave > 0 && rows.len() >= 2 * panel_wave {
        let rest = rows.start + panel_wave..rows.end;
        let last = match wave {
            w if w > 0 && rest.len() >= 2 * w => {
                vec![rest.start..rest.end - w, rest.end - w..rest.end]
            }
            _ => vec![rest],
        };
        return (0..panels)
            .map(|p| Task {
                rows: rows.start..rows.start + panel_wave,
                panel: Some(p),
            })
            .chain(last.into_iter().map(whole))
            .collect();
    }
    steps(rows, wave).into_iter().map(whole).collect()
}

/// The panels a product gathered on the root sends `b`'s columns in, where its configuration
/// allows ([`product_plan`]): another device's first launch waits for one of them.
pub const PRODUCT_PANELS: usize = 4;

/// A product gathered on the root as its devices run it ([`crate::multi::gemm`]): the panels
/// of `b`'s columns the other devices receive it in, and each device's launches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProductPlan {
    pub panels: Vec<Range<usize>>,
    pub tasks: Vec<Vec<Task>>,
}

/// The launches of a product of `n` columns split by rows as `layout` (device 0 the root).
/// `panels`: `b`'s columns in the panels the configuration could take ([`panels`]; one where
/// it cannot). Where the product is `stepped` (its operands all come from the root and its
/// result goes back there), every other device with rows runs them in steps, sized by
/// `wave(d, rows, cols)`: device `d`'s rows of a wave of blocks over `cols` columns of a part
/// of `rows` rows (a GPU's occupancy); else each device runs its rows in one launch. The
/// panels are kept only where every other device with rows runs its first wave over them
/// ([`tasks`]), since each receives `b` alike; else `b` is one panel.
pub fn product_plan(
    layout: &[Range<usize>], panels: Vec<Range<usize>>, n: usize, stepped: bool,
    mut wave: impl FnMut(usize, usize, usize) -> Result<usize>,
) -> Result<ProductPlan> {
    // Each device's rows of a wave over all columns and over the first panel; (0, 0) for
    // one launch.
    let mut waves = vec![(0, 0); layout.len()];
    for (d, r) in layout.iter().enumerate().skip(1) {
        if stepped && !r.is_empty() {
            let panel_wave = match panels.first() {
                Some(c) if panels.len() > 1 => wave(d, r.len(), c.len())?,
                _ => 0,
            };
            waves[d] = (wave(d, r.len(), n)?, panel_wave);
        }
    }
    let paneled = panels.len() > 1
        && layout
            .iter()
            .zip(&waves)
            .skip(1)
            .all(|(r, &(_, pw))| r.is_empty() || (pw > 0 && r.len() >= 2 * pw));
    let panels = match paneled {
        true => panels,
        false => self::panels(n, 1, 1),
    };
    let tasks = layout
        .iter()
        .zip(waves)
        .map(|(r, (wave, panel_wave))| match wave {
            0 => tasks(r.clone(), 1, 0, r.len()),
            _ => tasks(r.clone(), panels.len(), panel_wave, wave),
        })
        .collect();
    Ok(ProductPlan { panels, tasks })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_b_in_turn_among_the_devices() {
        for len in [0usize, 1, 1000, 4096, 16384 * 16384] {
            for senders in 1..=7 {
                let p = pieces(len, senders, 8, 1024);
                let ranges: Vec<Range<usize>> = p.iter().map(|(r, _)| r.clone()).collect();
                // Contiguous, in order, covering b.
                assert_eq!(ranges.iter().map(|r| r.len()).sum::<usize>(), len);
                for w in ranges.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                }
                for (j, (r, owner)) in p.iter().enumerate() {
                    assert!(!r.is_empty());
                    assert!((1..=senders).contains(owner), "{owner}");
                    if len >= senders * 8 * 1024 {
                        // Every piece is there: the owners take turns.
                        assert_eq!(*owner, 1 + j % senders);
                        assert_eq!(r.start % 1024, 0);
                    }
                }
            }
        }
        assert!(pieces(100, 0, 8, 1).is_empty());
    }

    #[test]
    fn steps_are_whole_waves_then_the_rest() {
        // 3968 rows in waves of 256: 1792 (7 waves), then 2176.
        assert_eq!(steps(100..4068, 256), vec![100..1892, 1892..4068]);
        // Half the rows under a wave: one step.
        assert_eq!(steps(0..300, 256), vec![0..300]);
        assert_eq!(steps(5..5, 256), Vec::<Range<usize>>::new());
        for (len, wave) in [(1usize, 1usize), (7, 2), (3840, 256), (4097, 128), (10, 0)] {
            let s = steps(3..3 + len, wave);
            assert_eq!(s.first().unwrap().start, 3);
            assert_eq!(s.last().unwrap().end, 3 + len);
            if s.len() == 2 {
                assert_eq!(s[0].end, s[1].start);
                assert_eq!(s[0].len() % wave.max(1), 0);
                assert!(s[0].len() <= len / 2);
            }
        }
    }

    #[test]
    fn panels_cover_the_columns_at_block_multiples() {
        assert_eq!(
            panels(16384, 4, 128),
            vec![0..4096, 4096..8192, 8192..12288, 12288..16384]
        );
        // Fewer blocks than panels: one panel per block, none empty.
        assert_eq!(panels(200, 4, 128), vec![0..128, 128..200]);
        assert_eq!(panels(5, 0, 128), vec![0..5]);
        assert!(panels(0, 4, 128).is_empty());
        for (n, count, align) in [(1usize, 4usize, 128usize), (1000, 3, 64), (16385, 4, 128)] {
            let p = panels(n, count, align);
            assert_eq!(p.first().unwrap().start, 0);
            assert_eq!(p.last().unwrap().end, n);
            for w in p.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert_eq!(w[0].end % align, 0);
            }
        }
    }

    #[test]
    fn tasks_take_the_first_wave_panel_by_panel_then_the_rest_whole() {
        let t = tasks(4608..8448, 4, 1024, 256);
        let rows: Vec<Range<usize>> = t.iter().map(|t| t.rows.clone()).collect();
        let panel: Vec<Option<usize>> = t.iter().map(|t| t.panel).collect();
        // The other 2816 rows in two steps, the last a wave.
        assert_eq!(
            rows,
            [vec![4608..5632; 4], vec![5632..8192, 8192..8448]].concat()
        );
        assert_eq!(panel, vec![Some(0), Some(1), Some(2), Some(3), None, None]);
        // Under two panel waves, or one panel: the steps over all columns.
        for (len, panels, panel_wave) in [
            (2047usize, 4usize, 1024usize),
            (4096, 1, 1024),
            (4096, 4, 0),
        ] {
            let t = tasks(0..len, panels, panel_wave, 256);
            assert!(t.iter().all(|t| t.panel.is_none()));
            let rows: Vec<Range<usize>> = t.iter().map(|t| t.rows.clone()).collect();
            assert_eq!(rows, steps(0..len, 256));
        }
        assert!(tasks(3..3, 4, 1024, 256).is_empty());
        // Fewer than two waves after the panels' rows: one launch.
        let t = tasks(0..2500, 4, 1024, 1000);
        assert_eq!(t.last().unwrap().rows, 1024..2500);
        assert_eq!(t.len(), 5);
    }

    #[test]
    fn a_product_takes_panels_only_where_every_other_device_can() {
        let layout = vec![0..4352, 4352..8320, 8320..12288, 12288..16384];
        let cols = panels(16384, PRODUCT_PANELS, 128);
        // A wave is 264 blocks of 128 × 128: 2 block rows over all columns, 8 over a panel.
        let wave = |_: usize, _: usize, cols: usize| Ok(264 / cols.div_ceil(128) * 128);
        let plan = product_plan(&layout, cols.clone(), 16384, true, wave).unwrap();
        assert_eq!(plan.panels, cols);
        // The root in one launch; the others over the four panels, then two launches.
        assert_eq!(
            plan.tasks[0],
            vec![Task {
                rows: 0..4352,
                panel: None
            }]
        );
        for (d, t) in plan.tasks.iter().enumerate().skip(1) {
            assert_eq!(t.len(), 6, "device {d}");
            assert_eq!(t[0].rows, layout[d].start..layout[d].start + 1024);
        }
        // A device with too few rows for two panel waves: `b` in one panel, steps for all.
        let short = vec![0..8000, 8000..9000, 9000..16384];
        let plan = product_plan(&short, cols.clone(), 16384, true, wave).unwrap();
        assert_eq!(plan.panels, vec![0..16384]);
        assert!(plan.tasks.iter().flatten().all(|t| t.panel.is_none()));
        assert_eq!(plan.tasks[1].len(), 2);
        // Not stepped: one launch per device with rows, `b` in one panel.
        let plan = product_plan(&layout, cols, 16384, false, wave).unwrap();
        assert!(plan.tasks.iter().all(|t| t.len() == 1));
        assert_eq!(plan.panels, vec![0..16384]);
        // A failing wave query is the plan's error.
        let failing = |_: usize, _: usize, _: usize| Err(Error::InvalidChunk { chunk: 0 });
        assert!(product_plan(&layout, panels(16384, 4, 128), 16384, true, failing).is_err());
    }

    fn lens(r: &[Range<usize>]) -> Vec<usize> {
        r.iter().map(|r| r.len()).collect()
    }

    #[test]
    fn lcm_of_block_rows() {
        assert_eq!(lcm(128, 64), 128);
        assert_eq!(lcm(192, 128), 384);
        assert_eq!(lcm(0, 16), 16);
    }

    #[test]
    fn splits_are_contiguous_aligned_and_cover_everything() {
        for len in [0usize, 1, 255, 256, 257, 1000, 16384, 16385] {
            for parts in 1..=5 {
                for align in [1usize, 3, 128, 256] {
                    let s = even(len, parts, align);
                    assert_eq!(s.len(), parts);
                    check_layout(len, align, &s).unwrap();
                    // Even: no two parts differ by more than one unit (the last may be
                    // short).
                    let units: Vec<usize> = s.iter().map(|r| r.len().div_ceil(align)).collect();
                    let (lo, hi) = (units.iter().min().unwrap(), units.iter().max().unwrap());
                    assert!(hi - lo <= 1, "{len} {parts} {align}: {s:?}");
                }
            }
        }
        assert_eq!(lens(&even(16384, 2, 256)), [8192, 8192]);
        assert_eq!(lens(&even(1000, 3, 128)), [384, 384, 232]);
        // Fewer units than parts: the first ones get them.
        assert_eq!(lens(&even(300, 4, 128)), [128, 128, 44, 0]);
    }

    #[test]
    fn weights_share_units_in_proportion() {
        let s = split(16384, &[0.5158, 0.4842], 256);
        assert_eq!(lens(&s), [33 * 256, 31 * 256]);
        assert_eq!(lens(&split(1000, &[0.0, 1.0], 1)), [0, 1000]);
        // Nothing usable: even.
        assert_eq!(lens(&split(10, &[0.0, f64::NAN], 1)), [5, 5]);
        assert_eq!(lens(&split(10, &[-1.0, 3.0, 1.0], 1)), [0, 8, 2]);
    }

    #[test]
    fn chunks_are_fixed_whatever_the_device_count() {
        let c = Chunks::new(14, 4).unwrap();
        assert_eq!(c.count(), 4);
        assert_eq!(
            (0..4).map(|i| c.range(i)).collect::<Vec<_>>(),
            [0..4, 4..8, 8..12, 12..14]
        );
        for parts in 1..=5 {
            let shards = c.shards(&vec![1.0; parts]);
            let chunks: Vec<usize> = shards.iter().flat_map(|s| c.within(s)).collect();
            assert_eq!(chunks, [0, 1, 2, 3], "{parts}: {shards:?}");
        }
        assert_eq!(Chunks::new(0, 4).unwrap().count(), 0);
        for bad in [0, 3, 6] {
            assert!(matches!(
                Chunks::new(5, bad),
                Err(Error::InvalidChunk { chunk }) if chunk == bad
            ));
        }
    }

    #[test]
    fn sliding_halos_come_from_the_devices_after() {
        // 4 devices of 8 values, chunks of 4, window 11: device 0 needs 10 values past its
        // shard, from devices 1 and 2.
        let shards = vec![0..8, 8..16, 16..24, 24..32];
        let p = SlidingPlan::new(32, 11, 4, shards).unwrap();
        assert_eq!(p.outputs(), 22);
        assert_eq!(p.device_outputs(0), 0..8);
        assert_eq!(p.device_outputs(2), 16..22);
        assert_eq!(p.device_outputs(3), 22..22);
        assert_eq!(p.halo(0), 8..18);
        assert_eq!(p.halo(2), 24..32);
        assert!(p.halo(3).is_empty());
        assert_eq!(p.halo_room(), 10);
        assert_eq!(
            p.transfers(),
            [
                Transfer {
                    from: 1,
                    to: 0,
                    range: 8..16
                },
                Transfer {
                    from: 2,
                    to: 0,
                    range: 16..18
                },
                Transfer {
                    from: 2,
                    to: 1,
                    range: 16..24
                },
                Transfer {
                    from: 3,
                    to: 1,
                    range: 24..26
                },
                Transfer {
                    from: 3,
                    to: 2,
                    range: 24..32
                },
            ]
        );
        assert_eq!(
            p.jobs(2),
            [
                SlidingJob {
                    outputs: 16..20,
                    inputs: 16..30
                },
                SlidingJob {
                    outputs: 20..22,
                    inputs: 20..32
                },
            ]
        );
        // Every output is computed once, from the inputs of its chunk.
        let all: Vec<SlidingJob> = (0..4).flat_map(|d| p.jobs(d)).collect();
        let one = SlidingPlan::new(32, 11, 4, std::iter::once(0..32).collect()).unwrap();
        assert_eq!(all, one.jobs(0));
        assert!(one.transfers().is_empty());
    }

    #[test]
    fn window_two_needs_one_value_from_the_next_device() {
        let p = SlidingPlan::new(12, 2, 4, vec![0..4, 4..8, 8..12]).unwrap();
        assert_eq!(
            p.transfers(),
            [
                Transfer {
                    from: 1,
                    to: 0,
                    range: 4..5
                },
                Transfer {
                    from: 2,
                    to: 1,
                    range: 8..9
                },
            ]
        );
        assert_eq!(p.halo_room(), 1);
        // A window longer than the input: no outputs, nothing sent.
        let p = SlidingPlan::new(12, 13, 4, vec![0..4, 4..8, 8..12]).unwrap();
        assert_eq!(p.outputs(), 0);
        assert!(p.transfers().is_empty() && (0..3).all(|d| p.jobs(d).is_empty()));
    }

    #[test]
    fn layouts_are_checked() {
        assert!(SlidingPlan::new(12, 0, 4, std::iter::once(0..12).collect()).is_err());
        for bad in [
            vec![0..4, 5..12],
            vec![0..6, 6..12],
            vec![0..4, 4..11],
            vec![],
        ] {
            assert!(
                matches!(
                    SlidingPlan::new(12, 2, 4, bad.clone()),
                    Err(Error::ShardLayout {
                        len: 12,
                        align: 4,
                        ..
                    })
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn balance_equalises_the_end_times() {
        // Device 1 waits 5 ms for its operands; both compute 100 rows in 10 ms.
        let t = |rows, wait_ms| PartTiming {
            rows,
            wait_ms,
            compute_ms: rows as f64 * 0.1,
            gather_ms: 0.0,
        };
        let w = balance(&[t(100, 0.0), t(100, 5.0)]).unwrap();
        // 0.1·r0 = 5 + 0.1·r1, r0 + r1 = 200: r0 = 125, r1 = 75.
        assert!(
            (w[0] - 125.0).abs() < 1e-6 && (w[1] - 75.0).abs() < 1e-6,
            "{w:?}"
        );
        // A device that waited longer than the whole product takes nothing.
        let w = balance(&[t(100, 0.0), t(100, 50.0)]).unwrap();
        assert!((w[0] - 200.0).abs() < 1e-6 && w[1] == 0.0, "{w:?}");
        assert_eq!(balance(&[t(0, 0.0), t(0, 1.0)]), None);
        let broken = PartTiming {
            compute_ms: f64::NAN,
            ..t(10, 0.0)
        };
        assert_eq!(balance(&[broken]), None);
    }
}
