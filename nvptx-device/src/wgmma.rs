//! Warpgroup-level matrix multiply-accumulate (`wgmma.mma_async`, Hopper, PTX `sm_90a`):
//! the four warps of a *warpgroup* (128 consecutive threads, the first a multiple of 128)
//! compute `D = A · B + D` together, `A` 64 × 8 and `B` 8 × `N` read straight from shared
//! memory through 64-bit *matrix descriptors*, `D` 64 × `N` in f32 registers spread over the
//! 128 threads. One instruction does the work of `N / 8 · 4` [`mma.sync`](crate::mma)s, and
//! it is asynchronous: the warpgroup issues several, commits them as a group and waits for
//! the group before it reads the accumulators or overwrites the tiles.
//!
//! TF32 inputs (`.tf32`, f32 accumulation) take one shared-memory layout ("K-major": a row
//! of `A` and a column of `B` run along the depth `k`): tiles of rows of 32 four-byte
//! elements (128 bytes), 8 rows to a 1024-byte
//! *swizzle atom* in which 16-byte chunk `c` of row `r` is stored at chunk `c ^ (r % 8)`
//! ([`sw128_index`]), the PTX ISA's 128-byte swizzle mode. A tile starts on a 1024-byte
//! boundary ([`SharedSlice::aligned_to`]); `B` is stored as `N` rows (its columns) of depth.
//! [`Operand`] names the 8-deep slice `k0..k0 + 8` of such a tile and builds its descriptor:
//! start address, stride between 8-row groups (1024 bytes) and the swizzle mode. A
//! [`DescOperand`] names an operand by a [`Descriptor`] built by the caller instead: the
//! 16-bit inputs (`bf16`, `f16`, [`Accumulators::mma_16bit`], `B` K-major or MN-major) and
//! TF32 on such descriptors ([`Accumulators::mma_tf32_k_major`]), with the option of not
//! accumulating.
//!
//! The accumulators of `D` ([`Accumulators`], `[FragC; N / 8]`) follow the `mma.m16n8`
//! layout of [`FragC`] per 8 columns: warp `w` of the warpgroup holds rows `16w..16w + 16`,
//! and its element `[j][e]` is row `16w + c_position(lane, e).0`, column
//! `8j + c_position(lane, e).1` ([`c_position`](crate::mma::c_position)).
//!
//! The protocol, for every thread of the warpgroup together:
//!
//! ```ignore
//! wgmma::fence(&mut acc);                 // wgmma.fence: registers and tiles settled
//! for s in 0..4 { acc.mma_tf32(Operand::new(a, a0, 8 * s), Operand::new(b, b0, 8 * s)) }
//! wgmma::commit_group();                  // the four above are one group
//! wgmma::wait_group::<0, _>(&mut acc);    // all done: acc readable, tiles reusable
//! ```
//!
//! Shared memory written by ordinary stores or `cp.async` must be made visible to the
//! asynchronous proxy that `wgmma` reads through: each writing thread runs
//! [`fence_proxy_async`] after its writes land and before the barrier that publishes them.
//!
//! In the simulator `mma_tf32` computes each thread's own accumulators at once from the
//! shared tiles, reading every element through the descriptor's address arithmetic and the
//! swizzle as the hardware applies it (XOR of address bits 4–6 with bits 7–9), not through
//! [`sw128_index`], so a kernel that stores a tile in another layout computes a wrong
//! product on the CPU too. Products of TF32 values are exact; the sum of each instruction's
//! eight products and `D` is rounded once, as [`crate::mma::mma_m16n8k8_tf32`] does. The
//! fences, commits and waits do nothing there: the simulator checks where data lies, not the
//! asynchronous protocol.

use crate::mma::{FragA, FragC};
use crate::shared::SharedSlice;

/// Four-byte elements in a row of a 128-byte-swizzled tile.
pub const ROW_WORDS: u32 = 32;
/// Rows of a swizzle atom.
pub const ATOM_ROWS: u32 = 8;
/// Bytes of a swizzle atom, the alignment a tile needs.
pub const ATOM_BYTES: u32 = 1024;
/// Rows of `A` and `D` in one instruction.
pub const M: u32 = 64;
/// Depth of one TF32 instruction.
pub const K_TF32: u32 = 8;
/// Threads of a warpgroup.
pub const WARPGROUP: u32 = 128;

