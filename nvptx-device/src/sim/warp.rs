//! Warp-collective operations in the simulator: the lanes in the mask meet, each publishes
//! up to [`WORDS`] words, and each leaves with a copy of every lane's words. A shuffle
//! publishes one value and reads its source lane's; `mma.sync` publishes a lane's fragment
//! registers and computes its own accumulators from all of them ([`crate::mma`]).
//!
//! A lane that arrives before the rest of its mask blocks; the last one to arrive wakes
//! the others, each with a copy of the exchange's words.

use super::context::{self, ThreadCtx};
use super::error::{SimError, SourceLocation};
use super::sched::Wait;
use core::cell::RefCell;
use core::panic::Location;
use std::rc::Rc;

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
    /// The words published for the current exchange, by lane.
    values: Published,
    /// Lanes that have arrived at the current exchange, and its mask and location.
    arrived: u32,
    current: Option<(u32, SourceLocation)>,
    /// What the lanes woken by the last exchange take with them, by lane.
    results: [Option<Rc<Published>>; 32],
    exited: u32,
}

/// The exchange point of one warp.
pub(crate) struct WarpExchange {
    /// Lanes that exist in this warp (the last warp of a block may be partial).
    lanes: u32,
    state: RefCell<State>,
}

impl WarpExchange {
    pub fn new(lanes: u32) -> Self {
        Self {
            lanes: if lanes >= 32 {
                u32::MAX
            } else {
                (1 << lanes) - 1
            },
            state: RefCell::new(State {
                values: [[0; WORDS]; 32],
                arrived: 0,
                current: None,
                results: [const { None }; 32],
                exited: 0,
            }),
        }
    }

    /// Lane `lane` returned from the kernel; a pending exchange that needs it can never
    /// complete. Returns the mask and location of that exchange.
    pub fn exit(&self, lane: u32) -> Option<(u32, SourceLocation)> {
        let mut s = self.state.borrow_mut();
        s.exited |= 1 << lane;
        match s.current {
            Some((mask, at)) if mask & (1 << lane) != 0 => Some((mask, at)),
            _ => None,
        }
    }

    /// The lanes waiting at the current exchange.
    pub fn arrived(&self) -> u32 {
        self.state.borrow().arrived
    }
}

fn fail(t: &ThreadCtx<'_>, reason: std::string::String, at: SourceLocation) -> ! {
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
/// `mask` read as zeros or words of an earlier exchange: callers only look at lanes in
/// `mask`). `op` prefixes the reasons of errors (`"shfl.sync: "`, `"mma.sync: "` ...).
///
/// A lane not in its own mask, a mask naming lanes that do not exist or have returned,
/// and lanes disagreeing on the mask or the call site are reported as
/// [`SimError::WarpShuffle`]; lanes that never arrive leave the block deadlocked, which
/// the launch reports as [`SimError::Deadlock`].
pub(crate) fn exchange(
    mask: u32, words: &[u32], op: &'static str, location: &'static Location<'static>,
) -> (u32, Published) {
    let at = SourceLocation::from(location);
    context::with(|t| {
        t.check_aborted();
        let lane = t.linear % 32;
        let warp = (t.linear / 32) as usize;
        let x = &t.block.warps[warp];
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
        let mut s = x.state.borrow_mut();
        if s.exited & mask != 0 {
            let exited = s.exited;
            drop(s);
            fail(
                t,
                std::format!(
                    "{op}mask {mask:#010x} includes lanes that already returned ({exited:#010x})"
                ),
                at,
            );
        }
        match s.current {
            None => s.current = Some((mask, at)),
            Some((m, a)) if m != mask || a != at => {
                drop(s);
                fail(
                    t,
                    std::format!(
                        "{op}lanes disagree: mask {m:#010x} at {a} vs mask {mask:#010x} here"
                    ),
                    at,
                )
            }
            Some(_) => {}
        }
        s.values[lane as usize][..words.len()].copy_from_slice(words);
        s.arrived |= 1 << lane;
        if s.arrived == mask {
            // The last lane: the others leave with these words, it goes on at once.
            let values = s.values;
            let others = mask & !(1 << lane);
            if others != 0 {
                let shared = Rc::new(values);
                for l in (0..32).filter(|l| others & (1 << l) != 0) {
                    s.results[l] = Some(Rc::clone(&shared));
                }
            }
            s.arrived = 0;
            s.current = None;
            drop(s);
            let first = 32 * warp as u32;
            for l in (0..32).filter(|l| others & (1 << l) != 0) {
                t.block.sched.wake(first + l);
            }
            return (lane, values);
        }
        drop(s);
        t.block_on(Wait::Warp {
            op,
            mask,
            location: at,
        });
        let values = x.state.borrow_mut().results[lane as usize].take();
        match values {
            Some(values) => (lane, *values),
            None => context::abort(),
        }
    })
}
