//! Stream-k on the host ([`kernels_gpu::sgemm::stream_k`]): a configuration with a
//! stream-k entry point runs the product's k-tiles cut evenly among `workers` blocks, one
//! launch, the pieces of each output tile adding up in order through the output.
//! Deterministic run to run for a given shape and worker count; the f32 error bound is the
//! plain product's with `k + p` roundings instead of `k` ([`StreamRun::roundings`]).
//!
//! The stream-k entries run the exact multistage loop alone (fewer registers than beside the
//! checked loop, none spilled), so every dimension must be whole tiles: a product that is
//! not runs on copies ([`Padded`]): `a` into `m' × k'` and `b` into `k' × n'`, zero past the
//! operands, the output computed into `m' × n'` and copied back, `m'`, `k'` and `n'` the
//! dimensions rounded up to the tile. The zeros add exact zero products, so the copies do not
//! change the bits.
//!
//! The autotuner ([`crate::gpu::autotune`]) times [`StreamRun::candidate_for`] of each such
//! configuration, a worker per block the device runs of its stream-k entry at once, where
//! the plain launch leaves a last wave part full: a shape class (an output of a few waves of
//! tiles, or of too few for one, under a `k` deep enough to share), not a list.

use crate::plan::split_k::SplitK;
use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
use kernels_gpu::catalogue::{Extent, KernelSpec};
use kernels_gpu::nvptx_device::launch::Launch;
use kernels_gpu::nvptx_device::thread::Dim3;
use kernels_gpu::sgemm::CONFIGS;
use kernels_gpu::sgemm::stream_k::StreamK;

/// A stream-k run: configuration `config` (one with a stream-k entry point) over
/// `workers` blocks, on the whole product or ([`part`](Self::part)) on some of its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamRun {
    /// Index into `kernels_gpu::sgemm::CONFIGS`.
    pub config: usize,
    /// Workers of the whole product's schedule.
    pub workers: u32,
    /// Where the run computes rows of a larger product (a multi-GPU product's part): that
    /// product's schedule on those rows alone, so that every output has its bits.
    pub part: Option<PartOf>,
}

/// Rows `row0 ..` of a product of `m_all` rows ([`StreamRun::part`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PartOf {
    /// The part's first row: a multiple of the configuration's block rows.
    pub row0: u32,
    /// Rows of the whole product.
    pub m_all: u32,
}

/// The whole-tile product a stream-k entry runs ([`StreamRun::padded`]).
pub use crate::plan::repack::Padded;

/// How one stream-k product is launched ([`StreamRun::launch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamLaunch {
    /// A block per worker, 1-D (on a part of the rows too: each runs its pieces there).
    pub launch: Launch,
    /// The schedule of the whole product.
    pub schedule: StreamK,
    /// The part's first row (0 for a whole product).
    pub row0: u32,
    /// Rows of the whole product, rounded up to whole tiles.
    pub m_all: u32,
    /// Words of the flag buffer: the ticket counter and one flag per output tile of the
    /// launch's rows, all 0 before the launch (and after it: the kernel puts them back).
    pub flags: usize,
    /// The whole-tile product the kernel runs, and the copies it takes.
    pub padded: Padded,
}

impl StreamRun {
    /// The most waves of a plain launch's output tiles for which a stream-k run is timed:
    /// past that the last wave's idle part is a small share of the time.
    pub const MAX_WAVES: u64 = 4;

    /// The fewest k-tiles a worker runs, on average, for a stream-k run to be timed: each
    /// piece fills and drains the multistage ring once.
    pub const MIN_ITERS_PER_WORKER: u64 = 8;

    /// The most workers a name may give (four waves of 8 blocks on 2,048 SMs).
    pub const MAX_WORKERS: u32 = 1 << 16;

    /// The indices into `CONFIGS` of the configurations with a stream-k entry point.
    pub fn configs() -> impl Iterator<Item = usize> {
        CONFIGS
            .iter()
            .enumerate()
            .filter(|(_, c)| c.stream_k.is_some())
            .map(|(config, _)| config)
    }

