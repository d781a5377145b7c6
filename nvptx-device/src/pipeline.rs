//! Asynchronous global → shared copies (`cp.async`, sm_80+), as CUDA C's
//! `__pipeline_memcpy_async` / `__pipeline_commit` / `__pipeline_wait_prior`, and the L2
//! prefetch hint ([`prefetch_l2`]).
//!
//! A thread issues copies with [`cp_async_16`], closes the ones issued since the last close
//! into a *group* with [`commit_group`], and with [`wait_group::<N>`](wait_group) waits until
//! at most `N` of its groups are still in flight. The copied words are visible to the other
//! threads of the block only after that wait **and** a
//! [`sync_threads`](crate::thread::sync_threads): the usual multistage loop is "issue tile
//! `p + S − 1`, commit, compute on tile `p`, wait for all but `S − 2` groups, barrier".
//!
//! ```ignore
//! cp_async_16(tile, 4 * t, src.add(4 * t as usize)); // 16 bytes per thread
//! commit_group();
//! wait_group::<0>();
//! sync_threads();
//! ```
//!
//! In the simulator a copy is four immediate, checked shared stores (bounds, 16-byte
//! alignment, races against other threads' accesses since the last barrier), and
//! [`commit_group`] and [`wait_group`] do nothing: it checks where the copies land and that
//! no thread touches a stage another is filling, not that a thread waits before reading.

use crate::shared::{SharedSlice, SharedWord};

/// `#[zfill_copy("cp.async... [{d}], [{s}], BYTES, ig;", BYTES)]` on `unsafe fn name<T:
/// SharedWord>(dst: SharedSlice<T>, i: u32, src: *const T, full: bool) { body }`: on the GPU
/// the function is that `cp.async` of `BYTES` bytes from `src` to `dst[i..]` with the
/// `ignore-src` predicate `ig` set where not `full` (zeros written, nothing read); `body` is
/// the simulator's. (A predicate rather than a source size of `BYTES` or 0: `LDGSTS` takes
/// its zero fill as a predicate, and `ptxas` for sm_90 turned each size back into one with a
/// select and a compare of its own, four instructions a copy where the condition was
/// `a && b`; `bytes` stays in the rule for the simulator's documentation.)
macro_rules! zfill_copy {
    attr($ptx:literal, $bytes:literal) ($(#[$m:meta])* $vis:vis unsafe fn $name:ident<T: SharedWord>(
        $dst:ident: SharedSlice<T>, $i:ident: u32, $src:ident: *const T, $full:ident: bool $(,)?
    ) $body:block) => {
        $(#[$m])*
        $vis unsafe fn $name<T: SharedWord>($dst: SharedSlice<T>, $i: u32, $src: *const T, $full: bool) {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: the caller guarantees the bounds and alignment of `dst`, and of `src`
            // where it is read.
            unsafe {
                core::arch::asm!(
                    // One instruction a line, as the PTX's readers count them.
                    concat!("{{\n\t.reg .pred ig;\n\tsetp.eq.u32 ig, {f}, 0;\n\t", $ptx, "\n\t}}"),
                    d = in(reg32) $dst.shared_addr() + $i * 4, s = in(reg64) $src,
                    f = in(reg32) u32::from($full),
                    options(nostack, preserves_flags)
                );
                let _ = $bytes;
            }
            #[cfg(not(target_arch = "nvptx64"))]
            $body
        }
    };
}

/// Copies the 16 bytes at `src` to `dst[i..i + 4]` asynchronously
/// (`cp.async.cg.shared.global [dst], [src], 16;`: cached in L2 only, not in L1).
///
/// # Safety
/// `src` points to 4 readable words and is 16-byte aligned; `i + 4 <= dst.len()` and `i`
/// is a multiple of 4 (16-byte alignment); nothing writes `src` until the copy completes,
/// and no thread reads or writes `dst[i..i + 4]` until then ([`wait_group`] and a barrier).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn cp_async_16<T: SharedWord>(dst: SharedSlice<T>, i: u32, src: *const T) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller guarantees bounds and alignment of both addresses.
    unsafe {
        core::arch::asm!("cp.async.cg.shared.global [{d}], [{s}], 16;",
                         d = in(reg32) dst.shared_addr() + i * 4, s = in(reg64) src,
                         options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        assert!(
            (src as usize).is_multiple_of(16),
            "cp_async_16: unaligned source {src:p}"
        );
        // SAFETY: the caller guarantees 4 readable words; the store is checked.
        unsafe { dst.set4_unchecked(i, core::array::from_fn(|e| *src.add(e))) };
    }
}

/// [`cp_async_16`] that copies the 16 bytes at `src` if `full`, else writes 16 zero bytes
/// and reads nothing (`cp.async.cg.shared.global [dst], [src], 16, src_size;` with
/// `src_size` 16 or 0): how a tile that reaches past the edge of a matrix is padded with
/// zeros on the asynchronous path.
///
/// # Safety
/// As [`cp_async_16`] where `full`; otherwise `src` is any 16-byte aligned pointer (it is
/// not read) and only the conditions on `dst` apply.
#[zfill_copy("cp.async.cg.shared.global [{d}], [{s}], 16, ig;", 16)]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn cp_async_16_zfill<T: SharedWord>(
    dst: SharedSlice<T>, i: u32, src: *const T, full: bool,
) {
    if full {
        // SAFETY: the caller's contract for a full copy.
        unsafe { cp_async_16(dst, i, src) };
    } else {
        // SAFETY: the store is checked.
        unsafe { dst.set4_unchecked(i, [T::from_bits(0); 4]) };
    }
}

