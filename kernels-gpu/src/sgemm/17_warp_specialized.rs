//! Rung 17: `bf16`, `f16` or TF32 matrices (f32 accumulation and output) on Hopper's
//! warpgroup tensor cores, fed by the tensor-memory accelerator, with the warpgroups of a
//! block specialized: one *producer* warpgroup whose single thread issues every copy, and
//! `CONSUMERS` warpgroups that only multiply (PTX `sm_90a`). One kernel body for the three
//! element types ([`Element`]: element size, instruction, `b`'s layout).
//!
//! * **Copies.** `a` (`m × k`, row-major) and `b` are read in k-tiles of one 128-byte row
//!   (`T::BK`: 64 two-byte elements or 32 four-byte ones) by the tensor-memory accelerator
//!   ([`copy_2d_bytes`]) into a ring of `STAGES` slots, each an `a` tile of `BM` rows and a
//!   `b` tile, all 128-byte swizzled. A 16-bit `b` is `k × n` row-major, copied in boxes of
//!   64 columns × 64 rows and read MN-major; `.tf32` takes only K-major operands, so a TF32
//!   `b` comes transposed (`bᵀ`, `n × k`, as the TF32 rungs' packing writes it), one box of
//!   `BN` rows of 32 depths, except for the [`Tf32RowB`] rows, which copy it as it lies
//!   (boxes of 32 columns × 32 depths) and swap the instructions' operands (below). A slot
//!   is `(BM + BN) · 128` bytes either way. Elements past the matrices arrive as zeros, so
//!   edges need no code of their own.
//! * **The ring.** Slot `s` has two [`Mbarrier`]s: `full[s]` (the producer's arrival with
//!   the slot's bytes) and `empty[s]` (one arrival per consumer warpgroup), walked with a
//!   [`PipelineState`]: the producer waits for `empty`, arms `full` and copies; a consumer
//!   waits for `full`, multiplies, and releases the slot to the producer once the
//!   multiplications that read it are done.
//! * **Multiplies.** Consumer `c` owns rows `64c..64c + 64` of the block's `BM × BN` tile as
//!   the accumulators of `wgmma.m64nNk16` (16-bit) or `wgmma.m64nNk8` (TF32), `N = BN`: per
//!   k-tile, four instructions (one per 32 bytes of a row), `a` read K-major and `b` as
//!   it lies, straight from the slot ([`DescOperand`]). One group of them stays in flight
//!   (`wait_group 1`): the slot of the group before is released while this one runs. Where
//!   the instructions read `A` from registers (a swapped tile), the next k-tile's loads
//!   rewrite those registers, which must not change until the group that reads them
//!   completes: each group is waited for (`wait_group 0`) and its slot released at once,
//!   and the other consumer's groups keep the tensor cores busy. (With one group left in
//!   flight over reloaded registers, every TF32 register entry computed wrong products on
//!   an H200, though the simulator, which reads registers when an instruction issues,
//!   passed them; it now fails such a kernel.)
//!   Where the element type is [`SWAPPED`](Element::SWAPPED) ([`Tf32RowB`]), the
//!   instructions compute the tile transposed: consumer `c` owns columns `64c..64c + 64`,
//!   loads them from `b`'s boxes into the register fragments of the instructions' `A`
//!   ([`swapped_column`] giving each fragment row's column) and multiplies them by `a`'s
//!   K-major tile as their `B`.
//! * **TF32's rounding.** `wgmma` takes the f32 bits as they are (the low 13 mantissa bits
//!   ignored, a truncation), so both operands are rounded to TF32 before it reads them, and
//!   the copies do it: a TF32 caller maps `a` and `b` with TF32 as the element type
//!   (`CU_TENSOR_MAP_DATA_TYPE_TFLOAT32`; the simulator's
//!   [`TensorMap::simulated_tf32`]), and the accelerator rounds every element to the
//!   nearest, ties to even, as it lands in the slot. The kernel spends no instruction on it
//!   (rounding in the kernel took a pass over each `a` tile in shared memory, or the
//!   consumers' registers, and was 2–40% slower on an H200).
//! * **Registers.** With two consumers or more, the producer gives up registers
//!   (`setmaxnreg.dec` to [`PRODUCER_REGS`]) and the consumers take them (`setmaxnreg.inc` to
//!   [`CONSUMER_REGS`]): 128 accumulators a thread fit, with room for addresses.
//! * **Persistent.** The grid is at most one block per multiprocessor; each block walks its
//!   share of the output tiles ([`Schedule`]: tile `blockIdx.x`, then every `gridDim.x`-th,
//!   in groups of `GROUP` block rows for L2 reuse). Producer and consumers walk the same
//!   schedule on their own, so they agree without talking; the producer fills the next
//!   tile's slots while the consumers store this one's outputs.
//! * **Outputs.** Where every row of the output starts 8-byte aligned (`n` even, `out`
//!   8-byte aligned), each thread stores its fragments where they lie through the rungs'
//!   [`Epilogue`] and [`store_pair`]: two columns (8 bytes) a store inside, bounds-checked
//!   at the edges. Else each store would be one 4-byte output, a partial 32-byte sector a
//!   request, so the table's `rows` entries (`ROWS`, [`WsConfig::rows`], the host's choice
//!   for an odd `n`) stage them: each consumer writes its 64 rows 32 columns at a time
//!   ([`OUT_BOX_COLS`]) into one of its [`OUT_BOXES`] boxes in shared memory (128-byte
//!   swizzled), its threads meet at a barrier of their own (`bar.sync 1 + c, 128`,
//!   [`sync_named`](thread::sync_named)), and each warp stores rows of the box, 32 columns
//!   (128 contiguous bytes) an instruction, bounds-checked, while the next box fills the
//!   other one. A swapped tile ([`Element::SWAPPED`]) stores from registers. (The staging
//!   is its own entries, not a branch in every one: beside the other store's code it left
//!   the large tiles with local memory, spills, and an even `n` 3–8% slower on an H200.)
//!
//! * **Clusters** (the table's `pair` rows, `CLUSTER = 2`; not the swapped tiles). Blocks
//!   come in clusters of two ([`nvptx_device::cluster`]; the entries declare the shape,
//!   `.reqnctapercluster 2, 1, 1`) on vertically adjacent tiles, which read the same `b`:
//!   the [`Schedule`] walks tiles of `2 · BM` rows, and rank `r` of the pair takes rows
//!   `r · BM..` of each. Each block's producer copies its own `a` tile and half of `b` (a
//!   16-bit `b`: box `j` from rank `j % 2`; TF32's `bᵀ`: rows `r · BN / 2..` of the tile, the
//!   map's boxes half as tall, [`WsConfig::transposed_b_box_rows`]), multicast to both
//!   blocks, so each block's `full`
//!   phase still receives a whole slot, half of `b` from its peer (whose bytes may land
//!   before the block's own `expect_tx`, which the barrier allows). A slot may be refilled
//!   only once both blocks' consumers are done with it, so `empty` counts the consumers of
//!   the pair, each releasing the slot in both blocks ([`Mbarrier::arrive_cluster`]). A
//!   cluster barrier after the barriers' initialisation keeps either block from arriving or
//!   copying into the other's before it is ready, and each producer waits, after its last
//!   copy, for every slot's last release (a *producer tail*), so that no block exits while
//!   its peer's arrivals may still reach its barriers. The second block of a pair on the
//!   last row of tiles past `m` copies and multiplies zeros and stores nothing.
//!
//! Launch with `128 · (CONSUMERS + 1)` threads per block, a grid of at most one block per
//! multiprocessor (and at most one per output tile; whole clusters, as many as run at once,
//! for the `pair` rows), [`geometry`]'s dynamic shared memory,
//! and device-global tensor maps of `a` (boxes of one row × `BM` rows) and `b` (16-bit:
//! boxes of 64 × 64; TF32's `bᵀ`: one row × `BN` rows, `BN / 2` for a pair), on a device
//! that runs `sm_90a` code.

