//! Counting: every packet a core takes in ends in exactly one of written, buffer_drops or
//! over_limit, and is classified once. Workers count in plain integers and publish a few
//! totals once per burst to [`Live`] atomics that the stats line reads without locks.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
use wire::frame::{FrameClass, FrameInfo};
use wire::mirror::Event;
use wire::ErrorKind;

/// One core's counts, owned by its worker (no sharing, no atomics).
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub rx: u64,
    pub rx_bytes: u64,
    pub over_limit: u64,
    pub written: u64,
    pub buffer_drops: u64,
    pub classes: [u64; FrameClass::COUNT],
    pub malformed: [u64; ErrorKind::COUNT],
    pub events: [u64; Event::ALL.len()],
    pub first_seq: Option<u32>,
    pub last_seq: Option<u32>,
    /// TSC ticks of the polling loop, and the part of them that followed a poll which
    /// returned packets (recording that burst, then the next poll): the core's load.
    pub poll_ticks: u64,
    pub busy_ticks: u64,
    /// The last sample of the worker thread's own CPU time and of the wall time it covers,
    /// both since the loop started (ns). Their gap is time the thread was off its CPU.
    pub cpu: CpuSample,
}

/// A worker thread's CPU time against wall time, sampled a few times per second (the
/// thread's CPU clock is a syscall: never per packet).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuSample {
    pub on_cpu_ns: u64,
    pub wall_ns: u64,
}

impl CpuSample {
    /// The share of the wall time since `earlier` that the thread was *not* running, in
    /// percent: preempted by another thread on its CPU (its shard writer, unless
    /// `--writer-cpus` moved it) or by the kernel. A polling loop counts that time as busy
    /// or idle, whichever it fell into, so the busy share alone cannot show it; at line rate
    /// it is time in which only the RX ring holds arriving packets. `None` for an empty span.
    pub fn off_cpu_percent_since(&self, earlier: &CpuSample) -> Option<f64> {
        let wall = self.wall_ns.checked_sub(earlier.wall_ns).filter(|&w| w > 0)?;
        let on = self.on_cpu_ns.saturating_sub(earlier.on_cpu_ns).min(wall);
        Some(100.0 * (wall - on) as f64 / wall as f64)
    }
}

impl Tally {
    pub fn classify(&mut self, outcome: &Result<FrameInfo, wire::Error>) {
        match outcome {
            Ok(info) => {
                self.classes[info.class.index()] += 1;
                if let Some(m) = info.mirror {
                    self.events[m.event as usize] += 1;
                    self.first_seq.get_or_insert(m.seq);
                    self.last_seq = Some(m.seq);
                }
            }
            Err(e) => self.malformed[e.kind().index()] += 1,
        }
    }

    pub fn malformed_total(&self) -> u64 {
        self.malformed.iter().sum()
    }

    /// Accounts the `ticks` since the previous poll to the loop, and to busy time if that
    /// poll returned packets. A polling core is always at 100 % CPU; this is how much of
    /// it went to packets, i.e. the headroom left before the core itself limits the rate.
    #[inline]
    pub fn poll_time(&mut self, ticks: u64, previous_poll_had_packets: bool) {
        self.poll_ticks += ticks;
        if previous_poll_had_packets {
            self.busy_ticks += ticks;
        }
    }
}

/// Busy share of a polling loop in percent, from busy and total ticks; `None` without any.
pub fn busy_percent(busy_ticks: u64, poll_ticks: u64) -> Option<f64> {
    (poll_ticks > 0).then(|| 100.0 * busy_ticks.min(poll_ticks) as f64 / poll_ticks as f64)
}

/// Totals a polling stage publishes once per burst for the live stats line.
#[derive(Debug, Default)]
#[repr(align(64))] // one cache line per core: no false sharing between workers
pub struct Live {
    pub rx: AtomicU64,
    pub rx_bytes: AtomicU64,
    /// Packets lost at this stage (buffer drops for a worker, ring drops for the dispatcher).
    pub drops: AtomicU64,
    /// A worker's [`Tally::poll_ticks`] and [`Tally::busy_ticks`] (0 for the dispatcher).
    pub poll_ticks: AtomicU64,
    pub busy_ticks: AtomicU64,
    /// A worker's [`Tally::cpu`] (0 for the dispatcher).
    pub on_cpu_ns: AtomicU64,
    pub cpu_wall_ns: AtomicU64,
}

impl Live {
    pub fn publish(&self, t: &Tally) {
        self.set(t.rx, t.rx_bytes, t.buffer_drops);
        self.poll_ticks.store(t.poll_ticks, Relaxed);
        self.busy_ticks.store(t.busy_ticks, Relaxed);
        self.on_cpu_ns.store(t.cpu.on_cpu_ns, Relaxed);
        self.cpu_wall_ns.store(t.cpu.wall_ns, Relaxed);
    }

