//! The mirror side of the switch (Lumina §3.4): the global mirror sequence number, the
//! weighted round-robin over the dump hosts, and the mirror ports' queues.

use crate::sim::{Ps, Rate};

/// Smooth weighted round-robin: over any window of Σw picks, host i gets w_i of them,
/// spread out rather than in bursts.
#[derive(Debug, Clone)]
pub struct Wrr {
    weights: Vec<i64>,
    current: Vec<i64>,
    total: i64,
}

impl Wrr {
    pub fn new(weights: &[u32]) -> Wrr {
        let weights: Vec<i64> = weights.iter().map(|&w| i64::from(w)).collect();
        Wrr { total: weights.iter().sum(), current: vec![0; weights.len()], weights }
    }

    pub fn pick(&mut self) -> usize {
        let mut best = 0;
        for i in 0..self.weights.len() {
            self.current[i] += self.weights[i];
            if self.current[i] > self.current[best] {
                best = i;
            }
        }
        self.current[best] -= self.total;
        best
    }
}

/// A switch egress port: a FIFO drained at the link rate.
#[derive(Debug, Clone)]
pub struct EgressPort {
    rate: Rate,
    busy_until: Ps,
    /// Bytes the port may hold queued (0: unlimited).
    pub buffer_bytes: u64,
}

impl EgressPort {
    pub fn new(gbps: f64, buffer_bytes: u64) -> EgressPort {
        EgressPort { rate: Rate::gbps(gbps), busy_until: 0, buffer_bytes }
    }

    /// Bytes queued at `now`.
    pub fn backlog_bytes(&self, now: Ps) -> u64 {
        self.rate.bytes_in(self.busy_until.saturating_sub(now))
    }

    /// Queues a frame that is ready at `ready`; returns when its last bit has left, or
    /// None when the buffer is full (the frame is dropped).
    pub fn enqueue(&mut self, ready: Ps, frame_len: usize) -> Option<Ps> {
        if self.buffer_bytes > 0 && self.backlog_bytes(ready) + frame_len as u64 > self.buffer_bytes {
            return None;
        }
        let start = ready.max(self.busy_until);
        self.busy_until = start + self.rate.wire_time(frame_len);
        Some(self.busy_until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::wire_time;

    #[test]
    fn wrr_shares_and_spreads() {
        let mut w = Wrr::new(&[1, 2, 1]);
        let picks: Vec<usize> = (0..8).map(|_| w.pick()).collect();
        assert_eq!(picks.iter().filter(|&&p| p == 1).count(), 4);
        assert_eq!(picks.iter().filter(|&&p| p == 0).count(), 2);
        assert!(picks.windows(2).all(|p| p[0] != p[1] || p[0] == 1), "no bursts for light hosts: {picks:?}");
        let mut one = Wrr::new(&[3]);
        assert!((0..5).all(|_| one.pick() == 0));
    }

    #[test]
    fn port_queues_and_drops() {
        let mut p = EgressPort::new(100.0, 2_000);
        let a = p.enqueue(0, 1_000).unwrap();
        assert_eq!(a, wire_time(1_000, 100.0));
        let b = p.enqueue(0, 900).unwrap();
        assert_eq!(b, a + wire_time(900, 100.0));
        assert!(p.enqueue(0, 1_000).is_none(), "buffer full");
        assert!(p.enqueue(b, 1_000).is_some(), "drained");
    }
}
