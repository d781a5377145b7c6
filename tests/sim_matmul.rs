//! The lecture's matmul kernels on the CPU simulator, against the f64 reference.
//!
//! Every kernel × tile width runs on shapes chosen to hit partial tiles in every dimension
//! (17×33×65), a single row or column of tiles (5×300×7, 64×1×64) and one element (1×1×1);
//! some also on a larger product with many blocks and phases (257×129×511, see `combos!`).
//! Then zero-sized shapes, the typed launchers and random shapes. No GPU is needed. (Shape,
//! length and limit errors are in `cpu_errors.rs`.)

use kernels_gpu_host::backend::Backend;
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::check::reference::{compare, matmul_f64};
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::{MatmulKernel, MatmulShape, TileWidth};
use proptest::prelude::*;

/// Random operands for `shape`, from a seed derived from the shape so each test is fixed.
fn operands(shape: MatmulShape, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let (la, lb, _) = shape.lens();
    let mut rng =
        Rng::new(seed ^ ((shape.m as u64) << 40 | (shape.k as u64) << 20 | shape.n as u64));
    (rng.uniform(la), rng.uniform(lb))
}

/// Runs `kernel` at `tw` on the simulator and checks it against the f64 reference.
fn check(kernel: MatmulKernel, tw: TileWidth, m: usize, k: usize, n: usize) {
    let shape = MatmulShape::new(m, k, n).unwrap();
    let (a, b) = operands(shape, 0x5eed);
    let out = Simulator::default()
        .matmul(kernel, tw, &a, &b, shape)
        .unwrap_or_else(|e| panic!("{kernel} tw={tw} {shape}: {e}"));
    assert_eq!(out.len(), m * n, "{kernel} tw={tw} {shape}: output length");
    let accuracy = compare(&out, &matmul_f64(&a, &b, m, k, n));
    // Each kernel within the bound of its own precision (the TF32 rung rounds its inputs).
    let precision = kernel.precision();
    assert!(
        accuracy.within_bound(k, precision),
        "{kernel} tw={tw} {shape}: {accuracy:?} is outside the {} bound for k={k}",
        precision.name()
    );
}

/// The shapes every kernel × tile width runs, as `(m, k, n)`.
const SHAPES: [(usize, usize, usize); 4] = [(1, 1, 1), (17, 33, 65), (5, 300, 7), (64, 1, 64)];

/// 257×129×511: 131,327 outputs, every tile width has partial tiles at both edges.
const LARGE: (usize, usize, usize) = (257, 129, 511);

fn check_all_shapes(kernel: MatmulKernel, tw: TileWidth, large: bool) {
    for (m, k, n) in SHAPES {
        check(kernel, tw, m, k, n);
    }
    if large {
        let (m, k, n) = LARGE;
        check(kernel, tw, m, k, n);
    }
}

// One test per kernel × tile width, so a failure names the combination.
//
// The large shape runs for a subset only: the simulator's cost is dominated by its barriers
// (one OS-thread wake-up per simulated thread per `sync_threads`), and 257×129×511 means
// 76,000 barriers of 64 threads at tw = 8 (about 40-60 s on 2 cores at the test profile's
// opt-level 1), 11,000 of 256 threads at tw = 16 (20-40 s) and 1,700 of 1024 threads at
// tw = 32 (about 25 s); all ten combinations would take several minutes. The naive kernel
// (about 4 s) and the run-time-width tiled kernel at tw = 16 run it: all tiled kernels share
// `tiled_phases`, and 17×33×65 already gives every combination partial tiles in every
// dimension and several blocks and phases.
macro_rules! combos {
    ($($name:ident => $kernel:ident, $tw:ident, large: $large:literal;)*) => {$(
        #[test]
        fn $name() {
            let kernel = MatmulKernel::$kernel;
            assert!(kernel.tile_widths().contains(&TileWidth::$tw));
            check_all_shapes(kernel, TileWidth::$tw, $large);
        }
    )*};
}

combos! {
    naive_tw16 => Naive, Tw16, large: true;
    tiled_dynamic_tw8 => TiledDynamic, Tw8, large: false;
    tiled_dynamic_tw16 => TiledDynamic, Tw16, large: true;
    tiled_dynamic_tw32 => TiledDynamic, Tw32, large: false;
    tiled_static_tw8 => TiledStatic, Tw8, large: false;
    tiled_static_tw16 => TiledStatic, Tw16, large: false;
    tiled_static_tw32 => TiledStatic, Tw32, large: false;
    tiled_dynamic_const_tw8 => TiledDynamicConst, Tw8, large: false;
    tiled_dynamic_const_tw16 => TiledDynamicConst, Tw16, large: false;
    tiled_dynamic_const_tw32 => TiledDynamicConst, Tw32, large: false;
}

/// The macro above names exactly `MatmulKernel::LECTURE × tile_widths()`. (The SGEMM
/// kernels have their own tests, in `sim_sgemm.rs`.)
#[test]
fn combos_cover_every_kernel_and_tile_width() {
    let combos: usize = MatmulKernel::LECTURE
        .iter()
        .map(|k| k.tile_widths().len())
        .sum();
    assert_eq!(combos, 10);
}