use super::epilogue::Epilogue;
use super::parts::global::store_out;
use super::parts::unroll::unroll;
use super::swizzled::grouped_tile;
use super::tensor_core::store_pair;
use super::{BlockTile, Geometry, cdiv};
use nvptx_device::catalogue::KernelSpec;
use nvptx_device::cluster;
use nvptx_device::intrinsics::opaque;
use nvptx_device::mbarrier::{Mbarrier, PipelineState, fence_init};
use nvptx_device::mma::{FragA, FragC, a_position, c_position};
use nvptx_device::shared::{SharedSlice, dynamic_shared};
use nvptx_device::thread;
use nvptx_device::tma::{ROW_BYTES, TensorMap, copy_2d_bytes};
use nvptx_device::warp::WARP_SIZE;
use nvptx_device::wgmma::{
    self, ATOM_BYTES, Accumulators, DescOperand, Half, K_16BIT, K_TF32, ROW_WORDS, WARPGROUP,
    setmaxnreg_dec, setmaxnreg_inc, sw128_index,
};

#[cfg(all(
    feature = "hopper",
    target_arch = "nvptx64",
    not(target_feature = "sm_90a")
))]
compile_error!("the `hopper` feature's entry points use wgmma: build them for sm_90a");

/// Registers a thread of the producer warpgroup keeps.
pub const PRODUCER_REGS: u32 = 40;
/// Registers a thread of a consumer warpgroup may use: with two consumers and the producer
/// at [`PRODUCER_REGS`], `128 · (40 + 2 · 232)` = 64,512 of the multiprocessor's 65,536.
pub const CONSUMER_REGS: u32 = 232;
/// Rows of an output box (a consumer's, where it stages its rows): one instruction's `M`.
pub const OUT_BOX_ROWS: u32 = wgmma::M;
/// Columns of an output box: one 128-byte row of f32.
pub const OUT_BOX_COLS: u32 = ROW_BYTES / 4;
/// Bytes of an output box in shared memory (128-byte swizzled).
pub const OUT_BOX_BYTES: u32 = OUT_BOX_ROWS * ROW_BYTES;
/// Output boxes a consumer has in shared memory: one fills while the other is stored.
pub const OUT_BOXES: u32 = 2;

/// What a configuration multiplies: the element type of `a` and `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    Bf16,
    F16,
    /// f32 elements multiplied as TF32, each rounded to TF32 (to nearest, ties to even) by
    /// the tensor-memory accelerator as it is copied (the [module](self)'s *TF32's
    /// rounding*); `b` transposed by the caller but for the swapped tiles ([`Tf32RowB`]).
    Tf32,
}

impl Input {
    /// Its name on command lines and in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bf16 => "bf16",
            Self::F16 => "f16",
            Self::Tf32 => "tf32",
        }
    }
}

/// The element types, as the kernel's generic parameter: how a k-tile lies in a slot and
/// which instruction multiplies it.
pub trait Element {
    /// Which it is.
    const INPUT: Input;
    /// Bytes of an element.
    const SIZE: u32;
    /// The depth of a k-tile: one 128-byte row.
    const BK: u32 = ROW_BYTES / Self::SIZE;
    /// Whether `b` comes transposed (`n × k`, K-major in the slot, one box of `BN` rows);
    /// else row-major `k × n`, read MN-major from boxes of 64 columns.
    const B_TRANSPOSED: bool;
    /// Whether the instructions read their `A` from registers: `b`'s fragments in a swapped
    /// tile ([`SWAPPED`](Self::SWAPPED)); else from the slot.
    const REGISTER_A: bool = Self::SWAPPED;
    /// Whether the instructions compute each tile transposed, `Dᵀ = bᵀ · aᵀ` ([`Tf32RowB`]):
    /// `b`'s tile (row-major, as it lies) is the instructions' `A`, read into registers by
    /// the consumers, and `a`'s tile (K-major) their `B`; consumer `c` owns columns
    /// `64c..64c + 64` of the block's tile, whose rows are the instruction's `N`.
    const SWAPPED: bool = false;

    /// The operands of instruction `s` of four on a k-tile: the depths `32 s` bytes into
    /// the rows of the `a` tile at byte `a_tile` of `smem` (a consumer's 64 rows) and of the
    /// `b` tile at `b_tile`, laid out as a slot holds them.
    fn operands(
        smem: SharedSlice<u32>, a_tile: u32, b_tile: u32, s: u32,
    ) -> (DescOperand, DescOperand);

    /// `D = A · B + D` (`D = A · B` unless `accumulate`) on [`operands`](Self::operands).
    ///
    /// # Safety
    /// As [`Accumulators::mma_16bit`].
    unsafe fn mma<A: Accumulators>(acc: &mut A, a: DescOperand, b: DescOperand, accumulate: bool);
}

/// `bf16` elements.
pub struct Bf16;
/// `f16` elements.
pub struct F16;

/// [`Element`] for the 16-bit type `$t`, the `Half` (and `Input`) variant `$input`.
macro_rules! half_element {
    ($t:ident, $input:ident) => {
        impl Element for $t {
            const INPUT: Input = Input::$input;
            const SIZE: u32 = 2;
            const B_TRANSPOSED: bool = false;

            #[inline(always)]
            fn operands(
                smem: SharedSlice<u32>, a_tile: u32, b_tile: u32, s: u32,
            ) -> (DescOperand, DescOperand) {
                let depth = s * K_16BIT;
                let a = DescOperand::k_major(smem, a_tile + 2 * depth);
                let b_at = b_tile + depth * ROW_BYTES;
                (a, DescOperand::mn_major(smem, b_at, Self::BK * ROW_BYTES))
            }

            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn mma<A: Accumulators>(
                acc: &mut A, a: DescOperand, b: DescOperand, accumulate: bool,
            ) {
                // SAFETY: the caller's contract.
                unsafe { acc.mma_16bit::<1>(Half::$input, a, b, accumulate) };
            }
        }
    };
}

half_element!(Bf16, Bf16);
half_element!(F16, F16);

/// f32 elements multiplied as TF32, `b` transposed, both operands read by the instructions
/// from the slot.
pub struct Tf32;

impl Element for Tf32 {
    const INPUT: Input = Input::Tf32;
    const SIZE: u32 = 4;
    const B_TRANSPOSED: bool = true;

