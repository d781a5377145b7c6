//! What the library's unit tests share: imports nothing of the crate.

use std::path::PathBuf;

/// A fresh folder under the system's temporary one, `pure-rust-cuda-kernels-{what}-{pid}-{name}`,
/// removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(what: &str, name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "pure-rust-cuda-kernels-{what}-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    /// Creates a small file at `relative`, and its folders.
    pub fn touch(&self, relative: &str) -> PathBuf {
        let p = self.0.join(relative);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, b"not a library").unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
