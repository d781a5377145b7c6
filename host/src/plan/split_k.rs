//! Split-k on the host ([`kernels_gpu::sgemm::split_k`]): a configuration that has a split-k
//! entry point runs `k` in `s` slices into a workspace, then one reduction adds the slices
//! in a fixed order (past `GROUP_PLANES` slices, a launch adding them in groups first:
//! [`SplitKLaunch::group`]). Deterministic, run to run; the f32 error bound is the plain
//! product's with `k + s` roundings instead of `k` ([`SplitK::roundings`]).
//!
//! The autotuner ([`crate::gpu::autotune`]) times each [`SplitK::candidates`] beside the plain
//! configurations, so products whose output has few block tiles (a small `m` or `n` and a
//! large `k`) get one; it can also be run directly ([`crate::gpu::Gpu::matmul_split_k_device`],
//! [`crate::sim::Simulator::matmul_split_k`]).

use crate::plan::sgemm::SgemmKernel;
use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
use kernels_gpu::catalogue::{Extent, KernelSpec};
use kernels_gpu::nvptx_device::launch::Launch;
use kernels_gpu::sgemm::split_k::GROUP_PLANES;
use kernels_gpu::sgemm::{CONFIGS, split_k};

/// The most blocks a configuration's own grid may have for the autotuner to time its split-k
/// runs ([`SplitK::candidates_for`]): 1024, about four waves of two blocks on each of an
/// H100's or H200's 132 SMs. Split-k pays where the output has too few blocks to fill the
/// GPU (every split-k choice of the shape suite had 64 to 128); a grid past this fills it
/// several times over, and splitting it only adds the workspace's traffic and a reduction
/// (at 16384³ the 32-slice run would write and read a 32 GiB workspace).
pub const MAX_GRID_BLOCKS: u64 = 1024;

/// A split-k run: configuration `config` (one with a split-k entry point) over `splits`
/// slices of `k` (fewer where `k` is short: see [`SplitK::slices`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SplitK {
    /// Index into `kernels_gpu::sgemm::CONFIGS`.
    pub config: usize,
    /// Slices asked for.
    pub splits: u32,
}

/// How one split-k product is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitKLaunch {
    /// Depth of each slice but the last (a multiple of the configuration's `bk`).
    pub slice: u32,
    /// Slices actually run: `cdiv(k, slice)`, at most [`SplitK::splits`].
    pub slices: u32,
    /// The slice kernel: the configuration's grid, `slices` blocks in z.
    pub partial: Launch,
    /// Where there are more than [`GROUP_PLANES`] slices, the launch of
    /// [`sgemm_split_k_group`](kernels_gpu::sgemm::split_k::sgemm_split_k_group) adding the
    /// slices' planes in groups into [`groups`](Self::groups) planes after them, one block
    /// row per group; the reduction then adds those.
    pub group: Option<Launch>,
    /// Planes the reduction adds: `slices`, or `cdiv(slices, GROUP_PLANES)` where
    /// [`group`](Self::group) adds the slices first.
    pub groups: u32,
    /// The reduction over the `m·n` outputs.
    pub reduce: Launch,
    /// Floats of workspace: `slices · m · n`, plus `groups · m · n` where the slices are
    /// grouped (the group planes follow the slices').
    pub workspace: usize,
}

impl SplitKLaunch {
    /// Where the group planes start in the workspace of a product of `len` (`m · n`)
    /// outputs: after the slices' planes, in floats.
    pub fn groups_at(&self, len: u32) -> usize {
        self.slices as usize * len as usize
    }
}

impl SplitK {
    /// The slice counts the autotuner tries.
    pub const SPLITS: [u32; 5] = [2, 4, 8, 16, 32];

    /// Every configuration with a split-k entry point, at each of [`SPLITS`](Self::SPLITS).
    pub fn candidates() -> impl Iterator<Item = SplitK> {
        Self::configs().flat_map(|config| Self::SPLITS.map(|splits| SplitK { config, splits }))
    }

    /// The most slices a split-k run may ask for, where
    /// [`wave_candidates_for`](Self::wave_candidates_for) fills a device's waves with few
    /// output tiles and a long `k`: one or two waves of a one-tile output on 132 SMs of four
    /// blocks each (528 slots). An output of one or two tiles under a `k` of 10⁴–10⁵
    /// (33 × 100000 × 33, 28 × 13885 × 79) stopped at 64 slices, half a wave, when this was
    /// 64. The workspace stays small: slices times tiles is at most two waves of blocks.
    pub const MAX_SPLITS: u32 = 1024;

