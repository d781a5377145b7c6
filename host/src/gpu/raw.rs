//! Checked raw launches: any entry point of the loaded module, by name, with by-value
//! arguments, checked against the device's limits, the function's attributes and the
//! entry's `.param` list before anything reaches the driver.
//!
//! The typed launchers ([`Gpu::matmul_device`]) go through here too, so every launch gets
//! the same checks and the same fault classification.

use super::{Gpu, fault};
use crate::error::{DriverContext, Error, Result};
use crate::kernels::{Launch, exceeds};
use cudarc::driver::sys::{CUdeviceptr, CUfunction_attribute as FuncAttr, cudaError_enum as Code};
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, DriverError, LaunchConfig};
use std::ffi::c_void;
use std::sync::Arc;

/// One kernel parameter, passed by value as the entry's `.param` declares it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KernelArg {
    U32(u32),
    I32(i32),
    U64(u64),
    F32(f32),
    /// A device address (`.param .u64 .ptr`).
    Pointer(CUdeviceptr),
}

impl KernelArg {
    /// The device address of `buf`. Nothing ties the buffer's lifetime to the launch: it
    /// must stay alive until the kernel has finished (stream order does that for buffers
    /// dropped after the launch on the same [`Gpu`], whose frees are stream-ordered).
    pub fn buffer<T>(buf: &CudaSlice<T>) -> Self {
        // Event tracking is off on a `Gpu`'s context, so the returned guard records nothing.
        let (ptr, _record) = buf.device_ptr(buf.stream());
        Self::Pointer(ptr)
    }

    /// Bytes the kernel reads for this parameter.
    pub fn size(&self) -> usize {
        match self {
            Self::U32(_) | Self::I32(_) | Self::F32(_) => 4,
            Self::U64(_) | Self::Pointer(_) => 8,
        }
    }

    /// The pointer `cuLaunchKernel` reads the value through.
    fn as_param(&self) -> *mut c_void {
        match self {
            Self::U32(v) => v as *const u32 as *mut c_void,
            Self::I32(v) => v as *const i32 as *mut c_void,
            Self::U64(v) | Self::Pointer(v) => v as *const u64 as *mut c_void,
            Self::F32(v) => v as *const f32 as *mut c_void,
        }
    }
}

/// An entry point of the loaded module and what the driver says about it.
#[derive(Debug)]
pub struct EntryInfo {
    pub name: String,
    /// Threads per block this function can launch with: the device's limit, or fewer
    /// where its register use does not fit.
    pub max_threads_per_block: u32,
    /// Its static `.shared` declarations.
    pub static_shared_bytes: u32,
    /// The dynamic shared memory it may be launched with (the device's per-block limit
    /// less the static part, unless the function opted in to more).
    pub max_dynamic_shared_bytes: u32,
    pub registers_per_thread: u32,
    /// Sizes of its parameters, from the PTX text; `None` where a declaration is not one
    /// [`param_sizes`] reads.
    pub param_bytes: Option<Vec<usize>>,
    function: CudaFunction,
}

impl EntryInfo {
    pub fn function(&self) -> &CudaFunction {
        &self.function
    }
}