    /// The whole product's run of `config` over `workers` blocks.
    pub fn new(config: usize, workers: u32) -> Self {
        Self {
            config,
            workers,
            part: None,
        }
    }

    /// The stream-k entry point's description: [`Error::EntryNotFound`] for a
    /// configuration without one.
    pub fn spec(self) -> Result<&'static KernelSpec> {
        CONFIGS[self.config]
            .stream_k
            .as_ref()
            .ok_or_else(|| Error::EntryNotFound { entry: self.name() })
    }

    /// The whole product's schedule for `m_all` rows of `shape`'s `k` and `n`.
    fn schedule(self, m_all: u32, shape: MatmulShape) -> StreamK {
        let g = CONFIGS[self.config].geometry;
        StreamK::new(
            m_all,
            shape.n,
            shape.k,
            g.bm,
            g.bn,
            g.bk,
            self.workers.max(1),
        )
    }

    /// The run of `config` worth timing for `shape` on a device that runs `slots` blocks of
    /// its stream-k entry at once, a worker each, if any: where the plain launch's output
    /// tiles do not fill whole waves, number at most [`MAX_WAVES`](Self::MAX_WAVES) waves,
    /// the workers average [`MIN_ITERS_PER_WORKER`](Self::MIN_ITERS_PER_WORKER) k-tiles or
    /// more, and a tile is cut into at most [`SplitK::SERIAL_MAX_SPLITS`] pieces (a chain of
    /// hand-offs).
    pub fn candidate_for(config: usize, shape: MatmulShape, slots: u32) -> Option<Self> {
        CONFIGS[config].stream_k.as_ref()?;
        let run = Self::new(config, slots);
        let s = run.schedule(shape.m, shape);
        let (tiles, slots) = (u64::from(s.tiles), u64::from(slots.max(1)));
        let worth = !tiles.is_multiple_of(slots)
            && tiles <= Self::MAX_WAVES * slots
            && Self::enough_work(&s, slots)
            && fits(&s);
        worth.then_some(run)
    }

    /// [`candidate_for`](Self::candidate_for)'s conditions on the work each of `slots`
    /// workers gets: [`MIN_ITERS_PER_WORKER`](Self::MIN_ITERS_PER_WORKER) k-tiles on average
    /// and at most [`SplitK::SERIAL_MAX_SPLITS`] pieces a tile. Both fail for every larger
    /// `slots` where they fail for one ([`may_apply`](Self::may_apply)).
    fn enough_work(s: &StreamK, slots: u64) -> bool {
        s.total() >= Self::MIN_ITERS_PER_WORKER * slots
            && slots <= u64::from(SplitK::SERIAL_MAX_SPLITS) * u64::from(s.tiles)
    }

    /// Whether `config` can have a run worth timing for `shape` ([`candidate_for`]) on a
    /// device of `sms` multiprocessors, whatever the stream-k entry's blocks per SM: the
    /// conditions that hold at one block an SM (the fewest workers) if at any count. The
    /// autotuner asks before the driver's occupancy query, which compiles the entry.
    ///
    /// [`candidate_for`]: Self::candidate_for
    pub fn may_apply(config: usize, shape: MatmulShape, sms: u32) -> bool {
        if CONFIGS[config].stream_k.is_none() {
            return false;
        }
        let s = Self::new(config, sms).schedule(shape.m, shape);
        Self::enough_work(&s, u64::from(sms.max(1)))
    }

    /// `<configuration name>-stream<workers>`, e.g.
    /// `sgemm-multistage-128x128x16-w64x32-stream264`.
    pub fn name(self) -> String {
        format!("{}{STREAM}{}", CONFIGS[self.config].name, self.workers)
    }

    /// Parses [`name`](Self::name) (a whole product's run).
    pub fn from_name(name: &str) -> Option<Self> {
        let (config, workers) = name.rsplit_once(STREAM)?;
        let workers: u32 = workers.parse().ok()?;
        let config = CONFIGS
            .iter()
            .position(|c| c.name == config && c.stream_k.is_some())?;
        (1..=Self::MAX_WORKERS)
            .contains(&workers)
            .then_some(Self::new(config, workers))
    }

    /// The run on rows `rows` of a product of `m` rows: the whole product's schedule on
    /// those rows ([`part`](Self::part)).
    pub fn for_rows(self, rows: std::ops::Range<u32>, m: u32) -> Self {
        let (row0, m_all) = match self.part {
            Some(p) => (p.row0 + rows.start, p.m_all),
            None => (rows.start, m),
        };
        Self {
            part: Some(PartOf { row0, m_all }),
            ..self
        }
    }

    /// Roundings per output in the worst case on `shape` (the whole product's): `k` in
    /// the pieces' FMA chains, one per added piece.
    pub fn roundings(self, shape: MatmulShape) -> usize {
        self.schedule(shape.m, shape).roundings(shape.k)
    }

    /// The whole-tile shape the entry runs `shape` (the launch's rows) on, and the copies
    /// that takes ([`Padded`]): [`Error::IndexOverflow`] where it no longer fits the
    /// kernels' indices.
    pub fn padded(self, shape: MatmulShape) -> Result<Padded> {
        let g = CONFIGS[self.config].geometry;
        let up = |x: u32, tile: u32| (x as usize).next_multiple_of(tile.max(1) as usize);
        let p = MatmulShape::new(up(shape.m, g.bm), up(shape.k, g.bk), up(shape.n, g.bn))?;
        Ok(Padded {
            shape: p,
            copy_a: p.m != shape.m || p.k != shape.k,
            copy_b: p.k != shape.k || p.n != shape.n,
            copy_out: p.m != shape.m || p.n != shape.n,
        })
    }

    /// The launch for `shape` (the launch's rows; not [trivial](MatmulShape::is_trivial)):
    /// [`Error::StreamPart`] where its part does not start at a multiple of the block rows
    /// or runs past the whole product, [`Error::IndexOverflow`] where the schedule's
    /// arithmetic would not fit 64 bits or the padded product the kernels' indices.
    pub fn launch(self, shape: MatmulShape) -> Result<StreamLaunch> {
        let spec = self.spec()?;
        let bm = CONFIGS[self.config].geometry.bm.max(1);
        let (row0, m_all) = self.part.map_or((0, shape.m), |p| (p.row0, p.m_all));
        if !row0.is_multiple_of(bm) || u64::from(row0) + u64::from(shape.m) > u64::from(m_all) {
            return Err(Error::StreamPart {
                run: self.name(),
                row0,
                rows: shape.m,
                m_all,
                block_rows: bm,
            });
        }
        let padded = self.padded(shape)?;
        let m_all = m_all.next_multiple_of(bm);
        let schedule = self.schedule(m_all, padded.shape);
        if !fits(&schedule) {
            return Err(Error::IndexOverflow {
                operand: "stream-k schedule (k-tiles × workers)",
                rows: schedule.total() as usize,
                cols: schedule.workers as usize,
                elements: u128::from(schedule.total()) * u128::from(schedule.workers),
            });
        }
        let tiles = schedule.rows(row0, padded.shape.m);
        let mut launch = spec.launch(
            Extent::Matrix {
                rows: padded.shape.m,
                cols: padded.shape.n,
            },
            0,
        );
        launch.grid = Dim3 {
            x: schedule.workers,
            y: 1,
            z: 1,
        };
        Ok(StreamLaunch {
            launch,
            schedule,
            row0,
            m_all,
            flags: StreamK::flag_words(tiles.len()),
            padded,
        })
    }
}

