//! CPU checks of the SGEMM ladder's PTX: what makes the upper rungs fast is visible in the
//! module text, so a change that loses it fails here, without a GPU.
//!
//! * No local memory (`.local`, `__local_depot`): a register array indexed at run time, an
//!   iterator adaptor over one, or a loop LLVM did not unroll puts the accumulators in local
//!   memory, several times slower. (Spills by `ptxas` happen later and are not visible here;
//!   the GPU reports registers per thread.)
//! * The vectorized rungs load both operands with `ld.global.v4`, their fragments with
//!   `ld.shared.v4`, and store `b` tiles and outputs with `st.shared.v4` / `st.global.v4`.
//! * From rung 4 on, a shared tile's `BK` steps are fully unrolled FMAs on registers, once:
//!   exactly `BK × outputs per thread` `fma.rn.f32` in the entry (the FMA block is not
//!   duplicated on two sides of a branch either).
//! * The `.shared` declarations add up to the catalogue's static shared bytes, which the
//!   host checks launches against.

use kernels_gpu_host::kernels_gpu::sgemm::{Geometry, multistage};
use kernels_gpu_host::plan::ptx::{KERNELS_PTX, entry_names};
use kernels_gpu_host::{Precision, SgemmKernel};

/// The body of entry `name`, from its `.entry` line to the closing brace.
fn body(name: &str) -> &'static str {
    nvptx_builder::ptx::entry_body(KERNELS_PTX, name).unwrap_or_else(|| panic!("no entry {name}"))
}

/// Every SGEMM kernel with an entry point of its own (all but the autotuned dispatch).
fn entries() -> impl Iterator<Item = SgemmKernel> {
    SgemmKernel::ALL
        .into_iter()
        .filter(|&k| k != SgemmKernel::Autotuned)
}

/// Lines of `body` that are instructions starting with `op`.
fn count(body: &str, op: &str) -> usize {
    body.lines()
        .filter(|l| l.trim_start().starts_with(op))
        .count()
}

/// The first line of `body` that uses local memory (`.local`, `__local_depot`), if any.
fn local_memory(body: &str) -> Option<&str> {
    body.lines()
        .map(str::trim)
        .find(|l| l.contains(".local") || l.contains("__local_depot"))
}

/// The bytes of the `.shared` arrays `body` declares.
fn shared_bytes(body: &str) -> u32 {
    body.lines()
        .map(str::trim)
        .filter(|l| l.starts_with(".shared"))
        .map(|l| {
            let len = &l[l.rfind('[').expect("array") + 1..l.rfind(']').expect("array")];
            len.parse::<u32>().unwrap_or_else(|_| panic!("`{l}`"))
        })
        .sum()
}

/// `k`'s block tile, depth and threads, as `multistage`'s shape rules take them.
fn tile_of(k: SgemmKernel) -> (usize, usize, usize, usize) {
    let g = k.config().geometry;
    (
        g.bm as usize,
        g.bn as usize,
        g.bk as usize,
        g.threads as usize,
    )
}

/// Rungs 5 to 10: the 16-byte fast path and the transposed `a` tile (rung 11 loads by
/// `cp.async` and `ldmatrix` instead).
fn is_vectorized(k: SgemmKernel) -> bool {
    (5..=10).contains(&k.config().rung)
}

/// The FP32 kernels (the FMA rungs); the TF32 rung's arithmetic is `mma.sync`.
fn is_fp32(k: SgemmKernel) -> bool {
    k.precision() == Precision::Fp32
}

#[test]
fn every_sgemm_kernel_is_an_entry_point() {
    let names = entry_names(KERNELS_PTX);
    for k in entries() {
        assert!(names.contains(&k.entry()), "missing .entry {}", k.entry());
    }
}

#[test]
fn no_local_memory() {
    for k in entries() {
        assert_eq!(local_memory(body(k.entry())), None, "{k}");
    }
}

#[test]
fn vectorized_rungs_use_16_byte_accesses() {
    for k in entries().filter(|&k| is_vectorized(k)) {
        let b = body(k.entry());
        let (bm, bn, bk, threads) = tile_of(k);
        let is_multistage = k.entry().contains("_multistage_");
        // How `a` leaves global memory: the multistage rung's small tiles copy it by 4-byte
        // `cp.async` (checked below); the padded, swizzled and multistage configurations
        // load it through the read-only data path.
        let global_v4 = if is_multistage && multistage::copies_a(bm, bn, bk, threads) {
            "cp.async.ca.shared.global"
        } else if is_multistage
            || k.entry().contains("_padded_")
            || k.entry().contains("_swizzled_")
        {
            "ld.global.nc.v4"
        } else {
            "ld.global.v4"
        };
        let mut ops = vec![global_v4, "ld.shared.v4", "st.global.v4"];
        // The multistage rung stores no shared vector: its `b` tiles arrive by `cp.async`
        // (checked below) and its `a` tiles are stored transposed, one float at a time.
        if !is_multistage {
            ops.push("st.shared.v4");
        }
        for op in ops {
            assert!(count(b, op) > 0, "{k}: no {op}");
        }
        // Fragments come only from 16-byte shared loads.
        assert_eq!(count(b, "ld.shared.b32"), 0, "{k}: scalar shared loads");
    }
}

