//! Developing a kernel in the simulator first: a block reverses its slice of an array through
//! shared memory, twice, reusing the shared array — the pattern of the lecture's tiled
//! matmul. The second barrier, before the array is overwritten, is the one people forget:
//! without it the GPU mostly gives right answers and sometimes not. The simulator says which
//! threads race, where, and on which word.
//!
//! `cargo run -p nvptx-device --example find_a_race`

use nvptx_device::launch::{Launch, Limits};
use nvptx_device::shared_array;
use nvptx_device::sim;
use nvptx_device::thread::{Dim3, block_idx_x, sync_threads, thread_idx_x};
use std::sync::atomic::{AtomicU32, Ordering};

const BLOCK: u32 = 64;

/// Reverses each block's `BLOCK` elements twice (so leaves them as they were).
///
/// # Safety
/// `data` holds `gridDim.x * BLOCK` floats.
unsafe fn reverse_blocks(data: *const AtomicU32, with_second_barrier: bool) {
    let s = shared_array!(f32; BLOCK as usize);
    let t = thread_idx_x();
    // SAFETY: one element per thread of the grid.
    let cell = unsafe { &*data.add((block_idx_x() * BLOCK + t) as usize) };
    let mut v = f32::from_bits(cell.load(Ordering::Relaxed));
    for _round in 0..2 {
        s.set(t, v);
        sync_threads(); // everyone has written before anyone reads
        v = s.get(BLOCK - 1 - t);
        if with_second_barrier {
            sync_threads(); // everyone has read before anyone overwrites
        }
    }
    cell.store(v.to_bits(), Ordering::Relaxed);
}

fn run(with_second_barrier: bool) -> Result<Vec<f32>, sim::SimError> {
    let data: Vec<AtomicU32> = (0..2 * BLOCK)
        .map(|i| AtomicU32::new((i as f32).to_bits()))
        .collect();
    let cfg = Launch {
        grid: Dim3::x(2),
        block: Dim3::x(BLOCK),
        dynamic_shared_bytes: 0,
        cluster: 1,
    };
    let ptr = data.as_ptr() as usize;
    // SAFETY: `data` holds 2 * BLOCK elements, one per thread.
    sim::launch(&cfg, &Limits::default(), || unsafe {
        reverse_blocks(ptr as *const AtomicU32, with_second_barrier)
    })?;
    Ok(data
        .iter()
        .map(|x| f32::from_bits(x.load(Ordering::Relaxed)))
        .collect())
}

fn main() {
    match run(false) {
        Ok(_) => println!("without the second barrier: no race found (unexpected)"),
        Err(e) => println!("without the second barrier:\n  {e}"),
    }
    match run(true) {
        Ok(out) => println!("with both barriers: clean; block 0 starts {:?}", &out[..4]),
        Err(e) => println!("with both barriers: {e}"),
    }
}
