//! Go-back-N retransmission logic (Lumina §4 "Retransmission logic"; Lumina's
//! `gbn_check.py` / `read_gbn_check.py`): the specification as a state machine per
//! connection, driven by the reconstructed trace in switch order.
//!
//! The trace is what the switch saw, not what either end saw: a packet reaches its receiver
//! after its copy, and a reply (a NAK, a repeated READ request) reaches the switch some
//! time after the packet that caused it, possibly after later packets of the other
//! direction. So the checker flags only what the trace proves:
//!
//! - **Data sender** (WRITE/SEND requester): a first transmission comes in PSN order — a
//!   PSN beyond the highest sent + 1 is `ooo-data`; a go-back (a PSN not after the previous
//!   one) is a retransmission, which is always legal: it answers the pending NAK if it
//!   names its PSN, else it is a timeout; skipping ahead while going back is legal only
//!   over what was acknowledged. READ responder: each response continues the request it
//!   answers or starts a request it received (a repeated request's re-response).
//! - **Data receiver** (WRITE/SEND responder, READ requester), fed only the copies that
//!   were delivered (not dropped or corrupted by an event): the first out-of-sequence
//!   arrival opens a loss *episode* whose first missing PSN is the receiver's expected PSN;
//!   the episode closes when that PSN arrives. Each episode gets exactly one NAK naming
//!   that PSN — sent, even if an event then dropped it. The NAK may reach the switch after
//!   the gap closed (when the sender filled it on its own) and NAKs of nearby losses may
//!   pass each other, so episodes wait for their NAK until the end of the trace.
//! - **READ requester**: its NAK is a repeated READ request, from the first missing PSN as
//!   it knew it (responses still on their way do not count). A gap that a request sent
//!   before it fills needs none; while a repeat is outstanding, a new gap needs none, and
//!   a second repeat the timer does not explain is a second NAK. A repeat the timer may
//!   have sent after the NAK was due (the NIC's READ NAK bound, `transport::read_nak_ns`)
//!   is no NAK, whatever the timer. The timer's repeat before the NAK was due leaves the
//!   gap waiting; if no NAK follows, whether one would have the trace cannot tell
//!   (unverifiable), nor when the QP failed first. A gap whose response reached the
//!   requester after its timer's repeat left (nothing in order between) came while it was
//!   going back: no episode. A failed requester (retries exhausted) takes nothing. A
//!   response past what the trace shows requested proves a request whose copy is missing:
//!   a later request for it is a repeat.
//! - ACK PSNs never go backwards.
//!
//! NAK-triggered and timeout go-backs are counted apart (Lumina's `num_nacks`,
//! `num_timeouts`); with the configured timeout, the retransmission timer decides, timed
//! on the requester's side of the switch where the trace shows the way there (`Timer`). PSN
//! arithmetic is 24-bit with wraparound throughout (`wire::psn`).

use std::collections::VecDeque;
use std::fmt::Write as _;

use trace::record::{flag, Record};
use wire::psn;

use super::conn::{is_data, Connection, Role};
use super::context::{TestConfig, Verb};
use super::egress;
use super::transport::{
    delivered, elapsed, fixed_timeout_ns, is_ack, is_read_request, is_rnr_nak, is_seq_nak, is_transport, later,
    path_mtu, read_nak_ns, read_nak_overdue, shortest_timeout_ns, timer_disabled, ts_add, ts_sub, within, Arrival,
    GbnReceiver,
};
use super::unseen::{Since, Unseen};
use super::{plural, render_capped, Input};

/// Episodes still waiting for their NAK, READ requests not yet answered, and the other
/// queues are bounded: a trace that overflows them is already full of violations.
const MAX_PENDING: usize = 1024;
/// PSN ranges a forward skip left out, tracked at most (each data packet looks them up).
const MAX_HOLES: usize = 64;
/// READ: a response that passed the switch less than this before a request from the
/// requester may not have reached the requester when it sent the request (switch and link
/// latencies, NIC processing), so the request may not reflect it.
pub const IN_FLIGHT_NS: u64 = 10_000;
/// WRITE/SEND: the longest a responder takes from an out-of-sequence packet to its NAK,
/// per NIC, twice Lumina §6.1's figures (Fig. 8: CX5, CX6 Dx ≈2 µs, E810 ≈10 µs; CX4 Lx's
/// is "consistently low" too, so the NVIDIA figure).
const WRITE_NAK_NS: [(&str, u64); 4] = [("cx4", 4_000), ("cx5", 4_000), ("cx6", 4_000), ("e810", 20_000)];
/// At most this from a packet's switch ingress to its receiver's transport, plus from the
/// receiver back to the switch (switch latency, links, serialisation) on a lab rack: a
/// go-back sooner than this after an ACK's copy may have left before the ACK arrived.
/// Longer paths (cables, slow links) stretch it to the round trip the trace shows
/// (`Checker::delivery_ns`).
pub const DELIVERY_NS: u64 = 1_000;

/// What rule a packet broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ViolationKind {
    /// Data sent out of order that is not a retransmission.
    OooData,
    /// A NAK that does not name the first missing PSN of its loss episode.
    NakWrongPsn,
    /// A second NAK within one loss episode.
    MultipleOutstandingNaks,
    /// A NAK with no out-of-sequence arrival before it.
    UnexpectedNak,
    /// An ACK naming an earlier PSN than a previous ACK.
    AckBackwards,
    /// An out-of-sequence arrival that no NAK (READ: repeated request) answered.
    MissingNak,
    /// A repeated READ request that does not restart from the first missing response PSN.
    ReadWrongRestart,
}

impl ViolationKind {
    pub const fn name(self) -> &'static str {
        match self {
            ViolationKind::OooData => "ooo-data",
            ViolationKind::NakWrongPsn => "nak-wrong-psn",
            ViolationKind::MultipleOutstandingNaks => "multiple-outstanding-naks",
            ViolationKind::UnexpectedNak => "unexpected-nak",
            ViolationKind::AckBackwards => "ack-backwards",
            ViolationKind::MissingNak => "missing-nak",
            ViolationKind::ReadWrongRestart => "read-wrong-restart",
        }
    }
}

/// One broken rule, with the packet that broke it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    pub conn: u32,
    pub kind: ViolationKind,
    /// Mirror sequence number (as on the wire) of the offending packet; for `missing-nak`
    /// the out-of-sequence arrival that should have been NAKed.
    pub seq: u32,
    pub switch_ts_ns: u64,
    /// The offending packet's PSN.
    pub psn: u32,
    /// The PSN the specification called for, where there is one.
    pub expected: Option<u32>,
    pub message: String,
}

/// Per-connection counts (Lumina's `num_nacks`, `num_timeouts`, `num_oos_data_pkts`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ConnStats {
    pub conn: u32,
    pub verb: Option<Verb>,
    /// Data packets (WRITE/SEND requests, READ responses), every transmission.
    pub data_packets: u64,
    /// Data copies an event dropped or corrupted: never delivered.
    pub undelivered: u64,
    /// Data packets at or below the highest PSN already sent.
    pub retransmitted_packets: u64,
    /// PSN-sequence-error NAKs sent by the data receiver (READ: by the responder, for lost
    /// requests), including copies an event then dropped.
    pub naks: u64,
    /// Of those, delivered ones that reached the requester after its QP had failed
    /// (`retries_exhausted_by_ns`): it ignored them, and its NAK counter did not count them.
    pub naks_ignored: u64,
    /// Of those not ignored, the delivered ones that reached the requester after
    /// `retries_maybe_exhausted_by_ns`: ignored, and not counted, if the QP had failed then.
    pub naks_maybe_ignored: u64,
    /// Repeated READ requests: go-backs (the READ "NAK" of Lumina §6.1, timeouts) and the
    /// repeats of the other outstanding requests that follow them.
    pub read_reissues: u64,
    /// Go-backs triggered by a NAK (READ: repeated requests answering an out-of-sequence
    /// arrival) — Lumina's `num_nacks`. With the timeout known: go-backs sooner than a
    /// timeout after the timer's last start.
    pub nak_retransmissions: u64,
    /// Go-backs by timeout — Lumina's `num_timeouts`: with the timeout known, those the
    /// timer could have fired; without it, those no NAK explains.
    pub timeout_retransmissions: u64,
    /// Timer expiries no go-back shows: the progress that acknowledged everything passed
    /// the switch after the requester's timer expired, so the expiry found nothing left to
    /// resend. The NIC counts it all the same
    /// (`local_ack_timeout_err`); common with timers of a few µs.
    pub silent_timeouts: u64,
    /// Expiries that may have been such, the way from the switch to the requester not
    /// timed: progress copied within a delivery bound before the expiry, everything then
    /// acknowledged. The trace cannot tell; `counters` allows up to this many more.
    pub maybe_silent_timeouts: u64,
    /// RNR NAKs the responder sent (WRITE/SEND: no receive WQE ready), and the resends
    /// that answered them.
    pub rnr_naks: u64,
    pub rnr_retransmissions: u64,
    /// Loss episodes the data receiver saw (first out-of-sequence arrival after in-order
    /// data) — Lumina's `num_oos_data_pkts`. READ: not counting arrivals while a repeated
    /// request already asks for the missing PSN.
    pub ooo_episodes: u64,
    /// READ: gaps left out of `ooo_episodes` as found while the requester went back on its
    /// timer ([`Checker::drop_gaps_found_going_back`]): their first out-of-sequence
    /// response passed the switch within a delivery bound of the expiry, so it may have
    /// arrived before it; and gaps whose response arrived after an expiry the trace does
    /// not time ([`Checker::doubt_gaps_found_going_back`]). `counters` allows
    /// `implied_nak_seq_err` up to this many more.
    pub maybe_ooo_episodes: u64,
    /// Requests the responder received ahead of its expected PSN (WRITE/SEND data, READ
    /// requests): what its out-of-sequence counter counts.
    pub ooo_requests: u64,
    /// Requests the responder received behind its expected PSN: retransmissions of what
    /// it already had (its duplicate-request counter).
    pub duplicate_requests: u64,
    /// The trace ends with data the requester sent and never had acknowledged: the QP
    /// failed (its retries ran out), or the run ended while it was still retrying — or,
    /// with the timer disabled, it stalled (`stalled_at_end`).
    pub unacknowledged_at_end: bool,
    /// Data unacknowledged at the end with the timer disabled (`timeout` 0): no expiry
    /// comes, so the QP stalls with it, not in error (IBA vol. 1 §9.7.6.1.3).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stalled_at_end: bool,
    /// Whether the requester's retries ran out by the trace's end (IBA vol. 1 §9.7.6.1.3:
    /// the expiry after the last retry the count allows puts the QP in the error state):
    /// `true` when the trace shows it (progress too late, `retries_exhausted_by_ns`; or the
    /// trace running on past the next expiry with no retry), `false` with nothing
    /// unacknowledged at the end or the timer disabled, `null` when the trace cannot tell:
    /// it ends before another retry would show, or (adaptive retransmission) the next
    /// timeout is unknown.
    pub retries_ran_out_at_end: Option<bool>,
    /// The requester's timer expired once more after the last retry its retry count
    /// allows (with `retry_cnt` 0, at its first expiry), before the acknowledgement, NAK or
    /// response that came next could reach it: the QP went to the error state (IBA: its
    /// retry count exhausted). What left the switch toward it from this switch time on (its
    /// copy's time plus its queueing at the port toward the requester) reached it after that
    /// expiry: the requester did not take it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retries_exhausted_by_ns: Option<u64>,
    /// The same expiry may have come before the acknowledgement, NAK or response that came
    /// next reached the requester, its way from the switch not timed (up to the delivery
    /// bound): the QP may have failed from this switch time on, or taken it. The first such;
    /// what it completed may not have completed (`goodput` `qp_may_have_failed`), and
    /// `counters` allows one more `req_transport_retries_exceeded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retries_maybe_exhausted_by_ns: Option<u64>,
    /// Times the checker took packets whose copies are missing from the trace as sent and
    /// received (PSNs it never saw, right after a missing copy), to follow the connection
    /// on instead of flagging everything after.
    pub caught_up: u64,
}

#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    /// Connections checked (their verb known).
    pub connections: Vec<ConnStats>,
    /// Connections not checked: no configuration or request in the trace gives their verb.
    pub unknown_verb: Vec<u32>,
    pub violations: Vec<Violation>,
    /// What would have been violations but for mirror copies missing from the trace
    /// since the connection's previous packet, which may hold what explains them
    /// (`analyze::unseen`), or but for the requester's timer: a READ gap whose repeat (its
    /// NAK) was not due yet when the timer's repeat came or the QP failed, so the trace
    /// cannot tell whether the NIC would have sent it. Not counted as violations.
    pub unverifiable: Vec<Violation>,
    /// What the configuration keeps the trace from showing (a timer shorter than the READ
    /// NAK of the requester's NIC).
    pub notes: Vec<String>,
}

/// What [`check_connection`] found on one connection.
#[derive(Debug, Default)]
pub struct Checked {
    pub stats: ConnStats,
    pub violations: Vec<Violation>,
    pub unverifiable: Vec<Violation>,
}

/// What the checker needs to know about one connection.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub conn: u32,
    pub verb: Verb,
    /// The requester's initial PSN (every data PSN is in its space, READ responses too).
    pub ipsn: Option<u32>,
    /// Path MTU, to know how many response PSNs a READ request covers.
    pub mtu: Option<u32>,
    /// The requester's retransmission timeout (IBA: 4.096 µs × 2^timeout), when fixed.
    /// With it, a go-back less than a timeout after the timer last (re)started is known to
    /// answer a NAK, and one later than that is counted as the timeout that overtook it;
    /// without it, a go-back a NAK explains is counted as NAK-triggered (Lumina's rule).
    pub timeout_ns: Option<u64>,
    /// The shortest the timer may run (`transport::shortest_timeout_ns`): the fixed
    /// timeout, or a floor under adaptive retransmission's. A repeat sooner than this
    /// after the timer's start is no timeout's.
    pub shortest_timeout_ns: Option<u64>,
    /// The configuration disables the timer (`transport::timer_disabled`): no repeat is
    /// the timer's, and no QP fails by it (one stalls instead).
    pub timer_disabled: bool,
    /// READ: the longest the requester may take to repeat its request after an
    /// out-of-sequence response (`transport::read_nak_ns` for its NIC); `None` when unknown.
    pub read_nak_ns: Option<u64>,
    /// WRITE/SEND: the longest the responder may take to NAK ([`WRITE_NAK_NS`] for its
    /// NIC); `None` when unknown.
    pub write_nak_ns: Option<u64>,
    /// The requester's retry count (`max-retransmit-retry`), with `timeout_ns` fixed.
    pub retry_cnt: Option<u8>,
    /// The switch time of the trace's last copy (any connection): the capture ran at least
    /// until then.
    pub trace_end_ns: Option<u64>,
}

/// The responder NIC's WRITE/SEND NAK bound, when the configuration names a NIC Lumina
/// measured.
pub fn write_nak_ns(config: Option<&TestConfig>) -> Option<u64> {
    nic_bound(&WRITE_NAK_NS, config?.responder.nic.as_deref()?)
}

fn nic_bound(table: &[(&str, u64)], nic: &str) -> Option<u64> {
    table.iter().find(|(n, _)| *n == nic).map(|&(_, ns)| ns)
}

/// When the configured timer runs out before the requester NIC's READ NAK is due (an
/// E810, Lumina §6.1: ≈83 ms, against 67 ms at Lumina's usual timeout 14), any READ gap
/// may be the timer's: what would show the NAKs.
fn timer_hides_read_naks(timeout_ns: Option<u64>, read_nak_ns: Option<u64>) -> Option<String> {
    let (t, b) = (timeout_ns?, read_nak_ns?);
    let exponent = (1..=31u8).find(|&e| super::transport::iba_timeout_ns(e).is_some_and(|t| t >= b))?;
    (t < b).then(|| {
        format!(
            "the configured timeout, {}, may run out before this NIC's READ NAK comes (up to {}): with \
             min-retransmit-timeout {exponent} or more the trace would show it",
            micros(t),
            micros(b)
        )
    })
}

/// The switch time of the trace's latest mirrored copy: the capture ran at least until
/// then. Frames that are no copy carry the capture host's clock, not the switch's, and
/// would place the end anywhere on the switch clock's ring.
fn trace_end_ns(records: &[Record]) -> Option<u64> {
    records.iter().filter(|r| r.has(flag::MIRRORED)).map(|r| r.switch_ts_ns).reduce(latest)
}

pub fn analyze(input: &Input<'_>) -> Report {
    analyze_with(input, &egress::Ports::of(input))
}

/// [`analyze`] with the switch's ports modelled (`goodput` models the one toward the
/// requester too): progress reaches the requester when the port toward it has sent it, and
/// a responder faster than the requester's link queues its READ answers there for as long
/// as the burst lasts; a responder slower than the requester's queues its WRITE data, and
/// the path is timed from when a request left that port.
pub fn analyze_with(input: &Input<'_>, ports: &egress::Ports) -> Report {
    let config = input.ctx.config.as_ref();
    let (timeout_ns, shortest_timeout_ns) = (fixed_timeout_ns(config), shortest_timeout_ns(config));
    let (read_nak_ns, write_nak_ns) = (read_nak_ns(config), write_nak_ns(config));
    let retry_cnt = config.and_then(|c| c.max_retransmit_retry).filter(|_| timeout_ns.is_some());
    let trace_end_ns = trace_end_ns(input.view.records);
    let mut report = Report::default();
    for c in &input.conns.list {
        let Some(verb) = c.verb else {
            report.unknown_verb.push(c.id);
            continue;
        };
        let records = input.view.records;
        let packets = c
            .packets
            .iter()
            .filter_map(|&(i, role)| records.get(i as usize).map(|r| (r, role, ports.queued_ns(i, r, role))));
        let mtu = path_mtu(config, c.packets.iter().filter_map(|&(i, _)| records.get(i as usize)));
        let params = Params {
            conn: c.id,
            verb,
            ipsn: c.ipsn,
            mtu,
            timeout_ns,
            shortest_timeout_ns,
            timer_disabled: timer_disabled(config),
            read_nak_ns,
            write_nak_ns,
            retry_cnt,
            trace_end_ns,
        };
        let checked = check_connection(&params, &input.conns.unseen, packets);
        report.connections.push(checked.stats);
        report.violations.extend(checked.violations);
        report.unverifiable.extend(checked.unverifiable);
    }
    let reads = report.connections.iter().any(|c| c.verb == Some(Verb::Read));
    report.notes.extend(timer_hides_read_naks(timeout_ns, read_nak_ns).filter(|_| reads));
    report
}

/// Runs the Go-back-N state machine over one connection's packets, in trace order, each
/// with the role of the end it travels to and how long the switch port toward that end
/// queued it beyond its ingress (ns; `egress`); `unseen` holds the copies the trace lacks.
pub fn check_connection<'r>(
    p: &Params,
    unseen: &Unseen,
    packets: impl IntoIterator<Item = (&'r Record, Role, u64)>,
) -> Checked {
    let mut c = Checker::new(p, unseen);
    let sender = Connection::data_sender(p.verb);
    for (r, to, queued_ns) in packets.into_iter().filter(|(r, _, _)| is_transport(r)) {
        c.hear_pending(Some(r.switch_ts_ns));
        c.queued_ns = queued_ns;
        let dir = if to == sender { TOWARD_SENDER } else { TOWARD_RECEIVER };
        c.gap = c.since[dir].step(unseen, r);
        c.gap_seen[dir] |= c.gap > 0;
        if to == sender {
            c.toward_sender(r);
        } else {
            c.toward_receiver(r);
        }
    }
    c.finish();
    let strip = |v: Vec<(u64, Violation)>| v.into_iter().map(|(_, v)| v).collect();
    Checked { stats: c.stats, violations: strip(c.out), unverifiable: strip(c.unverifiable) }
}

