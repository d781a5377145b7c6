//! Reductions (flat, and along rows and columns) and sliding averages on the CPU simulator.

#[path = "common/fma_product.rs"]
mod fma_product;

use fma_product::assert_same_bits;
use kernels_gpu::sliding::scan::{self, Tally};
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::plan::reduce::{self, ReduceKernel};
use kernels_gpu_host::plan::sliding::{self, SlidingKernel, SlidingShape};
use kernels_gpu_host::problem::axis::{self, Axis, AxisOp, AxisShape};
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::{Backend, Error};

/// `kernel`'s sliding average of `a` over `window` in `sim`.
fn average(sim: &Simulator, kernel: SlidingKernel, a: &[f32], window: usize) -> Vec<f32> {
    sim.sliding_average(kernel, a, window).unwrap()
}

/// `op` over `axis` of the `rows × cols` matrix `x` in `sim`.
fn reduced(
    sim: &Simulator, op: AxisOp, axis: Axis, x: &[f32], (rows, cols): (usize, usize),
) -> Vec<f32> {
    sim.reduce_axis(op, axis, x, rows, cols).unwrap()
}

#[test]
fn kernel_names_parse_back() {
    for k in ReduceKernel::ALL {
        assert_eq!(ReduceKernel::from_name(k.name()), Some(k), "{k:?}");
    }
    for k in SlidingKernel::ALL {
        assert_eq!(SlidingKernel::from_name(k.name()), Some(k), "{k:?}");
    }
    assert_eq!(ReduceKernel::from_name("nope"), None);
    assert_eq!(SlidingKernel::from_name("nope"), None);
}

#[test]
fn sums_match_the_f64_reference_within_the_tree_bound() {
    let sim = Simulator::default();
    let mut rng = Rng::new(5);
    // Odd lengths: below one vector, not a multiple of 4, several blocks, two passes.
    for n in [1usize, 2, 3, 5, 17, 255, 1023, 4097, 70_001] {
        let x = rng.signed(n);
        for k in ReduceKernel::ALL {
            let s = sim.sum(k, &x).unwrap();
            assert!(
                reduce::within_bound(s, &x),
                "{k:?} n={n}: {s} vs {:?}",
                reduce::reference(&x)
            );
        }
    }
}

#[test]
fn sum_of_nothing_is_zero_and_of_one_is_itself() {
    let sim = Simulator::default();
    for k in ReduceKernel::ALL {
        assert_eq!(sim.sum(k, &[]).unwrap(), 0.0);
        assert_eq!(sim.sum(k, &[-3.25]).unwrap(), -3.25);
    }
}

#[test]
fn sums_of_integers_are_exact() {
    // Small integers add exactly in f32, whatever the order.
    let x: Vec<f32> = (0..10_007).map(|i| (i % 7) as f32).collect();
    let exact: f32 = (0..10_007).map(|i| (i % 7) as f32).sum();
    for k in ReduceKernel::ALL {
        assert_eq!(Simulator::default().sum(k, &x).unwrap(), exact, "{k:?}");
    }
}

#[test]
fn the_bound_grows_with_the_per_thread_chain() {
    assert!(reduce::error_depth(1) >= 8);
    assert!(reduce::error_depth(1 << 28) > reduce::error_depth(1 << 20));
    assert!(
        reduce::error_depth(1 << 28) < 200,
        "{}",
        reduce::error_depth(1 << 28)
    );
}

#[test]
fn sliding_average_of_the_slides_example() {
    let a = [4.0, 2.0, 5.0, 6.0, 2.0, 4.0];
    for k in SlidingKernel::ALL {
        assert_eq!(
            Simulator::default().sliding_average(k, &a, 2).unwrap(),
            vec![3.0, 3.5, 5.5, 4.0, 3.0]
        );
    }
}

#[test]
fn sliding_kernels_agree_with_the_reference_on_odd_lengths() {
    let sim = Simulator::default();
    let mut rng = Rng::new(9);
    // n >= 1024 takes the shared kernel's 16-byte tile loads; below, its scalar path.
    for (n, window) in [
        (1, 1),
        (7, 3),
        (300, 1),
        (513, 17),
        (1000, 300),
        (257, 257),
        (2048, 1),
        (5003, 9),
    ] {
        let a = rng.signed(n);
        let naive = average(&sim, SlidingKernel::Naive, &a, window);
        let shared = average(&sim, SlidingKernel::Shared, &a, window);
        assert!(
            sliding::within_bound(SlidingKernel::Naive, &naive, &a, window),
            "naive n={n} w={window}"
        );
        // Same order of additions: identical bits.
        assert_eq!(naive, shared, "n={n} w={window}");
    }
}

