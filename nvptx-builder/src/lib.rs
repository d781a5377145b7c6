// The crate's page (README.md) is its rustdoc front page. Only under rustdoc, so that editing
// the page does not rebuild the crate.
#![cfg_attr(doc, doc = include_str!("../README.md"))]

pub mod ptx;

use std::ffi::OsString;
use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

pub use ptx::PtxError;

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
    /// The kernel crate's manifest could not be read, or names no library.
    Manifest {
        /// The `Cargo.toml`.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// One function of the module declares a `.shared` symbol twice: a `shared_array!`
    /// call site inlined twice, which ptxas would only reject when a GPU loads the module.
    DuplicateShared {
        /// The `.entry` or `.func` holding both declarations.
        function: String,
        /// The shared symbol, named after the call site (`__shared_l23_c14`).
        symbol: String,
    },
    /// The environment variable that should name the kernel crate's folder is not set:
    /// cargo sets `DEP_<LINKS>_DIR` only for a dependency whose manifest has `links` and
    /// whose build script prints `cargo:DIR=…`.
    MissingDependencyDir {
        /// The variable, e.g. `DEP_KERNELS_GPU_DIR`.
        var: String,
    },
    /// The module's launch-bounds markers could not be applied.
    Ptx(PtxError),
    /// Reading the PTX, or writing or copying the final module, failed.
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
            Self::Manifest { path, reason } => write!(
                f,
                "cannot take the kernel crate's library name from {}: {reason}; the builder needs a `[package] name` (or `[lib] name`) there",
                path.display()
            ),
            Self::DuplicateShared { function, symbol } => write!(
                f,
                "a `shared_array!` call site was inlined twice into `{function}` (`{symbol}`): one static shared array per call site and kernel; declare it once at kernel scope and pass the `SharedSlice` to the helpers"
            ),
            Self::MissingDependencyDir { var } => write!(
                f,
                "`{var}` is not set: the kernel crate must be a dependency whose manifest has `links` and whose build script prints `cargo:DIR=<its folder>`"
            ),
            Self::Ptx(e) => write!(f, "the kernel crate's PTX module: {e}"),
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Tool { error, .. } => Some(error),
            Self::Ptx(e) => Some(e),
            Self::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<PtxError> for BuildError {
    fn from(e: PtxError) -> Self {
        Self::Ptx(e)
    }
}

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
    /// `--no-default-features` and `--features` for the kernel crate.
    default_features: bool,
    features: Vec<String>,
    /// The module's file name in `$OUT_DIR` without `.ptx` (default: the library name).
    module_name: Option<String>,
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
            default_features: true,
            features: Vec::new(),
            module_name: None,
        }
    }

    /// Builds the kernel crate without its default features (`--no-default-features`).
    pub fn no_default_features(mut self) -> Self {
        self.default_features = false;
        self
    }

    /// Builds the kernel crate with `feature` on (`--features`); may be called repeatedly.
    pub fn feature(mut self, feature: &str) -> Self {
        self.features.push(feature.into());
        self
    }

    /// The file name [`build_in_out_dir`](Self::build_in_out_dir) gives the module in
    /// `$OUT_DIR`, without `.ptx` (default: the kernel crate's library name): a second
    /// module of the same crate, built for another target or with other features, gets a
    /// name of its own.
    pub fn module_name(mut self, name: &str) -> Self {
        self.module_name = Some(name.into());
        self
    }

    /// The GPU architecture, e.g. `sm_80`, `sm_90`.
    pub fn arch(mut self, arch: &str) -> Self {
        self.arch = arch.into();
        self
    }

    /// A builder for a kernel crate this package depends on, found in the environment
    /// variable `dir_var` (cargo's `DEP_<LINKS>_DIR`, which the kernel crate's build script
    /// sets by printing `cargo:DIR=…`).
    pub fn for_dependency(dir_var: &str) -> Result<Self, BuildError> {
        std::env::var_os(dir_var)
            .map(Self::new)
            .ok_or_else(|| BuildError::MissingDependencyDir {
                var: dir_var.into(),
            })
    }

    /// Takes the target and PTX version from the environment variables `arch_var` and
    /// `ptx_var` where they are set (keeping the defaults otherwise), and tells cargo to
    /// rebuild when either changes.
    pub fn target_from_env(mut self, arch_var: &str, ptx_var: &str) -> Self {
        for var in [arch_var, ptx_var] {
            println!("cargo:rerun-if-env-changed={var}");
        }
        if let Ok(arch) = std::env::var(arch_var) {
            self.arch = arch;
        }
        if let Ok(ptx) = std::env::var(ptx_var) {
            self.ptx_version = ptx;
        }
        self
    }

    /// The PTX ISA version as an LLVM feature, e.g. `ptx78`, `ptx80`.
    pub fn ptx_version(mut self, version: &str) -> Self {
        self.ptx_version = version.into();
        self
    }

    /// Where the kernel build keeps its artefacts (default: [`shared_target_dir`]).
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// The kernel build's target directory: [`target_dir`](Self::target_dir), or
    /// [`shared_target_dir`] for this module's name.
    fn effective_target_dir(&self) -> PathBuf {
        if let Some(dir) = &self.target_dir {
            return dir.clone();
        }
        let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_else(|| "target".into()));
        let module = self
            .module_name
            .clone()
            .or_else(|| self.lib_name().ok())
            .unwrap_or_else(|| "kernels".into());
        shared_target_dir(&out_dir, &module)
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

    /// The crate's library name (`my-kernels` → `my_kernels`), read from its manifest: the
    /// file names of the build's outputs.
    fn lib_name(&self) -> Result<String, BuildError> {
        let path = self.crate_dir.join("Cargo.toml");
        let manifest = std::fs::read_to_string(&path).map_err(|e| BuildError::Manifest {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        lib_name_from_manifest(&manifest).map_err(|reason| BuildError::Manifest { path, reason })
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

    /// Compiles the crate, checks and finishes its module, and returns the path of the
    /// module: `<target dir>/nvptx64-nvidia-cuda/release/<lib name>.ptx`.
    ///
    /// cargo's and rustc's diagnostics go to stderr as they come, so a long first build is
    /// visible (`cargo build -vv` shows a build script's stderr live). The module is then
    /// rejected if it targets `debug` or declares a `.shared` symbol twice in one function,
    /// and gets the `.maxntid`/`.minnctapersm` its launch-bounds markers ask for.
    pub fn build(&self) -> Result<PathBuf, BuildError> {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        Self::check_toolchain(&rustc)?;
        let lib = self.lib_name()?;
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
            .args((!self.default_features).then_some("--no-default-features"))
            .args(
                (!self.features.is_empty())
                    .then(|| ["--features".to_owned(), self.features.join(",")])
                    .into_iter()
                    .flatten(),
            )
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
        eprintln!(
            "nvptx-builder: compiling {} for nvptx64-nvidia-cuda ({}, {}), target dir {}",
            self.crate_dir.display(),
            self.arch,
            self.ptx_version,
            target_dir.display()
        );
        let (status, stderr) = run_streaming(&mut cmd).map_err(|error| BuildError::Tool {
            tool: cargo.to_string_lossy().into_owned(),
            error,
        })?;
        if !status.success() {
            return Err(BuildError::Compile {
                status: status.to_string(),
                stderr,
            });
        }
        let release = target_dir.join("nvptx64-nvidia-cuda/release");
        let asm = release.join("deps").join(format!("{lib}.s"));
        if !asm.exists() {
            return Err(BuildError::MissingOutput { expected: asm });
        }
        let text = std::fs::read_to_string(&asm)?;
        if ptx::target(&text).is_some_and(|t| t.debug) {
            return Err(BuildError::DebugTarget { path: asm });
        }
        if let Some(dup) = ptx::duplicate_shared(&text).into_iter().next() {
            return Err(BuildError::DuplicateShared {
                function: dup.function,
                symbol: dup.symbol,
            });
        }
        let module = ptx::apply_launch_bounds(&text)?;
        let dest = release.join(format!("{lib}.ptx"));
        std::fs::write(&dest, &module)?;
        // The cdylib cargo expects at `deps/<lib>.ptx` (the target's library suffix) is
        // never linked (`/bin/true`): without it there, cargo would find the build stale
        // and compile it all again the next time it is asked, changed or not.
        std::fs::write(release.join("deps").join(format!("{lib}.ptx")), &module)?;
        Ok(dest)
    }

    /// For build scripts: builds, copies the module to `$OUT_DIR/<lib name>.ptx`, and tells
    /// cargo to rebuild when the kernel crate's sources or manifest change, or any source
    /// file of its path dependencies that the build read (so a kernel crate built on
    /// `kernels-gpu` is rebuilt when `kernels-gpu` changes).
    ///
    /// It warns (`cargo:warning`) of every barrier or warp collective the module reaches
    /// under a branch that parts the threads it needs
    /// ([`ptx::divergence::divergent_collectives`]; the first few, then a count), and ends
    /// with one `cargo:warning` line saying what was built and how long it took,
    /// since cargo otherwise shows nothing of a build that can take a while; set
    /// `NVPTX_BUILDER_QUIET` to a non-empty value to leave it out.
    pub fn build_in_out_dir(&self) -> Result<PathBuf, BuildError> {
        for watched in ["src", "Cargo.toml"] {
            println!(
                "cargo:rerun-if-changed={}",
                self.crate_dir.join(watched).display()
            );
        }
        let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or_else(|| {
            BuildError::Io(std::io::Error::other(
                "OUT_DIR is not set: call build_in_out_dir from a build script, or use build",
            ))
        })?);
        let started = Instant::now();
        let ptx = self.build()?;
        let seconds = started.elapsed().as_secs_f64();
        for source in self.dep_info_sources() {
            println!("cargo:rerun-if-changed={}", source.display());
        }
        let file = match &self.module_name {
            Some(name) => format!("{name}.ptx"),
            None => format!("{}.ptx", self.lib_name()?),
        };
        let dest = out_dir.join(&file);
        std::fs::copy(&ptx, &dest)?;
        let text = std::fs::read_to_string(&dest)?;
        // A collective where the threads it needs may have parted hangs on the GPU, and no
        // simulator sees it (`ptx::divergence`): said whatever `NVPTX_BUILDER_QUIET` says.
        let findings = ptx::divergence::divergent_collectives_in(&text);
        for (entry, finding) in findings.iter().take(DIVERGENCE_WARNINGS) {
            println!("cargo:warning=nvptx-builder: {file}: {entry}: {finding}");
        }
        if findings.len() > DIVERGENCE_WARNINGS {
            println!(
                "cargo:warning=nvptx-builder: {file}: {} more collectives under divergent branches",
                findings.len() - DIVERGENCE_WARNINGS
            );
        }
        let quiet = std::env::var_os("NVPTX_BUILDER_QUIET").is_some_and(|v| !v.is_empty());
        if !quiet {
            println!("cargo:warning={}", self.summary(&file, &text, seconds));
        }
        Ok(dest)
    }

    /// `nvptx-builder: built my_kernels.ptx (36 entry points, sm_80, ptx78) in 19.8 s`,
    /// with the target and version the module itself declares.
    fn summary(&self, file: &str, module: &str, seconds: f64) -> String {
        let entries = ptx::entry_names(module).len();
        let arch = ptx::target(module).map_or_else(|| self.arch.clone(), |t| t.arch);
        let version = ptx::version(module).map_or_else(
            || self.ptx_version.clone(),
            |(major, minor)| format!("ptx{major}{minor}"),
        );
        let points = if entries == 1 {
            "entry point"
        } else {
            "entry points"
        };
        format!(
            "nvptx-builder: built {file} ({entries} {points}, {arch}, {version}) in {seconds:.1} s"
        )
    }
}

/// Where a build script's kernel build keeps its artefacts by default: `nvptx/<module>` in
/// cargo's target directory (the ancestor of `out_dir` that holds cargo's `CACHEDIR.TAG`),
/// else `<out_dir>/ptx-target`.
///
/// The kernel build is the same release build for `nvptx64-nvidia-cuda` whatever the outer
/// build is (`cargo build`, `--release`, `cargo test`, `clippy`, `doc`: each runs the build
/// script with an `OUT_DIR` of its own), so one folder per module serves them all: the first
/// compiles the kernels, the others find them fresh. Cargo's lock on the folder keeps two
/// outer builds from compiling into it at once.
pub fn shared_target_dir(out_dir: &Path, module: &str) -> PathBuf {
    out_dir
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map_or_else(
            || out_dir.join("ptx-target"),
            |target| target.join("nvptx").join(module),
        )
}

/// How many divergence findings [`PtxBuilder::build_in_out_dir`] prints one by one.
const DIVERGENCE_WARNINGS: usize = 5;

/// Runs `cmd`, copying its stderr line by line to ours as it comes while keeping it for
/// the error message; its stdout goes to our stderr too, since a build script's stdout is
/// read by cargo as instructions.
fn run_streaming(cmd: &mut Command) -> std::io::Result<(std::process::ExitStatus, String)> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::io::stderr())
        .stderr(Stdio::piped())
        .spawn()?;
    let Some(pipe) = child.stderr.take() else {
        return Err(std::io::Error::other("the child's stderr was not piped"));
    };
    let copier = std::thread::spawn(move || {
        let mut kept = String::new();
        let mut reader = BufReader::new(pipe);
        let mut line = Vec::new();
        // Lines as bytes: a non-UTF-8 path in a diagnostic must not end the copy.
        while reader.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
            let _ = std::io::stderr().write_all(&line);
            kept.push_str(&String::from_utf8_lossy(&line));
            line.clear();
        }
        kept
    });
    let status = child.wait()?;
    let stderr = copier
        .join()
        .unwrap_or_else(|_| String::from("(the copy of cargo's stderr failed)"));
    Ok((status, stderr))
}

