//! DCQCN reaction point (Zhu et al., SIGCOMM'15, cited by Lumina §4): the sender's rate
//! cut on each CNP and its timer-driven recovery. Only used with `dcqcn-rp-enable`.
//!
//! Rate increase runs on the timer alone (no byte counter): every `PERIOD` without a CNP
//! α decays and the rate recovers — five fast-recovery steps towards the target rate,
//! then additive increase of the target. Updates are applied lazily when the sender next
//! asks for its rate, which is equivalent to running the timer.

use crate::sim::{ns, Ps};

const G: f64 = 1.0 / 256.0;
const PERIOD: Ps = ns(55_000);
const FAST_RECOVERY_STEPS: u32 = 5;
const ADDITIVE_GBPS: f64 = 0.04;
const MIN_GBPS: f64 = 0.1;

#[derive(Debug, Clone)]
pub struct Rp {
    line_gbps: f64,
    current: f64,
    target: f64,
    alpha: f64,
    last_update: Ps,
    steps: u32,
}

impl Rp {
    pub fn new(line_gbps: f64) -> Rp {
        Rp { line_gbps, current: line_gbps, target: line_gbps, alpha: 1.0, last_update: 0, steps: 0 }
    }

    /// The sending rate at `now`, Gb/s.
    pub fn rate(&mut self, now: Ps) -> f64 {
        self.advance(now);
        self.current
    }

    pub fn on_cnp(&mut self, now: Ps) {
        self.advance(now);
        self.target = self.current;
        self.current = (self.current * (1.0 - self.alpha / 2.0)).max(MIN_GBPS);
        self.alpha = (1.0 - G) * self.alpha + G;
        self.steps = 0;
        self.last_update = now;
    }

    fn advance(&mut self, now: Ps) {
        while self.current < self.line_gbps && now >= self.last_update + PERIOD {
            self.last_update += PERIOD;
            self.alpha *= 1.0 - G;
            self.steps += 1;
            if self.steps > FAST_RECOVERY_STEPS {
                self.target = (self.target + ADDITIVE_GBPS).min(self.line_gbps);
            }
            self.current = ((self.current + self.target) / 2.0).min(self.line_gbps);
            if self.line_gbps - self.current < 1e-6 {
                self.current = self.line_gbps;
            }
        }
        if self.current >= self.line_gbps {
            self.last_update = self.last_update.max(now.saturating_sub(PERIOD));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_then_recover() {
        let mut rp = Rp::new(100.0);
        assert_eq!(rp.rate(0), 100.0);
        rp.on_cnp(ns(1_000));
        let cut = rp.rate(ns(1_000));
        assert!((cut - 50.0).abs() < 1e-9, "α starts at 1: half rate, got {cut}");
        let later = rp.rate(ns(1_000) + PERIOD * 3);
        assert!(later > cut && later < 100.0);
        assert!(rp.rate(ns(1_000) + PERIOD * 10_000) > 99.9);
    }
}