#[test]
fn sliding_scan_is_within_its_bound_at_any_window() {
    let sim = Simulator::default();
    let mut rng = Rng::new(11);
    // Several tiles, windows below, across and beyond a thread's run and a tile, windows not
    // multiples of 4 (shifted reads, unaligned outputs), the whole input as one window.
    let (run, tile) = (scan::ITEMS as usize, scan::TILE as usize);
    let far = scan::FAR_WINDOW as usize;
    for (n, window) in [
        (1, 1),
        (6, 2),
        (7, 3),
        (run, 1),
        (run + 1, run + 1),
        (2 * tile + 9001, 2),
        (2 * tile + 9001, 5),
        (tile + run + 1, run),
        (tile + run + 1, run + 3),
        (2 * tile + 3, tile + 5),
        (tile + 13, tile),
        (5 * tile + 6, 3 * tile + 7),
        (4 * tile + 2, 4 * tile + 1),
        // The most whole tiles summed from aggregates, and one more (the look-back).
        (far + tile + 5, far),
        (far + tile + 5, far + 1),
    ] {
        let a = rng.signed(n);
        let out = average(&sim, SlidingKernel::Scan, &a, window);
        assert_eq!(out.len(), n - window + 1);
        assert!(
            sliding::within_bound(SlidingKernel::Scan, &out, &a, window),
            "n={n} w={window}: max err {}",
            sliding::max_abs_err(&out, &sliding::reference(&a, window))
        );
    }
}

#[test]
fn sliding_scan_of_the_slides_example_and_of_constants_is_exact() {
    let sim = Simulator::default();
    assert_eq!(
        sim.sliding_average(SlidingKernel::Scan, &[4.0, 2.0, 5.0, 6.0, 2.0, 4.0], 2)
            .unwrap(),
        vec![3.0, 3.5, 5.5, 4.0, 3.0]
    );
    let a = vec![0.375f32; 10_001];
    let out = sim.sliding_average(SlidingKernel::Scan, &a, 333).unwrap();
    assert!(out.iter().all(|&o| o == 0.375));
}

