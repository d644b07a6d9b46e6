//! Turning counters into the manifest, the live stats line and the closing summary.

use crate::config::Args;
use crate::counters::{busy_percent, CpuSample, Live, StopReason, Tally};
use crate::dispatch::DispatchTally;
use crate::dpdk::{PortInfo, PortStats};
use crate::run::CoreSlot;
use crate::shard::WriterReport;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};
use trace::manifest::{CaptureConfig, CoreRecord, DispatcherRecord, Manifest, PortRecord, RunStatus};
use wire::frame::FrameClass;
use wire::mirror::Event;
use wire::ErrorKind;

pub struct CoreOutcome {
    pub tally: Tally,
    pub writer: WriterReport,
}

pub fn writer_name() -> String {
    format!("rocescope-dataplane {}", env!("CARGO_PKG_VERSION"))
}

/// The manifest written when the capture starts (`status: running`).
pub fn initial_manifest(
    eal_args: &[String],
    args: &Args,
    info: &PortInfo,
    rx_queues: u16,
    rss: bool,
    slots: &[CoreSlot],
    started_unix_ns: u64,
) -> Manifest {
    Manifest {
        format: trace::manifest::FORMAT.into(),
        version: trace::manifest::VERSION,
        writer: writer_name(),
        status: RunStatus::Running,
        started_unix_ns,
        finished_unix_ns: None,
        stop_reason: None,
        config: CaptureConfig {
            snaplen: args.snaplen,
            balance: args.balance.name().into(),
            workers: slots.len() as u32,
            mirror_port: args.mirror_port,
            roce_port: args.roce_port,
            buffer_bytes_per_core: crate::run::buffer_bytes_per_core(args) as u64,
            max_packets: args.max_packets,
            writer_cpus: args.writer_cpus.clone(),
            eal_args: eal_args.iter().skip(1).cloned().collect(),
        },
        port: PortRecord { port_id: args.port, driver: info.driver_name.clone(), rx_queues, rss, ..Default::default() },
        dispatcher: None,
        cores: slots
            .iter()
            .enumerate()
            .map(|(i, s)| CoreRecord {
                core: i as u32,
                lcore: s.lcore,
                rx_queue: s.queue,
                shard: s.shard.clone(),
                ..Default::default()
            })
            .collect(),
    }
}

pub fn dispatcher_record(lcore: u32, t: &DispatchTally) -> DispatcherRecord {
    DispatcherRecord { lcore, rx: t.rx, over_limit: t.over_limit, ring_drops: t.ring_drops.clone() }
}

/// Fills the final counters into the manifest.
pub fn finish(m: &mut Manifest, outcomes: &[CoreOutcome], port: &PortStats, reason: Option<StopReason>, now_ns: u64) {
    m.finished_unix_ns = Some(now_ns);
    m.stop_reason = reason.map(|r| r.name().to_string());
    m.config.workers = outcomes.len() as u32;
    m.port.ipackets = port.ipackets;
    m.port.ibytes = port.ibytes;
    m.port.imissed = port.imissed;
    m.port.ierrors = port.ierrors;
    m.port.rx_nombuf = port.rx_nombuf;
    for (record, o) in m.cores.iter_mut().zip(outcomes) {
        fill_core(record, o);
        if let Some(q) = record.rx_queue.map(usize::from) {
            record.nic_queue_packets = port.q_ipackets.get(q).copied();
            record.nic_queue_errors = port.q_errors.get(q).copied();
        }
    }
}

fn fill_core(r: &mut CoreRecord, o: &CoreOutcome) {
    let t = &o.tally;
    r.rx = t.rx;
    r.rx_bytes = t.rx_bytes;
    r.over_limit = t.over_limit;
    // What reached the disk; packets in a chunk whose write failed are buffer losses too.
    r.written = o.writer.packets_written;
    r.buffer_drops = t.buffer_drops;
    r.write_failed = o.writer.packets_lost;
    r.write_error = o.writer.error.clone();
    r.classes = FrameClass::ALL.iter().map(|c| (c.name().to_string(), t.classes[c.index()])).collect();
    r.classes.insert(trace::annotation::MALFORMED_CLASS.into(), t.malformed_total());
    r.events = Event::ALL.iter().map(|e| (e.name().to_string(), t.events[*e as usize])).collect();
    r.parse_errors = nonzero(ErrorKind::ALL.iter().map(|k| (k.name(), t.malformed[k.index()])));
    r.first_seq = t.first_seq;
    r.last_seq = t.last_seq;
    // One decimal: a share of TSC ticks, not a count to compare exactly.
    r.busy_percent = busy_percent(t.busy_ticks, t.poll_ticks).map(one_decimal);
    r.off_cpu_percent = t.cpu.off_cpu_percent_since(&CpuSample::default()).map(one_decimal);
    r.shard_bytes = o.writer.bytes;
    r.blocks = o.writer.blocks.clone();
}

