//! What the host keeps on disk between processes: its folder, and the compiled kernels.
//!
//! The folder is `$XDG_CACHE_HOME/pure-rust-cuda-kernels` (an absolute `XDG_CACHE_HOME`, as
//! the XDG spec requires), else `$HOME/.cache/pure-rust-cuda-kernels`. It holds the
//! autotuner's choices (`autotune.json`, [`crate::gpu::autotune`]) and the kernels compiled
//! for this machine's GPU and driver ([`CubinCache`], `cubin/`). Deleting it costs one
//! compile (and one tuning per shape) again.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The cache folder for these values of `XDG_CACHE_HOME` and `HOME`; `None` without either.
pub fn dir_from(xdg_cache_home: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let xdg = xdg_cache_home
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        home.filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".cache"))
    })?;
    Some(base.join("pure-rust-cuda-kernels"))
}

/// The cache folder of this process ([`dir_from`] on its environment).
pub fn dir() -> Option<PathBuf> {
    dir_from(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
}

/// A 64-bit FNV-1a hash of `bytes` from `basis`: stable across runs and builds, unlike
/// std's hashers.
pub fn fnv1a(bytes: &[u8], basis: u64) -> u64 {
    bytes.iter().fold(basis, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// FNV-1a's standard offset basis.
pub const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// The first bytes of a cached kernel's file; a file without them is ignored.
const MAGIC: &[u8; 8] = b"PRCKCB01";

/// Kernels compiled for one GPU architecture and driver, one file per module text:
/// `cubin/sm_<cc>-driver<version>/<hash of the PTX>.cubin` in the cache folder. The driver
/// compiles a module again only when its text changes (a kernel's code, the build), for
/// another GPU or after a driver update. A file that is unreadable, truncated or not one
/// of ours is a miss, and is written again. `CUDA_CACHE_DISABLE=1`, the driver's own
/// switch for its cache, turns this one off too.
#[derive(Clone, Debug)]
pub struct CubinCache {
    dir: Option<PathBuf>,
}

impl CubinCache {
    /// The cache of compute capability `cc` under driver API version `driver`.
    pub fn new(cc: (i32, i32), driver: i32) -> Self {
        let off = std::env::var_os("CUDA_CACHE_DISABLE").is_some_and(|v| v == "1");
        let dir = (!off).then(dir).flatten().map(|d| {
            d.join("cubin")
                .join(format!("sm_{}{}-driver{driver}", cc.0, cc.1))
        });
        Self { dir }
    }

    /// A cache in `dir` (none for `None`), for tests.
    pub fn in_dir(dir: Option<PathBuf>) -> Self {
        Self { dir }
    }

    /// The folder it reads and writes, if any.
    pub fn folder(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn file(&self, ptx: &str) -> Option<PathBuf> {
        let bytes = ptx.as_bytes();
        let (h1, h2) = (
            fnv1a(bytes, FNV_BASIS),
            fnv1a(bytes, FNV_BASIS.rotate_left(17)),
        );
        Some(self.dir.as_ref()?.join(format!("{h1:016x}{h2:016x}.cubin")))
    }

    /// The compiled module of `ptx`, if it is cached whole.
    pub fn get(&self, ptx: &str) -> Option<Vec<u8>> {
        let data = std::fs::read(self.file(ptx)?).ok()?;
        let (header, cubin) = data.split_at_checked(24)?;
        let (magic, rest) = header.split_at(8);
        let len = u64::from_le_bytes(rest[..8].try_into().ok()?);
        let hash = u64::from_le_bytes(rest[8..].try_into().ok()?);
        (magic == MAGIC && len == cubin.len() as u64 && hash == fnv1a(cubin, FNV_BASIS))
            .then(|| cubin.to_vec())
    }

    /// Keeps `cubin` as the compiled module of `ptx`: written to a temporary file, then
    /// renamed, so that a reader never sees half of one. A failure only costs a compile
    /// next time, and is said once on stderr.
    pub fn put(&self, ptx: &str, cubin: &[u8]) {
        let Some(file) = self.file(ptx) else {
            return;
        };
        let mut data = Vec::with_capacity(24 + cubin.len());
        data.extend_from_slice(MAGIC);
        data.extend_from_slice(&(cubin.len() as u64).to_le_bytes());
        data.extend_from_slice(&fnv1a(cubin, FNV_BASIS).to_le_bytes());
        data.extend_from_slice(cubin);
        let tmp = file.with_extension(format!("tmp.{}", std::process::id()));
        let written = file
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&tmp, &data))
            .and_then(|()| std::fs::rename(&tmp, &file));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                eprintln!(
                    "warning: could not keep a compiled kernel in {} ({e}); kernels are compiled again in each process",
                    file.parent().unwrap_or(&file).display()
                );
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_follows_xdg_then_home() {
        let folder = |base: &str| Some(Path::new(base).join("pure-rust-cuda-kernels"));
        assert_eq!(
            dir_from(Some("/xdg".into()), Some("/home/u".into())),
            folder("/xdg")
        );
        // A relative XDG_CACHE_HOME is invalid per the spec: fall back to HOME.
        assert_eq!(
            dir_from(Some("rel".into()), Some("/home/u".into())),
            folder("/home/u/.cache")
        );
        assert_eq!(
            dir_from(None, Some("/home/u".into())),
            folder("/home/u/.cache")
        );
        assert_eq!(dir_from(None, Some("".into())), None);
        assert_eq!(dir_from(None, None), None);
    }

    #[test]
    fn a_cubin_comes_back_whole_or_not_at_all() {
        let dir = crate::testing::TempDir::new("cubin", "whole");
        let cache = CubinCache::in_dir(Some(dir.0.join("cubins")));
        assert_eq!(cache.get(".entry a"), None, "nothing cached yet");
        cache.put(".entry a", b"\x7fELF cubin");
        assert_eq!(
            cache.get(".entry a").as_deref(),
            Some(&b"\x7fELF cubin"[..])
        );
        assert_eq!(cache.get(".entry b"), None, "another text is another file");
        // A truncated or foreign file is a miss.
        let file = cache.file(".entry a").unwrap();
        let data = std::fs::read(&file).unwrap();
        std::fs::write(&file, &data[..data.len() - 1]).unwrap();
        assert_eq!(cache.get(".entry a"), None);
        std::fs::write(&file, b"something else entirely, long enough").unwrap();
        assert_eq!(cache.get(".entry a"), None);
        // No folder: nothing kept, nothing found.
        let none = CubinCache::in_dir(None);
        none.put(".entry a", b"x");
        assert_eq!(none.get(".entry a"), None);
    }
}
