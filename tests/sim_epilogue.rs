//! SGEMM epilogues in the simulator: configurations from four rungs (scalar stores, 16-byte
//! stores, the padded fallback and the `cp.async` fast path) run with
//! [`Linear`] epilogues — α, β (the output read back), a bias, each activation — and must
//! give the bits of the same operations applied on the CPU to the k-order FMA product.

use kernels_gpu::catalogue::Extent;
use kernels_gpu::nvptx_device::launch::Limits;
use kernels_gpu::nvptx_device::sim::{self, SharedPtr};
use kernels_gpu::sgemm::configs::{
    sgemm_coalesced_32, sgemm_double_buffered_padded_128x128x16_w64x32,
    sgemm_multistage_swizzled_128x128x16_w64x32, sgemm_vectorized_128x128x8_8x8,
};
use kernels_gpu::sgemm::epilogue::{Act, Activation, Epilogue, Gelu, Identity, Linear, Relu};
use kernels_gpu::sgemm::{Geometry, SGEMM_PARAMS};

/// Partial tiles everywhere, and (136, 96, 132) whose interior 128 × 128 block takes the
/// 16-byte and `cp.async` paths.
const SHAPES: [(u32, u32, u32); 2] = [(37, 11, 45), (136, 96, 132)];

#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct A16([f32; 4]);

/// 16-byte aligned storage for `len` floats (so that interior blocks may take the vector
/// paths), filled from `f`.
fn aligned(len: usize, f: impl Fn(usize) -> f32) -> (Vec<A16>, usize) {
    let mut v = vec![A16([0.0; 4]); len.div_ceil(4)];
    for i in 0..len {
        v[i / 4].0[i % 4] = f(i);
    }
    (v, len)
}

fn slice(v: &(Vec<A16>, usize)) -> &[f32] {
    // SAFETY: A16 is repr(C) around [f32; 4]: 4 · v.len() initialised floats.
    unsafe { std::slice::from_raw_parts(v.0.as_ptr().cast(), v.1) }
}

fn slice_mut(v: &mut (Vec<A16>, usize)) -> &mut [f32] {
    // SAFETY: as in `slice`, uniquely borrowed.
    unsafe { std::slice::from_raw_parts_mut(v.0.as_mut_ptr().cast(), v.1) }
}

/// A deterministic value in [-1, 1) for index `i` of stream `s`.
fn value(s: u32, i: usize) -> f32 {
    let h = (i as u32 ^ s.wrapping_mul(0x9e37_79b9)).wrapping_mul(0x85eb_ca6b) >> 8;
    h as f32 / (1u32 << 23) as f32 - 1.0
}

type Run<E> = unsafe fn(*const f32, *const f32, *mut f32, u32, u32, u32, E);

/// Runs `run` (a configuration with epilogue `e`) in the simulator on `shape`, with `out`
/// holding `old` before the launch, and checks every bit against the CPU.
fn check<E: Epilogue + Send + Sync>(
    name: &str, geometry: Geometry, run: Run<E>, e: E, (m, k, n): (u32, u32, u32),
    old: impl Fn(usize) -> f32,
) {
    let (mu, ku, nu) = (m as usize, k as usize, n as usize);
    let a = aligned(mu * ku, |i| value(1, i));
    let b = aligned(ku * nu, |i| value(2, i));
    let mut out = aligned(mu * nu, &old);
    let (pa, pb, po) = (
        SharedPtr(slice(&a).as_ptr() as *mut f32),
        SharedPtr(slice(&b).as_ptr() as *mut f32),
        SharedPtr(slice_mut(&mut out).as_mut_ptr()),
    );
    let spec = geometry.spec_with_params("test", SGEMM_PARAMS, None);
    let launch = spec.launch(Extent::Matrix { rows: m, cols: n }, 0);
    // SAFETY: a, b and out are m×k, k×n and m×n; the launch is the configuration's; the
    // epilogue's bias (if any) holds n floats.
    sim::launch(&launch, &Limits::default(), || unsafe {
        run(pa.get(), pb.get(), po.get(), m, n, k, e)
    })
    .unwrap_or_else(|err| panic!("{name} {m}×{k}×{n}: {err}"));
    let (sa, sb, so) = (slice(&a), slice(&b), slice(&out));
    for r in 0..mu {
        for c in 0..nu {
            let acc = (0..ku).fold(0.0f32, |p, i| sa[r * ku + i].mul_add(sb[i * nu + c], p));
            let before = old(r * nu + c);
            let expected = e.apply(
                r as u32,
                c as u32,
                acc,
                if e.reads_output() { before } else { 0.0 },
            );
            let got = so[r * nu + c];
            assert_eq!(
                got.to_bits(),
                expected.to_bits(),
                "{name} {m}×{k}×{n} [{r}][{c}]: {got} vs {expected}"
            );
        }
    }
}

/// Every epilogue on one configuration.
fn check_config(name: &str, geometry: Geometry, run: Run<Linear<Act>>) {
    for shape in SHAPES {
        let bias: Vec<f32> = (0..shape.2 as usize).map(|i| value(3, i)).collect();
        let bias_ptr = bias.as_ptr();
        // α and β, the output read back; no bias.
        let ab = Linear {
            alpha: 0.5,
            beta: -1.25,
            bias: std::ptr::null(),
            act: Act::Identity,
        };
        check(name, geometry, run, ab, shape, |i| value(4, i));
        // Bias and each activation; β = 0, so the output is never read: NaN before the
        // launch must not reach the result.
        for act in [Act::Identity, Act::Relu, Act::Gelu] {
            check(
                name,
                geometry,
                run,
                Linear::bias_act(bias_ptr, act),
                shape,
                |_| f32::NAN,
            );
        }
    }
}

macro_rules! run_of {
    ($config:ident) => {
        $config::run::<Linear<Act>> as Run<Linear<Act>>
    };
}

#[test]
fn rung_1_scalar_stores() {
    check_config(
        "rung 1",
        sgemm_coalesced_32::GEOMETRY,
        run_of!(sgemm_coalesced_32),
    );
}

#[test]
fn rung_5_vector_stores() {
    check_config(
        "rung 5",
        sgemm_vectorized_128x128x8_8x8::GEOMETRY,
        run_of!(sgemm_vectorized_128x128x8_8x8),
    );
}

#[test]
fn rung_8_padded() {
    check_config(
        "rung 8",
        sgemm_double_buffered_padded_128x128x16_w64x32::GEOMETRY,
        run_of!(sgemm_double_buffered_padded_128x128x16_w64x32),
    );
}

#[test]
fn rung_10_multistage() {
    check_config(
        "rung 10",
        sgemm_multistage_swizzled_128x128x16_w64x32::GEOMETRY,
        run_of!(sgemm_multistage_swizzled_128x128x16_w64x32),
    );
}

/// The compile-time activations are the run-time ones.
#[test]
fn activations_agree() {
    for i in 0..2000 {
        let x = (i as f32 - 1000.0) / 97.0;
        assert_eq!(Act::Identity.apply(x), Identity.apply(x));
        assert_eq!(Act::Relu.apply(x).to_bits(), Relu.apply(x).to_bits());
        assert_eq!(Act::Gelu.apply(x).to_bits(), Gelu.apply(x).to_bits());
    }
    assert_eq!(Act::try_from_code(3), None);
    assert_eq!(Act::from_code(2), Act::Gelu);
}
