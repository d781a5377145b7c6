//! The tensor-core API (`nvptx_device::mma`) in the simulator: the fragment layouts against
//! the PTX ISA's table written out by hand, the warp-level TF32 product against a plain
//! matrix product, a kernel with a wrong layout caught on the CPU, `ldmatrix` delivering an
//! `a` fragment, the TF32 rounding, and misuse reported instead of hanging; and the same for
//! the BF16 product (`m16n8k16`) and its rounding.

use nvptx_device::launch::{Launch, Limits};
use nvptx_device::mma::{
    self, FragA, FragABf16, FragB, FragBBf16, FragC, a_bf16_position, a_position, b_bf16_position,
    b_position, bf16_round_bits, bf16_value, c_position, ldmatrix_x4, ldmatrix_x4_trans,
    mma_m16n8k8_tf32, mma_m16n8k16_bf16, pack_bf16x2, tf32_round_bits, tf32_value, to_tf32,
};
use nvptx_device::shared_array;
use nvptx_device::sim::{self, SharedPtr, SimError};
use nvptx_device::thread::{Dim3, sync_threads, thread_idx_x};

fn launch_warp(threads: u32, kernel: impl Fn() + Sync) -> Result<(), SimError> {
    let cfg = Launch {
        grid: Dim3::x(1),
        block: Dim3::x(threads),
        dynamic_shared_bytes: 0,
        cluster: 1,
    };
    sim::launch(&cfg, &Limits::default(), kernel)
}

/// A few lanes' registers as the PTX ISA's m16n8k8 `.tf32` figures show them, copied out
/// by hand (not computed from the formulas the module uses).
#[test]
fn layout_matches_the_ptx_isa_table() {
    // lane: ([a0..a3], [b0, b1], [c0..c3]) as (row, col)
    #[allow(clippy::type_complexity)]
    let table: [(u32, [(u32, u32); 4], [(u32, u32); 2], [(u32, u32); 4]); 4] = [
        (
            0,
            [(0, 0), (8, 0), (0, 4), (8, 4)],
            [(0, 0), (4, 0)],
            [(0, 0), (0, 1), (8, 0), (8, 1)],
        ),
        (
            5,
            [(1, 1), (9, 1), (1, 5), (9, 5)],
            [(1, 1), (5, 1)],
            [(1, 2), (1, 3), (9, 2), (9, 3)],
        ),
        (
            14,
            [(3, 2), (11, 2), (3, 6), (11, 6)],
            [(2, 3), (6, 3)],
            [(3, 4), (3, 5), (11, 4), (11, 5)],
        ),
        (
            31,
            [(7, 3), (15, 3), (7, 7), (15, 7)],
            [(3, 7), (7, 7)],
            [(7, 6), (7, 7), (15, 6), (15, 7)],
        ),
    ];
    for (lane, a, b, c) in table {
        for reg in 0..4 {
            assert_eq!(a_position(lane, reg), a[reg], "lane {lane} a{reg}");
            assert_eq!(c_position(lane, reg), c[reg], "lane {lane} c{reg}");
        }
        for (reg, &want) in b.iter().enumerate() {
            assert_eq!(b_position(lane, reg), want, "lane {lane} b{reg}");
        }
    }
    // Each fragment covers its matrix exactly once.
    let mut seen_a = [[0; 8]; 16];
    let mut seen_b = [[0; 8]; 8];
    let mut seen_c = [[0; 8]; 16];
    for lane in 0..32 {
        for reg in 0..4 {
            let (r, c) = a_position(lane, reg);
            seen_a[r as usize][c as usize] += 1;
            let (r, c) = c_position(lane, reg);
            seen_c[r as usize][c as usize] += 1;
        }
        for reg in 0..2 {
            let (k, n) = b_position(lane, reg);
            seen_b[k as usize][n as usize] += 1;
        }
    }
    assert!(seen_a.iter().flatten().all(|&x| x == 1));
    assert!(seen_b.iter().flatten().all(|&x| x == 1));
    assert!(seen_c.iter().flatten().all(|&x| x == 1));
    assert_eq!((mma::M, mma::N, mma::K), (16, 8, 8));
}

/// `A` 16 × 8, `B` 8 × 8, `C` 16 × 8 with distinct values exact in TF32 (small integers
/// and halves), none symmetric, so a transposed or shifted fragment changes the product.
fn matrices() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let a = (0..128).map(|i| ((i * 7) % 23) as f32 - 11.0).collect();
    let b = (0..64).map(|i| ((i * 5) % 17) as f32 * 0.5 - 4.0).collect();
    let c = (0..128).map(|i| (i % 9) as f32).collect();
    (a, b, c)
}

