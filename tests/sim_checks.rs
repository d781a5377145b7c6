//! Every check of the CPU simulator, each proven by a small kernel written here that breaks
//! one rule, and the absence of false positives on kernels that break none.
//!
//! The kernels use the device API exactly as the lecture's kernels do. Where the simulator
//! names a source location, the test compares it with the line of this file that carries a
//! `// mark: NAME` comment (see [`line_of`]), so the expectations survive edits above them.

#[path = "common/fma_product.rs"]
mod fma_product;

use fma_product::fma_in_k_order;
use nvptx_device::intrinsics::fma;
use nvptx_device::launch::{Launch, Limit, LimitError, Limits};
use nvptx_device::shared::{SharedSlice, dynamic_shared};
use nvptx_device::shared_array;
use nvptx_device::sim::{
    self, RaceKind, SharedArrayId, SharedPtr, SimError, SourceLocation, ThreadCoord,
};
use nvptx_device::thread::{self, Dim3, block_idx_x, sync_threads, thread_idx_x};
use nvptx_device::warp;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

const SOURCE: &str = include_str!("sim_checks.rs");

/// The line of this file that ends with the comment `// mark: NAME`.
fn line_of(name: &str) -> u32 {
    let marker = format!("// mark: {name}");
    let lines: Vec<u32> = SOURCE
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_end().ends_with(&marker))
        .map(|(i, _)| i as u32 + 1)
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "marker `{marker}` must be on exactly one line"
    );
    lines[0]
}

/// Asserts that `location` is the line of this file marked `name`.
#[track_caller]
fn assert_at(location: SourceLocation, name: &str) {
    assert!(
        location.file.ends_with("sim_checks.rs"),
        "{location} is not in this file"
    );
    assert_eq!(
        location.line,
        line_of(name),
        "{location} is not at mark `{name}`"
    );
}

/// The line marked `name`, as [`columns_cleared`] leaves a location there: an expected
/// location, to compare a whole error with.
fn mark(name: &str) -> SourceLocation {
    SourceLocation {
        file: file!(),
        line: line_of(name),
        column: 0,
    }
}

/// The static shared array declared on the line marked `name`, as [`columns_cleared`]
/// leaves it.
fn array_at(name: &str) -> SharedArrayId {
    SharedArrayId::Static(mark(name))
}

/// `error` with the column of each of its source locations set to 0, so that an expectation
/// written with [`mark`]s can be compared with the whole of it (which column a location
/// names follows the formatting of the line, not the check).
fn columns_cleared(error: &SimError) -> SimError {
    fn clear(location: &mut SourceLocation) {
        location.column = 0;
    }
    let mut error = error.clone();
    match &mut error {
        SimError::SharedOutOfBounds {
            array, location, ..
        }
        | SimError::UninitializedSharedRead {
            array, location, ..
        }
        | SimError::DataRace {
            array, location, ..
        } => {
            if let SharedArrayId::Static(declared) = array {
                clear(declared);
            }
            clear(location);
        }
        SimError::BarrierNotReached { location, .. } => clear(location),
        SimError::DivergentBarrier {
            first_location,
            second_location,
            ..
        } => {
            clear(first_location);
            clear(second_location);
        }
        SimError::Deadlock { waiting, .. } => {
            for w in waiting {
                clear(&mut w.location);
            }
        }
        _ => {}
    }
    error
}

/// Asserts that `error`'s message contains each of `parts`.
#[track_caller]
fn assert_mentions(error: &SimError, parts: &[&str]) {
    let text = error.to_string();
    for part in parts {
        assert!(text.contains(part), "`{part}` missing from: {text}");
    }
}

/// Thread `thread` of block `block`.
fn coord(block: Dim3, thread: Dim3) -> ThreadCoord {
    ThreadCoord { block, thread }
}

/// The error of a launch past one of the simulator's limits.
fn exceeds(what: Limit, requested: u64, limit: u64) -> SimError {
    SimError::Limit(LimitError::Exceeds {
        what,
        requested,
        limit,
    })
}

fn launch(
    grid: Dim3, block: Dim3, dynamic_shared_bytes: u32, kernel: impl Fn() + Sync,
) -> Result<(), SimError> {
    let cfg = Launch {
        grid,
        block,
        dynamic_shared_bytes,
        cluster: 1,
    };
    sim::launch(&cfg, &Limits::default(), kernel)
}

/// Orders two simulated threads through a host-side flag that the simulator does not see.
/// For its race checker the accesses on either side stay unordered (only barriers order
/// shared memory), but which one happens first is now fixed, so the race kind and the
/// roles of the two threads are deterministic. The waiter lets the other threads of its
/// block run while it waits ([`sim::yield_now`]): they take turns on one host thread.
struct Signal(AtomicBool);

impl Signal {
    fn new() -> Self {
        Self(AtomicBool::new(false))
    }

