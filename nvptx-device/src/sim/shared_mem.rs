//! The block's shared memory, with a shadow word per data word for the race checker.
//!
//! Shadow layout (one `u64` per 4-byte word), all about the current interval: bits 0..20
//! and 54..64 the interval ([`ThreadCtx::epoch`]), bit 20 "written at least once", bits
//! 21..32 the writer (thread + 1, 0 = none), bits 32..43 and 43..54 up to two distinct
//! readers (thread + 1). A shadow from another interval counts as empty: a block barrier, or
//! the completion of an `mbarrier` phase, between the two accesses ordered them.

use super::context::{self, ThreadCtx};
use super::error::{RaceKind, SharedArrayId, SimError, SourceLocation};
use super::pending::PendingRead;
use super::sched::Wait;
use crate::launch::{Limit, Limits};
use core::cell::{Cell, RefCell};
use core::panic::Location;
use std::boxed::Box;
use std::vec::Vec;

/// One shared array of a block.
pub(crate) struct Region {
    id: SharedArrayId,
    words: Box<[Cell<u32>]>,
    shadow: Box<[Cell<u64>]>,
}

impl Region {
    fn new(id: SharedArrayId, len: u32) -> Box<Self> {
        Box::new(Self {
            id,
            // A recognisable NaN, in case someone prints it.
            words: (0..len).map(|_| Cell::new(0x7fc0_dead)).collect(),
            shadow: (0..len).map(|_| Cell::new(0)).collect(),
        })
    }
}

/// A pointer to a [`Region`] of the running block. The arena that owns the region outlives
/// every kernel thread of the block, which is the only place a handle can be used (on the
/// host thread that runs the block).
#[derive(Clone, Copy)]
pub(crate) struct RegionRef(*const Region);

impl RegionRef {
    /// The region's address, which identifies it while the block runs.
    pub(crate) fn addr(&self) -> usize {
        self.0.addr()
    }

    #[inline(always)]
    fn get(&self) -> &Region {
        // SAFETY: see the type's documentation; regions are boxed, so they never move.
        unsafe { &*self.0 }
    }
}

/// The shared memory of one block: the dynamic buffer and the static arrays, created on
/// first use by any of its threads.
pub(crate) struct SharedArena {
    dynamic: Box<Region>,
    statics: RefCell<Vec<(usize, Box<Region>)>>,
    limit: u32,
}

impl SharedArena {
    pub fn new(dynamic_bytes: u32, limit: u32) -> Self {
        Self {
            dynamic: Region::new(SharedArrayId::Dynamic, dynamic_bytes / 4),
            statics: RefCell::new(Vec::new()),
            limit,
        }
    }
}

/// The interval a shadow was written in takes 30 bits: 20 at the bottom of the word, 10 at
/// the top (bits 54..64). See [`ThreadCtx::epoch`].
const EPOCH_BITS: u64 = 20;
const EPOCH_MASK: u64 = (1 << EPOCH_BITS) - 1;
const EPOCH_HIGH_SHIFT: u64 = 54;
const WRITTEN: u64 = 1 << 20;
const WRITER_SHIFT: u64 = 21;
const READER1_SHIFT: u64 = 32;
const READER2_SHIFT: u64 = 43;
const SLOT: u64 = 0x7ff;

/// The most threads a block may have for the shadow to name each of them (thread + 1 must
/// fit a slot, 0 meaning none). A larger thread number would spill into the next field and
/// make the race checker blame the wrong thread, or miss the race.
pub(crate) const MAX_BLOCK_THREADS: u32 = SLOT as u32;

#[derive(Clone, Copy)]
struct Shadow(u64);

