//! Arithmetic that must map to one specific instruction.

/// Fused multiply-add `a * b + c` with a single rounding (`fma.rn.f32`).
///
/// rustc never contracts `a * b + c` into an FMA on its own, and the separate multiply and
/// add are both slower and less accurate than nvcc's default code, which does fuse.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    core::intrinsics::fmaf32(a, b, c)
}

/// The larger of `a` and `b`, NaN if either is NaN (`max.NaN.f32`, IEEE 754-2019
/// `maximum`; `-0.0 < +0.0`). Rust's `f32::max` is `max.f32`, which returns the other
/// operand when one is NaN.
#[inline(always)]
pub fn max_nan(a: f32, b: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let m: f32;
        // SAFETY: register-only arithmetic.
        unsafe {
            core::arch::asm!("max.NaN.f32 {m}, {a}, {b};", m = out(reg32) m, a = in(reg32) a,
                             b = in(reg32) b, options(pure, nomem, nostack, preserves_flags))
        };
        m
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else if a == b {
            // +0.0 and -0.0 compare equal: the positive one is the larger.
            if a.is_sign_positive() { a } else { b }
        } else if a > b {
            a
        } else {
            b
        }
    }
}

/// Defines an `opaque_*` function for one integer type and its PTX register class.
macro_rules! opaque {
    ($(#[$doc:meta])* $name:ident: $t:ty, $reg:ident) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(x: $t) -> $t {
            #[cfg(target_arch = "nvptx64")]
            {
                let mut x = x;
                // SAFETY: a PTX comment, no instruction: the register stays as it is.
                unsafe {
                    core::arch::asm!("// opaque {0}", inout($reg) x,
                                     options(nomem, nostack, preserves_flags))
                };
                x
            }
            #[cfg(not(target_arch = "nvptx64"))]
            x
        }
    };
}

opaque! {
    /// `x` as it is, passed through an `asm!` (a PTX comment, no instruction) that the
    /// optimizer can neither see into nor move, each time the call runs: what is computed
    /// from the result is computed from it, there, inside the loop the call is in. An
    /// address written as one such value plus constants stays one register plus offsets
    /// that the loads and copies fold in; without it, LLVM hoists every loop-invariant part
    /// of every address of an unrolled loop into a register of its own and adds the
    /// changing part to each, an instruction per access and a register per address. On the
    /// host it is `x`.
    opaque_u32: u32, reg32
}

opaque! {
    /// [`opaque_u32`] for a 64-bit value.
    opaque_usize: usize, reg64
}

/// Four floats with the alignment of one 16-byte load.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(16))]
pub struct F32x4(pub [f32; 4]);

/// Two floats with the alignment of one 8-byte access: a `[f32; 2]` is only 4-byte aligned,
/// so LLVM splits an access through it into two 4-byte ones.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(8))]
pub struct F32x2(pub [f32; 2]);

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

/// Reads `ptr[0..4]` with one 16-byte load through the read-only (non-coherent) data path,
/// `ld.global.nc.v4.f32` (`LDG.E.128.CONSTANT` in SASS), as nvcc emits for `const
/// __restrict__` operands. On the host (simulator) it is [`load_f32x4`].
///
/// # Safety
/// As [`load_f32x4`], and `ptr[0..4]` is not written by any thread during the kernel.
#[inline(always)]
pub unsafe fn load_f32x4_nc(ptr: *const f32) -> [f32; 4] {
    #[cfg(target_arch = "nvptx64")]
    {
        let (x, y, z, w): (f32, f32, f32, f32);
        // SAFETY: the caller guarantees alignment, bounds, and that nothing writes the data
        // while the kernel runs.
        unsafe {
            core::arch::asm!(
                "ld.global.nc.v4.f32 {{{x}, {y}, {z}, {w}}}, [{p}];",
                p = in(reg64) ptr,
                x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, w = out(reg32) w,
                options(pure, readonly, nostack, preserves_flags)
            );
        }
        [x, y, z, w]
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: as above.
    unsafe {
        load_f32x4(ptr)
    }
}
