//! The one launch path: cudarc's `launch_builder` (buffers borrowed for the launch) behind
//! the project's checks. Before anything reaches the driver, a launch is checked against the
//! device's limits, the function's own (threads per block for its register use, dynamic
//! shared memory) and the entry's `.param` list in the PTX (the sizes of the arguments
//! pushed), and a fault is classified (does the context survive it).
//!
//! ```ignore
//! let info = gpu.entry_info("reduce_sum_tree")?;
//! let mut args = gpu.launcher(&info);
//! args.buffer(&input).scalar(&n).buffer_mut(&mut partials);
//! unsafe { args.launch(&launch) }?;
//! ```

use super::{Gpu, fault};
use crate::problem::error::{DriverContext, Error, Result};
use crate::problem::shape::MatmulShape;
use cudarc::driver::sys::{CUfunction_attribute as FuncAttr, cudaError_enum as Code};
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaView, CudaViewMut, DeviceRepr, DriverError, LaunchArgs,
    LaunchConfig, PushKernelArg,
};
use kernels_gpu::nvptx_device::launch::{FunctionLimits, Launch};
use std::sync::Arc;

/// An entry point of the loaded module and what the driver says about it.
#[derive(Debug)]
pub struct EntryInfo {
    pub name: String,
    /// Threads per block this function can launch with: the device's limit, or fewer
    /// where its register use does not fit.
    pub max_threads_per_block: u32,
    /// Its static `.shared` declarations.
    pub static_shared_bytes: u32,
    /// The dynamic shared memory it may be launched with: the device's per-block limit
    /// with the opt-in less the static part ([`Gpu::entry_info`] opts every function in).
    pub max_dynamic_shared_bytes: u32,
    pub registers_per_thread: u32,
    /// Local memory per thread: the PTX's `.local` arrays and what `ptxas` spilled.
    pub local_bytes_per_thread: u32,
    /// Sizes of its parameters, from the PTX text; `None` where a declaration is not one
    /// [`nvptx_builder::ptx::param_sizes`] reads.
    pub param_bytes: Option<Vec<usize>>,
    /// Its clusters the device runs at once (`cuOccupancyMaxActiveClusters`), asked once
    /// for an entry launched in clusters ([`Gpu::resident_blocks`]).
    resident_clusters: std::sync::OnceLock<u32>,
    function: CudaFunction,
}

impl EntryInfo {
    pub fn function(&self) -> &CudaFunction {
        &self.function
    }
}

/// cudarc's launch configuration for `l`, for launches of other modules' functions with
/// cudarc's own builder.
pub fn launch_config(l: &Launch) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (l.grid.x, l.grid.y, l.grid.z),
        block_dim: (l.block.x, l.block.y, l.block.z),
        shared_mem_bytes: l.dynamic_shared_bytes,
    }
}

/// The arguments of one launch of one entry point, pushed in order, and checked against the
/// entry's `.param` list when launched ([`Launcher::launch`]).
pub struct Launcher<'a> {
    gpu: &'a Gpu,
    info: &'a EntryInfo,
    args: LaunchArgs<'a>,
    sizes: Vec<usize>,
}

impl<'a> Launcher<'a> {
    /// A scalar parameter, passed by value (`.param .u32`, …).
    pub fn scalar<T: DeviceRepr>(&mut self, value: &'a T) -> &mut Self {
        self.sizes.push(std::mem::size_of::<T>());
        self.args.arg(value);
        self
    }

    /// Scalar parameters, one after another.
    pub fn scalars<T: DeviceRepr>(&mut self, values: &'a [T]) -> &mut Self {
        for value in values {
            self.scalar(value);
        }
        self
    }

    /// A product's dimensions `m`, `n`, `k`, in the order the matmul-shaped entries take
    /// them after their buffers.
    pub fn dims(&mut self, shape: &'a MatmulShape) -> &mut Self {
        self.scalar(&shape.m).scalar(&shape.n).scalar(&shape.k)
    }

    /// A buffer the kernel only reads (its device address, `.param .u64`).
    pub fn buffer<T>(&mut self, buf: &'a CudaSlice<T>) -> &mut Self {
        self.sizes.push(std::mem::size_of::<u64>());
        self.args.arg(buf);
        self
    }

    /// A buffer the kernel writes, borrowed mutably for the launch.
    pub fn buffer_mut<T>(&mut self, buf: &'a mut CudaSlice<T>) -> &mut Self {
        self.sizes.push(std::mem::size_of::<u64>());
        self.args.arg(buf);
        self
    }

    /// Part of a buffer the kernel only reads ([`CudaSlice::slice`]).
    pub fn view<'c: 'a, T>(&mut self, view: &'a CudaView<'c, T>) -> &mut Self {
        self.sizes.push(std::mem::size_of::<u64>());
        self.args.arg(view);
        self
    }

    /// Part of a buffer the kernel writes ([`CudaSlice::slice_mut`]).
    pub fn view_mut<'c: 'a, T>(&mut self, view: &'a mut CudaViewMut<'c, T>) -> &mut Self {
        self.sizes.push(std::mem::size_of::<u64>());
        self.args.arg(view);
        self
    }

