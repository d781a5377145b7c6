//! GPU reliability tests: launches beyond the device's real limits, device memory
//! exhaustion, a rejected PTX module and a faulting kernel all come back as typed errors;
//! NaN and ∞ propagate as IEEE 754 says; results are bit-for-bit deterministic.
//!
//! A libtest-compatible harness: without a GPU every test is reported as *ignored* with
//! the reason printed, never as passed. The kernel-fault test runs in a child process
//! (this binary, re-run with [`FAULT_CHILD`] set): a sticky fault poisons the CUDA context
//! of the whole process, which would fail every other test.

#[path = "common/gpu_harness.rs"]
mod harness;

#[path = "common/ieee.rs"]
mod ieee;

use cudarc::driver::CudaContext;
use cudarc::driver::CudaSlice;
use harness::Test;
use kernels_gpu_host::backend::Backend;
use kernels_gpu_host::gpu::Gpu;
use kernels_gpu_host::launch::Dim3;
use kernels_gpu_host::launch::{Launch, Limit, LimitError};
use kernels_gpu_host::{Error, MatmulKernel, MatmulShape, TileWidth};
use libtest_mimic::{Failed, Trial};
use nvptx_builder::ptx::split::ModuleIndex;
use std::sync::{Arc, RwLock};

/// Set in the environment of the child process that provokes a kernel fault.
const FAULT_CHILD: &str = "HOST_GPU_RELIABILITY_FAULT_CHILD";
/// What the child prints when the fault came back as it should.
const FAULT_CHILD_OK: &str = "fault child: KernelFault with context_usable = false";

/// Tests that fill the device's memory or start a process that faults take this lock
/// exclusively; the others share it.
static DEVICE: RwLock<()> = RwLock::new(());

fn expect<T: std::fmt::Debug>(
    what: &str, got: Result<T, Error>, ok: impl FnOnce(&Error) -> bool,
) -> Result<(), Failed> {
    match got {
        Err(e) if ok(&e) => {
            if !e.leaves_context_usable() {
                return Err(format!("{what}: {e} should leave the context usable").into());
            }
            Ok(())
        }
        other => Err(format!("{what}: unexpected {other:?}").into()),
    }
}

/// A 1×1 launch of one thread.
fn one_thread() -> Launch {
    Launch {
        grid: Dim3::x(1),
        block: Dim3::x(1),
        dynamic_shared_bytes: 0,
        cluster: 1,
    }
}

/// Buffers of `matmul_naive` for a 1×1×1 product: 2, 3 and the output.
fn naive_bufs(g: &Gpu) -> Result<[CudaSlice<f32>; 3], Failed> {
    Ok([g.upload(&[2.0])?, g.upload(&[3.0])?, g.zeros(1)?])
}

/// The naive kernel's 3×2 · 2×1 product of ones, through `g.matmul`.
fn naive_ones(g: &Gpu, what: &str) -> Result<(), Failed> {
    let shape = MatmulShape::new(3, 2, 1)?;
    let out = g.matmul(
        MatmulKernel::Naive,
        TileWidth::Tw16,
        &[1.0; 6],
        &[1.0; 2],
        shape,
    )?;
    if out != vec![2.0; 3] {
        return Err(format!("{what}: {out:?}").into());
    }
    Ok(())
}

/// Launches `entry` through the checked launcher with the three buffers, then `scalars`
/// (the entry's u32 parameters), then `extra` if given (a u64 the entry does not take).
fn launch_with(
    g: &Gpu, entry: &str, launch: &Launch, [a, b, out]: &mut [CudaSlice<f32>; 3], scalars: &[u32],
    extra: Option<u64>,
) -> Result<(), Error> {
    let info = g.entry_info(entry)?;
    let mut args = g.launcher(&info);
    args.buffer(a).buffer(b).buffer_mut(out);
    for s in scalars {
        args.scalar(s);
    }
    if let Some(x) = &extra {
        args.scalar(x);
    }
    // SAFETY: the buffers hold what a product of the scalars' shape reads and writes (the
    // tests pass 1×1×1 buffers with 1s, or 32×32 ones with 32s); refused launches never run.
    unsafe { args.launch(launch) }
}

