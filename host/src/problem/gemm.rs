//! A GEMM called like cuBLAS: `C = α·op(A)·op(B) + β·C` with either operand transposed,
//! leading dimensions, and strided batches, row-major by default or column-major as cuBLAS.
//!
//! [`Gemm`] describes one call; [`Gemm::check`] validates it against the buffers' lengths
//! (every bad argument is a typed [`Error`] naming it, as cuBLAS returns a status) and gives
//! the row-major [`Problem`] the kernels run. Which kernel runs it is the plan's
//! ([`crate::plan::gemm`]); [`Gpu::gemm_device`](crate::gpu::Gpu::gemm_device) runs it on
//! device buffers, [`Backend::gemm`](crate::backend::Backend::gemm) on host slices (GPU or
//! simulator), and [`gemm_pod`](crate::backend::gemm_pod) on slices of the caller's own
//! `Pod` element type.

pub use crate::problem::error::Order;
use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
pub use kernels_gpu::sgemm::blas::Op;

/// One GEMM call: `C = α·op(A)·op(B) + β·C` for each of `batch` products, `op(A)` being
/// `m × k`, `op(B)` `k × n` and `C` `m × n`.
///
/// Leading dimensions are in elements, between consecutive rows (row-major) or columns
/// (column-major) of the matrix *as stored*: for a row-major `A` with `op = T`, `A` is stored
/// `k × m`, so `lda >= m`. `None` means packed (the stored row or column length). Batch
/// strides are in elements between consecutive products' matrices (`None`: packed, one
/// after the other); a stride of 0 for `A` or `B` uses the same matrix for every product.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gemm {
    pub order: Order,
    pub op_a: Op,
    pub op_b: Op,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: f32,
    pub beta: f32,
    pub lda: Option<usize>,
    pub ldb: Option<usize>,
    pub ldc: Option<usize>,
    pub batch: usize,
    pub stride_a: Option<usize>,
    pub stride_b: Option<usize>,
    pub stride_c: Option<usize>,
}

impl Gemm {
    /// `C = A·B`, row-major and packed, one product.
    pub fn new(m: usize, n: usize, k: usize) -> Self {
        Self {
            order: Order::RowMajor,
            op_a: Op::N,
            op_b: Op::N,
            m,
            n,
            k,
            alpha: 1.0,
            beta: 0.0,
            lda: None,
            ldb: None,
            ldc: None,
            batch: 1,
            stride_a: None,
            stride_b: None,
            stride_c: None,
        }
    }

    /// cuBLAS's `cublasSgemm(transa, transb, m, n, k, α, A, lda, B, ldb, β, C, ldc)`:
    /// column-major, with its leading dimensions.
    #[allow(clippy::too_many_arguments)]
    pub fn cublas(
        op_a: Op, op_b: Op, m: usize, n: usize, k: usize, alpha: f32, lda: usize, ldb: usize,
        beta: f32, ldc: usize,
    ) -> Self {
        Self {
            order: Order::ColMajor,
            op_a,
            op_b,
            alpha,
            beta,
            lda: Some(lda),
            ldb: Some(ldb),
            ldc: Some(ldc),
            ..Self::new(m, n, k)
        }
    }

    /// The same call with `op(A)` and `op(B)`.
    pub fn ops(self, op_a: Op, op_b: Op) -> Self {
        Self { op_a, op_b, ..self }
    }

    /// The same call in `order`.
    pub fn order(self, order: Order) -> Self {
        Self { order, ..self }
    }

    /// The same call with `α` and `β`.
    pub fn scale(self, alpha: f32, beta: f32) -> Self {
        Self {
            alpha,
            beta,
            ..self
        }
    }

    /// The same call with leading dimensions.
    pub fn ld(self, lda: usize, ldb: usize, ldc: usize) -> Self {
        Self {
            lda: Some(lda),
            ldb: Some(ldb),
            ldc: Some(ldc),
            ..self
        }
    }

    /// The same call on `batch` products, packed one after the other.
    pub fn batched(self, batch: usize) -> Self {
        Self { batch, ..self }
    }

