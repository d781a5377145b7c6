//! NCCL, found and loaded at run time: the library search, the few calls the multi-GPU
//! handle makes, and typed errors for every way they fail. NCCL is never needed to build,
//! nor to run on one GPU.
//!
//! This is a binding of its own (with `libloading`) rather than cudarc's `nccl` feature:
//! cudarc's loader tries only names such as `libnccl.so` and `libnccl.so.<CUDA major>` and
//! panics when none loads, while the GPU hosts this project runs on have only
//! `libnccl.so.2`, inside their PyTorch install. Here a missing or unusable library is
//! [`Error::NcclNotFound`] listing every place tried, a failed call [`Error::Nccl`] with
//! NCCL's own message, and the search reaches Python's `site-packages`.
//!
//! # Where the library is looked for
//!
//! 1. `KERNELS_GPU_NCCL` ([`ENV_LIBRARY`]), the path of the library file. Where it is set,
//!    nothing else is tried.
//! 2. `libnccl.so.2`, then `libnccl.so`, by name, through the dynamic loader's own search
//!    (`LD_LIBRARY_PATH`, the loader cache, `/usr/lib`, …).
//! 3. The `nvidia/nccl/lib/libnccl.so.2` of Python's NVIDIA wheels (PyTorch's dependency
//!    `nvidia-nccl-cu12`), under: `$VIRTUAL_ENV`, `$CONDA_PREFIX` (and its `lib/`), the
//!    user's `~/.local`, `/usr/local/lib` and `/usr/lib` (`site-packages` and
//!    `dist-packages`), and `/opt/*/.venv`, `/opt/*/venv` and `/opt/*` (each
//!    `lib/python3*/site-packages`), in that order ([`candidates`]).
//!
//! # The environment NCCL starts with
//!
//! Before the library is loaded, [`load`] sets `NCCL_NVLS_ENABLE=0` in the process's
//! environment, always: NVLink SHARP (multicast objects) can take every GPU of a shared
//! host out of service, and nothing here needs it (nor calls `cuMulticastCreate`). It also
//! sets `NCCL_P2P_DIRECT_DISABLE=1` unless the variable is set already: this crate's
//! buffers come from CUDA's stream-ordered allocator, which NCCL cannot map for direct
//! access by its peers' kernels, so NCCL moves data through its own buffers. (Bulk
//! transfers go by the copy engines instead: [`super::peer`].)

use crate::problem::error::{Error, Result};
use std::ffi::{CStr, OsString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The environment variable naming the library file to load.
pub const ENV_LIBRARY: &str = "KERNELS_GPU_NCCL";

/// The library's names for the dynamic loader's search, in order.
const NAMES: [&str; 2] = ["libnccl.so.2", "libnccl.so"];

/// Where Python's NVIDIA wheels put the library, below a `site-packages`.
const WHEEL_LIBRARY: &str = "nvidia/nccl/lib/libnccl.so.2";

/// Versions from which every call bound here exists (`ncclSend`/`ncclRecv`: 2.7).
const MIN_VERSION: (u32, u32) = (2, 7);

/// One place to load the library from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Candidate {
    /// A name for the dynamic loader's own search.
    Name(&'static str),
    /// A file.
    Path(PathBuf),
}

impl std::fmt::Display for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Name(name) => write!(f, "{name} (the dynamic loader's search)"),
            Self::Path(path) => write!(f, "{}", path.display()),
        }
    }
}

