//! Which kernel runs, with which launch: the kernel catalogues as the host sees them (the
//! lecture's kernels, the SGEMM ladder, BF16 and packed operands, reductions, sliding
//! averages, the fusion lesson), split-k, row splits and repacking, the memory-bound
//! kernels of rung 16, the 16-bit products of rung 17, the rung-12 choice for a GEMM call,
//! the splits over several devices, the timing budget, and the embedded PTX. Pure functions
//! of the problem: no backend here; the simulator and the GPU run what these describe.

pub mod bf16;
pub mod budget;
pub mod fusion;
pub mod gemm;
pub mod gemv;
pub mod half;
pub mod kernels;
pub mod packed;
pub mod ptx;
pub mod reduce;
pub mod repack;
pub mod row_split;
pub mod sgemm;
pub mod shard;
pub mod sliding;
pub mod split_k;
pub mod stream_k;
