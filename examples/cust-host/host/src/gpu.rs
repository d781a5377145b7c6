//! One GPU through cust: the primary context, the PTX module, one stream, and checked
//! launches of the catalogue's kernels with cust's `launch!`.

use crate::KERNELS_PTX;
use crate::error::{Call, Error, Result};
use cust::context::{Context, CurrentContext};
use cust::device::{Device, DeviceAttribute};
use cust::error::CudaError;
use cust::event::{Event, EventFlags};
use cust::function::{BlockSize, Function, FunctionAttribute, GridSize};
use cust::launch;
use cust::memory::{DeviceBuffer, DeviceSlice};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use cust::sys::{
    CUdevice_attribute, CUfunction_attribute, CUresult, cuDeviceGetAttribute, cuFuncGetAttribute,
    cuFuncSetAttribute,
};
use cust_plan::Kernel;
use cust_plan::args::{MatmulPlan, SUM_PARTIALS, SlidingPlan, sum_passes};
use nvptx_device::launch::{FunctionLimits, Launch, Limits};
use nvptx_device::thread::Dim3;
use std::collections::HashMap;
use std::sync::Mutex;

/// GPU 0 with `kernels-gpu`'s PTX module loaded, and one stream everything runs on.
///
/// Its methods make the context current on the calling thread first, so it may be shared
/// between threads. Launches are asynchronous: a fault inside a kernel surfaces from
/// [`CustGpu::synchronize`] or the next download.
pub struct CustGpu {
    stream: Stream,
    module: Module,
    device: Device,
    limits: Limits,
    /// Each entry point's attributes, queried once.
    functions: Mutex<HashMap<String, FunctionLimits>>,
    /// Declared last, dropped last: the stream and module live in it.
    context: Context,
}

/// The device's name, compute capability and driver version.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// As the driver names it.
    pub name: String,
    /// (major, minor).
    pub compute_capability: (i32, i32),
    /// `cuDriverGetVersion`, e.g. 13000 for 13.0.
    pub driver_api_version: i32,
}

/// `NVIDIA H100 80GB HBM3 (sm_90, CUDA driver API 13.0)`, as the cudarc host prints it.
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

/// The device buffers of a sum besides its input, allocated once and reused.
pub struct SumScratch {
    partials: DeviceBuffer<f32>,
    /// The last sum.
    pub result: DeviceBuffer<f32>,
}

impl CustGpu {
    /// GPU 0, with the embedded module. [`Error::NoDevice`] where the driver sees no GPU.
    pub fn new() -> Result<Self> {
        Self::with_ptx(KERNELS_PTX)
    }

    /// GPU 0 with the PTX module `ptx`.
    pub fn with_ptx(ptx: &str) -> Result<Self> {
        match cust::init(cust::CudaFlags::empty()) {
            Err(CudaError::NoDevice) => return Err(Error::NoDevice),
            other => other.call("cuInit")?,
        }
        if Device::num_devices().call("cuDeviceGetCount")? == 0 {
            return Err(Error::NoDevice);
        }
        let device = Device::get_device(0).call("cuDeviceGet")?;
        let context = Context::new(device).call("cuDevicePrimaryCtxRetain")?;
        let get = |a| -> Result<u32> {
            // The driver reports these as positive ints.
            Ok(device.get_attribute(a).call("cuDeviceGetAttribute")?.max(0) as u32)
        };
        use DeviceAttribute as A;
        let limits = Limits {
            max_threads_per_block: get(A::MaxThreadsPerBlock)?,
            max_block_dim: Dim3::xyz(
                get(A::MaxBlockDimX)?,
                get(A::MaxBlockDimY)?,
                get(A::MaxBlockDimZ)?,
            ),
            max_grid_dim: Dim3::xyz(
                get(A::MaxGridDimX)?,
                get(A::MaxGridDimY)?,
                get(A::MaxGridDimZ)?,
            ),
            max_shared_bytes_per_block: shared_bytes_opt_in(device)?,
        };
        let module = Module::from_ptx(ptx, &[]).call("cuModuleLoadData")?;
        let stream = Stream::new(StreamFlags::DEFAULT, None).call("cuStreamCreate")?;
        Ok(Self {
            stream,
            module,
            device,
            limits,
            functions: Mutex::new(HashMap::new()),
            context,
        })
    }

