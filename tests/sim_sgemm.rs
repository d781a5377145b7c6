//! The SGEMM ladder on the CPU simulator, against the f64 reference and bit for bit against
//! FMAs in `k` order (what the lecture's kernels compute).
//!
//! Every rung × configuration runs the odd shapes (one element, nothing a multiple
//! of anything, `k = 1`, several blocks with partial tiles everywhere), then shapes that
//! reach the 16-byte fast path (interior blocks, `k` and `n` multiples of 4) next to
//! checked edge blocks, operands that are not 16-byte aligned, and tall, skinny products.
//! The simulator also checks every launch for shared-memory races, reads of shared words
//! nothing wrote, out-of-bounds shared indices and misplaced barriers, and every 16-byte
//! shared access for alignment.

use kernels_gpu_host::backend::Backend;
use kernels_gpu_host::launch::{Limit, LimitError, Limits};
#[path = "common/fma_product.rs"]
mod fma_product;
#[path = "common/shapes.rs"]
mod shapes;

use fma_product::{assert_same_bits, fma_in_k_order};
use kernels_gpu::nvptx_device::mma::{bf16_round_bits, bf16_value, tf32_round_bits};
use kernels_gpu_host::check::reference::{compare, matmul_f64};
use kernels_gpu_host::sim::{Aligned, Simulator, aligned_copy};
use kernels_gpu_host::{Error, MatmulKernel, MatmulShape, Precision, SgemmKernel, TileWidth};
use libtest_mimic::{Arguments, Trial};

/// The shapes `(m, k, n)`: partial tiles in every dimension, `k = 1`, and several
/// blocks and k-tiles (130×67×129: 2 × 2 blocks of 128 × 128 with 4-row, 1-column edges).
/// [`shapes::ODD`] and one with a partial block in each dimension.
const ODD: [(usize, usize, usize); 5] = {
    let [a, b, c, d] = shapes::ODD;
    [a, b, c, d, (130, 67, 129)]
};

/// Shapes where `k` and `n` are multiples of 4: interior 128 × 128 blocks take the vector
/// path, edge blocks (4 rows or 4 columns) and the last, partial k-tile the checked one;
/// tall and skinny 520×8×4 loads `a` 16 bytes at a time and its 4-column `b` checked.
const VECTOR: [(usize, usize, usize); 3] = [(132, 36, 136), (64, 4, 128), (520, 8, 4)];

/// Tall and skinny, and short and wide: one block column or row, `k` tiny.
const SKINNY: [(usize, usize, usize); 2] = [(300, 3, 2), (2, 5, 260)];

/// 10 × 3 blocks of 128 × 128 (10 × 2 of 128 × 256), partial at the bottom and right.
const SWIZZLE: (usize, usize, usize) = (1155, 8, 300);

/// For the multistage rung: `k` a multiple of its depth 16 and 6 tiles deep (twice round the
/// 3-stage ring), an interior 128 × 128 block that takes the `cp.async` path and edge
/// blocks that fall back to rung 7.
const MULTISTAGE: (usize, usize, usize) = (136, 96, 132);

/// The multistage rung's 8-byte paths: `k` and `n` each 2 past a multiple of 4, so the rows
/// of both operands are 8- but not 16-byte aligned (`a` loaded in pairs, `b` copied in
/// pairs), interior blocks among edge ones, six whole k-tiles and a partial one.
const MULTISTAGE_PAIRS: (usize, usize, usize) = (136, 98, 134);

/// The multistage rung's checked loop on 19 k-tiles with rows of `a` and `b` not 16-byte
/// aligned: `a` copied by `cp.async` on the small tiles (`multistage::copies_a`), through
/// registers one word at a time on the others.
const MULTISTAGE_DEEP: (usize, usize, usize) = (70, 301, 66);

/// Signed random operands for `shape`, from a seed derived from it.
fn operands(m: usize, k: usize, n: usize) -> (Vec<f32>, Vec<f32>) {
    shapes::signed_operands(0x5e_6e33, m, k, n)
}

/// `x` with every element rounded as the tensor cores' inputs of `precision` are: to TF32 as
/// `cvt.rna.tf32.f32` does, to BF16 as `cvt.rn.bf16x2.f32` does.
fn rounded(x: &[f32], precision: Precision) -> Vec<f32> {
    x.iter()
        .map(|&v| match precision {
            Precision::Tf32 => f32::from_bits(tf32_round_bits(v.to_bits())),
            Precision::Bf16 => bf16_value(bf16_round_bits(v.to_bits())),
            Precision::Fp32 => v,
        })
        .collect()
}

