//! Stream-k in the simulator: every configuration with a stream-k entry, over worker counts
//! that cut tiles into one piece, several, and more workers than k-tiles, on shapes that
//! are whole tiles of every entry (no copies) and on odd ones (`m`, `n` or `k` of 1, primes,
//! `k` not whole tiles: padded copies of the operands and the output), gives exactly the
//! bits of [`cpu_stream_k`] (each tile's pieces' FMA chains added in `k` order), the same
//! bits again, and stays within the f32 bound with `k + p` roundings. Runs on parts of the
//! rows (a multi-GPU product's) give the whole run's bits on those rows.

#[path = "common/fma_product.rs"]
mod fma_product;

use fma_product::assert_same_bits;
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::check::reference::{compare, matmul_f64};
use kernels_gpu_host::kernels_gpu::sgemm::CONFIGS;
use kernels_gpu_host::plan::stream_k::{StreamRun, cpu_stream_k};
use kernels_gpu_host::sim::{Simulator, aligned_copy, aligned_floats};
use kernels_gpu_host::{Error, MatmulShape};

/// Operands of `shape` from `seed`, 16-byte aligned.
fn operands(shape: MatmulShape, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
    let mut rng = Rng::new(seed);
    (rng.signed(m * k), rng.signed(k * n))
}

#[test]
fn stream_k_matches_its_cpu_twin_bit_for_bit() {
    let sim = Simulator::default();
    let shapes = [
        (1, 67, 131),
        (67, 1, 3),
        (131, 37, 1),
        (70, 161, 66),
        (128, 96, 128),
        (130, 200, 70),
        (256, 64, 256),
    ];
    for (m, k, n) in shapes {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let (a, b) = operands(shape, (m * 1000 + k * 10 + n) as u64);
        let (aa, ab) = (aligned_copy(&a), aligned_copy(&b));
        let (a, b) = (aligned_floats(&aa, m * k), aligned_floats(&ab, k * n));
        let reference = matmul_f64(a, b, m, k, n);
        for config in StreamRun::configs() {
            for s in [1, 3, 7, 40].map(|w| StreamRun::new(config, w)) {
                let what = format!("{s} {shape}");
                let out = sim
                    .matmul_stream_k(s, a, b, shape)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_same_bits(&out, &cpu_stream_k(s, a, b, shape), n, &what);
                let again = sim.matmul_stream_k(s, a, b, shape).unwrap();
                assert_same_bits(&again, &out, n, &format!("{what}, again"));
                let acc = compare(&out, &reference);
                assert!(acc.within_f32_bound(s.roundings(shape)), "{what}: {acc:?}");
            }
        }
    }
}

/// A multi-GPU product runs the whole product's schedule on each part of the rows: the
/// parts' outputs, put together, are the whole run's bits.
#[test]
fn parts_of_the_rows_have_the_whole_runs_bits() {
    let sim = Simulator::default();
    let (m, k, n) = (200, 90, 72);
    let shape = MatmulShape::new(m, k, n).unwrap();
    let (a, b) = operands(shape, 7);
    for config in StreamRun::configs() {
        let bm = CONFIGS[config].geometry.bm as usize;
        let s = StreamRun::new(config, 11);
        let whole = sim.matmul_stream_k(s, &a, &b, shape).unwrap();
        // Cut at block rows: one, two and the rest (fewer where the product is shorter).
        let cuts: Vec<usize> = [0, bm, 3 * bm, m].into_iter().filter(|&r| r <= m).collect();
        let mut parts = vec![];
        for w in cuts.windows(2).filter(|w| w[0] < w[1]) {
            let rows = w[0]..w[1];
            let part = MatmulShape::new(rows.len(), k, n).unwrap();
            let run = s.for_rows(rows.start as u32..rows.end as u32, m as u32);
            let out = sim
                .matmul_stream_k(run, &a[rows.start * k..rows.end * k], &b, part)
                .unwrap_or_else(|e| panic!("{run} rows {rows:?}: {e}"));
            parts.extend(out);
        }
        assert_same_bits(&parts, &whole, n, &format!("{s} {shape} in parts"));
    }
}

#[test]
fn empty_products_bad_lengths_and_parts_off_the_block_rows() {
    let sim = Simulator::default();
    let config = StreamRun::configs().next().unwrap();
    let s = StreamRun::new(config, 5);
    for (m, k, n) in [(0, 5, 3), (4, 0, 6), (3, 7, 0)] {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let out = sim
            .matmul_stream_k(s, &vec![1.0; m * k], &vec![1.0; k * n], shape)
            .unwrap();
        assert_eq!(out, vec![0.0; m * n], "{shape}");
    }
    let shape = MatmulShape::new(4, 5, 6).unwrap();
    let short = sim.matmul_stream_k(s, &[1.0; 19], &[1.0; 30], shape);
    assert!(matches!(short, Err(Error::InputLength { .. })), "{short:?}");
    let off = s.for_rows(1..4, 10);
    let part = sim.matmul_stream_k(
        off,
        &[1.0; 15],
        &[1.0; 30],
        MatmulShape::new(3, 5, 6).unwrap(),
    );
    assert!(matches!(part, Err(Error::StreamPart { .. })), "{part:?}");
}
