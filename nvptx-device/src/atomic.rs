//! Global-memory atomics and ordered loads and stores, for blocks that hand values to one
//! another within a launch (a ticket counter, a chained scan's published prefixes).
//!
//! On the GPU each function is one PTX instruction at `.gpu` scope: `atom.global.add`
//! (relaxed or acquire-release), `ld.acquire`, `st.release`, `ld.relaxed`, `st.relaxed`. In
//! the simulator they are the host's atomics on the same addresses with the same orderings.
//!
//! [`store_pair_relaxed_if`] and [`load_pair_relaxed`] move two words with one vector
//! instruction; the memory model treats it as one relaxed access per word, so a reader may
//! see one word written and the other not: a record whose words each say whether they have
//! been written needs no fence. Loads that poll another block's writes should be strong
//! (`.relaxed` or `.acquire`): the memory model lets the compiler assume that no other
//! thread changes what a weak load (`ld.global.cg`, say) reads, and on an H100 a scan that
//! polled with `ld.global.cg` did not finish (unless its polling loop also slept).
//!
//! A store with [`store_release_u64`] makes every earlier write of the thread visible to a
//! thread whose [`load_acquire_u64`] reads the stored value: publish data with relaxed
//! stores, then a flag with a release store; read the flag with an acquire load, then the
//! data with relaxed loads.

#[cfg(target_arch = "nvptx64")]
mod backend {
    use core::arch::asm;

    /// `atom.$sem.gpu.global.add.u32` of `$v` at `$ptr`: the old value.
    macro_rules! atom_add_u32 {
        ($sem:literal, $ptr:expr, $v:expr) => {{
            let old: u32;
            // SAFETY: the caller guarantees a valid, aligned global address.
            unsafe {
                asm!(concat!("atom.", $sem, ".gpu.global.add.u32 {o}, [{p}], {v};"),
                     o = out(reg32) old, p = in(reg64) $ptr, v = in(reg32) $v,
                     options(nostack, preserves_flags))
            };
            old
        }};
    }

    #[inline(always)]
    pub unsafe fn fetch_add_u32(ptr: *mut u32, v: u32) -> u32 {
        atom_add_u32!("relaxed", ptr, v)
    }

    #[inline(always)]
    pub unsafe fn fetch_add_acq_rel_u32(ptr: *mut u32, v: u32) -> u32 {
        atom_add_u32!("acq_rel", ptr, v)
    }

    /// `ld.$sem.gpu.global.u64` from `$ptr`.
    macro_rules! ld_u64 {
        ($sem:literal, $ptr:expr) => {{
            let v: u64;
            // SAFETY: the caller guarantees a valid, aligned global address.
            unsafe {
                asm!(concat!("ld.", $sem, ".gpu.global.u64 {v}, [{p}];"), v = out(reg64) v,
                     p = in(reg64) $ptr, options(nostack, preserves_flags))
            };
            v
        }};
    }

    /// `st.$sem.gpu.global.u64` of `$v` to `$ptr`.
    macro_rules! st_u64 {
        ($sem:literal, $ptr:expr, $v:expr) => {
            // SAFETY: the caller guarantees a valid, aligned global address.
            unsafe {
                asm!(concat!("st.", $sem, ".gpu.global.u64 [{p}], {v};"), p = in(reg64) $ptr,
                     v = in(reg64) $v, options(nostack, preserves_flags))
            }
        };
    }

    #[inline(always)]
    pub unsafe fn load_acquire_u64(ptr: *const u64) -> u64 {
        ld_u64!("acquire", ptr)
    }

    #[inline(always)]
    pub unsafe fn load_relaxed_u64(ptr: *const u64) -> u64 {
        ld_u64!("relaxed", ptr)
    }

    #[inline(always)]
    pub unsafe fn store_release_u64(ptr: *mut u64, v: u64) {
        st_u64!("release", ptr, v)
    }

    #[inline(always)]
    pub unsafe fn store_relaxed_u64(ptr: *mut u64, v: u64) {
        st_u64!("relaxed", ptr, v)
    }
}

#[cfg(target_arch = "nvptx64")]
mod pair {
    use core::arch::asm;

