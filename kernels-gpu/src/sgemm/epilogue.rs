//! Epilogues: what every SGEMM rung does with an output's accumulated product before the one
//! store, so that `C = act(α·A·B + β·C + bias)` (a linear layer's matmul, bias and
//! activation, or BLAS's α/β update) costs no pass over `C` of its own.
//!
//! A rung computes `acc = Σ_i a[r, i] · b[i, c]` in registers, then hands each output to
//! [`Epilogue::apply`] with its row and column in `out` and, where the epilogue
//! [reads the output](Epilogue::reads_output), the value `out[r, c]` held before the launch.
//! [`Store`] is the plain product (every entry point of the ladder uses it, and compiles to
//! the same code as a rung without epilogues); [`Linear`] is the general one.
//!
//! A kernel crate of its own gets any configuration of the table with any epilogue through
//! [`configs`](super::configs): `configs::<entry>::run(a, b, out, m, n, k, epilogue)`, with
//! the configuration's launch geometry beside it.

use nvptx_device::intrinsics::fma;

/// What happens to each output between the product and its store.
///
/// `Copy` and small: each thread holds its own copy in registers. Both methods must be pure
/// functions of their arguments (and of memory nobody writes during the launch, such as a
/// bias vector).
pub trait Epilogue: Copy {
    /// Whether [`apply`](Self::apply) needs the output's value before the launch (`β ≠ 0`).
    /// The same answer for every thread of a launch; `false` means `out` is only written.
    #[inline(always)]
    fn reads_output(&self) -> bool {
        false
    }

    /// The value stored at `out[row, col]` for the accumulated product `acc`; `old` is the
    /// value `out[row, col]` held before the launch if [`reads_output`](Self::reads_output),
    /// else `0.0`.
    fn apply(&self, row: u32, col: u32, acc: f32, old: f32) -> f32;
}

/// `out = acc`: the plain product.
#[derive(Clone, Copy, Debug, Default)]
pub struct Store;

impl Epilogue for Store {
    #[inline(always)]
    fn apply(&self, _row: u32, _col: u32, acc: f32, _old: f32) -> f32 {
        acc
    }
}

/// An elementwise function applied last, after α, β and the bias.
pub trait Activation: Copy {
    /// `f(x)`.
    fn apply(&self, x: f32) -> f32;
}

/// The identity.
#[derive(Clone, Copy, Debug, Default)]
pub struct Identity;

impl Activation for Identity {
    #[inline(always)]
    fn apply(&self, x: f32) -> f32 {
        x
    }
}

/// `max(x, 0)` (`max.f32`: a NaN gives 0, as PTX's `max` and [`f32::max`] do).
#[derive(Clone, Copy, Debug, Default)]
pub struct Relu;

impl Activation for Relu {
    #[inline(always)]
    fn apply(&self, x: f32) -> f32 {
        x.max(0.0)
    }
}

/// GELU in its tanh form (PyTorch's `approximate="tanh"`):
/// `x/2 · (1 + tanh(√(2/π) · (x + 0.044715·x³)))`, with `tanh` from [`exp_f32`], so the GPU
/// and the simulator give the same bits. Against the same formula in f64 the result is
/// within `2⁻²⁰·(|x| + 1)` (tested on the host).
#[derive(Clone, Copy, Debug, Default)]
pub struct Gelu;

impl Activation for Gelu {
    #[inline(always)]
    fn apply(&self, x: f32) -> f32 {
        const SQRT_2_OVER_PI: f32 = 0.797_884_6;
        let u = SQRT_2_OVER_PI * fma(0.044_715 * x, x * x, x);
        0.5 * x * (1.0 + tanh_f32(u))
    }
}

/// The activation chosen at run time, for entry points that take it as a parameter
/// (`act: u32`, see [`Act::from_code`]): the branch is the same for every thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Act {
    /// [`Identity`].
    Identity = 0,
    /// [`Relu`].
    Relu = 1,
    /// [`Gelu`].
    Gelu = 2,
}

