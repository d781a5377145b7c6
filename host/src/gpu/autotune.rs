//! Autotuning the SGEMM ladder's top rungs: on the present GPU, time every configuration in
//! [`SgemmKernel::TUNED`] on a shape (and, in FP32, its split-k runs, repacked products,
//! row splits and runs on operands padded to whole tiles: [`Tuned`]), keep the fastest, and
//! remember the choice.
//!
//! The best block, warp and thread tiles depend on the GPU (SM count, registers, shared
//! memory) and on the shape (how many output tiles, how deep `k` is), and a few
//! milliseconds of measurement answer better than a model. [`MatmulKernel::Sgemm`] with
//! [`SgemmKernel::Autotuned`] asks [`choose`] for the configuration on each launch:
//!
//! 1. a process-wide memo, keyed by device name, compute capability, shape and a
//!    fingerprint of the PTX modules (the main one and the `sm_90a` one: [`key`]);
//! 2. else the JSON cache file ([`TuneCache::default_path`]: `$XDG_CACHE_HOME` or
//!    `~/.cache`, then `pure-rust-cuda-kernels/autotune.json`), under the same key;
//! 3. else it times each candidate with CUDA events ([`Gpu::time_within`], as [`TIMING`]
//!    allows: the median of up to 5 runs after up to 2 warm-ups, fewer where a run is
//!    long) on the launch's own buffers, says so on stderr (one line before, one line with
//!    the choice after; every candidate's time too if [`set_verbose`]), and writes the
//!    choice, with every candidate's time, to both. That first launch of a shape therefore
//!    waits for the GPU.
//!
//! The choice rule is the same for every shape: the smallest median wins (the first in
//! candidate order on a tie). Only how many runs each median is of depends on the time a
//! run takes, and a candidate the device cannot run (a launch it refuses, a split-k
//! workspace that does not fit in its free memory) is skipped.
//!
//! A missing, unreadable or corrupted cache file is ignored with a warning on stderr (and
//! rewritten on the next choice), never an error; so is a cached kernel name this build does
//! not know. Deleting the file re-tunes everything. The simulator does not tune:
//! [`SgemmKernel::Autotuned`] runs [`SgemmKernel::DEFAULT`] there.

use crate::gpu::Gpu;
use crate::plan::budget::TimeBudget;
use crate::plan::budget::median;
use crate::plan::gemv::{self, Gemv, GemvElement};
use crate::plan::half::{self, HalfFloat, HalfRun, Input};
use crate::plan::kernels::MatmulKernel;
use crate::plan::packed::PACKED_CONFIGS;
use crate::plan::repack::{self, TiledRun};
use crate::plan::row_split::{self, RowSplit};
use crate::plan::sgemm::SgemmKernel;
use crate::plan::split_k::SplitK;
use crate::plan::stream_k::StreamRun;
use crate::problem::error::{DriverContext, Error, Result};
use crate::problem::shape::MatmulShape;
use crate::problem::tile::TileWidth;
use crate::progress::Progress;
use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use kernels_gpu::sgemm::Precision;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// How each candidate is timed ([`crate::plan::budget`]): up to 2 warm-ups and 5 timed runs (the
/// median decides), each phase stopping once it has taken 100 ms, with at least one run of
/// each. Up to 8192³ on an H100 (about 23 ms a run for the best candidates) that is all 7
/// runs for them; at 16384³ (0.2 s and more a run) one warm-up and one timed run, so that
/// tuning such a shape costs seconds rather than most of a minute.
pub const TIMING: TimeBudget = TimeBudget::new(2, 5, Some(Duration::from_millis(100)));
/// The final round's finalists: the candidates whose first-round median is within this
/// factor of the fastest's, at most [`FINALISTS`] of them, fastest first.
pub const FINALIST_MARGIN: f64 = 1.10;
/// The most finalists.
pub const FINALISTS: usize = 6;
/// The final round: [`FINAL_ROUNDS`] rounds, each timing every finalist in turn with this
/// budget (one warm-up, up to 5 runs within 50 ms); the median of all of a finalist's runs
/// decides. Five runs of each candidate rank candidates within a few percent of each other
/// by chance: on an H200 one build chose 64 × 128 × 8 for 7412 × 35 × 1695 from its five
/// runs and ran it at 0.060 ms in the suite's 100, where the build before, without that
/// tile, had chosen 32 × 128 × 16 and ran it at 0.055 ms. Alternating the finalists
/// spreads the device's clock changes over all of them.
pub const FINAL: TimeBudget = TimeBudget::new(1, 5, Some(Duration::from_millis(50)));
/// Rounds of the final round.
pub const FINAL_ROUNDS: usize = 4;
/// The cache file's format version; a file with another one is ignored.
pub const CACHE_VERSION: u32 = 1;

/// One tuning result: the fastest kernel's name, its median time, and every candidate's.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Choice {
    /// [`SgemmKernel::name`] of the fastest candidate.
    pub kernel: String,
    /// Its median milliseconds.
    pub ms: f64,
    /// Median milliseconds of every candidate that ran, by name.
    pub candidates_ms: BTreeMap<String, f64>,
}

impl Choice {
    /// The chosen kernel, if it is one of this build's candidates.
    pub fn kernel(&self) -> Option<Tuned> {
        Tuned::from_name(&self.kernel)
    }
}

/// What the autotuner chooses among: a configuration of [`SgemmKernel::TUNED`], a
/// split-k run of one ([`SplitK::candidates`]), or a product split by rows between the two
/// ([`crate::plan::row_split`], proposed from the timings of the others: see [`tune`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tuned {
    Config(SgemmKernel),
    SplitK(SplitK),
    /// A serial split-k run of a configuration: one launch, the slices of each output tile
    /// adding up in order through the output ([`SplitK::serial_candidates_for`], proposed by
    /// [`tune`], which knows the device's multiprocessors).
    Serial(SplitK),
    /// A stream-k run of a configuration: one launch of a block per worker, the product's
    /// k-tiles cut evenly among them ([`StreamRun::candidate_for`], proposed by [`tune`],
    /// which knows the device's occupancy).
    Stream(StreamRun),
    Rows(RowSplit),
    /// A configuration of [`SgemmKernel::TUNED`] on repacked operands ([`crate::plan::repack`]).
    Repacked(SgemmKernel),
    /// A configuration or a split-k run on operands padded to whole tiles
    /// ([`repack::tiles`]), proposed by [`tune`] from the fastest plain and split-k runs
    /// timed.
    Tiled(TiledRun),
    /// TF32 on packed operands: the configuration `PACKED_CONFIGS[i]` of rung 14 (`wgmma`,
    /// which a GPU that is not a Hopper declines) or 15 (`mma.sync`) ([`crate::plan::packed`]),
    /// packing included.
    Packed(usize),
    /// A memory-bound product (`m`, `n` or `k` at most 16): a rung-16 kernel over its
    /// slices of `k`, its inputs rounded to the precision ([`crate::plan::gemv`]).
    Gemv(Gemv),
    /// BF16 or TF32 on Hopper (rung 17, [`crate::plan::half`]): the f32 operands converted
    /// to `bf16` on the device, or packed for TF32 (as for rung 14), then the run,
    /// conversion or packing included. Proposed on a Hopper only (by [`tune`], which knows
    /// the device).
    Half(HalfRun),
}

