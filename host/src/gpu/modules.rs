//! The kernels' PTX, loaded into a context one entry point at a time, on first use.
//!
//! The driver compiles PTX to machine code for the GPU: the whole module, for every entry
//! it holds. The embedded modules ([`crate::plan::ptx`]) hold dozens of entries, so a
//! [`Gpu`](super::Gpu) loads none of them when it is made; the first launch of an entry loads
//! a module of that entry alone ([`nvptx_builder::ptx::split`]), compiled once and kept for
//! the `Gpu`'s life. Two threads that ask for the same entry wait for one compile; different
//! entries compile at once, and [`Modules::load`] compiles a list of them on a thread each.
//!
//! They are compiled by the driver's linker (`cuLinkCreate`, `cuLinkAddData`,
//! `cuLinkComplete`), which runs on many threads at once, and the machine code loaded as a
//! cubin: loading PTX (`cuModuleLoadData`) compiles one module at a time per process
//! whatever the threads (measured on an H100: 45 SGEMM entries took 15.1 s on one thread,
//! 16.6 s on eight; through the linker 15.8 s and 2.2 s). The linker's output is not in the
//! driver's cache, so the cubins are kept in one of our own ([`CubinCache`]), keyed by each
//! module's text: an entry is compiled again only when its own code changes.
//!
//! The linker compiles PTX as relocatable code, which ignores `setmaxnreg` and serializes
//! the `wgmma` instructions of a function that calls another
//! ([`relocatable_cost`](nvptx_builder::ptx::relocatable_cost)). An entry whose module
//! would pay that is loaded as PTX instead (`cuModuleLoadData`), compiled whole, one at a
//! time, and kept in the driver's cache.
//!
//! A module handed to [`Gpu::with_ptx`](super::Gpu::with_ptx) is the caller's: it is loaded
//! whole when the `Gpu` is made, as it always was, through the driver (and its cache).

use super::cache::CubinCache;
use crate::plan::ptx::{HOPPER_PTX, KERNELS_PTX};
use crate::problem::error::{DriverContext, Error, Result};
use crate::progress::Progress;
use cudarc::driver::sys::{self, CUjit_option};
use cudarc::driver::{CudaContext, CudaModule};
use nvptx_builder::ptx::split::ModuleIndex;
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::Duration;

/// One of the embedded modules, indexed on first use.
struct Embedded {
    text: &'static str,
    index: OnceLock<ModuleIndex<'static>>,
    /// Built for `sm_90a`: only a GPU of compute capability 9.0 runs it.
    hopper: bool,
}

impl Embedded {
    fn index(&self) -> &ModuleIndex<'static> {
        self.index.get_or_init(|| ModuleIndex::new(self.text))
    }
}

static MAIN: Embedded = Embedded {
    text: KERNELS_PTX,
    index: OnceLock::new(),
    hopper: false,
};
static HOPPER: Embedded = Embedded {
    text: HOPPER_PTX,
    index: OnceLock::new(),
    hopper: true,
};

/// The embedded module that defines `entry`.
fn embedded(entry: &str) -> Option<&'static Embedded> {
    [&MAIN, &HOPPER]
        .into_iter()
        .find(|m| m.index().defines(entry))
}

/// The module of one embedded entry: its text for the driver, compiled and loaded
/// once.
#[derive(Clone)]
pub(crate) struct Loaded {
    pub module: Arc<CudaModule>,
    /// The module's PTX: the entry's `.param` list is read from it.
    pub ptx: Arc<str>,
}

/// A slot per entry asked for: its lock is held while the entry compiles.
type Slot = Arc<Mutex<Option<Loaded>>>;

/// What a context has loaded: a module of the caller's, or the embedded entries loaded
/// so far.
pub(crate) struct Modules {
    ctx: Arc<CudaContext>,
    compute_capability: (i32, i32),
    custom: Option<Loaded>,
    slots: Mutex<HashMap<String, Slot>>,
    cubins: CubinCache,
}

impl Modules {
    /// The embedded modules, nothing loaded yet; compiled ones are kept in `cubins`.
    pub fn embedded(
        ctx: Arc<CudaContext>, compute_capability: (i32, i32), cubins: CubinCache,
    ) -> Self {
        Self {
            ctx,
            compute_capability,
            custom: None,
            slots: Mutex::new(HashMap::new()),
            cubins,
        }
    }

    /// The caller's module `ptx`, loaded whole now ([`Error::PtxLoad`] with the driver's
    /// log if it is rejected).
    pub fn custom(
        ctx: Arc<CudaContext>, compute_capability: (i32, i32), ptx: &str,
    ) -> Result<Self> {
        let module = load(&ctx, ptx, "the PTX module")?;
        Ok(Self {
            custom: Some(Loaded {
                module,
                ptx: Arc::from(ptx),
            }),
            ..Self::embedded(ctx, compute_capability, CubinCache::in_dir(None))
        })
    }

    /// The whole text entries are looked up in: the caller's module, or the main
    /// embedded one.
    pub fn text(&self) -> &str {
        self.custom.as_ref().map_or(KERNELS_PTX, |c| &c.ptx)
    }

