//! Every error the host library can produce without a GPU comes back typed, with its sizes
//! in the message; NaN and ∞ propagate as IEEE 754 says; results are deterministic. All on
//! the CPU (the simulator where a kernel must run).

#[path = "common/ieee.rs"]
mod ieee;

use cudarc::driver::DriverError;
use cudarc::driver::sys::cudaError_enum as Code;
use kernels_gpu_host::backend::Backend;
use kernels_gpu_host::gpu::Gpu;
use kernels_gpu_host::launch::Dim3;
use kernels_gpu_host::launch::{Launch, Limit, LimitError, Limits};
use kernels_gpu_host::plan::ptx::KERNELS_PTX;
use kernels_gpu_host::plan::ptx::param_sizes;
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::{Error, MatmulKernel, MatmulShape, Order, TileWidth};

fn sim_with(limits: Limits) -> Simulator {
    Simulator { limits }
}

/// The limit that `err` says a launch exceeds, with what the launch requested and the limit,
/// both of which its message must give; panics, naming `case`, for any other error.
#[track_caller]
fn exceeded(err: &Error, case: impl std::fmt::Display) -> (Limit, u64, u64) {
    match *err {
        Error::Launch(LimitError::Exceeds {
            what,
            requested,
            limit,
        }) => {
            let text = err.to_string();
            for number in [requested, limit] {
                assert!(text.contains(&number.to_string()), "{case}: {text}");
            }
            (what, requested, limit)
        }
        ref other => panic!("{case}: expected a launch beyond a limit, got {other:?}"),
    }
}

#[test]
fn shape_overflow_names_the_operand_and_its_sizes() {
    for ((m, k, n), operand, rows, cols) in [
        ((100_000, 100_000, 1), "a", 100_000, 100_000),
        ((1, 100_000, 100_000), "b", 100_000, 100_000),
        ((100_000, 1, 100_000), "out", 100_000, 100_000),
    ] {
        let err = MatmulShape::new(m, k, n).unwrap_err();
        match &err {
            Error::IndexOverflow {
                operand: o,
                rows: r,
                cols: c,
                elements,
            } => {
                assert_eq!((*o, *r, *c), (operand, rows, cols), "{err}");
                assert_eq!(*elements, 10_000_000_000, "{err}");
            }
            other => panic!("expected IndexOverflow for {m}×{k}×{n}, got {other:?}"),
        }
        let text = err.to_string();
        for needle in ["100000×100000", "10000000000", &u32::MAX.to_string()] {
            assert!(text.contains(needle), "`{needle}` missing from: {text}");
        }
    }
}

#[test]
fn shape_limit_is_exactly_u32_indices() {
    // 65536 × 65535 = 2³² − 65536 elements: fits. 65536 × 65536 = 2³²: does not.
    MatmulShape::new(65_536, 65_535, 1).unwrap();
    assert!(matches!(
        MatmulShape::new(65_536, 65_536, 1),
        Err(Error::IndexOverflow {
            operand: "a",
            elements: 4_294_967_296,
            ..
        })
    ));
    // A dimension near u32::MAX overflows the tiled kernels' row counter even with no
    // elements at all; usize::MAX does not wrap the check.
    for (m, k, n) in [
        (u32::MAX as usize - 10, 0, 1),
        (usize::MAX, 1, 1),
        (1, 1, usize::MAX),
    ] {
        assert!(
            matches!(MatmulShape::new(m, k, n), Err(Error::IndexOverflow { .. })),
            "{m}×{k}×{n}"
        );
    }
}

#[test]
fn inner_dimension_mismatch_names_both_shapes() {
    let err = MatmulShape::from_operands(3, 4, 5, 6).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InnerDimMismatch {
                m: 3,
                k: 4,
                k2: 5,
                n: 6
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains("3×4") && text.contains("5×6"), "{text}");
    let expected = MatmulShape { m: 3, k: 4, n: 6 };
    assert_eq!(MatmulShape::from_operands(3, 4, 4, 6).unwrap(), expected);
    assert_eq!(MatmulShape::new(3, 4, 6).unwrap(), expected);
}