/// Runs `kernel` on `a`, `b` and checks it: within the f32 bound of the f64 product, and
/// bit-identical to [`fma_in_k_order`]. A TF32 or BF16 kernel instead: within its
/// precision's bound of the f64 product, and within the f32 accumulation bound of the f64
/// product of the inputs rounded to that precision (so it rounds as the conversion does, not
/// by truncation, not to the other precision, and not at all).
fn check_operands(kernel: SgemmKernel, a: &[f32], b: &[f32], (m, k, n): (usize, usize, usize)) {
    let shape = MatmulShape::new(m, k, n).unwrap();
    let out = Simulator::default()
        .matmul(MatmulKernel::Sgemm(kernel), TileWidth::Tw16, a, b, shape)
        .unwrap_or_else(|e| panic!("{kernel} {shape}: {e}"));
    assert_eq!(out.len(), m * n, "{kernel} {shape}: output length");
    let precision = kernel.precision();
    if precision != Precision::Fp32 {
        let accuracy = compare(&out, &matmul_f64(a, b, m, k, n));
        assert!(
            accuracy.within_bound(k, precision),
            "{kernel} {shape}: {accuracy:?} is outside the {precision:?} bound for k={k}"
        );
        let (ra, rb) = (rounded(a, precision), rounded(b, precision));
        let exact = compare(&out, &matmul_f64(&ra, &rb, m, k, n));
        assert!(
            exact.within_f32_bound(k),
            "{kernel} {shape}: {exact:?} is not the product of the {precision:?}-rounded inputs"
        );
        return;
    }
    let accuracy = compare(&out, &matmul_f64(a, b, m, k, n));
    assert!(
        accuracy.within_f32_bound(k),
        "{kernel} {shape}: {accuracy:?} is outside the f32 bound for k={k}"
    );
    let exact = fma_in_k_order(a, b, m, k, n);
    assert_same_bits(
        &out,
        &exact,
        n,
        &format!("{kernel} {shape}, against the k-order FMA sum"),
    );
}

/// `x` copied `skip` floats into 16-byte-aligned storage: with `skip = 0` its start is
/// aligned (the fast path may run), with `skip = 1` it is not (it must not), with `skip = 2`
/// it is 8-byte aligned only.
struct Placed {
    storage: Vec<Aligned>,
    skip: usize,
    len: usize,
}

impl Placed {
    fn new(x: &[f32], skip: usize) -> Self {
        let padded: Vec<f32> = std::iter::repeat_n(0.0, skip)
            .chain(x.iter().copied())
            .collect();
        Self {
            storage: aligned_copy(&padded),
            skip,
            len: x.len(),
        }
    }

    fn get(&self) -> &[f32] {
        // SAFETY: `Aligned` is `repr(C)` around `[f32; 4]`, so the storage is
        // `4 * storage.len()` initialised floats, of which these are the copy of `x`.
        let all = unsafe {
            std::slice::from_raw_parts(self.storage.as_ptr().cast::<f32>(), 4 * self.storage.len())
        };
        &all[self.skip..self.skip + self.len]
    }
}

fn check(kernel: SgemmKernel, (m, k, n): (usize, usize, usize)) {
    let (a, b) = operands(m, k, n);
    let (a, b) = (Placed::new(&a, 0), Placed::new(&b, 0));
    check_operands(kernel, a.get(), b.get(), (m, k, n));
}

/// `a`, then `b`, `skip` floats past a 16-byte boundary: with `skip = 1` interior blocks must
/// take the checked path for the misaligned operand, with `skip = 2` (8-byte aligned) the
/// multistage rung's pair paths on a shape whose rows would otherwise be 16-byte aligned;
/// either way every bit right.
fn check_placed(kernel: SgemmKernel, (m, k, n): (usize, usize, usize), skip: usize) {
    let (a, b) = operands(m, k, n);
    let (a0, b0, a1, b1) = (
        Placed::new(&a, 0),
        Placed::new(&b, 0),
        Placed::new(&a, skip),
        Placed::new(&b, skip),
    );
    check_operands(kernel, a1.get(), b0.get(), (m, k, n));
    check_operands(kernel, a0.get(), b1.get(), (m, k, n));
}