/// The word of element `(r, c)` (`c < 32`) of a 128-byte-swizzled tile, counted from the
/// tile's start: the 16-byte chunk `c / 4` moved to `(c / 4) ^ (r % 8)` within row `r`.
#[inline(always)]
pub const fn sw128_index(r: u32, c: u32) -> u32 {
    r * ROW_WORDS + 4 * ((c / 4) ^ (r % ATOM_ROWS)) + c % 4
}

/// The 8-deep slice `k0..k0 + 8` of a 128-byte-swizzled tile, as a `wgmma` operand: all
/// the tile's rows from its first (the 64 of an `A`, the `N` of a `B`).
#[derive(Clone, Copy)]
pub struct Operand {
    /// The shared array the tile lies in, and the tile's first word in it.
    array: SharedSlice<f32>,
    start: u32,
    k0: u32,
}

impl Operand {
    /// The slice `k0..k0 + 8` of the tile at word `start` of `array`: the tile starts on a
    /// 1024-byte boundary and holds whole rows of 32 words in [`sw128_index`]'s layout
    /// inside `array` (`k0` a multiple of 8, below 32). Nothing is checked on the GPU (the
    /// simulator checks all of it), so that a kernel's loop has no branch between the
    /// `wgmma` it keeps in flight.
    #[inline(always)]
    pub fn new(array: SharedSlice<f32>, start: u32, k0: u32) -> Self {
        Self { array, start, k0 }
    }

    /// The matrix descriptor: start address ÷ 16 in bits 0–13, the leading-dimension
    /// offset (unused by a swizzled K-major operand one chunk deep; 16 bytes) in bits
    /// 16–29, the 1024-byte stride between 8-row groups ÷ 16 in bits 32–45, base offset 0,
    /// and swizzle mode 1 (128 bytes) in bits 62–63.
    #[inline(always)]
    pub fn descriptor(&self) -> u64 {
        let start = self.array.byte_address() + 4 * (self.start + self.k0);
        (((start >> 4) & 0x3fff) as u64)
            | (1u64 << 16)
            | (((ATOM_BYTES >> 4) as u64) << 32)
            | (1u64 << 62)
    }

    /// Element `(r, kk)` (`kk < 8`) of the slice, found as the hardware finds it: the
    /// descriptor's address, then the 128-byte swizzle on the address bits.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn element(&self, r: u32, kk: u32) -> f32 {
        let base = self.array.byte_address() + 4 * self.start;
        assert!(
            base.is_multiple_of(ATOM_BYTES)
                && self.k0.is_multiple_of(K_TF32)
                && self.k0 < ROW_WORDS,
            "wgmma operand: tile at byte {base} (needs a multiple of {ATOM_BYTES}), k0 {}",
            self.k0
        );
        let byte =
            base + 4 * self.k0 + (r / ATOM_ROWS) * ATOM_BYTES + (r % ATOM_ROWS) * 128 + 4 * kk;
        let swizzled = byte ^ (((byte >> 7) & 7) << 4);
        let word = (swizzled - self.array.byte_address()) / 4;
        crate::mma::tf32_value(self.array.get(word).to_bits())
    }
}

/// Depth of one 16-bit (`bf16`, `f16`) instruction.
pub const K_16BIT: u32 = 16;
/// Two-byte elements in a row of a 128-byte-swizzled tile.
pub const ROW_HALVES: u32 = 64;

/// A shared-memory matrix descriptor in the 128-byte swizzle mode: the operand's start
/// address, the *leading* and *stride* byte offsets, as the PTX ISA's matrix-descriptor
/// format packs them (addresses and offsets ÷ 16 in 14-bit fields; bits 62–63 = 1).
///
/// Two layouts are built here, both in rows of 128 bytes, 8 rows to a 1024-byte swizzle
/// atom (16-byte chunk `c` of row `r` at chunk `c ^ (r % 8)`), the tile 1024-byte aligned:
/// * [`k_major`](Self::k_major): each row runs along `k` (64 two-byte or 32 four-byte
///   elements): the rows of `A` (`m`) or of `Bᵀ` (`n`); groups of 8 rows 1024 bytes apart.
/// * [`mn_major`](Self::mn_major) (16-bit types only): each row runs along `m` or `n`, 64
///   columns, one row per `k`; groups of 8 `k` 1024 bytes apart, and blocks of 64 columns
///   `block_bytes` apart: a row-major `B` (`k × n`) as the tensor-memory accelerator copies
///   it in boxes of 64 columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor(pub u64);