    /// The same call on `batch` products `stride_a`, `stride_b`, `stride_c` elements apart
    /// (cuBLAS's `cublasSgemmStridedBatched`).
    pub fn strided(self, batch: usize, stride_a: usize, stride_b: usize, stride_c: usize) -> Self {
        Self {
            batch,
            stride_a: Some(stride_a),
            stride_b: Some(stride_b),
            stride_c: Some(stride_c),
            ..self
        }
    }

    /// Validates the call against the lengths of the buffers `a`, `b` and `c` (in elements)
    /// and gives the row-major problem the kernels run.
    ///
    /// Errors, each naming the argument and its sizes: a leading dimension shorter than
    /// the stored row (or column) or zero ([`Error::LeadingDimension`]); a buffer too short
    /// for its matrices ([`Error::GemmBufferTooShort`]); a `stride_c` that makes two products
    /// write the same element ([`Error::BatchOverlap`]: decided exactly, so interleaved
    /// outputs such as `ldc = 2n` with `stride_c = n` over two products are accepted, as
    /// cuBLAS accepts them; see [`first_shared_element`]); a matrix whose offsets do not fit
    /// the kernels' 32-bit indices, or a dimension too large for them
    /// ([`Error::IndexOverflow`]).
    pub fn check(&self, a: usize, b: usize, c: usize) -> Result<Problem> {
        // Stored matrices as this call's order sees them: (rows, cols) of the storage, where
        // `ld` separates the rows (row-major) or the columns (column-major).
        let (m, n, k) = (self.m, self.n, self.k);
        let stored = |op: Op, rows: usize, cols: usize| match op {
            Op::N => (rows, cols),
            Op::T => (cols, rows),
        };
        let (a_rows, a_cols) = stored(self.op_a, m, k);
        let (b_rows, b_cols) = stored(self.op_b, k, n);
        let operands = [
            ("a", "lda", a_rows, a_cols, self.lda, self.stride_a, a),
            ("b", "ldb", b_rows, b_cols, self.ldb, self.stride_b, b),
            ("c", "ldc", m, n, self.ldc, self.stride_c, c),
        ];
        let mut lds = [0usize; 3];
        let mut strides = [0usize; 3];
        let mut exact = true;
        for (i, (operand, name, rows, cols, ld, stride, len)) in operands.into_iter().enumerate() {
            // The order's "line" is a row (row-major) or a column (column-major).
            let (lines, line) = match self.order {
                Order::RowMajor => (rows, cols),
                Order::ColMajor => (cols, rows),
            };
            if rows.max(cols) > (u32::MAX - 64) as usize {
                return Err(Error::IndexOverflow {
                    operand,
                    rows,
                    cols,
                    elements: rows as u128 * cols as u128,
                });
            }
            let ld = ld.unwrap_or(line.max(1));
            if ld < line.max(1) {
                return Err(Error::LeadingDimension {
                    name,
                    operand,
                    ld,
                    min: line.max(1),
                    rows,
                    cols,
                    order: self.order,
                });
            }
            // Elements one matrix spans: (lines − 1)·ld + line (none if it is empty).
            let span = if lines == 0 || line == 0 {
                0
            } else {
                (lines as u128 - 1) * ld as u128 + line as u128
            };
            if span > u32::MAX as u128 {
                return Err(Error::IndexOverflow {
                    operand,
                    rows,
                    cols,
                    elements: span,
                });
            }
            let stride = stride.unwrap_or(if lines == 0 { 0 } else { lines * ld });
            if operand == "c"
                && let Some(shared) = first_shared_element(lines, line, ld, stride, self.batch)
            {
                return Err(Error::BatchOverlap {
                    stride,
                    ld,
                    batch: self.batch,
                    second: shared.second,
                    offset: shared.offset,
                });
            }
            // The last product's matrix ends at (batch − 1)·stride + span.
            let needed = if self.batch == 0 || span == 0 {
                0
            } else {
                (self.batch as u128 - 1) * stride as u128 + span
            };
            if (len as u128) < needed {
                return Err(Error::GemmBufferTooShort {
                    operand,
                    needed,
                    actual: len,
                    rows,
                    cols,
                    ld,
                    batch: self.batch,
                    stride,
                });
            }
            exact &= len as u128 == needed;
            lds[i] = ld;
            strides[i] = stride;
        }
        if self.batch > u32::MAX as usize {
            return Err(Error::IndexOverflow {
                operand: "batch",
                rows: self.batch,
                cols: 1,
                elements: self.batch as u128,
            });
        }
        let [lda, ldb, ldc] = lds.map(|ld| ld as u32);
        let [stride_a, stride_b, stride_c] = strides.map(|s| s as u64);
        let row_major = Problem {
            op_a: self.op_a,
            op_b: self.op_b,
            m: m as u32,
            n: n as u32,
            k: k as u32,
            lda,
            ldb,
            ldc,
            stride_a,
            stride_b,
            stride_c,
            alpha: self.alpha,
            beta: self.beta,
            batch: self.batch as u32,
            swapped: false,
            exact,
        };
        Ok(match self.order {
            Order::RowMajor => row_major,
            // Cᵀ (n × m, row-major with ld = ldc) = op(B)ᵀ·op(A)ᵀ, where a column-major
            // matrix is its transpose row-major: B's storage is the first operand with B's
            // op, A's the second with A's.
            Order::ColMajor => Problem {
                op_a: row_major.op_b,
                op_b: row_major.op_a,
                m: row_major.n,
                n: row_major.m,
                lda: ldb,
                ldb: lda,
                stride_a: stride_b,
                stride_b: stride_a,
                swapped: true,
                ..row_major
            },
        })
    }
}

