//! Tile widths: a const generic for the typed launchers, a value for run-time dispatch.

use crate::problem::error::Error;

/// A tile width the kernels are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum TileWidth {
    Tw8 = 8,
    Tw16 = 16,
    Tw32 = 32,
}

impl TileWidth {
    pub const ALL: [TileWidth; 3] = [Self::Tw8, Self::Tw16, Self::Tw32];
    pub const ALLOWED: &'static [u32] = &[8, 16, 32];

    pub fn get(self) -> u32 {
        self as u32
    }
}

impl TryFrom<u32> for TileWidth {
    type Error = Error;
    fn try_from(tw: u32) -> Result<Self, Error> {
        match tw {
            8 => Ok(Self::Tw8),
            16 => Ok(Self::Tw16),
            32 => Ok(Self::Tw32),
            requested => Err(Error::UnsupportedTileWidth {
                requested,
                allowed: Self::ALLOWED,
            }),
        }
    }
}

impl std::fmt::Display for TileWidth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.get())
    }
}

/// `Tw<TW>` names a compile-time tile width; only supported widths implement [`Supported`],
/// so `matmul_tiled_static::<7>` does not compile.
pub struct Tw<const TW: u32>;

/// Tile widths that have compiled kernels.
pub trait Supported: sealed::Sealed {
    const WIDTH: TileWidth;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! supported {
    ($($tw:literal => $v:ident),*) => {$(
        impl sealed::Sealed for Tw<$tw> {}
        impl Supported for Tw<$tw> {
            const WIDTH: TileWidth = TileWidth::$v;
        }
    )*};
}
supported!(8 => Tw8, 16 => Tw16, 32 => Tw32);
