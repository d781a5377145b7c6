//! The cust path against the cudarc path (`kernels-gpu-host`) on the same GPU, in one
//! process and one (primary) context: every kernel family gives the same bits on odd
//! shapes, and launches beyond the limits are refused with the same `LimitError` before
//! the driver is called. Where the driver sees no GPU the tests are reported as ignored;
//! without the driver this binary (linked to libcuda.so.1) cannot start at all, so CI
//! builds it without running it.

use cust_host::{CustGpu, Error, Launch};
use cust_plan::Kernel;
use kernels_gpu_host::gpu::{Gpu, SlidingScratch};
use kernels_gpu_host::launch::{Dim3, Limit, LimitError};
use kernels_gpu_host::plan::reduce::ReduceKernel;
use kernels_gpu_host::plan::sliding::SlidingKernel;
use kernels_gpu_host::{MatmulKernel, MatmulShape, TileWidth};
use libtest_mimic::{Arguments, Failed, Trial};
use std::sync::Arc;

type Both = Arc<(CustGpu, Gpu)>;
/// One test body on both hosts.
type Test = Box<dyn FnOnce(&Both) -> Result<(), Failed> + Send>;

/// Odd shapes: nothing a multiple of a tile, k = 1, a single partial tile, k = 0.
const SHAPES: [(usize, usize, usize); 5] = [
    (97, 33, 65),
    (129, 1, 255),
    (1000, 300, 700),
    (5, 7, 3),
    (17, 0, 9),
];

fn data(seed: u64, len: usize) -> Vec<f32> {
    // Signed, so that cancellation shows any difference in the order of operations.
    cust_plan::reference::uniform(seed, len)
        .into_iter()
        .map(|x| 2.0 * x - 1.0)
        .collect()
}

fn same_bits(what: &str, cust: &[f32], cudarc: &[f32]) -> Result<(), Failed> {
    let (c, r): (&[u32], &[u32]) = (bytemuck::cast_slice(cust), bytemuck::cast_slice(cudarc));
    if c.len() != r.len() {
        return Err(format!("{what}: {} vs {} elements", c.len(), r.len()).into());
    }
    match c.iter().zip(r).position(|(x, y)| x != y) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: element {i} differs: cust {} vs cudarc {}",
            cust[i], cudarc[i]
        )
        .into()),
    }
}

fn e<E: std::fmt::Display>(e: E) -> Failed {
    e.to_string().into()
}

/// The cudarc host's name for a catalogue row.
fn cudarc_kernel(k: Kernel) -> (MatmulKernel, TileWidth) {
    let tw = TileWidth::try_from(k.tile_width().unwrap_or(16)).unwrap();
    (MatmulKernel::from_name(k.name()).unwrap(), tw)
}

fn matmul(both: &Both, kernel: Kernel) -> Result<(), Failed> {
    let (cust, gpu) = (&both.0, &both.1);
    let (ck, tw) = cudarc_kernel(kernel);
    for (i, &(m, k, n)) in SHAPES.iter().enumerate() {
        let (a, b) = (data(i as u64, m * k), data(100 + i as u64, k * n));
        let poison = vec![f32::NAN; m * n];
        let (ca, cb, mut co) = (
            cust.upload(&a).map_err(e)?,
            cust.upload(&b).map_err(e)?,
            cust.upload(&poison).map_err(e)?,
        );
        cust.matmul(kernel, &ca, &cb, &mut co, (m, k, n))
            .map_err(e)?;
        let via_cust = cust.download(&co).map_err(e)?;
        let shape = MatmulShape::new(m, k, n).map_err(e)?;
        let (ga, gb, mut go) = (
            gpu.upload(&a).map_err(e)?,
            gpu.upload(&b).map_err(e)?,
            gpu.upload(&poison).map_err(e)?,
        );
        gpu.matmul_device(ck, tw, &ga, &gb, &mut go, shape)
            .map_err(e)?;
        let via_cudarc = gpu.download(&go).map_err(e)?;
        same_bits(&format!("{m}×{k}×{n}"), &via_cust, &via_cudarc)?;
        if via_cust.iter().any(|x| !x.is_finite()) {
            return Err(format!("{m}×{k}×{n}: an output was not written").into());
        }
    }
    Ok(())
}

