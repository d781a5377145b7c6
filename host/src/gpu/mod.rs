//! The GPU: a CUDA context with the kernels' PTX module loaded, and checked launches.

pub mod autotune;
mod backend;
mod bf16;
pub mod cache;
mod cublas;
mod fusion;
mod gemm;
mod half;
mod launch;
mod matmul;
mod modules;
mod packed;
mod timing;
mod tma;
mod vector;

pub use modules::link_cubin;
pub use vector::{AxisScratch, ReduceScratch, SlidingScratch};

pub use cublas::{Cublas, CublasMath};
pub use launch::{EntryInfo, Launcher, launch_config};

use crate::problem::error::{DriverContext, Error, Result, is_sticky};
use crate::problem::shape::MatmulShape;
use cudarc::driver::sys::{self, CUdevice_attribute as Attr, CUresult, cudaError_enum as Code};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtrMut, DriverError,
};
use kernels_gpu::nvptx_device::launch::Limits;
use kernels_gpu::nvptx_device::thread::Dim3;
use modules::Modules;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// One GPU, the kernels' PTX (the `kernels-gpu` modules unless [`Gpu::with_ptx`]), and one
/// stream everything runs on.
///
/// The embedded kernels are compiled for the GPU one entry point at a time, when one is first
/// launched (`modules`): making a `Gpu` compiles nothing, and [`Gpu::load_entries`]
/// compiles a list of entries at once, in parallel.
///
/// Every launch is checked against the device's limits, queried once here, and the
/// launched function's own (threads per block for its register use, shared memory), so a
/// bad launch is a typed error rather than a driver code. Which errors leave the context
/// usable: all but [`Error::KernelFault`] with `context_usable: false` (see
/// [`Error::leaves_context_usable`]).
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// The modules loaded so far; raw launches check their arguments against the `.param`
    /// lists of their text. Shared with the handle's [siblings](Gpu::sibling).
    modules: Arc<Modules>,
    limits: Limits,
    /// Streaming multiprocessors: how many blocks fill the device.
    multiprocessors: u32,
    /// Entry points looked up so far, with their attributes: one driver query per entry
    /// instead of four per launch.
    entries: Mutex<HashMap<String, Arc<launch::EntryInfo>>>,
    /// The tensor maps of the last launch that took some, in device memory
    /// ([`Gpu::tensor_maps`]).
    tensor_maps: Mutex<
        Option<(
            Vec<kernels_gpu::nvptx_device::tma::TensorMap>,
            CudaSlice<u8>,
        )>,
    >,
    /// The workspace of split-k and repacked products, grown to the largest one used so far
    /// (`Gpu::workspace`).
    workspace: Mutex<Option<CudaSlice<f32>>>,
    /// The ticket counter and per-tile flags of serial split-k products, grown to the
    /// largest one used so far and all 0 between launches (`Gpu::serial_flags`).
    serial_flags: Mutex<Option<CudaSlice<u64>>>,
    /// What describes the device, queried once ([`Gpu::info`]): the autotuner's cache key
    /// of every autotuned launch is made of it.
    info: OnceLock<DeviceInfo>,
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

/// `NVIDIA H100 80GB HBM3 (sm_90, CUDA driver API 13.0)`.
impl std::fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ((major, minor), v) = (self.compute_capability, self.driver_api_version);
        write!(
            f,
            "{} (sm_{major}{minor}, CUDA driver API {}.{})",
            self.name,
            v / 1000,
            v % 1000 / 10
        )
    }
}

impl Gpu {
    /// GPU 0.
    pub fn new() -> Result<Self> {
        Self::with_ordinal(0)
    }

    /// GPU 0, or `None` on a machine without one (no CUDA driver, or no device) after
    /// printing `{what} skipped: no GPU: …` ([`Error::no_gpu`]): for examples and
    /// benchmarks, which skip visibly there instead of failing. Any other error (a GPU that
    /// is present but cannot be set up) is returned.
    pub fn new_or_skip(what: &str) -> Result<Option<Self>> {
        match Self::new() {
            Ok(gpu) => Ok(Some(gpu)),
            Err(e) => match e.no_gpu() {
                Some(why) => {
                    println!("{what} skipped: {why}");
                    Ok(None)
                }
                None => Err(e),
            },
        }
    }

