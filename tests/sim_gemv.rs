//! Rung 16, the memory-bound kernels, in the simulator: every configuration of every
//! precision that covers a shape, at the device's split and at fixed ones, on odd and
//! degenerate shapes (`m`, `n` or `k` = 1, primes, 16 and 17 beside each other), bit for bit
//! against the CPU twin that sums in the kernels' order ([`Gemv::cpu`]), within the f64
//! bound of its precision (and, TF32 and BF16, within f32's of the product of the inputs as
//! the precision rounds them), the same bits on a second run and on misaligned operands
//! (the scalar paths).

#[path = "common/gemv_cases.rs"]
mod gemv_cases;

use gemv_cases::{SHAPES, bits, inputs};
use kernels_gpu_host::check::reference;
use kernels_gpu_host::gpu::autotune::Tuned;
use kernels_gpu_host::plan::gemv::{GEMV_CONFIGS, Gemv, GemvClass, Operands, applies};
use kernels_gpu_host::sim::{Aligned, Simulator, aligned_copy, aligned_floats};
use kernels_gpu_host::{Error, MatmulShape, Precision};

#[test]
fn every_configuration_is_its_cpu_twin_and_within_the_bound() {
    let sim = Simulator::default();
    for (i, &(m, k, n)) in SHAPES.iter().enumerate() {
        let shape = MatmulShape::new(m, k, n).unwrap();
        assert!(applies(shape), "{shape}");
        let (a, b) = inputs(shape, 100 + i as u64);
        // 16-byte aligned, as device allocations are: the vector paths.
        let (av, bv) = (aligned_copy(&a), aligned_copy(&b));
        let (a16, b16) = (aligned_floats(&av, a.len()), aligned_floats(&bv, b.len()));
        let exact = reference::matmul_f64(&a, &b, m, k, n);
        for precision in Precision::ALL {
            let round = |x: &[f32]| x.iter().map(|&v| precision.round(v)).collect::<Vec<_>>();
            let rounded = reference::matmul_f64(&round(&a), &round(&b), m, k, n);
            let candidates = Gemv::candidates(shape, precision);
            assert!(!candidates.is_empty(), "{shape} {}", precision.name());
            for g in candidates {
                assert_eq!(g.config().precision, precision, "{g}");
                let l = g
                    .launch(shape, Simulator::MULTIPROCESSORS, &sim.limits)
                    .unwrap();
                let want = g.cpu(&a, &b, shape, l.slice);
                let got = sim.matmul_gemv(g, a16, b16, shape).unwrap();
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{g} on {shape} ({} slices)",
                    l.slices
                );
                let acc = reference::compare(&got, &exact);
                assert!(acc.within_bound(k, precision), "{g} on {shape}: {acc:?}");
                let acc = reference::compare(&got, &rounded);
                assert!(acc.within_f32_bound(k), "{g} on {shape} (rounded): {acc:?}");
                let again = sim.matmul_gemv(g, a16, b16, shape).unwrap();
                assert_eq!(bits(&again), bits(&got), "{g} on {shape}: a second run");
            }
        }
    }
}

