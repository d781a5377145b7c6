//! A fused linear layer, `out = relu(x @ W + b)`, from a kernel crate of its own
//! (`fused-linear-kernels`): the SGEMM ladder's multistage configuration with a bias-and-relu
//! epilogue, against the unfused sequences — the same SGEMM configuration, or cuBLAS, then a
//! separate bias-relu kernel that reads the product back from global memory.
//!
//! How the pieces fit, as they would in any crate that reuses `kernels-gpu`:
//!
//! * `build.rs` builds `../kernels` to PTX with `nvptx_builder::PtxBuilder`; it is embedded
//!   here as [`FUSED_LINEAR_PTX`];
//! * on a GPU, [`FusedLinearGpu`] loads that module into the context of a
//!   [`kernels_gpu_host::gpu::Gpu`] ([`Gpu::load_module`]) and launches its entries with
//!   cudarc on the same stream as the `Gpu`'s own matmul, so all can be timed with
//!   [`Gpu::time_ms`];
//! * on the host, `fused_linear_kernels` is an ordinary dependency whose kernels run in the
//!   CPU simulator ([`sim`]), checked against the plain CPU sequence [`cpu_unfused`].
//!
//! Both sequences accumulate each dot product with FMAs in the same order (zero padding adds
//! exact zeros), then add the bias once and clamp: fused, unfused and [`cpu_unfused`] agree
//! bit for bit, and all are checked against the f64 reference [`reference_f64`].

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, DriverError, PushKernelArg};
use fused_linear_kernels::{BIAS_RELU, FUSED_LINEAR, config};
use kernels_gpu_host::check::reference::{self, Accuracy, Reference};
use kernels_gpu_host::gpu::Cublas;
use kernels_gpu_host::gpu::{Gpu, launch_config};
use kernels_gpu_host::kernels_gpu::catalogue::{Extent, KernelSpec};
use kernels_gpu_host::launch::Launch;
use kernels_gpu_host::problem::error::{Error, Result};
use kernels_gpu_host::{MatmulKernel, MatmulShape, SgemmKernel, TileWidth};
use std::sync::Arc;

pub use fused_linear_kernels::{BLOCK, relu_f32};

/// The `fused-linear-kernels` PTX module, built by `build.rs`: this crate's two entries
/// and no other (it uses `kernels-gpu` with `default-features = false`, without its
/// entry points; a CPU test checks).
pub const FUSED_LINEAR_PTX: &str =
    include_str!(concat!(env!("OUT_DIR"), "/fused_linear_kernels.ptx"));

/// Entry point of the fused kernel.
pub const FUSED_ENTRY: &str = FUSED_LINEAR.entry;
/// Entry point of the unfused sequences' bias-relu kernel.
pub const BIAS_RELU_ENTRY: &str = BIAS_RELU.entry;

/// The matmul of the unfused sequence: the SGEMM configuration the fused kernel runs
/// ([`config`]), as the host library launches it, so the two differ only in the epilogue.
pub const UNFUSED_MATMUL: MatmulKernel = MatmulKernel::Sgemm(SgemmKernel::Config(config::INDEX));

/// The tile width argument of the host library's matmul calls (the SGEMM kernels have
/// none; it is ignored).
const NO_TW: TileWidth = TileWidth::Tw16;

/// Inputs of one layer: `x` is `m × k`, `w` is `k × n`, `b` has `n` elements (row-major).
#[derive(Clone, Debug)]
pub struct Operands {
    pub shape: MatmulShape,
    pub x: Vec<f32>,
    pub w: Vec<f32>,
    pub b: Vec<f32>,
}

impl Operands {
    /// Seeded operands uniform in [-1, 1): about half the outputs are negative before the
    /// relu, so the activation matters.
    pub fn random(shape: MatmulShape, seed: u64) -> Self {
        let mut rng = kernels_gpu_host::check::data::Rng::new(seed);
        let (lx, lw, _) = shape.lens();
        let (x, w, b) = (rng.signed(lx), rng.signed(lw), rng.signed(shape.n as usize));
        Self { shape, x, w, b }
    }

