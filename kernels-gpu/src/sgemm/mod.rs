//! SGEMM beyond the lecture: `out[m×n] = a[m×k] · b[k×n]`, row-major f32 (NN), climbing the
//! ladder of the public SGEMM worklogs (siboehm's "How to optimize a CUDA matmul kernel")
//! from the lecture's tiled kernel towards cuBLAS, one idea per rung and one file per rung.
//!
//! | rung | file | kernel | what it adds | outputs per thread |
//! |---|---|---|---|---|
//! | 1 | `01_coalesced.rs` | [`coalesced::sgemm_coalesced`] | 1D block, consecutive threads on consecutive columns | 1 |
//! | 2 | `02_shared_blocking.rs` | [`shared_blocking::sgemm_shared_blocking`] | `BS × BS` shared tiles of `a` and `b` | 1 |
//! | 3 | `03_blocktiling_1d.rs` | [`blocktiling_1d::sgemm_blocktiling_1d`] | a column of `TM` outputs: one `b` value reused `TM` times | `TM` |
//! | 4 | `04_blocktiling_2d.rs` | [`blocktiling_2d::sgemm_blocktiling_2d`] | a `TM × TN` register tile: outer products of two fragments | `TM·TN` |
//! | 5 | `05_vectorized.rs` | [`vectorized::sgemm_vectorized`] | 16-byte global loads and stores, `a` tile stored transposed so both fragments are 16-byte shared loads | `TM·TN` |
//! | 6 | `06_warptiling.rs` | [`warptiling::sgemm_warptiling`] | warp tiles: each warp owns a `WM × WN` sub-tile, threads spread over it in `WMITER × WNITER` steps, so a warp's shared reads are broadcasts without bank conflicts | `WMITER·TM·WNITER·TN` |
//! | 7 | `07_double_buffered.rs` | [`double_buffered::sgemm_double_buffered`] | two shared stages and register prefetch: the next tile's global loads are in flight while this one's FMAs run, one barrier per tile | as rung 6 |
//! | 8 | `08_padded.rs` | [`padded::sgemm_double_buffered_padded`] | a padded `a` tile whose transposed stores are free of bank conflicts, read-only (`ld.global.nc`) loads | as rung 6 |
//! | 9 | `09_swizzled.rs` | [`swizzled::grouped`] (rungs 8 and 10 with `GROUP > 0`) | blocks taken in groups of block rows, for L2 reuse | as rung 6 |
//! | 10 | `10_multistage.rs` | [`multistage::sgemm_multistage`] | `b` tiles copied global → shared by `cp.async` through a ring of 3 stages (4 on small tiles that load `a` into registers); small tiles copy `a` the same way ([`multistage::copies_a`]) | as rung 6 |
//! | 11 | `11_tensor_core.rs` | [`tensor_core::sgemm_tensor_core`] | tensor cores: TF32 `m16n8k8` or BF16 `m16n8k16` `mma.sync` warp tiles, both operands by `cp.async` into swizzled stages ([`Precision::Tf32`], [`Precision::Bf16`], opt-in) | `WM·WN/32` |
//! | 13 | `13_bf16.rs` | [`bf16::gemm_bf16`] | BF16 matrices (f32 output and accumulation): rung 11 at half the bytes, both fragments by `ldmatrix` (`b` transposed), no conversion in the loop ([`bf16::BF16_CONFIGS`]) | `WM·WN/32` |
//! | 12 | `12_blas.rs` | [`blas::sgemm_blas`] | the BLAS interface on rung 10: either operand transposed, leading dimensions, `α`/`β`, strided batches; whichever operand is stored `k`-major is copied by `cp.async` ([`blas::BLAS_CONFIGS`]) | as rung 6 |
//! | 14 | `14_wgmma.rs` | [`wgmma::sgemm_wgmma`] | TF32 on Hopper's warpgroup `wgmma` (`sm_90a` module), both operands packed first ([`repack`]): rounded to TF32, `b` transposed | `64·N/128` |
//! | 15 | `15_mma_packed.rs` | [`mma_packed::sgemm_mma_packed`] | rung 11's `mma.sync` warp tiles on rung 14's packed `b` and the caller's `a`: both fragments by `ldmatrix`, only `a`'s rounded in the loop ([`mma_packed::MMA_PACKED_CONFIGS`]) | `WM·WN/32` |
//! | 16 | `16_gemv.rs` | [`gemv::gemv_small_m`], [`gemv::gemv_small_n`], [`gemv::gemv_small_k`] | memory-bound products (`m`, `n` or `k` ≤ 16): the large operand streamed once, coalesced, 16-byte loads; split k reduced in a fixed order; each also rounding its inputs to TF32 or BF16 ([`gemv::GEMV_CONFIGS`]) | 4 columns × `m` rows, 4 rows × `n` columns, or 4 columns × 16 rows |
//!
//! What several rungs share (global-memory edges, shared-tile I/O, the warp tile,
//! compile-time unrolling) is in [`parts`]. Every configuration that becomes an entry point
//! is one line of [`CONFIGS`]' table below; see [`crate::catalogue`].
//!
//! All of them take `(a, b, out, m, n, k)` as the lecture kernels take `(m, n, out, h, w, k)`,
//! and follow the [matmul module contract](crate::matmul): `a`, `b` and `out` point to `m·k`,
//! `k·n` and `m·n` valid f32s, those products fit `u32`, and the index arithmetic is 32-bit
//! and no-wrap ([`at`]). Each block computes one `BM × BN` tile of `out`; the host launches a
//! 1D block of [`Geometry::threads`] threads on a `cdiv(n, BN) × cdiv(m, BM)` grid, with
//! [`Geometry::dynamic_shared_bytes`] of dynamic shared memory (rung 11's stages, which may
//! pass the 48 KiB of static arrays; none for the others), as each configuration's
//! [`KernelSpec`] says.
//!
//! Any shape is correct (`k = 1`, nothing a multiple of anything, tall and skinny): partial
//! tiles are padded with zeros, and every output accumulates `fma(a[r, i], b[i, c], acc)`
//! for `i` in increasing order from `0.0`, so every rung gives the same bits as the lecture's
//! kernels. From rung 5 on, a block takes the 16-byte fast path only where it is valid for
//! the whole block (a block-uniform branch, see [`tile_io`]): the tile lies inside the
//! matrix, the row length is a multiple of 4 and the pointer 16-byte aligned; everything
//! else goes through bounds-checked scalar loads and stores.
//!
//! Register arrays (accumulators, fragments, staged loads) are fixed-size arrays indexed only
//! inside loops unrolled at compile time ([`unroll`]), so that every index is a constant and
//! the arrays live in registers; a run-time index, an iterator adaptor, or a loop LLVM chose
//! not to unroll would put them in local memory (see [`crate::reduce`]).

