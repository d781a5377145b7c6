//! GPU tests of the multi-GPU handle: products, sums, reductions and sliding averages over
//! every GPU of the host have the bits of one GPU's. Each needs two GPUs or more and NCCL;
//! where they are missing every test is reported as ignored, with the reason printed.

#[path = "common/shapes.rs"]
mod shapes;

use cudarc::driver::CudaSlice;
use kernels_gpu_host::gpu::{AxisScratch, Gpu, SlidingScratch};
use kernels_gpu_host::multi::Gpus;
use kernels_gpu_host::multi::vector::sum_within_bound;
use kernels_gpu_host::plan::reduce::ReduceKernel;
use kernels_gpu_host::plan::sliding::SlidingKernel;
use kernels_gpu_host::problem::axis::{Axis, AxisOp, AxisShape};
use kernels_gpu_host::{
    Backend, Error, MatmulKernel, MatmulShape, Precision, SgemmKernel, TileWidth,
};
use libtest_mimic::{Arguments, Failed, Trial};
use shapes::signed;
use std::sync::Arc;

type Test = Box<dyn FnOnce(&Gpus) -> Result<(), Failed> + Send>;

/// The vectors' chunk in these tests: inputs of a few chunks stay small.
const CHUNK: usize = 1 << 16;

/// GPU 0 alone, with the tests' chunk: the one-GPU result to match.
fn one_gpu(g: &Gpus) -> Result<Gpus, Error> {
    let mut one = Gpus::new(&[g.ordinal(0)])?;
    one.set_vector_chunk(CHUNK)?;
    Ok(one)
}

/// Every GPU, or `None` after saying why the tests will be skipped (fewer than two GPUs, no
/// NCCL).
fn gpus() -> Option<Arc<Gpus>> {
    match Gpus::all().and_then(|mut g| g.set_vector_chunk(CHUNK).map(|()| g)) {
        Ok(g) if g.len() >= 2 => {
            if let Some((v, path)) = g.nccl() {
                eprintln!("{} GPUs, NCCL {}.{}.{} from {path}", g.len(), v.0, v.1, v.2);
            }
            Some(Arc::new(g))
        }
        Ok(_) => {
            eprintln!("multi-GPU tests SKIPPED (reported as ignored): one GPU only");
            None
        }
        Err(e) => {
            eprintln!("multi-GPU tests SKIPPED (reported as ignored): {e}");
            None
        }
    }
}

/// Rows past every kernel's block rows (at most 256): products of a few of these split over
/// several devices.
const ROWS: usize = 256;

fn same_bits(x: &[f32], y: &[f32], what: &str) -> Result<(), Failed> {
    if x.len() != y.len() {
        return Err(format!("{what}: {} values vs {}", x.len(), y.len()).into());
    }
    match x
        .iter()
        .zip(y)
        .position(|(a, b)| a.to_bits() != b.to_bits())
    {
        None => Ok(()),
        Some(i) => Err(format!("{what} [{i}]: {} vs {}", x[i], y[i]).into()),
    }
}

/// One GPU's product on device buffers, as [`Gpu::matmul_device`] runs it.
fn one_gpu_product(
    gpu: &Gpu, kernel: MatmulKernel, a: &[f32], b: &[f32], shape: MatmulShape,
) -> Result<Vec<f32>, Error> {
    let (da, db) = (gpu.upload(a)?, gpu.upload(b)?);
    let mut out = gpu.nans(shape.lens().2)?;
    gpu.matmul_device(kernel, TileWidth::Tw16, &da, &db, &mut out, shape)?;
    gpu.synchronize(kernel.name())?;
    gpu.download(&out)
}

/// `runs` products of `a` and `b` (already on GPU 0) over every GPU, rooted at GPU 0: each
/// has the bits `one` and parts that cover the `m` rows (the second and later runs split as
/// the one before measured, reusing its buffers).
fn rooted_runs(
    g: &Gpus, kernel: MatmulKernel, (da, db): (&CudaSlice<f32>, &CudaSlice<f32>),
    shape: MatmulShape, one: &[f32], runs: usize,
) -> Result<(), Failed> {
    let root = g.gpu(0);
    for run in 0..runs {
        let mut out = root.nans(shape.lens().2)?;
        let r = g.matmul_device(kernel, TileWidth::Tw16, da, db, &mut out, shape)?;
        g.synchronize()?;
        same_bits(
            &root.download(&out)?,
            one,
            &format!("run {run} {:?}", r.parts),
        )?;
        let timings = r.timings()?;
        if timings.iter().map(|p| p.rows).sum::<usize>() != shape.m as usize {
            return Err(format!("parts cover {timings:?}").into());
        }
    }
    Ok(())
}

