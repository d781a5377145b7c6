//! The multi-GPU splits on simulated devices ([`SimulatedDevices`]): a product split by rows
//! over 1 to 4 devices, evenly or not, has one device's bits in every precision and for every
//! kind of autotuned choice (a row split straddling two devices' rows included), also when
//! run as the GPUs run a product gathered on the root (launches over column panels of `b`,
//! steps of rows); a sum in chunks has the same bits on any device count (and one device's
//! single-kernel bits for an input of one chunk); a sliding average whose halo spans several
//! devices, and reductions along rows and columns, have one device's bits.

#[path = "common/shapes.rs"]
mod shapes;

use kernels_gpu_host::gpu::autotune::Tuned;
use kernels_gpu_host::multi::simulated::SimulatedDevices;
use kernels_gpu_host::multi::vector::sum_within_bound;
use kernels_gpu_host::plan::packed::{PACKED_CONFIGS, PackedRung, default_config};
use kernels_gpu_host::plan::reduce::ReduceKernel;
use kernels_gpu_host::plan::row_split::RowSplit;
use kernels_gpu_host::plan::sliding::{self, SlidingKernel};
use kernels_gpu_host::plan::split_k::SplitK;
use kernels_gpu_host::problem::axis::{Axis, AxisOp};
use kernels_gpu_host::sim::{Simulator, aligned_copy, aligned_floats};
use kernels_gpu_host::{Backend, MatmulKernel, MatmulShape, SgemmKernel, TileWidth};
use shapes::signed;

/// Rows past every kernel's block rows (at most 256): products of a few of these split over
/// several devices.
const ROWS: usize = 256;

fn same_bits(x: &[f32], y: &[f32], what: &str) {
    assert_eq!(x.len(), y.len(), "{what}: lengths");
    for (i, (a, b)) in x.iter().zip(y).enumerate() {
        assert_eq!(a.to_bits(), b.to_bits(), "{what} [{i}]: {a} vs {b}");
    }
}

/// Splits of rows over 1 to 4 devices: even, and uneven (a device with none).
fn weightings() -> Vec<Vec<f64>> {
    vec![
        vec![1.0],
        vec![1.0, 1.0],
        vec![1.0, 1.0, 1.0],
        vec![3.0, 1.0, 2.0],
        vec![1.0, 0.0, 1.0, 1.0],
    ]
}

/// Rows enough for three or four parts, with a short last one.
fn rows() -> usize {
    2 * ROWS + 37
}

#[test]
fn products_split_by_rows_have_one_devices_bits() {
    let (m, k, n) = (rows(), 24, 40);
    let shape = MatmulShape::new(m, k, n).unwrap();
    let (a, b) = (signed(1, m * k), signed(2, k * n));
    let (aa, ab) = (aligned_copy(&a), aligned_copy(&b));
    let one = Simulator::default();
    let kernels = [
        (MatmulKernel::Naive, TileWidth::Tw16),
        (MatmulKernel::TiledDynamic, TileWidth::Tw8),
        (MatmulKernel::TiledStatic, TileWidth::Tw32),
        (MatmulKernel::Sgemm(SgemmKernel::Autotuned), TileWidth::Tw16),
        (
            MatmulKernel::Sgemm(SgemmKernel::DEFAULT_TF32),
            TileWidth::Tw16,
        ),
        (
            MatmulKernel::Sgemm(SgemmKernel::AutotunedBf16),
            TileWidth::Tw16,
        ),
    ];
    for (kernel, tw) in kernels {
        let whole = one
            .matmul(
                kernel,
                tw,
                aligned_floats(&aa, m * k),
                aligned_floats(&ab, k * n),
                shape,
            )
            .unwrap();
        for w in weightings() {
            let devices = SimulatedDevices::new(w.len(), 16).unwrap();
            let split = devices.matmul(kernel, tw, &a, &b, shape, &w).unwrap();
            same_bits(&split, &whole, &format!("{} over {w:?}", kernel.name()));
        }
    }
}

