//! Arithmetic that must map to one specific instruction.

/// Fused multiply-add `a * b + c` with a single rounding (`fma.rn.f32`).
///
/// rustc never contracts `a * b + c` into an FMA on its own, and the separate multiply and
/// add are both slower and less accurate than nvcc's default code, which does fuse.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    core::intrinsics::fmaf32(a, b, c)
}

/// Four floats with the alignment of one 16-byte load.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(16))]
pub struct F32x4(pub [f32; 4]);

/// Reads `ptr[0..4]` with one 16-byte load (`ld.global.v4`), a quarter of the instructions
/// of four scalar loads and the access width that saturates memory bandwidth.
///
/// # Safety
/// `ptr` is 16-byte aligned and `ptr[0..4]` is readable. (Device allocations are 256-byte
/// aligned; offsets into them must be multiples of 4 floats.)
#[inline(always)]
pub unsafe fn load_f32x4(ptr: *const f32) -> [f32; 4] {
    // SAFETY: the caller guarantees alignment and bounds.
    unsafe { (*(ptr as *const F32x4)).0 }
}
