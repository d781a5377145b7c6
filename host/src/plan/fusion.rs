//! The slides' fusion lesson: a matrix product written the minitorch way, as a zip (the
//! elementwise product broadcast to an `m × n × k` tensor, [`kernels_gpu::fusion`]) and a
//! reduce (row sums of that tensor viewed as `(m·n) × k`, [`crate::problem::axis`]), against the
//! fused product, which never writes the intermediate.
//!
//! The unfused pair moves at least `m·n·k` floats out and back (`k` times the output); the
//! fused kernels read `a` and `b` through shared tiles and write `m·n`. `--op fusion` on the
//! command line shows both, time and memory side by side.

use crate::problem::axis::{Axis, AxisShape};
use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
use kernels_gpu::catalogue::{Extent, ZIP};
use kernels_gpu::nvptx_device::launch::Launch;

/// The intermediate's length, `m·n·k`: [`Error::IndexOverflow`] where it does not fit the
/// zip kernel's 32-bit indices.
pub fn intermediate_len(shape: MatmulShape) -> Result<u32> {
    let (rows, k) = (shape.m as u64 * shape.n as u64, shape.k as u64);
    u32::try_from(rows * k).map_err(|_| Error::IndexOverflow {
        operand: "zip intermediate (m·n × k)",
        rows: rows as usize,
        cols: k as usize,
        elements: rows as u128 * k as u128,
    })
}

/// The zip's launch: one thread per element of the intermediate.
pub fn zip_launch(len: u32) -> Launch {
    ZIP.launch(Extent::Items(len), 0)
}

/// Roundings per output of zip-then-reduce in the worst case: one for the product, then
/// the depth of the row sum's summation tree ([`AxisShape::error_depth`]). The f32 bound
/// is [`crate::check::reference::error_bound`] of this many roundings.
pub fn roundings(shape: MatmulShape) -> Result<usize> {
    if shape.k == 0 {
        return Ok(1);
    }
    let rows = shape.m as usize * shape.n as usize;
    Ok(1 + AxisShape::new(rows.max(1), shape.k as usize)?.error_depth(Axis::Rows) as usize)
}

/// Bytes the unfused pair must move at least: `a` and `b` read, the intermediate written
/// by the zip and read back by the reduce, the output written.
pub fn unfused_bytes(shape: MatmulShape) -> u64 {
    let (la, lb, lc) = shape.lens();
    4 * (la as u64 + lb as u64 + 2 * shape.m as u64 * shape.n as u64 * shape.k as u64 + lc as u64)
}

/// Bytes a fused product must move at least: `a` and `b` read, the output written.
pub fn fused_bytes(shape: MatmulShape) -> u64 {
    let (la, lb, lc) = shape.lens();
    4 * (la as u64 + lb as u64 + lc as u64)
}
