//! Thread-block clusters (compute capability 9.0): blocks launched together on one GPU
//! processing cluster, which can reach each other's shared memory, wait for each other
//! (`barrier.cluster`) and receive one tensor-memory-accelerator copy at once
//! ([`crate::tma::copy_2d_bytes`]'s multicast). A cluster's shape comes from the launch
//! (the host's cluster attribute), not from the kernel.
//!
//! The simulator runs clusters of one block: [`block_rank`] is 0, [`blocks`] 1, and the
//! cluster barrier is the block barrier.

/// This block's rank in its cluster (`%cluster_ctarank`).
#[pure_instruction("mov.u32 {o}, %cluster_ctarank;")]
#[inline(always)]
pub fn block_rank() -> u32 {
    0
}

/// The blocks of this block's cluster (`%cluster_nctarank`).
#[pure_instruction("mov.u32 {o}, %cluster_nctarank;")]
#[inline(always)]
pub fn blocks() -> u32 {
    1
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
    crate::thread::sync_threads();
}
