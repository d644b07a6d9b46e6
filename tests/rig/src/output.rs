//! The run directory: what a Lumina run leaves behind (Lumina Table 1, with the file names
//! and shapes of Lumina's code) plus the ground truth. Documented in docs/formats.md
//! ("Testbed emulator run directory").

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::config::RigConfig;
use crate::conn::Conn;
use crate::packet::Side;
use crate::rig::{dump_file_name, QpLog, RunResult, RunStats};
use crate::rng::Rng;
use crate::rnic::counters::lumina_section;
use crate::switch::{injector::data_flow, PortCounters, SeqSpan};
use crate::truth::Truth;

pub const TRUTH_FILE: &str = "ground-truth.json";
pub const SWITCH_STATE_FILE: &str = "switch_state_snapshot.yml";
pub const QP_INFO_FILE: &str = "switch_message_snapshot.yml";
pub const NIC_COUNTERS_FILE: &str = "nic-counters.json";
pub const GENERATOR_JSON_FILE: &str = "traffic-gen.json";

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("writing {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("encoding {path}: {reason}")]
    Encode { path: String, reason: String },
}

fn write(dir: &Path, name: &str, text: &str) -> Result<(), OutputError> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|source| OutputError::Io { path: path.display().to_string(), source })
}

fn encode<E: std::fmt::Display>(name: &str) -> impl FnOnce(E) -> OutputError + '_ {
    move |e| OutputError::Encode { path: name.to_string(), reason: e.to_string() }
}

/// Writes every file of the run except the pcaps (the rig writes those as it runs).
pub fn write_run(dir: &Path, cfg: &RigConfig, run: &RunResult) -> Result<(), OutputError> {
    let truth = TruthFile::new(cfg, run);
    write(dir, TRUTH_FILE, &serde_json::to_string_pretty(&truth).map_err(encode(TRUTH_FILE))?)?;
    write(dir, SWITCH_STATE_FILE, &switch_state(cfg, run).map_err(encode(SWITCH_STATE_FILE))?)?;
    write(dir, QP_INFO_FILE, &qp_info(cfg, &run.conns).map_err(encode(QP_INFO_FILE))?)?;
    let counters = nic_counters(cfg, run);
    write(dir, NIC_COUNTERS_FILE, &serde_json::to_string_pretty(&counters).map_err(encode(NIC_COUNTERS_FILE))?)?;
    let mut baseline = Rng::new(cfg.rig.seed ^ 0xc0c0_0000_0003);
    for (side, c) in [(Side::Requester, &counters.requester), (Side::Responder, &counters.responder)] {
        // Counters are cumulative on a real NIC: Lumina dumps them before and after and
        // subtracts. The start values are arbitrary (seeded).
        let start: BTreeMap<String, u64> =
            c.counters.keys().map(|k| (k.clone(), baseline.between(0, 1 << 20))).collect();
        let finish: BTreeMap<String, u64> = c.counters.iter().map(|(k, v)| (k.clone(), start[k] + v)).collect();
        write(dir, &format!("{}_counter_start.yml", side.name()), &counter_dump(&start))?;
        write(dir, &format!("{}_counter_finish.yml", side.name()), &counter_dump(&finish))?;
    }
    let verb = cfg.traffic.rdma_verb.name();
    write(dir, &format!("ib_{verb}_client_run.log"), &generator_log(cfg, run))?;
    let gen = GeneratorFile { verb, qps: &run.qps };
    write(dir, GENERATOR_JSON_FILE, &serde_json::to_string_pretty(&gen).map_err(encode(GENERATOR_JSON_FILE))?)?;
    Ok(())
}

#[derive(Serialize)]
struct GeneratorFile<'a> {
    verb: &'a str,
    qps: &'a [QpLog],
}

/// `ground-truth.json`.
#[derive(Serialize)]
pub struct TruthFile<'a> {
    pub schema: &'static str,
    pub version: u32,
    pub seed: u64,
    pub verb: &'static str,
    pub mirror_port: u16,
    pub snaplen: u32,
    pub connections: Vec<ConnInfo>,
    pub dump_hosts: Vec<DumpHostInfo>,
    pub stats: &'a RunStats,
    #[serde(flatten)]
    pub truth: &'a Truth,
}

#[derive(Serialize)]
pub struct ConnInfo {
    /// Relative QPN (from 1), as in `data-pkt-events`.
    pub qpn: u32,
    pub requester: crate::conn::Endpoint,
    pub responder: crate::conn::Endpoint,
    /// Who sends the data packets (responder for READ).
    pub data_sender: Side,
}

#[derive(Serialize)]
pub struct DumpHostInfo {
    pub name: String,
    pub file: String,
    pub weight: u32,
    pub switch_port: u16,
    pub frames: u64,
    pub bytes: u64,
}

