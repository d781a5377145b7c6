//! Arithmetic that must map to one specific instruction.

/// Fused multiply-add `a * b + c` with a single rounding (`fma.rn.f32`).
///
/// rustc never contracts `a * b + c` into an FMA on its own, and the separate multiply and
/// add are both slower and less accurate than nvcc's default code, which does fuse.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    core::intrinsics::fmaf32(a, b, c)
}
