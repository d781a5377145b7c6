//! `cargo bench -p kernels-gpu-host --bench sim`: the CPU simulator itself, on workloads that
//! stress each of its costs (no GPU involved, on any machine):
//!
//! - `lecture-tiled-tw16`: the lecture's tiled matmul with static 16 × 16 tiles, two block
//!   barriers per phase. Its throughput in criterion's `elem/s` counts one element per
//!   thread per barrier, so `1 / throughput` is the cost of one simulated thread passing
//!   one barrier phase, loads, stores and arithmetic included;
//! - `warp-shuffle-sum`: the warp-shuffle reduction, two launches, five `shfl.sync` per
//!   warp and level;
//! - `sgemm-multistage`: rung 10, `cp.async` into a 3-stage ring with a barrier per k-tile,
//!   one 128 × 128 block of 256 threads;
//! - `mma-tf32`: rung 11, `ldmatrix`-free TF32 `mma.sync` warp collectives on a 3-stage
//!   `cp.async` ring.
//!
//! Every result is checked once against an f64 product (or sum) before it is timed.
//! `-- --quick` gives a figure in seconds; run the executable with `--bench` for criterion's
//! full analysis.

use criterion::{BenchmarkId, Criterion, Throughput};
use kernels_gpu_host::check::reference::{compare, matmul_f64};
use kernels_gpu_host::plan::reduce::ReduceKernel;
use kernels_gpu_host::sim::{Simulator, aligned_copy, aligned_floats};
use kernels_gpu_host::{Backend, MatmulKernel, MatmulShape, SgemmKernel, TileWidth};
use std::hint::black_box;
use std::time::Duration;

#[path = "common/bench_report.rs"]
mod bench_report;

/// The lecture's kernel on 3 × 3 blocks of 16 × 16 threads, 3 phases each.
const LECTURE: (usize, usize, usize) = (48, 48, 48);
/// Blocks of 4096 floats: 16 blocks, then one for their partial sums.
const SUM_LEN: usize = 1 << 16;
/// One 128 × 128 block, 8 k-tiles of 16.
const SGEMM: (usize, usize, usize) = (128, 128, 128);
/// One 128 × 128 block, 4 k-tiles of 16.
const MMA: (usize, usize, usize) = (128, 64, 128);

/// Deterministic values in [-1, 1).
fn values(len: usize, seed: u32) -> Vec<f32> {
    (0..len as u32)
        .map(|i| ((i.wrapping_mul(2_654_435_761) ^ seed) % 2001) as f32 / 1000.0 - 1.0)
        .collect()
}

/// The configuration whose entry point is `entry`.
fn sgemm(entry: &str) -> MatmulKernel {
    MatmulKernel::Sgemm(
        SgemmKernel::from_entry(entry).unwrap_or_else(|| panic!("no configuration `{entry}`")),
    )
}

/// Benchmarks `kernel` on `(m, k, n)` as `name`, after checking one result within `bound` of
/// the f64 product.
fn matmul_bench(
    c: &mut Criterion, name: &str, kernel: MatmulKernel, (m, k, n): (usize, usize, usize),
    bound: f64, thread_barriers: Option<u64>,
) {
    let sim = Simulator::default();
    let shape = MatmulShape::new(m, k, n).expect("a valid shape");
    // 16-byte aligned, as device allocations are, so the vector paths run.
    let (a, b) = (values(m * k, 1), values(k * n, 2));
    let (a16, b16) = (aligned_copy(&a), aligned_copy(&b));
    let (pa, pb) = (aligned_floats(&a16, a.len()), aligned_floats(&b16, b.len()));
    let run = || {
        sim.matmul(kernel, TileWidth::Tw16, pa, pb, shape)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let error = compare(&run(), &matmul_f64(&a, &b, m, k, n)).max_abs_err;
    assert!(error <= bound, "{name}: error {error} past {bound}");
    let mut group = c.benchmark_group(name);
    if let Some(elements) = thread_barriers {
        group.throughput(Throughput::Elements(elements));
    }
    group.bench_function(BenchmarkId::from_parameter(format!("{m}x{k}x{n}")), |bch| {
        bch.iter(|| black_box(run()))
    });
    group.finish();
}

fn main() {
    let mut c = bench_report::criterion(Duration::from_millis(500), Duration::from_secs(3));

    let (m, k, n) = LECTURE;
    let tw = 16;
    let blocks = (m.div_ceil(tw) * n.div_ceil(tw)) as u64;
    let barriers = 2 * k.div_ceil(tw) as u64;
    matmul_bench(
        &mut c,
        "lecture-tiled-tw16",
        MatmulKernel::TiledStatic,
        LECTURE,
        1e-4,
        Some(blocks * (tw * tw) as u64 * barriers),
    );

    let sim = Simulator::default();
    let x = values(SUM_LEN, 3);
    let expected: f64 = x.iter().map(|&v| v as f64).sum();
    let got = sim.sum(ReduceKernel::Warp, &x).expect("simulated sum");
    assert!(
        (got as f64 - expected).abs() < 1e-2,
        "sum {got} vs {expected}"
    );
    let mut group = c.benchmark_group("warp-shuffle-sum");
    group.bench_function(BenchmarkId::from_parameter(SUM_LEN), |b| {
        b.iter(|| {
            black_box(
                sim.sum(ReduceKernel::Warp, black_box(&x))
                    .expect("simulated sum"),
            )
        })
    });
    group.finish();

    matmul_bench(
        &mut c,
        "sgemm-multistage",
        sgemm("sgemm_multistage_128x128x16_w64x32"),
        SGEMM,
        1e-3,
        None,
    );
    // TF32 rounds the inputs: an error of about 2^-11 per product.
    matmul_bench(
        &mut c,
        "mma-tf32",
        sgemm("sgemm_tf32_128x128x16_w64x32"),
        MMA,
        0.1,
        None,
    );
    c.final_summary();
}
