//! Checks made before the driver is called, and the launch each problem gets: what the
//! cudarc host checks, decided from the catalogue's rows alone.

use crate::kernel::Kernel;
use kernels_gpu::catalogue::{Extent, KernelSpec, ParamType};
use kernels_gpu::{reduce, sliding};
use nvptx_device::launch::Launch;
use std::fmt;

/// A problem or argument list the kernels cannot be launched with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// A buffer whose length is not the one the sizes imply.
    Length {
        /// Which buffer.
        operand: &'static str,
        /// The length the sizes imply.
        expected: usize,
        /// Its length.
        actual: usize,
    },
    /// Sizes beyond the kernels' 32-bit index arithmetic.
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// How many elements it has.
        elements: u128,
    },
    /// The arguments a launcher passes are not the entry point's parameters.
    Params {
        /// The entry point.
        entry: &'static str,
        /// Its parameters, from the catalogue.
        expected: Vec<ParamType>,
        /// What the launcher passes.
        actual: Vec<ParamType>,
    },
    /// A kernel asked to do another operation's work (a sum given to a matmul launcher).
    WrongOperation {
        /// The entry point.
        entry: &'static str,
        /// The operation asked for.
        operation: &'static str,
    },
    /// A sliding window of no elements.
    EmptyWindow {
        /// The input's length.
        len: usize,
    },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Length {
                operand,
                expected,
                actual,
            } => write!(
                f,
                "`{operand}` has {actual} elements; the sizes given need {expected}"
            ),
            Self::TooLarge { what, elements } => write!(
                f,
                "{what} has {elements} elements, beyond the kernels' 32-bit indices"
            ),
            Self::Params {
                entry,
                expected,
                actual,
            } => write!(
                f,
                "`{entry}` takes {expected:?}, but the launcher passes {actual:?}"
            ),
            Self::WrongOperation { entry, operation } => {
                write!(f, "`{entry}` does not compute a {operation}")
            }
            Self::EmptyWindow { len } => {
                write!(f, "a sliding window of 0 elements (input of {len})")
            }
        }
    }
}

impl std::error::Error for PlanError {}

/// [`PlanError::Params`] unless `actual` is `spec`'s parameter list.
pub fn check_params(spec: &KernelSpec, actual: &[ParamType]) -> Result<(), PlanError> {
    let expected: Vec<ParamType> = spec.params.iter().map(|p| p.ty).collect();
    if expected != actual {
        return Err(PlanError::Params {
            entry: spec.entry,
            expected,
            actual: actual.to_vec(),
        });
    }
    Ok(())
}

/// The catalogue row of `kernel`, which must compute `operation` ([`Kernel::operation`]),
/// checked against the arguments its launcher passes.
fn checked_spec(
    kernel: Kernel, operation: &'static str, args: &[ParamType],
) -> Result<&'static KernelSpec, PlanError> {
    let spec = kernel.spec();
    if kernel.operation() != operation {
        return Err(PlanError::WrongOperation {
            entry: spec.entry,
            operation,
        });
    }
    check_params(spec, args)?;
    Ok(spec)
}

fn check_len(operand: &'static str, expected: usize, actual: usize) -> Result<(), PlanError> {
    if expected != actual {
        return Err(PlanError::Length {
            operand,
            expected,
            actual,
        });
    }
    Ok(())
}

fn fits_u32(what: &'static str, elements: u128) -> Result<u32, PlanError> {
    u32::try_from(elements).map_err(|_| PlanError::TooLarge { what, elements })
}

use ParamType::{ConstF32Ptr, MutF32Ptr, U32};

/// The arguments every matmul entry takes: `(a, b, out, m, n, k)`; the lecture's
/// run-time-width kernel adds its tile width.
pub const MATMUL_ARGS: [ParamType; 6] = [ConstF32Ptr, ConstF32Ptr, MutF32Ptr, U32, U32, U32];

/// One matmul launch, checked: `out[m×n] = a[m×k] · b[k×n]`, row-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulPlan {
    /// Rows of `a` and `out`.
    pub m: u32,
    /// Columns of `a`, rows of `b`.
    pub k: u32,
    /// Columns of `b` and `out`.
    pub n: u32,
    /// `None` where there is nothing to compute (`out` is then all zeros: an empty product,
    /// or `k = 0`).
    pub launch: Option<Launch>,
    /// The tile width passed as a last argument, for the entry that takes one.
    pub tile_width_arg: Option<u32>,
}