/// `PSN a` or `PSNs a..=b`, for messages.
fn psn_range(a: u32, b: u32) -> String {
    if a == b {
        format!("PSN {a}")
    } else {
        format!("PSNs {a}..={b}")
    }
}

/// A record toward the requester it hears later than the trace shows ([`Checker::pending`]).
#[derive(Debug, Clone, Copy)]
struct Pending {
    /// When it left the switch toward the requester.
    heard: u64,
    seq: u64,
    /// It starts the retry count over (progress).
    progress: bool,
    /// A NAK, and what the requester had been acknowledged (WRITE/SEND: `ack_una`; READ:
    /// the response PSN it expected) before it: taken for now, they are what stands if the
    /// QP had failed before it arrived.
    nak: bool,
    ack_una: Option<u32>,
    epsn: Option<u32>,
}

/// The progress that started the retry count over since the last retry, to hear again
/// after a go-back that shows it came later ([`Checker::undo_reset`]).
#[derive(Debug, Default)]
struct Resets {
    /// The count as it stood before the first: retries, the first one's trace order, and
    /// when progress last started it over before. (The last retry's time cannot change
    /// meanwhile: the next retry takes these, [`Checker::undo_reset`].)
    before: (u32, Option<u64>, Option<u64>),
    /// Each progress, with the oldest PSN it left unacknowledged, oldest first.
    progress: VecDeque<(u32, Pending)>,
}

/// One loss episode at the data receiver.
#[derive(Debug, Clone, Copy)]
struct Episode {
    id: u64,
    /// The first missing PSN: the receiver's expected PSN at the first out-of-sequence arrival.
    lost: u32,
    /// That arrival.
    cause: Evidence,
    closed: bool,
    /// Trace order of the arrival that filled the gap: its NAK is on the wire by then.
    closed_at: Option<u64>,
    /// A copy is missing since the receiver last took a packet in order: the PSN taken
    /// as lost may have arrived unseen (the first copy of a go-back, say), and no gap was.
    unseen_before: bool,
    /// The last in-order arrival before the cause (READ: whether the requester was going
    /// back when the cause arrived).
    after: Option<Evidence>,
    /// READ: the timer's repeat that came before its NAK was due. A NAK may still come;
    /// failing that, whether one would have, the trace cannot tell.
    overtaken: Option<Evidence>,
    /// READ: counted in `maybe_ooo_episodes`, not `ooo_episodes`: its first
    /// out-of-sequence response may have reached the requester after its timer had gone
    /// back ([`Checker::doubt_gaps_found_going_back`]). A NAK that answers it makes it sure.
    doubted: bool,
}

#[derive(Debug, Clone, Copy)]
struct Evidence {
    seq: u32,
    switch_ts_ns: u64,
    /// When the switch port toward its end sent it: `switch_ts_ns` plus the queueing there
    /// ([`Checker::left_ts`]; the same when not queued).
    left_ns: u64,
    psn: u32,
    /// Trace order (the unwrapped mirror seq), to sort the findings.
    order: u64,
}

impl Evidence {
    fn of(r: &Record) -> Evidence {
        Evidence {
            seq: r.wire_seq(),
            switch_ts_ns: r.switch_ts_ns,
            left_ns: r.switch_ts_ns,
            psn: r.psn(),
            order: r.seq(),
        }
    }
}

/// The data receiver: the Go-back-N rule over delivered data, and its loss episodes.
#[derive(Debug)]
struct Receiver {
    gbn: GbnReceiver<u32>,
    /// The episode in progress (gap not yet filled) and whether its NAK was seen.
    open: Option<(u64, bool)>,
    /// Episodes whose NAK has not been seen yet, oldest first.
    awaiting: VecDeque<Episode>,
    /// READ: in-order responses (PSN, when the port toward the requester sent it) of the
    /// last [`IN_FLIGHT_NS`].
    recent: VecDeque<(u32, u64)>,
    /// The latest response `recent` forgot at its cap while still within the window (long
    /// queueing toward the requester): until the window passes it, a repeat's PSN not found
    /// there may have been forgotten.
    forgotten: Option<u64>,
    next_id: u64,
    /// The last in-order arrival: what the receiver knows dates from it.
    last_in_order: Option<Evidence>,
    /// READ: the first missing PSN a repeated request not sent by the timer (a NAK) asked
    /// for, until a response arrives in order.
    repeat_for: Option<u32>,
}

impl Receiver {
    fn new(ipsn: Option<u32>) -> Receiver {
        Receiver {
            gbn: GbnReceiver::new(ipsn),
            open: None,
            awaiting: VecDeque::new(),
            recent: VecDeque::new(),
            forgotten: None,
            next_id: 0,
            last_in_order: None,
            repeat_for: None,
        }
    }
    fn epsn(&self) -> Option<u32> {
        self.gbn.expected()
    }
}

/// The data sender's transmissions.
#[derive(Debug, Default)]
struct Sender {
    highest: Option<u32>,
    last: Option<u32>,
    /// The PSNs of the NAKs delivered to the sender that no go-back has answered yet, oldest
    /// first: each schedules one go-back (two after out-of-order data), unless a timeout's
    /// goes back first.
    nak_pending: VecDeque<u32>,
    /// The same for an RNR NAK: its resend is neither a NAK's go-back nor a timeout's.
    rnr_pending: Option<u32>,
    /// Everything before this PSN has been acknowledged to the sender (ACK PSN + 1, NAK PSN).
    ack_una: Option<u32>,
    /// PSN ranges `[start, start + len)` skipped by a forward jump and not yet sent.
    holes: Vec<(u32, u32)>,
    /// The last catch-up, until the sender sends past it: the first PSN taken as sent
    /// unseen, and the PSN seen after them (which may have come before them instead).
    caught_up: Option<(u32, u32)>,
    /// Recent first transmissions no ACK has named yet: an ACK naming one times the path's
    /// round trip.
    fresh: VecDeque<Fresh>,
}

/// WRITE/SEND: a first transmission, to time the path by the ACK that names it.
#[derive(Debug, Clone, Copy)]
struct Fresh {
    psn: u32,
    /// The first transmission an event did not drop or corrupt, with when it left the switch
    /// toward the responder: what the ACK may answer. Until one is seen (the first
    /// dropped), the first's.
    sent: Evidence,
    /// No transmission seen yet reached the responder.
    lost: bool,
    /// Sent again after `sent`: the ACK may answer that later copy, so it is no prompt
    /// reply to this one.
    again: bool,
}

/// READ: what the responder was asked for, and what the requester asked.
#[derive(Debug, Default)]
struct ReadState {
    /// Requester: the end (exclusive) of the PSN ranges it requested.
    sent_end: Option<u32>,
    /// Requester: the end of the last request it sent, new or repeated.
    last_end: Option<u32>,
    /// Responder: the end of the in-order requests it received (its expected request PSN).
    req_epsn: Option<u32>,
    /// Responder: received requests not yet answered, in order (it answers them in order).
    jobs: VecDeque<Job>,
    /// Responder: the request being answered.
    current: Option<Job>,
    /// Trace order of the request the last response answered.
    answering: Option<u64>,
    /// Responder: trace order of the last new request it received in order.
    last_new: Option<u64>,
}

/// Responses a READ responder owes for one request: PSNs `next..` (`left` of them, when
/// the MTU is known).
#[derive(Debug, Clone, Copy)]
struct Job {
    next: u32,
    left: Option<u32>,
    /// Trace order of the request.
    asked: u64,
    /// Its copy, with when it left the switch toward the responder (`None`: its copy is
    /// missing).
    asked_at: Option<Evidence>,
    /// A new request (the PSNs due next): the trace order of the new request before it
    /// (0: none), since which its own first copy may have gone missing, sent earlier.
    new_since: Option<u64>,
    /// A repeat of the request being answered, from the PSN due next or from where it
    /// started: the responder may answer it again (rxe does) or merge it into the answer
    /// in progress, so it may be answered once or never.
    optional: bool,
}

impl Job {
    /// The job after sending its next response; `None` when done.
    fn advance(self) -> Option<Job> {
        match self.left {
            Some(n) if n <= 1 => None,
            left => Some(Job { next: psn::add(self.next, 1), left: left.map(|n| n - 1), ..self }),
        }
    }
}

/// When the requester's retransmission timer last (re)started, as early as the trace
/// allows: at its own send with nothing outstanding or its timeout's go-back (dated by their
/// copies), or at progress it heard of — an ACK/NAK advancing, READ: an in-order response
/// (dated by the progress's copy). Heard progress counts only for go-backs at least a
/// delivery bound later ([`DELIVERY_NS`], or the path's round trip): a timer that fired
/// while it was on its way, or whose go-back was still leaving, never saw it. A timeout
/// fires no earlier than the timeout after the start.
///
/// Progress reaches the requester after its copy passed the switch, and what the requester
/// sends after shows at the switch a way later (Lumina §4: switch timestamps are half a round
/// trip off each end's): progress heard later than the timer's expiry by the requester's
/// sends' clock did not stop the timeout, however late its go-back's first copy leaves; and
/// progress a go-back provably had not heard (it went back behind what the progress
/// acknowledged) restarted the timer after that go-back, not at its earlier copy.
#[derive(Debug, Default)]
struct Timer {
    started: Option<Start>,
    /// Heard restarts not yet certain to be in effect, oldest first.
    heard: VecDeque<Heard>,
    /// The timer expired before progress heard since could restart it: the next go-back is
    /// the timeout's.
    lapsed: bool,
    /// The timer may have expired before the progress that last restarted it arrived (its
    /// way to the requester not timed, up to a delivery bound).
    maybe_lapsed: bool,
    /// `lapsed`, and even had the progress reached the requester the moment its copy
    /// passed the switch: the way to the requester is estimated (half a round trip through
    /// the responder, [`Checker::return_ns`]), too long when the responder is slow to
    /// answer (an E810's READ responses, ~1.4 µs). A NIC counter is compared with these.
    surely_lapsed: bool,
    /// Expiries found silent once progress was taken in (certain, maybe: as `surely_lapsed`
    /// and `maybe_lapsed` tell them apart), not yet counted: each came before the send that
    /// followed its progress, so that send was its go-back, from a PSN it had just heard
    /// acknowledged ([`Timer::hear`]).
    silent: (u64, u64),
}

/// A timer start: at the requester's own send, on the clock of its copies, or at progress
/// heard, on the clock of the progress's copy.
#[derive(Debug, Clone, Copy)]
enum Start {
    Sent(u64),
    Heard(u64),
}

impl Start {
    fn ts(self) -> u64 {
        match self {
            Start::Sent(t) | Start::Heard(t) => t,
        }
    }

    /// On the clock of the requester's sends: a send's copy time, or progress heard
    /// `way_ns` after its copy passed the switch.
    fn on_send_clock(self, way_ns: u64) -> u64 {
        match self {
            Start::Sent(s) => s,
            Start::Heard(a) => ts_add(a, way_ns),
        }
    }
}

/// Progress heard: its copy's timestamp, what it acknowledged (everything before `una`),
/// the copy of a go-back that left before it arrived, and of a send that found nothing
/// outstanding by the trace after it, but may have left before it arrived.
#[derive(Debug, Clone, Copy)]
struct Heard {
    at: u64,
    una: u32,
    missed_by: Option<u64>,
    then_sent: Option<u64>,
}

/// How far after progress's copy the requester's sends show it ([`Checker::return_ns`]):
/// `return_ns` dates a restart a go-back missed; `lapse_ns`, timed through NAKs too, tells
/// whether the timer expired before the progress arrived.
#[derive(Debug, Clone, Copy)]
struct Return {
    return_ns: u64,
    lapse_ns: u64,
    /// The longest progress may take to reach the requester (the delivery bound).
    max_lapse_ns: u64,
}

impl Timer {
    fn restart(&mut self, r: &Record) {
        self.started = Some(Start::Sent(r.switch_ts_ns));
        (self.lapsed, self.maybe_lapsed, self.surely_lapsed) = (false, false, false);
    }

    /// Progress that left the switch toward the requester at `at` ([`Checker::left_ts`]).
    fn restart_heard(&mut self, at: u64, una: u32) {
        if self.heard.len() == MAX_PENDING {
            self.heard.pop_front();
        }
        self.heard.push_back(Heard { at, una, missed_by: None, then_sent: None });
    }

    /// A send `r` with nothing outstanding by the trace (all before `una` acknowledged)
    /// arms the timer; unless the progress that acknowledged it all passed less than
    /// `delivery_ns` before: the send may have left before it arrived, the timer running on
    /// (and expiring before it, an ACK crossing the expiry). Then the send's start counts
    /// once that progress is heard, if it found the timer running.
    fn arm(&mut self, r: &Record, una: u32, delivery_ns: u64) {
        let now = r.switch_ts_ns;
        let crossing = |h: &&mut Heard| within(h.at, now, delivery_ns);
        match self.heard.back_mut().filter(|h| h.una == una).filter(crossing) {
            Some(h) => h.then_sent = Some(now),
            None => self.restart(r),
        }
    }

    /// Takes in the progress heard by `now` (all of it with `None`: the trace's end) and
    /// whether the timer had expired before it arrived with no go-back since — certainly
    /// (before its copy passed the switch, [`Timer::surely_lapsed`]), and maybe (on the
    /// way to the requester, up to the delivery bound): an expiry that found everything
    /// acknowledged. It is accounted for once.
    fn silent_expiry(
        &mut self,
        now: Option<u64>,
        timeout_ns: Option<u64>,
        delivery_ns: u64,
        way: Return,
    ) -> (bool, bool) {
        let heard = |h: &&Heard| {
            now.is_none_or(|now| (h.then_sent.is_some() || elapsed(h.at, now) >= delivery_ns) && !later(h.at, now))
        };
        while let Some(&h) = self.heard.front().filter(heard) {
            self.heard.pop_front();
            self.hear(h, timeout_ns, way);
        }
        if self.lapsed {
            // It expired and found nothing to resend: it stays stopped until a send arms
            // it. Its old start would count every later arrival as another expiry.
            self.started = None;
        }
        let (lapsed, surely) = (std::mem::take(&mut self.lapsed), std::mem::take(&mut self.surely_lapsed));
        (surely, std::mem::take(&mut self.maybe_lapsed) || (lapsed && !surely))
    }

    /// A go-back to `p` at `r`: progress acknowledging `p` had not reached the requester.
    fn missed(&mut self, p: u32, r: &Record) {
        for h in self.heard.iter_mut().filter(|h| psn::gt(h.una, p) && h.missed_by.is_none()) {
            h.missed_by = Some(r.switch_ts_ns);
        }
    }

    /// Whether a go-back at `r` can be a timeout (`None`: the timeout is unknown); progress
    /// heard less than `delivery_ns` before it may not have reached the requester in time —
    /// but progress a send armed the timer after counts either way: it found the timer
    /// expired, or it restarted it and the send armed it later still.
    fn expired(&mut self, r: &Record, timeout_ns: Option<u64>, delivery_ns: u64, way: Return) -> Option<bool> {
        let now = r.switch_ts_ns;
        let heard = |h: &&Heard| (h.then_sent.is_some() || elapsed(h.at, now) >= delivery_ns) && !later(h.at, now);
        while let Some(&h) = self.heard.front().filter(heard) {
            self.heard.pop_front();
            self.hear(h, timeout_ns, way);
        }
        let t = timeout_ns?;
        let Some(start) = self.started else { return Some(true) };
        Some(self.lapsed || elapsed(start.ts(), now) >= t)
    }

    /// When the timer expired, on the clock of the requester's sends, if a go-back at `r` is
    /// certainly its timeout's: a timeout after its latest possible start (progress heard
    /// dated `delivery_ns` after its copy), and no progress heard since that may have
    /// restarted it.
    fn certainly_expired(&self, r: &Record, timeout_ns: Option<u64>, delivery_ns: u64) -> Option<u64> {
        let expiry = self.latest_expiry(timeout_ns, delivery_ns).filter(|_| self.heard.is_empty())?;
        (!later(expiry, r.switch_ts_ns)).then_some(expiry)
    }

    /// The timer's expiry after its latest possible start (progress heard dated
    /// `delivery_ns` after its copy), on the clock of the requester's sends.
    fn latest_expiry(&self, timeout_ns: Option<u64>, delivery_ns: u64) -> Option<u64> {
        Some(ts_add(self.started?.on_send_clock(delivery_ns), timeout_ns?))
    }

    /// Whether the timer surely expired before the progress that acknowledged everything
    /// before `r`'s PSN reached the requester, and no go-back shows it: IBA resends from the
    /// oldest PSN unacknowledged on expiry, the progress arriving before that resend left
    /// moved it on to `r`, which continues the resend before it (`GBN_RANDOM_RUNS=5000`
    /// slow cases 2796 and 4267: a NAK's go-back resent PSN 1, the timer expired before
    /// the ACK of PSN 1 came, and the requester's next send, PSN 2, was the timer's go-back).
    /// Sure: that progress is the only one not yet in effect and its copy passed the switch
    /// after the latest expiry, or it is in effect and its arrival found the timer expired
    /// even at no delay after its copy ([`Self::surely_lapsed`]).
    fn surely_expired_unheard(&self, r: &Record, timeout_ns: Option<u64>, delivery_ns: u64) -> bool {
        let (Some(start), Some(expiry)) = (self.started, self.latest_expiry(timeout_ns, delivery_ns)) else {
            return false;
        };
        match (self.heard.front(), self.heard.len()) {
            (Some(h), 1) if h.una == r.psn() && h.missed_by.is_none() && h.then_sent.is_none() => {
                // And `r` left after the expiry: it is no resend already on its way.
                let after_start = later(h.at, start.on_send_clock(delivery_ns));
                !later(expiry, h.at) && after_start && !later(expiry, r.switch_ts_ns)
            }
            (None, _) => self.lapsed && self.surely_lapsed,
            _ => false,
        }
    }

    /// The latest the timer may have (re)started: its start, or the progress still queued
    /// to restart it, dated as [`Self::hear`] would.
    fn latest_start(&self, way: Return) -> Option<Start> {
        let queued = self.heard.back().map(|h| match h.missed_by {
            Some(g) => Start::Sent(latest(g, ts_add(h.at, way.return_ns))),
            None => Start::Heard(h.at),
        });
        match (self.started, queued) {
            (Some(s), Some(q)) if later(s.ts(), q.ts()) => Some(s),
            (s, q) => q.or(s),
        }
    }

    /// Progress `h` reached the requester: it restarts the timer, unless the timer restarted
    /// later by a send, or expired before it arrived.
    fn hear(&mut self, h: Heard, timeout_ns: Option<u64>, way: Return) {
        let start = match (h.missed_by, h.then_sent) {
            (Some(g), _) => Start::Sent(latest(g, ts_add(h.at, way.return_ns))),
            (None, Some(s)) => Start::Sent(s),
            (None, None) => Start::Heard(h.at),
        };
        let expired = |s: Start, lapse_ns: u64| timeout_ns.is_some_and(|t| expired_before(s, t, h.at, lapse_ns));
        let before_send =
            |s: Start, sent: u64| timeout_ns.is_some_and(|t| !later(ts_add(s.on_send_clock(way.lapse_ns), t), sent));
        match self.started {
            Some(s) if !later(start.ts(), s.ts()) => {}
            _ if self.lapsed => {} // the first progress after the expiry tells
            // It expired before the progress arrived and before the send after it: that send
            // was its go-back, which the progress, arriving first, moved on to a PSN never
            // sent (sweep case 1118: a 16 µs timer ran out 0.24 µs before an ACK's copy of
            // everything outstanding). A silent expiry, whatever comes later; the go-back
            // restarted the timer.
            Some(s) if expired(s, way.lapse_ns) && h.then_sent.is_some_and(|sent| before_send(s, sent)) => {
                match expired(s, 0) {
                    true => self.silent.0 += 1,
                    false => self.silent.1 += 1,
                }
                self.started = Some(start);
            }
            Some(s) if expired(s, way.lapse_ns) => (self.lapsed, self.surely_lapsed) = (true, expired(s, 0)),
            Some(s) => {
                self.maybe_lapsed = expired(s, way.max_lapse_ns);
                self.started = Some(start);
            }
            None => self.started = Some(start),
        }
    }
}

