//! One interface to every operation, the same on the GPU and on the simulator.

use crate::plan::gemm::GemmKernel;
use crate::plan::kernels::MatmulKernel;
use crate::plan::reduce::ReduceKernel;
use crate::plan::sliding::SlidingKernel;
use crate::problem::axis::{Axis, AxisOp};
use crate::problem::error::{Error, Result};
use crate::problem::gemm::Gemm;
use crate::problem::shape::MatmulShape;
use crate::problem::tile::{Supported, TileWidth, Tw};

/// Something that runs the kernels: [`crate::gpu::Gpu`] or [`crate::sim::Simulator`].
/// Object-safe: `Box<dyn Backend>` picks one at run time (the CLI does), and both report
/// the same [`Error`] for the same bad input or launch.
///
/// Inputs are row-major host slices; `a` is `shape.m × shape.k`, `b` is `shape.k × shape.n`.
/// (The GPU also takes device buffers: [`crate::gpu::Gpu::matmul_device`].)
pub trait Backend {
    /// The sum of `input` by `kernel` (two passes); 0 for no input.
    fn sum(&self, kernel: ReduceKernel, input: &[f32]) -> Result<f32>;

    /// The sliding average of `a` over windows of `window`: `a.len() - window + 1` outputs,
    /// none if the window is longer than the input; a window of 0 is an error.
    fn sliding_average(&self, kernel: SlidingKernel, a: &[f32], window: usize) -> Result<Vec<f32>>;

    /// `op` of every row (`axis` = rows: `rows` outputs) or every column (`cols` outputs)
    /// of the row-major `rows × cols` matrix `x`. A wrong length is
    /// [`Error::InputLength`]; a max over an empty dimension,
    /// [`Error::EmptyReduction`].
    fn reduce_axis(
        &self, op: AxisOp, axis: Axis, x: &[f32], rows: usize, cols: usize,
    ) -> Result<Vec<f32>>;

    /// Runs `kernel` with tile width `tw` (ignored by the naive kernel): run-time dispatch.
    fn matmul(
        &self, kernel: MatmulKernel, tw: TileWidth, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>>;

    /// `c = α·op(a)·op(b) + β·c` as `call` describes it ([`crate::problem::gemm`]), by `kernel`, on
    /// host slices. Elements of `c` outside the call's outputs are left as they are.
    fn gemm(
        &self, call: &Gemm, kernel: GemmKernel, a: &[f32], b: &[f32], c: &mut [f32],
    ) -> Result<()>;

    /// The naive kernel.
    fn matmul_naive(&self, a: &[f32], b: &[f32], shape: MatmulShape) -> Result<Vec<f32>> {
        self.matmul(MatmulKernel::Naive, TileWidth::Tw16, a, b, shape)
    }

    /// Tiled, dynamic shared memory; the tile width is a run-time value, as in the kernel.
    fn matmul_tiled_dynamic(
        &self, tw: TileWidth, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        self.matmul(MatmulKernel::TiledDynamic, tw, a, b, shape)
    }

    /// Tiled, static shared arrays, `TW ∈ {8, 16, 32}` at compile time.
    fn matmul_tiled_static<const TW: u32>(
        &self, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>>
    where
        Self: Sized,
        Tw<TW>: Supported,
    {
        let tw = <Tw<TW> as Supported>::WIDTH;
        self.matmul(MatmulKernel::TiledStatic, tw, a, b, shape)
    }

    /// Tiled, dynamic shared memory, `TW ∈ {8, 16, 32}` at compile time.
    fn matmul_tiled_dynamic_const<const TW: u32>(
        &self, a: &[f32], b: &[f32], shape: MatmulShape,
    ) -> Result<Vec<f32>>
    where
        Tw<TW>: Supported,
        Self: Sized,
    {
        let tw = <Tw<TW> as Supported>::WIDTH;
        self.matmul(MatmulKernel::TiledDynamicConst, tw, a, b, shape)
    }
}

/// [`Backend::gemm`] on slices of any `Pod` type laid out as `f32`s (a `#[repr(transparent)]`
/// newtype, `[f32; N]` rows, …): the lengths are in `f32`s. A type whose size is not a
/// multiple of 4 bytes (including zero-sized ones), or a slice not aligned for `f32`, is
/// [`Error::ElementType`].
pub fn gemm_pod<T: bytemuck::Pod>(
    backend: &dyn Backend, call: &Gemm, kernel: GemmKernel, a: &[T], b: &[T], c: &mut [T],
) -> Result<()> {
    let err = Error::ElementType {
        type_name: std::any::type_name::<T>(),
        size: std::mem::size_of::<T>(),
        align: std::mem::align_of::<T>(),
    };
    // A `u16` slice of even length would cast: only whole f32s are taken.
    if !std::mem::size_of::<T>().is_multiple_of(4) {
        return Err(err);
    }
    let cast_err = |_| Error::ElementType {
        type_name: std::any::type_name::<T>(),
        size: std::mem::size_of::<T>(),
        align: std::mem::align_of::<T>(),
    };
    let a: &[f32] = bytemuck::try_cast_slice(a).map_err(cast_err)?;
    let b: &[f32] = bytemuck::try_cast_slice(b).map_err(cast_err)?;
    let c: &mut [f32] = bytemuck::try_cast_slice_mut(c).map_err(cast_err)?;
    backend.gemm(call, kernel, a, b, c)
}
