//! Rungs 14 and 15, TF32 products on packed operands (`kernels_gpu_host::plan::packed`), on the
//! CPU simulator: every configuration, operands packed by the GPU's packing kernels as
//! `packed::packs_a` decides (rung 15 reads an `a` of aligned rows as it is) and
//! multiplied, rung 14's with each thread's accumulators read through the `wgmma`
//! descriptors and the hardware's 128-byte swizzle, rung 15's through `ldmatrix` and
//! `mma.sync` by their PTX fragment layouts, against the f64 product of the TF32-rounded
//! inputs within the f32 accumulation bound, and against the f64 product of the f32 inputs
//! within the TF32 bound. Shapes: the odd ones, ones with several k-tiles and a partial last one, edges in both directions, and
//! degenerate ones; the simulator checks every launch for shared-memory races and reads of
//! memory no thread wrote. Bad input is a typed error. Rung 17's TF32 configurations
//! (`kernels_gpu_host::plan::half`, on operands packed the same way) are checked alike, and
//! for the same bits on a second run.

#[path = "common/rounded.rs"]
mod rounded;
#[path = "common/shapes.rs"]
mod shapes;

use kernels_gpu::nvptx_device::launch::Limits;
use kernels_gpu::nvptx_device::mma::{tf32_round_bits, tf32_round_even_bits};
use kernels_gpu_host::check::reference::matmul_f64;
use kernels_gpu_host::plan::half::{HalfRun, Input, configs, default_config};
use kernels_gpu_host::plan::packed::{self, PACKED_CONFIGS, PackedConfig, PackedRung};
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::{Error, MatmulShape, Precision};
use rounded::check_rounded_product;

/// Several k-tiles with a partial last one (k = 70: two of 32 and one of 6, padded to 8),
/// rows and columns past one block tile in both directions.
const MULTI: [(usize, usize, usize); 2] = [(130, 70, 260), (65, 96, 129)];

/// Degenerate shapes: a row, a column, `k = 1`.
const DEGENERATE: [(usize, usize, usize); 3] = [(1, 37, 29), (29, 37, 1), (33, 1, 17)];

/// A simulator with a Hopper's limits (227 KiB of shared memory per block).
fn hopper() -> Simulator {
    Simulator {
        limits: Limits::HOPPER,
    }
}

fn check(config: &PackedConfig, shape: (usize, usize, usize)) {
    let round = |x: f32| f32::from_bits(tf32_round_bits(x.to_bits()));
    check_rounded_product(
        shape,
        0x3914,
        Precision::Tf32,
        round,
        config.name,
        |a, b, shape| hopper().matmul_packed(config, a, b, shape),
    );
}

#[test]
fn every_configuration_on_odd_multi_tile_and_degenerate_shapes() {
    shapes::each_config_and_shape(PACKED_CONFIGS, &[&MULTI, &DEGENERATE], check);
}

/// A layout mistake cannot hide behind symmetric data: a product whose every output is a
/// distinct exact integer, compared exactly.
#[test]
fn distinct_integer_products_are_exact() {
    let (m, k, n) = (64, 40, 256);
    let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
    let want: Vec<f32> = matmul_f64(&a, &b, m, k, n)
        .values
        .iter()
        .map(|&x| x as f32)
        .collect();
    let shape = MatmulShape::new(m, k, n).unwrap();
    for config in PACKED_CONFIGS {
        let out = hopper().matmul_packed(config, &a, &b, shape).unwrap();
        assert_eq!(out, want, "{}", config.name);
    }
    for config in configs(Input::Tf32) {
        let run = HalfRun::unsplit(config);
        let out = hopper().matmul_tf32_ws(run, &a, &b, shape).unwrap();
        assert_eq!(out, want, "{}", config.name);
    }
}