fn queried_from_the_device(g: &Gpu) -> Result<(), Failed> {
    let l = g.limits();
    let cuda = kernels_gpu_host::launch::Limits::CUDA;
    if l.max_threads_per_block < 1024
        || l.max_block_dim != cuda.max_block_dim
        || l.max_grid_dim != cuda.max_grid_dim
        || l.max_shared_bytes_per_block < 48 * 1024
    {
        return Err(format!("implausible device limits {l:?}").into());
    }
    Ok(())
}

fn entry_attributes_match_the_host(g: &Gpu) -> Result<(), Failed> {
    let shape = MatmulShape::new(64, 64, 64)?;
    for (kernel, tw) in ieee::kernel_widths() {
        let info = g.entry_info(kernel.entry(tw))?;
        let launch = kernel.launch_within(tw, &shape, &g.limits())?;
        if info.static_shared_bytes != kernel.static_shared_bytes(tw)
            || (info.max_threads_per_block as u64) < launch.block.volume()
            || info.param_bytes.is_none()
        {
            return Err(format!("{kernel} tw{tw}: {info:?} vs {launch:?}").into());
        }
    }
    Ok(())
}

fn too_many_threads_per_block(g: &Gpu) -> Result<(), Failed> {
    let mut bufs = naive_bufs(g)?;
    let max = g.limits().max_threads_per_block as u64;
    let launch = Launch {
        block: Dim3::xy(64, (max / 64 + 1) as u32),
        ..one_thread()
    };
    let got = launch_with(g, "matmul_naive", &launch, &mut bufs, &[1; 3], None);
    expect("2× the threads", got, |e| {
        matches!(e, Error::Launch(LimitError::Exceeds { what: Limit::ThreadsPerBlock, requested, limit })
            if *requested == launch.block.volume() && *limit == max)
    })
}

fn block_dimension_z(g: &Gpu) -> Result<(), Failed> {
    let mut bufs = naive_bufs(g)?;
    let z = g.limits().max_block_dim.z;
    let launch = Launch {
        block: Dim3::xyz(1, 1, z + 1),
        ..one_thread()
    };
    let got = launch_with(g, "matmul_naive", &launch, &mut bufs, &[1; 3], None);
    expect("block z", got, |e| {
        matches!(e, Error::Launch(LimitError::Exceeds { what: Limit::BlockDimZ, requested, limit })
            if *requested == z as u64 + 1 && *limit == z as u64)
    })
}

fn shared_memory_per_block(g: &Gpu) -> Result<(), Failed> {
    let mut bufs = naive_bufs(g)?;
    let max = g.limits().max_shared_bytes_per_block;
    let launch = Launch {
        dynamic_shared_bytes: max + 4,
        cluster: 1,
        ..one_thread()
    };
    let got = launch_with(g, "matmul_naive", &launch, &mut bufs, &[1; 3], None);
    expect("shared memory", got, |e| {
        matches!(e, Error::Launch(LimitError::Exceeds { what: Limit::SharedBytesPerBlock, requested, .. })
            if *requested == max as u64 + 4)
    })?;
    // Static shared memory counts too: the tw32 static kernel has 8 KiB of it.
    let mut tiles = [
        g.upload(&[1.0; 1024])?,
        g.upload(&[1.0; 1024])?,
        g.zeros(1024)?,
    ];
    let launch = Launch {
        grid: Dim3::xy(1, 1),
        block: Dim3::xy(32, 32),
        dynamic_shared_bytes: max - 8192 + 4,
        cluster: 1,
    };
    let got = launch_with(
        g,
        "matmul_tiled_static_tw32",
        &launch,
        &mut tiles,
        &[32; 3],
        None,
    );
    expect(
        "static + dynamic",
        got,
        |e| matches!(e, Error::Launch(LimitError::Exceeds { requested, .. }) if *requested == max as u64 + 4),
    )?;
    // The same buffers with a valid launch work: nothing was poisoned.
    let shape = MatmulShape::new(32, 32, 32)?;
    let [a, b, out] = &mut tiles;
    g.matmul_device(MatmulKernel::TiledStatic, TileWidth::Tw32, a, b, out, shape)?;
    g.synchronize("matmul_tiled_static_tw32")?;
    if g.download(out)? != vec![32.0; 1024] {
        return Err("wrong product after refused launches".into());
    }
    Ok(())
}

