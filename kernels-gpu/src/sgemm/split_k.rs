//! Split-k: for products whose output has too few block tiles to fill the GPU (a small `m`
//! or `n` with a large `k`), `k` is cut into `s` slices and each slice's product is a block
//! tile of its own, `s` times the blocks. Slice `z` (`blockIdx.z`) computes
//! `a[:, z·slice ..+ slice] · b[z·slice ..+ slice, :]` with a rung-10 configuration into
//! its own `m × n` plane of a workspace; [`sgemm_split_k_reduce`] then adds the planes.
//!
//! Deterministic: no atomics. Every output is `Σ_z p_z`, added in increasing `z` from
//! `p_0`, where `p_z` is slice `z`'s FMA chain in `k` order from `0.0` (as every rung
//! computes it); past [`GROUP_PLANES`] slices, in order within each group of that many
//! consecutive slices ([`sgemm_split_k_group`], all groups at once), then the groups' sums
//! in order. The result is the same bits run to run, but not the bits of the unsplit
//! product. Error bound: each output's sum of `k` products goes through at most
//! `slice + s − 1 ≤ k + s` roundings (grouping changes the order of the adds, not their
//! number), so `|out − exact| ≤ (k + s) · 2⁻²⁴ · Σ|a||b|` (the f32 dot-product bound with
//! `k + s` in place of `k`).
//!
//! A configuration of the table gets a split-k entry point with `, split_k(name)` on its
//! line; [`super::SgemmConfig::split_k`] describes it.
//!
//! **Serial split-k** (`, serial_split_k(name)` on a rung-10 line,
//! [`super::SgemmConfig::serial_split_k`]) does the same sum in one launch, with no
//! workspace and no second pass over the output: the blocks of one output tile and its
//! `s` slices hand the tile on in slice order ([`SerialTurn`]). Slice 0 stores its partial
//! sum into `out`; slice `z > 0` waits until slice `z − 1` has said it is done (a per-tile
//! flag equal to `z`), adds its own partial to the tile it reads back ([`SerialSum`]:
//! `old + p_z`, the reduction's `sum + p_z`), stores it and passes the flag on; the last
//! slice applies the epilogue and sets the flag back to 0 for the next launch. So every
//! output is the same bits as the two-launch run of the same slices.
//!
//! Deadlock-free whatever order the GPU starts blocks in: a block does not take its tile and
//! slice from its block index but from a ticket, a counter it increments as it starts, with
//! the slice the slowest-varying part (ticket `t` is slice `t / tiles` of tile `t % tiles`).
//! A block waits only for the slice before its own of the same tile, which holds a lower
//! ticket, so it has started (it took its ticket first) and, by induction from slice 0
//! (which waits for nobody), finishes. The block that takes the last ticket puts the counter
//! back to 0.

use super::BlockTile;
use super::epilogue::{Epilogue, Store};
use super::unroll::{inlined, unroll};
use nvptx_device::atomic;
#[cfg(not(target_arch = "nvptx64"))]
use nvptx_device::catalogue::KernelSpec;
use nvptx_device::intrinsics::{F32x4, load_f32x4, load_f32x4_nc};
use nvptx_device::shared::SharedSlice;
use nvptx_device::thread::{self, sync_threads};

/// Threads per block of [`sgemm_split_k_reduce`], each summing four outputs.
pub const REDUCE_BLOCK: u32 = 256;

/// The most planes whose loads [`sum_planes`] issues before it adds the first of them: a
/// small output under many slices (177 outputs of 74 planes, say) is one block whose
/// threads each walk every plane, so one load in flight at a time would make the sum a
/// chain of `splits` L2 round trips. The adds stay in plane order.
pub const PLANES_IN_FLIGHT: u32 = 8;

/// The most slices one pass of [`sgemm_split_k_reduce`] adds for a split-k product: past
/// this many, the planes are added in groups of `GROUP_PLANES` consecutive ones, each
/// group in order into a plane of its own by [`sgemm_split_k_group`] (every group at once,
/// a block row each), then those planes in order by the reduction. A small output under
/// hundreds of slices (33 × 33 outputs of 261 planes: two blocks of the reduction, each
/// thread walking every plane) took 39 µs to add in one pass on an H200, beside a 65 µs
/// product.
pub const GROUP_PLANES: u32 = 64;

