//! Split-k in the simulator: every split of the split-k configurations, on odd shapes and on
//! shapes whose interior blocks take the `cp.async` fast path in every slice, gives exactly
//! the bits of [`cpu_split_k`] (slices' FMA chains added in order), the same bits on a
//! second run, and stays within the f32 bound with `k + s` roundings. A row split gives the
//! bits of its top configuration on its rows and those of its split-k run on the rest; a
//! repacked product (copied both ways, or strided: only the operands that need it copied,
//! the output in place) the bits of its configuration on the operands as they are. Serial
//! split-k (one launch) gives the bits of the two-launch run.

#[path = "common/fma_product.rs"]
mod fma_product;

use fma_product::{assert_same_bits, fma_in_k_order};
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::check::reference::{compare, matmul_f64};
use kernels_gpu_host::kernels_gpu::sgemm::CONFIGS;
use kernels_gpu_host::plan::repack::TiledRun;
use kernels_gpu_host::plan::row_split::RowSplit;
use kernels_gpu_host::plan::split_k::{SplitK, cpu_split_k};
use kernels_gpu_host::sim::{Simulator, aligned_copy, aligned_floats};
use kernels_gpu_host::{Backend, Error, MatmulKernel, MatmulShape, SgemmKernel, TileWidth};

/// `(m, k, n)`: odd everything; `k` splitting into whole 16-deep tiles with an interior
/// 64 × 64 block (fast path) and edge blocks; `k` shorter than the splits ask for; `k = 1`;
/// an odd output of more than one reduction block (1353 outputs: scalar loads, one output
/// in each quarter of a block).
const SHAPES: [(usize, usize, usize); 5] = [
    (5, 97, 7),
    (70, 160, 66),
    (3, 40, 130),
    (9, 1, 4),
    (33, 50, 41),
];

#[test]
fn split_k_matches_its_cpu_twin_bit_for_bit() {
    let sim = Simulator::default();
    for (m, k, n) in SHAPES {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let mut rng = Rng::new((m * 1000 + k * 10 + n) as u64);
        let (a, b) = (rng.signed(m * k), rng.signed(k * n));
        let (aa, ab) = (aligned_copy(&a), aligned_copy(&b));
        let (a, b) = (aligned_floats(&aa, m * k), aligned_floats(&ab, k * n));
        let reference = matmul_f64(a, b, m, k, n);
        for s in SplitK::candidates().filter(|s| [2, 8, 32].contains(&s.splits)) {
            let out = sim
                .matmul_split_k(s, a, b, shape)
                .unwrap_or_else(|e| panic!("{s} {shape}: {e}"));
            let again = sim.matmul_split_k(s, a, b, shape).unwrap();
            let exact = cpu_split_k(s, a, b, shape);
            assert_same_bits(&out, &exact, n, &format!("{s} {shape}"));
            assert!(
                out.iter()
                    .zip(&again)
                    .all(|(x, y)| x.to_bits() == y.to_bits()),
                "{s} {shape}: not deterministic"
            );
            let acc = compare(&out, &reference);
            assert!(
                acc.within_f32_bound(s.roundings(shape.k)),
                "{s} {shape}: {acc:?}"
            );
        }
    }
}

/// The top-left `rows × cols` of `x` (`x_rows × x_cols`, row-major) in a zero matrix of
/// `to_rows × to_cols`.
fn zero_padded(x: &[f32], x_cols: usize, to_rows: usize, to_cols: usize) -> Vec<f32> {
    let mut y = vec![0.0; to_rows * to_cols];
    for (r, row) in x.chunks(x_cols).enumerate() {
        y[r * to_cols..r * to_cols + x_cols].copy_from_slice(row);
    }
    y
}