fn grid_too_large_through_matmul(g: &Gpu) -> Result<(), Failed> {
    // 600,000 rows at tile width 8: 75,000 blocks in y.
    let shape = MatmulShape::new(600_000, 1, 1)?;
    let limit = g.limits().max_grid_dim.y as u64;
    let got = g.matmul(
        MatmulKernel::TiledStatic,
        TileWidth::Tw8,
        &vec![1.0; 600_000],
        &[1.0],
        shape,
    );
    expect(
        "grid y",
        got,
        |e| matches!(e, Error::Launch(LimitError::Exceeds { what: Limit::GridDimY, requested: 75_000, limit: l }) if *l == limit),
    )
}

fn empty_launch(g: &Gpu) -> Result<(), Failed> {
    let mut bufs = naive_bufs(g)?;
    let launch = Launch {
        grid: Dim3::xy(0, 1),
        ..one_thread()
    };
    let got = launch_with(g, "matmul_naive", &launch, &mut bufs, &[1; 3], None);
    expect("empty grid", got, |e| {
        matches!(e, Error::Launch(LimitError::Empty { .. }))
    })
}

fn unknown_entry(g: &Gpu) -> Result<(), Failed> {
    expect(
        "function",
        g.function("nope"),
        |e| matches!(e, Error::EntryNotFound { entry } if entry == "nope"),
    )?;
    let mut bufs = naive_bufs(g)?;
    let got = launch_with(g, "no\0pe", &one_thread(), &mut bufs, &[], None);
    expect("NUL in name", got, |e| {
        matches!(e, Error::EntryNotFound { .. })
    })
}

fn argument_mismatch(g: &Gpu) -> Result<(), Failed> {
    let mut bufs = naive_bufs(g)?;
    // Refused before launching: one argument short.
    let got = launch_with(g, "matmul_naive", &one_thread(), &mut bufs, &[1; 2], None);
    expect("too few", got, |e| {
        matches!(e, Error::KernelArgMismatch { expected_bytes, actual_bytes, .. }
            if *expected_bytes == [8, 8, 8, 4, 4, 4] && *actual_bytes == [8, 8, 8, 4, 4])
    })?;
    // Refused before launching: a u64 where the entry takes a u32.
    let got = launch_with(
        g,
        "matmul_naive",
        &one_thread(),
        &mut bufs,
        &[1; 2],
        Some(1),
    );
    expect("wrong size", got, |e| {
        matches!(e, Error::KernelArgMismatch { .. })
    })
}

fn valid_launch_computes(g: &Gpu) -> Result<(), Failed> {
    let mut bufs = naive_bufs(g)?;
    launch_with(g, "matmul_naive", &one_thread(), &mut bufs, &[1; 3], None)?;
    g.synchronize("matmul_naive")?;
    match g.download(&bufs[2])?.as_slice() {
        [6.0] => Ok(()),
        other => Err(format!("2 × 3 = {other:?}").into()),
    }
}
fn invalid_module_is_ptx_load(g: &Gpu) -> Result<(), Failed> {
    let broken = ".version 7.8\n.target sm_80\n.address_size 64\n\n\
        .visible .entry broken()\n{\n\tnot_an_instruction %r1;\n\tret;\n}\n";
    for (what, ptx) in [("not PTX", "this is not PTX"), ("bad instruction", broken)] {
        let got = Gpu::with_ptx(0, ptx).map(drop);
        expect(what, got, |e| matches!(e, Error::PtxLoad { .. }))?;
    }
    // The compiler's log is in the error.
    match Gpu::with_ptx(0, broken) {
        Err(e @ Error::PtxLoad { .. }) if e.to_string().contains("not_an_instruction") => {}
        Err(other) => {
            return Err(format!("expected the JIT log in the error: {other}").into());
        }
        Ok(_) => return Err("a broken module loaded".into()),
    }
    // The module and the context are still fine, and a good module loads: the naive
    // kernel's own, cut from the embedded one.
    let naive = ModuleIndex::new(g.ptx())
        .module("matmul_naive")
        .ok_or("no matmul_naive in the embedded module")?;
    let fresh = Gpu::with_ptx(0, &naive)?;
    naive_ones(&fresh, "after a rejected module")?;
    Ok(())
}

