//! What the cust binary loads at run time, read from its dynamic section: the driver's
//! `libcuda.so.1` and no other CUDA library, and no baked-in search path, so the link-time
//! stub is never what the loader finds. This test uses no cust and starts on any machine.

use libcuda_stub::{SONAME, elf};

fn is_cuda(lib: &str) -> bool {
    lib.starts_with("libcu") || lib.starts_with("libnv")
}

#[test]
fn the_binary_needs_the_driver_alone_and_no_search_path() {
    let bin = std::fs::read(env!("CARGO_BIN_EXE_cust-host")).unwrap();
    let d = elf::dynamic(&bin).unwrap();
    let cuda: Vec<&str> = d
        .needed
        .iter()
        .map(String::as_str)
        .filter(|n| is_cuda(n))
        .collect();
    assert_eq!(cuda, [SONAME], "{d:?}");
    assert!(d.search_paths.is_empty(), "RPATH/RUNPATH: {d:?}");
    assert_eq!(d.soname, None);
}

#[test]
fn this_test_itself_needs_no_cuda() {
    let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let d = elf::dynamic(&me).unwrap();
    assert!(!d.needed.iter().any(|n| is_cuda(n)), "{d:?}");
}
