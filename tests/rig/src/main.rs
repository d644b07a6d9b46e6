//! `rocescope-rig`: runs the emulated Lumina test rig and writes a run directory.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

use rig::config::RigConfig;
use rig::output;
use rig::profile::NicKind;
use rig::scale::Scale;
use rig::{Capture, Rig};

#[derive(Parser)]
#[command(
    name = "rocescope-rig",
    version,
    about = "Emulated Lumina test rig: RNICs, an event-injecting mirroring switch and dump hosts, with ground truth"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a test from a Lumina YAML configuration.
    Run {
        config: PathBuf,
        /// The run directory to create.
        #[arg(short, long)]
        out: PathBuf,
        /// Override `rig.seed`.
        #[arg(long)]
        seed: Option<u64>,
        /// Replace an existing run directory.
        #[arg(long)]
        force: bool,
    },
    /// Generate a large run for benchmarks: many QPs of WRITE traffic, trimmed copies.
    Scale {
        #[arg(short, long)]
        out: PathBuf,
        /// Queue pairs.
        #[arg(long, default_value_t = 4096)]
        qps: u32,
        /// Data packets to send in total (rounded to whole messages per QP).
        #[arg(long, default_value_t = 10_000_000)]
        packets: u64,
        /// Packets per message (MTU 1024).
        #[arg(long, default_value_t = 16)]
        msg_pkts: u32,
        /// Drop one data packet in every this many QPs (0: none).
        #[arg(long, default_value_t = 64)]
        drop_every_qps: u32,
        #[arg(long, default_value_t = 2)]
        dump_hosts: usize,
        /// Snap length of the dumped copies.
        #[arg(long, default_value_t = 128)]
        snaplen: u32,
        #[arg(long, default_value = "cx6")]
        nic: String,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        force: bool,
    },
    /// Print the NIC profiles (Lumina §6 figures) as JSON.
    Profiles,
}

fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().cmd {
        Cmd::Run { config, out, seed, force } => {
            let mut cfg = RigConfig::load(&config)?;
            if let Some(s) = seed {
                cfg.rig.seed = s;
            }
            run(&cfg, &out, force)
        }
        Cmd::Scale { out, qps, packets, msg_pkts, drop_every_qps, dump_hosts, snaplen, nic, seed, force } => {
            let params = Scale { qps, packets, msg_pkts, drop_every_qps, dump_hosts, snaplen, nic, seed };
            run(&params.config()?, &out, force)
        }
        Cmd::Profiles => {
            let all: Vec<_> = NicKind::ALL.iter().map(|k| k.profile()).collect();
            emit(&format!("{}\n", serde_json::to_string_pretty(&all)?))
        }
    }
}

/// Writes `text` to standard output; a reader that went away (`| head`) ends the output,
/// not the run: its files are written.
fn emit(text: &str) -> Result<()> {
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn prepare(out: &Path, force: bool) -> Result<()> {
    if out.exists() {
        if !force {
            bail!("{} exists; pass --force to replace it", out.display());
        }
        std::fs::remove_dir_all(out).with_context(|| format!("removing {}", out.display()))?;
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))
}

fn run(cfg: &RigConfig, out: &Path, force: bool) -> Result<()> {
    for warning in cfg.unmodelled() {
        tracing::warn!("{warning}");
    }
    prepare(out, force)?;
    let started = Instant::now();
    let result = Rig::new(cfg, Capture::Pcap(out), false)?.run().context("writing the dump hosts' pcaps")?;
    let secs = started.elapsed().as_secs_f64();
    output::write_run(out, cfg, &result)?;
    std::fs::write(out.join("config.yaml"), serde_yaml_ng::to_string(cfg)?)?;
    let s = &result.stats;
    let t = &result.truth;
    let mut text = format!(
        "{}: {} packets ({} mirrored) over {:.3} ms simulated, in {:.2} s ({:.2} M packets/s)\n",
        out.display(),
        s.packets,
        s.mirrored,
        s.duration_ns as f64 / 1e6,
        secs,
        s.packets as f64 / secs / 1e6
    );
    // A NAK scheduled but overtaken (a timeout recovered first) has seq 0: never sent.
    let sent_naks = t.naks.iter().filter(|n| n.seq != 0).count();
    let rereads = t.retransmissions.iter().filter(|r| r.opcode == wire::bth::Opcode::RC_READ_REQUEST.0).count();
    text += &format!(
        "  events {} (unmatched {}), NAKs {} (+{} never sent), timeouts {}, retransmissions {} ({} repeated READ requests), CNPs {} (+{} suppressed), QP errors {}\n",
        t.events.len(),
        t.unmatched_events.len(),
        sent_naks,
        t.naks.len() - sent_naks,
        t.timeouts.len(),
        t.retransmissions.len(),
        rereads,
        t.cnps.len(),
        t.suppressed_cnps.len(),
        t.qp_errors.len()
    );
    if s.hit_time_limit {
        text += "  the generator stopped posting at rig.time-limit-ms, before the traffic was done\n";
    }
    emit(&text)
}