/// Non-finite inputs are counted, not summed: only the windows that hold them are NaN or
/// infinite, as a direct sum of the window would be.
#[test]
fn sliding_scan_confines_non_finite_values_to_their_windows() {
    let sim = Simulator::default();
    let mut a = Rng::new(4).signed(9000);
    a[100] = f32::NAN;
    a[5000] = f32::INFINITY;
    a[5003] = f32::NEG_INFINITY;
    a[7000] = f32::INFINITY;
    // Windows that fit in a tile (summed from the tile's halo) and that span a whole tile
    // (plus a published aggregate), against the naive kernel too.
    let tile = scan::TILE as usize;
    for window in [1, 3, 4, 17, tile + 5, 2 * tile + 1] {
        let out = average(&sim, SlidingKernel::Scan, &a, window);
        let naive = average(&sim, SlidingKernel::Naive, &a, window);
        assert!(
            sliding::within_bound(SlidingKernel::Scan, &out, &a, window),
            "w={window}"
        );
        for (i, (&o, &e)) in out.iter().zip(&naive).enumerate() {
            assert_eq!(o.is_nan(), e.is_nan(), "w={window} i={i}");
            assert_eq!(o.is_infinite(), e.is_infinite(), "w={window} i={i}");
        }
        if window < 1000 {
            assert!(out[8000 - window + 1].is_finite());
        }
    }
    // Non-finite values only in the whole tiles of a far window (one in each of tiles 1 and
    // 2, outside the last tile's `a[p - window]`, positions tile - 1 .. tile + 699): the last
    // tile's own inputs and halo are finite (its scans see only finite values), and the
    // counts that come with the whole tiles' aggregates decide each of its means (outputs
    // 3·tile - (window - 1) .. n - (window - 1)).
    let mut a = Rng::new(6).signed(3 * tile + 700);
    let window = 2 * tile + 1;
    let (first, last) = (3 * tile - (window - 1), a.len() - window);
    a[5000] = f32::INFINITY;
    a[9000] = f32::INFINITY;
    let out = average(&sim, SlidingKernel::Scan, &a, window);
    assert!(sliding::within_bound(SlidingKernel::Scan, &out, &a, window));
    assert!(out[first..=last].iter().all(|&o| o == f32::INFINITY));
    a[9000] = f32::NEG_INFINITY;
    let out = average(&sim, SlidingKernel::Scan, &a, window);
    assert!(sliding::within_bound(SlidingKernel::Scan, &out, &a, window));
    assert!(out[first..=last].iter().all(|o| o.is_nan()));
    // A window past FAR_TILES whole tiles (the look-back), against the reference, which
    // has the non-finite means where they belong (`within_bound` compares them exactly).
    let window = scan::FAR_WINDOW as usize + 1;
    let mut a = Rng::new(5).signed(window + 3 * tile + 7);
    let (inf, neg) = (window + 2 * tile, window + 3 * tile + 5);
    a[100] = f32::NAN;
    a[inf] = f32::INFINITY;
    a[inf + 3] = f32::INFINITY;
    a[neg] = f32::NEG_INFINITY;
    let out = average(&sim, SlidingKernel::Scan, &a, window);
    assert!(sliding::within_bound(SlidingKernel::Scan, &out, &a, window));
    // Output i averages a[i .. i + window].
    assert!(out[100].is_nan() && out[101].is_finite() && out[2 * tile].is_finite());
    assert_eq!(out[2 * tile + 1], f32::INFINITY);
    assert_eq!(out[neg - window], f32::INFINITY);
    assert!(out[neg - window + 1].is_nan() && out.last().unwrap().is_nan());
}

/// Zeroed scratch state for a scan over `tiles` tiles.
fn scan_state(tiles: u32) -> Vec<u64> {
    vec![0; scan::state_words(tiles * scan::TILE)]
}

/// The descriptors in a scratch state from [`scan_state`].
fn descriptors(state: &mut [u64]) -> scan::Descriptors {
    let tiles = (state.len() - scan::HEADER_WORDS) / (scan::HEAD_WORDS + scan::FULL_WORDS);
    scan::Descriptors::new(state.as_mut_ptr(), tiles as u32)
}

/// Every lane's [`scan::look_back`] from tile `b` of a scan over `tiles` tiles on `state`,
/// in one full warp of the simulator.
///
/// # Safety
/// As [`scan::look_back`]'s: `state`'s tiles before `b` are published back to one with an
/// inclusive prefix.
unsafe fn look_back_in_a_warp(state: &mut [u64], tiles: u32, b: u32) -> Vec<Tally> {
    use kernels_gpu::nvptx_device::launch::{Launch, Limits};
    use kernels_gpu::nvptx_device::sim::{self as device_sim, SharedPtr};
    use kernels_gpu::nvptx_device::thread::Dim3;
    use std::sync::Mutex;

    let got = Mutex::new(vec![]);
    let ps = SharedPtr(state.as_mut_ptr());
    let launch = Launch {
        grid: Dim3::x(1),
        block: Dim3::x(32),
        dynamic_shared_bytes: 0,
        cluster: 1,
    };
    device_sim::launch(&launch, &Limits::default(), || {
        // SAFETY: one full warp; the caller's contract.
        let t = unsafe { scan::look_back(scan::Descriptors::new(ps.get(), tiles), b) };
        got.lock().unwrap().push(t);
    })
    .unwrap();
    got.into_inner().unwrap()
}

