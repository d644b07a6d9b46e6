//! Ground truth: what really happened in a run, for checking analyzers against.
//!
//! Packets are named by their mirror sequence number (`seq`) and switch timestamp
//! (`switch_ts_ns`), which is how an analyzer reading the dumped trace names them too.
//! `model_*` fields are what the RNIC model drew; `observed_*` fields are the same delays
//! as seen in switch timestamps (what Lumina's analyzers measure, §4 Figure 5: they
//! include link and switch delays).

use serde::Serialize;

use crate::config::EventKind;
use crate::faults::GbnViolation;
use crate::packet::Side;

#[derive(Debug, Clone, Default, Serialize)]
pub struct Truth {
    /// Injected events that matched a packet.
    pub events: Vec<InjectedEvent>,
    /// Configured events that never matched (the connection never reached that PSN/ITER).
    pub unmatched_events: Vec<crate::config::DataPktEvent>,
    pub naks: Vec<Nak>,
    pub timeouts: Vec<Timeout>,
    pub retransmissions: Vec<Retransmission>,
    /// One per loss recovery: the latency breakdown of Lumina §4 Figure 5.
    pub recoveries: Vec<Recovery>,
    pub cnps: Vec<Cnp>,
    /// ECN marks (or NAKs with slow-restart) that did not produce a CNP because of the
    /// rate limiter.
    pub suppressed_cnps: Vec<SuppressedCnp>,
    pub qp_errors: Vec<QpError>,
    pub faults: FaultTruth,
}

#[derive(Debug, Clone, Serialize)]
pub struct InjectedEvent {
    /// Connection index (0-based; relative QPN − 1).
    pub conn: u32,
    pub qpn: u32,
    pub psn: u32,
    pub iter: u32,
    #[serde(rename = "type")]
    pub kind: EventKind,
    pub dst_qpn: u32,
    pub wire_psn: u32,
    pub seq: u32,
    pub switch_ts_ns: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NakKind {
    /// A NAK (PSN sequence error) from the WRITE/SEND responder.
    SeqErr,
    /// A READ request repeated from the missing PSN, the READ equivalent of a NAK (§6.1).
    ReadReissue,
}

#[derive(Debug, Clone, Serialize)]
pub struct Nak {
    pub conn: u32,
    pub kind: NakKind,
    pub from: Side,
    /// Relative PSN (from 1) the receiver expected.
    pub expected_psn: u64,
    /// The PSN the NAK names (differs from the expected one only under a GBN-violation
    /// fault).
    pub wire_psn: u32,
    /// The out-of-sequence packet that caused it.
    pub cause_seq: u32,
    pub cause_switch_ts_ns: u64,
    pub model_generation_ns: u64,
    /// The requester's NACK reaction (or, for READ, the responder's reaction to the
    /// repeated request), once drawn.
    pub model_reaction_ns: Option<u64>,
    /// The NAK packet (for READ: the repeated READ request).
    pub seq: u32,
    pub switch_ts_ns: u64,
    pub violation: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Timeout {
    pub conn: u32,
    /// 1 for the first timeout since the last progress.
    pub attempt: u32,
    pub model_timeout_ns: u64,
    /// Relative PSN (from 1) of the oldest unacknowledged packet.
    pub oldest_unacked_psn: u64,
    /// Simulated time the timer was last (re)started — at a send with nothing
    /// outstanding, or at the last progress (IBA) — and when it fired, ns since the start
    /// of the run: `fired_at_ns − started_at_ns = model_timeout_ns`.
    pub started_at_ns: u64,
    pub fired_at_ns: u64,
    /// Switch timestamp of the last packet the QP sent before it fired (none if it never
    /// sent, which a timer cannot see: it is armed by a send).
    pub last_tx_switch_ts_ns: Option<u64>,
    /// False for the expiry that exhausted the retry count (the QP went to error).
    pub retried: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "index")]
pub enum Trigger {
    /// Index into `naks`.
    Nak(u32),
    /// Index into `timeouts`.
    Timeout(u32),
}

#[derive(Debug, Clone, Serialize)]
pub struct Retransmission {
    pub conn: u32,
    pub from: Side,
    pub psn: u64,
    pub wire_psn: u32,
    pub opcode: u8,
    pub trigger: Trigger,
    pub seq: u32,
    pub switch_ts_ns: u64,
    /// The switch time of the previous packet its end sent on the connection (a CNP
    /// too): an observed timeout counts from it, as the trace shows it.
    #[serde(skip)]
    pub previous_tx_switch_ts_ns: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryKind {
    Nack,
    ReadNack,
    Timeout,
}

/// One loss recovery with its latency breakdown (Lumina §4 Figure 5).
#[derive(Debug, Clone, Serialize)]
pub struct Recovery {
    pub conn: u32,
    pub kind: RecoveryKind,
    pub trigger: Trigger,
    /// Relative PSN the recovery resumes from.
    pub psn: u64,
    /// The first retransmitted packet: data for NACK recoveries (for READ, the first
    /// repeated response), and for timeouts the requester's first resend (for READ, the
    /// repeated READ request).
    pub first_retransmission_seq: u32,
    pub model_generation_ns: Option<u64>,
    pub model_reaction_ns: Option<u64>,
    pub model_timeout_ns: Option<u64>,
    /// Out-of-sequence packet → NAK (or repeated READ request), switch time.
    pub observed_generation_ns: Option<u64>,
    /// NAK (or repeated READ request) → first retransmitted data packet, switch time.
    pub observed_reaction_ns: Option<u64>,
    /// Last packet before the timeout → first retransmitted packet, switch time.
    pub observed_timeout_ns: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CnpCause {
    Ecn,
    /// Out-of-sequence with slow-restart on (Lumina §4 "Congestion notification").
    Nak,
}

#[derive(Debug, Clone, Serialize)]
pub struct Cnp {
    pub conn: u32,
    pub from: Side,
    pub cause: CnpCause,
    pub cause_seq: u32,
    /// When the NP decided to send it (simulated ns since the start): the rate limiter's
    /// clock.
    pub decided_at_ns: u64,
    pub seq: u32,
    pub switch_ts_ns: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SuppressedCnp {
    pub conn: u32,
    pub from: Side,
    pub cause: CnpCause,
    pub cause_seq: u32,
    /// The CNP of the same limiter that was too recent (index into `cnps`).
    pub limited_by: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct QpError {
    pub conn: u32,
    pub reason: String,
    pub at_ns: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FaultTruth {
    /// Mirror seqs that never reached their dump host (lose-mirror-copies).
    pub lost_mirror_copies: Vec<u32>,
    /// Seqs of copies the switch dropped because a mirror port's buffer was full (the seq
    /// is taken at ingress, as in Lumina's P4, so these are gaps in the trace).
    pub mirror_buffer_drops: Vec<u32>,
    /// Pairs of seqs swapped inside a dump host's file.
    pub reordered: Vec<(u32, u32)>,
    pub gbn_violations: Vec<FiredViolation>,
    pub counter_lies: Vec<crate::faults::CounterLie>,
    pub paper_counter_bugs: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct FiredViolation {
    pub violation: GbnViolation,
    pub conn: u32,
    /// The packet that breaks the rule (the wrong NAK, the early data packet, the READ
    /// response whose gap got no repeated request, or the second repeated request).
    pub seq: u32,
}