    /// The module holding `entry`, compiled and loaded now if it was not already.
    /// [`Error::EntryNotFound`] if no module defines it, [`Error::NeedsHopper`] for an
    /// `sm_90a` entry on another GPU, [`Error::PtxLoad`] if the driver rejects it.
    pub fn module_of(&self, entry: &str) -> Result<Loaded> {
        if let Some(custom) = &self.custom {
            return Ok(custom.clone());
        }
        let source = self.source(entry)?;
        let slot = self.slot(entry);
        let mut loaded = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(done) = &*loaded {
            return Ok(done.clone());
        }
        let ptx: Arc<str> = source
            .index()
            .module(entry)
            .ok_or_else(|| not_found(entry))?
            .into();
        // Relocatable code would cost such a module its design (`setmaxnreg`, pipelined
        // `wgmma`): the driver compiles it whole, and keeps it in its own cache.
        if !nvptx_builder::ptx::relocatable_cost(&ptx).is_free() {
            let module = load(&self.ctx, &ptx, entry)?;
            let done = Loaded { module, ptx };
            *loaded = Some(done.clone());
            return Ok(done);
        }
        // A cached cubin the driver refuses (another driver's, say) is compiled again.
        let cached = self
            .cubins
            .get(&ptx)
            .and_then(|cubin| load_cubin(&self.ctx, cubin).ok());
        let module = match cached {
            Some(module) => module,
            None => {
                let cubin = link_cubin(&self.ctx, &ptx, entry)?;
                self.cubins.put(&ptx, &cubin);
                load_cubin(&self.ctx, cubin).map_err(|source| Error::PtxLoad {
                    module: entry.to_owned(),
                    source,
                    log: String::new(),
                })?
            }
        };
        let done = Loaded { module, ptx };
        *loaded = Some(done.clone());
        Ok(done)
    }

    /// Whether `entry`'s module is loaded already (always, for a caller's module).
    pub fn is_loaded(&self, entry: &str) -> bool {
        self.custom.is_some()
            || self
                .slots
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(entry)
                .is_some_and(|s| s.lock().unwrap_or_else(|e| e.into_inner()).is_some())
    }

    /// Compiles and loads the modules of `entries` that are not loaded yet, each on a thread
    /// of its own (as many at once as the host has cores), saying so on stderr when it takes
    /// a while ([`Progress`]). Every entry that can be compiled is; the first error is
    /// returned at the end, and what compiled stays loaded.
    pub fn load(&self, entries: &[&str]) -> Result<()> {
        let mut todo: Vec<&str> = entries
            .iter()
            .copied()
            .filter(|e| !self.is_loaded(e))
            .collect();
        todo.sort_unstable();
        todo.dedup();
        if todo.is_empty() {
            return Ok(());
        }
        // What is refused without compiling (an unknown entry, sm_90a code on another GPU)
        // is not compiled; the rest is.
        let mut first_error = None;
        todo.retain(|entry| match self.source(entry) {
            Ok(_) => true,
            Err(e) => {
                first_error.get_or_insert(e);
                false
            }
        });
        if todo.is_empty() {
            return first_error.map_or(Ok(()), Err);
        }
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(todo.len());
        let arch = format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        );
        let plural = if todo.len() == 1 { "" } else { "s" };
        let mut progress = Progress::new(
            format!(
                "compiling {} kernel{plural} for {arch} (kept for next time)",
                todo.len()
            ),
            todo.len(),
        );
        let next = AtomicUsize::new(0);
        let (tx, rx) = mpsc::channel::<Result<()>>();
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let (tx, next, todo) = (tx.clone(), &next, &todo);
                scope.spawn(move || {
                    while let Some(entry) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let result = self.module_of(entry).map(drop);
                        if tx.send(result).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(tx);
            loop {
                match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(result) => {
                        if let Err(e) = result {
                            first_error.get_or_insert(e);
                        }
                        progress.advance(1);
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => progress.tick(),
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
        });
        progress.finish();
        first_error.map_or(Ok(()), Err)
    }

    /// The embedded module of `entry`, if this GPU can run it.
    fn source(&self, entry: &str) -> Result<&'static Embedded> {
        let source = embedded(entry).ok_or_else(|| not_found(entry))?;
        if source.hopper && self.compute_capability != (9, 0) {
            return Err(Error::NeedsHopper {
                entry: entry.to_owned(),
                device: self.compute_capability,
            });
        }
        Ok(source)
    }

    fn slot(&self, entry: &str) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(slots.entry(entry.to_owned()).or_default())
    }
}

fn not_found(entry: &str) -> Error {
    Error::EntryNotFound {
        entry: entry.to_owned(),
    }
}

/// Loads `ptx` into `ctx` (the driver compiles it for the context's GPU, or takes it from
/// its cache). A module the driver rejects is [`Error::PtxLoad`] with the compiler's log.
pub(crate) fn load(ctx: &Arc<CudaContext>, ptx: &str, what: &str) -> Result<Arc<CudaModule>> {
    if let Some(offset) = ptx.find('\0') {
        return Err(Error::PtxNul {
            offset,
            len: ptx.len(),
        });
    }
    ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx))
        .map_err(|source| Error::PtxLoad {
            module: what.to_owned(),
            source,
            log: jit_error_log(ctx, ptx),
        })
}

