//! Every GPU of a host as one: [`Gpus`] holds one [`Gpu`] (a context and its stream) per
//! device and, with more than one, an NCCL communicator over them ([`nccl`]) and a second
//! stream per device for the transfers, so that they overlap the kernels. The products,
//! sums, reductions and sliding averages spread over the devices as [`crate::plan::shard`]
//! splits them, and give the bits one GPU gives ([`gemm`], [`vector`]); [`simulated`] runs the
//! same splits through the CPU simulator, where the tests check those bits without a GPU.
//!
//! With one GPU nothing here needs NCCL, and every operation runs as on that [`Gpu`].
//!
//! Device `i` of a [`Gpus`] is its `i`-th ordinal; device 0 is the *root*, where operands
//! given as one device buffer live and results are gathered. The calls on device buffers
//! return once everything is queued; [`Gpus::synchronize`] (or a download) waits for it.
//! They allocate the buffers their transfers need on each call; so that this costs little,
//! a [`Gpus`] has each device's memory pool keep freed memory (`Gpu::reserve` still counts
//! it as free).

pub mod gemm;
pub mod nccl;
pub mod peer;
pub mod simulated;
pub mod vector;

use crate::gpu::{Gpu, device_count};
use crate::plan::shard::VECTOR_CHUNK;
use crate::problem::error::{DriverContext, Error, Result};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use nccl::Communicator;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub use gemm::{GemmRun, PartRun};
pub use nccl::ENV_LIBRARY;

/// Several GPUs of one host, with NCCL between them ([the module](self)).
pub struct Gpus {
    /// `None` with one device. Declared first, so dropped first: NCCL's communicators go
    /// before the contexts they live in.
    comm: Option<Mutex<Communicator>>,
    /// Whether an operation used NCCL since the last [`Gpus::synchronize`].
    nccl_used: AtomicBool,
    devices: Vec<Device>,
    /// Elements of a sharded vector's chunks ([`crate::plan::shard::Chunks`]).
    chunk: usize,
    /// Each product's last split and timings, for the next split ([`gemm`]).
    balance: Mutex<gemm::Balance>,
    /// The buffers of the last product gathered on the root ([`gemm::Workspace`]).
    workspace: Mutex<Option<gemm::Workspace>>,
    /// Whether every pair of devices copies directly ([`peer::open`]).
    direct: bool,
    /// Each device's scratch for sums, kept between calls ([`vector`]): every use is on
    /// that device's stream, so one call's use is done before the next one's starts.
    sum_scratch: Mutex<Vec<Option<crate::gpu::ReduceScratch>>>,
}

struct Device {
    gpu: Gpu,
    ordinal: usize,
    /// The transfers' stream, beside the GPU's own (which the kernels use); `None` with one
    /// device. A device's copies to other devices run one after another whatever streams
    /// they are queued on (on 4× H200 the root's copies to three devices, queued on three
    /// streams, ran device after device), so each device queues them here, in the order
    /// they are needed.
    transfers: Option<Arc<CudaStream>>,
    /// A stream for copies within the device, which run beside its copies to others;
    /// `None` with one device.
    local: Option<Arc<CudaStream>>,
    /// A second handle on the GPU, whose launches run beside `gpu`'s ([`Gpu::sibling`]):
    /// a product's launches alternate between the two, so that one launch's last, partly
    /// filled wave of blocks overlaps the next launch; `None` with one device.
    side: Option<Gpu>,
}

impl Device {
    /// The stream transfers run on.
    fn transfers(&self) -> &Arc<CudaStream> {
        self.transfers.as_ref().unwrap_or(self.gpu.stream())
    }

    /// The stream of copies within the device.
    fn local(&self) -> &Arc<CudaStream> {
        self.local.as_ref().unwrap_or(self.transfers())
    }

    /// The second handle ([`Device::side`]), else the GPU's own.
    fn side(&self) -> &Gpu {
        self.side.as_ref().unwrap_or(&self.gpu)
    }

    /// The device's streams beside the GPU's own: transfers, local copies, the second
    /// handle's launches.
    fn other_streams(&self) -> impl Iterator<Item = &Arc<CudaStream>> {
        self.transfers
            .iter()
            .chain(&self.local)
            .chain(self.side.as_ref().map(Gpu::stream))
    }
}

