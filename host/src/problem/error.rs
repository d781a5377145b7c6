//! The one error type of the host library: every failure is typed and carries its sizes.
//!
//! Nothing here leaves the CUDA context unusable except [`Error::KernelFault`] with
//! `context_usable: false` (and the driver errors that follow it). Input errors (shapes,
//! lengths, tile widths, launch limits, memory) are found before anything is queued.

use cudarc::driver::DriverError;
use kernels_gpu::nvptx_device::launch::LimitError;
use kernels_gpu::nvptx_device::sim::SimError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no CUDA driver found ({0}); run on a machine with an NVIDIA GPU and driver, or use --simulate"
    )]
    NoDriver(String),
    #[error("the CUDA driver reports no GPU")]
    NoDevice,
    #[error("there is no GPU {ordinal}: the driver reports {count}")]
    NoSuchDevice { ordinal: usize, count: usize },
    #[error("CUDA driver call `{call}` failed: {source}")]
    Driver {
        call: &'static str,
        #[source]
        source: DriverError,
    },
    #[error("cuBLAS call `{call}` failed: {source}")]
    Cublas {
        call: &'static str,
        #[source]
        source: cudarc::cublas::result::CublasError,
    },
    /// The driver rejected a module: malformed PTX, a `.target` the GPU cannot run, or a
    /// PTX ISA newer than the driver. `module` names it (an entry point, for the embedded
    /// modules, which load an entry at a time); `log` is what the driver's compiler said,
    /// empty if it said nothing. The context is still usable.
    #[error("loading {module} failed: {source}{}", log_lines(log))]
    PtxLoad {
        module: String,
        #[source]
        source: DriverError,
        log: String,
    },
    /// PTX text with a NUL byte: the driver reads the module as a C string and would
    /// silently load only the part before it.
    #[error(
        "the PTX text has a NUL byte at offset {offset} of {len}; the driver would ignore everything after it"
    )]
    PtxNul { offset: usize, len: usize },
    /// The loaded module has no `.entry` of that name.
    #[error("the PTX module has no entry point `{entry}`")]
    EntryNotFound { entry: String },
    /// An entry point of the `sm_90a` module (Hopper's `wgmma`) asked of a GPU of another
    /// compute capability, which cannot run that module.
    #[error(
        "entry `{entry}` is built for sm_90a (Hopper), which this GPU (sm_{}{}) cannot run",
        device.0,
        device.1
    )]
    NeedsHopper { entry: String, device: (i32, i32) },
    /// A 16-bit configuration given matrices of the other 16-bit type.
    #[error("configuration `{kernel}` multiplies another element type than the {given} given")]
    ElementMismatch {
        kernel: &'static str,
        given: &'static str,
    },
    /// Rows the tensor-memory accelerator cannot read as they are: `k` (the rows of `a`)
    /// and `n` (of `b`) must be multiples of 8 two-byte elements.
    #[error(
        "configuration `{kernel}` reads its operands with the tensor-memory accelerator, whose rows must be multiples of 16 bytes: k = {k} and n = {n} must be multiples of 8"
    )]
    TmaAlignment {
        kernel: &'static str,
        k: u32,
        n: u32,
    },
    /// Arguments of a raw launch that do not match the entry's `.param` list; launching
    /// would make the driver read past the argument array.
    #[error(
        "entry `{entry}` takes {} parameters of {expected_bytes:?} bytes, but {} arguments of {actual_bytes:?} bytes were given",
        expected_bytes.len(),
        actual_bytes.len()
    )]
    KernelArgMismatch {
        entry: String,
        expected_bytes: Vec<usize>,
        actual_bytes: Vec<usize>,
    },
    /// A launch or a kernel failed. With `context_usable: false` the fault is *sticky*
    /// (an illegal or misaligned address, an illegal instruction, a trap or assert, a
    /// watchdog timeout): CUDA has poisoned the context, every later call on it fails,
    /// and since the primary context is shared, so does every other [`crate::gpu::Gpu`]
    /// of this process; only a new process can use the GPU again. With
    /// `context_usable: true` (e.g. too many resources requested) only this launch failed.
    #[error("kernel `{kernel}` failed: {source}; {}", if *.context_usable { "the context is still usable" } else { "the CUDA context is now unusable for the rest of this process (CUDA requires a restart)" })]
    KernelFault {
        kernel: String,
        #[source]
        source: DriverError,
        context_usable: bool,
    },
    #[error("inner dimensions differ: a is {m}×{k}, b is {k2}×{n}")]
    InnerDimMismatch {
        m: usize,
        k: usize,
        k2: usize,
        n: usize,
    },
    #[error("{operand} has {actual} elements, but a {rows}×{cols} matrix needs {expected}")]
    InputLength {
        operand: &'static str,
        rows: usize,
        cols: usize,
        expected: usize,
        actual: usize,
    },
    #[error(
        "{operand} is {rows}×{cols} = {elements} elements, more than the kernels' 32-bit indices allow ({})",
        u32::MAX
    )]
    IndexOverflow {
        operand: &'static str,
        rows: usize,
        cols: usize,
        elements: u128,
    },
    /// A grid, block or shared-memory size beyond what the device (or, on a GPU, the
    /// compiled kernel: its register use caps its threads per block) allows, or an empty
    /// launch. The simulator reports the same launch with the same error.
    #[error("{0}")]
    Launch(#[from] LimitError),
    /// A stream-k run on rows of a larger product that do not start at a multiple of its
    /// configuration's block rows, or run past the product's.
    #[error(
        "{run} on rows {row0}..{} of a product of {m_all} rows: the rows must start at a multiple of {block_rows} and end by row {m_all}",
        *row0 as u64 + *rows as u64
    )]
    StreamPart {
        run: String,
        row0: u32,
        rows: u32,
        m_all: u32,
        block_rows: u32,
    },
    #[error("{requested} bytes of device memory needed, only {free} free of {total}")]
    OutOfDeviceMemory {
        requested: u64,
        free: u64,
        total: u64,
    },
    /// A GEMM leading dimension shorter than the stored row (row-major) or column
    /// (column-major) it separates, or zero.
    #[error(
        "{name} = {ld} is less than {min}: {operand} is stored as a {rows}×{cols} matrix ({order:?}), so {name} must be at least {min}"
    )]
    LeadingDimension {
        name: &'static str,
        operand: &'static str,
        ld: usize,
        min: usize,
        rows: usize,
        cols: usize,
        order: Order,
    },
    /// A GEMM buffer shorter than its matrices: `(batch − 1)·stride + (lines − 1)·ld + line`
    /// elements.
    #[error(
        "{operand} holds {actual} elements, but {batch} stored {rows}×{cols} matrices with leading dimension {ld}, {stride} apart, need {needed}"
    )]
    GemmBufferTooShort {
        operand: &'static str,
        needed: u128,
        actual: usize,
        rows: usize,
        cols: usize,
        ld: usize,
        batch: usize,
        stride: usize,
    },
    /// A batch stride of `c` that makes two products of the batch write the same element:
    /// products 0 and `second` both write the element `offset` elements past product 0's
    /// first. (Outputs may interleave, `ldc = 2n` with `stride_c = n` say, as long as no
    /// element is written twice: [`Gemm::check`](crate::problem::gemm::Gemm::check).)
    #[error(
        "stride_c = {stride} with ldc = {ld} makes products 0 and {second} of the {batch} write the same element ({offset} elements past product 0's first): the outputs must be disjoint"
    )]
    BatchOverlap {
        stride: usize,
        ld: usize,
        batch: usize,
        second: usize,
        offset: usize,
    },
    /// A GEMM call a named kernel cannot run: the ladder's and the lecture's kernels take
    /// plain row-major `A·B` only.
    #[error(
        "kernel `{kernel}` runs only plain row-major products (op N N, packed, α = 1, β = 0, one matrix); this call has {call}: use the rung-12 kernels (GemmKernel::Auto or Blas)"
    )]
    GemmUnsupported { kernel: String, call: String },
    /// Elements that are not whole, aligned `f32`s.
    #[error(
        "{type_name} ({size} bytes, aligned to {align}) cannot be read as f32s: its size must be a multiple of 4 and the slice aligned to 4"
    )]
    ElementType {
        type_name: &'static str,
        size: usize,
        align: usize,
    },
    #[error("tile width {requested} is not supported; allowed: {allowed:?}")]
    UnsupportedTileWidth {
        requested: u32,
        allowed: &'static [u32],
    },
    /// A `--time-budget` that is not a number of seconds at least 0, nor `inf`.
    #[error(
        "`{value}` is not a time budget: give seconds, a number at least 0 (e.g. 0.5), or inf for no bound"
    )]
    InvalidTimeBudget { value: String },
    #[error("unknown kernel `{requested}`; known: {known}")]
    UnknownKernel { requested: String, known: String },
    /// A precision the SGEMM table has no autotuned configuration of (every precision has
    /// some in this build; a table edited to drop them gets this error, not a panic).
    #[error(
        "precision {} has no autotuned SGEMM configuration in this build",
        precision.name()
    )]
    PrecisionNotImplemented {
        precision: kernels_gpu::sgemm::Precision,
    },
    /// A rung-16 kernel ([`crate::plan::gemv`]) asked for a product it does not cover: the
    /// dimension its class is built around (`m`, `n` or `k`) is above its bound.
    #[error("`{kernel}` takes {dim} ≤ {bound}, and this product ({shape}) has {dim} = {actual}")]
    GemvBound {
        kernel: &'static str,
        dim: &'static str,
        bound: u32,
        actual: u32,
        shape: String,
    },
    /// A row split ([`crate::plan::row_split::RowSplit`]) whose top part is not between one row
    /// and one row fewer than the product's.
    #[error("a row split needs 1 <= rows < m: rows {rows}, m {m}")]
    RowSplit { rows: usize, m: usize },
    #[error(
        "a sliding window must hold at least one element (window {window}, input length {len})"
    )]
    InvalidWindow { window: usize, len: usize },
    /// A max over a dimension of length 0: there is no value to return.
    #[error("{op} over an empty dimension of a {rows}×{cols} tensor has no value")]
    EmptyReduction {
        op: &'static str,
        rows: usize,
        cols: usize,
    },
    /// What the simulator found wrong with a kernel (races, barriers, bounds, panics).
    /// Launch limits are [`Error::Launch`] on both backends.
    #[error("simulated kernel failed: {0}")]
    Simulator(SimError),
    /// More GPUs asked for than the driver reports, or a device list that is empty or names
    /// one GPU twice.
    #[error("{requested} GPUs asked for ({why}), but the driver reports {count}")]
    DeviceCount {
        requested: usize,
        count: usize,
        why: String,
    },
    /// No NCCL library could be loaded: every place tried, each with why it failed. With one
    /// GPU nothing needs NCCL.
    #[error(
        "NCCL is needed for {devices} GPUs, but no libnccl could be loaded; set KERNELS_GPU_NCCL=/path/to/libnccl.so.2 (PyTorch installs one as site-packages/nvidia/nccl/lib/libnccl.so.2). Tried:{}",
        tried.iter().map(|t| format!("\n  {t}")).collect::<String>()
    )]
    NcclNotFound { devices: usize, tried: Vec<String> },
    /// An NCCL call that failed: its name, NCCL's result code and its message.
    #[error("NCCL call `{call}` failed with code {code}: {message}")]
    Nccl {
        call: &'static str,
        code: u32,
        message: String,
    },
    /// A buffer of a multi-GPU call on another device than the call needs it on.
    #[error("{operand} is on GPU {actual}, but this call needs it on GPU {expected}")]
    WrongDevice {
        operand: &'static str,
        expected: usize,
        actual: usize,
    },
    /// Chunks of a sharded vector that are not a positive multiple of 4 elements.
    #[error("a sharded vector's chunks must be a positive multiple of 4 elements (chunk {chunk})")]
    InvalidChunk { chunk: usize },
    /// A sharded vector without the room after a device's part that the halo of a sliding
    /// average needs there.
    #[error(
        "device {device} needs {needed} elements of room after its part for the halo of the window, but has {room}"
    )]
    HaloRoom {
        device: usize,
        needed: usize,
        room: usize,
    },
    /// Shards that do not cover `0..len` in order, each starting at a multiple of `align`.
    #[error(
        "shards {shards:?} do not cover 0..{len} in order, each starting at a multiple of {align}"
    )]
    ShardLayout {
        len: usize,
        align: usize,
        shards: Vec<std::ops::Range<usize>>,
    },
}

