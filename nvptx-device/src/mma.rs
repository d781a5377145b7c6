//! Warp-level matrix multiply-accumulate on the tensor cores (`mma.sync`, sm_80+): TF32
//! inputs with f32 accumulators in the shape `m16n8k8`, the `cvt.rna.tf32.f32` rounding that
//! makes f32 values TF32, and `ldmatrix` to load an `a` fragment from shared memory in one
//! instruction. CUDA C has these only as inline PTX (or WMMA's opaque fragments); here the
//! fragments are plain register arrays whose layout is documented and tested.
//!
//! One [`mma_m16n8k8_tf32`] is issued by the 32 lanes of a warp together and computes
//! `D = A · B + C` with `A` 16 × 8 (row-major), `B` 8 × 8 (column-major, i.e. `B[k][n]`
//! indexed as the product needs it), `C` and `D` 16 × 8. Each lane holds a fragment of each
//! matrix in registers, where the PTX ISA ("Matrix Fragments for mma.m16n8k8", `.tf32`)
//! puts it. With `group = lane / 4` and `quad = lane % 4` (the ISA's `groupID` and
//! `threadID_in_group`):
//!
//! | fragment | register | row | column |
//! |---|---|---|---|
//! | [`FragA`] (4 × `.b32` TF32) | `a[0]` | `group` | `quad` |
//! | | `a[1]` | `group + 8` | `quad` |
//! | | `a[2]` | `group` | `quad + 4` |
//! | | `a[3]` | `group + 8` | `quad + 4` |
//! | [`FragB`] (2 × `.b32` TF32) | `b[0]` | `quad` (k) | `group` (n) |
//! | | `b[1]` | `quad + 4` (k) | `group` (n) |
//! | [`FragC`] (4 × f32) | `c[0]`, `c[1]` | `group` | `2·quad`, `2·quad + 1` |
//! | | `c[2]`, `c[3]` | `group + 8` | `2·quad`, `2·quad + 1` |
//!
//! [`a_position`], [`b_position`] and [`c_position`] compute these; a kernel uses them to
//! know which element of its tile each register holds, and the simulator uses the same
//! table to gather a warp's fragments.
//!
//! BF16 inputs (`mma.m16n8k16`, [`mma_m16n8k16_bf16`]) pack two 16-bit values per `.b32`
//! register, the lower-indexed one in the low half ([`pack_bf16x2`]); `C` and `D` are as
//! above. With `half` 0 for the low half and 1 for the high:
//!
//! | fragment | register | row | column |
//! |---|---|---|---|
//! | [`FragABf16`] (4 × `.b32`, 8 BF16) | `a[0]` | `group` | `2·quad + half` |
//! | | `a[1]` | `group + 8` | `2·quad + half` |
//! | | `a[2]` | `group` | `2·quad + half + 8` |
//! | | `a[3]` | `group + 8` | `2·quad + half + 8` |
//! | [`FragBBf16`] (2 × `.b32`, 4 BF16) | `b[0]` | `2·quad + half` (k) | `group` (n) |
//! | | `b[1]` | `2·quad + half + 8` (k) | `group` (n) |
//!
//! ([`a_bf16_position`], [`b_bf16_position`].) [`ldmatrix_x4`] loads a BF16 `a` fragment
//! from a row-major tile, and [`ldmatrix_x4_trans`] two `b` fragments from a `k × n` one.
//!
//! In the simulator, `mma_m16n8k8_tf32` is a warp-collective operation like a shuffle: the
//! 32 lanes meet, publish their `a` and `b` registers, and each lane computes its own four
//! accumulators from the whole warp's, so a kernel that puts an element in the wrong
//! register computes a wrong product on the CPU too. A missing lane is reported, not
//! waited for.

use crate::shared::{SharedSlice, SharedWord};