/// `Σ_z p_z` over the planes `z < planes` (`planes ≥ 1`), each `p_z = load(z)` the values
/// of `R` outputs in plane `z`, added in increasing `z` from `p_0`: `((p_0 + p_1) + p_2) + …`,
/// the order of every split-k sum. The loads of `(32 / R).clamp(1, PLANES_IN_FLIGHT)` planes
/// are issued before the first of their adds (at most 32 values in flight a thread).
#[inline(always)]
pub fn sum_planes<const R: usize>(planes: u32, load: impl Fn(u32) -> [f32; R]) -> [f32; R] {
    const Q: usize = PLANES_IN_FLIGHT as usize;
    let q = (32 / R).clamp(1, Q) as u32;
    let mut sum = load(0);
    let mut z = 1;
    while z + q <= planes {
        let mut v = [[0.0f32; R]; Q];
        unroll!(Q, |j| {
            if (j as u32) < q {
                v[j] = load(z + j as u32);
            }
        });
        unroll!(Q, |j| {
            if (j as u32) < q {
                unroll!(R, |e| sum[e] += v[j][e]);
            }
        });
        z += q;
    }
    while z < planes {
        let v = load(z);
        unroll!(R, |e| sum[e] += v[e]);
        z += 1;
    }
    sum
}

/// Where a block of a split rung-16 product ([`super::gemv`]) stores its partial sums, and
/// who adds the slices' planes: the kernels' `(out, ws, flags)` parameters.
///
/// * One slice (`gridDim.y == 1`): the block stores its outputs into `out`.
/// * Several: slice `blockIdx.y` stores its partials into plane `blockIdx.y` of `ws`
///   (`slices · m · n` floats). Without `flags` (null) the planes are left for
///   [`sgemm_split_k_reduce`], a second launch. With `flags` (8-byte words, each holding the
///   4-byte words of two output tiles: tile `t`'s is the `t`-th 4-byte word), all 0 at the
///   start of the launch, the block then counts itself in on its tile's word
///   ([`last_of_tile`](Self::last_of_tile)), and the tile's last block to do so adds the
///   planes into `out` in plane order ([`sum_planes`]), the bits of the second launch, and
///   puts the word back to 0.
#[derive(Clone, Copy, Debug)]
pub struct SlicePlanes {
    out: *mut f32,
    ws: *mut f32,
    flags: *mut u32,
    slices: u32,
    len: usize,
}

impl SlicePlanes {
    /// 8-byte words of `flags` for `tiles` output tiles: a 4-byte counter each.
    pub const fn flag_words(tiles: usize) -> usize {
        tiles.div_ceil(2)
    }

    /// The kernel's parameters, for an `m × n` output.
    #[inline(always)]
    pub fn new(out: *mut f32, ws: *mut f32, flags: *mut u64, m: u32, n: u32) -> Self {
        Self {
            out,
            ws,
            flags: flags as *mut u32,
            slices: thread::grid_dim_y(),
            len: m as usize * n as usize,
        }
    }

    /// Where this block stores its values: `out`, or its slice's plane of `ws`.
    #[inline(always)]
    pub fn dst(&self) -> *mut f32 {
        if self.slices > 1 {
            // Plane blockIdx.y < slices: inside ws.
            self.ws
                .wrapping_add(thread::block_idx_y() as usize * self.len)
        } else {
            self.out
        }
    }

    /// Whether this block adds its tile's planes into `out`: several slices, `flags` given,
    /// and it is the last of the tile's blocks to count itself in. Thread 0 adds 1 to the
    /// tile's word with an acquire-release atomic after a barrier (so every store of the
    /// block's partials comes before it) and tells the block through `turn`; the last one
    /// also puts the word back to 0.
    ///
    /// # Safety
    /// Every thread of the block calls it once, after its stores to [`dst`](Self::dst);
    /// `flags` (if not null) holds a 4-byte word for `tile`, touched during the
    /// launch only by this function in the tile's `slices` blocks, 0 at its start;
    /// `turn`'s first word is the block's to use.
    #[inline(always)]
    pub unsafe fn last_of_tile(&self, tile: u32, turn: SharedSlice<f32>) -> bool {
        if self.slices == 1 || self.flags.is_null() {
            return false;
        }
        sync_threads();
        if thread::thread_idx_x() == 0 {
            // SAFETY: the tile's word (the caller's contract), touched only atomically.
            let last = unsafe {
                let word = self.flags.add(tile as usize);
                let last = atomic::fetch_add_acq_rel_u32(word, 1) == self.slices - 1;
                if last {
                    // Every block of the tile has counted itself in: back to 0 for the
                    // next launch (adding -slices wraps it there).
                    atomic::fetch_add_u32(word, self.slices.wrapping_neg());
                }
                last
            };
            turn.set(0, if last { 1.0 } else { 0.0 });
        }
        sync_threads();
        turn.get(0) != 0.0
    }