/// Whether a timer started at `s` expired (after `t`) before progress whose copy passed at
/// `at` reached the requester, `lapse_ns` after by the clock of the requester's sends.
fn expired_before(s: Start, t: u64, at: u64, lapse_ns: u64) -> bool {
    let (expiry, arrival) = match s {
        Start::Sent(x) => (ts_add(x, t), ts_add(at, lapse_ns)),
        Start::Heard(x) => (ts_add(x, t), at),
    };
    !later(expiry, arrival)
}

/// `ns` in µs, for messages.
fn micros(ns: u64) -> String {
    format!("{}.{:03} µs", ns / 1000, ns % 1000)
}

/// The later of two switch times.
fn latest(a: u64, b: u64) -> u64 {
    if later(a, b) {
        a
    } else {
        b
    }
}

/// Directions of a connection, as indices of [`Checker::since`].
const TOWARD_RECEIVER: usize = 0;
const TOWARD_SENDER: usize = 1;

struct Checker<'u> {
    p: Params,
    timer: Timer,
    rx: Receiver,
    tx: Sender,
    read: ReadState,
    last_ack: Option<u32>,
    stats: ConnStats,
    /// Findings with their trace order.
    out: Vec<(u64, Violation)>,
    /// The copies the trace lacks, and per direction where the previous packet was.
    unseen: &'u Unseen,
    since: [Since; 2],
    /// Copies missing between the current packet and the previous one of its direction:
    /// at most that many of its packets went unseen there.
    gap: u64,
    /// Per direction: a copy went missing before one of its packets so far.
    gap_seen: [bool; 2],
    /// PSNs no copy showed, taken as delivered: when the data receiver expects `.0` it
    /// expects `.1` next.
    catch_up: Option<(u32, u32)>,
    /// Would-be findings a missing copy may explain, with their trace order.
    unverifiable: Vec<(u64, Violation)>,
    /// PSN ranges `[start, start + len)` the data receiver was taken to have received
    /// unseen, latest last: a missing copy may as well have been a drop, which the
    /// receiver's NAK (READ: repeated request) for one of them shows.
    assumed: VecDeque<(u32, u32)>,
    /// The shortest the trace shows from a request's copy to its first response's (READ)
    /// or from a new data packet's copy to the ACK naming it (WRITE/SEND): the path from
    /// the switch to the hosts and back, plus the responder's turnaround.
    path_ns: Option<u64>,
    /// The same through replies the responder sends about [`DELIVERY_NS`] after what they
    /// answer (ACKs naming a packet sent once, first responses), and through NAKs, which a
    /// NIC may take long to generate (E810 ≈10 µs, Lumina §6.1).
    reply_ns: Option<u64>,
    nak_ns: Option<u64>,
    /// Timeout go-backs since the requester last heard progress, the first one's trace
    /// order and the last one's switch time: the retry count ([`Checker::progress_heard`]).
    retries: u32,
    first_retry: Option<u64>,
    last_retry_ts: Option<u64>,
    /// How long the record being replayed queued at the switch port toward its end beyond
    /// its ingress (`egress`).
    queued_ns: u64,
    /// When the progress that last started the count over left the switch toward the
    /// requester ([`Self::left_ts`]), and whether the first retry since left the requester
    /// certainly after that progress reached it (a delivery bound later): else the go-back
    /// may have crossed it and been undone by it, and the count may be one too high.
    reset_ts: Option<u64>,
    count_certain: bool,
    /// The progress that started the count over since the last retry, while a retry may
    /// still show it unheard ([`Self::undo_reset`]).
    resets: Resets,
    /// What the requester hears later than the trace shows it: records toward it that the
    /// port queued beyond the delivery bound, and all behind them (the port is a FIFO),
    /// oldest first. Retries it sent before they reached it come later in the trace, so
    /// their effect on the retry count and the QP's life is applied once the trace's clock
    /// passes when they left the switch ([`Self::hear_pending`]): the count in heard order.
    pending: VecDeque<Pending>,
    /// READ: the response PSN the requester expected when its QP failed, if a response
    /// taken for now ([`Self::pending`]) turned out to have come after: the trace's end is
    /// judged by it.
    failed_epsn: Option<Option<u32>>,
    /// The expiry that may have failed the QP (`retries_maybe_exhausted_by_ns`), on the
    /// clock of its sends' copies: a send after it shows the QP alive.
    maybe_failed_at: Option<u64>,
    /// The copy of the requester's last request (WRITE/SEND data, READ request): its QP
    /// was alive then.
    last_request_ts: Option<u64>,
}