fn compiled_on_first_use_only(_: &Gpu) -> Result<(), Failed> {
    // A Gpu of its own: the shared one has run other tests' kernels.
    let fresh = Gpu::new()?;
    let (naive, tiled, sgemm) = (
        "matmul_naive",
        "matmul_tiled_static_tw16",
        "sgemm_multistage_128x128x16_w64x32",
    );
    if [naive, tiled, sgemm].iter().any(|e| fresh.is_loaded(e)) {
        return Err("a new Gpu has compiled kernels already".into());
    }
    naive_ones(&fresh, "naive")?;
    if !fresh.is_loaded(naive) || fresh.is_loaded(tiled) || fresh.is_loaded(sgemm) {
        return Err("one launch loaded more, or less, than its own module".into());
    }
    // A list compiles together; an unknown name is an error that leaves the rest
    // loaded.
    expect(
        "unknown entry in a list",
        fresh.load_entries(&[tiled, "no_such_entry", sgemm]),
        |e| matches!(e, Error::EntryNotFound { entry } if entry == "no_such_entry"),
    )?;
    if !fresh.is_loaded(tiled) || !fresh.is_loaded(sgemm) {
        return Err("load_entries left a known entry unloaded".into());
    }
    Ok(())
}

fn ordinal_past_the_last_gpu(_: &Gpu) -> Result<(), Failed> {
    let count = CudaContext::device_count()? as usize;
    expect(
        "ordinal",
        Gpu::with_ordinal(count).map(drop),
        |e| matches!(e, Error::NoSuchDevice { ordinal, count: c } if *ordinal == count && *c == count),
    )
}

fn zeros_beyond_the_device(g: &Gpu) -> Result<(), Failed> {
    let total = g.info()?.total_memory_bytes as u64;
    expect(
        "2× memory",
        g.zeros(total as usize / 2).map(drop),
        |e| matches!(e, Error::OutOfDeviceMemory { requested, .. } if *requested == 2 * total),
    )
}

fn matmul_when_the_device_is_full(g: &Gpu) -> Result<(), Failed> {
    // A valid shape never needs more than 3 × 16 GiB, less than these GPUs have: fill
    // the memory but 256 MiB first, then ask for 3 × 256 MiB.
    let (free, _) = g.context().mem_get_info()?;
    let ballast = g.zeros(free.saturating_sub(256 << 20) / 4)?;
    let side = 8192;
    let shape = MatmulShape::new(side, side, side)?;
    let a = vec![0.0f32; side * side];
    let got = g.matmul(MatmulKernel::Naive, TileWidth::Tw16, &a, &a, shape);
    drop(ballast);
    g.synchronize("(freeing the ballast)")?;
    let needed = 3 * (side * side * 4) as u64;
    expect("full device", got, |e| {
        matches!(e, Error::OutOfDeviceMemory { requested, free, .. }
            if *requested == needed && *free < needed)
    })
}

