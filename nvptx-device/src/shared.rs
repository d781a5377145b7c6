//! Block-shared memory: static arrays sized at compile time and the dynamic buffer sized at
//! launch.
//!
//! A [`SharedSlice`] is a handle to words in the block's shared memory. On the GPU it holds
//! a 32-bit `.shared` address and every access is one `ld.shared`/`st.shared` (`LDS`/`STS`
//! in SASS). Going through generic pointers instead would compile to generic `LD`/`ST`,
//! which measured 15–35% slower; stock rustc has no address spaces, hence the inline PTX.
//! In the simulator the same handle indexes the block's shared arena, and every access is
//! checked for bounds, uninitialised reads and data races between barriers.
//!
//! ```ignore
//! let ms = shared_array!(f32; TW * TW);          // `__shared__ float ms[TW*TW];`
//! let (ms, ns) = dynamic_shared::<f32>().split_at(tw * tw); // `extern __shared__ float ms[];`
//! ```

use core::marker::PhantomData;

/// A 4-byte value that can live in shared memory.
pub trait SharedWord: Copy + 'static {
    /// The value's bits.
    fn to_bits(self) -> u32;
    /// The value from its bits.
    fn from_bits(bits: u32) -> Self;
}

impl SharedWord for f32 {
    #[inline(always)]
    fn to_bits(self) -> u32 {
        f32::to_bits(self)
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
}

impl SharedWord for u32 {
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        bits
    }
}

impl SharedWord for i32 {
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        bits as i32
    }
}

/// A run of `len` words of type `T` in the block's shared memory.
///
/// It is `Copy`: every thread of the block holds the same handle, as every CUDA thread sees
/// the same `__shared__` array. Reads and writes of one word by different threads must be
/// separated by [`sync_threads`](crate::thread::sync_threads); the simulator reports those
/// that are not.
#[derive(Clone, Copy)]
pub struct SharedSlice<T: SharedWord> {
    #[cfg(target_arch = "nvptx64")]
    addr: u32,
    #[cfg(not(target_arch = "nvptx64"))]
    region: crate::sim::shared_mem::RegionRef,
    /// Word offset of element 0 in the region (the simulator's address).
    #[cfg(not(target_arch = "nvptx64"))]
    offset: u32,
    len: u32,
    _t: PhantomData<T>,
}

impl<T: SharedWord> SharedSlice<T> {
    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether it has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads element `i`, checking the bound (a failed check traps on the GPU and is
    /// reported by the simulator).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn get(&self, i: u32) -> T {
        if i >= self.len {
            self.out_of_bounds(i);
        }
        // SAFETY: `i < len` was just checked.
        unsafe { self.get_unchecked(i) }
    }

    /// Writes element `i`, checking the bound like [`get`](Self::get).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn set(&self, i: u32, value: T) {
        if i >= self.len {
            self.out_of_bounds(i);
        }
        // SAFETY: `i < len` was just checked.
        unsafe { self.set_unchecked(i, value) }
    }

    /// The byte address of element 0 in the block's shared memory: the `.shared` address
    /// on the GPU; in the simulator, its offset in its array, whose start counts as 0.
    #[inline(always)]
    pub fn byte_address(&self) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        {
            self.addr
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.offset * 4
        }
    }

    /// The slice from its first element whose [`byte_address`](Self::byte_address) is a
    /// multiple of `align` (a power of two, at least 4): what an instruction that needs an
    /// aligned tile (the 1024-byte swizzle atoms of [`crate::wgmma`]) carves out of a
    /// buffer given `align - 4` spare bytes. Too short a slice fails like an out-of-bounds
    /// access.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn aligned_to(self, align: u32) -> Self {
        let skip = self.byte_address().wrapping_neg() & (align - 1);
        self.split_at(skip / 4).1
    }

    /// The two halves `[0, mid)` and `[mid, len)`, as `ms`/`ns` are carved out of one
    /// dynamic buffer. `mid > len` fails like an out-of-bounds access.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn split_at(self, mid: u32) -> (Self, Self) {
        if mid > self.len {
            self.out_of_bounds(mid);
        }
        let mut tail = self;
        tail.len = self.len - mid;
        #[cfg(target_arch = "nvptx64")]
        {
            tail.addr = self.addr + mid * 4;
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            tail.offset = self.offset + mid;
        }
        let mut head = self;
        head.len = mid;
        (head, tail)
    }
}

#[cfg(target_arch = "nvptx64")]
mod backend {
    use super::{SharedSlice, SharedWord};
    use core::arch::asm;