impl<'u> Checker<'u> {
    fn new(p: &Params, unseen: &'u Unseen) -> Checker<'u> {
        let before = p.ipsn.map(|i| psn::sub(i, 1));
        Checker {
            p: *p,
            timer: Timer::default(),
            rx: Receiver::new(p.ipsn),
            tx: Sender { highest: before, last: before, ack_una: p.ipsn, ..Sender::default() },
            read: ReadState { sent_end: p.ipsn, req_epsn: p.ipsn, ..ReadState::default() },
            last_ack: None,
            stats: ConnStats { conn: p.conn, verb: Some(p.verb), ..ConnStats::default() },
            out: Vec::new(),
            unseen,
            since: [Since::default(); 2],
            gap: 0,
            gap_seen: [false; 2],
            catch_up: None,
            unverifiable: Vec::new(),
            assumed: VecDeque::new(),
            path_ns: None,
            reply_ns: None,
            nak_ns: None,
            retries: 0,
            first_retry: None,
            last_retry_ts: None,
            reset_ts: None,
            queued_ns: 0,
            count_certain: true,
            resets: Resets::default(),
            pending: VecDeque::new(),
            failed_epsn: None,
            maybe_failed_at: None,
            last_request_ts: None,
        }
    }

    /// Progress `r` (an acknowledgement, READ: a response in order) reaches the requester,
    /// whose retry count starts over — unless its QP had failed ([`Self::failed_before`]).
    /// Returns whether the requester took it. Heard later than the trace shows it, the
    /// requester takes it then if still alive: taken for now ([`Self::pending`]).
    fn progress_heard(&mut self, r: &Record, una: u32) -> bool {
        if self.stats.retries_exhausted_by_ns.is_some() {
            return false;
        }
        if self.heard_later() {
            self.defer(r, true);
            return true;
        }
        let heard = self.left_ts(r);
        if self.failed_at(heard, r.seq()) {
            return false;
        }
        if self.resets.progress.is_empty() {
            self.resets.before = (self.retries, self.first_retry, self.reset_ts);
        } else if self.resets.progress.len() == MAX_HOLES {
            // Far more than a go-back can cross: the oldest is taken as heard.
            let oldest = self.resets.progress.pop_front().map(|(_, p)| p.heard);
            self.resets.before = (0, None, oldest);
        }
        let progress = self.pending_of(r, true);
        self.resets.progress.push_back((una, progress));
        self.start_count_over(heard);
        true
    }

    /// A timeout's go-back `r` that resends a PSN progress since the last retry acknowledged,
    /// less than the delivery bound after that progress left the switch: the requester had
    /// not heard it when it sent `r` (IBA resends from the oldest PSN unacknowledged),
    /// though its copy came first — the port toward the requester held it, or the way there
    /// is longer than the way back (queueing sweep cases 31, 719, 745). The count is put
    /// back as it stood before that progress, `r` counts on it, and that progress and all
    /// since are heard after `r` ([`Self::pending`]): whether the QP had failed by then is
    /// judged there.
    fn undo_reset(&mut self, r: &Record) {
        let (delivery, now, p) = (self.delivery_ns(), r.switch_ts_ns, r.psn());
        let resets = std::mem::take(&mut self.resets);
        let unheard = |(una, q): &(u32, Pending)| psn::gt(*una, p) && within(q.heard, now, delivery);
        let Some(k) = resets.progress.iter().position(unheard) else { return };
        (self.retries, self.first_retry, self.reset_ts) = match k {
            0 => resets.before,
            _ => (0, None, Some(resets.progress[k - 1].1.heard)),
        };
        for (_, q) in resets.progress.into_iter().skip(k).rev() {
            self.pending.push_front(q);
        }
    }

    fn start_count_over(&mut self, heard: u64) {
        (self.retries, self.first_retry, self.reset_ts) = (0, None, Some(heard));
    }

    /// Whether the record being replayed reaches the requester later than the trace's
    /// order says: queued beyond the delivery bound, or behind one that was.
    fn heard_later(&self) -> bool {
        !self.pending.is_empty() || self.queued_ns > self.delivery_ns()
    }

    /// Keeps record `r` toward the requester for when the trace's clock passes its leaving
    /// the switch; `progress`: it starts the retry count over.
    fn defer(&mut self, r: &Record, progress: bool) {
        let p = self.pending_of(r, progress);
        match self.pending.back_mut() {
            Some(q) if q.seq == p.seq => q.progress |= progress,
            _ => self.pending.push_back(p),
        }
    }

    /// Record `r` as [`Self::pending`] keeps it, with what stood before it.
    fn pending_of(&self, r: &Record, progress: bool) -> Pending {
        let (heard, seq) = (self.left_ts(r), r.seq());
        let (nak, ack_una, epsn) = (is_seq_nak(r), self.tx.ack_una, self.rx.epsn());
        Pending { heard, seq, progress, nak, ack_una, epsn }
    }

    /// The trace's clock reached `now` (a copy's switch time): what had left the switch
    /// toward the requester by then reached it (within the delivery bound, which
    /// [`Self::count_certain`] allows for), unless its QP had failed first. `None`: the
    /// trace's end, where all of it is heard.
    fn hear_pending(&mut self, now: Option<u64>) {
        while let Some(p) = self.pending.front().copied() {
            if now.is_some_and(|now| later(p.heard, now)) {
                return;
            }
            if self.failed_at(p.heard, p.seq) {
                // It and all behind it came too late: what they told the requester is undone
                // as far as the stats go (a NAK ignored, what stood acknowledged).
                self.stats.naks_ignored += self.pending.iter().filter(|q| q.nak).count() as u64;
                (self.tx.ack_una, self.failed_epsn) = (p.ack_una, Some(p.epsn));
                self.pending.clear();
                return;
            }
            self.pending.pop_front();
            if p.nak {
                self.nak_taken(p.heard);
            }
            if p.progress {
                self.start_count_over(p.heard);
            }
        }
    }

    /// When record `r`, being replayed, left the switch toward its end: its copy's time, plus
    /// the queueing the port toward that end held it for (Lumina §6: one host's link slower
    /// than the other's). Toward the requester: when the timer hears it.
    fn left_ts(&self, r: &Record) -> u64 {
        ts_add(r.switch_ts_ns, self.queued_ns)
    }

    /// [`Evidence::of`] record `r`, being replayed, with when it left the switch.
    fn evidence_left(&self, r: &Record) -> Evidence {
        Evidence { left_ns: self.left_ts(r), ..Evidence::of(r) }
    }

    /// Whether the requester's QP had failed before `r` reached it (recorded in
    /// `retries_exhausted_by_ns`: what passed the switch from then on came too late).
    ///
    /// After the last retry the count allows: its timer, restarted by that retry, had
    /// expired before `r` reached the requester, `lapse_ns` after its copy by the clock of
    /// the requester's sends ([`Timer::hear`] times a lapse so). When the count may be one
    /// too high ([`Self::count_certain`]: its first retry may have crossed progress on its
    /// way, review 252), only a certain expiry: before `r` passed the switch (the timer
    /// started no later than the retry's copy, and `r` reaches the requester after its own).
    /// With `retry_cnt` 0 the QP fails at the first expiry of the timer started by the send
    /// or progress that last started it (it was never considered): the count cannot be off.
    /// A copy missing since the first of those retries (with none, since the trace's start)
    /// may have been progress that started the count over: no failure is claimed then.
    ///
    /// A record the requester hears later than the trace shows ([`Self::pending`]) is
    /// judged once the trace's clock gets there: false for now.
    ///
    /// An expiry the way to the requester may have crossed, up to the delivery bound (the
    /// `maybe_silent_timeouts` of a QP that still had retries), is a failure the trace cannot
    /// tell: the first is kept in `retries_maybe_exhausted_by_ns`, and `r` taken.
    fn failed_before(&mut self, r: &Record) -> bool {
        if self.stats.retries_exhausted_by_ns.is_some() {
            return true;
        }
        if self.heard_later() {
            self.defer(r, false); // judged when the trace's clock gets there
            return false;
        }
        self.failed_at(self.left_ts(r), r.seq())
    }

    /// [`Self::failed_before`] a record of trace order `seq` that left the switch toward
    /// the requester at `heard` (when the timer hears it).
    fn failed_at(&mut self, heard: u64, seq: u64) -> bool {
        if self.stats.retries_exhausted_by_ns.is_some() {
            return true;
        }
        let counted = !self.unseen.between(self.first_retry, seq);
        let used_up = counted && self.p.retry_cnt.is_some_and(|n| self.retries >= u32::from(n));
        let (Some(t), true) = (self.p.timeout_ns, used_up) else { return false };
        let way = self.way_back();
        // The expiry, and whether it is on the clock of the requester's sends (what reaches
        // the requester then passed the switch a way before) or of a copy toward it.
        let expiry = match self.retries {
            0 => self.timer.latest_start(way).map(|s| match s {
                Start::Sent(x) => (ts_add(x, t), true),
                Start::Heard(a) => (ts_add(a, t), false),
            }),
            _ => self.last_retry_ts.map(|ts| (ts_add(ts, t), true)),
        };
        let Some((expiry, sent_clock)) = expiry else { return false };
        if sent_clock && self.last_request_ts.is_some_and(|s| later(s, expiry)) {
            return false; // it sent after the expiry: alive then (review, session 25)
        }
        let timed = sent_clock && (self.retries == 0 || self.count_certain);
        let by = ts_sub(expiry, if timed { way.lapse_ns } else { 0 });
        if later(by, heard) {
            let maybe_by = ts_sub(expiry, way.max_lapse_ns);
            let first = self.stats.retries_maybe_exhausted_by_ns.is_none();
            if sent_clock && first && !later(maybe_by, heard) {
                (self.stats.retries_maybe_exhausted_by_ns, self.maybe_failed_at) = (Some(maybe_by), Some(expiry));
            }
            return false;
        }
        self.stats.retries_exhausted_by_ns = Some(by);
        true
    }

    /// The requester sent `r`: its QP was alive then, so an expiry before it (on the clock
    /// of its sends' copies) failed nothing.
    fn request_sent(&mut self, r: &Record) {
        self.last_request_ts = Some(r.switch_ts_ns);
        if self.maybe_failed_at.is_some_and(|at| later(r.switch_ts_ns, at)) {
            (self.maybe_failed_at, self.stats.retries_maybe_exhausted_by_ns) = (None, None);
            self.stats.naks_maybe_ignored = 0;
        }
    }

    /// The requester took a NAK that left the switch toward it at `heard`: one it may have
    /// ignored if that was after the expiry that may have failed its QP (queueing sweep case
    /// 479: `packet_seq_err` 0 against 1 NAK in the trace).
    fn nak_taken(&mut self, heard: u64) {
        if self.stats.retries_maybe_exhausted_by_ns.is_some_and(|by| !later(by, heard)) {
            self.stats.naks_maybe_ignored += 1;
        }
    }

    /// End of trace, data unacknowledged: whether the retries had run out
    /// ([`ConnStats::retries_ran_out_at_end`]). The QP retries at each expiry of its timer
    /// until the count is used up, and the expiry after the last retry fails it (IBA vol. 1
    /// §9.7.6.1.3): only a trace running on past the next expiry (plus the delivery bound)
    /// with no retry shows it failed. One that ends sooner may be a run cut short while the
    /// QP retried, or before that last expiry — even with the count used up, a trace ending
    /// with the last retry looks the same. With adaptive retransmission the next timeout is
    /// unknown (Lumina §6.3: NVIDIA's run below and above the configured, 5.6 ms to 134 ms
    /// for `timeout` 14's first seven, and 8–13 tries for `retry_cnt` 7): `None`, as with a
    /// copy missing (it may have been a retry or progress).
    fn retries_ran_out(&self) -> Option<bool> {
        if self.stats.retries_exhausted_by_ns.is_some() {
            return Some(true);
        }
        let t = self.p.timeout_ns.filter(|_| !self.unseen.between(None, u64::MAX))?;
        if self.tx.rnr_pending.is_some() {
            return None; // it waits for its RNR timer, which the trace does not give
        }
        let started = self.timer.latest_start(self.way_back()).map(Start::ts);
        let start = [self.last_request_ts, started].into_iter().flatten().reduce(latest)?;
        let next_retry = ts_add(ts_add(start, t), self.delivery_ns());
        self.p.trace_end_ns.filter(|&end| later(end, next_retry)).map(|_| true)
    }

    fn flag(&mut self, kind: ViolationKind, at: Evidence, expected: Option<u32>, message: String) {
        self.flag_unless(false, kind, at, expected, message);
    }

    /// Flags a violation, unless `excused`: a copy missing from the trace may hold what
    /// explains it; then it is kept as unverifiable.
    fn flag_unless(&mut self, excused: bool, kind: ViolationKind, at: Evidence, expected: Option<u32>, m: String) {
        let v = Violation {
            conn: self.p.conn,
            kind,
            seq: at.seq,
            switch_ts_ns: at.switch_ts_ns,
            psn: at.psn,
            expected,
            message: m,
        };
        match excused {
            false => self.out.push((at.order, v)),
            true => self.unverifiable.push((at.order, v)),
        }
    }

    /// Whether a copy is missing since the data receiver last took a packet in order:
    /// what it knew since may have changed unseen.
    fn unseen_since_in_order(&self, r: &Record) -> bool {
        self.unseen.between(self.rx.last_in_order.map(|e| e.order), r.seq())
    }

    /// Whether a copy is missing since the last packet toward the data sender (ACK/NAK;
    /// READ: request) before `r`: one the trace does not show may have reached it.
    fn unseen_since_toward_sender(&self, r: &Record) -> bool {
        self.unseen.between(self.since[TOWARD_SENDER].last(), r.seq())
    }

    /// The data receiver asks again for `p`, which it was taken to have received unseen:
    /// that copy was a drop after all. It expects `p` again, and this NAK (or repeated READ
    /// request) for it is outstanding: until `p` arrives, an out-of-sequence arrival calls
    /// for no new one. True if so.
    fn assumed_wrongly(&mut self, p: u32) -> bool {
        let Some(i) = self.assumed.iter().rposition(|&(s, n)| psn::distance(s, p) < n) else { return false };
        self.assumed.truncate(i);
        self.rx.gbn.expect(p);
        self.rx.gbn.recovering();
        true
    }

    /// A packet from the data sender: data, or (READ) the responder's ACK/NAK.
    fn toward_receiver(&mut self, r: &Record) {
        if is_data(r, self.p.verb) {
            self.stats.data_packets += 1;
            if !delivered(r) {
                self.stats.undelivered += 1;
            }
            match self.p.verb {
                Verb::Read => self.read_response(r),
                _ => self.data_sent(r),
            }
            if delivered(r) {
                self.data_delivered(r);
            }
        } else if self.p.verb == Verb::Read {
            self.ack_or_nak(r);
        }
    }

    /// A packet from the data receiver: ACK/NAK, or (READ) a READ request.
    fn toward_sender(&mut self, r: &Record) {
        if self.p.verb == Verb::Read {
            if is_read_request(r) {
                self.read_request(r);
            }
        } else {
            self.ack_or_nak(r);
        }
    }

    fn ack_or_nak(&mut self, r: &Record) {
        if is_ack(r) {
            self.ack(r);
        } else if is_rnr_nak(r) && self.p.verb != Verb::Read {
            self.rnr_nak(r);
        } else if is_seq_nak(r) {
            self.stats.naks += 1;
            match self.p.verb {
                Verb::Read => self.read_responder_nak(r),
                _ => self.nak(r),
            }
        }
    }

    fn ack(&mut self, r: &Record) {
        if let Some(prev) = self.last_ack.filter(|&a| psn::lt(r.psn(), a)) {
            let m = format!("ACK names PSN {} after an ACK named {prev}", r.psn());
            self.flag(ViolationKind::AckBackwards, Evidence::of(r), Some(prev), m);
        } else {
            self.last_ack = Some(r.psn());
        }
        if self.p.verb != Verb::Read {
            self.time_path_by_ack(r);
        }
        if delivered(r) {
            self.acknowledged(r, psn::add(r.psn(), 1));
        }
    }

    /// An ACK/NAK told the sender everything before `una` arrived: progress restarts the
    /// timer. Before any, the initial PSN is the oldest unacknowledged: a NAK naming it
    /// acknowledges nothing and restarts nothing (the IBA timer restarts on progress only).
    fn acknowledged(&mut self, r: &Record, una: u32) {
        let read = self.p.verb == Verb::Read;
        let before = self.tx.ack_una.or(self.p.ipsn);
        if before.is_none_or(|u| psn::gt(una, u)) && (read || self.taken(r, una)) {
            self.tx.ack_una = Some(una);
            if !read {
                self.timer.restart_heard(self.left_ts(r), una);
            }
        }
    }

    /// Whether the requester took progress `r`: not once its QP had failed.
    fn taken(&mut self, r: &Record, una: u32) -> bool {
        self.stats.retries_exhausted_by_ns.is_none() && self.progress_heard(r, una)
    }

    /// WRITE/SEND: a NAK from the responder. Every copy counts for the receiver (it sent
    /// it); only a delivered one tells the sender anything.
    fn nak(&mut self, r: &Record) {
        let at = Evidence::of(r);
        self.time_path_by_nak(r);
        let wrongly = self.assumed_wrongly(r.psn());
        let excused = wrongly || self.unseen_since_in_order(r);
        match self.answer_episode(r.psn()) {
            Answer::Matched => {}
            Answer::Wrong(e) => {
                let m = format!(
                    "NAK names PSN {} but the first missing PSN was {} (out-of-sequence PSN {} at seq {})",
                    r.psn(),
                    e.lost,
                    e.cause.psn,
                    e.cause.seq
                );
                self.flag_unless(excused, ViolationKind::NakWrongPsn, at, Some(e.lost), m);
            }
            Answer::AlreadyAnswered(lost) => {
                let m = format!("second NAK (PSN {}) while the NAK for missing PSN {lost} is outstanding", r.psn());
                self.flag_unless(excused, ViolationKind::MultipleOutstandingNaks, at, Some(lost), m);
            }
            Answer::NoEpisode => {
                let m = format!("NAK for PSN {} without an out-of-sequence arrival to answer", r.psn());
                self.flag_unless(excused, ViolationKind::UnexpectedNak, at, self.rx.epsn(), m);
            }
        }
        if delivered(r) && self.failed_before(r) {
            self.stats.naks_ignored += 1; // a failed QP takes nothing, nor counts it
        } else if delivered(r) {
            if !self.heard_later() {
                self.nak_taken(self.left_ts(r)); // else when heard ([`Self::hear_pending`])
            }
            self.acknowledged(r, r.psn());
            if self.tx.nak_pending.len() == MAX_HOLES {
                self.tx.nak_pending.pop_front();
            }
            self.tx.nak_pending.push_back(r.psn());
        }
    }

    /// WRITE/SEND: an RNR NAK. The responder did not accept its PSN (nor what followed),
    /// so it expects that PSN again; the sender resends from it after the RNR timer.
    fn rnr_nak(&mut self, r: &Record) {
        self.stats.rnr_naks += 1;
        self.rx.gbn.expect(r.psn());
        self.rx.open = None;
        // Out-of-sequence arrivals after the PSN turned away were no gaps to the responder,
        // which went back to expecting it (it may discard them silently, or NAK that PSN).
        self.rx.awaiting.retain(|e| !psn::gt(e.lost, r.psn()));
        if delivered(r) {
            self.acknowledged(r, r.psn());
            self.tx.rnr_pending = Some(r.psn());
        }
    }

    /// WRITE/SEND: a NAK naming a waiting episode's first missing PSN: the time from the
    /// out-of-sequence arrival that caused it is a round trip through the responder (plus
    /// its NAK generation) — often the first the trace shows, before any go-back.
    fn time_path_by_nak(&mut self, r: &Record) {
        let Some(cause) = self.rx.awaiting.iter().find(|e| e.lost == r.psn()).map(|e| e.cause) else {
            return;
        };
        self.note_path(cause, r, Reply::Nak);
    }

    /// Matches a NAK naming `named` to the episode it answers: the waiting episode it
    /// names (NAKs of losses close together may pass each other), else the oldest.
    fn answer_episode(&mut self, named: u32) -> Answer {
        let rx = &mut self.rx;
        let hit = rx.awaiting.iter().position(|e| e.lost == named);
        let episode = rx.awaiting.remove(hit.unwrap_or(0));
        let Some(e) = episode else {
            return match self.rx.open {
                Some((_, true)) => Answer::AlreadyAnswered(self.rx.epsn().unwrap_or(named)),
                _ => Answer::NoEpisode,
            };
        };
        if let Some((id, seen)) = self.rx.open.as_mut() {
            if *id == e.id {
                *seen = true;
            }
        }
        if hit.is_some() {
            Answer::Matched
        } else {
            Answer::Wrong(e)
        }
    }

    /// An episode got no NAK. Its NAK is on the wire by the time the gap is filled, so a
    /// copy missing from its cause to then (to the end, while open) may have been it.
    fn missing_nak(&mut self, e: &Episode, why: &str) {
        let excused = e.unseen_before || self.unseen.between(Some(e.cause.order), e.closed_at.unwrap_or(u64::MAX));
        let state = if e.closed { "the gap was filled without one" } else { "the gap is still open" };
        let m = format!(
            "out-of-sequence PSN {} (expected {}) got no {}: {state}; {why}",
            e.cause.psn,
            e.lost,
            if self.p.verb == Verb::Read { "repeated READ request" } else { "NAK" }
        );
        self.flag_unless(excused, ViolationKind::MissingNak, e.cause, Some(e.lost), m);
    }

    /// A delivered data packet at the data receiver.
    fn data_delivered(&mut self, r: &Record) {
        let p = r.psn();
        if let Some((from, to)) = self.catch_up.take() {
            if self.rx.epsn() == Some(from) {
                self.rx.gbn.expect(to);
                if self.assumed.len() == MAX_HOLES {
                    self.assumed.pop_front();
                }
                self.assumed.push_back((from, psn::distance(from, to)));
            }
        }
        match self.rx.epsn() {
            Some(epsn) if self.p.verb != Verb::Read => self.count_request(p, epsn),
            _ => {}
        }
        if self.p.verb == Verb::Read && self.failed_before(r) {
            return; // a failed requester takes no response, nor finds a gap
        }
        match self.rx.gbn.arrive(p) {
            Arrival::InOrder => {
                self.rx.last_in_order = Some(self.evidence_left(r));
                if self.p.verb == Verb::Read {
                    self.taken(r, psn::add(p, 1));
                }
                if self.p.verb == Verb::Read {
                    self.timer.restart_heard(self.left_ts(r), psn::add(p, 1));
                    self.note_in_order(r);
                    self.rx.repeat_for = None;
                }
                if let Some((id, _)) = self.rx.open.take() {
                    self.close_episode(id, r.seq());
                }
            }
            Arrival::Gap { missing } => self.open_episode(r, missing),
            Arrival::First | Arrival::Ignored => {}
        }
    }

    /// The gap of episode `id` is filled. READ: by a response to a request sent before the
    /// gap showed (a repeat already on its way), it needed no repeat of its own.
    fn close_episode(&mut self, id: u64, at: u64) {
        let Some(i) = self.rx.awaiting.iter().rposition(|e| e.id == id) else { return };
        let asked_before = |e: &Episode| self.read.answering.is_some_and(|asked| asked < e.cause.order);
        if self.p.verb == Verb::Read && asked_before(&self.rx.awaiting[i]) {
            self.rx.awaiting.remove(i);
        } else if self.rx.awaiting[i].overtaken.is_some() {
            // The timer's go-back filled it: no NAK will come.
            if let Some(e) = self.rx.awaiting.remove(i) {
                self.nak_overtaken(&e);
            }
        } else {
            (self.rx.awaiting[i].closed, self.rx.awaiting[i].closed_at) = (true, Some(at));
        }
    }

    /// READ: how long before a request a response may have passed the switch and still not
    /// have reached the requester when it sent the request: [`IN_FLIGHT_NS`] on a lab rack,
    /// more on the longer paths (cables, slow links) the trace shows.
    fn in_flight_ns(&self) -> u64 {
        IN_FLIGHT_NS + self.path_ns.unwrap_or(0)
    }

    /// How long after progress's copy (an ACK, READ: a response) a go-back's copy may still
    /// come from before the requester heard of it: the way to the requester plus the
    /// go-back's way back, serialisation included. [`DELIVERY_NS`] on a lab rack; over
    /// long cables or slow links (a 1 Gb/s link serialises a 1 KiB packet in 8 µs each
    /// way) the round trip the trace shows, which spans the same links and switch.
    fn delivery_ns(&self) -> u64 {
        DELIVERY_NS.max(self.path_ns.unwrap_or(0))
    }

    /// From a copy toward the requester to the copy of what the requester sends once it
    /// arrived: the way to the requester and back. The trace times only the way through the
    /// responder, over the same switch and links, plus its turnaround and any queueing;
    /// half the shortest such round trip by a prompt reply is taken (Lumina §4: the switch's
    /// timestamps are half a round trip off each end's), short of the way back even on a
    /// loaded slow path, and a few hundred ns on a lab rack.
    fn return_ns(&self) -> u64 {
        self.reply_ns.unwrap_or(0) / 2
    }

    /// [`Self::return_ns`], and the same through NAKs too (less the responder NIC's longest
    /// NAK generation, [`WRITE_NAK_NS`]) to tell a timer that expired before progress
    /// arrived: often the only round trip timed before the first go-back.
    fn way_back(&self) -> Return {
        let through_nak = self.nak_ns.zip(self.p.write_nak_ns).map_or(0, |(n, g)| n.saturating_sub(g) / 2);
        let lapse_ns = self.return_ns().max(through_nak);
        Return { return_ns: self.return_ns(), lapse_ns, max_lapse_ns: self.delivery_ns().max(lapse_ns) }
    }

    /// Keeps the shortest request-to-reply time seen as the path's round trip: from when the
    /// request left the port toward the responder. A reply whose copy came before that (as
    /// the port is modelled) answers an earlier copy, one the trace lacks — the ACK of a
    /// first transmission whose copy was missing, taken for its resend's — and is timed from
    /// the request's copy, as before the port was modelled (lossy queueing sweep cases 5389,
    /// where the negative round trip was years on the 48-bit clock, and 5445, where none
    /// at all left the way back untimed).
    fn note_path(&mut self, asked: Evidence, r: &Record, reply: Reply) {
        let from = if later(asked.left_ns, r.switch_ts_ns) { asked.switch_ts_ns } else { asked.left_ns };
        let t = elapsed(from, r.switch_ts_ns);
        let keep = |v: &mut Option<u64>| *v = Some(v.map_or(t, |p| p.min(t)));
        keep(&mut self.path_ns);
        match reply {
            Reply::Prompt => keep(&mut self.reply_ns),
            Reply::Nak => keep(&mut self.nak_ns),
            Reply::Unknown => {}
        }
    }

    /// READ: remembers the in-order responses of the last [`Self::in_flight_ns`].
    /// Kept by when each left the switch toward the requester ([`Self::left_ts`]): in trace
    /// order, as the port toward it is a FIFO. One is forgotten once a window has passed
    /// since by the copies' clock (a request later in the trace is no earlier), not by
    /// when later responses left: the port may hold them long after.
    fn note_in_order(&mut self, r: &Record) {
        let (window, heard, now) = (self.in_flight_ns(), self.left_ts(r), r.switch_ts_ns);
        let recent = &mut self.rx.recent;
        while recent.front().is_some_and(|&(_, ts)| !within(ts, now, window)) {
            recent.pop_front();
        }
        if recent.len() == MAX_PENDING {
            self.rx.forgotten = recent.pop_front().map(|(_, ts)| ts);
        }
        recent.push_back((r.psn(), heard));
    }

    fn open_episode(&mut self, r: &Record, lost: u32) {
        // READ: the response that showed the gap may have reached the requester after the
        // expiry that may have failed its QP (`retries_maybe_exhausted_by_ns`), which then
        // found no gap: a maybe episode, until a repeat answers it (random queued run 965).
        let cause = self.evidence_left(r);
        let after_failure = self.stats.retries_maybe_exhausted_by_ns.is_some_and(|by| !later(by, cause.left_ns));
        let doubted = self.p.verb == Verb::Read && after_failure;
        if doubted {
            self.stats.maybe_ooo_episodes += 1;
        } else {
            self.stats.ooo_episodes += 1;
        }
        let id = self.rx.next_id;
        self.rx.next_id += 1;
        self.rx.open = Some((id, false));
        if self.rx.awaiting.len() == MAX_PENDING {
            if let Some(e) = self.rx.awaiting.pop_front() {
                self.missing_nak(&e, "too many losses went unanswered");
            }
        }
        let (unseen_before, after) = (self.unseen_since_in_order(r), self.rx.last_in_order);
        self.rx.awaiting.push_back(Episode {
            id,
            lost,
            cause,
            closed: false,
            closed_at: None,
            unseen_before,
            after,
            overtaken: None,
            doubted,
        });
    }

    /// WRITE/SEND: a data packet as the requester sent it.
    fn data_sent(&mut self, r: &Record) {
        let p = r.psn();
        self.request_sent(r);
        let (Some(h), Some(last)) = (self.tx.highest, self.tx.last) else {
            (self.tx.highest, self.tx.last) = (Some(p), Some(p));
            self.note_fresh(r);
            return;
        };
        let next_new = psn::add(h, 1);
        if self.fills_hole(p) {
            return;
        }
        if self.tx.ack_una.is_none_or(|u| u == next_new) && p == next_new {
            self.count_silent_expiry(Some(r.switch_ts_ns));
            self.timer.arm(r, next_new, self.delivery_ns()); // nothing was outstanding
        }
        if psn::le(p, last) {
            self.go_back_past_unacknowledged(r);
            self.timer.missed(p, r);
            self.resent(p);
            self.go_back(r);
        } else if psn::gt(p, next_new) && psn::distance(next_new, p) as u64 <= self.gap {
            self.catch_up_with(r, next_new);
        } else if psn::gt(p, next_new) {
            let m = format!("PSN {p} sent before {} was ever sent", psn_range(next_new, psn::sub(p, 1)));
            self.flag(ViolationKind::OooData, Evidence::of(r), Some(next_new), m);
            self.add_hole(next_new, psn::distance(next_new, p));
        } else if p != psn::add(last, 1) && !self.tx.ack_una.is_some_and(|u| psn::le(p, u)) {
            let from = psn::add(last, 1);
            if psn::distance(from, p) as u64 <= self.gap {
                self.catch_up_with(r, from);
            } else {
                // What a catch-up took as sent unseen may instead have come late (out-of-order
                // data), and the resend taken as a go-back been that late first copy: the skip
                // may be none (sweep seed 330 with copies lost).
                let excused = self.tx.caught_up.is_some_and(|(a, b)| psn::distance(a, from) <= psn::distance(a, b));
                let m =
                    format!("PSN {p} follows PSN {last}: skips {}, not acknowledged", psn_range(from, psn::sub(p, 1)));
                self.flag_unless(excused, ViolationKind::OooData, Evidence::of(r), Some(from), m);
            }
        } else if p != psn::add(last, 1) {
            self.acknowledged_unseen(p);
        } else if psn::le(p, h)
            && self.tx.ack_una == Some(p)
            && self.timer.surely_expired_unheard(r, self.p.timeout_ns, self.delivery_ns())
        {
            // The timer's go-back, moved on to `p` by the progress that crossed its expiry.
            self.count_go_back_as(r, true);
        }
        if psn::le(p, h) {
            self.stats.retransmitted_packets += 1;
            self.resent_copy(r);
        }
        self.tx.last = Some(p);
        if psn::gt(p, h) {
            self.tx.highest = Some(p);
            self.note_fresh(r);
        }
        if self.tx.caught_up.is_some_and(|(_, b)| psn::gt(p, b)) {
            self.tx.caught_up = None; // the sender went on past it: that doubt is over
        }
    }

    /// WRITE/SEND: a go-back to `p` sends the first transmissions from `p` again.
    fn resent(&mut self, p: u32) {
        for f in self.tx.fresh.iter_mut().filter(|f| psn::ge(f.psn, p) && !f.lost) {
            f.again = true;
        }
    }

    /// WRITE/SEND: a retransmission `r` of a first transmission an event dropped or
    /// corrupted: the first the ACK may answer.
    fn resent_copy(&mut self, r: &Record) {
        let sent = self.evidence_left(r);
        if let Some(f) = self.tx.fresh.iter_mut().find(|f| f.psn == r.psn() && f.lost) {
            (f.sent, f.lost) = (sent, !delivered(r));
        }
    }

    /// WRITE/SEND: a first transmission, to time the path by the ACK that names it.
    fn note_fresh(&mut self, r: &Record) {
        if self.tx.fresh.len() == MAX_HOLES {
            self.tx.fresh.pop_front();
        }
        let sent = self.evidence_left(r);
        self.tx.fresh.push_back(Fresh { psn: r.psn(), sent, lost: !delivered(r), again: false });
    }

    /// WRITE/SEND: an ACK naming a first transmission still remembered: the time between
    /// their copies is a round trip through the responder — from the first copy that
    /// reached it (a retransmission after a drop), a prompt reply unless it may answer a
    /// copy sent again later (a retransmission's copy would be later than the one it
    /// acknowledges, so only first ones count).
    fn time_path_by_ack(&mut self, r: &Record) {
        let Some(i) = self.tx.fresh.iter().position(|f| f.psn == r.psn()) else { return };
        let f = self.tx.fresh[i];
        self.tx.fresh.drain(..=i);
        if !f.lost {
            self.note_path(f.sent, r, if f.again { Reply::Unknown } else { Reply::Prompt });
        }
    }

    /// Data PSNs `first..r.psn()` were never seen, right after a copy went missing: they
    /// are taken as sent and delivered with their copies missing.
    /// The PSNs the sender skipped on its way to `p` were acknowledged (their copies are
    /// missing: go-back copies sent unseen): the receiver had them all, so it expects `p`.
    fn acknowledged_unseen(&mut self, p: u32) {
        if self.rx.epsn().is_some_and(|e| psn::gt(p, e)) {
            self.rx.gbn.expect(p);
        }
    }

    fn catch_up_with(&mut self, r: &Record, first: u32) {
        self.stats.caught_up += 1;
        self.catch_up = Some((first, r.psn()));
        self.tx.caught_up = Some((first, r.psn()));
        let m = format!("PSN {} sent before {} was seen", r.psn(), psn_range(first, psn::sub(r.psn(), 1)));
        self.flag_unless(true, ViolationKind::OooData, Evidence::of(r), Some(first), m);
    }

    /// Go-back-N resends from the oldest PSN not acknowledged: a go-back that starts after
    /// it leaves data the sender cannot know arrived. Unless an ACK's copy is missing
    /// since the last one seen (the sender knew more than the trace shows).
    fn go_back_past_unacknowledged(&mut self, r: &Record) {
        let p = r.psn();
        let Some(una) = self.tx.ack_una.filter(|&u| psn::gt(p, u)) else { return };
        let excused = self.unseen_since_toward_sender(r);
        let m = format!("go-back to PSN {p} skips {}, never acknowledged", psn_range(una, psn::sub(p, 1)));
        self.flag_unless(excused, ViolationKind::OooData, Evidence::of(r), Some(una), m);
    }

    /// A go-back to `r`'s PSN: it answers the oldest pending NAK whose go-back resumes
    /// there: at the PSN it names, or at the oldest PSN unacknowledged when an ACK
    /// acknowledged that one (out-of-order data fills the gap before its NAK arrives) —
    /// as the requester knew it, so not past the trace's (later ACKs may not have arrived).
    fn go_back(&mut self, r: &Record) {
        if self.tx.rnr_pending == Some(r.psn()) {
            self.tx.rnr_pending = None;
            self.stats.rnr_retransmissions += 1;
            self.timer.restart(r);
            return;
        }
        let una = self.tx.ack_una;
        let p = r.psn();
        let resumes = |&n: &u32| n == p || psn::gt(p, n) && una.is_some_and(|u| psn::le(p, u));
        let answered = self.tx.nak_pending.iter().position(resumes);
        if let Some(i) = answered {
            self.tx.nak_pending.remove(i);
        }
        self.count_go_back(r, answered.is_some());
    }

    /// Counts a go-back by what triggered it. With the timeout known, the timer decides:
    /// before it could expire only a NAK explains the go-back (a late one, or a second
    /// go-back for the same NAK); after, the timeout fired first (a NAK still on its way
    /// is overtaken). Without it, Lumina's rule: a NAK if one explains it.
    ///
    /// On a connection whose trace shows no NAK, and lacks no copy toward the sender that
    /// may have been one, every go-back is the timer's, even one before its estimated
    /// expiry: the requester's NIC queues its own sends, so a go-back's copy may leave well
    /// after the expiry that sent it, and the timer restarted at that copy runs late by as
    /// much (queueing sweep case 726: 1.7 µs behind eight packets).
    fn count_go_back(&mut self, r: &Record, answers_nak: bool) {
        let no_nak = self.stats.naks == 0 && !self.gap_seen[TOWARD_SENDER] && !self.unseen_since_toward_sender(r);
        let timeout = match self.timer.expired(r, self.p.timeout_ns, self.delivery_ns(), self.way_back()) {
            Some(false) if no_nak => true,
            expired => expired.unwrap_or(!answers_nak),
        };
        self.count_go_back_as(r, timeout);
    }

    /// With nothing outstanding (a send that arms the timer, at `now`; the trace's end):
    /// an expiry before the last progress arrived resent nothing ([`Timer::silent_expiry`]).
    /// A QP that failed (retries exhausted) counts none.
    fn count_silent_expiry(&mut self, now: Option<u64>) {
        let (t, delivery, way) = (self.p.timeout_ns, self.delivery_ns(), self.way_back());
        let (certain, maybe) = self.timer.silent_expiry(now, t, delivery, way);
        if self.stats.retries_exhausted_by_ns.is_none() {
            self.stats.silent_timeouts += u64::from(certain);
            self.stats.maybe_silent_timeouts += u64::from(maybe && !certain);
        }
        self.count_silent_found();
    }

    /// Counts the expiries the timer found silent as it took progress in: a go-back or
    /// send came after each, so the QP was still retrying then, failed later or not.
    fn count_silent_found(&mut self) {
        let (certain, maybe) = std::mem::take(&mut self.timer.silent);
        self.stats.silent_timeouts += certain;
        self.stats.maybe_silent_timeouts += maybe;
    }

    fn count_go_back_as(&mut self, r: &Record, timeout: bool) {
        self.count_silent_found();
        if timeout {
            // It supersedes the go-backs of the NAKs pending: they are not done again.
            self.tx.nak_pending.clear();
            self.stats.timeout_retransmissions += 1;
            self.undo_reset(r);
            (self.retries, self.last_retry_ts) = (self.retries + 1, Some(r.switch_ts_ns));
            if self.first_retry.is_none() {
                let delivery = self.delivery_ns();
                // Progress heard after the go-back left (queued at the port toward the
                // requester) may have started the count over after it, unseen in this order.
                let now = r.switch_ts_ns;
                self.count_certain = self.reset_ts.is_none_or(|a| !within(a, now, delivery));
                self.first_retry = Some(r.seq());
            }
            self.timer.restart(r);
        } else {
            self.stats.nak_retransmissions += 1;
        }
    }

    /// A first transmission of a PSN a forward skip left out (already flagged there): it
    /// does not move the sender's position, unless it is the go-back a NAK asked for.
    fn fills_hole(&mut self, p: u32) -> bool {
        let Some(i) = self.tx.holes.iter().position(|&(s, n)| psn::distance(s, p) < n) else { return false };
        let (s, n) = self.tx.holes.swap_remove(i);
        let before = psn::distance(s, p);
        if before > 0 {
            self.tx.holes.push((s, before));
        }
        if n - before > 1 {
            self.tx.holes.push((psn::add(p, 1), n - before - 1));
        }
        if self.tx.nak_pending.contains(&p) {
            return false;
        }
        true
    }

    fn add_hole(&mut self, start: u32, len: u32) {
        if self.tx.holes.len() < MAX_HOLES {
            self.tx.holes.push((start, len));
        }
    }

    /// READ: a request from the requester — a new range, or a repeat. A repeat that does
    /// not take up where the previous request ended is a go-back (the READ "NAK", or a
    /// timeout) and must restart from the first missing response PSN; the requests after it
    /// repeat the other outstanding ranges in order.
    fn read_request(&mut self, r: &Record) {
        let count = self.read_count(r);
        let q = r.psn();
        self.request_sent(r);
        let repeat = self.read.sent_end.is_some_and(|end| psn::lt(q, end));
        // Request PSNs never seen, right after a copy went missing: requests whose copies
        // are missing asked for them.
        let unseen_from = self.read.sent_end.filter(|&end| self.gap > 0 && psn::gt(q, end));
        if repeat {
            self.stats.read_reissues += 1;
            if self.read.last_end != Some(q) {
                self.read_reissue(r);
            }
        } else {
            // The last response left the port toward the requester after this request's
            // copy (queued there): the requester had not heard it, and sent this one with
            // data outstanding, its timer running.
            let unheard = self.rx.recent.back().is_some_and(|&(_, heard)| later(heard, r.switch_ts_ns));
            if self.rx.epsn() == self.read.sent_end && !unheard {
                // Nothing was outstanding: the request arms the timer.
                self.count_silent_expiry(Some(r.switch_ts_ns));
                match self.read.sent_end {
                    Some(end) => self.timer.arm(r, end, self.delivery_ns()),
                    None => self.timer.restart(r),
                }
            }
            if let Some(n) = count {
                self.read.sent_end = Some(psn::add(q, n));
            }
        }
        self.read.last_end = count.map(|n| psn::add(q, n));
        if delivered(r) {
            if let Some(from) = unseen_from {
                self.requests_unseen(from, q);
            }
            self.request_received(r, count);
        }
    }

    /// READ: requests for PSNs `from..q` crossed the switch with their copies missing: the
    /// responder is taken to have received them, as one request, if it expected `from`.
    fn requests_unseen(&mut self, from: u32, q: u32) {
        if self.read.req_epsn != Some(from) {
            return;
        }
        self.read.req_epsn = Some(q);
        match self.read.current {
            // Its responses came first and were taken as an unseen request's, of unknown
            // length (`response_unexplained`): it ends at `q`, or, if its responses went
            // past `q`, it was longer and `q` repeats part of it.
            Some(j) if j.left.is_none() => {
                let left = psn::distance(j.next, q);
                self.read.current = (psn::lt(j.next, q)).then_some(Job { left: Some(left), ..j });
            }
            _ if self.read.jobs.len() < MAX_PENDING => {
                self.stats.caught_up += 1;
                let left = Some(psn::distance(from, q));
                self.read.jobs.push_back(Job {
                    next: from,
                    left,
                    asked: 0,
                    asked_at: None,
                    new_since: None,
                    optional: false,
                });
            }
            _ => {}
        }
    }

    /// PSNs a READ request covers: ⌈DMA length ÷ MTU⌉, at least 1.
    fn read_count(&self, r: &Record) -> Option<u32> {
        let mtu = self.p.mtu.filter(|&m| m > 0)?;
        r.has(flag::RETH).then(|| r.dma_len().div_ceil(mtu).max(1))
    }

    /// READ: a go-back. It answers the oldest loss still waiting for one (or is a
    /// timeout), and must restart from the requester's first missing response PSN — as
    /// the requester knew it: responses that passed the switch less than
    /// [`IN_FLIGHT_NS`] before the request may not have reached it yet.
    fn read_reissue(&mut self, r: &Record) {
        let timer = self.timer.expired(r, self.p.timeout_ns, self.delivery_ns(), self.way_back());
        // Adaptive retransmission: not the timer's if sooner than its shortest.
        let timer = timer.or_else(|| (!self.timer_may_have_sent(r)).then_some(false));
        if let Some(expiry) = self.timer.certainly_expired(r, self.p.timeout_ns, self.delivery_ns()) {
            self.drop_gaps_found_going_back(expiry);
        } else if let (Some(true), Some(start), Some(t)) = (timer, self.timer.started, self.p.timeout_ns) {
            self.doubt_gaps_found_going_back(start, t);
        }
        self.second_repeat(r, timer);
        // Until the expected response arrives, a new gap calls for no new repeat — unless
        // the responses from the PSN it asks for were on their way (in order, their copies
        // within the in-flight window): they reach the requester next, in order, and a gap
        // after them is found as any other (sweep seed 2154).
        let (window, now) = (self.in_flight_ns(), r.switch_ts_ns);
        let on_its_way = self.rx.recent.iter().any(|&(p, ts)| p == r.psn() && within(ts, now, window));
        if !on_its_way {
            self.rx.gbn.recovering();
        }
        if timer != Some(false) {
            self.flag_overdue_naks(r);
        }
        let answered = match timer {
            Some(true) => {
                if let Some(e) = self.rx.awaiting.front_mut() {
                    e.overtaken.get_or_insert(Evidence::of(r));
                }
                None
            }
            _ => self.rx.awaiting.pop_front(),
        };
        if answered.is_some_and(|e| e.doubted) {
            // A repeat answered it: the requester found the gap.
            self.stats.ooo_episodes += 1;
            self.stats.maybe_ooo_episodes -= 1;
        }
        if timer == Some(false) || answered.is_some() {
            self.rx.repeat_for = self.rx.epsn(); // a NAK (the timer's repeats are no NAKs)
        }
        if let (Some(e), Some((id, seen))) = (answered, self.rx.open.as_mut()) {
            *seen |= *id == e.id;
        }
        self.count_go_back_as(r, timer.unwrap_or(answered.is_none()));
        let Some(epsn) = self.rx.epsn() else { return };
        if r.psn() == epsn || on_its_way {
            return;
        }
        let wrongly = self.assumed_wrongly(r.psn());
        let forgotten = self.rx.forgotten.is_some_and(|ts| within(ts, now, window));
        let excused = wrongly || self.unseen_since_in_order(r) || forgotten;
        let cause = answered.map_or(String::new(), |e| {
            format!(" (out-of-sequence PSN {} at seq {} found PSN {} missing)", e.cause.psn, e.cause.seq, e.lost)
        });
        let m = format!(
            "repeated READ request starts at PSN {} but the first missing response was PSN {epsn}{cause}",
            r.psn()
        );
        self.flag_unless(excused, ViolationKind::ReadWrongRestart, Evidence::of(r), Some(epsn), m);
    }

    /// READ: the timer expired at `expiry` (on the clock of the requester's sends) and the
    /// requester went back to its oldest missing response. A gap whose first out-of-sequence
    /// response may have reached it after that (its copy within a delivery bound before),
    /// with none in order since the requester went back, came while it was going back, which
    /// starts no second retry (IBA Go-back-N; rxe: no new retry while one is started): it
    /// found no gap there, and owes no repeat (Lumina §6.1's READ NAK) for it.
    fn drop_gaps_found_going_back(&mut self, expiry: u64) {
        let bound = self.delivery_ns();
        let after_repeat = |e: &Evidence| later(ts_add(e.left_ns, bound), expiry);
        let unseen = |e: &Episode| after_repeat(&e.cause) && !e.after.is_some_and(|i| after_repeat(&i));
        // Those already doubted ([`Self::doubt_gaps_found_going_back`]) are counted maybe.
        let sure = self.rx.awaiting.iter().filter(|e| unseen(e) && !e.doubted).count() as u64;
        self.rx.awaiting.retain(|e| !unseen(e));
        self.stats.ooo_episodes -= sure;
        self.stats.maybe_ooo_episodes += sure;
    }

    /// READ: the timer, started at `start`, went back after `timeout_ns`, but not certainly
    /// when ([`Timer::certainly_expired`]: the way from the switch to the requester is not
    /// timed). A gap whose first out-of-sequence response reached the requester after the
    /// expiry by the estimated way ([`Self::return_ns`], for the progress that started the
    /// timer as for the response) came while the requester was going back, which found no
    /// gap (as [`Self::drop_gaps_found_going_back`]); before it, the requester found it and
    /// its NAK was overtaken by the timer's repeat. The estimate decides neither: a maybe
    /// episode, still waiting for its NAK.
    fn doubt_gaps_found_going_back(&mut self, start: Start, timeout_ns: u64) {
        let way = self.return_ns();
        let expiry = ts_add(start.on_send_clock(way), timeout_ns);
        let mut doubted = 0;
        for e in self.rx.awaiting.iter_mut().filter(|e| !e.doubted && e.overtaken.is_none()) {
            if later(ts_add(e.cause.left_ns, way), expiry) {
                e.doubted = true;
                doubted += 1;
            }
        }
        self.stats.ooo_episodes -= doubted;
        self.stats.maybe_ooo_episodes += doubted;
    }

    /// READ: a repeat `r` the timer may have sent comes after the NAK of the oldest gaps
    /// still waiting for one was due (Lumina §6.1: the READ NAK is the requester's repeat
    /// within its NIC's time, [`read_nak_overdue`]): they got none, whatever the timer.
    fn flag_overdue_naks(&mut self, r: &Record) {
        let Some(bound) = self.p.read_nak_ns else { return };
        let path = self.delivery_ns();
        // From when the response that showed the gap left the port toward the requester: it
        // may have queued there long after its copy (queueing sweep case 1032: 80 µs).
        let overdue = |e: &Episode| read_nak_overdue(e.cause.left_ns, r.switch_ts_ns, bound, path);
        while let Some(e) = self.rx.awaiting.front().copied().filter(overdue) {
            self.rx.awaiting.pop_front();
            if e.overtaken.is_some() {
                self.nak_overtaken(&e);
                continue;
            }
            let late = elapsed(e.cause.left_ns, r.switch_ts_ns);
            let queued = elapsed(e.cause.switch_ts_ns, e.cause.left_ns);
            let left =
                if queued > 0 { format!(" ({} queued toward the requester)", micros(queued)) } else { String::new() };
            let why = format!(
                "the repeat at seq {} came {} after it left the switch{left}, past the NIC's READ NAK bound ({} + {} to the requester and back)",
                r.wire_seq(),
                micros(late),
                micros(bound),
                micros(path)
            );
            self.missing_nak(&e, &why);
        }
    }

    /// READ: the timer's repeat came before the NAK of gap `e` was due, and none came after
    /// (the gap filled, or the NAK's time ran out): whether the NIC would have sent it in
    /// time the trace cannot tell (the timer's go-back made it moot): unverifiable.
    fn nak_overtaken(&mut self, e: &Episode) {
        let Some(t) = e.overtaken else { return };
        let m = format!(
            "out-of-sequence PSN {} (expected {}) got no repeated READ request; the timer's, at seq {}, came {} \
             later, within the NIC's READ NAK bound{}: the trace cannot tell whether one would have come{}",
            e.cause.psn,
            e.lost,
            t.seq,
            micros(elapsed(e.cause.switch_ts_ns, t.switch_ts_ns)),
            self.p.read_nak_ns.map_or(String::new(), |b| format!(" ({})", micros(b))),
            timer_hides_read_naks(self.p.timeout_ns, self.p.read_nak_ns).map_or(String::new(), |h| format!(" ({h})"))
        );
        self.flag_unless(true, ViolationKind::MissingNak, e.cause, Some(e.lost), m);
    }

    /// READ: a repeat the timer cannot have sent while an earlier NAK (a repeat the timer
    /// did not send either) for the same first missing PSN is outstanding (no response
    /// arrived in order since): a second NAK in one loss episode, as
    /// `Answer::AlreadyAnswered` for WRITE/SEND. Without any timeout it may be the
    /// timer's: not judged.
    fn second_repeat(&mut self, r: &Record, timer: Option<bool>) {
        let outstanding = self.rx.repeat_for.filter(|&p| Some(p) == self.rx.epsn());
        let Some(lost) = outstanding.filter(|_| timer == Some(false) && !self.timer_may_have_sent(r)) else { return };
        let excused = self.unseen_since_in_order(r);
        let m = format!(
            "second repeated READ request (PSN {}) while the one for missing PSN {lost} is outstanding",
            r.psn()
        );
        self.flag_unless(excused, ViolationKind::MultipleOutstandingNaks, Evidence::of(r), Some(lost), m);
    }

    /// Whether the timer may have sent `r` after all: it restarts at the requester's own
    /// sends, which the trace dates by their copies, up to a path's delay late; it runs at
    /// least its shortest timeout (adaptive retransmission's floor, Lumina §6.3).
    fn timer_may_have_sent(&self, r: &Record) -> bool {
        if self.p.timer_disabled {
            return false;
        }
        let (Some(t), Some(start)) = (self.p.shortest_timeout_ns, self.timer.started) else { return true };
        elapsed(start.ts(), r.switch_ts_ns) + self.path_ns.unwrap_or(0) >= t
    }

    /// READ: the responder received request `r`.
    fn request_received(&mut self, r: &Record, count: Option<u32>) {
        let q = r.psn();
        if let Some(epsn) = self.read.req_epsn {
            self.count_request(q, epsn);
        }
        let mut new_since = None;
        match (self.read.req_epsn, count) {
            (Some(epsn), Some(n)) if q == epsn => {
                self.read.req_epsn = Some(psn::add(q, n));
                new_since = Some(self.read.last_new.replace(r.seq()).unwrap_or(0));
            }
            // A request was lost: the responder NAKs instead of answering.
            (Some(epsn), Some(_)) if psn::gt(q, epsn) => return,
            (Some(_), Some(_)) => {}
            // Without the MTU the ranges are unknown: stop checking against them.
            _ => self.read.req_epsn = None,
        }
        if self.read.jobs.len() == MAX_PENDING {
            self.read.jobs.pop_front();
        }
        let asked_at = Some(self.evidence_left(r));
        self.read.jobs.push_back(Job { next: q, left: count, asked: r.seq(), asked_at, new_since, optional: false });
    }

    /// READ: a NAK from the responder (a READ request was lost) must name the request PSN
    /// it expected.
    fn read_responder_nak(&mut self, r: &Record) {
        if let Some(epsn) = self.read.req_epsn.filter(|&e| e != r.psn()) {
            let m = format!("NAK names PSN {} but the responder expected request PSN {epsn}", r.psn());
            let excused = self.unseen_since_toward_sender(r);
            self.flag_unless(excused, ViolationKind::NakWrongPsn, Evidence::of(r), Some(epsn), m);
        }
    }

    /// READ: a response as the responder sent it: the next of the request being answered,
    /// or the first of a request the responder received (a repeated request's re-response).
    fn read_response(&mut self, r: &Record) {
        let p = r.psn();
        // Responses before `p` that no copy showed, where as many copies went missing:
        // sent, and (if the requester was at the first of them) received, unseen. Those
        // after the previous response seen, or those the responder owed (due again after
        // a go-back: a seen response would have moved the debt on).
        let after_last = self.tx.last.map(|l| psn::add(l, 1));
        let due = self.read.current.or(self.read.jobs.iter().find(|j| !j.optional).copied()).map(|j| j.next);
        let unseen = |from: &u32| psn::gt(p, *from) && psn::distance(*from, p) as u64 <= self.gap;
        if let Some(from) = after_last.filter(unseen).or(due.filter(unseen)) {
            self.catch_up_with(r, from); // unverifiable, as WRITE's
            self.skip_responses_to(p);
        }
        if self.continue_job(p) || self.start_job(r, p) || self.response_unexplained(r) {
            self.requested_unseen(r);
        }
        if self.tx.highest.is_some_and(|h| psn::le(p, h)) {
            self.stats.retransmitted_packets += 1;
        }
        self.tx.last = Some(p);
        if self.tx.highest.is_none_or(|h| psn::gt(p, h)) {
            self.tx.highest = Some(p);
        }
    }

    /// READ: a response that continues no request and starts none received. With a
    /// request copy missing before it, that request is taken as received: a job from here.
    /// Returns whether so (the response is explained after all).
    fn response_unexplained(&mut self, r: &Record) -> bool {
        let p = r.psn();
        let expected = self.read.current.or(self.read.jobs.front().copied()).map(|j| j.next);
        let m = match expected {
            Some(e) => format!("READ response PSN {p} where PSN {e} was due: not the start of any request received"),
            None => format!("READ response PSN {p} answers no request received"),
        };
        // The request's copy is missing: before the last request seen, or after it.
        let since_request = self.unseen_since_toward_sender(r);
        let excused = self.gap_seen[TOWARD_SENDER] || since_request;
        if excused {
            self.stats.caught_up += 1;
            self.read.current =
                Job { next: p, left: None, asked: 0, asked_at: None, new_since: None, optional: false }.advance();
        }
        self.flag_unless(excused, ViolationKind::OooData, Evidence::of(r), expected, m);
        excused
    }

    /// READ: a response the responder owed (explained by a request) at or past the end of
    /// what the requester was seen to request: a request whose copy is missing asked for
    /// it, so the requester's requests reach past it, and a request for it later repeats
    /// (goes back); the responder, which had all before, received it. If nothing was
    /// outstanding then, that request armed the timer, no later than this response's copy.
    /// With a copy missing since the last request seen, it was the last request sent, as far
    /// as the trace tells: a request taking up where the one seen ended is a go-back too.
    fn requested_unseen(&mut self, r: &Record) {
        let Some(end) = self.read.sent_end.filter(|&end| psn::ge(r.psn(), end)) else { return };
        if self.rx.epsn() == Some(end) {
            self.timer.arm(r, end, self.delivery_ns());
        }
        let next = psn::add(r.psn(), 1);
        self.read.sent_end = Some(next);
        if self.read.req_epsn == Some(end) {
            self.read.req_epsn = Some(next);
        }
        if self.unseen_since_toward_sender(r) {
            self.read.last_end = Some(next);
        }
    }

    /// READ: responses before `p` of the requests being answered were sent with their
    /// copies missing: the responder's position moves to `p` if a request it owes holds it.
    fn skip_responses_to(&mut self, p: u32) {
        let holds = |j: &Job| psn::ge(p, j.next) && j.left.is_none_or(|n| psn::distance(j.next, p) < n);
        let at = |j: Job| Job { next: p, left: j.left.map(|n| n - psn::distance(j.next, p)), ..j };
        if let Some(j) = self.read.current.filter(holds) {
            self.read.current = Some(at(j));
        } else if let Some(i) = self.read.jobs.iter().position(holds) {
            self.read.current = self.read.jobs.drain(..=i).next_back().map(at);
        }
    }

    fn continue_job(&mut self, p: u32) -> bool {
        match self.read.current {
            Some(j) if j.next == p => {
                // A repeated request naming the PSN due next may be answered by the same
                // responses (coalesced), or again after them. If it asks for more, the
                // responder answers it on from here (a request's known end beats one
                // taken unseen); else it waits, optional.
                let end = |j: Job| j.left.map(|n| psn::add(j.next, n));
                let longer = |q: &Job| end(*q).is_some_and(|a| end(j).is_none_or(|b| psn::gt(a, b)));
                let k = self.read.jobs.iter().position(|q| q.next == p);
                let job = match k {
                    Some(k) if longer(&self.read.jobs[k]) => self.read.jobs.remove(k).unwrap_or(j),
                    Some(k) => {
                        self.read.jobs[k].optional = true;
                        j
                    }
                    None => j,
                };
                self.read.answering = Some(job.asked);
                self.read.current = job.advance();
                true
            }
            _ => false,
        }
    }

    /// Starts the job for a request starting at `p`: the next one, or a later one. A
    /// later one may supersede the requests before it when it goes back (the responder
    /// restarts on a repeated request); skipping ahead of a request never answered sends
    /// responses out of order.
    fn start_job(&mut self, r: &Record, p: u32) -> bool {
        let Some(i) = self.read.jobs.iter().position(|j| j.next == p) else {
            self.read.answering = None;
            return false;
        };
        let unfinished = self.read.current.filter(|c| c.left.is_some());
        let mut owed = unfinished.iter().chain(self.read.jobs.iter().take(i)).filter(|j| !j.optional);
        if let Some(skipped) = owed.find(|j| psn::lt(j.next, p)).copied() {
            let due = skipped.next;
            // Copies missing since that request (or anywhere before, for one the trace
            // caught up with): its responses may have been sent unseen, or taken for
            // another request's (review, session 21: an unseen repeat's job).
            let excused = self.unseen.between(Some(skipped.asked), r.seq());
            // Or the request answered now reached the responder before that one, its first
            // copy missing (lossy queueing sweep seed 5021).
            let earlier = self.read.jobs[i].new_since.is_some_and(|s| self.unseen.between(Some(s), skipped.asked));
            let excused = excused || earlier;
            let m = format!("READ response PSN {p} starts a later request while PSN {due} of an earlier one is unsent");
            self.flag_unless(excused, ViolationKind::OooData, Evidence::of(r), Some(due), m);
        }
        let job = self.read.jobs.drain(..=i).next_back();
        if let Some(asked) = job.and_then(|j| j.asked_at) {
            self.note_path(asked, r, Reply::Prompt);
        }
        // Repeats of the request now answered, queued before it was: answered by it, or
        // again after it.
        for q in self.read.jobs.iter_mut().filter(|q| q.next == p) {
            q.optional = true;
        }
        self.read.answering = job.map(|j| j.asked);
        self.read.current = job.and_then(Job::advance);
        true
    }

    /// The responder's view of a request packet at `p` while it expects `epsn`.
    fn count_request(&mut self, p: u32, epsn: u32) {
        if psn::gt(p, epsn) {
            self.stats.ooo_requests += 1;
        } else if psn::lt(p, epsn) {
            self.stats.duplicate_requests += 1;
        }
    }

    /// READ, end of trace: gap `e` still waits for its repeat, and the requester's QP failed
    /// (its retries exhausted) maybe before that NAK was due: the trace shows it alive only
    /// until its last request and its timer's earliest expiry (a shortest timeout after
    /// its start), and the NIC may take up to its READ NAK bound (Lumina §6.1).
    fn failed_before_nak_due(&self, e: &Episode) -> bool {
        let exhausted = self.stats.unacknowledged_at_end && !self.stats.stalled_at_end;
        let failed = exhausted || self.stats.retries_exhausted_by_ns.is_some();
        let Some(bound) = self.p.read_nak_ns.filter(|_| failed && self.p.verb == Verb::Read) else { return false };
        let path = self.delivery_ns();
        let expiry = self.timer.started.zip(self.p.shortest_timeout_ns).map(|(s, t)| match s {
            Start::Sent(x) => ts_sub(ts_add(x, t), path),
            Start::Heard(a) => ts_add(a, t),
        });
        let alive = [self.last_request_ts, expiry].into_iter().flatten().reduce(latest);
        alive.is_none_or(|a| !read_nak_overdue(e.cause.left_ns, a, bound, path))
    }

    /// End of trace: episodes still waiting for their NAK never got one.
    fn finish(&mut self) {
        self.hear_pending(None);
        self.stats.unacknowledged_at_end = match self.p.verb {
            Verb::Read => self.read.sent_end.is_some_and(|end| self.failed_epsn.unwrap_or(self.rx.epsn()) != Some(end)),
            _ => self.tx.highest.is_some_and(|h| self.tx.ack_una != Some(psn::add(h, 1))),
        };
        self.stats.stalled_at_end = self.stats.unacknowledged_at_end && self.p.timer_disabled;
        if !self.stats.unacknowledged_at_end {
            self.count_silent_expiry(None);
        }
        self.stats.retries_ran_out_at_end = match (self.stats.unacknowledged_at_end, self.stats.stalled_at_end) {
            (true, false) => self.retries_ran_out(),
            _ => Some(false),
        };
        for e in std::mem::take(&mut self.rx.awaiting) {
            if e.overtaken.is_some() {
                self.nak_overtaken(&e);
            } else if self.failed_before_nak_due(&e) {
                let m = format!(
                    "out-of-sequence PSN {} (expected {}) got no repeated READ request: the QP failed (retries \
                     exhausted) possibly before the NIC's READ NAK bound: the trace cannot tell whether one would have come",
                    e.cause.psn, e.lost
                );
                self.flag_unless(true, ViolationKind::MissingNak, e.cause, Some(e.lost), m);
            } else {
                self.missing_nak(&e, "none by the end of the trace");
            }
        }
        self.out.sort_by_key(|(order, _)| *order);
        self.unverifiable.sort_by_key(|(order, _)| *order);
    }
}

/// What a round trip through the responder was timed by: a reply it sends promptly (an
/// ACK, a first READ response), a NAK, or an ACK that may answer a later copy.
#[derive(Debug, Clone, Copy)]
enum Reply {
    Prompt,
    Nak,
    Unknown,
}

enum Answer {
    /// The NAK names its episode's first missing PSN.
    Matched,
    /// It answers the oldest waiting episode but names another PSN.
    Wrong(Episode),
    /// No episode waits: the open one was already NAKed (its first missing PSN).
    AlreadyAnswered(u32),
    NoEpisode,
}

impl Report {
    pub fn render(&self, out: &mut String) {
        // READ: the requester's NAK is a repeated request answering a loss (not one its
        // timer sent, nor the repeats of the other outstanding requests).
        let read_naks = |c: &ConnStats| if c.verb == Some(Verb::Read) { c.nak_retransmissions } else { 0 };
        let naks: u64 = self.connections.iter().map(|c| c.naks + read_naks(c)).sum();
        let timeouts: u64 = self.connections.iter().map(|c| c.timeout_retransmissions).sum();
        let _ = writeln!(
            out,
            "Go-back-N logic: {}, {} ({}, {})",
            plural(self.connections.len() as u64, "connection", "connections"),
            plural(self.violations.len() as u64, "violation", "violations"),
            plural(naks, "NAK", "NAKs"),
            plural(timeouts, "timeout retransmission", "timeout retransmissions")
        );
        if !self.unknown_verb.is_empty() {
            let _ = writeln!(out, "  not checked, verb unknown or mixed: connections {:?}", self.unknown_verb);
        }
        let failed: Vec<u32> =
            self.connections.iter().filter(|c| c.retries_exhausted_by_ns.is_some()).map(|c| c.conn).collect();
        if !failed.is_empty() {
            let _ = writeln!(
                out,
                "  retries exhausted before the next acknowledgement arrived (the QP failed): connections {failed:?}"
            );
        }
        let maybe: Vec<u32> = self
            .connections
            .iter()
            .filter(|c| c.retries_maybe_exhausted_by_ns.is_some() && c.retries_exhausted_by_ns.is_none())
            .map(|c| c.conn)
            .collect();
        if !maybe.is_empty() {
            let _ = writeln!(
                out,
                "  retries may have been exhausted before the next acknowledgement arrived (its way from the switch is not timed; the QP may have failed): connections {maybe:?}"
            );
        }
        if !self.unverifiable.is_empty() {
            let _ = writeln!(
                out,
                "  {} unverifiable: a mirror copy missing just before each, or a READ NAK not yet due when the timer went back or the QP failed, may explain it (report.json: gbn.unverifiable)",
                self.unverifiable.len()
            );
        }
        for n in &self.notes {
            let _ = writeln!(out, "  note: {n}");
        }
        render_capped(out, &self.violations, |out, v| {
            let _ = writeln!(
                out,
                "  conn {} seq {} ts {}: {}: {}",
                v.conn,
                v.seq,
                v.switch_ts_ns,
                v.kind.name(),
                v.message
            );
        });
    }