const LENS: [usize; 6] = [1, 5, 4099, 1_000_003, (3 << 20) + 7, (1 << 24) + 3];

fn sum(both: &Both, kernel: Kernel) -> Result<(), Failed> {
    let (cust, gpu) = (&both.0, &both.1);
    let rk = ReduceKernel::from_name(kernel.name()).unwrap();
    let (mut cs, mut gs) = (
        cust.sum_scratch().map_err(e)?,
        gpu.reduce_scratch().map_err(e)?,
    );
    for (i, &n) in LENS.iter().enumerate() {
        let x = data(200 + i as u64, n);
        let cx = cust.upload(&x).map_err(e)?;
        cust.sum(kernel, &cx, &mut cs).map_err(e)?;
        let gx = gpu.upload(&x).map_err(e)?;
        gpu.sum_device(rk, &gx, &mut gs).map_err(e)?;
        same_bits(
            &format!("sum of {n}"),
            &cust.download(&cs.result).map_err(e)?,
            &gpu.download(&gs.result).map_err(e)?,
        )?;
    }
    Ok(())
}

fn sliding(both: &Both, kernel: Kernel) -> Result<(), Failed> {
    let (cust, gpu) = (&both.0, &both.1);
    let sk = SlidingKernel::from_name(kernel.name()).unwrap();
    let n = 100_003;
    let x = data(300, n);
    let (cx, gx) = (cust.upload(&x).map_err(e)?, gpu.upload(&x).map_err(e)?);
    let mut scratch = SlidingScratch::default();
    for w in [1, 2, 3, 17, 256, 1000, n, n + 1] {
        let outputs = (n + 1).saturating_sub(w);
        let poison = vec![f32::NAN; outputs];
        let (mut co, mut go) = (
            cust.upload(&poison).map_err(e)?,
            gpu.upload(&poison).map_err(e)?,
        );
        let via_cust = cust.sliding(kernel, &cx, w, &mut co);
        let via_cudarc = gpu.sliding_average_device(sk, &gx, w, &mut go, &mut scratch);
        match (via_cust, via_cudarc) {
            (Ok(()), Ok(())) => {}
            // A window whose tile does not fit a block's shared memory: the same refusal.
            (Err(Error::Launch(c)), Err(kernels_gpu_host::Error::Launch(g))) if c == g => continue,
            (c, g) => return Err(format!("window {w}: cust {c:?}, cudarc {g:?}").into()),
        }
        let via_cust = cust.download(&co).map_err(e)?;
        same_bits(
            &format!("window {w}"),
            &via_cust,
            &gpu.download(&go).map_err(e)?,
        )?;
        if via_cust.iter().any(|x| !x.is_finite()) {
            return Err(format!("window {w}: an output was not written").into());
        }
    }
    Ok(())
}

