//! Rung 17 ([`kernels_gpu::sgemm::warp_specialized`]) on Hopper's warpgroup tensor cores,
//! fed by the tensor-memory accelerator: `out = a · b` with `out` f32, accumulated in f32,
//! and `a` (`m × k`) and `b` (`k × n`) either row-major [`half::bf16`] or [`half::f16`] —
//! what cuBLAS's `cublasGemmEx` computes with 16-bit `A` and `B` and `CUBLAS_COMPUTE_32F` —
//! or f32 multiplied as TF32 (`CUBLAS_COMPUTE_32F_FAST_TF32`): the tensor maps' element
//! type is TF32, so the accelerator rounds both operands (to nearest, ties to even) as it
//! copies their tiles. `.tf32` reads both operands K-major, so `b` is packed first as for
//! rung 14 ([`crate::plan::packed`]: transposed, unrounded ([`Packing::Plain`]), rows of `k`
//! padded to a multiple of 4) but for the configurations that read it as it lies
//! ([`WsConfig::row_major_b`]); `a` is read as it is unless its rows are not whole 16-byte
//! units ([`tf32_packs_a`]).
//!
//! [`Packing::Plain`]: crate::plan::packed::Packing::Plain
//!
//! Which configuration ([`WS_CONFIGS`], one table for the three types) and its launch: a
//! persistent grid of at most one block per multiprocessor. The accelerator reads rows
//! that are whole 16-byte units, so a 16-bit product takes `k` and `n` multiples of 8
//! ([`aligned`]).

use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
use kernels_gpu::nvptx_device::catalogue::{Extent, KernelSpec};
use kernels_gpu::nvptx_device::launch::{Launch, Limits};
use kernels_gpu::nvptx_device::wgmma::Half;
pub use kernels_gpu::sgemm::warp_specialized::{Input, WS_CONFIGS, WsConfig};

/// The repack entry that rounds f32 values to `half` (to nearest even) as it copies them
/// ([`REPACK_16BIT`](kernels_gpu::sgemm::repack::REPACK_16BIT)'s `convert_bf16` or
/// `convert_f16`): what the 16-bit outputs and conversions of f32 operands run on the GPU,
/// and the launch the simulator gives its twin.
pub const fn conversion(half: Half) -> &'static KernelSpec {
    use kernels_gpu::sgemm::repack::REPACK_16BIT;
    match half {
        Half::Bf16 => &REPACK_16BIT[1],
        Half::F16 => &REPACK_16BIT[2],
    }
}

/// An element type rung 17 multiplies.
pub trait HalfFloat: Copy + Send + Sync + bytemuck::Pod + 'static {
    /// Which it is.
    const HALF: Half;
    /// Which it is, as rung 17's tables name it.
    const INPUT: Input;
    /// Its name on command lines and in reports.
    const NAME: &'static str;
    /// `x` rounded to nearest even (NaN stays NaN).
    fn from_f32(x: f32) -> Self;
    /// Its exact f32 value.
    fn to_f32(self) -> f32;
}

/// [`HalfFloat`] for `half`'s type `$t`: element `$half`, named `$name`.
macro_rules! half_float {
    ($t:ty, $half:ident, $name:literal) => {
        impl HalfFloat for $t {
            const HALF: Half = Half::$half;
            const INPUT: Input = Input::$half;
            const NAME: &'static str = $name;
            fn from_f32(x: f32) -> Self {
                <$t>::from_f32(x)
            }
            fn to_f32(self) -> f32 {
                <$t>::to_f32(self)
            }
        }
    };
}

half_float!(half::bf16, Bf16, "bf16");
half_float!(half::f16, F16, "f16");

/// Every element of `x` rounded to `T`.
pub fn round_all<T: HalfFloat>(x: &[f32]) -> Vec<T> {
    x.iter().map(|&v| T::from_f32(v)).collect()
}

