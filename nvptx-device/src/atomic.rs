//! Global-memory atomics and ordered loads and stores, for blocks that hand values to one
//! another within a launch (a ticket counter, a chained scan's published prefixes).
//!
//! On the GPU each function is one PTX instruction at `.gpu` scope: `atom.global.add`,
//! `ld.acquire`, `st.release`, `ld.relaxed`, `st.relaxed`. In the simulator they are the
//! host's atomics on the same addresses with the same orderings.
//!
//! A store with [`store_release_u64`] makes every earlier write of the thread visible to a
//! thread whose [`load_acquire_u64`] reads the stored value: publish data with relaxed
//! stores, then a flag with a release store; read the flag with an acquire load, then the
//! data with relaxed loads.

#[cfg(target_arch = "nvptx64")]
mod backend {
    use core::arch::asm;

    #[inline(always)]
    pub unsafe fn fetch_add_u32(ptr: *mut u32, v: u32) -> u32 {
        let old: u32;
        // SAFETY: the caller guarantees a valid, aligned global address.
        unsafe {
            asm!("atom.relaxed.gpu.global.add.u32 {o}, [{p}], {v};", o = out(reg32) old,
                 p = in(reg64) ptr, v = in(reg32) v, options(nostack, preserves_flags))
        };
        old
    }

    #[inline(always)]
    pub unsafe fn load_acquire_u64(ptr: *const u64) -> u64 {
        let v: u64;
        // SAFETY: as above.
        unsafe {
            asm!("ld.acquire.gpu.global.u64 {v}, [{p}];", v = out(reg64) v, p = in(reg64) ptr,
                 options(nostack, preserves_flags))
        };
        v
    }

    #[inline(always)]
    pub unsafe fn load_relaxed_u64(ptr: *const u64) -> u64 {
        let v: u64;
        // SAFETY: as above.
        unsafe {
            asm!("ld.relaxed.gpu.global.u64 {v}, [{p}];", v = out(reg64) v, p = in(reg64) ptr,
                 options(nostack, preserves_flags))
        };
        v
    }

    #[inline(always)]
    pub unsafe fn store_release_u64(ptr: *mut u64, v: u64) {
        // SAFETY: as above.
        unsafe {
            asm!("st.release.gpu.global.u64 [{p}], {v};", p = in(reg64) ptr, v = in(reg64) v,
                 options(nostack, preserves_flags))
        };
    }

    #[inline(always)]
    pub unsafe fn store_relaxed_u64(ptr: *mut u64, v: u64) {
        // SAFETY: as above.
        unsafe {
            asm!("st.relaxed.gpu.global.u64 [{p}], {v};", p = in(reg64) ptr, v = in(reg64) v,
                 options(nostack, preserves_flags))
        };
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
