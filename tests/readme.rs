//! The README's "use it from your project" steps, checked against the repository: the cudarc
//! dependency line it tells a new user to add is the one the example that follows those
//! steps uses (and the host library's version), and its launch snippet checks for the
//! driver before `CudaContext::new`, which panics where there is none. Its command-line
//! section's defaults and sample notice are the library's. On the CPU.

use kernels_gpu_host::Error;
use kernels_gpu_host::gpu::Gpu;

const README: &str = include_str!("../README.md");
const HOST_MANIFEST: &str = include_str!("../host/Cargo.toml");
/// `examples/fused-linear/host`: the README's steps, done.
const EXAMPLE_MANIFEST: &str = include_str!("../examples/fused-linear/host/Cargo.toml");

/// The README's section that starts with the heading `heading`, up to the next heading of
/// any level.
fn section(heading: &str) -> &'static str {
    let start = README
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("README has no heading `{heading}`"));
    let body = &README[start + heading.len() + 2..];
    let end = body.find("\n#").unwrap_or(body.len());
    &body[..end]
}

/// The first `cudarc = { ... }` table in `text`, with its whitespace collapsed to single
/// spaces (the README wraps it over lines).
fn cudarc_dependency(text: &str) -> String {
    let start = text
        .find("cudarc = {")
        .unwrap_or_else(|| panic!("no `cudarc = {{` in:\n{text}"));
    let end = start + text[start..].find('}').expect("the table closes");
    text[start..=end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The quoted strings after `key = ` in a one-table dependency line: its version, or its
/// features.
fn values(dependency: &str, key: &str) -> Vec<String> {
    // A space before the key: `features` is not `default-features`.
    let at = dependency
        .find(&format!(" {key} = "))
        .unwrap_or_else(|| panic!("no `{key}` in `{dependency}`"));
    let rest = &dependency[at + key.len() + 4..];
    let end = if rest.starts_with('[') {
        rest.find(']').expect("the list closes")
    } else {
        rest[1..].find('"').expect("the string closes") + 1
    };
    rest[..=end]
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn readme_cudarc_line_is_the_manifests() {
    let readme = cudarc_dependency(section("### 4. Launch it with cudarc"));
    let example = cudarc_dependency(EXAMPLE_MANIFEST);
    // Exactly what the example that follows the steps depends on.
    assert_eq!(readme, example, "README vs examples/fused-linear/host");
    let host = cudarc_dependency(HOST_MANIFEST);
    assert_eq!(values(&readme, "version").len(), 1, "{readme}");
    assert_eq!(
        values(&readme, "version"),
        values(&host, "version"),
        "README vs host/Cargo.toml: {readme} / {host}"
    );
    let (features, host_features) = (values(&readme, "features"), values(&host, "features"));
    for f in &features {
        assert!(
            host_features.contains(f),
            "{f} is not a feature of the host's cudarc: {host}"
        );
    }
    // The check the snippet shows only exists with run-time loading, which is also what
    // lets the crate build on a machine without CUDA.
    assert!(features.iter().any(|f| f == "dynamic-loading"), "{readme}");
    assert!(readme.contains("default-features = false"), "{readme}");
}

#[test]
fn readme_snippet_checks_for_the_driver_before_creating_a_context() {
    let step = section("### 4. Launch it with cudarc");
    let code_start = step.find("```rust").expect("step 4 has a rust snippet");
    let code = &step[code_start..];
    let code = &code[..code[7..].find("```").expect("the snippet closes") + 7];
    let check = code
        .find("cudarc::driver::sys::is_culib_present()")
        .expect("the snippet checks for the driver library");
    let create = code
        .find("CudaContext::new(")
        .expect("the snippet creates a context");
    assert!(check < create, "the check must come first:\n{code}");
    // The check returns early rather than going on to the constructor.
    assert!(code[check..create].contains("return Err("), "{code}");
}

/// What the README says about a machine without a driver: cudarc's constructor panics,
/// the check avoids it, and this library's constructor returns a typed error instead. Where
/// the driver library is present (a GPU machine), `Gpu::new` must not panic either: it
/// succeeds, or reports no device.
#[test]
fn without_a_driver_cudarc_panics_and_gpu_new_is_a_typed_error() {
    // SAFETY: only tries to open the library.
    let present = unsafe { cudarc::driver::sys::is_culib_present() };
    match Gpu::new() {
        Ok(_) => assert!(present, "a GPU without the driver library"),
        Err(Error::NoDriver(why)) => {
            assert!(!present, "NoDriver although libcuda loads: {why}");
        }
        Err(e @ (Error::NoDevice | Error::Driver { .. })) => {
            assert!(present, "{e}");
        }
        Err(other) => panic!("unexpected error {other:?}"),
    }
    if !present {
        let raw = std::panic::catch_unwind(|| cudarc::driver::CudaContext::new(0).map(drop));
        assert!(
            raw.is_err(),
            "CudaContext::new without libcuda returned {raw:?}; the README says it panics"
        );
    }
}

/// The command-line section's words, whitespace collapsed to single spaces.
fn command_line_words() -> String {
    section("## Command line")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn readme_default_kernel_set_notice_is_the_one_the_binary_prints() {
    use kernels_gpu_host::{MatmulKernel, MatmulShape, Precision};
    let shape = MatmulShape::new(16384, 16384, 16384).unwrap();
    let notice = MatmulKernel::default_set(shape, Precision::Fp32)
        .unwrap()
        .notice(shape)
        .expect("16384³ is above the threshold");
    assert!(
        section("## Command line").contains(&format!("\n{notice}\n")),
        "the README's line at 16384³ is not:\n{notice}"
    );
    let threshold = kernels_gpu_host::spot::FULL_CHECK_MAX_MACS;
    assert_eq!(threshold, 1 << 33, "the README says 2³³");
    assert!(command_line_words().contains("a product of up to 2³³ multiply-adds"));
}

#[test]
fn readme_time_budget_default_is_the_librarys() {
    assert_eq!(
        kernels_gpu_host::budget::DEFAULT,
        std::time::Duration::from_secs(1),
        "the README says 1 second"
    );
    assert!(
        command_line_words().contains("`--time-budget` (default 1 second)"),
        "{}",
        command_line_words()
    );
}
