//! Builds a `#![no_std]` kernel crate to one PTX module, from a build script — the role
//! rust-cuda's `cuda_builder` plays, but with rustc's own `nvptx64-nvidia-cuda` target.
//!
//! ```no_run
//! // build.rs: writes $OUT_DIR/my_kernels.ptx, for
//! // include_str!(concat!(env!("OUT_DIR"), "/my_kernels.ptx")) in the crate.
//! nvptx_builder::PtxBuilder::new("../my-kernels")
//!     .arch("sm_80")
//!     .build_in_out_dir()
//!     .unwrap_or_else(|e| nvptx_builder::fail(e));
//! ```
//!
//! What it does, and why each piece matters:
//! * `cargo rustc --release --target nvptx64-nvidia-cuda -Zbuild-std=core --crate-type cdylib
//!   -- --emit=asm`: the `.s` file of a cdylib is the complete, linked PTX module.
//!   Building `core` from source matters: the prebuilt one makes the module
//!   `.target sm_xx, debug`, which ran every kernel about 4× slower.
//! * `panic = "abort"`, fat LTO and one codegen unit (set through `CARGO_PROFILE_RELEASE_*`,
//!   so the calling workspace's profiles stay as they are).
//! * a target directory of its own, since the outer cargo holds a lock on its own.
//!
//! # Using it from another crate
//!
//! Any `#![no_std]` library crate can be the kernel crate; it does not have to be
//! `kernels-gpu`, and it may depend on it (the repository's `examples/fused-linear` does).
//!
//! * **The host crate** lists `nvptx-builder` under `[build-dependencies]` (a path or git
//!   dependency), calls [`PtxBuilder::build_in_out_dir`] from `build.rs` with the kernel
//!   crate's directory, and embeds `$OUT_DIR/<lib name>.ptx` with `include_str!`.
//! * **The toolchain** is the host crate's: the builder runs the `$CARGO`/`$RUSTC` of the
//!   outer build, which must be a nightly with `rust-src` (a `rust-toolchain.toml` next to
//!   the workspace root; [`BuildError::NotNightly`] and [`BuildError::MissingRustSrc`] say
//!   so otherwise).
//! * **The kernel crate** has `[lib] crate-type = ["rlib"]` (the builder adds `cdylib` for
//!   the PTX build only, so the host crate can also depend on it normally, e.g. to run its
//!   kernels in `kernels-gpu`'s simulator), `#![no_std]`, and on `nvptx64` the features its
//!   kernels use — `abi_gpu_kernel` for `extern "gpu-kernel"` — plus a `#[panic_handler]`
//!   unless a dependency provides one (`kernels-gpu` does). Inside a workspace it must be a
//!   member (or `exclude`d with a `[workspace]` of its own), as for any `cargo` command run
//!   in its directory.
//! * **Rebuilds**: [`build_in_out_dir`](PtxBuilder::build_in_out_dir) watches the kernel
//!   crate's `src` and `Cargo.toml`, and every source file of its path dependencies that
//!   cargo's dep-info lists for the PTX build, so editing `kernels-gpu` rebuilds a
//!   downstream module too.
//! * **Cost**: the kernel build has its own target directory under `$OUT_DIR`, so the first
//!   build of each profile compiles `core` for `nvptx64` once (with the kernel crates,
//!   15–20 s on two cores for `examples/fused-linear`); later builds recompile only what
//!   changed. [`PtxBuilder::target_dir`] can
//!   point several builds at one directory to share that work.
//! * **The module** holds every `#[no_mangle]` kernel of the crate and of its dependencies
//!   (a cdylib exports them all): a crate built on `kernels-gpu` also carries its entries.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why a PTX build failed; the message names the missing piece and the fix.
#[derive(Debug)]
pub enum BuildError {
    /// The active toolchain is not a nightly (needed for `-Zbuild-std` and the kernel ABI).
    NotNightly {
        /// What `rustc --version` printed.
        version: String,
    },
    /// The `rust-src` component is missing (needed by `-Zbuild-std=core`).
    MissingRustSrc {
        /// The toolchain's sysroot, where `lib/rustlib/src/rust` was looked for.
        sysroot: PathBuf,
    },
    /// `rustc` or `cargo` could not be run.
    Tool {
        /// The program (`$RUSTC`, `$CARGO` or their defaults).
        tool: String,
        /// Why it could not be started.
        error: std::io::Error,
    },
    /// The kernel crate failed to compile.
    Compile {
        /// cargo's exit status.
        status: String,
        /// cargo's and rustc's diagnostics.
        stderr: String,
    },
    /// The compiler succeeded but no PTX file appeared where expected.
    MissingOutput {
        /// Where the `.s` file should have been.
        expected: PathBuf,
    },
    /// The PTX says `debug`, i.e. it was built against a prebuilt core.
    DebugTarget {
        /// The PTX file.
        path: PathBuf,
    },
    /// Reading the manifest or the PTX, or copying it to `$OUT_DIR`, failed.
    Io(std::io::Error),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotNightly { version } => write!(
                f,
                "building PTX needs a nightly toolchain (found `{version}`); the repository's rust-toolchain.toml pins one: run `rustup toolchain install`"
            ),
            Self::MissingRustSrc { sysroot } => write!(
                f,
                "building PTX needs the rust-src component (-Zbuild-std=core), not found under {}; run `rustup component add rust-src`",
                sysroot.display()
            ),
            Self::Tool { tool, error } => write!(f, "could not run `{tool}`: {error}"),
            Self::Compile { status, stderr } => {
                write!(
                    f,
                    "compiling the kernel crate for nvptx64-nvidia-cuda failed ({status}):\n{stderr}"
                )
            }
            Self::MissingOutput { expected } => {
                write!(
                    f,
                    "the kernel build succeeded but {} was not written",
                    expected.display()
                )
            }
            Self::DebugTarget { path } => write!(
                f,
                "{} targets a `debug` module (prebuilt core?); it would run several times slower",
                path.display()
            ),
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BuildError {}

impl From<std::io::Error> for BuildError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

/// Reports `error` the way cargo shows build-script failures, and exits.
pub fn fail(error: BuildError) -> ! {
    eprintln!("error: {error}");
    std::process::exit(1)
}

/// Configuration of one PTX build.
#[derive(Clone, Debug)]
pub struct PtxBuilder {
    crate_dir: PathBuf,
    arch: String,
    ptx_version: String,
    target_dir: Option<PathBuf>,
}

/// Cargo and rustc settings of the outer build that must not leak into the kernel build.
const SCRUBBED_ENV: &[&str] = &[
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_PRIMARY_PACKAGE",
    "RUSTDOCFLAGS",
];

impl PtxBuilder {
    /// A builder for the kernel crate at `crate_dir` (relative paths are relative to the
    /// calling package's manifest directory), for `sm_80` with PTX ISA 7.8 by default: it
    /// runs on Ampere and later, the driver compiling it for the present GPU at load.
    pub fn new(crate_dir: impl AsRef<Path>) -> Self {
        let dir = crate_dir.as_ref();
        let crate_dir = match std::env::var_os("CARGO_MANIFEST_DIR") {
            Some(base) if dir.is_relative() => PathBuf::from(base).join(dir),
            _ => dir.to_path_buf(),
        };
        Self {
            crate_dir,
            arch: "sm_80".into(),
            ptx_version: "ptx78".into(),
            target_dir: None,
        }
    }

