//! cuBLAS SGEMM on the [`Gpu`]'s stream: the baseline the lecture kernels are measured against.
//!
//! cuBLAS is column-major and the kernels are row-major. A row-major `r × c` buffer read
//! column-major is the `c × r` transpose, so `out = a · b` (row-major) is computed as the
//! column-major `outᵀ = bᵀ · aᵀ`: `gemm(N, N, m' = n, n' = m, k, A = b (lda = n),
//! B = a (ldb = k), C = out (ldc = n))`. No copies, no transposes.

use super::Gpu;
use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
use cudarc::cublas::result::CublasError;
use cudarc::cublas::sys::{self, cublasMath_t, cublasOperation_t, cublasStatus_t};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use cudarc::driver::{CudaSlice, CudaStream};
use std::ffi::c_int;
use std::sync::Arc;

/// What [`Cublas::sgemm`]'s errors name: its zeroing of a trivial product, and its call.
const SGEMM_CALLS: (&str, &str) = (
    "cublasSgemm (zeroing a trivial product)",
    "cublasSgemm_v2 (a dimension exceeds i32::MAX)",
);

/// What [`Cublas::gemm_bf16`]'s errors name.
const GEMM_EX_CALLS: (&str, &str) = (
    "cublasGemmEx (zeroing a trivial product)",
    "cublasGemmEx (a dimension exceeds i32::MAX)",
);

/// How cuBLAS may compute an FP32 product.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CublasMath {
    /// Plain FP32 on the CUDA cores: `CUBLAS_DEFAULT_MATH`, which keeps at least the precision
    /// asked for, so `cublasSgemm` uses no TF32 tensor cores (those need
    /// `CUBLAS_TF32_TENSOR_OP_MATH`). The like-for-like baseline for the lecture's kernels.
    Fp32,
    /// TF32 tensor cores (`CUBLAS_TF32_TENSOR_OP_MATH`): inputs rounded to a 10-bit mantissa,
    /// FP32 accumulation. What the hardware can do when FP32 inputs may lose precision.
    Tf32,
    /// BF16 tensor cores on BF16 operands: `cublasGemmEx` with `A`, `B` in `CUDA_R_16BF`
    /// (the f32 inputs rounded to nearest even, once, before any timing: see
    /// [`Gpu::upload_bf16`]), `C` in f32 and `CUBLAS_COMPUTE_32F`. It reads half the bytes
    /// of the FP32 operands that [`Precision::Bf16`](kernels_gpu::sgemm::Precision::Bf16)
    /// kernels read; `CUBLAS_COMPUTE_32F_FAST_16BF` on f32 operands, the like-for-like mode,
    /// measured exactly TF32's errors on an H100 (cuBLAS may compute above the precision
    /// asked for), so it would not be a BF16 baseline.
    Bf16,
}

impl CublasMath {
    pub const ALL: [CublasMath; 3] = [Self::Fp32, Self::Tf32, Self::Bf16];

    /// Short name: `fp32`, `tf32` or `bf16`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fp32 => "fp32",
            Self::Tf32 => "tf32",
            Self::Bf16 => "bf16",
        }
    }

    /// How reports name it: `cuBLAS FP32`, `cuBLAS TF32` or `cuBLAS BF16`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Fp32 => "cuBLAS FP32",
            Self::Tf32 => "cuBLAS TF32",
            Self::Bf16 => "cuBLAS BF16",
        }
    }

    /// The cuBLAS math mode the handle is set to (BF16 is asked for per call, by the
    /// compute type of `cublasGemmEx`).
    pub fn mode(self) -> cublasMath_t {
        match self {
            Self::Fp32 | Self::Bf16 => cublasMath_t::CUBLAS_DEFAULT_MATH,
            Self::Tf32 => cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH,
        }
    }

    /// The math mode that computes in `precision`: the baseline of its kernels.
    pub fn of(precision: kernels_gpu::sgemm::Precision) -> Self {
        use kernels_gpu::sgemm::Precision;
        match precision {
            Precision::Fp32 => Self::Fp32,
            Precision::Tf32 => Self::Tf32,
            Precision::Bf16 => Self::Bf16,
        }
    }

    /// How it rounds the inputs, as the kernels' [`Precision`](kernels_gpu::sgemm::Precision)
    /// says it (for error bounds).
    pub fn precision(self) -> kernels_gpu::sgemm::Precision {
        use kernels_gpu::sgemm::Precision;
        match self {
            Self::Fp32 => Precision::Fp32,
            Self::Tf32 => Precision::Tf32,
            Self::Bf16 => Precision::Bf16,
        }
    }
}

impl std::fmt::Display for CublasMath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// A cuBLAS handle bound to a [`Gpu`]'s stream, so its GEMMs queue behind (and are timed
/// like) the kernels' launches.
pub struct Cublas {
    blas: CudaBlas,
    stream: Arc<CudaStream>,
    math: CublasMath,
}

