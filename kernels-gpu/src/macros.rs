//! Constant-building macros for the configuration tables.

/// `s` with `_` replaced by `-`, as a `&'static str` constant.
macro_rules! dashed {
    ($s:expr) => {{
        const S: &str = $s;
        const B: [u8; S.len()] = {
            let mut b = [0u8; S.len()];
            let mut i = 0;
            while i < S.len() {
                b[i] = if S.as_bytes()[i] == b'_' {
                    b'-'
                } else {
                    S.as_bytes()[i]
                };
                i += 1;
            }
            b
        };
        match core::str::from_utf8(&B) {
            Ok(s) => s,
            Err(_) => panic!("entry names are ASCII"),
        }
    }};
}

/// `Some(x)` for one expression, `None` for none.
macro_rules! opt {
    () => {
        None
    };
    ($e:expr) => {
        Some($e)
    };
}
