//! `rocescope verify`: is a run directory exactly what its manifest says was written?
//! Checks, per shard: the blocks tile the file and each CRC-32C matches; every pcapng
//! block parses; the packets, their classes and mirror events match the manifest's
//! counters. Per run: each core's packets are all accounted for (docs/formats.md §2.3).

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use trace::annotation::Annotation;
use trace::manifest::{CoreRecord, Manifest, RunStatus};
use trace::reader::{verify_blocks, BlockFault, ShardReader};

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
    pub packets: u64,
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
    let mut f = ShardFindings { shard: core.shard.clone(), blocks: core.blocks.len(), packets: 0, problems: Vec::new() };
    let bytes = match std::fs::read(run.join(&core.shard)) {
        Ok(b) => b,
        Err(e) => {
            f.problems.push(format!("cannot read: {e}"));
            return f;
        }
    };
    f.problems.extend(verify_blocks(&bytes, &core.blocks).iter().map(describe_fault));
    let mut classes: BTreeMap<String, u64> = BTreeMap::new();
    let mut events: BTreeMap<String, u64> = BTreeMap::new();
    for packet in ShardReader::new(&bytes) {
        match packet {
            Ok(p) => {
                f.packets += 1;
                count_annotation(p.annotation(), &mut classes, &mut events);
            }
            Err(e) => f.problems.push(format!("unreadable from here on: {e}")),
        }
    }
    if f.packets != core.written {
        f.problems.push(format!("holds {} packets, the manifest says {} were written", f.packets, core.written));
    }
    // Classes and events count every packet the core admitted, including any it then had
    // to drop for lack of buffer space, so they can only be compared on lossless cores.
    if core.buffer_drops == 0 && core.write_failed == 0 {
        compare_counts("class", &classes, &core.classes, &mut f.problems);
        compare_counts("event", &events, &core.events, &mut f.problems);
    }
    f
}

fn count_annotation(a: Option<Annotation>, classes: &mut BTreeMap<String, u64>, events: &mut BTreeMap<String, u64>) {
    let class = match a {
        Some(Annotation::Mirrored { event, .. }) => {
            *events.entry(event.name().into()).or_default() += 1;
            "mirrored_roce"
        }
        Some(Annotation::Class(c)) => c.name(),
        Some(Annotation::Malformed(_)) => "malformed",
        None => "unannotated",
    };
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

/// The identities of docs/formats.md §2.3.
fn accounting_problems(m: &Manifest) -> Vec<String> {
    let mut out = Vec::new();
    for c in &m.cores {
        let outcome = c.written + c.buffer_drops + c.write_failed + c.over_limit;
        if c.rx != outcome {
            out.push(format!(
                "core {}: rx {} but written {} + buffer drops {} + write failures {} + over limit {} = {outcome}",
                c.core, c.rx, c.written, c.buffer_drops, c.write_failed, c.over_limit
            ));
        }
        if let Some(e) = &c.write_error {
            out.push(format!("core {}: write error: {e}", c.core));
        }
    }
    let cores_rx: u64 = m.cores.iter().map(|c| c.rx).sum();
    match &m.dispatcher {
        Some(d) => {
            let dealt = d.over_limit + d.ring_drops.iter().sum::<u64>() + cores_rx;
            if d.rx != dealt {
                out.push(format!("dispatcher received {} but accounted for {dealt}", d.rx));
            }
        }
        None if m.status == RunStatus::Complete && m.port.ipackets != cores_rx => {
            out.push(format!("port delivered {} packets, cores received {cores_rx}", m.port.ipackets));
        }
        None => {}
    }
    out
}

fn describe_fault(f: &BlockFault) -> String {
    match *f {
        BlockFault::Missing { index, offset, len, file_len } => {
            format!("block {index} (bytes {offset}..{}) lies beyond the end of the file ({file_len} bytes)", offset + len)
        }
        BlockFault::Crc { index, offset, len, expected, actual } => format!(
            "block {index} (bytes {offset}..{}) is damaged: CRC-32C {actual:#010x}, manifest {expected:#010x}",
            offset + len
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
            writeln!(f, "  {}: {} packets in {} blocks: {state}", s.shard, s.packets, s.blocks)?;
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