    /// The sums over the planes of the `R` outputs at `idx` (those with `valid`), in plane
    /// order, stored into `out`.
    ///
    /// # Safety
    /// [`last_of_tile`](Self::last_of_tile) returned true to this block; each valid index is
    /// below `m · n`, one of the outputs of the tile whose blocks stored their planes before
    /// counting themselves in, and this thread's alone.
    #[inline(always)]
    pub unsafe fn store_sums<const R: usize>(&self, idx: [usize; R], valid: [bool; R]) {
        let sums = sum_planes(self.slices, |z| {
            let mut v = [0.0f32; R];
            unroll!(R, |e| {
                if valid[e] {
                    // SAFETY: idx[e] < m · n, in plane z < slices of ws, stored by the
                    // slice's block before its acquire-release count, which this block's
                    // count read after (the caller's contract). A plain load: the value was
                    // written during this launch, so not through the read-only path.
                    v[e] = unsafe { *self.ws.add(z as usize * self.len + idx[e]) };
                }
            });
            v
        });
        unroll!(R, |e| {
            if valid[e] {
                // SAFETY: idx[e] < m · n, this thread's output.
                unsafe { *self.out.add(idx[e]) = sums[e] };
            }
        });
    }
}

/// Slice `blockIdx.z` of a split-k product: `(a', b', plane, ks)`, the slice's columns of
/// `a` and rows of `b`, the workspace's `z`-th `m × n` plane and the slice's depth, for a
/// configuration's kernel on an `a` with row stride `k` (`sgemm_multistage_ld`). (Values,
/// not a callback: LLVM may outline a closure holding a whole kernel into a `.func`.)
///
/// Launch the configuration's grid with `cdiv(k, slice)` blocks in z.
///
/// # Safety
/// `a` and `b` are the product's `m × k` and `k × n` operands, `ws` holds
/// `cdiv(k, slice) · m · n` floats, `slice >= 1`.
#[inline(always)]
pub unsafe fn slice_of(
    a: *const f32, b: *const f32, ws: *mut f32, m: u32, n: u32, k: u32, slice: u32,
) -> (*const f32, *const f32, *mut f32, u32) {
    let z = thread::block_idx_z();
    let k0 = z * slice; // < k: the grid has cdiv(k, slice) slices
    let ks = slice.min(k - k0);
    // SAFETY: k0 < k, so a + k0 is inside a's first row and b + k0·n inside b; plane z of
    // ws is inside it (z < cdiv(k, slice)).
    unsafe {
        (
            a.add(k0 as usize),
            b.add(k0 as usize * n as usize),
            ws.add(z as usize * m as usize * n as usize),
            ks,
        )
    }
}

