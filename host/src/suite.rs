//! The GEMM shape suite: big and small, square, odd, skinny and wide products, each run by
//! the autotuned SGEMM and by cuBLAS FP32 in the same process, so that the ratio of the two
//! says how the ladder does on shapes other than big aligned squares.
//!
//! Results are spot-checked ([`crate::check::spot`]) rather than compared in full: an f64 product
//! of 8192³ on the CPU would take far longer than the suite.

use crate::check::data::Rng;
use crate::check::spot::{Check, SAMPLES, f32_bound, spot_check};
use crate::gpu::autotune::Tuned;
use crate::gpu::{Cublas, Gpu};
use crate::plan::budget::median;
use crate::plan::kernels::MatmulKernel;
use crate::plan::sgemm::SgemmKernel;
use crate::problem::error::Result;
use crate::problem::shape::MatmulShape;
use crate::problem::tile::TileWidth;
use kernels_gpu::sgemm::Precision;

/// The suite's shapes, `(m, k, n)`: the lecture's, powers of two from 512 to 8192, odd
/// sizes, small `m` or `n` with large `k` (a linear layer on a small batch), tiny `k`, and
/// a wide output over a short `k`.
pub const SHAPES: [(usize, usize, usize); 14] = [
    (5120, 256, 5120),
    (512, 512, 512),
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (4093, 4093, 4093),
    (2049, 2047, 2051),
    (64, 4096, 4096),
    (4096, 4096, 64),
    (32, 8192, 8192),
    (8192, 8192, 32),
    (8192, 128, 8192),
    (16384, 256, 16384),
];

/// [`SHAPES`] as checked shapes.
pub fn shapes() -> Result<Vec<MatmulShape>> {
    SHAPES
        .iter()
        .map(|&(m, k, n)| MatmulShape::new(m, k, n))
        .collect()
}

/// One shape of the suite.
#[derive(Clone, Debug)]
pub struct SuiteRow {
    pub shape: MatmulShape,
    /// What the autotuner chose.
    pub kernel: Tuned,
    /// Median milliseconds of the autotuned SGEMM.
    pub ms: f64,
    /// Median milliseconds of cuBLAS FP32.
    pub cublas_ms: f64,
    /// The spot checks of the SGEMM's and cuBLAS's results.
    pub check: Check,
    pub cublas_check: Check,
}

impl SuiteRow {
    /// cuBLAS's time over ours: above 1 is faster than cuBLAS.
    pub fn ratio(&self) -> f64 {
        self.cublas_ms / self.ms
    }

    /// Whether both results passed their spot checks.
    pub fn checked(&self) -> bool {
        self.check.ok() && self.cublas_check.ok()
    }
}

/// The geometric mean of the rows' [ratios](SuiteRow::ratio) (1 for none).
pub fn geomean(rows: &[SuiteRow]) -> f64 {
    if rows.is_empty() {
        return 1.0;
    }
    (rows.iter().map(|r| r.ratio().ln()).sum::<f64>() / rows.len() as f64).exp()
}

/// The table's header line (the columns of [`line()`]).
pub fn header() -> String {
    format!(
        "{:<20} {:>10} {:>10} {:>8}  {:<7} chosen configuration",
        "m×k×n", "ours ms", "cuBLAS ms", "ratio", "check"
    )
}

/// One row of the table.
pub fn line(r: &SuiteRow) -> String {
    format!(
        "{:<20} {:>10.3} {:>10.3} {:>7.3}×  {:<7} {}",
        r.shape.to_string(),
        r.ms,
        r.cublas_ms,
        r.ratio(),
        if r.checked() { "ok" } else { "WRONG" },
        r.kernel
    )
}

/// The closing line: the geometric mean and the worst ratio.
pub fn summary(rows: &[SuiteRow]) -> String {
    let worst = rows.iter().map(|r| r.ratio()).fold(f64::INFINITY, f64::min);
    format!(
        "geometric mean {:.3}× cuBLAS FP32, worst {:.3}× (ratio = cuBLAS ms / ours ms)",
        geomean(rows),
        worst
    )
}

/// Runs `shapes` on `gpu`: for each, uniform inputs from `seed`, the autotuned SGEMM and
/// `cublas` (which should be in FP32 math) timed with `warmup` and `runs` event-timed
/// launches, both spot-checked; `progress` sees each row as it is done.
pub fn run(
    gpu: &Gpu, cublas: &Cublas, shapes: &[MatmulShape], (warmup, runs): (usize, usize), seed: u64,
    mut progress: impl FnMut(&SuiteRow),
) -> Result<Vec<SuiteRow>> {
    let autotuned = MatmulKernel::Sgemm(SgemmKernel::Autotuned);
    let tw = TileWidth::Tw16;
    let mut rows = vec![];
    for &shape in shapes {
        let (la, lb, lo) = shape.lens();
        let mut rng = Rng::new(seed);
        let (a, b) = (rng.uniform(la), rng.uniform(lb));
        let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
        let mut out = gpu.zeros(lo)?;
        // The first launch tunes the shape (once per device, shape and build).
        gpu.matmul_device(autotuned, tw, &da, &db, &mut out, shape)?;
        let kernel = crate::gpu::autotune::choose(gpu, &da, &db, &mut out, shape, Precision::Fp32)?;
        let bound = f32_bound(shape.k);
        // Zeros before each checked run: never right for inputs in [0, 1).
        let zero = |out: &mut _| {
            gpu.stream()
                .memset_zeros(out)
                .map_err(|source| crate::problem::error::Error::Driver {
                    call: "cuMemsetD8Async",
                    source,
                })
        };
        zero(&mut out)?;
        gpu.matmul_device(autotuned, tw, &da, &db, &mut out, shape)?;
        let check = spot_check(&a, &b, &gpu.download(&out)?, shape, SAMPLES, bound);
        let ms = median(&mut gpu.time_ms(warmup, runs, || {
            gpu.matmul_device(autotuned, tw, &da, &db, &mut out, shape)
        })?);
        zero(&mut out)?;
        cublas.sgemm(&da, &db, &mut out, shape)?;
        let cublas_check = spot_check(&a, &b, &gpu.download(&out)?, shape, SAMPLES, bound);
        let cublas_ms =
            median(&mut gpu.time_ms(warmup, runs, || cublas.sgemm(&da, &db, &mut out, shape))?);
        let row = SuiteRow {
            shape,
            kernel,
            ms,
            cublas_ms,
            check,
            cublas_check,
        };
        progress(&row);
        rows.push(row);
    }
    Ok(rows)
}
