//! What several rungs share: global-memory edges, shared-tile loads and stores, the warp
//! tile, and compile-time unrolling. No kernels here.

pub mod global;
pub mod mma_tile;
pub mod tile_io;
pub mod unroll;
pub mod warp_tile;
