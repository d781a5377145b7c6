//! One launch shape, the device limits it must respect, and the one error for exceeding
//! them, shared by the GPU launchers and the simulator: the same launch is refused the same
//! way on both.

use crate::thread::Dim3;
use core::fmt;

/// The launch shape, as in `kernel<<<grid, block, dynamic_shared_bytes>>>`, and the blocks
/// of a thread-block cluster ([`crate::cluster`]; 1: no cluster).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Launch {
    /// Blocks in the grid (`gridDim`).
    pub grid: Dim3,
    /// Threads per block (`blockDim`).
    pub block: Dim3,
    /// Bytes of dynamic shared memory per block, what
    /// [`dynamic_shared`](crate::shared::dynamic_shared) returns.
    pub dynamic_shared_bytes: u32,
    /// Blocks per cluster, along x (the cluster dimension attribute `(cluster, 1, 1)`):
    /// blocks `c · cluster .. (c + 1) · cluster` of each grid row make cluster `c`. 1 is a
    /// launch without clusters; `grid.x` is a multiple of it.
    pub cluster: u32,
}

impl Launch {
    /// `grid` blocks of `block` threads with `dynamic_shared_bytes` each, no clusters.
    pub const fn new(grid: Dim3, block: Dim3, dynamic_shared_bytes: u32) -> Self {
        Self {
            grid,
            block,
            dynamic_shared_bytes,
            cluster: 1,
        }
    }
}

/// What a device allows one launch. A GPU host queries the real values once;
/// [`Limits::CUDA`] are those every GPU the kernels' PTX targets has (compute capability 8.0
/// and later), and the simulator's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limits {
    /// Threads in one block.
    pub max_threads_per_block: u32,
    /// The largest block extent in each dimension.
    pub max_block_dim: Dim3,
    /// The largest grid extent in each dimension.
    pub max_grid_dim: Dim3,
    /// Static plus dynamic shared memory of one block, in bytes, with the per-function
    /// opt-in (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`): a GPU host opts
    /// every function in to all of it, so that a launch asking for more than the 48 KiB
    /// allowed without the opt-in is refused only where the device has less.
    pub max_shared_bytes_per_block: u32,
}

impl Limits {
    /// Compute capability 8.0 and later: 1024 threads, blocks up to 1024×1024×64, grids up
    /// to (2³¹−1)×65535×65535, 99 KiB of shared memory per block with the opt-in (8.6, 8.9
    /// and 12.x; 8.0 and 8.7 allow 163 KiB, 9.0 and 10.0 227 KiB).
    pub const CUDA: Self = Self {
        max_threads_per_block: 1024,
        max_block_dim: Dim3::xyz(1024, 1024, 64),
        max_grid_dim: Dim3::xyz((1 << 31) - 1, 65535, 65535),
        max_shared_bytes_per_block: Self::SHARED_BYTES_OPT_IN,
    };

    /// Compute capability 9.0 (Hopper), the GPUs that run `sm_90a` code such as
    /// [`crate::wgmma`]: [`CUDA`](Self::CUDA) with 227 KiB of shared memory per block.
    pub const HOPPER: Self = Self {
        max_shared_bytes_per_block: 227 * 1024,
        ..Self::CUDA
    };

    /// The shared memory of one block on every GPU of compute capability 8.0 and later,
    /// with the opt-in: 99 KiB.
    pub const SHARED_BYTES_OPT_IN: u32 = 99 * 1024;

    /// The shared memory of one block any function may use without the opt-in: 48 KiB.
    pub const SHARED_BYTES_DEFAULT: u32 = 48 * 1024;

    /// The most blocks of a cluster that every device with clusters (compute capability
    /// 9.0 and later) runs: 8, the portable size.
    pub const MAX_CLUSTER_BLOCKS: u32 = 8;

    /// The dynamic shared memory a GPU host opts a function with `static_shared_bytes` of
    /// static arrays in to: all that a block may have beside them.
    pub const fn dynamic_shared_opt_in(&self, static_shared_bytes: u32) -> u32 {
        self.max_shared_bytes_per_block
            .saturating_sub(static_shared_bytes)
    }

