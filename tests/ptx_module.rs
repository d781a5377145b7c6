//! CPU checks of the embedded PTX module: what the GPU will load, checked without one.

use kernels_gpu_host::MatmulKernel;
use kernels_gpu_host::plan::ptx::{KERNELS_PTX, entry_names};

/// The body of entry `name`, from its `.entry` line to the closing brace.
fn body(name: &str) -> &'static str {
    nvptx_builder::ptx::entry_body(KERNELS_PTX, name).unwrap_or_else(|| panic!("no entry {name}"))
}

#[test]
fn every_kernel_is_an_entry_point() {
    let entries = entry_names(KERNELS_PTX);
    for name in MatmulKernel::all_entries() {
        assert!(
            entries.contains(&name),
            "missing .entry {name}; have {entries:?}"
        );
    }
}

#[test]
fn target_is_optimised_not_debug() {
    let target = nvptx_builder::ptx::target(KERNELS_PTX).expect("a .target line");
    assert!(target.arch.starts_with("sm_"), "{target:?}");
    assert!(
        !target.debug,
        "a debug target runs ~4× slower (prebuilt core?): {target:?}"
    );
}

#[test]
fn static_kernels_declare_two_shared_tiles_of_tw_squared_floats() {
    for tw in [8, 16, 32] {
        let b = body(&format!("matmul_tiled_static_tw{tw}"));
        let decls: Vec<_> = b
            .lines()
            .filter(|l| l.trim_start().starts_with(".shared"))
            .collect();
        assert_eq!(decls.len(), 2, "tw{tw}: {decls:?}");
        for d in decls {
            assert!(d.contains(&format!("[{}]", tw * tw * 4)), "tw{tw}: {d}");
        }
    }
}

#[test]
fn dynamic_kernels_use_the_extern_shared_buffer() {
    assert!(KERNELS_PTX.contains(".extern .shared .align 16 .b8 __dynamic_shared[];"));
    for name in ["matmul_tiled_dynamic", "matmul_tiled_dynamic_const_tw16"] {
        assert!(body(name).contains("__dynamic_shared"), "{name}");
    }
}

#[test]
fn shared_memory_is_accessed_with_shared_instructions_only() {
    for name in MatmulKernel::all_entries()
        .into_iter()
        .filter(|n| n.contains("tiled"))
    {
        let b = body(name);
        assert!(
            b.contains("ld.shared.b32") && b.contains("st.shared.b32"),
            "{name}"
        );
        // Shared data through generic `LD`/`ST` was measured 15–35% slower.
        let generic = nvptx_builder::ptx::generic_accesses(b);
        assert!(generic.is_empty(), "{name}: generic accesses {generic:?}");
    }
}

#[test]
fn products_use_fused_multiply_add() {
    for name in MatmulKernel::all_entries() {
        let b = body(name);
        let tensor_cores = MatmulKernel::ALL.iter().any(|k| {
            k.entry(kernels_gpu_host::TileWidth::Tw16) == name
                && matches!(k, MatmulKernel::Sgemm(s) if s.precision() != kernels_gpu_host::Precision::Fp32)
        });
        // The tensor-core rungs' products are `mma.sync` (checked per tile in ptx_sgemm).
        let product = if tensor_cores {
            "mma.sync.aligned"
        } else {
            "fma.rn.f32"
        };
        assert!(b.contains(product), "{name} has no {product}");
        assert!(
            !b.contains("mul.rn.f32") && !b.contains("mul.f32"),
            "{name} multiplies separately"
        );
    }
}

/// The plain-data catalogue describes every entry point of the module, and nothing else,
/// with the parameter sizes the PTX declares: a host that launches from it alone (cust,
/// cudarc without this crate) finds every kernel.
#[test]
fn catalogue_describes_every_entry_and_nothing_else() {
    use kernels_gpu_host::kernels_gpu::catalogue::all_specs;
    assert_describes(KERNELS_PTX, all_specs());
}