    // The dynamic buffer (`extern __shared__`), declared once for the whole module.
    core::arch::global_asm!(".extern .shared .align 16 .b8 __dynamic_shared[];");

    impl<T: SharedWord> SharedSlice<T> {
        /// A handle from a raw `.shared` address and a length; what `shared_array!` expands to.
        #[doc(hidden)]
        #[inline(always)]
        pub const fn from_shared_addr(addr: u32, len: u32) -> Self {
            Self {
                addr,
                len,
                _t: core::marker::PhantomData,
            }
        }

        /// The 32-bit `.shared` address of element 0, for hand-written PTX.
        #[inline(always)]
        pub fn shared_addr(&self) -> u32 {
            self.addr
        }

        /// Reads element `i` with one `ld.shared.b32`.
        ///
        /// # Safety
        /// `i < self.len()`.
        #[inline(always)]
        pub unsafe fn get_unchecked(&self, i: u32) -> T {
            let bits: u32;
            // SAFETY: the caller guarantees the address is inside this shared array.
            // `readonly` lets LLVM schedule the load; barriers and stores are memory
            // clobbers, so it is never moved across them.
            unsafe {
                asm!("ld.shared.b32 {v}, [{a}];", v = out(reg32) bits, a = in(reg32) self.addr + i * 4,
                     options(pure, readonly, nostack, preserves_flags));
            }
            T::from_bits(bits)
        }

        /// Writes element `i` with one `st.shared.b32`.
        ///
        /// # Safety
        /// `i < self.len()`.
        #[inline(always)]
        pub unsafe fn set_unchecked(&self, i: u32, value: T) {
            // SAFETY: the caller guarantees the address is inside this shared array.
            unsafe {
                asm!("st.shared.b32 [{a}], {v};", a = in(reg32) self.addr + i * 4, v = in(reg32) value.to_bits(),
                     options(nostack, preserves_flags));
            }
        }

        /// Writes elements `i..i + 4` with one `st.shared.v4.b32`: a warp storing 16 bytes
        /// per lane is conflict-free, where four scalar stores at a stride of 4 words
        /// would each conflict 4 ways.
        ///
        /// # Safety
        /// `i + 4 <= self.len()` and `i` is a multiple of 4 (16-byte alignment).
        #[inline(always)]
        pub unsafe fn set4_unchecked(&self, i: u32, v: [T; 4]) {
            // SAFETY: the caller guarantees bounds and alignment.
            unsafe {
                asm!("st.shared.v4.b32 [{a}], {{{x}, {y}, {z}, {w}}};", a = in(reg32) self.addr + i * 4,
                     x = in(reg32) v[0].to_bits(), y = in(reg32) v[1].to_bits(), z = in(reg32) v[2].to_bits(),
                     w = in(reg32) v[3].to_bits(), options(nostack, preserves_flags));
            }
        }

        /// Writes elements `i` and `i + 1` with one `st.shared.v2.b32`.
        ///
        /// # Safety
        /// `i + 2 <= self.len()` and `i` is even (8-byte alignment).
        #[inline(always)]
        pub unsafe fn set2_unchecked(&self, i: u32, v: [T; 2]) {
            // SAFETY: the caller guarantees bounds and alignment.
            unsafe {
                asm!("st.shared.v2.b32 [{a}], {{{x}, {y}}};", a = in(reg32) self.addr + i * 4,
                     x = in(reg32) v[0].to_bits(), y = in(reg32) v[1].to_bits(),
                     options(nostack, preserves_flags));
            }
        }

        /// Reads elements `i..i + 4` with one `ld.shared.v4.b32`.
        ///
        /// # Safety
        /// `i + 4 <= self.len()` and `i` is a multiple of 4 (16-byte alignment).
        #[inline(always)]
        pub unsafe fn get4_unchecked(&self, i: u32) -> [T; 4] {
            let (x, y, z, w): (u32, u32, u32, u32);
            // SAFETY: the caller guarantees bounds and alignment.
            unsafe {
                asm!("ld.shared.v4.b32 {{{x}, {y}, {z}, {w}}}, [{a}];", a = in(reg32) self.addr + i * 4,
                     x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, w = out(reg32) w,
                     options(pure, readonly, nostack, preserves_flags));
            }
            [
                T::from_bits(x),
                T::from_bits(y),
                T::from_bits(z),
                T::from_bits(w),
            ]
        }

        #[inline(always)]
        pub(super) fn out_of_bounds(&self, _index: u32) -> ! {
            core::intrinsics::abort()
        }
    }