impl Descriptor {
    /// A K-major operand whose row 0, at the instruction's first `k`, is at shared byte
    /// address `start` (the tile's start plus the byte offset of that `k` within a row).
    #[inline(always)]
    pub const fn k_major(start: u32) -> Self {
        // The leading offset is unused by a swizzled K-major operand; 16 bytes by convention.
        Self::encode(start, 16, ATOM_BYTES)
    }

    /// An MN-major operand whose first column, at the instruction's first `k`, is at
    /// shared byte address `start` (the tile's start plus 128 bytes per `k`), its blocks of
    /// 64 columns `block_bytes` apart.
    #[inline(always)]
    pub const fn mn_major(start: u32, block_bytes: u32) -> Self {
        Self::encode(start, block_bytes, ATOM_BYTES)
    }

    #[inline(always)]
    const fn encode(start: u32, leading: u32, stride: u32) -> Self {
        Self(
            ((start >> 4) & 0x3fff) as u64
                | ((((leading >> 4) & 0x3fff) as u64) << 16)
                | ((((stride >> 4) & 0x3fff) as u64) << 32)
                | (1u64 << 62),
        )
    }

    /// (start, leading, stride) in bytes, as encoded.
    pub const fn fields(self) -> (u32, u32, u32) {
        const fn field(d: u64, shift: u32) -> u32 {
            (((d >> shift) & 0x3fff) as u32) << 4
        }
        (field(self.0, 0), field(self.0, 16), field(self.0, 32))
    }

    /// The shared byte address of element `(r, kk)` of a K-major operand of `size`-byte
    /// elements (`r` its row in `m` or `n`, `kk` below the instruction's depth: 16 of 2
    /// bytes, 8 of 4), as the hardware finds it: the descriptor's address arithmetic, then
    /// the 128-byte swizzle on the address bits.
    pub const fn k_major_address(self, r: u32, kk: u32, size: u32) -> u32 {
        let (start, _, stride) = self.fields();
        swizzle(start + (r / ATOM_ROWS) * stride + (r % ATOM_ROWS) * 128 + size * kk)
    }

    /// The shared byte address of element `(kk, c)` of an MN-major operand of 2-byte
    /// elements (`kk < 16` its `k`, `c` its column in `m` or `n`).
    pub const fn mn_major_address(self, kk: u32, c: u32) -> u32 {
        let (start, leading, stride) = self.fields();
        swizzle(
            start
                + (c / ROW_HALVES) * leading
                + (kk / ATOM_ROWS) * stride
                + (kk % ATOM_ROWS) * 128
                + 2 * (c % ROW_HALVES),
        )
    }
}

/// A `wgmma` operand given by its [`Descriptor`], and the shared array its tile lies in
/// (2-byte elements packed two to a word, the lower-indexed in the low half, or one 4-byte
/// element a word). On the GPU only the descriptor is used; the simulator reads the
/// elements through it from the array.
#[derive(Clone, Copy)]
pub struct DescOperand {
    array: SharedSlice<u32>,
    desc: Descriptor,
}

impl DescOperand {
    /// A K-major operand at byte `offset` of `array` ([`Descriptor::k_major`]).
    #[inline(always)]
    pub fn k_major(array: SharedSlice<u32>, offset: u32) -> Self {
        Self {
            array,
            desc: Descriptor::k_major(array.byte_address() + offset),
        }
    }

    /// An MN-major operand at byte `offset` of `array`, its blocks of 64 columns
    /// `block_bytes` apart ([`Descriptor::mn_major`]).
    #[inline(always)]
    pub fn mn_major(array: SharedSlice<u32>, offset: u32, block_bytes: u32) -> Self {
        Self {
            array,
            desc: Descriptor::mn_major(array.byte_address() + offset, block_bytes),
        }
    }

    /// Its descriptor.
    #[inline(always)]
    pub fn descriptor(&self) -> Descriptor {
        self.desc
    }

    /// The element at shared byte address `address` (from the descriptor), read from the
    /// array in the simulator.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn element(&self, address: u32) -> u16 {
        let Some(rel) = address.checked_sub(self.array.byte_address()) else {
            panic!("wgmma: an operand element at byte {address} lies before its array");
        };
        let word = self.array.get(rel / 4);
        (word >> (16 * ((rel / 2) % 2))) as u16
    }

    /// The 4-byte element at shared byte address `address` (from the descriptor), read from
    /// the array in the simulator.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn word(&self, address: u32) -> u32 {
        let Some(rel) = address.checked_sub(self.array.byte_address()) else {
            panic!("wgmma: an operand element at byte {address} lies before its array");
        };
        self.array.get(rel / 4)
    }
}

