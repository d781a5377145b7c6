//! The catalogue: every entry point of this crate as plain data — name, parameters, block,
//! grid rule, shared memory, launch bounds — so that any host library (cudarc, cust, …) can
//! launch the PTX module without this project's host crate. Each configuration is declared
//! once, beside its kernels: the SGEMM ladder in [`crate::sgemm::CONFIGS`], its BLAS rung
//! in [`crate::sgemm::blas::BLAS_CONFIGS`] and its BF16 rung in
//! [`crate::sgemm::bf16::BF16_CONFIGS`] (one line each, generating the entry point too),
//! its Hopper rung in [`crate::sgemm::wgmma::WGMMA_CONFIGS`] (another module: [`hopper_specs`]),
//! its packed TF32 `mma.sync` rung in [`crate::sgemm::mma_packed::MMA_PACKED_CONFIGS`] (and,
//! in the Hopper module too, [`crate::sgemm::mma_packed::MMA_TMA_CONFIGS`]),
//! the lecture's kernels in [`LECTURE`], the reductions in [`REDUCE`] and the sliding
//! averages in [`SLIDING`], whose rows point at their entry points so that they cannot drift
//! apart.

pub use crate::sgemm::bf16::{BF16_CONFIGS as BF16, Bf16Config};
pub use crate::sgemm::blas::{BLAS_CONFIGS as BLAS, BlasConfig};
pub use crate::sgemm::mma_packed::{MMA_PACKED_CONFIGS as MMA_PACKED, MMA_TMA_CONFIGS as MMA_TMA};
pub use crate::sgemm::repack::PackedConfig;
pub use crate::sgemm::warp_specialized::{WS_CONFIGS as WS, WsConfig};
pub use crate::sgemm::wgmma::WGMMA_CONFIGS as WGMMA;
pub use crate::sgemm::{CONFIGS as SGEMM, SgemmConfig};
pub use nvptx_device::catalogue::*;

use crate::fusion;
use crate::matmul::{naive, tiled_dynamic, tiled_dynamic_const, tiled_static};
use crate::reduce::{self, block_tree, cols, rows, warp_shuffle};
use crate::sliding::{self, naive as sliding_naive, scan, shared};
use nvptx_device::thread::Dim3;

/// The name and parameters of the entry point at a path `module::entry::name`, from its
/// `entry_points!` line.
macro_rules! entry_of {
    ($module:ident :: $entry:ident) => {
        (stringify!($entry), $module::entry::params::$entry)
    };
}

/// How the lecture's kernels are launched (the host picks the tile width).
#[derive(Clone, Copy, Debug)]
pub struct LectureConfig {
    /// The name on command lines and in reports (one per kernel, whatever the width).
    pub name: &'static str,
    /// The tile width this row launches (the naive kernel's block edge).
    pub tile_width: u32,
    /// How to launch it.
    pub spec: KernelSpec,
    /// The entry point as the simulator calls it; `matmul_tiled_dynamic` also takes the
    /// tile width as a last argument, which this passes.
    pub sim: crate::sgemm::MatmulEntry,
}

macro_rules! lecture {
    ($name:literal, $tw:literal, $module:ident :: $entry:ident, static: $static:expr, dynamic: $dynamic:expr $(, sim: $sim:expr)?) => {{
        let (entry, params) = entry_of!($module :: $entry);
        LectureConfig {
            name: $name,
            tile_width: $tw,
            spec: KernelSpec {
                entry,
                params,
                block: Dim3::xy($tw, $tw),
                grid: GridRule::Tiles { rows: $tw, cols: $tw },
                static_shared_bytes: $static,
                dynamic_shared: $dynamic,
                launch_bounds: None,
                cluster: 1,
            },
            sim: first!($($sim,)? $module::entry::$entry),
        }
    }};
}

/// The first of one or two expressions.
macro_rules! first {
    ($e:expr $(, $rest:expr)?) => {
        $e
    };
}

/// Two `tw × tw` f32 tiles.
const fn tiles(tw: u32) -> u32 {
    2 * tw * tw * 4
}