fn tests() -> Vec<(String, Test)> {
    let mut t: Vec<(String, Test)> = vec![];
    // An odd product large enough that, on 2 to 4 GPUs of 100-odd multiprocessors, the other
    // devices take `b` in column panels (a first wave of rows over each, then the rest), run
    // three times: the split balanced from the last run, then the kept buffers reused.
    t.push((
        "multi::matmul::fp32::panels".into(),
        Box::new(|g| {
            let (m, k, n) = (9043, 257, 16451);
            let shape = MatmulShape::new(m, k, n)?;
            let kernel = MatmulKernel::Sgemm(SgemmKernel::autotuned(Precision::Fp32)?);
            let (a, b) = (signed(3, m * k), signed(4, k * n));
            let root = g.gpu(0);
            let one = one_gpu_product(root, kernel, &a, &b, shape)?;
            let (da, db) = (root.upload(&a)?, root.upload(&b)?);
            rooted_runs(g, kernel, (&da, &db), shape, &one, 3)
        }),
    ));
    // Odd sizes (a thin last wave: the autotuner may choose a row split), and a product
    // whose rows split into several parts per device.
    let shapes = [(2049usize, 2047usize, 2051usize), (4 * ROWS + 7, 512, 768)];
    for (m, k, n) in shapes {
        for precision in Precision::ALL {
            t.push((
                format!("multi::matmul::{}::{m}x{k}x{n}", precision.name()),
                Box::new(move |g| {
                    let shape = MatmulShape::new(m, k, n)?;
                    let kernel = MatmulKernel::Sgemm(SgemmKernel::autotuned(precision)?);
                    let (a, b) = (signed(1, m * k), signed(2, k * n));
                    let root = g.gpu(0);
                    let one = one_gpu_product(root, kernel, &a, &b, shape)?;
                    // Root in, root out: twice, the second split balanced from the first.
                    let (da, db) = (root.upload(&a)?, root.upload(&b)?);
                    rooted_runs(g, kernel, (&da, &db), shape, &one, 2)?;
                    // Left sharded, then gathered; and from the host.
                    let (shards, _) = g.matmul_sharded(kernel, TileWidth::Tw16, &da, &db, shape)?;
                    same_bits(&shards.download(g)?, &one, "sharded")?;
                    let mut gathered = root.nans(m * n)?;
                    g.gather(&shards, &mut gathered)?;
                    g.synchronize()?;
                    same_bits(&root.download(&gathered)?, &one, "gathered")?;
                    same_bits(
                        &g.matmul(kernel, TileWidth::Tw16, &a, &b, shape)?,
                        &one,
                        "host",
                    )
                }),
            ));
        }
    }
    t.push((
        "multi::matmul::named_kernels".into(),
        Box::new(|g| {
            let (m, k, n) = (3 * ROWS + 5, 96, 130);
            let shape = MatmulShape::new(m, k, n)?;
            let (a, b) = (signed(3, m * k), signed(4, k * n));
            for kernel in [
                MatmulKernel::Naive,
                MatmulKernel::TiledDynamic,
                MatmulKernel::Sgemm(SgemmKernel::DEFAULT),
            ] {
                let one = one_gpu_product(g.gpu(0), kernel, &a, &b, shape)?;
                same_bits(
                    &g.matmul(kernel, TileWidth::Tw16, &a, &b, shape)?,
                    &one,
                    kernel.name(),
                )?;
            }
            Ok(())
        }),
    ));
    for kernel in ReduceKernel::ALL {
        t.push((
            format!("multi::sum::{}", kernel.name()),
            Box::new(move |g| {
                let one = one_gpu(g)?;
                for len in [0usize, 1, 1000, CHUNK, 5 * CHUNK + 3, 64 * CHUNK + 5] {
                    let x = signed(len as u64, len);
                    let first = one.sum(kernel, &x)?;
                    let s = g.sum(kernel, &x)?;
                    if s.to_bits() != first.to_bits() || !sum_within_bound(s, &x, CHUNK) {
                        return Err(
                            format!("{len}: {s} on {} GPUs, {first} on one", g.len()).into()
                        );
                    }
                    if len <= CHUNK {
                        let single = one.gpu(0).sum(kernel, &x)?;
                        if single.to_bits() != s.to_bits() {
                            return Err(format!("{len}: {s} vs one kernel's {single}").into());
                        }
                    }
                }
                Ok(())
            }),
        ));
    }
    for kernel in SlidingKernel::ALL {
        t.push((
            format!("multi::sliding::{}", kernel.name()),
            Box::new(move |g| {
                let chunk = CHUNK;
                let n = 5 * chunk + 11;
                let a = signed(9, n);
                // 100000: a halo longer than a device's part.
                let windows: &[usize] = match kernel {
                    SlidingKernel::Scan => &[1, 2, 1000, 100_000],
                    _ => &[1, 2, 300],
                };
                let one = one_gpu(g)?;
                for &w in windows {
                    let first = one.sliding_average(kernel, &a, w)?;
                    same_bits(&g.sliding_average(kernel, &a, w)?, &first, &format!("w{w}"))?;
                }
                // One chunk: one kernel's bits.
                let short = &a[..chunk];
                let gpu = g.gpu(0);
                let dx = gpu.upload(short)?;
                let mut out = gpu.nans(chunk - 16)?;
                let mut scratch = SlidingScratch::default();
                gpu.sliding_average_device(kernel, &dx, 17, &mut out, &mut scratch)?;
                gpu.synchronize(kernel.name())?;
                same_bits(
                    &g.sliding_average(kernel, short, 17)?,
                    &gpu.download(&out)?,
                    "one chunk",
                )
            }),
        ));
    }
    t.push((
        "multi::reduce_axis".into(),
        Box::new(|g| {
            let gpu = g.gpu(0);
            for (rows, cols) in [(16384usize, 1024usize), (3001, 67), (40, 64)] {
                let x = signed((rows * cols) as u64, rows * cols);
                let shape = AxisShape::new(rows, cols)?;
                let dx = gpu.upload(&x)?;
                for axis in Axis::ALL {
                    for op in AxisOp::ALL {
                        let mut out = gpu.nans(shape.outputs(axis) as usize)?;
                        let mut scratch = AxisScratch::default();
                        gpu.reduce_axis_device(op, axis, &dx, shape, &mut out, &mut scratch)?;
                        gpu.synchronize("reduce_axis")?;
                        let one = gpu.download(&out)?;
                        let what = format!("{}-{} {rows}×{cols}", axis.name(), op.name());
                        same_bits(&g.reduce_axis(op, axis, &x, rows, cols)?, &one, &what)?;
                    }
                }
            }
            Ok(())
        }),
    ));
    t.push((
        "multi::bad_input_is_typed".into(),
        Box::new(|g| {
            let shape = MatmulShape::new(4, 4, 4)?;
            let other = g.gpu(1);
            let (a, b) = (other.zeros(16)?, other.zeros(16)?);
            let mut out = g.gpu(0).zeros(16)?;
            let kernel = MatmulKernel::Sgemm(SgemmKernel::DEFAULT);
            match g.matmul_device(kernel, TileWidth::Tw16, &a, &b, &mut out, shape) {
                Err(Error::WrongDevice { .. }) => {}
                Err(e) => return Err(format!("another error: {e}").into()),
                Ok(_) => return Err("operands on GPU 1 were taken for the root's".into()),
            }
            match Gpus::new(&[0, 0]) {
                Err(Error::DeviceCount { .. }) => Ok(()),
                Err(e) => Err(format!("another error: {e}").into()),
                Ok(_) => Err("a GPU listed twice was taken".into()),
            }
        }),
    ));
    t
}

fn main() {
    let gpus = gpus();
    let trials = tests()
        .into_iter()
        .map(|(name, f)| {
            let g = gpus.clone();
            let ignored = g.is_none();
            Trial::test(name, move || f(g.as_deref().expect("ignored without GPUs")))
                .with_ignored_flag(ignored)
        })
        .collect();
    let mut args = Arguments::from_args();
    // One test at a time: each spans every GPU, and its buffers several GiB.
    args.test_threads.get_or_insert(1);
    libtest_mimic::run(&args, trials).exit()
}