impl<'a> TruthFile<'a> {
    pub fn new(cfg: &RigConfig, run: &'a RunResult) -> TruthFile<'a> {
        let verb = cfg.traffic.rdma_verb;
        TruthFile {
            schema: "rocescope-rig-truth",
            version: 1,
            seed: cfg.rig.seed,
            verb: verb.name(),
            mirror_port: cfg.mirror_port(),
            snaplen: cfg.rig.snaplen,
            connections: run
                .conns
                .iter()
                .enumerate()
                .map(|(i, c)| ConnInfo {
                    qpn: i as u32 + 1,
                    requester: c.requester,
                    responder: c.responder,
                    data_sender: if verb.data_from_responder() { Side::Responder } else { Side::Requester },
                })
                .collect(),
            dump_hosts: cfg
                .rig
                .dump_hosts
                .iter()
                .enumerate()
                .map(|(i, d)| DumpHostInfo {
                    name: d.name.clone().unwrap_or_else(|| format!("dump{i}")),
                    file: dump_file_name(i),
                    weight: d.weight,
                    switch_port: run.switch.mirrors[i].switch_port,
                    frames: run.dumped[i].0,
                    bytes: run.dumped[i].1,
                })
                .collect(),
            stats: &run.stats,
            truth: &run.truth,
        }
    }
}

/// Lumina's `switch_state_snapshot.yml`: per-port ingress and egress packet counters (as
/// Lumina's), the event table in the form of the paper's Figure 2 (Lumina's code dumps raw
/// Tofino table entries instead), and under `rocescope` the per-port detail Lumina's
/// registers lack.
fn switch_state(cfg: &RigConfig, run: &RunResult) -> Result<String, serde_yaml_ng::Error> {
    let s = &run.switch;
    let ports: Vec<&PortCounters> = [&s.requester, &s.responder].into_iter().chain(&s.mirrors).collect();
    let ingress: BTreeMap<u16, u64> = ports.iter().map(|p| (p.switch_port, p.ingress)).collect();
    let egress: BTreeMap<u16, u64> = ports.iter().map(|p| (p.switch_port, p.egress)).collect();
    let event_table: Vec<EventEntry> = cfg
        .traffic
        .data_pkt_events
        .iter()
        .map(|e| {
            let c = &run.conns[(e.qpn - 1) as usize];
            let flow = data_flow(c, cfg.traffic.rdma_verb);
            EventEntry {
                key: EventKey {
                    src_ip: flow.src_ip.to_string(),
                    dst_ip: flow.dst_ip.to_string(),
                    dst_qpn: flow.dst_qpn,
                    psn: c.wire_psn(u64::from(e.psn) - 1),
                    iter: e.iter,
                },
                data: EventData { action: e.kind.name() },
            }
        })
        .collect();
    #[derive(Serialize)]
    struct Counter {
        egress: BTreeMap<u16, u64>,
        ingress: BTreeMap<u16, u64>,
    }
    #[derive(Serialize)]
    #[serde(rename_all = "kebab-case")]
    struct State<'a> {
        counter: Counter,
        event_table: Vec<EventEntry>,
        rocescope: Detail<'a>,
    }
    #[derive(Serialize)]
    struct Detail<'a> {
        requester: &'a PortCounters,
        responder: &'a PortCounters,
        mirrors: &'a [PortCounters],
        mirror_seq: Option<SeqSpan>,
    }
    serde_yaml_ng::to_string(&State {
        counter: Counter { egress, ingress },
        event_table,
        rocescope: Detail {
            requester: &s.requester,
            responder: &s.responder,
            mirrors: &s.mirrors,
            mirror_seq: s.mirror_seq,
        },
    })
}

#[derive(Serialize)]
struct EventEntry {
    key: EventKey,
    data: EventData,
}
#[derive(Serialize)]
struct EventKey {
    src_ip: String,
    dst_ip: String,
    dst_qpn: u32,
    psn: u32,
    iter: u32,
}
#[derive(Serialize)]
struct EventData {
    action: &'static str,
}

