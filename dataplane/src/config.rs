//! Command line: `rocescope-dataplane [EAL args] -- [app args]`, as every DPDK program.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Balance {
    /// One RX queue per worker; the NIC spreads packets (RSS on IP + UDP ports; Lumina's
    /// random UDP source port on mirrored copies makes this even). Multi-queue virtual
    /// devices without RSS (e.g. net_pcap with several rx_pcap files) feed queues themselves.
    Rss,
    /// One RX queue; a dispatcher lcore deals packets round-robin to the workers
    /// (Lumina §3.4 per-packet load balancing) — for memif, pcap, ring and RSS-less NICs.
    Dispatch,
}

impl Balance {
    pub fn name(self) -> &'static str {
        match self {
            Balance::Rss => "rss",
            Balance::Dispatch => "dispatch",
        }
    }
}

#[derive(Debug, Clone, Parser)]
#[command(
    name = "rocescope-dataplane",
    version,
    about = "Capture Lumina-mirrored RoCEv2 traffic at line rate into integrity-checked pcapng shards",
    after_help = "EAL arguments come first and end with `--`. Without a NIC, e.g.:\n  \
        rocescope-dataplane -l 0-1 --no-huge --no-pci --file-prefix rs1 -m 1024 \\\n    \
        --vdev net_pcap0,rx_pcap=mirror.pcap -- -o run1 --stop-when-idle 1\n\
        Lcores: the main lcore prints stats; each other lcore is a worker (in dispatch mode \
        the first of them is the dispatcher)."
)]
pub struct Args {
    /// Run directory to create (shards + manifest.json).
    #[arg(short, long)]
    pub out: PathBuf,
    /// Write into `--out` even if it already holds a run.
    #[arg(long)]
    pub force: bool,
    /// DPDK port id to capture from.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// How packets are spread over worker cores.
    #[arg(long, value_enum, default_value_t = Balance::Rss)]
    pub balance: Balance,
    /// Bytes kept of each frame (Lumina keeps 128: every RoCE header fits). At least 80, so
    /// the UDP header a restoration rewrites is always whole (QinQ + IPv6 + UDP = 70 B).
    /// Only the first mbuf segment is kept, so a chained jumbo frame may be cut shorter.
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(80..=65535))]
    pub snaplen: u32,
    /// UDP destination port the switch writes into mirrored copies (Lumina: 9741).
    #[arg(long, default_value_t = 9741)]
    pub mirror_port: u16,
    /// RoCEv2 UDP port restored into mirrored copies.
    #[arg(long, default_value_t = 4791)]
    pub roce_port: u16,
    /// Stop after this many seconds.
    #[arg(long, value_parser = positive_seconds)]
    pub duration: Option<f64>,
    /// Take in exactly this many packets (all cores together) and stop; packets received
    /// beyond it are counted as over_limit. Buffer drops still count against the limit.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_packets: Option<u64>,
    /// Stop once no packet has arrived for this many seconds (e.g. a replayed pcap ended);
    /// before the first packet, counted from when the link came up (a memif peer connected).
    #[arg(long, value_parser = positive_seconds)]
    pub stop_when_idle: Option<f64>,
    /// Shard buffer per core, MiB (a full buffer drops and counts; RX never waits on disk).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(8..=65536))]
    pub buffer_mb: u64,
    /// Seconds between live stats lines on stderr; 0 turns them off.
    #[arg(long, default_value_t = 1.0, value_parser = seconds_or_zero)]
    pub stats_interval: f64,
    /// RX descriptors per queue.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u16).range(32..))]
    pub rx_desc: u16,
    /// Dispatcher-to-worker ring size, in packets (any size; exact).
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(32..=(1 << 24)))]
    pub ring_size: u32,
    /// CPUs for the shard writer threads (e.g. `2,3`), dealt to the cores' writers in turn.
    /// Default: where the main lcore runs. Keep them off the worker lcores' CPUs.
    #[arg(long, value_delimiter = ',')]
    pub writer_cpus: Vec<usize>,
    /// Put the port in promiscuous mode (a mirror port receives frames for other MACs).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub promiscuous: bool,
}

fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}

fn seconds_or_zero(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v == 0.0 => Ok(v),
        _ => positive_seconds(s),
    }
}

/// Splits argv at the first `--` into EAL arguments (with argv[0]) and app arguments.
pub fn split_args(argv: Vec<String>) -> (Vec<String>, Vec<String>) {
    let program = argv.first().cloned().unwrap_or_else(|| "rocescope-dataplane".into());
    match argv.iter().position(|a| a == "--") {
        Some(at) => {
            let app = std::iter::once(program).chain(argv[at + 1..].iter().cloned()).collect();
            (argv[..at].to_vec(), app)
        }
        None => (vec![program], argv),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn splits_eal_from_app_arguments() {
        let (eal, app) = split_args(s(&["rd", "-l", "0-1", "--no-huge", "--", "-o", "x"]));
        assert_eq!(eal, s(&["rd", "-l", "0-1", "--no-huge"]));
        assert_eq!(app, s(&["rd", "-o", "x"]));
        let (eal, app) = split_args(s(&["rd", "-o", "x"]));
        assert_eq!(eal, s(&["rd"]));
        assert_eq!(app, s(&["rd", "-o", "x"]));
    }

    #[test]
    fn parses_defaults_and_rejects_tiny_snaplen() {
        let a = Args::try_parse_from(s(&["rd", "-o", "run"])).unwrap();
        assert_eq!((a.snaplen, a.mirror_port, a.roce_port, a.balance), (128, 9741, 4791, Balance::Rss));
        assert!(Args::try_parse_from(s(&["rd", "-o", "run", "--snaplen", "20"])).is_err());
    }

    #[test]
    fn rejects_values_that_would_never_or_always_fire() {
        for bad in
            [&["--duration", "-1"][..], &["--duration", "NaN"], &["--stop-when-idle", "inf"], &["--max-packets", "0"]]
        {
            let argv: Vec<&str> = ["rd", "-o", "run"].iter().chain(bad).copied().collect();
            assert!(Args::try_parse_from(s(&argv)).is_err(), "{bad:?} accepted");
        }
        assert!(Args::try_parse_from(s(&["rd", "-o", "r", "--ring-size", "4294967295"])).is_err());
        let a = Args::try_parse_from(s(&["rd", "-o", "r", "--stats-interval", "0", "--duration", "0.5"])).unwrap();
        assert_eq!((a.stats_interval, a.duration), (0.0, Some(0.5)));
        let a = Args::try_parse_from(s(&["rd", "-o", "r", "--writer-cpus", "2,3"])).unwrap();
        assert_eq!(a.writer_cpus, vec![2, 3]);
    }
}
