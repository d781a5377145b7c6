//! A link-time stand-in for the CUDA driver library, so that a program using
//! [cust](https://crates.io/crates/cust) builds on a machine without a CUDA toolkit or
//! driver (a CI runner, a laptop).
//!
//! cust's `cust_raw` ships its bindings pre-generated and only links `libcuda`: the linker
//! needs a `libcuda.so` whose SONAME is `libcuda.so.1` and which defines every function the
//! bindings declare. This crate's build script makes one in its `OUT_DIR` from the cust_raw
//! version in `Cargo.lock` and adds that folder to the link's search path; depending on this
//! crate is all a binary needs. The binary then records `NEEDED libcuda.so.1` and no search
//! path, so at run time the loader finds the real driver (or, without one, refuses to start
//! the program): the stub is never loaded. [`elf`] reads a binary's dynamic section to check
//! that.
//!
//! cust_raw's own build script additionally requires `$CUDA_LIBRARY_PATH/lib64` to be a
//! folder; this crate's `lib64/` serves (see the workspace's `.cargo/config.toml`).

pub mod bindings;
pub mod elf;

/// The SONAME of the stub, and what a program linked to it needs at run time.
pub const SONAME: &str = "libcuda.so.1";

/// The stub this build made. For checks only: nothing should load it.
pub const STUB_PATH: &str = env!("LIBCUDA_STUB_PATH");

/// The cust_raw binding file its functions come from.
pub const BINDINGS_PATH: &str = env!("LIBCUDA_STUB_BINDINGS");