/// Every place to try, in order ([the module's list](self)): `env` reads a variable, and
/// the fixed folders are taken below `root` (`/`, except in tests). Only files that exist
/// are listed from the Python folders.
pub fn candidates(env: &dyn Fn(&str) -> Option<OsString>, root: &Path) -> Vec<Candidate> {
    if let Some(path) = env(ENV_LIBRARY).filter(|p| !p.is_empty()) {
        return vec![Candidate::Path(PathBuf::from(path))];
    }
    let mut out: Vec<Candidate> = NAMES.iter().map(|&n| Candidate::Name(n)).collect();
    let site = |prefix: &Path| -> Vec<PathBuf> {
        ["site-packages", "dist-packages"]
            .iter()
            .flat_map(|packages| glob(&prefix.join("lib"), &["python3*", packages, WHEEL_LIBRARY]))
            .collect()
    };
    let mut files = vec![];
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(prefix) = env(var).filter(|p| !p.is_empty()) {
            let prefix = PathBuf::from(prefix);
            if var == "CONDA_PREFIX" {
                files.extend(glob(&prefix, &["lib", "libnccl.so.2"]));
            }
            files.extend(site(&prefix));
        }
    }
    if let Some(home) = env("HOME").filter(|p| !p.is_empty()) {
        files.extend(site(&PathBuf::from(home).join(".local")));
    }
    files.extend(site(&root.join("usr/local")));
    files.extend(site(&root.join("usr")));
    for venv in [".venv", "venv", ""] {
        let pattern: Vec<&str> = ["*", venv].into_iter().filter(|c| !c.is_empty()).collect();
        for prefix in glob(&root.join("opt"), &pattern) {
            files.extend(site(&prefix));
        }
    }
    for f in files {
        let c = Candidate::Path(f);
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// The paths below `base` matching `components`, each a name or a pattern with one `*`
/// (any run of characters, not a leading dot), in sorted order; only paths that exist.
fn glob(base: &Path, components: &[&str]) -> Vec<PathBuf> {
    let mut paths = vec![base.to_path_buf()];
    for component in components.iter().flat_map(|c| c.split('/')) {
        let mut next = vec![];
        for dir in &paths {
            match component.split_once('*') {
                None => {
                    let p = dir.join(component);
                    if p.exists() {
                        next.push(p);
                    }
                }
                Some((prefix, suffix)) => {
                    let Ok(entries) = std::fs::read_dir(dir) else {
                        continue;
                    };
                    let mut names: Vec<String> = entries
                        .filter_map(|e| e.ok()?.file_name().into_string().ok())
                        .filter(|n| {
                            !n.starts_with('.')
                                && n.len() >= prefix.len() + suffix.len()
                                && n.starts_with(prefix)
                                && n.ends_with(suffix)
                        })
                        .collect();
                    names.sort();
                    next.extend(names.into_iter().map(|n| dir.join(n)));
                }
            }
        }
        paths = next;
    }
    paths
}

type NcclResult = c_int;
/// `ncclComm_t`.
type RawComm = *mut c_void;
/// `cudaStream_t`, the driver's `CUstream`.
type RawStream = *mut c_void;

/// `ncclFloat32`.
const NCCL_FLOAT32: c_int = 7;

/// The calls bound, resolved once when the library is loaded.
struct Calls {
    get_version: unsafe extern "C" fn(*mut c_int) -> NcclResult,
    get_error_string: unsafe extern "C" fn(NcclResult) -> *const c_char,
    /// `ncclGetLastError` (2.13 and later): the detail behind the last failure.
    get_last_error: Option<unsafe extern "C" fn(RawComm) -> *const c_char>,
    comm_init_all: unsafe extern "C" fn(*mut RawComm, c_int, *const c_int) -> NcclResult,
    comm_destroy: unsafe extern "C" fn(RawComm) -> NcclResult,
    comm_get_async_error: unsafe extern "C" fn(RawComm, *mut NcclResult) -> NcclResult,
    group_start: unsafe extern "C" fn() -> NcclResult,
    group_end: unsafe extern "C" fn() -> NcclResult,
    send:
        unsafe extern "C" fn(*const c_void, usize, c_int, c_int, RawComm, RawStream) -> NcclResult,
    recv: unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, RawComm, RawStream) -> NcclResult,
}

/// The loaded library: where from, its version, its calls. Loaded once per process
/// ([`load`]) and never unloaded.
pub struct Nccl {
    path: String,
    version: (u32, u32, u32),
    calls: Calls,
    _library: libloading::Library,
}

impl Nccl {
    /// Where it was loaded from (a path, or the name the loader found).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// `(major, minor, patch)`.
    pub fn version(&self) -> (u32, u32, u32) {
        self.version
    }

    /// [`Error::Nccl`] for a result other than success.
    fn check(&self, call: &'static str, code: NcclResult) -> Result<()> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: NCCL returns a static string for any code.
        let text = unsafe { (self.calls.get_error_string)(code) };
        let mut message = c_text(text).unwrap_or_else(|| "(no message)".into());
        if let Some(last) = self.calls.get_last_error {
            // SAFETY: a null communicator asks for the last error of any; the string is
            // NCCL's, valid until its next call.
            let detail = c_text(unsafe { last(std::ptr::null_mut()) });
            if let Some(detail) = detail.filter(|d| !d.is_empty()) {
                message = format!("{message} ({detail})");
            }
        }
        Err(Error::Nccl {
            call,
            code: code as u32,
            message,
        })
    }
}

