//! Rung 16 on the host ([`kernels_gpu::sgemm::gemv`]): when a product is memory-bound
//! (`m`, `n` or `k` at most 16), has few rows or is narrow ([`applies`]), which
//! rung-16 kernel runs it, over how many slices of `k`, with which launches; and the CPU
//! twin of what each computes, bit for bit.
//!
//! **Which kernel.** For each class that covers the shape, the configuration of the
//! smallest bound that does ([`Gemv::candidates`]): small `m` (`b` streamed by rows; the
//! rows of a product with [few rows](few_rows) also in groups of smaller bounds, `b`
//! streamed once a group), small `n` (`a` streamed by rows), small `k` (the output streamed
//! out). The autotuner
//! ([`crate::gpu::autotune`]) times each beside the tile kernels, as
//! [`Tuned::Gemv`](crate::gpu::autotune::Tuned::Gemv); [`Gpu::matmul_gemv_device`](crate::gpu::Gpu::matmul_gemv_device)
//! and [`Simulator::matmul_gemv`](crate::sim::Simulator::matmul_gemv) run one directly.
//!
//! **How many slices** ([`slices_for`]): enough blocks for [`BLOCKS_PER_SM`] (or the
//! configuration's launch bounds) on every multiprocessor, so that each has enough 16-byte
//! loads in flight to stream at the memory's bandwidth, but no more than keeps the
//! workspace's traffic (the slices' partial outputs, written once and read once) under an
//! eighth of the streamed operand's, and no slice shorter than the kernel's step
//! ([`align`]). The small-`k` kernel never splits.

use crate::plan::split_k::workspace_len;
use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
use kernels_gpu::catalogue::Extent;
use kernels_gpu::nvptx_device::launch::{Launch, Limits};
use kernels_gpu::sgemm::Precision;
pub use kernels_gpu::sgemm::gemv::{GEMV_CONFIGS, GemvClass, GemvConfig, Operands};
use kernels_gpu::sgemm::gemv::{SLICE_ALIGN, SMALL_M_COLS, SMALL_N_CHUNK, WARPS};
use kernels_gpu::sgemm::split_k::SlicePlanes;

/// The largest `m`, `n` or `k` a rung-16 kernel takes: a product with a dimension at most
/// this is memory-bound.
pub const MAX_BOUND: u32 = 16;

/// Blocks per multiprocessor the split aims for where the configuration has no launch
/// bounds (small `m`): 8 blocks of 4 warps, each lane with eight 16-byte loads of `b` in
/// flight (128 KiB a multiprocessor), well past the about 32 KiB an H100 needs in flight to
/// stream at its bandwidth. Where it has launch bounds (small `n`), the split aims for their
/// `min_blocks`, the blocks a multiprocessor holds at once: 4 (3 for the bound-16
/// configuration's 64 accumulators), each lane with `4·D` 16-byte loads of `a` in flight
/// (`D` = [`small_n_depth`](kernels_gpu::sgemm::gemv::small_n_depth) chunks in the kernel's
/// ring of registers: 16, or 8 above `n = 4`), 48 to 128 KiB a multiprocessor. More
/// blocks would not stream faster but would cut `k` into shorter slices (more planes to
/// reduce, fewer chunks per block for the ring to overlap) and take more than one wave.
pub const BLOCKS_PER_SM: u32 = 8;

/// The most slices: the grid's y extent.
pub const MAX_SLICES: u32 = 65_535;

/// Few rows: `m` at most this, whatever `k` and `n`. The small-`m` kernels take the rows in
/// groups of their bound (`b` streamed once a group, [`MAX_GROUPS`]) over as many slices of
/// `k` as fill the device, where a tile kernel's blocks are mostly padding rows or its
/// split's slices few tiles deep (18 × 12168 × 113: a 64 × 64 tile split 132 ways, 23 µs
/// against cuBLAS's 17 on an H200). The autotuner times both: streaming `b` several times
/// loses to the tiles where the output is wide and `k` short.
pub const FEW_ROWS: u32 = 64;

