//! Result rows and how they are printed: an aligned table or JSON lines.

use crate::kernels::MatmulKernel;
use crate::shape::MatmulShape;

/// One kernel × tile width × shape measurement.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    pub kernel: String,
    /// `None` for kernels without a tile width.
    pub tw: Option<u32>,
    pub m: u32,
    pub k: u32,
    pub n: u32,
    /// Median kernel time; `None` where nothing was timed (the simulator).
    pub ms_median: Option<f64>,
    pub gflops: Option<f64>,
    pub max_abs_err: f64,
    pub max_rel_err: f64,
    /// Whether every element is within the f32 error bound of the f64 reference.
    pub ok: bool,
}

impl Row {
    pub fn new(kernel: MatmulKernel, tw: Option<u32>, shape: MatmulShape) -> Self {
        Self {
            kernel: kernel.name().to_owned(),
            tw,
            m: shape.m,
            k: shape.k,
            n: shape.n,
            ms_median: None,
            gflops: None,
            max_abs_err: 0.0,
            max_rel_err: 0.0,
            ok: false,
        }
    }
}

/// An aligned text table of `rows`. The kernel column is as wide as the longest name (at
/// least 20: the lecture's names; the SGEMM ones name their configuration and are longer).
pub fn table(rows: &[Row]) -> String {
    let w = rows
        .iter()
        .map(|r| r.kernel.len())
        .max()
        .unwrap_or(0)
        .max(20);
    let mut s = format!(
        "{:<w$} {:>4} {:>16} {:>10} {:>10} {:>11} {:>11} {:>5}\n",
        "kernel", "tw", "m×k×n", "ms", "GFLOP/s", "max_abs", "max_rel", "ok"
    );
    for r in rows {
        let opt = |v: Option<f64>, p: usize| v.map_or("-".to_owned(), |v| format!("{v:.p$}"));
        s += &format!(
            "{:<w$} {:>4} {:>16} {:>10} {:>10} {:>11.3e} {:>11.3e} {:>5}\n",
            r.kernel,
            r.tw.map_or("-".to_owned(), |t| t.to_string()),
            format!("{}×{}×{}", r.m, r.k, r.n),
            opt(r.ms_median, 3),
            opt(r.gflops, 0),
            r.max_abs_err,
            r.max_rel_err,
            if r.ok { "yes" } else { "NO" }
        );
    }
    s
}

/// The median of `samples` (which must not be empty).
pub fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len().is_multiple_of(2) {
        (samples[mid - 1] + samples[mid]) / 2.0
    } else {
        samples[mid]
    }
}

/// One reduction or sliding-average measurement.
#[derive(Clone, Debug, serde::Serialize)]
pub struct VectorRow {
    pub kernel: String,
    pub n: u64,
    /// The window of a sliding average.
    pub window: Option<u64>,
    /// `rows×cols` of a 2-D reduction.
    pub shape: Option<String>,
    pub ms_median: Option<f64>,
    /// Bytes the kernel must move (inputs read, outputs written) per second.
    pub gbps: Option<f64>,
    /// A device-to-device copy of the input measured in the same run (read + written).
    pub copy_gbps: Option<f64>,
    /// `gbps / copy_gbps`.
    pub pct_of_copy: Option<f64>,
    pub max_abs_err: f64,
    pub ok: bool,
}

/// An aligned text table of `rows`.
pub fn vector_table(rows: &[VectorRow]) -> String {
    let opt = |v: Option<f64>, p: usize| v.map_or("-".to_owned(), |v| format!("{v:.p$}"));
    let mut s = format!(
        "{:<16} {:>11} {:>12} {:>9} {:>8} {:>9} {:>8} {:>11} {:>5}\n",
        "kernel", "n", "window/shape", "ms", "GB/s", "copy GB/s", "% copy", "max_abs", "ok"
    );
    for r in rows {
        s += &format!(
            "{:<16} {:>11} {:>12} {:>9} {:>8} {:>9} {:>8} {:>11.3e} {:>5}\n",
            r.kernel,
            r.n,
            r.window
                .map(|w| w.to_string())
                .or(r.shape.clone())
                .unwrap_or_else(|| "-".to_owned()),
            opt(r.ms_median, 4),
            opt(r.gbps, 0),
            opt(r.copy_gbps, 0),
            opt(r.pct_of_copy.map(|p| 100.0 * p), 1),
            r.max_abs_err,
            if r.ok { "yes" } else { "NO" }
        );
    }
    s
}