/// The configurations of BF16 operands on every shape, their operands aligned and one
/// element past alignment: the twin's bits on the operands' f32 values, the bits of the
/// configuration that rounds f32 inputs to BF16 (the same kernel and order) on the f32
/// inputs, within the BF16 bound, and the same bits again.
#[test]
fn bf16_operands_give_the_bits_of_rounding_f32_inputs_to_bf16() {
    use half::bf16;
    let sim = Simulator::default();
    let mut runs = 0;
    for (i, &(m, k, n)) in SHAPES.iter().enumerate() {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let (a, b) = inputs(shape, 500 + i as u64);
        let (a16, b16): (Vec<bf16>, Vec<bf16>) = (
            a.iter().map(|&x| bf16::from_f32(x)).collect(),
            b.iter().map(|&x| bf16::from_f32(x)).collect(),
        );
        let widen = |x: &[bf16]| x.iter().map(|v| v.to_f32()).collect::<Vec<f32>>();
        let (aw, bw) = (widen(&a16), widen(&b16));
        let exact = reference::matmul_f64(&a, &b, m, k, n);
        // Aligned (as device allocations are), and one element past (every row misaligned
        // where its length is a multiple of 4).
        let store = |x: &[bf16], skip: usize| {
            let mut v = vec![bf16::ZERO; skip];
            v.extend_from_slice(x);
            aligned_copy(&v)
        };
        fn view(v: &[Aligned], skip: usize, len: usize) -> &[bf16] {
            &bytemuck::cast_slice::<f32, bf16>(aligned_floats(v, 4 * v.len()))[skip..skip + len]
        }
        let candidates = Gemv::candidates_of(shape, Precision::Bf16, Operands::Bf16);
        assert!(!candidates.is_empty(), "{shape}");
        for g in candidates {
            let c = g.config();
            assert_eq!((c.precision, c.operands), (Precision::Bf16, Operands::Bf16));
            let l = g
                .launch(shape, Simulator::MULTIPROCESSORS, &sim.limits)
                .unwrap();
            let want = g.cpu(&aw, &bw, shape, l.slice);
            // The rounding twin: same class, bound and rows, f32 operands rounded to BF16.
            let rounding = GEMV_CONFIGS
                .iter()
                .position(|o| {
                    o.class == c.class
                        && o.bound == c.bound
                        && o.rows_per_warp == c.rows_per_warp
                        && o.precision == Precision::Bf16
                        && o.operands == Operands::F32
                })
                .map(|config| Gemv { config, ..g })
                .unwrap();
            let (av, bv) = (aligned_copy(&a), aligned_copy(&b));
            let (a32, b32) = (aligned_floats(&av, a.len()), aligned_floats(&bv, b.len()));
            let from_f32 = sim.matmul_gemv(rounding, a32, b32, shape).unwrap();
            assert_eq!(bits(&from_f32), bits(&want), "{rounding} on {shape}");
            for skip in [0, 1] {
                let (sa, sb) = (store(&a16, skip), store(&b16, skip));
                // Held in aligned storage: the vector paths read it in place.
                let (x, y) = (view(&sa, skip, a16.len()), view(&sb, skip, b16.len()));
                let got = sim.matmul_gemv(g, x, y, shape).unwrap();
                assert_eq!(bits(&got), bits(&want), "{g} on {shape}, skip {skip}");
                let acc = reference::compare(&got, &exact);
                assert!(
                    acc.within_bound(k, Precision::Bf16),
                    "{g} on {shape}: {acc:?}"
                );
                runs += 1;
            }
        }
    }
    assert!(runs > 100, "{runs} runs");
}

/// `x` one float past a 16-byte boundary: where its rows are a multiple of 4 floats long,
/// every row is misaligned ([`shifted_floats`] reads it back).
fn shifted(x: &[f32]) -> Vec<Aligned> {
    let mut v = vec![0.0f32];
    v.extend_from_slice(x);
    aligned_copy(&v)
}

/// The `len` floats [`shifted`] stored.
fn shifted_floats(v: &[Aligned], len: usize) -> &[f32] {
    &aligned_floats(v, len + 1)[1..]
}

#[test]
fn misaligned_operands_take_the_scalar_paths_with_the_same_bits() {
    let sim = Simulator::default();
    for &(m, k, n) in &[(3, 64, 132), (132, 64, 4), (64, 8, 132)] {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let (a, b) = inputs(shape, 7);
        let (av, bv) = (shifted(&a), shifted(&b));
        let (a1, b1) = (shifted_floats(&av, a.len()), shifted_floats(&bv, b.len()));
        let every = Precision::ALL.into_iter();
        for g in every.flat_map(|p| Gemv::candidates(shape, p)) {
            let slice = g
                .launch(shape, Simulator::MULTIPROCESSORS, &sim.limits)
                .unwrap()
                .slice;
            let got = sim.matmul_gemv(g, a1, b1, shape).unwrap();
            assert_eq!(
                bits(&got),
                bits(&g.cpu(&a, &b, shape, slice)),
                "{g} on {shape}"
            );
        }
    }
}

