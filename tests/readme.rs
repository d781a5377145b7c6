//! The crates' pages — each publishable crate's `README.md`, also its rustdoc front page — and
//! the main README's links to them, checked against the repository: the examples the pages
//! show are the example files, the dependency lines name this repository's crates (cudarc's
//! with the host library's version and features), the `build.rs` and kernel snippets are
//! those of the crates they quote, and the cudarc launch snippet checks for the driver before
//! `CudaContext::new`, which panics where there is none. The pages' Rust snippets also run as
//! doctests; this covers what a doctest cannot see. The command-line page's (`docs/cli.md`)
//! defaults and sample notice are the library's, and every relative link of `README.md` and
//! `docs/` leads to a file, and to a heading where it names one. On the CPU.

use kernels_gpu_host::Error;
use kernels_gpu_host::gpu::Gpu;

const MAIN_README: &str = include_str!("../README.md");
const CLI_PAGE: &str = include_str!("../docs/cli.md");
const TOOLCHAIN: &str = include_str!("../rust-toolchain.toml");

/// A publishable crate: its folder, page, manifest and library root.
struct Crate {
    dir: &'static str,
    page: &'static str,
    manifest: &'static str,
    lib: &'static str,
}

/// The [`Crate`] in folder `$dir` of the repository.
macro_rules! crate_files {
    ($dir:literal) => {
        Crate {
            dir: $dir,
            page: include_str!(concat!("../", $dir, "/README.md")),
            manifest: include_str!(concat!("../", $dir, "/Cargo.toml")),
            lib: include_str!(concat!("../", $dir, "/src/lib.rs")),
        }
    };
}

const NVPTX_DEVICE: Crate = crate_files!("nvptx-device");
const KERNELS_GPU: Crate = crate_files!("kernels-gpu");
const NVPTX_BUILDER: Crate = crate_files!("nvptx-builder");
const HOST: Crate = crate_files!("host");
const CRATES: [&Crate; 4] = [&NVPTX_DEVICE, &KERNELS_GPU, &NVPTX_BUILDER, &HOST];

/// `examples/fused-linear`: the downstream kernel crate and host the pages follow.
struct FusedLinear {
    kernels_manifest: &'static str,
    kernels_lib: &'static str,
    host_manifest: &'static str,
    host_lib: &'static str,
    host_build: &'static str,
}

const FUSED: FusedLinear = FusedLinear {
    kernels_manifest: include_str!("../examples/fused-linear/kernels/Cargo.toml"),
    kernels_lib: include_str!("../examples/fused-linear/kernels/src/lib.rs"),
    host_manifest: include_str!("../examples/fused-linear/host/Cargo.toml"),
    host_lib: include_str!("../examples/fused-linear/host/src/lib.rs"),
    host_build: include_str!("../examples/fused-linear/host/build.rs"),
};
const HOST_BUILD: &str = include_str!("../host/build.rs");
const SMOOTH3_EXAMPLE: &str = include_str!("../nvptx-device/examples/smooth3.rs");
const MATMUL_EXAMPLE: &str = include_str!("../host/examples/matmul.rs");

/// The section of `text` that starts with the heading `heading`, up to the next heading of
/// the same or a higher level outside code blocks.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no heading `{heading}`"));
    let body = &text[start + heading.len() + 2..];
    let level = heading.len() - heading.trim_start_matches('#').len();
    let (mut at, mut in_code) = (0, false);
    for line in body.split_inclusive('\n') {
        in_code ^= line.starts_with("```");
        let hashes = line.len() - line.trim_start_matches('#').len();
        if !in_code && hashes > 0 && hashes <= level && line[hashes..].starts_with(' ') {
            return &body[..at];
        }
        at += line.len();
    }
    body
}

/// The fenced code blocks of `text` that start at the beginning of a line: (info string,
/// body with a newline after every line).
fn code_blocks(text: &str) -> Vec<(&str, String)> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let mut body = String::new();
        for line in lines.by_ref() {
            if line == "```" {
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        blocks.push((info, body));
    }
    blocks
}

/// The one code block of `text` with info string `info` whose body contains `needle`.
fn block(text: &str, info: &str, needle: &str) -> String {
    let mut found = code_blocks(text)
        .into_iter()
        .filter(|(i, body)| *i == info && body.contains(needle))
        .map(|(_, body)| body);
    let one = found
        .next()
        .unwrap_or_else(|| panic!("no ```{info} block with `{needle}`"));
    assert!(
        found.next().is_none(),
        "two ```{info} blocks with `{needle}`"
    );
    one
}