/// The configurations for element type `input`, in table order.
pub fn configs(input: Input) -> impl Iterator<Item = &'static WsConfig> {
    WS_CONFIGS.iter().filter(move |c| c.input == input)
}

/// The configuration the table marks as `input`'s default.
pub fn default_config(input: Input) -> &'static WsConfig {
    configs(input)
        .find(|c| c.default)
        .expect("the table marks a default for each element type")
}

/// The configuration named `name`, or [`Error::UnknownKernel`] listing the names there are.
pub fn config(name: &str) -> Result<&'static WsConfig> {
    crate::plan::kernels::named(WS_CONFIGS, name, |c| c.name)
}

/// Whether the accelerator can read `shape`'s operands as they are: rows of `a` (`k`
/// elements) and of `b` (`n`) whole 16-byte units.
pub fn aligned(shape: MatmulShape) -> bool {
    shape.k.is_multiple_of(8) && shape.n.is_multiple_of(8)
}

/// Whether a TF32 product of depth `k` copies `a` before the kernel (rows padded with zeros
/// to a multiple of 4 floats, values as they are): where `a`'s rows are not whole 16-byte
/// units, which the accelerator needs. Either way the accelerator rounds `a` to TF32 as it
/// copies its tiles (maps of TF32 elements).
pub fn tf32_packs_a(k: u32) -> bool {
    !k.is_multiple_of(4)
}

/// [`Error::ElementMismatch`] unless `run`'s configuration multiplies `input`.
pub fn check_element(run: HalfRun, input: Input) -> Result<()> {
    if run.config.input != input {
        return Err(Error::ElementMismatch {
            kernel: run.config.name,
            given: input.name(),
        });
    }
    Ok(())
}

/// A rung-17 product: a configuration, and the slices its depth is cut into (1: none; more:
/// each slice into a workspace plane, the planes then added in order by the split-k
/// reduction, as the FP32 rungs' split-k runs do).
#[derive(Clone, Copy, Debug)]
pub struct HalfRun {
    pub config: &'static WsConfig,
    pub splits: u32,
}

impl PartialEq for HalfRun {
    fn eq(&self, other: &Self) -> bool {
        self.config.name == other.config.name && self.splits == other.splits
    }
}

impl Eq for HalfRun {}

impl std::hash::Hash for HalfRun {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.config.name.hash(state);
        self.splits.hash(state);
    }
}

/// The depth splits a candidate may have.
pub const SPLITS: [u32; 5] = [1, 2, 4, 8, 16];

impl HalfRun {
    /// `config` unsplit.
    pub fn unsplit(config: &'static WsConfig) -> Self {
        Self { config, splits: 1 }
    }

    /// `<configuration>` or `<configuration>-split<s>`.
    pub fn name(&self) -> String {
        if self.splits > 1 {
            format!("{}-split{}", self.config.name, self.splits)
        } else {
            self.config.name.to_owned()
        }
    }

    /// Parses [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Self> {
        let (config, splits) = match name.rsplit_once("-split") {
            Some((config, s)) => (config, s.parse().ok().filter(|s| SPLITS.contains(s))?),
            None => (name, 1),
        };
        let config = WS_CONFIGS.iter().find(|c| c.name == config)?;
        Some(Self { config, splits })
    }

    /// Workspace floats it needs for `shape`: `splits` planes of `m × n` when split.
    pub fn workspace_floats(&self, shape: MatmulShape) -> usize {
        if self.splits > 1 {
            self.splits as usize * shape.m as usize * shape.n as usize
        } else {
            0
        }
    }
}