impl Tuned {
    /// Every candidate of `precision` for `shape`: the tuned configurations of that
    /// precision, then (FP32) the split-k runs deep enough for its `k` and, where `k` or
    /// `n` is not a multiple of 4, or `k` not whole tiles of a configuration with a strided
    /// entry ([`repack::worth_timing`]), each such configuration repacked, or
    /// (TF32) the configurations on packed operands, rung 14's (which only a Hopper runs)
    /// and rung 15's; last (where [`gemv::applies`]: a memory-bound shape, few rows or a
    /// narrow output) the rung-16 runs of the precision ([`Gemv::candidates`]).
    pub fn candidates(shape: MatmulShape, precision: Precision) -> Vec<Tuned> {
        let configs = SgemmKernel::tuned(precision).iter().copied();
        let fp32 = precision == Precision::Fp32;
        let split = fp32
            .then(|| SplitK::candidates_for(shape).map(Tuned::SplitK))
            .into_iter()
            .flatten();
        let repacked = configs
            .clone()
            .filter(move |k| fp32 && repack::worth_timing(k.config(), shape))
            .map(Tuned::Repacked);
        let packed = (precision == Precision::Tf32)
            .then(|| (0..PACKED_CONFIGS.len()).map(Tuned::Packed))
            .into_iter()
            .flatten();
        let gemv = gemv::applies(shape)
            .then(|| {
                Gemv::candidates(shape, precision)
                    .into_iter()
                    .map(Tuned::Gemv)
            })
            .into_iter()
            .flatten();
        configs
            .map(Tuned::Config)
            .chain(split)
            .chain(repacked)
            .chain(packed)
            .chain(gemv)
            .collect()
    }

    /// The configuration's name, or the split-k run's.
    pub fn name(&self) -> String {
        match self {
            Self::Config(k) => k.name().to_owned(),
            Self::SplitK(s) => s.name(),
            Self::Serial(s) => s.serial_name(),
            Self::Stream(s) => s.name(),
            Self::Rows(r) => r.name(),
            Self::Repacked(k) => format!("{}{REPACKED}", k.name()),
            Self::Tiled(r) => r.name(),
            Self::Packed(i) => PACKED_CONFIGS[*i].name.to_owned(),
            Self::Gemv(g) => g.name(),
            Self::Half(r) if r.config.input == Input::Tf32 => r.name(),
            Self::Half(r) => format!("{}{FROM_F32}", r.name()),
        }
    }

    /// Parses [`name`](Self::name), for this build's candidates of any precision.
    pub fn from_name(name: &str) -> Option<Self> {
        SgemmKernel::TUNED
            .into_iter()
            .chain(SgemmKernel::TUNED_TF32)
            .chain(SgemmKernel::TUNED_BF16)
            .find(|k| k.name() == name)
            .map(Self::Config)
            .or_else(|| RowSplit::from_name(name).map(Self::Rows))
            .or_else(|| {
                let config = name.strip_suffix(REPACKED)?;
                let mut fp32 = SgemmKernel::TUNED.into_iter();
                fp32.find(|k| k.name() == config).map(Self::Repacked)
            })
            .or_else(|| TiledRun::from_name(name).map(Self::Tiled))
            .or_else(|| SplitK::from_name(name).map(Self::SplitK))
            .or_else(|| SplitK::from_serial_name(name).map(Self::Serial))
            .or_else(|| StreamRun::from_name(name).map(Self::Stream))
            .or_else(|| {
                PACKED_CONFIGS
                    .iter()
                    .position(|c| c.name == name)
                    .map(Self::Packed)
            })
            .or_else(|| {
                // Rung 16 on f32 operands (those of BF16 operands are HalfChoice's).
                let g = Gemv::from_name(name)?;
                (g.config().operands == gemv::Operands::F32).then_some(Self::Gemv(g))
            })
            .or_else(|| {
                let run = HalfRun::from_name(name)?;
                (run.config.input == Input::Tf32).then_some(Self::Half(run))
            })
            .or_else(|| {
                let run = HalfRun::from_name(name.strip_suffix(FROM_F32)?)?;
                (run.config.input == Input::Bf16).then_some(Self::Half(run))
            })
    }

    /// The entry points it launches: [`tune`] compiles every candidate's at once, in
    /// parallel, before it times any.
    pub fn entries(self) -> Vec<&'static str> {
        use crate::plan::packed::Packing;
        use kernels_gpu::sgemm::repack::{REPACK, REPACK_16BIT};
        use kernels_gpu::sgemm::split_k::{GROUP, REDUCE};
        match self {
            Self::Config(k) => vec![k.entry()],
            Self::SplitK(s) => vec![s.spec().entry, GROUP.entry, REDUCE.entry],
            Self::Serial(s) => s.serial_spec().map(|spec| spec.entry).into_iter().collect(),
            Self::Stream(s) => s.spec().map(|spec| spec.entry).into_iter().collect(),
            Self::Rows(r) => vec![r.top.entry(), r.bottom.spec().entry, REDUCE.entry],
            Self::Tiled(TiledRun::Config(k)) => vec![k.entry(), REPACK.entry],
            Self::Tiled(TiledRun::Split(s)) => {
                vec![s.spec().entry, GROUP.entry, REDUCE.entry, REPACK.entry]
            }
            Self::Repacked(k) => match &k.config().strided {
                Some(strided) => vec![strided.entry, REPACK.entry],
                None => vec![k.entry(), REPACK.entry],
            },
            Self::Packed(i) => vec![
                PACKED_CONFIGS[i].spec.entry,
                Packing::Rounded.transpose().entry,
                Packing::Rounded.repack().entry,
            ],
            Self::Gemv(g) => vec![g.config().spec.entry, REDUCE.entry],
            Self::Half(r) if r.config.input == Input::Tf32 => vec![
                r.config.spec.entry,
                REDUCE.entry,
                Packing::Plain.transpose().entry,
                Packing::Plain.repack().entry,
            ],
            Self::Half(r) => vec![r.config.spec.entry, REDUCE.entry, REPACK_16BIT[1].entry],
        }
    }

    /// Runs it on device buffers of `shape`'s lengths (checked), as
    /// [`Gpu::matmul_device`] runs the autotuned SGEMM.
    pub fn run(
        self, gpu: &Gpu, a: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        match self {
            Tuned::Config(k) => {
                gpu.matmul_device(MatmulKernel::Sgemm(k), TileWidth::Tw16, a, b, out, shape)
            }
            Tuned::SplitK(s) => gpu.matmul_split_k_device(s, a, b, out, shape),
            Tuned::Serial(s) => gpu.matmul_serial_split_k_device(s, a, b, out, shape),
            Tuned::Stream(s) => gpu.matmul_stream_k_device(s, a, b, out, shape),
            Tuned::Rows(r) => gpu.matmul_rows_device(r, a, b, out, shape),
            Tuned::Repacked(k) => gpu.matmul_repacked_device(k, a, b, out, shape),
            Tuned::Tiled(r) => gpu.matmul_tiles_device(r, a, b, out, shape),
            Tuned::Packed(i) => gpu.matmul_packed_device(PACKED_CONFIGS[i], a, b, out, shape),
            Tuned::Gemv(g) => gpu.matmul_gemv_device(g, a, b, out, shape),
            Tuned::Half(r) if r.config.input == Input::Tf32 => {
                gpu.matmul_tf32_ws(r, a, b, out, shape)
            }
            Tuned::Half(r) => gpu.matmul_half_from_f32::<::half::bf16>(r, a, b, out, shape),
        }
    }
}

impl Tuned {
    /// The columns its blocks compute, for a plain configuration: each element of the
    /// product is then summed alone, whatever the columns around it, so a product over
    /// panels of `b`'s columns has the bits of one over all of them
    /// ([`crate::plan::shard::product_plan`]); `None` for every other choice.
    pub fn block_cols(self) -> Option<u32> {
        match self {
            Self::Config(k) => Some(k.config().geometry.bn),
            _ => None,
        }
    }

    /// Rows of the output each block computes, for every configuration this choice runs
    /// (their least common multiple: a row split's two parts): a multi-GPU product splits
    /// its rows at multiples of it ([`crate::plan::shard`]).
    pub fn block_rows(self) -> u32 {
        let bm = |config: usize| kernels_gpu::sgemm::CONFIGS[config].geometry.bm;
        match self {
            Self::Config(k) | Self::Repacked(k) => k.config().geometry.bm,
            Self::Tiled(r) => r.config().geometry.bm,
            Self::SplitK(s) | Self::Serial(s) => bm(s.config),
            Self::Stream(s) => bm(s.config),
            Self::Rows(r) => {
                crate::plan::shard::lcm(r.top.config().geometry.bm, bm(r.bottom.config))
            }
            Self::Packed(i) => PACKED_CONFIGS[i].geometry.bm,
            Self::Half(r) => r.config.geometry.bm,
            // Every row of a rung-16 product is its own: any split of the rows serves.
            Self::Gemv(_) => 1,
        }
    }