#[test]
fn tile_loops_are_fully_unrolled_fmas() {
    for k in entries().filter(|&k| k.config().rung >= 3 && is_fp32(k)) {
        let g = k.config().geometry;
        let per_thread = g.bm * g.bn / g.threads;
        let fmas = count(body(k.entry()), "fma.rn.f32");
        let loops = if k.entry().contains("_multistage_") {
            multistage_loops(k)
        } else {
            1
        };
        assert_eq!(
            fmas,
            loops * (g.bk * per_thread) as usize,
            "{k}: {fmas} FMAs, expected BK = {} × {per_thread} outputs per thread",
            g.bk
        );
    }
}

#[test]
fn products_are_fused_and_shared_memory_is_shared_state_space() {
    for k in entries() {
        let b = body(k.entry());
        assert!(b.contains("fma.rn.f32") || !is_fp32(k), "{k}: no FMA");
        assert!(
            !b.contains("mul.rn.f32") && !b.contains("mul.f32"),
            "{k}: separate multiply"
        );
        let generic = nvptx_builder::ptx::generic_accesses(b);
        assert!(generic.is_empty(), "{k}: generic accesses {generic:?}");
    }
}

#[test]
fn shared_declarations_match_the_catalogue() {
    for k in entries() {
        let declared = shared_bytes(body(k.entry()));
        assert_eq!(declared, k.config().geometry.static_shared_bytes, "{k}");
    }
}

/// The double-buffered rung waits once per tile: one barrier after the prologue, one in
/// the loop.
#[test]
fn double_buffered_rung_has_one_barrier_per_tile() {
    for k in entries().filter(|k| k.entry().contains("double_buffered")) {
        assert_eq!(count(body(k.entry()), "bar.sync"), 2, "{k}");
    }
}

/// The launch bounds of the catalogue are in the PTX (`nvptx-builder` applies the markers
/// `entry_points!` leaves), and no other entry has any.
#[test]
fn launch_bounds_match_the_catalogue() {
    let mut bounded = 0;
    for k in entries() {
        let found = nvptx_builder::ptx::entry_directives(KERNELS_PTX, k.entry()).expect("entry");
        match k.spec().launch_bounds {
            Some(b) => {
                assert_eq!(found.maxntid, Some([b.max_threads, 1, 1]), "{k}");
                assert_eq!(found.minnctapersm, Some(b.min_blocks), "{k}");
                assert_eq!(b.max_threads, k.config().geometry.threads, "{k}");
                bounded += 1;
            }
            None => assert_eq!((found.maxntid, found.minnctapersm), (None, None), "{k}"),
        }
    }
    let declared = entries()
        .filter(|k| k.spec().launch_bounds.is_some())
        .count();
    assert_eq!(bounded, declared, "the table's `min_blocks` entries");
    assert!(bounded > 0, "the top rungs declare launch bounds");
}

/// Tile loops of a multistage entry: the unchecked one and, for edge tiles and odd shapes,
/// the checked one or (the largest tiles) rung 8's; the checked loop peeled into the trips
/// inside the depth and the last ones where `multistage::peels_checked_loop` says so; and
/// the checked loop's last trip as a body of its own (these plain entries multiply only the
/// last k-tile's depths inside `k` there).
fn multistage_loops(k: SgemmKernel) -> usize {
    let g = k.config().geometry;
    let outputs = (g.bm * g.bn) as usize;
    let checked = outputs < multistage::CHECKED_LOOP_MAX_OUTPUTS;
    let peels = multistage::peels_checked_loop(outputs) && checked;
    2 + usize::from(peels) + usize::from(checked)
}