    #[inline(always)]
    pub unsafe fn store_pair_relaxed_if(write: bool, ptr: *mut u64, v: [u64; 2]) {
        // SAFETY: the caller guarantees a valid, 16-byte-aligned global address where `write`.
        unsafe {
            asm!("{{ .reg .pred w; setp.ne.u32 w, {c}, 0; @w st.relaxed.gpu.global.v2.u64 [{p}], {{{a}, {b}}}; }}",
                 c = in(reg32) write as u32, p = in(reg64) ptr, a = in(reg64) v[0],
                 b = in(reg64) v[1], options(nostack, preserves_flags))
        };
    }

    #[inline(always)]
    pub unsafe fn store_relaxed_u64_if(write: bool, ptr: *mut u64, v: u64) {
        // SAFETY: the caller guarantees a valid, 8-byte-aligned global address where `write`.
        unsafe {
            asm!("{{ .reg .pred w; setp.ne.u32 w, {c}, 0; @w st.relaxed.gpu.global.u64 [{p}], {v}; }}",
                 c = in(reg32) write as u32, p = in(reg64) ptr, v = in(reg64) v,
                 options(nostack, preserves_flags))
        };
    }

    #[inline(always)]
    pub unsafe fn load_pair_relaxed(ptr: *const u64) -> [u64; 2] {
        let (a, b): (u64, u64);
        // SAFETY: as above.
        unsafe {
            asm!("ld.relaxed.gpu.global.v2.u64 {{{a}, {b}}}, [{p}];", p = in(reg64) ptr,
                 a = out(reg64) a, b = out(reg64) b, options(nostack, preserves_flags))
        };
        [a, b]
    }
}

#[cfg(not(target_arch = "nvptx64"))]
mod pair {
    use core::sync::atomic::{AtomicU64, Ordering};

    // Word by word, as the GPU's vector accesses are.
    pub unsafe fn store_pair_relaxed_if(write: bool, ptr: *mut u64, v: [u64; 2]) {
        // SAFETY: the caller guarantees a valid, aligned address accessed only through
        // these functions while the launch runs.
        unsafe {
            store_relaxed_u64_if(write, ptr, v[0]);
            store_relaxed_u64_if(write, ptr.add(1), v[1]);
        }
    }

    pub unsafe fn store_relaxed_u64_if(write: bool, ptr: *mut u64, v: u64) {
        if write {
            // SAFETY: as above.
            unsafe { AtomicU64::from_ptr(ptr).store(v, Ordering::Relaxed) };
        }
    }

