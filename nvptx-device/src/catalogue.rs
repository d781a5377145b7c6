//! Plain-data descriptions of kernel entry points: what a host needs to launch a PTX
//! `.entry` without the kernel crate's own host code — its parameters, block, grid rule,
//! shared memory and launch bounds. Any host library (cudarc, cust, a C program) can read
//! them; a kernel crate declares each of its configurations once and derives its entry
//! point and its [`KernelSpec`] from that one declaration.

use crate::launch::Launch;
use crate::thread::Dim3;

/// The type of one kernel parameter, as the entry's `.param` declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamType {
    /// A device pointer to `f32`s the kernel only reads (`.param .u64 .ptr`).
    ConstF32Ptr,
    /// A device pointer to 16-bit elements the kernel only reads (BF16 bits).
    ConstU16Ptr,
    /// A device pointer to `f32`s the kernel writes.
    MutF32Ptr,
    /// A device pointer to 16-bit elements the kernel writes (BF16 or F16 bits).
    MutU16Ptr,
    /// A device pointer to `u64`s the kernel reads and writes (scratch state, e.g. a
    /// chained scan's published prefixes).
    MutU64Ptr,
    /// `.param .u32`.
    U32,
    /// `.param .s32`.
    I32,
    /// `.param .f32`.
    F32,
    /// `.param .u64` (an element count or stride beyond `u32`).
    U64,
    /// A device pointer to a [`TensorMap`](crate::tma::TensorMap) in global memory.
    ConstTensorMapPtr,
}

impl ParamType {
    /// Bytes of the parameter in the argument buffer.
    pub const fn size(self) -> usize {
        match self {
            Self::ConstF32Ptr
            | Self::ConstU16Ptr
            | Self::MutF32Ptr
            | Self::MutU16Ptr
            | Self::MutU64Ptr
            | Self::U64
            | Self::ConstTensorMapPtr => 8,
            Self::U32 | Self::I32 | Self::F32 => 4,
        }
    }
}

/// Rust parameter types of entry points, and their [`ParamType`].
pub trait KernelParam {
    /// The parameter's type.
    const TYPE: ParamType;
}

impl KernelParam for *const f32 {
    const TYPE: ParamType = ParamType::ConstF32Ptr;
}
impl KernelParam for *const u16 {
    const TYPE: ParamType = ParamType::ConstU16Ptr;
}
impl KernelParam for *mut f32 {
    const TYPE: ParamType = ParamType::MutF32Ptr;
}
impl KernelParam for *mut u16 {
    const TYPE: ParamType = ParamType::MutU16Ptr;
}
impl KernelParam for *mut u64 {
    const TYPE: ParamType = ParamType::MutU64Ptr;
}
impl KernelParam for u32 {
    const TYPE: ParamType = ParamType::U32;
}
impl KernelParam for i32 {
    const TYPE: ParamType = ParamType::I32;
}
impl KernelParam for f32 {
    const TYPE: ParamType = ParamType::F32;
}
impl KernelParam for u64 {
    const TYPE: ParamType = ParamType::U64;
}
impl KernelParam for *const crate::tma::TensorMap {
    const TYPE: ParamType = ParamType::ConstTensorMapPtr;
}

/// One parameter of an entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    /// Its name in the kernel's signature.
    pub name: &'static str,
    /// Its type.
    pub ty: ParamType,
}

/// `[Param]` from a signature's `name: Type` pairs, as a constant.
#[macro_export]
macro_rules! params {
    ($($arg:ident : $ty:ty),* $(,)?) => {
        &[$($crate::catalogue::Param {
            name: stringify!($arg),
            ty: <$ty as $crate::catalogue::KernelParam>::TYPE,
        }),*]
    };
}

/// How many blocks a launch has, from the size of the problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GridRule {
    /// One block per `rows × cols` tile of an `m × n` output: a grid of
    /// `cdiv(n, cols) × cdiv(m, rows)` blocks (x over columns).
    Tiles {
        /// Output rows per block.
        rows: u32,
        /// Output columns per block.
        cols: u32,
    },
    /// A persistent grid over the `rows × cols` tiles of an `m × n` output: one block per
    /// tile ([`KernelSpec::launch`]), at most as many as the multiprocessors run at once
    /// ([`KernelSpec::launch_on`]); each block loops over its share of the tiles. 1-D.
    Persistent {
        /// Output rows per tile.
        rows: u32,
        /// Output columns per tile.
        cols: u32,
    },
    /// One block per `per_block` items of a 1-D problem, at least one block and at most
    /// `max_blocks` (0: no cap; the kernel then loops over the rest).
    Items {
        /// Items per block.
        per_block: u32,
        /// The most blocks (0: no cap).
        max_blocks: u32,
    },
}

