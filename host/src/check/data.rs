//! Seeded test data, uniform in [0, 1) like the lecture's `torch.rand`.

/// SplitMix64's increment: the state after `i` draws is `seed + i · GAMMA`.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// Values from which [`Rng::uniform`] works on all cores: below, spawning threads costs
/// more than it saves.
const PARALLEL_FROM: usize = 1 << 20;

/// SplitMix64: tiny, fast, and the same on every platform, so a seed names one matrix.
///
/// Its state advances by a constant and each draw is a hash of the state, so the `i`-th
/// value depends only on the seed and `i`: long sequences are generated on all cores
/// ([`Rng::uniform`]), the same values in the same order as one draw after another.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 24 random bits.
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// `len` values in [0, 1): the next `len` of [`next_f32`](Self::next_f32), generated on
    /// all cores for long sequences (2²⁸ values, 1 GiB, took about 1.5 s on one core of a
    /// virtual machine, two thirds of it the new memory's page faults).
    pub fn uniform(&mut self, len: usize) -> Vec<f32> {
        let mut out = vec![0.0f32; len];
        self.fill_uniform(&mut out);
        out
    }

    /// `len` values in [-1, 1): `2x − 1` of the next `len` of [`uniform`](Self::uniform), for
    /// signed inputs (cancellation exercised too).
    pub fn signed(&mut self, len: usize) -> Vec<f32> {
        let mut out = self.uniform(len);
        out.iter_mut().for_each(|x| *x = 2.0 * *x - 1.0);
        out
    }

    /// Fills `out` with the next `out.len()` values of [`next_f32`](Self::next_f32), on all
    /// cores from `PARALLEL_FROM` values; the generator ends where drawing them one by one
    /// would leave it.
    pub fn fill_uniform(&mut self, out: &mut [f32]) {
        let start = self.0;
        let threads = if out.len() < PARALLEL_FROM {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |t| t.get())
        };
        if threads == 1 {
            out.iter_mut().for_each(|x| *x = self.next_f32());
            return;
        }
        let chunk = out.len().div_ceil(threads);
        std::thread::scope(|s| {
            for (c, part) in out.chunks_mut(chunk).enumerate() {
                s.spawn(move || {
                    // The state before draw `c · chunk`.
                    let mut rng = Rng(start.wrapping_add(GAMMA.wrapping_mul((c * chunk) as u64)));
                    part.iter_mut().for_each(|x| *x = rng.next_f32());
                });
            }
        });
        self.0 = start.wrapping_add(GAMMA.wrapping_mul(out.len() as u64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One draw after another: the sequence `uniform` must give on any number of cores.
    fn one_by_one(rng: &mut Rng, len: usize) -> Vec<f32> {
        (0..len).map(|_| rng.next_f32()).collect()
    }

    #[test]
    fn uniform_on_all_cores_is_the_sequential_sequence() {
        for len in [
            0,
            1,
            7,
            PARALLEL_FROM - 1,
            PARALLEL_FROM,
            3 * PARALLEL_FROM + 5,
        ] {
            let (mut fast, mut slow) = (Rng::new(42), Rng::new(42));
            assert!(fast.uniform(len) == one_by_one(&mut slow, len), "len {len}");
            // Both end in the same state.
            assert_eq!(fast.next_u64(), slow.next_u64(), "len {len}");
        }
        // Two calls continue one sequence.
        let mut rng = Rng::new(7);
        let mut both = rng.uniform(PARALLEL_FROM + 3);
        both.extend(rng.uniform(5));
        assert!(both == one_by_one(&mut Rng::new(7), PARALLEL_FROM + 8));
    }

    #[test]
    fn values_are_in_the_unit_interval_and_differ_by_seed() {
        let a = Rng::new(1).uniform(PARALLEL_FROM + 1);
        assert!(a.iter().all(|&x| (0.0..1.0).contains(&x)));
        assert!(a != Rng::new(2).uniform(PARALLEL_FROM + 1));
        // SplitMix64's published first output for seed 0 (Vigna's reference code).
        assert_eq!(Rng::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
    }
}