/// A checked [`Gemm`] as the row-major kernels run it (a column-major call has its operands
/// swapped: `swapped`, and the first operand is the caller's `b`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Problem {
    pub op_a: Op,
    pub op_b: Op,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub lda: u32,
    pub ldb: u32,
    pub ldc: u32,
    pub stride_a: u64,
    pub stride_b: u64,
    pub stride_c: u64,
    pub alpha: f32,
    pub beta: f32,
    pub batch: u32,
    /// Whether the first operand is the caller's `b` (a column-major call).
    pub swapped: bool,
    /// Whether every buffer holds exactly its matrices (no more elements than they span).
    pub exact: bool,
}

impl Problem {
    /// The caller's operands `(a, b)` in the problem's order: swapped for a column-major call.
    pub fn operands<'x, T: ?Sized>(&self, a: &'x T, b: &'x T) -> (&'x T, &'x T) {
        if self.swapped { (b, a) } else { (a, b) }
    }

    /// The offset of `op(A)[r, c]` of product `z` in the problem's first operand.
    pub fn a_index(&self, z: usize, r: usize, c: usize) -> usize {
        stored_index(self.op_a, self.lda, self.stride_a, z, r, c)
    }

    /// The offset of `op(B)[r, c]` of product `z` in the problem's second operand.
    pub fn b_index(&self, z: usize, r: usize, c: usize) -> usize {
        stored_index(self.op_b, self.ldb, self.stride_b, z, r, c)
    }

    /// The offset of `C[r, c]` of product `z` in the output.
    pub fn c_index(&self, z: usize, r: usize, c: usize) -> usize {
        stored_index(Op::N, self.ldc, self.stride_c, z, r, c)
    }

    /// Whether the call needs no product: `α = 0` or `k = 0` make it `C = β·C`, which
    /// BLAS computes without reading `A` or `B` (so that a NaN or an infinity there does
    /// not reach `C`).
    pub fn scales_only(&self) -> bool {
        self.alpha == 0.0 || self.k == 0
    }

    /// Whether no output is written: an empty output or no products.
    pub fn is_empty(&self) -> bool {
        self.m == 0 || self.n == 0 || self.batch == 0
    }

    /// The plain product the ladder's kernels compute: both `N`, packed, `α = 1`, `β = 0`,
    /// one matrix, in buffers of exactly its lengths. `Some(shape)` if this is one.
    pub fn plain(&self) -> Option<MatmulShape> {
        let packed =
            self.lda == self.k.max(1) && self.ldb == self.n.max(1) && self.ldc == self.n.max(1);
        (self.exact
            && self.op_a == Op::N
            && self.op_b == Op::N
            && packed
            && self.alpha == 1.0
            && self.beta == 0.0
            && self.batch == 1)
            .then(|| MatmulShape::new(self.m as usize, self.k as usize, self.n as usize).ok())
            .flatten()
    }

    /// Multiply-adds times two, over the batch.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64 * self.batch as f64
    }
}