    /// Checks the three lengths against the shape ([`Error::InputLength`]).
    pub fn check(&self) -> Result<()> {
        check_operands(&self.x, &self.w, &self.b, self.shape)
    }
}

/// Checks `x`, `w` and `b` against `shape` ([`Error::InputLength`]).
pub fn check_operands(x: &[f32], w: &[f32], b: &[f32], shape: MatmulShape) -> Result<()> {
    shape.check_inputs(x.len(), w.len())?;
    if b.len() != shape.n as usize {
        return Err(Error::InputLength {
            operand: "bias",
            rows: 1,
            cols: shape.n as usize,
            expected: shape.n as usize,
            actual: b.len(),
        });
    }
    Ok(())
}

/// The unfused sequence on the CPU in f32, rounded as the kernels round: each dot product
/// accumulated with FMAs over `i = 0..k` in order, then `+ b[c]`, then `max(·, 0)`.
pub fn cpu_unfused(x: &[f32], w: &[f32], b: &[f32], shape: MatmulShape) -> Vec<f32> {
    let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
    let mut y = vec![0.0f32; m * n];
    for (r, row) in y.chunks_mut(n.max(1)).enumerate().take(m) {
        for (c, out) in row.iter_mut().enumerate() {
            let mut p = 0.0f32;
            for i in 0..k {
                p = x[r * k + i].mul_add(w[i * n + c], p);
            }
            *out = relu_f32(p + b[c]);
        }
    }
    y
}

/// `relu(x @ W + b)` in f64, with `Σ|x||w| + |b|` per element as the scale of the f32
/// rounding error (`relu` does not increase an error).
pub fn reference_f64(x: &[f32], w: &[f32], b: &[f32], shape: MatmulShape) -> Reference {
    let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
    let mut r = reference::matmul_f64(x, w, m, k, n);
    for (i, (v, g)) in r.values.iter_mut().zip(&mut r.magnitudes).enumerate() {
        let bias = b[i % n] as f64;
        *v = (*v + bias).max(0.0);
        *g += bias.abs();
    }
    r
}

/// Compares `out` with the reference; [`within_bound`] says whether it passes.
pub fn accuracy(out: &[f32], reference: &Reference) -> Accuracy {
    reference::compare(out, reference)
}

/// Whether `acc` is within the f32 error bound of `k` FMAs plus the bias add.
pub fn within_bound(acc: &Accuracy, k: u32) -> bool {
    acc.within_f32_bound(k as usize + 1)
}

/// The first index where `a` and `b` differ (by `==`, so `0.0 == -0.0`), or `None` if they
/// are equal, lengths included.
pub fn first_mismatch(a: &[f32], b: &[f32]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(p, q)| p != q)
        .or((a.len() != b.len()).then(|| a.len().min(b.len())))
}

/// Largest `|a[i] - b[i]|`.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&p, &q)| (p as f64 - q as f64).abs())
        .fold(0.0, f64::max)
}

/// [`Error::InputLength`] unless `buf` holds `rows * cols` floats.
fn check_len(operand: &'static str, rows: u32, cols: u32, buf: &CudaSlice<f32>) -> Result<()> {
    let expected = rows as usize * cols as usize;
    if buf.len() != expected {
        return Err(Error::InputLength {
            operand,
            rows: rows as usize,
            cols: cols as usize,
            expected,
            actual: buf.len(),
        });
    }
    Ok(())
}

/// The fused kernel's launch for `shape`: [`config`]'s tiles over the `m × n` output.
pub fn fused_launch(shape: MatmulShape) -> Launch {
    FUSED_LINEAR.launch(
        Extent::Matrix {
            rows: shape.m,
            cols: shape.n,
        },
        0,
    )
}

/// The bias-relu kernel's launch for an `m × n` output: one thread per element.
pub fn bias_relu_launch(shape: MatmulShape) -> Launch {
    BIAS_RELU.launch(Extent::Items(shape.m * shape.n), 0)
}

/// The kernels in the CPU simulator: the same source as the PTX, with the simulator's
/// checks (races, barriers, shared bounds).
pub mod sim {
    use super::*;
    use fused_linear_kernels::entry;
    use kernels_gpu_host::backend::Backend;
    use kernels_gpu_host::sim::{SharedPtr, Simulator};

