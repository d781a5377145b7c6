//! The catalogue of matmul kernels: names, PTX entry points and launch shapes.

use crate::error::{Error, Result};
use crate::sgemm::SgemmKernel;
use crate::shape::MatmulShape;
use crate::tile::TileWidth;
use kernels_gpu::thread::Dim3;

/// The lecture's matmul kernels, and the SGEMM ladder beyond them.
///
/// Serialised as its [`name`](Self::name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatmulKernel {
    /// One thread per output, global memory only.
    Naive,
    /// Tiled, dynamic shared memory, tile width passed at run time.
    TiledDynamic,
    /// Tiled, static shared arrays, tile width a compile-time constant.
    TiledStatic,
    /// Tiled, dynamic shared memory, tile width a compile-time constant.
    TiledDynamicConst,
    /// A rung of the SGEMM ladder (`kernels_gpu::sgemm`), one compile-time configuration
    /// each; no tile width.
    Sgemm(SgemmKernel),
}

impl serde::Serialize for MatmulKernel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Grid, block and dynamic shared memory of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared_bytes: u32,
}

/// What a device allows one launch. On a GPU, [`crate::gpu::Gpu`] queries the real values
/// once; [`DeviceLimits::CUDA`] are those every GPU since Volta has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    pub max_threads_per_block: u32,
    pub max_block_dim: Dim3,
    pub max_grid_dim: Dim3,
    /// Static plus dynamic shared memory of one block, without the per-kernel opt-in to
    /// more (which these kernels never make).
    pub max_shared_bytes_per_block: u32,
}

impl DeviceLimits {
    /// Compute capability 7.0 and later: 1024 threads, blocks up to 1024×1024×64, grids up
    /// to (2³¹−1)×65535×65535, 48 KiB of shared memory per block.
    pub const CUDA: Self = Self {
        max_threads_per_block: 1024,
        max_block_dim: Dim3::xyz(1024, 1024, 64),
        max_grid_dim: Dim3::xyz((1 << 31) - 1, 65535, 65535),
        max_shared_bytes_per_block: 48 * 1024,
    };

    /// Checks `launch`, whose kernel declares `static_shared_bytes` of static shared
    /// memory, against these limits: the error names the limit and both sizes.
    pub fn check(&self, launch: &Launch, static_shared_bytes: u32) -> Result<()> {
        let (grid, block) = (launch.grid, launch.block);
        if grid.volume() == 0 || block.volume() == 0 {
            return Err(Error::EmptyLaunch { grid, block });
        }
        let m = self.max_block_dim;
        for (what, requested, limit) in [
            ("threads in block dimension x", block.x, m.x),
            ("threads in block dimension y", block.y, m.y),
            ("threads in block dimension z", block.z, m.z),
        ] {
            exceeds(what, requested as u64, limit as u64)?;
        }
        exceeds(
            "threads per block",
            block.volume(),
            self.max_threads_per_block as u64,
        )?;
        self.check_grid(grid)?;
        exceeds(
            "bytes of shared memory per block",
            static_shared_bytes as u64 + launch.dynamic_shared_bytes as u64,
            self.max_shared_bytes_per_block as u64,
        )
    }

    /// Checks the grid alone: [`Error::GridTooLarge`] names the dimension.
    pub fn check_grid(&self, grid: Dim3) -> Result<()> {
        let g = self.max_grid_dim;
        for (dim, blocks, limit) in [('x', grid.x, g.x), ('y', grid.y, g.y), ('z', grid.z, g.z)] {
            if blocks > limit {
                return Err(Error::GridTooLarge {
                    dim,
                    blocks: blocks as u64,
                    limit: limit as u64,
                });
            }
        }
        Ok(())
    }
}

impl Default for DeviceLimits {
    fn default() -> Self {
        Self::CUDA
    }
}

/// The simulator's limits, with CUDA's grid limits (the simulator has none of its own).
impl From<kernels_gpu::sim::Limits> for DeviceLimits {
    fn from(l: kernels_gpu::sim::Limits) -> Self {
        Self {
            max_threads_per_block: l.max_threads_per_block,
            max_block_dim: l.max_block_dim,
            max_grid_dim: Self::CUDA.max_grid_dim,
            max_shared_bytes_per_block: l.max_shared_bytes_per_block,
        }
    }
}

/// [`Error::LaunchExceedsDevice`] if `requested > limit`.
pub(crate) fn exceeds(what: &'static str, requested: u64, limit: u64) -> Result<()> {
    if requested > limit {
        return Err(Error::LaunchExceedsDevice {
            what,
            requested,
            limit,
        });
    }
    Ok(())
}

impl MatmulKernel {
    /// The lecture's kernels.
    pub const LECTURE: [MatmulKernel; 4] = [
        Self::Naive,
        Self::TiledDynamic,
        Self::TiledStatic,
        Self::TiledDynamicConst,
    ];