#[path = "13_bf16.rs"]
pub mod bf16;
#[path = "12_blas.rs"]
pub mod blas;
#[path = "03_blocktiling_1d.rs"]
pub mod blocktiling_1d;
#[path = "04_blocktiling_2d.rs"]
pub mod blocktiling_2d;
#[path = "01_coalesced.rs"]
pub mod coalesced;
#[path = "07_double_buffered.rs"]
pub mod double_buffered;
#[path = "10_multistage.rs"]
pub mod multistage;
#[path = "08_padded.rs"]
pub mod padded;
#[path = "02_shared_blocking.rs"]
pub mod shared_blocking;
#[path = "09_swizzled.rs"]
pub mod swizzled;
#[path = "11_tensor_core.rs"]
pub mod tensor_core;
use tensor_core::{BF16, TF32};
#[path = "16_gemv.rs"]
pub mod gemv;
#[path = "15_mma_packed.rs"]
pub mod mma_packed;
#[path = "05_vectorized.rs"]
pub mod vectorized;
#[path = "17_warp_specialized.rs"]
pub mod warp_specialized;
#[path = "06_warptiling.rs"]
pub mod warptiling;
#[path = "14_wgmma.rs"]
pub mod wgmma;

pub mod epilogue;
pub mod parts;
pub mod repack;
pub mod split_k;
pub mod stream_k;
use parts::{global, tile_io, unroll, warp_tile};

pub use crate::matmul::{at, cdiv};

use nvptx_device::catalogue::{DynamicShared, GridRule, KernelSpec, LaunchBounds};
use nvptx_device::thread::{self, Dim3};

/// How a rung's configuration is launched: a 1D block of `threads` threads per `bm × bn`
/// tile of `out`, a `cdiv(n, bn) × cdiv(m, bm)` grid, and the dynamic shared memory of
/// rungs that keep their stages there. Each rung's
/// `geometry(…)` computes it from the values of its kernel's const generics, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Geometry {
    /// Rows of `out` per block.
    pub bm: u32,
    /// Columns of `out` per block.
    pub bn: u32,
    /// Depth of the shared tiles, the steps of one tile loop (0 for rung 1, which has none).
    pub bk: u32,
    /// Threads per block (x only).
    pub threads: u32,
    /// The bytes of the kernel's `.shared` arrays (a CPU test checks them against the PTX).
    pub static_shared_bytes: u32,
    /// The bytes of dynamic shared memory it is launched with: its stages, where they
    /// outgrow the 48 KiB that static arrays may have (rung 11); 0 for the others.
    pub dynamic_shared_bytes: u32,
}

impl Geometry {
    /// A geometry from its sizes, `shared_floats` the f32s of the kernel's shared arrays.
    pub const fn new(
        bm: usize, bn: usize, bk: usize, threads: usize, shared_floats: usize,
    ) -> Self {
        Self {
            bm: bm as u32,
            bn: bn as u32,
            bk: bk as u32,
            threads: threads as u32,
            static_shared_bytes: (shared_floats * 4) as u32,
            dynamic_shared_bytes: 0,
        }
    }

    /// The same sizes with the kernel's shared floats in dynamic shared memory instead of
    /// static arrays.
    pub const fn in_dynamic_shared(self) -> Self {
        Self {
            static_shared_bytes: 0,
            dynamic_shared_bytes: self.static_shared_bytes + self.dynamic_shared_bytes,
            ..self
        }
    }

    /// Static plus dynamic shared memory of one block.
    pub const fn shared_bytes(self) -> u32 {
        self.static_shared_bytes + self.dynamic_shared_bytes
    }

    /// The plain-data description of entry `entry` with this geometry and the SGEMM
    /// parameters `(a, b, out, m, n, k)`.
    pub const fn spec(self, entry: &'static str, min_blocks: Option<u32>) -> KernelSpec {
        self.spec_with_params(entry, SGEMM_PARAMS, min_blocks)
    }

    /// The plain-data description of a persistent entry `entry` with this geometry (at most
    /// one block per tile and per multiprocessor, each looping over tiles) and parameters
    /// `params`.
    pub const fn spec_persistent(
        self, entry: &'static str, params: &'static [nvptx_device::catalogue::Param],
        min_blocks: Option<u32>,
    ) -> KernelSpec {
        let spec = self.spec_with_params(entry, params, min_blocks);
        KernelSpec {
            grid: GridRule::Persistent {
                rows: self.bm,
                cols: self.bn,
            },
            ..spec
        }
    }

    /// The plain-data description of entry `entry` with this geometry and parameters
    /// `params`: an entry of another crate that runs this configuration with an
    /// [epilogue] of its own, which takes more parameters.
    pub const fn spec_with_params(
        self, entry: &'static str, params: &'static [nvptx_device::catalogue::Param],
        min_blocks: Option<u32>,
    ) -> KernelSpec {
        KernelSpec {
            entry,
            params,
            block: Dim3::x(self.threads),
            grid: GridRule::Tiles {
                rows: self.bm,
                cols: self.bn,
            },
            static_shared_bytes: self.static_shared_bytes,
            dynamic_shared: if self.dynamic_shared_bytes > 0 {
                DynamicShared::Fixed(self.dynamic_shared_bytes)
            } else {
                DynamicShared::None
            },
            launch_bounds: match min_blocks {
                Some(min_blocks) => Some(LaunchBounds {
                    max_threads: self.threads,
                    min_blocks,
                }),
                None => None,
            },
            cluster: 1,
        }
    }
}

/// The parameters of every SGEMM entry point of the table: `(a, b, out, m, n, k)`.
pub const SGEMM_PARAMS: &[nvptx_device::catalogue::Param] =
    nvptx_device::params!(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32);

/// How a product may round its inputs: cuBLAS's math mode, as a property of each entry.
/// FP32 is the default everywhere; the others are opt-in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// f32 inputs as they are, f32 FMAs: every rung up to 10.
    #[default]
    Fp32,
    /// Inputs rounded to TF32 (10-bit mantissa, relative error ≤ 2⁻¹¹ each), products on the
    /// tensor cores, f32 accumulation: rung 11.
    Tf32,
    /// Inputs rounded to BF16 (8-bit significand, to nearest even: relative error ≤ 2⁻⁸
    /// each), products on the tensor cores, f32 accumulation: rung 11 with `mma.m16n8k16`.
    Bf16,
}

impl Precision {
    /// Every precision, the default first.
    pub const ALL: [Precision; 3] = [Self::Fp32, Self::Tf32, Self::Bf16];