    /// The most slices of a serial run ([`serial_candidates_for`](Self::serial_candidates_for)
    /// and the wave-filling serial runs): its slices hand each tile on one after another, so
    /// the hand-offs of hundreds of slices would be a chain of that many waits.
    pub const SERIAL_MAX_SPLITS: u32 = 64;

    /// The indices into `CONFIGS` of the configurations with a split-k entry point.
    pub fn configs() -> impl Iterator<Item = usize> {
        CONFIGS
            .iter()
            .enumerate()
            .filter(|(_, c)| c.split_k.is_some())
            .map(|(config, _)| config)
    }

    /// The candidates worth timing for `shape`: at least two slices of at least two
    /// `bk`-deep tiles each, of a configuration whose own grid for `shape` has at most
    /// [`MAX_GRID_BLOCKS`] blocks.
    pub fn candidates_for(shape: MatmulShape) -> impl Iterator<Item = SplitK> {
        Self::candidates().filter(move |s| s.worth_timing(shape))
    }

    /// Block tiles of `config`'s own grid for `shape`.
    fn tiles(config: usize, shape: MatmulShape) -> u64 {
        let g = CONFIGS[config].geometry;
        u64::from(shape.m.div_ceil(g.bm.max(1))) * u64::from(shape.n.div_ceil(g.bn.max(1)))
    }

    /// [`candidates_for`](Self::candidates_for)'s test: at least two slices of at least two
    /// `bk`-deep tiles each, and at most [`MAX_GRID_BLOCKS`] tiles in the configuration's
    /// own grid.
    fn worth_timing(self, shape: MatmulShape) -> bool {
        let bk = u64::from(CONFIGS[self.config].geometry.bk.max(1));
        self.splits >= 2
            && u64::from(shape.k) >= 2 * bk * u64::from(self.splits)
            && Self::tiles(self.config, shape) <= MAX_GRID_BLOCKS
    }

    /// The slice counts of `config` (one with a split-k entry point) that fill whole waves
    /// of a device running `slots` of its blocks at once (blocks per SM times SMs), beyond
    /// [`SPLITS`](Self::SPLITS): for one and for two waves, the most slices whose blocks
    /// (output tiles times slices) still fit, where that is not one of `SPLITS` and passes
    /// [`candidates_for`](Self::candidates_for)'s test. A shape class, not a list: an output
    /// of 44 tiles of 128 × 128 on 132 SMs of two blocks each takes 6 slices for one wave
    /// and 12 for two, where `SPLITS` gives 4 (two thirds of a wave) or 8 (one and a third).
    /// Where one wave takes more slices than the largest of `SPLITS` (an output of a tile or
    /// two under a long `k`), half and a quarter of a wave too: fewer, deeper slices, and
    /// fewer planes to add, can beat a full wave there (on an H200, 28 × 13885 × 79 in 64
    /// slices of 64 × 64 tiles, 128 blocks, took 0.022 ms, in 264 slices 0.028 ms).
    pub fn wave_candidates_for(
        config: usize, shape: MatmulShape, slots: u64,
    ) -> impl Iterator<Item = SplitK> {
        let tiles = Self::tiles(config, shape).max(1);
        let fill =
            |num: u64, den: u64| (num * slots / den / tiles).min(u64::from(Self::MAX_SPLITS));
        let deep = fill(1, 1) > u64::from(Self::SPLITS[Self::SPLITS.len() - 1]);
        let fractions: &[(u64, u64)] = if deep {
            &[(1, 4), (1, 2), (1, 1), (2, 1)]
        } else {
            &[(1, 1), (2, 1)]
        };
        let mut splits: Vec<u32> = fractions
            .iter()
            .map(|&(num, den)| fill(num, den) as u32)
            .filter(|s| !Self::SPLITS.contains(s))
            .collect();
        splits.dedup();
        splits
            .into_iter()
            .map(move |splits| SplitK { config, splits })
            .filter(move |s| s.worth_timing(shape))
    }

    /// `<configuration name>-split<splits>`, e.g. `sgemm-multistage-64x64x16-w32x32-split8`.
    pub fn name(self) -> String {
        format!("{}-split{}", CONFIGS[self.config].name, self.splits)
    }