/// The 128-byte swizzle on a shared byte address: bits 4–6 XOR bits 7–9.
pub const fn swizzle(byte: u32) -> u32 {
    byte ^ (((byte >> 7) & 7) << 4)
}

/// The 16-bit element types `wgmma` multiplies with f32 accumulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    Bf16,
    F16,
}

impl Half {
    /// The exact f32 value of the element's bits.
    pub fn value(self, bits: u16) -> f32 {
        match self {
            Self::Bf16 => crate::mma::bf16_value(bits),
            Self::F16 => f16_value(bits),
        }
    }
}

/// The f32 value of IEEE binary16 bits (exact: every f16 is an f32).
pub fn f16_value(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = ((bits >> 10) & 0x1f) as i32;
    let frac = (bits & 0x3ff) as f32;
    match exp {
        0 => sign * frac * f32::from_bits(0x3380_0000), // 2^-24
        31 if frac == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        e => {
            let scale = f32::from_bits(((e - 15 + 127) as u32) << 23);
            sign * (1.0 + frac / 1024.0) * scale
        }
    }
}

/// The accumulators of one `wgmma` of shape `m64nNk8`: `N / 8` [`FragC`]s
/// (`[FragC; 4]`, `[FragC; 8]`, `[FragC; 16]`, `[FragC; 24]`, `[FragC; 32]` for `N` = 32, 64,
/// 128, 192, 256), and the operations
/// that read or write them.
pub trait Accumulators: Sized {
    /// `N`, the columns of `B` and `D`.
    const N: u32;
    /// All accumulators zero.
    const ZERO: Self;

    /// The `N / 8` fragments, each the 16 × 8 [`FragC`] of columns `8j..8j + 8` of the
    /// thread's warp's 16 rows.
    fn frags(&self) -> &[FragC];

    /// `D = A · B + D` for the warpgroup (`wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32`):
    /// `a` 64 rows of depth 8, `b` `N` rows (the columns of `B`) of the same depth. The
    /// result is there after [`commit_group`] and [`wait_group`].
    ///
    /// # Safety
    /// All 128 threads of the warpgroup execute it together, after a [`fence`] since their
    /// last other access to these registers; both tiles hold what the product needs,
    /// visible to the asynchronous proxy ([`fence_proxy_async`] and a barrier), and nothing
    /// writes them until a [`wait_group`] says the instruction is done.
    unsafe fn mma_tf32(&mut self, a: Operand, b: Operand);

    /// `D = A · B + D` for the warpgroup on 16-bit operands
    /// (`wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}`, f32 accumulation): `a` a
    /// K-major operand of 64 rows of depth 16, `b` `N` columns of the same depth, K-major
    /// (`TRANS_B = 0`) or MN-major (`TRANS_B = 1`, a row-major `B`); with `accumulate`
    /// false, `D = A · B` (the accumulators' old values are not read).
    ///
    /// # Safety
    /// As [`mma_tf32`](Self::mma_tf32), with operands whose descriptors describe the tiles.
    unsafe fn mma_16bit<const TRANS_B: u32>(
        &mut self, half: Half, a: DescOperand, b: DescOperand, accumulate: bool,
    );

    /// `D = A · B + D` for the warpgroup on TF32 operands given by descriptors
    /// (`wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32`): `a` 64 rows and `b` `N`
    /// columns, both K-major (the only layout `.tf32` takes) with rows of 32 four-byte
    /// elements, depth 8 from each descriptor's start; with `accumulate` false, `D = A · B`.
    /// The instruction reads each element's bits as they are, its low 13 mantissa bits
    /// ignored ([`tf32_value`](crate::mma::tf32_value)): round first for TF32's rounding.
    ///
    /// # Safety
    /// As [`mma_16bit`](Self::mma_16bit).
    unsafe fn mma_tf32_k_major(&mut self, a: DescOperand, b: DescOperand, accumulate: bool);