impl Gpus {
    /// Every GPU the driver reports.
    pub fn all() -> Result<Self> {
        let count = device_count()?;
        Self::new(&(0..count).collect::<Vec<_>>())
    }

    /// GPUs `0..count`: [`Error::DeviceCount`] where the driver reports fewer (or `count`
    /// is 0).
    pub fn first(count: usize) -> Result<Self> {
        let present = device_count()?;
        if count == 0 || count > present {
            return Err(Error::DeviceCount {
                requested: count,
                count: present,
                why: "GPUs 0 to n - 1".into(),
            });
        }
        Self::new(&(0..count).collect::<Vec<_>>())
    }

    /// The GPUs `ordinals`, device `i` on `ordinals[i]`. An empty list, or one naming a GPU
    /// twice, is [`Error::DeviceCount`]; an ordinal past the last GPU
    /// [`Error::NoSuchDevice`]. With more than one GPU it loads NCCL
    /// ([`Error::NcclNotFound`] where it cannot, listing where it looked) and makes one
    /// communicator over them.
    pub fn new(ordinals: &[usize]) -> Result<Self> {
        let present = device_count()?;
        let mut sorted = ordinals.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        if ordinals.is_empty() || sorted.len() != ordinals.len() {
            return Err(Error::DeviceCount {
                requested: ordinals.len(),
                count: present,
                why: format!("the list {ordinals:?} must be non-empty, each GPU once"),
            });
        }
        let mut devices = vec![];
        for &ordinal in ordinals {
            let gpu = Gpu::with_ordinal(ordinal)?;
            gpu.keep_freed_memory()?;
            devices.push(Device {
                gpu,
                ordinal,
                transfers: None,
                local: None,
                side: None,
            });
        }
        let comm = if devices.len() > 1 {
            let nccl = nccl::load(devices.len())?;
            for d in &mut devices {
                // The transfers' stream has the highest priority: NCCL's kernels then get
                // the next free multiprocessors while a product's grid still has blocks
                // waiting, instead of after its last (which serialised the devices: the
                // root's sends waited for its own compute).
                let ctx = d.gpu.context();
                ctx.bind_to_thread().call("cuCtxSetCurrent")?;
                let (_, highest) = cudarc::driver::result::stream::get_priority_range()
                    .call("cuCtxGetStreamPriorityRange")?;
                let stream = || {
                    ctx.new_stream_with_priority(highest)
                        .call("cuStreamCreateWithPriority")
                };
                d.transfers = Some(stream()?);
                d.local = Some(stream()?);
                d.side = Some(d.gpu.sibling()?);
            }
            Some(Mutex::new(Communicator::new(nccl, ordinals)?))
        } else {
            None
        };
        let direct = peer::open(&devices)?;
        Ok(Self {
            devices,
            comm,
            chunk: VECTOR_CHUNK,
            balance: Mutex::new(gemm::Balance::default()),
            workspace: Mutex::new(None),
            nccl_used: AtomicBool::new(false),
            direct,
            sum_scratch: Mutex::new(vec![]),
        })
    }

    /// How many GPUs.
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    /// Never: a [`Gpus`] holds at least one GPU.
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// Device `i`'s [`Gpu`] (0 is the root).
    pub fn gpu(&self, i: usize) -> &Gpu {
        &self.devices[i].gpu
    }

    /// The CUDA ordinal of device `i`.
    pub fn ordinal(&self, i: usize) -> usize {
        self.devices[i].ordinal
    }

    /// Whether every pair of devices copies directly (NVLink or PCIe peer-to-peer), rather
    /// than through the host ([`peer`]).
    pub fn direct_copies(&self) -> bool {
        self.direct
    }

    /// NCCL's version and where it was loaded from; `None` with one GPU.
    pub fn nccl(&self) -> Option<((u32, u32, u32), String)> {
        let comm = self.comm.as_ref()?;
        let nccl = lock(comm).nccl();
        Some((nccl.version(), nccl.path().to_owned()))
    }

    /// The elements of a sharded vector's chunks ([`crate::plan::shard::VECTOR_CHUNK`]
    /// unless set).
    pub fn vector_chunk(&self) -> usize {
        self.chunk
    }

