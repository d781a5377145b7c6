//! Thread and block indices, dimensions, and the block barrier.
//!
//! On the GPU each function is one read of a PTX special register (`%tid`, `%ctaid`,
//! `%ntid`, `%nctaid`) or one `bar.sync 0`. In the simulator they read the calling host
//! thread's coordinates and wait on its block's barrier.

/// A 3-component extent or index, like CUDA's `dim3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Dim3 {
    /// The fastest-varying component (`.x`).
    pub x: u32,
    /// The middle component (`.y`).
    pub y: u32,
    /// The slowest-varying component (`.z`).
    pub z: u32,
}

impl Dim3 {
    /// `(x, 1, 1)`.
    pub const fn x(x: u32) -> Self {
        Self { x, y: 1, z: 1 }
    }
    /// `(x, y, 1)`.
    pub const fn xy(x: u32, y: u32) -> Self {
        Self { x, y, z: 1 }
    }
    /// `(x, y, z)`.
    pub const fn xyz(x: u32, y: u32, z: u32) -> Self {
        Self { x, y, z }
    }
    /// `x * y * z`, widened so that it cannot overflow.
    pub const fn volume(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

impl core::fmt::Display for Dim3 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "({}, {}, {})", self.x, self.y, self.z)
    }
}

#[cfg(target_arch = "nvptx64")]
mod backend {
    use core::arch::nvptx;

    macro_rules! special_registers {
        ($($(#[$m:meta])* $name:ident => $intrinsic:ident;)*) => {$(
            $(#[$m])*
            #[inline(always)]
            pub fn $name() -> u32 {
                // SAFETY: reading a special register has no preconditions inside a kernel.
                unsafe { nvptx::$intrinsic() as u32 }
            }
        )*};
    }

    special_registers! {
        thread_idx_x => _thread_idx_x; thread_idx_y => _thread_idx_y; thread_idx_z => _thread_idx_z;
        block_idx_x => _block_idx_x; block_idx_y => _block_idx_y; block_idx_z => _block_idx_z;
        block_dim_x => _block_dim_x; block_dim_y => _block_dim_y; block_dim_z => _block_dim_z;
        grid_dim_x => _grid_dim_x; grid_dim_y => _grid_dim_y; grid_dim_z => _grid_dim_z;
    }

    #[inline(always)]
    pub fn sync_threads() {
        // SAFETY: `bar.sync 0`; the caller must reach it from every thread of the block,
        // which the simulator checks.
        unsafe { nvptx::_syncthreads() }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
mod backend {
    use crate::sim::context;

    macro_rules! coordinates {
        ($($name:ident => $field:ident . $c:ident;)*) => {$(
            #[inline]
            pub fn $name() -> u32 {
                context::with(|t| t.$field.$c)
            }
        )*};
    }

    coordinates! {
        thread_idx_x => thread_idx.x; thread_idx_y => thread_idx.y; thread_idx_z => thread_idx.z;
        block_idx_x => block_idx.x; block_idx_y => block_idx.y; block_idx_z => block_idx.z;
        block_dim_x => block_dim.x; block_dim_y => block_dim.y; block_dim_z => block_dim.z;
        grid_dim_x => grid_dim.x; grid_dim_y => grid_dim.y; grid_dim_z => grid_dim.z;
    }

    #[track_caller]
    pub fn sync_threads() {
        context::sync_threads(core::panic::Location::caller());
    }
}

/// `threadIdx.x`.
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    backend::thread_idx_x()
}
/// `threadIdx.y`.
#[inline(always)]
pub fn thread_idx_y() -> u32 {
    backend::thread_idx_y()
}
/// `threadIdx.z`.
#[inline(always)]
pub fn thread_idx_z() -> u32 {
    backend::thread_idx_z()
}
/// `blockIdx.x`.
#[inline(always)]
pub fn block_idx_x() -> u32 {
    backend::block_idx_x()
}
/// `blockIdx.y`.
#[inline(always)]
pub fn block_idx_y() -> u32 {
    backend::block_idx_y()
}
/// `blockIdx.z`.
#[inline(always)]
pub fn block_idx_z() -> u32 {
    backend::block_idx_z()
}
/// `blockDim.x`.
#[inline(always)]
pub fn block_dim_x() -> u32 {
    backend::block_dim_x()
}
/// `blockDim.y`.
#[inline(always)]
pub fn block_dim_y() -> u32 {
    backend::block_dim_y()
}
/// `blockDim.z`.
#[inline(always)]
pub fn block_dim_z() -> u32 {
    backend::block_dim_z()
}
/// `gridDim.x`.
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    backend::grid_dim_x()
}
/// `gridDim.y`.
#[inline(always)]
pub fn grid_dim_y() -> u32 {
    backend::grid_dim_y()
}
/// `gridDim.z`.
#[inline(always)]
pub fn grid_dim_z() -> u32 {
    backend::grid_dim_z()
}

/// `threadIdx` as a [`Dim3`].
#[inline(always)]
pub fn thread_idx() -> Dim3 {
    Dim3::xyz(thread_idx_x(), thread_idx_y(), thread_idx_z())
}
/// `blockIdx` as a [`Dim3`].
#[inline(always)]
pub fn block_idx() -> Dim3 {
    Dim3::xyz(block_idx_x(), block_idx_y(), block_idx_z())
}
/// `blockDim` as a [`Dim3`].
#[inline(always)]
pub fn block_dim() -> Dim3 {
    Dim3::xyz(block_dim_x(), block_dim_y(), block_dim_z())
}

/// The global x index `blockIdx.x * blockDim.x + threadIdx.x`.
#[inline(always)]
pub fn index_1d() -> u32 {
    block_idx_x() * block_dim_x() + thread_idx_x()
}

/// The global `(x, y)` index of a 2D launch, as cuda_std's `index_2d`:
/// `(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y)`.
#[inline(always)]
pub fn index_2d() -> (u32, u32) {
    (
        block_idx_x() * block_dim_x() + thread_idx_x(),
        block_idx_y() * block_dim_y() + thread_idx_y(),
    )
}

/// The global `(row, column)` of a 2D launch over a row-major matrix, x over columns:
/// [`index_2d`] as `(y, x)`.
#[inline(always)]
pub fn row_col() -> (u32, u32) {
    (
        block_idx_y() * block_dim_y() + thread_idx_y(),
        block_idx_x() * block_dim_x() + thread_idx_x(),
    )
}

/// `__syncthreads()`: waits until every thread of the block has reached this barrier, and
/// makes their shared- and global-memory writes before it visible to the block after it.
///
/// Every thread of the block must reach the same barrier; the simulator reports a barrier
/// in a divergent branch, or one that a thread skipped by returning early.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads() {
    backend::sync_threads()
}

/// Named barriers a block has (`bar.sync` takes ids `0..16`; 0 is [`sync_threads`]'s).
pub const NAMED_BARRIERS: u32 = 16;

/// `bar.sync id, threads`: waits until `threads` threads (a multiple of 32) have reached
/// barrier `id` of the block, and makes their shared- and global-memory writes before it
/// visible to each other after it. A group of warps meets this way without the rest of the
/// block (a warpgroup, say, with its own id).
///
/// In the simulator a phase completes with its `threads`-th arrival; it reports an `id`
/// out of range, a count that is not a multiple of 32 or exceeds the block, arrivals of one
/// phase that name different counts, and a wait that no arrival completes (a deadlock).
///
/// # Safety
/// Every thread of a phase names the same `threads`, and the warps that meet there arrive
/// whole and converged: `bar.sync` is `barrier.sync.aligned`, which a warp must reach at
/// one instruction. LLVM does not know inline assembly to be convergent, and may copy it
/// into both arms of a branch just before it on one lane's condition (a leader's extra
/// work), which hangs the GPU; keep such branches after the barrier, not before. (The form
/// without `.aligned` tolerates that, but made rung 17's epilogue 20% slower.) `id` is not
/// used meanwhile by other threads.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn sync_named(id: u32, threads: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!("bar.sync {i}, {n};", i = in(reg32) id, n = in(reg32) threads,
                         options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    crate::sim::context::sync_named(id, threads, core::panic::Location::caller());
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;
    use crate::shared::dynamic_shared;
    use std::string::ToString;