fn check_all(kernel: SgemmKernel) {
    for shape in ODD.into_iter().chain(SKINNY) {
        check(kernel, shape);
    }
    // Rungs 1-4 have no 16-byte path; their 1024- and 512-thread blocks are also the
    // simulator's slowest (the most simulated threads per barrier).
    let vectorized = kernel.config().rung >= 5;
    if vectorized {
        for shape in VECTOR {
            check(kernel, shape);
        }
        check_placed(kernel, VECTOR[0], 1);
    }
    // The swizzled kernels group blocks 8 block rows at a time: 10 block rows make a full
    // group and a partial one (with 2 or 3 block columns, the last one partial).
    if kernel.entry().contains("_swizzled_") {
        check(kernel, SWIZZLE);
    }
    if kernel.entry().contains("_multistage_") {
        check(kernel, MULTISTAGE);
        check_placed(kernel, MULTISTAGE, 1);
        check(kernel, MULTISTAGE_PAIRS);
        check_placed(kernel, MULTISTAGE, 2);
        check(kernel, MULTISTAGE_DEEP);
    }
    if kernel.precision() != Precision::Fp32 {
        for shape in TENSOR_CORE {
            check(kernel, shape);
        }
        check_placed(kernel, TENSOR_CORE[0], 1);
    }
}

/// For the tensor-core rung (TF32 and BF16): an interior 128 × 128 block on the `cp.async`
/// path six k-tiles deep (twice round its 3-stage ring) beside edge blocks on the checked
/// path; then `k` = 36, a partial last k-tile that `cp.async` zero-fills; then a single row,
/// every block an edge.
const TENSOR_CORE: [(usize, usize, usize); 3] = [(136, 96, 132), (128, 36, 128), (1, 20, 256)];

/// Names, entries and geometries: each name is its entry with dashes, every entry is
/// distinct, and the launch fits every GPU of compute capability 8.0 and later (≤ 1024
/// threads, ≤ 48 KiB static shared, ≤ 99 KiB of shared memory in all).
fn catalogue_is_consistent() {
    let mut entries = std::collections::HashSet::new();
    for kernel in SgemmKernel::ALL {
        let g = kernel.config().geometry;
        assert!(
            g.threads <= 1024
                && g.static_shared_bytes <= Limits::SHARED_BYTES_DEFAULT
                && g.shared_bytes() <= Limits::SHARED_BYTES_OPT_IN,
            "{kernel}: {g:?}"
        );
        assert_eq!(MatmulKernel::Sgemm(kernel).name(), kernel.name());
        assert!(!MatmulKernel::Sgemm(kernel).is_tiled());
        if kernel == SgemmKernel::Autotuned {
            assert_eq!(g, SgemmKernel::DEFAULT.config().geometry);
            continue;
        }
        if kernel == SgemmKernel::AutotunedTf32 {
            assert_eq!(g, SgemmKernel::DEFAULT_TF32.config().geometry);
            assert_eq!(kernel.precision(), Precision::Tf32);
            continue;
        }
        if kernel == SgemmKernel::AutotunedBf16 {
            assert_eq!(g, SgemmKernel::DEFAULT_BF16.config().geometry);
            assert_eq!(kernel.precision(), Precision::Bf16);
            continue;
        }
        let entry = kernel.entry();
        assert_eq!(kernel.name(), entry.replace('_', "-"), "{kernel}");
        assert!(entries.insert(entry), "{kernel}: duplicate entry {entry}");
        let bounds = kernel.spec().launch_bounds;
        assert!(
            bounds.is_none_or(|b| b.max_threads == g.threads),
            "{kernel}: launch bounds {bounds:?} for {} threads",
            g.threads
        );
        assert_eq!(
            MatmulKernel::from_name(kernel.name()).unwrap(),
            MatmulKernel::Sgemm(kernel)
        );
    }
    assert!(
        SgemmKernel::TUNED
            .iter()
            .all(|k| SgemmKernel::ALL.contains(k))
    );
    assert!(SgemmKernel::TUNED.contains(&SgemmKernel::DEFAULT));
    assert!(SgemmKernel::TUNED_TF32.contains(&SgemmKernel::DEFAULT_TF32));
    assert!(SgemmKernel::TUNED_BF16.contains(&SgemmKernel::DEFAULT_BF16));
    // Precision is opt-in: the candidates of each precision are all of it.
    assert!(
        SgemmKernel::TUNED
            .iter()
            .all(|k| k.precision() == Precision::Fp32)
    );
    assert!(
        SgemmKernel::TUNED_TF32
            .iter()
            .all(|k| k.precision() == Precision::Tf32)
    );
    assert!(
        SgemmKernel::TUNED_BF16
            .iter()
            .all(|k| k.precision() == Precision::Bf16)
    );
    for precision in Precision::ALL {
        assert!(!SgemmKernel::tuned(precision).is_empty(), "{precision:?}");
        assert_eq!(
            SgemmKernel::autotuned(precision).unwrap().precision(),
            precision
        );
    }
    assert_eq!(&MatmulKernel::ALL[..4], &MatmulKernel::LECTURE);
    for (i, kernel) in SgemmKernel::ALL.into_iter().enumerate() {
        assert_eq!(MatmulKernel::ALL[4 + i], MatmulKernel::Sgemm(kernel));
    }
}

