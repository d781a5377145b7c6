//! The GEMM API in the simulator: every order and layout pair, odd shapes and leading
//! dimensions, α/β and strided batches, by the automatic choice and by each rung-12 block
//! tile, bit for bit against the rungs' FMA order and within the f64 bound.

#[path = "common/fma_product.rs"]
mod fma_product;
#[path = "common/gemm_cases.rs"]
mod gemm_cases;

use fma_product::assert_same_bits;
use gemm_cases::{Case, Spec, blas_cases, case, cases, expected_bits, long_batches};
use kernels_gpu_host::backend::Backend;
use kernels_gpu_host::check::reference;
use kernels_gpu_host::plan::gemm::BLAS_TILES;
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::{GemmKernel, Op, Order};

/// After the small shapes: one interior 64 × 64 tile with k a multiple of 16, and edges around
/// an interior 128 × 128 tile.
const TILED: [(usize, usize, usize); 2] = [(64, 32, 64), (130, 48, 129)];

fn run(sim: &Simulator, case: &Case, kernel: GemmKernel) -> Vec<f32> {
    let mut c = case.c.clone();
    sim.gemm(&case.call, kernel, &case.a, &case.b, &mut c)
        .unwrap_or_else(|e| panic!("{} by {kernel:?}: {e}", case.name));
    c
}

#[test]
fn every_layout_gives_the_rungs_bits_and_is_within_the_f64_bound() {
    check_all(&Simulator::default(), cases(&TILED));
}

/// `α = 0` with NaNs and infinities in the operands gives `β·C` (zeros for `β = 0`, over a
/// `C` of NaNs), and interleaved outputs are each written once, by every kernel choice.
#[test]
fn alpha_zero_reads_no_operand_and_interleaved_outputs_run() {
    let shapes: Vec<_> = gemm_cases::SMALL
        .iter()
        .chain(&TILED[..1])
        .copied()
        .collect();
    let cases = blas_cases(&shapes);
    for case in &cases {
        let p = case
            .call
            .check(case.a.len(), case.b.len(), case.c.len())
            .unwrap();
        if p.alpha == 0.0 && p.beta == 0.0 {
            let got = run(&Simulator::default(), case, GemmKernel::Auto);
            let outputs = (0..p.batch as usize).flat_map(|z| {
                (0..p.m as usize).flat_map(move |i| (0..p.n as usize).map(move |j| (z, i, j)))
            });
            for (z, i, j) in outputs {
                let v = got[p.c_index(z, i, j)];
                assert_eq!(
                    v.to_bits(),
                    0,
                    "{}: output ({z}, {i}, {j}) is {v}",
                    case.name
                );
            }
        }
    }
    check_all(&Simulator::default(), cases);
}

/// A batch past the grid's z limit runs as several launches, on each kernel choice: here a
/// simulator whose z limit is 4 runs 11 products in three launches (a GPU's is 65,535).
#[test]
fn batches_past_the_grid_limit_run_in_several_launches() {
    let mut sim = Simulator::default();
    sim.limits.max_grid_dim.z = 4;
    check_all(&sim, long_batches(11).into());
}

/// More products than a launch's grid may hold in z (65,535), at the simulator's real
/// limits: 65,537 products of 2 × 3 outputs with `α = 0`, by the scale kernel, whose threads
/// stride over every product's outputs in one launch. (Rung 12 on so many products, a
/// block each, would take minutes here: `batches_past_the_grid_limit_run_in_several_launches`
/// runs its launches at a lowered limit; the GPU test runs 70,000.)
#[test]
fn a_batch_of_65537_products_runs() {
    let case = case(Spec {
        order: Order::ColMajor,
        ops: (Op::T, Op::N),
        shape: (2, 1, 3),
        pad: 1,
        batch: 65_537,
        extra: 1,
        scale: (0.0, 0.5),
        seed: 44,
        ..Spec::default()
    });
    check_all(&Simulator::default(), vec![case]);
}

fn check_all(sim: &Simulator, cases: Vec<Case>) {
    let kernels = (0..BLAS_TILES.len())
        .map(GemmKernel::Blas)
        .chain([GemmKernel::Auto]);
    let kernels: Vec<GemmKernel> = kernels.collect();
    for case in cases {
        let want = expected_bits(&case);
        let exact = reference::gemm_f64(&case.call, &case.a, &case.b, &case.c).unwrap();
        for &kernel in &kernels {
            let got = run(sim, &case, kernel);
            let what = format!("{} by {kernel:?}, against the rungs", case.name);
            assert_same_bits(&got, &want, case.call.n, &what);
            assert_eq!(exact.first_error(&got), None, "{} by {kernel:?}", case.name);
        }
    }
}

#[test]
fn a_nan_in_c_is_not_read_when_beta_is_zero() {
    let sim = Simulator::default();
    let mut case = case(Spec {
        ops: (Op::T, Op::N),
        shape: (9, 5, 11),
        pad: 2,
        batch: 2,
        scale: (2.0, 0.0),
        seed: 7,
        ..Spec::default()
    });
    case.c.iter_mut().for_each(|x| *x = f32::NAN);
    let got = run(&sim, &case, GemmKernel::Auto);
    let want = expected_bits(&case);
    let p = case
        .call
        .check(case.a.len(), case.b.len(), case.c.len())
        .unwrap();
    // Outputs are finite; the padding between rows keeps its NaNs.
    let outputs = (0..p.batch as usize)
        .flat_map(|z| (0..9).flat_map(move |i| (0..11).map(move |j| (z, i, j))))
        .map(|(z, i, j)| z * p.stride_c as usize + i * p.ldc as usize + j);
    for idx in outputs {
        assert!(got[idx].is_finite(), "output {idx} is {}", got[idx]);
    }
    assert!(got.iter().any(|x| x.is_nan()), "the padding was written");
    assert_same_bits(&got, &want, p.ldc as usize, "NaN-padded c");
}

#[test]
fn k_zero_scales_c_by_beta() {
    let sim = Simulator::default();
    // k = 0: a and b are empty.
    let case = case(Spec {
        shape: (6, 0, 5),
        scale: (1.0, 0.5),
        pad: 1,
        batch: 2,
        extra: 3,
        seed: 9,
        ..Spec::default()
    });
    let got = run(&sim, &case, GemmKernel::Auto);
    assert_eq!(got, expected_bits(&case));
    let p = case
        .call
        .check(case.a.len(), case.b.len(), case.c.len())
        .unwrap();
    assert_eq!(got[0], 0.5 * case.c[0]);
    assert_eq!(
        got[p.ldc as usize - 1],
        case.c[p.ldc as usize - 1],
        "padding"
    );
}

#[test]
fn pod_element_types_run_as_f32() {
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(transparent)]
    struct Weight(f32);
    let sim = Simulator::default();
    let case = case(Spec {
        ops: (Op::N, Op::T),
        shape: (7, 3, 6),
        seed: 11,
        ..Spec::default()
    });
    let wrap = |v: &[f32]| v.iter().map(|&x| Weight(x)).collect::<Vec<_>>();
    let (a, b, mut c) = (wrap(&case.a), wrap(&case.b), wrap(&case.c));
    kernels_gpu_host::backend::gemm_pod(&sim, &case.call, GemmKernel::Auto, &a, &b, &mut c)
        .unwrap();
    let got: Vec<f32> = c.iter().map(|w| w.0).collect();
    assert_eq!(got, expected_bits(&case));
}