/// A C string's text; `None` for a null pointer.
fn c_text(p: *const c_char) -> Option<String> {
    // SAFETY: NCCL's strings are NUL-terminated and outlive this copy.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Resolves symbol `name` of `lib` as an `F`.
///
/// # Safety
/// `F` is the symbol's C signature.
unsafe fn symbol<F: Copy>(lib: &libloading::Library, name: &str) -> std::result::Result<F, String> {
    // SAFETY: the caller's contract: `F` is the symbol's type.
    unsafe { lib.get::<F>(name) }
        .map(|s| *s)
        .map_err(|e| format!("no symbol {name} ({e})"))
}

/// Loads the library at `candidate` and resolves its calls; why not, otherwise.
fn open(candidate: &Candidate) -> std::result::Result<Nccl, String> {
    let path = candidate.to_string();
    let library = match candidate {
        // SAFETY: loading runs the library's initialisers: NCCL's, for the names and files
        // this search finds (a file given in KERNELS_GPU_NCCL is the user's choice).
        Candidate::Name(name) => unsafe { libloading::Library::new(*name) },
        // SAFETY: as above.
        Candidate::Path(p) => unsafe { libloading::Library::new(p) },
    }
    .map_err(|e| e.to_string())?;
    // SAFETY: each type is the C signature of the NCCL call of that name (nccl.h, 2.7 and
    // later; `ncclGetLastError` from 2.13).
    let calls = unsafe {
        Calls {
            get_version: symbol(&library, "ncclGetVersion")?,
            get_error_string: symbol(&library, "ncclGetErrorString")?,
            get_last_error: symbol(&library, "ncclGetLastError").ok(),
            comm_init_all: symbol(&library, "ncclCommInitAll")?,
            comm_destroy: symbol(&library, "ncclCommDestroy")?,
            comm_get_async_error: symbol(&library, "ncclCommGetAsyncError")?,
            group_start: symbol(&library, "ncclGroupStart")?,
            group_end: symbol(&library, "ncclGroupEnd")?,
            send: symbol(&library, "ncclSend")?,
            recv: symbol(&library, "ncclRecv")?,
        }
    };
    let mut code = 0;
    // SAFETY: writes one int.
    let rc = unsafe { (calls.get_version)(&mut code) };
    if rc != 0 {
        return Err(format!("ncclGetVersion failed with code {rc}"));
    }
    let version = decode_version(code as u32);
    if (version.0, version.1) < MIN_VERSION {
        return Err(format!(
            "NCCL {}.{}.{} is older than {}.{}, the first with ncclSend and ncclRecv",
            version.0, version.1, version.2, MIN_VERSION.0, MIN_VERSION.1
        ));
    }
    Ok(Nccl {
        path,
        version,
        calls,
        _library: library,
    })
}

/// `ncclGetVersion`'s code as `(major, minor, patch)`: `major·10000 + minor·100 + patch`
/// from 2.9, `major·1000 + minor·100 + patch` before.
pub fn decode_version(code: u32) -> (u32, u32, u32) {
    if code >= 10000 {
        (code / 10000, code / 100 % 100, code % 100)
    } else {
        (code / 1000, code / 100 % 10, code % 100)
    }
}

/// The library, loaded by the first call that finds it ([the search](self)); the
/// environment NCCL reads is set first ([the module's notes](self)). Each failed call
/// searches again. [`Error::NcclNotFound`] lists every place tried and why each failed;
/// `devices` is the GPU count that needs it, for the message.
pub fn load(devices: usize) -> Result<&'static Nccl> {
    static LOADED: Mutex<Option<&'static Nccl>> = Mutex::new(None);
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(nccl) = *loaded {
        return Ok(nccl);
    }
    set_environment();
    let nccl = open_first(
        devices,
        &candidates(&|v| std::env::var_os(v), Path::new("/")),
    )?;
    let nccl: &'static Nccl = Box::leak(Box::new(nccl));
    *loaded = Some(nccl);
    Ok(nccl)
}

/// The first of `candidates` that loads as NCCL; [`Error::NcclNotFound`] listing each with
/// why it failed where none does.
pub fn open_first(devices: usize, candidates: &[Candidate]) -> Result<Nccl> {
    let mut tried = vec![];
    for c in candidates {
        match open(c) {
            Ok(nccl) => return Ok(nccl),
            Err(why) => tried.push(format!("{c}: {why}")),
        }
    }
    Err(Error::NcclNotFound { devices, tried })
}

/// The variables NCCL reads at its first initialisation, set before it is loaded:
/// `NCCL_NVLS_ENABLE=0` always, `NCCL_P2P_DIRECT_DISABLE=1` unless set.
pub fn nccl_environment(
    current: &dyn Fn(&str) -> Option<OsString>,
) -> Vec<(&'static str, &'static str)> {
    let mut set = vec![];
    if current("NCCL_NVLS_ENABLE").as_deref() != Some("0".as_ref()) {
        set.push(("NCCL_NVLS_ENABLE", "0"));
    }
    if current("NCCL_P2P_DIRECT_DISABLE").is_none() {
        set.push(("NCCL_P2P_DIRECT_DISABLE", "1"));
    }
    set
}