/// Bytes of dynamic shared memory a launch needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DynamicShared {
    /// None.
    None,
    /// A fixed number of bytes.
    Fixed(u32),
    /// `base + per_unit · units` bytes, where `units` is a size the launch is made for (a
    /// window length, say; [`KernelSpec::launch`] takes it).
    Affine {
        /// Bytes for zero units.
        base: u32,
        /// Bytes per unit.
        per_unit: u32,
    },
}

/// `__launch_bounds__(max_threads, min_blocks)`: `.maxntid` and `.minnctapersm` of an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchBounds {
    /// Most threads per block the entry is launched with.
    pub max_threads: u32,
    /// Blocks per SM ptxas keeps registers for (0: no `.minnctapersm`).
    pub min_blocks: u32,
}

/// The size of one problem, for [`KernelSpec::launch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Extent {
    /// An `rows × cols` output (matrix kernels, [`GridRule::Tiles`]).
    Matrix {
        /// Rows of the output.
        rows: u32,
        /// Columns of the output.
        cols: u32,
    },
    /// `n` items (1-D kernels, [`GridRule::Items`]).
    Items(u32),
}

/// Everything a host needs to launch one entry point of a PTX module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelSpec {
    /// The PTX `.entry` name.
    pub entry: &'static str,
    /// Its parameters, in order.
    pub params: &'static [Param],
    /// Threads per block.
    pub block: Dim3,
    /// Blocks per launch.
    pub grid: GridRule,
    /// Bytes of its static `.shared` arrays.
    pub static_shared_bytes: u32,
    /// Bytes of dynamic shared memory per block.
    pub dynamic_shared: DynamicShared,
    /// Its `.maxntid` / `.minnctapersm`, if it declares them.
    pub launch_bounds: Option<LaunchBounds>,
    /// Blocks per thread-block cluster along x ([`Launch::cluster`]; 1: none). Its launches'
    /// grids are whole clusters: the kernel takes blocks past the problem as such.
    pub cluster: u32,
}

impl KernelSpec {
    /// A 1-D entry of `threads` threads per block, one block per `per_block` items (no cap
    /// on the blocks), without shared memory or launch bounds.
    pub const fn items(
        entry: &'static str, params: &'static [Param], threads: u32, per_block: u32,
    ) -> Self {
        Self {
            entry,
            params,
            block: Dim3::x(threads),
            grid: GridRule::Items {
                per_block,
                max_blocks: 0,
            },
            static_shared_bytes: 0,
            dynamic_shared: DynamicShared::None,
            launch_bounds: None,
            cluster: 1,
        }
    }

    /// The launch for a problem of size `extent`, with `units` for
    /// [`DynamicShared::Affine`] (ignored otherwise). Saturating arithmetic: a size too
    /// large for the device shows up as a launch that [`Limits::check`] refuses, never as a
    /// wrapped one. An extent that does not fit the grid rule (items for a tile rule)
    /// counts as one row.
    ///
    /// [`Limits::check`]: crate::launch::Limits::check
    pub const fn launch(&self, extent: Extent, units: u32) -> Launch {
        let (rows, cols) = match extent {
            Extent::Matrix { rows, cols } => (rows, cols),
            Extent::Items(n) => (1, n),
        };
        let grid = match self.grid {
            GridRule::Tiles {
                rows: per_row,
                cols: per_col,
            } => Dim3::xy(cols.div_ceil(per_col), rows.div_ceil(per_row)),
            GridRule::Persistent {
                rows: per_row,
                cols: per_col,
            } => {
                let tiles = cols
                    .div_ceil(per_col)
                    .saturating_mul(rows.div_ceil(per_row));
                Dim3::x(if tiles == 0 { 1 } else { tiles })
            }
            GridRule::Items {
                per_block,
                max_blocks,
            } => {
                let items = match extent {
                    Extent::Matrix { rows, cols } => rows.saturating_mul(cols),
                    Extent::Items(n) => n,
                };
                let mut blocks = items.div_ceil(per_block);
                if max_blocks > 0 && blocks > max_blocks {
                    blocks = max_blocks;
                }
                if blocks == 0 {
                    blocks = 1;
                }
                Dim3::x(blocks)
            }
        };
        let dynamic_shared_bytes = match self.dynamic_shared {
            DynamicShared::None => 0,
            DynamicShared::Fixed(bytes) => bytes,
            DynamicShared::Affine { base, per_unit } => {
                base.saturating_add(per_unit.saturating_mul(units))
            }
        };
        Launch {
            grid: Dim3::xyz(self.whole_clusters(grid.x), grid.y, grid.z),
            block: self.block,
            dynamic_shared_bytes,
            cluster: self.cluster,
        }
    }

    /// `blocks` rounded up to whole clusters (saturating: a grid too large shows up as a
    /// launch that [`Limits::check`] refuses).
    ///
    /// [`Limits::check`]: crate::launch::Limits::check
    pub const fn whole_clusters(&self, blocks: u32) -> u32 {
        let cluster = if self.cluster == 0 { 1 } else { self.cluster };
        match blocks.checked_next_multiple_of(cluster) {
            Some(b) => b,
            None => u32::MAX / cluster * cluster,
        }
    }

