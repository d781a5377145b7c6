//! Rung 16, the memory-bound kernels, on the GPU: every configuration that covers a shape,
//! at the device's split and at fixed ones, on odd and degenerate shapes (`m`, `n` or `k` =
//! 1, primes, 16 and 17, a long `k` under a tiny output, and a few large ones where the
//! 16-byte paths and many slices run), bit for bit against the CPU twin that sums in the
//! kernels' order ([`Gemv::cpu`]), within the f64 bound, and the same bits on a second run,
//! for f32 operands (each precision) and BF16 ones; and the autotuners' choices on
//! memory-bound shapes and on few rows of an odd number of columns (18 × 12168 × 113,
//! 14 × 291 × 9319).
//!
//! Uses a libtest-compatible harness so that, without a GPU, every test is reported as
//! *ignored* with the reason printed — never as passed.

#[path = "common/gemv_cases.rs"]
mod gemv_cases;
#[path = "common/gpu_harness.rs"]
mod harness;

use cudarc::driver::{CudaSlice, DeviceRepr};
use gemv_cases::{SHAPES, bits, inputs};
use harness::Test;
use kernels_gpu_host::check::reference;
use kernels_gpu_host::gpu::Gpu;
use kernels_gpu_host::gpu::autotune::{self, Tuned};
use kernels_gpu_host::plan::gemv::{GEMV_CONFIGS, Gemv, GemvClass, GemvElement, Operands};
use kernels_gpu_host::{MatmulKernel, MatmulShape, Precision, SgemmKernel, TileWidth};
use libtest_mimic::Failed;

/// Larger shapes than the simulator's: `xᵀ·B` and `A·x` at 4096² and `A·x` at 1059 × 5469
/// (odd `k`, a part-filled last block of rows), skinny products with 16 and 17 beside each
/// other, 33 × 100000 × 1 (k split over hundreds of slices), an outer-product-like
/// 4096 × 4 × 4096, a tiny output under a long k (33 × 100000 × 33, the small-m kernel
/// in three groups of rows), and narrow outputs of 17 to 32 columns (the bound-32 small-n
/// kernel, over several groups of staged `b`).
const LARGE: [(usize, usize, usize); 11] = [
    (1, 4096, 4096),
    (4096, 4096, 1),
    (1059, 5469, 1),
    (16, 4096, 4097),
    (4099, 4093, 16),
    (33, 100_000, 1),
    (4096, 4, 4096),
    (1000, 13, 999),
    (33, 100_000, 33),
    (1001, 5003, 24),
    (517, 1031, 32),
];

/// An element type the tests give rung 16: f32, or BF16 (rounded to nearest even, as the
/// host's and the device's conversions round).
trait Element: GemvElement + DeviceRepr {
    /// `x` in this type on the device.
    fn upload(gpu: &Gpu, x: &[f32]) -> Result<CudaSlice<Self>, Failed>;
    /// `x` as the kernel reads it, in f32.
    fn value(x: f32) -> f32;
}

impl Element for f32 {
    fn upload(gpu: &Gpu, x: &[f32]) -> Result<CudaSlice<f32>, Failed> {
        Ok(gpu.upload(x)?)
    }
    fn value(x: f32) -> f32 {
        x
    }
}

impl Element for half::bf16 {
    fn upload(gpu: &Gpu, x: &[f32]) -> Result<CudaSlice<half::bf16>, Failed> {
        Ok(gpu.upload_half::<half::bf16>(x)?)
    }
    fn value(x: f32) -> f32 {
        half::bf16::from_f32(x).to_f32()
    }
}

/// `g` on `shape`, its operands of `E`: the twin's bits (on the operands' f32 values),
/// within the f64 bound of its precision, the same bits again.
fn check<E: Element>(gpu: &Gpu, g: Gemv, shape: MatmulShape, seed: u64) -> Result<(), Failed> {
    let (a, b) = inputs(shape, seed);
    let (da, db) = (E::upload(gpu, &a)?, E::upload(gpu, &b)?);
    let mut out = gpu.nans(shape.lens().2)?;
    gpu.matmul_gemv_device(g, &da, &db, &mut out, shape)?;
    gpu.synchronize(g.config().spec.entry)?;
    let got = gpu.download(&out)?;
    let slice = g.launch(shape, gpu.multiprocessors(), &gpu.limits())?.slice;
    let seen = |x: &[f32]| x.iter().map(|&v| E::value(v)).collect::<Vec<_>>();
    let want = g.cpu(&seen(&a), &seen(&b), shape, slice);
    if let Some(i) = got
        .iter()
        .zip(&want)
        .position(|(x, y)| x.to_bits() != y.to_bits())
    {
        return Err(format!(
            "{g} on {shape}: element {i} is {}, the twin gives {}",
            got[i], want[i]
        )
        .into());
    }
    let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
    let acc = reference::compare(&got, &reference::matmul_f64(&a, &b, m, k, n));
    if !acc.within_bound(k, g.config().precision) {
        return Err(format!("{g} on {shape}: {acc:?}").into());
    }
    gpu.fill_nan(&mut out)?;
    gpu.matmul_gemv_device(g, &da, &db, &mut out, shape)?;
    if bits(&gpu.download(&out)?) != bits(&got) {
        return Err(format!("{g} on {shape}: a second run gave other bits").into());
    }
    Ok(())
}