/// All FP32 kernels accumulate `out[r, c]` with one FMA per `i` in increasing order, and
/// the tiled ones pad with zeros (`fma(0, 0, p) == p`), so every one gives the same bits.
/// (The TF32 rung rounds its inputs: `sim_sgemm` checks it against its own bound.)
#[test]
fn all_kernels_agree_bitwise() {
    let shape = MatmulShape::new(17, 33, 65).unwrap();
    let (a, b) = operands(shape, 1);
    let sim = Simulator::default();
    let naive = sim.matmul_naive(&a, &b, shape).unwrap();
    for kernel in MatmulKernel::ALL
        .into_iter()
        .filter(|k| k.precision() == kernels_gpu_host::Precision::Fp32)
    {
        for &tw in kernel.tile_widths() {
            let out = sim.matmul(kernel, tw, &a, &b, shape).unwrap();
            assert!(
                out.iter()
                    .zip(&naive)
                    .all(|(x, y)| x.to_bits() == y.to_bits()),
                "{kernel} tw={tw} differs from the naive kernel"
            );
        }
    }
}

#[test]
fn zero_sized_shapes() {
    let sim = Simulator::default();
    for kernel in MatmulKernel::ALL {
        for &tw in kernel.tile_widths() {
            // 0×5 · 5×3: no rows, an empty product.
            let out = sim.matmul(
                kernel,
                tw,
                &[],
                &[1.0; 15],
                MatmulShape::new(0, 5, 3).unwrap(),
            );
            assert_eq!(out.unwrap(), Vec::<f32>::new(), "{kernel} tw={tw} 0×5×3");
            // 4×0 · 0×3: an empty sum for each of 4×3 outputs.
            let out = sim.matmul(kernel, tw, &[], &[], MatmulShape::new(4, 0, 3).unwrap());
            assert_eq!(out.unwrap(), vec![0.0; 12], "{kernel} tw={tw} 4×0×3");
            // 3×5 · 5×0: no columns.
            let out = sim.matmul(
                kernel,
                tw,
                &[1.0; 15],
                &[],
                MatmulShape::new(3, 5, 0).unwrap(),
            );
            assert_eq!(out.unwrap(), Vec::<f32>::new(), "{kernel} tw={tw} 3×5×0");
        }
    }
}

/// The typed launchers are the run-time dispatch with the kernel and width fixed.
#[test]
fn typed_launchers_match_dispatch() {
    let shape = MatmulShape::new(19, 45, 23).unwrap();
    let (a, b) = operands(shape, 2);
    let sim = Simulator::default();
    let dispatch = |kernel, tw| sim.matmul(kernel, tw, &a, &b, shape).unwrap();
    use MatmulKernel::*;
    assert_eq!(
        sim.matmul_naive(&a, &b, shape).unwrap(),
        dispatch(Naive, TileWidth::Tw16),
        "{Naive}"
    );
    // The tiled kernels' launchers at each of `TileWidth::ALL`, in its order.
    let tiled_dynamic = TileWidth::ALL.map(|tw| sim.matmul_tiled_dynamic(tw, &a, &b, shape));
    let tiled_static = [
        sim.matmul_tiled_static::<8>(&a, &b, shape),
        sim.matmul_tiled_static::<16>(&a, &b, shape),
        sim.matmul_tiled_static::<32>(&a, &b, shape),
    ];
    let tiled_dynamic_const = [
        sim.matmul_tiled_dynamic_const::<8>(&a, &b, shape),
        sim.matmul_tiled_dynamic_const::<16>(&a, &b, shape),
        sim.matmul_tiled_dynamic_const::<32>(&a, &b, shape),
    ];
    for (kernel, typed) in [
        (TiledDynamic, tiled_dynamic),
        (TiledStatic, tiled_static),
        (TiledDynamicConst, tiled_dynamic_const),
    ] {
        for (tw, out) in TileWidth::ALL.into_iter().zip(typed) {
            assert_eq!(out.unwrap(), dispatch(kernel, tw), "{kernel} tw={tw}");
        }
    }
}

fn kernel_and_width() -> impl Strategy<Value = (MatmulKernel, TileWidth)> {
    (0..MatmulKernel::ALL.len(), 0..TileWidth::ALL.len()).prop_map(|(k, t)| {
        let kernel = MatmulKernel::ALL[k];
        let widths = kernel.tile_widths();
        (kernel, widths[t % widths.len()])
    })
}

proptest! {
    // Each case launches up to 4 blocks of up to 1024 threads: a few dozen cases keep it
    // to seconds. Failures are not persisted: the printed shape is the reproduction.
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_shapes_match_reference(
        m in 1usize..=40,
        k in 1usize..=70,
        n in 1usize..=40,
        (kernel, tw) in kernel_and_width(),
    ) {
        check(kernel, tw, m, k, n);
    }
}