/// `#[mma_16x8("mma.sync...")]` on `unsafe fn name(a: &A, b: &B, c: FragC) -> FragC { body }`:
/// on the GPU the function is `D = A · B + C` by that `mma.sync` instruction of shape
/// m16n8kK with f32 `C` and `D`, four `.b32` registers of `a` and two of `b` (every shape and
/// type here), `D` as four f32; `body` is the simulator's. The whole warp executes it (the
/// function's contract).
macro_rules! mma_16x8 {
    attr($op:literal) ($(#[$m:meta])* $vis:vis unsafe fn $name:ident($a:ident: &$a_ty:ty,
        $b:ident: &$b_ty:ty, $c:ident: FragC $(,)?) -> FragC $body:block) => {
        $(#[$m])*
        $vis unsafe fn $name($a: &$a_ty, $b: &$b_ty, $c: FragC) -> FragC {
            #[cfg(target_arch = "nvptx64")]
            {
                let (a, b, c): (&[u32; 4], &[u32; 2], [f32; 4]) = ($a, $b, $c);
                let (d0, d1, d2, d3): (u32, u32, u32, u32);
                // SAFETY: the caller guarantees the whole warp is here.
                unsafe {
                    core::arch::asm!(
                        concat!($op, " {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};"),
                        d0 = out(reg32) d0, d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3,
                        a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
                        b0 = in(reg32) b[0], b1 = in(reg32) b[1],
                        c0 = in(reg32) c[0].to_bits(), c1 = in(reg32) c[1].to_bits(),
                        c2 = in(reg32) c[2].to_bits(), c3 = in(reg32) c[3].to_bits(),
                        options(pure, nomem, nostack, preserves_flags),
                    );
                }
                [f32::from_bits(d0), f32::from_bits(d1), f32::from_bits(d2), f32::from_bits(d3)]
            }
            #[cfg(not(target_arch = "nvptx64"))]
            $body
        }
    };
}

/// Rows of `A`, `C` and `D` in one `mma.m16n8k8`.
pub const M: u32 = 16;
/// Columns of `B`, `C` and `D`.
pub const N: u32 = 8;
/// Columns of `A`, rows of `B`: the depth of one product.
pub const K: u32 = 8;

/// A lane's `A` fragment: four TF32 values (`.b32` registers, see [`to_tf32`]) at the
/// positions [`a_position`] gives.
pub type FragA = [u32; 4];
/// A lane's `B` fragment: two TF32 values at the positions [`b_position`] gives.
pub type FragB = [u32; 2];
/// A lane's accumulators: four f32 at the positions [`c_position`] gives.
pub type FragC = [f32; 4];

/// `(row, column)` in the 16 × 8 `A` of the value lane `lane` holds in register `reg` of
/// its [`FragA`] (`lane < 32`, `reg < 4`).
#[inline(always)]
pub const fn a_position(lane: u32, reg: usize) -> (u32, u32) {
    let (group, quad) = (lane / 4, lane % 4);
    (group + 8 * (reg % 2) as u32, quad + 4 * (reg / 2) as u32)
}

/// `(k, n)` in the 8 × 8 `B` of the value lane `lane` holds in register `reg` of its
/// [`FragB`] (`lane < 32`, `reg < 2`).
#[inline(always)]
pub const fn b_position(lane: u32, reg: usize) -> (u32, u32) {
    let (group, quad) = (lane / 4, lane % 4);
    (quad + 4 * reg as u32, group)
}

/// `(row, column)` in the 16 × 8 `C` (and `D`) of the accumulator lane `lane` holds in
/// register `reg` of its [`FragC`] (`lane < 32`, `reg < 4`).
#[inline(always)]
pub const fn c_position(lane: u32, reg: usize) -> (u32, u32) {
    let (group, quad) = (lane / 4, lane % 4);
    (group + 8 * (reg / 2) as u32, 2 * quad + (reg % 2) as u32)
}

/// `x` rounded to TF32 (a 10-bit mantissa, f32's exponent), to the nearest with ties away
/// from zero: `cvt.rna.tf32.f32`. The result is the `.b32` register an `mma` takes, an f32
/// bit pattern whose low 13 bits are zero; its relative error is at most 2⁻¹¹. Infinities
/// stay, NaN stays NaN, and values that round past the largest finite TF32 become infinite.
#[pure_instruction("cvt.rna.tf32.f32 {o}, {x};", reg32)]
#[inline(always)]
pub fn to_tf32(x: f32) -> u32 {
    tf32_round_bits(x.to_bits())
}

/// [`to_tf32`] on the bits of an f32, in plain integer arithmetic (the simulator's
/// `cvt.rna.tf32.f32`, and a reference for tests).
pub const fn tf32_round_bits(bits: u32) -> u32 {
    const LOW: u32 = (1 << 13) - 1;
    if bits & 0x7f80_0000 == 0x7f80_0000 {
        // Infinity stays; a NaN keeps a mantissa bit among the ten that remain.
        return if bits & 0x007f_ffff == 0 {
            bits
        } else {
            (bits & !LOW) | 0x0040_0000
        };
    }
    // Adding half a TF32 unit to the magnitude and truncating rounds to nearest with ties
    // away from zero; a carry out of the mantissa moves to the next binade (or infinity).
    (bits + (1 << 12)) & !LOW
}

/// The bits of an f32 rounded to TF32 to the nearest with ties to even, in plain integer
/// arithmetic: what the tensor-memory accelerator writes where its map's element type is
/// TF32 (`CU_TENSOR_MAP_DATA_TYPE_TFLOAT32`; the simulator's copies through
/// [`TensorMap::simulated_tf32`](crate::tma::TensorMap::simulated_tf32)), and a reference
/// for tests. It differs from [`tf32_round_bits`] only on ties (low 13 bits exactly
/// `0x1000`), which it rounds to the even neighbour; infinities stay, NaN stays NaN.
pub const fn tf32_round_even_bits(bits: u32) -> u32 {
    const LOW: u32 = (1 << 13) - 1;
    if bits & 0x7f80_0000 == 0x7f80_0000 {
        return tf32_round_bits(bits);
    }
    // Half a unit less one, plus the kept mantissa's last bit: a tie rounds up only where
    // that bit is odd. A carry out of the mantissa moves to the next binade (or infinity).
    (bits + (1 << 12) - 1 + ((bits >> 13) & 1)) & !LOW
}

/// The f32 value of a TF32 register (its low 13 bits ignored, as the tensor cores read a
/// `.tf32` operand).
#[inline(always)]
pub const fn tf32_value(bits: u32) -> f32 {
    f32::from_bits(bits & !((1 << 13) - 1))
}

/// `D = A · B + C` for the warp's 16 × 8 × 8 TF32 product
/// (`mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`): this lane passes its fragments of
/// `A`, `B` and `C` and gets back its fragment of `D` (layouts in the [module](self) table).
///
/// The products of TF32 values are exact in f32; the tensor cores add them with f32
/// accumulation, whose order and intermediate rounding the PTX ISA does not specify. The
/// simulator adds the exact products and `C` in f64 and rounds once, so results on the
/// GPU may differ from it in the last bits (never by more than f32 accumulation allows).
///
/// # Safety
/// All 32 lanes of the warp execute the same `mma_m16n8k8_tf32` together (`.sync.aligned`:
/// the behaviour is undefined otherwise; the simulator reports it).
#[mma_16x8("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32")]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn mma_m16n8k8_tf32(a: &FragA, b: &FragB, c: FragC) -> FragC {
    sim::mma_m16n8k8_tf32(a, b, c, core::panic::Location::caller())
}