/// Tags a cuBLAS error with the call that produced it.
fn call<T>(call: &'static str, r: std::result::Result<T, CublasError>) -> Result<T> {
    r.map_err(|source| Error::Cublas { call, source })
}

impl Cublas {
    /// Whether the cuBLAS library (`libcublas.so`) can be loaded. cudarc loads it on first
    /// use and panics if it is missing; [`Cublas::new`] checks this first.
    pub fn is_available() -> bool {
        // SAFETY: only tries to open the library.
        unsafe { sys::is_culib_present() }
    }

    /// A handle on `gpu`'s stream with math mode `math`. Fails with [`Error::Cublas`] if
    /// the library cannot be loaded (`call` names the library, the status is
    /// `CUBLAS_STATUS_NOT_INITIALIZED`, what cuBLAS itself reports when it cannot start).
    pub fn new(gpu: &Gpu, math: CublasMath) -> Result<Self> {
        if !Self::is_available() {
            return Err(Error::Cublas {
                call: "loading libcublas.so (not found)",
                source: CublasError(cublasStatus_t::CUBLAS_STATUS_NOT_INITIALIZED),
            });
        }
        let stream = gpu.stream().clone();
        let blas = call("cublasCreate", CudaBlas::new(stream.clone()))?;
        let mut this = Self { blas, stream, math };
        this.set_math(math)?;
        Ok(this)
    }

    /// The math mode GEMMs run with.
    pub fn math(&self) -> CublasMath {
        self.math
    }

    /// Changes the math mode of later GEMMs.
    pub fn set_math(&mut self, math: CublasMath) -> Result<()> {
        // SAFETY: the handle is live (owned by `self.blas`); the mode is a valid enum value.
        let status = unsafe { sys::cublasSetMathMode(*self.blas.handle(), math.mode()) };
        call("cublasSetMathMode", status.result())?;
        self.math = math;
        Ok(())
    }

    /// The math mode as cuBLAS reports it (`cublasGetMathMode`): to check what
    /// [`set_math`](Self::set_math) did.
    pub fn reported_mode(&self) -> Result<cublasMath_t> {
        let mut mode = cublasMath_t::CUBLAS_DEFAULT_MATH;
        // SAFETY: the handle is live; writes one enum value.
        let status = unsafe { sys::cublasGetMathMode(*self.blas.handle(), &mut mode) };
        call("cublasGetMathMode", status.result())?;
        Ok(mode)
    }

    /// The cuBLAS library version, e.g. 130100 for 13.1.0.
    pub fn version(&self) -> Result<i32> {
        let mut version: c_int = 0;
        // SAFETY: the handle is live; writes one int.
        let status = unsafe { sys::cublasGetVersion_v2(*self.blas.handle(), &mut version) };
        call("cublasGetVersion", status.result())?;
        Ok(version)
    }

