//! Thread-block clusters in the simulator: the blocks of a cluster run together on one host
//! thread, their threads taking turns across the blocks, so that one block can wait for
//! another's arrival on an `mbarrier`, its multicast copy or the cluster barrier.
//!
//! What crosses blocks does so at the same shared-memory offset in the other block
//! ([`on_rank`]): a remote `mbarrier` arrival and a multicast tile. Both go outside the race
//! checker, as the hardware orders them through the barrier's phases, not block barriers.

use super::context::{self, BlockState, ThreadCtx};
use super::error::SourceLocation;
use super::sched::Wait;
use core::cell::Cell;
use std::vec::Vec;

/// The blocks of one cluster and its barrier (`barrier.cluster`).
pub(crate) struct Cluster {
    /// By rank.
    pub blocks: Vec<BlockState>,
    /// Threads at the current cluster barrier, and the barriers completed so far.
    arrived: Cell<u32>,
    generation: Cell<u32>,
}

impl Cluster {
    pub fn new(blocks: Vec<BlockState>) -> Self {
        Self {
            blocks,
            arrived: Cell::new(0),
            generation: Cell::new(0),
        }
    }

    /// Threads of the whole cluster.
    fn threads(&self) -> u32 {
        self.blocks
            .iter()
            .map(|b| b.block_dim.volume() as u32)
            .sum()
    }
}

/// Runs `f` as the calling thread's twin in block `rank` of its cluster (the same thread
/// number there): what `f` does to shared memory and barriers through
/// [`SharedSlice::in_rank`](crate::shared::SharedSlice) handles lands in that block, and
/// the threads it wakes are that block's. `f` must not block.
///
/// # Panics
/// Where `rank` is not a block of the cluster: the kernel's mistake, reported as its panic.
#[track_caller]
pub(crate) fn on_rank<R>(rank: u32, f: impl FnOnce() -> R) -> R {
    context::with(|t| {
        let blocks = t.cluster.blocks.len() as u32;
        if rank >= blocks {
            panic!("cluster rank {rank} asked for, in a cluster of {blocks} blocks");
        }
        if rank == t.rank {
            return f();
        }
        let twin = ThreadCtx::new(t.cluster, rank, t.linear, t.grid_dim);
        context::resume_nested(&twin, f)
    })
}

/// `barrier.cluster.arrive` then `wait` in the simulator: every thread of every block of
/// the cluster arrives before any goes on; then a block barrier, the interval the race
/// checker counts.
pub(crate) fn sync(location: &'static core::panic::Location<'static>) {
    context::with(|t| {
        let c = t.cluster;
        if c.blocks.len() > 1 {
            let arrived = c.arrived.get() + 1;
            if arrived == c.threads() {
                c.arrived.set(0);
                c.generation.set(c.generation.get().wrapping_add(1));
                for b in &c.blocks {
                    b.sched.wake_where(|w| matches!(w, Wait::Cluster(_)));
                }
            } else {
                c.arrived.set(arrived);
                let generation = c.generation.get();
                while c.generation.get() == generation {
                    t.block_on(Wait::Cluster(SourceLocation::from(location)));
                }
            }
        }
    });
    context::sync_threads(location);
}