/// A run on operands padded to whole tiles ([`TiledRun`]) gives the bits of its run on the
/// zero-padded operands, cut to `m × n`: for a plain configuration, its bits on the operands
/// as they are (the zeros add exact zero products). Shapes whose padding copies `a` (a row
/// edge), both operands (a depth that is not whole tiles), and none (too small to be worth
/// copying: the run itself).
#[test]
fn tiled_runs_have_the_bits_of_their_run_on_padded_operands() {
    let sim = Simulator::default();
    let tile = |entry| SgemmKernel::from_entry(entry).unwrap();
    let small = tile("sgemm_multistage_64x64x16_w32x32");
    let SgemmKernel::Config(config) = small else {
        unreachable!("from_entry names a configuration")
    };
    let split = SplitK { config, splits: 2 };
    for (m, k, n) in [(130, 128, 512), (150, 513, 250), (5, 97, 7)] {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let mut rng = Rng::new((m * 1000 + k * 10 + n) as u64 + 11);
        let (a, b) = (rng.signed(m * k), rng.signed(k * n));
        for run in [TiledRun::Config(small), TiledRun::Split(split)] {
            let out = sim
                .matmul_tiles(run, &a, &b, shape)
                .unwrap_or_else(|e| panic!("{} {shape}: {e}", run.name()));
            let what = format!("{} {shape}", run.name());
            let tiles = run.tiles(shape).unwrap();
            assert_eq!(tiles.is_some(), m > 100, "{what}: {tiles:?}");
            let p = tiles.map_or(shape, |t| t.shape);
            let (pm, pk, pn) = (p.m as usize, p.k as usize, p.n as usize);
            let (ap, bp) = (zero_padded(&a, k, pm, pk), zero_padded(&b, n, pk, pn));
            let want: Vec<f32> = match run {
                TiledRun::Config(kernel) => {
                    // The plain configuration on the operands as they are.
                    let (aa, ab) = (aligned_copy(&a), aligned_copy(&b));
                    let (a, b) = (aligned_floats(&aa, m * k), aligned_floats(&ab, k * n));
                    sim.matmul(MatmulKernel::Sgemm(kernel), TileWidth::Tw16, a, b, shape)
                        .unwrap()
                }
                TiledRun::Split(s) => cpu_split_k(s, &ap, &bp, p)
                    .chunks(pn)
                    .take(m)
                    .flat_map(|row| row[..n].to_vec())
                    .collect(),
            };
            assert_same_bits(&out, &want, n, &what);
        }
    }
}

/// Hundreds of slices (what the wave-filling candidates ask of a one-tile output under a
/// long `k`): the reduction adds them in order, as the CPU twin does, within the bound of
/// `k + slices` roundings.
#[test]
fn hundreds_of_slices_add_up_in_order() {
    let sim = Simulator::default();
    let shape = MatmulShape::new(3, 20011, 5).unwrap();
    let mut rng = Rng::new(20011);
    let (a, b) = (rng.signed(3 * 20011), rng.signed(20011 * 5));
    let (aa, ab) = (aligned_copy(&a), aligned_copy(&b));
    let (a, b) = (aligned_floats(&aa, a.len()), aligned_floats(&ab, b.len()));
    let reference = matmul_f64(a, b, 3, 20011, 5);
    let config = SplitK::configs().next().unwrap();
    let s = SplitK {
        config,
        splits: 500,
    };
    let (_, slices) = s.slices(shape.k);
    assert!(slices > 400, "{slices} slices");
    let out = sim.matmul_split_k(s, a, b, shape).unwrap();
    assert_same_bits(
        &out,
        &cpu_split_k(s, a, b, shape),
        5,
        &format!("{s} {shape}"),
    );
    let acc = compare(&out, &reference);
    assert!(acc.within_f32_bound(s.roundings(shape.k)), "{s}: {acc:?}");
}

/// Serial split-k (one launch, the slices handing each tile on in order) gives the bits of
/// the two-launch run of the same slices, on shapes with `m`, `n` or `k` of 1, primes, `k`
/// not a multiple of the tile or of the slice, and interior tiles whose every slice takes
/// the exact (`cp.async` 16-byte) loop; again on a second run.
#[test]
fn serial_split_k_is_the_two_launch_run_bit_for_bit() {
    let sim = Simulator::default();
    let shapes = [
        (1, 67, 131),
        (67, 1, 3),
        (131, 37, 1),
        (5, 97, 7),
        (70, 160, 66),
        (128, 96, 128),
    ];
    for (m, k, n) in shapes {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let mut rng = Rng::new((m * 1000 + k * 10 + n) as u64);
        let (a, b) = (rng.signed(m * k), rng.signed(k * n));
        let (aa, ab) = (aligned_copy(&a), aligned_copy(&b));
        let (a, b) = (aligned_floats(&aa, m * k), aligned_floats(&ab, k * n));
        let serial = SplitK::candidates().filter(|s| s.serial_spec().is_some());
        for s in serial.filter(|s| [2, 4, 32].contains(&s.splits)) {
            let what = format!("{} {shape}", s.serial_name());
            let out = sim
                .matmul_serial_split_k(s, a, b, shape)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            // The two-launch run is its CPU twin's bits (split_k_matches_its_cpu_twin...).
            assert_same_bits(&out, &cpu_split_k(s, a, b, shape), n, &what);
            if s.splits == 4 {
                let two = sim.matmul_split_k(s, a, b, shape).unwrap();
                assert_same_bits(&out, &two, n, &what);
                let again = sim.matmul_serial_split_k(s, a, b, shape).unwrap();
                assert_same_bits(&again, &out, n, &format!("{what}, again"));
            }
        }
    }
}

