//! Rung 13, the BF16 GEMM (`kernels_gpu_host::plan::bf16`), on the CPU simulator: every
//! configuration against the f64 product of its BF16 inputs, within the f32 accumulation
//! bound, on the odd shapes (scalar staging), on shapes whose interior blocks take
//! the `cp.async` path beside edge blocks (with a partial last k-tile), and on degenerate
//! ones; the simulator checks every launch for shared-memory races, uninitialised reads and
//! misaligned 16-byte accesses, and `ldmatrix`'s lanes for whole warps on one array. Bad
//! input is a typed error.

#[path = "common/rounded.rs"]
mod rounded;
#[path = "common/shapes.rs"]
mod shapes;

use kernels_gpu_host::plan::bf16::{self, BF16_CONFIGS, Bf16Config};
use rounded::check_rounded_product;

use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::{Error, MatmulShape, Precision};

/// `k` and `n` multiples of 8: interior 128 × 128 (and 64 × 128) blocks copy by `cp.async`,
/// the last k-tile is partial (40 = 32 + 8; 72 = 64 + 8), edge blocks stage checked.
const ASYNC: [(usize, usize, usize); 2] = [(136, 40, 264), (128, 72, 128)];

/// Degenerate shapes: a row, a column, `k = 1`, and one element.
const DEGENERATE: [(usize, usize, usize); 4] = [(1, 37, 29), (29, 37, 1), (33, 1, 17), (1, 1, 1)];

/// Runs `config` on `shape` and checks it: within the f32 accumulation bound of the f64
/// product of the BF16 inputs (the products are exact), and within the BF16 bound of the f64
/// product of the f32 values they were rounded from.
fn check(config: &Bf16Config, shape: (usize, usize, usize)) {
    let round = |x| bf16::value(bf16::round(x));
    check_rounded_product(
        shape,
        0xbf16,
        Precision::Bf16,
        round,
        config.name,
        |a, b, shape| {
            let (a16, b16) = (bf16::round_all(a), bf16::round_all(b));
            Simulator::default().gemm_bf16(config, &a16, &b16, shape)
        },
    );
}

#[test]
fn every_configuration_on_odd_async_and_degenerate_shapes() {
    shapes::each_config_and_shape(BF16_CONFIGS, &[&ASYNC, &DEGENERATE], check);
}

/// The products with nothing to compute: zeros of the right length, no launch.
#[test]
fn empty_and_k_zero_products_are_zeros() {
    let config = bf16::default_config();
    for (m, k, n) in [(0, 3, 4), (3, 0, 4), (3, 4, 0)] {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let out = Simulator::default()
            .gemm_bf16(config, &vec![0x3f80; m * k], &vec![0x3f80; k * n], shape)
            .unwrap();
        assert_eq!(out, vec![0.0; m * n], "{shape}");
    }
}