impl Error {
    /// [`Error::InputLength`] unless `operand`, a `rows × cols` matrix, holds `actual`
    /// elements: exactly `rows · cols`. A `rows · cols` beyond `usize` is
    /// [`Error::IndexOverflow`] (no slice can hold it).
    pub fn check_len(operand: &'static str, rows: usize, cols: usize, actual: usize) -> Result<()> {
        let expected = rows.checked_mul(cols).ok_or(Error::IndexOverflow {
            operand,
            rows,
            cols,
            elements: rows as u128 * cols as u128,
        })?;
        if actual != expected {
            return Err(Error::InputLength {
                operand,
                rows,
                cols,
                expected,
                actual,
            });
        }
        Ok(())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How the matrices of a GEMM call ([`crate::problem::gemm::Gemm`]) are laid out in memory.
/// Defined here, below the call, so that [`Error::LeadingDimension`] names it while this
/// module imports nothing of the crate; the call's module re-exports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Order {
    /// Row-major (C's, NumPy's and this crate's other APIs'): `ld` is the distance between
    /// rows.
    #[default]
    RowMajor,
    /// Column-major (BLAS's and cuBLAS's): `ld` is the distance between columns. Run as the
    /// row-major product `Cᵀ = op(B)ᵀ·op(A)ᵀ`, with no data moved.
    ColMajor,
}

impl Error {
    /// Why there is no GPU to use, where this error says so ([`Error::NoDriver`],
    /// [`Error::NoDevice`]): for programs that skip their GPU work visibly there.
    pub fn no_gpu(&self) -> Option<String> {
        match self {
            Self::NoDriver(why) => Some(format!("no GPU: no CUDA driver ({why})")),
            Self::NoDevice => Some("no GPU: the CUDA driver reports none".to_owned()),
            _ => None,
        }
    }

