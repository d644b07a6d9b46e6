//! `recbench`: the per-packet cost of the dataplane's recording path without DPDK, a NIC or
//! another process: `dataplane::worker::Recorder::record` (classify, trim, pcapng EPB into
//! the shard buffer, restore) over frames already in memory, with the real shard buffer
//! and writer thread (`dataplane::shard`) behind it.
//!
//! It complements `bench/memif.sh`: memif numbers depend on the feeder, the scheduler and
//! the disk; this isolates the CPU the worker spends per packet, so a hot-path change can
//! be A/B-tested in seconds (`ns/packet` is the number to compare). Frames come from a
//! pcap (e.g. the one `mkfeed` writes); only the first `--working-set` frames are cycled so
//! that, as after a PMD's copy, the bytes are cache-resident. The shard goes to `--out`
//! (default /dev/null). As in the worker, the recording thread sums each 32 packets' blocks
//! into the chunk CRC. The result is valid only if the writer kept up (`buffer_drops` 0):
//! pin the recorder and the writer apart. The writer's own CPU per packet (the rest of each
//! chunk's CRC-32C, and the write) is printed beside it, from /proc at 10 ms resolution:
//! use enough packets per pass.

use anyhow::{ensure, Context, Result};
use clap::Parser;
use dataplane::counters::{Stop, Tally};
use dataplane::shard;
use dataplane::worker::Recorder;
use pcap_file::pcap::PcapReader;
use std::os::unix::fs::FileTypeExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use wire::frame::ClassifyConfig;

#[derive(Debug, Parser)]
#[command(name = "recbench", version, about = "Per-packet cost of the dataplane's recording path (no DPDK)")]
struct Args {
    /// Input pcap (e.g. from mkfeed).
    #[arg(short, long)]
    feed: PathBuf,
    /// Packets to record per measured pass.
    #[arg(short = 'n', long, default_value_t = 20_000_000)]
    packets: u64,
    /// Measured passes (the best and the median are printed).
    #[arg(long, default_value_t = 5)]
    passes: u32,
    /// Frames cycled over (the first N of the feed).
    #[arg(long, default_value_t = 512)]
    working_set: usize,
    #[arg(long, default_value_t = 128)]
    snaplen: usize,
    /// Where the shard goes.
    #[arg(short, long, default_value = "/dev/null")]
    out: PathBuf,
    /// Shard buffer, MiB (4 MiB chunks).
    #[arg(long, default_value_t = 256)]
    buffer_mb: usize,
    /// CPU of the recording thread (the writer thread is started before and stays on
    /// `--writer-cpu`).
    #[arg(long)]
    cpu: Option<usize>,
    #[arg(long)]
    writer_cpu: Option<usize>,
}

const CHUNK_BYTES: usize = 4 << 20;
/// The dataplane's burst size: the worker sums a burst's blocks into the chunk CRC at its end.
const BURST: u64 = 32;
/// Linux's USER_HZ, the unit of /proc's CPU times.
const TICKS_PER_SECOND: f64 = 100.0;

/// User + system CPU ticks from a /proc `stat` file (fields 14 and 15).
fn cpu_ticks(path: &str) -> Result<u64> {
    let stat = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    // Fields after the parenthesised command name, which may itself hold spaces.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let field = |n: usize| rest.split_whitespace().nth(n - 3).and_then(|f| f.parse::<u64>().ok());
    match (field(14), field(15)) {
        (Some(user), Some(system)) => Ok(user + system),
        _ => anyhow::bail!("no CPU times in {path}"),
    }
}

fn pin(cpu: Option<usize>) -> Result<()> {
    if let Some(id) = cpu {
        ensure!(core_affinity::set_for_current(core_affinity::CoreId { id }), "cannot pin to CPU {id}");
    }
    Ok(())
}