    pub fn problems(&self) -> usize {
        self.violations.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_ends_at_its_latest_copy_not_at_a_host_timed_frame() {
        let copy = |ts: u64| {
            let mut r = Record::default();
            (r.switch_ts_ns, r.flags) = (ts, flag::MIRRORED);
            r
        };
        // A PFC frame the dump host timed by its own clock (Unix ns), between two copies.
        let mut host = Record::default();
        host.switch_ts_ns = 1_764_190_000_000_000_000;
        let records = [copy(1_000_000), host, copy(2_000_000)];
        assert_eq!(trace_end_ns(&records), Some(2_000_000));
        assert_eq!(trace_end_ns(&records[1..2]), None);
    }

    #[test]
    fn a_timer_shorter_than_the_read_nak_says_what_would_show_it() {
        let e810 = Some(166_000_000); // transport's READ NAK bound for an E810
        let hint = timer_hides_read_naks(Some(4_096 << 14), e810).expect("67 ms < 166 ms");
        assert!(hint.contains("min-retransmit-timeout 16 or more"), "{hint}");
        assert_eq!(timer_hides_read_naks(Some(4_096 << 16), e810), None, "268 ms outlasts it");
        assert_eq!(timer_hides_read_naks(Some(4_096 << 14), Some(20_000)), None, "a CX5's 20 µs");
        assert_eq!(timer_hides_read_naks(None, e810), None, "no fixed timer");
    }
    use trace::record::Kind;
    use wire::mirror::Event;

    /// `name()` (a hand-written `const fn`) is what report.json says.
    #[test]
    fn violation_names_are_the_report_json_names() {
        use ViolationKind::*;
        let all =
            [OooData, NakWrongPsn, MultipleOutstandingNaks, UnexpectedNak, AckBackwards, MissingNak, ReadWrongRestart];
        for kind in all {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.name());
        }
    }