    /// The block's dynamic shared memory, as many `T` as the launch's dynamic shared bytes hold.
    #[inline(always)]
    pub fn dynamic_shared<T: SharedWord>() -> SharedSlice<T> {
        let (addr, bytes): (u32, u32);
        // SAFETY: reads a symbol's address and a special register.
        unsafe {
            asm!("mov.u32 {a}, __dynamic_shared;", "mov.u32 {n}, %dynamic_smem_size;",
                 a = out(reg32) addr, n = out(reg32) bytes, options(pure, nomem, nostack, preserves_flags));
        }
        SharedSlice::from_shared_addr(addr, bytes / 4)
    }
}

#[cfg(not(target_arch = "nvptx64"))]
mod backend {
    use super::{SharedSlice, SharedWord};
    use crate::sim::shared_mem::{self, RegionRef};

    impl<T: SharedWord> SharedSlice<T> {
        /// The same elements of block `rank` of the cluster (its dynamic shared memory at
        /// the same offset), as `mapa` maps a shared address. The simulator reaches only
        /// dynamic shared memory across blocks.
        #[track_caller]
        pub(crate) fn in_rank(&self, rank: u32) -> Self {
            let Some((region, words)) = shared_mem::dynamic_region_in(self.region, rank) else {
                panic!(
                    "shared memory of cluster rank {rank}: not a block of the cluster, or not dynamic shared memory (the simulator maps only that across a cluster)"
                )
            };
            assert!(
                self.offset + self.len <= words,
                "the same launch gives every block the same dynamic shared memory"
            );
            Self { region, ..*self }
        }

        pub(crate) fn from_region(region: RegionRef, len: u32) -> Self {
            Self {
                region,
                offset: 0,
                len,
                _t: core::marker::PhantomData,
            }
        }

        /// Reads element `i`.
        ///
        /// # Safety
        /// `i < self.len()`. (The simulator checks it anyway and reports a violation.)
        #[inline]
        #[track_caller]
        pub unsafe fn get_unchecked(&self, i: u32) -> T {
            if i >= self.len {
                self.out_of_bounds(i);
            }
            T::from_bits(shared_mem::load(self.region, self.offset + i))
        }

        /// Writes element `i`.
        ///
        /// # Safety
        /// `i < self.len()`. (The simulator checks it anyway and reports a violation.)
        #[inline]
        #[track_caller]
        pub unsafe fn set_unchecked(&self, i: u32, value: T) {
            if i >= self.len {
                self.out_of_bounds(i);
            }
            shared_mem::store(self.region, self.offset + i, value.to_bits())
        }

        /// Reads element `i` outside the race checker: for the device API's own state that
        /// the hardware changes atomically or through its asynchronous proxy
        /// ([`crate::mbarrier`], [`crate::tma`]), never for a kernel's data.
        #[track_caller]
        pub(crate) fn get_quiet(&self, i: u32) -> T {
            if i >= self.len {
                self.out_of_bounds(i);
            }
            T::from_bits(shared_mem::load_quiet(self.region, self.offset + i))
        }

        /// Writes element `i` outside the race checker; see [`get_quiet`](Self::get_quiet).
        #[track_caller]
        pub(crate) fn set_quiet(&self, i: u32, value: T) {
            if i >= self.len {
                self.out_of_bounds(i);
            }
            shared_mem::store_quiet(self.region, self.offset + i, value.to_bits())
        }

        /// Writes elements `i..i + 4` (one 16-byte store on the GPU).
        ///
        /// # Safety
        /// `i + 4 <= self.len()` and `i` is a multiple of 4; the simulator checks both.
        #[track_caller]
        pub unsafe fn set4_unchecked(&self, i: u32, v: [T; 4]) {
            self.check_vector(i);
            for (j, x) in v.into_iter().enumerate() {
                // SAFETY: checked above; the simulator checks every element anyway.
                unsafe { self.set_unchecked(i + j as u32, x) };
            }
        }

        /// Writes elements `i` and `i + 1` (one 8-byte store on the GPU).
        ///
        /// # Safety
        /// `i + 2 <= self.len()` and `i` is even; the simulator checks both.
        #[track_caller]
        pub unsafe fn set2_unchecked(&self, i: u32, v: [T; 2]) {
            self.check_lanes(i, 2);
            for (j, x) in v.into_iter().enumerate() {
                // SAFETY: checked above; the simulator checks every element anyway.
                unsafe { self.set_unchecked(i + j as u32, x) };
            }
        }