fn illegal_address_makes_the_context_unusable(_: &Gpu) -> Result<(), Failed> {
    let exe = std::env::current_exe()?;
    let out = std::process::Command::new(exe)
        .env(FAULT_CHILD, "1")
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && stdout.contains(FAULT_CHILD_OK) {
        Ok(())
    } else {
        Err(format!(
            "child {}: {stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into())
    }
}
/// In the child process: `matmul_naive` reading and writing through address 0x10.
fn fault_child() -> Result<String, String> {
    let gpu = Gpu::new().map_err(|e| format!("no GPU in the child: {e}"))?;
    let (bogus, size) = (0x10u64, 64u32);
    let info = gpu.entry_info("matmul_naive").map_err(|e| e.to_string())?;
    let mut args = gpu.launcher(&info);
    // A device address is a `.param .u64`: pushed as a plain u64 here.
    args.scalar(&bogus)
        .scalar(&bogus)
        .scalar(&bogus)
        .scalar(&size)
        .scalar(&size)
        .scalar(&size);
    let launch = Launch {
        grid: Dim3::xy(4, 4),
        block: Dim3::xy(16, 16),
        dynamic_shared_bytes: 0,
        cluster: 1,
    };
    // SAFETY: the pointers are bogus on purpose: the kernel faults on the device, which
    // is what this process exists to observe; no host memory is involved.
    let launched = unsafe { args.launch(&launch) };
    let err = match launched.and_then(|()| gpu.synchronize("matmul_naive")) {
        Ok(()) => return Err("the bogus launch succeeded".into()),
        Err(e) => e,
    };
    match &err {
        Error::KernelFault {
            kernel,
            context_usable: false,
            ..
        } if kernel == "matmul_naive" && !err.leaves_context_usable() => {}
        other => return Err(format!("expected a sticky KernelFault, got {other:?}")),
    }
    // Sticky: the next call fails too.
    match gpu
        .zeros(1)
        .and_then(|_| gpu.synchronize("(after the fault)"))
    {
        Err(e) => Ok(format!(
            "{FAULT_CHILD_OK} ({err}); then {e} (context usable: {})",
            e.leaves_context_usable()
        )),
        Ok(()) => Err(format!("the context still works after {err}")),
    }
}

/// One test with a body of its own.
type TestFn = fn(&Gpu) -> Result<(), Failed>;

/// `(name, body)` for test functions listed by group: the name is `group::function`.
macro_rules! tests {
    ($($group:literal => [$($test:ident),* $(,)?]),* $(,)?) => {
        &[$($((concat!($group, "::", stringify!($test)), $test as TestFn)),*),*]
    };
}

/// The tests that share the device.
const SHARED: &[(&str, TestFn)] = tests![
    "limits" => [
        queried_from_the_device,
        entry_attributes_match_the_host,
        too_many_threads_per_block,
        block_dimension_z,
        shared_memory_per_block,
        grid_too_large_through_matmul,
        empty_launch,
    ],
    "raw" => [unknown_entry, argument_mismatch, valid_launch_computes],
    "ptx" => [invalid_module_is_ptx_load],
    "modules" => [compiled_on_first_use_only],
    "device" => [ordinal_past_the_last_gpu],
    "memory" => [zeros_beyond_the_device],
];

/// The tests that need the device to themselves: they fill its memory, or start a process
/// that faults.
const EXCLUSIVE: &[(&str, TestFn)] = tests![
    "memory" => [matmul_when_the_device_is_full],
    "fault" => [illegal_address_makes_the_context_unusable],
];

fn trials(gpu: Option<Arc<Gpu>>) -> Vec<Trial> {
    let mut trials = vec![];
    let mut add = |name: String, exclusive: bool, f: Test| {
        trials.push(harness::trial(&gpu, format!("gpu::{name}"), move |g| {
            let _device = if exclusive {
                (
                    None,
                    Some(DEVICE.write().unwrap_or_else(|e| e.into_inner())),
                )
            } else {
                (Some(DEVICE.read().unwrap_or_else(|e| e.into_inner())), None)
            };
            f(g)
        }));
    };
    for (tests, exclusive) in [(SHARED, false), (EXCLUSIVE, true)] {
        for &(name, f) in tests {
            add(name.to_string(), exclusive, Box::new(f));
        }
    }
    for (kernel, tw) in ieee::kernel_widths() {
        let name = format!("{}::tw{}", kernel.name(), tw.get());
        add(
            format!("ieee::{name}"),
            false,
            Box::new(move |g| Ok(ieee::check_special_values(g, kernel, tw)?)),
        );
        add(
            format!("deterministic::{name}"),
            false,
            Box::new(move |g| Ok(ieee::check_deterministic(g, kernel, tw, (257, 129, 511))?)),
        );
    }
    trials
}

fn main() {
    if std::env::var_os(FAULT_CHILD).is_some() {
        match fault_child() {
            Ok(line) => println!("{line}"),
            Err(e) => {
                println!("fault child failed: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    harness::run(trials(harness::gpu()));
}
