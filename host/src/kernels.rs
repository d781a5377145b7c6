//! The catalogue of matmul kernels: names, PTX entry points and launch shapes.

use crate::error::{Error, Result};
use crate::shape::MatmulShape;
use crate::tile::TileWidth;
use kernels_gpu::thread::Dim3;

/// The lecture's matmul kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatmulKernel {
    /// One thread per output, global memory only.
    Naive,
    /// Tiled, dynamic shared memory, tile width passed at run time.
    TiledDynamic,
    /// Tiled, static shared arrays, tile width a compile-time constant.
    TiledStatic,
    /// Tiled, dynamic shared memory, tile width a compile-time constant.
    TiledDynamicConst,
}

/// Grid, block and dynamic shared memory of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared_bytes: u32,
}

/// CUDA's grid limits (x, y); z is not used.
pub const MAX_GRID: (u64, u64) = ((1 << 31) - 1, 65535);

impl MatmulKernel {
    pub const ALL: [MatmulKernel; 4] = [
        Self::Naive,
        Self::TiledDynamic,
        Self::TiledStatic,
        Self::TiledDynamicConst,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Naive => "naive",
            Self::TiledDynamic => "tiled-dynamic",
            Self::TiledStatic => "tiled-static",
            Self::TiledDynamicConst => "tiled-dynamic-const",
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

    /// Whether the tile width changes this kernel (the naive one has none).
    pub fn is_tiled(self) -> bool {
        self != Self::Naive
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
        }
    }

    /// Every entry point of every kernel.
    pub fn all_entries() -> Vec<&'static str> {
        let mut names: Vec<_> = Self::ALL
            .iter()
            .flat_map(|k| TileWidth::ALL.iter().map(move |&tw| k.entry(tw)))
            .collect();
        names.dedup();
        names
    }

    /// The launch shape for `shape` (which must not be [trivial](MatmulShape::is_trivial)).
    pub fn launch(self, tw: TileWidth, shape: &MatmulShape) -> Result<Launch> {
        let edge = if self.is_tiled() {
            tw.get()
        } else {
            kernels_gpu::matmul::naive::BLOCK
        };
        let (gx, gy) = (shape.n.div_ceil(edge) as u64, shape.m.div_ceil(edge) as u64);
        for (dim, blocks, limit) in [('x', gx, MAX_GRID.0), ('y', gy, MAX_GRID.1)] {
            if blocks > limit {
                return Err(Error::GridTooLarge { dim, blocks, limit });
            }
        }
        let dynamic_shared_bytes = match self {
            Self::TiledDynamic | Self::TiledDynamicConst => 2 * edge * edge * 4,
            Self::Naive | Self::TiledStatic => 0,
        };
        Ok(Launch {
            grid: Dim3::xy(gx as u32, gy as u32),
            block: Dim3::xy(edge, edge),
            dynamic_shared_bytes,
        })
    }
}

impl std::fmt::Display for MatmulKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