/// The look-back on its own, with predecessors in every state a running GPU can show: it
/// adds aggregates back to the nearest inclusive prefix, `LOOK_BACK` tiles at a time, and
/// every lane of the warp gets the same sum.
#[test]
fn look_back_adds_aggregates_up_to_the_nearest_inclusive_prefix() {
    let tiles = 100u32;
    let mut state = scan_state(tiles);
    let set = |state: &mut Vec<u64>, b: usize, status: u32, t: Tally| {
        // SAFETY: tile b's records, no launch running.
        unsafe { scan::publish(descriptors(state), b as u32, status, t) };
    };
    let tally = |sum: f64, inf: u64, nan: u32| Tally { sum, inf, nan };
    // Tile 20 has its inclusive prefix; 21..99 only their aggregates (one of them a NaN);
    // 0..20 nothing, and are never read.
    set(&mut state, 20, scan::INCLUSIVE, tally(1000.0, 0, 0));
    for b in 21..99 {
        let t = if b == 50 {
            Tally::of(f32::NAN)
        } else {
            tally(b as f64, 0, 0)
        };
        set(&mut state, b, scan::AGGREGATE, t);
    }
    // A tile with both: the inclusive prefix wins.
    set(&mut state, 98, scan::INCLUSIVE, tally(5.0e6, 0, 0));
    // SAFETY: tiles 20..99 are published, 20 with its inclusive prefix.
    let got = unsafe { look_back_in_a_warp(&mut state, tiles, 99) };
    assert_eq!(got.len(), 32);
    for t in got {
        assert_eq!((t.sum, t.inf, t.nan), (5.0e6, 0, 0));
    }
    // Without tile 98's inclusive prefix: back to tile 20, over 77 aggregates.
    state[scan::HEADER_WORDS + scan::HEAD_WORDS * 98 + 1] = 0;
    let expected: f64 = 1000.0 + (21..99).filter(|&b| b != 50).map(|b| b as f64).sum::<f64>();
    // SAFETY: as above.
    for t in unsafe { look_back_in_a_warp(&mut state, tiles, 99) } {
        assert_eq!((t.sum, t.inf, t.nan), (expected, 0, 1));
    }
    // And more than two steps of LOOK_BACK tiles back.
    let b = 2 * scan::LOOK_BACK as usize + 49;
    let mut state = scan_state(b as u32 + 1);
    set(&mut state, 10, scan::INCLUSIVE, tally(1.0, 0, 0));
    for b in 11..b {
        set(&mut state, b, scan::AGGREGATE, tally(2.0, 1, 0));
    }
    // SAFETY: tiles 10..b are published, 10 with its inclusive prefix.
    let got = unsafe { look_back_in_a_warp(&mut state, b as u32 + 1, b as u32) };
    assert_eq!(got.len(), 32);
    let aggregates = (b - 11) as u64;
    for t in got {
        assert_eq!(
            (t.sum, t.inf, t.nan),
            (1.0 + 2.0 * aggregates as f64, aggregates, 0)
        );
    }
}

#[test]
fn empty_input_and_windows_longer_than_the_input_have_no_outputs() {
    let sim = Simulator::default();
    for k in SlidingKernel::ALL {
        assert!(sim.sliding_average(k, &[], 3).unwrap().is_empty());
        assert!(sim.sliding_average(k, &[1.0, 2.0], 3).unwrap().is_empty());
    }
    assert_eq!(SlidingShape::new(2, 3).unwrap().outputs(), 0);
}

#[test]
fn a_zero_window_is_a_typed_error() {
    for k in SlidingKernel::ALL {
        match Simulator::default().sliding_average(k, &[1.0], 0) {
            Err(Error::InvalidWindow { window: 0, len: 1 }) => {}
            other => panic!("expected InvalidWindow, got {other:?}"),
        }
    }
}

/// Odd shapes: one element, one row, one column, sizes not multiples of 4 (scalar loads),
/// multiples of 4 (16-byte loads), rows long enough for a whole warp each, and column sums of
/// several row segments (two passes).
const AXIS_SHAPES: [(usize, usize); 10] = [
    (1, 1),
    (1, 37),
    (41, 1),
    (7, 5),
    (33, 64),
    (5, 700),
    (3, 1028),
    (5000, 3),
    (3000, 64),
    (129, 129),
];

#[test]
fn axis_reductions_are_within_their_bound_on_odd_shapes() {
    let sim = Simulator::default();
    let mut rng = Rng::new(21);
    for (rows, cols) in AXIS_SHAPES {
        let x = rng.signed(rows * cols);
        let shape = AxisShape::new(rows, cols).unwrap();
        for axis in Axis::ALL {
            for op in AxisOp::ALL {
                let out = sim.reduce_axis(op, axis, &x, rows, cols).unwrap();
                assert!(
                    axis::within_bound(op, axis, &out, &x, shape),
                    "{op:?} {axis:?} {rows}x{cols}: max err {}",
                    axis::max_abs_err(op, axis, &out, &x, shape)
                );
            }
        }
    }
}