impl Act {
    /// The activation with parameter value `code`; an unknown code is [`Act::Identity`]
    /// (hosts check codes before launching: `Act::try_from_code`).
    #[inline(always)]
    pub fn from_code(code: u32) -> Self {
        Self::try_from_code(code).unwrap_or(Self::Identity)
    }

    /// The activation with parameter value `code`, if there is one.
    #[inline(always)]
    pub const fn try_from_code(code: u32) -> Option<Self> {
        match code {
            0 => Some(Self::Identity),
            1 => Some(Self::Relu),
            2 => Some(Self::Gelu),
            _ => None,
        }
    }
}

impl Activation for Act {
    #[inline(always)]
    fn apply(&self, x: f32) -> f32 {
        match self {
            Self::Identity => Identity.apply(x),
            Self::Relu => Relu.apply(x),
            Self::Gelu => Gelu.apply(x),
        }
    }
}

/// `out = act(α·acc + β·old + bias[col])`, as cuBLASLt orders its epilogue. The output is
/// read only if `β ≠ 0`; `bias` may be null (no bias), else it holds `n` floats that nothing
/// writes during the launch. With `α = 1` and `β = 0` the product
/// is not rounded again, so a fused `relu(x·W + b)` gives the bits of the unfused sequence
/// (product stored, then `+ b`, then `max(·, 0)`).
#[derive(Clone, Copy, Debug)]
pub struct Linear<A: Activation> {
    /// Scale of the product.
    pub alpha: f32,
    /// Scale of the output's previous value; `0.0` means it is not read.
    pub beta: f32,
    /// `n` floats added per column, or null.
    pub bias: *const f32,
    /// Applied last.
    pub act: A,
}

// SAFETY: the bias pointer is only read, and `Linear`'s contract is that nothing writes the
// bias while a launch that uses it runs, so threads (the simulator's host threads) may share
// and send it like a `&[f32]`.
unsafe impl<A: Activation + Send> Send for Linear<A> {}
// SAFETY: as for `Send`.
unsafe impl<A: Activation + Sync> Sync for Linear<A> {}

impl<A: Activation> Linear<A> {
    /// `act(acc + bias[col])`: a linear layer's bias and activation.
    #[inline(always)]
    pub fn bias_act(bias: *const f32, act: A) -> Self {
        Self {
            alpha: 1.0,
            beta: 0.0,
            bias,
            act,
        }
    }
}

impl<A: Activation> Epilogue for Linear<A> {
    #[inline(always)]
    fn reads_output(&self) -> bool {
        self.beta != 0.0
    }

    #[inline(always)]
    fn apply(&self, _row: u32, col: u32, acc: f32, old: f32) -> f32 {
        let mut v = if self.alpha == 1.0 {
            acc
        } else {
            self.alpha * acc
        };
        if self.beta != 0.0 {
            v = fma(self.beta, old, v);
        }
        if !self.bias.is_null() {
            // SAFETY: `Linear`'s contract: a non-null bias holds `n` floats and col < n.
            v += unsafe { *self.bias.add(col as usize) };
        }
        self.act.apply(v)
    }
}

/// An epilogue made from BLAS's two scalars: what a batched BLAS entry applies.
pub trait AlphaBeta: Epilogue {
    /// The epilogue of `α·acc + β·old`.
    fn alpha_beta(alpha: f32, beta: f32) -> Self;
}

impl AlphaBeta for Linear<Identity> {
    #[inline(always)]
    fn alpha_beta(alpha: f32, beta: f32) -> Self {
        Self {
            alpha,
            beta,
            bias: core::ptr::null(),
            act: Identity,
        }
    }
}

/// `tanh(x)` as `1 − 2 / (e^{2x} + 1)` (its sign restored), from [`exp_f32`]; `|x| ≥ 10`
/// gives `±1` exactly (the exact value rounds to it).
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let ax = x.abs().min(10.0);
    let e = exp_f32(2.0 * ax);
    let t = 1.0 - 2.0 / (e + 1.0);
    if x < 0.0 { -t } else { t }
}