    #[inline(always)]
    fn operands(
        smem: SharedSlice<u32>, a_tile: u32, b_tile: u32, s: u32,
    ) -> (DescOperand, DescOperand) {
        let depth = 4 * s * K_TF32;
        (
            DescOperand::k_major(smem, a_tile + depth),
            DescOperand::k_major(smem, b_tile + depth),
        )
    }

    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn mma<A: Accumulators>(acc: &mut A, a: DescOperand, b: DescOperand, accumulate: bool) {
        // SAFETY: the caller's contract.
        unsafe { acc.mma_tf32_k_major(a, b, accumulate) };
    }
}

/// [`Element`] for `$t`, another way of running [`Tf32`]'s instruction on its operands:
/// `b` transposed or not, the tile swapped or not.
macro_rules! tf32_variant {
    ($t:ident, b_transposed: $bt:expr, swapped: $sw:expr) => {
        impl Element for $t {
            const INPUT: Input = Input::Tf32;
            const SIZE: u32 = Tf32::SIZE;
            const B_TRANSPOSED: bool = $bt;
            const SWAPPED: bool = $sw;

            #[inline(always)]
            fn operands(
                smem: SharedSlice<u32>, a_tile: u32, b_tile: u32, s: u32,
            ) -> (DescOperand, DescOperand) {
                Tf32::operands(smem, a_tile, b_tile, s)
            }

            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn mma<A: Accumulators>(
                acc: &mut A, a: DescOperand, b: DescOperand, accumulate: bool,
            ) {
                // SAFETY: the caller's contract.
                unsafe { Tf32::mma(acc, a, b, accumulate) };
            }
        }
    };
}

/// f32 elements multiplied as TF32, `b` row-major as it lies and the tile computed
/// transposed ([`Element::SWAPPED`]): no packing of `b` before the kernel. `b`'s tile comes
/// in boxes of 32 columns × 32 depths (128-byte swizzled), from which each consumer loads
/// its 64 columns into the register fragments of the instructions' `A` (`b_fragment`);
/// `a`'s tile (K-major, as [`Tf32`]'s) is the instructions' `B`. Both come rounded by the
/// copies, as [`Tf32`]'s do.
pub struct Tf32RowB;

tf32_variant!(Tf32RowB, b_transposed: false, swapped: true);

/// Rows of 128 bytes in a slot's `b` tile for `bn` columns: `bn` rows of `bᵀ`, or the
/// k-tile's rows of as many boxes of one row's columns (`T::BK`) as cover `bn`.
pub const fn b_rows<T: Element>(bn: u32) -> u32 {
    if T::B_TRANSPOSED {
        bn
    } else {
        bn.div_ceil(T::BK) * T::BK
    }
}

/// The block tile `(bm, bn)` of a configuration on `T` with `consumers` warpgroups and `n`
/// columns an instruction: `64 · consumers` rows of `n` columns, or, where [`Element::SWAPPED`],
/// `n` rows of `64 · consumers` columns.
pub const fn block_tile<T: Element>(consumers: u32, n: u32) -> (u32, u32) {
    if T::SWAPPED {
        (n, wgmma::M * consumers)
    } else {
        (wgmma::M * consumers, n)
    }
}

/// The column (within a consumer's 64) of row `r` of the instructions' `A` in a swapped
/// tile ([`Element::SWAPPED`]): row `16w + 8h + g` (warp `w`, half `h`, group `g` of its
/// lanes) is column `32h + 16 (g / 4) + 4w + g % 4`. So each of a fragment's loads from
/// the 128-byte-swizzled boxes of `b` hits 32 different banks (`b_fragment`); the
/// accumulators' rows are stored to these columns.
#[inline(always)]
pub const fn swapped_column(r: u32) -> u32 {
    let (w, h, g) = (r / 16, (r / 8) % 2, r % 8);
    32 * h + 16 * (g / 4) + 4 * w + g % 4
}

/// This thread's fragment of step `s` (depths `8s..8s + 8`) of a swapped tile's `A`
/// ([`Element::SWAPPED`]), as the copies rounded it: element `(row, kk)` of warp `warp`'s rows
/// ([`a_position`](nvptx_device::mma::a_position)) is `b`'s depth `8s + kk`, column
/// [`swapped_column`] of the consumer's 64, read from its two 32-column boxes at word `at`
/// of `smem` (each `T::BK` rows of 32 words, 128-byte swizzled, the second after the
/// first).
///
/// # Safety
/// The two boxes lie inside `smem`, complete, and nothing writes them meanwhile.
#[inline(always)]
unsafe fn b_fragment(smem: SharedSlice<u32>, at: u32, s: u32, warp: u32, lane: u32) -> FragA {
    core::array::from_fn(|reg| {
        let (rr, kk) = a_position(lane, reg);
        let column = swapped_column(16 * warp + rr);
        let (half, c) = (column / ROW_WORDS, column % ROW_WORDS);
        let word = at + half * Tf32::BK * ROW_WORDS + sw128_index(8 * s + kk, c);
        // SAFETY: inside the boxes (the caller's contract): depth below 32, column below 64.
        unsafe { smem.get_unchecked(word) }
    })
}

/// The work of one block of a persistent grid, in order: unit `blockIdx.x`, then every
/// `gridDim.x`-th, of `tiles_m × tiles_n × splits` units. Unit `u` is slice `u % splits` of
/// the depth of tile `u / splits`, the tiles numbered in groups of `group` block rows (down
/// a group's rows first, then across its columns; 0 or 1: row by row).
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    tiles_m: u32,
    tiles_n: u32,
    group: u32,
    splits: u32,
    next: u32,
    step: u32,
}

/// One unit of a [`Schedule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The tile's block row and column.
    pub row: u32,
    pub col: u32,
    /// The slice of the depth (0 without split-k).
    pub split: u32,
}

impl Schedule {
    /// This block's schedule over `m × n` outputs in `bm × bn` tiles, each in `splits`
    /// slices of depth: where blocks come in clusters of `cluster` (along x), this cluster's
    /// schedule over tiles of `cluster · bm` rows, each block taking its rank's `bm` rows
    /// of each ([`Unit::row`] counts tiles of `bm` rows either way).
    #[inline(always)]
    pub fn new(m: u32, n: u32, bm: u32, bn: u32, group: u32, splits: u32, cluster: u32) -> Self {
        Self::of_block(
            m,
            n,
            (bm * cluster, bn),
            group,
            splits,
            thread::block_idx_x() / cluster,
            thread::grid_dim_x() / cluster,
        )
    }

    /// The schedule of block `block` of `blocks`.
    #[inline(always)]
    pub fn of_block(
        m: u32, n: u32, (bm, bn): (u32, u32), group: u32, splits: u32, block: u32, blocks: u32,
    ) -> Self {
        Self {
            tiles_m: cdiv(m, bm),
            tiles_n: cdiv(n, bn),
            group: group.max(1),
            splits: splits.max(1),
            next: block,
            step: blocks,
        }
    }

    /// The next unit, if any.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Unit> {
        // Checked, not panicking, divisions (`splits` is at least 1): see `grouped_tile`,
        // which also ends the schedule (a unit past the last is a tile past the grid).
        let (t, split) = (
            self.next.checked_div(self.splits)?,
            self.next.checked_rem(self.splits)?,
        );
        let (row, col) = grouped_tile(t, self.tiles_m, self.tiles_n, self.group)?;
        self.next += self.step;
        Some(Unit { row, col, split })
    }
}

