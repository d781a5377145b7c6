//! Measures what the driver's JIT compiler costs for the embedded kernels: each entry point's
//! own module ([`ModuleIndex`]) compiled at several optimisation levels and with each global
//! load cache mode (`CU_JIT_OPTIMIZATION_LEVEL`, `CU_JIT_CACHE_MODE`), with the compiler's
//! own wall time (`CU_JIT_WALL_TIME`) at levels 0, 3 and 4 (the default) and the registers and local memory of the result; then
//! how compiling every entry's module scales with threads. Run it with the driver's cache off, so that every load compiles:
//!
//! ```sh
//! CUDA_CACHE_DISABLE=1 cargo run --release --example jit_options [ENTRY ...]
//! ```

use cudarc::driver::sys::{self, CUfunction_attribute as Attr, CUjit_option as Opt};
use kernels_gpu_host::gpu::{Gpu, link_cubin};
use kernels_gpu_host::plan::ptx::KERNELS_PTX;
use nvptx_builder::ptx::split::ModuleIndex;
use std::ffi::{CString, c_void};
use std::time::Instant;

/// The entries measured one by one unless named on the command line: the lecture's, an
/// FP32 SGEMM rung, the tensor-core rungs, a reduction and the sliding scan.
const DEFAULT_ENTRIES: &[&str] = &[
    "matmul_naive",
    "matmul_tiled_static_tw16",
    "sgemm_multistage_128x128x16_w64x32",
    "sgemm_tf32_128x128x32_w64x64",
    "gemm_bf16_128x128x32_w64x64",
    "reduce_sum_warp",
    "sliding_scan",
];

/// One compile: the driver's wall time and ours (ms), registers and local bytes of `entry`.
struct Compiled {
    jit_ms: f32,
    wall_ms: f64,
    registers: i32,
    local_bytes: i32,
}

