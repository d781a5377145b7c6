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

/// `true` if `flag` is one of the row's flags; an unknown flag does not compile.
macro_rules! has_flag {
    ($want:ident in $($flag:ident),*) => { false $(|| has_flag!(@ $flag == $want))* };
    (@ autotune == autotune) => { true };
    (@ autotune == default) => { false };
    (@ autotune == tf32) => { false };
    (@ autotune == bf16) => { false };
    (@ autotune == rows) => { false };
    (@ autotune == pair) => { false };
    (@ default == autotune) => { false };
    (@ default == default) => { true };
    (@ default == tf32) => { false };
    (@ default == bf16) => { false };
    (@ default == rows) => { false };
    (@ default == pair) => { false };
    (@ tf32 == autotune) => { false };
    (@ tf32 == default) => { false };
    (@ tf32 == tf32) => { true };
    (@ tf32 == bf16) => { false };
    (@ tf32 == rows) => { false };
    (@ tf32 == pair) => { false };
    (@ bf16 == autotune) => { false };
    (@ bf16 == default) => { false };
    (@ bf16 == tf32) => { false };
    (@ bf16 == bf16) => { true };
    (@ bf16 == rows) => { false };
    (@ bf16 == pair) => { false };
    (@ rows == autotune) => { false };
    (@ rows == default) => { false };
    (@ rows == tf32) => { false };
    (@ rows == bf16) => { false };
    (@ rows == rows) => { true };
    (@ rows == pair) => { false };
    (@ pair == autotune) => { false };
    (@ pair == default) => { false };
    (@ pair == tf32) => { false };
    (@ pair == bf16) => { false };
    (@ pair == rows) => { false };
    (@ pair == pair) => { true };
}