    /// What one GPU's run of this choice computes rows `rows` of the product of `m` rows
    /// with, as a choice of its own on those rows alone: the same choice, except for a row
    /// split ([`Tuned::Rows`]), whose rows above its split are its top configuration's and
    /// those below its split-k run's, and a stream-k run, which runs the whole product's
    /// schedule on those rows ([`StreamRun::for_rows`]). A multi-GPU product runs this on
    /// each device's rows (`crate::multi`), so that every row is computed by the kernel one
    /// GPU would use, with its bits.
    pub fn for_rows(self, rows: std::ops::Range<u32>, m: u32) -> Tuned {
        match self {
            Self::Stream(s) => Self::Stream(s.for_rows(rows, m)),
            Self::Rows(r) if rows.end <= r.rows => Self::Config(r.top),
            Self::Rows(r) if rows.start >= r.rows => Self::SplitK(r.bottom),
            Self::Rows(r) => Self::Rows(RowSplit {
                rows: r.rows - rows.start,
                ..r
            }),
            other => other,
        }
    }
}

impl std::fmt::Display for Tuned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// The suffix of a [`Tuned::Half`] candidate's name, after its run's.
pub const FROM_F32: &str = "-from-f32";

/// The suffix of a [`Tuned::Repacked`] candidate's name, after its configuration's.
pub const REPACKED: &str = "-repacked";

/// The cache key: device name, compute capability, shape (`m×k×n`), the precision unless
/// it is FP32, and the fingerprint of the PTX module the candidates were timed from, e.g.
/// `NVIDIA H200 sm_90 4096x4096x4096 ptx:5d0c1e2f3a4b5c6d` or `… 4096x4096x4096 tf32
/// ptx:…`. A change to any kernel changes the fingerprint, so a choice timed on old code is
/// never reused for new code.
pub fn key(
    device: &str, compute_capability: (i32, i32), shape: MatmulShape, precision: Precision,
    module_fingerprint: u64,
) -> String {
    let (major, minor) = compute_capability;
    let precision = match precision {
        Precision::Fp32 => String::new(),
        other => format!(" {}", other.name()),
    };
    format!(
        "{device} sm_{major}{minor} {}x{}x{}{precision} ptx:{module_fingerprint:016x}",
        shape.m, shape.k, shape.n
    )
}

/// A 64-bit FNV-1a hash of `ptx`: stable across runs and builds of the host, unlike std's
/// hashers. Computed once per module text in a process (it reads the whole module).
pub fn module_fingerprint(ptx: &str) -> u64 {
    /// (address, length, hash) of the module texts hashed so far.
    static SEEN: Mutex<Vec<(usize, usize, u64)>> = Mutex::new(Vec::new());
    let id = (ptx.as_ptr() as usize, ptx.len());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, _, hash)) = seen.iter().find(|&&(p, l, _)| (p, l) == id) {
        return hash;
    }
    let hash = ptx.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    seen.push((id.0, id.1, hash));
    hash
}

/// The file's contents.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct CacheFile {
    version: u32,
    entries: BTreeMap<String, Choice>,
}

/// The tuning results kept in a JSON file.
#[derive(Debug)]
pub struct TuneCache {
    path: PathBuf,
    entries: BTreeMap<String, Choice>,
    /// Why the file's contents were ignored, if they were (also printed to stderr).
    pub warning: Option<String>,
}

impl TuneCache {
    /// `$XDG_CACHE_HOME/pure-rust-cuda-kernels/autotune.json` if `XDG_CACHE_HOME` is an
    /// absolute path (as the XDG spec requires), else `$HOME/.cache/...`; `None` without
    /// either.
    pub fn default_path() -> Option<PathBuf> {
        cache_path(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
    }

    /// The cache in `path`: empty if the file does not exist; empty, with a
    /// [`warning`](Self::warning) printed to stderr, if it cannot be read or parsed or has
    /// another [`CACHE_VERSION`].
    pub fn load(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let (entries, warning) = match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (BTreeMap::new(), None),
            Err(e) => (BTreeMap::new(), Some(format!("cannot read it: {e}"))),
            Ok(text) => match serde_json::from_str::<CacheFile>(&text) {
                Err(e) => (BTreeMap::new(), Some(format!("not a valid cache: {e}"))),
                Ok(file) if file.version != CACHE_VERSION => (
                    BTreeMap::new(),
                    Some(format!(
                        "version {} where this build writes {CACHE_VERSION}",
                        file.version
                    )),
                ),
                Ok(file) => (file.entries, None),
            },
        };
        let warning = warning.map(|why| {
            let w = format!(
                "ignoring the autotune cache {} ({why}); it will be rewritten",
                path.display()
            );
            eprintln!("warning: {w}");
            w
        });
        Self {
            path,
            entries,
            warning,
        }
    }

    /// Where the cache is read from and written to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The cached result for `key`.
    pub fn get(&self, key: &str) -> Option<&Choice> {
        self.entries.get(key)
    }

    /// The cached kernel for `key`, if this build has it.
    pub fn kernel(&self, key: &str) -> Option<Tuned> {
        self.get(key).and_then(Choice::kernel)
    }

    /// Records `choice` for `key` (in memory; [`save`](Self::save) writes it).
    pub fn insert(&mut self, key: String, choice: Choice) {
        self.entries.insert(key, choice);
    }

