//! Builds `kernels-gpu` to PTX (no GPU needed) and leaves it in `$OUT_DIR/kernels_gpu.ptx`
//! for `include_str!`. `KERNELS_GPU_ARCH` / `KERNELS_GPU_PTX` override the target.

fn main() {
    println!("cargo:rerun-if-env-changed=KERNELS_GPU_ARCH");
    println!("cargo:rerun-if-env-changed=KERNELS_GPU_PTX");
    let arch = std::env::var("KERNELS_GPU_ARCH").unwrap_or_else(|_| "sm_80".into());
    let ptx = std::env::var("KERNELS_GPU_PTX").unwrap_or_else(|_| "ptx78".into());
    let path = nvptx_builder::PtxBuilder::new("../kernels-gpu")
        .arch(&arch)
        .ptx_version(&ptx)
        .build_in_out_dir()
        .unwrap_or_else(|e| nvptx_builder::fail(e));
    let text = std::fs::read_to_string(&path).expect("read the PTX");
    let patched = add_launch_bounds(&text);
    if patched != text {
        std::fs::write(&path, patched).expect("write the PTX");
    }
}

/// Entry points that get launch bounds (`__launch_bounds__(threads, blocks)`): `.maxntid
/// threads, 1, 1` and `.minnctapersm blocks`, so that ptxas keeps to `65536 / (threads ·
/// blocks)` registers. Rust has no attribute for them, so they are added to the PTX text.
/// Without them ptxas gave the padded 128 × 128 × 16 configuration swizzled 151 registers
/// (and a padded 128 × 128 × 8 one 149) where the unpadded ones have 125: one block per SM
/// instead of two. (That 128 × 128 × 8 one spilled 16 bytes under the bounds: dropped.) `threads` must be the catalogue's
/// (`host::sgemm`; `tests/ptx_sgemm.rs` checks it).
const LAUNCH_BOUNDS: [(&str, u32, u32); 5] = [
    ("sgemm_double_buffered_padded_128x128x16_w32x64", 256, 2),
    ("sgemm_double_buffered_padded_128x128x16_w64x32", 256, 2),
    ("sgemm_double_buffered_swizzled_128x128x16_w64x32", 256, 2),
    ("sgemm_multistage_128x128x16_w64x32", 256, 2),
    ("sgemm_multistage_swizzled_128x128x16_w64x32", 256, 2),
];

/// `ptx` with the [`LAUNCH_BOUNDS`] directives between each listed entry's parameter list
/// and its body (panics if an entry is missing: a renamed kernel must not lose its bounds).
fn add_launch_bounds(ptx: &str) -> String {
    let mut out = ptx.to_owned();
    for (entry, threads, blocks) in LAUNCH_BOUNDS {
        let start = out
            .find(&format!(".entry {entry}("))
            .unwrap_or_else(|| panic!("no .entry {entry} in the PTX"));
        let body = start
            + out[start..]
                .find(")\n{")
                .unwrap_or_else(|| panic!("{entry}: no body"));
        out.insert_str(
            body + 1,
            &format!("\n.maxntid {threads}, 1, 1\n.minnctapersm {blocks}"),
        );
    }
    out
}