fn set_environment() {
    for (name, value) in nccl_environment(&|v| std::env::var_os(v)) {
        // SAFETY: set once, under `load`'s lock, before libnccl is loaded (so before any of
        // its threads exist); std's own readers of the environment take the same lock as
        // this write. Only foreign code calling `getenv` on another thread at this instant
        // could race it, and this crate starts no such thread.
        unsafe { std::env::set_var(name, value) };
    }
}

/// One NCCL communicator per device of one process (`ncclCommInitAll`), destroyed when
/// dropped. Its calls take raw device pointers and streams: the multi-GPU handle
/// ([`crate::multi::Gpus`]) owns the buffers and orders the streams.
pub struct Communicator {
    nccl: &'static Nccl,
    comms: Vec<RawComm>,
}

// SAFETY: NCCL communicators may be used from any thread, one thread at a time; the handle
// keeps this behind a mutex.
unsafe impl Send for Communicator {}

impl Communicator {
    /// Communicators over the CUDA devices `ordinals`, rank `i` on `ordinals[i]`.
    pub fn new(nccl: &'static Nccl, ordinals: &[usize]) -> Result<Self> {
        let devices: Vec<c_int> = ordinals.iter().map(|&d| d as c_int).collect();
        let mut comms = vec![std::ptr::null_mut(); devices.len()];
        // SAFETY: `comms` has room for one communicator per device of `devices`.
        let rc = unsafe {
            (nccl.calls.comm_init_all)(comms.as_mut_ptr(), devices.len() as c_int, devices.as_ptr())
        };
        nccl.check("ncclCommInitAll", rc)?;
        Ok(Self { nccl, comms })
    }