fn product(a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
    let mut d = c.to_vec();
    for r in 0..16 {
        for n in 0..8 {
            d[r * 8 + n] += (0..8).map(|k| a[r * 8 + k] * b[k * 8 + n]).sum::<f32>();
        }
    }
    d
}

/// This lane's part of one warp's mma: its fragment of the 16 × 8 row-major `c` goes in,
/// and the `D` fragment `mma` returns is stored to `out` (16 × 8, row-major) by the
/// documented layout.
fn mma_c_to_d(lane: u32, c: &[f32], out: &SharedPtr<f32>, mma: impl FnOnce(FragC) -> FragC) {
    let frag_c: FragC = core::array::from_fn(|reg| {
        let (r, n) = c_position(lane, reg);
        c[(r * 8 + n) as usize]
    });
    for (reg, v) in mma(frag_c).into_iter().enumerate() {
        let (r, n) = c_position(lane, reg);
        // SAFETY: each (r, n) belongs to one lane, and `out` holds 16 × 8 floats.
        unsafe { *out.get().add((r * 8 + n) as usize) = v };
    }
}

/// One warp: every lane loads its fragments with `place_a` (the documented layout, or a
/// deliberately wrong one), issues one mma and stores `D` by the documented layout.
fn run_mma(place_a: fn(u32, usize) -> (u32, u32)) -> Vec<f32> {
    let (a, b, c) = matrices();
    let mut d = vec![f32::NAN; 128];
    let out = SharedPtr(d.as_mut_ptr());
    launch_warp(32, || {
        let lane = thread_idx_x();
        let frag_a: FragA = core::array::from_fn(|reg| {
            let (r, k) = place_a(lane, reg);
            to_tf32(a[(r * 8 + k) as usize])
        });
        let frag_b: FragB = core::array::from_fn(|reg| {
            let (k, n) = b_position(lane, reg);
            to_tf32(b[(k * 8 + n) as usize])
        });
        // SAFETY: all 32 lanes of the warp issue it.
        mma_c_to_d(lane, &c, &out, |c| unsafe {
            mma_m16n8k8_tf32(&frag_a, &frag_b, c)
        });
    })
    .unwrap();
    d
}

/// The warp product with the documented layout; a kernel that swaps two `a` registers (rows
/// 8..16 and columns 4..8 of its fragment) gets a wrong one in the simulator, not only on a
/// GPU.
#[test]
fn mma_computes_the_warp_product_and_a_wrong_layout_fails_on_the_cpu() {
    fn swapped(lane: u32, reg: usize) -> (u32, u32) {
        a_position(lane, [0, 2, 1, 3][reg])
    }
    let (a, b, c) = matrices();
    let want = product(&a, &b, &c);
    assert_eq!(run_mma(a_position), want);
    assert_ne!(run_mma(swapped), want);
}

/// The accumulation adds TF32-rounded inputs: an input's low 13 bits never count.
#[test]
fn mma_reads_only_the_tf32_bits() {
    let mut d = [0.0f32; 128];
    let out = SharedPtr(d.as_mut_ptr());
    launch_warp(32, || {
        let lane = thread_idx_x();
        // A = 1 + 2⁻²⁰ everywhere (not a TF32 value), B = identity.
        let raw = (1.0f32 + f32::EPSILON * 8.0).to_bits();
        let frag_a: FragA = [raw; 4];
        let frag_b: FragB = core::array::from_fn(|reg| {
            (b_position(lane, reg).0 == b_position(lane, reg).1) as u32 * 1.0f32.to_bits()
        });
        // SAFETY: the whole warp issues it.
        let frag_d = unsafe { mma_m16n8k8_tf32(&frag_a, &frag_b, [0.0; 4]) };
        for (reg, v) in frag_d.into_iter().enumerate() {
            let (r, n) = c_position(lane, reg);
            // SAFETY: one writer per element.
            unsafe { *out.get().add((r * 8 + n) as usize) = v };
        }
    })
    .unwrap();
    assert!(d.iter().all(|&x| x == 1.0), "{d:?}");
}

