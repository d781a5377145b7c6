//! GPU tests of the reductions and sliding averages; ignored, with the reason printed,
//! where there is no GPU.

#[path = "common/gpu_harness.rs"]
mod harness;

use harness::Test;
use kernels_gpu_host::Backend;
use kernels_gpu_host::data::Rng;
use kernels_gpu_host::reduce::{self, ReduceKernel};
use kernels_gpu_host::sliding::{self, SlidingKernel};

fn signed(seed: u64, n: usize) -> Vec<f32> {
    Rng::new(seed)
        .uniform(n)
        .into_iter()
        .map(|x| 2.0 * x - 1.0)
        .collect()
}

fn tests() -> Vec<(String, Test)> {
    let mut t: Vec<(String, Test)> = vec![];
    for k in ReduceKernel::ALL {
        for n in [0usize, 1, 3, 17, 4097, 1_000_003, 1 << 24] {
            t.push((
                format!("gpu::{}::n{n}", k.name()),
                Box::new(move |g| {
                    let x = signed(n as u64, n);
                    let s = g.sum(k, &x)?;
                    if !reduce::within_bound(s, &x) {
                        return Err(
                            format!("sum {s}, reference {:?}", reduce::reference(&x)).into()
                        );
                    }
                    Ok(())
                }),
            ));
        }
    }
    for k in SlidingKernel::ALL {
        for (n, w) in [
            (0usize, 3usize),
            (2, 3),
            (1, 1),
            (6, 2),
            (1001, 17),
            (100_003, 300),
            (5000, 5000),
        ] {
            t.push((
                format!("gpu::{}::n{n}_w{w}", k.name()),
                Box::new(move |g| {
                    let a = signed(7 + n as u64, n);
                    let out = g.sliding_average(k, &a, w)?;
                    if !sliding::within_bound(&out, &a, w) {
                        return Err(format!("n={n} w={w}: outside the bound").into());
                    }
                    Ok(())
                }),
            ));
        }
    }
    t.push((
        "gpu::sliding_naive_and_shared_agree_bitwise".into(),
        Box::new(|g| {
            let a = signed(3, 70_001);
            let (x, y) = (
                g.sliding_average(SlidingKernel::Naive, &a, 33)?,
                g.sliding_average(SlidingKernel::Shared, &a, 33)?,
            );
            if x != y {
                return Err("naive and shared differ".into());
            }
            Ok(())
        }),
    ));
    t
}

fn main() {
    let gpu = harness::gpu();
    harness::run(
        tests()
            .into_iter()
            .map(|(name, f)| harness::trial(&gpu, name, f))
            .collect(),
    );
}
