//! The GEMM calls every backend is checked on (simulator and GPU): each order and layout
//! pair, odd shapes (`m`, `n` or `k` = 1, primes, tile edges), odd leading dimensions, α/β
//! and strided batches (a shared `b` included); and the bits each must give.

use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::problem::gemm::{Gemm, Op, Order};

/// One call with its inputs.
pub struct Case {
    pub name: String,
    pub call: Gemm,
    pub a: Vec<f32>,
    pub b: Vec<f32>,
    pub c: Vec<f32>,
}

/// Buffer length of `batch` stored `rows × cols` matrices with leading dimension `ld` and
/// batch stride `stride` in `order`.
fn span(order: Order, rows: usize, cols: usize, ld: usize, batch: usize, stride: usize) -> usize {
    let (lines, line) = match order {
        Order::RowMajor => (rows, cols),
        Order::ColMajor => (cols, rows),
    };
    if batch == 0 || lines == 0 || line == 0 {
        return 0;
    }
    (batch - 1) * stride + (lines - 1) * ld + line
}

/// What [`case`] builds a call from. The default: one packed row-major `A·B` of
/// 1 × 1 × 1, `α = 1`, `β = 0`.
#[derive(Clone, Copy)]
pub struct Spec {
    pub order: Order,
    pub ops: (Op, Op),
    /// `(m, k, n)`.
    pub shape: (usize, usize, usize),
    /// Floats added to every leading dimension.
    pub pad: usize,
    /// Products in the batch.
    pub batch: usize,
    /// Floats between consecutive products.
    pub extra: usize,
    /// Every product reads the same `b` (stride 0).
    pub shared_b: bool,
    /// `(α, β)`.
    pub scale: (f32, f32),
    /// Of the random inputs.
    pub seed: u64,
}

impl Default for Spec {
    fn default() -> Self {
        Self {
            order: Order::RowMajor,
            ops: (Op::N, Op::N),
            shape: (1, 1, 1),
            batch: 1,
            scale: (1.0, 0.0),
            // Nothing between rows or products, nothing shared.
            pad: 0,
            extra: 0,
            shared_b: false,
            seed: 0,
        }
    }
}

/// The call `spec` describes, with random inputs.
pub fn case(spec: Spec) -> Case {
    let Spec {
        order,
        ops,
        shape: (m, k, n),
        pad,
        batch,
        extra,
        shared_b,
        scale: (alpha, beta),
        seed,
    } = spec;
    let stored = |op: Op, r: usize, c: usize| if op == Op::N { (r, c) } else { (c, r) };
    let line = |(r, c): (usize, usize)| match order {
        Order::RowMajor => c,
        Order::ColMajor => r,
    };
    let lines = |(r, c): (usize, usize)| match order {
        Order::RowMajor => r,
        Order::ColMajor => c,
    };
    let (sa, sb, sc) = (stored(ops.0, m, k), stored(ops.1, k, n), (m, n));
    let (lda, ldb, ldc) = (
        line(sa).max(1) + pad,
        line(sb).max(1) + pad,
        line(sc).max(1) + pad,
    );
    let (stride_a, stride_b, stride_c) = (
        lines(sa) * lda + extra,
        if shared_b { 0 } else { lines(sb) * ldb + extra },
        lines(sc) * ldc + extra,
    );
    let call = Gemm::new(m, n, k)
        .order(order)
        .ops(ops.0, ops.1)
        .scale(alpha, beta)
        .ld(lda, ldb, ldc)
        .strided(batch, stride_a, stride_b, stride_c);
    let mut rng = Rng::new(seed);
    let a = rng.signed(span(order, sa.0, sa.1, lda, batch, stride_a));
    let b = rng.signed(span(order, sb.0, sb.1, ldb, batch, stride_b));
    let c = rng.signed(span(order, m, n, ldc, batch, stride_c));
    Case {
        name: format!(
            "{order:?}-{}{}-{m}x{k}x{n}-pad{pad}-batch{batch}{}-a{alpha}-b{beta}",
            ops.0.name(),
            ops.1.name(),
            if shared_b { "-shared-b" } else { "" }
        ),
        call,
        a,
        b,
        c,
    }
}

/// The small shapes every backend's cases start with: `m`, `k` or `n` = 1, and primes.
pub const SMALL: [(usize, usize, usize); 4] = [(1, 1, 1), (5, 1, 7), (1, 37, 1), (37, 29, 41)];

/// Every order with every pair of operand layouts.
fn layouts() -> impl Iterator<Item = (Order, (Op, Op))> {
    [Order::RowMajor, Order::ColMajor]
        .into_iter()
        .flat_map(|order| Op::ALL.into_iter().map(move |a| (order, a)))
        .flat_map(|(order, a)| Op::ALL.into_iter().map(move |b| (order, (a, b))))
}