impl Shadow {
    #[inline(always)]
    fn epoch(self) -> u64 {
        (self.0 & EPOCH_MASK) | ((self.0 >> EPOCH_HIGH_SHIFT) << EPOCH_BITS)
    }
    #[inline(always)]
    fn slot(self, shift: u64) -> u32 {
        ((self.0 >> shift) & SLOT) as u32
    }
    /// Whether a read by thread `me` (+ 1) in interval `epoch` would leave the shadow as it
    /// is and find nothing wrong: the word is written, this interval's writer (if any) is
    /// `me`, and `me` is a recorded reader or two readers are recorded already.
    #[inline(always)]
    fn read_again(self, me: u32, epoch: u64) -> bool {
        let (writer, r1, r2) = (
            self.slot(WRITER_SHIFT),
            self.slot(READER1_SHIFT),
            self.slot(READER2_SHIFT),
        );
        self.0 & WRITTEN != 0
            && self.epoch() == epoch
            && (writer == 0 || writer == me)
            && (r1 == me || r2 == me || (r1 != 0 && r2 != 0))
    }
    fn build(epoch: u64, written: bool, writer: u32, r1: u32, r2: u32) -> Self {
        Self(
            (epoch & EPOCH_MASK)
                | (epoch >> EPOCH_BITS) << EPOCH_HIGH_SHIFT
                | if written { WRITTEN } else { 0 }
                | (writer as u64) << WRITER_SHIFT
                | (r1 as u64) << READER1_SHIFT
                | (r2 as u64) << READER2_SHIFT,
        )
    }
}

fn race(
    t: &ThreadCtx<'_>, at: SourceLocation, region: &Region, index: u32, kind: RaceKind,
    other_plus_one: u32,
) -> ! {
    let b = &t.block;
    t.fail(SimError::DataRace {
        block: b.block_idx,
        array: region.id,
        index,
        kind,
        first: b.thread_of(other_plus_one - 1),
        second: t.thread_idx,
        location: at,
        barriers_passed: t.barriers_passed.get(),
    })
}

/// One access of the calling simulated thread to word `index` of a region, as the race
/// checker sees it.
struct Access<'a> {
    t: &'a ThreadCtx<'a>,
    region: &'a Region,
    index: u32,
    at: SourceLocation,
    /// The thread's number in the block, from 1 (0 in a shadow slot is nobody).
    me: u32,
    /// The barrier interval it is in.
    epoch: u64,
}

impl Access<'_> {
    fn race(&self, kind: RaceKind, other_plus_one: u32) -> ! {
        race(
            self.t,
            self.at,
            self.region,
            self.index,
            kind,
            other_plus_one,
        )
    }
}