    /// Parses [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Self> {
        let (config, splits) = name.rsplit_once("-split")?;
        let splits: u32 = splits.parse().ok()?;
        let config = CONFIGS
            .iter()
            .position(|c| c.name == config && c.split_k.is_some())?;
        (2..=Self::MAX_SPLITS)
            .contains(&splits)
            .then_some(SplitK { config, splits })
    }

    /// The configuration it splits.
    pub fn kernel(self) -> SgemmKernel {
        SgemmKernel::Config(self.config)
    }

    /// The slice entry point's description.
    pub fn spec(self) -> &'static KernelSpec {
        CONFIGS[self.config]
            .split_k
            .as_ref()
            .expect("SplitK values name configurations with a split-k entry")
    }

    /// The slice depth and count for depth `k >= 1`: `cdiv(k, splits)` rounded up to the
    /// configuration's `bk` (so every slice but the last is whole tiles), then as many
    /// slices as that takes.
    pub fn slices(self, k: u32) -> (u32, u32) {
        let bk = CONFIGS[self.config].geometry.bk.max(1);
        let slice = k
            .div_ceil(self.splits)
            .div_ceil(bk)
            .saturating_mul(bk)
            .max(1);
        (slice, k.div_ceil(slice))
    }

    /// Roundings per output in the worst case: `k` in the slices' FMA chains, and one per
    /// added slice. The f32 bound is this many times `2⁻²⁴ · Σ|a||b|`.
    pub fn roundings(self, k: u32) -> usize {
        let (_, slices) = self.slices(k.max(1));
        k as usize + slices as usize
    }

    /// The launches for `shape` (not [trivial](MatmulShape::is_trivial)), and the
    /// workspace they need: [`Error::IndexOverflow`] if it does not fit.
    pub fn launch(self, shape: MatmulShape) -> Result<SplitKLaunch> {
        let (slice, slices) = self.slices(shape.k);
        let grouped = slices > GROUP_PLANES;
        let groups = if grouped {
            slices.div_ceil(GROUP_PLANES)
        } else {
            slices
        };
        let planes = slices + if grouped { groups } else { 0 };
        let workspace = workspace_len("split-k workspace", planes, shape)?;
        let mut partial = self.spec().launch(
            Extent::Matrix {
                rows: shape.m,
                cols: shape.n,
            },
            0,
        );
        partial.grid.z = slices;
        // m·n fits u32 (MatmulShape).
        let reduce = reduce_launch(shape.m * shape.n);
        let group = grouped.then(|| {
            let mut l = split_k::GROUP.launch(Extent::Items(shape.m * shape.n), 0);
            l.grid.y = groups;
            l
        });
        Ok(SplitKLaunch {
            slice,
            slices,
            partial,
            group,
            groups,
            reduce,
            workspace,
        })
    }
}

/// The launch of the split-k reduction over `len` outputs (any product split along its
/// depth into workspace planes: this module's, rung 17's).
pub fn reduce_launch(len: u32) -> Launch {
    split_k::REDUCE.launch(Extent::Items(len), 0)
}

/// Floats of a workspace of `slices` planes of `shape`'s outputs, or
/// [`Error::IndexOverflow`] naming it (`operand`) where that many bytes cannot be allocated.
pub fn workspace_len(operand: &'static str, slices: u32, shape: MatmulShape) -> Result<usize> {
    let outputs = shape.m as usize * shape.n as usize;
    outputs
        .checked_mul(slices as usize)
        .filter(|&w| w <= isize::MAX as usize / 4)
        .ok_or(Error::IndexOverflow {
            operand,
            rows: slices as usize,
            cols: outputs,
            elements: slices as u128 * outputs as u128,
        })
}

/// How one serial split-k product is launched ([`SplitK::serial_launch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SerialLaunch {
    /// Depth of each slice but the last, as [`SplitK::slices`] gives it.
    pub slice: u32,
    /// Slices actually run.
    pub slices: u32,
    /// The configuration's grid with `slices` blocks in z.
    pub launch: Launch,
    /// Words of the flag buffer: the ticket counter and one flag per output tile, all 0
    /// before the launch (and after it: the kernel puts them back).
    pub flags: usize,
}

impl SplitK {
    /// The most output tiles, in waves of one block per multiprocessor, for which the
    /// autotuner times serial split-k runs ([`serial_candidates_for`](Self::serial_candidates_for)):
    /// past two waves the output alone keeps the GPU busy, and a serial hand-off only adds
    /// waits.
    pub const SERIAL_MAX_WAVES: u32 = 2;