    /// The name on command lines and in reports: `fp32`, `tf32` or `bf16`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Fp32 => "fp32",
            Self::Tf32 => "tf32",
            Self::Bf16 => "bf16",
        }
    }

    /// The precision called `name` ([`name`](Self::name)), if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The largest relative error of one input after rounding to this precision (f32's
    /// own rounding of the data is not counted: the inputs are f32 already): 0, 2⁻¹¹ for
    /// TF32 (round to nearest of a 10-bit mantissa), 2⁻⁸ for BF16.
    pub const fn input_rounding(self) -> f64 {
        match self {
            Self::Fp32 => 0.0,
            Self::Tf32 => 1.0 / 2048.0,
            Self::Bf16 => 1.0 / 256.0,
        }
    }

    /// The largest `|out − exact| / Σ|a||b|` of a length-`k` dot product whose inputs are
    /// rounded to this precision (relative error `u` each, [`input_rounding`](Self::input_rounding))
    /// and accumulated in f32: each product `a(1+δ₁)·b(1+δ₂)` is off by at most
    /// `(2u + u²)|ab|`, and the `k` f32 additions add `k · 2⁻²³` (twice the
    /// round-to-nearest bound, which also covers the tensor cores' unspecified internal
    /// rounding, and holds for any order of the additions). The bound every check of a
    /// product uses, on every host.
    pub fn dot_error_bound(self, k: usize) -> f64 {
        let u = self.input_rounding();
        2.0 * u + u * u + (if k == 0 { 1 } else { k }) as f64 * f32::EPSILON as f64
    }

    /// `x` rounded as this precision's conversion rounds an input ([`Rounding::round`] of
    /// its type): the host's twin of what a kernel of the precision multiplies.
    pub fn round(self, x: f32) -> f32 {
        match self {
            Self::Fp32 => AsIs::round(x),
            Self::Tf32 => ToTf32::round(x),
            Self::Bf16 => ToBf16::round(x),
        }
    }
}

/// How a kernel that multiplies on the FMA units (rung 16) rounds each input to its
/// [`Precision`] first: a type per precision, so that the rounding is compiled into the
/// entry. The products of two rounded inputs are exact in f32 and the FMA adds them with
/// one rounding, as the tensor cores' f32 accumulation does: such a kernel computes what
/// the precision's tensor-core rungs compute, in its own order of additions.
pub trait Rounding {
    /// The precision it rounds to.
    const PRECISION: Precision;
    /// `x` rounded.
    fn round(x: f32) -> f32;
}

/// FP32: inputs as they are.
pub struct AsIs;
/// TF32: `cvt.rna.tf32.f32` (nearest, ties away from zero), the low 13 bits cleared, as
/// rungs 11, 14 and 15 round; rung 17's copies round ties to even instead (the two differ
/// only on exact ties).
pub struct ToTf32;
/// BF16: `cvt.rn.bf16.f32` (nearest, ties to even), widened back to f32.
pub struct ToBf16;

impl Rounding for AsIs {
    const PRECISION: Precision = Precision::Fp32;
    #[inline(always)]
    fn round(x: f32) -> f32 {
        x
    }
}

impl Rounding for ToTf32 {
    const PRECISION: Precision = Precision::Tf32;
    #[inline(always)]
    fn round(x: f32) -> f32 {
        nvptx_device::mma::tf32_value(nvptx_device::mma::to_tf32(x))
    }
}

impl Rounding for ToBf16 {
    const PRECISION: Precision = Precision::Bf16;
    #[inline(always)]
    fn round(x: f32) -> f32 {
        nvptx_device::mma::bf16_value(nvptx_device::mma::to_bf16(x))
    }
}

/// One SGEMM configuration: an entry point of the ladder, as the table below declares it.
#[derive(Clone, Copy, Debug)]
pub struct SgemmConfig {
    /// The name on command lines and in reports: the entry's, with dashes.
    pub name: &'static str,
    /// The rung (1 to 11).
    pub rung: u32,
    /// How it rounds its inputs (the row's `tf32` or `bf16` flag; FP32 otherwise).
    pub precision: Precision,
    /// Block, warp-independent tile sizes and threads.
    pub geometry: Geometry,
    /// How to launch it.
    pub spec: KernelSpec,
    /// Whether the autotuner times it.
    pub autotune: bool,
    /// What the autotuned choice of its precision is where nothing is timed (the simulator).
    pub default: bool,
    /// Its split-k slice entry point ([`split_k`]), if the table gives it one: launched on
    /// the configuration's grid with the slices in z, then [`split_k::REDUCE`].
    pub split_k: Option<KernelSpec>,
    /// The entry point as the simulator calls it: `(a, b, out, m, n, k)`.
    #[cfg(not(target_arch = "nvptx64"))]
    pub sim: MatmulEntry,
    /// The split-k slice entry point as the simulator calls it: `(a, b, ws, m, n, k, slice)`.
    #[cfg(not(target_arch = "nvptx64"))]
    pub sim_split_k: Option<SplitKEntry>,
    /// Its serial split-k entry point ([`split_k`]'s module docs), if the table gives it
    /// one: one launch on the configuration's grid with the slices in z, the partial sums
    /// handed from slice to slice through the output.
    pub serial_split_k: Option<KernelSpec>,
    /// The serial split-k entry point as the simulator calls it: `(a, b, out, flags, m, n,
    /// k, slice)`.
    #[cfg(not(target_arch = "nvptx64"))]
    pub sim_serial_split_k: Option<SerialSplitKEntry>,
    /// Its stream-k entry point ([`stream_k`]), if the table gives it one: one launch of a
    /// block per worker, the pieces of each output tile adding up in order through the
    /// output.
    pub stream_k: Option<KernelSpec>,
    /// The stream-k entry point as the simulator calls it: `(a, b, out, flags, m, n, k,
    /// row0, m_all, workers)`.
    #[cfg(not(target_arch = "nvptx64"))]
    pub sim_stream_k: Option<StreamKEntry>,
    /// Its strided entry point, if the table gives it one: `(a, b, out, m, n, k, lda, ldb)`,
    /// the operands' rows `lda >= k` and `ldb >= n` floats apart, the output's `n`
    /// ([`STRIDED_PARAMS`]), launched as the configuration. The host runs it on operands
    /// padded to 16-byte aligned rows and whole `BK`-deep tiles, with the output in place.
    pub strided: Option<KernelSpec>,
    /// The strided entry point as the simulator calls it.
    #[cfg(not(target_arch = "nvptx64"))]
    pub sim_strided: Option<StridedEntry>,
}

/// The parameters of every strided entry: `(a, b, out, m, n, k, lda, ldb)`.
pub const STRIDED_PARAMS: &[nvptx_device::catalogue::Param] = nvptx_device::params!(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, lda: u32, ldb: u32
);