/// The k-tiles `first..end` of slice `split` of `splits` over `k_tiles`: `cdiv(k_tiles,
/// splits)` each, the last ones shorter or empty.
#[inline(always)]
pub fn slice_tiles(k_tiles: u32, splits: u32, split: u32) -> (u32, u32) {
    let per = cdiv(k_tiles, splits.max(1));
    let first = (split * per).min(k_tiles);
    (first, (first + per).min(k_tiles))
}

/// `out[m×n] = a[m×k] · b[k×n]` (`a` and `b` of element type `T`, read through the tensor
/// maps `amap` and `bmap`: `a` row-major, `b` row-major or, where `T::B_TRANSPOSED`, as
/// `bᵀ`; f32 `out`, row-major) through `epilogue`, by
/// `CONSUMERS` warpgroups of 64 rows each and a producer: block tiles of
/// `BM = 64 · CONSUMERS` × `BN = A::N`, a ring of `STAGES` slots, blocks taken in groups of
/// `GROUP` block rows.
///
/// # Safety
/// `amap` and `bmap` point to tensor maps (device memory, written before the launch) of the
/// `m × k` matrix in boxes of `T::BK` × `BM` elements and of the `k × n` matrix in boxes of
/// 64 × 64 (`n × k`, boxes of `T::BK` × `BN`, where `T::B_TRANSPOSED`), with the 128-byte
/// swizzle; `out` points to `splits · m · n` valid f32 (`splits` ≥ 1 planes of `m × n`: with
/// more than one, slice `z` of the depth, `cdiv(cdiv(k, T::BK), splits)` k-tiles, goes to plane
/// `z`, to be added in order by the split-k reduction) that overlap neither matrix, and `m·n`
/// fits `u32`; the launch is as the [module](self) says.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_warp_specialized<
    const CONSUMERS: usize,
    const STAGES: u32,
    const GROUP: u32,
    const ROWS: bool,
    const CLUSTER: u32,
    T: Element,
    A: Accumulators,
    E: Epilogue,