    /// `D = A · B + D` for the warpgroup with `A` in registers
    /// (`wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32`, the register form): warp `w`
    /// holds rows `16w..16w + 16` of the 64 × 8 `A` as the [`FragA`] of an `mma.m16n8k8`
    /// ([`a_position`](crate::mma::a_position)), the rows of `D` it holds; `b` `N` columns
    /// of depth 8, K-major, as for [`mma_tf32_k_major`](Self::mma_tf32_k_major). With
    /// `accumulate` false, `D = A · B`. The registers' low 13 mantissa bits are ignored:
    /// round them first ([`to_tf32`](crate::mma::to_tf32)).
    ///
    /// # Safety
    /// As [`mma_16bit`](Self::mma_16bit), and the `A` registers, like the accumulators, are
    /// written only before the [`fence`] that precedes the instruction, and not again until
    /// the group that reads them completes: the GPU reads them while the group runs. So no
    /// earlier register-`A` group of the warpgroup may still be in flight when it is issued
    /// (a [`wait_group::<0>`](wait_group) after each such group): the next group's fragments
    /// are loaded over the same registers (`ptxas` serializes every `wgmma` of a kernel that
    /// keeps them apart). The simulator fails a launch that breaks this.
    unsafe fn mma_tf32_rs(&mut self, a: &FragA, b: DescOperand, accumulate: bool);

    /// The TF32 instruction on descriptors `da` and `db`, `D = A · B` unless `accumulate`.
    #[doc(hidden)]
    #[cfg(target_arch = "nvptx64")]
    unsafe fn issue_tf32(&mut self, da: u64, db: u64, accumulate: bool);

    /// [`wait_group::<N>`](wait_group) where `WAIT`, else [`fence`]: the instruction with
    /// the accumulators tied to it.
    #[doc(hidden)]
    unsafe fn tie_regs<const WAIT: bool, const N: u32>(&mut self);
}

/// Orders the warpgroup's earlier register and shared-memory accesses before its next
/// `wgmma`s (`wgmma.fence.sync.aligned`), tied to `acc` so that no write of the
/// accumulators moves past it.
///
/// # Safety
/// All 128 threads of the warpgroup execute it together.
#[inline(always)]
pub unsafe fn fence<A: Accumulators>(acc: &mut A) {
    // SAFETY: the caller's contract.
    unsafe { acc.tie_regs::<false, 0>() }
}

/// Closes the warpgroup's `wgmma`s issued since the last commit into one group
/// (`wgmma.commit_group.sync.aligned`).
///
/// # Safety
/// All 128 threads of the warpgroup execute it together.
#[inline(always)]
pub unsafe fn commit_group() {
    instruction!("wgmma.commit_group.sync.aligned;");
    #[cfg(not(target_arch = "nvptx64"))]
    crate::sim::context::with(|t| t.wgmma.commit());
}

/// Waits until at most `N` of the warpgroup's committed groups are in flight
/// (`wgmma.wait_group.sync.aligned N`): the others' accumulators are written and their
/// tiles no longer read. Tied to `acc` so that no read of the accumulators moves before it.
///
/// # Safety
/// All 128 threads of the warpgroup execute it together.
#[inline(always)]
pub unsafe fn wait_group<const N: u32, A: Accumulators>(acc: &mut A) {
    // SAFETY: the caller's contract.
    unsafe { acc.tie_regs::<true, N>() };
    #[cfg(not(target_arch = "nvptx64"))]
    crate::sim::context::with(|t| t.wgmma.wait(N as usize));
}

/// Raises each thread's register limit for the rest of the warpgroup's run to `N`
/// (`setmaxnreg.inc.sync.aligned.u32`, 24 to 256, a multiple of 8): the consumer
/// warpgroups of a warp-specialized kernel take the registers its producer gives up.
///
/// # Safety
/// All 128 threads of the warpgroup together; the kernel is launched with a register cap
/// (launch bounds) that leaves the block room for every warpgroup's limit.
#[inline(always)]
pub unsafe fn setmaxnreg_inc<const N: u32>() {
    // SAFETY: the caller's contract.
    unsafe { setmaxnreg::<N, true>() }
}

/// Lowers each thread's register limit for the rest of the warpgroup's run to `N`
/// (`setmaxnreg.dec.sync.aligned.u32`), for warpgroups that need few (a producer that only
/// issues copies).
///
/// # Safety
/// As [`setmaxnreg_inc`].
#[inline(always)]
pub unsafe fn setmaxnreg_dec<const N: u32>() {
    // SAFETY: the caller's contract.
    unsafe { setmaxnreg::<N, false>() }
}

/// [`setmaxnreg_inc`] where `INC`, else [`setmaxnreg_dec`].
///
/// # Safety
/// As [`setmaxnreg_inc`].
#[inline(always)]
unsafe fn setmaxnreg<const N: u32, const INC: bool>() {
    const { assert!(N >= 24 && N <= 256 && N.is_multiple_of(8)) };
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's contract.
    unsafe {
        if INC {
            core::arch::asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const N,
                             options(nostack, preserves_flags));
        } else {
            core::arch::asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const N,
                             options(nostack, preserves_flags));
        }
    }
}