/// Records an access to word `index` of `region` in its shadow (`next` gives the new shadow
/// from the old one, after reporting what conflicts, or `None` when there is nothing new to
/// record), then performs it on the word (`word` gets the shadow as it was before this
/// access).
#[inline(always)]
fn access<R>(
    region: RegionRef, index: u32, at: &'static Location<'static>,
    next: impl Fn(&Access<'_>, Shadow) -> Option<Shadow>,
    word: impl FnOnce(&Access<'_>, Shadow, &Cell<u32>) -> R,
) -> R {
    let at = SourceLocation::from(at);
    context::with(|t| {
        t.check_aborted();
        let r = region.get();
        let a = Access {
            t,
            region: r,
            index,
            at,
            me: t.linear + 1,
            epoch: t.epoch(),
        };
        let cell = &r.shadow[index as usize];
        let old = Shadow(cell.get());
        if let Some(new) = next(&a, old) {
            cell.set(new.0);
        }
        word(&a, old, &r.words[index as usize])
    })
}

/// A checked read of word `index` of `region` by the calling simulated thread. A word that
/// no thread has written yet parks the thread, recorded as a reader in the word's shadow
/// (without "written"), until the block decides what it was ([`super::pending`]).
///
/// Inlined where the kernel reads: most reads are of words that this interval's readers
/// have already recorded all the shadow can hold of, and take only that test. (It need not
/// ask whether the block has failed: only the thread that fails it runs kernel code then.)
#[inline]
#[track_caller]
pub(crate) fn load(region: RegionRef, index: u32) -> u32 {
    let unchanged = context::with(|t| {
        let r = region.get();
        let i = index as usize;
        let shadow = Shadow(r.shadow.get(i)?.get());
        let epoch = t.epoch();
        shadow
            .read_again(t.linear + 1, epoch)
            .then(|| r.words[i].get())
    });
    match unchanged {
        Some(bits) => bits,
        None => load_recorded(region, index, Location::caller()),
    }
}

/// [`load`] of a word whose shadow the read changes or that it finds a problem with.
#[inline(never)]
fn load_recorded(region: RegionRef, index: u32, at: &'static Location<'static>) -> u32 {
    let next = |a: &Access<'_>, old: Shadow| {
        if old.0 & WRITTEN == 0 {
            let (r1, r2) = if old.epoch() == a.epoch {
                (old.slot(READER1_SHIFT), old.slot(READER2_SHIFT))
            } else {
                (0, 0)
            };
            return match (r1, r2) {
                (0, r2) => Some(Shadow::build(a.epoch, false, 0, a.me, r2)),
                (r1, 0) => Some(Shadow::build(a.epoch, false, 0, r1, a.me)),
                _ => None, // two parked readers already known: the writer reports one
            };
        }
        if old.epoch() != a.epoch {
            return Some(Shadow::build(a.epoch, true, 0, a.me, 0));
        }
        let writer = old.slot(WRITER_SHIFT);
        if writer != 0 && writer != a.me {
            a.race(RaceKind::ReadAfterWrite, writer);
        }
        let (r1, r2) = (old.slot(READER1_SHIFT), old.slot(READER2_SHIFT));
        if r1 == a.me || r2 == a.me || (r1 != 0 && r2 != 0) {
            return None; // already recorded, or two other readers already known
        }
        Some(if r1 == 0 {
            Shadow::build(a.epoch, true, writer, a.me, r2)
        } else {
            Shadow::build(a.epoch, true, writer, r1, a.me)
        })
    };
    access(region, index, at, next, |a, old, w| {
        if old.0 & WRITTEN == 0 {
            park(a)
        }
        w.get()
    })
}

/// Parks the reader of an unwritten word until another thread writes it (a race, which
/// that writer reports) or no thread can (an uninitialised read, which the launch reports
/// once every thread is blocked); unwinds either way.
fn park(a: &Access<'_>) -> ! {
    a.t.block.pending.park(PendingRead {
        region: a.region as *const Region as usize,
        index: a.index,
        array: a.region.id,
        linear: a.t.linear,
        at: a.t.coord(),
        location: a.at,
    });
    a.t.block_on(Wait::Parked);
    unreachable!("a parked read is woken only when its block fails")
}

/// A checked write of word `index` of `region` by the calling simulated thread.
#[track_caller]
pub(crate) fn store(region: RegionRef, index: u32, bits: u32) {
    let next = |a: &Access<'_>, old: Shadow| {
        let (mut r1, mut r2) = (0, 0);
        if old.epoch() == a.epoch && old.0 & WRITTEN == 0 {
            // Readers of a word nothing had written are parked: their reads complete after
            // this write, which completes the race ([`super::pending`]). The lower-numbered
            // reader is the one reported.
            let readers = [old.slot(READER1_SHIFT), old.slot(READER2_SHIFT)];
            if let Some(reader) = readers.into_iter().filter(|&r| r != 0).min() {
                pending_race(a, reader);
            }
        }
        if old.epoch() == a.epoch {
            let writer = old.slot(WRITER_SHIFT);
            if writer != 0 && writer != a.me {
                a.race(RaceKind::WriteAfterWrite, writer);
            }
            (r1, r2) = (old.slot(READER1_SHIFT), old.slot(READER2_SHIFT));
            for reader in [r1, r2] {
                if reader != 0 && reader != a.me {
                    a.race(RaceKind::WriteAfterRead, reader);
                }
            }
        }
        Some(Shadow::build(a.epoch, true, a.me, r1, r2))
    };
    access(region, index, Location::caller(), next, |_, _, w| {
        w.set(bits)
    })
}

/// A read of word `index` of `region` outside the race checker: what the hardware orders
/// by other means than block barriers (an `mbarrier`'s own words, changed atomically; the
/// words of a tile the tensor-memory accelerator writes, merged with a half it leaves).
#[track_caller]
pub(crate) fn load_quiet(region: RegionRef, index: u32) -> u32 {
    access(
        region,
        index,
        Location::caller(),
        |_, _| None,
        |_, _, w| w.get(),
    )
}