/// Whether `shape` is memory-bound: `m`, `n` or `k` at most [`MAX_BOUND`].
pub fn memory_bound(shape: MatmulShape) -> bool {
    shape.m.min(shape.n).min(shape.k) <= MAX_BOUND
}

/// The most groups of rows a small-`m` configuration of a smaller bound than `m` is timed
/// in ([`Gemv::candidates`]): bound 1 on up to 16 rows, bound 4 on up to 64. Fewer rows a
/// thread is fewer registers and more warps a multiprocessor (ptxas 13.0 for sm_90: 42
/// registers at bound 1, 123 at 4, 188 at 16, two blocks a multiprocessor), which streams
/// `b` faster than one group does where `b`'s passes after the first come from L2: on an
/// H200, 14 × 291 × 9319 took 12 µs in four groups of bound 4 and 18 µs in one of 16,
/// 18 × 12168 × 113 14 µs in five groups of 4 (against cuBLAS's 15–19).
pub const MAX_GROUPS: u32 = 16;

/// Whether `shape` has [few rows](FEW_ROWS).
pub fn few_rows(shape: MatmulShape) -> bool {
    shape.m <= FEW_ROWS
}

/// The most columns of a [`narrow`] product: the widest small-`n` configuration.
pub const NARROW_N: u32 = 32;

/// Whether `shape` is narrow: at most [`NARROW_N`] columns, where a tile of 64 or more
/// columns (the tensor-core rungs' narrowest) is mostly padding and streaming `a` once
/// through the small-`n` kernel may be faster.
pub fn narrow(shape: MatmulShape) -> bool {
    shape.n <= NARROW_N
}

/// Whether a rung-16 kernel covers `shape`: a product with outputs and depth that is
/// [memory-bound](memory_bound), has [few rows](few_rows) or is [`narrow`].
pub fn applies(shape: MatmulShape) -> bool {
    !shape.is_trivial() && (memory_bound(shape) || few_rows(shape) || narrow(shape))
}

/// The dimension a class is built around, and its name.
fn small_dim(class: GemvClass, shape: MatmulShape) -> (&'static str, u32) {
    match class {
        GemvClass::SmallM => ("m", shape.m),
        GemvClass::SmallN => ("n", shape.n),
        GemvClass::SmallK => ("k", shape.k),
    }
}

/// Groups of rows the small-`m` kernel takes `shape` in with configuration `config` (1 for
/// the other classes).
fn groups(config: &GemvConfig, shape: MatmulShape) -> u32 {
    match config.class {
        GemvClass::SmallM => shape.m.div_ceil(config.bound).max(1),
        _ => 1,
    }
}

/// What a slice of `k` must be a multiple of for `class` (but the last): a step of the
/// kernel, four depths for each warp of the small-`m` kernel ([`SLICE_ALIGN`]), a chunk of
/// the small-`n` kernel ([`SMALL_N_CHUNK`]).
pub fn align(class: GemvClass) -> u32 {
    match class {
        GemvClass::SmallN => SMALL_N_CHUNK,
        _ => SLICE_ALIGN,
    }
}

/// Slices of `k` for `config` on `shape` on a device of `sms` multiprocessors (1 for the
/// small-`k` kernel): the least of the slices that give [`BLOCKS_PER_SM`] blocks on each
/// (the launch bounds' `min_blocks` where the configuration has them),
/// those that keep the workspace's traffic (`2·slices·m·n` floats) within an eighth of the
/// streamed operand (`k·n` floats for small `m`, once per group of rows; `m·k` for small
/// `n`), those that leave each slice at least [`align`] deep, and [`MAX_SLICES`]; at least 1.
pub fn slices_for(config: &GemvConfig, shape: MatmulShape, sms: u32) -> u32 {
    let (m, n, k) = (shape.m as u64, shape.n as u64, shape.k as u64);
    let g = groups(config, shape) as u64;
    let (blocks, small) = match config.class {
        GemvClass::SmallK => return 1,
        GemvClass::SmallM => (n.div_ceil(SMALL_M_COLS as u64) * g, m),
        GemvClass::SmallN => (
            m.div_ceil(u64::from(WARPS * config.rows_per_warp.max(1))),
            n,
        ),
    };
    let per_sm = config
        .spec
        .launch_bounds
        .map_or(BLOCKS_PER_SM, |l| l.min_blocks.max(1));
    let fill = (per_sm as u64 * sms.max(1) as u64).div_ceil(blocks.max(1));
    let traffic = k * g / (16 * small.max(1));
    let depth = k / align(config.class) as u64;
    fill.min(traffic).min(depth).min(MAX_SLICES as u64).max(1) as u32
}

