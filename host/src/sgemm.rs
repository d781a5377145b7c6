//! The SGEMM ladder in the kernel catalogue: which entry point of `kernels_gpu::sgemm` each
//! [`SgemmKernel`] is, how it is launched, and the autotuned choice among the top rungs.
//!
//! They join the lecture's kernels as [`MatmulKernel::Sgemm`], so the CLI's `--kernel`, the
//! simulator and GPU tests and the bench's contenders all pick them up. None has a tile
//! width: each entry point is one compile-time configuration (block tile, warp tile, thread
//! tile), named in its entry.

use crate::error::Result;
use crate::kernels::{DeviceLimits, Launch, MatmulKernel};
use crate::shape::MatmulShape;
use kernels_gpu::sgemm::{
    Geometry, blocktiling_1d, blocktiling_2d, coalesced, double_buffered, multistage,
    shared_blocking, vectorized, warptiling,
};
use kernels_gpu::thread::Dim3;

/// One SGEMM entry point, lowest rung first, or the autotuned choice among the top rungs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SgemmKernel {
    /// Rung 1: one output per thread, coalesced global accesses.
    Coalesced,
    /// Rung 2: shared-memory tiles of `a` and `b`.
    SharedBlocking,
    /// Rung 3: a column of 8 outputs per thread.
    Blocktiling1d,
    /// Rung 4: an 8 × 8 register tile per thread.
    Blocktiling2d,
    /// Rung 5: 16-byte loads and stores, transposed `a` tile.
    Vectorized,
    /// Rung 6: warp tiles, 128 threads with 128 outputs each.
    Warptiling128x128x16W64x64,
    /// Rung 6: warp tiles, 256 threads with 64 outputs each.
    Warptiling128x128x8W64x32,
    /// Rung 7 (double-buffered warp tiles): 256 threads, `BK = 8`; the default.
    DoubleBuffered128x128x8W64x32,
    /// Rung 7: 256 threads, `BK = 16`.
    DoubleBuffered128x128x16W64x32,
    /// Rung 7: 256 threads, 2 × 2 steps of 4 × 4 thread tiles.
    DoubleBuffered128x128x8W32x64,
    /// Rung 7: 128 threads with 128 outputs each.
    DoubleBuffered128x128x16W64x64,
    /// Rung 7: 64 × 128 block tiles, 128 threads.
    DoubleBuffered64x128x16W32x64,
    /// Rung 7 tuned: 128 × 256 block tiles grouped by 8 block rows for L2 reuse.
    DoubleBufferedSwizzled128x256x8W64x64,
    /// Rung 7 tuned: `BK = 16`, padded conflict-free `a` tile, read-only global loads.
    DoubleBufferedPadded128x128x16W64x32,
    /// Rung 7 tuned: 128 × 256 block tiles, 256 threads with 8 × 16 outputs each.
    DoubleBufferedPadded128x256x8W64x64,
    /// Rung 7 tuned: 256 × 128 block tiles, 256 threads with 16 × 8 outputs each.
    DoubleBufferedPadded256x128x8W64x64,
    /// Rung 7 tuned, `BK = 16`, blocks grouped by 8 block rows for L2 reuse.
    DoubleBufferedSwizzled128x128x16W64x32,
    /// Rung 7 tuned: `BK = 16`, 2 × 2 steps of 4 × 4 thread tiles, padded `a` tile, read-only loads.
    DoubleBufferedPadded128x128x16W32x64,
    /// Rung 8: as the padded 128 × 128 × 16 rung 7, the `b` tiles through a 3-stage
    /// `cp.async` ring.
    Multistage128x128x16W64x32,
    /// Rung 8: [`Self::Multistage128x128x16W64x32`] with blocks grouped by 8 block rows.
    MultistageSwizzled128x128x16W64x32,
    /// The fastest of [`SgemmKernel::TUNED`] for the shape on the present GPU
    /// ([`crate::autotune`]); [`SgemmKernel::DEFAULT`] in the simulator.
    Autotuned,
}