/// A strided entry point as the simulator calls it: `(a, b, out, m, n, k, lda, ldb)`.
#[cfg(not(target_arch = "nvptx64"))]
pub type StridedEntry = unsafe fn(*const f32, *const f32, *mut f32, u32, u32, u32, u32, u32);

/// A stream-k entry point as the simulator calls it: `(a, b, out, flags, m, n, k, row0,
/// m_all, workers)`.
#[cfg(not(target_arch = "nvptx64"))]
pub type StreamKEntry =
    unsafe fn(*const f32, *const f32, *mut f32, *mut u64, u32, u32, u32, u32, u32, u32);

/// A serial split-k entry point as the simulator calls it: `(a, b, out, flags, m, n, k,
/// slice)`.
#[cfg(not(target_arch = "nvptx64"))]
pub type SerialSplitKEntry =
    unsafe fn(*const f32, *const f32, *mut f32, *mut u64, u32, u32, u32, u32);

/// A split-k slice entry point as the simulator calls it: `(a, b, ws, m, n, k, slice)`.
#[cfg(not(target_arch = "nvptx64"))]
pub type SplitKEntry = unsafe fn(*const f32, *const f32, *mut f32, u32, u32, u32, u32);

/// A matmul entry point as the simulator calls it: `(a, b, out, m, n, k)`.
#[cfg(not(target_arch = "nvptx64"))]
pub type MatmulEntry = unsafe fn(*const f32, *const f32, *mut f32, u32, u32, u32);

/// The position of the configuration whose entry point is `entry` in [`CONFIGS`] (a
/// compile-time error if there is none: only used on the table's own names).
const fn index_of(entry: &str) -> usize {
    let mut i = 0;
    while i < CONFIGS.len() {
        let name = CONFIGS[i].spec.entry.as_bytes();
        if name.len() == entry.len() {
            let mut j = 0;
            while j < name.len() && name[j] == entry.as_bytes()[j] {
                j += 1;
            }
            if j == name.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not an entry of the SGEMM table")
}

/// A configuration's split-k slice kernel, for the table's lines with `split_k(name)`
/// (the kernel's `ld` twin takes `a`'s row stride apart from the depth).
macro_rules! split_k_fn {
    ($module:ident, $kernel:ident, [$($g:tt),*], []) => {};
    ($module:ident, $kernel:ident, [$($g:tt),*], [$sk:ident]) => {
        /// The name of this configuration's split-k slice entry point.
        pub const SPLIT_K_ENTRY: &str = stringify!($sk);

        /// Slice `blockIdx.z` of the split-k product into the workspace `ws`
        /// ([`split_k`](super::super::split_k)): this configuration's kernel on `a`'s
        /// columns and `b`'s rows `z·slice ..+ slice`.
        ///
        /// # Safety
        /// As [`split_k::slice_of`](super::super::split_k::slice_of).
        #[inline(always)]
        pub unsafe fn split_k(
            a: *const f32, b: *const f32, ws: *mut f32, m: u32, n: u32, k: u32, slice: u32,
        ) {
            // SAFETY: the caller's contract, for every slice.
            unsafe {
                let (a, b, plane, ks) = split_k::slice_of(a, b, ws, m, n, k, slice);
                $module::ld::$kernel::<$($g,)* epilogue::Store>(
                    a, b, plane, m, n, ks, k, n, false, epilogue::Store,
                )
            }
        }
    };
}

/// A configuration's serial split-k kernel, for the table's lines with
/// `serial_split_k(name)` (the kernel's `serial` twin).
macro_rules! serial_split_k_fn {
    ($module:ident, $kernel:ident, [$($g:tt),*], []) => {};
    ($module:ident, $kernel:ident, [$($g:tt),*], [$ss:ident]) => {
        /// The name of this configuration's serial split-k entry point.
        pub const SERIAL_SPLIT_K_ENTRY: &str = stringify!($ss);

        /// The launch description of the serial split-k entry point: the configuration's,
        /// with the shared word of the block's ticket.
        pub const SERIAL_GEOMETRY: Geometry = Geometry {
            static_shared_bytes: GEOMETRY.static_shared_bytes + 4,
            ..GEOMETRY
        };

        /// This configuration's block as one slice of a serial split-k product
        /// ([`split_k`](super::super::split_k)'s module docs).
        ///
        /// # Safety
        /// As the kernel's `serial` twin.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn serial_split_k(
            a: *const f32, b: *const f32, out: *mut f32, flags: *mut u64, m: u32, n: u32,
            k: u32, slice: u32,
        ) {
            // SAFETY: the caller's contract.
            unsafe {
                $module::serial::$kernel::<$($g,)* epilogue::Store>(
                    a, b, out, flags, m, n, k, slice, epilogue::Store,
                )
            }
        }
    };
}

/// A configuration's stream-k kernel, for the table's lines with `stream_k(name)` (the
/// kernel's `stream` twin).
macro_rules! stream_k_fn {
    ($module:ident, $kernel:ident, [$($g:tt),*], []) => {};
    ($module:ident, $kernel:ident, [$($g:tt),*], [$sk:ident]) => {
        /// The name of this configuration's stream-k entry point.
        pub const STREAM_K_ENTRY: &str = stringify!($sk);

        /// The launch description of the stream-k entry point: the configuration's, with
        /// four shared words, the block's ticket and its loop's state (launched on a grid of
        /// its own, a block per worker).
        pub const STREAM_GEOMETRY: Geometry = Geometry {
            static_shared_bytes: GEOMETRY.static_shared_bytes + 16,
            ..GEOMETRY
        };

        /// This configuration's block as one worker of a stream-k product
        /// ([`stream_k`](super::super::stream_k)'s module docs).
        ///
        /// # Safety
        /// As the kernel's `stream` twin.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn stream_k(
            a: *const f32, b: *const f32, out: *mut f32, flags: *mut u64, m: u32, n: u32,
            k: u32, row0: u32, m_all: u32, workers: u32,
        ) {
            // SAFETY: the caller's contract.
            unsafe {
                $module::stream::$kernel::<$($g,)* epilogue::Store>(
                    a, b, out, flags, m, n, k, row0, m_all, workers, epilogue::Store,
                )
            }
        }
    };
}

