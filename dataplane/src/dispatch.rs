//! Per-packet load balancing inside one host (Lumina §3.4): when the port has a single RX
//! queue (memif, NICs without RSS) one dispatcher lcore deals packets round-robin over the
//! workers' rings, so every worker gets an equal share regardless of flows. One ring
//! enqueue per worker per burst; a full ring drops and counts. A pcap vdev has one input
//! per queue: the dispatcher polls each in turn.

use crate::counters::{Admission, Live, Stop};
use crate::dpdk::{MbufBurst, RingProducer, RxQueue};
use std::sync::atomic::{AtomicBool, Ordering::Release};
use std::sync::Arc;

pub struct Dispatcher {
    pub queues: Vec<RxQueue>,
    pub rings: Vec<RingProducer>,
    pub admission: Arc<Admission>,
    pub stop: Arc<Stop>,
    /// Set when the dispatcher has stopped; workers drain their rings and exit.
    pub done: Arc<AtomicBool>,
    pub live: Arc<Live>,
}

#[derive(Debug, Clone, Default)]
pub struct DispatchTally {
    pub rx: u64,
    pub rx_bytes: u64,
    pub over_limit: u64,
    /// Per worker: packets dropped because its ring was full.
    pub ring_drops: Vec<u64>,
}

impl Dispatcher {
    pub fn run(mut self) -> DispatchTally {
        let workers = self.rings.len();
        let mut tally = DispatchTally { ring_drops: vec![0; workers], ..Default::default() };
        let mut burst = MbufBurst::new();
        let mut dealt: Vec<MbufBurst> = (0..workers).map(|_| MbufBurst::new()).collect();
        let (mut next, mut q) = (0, 0);
        while !self.stop.requested() {
            q = (q + 1) % self.queues.len();
            let n = self.queues[q].rx_burst(&mut burst);
            if n == 0 {
                continue;
            }
            tally.rx += n as u64;
            for i in 0..n {
                tally.rx_bytes += burst.pkt_len(i) as u64;
            }
            let admitted = self.admission.admit(n, &self.stop);
            if admitted < n {
                tally.over_limit += (n - admitted) as u64;
                burst.free_from(admitted);
            }
            next = burst.deal_round_robin(&mut dealt, next);
            for (w, out) in dealt.iter_mut().enumerate() {
                self.rings[w].enqueue_burst(out);
                tally.ring_drops[w] += out.len() as u64;
                out.free_all();
            }
            self.publish(&tally);
        }
        // Release: every enqueue above is visible to a worker that sees `done` (Acquire).
        self.done.store(true, Release);
        self.publish(&tally);
        tally
    }

    fn publish(&self, t: &DispatchTally) {
        self.live.set(t.rx, t.rx_bytes, t.ring_drops.iter().sum());
    }
}