>(
    amap: *const TensorMap, bmap: *const TensorMap, out: *mut f32, m: u32, n: u32, k: u32,
    splits: u32, epilogue: E,
) {
    const { assert!(CONSUMERS >= 1 && STAGES >= 2) };
    const { assert!(T::SWAPPED || A::N.is_multiple_of(OUT_BOX_COLS)) };
    // Clusters share `b`: its boxes of 64 columns (16-bit, row-major `b`), or halves of its
    // box of `BN` rows (TF32's `bᵀ`), each a whole number of swizzle atoms.
    const { assert!(CLUSTER == 1 || (CLUSTER == 2 && !T::SWAPPED && (A::N / 2).is_multiple_of(8))) };
    let (bm, bn) = block_tile::<T>(CONSUMERS as u32, A::N);
    let (a_bytes, b_bytes) = (bm * ROW_BYTES, b_rows::<T>(bn) * ROW_BYTES);
    let stage_bytes = a_bytes + b_bytes;
    let smem = dynamic_shared::<u32>().aligned_to(ATOM_BYTES);
    // The output boxes follow the ring (none for a swapped tile), then the barriers.
    let out_boxes = STAGES * stage_bytes;
    let barriers = (out_boxes + out_box_bytes::<T>(CONSUMERS as u32, ROWS)) / 4;
    let full = |s: u32| Mbarrier::new(smem, barriers + 2 * s);
    let empty = |s: u32| Mbarrier::new(smem, barriers + 2 * (STAGES + s));
    let t = thread::thread_idx_x();
    if t == 0 {
        for s in 0..STAGES {
            // SAFETY: one thread, before any other use; the fence and barrier follow.
            unsafe {
                full(s).init_count(1);
                // Every consumer of the cluster releases the slot: each block's producer
                // refills it in all of them.
                empty(s).init_count(CONSUMERS as u32 * CLUSTER);
            }
        }
        fence_init();
    }
    // The barriers initialized before any block of the cluster arrives on them or copies
    // into this one.
    if CLUSTER > 1 {
        // SAFETY: every thread of every block of the cluster, before any returns.
        unsafe { cluster::sync() };
    } else {
        thread::sync_threads();
    }
    let rank = if CLUSTER > 1 {
        cluster::block_rank()
    } else {
        0
    };
    let k_tiles = cdiv(k, T::BK);
    let mut schedule = Schedule::new(m, n, bm, bn, GROUP, splits, CLUSTER);
    let group = t / WARPGROUP;
    // One consumer has registers enough without the producer's (and a raise to fewer than
    // the kernel was given would be a decrease).
    let rebalance = CONSUMERS >= 2;
    if group == 0 {
        if rebalance {
            // SAFETY: the whole warpgroup; the launch bounds leave room for every warpgroup.
            unsafe { setmaxnreg_dec::<PRODUCER_REGS>() };
        }
        if t != 0 {
            return;
        }
        let mut state = PipelineState::<STAGES>::producer_start();
        while let Some(unit) = schedule.next() {
            let (tile_row, tile_col) = (unit.row * CLUSTER + rank, unit.col);
            let (first, end) = slice_tiles(k_tiles, splits, unit.split);
            for kt in first..end {
                let (slot, bar) = (state.index * stage_bytes, full(state.index));
                // SAFETY: the slot is free once the consumers' release of it completes; the
                // phase then expects the tiles' bytes, which the copies bring (boxes past
                // the matrices count whole, zero-filled); maps and offsets as the contract
                // says, every tile 1024-byte aligned (slots and boxes are multiples of it).
                unsafe {
                    empty(state.index).wait(state.empty_parity());
                    bar.expect_tx(stage_bytes);
                    let depth = kt * T::BK;
                    copy_2d_bytes(smem, slot, amap, depth, tile_row * bm, &bar, 0);
                    if T::B_TRANSPOSED && CLUSTER > 1 {
                        // Rank `r` copies rows `r · BN / 2..` of the box (the map's boxes
                        // are half as tall), to both blocks.
                        let (half, mask) = (bn / CLUSTER, (1 << CLUSTER) - 1);
                        let at = slot + a_bytes + rank * half * ROW_BYTES;
                        copy_2d_bytes(
                            smem,
                            at,
                            bmap,
                            depth,
                            tile_col * bn + rank * half,
                            &bar,
                            mask,
                        );
                    } else if T::B_TRANSPOSED {
                        copy_2d_bytes(smem, slot + a_bytes, bmap, depth, tile_col * bn, &bar, 0);
                    } else {
                        // In a cluster, box `j` comes from rank `j % CLUSTER`, to every block.
                        let mask = if CLUSTER > 1 { (1 << CLUSTER) - 1 } else { 0 };
                        let mut j = rank;
                        while j < cdiv(bn, T::BK) {
                            let x = tile_col * bn + j * T::BK;
                            let at = slot + a_bytes + j * T::BK * ROW_BYTES;
                            copy_2d_bytes(smem, at, bmap, x, depth, &bar, mask);
                            j += CLUSTER;
                        }
                    }
                }
                state.advance();
            }
        }
        if CLUSTER > 1 {
            // The block stays until every consumer of the cluster has released every slot
            // (their arrivals reach this block's barriers), as the peer's copies into this
            // block end before its own consumers do.
            for _ in 0..STAGES {
                // SAFETY: the phases the consumers complete, as in the loop.
                unsafe { empty(state.index).wait(state.empty_parity()) };
                state.advance();
            }
        }
        return;
    }
    if rebalance {
        // SAFETY: the whole warpgroup, as for the producer.
        unsafe { setmaxnreg_inc::<CONSUMER_REGS>() };
    }
    let consumer = group - 1;
    let leader = t.is_multiple_of(WARPGROUP);
    let mut state = PipelineState::<STAGES>::consumer_start();
    let mut acc = A::ZERO;
    // Outputs staged in the consumers' boxes, `stored` boxes so far.
    let staged = ROWS && !T::SWAPPED;
    let mut stored = 0u32;
    while let Some(unit) = schedule.next() {
        let (tile_row, tile_col) = (unit.row * CLUSTER + rank, unit.col);
        let (first, end) = slice_tiles(k_tiles, splits, unit.split);
        // The slot of the group in flight, released once the next group is issued.
        let mut held = None;
        for kt in first..end {
            let slot = state.index * stage_bytes;
            // SAFETY: the warpgroup together; the slot's tiles have landed once its `full`
            // phase completes, visible to the asynchronous proxy (the copies write through
            // it); the producer refills it only after this warpgroup's release below, which
            // follows the wait for the multiplications that read it.
            unsafe {
                full(state.index).wait(state.phase);
                if T::SWAPPED {
                    // This consumer's two boxes of `b` as the instructions' `A`, into
                    // registers before the fence; the whole `a` tile as their `B`.
                    let boxes = (slot + a_bytes) / 4 + consumer * 2 * T::BK * ROW_WORDS;
                    let (warp, lane) = ((t % WARPGROUP) / WARP_SIZE, t % WARP_SIZE);
                    let frags: [FragA; 4] =
                        core::array::from_fn(|s| b_fragment(smem, boxes, s as u32, warp, lane));
                    wgmma::fence(&mut acc);
                    unroll!(4, |s| {
                        let operand = DescOperand::k_major(smem, slot + 4 * s as u32 * K_TF32);
                        acc.mma_tf32_rs(&frags[s], operand, kt > first || s > 0);
                    });
                } else {
                    wgmma::fence(&mut acc);
                    unroll!(4, |s| {
                        let a_tile = slot + consumer * wgmma::M * ROW_BYTES;
                        let (a, b) = T::operands(smem, a_tile, slot + a_bytes, s as u32);
                        T::mma(&mut acc, a, b, kt > first || s > 0);
                    });
                }
                wgmma::commit_group();
                if T::REGISTER_A {
                    // The next k-tile's loads rewrite the `A` registers, which must stay
                    // as they are until this group completes: wait for it, and free its slot
                    // (the other consumer's groups keep the tensor cores busy meanwhile).
                    wgmma::wait_group::<0, A>(&mut acc);
                    if leader {
                        release::<CLUSTER>(empty(state.index));
                    }
                } else {
                    wgmma::wait_group::<1, A>(&mut acc);
                    if let Some(previous) = held
                        && leader
                    {
                        release::<CLUSTER>(empty(previous));
                    }
                    held = Some(state.index);
                }
            }
            state.advance();
        }
        // SAFETY: the warpgroup together; after the last group, the accumulators are
        // readable and the last slot free.
        unsafe {
            wgmma::wait_group::<0, A>(&mut acc);
            if let Some(last) = held
                && leader
            {
                release::<CLUSTER>(empty(last));
            }
        }
        if first == end {
            acc = A::ZERO;
        }
        if tile_row * bm >= m {
            // The second block of a cluster on the last row of tiles, past the output: it
            // took part in the copies, and has nothing to store.
            continue;
        }
        // A slice of a split product goes to its own plane of the workspace.
        // SAFETY: `out` holds `splits` planes of m·n (the contract).
        let out = unsafe { out.add(unit.split as usize * m as usize * n as usize) };
        let tile = BlockTile::at(tile_row * bm, tile_col * bn, m, n);
        let lane = t % WARP_SIZE;
        let frags = acc.frags();
        if T::SWAPPED {
            // Accumulator (row, column) is the tile's output (column, swapped row).
            let warp_rows = 16 * ((t % WARPGROUP) / WARP_SIZE);
            unroll!((A::N / 8) as usize, |j| {
                unroll!(4, |e| {
                    let (rr, cc) = c_position(lane, e);
                    let r = 8 * j as u32 + cc;
                    let c = consumer * wgmma::M + swapped_column(warp_rows + rr);
                    if r < tile.rows_left && c < tile.cols_left {
                        // SAFETY: inside `out`; this thread alone holds output (r, c).
                        unsafe {
                            store_out(out, n, tile.row0 + r, tile.col0 + c, frags[j][e], &epilogue)
                        };
                    }
                });
            });
            continue;
        }
        let warp = (t % WARPGROUP) / WARP_SIZE;
        if !staged {
            let row = consumer * wgmma::M + 16 * warp + lane / 4;
            let fast =
                tile.is_interior(bm, bn) && n.is_multiple_of(2) && out.addr().is_multiple_of(8);
            unroll!((A::N / 8) as usize, |j| {
                unroll!(2, |h| {
                    let frag: &FragC = &frags[j];
                    let (r, c) = (row + 8 * h as u32, 8 * j as u32 + 2 * (lane % 4));
                    let pair = [frag[2 * h], frag[2 * h + 1]];
                    // SAFETY: this thread alone holds outputs (r, c), (r, c + 1) of the
                    // block tile (the FragC layout per 8 columns, warp w on rows 16w..);
                    // `fast` only inside, where rows start 8-byte aligned.
                    unsafe { store_pair(out, n, &tile, r, c, pair, fast, &epilogue) };
                });
            });
            continue;
        }
        let interior = tile.is_interior(bm, bn);
        // The boxes' addresses derive from `lane`: computed here, each tile, not held in
        // registers across the multiplications (where the accumulators need them).
        let lane = opaque(lane);
        let row = consumer * wgmma::M + 16 * warp + lane / 4;
        unroll!((A::N / OUT_BOX_COLS) as usize, |q| {
            let q = q as u32;
            let which = (stored + q) % OUT_BOXES;
            let at = out_boxes + (consumer * OUT_BOXES + which) * OUT_BOX_BYTES;
            unroll!((OUT_BOX_COLS / 8) as usize, |j| {
                let frag: &FragC = &frags[(q * OUT_BOX_COLS / 8) as usize + j];
                unroll!(2, |h| {
                    let (r, c) = (row + 8 * h as u32, 8 * j as u32 + 2 * (lane % 4));
                    let word = at / 4 + wgmma::sw128_index(r % wgmma::M, c);
                    let pair = [frag[2 * h], frag[2 * h + 1]].map(f32::to_bits);
                    // SAFETY: inside this consumer's box (row below 64, column below 32,
                    // the pair 8-byte aligned), which no thread reads any more: those that
                    // read it two boxes ago met at the barrier since.
                    unsafe { smem.set2_unchecked(word, pair) };
                });
            });
            // SAFETY: the whole warpgroup, converged, at its own barrier (id 0 is the
            // block's).
            unsafe { thread::sync_named(1 + consumer, WARPGROUP) };
            // Warp `w` stores rows 16w.. of the box, a row of 32 columns at a time.
            let col = q * OUT_BOX_COLS + lane;
            unroll!((wgmma::M / (WARPGROUP / WARP_SIZE)) as usize, |i| {
                let r = 16 * warp + i as u32;
                let tile_row = consumer * wgmma::M + r;
                if interior || (tile_row < tile.rows_left && col < tile.cols_left) {
                    // SAFETY: inside the box, complete since the barrier; inside `out`
                    // (checked), output (tile_row, col) this thread's alone.
                    unsafe {
                        let v = f32::from_bits(
                            smem.get_unchecked(at / 4 + wgmma::sw128_index(r, lane)),
                        );
                        store_out(out, n, tile.row0 + tile_row, tile.col0 + col, v, &epilogue)
                    };
                }
            });
        });
        stored += A::N / OUT_BOX_COLS;
    }
}

