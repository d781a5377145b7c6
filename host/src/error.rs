//! The one error type of the host library: every failure is typed and carries its sizes.

use cudarc::driver::DriverError;
use kernels_gpu::sim::SimError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no CUDA driver found ({0}); run on a machine with an NVIDIA GPU and driver, or use --simulate"
    )]
    NoDriver(String),
    #[error("the CUDA driver reports no GPU")]
    NoDevice,
    #[error("CUDA driver call `{call}` failed: {source}")]
    Driver {
        call: &'static str,
        #[source]
        source: DriverError,
    },
    #[error("loading the PTX module failed: {0}")]
    PtxLoad(#[source] DriverError),
    #[error("kernel `{kernel}` faulted: {source}; {}", if *.context_usable { "the context is still usable" } else { "the CUDA context is now unusable: create a new Gpu" })]
    KernelFault {
        kernel: &'static str,
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
    #[error(
        "the launch needs {blocks} blocks in grid dimension {dim}, more than the device limit of {limit}"
    )]
    GridTooLarge { dim: char, blocks: u64, limit: u64 },
    #[error("{requested} bytes of device memory needed, only {free} free of {total}")]
    OutOfDeviceMemory {
        requested: u64,
        free: u64,
        total: u64,
    },
    #[error("tile width {requested} is not supported; allowed: {allowed:?}")]
    UnsupportedTileWidth {
        requested: u32,
        allowed: &'static [u32],
    },
    #[error("unknown kernel `{requested}`; known: {known}")]
    UnknownKernel { requested: String, known: String },
    #[error("simulated kernel failed: {0}")]
    Simulator(#[from] SimError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Tags a driver error with the call that produced it.
pub(crate) trait DriverContext<T> {
    fn call(self, call: &'static str) -> Result<T>;
}

impl<T> DriverContext<T> for std::result::Result<T, DriverError> {
    fn call(self, call: &'static str) -> Result<T> {
        self.map_err(|source| Error::Driver { call, source })
    }
}