#[test]
fn column_sums_of_several_segments_are_bit_identical_run_to_run() {
    let (rows, cols) = (5000, 3);
    let plan = AxisShape::new(rows, cols).unwrap().cols_plan();
    assert!(plan.segments > 1, "{plan:?}");
    let x = Rng::new(8).signed(rows * cols);
    let sim = Simulator::default();
    let first = reduced(&sim, AxisOp::Sum, Axis::Cols, &x, (rows, cols));
    let second = reduced(&sim, AxisOp::Sum, Axis::Cols, &x, (rows, cols));
    assert_same_bits(&second, &first, 1, "a second run");
}

#[test]
fn max_propagates_nan_and_sums_of_integers_are_exact() {
    let sim = Simulator::default();
    let (rows, cols) = (9, 12);
    let mut x: Vec<f32> = (0..rows * cols).map(|i| (i % 13) as f32 - 6.0).collect();
    x[4 * cols + 7] = f32::NAN;
    let by_row = reduced(&sim, AxisOp::Max, Axis::Rows, &x, (rows, cols));
    let by_col = reduced(&sim, AxisOp::Max, Axis::Cols, &x, (rows, cols));
    for (r, &m) in by_row.iter().enumerate() {
        assert_eq!(m.is_nan(), r == 4, "row {r}: {m}");
    }
    for (c, &m) in by_col.iter().enumerate() {
        assert_eq!(m.is_nan(), c == 7, "col {c}: {m}");
    }
    x[4 * cols + 7] = 0.0;
    let sums = reduced(&sim, AxisOp::Sum, Axis::Cols, &x, (rows, cols));
    for (c, &s) in sums.iter().enumerate() {
        let exact: f32 = (0..rows).map(|r| x[r * cols + c]).sum();
        assert_eq!(s, exact, "col {c}");
    }
    // -0 < +0, and a column of -∞ has -∞ for its max.
    let max = sim
        .reduce_axis(
            AxisOp::Max,
            Axis::Rows,
            &[-0.0, 0.0, f32::NEG_INFINITY, f32::NEG_INFINITY],
            2,
            2,
        )
        .unwrap();
    assert!(max[0] == 0.0 && max[0].is_sign_positive());
    assert_eq!(max[1], f32::NEG_INFINITY);
}

#[test]
fn empty_dimensions_and_wrong_lengths_are_handled() {
    let sim = Simulator::default();
    // Reducing a dimension of length 0: sums are 0, means NaN, a max an error.
    assert_eq!(
        sim.reduce_axis(AxisOp::Sum, Axis::Rows, &[], 3, 0).unwrap(),
        [0.0; 3]
    );
    assert!(
        sim.reduce_axis(AxisOp::Mean, Axis::Cols, &[], 0, 2)
            .unwrap()
            .iter()
            .all(|m| m.is_nan())
    );
    match sim.reduce_axis(AxisOp::Max, Axis::Rows, &[], 3, 0) {
        Err(Error::EmptyReduction {
            rows: 3, cols: 0, ..
        }) => {}
        other => panic!("expected EmptyReduction, got {other:?}"),
    }
    // Nothing to output.
    assert!(
        sim.reduce_axis(AxisOp::Max, Axis::Cols, &[], 3, 0)
            .unwrap()
            .is_empty()
    );
    match sim.reduce_axis(AxisOp::Sum, Axis::Cols, &[1.0; 5], 2, 3) {
        Err(Error::InputLength {
            expected: 6,
            actual: 5,
            ..
        }) => {}
        other => panic!("expected InputLength, got {other:?}"),
    }
    match AxisShape::new(1 << 20, 1 << 20) {
        Err(Error::IndexOverflow { .. }) => {}
        other => panic!("expected IndexOverflow, got {other:?}"),
    }
}

