//! The SGEMM ladder as the host sees it: one [`SgemmKernel`] per line of
//! `kernels_gpu::sgemm::CONFIGS` (name, entry point, launch, simulator twin and autotuner
//! candidacy all come from that line), plus the autotuned choice among the candidates.
//!
//! They join the lecture's kernels as [`MatmulKernel::Sgemm`](crate::plan::kernels::MatmulKernel::Sgemm), so the CLI's `--kernel`, the
//! simulator and GPU tests and the bench's contenders all pick them up. None has a tile
//! width: each entry point is one compile-time configuration (block tile, warp tile, thread
//! tile), named in its entry.

use crate::problem::error::{Error, Result};
use kernels_gpu::catalogue::KernelSpec;
use kernels_gpu::sgemm::{CONFIGS, MatmulEntry, Precision, SgemmConfig};

/// One SGEMM configuration (an index into `kernels_gpu::sgemm::CONFIGS`), or the autotuned
/// choice among the configurations marked `autotune` there, per precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SgemmKernel {
    /// `CONFIGS[i]`.
    Config(usize),
    /// The fastest of [`SgemmKernel::TUNED`] (FP32) for the shape on the present GPU
    /// ([`crate::gpu::autotune`]); [`SgemmKernel::DEFAULT`] in the simulator.
    Autotuned,
    /// The fastest of [`SgemmKernel::TUNED_TF32`] (TF32, opt-in); [`SgemmKernel::DEFAULT_TF32`]
    /// in the simulator.
    AutotunedTf32,
    /// The fastest of [`SgemmKernel::TUNED_BF16`] (BF16, opt-in); [`SgemmKernel::DEFAULT_BF16`]
    /// in the simulator.
    AutotunedBf16,
}

/// How many configurations of `precision` have the `autotune` flag.
const fn tuned_count(precision: Precision) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < CONFIGS.len() {
        n += (CONFIGS[i].autotune && same(CONFIGS[i].precision, precision)) as usize;
        i += 1;
    }
    n
}

/// `a == b` in a const context.
const fn same(a: Precision, b: Precision) -> bool {
    a as u8 == b as u8
}

/// The configurations of `precision` with the `autotune` flag, in table order.
const fn tuned<const N: usize>(precision: Precision) -> [SgemmKernel; N] {
    let mut tuned = [SgemmKernel::Autotuned; N];
    let (mut i, mut n) = (0, 0);
    while i < CONFIGS.len() {
        if CONFIGS[i].autotune && same(CONFIGS[i].precision, precision) {
            tuned[n] = SgemmKernel::Config(i);
            n += 1;
        }
        i += 1;
    }
    tuned
}

/// The configuration of `precision` flagged `default`.
const fn default_of(precision: Precision) -> SgemmKernel {
    let mut i = 0;
    while !(CONFIGS[i].default && same(CONFIGS[i].precision, precision)) {
        i += 1;
    }
    SgemmKernel::Config(i)
}

impl SgemmKernel {
    /// Every configuration, lowest rung first, the autotuned dispatches (FP32, TF32, BF16)
    /// last.
    pub const ALL: [Self; CONFIGS.len() + 3] = {
        let mut all = [Self::Autotuned; CONFIGS.len() + 3];
        let mut i = 0;
        while i < CONFIGS.len() {
            all[i] = Self::Config(i);
            i += 1;
        }
        all[CONFIGS.len() + 1] = Self::AutotunedTf32;
        all[CONFIGS.len() + 2] = Self::AutotunedBf16;
        all
    };

    /// The FP32 configurations the autotuner times for [`SgemmKernel::Autotuned`].
    pub const TUNED: [Self; tuned_count(Precision::Fp32)] = tuned(Precision::Fp32);

    /// The TF32 configurations the autotuner times for [`SgemmKernel::AutotunedTf32`].
    pub const TUNED_TF32: [Self; tuned_count(Precision::Tf32)] = tuned(Precision::Tf32);

    /// The BF16 configurations the autotuner times for [`SgemmKernel::AutotunedBf16`].
    pub const TUNED_BF16: [Self; tuned_count(Precision::Bf16)] = tuned(Precision::Bf16);

    /// What [`SgemmKernel::Autotuned`] runs where nothing is timed: the simulator, and the
    /// launch shape it reports before tuning. The FP32 configuration flagged `default`.
    pub const DEFAULT: Self = default_of(Precision::Fp32);

    /// What [`SgemmKernel::AutotunedTf32`] runs where nothing is timed: the TF32
    /// configuration flagged `default`.
    pub const DEFAULT_TF32: Self = default_of(Precision::Tf32);

    /// What [`SgemmKernel::AutotunedBf16`] runs where nothing is timed: the BF16
    /// configuration flagged `default`.
    pub const DEFAULT_BF16: Self = default_of(Precision::Bf16);

    /// The autotuned dispatch of `precision`; [`Error::PrecisionNotImplemented`] if the
    /// table has no autotuned configuration of it (every precision has some in this build).
    pub fn autotuned(precision: Precision) -> Result<Self> {
        if Self::tuned(precision).is_empty() {
            return Err(Error::PrecisionNotImplemented { precision });
        }
        Ok(match precision {
            Precision::Fp32 => Self::Autotuned,
            Precision::Tf32 => Self::AutotunedTf32,
            Precision::Bf16 => Self::AutotunedBf16,
        })
    }

    /// The candidates the autotuner times for `precision`.
    pub fn tuned(precision: Precision) -> &'static [Self] {
        match precision {
            Precision::Fp32 => &Self::TUNED,
            Precision::Tf32 => &Self::TUNED_TF32,
            Precision::Bf16 => &Self::TUNED_BF16,
        }
    }

    /// How the kernel rounds its inputs.
    pub fn precision(self) -> Precision {
        self.config().precision
    }

    /// The configuration (the default one of its precision for an autotuned choice).
    pub fn config(self) -> &'static SgemmConfig {
        match self {
            Self::Config(i) => &CONFIGS[i],
            Self::Autotuned => Self::DEFAULT.config(),
            Self::AutotunedTf32 => Self::DEFAULT_TF32.config(),
            Self::AutotunedBf16 => Self::DEFAULT_BF16.config(),
        }
    }

    /// The configuration whose entry point is `entry`.
    pub fn from_entry(entry: &str) -> Option<Self> {
        CONFIGS
            .iter()
            .position(|c| c.spec.entry == entry)
            .map(Self::Config)
    }

    /// The name on the command line and in reports: the entry point's, with dashes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Config(i) => CONFIGS[i].name,
            Self::Autotuned => "sgemm-autotuned",
            Self::AutotunedTf32 => "sgemm-autotuned-tf32",
            Self::AutotunedBf16 => "sgemm-autotuned-bf16",
        }
    }

    /// Whether this is an autotuned dispatch rather than one configuration.
    pub fn is_autotuned(self) -> bool {
        !matches!(self, Self::Config(_))
    }

    /// The plain-data launch description.
    pub fn spec(self) -> &'static KernelSpec {
        &self.config().spec
    }

    /// The PTX entry point.
    pub fn entry(self) -> &'static str {
        self.spec().entry
    }

    /// The entry point as the simulator calls it.
    pub(crate) fn sim_entry(self) -> MatmulEntry {
        self.config().sim
    }
}

impl std::fmt::Display for SgemmKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