/// Compiles `ptx` with the options given (plus `CU_JIT_WALL_TIME`) and reads `entry`'s
/// attributes, then unloads it.
fn compile(ptx: &str, entry: &str, options: &[(Opt, usize)]) -> Result<Compiled, String> {
    let text = CString::new(ptx).map_err(|e| e.to_string())?;
    let name = CString::new(entry).map_err(|e| e.to_string())?;
    let mut keys: Vec<Opt> = options.iter().map(|o| o.0).collect();
    let mut values: Vec<*mut c_void> = options.iter().map(|o| o.1 as *mut c_void).collect();
    keys.push(Opt::CU_JIT_WALL_TIME);
    values.push(std::ptr::null_mut());
    let mut module = std::ptr::null_mut();
    let started = Instant::now();
    let (n, opts, vals) = (keys.len() as u32, keys.as_mut_ptr(), values.as_mut_ptr());
    // SAFETY: a NUL-terminated module; one value per option, sizes passed by value as the
    // driver reads them; the wall-time slot is written as a float in the pointer's bits.
    unsafe { sys::cuModuleLoadDataEx(&mut module, text.as_ptr().cast(), n, opts, vals) }
        .result()
        .map_err(|e| format!("{entry}: {e}"))?;
    let wall_ms = started.elapsed().as_secs_f64() * 1e3;
    let jit_ms = f32::from_bits(*values.last().expect("the wall-time slot") as usize as u32);
    let mut function = std::ptr::null_mut();
    // SAFETY: the module was just loaded; `name` is NUL-terminated.
    unsafe { sys::cuModuleGetFunction(&mut function, module, name.as_ptr()) }
        .result()
        .map_err(|e| format!("{entry}: {e}"))?;
    let attribute = |a: Attr| -> Result<i32, String> {
        let mut v = 0;
        // SAFETY: `function` is this module's, `v` one int.
        unsafe { sys::cuFuncGetAttribute(&mut v, a, function) }
            .result()
            .map_err(|e| format!("{entry}: {e}"))?;
        Ok(v)
    };
    let compiled = Compiled {
        jit_ms,
        wall_ms,
        registers: attribute(Attr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
        local_bytes: attribute(Attr::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
    };
    // SAFETY: loaded above, nothing else holds it.
    unsafe { sys::cuModuleUnload(module) }
        .result()
        .map_err(|e| e.to_string())?;
    Ok(compiled)
}

/// Runs `work` on every item of `items` from `threads` threads, each first running `setup`;
/// the wall seconds.
fn timed_parallel<T: Sync>(
    items: &[T], threads: usize, setup: impl Fn() + Sync, work: impl Fn(&T) + Sync,
) -> f64 {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                setup();
                while let Some(item) =
                    items.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    work(item);
                }
            });
        }
    });
    started.elapsed().as_secs_f64()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os("CUDA_CACHE_DISABLE").is_none_or(|v| v != "1") {
        eprintln!("note: CUDA_CACHE_DISABLE=1 is not set: loads may come from the driver's cache");
    }
    let gpu = Gpu::new()?;
    eprintln!("{}", gpu.info()?);
    let index = ModuleIndex::new(KERNELS_PTX);
    let named: Vec<String> = std::env::args().skip(1).collect();
    let entries: Vec<&str> = if named.is_empty() {
        DEFAULT_ENTRIES.to_vec()
    } else {
        named.iter().map(String::as_str).collect()
    };
    println!("| entry | PTX KiB | option | JIT ms | load ms | registers | local bytes |");
    println!("|---|---:|---|---:|---:|---:|---:|");
    for entry in &entries {
        let ptx = index.module(entry).ok_or(format!("no entry {entry}"))?;
        let kib = ptx.len() as f64 / 1024.0;
        let mut variants: Vec<(String, Vec<(Opt, usize)>)> = [0, 3, 4]
            .into_iter()
            .map(|level| {
                (
                    format!("-O{level}"),
                    vec![(Opt::CU_JIT_OPTIMIZATION_LEVEL, level)],
                )
            })
            .collect();
        for (name, mode) in [("cache CG", 1), ("cache CA", 2)] {
            variants.push((name.into(), vec![(Opt::CU_JIT_CACHE_MODE, mode)]));
        }
        for (name, options) in variants {
            gpu.context().bind_to_thread()?;
            let c = compile(&ptx, entry, &options)?;
            println!(
                "| {entry} | {kib:.0} | {name} | {:.0} | {:.0} | {} | {} |",
                c.jit_ms, c.wall_ms, c.registers, c.local_bytes
            );
        }
    }

    // Every FP32 SGEMM entry of the main module (the autotuner's usual candidates), at the
    // default level, compiled several ways.
    let sgemm: Vec<(&str, String)> = index
        .entries()
        .filter(|e| e.starts_with("sgemm_") && !e.contains("tf32") && !e.contains("bf16"))
        .map(|e| (e, index.module(e).expect("an indexed entry")))
        .collect();
    let n = sgemm.len();
    println!("\n| {n} FP32 SGEMM entries | threads | wall s |");
    println!("|---|---:|---:|");
    for (what, to_cubin) in [
        ("a module each, one context", false),
        ("cuLink to a cubin each, one context", true),
    ] {
        for threads in [1usize, 8] {
            let bind = || gpu.context().bind_to_thread().expect("bind");
            let secs = timed_parallel(&sgemm, threads, bind, |(e, ptx)| {
                if to_cubin {
                    link_cubin(gpu.context(), ptx, e).expect("link");
                } else {
                    compile(ptx, e, &[]).expect("compile");
                }
            });
            println!("| {what} | {threads} | {secs:.1} |");
        }
    }
    {
        let mut device = 0;
        // SAFETY: writes one handle.
        unsafe { sys::cuDeviceGet(&mut device, 0) }.result()?;
        let secs = timed_parallel(
            &sgemm,
            8,
            || {
                let mut ctx = std::ptr::null_mut();
                // SAFETY: a context of this thread's own, current from here on; left to the
                // process's end.
                unsafe { sys::cuCtxCreate_v4(&mut ctx, std::ptr::null_mut(), 0, device) }
                    .result()
                    .expect("context");
            },
            |(e, ptx)| {
                compile(ptx, e, &[]).expect("compile");
            },
        );
        println!("| a module each, a context per thread | 8 | {secs:.1} |");
    }
    // The compiler's split compilation, on one thread.
    for split in [0usize, 8] {
        gpu.context().bind_to_thread()?;
        let started = Instant::now();
        for (e, ptx) in &sgemm {
            compile(ptx, e, &[(Opt::CU_JIT_SPLIT_COMPILE, split)])?;
        }
        println!(
            "| a module each, CU_JIT_SPLIT_COMPILE {split} | 1 | {:.1} |",
            started.elapsed().as_secs_f64()
        );
    }
    // Is the linker's output cached? The same cubin twice, the cache on (CUDA_CACHE_DISABLE
    // unset for this run).
    gpu.context().bind_to_thread()?;
    let (e, ptx) = &sgemm[0];
    for round in 1..=2 {
        let started = Instant::now();
        link_cubin(gpu.context(), ptx, e)?;
        println!(
            "| cuLink {e}, round {round} | 1 | {:.2} |",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