/// The products with nothing to compute: zeros of the right length.
#[test]
fn empty_and_k_zero_products_are_zeros() {
    for config in [PackedRung::Wgmma, PackedRung::MmaSync].map(packed::default_config) {
        for (m, k, n) in [(0, 3, 4), (3, 0, 4), (3, 4, 0)] {
            let shape = MatmulShape::new(m, k, n).unwrap();
            let out = hopper()
                .matmul_packed(config, &vec![1.0; m * k], &vec![1.0; k * n], shape)
                .unwrap();
            assert_eq!(out, vec![0.0; m * n], "{} {shape}", config.name);
            let run = HalfRun::unsplit(default_config(Input::Tf32));
            let out = hopper()
                .matmul_tf32_ws(run, &vec![1.0; m * k], &vec![1.0; k * n], shape)
                .unwrap();
            assert_eq!(out, vec![0.0; m * n], "{} {shape}", run.name());
        }
    }
}

/// The default simulator has the shared memory of every GPU since compute capability 8.0,
/// 99 KiB: rung 14's 193 KiB default is a typed launch error there, not a crash, and rung
/// 15's default runs.
#[test]
fn a_launch_past_the_shared_memory_is_a_typed_error() {
    let shape = MatmulShape::new(4, 4, 4).unwrap();
    let any_gpu = Simulator::default();
    let ones = [1.0; 16];
    let run = |rung| any_gpu.matmul_packed(packed::default_config(rung), &ones, &ones, shape);
    let err = run(PackedRung::Wgmma).unwrap_err();
    assert!(matches!(err, Error::Launch(_)), "{err}");
    assert_eq!(run(PackedRung::MmaSync).unwrap(), vec![4.0; 16]);
}

/// Operands of the wrong length are a typed error naming the sizes.
#[test]
fn wrong_operand_lengths_are_a_typed_error() {
    let shape = MatmulShape::new(4, 5, 6).unwrap();
    let err = hopper()
        .matmul_packed(
            packed::default_config(PackedRung::MmaSync),
            &[0.0; 19],
            &[0.0; 30],
            shape,
        )
        .unwrap_err();
    assert!(matches!(err, Error::InputLength { .. }), "{err}");
}

/// Rung 17's TF32 run `run` on `shape` as [`check`] checks the packed rungs (its copies
/// round to nearest with ties to even), and the same bits on a second run.
fn check_ws(run: HalfRun, shape: (usize, usize, usize), seed: u64) {
    let round = |x: f32| f32::from_bits(tf32_round_even_bits(x.to_bits()));
    check_rounded_product(
        shape,
        seed,
        Precision::Tf32,
        round,
        &run.name(),
        |a, b, shape| {
            let first = hopper().matmul_tf32_ws(run, a, b, shape)?;
            let again = hopper().matmul_tf32_ws(run, a, b, shape)?;
            assert!(
                first
                    .iter()
                    .zip(&again)
                    .all(|(x, y)| x.to_bits() == y.to_bits()),
                "{} {shape}: two runs differ",
                run.name()
            );
            Ok(first)
        },
    );
}

/// Every TF32 configuration of rung 17 (the warp-specialized `wgmma.m64nNk8` fed by the
/// tensor-memory accelerator; `b` packed K-major, or read as it lies by the tiles computed
/// transposed) on one tile and a sliver past it each way with k = 70 (three k-tiles of 32,
/// the last partial, k not a multiple of 4: `a` copied and padded; `n` not a multiple of 4:
/// a row-major `b` copied into padded rows) and k = 72 (`a` read as it is, a row-major `b`
/// too), split in two; unsplit on a small shape, and on one of four tiles with `n` even (the
/// odd ones stage their rows in shared memory). The check against the rounded inputs'
/// product fails a run whose copies leave an operand unrounded.
#[test]
fn rung_17_tf32_every_configuration_on_edges_and_splits() {
    for (i, config) in configs(Input::Tf32).enumerate() {
        let (bm, bn) = (config.geometry.bm as usize, config.geometry.bn as usize);
        let seed = 0x1732 + i as u64;
        check_ws(HalfRun { config, splits: 2 }, (bm + 3, 70, bn + 5), seed);
        check_ws(
            HalfRun { config, splits: 2 },
            (bm + 3, 72, bn + 4),
            seed + 100,
        );
        check_ws(HalfRun { config, splits: 1 }, (5, 37, 11), seed);
        // Unsplit with `n` even: fragments stored where they lie (the odd `n` above stage
        // their rows in shared memory), two tiles a block of the simulator's two.
        check_ws(
            HalfRun { config, splits: 1 },
            (bm + 3, 72, bn + 36),
            seed + 200,
        );
    }
}