/// `specs` describe every entry of `ptx` and nothing else, with the parameter sizes the PTX
/// declares and the cluster shape it requires (`.reqnctapercluster`, where a spec has
/// clusters: a plain launch of the entry runs in them).
fn assert_describes<'a>(
    ptx: &str,
    specs: impl Iterator<Item = &'a kernels_gpu_host::kernels_gpu::catalogue::KernelSpec>,
) {
    let specs: Vec<_> = specs.collect();
    let mut in_ptx = entry_names(ptx);
    in_ptx.sort_unstable();
    let mut described: Vec<_> = specs.iter().map(|s| s.entry).collect();
    described.sort_unstable();
    assert_eq!(in_ptx, described);
    for spec in specs {
        assert_eq!(
            kernels_gpu_host::plan::ptx::param_sizes(ptx, spec.entry),
            Some(spec.param_bytes().collect()),
            "{}",
            spec.entry
        );
        let directives = nvptx_builder::ptx::entry_directives(ptx, spec.entry).expect("entry");
        assert_eq!(
            directives.reqnctapercluster,
            (spec.cluster > 1).then_some([spec.cluster, 1, 1]),
            "{}",
            spec.entry
        );
    }
}

/// The same for the `sm_90a` module of the `hopper` feature: rung 14's table and rung 15's
/// TMA table describe its entry points and nothing else, and the module targets `sm_90a`
/// with PTX ISA 8.0 (which `wgmma` needs), while the main module keeps its portable target
/// and uses neither `wgmma` nor the tensor-memory accelerator.
#[test]
fn the_hopper_module_holds_rungs_14_and_15_on_tma_alone() {
    use kernels_gpu_host::kernels_gpu::catalogue::{MMA_TMA, WGMMA, hopper_specs};
    use kernels_gpu_host::plan::ptx::HOPPER_PTX;
    assert_describes(HOPPER_PTX, hopper_specs());
    let body = |entry| kernels_gpu_host::plan::ptx::entry_body(HOPPER_PTX, entry).unwrap();
    for c in WGMMA {
        assert_eq!(
            body(c.spec.entry).matches("wgmma.mma_async").count(),
            4,
            "{}",
            c.name
        );
    }
    for c in MMA_TMA {
        let b = body(c.spec.entry);
        assert!(b.contains("cp.async.bulk.tensor.2d"), "{}", c.name);
        assert!(b.contains("mma.sync.aligned.m16n8k8"), "{}", c.name);
        assert!(
            !b.contains("cp.async.cg"),
            "{}: copies by its threads",
            c.name
        );
    }
    for spec in hopper_specs() {
        assert!(
            !body(spec.entry).contains(".local"),
            "{}: local memory",
            spec.entry
        );
    }
    assert!(HOPPER_PTX.contains(".target sm_90a"));
    assert!(HOPPER_PTX.contains(".version 8.0"));
    assert!(!KERNELS_PTX.contains("wgmma"));
    assert!(!KERNELS_PTX.contains("cp.async.bulk"));
}

/// Rung 17's entries (in the same module) each issue the instruction of their element type
/// and tile, four to a k-tile (`k16` on `bf16`/`f16`, `k8` on TF32, whose operands are
/// both K-major: no transpose immediates; `A` from four registers where the configuration
/// says so, `b`'s fragments in a tile computed transposed or TF32's `a` rounded by the
/// consumers, else from a descriptor), fed by the tensor-memory accelerator
/// alone, and rebalance registers with `setmaxnreg` where they have two consumer
/// warpgroups.
#[test]
fn rung_17_entries_issue_their_elements_wgmma() {
    use kernels_gpu_host::kernels_gpu::catalogue::WS;
    use kernels_gpu_host::plan::half::Input;
    use kernels_gpu_host::plan::ptx::HOPPER_PTX;
    for c in WS {
        let body = kernels_gpu_host::plan::ptx::entry_body(HOPPER_PTX, c.spec.entry).unwrap();
        let (k, ty, tail) = match c.input {
            Input::Bf16 => (16, "bf16", ", 0, 1;"),
            Input::F16 => (16, "f16", ", 0, 1;"),
            Input::Tf32 => (8, "tf32", ", p, 1, 1;"),
        };
        let (consumers, n) = c.consumers_and_n();
        let shape = format!("wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ty}.{ty} ");
        let lines: Vec<&str> = body
            .lines()
            .filter(|l| l.contains("wgmma.mma_async"))
            .collect();
        assert_eq!(lines.len(), 4, "{}", c.name);
        for line in lines {
            // The accumulators' list, then `A`: a register list (`}, {`) or a descriptor.
            let a_in_registers = line.matches("}, {").count() == 1;
            assert!(
                line.contains(&shape)
                    && line.trim_end().ends_with(tail)
                    && a_in_registers == c.register_a,
                "{}: {line}",
                c.name
            );
        }
        assert!(body.contains("cp.async.bulk.tensor.2d"), "{}", c.name);
        assert!(
            !body.contains("cp.async.cg"),
            "{}: copies by its threads",
            c.name
        );
        assert_eq!(
            body.contains("setmaxnreg.inc"),
            consumers >= 2,
            "{}",
            c.name
        );
    }
}

