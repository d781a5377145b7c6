//! The errors of the cust host.

use cust::error::CudaError;
use cust_plan::PlanError;
use nvptx_device::launch::LimitError;
use std::fmt;

/// What can go wrong launching a kernel with cust.
#[derive(Debug)]
pub enum Error {
    /// The driver is there but sees no GPU.
    NoDevice,
    /// A bad problem or argument list, found before the driver is called.
    Plan(PlanError),
    /// A launch beyond the device's or the function's limits, found before the driver is
    /// called; the same error the cudarc host and the simulator give.
    Launch(LimitError),
    /// The PTX module has no such entry point.
    EntryNotFound(String),
    /// A driver call failed.
    Driver {
        /// The driver function.
        call: &'static str,
        /// cust's error.
        source: CudaError,
    },
    /// A raw driver call (one cust does not wrap) failed.
    DriverCode {
        /// The driver function.
        call: &'static str,
        /// The driver's code.
        code: cust::sys::CUresult,
    },
}

/// The result of the cust host's operations.
pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoDevice => f.write_str("the CUDA driver sees no GPU"),
            Self::Plan(e) => e.fmt(f),
            Self::Launch(e) => write!(f, "launch refused: {e}"),
            Self::EntryNotFound(entry) => write!(f, "the PTX module has no entry point `{entry}`"),
            Self::Driver { call, source } => write!(f, "{call} failed: {source}"),
            Self::DriverCode { call, code } => write!(f, "{call} failed: {code:?}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Plan(e) => Some(e),
            Self::Launch(e) => Some(e),
            Self::Driver { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<PlanError> for Error {
    fn from(e: PlanError) -> Self {
        Self::Plan(e)
    }
}

impl From<LimitError> for Error {
    fn from(e: LimitError) -> Self {
        Self::Launch(e)
    }
}

/// Names the driver call of a cust result.
pub(crate) trait Call<T> {
    fn call(self, call: &'static str) -> Result<T>;
}

impl<T> Call<T> for std::result::Result<T, CudaError> {
    fn call(self, call: &'static str) -> Result<T> {
        self.map_err(|source| Error::Driver { call, source })
    }
}
