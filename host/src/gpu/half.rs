//! Launching rung 17 ([`crate::plan::half`]) on the GPU: 16-bit matrices through tensor maps.

use super::Gpu;
use super::tma::{TmaElement, map_view, tensor_map};
use crate::plan::half::{self, HalfFloat, WsConfig};
use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr};
use kernels_gpu::nvptx_device::wgmma::Half;

impl Gpu {
    /// `host` rounded to `T` (to nearest even) and copied to a new device buffer.
    pub fn upload_half<T: HalfFloat + DeviceRepr>(&self, host: &[f32]) -> Result<CudaSlice<T>> {
        self.upload_of(&half::round_all::<T>(host))
    }

    /// `out = a · b` by `config` (rung 17, Hopper only): `a` (`m × k`) and `b` (`k × n`)
    /// row-major `bf16` or `f16`, `out` f32 row-major. Asynchronous, like
    /// [`matmul_device`](Self::matmul_device), with its errors; and
    /// [`Error::NeedsHopper`] on another GPU, [`Error::ElementMismatch`] for a
    /// configuration of the other element type, [`Error::TmaAlignment`] where `k` or `n` is
    /// not a multiple of 8 ([`half::aligned`]).
    pub fn gemm_half_device<T: HalfFloat + DeviceRepr>(
        &self, config: &WsConfig, a: &CudaSlice<T>, b: &CudaSlice<T>, out: &mut CudaSlice<f32>,
        shape: MatmulShape,
    ) -> Result<()> {
        if config.half != T::HALF {
            return Err(Error::ElementMismatch {
                kernel: config.name,
                given: T::NAME,
            });
        }
        if super::zero_if_trivial(&self.stream, config.spec.entry, a, b, out, shape)? {
            return Ok(());
        }
        if !half::aligned(shape) {
            return Err(Error::TmaAlignment {
                kernel: config.name,
                k: shape.k,
                n: shape.n,
            });
        }
        let info = self.entry_info(config.spec.entry)?;
        let launch = half::launch(config, shape, self.multiprocessors, &self.limits)?;
        let element = match T::HALF {
            Half::Bf16 => TmaElement::Bf16,
            Half::F16 => TmaElement::F16,
        };
        let (m, n, k) = (shape.m, shape.n, shape.k);
        let maps = self.tensor_maps([
            tensor_map(
                a.device_ptr(&self.stream).0,
                m,
                k,
                element,
                config.geometry.bm,
            )?,
            tensor_map(
                b.device_ptr(&self.stream).0,
                k,
                n,
                element,
                config.geometry.bk,
            )?,
        ])?;
        let (_, buffer) = maps.as_ref().expect("tensor_maps fills the buffer");
        let (amap, bmap) = (map_view(buffer, 0), map_view(buffer, 1));
        let mut args = self.launcher(&info);
        args.view(&amap)
            .view(&bmap)
            .buffer_mut(out)
            .scalar(&m)
            .scalar(&n)
            .scalar(&k);
        // SAFETY: (amap, bmap, out, m, n, k) as every rung-17 entry declares them: the maps
        // (on the stream before the launch) describe `a` (m rows of k) and `b` (k rows of
        // n), 16-byte rows (aligned above) at the starts of their allocations, in the
        // configuration's boxes; `out` holds m·n f32 (checked above) and overlaps neither.
        unsafe { args.launch(&launch) }
    }
}
