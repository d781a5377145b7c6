//! A fused linear layer, `out = relu(x @ W + b)`, from a kernel crate of its own
//! (`fused-linear-kernels`) built on `kernels-gpu`, against the unfused sequence of three
//! launches (matmul, bias, relu) with intermediates in global memory.
//!
//! How the pieces fit, as they would in any crate that reuses `kernels-gpu`:
//!
//! * `build.rs` builds `../kernels` to PTX with `nvptx_builder::PtxBuilder`; it is embedded
//!   here as [`FUSED_LINEAR_PTX`];
//! * on a GPU, [`FusedLinearGpu`] loads that module into the context of a
//!   [`kernels_gpu_host::gpu::Gpu`] ([`Gpu::load_module`]) and launches its entries with cudarc on the
//!   same stream as the `Gpu`'s own matmul, so both can be timed with [`Gpu::time_ms`];
//! * on the host, `fused_linear_kernels` is an ordinary dependency whose kernels run in the
//!   CPU simulator ([`sim`]), checked against the plain CPU sequence [`cpu_unfused`].
//!
//! Both sequences accumulate each dot product with FMAs in the same order (zero padding adds
//! exact zeros), then add the bias once and clamp: fused, unfused and [`cpu_unfused`] agree
//! bit for bit, and all are checked against the f64 reference [`reference_f64`].

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, PushKernelArg};
use kernels_gpu_host::error::{Error, Result};
use kernels_gpu_host::gpu::Gpu;
use kernels_gpu_host::gpu::launch_config;
use kernels_gpu_host::launch::Dim3;
use kernels_gpu_host::launch::Launch;
use kernels_gpu_host::reference::{self, Accuracy, Reference};
use kernels_gpu_host::{MatmulKernel, MatmulShape, TileWidth};
use std::sync::Arc;

pub use fused_linear_kernels::{BLOCK, TW, relu_f32};

/// The `fused-linear-kernels` PTX module, built by `build.rs`: this crate's three entries
/// and no other (it uses `kernels-gpu` with `default-features = false`, without its
/// entry points; a CPU test checks).
pub const FUSED_LINEAR_PTX: &str =
    include_str!(concat!(env!("OUT_DIR"), "/fused_linear_kernels.ptx"));

/// Entry point of the fused kernel.
pub const FUSED_ENTRY: &str = "fused_linear_tw16";
/// Entry point of the unfused sequence's bias kernel.
pub const BIAS_ENTRY: &str = "bias_add";
/// Entry point of the unfused sequence's relu kernel.
pub const RELU_ENTRY: &str = "relu";

/// The matmul of the unfused sequence: the lecture's static tiled kernel at the fused
/// kernel's tile width, so the two sequences differ only in the epilogue.
pub const UNFUSED_MATMUL: (MatmulKernel, TileWidth) = (MatmulKernel::TiledStatic, TileWidth::Tw16);

/// Bytes of static shared memory of the fused kernel: two `TW × TW` f32 tiles.
pub const FUSED_STATIC_SHARED_BYTES: u32 = (2 * TW * TW * 4) as u32;

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
        let mut rng = kernels_gpu_host::data::Rng::new(seed);
        let (lx, lw, _) = shape.lens();
        let mut signed = |len| -> Vec<f32> {
            rng.uniform(len)
                .into_iter()
                .map(|v| 2.0 * v - 1.0)
                .collect()
        };
        let (x, w, b) = (signed(lx), signed(lw), signed(shape.n as usize));
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

/// The fused kernel's launch: `ceil(n / TW) × ceil(m / TW)` blocks of `TW × TW`.
pub fn fused_launch(shape: MatmulShape) -> Launch {
    let tw = TW as u32;
    Launch {
        grid: Dim3::xy(shape.n.div_ceil(tw), shape.m.div_ceil(tw)),
        block: Dim3::xy(tw, tw),
        dynamic_shared_bytes: 0,
    }
}

/// The elementwise kernels' launch for `len` elements: 1D blocks of [`BLOCK`].
pub fn elementwise_launch(len: u32) -> Launch {
    Launch {
        grid: Dim3::x(fused_linear_kernels::elementwise_blocks(len)),
        block: Dim3::x(BLOCK),
        dynamic_shared_bytes: 0,
    }
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
            entry::fused_linear_tw16(x.get(), w.get(), b.get(), o.get(), s.m, s.n, s.k)
        })?;
        Ok(out)
    }

    /// The unfused sequence: the simulator's [`UNFUSED_MATMUL`], then the bias kernel, then
    /// the relu kernel, each into a buffer of its own.
    pub fn unfused(sim: &Simulator, ops: &Operands) -> Result<Vec<f32>> {
        ops.check()?;
        let s = ops.shape;
        let (kernel, tw) = UNFUSED_MATMUL;
        let y = sim.matmul(kernel, tw, &ops.x, &ops.w, s)?;
        let len = s.m * s.n;
        let (mut z, mut out) = (vec![0.0f32; len as usize], vec![0.0f32; len as usize]);
        if len == 0 {
            return Ok(out);
        }
        let (yp, bp, zp) = (
            SharedPtr(y.as_ptr() as *mut f32),
            SharedPtr(ops.b.as_ptr() as *mut f32),
            SharedPtr(z.as_mut_ptr()),
        );
        // SAFETY: y and z hold m * n floats, b holds n > 0; the launch covers m * n.
        sim.launch(&elementwise_launch(len), move || unsafe {
            entry::bias_add(yp.get(), bp.get(), zp.get(), s.m, s.n)
        })?;
        let (zp, op) = (SharedPtr(z.as_mut_ptr()), SharedPtr(out.as_mut_ptr()));
        // SAFETY: z and out hold len floats; the launch covers len.
        sim.launch(&elementwise_launch(len), move || unsafe {
            entry::relu(zp.get(), op.get(), len)
        })?;
        Ok(out)
    }
}