/// Makes this thread's completed writes to shared memory (stores, landed `cp.async`)
/// visible to the asynchronous proxy that `wgmma` reads through
/// (`fence.proxy.async.shared::cta`); a barrier then publishes them to the warpgroup.
#[inline(always)]
pub fn fence_proxy_async() {
    instruction!("fence.proxy.async.shared::cta;");
}

/// The simulator's `wgmma`: this thread's accumulators from the whole operand tiles.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn sim_mma(acc: &mut [FragC], a: Operand, b: Operand) {
    for (row, col, d) in sim_accumulators(acc) {
        let mut sum = *d as f64;
        for kk in 0..K_TF32 {
            sum += a.element(row, kk) as f64 * b.element(col, kk) as f64;
        }
        *d = sum as f32;
    }
}

/// This thread's accumulators in the simulator, each with its row and column of the
/// warpgroup's `64 × N` tile of `D`.
#[cfg(not(target_arch = "nvptx64"))]
fn sim_accumulators(acc: &mut [FragC]) -> impl Iterator<Item = (u32, u32, &mut f32)> {
    let t = crate::thread::thread_idx_x() % WARPGROUP;
    let (warp, lane) = (t / 32, t % 32);
    acc.iter_mut().enumerate().flat_map(move |(j, frag)| {
        frag.iter_mut().enumerate().map(move |(e, d)| {
            let (r, c) = crate::mma::c_position(lane, e);
            (16 * warp + r, 8 * j as u32 + c, d)
        })
    })
}

/// The simulator's 16-bit `wgmma`: this thread's accumulators from the shared tiles, each
/// element read at the address the descriptor and the swizzle give; the sixteen exact
/// products and `D` summed and rounded once.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn sim_mma_16bit(
    acc: &mut [FragC], half: Half, a: DescOperand, b: DescOperand, b_mn_major: bool,
    accumulate: bool,
) {
    sim_mma_desc(acc, [a, b], K_16BIT, accumulate, |row, col, kk| {
        let x = half.value(a.element(a.desc.k_major_address(row, kk, 2)));
        let y = half.value(if b_mn_major {
            b.element(b.desc.mn_major_address(kk, col))
        } else {
            b.element(b.desc.k_major_address(col, kk, 2))
        });
        (x, y)
    });
}

/// The simulator's TF32 `wgmma` on descriptors: as [`sim_mma_16bit`], each element's bits
/// read as TF32 ([`tf32_value`](crate::mma::tf32_value)), eight products a step.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn sim_mma_tf32_k_major(acc: &mut [FragC], a: DescOperand, b: DescOperand, accumulate: bool) {
    use crate::mma::tf32_value;
    sim_mma_desc(acc, [a, b], K_TF32, accumulate, |row, col, kk| {
        let x = tf32_value(a.word(a.desc.k_major_address(row, kk, 4)));
        let y = tf32_value(b.word(b.desc.k_major_address(col, kk, 4)));
        (x, y)
    });
}

/// The simulator's TF32 `wgmma` with `A` in registers: the warp's lanes publish their
/// fragments (rows `16w..16w + 16` of `A`, the rows of `D` the warp holds), then each
/// thread computes its accumulators as [`sim_mma_tf32_k_major`] does.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn sim_mma_tf32_rs(acc: &mut [FragC], a: &FragA, b: DescOperand, accumulate: bool) {
    use crate::mma::tf32_value;
    let rows = crate::mma::sim::gather_a(
        a,
        "wgmma (A in registers): ",
        core::panic::Location::caller(),
    );
    sim_mma_desc(acc, [b, b], K_TF32, accumulate, |row, col, kk| {
        let x = tf32_value(rows[(row % 16) as usize][kk as usize]);
        let y = tf32_value(b.word(b.desc.k_major_address(col, kk, 4)));
        (x, y)
    });
}

/// This thread's accumulators from `depth` exact products a step, `pair(row, col, kk)`
/// giving the two factors of step `kk` of output `(row, col)`, summed with `D` (where
/// `accumulate`) and rounded once; both operands' descriptors checked to start on 16
/// bytes.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn sim_mma_desc(
    acc: &mut [FragC], operands: [DescOperand; 2], depth: u32, accumulate: bool,
    pair: impl Fn(u32, u32, u32) -> (f32, f32),
) {
    for (name, d) in [("a", operands[0].desc), ("b", operands[1].desc)] {
        let (start, _, _) = d.fields();
        if start % 16 != 0 {
            panic!("wgmma: operand {name} starts at byte {start}, not a multiple of 16");
        }
    }
    for (row, col, d) in sim_accumulators(acc) {
        let mut sum = if accumulate { *d as f64 } else { 0.0 };
        for kk in 0..depth {
            let (x, y) = pair(row, col, kk);
            sum += x as f64 * y as f64;
        }
        *d = sum as f32;
    }
}