/// A window whose shared tile does not fit a block: both refuse it with the same error,
/// and nothing was launched (the output keeps its poison).
fn too_much_shared_memory(both: &Both) -> Result<(), Failed> {
    let (cust, gpu) = (&both.0, &both.1);
    let kernel = Kernel::by_name("sliding-shared").unwrap();
    // 240 KB of window: more shared memory than any GPU allows a block, opt-in included.
    let (n, w) = (100_000, 60_000);
    let x = data(400, n);
    let poison = vec![f32::NAN; n - w + 1];
    let mut co = cust.upload(&poison).map_err(e)?;
    let cx = cust.upload(&x).map_err(e)?;
    let via_cust = cust.sliding(kernel, &cx, w, &mut co);
    let mut go = gpu.upload(&poison).map_err(e)?;
    let via_cudarc = gpu.sliding_average_device(
        SlidingKernel::Shared,
        &gpu.upload(&x).map_err(e)?,
        w,
        &mut go,
        &mut SlidingScratch::default(),
    );
    let (Err(Error::Launch(c)), Err(kernels_gpu_host::Error::Launch(g))) = (&via_cust, &via_cudarc)
    else {
        return Err(format!("expected two limit errors: {via_cust:?}, {via_cudarc:?}").into());
    };
    assert_eq!(c, g);
    assert!(
        matches!(
            c,
            LimitError::Exceeds {
                what: Limit::SharedBytesPerBlock,
                ..
            }
        ),
        "{c}"
    );
    if !cust.download(&co).map_err(e)?.iter().all(|x| x.is_nan()) {
        return Err("the refused launch wrote its output".into());
    }
    Ok(())
}

/// A block larger than the function allows: the SGEMM entries declare `.maxntid 256`, so the
/// driver lets them run no more threads than that, though the device allows 1024.
fn block_over_the_function_limit(both: &Both) -> Result<(), Failed> {
    let (cust, gpu) = (&both.0, &both.1);
    let kernel = Kernel::sgemm()
        .find(|k| k.spec().launch_bounds.is_some_and(|b| b.max_threads == 256))
        .unwrap();
    let entry = kernel.spec().entry;
    let launch = Launch {
        grid: Dim3::x(1),
        block: Dim3::x(512),
        dynamic_shared_bytes: 0,
        cluster: 1,
    };
    let via_cust = cust.check_launch(entry, &launch);
    let via_cudarc = gpu.check_launch(entry, &launch);
    let (Err(Error::Launch(c)), Err(kernels_gpu_host::Error::Launch(g))) = (&via_cust, &via_cudarc)
    else {
        return Err(format!("expected two limit errors: {via_cust:?}, {via_cudarc:?}").into());
    };
    assert_eq!(c, g);
    assert_eq!(
        *c,
        LimitError::Exceeds {
            what: Limit::ThreadsPerBlockForKernel,
            requested: 512,
            limit: 256
        }
    );
    Ok(())
}

fn main() {
    let both: Option<Both> = match CustGpu::new() {
        Ok(cust) => Some(Arc::new((
            cust,
            Gpu::new().expect("cudarc sees the GPU cust sees"),
        ))),
        Err(err) => {
            eprintln!("GPU tests SKIPPED (reported as ignored): {err}");
            None
        }
    };
    let trial = |name: String, f: Test| {
        let b = both.clone();
        let ignored = b.is_none();
        Trial::test(name, move || f(b.as_ref().expect("ignored without a GPU")))
            .with_ignored_flag(ignored)
    };
    let mut trials = vec![Trial::test("same_ptx_as_the_cudarc_host", || {
        if cust_host::KERNELS_PTX != kernels_gpu_host::plan::ptx::KERNELS_PTX {
            return Err("the two hosts built different PTX modules".into());
        }
        Ok(())
    })];
    for k in Kernel::lecture().chain(Kernel::sgemm()) {
        let name = format!(
            "matmul_bits/{}{}",
            k.name(),
            k.tile_width().map_or(String::new(), |t| format!("/tw{t}"))
        );
        trials.push(trial(name, Box::new(move |b| matmul(b, k))));
    }
    for k in Kernel::reduce() {
        trials.push(trial(
            format!("sum_bits/{}", k.name()),
            Box::new(move |b| sum(b, k)),
        ));
    }
    for k in Kernel::sliding() {
        trials.push(trial(
            format!("sliding_bits/{}", k.name()),
            Box::new(move |b| sliding(b, k)),
        ));
    }
    trials.push(trial(
        "refused/too_much_shared_memory".into(),
        Box::new(too_much_shared_memory),
    ));
    trials.push(trial(
        "refused/block_over_the_function_limit".into(),
        Box::new(block_over_the_function_limit),
    ));
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}