    /// Writes the cache, creating its folder: to a temporary file first, then renamed over
    /// the old one, so a reader never sees half a file. (Two processes tuning at once: the
    /// last one to save wins, and the other's new entries are tuned again later.)
    pub fn save(&self) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = CacheFile {
            version: CACHE_VERSION,
            entries: self.entries.clone(),
        };
        let text = serde_json::to_string_pretty(&file).map_err(std::io::Error::other)?;
        let tmp = self
            .path
            .with_extension(format!("json.tmp.{}", std::process::id()));
        std::fs::write(&tmp, text + "\n")?;
        std::fs::rename(&tmp, &self.path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

/// [`TuneCache::default_path`] for these values of `XDG_CACHE_HOME` and `HOME`.
fn cache_path(xdg_cache_home: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    Some(crate::gpu::cache::dir_from(xdg_cache_home, home)?.join("autotune.json"))
}

/// Whether a new choice prints every candidate's time ([`set_verbose`]).
static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether tuning a new shape prints every candidate's time on stderr (the CLI's
/// `--verbose`), beside the one line with the choice. Off by default; the times are in the
/// cache file either way.
pub fn set_verbose(on: bool) {
    VERBOSE.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Says on stderr what was chosen for `shape`: one line, and with [`set_verbose`] every
/// candidate's time, fastest first.
fn report(shape: MatmulShape, choice: &Choice, path: Option<&std::path::Path>) {
    let saved = path.map_or(String::new(), |p| format!("; saved in {}", p.display()));
    eprintln!(
        "autotune: {shape}: {} ({:.3} ms), the fastest of {} candidates{saved}",
        choice.kernel,
        choice.ms,
        choice.candidates_ms.len()
    );
    if VERBOSE.load(std::sync::atomic::Ordering::Relaxed) {
        let mut all: Vec<_> = choice.candidates_ms.iter().collect();
        all.sort_by(|x, y| x.1.total_cmp(y.1));
        for (name, ms) in all {
            eprintln!("autotune:   {ms:>9.3} ms  {name}");
        }
    }
}

/// Choices made in this process, by [`key`].
static MEMO: Mutex<BTreeMap<String, Tuned>> = Mutex::new(BTreeMap::new());
/// The 16-bit tuner's choices made in this process, by [`half_key`].
static HALF_MEMO: Mutex<BTreeMap<String, HalfChoice>> = Mutex::new(BTreeMap::new());

/// What the tuner of products on 16-bit operands ([`choose_half`]) chooses among: a run of
/// rung 17, or, on BF16 operands and a shape a rung-16 kernel covers ([`gemv::applies`]), a
/// rung-16 run on the operands as they are (the `-bf16-inputs` configurations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HalfChoice {
    Ws(HalfRun),
    Gemv(Gemv),
}

impl HalfChoice {
    /// The run's name.
    pub fn name(self) -> String {
        match self {
            Self::Ws(r) => r.name(),
            Self::Gemv(g) => g.name(),
        }
    }

    /// Parses [`name`](Self::name), for operands of `T`.
    pub fn from_name<T: HalfFloat + GemvElement>(name: &str) -> Option<Self> {
        HalfRun::from_name(name)
            .filter(|r| r.config.input == T::INPUT)
            .map(Self::Ws)
            .or_else(|| {
                let g = Gemv::from_name(name)?;
                (T::OPERANDS == Some(g.config().operands)).then_some(Self::Gemv(g))
            })
    }

    /// The same choice as the autotuner's candidates name it (for reports).
    pub fn tuned(self) -> Tuned {
        match self {
            Self::Ws(r) => Tuned::Half(r),
            Self::Gemv(g) => Tuned::Gemv(g),
        }
    }

    /// The choices worth timing on `T` operands for `shape` on a device of `sms`
    /// multiprocessors: rung 17's ([`half::candidates`]), then the rung-16 runs of `T`'s
    /// operands ([`Gemv::candidates_of`], BF16 products).
    pub fn candidates<T: HalfFloat + GemvElement>(shape: MatmulShape, sms: u32) -> Vec<Self> {
        let ws = half::candidates(T::INPUT, shape, sms)
            .into_iter()
            .map(Self::Ws);
        let gemv = T::OPERANDS
            .map(|operands| Gemv::candidates_of(shape, Precision::Bf16, operands))
            .unwrap_or_default();
        ws.chain(gemv.into_iter().map(Self::Gemv)).collect()
    }

    /// The entry points it launches (a rung-16 run's as [`Tuned::entries`] names them).
    pub fn entries(self) -> Vec<&'static str> {
        use kernels_gpu::sgemm::split_k::REDUCE;
        match self {
            Self::Ws(r) => vec![r.config.spec.entry, REDUCE.entry],
            Self::Gemv(g) => Tuned::Gemv(g).entries(),
        }
    }
}

/// The fingerprint of both embedded modules' code (rungs 14 and 17 come from the sm_90a one).
fn fingerprint(gpu: &Gpu) -> u64 {
    module_fingerprint(gpu.ptx()) ^ module_fingerprint(crate::plan::ptx::HOPPER_PTX).rotate_left(1)
}

/// [`key`] of `shape` and `precision` on `gpu`.
fn gpu_key(gpu: &Gpu, shape: MatmulShape, precision: Precision) -> Result<String> {
    let info = gpu.info()?;
    let cc = info.compute_capability;
    Ok(key(&info.name, cc, shape, precision, fingerprint(gpu)))
}

/// The configuration of `precision` to run for `shape` on `gpu`: memoised, else cached in
/// the file, else timed now on `a`, `b` and `out` (which it overwrites) and recorded in both.
/// Once a choice is memoised, every call of this process gets it, even where several threads
/// tuned the same shape at once (the first one recorded wins).
///
/// Fails only if the GPU does (a candidate the device refuses to launch is skipped), or
/// with [`Error::PrecisionNotImplemented`] for a precision without candidates.
pub fn choose(
    gpu: &Gpu, a: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>,
    shape: MatmulShape, precision: Precision,
) -> Result<Tuned> {
    let key = gpu_key(gpu, shape, precision)?;
    remembered(&MEMO, key, shape, Choice::kernel, || {
        tune(gpu, a, b, out, shape, precision)
    })
}

/// The cache key of a rung-17 product with `element` inputs: [`key`]'s form with the
/// element type's name and `-inputs` in place of a precision.
pub fn half_key(
    device: &str, compute_capability: (i32, i32), shape: MatmulShape, element: &str,
    module_fingerprint: u64,
) -> String {
    let (major, minor) = compute_capability;
    format!(
        "{device} sm_{major}{minor} {}x{}x{} {element}-inputs ptx:{module_fingerprint:016x}",
        shape.m, shape.k, shape.n
    )
}

/// The run for `shape` on `gpu` with `T` operands ([`HalfChoice`]): memoised, cached or
/// timed now on `a`, `b` and `out` as [`choose`] does, among [`HalfChoice::candidates`]
/// (rung 17's narrowed by shape class; compiled at once before any is timed).
pub fn choose_half<T: HalfFloat + GemvElement + DeviceRepr + ValidAsZeroBits>(
    gpu: &Gpu, a: &CudaSlice<T>, b: &CudaSlice<T>, out: &mut CudaSlice<f32>, shape: MatmulShape,
) -> Result<HalfChoice> {
    let info = gpu.info()?;
    let cc = info.compute_capability;
    let key = half_key(
        &info.name,
        cc,
        shape,
        <T as HalfFloat>::NAME,
        fingerprint(gpu),
    );
    let parse = |c: &Choice| HalfChoice::from_name::<T>(&c.kernel);
    remembered(&HALF_MEMO, key, shape, parse, || {
        let candidates = HalfChoice::candidates::<T>(shape, gpu.multiprocessors());
        let mut entries: Vec<&str> = candidates.iter().flat_map(|c| c.entries()).collect();
        entries.sort_unstable();
        entries.dedup();
        match gpu.load_entries(&entries) {
            Err(e) if !is_refusal(&e) => return Err(e),
            _ => {}
        }
        eprintln!(
            "autotune: {shape}: timing {} candidates on {} operands (rung 17, and rung 16 where \
             it covers the shape), up to {} warm-ups and {} timed runs each, then {} (once per \
             shape, device and build)",
            candidates.len(),
            <T as HalfFloat>::NAME,
            TIMING.warmup,
            TIMING.iters,
            final_round_text()
        );
        let mut progress = Progress::new("autotune: timing candidates", candidates.len());
        let (mut timings, mut refused) = (vec![], None);
        for &choice in &candidates {
            let run = || gpu.gemm_half_choice_device(choice, a, b, out, shape);
            match gpu.time_within(&TIMING, run) {
                Ok(mut ms) => timings.push((choice, median(&mut ms))),
                Err(e) if is_refusal(&e) => refused = Some(e),
                Err(e) => return Err(e),
            }
            progress.advance(1);
        }
        progress.finish();
        final_round(gpu, &mut timings, |c| {
            gpu.gemm_half_choice_device(c, a, b, out, shape)
        })?;
        let Some(&(best, ms)) = timings.iter().min_by(|x, y| x.1.total_cmp(&y.1)) else {
            return Err(refused.unwrap_or(Error::PrecisionNotImplemented {
                precision: Precision::Bf16,
            }));
        };
        let choice = Choice {
            kernel: best.name(),
            ms,
            candidates_ms: timings.iter().map(|(r, ms)| (r.name(), *ms)).collect(),
        };
        Ok((best, choice))
    })
}

/// The choice recorded for `key` in `memo`, else in the cache file (read by `parse`, then
/// memoised); `None` where neither has one.
fn recorded<K: Copy>(
    memo: &Mutex<BTreeMap<String, K>>, key: &str, parse: impl Fn(&Choice) -> Option<K>,
) -> Option<K> {
    if let Some(&kernel) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(key) {
        return Some(kernel);
    }
    let kernel = TuneCache::load(TuneCache::default_path()?)
        .get(key)
        .and_then(parse)?;
    Some(
        *memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key.to_owned())
            .or_insert(kernel),
    )
}

/// The configuration [`choose`] would run for `shape` without timing anything: the one this
/// process chose already, or the cache file holds; `None` where `choose` would tune. The
/// multi-GPU products ask this first, and tune on one GPU only where it says `None`.
pub fn cached(gpu: &Gpu, shape: MatmulShape, precision: Precision) -> Result<Option<Tuned>> {
    Ok(recorded(
        &MEMO,
        &gpu_key(gpu, shape, precision)?,
        Choice::kernel,
    ))
}