fn main() -> Result<()> {
    let args = Args::parse();
    let file = std::fs::File::open(&args.feed).with_context(|| format!("opening {}", args.feed.display()))?;
    let mut reader = PcapReader::new(file).context("reading the pcap header")?;
    let mut frames: Vec<(Vec<u8>, u32)> = Vec::new();
    while let Some(p) = reader.next_packet() {
        let p = p.context("reading a packet")?;
        frames.push((p.data.into_owned(), p.orig_len));
        if frames.len() == args.working_set {
            break;
        }
    }
    ensure!(!frames.is_empty(), "no frames in {}", args.feed.display());
    let recorder = Recorder { classify: ClassifyConfig::default(), snaplen: args.snaplen };
    // /dev/null and friends take every write but refuse the final fsync: not an error here.
    let char_device = std::fs::metadata(&args.out).map(|m| m.file_type().is_char_device()).unwrap_or(false);
    let mut results = Vec::new();
    for pass in 0..=args.passes {
        pin(args.writer_cpu)?;
        let header = trace::pcapng::shard_header(args.snaplen as u32, "port0", "recbench", "recbench");
        let chunks = (args.buffer_mb << 20) / CHUNK_BYTES;
        let (mut buffer, writer) =
            shard::open(&args.out, header, chunks.max(2), CHUNK_BYTES, Arc::new(Stop::default()), None)?;
        pin(args.cpu)?;
        let cpu_before = (cpu_ticks("/proc/self/stat")?, cpu_ticks("/proc/thread-self/stat")?);
        let mut tally = Tally::default();
        let host_ns = 1_700_000_000_000_000_000;
        let start = Instant::now();
        let mut i = 0;
        for n in 0..args.packets {
            let (data, wire_len) = &frames[i];
            recorder.record(data, *wire_len, host_ns, &mut buffer, &mut tally);
            if n % BURST == BURST - 1 {
                buffer.checksum_pending(); // as the worker does after each burst
            }
            i += 1;
            if i == frames.len() {
                i = 0;
            }
        }
        let elapsed = start.elapsed();
        buffer.flush();
        drop(buffer);
        let report = writer.join().map_err(|_| anyhow::anyhow!("writer panicked"))?;
        // The writer's CPU: the process's minus this thread's (the writer has exited).
        let process = cpu_ticks("/proc/self/stat")? - cpu_before.0;
        let writer_ticks = process.saturating_sub(cpu_ticks("/proc/thread-self/stat")? - cpu_before.1);
        let writer_ns = writer_ticks as f64 * (1e9 / TICKS_PER_SECOND) / args.packets as f64;
        let ns = elapsed.as_nanos() as f64 / args.packets as f64;
        let bytes_per_pkt = report.bytes as f64 / tally.written.max(1) as f64;
        if pass == 0 {
            eprintln!("recbench: warm-up pass {ns:.1} ns/packet ({} frames of {} B cycled)", frames.len(), frames[0].1);
            continue;
        }
        println!(
            "pass {pass}: {ns:.1} ns/packet = {:.2} Mpps; writer {writer_ns:.1} ns/packet of CPU; written {} buffer_drops {} ({bytes_per_pkt:.0} B/record{})",
            1e3 / ns,
            tally.written,
            tally.buffer_drops,
            report
                .error
                .as_ref()
                .filter(|e| !(char_device && e.starts_with("fsync")))
                .map(|e| format!(", write error: {e}"))
                .unwrap_or_default()
        );
        if tally.buffer_drops > 0 {
            eprintln!("recbench: pass {pass} dropped packets (the writer fell behind): not a valid measurement");
        } else {
            results.push(ns);
        }
    }
    results.sort_by(f64::total_cmp);
    if results.is_empty() {
        anyhow::bail!("no valid pass (every pass dropped packets)");
    }
    println!(
        "recbench: best {:.1} ns/packet ({:.2} Mpps), median {:.1} ns/packet over {} valid passes",
        results[0],
        1e3 / results[0],
        results[results.len() / 2],
        results.len()
    );
    Ok(())
}
