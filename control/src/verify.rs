//! `rocescope verify`: is a run directory exactly what its manifest says was written?
//! Checks, per shard: the blocks tile the file and each CRC-32C matches; every pcapng
//! block parses; the packets, their classes and mirror events match the manifest's
//! counters; each packet's id agrees with its annotation. Per run: each core's packets are
//! all accounted for (docs/formats.md §2.3). Shards are memory-mapped, never read whole.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use trace::annotation::Annotation;
use trace::manifest::BlockRecord;
use trace::manifest::{CoreRecord, Manifest, RunStatus};
use trace::mapped::MappedFile;
use trace::reader::{skips, verify_blocks, BlockFault, IntactPackets, ShardPacket};

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Manifest(#[from] trace::manifest::ManifestError),
}

/// What was found; [`VerifyReport::intact`] is the verdict.
#[derive(Debug, Serialize)]
pub struct VerifyReport {
    pub run: PathBuf,
    pub status: RunStatus,
    pub shards: Vec<ShardFindings>,
    /// Run-level problems (status, accounting identities).
    pub problems: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ShardFindings {
    pub shard: String,
    pub blocks: usize,
    /// Packets read from the blocks whose CRC-32C matches (and a block cut only in its
    /// trailing padding).
    pub packets: u64,
    /// Packets the manifest lists in blocks that were not read: their CRC-32C fails or
    /// the file cuts them.
    pub unread_packets: u64,
    /// Everything wrong with this shard, each with its location.
    pub problems: Vec<String>,
}

impl VerifyReport {
    pub fn intact(&self) -> bool {
        self.problems.is_empty() && self.shards.iter().all(|s| s.problems.is_empty())
    }
}

pub fn verify_run(run: &Path) -> Result<VerifyReport, VerifyError> {
    let manifest = Manifest::load(run)?;
    let mut problems = Vec::new();
    if manifest.status != RunStatus::Complete {
        problems.push("status is `running`: the capture did not finish (crash or still running)".into());
    }
    problems.extend(accounting_problems(&manifest));
    let shards = manifest.cores.iter().map(|core| verify_shard(run, core)).collect();
    Ok(VerifyReport { run: run.to_path_buf(), status: manifest.status, shards, problems })
}

fn verify_shard(run: &Path, core: &CoreRecord) -> ShardFindings {
    let mut f = ShardFindings {
        shard: core.shard.clone(),
        blocks: core.blocks.len(),
        packets: 0,
        unread_packets: 0,
        problems: Vec::new(),
    };
    let mapped = match MappedFile::open(&run.join(&core.shard)) {
        Ok(m) => m,
        Err(e) => {
            f.problems.push(format!("cannot read: {e}"));
            return f;
        }
    };
    let bytes = mapped.bytes();
    let faults = verify_blocks(bytes, &core.blocks);
    f.problems.extend(faults.iter().map(|fault| describe_fault(fault, &core.blocks)));
    f.problems.extend(manifest_shard_problems(core, bytes.len() as u64));
    // The packets of the blocks whose CRC vouches for them, as `reconstruct` reads them:
    // a damaged block's bytes cannot be trusted to say how many packets it held, or what
    // they were.
    f.unread_packets = faults.iter().map(|fault| fault.unread_packets(&core.blocks)).sum();
    let skips = skips(&faults);
    let mut classes: BTreeMap<String, u64> = BTreeMap::new();
    let mut events: BTreeMap<String, u64> = BTreeMap::new();
    for packet in IntactPackets::new(bytes, &skips) {
        match packet {
            Ok(p) => {
                f.packets += 1;
                let annotation = p.annotation();
                if let Some(problem) = packet_id_problem(&p, annotation) {
                    f.problems.push(problem);
                }
                count_annotation(annotation, &mut classes, &mut events);
            }
            Err(e) => f.problems.push(format!("unreadable from here on: {e}")),
        }
    }
    let readable = core.written.saturating_sub(f.unread_packets);
    if f.packets != readable {
        let intact = if f.unread_packets > 0 { " to its intact blocks" } else { "" };
        f.problems.push(format!("holds {} packets, the manifest says {readable} were written{intact}", f.packets));
    }
    // Classes and events count every packet the core admitted, including any it then had
    // to drop for lack of buffer space, so they can only be compared on lossless cores,
    // and only with every block read.
    if core.buffer_drops == 0 && core.write_failed == 0 && f.unread_packets == 0 {
        compare_counts("class", &classes, &core.classes, &mut f.problems);
        compare_counts("event", &events, &core.events, &mut f.problems);
    }
    f
}

/// What the manifest says about a shard, checked against itself and the file's size.
fn manifest_shard_problems(core: &CoreRecord, file_len: u64) -> Vec<String> {
    let mut out = Vec::new();
    if core.shard_bytes != file_len {
        out.push(format!("is {file_len} bytes, the manifest says {}", core.shard_bytes));
    }
    let in_blocks: u128 = core.blocks.iter().map(|b| b.packets as u128).sum();
    if in_blocks != core.written as u128 {
        out.push(format!("its blocks hold {in_blocks} packets, the manifest says {} were written", core.written));
    }
    out
}

/// A mirrored copy's packet id is its mirror seq; anything else has id 0.
fn packet_id_problem(p: &ShardPacket<'_>, annotation: Option<Annotation>) -> Option<String> {
    let expected = match annotation {
        Some(Annotation::Mirrored { seq, .. }) => seq as u64,
        _ => 0,
    };
    (p.packet_id != Some(expected)).then(|| {
        let id = p.packet_id.map_or_else(|| "absent (no epb_packetid option)".to_string(), |id| id.to_string());
        format!("packet at offset {}: packet id {id} but its annotation says {expected}", p.offset)
    })
}

fn count_annotation(a: Option<Annotation>, classes: &mut BTreeMap<String, u64>, events: &mut BTreeMap<String, u64>) {
    if let Some(Annotation::Mirrored { event, .. }) = a {
        *events.entry(event.name().into()).or_default() += 1;
    }
    let class = a.as_ref().map_or("unannotated", Annotation::class_name);
    *classes.entry(class.into()).or_default() += 1;
}

fn compare_counts(what: &str, found: &BTreeMap<String, u64>, manifest: &BTreeMap<String, u64>, out: &mut Vec<String>) {
    let keys: std::collections::BTreeSet<&String> = found.keys().chain(manifest.keys()).collect();
    for k in keys {
        let (a, b) = (found.get(k).copied().unwrap_or(0), manifest.get(k).copied().unwrap_or(0));
        if a != b {
            out.push(format!("{what} {k}: {a} packets in the shard, {b} in the manifest"));
        }
    }
}

/// The identities of docs/formats.md §2.3. Sums are u128: a hostile manifest must give a
/// finding, not an overflow.
fn accounting_problems(m: &Manifest) -> Vec<String> {
    let mut out = Vec::new();
    for c in &m.cores {
        let outcome = c.written as u128 + c.buffer_drops as u128 + c.write_failed as u128 + c.over_limit as u128;
        if c.rx as u128 != outcome {
            out.push(format!(
                "core {}: rx {} but written {} + buffer drops {} + write failures {} + over limit {} = {outcome}",
                c.core, c.rx, c.written, c.buffer_drops, c.write_failed, c.over_limit
            ));
        }
        let classified: u128 = c.classes.values().map(|&n| n as u128).sum();
        if m.status == RunStatus::Complete && classified != (c.rx as u128).saturating_sub(c.over_limit as u128) {
            out.push(format!(
                "core {}: {classified} packets classified, but rx {} - over limit {}",
                c.core, c.rx, c.over_limit
            ));
        }
        if let Some(e) = &c.write_error {
            out.push(format!("core {}: write error: {e}", c.core));
        }
    }
    let cores_rx: u128 = m.cores.iter().map(|c| c.rx as u128).sum();
    match &m.dispatcher {
        Some(d) => {
            let dealt = d.over_limit as u128 + d.ring_drops.iter().map(|&n| n as u128).sum::<u128>() + cores_rx;
            if d.rx as u128 != dealt {
                out.push(format!("dispatcher received {} but accounted for {dealt}", d.rx));
            }
        }
        // A NIC may count packets that arrived after the workers stopped polling, so the
        // port can be ahead of the cores, never behind.
        None if m.status == RunStatus::Complete && (m.port.ipackets as u128) < cores_rx => {
            out.push(format!(
                "port delivered {} packets, fewer than the {cores_rx} the cores received",
                m.port.ipackets
            ));
        }
        None => {}
    }
    out
}

fn describe_fault(f: &BlockFault, blocks: &[BlockRecord]) -> String {
    let unread = f.unread_packets(blocks);
    match *f {
        BlockFault::Missing { index, offset, len, file_len } => format!(
            "block {index} (bytes {offset}..{}) lies beyond the end of the file ({file_len} bytes): \
             its {unread} packets are not read",
            offset.saturating_add(len)
        ),
        BlockFault::Crc { index, offset, len, expected, actual } => format!(
            "block {index} (bytes {offset}..{}) is damaged: CRC-32C {actual:#010x}, manifest {expected:#010x}; \
             its {unread} packets are not read",
            offset.saturating_add(len)
        ),
        BlockFault::PaddingCut { index, offset, len, file_len, padding } => format!(
            "block {index} (bytes {offset}..{}) is cut by the end of the file ({file_len} bytes) in its trailing \
             padding (from {padding}): truncated; with the padding restored its CRC-32C matches, so its packets are intact",
            offset.saturating_add(len)
        ),
        BlockFault::Gap { index, expected_offset, offset } => {
            format!("block {index} starts at {offset}, the previous one ended at {expected_offset}")
        }
        BlockFault::Unaccounted { offset, len } => {
            format!("{len} bytes from offset {offset} are in no block (appended after the capture?)")
        }
    }
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.intact() { "intact" } else { "NOT intact" };
        writeln!(f, "{}: {verdict}", self.run.display())?;
        for s in &self.shards {
            let state = if s.problems.is_empty() { "ok" } else { "FAILED" };
            let unread = match s.unread_packets {
                0 => String::new(),
                n => format!(" (and {n} in damaged blocks, not read)"),
            };
            writeln!(f, "  {}: {} packets{unread} in {} blocks: {state}", s.shard, s.packets, s.blocks)?;
            for p in &s.problems {
                writeln!(f, "    - {p}")?;
            }
        }
        for p in &self.problems {
            writeln!(f, "  - {p}")?;
        }
        Ok(())
    }
}