/// The default TF32 configuration of rung 17, and the first that reads `b` as it lies, on
/// odd shapes: single rows, columns and
/// depths, primes (k not a multiple of the k-tile, nor of 4), depths that are multiples of
/// 4 (`a` read as it is), a depth of three k-tiles split four ways (the last slice
/// empty), depths past one block of `b`'s packing (128) on its 16-byte and its word path,
/// and several tiles a block in the persistent grid.
#[test]
fn rung_17_tf32_odd_shapes() {
    let row_b = configs(Input::Tf32)
        .find(|c| c.row_major_b)
        .expect("a row-major-b row");
    let shapes = [
        (1, 1, 1, 1),
        (1, 37, 29, 1),
        (29, 37, 1, 1),
        (33, 1, 17, 1),
        (131, 67, 257, 1),
        (131, 68, 257, 1),
        (7, 71, 13, 4),
        (7, 96, 13, 4),
        (19, 300, 36, 1),
        (9, 301, 37, 2),
        (257, 33, 521, 1),
    ];
    for config in [default_config(Input::Tf32), row_b] {
        for (i, (m, k, n, splits)) in shapes.into_iter().enumerate() {
            check_ws(HalfRun { config, splits }, (m, k, n), 0x1733 + i as u64);
        }
    }
}

/// Rung 17's TF32 copies round each operand to the nearest TF32 with ties to even, exactly:
/// `a` times the identity and the identity times `b` give the rounded inputs back, for the
/// default configuration (`b` packed) and a swapped one (`b` as it lies), `k` a multiple of
/// 4 (the operands as they are) and not (copied into padded rows first).
#[test]
fn rung_17_tf32_copies_round_ties_to_even() {
    let row_b = configs(Input::Tf32)
        .find(|c| c.row_major_b)
        .expect("a row-major-b row");
    let low = [0x1000u32, 0x0fff, 0x1001, 0x0000, 0x1fff];
    for k in [36usize, 37] {
        let values: Vec<f32> = (0..(k * k) as u32)
            .map(|i| {
                let kept = 0x3f80_0000 | (i.wrapping_mul(0x9e37_79b1) & 0x007f_e000);
                let sign = if i % 3 == 0 { 0x8000_0000 } else { 0 };
                f32::from_bits(sign | kept | low[i as usize % low.len()])
            })
            .collect();
        let eye: Vec<f32> = (0..k * k)
            .map(|e| if e / k == e % k { 1.0 } else { 0.0 })
            .collect();
        let want: Vec<u32> = values
            .iter()
            .map(|v| tf32_round_even_bits(v.to_bits()))
            .collect();
        let shape = MatmulShape::new(k, k, k).unwrap();
        for config in [default_config(Input::Tf32), row_b] {
            let run = HalfRun::unsplit(config);
            for (operand, a, b) in [("a", &values, &eye), ("b", &eye, &values)] {
                let out = hopper().matmul_tf32_ws(run, a, b, shape).unwrap();
                let got: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
                assert_eq!(got, want, "{} k = {k}: `{operand}`", config.name);
            }
        }
    }
}

/// Rung 17's TF32 runs take f32 operands only through their own path: a 16-bit
/// configuration is a typed error there, as a wrong operand length is.
#[test]
fn rung_17_tf32_refuses_a_mismatch_and_bad_lengths() {
    let shape = MatmulShape::new(8, 8, 8).unwrap();
    let x = vec![1.0f32; 64];
    let bf16 = HalfRun::unsplit(default_config(Input::Bf16));
    assert!(matches!(
        hopper().matmul_tf32_ws(bf16, &x, &x, shape),
        Err(Error::ElementMismatch { .. })
    ));
    let run = HalfRun::unsplit(default_config(Input::Tf32));
    assert!(matches!(
        hopper().matmul_tf32_ws(run, &x[..63], &x, shape),
        Err(Error::InputLength { .. })
    ));
}