#[test]
fn to_tf32_rounds_to_nearest_ties_away_from_zero() {
    let ulp = 2.0f32.powi(-10); // one TF32 unit at 1.0
    let cases = [
        (1.0, 1.0),
        (1.0 + ulp, 1.0 + ulp),
        (1.0 + ulp / 2.0, 1.0 + ulp),          // tie: away from zero
        (-(1.0 + ulp / 2.0), -(1.0 + ulp)),    // tie, negative
        (1.0 + ulp / 2.0 - f32::EPSILON, 1.0), // just below the tie
        (1.0 + 1.5 * ulp, 1.0 + 2.0 * ulp),    // tie: away, which is also even here
        (2.0 - ulp / 4.0, 2.0),                // carry into the exponent
        (f32::MAX, f32::INFINITY),             // past the largest finite TF32
        (f32::INFINITY, f32::INFINITY),
        (-0.0, -0.0),
        (1e-40, f32::from_bits(tf32_round_bits(1e-40f32.to_bits()))), // subnormal
    ];
    for (x, want) in cases {
        let got = f32::from_bits(to_tf32(x));
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "to_tf32({x:e}) = {got:e}, want {want:e}"
        );
        assert_eq!(to_tf32(x) & 0x1fff, 0, "{x:e}: low bits left");
    }
    assert!(f32::from_bits(to_tf32(f32::NAN)).is_nan());
    assert_eq!(tf32_value(0x3f80_1fff), 1.0);
    // Relative error at most 2⁻¹¹ over a sweep of mantissas.
    for i in 0..100_000u32 {
        let x = f32::from_bits(0x3f80_0000 + i * 83);
        let err = ((f32::from_bits(to_tf32(x)) as f64 - x as f64) / x as f64).abs();
        assert!(err <= 2f64.powi(-11), "{x}: {err:e}");
    }
}

/// `ldmatrix_x4` with the addresses the module documents delivers exactly an `a` fragment
/// of a row-major 16 × 8 tile in shared memory.
#[test]
fn ldmatrix_x4_loads_an_a_fragment() {
    let (a, _, _) = matrices();
    let words: Vec<u32> = a.iter().map(|x| x.to_bits()).collect();
    let got = ldmatrix_tile(&words, ldmatrix_x4);
    for (lane, regs) in got.iter().enumerate() {
        for (reg, &bits) in regs.iter().enumerate() {
            let (r, k) = a_position(lane as u32, reg);
            assert_eq!(
                f32::from_bits(bits),
                a[(r * 8 + k) as usize],
                "lane {lane} a{reg}"
            );
        }
    }
}

/// A 16 × 16 tile of distinct 16-bit elements, `(r, c)` = `256·r + c`, stored row-major two
/// to a word (the lower column in the low half), as 128 words.
fn tile_16x16_words() -> Vec<u32> {
    (0..128u32)
        .map(|w| {
            let (r, c) = (w / 8, 2 * (w % 8));
            (256 * r + c) | ((256 * r + c + 1) << 16)
        })
        .collect()
}

/// Runs one warp that stages `words` (a tile of 16 rows of 8 words) and calls `load` with
/// the tile and the row lane `l` addresses (row `l % 8 + 8·((l / 8) % 2)`, 4 words from
/// `4·(l / 16)`): each lane's four registers.
fn ldmatrix_tile(
    words: &[u32], load: unsafe fn(nvptx_device::shared::SharedSlice<u32>, u32) -> [u32; 4],
) -> Vec<[u32; 4]> {
    assert_eq!(words.len(), 128);
    let mut got = vec![[0u32; 4]; 32];
    let out = SharedPtr(got.as_mut_ptr());
    launch_warp(32, || {
        let tile = shared_array!(u32; 128);
        let lane = thread_idx_x();
        for j in 0..4 {
            tile.set(4 * lane + j, words[(4 * lane + j) as usize]);
        }
        sync_threads();
        let row = lane % 8 + 8 * ((lane / 8) % 2);
        // SAFETY: the whole warp, one tile, aligned rows inside it.
        let regs = unsafe { load(tile, row * 8 + 4 * (lane / 16)) };
        // SAFETY: one writer per lane.
        unsafe { *out.get().add(lane as usize) = regs };
    })
    .unwrap();
    got
}