    /// What both plain GEMM calls do first. cuBLAS would accept m, n or k = 0, but with k = 0
    /// and beta = 0 whether `out` is written at all is not something to rely on: a trivial
    /// product zeroes `out`, as the kernels' path does, and is `None`. Otherwise `(m, k, n)`
    /// as cuBLAS's `int`s (MatmulShape allows up to u32::MAX - 64): a larger one is a typed
    /// error. `calls` names the zeroing and the call for errors.
    fn dims_or_zero<T>(
        &self, calls: (&'static str, &'static str), a: &CudaSlice<T>, b: &CudaSlice<T>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<Option<(c_int, c_int, c_int)>> {
        if super::zero_if_trivial(&self.stream, calls.0, a, b, out, shape)? {
            return Ok(None);
        }
        let dim = |d: u32| {
            c_int::try_from(d).map_err(|_| Error::Cublas {
                call: calls.1,
                source: CublasError(cublasStatus_t::CUBLAS_STATUS_INVALID_VALUE),
            })
        };
        Ok(Some((dim(shape.m)?, dim(shape.k)?, dim(shape.n)?)))
    }

    /// Row-major `out[m×n] = a[m×k] · b[k×n]` on device buffers, with the handle's math mode.
    /// Asynchronous, like [`Gpu::matmul_device`]: it returns once the GEMM is queued.
    pub fn sgemm(
        &self, a: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        let Some((m, k, n)) = self.dims_or_zero(SGEMM_CALLS, a, b, out, shape)? else {
            return Ok(());
        };
        let cfg = GemmConfig {
            transa: cublasOperation_t::CUBLAS_OP_N,
            transb: cublasOperation_t::CUBLAS_OP_N,
            // Column-major outᵀ (n × m) = bᵀ (n × k) · aᵀ (k × m).
            m: n,
            n: m,
            k,
            alpha: 1.0f32,
            lda: n,
            ldb: k,
            beta: 0.0f32,
            ldc: n,
        };
        if self.math == CublasMath::Bf16 {
            return Err(Error::Cublas {
                call: "cublasSgemm_v2 (BF16 math takes BF16 operands: Cublas::gemm_bf16)",
                source: CublasError(cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED),
            });
        }
        // SAFETY: `b` holds k·n elements (column-major n × k, lda = n), `a` holds m·k
        // (column-major k × m, ldb = k) and `out` m·n (column-major n × m, ldc = n), all
        // checked above; every leading dimension is at least its matrix's row count and ≥ 1.
        let status = unsafe { self.blas.gemm(cfg, b, a, out) };
        call("cublasSgemm_v2", status)
    }

    /// Row-major `out[m×n] = a[m×k] · b[k×n]` with `a`, `b` in BF16 (from
    /// [`Gpu::upload_bf16`]) and f32 accumulation and output, by `cublasGemmEx`
    /// (`CUDA_R_16BF`, `CUBLAS_COMPUTE_32F`): the BF16 baseline ([`CublasMath::Bf16`]).
    pub fn gemm_bf16(
        &self, a: &CudaSlice<u16>, b: &CudaSlice<u16>, out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        use cudarc::driver::{DevicePtr, DevicePtrMut};
        use sys::{cublasComputeType_t, cublasGemmAlgo_t, cudaDataType};
        let Some((m, k, n)) = self.dims_or_zero(GEMM_EX_CALLS, a, b, out, shape)? else {
            return Ok(());
        };
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (pa, _ra) = a.device_ptr(&self.stream);
        let (pb, _rb) = b.device_ptr(&self.stream);
        let (pc, _rc) = out.device_ptr_mut(&self.stream);
        // SAFETY: as `sgemm`: column-major outᵀ (n × m) = bᵀ (n × k, lda = n) · aᵀ (k × m,
        // ldb = k), every buffer checked against the shape above; the pointers stay valid
        // while the records above live, and the scalars are f32, as CUBLAS_COMPUTE_32F takes.
        let status = unsafe {
            sys::cublasGemmEx(
                *self.blas.handle(),
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                n,
                m,
                k,
                (&alpha as *const f32).cast(),
                pb as *const _,
                cudaDataType::CUDA_R_16BF,
                n,
                pa as *const _,
                cudaDataType::CUDA_R_16BF,
                k,
                (&beta as *const f32).cast(),
                pc as *mut _,
                cudaDataType::CUDA_R_32F,
                n,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        };
        call("cublasGemmEx", status.result())
    }

    /// `gemm` ([`crate::problem::gemm::Gemm`]) by `cublasSgemmStridedBatched`, with the handle's math
    /// mode: the baseline of [`Gpu::gemm_device`]. The same checks and typed errors first;
    /// a dimension, leading dimension or batch beyond cuBLAS's `int` is [`Error::Cublas`].
    pub fn gemm(
        &self, gemm: &crate::problem::gemm::Gemm, a: &CudaSlice<f32>, b: &CudaSlice<f32>,
        c: &mut CudaSlice<f32>,
    ) -> Result<()> {
        use crate::problem::gemm::Op;
        use cudarc::cublas::StridedBatchedConfig;
        if self.math == CublasMath::Bf16 {
            return Err(Error::Cublas {
                call: "cublasSgemmStridedBatched (BF16 math takes BF16 operands: Cublas::gemm_bf16)",
                source: CublasError(cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED),
            });
        }
        let p = gemm.check(a.len(), b.len(), c.len())?;
        if p.is_empty() {
            return Ok(());
        }
        let (a, b) = p.operands(a, b);
        let int = |d: u64| {
            c_int::try_from(d).map_err(|_| Error::Cublas {
                call: "cublasSgemmStridedBatched (a size exceeds i32::MAX)",
                source: CublasError(cublasStatus_t::CUBLAS_STATUS_INVALID_VALUE),
            })
        };
        let op = |o: Op| match o {
            Op::N => cublasOperation_t::CUBLAS_OP_N,
            Op::T => cublasOperation_t::CUBLAS_OP_T,
        };
        // Row-major C (m × n) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: b's storage first, with
        // b's op.
        let cfg = StridedBatchedConfig {
            gemm: GemmConfig {
                transa: op(p.op_b),
                transb: op(p.op_a),
                m: int(p.n.into())?,
                n: int(p.m.into())?,
                k: int(p.k.into())?,
                alpha: p.alpha,
                lda: int(p.ldb.into())?,
                ldb: int(p.lda.into())?,
                beta: p.beta,
                ldc: int(p.ldc.into())?,
            },
            batch_size: int(p.batch.into())?,
            stride_a: p.stride_b as i64,
            stride_b: p.stride_a as i64,
            stride_c: p.stride_c as i64,
        };
        // SAFETY: Gemm::check found every product's matrices inside the buffers with these
        // leading dimensions and strides, and the outputs disjoint; `c` is borrowed mutably.
        let status = unsafe { self.blas.gemm_strided_batched(cfg, b, a, c) };
        call("cublasSgemmStridedBatched", status)
    }
}