    const IPSN: u32 = 100;
    const WRITE_ONLY: u8 = 0x0a;
    const READ_REQUEST: u8 = 0x0c;
    const READ_RESPONSE_ONLY: u8 = 0x10;
    const ACK: u8 = 0x11;

    /// Switch-clock spacing of consecutive packets of a [`Trace`]: far apart, unless a
    /// test moves a packet closer.
    const GAP_NS: u64 = 100_000;

    /// A hand-built trace: each packet gets the next mirror seq and a timestamp from it.
    struct Trace {
        packets: Vec<(Record, Role)>,
        timeout_ns: Option<u64>,
        read_nak_ns: Option<u64>,
        /// Seqs given to copies missing from the trace.
        missing: u64,
        timer_disabled: bool,
        /// The trace's last copy, of another connection.
        end_ns: Option<u64>,
        retry_cnt: Option<u8>,
        /// Per packet, how long the port toward the requester queued it (ns); 0 past the end.
        queued_ns: Vec<u64>,
    }

    impl Trace {
        fn new() -> Trace {
            Trace {
                packets: Vec::new(),
                timeout_ns: None,
                read_nak_ns: None,
                missing: 0,
                timer_disabled: false,
                end_ns: None,
                retry_cnt: None,
                queued_ns: Vec::new(),
            }
        }
        /// The next packet's copy is missing from the trace.
        fn unseen(&mut self) {
            self.missing += 1;
        }
        fn push(&mut self, opcode: u8, kind: Kind, p: u32, to: Role) -> &mut Record {
            let seq = self.packets.len() as u64 + self.missing + 1;
            let mut r = Record::default().with_seq(seq).with_psn(p).with_opcode(opcode).with_kind(kind);
            r.switch_ts_ns = GAP_NS * seq;
            self.packets.push((r, to));
            &mut self.packets.last_mut().unwrap().0
        }
        fn last_seq(&self) -> u32 {
            self.packets.last().map_or(0, |(r, _)| r.wire_seq())
        }
        /// WRITE data, requester → responder.
        fn data(&mut self, p: u32) -> &mut Record {
            self.push(WRITE_ONLY, Kind::Request, p, Role::Responder)
        }
        fn dropped(&mut self, p: u32) {
            let r = self.data(p);
            *r = r.with_event(Event::Drop);
        }
        fn aeth(&mut self, p: u32, syndrome: u8, to: Role) -> &mut Record {
            let r = self.push(ACK, Kind::Response, p, to);
            *r = r.with_aeth(syndrome, 0);
            r
        }
        fn ack(&mut self, p: u32) {
            self.aeth(p, 0x1f, Role::Requester);
        }
        fn nak(&mut self, p: u32) -> &mut Record {
            self.aeth(p, 0x60, Role::Requester)
        }
        /// READ request for `n` packets of 1024 B, requester → responder.
        fn read_request(&mut self, p: u32, n: u32) {
            let r = self.push(READ_REQUEST, Kind::Request, p, Role::Responder);
            *r = r.with_reth(n * 1024);
        }
        fn response(&mut self, p: u32) -> &mut Record {
            self.push(READ_RESPONSE_ONLY, Kind::Response, p, Role::Requester)
        }
        fn dropped_response(&mut self, p: u32) {
            let r = self.response(p);
            *r = r.with_event(Event::Drop);
        }
        /// Sets the packets' switch times, in order.
        fn timed(&mut self, ts: &[u64]) {
            for ((r, _), &ts) in self.packets.iter_mut().zip(ts) {
                r.switch_ts_ns = ts;
            }
        }

        fn check(&self, verb: Verb) -> (ConnStats, Vec<Violation>) {
            self.check_from(verb, IPSN)
        }
        fn check_from(&self, verb: Verb, ipsn: u32) -> (ConnStats, Vec<Violation>) {
            let c = self.check_all(verb, ipsn);
            (c.stats, c.violations)
        }
        fn check_all(&self, verb: Verb, ipsn: u32) -> Checked {
            let (timeout_ns, read_nak_ns) = (self.timeout_ns, self.read_nak_ns);
            let (mtu, write_nak_ns) = (Some(1024), None);
            let retry_cnt = self.retry_cnt;
            let shortest_timeout_ns = timeout_ns;
            let params = Params {
                conn: 3,
                verb,
                ipsn: Some(ipsn),
                mtu,
                timeout_ns,
                shortest_timeout_ns,
                timer_disabled: self.timer_disabled,
                read_nak_ns,
                write_nak_ns,
                retry_cnt,
                trace_end_ns: self.end_ns.or(self.packets.last().map(|(r, _)| r.switch_ts_ns)),
            };
            let records: Vec<Record> = self.packets.iter().map(|(r, _)| *r).collect();
            let mut unseen = Unseen::of(&records);
            if records.first().is_some_and(|r| r.seq() > 1) {
                unseen.lost_before_first();
            }
            let queued = |i: usize| self.queued_ns.get(i).copied().unwrap_or(0);
            check_connection(
                &params,
                &unseen,
                self.packets.iter().enumerate().map(|(i, (r, role))| (r, *role, queued(i))),
            )
        }
    }

    fn kinds(v: &[Violation]) -> Vec<(ViolationKind, u32)> {
        v.iter().map(|v| (v.kind, v.seq)).collect()
    }

