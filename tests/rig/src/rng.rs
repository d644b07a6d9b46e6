//! The run's one source of randomness: a seeded PCG, so a configuration and a seed give
//! the same run, byte for byte.

use rand::{Rng as _, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::profile::Latency;
use crate::sim::{ns, Ps};

pub struct Rng(Pcg64Mcg);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(Pcg64Mcg::seed_from_u64(seed))
    }

    /// Uniform in `lo..=hi`.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        if lo >= hi {
            lo
        } else {
            self.0.random_range(lo..=hi)
        }
    }

    /// A draw of `l`, in picoseconds (whole nanoseconds).
    pub fn latency(&mut self, l: Latency) -> Ps {
        ns(self.between(l.min_ns, l.max_ns))
    }

    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.0.random_bool(p.min(1.0))
    }

    pub fn u32(&mut self) -> u32 {
        self.0.random()
    }
}