/// A rung-16 run: configuration `GEMV_CONFIGS[config]` over `split` slices of `k` asked for
/// (fewer where `k` is short, [`Gemv::slices`]); `None`: [`slices_for`] the device it runs on.
/// A small-`m` configuration takes any `m`, in groups of its bound; the others refuse a
/// product beyond theirs.
///
/// Several slices write their partial sums to planes of a workspace, which are added in
/// plane order either by a second launch
/// ([`sgemm_split_k_reduce`](kernels_gpu::sgemm::split_k::sgemm_split_k_reduce)) or, where
/// `fused`, in the same launch by the last block of each output tile to finish
/// ([`SlicePlanes`]): the same bits, one launch fewer, and the sum of a tile's planes on one
/// multiprocessor rather than spread over the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gemv {
    pub config: usize,
    pub split: Option<u32>,
    pub fused: bool,
}

/// How one rung-16 product is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemvLaunch {
    /// Depth of each slice but the last (a multiple of the class's [`align`]).
    pub slice: u32,
    /// Slices: `cdiv(k, slice)`.
    pub slices: u32,
    /// The main kernel: the slices in y (and the small-`m` kernel's groups of rows in z).
    pub main: Launch,
    /// The reduction of the slices' planes, where there are several and the run is not
    /// fused.
    pub reduce: Option<Launch>,
    /// Floats of workspace: `slices · m · n` where there are several slices, else 0.
    pub workspace: usize,
    /// 8-byte words of the fused run's tile counters (two tiles a word), all 0 between
    /// launches; 0 where there is one slice or the run is not fused.
    pub flags: usize,
}

impl Gemv {
    /// The fixed slice counts the autotuner times besides the device's own
    /// ([`slices_for`]).
    pub const SPLITS: [u32; 4] = [1, 4, 16, 64];

