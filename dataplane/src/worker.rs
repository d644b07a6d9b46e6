//! The per-core polled loop: receive a burst, record every frame, free the burst, sum the
//! burst's blocks into the chunk's CRC, publish counters. Recording = classify (wire), trim
//! to the snap length, append one pcapng block to this core's shard buffer, restore the
//! mirrored headers in place there.
//! Hot path rules: no allocation, no lock, no syscall per packet; one FFI call per burst.

use crate::clock::HostClock;
use crate::counters::{Admission, CpuSample, Live, Stop, Tally};
use crate::dpdk::{MbufBurst, RingConsumer, RxQueue};
use crate::shard::ShardBuffer;
use std::sync::atomic::{AtomicBool, Ordering::Acquire};
use std::sync::Arc;
use trace::annotation::Annotation;
use trace::pcapng::{Epb, MAX_COMMENT};
use wire::frame::{ClassifyConfig, FrameInfo};

/// How many packets ahead of the one being recorded the worker asks for its bytes, and how
/// many of its first bytes (at most the snap length): enough to overlap the misses on
/// data another core wrote (memif zero-copy, dispatcher rings), few enough not to evict.
const PREFETCH_AHEAD: usize = 4;
const PREFETCH_BYTES: usize = 256;
/// How often a worker reads its thread's CPU clock (a syscall) for the off-CPU share.
const CPU_SAMPLE_S: f64 = 0.01;

/// Where a worker's packets come from.
pub enum Source {
    /// Its own NIC RX queue (rss mode); it also enforces `--max-packets`.
    Queue { queue: RxQueue, admission: Arc<Admission> },
    /// Its ring from the dispatcher (dispatch mode). `upstream_done` is set once the
    /// dispatcher has stopped, after which the ring is drained and the worker exits.
    Ring { ring: RingConsumer, upstream_done: Arc<AtomicBool> },
}

pub struct Worker {
    pub source: Source,
    pub buffer: ShardBuffer,
    pub recorder: Recorder,
    pub clock: HostClock,
    /// Hand a partly filled buffer to the writer once its oldest packet is this many TSC
    /// ticks old, so even a slow link reaches the disk promptly.
    pub flush_after_ticks: u64,
    /// When the buffer last went from empty to holding packets (TSC).
    pub pending_since: Option<u64>,
    pub stop: Arc<Stop>,
    pub live: Arc<Live>,
}

impl Worker {
    /// Runs until stopped and returns the core's final counts.
    pub fn run(mut self) -> Tally {
        let mut tally = Tally::default();
        let mut burst = MbufBurst::new();
        let (mut last_poll, mut last_had_packets) = (crate::dpdk::rdtsc(), false);
        let mut cpu = CpuMeter::start(&self.clock, last_poll);
        loop {
            let n = self.receive(&mut burst, &mut tally);
            let now = crate::dpdk::rdtsc();
            tally.poll_time(now.wrapping_sub(last_poll), last_had_packets);
            (last_poll, last_had_packets) = (now, n > 0);
            if cpu.due(now) {
                tally.cpu = cpu.sample(&self.clock, now).unwrap_or(tally.cpu);
            }
            if n == 0 && self.finished() {
                break;
            }
            if n > 0 {
                let host_ns = self.clock.unix_ns(now);
                let snap = self.recorder.snaplen.min(PREFETCH_BYTES);
                for i in 0..PREFETCH_AHEAD.min(n) {
                    burst.prefetch_data(i, snap);
                }
                for i in 0..n {
                    burst.prefetch_data(i + PREFETCH_AHEAD, snap);
                    self.recorder.record(burst.data(i), burst.pkt_len(i), host_ns, &mut self.buffer, &mut tally);
                }
                burst.free_all();
                self.buffer.checksum_pending(); // the blocks are in the chunk, not the mbufs
                self.live.publish(&tally);
            }
            self.flush_if_stale(now);
        }
        self.buffer.flush();
        tally.cpu = cpu.sample(&self.clock, crate::dpdk::rdtsc()).unwrap_or(tally.cpu);
        self.live.publish(&tally);
        tally
    }

    /// Age-based flush: a buffer's oldest packet waits at most `flush_after_ticks`.
    fn flush_if_stale(&mut self, now: u64) {
        if self.buffer.pending_bytes() == 0 {
            self.pending_since = None;
            return;
        }
        let since = *self.pending_since.get_or_insert(now);
        if now.wrapping_sub(since) > self.flush_after_ticks {
            self.buffer.flush();
            self.pending_since = None;
        }
    }