/// `file` from its first line that starts with `prefix` on.
fn from_line<'a>(file: &'a str, prefix: &str) -> &'a str {
    let at = if file.starts_with(prefix) {
        0
    } else {
        file.find(&format!("\n{prefix}"))
            .unwrap_or_else(|| panic!("no line starting with `{prefix}`"))
            + 1
    };
    &file[at..]
}

/// The package name in a manifest (its first `name = "…"` line, under `[package]`).
fn package_name(manifest: &str) -> &str {
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("name = \""))
        .and_then(|rest| rest.split('"').next())
        .expect("a package name")
}

/// The first `{dep} = { ... }` table in `text`, with its whitespace collapsed to single
/// spaces.
fn dependency(text: &str, dep: &str) -> String {
    let start = text
        .find(&format!("\n{dep} = {{"))
        .unwrap_or_else(|| panic!("no `{dep} = {{` in:\n{text}"))
        + 1;
    let end = start + text[start..].find('}').expect("the table closes");
    text[start..=end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The quoted strings after `key = ` in a one-table dependency line: its version, path, or
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
fn every_page_is_its_crate_s_readme_and_rustdoc_front_page_and_is_linked() {
    for c in CRATES {
        assert!(
            c.manifest.lines().any(|l| l == "readme = \"README.md\""),
            "{}/Cargo.toml: readme",
            c.dir
        );
        assert!(
            c.lib
                .lines()
                .take_while(|l| l.starts_with("//") || l.starts_with("#!["))
                .any(|l| l == "#![cfg_attr(doc, doc = include_str!(\"../README.md\"))]"),
            "{}/src/lib.rs does not take its page as its crate documentation",
            c.dir
        );
        section(c.page, "## Use it from your project");
        let link = format!("]({}/README.md)", c.dir);
        assert!(MAIN_README.contains(&link), "README.md has no link {link}");
    }
}

/// Every path dependency a page tells a user to add names one of this repository's crates,
/// by its package name and folder, and each page names its own crate.
#[test]
fn pages_path_dependencies_are_this_repository_s_crates() {
    const CHECKOUT: &str = "../pure-rust-cuda-kernels/";
    for c in CRATES {
        let mut named = Vec::new();
        for (info, body) in code_blocks(c.page) {
            if info != "toml" {
                continue;
            }
            for line in body.lines().filter(|l| l.contains("path = ")) {
                let dep = line.split(" = {").next().expect("a dependency line");
                let path = values(&dependency(&format!("\n{line}"), dep), "path");
                let dir = path[0]
                    .strip_prefix(CHECKOUT)
                    .unwrap_or_else(|| panic!("{}: `{line}` is not into a checkout", c.dir));
                let target = CRATES
                    .iter()
                    .find(|t| t.dir == dir)
                    .unwrap_or_else(|| panic!("{}: `{line}`: no crate in {dir}", c.dir));
                assert_eq!(dep, package_name(target.manifest), "{}: `{line}`", c.dir);
                named.push(dep.to_owned());
            }
        }
        let own = package_name(c.manifest).to_owned();
        assert!(
            named.contains(&own),
            "{}'s page never depends on {own}",
            c.dir
        );
    }
}

#[test]
fn pages_toolchain_is_the_repository_s() {
    let channel = TOOLCHAIN
        .lines()
        .find_map(|l| l.strip_prefix("channel = \""))
        .expect("a channel");
    assert!(channel.starts_with("nightly"), "{channel}");
    for needed in ["\"rust-src\"", "\"nvptx64-nvidia-cuda\""] {
        assert!(
            TOOLCHAIN.contains(needed),
            "rust-toolchain.toml lacks {needed}"
        );
    }
    for c in CRATES {
        let text = section(c.page, "## Use it from your project");
        for named in [
            "rust-toolchain.toml",
            "nightly",
            "`rust-src`",
            "`nvptx64-nvidia-cuda`",
        ] {
            assert!(
                text.contains(named),
                "{}'s page does not name {named}",
                c.dir
            );
        }
    }
}

/// The examples the pages show in full are the example files, and run as doctests.
#[test]
fn pages_examples_are_the_example_files() {
    for (c, example) in [(&NVPTX_DEVICE, SMOOTH3_EXAMPLE), (&HOST, MATMUL_EXAMPLE)] {
        let code = from_line(example, "use ");
        let first = code.lines().next().expect("a first line");
        assert_eq!(block(c.page, "rust", first), code, "{}'s page", c.dir);
    }
}

/// nvptx-device's page: the kernel crate's `[lib]` and crate root are those of
/// `fused-linear-kernels`, the kernel crate built from them in this repository.
#[test]
fn device_page_kernel_crate_is_fused_linear_s() {
    let page = NVPTX_DEVICE.page;
    let manifest = block(page, "toml", "[lib]");
    // The first line of the `[lib]` table, without its comment.
    let lib = |m: &str| -> String {
        let at = m.find("[lib]\n").expect("a [lib] table");
        let line = m[at..].lines().nth(1).expect("a line in [lib]");
        line.split('#').next().unwrap_or(line).trim().to_owned()
    };
    assert_eq!(lib(&manifest), "crate-type = [\"rlib\"]");
    assert_eq!(lib(&manifest), lib(FUSED.kernels_manifest));
    let root = block(page, "rust,ignore", "#![no_std]");
    let attributes: Vec<&str> = root.lines().filter(|l| l.starts_with("#!")).collect();
    assert_eq!(attributes.len(), 2, "{root}");
    for a in attributes {
        assert!(
            FUSED.kernels_lib.lines().any(|l| l == a),
            "not in examples/fused-linear/kernels/src/lib.rs: `{a}`"
        );
    }
}

/// nvptx-builder's page: `examples/fused-linear`'s `build.rs` and its embedding line.
#[test]
fn builder_page_quotes_fused_linear() {
    let page = NVPTX_BUILDER.page;
    assert_eq!(
        block(page, "rust,no_run", "PtxBuilder::new("),
        from_line(FUSED.host_build, "fn main")
    );
    let embed = block(page, "rust,ignore", "include_str!");
    assert!(FUSED.host_lib.contains(&embed), "{embed}");
    // The file name the page gives is the one the build writes.
    let lib = package_name(FUSED.kernels_manifest).replace('-', "_");
    assert!(embed.contains(&format!("\"/{lib}.ptx\"")), "{embed}");
}

/// kernels-gpu's page: the host's `build.rs`, the dependency without entry points, and the
/// fused kernel, line for line `fused-linear-kernels`' own.
#[test]
fn kernels_gpu_page_quotes_the_host_and_fused_linear() {
    let page = KERNELS_GPU.page;
    assert_eq!(
        block(page, "rust,ignore", "for_dependency"),
        from_line(HOST_BUILD, "fn main")
    );
    let (ours, theirs) = (
        dependency(page, "kernels-gpu"),
        dependency(FUSED.kernels_manifest, "kernels-gpu"),
    );
    for d in [&ours, &theirs] {
        assert!(d.contains("default-features = false"), "{d}");
    }
    let fused = block(page, "rust", "pub unsafe fn fused_linear(");
    let kernel = &fused[..fused.find("\nfn main").expect("a main")];
    let lines: Vec<&str> = FUSED.kernels_lib.lines().map(str::trim).collect();
    let mut checked = 0;
    for line in kernel.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("//") || line.starts_with("use ") {
            continue;
        }
        assert!(
            lines.contains(&line),
            "not in examples/fused-linear/kernels/src/lib.rs: `{line}`"
        );
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} lines checked");
}

#[test]
fn host_page_cudarc_line_is_the_manifests() {
    let page = dependency(section(HOST.page, "## Use it from your project"), "cudarc");
    // Exactly what the example that launches its own kernels beside a `Gpu` depends on.
    let example = dependency(FUSED.host_manifest, "cudarc");
    assert_eq!(
        page, example,
        "host/README.md vs examples/fused-linear/host"
    );
    let host = dependency(HOST.manifest, "cudarc");
    assert_eq!(values(&page, "version").len(), 1, "{page}");
    assert_eq!(
        values(&page, "version"),
        values(&host, "version"),
        "host/README.md vs host/Cargo.toml: {page} / {host}"
    );
    let (features, host_features) = (values(&page, "features"), values(&host, "features"));
    for f in &features {
        assert!(
            host_features.contains(f),
            "{f} is not a feature of the host's cudarc: {host}"
        );
    }
    // The check the launch snippet shows only exists with run-time loading, which is also
    // what lets the crate build on a machine without CUDA.
    assert!(features.iter().any(|f| f == "dynamic-loading"), "{page}");
    assert!(page.contains("default-features = false"), "{page}");
}

#[test]
fn host_page_cudarc_snippet_checks_for_the_driver_before_creating_a_context() {
    let code = block(
        section(HOST.page, "## Launching your own kernels"),
        "rust,no_run",
        "CudaContext::new(",
    );
    let check = code
        .find("cudarc::driver::sys::is_culib_present()")
        .expect("the snippet checks for the driver library");
    let create = code.find("CudaContext::new(").expect("a context");
    assert!(check < create, "the check must come first:\n{code}");
    // The check returns early rather than going on to the constructor.
    assert!(code[check..create].contains("return Err("), "{code}");
}

/// What the host page says about a machine without a driver: cudarc's constructor panics,
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
            "CudaContext::new without libcuda returned {raw:?}; the host page says it panics"
        );
    }
}

