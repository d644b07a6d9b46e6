//! `manifest.json`: what a run captured, per core, and the CRC-32C of every block written,
//! so a reader can prove a shard is intact and a checker can account for every drop.
//! Schema version [`VERSION`]; documented field by field in docs/formats.md.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

pub const FILE_NAME: &str = "manifest.json";
pub const FORMAT: &str = "rocescope-run";
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    /// The program and version that wrote the run.
    pub writer: String,
    /// `running` while capturing (a crash leaves it so), then `complete`.
    pub status: RunStatus,
    pub started_unix_ns: u64,
    pub finished_unix_ns: Option<u64>,
    /// Why the capture ended: signal, duration, max_packets, idle, write_error, lcore_failed.
    pub stop_reason: Option<String>,
    pub config: CaptureConfig,
    pub port: PortRecord,
    /// Present in dispatch mode: the lcore that spread packets over the workers.
    pub dispatcher: Option<DispatcherRecord>,
    pub cores: Vec<CoreRecord>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Complete,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CaptureConfig {
    pub snaplen: u32,
    /// `rss` (the NIC spreads queues over workers) or `dispatch` (Lumina §3.4 per-packet
    /// round-robin from one queue).
    pub balance: String,
    pub workers: u32,
    pub mirror_port: u16,
    pub roce_port: u16,
    pub buffer_bytes_per_core: u64,
    pub max_packets: Option<u64>,
    /// CPUs the shard writer threads were pinned to (empty: the main lcore's).
    #[serde(default)]
    pub writer_cpus: Vec<usize>,
    pub eal_args: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PortRecord {
    pub port_id: u16,
    pub driver: String,
    pub rx_queues: u16,
    pub rss: bool,
    /// NIC counters at the end of the run (rte_eth_stats).
    pub ipackets: u64,
    pub ibytes: u64,
    pub imissed: u64,
    pub ierrors: u64,
    pub rx_nombuf: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DispatcherRecord {
    pub lcore: u32,
    pub rx: u64,
    /// Packets received after `max_packets` was reached, freed unrecorded.
    pub over_limit: u64,
    /// Per worker: packets dropped because that worker's ring was full.
    pub ring_drops: Vec<u64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CoreRecord {
    pub core: u32,
    pub lcore: u32,
    /// The RX queue this core polls (rss mode); `None` when fed by the dispatcher.
    pub rx_queue: Option<u16>,
    /// File name of the shard, relative to the run directory.
    pub shard: String,
    /// The NIC's own counters for this core's RX queue (rss mode, queues 0..16, where the
    /// driver keeps them): packets received into the queue and errors on it.
    pub nic_queue_packets: Option<u64>,
    pub nic_queue_errors: Option<u64>,
    /// Packets this core took in (from its queue or its dispatcher ring).
    pub rx: u64,
    pub rx_bytes: u64,
    /// Packets received after `max_packets` was reached (rss mode), freed unrecorded.
    pub over_limit: u64,
    /// Packets written to the shard.
    pub written: u64,
    /// Packets dropped because every buffer of this core was full (disk too slow).
    pub buffer_drops: u64,
    /// Packets recorded in a buffer whose write to disk failed (see `write_error`).
    pub write_failed: u64,
    pub write_error: Option<String>,
    /// Packets by class (wire::frame::FrameClass names, plus `malformed`).
    pub classes: BTreeMap<String, u64>,
    /// Mirrored copies by Lumina event type.
    pub events: BTreeMap<String, u64>,
    /// Malformed frames by wire::ErrorKind name.
    pub parse_errors: BTreeMap<String, u64>,
    /// First and last mirror sequence numbers this core saw, in arrival order.
    pub first_seq: Option<u32>,
    pub last_seq: Option<u32>,
    /// Share of this core's polling time spent on packets, over the whole capture (waits
    /// for traffic included); the live stats line gives it per interval. Absent in
    /// manifests written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_percent: Option<f64>,
    /// Share of the capture's wall time this core's worker thread was not running
    /// (preempted by another thread on its CPU, or by the kernel): busy and idle time both
    /// include it. Absent in manifests written before it existed, or without a thread CPU
    /// clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_cpu_percent: Option<f64>,
    pub shard_bytes: u64,
    pub blocks: Vec<BlockRecord>,
}

/// The checksum of a block: CRC-32C (Castagnoli, `CRC-32/ISCSI`), hardware-accelerated
/// where available. Its speed is on the capture core's budget (docs/benchmarks.md).
pub fn block_crc(bytes: &[u8]) -> u32 {
    // CRC-32/ISCSI's register is 32 bits wide; crc-fast returns every width as a u64.
    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, bytes) as u32
}

/// [`block_crc`] fed piece by piece: the dataplane's worker sums each burst's blocks while
/// they are still in its cache, and the writer sums whatever is left of a chunk.
#[derive(Clone, Copy)]
pub struct BlockCrc(crc_fast::Digest);

impl BlockCrc {
    pub fn new() -> BlockCrc {
        BlockCrc(crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Iscsi))
    }
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    /// The checksum of everything fed so far; [`block_crc`] of their concatenation.
    pub fn value(&self) -> u32 {
        self.0.finalize() as u32
    }
}

impl Default for BlockCrc {
    fn default() -> BlockCrc {
        BlockCrc::new()
    }
}

impl std::fmt::Debug for BlockCrc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlockCrc({:#010x} so far)", self.value())
    }
}

/// One contiguous write of the shard file; blocks tile the file from offset 0.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct BlockRecord {
    pub offset: u64,
    pub len: u64,
    pub crc32c: u32,
    /// Enhanced Packet Blocks inside (0 for the header block).
    pub packets: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("reading {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path} is not a rocescope manifest: {source}")]
    Json { path: String, source: serde_json::Error },
    #[error("{path}: format {format:?} version {version} is not {FORMAT:?} version {VERSION}")]
    Version { path: String, format: String, version: u32 },
    #[error("{path}: shard {shard:?} is not a file name in the run directory (absolute, or with ..); a run's shards are its own files")]
    ShardPath { path: String, shard: String },
}