/// Two products of a batch that write the same element: products 0 and `second`, at the
/// element `offset` elements past product 0's first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedElement {
    pub second: usize,
    pub offset: usize,
}

/// Whether two of `batch` outputs `stride` elements apart, each `lines` lines of `line`
/// elements with lines `ld ≥ line` apart, write the same element: the first product that
/// shares one with product 0 (the smallest distance at which any two products do), or
/// `None` where the outputs are disjoint. Exact, in `O(log ld)` steps.
///
/// One output writes the offsets `i·ld + j` (`i < lines`, `j < line`), so two products `d`
/// apart share an element exactly when `t = d·stride` is a difference of two of them,
/// `t = Δi·ld + Δj` with `|Δi| < lines`, `|Δj| < line`. As `line ≤ ld`, that is: `t mod ld`
/// lies within `line − 1` of a multiple of `ld` (the residue is at most `line − 1`, or at
/// least `ld − line + 1`), and `t ≤ span − 1`, where `span = (lines − 1)·ld + line`. The
/// second condition grows with `d`, so the smallest `d ≥ 1` meeting the first decides: it
/// is the least of `ld / gcd(stride, ld)` (a residue of 0) and the first `d` whose residue
/// falls in `[1, line − 1]` or `[ld − line + 1, ld − 1]` (`first_in_window`), and the
/// outputs overlap if and only if it is below `batch` and `d·stride < span`. A stride of at
/// least `span` (the outputs one after the other, or further apart) never overlaps, a
/// stride of 0 always does (with two products or more).
pub fn first_shared_element(
    lines: usize, line: usize, ld: usize, stride: usize, batch: usize,
) -> Option<SharedElement> {
    if batch < 2 || lines == 0 || line == 0 {
        return None;
    }
    let (lines, line, ld, stride) = (lines as u128, line as u128, ld as u128, stride as u128);
    debug_assert!(ld >= line);
    let span = (lines - 1) * ld + line;
    if stride >= span {
        return None;
    }
    let s = stride % ld;
    let d = if s == 0 {
        1
    } else {
        let zero = ld / gcd(s, ld);
        let near = (line >= 2).then(|| {
            let low = first_in_window(s, ld, 1, line - 1);
            let high = first_in_window(s, ld, ld - line + 1, ld - 1);
            low.into_iter().chain(high).min()
        });
        near.flatten().map_or(zero, |d| d.min(zero))
    };
    let t = d * stride;
    if d >= batch as u128 || t >= span {
        return None;
    }
    // Product d's first element is product 0's element (t / ld, t mod ld) if that column
    // is inside; otherwise product 0's first element of the next line is product d's
    // element (0, ld − t mod ld).
    let (q, r) = (t / ld, t % ld);
    let offset = if r < line { t } else { (q + 1) * ld };
    Some(SharedElement {
        second: d as usize,
        offset: offset as usize,
    })
}