    /// The GPU architecture, e.g. `sm_80`, `sm_90`.
    pub fn arch(mut self, arch: &str) -> Self {
        self.arch = arch.into();
        self
    }

    /// The PTX ISA version as an LLVM feature, e.g. `ptx78`, `ptx80`.
    pub fn ptx_version(mut self, version: &str) -> Self {
        self.ptx_version = version.into();
        self
    }

    /// Where the kernel build keeps its artefacts (default: `$OUT_DIR/ptx-target`).
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// The kernel build's target directory: [`target_dir`](Self::target_dir), or
    /// `$OUT_DIR/ptx-target`.
    fn effective_target_dir(&self) -> PathBuf {
        match &self.target_dir {
            Some(d) => d.clone(),
            None => PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_else(|| "target".into()))
                .join("ptx-target"),
        }
    }

    /// The source files the last build read, from cargo's dep-info file next to the
    /// module: the kernel crate's and those of its path dependencies (`kernels-gpu`, say),
    /// but not the sysroot's. Empty if there is no such file.
    fn dep_info_sources(&self) -> Vec<PathBuf> {
        let Ok(lib) = self.lib_name() else {
            return Vec::new();
        };
        let file = self
            .effective_target_dir()
            .join("nvptx64-nvidia-cuda/release")
            .join(format!("{lib}.d"));
        let Ok(text) = std::fs::read_to_string(file) else {
            return Vec::new();
        };
        parse_dep_info(&text)
            .into_iter()
            .map(|p| {
                if p.is_relative() {
                    self.crate_dir.join(p)
                } else {
                    p
                }
            })
            .collect()
    }