/// On words of two BF16, `ldmatrix_x4` delivers the BF16 `a` fragment of a row-major 16 × 16
/// tile and `ldmatrix_x4_trans` the two BF16 `b` fragments (columns 0..8 in registers 0, 1,
/// columns 8..16 in 2, 3) of a `k × n` one: every half of every register where
/// `a_bf16_position` and `b_bf16_position` put it.
#[test]
fn ldmatrix_x4_loads_bf16_fragments_plain_and_transposed() {
    let tile = tile_16x16_words();
    let element = |r: u32, c: u32| 256 * r + c;
    let half = |word: u32, h: usize| (word >> (16 * h)) & 0xffff;
    for (lane, regs) in ldmatrix_tile(&tile, ldmatrix_x4).iter().enumerate() {
        for (reg, &word) in regs.iter().enumerate() {
            for h in 0..2 {
                let (r, c) = a_bf16_position(lane as u32, reg, h);
                assert_eq!(half(word, h), element(r, c), "lane {lane} a{reg}.{h}");
            }
        }
    }
    for (lane, regs) in ldmatrix_tile(&tile, ldmatrix_x4_trans).iter().enumerate() {
        for (reg, &word) in regs.iter().enumerate() {
            for h in 0..2 {
                let (k, n) = b_bf16_position(lane as u32, reg % 2, h);
                let n = n + 8 * (reg as u32 / 2);
                assert_eq!(half(word, h), element(k, n), "lane {lane} b{reg}.{h}");
            }
        }
    }
}