/// Copies the 8 bytes at `src` to `dst[i..i + 2]` asynchronously if `full`, else writes 8
/// zero bytes and reads nothing (`cp.async.ca.shared.global [dst], [src], 8, src_size;` with
/// `src_size` 8 or 0; cached in L1 too, as every copy under 16 bytes): the copy for rows
/// that are 8- but not 16-byte aligned (an even row length), half the instructions of
/// [`cp_async_4_zfill`].
///
/// # Safety
/// `i + 2 <= dst.len()` and `i` is even (8-byte alignment); where `full`, `src` is 8-byte
/// aligned and points to 2 readable words that nothing writes until the copy completes
/// (otherwise it is any 8-byte aligned pointer, not read); no thread reads or writes
/// `dst[i..i + 2]` until the copy completes ([`wait_group`] and a barrier).
#[zfill_copy("cp.async.ca.shared.global [{d}], [{s}], 8, ig;", 8)]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn cp_async_8_zfill<T: SharedWord>(
    dst: SharedSlice<T>, i: u32, src: *const T, full: bool,
) {
    assert!(i.is_multiple_of(2), "cp_async_8_zfill: odd word index {i}");
    let words = if full {
        assert!(
            (src as usize).is_multiple_of(8),
            "cp_async_8_zfill: source {src:p} not 8-byte aligned"
        );
        // SAFETY: the caller guarantees 2 readable words where `full`.
        unsafe { [*src, *src.add(1)] }
    } else {
        [T::from_bits(0); 2]
    };
    // The stores are checked.
    dst.set(i, words[0]);
    dst.set(i + 1, words[1]);
}

/// Copies the 4 bytes at `src` to `dst[i]` asynchronously if `full`, else writes 4 zero
/// bytes and reads nothing (`cp.async.ca.shared.global [dst], [src], 4, src_size;` with
/// `src_size` 4 or 0; a 4-byte copy is cached in L1 too, as the only kind allowed at that
/// size): the copy for rows that are not 16-byte aligned, one word at a time, padded with
/// zeros past the edge of a matrix.
///
/// # Safety
/// `i < dst.len()`; where `full`, `src` points to a readable word that nothing writes until
/// the copy completes (otherwise it is any word-aligned pointer, not read); no thread reads
/// or writes `dst[i]` until the copy completes ([`wait_group`] and a barrier).
#[zfill_copy("cp.async.ca.shared.global [{d}], [{s}], 4, ig;", 4)]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn cp_async_4_zfill<T: SharedWord>(
    dst: SharedSlice<T>, i: u32, src: *const T, full: bool,
) {
    // The store is checked.
    let word = if full {
        // SAFETY: the caller guarantees a readable word where `full`.
        unsafe { *src }
    } else {
        T::from_bits(0)
    };
    dst.set(i, word);
}