#[test]
fn products_gathered_over_panels_of_b_have_one_devices_bits() {
    // A plain configuration with 64 × 64 blocks: the other devices take `b` in four column
    // panels (the last narrower), their first block row over each panel, then the rest.
    let config = SgemmKernel::TUNED
        .into_iter()
        .find(|k| {
            let g = k.config().geometry;
            (g.bm, g.bn) == (64, 64) && k.name().starts_with("sgemm-multistage-")
        })
        .expect("a 64 × 64 configuration");
    let (m, k, n) = (4 * 3 * 64 + 37, 64, 3 * 64 + 45);
    let shape = MatmulShape::new(m, k, n).unwrap();
    let (a, b) = (signed(7, m * k), signed(8, k * n));
    let devices = SimulatedDevices::new(4, 16).unwrap();
    let split_k = SplitK::candidates_for(shape)
        .find(|s| s.splits == 2)
        .expect("a split-k run of this shape");
    // A wave of one block row: the panels for the plain configuration; the steps for all
    // (split-k's blocks sum slices of `k` and take all of `b`).
    let one_row = |_: usize, _: usize| 64;
    for tuned in [Tuned::Config(config), Tuned::SplitK(split_k)] {
        let whole = devices.matmul_tuned_one(tuned, &a, &b, shape).unwrap();
        for w in [
            vec![1.0, 1.0, 1.0, 1.0],
            vec![2.0, 1.0, 1.0, 3.0],
            vec![1.0, 0.0, 1.0, 1.0],
        ] {
            let split = devices
                .matmul_tuned_gathered(tuned, &a, &b, shape, &w, one_row)
                .unwrap();
            same_bits(&split, &whole, &format!("{tuned} gathered over {w:?}"));
        }
    }
    // A wave of two block rows: no device has rows for two panel waves, so `b` is one panel.
    let whole = devices
        .matmul_tuned_one(Tuned::Config(config), &a, &b, shape)
        .unwrap();
    let split = devices
        .matmul_tuned_gathered(Tuned::Config(config), &a, &b, shape, &[1.0; 4], |_, _| 128)
        .unwrap();
    same_bits(&split, &whole, "one panel, steps");
}

#[test]
fn every_kind_of_autotuned_choice_keeps_its_bits_per_device() {
    // k = 64: two slices of two 16-deep tiles; n odd enough for the repacked choice.
    let (m, k, n) = (rows(), 64, 36);
    let shape = MatmulShape::new(m, k, n).unwrap();
    let (a, b) = (signed(3, m * k), signed(4, k * n));
    let split_k = SplitK::candidates_for(shape)
        .find(|s| s.splits == 2)
        .expect("a split-k run of this shape");
    // The top part ends inside the second device's rows of an even three-way split.
    let top_rows = ROWS as u32 + SgemmKernel::DEFAULT.config().geometry.bm;
    let packed = PACKED_CONFIGS
        .iter()
        .position(|c| c.name == default_config(PackedRung::MmaSync).name)
        .unwrap();
    let choices = [
        Tuned::Config(SgemmKernel::DEFAULT),
        Tuned::SplitK(split_k),
        Tuned::Rows(RowSplit {
            top: SgemmKernel::DEFAULT,
            rows: top_rows,
            bottom: split_k,
        }),
        Tuned::Packed(packed),
    ];
    let devices = SimulatedDevices::new(3, 16).unwrap();
    for tuned in choices {
        let whole = devices.matmul_tuned_one(tuned, &a, &b, shape).unwrap();
        for w in [vec![1.0, 1.0, 1.0], vec![1.0, 5.0, 1.0]] {
            let split = devices.matmul_tuned(tuned, &a, &b, shape, &w).unwrap();
            same_bits(&split, &whole, &format!("{tuned} over {w:?}"));
        }
    }
    // Repacked: k and n not multiples of 4.
    let (k, n) = (30, 38);
    let shape = MatmulShape::new(m, k, n).unwrap();
    let (a, b) = (signed(5, m * k), signed(6, k * n));
    let tuned = Tuned::Repacked(SgemmKernel::DEFAULT);
    let whole = devices.matmul_tuned_one(tuned, &a, &b, shape).unwrap();
    let split = devices
        .matmul_tuned(tuned, &a, &b, shape, &[1.0, 1.0, 1.0])
        .unwrap();
    same_bits(&split, &whole, "repacked");
}