    /// The fused kernel, one launch.
    pub fn fused(sim: &Simulator, ops: &Operands) -> Result<Vec<f32>> {
        ops.check()?;
        let s = ops.shape;
        let mut out = vec![0.0f32; s.lens().2];
        if s.m == 0 || s.n == 0 {
            return Ok(out);
        }
        let (x, w, b, o) = (
            SharedPtr(ops.x.as_ptr() as *mut f32),
            SharedPtr(ops.w.as_ptr() as *mut f32),
            SharedPtr(ops.b.as_ptr() as *mut f32),
            SharedPtr(out.as_mut_ptr()),
        );
        // SAFETY: the buffers have the shape's lengths (checked above), the shape fits u32
        // indices (MatmulShape), and the launch is the kernel's.
        sim.launch(&fused_launch(s), move || unsafe {
            entry::fused_linear(x.get(), w.get(), b.get(), o.get(), s.m, s.n, s.k)
        })?;
        Ok(out)
    }

    /// The unfused sequence: the simulator's [`UNFUSED_MATMUL`], then the bias-relu kernel
    /// into a buffer of its own.
    pub fn unfused(sim: &Simulator, ops: &Operands) -> Result<Vec<f32>> {
        ops.check()?;
        let s = ops.shape;
        let y = sim.matmul(UNFUSED_MATMUL, NO_TW, &ops.x, &ops.w, s)?;
        let mut out = vec![0.0f32; y.len()];
        if y.is_empty() {
            return Ok(out);
        }
        let (yp, bp, op) = (
            SharedPtr(y.as_ptr() as *mut f32),
            SharedPtr(ops.b.as_ptr() as *mut f32),
            SharedPtr(out.as_mut_ptr()),
        );
        // SAFETY: y and out hold m * n floats, b holds n > 0; the launch covers m * n.
        sim.launch(&bias_relu_launch(s), move || unsafe {
            entry::bias_relu(yp.get(), bp.get(), op.get(), s.m, s.n)
        })?;
        Ok(out)
    }
}

/// A queued launch's result in the host library's error: `cuLaunchKernel` failed.
fn launched<T>(result: std::result::Result<T, DriverError>) -> Result<()> {
    result.map(drop).map_err(|source| Error::Driver {
        call: "cuLaunchKernel",
        source,
    })
}

/// The example's kernels on a GPU: its own module loaded beside the [`Gpu`]'s, launched
/// with cudarc on the `Gpu`'s stream.
pub struct FusedLinearGpu<'g> {
    gpu: &'g Gpu,
    /// Keeps the module loaded for as long as its functions are used.
    _module: Arc<CudaModule>,
    fused: CudaFunction,
    bias_relu: CudaFunction,
}

impl<'g> FusedLinearGpu<'g> {
    /// Loads [`FUSED_LINEAR_PTX`] into `gpu`'s context and looks up the two entries.
    pub fn new(gpu: &'g Gpu) -> Result<Self> {
        let module = gpu.load_module(FUSED_LINEAR_PTX)?;
        let load = |name: &str| {
            module.load_function(name).map_err(|source| match source.0 {
                cudarc::driver::sys::cudaError_enum::CUDA_ERROR_NOT_FOUND => Error::EntryNotFound {
                    entry: name.to_owned(),
                },
                _ => Error::Driver {
                    call: "cuModuleGetFunction",
                    source,
                },
            })
        };
        Ok(Self {
            gpu,
            fused: load(FUSED_ENTRY)?,
            bias_relu: load(BIAS_RELU_ENTRY)?,
            _module: module,
        })
    }

    /// The `Gpu` it launches on.
    pub fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// The launch of `spec` for `shape` (by `launch_for`), checked against the device's
    /// limits; `None` where the `m × n` output is empty and there is nothing to launch.
    fn checked_launch(
        &self, spec: &KernelSpec, launch_for: fn(MatmulShape) -> Launch, shape: MatmulShape,
    ) -> Result<Option<Launch>> {
        if shape.m == 0 || shape.n == 0 {
            return Ok(None);
        }
        let launch = launch_for(shape);
        self.gpu.limits().check(&launch, spec.static_shared_bytes)?;
        Ok(Some(launch))
    }