impl MatmulPlan {
    /// Checks `kernel`, the sizes and the buffers' lengths `(a, b, out)` and computes the
    /// launch from the kernel's catalogue row.
    pub fn new(
        kernel: Kernel, (m, k, n): (usize, usize, usize), (a, b, out): (usize, usize, usize),
    ) -> Result<Self, PlanError> {
        // The lecture's run-time-width kernel takes its tile width last.
        let tile_width_arg = match kernel {
            Kernel::Lecture(c) if c.spec.params.last().is_some_and(|p| p.name == "tw") => {
                Some(c.tile_width)
            }
            _ => None,
        };
        let mut args = MATMUL_ARGS.to_vec();
        args.extend(tile_width_arg.map(|_| U32));
        let spec = checked_spec(kernel, "matrix product", &args)?;
        let product = |x: usize, y: usize| x as u128 * y as u128;
        let (m32, k32, n32) = (
            fits_u32("m", m as u128)?,
            fits_u32("k", k as u128)?,
            fits_u32("n", n as u128)?,
        );
        fits_u32("a (m·k)", product(m, k))?;
        fits_u32("b (k·n)", product(k, n))?;
        fits_u32("out (m·n)", product(m, n))?;
        check_len("a", m * k, a)?;
        check_len("b", k * n, b)?;
        check_len("out", m * n, out)?;
        let trivial = m == 0 || n == 0 || k == 0;
        let extent = Extent::Matrix {
            rows: m32,
            cols: n32,
        };
        Ok(Self {
            m: m32,
            k: k32,
            n: n32,
            launch: (!trivial).then(|| spec.launch(extent, 0)),
            tile_width_arg,
        })
    }

    /// Multiply-adds counted as two operations.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.k as f64 * self.n as f64
    }
}

/// The arguments of the sums: `(input, n, partials)`.
pub const SUM_ARGS: [ParamType; 3] = [ConstF32Ptr, U32, MutF32Ptr];

/// Floats of the partials buffer a sum needs: one per first-pass block at most.
pub const SUM_PARTIALS: usize = reduce::MAX_BLOCKS as usize;

/// One pass of a sum: `n` inputs, one partial per block of `launch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SumPass {
    /// Inputs read by this pass.
    pub n: u32,
    /// Its launch.
    pub launch: Launch,
    /// Whether it reads the input (else the partials) and writes the partials (else the
    /// result).
    pub first: bool,
}

/// The passes of a sum of `len` inputs with `kernel`: one pass of blocks over the input
/// into partials, then one block over the partials into the result; a single pass where
/// one block suffices, none for an empty input (the sum is 0).
pub fn sum_passes(kernel: Kernel, len: usize) -> Result<Vec<SumPass>, PlanError> {
    let spec = checked_spec(kernel, "sum", &SUM_ARGS)?;
    // The kernels' index arithmetic runs a vector of loads past the end of the input.
    let limit = u32::MAX - reduce::BLOCK * 4 * reduce::UNROLL;
    let n = u32::try_from(len)
        .ok()
        .filter(|&n| n <= limit)
        .ok_or(PlanError::TooLarge {
            what: "the input",
            elements: len as u128,
        })?;
    if n == 0 {
        return Ok(vec![]);
    }
    let first = spec.launch(Extent::Items(n), 0);
    let blocks = first.grid.x;
    if blocks == 1 {
        return Ok(vec![SumPass {
            n,
            launch: first,
            first: false,
        }]);
    }
    Ok(vec![
        SumPass {
            n,
            launch: first,
            first: true,
        },
        SumPass {
            n: blocks,
            launch: spec.launch(Extent::Items(blocks), 0),
            first: false,
        },
    ])
}

/// The arguments of the sliding averages: `(a, n, window, out)`.
pub const SLIDING_ARGS: [ParamType; 4] = [ConstF32Ptr, U32, U32, MutF32Ptr];

/// One sliding-average launch, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlidingPlan {
    /// Inputs.
    pub n: u32,
    /// Elements per window.
    pub window: u32,
    /// `None` where no window fits (`window > n`): nothing to compute.
    pub launch: Option<Launch>,
}

impl SlidingPlan {
    /// Windows of `window` over `len` inputs into `out_len` outputs, which must be
    /// [`SlidingPlan::outputs`]. The shared kernel's tile grows with the window: a window too
    /// large for a block's shared memory gets a launch that the limit check refuses.
    pub fn new(
        kernel: Kernel, len: usize, window: usize, out_len: usize,
    ) -> Result<Self, PlanError> {
        let spec = checked_spec(kernel, "sliding average", &SLIDING_ARGS)?;
        if window == 0 {
            return Err(PlanError::EmptyWindow { len });
        }
        // Indices up to n + window + a block's halo must fit u32.
        let limit = (u32::MAX - 2 * sliding::BLOCK) as u128;
        if len as u128 + window as u128 > limit {
            return Err(PlanError::TooLarge {
                what: "input plus window",
                elements: len as u128 + window as u128,
            });
        }
        let (n, window) = (len as u32, window as u32);
        let outputs = (n + 1).saturating_sub(window);
        check_len("out", outputs as usize, out_len)?;
        Ok(Self {
            n,
            window,
            launch: (outputs > 0).then(|| spec.launch(Extent::Items(outputs), window)),
        })
    }

