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

/// `n` values in [-1, 1).
fn signed(rng: &mut Rng, n: usize) -> Vec<f32> {
    rng.uniform(n).into_iter().map(|x| 2.0 * x - 1.0).collect()
}

/// A call with random inputs: `pad` floats added to every leading dimension, `batch`
/// products with `extra` floats between them (`shared_b`: stride 0 for `b`).
#[allow(clippy::too_many_arguments)]
pub fn case(
    order: Order, ops: (Op, Op), (m, k, n): (usize, usize, usize), pad: usize, batch: usize,
    extra: usize, shared_b: bool, (alpha, beta): (f32, f32), seed: u64,
) -> Case {
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
    let a = signed(&mut rng, span(order, sa.0, sa.1, lda, batch, stride_a));
    let b = signed(&mut rng, span(order, sb.0, sb.1, ldb, batch, stride_b));
    let c = signed(&mut rng, span(order, m, n, ldc, batch, stride_c));
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

/// The checked cases: every order and layout pair on [`SMALL`] and then the backend's `tiled`
/// shapes (interior tiles with edges), each plain (packed, α = 1, β = 0, one matrix), with
/// odd leading dimensions, α/β and a batch of 3 (every other one sharing `b`), and with
/// leading dimensions and strides that keep 16-byte alignment (the `cp.async` path, where
/// the shape has interior tiles).
pub fn cases(tiled: &[(usize, usize, usize)]) -> Vec<Case> {
    let mut out = vec![];
    let mut seed = 1;
    for order in [Order::RowMajor, Order::ColMajor] {
        for op_a in Op::ALL {
            for op_b in Op::ALL {
                for &shape in SMALL.iter().chain(tiled) {
                    for (pad, batch, extra, shared_b, scale) in [
                        (0, 1, 0, false, (1.0, 0.0)),
                        (3, 3, 5, seed % 2 == 0, (-1.5, 0.75)),
                        (4, 2, 8, false, (0.5, 2.0)),
                    ] {
                        seed += 1;
                        out.push(case(
                            order,
                            (op_a, op_b),
                            shape,
                            pad,
                            batch,
                            extra,
                            shared_b,
                            scale,
                            seed,
                        ));
                    }
                }
            }
        }
    }
    out
}

/// What every rung gives, bit for bit: per output `fma(op(a)[r, i], op(b)[i, c], acc)` for
/// `i` in increasing order from `0.0`, then `α·acc` (unless `α = 1`) and `fma(β, old, ·)`
/// (only if `β ≠ 0`); every other element of `c` unchanged.
pub fn expected_bits(case: &Case) -> Vec<f32> {
    let g = &case.call;
    let p = g.check(case.a.len(), case.b.len(), case.c.len()).unwrap();
    let (a, b) = p.operands(&case.a, &case.b);
    let mut c = case.c.clone();
    for z in 0..p.batch as usize {
        for i in 0..p.m as usize {
            for j in 0..p.n as usize {
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
