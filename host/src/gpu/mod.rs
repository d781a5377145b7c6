//! The GPU: a CUDA context with the kernels' PTX module loaded, and checked launches.

mod matmul;
mod timing;

use crate::error::{DriverContext, Error, Result};
use crate::ptx::KERNELS_PTX;
use cudarc::driver::sys::{self, CUresult, cudaError_enum as Code};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError};
use std::sync::Arc;

/// One GPU with the `kernels-gpu` module loaded, and one stream everything runs on.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
}

/// What describes the device in a report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceInfo {
    pub name: String,
    pub compute_capability: (i32, i32),
    /// As CUDA reports it, e.g. 13000 for 13.0.
    pub driver_api_version: i32,
    pub total_memory_bytes: usize,
}

impl Gpu {
    /// GPU 0.
    pub fn new() -> Result<Self> {
        Self::with_ordinal(0)
    }

    /// GPU `ordinal`. Fails with [`Error::NoDriver`] or [`Error::NoDevice`] where there is
    /// no GPU, and with [`Error::PtxLoad`] if the driver rejects the module.
    pub fn with_ordinal(ordinal: usize) -> Result<Self> {
        // SAFETY: only tries to open the library.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::NoDriver("libcuda.so could not be loaded".into()));
        }
        match CudaContext::device_count() {
            Ok(0) | Err(DriverError(Code::CUDA_ERROR_NO_DEVICE)) => return Err(Error::NoDevice),
            Err(source) => {
                return Err(Error::Driver {
                    call: "cuDeviceGetCount",
                    source,
                });
            }
            Ok(_) => {}
        }
        let ctx = CudaContext::new(ordinal).call("cuCtxCreate")?;
        // One stream and no cross-stream sharing: per-buffer event tracking would only add
        // driver calls to every launch.
        // SAFETY: this context's buffers are used on `stream` only.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let module = ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(KERNELS_PTX))
            .map_err(Error::PtxLoad)?;
        Ok(Self {
            ctx,
            stream,
            module,
        })
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Name, compute capability, driver version and memory of the device.
    pub fn info(&self) -> Result<DeviceInfo> {
        let mut version = 0;
        // SAFETY: writes one int.
        let rc: CUresult = unsafe { sys::cuDriverGetVersion(&mut version) };
        rc.result().call("cuDriverGetVersion")?;
        Ok(DeviceInfo {
            name: self.ctx.name().call("cuDeviceGetName")?,
            compute_capability: self.ctx.compute_capability().call("cuDeviceGetAttribute")?,
            driver_api_version: version,
            total_memory_bytes: self.ctx.total_mem().call("cuDeviceTotalMem")?,
        })
    }

    /// The kernel entry point `name` of the embedded module.
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        self.module.load_function(name).map_err(Error::PtxLoad)
    }

    /// Fails with [`Error::OutOfDeviceMemory`] unless `bytes` are free now.
    pub fn reserve(&self, bytes: u64) -> Result<()> {
        let (free, total) = self.ctx.mem_get_info().call("cuMemGetInfo")?;
        if bytes > free as u64 {
            return Err(Error::OutOfDeviceMemory {
                requested: bytes,
                free: free as u64,
                total: total as u64,
            });
        }
        Ok(())
    }

    /// Copies `host` to a new device buffer.
    pub fn upload(&self, host: &[f32]) -> Result<CudaSlice<f32>> {
        self.reserve(std::mem::size_of_val(host) as u64)?;
        self.stream
            .clone_htod(host)
            .map_err(|e| self.alloc_error(e, std::mem::size_of_val(host)))
    }

    /// A new zeroed device buffer of `len` f32s.
    pub fn zeros(&self, len: usize) -> Result<CudaSlice<f32>> {
        let bytes = len as u64 * 4;
        self.reserve(bytes)?;
        self.stream
            .alloc_zeros(len)
            .map_err(|e| self.alloc_error(e, len * 4))
    }

    /// Copies a device buffer back.
    pub fn download(&self, dev: &CudaSlice<f32>) -> Result<Vec<f32>> {
        self.stream.clone_dtoh(dev).call("cuMemcpyDtoH")
    }

    /// Waits for the stream; a kernel fault surfaces here.
    pub fn synchronize(&self, kernel: &'static str) -> Result<()> {
        self.stream.synchronize().map_err(|e| fault(kernel, e))
    }

    fn alloc_error(&self, e: DriverError, bytes: usize) -> Error {
        match e {
            DriverError(Code::CUDA_ERROR_OUT_OF_MEMORY) => {
                let (free, total) = self.ctx.mem_get_info().unwrap_or((0, 0));
                Error::OutOfDeviceMemory {
                    requested: bytes as u64,
                    free: free as u64,
                    total: total as u64,
                }
            }
            source => Error::Driver {
                call: "cuMemAlloc",
                source,
            },
        }
    }
}

/// Classifies an error from a launch or the synchronisation after it. Faults inside a
/// kernel (bad address, trap) are sticky: the context cannot be used again.
pub(crate) fn fault(kernel: &'static str, source: DriverError) -> Error {
    let context_usable = !matches!(
        source.0,
        Code::CUDA_ERROR_ILLEGAL_ADDRESS
            | Code::CUDA_ERROR_LAUNCH_FAILED
            | Code::CUDA_ERROR_MISALIGNED_ADDRESS
            | Code::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | Code::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | Code::CUDA_ERROR_INVALID_PC
            | Code::CUDA_ERROR_HARDWARE_STACK_ERROR
            | Code::CUDA_ERROR_ASSERT
    );
    Error::KernelFault {
        kernel,
        source,
        context_usable,
    }
}