/// The command-line page's words, whitespace collapsed to single spaces.
fn command_line_words() -> String {
    CLI_PAGE.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn cli_page_default_kernel_set_notice_is_the_one_the_binary_prints() {
    use kernels_gpu_host::{MatmulKernel, MatmulShape, Precision};
    let shape = MatmulShape::new(16384, 16384, 16384).unwrap();
    let notice = MatmulKernel::default_set(shape, Precision::Fp32)
        .unwrap()
        .notice(shape)
        .expect("16384³ is above the threshold");
    assert!(
        CLI_PAGE.contains(&format!("\n{notice}\n")),
        "docs/cli.md's line at 16384³ is not:\n{notice}"
    );
    let threshold = kernels_gpu_host::check::spot::FULL_CHECK_MAX_MACS;
    assert_eq!(threshold, 1 << 33, "docs/cli.md says 2³³");
    assert!(command_line_words().contains("a product of up to 2³³ multiply-adds"));
}

#[test]
fn cli_page_time_budget_default_is_the_librarys() {
    assert_eq!(
        kernels_gpu_host::plan::budget::DEFAULT,
        std::time::Duration::from_secs(1),
        "docs/cli.md says 1 second"
    );
    assert!(
        command_line_words().contains("`--time-budget` (default 1 second)"),
        "{}",
        command_line_words()
    );
}

/// The repository's root: the host package's parent folder.
fn repository() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the host package is in the repository")
        .to_path_buf()
}