/// The smallest `x ≥ 0` with `a·x mod m` in `[l, r]`, if there is one (`0 ≤ l ≤ r < m`,
/// `a < m`; the products stay below `m²`).
///
/// If a multiple of `a` lies in `[l, r]` the first one, `⌈l / a⌉·a`, is reached before
/// `a·x` wraps past `m`. Otherwise `r − l < a`, `l mod a ≥ 1`, and `a·x − m·y` is in
/// `[l, r]` for at most one `x` per wrap count `y`, the first `y` giving the first `x`: it is
/// the first `y` for which `[l + m·y, r + m·y]` holds a multiple of `a`, that is for which
/// `(m mod a)·y mod a` is in `[a − r mod a, a − l mod a]`, the same question for `(m mod a,
/// a)`: Euclid's steps, so `O(log m)` of them.
fn first_in_window(a: u128, m: u128, l: u128, r: u128) -> Option<u128> {
    if l == 0 {
        return Some(0);
    }
    if a == 0 {
        return None;
    }
    let x = l.div_ceil(a);
    if a * x <= r {
        return Some(x);
    }
    let y = first_in_window(m % a, a, a - r % a, a - l % a)?;
    Some((l + m * y).div_ceil(a))
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The offset of element `[r, c]` of `op(X)` for product `z`, `X` stored row-major with
/// leading dimension `ld` and batch stride `stride`.
fn stored_index(op: Op, ld: u32, stride: u64, z: usize, r: usize, c: usize) -> usize {
    let (row, col) = match op {
        Op::N => (r, c),
        Op::T => (c, r),
    };
    z * stride as usize + row * ld as usize + col
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The offsets one output writes.
    fn written(lines: usize, line: usize, ld: usize) -> Vec<usize> {
        (0..lines)
            .flat_map(|i| (0..line).map(move |j| i * ld + j))
            .collect()
    }

    #[test]
    fn the_window_search_matches_a_scan() {
        for m in 1..=24u128 {
            for a in 0..m {
                for l in 0..m {
                    for r in l..m {
                        let scan = (0..=m).find(|x| (l..=r).contains(&(a * x % m)));
                        assert_eq!(
                            first_in_window(a, m, l, r),
                            scan,
                            "{a}·x mod {m} in [{l}, {r}]"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn shared_elements_match_the_written_sets() {
        for ld in 1..=9 {
            for line in 1..=ld {
                for lines in 1..=4 {
                    let one = written(lines, line, ld);
                    let mut is_written = vec![false; lines * ld + 1];
                    one.iter().for_each(|&o| is_written[o] = true);
                    let written_at = |o: usize| is_written.get(o).copied().unwrap_or(false);
                    for stride in 0..=(lines * ld + 3) {
                        // The first product sharing an element with product 0, by enumeration.
                        let scan = (1..6).find_map(|d| {
                            let shared = one
                                .iter()
                                .map(|&o| o + d * stride)
                                .find(|&o| written_at(o))?;
                            Some(SharedElement {
                                second: d,
                                offset: shared,
                            })
                        });
                        for batch in 0..=6 {
                            let want = scan.filter(|s| s.second < batch);
                            let got = first_shared_element(lines, line, ld, stride, batch);
                            // The same product; any shared element of the two will do.
                            assert_eq!(
                                got.map(|s| s.second),
                                want.map(|s| s.second),
                                "{lines} lines of {line}, ld {ld}, stride {stride}, batch {batch}"
                            );
                            // The element is product 0's and product `second`'s.
                            if let Some(s) = got {
                                assert!(written_at(s.offset));
                                assert!(s.offset >= s.second * stride);
                                assert!(written_at(s.offset - s.second * stride));
                            }
                            // Any two products: the same answer as from product 0 (a batch is
                            // the same at every shift).
                            let any = (0..batch).any(|x| {
                                (x + 1..batch)
                                    .any(|y| one.iter().any(|&o| written_at(o + (y - x) * stride)))
                            });
                            assert_eq!(got.is_some(), any);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn interleaved_and_huge_batches_are_decided_by_arithmetic() {
        // ldc = 2n, stride n: two products interleave row by row; a third lands on the
        // first's second row.
        assert_eq!(first_shared_element(5, 8, 16, 8, 2), None);
        assert_eq!(
            first_shared_element(5, 8, 16, 8, 3),
            Some(SharedElement {
                second: 2,
                offset: 16
            })
        );
        // One row each, rows far apart in a huge ld: disjoint whatever the batch.
        assert_eq!(
            first_shared_element(1, 3, 1 << 31, 3, u32::MAX as usize),
            None
        );
        // Columns interleaved within a huge row: product 4096 comes back to column 0 of
        // the next row only after 2^32 / 4096 steps.
        let (ld, s) = (1usize << 32, 1usize << 20);
        assert_eq!(first_shared_element(3, 1, ld, s, 4096), None);
        assert_eq!(
            first_shared_element(3, 1, ld, s, 4097),
            Some(SharedElement {
                second: 4096,
                offset: ld
            })
        );
        // A coprime stride: the residues d·s mod ld first come within line − 1 of 0 at a
        // d only Euclid's steps find quickly.
        let (ld, line, s) = (1_000_003usize, 2, 999_983usize);
        let d = (1..ld).find(|d| {
            let r = d * s % ld;
            r < line || r > ld - line
        });
        let got = first_shared_element(ld, line, ld, s, ld).map(|x| x.second);
        assert_eq!(got, d);
    }
}