    /// Whether the CUDA context can still be used after this error. Only a sticky fault
    /// poisons it: [`Error::KernelFault`] with `context_usable: false`, or the same driver
    /// codes reported by a later call ([`Error::Driver`]). Every other error — bad input,
    /// launch limits, out of memory, a rejected module — is found before or without
    /// touching the context's state.
    pub fn leaves_context_usable(&self) -> bool {
        match self {
            Self::KernelFault { context_usable, .. } => *context_usable,
            Self::Driver { source, .. } | Self::PtxLoad { source, .. } => !is_sticky(*source),
            _ => true,
        }
    }
}

/// A compiler log on lines of its own after an error's first line; nothing for none.
fn log_lines(log: &str) -> String {
    if log.is_empty() {
        String::new()
    } else {
        format!("; the PTX compiler said:\n{log}")
    }
}

/// Driver codes that leave the context unusable for the rest of the process ("the process
/// must be terminated and relaunched", as CUDA's documentation of each says).
pub(crate) fn is_sticky(e: DriverError) -> bool {
    use cudarc::driver::sys::cudaError_enum as Code;
    matches!(
        e.0,
        Code::CUDA_ERROR_ILLEGAL_ADDRESS
            | Code::CUDA_ERROR_LAUNCH_FAILED
            | Code::CUDA_ERROR_LAUNCH_TIMEOUT
            | Code::CUDA_ERROR_MISALIGNED_ADDRESS
            | Code::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | Code::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | Code::CUDA_ERROR_INVALID_PC
            | Code::CUDA_ERROR_HARDWARE_STACK_ERROR
            | Code::CUDA_ERROR_ASSERT
    )
}

/// Tags a driver error with the call that produced it.
pub(crate) trait DriverContext<T> {
    fn call(self, call: &'static str) -> Result<T>;
}

impl<T> DriverContext<T> for std::result::Result<T, DriverError> {
    fn call(self, call: &'static str) -> Result<T> {
        self.map_err(|source| Error::Driver { call, source })
    }
}

impl From<SimError> for Error {
    fn from(e: SimError) -> Self {
        match e {
            SimError::Limit(limit) => Self::Launch(limit),
            other => Self::Simulator(other),
        }
    }
}
