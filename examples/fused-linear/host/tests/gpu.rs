//! GPU tests: the fused kernel against the unfused sequence (the same SGEMM configuration
//! through the `Gpu`, then the bias-relu kernel) and the CPU sequence, bit for bit, and
//! against the f64 reference; cuBLAS then the bias-relu kernel within the f32 bound.
//!
//! Uses a libtest-compatible harness so that, without a GPU, every test is reported as
//! *ignored* with the reason printed — never as passed.

use fused_linear::{FusedLinearGpu, Operands};
#[path = "../../../../tests/common/shapes.rs"]
mod shapes;

use kernels_gpu_host::MatmulShape;
use kernels_gpu_host::gpu::{Cublas, CublasMath, Gpu};
use kernels_gpu_host::problem::error::Error;
use libtest_mimic::{Arguments, Failed, Trial};
use std::sync::Arc;

/// Odd shapes (m, k, n): tiny, none a multiple of the tile, k = 1, k = 0, larger.
/// [`shapes::ODD`], k = 0 and empty outputs, one larger than a tile in every dimension,
/// whole tiles (the `cp.async` fast path everywhere) and a mix of interior and edge tiles.
const SHAPES: [(usize, usize, usize); 9] = {
    let [a, b, c, d] = shapes::ODD;
    [
        a,
        b,
        c,
        d,
        (3, 0, 5),
        (257, 129, 511),
        (0, 4, 6),
        (384, 64, 256),
        (1000, 300, 700),
    ]
};

fn check(gpu: &Gpu, (m, k, n): (usize, usize, usize), seed: u64) -> Result<(), Failed> {
    let fl = FusedLinearGpu::new(gpu)?;
    let ops = Operands::random(MatmulShape::new(m, k, n)?, seed);
    let fused = fl.fused(&ops)?;
    let unfused = fl.unfused(None, &ops)?;
    let cpu = fused_linear::cpu_unfused(&ops.x, &ops.w, &ops.b, ops.shape);
    for (name, other) in [("unfused (GPU)", &unfused), ("the CPU sequence", &cpu)] {
        if let Some(i) = fused_linear::first_mismatch(&fused, other) {
            return Err(format!(
                "{m}×{k}×{n}: fused and {name} differ at {i} (max diff {:.2e})",
                fused_linear::max_abs_diff(&fused, other)
            )
            .into());
        }
    }
    let reference = fused_linear::reference_f64(&ops.x, &ops.w, &ops.b, ops.shape);
    let cublas = Cublas::new(gpu, CublasMath::Fp32)?;
    let with_cublas = fl.unfused(Some(&cublas), &ops)?;
    for (name, out) in [("fused", &fused), ("cuBLAS + bias_relu", &with_cublas)] {
        let acc = fused_linear::accuracy(out, &reference);
        if !fused_linear::within_bound(&acc, ops.shape.k) {
            return Err(format!("{m}×{k}×{n}: {name}: {acc:?}").into());
        }
    }
    Ok(())
}

/// One GPU test's body.
type GpuTest = Box<dyn FnOnce(&Gpu) -> Result<(), Failed> + Send>;

fn gpu_tests(gpu: Option<Arc<Gpu>>) -> Vec<Trial> {
    let mut trials = vec![];
    let mut add = |name: String, f: GpuTest| {
        let g = gpu.clone();
        let ignored = g.is_none();
        trials.push(
            Trial::test(name, move || {
                f(g.as_deref().expect("ignored without a GPU"))
            })
            .with_ignored_flag(ignored),
        );
    };
    for (i, &shape) in SHAPES.iter().enumerate() {
        let (m, k, n) = shape;
        add(
            format!("gpu::fused_vs_unfused::{m}x{k}x{n}"),
            Box::new(move |g| check(g, shape, 3000 + i as u64)),
        );
    }
    add(
        "gpu::wrong_bias_length_is_a_typed_error".into(),
        Box::new(|g| {
            let fl = FusedLinearGpu::new(g)?;
            let mut ops = Operands::random(MatmulShape::new(4, 3, 5)?, 1);
            ops.b.pop();
            match fl.fused(&ops) {
                Err(Error::InputLength {
                    operand: "bias", ..
                }) => Ok(()),
                other => Err(format!("expected InputLength for the bias, got {other:?}").into()),
            }
        }),
    );
    trials
}

fn main() {
    let args = Arguments::from_args();
    let gpu = match Gpu::new() {
        Ok(gpu) => Some(Arc::new(gpu)),
        Err(e) => {
            eprintln!("GPU tests SKIPPED (reported as ignored): {e}");
            None
        }
    };
    libtest_mimic::run(&args, gpu_tests(gpu)).exit();
}
