//! The GEMM API in the simulator: every order and layout pair, odd shapes and leading
//! dimensions, α/β and strided batches, by the automatic choice and by each rung-12 block
//! tile, bit for bit against the rungs' FMA order and within the f64 bound.

#[path = "common/fma_product.rs"]
mod fma_product;
#[path = "common/gemm_cases.rs"]
mod gemm_cases;

use fma_product::assert_same_bits;
use gemm_cases::{Case, cases, expected_bits};
use kernels_gpu_host::GemmKernel;
use kernels_gpu_host::backend::Backend;
use kernels_gpu_host::check::reference;
use kernels_gpu_host::plan::gemm::BLAS_TILES;
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::{Op, Order};

/// After the small shapes: one interior 64 × 64 tile with k a multiple of 16, and edges around
/// an interior 128 × 128 tile.
const TILED: [(usize, usize, usize); 2] = [(64, 32, 64), (130, 48, 129)];

/// A row-major call on random inputs: `(pad, batch, extra)` as [`gemm_cases::case`] takes
/// them, `b` not shared.
fn row_major_case(
    ops: (Op, Op), shape: (usize, usize, usize), (pad, batch, extra): (usize, usize, usize),
    scale: (f32, f32), seed: u64,
) -> Case {
    gemm_cases::case(
        Order::RowMajor,
        ops,
        shape,
        pad,
        batch,
        extra,
        false,
        scale,
        seed,
    )
}

fn run(sim: &Simulator, case: &Case, kernel: GemmKernel) -> Vec<f32> {
    let mut c = case.c.clone();
    sim.gemm(&case.call, kernel, &case.a, &case.b, &mut c)
        .unwrap_or_else(|e| panic!("{} by {kernel:?}: {e}", case.name));
    c
}

#[test]
fn every_layout_gives_the_rungs_bits_and_is_within_the_f64_bound() {
    let sim = Simulator::default();
    let kernels = (0..BLAS_TILES.len())
        .map(GemmKernel::Blas)
        .chain([GemmKernel::Auto]);
    let kernels: Vec<GemmKernel> = kernels.collect();
    for case in cases(&TILED) {
        let want = expected_bits(&case);
        let exact = reference::gemm_f64(&case.call, &case.a, &case.b, &case.c).unwrap();
        for &kernel in &kernels {
            let got = run(&sim, &case, kernel);
            let what = format!("{} by {kernel:?}, against the rungs", case.name);
            assert_same_bits(&got, &want, case.call.n, &what);
            assert_eq!(exact.first_error(&got), None, "{} by {kernel:?}", case.name);
        }
    }
}

#[test]
fn a_nan_in_c_is_not_read_when_beta_is_zero() {
    let sim = Simulator::default();
    let mut case = row_major_case((Op::T, Op::N), (9, 5, 11), (2, 2, 0), (2.0, 0.0), 7);
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
    let case = row_major_case((Op::N, Op::N), (6, 0, 5), (1, 2, 3), (1.0, 0.5), 9);
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
    let case = row_major_case((Op::N, Op::T), (7, 3, 6), (0, 1, 0), (1.0, 0.0), 11);
    let wrap = |v: &[f32]| v.iter().map(|&x| Weight(x)).collect::<Vec<_>>();
    let (a, b, mut c) = (wrap(&case.a), wrap(&case.b), wrap(&case.c));
    kernels_gpu_host::backend::gemm_pod(&sim, &case.call, GemmKernel::Auto, &a, &b, &mut c)
        .unwrap();
    let got: Vec<f32> = c.iter().map(|w| w.0).collect();
    assert_eq!(got, expected_bits(&case));
}