/// An entry point as the simulator calls it: `(a, b, out, m, n, k)`.
pub(crate) type SimEntry = unsafe fn(*const f32, *const f32, *mut f32, u32, u32, u32);

impl SgemmKernel {
    /// Every SGEMM kernel, lowest rung first, the autotuned dispatch last.
    pub const ALL: [Self; 21] = [
        Self::Coalesced,
        Self::SharedBlocking,
        Self::Blocktiling1d,
        Self::Blocktiling2d,
        Self::Vectorized,
        Self::Warptiling128x128x16W64x64,
        Self::Warptiling128x128x8W64x32,
        Self::DoubleBuffered128x128x8W64x32,
        Self::DoubleBuffered128x128x16W64x32,
        Self::DoubleBuffered128x128x8W32x64,
        Self::DoubleBuffered128x128x16W64x64,
        Self::DoubleBuffered64x128x16W32x64,
        Self::DoubleBufferedSwizzled128x256x8W64x64,
        Self::DoubleBufferedPadded128x128x16W64x32,
        Self::DoubleBufferedPadded128x256x8W64x64,
        Self::DoubleBufferedPadded256x128x8W64x64,
        Self::DoubleBufferedSwizzled128x128x16W64x32,
        Self::DoubleBufferedPadded128x128x16W32x64,
        Self::Multistage128x128x16W64x32,
        Self::MultistageSwizzled128x128x16W64x32,
        Self::Autotuned,
    ];

    /// The configurations the autotuner times: the top two rungs, rung 7's tuned variants
    /// (padded `a` tile, read-only loads, larger tiles, block swizzle) last.
    pub const TUNED: [Self; 15] = [
        Self::DoubleBuffered128x128x8W64x32,
        Self::DoubleBuffered128x128x16W64x32,
        Self::DoubleBuffered128x128x8W32x64,
        Self::DoubleBuffered128x128x16W64x64,
        Self::DoubleBuffered64x128x16W32x64,
        Self::Warptiling128x128x16W64x64,
        Self::Warptiling128x128x8W64x32,
        Self::DoubleBufferedPadded128x128x16W64x32,
        Self::DoubleBufferedPadded128x128x16W32x64,
        Self::DoubleBufferedSwizzled128x256x8W64x64,
        Self::DoubleBufferedPadded128x256x8W64x64,
        Self::DoubleBufferedPadded256x128x8W64x64,
        Self::DoubleBufferedSwizzled128x128x16W64x32,
        Self::Multistage128x128x16W64x32,
        Self::MultistageSwizzled128x128x16W64x32,
    ];

    /// What [`SgemmKernel::Autotuned`] runs where nothing is timed: the simulator, and the
    /// launch shape it reports before tuning.
    pub const DEFAULT: Self = Self::DoubleBuffered128x128x8W64x32;