    #[test]
    fn in_order_transfer_is_clean() {
        let mut t = Trace::new();
        for p in IPSN..IPSN + 8 {
            t.data(p);
        }
        t.ack(IPSN + 3);
        t.ack(IPSN + 7);
        let (stats, v) = t.check(Verb::Write);
        assert_eq!(v, []);
        assert_eq!((stats.conn, stats.data_packets, stats.retransmitted_packets, stats.ooo_episodes), (3, 8, 0, 0));
    }

    #[test]
    fn nak_and_go_back_is_clean_and_counted() {
        let mut t = Trace::new();
        t.data(100);
        t.dropped(101);
        t.data(102); // out of sequence: the episode opens, expecting 101
        t.data(103);
        t.nak(101);
        t.data(104); // sent before the NAK arrived
        for p in 101..=104 {
            t.data(p);
        }
        t.ack(104);
        let (s, v) = t.check(Verb::Send);
        assert_eq!(v, []);
        assert_eq!((s.naks, s.nak_retransmissions, s.timeout_retransmissions, s.ooo_episodes), (1, 1, 0, 1));
        assert_eq!((s.undelivered, s.retransmitted_packets), (1, 4));
    }

    #[test]
    fn the_responder_counts_requests_ahead_and_behind_across_the_wrap() {
        // Sent ffffff, 0 (dropped), 1, 2; NAK 0; go back to 0, 1, 2 and a stale ffffff.
        let mut t = Trace::new();
        t.data(psn::MASK);
        t.dropped(0);
        t.data(1);
        t.data(2);
        t.nak(0);
        for p in [0, 1, 2, psn::MASK] {
            t.data(p);
        }
        let (s, _) = t.check_from(Verb::Write, psn::MASK);
        assert_eq!((s.ooo_requests, s.duplicate_requests), (2, 1));
        assert!(s.unacknowledged_at_end, "nothing after the NAK was acknowledged");
        t.ack(2);
        let (s, _) = t.check_from(Verb::Write, psn::MASK);
        assert!(!s.unacknowledged_at_end);
    }

    /// `timeout` 0 disables the timer (IBA vol. 1 §9.7.6.1.3): a tail never acknowledged
    /// leaves the QP stalled, not failed — no `req_transport_retries_exceeded` for it.
    #[test]
    fn unacknowledged_data_with_the_timer_disabled_is_a_stall() {
        let mut t = Trace::new();
        t.data(100);
        t.dropped(101);
        for timer_disabled in [false, true] {
            t.timer_disabled = timer_disabled;
            let (s, v) = t.check(Verb::Write);
            assert_eq!(v, []);
            assert!(s.unacknowledged_at_end);
            assert_eq!(s.stalled_at_end, timer_disabled);
            // A running timer may still fail the QP after the trace's end: unknown, not
            // counted; a disabled one never does.
            assert_eq!(s.retries_ran_out_at_end, if timer_disabled { Some(false) } else { None });
            assert_eq!(crate::analyze::counters::retries_exceeded(&s), 0);
        }
    }

    #[test]
    fn nak_for_the_wrong_psn() {
        let mut t = Trace::new();
        t.data(100);
        t.dropped(101);
        t.data(102);
        t.nak(102);
        let seq = t.last_seq();
        let (_, v) = t.check(Verb::Write);
        assert_eq!(kinds(&v), [(ViolationKind::NakWrongPsn, seq)]);
        assert_eq!(
            (v[0].conn, v[0].psn, v[0].expected, v[0].switch_ts_ns),
            (3, 102, Some(101), GAP_NS * u64::from(seq))
        );
    }

    #[test]
    fn naks_of_nearby_losses_may_pass_each_other() {
        // The rig's ooo-data fault again, with the two NAKs swapped on the way.
        let mut t = Trace::new();
        t.data(100);
        t.data(102); // episode 1, missing 101
        t.data(101); // closes it
        t.data(103); // the receiver dropped 102: episode 2, missing 102
        t.nak(102);
        t.nak(101);
        t.data(102);
        t.data(103);
        let (s, v) = t.check(Verb::Write);
        assert_eq!(kinds(&v), [(ViolationKind::OooData, 2)]);
        assert_eq!((s.naks, s.ooo_episodes), (2, 2));
    }

    #[test]
    fn a_second_nak_in_one_episode() {
        let mut t = Trace::new();
        t.dropped(100);
        t.data(101);
        t.nak(100);
        t.data(102);
        t.nak(100);
        let seq = t.last_seq();
        t.data(100);
        let (_, v) = t.check(Verb::Write);
        assert_eq!(kinds(&v), [(ViolationKind::MultipleOutstandingNaks, seq)]);
    }

    #[test]
    fn a_nak_without_a_loss() {
        let mut t = Trace::new();
        t.data(100);
        t.nak(100);
        let (_, v) = t.check(Verb::Write);
        assert_eq!(kinds(&v), [(ViolationKind::UnexpectedNak, 2)]);
    }

    #[test]
    fn a_loss_without_a_nak_is_flagged_at_its_cause() {
        let mut t = Trace::new();
        t.data(100);
        t.ack(100);
        t.dropped(101);
        t.data(102);
        let cause = t.last_seq();
        t.data(103);
        t.data(101); // timeout go-back fills the gap: no NAK ever came
        t.data(102);
        t.data(103);
        let (s, v) = t.check(Verb::Write);
        assert_eq!(kinds(&v), [(ViolationKind::MissingNak, cause)]);
        assert_eq!((v[0].psn, v[0].expected), (102, Some(101)));
        assert_eq!((s.timeout_retransmissions, s.nak_retransmissions), (1, 0));
    }

    #[test]
    fn a_dropped_nak_still_counts_as_sent() {
        let mut t = Trace::new();
        t.dropped(100);
        t.data(101);
        let r = t.nak(100);
        *r = r.with_event(Event::Drop);
        t.data(100); // the sender never got the NAK: a timeout
        t.data(101);
        let (s, v) = t.check(Verb::Write);
        assert_eq!(v, []);
        assert_eq!((s.naks, s.nak_retransmissions, s.timeout_retransmissions), (1, 0, 1));
    }

    #[test]
    fn a_repeated_drop_needs_one_nak_then_a_timeout() {
        let mut t = Trace::new();
        t.dropped(100);
        t.data(101);
        t.nak(100);
        t.dropped(100); // the retransmission is lost too (ITER 2)
        t.data(101); // still the same episode: no second NAK due
        t.data(100); // timeout
        t.data(101);
        let (s, v) = t.check(Verb::Write);
        assert_eq!(v, []);
        assert_eq!((s.ooo_episodes, s.nak_retransmissions, s.timeout_retransmissions), (1, 1, 1));
    }

    #[test]
    fn sending_ahead_is_out_of_order_data_once() {
        // The rig's ooo-data fault: 102 before 101, then the receiver NAKs twice.
        let mut t = Trace::new();
        t.data(100);
        t.data(102);
        let early = t.last_seq();
        t.data(101); // late first transmission: fills the gap before the NAK shows up
        t.data(103); // the receiver dropped 102: a new episode
        t.nak(101);
        t.nak(102);
        t.data(104);
        t.data(102); // go-back to the last NAK
        t.data(103);
        t.data(104);
        let (s, v) = t.check(Verb::Write);
        assert_eq!(kinds(&v), [(ViolationKind::OooData, early)]);
        assert_eq!((v[0].psn, v[0].expected), (102, Some(101)));
        assert_eq!(s.ooo_episodes, 2);
    }

    #[test]
    fn skipping_inside_a_go_back_needs_an_ack() {
        let mut t = Trace::new();
        for p in 100..106 {
            t.data(p);
        }
        t.ack(100);
        t.data(101); // timeout go-back
        t.data(104); // skips 102, 103: nothing acknowledged them
        let skip = t.last_seq();
        t.ack(105);
        t.data(101); // another go-back, then the ACK lets the sender jump to new data
        t.data(106);
        let (_, v) = t.check(Verb::Write);
        assert_eq!(kinds(&v), [(ViolationKind::OooData, skip)]);
        assert_eq!(v[0].expected, Some(102));
    }

    #[test]
    fn a_go_back_past_the_oldest_unacknowledged_psn_is_out_of_order() {
        let mut t = Trace::new();
        for p in 100..104 {
            if p == 101 {
                t.dropped(p);
            } else {
                t.data(p);
            }
        }
        t.nak(101);
        t.data(103); // 101 and 102 never acknowledged
        t.data(104);
        let (_, v) = t.check(Verb::Write);
        assert_eq!(kinds(&v), [(ViolationKind::OooData, 6)]);
        assert_eq!(v[0].expected, Some(101));
    }

    #[test]
    fn acks_must_not_go_backwards() {
        let mut t = Trace::new();
        for p in 100..104 {
            t.data(p);
        }
        t.ack(102);
        t.ack(101);
        let back = t.last_seq();
        t.ack(103);
        let (_, v) = t.check(Verb::Write);
        assert_eq!(kinds(&v), [(ViolationKind::AckBackwards, back)]);
        assert_eq!((v[0].psn, v[0].expected), (101, Some(102)));
    }

    #[test]
    fn psn_wraps_at_24_bits() {
        let ipsn = psn::MASK - 1;
        let mut t = Trace::new();
        t.data(ipsn);
        t.data(psn::MASK);
        t.dropped(0);
        t.data(1);
        t.nak(0);
        t.data(2);
        for p in 0..3 {
            t.data(p);
        }
        t.ack(2);
        let (s, v) = t.check_from(Verb::Write, ipsn);
        assert_eq!(v, []);
        assert_eq!((s.ooo_episodes, s.nak_retransmissions, s.retransmitted_packets), (1, 1, 3));
        // Across the wrap, a forward skip is still one (and the receiver never NAKed it).
        let mut t = Trace::new();
        t.data(ipsn);
        t.data(0);
        let (_, v) = t.check_from(Verb::Write, ipsn);
        assert_eq!(kinds(&v), [(ViolationKind::OooData, 2), (ViolationKind::MissingNak, 2)]);
        assert_eq!(v[0].expected, Some(psn::MASK));
    }

    #[test]
    fn read_recovery_restarts_from_the_gap() {
        let mut t = Trace::new();
        t.read_request(100, 4);
        t.response(100);
        let r = t.response(101);
        *r = r.with_event(Event::Corrupt);
        t.response(102);
        t.response(103);
        t.read_request(101, 3); // the READ "NAK"
        for p in 101..104 {
            t.response(p);
        }
        t.read_request(104, 1);
        t.response(104);
        let (s, v) = t.check(Verb::Read);
        assert_eq!(v, []);
        assert_eq!((s.read_reissues, s.nak_retransmissions, s.timeout_retransmissions), (1, 1, 0));
        assert_eq!((s.data_packets, s.undelivered, s.retransmitted_packets, s.ooo_episodes), (8, 1, 3, 1));
    }

    #[test]
    fn read_go_back_repeats_every_outstanding_request() {
        // Two requests outstanding: the go-back repeats the first from the gap, then the
        // second whole; the responder answers them in order.
        let mut t = Trace::new();
        t.read_request(100, 2);
        t.read_request(102, 2);
        t.response(100);
        t.dropped_response(101);
        t.response(102);
        t.response(103);
        t.read_request(101, 1);
        t.read_request(102, 2);
        for p in 101..104 {
            t.response(p);
        }
        let (s, v) = t.check(Verb::Read);
        assert_eq!(v, []);
        assert_eq!((s.read_reissues, s.nak_retransmissions, s.timeout_retransmissions), (2, 1, 0));
        // A response beyond the request it answers is out of order.
        t.response(104);
        let (_, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v), [(ViolationKind::OooData, t.last_seq())]);
    }

    #[test]
    fn a_read_response_skipping_an_unanswered_request_is_out_of_order() {
        let mut t = Trace::new();
        t.read_request(100, 2);
        t.read_request(102, 2);
        t.response(102); // the second request first
        let skip = t.last_seq();
        t.response(103);
        let (_, v) = t.check(Verb::Read);
        // The requester, seeing PSN 102 where 100 was due, should have repeated its request.
        assert_eq!(kinds(&v), [(ViolationKind::OooData, skip), (ViolationKind::MissingNak, skip)]);
        assert_eq!((v[0].psn, v[0].expected), (102, Some(100)));
    }

    #[test]
    fn a_repeat_naming_the_psn_due_next_is_answered_by_the_same_responses() {
        let mut t = Trace::new();
        t.read_request(100, 4);
        t.response(100);
        t.response(101);
        t.read_request(102, 2); // the timer's repeat, from the first PSN not yet received
        t.response(102);
        t.response(103);
        t.read_request(104, 2);
        t.response(104);
        t.response(105);
        let (_, v) = t.check(Verb::Read);
        assert!(!v.iter().any(|v| v.kind == ViolationKind::OooData), "{v:?}");
    }