/// A consumer warpgroup's release of a slot (`empty`): in every block of a cluster of
/// `CLUSTER` (each block's producer refills the slot in all of them).
///
/// # Safety
/// One arrival per consumer warpgroup per phase, after the multiplications that read the slot.
#[inline(always)]
unsafe fn release<const CLUSTER: u32>(empty: Mbarrier) {
    // SAFETY: the caller's contract; the barrier is at the same place in every block.
    unsafe {
        if CLUSTER == 1 {
            empty.arrive();
        } else {
            for r in 0..CLUSTER {
                empty.arrive_cluster(r);
            }
        }
    }
}

/// Bytes of shared memory for the consumers' output boxes: [`OUT_BOXES`] each where they
/// stage their `rows`, none where the tile is swapped (it stores from registers).
pub const fn out_box_bytes<T: Element>(consumers: u32, rows: bool) -> u32 {
    if T::SWAPPED || !rows {
        0
    } else {
        consumers * OUT_BOXES * OUT_BOX_BYTES
    }
}

/// The launch geometry of [`gemm_warp_specialized`] on `T` with `consumers` consumer
/// warpgroups, `n` columns an instruction and `stages` slots, staging its output `rows` or
/// not: the slots, the consumers' output boxes and the slots' barriers in dynamic shared
/// memory, plus 1024 bytes to align them.
pub const fn geometry<T: Element>(
    consumers: usize, n: usize, stages: usize, rows: bool,
) -> Geometry {
    let (bm, bn) = block_tile::<T>(consumers as u32, n as u32);
    let (bm, bn) = (bm as usize, bn as usize);
    let b_rows = b_rows::<T>(bn as u32) as usize;
    let stage_bytes = (bm + b_rows) * ROW_BYTES as usize;
    let boxes = out_box_bytes::<T>(consumers as u32, rows) as usize;
    // Two 8-byte barriers a slot (full, empty).
    let bytes = stages * stage_bytes + boxes + 8 * 2 * stages + ATOM_BYTES as usize;
    Geometry::new(
        bm,
        bn,
        T::BK as usize,
        WARPGROUP as usize * (consumers + 1),
        bytes / 4,
    )
    .in_dynamic_shared()
}

/// One configuration of rung 17: how to launch it and what runs it.
#[derive(Clone, Copy, Debug)]
pub struct WsConfig {
    /// The name on command lines and in reports (the entry point with `-` for `_`).
    pub name: &'static str,
    /// The element type of `a` and `b`.
    pub input: Input,
    /// Whether `b` is read row-major, as it lies (the 16-bit types, and TF32's
    /// [`Tf32RowB`]); else transposed (a TF32 caller packs it, [`Element::B_TRANSPOSED`]).
    pub row_major_b: bool,
    /// Whether its instructions compute each tile transposed ([`Element::SWAPPED`]).
    pub swapped: bool,
    /// Whether its instructions read their `A` from registers ([`Element::REGISTER_A`]).
    pub register_a: bool,
    /// Its tile sizes and shared memory.
    pub geometry: Geometry,
    /// How to launch it (a persistent grid: [`KernelSpec::launch_on`]), on tensor maps
    /// `(amap, bmap, out, m, n, k)`.
    ///
    /// [`KernelSpec::launch_on`]: nvptx_device::catalogue::KernelSpec::launch_on
    pub spec: KernelSpec,
    /// Whether it is the default for its element type.
    pub default: bool,
    /// Whether it stages its output rows in shared memory (the [module](self)'s
    /// *Outputs*): for outputs whose rows do not start 8-byte aligned (an odd `n`).
    pub rows: bool,
    /// The entry point as the simulator calls it, on the matrices themselves (the bytes of
    /// their elements; it maps them with [`TensorMap::simulated_tf32`] or
    /// [`TensorMap::simulated_16bit`] as a GPU host maps them with the driver).
    #[cfg(not(target_arch = "nvptx64"))]
    pub sim: unsafe fn(*const u8, *const u8, *mut f32, u32, u32, u32, u32),
}

impl WsConfig {
    /// Rows of a box of its `b` map where `b` comes transposed (`bᵀ`, `n × k`): the
    /// tile's columns, half of them for a `pair` (each block of the pair copies half).
    pub const fn transposed_b_box_rows(&self) -> u32 {
        self.geometry.bn / self.spec.cluster
    }

    /// Its consumer warpgroups and the `N` of its instructions, from its tile
    /// ([`block_tile`] inverted).
    pub const fn consumers_and_n(&self) -> (u32, u32) {
        let (bm, bn) = (self.geometry.bm, self.geometry.bn);
        if self.swapped {
            (bn / wgmma::M, bm)
        } else {
            (bm / wgmma::M, bn)
        }
    }
}

/// The parameters of every rung-17 entry: `(amap, bmap, out, m, n, k, splits)`.
pub const WS_PARAMS: &[nvptx_device::catalogue::Param] = nvptx_device::params!(
    amap: *const TensorMap,
    bmap: *const TensorMap,
    out: *mut f32,
    m: u32,
    n: u32,
    k: u32,
    splits: u32
);

/// An entry of the table on `T` as the simulator runs it: `a` and `b` mapped in the boxes
/// the kernel copies (`T::BK` × `bm` elements; `b` 64 × 64, or `T::BK` × `bn` where
/// transposed), then the entry.
///
/// # Safety
/// As the entry's, on `a` (`m` rows of `k`) and `b` (`k` rows of `n`, or `n` rows of `k`
/// where `T::B_TRANSPOSED`), rows rounded up to whole 16 bytes and zero past `k` and `n`,
/// instead of their maps.
#[cfg(not(target_arch = "nvptx64"))]
#[allow(clippy::too_many_arguments)]
unsafe fn sim_maps<T: Element>(
    entry: unsafe fn(*const TensorMap, *const TensorMap, *mut f32, u32, u32, u32, u32),
    (bm, bn): (u32, u32), cluster: u32, a: *const u8, b: *const u8, out: *mut f32, m: u32, n: u32,
    k: u32, splits: u32,
) {
    // Rows of whole 16-byte units, as a GPU host maps them.
    let map = |at: *const u8, rows: u32, cols: u32, box_rows: u32| {
        let cols = cols.next_multiple_of(16 / T::SIZE);
        if T::SIZE == 4 {
            TensorMap::simulated_tf32(at.cast(), rows, cols, box_rows)
        } else {
            TensorMap::simulated_16bit(at.cast(), rows, cols, box_rows)
        }
    };
    let amap = map(a, m, k, bm);
    let bmap = if T::B_TRANSPOSED {
        map(b, n, k, bn / cluster)
    } else {
        map(b, k, n, T::BK)
    };
    // SAFETY: the maps describe the operands in the kernel's boxes, as the entry requires.
    unsafe { entry(&amap, &bmap, out, m, n, k, splits) }
}

