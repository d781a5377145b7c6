//! Timing GPU work with CUDA events.

use super::Gpu;
use crate::error::{DriverContext, Result};
use cudarc::driver::sys::CUevent_flags;

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