    /// Sets the chunk of the vectors sharded from now on: sums and sliding averages are
    /// bit-identical across device counts for one chunk size, and equal to one GPU's
    /// single-kernel results for inputs of one chunk. [`Error::InvalidChunk`] unless a
    /// positive multiple of 4.
    pub fn set_vector_chunk(&mut self, chunk: usize) -> Result<()> {
        crate::plan::shard::Chunks::new(0, chunk)?;
        self.chunk = chunk;
        Ok(())
    }

    /// Waits for every device's work; the first fault is [`Error::KernelFault`], an NCCL
    /// failure [`Error::Nccl`]. Every operation of this handle ends with each device's
    /// stream waiting for every other's and for its own transfer, local and second streams
    /// (a join) and queues nothing on those afterwards, so waiting for the devices'
    /// own streams waits for everything; NCCL is asked for its errors only where an
    /// operation used it since the last wait. (A wait is a few microseconds per stream, and
    /// a sum over four GPUs takes a millisecond.)
    pub fn synchronize(&self) -> Result<()> {
        for d in &self.devices {
            d.gpu.synchronize("a multi-GPU operation")?;
        }
        match &self.comm {
            Some(comm) if self.nccl_used.swap(false, Ordering::AcqRel) => lock(comm).check_async(),
            _ => Ok(()),
        }
    }

    /// Runs `launch` as `budget` allows, each run waited for on every device and timed on
    /// the host's clock (a run spans devices, whose CUDA events cannot be compared): the
    /// rule of [`Gpu::time_within`]. Each timed run's milliseconds.
    pub fn time_within(
        &self, budget: &crate::plan::budget::TimeBudget, mut launch: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        let mut run = || -> Result<f64> {
            let start = std::time::Instant::now();
            launch()?;
            self.synchronize()?;
            Ok(start.elapsed().as_secs_f64() * 1e3)
        };
        let (mut done, start) = (0, std::time::Instant::now());
        while budget.another_warmup(done, start.elapsed()) {
            run()?;
            done += 1;
        }
        let mut ms = vec![run()?];
        for _ in 1..budget.timed_runs(ms[0]) {
            ms.push(run()?);
        }
        Ok(ms)
    }

    /// The communicator, for a transfer between devices (there are several).
    fn comm(&self) -> Result<std::sync::MutexGuard<'_, Communicator>> {
        let comm = self.comm.as_ref().ok_or(Error::DeviceCount {
            requested: 2,
            count: 1,
            why: "a transfer between devices".into(),
        })?;
        self.nccl_used.store(true, Ordering::Release);
        Ok(lock(comm))
    }

    /// Makes each device's transfer and local streams wait for the work queued so far on its
    /// GPU's stream (buffers allocated or written there).
    fn transfers_follow_kernels(&self) -> Result<()> {
        for d in &self.devices {
            for t in d.other_streams() {
                t.join(d.gpu.stream()).call("cuStreamWaitEvent")?;
            }
        }
        Ok(())
    }

    /// Makes each device's GPU stream wait for the transfers queued so far, so that the
    /// kernels after them read what arrived, and the buffers freed on it afterwards are
    /// freed after the transfers that used them.
    fn kernels_follow_transfers(&self) -> Result<()> {
        for d in &self.devices {
            for t in d.other_streams() {
                d.gpu.stream().join(t).call("cuStreamWaitEvent")?;
            }
        }
        Ok(())
    }

    /// A guard that, dropped, makes every device's stream wait for every other's and for
    /// the transfers ([`Gpus::join`]): made after a call's buffers and before its transfers
    /// are queued, so that on any return, an error's too, the buffers are freed (on the
    /// devices' streams) after the transfers that use them.
    fn settle(&self) -> Settle<'_> {
        Settle {
            gpus: self,
            armed: true,
        }
    }

    /// [`Error::WrongDevice`] unless `buf` is on device `device`.
    fn check_on(&self, operand: &'static str, buf: &CudaSlice<f32>, device: usize) -> Result<()> {
        let (actual, expected) = (buf.context().ordinal(), self.devices[device].ordinal);
        if actual != expected {
            return Err(Error::WrongDevice {
                operand,
                expected,
                actual,
            });
        }
        Ok(())
    }
}

