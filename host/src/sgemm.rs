//! The SGEMM ladder as the host sees it: one [`SgemmKernel`] per line of
//! `kernels_gpu::sgemm::CONFIGS` (name, entry point, launch, simulator twin and autotuner
//! candidacy all come from that line), plus the autotuned choice among the candidates.
//!
//! They join the lecture's kernels as [`MatmulKernel::Sgemm`], so the CLI's `--kernel`, the
//! simulator and GPU tests and the bench's contenders all pick them up. None has a tile
//! width: each entry point is one compile-time configuration (block tile, warp tile, thread
//! tile), named in its entry.

use crate::kernels::MatmulKernel;
use kernels_gpu::catalogue::KernelSpec;
use kernels_gpu::sgemm::{CONFIGS, MatmulEntry, SgemmConfig};

/// One SGEMM configuration (an index into `kernels_gpu::sgemm::CONFIGS`), or the autotuned
/// choice among the configurations marked `autotune` there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SgemmKernel {
    /// `CONFIGS[i]`.
    Config(usize),
    /// The fastest of [`SgemmKernel::TUNED`] for the shape on the present GPU
    /// ([`crate::autotune`]); [`SgemmKernel::DEFAULT`] in the simulator.
    Autotuned,
}

/// How many configurations have the `autotune` flag.
const fn tuned_count() -> usize {
    let (mut i, mut n) = (0, 0);
    while i < CONFIGS.len() {
        n += CONFIGS[i].autotune as usize;
        i += 1;
    }
    n
}

impl SgemmKernel {
    /// Every configuration, lowest rung first, the autotuned dispatch last.
    pub const ALL: [Self; CONFIGS.len() + 1] = {
        let mut all = [Self::Autotuned; CONFIGS.len() + 1];
        let mut i = 0;
        while i < CONFIGS.len() {
            all[i] = Self::Config(i);
            i += 1;
        }
        all
    };

    /// The configurations the autotuner times.
    pub const TUNED: [Self; tuned_count()] = {
        let mut tuned = [Self::Autotuned; tuned_count()];
        let (mut i, mut n) = (0, 0);
        while i < CONFIGS.len() {
            if CONFIGS[i].autotune {
                tuned[n] = Self::Config(i);
                n += 1;
            }
            i += 1;
        }
        tuned
    };

    /// What [`SgemmKernel::Autotuned`] runs where nothing is timed: the simulator, and the
    /// launch shape it reports before tuning. The configuration flagged `default`.
    pub const DEFAULT: Self = {
        let mut i = 0;
        while !CONFIGS[i].default {
            i += 1;
        }
        Self::Config(i)
    };

    /// The configuration (the [default](Self::DEFAULT) one for the autotuned choice).
    pub fn config(self) -> &'static SgemmConfig {
        match self {
            Self::Config(i) => &CONFIGS[i],
            Self::Autotuned => Self::DEFAULT.config(),
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
        }
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

impl From<SgemmKernel> for MatmulKernel {
    fn from(k: SgemmKernel) -> Self {
        Self::Sgemm(k)
    }
}

impl std::fmt::Display for SgemmKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
