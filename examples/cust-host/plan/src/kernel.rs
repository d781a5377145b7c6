//! The entry points the cust host runs, each a row of `kernels_gpu::catalogue`: the
//! lecture's kernels at tile widths 8, 16 and 32, the SGEMM ladder's configurations, the
//! sums and the sliding averages.

use kernels_gpu::catalogue::{
    KernelSpec, LECTURE, LectureConfig, REDUCE, ReduceEntry, SGEMM, SLIDING, SgemmConfig,
    SlidingEntry, VectorConfig,
};
use kernels_gpu::sgemm::Precision;

/// One catalogue row.
#[derive(Clone, Copy, Debug)]
pub enum Kernel {
    /// A lecture kernel at one tile width (`naive` at 16, its block edge).
    Lecture(&'static LectureConfig),
    /// An SGEMM configuration.
    Sgemm(&'static SgemmConfig),
    /// A sum.
    Reduce(&'static VectorConfig<ReduceEntry>),
    /// A sliding average.
    Sliding(&'static VectorConfig<SlidingEntry>),
}

impl Kernel {
    /// How to launch it.
    pub fn spec(&self) -> &'static KernelSpec {
        match *self {
            Self::Lecture(c) => &c.spec,
            Self::Sgemm(c) => &c.spec,
            Self::Reduce(c) => &c.spec,
            Self::Sliding(c) => &c.spec,
        }
    }

    /// The name in reports (the main binary's).
    pub fn name(&self) -> &'static str {
        match *self {
            Self::Lecture(c) => c.name,
            Self::Sgemm(c) => c.name,
            Self::Reduce(c) => c.name,
            Self::Sliding(c) => c.name,
        }
    }

    /// The tile width of a tiled lecture kernel, as the main binary's `tw` column shows it.
    pub fn tile_width(&self) -> Option<u32> {
        match *self {
            Self::Lecture(c) if c.name != "naive" => Some(c.tile_width),
            _ => None,
        }
    }

    /// How a matrix product rounds its inputs: FP32 for the lecture's kernels, the
    /// configuration's for the SGEMM ladder (and FP32, exact inputs, for the others).
    pub fn precision(&self) -> Precision {
        match self {
            Self::Sgemm(c) => c.precision,
            _ => Precision::Fp32,
        }
    }

    /// Whether it computes a matrix product.
    pub fn is_matmul(&self) -> bool {
        matches!(self, Self::Lecture(_) | Self::Sgemm(_))
    }

    /// What it computes, as errors name it.
    pub fn operation(&self) -> &'static str {
        match self {
            Self::Lecture(_) | Self::Sgemm(_) => "matrix product",
            Self::Reduce(_) => "sum",
            Self::Sliding(_) => "sliding average",
        }
    }

    /// Every lecture row: naive, then each tiled kernel at tile widths 8, 16 and 32.
    pub fn lecture() -> impl Iterator<Item = Kernel> {
        LECTURE.iter().map(Self::Lecture)
    }

    /// Every SGEMM configuration, lowest rung first.
    pub fn sgemm() -> impl Iterator<Item = Kernel> {
        SGEMM.iter().map(Self::Sgemm)
    }

    /// Every SGEMM configuration of `precision`, lowest rung first.
    pub fn sgemm_of(precision: Precision) -> impl Iterator<Item = Kernel> {
        Self::sgemm().filter(move |k| k.precision() == precision)
    }

    /// The configurations of `precision` the autotuner times (flagged `autotune` in the
    /// SGEMM table): a tuned choice never leaves the precision asked for.
    pub fn sgemm_candidates(precision: Precision) -> impl Iterator<Item = Kernel> {
        Self::sgemm_of(precision).filter(|k| matches!(k, Self::Sgemm(c) if c.autotune))
    }

    /// The sums.
    pub fn reduce() -> impl Iterator<Item = Kernel> {
        REDUCE.iter().map(Self::Reduce)
    }

    /// The sliding averages.
    pub fn sliding() -> impl Iterator<Item = Kernel> {
        SLIDING.iter().map(Self::Sliding)
    }

    /// The SGEMM configuration, sum or sliding average called `name` (the names of the
    /// main binary); lecture kernels have several rows per name (see [`Kernel::lecture`]).
    pub fn by_name(name: &str) -> Option<Kernel> {
        Self::sgemm()
            .chain(Self::reduce())
            .chain(Self::sliding())
            .find(|k| k.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lecture_rows_cover_each_tile_width() {
        let rows: Vec<(&str, Option<u32>)> = Kernel::lecture()
            .map(|k| (k.name(), k.tile_width()))
            .collect();
        assert_eq!(rows[0], ("naive", None));
        for name in ["tiled-dynamic", "tiled-static", "tiled-dynamic-const"] {
            let widths: Vec<u32> = rows
                .iter()
                .filter(|r| r.0 == name)
                .filter_map(|r| r.1)
                .collect();
            assert_eq!(widths, [8, 16, 32], "{name}");
        }
    }

    #[test]
    fn names_find_their_rows() {
        let k = Kernel::by_name("sgemm-multistage-128x128x16-w64x32").unwrap();
        assert_eq!(k.spec().entry, "sgemm_multistage_128x128x16_w64x32");
        assert!(k.is_matmul());
        assert_eq!(
            Kernel::by_name("sum-warp").unwrap().spec().entry,
            "reduce_sum_warp"
        );
        assert!(Kernel::by_name("naive").is_none());
        assert_eq!(
            Kernel::by_name("sgemm-bf16-128x128x32-w64x64")
                .unwrap()
                .precision(),
            Precision::Bf16
        );
    }

    #[test]
    fn candidates_stay_in_their_precision() {
        for precision in Precision::ALL {
            let candidates: std::vec::Vec<Kernel> = Kernel::sgemm_candidates(precision).collect();
            assert!(!candidates.is_empty(), "{precision:?}");
            for k in candidates {
                assert!(matches!(k, Kernel::Sgemm(c) if c.autotune), "{}", k.name());
                assert_eq!(k.precision(), precision, "{}", k.name());
            }
        }
        // The BF16 configuration an FP32 table once reported is not an FP32 candidate.
        assert!(
            Kernel::sgemm_candidates(Precision::Fp32)
                .all(|k| k.name() != "sgemm-bf16-128x128x32-w64x64")
        );
    }
}