/// Columns of `A`, rows of `B` in one BF16 `mma.m16n8k16` (`M` and `N` as above).
pub const K_BF16: u32 = 16;

/// A lane's BF16 `A` fragment: eight BF16 values, two per `.b32` register (see
/// [`pack_bf16x2`]), at the positions [`a_bf16_position`] gives.
pub type FragABf16 = [u32; 4];
/// A lane's BF16 `B` fragment: four BF16 values at the positions [`b_bf16_position`] gives.
pub type FragBBf16 = [u32; 2];

/// `(row, column)` in the 16 × 16 `A` of the BF16 value lane `lane` holds in half `half` (0
/// low, 1 high) of register `reg` of its [`FragABf16`] (`lane < 32`, `reg < 4`, `half < 2`).
#[inline(always)]
pub const fn a_bf16_position(lane: u32, reg: usize, half: usize) -> (u32, u32) {
    let (group, quad) = (lane / 4, lane % 4);
    (
        group + 8 * (reg % 2) as u32,
        2 * quad + half as u32 + 8 * (reg / 2) as u32,
    )
}

/// `(k, n)` in the 16 × 8 `B` of the BF16 value lane `lane` holds in half `half` of
/// register `reg` of its [`FragBBf16`] (`lane < 32`, `reg < 2`, `half < 2`).
#[inline(always)]
pub const fn b_bf16_position(lane: u32, reg: usize, half: usize) -> (u32, u32) {
    let (group, quad) = (lane / 4, lane % 4);
    (2 * quad + half as u32 + 8 * reg as u32, group)
}

