//! DCQCN notification-point CNP rate limiter (Lumina §4 "Congestion notification", §6.3
//! "CNP generation interval" and "Different CNP rate limiting modes"): at most one CNP per
//! `interval` for each limiter key, where the key is the NIC port, the destination IP or the
//! QP depending on the NIC.

use std::collections::HashMap;

use crate::profile::CnpScope;
use crate::sim::Ps;

#[derive(Debug, Clone)]
pub struct CnpLimiter {
    scope: CnpScope,
    interval: Ps,
    /// Per key: when the last CNP was allowed and its index in the truth.
    last: HashMap<u64, (Ps, u32)>,
}

/// The outcome of asking to send a CNP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Send,
    /// Too soon after the CNP with this truth index.
    Suppressed {
        by: u32,
    },
}

impl CnpLimiter {
    pub fn new(scope: CnpScope, interval: Ps) -> CnpLimiter {
        CnpLimiter { scope, interval, last: HashMap::new() }
    }

    /// The limiter key of a CNP to `dest_ip` for local QP `qpn`.
    pub fn key(&self, dest_ip: u32, qpn: u32) -> u64 {
        match self.scope {
            CnpScope::Port => 0,
            CnpScope::DestIp => u64::from(dest_ip),
            CnpScope::Qp => u64::from(qpn),
        }
    }

    /// Whether a CNP may go out at `now` for `key`; if so it is recorded as truth CNP
    /// `index`.
    pub fn decide(&mut self, key: u64, now: Ps, index: u32) -> Decision {
        if let Some(&(at, by)) = self.last.get(&key) {
            if now < at + self.interval {
                return Decision::Suppressed { by };
            }
        }
        self.last.insert(key, (now, index));
        Decision::Send
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::ns;

    #[test]
    fn spacing_per_key() {
        let mut l = CnpLimiter::new(CnpScope::Qp, ns(50_000));
        assert_eq!(l.decide(l.key(1, 7), 0, 0), Decision::Send);
        assert_eq!(l.decide(l.key(1, 7), ns(49_999), 1), Decision::Suppressed { by: 0 });
        assert_eq!(l.decide(l.key(1, 8), ns(49_999), 1), Decision::Send, "another QP");
        assert_eq!(l.decide(l.key(1, 7), ns(50_000), 2), Decision::Send);
        let port = CnpLimiter::new(CnpScope::Port, ns(4_000));
        assert_eq!(port.key(1, 7), port.key(2, 8));
        let ip = CnpLimiter::new(CnpScope::DestIp, 0);
        assert_ne!(ip.key(1, 7), ip.key(2, 7));
        assert_eq!(ip.key(1, 7), ip.key(1, 8));
    }

    #[test]
    fn zero_interval_never_limits() {
        let mut l = CnpLimiter::new(CnpScope::Port, 0);
        for i in 0..5 {
            assert_eq!(l.decide(0, 100, i), Decision::Send);
        }
    }
}