    /// The crate's library name (`my-kernels` → `my_kernels`), read from its manifest.
    fn lib_name(&self) -> Result<String, BuildError> {
        let manifest = std::fs::read_to_string(self.crate_dir.join("Cargo.toml"))?;
        let name = manifest
            .lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix("name").map(|r| r.trim_start()))
            .and_then(|r| r.strip_prefix('='))
            .map(|r| r.trim().trim_matches('"').replace('-', "_"));
        name.ok_or_else(|| {
            BuildError::Io(std::io::Error::other(
                "no `name` in the kernel crate's Cargo.toml",
            ))
        })
    }

    fn check_toolchain(rustc: &OsString) -> Result<(), BuildError> {
        let run = |args: &[&str]| -> Result<String, BuildError> {
            let out =
                Command::new(rustc)
                    .args(args)
                    .output()
                    .map_err(|error| BuildError::Tool {
                        tool: rustc.to_string_lossy().into_owned(),
                        error,
                    })?;
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        };
        let version = run(&["--version"])?;
        if !version.contains("nightly") && !version.contains("-dev") {
            return Err(BuildError::NotNightly { version });
        }
        let sysroot = PathBuf::from(run(&["--print", "sysroot"])?);
        if !sysroot
            .join("lib/rustlib/src/rust/library/core/Cargo.toml")
            .exists()
        {
            return Err(BuildError::MissingRustSrc { sysroot });
        }
        Ok(())
    }

    /// Compiles the crate and returns the path of its PTX module.
    pub fn build(&self) -> Result<PathBuf, BuildError> {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        Self::check_toolchain(&rustc)?;
        let target_dir = self.effective_target_dir();
        let flags = [
            format!("-Ctarget-cpu={}", self.arch),
            format!("-Ctarget-feature=+{}", self.ptx_version),
            // Nothing to link: the PTX is the `.s` file. The bitcode linker is not shipped.
            "-Clinker=/bin/true".to_owned(),
        ]
        .join("\x1f");

        let mut cmd = Command::new(&cargo);
        cmd.current_dir(&self.crate_dir)
            .args(["rustc", "--release", "--lib", "--crate-type", "cdylib"])
            .args(["--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
            .arg("--target-dir")
            .arg(&target_dir)
            .args(["--", "--emit=asm"]);
        for var in SCRUBBED_ENV {
            cmd.env_remove(var);
        }
        cmd.env("CARGO_ENCODED_RUSTFLAGS", flags)
            .env("CARGO_PROFILE_RELEASE_PANIC", "abort")
            .env("CARGO_PROFILE_RELEASE_LTO", "fat")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "3")
            .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
            .env("CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS", "false")
            .env("CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS", "false");
        let out = cmd.output().map_err(|error| BuildError::Tool {
            tool: cargo.to_string_lossy().into_owned(),
            error,
        })?;
        if !out.status.success() {
            return Err(BuildError::Compile {
                status: out.status.to_string(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        let ptx = target_dir
            .join("nvptx64-nvidia-cuda/release/deps")
            .join(format!("{}.s", self.lib_name()?));
        if !ptx.exists() {
            return Err(BuildError::MissingOutput { expected: ptx });
        }
        let text = std::fs::read_to_string(&ptx)?;
        if text
            .lines()
            .any(|l| l.starts_with(".target") && l.contains("debug"))
        {
            return Err(BuildError::DebugTarget { path: ptx });
        }
        Ok(ptx)
    }

    /// For build scripts: builds, copies the module to `$OUT_DIR/<lib name>.ptx`, and tells
    /// cargo to rebuild when the kernel crate's sources or manifest change, or any source
    /// file of its path dependencies that the build read (so a kernel crate built on
    /// `kernels-gpu` is rebuilt when `kernels-gpu` changes).
    pub fn build_in_out_dir(&self) -> Result<PathBuf, BuildError> {
        for watched in ["src", "Cargo.toml"] {
            println!(
                "cargo:rerun-if-changed={}",
                self.crate_dir.join(watched).display()
            );
        }
        let ptx = self.build()?;
        for source in self.dep_info_sources() {
            println!("cargo:rerun-if-changed={}", source.display());
        }
        let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or_else(|| {
            BuildError::Io(std::io::Error::other(
                "OUT_DIR is not set: call this from a build script",
            ))
        })?);
        let dest = out_dir.join(format!("{}.ptx", self.lib_name()?));
        std::fs::copy(&ptx, &dest)?;
        Ok(dest)
    }
}

/// The prerequisites of the first rule of a Makefile-style dep-info file (`target: a b`),
/// with `\ ` unescaped to a space.
fn parse_dep_info(text: &str) -> Vec<PathBuf> {
    let Some(line) = text.lines().next() else {
        return Vec::new();
    };
    // The target is a path too; the rule's colon is the first one followed by a space.
    let Some(colon) = line.find(": ") else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    let mut current = String::new();
    let mut chars = line[colon + 2..].chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            ' ' => {
                if !current.is_empty() {
                    paths.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        paths.push(PathBuf::from(current));
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dep_info_prerequisites() {
        let text = "/t/out/k.ptx: /w/k/src/lib.rs /w/kernels-gpu/src/a\\ b.rs rel/x.rs\n";
        assert_eq!(
            parse_dep_info(text),
            [
                PathBuf::from("/w/k/src/lib.rs"),
                PathBuf::from("/w/kernels-gpu/src/a b.rs"),
                PathBuf::from("rel/x.rs"),
            ]
        );
        assert!(parse_dep_info("").is_empty());
    }
}
