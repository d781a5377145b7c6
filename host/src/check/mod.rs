//! How results are checked: f64 references and the error bounds a kernel's result must be
//! within, spot checks of large products, and the seeded random inputs they are checked on.
//! Imports only [`crate::problem`].

pub mod data;
pub mod reference;
pub mod spot;