/// The multistage rung copies its `b` tiles with 16-byte, L2-only `cp.async` (and, in the
/// checked loop of the smaller tiles, with 4-byte ones where `b`'s rows are not aligned),
/// commits its groups and waits for all but the newest `multistage::groups_in_flight`
/// (one, or two on the small tiles that load `a` into registers); one barrier after each
/// of its two paths' prologues (unchecked and checked) and one per tile in each of its
/// loops ([`multistage_loops`]).
#[test]
fn multistage_rung_copies_asynchronously() {
    for k in entries().filter(|k| k.entry().contains("_multistage_")) {
        let b = body(k.entry());
        let (bm, bn, bk, threads) = tile_of(k);
        let wait = format!(
            "cp.async.wait_group {}",
            multistage::groups_in_flight(bm, bn, bk, threads)
        );
        for op in ["cp.async.cg.shared.global", "cp.async.commit_group", &wait] {
            assert!(count(b, op) > 0, "{k}: no {op}");
        }
        assert_eq!(
            count(b, "cp.async.wait_group"),
            count(b, &wait),
            "{k}: every wait leaves {wait}"
        );
        let checked_loop = bm * bn < multistage::CHECKED_LOOP_MAX_OUTPUTS;
        assert_eq!(
            count(b, "cp.async.ca.shared.global") > 0,
            checked_loop,
            "{k}: 4-byte copies in its checked loop"
        );
        assert_eq!(count(b, "bar.sync"), 2 + multistage_loops(k), "{k}");
    }
}

/// Asserts that `body`, a tensor-core entry with geometry `g` and two loops over the shared
/// tiles (`cp.async` and checked), issues `mma.sync.aligned.{shape}` (`depth` deep)
/// `BK/depth` times per 16 × 8 accumulator tile (4 outputs of a lane) in each loop, fully
/// unrolled.
#[track_caller]
fn assert_mma_per_tile(body: &str, g: Geometry, shape: &str, depth: u32, entry: &str) {
    let per_thread = g.bm * g.bn / g.threads;
    let mma = count(body, &format!("mma.sync.aligned.{shape}"));
    let want = (2 * g.bk / depth * per_thread / 4) as usize;
    assert_eq!(mma, want, "{entry}: {mma} mma.sync");
}

/// The TF32 rung: per shared tile, `BK/8` steps of fully unrolled `mma.sync` (one per 16 × 8
/// accumulator tile, i.e. per 4 outputs of a lane), in each of its two loops (`cp.async`
/// and checked); `a` fragments by `ldmatrix`, every operand rounded by `cvt.rna.tf32.f32`,
/// both operands copied by `cp.async` (with a source size, for the zero fill) and the ring's
/// wait for all but `STAGES - 2 = 1` groups. No FMA, no local memory (checked above).
#[test]
fn tf32_rung_is_unrolled_mma_sync() {
    for k in entries().filter(|&k| k.precision() == Precision::Tf32) {
        let g = k.config().geometry;
        let b = body(k.entry());
        assert_mma_per_tile(b, g, "m16n8k8.row.col.f32.tf32.tf32.f32", 8, &k.to_string());
        for op in [
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            "cvt.rna.tf32.f32",
            "cp.async.cg.shared.global",
            "cp.async.wait_group 1",
        ] {
            assert!(count(b, op) > 0, "{k}: no {op}");
        }
        assert_eq!(count(b, "fma.rn.f32"), 0, "{k}: FMAs");
    }
}

/// Rung 12 (the BLAS entries): no local memory; shared declarations and launch bounds as the
/// catalogue says; each of its two loops (copy path and checked path) unrolled to exactly
/// `BK × outputs per thread` FMAs (plus the epilogue's `β` FMA per output and store path); `cp.async` for every operand stored `k`-major (none in NT,
/// where both go through registers), one barrier after each prologue and one per tile.
#[test]
fn blas_rung_matches_its_catalogue() {
    use kernels_gpu_host::kernels_gpu::sgemm::blas::BLAS_CONFIGS;
    use kernels_gpu_host::problem::gemm::Op;
    for c in BLAS_CONFIGS {
        let entry = c.spec.entry;
        let b = body(entry);
        assert_eq!(local_memory(b), None, "{entry}");
        assert_eq!(shared_bytes(b), c.geometry.static_shared_bytes, "{entry}");
        let g = c.geometry;
        let outputs = g.bm * g.bn / g.threads;
        // Each loop's BK steps, plus β's FMA per output in each loop's two stores (16-byte
        // and checked).
        let fmas = 2 * g.bk * outputs + 2 * 2 * outputs;
        assert_eq!(count(b, "fma.rn.f32"), fmas as usize, "{entry}");
        let copied = (c.a == Op::T) as usize + (c.b == Op::N) as usize;
        assert_eq!(
            count(b, "cp.async.cg.shared.global") > 0,
            copied > 0,
            "{entry}"
        );
        assert_eq!(count(b, "bar.sync"), 4, "{entry}");
        assert_launch_bounds(&c.spec);
    }
}

/// The entry's `.maxntid` and `.minnctapersm` are the catalogue's launch bounds (neither
/// where it has none).
fn assert_launch_bounds(spec: &kernels_gpu_host::kernels_gpu::catalogue::KernelSpec) {
    let found = nvptx_builder::ptx::entry_directives(KERNELS_PTX, spec.entry).expect("entry");
    let want = spec
        .launch_bounds
        .map(|l| ([l.max_threads, 1, 1], l.min_blocks));
    assert_eq!(
        found.maxntid.zip(found.minnctapersm),
        want,
        "{}",
        spec.entry
    );
}