#[test]
fn serial_split_k_of_empty_and_zero_depth_products_and_a_plain_configuration() {
    let sim = Simulator::default();
    let s = SplitK::candidates()
        .find(|s| s.serial_spec().is_some())
        .unwrap();
    for (m, k, n) in [(0, 5, 3), (4, 0, 6), (3, 7, 0)] {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let out = sim
            .matmul_serial_split_k(s, &vec![1.0; m * k], &vec![1.0; k * n], shape)
            .unwrap();
        assert_eq!(out, vec![0.0; m * n], "{shape}");
    }
    // Wrong input lengths are a typed error.
    let shape = MatmulShape::new(4, 5, 6).unwrap();
    let short = sim.matmul_serial_split_k(s, &[1.0; 19], &[1.0; 30], shape);
    assert!(matches!(short, Err(Error::InputLength { .. })), "{short:?}");
}

#[test]
fn empty_and_zero_depth_products() {
    let sim = Simulator::default();
    let s = SplitK::candidates().next().unwrap();
    for (m, k, n) in [(0, 5, 3), (4, 0, 6), (3, 7, 0)] {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let out = sim
            .matmul_split_k(s, &vec![1.0; m * k], &vec![1.0; k * n], shape)
            .unwrap();
        assert_eq!(out, vec![0.0; m * n], "{shape}");
    }
}

#[test]
fn row_split_is_its_top_configuration_then_split_k() {
    let sim = Simulator::default();
    let bottom = SplitK::candidates().find(|s| s.splits == 4).unwrap();
    // Odd everything; a top part of one row; a bottom part of one row; k = 1; n = 1.
    for ((m, k, n), rows) in [
        ((70, 97, 66), 64),
        ((9, 33, 130), 1),
        ((5, 40, 7), 4),
        ((3, 1, 5), 2),
        ((6, 7, 1), 4),
    ] {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let mut rng = Rng::new((m * 1000 + k * 10 + n) as u64);
        let (a, b) = (rng.uniform(m * k), rng.uniform(k * n));
        let split = RowSplit {
            top: SgemmKernel::DEFAULT,
            rows,
            bottom,
        };
        let out = sim
            .matmul_rows(split, &a, &b, shape)
            .unwrap_or_else(|e| panic!("{split} {shape}: {e}"));
        let rows = rows as usize;
        let mut exact = fma_in_k_order(&a[..rows * k], &b, rows, k, n);
        let left = MatmulShape::new(m - rows, k, n).unwrap();
        exact.extend(cpu_split_k(bottom, &a[rows * k..], &b, left));
        assert_eq!(out.len(), m * n);
        assert_same_bits(&out, &exact, n, &format!("{split} {shape}"));
        let acc = compare(&out, &matmul_f64(&a, &b, m, k, n));
        assert!(
            acc.within_f32_bound(bottom.roundings(shape.k)),
            "{split} {shape}: {acc:?}"
        );
    }
    // The top part must leave rows on both sides.
    let shape = MatmulShape::new(4, 3, 5).unwrap();
    for rows in [0, 4, 9] {
        let split = RowSplit {
            top: SgemmKernel::DEFAULT,
            rows,
            bottom,
        };
        assert!(matches!(
            sim.matmul_rows(split, &[1.0; 12], &[1.0; 15], shape),
            Err(Error::RowSplit { m: 4, .. })
        ));
    }
}

#[test]
fn repacked_products_have_their_configurations_bits() {
    let sim = Simulator::default();
    // The default (copied both ways), and every configuration with a strided entry (only
    // the operands that need it copied, the output stored in place).
    let strided = CONFIGS
        .iter()
        .filter(|c| c.strided.is_some())
        .map(|c| SgemmKernel::from_entry(c.spec.entry).unwrap());
    let configs: Vec<_> = std::iter::once(SgemmKernel::DEFAULT)
        .chain(strided)
        .collect();
    assert!(configs.len() >= 3);
    // k odd, n odd, both ((70, 37, 66) has interior 64 × 64 blocks on the 16-byte path only
    // once repacked; (130, 37, 131) interior 128 × 128 ones); aligned rows with a depth that
    // is not whole tiles (both copied, the depth padded) and whole tiles with an odd `n`
    // (only `b` copied); then one of each dimension, k = 1, n = 1.
    let odd = [(70, 37, 66), (5, 8, 7), (17, 33, 65), (130, 37, 131)];
    let partial = [(66, 36, 68), (65, 32, 67)];
    let ones = [(1, 1, 1), (9, 1, 130), (7, 5, 1)];
    for (m, k, n) in odd.into_iter().chain(partial).chain(ones) {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let mut rng = Rng::new((m * 1000 + k * 10 + n) as u64);
        let (a, b) = (rng.uniform(m * k), rng.uniform(k * n));
        let exact = fma_in_k_order(&a, &b, m, k, n);
        for &kernel in &configs {
            let out = sim
                .matmul_repacked(kernel, &a, &b, shape)
                .unwrap_or_else(|e| panic!("{kernel} {shape}: {e}"));
            assert_eq!(out.len(), m * n);
            assert_same_bits(&out, &exact, n, &format!("{kernel} repacked {shape}"));
        }
    }
}