    /// The name on the command line and in reports: the entry point's, with dashes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Coalesced => "sgemm-coalesced-32",
            Self::SharedBlocking => "sgemm-shared-blocking-32",
            Self::Blocktiling1d => "sgemm-blocktiling-1d-64x64x8-tm8",
            Self::Blocktiling2d => "sgemm-blocktiling-2d-128x128x8-8x8",
            Self::Vectorized => "sgemm-vectorized-128x128x8-8x8",
            Self::Warptiling128x128x16W64x64 => "sgemm-warptiling-128x128x16-w64x64",
            Self::Warptiling128x128x8W64x32 => "sgemm-warptiling-128x128x8-w64x32",
            Self::DoubleBuffered128x128x8W64x32 => "sgemm-double-buffered-128x128x8-w64x32",
            Self::DoubleBuffered128x128x16W64x32 => "sgemm-double-buffered-128x128x16-w64x32",
            Self::DoubleBuffered128x128x8W32x64 => "sgemm-double-buffered-128x128x8-w32x64",
            Self::DoubleBuffered128x128x16W64x64 => "sgemm-double-buffered-128x128x16-w64x64",
            Self::DoubleBuffered64x128x16W32x64 => "sgemm-double-buffered-64x128x16-w32x64",
            Self::DoubleBufferedSwizzled128x256x8W64x64 => {
                "sgemm-double-buffered-swizzled-128x256x8-w64x64"
            }
            Self::DoubleBufferedPadded128x128x16W64x32 => {
                "sgemm-double-buffered-padded-128x128x16-w64x32"
            }
            Self::DoubleBufferedPadded128x256x8W64x64 => {
                "sgemm-double-buffered-padded-128x256x8-w64x64"
            }
            Self::DoubleBufferedPadded256x128x8W64x64 => {
                "sgemm-double-buffered-padded-256x128x8-w64x64"
            }
            Self::DoubleBufferedSwizzled128x128x16W64x32 => {
                "sgemm-double-buffered-swizzled-128x128x16-w64x32"
            }
            Self::DoubleBufferedPadded128x128x16W32x64 => {
                "sgemm-double-buffered-padded-128x128x16-w32x64"
            }
            Self::Multistage128x128x16W64x32 => "sgemm-multistage-128x128x16-w64x32",
            Self::MultistageSwizzled128x128x16W64x32 => {
                "sgemm-multistage-swizzled-128x128x16-w64x32"
            }
            Self::Autotuned => "sgemm-autotuned",
        }
    }

    /// The entry point's launch geometry ([`SgemmKernel::DEFAULT`]'s for the autotuned one).
    pub fn geometry(self) -> Geometry {
        match self {
            Self::Coalesced => coalesced::GEOMETRY_32,
            Self::SharedBlocking => shared_blocking::GEOMETRY_32,
            Self::Blocktiling1d => blocktiling_1d::GEOMETRY_64X64X8_TM8,
            Self::Blocktiling2d => blocktiling_2d::GEOMETRY_128X128X8_8X8,
            Self::Vectorized => vectorized::GEOMETRY_128X128X8_8X8,
            Self::Warptiling128x128x16W64x64 => warptiling::GEOMETRY_128X128X16_W64X64,
            Self::Warptiling128x128x8W64x32 => warptiling::GEOMETRY_128X128X8_W64X32,
            Self::DoubleBuffered128x128x8W64x32 => double_buffered::GEOMETRY_128X128X8_W64X32,
            Self::DoubleBuffered128x128x16W64x32 => double_buffered::GEOMETRY_128X128X16_W64X32,
            Self::DoubleBuffered128x128x8W32x64 => double_buffered::GEOMETRY_128X128X8_W32X64,
            Self::DoubleBuffered128x128x16W64x64 => double_buffered::GEOMETRY_128X128X16_W64X64,
            Self::DoubleBuffered64x128x16W32x64 => double_buffered::GEOMETRY_64X128X16_W32X64,
            Self::DoubleBufferedSwizzled128x256x8W64x64 => {
                double_buffered::GEOMETRY_SWIZZLED_128X256X8_W64X64
            }
            Self::DoubleBufferedPadded128x128x16W64x32 => {
                double_buffered::GEOMETRY_PADDED_128X128X16_W64X32
            }
            Self::DoubleBufferedPadded128x256x8W64x64 => {
                double_buffered::GEOMETRY_PADDED_128X256X8_W64X64
            }
            Self::DoubleBufferedPadded256x128x8W64x64 => {
                double_buffered::GEOMETRY_PADDED_256X128X8_W64X64
            }
            Self::DoubleBufferedSwizzled128x128x16W64x32 => {
                double_buffered::GEOMETRY_SWIZZLED_128X128X16_W64X32
            }
            Self::DoubleBufferedPadded128x128x16W32x64 => {
                double_buffered::GEOMETRY_PADDED_128X128X16_W32X64
            }
            Self::Multistage128x128x16W64x32 => multistage::GEOMETRY_128X128X16_W64X32,
            Self::MultistageSwizzled128x128x16W64x32 => {
                multistage::GEOMETRY_SWIZZLED_128X128X16_W64X32
            }
            Self::Autotuned => Self::DEFAULT.geometry(),
        }
    }

    /// The PTX entry point.
    pub fn entry(self) -> &'static str {
        self.geometry().entry
    }

    /// The entry point as the simulator calls it.
    pub(crate) fn sim_entry(self) -> SimEntry {
        match self {
            Self::Coalesced => coalesced::entry::sgemm_coalesced_32,
            Self::SharedBlocking => shared_blocking::entry::sgemm_shared_blocking_32,
            Self::Blocktiling1d => blocktiling_1d::entry::sgemm_blocktiling_1d_64x64x8_tm8,
            Self::Blocktiling2d => blocktiling_2d::entry::sgemm_blocktiling_2d_128x128x8_8x8,
            Self::Vectorized => vectorized::entry::sgemm_vectorized_128x128x8_8x8,
            Self::Warptiling128x128x16W64x64 => {
                warptiling::entry::sgemm_warptiling_128x128x16_w64x64
            }
            Self::Warptiling128x128x8W64x32 => warptiling::entry::sgemm_warptiling_128x128x8_w64x32,
            Self::DoubleBuffered128x128x8W64x32 => {
                double_buffered::entry::sgemm_double_buffered_128x128x8_w64x32
            }
            Self::DoubleBuffered128x128x16W64x32 => {
                double_buffered::entry::sgemm_double_buffered_128x128x16_w64x32
            }
            Self::DoubleBuffered128x128x8W32x64 => {
                double_buffered::entry::sgemm_double_buffered_128x128x8_w32x64
            }
            Self::DoubleBuffered128x128x16W64x64 => {
                double_buffered::entry::sgemm_double_buffered_128x128x16_w64x64
            }
            Self::DoubleBuffered64x128x16W32x64 => {
                double_buffered::entry::sgemm_double_buffered_64x128x16_w32x64
            }
            Self::DoubleBufferedSwizzled128x256x8W64x64 => {
                double_buffered::entry::sgemm_double_buffered_swizzled_128x256x8_w64x64
            }
            Self::DoubleBufferedPadded128x128x16W64x32 => {
                double_buffered::entry::sgemm_double_buffered_padded_128x128x16_w64x32
            }
            Self::DoubleBufferedPadded128x256x8W64x64 => {
                double_buffered::entry::sgemm_double_buffered_padded_128x256x8_w64x64
            }
            Self::DoubleBufferedPadded256x128x8W64x64 => {
                double_buffered::entry::sgemm_double_buffered_padded_256x128x8_w64x64
            }
            Self::DoubleBufferedSwizzled128x128x16W64x32 => {
                double_buffered::entry::sgemm_double_buffered_swizzled_128x128x16_w64x32
            }
            Self::DoubleBufferedPadded128x128x16W32x64 => {
                double_buffered::entry::sgemm_double_buffered_padded_128x128x16_w32x64
            }
            Self::Multistage128x128x16W64x32 => {
                multistage::entry::sgemm_multistage_128x128x16_w64x32
            }
            Self::MultistageSwizzled128x128x16W64x32 => {
                multistage::entry::sgemm_multistage_swizzled_128x128x16_w64x32
            }
            Self::Autotuned => Self::DEFAULT.sim_entry(),
        }
    }

    /// The launch for `shape`: a 1D block of `threads` per `bm × bn` output tile, on a
    /// `cdiv(n, bn) × cdiv(m, bm)` grid, no dynamic shared memory; checked against `limits`
    /// with the kernel's static shared memory.
    pub fn launch_within(self, shape: &MatmulShape, limits: &DeviceLimits) -> Result<Launch> {
        let g = self.geometry();
        let launch = Launch {
            grid: Dim3::xy(shape.n.div_ceil(g.bn), shape.m.div_ceil(g.bm)),
            block: Dim3::x(g.threads),
            dynamic_shared_bytes: 0,
        };
        limits.check(&launch, g.static_shared_bytes)?;
        Ok(launch)
    }
}

impl From<SgemmKernel> for MatmulKernel {
    fn from(k: SgemmKernel) -> Self {
        Self::Sgemm(k)
    }
}

impl std::fmt::Display for SgemmKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
