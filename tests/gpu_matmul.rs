//! GPU tests: every matmul kernel × tile width against the f64 CPU reference.
//!
//! Uses a libtest-compatible harness so that, without a GPU, every test is reported as
//! *ignored* with the reason printed — never as passed.

#[path = "common/fma_product.rs"]
mod fma_product;
#[path = "common/gpu_harness.rs"]
mod harness;
#[path = "common/shapes.rs"]
mod shapes;

use cudarc::driver::CudaSlice;
use fma_product::{first_difference, same_bits};
use harness::Test;
use kernels_gpu_host::backend::Backend;
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::check::reference;
use kernels_gpu_host::gpu::Gpu;
use kernels_gpu_host::gpu::autotune::{self, Tuned};
use kernels_gpu_host::plan::budget::TimeBudget;
use kernels_gpu_host::plan::half::Input;
use kernels_gpu_host::plan::packed::{PACKED_CONFIGS, PackedRung};
use kernels_gpu_host::plan::repack::TiledRun;
use kernels_gpu_host::plan::row_split::RowSplit;
use kernels_gpu_host::plan::split_k::{SplitK, cpu_split_k};
use kernels_gpu_host::plan::stream_k::{StreamRun, cpu_stream_k};
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::{Error, MatmulKernel, MatmulShape, Precision, SgemmKernel, TileWidth};
use libtest_mimic::{Failed, Trial};
use std::sync::Arc;
use std::time::Duration;

/// The odd shapes (m, k, n): tiny, none a multiple of a tile, k = 1, and larger.
/// [`shapes::ODD`] and one larger than a tile in every dimension.
const SHAPES: [(usize, usize, usize); 5] = {
    let [a, b, c, d] = shapes::ODD;
    [a, b, c, d, (257, 129, 511)]
};

/// The tensor-core rungs' interior blocks on the `cp.async` path beside edge blocks, with a
/// partial last k-tile.
const TENSOR_TILES: [(usize, usize, usize); 2] = [(136, 40, 264), (260, 264, 520)];

/// 19 k-tiles of 16 (past the 3-stage ring several times), rows of `a` and `b` not 16-byte
/// aligned, partial tiles in every dimension.
const DEEP_CHECKED: (usize, usize, usize) = (70, 301, 66);

/// Whole tiles of every multistage configuration (the lcm of their 32- to 128-wide tiles,
/// 96 among them), five k-tiles of 16 deep: every block on rung 10's exact loop.
const WHOLE_TILES: (usize, usize, usize) = (384, 80, 384);

/// Degenerate shapes: a row, a column, `k = 1`.
const DEGENERATE: [(usize, usize, usize); 3] = [(1, 37, 29), (29, 37, 1), (33, 1, 17)];

/// A product's operands `a` and `b`, on the host or on the GPU.
type Pair<T> = (T, T);

/// A product on the GPU: its shape, operands on the host and uploaded, and its output.
type Inputs = (
    MatmulShape,
    Pair<Vec<f32>>,
    Pair<CudaSlice<f32>>,
    CudaSlice<f32>,
);

/// The inputs of a product on `gpu`: operands uniform in [0, 1) from `seed`, and an output of
/// NaNs.
fn inputs(gpu: &Gpu, (m, k, n): (usize, usize, usize), seed: u64) -> Result<Inputs, Failed> {
    let (shape, (a, b)) = host_operands((m, k, n), seed)?;
    let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
    let out = gpu.upload(&vec![f32::NAN; m * n])?;
    Ok((shape, (a, b), (da, db), out))
}

/// A product's shape and its operands, uniform in [0, 1) from `seed`.
fn host_operands(
    (m, k, n): (usize, usize, usize), seed: u64,
) -> Result<(MatmulShape, Pair<Vec<f32>>), Failed> {
    let mut rng = Rng::new(seed);
    let operands = (rng.uniform(m * k), rng.uniform(k * n));
    Ok((MatmulShape::new(m, k, n)?, operands))
}

/// Runs `launch` twice into `out`, and fails naming `what` unless each run gives `exact`'s
/// bits (its simulator twin's).
fn runs_as_simulated(
    gpu: &Gpu, out: &mut CudaSlice<f32>, exact: &[f32], what: &str,
    launch: impl Fn(&Gpu, &mut CudaSlice<f32>) -> Result<(), Error>,
) -> Result<(), Failed> {
    for run in 0..2 {
        launch(gpu, out)?;
        if !same_bits(&gpu.download(out)?, exact) {
            return Err(format!("{what}: run {run} differs from the simulator").into());
        }
    }
    Ok(())
}

/// Runs `launch` twice into an output of NaNs, and fails naming `what` unless the first
/// result is within the f32 accumulation bound of `exact` (the f64 product of the inputs as
/// the kernel reads them) and the second has the same bits.
fn twice_within_f32_bound(
    g: &Gpu, what: &str, (m, k, n): (usize, usize, usize), exact: &reference::Reference,
    mut launch: impl FnMut(&mut CudaSlice<f32>) -> Result<(), Error>,
) -> Result<(), Failed> {
    let mut out = g.nans(m * n)?;
    let mut run = || -> Result<Vec<f32>, Failed> {
        g.fill_nan(&mut out)?;
        launch(&mut out)?;
        Ok(g.download(&out)?)
    };
    let (first, second) = (run()?, run()?);
    let acc = reference::compare(&first, exact);
    if first.len() != m * n || !acc.within_f32_bound(k) {
        return Err(format!("{what}: {acc:?}").into());
    }
    if !same_bits(&first, &second) {
        return Err(format!("{what}: two runs differ").into());
    }
    Ok(())
}

