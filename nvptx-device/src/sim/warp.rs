//! Warp-collective operations in the simulator: the lanes in the mask meet, each publishes
//! up to [`WORDS`] words, and each leaves with a copy of every lane's words. A shuffle
//! publishes one value and reads its source lane's; `mma.sync` publishes a lane's fragment
//! registers and computes its own accumulators from all of them ([`crate::mma`]).
//!
//! Values are double-buffered by generation: lanes can only publish for exchange `g + 2`
//! after every lane has arrived at `g + 1`, i.e. after all of them have read exchange `g`.

use super::context::{self, Abort, ThreadCtx};
use super::error::{SimError, SourceLocation};
use super::launch::DEADLOCK_TIMEOUT;
use core::panic::Location;
use std::sync::{Condvar, Mutex};

/// How a lane picks its source lane.
#[derive(Clone, Copy)]
pub(crate) enum Mode {
    Down(u32),
    Up(u32),
    Xor(u32),
    /// From lane `src % 32`.
    Idx(u32),
    /// Every lane gets the mask of lanes whose value is nonzero.
    Ballot,
}

/// The most words one lane publishes in one exchange (`mma.sync`: four of `a`, two of `b`).
pub(crate) const WORDS: usize = 8;

/// Every lane's published words of one exchange, by lane.
pub(crate) type Published = [[u32; WORDS]; 32];

struct State {
    values: [Published; 2],
    /// Lanes that have arrived at the current exchange, and its mask and location.
    arrived: u32,
    current: Option<(u32, SourceLocation)>,
    generation: u64,
    exited: u32,
    aborted: bool,
}

/// The exchange point of one warp.
pub(crate) struct WarpExchange {
    /// Lanes that exist in this warp (the last warp of a block may be partial).
    lanes: u32,
    state: Mutex<State>,
    released: Condvar,
}

impl WarpExchange {
    pub fn new(lanes: u32) -> Self {
        Self {
            lanes: if lanes >= 32 {
                u32::MAX
            } else {
                (1 << lanes) - 1
            },
            state: Mutex::new(State {
                values: [[[0; WORDS]; 32]; 2],
                arrived: 0,
                current: None,
                generation: 0,
                exited: 0,
                aborted: false,
            }),
            released: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lane `lane` returned from the kernel; a pending exchange that needs it can never
    /// complete. Returns the mask and location of that exchange.
    pub fn exit(&self, lane: u32) -> Option<(u32, SourceLocation)> {
        let mut s = self.lock();
        s.exited |= 1 << lane;
        match s.current {
            Some((mask, at)) if mask & (1 << lane) != 0 => Some((mask, at)),
            _ => None,
        }
    }

    pub fn wake_all(&self) {
        self.lock().aborted = true;
        self.released.notify_all();
    }
}

fn fail(t: &ThreadCtx, reason: std::string::String, at: SourceLocation) -> ! {
    t.fail(SimError::WarpShuffle {
        at: t.coord(),
        reason,
        location: at,
    })
}

/// Fails the calling simulated thread's block with a warp-collective error at `location`.
pub(crate) fn fail_here(reason: std::string::String, location: &'static Location<'static>) -> ! {
    context::with(|t| fail(t, reason, SourceLocation::from(location)))
}

/// A shuffle by the calling simulated thread, at its caller's source location.
#[track_caller]
pub(crate) fn shuffle(mask: u32, bits: u32, mode: Mode) -> u32 {
    let location = Location::caller();
    let op = if matches!(mode, Mode::Ballot) {
        "vote.ballot.sync: "
    } else {
        "shfl.sync: "
    };
    let (lane, values) = exchange(mask, &[bits], op, location);
    let src = match mode {
        Mode::Down(delta) => lane.saturating_add(delta),
        Mode::Up(delta) => lane.checked_sub(delta).unwrap_or(lane),
        Mode::Xor(m) => lane ^ (m & 31),
        Mode::Idx(src) => src & 31,
        Mode::Ballot => {
            return (0..32)
                .filter(|&l| mask & (1 << l) != 0 && values[l as usize][0] != 0)
                .fold(0, |b, l| b | (1 << l));
        }
    };
    // Out-of-range sources read the lane's own value, as `shfl.sync` with c = 0x1f does.
    let src = if src > 31 || mask & (1 << src) == 0 {
        lane
    } else {
        src
    };
    values[src as usize][0]
}

/// One warp-collective exchange by the calling simulated thread: it publishes `words`
/// (at most [`WORDS`]), waits until every lane of `mask` has published at this same
/// call site, and returns its lane and a copy of every lane's words (lanes outside
/// `mask` read as zeros of an earlier exchange: callers only look at lanes in `mask`).
/// `op` prefixes the reasons of errors (`"shfl.sync: "`, `"mma.sync: "` ...).
///
/// A lane not in its own mask, a mask naming lanes that do not exist or have returned,
/// lanes disagreeing on the mask or the call site, and lanes that never arrive are reported
/// as [`SimError::WarpShuffle`] instead of hanging.
pub(crate) fn exchange(
    mask: u32, words: &[u32], op: &str, location: &'static Location<'static>,
) -> (u32, Published) {
    let at = SourceLocation::from(location);
    context::with(|t| {
        t.check_aborted();
        let lane = t.linear % 32;
        let x = &t.block.warps[(t.linear / 32) as usize];
        if mask & (1 << lane) == 0 {
            fail(
                t,
                std::format!("{op}lane {lane} is not in its own mask {mask:#010x}"),
                at,
            );
        }
        if mask & !x.lanes != 0 {
            fail(
                t,
                std::format!(
                    "{op}mask {mask:#010x} names lanes that do not exist (warp has {:#010x})",
                    x.lanes
                ),
                at,
            );
        }
        let mut s = x.lock();
        if s.exited & mask != 0 {
            fail(
                t,
                std::format!(
                    "{op}mask {mask:#010x} includes lanes that already returned ({:#010x})",
                    s.exited
                ),
                at,
            );
        }
        match s.current {
            None => s.current = Some((mask, at)),
            Some((m, a)) if m != mask || a != at => fail(
                t,
                std::format!("{op}lanes disagree: mask {m:#010x} at {a} vs mask {mask:#010x} here"),
                at,
            ),
            Some(_) => {}
        }
        let slot = (s.generation % 2) as usize;
        s.values[slot][lane as usize][..words.len()].copy_from_slice(words);
        s.arrived |= 1 << lane;
        let generation = s.generation;
        if s.arrived == mask {
            t.block.pending.released(mask.count_ones() - 1);
            s.arrived = 0;
            s.current = None;
            s.generation += 1;
            x.released.notify_all();
        } else {
            if let Some(error) = t.block.pending.wait_begin() {
                drop(s);
                t.fail(error);
            }
            while s.generation == generation && !s.aborted {
                let (next, timeout) = x
                    .released
                    .wait_timeout(s, DEADLOCK_TIMEOUT)
                    .unwrap_or_else(|e| e.into_inner());
                s = next;
                if timeout.timed_out() && s.generation == generation && !s.aborted {
                    let missing = mask & !s.arrived;
                    drop(s);
                    fail(
                        t,
                        std::format!(
                            "{op}lanes {missing:#010x} never reached this point (waiting at a barrier?)"
                        ),
                        at,
                    );
                }
            }
            if s.generation == generation {
                std::panic::resume_unwind(std::boxed::Box::new(Abort));
            }
        }
        (lane, s.values[slot])
    })
}
