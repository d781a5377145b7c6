//! GPU tests of the reductions (flat, along rows and columns) and sliding averages; ignored,
//! with the reason printed, where there is no GPU.

#[path = "common/fma_product.rs"]
mod fma_product;
#[path = "common/gpu_harness.rs"]
mod harness;

use fma_product::same_bits;
use harness::Test;
use kernels_gpu::sliding::scan;
use kernels_gpu_host::Backend;
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::plan::reduce::{self, ReduceKernel};
use kernels_gpu_host::plan::sliding::{self, SlidingKernel};
use kernels_gpu_host::problem::axis::{self, Axis, AxisOp, AxisShape};

fn signed(seed: u64, n: usize) -> Vec<f32> {
    Rng::new(seed).signed(n)
}

/// The longest window whose sum before a tile comes from the tile's halo and published
/// aggregates, without the look-back.
const FAR_WINDOW: usize = scan::FAR_WINDOW as usize;

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
        // Empty, shorter than the window, a window of 1; then longer, and as long as the window.
        let short = [(0usize, 3usize), (2, 3), (1, 1), (6, 2)];
        let long = [(1001, 17), (100_003, 300), (5000, 5000)];
        for (n, w) in short.into_iter().chain(long) {
            t.push((
                format!("gpu::{}::n{n}_w{w}", k.name()),
                Box::new(move |g| {
                    let a = signed(7 + n as u64, n);
                    let out = g.sliding_average(k, &a, w)?;
                    if !sliding::within_bound(k, &out, &a, w) {
                        return Err(format!("n={n} w={w}: outside the bound").into());
                    }
                    Ok(())
                }),
            ));
        }
    }
    // The scan at any window, on inputs spanning many tiles: thousands of blocks look back
    // concurrently, over predecessors still running.
    for (n, w) in [
        (1usize, 1usize),
        (9001, 4099),
        (1 << 24, 1),
        (1 << 24, 2),
        (1 << 24, 3),
        (1 << 24, 64),
        ((1 << 24) + 7, 1021),
        (1 << 24, 100_000),
        // The most whole tiles summed from published aggregates, and one more.
        (1 << 24, FAR_WINDOW),
        (1 << 24, FAR_WINDOW + 1),
        (3_000_001, 3_000_001),
        (3_000_001, 2_999_999),
    ] {
        t.push((
            format!("gpu::sliding-scan::n{n}_w{w}"),
            Box::new(move |g| {
                let a = signed(11 + n as u64 + w as u64, n);
                let out = g.sliding_average(SlidingKernel::Scan, &a, w)?;
                let r = sliding::reference(&a, w);
                if !sliding::within_bound_of(SlidingKernel::Scan, &out, &r, w) {
                    return Err(format!(
                        "n={n} w={w}: outside the bound, max err {}",
                        sliding::max_abs_err(&out, &r)
                    )
                    .into());
                }
                Ok(())
            }),
        ));
    }
    // A window within FAR_TILES tiles of its halo is summed in a fixed order: the same bits
    // every run, however the blocks are scheduled.
    for w in [3, 100_000, FAR_WINDOW] {
        t.push((
            format!("gpu::sliding-scan::same_bits_every_run_w{w}"),
            Box::new(move |g| {
                let a = signed(w as u64, 1 << 24);
                let first = g.sliding_average(SlidingKernel::Scan, &a, w)?;
                for run in 1..4 {
                    let again = g.sliding_average(SlidingKernel::Scan, &a, w)?;
                    if let Some(i) =
                        (0..first.len()).find(|&i| first[i].to_bits() != again[i].to_bits())
                    {
                        return Err(format!(
                            "run {run} differs at output {i}: {} then {}",
                            first[i], again[i]
                        )
                        .into());
                    }
                }
                Ok(())
            }),
        ));
    }
    t.push((
        "gpu::sliding-scan::non_finite_inputs".into(),
        Box::new(|g| {
            let mut a = signed(5, 1 << 20);
            a[1000] = f32::NAN;
            a[500_000] = f32::INFINITY;
            a[500_010] = f32::NEG_INFINITY;
            a[900_000] = f32::NEG_INFINITY;
            for w in [1, 7, 64] {
                let out = g.sliding_average(SlidingKernel::Scan, &a, w)?;
                if !sliding::within_bound(SlidingKernel::Scan, &out, &a, w) {
                    return Err(format!("w={w}: outside the bound").into());
                }
            }
            Ok(())
        }),
    ));
    t.push((
        "gpu::sliding-scan::scan_and_simulator_agree_on_a_window_past_shared_memory".into(),
        Box::new(|g| {
            let a = signed(6, 40_000);
            let gpu = g.sliding_average(SlidingKernel::Scan, &a, 12_000)?;
            let sim = kernels_gpu_host::sim::Simulator::default().sliding_average(
                SlidingKernel::Scan,
                &a,
                12_000,
            )?;
            if !sliding::within_bound(SlidingKernel::Scan, &gpu, &a, 12_000) {
                return Err("outside the bound".into());
            }
            if gpu.len() != sim.len() {
                return Err("lengths differ".into());
            }
            Ok(())
        }),
    ));
    // Small and thin, then large, then empty.
    let thin = [(1usize, 1usize), (7, 5), (1, 100_003), (100_003, 1)];
    let large = [(1001, 67), (4099, 1027), (1 << 20, 64), (2048, 4096)];
    for (rows, cols) in thin.into_iter().chain(large).chain([(3, 0), (0, 3)]) {
        for axis in Axis::ALL {
            for op in AxisOp::ALL {
                t.push((
                    format!("gpu::{}-{}::{rows}x{cols}", axis.name(), op.name()),
                    Box::new(move |g| {
                        let x = signed(rows as u64 * 31 + cols as u64, rows * cols);
                        let shape = AxisShape::new(rows, cols)?;
                        let empty_max = op == AxisOp::Max
                            && shape.reduced_len(axis) == 0
                            && shape.outputs(axis) > 0;
                        let out = match g.reduce_axis(op, axis, &x, rows, cols) {
                            Err(kernels_gpu_host::Error::EmptyReduction { .. }) if empty_max => {
                                return Ok(());
                            }
                            other => other?,
                        };
                        if !axis::within_bound(op, axis, &out, &x, shape) {
                            return Err(format!(
                                "outside the bound, max err {}",
                                axis::max_abs_err(op, axis, &out, &x, shape)
                            )
                            .into());
                        }
                        // Fixed combination order: the same bits every run.
                        let again = g.reduce_axis(op, axis, &x, rows, cols)?;
                        if !same_bits(&out, &again) {
                            return Err("two runs differ".into());
                        }
                        Ok(())
                    }),
                ));
            }
        }
    }
    t.push((
        "gpu::axis_max_propagates_nan".into(),
        Box::new(|g| {
            let (rows, cols) = (3000, 64);
            let mut x = signed(9, rows * cols);
            x[1234 * cols + 17] = f32::NAN;
            let by_row = g.reduce_axis(AxisOp::Max, Axis::Rows, &x, rows, cols)?;
            let by_col = g.reduce_axis(AxisOp::Max, Axis::Cols, &x, rows, cols)?;
            let rows_ok = by_row
                .iter()
                .enumerate()
                .all(|(r, m)| m.is_nan() == (r == 1234));
            let cols_ok = by_col
                .iter()
                .enumerate()
                .all(|(c, m)| m.is_nan() == (c == 17));
            if !(rows_ok && cols_ok) {
                return Err("NaN not confined to its row and column".into());
            }
            Ok(())
        }),
    ));
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
    // The fusion lesson's unfused product: zip into m·n·k, then row sums; within its bound,
    // and the same bits as the simulator's (one rounding per product, the same summation
    // tree).
    let degenerate = [(1usize, 1usize, 1usize), (7, 1, 3), (3, 13, 1), (5, 0, 2)];
    for (m, k, n) in degenerate.into_iter().chain([(33, 67, 17), (64, 515, 40)]) {
        t.push((
            format!("gpu::zip_reduce_matmul::{m}x{k}x{n}"),
            Box::new(move |g| {
                use kernels_gpu_host::gpu::AxisScratch;
                use kernels_gpu_host::{MatmulShape, Simulator, check::reference, plan::fusion};
                let shape = MatmulShape::new(m, k, n)?;
                let (a, b) = (signed(1 + m as u64, m * k), signed(2 + n as u64, k * n));
                let (da, db) = (g.upload(&a)?, g.upload(&b)?);
                let mut tmp = g.zeros(fusion::intermediate_len(shape)? as usize)?;
                let mut out = g.upload(&vec![f32::NAN; m * n])?;
                let mut scratch = AxisScratch::default();
                g.zip_reduce_matmul_device(&da, &db, &mut tmp, &mut out, &mut scratch, shape)?;
                let got = g.download(&out)?;
                let r = reference::matmul_f64(&a, &b, m, k, n);
                let acc = reference::compare(&got, &r);
                if !acc.within_f32_bound(fusion::roundings(shape)?) {
                    return Err(format!("outside the bound: {acc:?}").into());
                }
                let sim = Simulator::default().zip_reduce_matmul(&a, &b, shape)?;
                if !same_bits(&got, &sim) {
                    return Err("GPU and simulator differ".into());
                }
                Ok(())
            }),
        ));
    }
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