    /// The lecture's kernels, then every [`SgemmKernel`].
    pub const ALL: [MatmulKernel; 4 + SgemmKernel::ALL.len()] = {
        let mut all = [Self::Naive; 4 + SgemmKernel::ALL.len()];
        let mut i = 0;
        while i < all.len() {
            all[i] = if i < 4 {
                Self::LECTURE[i]
            } else {
                Self::Sgemm(SgemmKernel::ALL[i - 4])
            };
            i += 1;
        }
        all
    };

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Naive => "naive",
            Self::TiledDynamic => "tiled-dynamic",
            Self::TiledStatic => "tiled-static",
            Self::TiledDynamicConst => "tiled-dynamic-const",
            Self::Sgemm(k) => k.name(),
        }
    }

    /// Parses [`name`](Self::name).
    pub fn from_name(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| Error::UnknownKernel {
                requested: name.to_owned(),
                known: Self::ALL.map(|k| k.name()).join(", "),
            })
    }

    /// Whether the tile width changes this kernel (the naive one and the SGEMM ones have
    /// none).
    pub fn is_tiled(self) -> bool {
        !matches!(self, Self::Naive | Self::Sgemm(_))
    }

    /// The tile widths worth running: all for tiled kernels, one for the naive one.
    pub fn tile_widths(self) -> &'static [TileWidth] {
        if self.is_tiled() {
            &TileWidth::ALL
        } else {
            &[TileWidth::Tw16]
        }
    }

    /// The PTX entry point for tile width `tw`.
    pub fn entry(self, tw: TileWidth) -> &'static str {
        use TileWidth::*;
        match (self, tw) {
            (Self::Naive, _) => "matmul_naive",
            (Self::TiledDynamic, _) => "matmul_tiled_dynamic",
            (Self::TiledStatic, Tw8) => "matmul_tiled_static_tw8",
            (Self::TiledStatic, Tw16) => "matmul_tiled_static_tw16",
            (Self::TiledStatic, Tw32) => "matmul_tiled_static_tw32",
            (Self::TiledDynamicConst, Tw8) => "matmul_tiled_dynamic_const_tw8",
            (Self::TiledDynamicConst, Tw16) => "matmul_tiled_dynamic_const_tw16",
            (Self::TiledDynamicConst, Tw32) => "matmul_tiled_dynamic_const_tw32",
            (Self::Sgemm(k), _) => k.entry(),
        }
    }

    /// Every entry point of every kernel, once each (the autotuned SGEMM has none of its own).
    pub fn all_entries() -> Vec<&'static str> {
        let mut names: Vec<_> = Self::ALL
            .iter()
            .flat_map(|k| TileWidth::ALL.iter().map(move |&tw| k.entry(tw)))
            .collect();
        let mut seen = std::collections::HashSet::new();
        names.retain(|name| seen.insert(*name));
        names
    }

    /// Bytes of static shared memory the kernel declares at tile width `tw`: the two
    /// `TW × TW` f32 tiles of the static kernel. (On a GPU the loaded function's own
    /// attribute is checked too; a GPU test checks that both agree.)
    pub fn static_shared_bytes(self, tw: TileWidth) -> u32 {
        match self {
            Self::TiledStatic => 2 * tw.get() * tw.get() * 4,
            Self::Naive | Self::TiledDynamic | Self::TiledDynamicConst => 0,
            Self::Sgemm(k) => k.geometry().static_shared_bytes,
        }
    }

    /// The launch shape for `shape` (which must not be [trivial](MatmulShape::is_trivial)),
    /// checked against [`DeviceLimits::CUDA`].
    pub fn launch(self, tw: TileWidth, shape: &MatmulShape) -> Result<Launch> {
        self.launch_within(tw, shape, &DeviceLimits::CUDA)
    }

    /// The launch shape for `shape`, checked against `limits`: a grid too large for a huge
    /// `m` or `n` is [`Error::GridTooLarge`], a block or shared memory beyond the device's
    /// is [`Error::LaunchExceedsDevice`].
    pub fn launch_within(
        self,
        tw: TileWidth,
        shape: &MatmulShape,
        limits: &DeviceLimits,
    ) -> Result<Launch> {
        if let Self::Sgemm(k) = self {
            return k.launch_within(shape, limits);
        }
        let edge = if self.is_tiled() {
            tw.get()
        } else {
            kernels_gpu::matmul::naive::BLOCK
        };
        let dynamic_shared_bytes = match self {
            Self::TiledDynamic | Self::TiledDynamicConst => 2 * edge * edge * 4,
            Self::Naive | Self::TiledStatic | Self::Sgemm(_) => 0,
        };
        // n and m are below u32::MAX (MatmulShape), so the block counts fit u32.
        let launch = Launch {
            grid: Dim3::xy(shape.n.div_ceil(edge), shape.m.div_ceil(edge)),
            block: Dim3::xy(edge, edge),
            dynamic_shared_bytes,
        };
        limits.check(&launch, self.static_shared_bytes(tw))?;
        Ok(launch)
    }
}

impl std::fmt::Display for MatmulKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