/// The small-`n` kernel's ring of loads in flight and its staging of `b` (`n > 1`), with
/// every configuration and every `n` up to 16 (and four above, up to its bound): depths shorter than a chunk and
/// odd, exactly one group of chunks, and several groups with the last part-filled (and
/// lanes part-filled); `m` not a multiple of 16 (rows and whole warps past the last); one slice
/// and several, the last shorter; operands aligned, both misaligned, and `b` alone: the
/// twin's bits, within the bound.
#[test]
fn small_n_rings_and_staging_on_every_n_depth_split_and_alignment() {
    let sim = Simulator::default();
    let mut several = false;
    for (config, c) in GEMV_CONFIGS.iter().enumerate() {
        // (The configurations of BF16 operands: bf16_operands_give_the_bits_of_rounding_…,
        // whose twins these are.)
        if c.class != GemvClass::SmallN || c.operands != Operands::F32 {
            continue;
        }
        // Every n up to 16; past it, the first, an odd one and the last two.
        let wide = [17, 23, 31, 32].into_iter().filter(|&n| n <= c.bound);
        for n in (1..=c.bound.min(16)).chain(wide).map(|n| n as usize) {
            for (i, (m, k)) in [(3, 127), (20, 256), (17, 1031)].into_iter().enumerate() {
                let shape = MatmulShape::new(m, k, n).unwrap();
                let (a, b) = inputs(shape, (1000 * config + 10 * n + i) as u64);
                let exact = reference::matmul_f64(&a, &b, m, k, n);
                let (av, bv) = (aligned_copy(&a), aligned_copy(&b));
                let (a16, b16) = (aligned_floats(&av, a.len()), aligned_floats(&bv, b.len()));
                let (as1, bs1) = (shifted(&a), shifted(&b));
                let (a1, b1) = (shifted_floats(&as1, a.len()), shifted_floats(&bs1, b.len()));
                // Three slices both ways: the planes added by a second launch and by the
                // last block of each tile.
                for (split, fused) in [(1, false), (2, true), (3, false), (3, true)] {
                    let g = Gemv {
                        config,
                        split: Some(split),
                        fused,
                    };
                    let l = g.launch(shape, 2, &sim.limits).unwrap();
                    several |= l.slices == 3;
                    let want = bits(&g.cpu(&a, &b, shape, l.slice));
                    for (what, a, b) in [
                        ("aligned", a16, b16),
                        ("shifted", a1, b1),
                        ("b shifted", a16, b1),
                    ] {
                        let got = sim.matmul_gemv(g, a, b, shape).unwrap();
                        assert_eq!(bits(&got), want, "{g} on {shape}, {what}");
                        let acc = reference::compare(&got, &exact);
                        assert!(acc.within_bound(k, c.precision), "{g} on {shape}: {acc:?}");
                    }
                }
            }
        }
    }
    assert!(several, "no run over three slices");
}

#[test]
fn long_k_under_a_tiny_output_splits_and_reduces_in_order() {
    // 3 × 20000 × 2: both the small-m and the small-n kernel split k over many slices, the
    // planes added by a second launch or in the launch (fused).
    let sim = Simulator::default();
    let shape = MatmulShape::new(3, 20_000, 2).unwrap();
    let (a, b) = inputs(shape, 9);
    let exact = reference::matmul_f64(&a, &b, 3, 20_000, 2);
    let (av, bv) = (aligned_copy(&a), aligned_copy(&b));
    let (a16, b16) = (aligned_floats(&av, a.len()), aligned_floats(&bv, b.len()));
    let runs = [GemvClass::SmallM, GemvClass::SmallN]
        .into_iter()
        .flat_map(|class| [false, true].map(|fused| (class, fused)));
    for (class, fused) in runs {
        let g = Gemv {
            config: Gemv::smallest(class, shape, Precision::Fp32, Operands::F32).unwrap(),
            split: Some(64),
            fused,
        };
        let l = g.launch(shape, 2, &sim.limits).unwrap();
        assert!(l.slices > 30, "{g}: {} slices", l.slices);
        let got = sim.matmul_gemv(g, a16, b16, shape).unwrap();
        assert_eq!(bits(&got), bits(&g.cpu(&a, &b, shape, l.slice)), "{g}");
        assert!(reference::compare(&got, &exact).within_bound(20_000, Precision::Fp32));
    }
}

