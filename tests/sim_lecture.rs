//! The lecture's kernels in the simulator, launched from their catalogue rows exactly as a
//! host launches them: every row runs clean and gives the exact f32 product, and a launch
//! with too little dynamic shared memory is caught at the first out-of-bounds access.

#[path = "common/fma_product.rs"]
mod fma_product;

use fma_product::fma_in_k_order;
use kernels_gpu::catalogue::{Extent, LECTURE};
use kernels_gpu::matmul::tiled_dynamic;
use kernels_gpu::nvptx_device::launch::{Launch, Limits};
use kernels_gpu::nvptx_device::sim::{self, SharedArrayId, SharedPtr, SimError};
use kernels_gpu::nvptx_device::thread::Dim3;

/// Every catalogue row of the lecture's kernels on a shape with partial tiles and several
/// phases: no error, and the exact product in the kernels' accumulation order.
#[test]
fn lecture_kernels_run_clean() {
    let (h, k, w) = (20u32, 40u32, 24u32);
    let a: Vec<f32> = (0..h * k)
        .map(|i| ((i * 37) % 101) as f32 / 101.0)
        .collect();
    let b: Vec<f32> = (0..k * w).map(|i| ((i * 53) % 97) as f32 / 97.0).collect();
    let expected = fma_in_k_order(&a, &b, h as usize, k as usize, w as usize);
    let (pa, pb) = (
        SharedPtr(a.as_ptr() as *mut f32),
        SharedPtr(b.as_ptr() as *mut f32),
    );
    for row in LECTURE {
        let name = format!("{} tw{}", row.name, row.tile_width);
        let launch = row.spec.launch(Extent::Matrix { rows: h, cols: w }, 0);
        let mut out = vec![f32::NAN; (h * w) as usize];
        let po = SharedPtr(out.as_mut_ptr());
        let entry = row.sim;
        // SAFETY: a, b and out are h×k, k×w and h×w; the launch is the row's.
        sim::launch(&launch, &Limits::default(), || unsafe {
            entry(pa.get(), pb.get(), po.get(), h, w, k)
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(out, expected, "{name}");
    }
}

/// The real dynamic kernel launched with one tile's worth of dynamic shared memory instead
/// of two: its `ns` tile is empty, and the first write to it is out of bounds.
#[test]
fn dynamic_kernel_with_too_little_shared_memory() {
    let (h, k, w, tw) = (8u32, 8u32, 8u32, 8u32);
    let (a, b, mut out) = (vec![1.0f32; 64], vec![1.0f32; 64], vec![0.0f32; 64]);
    let (pa, pb, po) = (
        SharedPtr(a.as_ptr() as *mut f32),
        SharedPtr(b.as_ptr() as *mut f32),
        SharedPtr(out.as_mut_ptr()),
    );
    let cfg = Launch {
        grid: Dim3::x(1),
        block: Dim3::xy(tw, tw),
        dynamic_shared_bytes: tw * tw * 4,
        cluster: 1,
    };
    let error = sim::launch(&cfg, &Limits::default(), move || {
        // SAFETY: the buffers are 8×8; the launch deliberately gives half the shared
        // memory the kernel needs, which the simulator reports before any access.
        unsafe {
            tiled_dynamic::entry::matmul_tiled_dynamic(pa.get(), pb.get(), po.get(), h, w, k, tw)
        }
    })
    .unwrap_err();
    let SimError::SharedOutOfBounds {
        array: SharedArrayId::Dynamic,
        len: 0,
        location,
        ..
    } = error
    else {
        panic!("expected an access to the empty ns tile, got {error:?}");
    };
    assert!(location.file.ends_with("tiled.rs"), "{location}");
}