/// `out[i] = epilogue(Σ_z ws[z·len + i])` for this thread's four outputs, `z` from 0 to
/// `splits − 1` in order, [`PLANES_IN_FLIGHT`] planes' loads at a time (16-byte loads of
/// four consecutive outputs where `len % 4 == 0` and the buffers are aligned, else scalar
/// loads of one output in each quarter of the block's; the row and column the epilogue
/// sees are `i / n`, `i % n`).
///
/// Launch 1D with `cdiv(len, 4 · REDUCE_BLOCK)` blocks of [`REDUCE_BLOCK`] threads.
///
/// # Safety
/// `ws` holds `splits · len` floats, `out` `len = m · n` (which fits `u32`), `n >= 1`;
/// the epilogue's contract.
#[inline(always)]
pub unsafe fn split_k_reduce_with<E: Epilogue>(
    ws: *const f32, out: *mut f32, len: u32, n: u32, splits: u32, epilogue: E,
) {
    let vectors = len.is_multiple_of(4)
        && super::global::is_aligned16(ws)
        && super::global::is_aligned16(out);
    // This thread's four outputs: four consecutive ones from `4 · index` (16-byte loads),
    // else one in each quarter of the block's `4 · blockDim.x` (coalesced scalar loads).
    let (first, stride) = if vectors {
        (4 * thread::index_1d(), 1)
    } else {
        let threads = thread::block_dim_x();
        (
            4 * threads * thread::block_idx_x() + thread::thread_idx_x(),
            threads,
        )
    };
    if first >= len {
        return;
    }
    let at = inlined!(|e: usize| first + e as u32 * stride);
    // The four outputs' values in plane `z < splits` (zero past `len`).
    let load = inlined!(|z: u32| {
        let plane = z as usize * len as usize;
        if vectors {
            // SAFETY: first + 4 <= len (both multiples of 4); planes are len apart, so the
            // vector is inside plane z of ws and 16-byte aligned; nothing writes ws during
            // the launch.
            unsafe { load_f32x4_nc(ws.add(plane + first as usize)) }
        } else {
            let mut v = [0.0f32; 4];
            unroll!(4, |e| {
                if at(e) < len {
                    // SAFETY: at(e) < len, inside plane z of ws.
                    v[e] = unsafe { *ws.add(plane + at(e) as usize) };
                }
            });
            v
        }
    });
    let sum = sum_planes(splits, load);
    if vectors {
        let i = first;
        let old = if epilogue.reads_output() {
            // SAFETY: out[i..i + 4] is inside out, aligned, this thread's.
            unsafe { load_f32x4(out.add(i as usize)) }
        } else {
            [0.0; 4]
        };
        let mut w = [0.0f32; 4];
        unroll!(4, |e| {
            let j = i + e as u32;
            w[e] = epilogue.apply(j / n, j % n, sum[e], old[e]);
        });
        // SAFETY: as above.
        unsafe { *(out.add(i as usize) as *mut F32x4) = F32x4(w) };
    } else {
        unroll!(4, |e| {
            let j = at(e);
            if j < len {
                // SAFETY: j < len = m · n, so [j / n, j % n] is inside out; this thread's.
                unsafe { super::global::store_out(out, n, j / n, j % n, sum[e], &epilogue) };
            }
        });
    }
}

/// [`split_k_reduce_with`] with [`Store`]: the split-k product's second launch.
///
/// # Safety
/// As [`split_k_reduce_with`].
#[inline(always)]
pub unsafe fn sgemm_split_k_reduce(ws: *const f32, out: *mut f32, len: u32, n: u32, splits: u32) {
    // SAFETY: the caller's contract.
    unsafe { split_k_reduce_with(ws, out, len, n, splits, Store) }
}

/// Group `blockIdx.y` of the planes of a split-k product: `groups[g·len + i]` = the sum of
/// planes `g·GROUP_PLANES ..` (at most [`GROUP_PLANES`] of them, fewer in the last group,
/// `splits` in all) at output `i`, added in order from the group's first, as
/// [`sgemm_split_k_reduce`] adds them ([`sum_planes`]). [`sgemm_split_k_reduce`] over the
/// `cdiv(splits, GROUP_PLANES)` group planes then gives the product: its outputs are
/// `((S_0 + S_1) + …)`, each `S_g = ((p_{64g} + p_{64g+1}) + …)`.
///
/// Launch with [`sgemm_split_k_reduce`]'s grid for `len` in x and the groups in y.
///
/// # Safety
/// `ws` holds `splits · len` floats, `groups` `cdiv(splits, GROUP_PLANES) · len` and does
/// not overlap it; `len` fits `u32`, `blockIdx.y < cdiv(splits, GROUP_PLANES)`.
#[inline(always)]
pub unsafe fn sgemm_split_k_group(ws: *const f32, groups: *mut f32, len: u32, splits: u32) {
    let g = thread::block_idx_y();
    let first = g * GROUP_PLANES;
    let planes = GROUP_PLANES.min(splits - first);
    // SAFETY: planes first..first + planes < splits are inside ws, plane g inside groups
    // (the contract); each output of the plane is this thread's, stored as it is (`Store`,
    // with the row length `len`: a row and column are only the epilogue's view).
    unsafe {
        split_k_reduce_with(
            ws.add(first as usize * len as usize),
            groups.add(g as usize * len as usize),
            len,
            len,
            planes,
            Store,
        )
    }
}

