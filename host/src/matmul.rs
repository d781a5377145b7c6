//! The typed matmul API, the same on the GPU and on the simulator.

use crate::error::Result;
use crate::kernels::MatmulKernel;
use crate::shape::MatmulShape;
use crate::tile::{Supported, TileWidth, Tw};

/// Something that runs the matmul kernels: [`crate::gpu::Gpu`] or [`crate::sim::Simulator`].
///
/// Inputs are row-major host slices; `a` is `shape.m × shape.k`, `b` is `shape.k × shape.n`.
/// (The GPU also takes device buffers: [`crate::gpu::Gpu::matmul_device`].)
pub trait MatmulBackend {
    /// Runs `kernel` with tile width `tw` (ignored by the naive kernel): run-time dispatch.
    fn matmul(
        &self,
        kernel: MatmulKernel,
        tw: TileWidth,
        a: &[f32],
        b: &[f32],
        shape: MatmulShape,
    ) -> Result<Vec<f32>>;

    /// The naive kernel.
    fn matmul_naive(&self, a: &[f32], b: &[f32], shape: MatmulShape) -> Result<Vec<f32>> {
        self.matmul(MatmulKernel::Naive, TileWidth::Tw16, a, b, shape)
    }

    /// Tiled, dynamic shared memory; the tile width is a run-time value, as in the kernel.
    fn matmul_tiled_dynamic(
        &self,
        tw: TileWidth,
        a: &[f32],
        b: &[f32],
        shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        self.matmul(MatmulKernel::TiledDynamic, tw, a, b, shape)
    }

    /// Tiled, static shared arrays, `TW ∈ {8, 16, 32}` at compile time.
    fn matmul_tiled_static<const TW: u32>(
        &self,
        a: &[f32],
        b: &[f32],
        shape: MatmulShape,
    ) -> Result<Vec<f32>>
    where
        Tw<TW>: Supported,
    {
        self.matmul(
            MatmulKernel::TiledStatic,
            <Tw<TW> as Supported>::WIDTH,
            a,
            b,
            shape,
        )
    }

    /// Tiled, dynamic shared memory, `TW ∈ {8, 16, 32}` at compile time.
    fn matmul_tiled_dynamic_const<const TW: u32>(
        &self,
        a: &[f32],
        b: &[f32],
        shape: MatmulShape,
    ) -> Result<Vec<f32>>
    where
        Tw<TW>: Supported,
    {
        self.matmul(
            MatmulKernel::TiledDynamicConst,
            <Tw<TW> as Supported>::WIDTH,
            a,
            b,
            shape,
        )
    }
}