/// `lo` and `hi` rounded to BF16 (f32's exponent, an 8-bit significand) to the nearest, ties
/// to even, and packed into one `.b32` register, `lo` in the low half: `cvt.rn.bf16x2.f32`.
/// Infinities stay, NaN stays NaN, values that round past the largest finite BF16 become
/// infinite; the relative error is at most 2⁻⁸.
#[inline(always)]
pub fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let out: u32;
        // SAFETY: a register-to-register conversion (the first source goes to the high half).
        unsafe {
            core::arch::asm!("cvt.rn.bf16x2.f32 {o}, {h}, {l};", o = out(reg32) out,
                             h = in(reg32) hi.to_bits(), l = in(reg32) lo.to_bits(),
                             options(pure, nomem, nostack, preserves_flags));
        }
        out
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        bf16_round_bits(lo.to_bits()) as u32 | (bf16_round_bits(hi.to_bits()) as u32) << 16
    }
}

/// The BF16 bits of an f32 given by its bits, rounded as [`pack_bf16x2`] rounds, in plain
/// integer arithmetic (the simulator's conversion, and a reference for tests).
pub const fn bf16_round_bits(bits: u32) -> u16 {
    if bits & 0x7f80_0000 == 0x7f80_0000 && bits & 0x007f_ffff != 0 {
        // A NaN keeps its sign and stays a (quiet) NaN.
        return ((bits >> 16) | 0x0040) as u16;
    }
    // Adding just under half a unit, plus the kept significand's lowest bit, and
    // truncating rounds to nearest with ties to even; a carry moves to the next binade.
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

/// `x` rounded to BF16 to the nearest, ties to even (`cvt.rn.bf16.f32`), as bits; NaN
/// stays NaN, values past the largest finite BF16 become infinite.
#[pure_instruction("cvt.rn.bf16.f32 {o}, {x};", reg16)]
#[inline(always)]
pub fn to_bf16(x: f32) -> u16 {
    bf16_round_bits(x.to_bits())
}

/// `x` rounded to IEEE binary16 to the nearest, ties to even (`cvt.rn.f16.f32`), as bits;
/// NaN stays NaN, values past 65504 become infinite, tiny ones subnormal or zero.
#[pure_instruction("cvt.rn.f16.f32 {o}, {x};", reg16)]
#[inline(always)]
pub fn to_f16(x: f32) -> u16 {
    f16_round_bits(x.to_bits())
}

/// The binary16 bits of an f32 given by its bits, rounded as [`to_f16`] rounds, in plain
/// integer arithmetic (the simulator's conversion, and a reference for tests).
pub const fn f16_round_bits(bits: u32) -> u16 {
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let mant = bits & 0x007f_ffff;
    if exp == 0xff {
        // Infinity stays; a NaN stays a (quiet) NaN with its sign.
        let nan = if mant != 0 {
            0x0200 | (mant >> 13) as u16
        } else {
            0
        };
        return sign | 0x7c00 | nan;
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    // The bits kept, and the remainder that decides the rounding (ties to even).
    let (kept, rem, half) = if e <= 0 {
        if e < -11 {
            return sign;
        }
        let full = mant | 0x0080_0000;
        let shift = (14 - e) as u32;
        (
            full >> shift,
            full & ((1 << shift) - 1),
            1u32 << (shift - 1),
        )
    } else {
        (((e as u32) << 10) | (mant >> 13), mant & 0x1fff, 0x1000)
    };
    let up = rem > half || (rem == half && kept & 1 == 1);
    // A carry out of the significand moves to the next binade, or to infinity.
    sign | (kept + up as u32) as u16
}

/// The f32 value of BF16 bits (exact: a BF16 is an f32 with its low 16 bits zero).
#[inline(always)]
pub const fn bf16_value(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

/// `D = A · B + C` for the warp's 16 × 8 × 16 BF16 product with f32 accumulators
/// (`mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`): this lane passes its fragments
/// of `A`, `B` and `C` and gets back its fragment of `D` (layouts in the [module](self)
/// tables). Products of BF16 values are exact in f32; the order and rounding of the f32
/// accumulation are unspecified, and the simulator adds in f64 and rounds once, as for
/// [`mma_m16n8k8_tf32`].
///
/// # Safety
/// All 32 lanes of the warp execute the same `mma_m16n8k16_bf16` together (the simulator
/// reports a missing lane).
#[mma_16x8("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32")]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn mma_m16n8k16_bf16(a: &FragABf16, b: &FragBBf16, c: FragC) -> FragC {
    sim::mma_m16n8k16_bf16(a, b, c, core::panic::Location::caller())
}

/// `ldmatrix.sync.aligned.m8n8{$shape}.shared.b16` of four registers from word `$i` of `$tile`
/// (in the simulator, the warp-collective gather, transposing 16-bit elements if `$trans`),
/// expanded only in the `unsafe fn`s below, whose contracts make it sound.
macro_rules! ldmatrix {
    ($shape:literal, $tile:expr, $i:expr, $trans:expr) => {{
        #[cfg(target_arch = "nvptx64")]
        {
            let (r0, r1, r2, r3): (u32, u32, u32, u32);
            // SAFETY: the caller guarantees bounds, alignment and that the warp is converged.
            unsafe { core::arch::asm!(
                concat!("ldmatrix.sync.aligned.m8n8", $shape, ".shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [{a}];"),
                r0 = out(reg32) r0, r1 = out(reg32) r1, r2 = out(reg32) r2, r3 = out(reg32) r3,
                a = in(reg32) $tile.shared_addr() + $i * 4,
                options(pure, readonly, nostack, preserves_flags),
            ) };
            [r0, r1, r2, r3]
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            sim::ldmatrix_x4($tile, $i, $trans, core::panic::Location::caller())
        }
    }};
}

/// Loads four 8 × 8 matrices of 32-bit words from shared memory, one per quarter of the warp's
/// addresses (`ldmatrix.sync.aligned.m8n8.x4.shared.b16`, whose 8 × 8 matrices of 16-bit
/// elements are 8 rows of 16 bytes, i.e. of four 32-bit words).
///
/// Lane `l` gives the start `i` (an element index, a multiple of 4) of row `l % 8` of
/// matrix `l / 8`; each row is `tile[i..i + 4]`. Lane `l` gets, in register `q`, word
/// `l % 4` of row `l / 4` of matrix `q`. That is exactly the [`FragA`] layout when matrix
/// `q` is rows `8·(q % 2)..+8`, columns `4·(q / 2)..+4` of a 16 × 8 tile stored with its
/// rows contiguous (the `k` direction): one `ldmatrix` loads a whole `a` fragment, where
/// scalar loads would take four. (It does not apply to a `b` tile stored `k × n`: its
/// fragment runs down columns, and `ldmatrix`'s transpose works on 16-bit elements.)
///
/// The words arrive as they are in shared memory; round f32 words with [`to_tf32`]. Words
/// that hold two BF16 values (the lower-indexed in the low half) make the same call load a
/// [`FragABf16`] of a 16 × 16 tile: matrix `q` is rows `8·(q % 2)..+8`, columns
/// `8·(q / 2)..+8` of it, as [`a_bf16_position`] lays them out.
///
/// # Safety
/// All 32 lanes of the warp execute the same `ldmatrix_x4` together, on the same `tile`,
/// each with `i % 4 == 0` and `i + 4 <= tile.len()`; nothing writes those words between the
/// barriers around it. (The simulator checks all of this.)
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn ldmatrix_x4<T: SharedWord>(tile: SharedSlice<T>, i: u32) -> [u32; 4] {
    ldmatrix!(".x4", tile, i, false)
}

/// [`ldmatrix_x4`] with each 8 × 8 matrix of 16-bit elements transposed
/// (`ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16`): lane `l` gets, in register `q`,
/// elements `(2·(l % 4), l / 4)` (low half) and `(2·(l % 4) + 1, l / 4)` (high half) of
/// matrix `q`, where `(row, column)` is the row's address and the 16-bit element in it.
///
/// That is the [`FragBBf16`] layout of a `b` tile stored `k × n` with its rows (`n`)
/// contiguous, two BF16 to a word: with lane `l` addressing row `k0 + l % 8 + 8·((l / 8) % 2)`
/// at column `n0 + 8·(l / 16)`, registers 0 and 1 are the fragment of columns `n0..+8` and
/// registers 2 and 3 that of columns `n0 + 8..+8`, each 16 deep.
///
/// # Safety
/// As [`ldmatrix_x4`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn ldmatrix_x4_trans<T: SharedWord>(tile: SharedSlice<T>, i: u32) -> [u32; 4] {
    ldmatrix!(".x4.trans", tile, i, true)
}

/// The warp-collective operations in the simulator, on [`crate::sim::warp`]'s exchange.
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod sim {
    use super::{
        FragA, FragABf16, FragB, FragBBf16, FragC, K, K_BF16, a_bf16_position, a_position,
        b_bf16_position, b_position, bf16_value, c_position, tf32_value,
    };
    use crate::shared::{SharedSlice, SharedWord};
    use crate::sim::warp::{Published, exchange};
    use crate::warp::FULL_MASK;
    use core::panic::Location;

    /// The lane and register of `A[row][col]` ([`a_position`] inverted).
    const fn a_owner(row: u32, col: u32) -> (usize, usize) {
        (
            (4 * (row % 8) + col % 4) as usize,
            (row / 8) as usize + 2 * (col / 4) as usize,
        )
    }

    /// The lane and register of `B[k][n]` ([`b_position`] inverted).
    const fn b_owner(k: u32, n: u32) -> (usize, usize) {
        ((4 * n + k % 4) as usize, (k / 4) as usize)
    }

    // The inverses agree with the table, for every lane and register.
    const _: () = {
        let mut lane = 0;
        while lane < 32 {
            let mut reg = 0;
            while reg < 4 {
                let (r, c) = a_position(lane, reg);
                let (l, g) = a_owner(r, c);
                assert!(l == lane as usize && g == reg);
                if reg < 2 {
                    let (k, n) = b_position(lane, reg);
                    let (l, g) = b_owner(k, n);
                    assert!(l == lane as usize && g == reg);
                }
                reg += 1;
            }
            lane += 1;
        }
    };

    /// The lane, register and half of BF16 `A[row][col]` ([`a_bf16_position`] inverted).
    const fn a_bf16_owner(row: u32, col: u32) -> (usize, usize, usize) {
        (
            (4 * (row % 8) + (col % 8) / 2) as usize,
            (row / 8) as usize + 2 * (col / 8) as usize,
            (col % 2) as usize,
        )
    }

    /// The lane, register and half of BF16 `B[k][n]` ([`b_bf16_position`] inverted).
    const fn b_bf16_owner(k: u32, n: u32) -> (usize, usize, usize) {
        (
            (4 * n + (k % 8) / 2) as usize,
            (k / 8) as usize,
            (k % 2) as usize,
        )
    }

    const _: () = {
        let mut lane = 0;
        while lane < 32 {
            let mut reg = 0;
            while reg < 4 {
                let mut half = 0;
                while half < 2 {
                    let (r, c) = a_bf16_position(lane, reg, half);
                    let (l, g, h) = a_bf16_owner(r, c);
                    assert!(l == lane as usize && g == reg && h == half);
                    if reg < 2 {
                        let (k, n) = b_bf16_position(lane, reg, half);
                        let (l, g, h) = b_bf16_owner(k, n);
                        assert!(l == lane as usize && g == reg && h == half);
                    }
                    half += 1;
                }
                reg += 1;
            }
            lane += 1;
        }
    };

    pub(super) fn mma_m16n8k16_bf16(
        a: &FragABf16, b: &FragBBf16, c: FragC, location: &'static Location<'static>,
    ) -> FragC {
        let words = [a[0], a[1], a[2], a[3], b[0], b[1]];
        let half = |word: u32, h: usize| bf16_value((word >> (16 * h)) as u16) as f64;
        let a = |all: &Published, row, i| {
            let (l, r, h) = a_bf16_owner(row, i);
            half(all[l][r], h)
        };
        let b = |all: &Published, i, col| {
            let (l, r, h) = b_bf16_owner(i, col);
            half(all[l][4 + r], h)
        };
        product(words, c, K_BF16, a, b, location)
    }

    /// Lane's accumulators of `D = A · B + C` for a warp whose lanes published their `a` and
    /// `b` registers (`words[0..4]` and `words[4..6]`): `a(all, row, i)` and `b(all, i, col)`
    /// read element `i` of the depth from the published words. Exact products and `C`
    /// added in f64, rounded once.
    fn product(
        words: [u32; 6], c: FragC, depth: u32, a: impl Fn(&Published, u32, u32) -> f64,
        b: impl Fn(&Published, u32, u32) -> f64, location: &'static Location<'static>,
    ) -> FragC {
        let (lane, all) = exchange(FULL_MASK, &words, "mma.sync: ", location);
        core::array::from_fn(|reg| {
            let (row, col) = c_position(lane, reg);
            let mut sum = c[reg] as f64;
            for i in 0..depth {
                sum += a(&all, row, i) * b(&all, i, col);
            }
            sum as f32
        })
    }

    /// The warp's 16 × 8 TF32 `A` from every lane's [`FragA`]: `A[row][col]`'s bits, for
    /// the lane that publishes `a` (a warp-collective exchange, as `mma.sync`'s).
    pub(crate) fn gather_a(
        a: &FragA, op: &'static str, location: &'static Location<'static>,
    ) -> [[u32; 8]; 16] {
        let (_, all) = exchange(FULL_MASK, a, op, location);
        core::array::from_fn(|row| {
            core::array::from_fn(|col| {
                let (l, r) = a_owner(row as u32, col as u32);
                all[l][r]
            })
        })
    }

    pub(super) fn mma_m16n8k8_tf32(
        a: &FragA, b: &FragB, c: FragC, location: &'static Location<'static>,
    ) -> FragC {
        let words = [a[0], a[1], a[2], a[3], b[0], b[1]];
        let a = |all: &Published, row, i| {
            let (l, r) = a_owner(row, i);
            tf32_value(all[l][r]) as f64
        };
        let b = |all: &Published, i, col| {
            let (l, r) = b_owner(i, col);
            tf32_value(all[l][4 + r]) as f64
        };
        product(words, c, K, a, b, location)
    }

    /// Both `ldmatrix` forms: lane `lane` gathers its word of each of the four matrices
    /// from the rows the warp's lanes address, transposing 16-bit elements if `trans`.
    #[track_caller]
    pub(super) fn ldmatrix_x4<T: SharedWord>(
        tile: SharedSlice<T>, i: u32, trans: bool, location: &'static Location<'static>,
    ) -> [u32; 4] {
        let (region, offset) = tile.sim_identity();
        let words = [
            i,
            offset,
            region as u32,
            (region as u64 >> 32) as u32,
            tile.len(),
        ];
        let (lane, all) = exchange(FULL_MASK, &words, "ldmatrix: ", location);
        if let Some(other) = (0..32).find(|&l| all[l][1..5] != words[1..5]) {
            crate::sim::warp::fail_here(
                std::format!("ldmatrix: lanes {lane} and {other} address different shared arrays"),
                location,
            );
        }
        let row = |q: usize, r: usize| {
            // SAFETY: the simulator checks the bounds and alignment of the row.
            unsafe { tile.get4_unchecked(all[8 * q + r][0]) }.map(T::to_bits)
        };
        let lane = lane as usize;
        core::array::from_fn(|q| {
            if trans {
                // Elements (2·(lane % 4) + h, lane / 4): 16-bit column lane / 4 of two rows.
                let column = lane / 4;
                let half = |r: usize| (row(q, r)[column / 2] >> (16 * (column % 2))) & 0xffff;
                half(2 * (lane % 4)) | (half(2 * (lane % 4) + 1) << 16)
            } else {
                row(q, lane / 4)[lane % 4]
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{f16_round_bits, tf32_round_bits, tf32_round_even_bits};

    #[test]
    fn tf32_rounding_to_even_differs_from_away_only_on_ties() {
        let (even, away) = (tf32_round_even_bits, tf32_round_bits);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even keeps 1, away goes up.
        let tie = (1.0f32 + 1.0 / 2048.0).to_bits();
        assert_eq!(even(tie), 1.0f32.to_bits());
        assert_eq!(away(tie), (1.0f32 + 1.0 / 1024.0).to_bits());
        // 1 + 3 · 2^-11 is halfway with an odd last kept bit: both go up.
        let odd_tie = (1.0f32 + 3.0 / 2048.0).to_bits();
        assert_eq!(even(odd_tie), (1.0f32 + 4.0 / 2048.0).to_bits());
        assert_eq!(away(odd_tie), even(odd_tie));
        // Negative ties mirror the positive ones.
        assert_eq!(even(tie | 0x8000_0000), (-1.0f32).to_bits());
        // Off a tie the two agree, below and above.
        for low in [0u32, 1, 0x0fff, 0x1001, 0x1fff] {
            let v = 0x3f80_0000 | 0x2000 | low;
            assert_eq!(even(v), away(v), "{v:#x}");
        }
        // The largest finite f32 rounds past the largest TF32: infinity, as away does.
        assert_eq!(even(f32::MAX.to_bits()), f32::INFINITY.to_bits());
        assert_eq!(even(f32::INFINITY.to_bits()), f32::INFINITY.to_bits());
        assert!(f32::from_bits(even(f32::NAN.to_bits())).is_nan());
        // A tie carrying out of the mantissa moves to the next binade.
        let carry = 0x3fff_f000u32;
        assert_eq!(even(carry), 2.0f32.to_bits());
    }

    #[test]
    fn f16_rounding_is_to_nearest_even_at_every_range() {
        let f = |x: f32| f16_round_bits(x.to_bits());
        assert_eq!(f(1.0), 0x3c00);
        assert_eq!(f(-2.0), 0xc000);
        assert_eq!(f(65504.0), 0x7bff);
        // Halfway between 65504 and the next (65536, out of range): to even, infinity.
        assert_eq!(f(65520.0), 0x7c00);
        assert_eq!(f(1e9), 0x7c00);
        assert_eq!(f(f32::NEG_INFINITY), 0xfc00);
        assert_eq!(f(f32::NAN) & 0x7e00, 0x7e00);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to the even one, 1.
        assert_eq!(f(1.0 + 1.0 / 2048.0), 0x3c00);
        assert_eq!(f(1.0 + 3.0 / 2048.0), 0x3c02);
        // Subnormals: 2^-24 is the smallest; half of it ties to even (zero).
        assert_eq!(f(2f32.powi(-24)), 0x0001);
        assert_eq!(f(2f32.powi(-25)), 0x0000);
        assert_eq!(f(1.5 * 2f32.powi(-24)), 0x0002);
        assert_eq!(f(2f32.powi(-14)), 0x0400);
        assert_eq!(f(-1e-30), 0x8000);
        // Against the half crate's conversion would be a dependency; the same cases by hand.
        assert_eq!(f(0.1), 0x2e66);
    }
}
