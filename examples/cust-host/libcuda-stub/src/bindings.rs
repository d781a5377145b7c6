//! The driver functions a bindgen binding file declares: every `pub fn` in its top-level
//! `extern "C"` blocks. Shared by the build script (which defines each in the stub) and the
//! tests (which check that the stub defines exactly these).

/// Names of the functions declared in `bindings`' `extern "C"` blocks, in file order.
///
/// Anything else in such a block — a `static`, or an attribute such as `#[link_name]` that
/// would change a symbol's name — is an error rather than a symbol the stub would silently
/// lack; so is a file with no functions (not a binding file) or a name declared twice.
pub fn driver_functions(bindings: &str) -> Result<Vec<&str>, String> {
    let mut names: Vec<&str> = Vec::new();
    let mut in_block = false;
    for (i, line) in bindings.lines().enumerate() {
        let at = || format!("line {}: `{}`", i + 1, line.trim());
        if !in_block {
            in_block = matches!(line, r#"extern "C" {"# | r#"unsafe extern "C" {"#);
            continue;
        }
        if line == "}" {
            in_block = false;
            continue;
        }
        // An item starts at one level of indentation; deeper lines and `) -> …;` continue it.
        let Some(item) = line.strip_prefix("    ") else {
            continue;
        };
        if item.starts_with([' ', ')']) || item.starts_with("//") || item.is_empty() {
            continue;
        }
        let Some(rest) = item.strip_prefix("pub fn ") else {
            return Err(format!(
                "{}: only `pub fn` items are expected in an extern block",
                at()
            ));
        };
        let name = rest.split('(').next().unwrap_or_default();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("{}: not a C function name", at()));
        }
        if names.contains(&name) {
            return Err(format!("{}: `{name}` is declared twice", at()));
        }
        names.push(name);
    }
    if names.is_empty() {
        return Err("no `extern \"C\"` functions: not a binding file".into());
    }
    Ok(names)
}

/// The versions of package `name` in the text of a `Cargo.lock`.
pub fn locked_versions<'a>(lock: &'a str, name: &str) -> Vec<&'a str> {
    let field = |block: &'a str, key: &str| {
        block.lines().find_map(|l| {
            l.strip_prefix(key)?
                .trim_start()
                .strip_prefix('=')?
                .trim()
                .strip_prefix('"')?
                .strip_suffix('"')
        })
    };
    lock.split("[[package]]")
        .skip(1)
        .filter(|block| field(block, "name") == Some(name))
        .filter_map(|block| field(block, "version"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{driver_functions, locked_versions};

    #[test]
    fn versions_of_a_locked_package() {
        let lock = r#"version = 4

[[package]]
name = "cust"
version = "0.3.2"
dependencies = [
 "cust_raw",
]

[[package]]
name = "cust_raw"
version = "0.11.3"
source = "registry+https://github.com/rust-lang/crates.io-index"
"#;
        assert_eq!(locked_versions(lock, "cust_raw"), ["0.11.3"]);
        assert_eq!(locked_versions(lock, "cust"), ["0.3.2"]);
        assert!(locked_versions(lock, "cudarc").is_empty());
    }

    #[test]
    fn functions_of_extern_blocks_only() {
        let src = r#"
pub struct CUctx_st { _unused: [u8; 0] }
impl CUctx_st { pub fn new() -> Self { todo!() } }
extern "C" {
    pub fn cuInit(Flags: ::std::os::raw::c_uint) -> CUresult;
}
extern "C" {
    pub fn cuDeviceGetName(
        name: *mut ::std::os::raw::c_char,
        len: ::std::os::raw::c_int,
    ) -> CUresult;
}
unsafe extern "C" {
    pub fn cuCtxCreate_v2(pctx: *mut CUcontext) -> CUresult;
}
"#;
        assert_eq!(
            driver_functions(src),
            Ok(vec!["cuInit", "cuDeviceGetName", "cuCtxCreate_v2"])
        );
    }

    #[test]
    fn what_the_stub_could_not_stand_for_is_an_error() {
        let data = "extern \"C\" {\n    pub static cuFoo: u32;\n}\n";
        assert!(driver_functions(data).unwrap_err().contains("line 2"));
        let renamed =
            "extern \"C\" {\n    #[link_name = \"x\"]\n    pub fn cuInit() -> CUresult;\n}\n";
        assert!(driver_functions(renamed).is_err());
        let twice =
            "extern \"C\" {\n    pub fn cuInit();\n}\nextern \"C\" {\n    pub fn cuInit();\n}\n";
        assert!(driver_functions(twice).unwrap_err().contains("twice"));
        assert!(driver_functions("pub fn cuInit() {}").is_err());
    }
}
