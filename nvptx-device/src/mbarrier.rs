//! `mbarrier`: a barrier object in shared memory (Hopper's and Ampere's asynchronous
//! barrier) that completes a *phase* once its expected arrivals have arrived and the bytes
//! the phase's asynchronous copies owe have landed. A thread waits for a phase by its
//! *parity* (`try_wait.parity`): phases alternate 0, 1, 0, …, and a wait for the parity of
//! the phase before the current one returns at once, which is what lets a producer start on
//! empty slots ([`PipelineState::producer_start`]).
//!
//! Two rings of them make a pipeline between a producer and its consumers: `full[s]` (one
//! arrival, the producer's, plus the bytes its copies bring) says slot `s` holds data,
//! `empty[s]` (one arrival per consumer) says the consumers are done with it:
//!
//! ```text
//! producer: empty[s].wait(state.phase ^ 1); full[s].arrive_expect_tx(bytes); copies → full[s]
//! consumer: full[s].wait(state.phase); …read slot s…; empty[s].arrive()
//! ```
//!
//! In the simulator a barrier keeps its state in its two words as the GPU does in its 64
//! bits: the phases completed and the count expected (first word), the bytes owed and the
//! arrivals so far (second). A copy lands when it is issued, so a wait finds its phase
//! complete or reports the kernel's mistake: waiting for a phase that no arrival or copy
//! has completed, more bytes landing than the phase expects once all its arrivals are in,
//! more arrivals than the count, an `expect_tx` while bytes are still owed. As on the GPU,
//! bytes may land before the `expect_tx` that announces them (another block's multicast
//! copy, [`crate::tma::copy_2d_bytes`]): the bytes owed go below zero until it comes.

use crate::shared::SharedSlice;

/// An `mbarrier`: two words of shared memory, 8-byte aligned.
#[derive(Clone, Copy)]
pub struct Mbarrier {
    words: SharedSlice<u32>,
    at: u32,
}

/// The simulator's packing of the two words: count expected and phases completed in the
/// first, arrivals so far and bytes owed in the second.
#[cfg(not(target_arch = "nvptx64"))]
mod sim_state {
    /// Bits of the second word that hold the bytes owed, two's complement (from −512 KiB to
    /// 512 KiB, more than a block's shared memory).
    pub const OWED_BITS: u32 = 20;
    pub const OWED_MASK: u32 = (1 << OWED_BITS) - 1;
    /// The most bytes one phase may owe.
    pub const OWED_MAX: i32 = (1 << (OWED_BITS - 1)) - 1;
    pub const COUNT_SHIFT: u32 = 16;
    pub const PHASE_MASK: u32 = (1 << COUNT_SHIFT) - 1;
}

impl Mbarrier {
    /// The barrier at words `at..at + 2` of `words` (`at` even, the byte address a
    /// multiple of 8).
    #[inline(always)]
    pub fn new(words: SharedSlice<u32>, at: u32) -> Self {
        Self { words, at }
    }

    /// Its shared-memory byte address.
    #[inline(always)]
    pub fn addr(&self) -> u32 {
        self.words.byte_address() + 4 * self.at
    }

