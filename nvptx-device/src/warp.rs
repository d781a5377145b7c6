//! Warp-level primitives: lane index, register shuffles and ballots.
//!
//! On the GPU each function is one `shfl.sync` / special-register read. In the simulator the
//! lanes named in `mask` meet, exchange values, and go on; a lane missing from the exchange
//! is reported instead of hanging.

use crate::shared::SharedWord;

/// Threads per warp.
pub const WARP_SIZE: u32 = 32;
/// Every lane of the warp.
pub const FULL_MASK: u32 = u32::MAX;

#[cfg(target_arch = "nvptx64")]
mod backend {
    use core::arch::asm;

    #[inline(always)]
    pub fn lane_id() -> u32 {
        let lane: u32;
        // SAFETY: reads a special register.
        unsafe {
            asm!("mov.u32 {l}, %laneid;", l = out(reg32) lane, options(pure, nomem, nostack, preserves_flags))
        };
        lane
    }

    /// `shfl.sync.$mode.b32` of `bits` among the lanes of `mask`, from the source lane that
    /// `$b` selects; the clamp value `$c` (`0x1f`: the last lane, `0`: lane 0) bounds it, and
    /// a lane whose source is out of range gets its own value.
    macro_rules! shfl_sync {
        ($mode:literal, $c:literal, $mask:expr, $bits:expr, $b:expr) => {{
            let out: u32;
            // SAFETY: `shfl.sync` with the caller's member mask, on registers only.
            unsafe {
                core::arch::asm!(
                    concat!("shfl.sync.", $mode, ".b32 {o}, {v}, {b}, ", $c, ", {m};"),
                    o = out(reg32) out, v = in(reg32) $bits, b = in(reg32) $b,
                    m = in(reg32) $mask, options(nomem, nostack, preserves_flags),
                );
            }
            out
        }};
    }

    pub(super) use shfl_sync;

    #[inline(always)]
    pub fn ballot(mask: u32, predicate: u32) -> u32 {
        let out: u32;
        // SAFETY: `vote.sync` with the caller's member mask.
        unsafe {
            asm!("{{ .reg .pred p; setp.ne.u32 p, {v}, 0; vote.sync.ballot.b32 {o}, p, {m}; }}",
                 o = out(reg32) out, v = in(reg32) predicate, m = in(reg32) mask,
                 options(nomem, nostack, preserves_flags));
        }
        out
    }
}

#[cfg(not(target_arch = "nvptx64"))]
mod backend {
    use crate::sim::warp;
    pub(super) use crate::sim::warp::{Mode, shuffle};

    pub fn lane_id() -> u32 {
        crate::sim::context::with(|t| t.linear % super::WARP_SIZE)
    }

    #[track_caller]
    pub fn ballot(mask: u32, predicate: u32) -> u32 {
        warp::shuffle(mask, predicate, Mode::Ballot)
    }
}

/// This thread's lane in its warp (`%laneid`).
#[inline(always)]
pub fn lane_id() -> u32 {
    backend::lane_id()
}

/// The shuffles, one line each: `name(arg)` is `unsafe fn name<T>(mask, value: T, arg: u32)
/// -> T`, `shfl.sync` in mode `$mode` with clamp `$c` on the GPU (see the backend's
/// `shfl_sync!`), the simulator's exchange in [`Mode`](crate::sim::warp::Mode) `$sim`.
macro_rules! shuffles {
    ($($(#[$m:meta])* $name:ident($arg:ident): $mode:literal, $c:literal, $sim:ident;)*) => {$(
        $(#[$m])*
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name<T: SharedWord>(mask: u32, value: T, $arg: u32) -> T {
            #[cfg(target_arch = "nvptx64")]
            let bits = backend::shfl_sync!($mode, $c, mask, value.to_bits(), $arg);
            #[cfg(not(target_arch = "nvptx64"))]
            let bits = backend::shuffle(mask, value.to_bits(), backend::Mode::$sim($arg));
            T::from_bits(bits)
        }
    )*};
}

shuffles! {
    /// `__shfl_down_sync(mask, value, delta)`: the value of lane `lane_id() + delta`, or this
    /// lane's own value where that is past the last lane.
    ///
    /// # Safety
    /// The calling lane is in `mask`, and every lane in `mask` executes the same shuffle
    /// (PTX: the behaviour of `shfl.sync` is undefined otherwise). The simulator reports a
    /// lane that is missing or not in the mask instead of hanging.
    shuffle_down(delta): "down", "0x1f", Down;
    /// `__shfl_up_sync(mask, value, delta)`: the value of lane `lane_id() - delta`, or this
    /// lane's own value where that is before lane 0.
    ///
    /// # Safety
    /// As [`shuffle_down`].
    shuffle_up(delta): "up", "0", Up;
    /// `__shfl_xor_sync(mask, value, lane_mask)`: the value of lane `lane_id() ^ lane_mask`.
    ///
    /// # Safety
    /// As [`shuffle_down`]: the calling lane is in `mask`, and every lane in `mask` executes
    /// the same shuffle.
    shuffle_xor(lane_mask): "bfly", "0x1f", Xor;
    /// `__shfl_sync(mask, value, src_lane)`: the value of lane `src_lane % 32`, or this lane's
    /// own value where that lane is not in `mask`.
    ///
    /// # Safety
    /// As [`shuffle_down`]: the calling lane is in `mask`, and every lane in `mask` executes
    /// the same shuffle.
    shuffle_idx(src_lane): "idx", "0x1f", Idx;
}

/// `__ballot_sync(mask, predicate)` (`vote.sync.ballot.b32`): bit `l` is set for every lane
/// `l` of `mask` whose `predicate` is true.
///
/// # Safety
/// As [`shuffle_down`]: the calling lane is in `mask`, and every lane in `mask` executes
/// the same ballot.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn ballot(mask: u32, predicate: bool) -> u32 {
    backend::ballot(mask, predicate as u32)
}

/// The sum of `value` over the 32 lanes of a full warp, in every lane (butterfly).
///
/// # Safety
/// All 32 lanes of the warp call it together (it shuffles with [`FULL_MASK`]).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn sum_f32(mut value: f32) -> f32 {
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        // SAFETY: the caller's contract: every lane of the full mask is here.
        value += unsafe { shuffle_xor(FULL_MASK, value, offset) };
        offset /= 2;
    }
    value
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;
    use crate::launch::{Launch, Limits};
    use crate::thread::{Dim3, thread_idx_x};
    use std::sync::Mutex;

    #[test]
    fn shuffle_idx_reads_the_named_lane_modulo_32() {
        let cfg = Launch {
            grid: Dim3::x(1),
            block: Dim3::x(64),
            dynamic_shared_bytes: 0,
            cluster: 1,
        };
        let got = Mutex::new([0u32; 64]);
        crate::sim::launch(&cfg, &Limits::default(), || {
            let t = thread_idx_x();
            let lane = lane_id();
            // Sources past 31 wrap; each warp reads its own lanes.
            // SAFETY: every lane of both full warps shuffles.
            let v = unsafe { shuffle_idx(FULL_MASK, 1000 * (t / 32) + lane, 7 * lane + 35) };
            got.lock().unwrap()[t as usize] = v;
        })
        .unwrap();
        let got = got.into_inner().unwrap();
        for t in 0..64u32 {
            let lane = t % 32;
            assert_eq!(
                got[t as usize],
                1000 * (t / 32) + (7 * lane + 35) % 32,
                "thread {t}"
            );
        }
    }
}