fn check(
    gpu: &Gpu, kernel: MatmulKernel, tw: TileWidth, (m, k, n): (usize, usize, usize), seed: u64,
) -> Result<(), Failed> {
    let shape = MatmulShape::new(m, k, n)?;
    let mut rng = Rng::new(seed);
    // Signed inputs, so cancellation is exercised too.
    let (a, b) = (rng.signed(m * k), rng.signed(k * n));
    let out = gpu.matmul(kernel, tw, &a, &b, shape)?;
    let acc = reference::compare(&out, &reference::matmul_f64(&a, &b, m, k, n));
    // Each kernel against the bound of its own precision (TF32: inputs rounded to a 10-bit
    // mantissa, f32 accumulation; `reference::error_bound`).
    if out.len() != m * n || !acc.within_bound(k, kernel.precision()) {
        return Err(format!("{kernel} tw{tw} {m}×{k}×{n}: {acc:?}").into());
    }
    Ok(())
}

fn gpu_tests(gpu: Option<Arc<Gpu>>) -> Vec<Trial> {
    let mut trials = vec![];
    let mut add = |name: String, f: Test| trials.push(harness::trial(&gpu, name, f));
    for kernel in MatmulKernel::ALL {
        for &tw in kernel.tile_widths() {
            for (i, &shape) in SHAPES.iter().enumerate() {
                let (m, k, n) = shape;
                add(
                    format!("gpu::{}::tw{}::{m}x{k}x{n}", kernel.name(), tw.get()),
                    Box::new(move |g| check(g, kernel, tw, shape, 1000 + i as u64)),
                );
            }
        }
    }
    // Rung 10's checked loop on a deeper product with rows of `a` and `b` not 16-byte
    // aligned: `a` copied by `cp.async` on the small tiles (`multistage::copies_a`), loaded
    // into registers one word at a time on the others; and its exact loop on whole tiles.
    for kernel in MatmulKernel::ALL {
        if kernel.name().contains("-multistage-") {
            for (shape, seed) in [(DEEP_CHECKED, 1100), (WHOLE_TILES, 1101)] {
                let (m, k, n) = shape;
                add(
                    format!("gpu::{}::tw16::{m}x{k}x{n}", kernel.name()),
                    Box::new(move |g| check(g, kernel, TileWidth::Tw16, shape, seed)),
                );
            }
        }
    }
    add(
        "gpu::zero_sized_dimensions".into(),
        Box::new(|g| {
            for kernel in MatmulKernel::ALL {
                let empty = g.matmul(
                    kernel,
                    TileWidth::Tw16,
                    &[],
                    &[0.0; 15],
                    MatmulShape::new(0, 5, 3)?,
                )?;
                let zeros = g.matmul(
                    kernel,
                    TileWidth::Tw16,
                    &[],
                    &[],
                    MatmulShape::new(4, 0, 3)?,
                )?;
                if !empty.is_empty() || zeros != vec![0.0; 12] {
                    return Err(format!("{kernel}: {empty:?} {zeros:?}").into());
                }
            }
            Ok(())
        }),
    );
    add(
        "gpu::sgemm_kernels_agree_bitwise_with_naive".into(),
        Box::new(|g| {
            // Interior 128 × 128 blocks on the 16-byte path beside checked edge blocks: every
            // SGEMM configuration accumulates fma in k order from zero, as the naive kernel
            // does. (The autotuned choice may be a split-k run, whose bits differ: see
            // `autotune_times_every_candidate` and the split-k tests.) Then `k` and `n` two
            // past a multiple of 4: rows 8- but not 16-byte aligned (the multistage rung's
            // 8-byte loads and copies).
            for dims in [(260, 132, 264), (260, 134, 266)] {
                let (shape, (a, b)) = host_operands(dims, 11)?;
                let naive = g.matmul(MatmulKernel::Naive, TileWidth::Tw16, &a, &b, shape)?;
                // (The TF32 rung rounds its inputs: it is checked against its bound instead.)
                for kernel in SgemmKernel::ALL
                    .into_iter()
                    .filter(|&k| k.precision() == Precision::Fp32 && k != SgemmKernel::Autotuned)
                {
                    let out =
                        g.matmul(MatmulKernel::Sgemm(kernel), TileWidth::Tw16, &a, &b, shape)?;
                    if let Some(i) = first_difference(&out, &naive) {
                        return Err(format!(
                            "{kernel} on {shape}: element {i} = {} vs naive {}",
                            out[i], naive[i]
                        )
                        .into());
                    }
                }
            }
            Ok(())
        }),
    );
    add(
        "gpu::autotune_times_every_candidate".into(),
        Box::new(|g| {
            let shape = MatmulShape::new(512, 256, 384)?;
            let mut rng = Rng::new(12);
            let (da, db) = (
                g.upload(&rng.uniform(512 * 256))?,
                g.upload(&rng.uniform(256 * 384))?,
            );
            let mut out = g.zeros(512 * 384)?;
            let (best, choice) = autotune::tune(g, &da, &db, &mut out, shape, Precision::Fp32)?;
            let all_ran = Tuned::candidates(shape, Precision::Fp32).iter().all(|k| {
                choice
                    .candidates_ms
                    .get(&k.name())
                    .is_some_and(|&ms| ms > 0.0)
            });
            let fastest = choice.candidates_ms.values().all(|&ms| ms >= choice.ms);
            if !all_ran || !fastest || choice.kernel() != Some(best) {
                return Err(format!("{best}: {choice:?}").into());
            }
            // The autotuned dispatch runs the candidate it chose (timed again: the choice
            // may differ from `best`) and gets its bits.
            let auto = MatmulKernel::Sgemm(SgemmKernel::Autotuned);
            g.matmul_device(auto, TileWidth::Tw16, &da, &db, &mut out, shape)?;
            let tuned = g.download(&out)?;
            let best = autotune::choose(g, &da, &db, &mut out, shape, Precision::Fp32)?;
            best.run(g, &da, &db, &mut out, shape)?;
            if tuned != g.download(&out)? {
                return Err("autotuned output differs from the tuned kernel's".into());
            }
            Ok(())
        }),
    );
    for (m, k, n) in [
        (5, 97, 7),
        (70, 160, 66),
        (257, 1029, 131),
        (64, 4096, 256),
        (9, 1, 4),
    ] {
        add(
            format!("gpu::split_k_and_serial_split_k_are_their_cpu_twin::{m}x{k}x{n}"),
            Box::new(move |g| {
                let (shape, (a, b), (da, db), mut out) = inputs(g, (m, k, n), 31)?;
                for s in SplitK::candidates() {
                    g.matmul_split_k_device(s, &da, &db, &mut out, shape)?;
                    let first = g.download(&out)?;
                    g.matmul_split_k_device(s, &da, &db, &mut out, shape)?;
                    let second = g.download(&out)?;
                    let exact = cpu_split_k(s, &a, &b, shape);
                    if !same_bits(&first, &exact) || !same_bits(&second, &first) {
                        return Err(format!(
                            "{s} {shape}: differs from its CPU twin or from run to run"
                        )
                        .into());
                    }
                    if s.serial_spec().is_none() {
                        continue;
                    }
                    // Serial split-k: the same bits in one launch, again on a second launch
                    // (which finds the flags the first one put back).
                    for run in ["first", "second"] {
                        g.fill_nan(&mut out)?;
                        g.matmul_serial_split_k_device(s, &da, &db, &mut out, shape)?;
                        if !same_bits(&g.download(&out)?, &exact) {
                            let name = s.serial_name();
                            return Err(format!("{name} {shape}: {run} run differs").into());
                        }
                    }
                }
                Ok(())
            }),
        );
    }
    // Hundreds of slices (a one-tile output under a long k fills a wave with them): every
    // configuration's run, as many slices as the wave-filling candidates ask for and at
    // most SplitK::MAX_SPLITS, is its CPU twin, run to run.
    add(
        "gpu::hundreds_of_slices_are_their_cpu_twin::33x40009x37".to_owned(),
        Box::new(move |g| {
            let (shape, (a, b), (da, db), mut out) = inputs(g, (33, 40009, 37), 41)?;
            for config in SplitK::configs() {
                for splits in [264, 528, SplitK::MAX_SPLITS] {
                    let s = SplitK { config, splits };
                    g.matmul_split_k_device(s, &da, &db, &mut out, shape)?;
                    let first = g.download(&out)?;
                    g.matmul_split_k_device(s, &da, &db, &mut out, shape)?;
                    let exact = cpu_split_k(s, &a, &b, shape);
                    if !same_bits(&first, &exact) || !same_bits(&g.download(&out)?, &first) {
                        let what = format!("{s} {shape}");
                        return Err(
                            format!("{what}: differs from its CPU twin or run to run").into()
                        );
                    }
                }
            }
            Ok(())
        }),
    );
    // Stream-k: every configuration with a stream-k entry, over worker counts from one to
    // more than the k-tiles (on padded copies where the shape is not whole tiles, and on
    // 256 × 512 × 384 without), is its CPU twin, run to run (the second run finds the flags
    // the first put back); and a run on two parts of the rows (a multi-GPU product's) gives
    // the whole run's bits.
    for (m, k, n) in [
        (5, 97, 7),
        (257, 1029, 131),
        (600, 515, 397),
        (1, 4096, 33),
        (256, 512, 384),
    ] {
        add(
            format!("gpu::stream_k_is_its_cpu_twin::{m}x{k}x{n}"),
            Box::new(move |g| {
                let (shape, (a, b), (da, db), mut out) = inputs(g, (m, k, n), 43)?;
                for config in StreamRun::configs() {
                    let runs =
                        [1, 7, 132, 264, StreamRun::MAX_WORKERS].map(|w| StreamRun::new(config, w));
                    for s in runs {
                        let exact = cpu_stream_k(s, &a, &b, shape);
                        for run in ["first", "second"] {
                            g.fill_nan(&mut out)?;
                            g.matmul_stream_k_device(s, &da, &db, &mut out, shape)?;
                            if !same_bits(&g.download(&out)?, &exact) {
                                return Err(format!("{s} {shape}: {run} run differs").into());
                            }
                        }
                    }
                    // Rows split after the first block rows: each part on its own buffers.
                    let bm = kernels_gpu_host::kernels_gpu::sgemm::CONFIGS[config]
                        .geometry
                        .bm;
                    let cut = (bm as usize).min(m);
                    let s = StreamRun::new(config, 264);
                    let whole = cpu_stream_k(s, &a, &b, shape);
                    for rows in [0..cut, cut..m].into_iter().filter(|r| !r.is_empty()) {
                        let part = MatmulShape::new(rows.len(), k, n)?;
                        let pa = g.upload(&a[rows.start * k..rows.end * k])?;
                        let mut po = g.nans(rows.len() * n)?;
                        let run = s.for_rows(rows.start as u32..rows.end as u32, m as u32);
                        g.matmul_stream_k_device(run, &pa, &db, &mut po, part)?;
                        if !same_bits(&g.download(&po)?, &whole[rows.start * n..rows.end * n]) {
                            return Err(format!("{run} {shape} rows {rows:?} differ").into());
                        }
                    }
                }
                Ok(())
            }),
        );
    }
    // Row splits: the top part's configuration on its rows, split-k on the rest, each with
    // its simulator twin's bits, the same every run; odd everything, and a bottom part of
    // one row.
    for ((m, k, n), rows) in [((300, 97, 131), 256), ((129, 1029, 67), 128)] {
        add(
            format!("gpu::row_split_is_its_simulator_twin::{m}x{k}x{n}"),
            Box::new(move |g| {
                let (shape, (a, b), (da, db), mut out) = inputs(g, (m, k, n), 37)?;
                let bottom = SplitK::candidates().find(|s| s.splits == 8).unwrap();
                let split = RowSplit {
                    top: SgemmKernel::DEFAULT,
                    rows,
                    bottom,
                };
                let exact = Simulator::default().matmul_rows(split, &a, &b, shape)?;
                let what = format!("{split} {shape}");
                runs_as_simulated(g, &mut out, &exact, &what, |g, out| {
                    g.matmul_rows_device(split, &da, &db, out, shape)
                })
            }),
        );
    }
    // Repacked products: the simulator's bits (those of the configuration on the operands
    // as they are), every run; k odd, n odd, both, and aligned rows with a depth that is not
    // whole tiles. The default is copied both ways; every configuration with a strided entry
    // copies only the operands that need it and stores the output in place.
    let strided: Vec<SgemmKernel> = kernels_gpu::sgemm::CONFIGS
        .iter()
        .filter(|c| c.strided.is_some())
        .map(|c| SgemmKernel::from_entry(c.spec.entry).unwrap())
        .collect();
    for (m, k, n) in [
        (300, 97, 132),
        (129, 1028, 67),
        (260, 36, 264),
        (257, 1029, 131),
    ] {
        let strided = strided.clone();
        add(
            format!("gpu::repacked_product_is_its_simulator_twin::{m}x{k}x{n}"),
            Box::new(move |g| {
                let (shape, (a, b), (da, db), mut out) = inputs(g, (m, k, n), 41)?;
                // The largest shape on one strided configuration only: the simulator's time.
                let mut kernels = vec![SgemmKernel::DEFAULT];
                if shape.macs() < 1 << 24 {
                    kernels.extend(&strided);
                } else {
                    kernels
                        .push(SgemmKernel::from_entry("sgemm_multistage_64x64x16_w32x32").unwrap());
                }
                for kernel in kernels {
                    let exact = Simulator::default().matmul_repacked(kernel, &a, &b, shape)?;
                    let what = format!("{kernel} repacked {shape}");
                    runs_as_simulated(g, &mut out, &exact, &what, |g, out| {
                        g.matmul_repacked_device(kernel, &da, &db, out, shape)
                    })?;
                }
                Ok(())
            }),
        );
    }
    // Runs on operands padded to whole tiles: a row edge (a copied), a depth that is not
    // whole tiles (both copied), a narrow odd output under a long k (b copied), each run's
    // bits those of its simulator twin.
    for (m, k, n) in [(130, 128, 512), (150, 513, 250), (300, 2048, 67)] {
        add(
            format!("gpu::tiled_run_is_its_simulator_twin::{m}x{k}x{n}"),
            Box::new(move |g| {
                let (shape, (a, b), (da, db), mut out) = inputs(g, (m, k, n), 43)?;
                let tile = |entry| SgemmKernel::from_entry(entry).unwrap();
                let mut runs = vec![];
                for kernel in [
                    tile("sgemm_multistage_64x64x16_w32x32"),
                    tile("sgemm_multistage_128x64x16_w64x32"),
                ] {
                    let SgemmKernel::Config(config) = kernel else {
                        unreachable!("from_entry names a configuration")
                    };
                    runs.push(TiledRun::Config(kernel));
                    runs.push(TiledRun::Split(SplitK { config, splits: 4 }));
                }
                if runs
                    .iter()
                    .all(|r| r.tiles(shape).is_ok_and(|t| t.is_none()))
                {
                    return Err(format!("{shape}: no run pads it").into());
                }
                for run in runs {
                    let exact = Simulator::default().matmul_tiles(run, &a, &b, shape)?;
                    let what = format!("{} {shape}", run.name());
                    runs_as_simulated(g, &mut out, &exact, &what, |g, out| {
                        g.matmul_tiles_device(run, &da, &db, out, shape)
                    })?;
                }
                Ok(())
            }),
        );
    }
    for precision in [Precision::Tf32, Precision::Bf16] {
        add(
            format!(
                "gpu::{}_rung_rounds_like_its_conversion_and_tunes",
                precision.name()
            ),
            Box::new(move |g| {
                // Interior 128 × 128 blocks on the cp.async path with a zero-filled partial
                // last k-tile (k = 260), beside edge blocks: within the f32 accumulation bound
                // of the product of the inputs rounded as the precision's conversion does
                // (`cvt.rna.tf32.f32`, `cvt.rn.bf16x2.f32`), for every configuration of the
                // precision and its autotuned choice (which times only its candidates; where
                // that is rung 17's TF32, whose copies round ties to even, within the bound of
                // either rounding: the two differ only on ties).
                use kernels_gpu::nvptx_device::mma::{
                    bf16_round_bits, bf16_value, tf32_round_bits, tf32_round_even_bits,
                };
                let (m, k, n) = (260, 260, 264);
                let shape = MatmulShape::new(m, k, n)?;
                let mut rng = Rng::new(13);
                let (a, b) = (rng.signed(m * k), rng.signed(k * n));
                let round = |x: &[f32]| -> Vec<f32> {
                    x.iter()
                        .map(|&v| match precision {
                            Precision::Bf16 => bf16_value(bf16_round_bits(v.to_bits())),
                            _ => f32::from_bits(tf32_round_bits(v.to_bits())),
                        })
                        .collect()
                };
                let rounded = reference::matmul_f64(&round(&a), &round(&b), m, k, n);
                let even = |x: &[f32]| -> Vec<f32> {
                    x.iter()
                        .map(|v| f32::from_bits(tf32_round_even_bits(v.to_bits())))
                        .collect()
                };
                let rounded_even = reference::matmul_f64(&even(&a), &even(&b), m, k, n);
                let exact = reference::matmul_f64(&a, &b, m, k, n);
                let tuned = SgemmKernel::tuned(precision);
                for &kernel in tuned.iter().chain([&SgemmKernel::autotuned(precision)?]) {
                    let out =
                        g.matmul(MatmulKernel::Sgemm(kernel), TileWidth::Tw16, &a, &b, shape)?;
                    let mut vs_rounded = reference::compare(&out, &rounded);
                    let autotuned_tf32 = kernel.is_autotuned() && precision == Precision::Tf32;
                    if autotuned_tf32 && !vs_rounded.within_f32_bound(k) {
                        vs_rounded = reference::compare(&out, &rounded_even);
                    }
                    let vs_exact = reference::compare(&out, &exact);
                    if !vs_rounded.within_f32_bound(k) || !vs_exact.within_bound(k, precision) {
                        return Err(format!("{kernel}: {vs_rounded:?} / {vs_exact:?}").into());
                    }
                }
                let (da, db) = (g.upload(&a)?, g.upload(&b)?);
                let mut out = g.zeros(m * n)?;
                let (best, choice) = autotune::tune(g, &da, &db, &mut out, shape, precision)?;
                // Every candidate timed is one of the precision's: its configurations
                // (all of them timed), rungs 14 and 15 on packed operands (TF32; rung 14 on
                // a Hopper only) and rung 17 (TF32, and BF16 from f32 operands; a Hopper
                // only), and the choice is one of them.
                let hopper = g.info()?.compute_capability == (9, 0);
                let of_precision = |t: &Tuned| match *t {
                    Tuned::Config(k) => tuned.contains(&k),
                    Tuned::Packed(i) => {
                        let rung = PackedRung::of(PACKED_CONFIGS[i]);
                        precision == Precision::Tf32 && (hopper || rung == PackedRung::MmaSync)
                    }
                    Tuned::Half(r) => {
                        let input = match precision {
                            Precision::Tf32 => Input::Tf32,
                            _ => Input::Bf16,
                        };
                        hopper && r.config.input == input
                    }
                    Tuned::Gemv(g) => g.config().precision == precision,
                    _ => false,
                };
                let timed: Vec<Option<Tuned>> = choice
                    .candidates_ms
                    .keys()
                    .map(|name| Tuned::from_name(name))
                    .collect();
                let all_configs = tuned
                    .iter()
                    .all(|k| choice.candidates_ms.contains_key(k.name()));
                if !of_precision(&best)
                    || !all_configs
                    || !timed.iter().all(|t| t.as_ref().is_some_and(of_precision))
                {
                    return Err(format!("{best}: {choice:?}").into());
                }
                Ok(())
            }),
        );
    }
    for config in kernels_gpu_host::plan::bf16::BF16_CONFIGS {
        add(
            format!("gpu::bf16_gemm::{}", config.name),
            Box::new(move |g| {
                // Rung 13 on BF16 matrices: odd shapes (checked staging), interior blocks on
                // the cp.async path with a partial last k-tile beside edge blocks, degenerate
                // shapes; within the f32 accumulation bound of the f64 product of the BF16
                // inputs, and the same bits on a second run.
                use kernels_gpu_host::plan::bf16;
                let shapes = SHAPES.into_iter().chain(TENSOR_TILES).chain(DEGENERATE);
                for (i, (m, k, n)) in shapes.enumerate() {
                    let shape = MatmulShape::new(m, k, n)?;
                    let mut rng = Rng::new(40 + i as u64);
                    let mut signed = |len| bf16::round_all(&rng.signed(len));
                    let (a, b) = (signed(m * k), signed(k * n));
                    let (da, db) = (g.stream().clone_htod(&a)?, g.stream().clone_htod(&b)?);
                    let value = |x: &[u16]| x.iter().map(|&v| bf16::value(v)).collect::<Vec<_>>();
                    let exact = reference::matmul_f64(&value(&a), &value(&b), m, k, n);
                    let what = format!("{} {shape}", config.name);
                    twice_within_f32_bound(g, &what, (m, k, n), &exact, |out| {
                        g.gemm_bf16_device(config, &da, &db, out, shape)
                    })?;
                }
                Ok(())
            }),
        );
    }
    add(
        "gpu::half::outputs_in_16_bits".into(),
        Box::new(move |g| {
            // `gemm_half_auto_to_half`: the autotuned 16-bit product with its outputs
            // rounded to the element type on the device, bit for bit the f32 product of the
            // same choice rounded on the host (to nearest even), for `bf16` and `f16`, on a
            // shape with odd `n` and one with whole 8-byte output runs.
            use kernels_gpu_host::plan::half::HalfFloat;
            fn one<
                T: HalfFloat
                    + kernels_gpu_host::plan::gemv::GemvElement
                    + cudarc::driver::DeviceRepr
                    + cudarc::driver::ValidAsZeroBits,
            >(
                g: &Gpu, (m, k, n): (usize, usize, usize),
            ) -> Result<(), Failed> {
                let shape = MatmulShape::new(m, k, n)?;
                let mut rng = Rng::new(0x16);
                let (a, b) = (
                    g.upload_half::<T>(&rng.signed(m * k))?,
                    g.upload_half::<T>(&rng.signed(k * n))?,
                );
                let (narrow, choice) = g.gemm_half_auto_to_half(&a, &b, shape)?;
                let mut wide = g.nans(m * n)?;
                g.gemm_half_choice_device(choice, &a, &b, &mut wide, shape)?;
                let (wide, narrow) = (g.download(&wide)?, g.stream().clone_dtoh(&narrow)?);
                let wrong = wide
                    .iter()
                    .zip(&narrow)
                    .filter(|(x, y)| {
                        bytemuck::bytes_of(&T::from_f32(**x)) != bytemuck::bytes_of(*y)
                    })
                    .count();
                if narrow.len() != m * n || wrong > 0 {
                    return Err(format!(
                        "{} {shape}: {wrong} outputs differ",
                        <T as HalfFloat>::NAME
                    )
                    .into());
                }
                Ok(())
            }
            if g.info()?.compute_capability != (9, 0) {
                return Ok(());
            }
            for shape in [(300, 72, 133), (257, 64, 256)] {
                one::<half::bf16>(g, shape)?;
                one::<half::f16>(g, shape)?;
            }
            Ok(())
        }),
    );
    add(
        "gpu::half::tf32_copies_round_ties_to_even".into(),
        Box::new(move |g| {
            // Rung 17's TF32 operands are rounded by the accelerator's copies (TF32 maps):
            // each configuration multiplies `a` by the identity and the identity by `b`,
            // whose outputs are the rounded inputs themselves (products by 1, sums with
            // zeros: exact). Ties (low 13 bits 0x1000) with an even and an odd last kept
            // bit, values beside them, and others: every output the nearest TF32, ties to
            // even, as `tf32_round_even_bits` (and the simulator's copies) say.
            use kernels_gpu::nvptx_device::mma::tf32_round_even_bits;
            use kernels_gpu_host::plan::half::{HalfRun, Input};
            if g.info()?.compute_capability != (9, 0) {
                return Ok(());
            }
            let k = 64usize;
            let low = [0x1000u32, 0x0fff, 0x1001, 0x0000, 0x1fff, 0x0800];
            let values: Vec<f32> = (0..(k * k) as u32)
                .map(|i| {
                    let kept = 0x3f80_0000 | (i.wrapping_mul(0x9e37_79b1) & 0x007f_e000);
                    let sign = if i % 7 < 3 { 0x8000_0000 } else { 0 };
                    f32::from_bits(sign | kept | low[i as usize % low.len()])
                })
                .collect();
            let eye: Vec<f32> = (0..k * k)
                .map(|e| if e / k == e % k { 1.0 } else { 0.0 })
                .collect();
            let shape = MatmulShape::new(k, k, k)?;
            let (dv, de) = (g.upload(&values)?, g.upload(&eye)?);
            let want: Vec<u32> = values
                .iter()
                .map(|v| tf32_round_even_bits(v.to_bits()))
                .collect();
            let configs = kernels_gpu_host::plan::half::WS_CONFIGS.iter();
            for config in configs.filter(|c| c.input == Input::Tf32) {
                let run = HalfRun { config, splits: 1 };
                for (operand, a, b) in [("a", &dv, &de), ("b", &de, &dv)] {
                    let mut out = g.nans(k * k)?;
                    g.matmul_tf32_ws(run, a, b, &mut out, shape)?;
                    let got = g.download(&out)?;
                    let wrong = got
                        .iter()
                        .zip(&want)
                        .filter(|(x, w)| x.to_bits() != **w)
                        .count();
                    if wrong > 0 {
                        let name = config.name;
                        return Err(format!(
                            "{name}: {wrong} of `{operand}`'s {} outputs are not its TF32 rounding",
                            k * k
                        )
                        .into());
                    }
                }
            }
            Ok(())
        }),
    );
    for config in kernels_gpu_host::plan::half::WS_CONFIGS {
        add(
            format!("gpu::half::{}", config.name),
            Box::new(move |g| {
                // Rung 17 (16-bit or TF32 matrices, Hopper): odd shapes, several k-tiles
                // with a partial last one, k and n not multiples of 8 (padded copies),
                // degenerate shapes, unsplit and split in 2 and 4; within the f32
                // accumulation bound of the f64 product of the rounded inputs (TF32: to
                // nearest, ties to even, as its copies round; and the TF32 bound of the exact
                // one), the same bits on a second run. Another GPU must refuse it with the
                // typed error.
                use kernels_gpu::nvptx_device::mma::tf32_round_even_bits;
                use kernels_gpu_host::plan::half::{HalfFloat, HalfRun, Input};
                fn one<
                    T: HalfFloat + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
                >(
                    g: &Gpu, run: HalfRun, (m, k, n): (usize, usize, usize), seed: u64,
                ) -> Result<(), Failed> {
                    let shape = MatmulShape::new(m, k, n)?;
                    let mut rng = Rng::new(seed);
                    let (a, b) = (rng.signed(m * k), rng.signed(k * n));
                    let (da, db) = (g.upload_half::<T>(&a)?, g.upload_half::<T>(&b)?);
                    let round = |x: &[f32]| {
                        x.iter()
                            .map(|&v| T::from_f32(v).to_f32())
                            .collect::<Vec<_>>()
                    };
                    let exact = reference::matmul_f64(&round(&a), &round(&b), m, k, n);
                    let what = format!("{} {shape}", run.name());
                    twice_within_f32_bound(g, &what, (m, k, n), &exact, |out| {
                        g.gemm_half_run_device(run, &da, &db, out, shape)
                    })
                }
                fn one_tf32(
                    g: &Gpu, run: HalfRun, (m, k, n): (usize, usize, usize), seed: u64,
                ) -> Result<(), Failed> {
                    let shape = MatmulShape::new(m, k, n)?;
                    let mut rng = Rng::new(seed);
                    let (a, b) = (rng.signed(m * k), rng.signed(k * n));
                    let (da, db) = (g.upload(&a)?, g.upload(&b)?);
                    let round = |x: &[f32]| -> Vec<f32> {
                        x.iter()
                            .map(|v| f32::from_bits(tf32_round_even_bits(v.to_bits())))
                            .collect()
                    };
                    let rounded = reference::matmul_f64(&round(&a), &round(&b), m, k, n);
                    let what = format!("{} {shape}", run.name());
                    twice_within_f32_bound(g, &what, (m, k, n), &rounded, |out| {
                        g.matmul_tf32_ws(run, &da, &db, out, shape)
                    })?;
                    let mut out = g.nans(m * n)?;
                    g.matmul_tf32_ws(run, &da, &db, &mut out, shape)?;
                    let exact = reference::matmul_f64(&a, &b, m, k, n);
                    let vs_exact = reference::compare(&g.download(&out)?, &exact);
                    if !vs_exact.within_bound(k, Precision::Tf32) {
                        return Err(format!("{what}: {vs_exact:?}").into());
                    }
                    Ok(())
                }
                let shapes = SHAPES.into_iter().chain(TENSOR_TILES).chain(DEGENERATE);
                let shapes = shapes.chain([(300, 520, 260), (129, 4100, 67)]);
                if g.info()?.compute_capability != (9, 0) {
                    let x = g.upload_half::<half::bf16>(&[1.0; 64])?;
                    let run = HalfRun { config, splits: 1 };
                    let mut out = g.nans(64)?;
                    let shape = MatmulShape::new(8, 8, 8)?;
                    let refused = match config.input {
                        Input::Bf16 => g.gemm_half_run_device(run, &x, &x, &mut out, shape),
                        Input::F16 => return Ok(()),
                        Input::Tf32 => {
                            let x = g.upload(&[1.0; 64])?;
                            g.matmul_tf32_ws(run, &x, &x, &mut out, shape)
                        }
                    };
                    return match refused {
                        Err(Error::NeedsHopper { .. }) => Ok(()),
                        other => Err(format!("expected NeedsHopper, got {other:?}").into()),
                    };
                }
                for (i, shape) in shapes.enumerate() {
                    // Powers of two, and an odd split (with empty last slices where the
                    // depth has fewer k-tiles).
                    for splits in [1, 2, 4, 5] {
                        let run = HalfRun { config, splits };
                        let seed = 170 + 3 * i as u64 + splits as u64;
                        match config.input {
                            Input::Bf16 => one::<half::bf16>(g, run, shape, seed)?,
                            Input::F16 => one::<half::f16>(g, run, shape, seed)?,
                            Input::Tf32 => one_tf32(g, run, shape, seed)?,
                        }
                    }
                }
                Ok(())
            }),
        );
    }
    for config in PACKED_CONFIGS {
        add(
            format!("gpu::packed::{}", config.name),
            Box::new(move |g| {
                // Rungs 14 and 15 (TF32 on wgmma or mma.sync, packed operands): odd shapes,
                // several k-tiles with a partial last one, edge tiles in both directions,
                // degenerate shapes; within the f32 accumulation bound of the f64 product of
                // the TF32-rounded inputs and the TF32 bound of the exact one, the same bits
                // on a second run. A GPU that is not a Hopper must refuse rung 14 with the
                // typed error instead.
                use kernels_gpu::nvptx_device::mma::tf32_round_bits;
                let runs_here = g.info()?.compute_capability == (9, 0)
                    || PackedRung::of(config) == PackedRung::MmaSync;
                let shapes = SHAPES.into_iter().chain(TENSOR_TILES);
                let shapes = shapes.chain([(256, 512, 768)]).chain(DEGENERATE);
                for (i, (m, k, n)) in shapes.enumerate() {
                    let shape = MatmulShape::new(m, k, n)?;
                    let mut rng = Rng::new(140 + i as u64);
                    let (a, b) = (rng.signed(m * k), rng.signed(k * n));
                    let (da, db) = (g.upload(&a)?, g.upload(&b)?);
                    let mut out = g.nans(m * n)?;
                    let mut run = || -> Result<Vec<f32>, Failed> {
                        g.fill_nan(&mut out)?;
                        g.matmul_packed_device(config, &da, &db, &mut out, shape)?;
                        Ok(g.download(&out)?)
                    };
                    if !runs_here {
                        return match g.matmul_packed_device(config, &da, &db, &mut out, shape) {
                            Err(Error::NeedsHopper { .. }) => Ok(()),
                            other => Err(format!("expected NeedsHopper, got {other:?}").into()),
                        };
                    }
                    let (first, second) = (run()?, run()?);
                    let round = |x: &[f32]| -> Vec<f32> {
                        x.iter()
                            .map(|v| f32::from_bits(tf32_round_bits(v.to_bits())))
                            .collect()
                    };
                    let rounded = reference::matmul_f64(&round(&a), &round(&b), m, k, n);
                    let exact = reference::matmul_f64(&a, &b, m, k, n);
                    let (vs_rounded, vs_exact) = (
                        reference::compare(&first, &rounded),
                        reference::compare(&first, &exact),
                    );
                    if first.len() != m * n
                        || !vs_rounded.within_f32_bound(k)
                        || !vs_exact.within_bound(k, Precision::Tf32)
                    {
                        return Err(format!(
                            "{} {shape}: {vs_rounded:?} / {vs_exact:?}",
                            config.name
                        )
                        .into());
                    }
                    if !same_bits(&first, &second) {
                        return Err(format!("{} {shape}: two runs differ", config.name).into());
                    }
                }
                Ok(())
            }),
        );
    }
    add(
        "gpu::typed_launchers_match_dispatch".into(),
        Box::new(|g| {
            let (shape, (a, b)) = host_operands((33, 47, 29), 7)?;
            let typed = g.matmul_tiled_static::<32>(&a, &b, shape)?;
            let typed_dyn = g.matmul_tiled_dynamic_const::<32>(&a, &b, shape)?;
            let by_value = g.matmul(MatmulKernel::TiledStatic, TileWidth::Tw32, &a, &b, shape)?;
            if by_value != typed || typed != typed_dyn {
                return Err("typed and run-time dispatch differ".into());
            }
            Ok(())
        }),
    );
    add(
        "gpu::shape_errors_are_typed".into(),
        Box::new(|g| {
            let shape = MatmulShape::new(4, 4, 4)?;
            match g.matmul(
                MatmulKernel::Naive,
                TileWidth::Tw16,
                &[0.0; 15],
                &[0.0; 16],
                shape,
            ) {
                Err(Error::InputLength {
                    operand: "a",
                    expected: 16,
                    actual: 15,
                    ..
                }) => Ok(()),
                other => Err(format!("expected InputLength, got {other:?}").into()),
            }
        }),
    );
    add(
        "gpu::nan_poison_download_into_and_time_within".into(),
        Box::new(|g| {
            // A NaN-filled buffer, new or refilled, reads back all NaN; so does an empty one.
            let mut host = vec![0.0f32; 1000];
            g.download_into(&g.nans(1000)?, &mut host)?;
            let mut zeros = g.zeros(1000)?;
            g.fill_nan(&mut zeros)?;
            let refilled = g.download(&zeros)?;
            if !host.iter().chain(&refilled).all(|x| x.is_nan()) {
                return Err("nans/fill_nan left a number".into());
            }
            g.download_into(&g.nans(0)?, &mut [])?;
            match g.download_into(&zeros, &mut host[..999]) {
                Err(Error::InputLength {
                    expected: 1000,
                    actual: 999,
                    ..
                }) => {}
                other => return Err(format!("expected InputLength, got {other:?}").into()),
            }
            // How many launches time_within makes, and how many times it returns.
            let shape = MatmulShape::new(64, 64, 64)?;
            let (da, db) = (g.zeros(64 * 64)?, g.zeros(64 * 64)?);
            let mut out = g.zeros(64 * 64)?;
            let mut count = |budget: TimeBudget| -> Result<(usize, usize), Failed> {
                let mut launches = 0;
                let ms = g.time_within(&budget, || {
                    launches += 1;
                    g.matmul_device(
                        MatmulKernel::Naive,
                        TileWidth::Tw16,
                        &da,
                        &db,
                        &mut out,
                        shape,
                    )
                })?;
                if ms.iter().any(|t| t.is_nan() || *t < 0.0) {
                    return Err(format!("{ms:?}").into());
                }
                Ok((launches, ms.len()))
            };
            let cases = [
                // No bound: exactly the counts.
                (TimeBudget::new(2, 7, None), (9, 7)),
                (TimeBudget::new(0, 3, None), (3, 3)),
                // A zero bound: the first of each phase only.
                (TimeBudget::new(2, 7, Some(Duration::ZERO)), (2, 1)),
                (TimeBudget::new(0, 7, Some(Duration::ZERO)), (1, 1)),
                // A generous one: the counts.
                (TimeBudget::new(2, 7, Some(Duration::from_secs(60))), (9, 7)),
            ];
            for (budget, want) in cases {
                let got = count(budget)?;
                if got != want {
                    return Err(format!(
                        "{budget:?}: (launches, timed) {got:?}, expected {want:?}"
                    )
                    .into());
                }
            }
            Ok(())
        }),
    );
    add(
        "gpu::device_memory_exhaustion_is_an_error".into(),
        Box::new(|g| {
            // Twice the card's memory: refused with the sizes, before any allocation.
            let total = g.info()?.total_memory_bytes;
            match g.zeros(total / 2) {
                Err(Error::OutOfDeviceMemory { requested, .. })
                    if requested == 2 * total as u64 =>
                {
                    Ok(())
                }
                other => Err(format!("expected OutOfDeviceMemory, got {other:?}").into()),
            }
        }),
    );
    trials
}

fn main() {
    harness::run(gpu_tests(harness::gpu()));
}