    /// Initializes the barrier for one arrival per phase (`mbarrier.init`), phase 0.
    ///
    /// # Safety
    /// As [`init_count`](Self::init_count).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn init(&self) {
        // SAFETY: the caller's contract.
        unsafe { self.init_count(1) }
    }

    /// Initializes the barrier for `count` arrivals per phase (`mbarrier.init`, `count`
    /// from 1 to 4095 here), phase 0.
    ///
    /// # Safety
    /// One thread, before any other use; then [`fence_init`] and a block barrier.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn init_count(&self, count: u32) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the caller's contract; the address is the barrier's.
        unsafe {
            core::arch::asm!("mbarrier.init.shared::cta.b64 [{a}], {c};", a = in(reg32) self.addr(),
                             c = in(reg32) count, options(nostack, preserves_flags));
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            use sim_state::*;
            if !self.addr().is_multiple_of(8) {
                panic!("mbarrier: not 8-byte aligned");
            }
            if count == 0 || count >= 1 << (32 - OWED_BITS) {
                panic!("mbarrier: a count of {count} arrivals per phase (1 to 4095)");
            }
            self.words.set_quiet(self.at, count << COUNT_SHIFT);
            self.words.set_quiet(self.at + 1, 0);
        }
    }

    /// Arrives once (`mbarrier.arrive`): the phase completes with its last expected arrival
    /// once no bytes are owed.
    ///
    /// # Safety
    /// The barrier initialized; no more arrivals in a phase than its count.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn arrive(&self) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the caller's contract.
        unsafe {
            core::arch::asm!("mbarrier.arrive.shared::cta.b64 _, [{a}];", a = in(reg32) self.addr(),
                             options(nostack, preserves_flags));
        }
        #[cfg(not(target_arch = "nvptx64"))]
        self.sim_update(1, 0, None);
    }

    /// Arrives once on the barrier at the same shared address in block `rank` of this
    /// block's cluster (`mapa` and `mbarrier.arrive.shared::cluster`): a consumer telling
    /// every producer that multicasts into its slot that the slot is free. The arrival has
    /// the instruction's default semantics (release at the scope of the block), not
    /// `.release.cluster`, which costs a fence of the whole GPU's memory (`MEMBAR.ALL.GPU`)
    /// an arrival: what it announces is that the caller's reads of the slot are over, which
    /// they are when it arrives (`wgmma`'s are, once waited for), and the producer it
    /// releases writes the slot only through the tensor-memory accelerator after.
    ///
    /// # Safety
    /// As [`arrive`](Self::arrive), for that block's barrier; `rank` a block of the cluster.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn arrive_cluster(&self, rank: u32) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the caller's contract.
        unsafe {
            core::arch::asm!(
                "{{ .reg .b32 remote; mapa.shared::cluster.u32 remote, {a}, {r}; mbarrier.arrive.shared::cluster.b64 _, [remote]; }}",
                a = in(reg32) self.addr(), r = in(reg32) rank, options(nostack, preserves_flags));
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let remote = self.in_rank(rank);
            // SAFETY: the caller's contract, for that block's barrier.
            crate::sim::cluster::on_rank(rank, || unsafe { remote.arrive() });
        }
    }

    /// The barrier at the same shared address in block `rank` of the cluster.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub(crate) fn in_rank(&self, rank: u32) -> Self {
        Self {
            words: self.words.in_rank(rank),
            at: self.at,
        }
    }

    /// Arrives, announcing `bytes` that this phase's copies will bring
    /// (`mbarrier.arrive.expect_tx`): the phase completes when they have all landed.
    ///
    /// # Safety
    /// The issuing thread, before the phase's copies; the barrier initialized.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn expect_tx(&self, bytes: u32) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the caller's contract.
        unsafe {
            core::arch::asm!("mbarrier.arrive.expect_tx.shared::cta.b64 _, [{a}], {b};",
                             a = in(reg32) self.addr(), b = in(reg32) bytes,
                             options(nostack, preserves_flags));
        }
        #[cfg(not(target_arch = "nvptx64"))]
        self.sim_update(1, 0, Some(bytes));
    }

    /// Whether the phase of parity `parity` has completed (`mbarrier.try_wait.parity`, one
    /// try; the hardware may wait a while before saying no).
    ///
    /// # Safety
    /// The barrier initialized.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn try_wait(&self, parity: u32) -> bool {
        #[cfg(target_arch = "nvptx64")]
        {
            let done: u32;
            // SAFETY: the caller's contract; a test of the barrier's state.
            unsafe {
                core::arch::asm!(
                    "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{a}], {ph}; selp.u32 {d}, 1, 0, p; }}",
                    a = in(reg32) self.addr(), ph = in(reg32) parity, d = out(reg32) done,
                    options(nostack, preserves_flags));
            }
            done != 0
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let completed = self.words.get_quiet(self.at) & sim_state::PHASE_MASK;
            // The phase of parity `parity` is complete when the current phase (the number
            // completed) has the other parity.
            completed % 2 != parity % 2
        }
    }

    /// Waits until the phase of parity `parity` has completed (`try_wait.parity`, retried):
    /// the first phase has parity 0, the next 1, and so on. Once it returns, the phase's
    /// copies are visible to this thread.
    ///
    /// # Safety
    /// The barrier initialized, the phase's arrivals and copies issued (or to be issued by
    /// threads that do not wait on this thread).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn wait(&self, parity: u32) {
        // SAFETY: the caller's contract.
        while !unsafe { self.try_wait(parity) } {
            // The simulator blocks the thread until a phase of some barrier completes; a
            // wait that nothing completes leaves the block deadlocked, reported with this
            // wait's place.
            #[cfg(not(target_arch = "nvptx64"))]
            crate::sim::context::with(|t| {
                t.block_on(crate::sim::sched::Wait::Mbarrier {
                    byte: self.addr(),
                    parity,
                    location: core::panic::Location::caller().into(),
                })
            });
        }
    }

    /// The simulator's state change: `arrivals` more arrivals, `landed` bytes landed, and
    /// `expect` bytes announced.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn sim_update(&self, arrivals: u32, landed: u32, expect: Option<u32>) {
        use sim_state::*;
        let (first, second) = (
            self.words.get_quiet(self.at),
            self.words.get_quiet(self.at + 1),
        );
        let count = first >> COUNT_SHIFT;
        // Sign-extended from its bits.
        let mut owed = (((second & OWED_MASK) << (32 - OWED_BITS)) as i32) >> (32 - OWED_BITS);
        let mut arrived = second >> OWED_BITS;
        if count == 0 {
            panic!("mbarrier: used before init");
        }
        if let Some(bytes) = expect {
            if owed > 0 {
                panic!("mbarrier: expect_tx while {owed} bytes of the phase are still owed");
            }
            if bytes > OWED_MAX as u32 {
                panic!("mbarrier: {bytes} bytes expected in one phase (at most {OWED_MAX})");
            }
            owed += bytes as i32;
        }
        if landed > OWED_MAX as u32 || owed - (landed as i32) < -OWED_MAX {
            panic!("mbarrier: a copy of {landed} bytes landed where {owed} were owed");
        }
        owed -= landed as i32;
        arrived += arrivals;
        if arrived > count {
            panic!("mbarrier: {arrived} arrivals in a phase that expects {count}");
        }
        if arrived == count && owed < 0 {
            panic!(
                "mbarrier: {} bytes more landed than the phase expects, after its last arrival",
                -owed
            );
        }
        let complete = arrived == count && owed == 0;
        let (first, second) = if complete {
            // The phase completes; the next expects the same count.
            let phases = (first + 1) & PHASE_MASK;
            ((count << COUNT_SHIFT) | phases, 0)
        } else {
            (first, (arrived << OWED_BITS) | (owed as u32 & OWED_MASK))
        };
        self.words.set_quiet(self.at, first);
        self.words.set_quiet(self.at + 1, second);
        if complete {
            // A new interval for the race checker; whoever waits on a barrier looks again.
            crate::sim::context::with(|t| {
                let b = t.block;
                b.mbarrier_phases
                    .set(b.mbarrier_phases.get().wrapping_add(1));
                b.sched
                    .wake_where(|w| matches!(w, crate::sim::sched::Wait::Mbarrier { .. }))
            });
        }
    }

    /// The simulator's side of a landed copy of `bytes`.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub(crate) fn landed(&self, bytes: u32) {
        self.sim_update(0, bytes, None);
    }
}