/// The lecture's kernels at every tile width they are built for.
pub const LECTURE: &[LectureConfig] = &[
    lecture!("naive", 16, naive::matmul_naive, static: 0,
             dynamic: DynamicShared::None),
    lecture!("tiled-dynamic", 8, tiled_dynamic::matmul_tiled_dynamic,
             static: 0, dynamic: DynamicShared::Fixed(tiles(8)),
             // SAFETY: forwarded; the width is the launch's.
             sim: |m, n, o, h, w, k| unsafe { tiled_dynamic::entry::matmul_tiled_dynamic(m, n, o, h, w, k, 8) }),
    lecture!("tiled-dynamic", 16, tiled_dynamic::matmul_tiled_dynamic,
             static: 0, dynamic: DynamicShared::Fixed(tiles(16)),
             // SAFETY: forwarded; the width is the launch's.
             sim: |m, n, o, h, w, k| unsafe { tiled_dynamic::entry::matmul_tiled_dynamic(m, n, o, h, w, k, 16) }),
    lecture!("tiled-dynamic", 32, tiled_dynamic::matmul_tiled_dynamic,
             static: 0, dynamic: DynamicShared::Fixed(tiles(32)),
             // SAFETY: forwarded; the width is the launch's.
             sim: |m, n, o, h, w, k| unsafe { tiled_dynamic::entry::matmul_tiled_dynamic(m, n, o, h, w, k, 32) }),
    lecture!("tiled-static", 8, tiled_static::matmul_tiled_static_tw8,
             static: tiles(8), dynamic: DynamicShared::None),
    lecture!("tiled-static", 16, tiled_static::matmul_tiled_static_tw16,
             static: tiles(16), dynamic: DynamicShared::None),
    lecture!("tiled-static", 32, tiled_static::matmul_tiled_static_tw32,
             static: tiles(32), dynamic: DynamicShared::None),
    lecture!("tiled-dynamic-const", 8, tiled_dynamic_const::matmul_tiled_dynamic_const_tw8,
             static: 0, dynamic: DynamicShared::Fixed(tiles(8))),
    lecture!("tiled-dynamic-const", 16, tiled_dynamic_const::matmul_tiled_dynamic_const_tw16,
             static: 0, dynamic: DynamicShared::Fixed(tiles(16))),
    lecture!("tiled-dynamic-const", 32, tiled_dynamic_const::matmul_tiled_dynamic_const_tw32,
             static: 0, dynamic: DynamicShared::Fixed(tiles(32))),
];

/// A reduction or sliding-average entry point.
#[derive(Clone, Copy, Debug)]
pub struct VectorConfig<F: 'static> {
    /// The name on command lines and in reports.
    pub name: &'static str,
    /// How to launch it.
    pub spec: KernelSpec,
    /// The entry point as the simulator calls it.
    pub sim: F,
}

/// A sum entry point as the simulator calls it: `(input, n, partials)`.
pub type ReduceEntry = unsafe fn(*const f32, u32, *mut f32);
/// A sliding-average entry point as the simulator calls it: `(a, n, window, out)`.
pub type SlidingEntry = unsafe fn(*const f32, u32, u32, *mut f32);
/// The chained-scan sliding average as the simulator calls it: `(a, n, window, out,
/// state)`, `state` holding [`scan::state_words`] zeroed words.
pub type SlidingScanEntry = unsafe fn(*const f32, u32, u32, *mut f32, *mut u64);

macro_rules! vector {
    ($name:literal, $module:ident :: $entry:ident, block: $block:expr, grid: $grid:expr,
     static: $static:expr, dynamic: $dynamic:expr $(, min_blocks: $mb:expr)?) => {{
        let (entry, params) = entry_of!($module::$entry);
        VectorConfig {
            name: $name,
            spec: KernelSpec {
                entry,
                params,
                block: Dim3::x($block),
                grid: $grid,
                static_shared_bytes: $static,
                dynamic_shared: $dynamic,
                launch_bounds: vector!(@bounds $block $(, $mb)?),
                cluster: 1,
            },
            sim: $module::entry::$entry,
        }
    }};
    (@bounds $block:expr) => { None };
    (@bounds $block:expr, $mb:expr) => {
        Some(LaunchBounds { max_threads: $block, min_blocks: $mb })
    };
}

/// The sums: one pass of blocks over the input, one partial each (a second launch of one
/// block sums the partials).
pub const REDUCE: &[VectorConfig<ReduceEntry>] = &[
    vector!("sum-tree", block_tree::reduce_sum_tree, block: reduce::BLOCK,
            grid: reduce::GRID, static: reduce::BLOCK * 4, dynamic: DynamicShared::None),
    vector!("sum-warp", warp_shuffle::reduce_sum_warp, block: reduce::BLOCK,
            grid: reduce::GRID, static: warp_shuffle::WARPS * 4, dynamic: DynamicShared::None),
];

/// The sliding averages; the shared one's dynamic memory grows with the window (the
/// launch's `units`).
pub const SLIDING: &[VectorConfig<SlidingEntry>] = &[
    vector!("sliding-naive", sliding_naive::sliding_naive,
            block: sliding::BLOCK, grid: GridRule::Items { per_block: sliding::BLOCK, max_blocks: 0 },
            static: 0, dynamic: DynamicShared::None),
    vector!("sliding-shared", shared::sliding_shared,
            block: sliding::BLOCK, grid: GridRule::Items { per_block: shared::TILE, max_blocks: 0 },
            static: 0, dynamic: DynamicShared::Affine { base: (shared::TILE - 1) * 4, per_unit: 4 }),
];

/// The fusion lesson's zip ([`crate::fusion::zip_mul`]): one thread per element of the
/// `m·n·k` intermediate.
pub const ZIP: KernelSpec = {
    let (entry, params) = entry_of!(fusion::zip_mul);
    KernelSpec {
        entry,
        params,
        block: Dim3::x(fusion::BLOCK),
        grid: GridRule::Items {
            per_block: fusion::BLOCK,
            max_blocks: 0,
        },
        static_shared_bytes: 0,
        dynamic_shared: DynamicShared::None,
        launch_bounds: None,
        cluster: 1,
    }
};