/// Whether the schedule's `k-tile · workers` products fit 64 bits (the kernel's
/// arithmetic).
fn fits(s: &StreamK) -> bool {
    u128::from(s.total()) * u128::from(s.workers) < 1 << 63
}

/// The infix of a stream-k run's name ([`StreamRun::name`]).
const STREAM: &str = "-stream";

/// What a stream-k run computes, on the CPU, bit for bit: each output as its tile's pieces'
/// FMA chains (`k` order from `0.0` within a piece) added in `k` order (a data-parallel
/// tile's one piece: the plain product's bits). The GPU and
/// simulator runs of `run` must give exactly this.
pub fn cpu_stream_k(run: StreamRun, a: &[f32], b: &[f32], shape: MatmulShape) -> Vec<f32> {
    let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
    let mut out = vec![0.0f32; m * n];
    if k == 0 || m == 0 || n == 0 {
        return out;
    }
    let g = CONFIGS[run.config].geometry;
    let s = run.schedule(shape.m, shape);
    // Each tile's piece boundaries in k: the k-tile boundaries of the workers inside it.
    let iters = u64::from(s.iters);
    for r in 0..m {
        for c in 0..n {
            let tile = (r as u32 / g.bm) * s.cols + c as u32 / g.bn;
            let first = u64::from(tile) * iters;
            let mut bounds = vec![0usize];
            // A data-parallel tile is one piece; a stream tile's cut where workers start.
            let cuts = match tile < s.dp_tiles {
                true => 0..0,
                false => s.worker_of(first) + 1..s.stream_workers,
            };
            for w in cuts {
                let x = s.start(w);
                if x >= first + iters {
                    break;
                }
                bounds.push(((x - first) * u64::from(g.bk)) as usize);
            }
            bounds.push(k);
            let part = |z: usize| {
                (bounds[z]..bounds[z + 1].min(k))
                    .fold(0.0f32, |p, i| a[r * k + i].mul_add(b[i * n + c], p))
            };
            let mut sum = part(0);
            for z in 1..bounds.len() - 1 {
                sum += part(z);
            }
            out[r * n + c] = sum;
        }
    }
    out
}