/// [`gemm_warp_specialized`] with [`Store`](super::epilogue::Store): the table's entry points.
///
/// # Safety
/// As [`gemm_warp_specialized`].
#[inline(always)]
unsafe fn store<
    const C: usize,
    const STAGES: u32,
    const GROUP: u32,
    const ROWS: bool,
    const CLUSTER: u32,
    T: Element,
    A: Accumulators,
>(
    amap: *const TensorMap, bmap: *const TensorMap, out: *mut f32, m: u32, n: u32, k: u32,
    splits: u32,
) {
    // SAFETY: forwarded.
    unsafe {
        gemm_warp_specialized::<C, STAGES, GROUP, ROWS, CLUSTER, T, A, _>(
            amap,
            bmap,
            out,
            m,
            n,
            k,
            splits,
            super::epilogue::Store,
        )
    }
}

/// Blocks per cluster of a table row: 2 for the `pair` rows, 1 for the others.
const fn cluster_of(pair: bool) -> u32 {
    if pair { 2 } else { 1 }
}

/// Declares rung 17's table: in `half`, per line, the entry points of one configuration on
/// `bf16` and on `f16`; in `tf32`, one entry point per line (all exported by the `hopper`
/// feature, whose module is built for `sm_90a`); and [`WS_CONFIGS`]: every `bf16`
/// configuration, then every `f16` one, then every TF32 one, in table order.
macro_rules! ws_configs {
    (half { $( $(#[$meta:meta])* $bf16:ident, $f16:ident = <$c:literal, $bn:literal,
        $stages:literal, $group:literal> $([$($flag:ident),*])?; )* }
     tf32 { $( $(#[$tmeta:meta])* $tf32:ident = <$tc:literal, $tbn:literal, $tstages:literal,
        $tgroup:literal> $([$($tflag:ident),*])?; )* }
     tf32_row_b { $( $(#[$rmeta:meta])* $rowb:ident = <$rc:literal, $rbn:literal,
        $rstages:literal, $rgroup:literal>; )* }) => {
        ws_configs!(@entries
            $( $(#[$meta])* $bf16 = <Bf16, $c, $bn, $stages, $group> $([$($flag),*])?; )*
            $( $(#[$meta])* $f16 = <F16, $c, $bn, $stages, $group> $([$($flag),*])?; )*
            $( $(#[$tmeta])* $tf32 = <Tf32, $tc, $tbn, $tstages, $tgroup> $([$($tflag),*])?; )*
            $( $(#[$rmeta])* $rowb = <Tf32RowB, $rc, $rbn, $rstages, $rgroup>; )*
        );
    };
    (@entries $( $(#[$meta:meta])* $entry:ident = <$t:ident, $c:literal, $bn:literal,
        $stages:literal, $group:literal> $([$($flag:ident),*])?; )*) => {
        #[cfg(any(feature = "hopper", not(target_arch = "nvptx64")))]
        nvptx_device::entry_points! {$(
            $(#[$meta])*
            $entry(amap: *const TensorMap, bmap: *const TensorMap, out: *mut f32, m: u32, n: u32, k: u32, splits: u32)
                => store::<$c, $stages, $group, { has_flag!(rows in $($($flag),*)?) },
                    { cluster_of(has_flag!(pair in $($($flag),*)?)) }, $t, [FragC; $bn / 8]>
                , launch_bounds(128 * ($c + 1), 1, cluster_of(has_flag!(pair in $($($flag),*)?)));
        )*}

        /// Every configuration of rung 17, in table order.
        pub const WS_CONFIGS: &[WsConfig] = &[$({
            const GEOMETRY: Geometry =
                geometry::<$t>($c, $bn, $stages, has_flag!(rows in $($($flag),*)?));
            WsConfig {
                name: dashed!(stringify!($entry)),
                input: <$t as Element>::INPUT,
                row_major_b: !<$t as Element>::B_TRANSPOSED,
                swapped: <$t as Element>::SWAPPED,
                register_a: <$t as Element>::REGISTER_A,
                geometry: GEOMETRY,
                spec: KernelSpec {
                    cluster: cluster_of(has_flag!(pair in $($($flag),*)?)),
                    ..GEOMETRY.spec_persistent(stringify!($entry), WS_PARAMS, Some(1))
                },
                default: has_flag!(default in $($($flag),*)?),
                rows: has_flag!(rows in $($($flag),*)?),
                #[cfg(not(target_arch = "nvptx64"))]
                sim: |a, b, out, m, n, k, splits| {
                    // SAFETY: forwarded (`sim_maps`'s contract is the entry's).
                    unsafe {
                        sim_maps::<$t>(
                            entry::$entry,
                            block_tile::<$t>($c, $bn),
                            cluster_of(has_flag!(pair in $($($flag),*)?)),
                            a, b, out, m, n, k, splits,
                        )
                    }
                },
            }
        },)*];
    };
}

ws_configs! {
    half {
        // entry points (bf16, f16)                  = <consumer warpgroups, N, stages, group>
        /// Two consumers of 64 × 256, four slots of 48 KiB: the default.
        gemm_bf16_ws_128x256, gemm_f16_ws_128x256    = <2, 256, 4, 8> [default];
        /// Two consumers of 64 × 192, four slots of 40 KiB.
        gemm_bf16_ws_128x192, gemm_f16_ws_128x192    = <2, 192, 4, 8>;
        /// Two consumers of 64 × 128, six slots of 32 KiB: twice the tiles, for outputs with
        /// few.
        gemm_bf16_ws_128x128, gemm_f16_ws_128x128    = <2, 128, 6, 8>;
        /// Two consumers of 64 × 64, eight slots of 24 KiB: outputs of few columns.
        gemm_bf16_ws_128x64, gemm_f16_ws_128x64      = <2, 64, 8, 8>;
        /// Two consumers of 64 × 32 (a box of 64 columns copied, 32 used): outputs of 32
        /// columns or fewer.
        gemm_bf16_ws_128x32, gemm_f16_ws_128x32      = <2, 32, 8, 8>;
        /// One consumer of 64 × 256, five slots of 40 KiB: outputs of few rows.
        gemm_bf16_ws_64x256, gemm_f16_ws_64x256      = <1, 256, 5, 8>;
        /// One consumer of 64 × 128, eight slots of 24 KiB: outputs of few rows and few
        /// columns, twice the tiles of the 64 × 256 one (fewer slices of a split `k`).
        gemm_bf16_ws_64x128, gemm_f16_ws_64x128      = <1, 128, 8, 8>;
        // The same tiles staging their output rows in shared memory (`rows`, the module's
        // *Outputs*), for an odd `n`; 16 KiB of boxes a consumer beside the slots.
        /// 128 × 256, staged rows.
        gemm_bf16_ws_128x256_rows, gemm_f16_ws_128x256_rows = <2, 256, 4, 8> [rows];
        /// 128 × 192, staged rows.
        gemm_bf16_ws_128x192_rows, gemm_f16_ws_128x192_rows = <2, 192, 4, 8> [rows];
        /// 128 × 128, staged rows.
        gemm_bf16_ws_128x128_rows, gemm_f16_ws_128x128_rows = <2, 128, 6, 8> [rows];
        /// 128 × 64, staged rows.
        gemm_bf16_ws_128x64_rows, gemm_f16_ws_128x64_rows   = <2, 64, 8, 8> [rows];
        /// 128 × 32, staged rows.
        gemm_bf16_ws_128x32_rows, gemm_f16_ws_128x32_rows   = <2, 32, 8, 8> [rows];
        /// 64 × 256, staged rows.
        gemm_bf16_ws_64x256_rows, gemm_f16_ws_64x256_rows   = <1, 256, 5, 8> [rows];
        /// 64 × 128, staged rows.
        gemm_bf16_ws_64x128_rows, gemm_f16_ws_64x128_rows   = <1, 128, 8, 8> [rows];
        // Clusters of two blocks on vertically adjacent tiles (`pair`, the module's
        // *Clusters*): each copies half of `b`'s boxes, multicast to both.
        /// 128 × 256 in pairs.
        gemm_bf16_ws_128x256_pair, gemm_f16_ws_128x256_pair = <2, 256, 4, 8> [pair];
        /// 128 × 192 in pairs.
        gemm_bf16_ws_128x192_pair, gemm_f16_ws_128x192_pair = <2, 192, 4, 8> [pair];
        /// 128 × 128 in pairs.
        gemm_bf16_ws_128x128_pair, gemm_f16_ws_128x128_pair = <2, 128, 6, 8> [pair];
        /// 128 × 256 in pairs, staged rows.
        gemm_bf16_ws_128x256_pair_rows, gemm_f16_ws_128x256_pair_rows = <2, 256, 4, 8> [pair, rows];
    }
    // A TF32 slot is as many bytes as a 16-bit one of the same tile (rows of 128 bytes),
    // holding half the depth: the same slot counts fit.
    tf32 {
        // entry point                               = <consumer warpgroups, N, stages, group>
        /// Two consumers of 64 × 256, four slots of 48 KiB: the default.
        gemm_tf32_ws_128x256                         = <2, 256, 4, 8> [default];
        /// 128 × 256 in pairs (the module's *Clusters*: each block copies half of `bᵀ`'s
        /// box).
        gemm_tf32_ws_128x256_pair                    = <2, 256, 4, 8> [pair];
        /// 128 × 192 in pairs.
        gemm_tf32_ws_128x192_pair                    = <2, 192, 5, 8> [pair];
        /// Two consumers of 64 × 192, five slots of 40 KiB.
        gemm_tf32_ws_128x192                         = <2, 192, 5, 8>;
        /// Two consumers of 64 × 128, six slots of 32 KiB.
        gemm_tf32_ws_128x128                         = <2, 128, 6, 8>;
        /// Two consumers of 64 × 64, eight slots of 24 KiB: outputs of few columns.
        gemm_tf32_ws_128x64                          = <2, 64, 8, 8>;
        /// One consumer of 64 × 256, five slots of 40 KiB: outputs of few rows.
        gemm_tf32_ws_64x256                          = <1, 256, 5, 8>;
        /// One consumer of 64 × 128, eight slots of 24 KiB: small outputs, more blocks.
        gemm_tf32_ws_64x128                          = <1, 128, 8, 8>;
        // Staging their output rows (`rows`), for an odd `n`; five 40 KiB slots and the
        // boxes do not fit, so the 128 × 192 one has four.
        /// 128 × 256, staged rows.
        gemm_tf32_ws_128x256_rows                    = <2, 256, 4, 8> [rows];
        /// 128 × 192, staged rows.
        gemm_tf32_ws_128x192_rows                    = <2, 192, 4, 8> [rows];
        /// 128 × 128, staged rows.
        gemm_tf32_ws_128x128_rows                    = <2, 128, 6, 8> [rows];
        /// 128 × 64, staged rows.
        gemm_tf32_ws_128x64_rows                     = <2, 64, 8, 8> [rows];
        /// 64 × 256, staged rows.
        gemm_tf32_ws_64x256_rows                     = <1, 256, 5, 8> [rows];
        /// 64 × 128, staged rows.
        gemm_tf32_ws_64x128_rows                     = <1, 128, 8, 8> [rows];
    }
    // `b` read as it lies, each tile computed transposed (`N` rows of the output, 64
    // columns a consumer): no packing of `b` before the kernel. Tiles named rows × columns.
    tf32_row_b {
        // entry point                               = <consumer warpgroups, N, stages, group>
        /// Outputs of 32 rows or fewer (a batch of 32 through a wide layer): 20 KiB slots.
        gemm_tf32_row_b_ws_32x128                    = <2, 32, 8, 8>;
        /// Half the columns, twice the tiles, for a long `k` on few columns.
        gemm_tf32_row_b_ws_32x64                     = <1, 32, 8, 8>;
        /// Outputs of 64 rows or fewer: 24 KiB slots.
        gemm_tf32_row_b_ws_64x128                    = <2, 64, 8, 8>;
        /// 32 KiB slots.
        gemm_tf32_row_b_ws_128x128                   = <2, 128, 6, 8>;
        /// Large outputs: 48 KiB slots, 128 accumulators a thread.
        gemm_tf32_row_b_ws_256x128                   = <2, 256, 4, 8>;
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::{Schedule, slice_tiles};
    use std::vec;

    #[test]
    fn the_blocks_of_a_persistent_grid_take_every_unit_once() {
        for (m, n, tile, group, splits, blocks) in [
            (4096u32, 4096u32, (128, 256), 8, 1, 132),
            (1000, 33, (128, 64), 4, 3, 7),
            (1, 1, (64, 64), 1, 1, 132),
            (513, 2049, (128, 128), 0, 2, 5),
        ] {
            let tiles = m.div_ceil(tile.0) * n.div_ceil(tile.1);
            let mut seen = vec![0u32; (tiles * splits) as usize];
            for block in 0..blocks {
                let mut schedule = Schedule::of_block(m, n, tile, group, splits, block, blocks);
                while let Some(unit) = schedule.next() {
                    let t = unit.row * n.div_ceil(tile.1) + unit.col;
                    seen[(t * splits + unit.split) as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "{m}×{n}, {tile:?}: {seen:?}");
        }
        assert!(
            Schedule::of_block(0, 8, (64, 64), 8, 1, 0, 1)
                .next()
                .is_none()
        );
        // Past its last unit a schedule stays ended.
        let mut ended = Schedule::of_block(64, 64, (64, 64), 8, 1, 0, 1);
        assert!(ended.next().is_some());
        assert!((0..3).all(|_| ended.next().is_none()));
        assert_eq!(slice_tiles(10, 3, 2), (8, 10));
        assert_eq!(slice_tiles(2, 4, 3), (2, 2));
    }
}