    fn raise(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Waits for [`raise`](Self::raise); panics (a `KernelPanicked`, not a hang) if it
    /// never comes.
    fn wait(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.0.load(Ordering::Acquire) {
            assert!(
                Instant::now() < deadline,
                "the other thread never raised the signal"
            );
            sim::yield_now();
        }
    }
}

// ---------------------------------------------------------------------------------------
// Data races: the tiled matmul phase loop with barriers removed.
// ---------------------------------------------------------------------------------------

/// Tile width of the mutant launches.
const TW: u32 = 8;

/// Which of the phase loop's two barriers the mutant keeps.
#[derive(Clone, Copy)]
struct Barriers {
    /// After loading the tiles, before reading them.
    first: bool,
    /// After reading the tiles, before the next phase overwrites them.
    second: bool,
}

impl Barriers {
    /// Both, as in the lecture's kernel.
    const BOTH: Self = Self {
        first: true,
        second: true,
    };
    /// The second removed.
    const FIRST_ONLY: Self = Self {
        first: true,
        second: false,
    };
    /// Both removed.
    const NONE: Self = Self {
        first: false,
        second: false,
    };
}

/// A DELIBERATE MUTANT: a copy of kernels-gpu's `matmul::tiled::tiled_phases` whose two
/// `sync_threads()` can be switched off, to show that the simulator catches the races that
/// removing them causes. With both kept it is the lecture's loop (and runs clean). Each
/// shared access is on its own line so that the test can tell which one a race names.
///
/// # Safety
/// As for `tiled_phases`: the matmul contract, a `tw × tw` block, `tw * tw` words per tile.
#[allow(clippy::too_many_arguments)]
unsafe fn mutant_phases(
    ms: SharedSlice<f32>, ns: SharedSlice<f32>, tw: u32, m: *const f32, n: *const f32,
    out: *mut f32, h: u32, w: u32, k: u32, barriers: Barriers,
) {
    let tc = thread::thread_idx_x();
    let tr = thread::thread_idx_y();
    let r = thread::block_idx_y() * tw + tr;
    let c = thread::block_idx_x() * tw + tc;

    let mut p = 0.0f32;
    for ph in 0..k.div_ceil(tw) {
        let idx = ph * tw;
        // The same guards as the lecture's ternaries keep both global reads in bounds.
        let a = if r < h && idx + tc < k {
            // SAFETY: r < h and idx + tc < k.
            unsafe { *m.add((tc + idx + r * k) as usize) }
        } else {
            0.0
        };
        let b = if c < w && idx + tr < k {
            // SAFETY: c < w and idx + tr < k.
            unsafe { *n.add(((tr + idx) * w + c) as usize) }
        } else {
            0.0
        };
        // SAFETY: tr, tc < tw and both tiles hold tw*tw (likewise for the three below, with
        // i < tw).
        unsafe { ms.set_unchecked(tr * tw + tc, a) }; // mark: ms-set
        // SAFETY: see above.
        unsafe { ns.set_unchecked(tr * tw + tc, b) }; // mark: ns-set
        if barriers.first {
            sync_threads();
        }
        for i in 0..tw {
            // SAFETY: see above.
            let x = unsafe { ms.get_unchecked(tr * tw + i) }; // mark: ms-get
            // SAFETY: see above.
            let y = unsafe { ns.get_unchecked(tw * i + tc) }; // mark: ns-get
            p = fma(x, y, p);
        }
        if barriers.second {
            sync_threads();
        }
    }

    if r < h && c < w {
        // SAFETY: r < h and c < w; this thread is the only writer of out[r, c].
        unsafe { *out.add((r * w + c) as usize) = p };
    }
}

/// 16×24 · 24×16 in 8×8 tiles: a 2×2 grid and 3 phases per block.
const MUTANT_SHAPE: (u32, u32, u32) = (16, 24, 16);

/// Runs the mutant on [`MUTANT_SHAPE`]; with `zero_tiles` every thread first zeroes its
/// word of both tiles, behind a barrier, so that no read of the loop is uninitialised.
fn run_mutant(barriers: Barriers, zero_tiles: bool) -> Result<(), SimError> {
    let (h, k, w) = MUTANT_SHAPE;
    let a: Vec<f32> = (0..h * k).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..k * w).map(|i| (i % 5) as f32 * 0.5).collect();
    let mut out = vec![f32::NAN; (h * w) as usize];
    let (pa, pb, po) = (
        SharedPtr(a.as_ptr() as *mut f32),
        SharedPtr(b.as_ptr() as *mut f32),
        SharedPtr(out.as_mut_ptr()),
    );
    let result = launch(
        Dim3::xy(w.div_ceil(TW), h.div_ceil(TW)),
        Dim3::xy(TW, TW),
        0,
        move || {
            let ms = shared_array!(f32; TW * TW); // mark: mutant-ms
            let ns = shared_array!(f32; TW * TW); // mark: mutant-ns
            if zero_tiles {
                let own = thread::thread_idx_y() * TW + thread::thread_idx_x();
                ms.set(own, 0.0);
                ns.set(own, 0.0);
                sync_threads();
            }
            // SAFETY: the buffers are h×k, k×w and h×w; the block is TW×TW and both tiles
            // hold TW*TW words.
            unsafe { mutant_phases(ms, ns, TW, pa.get(), pb.get(), po.get(), h, w, k, barriers) }
        },
    );
    // The exact product in f32 with the kernels' accumulation order (small integers and
    // halves, so every partial sum is exact anyway).
    let expected = fma_in_k_order(&a, &b, h as usize, k as usize, w as usize);
    if result.is_ok() {
        assert_eq!(
            out, expected,
            "the mutant with its barriers is the lecture's loop"
        );
    }
    result
}

