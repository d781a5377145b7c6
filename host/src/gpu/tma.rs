//! Tensor maps for the tensor-memory accelerator: the driver's description of a matrix and
//! of the tiles a kernel copies from it (`cuTensorMapEncodeTiled`), and the device buffer
//! the launches read them from.

use super::Gpu;
use crate::problem::error::{DriverContext, Result};
use cudarc::driver::sys;
use cudarc::driver::{CudaSlice, CudaView};
use kernels_gpu::nvptx_device::tma::{ROW_BYTES, TensorMap};

/// The element types a map may describe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmaElement {
    F32,
    /// f32 elements, each rounded to TF32 by the accelerator as it copies it (to nearest,
    /// ties to even; `CU_TENSOR_MAP_DATA_TYPE_TFLOAT32`): rung 17's TF32 operands.
    Tf32,
    Bf16,
    F16,
}

impl TmaElement {
    fn bytes(self) -> u32 {
        match self {
            Self::F32 | Self::Tf32 => 4,
            Self::Bf16 | Self::F16 => 2,
        }
    }

    fn data_type(self) -> sys::CUtensorMapDataType {
        use sys::CUtensorMapDataType as T;
        match self {
            Self::F32 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            Self::Tf32 => T::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
            Self::Bf16 => T::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            Self::F16 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        }
    }
}

/// The driver's tensor map of the `rows × cols` row-major matrix of `element`s at device
/// address `at` (rows a multiple of 16 bytes long, `at` 16-byte aligned), in tiles of
/// `box_rows` rows of 128 bytes with the 128-byte swizzle, zero past the matrix: what
/// `nvptx_device::tma`'s copies read.
pub fn tensor_map(
    at: u64, rows: u32, cols: u32, element: TmaElement, box_rows: u32,
) -> Result<TensorMap> {
    let bytes = element.bytes();
    let dims = [cols as u64, rows as u64];
    let strides = [cols as u64 * bytes as u64];
    let tile = [ROW_BYTES / bytes, box_rows];
    let steps = [1u32, 1];
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
    // SAFETY: every array has the rank's length (2, and 1 stride); the map is written by
    // the call, which reads nothing else.
    let result = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            element.data_type(),
            2,
            at as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            tile.as_ptr(),
            steps.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    result.result().call("cuTensorMapEncodeTiled")?;
    // SAFETY: written by the successful call.
    let map = unsafe { map.assume_init() };
    Ok(TensorMap(map.opaque))
}

/// The tensor maps a [`Gpu`] holds in device memory, and the host copy they were written
/// from.
pub(crate) type HeldMaps = Option<(Vec<TensorMap>, CudaSlice<u8>)>;

/// The bytes of a [`TensorMap`].
const MAP_BYTES: usize = std::mem::size_of::<TensorMap>();

impl Gpu {
    /// A device buffer holding `maps`, in order, 128-byte aligned each: the buffer of the
    /// last call when it holds the same maps already (a product timed in a loop uploads its
    /// maps once), else the same buffer rewritten on the stream. The view lives as long as
    /// the guard.
    pub(crate) fn tensor_maps<const N: usize>(
        &self, maps: [TensorMap; N],
    ) -> Result<std::sync::MutexGuard<'_, HeldMaps>> {
        let mut held = self.tensor_maps.lock().unwrap_or_else(|e| e.into_inner());
        if held.as_ref().is_some_and(|(m, _)| m.as_slice() == maps) {
            return Ok(held);
        }
        let bytes: Vec<u8> = maps
            .iter()
            .flat_map(|m| m.0.iter().flat_map(|w| w.to_le_bytes()))
            .collect();
        let mut buffer = match held.take() {
            Some((_, buffer)) if buffer.len() >= bytes.len() => buffer,
            _ => self.zeros_of::<u8>(MAP_BYTES * N.max(4))?,
        };
        self.stream
            .memcpy_htod(&bytes, &mut buffer)
            .call("cuMemcpyHtoDAsync")?;
        *held = Some((maps.to_vec(), buffer));
        Ok(held)
    }
}

/// Map `i` of a buffer [`Gpu::tensor_maps`] filled.
pub(crate) fn map_view(buffer: &CudaSlice<u8>, i: usize) -> CudaView<'_, u8> {
    buffer.slice(i * MAP_BYTES..(i + 1) * MAP_BYTES)
}