/// `wgmma.mma_async.sync.aligned.$shape.f32.tf32.tf32` on the accumulators `$d` (the
/// registers `$first $rest…` of the flattened array), `A` given by the operand text `$a`
/// (a descriptor `{da}` or four registers) and `B` by the descriptor `{db}`, both among
/// `$operands`; `D = A · B` unless `$accumulate`.
#[cfg(target_arch = "nvptx64")]
macro_rules! tf32_wgmma {
    ($shape:literal, $d:ident, [$first:literal $($rest:literal)*], $a:literal, $accumulate:expr,
     $($operands:tt)*) => {
        core::arch::asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {sc}, 0;",
            concat!("wgmma.mma_async.sync.aligned.", $shape, ".f32.tf32.tf32 {{{", $first, "}" $(, ", {", $rest, "}")*, "}}, ", $a, ", {db}, p, 1, 1;"),
            "}}",
            inout(reg32) $d[$first], $(inout(reg32) $d[$rest],)*
            $($operands)*,
            sc = in(reg32) $accumulate as u32,
            options(nostack, preserves_flags),
        )
    };
}

/// Implements [`Accumulators`] for `[FragC; $ni]` with the instruction `$shape`, whose
/// `$ni · 4` registers are listed (`0 1 2 …`) for the operand lists.
macro_rules! accumulators {
    ($ni:literal, $shape:literal, $shape16:literal, [$first:literal $($rest:literal)*]) => {
        impl Accumulators for [FragC; $ni] {
            const N: u32 = 8 * $ni;
            const ZERO: Self = [[0.0; 4]; $ni];

            #[inline(always)]
            fn frags(&self) -> &[FragC] {
                self
            }

            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn mma_tf32(&mut self, a: Operand, b: Operand) {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: the caller's contract.
                unsafe {
                    self.issue_tf32(a.descriptor(), b.descriptor(), true)
                };
                #[cfg(not(target_arch = "nvptx64"))]
                sim_mma(self, a, b);
            }

            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn issue_tf32(&mut self, da: u64, db: u64, accumulate: bool) {
                let d = self.as_flattened_mut();
                // SAFETY: the caller's contract (warpgroup converged, tiles ready).
                unsafe {
                    tf32_wgmma!($shape, d, [$first $($rest)*], "{da}", accumulate,
                                da = in(reg64) da, db = in(reg64) db)
                }
            }

            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn mma_16bit<const TRANS_B: u32>(
                &mut self, half: Half, a: DescOperand, b: DescOperand, accumulate: bool,
            ) {
                #[cfg(target_arch = "nvptx64")]
                {
                    let d = self.as_flattened_mut();
                    macro_rules! issue {
                        ($ty:literal) => {
                            // SAFETY: the caller's contract (warpgroup converged, tiles ready).
                            unsafe {
                                core::arch::asm!(
                                    "{{",
                                    ".reg .pred p;",
                                    "setp.ne.b32 p, {sc}, 0;",
                                    concat!("wgmma.mma_async.sync.aligned.", $shape16, ".f32.", $ty, ".", $ty, " {{{", $first, "}" $(, ", {", $rest, "}")*, "}}, {da}, {db}, p, 1, 1, 0, {tb};"),
                                    "}}",
                                    inout(reg32) d[$first], $(inout(reg32) d[$rest],)*
                                    da = in(reg64) a.desc.0, db = in(reg64) b.desc.0,
                                    sc = in(reg32) accumulate as u32, tb = const TRANS_B,
                                    options(nostack, preserves_flags),
                                );
                            }
                        };
                    }
                    match half {
                        Half::Bf16 => issue!("bf16"),
                        Half::F16 => issue!("f16"),
                    }
                }
                #[cfg(not(target_arch = "nvptx64"))]
                sim_mma_16bit(self, half, a, b, TRANS_B != 0, accumulate);
            }

            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn mma_tf32_k_major(&mut self, a: DescOperand, b: DescOperand, accumulate: bool) {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: the caller's contract.
                unsafe {
                    self.issue_tf32(a.desc.0, b.desc.0, accumulate)
                };
                #[cfg(not(target_arch = "nvptx64"))]
                sim_mma_tf32_k_major(self, a, b, accumulate);
            }

            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn mma_tf32_rs(&mut self, a: &FragA, b: DescOperand, accumulate: bool) {
                #[cfg(target_arch = "nvptx64")]
                {
                    let d = self.as_flattened_mut();
                    // SAFETY: the caller's contract (warpgroup converged, tile ready, the
                    // `A` registers fenced).
                    unsafe {
                        tf32_wgmma!($shape, d, [$first $($rest)*], "{{{a0}, {a1}, {a2}, {a3}}}",
                                    accumulate, a0 = in(reg32) a[0], a1 = in(reg32) a[1],
                                    a2 = in(reg32) a[2], a3 = in(reg32) a[3],
                                    db = in(reg64) b.desc.0)
                    }
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let at = core::panic::Location::caller().into();
                    crate::sim::context::with(|t| t.wgmma.issue_register_a(at));
                    sim_mma_tf32_rs(self, a, b, accumulate);
                }
            }

            #[inline(always)]
            unsafe fn tie_regs<const WAIT: bool, const N: u32>(&mut self) {
                #[cfg(target_arch = "nvptx64")]
                {
                    let d = self.as_flattened_mut();
                    // The registers are named in a comment, so that they are tied to the
                    // instruction.
                    // SAFETY: the caller's contract.
                    unsafe {
                        if WAIT {
                            core::arch::asm!(
                                "wgmma.wait_group.sync.aligned {n};",
                                concat!("// {", $first, "}" $(, " {", $rest, "}")*),
                                inout(reg32) d[$first], $(inout(reg32) d[$rest],)*
                                n = const N,
                                options(nostack, preserves_flags),
                            );
                        } else {
                            core::arch::asm!(
                                "wgmma.fence.sync.aligned;",
                                concat!("// {", $first, "}" $(, " {", $rest, "}")*),
                                inout(reg32) d[$first], $(inout(reg32) d[$rest],)*
                                options(nostack, preserves_flags),
                            );
                        }
                    }
                }
            }
        }
    };
}

