//! The matmul kernels the host runs: the lecture's (one row of `kernels_gpu::catalogue::LECTURE`
//! per tile width) and the SGEMM ladder ([`SgemmKernel`]). Names, entry points and launch
//! shapes all come from the kernels crate's catalogue.

use crate::check::spot::FULL_CHECK_MAX_MACS;
use crate::plan::sgemm::SgemmKernel;
use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
use crate::problem::tile::TileWidth;
use kernels_gpu::catalogue::{Extent, KernelSpec, LECTURE, LectureConfig};
use kernels_gpu::nvptx_device::launch::{Launch, Limits};
use kernels_gpu::sgemm::Precision;

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

    /// Every kernel of `precision`, in [`ALL`](Self::ALL)'s order: what `--kernel all`
    /// runs (the lecture's kernels are FP32, so TF32 has only its SGEMM configurations).
    pub fn all_of(precision: Precision) -> Vec<Self> {
        Self::ALL
            .into_iter()
            .filter(|k| k.precision() == precision)
            .collect()
    }

    /// The kernels the command line runs when `--kernel` is not given, and those it leaves
    /// out: every kernel of `precision` ([`all_of`](Self::all_of)) for a product of up to
    /// [`FULL_CHECK_MAX_MACS`] multiply-adds; above it, only the autotuned SGEMM of
    /// `precision` (the fast path: every other kernel would spend seconds per run there;
    /// see that constant). [`Error::PrecisionNotImplemented`] for a precision without
    /// kernels.
    pub fn default_set(shape: MatmulShape, precision: Precision) -> Result<KernelSet> {
        let autotuned = Self::Sgemm(SgemmKernel::autotuned(precision)?);
        let all = Self::all_of(precision);
        Ok(if shape.macs() <= FULL_CHECK_MAX_MACS {
            KernelSet {
                run: all,
                left_out: vec![],
            }
        } else {
            KernelSet {
                run: vec![autotuned],
                left_out: all.into_iter().filter(|&k| k != autotuned).collect(),
            }
        })
    }

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

    /// Rows of the output each block computes at tile width `tw`: an SGEMM configuration's
    /// `bm` (the default configuration's for an autotuned dispatch), a lecture kernel's tile
    /// width. A product split at its multiples gives every block the rows one GPU's would
    /// have ([`crate::plan::shard`]).
    pub fn block_rows(self, tw: TileWidth) -> u32 {
        match self {
            Self::Sgemm(k) => k.config().geometry.bm,
            lecture => lecture.lecture(tw).tile_width,
        }
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
        output_launch(self.spec(tw), shape.m, shape.n, 1, limits)
    }
}

/// The launch of `spec`, a kernel whose blocks tile a `rows × cols` output, with `z` in the
/// grid's third dimension (a batch), checked against `limits`: a grid, block or shared memory
/// beyond them is [`Error::Launch`]. The one launch rule of every matmul entry (the lecture's,
/// the SGEMM ladder, its BLAS and BF16 rungs).
pub fn output_launch(
    spec: &KernelSpec, rows: u32, cols: u32, z: u32, limits: &Limits,
) -> Result<Launch> {
    let mut launch = spec.launch(Extent::Matrix { rows, cols }, 0);
    launch.grid.z = z;
    limits.check(&launch, spec.static_shared_bytes)?;
    Ok(launch)
}

/// The kernels the command line runs by default ([`MatmulKernel::default_set`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSet {
    /// The kernels to run.
    pub run: Vec<MatmulKernel>,
    /// The kernels of the precision that were left out (none up to the threshold).
    pub left_out: Vec<MatmulKernel>,
}