/// See [`Gpus::settle`].
struct Settle<'a> {
    gpus: &'a Gpus,
    armed: bool,
}

impl Settle<'_> {
    /// Makes the streams wait now, as a call that succeeded ends, with the error if that
    /// fails.
    fn done(mut self) -> Result<()> {
        self.armed = false;
        self.gpus.join()
    }
}

impl Drop for Settle<'_> {
    fn drop(&mut self) {
        if self.armed {
            // On an error's way out: a failure here is a failed device, which the call's
            // own error or the next synchronisation reports.
            let _ = self.gpus.join();
        }
    }
}

impl Drop for Gpus {
    /// Waits for the devices before the communicator is destroyed: NCCL must not be torn
    /// down under a transfer in flight.
    fn drop(&mut self) {
        let _ = self.synchronize();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The device address of element `at` of `buf` (of f32s), for NCCL.
fn address(buf: &CudaSlice<f32>, at: usize) -> u64 {
    let (base, _record) = buf.device_ptr(buf.stream());
    base + 4 * at as u64
}

/// A row-major matrix (a vector: one column) spread over devices by rows: rows `rows` of
/// part `i` on device `parts[i].device`, each part's buffer holding its rows and, where a
/// sliding average needs it, room for a halo after them.
pub struct Shards {
    rows: usize,
    cols: usize,
    parts: Vec<Shard>,
}

/// One device's rows of a [`Shards`].
pub struct Shard {
    /// The device (an index into the [`Gpus`]).
    pub device: usize,
    /// Its rows of the whole.
    pub rows: Range<usize>,
    /// Its rows, then the room after them; at least one element.
    buf: CudaSlice<f32>,
}

impl Shard {
    /// The buffer: its rows, then room.
    pub fn buffer(&self) -> &CudaSlice<f32> {
        &self.buf
    }

    /// Elements of room after its rows.
    pub fn room(&self, cols: usize) -> usize {
        self.buf.len().saturating_sub(self.rows.len() * cols)
    }
}

impl Shards {
    /// Rows of the whole.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns (1 for a vector).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The parts, in order of their rows.
    pub fn parts(&self) -> &[Shard] {
        &self.parts
    }

    /// Each part's rows.
    pub fn layout(&self) -> Vec<Range<usize>> {
        self.parts.iter().map(|p| p.rows.clone()).collect()
    }

    /// Copies the whole back to the host: each device its own rows, all at once.
    pub fn download(&self, gpus: &Gpus) -> Result<Vec<f32>> {
        let mut out = vec![0.0f32; self.rows * self.cols];
        let mut rest: &mut [f32] = &mut out;
        let mut pieces = vec![];
        for p in &self.parts {
            let (piece, tail) = rest.split_at_mut(p.rows.len() * self.cols);
            pieces.push((p, piece));
            rest = tail;
        }
        std::thread::scope(|s| {
            let jobs: Vec<_> = pieces
                .into_iter()
                .filter(|(_, piece)| !piece.is_empty())
                .map(|(p, piece)| {
                    s.spawn(move || {
                        let gpu = gpus.gpu(p.device);
                        gpu.stream()
                            .memcpy_dtoh(&p.buf.slice(..piece.len()), piece)
                            .call("cuMemcpyDtoH")?;
                        gpu.synchronize("a download")
                    })
                })
                .collect();
            jobs.into_iter()
                .map(|j| j.join().expect("a download thread panicked"))
                .collect::<Result<Vec<()>>>()
        })?;
        Ok(out)
    }
}

impl Gpus {
    /// The row-major `rows × cols` matrix `host` on the devices: part `i` is rows
    /// `layout[i]` on device `i`, uploaded by each device at once, with `room` elements
    /// after each part's rows.
    pub fn upload_rows(
        &self, host: &[f32], rows: usize, cols: usize, layout: &[Range<usize>], room: usize,
    ) -> Result<Shards> {
        Error::check_len("x", rows, cols, host.len())?;
        crate::plan::shard::check_layout(rows, 1, layout)?;
        if layout.len() != self.len() {
            return Err(Error::DeviceCount {
                requested: layout.len(),
                count: self.len(),
                why: "a layout of one part per device".into(),
            });
        }
        let parts = std::thread::scope(|s| {
            let jobs: Vec<_> = layout
                .iter()
                .enumerate()
                .map(|(device, r)| {
                    let r = r.clone();
                    s.spawn(move || -> Result<Shard> {
                        let gpu = self.gpu(device);
                        let own = &host[r.start * cols..r.end * cols];
                        let mut buf = gpu.uninit((own.len() + room).max(1))?;
                        if !own.is_empty() {
                            gpu.stream()
                                .memcpy_htod(own, &mut buf.slice_mut(..own.len()))
                                .call("cuMemcpyHtoD")?;
                        }
                        gpu.synchronize("an upload")?;
                        Ok(Shard {
                            device,
                            rows: r,
                            buf,
                        })
                    })
                })
                .collect();
            jobs.into_iter()
                .map(|j| j.join().expect("an upload thread panicked"))
                .collect::<Result<Vec<Shard>>>()
        })?;
        Ok(Shards { rows, cols, parts })
    }

    /// Gathers `shards` into `out` on the root, rows in order: the root's own by a copy on
    /// the device, the others' by their copy engines. Queued, as the device operations are.
    pub fn gather(&self, shards: &Shards, out: &mut CudaSlice<f32>) -> Result<()> {
        let cols = shards.cols;
        crate::gpu::output_len(out.len(), shards.rows * cols)?;
        let pieces: Vec<Piece> = shards
            .parts
            .iter()
            .map(|p| Piece {
                device: p.device,
                src: &p.buf,
                at: p.rows.start * cols,
                len: p.rows.len() * cols,
            })
            .collect();
        self.gather_pieces(&pieces, out)
    }

    /// Copies each piece into `out` on the root at its offset: the root's by a copy on the
    /// device, the others' by their copy engines ([`peer`]), each from its device's transfer
    /// stream; then every stream waits for every other ([`Gpus::join`]), so that the root's
    /// reads `out` whole and the pieces are freed after the copies.
    fn gather_pieces(&self, pieces: &[Piece<'_>], out: &mut CudaSlice<f32>) -> Result<()> {
        self.check_on("out", out, 0)?;
        for p in pieces {
            if p.at + p.len > out.len() || p.len > p.src.len() {
                return Err(Error::InputLength {
                    operand: "out",
                    rows: 1,
                    cols: p.at + p.len,
                    expected: p.at + p.len,
                    actual: out.len(),
                });
            }
        }
        for p in pieces.iter().filter(|p| p.device == 0 && p.len > 0) {
            self.gpu(0)
                .stream()
                .memcpy_dtod(
                    &p.src.slice(..p.len),
                    &mut out.slice_mut(p.at..p.at + p.len),
                )
                .call("cuMemcpyDtoD")?;
        }
        let remote: Vec<&Piece> = pieces
            .iter()
            .filter(|p| p.device != 0 && p.len > 0)
            .collect();
        if remote.is_empty() {
            return Ok(());
        }
        let settle = self.settle();
        self.transfers_follow_kernels()?;
        for p in &remote {
            // SAFETY: the piece holds `len` floats on its device, written by the work its
            // transfer stream now follows; `out` on the root has room for them at `at`
            // (checked above), written there by this copy alone; both outlive it (every
            // stream waits for every copy below, before anything can be freed).
            unsafe {
                self.copy_peer(
                    self.devices[p.device].transfers(),
                    (0, address(out, p.at)),
                    (p.device, address(p.src, 0)),
                    p.len,
                )
            }?;
        }
        settle.done()
    }
}

/// `len` floats of `src` on `device`, to land at element `at` of a gathered buffer.
struct Piece<'a> {
    device: usize,
    src: &'a CudaSlice<f32>,
    at: usize,
    len: usize,
}

/// Where a product's rows of `A` come from: the whole `A` on the root, or its rows already
/// on the devices.
#[derive(Clone, Copy)]
enum Rows<'a> {
    Root(&'a CudaSlice<f32>),
    Shards(&'a Shards),
}

/// The raw transfer stream of `d`, for NCCL.
fn stream(d: &Device) -> *mut std::ffi::c_void {
    d.transfers().cu_stream() as *mut std::ffi::c_void
}
