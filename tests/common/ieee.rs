//! IEEE 754 special values and determinism, checked the same way on any backend: the CPU
//! simulator (`cpu_errors.rs`) and the GPU (`gpu_reliability.rs`).
//!
//! The operands are positive and finite except for a few planted values, so the class of
//! every output element (finite, ±∞, NaN) follows from IEEE 754 alone:
//!
//! | planted | expected |
//! |---|---|
//! | `a[2][5] = NaN` | row 2 all NaN, and only row 2 (plus column 12) |
//! | `a[7][3] = +∞`, `b[3][4] = 0` | row 7 +∞, except `[7][4]`: ∞·0 = NaN |
//! | `a[11][0] = a[11][1] = +∞`, `b[1][9] = −1` | row 11 +∞, except `[11][9]`: ∞ − ∞ = NaN |
//! | `a[15][8] = −∞` | row 15 −∞ |
//! | `b[6][12] = NaN` | column 12 all NaN |
//!
//! Finite elements must be within the dot-product bound of the f64 product for the kernel's
//! precision (`reference::error_bound`: f32, or TF32 inputs with f32 accumulation).

#![allow(dead_code)]

use kernels_gpu_host::backend::Backend;
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::{MatmulKernel, MatmulShape, TileWidth};

/// 19×21×13: partial tiles at every tile width, in every dimension.
pub const SPECIAL_SHAPE: (usize, usize, usize) = (19, 21, 13);

/// What an output element must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Finite,
    PosInf,
    NegInf,
    NaN,
}

impl Class {
    pub fn of(x: f32) -> Self {
        if x.is_nan() {
            Self::NaN
        } else if x == f32::INFINITY {
            Self::PosInf
        } else if x == f32::NEG_INFINITY {
            Self::NegInf
        } else {
            Self::Finite
        }
    }
}

/// Every (kernel, tile width) worth running.
pub fn kernel_widths() -> Vec<(MatmulKernel, TileWidth)> {
    MatmulKernel::ALL
        .into_iter()
        .flat_map(|k| k.tile_widths().iter().map(move |&tw| (k, tw)))
        .collect()
}

/// The operands of the table above: positive values in [0.5, 1.5) and the planted ones.
pub fn special_operands() -> (Vec<f32>, Vec<f32>) {
    let (m, k, n) = SPECIAL_SHAPE;
    let mut rng = Rng::new(0x1eee_0754);
    let mut a: Vec<f32> = rng.uniform(m * k).into_iter().map(|x| x + 0.5).collect();
    let mut b: Vec<f32> = rng.uniform(k * n).into_iter().map(|x| x + 0.5).collect();
    a[2 * k + 5] = f32::NAN;
    a[7 * k + 3] = f32::INFINITY;
    b[3 * n + 4] = 0.0;
    a[11 * k] = f32::INFINITY;
    a[11 * k + 1] = f32::INFINITY;
    b[n + 9] = -1.0;
    a[15 * k + 8] = f32::NEG_INFINITY;
    b[6 * n + 12] = f32::NAN;
    (a, b)
}

/// The class IEEE 754 gives `out[r][c]` for [`special_operands`].
pub fn expected(r: usize, c: usize) -> Class {
    match (r, c) {
        (_, 12) | (2, _) | (7, 4) | (11, 9) => Class::NaN,
        (7, _) | (11, _) => Class::PosInf,
        (15, _) => Class::NegInf,
        _ => Class::Finite,
    }
}

/// Runs `kernel` at `tw` on the special operands and checks every element's class, and
/// the finite ones against the f64 product.
pub fn check_special_values<B: Backend>(
    backend: &B, kernel: MatmulKernel, tw: TileWidth,
) -> Result<(), String> {
    let (m, k, n) = SPECIAL_SHAPE;
    let shape = MatmulShape::new(m, k, n).map_err(|e| e.to_string())?;
    let (a, b) = special_operands();
    let out = backend
        .matmul(kernel, tw, &a, &b, shape)
        .map_err(|e| format!("{kernel} tw{tw}: {e}"))?;
    let mut wrong = vec![];
    for r in 0..m {
        for c in 0..n {
            let got = out[r * n + c];
            let want = expected(r, c);
            if Class::of(got) != want {
                wrong.push(format!("[{r}][{c}] = {got}, expected {want:?}"));
                continue;
            }
            if want == Class::Finite {
                let (exact, scale) = (0..k).fold((0.0f64, 0.0f64), |(s, g), i| {
                    let p = a[r * k + i] as f64 * b[i * n + c] as f64;
                    (s + p, g + p.abs())
                });
                let bound =
                    kernels_gpu_host::check::reference::error_bound(k, kernel.precision()) * scale;
                if (got as f64 - exact).abs() > bound {
                    wrong.push(format!("[{r}][{c}] = {got}, expected {exact} ± {bound}"));
                }
            }
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{kernel} tw{tw} {shape}: {} wrong elements: {}",
            wrong.len(),
            wrong.join("; ")
        ))
    }
}

/// Runs `kernel` at `tw` twice on the same signed random operands and requires
/// bit-identical outputs.
pub fn check_deterministic<B: Backend>(
    backend: &B, kernel: MatmulKernel, tw: TileWidth, (m, k, n): (usize, usize, usize),
) -> Result<(), String> {
    let shape = MatmulShape::new(m, k, n).map_err(|e| e.to_string())?;
    let mut rng = Rng::new(0xde7e_2319);
    let (a, b) = (rng.signed(m * k), rng.signed(k * n));
    let run = || {
        backend
            .matmul(kernel, tw, &a, &b, shape)
            .map(|out| out.iter().map(|x| x.to_bits()).collect::<Vec<u32>>())
            .map_err(|e| format!("{kernel} tw{tw} {shape}: {e}"))
    };
    let (first, second) = (run()?, run()?);
    match first.iter().zip(&second).position(|(x, y)| x != y) {
        None if first.len() == m * n && second.len() == m * n => Ok(()),
        None => Err(format!("{kernel} tw{tw} {shape}: output lengths differ")),
        Some(i) => Err(format!(
            "{kernel} tw{tw} {shape}: element {i} differs between runs: {:#010x} vs {:#010x}",
            first[i], second[i]
        )),
    }
}