impl Manifest {
    pub fn load(run_dir: &Path) -> Result<Manifest, ManifestError> {
        let path = run_dir.join(FILE_NAME);
        let shown = path.display().to_string();
        let text = std::fs::read(&path).map_err(|source| ManifestError::Io { path: shown.clone(), source })?;
        let m: Manifest =
            serde_json::from_slice(&text).map_err(|source| ManifestError::Json { path: shown.clone(), source })?;
        if m.format != FORMAT || m.version != VERSION {
            return Err(ManifestError::Version { path: shown, format: m.format, version: m.version });
        }
        // A shard outside the run directory is no part of it (and a damaged or hostile
        // manifest could name any file of the machine).
        let inside = |shard: &str| {
            let parts = Path::new(shard).components();
            !shard.is_empty() && parts.into_iter().all(|c| matches!(c, std::path::Component::Normal(_)))
        };
        if let Some(c) = m.cores.iter().find(|c| !inside(&c.shard)) {
            return Err(ManifestError::ShardPath { path: shown, shard: c.shard.clone() });
        }
        Ok(m)
    }

    /// Writes atomically (temp file + rename) so a reader never sees half a manifest.
    pub fn store(&self, run_dir: &Path) -> std::io::Result<()> {
        let tmp = run_dir.join(format!("{FILE_NAME}.tmp"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        serde_json::to_writer_pretty(&mut f, self)?;
        f.write_all(b"\n")?;
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(tmp, run_dir.join(FILE_NAME))
    }

    pub fn total<F: Fn(&CoreRecord) -> u64>(&self, f: F) -> u64 {
        self.cores.iter().map(f).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::{block_crc, BlockCrc};

    /// CRC-32C bit by bit (reflected polynomial 0x82F63B78), the definition the fast one
    /// must agree with.
    fn crc32c_bitwise(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0x82F6_3B78 } else { crc >> 1 };
            }
        }
        !crc
    }

    #[test]
    fn block_crc_is_crc32c() {
        assert_eq!(block_crc(b"123456789"), 0xE306_9283, "the catalogue's check value");
        assert_eq!(block_crc(b""), 0);
        // Every length around the vector widths, from unaligned starts, and one large block.
        let data: Vec<u8> = (0..(1u32 << 20) + 77).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for start in 0..8 {
            for len in (0..600).chain([4095, 4096, 4097, 65_536]) {
                let block = &data[start..start + len];
                assert_eq!(block_crc(block), crc32c_bitwise(block), "start {start}, length {len}");
            }
        }
        assert_eq!(block_crc(&data), crc32c_bitwise(&data));
    }

    #[test]
    fn block_crc_in_pieces_is_the_crc_of_the_whole() {
        let data: Vec<u8> = (0..70_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
        assert_eq!(BlockCrc::new().value(), 0);
        // Cuts of every small size (the tails a burst leaves) and some large ones.
        for step in (1..200).chain([4095, 4096, 6016, 65_536]) {
            let mut crc = BlockCrc::new();
            data.chunks(step).for_each(|piece| crc.update(piece));
            assert_eq!(crc.value(), block_crc(&data), "pieces of {step} bytes");
        }
        let mut crc = BlockCrc::new();
        crc.update(&data[..10]);
        crc.update(&[]);
        crc.update(&data[10..]);
        assert_eq!(crc.value(), crc32c_bitwise(&data));
    }
}