/// How many bytes of the compiler's error log [`link_cubin`] and [`jit_error_log`] keep.
const LOG_BYTES: usize = 16 * 1024;

/// Compiles `ptx` for the GPU of `ctx` with the driver's linker (`cuLinkCreate`,
/// `cuLinkAddData`, `cuLinkComplete`), on this thread, without loading it: the cubin, or
/// [`Error::PtxLoad`] naming `what` with the compiler's log ([`Error::PtxNul`] for a NUL in
/// the text).
pub fn link_cubin(ctx: &Arc<CudaContext>, ptx: &str, what: &str) -> Result<Vec<u8>> {
    use cudarc::driver::sys::CUjitInputType;
    ctx.bind_to_thread().call("cuCtxSetCurrent")?;
    let Ok(text) = CString::new(ptx) else {
        return Err(Error::PtxNul {
            offset: ptx.find('\0').unwrap_or(0),
            len: ptx.len(),
        });
    };
    let mut log = ErrorLog::new();
    let mut state = std::ptr::null_mut();
    let (n, options, values) = log.options();
    // SAFETY: two options with their values; the log buffer outlives the state, which is
    // destroyed below.
    unsafe { sys::cuLinkCreate_v2(n, options, values, &mut state) }
        .result()
        .call("cuLinkCreate")?;
    let bytes = text.as_bytes_with_nul();
    let (mut cubin, mut size) = (std::ptr::null_mut(), 0usize);
    // SAFETY: the PTX with its NUL and its length, read during the call; the cubin belongs
    // to the state and is copied out before the state is destroyed.
    let linked = unsafe {
        sys::cuLinkAddData_v2(
            state,
            CUjitInputType::CU_JIT_INPUT_PTX,
            bytes.as_ptr() as *mut c_void,
            bytes.len(),
            c"kernel.ptx".as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
        .result()
        .and_then(|()| sys::cuLinkComplete(state, &mut cubin, &mut size).result())
        .map(|()| std::slice::from_raw_parts(cubin.cast::<u8>(), size).to_vec())
    };
    // SAFETY: created above, destroyed once.
    let _ = unsafe { sys::cuLinkDestroy(state) };
    linked.map_err(|source| Error::PtxLoad {
        module: what.to_owned(),
        source,
        log: log.text(),
    })
}

/// Loads machine code compiled by [`link_cubin`] into `ctx` (no compiling).
fn load_cubin(
    ctx: &Arc<CudaContext>, cubin: Vec<u8>,
) -> std::result::Result<Arc<CudaModule>, cudarc::driver::DriverError> {
    ctx.load_module(cudarc::nvrtc::Ptx::from_binary(cubin))
}

/// The JIT compiler's error log for `ptx` (which the driver just rejected): the module is
/// compiled once more with a log buffer, since cudarc's loader passes none. Empty if the
/// driver says nothing, or cannot be asked.
fn jit_error_log(ctx: &Arc<CudaContext>, ptx: &str) -> String {
    let (Ok(()), Ok(text)) = (ctx.bind_to_thread(), CString::new(ptx)) else {
        return String::new();
    };
    let mut log = ErrorLog::new();
    let mut module = std::ptr::null_mut();
    let (n, options, values) = log.options();
    // SAFETY: `text` is a NUL-terminated module; `options` and `values` are two entries
    // each, the log buffer as long as its size option says and alive for the call.
    let rc =
        unsafe { sys::cuModuleLoadDataEx(&mut module, text.as_ptr().cast(), n, options, values) };
    if rc.result().is_ok() && !module.is_null() {
        // It compiled this time: nothing to report, and nothing to keep.
        // SAFETY: the module was just loaded and nothing else holds it.
        let _ = unsafe { sys::cuModuleUnload(module) }.result();
        return String::new();
    }
    log.text()
}

/// A buffer for the JIT compiler's error log, and the two options that hand it to the
/// driver.
struct ErrorLog {
    buf: Vec<u8>,
    options: [CUjit_option; 2],
    values: [*mut c_void; 2],
}

impl ErrorLog {
    fn new() -> Self {
        let mut buf = vec![0u8; LOG_BYTES];
        // The driver reads a size option's value from the pointer's bits. The buffer's heap
        // storage stays where it is when `buf` moves.
        let values = [buf.as_mut_ptr().cast::<c_void>(), LOG_BYTES as *mut c_void];
        let options = [
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        Self {
            buf,
            options,
            values,
        }
    }

    /// The option count and arrays, as the driver's calls take them.
    fn options(&mut self) -> (u32, *mut CUjit_option, *mut *mut c_void) {
        let n = self.options.len() as u32;
        (n, self.options.as_mut_ptr(), self.values.as_mut_ptr())
    }

    /// What the driver wrote, up to its NUL, trimmed.
    fn text(&self) -> String {
        let end = self
            .buf
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.buf.len());
        String::from_utf8_lossy(&self.buf[..end]).trim().to_owned()
    }
}