    /// The library.
    pub fn nccl(&self) -> &'static Nccl {
        self.nccl
    }

    /// Runs `queue` between `ncclGroupStart` and `ncclGroupEnd`, as one process driving
    /// several devices must: the group is ended even when `queue` fails, and its error is
    /// returned first.
    pub fn group(&self, queue: impl FnOnce() -> Result<()>) -> Result<()> {
        // SAFETY: no arguments.
        let started = unsafe { (self.nccl.calls.group_start)() };
        self.nccl.check("ncclGroupStart", started)?;
        let queued = queue();
        // SAFETY: ends the group started above.
        let ended = self
            .nccl
            .check("ncclGroupEnd", unsafe { (self.nccl.calls.group_end)() });
        queued.and(ended)
    }

    /// Queues a send of `count` f32s at device address `buf` from rank `rank` to rank
    /// `peer`, on `stream`.
    ///
    /// # Safety
    /// `buf` holds `count` f32s on rank `rank`'s device, left unwritten until the send has
    /// run on `stream`, which belongs to that device; the peer queues the matching receive.
    pub unsafe fn send(
        &self, rank: usize, buf: u64, count: usize, peer: usize, stream: RawStream,
    ) -> Result<()> {
        let (dtype, peer, comm) = (NCCL_FLOAT32, peer as c_int, self.comms[rank]);
        // SAFETY: the caller's contract.
        let rc = unsafe {
            (self.nccl.calls.send)(buf as *const c_void, count, dtype, peer, comm, stream)
        };
        self.nccl.check("ncclSend", rc)
    }

    /// Queues a receive of `count` f32s into device address `buf` of rank `rank` from rank
    /// `peer`, on `stream`.
    ///
    /// # Safety
    /// `buf` has room for `count` f32s on rank `rank`'s device, neither read nor written by
    /// anything else until the receive has run on `stream`, which belongs to that device;
    /// the peer queues the matching send.
    pub unsafe fn recv(
        &self, rank: usize, buf: u64, count: usize, peer: usize, stream: RawStream,
    ) -> Result<()> {
        let (dtype, peer, comm) = (NCCL_FLOAT32, peer as c_int, self.comms[rank]);
        // SAFETY: the caller's contract.
        let rc =
            unsafe { (self.nccl.calls.recv)(buf as *mut c_void, count, dtype, peer, comm, stream) };
        self.nccl.check("ncclRecv", rc)
    }

    /// The first asynchronous error any communicator has met (a peer that failed, a
    /// network error), as [`Error::Nccl`].
    pub fn check_async(&self) -> Result<()> {
        for &comm in &self.comms {
            let mut state = 0;
            // SAFETY: a live communicator; writes one int.
            let rc = unsafe { (self.nccl.calls.comm_get_async_error)(comm, &mut state) };
            self.nccl.check("ncclCommGetAsyncError", rc)?;
            self.nccl.check("an asynchronous NCCL operation", state)?;
        }
        Ok(())
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        for &comm in &self.comms {
            // SAFETY: each communicator was made by ncclCommInitAll and is destroyed once;
            // the handle synchronises its streams before dropping this.
            let _ = unsafe { (self.nccl.calls.comm_destroy)(comm) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempDir;
    use std::collections::HashMap;

    fn env_of(vars: &[(&str, &Path)]) -> impl Fn(&str) -> Option<OsString> + use<> {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn paths(c: &[Candidate]) -> Vec<PathBuf> {
        c.iter()
            .filter_map(|c| match c {
                Candidate::Path(p) => Some(p.clone()),
                Candidate::Name(_) => None,
            })
            .collect()
    }

    #[test]
    fn the_override_alone_is_tried() {
        let env = env_of(&[(ENV_LIBRARY, Path::new("/x/libnccl.so.2"))]);
        assert_eq!(
            candidates(&env, Path::new("/nonexistent")),
            [Candidate::Path("/x/libnccl.so.2".into())]
        );
    }

    #[test]
    fn loader_names_then_python_folders_in_order() {
        let t = TempDir::new("nccl", "search");
        let torch =
            t.touch("opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2");
        let system = t.touch("usr/local/lib/python3.10/dist-packages/nvidia/nccl/lib/libnccl.so.2");
        let conda = t.touch("conda/lib/libnccl.so.2");
        let venv = t.touch("venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2");
        let home = t.touch("home/.local/lib/python3.9/site-packages/nvidia/nccl/lib/libnccl.so.2");
        // Not matched: a hidden folder under /opt, another library name.
        t.touch("opt/.hidden/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2");
        t.touch("opt/x/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.3");
        let env = env_of(&[
            ("VIRTUAL_ENV", &t.0.join("venv")),
            ("CONDA_PREFIX", &t.0.join("conda")),
            ("HOME", &t.0.join("home")),
        ]);
        let c = candidates(&env, &t.0);
        assert_eq!(
            c[..2],
            [
                Candidate::Name("libnccl.so.2"),
                Candidate::Name("libnccl.so")
            ]
        );
        assert_eq!(paths(&c), [venv, conda, home, system, torch]);
        // Nothing there: the loader's names only.
        let empty = TempDir::new("nccl", "empty");
        assert_eq!(candidates(&|_| None, &empty.0).len(), NAMES.len());
    }

    #[test]
    fn files_that_are_not_nccl_say_why_each_failed() {
        let t = TempDir::new("nccl", "broken");
        let fake =
            t.touch("opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2");
        let c = Candidate::Path(fake.clone());
        let why = open(&c).err().expect("a text file does not load");
        assert!(!why.is_empty());
        let missing = Candidate::Path(t.0.join("missing/libnccl.so.2"));
        assert!(open(&missing).is_err());
        // The typed error lists each place with its reason.
        let e = open_first(2, &[c, missing]).err().expect("nothing loads");
        let Error::NcclNotFound { devices: 2, tried } = &e else {
            panic!("{e}");
        };
        assert_eq!(tried.len(), 2);
        assert!(
            tried[0].starts_with(&fake.display().to_string()),
            "{tried:?}"
        );
        let text = e.to_string();
        assert!(
            text.contains("missing/libnccl.so.2") && text.contains(ENV_LIBRARY),
            "{text}"
        );
    }

    #[test]
    fn versions_decode_in_both_schemes() {
        assert_eq!(decode_version(22105), (2, 21, 5));
        assert_eq!(decode_version(2708), (2, 7, 8));
        assert_eq!(decode_version(21903), (2, 19, 3));
    }

    #[test]
    fn multicast_is_always_off_and_direct_access_off_unless_set() {
        assert_eq!(
            nccl_environment(&|_| None),
            [("NCCL_NVLS_ENABLE", "0"), ("NCCL_P2P_DIRECT_DISABLE", "1")]
        );
        let set = |v: &str| -> Option<OsString> {
            match v {
                "NCCL_NVLS_ENABLE" => Some("1".into()),
                "NCCL_P2P_DIRECT_DISABLE" => Some("0".into()),
                _ => None,
            }
        };
        assert_eq!(nccl_environment(&set), [("NCCL_NVLS_ENABLE", "0")]);
        let done = |v: &str| -> Option<OsString> {
            (v == "NCCL_NVLS_ENABLE" || v == "NCCL_P2P_DIRECT_DISABLE").then(|| "0".into())
        };
        assert!(nccl_environment(&done).is_empty());
    }
}