/// Operands of the wrong length are a typed error naming the sizes, not a panic or a read
/// past the end.
#[test]
fn wrong_operand_lengths_are_a_typed_error() {
    let shape = MatmulShape::new(4, 5, 6).unwrap();
    let err = Simulator::default()
        .gemm_bf16(bf16::default_config(), &[0; 19], &[0; 30], shape)
        .unwrap_err();
    assert!(matches!(err, Error::InputLength { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("20") && text.contains("19"), "{text}");
}

/// The table: each configuration's shared memory is its stages of both tiles in BF16, within
/// the simulator's default limits, and one entry per name.
#[test]
fn catalogue_is_consistent() {
    for c in BF16_CONFIGS {
        let g = c.geometry;
        assert_eq!(g.static_shared_bytes, 0, "{}", c.name);
        assert_eq!(
            g.dynamic_shared_bytes % (2 * g.bk * (g.bm + g.bn)),
            0,
            "{}",
            c.name
        );
        assert!(
            g.shared_bytes() <= Simulator::default().limits.max_shared_bytes_per_block,
            "{}",
            c.name
        );
        assert_eq!(c.spec.entry.replace('_', "-"), c.name);
    }
}

/// Rung 17 (16-bit matrices on Hopper's `wgmma`, fed by the tensor-memory accelerator,
/// warp-specialized) in the simulator, which needs a Hopper's shared memory.
fn hopper() -> Simulator {
    Simulator {
        limits: kernels_gpu_host::launch::Limits::HOPPER,
    }
}

/// Every 16-bit configuration of rung 17, bf16 and f16, on shapes that take its edges (rows and
/// columns past a tile, `k` past a k-tile and not a multiple of 8, `n` not a multiple of
/// 8: the padded copies), split and unsplit: within the f32 accumulation bound of the f64
/// product of the rounded inputs, and the same bits on a second run. The producer, the
/// consumers and the ring of barriers run with the simulator's semantics: a protocol that
/// deadlocks, or reads a slot before it lands, fails here.
#[test]
fn rung_17_every_configuration_on_edges_and_splits() {
    use kernels_gpu_host::plan::half::{HalfFloat, HalfRun, Input, WS_CONFIGS};
    fn run<T: HalfFloat>(run: HalfRun, shape: (usize, usize, usize), seed: u64) {
        check_rounded_product(
            shape,
            seed,
            Precision::Bf16,
            |x| T::from_f32(x).to_f32(),
            &run.name(),
            |a, b, shape| {
                let (a16, b16) = (
                    kernels_gpu_host::plan::half::round_all::<T>(a),
                    kernels_gpu_host::plan::half::round_all::<T>(b),
                );
                let first = hopper().gemm_half(run, &a16, &b16, shape)?;
                let again = hopper().gemm_half(run, &a16, &b16, shape)?;
                assert!(
                    first
                        .iter()
                        .zip(&again)
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{}: two runs differ",
                    run.name()
                );
                Ok(first)
            },
        );
    }
    for (i, config) in WS_CONFIGS.iter().enumerate() {
        let (bm, bn) = (config.geometry.bm as usize, config.geometry.bn as usize);
        // One tile and a sliver past it each way; k = 72 (two k-tiles, the second partial)
        // or 37 (padded to 40); n not a multiple of 8 where the tile allows.
        // And unsplit with `n` even (fragments stored where they lie; the odd `n` stage
        // their rows in shared memory): four tiles, two a block of the simulator's two.
        let shapes = [(bm + 3, 72, bn + 5), (5, 37, 11), (bm + 3, 72, bn + 36)];
        for (j, &shape) in shapes.iter().enumerate() {
            let splits = if j == 0 { 2 } else { 1 };
            let r = HalfRun { config, splits };
            let seed = 0x17 + 10 * i as u64 + j as u64;
            match config.input {
                Input::Bf16 => run::<half::bf16>(r, shape, seed),
                Input::F16 => run::<half::f16>(r, shape, seed),
                // On f32 operands: `sim_packed`'s rung-17 tests.
                Input::Tf32 => {}
            }
        }
    }
}

/// Rung 17's 16-bit outputs (`gemm_half_to_half`): each output the f32 product rounded to
/// the element type (to nearest even), bit for bit, for `bf16` and `f16`, on a shape whose
/// rows are not whole 8-byte runs of the outputs (`n` odd) and one whose are.
#[test]
fn rung_17_outputs_in_16_bits_are_the_f32_products_rounded() {
    use kernels_gpu_host::plan::half::{HalfFloat, HalfRun, Input, default_config, round_all};
    fn run<T: HalfFloat>(input: Input) {
        let run = HalfRun::unsplit(default_config(input));
        for (m, k, n) in [(37, 40, 133), (20, 24, 64)] {
            let shape = MatmulShape::new(m, k, n).unwrap();
            let values = |len: usize, seed: usize| -> Vec<f32> {
                (0..len)
                    .map(|i| ((i * 37 + seed) % 101) as f32 / 13.0 - 3.7)
                    .collect()
            };
            let (a, b) = (
                round_all::<T>(&values(m * k, 1)),
                round_all::<T>(&values(k * n, 2)),
            );
            let wide = hopper().gemm_half(run, &a, &b, shape).unwrap();
            let narrow = hopper().gemm_half_to_half(run, &a, &b, shape).unwrap();
            assert_eq!(narrow.len(), m * n);
            for (i, (x, y)) in wide.iter().zip(&narrow).enumerate() {
                let want = T::from_f32(*x);
                assert_eq!(
                    bytemuck::bytes_of(y),
                    bytemuck::bytes_of(&want),
                    "{} {shape}: output {i} of {x}",
                    T::NAME
                );
            }
        }
    }
    run::<half::bf16>(Input::Bf16);
    run::<half::f16>(Input::F16);
}

/// A split of the depth that is not a power of two (a `HalfRun` may ask for any), and one
/// with more slices than the depth has k-tiles of its share (the last slices empty, their
/// planes zeros): within the bound of the product, as unsplit.
#[test]
fn rung_17_odd_and_empty_slices() {
    use kernels_gpu_host::plan::half::{HalfRun, Input, WS_CONFIGS};
    let config = WS_CONFIGS
        .iter()
        .find(|c| c.input == Input::Bf16 && c.name == "gemm-bf16-ws-128x64")
        .expect("the 128 × 64 BF16 configuration");
    // k = 200: four k-tiles of 64; five slices of one k-tile each, the fifth empty.
    let shape = (131, 200, 70);
    for splits in [5, 3] {
        let run = HalfRun { config, splits };
        check_rounded_product(
            shape,
            0x5117 + u64::from(splits),
            Precision::Bf16,
            |x| half::bf16::from_f32(x).to_f32(),
            &run.name(),
            |a, b, shape| {
                let (a16, b16) = (
                    kernels_gpu_host::plan::half::round_all::<half::bf16>(a),
                    kernels_gpu_host::plan::half::round_all::<half::bf16>(b),
                );
                hopper().gemm_half(run, &a16, &b16, shape)
            },
        );
    }
}

/// The simulator catches a rung-17 product given the other element type, and refuses a
/// launch beyond the shared memory of a GPU that is not a Hopper.
#[test]
fn rung_17_refuses_a_mismatch_and_a_small_device() {
    use kernels_gpu_host::plan::half::{HalfRun, Input, default_config};
    let shape = MatmulShape::new(8, 8, 8).unwrap();
    let run = HalfRun::unsplit(default_config(Input::F16));
    let x = vec![half::bf16::ONE; 64];
    assert!(matches!(
        hopper().gemm_half(run, &x, &x, shape),
        Err(Error::ElementMismatch { .. })
    ));
    let run = HalfRun::unsplit(default_config(Input::Bf16));
    assert!(matches!(
        Simulator::default().gemm_half(run, &x, &x, shape),
        Err(Error::Launch(_))
    ));
}