    /// Windows that fit: `n - window + 1`, or 0.
    pub fn outputs(&self) -> u32 {
        (self.n + 1).saturating_sub(self.window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvptx_device::launch::{Limit, LimitError, Limits};
    use nvptx_device::thread::Dim3;

    fn lecture(name: &str, tw: u32) -> Kernel {
        Kernel::lecture()
            .find(|k| k.name() == name && matches!(k, Kernel::Lecture(c) if c.tile_width == tw))
            .unwrap()
    }

    #[test]
    fn matmul_launch_comes_from_the_catalogue_row() {
        let p =
            MatmulPlan::new(lecture("tiled-static", 16), (33, 7, 65), (231, 455, 2145)).unwrap();
        let l = p.launch.unwrap();
        assert_eq!(
            (l.grid, l.block, l.dynamic_shared_bytes),
            (Dim3::xy(5, 3), Dim3::xy(16, 16), 0)
        );
        assert_eq!(p.tile_width_arg, None);
        // The run-time-width kernel gets its width as an argument, and its dynamic tiles.
        let p =
            MatmulPlan::new(lecture("tiled-dynamic", 32), (33, 7, 65), (231, 455, 2145)).unwrap();
        assert_eq!(p.tile_width_arg, Some(32));
        assert_eq!(p.launch.unwrap().dynamic_shared_bytes, 2 * 32 * 32 * 4);
        let sgemm = Kernel::by_name("sgemm-multistage-128x128x16-w64x32").unwrap();
        let l = MatmulPlan::new(sgemm, (129, 1, 255), (129, 255, 129 * 255))
            .unwrap()
            .launch
            .unwrap();
        assert_eq!((l.grid, l.block), (Dim3::xy(2, 2), Dim3::x(256)));
    }

    #[test]
    fn bad_matmul_arguments_are_named() {
        let k = lecture("naive", 16);
        assert_eq!(
            MatmulPlan::new(k, (2, 3, 4), (6, 11, 8)),
            Err(PlanError::Length {
                operand: "b",
                expected: 12,
                actual: 11
            })
        );
        assert_eq!(
            MatmulPlan::new(k, (1 << 16, 1 << 16, 1), (0, 0, 0)),
            Err(PlanError::TooLarge {
                what: "a (m·k)",
                elements: 1 << 32
            })
        );
        let sum = Kernel::by_name("sum-tree").unwrap();
        assert!(matches!(
            MatmulPlan::new(sum, (1, 1, 1), (1, 1, 1)),
            Err(PlanError::WrongOperation { .. })
        ));
        // Nothing to launch: out is zeros.
        assert_eq!(
            MatmulPlan::new(k, (3, 0, 5), (0, 0, 15)).unwrap().launch,
            None
        );
    }

    #[test]
    fn argument_lists_are_checked_against_the_parameters() {
        let spec = Kernel::by_name("sum-warp").unwrap().spec();
        assert_eq!(check_params(spec, &SUM_ARGS), Ok(()));
        assert_eq!(
            check_params(spec, &[ConstF32Ptr, U32]),
            Err(PlanError::Params {
                entry: "reduce_sum_warp",
                expected: SUM_ARGS.to_vec(),
                actual: vec![ConstF32Ptr, U32]
            })
        );
    }

    #[test]
    fn sums_take_one_or_two_passes() {
        let k = Kernel::by_name("sum-tree").unwrap();
        assert_eq!(sum_passes(k, 0), Ok(vec![]));
        let one = sum_passes(k, 5).unwrap();
        assert_eq!(
            (one.len(), one[0].first, one[0].launch.grid),
            (1, false, Dim3::x(1))
        );
        let two = sum_passes(k, 1 << 28).unwrap();
        assert_eq!(two.len(), 2);
        assert_eq!(two[0].launch.grid, Dim3::x(reduce::MAX_BLOCKS));
        assert_eq!(
            (two[1].n, two[1].launch.grid),
            (reduce::MAX_BLOCKS, Dim3::x(1))
        );
        assert!(two[0].launch.grid.x as usize <= SUM_PARTIALS);
        assert!(matches!(
            sum_passes(k, u32::MAX as usize),
            Err(PlanError::TooLarge { .. })
        ));
    }

    #[test]
    fn sliding_windows_are_checked_and_a_large_one_is_refused_by_the_limits() {
        let shared = Kernel::by_name("sliding-shared").unwrap();
        assert_eq!(
            SlidingPlan::new(shared, 10, 0, 0),
            Err(PlanError::EmptyWindow { len: 10 })
        );
        assert_eq!(
            SlidingPlan::new(shared, 10, 3, 7),
            Err(PlanError::Length {
                operand: "out",
                expected: 8,
                actual: 7
            })
        );
        assert_eq!(SlidingPlan::new(shared, 3, 4, 0).unwrap().launch, None);
        // 60000 floats of window do not fit any GPU's shared memory (at most 227 KiB).
        let p = SlidingPlan::new(shared, 100_000, 60_000, 40_001).unwrap();
        let refused = Limits::CUDA.check(&p.launch.unwrap(), 0);
        assert!(matches!(
            refused,
            Err(LimitError::Exceeds {
                what: Limit::SharedBytesPerBlock,
                ..
            })
        ));
    }
}