/// Lumina's `switch_message_snapshot.yml`: the runtime metadata of every QP, "snd" being
/// the data sender (for READ, the responder with the requester's PSN).
fn qp_info(cfg: &RigConfig, conns: &[Conn]) -> Result<String, serde_yaml_ng::Error> {
    #[derive(Serialize)]
    struct QpInfo {
        ip_rcv: String,
        ip_snd: String,
        psn_rcv: u32,
        psn_snd: u32,
        qpn_rcv: u32,
        qpn_snd: u32,
        rcv_sw_port: u16,
        snd_sw_port: u16,
    }
    let read = cfg.traffic.rdma_verb.data_from_responder();
    let (snd_port, rcv_port) = if read {
        (cfg.responder.nic.switch_port, cfg.requester.nic.switch_port)
    } else {
        (cfg.requester.nic.switch_port, cfg.responder.nic.switch_port)
    };
    let list: Vec<QpInfo> = conns
        .iter()
        .map(|c| {
            let (snd, rcv) = if read { (c.responder, c.requester) } else { (c.requester, c.responder) };
            QpInfo {
                ip_rcv: rcv.ip.to_string(),
                ip_snd: snd.ip.to_string(),
                // Lumina's controller: psn_snd is the requester's PSN, psn_rcv the
                // responder's, whichever way the data flows.
                psn_rcv: c.responder.ipsn,
                psn_snd: c.requester.ipsn,
                qpn_rcv: rcv.qpn,
                qpn_snd: snd.qpn,
                rcv_sw_port: rcv_port,
                snd_sw_port: snd_port,
            }
        })
        .collect();
    serde_yaml_ng::to_string(&list)
}

#[derive(Serialize)]
pub struct NicCounters {
    pub requester: HostCounters,
    pub responder: HostCounters,
}

#[derive(Serialize)]
pub struct HostCounters {
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Counter deltas over the run, by the vendor's names (after any counter lies).
    pub counters: BTreeMap<String, u64>,
}

pub fn nic_counters(cfg: &RigConfig, run: &RunResult) -> NicCounters {
    let f = &cfg.rig.faults;
    let host = |side: Side| {
        let kind = match side {
            Side::Requester => cfg.requester.nic.kind,
            Side::Responder => cfg.responder.nic.kind,
        };
        let mut counters = run.nics[side.idx()].named(kind, f.paper_counter_bugs);
        for lie in f.counter_lies.iter().filter(|l| l.host == side.name()) {
            let v = counters.entry(lie.counter.clone()).or_insert(0);
            *v = v.saturating_add_signed(lie.add);
        }
        HostCounters { kind: kind.name(), counters }
    };
    NicCounters { requester: host(Side::Requester), responder: host(Side::Responder) }
}

/// Lumina's counter dump (`counter_dump.py`): sections of `name: value` lines. A section
/// with no counters is left out (an empty one would read as null, which Lumina's reader
/// cannot iterate; its own Intel dumps have no `port-counters`).
fn counter_dump(values: &BTreeMap<String, u64>) -> String {
    let mut out = String::new();
    for section in ["port-counters", "hw-counters", "ethtool-counters"] {
        let mut lines = values.iter().filter(|(k, _)| lumina_section(k) == section).peekable();
        if lines.peek().is_some() {
            let _ = writeln!(out, "{section}:");
            for (k, v) in lines {
                let _ = writeln!(out, "  {k}: {v}");
            }
        }
    }
    out
}

/// The requester's stdout as Lumina's traffic generator prints it (`common.c`).
fn generator_log(cfg: &RigConfig, run: &RunResult) -> String {
    let mut out = String::new();
    let qps = &run.qps;
    let bytes: u64 = qps.iter().map(|q| q.bytes).sum();
    // The generator times the run at the requester: from its first posts (at the start)
    // to its last completion (an error completion too), which the switch sees earlier by
    // the queueing toward it.
    let errors = run.truth.qp_errors.iter().map(|e| e.at_ns);
    let duration_ns = qps.iter().filter_map(|q| q.last_completion_ns).chain(errors).max().unwrap_or(0);
    let gbps = if duration_ns > 0 { bytes as f64 * 8.0 / duration_ns as f64 } else { 0.0 };
    if cfg.traffic.barrier_sync {
        let _ = writeln!(out, "Duration: {} us", duration_ns / 1_000);
        let _ = writeln!(out, "Throughput: {gbps:.2} Gbps");
        let _ = writeln!(out, "Message completion times (us)");
        for q in qps {
            let avg = if q.mct_us.is_empty() { 0.0 } else { q.mct_us.iter().sum::<f64>() / q.mct_us.len() as f64 };
            let all: Vec<String> = q.mct_us.iter().map(|t| format!("{t:.2}")).collect();
            let _ = writeln!(out, "QP {:2}: average {avg:.2} ({})", q.conn, all.join(" "));
        }
    } else {
        let _ = writeln!(out, "Throughput: {gbps:.2} Gbps");
        for q in qps {
            let _ = write!(out, "QP {}: post {} requests, complete {} requests", q.conn, q.posted, q.completed);
            if cfg.traffic.tx_depth == 1 && !q.mct_us.is_empty() {
                let _ = write!(out, ", {:.2} usec/iter", q.mct_us.iter().sum::<f64>() / q.mct_us.len() as f64);
            }
            let _ = writeln!(out);
        }
    }
    for q in qps.iter().filter(|q| q.failed) {
        let _ = writeln!(out, "QP {}: failed: retry count exceeded", q.conn);
    }
    out
}