    /// [`launch`](Self::launch) on a device of `multiprocessors` multiprocessors that each
    /// run `blocks_per_sm` blocks of this entry: a [`GridRule::Persistent`] grid capped at
    /// `multiprocessors · blocks_per_sm` blocks (at least one), in whole clusters (at least
    /// one); any other rule as `launch`.
    pub const fn launch_on(
        &self, extent: Extent, units: u32, multiprocessors: u32, blocks_per_sm: u32,
    ) -> Launch {
        let mut launch = self.launch(extent, units);
        if let GridRule::Persistent { .. } = self.grid {
            let cap = self.cap(multiprocessors.saturating_mul(blocks_per_sm));
            if launch.grid.x > cap {
                launch.grid.x = cap;
            }
        }
        launch
    }

    /// The most blocks of a persistent grid within `blocks` at once: `blocks` rounded down to
    /// whole clusters, at least one cluster.
    pub const fn cap(&self, blocks: u32) -> u32 {
        let cluster = if self.cluster == 0 { 1 } else { self.cluster };
        let whole = blocks / cluster * cluster;
        if whole == 0 { cluster } else { whole }
    }

    /// Bytes of each parameter, in order: what the entry's `.param` list must declare.
    pub fn param_bytes(&self) -> impl Iterator<Item = usize> + '_ {
        self.params.iter().map(|p| p.ty.size())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TILES: KernelSpec = KernelSpec {
        entry: "k",
        params: crate::params!(a: *const f32, out: *mut f32, n: u32),
        block: Dim3::x(256),
        grid: GridRule::Tiles {
            rows: 128,
            cols: 64,
        },
        static_shared_bytes: 0,
        dynamic_shared: DynamicShared::None,
        launch_bounds: None,
        cluster: 1,
    };

    #[test]
    fn params_come_from_the_signature() {
        let sizes: std::vec::Vec<usize> = TILES.param_bytes().collect();
        assert_eq!(sizes, [8, 8, 4]);
        assert_eq!(TILES.params[2].name, "n");
        assert_eq!(TILES.params[1].ty, ParamType::MutF32Ptr);
    }

    #[test]
    fn grid_rules_cover_the_problem() {
        let l = TILES.launch(
            Extent::Matrix {
                rows: 129,
                cols: 64,
            },
            0,
        );
        assert_eq!(
            (l.grid, l.block, l.dynamic_shared_bytes),
            (Dim3::xy(1, 2), Dim3::x(256), 0)
        );
        let items = KernelSpec {
            grid: GridRule::Items {
                per_block: 1024,
                max_blocks: 3,
            },
            dynamic_shared: DynamicShared::Affine {
                base: 4092,
                per_unit: 4,
            },
            ..TILES
        };
        assert_eq!(items.launch(Extent::Items(2049), 0).grid, Dim3::x(3));
        // A persistent grid: a block per tile, at most a wave of the device.
        let persistent = KernelSpec {
            grid: GridRule::Persistent {
                rows: 128,
                cols: 256,
            },
            ..TILES
        };
        let big = Extent::Matrix {
            rows: 8192,
            cols: 8192,
        };
        assert_eq!(persistent.launch(big, 0).grid, Dim3::x(64 * 32));
        assert_eq!(persistent.launch_on(big, 0, 132, 1).grid, Dim3::x(132));
        let small = Extent::Matrix { rows: 129, cols: 1 };
        assert_eq!(persistent.launch_on(small, 0, 132, 1).grid, Dim3::x(2));
        assert_eq!(TILES.launch_on(big, 0, 132, 1), TILES.launch(big, 0));
        // Clusters of two: whole clusters, up to the most a wave holds.
        let paired = KernelSpec {
            cluster: 2,
            ..persistent
        };
        assert_eq!(paired.launch_on(big, 0, 131, 1).grid, Dim3::x(130));
        assert_eq!(paired.launch_on(small, 0, 132, 1).grid, Dim3::x(2));
        let three = Extent::Matrix {
            rows: 129,
            cols: 257,
        };
        assert_eq!(paired.launch(three, 0).grid, Dim3::x(4));
        assert_eq!(paired.launch(three, 0).cluster, 2);
        assert_eq!(paired.cap(1), 2);
        assert_eq!(items.launch(Extent::Items(1_000_000), 0).grid, Dim3::x(3));
        // Never an empty grid, even for no items; the window sizes the tile.
        assert_eq!(items.launch(Extent::Items(0), 7).grid, Dim3::x(1));
        assert_eq!(
            items.launch(Extent::Items(0), 7).dynamic_shared_bytes,
            4092 + 28
        );
        // A window too large saturates, so that the limit check refuses it.
        assert_eq!(
            items
                .launch(Extent::Items(1), u32::MAX)
                .dynamic_shared_bytes,
            u32::MAX
        );
    }
}