fn one_decimal(p: f64) -> f64 {
    (p * 10.0).round() / 10.0
}

fn nonzero<'a>(it: impl Iterator<Item = (&'a str, u64)>) -> BTreeMap<String, u64> {
    it.filter(|(_, n)| *n > 0).map(|(k, n)| (k.to_string(), n)).collect()
}

/// The one-line-per-interval stats on stderr.
pub struct LiveLine {
    last: Instant,
    prev: Vec<Snapshot>,
    prev_dispatch: Snapshot,
}

/// What a stage's [`Live`] held at the previous line.
#[derive(Debug, Clone, Copy, Default)]
struct Snapshot {
    rx: u64,
    rx_bytes: u64,
    drops: u64,
    poll_ticks: u64,
    busy_ticks: u64,
    cpu: CpuSample,
}

impl Snapshot {
    fn of(live: &Live) -> Self {
        Snapshot {
            rx: live.rx.load(Relaxed),
            rx_bytes: live.rx_bytes.load(Relaxed),
            drops: live.drops.load(Relaxed),
            poll_ticks: live.poll_ticks.load(Relaxed),
            busy_ticks: live.busy_ticks.load(Relaxed),
            cpu: live.cpu(),
        }
    }

    /// Packets and bytes per second since `prev`, `dt` seconds earlier.
    fn rates(&self, prev: &Snapshot, dt: f64) -> (f64, f64) {
        ((self.rx - prev.rx) as f64 / dt, (self.rx_bytes - prev.rx_bytes) as f64 / dt)
    }
}

impl LiveLine {
    pub fn new(cores: usize) -> Self {
        LiveLine { last: Instant::now(), prev: vec![Snapshot::default(); cores], prev_dispatch: Snapshot::default() }
    }

    pub fn due(&self, interval_s: f64) -> bool {
        self.last.elapsed().as_secs_f64() >= interval_s
    }

    /// One line: the total rate, then per core its rate, its busy share over the interval
    /// (0 % when it saw no packet: a worker publishes only after a burst), the share of the
    /// interval its thread was off its CPU (`-` when it published nothing) and its drops.
    pub fn line(&mut self, cores: &[&Live], dispatcher: Option<&Live>, since_start: Duration) -> String {
        let dt = self.last.elapsed().as_secs_f64().max(1e-9);
        self.last = Instant::now();
        let mut total = (0.0, 0.0);
        let mut per_core = String::new();
        for (i, live) in cores.iter().enumerate() {
            let (now, prev) = (Snapshot::of(live), self.prev[i]);
            let (pps, bps) = now.rates(&prev, dt);
            total.0 += pps;
            total.1 += bps;
            let busy = busy_percent(now.busy_ticks - prev.busy_ticks, now.poll_ticks - prev.poll_ticks);
            let off = percent_or_dash(now.cpu.off_cpu_percent_since(&prev.cpu));
            let _ = write!(
                per_core,
                " | c{i} {:.2} Mpps busy {:.0}% off-cpu {off} drop {}",
                pps / 1e6,
                busy.unwrap_or(0.0),
                now.drops
            );
            self.prev[i] = now;
        }
        let mut line = format!("[{:>7.1}s]", since_start.as_secs_f64());
        if let Some(d) = dispatcher {
            let now = Snapshot::of(d);
            total = now.rates(&self.prev_dispatch, dt);
            let _ = write!(per_core, " | dispatch ring-drops {}", now.drops);
            self.prev_dispatch = now;
        }
        let _ = write!(line, " rx {:.3} Mpps {:.3} Gbit/s{per_core}", total.0 / 1e6, total.1 * 8.0 / 1e9);
        line
    }
}

