//! The stub this build made stands for exactly the driver functions of the locked cust_raw.

use libcuda_stub::{BINDINGS_PATH, SONAME, STUB_PATH, bindings, elf};

#[test]
fn defines_every_function_of_the_locked_bindings_and_nothing_else() {
    let text = std::fs::read_to_string(BINDINGS_PATH).unwrap();
    let mut declared = bindings::driver_functions(&text).unwrap();
    declared.sort_unstable();
    let stub = std::fs::read(STUB_PATH).unwrap();
    assert_eq!(elf::defined_functions(&stub).unwrap(), declared);
    // cust 0.3's bindings declare some 350 driver functions.
    assert!(declared.len() > 300, "{}", declared.len());
    assert!(declared.contains(&"cuLaunchKernel"));
}

#[test]
fn is_named_as_the_driver_and_needs_no_cuda_library() {
    let d = elf::dynamic(&std::fs::read(STUB_PATH).unwrap()).unwrap();
    assert_eq!(d.soname.as_deref(), Some(SONAME));
    assert!(d.search_paths.is_empty(), "{d:?}");
    assert!(!d.needed.iter().any(|n| n.starts_with("libcu")), "{d:?}");
}
