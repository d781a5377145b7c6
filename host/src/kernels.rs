//! The matmul kernels the host runs: the lecture's (one row of `kernels_gpu::catalogue::LECTURE`
//! per tile width) and the SGEMM ladder ([`SgemmKernel`]). Names, entry points and launch
//! shapes all come from the kernels crate's catalogue.

use crate::error::{Error, Result};
use crate::sgemm::SgemmKernel;
use crate::shape::MatmulShape;
use crate::tile::TileWidth;
use kernels_gpu::catalogue::{Extent, KernelSpec, LECTURE, LectureConfig};
use kernels_gpu::nvptx_device::launch::{Launch, Limits};

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

    /// How the kernel rounds its inputs: FP32 for the lecture's, the configuration's for
    /// the SGEMM ladder.
    pub fn precision(self) -> kernels_gpu::sgemm::Precision {
        match self {
            Self::Sgemm(k) => k.precision(),
            _ => kernels_gpu::sgemm::Precision::Fp32,
        }
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

    /// The catalogue row of a lecture kernel at tile width `tw` (the naive kernel has one).
    fn lecture(self, tw: TileWidth) -> &'static LectureConfig {
        let name = self.name();
        LECTURE
            .iter()
            .find(|c| c.name == name && (c.tile_width == tw.get() || !self.is_tiled()))
            .expect("every lecture kernel has a catalogue row per tile width")
    }

    /// The plain-data launch description at tile width `tw`.
    pub fn spec(self, tw: TileWidth) -> &'static KernelSpec {
        match self {
            Self::Sgemm(k) => k.spec(),
            lecture => &lecture.lecture(tw).spec,
        }
    }

    /// The PTX entry point for tile width `tw`.
    pub fn entry(self, tw: TileWidth) -> &'static str {
        self.spec(tw).entry
    }

    /// The entry point as the simulator calls it, with `tw` passed where the kernel takes it.
    pub(crate) fn sim_entry(self, tw: TileWidth) -> kernels_gpu::sgemm::MatmulEntry {
        match self {
            Self::Sgemm(k) => k.sim_entry(),
            lecture => lecture.lecture(tw).sim,
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

    /// Bytes of static shared memory the kernel declares at tile width `tw`. (On a GPU the
    /// loaded function's own attribute is checked too; a GPU test checks that both agree.)
    pub fn static_shared_bytes(self, tw: TileWidth) -> u32 {
        self.spec(tw).static_shared_bytes
    }

    /// The launch shape for `shape` (which must not be [trivial](MatmulShape::is_trivial)),
    /// checked against [`Limits::CUDA`].
    pub fn launch(self, tw: TileWidth, shape: &MatmulShape) -> Result<Launch> {
        self.launch_within(tw, shape, &Limits::CUDA)
    }

    /// The launch shape for `shape`, checked against `limits`: a grid, block or shared
    /// memory beyond them is [`Error::Launch`].
    pub fn launch_within(
        self, tw: TileWidth, shape: &MatmulShape, limits: &Limits,
    ) -> Result<Launch> {
        let spec = self.spec(tw);
        // n and m are below u32::MAX (MatmulShape), so the block counts fit u32.
        let launch = spec.launch(
            Extent::Matrix {
                rows: shape.m,
                cols: shape.n,
            },
            0,
        );
        limits.check(&launch, spec.static_shared_bytes)?;
        Ok(launch)
    }
}

impl std::fmt::Display for MatmulKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