    /// The serial split-k entry point of its configuration, if it has one
    /// ([`kernels_gpu::sgemm::split_k`]'s module docs).
    pub fn serial_spec(self) -> Option<&'static KernelSpec> {
        CONFIGS[self.config].serial_split_k.as_ref()
    }

    /// The serial runs worth timing for `shape` on a device of `sms` multiprocessors: those
    /// of [`candidates_for`](Self::candidates_for) whose configuration has a serial entry
    /// and whose output has at most [`SERIAL_MAX_WAVES`](Self::SERIAL_MAX_WAVES) waves of
    /// tiles (a shape class: few output tiles for the device, a `k` deep enough to split).
    pub fn serial_candidates_for(shape: MatmulShape, sms: u32) -> impl Iterator<Item = SplitK> {
        Self::candidates_for(shape).filter(move |s| s.serial_worth_timing(shape, sms))
    }

    /// [`serial_candidates_for`](Self::serial_candidates_for)'s test beyond
    /// [`candidates_for`](Self::candidates_for)'s: a serial entry point, at most
    /// [`SERIAL_MAX_SPLITS`](Self::SERIAL_MAX_SPLITS) slices, and at most
    /// [`SERIAL_MAX_WAVES`](Self::SERIAL_MAX_WAVES) waves of output tiles on `sms` SMs.
    pub fn serial_worth_timing(self, shape: MatmulShape, sms: u32) -> bool {
        let most = u64::from(sms.max(1)) * u64::from(Self::SERIAL_MAX_WAVES);
        self.serial_spec().is_some()
            && self.splits <= Self::SERIAL_MAX_SPLITS
            && Self::tiles(self.config, shape) <= most
    }

    /// `<configuration name>-serialsplit<splits>`, e.g.
    /// `sgemm-multistage-64x64x16-w32x32-serialsplit8`.
    pub fn serial_name(self) -> String {
        format!("{}{SERIAL}{}", CONFIGS[self.config].name, self.splits)
    }

    /// Parses [`serial_name`](Self::serial_name).
    pub fn from_serial_name(name: &str) -> Option<Self> {
        let (config, splits) = name.rsplit_once(SERIAL)?;
        let splits: u32 = splits.parse().ok()?;
        let config = CONFIGS
            .iter()
            .position(|c| c.name == config && c.serial_split_k.is_some())?;
        (2..=Self::SERIAL_MAX_SPLITS)
            .contains(&splits)
            .then_some(SplitK { config, splits })
    }

    /// The serial launch for `shape` (not [trivial](MatmulShape::is_trivial)):
    /// [`Error::EntryNotFound`] for a configuration without a serial entry.
    pub fn serial_launch(self, shape: MatmulShape) -> Result<SerialLaunch> {
        let spec = self.serial_spec().ok_or_else(|| Error::EntryNotFound {
            entry: self.serial_name(),
        })?;
        let (slice, slices) = self.slices(shape.k);
        let mut launch = spec.launch(
            Extent::Matrix {
                rows: shape.m,
                cols: shape.n,
            },
            0,
        );
        launch.grid.z = slices;
        let tiles = launch.grid.x as usize * launch.grid.y as usize;
        Ok(SerialLaunch {
            slice,
            slices,
            launch,
            flags: 1 + tiles,
        })
    }
}

/// The infix of a serial split-k run's name ([`SplitK::serial_name`]).
const SERIAL: &str = "-serialsplit";

/// What split-k computes, on the CPU, bit for bit: each output as the slices' FMA chains
/// (`k` order from `0.0` within a slice) added in slice order; past [`GROUP_PLANES`]
/// slices, added in order within each group of that many consecutive slices, then the
/// groups' sums in order ([`SplitKLaunch::group`]). The GPU and simulator runs of `s` must
/// give exactly this.
pub fn cpu_split_k(s: SplitK, a: &[f32], b: &[f32], shape: MatmulShape) -> Vec<f32> {
    let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
    let mut out = vec![0.0f32; m * n];
    if k == 0 {
        return out;
    }
    let (slice, slices) = s.slices(shape.k);
    for r in 0..m {
        for c in 0..n {
            let part = |z: usize| {
                let range = z * slice as usize..((z + 1) * slice as usize).min(k);
                range.fold(0.0f32, |p, i| a[r * k + i].mul_add(b[i * n + c], p))
            };
            // In order from the first: `((x_0 + x_1) + …)`.
            let in_order = |xs: &mut dyn Iterator<Item = f32>| {
                let first = xs.next().unwrap_or(0.0);
                xs.fold(first, |sum, x| sum + x)
            };
            let slices = slices as usize;
            out[r * n + c] = if slices <= GROUP_PLANES as usize {
                in_order(&mut (0..slices).map(part))
            } else {
                let group = GROUP_PLANES as usize;
                in_order(
                    &mut (0..slices)
                        .step_by(group)
                        .map(|first| in_order(&mut (first..(first + group).min(slices)).map(part))),
                )
            };
        }
    }
    out
}