/// The runs worth timing for `shape` on a device of `multiprocessors`, chosen by shape
/// class rather than from a list of shapes:
/// * configurations of `input` that store as the output's rows suit ([`stores_fit`]), whose
///   tiles cover the output with the least padding (within
///   half of the best: taller tiles read `b` fewer times, which can outweigh their padding,
///   as a 128-row tile on a 68-row output does): a 32- or 64-column output gets narrow
///   tiles, a 32-row one the shortest tiles, a large square every tile;
/// * for each, unsplit; and where its tiles do not fill a wave of multiprocessors, each
///   split of the depth that keeps the work within four waves and two k-tiles a slice.
pub fn candidates(input: Input, shape: MatmulShape, multiprocessors: u32) -> Vec<HalfRun> {
    let (m, n) = (u64::from(shape.m.max(1)), u64::from(shape.n.max(1)));
    let configs: Vec<&'static WsConfig> =
        configs(input).filter(|c| stores_fit(c, shape.n)).collect();
    let padded = |c: &WsConfig| {
        let (bm, bn) = (u64::from(c.geometry.bm), u64::from(c.geometry.bn));
        m.div_ceil(bm) * bm * n.div_ceil(bn) * bn
    };
    let Some(least) = configs.iter().map(|c| padded(c)).min() else {
        return vec![];
    };
    let sms = u64::from(multiprocessors.max(1));
    let mut runs = vec![];
    for config in configs.into_iter().filter(|c| 2 * padded(c) <= 3 * least) {
        let (bm, bn) = (u64::from(config.geometry.bm), u64::from(config.geometry.bn));
        let tiles = m.div_ceil(bm) * n.div_ceil(bn);
        let k_tiles = shape.k.div_ceil(config.geometry.bk);
        for splits in SPLITS {
            let within = tiles * u64::from(splits) <= 4 * sms;
            let deep = k_tiles >= 2 * splits;
            if splits == 1 || (tiles < sms && within && deep) {
                runs.push(HalfRun { config, splits });
            }
        }
    }
    runs
}

/// Whether `config`'s way of storing suits an output of `n` columns: staged rows (its
/// `rows` entries) where `n` is odd, so that rows do not start 8-byte aligned; its
/// fragments where they lie elsewhere (and in a swapped tile, which has no staging).
pub fn stores_fit(config: &WsConfig, n: u32) -> bool {
    config.swapped || config.rows != n.is_multiple_of(2)
}