/// The library name a manifest gives its crate: `[lib] name`, or `[package] name` with `-`
/// as `_`; the reason it gives none otherwise.
fn lib_name_from_manifest(manifest: &str) -> Result<String, String> {
    let table: toml::Table = manifest
        .parse()
        .map_err(|e: toml::de::Error| format!("not valid TOML ({})", e.to_string().trim()))?;
    let name_in = |section: &str| -> Result<Option<&str>, String> {
        match table.get(section).and_then(|s| s.get("name")) {
            None => Ok(None),
            Some(toml::Value::String(name)) => Ok(Some(name)),
            Some(other) => Err(format!(
                "`[{section}] name` is not a string but {}",
                other.type_str()
            )),
        }
    };
    if let Some(name) = name_in("lib")? {
        return Ok(name.to_owned());
    }
    match name_in("package")? {
        Some(name) => Ok(name.replace('-', "_")),
        None => Err("it has neither `[lib] name` nor `[package] name`".into()),
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

    #[test]
    fn library_name_from_the_manifest() {
        let package = "[package]\nname = \"my-kernels\"\nversion = \"0.1.0\"\n";
        assert_eq!(lib_name_from_manifest(package).as_deref(), Ok("my_kernels"));
        // `[lib] name` wins, as it does for cargo's output file names.
        let renamed = format!("{package}\n[lib]\nname = \"gpu_code\"\ncrate-type = [\"rlib\"]\n");
        assert_eq!(lib_name_from_manifest(&renamed).as_deref(), Ok("gpu_code"));
        // Other tables' `name` keys are not the crate's, wherever they come.
        let others = "[dependencies]\nname = { path = \"../name\" }\n\n[package.metadata]\nname = \"meta\"\n\n[package]\nname = \"real-one\"\n";
        assert_eq!(lib_name_from_manifest(others).as_deref(), Ok("real_one"));
        let inline = "package = { name = \"inline-name\", version = \"0.1.0\" }\n";
        assert_eq!(lib_name_from_manifest(inline).as_deref(), Ok("inline_name"));
    }

    #[test]
    fn a_manifest_without_a_name_is_an_error() {
        for (manifest, reason) in [
            (
                "[dependencies]\nname = \"dep\"\n[package.metadata]\nname = \"m\"\n",
                "neither",
            ),
            ("[package]\nversion = \"0.1.0\"\n", "neither"),
            (
                "[package]\nname = 3\n",
                "`[package] name` is not a string but integer",
            ),
            ("[package\nname = \"x\"\n", "not valid TOML"),
        ] {
            let error = lib_name_from_manifest(manifest).unwrap_err();
            assert!(error.contains(reason), "{manifest}: {error}");
        }
        let error = BuildError::Manifest {
            path: PathBuf::from("/k/Cargo.toml"),
            reason: lib_name_from_manifest("").unwrap_err(),
        }
        .to_string();
        assert!(
            error.contains("/k/Cargo.toml") && error.contains("[package] name"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_dependency_dir_is_an_error_naming_the_variable() {
        let var = "NVPTX_BUILDER_TEST_SURELY_UNSET_DIR";
        let error = PtxBuilder::for_dependency(var).unwrap_err();
        assert!(
            matches!(&error, BuildError::MissingDependencyDir { var: v } if v == var),
            "{error:?}"
        );
        assert!(error.to_string().contains("links"), "{error}");
    }

    #[test]
    fn target_from_unset_variables_keeps_the_defaults() {
        let b = PtxBuilder::new("/k").target_from_env(
            "NVPTX_BUILDER_TEST_SURELY_UNSET_ARCH",
            "NVPTX_BUILDER_TEST_SURELY_UNSET_PTX",
        );
        assert_eq!(
            (b.arch.as_str(), b.ptx_version.as_str()),
            ("sm_80", "ptx78")
        );
    }

    #[test]
    fn kernel_builds_share_cargos_target_directory() {
        let target =
            std::env::temp_dir().join(format!("nvptx-builder-test-{}", std::process::id()));
        let out = target.join("release/build/host-0123/out");
        std::fs::create_dir_all(&out).unwrap();
        // No CACHEDIR.TAG above it: a folder of this build's own.
        assert_eq!(shared_target_dir(&out, "k"), out.join("ptx-target"));
        std::fs::write(
            target.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        )
        .unwrap();
        assert_eq!(shared_target_dir(&out, "k"), target.join("nvptx/k"));
        let debug = target.join("debug/build/host-4567/out");
        assert_eq!(shared_target_dir(&debug, "k"), target.join("nvptx/k"));
        std::fs::remove_dir_all(&target).unwrap();
    }

    #[test]
    fn summary_line() {
        let builder = PtxBuilder::new("/k");
        let module = ".version 8.0\n.target sm_90\n.visible .entry a(\n)\n{\n}\n.entry b()\n{\n}\n";
        assert_eq!(
            builder.summary("k.ptx", module, 19.84),
            "nvptx-builder: built k.ptx (2 entry points, sm_90, ptx80) in 19.8 s"
        );
        assert_eq!(
            builder.summary("k.ptx", "", 0.0),
            "nvptx-builder: built k.ptx (0 entry points, sm_80, ptx78) in 0.0 s"
        );
    }
}
