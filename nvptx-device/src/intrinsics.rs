//! Arithmetic that must map to one specific instruction.

/// Fused multiply-add `a * b + c` with a single rounding (`fma.rn.f32`).
///
/// rustc never contracts `a * b + c` into an FMA on its own, and the separate multiply and
/// add are both slower and less accurate than nvcc's default code, which does fuse.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
    return fma_through_f64(a, b, c);
    #[cfg(not(all(target_arch = "x86_64", not(target_feature = "fma"))))]
    core::intrinsics::fmaf32(a, b, c)
}

/// `x`, through a `mov` that LLVM cannot see through (nor move: it may have effects), so
/// that what a loop derives from a value invariant in it is computed where it is used, not
/// hoisted out of the loop into registers held across it. A kernel that holds most of its
/// registers in accumulators calls it at the top of the loop body on the invariant it
/// derives many addresses from.
#[inline(always)]
pub fn opaque(x: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let y: u32;
        // SAFETY: a register move.
        unsafe {
            core::arch::asm!("mov.b32 {y}, {x};", x = in(reg32) x, y = out(reg32) y,
                             options(nomem, nostack, preserves_flags));
        }
        y
    }
    #[cfg(not(target_arch = "nvptx64"))]
    x
}

/// [`fma`] on a host built without FMA instructions (the x86-64 baseline), where the
/// library's `fmaf` is a call through a function pointer and the simulated kernels'
/// arithmetic is mostly FMAs: the same result, mostly in three inlined f64 operations.
///
/// The product of two f32 is exact in f64, so `s`, the f64 sum, is `a·b + c` rounded once.
/// Rounding `s` to f32 gives the correctly rounded `a·b + c` unless `s` is exactly halfway
/// between two f32 (every f32 and every such midpoint is an f64, so any other `s` lies
/// strictly between the same two midpoints as `a·b + c`). Those, results in the f32
/// subnormal range (where the midpoints sit elsewhere in the f64's bits), zeros, infinities
/// and NaNs take the library's FMA.
#[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
#[inline(always)]
fn fma_through_f64(a: f32, b: f32, c: f32) -> f32 {
    let s = a as f64 * b as f64 + c as f64;
    let bits = s.to_bits();
    let exponent = (bits >> 52) & 0x7ff;
    // The 29 low bits of the significand are what rounding to f32 drops: a midpoint has
    // exactly the top one of them set.
    let midpoint = bits & 0x1fff_ffff == 0x1000_0000;
    // At least f32::MIN_POSITIVE (2^-126), finite.
    let normal = (1023 - 126..0x7ff).contains(&exponent);
    if !midpoint && normal {
        s as f32
    } else {
        core::intrinsics::fmaf32(a, b, c)
    }
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

/// Reads `ptr[0..2]` with one 8-byte load through the read-only data path,
/// `ld.global.nc.v2.f32`: half the instructions of two scalar loads where rows are 8-byte
/// but not 16-byte aligned. On the host (simulator) a plain read through [`F32x2`].
///
/// # Safety
/// `ptr` is 8-byte aligned, `ptr[0..2]` is readable and not written by any thread during the
/// kernel.
#[inline(always)]
pub unsafe fn load_f32x2_nc(ptr: *const f32) -> [f32; 2] {
    #[cfg(target_arch = "nvptx64")]
    {
        let (x, y): (f32, f32);
        // SAFETY: the caller guarantees alignment, bounds, and that nothing writes the data
        // while the kernel runs.
        unsafe {
            core::arch::asm!(
                "ld.global.nc.v2.f32 {{{x}, {y}}}, [{p}];",
                p = in(reg64) ptr,
                x = out(reg32) x, y = out(reg32) y,
                options(pure, readonly, nostack, preserves_flags)
            );
        }
        [x, y]
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: as above.
    unsafe {
        (*(ptr as *const F32x2)).0
    }
}

/// Reads `ptr[0..2]` as [`load_f32x2_nc`] does (one 8-byte load through the read-only data
/// path): four 16-bit elements in one access, their bits as they are (a load does not
/// change a float's bits).
///
/// # Safety
/// As [`load_f32x2_nc`].
#[inline(always)]
pub unsafe fn load_u32x2_nc(ptr: *const u32) -> [u32; 2] {
    // SAFETY: the caller's contract.
    unsafe { load_f32x2_nc(ptr.cast()) }.map(f32::to_bits)
}

/// Reads `*ptr` with one 4-byte load through the read-only data path, `ld.global.nc.u32`:
/// two 16-bit elements in one access. On the host (simulator) a plain read.
///
/// # Safety
/// `ptr` is 4-byte aligned, readable and not written by any thread during the kernel.
#[inline(always)]
pub unsafe fn load_u32_nc(ptr: *const u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let x: u32;
        // SAFETY: the caller guarantees alignment, bounds, and that nothing writes the data
        // while the kernel runs.
        unsafe {
            core::arch::asm!(
                "ld.global.nc.u32 {x}, [{p}];",
                p = in(reg64) ptr,
                x = out(reg32) x,
                options(pure, readonly, nostack, preserves_flags)
            );
        }
        x
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: as above.
    unsafe {
        *ptr
    }
}

#[cfg(all(test, target_arch = "x86_64", not(target_feature = "fma")))]
mod tests {
    use super::fma;

    /// The library's FMA, the reference.
    fn fused(a: f32, b: f32, c: f32) -> f32 {
        core::intrinsics::fmaf32(a, b, c)
    }

    #[track_caller]
    fn check(a: f32, b: f32, c: f32) {
        let (got, want) = (fma(a, b, c), fused(a, b, c));
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "fma({a:e}, {b:e}, {c:e}) = {got:e}, not {want:e}"
        );
    }

    /// xorshift64*: reproducible bits without a dependency.
    fn rng(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    /// Sums that land exactly halfway between two f32 once rounded to f64, from either
    /// side, where rounding the f64 to f32 (to even) would go the wrong way:
    /// `(1 + 2^-12)^2 = 1 + 2^-11 + 2^-24` has its even neighbour below and
    /// `(1 + 2^-23) · 1.5 = 1.5 + 2^-23 + 2^-24` above, and `c` moves each towards the other
    /// neighbour by less than an f64 ulp.
    #[test]
    fn double_rounding_at_midpoints_is_avoided() {
        let tiny = 2f32.powi(-60);
        for (a, b, c) in [
            (1.0 + 2f32.powi(-12), 1.0 + 2f32.powi(-12), tiny),
            (1.0 + 2f32.powi(-23), 1.5, -tiny),
        ] {
            let wrong = (a as f64 * b as f64 + c as f64) as f32;
            check(a, b, c);
            assert_ne!(fma(a, b, c), wrong, "{a:e} · {b:e} + {c:e}");
            // An exact midpoint rounds to even, as the FMA does.
            check(a, b, 0.0);
        }
    }

    #[test]
    fn agrees_with_the_library_on_random_and_special_operands() {
        let mut next = rng(0x9e37_79b9_7f4a_7c15);
        let specials = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE,
            f32::MIN_POSITIVE / 2.0,
            f32::from_bits(1),
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        for &a in &specials {
            for &b in &specials {
                for &c in &specials {
                    check(a, b, c);
                }
            }
        }
        for _ in 0..1_000_000 {
            let r = next();
            let (a, b, c) = (
                f32::from_bits(r as u32),
                f32::from_bits((r >> 32) as u32),
                f32::from_bits(next() as u32),
            );
            check(a, b, c);
            // Magnitudes that meet: values near 1 with short significands, so that products
            // and sums land on midpoints and in the subnormal range often.
            let near = |bits: u64, scale: i32| {
                f32::from_bits(0x3f80_0000 | (bits as u32 & 0x7fff) << 8) * 2f32.powi(scale)
            };
            let e = (next() % 64) as i32 - 32;
            let x = near(r, e);
            let y = near(r >> 16, -e - 100 * (r >> 62) as i32);
            let z = if r & (1 << 40) != 0 { -1.0 } else { 1.0 }
                * near(r >> 24, -((r >> 41 & 63) as i32));
            check(x, y, z);
            check(x, y, -x * y);
        }
    }
}