    /// Checks `launch`, whose kernel declares `static_shared_bytes` of static shared
    /// memory, against these limits; the error names the limit and both sizes.
    pub fn check(&self, launch: &Launch, static_shared_bytes: u32) -> Result<(), LimitError> {
        let (grid, block) = (launch.grid, launch.block);
        if grid.volume() == 0 || block.volume() == 0 {
            return Err(LimitError::Empty { grid, block });
        }
        Limit::ClusterBlocks.check(
            u64::from(launch.cluster),
            u64::from(Self::MAX_CLUSTER_BLOCKS),
        )?;
        if launch.cluster == 0 || !grid.x.is_multiple_of(launch.cluster) {
            return Err(LimitError::Cluster {
                grid,
                cluster: launch.cluster,
            });
        }
        let (m, g, w) = (self.max_block_dim, self.max_grid_dim, u64::from);
        let shared = w(static_shared_bytes) + w(launch.dynamic_shared_bytes);
        for (what, requested, limit) in [
            (Limit::BlockDimX, w(block.x), w(m.x)),
            (Limit::BlockDimY, w(block.y), w(m.y)),
            (Limit::BlockDimZ, w(block.z), w(m.z)),
            (
                Limit::ThreadsPerBlock,
                block.volume(),
                w(self.max_threads_per_block),
            ),
            (Limit::GridDimX, w(grid.x), w(g.x)),
            (Limit::GridDimY, w(grid.y), w(g.y)),
            (Limit::GridDimZ, w(grid.z), w(g.z)),
            (
                Limit::StaticSharedBytesPerBlock,
                w(static_shared_bytes),
                w(Self::SHARED_BYTES_DEFAULT),
            ),
            (
                Limit::SharedBytesPerBlock,
                shared,
                w(self.max_shared_bytes_per_block),
            ),
        ] {
            what.check(requested, limit)?;
        }
        Ok(())
    }
}