    /// One block of 128 threads, 128 words of shared memory.
    fn launch(kernel: impl Fn() + Sync) -> Result<(), crate::sim::SimError> {
        crate::sim::one_block(128, 512, kernel)
    }

    #[test]
    fn two_groups_meet_at_their_own_barriers_and_see_each_others_writes() {
        // Each half of the block passes words around its 64 threads three times, meeting
        // at its own id; a missing meeting would be a race.
        launch(|| {
            let words = dynamic_shared::<u32>();
            let t = thread_idx_x();
            let (group, i) = (t / 64, t % 64);
            for round in 0..3u32 {
                words.set(t, 1000 * round + t);
                // SAFETY: the 64 threads of this half, whole warps, the same count.
                unsafe { sync_named(1 + group, 64) };
                let from = 64 * group + (i + 1 + round) % 64;
                assert_eq!(words.get(from), 1000 * round + from);
                // SAFETY: as above.
                unsafe { sync_named(1 + group, 64) };
            }
        })
        .unwrap();
    }

    #[test]
    fn a_barrier_short_of_arrivals_is_a_deadlock() {
        let err = launch(|| {
            if thread_idx_x() < 96 {
                // SAFETY: deliberately broken: 96 threads of the 128 named (reported).
                unsafe { sync_named(3, 128) };
            }
        })
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("bar.sync 3, 128, which 96 threads have reached"),
            "{text}"
        );
    }

    #[test]
    fn arrivals_naming_different_counts_are_an_error() {
        let err = launch(|| {
            let threads = if thread_idx_x() < 64 { 128 } else { 64 };
            // SAFETY: deliberately broken: two counts in one phase (reported).
            unsafe { sync_named(2, threads) };
        })
        .unwrap_err();
        assert!(err.to_string().contains("first arrival named 128"), "{err}");
    }
}
