//! The GEMM API's layouts and batches against the plain NN product and cuBLAS: criterion rows
//! per contender, then (with `--bench`, not under `--list` or `--test`) a summary of medians
//! and ratios from one run.
//!
//! Per shape: rung 12 in each layout (NN, NT, TN, TT), the autotuned ladder on the plain NN
//! product, and `cublasSgemmStridedBatched` (FP32) in each layout. A batched shape runs the
//! batch as one call, against one NN product of the same size by the autotuned ladder
//! (per product) and cuBLAS's strided batch.

use criterion::{BenchmarkId, Criterion, Throughput};
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::gpu::{Cublas, CublasMath, Gpu};
use kernels_gpu_host::plan::budget::median;
use kernels_gpu_host::{Gemm, GemmKernel, Op};
use std::time::Duration;

/// (m, k, n, batch).
const SHAPES: [(usize, usize, usize, usize); 4] = [
    (4096, 4096, 4096, 1),
    (2048, 2048, 2048, 1),
    (1024, 1024, 1024, 16),
    (256, 256, 256, 256),
];

#[derive(Clone, Copy, Debug)]
enum Contender {
    /// Rung 12 (or the ladder for the plain NN call) through the GEMM API.
    Ours(Op, Op, GemmKernel),
    /// cuBLAS FP32 in the same layout.
    Cublas(Op, Op),
}

impl Contender {
    /// The autotuned ladder's plain NN product, timed on one product of the batch's size.
    fn is_ladder(self) -> bool {
        matches!(self, Self::Ours(_, _, GemmKernel::Auto))
    }

    /// Products one launch computes.
    fn products(self, batch: usize) -> usize {
        if self.is_ladder() { 1 } else { batch }
    }

    fn name(self) -> String {
        let ops = |a: Op, b: Op| format!("{}{}", a.name(), b.name());
        match self {
            Self::Ours(a, b, GemmKernel::Auto) if (a, b) == (Op::N, Op::N) => "ladder-nn".into(),
            Self::Ours(a, b, _) => format!("rung12-{}", ops(a, b)),
            Self::Cublas(a, b) => format!("cublas-{}", ops(a, b)),
        }
    }
}

struct Inputs {
    a: cudarc::driver::CudaSlice<f32>,
    b: cudarc::driver::CudaSlice<f32>,
    c: cudarc::driver::CudaSlice<f32>,
}

fn call((m, k, n, batch): (usize, usize, usize, usize), a: Op, b: Op) -> Gemm {
    Gemm::new(m, n, k).ops(a, b).batched(batch)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let summary = has("--bench") && !has("--list") && !has("--test");
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    let gpu = match Gpu::new_or_skip("GEMM benchmarks") {
        Ok(Some(gpu)) => gpu,
        Ok(None) => return,
        Err(e) => {
            eprintln!("error: a GPU is present but could not be set up: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = run(&gpu, &mut c, summary) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    c.final_summary();
}

fn run(
    gpu: &Gpu, c: &mut Criterion, summary: bool,
) -> kernels_gpu_host::problem::error::Result<()> {
    let blas = Cublas::new(gpu, CublasMath::Fp32)?;
    let mut table = vec![];
    for shape in SHAPES {
        let (m, k, n, batch) = shape;
        let mut rng = Rng::new(1);
        let mut inputs = Inputs {
            a: gpu.upload(&rng.uniform(m * k * batch))?,
            b: gpu.upload(&rng.uniform(k * n * batch))?,
            c: gpu.zeros(m * n * batch)?,
        };
        let mut contenders = vec![];
        for a in Op::ALL {
            for b in Op::ALL {
                // Rung 12 by the same rule as GemmKernel::Auto, NN included.
                let p = call(shape, a, b).check(m * k * batch, k * n * batch, m * n * batch)?;
                let tile = kernels_gpu_host::plan::gemm::auto_tile(&p, gpu.multiprocessors());
                contenders.push(Contender::Ours(a, b, GemmKernel::Blas(tile)));
                contenders.push(Contender::Cublas(a, b));
            }
        }
        contenders.push(Contender::Ours(Op::N, Op::N, GemmKernel::Auto));
        let launch = |who: Contender, inputs: &mut Inputs| match who {
            // The ladder is timed on one product (the same size) and counted per product.
            Contender::Ours(a, b, kernel @ GemmKernel::Auto) => gpu.gemm_device(
                &call((m, k, n, 1), a, b),
                kernel,
                &inputs.a,
                &inputs.b,
                &mut inputs.c,
            ),
            Contender::Ours(a, b, kernel) => gpu.gemm_device(
                &call(shape, a, b),
                kernel,
                &inputs.a,
                &inputs.b,
                &mut inputs.c,
            ),
            Contender::Cublas(a, b) => {
                blas.gemm(&call(shape, a, b), &inputs.a, &inputs.b, &mut inputs.c)
            }
        };
        let name = format!("gemm-{m}x{k}x{n}-batch{batch}");
        let mut group = c.benchmark_group(&name);
        let flops = 2 * m * k * n;
        // One run each first, so that a failure is an error here, not a panic in criterion's
        // loop.
        for &who in &contenders {
            launch(who, &mut inputs)?;
            gpu.synchronize("gemm bench")?;
        }
        for &who in &contenders {
            group.throughput(Throughput::Elements((flops * who.products(batch)) as u64));
            group.bench_function(BenchmarkId::from_parameter(who.name()), |bench| {
                bench.iter_custom(|iters| {
                    gpu.time_batch(iters, || launch(who, &mut inputs))
                        .expect("the contender ran before")
                })
            });
        }
        group.finish();
        if summary {
            for &who in &contenders {
                let mut ms = gpu.time_ms(3, 20, || launch(who, &mut inputs))?;
                let per_product = median(&mut ms) / who.products(batch) as f64;
                table.push((name.clone(), who, per_product));
            }
        }
    }
    if summary {
        print_summary(gpu, &table)?;
    }
    Ok(())
}

fn print_summary(
    gpu: &Gpu, table: &[(String, Contender, f64)],
) -> kernels_gpu_host::problem::error::Result<()> {
    println!(
        "\nGEMM layouts and batches on {} (median of 20, ms per product):",
        gpu.info()?
    );
    println!(
        "{:<28} {:<12} {:>10} {:>12} {:>14}",
        "shape", "contender", "ms", "vs ladder-nn", "vs cuBLAS same"
    );
    for (shape, who, ms) in table {
        let find = |want: &dyn Fn(&Contender) -> bool| {
            table
                .iter()
                .find(|(s, w, _)| s == shape && want(w))
                .map(|&(_, _, ms)| ms)
        };
        let ladder = find(&|w| w.is_ladder());
        let same = match who {
            Contender::Ours(a, b, _) => {
                find(&|w| matches!(w, Contender::Cublas(x, y) if (x, y) == (a, b)))
            }
            Contender::Cublas(..) => None,
        };
        let ratio = |base: Option<f64>| base.map_or("-".into(), |b| format!("{:.3}", b / ms));
        println!(
            "{shape:<28} {:<12} {ms:>10.4} {:>12} {:>14}",
            who.name(),
            ratio(ladder),
            ratio(same)
        );
    }
    println!("(ratios are the baseline's time over the row's: above 1 the row is faster)");
    println!(
        "(check: none here, the rows are timings; tests/gpu_gemm.rs checks every layout, \
         bit for bit against the rungs' FMA order and within the f64 bound)"
    );
    Ok(())
}