    /// GPU `ordinal`. Fails with [`Error::NoDriver`] or [`Error::NoDevice`] where there is
    /// no GPU, and [`Error::NoSuchDevice`] for an ordinal past the last GPU. It compiles no
    /// kernel: an entry point whose module the driver rejects is [`Error::PtxLoad`] when it
    /// is first launched.
    pub fn with_ordinal(ordinal: usize) -> Result<Self> {
        Self::load(ordinal, None)
    }

    /// GPU `ordinal` with the PTX module `ptx` instead of the embedded ones, e.g. one built
    /// for another target, loaded whole now. Malformed PTX is [`Error::PtxLoad`] with the
    /// driver's log (the context stays usable); a NUL byte is [`Error::PtxNul`], found before
    /// the driver is touched.
    pub fn with_ptx(ordinal: usize, ptx: &str) -> Result<Self> {
        // cudarc turns the text into a C string and would panic on a NUL.
        if let Some(offset) = ptx.find('\0') {
            return Err(Error::PtxNul {
                offset,
                len: ptx.len(),
            });
        }
        Self::load(ordinal, Some(ptx))
    }

    fn load(ordinal: usize, ptx: Option<&str>) -> Result<Self> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::NoSuchDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal).call("cuCtxCreate")?;
        // One stream and no cross-stream sharing: per-buffer event tracking would only add
        // driver calls to every launch.
        // SAFETY: this context's buffers are used on `stream` only.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let limits = query_limits(&ctx)?;
        let multiprocessors = ctx
            .attribute(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .call("cuDeviceGetAttribute")?
            .max(1) as u32;
        let compute_capability = ctx.compute_capability().call("cuDeviceGetAttribute")?;
        let modules = match ptx {
            None => {
                let cubins = cache::CubinCache::new(compute_capability, driver_version()?);
                Modules::embedded(Arc::clone(&ctx), compute_capability, cubins)
            }
            Some(ptx) => Modules::custom(Arc::clone(&ctx), compute_capability, ptx)?,
        };
        Ok(Self::handle(
            ctx,
            stream,
            Arc::new(modules),
            limits,
            multiprocessors,
        ))
    }

    /// A handle on `ctx` launching on `stream`, with no entry looked up and no scratch yet.
    fn handle(
        ctx: Arc<CudaContext>, stream: Arc<CudaStream>, modules: Arc<Modules>, limits: Limits,
        multiprocessors: u32,
    ) -> Self {
        Self {
            ctx,
            stream,
            modules,
            limits,
            multiprocessors,
            entries: Mutex::new(HashMap::new()),
            tensor_maps: Mutex::new(None),
            workspace: Mutex::new(None),
            serial_flags: Mutex::new(None),
            info: OnceLock::new(),
        }
    }

    /// A second handle on this GPU, with a stream of its own (non-blocking) and the same
    /// context and modules: launches through it may run beside this handle's, and buffers
    /// of either are usable by both once events order their uses. Its scratch (split-k
    /// workspace, tensor maps) is its own.
    pub(crate) fn sibling(&self) -> Result<Self> {
        self.ctx.bind_to_thread().call("cuCtxSetCurrent")?;
        Ok(Self::handle(
            Arc::clone(&self.ctx),
            self.ctx.new_stream().call("cuStreamCreate")?,
            Arc::clone(&self.modules),
            self.limits,
            self.multiprocessors,
        ))
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The device's streaming multiprocessors.
    pub fn multiprocessors(&self) -> u32 {
        self.multiprocessors
    }

    /// The device's launch limits, as queried when this `Gpu` was created.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The PTX text entry points are looked up in: the module given to [`Gpu::with_ptx`],
    /// or the main embedded one ([`crate::plan::ptx::KERNELS_PTX`]), whose entries are loaded one
    /// at a time.
    pub fn ptx(&self) -> &str {
        self.modules.text()
    }

    /// Compiles and loads the modules of `entries` now, each on a thread of its own, rather
    /// than one by one at their first launches; those loaded already are skipped. Says so
    /// on stderr when it takes more than a second. Fails as a launch of the first entry that
    /// cannot be loaded would ([`Error::EntryNotFound`], [`Error::NeedsHopper`],
    /// [`Error::PtxLoad`]); the others stay loaded.
    pub fn load_entries(&self, entries: &[&str]) -> Result<()> {
        self.modules.load(entries)
    }

    /// Whether the module of `entry` is loaded (compiled for this GPU) already.
    pub fn is_loaded(&self, entry: &str) -> bool {
        self.modules.is_loaded(entry)
    }

    /// Name, compute capability, driver version and memory of the device: asked of the
    /// driver on the first call, none of them changes while the process runs.
    pub fn info(&self) -> Result<DeviceInfo> {
        if let Some(info) = self.info.get() {
            return Ok(info.clone());
        }
        let info = DeviceInfo {
            name: self.ctx.name().call("cuDeviceGetName")?,
            compute_capability: self.ctx.compute_capability().call("cuDeviceGetAttribute")?,
            driver_api_version: driver_version()?,
            total_memory_bytes: self.ctx.total_mem().call("cuDeviceTotalMem")?,
        };
        Ok(self.info.get_or_init(|| info).clone())
    }

    /// The kernel entry point `name` of the loaded module ([`Error::EntryNotFound`] if it
    /// has none).
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        Ok(self.entry_info(name)?.function().clone())
    }

    /// Loads another PTX module into this GPU's context, e.g. a downstream kernel crate's
    /// built with `nvptx-builder`, whose functions are then launched with cudarc on
    /// [`Gpu::stream`] (the checked launches of this type reach its own module only).
    /// Malformed PTX is [`Error::PtxLoad`] with the driver's log; a NUL byte is
    /// [`Error::PtxNul`].
    pub fn load_module(&self, ptx: &str) -> Result<Arc<CudaModule>> {
        modules::load(&self.ctx, ptx, "the PTX module")
    }

    /// Fails with [`Error::OutOfDeviceMemory`] unless `bytes` are free now.
    pub fn reserve(&self, bytes: u64) -> Result<()> {
        let (mut free, mut total) = self.ctx.mem_get_info().call("cuMemGetInfo")?;
        if bytes > free as u64 {
            // Buffers freed with cuMemFreeAsync return to the driver only when the stream
            // synchronises, and not at all from a pool told to keep them
            // (`keep_freed_memory`): count them before refusing.
            self.stream.synchronize().call("cuStreamSynchronize")?;
            self.trim_freed_memory()?;
            (free, total) = self.ctx.mem_get_info().call("cuMemGetInfo")?;
        }
        if bytes > free as u64 {
            return Err(Error::OutOfDeviceMemory {
                requested: bytes,
                free: free as u64,
                total: total as u64,
            });
        }
        Ok(())
    }

    /// Keeps the memory of freed buffers in the device's pool instead of returning it to the
    /// driver at each synchronisation (the pool's default): the multi-GPU operations
    /// allocate their transfers' buffers on each call, and a pool that must map them afresh
    /// each time costs milliseconds per GiB. [`Gpu::reserve`] still counts that memory as
    /// free: short of memory, it returns it to the driver first. Nothing to do on a device
    /// without memory pools (whose buffers cudarc allocates synchronously).
    pub(crate) fn keep_freed_memory(&self) -> Result<()> {
        let Some(pool) = self.memory_pool()? else {
            return Ok(());
        };
        let mut keep = u64::MAX;
        // SAFETY: the release threshold is a u64 attribute of a live pool.
        unsafe {
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut keep as *mut u64).cast(),
            )
        }
        .result()
        .call("cuMemPoolSetAttribute")
    }

    /// Opens the device's memory pool (where its buffers come from) to device `peer`
    /// (a CUDA ordinal): that device's kernels and copy engines may then read and write
    /// them directly. Nothing to do where the device has no pool.
    pub(crate) fn open_memory_to(&self, peer: usize) -> Result<()> {
        let Some(pool) = self.memory_pool()? else {
            return Ok(());
        };
        let desc = sys::CUmemAccessDesc {
            location: sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: peer as i32,
            },
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: one access descriptor for a live pool, read during the call.
        unsafe { sys::cuMemPoolSetAccess(pool, &desc, 1) }
            .result()
            .call("cuMemPoolSetAccess")
    }

    /// Returns the memory the device's pool keeps from freed buffers to the driver.
    fn trim_freed_memory(&self) -> Result<()> {
        let Some(pool) = self.memory_pool()? else {
            return Ok(());
        };
        // SAFETY: trims a live pool; memory in use is not touched.
        unsafe { sys::cuMemPoolTrimTo(pool, 0) }
            .result()
            .call("cuMemPoolTrimTo")
    }

    /// The device's default memory pool, which cudarc's stream-ordered allocations use;
    /// `None` where the device has none.
    fn memory_pool(&self) -> Result<Option<sys::CUmemoryPool>> {
        if !self.ctx.has_async_alloc() {
            return Ok(None);
        }
        let mut pool = std::ptr::null_mut();
        // SAFETY: writes one pool handle for this context's device.
        unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, self.ctx.cu_device()) }
            .result()
            .call("cuDeviceGetDefaultMemPool")?;
        Ok(Some(pool))
    }

    /// Copies `host` to a new device buffer.
    pub fn upload(&self, host: &[f32]) -> Result<CudaSlice<f32>> {
        self.upload_of(host)
    }

    /// [`upload`](Self::upload) for any element type.
    pub(crate) fn upload_of<T: cudarc::driver::DeviceRepr>(
        &self, host: &[T],
    ) -> Result<CudaSlice<T>> {
        let bytes = buffer_bytes::<T>(host.len())?;
        self.reserve(bytes)?;
        self.stream
            .clone_htod(host)
            .map_err(|e| self.alloc_error(e, bytes))
    }

    /// A new zeroed device buffer of `len` f32s.
    /// A length whose byte size does not fit `u64` is [`Error::IndexOverflow`]
    /// ([`buffer_bytes`]), found before the driver is asked.
    pub fn zeros(&self, len: usize) -> Result<CudaSlice<f32>> {
        self.zeros_of::<f32>(len)
    }

    /// A new zeroed device buffer of `len` values of `T`; see [`Gpu::zeros`].
    pub(crate) fn zeros_of<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self, len: usize,
    ) -> Result<CudaSlice<T>> {
        let bytes = buffer_bytes::<T>(len)?;
        self.reserve(bytes)?;
        self.stream
            .alloc_zeros(len)
            .map_err(|e| self.alloc_error(e, bytes))
    }

    /// A new device buffer of `len` f32s whose contents are whatever the memory held: for
    /// buffers written whole before they are read (a transfer's destination), where
    /// zeroing them would only cost a pass over the memory.
    pub(crate) fn uninit(&self, len: usize) -> Result<CudaSlice<f32>> {
        let bytes = buffer_bytes::<f32>(len)?;
        self.reserve(bytes)?;
        // SAFETY: every bit pattern is a valid f32.
        unsafe { self.stream.alloc::<f32>(len) }.map_err(|e| self.alloc_error(e, bytes))
    }

    /// A new device buffer of `len` f32s, every one NaN ([`fill_nan`](Self::fill_nan)).
    pub fn nans(&self, len: usize) -> Result<CudaSlice<f32>> {
        let bytes = buffer_bytes::<f32>(len)?;
        self.reserve(bytes)?;
        // SAFETY: every bit pattern is a valid f32, and every byte is written just below,
        // on the same stream, before anything can read the buffer.
        let mut buf =
            unsafe { self.stream.alloc::<f32>(len) }.map_err(|e| self.alloc_error(e, bytes))?;
        self.fill_nan(&mut buf)?;
        Ok(buf)
    }

    /// Queues a fill of `buf` with NaN (every byte `0xff`, a NaN pattern) on the device: a
    /// product's output poison that costs no host memory and no upload, so an element a
    /// kernel fails to write shows up as non-finite.
    pub fn fill_nan(&self, buf: &mut CudaSlice<f32>) -> Result<()> {
        let bytes = buffer_bytes::<f32>(buf.len())?;
        if bytes == 0 {
            return Ok(());
        }
        let (ptr, _record) = buf.device_ptr_mut(&self.stream);
        // SAFETY: `ptr` is the start of `buf`, which holds `bytes` bytes (it fits usize: the
        // buffer exists), and the memset is queued on the stream that owns it.
        unsafe {
            cudarc::driver::result::memset_d8_async(
                ptr,
                0xff,
                bytes as usize,
                self.stream.cu_stream(),
            )
        }
        .call("cuMemsetD8Async")
    }

    /// Queues a device-to-device copy of `src` into `dst`, as long as `src`: the bandwidth
    /// ceiling the vector kernels are measured against.
    pub fn copy_device(&self, src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>) -> Result<()> {
        output_len(dst.len(), src.len())?;
        self.stream.memcpy_dtod(src, dst).call("cuMemcpyDtoD")
    }

    /// Copies a device buffer back.
    pub fn download(&self, dev: &CudaSlice<f32>) -> Result<Vec<f32>> {
        self.stream.clone_dtoh(dev).call("cuMemcpyDtoH")
    }

    /// Copies a device buffer back into `host`, which must be as long
    /// ([`Error::InputLength`] otherwise): one host buffer reused for many results spares
    /// the page faults of a new one each time (a second per GiB on some hosts).
    pub fn download_into(&self, dev: &CudaSlice<f32>, host: &mut [f32]) -> Result<()> {
        output_len(host.len(), dev.len())?;
        if host.is_empty() {
            return Ok(());
        }
        self.stream.memcpy_dtoh(dev, host).call("cuMemcpyDtoH")?;
        // `host` is read as soon as this returns: make sure the copy is done.
        self.stream.synchronize().call("cuStreamSynchronize")
    }

    /// Waits for the stream; a fault in `kernel` (the last one queued) surfaces here as
    /// [`Error::KernelFault`].
    pub fn synchronize(&self, kernel: &str) -> Result<()> {
        self.stream.synchronize().map_err(|e| fault(kernel, e))
    }

    fn alloc_error(&self, e: DriverError, bytes: u64) -> Error {
        match e {
            DriverError(Code::CUDA_ERROR_OUT_OF_MEMORY) => {
                let (free, total) = self.ctx.mem_get_info().unwrap_or((0, 0));
                Error::OutOfDeviceMemory {
                    requested: bytes,
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

/// How many GPUs the driver reports: [`Error::NoDriver`] without a driver,
/// [`Error::NoDevice`] where it reports none.
pub fn device_count() -> Result<usize> {
    // SAFETY: only tries to open the library.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::NoDriver("libcuda.so could not be loaded".into()));
    }
    match CudaContext::device_count() {
        Ok(0) | Err(DriverError(Code::CUDA_ERROR_NO_DEVICE)) => Err(Error::NoDevice),
        Err(source) => Err(Error::Driver {
            call: "cuDeviceGetCount",
            source,
        }),
        Ok(n) => Ok(n as usize),
    }
}

/// The size in bytes of a device buffer of `len` values of `T`: [`Error::IndexOverflow`]
/// (operand `"device buffer"`, `1 × len`) where it does not fit `u64`. Every allocation of
/// [`Gpu`] sizes its buffer with this, before the driver is asked.
pub fn buffer_bytes<T>(len: usize) -> Result<u64> {
    u64::try_from(len)
        .ok()
        .and_then(|n| n.checked_mul(std::mem::size_of::<T>() as u64))
        .ok_or(Error::IndexOverflow {
            operand: "device buffer",
            rows: 1,
            cols: len,
            elements: len as u128,
        })
}

/// The CUDA driver API version, e.g. 13000 for 13.0.
fn driver_version() -> Result<i32> {
    let mut version = 0;
    // SAFETY: writes one int.
    let rc: CUresult = unsafe { sys::cuDriverGetVersion(&mut version) };
    rc.result().call("cuDriverGetVersion")?;
    Ok(version)
}

/// The device's launch limits.
fn query_limits(ctx: &CudaContext) -> Result<Limits> {
    let get = |attr| -> Result<u32> {
        let v = ctx.attribute(attr).call("cuDeviceGetAttribute")?;
        // The driver reports these as positive ints.
        Ok(v.max(0) as u32)
    };
    Ok(Limits {
        max_threads_per_block: get(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_block_dim: Dim3::xyz(
            get(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
            get(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
            get(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
        ),
        max_grid_dim: Dim3::xyz(
            get(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
            get(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
            get(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
        ),
        // With the opt-in, which `Gpu::entry_info` makes for every function.
        max_shared_bytes_per_block: get(
            Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )?,
    })
}

/// Classifies an error from a launch or the synchronisation after it. Faults inside a
/// kernel (bad address, trap) are sticky: the context cannot be used again.
/// Checks a product's buffers against `shape`; where there is nothing to launch (an empty
/// product, or `k = 0` and a product of zeros) zeroes `out` on `stream` and returns `true`.
/// A failed memset is reported as a fault of `what`.
pub(crate) fn zero_if_trivial<T>(
    stream: &Arc<CudaStream>, what: &str, a: &CudaSlice<T>, b: &CudaSlice<T>,
    out: &mut CudaSlice<f32>, shape: MatmulShape,
) -> Result<bool> {
    shape.check_buffers(a.len(), b.len(), out.len())?;
    if !shape.is_trivial() {
        return Ok(false);
    }
    stream.memset_zeros(out).map_err(|e| fault(what, e))?;
    Ok(true)
}

/// [`Error::InputLength`] unless a 1-D output holds `expected` floats.
pub(crate) fn output_len(actual: usize, expected: usize) -> Result<()> {
    Error::check_len("out", 1, expected, actual)
}

pub(crate) fn fault(kernel: &str, source: DriverError) -> Error {
    Error::KernelFault {
        kernel: kernel.to_owned(),
        source,
        context_usable: !is_sticky(source),
    }
}
