//! The example's kernels in the CPU simulator, against the unfused CPU sequence (bit for
//! bit: the same FMAs in the same order) and the f64 reference; and its PTX module, which
//! needs no GPU to inspect.

use fused_linear::{Operands, sim};
#[path = "../../../../tests/common/shapes.rs"]
mod shapes;

use kernels_gpu_host::MatmulShape;
use kernels_gpu_host::problem::error::Error;
use kernels_gpu_host::sim::Simulator;

/// Odd shapes (m, k, n): none a multiple of the tile, k = 1, k = 0 (out = relu(b)),
/// whole tiles, and one spanning several tiles in every dimension.
/// [`shapes::ODD`], k = 0, an empty output, and two more odd ones.
const SHAPES: [(usize, usize, usize); 8] = {
    let [a, b, c, d] = shapes::ODD;
    [a, b, c, d, (3, 0, 5), (32, 16, 48), (40, 57, 19), (0, 4, 6)]
};

fn check_fused(ops: &Operands) {
    let shape = ops.shape;
    let fused = sim::fused(&Simulator::default(), ops).expect("simulated launch");
    let cpu = fused_linear::cpu_unfused(&ops.x, &ops.w, &ops.b, shape);
    if let Some(i) = fused_linear::first_mismatch(&fused, &cpu) {
        panic!(
            "{shape}: fused (simulated) and the CPU sequence differ at {i}: {} vs {}",
            fused[i], cpu[i]
        );
    }
    let acc = fused_linear::accuracy(
        &fused,
        &fused_linear::reference_f64(&ops.x, &ops.w, &ops.b, shape),
    );
    assert!(
        fused_linear::within_bound(&acc, shape.k),
        "{shape}: {acc:?}"
    );
}

#[test]
fn fused_kernel_matches_the_unfused_cpu_sequence() {
    for (i, &(m, k, n)) in SHAPES.iter().enumerate() {
        let ops = Operands::random(MatmulShape::new(m, k, n).unwrap(), 100 + i as u64);
        check_fused(&ops);
        // The inputs are signed: the relu must have clamped something, and kept something.
        let out = fused_linear::cpu_unfused(&ops.x, &ops.w, &ops.b, ops.shape);
        if out.len() >= 35 {
            let clamped = out.iter().filter(|&&v| v == 0.0).count();
            assert!(
                clamped > 0 && clamped < out.len(),
                "{m}×{k}×{n}: {clamped} of {} clamped",
                out.len()
            );
        }
    }
}

#[test]
fn simulated_unfused_kernels_match_the_cpu_sequence() {
    for (i, &(m, k, n)) in SHAPES.iter().enumerate() {
        let ops = Operands::random(MatmulShape::new(m, k, n).unwrap(), 200 + i as u64);
        let unfused = sim::unfused(&Simulator::default(), &ops).expect("simulated launches");
        let cpu = fused_linear::cpu_unfused(&ops.x, &ops.w, &ops.b, ops.shape);
        assert_eq!(
            fused_linear::first_mismatch(&unfused, &cpu),
            None,
            "{m}×{k}×{n}"
        );
    }
}

#[test]
fn relu_and_bias_by_hand() {
    // x = [[1, -2], [0.5, 0.25]], W = I, b = [0.5, 1]: pre-activations
    // [[1.5, -1], [1, 1.25]], so relu zeroes exactly one element.
    let ops = Operands {
        shape: MatmulShape::new(2, 2, 2).unwrap(),
        x: vec![1.0, -2.0, 0.5, 0.25],
        w: vec![1.0, 0.0, 0.0, 1.0],
        b: vec![0.5, 1.0],
    };
    let out = sim::fused(&Simulator::default(), &ops).unwrap();
    assert_eq!(out, [1.5, 0.0, 1.0, 1.25]);
    check_fused(&ops);
}

#[test]
fn wrong_bias_length_is_a_typed_error() {
    let mut ops = Operands::random(MatmulShape::new(4, 3, 5).unwrap(), 1);
    ops.b.pop();
    match sim::fused(&Simulator::default(), &ops) {
        Err(Error::InputLength {
            operand: "bias",
            expected: 5,
            actual: 4,
            ..
        }) => {}
        other => panic!("expected InputLength for the bias, got {other:?}"),
    }
}

#[test]
fn ptx_module_has_its_two_entries_with_launch_bounds() {
    let ptx = fused_linear::FUSED_LINEAR_PTX;
    assert!(
        ptx.lines()
            .any(|l| l.starts_with(".target sm_") && !l.contains("debug")),
        "the module should target an sm_ architecture without `debug`"
    );
    for (entry, params) in [
        (fused_linear::FUSED_ENTRY, vec![8, 8, 8, 8, 4, 4, 4]),
        (fused_linear::BIAS_RELU_ENTRY, vec![8, 8, 8, 4, 4]),
    ] {
        assert_eq!(
            kernels_gpu_host::plan::ptx::param_sizes(ptx, entry),
            Some(params),
            "parameters of {entry}"
        );
    }
    // The fused kernel: the configuration's shared arrays and launch bounds, the epilogue's
    // max, and no local memory (nothing spilled, no closure left on the stack).
    let spec = fused_linear_kernels::FUSED_LINEAR;
    let body = kernels_gpu_host::plan::ptx::entry_body(ptx, spec.entry).expect("fused entry");
    assert!(body.contains("max.f32"), "{body}");
    assert!(!body.contains(".local"), "{body}");
    let directives =
        kernels_gpu_host::plan::ptx::entry_directives(ptx, spec.entry).expect("directives");
    let bounds = spec.launch_bounds.expect("launch bounds");
    assert_eq!(directives.maxntid, Some([bounds.max_threads, 1, 1]));
    assert_eq!(directives.minnctapersm, Some(bounds.min_blocks));
}