/// The autotuned product of `precision` on a memory-bound shape: it times the rung-16
/// candidates of the precision beside the others, and whatever it chooses is within the
/// precision's bound.
fn autotuned(gpu: &Gpu, shape: MatmulShape, precision: Precision) -> Result<(), Failed> {
    let (a, b) = inputs(shape, 5);
    let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
    let mut out = gpu.zeros(shape.lens().2)?;
    let auto = MatmulKernel::Sgemm(SgemmKernel::autotuned(precision)?);
    gpu.matmul_device(auto, TileWidth::Tw16, &da, &db, &mut out, shape)?;
    let choice = autotune::choose(gpu, &da, &db, &mut out, shape, precision)?;
    let timed = Tuned::candidates(shape, precision);
    if !timed.iter().any(|c| matches!(c, Tuned::Gemv(_))) {
        return Err(format!("{shape}: no rung-16 candidate").into());
    }
    gpu.matmul_device(auto, TileWidth::Tw16, &da, &db, &mut out, shape)?;
    let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
    let acc = reference::compare(
        &gpu.download(&out)?,
        &reference::matmul_f64(&a, &b, m, k, n),
    );
    if !acc.within_bound(k, precision) {
        return Err(format!("{shape} by {choice}: {acc:?}").into());
    }
    eprintln!("{shape} {}: the autotuner chose {choice}", precision.name());
    Ok(())
}

/// The tuner of BF16 operands on a memory-bound shape: it times the rung-16 runs of BF16
/// operands beside rung 17's (a Hopper; elsewhere rung 17 is refused and rung 16 alone
/// runs), and whatever it chooses is within the BF16 bound.
fn autotuned_bf16_operands(gpu: &Gpu, shape: MatmulShape) -> Result<(), Failed> {
    use half::bf16;
    use kernels_gpu_host::gpu::autotune::HalfChoice;
    let (a, b) = inputs(shape, 6);
    let (da, db) = (gpu.upload_half::<bf16>(&a)?, gpu.upload_half::<bf16>(&b)?);
    let mut out = gpu.nans(shape.lens().2)?;
    let choice = gpu.gemm_half_auto_device(&da, &db, &mut out, shape)?;
    let timed = HalfChoice::candidates::<bf16>(shape, gpu.multiprocessors());
    if !timed.iter().any(|c| matches!(c, HalfChoice::Gemv(_))) {
        return Err(format!("{shape}: no rung-16 candidate").into());
    }
    let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
    let acc = reference::compare(
        &gpu.download(&out)?,
        &reference::matmul_f64(&a, &b, m, k, n),
    );
    if !acc.within_bound(k, Precision::Bf16) {
        return Err(format!("{shape} by {}: {acc:?}", choice.name()).into());
    }
    eprintln!(
        "{shape} bf16 operands: the autotuner chose {}",
        choice.name()
    );
    Ok(())
}

/// The small-`n` entries as the driver compiled them for this device: no local memory
/// (their ring of loads in flight stays in registers; the PTX has no `.local`, so any would
/// be a spill under their launch bounds), with their registers per thread on stderr.
fn small_n_registers(gpu: &Gpu) -> Result<(), Failed> {
    let mut spilled = vec![];
    for c in GEMV_CONFIGS.iter().filter(|c| c.class == GemvClass::SmallN) {
        let info = gpu.entry_info(c.spec.entry)?;
        eprintln!(
            "{}: {} registers, {} bytes of local memory per thread",
            c.name, info.registers_per_thread, info.local_bytes_per_thread
        );
        if info.local_bytes_per_thread > 0 {
            spilled.push(format!(
                "{}: {} bytes of local memory per thread",
                c.name, info.local_bytes_per_thread
            ));
        }
    }
    if spilled.is_empty() {
        Ok(())
    } else {
        Err(spilled.join("; ").into())
    }
}

fn main() {
    let gpu = harness::gpu();
    let mut trials = vec![harness::trial(
        &gpu,
        "gemv::small_n_registers".into(),
        small_n_registers,
    )];
    for (i, &(m, k, n)) in SHAPES.iter().chain(&LARGE).enumerate() {
        let shape = MatmulShape::new(m, k, n).expect("a valid shape");
        let every = Precision::ALL.into_iter();
        for g in every.flat_map(|p| Gemv::candidates(shape, p)) {
            let test: Test = Box::new(move |gpu| check::<f32>(gpu, g, shape, 300 + i as u64));
            trials.push(harness::trial(
                &gpu,
                format!("gemv::{g}::{m}x{k}x{n}"),
                test,
            ));
        }
        for g in Gemv::candidates_of(shape, Precision::Bf16, Operands::Bf16) {
            let test: Test =
                Box::new(move |gpu| check::<half::bf16>(gpu, g, shape, 700 + i as u64));
            trials.push(harness::trial(
                &gpu,
                format!("gemv::{g}::{m}x{k}x{n}"),
                test,
            ));
        }
    }
    for (m, k, n) in [
        (1, 4096, 4096),
        (4096, 4096, 3),
        (4096, 8, 4096),
        (33, 100_000, 1),
        (18, 12_168, 113),
        (14, 291, 9319),
    ] {
        let shape = MatmulShape::new(m, k, n).expect("a valid shape");
        for precision in Precision::ALL {
            trials.push(harness::trial(
                &gpu,
                format!("gemv::autotuned::{}::{m}x{k}x{n}", precision.name()),
                move |gpu| autotuned(gpu, shape, precision),
            ));
        }
        trials.push(harness::trial(
            &gpu,
            format!("gemv::autotuned::bf16-operands::{m}x{k}x{n}"),
            move |gpu| autotuned_bf16_operands(gpu, shape),
        ));
    }
    harness::run(trials)
}