    /// `out = relu(x @ w + b)` in one launch, queued on the stream (asynchronous).
    pub fn fused_device(
        &self, x: &CudaSlice<f32>, w: &CudaSlice<f32>, b: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        shape.check_buffers(x.len(), w.len(), out.len())?;
        check_len("bias", 1, shape.n, b)?;
        let Some(launch) = self.checked_launch(&FUSED_LINEAR, fused_launch, shape)? else {
            return Ok(());
        };
        let mut args = self.gpu.stream().launch_builder(&self.fused);
        args.arg(x)
            .arg(w)
            .arg(b)
            .arg(out)
            .arg(&shape.m)
            .arg(&shape.n)
            .arg(&shape.k);
        // SAFETY: the arguments are the entry's (x, weight, bias, out, m, n, k); the
        // buffers have the lengths the shape implies (checked above) and the shape fits
        // u32 indices (MatmulShape); the launch is the kernel's and within the device's
        // limits; `out` is borrowed mutably, so nothing else uses it while it is queued.
        launched(unsafe { args.launch(launch_config(&launch)) })
    }

    /// `out = relu(y + b)` (bias broadcast over the `m` rows of the `m × n` matrix `y`),
    /// queued: the separate pass of the unfused sequences.
    pub fn bias_relu_device(
        &self, y: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        for (operand, buf) in [("y", y), ("out", &*out)] {
            check_len(operand, shape.m, shape.n, buf)?;
        }
        check_len("bias", 1, shape.n, b)?;
        let Some(launch) = self.checked_launch(&BIAS_RELU, bias_relu_launch, shape)? else {
            return Ok(());
        };
        let mut args = self.gpu.stream().launch_builder(&self.bias_relu);
        args.arg(y).arg(b).arg(out).arg(&shape.m).arg(&shape.n);
        // SAFETY: (y, bias, out, m, n) as the entry declares them; y and out hold m * n
        // floats and b holds n > 0 (checked above); the launch covers m * n elements.
        launched(unsafe { args.launch(launch_config(&launch)) })
    }

    /// The unfused sequence, two launches queued: `y = x @ w` with [`UNFUSED_MATMUL`] (or
    /// with `cublas`, if given), then `out = relu(y + b)`; `y` is the intermediate in
    /// global memory.
    #[allow(clippy::too_many_arguments)]
    pub fn unfused_device(
        &self, cublas: Option<&Cublas>, x: &CudaSlice<f32>, w: &CudaSlice<f32>, b: &CudaSlice<f32>,
        y: &mut CudaSlice<f32>, out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        match cublas {
            Some(blas) => blas.sgemm(x, w, y, shape)?,
            None => self
                .gpu
                .matmul_device(UNFUSED_MATMUL, NO_TW, x, w, y, shape)?,
        }
        self.bias_relu_device(y, b, out, shape)
    }

    /// [`fused_device`](Self::fused_device) from and to host memory, synchronised.
    pub fn fused(&self, ops: &Operands) -> Result<Vec<f32>> {
        ops.check()?;
        let g = self.gpu;
        let (x, w, b) = (g.upload(&ops.x)?, g.upload(&ops.w)?, g.upload(&ops.b)?);
        let mut out = g.zeros(ops.shape.lens().2)?;
        self.fused_device(&x, &w, &b, &mut out, ops.shape)?;
        g.synchronize(FUSED_ENTRY)?;
        g.download(&out)
    }

    /// [`unfused_device`](Self::unfused_device) from and to host memory, synchronised.
    pub fn unfused(&self, cublas: Option<&Cublas>, ops: &Operands) -> Result<Vec<f32>> {
        ops.check()?;
        let g = self.gpu;
        let (x, w, b) = (g.upload(&ops.x)?, g.upload(&ops.w)?, g.upload(&ops.b)?);
        let len = ops.shape.lens().2;
        let (mut y, mut out) = (g.zeros(len)?, g.zeros(len)?);
        self.unfused_device(cublas, &x, &w, &b, &mut y, &mut out, ops.shape)?;
        g.synchronize("matmul + bias_relu")?;
        g.download(&out)
    }
}