/// Checks a race in the mutant's phase loop: which threads, arrays and lines can be involved
/// follows from the loop. Which access comes first is up to the OS scheduler, so the kind
/// is either read after write or write after read (never write after write: each word has
/// a single writer). `barriers` is how many barriers precede the race's interval.
fn assert_phase_race(error: &SimError, barriers: u32) {
    let SimError::DataRace {
        block,
        array: SharedArrayId::Static(declared),
        index,
        kind,
        first,
        second,
        location: at,
        barriers_passed,
    } = *error
    else {
        panic!("expected a data race in a static tile, got {error:?}: {error}");
    };
    // Blocks run one after another and every block races, so the first one reports.
    assert_eq!(block, Dim3::xyz(0, 0, 0), "{error}");
    assert_ne!(first, second, "{error}");
    // Word tr*TW + tc of either tile is written only by thread (tc, tr).
    let owner = Dim3::xyz(index % TW, index / TW, 0);
    let (writer, reader) = match kind {
        RaceKind::ReadAfterWrite => (first, second),
        RaceKind::WriteAfterRead => (second, first),
        RaceKind::WriteAfterWrite => panic!("each word has a single writer: {error}"),
    };
    assert_eq!(writer, owner, "{error}");
    let tile = if declared.line == line_of("mutant-ms") {
        // ms[tr*TW + i] is read by the threads of row tr.
        assert_eq!(reader.y, owner.y, "{error}");
        "ms"
    } else {
        // ns[TW*i + tc] is read by the threads of column tc.
        assert_at(declared, "mutant-ns");
        assert_eq!(reader.x, owner.x, "{error}");
        "ns"
    };
    // The location is the second access: the write for WAR, the read for RAW.
    let access = if kind == RaceKind::WriteAfterRead {
        "set"
    } else {
        "get"
    };
    assert_at(at, &format!("{tile}-{access}"));
    assert_eq!(barriers_passed, barriers, "{error}");
}

#[test]
fn mutant_with_both_barriers_runs_clean() {
    run_mutant(Barriers::BOTH, false).unwrap();
    run_mutant(Barriers::BOTH, true).unwrap();
}

/// Without the second barrier, phase 1 overwrites a tile word that other threads still
/// read in phase 0. Usually the late reader comes after the write (read after write); when
/// the reader gets there first, the write is the second access (write after read).
#[test]
fn second_barrier_removed_is_a_race_between_phases() {
    let error = run_mutant(Barriers::FIRST_ONLY, false).unwrap_err();
    // Between phase 0's first barrier and phase 1's.
    assert_phase_race(&error, 1);
}

/// Without either barrier, threads read tile words that their owners write in the same
/// interval: usually a thread reads a neighbour's word before the neighbour overwrites it
/// (write after read), sometimes after (read after write). The tiles are zeroed first,
/// behind one barrier, so that every word holds a value; without that, see the next test.
#[test]
fn both_barriers_removed_is_a_race_within_a_phase() {
    let error = run_mutant(Barriers::NONE, true).unwrap_err();
    // After the zeroing barrier, the only one.
    assert_phase_race(&error, 1);
}

/// The literal copy without barriers and without zeroing: every thread reads tile words that
/// their owners write in the same interval. A thread that gets to a word before its owner
/// waits there (the simulator parks reads of unwritten words until the block can decide),
/// so the owner's write completes a read-after-write race, the same report as when the
/// owner comes first, and never an uninitialised read: the same kind of error on every
/// run, whatever the host's scheduling.
#[test]
fn both_barriers_removed_without_zeroing_is_always_a_read_after_write_race() {
    for run in 0..50 {
        let error = run_mutant(Barriers::NONE, false).unwrap_err();
        assert!(
            matches!(
                error,
                SimError::DataRace {
                    kind: RaceKind::ReadAfterWrite,
                    ..
                }
            ),
            "run {run}: expected a read-after-write race, got {error:?}: {error}"
        );
        assert_phase_race(&error, 0);
    }
}