/// The parameters of every split-k slice entry: `(a, b, ws, m, n, k, slice)`.
pub const SLICE_PARAMS: &[nvptx_device::catalogue::Param] = nvptx_device::params!(
    a: *const f32, b: *const f32, ws: *mut f32, m: u32, n: u32, k: u32, slice: u32
);

/// The parameters of every serial split-k entry: `(a, b, out, flags, m, n, k, slice)`,
/// `flags` the launch's ticket counter and one flag per output tile ([`SerialTurn::take`]).
pub const SERIAL_PARAMS: &[nvptx_device::catalogue::Param] = nvptx_device::params!(
    a: *const f32, b: *const f32, out: *mut f32, flags: *mut u64, m: u32, n: u32, k: u32,
    slice: u32
);

/// What a block of a tiled product does around the store of its tile: nothing
/// ([`Alone`]), or a serial split-k block's wait for the slice before it and hand-off to the
/// slice after it ([`SerialTurn`]).
pub trait TileTurn: Copy {
    /// Called by every thread of the block, after the tile's product and before its store.
    ///
    /// # Safety
    /// Every thread of the block calls it, at the same point.
    unsafe fn before_store(&self);

    /// Called by every thread of the block after its store.
    ///
    /// # Safety
    /// As [`before_store`](Self::before_store).
    unsafe fn after_store(&self);
}

/// A block that owns its output tile alone: nothing to wait for or hand on.
#[derive(Clone, Copy, Debug, Default)]
pub struct Alone;

impl TileTurn for Alone {
    #[inline(always)]
    unsafe fn before_store(&self) {}

    #[inline(always)]
    unsafe fn after_store(&self) {}
}

/// One block's part of a serial split-k product: its output tile, its slice of `k`, and the
/// tile's flag through which the slices take turns (see the [module docs](self)).
#[derive(Clone, Copy, Debug)]
pub struct SerialTurn {
    /// The block's output tile.
    pub tile: BlockTile,
    /// The first column of `a` (row of `b`) of its slice.
    pub k0: u32,
    /// The slice's depth.
    pub depth: u32,
    /// Its slice: 0 stores first, each next one adds to what the one before stored.
    pub slice: u32,
    /// Whether it is the tile's last slice (which applies the epilogue).
    pub last: bool,
    flag: *mut u64,
}

impl SerialTurn {
    /// Takes this block's ticket (thread 0 increments the counter `flags[0]` and the block
    /// reads the ticket through `ticket`, one shared word) and returns the tile and slice it
    /// stands for: ticket `t` is slice `t / tiles` of tile `t % tiles`, tiles numbered as
    /// the grid's x (`cdiv(n, bm)` columns, fastest) and y.
    ///
    /// # Safety
    /// Every thread of the block calls it once, first thing. The launch's grid has exactly
    /// `cdiv(n, bn) · cdiv(m, bm) · cdiv(k, slice)` blocks (`k, slice >= 1`), `flags` holds
    /// `1 + cdiv(n, bn) · cdiv(m, bm)` words, all 0 at the start of the launch (every
    /// launch leaves them so), 8-byte aligned, and nothing else touches them during it.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn take(
        ticket: SharedSlice<u32>, flags: *mut u64, m: u32, n: u32, k: u32, slice: u32, bm: u32,
        bn: u32,
    ) -> Self {
        let cols = n.div_ceil(bn);
        let tiles = cols * m.div_ceil(bm);
        let slices = k.div_ceil(slice);
        if thread::thread_idx_x() == 0 {
            let counter = flags as *mut u32;
            // SAFETY: flags[0]'s low word is the counter, touched only atomically.
            let t = unsafe { atomic::fetch_add_u32(counter, 1) };
            if t == tiles * slices - 1 {
                // The last ticket: every block has taken its own, so the counter goes back to
                // 0 for the next launch (adding -total wraps it there).
                // SAFETY: as above.
                unsafe { atomic::fetch_add_u32(counter, (tiles * slices).wrapping_neg()) };
            }
            ticket.set(0, t);
        }
        sync_threads();
        let t = ticket.get(0);
        let (z, index) = (t / tiles, t % tiles);
        let k0 = z * slice;
        Self {
            tile: BlockTile::at(index / cols * bm, index % cols * bn, m, n),
            k0,
            depth: slice.min(k - k0),
            slice: z,
            last: z == slices - 1,
            // SAFETY: index < tiles, so word 1 + index is inside flags.
            flag: unsafe { flags.add(1 + index as usize) },
        }
    }

    /// A turn of its own making: block tile `tile`, depth `k0 ..+ depth`, place `slice`
    /// among the tile's slices (the last if `last`), the tile's flag at `flag` (a stream-k
    /// piece, [`StreamK::turn`](super::stream_k::StreamK::turn)).
    #[inline(always)]
    pub fn piece(
        tile: BlockTile, k0: u32, depth: u32, slice: u32, last: bool, flag: *mut u64,
    ) -> Self {
        Self {
            tile,
            k0,
            depth,
            slice,
            last,
            flag,
        }
    }

    /// The epilogue this block stores its tile through: `inner` applied to the sum of the
    /// slices.
    #[inline(always)]
    pub fn epilogue<E: Epilogue>(&self, inner: E) -> SerialSum<E> {
        SerialSum {
            inner,
            first: self.slice == 0,
            last: self.last,
        }
    }
}

