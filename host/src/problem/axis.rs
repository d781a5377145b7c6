//! Reductions along one dimension of a row-major 2-D tensor, as minitorch's
//! `reduce(fn, dim)`: sum, max or mean of every row or of every column. Kernel catalogue,
//! launch shapes, validation, the CPU reference and the error bound.

use crate::problem::error::{Error, Result};
use kernels_gpu::catalogue::{
    ColsEntry, Extent, REDUCE_COLS, REDUCE_ROWS, RowsEntry, VectorConfig,
};
use kernels_gpu::nvptx_device::launch::Launch;
use kernels_gpu::reduce::cols::{ColumnPlan, column_plan};
use kernels_gpu::reduce::rows::row_group;
use kernels_gpu::reduce::{BLOCK, UNROLL};

/// What a reduction computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AxisOp {
    /// The f32 sum (0 for an empty dimension).
    Sum,
    /// The largest value; NaN if any value is NaN; -0 < +0. An empty dimension has none:
    /// [`Error::EmptyReduction`].
    Max,
    /// The sum times `1 / len` (NaN for an empty dimension, as `torch.mean`).
    Mean,
}

impl AxisOp {
    pub const ALL: [AxisOp; 3] = [Self::Sum, Self::Max, Self::Mean];

    pub fn name(self) -> &'static str {
        match self {
            Self::Sum => "sum",
            Self::Max => "max",
            Self::Mean => "mean",
        }
    }

    /// The catalogue row of the kernel: the sum's for a mean.
    fn row(self) -> usize {
        match self {
            Self::Sum | Self::Mean => 0,
            Self::Max => 1,
        }
    }

    /// The factor the last pass multiplies by, for a dimension of `len`.
    pub fn scale(self, len: u32) -> f32 {
        match self {
            Self::Sum | Self::Max => 1.0,
            Self::Mean => 1.0 / len as f32,
        }
    }
}

/// Which dimension is reduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Axis {
    /// Each row to one value (`dim=1`): `rows` outputs.
    Rows,
    /// Each column to one value (`dim=0`): `cols` outputs.
    Cols,
}

impl Axis {
    pub const ALL: [Axis; 2] = [Self::Rows, Self::Cols];

    pub fn name(self) -> &'static str {
        match self {
            Self::Rows => "rows",
            Self::Cols => "cols",
        }
    }
}

/// The row kernel of `op`.
pub fn rows_config(op: AxisOp) -> &'static VectorConfig<RowsEntry> {
    &REDUCE_ROWS[op.row()]
}

/// The column kernel of `op`.
pub fn cols_config(op: AxisOp) -> &'static VectorConfig<ColsEntry> {
    &REDUCE_COLS[op.row()]
}

/// A validated `rows × cols` reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisShape {
    pub rows: u32,
    pub cols: u32,
}

impl AxisShape {
    /// A `rows × cols` matrix whose elements, and whose row kernel's lanes, fit 32-bit
    /// indices.
    pub fn new(rows: usize, cols: usize) -> Result<Self> {
        let overflow = || Error::IndexOverflow {
            operand: "x",
            rows,
            cols,
            elements: rows as u128 * cols as u128,
        };
        let limit = (u32::MAX - 4 * BLOCK * UNROLL) as u128;
        let (r, c) = (
            u32::try_from(rows).map_err(|_| overflow())?,
            u32::try_from(cols).map_err(|_| overflow())?,
        );
        if rows as u128 * cols as u128 > limit || rows as u128 * row_group(c) as u128 > limit {
            return Err(overflow());
        }
        Ok(Self { rows: r, cols: c })
    }

    /// The shape of a host reduction of `len` values as `rows × cols`, checked for `op`
    /// along `axis` ([`check_input`](Self::check_input), [`check_op`](Self::check_op)),
    /// and its number of outputs.
    pub fn checked(
        op: AxisOp, axis: Axis, len: usize, rows: usize, cols: usize,
    ) -> Result<(Self, usize)> {
        let shape = Self::new(rows, cols)?;
        shape.check_input(len)?;
        shape.check_op(op, axis)?;
        Ok((shape, shape.outputs(axis) as usize))
    }

    /// Checks the length of the input.
    pub fn check_input(&self, len: usize) -> Result<()> {
        Error::check_len("x", self.rows as usize, self.cols as usize, len)
    }

    /// Values per output along `axis`.
    pub fn reduced_len(&self, axis: Axis) -> u32 {
        match axis {
            Axis::Rows => self.cols,
            Axis::Cols => self.rows,
        }
    }

    /// Outputs along `axis`.
    pub fn outputs(&self, axis: Axis) -> u32 {
        match axis {
            Axis::Rows => self.rows,
            Axis::Cols => self.cols,
        }
    }

    /// [`Error::EmptyReduction`] for a max over an empty dimension (with something to
    /// output).
    pub fn check_op(&self, op: AxisOp, axis: Axis) -> Result<()> {
        if op == AxisOp::Max && self.reduced_len(axis) == 0 && self.outputs(axis) > 0 {
            return Err(Error::EmptyReduction {
                op: op.name(),
                rows: self.rows as usize,
                cols: self.cols as usize,
            });
        }
        Ok(())
    }

