//! The GEMM API on the GPU: every order and layout pair, odd shapes, odd leading dimensions,
//! α/β and batch counts (interleaved outputs, and 70,000 products: more than one launch's
//! grid holds), `α = 0` over NaN and infinite operands (BLAS's `β·C`), by each rung-12
//! block tile and the automatic choice: bit for bit
//! against the rungs' FMA order (a plain product by the automatic choice: against the
//! autotuned ladder, which may run split-k), within the f64 bound, the same bits run to run, and against
//! cuBLAS (`cublasSgemmStridedBatched`, FP32) within both bounds.
//!
//! Uses a libtest-compatible harness so that, without a GPU, every test is reported as
//! *ignored* with the reason printed — never as passed.

#[path = "common/gemm_cases.rs"]
mod gemm_cases;
#[allow(dead_code)] // `Test`: the trials here are closures
#[path = "common/gpu_harness.rs"]
mod harness;

use gemm_cases::{Case, blas_cases, cases, expected_bits, long_batches};
use kernels_gpu_host::GemmKernel;
use kernels_gpu_host::check::reference;
use kernels_gpu_host::gpu::{Cublas, CublasMath, Gpu};
use kernels_gpu_host::plan::gemm::BLAS_TILES;
use kernels_gpu_host::{MatmulKernel, SgemmKernel, TileWidth};
use libtest_mimic::Failed;

/// After the small shapes: one interior 64 × 64 tile, and several interior tiles of either
/// size with edges.
const TILED: [(usize, usize, usize); 3] = [(64, 32, 64), (257, 129, 511), (300, 64, 260)];

/// `case` by `kernel` on the GPU: `c` after the call.
fn run(gpu: &Gpu, case: &Case, kernel: GemmKernel) -> Result<Vec<f32>, Failed> {
    let (a, b) = (gpu.upload(&case.a)?, gpu.upload(&case.b)?);
    let mut c = gpu.upload(&case.c)?;
    gpu.gemm_device(&case.call, kernel, &a, &b, &mut c)?;
    gpu.synchronize("gemm")?;
    Ok(gpu.download(&c)?)
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn check(gpu: &Gpu, case: &Case, kernel: GemmKernel) -> Result<(), Failed> {
    let got = run(gpu, case, kernel)?;
    let p = case.call.check(case.a.len(), case.b.len(), case.c.len())?;
    let want = match (kernel, p.plain()) {
        // A plain product goes to the autotuned ladder, which may have chosen split-k: a
        // summation order of its own (tested against its CPU twin in gpu_matmul). Its bits
        // are the ladder's.
        (GemmKernel::Auto, Some(shape)) => {
            let (a, b) = p.operands(&case.a, &case.b);
            let (a, b) = (gpu.upload(a)?, gpu.upload(b)?);
            let mut out = gpu.zeros(case.c.len())?;
            let auto = MatmulKernel::Sgemm(SgemmKernel::Autotuned);
            gpu.matmul_device(auto, TileWidth::Tw16, &a, &b, &mut out, shape)?;
            gpu.download(&out)?
        }
        _ => expected_bits(case),
    };
    if let Some(i) = got
        .iter()
        .zip(&want)
        .position(|(g, w)| g.to_bits() != w.to_bits())
    {
        return Err(format!("element {i} is {}, the rungs give {}", got[i], want[i]).into());
    }
    let exact = reference::gemm_f64(&case.call, &case.a, &case.b, &case.c)?;
    if let Some(e) = exact.first_error(&got) {
        return Err(format!("outside the f64 bound: {e:?}").into());
    }
    if bits(&run(gpu, case, kernel)?) != bits(&got) {
        return Err("a second run gave other bits".into());
    }
    Ok(())
}

fn check_cublas(gpu: &Gpu, case: &Case) -> Result<(), Failed> {
    if !Cublas::is_available() {
        return Err("cuBLAS could not be loaded".into());
    }
    let blas = Cublas::new(gpu, CublasMath::Fp32)?;
    let (a, b) = (gpu.upload(&case.a)?, gpu.upload(&case.b)?);
    let mut c = gpu.upload(&case.c)?;
    blas.gemm(&case.call, &a, &b, &mut c)?;
    gpu.synchronize("cublasSgemmStridedBatched")?;
    let theirs = gpu.download(&c)?;
    let ours = run(gpu, case, GemmKernel::Auto)?;
    let exact = reference::gemm_f64(&case.call, &case.a, &case.b, &case.c)?;
    // Both within the bound of the exact result, so within twice it of each other.
    if let Some(e) = exact.first_error(&theirs) {
        return Err(format!("cuBLAS outside the f64 bound (not our kernel): {e:?}").into());
    }
    for (i, ((&o, &t), &bound)) in ours.iter().zip(&theirs).zip(&exact.bound).enumerate() {
        if o.to_bits() != t.to_bits() && (o as f64 - t as f64).abs() > 2.0 * bound {
            return Err(format!("element {i}: ours {o}, cuBLAS {t}, bound {bound}").into());
        }
    }
    Ok(())
}

fn main() {
    let gpu = harness::gpu();
    let mut trials = vec![];
    let kernels: Vec<GemmKernel> = (0..BLAS_TILES.len())
        .map(GemmKernel::Blas)
        .chain([GemmKernel::Auto])
        .collect();
    // Past the grid's z limit: 70,000 products, rung 12 in two launches, and `α = 0`.
    let huge = long_batches(70_000);
    let shapes: Vec<_> = gemm_cases::SMALL.iter().chain(&TILED).copied().collect();
    for case in cases(&TILED)
        .into_iter()
        .chain(blas_cases(&shapes))
        .chain(huge)
    {
        let case = std::sync::Arc::new(case);
        for &kernel in &kernels {
            let c = case.clone();
            trials.push(harness::trial(
                &gpu,
                format!("gemm::{}::{kernel:?}", c.name),
                move |gpu| check(gpu, &c, kernel),
            ));
        }
        let c = case.clone();
        trials.push(harness::trial(
            &gpu,
            format!("gemm::{}::cublas", c.name),
            move |gpu| check_cublas(gpu, &c),
        ));
    }
    harness::run(trials)
}