#[test]
fn input_lengths_are_checked_before_any_launch() {
    let sim = Simulator::default();
    // (m, k, n), the lengths of `a` and `b` given, and the operand that is wrong: its rows,
    // columns and length.
    for ((m, k, n), (len_a, len_b), wrong) in [
        ((4, 5, 6), (19, 30), ("a", 4, 5, 19)),
        ((4, 5, 6), (20, 31), ("b", 5, 6, 31)),
        ((2, 3, 4), (5, 12), ("a", 2, 3, 5)),
        ((2, 3, 4), (6, 13), ("b", 3, 4, 13)),
    ] {
        let shape = MatmulShape::new(m, k, n).unwrap();
        let (a, b) = (vec![0.0; len_a], vec![0.0; len_b]);
        for kernel in MatmulKernel::ALL {
            let case = format!("{kernel} {shape}, a[{len_a}], b[{len_b}]");
            let err = sim
                .matmul(kernel, TileWidth::Tw8, &a, &b, shape)
                .unwrap_err();
            let Error::InputLength {
                operand,
                rows,
                cols,
                expected,
                actual,
            } = err
            else {
                panic!("{case}: expected InputLength, got {err:?}");
            };
            let (_, wrong_rows, wrong_cols, _) = wrong;
            assert_eq!((operand, rows, cols, actual), wrong, "{case}");
            assert_eq!(expected, wrong_rows * wrong_cols, "{case}");
            let text = err.to_string();
            for needle in [
                format!("{rows}×{cols}"),
                expected.to_string(),
                actual.to_string(),
            ] {
                assert!(
                    text.contains(&needle),
                    "{case}: `{needle}` missing from: {text}"
                );
            }
        }
    }
    // Checked before the trivial-shape shortcut too.
    let empty = MatmulShape::new(0, 3, 4).unwrap();
    let err = sim.matmul_naive(&[0.0; 1], &[0.0; 12], empty).unwrap_err();
    assert!(
        matches!(err, Error::InputLength { operand: "a", .. }),
        "{err:?}"
    );
}