#[test]
fn the_autotuner_times_rung_16_of_the_precision_on_memory_bound_few_row_and_narrow_shapes_only() {
    let gemv = |shape, precision| {
        Tuned::candidates(shape, precision)
            .into_iter()
            .filter(|c| matches!(c, Tuned::Gemv(_)))
            .collect::<Vec<_>>()
    };
    let shape = |m, k, n| MatmulShape::new(m, k, n).unwrap();
    for s in [
        shape(1, 4096, 4096),
        shape(4096, 4096, 7),
        shape(4096, 16, 4096),
    ] {
        for precision in Precision::ALL {
            let runs = gemv(s, precision);
            assert!(!runs.is_empty(), "{s} {}", precision.name());
            for c in runs {
                assert_eq!(Tuned::from_name(&c.name()), Some(c));
                let Tuned::Gemv(g) = c else { unreachable!() };
                assert_eq!(g.config().precision, precision, "{g}");
            }
        }
    }
    // Neither memory-bound, nor few rows (at most 64), nor narrow (at most 32 columns).
    assert!(gemv(shape(65, 1000, 33), Precision::Fp32).is_empty());
    assert!(!gemv(shape(64, 1000, 33), Precision::Fp32).is_empty());
    assert!(gemv(shape(65, 4096, 33), Precision::Fp32).is_empty());
    assert!(!gemv(shape(17, 4096, 17), Precision::Fp32).is_empty());
    assert!(!gemv(shape(65, 4096, 32), Precision::Tf32).is_empty());
}

#[test]
fn a_configuration_that_does_not_cover_the_shape_is_a_typed_error() {
    let sim = Simulator::default();
    let shape = MatmulShape::new(8, 8, 5).unwrap();
    let n4 = Gemv::from_name("gemv-small-n4").unwrap();
    let err = sim
        .matmul_gemv(n4, &[0.0; 64], &[0.0; 40], shape)
        .unwrap_err();
    assert!(matches!(err, Error::GemvBound { .. }), "{err}");
    // A trivial product is zeros, whatever the configuration.
    let empty = MatmulShape::new(8, 0, 5).unwrap();
    assert_eq!(
        sim.matmul_gemv::<f32>(n4, &[], &[], empty).unwrap(),
        vec![0.0; 40]
    );
}

/// More rows than a small-`m` configuration's bound: its groups of rows (in z), each
/// streaming `b`, with the twin's bits; few rows under a long `k` among them.
#[test]
fn small_m_configurations_take_more_rows_in_groups() {
    let sim = Simulator::default();
    for (name, (m, k, n)) in [
        ("gemv-small-m4", (5, 40, 9)),
        ("gemv-small-m1", (3, 17, 130)),
        ("gemv-small-m16", (33, 2048, 33)),
    ] {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let (a, b) = inputs(shape, 21);
        let (av, bv) = (aligned_copy(&a), aligned_copy(&b));
        let (a16, b16) = (aligned_floats(&av, a.len()), aligned_floats(&bv, b.len()));
        let g = Gemv::from_name(name).unwrap();
        let l = g
            .launch(shape, Simulator::MULTIPROCESSORS, &sim.limits)
            .unwrap();
        assert!(l.main.grid.z > 1, "{g} on {shape}");
        let got = sim.matmul_gemv(g, a16, b16, shape).unwrap();
        assert_eq!(
            bits(&got),
            bits(&g.cpu(&a, &b, shape, l.slice)),
            "{g} on {shape}"
        );
        let exact = reference::matmul_f64(&a, &b, m, k, n);
        assert!(reference::compare(&got, &exact).within_bound(k, Precision::Fp32));
    }
    // 33 × 2048 × 33 has few rows: the autotuner's candidates have the small-m kernel.
    let tiny = MatmulShape::new(33, 2048, 33).unwrap();
    assert!(applies(tiny));
    assert!(
        Gemv::candidates(tiny, Precision::Fp32)
            .iter()
            .all(|g| g.config().class == GemvClass::SmallM)
    );
}