        /// Reads elements `i..i + 4` (one 16-byte load on the GPU).
        ///
        /// # Safety
        /// `i + 4 <= self.len()` and `i` is a multiple of 4; the simulator checks both.
        #[track_caller]
        pub unsafe fn get4_unchecked(&self, i: u32) -> [T; 4] {
            self.check_vector(i);
            // SAFETY: checked above.
            unsafe {
                [
                    self.get_unchecked(i),
                    self.get_unchecked(i + 1),
                    self.get_unchecked(i + 2),
                    self.get_unchecked(i + 3),
                ]
            }
        }

        #[track_caller]
        fn check_vector(&self, i: u32) {
            self.check_lanes(i, 4);
        }

        /// Elements `i..i + lanes` are inside and aligned to `lanes` words, as one vector
        /// access of `lanes` words needs.
        #[track_caller]
        fn check_lanes(&self, i: u32, lanes: u32) {
            if !i.is_multiple_of(lanes)
                || !(self.offset + i).is_multiple_of(lanes)
                || i.saturating_add(lanes) > self.len
            {
                self.out_of_bounds(i.saturating_add(lanes - 1));
            }
        }

        #[track_caller]
        pub(super) fn out_of_bounds(&self, index: u32) -> ! {
            shared_mem::out_of_bounds(self.region, index, self.len)
        }

        /// Which array and where in it the slice starts: equal for two handles exactly when
        /// they are the same slice's (for warp-collective loads, which all lanes make from
        /// one slice).
        pub(crate) fn sim_identity(&self) -> (usize, u32) {
            (self.region.addr(), self.offset)
        }
    }

    /// The block's dynamic shared memory, as many `T` as the launch's dynamic shared bytes hold.
    #[track_caller]
    pub fn dynamic_shared<T: SharedWord>() -> SharedSlice<T> {
        let (region, words) = shared_mem::dynamic_region();
        SharedSlice::from_region(region, words)
    }

    /// What `shared_array!` expands to on the host: the block's array for this call site.
    #[doc(hidden)]
    #[track_caller]
    pub fn static_shared<T: SharedWord>(site: usize, len: u32) -> SharedSlice<T> {
        SharedSlice::from_region(shared_mem::static_region(site, len), len)
    }
}

pub use backend::dynamic_shared;
#[cfg(not(target_arch = "nvptx64"))]
#[doc(hidden)]
pub use backend::static_shared;

/// A number for a source file, so that `shared_array!` call sites on the same line and
/// column of two files get distinct PTX names (FNV-1a of the path).
#[doc(hidden)]
pub const fn file_id(path: &str) -> u32 {
    let (bytes, mut hash, mut i) = (path.as_bytes(), 0x811c_9dc5u32, 0);
    while i < bytes.len() {
        hash = (hash ^ bytes[i] as u32).wrapping_mul(0x0100_0193);
        i += 1;
    }
    hash
}

/// Declares a static shared array, `__shared__ T name[N]`, and returns its [`SharedSlice`].
///
/// `N` is a constant expression and may use the kernel's const generics (`TW * TW`). Call it
/// at kernel scope, once per array, not in a loop: each call site is one array per block.
/// On the GPU it is a `.shared` declaration in the kernel's PTX, named after the call site
/// (file, line, column); in the simulator, one arena entry per block and call site.
///
/// A call site must not end up twice in one kernel: a function holding it, inlined twice
/// into the same entry point, would declare the same `.shared` name twice, which ptxas
/// rejects only when the driver loads the module. `nvptx-builder` finds that at build time
/// and fails with an error naming the entry and the call site's line and column. Declare
/// the array once at kernel scope and pass the [`SharedSlice`] down instead (as the SGEMM
/// multistage rung hands its arrays to its fallback loop).
#[macro_export]
#[allow_internal_unstable(asm_experimental_arch)]
macro_rules! shared_array {
    ($t:ty; $n:expr) => {{
        #[cfg(target_arch = "nvptx64")]
        let array = {
            let addr: u32;
            // SAFETY: declares a `.shared` array local to the kernel and reads its address.
            unsafe {
                ::core::arch::asm!(
                    concat!(".shared .align 16 .b8 __shared_{file}_l", line!(), "_c", column!(), "[{bytes}];\n\t",
                            "mov.u32 {a}, __shared_{file}_l", line!(), "_c", column!(), ";"),
                    file = const $crate::shared::file_id(file!()),
                    bytes = const ($n) * 4,
                    a = out(reg32) addr,
                    options(nomem, nostack, preserves_flags),
                );
            }
            $crate::shared::SharedSlice::<$t>::from_shared_addr(addr, ($n) as u32)
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let array = {
            static SITE: u8 = 0;
            $crate::shared::static_shared::<$t>(&SITE as *const u8 as usize, ($n) as u32)
        };
        array
    }};
}