#[test]
fn tile_width_12_lists_the_allowed_ones() {
    let err = TileWidth::try_from(12).unwrap_err();
    assert!(
        matches!(
            err,
            Error::UnsupportedTileWidth {
                requested: 12,
                allowed: [8, 16, 32]
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains("12") && text.contains("8, 16, 32"), "{text}");
    for tw in TileWidth::ALL {
        assert_eq!(TileWidth::try_from(tw.get()).unwrap(), tw);
    }
}

#[test]
fn unknown_kernel_lists_the_known_ones() {
    let err = MatmulKernel::from_name("nope").unwrap_err();
    let Error::UnknownKernel { requested, known } = &err else {
        panic!("expected UnknownKernel, got {err:?}");
    };
    assert_eq!(requested, "nope");
    for kernel in MatmulKernel::ALL {
        assert!(known.contains(kernel.name()), "{known}");
        assert_eq!(MatmulKernel::from_name(kernel.name()).unwrap(), kernel);
    }
    assert!(err.to_string().contains("nope"));
}

/// m = 600,000 at tile width 8 needs 75,000 blocks in y; CUDA allows 65,535. Refused
/// before anything runs, on the simulator as on a GPU.
#[test]
fn grid_too_large_for_a_huge_m() {
    let shape = MatmulShape::new(600_000, 1, 1).unwrap();
    let grid_y = Error::Launch(LimitError::Exceeds {
        what: Limit::GridDimY,
        requested: 75_000,
        limit: 65_535,
    });
    for kernel in [MatmulKernel::TiledStatic, MatmulKernel::TiledDynamic] {
        let err = kernel.launch(TileWidth::Tw8, &shape).unwrap_err();
        assert_eq!(err.to_string(), grid_y.to_string());
        assert_eq!(
            exceeded(&err, kernel),
            (Limit::GridDimY, 75_000, 65_535),
            "{kernel}"
        );
        let err = Simulator::default()
            .matmul(kernel, TileWidth::Tw8, &vec![1.0; 600_000], &[1.0], shape)
            .unwrap_err();
        assert_eq!(exceeded(&err, kernel).0, Limit::GridDimY, "{kernel}");
    }
    let text = grid_y.to_string();
    assert!(text.contains("75000") && text.contains("65535"), "{text}");
    // 16-wide blocks need 37,500: within the limit.
    MatmulKernel::TiledStatic
        .launch(TileWidth::Tw16, &shape)
        .unwrap();
    // The naive kernel's 16×16 blocks: 65,535 × 16 rows fit, one more row does not.
    let fits = MatmulShape::new(65_535 * 16, 1, 1).unwrap();
    let over = MatmulShape::new(65_535 * 16 + 1, 1, 1).unwrap();
    MatmulKernel::Naive.launch(TileWidth::Tw16, &fits).unwrap();
    let err = MatmulKernel::Naive
        .launch(TileWidth::Tw16, &over)
        .unwrap_err();
    let (what, requested, _) = exceeded(&err, "naive tw16");
    assert_eq!((what, requested), (Limit::GridDimY, 65_536));
}

#[test]
fn launches_are_checked_against_given_device_limits() {
    use Limit::*;
    use MatmulKernel::*;
    use TileWidth::*;
    let shape = MatmulShape::new(40, 40, 40).unwrap();
    // `kernel` at `tw` on `shape` within `limits` is refused for `expected`.
    let refused = |kernel: MatmulKernel, tw: TileWidth, limits: &Limits, expected| {
        let err = kernel.launch_within(tw, &shape, limits).unwrap_err();
        let case = format!("{kernel} tw{tw}");
        assert_eq!(exceeded(&err, &case), expected, "{case}");
    };
    let small = Limits {
        max_threads_per_block: 256,
        max_block_dim: Dim3::xyz(1024, 1024, 64),
        max_grid_dim: Dim3::xyz(4, 4, 1),
        max_shared_bytes_per_block: 4096,
    };
    refused(TiledStatic, Tw32, &small, (ThreadsPerBlock, 1024, 256));
    // 8×8 blocks: 5 blocks per dimension, more than the grid limit of 4.
    let err = Naive
        .launch_within(Tw8, &MatmulShape::new(65, 1, 1).unwrap(), &small)
        .unwrap_err();
    assert_eq!(exceeded(&err, "naive 65×1×1"), (GridDimY, 5, 4));
    // 16×16 tiles: two of 1 KiB each, static or dynamic, fit in 4 KiB (the SGEMM kernels,
    // with up to 1024 threads and 4-32 KiB of tiles, do not)...
    for kernel in MatmulKernel::LECTURE {
        kernel.launch_within(Tw16, &shape, &small).unwrap();
    }
    // ...but not in 1 KiB; static shared memory counts as dynamic does.
    let tiny = Limits {
        max_shared_bytes_per_block: 1024,
        ..small
    };
    for kernel in [TiledStatic, TiledDynamic, TiledDynamicConst] {
        refused(kernel, Tw16, &tiny, (SharedBytesPerBlock, 2048, 1024));
    }
    // Per-dimension block limits.
    let flat = Limits {
        max_block_dim: Dim3::xyz(1024, 8, 64),
        ..Limits::CUDA
    };
    refused(TiledDynamic, Tw16, &flat, (BlockDimY, 16, 8));
}

#[test]
fn empty_launches_are_refused() {
    for (grid, block) in [
        (Dim3::xy(0, 1), Dim3::xy(16, 16)),
        (Dim3::xy(1, 1), Dim3::xyz(16, 16, 0)),
    ] {
        let launch = Launch {
            grid,
            block,
            dynamic_shared_bytes: 0,
            cluster: 1,
        };
        let err = Limits::CUDA.check(&launch, 0).unwrap_err();
        assert!(matches!(err, LimitError::Empty { .. }), "{err:?}");
        let err = Simulator::default().launch(&launch, || {}).unwrap_err();
        assert!(
            matches!(err, Error::Launch(LimitError::Empty { .. })),
            "{err:?}"
        );
    }
}

#[test]
fn simulator_enforces_its_limits() {
    let shape = MatmulShape::new(4, 4, 4).unwrap();
    let (a, b) = (vec![1.0; 16], vec![1.0; 16]);
    // Dynamic shared memory beyond the limit: 2 × 32 × 32 × 4 = 8 KiB > 4 KiB.
    let sim = sim_with(Limits {
        max_shared_bytes_per_block: 4096,
        ..Limits::default()
    });
    let err = sim
        .matmul(
            MatmulKernel::TiledDynamicConst,
            TileWidth::Tw32,
            &a,
            &b,
            shape,
        )
        .unwrap_err();
    assert_eq!(
        exceeded(&err, "tiled_dynamic_const tw32"),
        (Limit::SharedBytesPerBlock, 8192, 4096)
    );
    // Static arrays beyond it: the second 4 KiB tile does not fit.
    let err = sim
        .matmul(MatmulKernel::TiledStatic, TileWidth::Tw32, &a, &b, shape)
        .unwrap_err();
    let (what, _, limit) = exceeded(&err, "tiled_static tw32");
    assert_eq!((what, limit), (Limit::SharedBytesPerBlock, 4096));
    // A block dimension beyond the limit.
    let sim = sim_with(Limits {
        max_block_dim: Dim3::xyz(16, 16, 64),
        ..Limits::default()
    });
    let err = sim
        .matmul(MatmulKernel::TiledDynamic, TileWidth::Tw32, &a, &b, shape)
        .unwrap_err();
    assert_eq!(exceeded(&err, "tiled_dynamic tw32").0, Limit::BlockDimX);
    // Within the limits, the same simulator runs.
    assert_eq!(
        sim.matmul(MatmulKernel::TiledDynamic, TileWidth::Tw16, &a, &b, shape)
            .unwrap(),
        vec![4.0; 16]
    );
}

#[test]
fn simulator_checks_the_grid_like_a_gpu() {
    let launch = Launch {
        grid: Dim3::xy(1, 70_000),
        block: Dim3::x(1),
        dynamic_shared_bytes: 0,
        cluster: 1,
    };
    let ran = std::sync::atomic::AtomicBool::new(false);
    let err = Simulator::default()
        .launch(&launch, || {
            ran.store(true, std::sync::atomic::Ordering::Relaxed)
        })
        .unwrap_err();
    assert_eq!(
        exceeded(&err, "a 1×70000 grid"),
        (Limit::GridDimY, 70_000, 65_535)
    );
    assert!(!ran.into_inner(), "the kernel ran despite the error");
}

/// A launch beyond the simulator's limits comes back as the host's launch error, from the
/// typed launchers too.
#[test]
fn simulator_errors_reach_the_typed_launchers() {
    let sim = sim_with(Limits {
        max_threads_per_block: 256,
        ..Limits::default()
    });
    let shape = MatmulShape::new(4, 4, 4).unwrap();
    let (a, b) = (vec![1.0; 16], vec![1.0; 16]);
    let err = sim.matmul_tiled_static::<32>(&a, &b, shape).unwrap_err();
    assert_eq!(
        exceeded(&err, "tiled_static::<32>"),
        (Limit::ThreadsPerBlock, 1024, 256)
    );
    // 16×16 blocks are within the limit.
    sim.matmul_tiled_static::<16>(&a, &b, shape).unwrap();
}

#[test]
fn ptx_with_a_nul_is_refused_before_the_driver_is_touched() {
    match Gpu::with_ptx(0, "abc\0def") {
        Err(Error::PtxNul { offset: 3, len: 7 }) => {}
        Err(other) => panic!("expected PtxNul, got {other:?}"),
        Ok(_) => panic!("PTX with a NUL loaded"),
    }
}

#[test]
fn missing_gpu_or_ordinal_is_a_typed_error() {
    // No GPU here: NoDriver or NoDevice. On a GPU machine: no GPU number usize::MAX.
    match Gpu::with_ordinal(usize::MAX) {
        Err(Error::NoDriver(_) | Error::NoDevice) => {}
        Err(Error::NoSuchDevice { ordinal, count }) => {
            assert_eq!(ordinal, usize::MAX);
            assert!(count >= 1);
        }
        Err(other) => panic!("unexpected error {other:?}"),
        Ok(_) => panic!("GPU usize::MAX exists"),
    }
}

/// More GPUs than the host has, none, or one twice: typed errors, before NCCL is looked for
/// (and without a driver, `NoDriver` or `NoDevice`), never a panic.
#[test]
fn impossible_gpu_lists_are_typed_errors() {
    use kernels_gpu_host::multi::Gpus;
    for (list, gpus) in [
        ("first(usize::MAX)", Gpus::first(usize::MAX)),
        ("first(0)", Gpus::first(0)),
        ("new(&[])", Gpus::new(&[])),
        ("new(&[0, 0])", Gpus::new(&[0, 0])),
    ] {
        match gpus {
            Err(Error::NoDriver(_) | Error::NoDevice) => {}
            Err(Error::DeviceCount { count, .. }) => assert!(count >= 1, "{list}"),
            Err(other) => panic!("{list}: unexpected error {other:?}"),
            Ok(_) => panic!("{list}: GPUs made"),
        }
    }
}

/// `Gpu::new()`, GPU 0 as the host crate's page uses it: a typed error without a driver or a
/// device, never a panic (cudarc's own constructor panics where `libcuda.so` cannot be
/// loaded; `tests/readme.rs` shows it).
#[test]
fn gpu_new_without_a_driver_is_a_typed_error() {
    // SAFETY: only tries to open the library.
    let present = unsafe { cudarc::driver::sys::is_culib_present() };
    match std::panic::catch_unwind(Gpu::new) {
        Err(_) => panic!("Gpu::new panicked (driver library present: {present})"),
        Ok(Ok(_)) => assert!(present, "a GPU without the driver library"),
        Ok(Err(Error::NoDriver(why))) => {
            assert!(!present, "NoDriver although libcuda.so loads: {why}");
            let text = Error::NoDriver(why).to_string();
            assert!(
                text.contains("--simulate"),
                "the message names the way out: {text}"
            );
        }
        Ok(Err(e @ (Error::NoDevice | Error::Driver { .. }))) => assert!(present, "{e}"),
        Ok(Err(other)) => panic!("unexpected error {other:?}"),
    }
}

/// Every byte size of a device buffer is checked: `Gpu::zeros(n)` and `Gpu::upload` size
/// their buffers with `buffer_bytes`, before the driver is asked.
#[test]
fn device_buffer_byte_sizes_are_checked() {
    use kernels_gpu_host::gpu::buffer_bytes;
    assert_eq!(buffer_bytes::<f32>(0).unwrap(), 0);
    assert_eq!(buffer_bytes::<f32>(1 << 20).unwrap(), 4 << 20);
    assert_eq!(buffer_bytes::<u64>(3).unwrap(), 24);
    let largest = (u64::MAX / 4) as usize;
    assert_eq!(buffer_bytes::<f32>(largest).unwrap(), largest as u64 * 4);
    for (len, size) in [
        (largest + 1, 4),
        (usize::MAX, 4),
        ((u64::MAX / 8) as usize + 1, 8),
    ] {
        let err = if size == 4 {
            buffer_bytes::<f32>(len).unwrap_err()
        } else {
            buffer_bytes::<u64>(len).unwrap_err()
        };
        match err {
            Error::IndexOverflow {
                operand: "device buffer",
                rows: 1,
                cols,
                elements,
            } => assert_eq!((cols, elements), (len, len as u128)),
            other => panic!("{len} × {size} bytes: expected IndexOverflow, got {other:?}"),
        }
    }
    // Where there is a GPU, `zeros` itself refuses such a length before allocating.
    if let Ok(gpu) = Gpu::new() {
        assert!(matches!(
            gpu.zeros(usize::MAX),
            Err(Error::IndexOverflow {
                operand: "device buffer",
                ..
            })
        ));
    }
}

/// `Error::check_len` with a `rows · cols` that overflows `usize` is a typed error, not an
/// overflow panic (or, in a release build, a wrapped product that a wrong length could
/// match).
#[test]
fn length_checks_with_overflowing_dimensions_are_typed_errors() {
    for (rows, cols, actual) in [
        (usize::MAX, 2, 0),
        (1 << 40, 1 << 40, 0),
        // 2^32 · 2^32 wraps to 0 in 64 bits: an empty slice must not pass.
        (1 << 32, 1 << 32, 0),
    ] {
        match Error::check_len("x", rows, cols, actual) {
            Err(Error::IndexOverflow {
                operand: "x",
                rows: r,
                cols: c,
                elements,
            }) => {
                assert_eq!((r, c), (rows, cols));
                assert_eq!(elements, rows as u128 * cols as u128);
            }
            other => panic!("{rows} × {cols}: expected IndexOverflow, got {other:?}"),
        }
    }
    Error::check_len("x", 3, 5, 15).unwrap();
    assert!(matches!(
        Error::check_len("x", 3, 5, 14),
        Err(Error::InputLength {
            expected: 15,
            actual: 14,
            ..
        })
    ));
}

/// A sliding window's shape: the input and the window together must fit the kernels'
/// 32-bit positions (checked without overflow, whatever `usize` is); a window of 0 is an
/// error; a window longer than the input is valid and has no outputs.
#[test]
fn sliding_shapes_are_checked() {
    use kernels_gpu_host::kernels_gpu::sliding::{BLOCK, scan};
    use kernels_gpu_host::plan::sliding::SlidingShape;
    let limit = (u32::MAX - 2 * BLOCK.max(scan::TILE)) as usize;
    assert_eq!(
        SlidingShape::new(limit - 1, 1).unwrap().outputs(),
        (limit - 1) as u32
    );
    assert_eq!(SlidingShape::new(7, 7).unwrap().outputs(), 1);
    assert_eq!(SlidingShape::new(7, 8).unwrap().outputs(), 0);
    assert_eq!(SlidingShape::new(0, 1).unwrap().outputs(), 0);
    assert!(matches!(
        SlidingShape::new(7, 0),
        Err(Error::InvalidWindow { window: 0, len: 7 })
    ));
    for (n, window) in [
        (limit, 1),
        (1, limit),
        (usize::MAX, 1),
        (1, usize::MAX),
        (usize::MAX, usize::MAX),
    ] {
        match SlidingShape::new(n, window) {
            Err(Error::IndexOverflow {
                operand: "input",
                elements,
                ..
            }) => assert_eq!(elements, n as u128 + window as u128),
            other => panic!("n {n}, window {window}: expected IndexOverflow, got {other:?}"),
        }
    }
}

#[test]
fn raw_launch_arguments_are_read_from_the_ptx() {
    assert_eq!(
        param_sizes(KERNELS_PTX, "matmul_naive"),
        Some(vec![8, 8, 8, 4, 4, 4])
    );
    assert_eq!(
        param_sizes(KERNELS_PTX, "matmul_tiled_dynamic"),
        Some(vec![8, 8, 8, 4, 4, 4, 4])
    );
    for entry in MatmulKernel::all_entries() {
        let sizes = param_sizes(KERNELS_PTX, entry).unwrap_or_else(|| panic!("{entry}"));
        assert_eq!(&sizes[..6], &[8, 8, 8, 4, 4, 4], "{entry}");
    }
    assert_eq!(param_sizes(KERNELS_PTX, "nope"), None);
    let ptx = ".visible .entry f(\n\t.param .align 8 .b8 f_param_0[24],\n\t.param .f64 f_param_1\n)\n{\n}\n.visible .entry g()\n{\n}\n";
    assert_eq!(param_sizes(ptx, "f"), Some(vec![24, 8]));
    assert_eq!(param_sizes(ptx, "g"), Some(vec![]));
}

#[test]
fn only_sticky_faults_make_the_context_unusable() {
    let fault = |code, context_usable| Error::KernelFault {
        kernel: "matmul_naive".into(),
        source: DriverError(code),
        context_usable,
    };
    // (Only the classification: formatting a DriverError asks the driver for its text.)
    assert!(!fault(Code::CUDA_ERROR_ILLEGAL_ADDRESS, false).leaves_context_usable());
    assert!(fault(Code::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, true).leaves_context_usable());
    let later = Error::Driver {
        call: "cuMemcpyDtoH",
        source: DriverError(Code::CUDA_ERROR_ILLEGAL_ADDRESS),
    };
    assert!(!later.leaves_context_usable());
    for usable in [
        MatmulShape::new(100_000, 100_000, 1).unwrap_err(),
        TileWidth::try_from(12).unwrap_err(),
        Error::OutOfDeviceMemory {
            requested: 2,
            free: 1,
            total: 1,
        },
        Error::PtxLoad {
            module: "matmul_naive".into(),
            source: DriverError(Code::CUDA_ERROR_INVALID_PTX),
            log: String::new(),
        },
        Error::Launch(LimitError::Exceeds {
            what: Limit::ThreadsPerBlock,
            requested: 2048,
            limit: 1024,
        }),
    ] {
        assert!(usable.leaves_context_usable(), "{usable:?}");
    }
}

#[test]
fn nan_and_inf_propagate_as_ieee_754_says_on_the_simulator() {
    let sim = Simulator::default();
    let failures: Vec<String> = ieee::kernel_widths()
        .into_iter()
        .filter_map(|(kernel, tw)| ieee::check_special_values(&sim, kernel, tw).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn same_input_gives_bit_identical_output_on_the_simulator() {
    let sim = Simulator::default();
    let failures: Vec<String> = ieee::kernel_widths()
        .into_iter()
        .filter_map(|(kernel, tw)| ieee::check_deterministic(&sim, kernel, tw, (37, 45, 29)).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A leading-dimension error's name, value, least value and storage order.
fn leading(e: &Error) -> Option<(&str, usize, usize, Order)> {
    match *e {
        Error::LeadingDimension {
            name,
            ld,
            min,
            order,
            ..
        } => Some((name, ld, min, order)),
        _ => None,
    }
}

/// A too-short GEMM buffer's operand, the elements it needs and holds, its batch and its
/// batch stride.
fn too_short(e: &Error) -> Option<(&str, u128, usize, usize, usize)> {
    match *e {
        Error::GemmBufferTooShort {
            operand,
            needed,
            actual,
            batch,
            stride,
            ..
        } => Some((operand, needed, actual, batch, stride)),
        _ => None,
    }
}

/// A batch overlap's `[stride, ld, batch, second, offset]`: products 0 and `second` both
/// write the element `offset` past product 0's first.
fn overlap(e: &Error) -> Option<[usize; 5]> {
    match *e {
        Error::BatchOverlap {
            stride,
            ld,
            batch,
            second,
            offset,
        } => Some([stride, ld, batch, second, offset]),
        _ => None,
    }
}

/// Every bad GEMM argument is a typed error naming it, found before anything runs, the same
/// from the simulator's `gemm` as from `Gemm::check` (the GPU's `gemm_device` calls it first
/// too).
#[test]
fn bad_gemm_arguments_are_typed_errors_naming_them() {
    use kernels_gpu_host::{Gemm, GemmKernel, Op};
    let sim = Simulator::default();
    // (case, call, buffer lengths a, b, c, the check on the error)
    type Check = fn(&Error) -> bool;
    let cases: Vec<(&str, Gemm, [usize; 3], Check)> = vec![
        (
            "lda below k (row-major, N)",
            Gemm::new(4, 5, 6).ld(5, 5, 5),
            [24, 30, 20],
            |e| leading(e) == Some(("lda", 5, 6, Order::RowMajor)),
        ),
        (
            "lda below m for a transposed a",
            Gemm::new(7, 5, 3).ops(Op::T, Op::N).ld(6, 5, 5),
            [100; 3],
            |e| leading(e) == Some(("lda", 6, 7, Order::RowMajor)),
        ),
        (
            "ldb below k for a transposed b",
            Gemm::new(2, 5, 9).ops(Op::N, Op::T).ld(9, 8, 5),
            [100; 3],
            |e| leading(e) == Some(("ldb", 8, 9, Order::RowMajor)),
        ),
        (
            "ldc below n",
            Gemm::new(2, 5, 3).ld(3, 5, 4),
            [100; 3],
            |e| leading(e) == Some(("ldc", 4, 5, Order::RowMajor)),
        ),
        (
            "ldc below m, column-major (cuBLAS's convention)",
            Gemm::cublas(Op::N, Op::N, 8, 2, 3, 1.0, 8, 3, 0.0, 7),
            [100; 3],
            |e| leading(e) == Some(("ldc", 7, 8, Order::ColMajor)),
        ),
        (
            "a zero leading dimension",
            Gemm::new(0, 0, 0).ld(0, 1, 1),
            [0, 0, 0],
            |e| leading(e) == Some(("lda", 0, 1, Order::RowMajor)),
        ),
        (
            "a too short for its leading dimension",
            Gemm::new(3, 4, 5).ld(8, 4, 4),
            [2 * 8 + 4, 20, 12],
            |e| too_short(e) == Some(("a", 21, 20, 1, 24)),
        ),
        (
            "b too short for its batch stride",
            Gemm::new(2, 2, 2).strided(3, 4, 5, 4),
            [12, 13, 12],
            |e| too_short(e) == Some(("b", 14, 13, 3, 5)),
        ),
        (
            "c too short for the batch",
            Gemm::new(2, 3, 1).batched(4),
            [8, 12, 23],
            |e| too_short(e) == Some(("c", 24, 23, 4, 6)),
        ),
        (
            "outputs overlapping through stride_c",
            Gemm::new(3, 3, 3).strided(2, 9, 9, 8),
            [18, 18, 17],
            |e| overlap(e) == Some([8, 3, 2, 1, 8]),
        ),
        (
            "stride_c of zero with a batch",
            Gemm::new(1, 1, 1).strided(2, 1, 1, 0),
            [2, 2, 1],
            |e| overlap(e) == Some([0, 1, 2, 1, 0]),
        ),
        (
            "a matrix beyond 32-bit offsets",
            Gemm::new(70_000, 2, 70_000)
                .ld(70_000, 2, 2)
                .ops(Op::T, Op::N),
            [usize::MAX, usize::MAX, usize::MAX],
            |e| matches!(e, Error::IndexOverflow { operand: "a", .. }),
        ),
    ];
    for (case, call, [a, b, c], check) in &cases {
        let err = call.check(*a, *b, *c).expect_err(case);
        assert!(check(&err), "{case}: {err:?}");
        assert!(!err.to_string().is_empty());
        if a.max(b).max(c) < &1000 {
            let (va, vb, mut vc) = (vec![0.0; *a], vec![0.0; *b], vec![0.0; *c]);
            let sim_err = sim
                .gemm(call, GemmKernel::Auto, &va, &vb, &mut vc)
                .expect_err(case);
            assert_eq!(sim_err.to_string(), err.to_string(), "{case}");
        }
    }
    // Messages carry the sizes.
    let msg = cases[0].1.check(24, 30, 20).unwrap_err().to_string();
    assert!(msg.contains("lda = 5") && msg.contains('6'), "{msg}");
}

/// A ladder or lecture kernel named for a call it cannot run is an error that says why; the
/// same call by rung 12 runs.
#[test]
fn a_ladder_kernel_refuses_what_only_rung_12_runs() {
    use kernels_gpu_host::{Gemm, GemmKernel, Op};
    let sim = Simulator::default();
    let naive = GemmKernel::Matmul(MatmulKernel::Naive, TileWidth::Tw16);
    for call in [
        Gemm::new(3, 4, 5).ops(Op::T, Op::N),
        Gemm::new(3, 4, 5).scale(2.0, 0.0),
        Gemm::new(3, 4, 5).ld(6, 4, 4),
        Gemm::new(3, 4, 5).batched(2),
    ] {
        let (a, b, mut c) = (vec![1.0; 64], vec![1.0; 64], vec![0.0; 64]);
        let err = sim.gemm(&call, naive, &a, &b, &mut c).unwrap_err();
        assert!(
            matches!(err, Error::GemmUnsupported { .. }),
            "{call:?}: {err:?}"
        );
        assert!(err.to_string().contains("naive"), "{err}");
        sim.gemm(&call, GemmKernel::Auto, &a, &b, &mut c).unwrap();
    }
    // Packed but longer buffers are not the plain product either.
    let call = Gemm::new(2, 2, 2);
    let (a, b, mut c) = (vec![1.0; 5], vec![1.0; 4], vec![0.0; 4]);
    assert!(matches!(
        sim.gemm(&call, naive, &a, &b, &mut c),
        Err(Error::GemmUnsupported { .. })
    ));
    let (a, mut c4) = (vec![1.0; 4], vec![0.0; 4]);
    sim.gemm(&call, naive, &a, &b, &mut c4).unwrap();
    assert_eq!(c4, [2.0; 4]);
    assert!(matches!(
        sim.gemm(&call, GemmKernel::Blas(9), &a, &b, &mut c4),
        Err(Error::UnknownKernel { .. })
    ));
}

/// Element types that are not whole f32s are refused with their size, not reinterpreted.
#[test]
fn gemm_pod_refuses_element_types_that_are_not_f32s() {
    use kernels_gpu_host::backend::gemm_pod;
    use kernels_gpu_host::{Gemm, GemmKernel};
    let sim = Simulator::default();
    let call = Gemm::new(1, 1, 2);
    let (a, b, mut c) = ([1u16; 4], [1u16; 4], [0u16; 2]);
    let err = gemm_pod(&sim, &call, GemmKernel::Auto, &a, &b, &mut c).unwrap_err();
    assert!(matches!(err, Error::ElementType { size: 2, .. }), "{err:?}");
    // [f32; 2] rows are whole f32s: lengths count f32s (a 1 × 2 by a 2 × 2).
    let call = Gemm::new(1, 2, 2);
    let (a, b, mut c) = ([[1.0f32, 2.0]], [[3.0f32, 5.0], [4.0, 6.0]], [[0.0f32; 2]]);
    gemm_pod(&sim, &call, GemmKernel::Auto, &a, &b, &mut c).unwrap();
    assert_eq!(c, [[11.0, 17.0]]);
}