/// The launch: a 1D block per `bm × bn` tile of `out`, grid `cdiv(n, bn) × cdiv(m, bm)`,
/// the configuration's dynamic shared memory (rung 11's stages; none for the others).
fn launch_shape_covers_the_output() {
    let shape = MatmulShape::new(130, 67, 129).unwrap();
    for kernel in SgemmKernel::ALL {
        let g = kernel.config().geometry;
        let launch = MatmulKernel::Sgemm(kernel)
            .launch(TileWidth::Tw8, &shape)
            .unwrap();
        assert_eq!(launch.block.x, g.threads);
        assert_eq!((launch.block.y, launch.block.z), (1, 1));
        assert_eq!(launch.grid.x, 129u32.div_ceil(g.bn));
        assert_eq!(launch.grid.y, 130u32.div_ceil(g.bm));
        assert_eq!(
            launch.dynamic_shared_bytes, g.dynamic_shared_bytes,
            "{kernel}"
        );
        assert_eq!(
            g.dynamic_shared_bytes > 0,
            kernel.config().rung == 11,
            "{kernel}"
        );
    }
}

/// Launches beyond a device's limits are refused with the limit named, before anything
/// runs: 1024-thread blocks where 256 are allowed, 32 KiB of shared tiles where 16 are.
fn launches_are_checked_against_device_limits() {
    let shape = MatmulShape::new(256, 64, 256).unwrap();
    let limits = Limits {
        max_threads_per_block: 256,
        max_shared_bytes_per_block: 16 * 1024,
        ..Limits::CUDA
    };
    for kernel in SgemmKernel::ALL {
        let g = kernel.config().geometry;
        let result = MatmulKernel::Sgemm(kernel).launch_within(TileWidth::Tw16, &shape, &limits);
        match result {
            Err(Error::Launch(LimitError::Exceeds {
                what,
                requested,
                limit,
            })) => {
                let (expected_what, expected) = if g.threads > 256 {
                    (Limit::ThreadsPerBlock, g.threads)
                } else {
                    (Limit::SharedBytesPerBlock, g.shared_bytes())
                };
                assert_eq!(
                    (what, requested, limit),
                    (
                        expected_what,
                        expected as u64,
                        if g.threads > 256 { 256 } else { 16 * 1024 }
                    ),
                    "{kernel}"
                );
            }
            Ok(_) => assert!(
                g.threads <= 256 && g.shared_bytes() <= 16 * 1024,
                "{kernel}: {g:?}"
            ),
            Err(e) => panic!("{kernel}: {e:?}"),
        }
    }
    // The simulator refuses the same launch the same way.
    let sim = Simulator { limits };
    let (a, b) = operands(256, 64, 256);
    let coalesced = SgemmKernel::ALL[0];
    let err = sim
        .matmul(coalesced.into(), TileWidth::Tw16, &a, &b, shape)
        .unwrap_err();
    let on_gpu = MatmulKernel::from(coalesced)
        .launch_within(TileWidth::Tw16, &shape, &limits)
        .unwrap_err();
    assert_eq!(format!("{err:?}"), format!("{on_gpu:?}"));
    assert!(matches!(err, Error::Launch(_)), "{err:?}");
}

/// One trial per SGEMM configuration of `kernels_gpu::sgemm::CONFIGS` (a new line there is
/// tested without a line here), run in parallel, plus the catalogue checks.
fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = SgemmKernel::ALL
        .into_iter()
        .map(|kernel| {
            Trial::test(kernel.name(), move || {
                check_all(kernel);
                Ok(())
            })
        })
        .collect();
    for (name, test) in [
        ("catalogue_is_consistent", catalogue_is_consistent as fn()),
        (
            "launch_shape_covers_the_output",
            launch_shape_covers_the_output,
        ),
        (
            "launches_are_checked_against_device_limits",
            launches_are_checked_against_device_limits,
        ),
    ] {
        trials.push(Trial::test(name, move || {
            test();
            Ok(())
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}
