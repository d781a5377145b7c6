//! Just enough of ELF-64 (little-endian) to say what a binary will load: its dynamic
//! section (`DT_NEEDED`, `DT_SONAME`, `DT_RPATH`, `DT_RUNPATH`) and the functions a shared
//! library defines. Read from the section headers, as `readelf -d` does.

use std::fmt;

/// What the dynamic section of an ELF file says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dynamic {
    /// The libraries the loader must find, in order (`DT_NEEDED`).
    pub needed: Vec<String>,
    /// The library's own name (`DT_SONAME`).
    pub soname: Option<String>,
    /// Search paths baked in (`DT_RPATH` and `DT_RUNPATH`, each split at `:`).
    pub search_paths: Vec<String>,
}

/// A file this module cannot read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfError(pub String);

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a readable ELF-64 little-endian file: {}", self.0)
    }
}

impl std::error::Error for ElfError {}

const SHT_DYNAMIC: u32 = 6;
const SHT_DYNSYM: u32 = 11;
const DT_NEEDED: u64 = 1;
const DT_SONAME: u64 = 14;
const DT_RPATH: u64 = 15;
const DT_RUNPATH: u64 = 29;
const STT_FUNC: u8 = 2;

struct Section {
    kind: u32,
    offset: usize,
    size: usize,
    link: usize,
}

struct Elf<'a> {
    bytes: &'a [u8],
    sections: Vec<Section>,
}

impl<'a> Elf<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Self, ElfError> {
        if bytes.get(..6) != Some(&[0x7f, b'E', b'L', b'F', 2, 1]) {
            return Err(ElfError("bad magic, class or byte order".into()));
        }
        let mut elf = Elf {
            bytes,
            sections: vec![],
        };
        let (shoff, shentsize, shnum) = (elf.u64(0x28)?, elf.u16(0x3a)?, elf.u16(0x3c)?);
        for i in 0..shnum {
            let h = usize::try_from(shoff)
                .ok()
                .and_then(|o| o.checked_add(i * shentsize))
                .ok_or_else(|| ElfError("section header offset".into()))?;
            elf.sections.push(Section {
                kind: elf.u32(h + 4)?,
                offset: elf.u64(h + 24)? as usize,
                size: elf.u64(h + 32)? as usize,
                link: elf.u32(h + 40)? as usize,
            });
        }
        Ok(elf)
    }

    fn field<const N: usize>(&self, at: usize) -> Result<[u8; N], ElfError> {
        self.bytes
            .get(at..at.saturating_add(N))
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| ElfError(format!("truncated at byte {at}")))
    }

    fn u16(&self, at: usize) -> Result<usize, ElfError> {
        Ok(u16::from_le_bytes(self.field(at)?).into())
    }

    fn u32(&self, at: usize) -> Result<u32, ElfError> {
        Ok(u32::from_le_bytes(self.field(at)?))
    }

    fn u64(&self, at: usize) -> Result<u64, ElfError> {
        Ok(u64::from_le_bytes(self.field(at)?))
    }

    /// The NUL-terminated string at `offset` of string-table section `table`.
    fn string(&self, table: usize, offset: u64) -> Result<String, ElfError> {
        let s = self
            .sections
            .get(table)
            .ok_or_else(|| ElfError(format!("no string table {table}")))?;
        let start = s.offset.saturating_add(offset as usize);
        let tail = self
            .bytes
            .get(start..s.offset.saturating_add(s.size))
            .ok_or_else(|| ElfError(format!("string at {start} outside its table")))?;
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        Ok(String::from_utf8_lossy(&tail[..end]).into_owned())
    }

    /// `(entry offset, string table)` of each `entsize`-byte entry of sections of `kind`.
    fn entries(&self, kind: u32, entsize: usize) -> Vec<(usize, usize)> {
        self.sections
            .iter()
            .filter(|s| s.kind == kind)
            .flat_map(|s| (0..s.size / entsize).map(move |i| (s.offset + i * entsize, s.link)))
            .collect()
    }
}

/// The dynamic section of the ELF file `bytes` (empty for a static binary).
pub fn dynamic(bytes: &[u8]) -> Result<Dynamic, ElfError> {
    let elf = Elf::parse(bytes)?;
    let mut d = Dynamic::default();
    for (at, strtab) in elf.entries(SHT_DYNAMIC, 16) {
        let (tag, val) = (elf.u64(at)?, elf.u64(at + 8)?);
        match tag {
            DT_NEEDED => d.needed.push(elf.string(strtab, val)?),
            DT_SONAME => d.soname = Some(elf.string(strtab, val)?),
            DT_RPATH | DT_RUNPATH => d
                .search_paths
                .extend(elf.string(strtab, val)?.split(':').map(str::to_owned)),
            _ => {}
        }
    }
    Ok(d)
}

/// The functions the shared library `bytes` defines and exports (`.dynsym` entries of type
/// `FUNC` with a section), sorted.
pub fn defined_functions(bytes: &[u8]) -> Result<Vec<String>, ElfError> {
    let elf = Elf::parse(bytes)?;
    let mut names = vec![];
    for (at, strtab) in elf.entries(SHT_DYNSYM, 24) {
        let (info, shndx) = (elf.field::<1>(at + 4)?[0], elf.u16(at + 6)?);
        if info & 0xf == STT_FUNC && shndx != 0 {
            names.push(elf.string(strtab, u64::from(elf.u32(at)?))?);
        }
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_what_is_not_elf64() {
        assert!(dynamic(b"#!/bin/sh\n").is_err());
        assert!(dynamic(&[0x7f, b'E', b'L', b'F', 2, 1, 0]).is_err()); // truncated
    }

    #[test]
    fn reads_the_running_test_binary() {
        // Built by rustc for this host: it needs the C library, and no CUDA.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let d = dynamic(&me).unwrap();
        assert!(d.needed.iter().any(|n| n.starts_with("libc.so")), "{d:?}");
        assert!(!d.needed.iter().any(|n| n.starts_with("libcuda")), "{d:?}");
    }
}