/// Makes [`Mbarrier::init`] visible to the copies and to the cluster
/// (`fence.mbarrier_init.release.cluster`); a block (or cluster) barrier then publishes it.
#[inline(always)]
pub fn fence_init() {
    instruction!("fence.mbarrier_init.release.cluster;");
}

/// Where a thread is in a ring of `STAGES` slots: the slot, and the parity of the pass over
/// the ring it is on (flipped each time the index wraps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipelineState<const STAGES: u32> {
    pub index: u32,
    pub phase: u32,
}

impl<const STAGES: u32> PipelineState<STAGES> {
    /// A consumer's start: slot 0, waiting for the first phase (parity 0) of `full[0]`.
    #[inline(always)]
    pub const fn consumer_start() -> Self {
        Self { index: 0, phase: 0 }
    }

    /// A producer's start: slot 0, on the same pass as its consumers; it waits for
    /// `empty[s]` with the other parity ([`empty_parity`](Self::empty_parity)), which a
    /// fresh barrier reports complete, so every slot starts free.
    #[inline(always)]
    pub const fn producer_start() -> Self {
        Self::consumer_start()
    }

    /// The parity a producer waits for on `empty[index]`: the previous pass's release.
    #[inline(always)]
    pub const fn empty_parity(self) -> u32 {
        self.phase ^ 1
    }

