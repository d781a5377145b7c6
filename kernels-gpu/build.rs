//! Tells crates that depend on this one where its sources are (`DEP_KERNELS_GPU_DIR` in
//! their build scripts), so that a host crate can build this crate's PTX module with
//! `nvptx-builder` wherever cargo put it: in this workspace or in the registry's cache.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo::metadata=dir={dir}");
}