/// The checked cases: every order and layout pair on [`SMALL`] and then the backend's `tiled`
/// shapes (interior tiles with edges), each plain (packed, α = 1, β = 0, one matrix), with
/// odd leading dimensions, α/β and a batch of 3 (every other one sharing `b`), and with
/// leading dimensions and strides that keep 16-byte alignment (the `cp.async` path, where
/// the shape has interior tiles).
pub fn cases(tiled: &[(usize, usize, usize)]) -> Vec<Case> {
    let mut out = vec![];
    let mut seed = 1;
    for (order, ops) in layouts() {
        for &shape in SMALL.iter().chain(tiled) {
            for (pad, batch, extra, shared_b, scale) in [
                (0, 1, 0, false, (1.0, 0.0)),
                (3, 3, 5, seed % 2 == 0, (-1.5, 0.75)),
                (4, 2, 8, false, (0.5, 2.0)),
            ] {
                seed += 1;
                out.push(case(Spec {
                    order,
                    ops,
                    shape,
                    pad,
                    batch,
                    extra,
                    shared_b,
                    scale,
                    seed,
                }));
            }
        }
    }
    out
}

/// BLAS's corner cases on `shapes`, every order and layout pair: `α = 0` with a NaN in `a`
/// and an infinity in `b` (`β·c`, with `β = 0.5`; and with `β = 0` over a `c` of NaNs,
/// where every output is `+0.0`), and two products whose outputs interleave (`ldc` twice
/// the output's line, `stride_c` one line: disjoint, as cuBLAS allows).
pub fn blas_cases(shapes: &[(usize, usize, usize)]) -> Vec<Case> {
    let mut out = vec![];
    let mut seed = 1000;
    for (order, ops) in layouts() {
        for &(m, k, n) in shapes {
            seed += 3;
            let base = Spec {
                order,
                ops,
                shape: (m, k, n),
                ..Spec::default()
            };
            let mut poisoned = case(Spec {
                pad: 1,
                batch: 2,
                extra: 3,
                scale: (0.0, 0.5),
                seed,
                ..base
            });
            if let (Some(a), Some(b)) = (poisoned.a.first_mut(), poisoned.b.last_mut()) {
                (*a, *b) = (f32::NAN, f32::INFINITY);
            }
            poisoned.name += "-nan-in-a-inf-in-b";
            out.push(poisoned);
            let mut zeros = case(Spec {
                batch: 3,
                extra: 1,
                shared_b: true,
                scale: (0.0, 0.0),
                seed: seed + 1,
                ..base
            });
            zeros.a.iter_mut().for_each(|x| *x = f32::NAN);
            zeros.c.iter_mut().for_each(|x| *x = f32::NAN);
            zeros.name += "-nan-everywhere";
            out.push(zeros);
            let line = match order {
                Order::RowMajor => n,
                Order::ColMajor => m,
            };
            let lines = (m + n) - line;
            let mut woven = case(Spec {
                batch: 2,
                scale: (1.5, -0.5),
                seed: seed + 2,
                ..base
            });
            woven.call.ldc = Some(2 * line.max(1));
            woven.call.stride_c = Some(line);
            let mut rng = Rng::new(seed + 2);
            woven.c = rng.signed(span(order, m, n, 2 * line.max(1), 2, line));
            woven.name = format!("{}-interleaved-{lines}x{line}", woven.name);
            out.push(woven);
        }
    }
    out
}

/// Batches longer than one launch's grid holds in z (`batch` products each), on three
/// layouts, one with `α = 0`.
pub fn long_batches(batch: usize) -> [Case; 3] {
    [
        case(Spec {
            ops: (Op::N, Op::T),
            shape: (5, 3, 7),
            pad: 1,
            batch,
            extra: 2,
            scale: (1.5, 0.5),
            seed: 41,
            ..Spec::default()
        }),
        case(Spec {
            order: Order::ColMajor,
            ops: (Op::T, Op::N),
            shape: (9, 17, 2),
            batch,
            shared_b: true,
            seed: 42,
            ..Spec::default()
        }),
        case(Spec {
            shape: (2, 3, 2),
            batch,
            scale: (0.0, 2.0),
            seed: 43,
            ..Spec::default()
        }),
    ]
}

/// What every rung gives, bit for bit: per output `fma(op(a)[r, i], op(b)[i, c], acc)` for
/// `i` in increasing order from `0.0`, then `α·acc` (unless `α = 1`) and `fma(β, old, ·)`
/// (only if `β ≠ 0`); where `α = 0` or `k = 0`, BLAS's `β·old` (`+0.0` for `β = 0`, `old`
/// for `β = 1`) with neither operand read; every other element of `c` unchanged.
pub fn expected_bits(case: &Case) -> Vec<f32> {
    let g = &case.call;
    let p = g.check(case.a.len(), case.b.len(), case.c.len()).unwrap();
    let (a, b) = p.operands(&case.a, &case.b);
    let mut c = case.c.clone();
    for z in 0..p.batch as usize {
        for i in 0..p.m as usize {
            for j in 0..p.n as usize {
                if p.alpha == 0.0 || p.k == 0 {
                    let idx = p.c_index(z, i, j);
                    if p.beta != 1.0 {
                        c[idx] = if p.beta == 0.0 { 0.0 } else { p.beta * c[idx] };
                    }
                    continue;
                }
                let acc = (0..p.k as usize).fold(0.0f32, |acc, q| {
                    a[p.a_index(z, i, q)].mul_add(b[p.b_index(z, q, j)], acc)
                });
                let idx = p.c_index(z, i, j);
                let mut v = if p.alpha == 1.0 { acc } else { p.alpha * acc };
                if p.beta != 0.0 {
                    v = p.beta.mul_add(c[idx], v);
                }
                c[idx] = v;
            }
        }
    }
    c
}
