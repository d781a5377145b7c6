//! What is asked, before any kernel is chosen: matrix shapes, tile widths, the axes of a 2-D
//! reduction, a GEMM call as cuBLAS takes it, and the one error type. Imports nothing of the
//! layers above.

pub mod axis;
pub mod error;
pub mod gemm;
pub mod shape;
pub mod tile;