    /// The last published [`CpuSample`]; its two halves may come from consecutive samples
    /// (the share is clamped to 0..=100, and samples are 10 ms apart).
    pub fn cpu(&self) -> CpuSample {
        CpuSample { on_cpu_ns: self.on_cpu_ns.load(Relaxed), wall_ns: self.cpu_wall_ns.load(Relaxed) }
    }

    pub fn set(&self, rx: u64, rx_bytes: u64, drops: u64) {
        self.rx.store(rx, Relaxed);
        self.rx_bytes.store(rx_bytes, Relaxed);
        self.drops.store(drops, Relaxed);
    }
}

/// Why a capture stopped; the first reason wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum StopReason {
    Signal = 1,
    Duration = 2,
    MaxPackets = 3,
    Idle = 4,
    WriteError = 5,
    /// An lcore failed (panicked, or could not be launched): the others were stopped.
    LcoreFailed = 6,
}

impl StopReason {
    pub const ALL: [StopReason; 6] = [
        StopReason::Signal,
        StopReason::Duration,
        StopReason::MaxPackets,
        StopReason::Idle,
        StopReason::WriteError,
        StopReason::LcoreFailed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StopReason::Signal => "signal",
            StopReason::Duration => "duration",
            StopReason::MaxPackets => "max_packets",
            StopReason::Idle => "idle",
            StopReason::WriteError => "write_error",
            StopReason::LcoreFailed => "lcore_failed",
        }
    }
}

/// The one flag every polling loop checks per burst.
#[derive(Debug, Default)]
pub struct Stop {
    flag: AtomicBool,
    reason: AtomicU8,
}

impl Stop {
    pub fn request(&self, reason: StopReason) {
        let _ = self.reason.compare_exchange(0, reason as u8, Relaxed, Relaxed);
        self.flag.store(true, Relaxed);
    }

    pub fn requested(&self) -> bool {
        self.flag.load(Relaxed)
    }

    pub fn reason(&self) -> Option<StopReason> {
        StopReason::ALL.into_iter().find(|r| *r as u8 == self.reason.load(Relaxed))
    }
}

/// `--max-packets`: the receiving stage admits exactly that many packets in total, across
/// all cores; the rest of the burst that crosses the limit is freed and counted over_limit.
#[derive(Debug)]
pub struct Admission {
    max: u64,
    admitted: AtomicU64,
}

impl Admission {
    pub fn new(max: Option<u64>) -> Self {
        Admission { max: max.unwrap_or(u64::MAX), admitted: AtomicU64::new(0) }
    }

    /// How many of the `n` packets just received may be recorded.
    pub fn admit(&self, n: usize, stop: &Stop) -> usize {
        if self.max == u64::MAX {
            return n;
        }
        let before = self.admitted.fetch_add(n as u64, Relaxed);
        let allowed = self.max.saturating_sub(before).min(n as u64);
        if before + n as u64 >= self.max {
            stop.request(StopReason::MaxPackets);
        }
        allowed as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_is_exact_across_callers() {
        let stop = Stop::default();
        let a = Admission::new(Some(70));
        let got: Vec<usize> = (0..4).map(|_| a.admit(32, &stop)).collect();
        assert_eq!(got, vec![32, 32, 6, 0]);
        assert_eq!(stop.reason(), Some(StopReason::MaxPackets));
        let unlimited = Admission::new(None);
        assert_eq!(unlimited.admit(32, &Stop::default()), 32);
    }

    #[test]
    fn busy_share_counts_the_time_after_polls_with_packets() {
        let mut t = Tally::default();
        assert_eq!(busy_percent(t.busy_ticks, t.poll_ticks), None);
        t.poll_time(300, true);
        t.poll_time(100, false);
        t.poll_time(0, true);
        assert_eq!((t.poll_ticks, t.busy_ticks), (400, 300));
        assert_eq!(busy_percent(t.busy_ticks, t.poll_ticks), Some(75.0));
        assert_eq!(busy_percent(5, 4), Some(100.0));
    }

    #[test]
    fn off_cpu_share_is_the_wall_time_the_thread_did_not_run() {
        let start = CpuSample::default();
        let s = CpuSample { on_cpu_ns: 890, wall_ns: 1_000 };
        assert_eq!(s.off_cpu_percent_since(&start), Some(11.0));
        let later = CpuSample { on_cpu_ns: 1_890, wall_ns: 2_000 };
        assert_eq!(later.off_cpu_percent_since(&s), Some(0.0), "ran the whole second interval");
        assert_eq!(s.off_cpu_percent_since(&s), None, "an empty span has no share");
        assert_eq!(start.off_cpu_percent_since(&s), None, "a span backwards has none either");
        let skewed = CpuSample { on_cpu_ns: 1_200, wall_ns: 1_000 };
        assert_eq!(skewed.off_cpu_percent_since(&start), Some(0.0), "clock granularity never goes negative");
    }

    #[test]
    fn first_stop_reason_wins() {
        let stop = Stop::default();
        assert!(!stop.requested());
        stop.request(StopReason::Idle);
        stop.request(StopReason::Signal);
        assert!(stop.requested());
        assert_eq!(stop.reason(), Some(StopReason::Idle));
    }
}
