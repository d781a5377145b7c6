//! Reductions and sliding averages on the CPU simulator.

use kernels_gpu_host::data::Rng;
use kernels_gpu_host::reduce::{self, ReduceKernel};
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::sliding::{self, SlidingKernel, SlidingShape};
use kernels_gpu_host::{Backend, Error};

fn signed(rng: &mut Rng, n: usize) -> Vec<f32> {
    rng.uniform(n).into_iter().map(|x| 2.0 * x - 1.0).collect()
}

#[test]
fn sums_match_the_f64_reference_within_the_tree_bound() {
    let sim = Simulator::default();
    let mut rng = Rng::new(5);
    // Odd lengths: below one vector, not a multiple of 4, several blocks, two passes.
    for n in [1usize, 2, 3, 5, 17, 255, 1023, 4097, 70_001] {
        let x = signed(&mut rng, n);
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
        let a = signed(&mut rng, n);
        let naive = sim
            .sliding_average(SlidingKernel::Naive, &a, window)
            .unwrap();
        let shared = sim
            .sliding_average(SlidingKernel::Shared, &a, window)
            .unwrap();
        assert!(
            sliding::within_bound(&naive, &a, window),
            "naive n={n} w={window}"
        );
        // Same order of additions: identical bits.
        assert_eq!(naive, shared, "n={n} w={window}");
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
    match Simulator::default().sliding_average(SlidingKernel::Shared, &[1.0], 0) {
        Err(Error::InvalidWindow { window: 0, len: 1 }) => {}
        other => panic!("expected InvalidWindow, got {other:?}"),
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
    let too_wide = vec![0.0; 20_000];
    match backend.sliding_average(SlidingKernel::Shared, &too_wide, 12_000) {
        Err(Error::Launch(e)) => assert!(e.to_string().contains("shared memory"), "{e}"),
        other => panic!("expected a launch-limit error, got {other:?}"),
    }
}