impl KernelSet {
    /// The line the command line prints when kernels were left out, for a product of
    /// `shape` (`None` when none were): which, why, and how to run them.
    pub fn notice(&self, shape: MatmulShape) -> Option<String> {
        let run: Vec<&str> = self.run.iter().map(|k| k.name()).collect();
        let (sgemm, lecture): (Vec<MatmulKernel>, Vec<MatmulKernel>) = self
            .left_out
            .iter()
            .partition(|k| matches!(k, MatmulKernel::Sgemm(_)));
        let mut left_out: Vec<String> = lecture.iter().map(|k| k.name().to_owned()).collect();
        if let Some(first) = sgemm.first() {
            let precision = first.precision().name();
            left_out.push(match sgemm.len() {
                1 => format!("the {precision} SGEMM configuration {}", first.name()),
                n => format!("{n} {precision} SGEMM configurations"),
            });
        }
        let left_out = match left_out.as_slice() {
            [] => return None,
            [only] => only.clone(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        };
        Some(format!(
            "{shape} is {:.2e} multiply-adds, more than 2^{}: running only {}, leaving out \
             {left_out} (--kernel all runs every kernel, --kernel NAME one of them)",
            shape.macs() as f64,
            FULL_CHECK_MAX_MACS.trailing_zeros(),
            run.join(", ")
        ))
    }
}

impl From<SgemmKernel> for MatmulKernel {
    fn from(k: SgemmKernel) -> Self {
        Self::Sgemm(k)
    }
}

impl std::fmt::Display for MatmulKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The row of `table` whose name (`name_of`) is `name`, or [`Error::UnknownKernel`] listing
/// the names there are: one lookup for the configuration tables that are not
/// [`MatmulKernel`]s (rungs 13 and 14).
pub(crate) fn named<T>(
    table: &'static [T], name: &str, name_of: impl Fn(&T) -> &'static str,
) -> Result<&'static T> {
    table
        .iter()
        .find(|c| name_of(c) == name)
        .ok_or_else(|| Error::UnknownKernel {
            requested: name.to_owned(),
            known: table.iter().map(name_of).collect::<Vec<_>>().join(", "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::shape::valid as shape;

    const AUTOTUNED: MatmulKernel = MatmulKernel::Sgemm(SgemmKernel::Autotuned);

    #[test]
    fn default_set_is_every_kernel_up_to_the_threshold_and_the_fast_path_above() {
        // 2048³ is the threshold itself: everything, nothing to say.
        assert_eq!(shape(2048, 2048, 2048).macs(), FULL_CHECK_MAX_MACS);
        for small in [
            shape(2048, 2048, 2048),
            shape(5120, 256, 5120),
            shape(0, 9, 9),
        ] {
            let set = MatmulKernel::default_set(small, Precision::Fp32).unwrap();
            assert_eq!(set.run, MatmulKernel::all_of(Precision::Fp32), "{small}");
            assert!(set.left_out.is_empty(), "{small}");
            assert_eq!(set.notice(small), None, "{small}");
        }
        // One multiply-add more per output: the autotuned SGEMM only, the rest left out.
        for large in [shape(2048, 2049, 2048), shape(16384, 16384, 16384)] {
            let set = MatmulKernel::default_set(large, Precision::Fp32).unwrap();
            assert_eq!(set.run, vec![AUTOTUNED], "{large}");
            let mut both = set.left_out.clone();
            both.push(AUTOTUNED);
            assert_eq!(both.len(), MatmulKernel::all_of(Precision::Fp32).len());
            assert!(
                MatmulKernel::all_of(Precision::Fp32)
                    .iter()
                    .all(|k| both.contains(k))
            );
            assert!(set.left_out.contains(&MatmulKernel::Naive));
        }
        // `all` for TF32 is its SGEMM configurations; above the threshold its autotuned one.
        let large = shape(16384, 16384, 16384);
        let tf32 = MatmulKernel::default_set(large, Precision::Tf32).unwrap();
        assert_eq!(
            tf32.run,
            vec![MatmulKernel::Sgemm(SgemmKernel::AutotunedTf32)]
        );
        assert!(
            tf32.left_out
                .iter()
                .all(|k| k.precision() == Precision::Tf32)
        );
        let bf16 = MatmulKernel::default_set(large, Precision::Bf16).unwrap();
        assert_eq!(
            bf16.run,
            vec![MatmulKernel::Sgemm(SgemmKernel::AutotunedBf16)]
        );
    }

    #[test]
    fn the_notice_names_what_was_left_out_and_how_to_run_it() {
        let large = shape(16384, 16384, 16384);
        let fp32 = MatmulKernel::default_set(large, Precision::Fp32).unwrap();
        let sgemm_left_out = MatmulKernel::all_of(Precision::Fp32)
            .iter()
            .filter(|k| matches!(k, MatmulKernel::Sgemm(_)))
            .count()
            - 1;
        assert_eq!(
            fp32.notice(large).unwrap(),
            format!(
                "16384×16384×16384 is 4.40e12 multiply-adds, more than 2^33: running only \
                 sgemm-autotuned, leaving out naive, tiled-dynamic, tiled-static, \
                 tiled-dynamic-const and {sgemm_left_out} fp32 SGEMM configurations \
                 (--kernel all runs every kernel, --kernel NAME one of them)"
            )
        );
        let tf32 = MatmulKernel::default_set(large, Precision::Tf32).unwrap();
        let notice = tf32.notice(large).unwrap();
        let tf32_left_out = MatmulKernel::all_of(Precision::Tf32).len() - 1;
        assert!(
            notice.contains(&format!(
                "running only sgemm-autotuned-tf32, leaving out {tf32_left_out} tf32 SGEMM \
                 configurations ("
            )),
            "{notice}"
        );
        // One left out is named.
        let one = KernelSet {
            run: vec![AUTOTUNED],
            left_out: vec![MatmulKernel::Sgemm(SgemmKernel::DEFAULT)],
        };
        let notice = one.notice(large).unwrap();
        assert!(
            notice.contains(&format!(
                "leaving out the fp32 SGEMM configuration {} (",
                SgemmKernel::DEFAULT.name()
            )),
            "{notice}"
        );
    }
}