/// What the driver says about one compiled function (`cuFuncGetAttribute`), beside the
/// device's [`Limits`]: a GPU host queries it once per entry point, whichever host library
/// it is (cudarc, cust, …), and [`Limits::check_function`] refuses the same launches the
/// same way for all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FunctionLimits {
    /// Its static `.shared` declarations (`CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`).
    pub static_shared_bytes: u32,
    /// Threads per block it can launch with: the device's limit, or fewer where its
    /// register use or `.maxntid` does not allow them (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`).
    pub max_threads_per_block: u32,
    /// Dynamic shared memory it may be launched with
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`): 48 KiB less its static part,
    /// or more once the host has opted it in.
    pub max_dynamic_shared_bytes: u32,
}

impl Limits {
    /// Checks `launch` of a function with the attributes `function`: the device's limits
    /// ([`Limits::check`]), then the function's own threads per block and dynamic shared
    /// memory. The first limit exceeded is the error.
    pub fn check_function(
        &self, launch: &Launch, function: &FunctionLimits,
    ) -> Result<(), LimitError> {
        self.check(launch, function.static_shared_bytes)?;
        Limit::ThreadsPerBlockForKernel.check(
            launch.block.volume(),
            u64::from(function.max_threads_per_block),
        )?;
        Limit::DynamicSharedBytesForKernel.check(
            u64::from(launch.dynamic_shared_bytes),
            u64::from(function.max_dynamic_shared_bytes),
        )
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::CUDA
    }
}

/// Which limit a launch exceeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Limit {
    /// Threads in block dimension x.
    BlockDimX,
    /// Threads in block dimension y.
    BlockDimY,
    /// Threads in block dimension z.
    BlockDimZ,
    /// Threads per block.
    ThreadsPerBlock,
    /// Threads per block that the compiled kernel's register use allows (GPU only).
    ThreadsPerBlockForKernel,
    /// Blocks in grid dimension x.
    GridDimX,
    /// Blocks in grid dimension y.
    GridDimY,
    /// Blocks in grid dimension z.
    GridDimZ,
    /// Static shared memory of one block: 48 KiB whatever the device, since only dynamic
    /// shared memory can be opted in past it.
    StaticSharedBytesPerBlock,
    /// Static plus dynamic shared memory of one block.
    SharedBytesPerBlock,
    /// Dynamic shared memory the compiled kernel may be launched with (GPU only).
    DynamicSharedBytesForKernel,
    /// Blocks per cluster ([`Limits::MAX_CLUSTER_BLOCKS`]).
    ClusterBlocks,
}

impl Limit {
    /// [`LimitError::Exceeds`] if `requested > limit`.
    pub fn check(self, requested: u64, limit: u64) -> Result<(), LimitError> {
        if requested > limit {
            return Err(LimitError::Exceeds {
                what: self,
                requested,
                limit,
            });
        }
        Ok(())
    }

    /// What is counted, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Self::BlockDimX => "threads in block dimension x",
            Self::BlockDimY => "threads in block dimension y",
            Self::BlockDimZ => "threads in block dimension z",
            Self::ThreadsPerBlock => "threads per block",
            Self::ThreadsPerBlockForKernel => "threads per block for this kernel's register use",
            Self::GridDimX => "blocks in grid dimension x",
            Self::GridDimY => "blocks in grid dimension y",
            Self::GridDimZ => "blocks in grid dimension z",
            Self::StaticSharedBytesPerBlock => "bytes of static shared memory per block",
            Self::SharedBytesPerBlock => "bytes of shared memory per block",
            Self::DynamicSharedBytesForKernel => "bytes of dynamic shared memory for this kernel",
            Self::ClusterBlocks => "blocks per cluster",
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// A launch the device (or the simulator standing in for it) cannot run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LimitError {
    /// A grid or block with a zero extent: CUDA rejects it, and it would compute nothing.
    Empty {
        /// The launch's grid.
        grid: Dim3,
        /// The launch's block.
        block: Dim3,
    },
    /// A grid whose x extent is not a whole number of clusters, or clusters of no block.
    Cluster {
        /// The launch's grid.
        grid: Dim3,
        /// Its blocks per cluster.
        cluster: u32,
    },
    /// A grid, block or shared-memory size beyond the limit.
    Exceeds {
        /// The limit.
        what: Limit,
        /// What the launch needs.
        requested: u64,
        /// What the device allows.
        limit: u64,
    },
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty { grid, block } => {
                write!(f, "launch with an empty grid {grid} or block {block}")
            }
            Self::Cluster { grid, cluster } => write!(
                f,
                "a grid of {grid} blocks is not a whole number of clusters of {cluster} blocks along x"
            ),
            Self::Exceeds {
                what,
                requested,
                limit,
            } => write!(
                f,
                "the launch needs {requested} {what}, more than the limit of {limit}"
            ),
        }
    }
}

impl core::error::Error for LimitError {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    fn launch(grid: Dim3, block: Dim3, dynamic_shared_bytes: u32) -> Launch {
        Launch::new(grid, block, dynamic_shared_bytes)
    }

    #[test]
    fn each_limit_is_named_with_both_sizes() {
        let l = Limits::CUDA;
        let exceeds = |what, requested, limit| {
            Err(LimitError::Exceeds {
                what,
                requested,
                limit,
            })
        };
        let one = Dim3::x(1);
        assert_eq!(l.check(&launch(one, Dim3::xy(32, 32), 0), 0), Ok(()));
        assert_eq!(
            l.check(&launch(one, Dim3::xy(33, 32), 0), 0),
            exceeds(Limit::ThreadsPerBlock, 1056, 1024)
        );
        assert_eq!(
            l.check(&launch(one, Dim3::xyz(1, 1, 65), 0), 0),
            exceeds(Limit::BlockDimZ, 65, 64)
        );
        assert_eq!(
            l.check(&launch(Dim3::xy(1, 65_536), one, 0), 0),
            exceeds(Limit::GridDimY, 65_536, 65_535)
        );
        // Static and dynamic shared memory count together, to the byte.
        let most = Limits::SHARED_BYTES_OPT_IN;
        assert_eq!(l.check(&launch(one, one, most - 4), 4), Ok(()));
        assert_eq!(
            l.check(&launch(one, one, most - 3), 4),
            exceeds(
                Limit::SharedBytesPerBlock,
                u64::from(most) + 1,
                u64::from(most)
            )
        );
        // Static arrays stop at 48 KiB, whatever the opt-in allows.
        assert_eq!(
            l.check(&launch(one, one, 0), 48 * 1024 + 4),
            exceeds(Limit::StaticSharedBytesPerBlock, 48 * 1024 + 4, 48 * 1024)
        );
        assert_eq!(
            l.check(&launch(Dim3::xy(4, 0), one, 0), 0),
            Err(LimitError::Empty {
                grid: Dim3::xy(4, 0),
                block: one
            })
        );
    }

    #[test]
    fn a_function_limits_threads_and_dynamic_shared_memory() {
        let f = FunctionLimits {
            static_shared_bytes: 1024,
            max_threads_per_block: 256,
            max_dynamic_shared_bytes: 47 * 1024,
        };
        let one = Dim3::x(1);
        let l = Limits {
            max_shared_bytes_per_block: Limits::SHARED_BYTES_DEFAULT,
            ..Limits::CUDA
        };
        assert_eq!(
            l.check_function(&launch(one, Dim3::x(256), 47 * 1024), &f),
            Ok(())
        );
        // The device allows 512 threads; this function does not.
        assert_eq!(
            l.check_function(&launch(one, Dim3::x(512), 0), &f),
            Err(LimitError::Exceeds {
                what: Limit::ThreadsPerBlockForKernel,
                requested: 512,
                limit: 256
            })
        );
        // The device's limits come first: static + dynamic over 48 KiB.
        assert_eq!(
            l.check_function(&launch(one, one, 47 * 1024 + 4), &f),
            Err(LimitError::Exceeds {
                what: Limit::SharedBytesPerBlock,
                requested: 48 * 1024 + 4,
                limit: 48 * 1024
            })
        );
        // A host opts a function in to what the block may have beside its static arrays.
        assert_eq!(Limits::CUDA.dynamic_shared_opt_in(8192), 99 * 1024 - 8192);
        assert_eq!(l.dynamic_shared_opt_in(u32::MAX), 0);
        let tight = FunctionLimits {
            max_dynamic_shared_bytes: 100,
            ..f
        };
        assert_eq!(
            l.check_function(&launch(one, one, 104), &tight),
            Err(LimitError::Exceeds {
                what: Limit::DynamicSharedBytesForKernel,
                requested: 104,
                limit: 100
            })
        );
    }

    #[test]
    fn clusters_divide_the_grid_and_stay_portable() {
        let l = Limits::HOPPER;
        let with = |grid, cluster| Launch {
            cluster,
            ..launch(grid, Dim3::x(128), 0)
        };
        assert_eq!(l.check(&with(Dim3::x(132), 2), 0), Ok(()));
        assert_eq!(l.check(&with(Dim3::xy(8, 3), 8), 0), Ok(()));
        for (grid, cluster) in [(Dim3::x(131), 2), (Dim3::x(4), 0), (Dim3::xy(1, 6), 2)] {
            let err = l.check(&with(grid, cluster), 0).unwrap_err();
            assert_eq!(err, LimitError::Cluster { grid, cluster });
            assert!(
                err.to_string()
                    .contains(&std::format!("clusters of {cluster}"))
            );
        }
        assert_eq!(
            l.check(&with(Dim3::x(16), 16), 0),
            Err(LimitError::Exceeds {
                what: Limit::ClusterBlocks,
                requested: 16,
                limit: 8
            })
        );
    }

    #[test]
    fn messages_name_the_limit() {
        let e = LimitError::Exceeds {
            what: Limit::SharedBytesPerBlock,
            requested: 52_000,
            limit: 49_152,
        };
        assert_eq!(
            e.to_string(),
            "the launch needs 52000 bytes of shared memory per block, more than the limit of 49152"
        );
    }
}