/// `Backend` is object-safe: the same calls through `dyn Backend`, and the same limit error
/// from the simulator as from a GPU for a window whose tile needs more shared memory than a
/// block may have.
#[test]
fn every_operation_runs_through_a_trait_object() {
    let backend: Box<dyn Backend> = Box::new(Simulator::default());
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    assert_eq!(backend.sum(ReduceKernel::Warp, &x).unwrap(), 499_500.0);
    let avg = backend
        .sliding_average(SlidingKernel::Shared, &x, 3)
        .unwrap();
    assert_eq!((avg.len(), avg[0], avg[997]), (998, 1.0, 998.0));
    let shape = kernels_gpu_host::MatmulShape::new(2, 3, 2).unwrap();
    let c = backend
        .matmul(
            kernels_gpu_host::MatmulKernel::Naive,
            kernels_gpu_host::TileWidth::Tw16,
            &[1.0; 6],
            &[1.0; 6],
            shape,
        )
        .unwrap();
    assert_eq!(c, [3.0; 4]);
    // 30,000 floats of halo: 120 KB, past the 99 KiB of the simulator's limits.
    let too_wide = vec![0.0; 40_000];
    match backend.sliding_average(SlidingKernel::Shared, &too_wide, 30_000) {
        Err(Error::Launch(e)) => assert!(e.to_string().contains("shared memory"), "{e}"),
        other => panic!("expected a launch-limit error, got {other:?}"),
    }
}

/// The fusion lesson's unfused product (zip into `m·n·k`, then row sums) against f64, with
/// the bound of its roundings, on odd and degenerate shapes.
#[test]
fn zip_then_reduce_is_the_product_within_its_bound() {
    use kernels_gpu_host::MatmulShape;
    use kernels_gpu_host::check::reference;
    use kernels_gpu_host::plan::fusion;
    let sim = Simulator::default();
    let mut rng = Rng::new(11);
    let degenerate = [(1, 1, 1), (1, 37, 1), (7, 1, 3), (3, 13, 1)];
    let odd = [(5, 67, 9), (17, 4, 33), (4, 0, 6)];
    for (m, k, n) in degenerate.into_iter().chain(odd) {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let (a, b) = (rng.signed(m * k), rng.signed(k * n));
        let out = sim.zip_reduce_matmul(&a, &b, shape).unwrap();
        let r = reference::matmul_f64(&a, &b, m, k, n);
        let acc = reference::compare(&out, &r);
        let roundings = fusion::roundings(shape).unwrap();
        assert!(
            acc.within_f32_bound(roundings),
            "{shape}: {acc:?}, {roundings} roundings"
        );
        // The products are rounded once each and summed: a one-deep sum is exact.
        if k == 1 {
            let exact: Vec<f32> = (0..m * n).map(|t| a[t / n] * b[t % n]).collect();
            assert_eq!(out, exact, "{shape}");
        }
    }
}

#[test]
fn zip_intermediate_past_32_bits_is_a_typed_error_naming_it() {
    use kernels_gpu_host::MatmulShape;
    use kernels_gpu_host::plan::fusion;
    let shape = MatmulShape::new(2000, 1100, 2000).unwrap();
    let err = fusion::intermediate_len(shape).unwrap_err();
    assert!(
        matches!(err, Error::IndexOverflow { operand, elements: 4_400_000_000, .. }
            if operand.contains("intermediate")),
        "{err:?}"
    );
    let (a, b) = (vec![0.0; 2000 * 1100], vec![0.0; 1100 * 2000]);
    let err = Simulator::default()
        .zip_reduce_matmul(&a, &b, shape)
        .unwrap_err();
    assert!(err.to_string().contains("4400000000"), "{err}");
}

#[test]
fn zip_with_wrong_input_lengths_is_a_typed_error() {
    use kernels_gpu_host::MatmulShape;
    let shape = MatmulShape::new(3, 4, 5).unwrap();
    let err = Simulator::default()
        .zip_reduce_matmul(&[0.0; 11], &[0.0; 20], shape)
        .unwrap_err();
    assert!(matches!(err, Error::InputLength { .. }), "{err:?}");
}