/// The choice recorded for `key`: in `memo`, else in the cache file (read by `parse`),
/// else made now by `tune` and recorded in both, said on stderr. The first choice memoised
/// for a key is the process's: threads that tuned the same shape at the same time all run
/// the one recorded first, so no launch of this process changes kernel (and bits) after it.
fn remembered<K: Copy + PartialEq>(
    memo: &Mutex<BTreeMap<String, K>>, key: String, shape: MatmulShape,
    parse: impl Fn(&Choice) -> Option<K>, tune: impl FnOnce() -> Result<(K, Choice)>,
) -> Result<K> {
    let remember = |kernel| {
        *memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key.clone())
            .or_insert(kernel)
    };
    if let Some(kernel) = recorded(memo, &key, &parse) {
        return Ok(kernel);
    }
    let Some(path) = TuneCache::default_path() else {
        let (kernel, choice) = tune()?;
        let chosen = remember(kernel);
        if chosen == kernel {
            report(shape, &choice, None);
        }
        return Ok(chosen);
    };
    let cache = TuneCache::load(path);
    let (kernel, choice) = tune()?;
    let chosen = remember(kernel);
    if chosen != kernel {
        // Another thread recorded its choice first: that one is this process's, and its own
        // report and cache entry stand.
        return Ok(chosen);
    }
    report(shape, &choice, Some(cache.path()));
    // Re-read just before writing, to keep what other processes added meanwhile (unless the
    // file was bad already: that was said once).
    let mut fresh = match cache.warning {
        Some(_) => cache,
        None => match TuneCache::load(cache.path().to_path_buf()) {
            reread if reread.warning.is_none() => reread,
            _ => cache,
        },
    };
    fresh.insert(key, choice);
    if let Err(e) = fresh.save() {
        eprintln!(
            "warning: could not write the autotune cache {}: {e}",
            fresh.path().display()
        );
    }
    Ok(chosen)
}

/// Times every candidate of [`Tuned::candidates`]`(shape, precision)` and (FP32) the serial
/// split-k runs for this device's multiprocessors ([`SplitK::serial_candidates_for`]) on
/// `shape` with `a`, `b` and `out` ([`TIMING`]), then (FP32) the row splits of the plain configurations that
/// leave a thin last wave (`row_splits`), and returns the fastest by median time. A candidate
/// this device cannot run (too many registers or too much shared memory for it, a grid
/// beyond its limits, a split-k workspace beyond its free memory) is skipped.
pub fn tune(
    gpu: &Gpu, a: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>,
    shape: MatmulShape, precision: Precision,
) -> Result<(Tuned, Choice)> {
    let mut refused = None;
    let mut candidates = Tuned::candidates(shape, precision);
    let ws_input = match precision {
        Precision::Bf16 => Some(Input::Bf16),
        Precision::Tf32 => Some(Input::Tf32),
        Precision::Fp32 => None,
    };
    if let Some(input) = ws_input
        && gpu.info()?.compute_capability == (9, 0)
    {
        let runs = half::candidates(input, shape, gpu.multiprocessors());
        candidates.extend(runs.into_iter().map(Tuned::Half));
    }
    if precision == Precision::Fp32 {
        let serial = SplitK::serial_candidates_for(shape, gpu.multiprocessors());
        candidates.extend(serial.map(Tuned::Serial));
        candidates.extend(wave_filling(gpu, shape)?);
    }
    if candidates.is_empty() {
        return Err(Error::PrecisionNotImplemented { precision });
    }
    let limit = TIMING.limit.map_or(String::new(), |l| {
        format!(", each phase within {} ms", l.as_millis())
    });
    let rows = match precision {
        Precision::Fp32 => " (then row splits, where a thin last wave is left)",
        _ => "",
    };
    eprintln!(
        "autotune: {shape}: timing {} {} SGEMM candidates{rows}, up to {} warm-ups and {} \
         timed runs each{limit}, then {} (once per shape, device and build)",
        candidates.len(),
        precision.name(),
        TIMING.warmup,
        TIMING.iters,
        final_round_text()
    );
    prepare(gpu, &candidates)?;
    let run = |c: Tuned, out: &mut CudaSlice<f32>| c.run(gpu, a, b, out, shape);
    let mut timings = time_each(gpu, &candidates, |c| run(c, out), &mut refused)?;
    if precision == Precision::Fp32 {
        let mut more = row_splits(gpu, a, b, shape, &timings)?;
        more.extend(tiled_runs(shape, &timings)?);
        prepare(gpu, &more)?;
        timings.extend(time_each(gpu, &more, |c| run(c, out), &mut refused)?);
    }
    final_round(gpu, &mut timings, |c| run(c, out))?;
    let Some(&(best, ms)) = timings.iter().min_by(|x, y| x.1.total_cmp(&y.1)) else {
        return Err(refused.expect("at least one candidate ran or was refused"));
    };
    let choice = Choice {
        kernel: best.name(),
        ms,
        candidates_ms: timings.iter().map(|(k, ms)| (k.name(), *ms)).collect(),
    };
    Ok((best, choice))
}

/// The stream-k runs of a worker per block of its stream-k entry the device runs at once
/// ([`StreamRun::candidate_for`]; [`Gpu::stream_k_blocks_per_sm`] is asked, and the entry
/// compiled, only where [`StreamRun::may_apply`]), the split-k runs whose slice counts fill
/// whole waves of this device ([`SplitK::wave_candidates_for`]), each with the driver's
/// count of blocks per SM of its configuration, and the serial run of each where
/// [`SplitK::serial_worth_timing`]. A configuration the device declines ([`is_refusal`])
/// has none.
fn wave_filling(gpu: &Gpu, shape: MatmulShape) -> Result<Vec<Tuned>> {
    let sms = gpu.multiprocessors();
    let mut runs = vec![];
    for config in StreamRun::configs() {
        if !StreamRun::may_apply(config, shape, sms) {
            continue;
        }
        let blocks = match gpu.stream_k_blocks_per_sm(StreamRun::new(config, 1)) {
            Ok(blocks) => blocks,
            Err(e) if is_refusal(&e) => continue,
            Err(e) => return Err(e),
        };
        let slots = blocks * sms;
        runs.extend(StreamRun::candidate_for(config, shape, slots).map(Tuned::Stream));
    }
    for config in SplitK::configs() {
        let Some(slots) = slots(gpu, SgemmKernel::Config(config), shape)? else {
            continue;
        };
        for s in SplitK::wave_candidates_for(config, shape, u64::from(slots)) {
            runs.push(Tuned::SplitK(s));
            if s.serial_worth_timing(shape, sms) {
                runs.push(Tuned::Serial(s));
            }
        }
    }
    Ok(runs)
}