    /// The configuration.
    pub fn config(self) -> &'static GemvConfig {
        &GEMV_CONFIGS[self.config]
    }

    /// The configuration of `class`, `precision` and `operands` with the smallest bound
    /// that covers `shape`, if any; for [few rows](few_rows) beyond every small-`m` bound,
    /// the largest small-`m` configuration (its rows in groups).
    pub fn smallest(
        class: GemvClass, shape: MatmulShape, precision: Precision, operands: Operands,
    ) -> Option<usize> {
        let (_, dim) = small_dim(class, shape);
        let of_class = || {
            GEMV_CONFIGS.iter().enumerate().filter(move |(_, c)| {
                c.class == class && c.precision == precision && c.operands == operands
            })
        };
        of_class()
            .filter(|(_, c)| dim <= c.bound)
            .min_by_key(|(_, c)| c.bound)
            .or_else(|| {
                (class == GemvClass::SmallM && few_rows(shape))
                    .then(|| of_class().max_by_key(|(_, c)| c.bound))
                    .flatten()
            })
            .map(|(i, _)| i)
    }

    /// The runs worth timing for `shape` in `precision` (none unless [`applies`]): for each
    /// class that covers it, the smallest configuration of the precision
    /// ([`smallest`](Self::smallest)) and those of its bound with other rows per warp, the
    /// small-`m` configurations that take the rows in at most [`MAX_GROUPS`] groups, each
    /// with the device's split and (small `m` and small `n`) each of
    /// [`SPLITS`](Self::SPLITS) that leaves slices at least [`align`] deep.
    pub fn candidates(shape: MatmulShape, precision: Precision) -> Vec<Gemv> {
        Self::candidates_of(shape, precision, Operands::F32)
    }

    /// [`candidates`](Self::candidates) among the configurations that read `operands`
    /// (BF16 operands: BF16 products).
    pub fn candidates_of(
        shape: MatmulShape, precision: Precision, operands: Operands,
    ) -> Vec<Gemv> {
        if !applies(shape) {
            return vec![];
        }
        let classes = [GemvClass::SmallM, GemvClass::SmallN, GemvClass::SmallK];
        let mut out = vec![];
        // The smallest configuration of each class that covers the shape, and those of the
        // same class and bound with other rows per warp (small n).
        let smallest = classes
            .into_iter()
            .filter_map(|c| Self::smallest(c, shape, precision, operands));
        let same = |i: usize| {
            let c = &GEMV_CONFIGS[i];
            GEMV_CONFIGS
                .iter()
                .enumerate()
                .filter(move |(_, o)| {
                    o.class == c.class
                        && o.bound == c.bound
                        && o.precision == c.precision
                        && o.operands == c.operands
                })
                .map(|(j, _)| j)
        };
        // Small m: also the configurations of smaller bounds that take the rows in at most
        // MAX_GROUPS groups, each streaming `b` (from L2 after the first where it fits
        // there), with fewer accumulators a thread and so more warps a multiprocessor.
        let grouped = GEMV_CONFIGS.iter().enumerate().filter(|(_, c)| {
            c.class == GemvClass::SmallM
                && c.precision == precision
                && c.operands == operands
                && c.bound < shape.m
                && shape.m.div_ceil(c.bound) <= MAX_GROUPS
        });
        let mut configs: Vec<usize> = smallest.flat_map(same).collect();
        for (i, _) in grouped {
            if !configs.contains(&i) {
                configs.push(i);
            }
        }
        for config in configs {
            let class = GEMV_CONFIGS[config].class;
            let deepest = (shape.k / align(class)).max(1);
            let splits = std::iter::once(None).chain(
                Self::SPLITS
                    .iter()
                    .filter(|&&s| class.splits() && s <= deepest)
                    .map(|&s| Some(s)),
            );
            for split in splits {
                let run = Gemv {
                    config,
                    split,
                    fused: false,
                };
                out.push(run);
                // Each split run of several slices also with the planes added in the launch.
                if class.splits() && split != Some(1) {
                    out.push(Gemv { fused: true, ..run });
                }
            }
        }
        out
    }

    /// The configuration's name, with `-split<s>` for a fixed split and `-fused` for planes
    /// added in the launch, e.g. `gemv-small-m1`, `gemv-small-n4-split16` or
    /// `gemv-small-m1-split64-fused`.
    pub fn name(self) -> String {
        let split = self.split.map(|s| format!("-split{s}")).unwrap_or_default();
        let fused = if self.fused { "-fused" } else { "" };
        format!("{}{split}{fused}", self.config().name)
    }

    /// Parses [`name`](Self::name) (any split of at least 1; `-fused` only on a class that
    /// splits).
    pub fn from_name(name: &str) -> Option<Self> {
        let find = |n: &str| GEMV_CONFIGS.iter().position(|c| c.name == n);
        let (name, fused) = match name.strip_suffix("-fused") {
            Some(rest) => (rest, true),
            None => (name, false),
        };
        if let Some(config) = find(name) {
            return (!fused || GEMV_CONFIGS[config].class.splits()).then_some(Gemv {
                config,
                split: None,
                fused,
            });
        }
        let (config, split) = name.rsplit_once("-split")?;
        let split: u32 = split.parse().ok().filter(|&s| s >= 1)?;
        let config = find(config)?;
        GEMV_CONFIGS[config].class.splits().then_some(Gemv {
            config,
            split: Some(split),
            fused,
        })
    }

    /// The slice depth and count for `shape` on a device of `sms` multiprocessors: the
    /// split asked for (or [`slices_for`]), the depth `cdiv(k, split)` rounded up to the
    /// class's [`align`], then as many slices as that takes.
    pub fn slices(self, shape: MatmulShape, sms: u32) -> (u32, u32) {
        let class = self.config().class;
        let k = shape.k.max(1);
        if !class.splits() {
            return (k, 1);
        }
        let split = self
            .split
            .unwrap_or_else(|| slices_for(self.config(), shape, sms))
            .clamp(1, MAX_SLICES);
        let a = align(class);
        let slice = k.div_ceil(split).div_ceil(a).saturating_mul(a);
        (slice, k.div_ceil(slice))
    }

    /// The launches for `shape` (not [trivial](MatmulShape::is_trivial)) on a device of
    /// `sms` multiprocessors, checked against `limits`, and the workspace they need:
    /// [`Error::GemvBound`] where the configuration does not cover the shape.
    pub fn launch(self, shape: MatmulShape, sms: u32, limits: &Limits) -> Result<GemvLaunch> {
        let config = self.config();
        let (dim, actual) = small_dim(config.class, shape);
        if actual > config.bound && config.class != GemvClass::SmallM {
            return Err(Error::GemvBound {
                kernel: config.name,
                dim,
                bound: config.bound,
                actual,
                shape: shape.to_string(),
            });
        }
        let (slice, slices) = self.slices(shape, sms);
        let extent = match config.class {
            GemvClass::SmallM => Extent::Matrix {
                rows: slices,
                cols: shape.n,
            },
            GemvClass::SmallN => Extent::Matrix {
                rows: slices,
                cols: shape.m,
            },
            GemvClass::SmallK => Extent::Matrix {
                rows: shape.m,
                cols: shape.n,
            },
        };
        let mut main = config.spec.launch(extent, 0);
        main.grid.z = groups(config, shape);
        limits.check(&main, config.spec.static_shared_bytes)?;
        let (reduce, workspace, flags) = if slices > 1 {
            let workspace = workspace_len("rung-16 workspace", slices, shape)?;
            if self.fused {
                // One counter per output tile: the grid's x extent times its z.
                let tiles = main.grid.x as usize * main.grid.z as usize;
                (None, workspace, SlicePlanes::flag_words(tiles))
            } else {
                // m·n fits u32 (MatmulShape).
                let reduce = crate::plan::split_k::reduce_launch(shape.m * shape.n);
                limits.check(&reduce, 0)?;
                (Some(reduce), workspace, 0)
            }
        } else {
            (None, 0, 0)
        };
        Ok(GemvLaunch {
            slice,
            slices,
            main,
            reduce,
            workspace,
            flags,
        })
    }

    /// What the run computes on the CPU, bit for bit (the order the [kernels' module
    /// docs](kernels_gpu::sgemm::gemv) give, each input rounded to the configuration's
    /// precision), for slices of `slice` depths: what the GPU and the simulator must give
    /// with the same [`GemvLaunch::slice`]. A configuration of BF16 operands is given their
    /// f32 values (exact), as its kernel widens them.
    pub fn cpu(self, a: &[f32], b: &[f32], shape: MatmulShape, slice: u32) -> Vec<f32> {
        let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
        let mut out = vec![0.0f32; m * n];
        if shape.is_trivial() {
            return out;
        }
        let p = self.config().precision;
        let chain = |r: usize, c: usize, depths: &mut dyn Iterator<Item = usize>| {
            depths.fold(0.0f32, |acc, i| {
                p.round(a[r * k + i]).mul_add(p.round(b[i * n + c]), acc)
            })
        };
        let class = self.config().class;
        let slice = slice as usize;
        for r in 0..m {
            for c in 0..n {
                out[r * n + c] = match class {
                    GemvClass::SmallK => chain(r, c, &mut (0..k)),
                    GemvClass::SmallM | GemvClass::SmallN => {
                        let mut total = 0.0f32;
                        for (z, k0) in (0..k).step_by(slice).enumerate() {
                            let k1 = (k0 + slice).min(k);
                            let v = if class == GemvClass::SmallM {
                                let part = slice / WARPS as usize;
                                let mut v = 0.0f32;
                                for w in 0..WARPS as usize {
                                    let (p0, p1) =
                                        ((k0 + w * part).min(k1), (k0 + (w + 1) * part).min(k1));
                                    let p = chain(r, c, &mut (p0..p1));
                                    v = if w == 0 { p } else { v + p };
                                }
                                v
                            } else {
                                let chunk = SMALL_N_CHUNK as usize;
                                let mut lanes = [0.0f32; 32];
                                for (l, lane) in lanes.iter_mut().enumerate() {
                                    let mut depths = (k0..k1).step_by(chunk).flat_map(|p| {
                                        (p + 4 * l..p + 4 * l + 4).filter(|&d| d < k1)
                                    });
                                    *lane = chain(r, c, &mut depths);
                                }
                                butterfly(lanes)
                            };
                            total = if z == 0 { v } else { total + v };
                        }
                        total
                    }
                };
            }
        }
        out
    }
}