/// A row reduction as the simulator calls it: `(x, rows, cols, scale, out)`.
pub type RowsEntry = unsafe fn(*const f32, u32, u32, f32, *mut f32);
/// A column reduction as the simulator calls it: `(x, rows, cols, rows_per_segment, scale,
/// out)`.
pub type ColsEntry = unsafe fn(*const f32, u32, u32, u32, f32, *mut f32);

/// Sum and max of each row: one thread per lane of a row's group, so a launch is made for
/// `rows · rows::row_group(cols)` items.
pub const REDUCE_ROWS: &[VectorConfig<RowsEntry>] = &[
    vector!("rows-sum", rows::reduce_rows_sum, block: reduce::BLOCK,
            grid: GridRule::Items { per_block: reduce::BLOCK, max_blocks: 0 },
            static: 0, dynamic: DynamicShared::None),
    vector!("rows-max", rows::reduce_rows_max, block: reduce::BLOCK,
            grid: GridRule::Items { per_block: reduce::BLOCK, max_blocks: 0 },
            static: 0, dynamic: DynamicShared::None),
];

/// Sum and max of each column: a block per tile of `cols::column_plan`, so a launch is made
/// for a `segments × col_blocks` extent.
pub const REDUCE_COLS: &[VectorConfig<ColsEntry>] = &[
    vector!("cols-sum", cols::reduce_cols_sum, block: reduce::BLOCK,
            grid: GridRule::Tiles { rows: 1, cols: 1 },
            static: reduce::BLOCK * 4 * 4, dynamic: DynamicShared::None),
    vector!("cols-max", cols::reduce_cols_max, block: reduce::BLOCK,
            grid: GridRule::Tiles { rows: 1, cols: 1 },
            static: reduce::BLOCK * 4 * 4, dynamic: DynamicShared::None),
];

/// The sliding average whose cost per output does not depend on the window: one block per
/// [`scan::TILE`] positions, ordered by a ticket in its scratch state.
pub const SLIDING_SCAN: VectorConfig<SlidingScanEntry> = vector!("sliding-scan", scan::sliding_scan,
    block: scan::BLOCK, grid: GridRule::Items { per_block: scan::TILE, max_blocks: 0 },
    static: scan::STATIC_SHARED_BYTES, dynamic: DynamicShared::None,
    min_blocks: scan::MIN_BLOCKS);

/// Every entry point's description, each once (the lecture's run-time-width kernel is one
/// entry launched at three widths: its first row stands for it).
pub fn all_specs() -> impl Iterator<Item = &'static KernelSpec> {
    let first = |(i, c): (usize, &'static LectureConfig)| {
        LECTURE[..i]
            .iter()
            .all(|d| d.spec.entry != c.spec.entry)
            .then_some(&c.spec)
    };
    LECTURE
        .iter()
        .enumerate()
        .filter_map(first)
        .chain(SGEMM.iter().map(|c| &c.spec))
        .chain(SGEMM.iter().filter_map(|c| c.split_k.as_ref()))
        .chain(SGEMM.iter().filter_map(|c| c.serial_split_k.as_ref()))
        .chain(SGEMM.iter().filter_map(|c| c.stream_k.as_ref()))
        .chain(SGEMM.iter().filter_map(|c| c.strided.as_ref()))
        .chain(core::iter::once(&crate::sgemm::split_k::REDUCE))
        .chain(core::iter::once(&crate::sgemm::split_k::GROUP))
        .chain(core::iter::once(&crate::sgemm::repack::REPACK))
        .chain(core::iter::once(&crate::sgemm::repack::REPACK_TF32))
        .chain(core::iter::once(&crate::sgemm::repack::TRANSPOSE_TF32))
        .chain(core::iter::once(&crate::sgemm::repack::TRANSPOSE))
        .chain(crate::sgemm::repack::REPACK_16BIT.iter())
        .chain(BLAS.iter().map(|c| &c.spec))
        .chain(core::iter::once(&crate::sgemm::blas::SCALE_C))
        .chain(crate::sgemm::gemv::GEMV_CONFIGS.iter().map(|c| &c.spec))
        .chain(BF16.iter().map(|c| &c.spec))
        .chain(MMA_PACKED.iter().map(|c| &c.spec))
        .chain(REDUCE.iter().map(|c| &c.spec))
        .chain(SLIDING.iter().map(|c| &c.spec))
        .chain(core::iter::once(&ZIP))
        .chain([&SLIDING_SCAN.spec])
        .chain(REDUCE_ROWS.iter().map(|c| &c.spec))
        .chain(REDUCE_COLS.iter().map(|c| &c.spec))
}

/// Every entry point of the second module, the `hopper` feature's, built for `sm_90a`
/// (rung 14's `wgmma` configurations, [`WGMMA`], and rung 15's fed by the tensor-memory
/// accelerator, [`MMA_TMA`]): a host loads that module on a GPU of compute capability 9.0
/// only.
pub fn hopper_specs() -> impl Iterator<Item = &'static KernelSpec> {
    let packed = WGMMA.iter().chain(MMA_TMA).map(|c| &c.spec);
    packed.chain(WS.iter().map(|c| &c.spec))
}