    /// Fills `burst` and returns how many packets to record; packets beyond
    /// `--max-packets` are freed here and counted.
    fn receive(&mut self, burst: &mut MbufBurst, tally: &mut Tally) -> usize {
        let received = match &mut self.source {
            Source::Queue { queue, .. } => {
                if self.stop.requested() {
                    return 0;
                }
                queue.rx_burst(burst)
            }
            Source::Ring { ring, .. } => ring.dequeue_burst(burst),
        };
        if received == 0 {
            return 0;
        }
        tally.rx += received as u64;
        for i in 0..received {
            tally.rx_bytes += burst.pkt_len(i) as u64;
        }
        let admitted = match &self.source {
            Source::Queue { admission, .. } => admission.admit(received, &self.stop),
            Source::Ring { .. } => received, // the dispatcher enforced the limit
        };
        if admitted < received {
            tally.over_limit += (received - admitted) as u64;
            burst.free_from(admitted);
        }
        admitted
    }

    fn finished(&self) -> bool {
        match &self.source {
            Source::Queue { .. } => self.stop.requested(),
            // Only exit once the dispatcher is done *and* the ring was found empty after
            // that, so no dispatched packet is left behind. Acquire pairs with the
            // dispatcher's Release: its last enqueue is visible once `done` is.
            Source::Ring { ring, upstream_done } => upstream_done.load(Acquire) && ring.is_empty(),
        }
    }
}

/// The worker thread's CPU time against the TSC since its loop started, read every
/// [`CPU_SAMPLE_S`]. A kernel without a thread CPU clock leaves the sample at zero.
struct CpuMeter {
    start: Option<cpu_time::ThreadTime>,
    started_tsc: u64,
    every: u64,
    next: u64,
}

impl CpuMeter {
    fn start(clock: &HostClock, now: u64) -> CpuMeter {
        let every = clock.ticks(CPU_SAMPLE_S).max(1);
        CpuMeter { start: cpu_time::ThreadTime::try_now().ok(), started_tsc: now, every, next: now + every }
    }

    #[inline]
    fn due(&self, now: u64) -> bool {
        now >= self.next
    }

    fn sample(&mut self, clock: &HostClock, now: u64) -> Option<CpuSample> {
        self.next = now + self.every;
        let on_cpu = self.start.as_ref()?.try_elapsed().ok()?;
        Some(CpuSample { on_cpu_ns: on_cpu.as_nanos() as u64, wall_ns: clock.ns(now.saturating_sub(self.started_tsc)) })
    }
}

/// How one frame becomes one pcapng block in a shard buffer; everything the hot path does
/// per packet apart from receiving and freeing it. Free of DPDK so it can be tested alone.
#[derive(Debug, Clone, Copy)]
pub struct Recorder {
    pub classify: ClassifyConfig,
    pub snaplen: usize,
}

impl Recorder {
    /// Classifies, counts and appends `frame` (whose length on the wire is `wire_len`),
    /// restoring a mirrored copy's headers in the buffer; drops and counts it if the
    /// buffer is full.
    pub fn record(&self, frame: &[u8], wire_len: u32, host_ns: u64, buffer: &mut ShardBuffer, tally: &mut Tally) {
        let outcome = wire::frame::classify(frame, &self.classify);
        tally.classify(&outcome);
        let (annotation, timestamp_ns, packet_id) = describe(&outcome, host_ns);
        let mut comment = [0u8; MAX_COMMENT];
        let caplen = frame.len().min(self.snaplen);
        let epb = Epb {
            interface_id: 0,
            timestamp_ns,
            original_len: wire_len,
            data: &frame[..caplen],
            packet_id,
            comment: annotation.comment(&mut comment),
        };
        let block_len = epb.encoded_len();
        let Some(chunk) = buffer.reserve(block_len) else {
            tally.buffer_drops += 1;
            return;
        };
        let at = epb.append_to(&mut chunk.data);
        chunk.prefetch_ahead(block_len); // the next block is likely as long
        chunk.packets += 1;
        tally.written += 1;
        if let Ok(info @ FrameInfo { mirror: Some(_), .. }) = &outcome {
            wire::mirror::restore(&mut chunk.data[at..at + caplen], info, &self.classify);
        }
    }
}

/// The annotation, timestamp and packet id a frame is recorded with: switch time and
/// mirror seq for Lumina copies, host time otherwise.
fn describe(outcome: &Result<FrameInfo, wire::Error>, host_ns: u64) -> (Annotation, u64, u64) {
    match outcome {
        Ok(FrameInfo { mirror: Some(m), .. }) => {
            (Annotation::Mirrored { seq: m.seq, event: m.event }, m.timestamp_ns, m.seq as u64)
        }
        Ok(info) => (Annotation::Class(info.class), host_ns, 0),
        Err(e) => (Annotation::Malformed(e.kind()), host_ns, 0),
    }
}
