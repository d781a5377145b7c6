//! Result rows and how they are printed: an aligned table or JSON lines.

use kernels_gpu_host::check::spot::CheckMode;
use kernels_gpu_host::{MatmulKernel, MatmulShape};

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
    /// How many timed runs the median is of (`--iters`, or fewer where `--time-budget`
    /// ran out first); `None` where nothing was timed.
    pub runs: Option<usize>,
    pub gflops: Option<f64>,
    /// Largest errors over the elements compared; `None` when unchecked.
    pub max_abs_err: Option<f64>,
    pub max_rel_err: Option<f64>,
    /// How the result was checked: every element, a sample, or not at all.
    pub check: CheckMode,
    /// Whether every element compared is within the kernel's error bound of the f64
    /// reference; `None` (JSON `null`, "unchecked" in the table) with `--check none`.
    pub ok: Option<bool>,
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
            runs: None,
            gflops: None,
            max_abs_err: None,
            max_rel_err: None,
            check: CheckMode::None,
            ok: None,
        }
    }
}

/// What a table's `ok` column says: `yes`, `NO`, or `unchecked` (never `yes` for a result
/// nothing compared).
pub fn ok_cell(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "unchecked",
    }
}

/// Whether no result failed its check (unchecked results do not fail).
pub fn none_failed(oks: impl IntoIterator<Item = Option<bool>>) -> bool {
    oks.into_iter().all(|ok| ok != Some(false))
}

/// A `runs` column: how many timed runs a median is of, or `-` where nothing was timed.
pub fn runs_cell(runs: Option<usize>) -> String {
    runs.map_or("-".to_owned(), |n| n.to_string())
}

/// An error column: the value, or `-` where nothing was compared.
fn err_cell(v: Option<f64>) -> String {
    v.map_or("-".to_owned(), |v| format!("{v:.3e}"))
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
        "{:<w$} {:>4} {:>16} {:>10} {:>4} {:>10} {:>11} {:>11} {:>6} {:>9}\n",
        "kernel", "tw", "m×k×n", "ms", "runs", "GFLOP/s", "max_abs", "max_rel", "check", "ok"
    );
    for r in rows {
        let opt = |v: Option<f64>, p: usize| v.map_or("-".to_owned(), |v| format!("{v:.p$}"));
        s += &format!(
            "{:<w$} {:>4} {:>16} {:>10} {:>4} {:>10} {:>11} {:>11} {:>6} {:>9}\n",
            r.kernel,
            r.tw.map_or("-".to_owned(), |t| t.to_string()),
            format!("{}×{}×{}", r.m, r.k, r.n),
            opt(r.ms_median, 3),
            runs_cell(r.runs),
            opt(r.gflops, 0),
            err_cell(r.max_abs_err),
            err_cell(r.max_rel_err),
            r.check.name(),
            ok_cell(r.ok)
        );
    }
    s
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
    /// How many timed runs the median is of; `None` where nothing was timed.
    pub runs: Option<usize>,
    /// Bytes the kernel must move (inputs read, outputs written) per second.
    pub gbps: Option<f64>,
    /// A device-to-device copy of the input measured in the same run (read + written).
    pub copy_gbps: Option<f64>,
    /// `gbps / copy_gbps`.
    pub pct_of_copy: Option<f64>,
    /// `None` when unchecked.
    pub max_abs_err: Option<f64>,
    /// How the result was checked (`full` or `none`: the references are `O(n)`).
    pub check: CheckMode,
    /// Whether the result is within its error bound; `None` when unchecked.
    pub ok: Option<bool>,
}

/// An aligned text table of `rows`.
pub fn vector_table(rows: &[VectorRow]) -> String {
    let opt = |v: Option<f64>, p: usize| v.map_or("-".to_owned(), |v| format!("{v:.p$}"));
    let mut s = format!(
        "{:<16} {:>11} {:>12} {:>9} {:>4} {:>8} {:>9} {:>8} {:>11} {:>6} {:>9}\n",
        "kernel",
        "n",
        "window/shape",
        "ms",
        "runs",
        "GB/s",
        "copy GB/s",
        "% copy",
        "max_abs",
        "check",
        "ok"
    );
    for r in rows {
        s += &format!(
            "{:<16} {:>11} {:>12} {:>9} {:>4} {:>8} {:>9} {:>8} {:>11} {:>6} {:>9}\n",
            r.kernel,
            r.n,
            r.window
                .map(|w| w.to_string())
                .or(r.shape.clone())
                .unwrap_or_else(|| "-".to_owned()),
            opt(r.ms_median, 4),
            runs_cell(r.runs),
            opt(r.gbps, 0),
            opt(r.copy_gbps, 0),
            opt(r.pct_of_copy.map(|p| 100.0 * p), 1),
            err_cell(r.max_abs_err),
            r.check.name(),
            ok_cell(r.ok)
        );
    }
    s
}