impl From<Launch> for LaunchConfig {
    fn from(l: Launch) -> Self {
        Self {
            grid_dim: (l.grid.x, l.grid.y, l.grid.z),
            block_dim: (l.block.x, l.block.y, l.block.z),
            shared_mem_bytes: l.dynamic_shared_bytes,
        }
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
        let function = match self.module.load_function(name) {
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
        let info = Arc::new(EntryInfo {
            name: name.to_owned(),
            max_threads_per_block: attr(FuncAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            static_shared_bytes: attr(FuncAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            max_dynamic_shared_bytes: attr(
                FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            )?,
            registers_per_thread: attr(FuncAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            param_bytes: param_sizes(&self.ptx, name),
            function,
        });
        entries.insert(name.to_owned(), Arc::clone(&info));
        Ok(info)
    }

    /// Checks `launch` of `entry` against the device's limits and the function's own:
    /// [`Error::EmptyLaunch`], [`Error::GridTooLarge`] or [`Error::LaunchExceedsDevice`].
    pub fn check_launch(&self, entry: &str, launch: &Launch) -> Result<()> {
        self.check_entry_launch(&*self.entry_info(entry)?, launch)
    }

    fn check_entry_launch(&self, info: &EntryInfo, launch: &Launch) -> Result<()> {
        self.limits.check(launch, info.static_shared_bytes)?;
        exceeds(
            "threads per block for this kernel's register use",
            launch.block.volume(),
            info.max_threads_per_block as u64,
        )?;
        exceeds(
            "bytes of dynamic shared memory for this kernel",
            launch.dynamic_shared_bytes as u64,
            info.max_dynamic_shared_bytes as u64,
        )
    }

    /// Queues `entry` with `launch` and `args` on the stream, after checking the launch
    /// ([`Gpu::check_launch`]) and the arguments against the entry's `.param` list
    /// ([`Error::KernelArgMismatch`]). Asynchronous: a fault inside the kernel comes back
    /// from [`Gpu::synchronize`] (or the next call) as [`Error::KernelFault`].
    ///
    /// # Safety
    /// The kernel may read and write whatever device memory its pointer arguments reach:
    /// they must point to buffers as large as it expects for the scalar arguments given,
    /// and no buffer it writes may be read elsewhere until it has finished. (A pointer to
    /// unmapped device memory does not corrupt the host: the kernel faults, and the
    /// [`Error::KernelFault`] says the context is lost.) Where [`EntryInfo::param_bytes`]
    /// is `None` the argument count is not checked, and must match the entry's.
    pub unsafe fn launch_raw(
        &self,
        entry: &str,
        launch: &Launch,
        args: &[KernelArg],
    ) -> Result<()> {
        let info = self.entry_info(entry)?;
        let actual_bytes: Vec<usize> = args.iter().map(KernelArg::size).collect();
        if let Some(expected_bytes) = &info.param_bytes
            && *expected_bytes != actual_bytes
        {
            return Err(Error::KernelArgMismatch {
                entry: entry.to_owned(),
                expected_bytes: expected_bytes.clone(),
                actual_bytes,
            });
        }
        self.check_entry_launch(&info, launch)?;
        let mut params: Vec<*mut c_void> = args.iter().map(KernelArg::as_param).collect();
        self.ctx.bind_to_thread().map_err(|e| fault(entry, e))?;
        let (g, b) = (launch.grid, launch.block);
        // SAFETY: `params` has one pointer per parameter of the entry, each to a value of
        // the parameter's size (checked above against the PTX), alive until the call
        // returns (the driver copies them); the launch shape is within the device's and
        // the function's limits; what the pointers reach is the caller's contract.
        unsafe {
            cudarc::driver::result::launch_kernel(
                info.function().cu_function(),
                (g.x, g.y, g.z),
                (b.x, b.y, b.z),
                launch.dynamic_shared_bytes,
                self.stream.cu_stream(),
                &mut params,
            )
        }
        .map_err(|e| fault(entry, e))
    }
}

/// The byte sizes of the parameters of `.entry entry` in `ptx`, in order; `None` if there
/// is no such entry or a declaration is not a scalar or byte array this reads.
pub fn param_sizes(ptx: &str, entry: &str) -> Option<Vec<usize>> {
    let start = ptx.find(&format!(".entry {entry}("))? + ".entry (".len() + entry.len();
    let list = &ptx[start..start + ptx[start..].find(')')?];
    list.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(param_size)
        .collect()
}

/// `.param [.align N] .TYPE [.ptr [.space] [.align N]] name[[LEN]]`.
fn param_size(decl: &str) -> Option<usize> {
    let mut tokens = decl.split_whitespace();
    if tokens.next()? != ".param" {
        return None;
    }
    let tokens: Vec<&str> = tokens.collect();
    let scalar = tokens.iter().find_map(|t| match t.strip_prefix('.')? {
        "u8" | "s8" | "b8" => Some(1),
        "u16" | "s16" | "b16" | "f16" => Some(2),
        "u32" | "s32" | "b32" | "f32" => Some(4),
        "u64" | "s64" | "b64" | "f64" => Some(8),
        _ => None,
    })?;
    let name = tokens.last()?;
    let count = match name.split_once('[') {
        Some((_, len)) => len.strip_suffix(']')?.parse().ok()?,
        None => 1,
    };
    Some(scalar * count)
}