    /// The next slot.
    #[inline(always)]
    pub fn advance(&mut self) {
        self.index += 1;
        if self.index == STAGES {
            self.index = 0;
            self.phase ^= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::{Launch, Limits};
    use crate::shared::dynamic_shared;
    use crate::thread::{Dim3, sync_threads, thread_idx_x};
    use std::string::ToString;

    fn launch(kernel: impl Fn() + Sync) -> Result<(), crate::sim::SimError> {
        crate::sim::one_block(32, 16, kernel)
    }

    #[test]
    fn a_ring_wraps_and_flips_its_phase() {
        let mut s = PipelineState::<3>::producer_start();
        let seen: [(u32, u32); 7] = core::array::from_fn(|_| {
            let now = (s.index, s.phase);
            s.advance();
            now
        });
        assert_eq!(
            seen,
            [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (0, 0)]
        );
        assert_eq!(PipelineState::<3>::producer_start().empty_parity(), 1);
    }

    #[test]
    fn a_phase_completes_with_its_last_arrival() {
        launch(|| {
            let bar = Mbarrier::new(dynamic_shared::<u32>(), 0);
            if thread_idx_x() == 0 {
                // SAFETY: one thread, then the barrier.
                unsafe { bar.init_count(2) };
                fence_init();
            }
            sync_threads();
            if thread_idx_x() == 0 {
                // SAFETY: initialized; two arrivals of two, then two of the next phase's.
                unsafe {
                    // A fresh barrier reports the phase before its first complete.
                    assert!(bar.try_wait(1) && !bar.try_wait(0));
                    bar.arrive();
                    assert!(!bar.try_wait(0), "one arrival of two completes nothing");
                    bar.arrive();
                    assert!(bar.try_wait(0) && !bar.try_wait(1));
                    bar.arrive();
                    bar.arrive();
                    assert!(bar.try_wait(1));
                }
            }
        })
        .unwrap();
    }

    /// A producer (thread 0) and consumers (threads 32..64) on a ring of two slots of one
    /// word each, `passes` times round; `release` says whether the consumers release a slot
    /// after reading it, `parity_flip` flips the parity they wait for.
    fn ring(passes: u32, release: bool, parity_flip: u32) -> Result<(), crate::sim::SimError> {
        let cfg = Launch {
            grid: Dim3::x(1),
            block: Dim3::x(64),
            dynamic_shared_bytes: 64,
            cluster: 1,
        };
        crate::sim::launch(&cfg, &Limits::default(), || {
            let words = dynamic_shared::<u32>();
            let (data, bars) = words.split_at(4);
            let full = |s: u32| Mbarrier::new(bars, 2 * s);
            let empty = |s: u32| Mbarrier::new(bars, 4 + 2 * s);
            let t = thread_idx_x();
            if t == 0 {
                for s in 0..2 {
                    // SAFETY: one thread, then the barrier.
                    unsafe {
                        full(s).init_count(1);
                        empty(s).init_count(1);
                    }
                }
                fence_init();
            }
            sync_threads();
            if t == 0 {
                let mut state = PipelineState::<2>::producer_start();
                for i in 0..passes {
                    // SAFETY: initialized; the consumers release each slot they read.
                    unsafe {
                        empty(state.index).wait(state.empty_parity());
                        data.set(state.index, 100 + i);
                        full(state.index).arrive();
                    }
                    state.advance();
                }
            } else if t == 32 {
                let mut state = PipelineState::<2>::consumer_start();
                for i in 0..passes {
                    // SAFETY: initialized; the producer fills each slot before its arrival.
                    unsafe {
                        full(state.index).wait(state.phase ^ parity_flip);
                        assert_eq!(data.get(state.index), 100 + i, "slot {}", state.index);
                        if release {
                            empty(state.index).arrive();
                        }
                    }
                    state.advance();
                }
            }
        })
    }

    #[test]
    fn a_ring_hands_slots_between_producer_and_consumer() {
        ring(7, true, 0).unwrap();
    }

    #[test]
    fn a_missing_arrival_is_a_deadlock_naming_the_wait() {
        // The consumers never release: the producer waits for its third slot forever.
        let err = ring(3, false, 0).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, crate::sim::SimError::Deadlock { .. }) && text.contains("mbarrier"),
            "{text}"
        );
    }

    #[test]
    fn a_wait_on_a_phase_never_issued_is_a_deadlock() {
        let cfg = Launch {
            grid: Dim3::x(1),
            block: Dim3::x(32),
            dynamic_shared_bytes: 16,
            cluster: 1,
        };
        let err = crate::sim::launch(&cfg, &Limits::default(), || {
            let bar = Mbarrier::new(dynamic_shared::<u32>(), 0);
            if thread_idx_x() == 0 {
                // SAFETY: one thread, then the barrier.
                unsafe { bar.init_count(1) };
            }
            sync_threads();
            // SAFETY: deliberately broken: nothing arrives.
            unsafe { bar.wait(0) };
        })
        .unwrap_err();
        assert!(err.to_string().contains("parity 0"), "{err}");
    }

    #[test]
    fn a_wrong_parity_is_the_kernels_error() {
        // The consumer waits for the other parity: a phase that has completed already, so
        // that it reads a slot before it is refilled, or one the producer never completes.
        for passes in [1, 2, 5] {
            let err = ring(passes, true, 1).unwrap_err();
            assert!(
                matches!(
                    err,
                    crate::sim::SimError::UninitializedSharedRead { .. }
                        | crate::sim::SimError::Deadlock { .. }
                ) || err.to_string().contains("slot"),
                "{passes}: {err}"
            );
        }
    }

    #[test]
    fn an_arrival_past_the_count_is_an_error() {
        let err = launch(|| {
            let bar = Mbarrier::new(dynamic_shared::<u32>(), 0);
            if thread_idx_x() == 0 {
                // SAFETY: one thread, then the barrier.
                unsafe { bar.init_count(2) };
            }
            sync_threads();
            if thread_idx_x() == 0 {
                // SAFETY: deliberately broken: three arrivals in a phase of two.
                unsafe {
                    bar.arrive();
                    bar.expect_tx(8);
                    bar.arrive();
                }
            }
        })
        .unwrap_err();
        assert!(err.to_string().contains("mbarrier"), "{err}");
    }
}