/// No barrier or full-mask warp collective of either module sits where the threads it
/// needs may have parted (`nvptx_builder::ptx::divergence`): a hang the simulator cannot
/// see, since the compiler makes it (it gave thread 0 its own copy of a loop body once).
#[test]
fn no_collective_sits_under_a_divergent_branch() {
    use kernels_gpu_host::plan::ptx::HOPPER_PTX;
    use nvptx_builder::ptx::divergence::divergent_collectives_in;
    let report: Vec<String> = [KERNELS_PTX, HOPPER_PTX]
        .into_iter()
        .flat_map(divergent_collectives_in)
        .map(|(entry, f)| format!("{entry}: {f}"))
        .collect();
    assert!(
        report.is_empty(),
        "{} findings:\n{}",
        report.len(),
        report.join("\n")
    );
}

#[test]
fn every_sliding_scan_body_asks_l2_for_the_tile_ahead() {
    // One body per shift of `a[p - window]` (4) and per path (halo, far, chained), each
    // with its prefetch of the tile `scan::L2_AHEAD` tiles on (see that constant).
    let prefetches = body("sliding_scan").matches("prefetch.global.L2").count();
    assert_eq!(prefetches, 4 * 3, "sliding_scan prefetches");
}

/// Every entry of both embedded modules cuts into a module of its own ([`ModuleIndex`], what
/// a GPU loads on the entry's first launch): that entry alone, the whole module's header,
/// and a definition of every function it calls; cut again, the same text.
#[test]
fn every_entry_has_a_module_of_its_own() {
    use kernels_gpu_host::plan::ptx::HOPPER_PTX;
    use nvptx_builder::ptx::split::ModuleIndex;
    for whole in [KERNELS_PTX, HOPPER_PTX] {
        let index = ModuleIndex::new(whole);
        let entries: Vec<&str> = index.entries().collect();
        assert_eq!(entries, entry_names(whole), "every entry is indexed");
        let header: Vec<&str> = whole
            .lines()
            .filter(|l| {
                [".version", ".target", ".address_size"]
                    .iter()
                    .any(|d| l.starts_with(d))
            })
            .collect();
        for entry in entries {
            let module = index.module(entry).expect("a module");
            assert_eq!(entry_names(&module), [entry], "{entry}: one entry");
            assert!(module.starts_with(&header.join("\n")), "{entry}: header");
            for call in module
                .lines()
                .filter_map(|l| l.trim().strip_prefix("call.uni "))
            {
                let callee = call.split([',', ';', ' ']).next().unwrap_or("");
                assert!(
                    module.contains(&format!(".func {callee}(")),
                    "{entry} calls {callee}, which its module does not define"
                );
            }
            assert!(
                module.contains("__dynamic_shared[]")
                    == module.matches("__dynamic_shared").nth(1).is_some(),
                "{entry}: the dynamic shared buffer is declared if and only if used"
            );
            assert_eq!(
                ModuleIndex::new(&module).module(entry).as_deref(),
                Some(&*module)
            );
        }
    }
}

/// The driver's linker compiles a module as relocatable code, which drops `setmaxnreg` and
/// serializes the `wgmma` of a function with calls ([`relocatable_cost`]): the loader
/// compiles such modules whole. Every rung-17 entry is one of them (its warpgroups trade
/// registers), and no entry that issues `wgmma` calls a function (a panic path, say), so
/// neither way of compiling serializes its multiplications.
///
/// [`relocatable_cost`]: nvptx_builder::ptx::relocatable_cost
#[test]
fn wgmma_entries_call_nothing_and_rung_17_compiles_whole() {
    use kernels_gpu_host::plan::ptx::HOPPER_PTX;
    use nvptx_builder::ptx::split::ModuleIndex;
    let index = ModuleIndex::new(HOPPER_PTX);
    let (mut wgmma, mut whole) = (0, 0);
    for entry in index.entries() {
        let module = index.module(entry).expect("a module");
        let cost = nvptx_builder::ptx::relocatable_cost(&module);
        assert!(
            !cost.wgmma_serialized,
            "{entry} issues wgmma and calls a function"
        );
        wgmma += usize::from(module.contains("wgmma.mma_async"));
        whole += usize::from(entry.contains("_ws_") && cost.setmaxnreg);
    }
    assert!(wgmma >= 40, "{wgmma} entries issue wgmma");
    assert!(whole >= 30, "{whole} rung-17 entries trade registers");
}
