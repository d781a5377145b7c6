//! Thread-block clusters (compute capability 9.0): blocks launched together on one GPU
//! processing cluster, which can reach each other's shared memory, wait for each other
//! (`barrier.cluster`) and receive one tensor-memory-accelerator copy at once
//! ([`crate::tma::copy_2d_bytes`]'s multicast). A cluster's shape comes from the launch
//! (the host's cluster attribute), not from the kernel.
//!
//! The simulator runs a cluster's blocks together on one host thread, their threads taking
//! turns ([`crate::sim`]), so that one block's wait for another's arrival, copy or barrier
//! completes, or is reported as a deadlock when nothing would complete it.

/// This block's rank in its cluster (`%cluster_ctarank`).
#[pure_instruction("mov.u32 {o}, %cluster_ctarank;")]
#[inline(always)]
pub fn block_rank() -> u32 {
    crate::sim::context::with(|t| t.rank)
}

/// The blocks of this block's cluster (`%cluster_nctarank`).
#[pure_instruction("mov.u32 {o}, %cluster_nctarank;")]
#[inline(always)]
pub fn blocks() -> u32 {
    crate::sim::context::with(|t| t.cluster.blocks.len() as u32)
}

/// Waits until every thread of every block of the cluster has arrived here
/// (`barrier.cluster.arrive.release` then `barrier.cluster.wait.acquire`): shared-memory
/// writes before it (barrier initialisations, say) are visible to the whole cluster after.
///
/// # Safety
/// Every non-exited thread of every block of the cluster reaches it, in the same order
/// relative to other cluster barriers.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn sync() {
    instruction!(
        "barrier.cluster.arrive.release.aligned;",
        "barrier.cluster.wait.acquire.aligned;"
    );
    #[cfg(not(target_arch = "nvptx64"))]
    crate::sim::cluster::sync(core::panic::Location::caller());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::{Launch, Limits};
    use crate::mbarrier::{Mbarrier, PipelineState, fence_init};
    use crate::shared::dynamic_shared;
    use crate::sim::SimError;
    use crate::thread::{Dim3, block_idx_x, thread_idx_x};
    use crate::tma::{ROW_BYTES, TILE_ALIGN, TensorMap, copy_2d_bytes};
    use crate::wgmma::{ROW_WORDS, sw128_index};
    use std::string::ToString;
    use std::sync::Mutex;
    use std::vec::Vec;

    /// Rows of a half tile: each block of a pair copies one half, multicast to both.
    const HALF: u32 = 8;
    const SLOTS: u32 = 2;
    const SLOT_BYTES: u32 = 2 * HALF * ROW_BYTES;

    fn clusters(grid: u32, cluster: u32, threads: u32, bytes: u32) -> Launch {
        Launch {
            cluster,
            ..Launch::new(Dim3::x(grid), Dim3::x(threads), bytes)
        }
    }

    /// A pair of blocks on a ring of `SLOTS` slots, `passes` times round: each block's thread
    /// 0 waits for its slot's `empty` phase (its consumer's release and its peer's), arms
    /// `full` for the whole slot and copies its half of the tile (rows `16 · pass + 8 · rank`
    /// of `m`), multicast to both blocks; each block's thread 32 waits for `full`, checks
    /// the slot and releases it in both blocks, unless `release_peer` is false.
    fn pair_ring(m: &[f32], passes: u32, release_peer: bool) -> Result<(), SimError> {
        let map = TensorMap::simulated(m.as_ptr(), m.len() as u32 / ROW_WORDS, ROW_WORDS, HALF);
        let cfg = clusters(4, 2, 64, TILE_ALIGN + SLOTS * SLOT_BYTES + 32);
        crate::sim::launch(&cfg, &Limits::HOPPER, || {
            let smem = dynamic_shared::<u32>().aligned_to(TILE_ALIGN);
            let bars = SLOTS * SLOT_BYTES / 4;
            let full = |s: u32| Mbarrier::new(smem, bars + 2 * s);
            let empty = |s: u32| Mbarrier::new(smem, bars + 2 * (SLOTS + s));
            let (t, rank) = (thread_idx_x(), block_rank());
            assert_eq!((blocks(), block_idx_x() % 2), (2, rank));
            if t == 0 {
                for s in 0..SLOTS {
                    // SAFETY: one thread, then the fence and the cluster barrier.
                    unsafe {
                        full(s).init_count(1);
                        empty(s).init_count(2);
                    }
                }
                fence_init();
            }
            // SAFETY: every thread of both blocks.
            unsafe { sync() };
            if t == 0 {
                let mut state = PipelineState::<SLOTS>::producer_start();
                for pass in 0..passes {
                    let (s, bar) = (state.index, full(state.index));
                    // SAFETY: both consumers released the slot in this block, and so in the
                    // peer, before this copy lands in it; the phase expects the whole slot.
                    unsafe {
                        empty(s).wait(state.empty_parity());
                        bar.expect_tx(SLOT_BYTES);
                        let at = s * SLOT_BYTES + rank * HALF * ROW_BYTES;
                        copy_2d_bytes(smem, at, &map, 0, (2 * pass + rank) * HALF, &bar, 0b11);
                    }
                    state.advance();
                }
            } else if t == 32 {
                let mut state = PipelineState::<SLOTS>::consumer_start();
                for pass in 0..passes {
                    let s = state.index;
                    // SAFETY: the slot is full once the phase completes; released after.
                    unsafe {
                        full(s).wait(state.phase);
                        for r in 0..2 * HALF {
                            let at = (s * SLOT_BYTES) / 4 + (r / HALF) * HALF * ROW_WORDS;
                            let v = f32::from_bits(smem.get(at + sw128_index(r % HALF, 3)));
                            let row = 2 * pass * HALF + r;
                            assert_eq!(v, m[(row * ROW_WORDS + 3) as usize], "row {row}");
                        }
                        empty(s).arrive_cluster(rank);
                        if release_peer {
                            empty(s).arrive_cluster(rank ^ 1);
                        }
                    }
                    state.advance();
                }
            }
        })
    }

    fn matrix(rows: u32) -> Vec<f32> {
        (0..rows * ROW_WORDS).map(|i| i as f32).collect()
    }

    #[test]
    fn a_pair_shares_multicast_halves_through_remote_releases() {
        pair_ring(&matrix(5 * 2 * HALF), 5, true).unwrap();
    }

    #[test]
    fn a_release_missing_in_the_peer_is_a_deadlock() {
        let err = pair_ring(&matrix(5 * 2 * HALF), 5, false).unwrap_err();
        assert!(
            matches!(err, SimError::Deadlock { .. }) && err.to_string().contains("mbarrier"),
            "{err}"
        );
    }

    #[test]
    fn ranks_follow_x_and_the_barrier_waits_for_the_whole_cluster() {
        let seen = Mutex::new(Vec::new());
        let order = Mutex::new(Vec::new());
        let cfg = clusters(6, 3, 32, 0);
        crate::sim::launch(&cfg, &Limits::HOPPER, || {
            if thread_idx_x() == 0 {
                seen.lock()
                    .unwrap()
                    .push((block_idx_x(), block_rank(), blocks()));
                order.lock().unwrap().push((block_idx_x() / 3, 0));
            }
            // SAFETY: every thread of the cluster.
            unsafe { sync() };
            if thread_idx_x() == 0 {
                order.lock().unwrap().push((block_idx_x() / 3, 1));
            }
        })
        .unwrap();
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        let expected: Vec<_> = (0..6).map(|b| (b, b % 3, 3)).collect();
        assert_eq!(seen, expected);
        // In each cluster, every block's arrival comes before any block goes on.
        let order = order.into_inner().unwrap();
        for c in 0..2 {
            let steps: Vec<_> = order.iter().filter(|o| o.0 == c).map(|o| o.1).collect();
            assert_eq!(steps, [0, 0, 0, 1, 1, 1], "cluster {c}");
        }
    }

    #[test]
    fn a_block_missing_the_cluster_barrier_is_a_deadlock_and_a_panic_stops_the_pair() {
        let cfg = clusters(2, 2, 32, 0);
        let err = crate::sim::launch(&cfg, &Limits::HOPPER, || {
            if block_rank() == 0 {
                // SAFETY: deliberately broken: rank 1 never arrives.
                unsafe { sync() };
            }
        })
        .unwrap_err();
        assert!(
            matches!(err, SimError::Deadlock { .. }) && err.to_string().contains("barrier.cluster"),
            "{err}"
        );
        // The block that panics is reported, not its peer's wait for it.
        let err = crate::sim::launch(&cfg, &Limits::HOPPER, || {
            if block_rank() == 1 {
                panic!("rank 1 fails");
            }
            // SAFETY: deliberately broken, as above.
            unsafe { sync() };
        })
        .unwrap_err();
        assert!(err.to_string().contains("rank 1 fails"), "{err}");
    }

    #[test]
    fn a_multicast_past_the_cluster_and_a_grid_of_broken_clusters_are_refused() {
        let m = matrix(HALF);
        let map = TensorMap::simulated(m.as_ptr(), HALF, ROW_WORDS, HALF);
        let cfg = clusters(2, 2, 32, TILE_ALIGN + HALF * ROW_BYTES + 8);
        let err = crate::sim::launch(&cfg, &Limits::HOPPER, || {
            let smem = dynamic_shared::<u32>().aligned_to(TILE_ALIGN);
            let bar = Mbarrier::new(smem, HALF * ROW_WORDS);
            if thread_idx_x() == 0 {
                // SAFETY: deliberately broken: rank 2 of a pair.
                unsafe {
                    bar.init_count(1);
                    fence_init();
                    bar.expect_tx(HALF * ROW_BYTES);
                    copy_2d_bytes(smem, 0, &map, 0, 0, &bar, 0b101);
                }
            }
        })
        .unwrap_err();
        assert!(err.to_string().contains("cluster of 2 blocks"), "{err}");
        let odd = clusters(3, 2, 32, 0);
        let err = crate::sim::launch(&odd, &Limits::HOPPER, || {}).unwrap_err();
        assert!(
            matches!(
                err,
                SimError::Limit(crate::launch::LimitError::Cluster { .. })
            ),
            "{err}"
        );
    }
}