#[test]
fn sums_in_chunks_are_the_same_on_any_device_count() {
    let chunk = 4096;
    let one = Simulator::default();
    for len in [0usize, 1, 4095, 4096, 4097, 20003] {
        let x = signed(len as u64, len);
        for kernel in ReduceKernel::ALL {
            let first = SimulatedDevices::new(1, chunk)
                .unwrap()
                .sum(kernel, &x)
                .unwrap();
            for devices in 2..=4 {
                let s = SimulatedDevices::new(devices, chunk)
                    .unwrap()
                    .sum(kernel, &x)
                    .unwrap();
                assert_eq!(
                    s.to_bits(),
                    first.to_bits(),
                    "{len} on {devices}: {s} vs {first}"
                );
            }
            assert!(sum_within_bound(first, &x, chunk), "{len}: {first}");
            if len <= chunk {
                // One chunk: one device's single-kernel sum.
                let single = one.sum(kernel, &x).unwrap();
                assert_eq!(
                    first.to_bits(),
                    single.to_bits(),
                    "{len}: {first} vs {single}"
                );
            }
        }
    }
}

#[test]
fn sliding_averages_with_halos_have_one_devices_bits() {
    let chunk = 1024;
    let one = Simulator::default();
    let n = 5000;
    let a = signed(7, n);
    // Window 1500 is longer than a device's part: its halo comes from two devices.
    for window in [1usize, 2, 17, 1500, 5000, 5001] {
        for kernel in SlidingKernel::ALL {
            let first = SimulatedDevices::new(1, chunk)
                .unwrap()
                .sliding_average(kernel, &a, window)
                .unwrap();
            for devices in 2..=4 {
                let out = SimulatedDevices::new(devices, chunk)
                    .unwrap()
                    .sliding_average(kernel, &a, window)
                    .unwrap();
                same_bits(
                    &out,
                    &first,
                    &format!("{} w{window} on {devices}", kernel.name()),
                );
            }
            let whole = one.sliding_average(kernel, &a, window).unwrap();
            match kernel {
                // Each output is its own window's sum: chunks change nothing.
                SlidingKernel::Naive | SlidingKernel::Shared => {
                    same_bits(&first, &whole, &format!("{} w{window}", kernel.name()))
                }
                // A running sum from each chunk's start: within the kernel's bound.
                SlidingKernel::Scan => assert!(
                    sliding::within_bound(kernel, &first, &a, window),
                    "scan w{window}"
                ),
            }
        }
    }
    // One chunk: one device's launch, bits and all.
    let short = signed(8, 1000);
    for kernel in SlidingKernel::ALL {
        let out = SimulatedDevices::new(3, chunk)
            .unwrap()
            .sliding_average(kernel, &short, 33)
            .unwrap();
        let whole = one.sliding_average(kernel, &short, 33).unwrap();
        same_bits(&out, &whole, kernel.name());
    }
}

#[test]
fn reductions_along_rows_and_columns_have_one_devices_bits() {
    let one = Simulator::default();
    // 301 × 67: five row segments of 61 in the column pass; 40 × 64: a single segment.
    for (rows, cols) in [(301usize, 67usize), (1000, 64), (40, 64)] {
        let x = signed((rows * cols) as u64, rows * cols);
        for axis in Axis::ALL {
            for op in AxisOp::ALL {
                let whole = one.reduce_axis(op, axis, &x, rows, cols).unwrap();
                for devices in 1..=4 {
                    let out = SimulatedDevices::new(devices, 16)
                        .unwrap()
                        .reduce_axis(op, axis, &x, rows, cols)
                        .unwrap();
                    let what = format!("{}-{} {rows}×{cols} on {devices}", axis.name(), op.name());
                    same_bits(&out, &whole, &what);
                }
            }
        }
    }
}