/// A predecessor that has published nothing yet holds the look-back, which re-reads until it
/// appears (a block on the GPU publishes its aggregate without waiting for anyone).
#[test]
fn look_back_waits_for_a_predecessor_that_has_published_nothing() {
    let b = scan::LOOK_BACK as usize + 40;
    let tiles = b as u32 + 1;
    let mut state = scan_state(tiles);
    let two = Tally {
        sum: 2.0,
        inf: 0,
        nan: 0,
    };
    // Tile 0 inclusive; every other tile but `late` (past the first step) has its aggregate.
    let late = 7;
    for tile in 0..b {
        let status = if tile == 0 {
            scan::INCLUSIVE
        } else {
            scan::AGGREGATE
        };
        if tile != late {
            // SAFETY: tile's records, no launch running.
            unsafe { scan::publish(descriptors(&mut state), tile as u32, status, two) };
        }
    }
    let got = look_back_with_a_late_writer(&mut state, b as u32, |state| {
        let d = scan::Descriptors::new(state, tiles);
        // SAFETY: the late tile's records; the look-back only reads them.
        unsafe { scan::publish(d, late as u32, scan::AGGREGATE, two) };
    });
    assert_eq!(got.len(), 32);
    for t in got {
        assert_eq!((t.sum, t.inf, t.nan), (2.0 * b as f64, 0, 0));
    }
}

/// A tally with non-finite counts is published in a full record before its head: a reader
/// that sees the head first (possible on a GPU, where nothing orders the two) re-reads the
/// record until all of it is written, here by another thread 200 ms later.
#[test]
fn look_back_waits_for_a_full_record_written_after_its_head() {
    use std::sync::atomic::{AtomicU64, Ordering};

    let (b, late) = (scan::LOOK_BACK + 9, 5u32);
    let two = Tally {
        sum: 2.0,
        inf: 0,
        nan: 0,
    };
    let counted = Tally {
        sum: 2.0,
        inf: 1 | 2 << 32,
        nan: 3,
    };
    let mut state = scan_state(b + 1);
    let mut written = scan_state(b + 1);
    for tile in 0..b {
        let (status, t) = match tile {
            0 => (scan::INCLUSIVE, two),
            t if t == late => (scan::AGGREGATE, counted),
            _ => (scan::AGGREGATE, two),
        };
        // SAFETY: tile's records, no launch running.
        unsafe { scan::publish(descriptors(&mut written), tile, status, t) };
    }
    // The late tile's full record is the only one written.
    let fulls = scan::HEADER_WORDS + scan::HEAD_WORDS * (b as usize + 1);
    let full = fulls + scan::FULL_WORDS * late as usize;
    let record = full..full + 4;
    assert!((fulls..written.len()).all(|i| (written[i] != 0) == record.contains(&i)));
    state[..full].copy_from_slice(&written[..full]);
    let got = look_back_with_a_late_writer(&mut state, b, |state| {
        for (i, &w) in written[full..full + 4].iter().enumerate() {
            // SAFETY: a word of the state, accessed atomically by the look-back too.
            unsafe { AtomicU64::from_ptr(state.add(full + i)) }.store(w, Ordering::Relaxed);
        }
    });
    assert_eq!(got.len(), 32);
    for t in got {
        assert_eq!((t.sum, t.inf, t.nan), (2.0 * b as f64, 1 | 2 << 32, 3));
    }
}

/// The look-back of tile `b` (`b + 1` tiles) by one warp in the simulator, while another
/// thread runs `late` on the state 200 ms after the launch starts: what each lane got.
fn look_back_with_a_late_writer(
    state: &mut [u64], b: u32, late: impl FnOnce(*mut u64) + Send,
) -> Vec<Tally> {
    use kernels_gpu::nvptx_device::launch::{Launch, Limits};
    use kernels_gpu::nvptx_device::sim::{self as device_sim, SharedPtr};
    use kernels_gpu::nvptx_device::thread::Dim3;
    use std::sync::Mutex;

    let ps = SharedPtr(state.as_mut_ptr());
    let got = Mutex::new(vec![]);
    let launch = Launch {
        grid: Dim3::x(1),
        block: Dim3::x(32),
        dynamic_shared_bytes: 0,
        cluster: 1,
    };
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(200));
            late(ps.get());
        });
        device_sim::launch(&launch, &Limits::default(), || {
            let d = scan::Descriptors::new(ps.get(), b + 1);
            // SAFETY: one full warp; what tile b needs is published, or will be by `late`.
            let t = unsafe { scan::look_back(d, b) };
            got.lock().unwrap().push(t);
        })
        .unwrap();
    });
    got.into_inner().unwrap()
}
