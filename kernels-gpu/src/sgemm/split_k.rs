//! Split-k: for products whose output has too few block tiles to fill the GPU (a small `m`
//! or `n` with a large `k`), `k` is cut into `s` slices and each slice's product is a block
//! tile of its own, `s` times the blocks. Slice `z` (`blockIdx.z`) computes
//! `a[:, z·slice ..+ slice] · b[z·slice ..+ slice, :]` with a rung-10 configuration into
//! its own `m × n` plane of a workspace; [`sgemm_split_k_reduce`] then adds the planes.
//!
//! Deterministic: no atomics. Every output is `Σ_z p_z`, added in increasing `z` from
//! `p_0`, where `p_z` is slice `z`'s FMA chain in `k` order from `0.0` (as every rung
//! computes it). The result is the same bits run to run, but not the bits of the unsplit
//! product. Error bound: each output's sum of `k` products goes through at most
//! `slice + s − 1 ≤ k + s` roundings, so `|out − exact| ≤ (k + s) · 2⁻²⁴ · Σ|a||b|` (the
//! f32 dot-product bound with `k + s` in place of `k`).
//!
//! A configuration of the table gets a split-k entry point with `, split_k(name)` on its
//! line; [`super::SgemmConfig::split_k`] describes it.

use super::epilogue::{Epilogue, Store};
use super::unroll::unroll;
#[cfg(not(target_arch = "nvptx64"))]
use nvptx_device::catalogue::KernelSpec;
use nvptx_device::intrinsics::{F32x4, load_f32x4};
use nvptx_device::thread;

/// Threads per block of [`sgemm_split_k_reduce`], each summing four outputs.
pub const REDUCE_BLOCK: u32 = 256;

/// Slice `blockIdx.z` of a split-k product: `(a', b', plane, ks)`, the slice's columns of
/// `a` and rows of `b`, the workspace's `z`-th `m × n` plane and the slice's depth, for a
/// configuration's kernel on an `a` with row stride `k` (`sgemm_multistage_ld`). (Values,
/// not a callback: LLVM may outline a closure holding a whole kernel into a `.func`.)
///
/// Launch the configuration's grid with `cdiv(k, slice)` blocks in z.
///
/// # Safety
/// `a` and `b` are the product's `m × k` and `k × n` operands, `ws` holds
/// `cdiv(k, slice) · m · n` floats, `slice >= 1`.
#[inline(always)]
pub unsafe fn slice_of(
    a: *const f32, b: *const f32, ws: *mut f32, m: u32, n: u32, k: u32, slice: u32,
) -> (*const f32, *const f32, *mut f32, u32) {
    let z = thread::block_idx_z();
    let k0 = z * slice; // < k: the grid has cdiv(k, slice) slices
    let ks = slice.min(k - k0);
    // SAFETY: k0 < k, so a + k0 is inside a's first row and b + k0·n inside b; plane z of
    // ws is inside it (z < cdiv(k, slice)).
    unsafe {
        (
            a.add(k0 as usize),
            b.add(k0 as usize * n as usize),
            ws.add(z as usize * m as usize * n as usize),
            ks,
        )
    }
}

/// `out[i] = epilogue(Σ_z ws[z·len + i])` for this thread's four outputs, `z` from 0 to
/// `splits − 1` in order (16-byte loads where `len % 4 == 0` and the buffers are aligned;
/// the row and column the epilogue sees are `i / n`, `i % n`).
///
/// Launch 1D with `cdiv(len, 4 · REDUCE_BLOCK)` blocks of [`REDUCE_BLOCK`] threads.
///
/// # Safety
/// `ws` holds `splits · len` floats, `out` `len = m · n` (which fits `u32`), `n >= 1`;
/// the epilogue's contract.
#[inline(always)]
pub unsafe fn split_k_reduce_with<E: Epilogue>(
    ws: *const f32, out: *mut f32, len: u32, n: u32, splits: u32, epilogue: E,
) {
    let i = 4 * thread::index_1d();
    if i >= len {
        return;
    }
    let vectors = len.is_multiple_of(4)
        && super::global::is_aligned16(ws)
        && super::global::is_aligned16(out);
    if vectors {
        // SAFETY: i + 4 <= len (len and i multiples of 4); planes are len apart, so every
        // vector is inside ws and 16-byte aligned.
        let mut sum = unsafe { load_f32x4(ws.add(i as usize)) };
        for z in 1..splits {
            // SAFETY: as above, z < splits.
            let v = unsafe { load_f32x4(ws.add(z as usize * len as usize + i as usize)) };
            sum = [sum[0] + v[0], sum[1] + v[1], sum[2] + v[2], sum[3] + v[3]];
        }
        let old = if epilogue.reads_output() {
            // SAFETY: out[i..i + 4] is inside out, aligned, this thread's.
            unsafe { load_f32x4(out.add(i as usize)) }
        } else {
            [0.0; 4]
        };
        let mut w = [0.0f32; 4];
        unroll!(4, |e| {
            let j = i + e as u32;
            w[e] = epilogue.apply(j / n, j % n, sum[e], old[e]);
        });
        // SAFETY: as above.
        unsafe { *(out.add(i as usize) as *mut F32x4) = F32x4(w) };
    } else {
        for j in i..(i + 4).min(len) {
            // SAFETY: j < len; plane z of ws holds len floats.
            let mut sum = unsafe { *ws.add(j as usize) };
            for z in 1..splits {
                // SAFETY: as above.
                sum += unsafe { *ws.add(z as usize * len as usize + j as usize) };
            }
            // SAFETY: j < len = m · n, so [j / n, j % n] is inside out; this thread's.
            unsafe { super::global::store_out(out, n, j / n, j % n, sum, &epilogue) };
        }
    }
}

/// [`split_k_reduce_with`] with [`Store`]: the split-k product's second launch.
///
/// # Safety
/// As [`split_k_reduce_with`].
#[inline(always)]
pub unsafe fn sgemm_split_k_reduce(ws: *const f32, out: *mut f32, len: u32, n: u32, splits: u32) {
    // SAFETY: the caller's contract.
    unsafe { split_k_reduce_with(ws, out, len, n, splits, Store) }
}

/// The parameters of every split-k slice entry: `(a, b, ws, m, n, k, slice)`.
pub const SLICE_PARAMS: &[nvptx_device::catalogue::Param] = nvptx_device::params!(
    a: *const f32, b: *const f32, ws: *mut f32, m: u32, n: u32, k: u32, slice: u32
);

/// How to launch [`sgemm_split_k_reduce`] for `len` outputs (as items). (Host only, as
/// the catalogue: the entry's parameter list exists wherever its simulator twin does.)
#[cfg(not(target_arch = "nvptx64"))]
pub const REDUCE: KernelSpec = KernelSpec::items(
    "sgemm_split_k_reduce",
    entry::params::sgemm_split_k_reduce,
    REDUCE_BLOCK,
    4 * REDUCE_BLOCK,
);

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    sgemm_split_k_reduce(ws: *const f32, out: *mut f32, len: u32, n: u32, splits: u32)
        => sgemm_split_k_reduce;
}