impl std::fmt::Display for Gemv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// An element type a rung-16 product may be given `a` and `b` in: f32, or `half::bf16`
/// for the configurations of BF16 operands; `half::f16` has none.
pub trait GemvElement: Copy + 'static {
    /// The operands of the configurations that take it.
    const OPERANDS: Option<Operands>;
    /// Its name in errors.
    const NAME: &'static str;
}

impl GemvElement for f32 {
    const OPERANDS: Option<Operands> = Some(Operands::F32);
    const NAME: &'static str = "f32";
}

impl GemvElement for half::bf16 {
    const OPERANDS: Option<Operands> = Some(Operands::Bf16);
    const NAME: &'static str = "bf16";
}

impl GemvElement for half::f16 {
    const OPERANDS: Option<Operands> = None;
    const NAME: &'static str = "f16";
}

impl Gemv {
    /// [`Error::ElementMismatch`] unless the configuration reads `E`.
    pub fn check_element<E: GemvElement>(self) -> Result<()> {
        match E::OPERANDS == Some(self.config().operands) {
            true => Ok(()),
            false => Err(Error::ElementMismatch {
                kernel: self.config().name,
                given: E::NAME,
            }),
        }
    }
}

/// The sum of 32 lanes' values as [`nvptx_device::warp::sum_f32`](kernels_gpu::nvptx_device::warp::sum_f32)
/// adds them: each lane adds its partner's at distance 16, 8, 4, 2, 1 (lane 0's result,
/// which every lane holds).
fn butterfly(mut v: [f32; 32]) -> f32 {
    let mut offset = 16;
    while offset > 0 {
        let before = v;
        for (l, x) in v.iter_mut().enumerate() {
            *x += before[l ^ offset];
        }
        offset /= 2;
    }
    v[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::shape::valid as shape;

    #[test]
    fn memory_bound_shapes_get_the_smallest_covering_configuration_of_each_class() {
        assert!(!applies(shape(65, 17, 33)));
        assert!(applies(shape(17, 17, 33)));
        assert!(applies(shape(65, 17, 17)));
        assert!(!applies(shape(0, 4096, 1)));
        assert!(applies(shape(4096, 4096, 16)));
        assert!(Gemv::candidates(shape(65, 17, 33), Precision::Fp32).is_empty());
        // 17 to 32 columns: the bound-32 small-n kernel alone.
        assert_eq!(
            Gemv::candidates(shape(5000, 7000, 18), Precision::Tf32)
                .iter()
                .map(|g| g.config().name)
                .collect::<std::collections::BTreeSet<_>>(),
            ["gemv-small-n32-tf32"].into()
        );
        let names = |s| {
            let mut n: Vec<String> = Gemv::candidates(s, Precision::Fp32)
                .into_iter()
                .filter(|g| g.split.is_none() && !g.fused)
                .map(Gemv::name)
                .collect();
            n.sort();
            n
        };
        assert_eq!(names(shape(1, 4096, 4096)), ["gemv-small-m1"]);
        // The smallest small-m bound that covers 3 rows, and those that take them in at
        // most MAX_GROUPS groups.
        assert_eq!(
            names(shape(3, 4096, 4096)),
            ["gemv-small-m1", "gemv-small-m2", "gemv-small-m4"]
        );
        assert_eq!(names(shape(4096, 4096, 9)), ["gemv-small-n16"]);
        assert_eq!(names(shape(4096, 5, 4096)), ["gemv-small-k16"]);
        assert_eq!(names(shape(4096, 4, 4096)), ["gemv-small-k4"]);
        assert_eq!(
            names(shape(1, 1, 1)),
            [
                "gemv-small-k4",
                "gemv-small-m1",
                "gemv-small-n1",
                "gemv-small-n1-r2"
            ]
        );
        // n = 1: both rows-per-warp variants, the second with twice the blocks.
        assert_eq!(
            names(shape(1059, 5469, 1)),
            ["gemv-small-n1", "gemv-small-n1-r2"]
        );
        let blocks = |name: &str| {
            let g = Gemv::from_name(name).unwrap();
            g.launch(shape(1059, 5469, 1), 132, &Limits::CUDA)
                .unwrap()
                .main
                .grid
                .x
        };
        assert_eq!(blocks("gemv-small-n1"), 67);
        assert_eq!(blocks("gemv-small-n1-r2"), 133);
        for s in [shape(1, 4096, 4096), shape(16, 3, 17), shape(5, 100_000, 7)] {
            for g in Gemv::candidates(s, Precision::Fp32) {
                assert_eq!(Gemv::from_name(&g.name()), Some(g), "{g}");
                let l = g.launch(s, 132, &Limits::CUDA).unwrap();
                assert!(
                    l.slices >= 1 && (l.slices - 1) * l.slice < s.k && l.slices * l.slice >= s.k
                );
                assert_eq!(l.reduce.is_some(), l.slices > 1 && !g.fused);
                assert_eq!(l.flags > 0, l.slices > 1 && g.fused);
                assert_eq!(
                    l.workspace,
                    if l.slices > 1 {
                        (l.slices * s.m * s.n) as usize
                    } else {
                        0
                    }
                );
            }
        }
        assert_eq!(Gemv::from_name("gemv-small-k4-split4"), None);
        assert_eq!(Gemv::from_name("gemv-small-k4-fused"), None);
        let fused = Gemv::from_name("gemv-small-n1-split16-fused").unwrap();
        assert!(fused.fused && fused.split == Some(16));
        // Each split run of several slices is a candidate both ways; a single slice once.
        let runs = Gemv::candidates(shape(1, 4096, 4096), Precision::Fp32);
        assert!(runs.iter().any(|g| g.split == Some(64) && g.fused));
        assert!(runs.iter().any(|g| g.split == Some(64) && !g.fused));
        assert!(!runs.iter().any(|g| g.split == Some(1) && g.fused));
        assert_eq!(Gemv::from_name("gemv-small-m1-split0"), None);
        assert_eq!(Gemv::from_name("gemv-small-m3"), None);
    }

    #[test]
    fn a_configuration_refuses_what_it_does_not_cover() {
        let n4 = Gemv::from_name("gemv-small-n4").unwrap();
        let err = n4.launch(shape(64, 64, 5), 2, &Limits::CUDA).unwrap_err();
        assert!(
            matches!(
                err,
                Error::GemvBound {
                    bound: 4,
                    actual: 5,
                    dim: "n",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("64×64×5"), "{err}");
        let k4 = Gemv::from_name("gemv-small-k4").unwrap();
        assert!(k4.launch(shape(64, 5, 64), 2, &Limits::CUDA).is_err());
        // The small-m kernels take any m, in groups of their bound.
        let m4 = Gemv::from_name("gemv-small-m4").unwrap();
        assert_eq!(
            m4.launch(shape(5, 64, 64), 2, &Limits::CUDA)
                .unwrap()
                .main
                .grid
                .z,
            2
        );
    }

    #[test]
    fn few_rows_take_the_small_m_kernels_in_groups() {
        let s = shape(33, 100_000, 33);
        assert!(applies(s) && !memory_bound(s) && few_rows(s));
        let auto: Vec<String> = Gemv::candidates(s, Precision::Fp32)
            .into_iter()
            .filter(|g| g.split.is_none() && !g.fused)
            .map(Gemv::name)
            .collect();
        // Bound 16 in three groups, 8 in five, 4 in nine.
        assert_eq!(auto, ["gemv-small-m16", "gemv-small-m4", "gemv-small-m8"]);
        let g = Gemv::from_name("gemv-small-m16").unwrap();
        let l = g.launch(s, 132, &Limits::CUDA).unwrap();
        // Three groups of rows, b streamed once each: the workspace's traffic allows
        // 100000 · 3 / (16 · 33) = 568 slices, the device wants 1056 / 3 = 352: slices of
        // 288 depths (285 rounded up to 16), 348 of them.
        assert_eq!(slices_for(g.config(), s, 132), 352);
        assert_eq!((l.slice, l.slices), (288, 348));
        assert_eq!((l.main.grid.x, l.main.grid.y, l.main.grid.z), (1, 348, 3));
        assert!(!applies(shape(65, 100_000, 33)));
        assert!(!applies(shape(65, 1000, 33)));
        // Whatever k and n: 18 rows of 113 columns under k = 12168 take two groups.
        let s = shape(18, 12_168, 113);
        assert!(applies(s) && few_rows(s) && !narrow(s));
        // The bound-16 configuration in two groups, and the smaller ones in at most 16 (bound
        // 8 in three, 4 in five, 2 in nine; bound 1 would take 18).
        let bounds: std::collections::BTreeSet<u32> = Gemv::candidates(s, Precision::Fp32)
            .iter()
            .map(|g| g.config().bound)
            .collect();
        assert_eq!(bounds, [2, 4, 8, 16].into());
        assert_eq!(g.launch(s, 132, &Limits::CUDA).unwrap().main.grid.z, 2);
        assert!(!applies(shape(65, 12_168, 113)));
    }

    #[test]
    fn slices_fill_the_device_within_the_traffic_and_depth_limits() {
        // x·B at 4096²: 32 blocks of columns; 8 · 132 blocks wanted: 33 slices, within
        // 4096 / 16 (traffic) and 4096 / 16 (depth).
        let config = |name| Gemv::from_name(name).unwrap().config();
        let (m1, m16) = (config("gemv-small-m1"), config("gemv-small-m16"));
        let (n1, k4) = (config("gemv-small-n1"), config("gemv-small-k4"));
        assert_eq!(slices_for(m1, shape(1, 4096, 4096), 132), 33);
        // 16 rows: the workspace's traffic caps it at 4096 / 256.
        assert_eq!(slices_for(m16, shape(16, 4096, 4096), 132), 16);
        // A·x on 4096 rows: 256 blocks of rows, 4 · 132 = 528 wanted: 3 slices.
        assert_eq!(slices_for(n1, shape(4096, 4096, 1), 132), 3);
        // 1059 rows: 67 blocks of rows, 8 slices (536 blocks).
        assert_eq!(slices_for(n1, shape(1059, 5469, 1), 132), 8);
        // A huge k under few rows and columns: as many as fill the device.
        assert_eq!(slices_for(n1, shape(33, 100_000, 1), 132), 176);
        // Short k: one slice.
        assert_eq!(slices_for(n1, shape(64, 100, 1), 132), 1);
        // The bound-16 configuration's launch bounds hold 3 blocks a multiprocessor:
        // 396 wanted over 256 blocks of rows.
        let n16 = config("gemv-small-n16");
        assert_eq!(n16.spec.launch_bounds.map(|l| l.min_blocks), Some(3));
        assert_eq!(slices_for(n16, shape(4096, 4096, 16), 132), 2);
        assert_eq!(slices_for(k4, shape(64, 100, 1), 132), 1);
        // The slices round to the class's step.
        let g = Gemv::from_name("gemv-small-n1-split4").unwrap();
        assert_eq!(g.slices(shape(64, 1000, 1), 2), (256, 4));
        let g = Gemv::from_name("gemv-small-m1-split64").unwrap();
        assert_eq!(g.slices(shape(1, 1000, 64), 2), (16, 63));
    }

    #[test]
    fn the_butterfly_adds_pairs_at_halving_distances() {
        let mut v = [0.0f32; 32];
        v[0] = 1.0;
        v[16] = 1e8;
        v[1] = -1e8;
        // (1 + 1e8) rounds to 1e8 at distance 16, then + (−1e8 + 0) at distance 1: 0; summed
        // in lane order it would be 1.
        assert_eq!(butterfly(v), 0.0);
        let ones = [1.0f32; 32];
        assert_eq!(butterfly(ones), 32.0);
    }
}