/// A configuration's strided kernel, for the table's lines with `strided(name)` (the
/// kernel's `ld` twin, its stores realigned).
macro_rules! strided_fn {
    ($module:ident, $kernel:ident, [$($g:tt),*], []) => {};
    ($module:ident, $kernel:ident, [$($g:tt),*], [$st:ident]) => {
        /// The name of this configuration's strided entry point.
        pub const STRIDED_ENTRY: &str = stringify!($st);

        /// This configuration's kernel on operands whose rows are `lda >= k` (`a`) and
        /// `ldb >= n` (`b`) floats apart, into `out`'s rows of `n`.
        ///
        /// # Safety
        /// As [`run`], with `a` holding `m` rows of `lda` floats and `b` `k` rows of `ldb`.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn strided(
            a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, lda: u32,
            ldb: u32,
        ) {
            // SAFETY: the caller's contract.
            unsafe {
                $module::ld::$kernel::<$($g,)* epilogue::Store>(
                    a, b, out, m, n, k, lda, ldb, true, epilogue::Store,
                )
            }
        }
    };
}

/// The SGEMM table: one line per configuration, generating its entry point (with launch
/// bounds where `min_blocks` is given), its [`KernelSpec`], its simulator twin, and its
/// module in [`configs`] (the configuration with any [epilogue](epilogue), for other crates).
macro_rules! sgemm_configs {
    ($( $(#[$meta:meta])* $entry:ident = $rung:literal $module:ident :: $kernel:ident ::<$($g:tt),*>
        $([$($flag:ident),*])? $(, min_blocks($mb:expr))? $(, split_k($sk:ident))?
        $(, serial_split_k($ss:ident))? $(, stream_k($sm:ident))? $(, strided($st:ident))?; )*) => {
        /// Every configuration of the table as a building block: its launch geometry and
        /// its kernel with an epilogue of the caller's choice. A kernel crate exports
        /// `configs::<entry>::run` with, say, [`epilogue::Linear`] under an entry name of
        /// its own, launched as [`GEOMETRY`](configs::sgemm_coalesced_32::GEOMETRY) says
        /// (its [`spec_with_params`](Geometry::spec_with_params)), with launch bounds
        /// `(GEOMETRY.threads, MIN_BLOCKS)`.
        pub mod configs {$(
            $(#[$meta])*
            #[doc = concat!("Configuration `", stringify!($entry), "` (rung ", stringify!($rung), ").")]
            pub mod $entry {
                #[allow(unused_imports)]
                use super::super::*;
                /// The table's entry point of this configuration (with [`epilogue::Store`]).
                pub const ENTRY: &str = stringify!($entry);
                /// Its position in [`CONFIGS`](super::super::CONFIGS).
                pub const INDEX: usize = index_of(ENTRY);
                /// Block tile, depth, threads and static shared memory.
                pub const GEOMETRY: Geometry = $module::geometry($($g as usize),*);
                /// The `.minnctapersm` of the table's entry point (1 where it has none).
                pub const MIN_BLOCKS: u32 = match opt!($($mb)?) {
                    Some(b) => b,
                    None => 1,
                };
                /// The table's `min_blocks`, if it gives one.
                pub(in super::super) const TABLE_MIN_BLOCKS: Option<u32> = opt!($($mb)?);

                /// The configuration's kernel with `epilogue` applied to every output.
                ///
                /// # Safety
                /// The [module contract](super::super), the launch [`GEOMETRY`] describes,
                /// and the epilogue's own (a [`Linear`](epilogue::Linear)'s bias holds `n`
                /// floats; `out` holds valid floats where it reads the output).
                #[inline(always)]
                pub unsafe fn run<E: epilogue::Epilogue>(
                    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
                ) {
                    // SAFETY: the caller's contract.
                    unsafe { $module::$kernel::<$($g,)* E>(a, b, out, m, n, k, epilogue) }
                }

                split_k_fn!($module, $kernel, [$($g),*], [$($sk)?]);
                serial_split_k_fn!($module, $kernel, [$($g),*], [$($ss)?]);
                stream_k_fn!($module, $kernel, [$($g),*], [$($sm)?]);
                strided_fn!($module, $kernel, [$($g),*], [$($st)?]);

                /// [`run`] with [`Store`](epilogue::Store): the table's entry point.
                ///
                /// # Safety
                /// As [`run`].
                #[inline(always)]
                pub unsafe fn store(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32) {
                    // SAFETY: the caller's contract.
                    unsafe { run(a, b, out, m, n, k, epilogue::Store) }
                }
            }
        )*}

        #[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
        nvptx_device::entry_points! {$(
            $(#[$meta])*
            $entry(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
                => configs::$entry::store
                $(, launch_bounds(configs::$entry::GEOMETRY.threads, $mb))?;
            $(
            $sk(a: *const f32, b: *const f32, ws: *mut f32, m: u32, n: u32, k: u32, slice: u32)
                => configs::$entry::split_k,
                launch_bounds(configs::$entry::GEOMETRY.threads, configs::$entry::MIN_BLOCKS);
            )?
            $(
            #[allow(clippy::too_many_arguments)] // the product's and the hand-off's
            $ss(a: *const f32, b: *const f32, out: *mut f32, flags: *mut u64, m: u32, n: u32,
                k: u32, slice: u32)
                => configs::$entry::serial_split_k,
                launch_bounds(configs::$entry::GEOMETRY.threads, configs::$entry::MIN_BLOCKS);
            )?
            $(
            #[allow(clippy::too_many_arguments)] // the product's, the hand-off's and the rows'
            $sm(a: *const f32, b: *const f32, out: *mut f32, flags: *mut u64, m: u32, n: u32,
                k: u32, row0: u32, m_all: u32, workers: u32)
                => configs::$entry::stream_k,
                launch_bounds(configs::$entry::GEOMETRY.threads, configs::$entry::MIN_BLOCKS);
            )?
            $(
            #[allow(clippy::too_many_arguments)] // the product's and both operands' strides
            $st(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, lda: u32,
                ldb: u32)
                => configs::$entry::strided,
                launch_bounds(configs::$entry::GEOMETRY.threads, configs::$entry::MIN_BLOCKS);
            )?
        )*}

        /// Every SGEMM configuration, lowest rung first.
        pub const CONFIGS: &[SgemmConfig] = &[$(
            SgemmConfig {
                name: dashed!(stringify!($entry)),
                rung: $rung,
                precision: if has_flag!(tf32 in $($($flag),*)?) {
                    Precision::Tf32
                } else if has_flag!(bf16 in $($($flag),*)?) {
                    Precision::Bf16
                } else {
                    Precision::Fp32
                },
                geometry: configs::$entry::GEOMETRY,
                spec: configs::$entry::GEOMETRY.spec(stringify!($entry), configs::$entry::TABLE_MIN_BLOCKS),
                autotune: has_flag!(autotune in $($($flag),*)?),
                default: has_flag!(default in $($($flag),*)?),
                split_k: opt!($(configs::$entry::GEOMETRY.spec_with_params(
                    stringify!($sk), split_k::SLICE_PARAMS, configs::$entry::TABLE_MIN_BLOCKS))?),
                #[cfg(not(target_arch = "nvptx64"))]
                sim: entry::$entry,
                #[cfg(not(target_arch = "nvptx64"))]
                sim_split_k: opt!($(entry::$sk)?),
                serial_split_k: opt!($(configs::$entry::SERIAL_GEOMETRY.spec_with_params(
                    stringify!($ss), split_k::SERIAL_PARAMS,
                    configs::$entry::TABLE_MIN_BLOCKS))?),
                #[cfg(not(target_arch = "nvptx64"))]
                sim_serial_split_k: opt!($(entry::$ss)?),
                stream_k: opt!($(configs::$entry::STREAM_GEOMETRY.spec_with_params(
                    stringify!($sm), stream_k::STREAM_PARAMS,
                    configs::$entry::TABLE_MIN_BLOCKS))?),
                #[cfg(not(target_arch = "nvptx64"))]
                sim_stream_k: opt!($(entry::$sm)?),
                strided: opt!($(configs::$entry::GEOMETRY.spec_with_params(
                    stringify!($st), STRIDED_PARAMS, configs::$entry::TABLE_MIN_BLOCKS))?),
                #[cfg(not(target_arch = "nvptx64"))]
                sim_strided: opt!($(entry::$st)?),
            },
        )*];
    };
}

sgemm_configs! {
    // entry point                                    = rung and kernel::<block, warp and thread tiles, …>                                 [flags], launch bounds
    sgemm_coalesced_32                                = 1 coalesced::sgemm_coalesced::<32>;
    sgemm_shared_blocking_32                          = 2 shared_blocking::sgemm_shared_blocking::<32>;
    sgemm_blocktiling_1d_64x64x8_tm8                  = 3 blocktiling_1d::sgemm_blocktiling_1d::<64, 64, 8, 8>;
    sgemm_blocktiling_2d_128x128x8_8x8                = 4 blocktiling_2d::sgemm_blocktiling_2d::<128, 128, 8, 8, 8>;
    sgemm_vectorized_128x128x8_8x8                    = 5 vectorized::sgemm_vectorized::<128, 128, 8, 8, 8, 256>;
    /// siboehm's tuned kernel 10: 128 threads with 128 accumulators each.
    sgemm_warptiling_128x128x16_w64x64                = 6 warptiling::sgemm_warptiling::<128, 128, 16, 64, 64, 1, 4, 8, 4, 128> [autotune];
    sgemm_warptiling_128x128x8_w64x32                 = 6 warptiling::sgemm_warptiling::<128, 128, 8, 64, 32, 1, 2, 8, 4, 256> [autotune];
    /// 64 accumulators per thread, 16 KiB shared: the simulator's choice.
    sgemm_double_buffered_128x128x8_w64x32            = 7 double_buffered::sgemm_double_buffered::<128, 128, 8, 64, 32, 1, 2, 8, 4, 256> [autotune, default];
    sgemm_double_buffered_128x128x16_w64x32           = 7 double_buffered::sgemm_double_buffered::<128, 128, 16, 64, 32, 1, 2, 8, 4, 256> [autotune];
    /// The classic conflict-free layout of hand-written SGEMMs: 2×2 steps of 4×4.
    sgemm_double_buffered_128x128x8_w32x64            = 7 double_buffered::sgemm_double_buffered::<128, 128, 8, 32, 64, 2, 2, 4, 4, 256> [autotune];
    sgemm_double_buffered_128x128x16_w64x64           = 7 double_buffered::sgemm_double_buffered::<128, 128, 16, 64, 64, 1, 4, 8, 4, 128> [autotune];
    /// Twice the blocks of the 128×128 tiles, for products with few output tiles.
    sgemm_double_buffered_64x128x16_w32x64            = 7 double_buffered::sgemm_double_buffered::<64, 128, 16, 32, 64, 1, 2, 8, 4, 128> [autotune];
    sgemm_double_buffered_padded_128x128x16_w64x32    = 8 padded::sgemm_double_buffered_padded::<128, 128, 16, 64, 32, 1, 2, 8, 4, 256, 132, 0> [autotune], min_blocks(2);
    sgemm_double_buffered_padded_128x128x16_w32x64    = 8 padded::sgemm_double_buffered_padded::<128, 128, 16, 32, 64, 2, 2, 4, 4, 256, 132, 0> [autotune], min_blocks(2);
    /// 8×16 outputs per thread: one block per SM by registers.
    sgemm_double_buffered_padded_128x256x8_w64x64     = 8 padded::sgemm_double_buffered_padded::<128, 256, 8, 64, 64, 1, 4, 8, 4, 256, 132, 0> [autotune];
    sgemm_double_buffered_padded_256x128x8_w64x64     = 8 padded::sgemm_double_buffered_padded::<256, 128, 8, 64, 64, 2, 2, 8, 4, 256, 260, 0> [autotune];
    sgemm_double_buffered_swizzled_128x128x16_w64x32  = 9 padded::sgemm_double_buffered_padded::<128, 128, 16, 64, 32, 1, 2, 8, 4, 256, 132, 8> [autotune], min_blocks(2);
    sgemm_double_buffered_swizzled_128x256x8_w64x64   = 9 padded::sgemm_double_buffered_padded::<128, 256, 8, 64, 64, 1, 4, 8, 4, 256, 132, 8> [autotune];
    /// With split-k for mid-size outputs with a long `k` (a few hundred rows, a few thousand
    /// columns): 64 accumulators in each of 256 threads, where the smaller split-k tiles
    /// have 32 in 128 or 64 in 64 and 128 threads.
    sgemm_multistage_128x128x16_w64x32                = 10 multistage::sgemm_multistage::<128, 128, 16, 64, 32, 1, 2, 8, 4, 256, 132, 0> [autotune], min_blocks(2),
        split_k(sgemm_split_k_128x128x16_w64x32), serial_split_k(sgemm_serial_split_k_128x128x16_w64x32),
        stream_k(sgemm_stream_k_128x128x16_w64x32), strided(sgemm_strided_128x128x16_w64x32);
    sgemm_multistage_swizzled_128x128x16_w64x32       = 10 multistage::sgemm_multistage::<128, 128, 16, 64, 32, 1, 2, 8, 4, 256, 132, 8> [autotune], min_blocks(2),
        strided(sgemm_strided_swizzled_128x128x16_w64x32);
    /// Small tiles for outputs with few 128 × 128 tiles (1024², a short side of 32–64): four
    /// times the blocks, 4 warps of 32 × 32. Held to 128 registers (130 without the bound),
    /// four blocks an SM instead of three: on an H200, 7265 × 1317 × 163 ran at 0.814×
    /// cuBLAS against 0.735×, 16326 × 125 × 113 at 0.823× against 0.703×.
    sgemm_multistage_64x64x16_w32x32                  = 10 multistage::sgemm_multistage::<64, 64, 16, 32, 32, 1, 1, 8, 4, 128, 68, 0> [autotune], min_blocks(4), split_k(sgemm_split_k_64x64x16_w32x32),
        serial_split_k(sgemm_serial_split_k_64x64x16_w32x32), stream_k(sgemm_stream_k_64x64x16_w32x32),
        strided(sgemm_strided_64x64x16_w32x32);
    /// cuBLAS's tile for mid-size outputs on an H200 (`sm80_xmma_gemm_…_tilesize64x64x8_stage3_warpsize1x4x1`):
    /// 64 × 64 × 8 in 4 warps side by side, each 64 × 16.
    sgemm_multistage_64x64x8_w64x16                   = 10 multistage::sgemm_multistage::<64, 64, 8, 64, 16, 1, 1, 8, 4, 128, 68, 0> [autotune], split_k(sgemm_split_k_64x64x8_w64x16);
    sgemm_multistage_128x32x16_w32x32                 = 10 multistage::sgemm_multistage::<128, 32, 16, 32, 32, 1, 1, 8, 4, 128, 132, 0> [autotune], split_k(sgemm_split_k_128x32x16_w32x32),
        serial_split_k(sgemm_serial_split_k_128x32x16_w32x32),
        strided(sgemm_strided_128x32x16_w32x32);
    /// Half the 128 × 32 tile, in 2 warps of 32 × 32: twice the blocks for thin outputs
    /// with a short `k` (cuBLAS's choice on an H200 for 13750 × 215 × 70:
    /// `…tilesize64x32x8_stage3_warpsize1x2x1`, 645 blocks of 64 threads), and split in `k`
    /// for thin outputs with a longer one (cuBLAS's same kernel on 2091 × 1706 × 28, in 8
    /// slices: H200, same run, 0.023 → 0.019 ms, split in 8).
    sgemm_multistage_64x32x16_w32x32                  = 10 multistage::sgemm_multistage::<64, 32, 16, 32, 32, 1, 1, 8, 4, 64, 68, 0> [autotune], split_k(sgemm_split_k_64x32x16_w32x32),
        serial_split_k(sgemm_serial_split_k_64x32x16_w32x32);
    sgemm_double_buffered_32x128x16_w32x32            = 7 double_buffered::sgemm_double_buffered::<32, 128, 16, 32, 32, 1, 1, 8, 4, 128> [autotune];
    /// An output 32 rows tall (a linear layer on a batch of 32) without a 64-row tile's idle
    /// half, with split-k for a long `k` (2 warps of 32 × 64).
    sgemm_multistage_32x128x16_w32x64                 = 10 multistage::sgemm_multistage::<32, 128, 16, 32, 64, 1, 2, 8, 4, 64, 36, 0> [autotune], split_k(sgemm_split_k_32x128x16_w32x64),
        serial_split_k(sgemm_serial_split_k_32x128x16_w32x64),
        strided(sgemm_strided_32x128x16_w32x64);
    /// Half of it, in 2 warps of 32 × 32: twice the blocks for outputs a few rows tall,
    /// very wide, with a short `k` (cuBLAS's choice on an H200 for 24 × 333 × 50001:
    /// `…tilesize32x64x8_stage3_warpsize1x2x1`, 782 blocks of 64 threads).
    sgemm_multistage_32x64x16_w32x32                  = 10 multistage::sgemm_multistage::<32, 64, 16, 32, 32, 1, 1, 8, 4, 64, 36, 0> [autotune], split_k(sgemm_split_k_32x64x16_w32x32);
    /// The 32 × 128 tile's transpose, for outputs 32 columns wide (2 warps of 64 × 32).
    sgemm_multistage_128x32x16_w64x32                 = 10 multistage::sgemm_multistage::<128, 32, 16, 64, 32, 1, 2, 8, 4, 64, 132, 0> [autotune], split_k(sgemm_split_k_128x32x16_w64x32),
        serial_split_k(sgemm_serial_split_k_128x32x16_w64x32),
        strided(sgemm_strided_128x32x16_w64x32);
    /// Its transpose, for outputs a few 64-row tiles tall with a long `k` (4 warps of
    /// 32 × 64): 64 accumulators a thread as in the 128 × 128 tiles, with half their rows of
    /// padding at most.
    sgemm_multistage_64x128x16_w32x64                 = 10 multistage::sgemm_multistage::<64, 128, 16, 32, 64, 1, 2, 8, 4, 128, 68, 0> [autotune], split_k(sgemm_split_k_64x128x16_w32x64),
        serial_split_k(sgemm_serial_split_k_64x128x16_w32x64), stream_k(sgemm_stream_k_64x128x16_w32x64),
        strided(sgemm_strided_64x128x16_w32x64);
    /// The same tile held to 168 registers (ptxas for sm_90: 187 without the bound), three
    /// blocks an SM instead of two: more warps to hide latency where the grid fills more
    /// than two blocks an SM, fewer registers a thread where it does not (H200, same run:
    /// 15107 × 249 × 719 0.907× cuBLAS against 0.842×; 199 × 849 × 8263, 260 blocks,
    /// 0.734× against 0.768×). The tuner times both. At that bound its entry and its
    /// split-k entry spill 128 bytes (ptxas 13.0, sm_90: `scripts/check-sgemm-registers.sh`;
    /// 40 bytes, the split-k entry alone, before rung 10's checked loop was peeled), none in
    /// the loop over the k-tiles inside the depth, and it was still the tuner's choice on
    /// mid-size products with a long `k` (313 × 9268 × 1685 in 11 slices, 9062 × 3181 × 87
    /// in 8; 37 × 8634 × 13467 in 7 at 0.860× cuBLAS).
    sgemm_multistage_occ3_64x128x16_w32x64            = 10 multistage::sgemm_multistage::<64, 128, 16, 32, 64, 1, 2, 8, 4, 128, 68, 0> [autotune], min_blocks(3), split_k(sgemm_split_k_occ3_64x128x16_w32x64),
        serial_split_k(sgemm_serial_split_k_occ3_64x128x16_w32x64),
        stream_k(sgemm_stream_k_occ3_64x128x16_w32x64);
    /// The 64 × 128 × 16 tile at a `BK` of 8 (cuBLAS's depth for these tiles): a `k` padded
    /// to 8 rather than 16, and half the unrolled loop. On an H200, 6043 × 35 × 6790: 0.144
    /// ms against 0.178 at a `BK` of 16; 12570 × 817 × 241: 0.150 against 0.173 (split in
    /// two, the fastest 16-deep run).
    sgemm_multistage_64x128x8_w32x64                  = 10 multistage::sgemm_multistage::<64, 128, 8, 32, 64, 1, 2, 8, 4, 128, 68, 0> [autotune], split_k(sgemm_split_k_64x128x8_w32x64),
        serial_split_k(sgemm_serial_split_k_64x128x8_w32x64);
    /// For outputs 64 columns wide (4 warps of 64 × 32).
    sgemm_multistage_128x64x16_w64x32                 = 10 multistage::sgemm_multistage::<128, 64, 16, 64, 32, 1, 2, 8, 4, 128, 132, 0> [autotune], split_k(sgemm_split_k_128x64x16_w64x32),
        serial_split_k(sgemm_serial_split_k_128x64x16_w64x32), stream_k(sgemm_stream_k_128x64x16_w64x32),
        strided(sgemm_strided_128x64x16_w64x32);
    /// For outputs 65 to 96 columns wide, where two 64-column tiles or one of 128 columns
    /// compute a quarter to a half of zeros: 6 warps of 32 × 48 (a row of the `b` tile is
    /// 24 vectors, so the block's threads are a multiple of 24), 48 accumulators a thread,
    /// held to two blocks an SM (181 registers without the bound, one block). On an H200,
    /// same run: 10576×11401×74 0.769× cuBLAS → 0.802× (split in 16),
    /// 5000×5000×96 1.009× → 1.096×, 2000×20000×70 0.940× → 0.992×. In 3 warps of 32 × 96
    /// (255 registers, 6 warps an SM) the tile was never within 10% of the fastest on 12
    /// narrow shapes, nor at a `BK` of 8 the fastest on any (10576×11401×74: 0.795 ms
    /// against 0.768).
    sgemm_multistage_96x96x16_w32x48                  = 10 multistage::sgemm_multistage::<96, 96, 16, 32, 48, 1, 3, 4, 4, 192, 100, 0> [autotune], min_blocks(2), split_k(sgemm_split_k_96x96x16_w32x48),
        serial_split_k(sgemm_serial_split_k_96x96x16_w32x48),
        strided(sgemm_strided_96x96x16_w32x48);
    // rung 11, tensor cores (opt-in):                      block, BK, warp tile in 16 × 8 mma tiles (MI, NI), stages, threads, group, mma
    /// 8 warps of 64 × 32, three stages in 48 KiB: the simulator's TF32 choice.
    sgemm_tf32_128x128x16_w64x32                      = 11 tensor_core::sgemm_tensor_core::<128, 128, 16, 4, 4, 3, 256, 0, TF32> [tf32, autotune, default], min_blocks(2);
    sgemm_tf32_128x128x16_w64x64                      = 11 tensor_core::sgemm_tensor_core::<128, 128, 16, 4, 8, 3, 128, 0, TF32> [tf32, autotune], min_blocks(2);
    sgemm_tf32_swizzled_128x128x16_w64x32             = 11 tensor_core::sgemm_tensor_core::<128, 128, 16, 4, 4, 3, 256, 8, TF32> [tf32, autotune], min_blocks(2);
    /// Twice the depth per barrier: three stages in 96 KiB of dynamic shared memory (the
    /// opt-in past 48 KiB), two blocks per SM where the SM has the room (sm_80, sm_90).
    sgemm_tf32_128x128x32_w64x64                      = 11 tensor_core::sgemm_tensor_core::<128, 128, 32, 4, 8, 3, 128, 0, TF32> [tf32, autotune], min_blocks(2);
    /// Twice the blocks of the 128 × 128 tiles, for outputs with few of them (72 KiB).
    sgemm_tf32_64x128x32_w32x64                       = 11 tensor_core::sgemm_tensor_core::<64, 128, 32, 2, 8, 3, 128, 0, TF32> [tf32, autotune], min_blocks(2);
    /// The TF32 rung's tiles with BF16 `mma.m16n8k16`: 8 warps of 64 × 32, three stages in
    /// 48 KiB (the simulator's BF16 choice).
    sgemm_bf16_128x128x16_w64x32                      = 11 tensor_core::sgemm_tensor_core::<128, 128, 16, 4, 4, 3, 256, 0, BF16> [bf16, autotune, default], min_blocks(2);
    sgemm_bf16_128x128x16_w64x64                      = 11 tensor_core::sgemm_tensor_core::<128, 128, 16, 4, 8, 3, 128, 0, BF16> [bf16, autotune], min_blocks(2);
    sgemm_bf16_128x128x32_w64x64                      = 11 tensor_core::sgemm_tensor_core::<128, 128, 32, 4, 8, 3, 128, 0, BF16> [bf16, autotune], min_blocks(2);
    sgemm_bf16_64x128x32_w32x64                       = 11 tensor_core::sgemm_tensor_core::<64, 128, 32, 2, 8, 3, 128, 0, BF16> [bf16, autotune], min_blocks(2);
}

/// This block's `BM × BN` tile of `out`: where it starts, and how many rows and columns of
/// `out` are left from there (at least one of each, since the grid is `cdiv(n, BN) ×
/// cdiv(m, BM)`). Counting what is left instead of computing `row0 + BM` cannot overflow,
/// whatever `m` is.
#[derive(Clone, Copy, Debug)]
pub struct BlockTile {
    pub row0: u32,
    pub col0: u32,
    pub rows_left: u32,
    pub cols_left: u32,
}

impl BlockTile {
    /// The tile of block `(blockIdx.x, blockIdx.y)` = (column block, row block).
    #[inline(always)]
    pub fn of_block(bm: u32, bn: u32, m: u32, n: u32) -> Self {
        Self::at(thread::block_idx_y() * bm, thread::block_idx_x() * bn, m, n)
    }

    /// This block's tile in launch order if `group` is 0, else in the grouped order of rung
    /// 9 ([`swizzled::grouped`]). `group` is a const generic of the kernels that take it, so
    /// the branch folds away.
    #[inline(always)]
    pub fn ordered(bm: u32, bn: u32, m: u32, n: u32, group: u32) -> Self {
        if group > 0 {
            swizzled::grouped(bm, bn, m, n, group)
        } else {
            Self::of_block(bm, bn, m, n)
        }
    }

    /// The tile starting at `(row0, col0)` of an `m × n` output.
    #[inline(always)]
    pub fn at(row0: u32, col0: u32, m: u32, n: u32) -> Self {
        Self {
            row0,
            col0,
            rows_left: m - row0,
            cols_left: n - col0,
        }
    }

    /// Whether all `bm × bn` outputs lie inside `out`.
    #[inline(always)]
    pub fn is_interior(&self, bm: u32, bn: u32) -> bool {
        self.rows_left >= bm && self.cols_left >= bn
    }
}