/// `e^x` for `x` in `[-87, 88]` (outside: clamped there), from plain `f32` arithmetic (no
/// library call, so the GPU and the simulator give the same bits): `x = n·ln 2 + r` with
/// `|r| ≤ ln 2 / 2` (Cody–Waite, two-part `ln 2`), `e^r` by its Taylor polynomial to degree
/// 7 in Horner form with FMAs (truncation below `6·10⁻⁹` relative), `2ⁿ` by the exponent
/// bits. Within a few ulp of `e^x`.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    const LOG2_E: f32 = core::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75; // ln 2 to 17 bits: n · LN2_HI is exact for |n| < 128
    const LN2_LO: f32 = 1.428_606_8e-6; // ln 2 − LN2_HI
    let x = x.clamp(-87.0, 88.0);
    // Round to nearest even by adding and removing 1.5 · 2²³ (|x · log2 e| < 2²²).
    const ROUND: f32 = 12_582_912.0;
    let n = (x * LOG2_E + ROUND) - ROUND;
    let r = fma(-n, LN2_LO, fma(-n, LN2_HI, x));
    let mut p = 1.0 / 5040.0;
    p = fma(p, r, 1.0 / 720.0);
    p = fma(p, r, 1.0 / 120.0);
    p = fma(p, r, 1.0 / 24.0);
    p = fma(p, r, 1.0 / 6.0);
    p = fma(p, r, 0.5);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    // n is in [-126, 127], so 2^n is a normal f32.
    p * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    /// `x` spaced evenly over `[lo, hi]`, `n + 1` points.
    fn grid(lo: f32, hi: f32, n: u32) -> impl Iterator<Item = f32> {
        (0..=n).map(move |i| lo + (hi - lo) * i as f32 / n as f32)
    }

    #[test]
    fn exp_is_within_a_few_ulp() {
        for x in grid(-87.0, 88.0, 200_000) {
            let (got, exact) = (exp_f32(x) as f64, (x as f64).exp());
            let rel = ((got - exact) / exact).abs();
            assert!(
                rel < 4.0 * f32::EPSILON as f64,
                "exp({x}) = {got}, not {exact}"
            );
        }
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-1000.0), exp_f32(-87.0));
        assert!(exp_f32(1000.0).is_finite());
    }

    #[test]
    fn tanh_and_gelu_against_f64() {
        for x in grid(-20.0, 20.0, 100_000) {
            let xd = x as f64;
            let t = tanh_f32(x) as f64;
            assert!(
                (t - xd.tanh()).abs() < 4.0 * f32::EPSILON as f64,
                "tanh({x}) = {t}"
            );
            let exact = 0.5
                * xd
                * (1.0
                    + ((2.0 / std::f64::consts::PI).sqrt() * (xd + 0.044715 * xd * xd * xd))
                        .tanh());
            let got = Gelu.apply(x) as f64;
            let bound = (xd.abs() + 1.0) / (1u32 << 20) as f64;
            assert!(
                (got - exact).abs() <= bound,
                "gelu({x}) = {got}, not {exact}"
            );
        }
        assert_eq!(tanh_f32(30.0), 1.0);
        assert_eq!(tanh_f32(-30.0), -1.0);
        assert_eq!(Gelu.apply(0.0), 0.0);
    }

    #[test]
    fn linear_orders_its_operations_as_documented() {
        let bias = [0.25f32, -4.0];
        let e = Linear {
            alpha: 2.0,
            beta: 0.5,
            bias: bias.as_ptr(),
            act: Relu,
        };
        assert!(e.reads_output());
        // relu(2·3 + 0.5·(−2) + (−4)) = relu(1) = 1; column 0: relu(6 − 1 + 0.25).
        assert_eq!(e.apply(0, 1, 3.0, -2.0), 1.0);
        assert_eq!(e.apply(0, 0, 3.0, -2.0), 5.25);
        let plain = Linear::bias_act(core::ptr::null(), Identity);
        assert!(!plain.reads_output());
        assert_eq!(plain.apply(7, 9, 1.5, f32::NAN), 1.5);
        assert_eq!(Store.apply(0, 0, -0.0, 3.0).to_bits(), (-0.0f32).to_bits());
    }
}