/// `run`'s launch for `shape` on a device that runs `resident_blocks` blocks of it at once
/// (one a multiprocessor; for a configuration in clusters, as many as its whole clusters
/// fit), checked against `limits`: one block per unit of work (an output tile, or a slice of
/// one), at most `resident_blocks` (the configuration's persistent grid rule, counting every
/// slice), in whole clusters.
pub fn launch(
    run: HalfRun, shape: MatmulShape, resident_blocks: u32, limits: &Limits,
) -> Result<Launch> {
    let extent = Extent::Matrix {
        rows: shape.m,
        cols: shape.n,
    };
    let spec = &run.config.spec;
    let mut launch = spec.launch(extent, 0);
    let units = launch.grid.x.saturating_mul(run.splits.max(1));
    launch.grid.x = spec.whole_clusters(units.min(spec.cap(resident_blocks.max(1))));
    limits.check(&launch, 0).map_err(Error::Launch)?;
    Ok(launch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_element_type_has_one_default_and_names_resolve() {
        for input in [Input::Bf16, Input::F16, Input::Tf32] {
            assert_eq!(default_config(input).input, input);
        }
        for c in WS_CONFIGS {
            assert_eq!(config(c.name).unwrap().name, c.name);
        }
        assert!(config("gemm-bf16-ws-nope").is_err());
    }

    #[test]
    fn a_persistent_grid_is_at_most_a_block_per_multiprocessor() {
        let run = HalfRun {
            config: default_config(Input::Bf16),
            splits: 1,
        };
        let limits = Limits::HOPPER;
        let big = MatmulShape::new(8192, 8192, 8192).unwrap();
        assert_eq!(launch(run, big, 132, &limits).unwrap().grid.x, 132);
        let small = MatmulShape::new(100, 64, 300).unwrap();
        // One block per tile: 1 × 2 tiles of 128 × 256; four per tile split in four.
        assert_eq!(launch(run, small, 132, &limits).unwrap().grid.x, 2);
        let split = HalfRun { splits: 4, ..run };
        assert_eq!(launch(split, small, 132, &limits).unwrap().grid.x, 8);
        // Pairs: whole clusters, within the blocks that run at once.
        let pair = HalfRun::unsplit(config("gemm-bf16-ws-128x256-pair").unwrap());
        assert_eq!(pair.config.spec.cluster, 2);
        let l = launch(pair, big, 131, &limits).unwrap();
        assert_eq!((l.grid.x, l.cluster), (130, 2));
        // 1 × 2 tiles: a pair for each column of tiles (its second block past the rows).
        assert_eq!(launch(pair, small, 132, &limits).unwrap().grid.x, 2);
    }

    #[test]
    fn candidates_follow_the_shape_class() {
        let names = |m, k, n| -> Vec<String> {
            candidates(Input::Bf16, MatmulShape::new(m, k, n).unwrap(), 132)
                .iter()
                .map(HalfRun::name)
                .collect()
        };
        // A large square: every tile, no split (their tiles fill the device many times).
        let big = names(4096, 4096, 4096);
        assert!(big.iter().all(|n| !n.contains("split")), "{big:?}");
        assert!(big.contains(&"gemm-bf16-ws-128x256".to_owned()), "{big:?}");
        // 64 columns: narrow tiles only, with splits of the deep k.
        let thin = names(4096, 4096, 64);
        assert!(
            thin.iter().all(|n| n.contains("x64") || n.contains("x32")),
            "{thin:?}"
        );
        assert!(thin.iter().any(|n| n.contains("split")), "{thin:?}");
        // 32 rows: the 64-row tile.
        let short = names(32, 8192, 8192);
        assert!(
            short.iter().all(|n| n.starts_with("gemm-bf16-ws-64x")),
            "{short:?}"
        );
        // A shallow product is not split below two k-tiles a slice.
        assert!(names(64, 128, 64).iter().all(|n| !n.contains("split4")));
        for name in big.iter().chain(&thin).chain(&short) {
            assert_eq!(HalfRun::from_name(name).unwrap().name(), *name);
        }
        assert_eq!(HalfRun::from_name("gemm-bf16-ws-128x256-split3"), None);
    }

    #[test]
    fn tf32_candidates_are_tf32_configurations_named_apart() {
        let shape = MatmulShape::new(4096, 4096, 4096).unwrap();
        let runs = candidates(Input::Tf32, shape, 132);
        assert!(
            runs.iter().all(|r| r.config.input == Input::Tf32),
            "{runs:?}"
        );
        assert!(runs.contains(&HalfRun {
            config: default_config(Input::Tf32),
            splits: 1,
        }));
        for run in &runs {
            assert_eq!(HalfRun::from_name(&run.name()), Some(*run));
            // A k-tile of 32 f32; a slot as many bytes as the 16-bit one of the same tile.
            assert_eq!(run.config.geometry.bk, 32);
            assert!(run.config.geometry.dynamic_shared_bytes <= 227 * 1024);
        }
        // A small output with a deep k is split (k-tiles of 32 count).
        let thin = candidates(Input::Tf32, MatmulShape::new(128, 4096, 64).unwrap(), 132);
        assert!(thin.iter().any(|r| r.splits > 1), "{thin:?}");
        assert!(check_element(runs[0], Input::Bf16).is_err());
    }

    #[test]
    fn rounding_is_to_nearest_even() {
        let x = [1.0 + 1.0 / 256.0, 1.0 + 3.0 / 256.0];
        let r: Vec<half::bf16> = round_all(&x);
        assert_eq!(r[0].to_f32(), 1.0);
        assert_eq!(r[1].to_f32(), 1.0 + 1.0 / 64.0);
    }
}