    pub unsafe fn load_pair_relaxed(ptr: *const u64) -> [u64; 2] {
        // SAFETY: as above.
        unsafe {
            [
                AtomicU64::from_ptr(ptr as *mut u64).load(Ordering::Relaxed),
                AtomicU64::from_ptr(ptr.add(1) as *mut u64).load(Ordering::Relaxed),
            ]
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
mod backend {
    use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

    pub unsafe fn fetch_add_u32(ptr: *mut u32, v: u32) -> u32 {
        // SAFETY: the caller guarantees a valid, aligned address, accessed only atomically
        // while the launch runs.
        unsafe { AtomicU32::from_ptr(ptr) }.fetch_add(v, Ordering::Relaxed)
    }

    pub unsafe fn fetch_add_acq_rel_u32(ptr: *mut u32, v: u32) -> u32 {
        // SAFETY: as above.
        unsafe { AtomicU32::from_ptr(ptr) }.fetch_add(v, Ordering::AcqRel)
    }

    pub unsafe fn load_acquire_u64(ptr: *const u64) -> u64 {
        // SAFETY: as above.
        unsafe { AtomicU64::from_ptr(ptr as *mut u64) }.load(Ordering::Acquire)
    }

    pub unsafe fn load_relaxed_u64(ptr: *const u64) -> u64 {
        // SAFETY: as above.
        unsafe { AtomicU64::from_ptr(ptr as *mut u64) }.load(Ordering::Relaxed)
    }

    pub unsafe fn store_release_u64(ptr: *mut u64, v: u64) {
        // SAFETY: as above.
        unsafe { AtomicU64::from_ptr(ptr) }.store(v, Ordering::Release)
    }

    pub unsafe fn store_relaxed_u64(ptr: *mut u64, v: u64) {
        // SAFETY: as above.
        unsafe { AtomicU64::from_ptr(ptr) }.store(v, Ordering::Relaxed)
    }
}

/// `atomicAdd(ptr, v)` (`atom.relaxed.gpu.global.add.u32`): adds `v` to `*ptr` and returns
/// the old value. Relaxed: it orders nothing else.
///
/// # Safety
/// `ptr` is a 4-byte-aligned global address that every thread of the launch accesses only
/// through these functions while it runs.
#[inline(always)]
pub unsafe fn fetch_add_u32(ptr: *mut u32, v: u32) -> u32 {
    // SAFETY: forwarded contract.
    unsafe { backend::fetch_add_u32(ptr, v) }
}

/// `atom.acq_rel.gpu.global.add.u32`: [`fetch_add_u32`] that also releases the thread's
/// earlier writes (and, through a barrier before it, its block's) and acquires those
/// released by the additions it reads after: the last of several blocks to add sees what
/// each of the others wrote before its addition.
///
/// # Safety
/// As [`fetch_add_u32`].
#[inline(always)]
pub unsafe fn fetch_add_acq_rel_u32(ptr: *mut u32, v: u32) -> u32 {
    // SAFETY: forwarded contract.
    unsafe { backend::fetch_add_acq_rel_u32(ptr, v) }
}

/// `ld.acquire.gpu.global.u64`: reads `*ptr`; the thread's later reads see everything the
/// writer wrote before its [`store_release_u64`] of the value read.
///
/// # Safety
/// As [`fetch_add_u32`], 8-byte aligned.
#[inline(always)]
pub unsafe fn load_acquire_u64(ptr: *const u64) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { backend::load_acquire_u64(ptr) }
}

/// `ld.relaxed.gpu.global.u64`: reads `*ptr` coherently at GPU scope (never a stale L1
/// copy), ordering nothing else.
///
/// # Safety
/// As [`load_acquire_u64`].
#[inline(always)]
pub unsafe fn load_relaxed_u64(ptr: *const u64) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { backend::load_relaxed_u64(ptr) }
}

/// `st.release.gpu.global.u64`: writes `*ptr` after every earlier write of this thread is
/// visible at GPU scope.
///
/// # Safety
/// As [`load_acquire_u64`].
#[inline(always)]
pub unsafe fn store_release_u64(ptr: *mut u64, v: u64) {
    // SAFETY: forwarded contract.
    unsafe { backend::store_release_u64(ptr, v) }
}

/// `st.relaxed.gpu.global.u64`: writes `*ptr` at GPU scope, ordering nothing else.
///
/// # Safety
/// As [`load_acquire_u64`].
#[inline(always)]
pub unsafe fn store_relaxed_u64(ptr: *mut u64, v: u64) {
    // SAFETY: forwarded contract.
    unsafe { backend::store_relaxed_u64(ptr, v) }
}

/// [`store_relaxed_u64`] where `write`, else nothing, as one predicated store rather than a
/// branch: a store by one thread just before code with barriers stays out of a branch that
/// the compiler could grow to hold that code, duplicated for the one thread and the others
/// (barriers reached at two places by one warp hang the block).
///
/// # Safety
/// As [`store_relaxed_u64`] where `write`.
#[inline(always)]
pub unsafe fn store_relaxed_u64_if(write: bool, ptr: *mut u64, v: u64) {
    // SAFETY: forwarded contract.
    unsafe { pair::store_relaxed_u64_if(write, ptr, v) }
}

/// Writes `v` to `ptr[0..2]` with one vector instruction (`st.relaxed.gpu.global.v2.u64`)
/// where `write`, predicated as [`store_relaxed_u64_if`]. Each word is its own relaxed
/// store: see the [module](self) on what readers may assume.
///
/// # Safety
/// `ptr` is a 16-byte-aligned global address of two words that every thread of the launch
/// accesses only through these functions while it runs.
#[inline(always)]
pub unsafe fn store_pair_relaxed_if(write: bool, ptr: *mut u64, v: [u64; 2]) {
    // SAFETY: forwarded contract.
    unsafe { pair::store_pair_relaxed_if(write, ptr, v) }
}

/// Reads `ptr[0..2]` with one vector instruction (`ld.relaxed.gpu.global.v2.u64`), each word
/// a relaxed load.
///
/// # Safety
/// As [`store_pair_relaxed_if`].
#[inline(always)]
pub unsafe fn load_pair_relaxed(ptr: *const u64) -> [u64; 2] {
    // SAFETY: forwarded contract.
    unsafe { pair::load_pair_relaxed(ptr) }
}