    /// Makes this GPU's context current on the calling thread.
    fn bind(&self) -> Result<()> {
        CurrentContext::set_current(&self.context).call("cuCtxSetCurrent")
    }

    /// The device's launch limits, queried when this was created.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The device's name, compute capability and driver version.
    pub fn info(&self) -> Result<DeviceInfo> {
        let cc = |a| self.device.get_attribute(a).call("cuDeviceGetAttribute");
        let driver = cust::CudaApiVersion::get().call("cuDriverGetVersion")?;
        Ok(DeviceInfo {
            name: self.device.name().call("cuDeviceGetName")?,
            compute_capability: (
                cc(DeviceAttribute::ComputeCapabilityMajor)?,
                cc(DeviceAttribute::ComputeCapabilityMinor)?,
            ),
            driver_api_version: driver.major() * 1000 + driver.minor() * 10,
        })
    }

    fn function(&self, entry: &str) -> Result<Function<'_>> {
        // cust panics turning a name with a NUL into a C string.
        if entry.contains('\0') {
            return Err(Error::EntryNotFound(entry.to_owned()));
        }
        match self.module.get_function(entry) {
            Err(CudaError::NotFound) => Err(Error::EntryNotFound(entry.to_owned())),
            other => other.call("cuModuleGetFunction"),
        }
    }

    /// What the driver says entry point `entry` allows, queried once.
    pub fn function_limits(&self, entry: &str) -> Result<FunctionLimits> {
        let mut functions = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = functions.get(entry) {
            return Ok(*f);
        }
        self.bind()?;
        let f = self.function(entry)?;
        let attr =
            |a| -> Result<u32> { Ok(f.get_attribute(a).call("cuFuncGetAttribute")?.max(0) as u32) };
        // cust's FunctionAttribute has no MAX_DYNAMIC_SHARED_SIZE_BYTES: the raw calls.
        const MAX_DYNAMIC: CUfunction_attribute =
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        let max_dynamic = || -> Result<u32> {
            let mut value = 0;
            // SAFETY: writes one int; `f` is a live function of this context's module.
            let rc = unsafe { cuFuncGetAttribute(&mut value, MAX_DYNAMIC, f.to_raw()) };
            driver_result("cuFuncGetAttribute", rc)?;
            Ok(value.max(0) as u32)
        };
        let static_shared_bytes = attr(FunctionAttribute::SharedMemorySizeBytes)?;
        // The opt-in to all the shared memory the device allows a block, as the cudarc
        // host makes it: without it a launch may not ask for more than 48 KiB.
        let opt_in = self.limits.dynamic_shared_opt_in(static_shared_bytes);
        if opt_in > max_dynamic()? {
            // SAFETY: sets one attribute of a live function to a value the device allows.
            let rc = unsafe { cuFuncSetAttribute(f.to_raw(), MAX_DYNAMIC, opt_in as i32) };
            driver_result("cuFuncSetAttribute", rc)?;
        }
        let limits = FunctionLimits {
            static_shared_bytes,
            max_threads_per_block: attr(FunctionAttribute::MaxThreadsPerBlock)?,
            max_dynamic_shared_bytes: max_dynamic()?,
        };
        functions.insert(entry.to_owned(), limits);
        Ok(limits)
    }

    /// Checks `launch` of `entry` against the device's limits and the function's own:
    /// [`Error::Launch`] names the limit. The launchers below call it before the driver.
    pub fn check_launch(&self, entry: &str, launch: &Launch) -> Result<()> {
        let f = self.function_limits(entry)?;
        Ok(self.limits.check_function(launch, &f)?)
    }

    /// Copies `host` to a new device buffer.
    pub fn upload(&self, host: &[f32]) -> Result<DeviceBuffer<f32>> {
        self.bind()?;
        DeviceBuffer::from_slice(host).call("cuMemcpyHtoD")
    }

    /// A new zeroed device buffer of `len` floats.
    pub fn zeros(&self, len: usize) -> Result<DeviceBuffer<f32>> {
        self.bind()?;
        DeviceBuffer::zeroed(len).call("cuMemAlloc")
    }

    /// Waits for the stream, then copies `buf` back.
    pub fn download(&self, buf: &DeviceSlice<f32>) -> Result<Vec<f32>> {
        self.synchronize()?;
        buf.as_host_vec().call("cuMemcpyDtoH")
    }

    /// Waits for everything queued; a fault in a kernel surfaces here.
    pub fn synchronize(&self) -> Result<()> {
        self.bind()?;
        self.stream.synchronize().call("cuStreamSynchronize")
    }

    fn zero(&self, out: &mut DeviceSlice<f32>) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        // SAFETY: `out` is borrowed for the call, and every later use of it is queued on
        // this stream (or waits for it: downloads synchronise, frees wait for the device).
        unsafe { out.set_zero_async(&self.stream) }.call("cuMemsetD8Async")
    }

    /// Queues `out = a · b` with the matmul `kernel` (`a` is m×k, `b` k×n, row-major).
    /// Wrong lengths or sizes are [`Error::Plan`], a launch beyond the limits
    /// [`Error::Launch`], both before the driver is called.
    pub fn matmul(
        &self, kernel: Kernel, a: &DeviceSlice<f32>, b: &DeviceSlice<f32>,
        out: &mut DeviceSlice<f32>, (m, k, n): (usize, usize, usize),
    ) -> Result<()> {
        let plan = MatmulPlan::new(kernel, (m, k, n), (a.len(), b.len(), out.len()))?;
        self.bind()?;
        let Some(l) = plan.launch else {
            return self.zero(out);
        };
        let entry = kernel.spec().entry;
        self.check_launch(entry, &l)?;
        let f = self.function(entry)?;
        let (grid, block, shared) = dims(&l);
        let stream = &self.stream;
        let (a, b, o) = (a.as_device_ptr(), b.as_device_ptr(), out.as_device_ptr());
        let (m, n, k) = (plan.m, plan.n, plan.k);
        // The arguments are the entry's parameters (checked against the catalogue by
        // MatmulPlan), the buffers have the lengths m, k and n imply (checked), those
        // products fit the kernels' u32 indices (checked), and the launch is within the
        // device's and the function's limits (checked).
        let queued = match plan.tile_width_arg {
            // SAFETY: as above, (a, b, out, m, n, k).
            None => unsafe { launch!(f<<<grid, block, shared, stream>>>(a, b, o, m, n, k)) },
            // SAFETY: as above, (a, b, out, m, n, k, tw) with the launch's tile width.
            Some(tw) => unsafe {
                launch!(f<<<grid, block, shared, stream>>>(a, b, o, m, n, k, tw))
            },
        };
        queued.call("cuLaunchKernel")
    }

    /// The buffers a sum needs besides its input.
    pub fn sum_scratch(&self) -> Result<SumScratch> {
        Ok(SumScratch {
            partials: self.zeros(SUM_PARTIALS)?,
            result: self.zeros(1)?,
        })
    }

    /// Queues the sum of `input` into `scratch.result` with `kernel`: two launches (one if a
    /// block suffices, none for an empty input, whose sum is 0). Both are checked before
    /// either is queued.
    pub fn sum(
        &self, kernel: Kernel, input: &DeviceSlice<f32>, scratch: &mut SumScratch,
    ) -> Result<()> {
        let passes = sum_passes(kernel, input.len())?;
        self.bind()?;
        let entry = kernel.spec().entry;
        for pass in &passes {
            self.check_launch(entry, &pass.launch)?;
        }
        if passes.is_empty() {
            return self.zero(&mut scratch.result);
        }
        let f = self.function(entry)?;
        let stream = &self.stream;
        for (i, pass) in passes.iter().enumerate() {
            let src = if i == 0 { input } else { &scratch.partials }.as_device_ptr();
            let dst = if pass.first {
                scratch.partials.as_device_ptr()
            } else {
                scratch.result.as_device_ptr()
            };
            let (grid, block, shared) = dims(&pass.launch);
            let n = pass.n;
            // SAFETY: (input, n, partials) as the entry declares (checked against the
            // catalogue); device buffers are 256-byte aligned as the 16-byte loads need;
            // `src` holds n floats and `dst` one per block (the partials hold the most
            // blocks a first pass has, the result one for a single block).
            unsafe { launch!(f<<<grid, block, shared, stream>>>(src, n, dst)) }
                .call("cuLaunchKernel")?;
        }
        Ok(())
    }

    /// Queues the sliding average of `a` over windows of `window` into `out`, which must
    /// hold `a.len() - window + 1` floats (none where the window is longer than `a`).
    pub fn sliding(
        &self, kernel: Kernel, a: &DeviceSlice<f32>, window: usize, out: &mut DeviceSlice<f32>,
    ) -> Result<()> {
        let plan = SlidingPlan::new(kernel, a.len(), window, out.len())?;
        let Some(l) = plan.launch else {
            return Ok(());
        };
        self.bind()?;
        let entry = kernel.spec().entry;
        self.check_launch(entry, &l)?;
        let f = self.function(entry)?;
        let (grid, block, shared) = dims(&l);
        let stream = &self.stream;
        let (src, dst, n, w) = (a.as_device_ptr(), out.as_device_ptr(), plan.n, plan.window);
        // SAFETY: (a, n, window, out) as the entry declares (checked against the
        // catalogue), 1 <= window <= n, `out` of n - window + 1 floats (checked), the
        // launch within the limits (checked).
        unsafe { launch!(f<<<grid, block, shared, stream>>>(src, n, w, dst)) }
            .call("cuLaunchKernel")
    }

    /// Runs `launch` `warmup` times untimed, then `iters` times, each bracketed by CUDA
    /// events on the stream (as the cudarc host times); returns each run's milliseconds.
    pub fn time_ms(
        &self, warmup: usize, iters: usize, mut launch: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        for _ in 0..warmup {
            launch()?;
        }
        self.synchronize()?;
        let mut marks = Vec::with_capacity(iters);
        for _ in 0..iters {
            let start = Event::new(EventFlags::DEFAULT).call("cuEventCreate")?;
            start.record(&self.stream).call("cuEventRecord")?;
            launch()?;
            let end = Event::new(EventFlags::DEFAULT).call("cuEventCreate")?;
            end.record(&self.stream).call("cuEventRecord")?;
            marks.push((start, end));
        }
        self.synchronize()?;
        marks
            .iter()
            .map(|(s, e)| {
                e.elapsed_time_f32(s)
                    .map(f64::from)
                    .call("cuEventElapsedTime")
            })
            .collect()
    }
}

/// cust's launch dimensions.
fn dims(l: &Launch) -> (GridSize, BlockSize, u32) {
    (
        GridSize::xyz(l.grid.x, l.grid.y, l.grid.z),
        BlockSize::xyz(l.block.x, l.block.y, l.block.z),
        l.dynamic_shared_bytes,
    )
}

/// [`Error::DriverCode`] unless `rc` is success.
fn driver_result(call: &'static str, rc: CUresult) -> Result<()> {
    if rc == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::DriverCode { call, code: rc })
    }
}

/// The shared memory one block may have with the per-function opt-in
/// (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`, which cust's `DeviceAttribute`
/// does not name).
fn shared_bytes_opt_in(device: Device) -> Result<u32> {
    let mut value = 0;
    // SAFETY: writes one int; `device` is a device the driver returned.
    let rc = unsafe {
        cuDeviceGetAttribute(
            &mut value,
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            device.as_raw(),
        )
    };
    driver_result("cuDeviceGetAttribute", rc)?;
    Ok(value.max(0) as u32)
}