impl std::fmt::Display for SplitK {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_slices_cover_k() {
        let all: Vec<_> = SplitK::candidates().collect();
        assert!(!all.is_empty(), "some configuration has a split-k entry");
        for s in all {
            assert_eq!(SplitK::from_name(&s.name()), Some(s));
            let bk = CONFIGS[s.config].geometry.bk;
            for k in [1, 15, 16, 17, 64, 1000, 4096, 8191] {
                let (slice, slices) = s.slices(k);
                assert!(slices >= 1 && slices <= s.splits, "{s} k={k}: {slices}");
                assert!(slice.is_multiple_of(bk), "{s} k={k}: slice {slice}");
                assert!((slices - 1) * slice < k && slices * slice >= k, "{s} k={k}");
            }
        }
        assert_eq!(SplitK::from_name("sgemm-coalesced-32-split2"), None);
        assert_eq!(SplitK::from_name("nonsense"), None);
    }

    #[test]
    fn split_k_is_timed_only_for_grids_of_at_most_max_grid_blocks() {
        let shape = |m, k, n| MatmulShape::new(m, k, n).unwrap();
        let blocks = |s: SplitK, sh: MatmulShape| {
            let g = CONFIGS[s.config].geometry;
            sh.m.div_ceil(g.bm) as u64 * sh.n.div_ceil(g.bn) as u64
        };
        // The suite's split-k choices keep their candidates.
        for small in [
            shape(512, 512, 512),
            shape(64, 4096, 4096),
            shape(8192, 8192, 32),
        ] {
            let all: Vec<_> = SplitK::candidates_for(small).collect();
            assert!(!all.is_empty(), "{small}");
            assert!(all.iter().all(|&s| blocks(s, small) <= MAX_GRID_BLOCKS));
        }
        // A huge output has none.
        assert_eq!(
            SplitK::candidates_for(shape(16384, 16384, 16384)).count(),
            0
        );
        // At the bound exactly, and one block row past it, for each configuration.
        for s in SplitK::candidates().filter(|s| s.splits == 2) {
            let g = CONFIGS[s.config].geometry;
            let (m, n) = (32 * g.bm as usize, 32 * g.bn as usize); // 32 × 32 = 1024 blocks
            let at = shape(m, 4096, n);
            assert_eq!(blocks(s, at), MAX_GRID_BLOCKS);
            assert!(SplitK::candidates_for(at).any(|c| c == s), "{s} at {at}");
            let past = shape(m + 1, 4096, n);
            assert!(
                SplitK::candidates_for(past).all(|c| c != s),
                "{s} at {past}"
            );
        }
    }

    #[test]
    fn serial_runs_are_timed_for_few_output_tiles_and_round_trip() {
        let shape = |m, k, n| MatmulShape::new(m, k, n).unwrap();
        let all: Vec<_> = SplitK::candidates()
            .filter(|s| s.serial_spec().is_some())
            .collect();
        assert!(!all.is_empty(), "some configuration has a serial entry");
        for s in &all {
            assert_eq!(SplitK::from_serial_name(&s.serial_name()), Some(*s));
            // The two kinds of name do not parse as each other.
            assert_eq!(SplitK::from_name(&s.serial_name()), None);
            assert_eq!(SplitK::from_serial_name(&s.name()), None);
        }
        // 195 × 2802 in 64 × 64 tiles: 4 · 44 = 176 tiles, under two waves of 132 SMs.
        let mid = shape(195, 1423, 2802);
        let serial: Vec<_> = SplitK::serial_candidates_for(mid, 132).collect();
        assert!(serial.iter().any(|s| s.serial_name().contains("64x64x16")));
        // On a device of 8 SMs the same output is many waves: none.
        assert_eq!(SplitK::serial_candidates_for(mid, 8).count(), 0);
        // A short k has nothing to split.
        assert_eq!(
            SplitK::serial_candidates_for(shape(195, 16, 2802), 132).count(),
            0
        );
        let s = serial[0];
        let l = s.serial_launch(mid).unwrap();
        let (slice, slices) = s.slices(mid.k);
        assert_eq!(
            (l.slice, l.slices, l.launch.grid.z),
            (slice, slices, slices)
        );
        assert_eq!(
            l.flags,
            1 + l.launch.grid.x as usize * l.launch.grid.y as usize
        );
        let plain = SplitK::candidates()
            .find(|s| s.serial_spec().is_none())
            .map(|s| s.serial_launch(mid));
        assert!(matches!(
            plain,
            None | Some(Err(Error::EntryNotFound { .. }))
        ));
    }