/// One missing barrier between thread 1's write and thread 2's read of one word, with the
/// host forcing either order: read after the write, or read first (the writer then waits
/// before writing). Both runs, 25 each, report the identical race: the simulator does not
/// call it an uninitialised read when the read happens to run first.
#[test]
fn missing_barrier_is_one_report_whichever_access_runs_first() {
    let run = |read_first: bool| {
        let (written, reading) = (Signal::new(), Signal::new());
        launch(Dim3::x(1), Dim3::x(4), 0, || {
            let s = shared_array!(u32; 4); // mark: order-array
            match thread_idx_x() {
                1 => {
                    if read_first {
                        reading.wait();
                        // Give the reader time to reach its read (the outcome must not
                        // depend on whether it has).
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    s.set(3, 7); // mark: order-write
                    written.raise();
                }
                2 => {
                    if read_first {
                        reading.raise();
                    } else {
                        written.wait();
                    }
                    let _ = s.get(3); // mark: order-read
                }
                _ => {}
            }
        })
        .unwrap_err()
    };
    for i in 0..50 {
        let read_first = i % 2 == 1;
        let error = run(read_first);
        assert_eq!(
            columns_cleared(&error),
            SimError::DataRace {
                block: Dim3::xyz(0, 0, 0),
                array: array_at("order-array"),
                index: 3,
                kind: RaceKind::ReadAfterWrite,
                first: Dim3::xyz(1, 0, 0),
                second: Dim3::xyz(2, 0, 0),
                location: mark("order-read"),
                barriers_passed: 0,
            },
            "read_first = {read_first}: {error}"
        );
    }
}

/// A parked read of a word that nothing writes in its interval is an uninitialised read
/// once every other thread is blocked: here they wait at a barrier the reader never reaches
/// (the word's writer is behind it), or return without writing it. Neither a "barrier not
/// reached" nor a hang.
#[test]
fn parked_read_becomes_uninitialised_once_no_thread_can_write() {
    for barrier in [true, false] {
        let error = launch(Dim3::x(1), Dim3::x(64), 0, || {
            let s = shared_array!(u32; 64); // mark: parked-array
            let t = thread_idx_x();
            if t == 5 {
                let _ = s.get(40); // mark: parked-read
            }
            if barrier {
                sync_threads();
                if t == 40 {
                    s.set(40, 1);
                }
            }
        })
        .unwrap_err();
        assert_eq!(
            columns_cleared(&error),
            SimError::UninitializedSharedRead {
                at: coord(Dim3::xyz(0, 0, 0), Dim3::xyz(5, 0, 0)),
                array: array_at("parked-array"),
                index: 40,
                location: mark("parked-read"),
            },
            "barrier = {barrier}: {error}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Data races with a fixed order: each kind, with exact coordinates.
// ---------------------------------------------------------------------------------------

/// Thread (0,0,0) writes a word of block (1,0,0), then thread (1,1,1) reads it. Block 0
/// does nothing, so the error must name block 1.
fn read_after_write() -> SimError {
    let written = Signal::new();
    launch(Dim3::x(2), Dim3::xyz(2, 2, 2), 0, || {
        let s = shared_array!(u32; 4); // mark: raw-array
        if block_idx_x() != 1 {
            return;
        }
        match thread::thread_idx() {
            Dim3 { x: 0, y: 0, z: 0 } => {
                s.set(2, 7);
                written.raise();
            }
            Dim3 { x: 1, y: 1, z: 1 } => {
                written.wait();
                let _ = s.get(2); // mark: raw-read
            }
            _ => {}
        }
    })
    .unwrap_err()
}

#[test]
fn read_after_write_is_a_race() {
    assert_eq!(
        columns_cleared(&read_after_write()),
        SimError::DataRace {
            block: Dim3::xyz(1, 0, 0),
            array: array_at("raw-array"),
            index: 2,
            kind: RaceKind::ReadAfterWrite,
            first: Dim3::xyz(0, 0, 0),
            second: Dim3::xyz(1, 1, 1),
            location: mark("raw-read"),
            barriers_passed: 0,
        }
    );
}

#[test]
fn write_after_read_is_a_race() {
    let read = Signal::new();
    let error = launch(Dim3::x(1), Dim3::x(32), 32 * 4, || {
        let s = dynamic_shared::<f32>();
        let t = thread_idx_x();
        s.set(t, t as f32);
        sync_threads();
        if t == 4 {
            let _ = s.get(9);
            read.raise();
        } else if t == 9 {
            read.wait();
            s.set(9, 1.0); // mark: war-write
        }
    })
    .unwrap_err();
    assert_eq!(
        columns_cleared(&error),
        SimError::DataRace {
            block: Dim3::xyz(0, 0, 0),
            array: SharedArrayId::Dynamic,
            index: 9,
            kind: RaceKind::WriteAfterRead,
            first: Dim3::xyz(4, 0, 0),
            second: Dim3::xyz(9, 0, 0),
            location: mark("war-write"),
            barriers_passed: 1,
        }
    );
}

#[test]
fn write_after_write_is_a_race() {
    let written = Signal::new();
    let error = launch(Dim3::x(1), Dim3::xy(4, 4), 0, || {
        let s = shared_array!(i32; 16); // mark: waw-array
        match (thread::thread_idx_x(), thread::thread_idx_y()) {
            (3, 0) => {
                s.set(5, -1);
                written.raise();
            }
            (1, 2) => {
                written.wait();
                s.set(5, 1); // mark: waw-write
            }
            _ => {}
        }
    })
    .unwrap_err();
    assert_eq!(
        columns_cleared(&error),
        SimError::DataRace {
            block: Dim3::xyz(0, 0, 0),
            array: array_at("waw-array"),
            index: 5,
            kind: RaceKind::WriteAfterWrite,
            first: Dim3::xyz(3, 0, 0),
            second: Dim3::xyz(1, 2, 0),
            location: mark("waw-write"),
            barriers_passed: 0,
        }
    );
}

#[test]
fn data_race_display_names_block_and_both_threads() {
    assert_mentions(
        &read_after_write(),
        &[
            "data race",
            "block (1, 0, 0)",
            "thread (1, 1, 1)",
            "thread (0, 0, 0)",
            "read after another thread's write",
            "shared word 2",
            "sim_checks.rs",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// Barriers.
// ---------------------------------------------------------------------------------------

/// Half the block waits at a barrier inside a branch, the other half at the one after it.
/// No barrier can complete, so whichever half arrives second is reported; never a hang.
#[test]
fn barrier_in_divergent_branch() {
    let error = launch(Dim3::x(2), Dim3::x(32), 0, || {
        if thread_idx_x() < 16 {
            sync_threads(); // mark: branch-barrier
        }
        sync_threads(); // mark: after-branch-barrier
    })
    .unwrap_err();
    let SimError::DivergentBarrier {
        block,
        first,
        first_location,
        second,
        second_location,
    } = error
    else {
        panic!("expected a divergent barrier, got {error:?}: {error}");
    };
    assert_eq!(block, Dim3::xyz(0, 0, 0));
    let (inner, outer) = if first_location.line == line_of("branch-barrier") {
        assert_at(second_location, "after-branch-barrier");
        (first, second)
    } else {
        assert_at(first_location, "after-branch-barrier");
        assert_at(second_location, "branch-barrier");
        (second, first)
    };
    assert!(inner.x < 16 && outer.x >= 16, "{error}");
    assert_mentions(&error, &["divergent barrier"]);
}

#[test]
fn early_return_before_barrier() {
    let error = launch(Dim3::x(3), Dim3::x(32), 0, || {
        if block_idx_x() == 2 && thread_idx_x() == 5 {
            return;
        }
        sync_threads(); // mark: skipped-barrier
    })
    .unwrap_err();
    // Any other thread of the block may be the one named as waiting.
    let SimError::BarrierNotReached { waiting, .. } = error else {
        panic!("expected a barrier not reached, got {error:?}: {error}");
    };
    assert_ne!(waiting, Dim3::xyz(5, 0, 0), "{error}");
    assert_eq!(
        columns_cleared(&error),
        SimError::BarrierNotReached {
            block: Dim3::xyz(2, 0, 0),
            waiting,
            location: mark("skipped-barrier"),
            exited: Dim3::xyz(5, 0, 0),
        }
    );
}

/// A barrier in a loop whose trip count differs between threads: the threads with fewer
/// iterations return while the others wait at the loop's barrier.
#[test]
fn barrier_in_loop_with_divergent_trip_count() {
    let error = launch(Dim3::x(1), Dim3::xy(8, 8), 0, || {
        for _ in 0..1 + thread::thread_idx_y() % 2 {
            sync_threads(); // mark: loop-barrier
        }
    })
    .unwrap_err();
    let SimError::BarrierNotReached {
        waiting,
        exited,
        location,
        ..
    } = error
    else {
        panic!("expected a barrier not reached, got {error:?}: {error}");
    };
    assert_eq!((waiting.y % 2, exited.y % 2), (1, 0), "{error}");
    assert_at(location, "loop-barrier");
}

/// In block 1, half of warp 0 waits at a full-warp shuffle for lanes that wait at the
/// barrier after it, as every other thread does: no thread can go on. Reported at once as a
/// deadlock naming every waiting thread and what it waits for, instead of hanging.
#[test]
fn shuffle_and_barrier_waiting_for_each_other_is_a_deadlock() {
    let error = launch(Dim3::x(2), Dim3::x(64), 0, || {
        if block_idx_x() == 1 && thread_idx_x() < 16 {
            // SAFETY: deliberately broken: lanes 16..32 of the mask wait at the barrier.
            let _ = unsafe { warp::shuffle_xor(warp::FULL_MASK, 1u32, 1) }; // mark: deadlock-shuffle
        }
        sync_threads(); // mark: deadlock-barrier
    })
    .unwrap_err();
    let SimError::Deadlock { block, waiting } = &error else {
        panic!("expected a deadlock, got {error:?}: {error}");
    };
    assert_eq!(*block, Dim3::xyz(1, 0, 0));
    let threads: Vec<u32> = waiting.iter().map(|w| w.thread.x).collect();
    assert_eq!(threads, (0..64).collect::<Vec<_>>(), "{error}");
    for w in waiting {
        if w.thread.x < 16 {
            assert_at(w.location, "deadlock-shuffle");
            assert_eq!(
                w.what, "shfl.sync with mask 0xffffffff, for lanes 0xffff0000",
                "{error}"
            );
        } else {
            assert_at(w.location, "deadlock-barrier");
            assert_eq!(w.what, "sync_threads()", "{error}");
        }
    }
    assert_mentions(
        &error,
        &[
            "deadlock in block (1, 0, 0)",
            "16 threads (0, 0, 0) to (15, 0, 0) wait for shfl.sync",
            "48 threads (16, 0, 0) to (63, 0, 0) wait for sync_threads()",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// Shared-memory bounds and initialisation.
// ---------------------------------------------------------------------------------------

#[test]
fn out_of_bounds_get() {
    let error = launch(Dim3::x(1), Dim3::x(32), 0, || {
        let s = shared_array!(f32; 32); // mark: oob-array
        s.set(thread_idx_x(), 1.0);
        sync_threads();
        if thread_idx_x() == 3 {
            let _ = s.get(32); // mark: oob-get
        }
    })
    .unwrap_err();
    assert_mentions(&error, &["index 32 out of bounds for length 32"]);
    assert_eq!(
        columns_cleared(&error),
        SimError::SharedOutOfBounds {
            at: coord(Dim3::xyz(0, 0, 0), Dim3::xyz(3, 0, 0)),
            array: array_at("oob-array"),
            index: 32,
            len: 32,
            location: mark("oob-get"),
        }
    );
}

#[test]
fn out_of_bounds_get_unchecked() {
    let error = launch(Dim3::x(2), Dim3::x(16), 40, || {
        let s = dynamic_shared::<u32>();
        if block_idx_x() == 1 && thread_idx_x() == 15 {
            // SAFETY: deliberately breaks the contract (i < len): on the host the simulator
            // still checks the bound and reports it instead of reading past the array.
            let _ = unsafe { s.get_unchecked(100) }; // mark: oob-get-unchecked
        }
    })
    .unwrap_err();
    assert_eq!(
        columns_cleared(&error),
        SimError::SharedOutOfBounds {
            at: coord(Dim3::xyz(1, 0, 0), Dim3::xyz(15, 0, 0)),
            array: SharedArrayId::Dynamic,
            index: 100,
            len: 10,
            location: mark("oob-get-unchecked"),
        }
    );
}

/// Out-of-bounds writes, and a split of the dynamic buffer too small for the second half.
#[test]
fn out_of_bounds_set_and_split() {
    let error = launch(Dim3::x(1), Dim3::x(4), 0, || {
        let s = shared_array!(u32; 4); // mark: oob-set-array
        s.set(thread_idx_x() + 1, 0); // mark: oob-set
    })
    .unwrap_err();
    assert_eq!(
        columns_cleared(&error),
        SimError::SharedOutOfBounds {
            at: coord(Dim3::xyz(0, 0, 0), Dim3::xyz(3, 0, 0)),
            array: array_at("oob-set-array"),
            index: 4,
            len: 4,
            location: mark("oob-set"),
        }
    );

    // 2 × 16 words asked for, 24 given: the second tile has 8.
    let error = launch(Dim3::x(1), Dim3::x(16), 24 * 4, || {
        let (_, ns) = dynamic_shared::<f32>().split_at(16);
        ns.set(thread_idx_x(), 0.0); // mark: oob-split-tail
    })
    .unwrap_err();
    let SimError::SharedOutOfBounds {
        at,
        array: SharedArrayId::Dynamic,
        index,
        len: 8,
        location,
    } = error
    else {
        panic!("expected out of bounds in the dynamic buffer, got {error:?}");
    };
    assert!(index >= 8 && at.thread.x == index, "{error}");
    assert_at(location, "oob-split-tail");

    let error = launch(Dim3::x(1), Dim3::x(1), 8, || {
        let _ = dynamic_shared::<f32>().split_at(3); // mark: oob-split
    })
    .unwrap_err();
    assert_eq!(
        columns_cleared(&error),
        SimError::SharedOutOfBounds {
            at: coord(Dim3::xyz(0, 0, 0), Dim3::xyz(0, 0, 0)),
            array: SharedArrayId::Dynamic,
            index: 3,
            len: 2,
            location: mark("oob-split"),
        }
    );
}

#[test]
fn read_of_unwritten_shared_word() {
    let error = launch(Dim3::x(1), Dim3::x(32), 0, || {
        let s = shared_array!(u32; 32); // mark: uninit-array
        let t = thread_idx_x();
        if t != 31 {
            s.set(t, t);
        }
        sync_threads();
        if t == 0 {
            let _ = s.get(31); // mark: uninit-read
        }
    })
    .unwrap_err();
    assert_eq!(
        columns_cleared(&error),
        SimError::UninitializedSharedRead {
            at: coord(Dim3::xyz(0, 0, 0), Dim3::xyz(0, 0, 0)),
            array: array_at("uninit-array"),
            index: 31,
            location: mark("uninit-read"),
        }
    );
    assert_mentions(&error, &["uninitialised"]);
}

// ---------------------------------------------------------------------------------------
// Launch shapes and shared-memory sizes.
// ---------------------------------------------------------------------------------------

/// Launches a kernel that counts its threads; a rejected launch must run none.
fn launch_counting(cfg: Launch) -> (Result<(), SimError>, u32) {
    let ran = AtomicU32::new(0);
    let result = sim::launch(&cfg, &Limits::default(), || {
        ran.fetch_add(1, Ordering::Relaxed);
    });
    (result, ran.into_inner())
}

fn cfg(grid: Dim3, block: Dim3, dynamic_shared_bytes: u32) -> Launch {
    Launch {
        grid,
        block,
        dynamic_shared_bytes,
        cluster: 1,
    }
}

#[test]
fn too_many_threads() {
    let block = Dim3::xy(33, 32);
    let (result, ran) = launch_counting(cfg(Dim3::x(1), block, 0));
    assert_eq!(result, Err(exceeds(Limit::ThreadsPerBlock, 1056, 1024)));
    assert_eq!(ran, 0);
    // 32×32 is the limit exactly.
    let (result, ran) = launch_counting(cfg(Dim3::x(1), Dim3::xy(32, 32), 0));
    assert_eq!((result, ran), (Ok(()), 1024));
}

#[test]
fn block_dimension_too_large() {
    let block = Dim3::xyz(1, 1, 65);
    let (result, ran) = launch_counting(cfg(Dim3::x(1), block, 0));
    assert_eq!(result, Err(exceeds(Limit::BlockDimZ, 65, 64)));
    assert_eq!(ran, 0);
    let (result, ran) = launch_counting(cfg(Dim3::x(1), Dim3::xyz(1, 1, 64), 0));
    assert_eq!((result, ran), (Ok(()), 64));
}

#[test]
fn empty_launch() {
    for (grid, block) in [
        (Dim3::xy(4, 0), Dim3::x(32)),
        (Dim3::xyz(1, 1, 0), Dim3::x(32)),
        (Dim3::x(4), Dim3::xy(32, 0)),
    ] {
        let (result, ran) = launch_counting(cfg(grid, block, 0));
        assert_eq!(
            result,
            Err(SimError::Limit(LimitError::Empty { grid, block }))
        );
        assert_eq!(ran, 0);
    }
}

#[test]
fn static_shared_memory_over_limit() {
    // One array of 13,000 f32: 52,000 bytes.
    let one_array = || shared_array!(f32; 13000).set(thread_idx_x(), 0.0);
    // Two arrays that fit alone: 2 × 28,000 bytes.
    let two_arrays = || {
        shared_array!(f32; 7000).set(thread_idx_x(), 0.0);
        shared_array!(f32; 7000).set(thread_idx_x(), 0.0);
    };
    // Static and dynamic together: 12,000 + 92,000 bytes, past the opt-in's 99 KiB.
    let with_dynamic = || shared_array!(u32; 3000).set(thread_idx_x(), 0);
    let opt_in = u64::from(Limits::SHARED_BYTES_OPT_IN);
    let cases: [(u32, &(dyn Fn() + Sync), SimError); 3] = [
        (
            0,
            &one_array,
            exceeds(Limit::StaticSharedBytesPerBlock, 52_000, 48 * 1024),
        ),
        (
            0,
            &two_arrays,
            exceeds(Limit::StaticSharedBytesPerBlock, 56_000, 48 * 1024),
        ),
        (
            92_000,
            &with_dynamic,
            exceeds(Limit::SharedBytesPerBlock, 104_000, opt_in),
        ),
    ];
    for (dynamic_shared_bytes, kernel, expected) in cases {
        let result = launch(Dim3::x(1), Dim3::x(32), dynamic_shared_bytes, kernel);
        assert_eq!(result, Err(expected));
    }

    // Exactly 48 KiB of static arrays fits.
    launch(Dim3::x(1), Dim3::x(32), 0, || {
        shared_array!(f32; 12 * 1024).set(thread_idx_x(), 0.0);
    })
    .unwrap();
}

#[test]
fn dynamic_shared_memory_over_limit() {
    // Dynamic shared memory may pass 48 KiB (the hosts opt every function in), up to the
    // 99 KiB every GPU of compute capability 8.0 and later allows.
    let most = Limits::SHARED_BYTES_OPT_IN;
    let (result, ran) = launch_counting(cfg(Dim3::x(1), Dim3::x(32), most + 4));
    assert_eq!(
        result,
        Err(exceeds(
            Limit::SharedBytesPerBlock,
            u64::from(most) + 4,
            most.into()
        ))
    );
    assert_eq!(ran, 0);
    let (result, _) = launch_counting(cfg(Dim3::x(1), Dim3::x(32), most));
    assert_eq!(result, Ok(()));
}

// ---------------------------------------------------------------------------------------
// Panics in kernel code.
// ---------------------------------------------------------------------------------------

/// A panic in one thread while the rest of its block waits at a barrier: the panic is
/// reported (not the barrier the panicking thread never reached), and nothing hangs.
#[test]
fn kernel_panic_names_the_thread() {
    let error = launch(Dim3::xy(2, 2), Dim3::xy(4, 2), 0, || {
        if thread::block_idx() == Dim3::xyz(1, 1, 0) && thread::thread_idx() == Dim3::xyz(2, 1, 0) {
            panic!("boom in thread {}", thread_idx_x());
        }
        sync_threads();
    })
    .unwrap_err();
    assert_eq!(
        error,
        SimError::KernelPanicked {
            at: coord(Dim3::xyz(1, 1, 0), Dim3::xyz(2, 1, 0)),
            message: "boom in thread 2".into()
        }
    );
}

#[test]
fn arithmetic_overflow_is_a_kernel_panic() {
    let error = launch(Dim3::x(1), Dim3::x(8), 0, || {
        let t = std::hint::black_box(thread_idx_x());
        std::hint::black_box(t - 1);
    })
    .unwrap_err();
    let SimError::KernelPanicked { at, message } = error else {
        panic!("expected a kernel panic, got {error:?}");
    };
    assert_eq!(at.thread, Dim3::xyz(0, 0, 0));
    assert!(message.contains("overflow"), "{message}");
}

// ---------------------------------------------------------------------------------------
// No false positives.
// ---------------------------------------------------------------------------------------

/// A tree reduction with a barrier between levels, then a broadcast of the total to every
/// thread (many readers of one word) and an overwrite of it after another barrier: correct
/// code with heavy sharing, which must not be reported. The 8×4×8 block also checks that
/// the simulator's thread numbering is x fastest, as on the GPU.
#[test]
fn tree_reduction_runs_clean() {
    const THREADS: u32 = 256;
    let blocks = 3u32;
    let input: Vec<u32> = (0..blocks * THREADS).map(|i| (i * 7919) % 1000).collect();
    let mut sums = vec![0u32; blocks as usize];
    let mut broadcast = vec![0u32; (blocks * THREADS) as usize];
    let (pi, ps, pbc) = (
        SharedPtr(input.as_ptr() as *mut u32),
        SharedPtr(sums.as_mut_ptr()),
        SharedPtr(broadcast.as_mut_ptr()),
    );
    launch(Dim3::x(blocks), Dim3::xyz(8, 4, 8), 0, move || {
        let s = shared_array!(u32; THREADS);
        let d = thread::block_dim();
        let tid = thread::thread_idx();
        let t = tid.x + d.x * (tid.y + d.y * tid.z);
        let global = block_idx_x() * THREADS + t;
        // SAFETY: global < blocks * THREADS, the input's length.
        s.set(t, unsafe { *pi.get().add(global as usize) });
        sync_threads();
        let mut stride = THREADS / 2;
        while stride > 0 {
            if t < stride {
                s.set(t, s.get(t) + s.get(t + stride));
            }
            sync_threads();
            stride /= 2;
        }
        let total = s.get(0);
        // SAFETY: one element per thread of the grid.
        unsafe { *pbc.get().add(global as usize) = total };
        sync_threads();
        if t == 0 {
            s.set(0, 0);
            // SAFETY: one element per block, written by its thread 0.
            unsafe { *ps.get().add(block_idx_x() as usize) = total };
        }
    })
    .unwrap();
    for (blk, &sum) in sums.iter().enumerate() {
        let range = blk * THREADS as usize..(blk + 1) * THREADS as usize;
        let expected: u32 = input[range.clone()].iter().sum();
        assert_eq!(sum, expected, "block {blk}");
        assert!(
            broadcast[range].iter().all(|&v| v == expected),
            "block {blk}"
        );
    }
}

/// The race checker names a thread of the block in 11 bits. Custom limits above that used
/// to be accepted, and then a 2048-thread block reported a race with thread 0 in a
/// race-free kernel (thread 2047's number spilled into a reader slot) and missed real races
/// of thread 2047 (its number read back as "none"). Such blocks are now refused; the
/// largest one allowed names its last thread correctly.
#[test]
fn blocks_beyond_the_race_checkers_thread_numbers_are_refused() {
    let limits = Limits {
        max_threads_per_block: 4096,
        max_block_dim: Dim3::xyz(4096, 1024, 64),
        ..Limits::default()
    };
    let launch_x = |threads: u32, kernel: &(dyn Fn() + Sync)| {
        sim::launch(&cfg(Dim3::x(1), Dim3::x(threads), 0), &limits, kernel)
    };
    let race_free = || {
        let s = shared_array!(u32; 2048);
        let t = thread_idx_x();
        s.set(t, 1);
        s.set(t, 2);
        let _ = s.get(t);
        sync_threads();
        let _ = s.get((t + 1) % thread::block_dim_x());
    };
    assert_eq!(
        launch_x(2048, &race_free),
        Err(exceeds(Limit::ThreadsPerBlock, 2048, 2047))
    );
    launch_x(2047, &race_free).unwrap();

    let written = Signal::new();
    let error = launch_x(2047, &|| {
        let s = shared_array!(u32; 1);
        match thread_idx_x() {
            2046 => {
                s.set(0, 1);
                written.raise();
            }
            0 => {
                written.wait();
                let _ = s.get(0);
            }
            _ => {}
        }
    })
    .unwrap_err();
    assert!(
        matches!(
            error,
            SimError::DataRace {
                kind: RaceKind::ReadAfterWrite,
                first: Dim3 { x: 2046, .. },
                second: Dim3 { x: 0, .. },
                ..
            }
        ),
        "{error:?}"
    );
}

/// A failed launch leaves nothing behind: the next one runs clean.
#[test]
fn launch_after_failure_runs_clean() {
    let _ = read_after_write();
    let count = AtomicU32::new(0);
    launch(Dim3::x(2), Dim3::xyz(2, 2, 2), 0, || {
        let s = shared_array!(u32; 8);
        let t = thread::thread_idx();
        s.set(t.x + 2 * t.y + 4 * t.z, 1);
        count.fetch_add(1, Ordering::Relaxed);
    })
    .unwrap();
    assert_eq!(count.into_inner(), 16);
}

// ---------------------------------------------------------------------------------------
// The device API outside a launch.
// ---------------------------------------------------------------------------------------

#[test]
#[should_panic(expected = "nvptx_device::sim::launch")]
fn device_api_outside_launch_panics() {
    let _ = thread_idx_x();
}