/// The closing summary on stdout: what was captured, where, and every loss.
pub fn summary(run_dir: &Path, m: &Manifest, elapsed: Duration) -> String {
    let mut s = String::new();
    let written = m.total(|c| c.written);
    let rx = m.dispatcher.as_ref().map_or_else(|| m.total(|c| c.rx), |d| d.rx);
    let _ = writeln!(
        s,
        "rocescope-dataplane: recorded {written} of {rx} packets in {:.2} s into {} (stopped: {})",
        elapsed.as_secs_f64(),
        run_dir.display(),
        m.stop_reason.as_deref().unwrap_or("unknown")
    );
    let _ = writeln!(
        s,
        "  {:>4} {:>5} {:>5} {:>10} {:>10} {:>9} {:>10} {:>9} {:>10} {:>10} {:>5} {:>7}  shard",
        "core",
        "lcore",
        "queue",
        "rx",
        "written",
        "buf-drop",
        "write-fail",
        "malformed",
        "first-seq",
        "last-seq",
        "busy",
        "off-cpu"
    );
    for c in &m.cores {
        let _ = writeln!(
            s,
            "  {:>4} {:>5} {:>5} {:>10} {:>10} {:>9} {:>10} {:>9} {:>10} {:>10} {:>5} {:>7}  {} ({} bytes, {} blocks)",
            c.core,
            c.lcore,
            c.rx_queue.map_or("-".into(), |q| q.to_string()),
            c.rx,
            c.written,
            c.buffer_drops,
            c.write_failed,
            c.classes.get(trace::annotation::MALFORMED_CLASS).copied().unwrap_or(0),
            opt(c.first_seq),
            opt(c.last_seq),
            percent_or_dash(c.busy_percent),
            percent_or_dash(c.off_cpu_percent),
            c.shard,
            c.shard_bytes,
            c.blocks.len()
        );
    }
    let _ = writeln!(s, "  classes: {}", join(&sum_maps(m.cores.iter().map(|c| &c.classes))));
    let _ = writeln!(s, "  mirror events: {}", join(&sum_maps(m.cores.iter().map(|c| &c.events))));
    let errors = sum_maps(m.cores.iter().map(|c| &c.parse_errors));
    if !errors.is_empty() {
        let _ = writeln!(s, "  malformed frames by kind: {}", join(&errors));
    }
    let p = &m.port;
    let _ = writeln!(
        s,
        "  port {} ({}): ipackets {} imissed {} ierrors {} rx_nombuf {}",
        p.port_id, p.driver, p.ipackets, p.imissed, p.ierrors, p.rx_nombuf
    );
    if let Some(d) = &m.dispatcher {
        let drops: u64 = d.ring_drops.iter().sum();
        let _ =
            writeln!(s, "  dispatcher lcore {}: rx {} ring drops {} over limit {}", d.lcore, d.rx, drops, d.over_limit);
    }
    let losses = m.total(|c| c.buffer_drops + c.write_failed)
        + p.imissed
        + p.rx_nombuf
        + m.dispatcher.as_ref().map_or(0, |d| d.ring_drops.iter().sum());
    let _ = writeln!(s, "  losses: {losses}{}", if losses == 0 { " (none)" } else { " (see manifest.json)" });
    s.push_str(&off_cpu_notes(&m.cores));
    s
}

/// A line for each core whose worker was off its CPU for a notable share of the capture.
fn off_cpu_notes(cores: &[CoreRecord]) -> String {
    let mut s = String::new();
    for c in cores.iter().filter(|c| c.off_cpu_percent.is_some_and(|p| p >= OFF_CPU_NOTE_PERCENT)) {
        let _ = writeln!(
            s,
            "  note: core {} (lcore {}) was off its CPU {:.0}% of the time: another thread or the kernel ran \
             there (shard writers run on the main lcore's CPU unless --writer-cpus places them), and meanwhile \
             only the RX ring held arriving packets",
            c.core,
            c.lcore,
            c.off_cpu_percent.unwrap_or_default()
        );
    }
    s
}

/// Off-CPU share from which the summary says so: a worker alone on its CPU loses ~1 % to
/// timer ticks and interrupts.
const OFF_CPU_NOTE_PERCENT: f64 = 5.0;

/// A share as a whole percentage, `-` when there is none.
fn percent_or_dash(p: Option<f64>) -> String {
    p.map_or("-".into(), |p| format!("{p:.0}%"))
}

fn opt(v: Option<u32>) -> String {
    v.map_or("-".into(), |x| x.to_string())
}

fn sum_maps<'a>(maps: impl Iterator<Item = &'a BTreeMap<String, u64>>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for m in maps {
        for (k, v) in m {
            *out.entry(k.clone()).or_insert(0) += v;
        }
    }
    out
}

fn join(m: &BTreeMap<String, u64>) -> String {
    m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_each_core_that_was_off_its_cpu() {
        let core = |core: u32, off| CoreRecord { core, lcore: core + 1, off_cpu_percent: off, ..Default::default() };
        let notes = off_cpu_notes(&[core(0, Some(1.2)), core(1, Some(31.4)), core(2, None)]);
        assert_eq!(notes.lines().count(), 1, "{notes}");
        assert!(notes.contains("core 1 (lcore 2) was off its CPU 31% of the time"), "{notes}");
        assert!(notes.contains("--writer-cpus"), "says what to do: {notes}");
    }
}