/// `text` with the lines of its fenced code blocks left empty (so that line numbers stay).
fn outside_code_blocks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if !in_code {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The anchors of `text`'s headings, as GitHub makes them: lower case, everything but
/// letters, digits, spaces, `-` and `_` dropped, spaces made `-`, and a repeated anchor
/// numbered `-1`, `-2`, ….
fn anchors(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashMap::new();
    let mut found = Vec::new();
    for line in outside_code_blocks(text).lines() {
        let hashes = line.len() - line.trim_start_matches('#').len();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let slug: String = line[hashes..]
            .trim()
            .to_lowercase()
            .chars()
            .filter(|&c| c.is_alphanumeric() || c == ' ' || c == '-' || c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let times: &mut usize = seen.entry(slug.clone()).or_default();
        found.push(match *times {
            0 => slug,
            n => format!("{slug}-{n}"),
        });
        *times += 1;
    }
    found
}

/// The markdown files whose links are checked: the README and every page under `docs/`.
fn pages(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = vec![root.join("README.md")];
    let mut folders = vec![root.join("docs")];
    while let Some(folder) = folders.pop() {
        let entries =
            std::fs::read_dir(&folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
        for entry in entries {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn every_relative_link_of_the_readme_and_docs_resolves() {
    let root = repository();
    let link = regex::Regex::new(r"\]\(([^)\s]+)(?:\s[^)]*)?\)").expect("a valid pattern");
    // Inline code spans: a link's text may be one, and code may show brackets that are no link.
    let spans = regex::Regex::new(r"`[^`]*`").expect("a valid pattern");
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages(&root) {
        let text =
            std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        let name = page
            .strip_prefix(&root)
            .unwrap_or(&page)
            .display()
            .to_string();
        let prose = spans
            .replace_all(&outside_code_blocks(&text), "")
            .into_owned();
        for (number, line) in prose.lines().enumerate() {
            for target in link.captures_iter(line).map(|c| c[1].to_owned()) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
                let file = if path.is_empty() {
                    page.clone()
                } else {
                    page.parent().expect("a page's folder").join(path)
                };
                checked += 1;
                let at = format!("{name}:{}: ({target})", number + 1);
                if !file.exists() {
                    broken.push(format!("{at}: no such file"));
                } else if !anchor.is_empty() && file.extension().is_some_and(|e| e == "md") {
                    let heads = anchors(&std::fs::read_to_string(&file).expect("a page"));
                    if !heads.iter().any(|h| h == anchor) {
                        broken.push(format!("{at}: no heading #{anchor}"));
                    }
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_github_s() {
    let text = "# Rung 14: `wgmma` on Hopper (TF32)\n```\n# not a heading\n```\n## Against the lecture's CUDA C\n## Notes\n### Notes\n";
    assert_eq!(
        anchors(text),
        [
            "rung-14-wgmma-on-hopper-tf32",
            "against-the-lectures-cuda-c",
            "notes",
            "notes-1"
        ]
    );
}
