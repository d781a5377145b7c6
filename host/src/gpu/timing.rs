//! Timing GPU work with CUDA events.

use super::Gpu;
use crate::plan::budget::TimeBudget;
use crate::problem::error::{DriverContext, Result};
use cudarc::driver::CudaSlice;
use cudarc::driver::sys::CUevent_flags;
use std::time::Instant;

impl Gpu {
    /// Runs `launch` `warmup` times untimed, then `iters` times, each bracketed by CUDA
    /// events on the stream; returns each timed run's milliseconds.
    pub fn time_ms(
        &self, warmup: usize, iters: usize, mut launch: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        for _ in 0..warmup {
            launch()?;
        }
        self.stream.synchronize().call("cuStreamSynchronize")?;
        let mut marks = Vec::with_capacity(iters);
        for _ in 0..iters {
            let start = self
                .stream
                .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .call("cuEventRecord")?;
            launch()?;
            let end = self
                .stream
                .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .call("cuEventRecord")?;
            marks.push((start, end));
        }
        marks
            .iter()
            .map(|(s, e)| s.elapsed_ms(e).map(f64::from).call("cuEventElapsedTime"))
            .collect()
    }
}

impl Gpu {
    /// Runs `launch` as `budget` allows ([`crate::plan::budget`]): warm-ups one at a time, each
    /// waited for, until [`TimeBudget::warmup`] have run or they have taken the limit (the
    /// first always runs); then one timed run on its own, whose time sets how many are made
    /// in all ([`TimeBudget::timed_runs`]); then the rest back to back, each bracketed by
    /// CUDA events as in [`time_ms`](Self::time_ms). Returns each timed run's milliseconds:
    /// at least one, at most [`TimeBudget::iters`].
    pub fn time_within(
        &self, budget: &TimeBudget, mut launch: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        let (mut done, start) = (0, Instant::now());
        while budget.another_warmup(done, start.elapsed()) {
            launch()?;
            self.stream.synchronize().call("cuStreamSynchronize")?;
            done += 1;
        }
        let mut ms = self.time_ms(0, 1, &mut launch)?;
        let rest = budget.timed_runs(ms[0]).saturating_sub(1);
        ms.extend(self.time_ms(0, rest, launch)?);
        Ok(ms)
    }
}

impl Gpu {
    /// The device's copy bandwidth, the ceiling of a memory-bound kernel: GB/s of
    /// device-to-device copies of `src` into `dst` (as long as `src`; bytes read plus bytes
    /// written, over the median time of the runs `budget` allows).
    pub fn copy_gbps(
        &self, src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>, budget: &TimeBudget,
    ) -> Result<f64> {
        let mut ms = self.time_within(budget, || self.copy_device(src, dst))?;
        let bytes = 2.0 * 4.0 * src.len() as f64;
        Ok(bytes / (crate::plan::budget::median(&mut ms) * 1e-3) / 1e9)
    }
}

impl Gpu {
    /// Runs `launch` `iters` times between two CUDA events and returns the total: the
    /// timing criterion's `iter_custom` wants (no per-launch events in between).
    pub fn time_batch(
        &self, iters: u64, mut launch: impl FnMut() -> Result<()>,
    ) -> Result<std::time::Duration> {
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.stream.record_event(flags).call("cuEventRecord")?;
        for _ in 0..iters {
            launch()?;
        }
        let end = self.stream.record_event(flags).call("cuEventRecord")?;
        // Waits for `end`: a fault in a launch surfaces here.
        let ms = start.elapsed_ms(&end).call("cuEventElapsedTime")?;
        Ok(std::time::Duration::from_secs_f64(f64::from(ms) * 1e-3))
    }
}