accumulators!(8, "m64n64k8", "m64n64k16", [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]);
accumulators!(16, "m64n128k8", "m64n128k16", [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63]);
accumulators!(32, "m64n256k8", "m64n256k16", [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127]);
accumulators!(24, "m64n192k8", "m64n192k16", [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95]);
accumulators!(4, "m64n32k8", "m64n32k16", [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mma::FragC;
    use crate::shared::dynamic_shared;
    use crate::thread::{sync_threads, thread_idx_x};
    use std::string::ToString;

    /// Two register-`A` groups of `m64n64k8`, the first waited for with `wait_group::<0>`
    /// or left in flight with `wait_group::<1>` when the second is issued.
    fn two_register_groups(wait_each: bool) -> Result<(), crate::sim::SimError> {
        // One `b` tile of 64 rows of 128 bytes, and the slack to align it.
        crate::sim::one_block(WARPGROUP, 64 * 128 + ATOM_BYTES, move || {
            let smem = dynamic_shared::<u32>().aligned_to(ATOM_BYTES);
            let t = thread_idx_x();
            for i in 0..16 {
                // SAFETY: 2048 words, each written by one thread.
                unsafe { smem.set_unchecked(t * 16 + i, 0) };
            }
            sync_threads();
            let mut acc = <[FragC; 8]>::ZERO;
            let frag: FragA = [0; 4];
            for _ in 0..2 {
                // SAFETY: the warpgroup together, the tile written and published above.
                unsafe {
                    fence(&mut acc);
                    acc.mma_tf32_rs(&frag, DescOperand::k_major(smem, 0), true);
                    commit_group();
                    if wait_each {
                        wait_group::<0, _>(&mut acc);
                    } else {
                        wait_group::<1, _>(&mut acc);
                    }
                }
            }
            // SAFETY: as above.
            unsafe { wait_group::<0, _>(&mut acc) };
        })
    }

    #[test]
    fn a_register_group_in_flight_under_the_next_is_the_kernels_error() {
        two_register_groups(true).expect("each group waited for");
        let e = two_register_groups(false).expect_err("one group left in flight");
        let text = e.to_string();
        assert!(text.contains("register-A group issued at"), "{text}");
        assert!(text.contains("wgmma.rs"), "{text}");
    }
}
