//! Split-k in the simulator: every split of the split-k configurations, on odd shapes and on
//! shapes whose interior blocks take the `cp.async` fast path in every slice, gives exactly
//! the bits of [`cpu_split_k`] (slices' FMA chains added in order), the same bits on a
//! second run, and stays within the f32 bound with `k + s` roundings.

use kernels_gpu_host::MatmulShape;
use kernels_gpu_host::data::Rng;
use kernels_gpu_host::reference::{compare, matmul_f64};
use kernels_gpu_host::sim::{Simulator, aligned_copy};
use kernels_gpu_host::split_k::{SplitK, cpu_split_k};

/// `(m, k, n)`: odd everything; `k` splitting into whole 16-deep tiles with an interior
/// 64 × 64 block (fast path) and edge blocks; `k` shorter than the splits ask for; `k = 1`.
const SHAPES: [(usize, usize, usize); 4] = [(5, 97, 7), (70, 160, 66), (3, 40, 130), (9, 1, 4)];

fn floats(x: &[kernels_gpu_host::sim::Aligned], len: usize) -> &[f32] {
    // SAFETY: `Aligned` is repr(C) around [f32; 4]: 4 · x.len() >= len floats.
    unsafe { std::slice::from_raw_parts(x.as_ptr().cast::<f32>(), len) }
}

#[test]
fn split_k_matches_its_cpu_twin_bit_for_bit() {
    let sim = Simulator::default();
    for (m, k, n) in SHAPES {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let mut rng = Rng::new((m * 1000 + k * 10 + n) as u64);
        let signed = |v: Vec<f32>| -> Vec<f32> { v.into_iter().map(|x| 2.0 * x - 1.0).collect() };
        let (a, b) = (signed(rng.uniform(m * k)), signed(rng.uniform(k * n)));
        let (aa, ab) = (aligned_copy(&a), aligned_copy(&b));
        let (a, b) = (floats(&aa, m * k), floats(&ab, k * n));
        let reference = matmul_f64(a, b, m, k, n);
        for s in SplitK::candidates().filter(|s| [2, 8, 32].contains(&s.splits)) {
            let out = sim
                .matmul_split_k(s, a, b, shape)
                .unwrap_or_else(|e| panic!("{s} {shape}: {e}"));
            let again = sim.matmul_split_k(s, a, b, shape).unwrap();
            let exact = cpu_split_k(s, a, b, shape);
            for (i, (x, y)) in out.iter().zip(&exact).enumerate() {
                assert_eq!(
                    x.to_bits(),
                    y.to_bits(),
                    "{s} {shape} [{}][{}]: {x} vs {y}",
                    i / n,
                    i % n
                );
            }
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