/// An `mma` in a block of 16 threads (half a warp) is reported, naming the instruction.
#[test]
fn mma_without_a_whole_warp_is_reported() {
    let err = launch_warp(16, || {
        // SAFETY: deliberately broken: only 16 lanes exist.
        let _ = unsafe { mma_m16n8k8_tf32(&[0; 4], &[0; 2], [0.0; 4]) };
    })
    .unwrap_err();
    match err {
        SimError::WarpShuffle { reason, .. } => {
            assert!(reason.starts_with("mma.sync:"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

/// `ldmatrix` rows that are not 16-byte aligned are reported as out-of-bounds shared
/// accesses, as the GPU would fault.
#[test]
fn misaligned_ldmatrix_is_reported() {
    let err = launch_warp(32, || {
        let tile = shared_array!(f32; 256);
        let lane = thread_idx_x();
        for j in 0..8 {
            tile.set(8 * lane + j, 1.0);
        }
        sync_threads();
        // SAFETY: deliberately broken: row starts at odd words.
        let _ = unsafe { ldmatrix_x4(tile, 8 * lane + 1) };
    })
    .unwrap_err();
    assert!(matches!(err, SimError::SharedOutOfBounds { .. }), "{err:?}");
}

/// A few lanes' BF16 registers as the PTX ISA's m16n8k16 `.bf16` figures show them, copied
/// out by hand: `(row, col)` of the low and the high half of each register.
#[test]
fn bf16_layout_matches_the_ptx_isa_table() {
    #[allow(clippy::type_complexity)]
    let table: [(u32, [[(u32, u32); 2]; 4], [[(u32, u32); 2]; 2]); 3] = [
        (
            0,
            [
                [(0, 0), (0, 1)],
                [(8, 0), (8, 1)],
                [(0, 8), (0, 9)],
                [(8, 8), (8, 9)],
            ],
            [[(0, 0), (1, 0)], [(8, 0), (9, 0)]],
        ),
        (
            5,
            [
                [(1, 2), (1, 3)],
                [(9, 2), (9, 3)],
                [(1, 10), (1, 11)],
                [(9, 10), (9, 11)],
            ],
            [[(2, 1), (3, 1)], [(10, 1), (11, 1)]],
        ),
        (
            31,
            [
                [(7, 6), (7, 7)],
                [(15, 6), (15, 7)],
                [(7, 14), (7, 15)],
                [(15, 14), (15, 15)],
            ],
            [[(6, 7), (7, 7)], [(14, 7), (15, 7)]],
        ),
    ];
    for (lane, a, b) in table {
        for reg in 0..4 {
            for half in 0..2 {
                assert_eq!(
                    a_bf16_position(lane, reg, half),
                    a[reg][half],
                    "lane {lane} a{reg}.{half}"
                );
                if reg < 2 {
                    assert_eq!(
                        b_bf16_position(lane, reg, half),
                        b[reg][half],
                        "lane {lane} b{reg}.{half}"
                    );
                }
            }
        }
    }
    let mut seen_a = [[0; 16]; 16];
    let mut seen_b = [[0; 8]; 16];
    for lane in 0..32 {
        for half in 0..2 {
            for reg in 0..4 {
                let (r, c) = a_bf16_position(lane, reg, half);
                seen_a[r as usize][c as usize] += 1;
            }
            for reg in 0..2 {
                let (k, n) = b_bf16_position(lane, reg, half);
                seen_b[k as usize][n as usize] += 1;
            }
        }
    }
    assert!(seen_a.iter().flatten().all(|&x| x == 1));
    assert!(seen_b.iter().flatten().all(|&x| x == 1));
    assert_eq!(mma::K_BF16, 16);
}

/// `A` 16 × 16, `B` 16 × 8 with distinct values exact in BF16, `C` 16 × 8.
fn bf16_matrices() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let a = (0..256).map(|i| ((i * 7) % 23) as f32 - 11.0).collect();
    let b = (0..128)
        .map(|i| ((i * 5) % 17) as f32 * 0.25 - 2.0)
        .collect();
    let c = (0..128).map(|i| (i % 9) as f32 * 0.5).collect();
    (a, b, c)
}

/// One warp issues one BF16 mma, its `a` fragment placed by `place_a`.
fn run_bf16_mma(place_a: fn(u32, usize, usize) -> (u32, u32)) -> Vec<f32> {
    let (a, b, c) = bf16_matrices();
    let mut d = vec![f32::NAN; 128];
    let out = SharedPtr(d.as_mut_ptr());
    launch_warp(32, || {
        let lane = thread_idx_x();
        let at_a = |reg, half| {
            let (r, k) = place_a(lane, reg, half);
            a[(r * 16 + k) as usize]
        };
        let at_b = |reg, half| {
            let (k, n) = b_bf16_position(lane, reg, half);
            b[(k * 8 + n) as usize]
        };
        let frag_a: FragABf16 = core::array::from_fn(|reg| pack_bf16x2(at_a(reg, 0), at_a(reg, 1)));
        let frag_b: FragBBf16 = core::array::from_fn(|reg| pack_bf16x2(at_b(reg, 0), at_b(reg, 1)));
        // SAFETY: all 32 lanes of the warp issue it.
        mma_c_to_d(lane, &c, &out, |c| unsafe {
            mma_m16n8k16_bf16(&frag_a, &frag_b, c)
        });
    })
    .unwrap();
    d
}

fn bf16_product(a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
    let mut d = c.to_vec();
    for r in 0..16 {
        for n in 0..8 {
            d[r * 8 + n] += (0..16).map(|k| a[r * 16 + k] * b[k * 8 + n]).sum::<f32>();
        }
    }
    d
}

/// The BF16 warp product with the documented layout; swapping the halves of every `a`
/// register (columns `2·quad` and `2·quad + 1`) is caught.
#[test]
fn bf16_mma_computes_the_warp_product_and_a_wrong_layout_fails_on_the_cpu() {
    fn swapped(lane: u32, reg: usize, half: usize) -> (u32, u32) {
        a_bf16_position(lane, reg, 1 - half)
    }
    let want = {
        let (a, b, c) = bf16_matrices();
        bf16_product(&a, &b, &c)
    };
    assert_ne!(run_bf16_mma(swapped), want);
    assert_eq!(run_bf16_mma(a_bf16_position), want);
}

#[test]
fn pack_bf16x2_rounds_to_nearest_ties_to_even_low_half_first() {
    let ulp = 2.0f32.powi(-7); // one BF16 unit at 1.0
    let cases = [
        (1.0 + ulp / 2.0, 1.0),                      // tie: to even (down)
        (1.0 + 1.5 * ulp, 1.0 + 2.0 * ulp),          // tie: to even (up)
        (-(1.0 + 1.5 * ulp), -(1.0 + 2.0 * ulp)),    // negative tie
        (1.0 + ulp / 2.0 + f32::EPSILON, 1.0 + ulp), // just above the tie
        (2.0 - ulp / 4.0, 2.0),                      // carry into the exponent
        (f32::MAX, f32::INFINITY),                   // past the largest finite BF16
        (f32::NEG_INFINITY, f32::NEG_INFINITY),
        (-0.0, -0.0),
        (1.0, 1.0),
        (1.0 + ulp, 1.0 + ulp),
    ];
    for (x, want) in cases {
        let packed = pack_bf16x2(x, -x);
        let (lo, hi) = (bf16_value(packed as u16), bf16_value((packed >> 16) as u16));
        assert_eq!(
            lo.to_bits(),
            want.to_bits(),
            "low half of {x:e}: {lo:e}, want {want:e}"
        );
        assert_eq!(hi.to_bits(), (-want).to_bits(), "high half of {:e}", -x);
    }
    let nan = pack_bf16x2(f32::NAN, 1.0);
    assert!(bf16_value(nan as u16).is_nan());
    assert_eq!(bf16_value((nan >> 16) as u16), 1.0);
    // Relative error at most 2⁻⁸ (half a unit of an 8-bit significand) over a sweep.
    for i in 0..100_000u32 {
        let x = f32::from_bits(0x3f80_0000 + i * 83);
        let err = ((bf16_value(bf16_round_bits(x.to_bits())) as f64 - x as f64) / x as f64).abs();
        assert!(err <= 2f64.powi(-8), "{x}: {err:e}");
    }
}