impl TileTurn for SerialTurn {
    /// Slice `z > 0`: thread 0 waits (an acquire load, polled) until the tile's flag is `z`,
    /// then the barrier makes slice `z − 1`'s stores visible to the whole block.
    #[inline(always)]
    unsafe fn before_store(&self) {
        if self.slice > 0 {
            if thread::thread_idx_x() == 0 {
                // SAFETY: the tile's flag, touched only atomically (`take`'s contract).
                while unsafe { atomic::load_acquire_u64(self.flag) } != self.slice as u64 {}
            }
            sync_threads();
        }
    }

    /// After the barrier (every thread's store done), thread 0 passes the tile on: flag
    /// `z + 1` with a release store, or 0 from the last slice.
    #[inline(always)]
    unsafe fn after_store(&self) {
        sync_threads();
        if thread::thread_idx_x() == 0 {
            // SAFETY: as above.
            unsafe {
                if self.last {
                    atomic::store_relaxed_u64(self.flag, 0);
                } else {
                    atomic::store_release_u64(self.flag, self.slice as u64 + 1);
                }
            }
        }
    }
}

/// The epilogue of a serial split-k block: the first slice stores its partial sum, each
/// next one adds its own to the partial it reads back (`old + acc`), and the last one hands
/// the whole sum to `inner`. `inner` must not [read the output](Epilogue::reads_output): the
/// output holds the partial sums until the last slice.
#[derive(Clone, Copy, Debug)]
pub struct SerialSum<E> {
    inner: E,
    first: bool,
    last: bool,
}

impl<E: Epilogue> Epilogue for SerialSum<E> {
    /// Every slice but the first (the same answer for the whole block).
    #[inline(always)]
    fn reads_output(&self) -> bool {
        !self.first
    }

    #[inline(always)]
    fn apply(&self, row: u32, col: u32, acc: f32, old: f32) -> f32 {
        let sum = if self.first { acc } else { old + acc };
        if self.last {
            self.inner.apply(row, col, sum, 0.0)
        } else {
            sum
        }
    }
}

/// How to launch [`sgemm_split_k_reduce`] for `len` outputs (as items). (Host only, as
/// the catalogue: the entry's parameter list exists wherever its simulator twin does.)
#[cfg(not(target_arch = "nvptx64"))]
pub const REDUCE: KernelSpec = KernelSpec::items(
    "sgemm_split_k_reduce",
    entry::params::sgemm_split_k_reduce,
    REDUCE_BLOCK,
    4 * REDUCE_BLOCK,
);

/// How to launch [`sgemm_split_k_group`] for `len` outputs (as items; the groups in y, set
/// by the host).
#[cfg(not(target_arch = "nvptx64"))]
pub const GROUP: KernelSpec = KernelSpec::items(
    "sgemm_split_k_group",
    entry::params::sgemm_split_k_group,
    REDUCE_BLOCK,
    4 * REDUCE_BLOCK,
);

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    sgemm_split_k_reduce(ws: *const f32, out: *mut f32, len: u32, n: u32, splits: u32)
        => sgemm_split_k_reduce;
    sgemm_split_k_group(ws: *const f32, groups: *mut f32, len: u32, splits: u32)
        => sgemm_split_k_group;
}