/// A write of word `index` of `region` outside the race checker (see [`load_quiet`]): the
/// word counts as written in the calling thread's interval, by no thread, so that ordinary
/// reads after it neither park nor race with it.
#[track_caller]
pub(crate) fn store_quiet(region: RegionRef, index: u32, bits: u32) {
    let next = |a: &Access<'_>, _| Some(Shadow::build(a.epoch, true, 0, 0, 0));
    access(region, index, Location::caller(), next, |_, _, w| {
        w.set(bits)
    })
}

/// Reports the calling thread's write as completing a race with `reader_plus_one`'s parked
/// read of the same word: read after write, at the read, as the reader would have reported
/// it had the write come first.
fn pending_race(a: &Access<'_>, reader_plus_one: u32) -> ! {
    let b = a.t.block;
    let reader = reader_plus_one - 1;
    let region = a.region as *const Region as usize;
    let location = b
        .pending
        .location_of(region, a.index, reader)
        .expect("a reader in the shadow of an unwritten word is parked");
    a.t.fail(SimError::DataRace {
        block: b.block_idx,
        array: a.region.id,
        index: a.index,
        kind: RaceKind::ReadAfterWrite,
        first: a.t.thread_idx,
        second: b.thread_of(reader),
        location,
        barriers_passed: a.t.barriers_passed.get(),
    })
}

/// Reports an out-of-bounds access by the calling simulated thread.
#[track_caller]
pub(crate) fn out_of_bounds(region: RegionRef, index: u32, len: u32) -> ! {
    let at = SourceLocation::from(Location::caller());
    context::with(|t| {
        t.fail(SimError::SharedOutOfBounds {
            at: t.coord(),
            array: region.get().id,
            index,
            len,
            location: at,
        })
    })
}

/// The running block's dynamic shared memory, and its length in words.
pub(crate) fn dynamic_region() -> (RegionRef, u32) {
    context::with(|t| {
        let d = &t.block.shared.dynamic;
        (RegionRef(&**d), d.words.len() as u32)
    })
}

/// The dynamic shared memory of block `rank` of the running block's cluster, and its
/// length in words; `None` where `region` is not the running block's dynamic shared memory
/// (only that one is reached across a cluster here).
pub(crate) fn dynamic_region_in(region: RegionRef, rank: u32) -> Option<(RegionRef, u32)> {
    context::with(|t| {
        if region.addr() != (&*t.block.shared.dynamic as *const Region).addr() {
            return None;
        }
        let d = &t.cluster.blocks.get(rank as usize)?.shared.dynamic;
        Some((RegionRef(&**d), d.words.len() as u32))
    })
}

/// The running block's static array for the `shared_array!` call site `site`, created by
/// the first thread that gets there.
#[track_caller]
pub(crate) fn static_region(site: usize, len: u32) -> RegionRef {
    let at = SourceLocation::from(Location::caller());
    context::with(|t| {
        let arena = &t.block.shared;
        let mut statics = arena.statics.borrow_mut();
        if let Some((_, r)) = statics
            .iter()
            .find(|(s, r)| *s == site && r.words.len() == len as usize)
        {
            return RegionRef(&**r);
        }
        let static_words: u64 = statics
            .iter()
            .map(|(_, r)| r.words.len() as u64)
            .sum::<u64>()
            + len as u64;
        let words = static_words + arena.dynamic.words.len() as u64;
        for (what, requested, limit) in [
            (
                Limit::StaticSharedBytesPerBlock,
                static_words * 4,
                Limits::SHARED_BYTES_DEFAULT,
            ),
            (Limit::SharedBytesPerBlock, words * 4, arena.limit),
        ] {
            if let Err(e) = what.check(requested, u64::from(limit)) {
                drop(statics);
                t.fail(SimError::Limit(e));
            }
        }
        let region = Region::new(SharedArrayId::Static(at), len);
        let r = RegionRef(&*region);
        statics.push((site, region));
        r
    })
}