/// Closes this thread's copies issued since the last call into one group
/// (`cp.async.commit_group;`). A group may be empty.
#[inline(always)]
pub fn commit_group() {
    instruction!("cp.async.commit_group;");
}

/// Waits until at most `N` of this thread's committed groups are still in flight
/// (`cp.async.wait_group N;`); the rest have landed in shared memory. Other threads see
/// them after a following barrier. It is a compiler memory barrier: no shared access moves
/// across it.
#[inline(always)]
pub fn wait_group<const N: u32>() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: only waits; clobbers memory so that shared loads stay after it.
    unsafe {
        core::arch::asm!("cp.async.wait_group {n};", n = const N, options(nostack, preserves_flags));
    }
}

/// [`wait_group::<n>`](wait_group) for an `n` that is a constant only after inlining (an
/// expression of a kernel's const generics, which cannot be a const argument on stable
/// generics): one branch per value, all but one folded away. `n > 7` waits for all groups.
#[inline(always)]
pub fn wait_group_n(n: u32) {
    match n {
        0 => wait_group::<0>(),
        1 => wait_group::<1>(),
        2 => wait_group::<2>(),
        3 => wait_group::<3>(),
        4 => wait_group::<4>(),
        5 => wait_group::<5>(),
        6 => wait_group::<6>(),
        7 => wait_group::<7>(),
        _ => wait_group::<0>(),
    }
}

/// Asks L2 to fetch the line holding `src` (`prefetch.global.L2 [src];`): a hint that
/// nothing waits for and that reads nothing into the thread, so that a later read of that
/// line, by any SM, finds it in L2. Kernels whose blocks are too few per SM to keep DRAM
/// busy (the sliding scan) ask for the data a later block will read. In the simulator it
/// does nothing.
///
/// # Safety
/// `src` points into a global allocation.
#[inline(always)]
pub unsafe fn prefetch_l2<T>(src: *const T) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a hint about a global address the caller vouches for.
    unsafe {
        core::arch::asm!("prefetch.global.L2 [{s}];", s = in(reg64) src,
                         options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    let _ = src;
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;
    use crate::shared::dynamic_shared;
    use crate::thread::{sync_threads, thread_idx_x};
    use std::string::ToString;

    /// Eight floats 16-byte aligned, so that `SRC.0[1..]` is 4- and `SRC.0[2..]` 8-byte aligned.
    #[repr(C, align(16))]
    struct Src([f32; 8]);
    static SRC: Src = Src([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);

    /// One thread copying 8-byte pairs from `skip` floats into `SRC`: pair 0 copied, pair 1
    /// zero-filled; then every thread reads them back after the wait and barrier.
    fn pairs(skip: usize) -> Result<(), crate::sim::SimError> {
        crate::sim::one_block(32, 16, move || {
            let smem = dynamic_shared::<f32>();
            if thread_idx_x() == 0 {
                // SAFETY: 4 words of shared memory, `i` even; the source is read only where
                // full, inside SRC.
                unsafe {
                    cp_async_8_zfill(smem, 0, SRC.0.as_ptr().add(skip), true);
                    cp_async_8_zfill(smem, 2, SRC.0.as_ptr(), false);
                }
                commit_group();
                wait_group::<0>();
            }
            sync_threads();
            let got = [smem.get(0), smem.get(1), smem.get(2), smem.get(3)];
            let first = SRC.0[skip];
            assert_eq!(got, [first, first + 1.0, 0.0, 0.0]);
        })
    }

    #[test]
    fn an_8_byte_copy_copies_a_pair_or_zeros_and_needs_8_byte_alignment() {
        pairs(0).expect("aligned source");
        pairs(2).expect("8-byte aligned source");
        let e = pairs(1).expect_err("a 4-byte aligned source");
        assert!(e.to_string().contains("not 8-byte aligned"), "{e}");
    }
}