/// The example's kernels on a GPU: its own module loaded beside the [`Gpu`]'s, launched
/// with cudarc on the `Gpu`'s stream.
pub struct FusedLinearGpu<'g> {
    gpu: &'g Gpu,
    /// Keeps the module loaded for as long as its functions are used.
    _module: Arc<CudaModule>,
    fused: CudaFunction,
    bias: CudaFunction,
    relu: CudaFunction,
}

impl<'g> FusedLinearGpu<'g> {
    /// Loads [`FUSED_LINEAR_PTX`] into `gpu`'s context and looks up the three entries.
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
            bias: load(BIAS_ENTRY)?,
            relu: load(RELU_ENTRY)?,
            _module: module,
        })
    }

    /// The `Gpu` it launches on.
    pub fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// Checks that the device buffers have the lengths `shape` implies.
    fn check_lens(
        shape: MatmulShape, x: &CudaSlice<f32>, w: &CudaSlice<f32>, b: &CudaSlice<f32>,
        out: &CudaSlice<f32>,
    ) -> Result<()> {
        shape.check_inputs(x.len(), w.len())?;
        check_len("bias", 1, shape.n, b)?;
        check_len("out", shape.m, shape.n, out)
    }

    /// `out = relu(x @ w + b)` in one launch, queued on the stream (asynchronous).
    pub fn fused_device(
        &self, x: &CudaSlice<f32>, w: &CudaSlice<f32>, b: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        Self::check_lens(shape, x, w, b, out)?;
        if shape.m == 0 || shape.n == 0 {
            return Ok(());
        }
        let launch = fused_launch(shape);
        self.gpu
            .limits()
            .check(&launch, FUSED_STATIC_SHARED_BYTES)?;
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
        unsafe { args.launch(launch_config(&launch)) }.map_err(|source| Error::Driver {
            call: "cuLaunchKernel",
            source,
        })?;
        Ok(())
    }

    /// `out = y + b` (bias broadcast over the `m` rows of the `m × n` matrix `y`), queued.
    pub fn bias_device(
        &self, y: &CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        for (operand, buf) in [("y", y), ("out", &*out)] {
            check_len(operand, shape.m, shape.n, buf)?;
        }
        check_len("bias", 1, shape.n, b)?;
        let len = shape.m * shape.n;
        if len == 0 {
            return Ok(());
        }
        let launch = elementwise_launch(len);
        self.gpu.limits().check(&launch, 0)?;
        let mut args = self.gpu.stream().launch_builder(&self.bias);
        args.arg(y).arg(b).arg(out).arg(&shape.m).arg(&shape.n);
        // SAFETY: (y, bias, out, m, n) as the entry declares them; y and out hold m * n
        // floats and b holds n > 0 (checked above); the launch covers m * n elements.
        unsafe { args.launch(launch_config(&launch)) }.map_err(|source| Error::Driver {
            call: "cuLaunchKernel",
            source,
        })?;
        Ok(())
    }

    /// `out = max(y, 0)` elementwise, queued.
    pub fn relu_device(&self, y: &CudaSlice<f32>, out: &mut CudaSlice<f32>) -> Result<()> {
        let Ok(len) = u32::try_from(y.len()) else {
            return Err(Error::IndexOverflow {
                operand: "y",
                rows: 1,
                cols: y.len(),
                elements: y.len() as u128,
            });
        };
        check_len("out", 1, len, out)?;
        if len == 0 {
            return Ok(());
        }
        let launch = elementwise_launch(len);
        self.gpu.limits().check(&launch, 0)?;
        let mut args = self.gpu.stream().launch_builder(&self.relu);
        args.arg(y).arg(out).arg(&len);
        // SAFETY: (y, out, len) as the entry declares them; both hold len floats.
        unsafe { args.launch(launch_config(&launch)) }.map_err(|source| Error::Driver {
            call: "cuLaunchKernel",
            source,
        })?;
        Ok(())
    }

    /// The unfused sequence, three launches queued: `y = x @ w` with the `Gpu`'s
    /// [`UNFUSED_MATMUL`], `z = y + b`, `out = max(z, 0)`; `y` and `z` are the
    /// intermediates in global memory.
    #[allow(clippy::too_many_arguments)]
    pub fn unfused_device(
        &self, x: &CudaSlice<f32>, w: &CudaSlice<f32>, b: &CudaSlice<f32>, y: &mut CudaSlice<f32>,
        z: &mut CudaSlice<f32>, out: &mut CudaSlice<f32>, shape: MatmulShape,
    ) -> Result<()> {
        let (kernel, tw) = UNFUSED_MATMUL;
        self.gpu.matmul_device(kernel, tw, x, w, y, shape)?;
        self.bias_device(y, b, z, shape)?;
        self.relu_device(z, out)
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
    pub fn unfused(&self, ops: &Operands) -> Result<Vec<f32>> {
        ops.check()?;
        let g = self.gpu;
        let (x, w, b) = (g.upload(&ops.x)?, g.upload(&ops.w)?, g.upload(&ops.b)?);
        let len = ops.shape.lens().2;
        let (mut y, mut z, mut out) = (g.zeros(len)?, g.zeros(len)?, g.zeros(len)?);
        self.unfused_device(&x, &w, &b, &mut y, &mut z, &mut out, ops.shape)?;
        g.synchronize("matmul + bias_add + relu")?;
        g.download(&out)
    }
}