    /// The launch of the row kernel: one thread per lane of a row's group.
    pub fn rows_launch(&self, op: AxisOp) -> Launch {
        rows_config(op)
            .spec
            .launch(Extent::Items(self.rows * row_group(self.cols)), 0)
    }

    /// The column split, and the launches of its passes: the first over the matrix; where
    /// there are several segments, a second over the `segments × cols` partials.
    pub fn cols_plan(&self) -> ColumnPlan {
        column_plan(self.rows, self.cols)
    }

    /// The launch of one column pass over `plan`.
    pub fn cols_launch(op: AxisOp, plan: &ColumnPlan) -> Launch {
        cols_config(op).spec.launch(
            Extent::Matrix {
                rows: plan.segments,
                cols: plan.col_blocks,
            },
            0,
        )
    }

    /// The plan of the second column pass: all the partials as one segment.
    pub fn finish_plan(&self, first: &ColumnPlan) -> ColumnPlan {
        ColumnPlan {
            segments: 1,
            rows_per_segment: first.segments,
            ..*first
        }
    }

    /// How many roundings any input goes through on its way to a sum along `axis` (the
    /// depth of the summation tree), so that `|sum - exact| <= depth · 2⁻²⁴ · Σ|x|`; a mean
    /// adds one for the scale and one for the rounded `1 / len`.
    pub fn error_depth(&self, axis: Axis) -> u32 {
        match axis {
            Axis::Rows => {
                let g = row_group(self.cols);
                let units = if self.cols.is_multiple_of(4) {
                    self.cols / 4
                } else {
                    self.cols
                };
                // chain per accumulator + 2 in a vector + 2 across accumulators + the group
                units.div_ceil(g * UNROLL) + 4 + g.ilog2() + 2
            }
            Axis::Cols => {
                let plan = self.cols_plan();
                let lanes = kernels_gpu::reduce::cols::column_lanes(self.cols);
                let row_lanes = BLOCK / lanes;
                let pass = |rows: u32| rows.div_ceil(row_lanes * UNROLL) + 2 + row_lanes.ilog2();
                let mut depth = pass(plan.rows_per_segment) + 2;
                if plan.segments > 1 {
                    depth += pass(plan.segments);
                }
                depth
            }
        }
    }
}

/// The reference in f64: each output's exact value and `Σ|x|` over what it reduces (for a
/// max, the exact max and 0).
pub fn reference(op: AxisOp, axis: Axis, x: &[f32], shape: AxisShape) -> Vec<(f64, f64)> {
    let (rows, cols) = (shape.rows as usize, shape.cols as usize);
    let (outputs, len) = match axis {
        Axis::Rows => (rows, cols),
        Axis::Cols => (cols, rows),
    };
    let mut acc = vec![
        match op {
            AxisOp::Max => (f64::NEG_INFINITY, 0.0),
            _ => (0.0, 0.0),
        };
        outputs
    ];
    for r in 0..rows {
        for c in 0..cols {
            let v = x[r * cols + c] as f64;
            let o = match axis {
                Axis::Rows => r,
                Axis::Cols => c,
            };
            let a = &mut acc[o];
            match op {
                AxisOp::Max => {
                    a.0 = if v.is_nan() || a.0.is_nan() {
                        f64::NAN
                    } else {
                        a.0.max(v)
                    }
                }
                _ => {
                    a.0 += v;
                    a.1 += v.abs();
                }
            }
        }
    }
    if op == AxisOp::Mean {
        for a in &mut acc {
            *a = (a.0 / len as f64, a.1 / len as f64);
        }
    }
    acc
}

/// Whether `out` is within the bound of [`AxisShape::error_depth`] of the reference (max:
/// exact, NaN where the reference is NaN).
pub fn within_bound(op: AxisOp, axis: Axis, out: &[f32], x: &[f32], shape: AxisShape) -> bool {
    let r = reference(op, axis, x, shape);
    let depth = shape.error_depth(axis) as f64 + if op == AxisOp::Mean { 2.0 } else { 0.0 };
    let u = f32::EPSILON as f64 / 2.0;
    out.len() == r.len()
        && out.iter().zip(&r).all(|(&o, &(e, mag))| {
            if op == AxisOp::Max || !e.is_finite() {
                (o.is_nan() && e.is_nan()) || o as f64 == e
            } else {
                (o as f64 - e).abs() <= depth * u * mag
            }
        })
}

/// Largest `|out - reference|` over finite reference values.
pub fn max_abs_err(op: AxisOp, axis: Axis, out: &[f32], x: &[f32], shape: AxisShape) -> f64 {
    reference(op, axis, x, shape)
        .iter()
        .zip(out)
        .filter(|((e, _), _)| e.is_finite())
        .map(|(&(e, _), &o)| (o as f64 - e).abs())
        .fold(0.0, f64::max)
}
