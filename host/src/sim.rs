//! Launching the kernels on the CPU simulator: the same launch shape as on the GPU.

use crate::error::{Error, Result};
use crate::kernels::{DeviceLimits, Launch, MatmulKernel};
use crate::matmul::MatmulBackend;
use crate::shape::MatmulShape;
use crate::tile::TileWidth;
use kernels_gpu::matmul::{naive, tiled_dynamic, tiled_dynamic_const, tiled_static};
use kernels_gpu::sim::{self, LaunchConfig, Limits};

/// Runs kernels from `kernels-gpu` on host threads, with the simulator's checks.
#[derive(Clone, Debug, Default)]
pub struct Simulator {
    pub limits: Limits,
}

/// A raw pointer that the simulated threads may share; each writes disjoint elements.
#[derive(Clone, Copy)]
pub struct SharedPtr<T>(pub *mut T);
// SAFETY: kernels write disjoint elements, and the launch ends before the buffer is used.
unsafe impl<T> Send for SharedPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SharedPtr<T> {}

impl<T> SharedPtr<T> {
    /// The pointer. (A method, so that closures capture the whole `Sync` wrapper.)
    pub fn get(self) -> *mut T {
        self.0
    }
}

/// 16-byte-aligned storage for kernels that load four floats at once, as device
/// allocations (256-byte aligned) allow.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
pub struct Aligned(pub [f32; 4]);

/// `x` copied into 16-byte-aligned storage (zero-padded to a multiple of 4).
pub fn aligned_copy(x: &[f32]) -> Vec<Aligned> {
    let mut v = vec![Aligned::default(); x.len().div_ceil(4)];
    for (chunk, dst) in x.chunks(4).zip(v.iter_mut()) {
        dst.0[..chunk.len()].copy_from_slice(chunk);
    }
    v
}

impl Simulator {
    /// Runs `kernel` for every thread of `launch`: grid, block, dynamic shared bytes.
    ///
    /// The simulator checks blocks and shared memory against [`Simulator::limits`] itself
    /// ([`Error::Simulator`]); it has no grid limit, so the grid is checked here against
    /// CUDA's, as a GPU would ([`Error::GridTooLarge`]).
    pub fn launch(&self, launch: &Launch, kernel: impl Fn() + Sync) -> Result<()> {
        DeviceLimits::CUDA.check_grid(launch.grid)?;
        let cfg = LaunchConfig {
            grid: launch.grid,
            block: launch.block,
            dynamic_shared_bytes: launch.dynamic_shared_bytes,
        };
        sim::launch(&cfg, &self.limits, kernel).map_err(Error::Simulator)
    }
}

impl MatmulBackend for Simulator {
    fn matmul(
        &self,
        kernel: MatmulKernel,
        tw: TileWidth,
        a: &[f32],
        b: &[f32],
        shape: MatmulShape,
    ) -> Result<Vec<f32>> {
        shape.check_inputs(a.len(), b.len())?;
        let mut out = vec![0.0f32; shape.lens().2];
        if shape.is_trivial() {
            return Ok(out);
        }
        let launch = kernel.launch(tw, &shape)?;
        let (pm, pn, o) = (
            SharedPtr(a.as_ptr() as *mut f32),
            SharedPtr(b.as_ptr() as *mut f32),
            SharedPtr(out.as_mut_ptr()),
        );
        let MatmulShape { m: h, k, n: w } = shape;
        let tw_arg = tw.get();
        // SAFETY: (every call below) the buffers have the shape's lengths (checked above),
        // the shape fits u32 indices (MatmulShape), and `launch` is the kernel's launch shape.
        let run = move || unsafe {
            let (m, n, out) = (pm.get() as *const f32, pn.get() as *const f32, o.get());
            use TileWidth::*;
            match (kernel, tw) {
                (MatmulKernel::Naive, _) => naive::entry::matmul_naive(m, n, out, h, w, k),
                (MatmulKernel::TiledDynamic, _) => {
                    tiled_dynamic::entry::matmul_tiled_dynamic(m, n, out, h, w, k, tw_arg)
                }
                (MatmulKernel::TiledStatic, Tw8) => {
                    tiled_static::entry::matmul_tiled_static_tw8(m, n, out, h, w, k)
                }
                (MatmulKernel::TiledStatic, Tw16) => {
                    tiled_static::entry::matmul_tiled_static_tw16(m, n, out, h, w, k)
                }
                (MatmulKernel::TiledStatic, Tw32) => {
                    tiled_static::entry::matmul_tiled_static_tw32(m, n, out, h, w, k)
                }
                (MatmulKernel::TiledDynamicConst, Tw8) => {
                    tiled_dynamic_const::entry::matmul_tiled_dynamic_const_tw8(m, n, out, h, w, k)
                }
                (MatmulKernel::TiledDynamicConst, Tw16) => {
                    tiled_dynamic_const::entry::matmul_tiled_dynamic_const_tw16(m, n, out, h, w, k)
                }
                (MatmulKernel::TiledDynamicConst, Tw32) => {
                    tiled_dynamic_const::entry::matmul_tiled_dynamic_const_tw32(m, n, out, h, w, k)
                }
                // (a, b, out, m, n, k), as the lecture's (m, n, out, h, w, k).
                (MatmulKernel::Sgemm(sgemm), _) => sgemm.sim_entry()(m, n, out, h, w, k),
            }
        };
        self.launch(&launch, run)?;
        Ok(out)
    }
}
