//! The example of the crate's page (`nvptx-device/README.md`, "Use it from your project"): a
//! kernel that stages its block's elements and a halo in shared memory, exported with
//! `entry_points!`, and run in the CPU simulator. The page's code block is this file from the
//! first `use` on (a test checks), and runs as a doctest in `cargo test`.
//!
//! `cargo run -p nvptx-device --example smooth3`

use nvptx_device::launch::{Launch, Limits};
use nvptx_device::sim::{self, SharedPtr};
use nvptx_device::thread::{self, Dim3};
use nvptx_device::{entry_points, shared_array};

/// Threads per block: the kernel's shared tile is sized for exactly this many.
const BLOCK: u32 = 256;

/// `out[i] = (x[i - 1] + x[i] + x[i + 1]) / 3` inside the array, `out[i] = x[i]` at its two
/// ends. Each block stages its elements and one on either side in shared memory, so every
/// input is read from global memory about once.
///
/// # Safety
/// `x` and `out` point to `n` floats and do not overlap; blocks have `BLOCK` threads in x.
pub unsafe fn smooth3(x: *const f32, out: *mut f32, n: u32) {
    let tile = shared_array!(f32; BLOCK as usize + 2); // __shared__ float tile[BLOCK + 2];
    let (t, i) = (thread::thread_idx_x(), thread::index_1d());
    let load = |j: u32| {
        if j < n {
            // SAFETY: j < n.
            unsafe { *x.add(j as usize) }
        } else {
            0.0 // outside the array
        }
    };
    tile.set(t + 1, load(i));
    if t == 0 {
        tile.set(0, if i > 0 { load(i - 1) } else { 0.0 });
    }
    if t == BLOCK - 1 {
        tile.set(BLOCK + 1, load(i + 1));
    }
    thread::sync_threads(); // the whole tile is written before anyone reads a neighbour
    if i < n {
        let v = if i == 0 || i == n - 1 {
            tile.get(t + 1)
        } else {
            (tile.get(t) + tile.get(t + 1) + tile.get(t + 2)) / 3.0
        };
        // SAFETY: i < n, one writer per element.
        unsafe { *out.add(i as usize) = v };
    }
}

entry_points! {
    // On the GPU: `.entry smooth3` with `.maxntid 256, 1, 1` and `.minnctapersm 4`.
    smooth3(x: *const f32, out: *mut f32, n: u32) => smooth3, launch_bounds(BLOCK, 4);
}

fn main() -> Result<(), sim::SimError> {
    let n: u32 = 1000;
    let x: Vec<f32> = (0..n).map(|i| ((i * 7) % 11) as f32).collect();
    let mut out = vec![0.0f32; n as usize];
    let cfg = Launch::new(Dim3::x(n.div_ceil(BLOCK)), Dim3::x(BLOCK), 0);
    // Raw pointers are not `Sync`; `SharedPtr` carries them into the closure every thread runs.
    let (xp, op) = (
        SharedPtr(x.as_ptr() as *mut f32),
        SharedPtr(out.as_mut_ptr()),
    );
    // Every GPU thread runs on the CPU; races on shared memory, misplaced barriers and
    // out-of-bounds shared accesses come back as a `SimError` naming the source line.
    // SAFETY: x and out hold n floats each, and the blocks have BLOCK threads.
    sim::launch(&cfg, &Limits::default(), || unsafe {
        entry::smooth3(xp.get(), op.get(), n)
    })?;
    // The same f32 operations in the same order on the CPU give the same bits.
    for i in 1..n as usize - 1 {
        assert_eq!(out[i], (x[i - 1] + x[i] + x[i + 1]) / 3.0, "out[{i}]");
    }
    assert_eq!((out[0], out[n as usize - 1]), (x[0], x[n as usize - 1]));
    println!("smooth3 in the simulator: {n} outputs, all equal to the CPU's");
    Ok(())
}
