//! What the simulator reports.

use crate::thread::Dim3;
use std::fmt;
use std::string::String;

/// A kernel source position (`file:line:column`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceLocation {
    pub file: &'static str,
    pub line: u32,
    pub column: u32,
}

impl From<&'static core::panic::Location<'static>> for SourceLocation {
    fn from(l: &'static core::panic::Location<'static>) -> Self {
        Self {
            file: l.file(),
            line: l.line(),
            column: l.column(),
        }
    }
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// One thread of the grid: `blockIdx` and `threadIdx`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadCoord {
    pub block: Dim3,
    pub thread: Dim3,
}

impl fmt::Display for ThreadCoord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "block {} thread {}", self.block, self.thread)
    }
}

/// Which shared array an access went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedArrayId {
    /// A `shared_array!` declared at this location.
    Static(SourceLocation),
    /// The launch's dynamic shared memory.
    Dynamic,
}

impl fmt::Display for SharedArrayId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Static(at) => write!(f, "static shared array declared at {at}"),
            Self::Dynamic => f.write_str("dynamic shared memory"),
        }
    }
}

/// The two accesses of a race, in the order they happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaceKind {
    /// One thread wrote, another then read.
    ReadAfterWrite,
    /// One thread read, another then wrote.
    WriteAfterRead,
    /// Two threads wrote.
    WriteAfterWrite,
}

impl fmt::Display for RaceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ReadAfterWrite => "read after another thread's write",
            Self::WriteAfterRead => "write after another thread's read",
            Self::WriteAfterWrite => "write after another thread's write",
        })
    }
}

/// Why a simulated launch failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// A grid or block extent is zero.
    EmptyLaunch { grid: Dim3, block: Dim3 },
    /// More threads in a block than the device allows.
    TooManyThreads {
        block: Dim3,
        threads: u64,
        limit: u32,
    },
    /// A block extent beyond the per-dimension limit.
    BlockDimTooLarge { block: Dim3, limit: Dim3 },
    /// Static plus dynamic shared memory of one block beyond the limit.
    SharedMemoryExceeded {
        block: Dim3,
        requested: u64,
        limit: u32,
    },
    /// A shared-memory index past the end of its array.
    SharedOutOfBounds {
        at: ThreadCoord,
        array: SharedArrayId,
        index: u32,
        len: u32,
        location: SourceLocation,
    },
    /// A read of a shared word that no thread of the block has written.
    UninitializedSharedRead {
        at: ThreadCoord,
        array: SharedArrayId,
        index: u32,
        location: SourceLocation,
    },
    /// Two threads accessed one shared word, at least one writing, with no barrier between.
    DataRace {
        block: Dim3,
        array: SharedArrayId,
        index: u32,
        kind: RaceKind,
        /// The thread whose access came first.
        first: Dim3,
        /// The thread whose access completed the race.
        second: Dim3,
        /// Where the second access is in the kernel source.
        location: SourceLocation,
        /// How many barriers the block had passed (the race is between barrier
        /// `barriers_passed` and the next one).
        barriers_passed: u32,
    },
    /// Threads of one block waited at different `sync_threads()` calls.
    DivergentBarrier {
        block: Dim3,
        first: Dim3,
        first_location: SourceLocation,
        second: Dim3,
        second_location: SourceLocation,
    },
    /// A thread returned while others of its block waited at a barrier.
    BarrierNotReached {
        block: Dim3,
        waiting: Dim3,
        location: SourceLocation,
        exited: Dim3,
    },
    /// Kernel code panicked (an arithmetic overflow, say).
    KernelPanicked { at: ThreadCoord, message: String },
    /// A warp shuffle that cannot complete or is used inconsistently.
    WarpShuffle {
        at: ThreadCoord,
        reason: String,
        location: SourceLocation,
    },
    /// The host could not start one OS thread per thread of the block.
    HostThreads { threads: u32, message: String },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyLaunch { grid, block } => {
                write!(f, "launch with an empty grid {grid} or block {block}")
            }
            Self::TooManyThreads {
                block,
                threads,
                limit,
            } => write!(
                f,
                "block {block} has {threads} threads, more than the limit of {limit}"
            ),
            Self::BlockDimTooLarge { block, limit } => {
                write!(f, "block {block} exceeds the per-dimension limit {limit}")
            }
            Self::SharedMemoryExceeded {
                block,
                requested,
                limit,
            } => write!(
                f,
                "block {block} needs {requested} bytes of shared memory, more than the limit of {limit}"
            ),
            Self::SharedOutOfBounds {
                at,
                array,
                index,
                len,
                location,
            } => write!(
                f,
                "{at}: shared-memory index {index} out of bounds for length {len} ({array}) at {location}"
            ),
            Self::UninitializedSharedRead {
                at,
                array,
                index,
                location,
            } => write!(
                f,
                "{at}: read of uninitialised shared word {index} ({array}) at {location}"
            ),
            Self::DataRace {
                block,
                array,
                index,
                kind,
                first,
                second,
                location,
                barriers_passed,
            } => write!(
                f,
                "data race in block {block} on shared word {index} ({array}): thread {second} {kind} by thread {first}, \
                 with no barrier between them (after barrier {barriers_passed}), at {location}"
            ),
            Self::DivergentBarrier {
                block,
                first,
                first_location,
                second,
                second_location,
            } => write!(
                f,
                "divergent barrier in block {block}: thread {first} waits at {first_location} while thread {second} waits at {second_location}"
            ),
            Self::BarrierNotReached {
                block,
                waiting,
                location,
                exited,
            } => write!(
                f,
                "barrier not reached by every thread of block {block}: thread {waiting} waits at {location} but thread {exited} returned"
            ),
            Self::KernelPanicked { at, message } => write!(f, "{at}: kernel panicked: {message}"),
            Self::WarpShuffle {
                at,
                reason,
                location,
            } => write!(f, "{at}: warp shuffle at {location}: {reason}"),
            Self::HostThreads { threads, message } => {
                write!(
                    f,
                    "the simulator could not start {threads} host threads for a block: {message}"
                )
            }
        }
    }
}

impl std::error::Error for SimError {}