/// Rung 13 (BF16 matrices): per shared tile, `BK/16` steps of fully unrolled
/// `mma.m16n8k16` BF16 (one per 16 × 8 accumulator tile) in each of its two loops; both
/// fragments by `ldmatrix` (`b` transposed), no float conversion, FMA or local memory; both
/// operands by `cp.async`, the ring's wait for all but `STAGES - 2` groups; dynamic shared
/// memory only, and launch bounds as the catalogue says.
#[test]
fn bf16_rung_is_unrolled_mma_sync_on_ldmatrix() {
    use kernels_gpu_host::plan::bf16::BF16_CONFIGS;
    for c in BF16_CONFIGS {
        let entry = c.spec.entry;
        let (g, b) = (c.geometry, body(entry));
        assert_eq!(local_memory(b), None, "{entry}");
        assert_eq!(shared_bytes(b), 0, "{entry}");
        assert_mma_per_tile(b, g, "m16n8k16.row.col.f32.bf16.bf16.f32", 16, entry);
        let stages = g.dynamic_shared_bytes / (g.bk * (g.bm + g.bn) * 2);
        for op in [
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
            "cp.async.cg.shared.global",
            &format!("cp.async.wait_group {}", stages - 2),
        ] {
            assert!(count(b, op) > 0, "{entry}: no {op}");
        }
        for op in ["cvt.rn", "cvt.rna", "fma.rn.f32"] {
            assert_eq!(count(b, op), 0, "{entry}: {op}");
        }
        assert_launch_bounds(&c.spec);
    }
}

/// Rung 16 (the memory-bound entries): no local memory, no generic accesses, shared
/// declarations and launch bounds as the catalogue says, the inputs rounded by the
/// precision's conversion (TF32 and BF16 entries) or not at all (FP32). The small-`n` entries load `a` with 16-byte loads
/// through the read-only path into a ring of [`small_n_depth`](gemv::small_n_depth) chunks
/// of registers, each chunk's FMAs unrolled once in the loop (a whole chunk's `R rows × 4
/// depths × N` and a slice's last part chunk's `R × 3 × N`, `R` its rows per warp); for `N = 1` with no barrier
/// in the loop (`b` is read as `a` is), else with one barrier pair per group of chunks; and a
/// barrier pair around the count of a fused run's tile.
#[test]
fn rung_16_rings_its_loads_in_registers() {
    use kernels_gpu_host::kernels_gpu::sgemm::gemv::{self, GEMV_CONFIGS, GemvClass};
    for c in GEMV_CONFIGS {
        let entry = c.spec.entry;
        let b = body(entry);
        assert_eq!(local_memory(b), None, "{entry}");
        let generic = nvptx_builder::ptx::generic_accesses(b);
        assert!(generic.is_empty(), "{entry}: generic accesses {generic:?}");
        assert_eq!(shared_bytes(b), c.spec.static_shared_bytes, "{entry}");
        assert_launch_bounds(&c.spec);
        // Each f32 input rounded as its precision's conversion rounds it, and only there
        // (BF16 operands are BF16 values already).
        let (tf32, bf16) = (count(b, "cvt.rna.tf32.f32"), count(b, "cvt.rn.bf16.f32"));
        match (c.operands, c.precision) {
            (gemv::Operands::Bf16, _) | (_, Precision::Fp32) => {
                assert_eq!((tf32, bf16), (0, 0), "{entry}")
            }
            (_, Precision::Tf32) => assert!(tf32 > 0 && bf16 == 0, "{entry}"),
            (_, Precision::Bf16) => assert!(bf16 > 0 && tf32 == 0, "{entry}"),
        }
        if c.class != GemvClass::SmallN {
            continue;
        }
        // Four elements a load: 16 bytes of f32, 8 of BF16 (as a pair of 32-bit words).
        let vector = match c.operands {
            gemv::Operands::F32 => "ld.global.nc.v4.f32",
            gemv::Operands::Bf16 => "ld.global.nc.v2.f32",
        };
        assert!(count(b, vector) > 0, "{entry}");
        let (rows, n) = (c.rows_per_warp, c.bound);
        let fmas = gemv::small_n_depth(n as usize) * rows * (4 + 3) * n;
        assert_eq!(count(b, "fma.rn.f32"), fmas as usize, "{entry}");
        // Two more for a fused run's last block of a tile (SlicePlanes::last_of_tile).
        let barriers = if n == 1 { 0 } else { 2 } + 2;
        assert_eq!(count(b, "bar.sync"), barriers, "{entry}");
    }
}
