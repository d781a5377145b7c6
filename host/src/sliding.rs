//! Sliding averages: kernel catalogue, launch shape, validation, CPU reference and the
//! simulator launcher.

use crate::error::{Error, Result};
use kernels_gpu::catalogue::{Extent, SLIDING, SlidingEntry, VectorConfig};
use kernels_gpu::nvptx_device::launch::Launch;
use kernels_gpu::sliding::BLOCK;

/// Where the windows are read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlidingKernel {
    /// Global memory, `window` reads per output.
    Naive,
    /// A shared tile plus halo per block.
    Shared,
}

impl SlidingKernel {
    pub const ALL: [SlidingKernel; 2] = [Self::Naive, Self::Shared];

    /// Its row of `kernels_gpu::catalogue::SLIDING`.
    pub fn config(self) -> &'static VectorConfig<SlidingEntry> {
        &SLIDING[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.config().name
    }

    pub fn entry(self) -> &'static str {
        self.config().spec.entry
    }

    /// The launch for `outputs` windows of `window` (the shared kernel's tile grows with the
    /// window).
    pub fn launch(self, outputs: u32, window: u32) -> Launch {
        self.config().spec.launch(Extent::Items(outputs), window)
    }
}

/// A validated sliding-average problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlidingShape {
    pub n: u32,
    pub window: u32,
}

impl SlidingShape {
    /// `n` inputs, windows of `window`. A window of 0 is an error (a mean of nothing); a
    /// window longer than the input is valid and has no outputs, like `n = 0`.
    pub fn new(n: usize, window: usize) -> Result<Self> {
        if window == 0 {
            return Err(Error::InvalidWindow { window, len: n });
        }
        let limit = (u32::MAX - 2 * BLOCK) as usize;
        if n > limit || window > limit || n + window > limit {
            return Err(Error::IndexOverflow {
                operand: "input",
                rows: 1,
                cols: n.max(window),
                elements: n as u128 + window as u128,
            });
        }
        Ok(Self {
            n: n as u32,
            window: window as u32,
        })
    }

    /// Number of windows that fit: `n - window + 1`, or 0.
    pub fn outputs(&self) -> u32 {
        (self.n + 1).saturating_sub(self.window)
    }
}

/// The CPU reference in f64: the exact mean of every window.
pub fn reference(a: &[f32], window: usize) -> Vec<f64> {
    if window == 0 || window > a.len() {
        return vec![];
    }
    (0..=a.len() - window)
        .map(|i| a[i..i + window].iter().map(|&x| x as f64).sum::<f64>() / window as f64)
        .collect()
}

/// Whether `out` is within the bound of a left-to-right f32 sum of `window` terms (plus the
/// division) of the reference, element by element.
pub fn within_bound(out: &[f32], a: &[f32], window: usize) -> bool {
    let r = reference(a, window);
    out.len() == r.len()
        && out.iter().enumerate().all(|(i, &o)| {
            let magnitude: f64 = a[i..i + window]
                .iter()
                .map(|&x| (x as f64).abs())
                .sum::<f64>()
                / window as f64;
            let bound = (window as f64 + 1.0) * (f32::EPSILON as f64 / 2.0) * magnitude;
            ((o as f64) - r[i]).abs() <= bound || (o.is_nan() && r[i].is_nan())
        })
}