    /// A repeat of the request being answered may be answered again (rxe) or merged into
    /// the answer in progress: either is compliant (review, session 20).
    #[test]
    fn a_repeat_of_the_request_in_progress_is_answered_once_or_never() {
        // Answered again after the responses in flight.
        let mut t = Trace::new();
        t.read_request(100, 4);
        t.response(100);
        t.response(101);
        t.read_request(102, 2); // the timer's repeat
        t.response(102); // sent before the repeat arrived
        t.response(103);
        t.response(102); // the repeat's answer
        t.response(103);
        t.read_request(104, 1);
        t.response(104);
        let (_, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v), []);
        // A duplicate of a request not yet answered, merged into its answer.
        let mut t = Trace::new();
        t.read_request(100, 4);
        t.read_request(100, 4);
        for p in 100..104 {
            t.response(p);
        }
        t.read_request(104, 1);
        t.response(104);
        let (_, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v), []);
        // A request never answered is still owed.
        let mut t = Trace::new();
        t.read_request(100, 2);
        t.read_request(102, 2);
        t.response(100);
        t.response(101);
        t.read_request(104, 1);
        t.response(104);
        let (_, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v), [(ViolationKind::OooData, 6), (ViolationKind::MissingNak, 6)]);
    }

    #[test]
    fn a_read_response_skipping_the_rest_of_its_request_is_out_of_order() {
        let mut t = Trace::new();
        t.read_request(100, 4);
        t.read_request(104, 2);
        t.response(100);
        t.response(101);
        t.response(104); // 102 and 103 never sent
        let skip = t.last_seq();
        let (_, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v).first(), Some(&(ViolationKind::OooData, skip)), "{v:?}");
        assert_eq!((v[0].psn, v[0].expected), (104, Some(102)));
    }

    #[test]
    fn read_recovery_from_the_wrong_psn() {
        let mut t = Trace::new();
        t.read_request(100, 4);
        t.response(100);
        let r = t.response(101);
        *r = r.with_event(Event::Drop);
        t.response(102);
        t.response(103);
        t.read_request(102, 2);
        let seq = t.last_seq();
        let (_, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v), [(ViolationKind::ReadWrongRestart, seq)]);
        assert_eq!((v[0].psn, v[0].expected), (102, Some(101)));
    }

    #[test]
    fn read_timeout_restart_and_out_of_order_responses() {
        let mut t = Trace::new();
        t.read_request(100, 2);
        t.response(100);
        let r = t.response(101);
        *r = r.with_event(Event::Drop); // tail loss: only a timeout recovers it
        t.read_request(101, 1);
        t.response(101);
        t.read_request(102, 2);
        t.response(103); // skips 102
        let skip = t.last_seq();
        t.response(102); // fills the gap the requester saw: no repeat was needed
        let (s, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v), [(ViolationKind::OooData, skip)]);
        assert_eq!((s.timeout_retransmissions, s.nak_retransmissions), (1, 0));
        // A timeout repeat must also restart from the first missing PSN.
        let mut t = Trace::new();
        t.read_request(100, 2);
        t.response(100);
        let r = t.response(101);
        *r = r.with_event(Event::Drop);
        t.read_request(100, 2);
        let (_, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v), [(ViolationKind::ReadWrongRestart, 4)]);
    }

    #[test]
    fn read_restart_may_miss_responses_still_in_flight() {
        // The timeout fired as responses 101, 102 were on their way to the requester: they
        // passed the switch just before its repeat from 101, which is right.
        let mut t = Trace::new();
        t.read_request(100, 3);
        t.response(100);
        t.response(101);
        t.response(102);
        t.read_request(101, 2);
        let n = t.packets.len();
        t.packets[1].0.switch_ts_ns = t.packets[0].0.switch_ts_ns + 2_000; // a lab rack
        let repeat_ts = t.packets[n - 1].0.switch_ts_ns;
        t.packets[n - 2].0.switch_ts_ns = repeat_ts - 1_000;
        t.packets[n - 3].0.switch_ts_ns = repeat_ts - 2_000;
        let (s, v) = t.check(Verb::Read);
        assert_eq!(v, []);
        assert_eq!((s.read_reissues, s.timeout_retransmissions, s.ooo_episodes), (1, 1, 0));
        // Long after them (the window: IN_FLIGHT_NS and the path the request's answer took),
        // the same repeat ignores responses the requester had.
        t.packets[n - 3].0.switch_ts_ns = repeat_ts - IN_FLIGHT_NS - 2_000;
        let (_, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v), [(ViolationKind::ReadWrongRestart, n as u32)]);
        assert_eq!(v[0].expected, Some(103));
    }

    #[test]
    fn read_loss_never_repeated() {
        let mut t = Trace::new();
        t.read_request(100, 3);
        let r = t.response(100);
        *r = r.with_event(Event::Drop);
        t.response(101);
        t.response(102);
        let (_, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v), [(ViolationKind::MissingNak, 3)]);
        assert!(v[0].message.contains("repeated READ request"), "{}", v[0].message);
    }

    /// The copies of a READ request, of two responses and of a NAK are missing from the
    /// trace: the checker follows the connection on instead of flagging what follows.
    #[test]
    fn missing_copies_make_no_violations_of_what_they_hide() {
        let mut t = Trace::new();
        t.unseen(); // request 100/4
        t.read_request(104, 8);
        for p in 100..106 {
            t.response(p);
        }
        t.unseen(); // response 106
        t.unseen(); // response 107
        t.response(108);
        t.dropped_response(109);
        t.response(110);
        t.unseen(); // the requester's repeated request from 109
        t.response(109);
        t.response(110);
        t.response(111);
        let c = t.check_all(Verb::Read, IPSN);
        assert_eq!(kinds(&c.violations), []);
        assert_eq!(c.stats.caught_up, 3, "the unseen request, the unseen responses, the unseen repeat");
        // What a missing copy may explain is kept apart, not dropped.
        // The responses caught up with (108 after 105) are kept too, as WRITE's are.
        let unverifiable =
            [(ViolationKind::OooData, 11), (ViolationKind::MissingNak, 13), (ViolationKind::OooData, 15)];
        assert_eq!(kinds(&c.unverifiable), unverifiable);

        // WRITE: data copies missing, and a NAK's.
        let mut t = Trace::new();
        t.data(100);
        t.unseen();
        t.data(102);
        t.ack(102);
        t.dropped(103);
        t.data(104);
        t.unseen(); // NAK 103
        t.data(103);
        t.data(104);
        t.ack(104);
        let c = t.check_all(Verb::Write, IPSN);
        assert_eq!(kinds(&c.violations), []);
        assert_eq!(kinds(&c.unverifiable), [(ViolationKind::OooData, 3), (ViolationKind::MissingNak, 6)]);
        // The same without the missing copies is flagged.
        let mut t = Trace::new();
        t.data(100);
        t.data(102);
        let (_, v) = t.check(Verb::Write);
        assert_eq!(kinds(&v), [(ViolationKind::OooData, 2), (ViolationKind::MissingNak, 2)]);
    }

    /// Lossy sweep seed 330: PSN 103 sent after 104 (out-of-order data) with a copy missing
    /// just before 104. The replay caught up over 103 (taken as sent unseen) and took 103's
    /// late first copy for a go-back; 105 after it then "skipped 104": a violation flagged
    /// where there was none. The catch-up may have been wrong: that skip is unverifiable.
    #[test]
    fn a_skip_over_what_a_catch_up_assumed_is_unverifiable() {
        let mut t = Trace::new();
        t.data(100);
        t.data(101);
        t.data(102);
        t.unseen(); // an ACK, as it happens
        t.data(104);
        t.data(103);
        t.data(105);
        t.ack(105);
        let c = t.check_all(Verb::Write, IPSN);
        assert_eq!(kinds(&c.violations), []);
        let msgs: Vec<_> = c.unverifiable.iter().map(|v| v.message.as_str()).collect();
        assert_eq!(
            kinds(&c.unverifiable),
            [(ViolationKind::OooData, 5), (ViolationKind::OooData, 6), (ViolationKind::OooData, 7)],
            "{msgs:#?}"
        );
        assert!(msgs[2].contains("skips PSN 104"), "{msgs:#?}");
        // Without the missing copy, 104 before 103 is flagged, and 105 follows 104.
        let mut t = Trace::new();
        for p in [100, 101, 102, 104, 103, 105] {
            t.data(p);
        }
        t.ack(105);
        let (_, v) = t.check(Verb::Write);
        let ooo: Vec<_> = kinds(&v).into_iter().filter(|k| k.0 == ViolationKind::OooData).collect();
        assert_eq!(ooo, [(ViolationKind::OooData, 4)]);
        // Once the sender went on past the catch-up, a later skip over it is flagged
        // (review, session 26: the doubt was never cleared).
        let mut t = Trace::new();
        for p in [100, 101, 102] {
            t.data(p);
        }
        t.unseen();
        for p in [104, 103, 105, 106, 107] {
            t.data(p);
        }
        t.ack(102);
        t.data(103);
        t.data(105);
        let c = t.check_all(Verb::Write, IPSN);
        let skips = |v: &[Violation]| v.iter().filter(|v| v.message.contains("skips PSN 104")).count();
        assert_eq!((skips(&c.violations), skips(&c.unverifiable)), (1, 1), "{:#?}", c.violations);
    }

    /// Lossy queueing sweep seed 5021: the copy of a READ request went missing; the
    /// requester's go-back repeated an earlier range and then that request, which looked
    /// new. The responder answered the request it had long had before the repeat: no
    /// response out of order, as the missing copy may have been that request's.
    #[test]
    fn a_request_first_seen_after_a_repeat_may_have_come_before_it_unseen() {
        let trace = |lost: bool| {
            let mut t = Trace::new();
            t.read_request(100, 4);
            if lost {
                t.unseen(); // request 104/4
            }
            t.response(100);
            t.dropped_response(101);
            t.response(102);
            t.read_request(101, 3);
            t.read_request(104, 4);
            t.response(103);
            t.response(104);
            t
        };
        let c = trace(true).check_all(Verb::Read, IPSN);
        assert_eq!(kinds(&c.violations), []);
        assert!(kinds(&c.unverifiable).contains(&(ViolationKind::OooData, 9)), "{:?}", c.unverifiable);
        let (_, v) = trace(false).check(Verb::Read);
        assert!(kinds(&v).contains(&(ViolationKind::OooData, 8)), "{v:?}");
    }

    #[test]
    fn the_timer_tells_a_late_nak_from_a_timeout() {
        // A drop whose NAK reaches the sender; with a 1 ms timeout, the go-back 0.2 ms
        // after it answers the NAK, one 1 ms after the last progress is a timeout.
        let mut t = Trace::new();
        t.timeout_ns = Some(1_000_000);
        t.dropped(100);
        t.data(101);
        t.nak(100);
        t.data(102);
        t.data(100);
        t.data(101);
        t.data(102);
        let (s, _) = t.check(Verb::Write);
        assert_eq!((s.nak_retransmissions, s.timeout_retransmissions), (1, 0));
        for (r, _) in &mut t.packets[4..] {
            r.switch_ts_ns += 1_000_000;
        }
        let (s, v) = t.check(Verb::Write);
        assert_eq!((s.nak_retransmissions, s.timeout_retransmissions), (0, 1));
        assert_eq!(v, []);
        // Without the timeout, Lumina's rule: the NAK explains it.
        t.timeout_ns = None;
        let (s, _) = t.check(Verb::Write);
        assert_eq!((s.nak_retransmissions, s.timeout_retransmissions), (1, 0));
    }

    #[test]
    fn a_repeat_for_a_response_the_full_window_forgot_is_unverifiable() {
        // Review, session 25: 1,100 responses in order, each queued 1 ms toward the
        // requester; a repeat from the first right after them had not heard them. The
        // in-flight window keeps 1,024: the first's entry was forgotten at the cap, within the
        // window, so the repeat may be right: unverifiable, not read-wrong-restart.
        let mut t = Trace::new();
        let n = 1_100;
        t.read_request(IPSN, n);
        for p in 0..n {
            t.response(IPSN + p);
        }
        t.read_request(IPSN, n);
        let ts: Vec<u64> = (0..u64::from(n) + 2).map(|i| 1_000 + 10 * i).collect();
        t.timed(&ts);
        t.queued_ns = (0..u64::from(n) + 2).map(|i| if i == 0 || i > u64::from(n) { 0 } else { 1_000_000 }).collect();
        let c = t.check_all(Verb::Read, IPSN);
        assert_eq!(c.violations, vec![]);
        let kinds: Vec<ViolationKind> = c.unverifiable.iter().map(|v| v.kind).collect();
        assert_eq!(kinds, [ViolationKind::ReadWrongRestart]);
    }

    #[test]
    fn a_send_after_the_last_expiry_shows_the_qp_alive() {
        // Review, session 25: retry_cnt 1, an 8 µs timer. The go-back at 8 µs is the one
        // retry; the expiry after it (16 µs) would fail the QP, but the requester sends new
        // data at 16.2 µs: it was alive, and the ACK at 16.3 µs completes it.
        let mut t = Trace::new();
        (t.timeout_ns, t.retry_cnt) = (Some(8_000), Some(1));
        t.data(100);
        t.data(100);
        t.data(101);
        t.ack(101);
        t.timed(&[0, 8_000, 16_200, 16_300]);
        let (s, v) = t.check(Verb::Write);
        assert_eq!((s.timeout_retransmissions, v), (1, vec![]));
        assert_eq!((s.retries_exhausted_by_ns, s.retries_maybe_exhausted_by_ns), (None, None), "{s:?}");
        assert_eq!((s.unacknowledged_at_end, s.retries_ran_out_at_end), (false, Some(false)));
    }

    #[test]
    fn retries_ran_out_only_if_the_trace_runs_past_the_next_expiry() {
        // 1 ms timeout: data never acknowledged, its timeout's go-back, then nothing. The
        // next expiry is 1 ms after the go-back: a trace ending sooner may have been cut
        // short while the QP retried (unknown); one running on past it, with no retry,
        // shows the QP had stopped (IBA vol. 1 §9.7.6.1.3).
        let mut t = Trace::new();
        t.timeout_ns = Some(1_000_000);
        t.data(100);
        t.data(100);
        t.timed(&[0, 1_000_000]);
        let ran_out = |t: &Trace| {
            let (s, v) = t.check(Verb::Write);
            assert_eq!((s.unacknowledged_at_end, s.timeout_retransmissions, v), (true, 1, vec![]));
            s.retries_ran_out_at_end
        };
        assert_eq!(ran_out(&t), None, "the trace ends with the go-back");
        t.end_ns = Some(1_900_000);
        assert_eq!(ran_out(&t), None, "the next expiry is not due yet");
        t.end_ns = Some(2_100_000);
        assert_eq!(ran_out(&t), Some(true), "no retry at the next expiry");
        t.timeout_ns = None;
        assert_eq!(ran_out(&t), None, "adaptive retransmission: the next timeout is unknown");
        t.data(101);
        t.ack(101);
        let (s, _) = t.check(Verb::Write);
        assert_eq!((s.unacknowledged_at_end, s.retries_ran_out_at_end), (false, Some(false)));
    }

    #[test]
    fn progress_a_timeout_had_not_heard_restarts_the_timer_after_its_go_back() {
        // 33 µs timeout over a path whose prompt replies take 16.9 µs: the NAK for 103 passes
        // the switch 6 µs before the timeout's go-back to 102 (which had not heard it: it
        // acknowledged 102), and restarts the timer on arrival, after that go-back; its own
        // go-back 33 µs after the timeout's copy but well within a timeout of the NAK's
        // arrival answers the NAK.
        let mut t = Trace::new();
        t.timeout_ns = Some(32_768);
        t.data(100);
        t.data(101);
        t.ack(101);
        t.data(102);
        t.dropped(103);
        t.data(104);
        t.nak(103);
        for p in [102, 103, 104, 103] {
            t.data(p);
        }
        let ts = [0, 100, 17_000, 20_000, 20_100, 20_200, 47_000, 53_000, 53_100, 53_200, 86_000];
        t.timed(&ts);
        let (s, v) = t.check(Verb::Write);
        assert_eq!(v, []);
        assert_eq!((s.nak_retransmissions, s.timeout_retransmissions), (1, 1));
    }

    #[test]
    fn a_timer_that_expired_before_progress_could_arrive_times_out() {
        // 33 µs timeout over a path whose prompt replies take 19.9 µs: the NAK for 103
        // (acknowledging 102) passes the switch 168 ns before the timer, started at 102's
        // copy, expires; it cannot reach the requester in time. The go-back, however late
        // its copy, is the timeout's (it was timed from the NAK: NAK-triggered).
        let mut t = Trace::new();
        t.timeout_ns = Some(32_768);
        t.data(100);
        t.data(101);
        t.ack(101);
        t.data(102);
        t.dropped(103);
        t.data(104);
        t.nak(103);
        t.data(103);
        let ts = [0, 100, 20_000, 25_000, 25_100, 25_200, 57_600, 78_000];
        t.timed(&ts);
        let (s, v) = t.check(Verb::Write);
        assert_eq!(v, []);
        assert_eq!((s.nak_retransmissions, s.timeout_retransmissions), (0, 1));
    }

    #[test]
    fn a_read_gap_reaching_the_requester_after_its_timer_repeated_is_no_episode() {
        // 33 µs timeout, 17.5 µs from the request's copy to its first response's: the timer
        // repeats the request 15 µs after the out-of-sequence 101 passed the switch, before
        // 101 reached the requester, which was then going back: no loss episode.
        let mut t = Trace::new();
        t.timeout_ns = Some(32_768);
        t.read_request(100, 4);
        t.dropped_response(100);
        for p in 101..=103 {
            t.response(p);
        }
        t.read_request(100, 4);
        for p in 100..=103 {
            t.response(p);
        }
        let ts = [0, 17_500, 17_600, 17_700, 17_800, 32_768, 50_000, 50_100, 50_200, 50_300];
        t.timed(&ts);
        let (s, v) = t.check(Verb::Read);
        assert_eq!(v, []);
        assert_eq!((s.ooo_episodes, s.timeout_retransmissions), (0, 1));
        // With a 40 µs timeout the timer expires after 101 surely arrived: an episode, the
        // timer's repeat (its copy late) answering it.
        t.timeout_ns = Some(40_000);
        let ts = [0, 17_500, 17_600, 17_700, 17_800, 60_000, 77_000, 77_100, 77_200, 77_300];
        t.timed(&ts);
        let (s, v) = t.check(Verb::Read);
        assert_eq!(v, []);
        assert_eq!((s.ooo_episodes, s.timeout_retransmissions), (1, 1));
    }

    #[test]
    fn an_rnr_nak_turns_its_psn_away_and_its_resend_is_no_recovery() {
        // SEND: 101 is RNR-NAKed (not accepted; 102, already on its way, neither). The
        // resend of 101 is dropped, so 102 arrives out of sequence: the responder NAKs 101.
        let mut t = Trace::new();
        for p in [100, 101, 102] {
            t.data(p);
        }
        t.aeth(101, 0x2e, Role::Requester); // RNR NAK, timer code 14
        t.dropped(101);
        t.data(102);
        let cause = t.last_seq();
        let mut compliant = Trace { packets: t.packets.clone(), read_nak_ns: None, ..Trace::new() };
        compliant.nak(101);
        for p in [101, 102] {
            compliant.data(p);
        }
        compliant.ack(102);
        let (s, v) = compliant.check(Verb::Send);
        assert_eq!(v, [], "{s:?}");
        assert_eq!((s.rnr_naks, s.rnr_retransmissions, s.nak_retransmissions, s.timeout_retransmissions), (1, 1, 1, 0));
        // Without that NAK the out-of-sequence 102 went unanswered.
        for p in [101, 102] {
            t.data(p);
        }
        t.ack(102);
        let (_, v) = t.check(Verb::Send);
        assert_eq!(kinds(&v), [(ViolationKind::MissingNak, cause)]);
    }

    #[test]
    fn gaps_after_a_psn_turned_away_wait_for_no_nak() {
        // SEND: 101 is RNR-NAKed; 102 was dropped and 103, on its way before the RNR NAK
        // reached the switch, arrived out of sequence. The responder expects 101 again and
        // discards 103 silently; the sender resends from 101 after the RNR timer.
        let mut t = Trace::new();
        t.data(100);
        t.data(101);
        t.dropped(102);
        t.data(103);
        t.aeth(101, 0x2e, Role::Requester);
        for p in [101, 102, 103] {
            t.data(p);
        }
        t.ack(103);
        let (s, v) = t.check(Verb::Send);
        assert_eq!(v, [], "{s:?}");
    }

    /// A READ loss recovered only by the timer, 900 µs after the gap showed: `timeout`
    /// restarts at response 100, 101 is dropped, 102 shows the gap, the timer repeats from
    /// 101 a timeout later. With the NIC's READ NAK bound known and shorter, no NAK came.
    fn read_loss_left_to_the_timer(read_nak_ns: Option<u64>) -> Trace {
        let mut t = Trace::new();
        (t.timeout_ns, t.read_nak_ns) = (Some(1_000_000), read_nak_ns);
        t.read_request(100, 4);
        t.response(100);
        t.dropped_response(101);
        t.response(102); // seq 4: the gap shows
        t.response(103);
        t.read_request(101, 3);
        t.packets[5].0.switch_ts_ns = t.packets[1].0.switch_ts_ns + 1_100_000;
        for p in 101..104 {
            t.response(p);
            let n = t.packets.len();
            t.packets[n - 1].0.switch_ts_ns = t.packets[n - 2].0.switch_ts_ns + 1_000;
        }
        t
    }

    #[test]
    fn a_read_loss_left_to_the_timer_got_no_nak() {
        let (s, v) = read_loss_left_to_the_timer(Some(300_000)).check(Verb::Read);
        assert_eq!(kinds(&v), [(ViolationKind::MissingNak, 4)]);
        assert_eq!((s.nak_retransmissions, s.timeout_retransmissions), (0, 1));
        // A NIC that takes longer to repeat than the timer (E810: ≈83 ms) may have been
        // overtaken, and without the bound nothing says the NAK was due: not flagged.
        for bound in [Some(166_000_000), None] {
            let (s, v) = read_loss_left_to_the_timer(bound).check(Verb::Read);
            assert_eq!((v, s.timeout_retransmissions), (vec![], 1), "{bound:?}");
        }
        // A prompt repeat, before the timer could fire, is the NAK.
        let mut t = read_loss_left_to_the_timer(Some(300_000));
        t.packets[5].0.switch_ts_ns = t.packets[4].0.switch_ts_ns + 50_000;
        let (s, v) = t.check(Verb::Read);
        assert_eq!((v, s.nak_retransmissions, s.timeout_retransmissions), (vec![], 1, 0));
    }

    #[test]
    fn a_second_read_repeat_in_one_loss_is_a_second_nak() {
        let mut t = Trace::new();
        t.timeout_ns = Some(1_000_000);
        t.read_request(100, 4);
        t.response(100);
        t.dropped_response(101);
        t.response(102);
        t.read_request(101, 3); // the READ NAK
        t.read_request(101, 3); // again, 100 µs later: the timer cannot have sent it
        let second = t.last_seq();
        for p in 101..104 {
            t.response(p);
        }
        let (_, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v), [(ViolationKind::MultipleOutstandingNaks, second)]);
        assert_eq!((v[0].psn, v[0].expected), (101, Some(101)));
        // The timer's repeat a timeout after the first is a timeout retransmission.
        let mut late = Trace { packets: t.packets.clone(), timeout_ns: t.timeout_ns, ..Trace::new() };
        for (r, _) in &mut late.packets[5..] {
            r.switch_ts_ns += 1_000_000;
        }
        let (s, v) = late.check(Verb::Read);
        assert_eq!((v, s.nak_retransmissions, s.timeout_retransmissions), (vec![], 1, 1));
        // A repeat after the first one's response arrived opens no second NAK either.
        let mut t = Trace::new();
        t.timeout_ns = Some(1_000_000);
        t.read_request(100, 4);
        t.response(100);
        t.dropped_response(101);
        t.response(102);
        t.read_request(101, 3);
        t.response(101);
        t.dropped_response(102);
        t.response(103); // a new loss: its own NAK
        t.read_request(102, 2);
        let (_, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v), []);
    }

    /// IBA C9-105 (rxe: "use the psn of the previous ack sent"): a duplicate is ACKed again
    /// with the last PSN acknowledged, never the duplicate's own, older PSN.
    #[test]
    fn a_duplicates_ack_repeats_the_last_acknowledged_psn() {
        let mut t = Trace::new();
        for p in 100..104 {
            t.data(p);
        }
        t.ack(103);
        t.data(101); // a spurious go-back: duplicates
        t.ack(103); // their ACK
        let (s, v) = t.check(Verb::Write);
        assert_eq!((v, s.duplicate_requests), (vec![], 1));
        t.ack(101); // naming the duplicate's PSN goes back
        let (_, v) = t.check(Verb::Write);
        assert_eq!(kinds(&v), [(ViolationKind::AckBackwards, t.last_seq())]);
    }

    #[test]
    fn a_longer_path_widens_the_in_flight_window() {
        // Requests take 30 µs to be answered: the switch is far from both hosts. Responses
        // 101, 102 passed the switch 20 µs before the timer's repeat from 101.
        let mut t = Trace::new();
        t.read_request(100, 3);
        t.response(100);
        t.packets[1].0.switch_ts_ns = t.packets[0].0.switch_ts_ns + 30_000;
        t.response(101);
        t.response(102);
        t.read_request(101, 2);
        let repeat_ts = t.packets[4].0.switch_ts_ns;
        t.packets[2].0.switch_ts_ns = repeat_ts - 21_000;
        t.packets[3].0.switch_ts_ns = repeat_ts - 20_000;
        let (_, v) = t.check(Verb::Read);
        assert_eq!(v, []);
        // On a lab rack (answered in 2 µs) the requester had them.
        t.packets[1].0.switch_ts_ns = t.packets[0].0.switch_ts_ns + 2_000;
        let (_, v) = t.check(Verb::Read);
        assert_eq!(kinds(&v), [(ViolationKind::ReadWrongRestart, 5)]);
    }

    #[test]
    fn render_caps_its_lines() {
        use crate::analyze::RENDER_LINES;
        let v = Violation {
            conn: 0,
            kind: ViolationKind::AckBackwards,
            seq: 9,
            switch_ts_ns: 1,
            psn: 1,
            expected: Some(2),
            message: "m".into(),
        };
        let report = Report { connections: vec![ConnStats::default()], violations: vec![v; 25], ..Report::default() };
        let mut out = String::new();
        report.render(&mut out);
        assert!(out.starts_with("Go-back-N logic: 1 connection, 25 violations"));
        assert_eq!(out.lines().count(), 1 + RENDER_LINES + 1);
        assert!(out.ends_with("... 5 more in report.json\n"));
        assert_eq!(report.problems(), 25);
        let json = serde_json::to_value(&report.violations[0]).unwrap();
        assert_eq!(json["kind"], "ack-backwards");
    }
}