/// Blocks of `kernel`'s launch for `shape` that this device runs at once (the driver's
/// blocks per SM times its SMs), or `None` where the device declines the kernel
/// ([`is_refusal`]).
fn slots(gpu: &Gpu, kernel: SgemmKernel, shape: MatmulShape) -> Result<Option<u32>> {
    match gpu.blocks_per_sm(MatmulKernel::Sgemm(kernel), shape) {
        Ok(blocks) => Ok(Some(blocks * gpu.multiprocessors())),
        Err(e) if is_refusal(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Compiles the entry points of `candidates` for `gpu`, all at once ([`Gpu::load_entries`]):
/// a candidate whose module the device declines ([`is_refusal`]) is left to be refused again
/// when it is timed.
fn prepare(gpu: &Gpu, candidates: &[Tuned]) -> Result<()> {
    let entries: Vec<&str> = candidates.iter().flat_map(|c| c.entries()).collect();
    match gpu.load_entries(&entries) {
        Err(e) if !is_refusal(&e) => Err(e),
        _ => Ok(()),
    }
}

/// The median time of each of `candidates` run by `run` ([`TIMING`]), in order; one the
/// device declines ([`is_refusal`]) is left out, its error kept in `refused`. Says how far
/// it is on stderr when it takes more than a second ([`Progress`]).
fn time_each(
    gpu: &Gpu, candidates: &[Tuned], mut run: impl FnMut(Tuned) -> Result<()>,
    refused: &mut Option<Error>,
) -> Result<Vec<(Tuned, f64)>> {
    let mut timings = vec![];
    let mut progress = Progress::new("autotune: timing candidates", candidates.len());
    for &candidate in candidates {
        match gpu.time_within(&TIMING, || run(candidate)) {
            Ok(mut ms) => timings.push((candidate, median(&mut ms))),
            Err(e) if is_refusal(&e) => *refused = Some(e),
            Err(e) => return Err(e),
        }
        progress.advance(1);
    }
    progress.finish();
    Ok(timings)
}

/// The finalists of `timings` ([`finalists`]) timed again, [`FINAL_ROUNDS`] rounds of
/// [`FINAL`] each in turn, their times replaced by the median of those runs; the others'
/// first-round times stay (slower, by the margin, than every finalist was).
fn final_round<C: Copy>(
    gpu: &Gpu, timings: &mut [(C, f64)], mut run: impl FnMut(C) -> Result<()>,
) -> Result<()> {
    let chosen = finalists(timings);
    if chosen.len() < 2 {
        return Ok(());
    }
    let mut runs: Vec<Vec<f64>> = vec![vec![]; chosen.len()];
    let mut progress = Progress::new("autotune: final round", FINAL_ROUNDS * chosen.len());
    for _ in 0..FINAL_ROUNDS {
        for (ms, &i) in runs.iter_mut().zip(&chosen) {
            let candidate = timings[i].0;
            ms.extend(gpu.time_within(&FINAL, || run(candidate))?);
            progress.advance(1);
        }
    }
    progress.finish();
    for (mut ms, i) in runs.into_iter().zip(chosen) {
        timings[i].1 = median(&mut ms);
    }
    Ok(())
}

/// What the tuner's first line says of the final round.
fn final_round_text() -> String {
    format!(
        "the fastest within {:.0}% (at most {FINALISTS}) again in {FINAL_ROUNDS} alternating \
         rounds of up to {} runs",
        (FINALIST_MARGIN - 1.0) * 100.0,
        FINAL.iters
    )
}

/// The indices in `timings` of the final round's candidates: those within
/// [`FINALIST_MARGIN`] of the fastest, at most [`FINALISTS`], fastest first.
fn finalists<C>(timings: &[(C, f64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..timings.len()).collect();
    order.sort_by(|&x, &y| timings[x].1.total_cmp(&timings[y].1));
    let Some(&first) = order.first() else {
        return order;
    };
    let bound = timings[first].1 * FINALIST_MARGIN;
    order.retain(|&i| timings[i].1 <= bound);
    order.truncate(FINALISTS);
    order
}

/// How many of the fastest plain and split-k runs timed [`tune`] times again on operands
/// padded to whole tiles.
pub const TILED_RUNS: usize = 4;

/// The runs on operands padded to whole tiles ([`Tuned::Tiled`]) that [`tune`] times after
/// the others: of the [`TILED_RUNS`] fastest plain configurations and split-k runs in
/// `timings` (a serial run counting as its split), each once, those that `shape` gives a
/// padding ([`TiledRun::tiles`]: edge blocks or unaligned rows, copies small beside the
/// product). Proposed from the timings rather than timed for every candidate, which would
/// double the tuning of most odd shapes.
fn tiled_runs(shape: MatmulShape, timings: &[(Tuned, f64)]) -> Result<Vec<Tuned>> {
    let mut inner: Vec<(TiledRun, f64)> = timings
        .iter()
        .filter_map(|&(c, ms)| match c {
            Tuned::Config(k) if k.precision() == Precision::Fp32 => Some((TiledRun::Config(k), ms)),
            Tuned::SplitK(s) | Tuned::Serial(s) => Some((TiledRun::Split(s), ms)),
            _ => None,
        })
        .collect();
    inner.sort_by(|x, y| x.1.total_cmp(&y.1));
    let mut runs: Vec<Tuned> = vec![];
    for (r, _) in inner.into_iter().take(TILED_RUNS) {
        let run = Tuned::Tiled(r);
        if r.tiles(shape)?.is_some() && !runs.contains(&run) {
            runs.push(run);
        }
    }
    Ok(runs)
}

/// The row splits worth timing for `shape`: for each plain configuration in `timings`
/// whose blocks leave a thin last wave on this device ([`row_split::top_rows`], with the
/// driver's count of blocks per SM), that configuration on the whole waves' rows and the
/// fastest split-k run of the rows left (timed now, on a copy of those rows of `a`). None
/// where the rows left have no split-k run. Every such configuration, not only the fastest
/// on the whole product: those that suffer most from the last wave (the largest tiles) gain
/// most from the split. On an H100, 2049×2047×2051: 128 × 128 tiles took 0.66 ms whole and
/// 0.50 ms split at row 1920, where the fastest whole (128 × 64, 0.57 ms) took 0.50 ms split.
fn row_splits(
    gpu: &Gpu, a: &CudaSlice<f32>, b: &CudaSlice<f32>, shape: MatmulShape, timings: &[(Tuned, f64)],
) -> Result<Vec<Tuned>> {
    let plain = timings.iter().filter_map(|&(c, _)| match c {
        Tuned::Config(k) => Some(k),
        _ => None,
    });
    let mut bottoms: BTreeMap<u32, Option<SplitK>> = BTreeMap::new();
    let mut splits = vec![];
    for top in plain {
        let Some(slots) = slots(gpu, top, shape)? else {
            continue;
        };
        let g = top.config().geometry;
        let Some(rows) = row_split::top_rows(g.bm, g.bn, shape, slots) else {
            continue;
        };
        let bottom = match bottoms.get(&rows) {
            Some(&bottom) => bottom,
            None => {
                let bottom = fastest_split_k(gpu, a, b, shape, rows)?;
                bottoms.insert(rows, bottom);
                bottom
            }
        };
        if let Some(bottom) = bottom {
            splits.push(Tuned::Rows(RowSplit { top, rows, bottom }));
        }
    }
    Ok(splits)
}

/// The fastest split-k run of `shape`'s rows from `rows` on, timed on a copy of them.
fn fastest_split_k(
    gpu: &Gpu, a: &CudaSlice<f32>, b: &CudaSlice<f32>, shape: MatmulShape, rows: u32,
) -> Result<Option<SplitK>> {
    let MatmulShape { m, k, n } = shape;
    let left = MatmulShape::new((m - rows) as usize, k as usize, n as usize)?;
    let (a_len, _, out_len) = left.lens();
    let mut a_left = gpu.zeros(a_len)?;
    gpu.stream()
        .memcpy_dtod(&a.slice(rows as usize * k as usize..), &mut a_left)
        .call("cuMemcpyDtoDAsync")?;
    let mut out_left = gpu.zeros(out_len)?;
    let candidates: Vec<Tuned> = SplitK::candidates_for(left).map(Tuned::SplitK).collect();
    let run = |c: Tuned| c.run(gpu, &a_left, b, &mut out_left, left);
    let timings = time_each(gpu, &candidates, run, &mut None)?;
    Ok(timings
        .iter()
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .and_then(|&(c, _)| match c {
            Tuned::SplitK(s) => Some(s),
            _ => None,
        }))
}

/// Whether `e` is the device declining this candidate, which leaves the context usable and
/// just rules the candidate out: a launch shape it refuses, a split-k workspace larger
/// than its free memory, or `sm_90a` code on a GPU that is not a Hopper.
fn is_refusal(e: &Error) -> bool {
    match e {
        Error::Launch(_) | Error::OutOfDeviceMemory { .. } | Error::NeedsHopper { .. } => true,
        Error::KernelFault { context_usable, .. } => *context_usable,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::packed::PackedRung;
    use crate::problem::shape::valid as shape;
    use crate::testing::TempDir;

    fn by_entry(entry: &str) -> SgemmKernel {
        SgemmKernel::from_entry(entry).expect("a configuration of the table")
    }

    fn choice(kernel: SgemmKernel) -> Choice {
        Choice {
            kernel: kernel.name().to_owned(),
            ms: 2.5,
            candidates_ms: SgemmKernel::TUNED
                .iter()
                .enumerate()
                .map(|(i, k)| (k.name().to_owned(), 2.5 + i as f64))
                .collect(),
        }
    }

    #[test]
    fn key_names_device_capability_and_shape() {
        assert_eq!(
            key(
                "NVIDIA H200",
                (9, 0),
                shape(5120, 256, 4096),
                Precision::Fp32,
                0xabc
            ),
            "NVIDIA H200 sm_90 5120x256x4096 ptx:0000000000000abc"
        );
        assert_ne!(
            key("NVIDIA H200", (9, 0), shape(1, 2, 3), Precision::Fp32, 1),
            key(
                "NVIDIA H100 80GB HBM3",
                (9, 0),
                shape(1, 2, 3),
                Precision::Fp32,
                1
            )
        );
    }

    #[test]
    fn fingerprint_follows_the_module_text() {
        // FNV-1a's published test vectors.
        assert_eq!(module_fingerprint(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(module_fingerprint("a"), 0xaf63_dc4c_8601_ec8c);
        let ptx = crate::plan::ptx::KERNELS_PTX;
        assert_eq!(module_fingerprint(ptx), module_fingerprint(ptx));
        let edited = ptx.replacen("fma.rn.f32", "fma.rn.f32 ", 1);
        assert_ne!(module_fingerprint(&edited), module_fingerprint(ptx));
    }

    #[test]
    fn round_trip_through_the_file() {
        let dir = TempDir::new("autotune", "round-trip");
        // The folder is created on save.
        let path = dir.0.join("nested").join("autotune.json");
        let mut cache = TuneCache::load(&path);
        assert!(cache.warning.is_none() && cache.get("x").is_none());
        let k1 = key("GPU", (9, 0), shape(4096, 4096, 4096), Precision::Fp32, 7);
        let k2 = key("GPU", (9, 0), shape(5120, 256, 5120), Precision::Fp32, 7);
        cache.insert(
            k1.clone(),
            choice(by_entry("sgemm_double_buffered_128x128x16_w64x64")),
        );
        cache.insert(
            k2.clone(),
            choice(by_entry("sgemm_double_buffered_64x128x16_w32x64")),
        );
        cache.save().unwrap();

        let loaded = TuneCache::load(&path);
        assert!(loaded.warning.is_none(), "{:?}", loaded.warning);
        assert_eq!(
            loaded.get(&k1),
            Some(&choice(by_entry("sgemm_double_buffered_128x128x16_w64x64")))
        );
        assert_eq!(
            loaded.kernel(&k1),
            Some(Tuned::Config(by_entry(
                "sgemm_double_buffered_128x128x16_w64x64"
            )))
        );
        assert_eq!(
            loaded.kernel(&k2),
            Some(Tuned::Config(by_entry(
                "sgemm_double_buffered_64x128x16_w32x64"
            )))
        );
        assert_eq!(loaded.kernel("other"), None);
        // No temporary file is left behind.
        let files: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(files.len(), 1, "{files:?}");
    }

    #[test]
    fn corrupted_file_is_ignored_with_a_warning_and_rewritten() {
        let dir = TempDir::new("autotune", "corrupted");
        let path = dir.0.join("autotune.json");
        for bad in [
            "{ not json".as_bytes(),
            b"",
            b"[1, 2, 3]",
            b"{\"version\": 1, \"entries\": {\"k\": {\"kernel\": 5}}}",
            &[0xff, 0xfe, 0x00],
        ] {
            std::fs::write(&path, bad).unwrap();
            let mut cache = TuneCache::load(&path);
            let warning = cache.warning.clone().expect("a warning");
            assert!(warning.contains("autotune.json"), "{warning}");
            assert!(cache.get("k").is_none());
            // Saving replaces the bad file with a good one.
            cache.insert("k".into(), choice(SgemmKernel::DEFAULT));
            cache.save().unwrap();
            let reloaded = TuneCache::load(&path);
            assert!(reloaded.warning.is_none());
            assert_eq!(
                reloaded.kernel("k"),
                Some(Tuned::Config(SgemmKernel::DEFAULT))
            );
        }
    }

    #[test]
    fn other_versions_and_unknown_kernels_are_not_used() {
        let dir = TempDir::new("autotune", "versions");
        let path = dir.0.join("autotune.json");
        let mut file = CacheFile {
            version: CACHE_VERSION + 1,
            entries: BTreeMap::new(),
        };
        file.entries
            .insert("k".into(), choice(SgemmKernel::DEFAULT));
        std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
        let cache = TuneCache::load(&path);
        assert!(cache.warning.as_deref().unwrap().contains("version"));
        assert!(cache.get("k").is_none());

        file.version = CACHE_VERSION;
        file.entries.insert(
            "gone".into(),
            Choice {
                kernel: "sgemm-from-another-build".into(),
                ..choice(SgemmKernel::DEFAULT)
            },
        );
        file.entries.insert(
            "not-tuned".into(),
            Choice {
                kernel: by_entry("sgemm_coalesced_32").name().into(),
                ..choice(SgemmKernel::DEFAULT)
            },
        );
        std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
        let cache = TuneCache::load(&path);
        assert!(cache.warning.is_none());
        assert_eq!(cache.kernel("k"), Some(Tuned::Config(SgemmKernel::DEFAULT)));
        // Only the tuned candidates are ever chosen from the file.
        assert_eq!(cache.kernel("gone"), None);
        assert_eq!(cache.kernel("not-tuned"), None);
    }

    #[test]
    fn unreadable_path_is_a_warning_and_a_failed_save_an_error() {
        let dir = TempDir::new("autotune", "unreadable");
        // A folder where the file should be: reading it fails, and so does writing it.
        let path = dir.0.join("autotune.json");
        std::fs::create_dir_all(&path).unwrap();
        let cache = TuneCache::load(&path);
        assert!(cache.warning.is_some());
        assert!(cache.save().is_err());
    }

    /// The file is `autotune.json` in the cache folder (whose choice between
    /// `XDG_CACHE_HOME` and `HOME` `cache::dir_from` tests).
    #[test]
    fn cache_path_is_in_the_cache_folder() {
        let file = Path::new("/home/u/.cache/pure-rust-cuda-kernels/autotune.json");
        assert_eq!(
            cache_path(None, Some("/home/u".into())).as_deref(),
            Some(file)
        );
        assert_eq!(cache_path(None, None), None);
    }

    #[test]
    fn finalists_are_the_fastest_within_the_margin() {
        let timings = [
            ("c", 1.05),
            ("slow", 2.0),
            ("a", 1.0),
            ("edge", 1.10),
            ("past", 1.1001),
            ("b", 1.02),
        ];
        let names = |ix: Vec<usize>| ix.into_iter().map(|i| timings[i].0).collect::<Vec<_>>();
        assert_eq!(names(finalists(&timings)), ["a", "b", "c", "edge"]);
        // At most FINALISTS, the fastest kept.
        let many: Vec<(usize, f64)> = (0..20).map(|i| (i, 1.0 + i as f64 * 1e-3)).collect();
        let kept = finalists(&many);
        assert_eq!(kept, (0..FINALISTS).collect::<Vec<_>>());
        assert!(finalists::<u8>(&[]).is_empty());
    }

    #[test]
    fn timing_keeps_every_run_up_to_8192_cubed_and_one_of_each_at_16384_cubed() {
        // The best candidates at 8192³ on an H100 take about 23 ms a run.
        let ms = Duration::from_millis;
        assert!(TIMING.another_warmup(1, ms(23)));
        assert!(!TIMING.another_warmup(2, ms(46)));
        assert_eq!(TIMING.timed_runs(23.0), TIMING.iters);
        // At 16384³ a run takes 0.2 s or more.
        assert!(!TIMING.another_warmup(1, ms(200)));
        assert_eq!(TIMING.timed_runs(200.0), 1);
    }

    #[test]
    fn a_row_split_is_the_top_above_its_rows_and_split_k_below() {
        let bottom = SplitK::candidates().next().unwrap();
        let split = Tuned::Rows(RowSplit {
            top: SgemmKernel::DEFAULT,
            rows: 1920,
            bottom,
        });
        assert_eq!(
            split.for_rows(0..1920, 2049),
            Tuned::Config(SgemmKernel::DEFAULT)
        );
        assert_eq!(split.for_rows(1920..2049, 2049), Tuned::SplitK(bottom));
        assert_eq!(split.for_rows(2048..2049, 2049), Tuned::SplitK(bottom));
        assert_eq!(
            split.for_rows(1024..2049, 2049),
            Tuned::Rows(RowSplit {
                top: SgemmKernel::DEFAULT,
                rows: 896,
                bottom
            })
        );
        let plain = Tuned::Config(SgemmKernel::DEFAULT);
        assert_eq!(plain.for_rows(256..512, 1024), plain);
        // Every candidate's blocks are at most 256 rows: a 16384-row product splits into 64
        // or more units.
        for precision in Precision::ALL {
            let shape = MatmulShape::new(4096, 4093, 4096).unwrap();
            for c in Tuned::candidates(shape, precision) {
                let rows = c.block_rows();
                assert!((1..=256).contains(&rows), "{c}: {rows}");
            }
        }
        assert_eq!(
            split.block_rows(),
            crate::plan::shard::lcm(
                SgemmKernel::DEFAULT.config().geometry.bm,
                kernels_gpu::sgemm::CONFIGS[bottom.config].geometry.bm
            )
        );
    }

    #[test]
    fn rung_17_choices_round_trip_through_their_names() {
        // TF32 runs are named as they are (the packing is theirs, as rung 14's), BF16 runs
        // from f32 with the suffix; a 16-bit name without it is not a choice of f32 inputs.
        let shape = MatmulShape::new(256, 4096, 256).unwrap();
        for input in [Input::Tf32, Input::Bf16] {
            for run in half::candidates(input, shape, 132) {
                let tuned = Tuned::Half(run);
                let name = tuned.name();
                assert_eq!(name.ends_with(FROM_F32), input == Input::Bf16, "{name}");
                assert_eq!(Tuned::from_name(&name), Some(tuned));
                assert_eq!(tuned.block_rows(), run.config.geometry.bm);
            }
        }
        assert_eq!(Tuned::from_name("gemm-bf16-ws-128x256"), None);
        assert_eq!(Tuned::from_name("gemm-tf32-ws-128x256-from-f32"), None);
    }

    #[test]
    fn tiled_runs_are_proposed_from_the_fastest_plain_and_split_k_runs() {
        let split: Vec<SplitK> = SplitK::candidates().take(3).collect();
        let plain = SgemmKernel::TUNED[0];
        let timings: Vec<(Tuned, f64)> = vec![
            (Tuned::SplitK(split[0]), 0.05),
            (Tuned::Serial(split[1]), 0.02),
            (Tuned::SplitK(split[1]), 0.03),
            (Tuned::Config(plain), 0.04),
            (Tuned::Repacked(plain), 0.01),
            (Tuned::SplitK(split[2]), 0.06),
        ];
        // The four fastest plain and split-k runs (a serial run counts as its split), each
        // once; the repacked run is not one of them.
        assert_eq!(
            tiled_runs(shape(127, 4096, 4096), &timings).unwrap(),
            vec![
                Tuned::Tiled(TiledRun::Split(split[1])),
                Tuned::Tiled(TiledRun::Config(plain)),
                Tuned::Tiled(TiledRun::Split(split[0])),
            ]
        );
        // Whole tiles of every configuration and aligned rows: none.
        assert!(
            tiled_runs(shape(256, 4096, 4096), &timings)
                .unwrap()
                .is_empty()
        );
        for run in tiled_runs(shape(127, 4096, 4096), &timings).unwrap() {
            assert_eq!(Tuned::from_name(&run.name()), Some(run));
        }
    }

    #[test]
    fn split_k_choices_round_trip_through_their_names() {
        for candidate in
            Tuned::candidates(MatmulShape::new(64, 4096, 4096).unwrap(), Precision::Fp32)
        {
            assert_eq!(Tuned::from_name(&candidate.name()), Some(candidate));
        }
        assert!(
            Tuned::candidates(MatmulShape::new(64, 4096, 4096).unwrap(), Precision::Fp32)
                .iter()
                .any(|c| matches!(c, Tuned::SplitK(_)))
        );
        // TF32 has no split-k runs: its configurations, then rungs 14 and 15's, which
        // round-trip through their names too, and (64 rows are few) rung 16's of TF32.
        let tf32 = Tuned::candidates(MatmulShape::new(64, 4096, 4096).unwrap(), Precision::Tf32);
        assert!(tf32.iter().all(|c| match c {
            Tuned::Config(k) => k.precision() == Precision::Tf32,
            Tuned::Packed(i) => *i < PACKED_CONFIGS.len(),
            Tuned::Gemv(g) => g.config().precision == Precision::Tf32,
            _ => false,
        }));
        let packed: Vec<_> = tf32
            .iter()
            .filter_map(|c| match c {
                Tuned::Packed(i) => Some(PackedRung::of(PACKED_CONFIGS[*i])),
                _ => None,
            })
            .collect();
        for rung in [PackedRung::Wgmma, PackedRung::MmaSync] {
            let count = packed.iter().filter(|&&r| r == rung).count();
            // Rung 15's both tables: `cp.async` and, on a Hopper, the TMA one.
            let all = PACKED_CONFIGS
                .iter()
                .filter(|c| PackedRung::of(c) == rung)
                .count();
            assert_eq!(count, all);
            assert!(count >= rung.configs().len());
        }
        for candidate in tf32 {
            assert_eq!(Tuned::from_name(&candidate.name()), Some(candidate));
        }
        // k = 16 is too short to split (and memory-bound: rung 16's candidates join).
        assert!(
            Tuned::candidates(MatmulShape::new(64, 16, 64).unwrap(), Precision::Fp32)
                .iter()
                .all(|c| matches!(c, Tuned::Config(_) | Tuned::Gemv(_)))
        );
        // k or n not a multiple of 4: every FP32 configuration repacked too, names included.
        let odd = Tuned::candidates(MatmulShape::new(64, 4093, 4096).unwrap(), Precision::Fp32);
        let repacked = odd.iter().filter(|c| matches!(c, Tuned::Repacked(_)));
        assert_eq!(repacked.count(), SgemmKernel::TUNED.len());
        for candidate in odd {
            assert_eq!(Tuned::from_name(&candidate.name()), Some(candidate));
        }
        // Aligned rows, a depth that is not whole 16-deep tiles: only the configurations
        // with a strided entry, whose repacked run pads the depth.
        let short = Tuned::candidates(MatmulShape::new(6043, 36, 6792).unwrap(), Precision::Fp32);
        let repacked: Vec<_> = short
            .iter()
            .filter_map(|c| match c {
                Tuned::Repacked(k) => Some(*k),
                _ => None,
            })
            .collect();
        assert!(!repacked.is_empty());
        assert!(repacked.iter().all(|k| k.config().strided.is_some()));
        assert!(
            repacked
                .iter()
                .all(|k| Tuned::Repacked(*k).entries()[0].starts_with("sgemm_strided_"))
        );
        let split = Tuned::Rows(RowSplit {
            top: SgemmKernel::DEFAULT,
            rows: 1920,
            bottom: SplitK::candidates().next().unwrap(),
        });
        assert_eq!(Tuned::from_name(&split.name()), Some(split));
        for s in SplitK::serial_candidates_for(shape(195, 1423, 2802), 132) {
            let serial = Tuned::Serial(s);
            assert_eq!(Tuned::from_name(&serial.name()), Some(serial));
            assert_eq!(serial.entries(), vec![s.serial_spec().unwrap().entry]);
        }
        assert!(
            !Tuned::candidates(MatmulShape::new(64, 4093, 4096).unwrap(), Precision::Tf32)
                .iter()
                .any(|c| matches!(c, Tuned::Repacked(_)))
        );
    }
}
