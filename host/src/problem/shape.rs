//! Validated matmul shapes: `out[m×n] = a[m×k] · b[k×n]`.

use crate::problem::error::{Error, Result};

/// A matmul shape whose every matrix fits the kernels' 32-bit index arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct MatmulShape {
    pub m: u32,
    pub k: u32,
    pub n: u32,
}

impl MatmulShape {
    /// From the operands' dimensions: `a` is `a_rows × a_cols`, `b` is `b_rows × b_cols`.
    pub fn from_operands(
        a_rows: usize, a_cols: usize, b_rows: usize, b_cols: usize,
    ) -> Result<Self> {
        if a_cols != b_rows {
            return Err(Error::InnerDimMismatch {
                m: a_rows,
                k: a_cols,
                k2: b_rows,
                n: b_cols,
            });
        }
        Self::new(a_rows, a_cols, b_cols)
    }

    /// `m × k` times `k × n`. Zero dimensions are valid (an empty or all-zero product).
    pub fn new(m: usize, k: usize, n: usize) -> Result<Self> {
        for (operand, rows, cols) in [("a", m, k), ("b", k, n), ("out", m, n)] {
            let elements = rows as u128 * cols as u128;
            // Indices up to rows*cols - 1 and row/column counters must fit in u32; the tiled
            // kernels' row counter runs up to a tile (≤ 32) past the last row.
            if elements > u32::MAX as u128
                || rows > (u32::MAX - 64) as usize
                || cols > (u32::MAX - 64) as usize
            {
                return Err(Error::IndexOverflow {
                    operand,
                    rows,
                    cols,
                    elements,
                });
            }
        }
        Ok(Self {
            m: m as u32,
            k: k as u32,
            n: n as u32,
        })
    }

    /// Multiply-adds, `m·n·k` (below 2⁶⁴: `m·k` and `n` are each below 2³²).
    pub fn macs(&self) -> u64 {
        self.m as u64 * self.n as u64 * self.k as u64
    }

    /// Multiply-adds times two.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.k as f64 * self.n as f64
    }

    /// Element counts of `a`, `b` and `out`.
    pub fn lens(&self) -> (usize, usize, usize) {
        let (m, k, n) = (self.m as usize, self.k as usize, self.n as usize);
        (m * k, k * n, m * n)
    }

    /// Checks that host operands have the shape's lengths.
    pub fn check_inputs(&self, a: usize, b: usize) -> Result<()> {
        let (m, k, n) = (self.m as usize, self.k as usize, self.n as usize);
        Error::check_len("a", m, k, a)?;
        Error::check_len("b", k, n, b)
    }

    /// Checks the lengths of `a`, `b` and `out` against the shape.
    pub fn check_buffers(&self, a: usize, b: usize, out: usize) -> Result<()> {
        self.check_inputs(a, b)?;
        Error::check_len("out", self.m as usize, self.n as usize, out)
    }

    /// Whether the product has no elements to compute (`m` or `n` is 0), or is all zeros
    /// (`k` is 0): launching a kernel would be invalid or pointless.
    pub fn is_trivial(&self) -> bool {
        self.m == 0 || self.n == 0 || self.k == 0
    }
}

impl std::fmt::Display for MatmulShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}×{}×{}", self.m, self.k, self.n)
    }
}

/// `M×K×N` (or `MxKxN`), as the command lines and reports write a shape: three decimal
/// dimensions, each possibly 0 ([`MatmulShape::new`]'s rules). The error says what is wrong
/// with the text, naming it.
impl std::str::FromStr for MatmulShape {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let dims: Vec<&str> = text.split(['x', '×']).collect();
        let [m, k, n] = dims[..] else {
            return Err(format!("{text:?} is not m×k×n (e.g. 4096x1024x4096)"));
        };
        let dim = |d: &str| {
            d.trim()
                .parse::<usize>()
                .map_err(|_| format!("{text:?}: {d:?} is not a dimension"))
        };
        Self::new(dim(m)?, dim(k)?, dim(n)?).map_err(|e| format!("{text:?}: {e}"))
    }
}

/// `m × k × n`, which a unit test knows to be a valid shape.
#[cfg(test)]
pub(crate) fn valid(m: usize, k: usize, n: usize) -> MatmulShape {
    MatmulShape::new(m, k, n).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_as_reports_write_them() {
        assert_eq!("3x4x5".parse::<MatmulShape>(), Ok(valid(3, 4, 5)));
        assert_eq!(" 3×4 × 5".parse::<MatmulShape>(), Ok(valid(3, 4, 5)));
        assert_eq!(valid(7, 0, 9).to_string().parse(), Ok(valid(7, 0, 9)));
        for (bad, says) in [
            ("3x4", "is not m×k×n"),
            ("3x4x5x6", "is not m×k×n"),
            ("3x-4x5", "\"-4\" is not a dimension"),
            ("65536x65536x2", "32-bit indices"),
        ] {
            let err = bad.parse::<MatmulShape>().unwrap_err();
            assert!(err.contains(says) && err.contains(bad), "{bad}: {err}");
        }
    }
}