impl std::fmt::Display for StreamRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(m: usize, k: usize, n: usize) -> MatmulShape {
        MatmulShape::new(m, k, n).unwrap()
    }

    fn config(name: &str) -> usize {
        CONFIGS.iter().position(|c| c.name == name).unwrap()
    }

    #[test]
    fn names_round_trip() {
        let all: Vec<usize> = StreamRun::configs().collect();
        assert!(all.len() >= 2, "configurations with a stream-k entry");
        for c in all {
            for w in [1, 264, StreamRun::MAX_WORKERS] {
                let r = StreamRun::new(c, w);
                assert_eq!(StreamRun::from_name(&r.name()), Some(r));
                assert_eq!(SplitK::from_serial_name(&r.name()), None);
            }
            let past = format!("{}-stream{}", CONFIGS[c].name, StreamRun::MAX_WORKERS + 1);
            assert_eq!(StreamRun::from_name(&past), None);
            assert_eq!(
                StreamRun::from_name(&format!("{}-stream0", CONFIGS[c].name)),
                None
            );
        }
        assert_eq!(StreamRun::from_name("sgemm-coalesced-32-stream2"), None);
    }

    #[test]
    fn timed_where_the_last_wave_is_part_full() {
        let big = config("sgemm-multistage-128x128x16-w64x32");
        // 26 × 14 = 364 tiles on 264 slots: 1.4 waves.
        let odd = shape(3224, 11515, 1723);
        assert_eq!(
            StreamRun::candidate_for(big, odd, 264),
            Some(StreamRun::new(big, 264))
        );
        // 512 tiles on 256 slots fill two waves; 32² tiles are past four waves of 100.
        assert_eq!(
            StreamRun::candidate_for(big, shape(2048, 4096, 4096), 256),
            None
        );
        assert_eq!(
            StreamRun::candidate_for(big, shape(4096, 4096, 4096), 100),
            None
        );
        // Too short a k to share among 264 workers (364 · 2 k-tiles).
        assert_eq!(
            StreamRun::candidate_for(big, shape(3224, 32, 1723), 264),
            None
        );
        // A single tile cut into more than 64 pieces: no.
        assert_eq!(
            StreamRun::candidate_for(big, shape(100, 100_000, 100), 264),
            None
        );
        // No stream-k entry: no.
        let plain = config("sgemm-multistage-swizzled-128x128x16-w64x32");
        assert_eq!(StreamRun::candidate_for(plain, odd, 264), None);
        assert!(matches!(
            StreamRun::new(plain, 264).launch(odd),
            Err(Error::EntryNotFound { .. })
        ));
    }

    #[test]
    fn may_apply_holds_wherever_a_run_is_a_candidate() {
        let shapes = [
            shape(3224, 11515, 1723),
            shape(2049, 2047, 2051),
            shape(3224, 32, 1723),
            shape(100, 100_000, 100),
            shape(64, 64, 64),
            shape(1, 1, 1),
            shape(10576, 11401, 74),
        ];
        let mut some = 0;
        for (c, config) in CONFIGS.iter().enumerate() {
            for s in shapes {
                for sms in [1, 16, 132] {
                    let may = StreamRun::may_apply(c, s, sms);
                    for blocks in 1..=8 {
                        if StreamRun::candidate_for(c, s, blocks * sms).is_some() {
                            assert!(may, "{} {s} on {sms} SMs", config.name);
                            some += 1;
                        }
                    }
                }
            }
            // Too little work for one worker an SM of 132.
            assert!(!StreamRun::may_apply(c, shape(64, 64, 64), 132));
        }
        assert!(some > 0, "no candidate among the shapes");
    }

    #[test]
    fn launch_pads_to_whole_tiles_and_runs_a_block_per_worker() {
        let big = config("sgemm-multistage-128x128x16-w64x32");
        let whole = shape(3224, 11515, 1723);
        let run = StreamRun::new(big, 264);
        let l = run.launch(whole).unwrap();
        assert_eq!(
            (l.launch.grid.x, l.launch.grid.y, l.launch.grid.z),
            (264, 1, 1)
        );
        assert_eq!(l.flags, 1 + 364);
        let p = l.padded;
        assert_eq!((p.shape.m, p.shape.k, p.shape.n), (3328, 11520, 1792));
        assert!(p.copy_a && p.copy_b && p.copy_out);
        assert_eq!(p.workspace(), 3328 * 11520 + 11520 * 1792 + 3328 * 1792);
        // Whole tiles already: nothing copied.
        let even = run.launch(shape(3328, 11520, 1792)).unwrap().padded;
        assert_eq!(
            (even.copy_a, even.copy_b, even.copy_out),
            (false, false, false)
        );
        assert_eq!(even.workspace(), 0);
        // Only k short of a tile: both operands copied, the output not.
        let deep = run.launch(shape(3328, 11515, 1792)).unwrap().padded;
        assert_eq!(
            (deep.copy_a, deep.copy_b, deep.copy_out),
            (true, true, false)
        );
        // Rows 1024 .. 2048 of it: block rows 8 .. 16, 112 tiles, every worker launched.
        let part = run.for_rows(1024..2048, 3224);
        let l = part.launch(shape(1024, 11515, 1723)).unwrap();
        assert_eq!(
            (l.flags, l.launch.grid.x, l.row0, l.m_all),
            (1 + 112, 264, 1024, 3328)
        );
        // A part off the block rows, or past the product: refused.
        let off = run.for_rows(1000..2048, 3224);
        assert!(matches!(
            off.launch(shape(1048, 11515, 1723)),
            Err(Error::StreamPart { .. })
        ));
        let past = run.for_rows(3072..3300, 3224);
        assert!(matches!(
            past.launch(shape(228, 11515, 1723)),
            Err(Error::StreamPart { .. })
        ));
    }
}
