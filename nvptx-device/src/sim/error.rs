//! What the simulator reports.

use crate::launch::LimitError;
use crate::thread::Dim3;
use std::fmt;
use std::string::String;
use std::vec::Vec;

/// A kernel source position (`file:line:column`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceLocation {
    /// The source file, as `file!()` names it.
    pub file: &'static str,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
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
    /// `blockIdx`.
    pub block: Dim3,
    /// `threadIdx`.
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
    /// A launch shape or shared-memory size beyond the [`Limits`](crate::launch::Limits)
    /// the simulator was given: the same error a GPU launcher reports for the same launch.
    /// (Static shared arrays are counted as the kernel declares them, block by block.)
    Limit(LimitError),
    /// A shared-memory index past the end of its array.
    SharedOutOfBounds {
        /// The thread that made the access.
        at: ThreadCoord,
        /// The array it went to.
        array: SharedArrayId,
        /// The index, in elements.
        index: u32,
        /// The array's length, in elements.
        len: u32,
        /// Where the access is in the kernel source.
        location: SourceLocation,
    },
    /// A read of a shared word that no thread of the block has written.
    UninitializedSharedRead {
        /// The thread that read it.
        at: ThreadCoord,
        /// The array it went to.
        array: SharedArrayId,
        /// The index, in elements.
        index: u32,
        /// Where the read is in the kernel source.
        location: SourceLocation,
    },
    /// Two threads accessed one shared word, at least one writing, with no barrier between.
    DataRace {
        /// `blockIdx` of the block.
        block: Dim3,
        /// The array the word belongs to.
        array: SharedArrayId,
        /// The word's index in the array.
        index: u32,
        /// Which accesses they were, in order.
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
        /// `blockIdx` of the block.
        block: Dim3,
        /// `threadIdx` of a thread waiting at one barrier...
        first: Dim3,
        /// ...which is here,
        first_location: SourceLocation,
        /// ...and of a thread waiting at another...
        second: Dim3,
        /// ...which is here.
        second_location: SourceLocation,
    },
    /// A thread returned while others of its block waited at a barrier.
    BarrierNotReached {
        /// `blockIdx` of the block.
        block: Dim3,
        /// `threadIdx` of a thread left waiting...
        waiting: Dim3,
        /// ...at this barrier,
        location: SourceLocation,
        /// ...and of the thread that returned without reaching it.
        exited: Dim3,
    },
    /// Kernel code panicked (an arithmetic overflow, say).
    KernelPanicked {
        /// The thread that panicked.
        at: ThreadCoord,
        /// The panic message.
        message: String,
    },
    /// A warp shuffle or another warp-collective operation (`mma.sync`, `ldmatrix`) that
    /// cannot complete or is used inconsistently; the reason starts with the instruction.
    WarpShuffle {
        /// The lane that found the problem.
        at: ThreadCoord,
        /// What is wrong (a lane missing from the mask, a deadlock, ...).
        reason: String,
        /// Where the shuffle is in the kernel source.
        location: SourceLocation,
    },
    /// A thread returned with bulk stores from shared memory to global memory
    /// (`cp.async.bulk.tensor` stores) it never waited for (`cp.async.bulk.wait_group`):
    /// on a GPU they may read the block's shared memory after it is gone.
    BulkStorePending {
        /// The thread that issued them.
        at: ThreadCoord,
        /// Where the first of them was issued.
        location: SourceLocation,
    },
    /// Every thread of a block that has not returned waits for something that only another
    /// of them could do (lanes of a warp-collective operation waiting for lanes that wait
    /// at a barrier, say): the launch would hang on a GPU.
    Deadlock {
        /// `blockIdx` of the block.
        block: Dim3,
        /// Every waiting thread, in thread order, and what it waits for.
        waiting: Vec<Waiting>,
    },
    /// The host could not allocate the stacks of the simulated threads of a block.
    HostThreads {
        /// Threads per block of the launch.
        threads: u32,
        /// The operating system's error.
        message: String,
    },
}

/// A thread of a deadlocked block ([`SimError::Deadlock`]) and what it waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// `threadIdx` of the thread.
    pub thread: Dim3,
    /// What it waits for: `sync_threads()`, or the instruction, mask and missing lanes of a
    /// warp-collective operation.
    pub what: String,
    /// Where it waits in the kernel source.
    pub location: SourceLocation,
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Limit(e) => write!(f, "{e}"),
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
            Self::BulkStorePending { at, location } => write!(
                f,
                "{at}: returned with the bulk store issued at {location} not waited for (cp.async.bulk.wait_group)"
            ),
            Self::WarpShuffle {
                at,
                reason,
                location,
            } => write!(f, "{at}: warp-collective operation at {location}: {reason}"),
            Self::Deadlock { block, waiting } => {
                write!(
                    f,
                    "deadlock in block {block}: every thread that has not returned waits, and none can release another:"
                )?;
                // Runs of threads waiting for the same thing at the same place, one line each.
                let mut rest = &waiting[..];
                while let [first, ..] = rest {
                    let run = rest
                        .iter()
                        .take_while(|w| w.what == first.what && w.location == first.location)
                        .count();
                    let last = &rest[run - 1];
                    let threads = if run == 1 {
                        std::format!("thread {}", first.thread)
                    } else {
                        std::format!("{run} threads {} to {}", first.thread, last.thread)
                    };
                    write!(
                        f,
                        " {threads} wait for {} at {};",
                        first.what, first.location
                    )?;
                    rest = &rest[run..];
                }
                Ok(())
            }
            Self::HostThreads { threads, message } => {
                write!(
                    f,
                    "the simulator could not allocate stacks for the {threads} threads of a block: {message}"
                )
            }
        }
    }
}

impl std::error::Error for SimError {}