    #[test]
    fn wave_filling_slice_counts_fit_whole_waves_beyond_the_fixed_list() {
        let shape = |m, k, n| MatmulShape::new(m, k, n).unwrap();
        let big = CONFIGS
            .iter()
            .position(|c| c.name == "sgemm-multistage-128x128x16-w64x32")
            .unwrap();
        assert!(CONFIGS[big].split_k.is_some() && CONFIGS[big].serial_split_k.is_some());
        // 195 × 2802 in 128 × 128 tiles: 2 · 22 = 44; 264 slots take 6 (one wave) and 12.
        let mid = shape(195, 1423, 2802);
        let wave: Vec<u32> = SplitK::wave_candidates_for(big, mid, 264)
            .map(|s| s.splits)
            .collect();
        assert_eq!(wave, [6, 12]);
        for s in SplitK::wave_candidates_for(big, mid, 264) {
            assert_eq!(SplitK::from_name(&s.name()), Some(s));
            assert_eq!(SplitK::from_serial_name(&s.serial_name()), Some(s));
            let (_, slices) = s.slices(mid.k);
            assert!(
                SplitK::tiles(big, mid) * u64::from(slices) <= 2 * 264,
                "{s}"
            );
        }
        // A count already in SPLITS is not proposed twice: 66 tiles, 264 slots, 4 and 8.
        let even = shape(256, 4096, 4224);
        assert_eq!(SplitK::wave_candidates_for(big, even, 264).count(), 0);
        // A short k has nothing to split; a full output needs no split.
        assert_eq!(
            SplitK::wave_candidates_for(big, shape(195, 100, 2802), 264).count(),
            0
        );
        assert_eq!(
            SplitK::wave_candidates_for(big, shape(4096, 4096, 4096), 264).count(),
            0
        );
        // A tiny output with a very long k fills a quarter, half, one and two waves (66 to
        // 528 slices), the serial runs of the deepest not timed (a chain of hand-offs); a
        // deeper k on a device with more slots stops at MAX_SPLITS.
        let tiny = shape(33, 100_000, 33);
        let most: Vec<u32> = SplitK::wave_candidates_for(big, tiny, 264)
            .map(|s| s.splits)
            .collect();
        assert_eq!(most, [66, 132, 264, 528]);
        for s in SplitK::wave_candidates_for(big, tiny, 264) {
            assert_eq!(SplitK::from_name(&s.name()), Some(s));
            let serial = s.splits <= SplitK::SERIAL_MAX_SPLITS;
            assert_eq!(s.serial_worth_timing(tiny, 132), serial, "{s}");
            let parsed = SplitK::from_serial_name(&s.serial_name());
            assert_eq!(parsed, serial.then_some(s), "{s}");
        }
        let deeper = shape(33, 1_000_000, 33);
        let most: Vec<u32> = SplitK::wave_candidates_for(big, deeper, 4 * 264)
            .map(|s| s.splits)
            .collect();
        assert_eq!(most, [264, 528, SplitK::MAX_SPLITS]);
        let past = format!(
            "sgemm-multistage-128x128x16-w64x32-split{}",
            SplitK::MAX_SPLITS + 1
        );
        assert_eq!(SplitK::from_name(&past), None);
        assert_eq!(
            SplitK::from_name("sgemm-multistage-128x128x16-w64x32-split1"),
            None
        );
    }

    #[test]
    fn launch_puts_the_slices_in_z() {
        let s = SplitK::candidates().find(|s| s.splits == 8).unwrap();
        let shape = MatmulShape::new(64, 4096, 4096).unwrap();
        let l = s.launch(shape).unwrap();
        assert_eq!(l.slices, 8);
        assert_eq!(l.partial.grid.z, 8);
        assert_eq!(l.workspace, 8 * 64 * 4096);
        assert_eq!(l.slice * 8, 4096);
    }
}