    /// Queues the kernel with `launch` on the [`Gpu`]'s stream, after checking the launch
    /// ([`Gpu::check_launch`]) and the arguments against the entry's `.param` list
    /// ([`Error::KernelArgMismatch`]). Asynchronous: a fault inside the kernel comes back
    /// from [`Gpu::synchronize`] (or the next call) as [`Error::KernelFault`].
    ///
    /// # Safety
    /// The kernel may read and write whatever device memory its pointer arguments reach:
    /// the buffers must be as large as it expects for the scalar arguments given. (A pointer
    /// to unmapped device memory does not corrupt the host: the kernel faults, and the
    /// [`Error::KernelFault`] says the context is lost.) Where [`EntryInfo::param_bytes`] is
    /// `None` the argument count is not checked, and must match the entry's.
    pub unsafe fn launch(&mut self, launch: &Launch) -> Result<()> {
        let entry = &self.info.name;
        if let Some(expected_bytes) = &self.info.param_bytes
            && *expected_bytes != self.sizes
        {
            return Err(Error::KernelArgMismatch {
                entry: entry.clone(),
                expected_bytes: expected_bytes.clone(),
                actual_bytes: self.sizes.clone(),
            });
        }
        self.gpu.check_entry_launch(self.info, launch)?;
        // SAFETY: one argument per parameter of the entry, each of the parameter's size
        // (checked above against the PTX), borrowed for the launch; the launch shape is
        // within the device's and the function's limits; what the buffers hold is the
        // caller's contract.
        unsafe { self.args.launch(launch_config(launch)) }
            .map(drop)
            .map_err(|e| fault(entry, e))
    }
}

impl Gpu {
    /// The entry point `name` and its attributes, looked up once and cached.
    pub fn entry_info(&self, name: &str) -> Result<Arc<EntryInfo>> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(info) = entries.get(name) {
            return Ok(Arc::clone(info));
        }
        let not_found = || Error::EntryNotFound {
            entry: name.to_owned(),
        };
        // cudarc would panic turning a name with a NUL into a C string.
        if name.contains('\0') {
            return Err(not_found());
        }
        let loaded = self.modules.module_of(name)?;
        let function = match loaded.module.load_function(name) {
            Ok(f) => f,
            Err(DriverError(Code::CUDA_ERROR_NOT_FOUND)) => return Err(not_found()),
            Err(source) => {
                return Err(Error::Driver {
                    call: "cuModuleGetFunction",
                    source,
                });
            }
        };
        let attr = |a| -> Result<u32> {
            let v = function.get_attribute(a).call("cuFuncGetAttribute")?;
            Ok(v.max(0) as u32)
        };
        // The opt-in to all the shared memory the device allows a block: without it a
        // launch may not ask for more than 48 KiB. The attribute is a ceiling on what a
        // launch may ask for; each launch still gets the shared memory it asks for.
        let static_shared_bytes = attr(FuncAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
        let opt_in = self.limits.dynamic_shared_opt_in(static_shared_bytes);
        if opt_in > attr(FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)? {
            function
                .set_attribute(
                    FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    opt_in as i32,
                )
                .call("cuFuncSetAttribute")?;
        }
        let info = Arc::new(EntryInfo {
            name: name.to_owned(),
            max_threads_per_block: attr(FuncAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            static_shared_bytes,
            max_dynamic_shared_bytes: attr(
                FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            )?,
            registers_per_thread: attr(FuncAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            local_bytes_per_thread: attr(FuncAttr::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            param_bytes: nvptx_builder::ptx::param_sizes(&loaded.ptx, name),
            resident_clusters: std::sync::OnceLock::new(),
            function,
        });
        entries.insert(name.to_owned(), Arc::clone(&info));
        Ok(info)
    }

    /// The blocks of entry `info` launched as `launch` that the device runs at once, for a
    /// persistent grid in clusters ([`Launch::cluster`], which the entry's PTX declares):
    /// its whole clusters that fit at once, as the driver counts them (a multiprocessor
    /// group holds only whole clusters, so it can be fewer than one block per
    /// multiprocessor); at least one cluster. Without clusters: one block a multiprocessor.
    pub fn resident_blocks(&self, info: &EntryInfo, launch: &Launch) -> Result<u32> {
        if launch.cluster <= 1 {
            return Ok(self.multiprocessors);
        }
        if let Some(&clusters) = info.resident_clusters.get() {
            return Ok(clusters.max(1) * launch.cluster);
        }
        let clusters = info
            .function
            .occupancy_max_active_clusters(launch_config(launch), &self.stream)
            .call("cuOccupancyMaxActiveClusters")?;
        Ok(info.resident_clusters.get_or_init(|| clusters).max(&1) * launch.cluster)
    }

    /// A [`Launcher`] for the entry point `info` (from [`Gpu::entry_info`]).
    pub fn launcher<'a>(&'a self, info: &'a EntryInfo) -> Launcher<'a> {
        Launcher {
            gpu: self,
            info,
            args: self.stream.launch_builder(&info.function),
            // Room for a dozen parameters: one allocation per launch, not one per doubling.
            sizes: Vec::with_capacity(12),
        }
    }

    /// Checks `launch` of `entry` against the device's limits and the function's own:
    /// [`Error::Launch`] names the limit.
    pub fn check_launch(&self, entry: &str, launch: &Launch) -> Result<()> {
        self.check_entry_launch(&*self.entry_info(entry)?, launch)
    }

    fn check_entry_launch(&self, info: &EntryInfo, launch: &Launch) -> Result<()> {
        let function = FunctionLimits {
            static_shared_bytes: info.static_shared_bytes,
            max_threads_per_block: info.max_threads_per_block,
            max_dynamic_shared_bytes: info.max_dynamic_shared_bytes,
        };
        Ok(self.limits.check_function(launch, &function)?)
    }
}
