//! Copies between the devices of a [`Gpus`] by their copy engines (`cuMemcpyPeerAsync`),
//! and the stream order that keeps such copies safe.
//!
//! **Why copy engines.** NCCL moves data with kernels: its sends and receives take
//! multiprocessors for as long as they run. A product's operands leave the root while the
//! root computes its own rows, and its rows of the result arrive while it still computes;
//! on 2× H200 NCCL's kernels beside the root's SGEMM cut its rate from 49 to 38 TFLOP/s
//! (`docs/results/2026-11-28/multi-gemm-2xh200-priority.jsonl`). A copy engine uses no
//! multiprocessor, so the products, gathers and sums move their data this way; NCCL keeps
//! the sliding average's halo exchange between neighbours.
//!
//! **Access.** `Gpus::new` gives every device's memory pool (where this crate's buffers come
//! from) access from every other device, and enables peer access between contexts where
//! the driver reports that the devices can reach each other directly (NVLink or PCIe
//! peer-to-peer). Where they cannot, `cuMemcpyPeerAsync` still copies, through the host.
//!
//! **Order.** A copy is queued on a stream of one device and reads or writes memory of
//! another, whose streams know nothing of it. Each call that copies ends with
//! `Gpus::join`: every device's stream waits for every other's, so that nothing queued
//! later on any device (a write to an operand, a buffer freed) can overtake a copy that
//! uses it.

use super::{Device, Gpus};
use crate::problem::error::{DriverContext, Result};
use cudarc::driver::sys::{self, CUevent_flags};
use cudarc::driver::{CudaEvent, CudaStream};

/// Opens every device's memory to every other and enables direct peer access where the
/// devices can reach each other ([the module](self)). Whether every pair is direct.
pub(super) fn open(devices: &[Device]) -> Result<bool> {
    let mut direct = true;
    for (i, d) in devices.iter().enumerate() {
        for (j, e) in devices.iter().enumerate() {
            if i == j {
                continue;
            }
            d.gpu.open_memory_to(e.ordinal)?;
            let mut can = 0;
            // SAFETY: writes one int for two devices the driver reported.
            unsafe {
                sys::cuDeviceCanAccessPeer(
                    &mut can,
                    d.gpu.context().cu_device(),
                    e.gpu.context().cu_device(),
                )
            }
            .result()
            .call("cuDeviceCanAccessPeer")?;
            if can == 0 {
                direct = false;
                continue;
            }
            d.gpu.context().bind_to_thread().call("cuCtxSetCurrent")?;
            // SAFETY: enables access from the current context (`d`'s) to a live context.
            match unsafe { sys::cuCtxEnablePeerAccess(e.gpu.context().cu_ctx(), 0) } {
                sys::cudaError_enum::CUDA_SUCCESS
                | sys::cudaError_enum::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
                other => other.result().call("cuCtxEnablePeerAccess")?,
            }
        }
    }
    Ok(direct)
}

/// An event on `stream`, recorded now.
pub(super) fn mark(stream: &CudaStream) -> Result<CudaEvent> {
    stream
        .record_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
        .call("cuEventRecord")
}

impl Gpus {
    /// Queues on `on` (a stream of any device) a copy of `len` floats from address `src` on
    /// device `from` to address `dst` on device `to`, by a copy engine.
    ///
    /// # Safety
    /// `src..src + 4·len` must be live memory of device `from`, written by work that `on`
    /// follows; `dst..dst + 4·len` live memory of device `to`, written by nothing else
    /// until the copy is done; both must outlive the copy ([`Gpus::join`] orders what
    /// follows).
    pub(super) unsafe fn copy_peer(
        &self, on: &CudaStream, (to, dst): (usize, u64), (from, src): (usize, u64), len: usize,
    ) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        on.context().bind_to_thread().call("cuCtxSetCurrent")?;
        let (to_ctx, from_ctx) = (self.gpu(to).context(), self.gpu(from).context());
        // SAFETY: the caller's contract: both ranges live on their devices, ordered by `on`.
        unsafe {
            cudarc::driver::result::memcpy_peer_async(
                to_ctx.cu_ctx(),
                dst,
                from_ctx.cu_ctx(),
                src,
                4 * len,
                on.cu_stream(),
            )
        }
        .call("cuMemcpyPeerAsync")
    }

    /// Queues on `on` a copy of `height` rows of `width` floats from device `from`, rows
    /// `src_pitch` floats apart from address `src`, to device `to`, rows `dst_pitch` floats
    /// apart from address `dst` (a panel of a row-major matrix into a matrix of its own, or
    /// back): `cuMemcpy3DPeerAsync`, or [`copy_peer`](Self::copy_peer) where both pitches
    /// are the width.
    ///
    /// # Safety
    /// As [`copy_peer`](Self::copy_peer), for every row: `src + 4·(i·src_pitch)` to
    /// `+ 4·width` on device `from` and `dst + 4·(i·dst_pitch)` to `+ 4·width` on device
    /// `to`, `i < height`; `width` at most either pitch.
    pub(super) unsafe fn copy_peer_2d(
        &self, on: &CudaStream, (to, dst, dst_pitch): (usize, u64, usize),
        (from, src, src_pitch): (usize, u64, usize), width: usize, height: usize,
    ) -> Result<()> {
        if width == src_pitch && width == dst_pitch {
            // SAFETY: the caller's contract, rows back to back.
            return unsafe { self.copy_peer(on, (to, dst), (from, src), width * height) };
        }
        if width == 0 || height == 0 {
            return Ok(());
        }
        on.context().bind_to_thread().call("cuCtxSetCurrent")?;
        let (to_ctx, from_ctx) = (self.gpu(to).context(), self.gpu(from).context());
        let copy = sys::CUDA_MEMCPY3D_PEER {
            srcXInBytes: 0,
            srcY: 0,
            srcZ: 0,
            srcLOD: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: src,
            srcArray: std::ptr::null_mut(),
            srcContext: from_ctx.cu_ctx(),
            srcPitch: 4 * src_pitch,
            srcHeight: height,
            dstXInBytes: 0,
            dstY: 0,
            dstZ: 0,
            dstLOD: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: dst,
            dstArray: std::ptr::null_mut(),
            dstContext: to_ctx.cu_ctx(),
            dstPitch: 4 * dst_pitch,
            dstHeight: height,
            WidthInBytes: 4 * width,
            Height: height,
            Depth: 1,
        };
        // SAFETY: the caller's contract: every row inside live memory of its device, ordered
        // by `on`; the descriptor is read during the call.
        unsafe { sys::cuMemcpy3DPeerAsync(&copy, on.cu_stream()) }
            .result()
            .call("cuMemcpy3DPeerAsync")
    }

    /// Makes every device's stream wait for what is queued so far on every other's (its
    /// transfers included: each stream first waits for its device's transfer stream), so
    /// that nothing queued afterwards on any device overtakes a copy between devices.
    pub(super) fn join(&self) -> Result<()> {
        self.kernels_follow_transfers()?;
        if self.len() == 1 {
            return Ok(());
        }
        let marks = self
            .devices
            .iter()
            .map(|d| mark(d.gpu.stream()))
            .collect::<Result<Vec<_>>>()?;
        for (i, d) in self.devices.iter().enumerate() {
            for (j, m) in marks.iter().enumerate() {
                if i != j {
                    d.gpu.stream().wait(m).call("cuStreamWaitEvent")?;
                }
            }
        }
        Ok(())
    }
}
