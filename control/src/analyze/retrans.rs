//! Retransmission performance (Lumina §4 "Retransmission performance", Figure 5; §6.1
//! Figures 8–9): for every loss recovery of every connection, the NACK generation latency
//! (the packet that revealed the gap → the NAK), the NACK reaction latency (NAK → first
//! retransmitted data packet) and the total retransmission latency (lost original → its
//! retransmission); for timeout recoveries (tail loss, no NAK) the timeout observed and the
//! retry count, against the configured IBA timeout 4.096 µs × 2^t. All from switch
//! timestamps.
//!
//! How a recovery is found. Go-back-N makes every recovery visible as a *go-back*: the
//! sender transmits a PSN it already sent, at or before the PSN it sent last. So each
//! connection is replayed in trace order:
//! - the data receiver is simulated by the Go-back-N rule (expected PSN; the first
//!   out-of-sequence arrival while no NAK is outstanding reveals a gap — its *cause*);
//!   dropped and corrupted packets (Lumina events 1 and 3) are not delivered;
//! - WRITE/SEND: a go-back of the data is a NACK recovery when a NAK (PSN sequence error)
//!   naming a PSN at or before it arrived since, else a timeout;
//! - READ: the requester's "NAK" is a READ request repeated from the missing PSN (§6.1). A
//!   go-back of the *requests* is a READ-NACK recovery when a gap was revealed since, else
//!   a timeout; its first retransmitted data packet is the responder's next go-back;
//! - a go-back that comes a whole configured timeout or more after the retransmission
//!   timer (re)started (IBA: at a send with none outstanding, at each acknowledgement that
//!   makes progress) is a timeout whatever NAK is pending: the timer fired first;
//!   progress that crossed the expiry on the wire (a go-back resends PSNs it acknowledged)
//!   reached the requester after it and restarted nothing;
//! - gaps, NAKs and go-backs pair up in order (first come, first served): each gap gets
//!   one NAK, each NAK schedules one go-back. Several are pending at once only when a
//!   timeout overtook a slow NACK (E810 READ, §6.1: IBA runs one retry sequence at a
//!   time, so the timeout made it moot, and its go-back, if it still comes, comes from
//!   its own PSN; no repeat from another PSN answers it) or
//!   after out-of-order data (a GBN violation: two NAKs, the later one acknowledging the
//!   PSN the earlier one names, so both go-backs resume from the later one's PSN). A
//!   go-back is the oldest pending NAK's whose PSN, or the oldest PSN unacknowledged past
//!   it, it resumes from, of those no timeout overtook; when two or more resume there the
//!   NIC may answer the later first (and the other's go-back, late, may find nothing left
//!   to resend), so which is its the trace cannot tell: each is paired in NAK order, with
//!   its NAK's generation latency, flagged `nak_ambiguous`, with no reaction latency,
//!   listing the NAKs it may answer (`nak_candidates`): the PSNs tell nothing, and only
//!   a go-back seen before the later NAK is surely the earlier one's;
//! - WRITE/SEND: a NAK answers the gap at the PSN it names, and a gap before the PSN the
//!   requester has had acknowledged is settled (a timeout recovered it, or out-of-order
//!   data filled it in order after its NAK went out), so a gap no NAK answered does not
//!   pair with a later loss's NAK; but a NAK naming exactly such a gap is its (that NAK,
//!   sent before the fill, comes after the fill's ACK). A pending NAK is not dropped that
//!   way: NICs schedule one go-back per NAK and fire it even when an acknowledgement got
//!   there first.
//!
//! Under capture loss (copies missing, `analyze::unseen`) what the trace cannot prove is
//! listed as unverifiable, never dropped and never guessed: a recovery seen only by its
//! NAK, its lost packet or part of its go-back is listed with what is known, the rest
//! null; a latency is reported only when both of its packets are known.
//!
//! Latencies are differences of 48-bit switch timestamps of mirrored copies. A timeout's
//! *observed* value runs from the last packet the retransmitting end sent before it (so
//! it can be shorter than the timer: go-back-N resends do not restart the timer);
//! `timer_elapsed_ns` runs from the timer's (re)start as the trace shows it.
//!
//! Behind a slower link the switch port toward the requester queues (`egress`): the
//! requester hears progress when the port sends it, not when its copy passed. Its timer
//! restarts then, a READ gap's NACK bound runs from when the revealing response left,
//! and progress still queued when a go-back left may not have been heard by it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use rustc_hash::{FxHashMap, FxHashSet};
use trace::record::{flag, Record};
use wire::psn;

use super::conn::{is_data, unknown_verb_note, Connection, Role};
use super::context::Verb;
use super::egress;
use super::gbn::DELIVERY_NS;
use super::transport::{
    adaptive_retrans, delivered, elapsed, ends_message, fixed_timeout_ns, iba_timeout_ns, is_ack, is_read_request,
    is_rnr_nak, is_seq_nak, is_transport, later, path_mtu, read_nak_ns, read_nak_overdue, shortest_timeout_ns,
    starts_message, starts_read_answer, timer_disabled, ts_add, ts_sub, within, Arrival, GbnReceiver,
};
use super::unseen::Unseen;
use super::{plural, render_capped, Input};

pub const PLOT_GENERATION: &str = "retrans-nack-generation.svg";
pub const PLOT_REACTION: &str = "retrans-nack-reaction.svg";
/// Pending NAKs, gaps and sender holes kept per connection: a trace that never resolves
/// them (damaged, or a misbehaving NIC) must not grow memory.
const PENDING_CAP: usize = 64;
/// READ response PSNs first seen as Middle or Last kept per connection (the latest): a
/// go-back returns to recent PSNs.
const MID_ANSWER_CAP: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryKind {
    /// NAK (PSN sequence error) → go-back: WRITE/SEND data, or a READ request the
    /// responder missed.
    Nack,
    /// READ: repeated READ request from the missing PSN → responses resent.
    ReadNack,
    /// No NAK: the retransmission timer expired.
    Timeout,
    /// Unverifiable only: the trace has a lost packet never seen resent, with copies
    /// missing after it, but neither its NAK nor its go-back.
    Unknown,
}

impl RecoveryKind {
    fn name(self) -> &'static str {
        match self {
            RecoveryKind::Nack => "nack",
            RecoveryKind::ReadNack => "read-nack",
            RecoveryKind::Timeout => "timeout",
            RecoveryKind::Unknown => "unknown",
        }
    }
}

/// A packet of the trace, as evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PacketRef {
    /// Index in the trace (record file order).
    pub index: u32,
    /// Mirror sequence number as on the wire.
    pub seq: u32,
    pub switch_ts_ns: u64,
    /// Relative PSN: 1 = the requester's initial PSN, 24-bit wrap undone (0 for CNPs).
    pub psn: u64,
    /// Trace order (unwrapped mirror seq): whether copies are missing between two.
    #[serde(skip)]
    order: u64,
}

/// One loss recovery (Lumina Figure 5).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Recovery {
    pub conn: u32,
    pub kind: RecoveryKind,
    /// Relative PSN the recovery resumed from (its first retransmission's). Unverifiable
    /// ones: the PSN the go-back must have started from when the trace tells (its NAK's;
    /// READ: its repeated request's), which may precede `first_retransmission`'s when the
    /// go-back's first copy is missing; else the first retransmission seen.
    pub psn: u64,
    /// Unverifiable ones whose go-back's first copies may be missing, where the trace does
    /// not tell the PSN it resumed from: the lowest it may be (the oldest PSN the trace saw
    /// unacknowledged, or taken as received unseen); `psn` is then the highest (its first
    /// retransmission seen's, or its lost packet's).
    pub psn_min: Option<u64>,
    /// The undelivered data packet (drop or corrupt event) it repaired, if in the trace.
    pub lost: Option<PacketRef>,
    /// The next delivered data packet, whose out-of-sequence arrival revealed the gap.
    pub revealing: Option<PacketRef>,
    /// The NAK; for READ the repeated READ request.
    pub nak: Option<PacketRef>,
    /// The first retransmitted packet: data for NACK kinds; for timeouts the requester's
    /// first resend (READ: the repeated request). Unverifiable ones: the first the trace
    /// has, later than the real first when `psn` precedes its PSN; null when the trace has
    /// none (only the NAK, say, or only the lost packet and what revealed it).
    pub first_retransmission: Option<PacketRef>,
    /// The first retransmitted data packet (differs from the above for READ timeouts).
    pub data_retransmission: Option<PacketRef>,
    /// revealing → NAK.
    pub generation_ns: Option<u64>,
    /// NAK → first retransmission; null when `nak_ambiguous`.
    pub reaction_ns: Option<u64>,
    /// The PSN the plots place it at — its lost packet's, else its first retransmission's
    /// — within that packet's message, 1 = the message's first packet (Lumina §6.1's
    /// Figures 8–9 drop "a packet with a specific relative PSN" of each message): from the
    /// message's start in the trace (a SEND/WRITE First or Only, a READ request not
    /// repeated); null when the trace does not show it, or copies are missing between the
    /// two (a later message's start may hide there).
    pub psn_in_message: Option<u64>,
    /// lost original → the first later packet with its PSN.
    pub total_ns: Option<u64>,
    pub timeout: Option<TimeoutDetail>,
    /// Another pending NAK resumed from the same PSN (out-of-order data: the later NAK
    /// acknowledges the PSN the earlier one names), or may have, unseen (then it is
    /// unverifiable), so which of them this go-back answers the trace cannot tell: `nak`
    /// (and its `revealing`, `lost`, `generation_ns`) is one of them, paired in NAK order,
    /// and `reaction_ns` is null.
    pub nak_ambiguous: bool,
    /// When `nak_ambiguous`: the mirror seqs of the NAKs seen whose go-back it may be,
    /// `nak` among them (an unseen one is not listed). Absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nak_candidates: Vec<u32>,
}

impl Recovery {
    /// The packet the plots place it at: its lost packet, else its first retransmission.
    fn plotted(&self) -> Option<PacketRef> {
        self.lost.or(self.first_retransmission)
    }

    /// Where it is in the trace: its first retransmission, failing that its earliest
    /// packet the trace has.
    fn at(&self) -> u32 {
        let earliest = [self.nak, self.revealing, self.lost].into_iter().flatten().map(|p| p.index).min();
        self.first_retransmission.map(|p| p.index).or(earliest).unwrap_or(0)
    }
}

/// One lost data packet (drop or corrupt event) and its first resend: Lumina's total
/// retransmission latency is per dropped packet, and a second loss in one window is resent
/// by the first one's go-back, with no recovery of its own.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Loss {
    pub conn: u32,
    pub lost: PacketRef,
    /// The first later packet with its PSN (in the trace: with copies missing in between,
    /// an earlier one may be unseen).
    pub retransmission: Option<PacketRef>,
    /// lost → retransmission; null when a copy is missing in between.
    pub total_ns: Option<u64>,
    /// The first retransmission of the recovery whose resends include it (none for an
    /// RNR resend, which is no loss recovery).
    pub recovered_by: Option<PacketRef>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct TimeoutDetail {
    /// 1 for the first timeout since the requester last heard of forward progress, 2 for
    /// the next, ... (the retry count + 1).
    pub attempt: u32,
    /// The last packet the retransmitting end sent before the retransmission.
    pub last_tx: Option<PacketRef>,
    /// last_tx → retransmission.
    pub observed_ns: Option<u64>,
    /// Timer (re)start → retransmission: the expiry the trace shows.
    pub timer_elapsed_ns: Option<u64>,
    /// 4.096 µs × 2^t from the configuration.
    pub configured_ns: Option<u64>,
    /// observed / configured (adaptive retransmission makes it < 1).
    pub ratio: Option<f64>,
    /// The timer fired before the configured timeout with adaptive retransmission off: a
    /// misbehaviour.
    pub early: bool,
    /// The timer fired although the configuration disables it (`timeout` 0, IBA vol. 1
    /// §9.7.6.1.3): a misbehaviour, whatever the adaptive mode.
    pub timer_disabled: bool,
    /// More tries than the configured `retry_cnt` allows (IBA: the QP errors instead).
    /// A misbehaviour with adaptive retransmission off; NVIDIA's adaptive mode is known
    /// to make 8–13 tries for 7 (§6.3), measured then, not flagged.
    pub beyond_retry_cnt: bool,
}

/// min / median / max of one latency, ns. The median is the lower one of an even count,
/// so it is always an observed value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Latencies {
    pub count: usize,
    pub min_ns: Option<u64>,
    pub median_ns: Option<u64>,
    pub max_ns: Option<u64>,
}

impl Latencies {
    fn of(mut v: Vec<u64>) -> Latencies {
        v.sort_unstable();
        let at = |i: usize| v.get(i).copied();
        Latencies {
            count: v.len(),
            min_ns: at(0),
            median_ns: at(v.len().saturating_sub(1) / 2),
            max_ns: v.last().copied(),
        }
    }
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Stats {
    pub recoveries: usize,
    pub nack: usize,
    pub read_nack: usize,
    pub timeouts: usize,
    /// Highest retry attempt seen.
    pub max_attempt: u32,
    pub early_timeouts: usize,
    /// Timeouts with the timer disabled (`TimeoutDetail::timer_disabled`).
    pub disabled_timer_timeouts: usize,
    /// Timeouts beyond the configured `retry_cnt` (of any adaptive mode).
    pub beyond_retry_cnt: usize,
    /// Data packets with a drop or corrupt event.
    pub lost_packets: u64,
    /// Of those, resent by a recovery the trace proves of another loss (a second loss in
    /// one window); not those with an unverifiable recovery of their own.
    pub resent_by_another_recovery: usize,
    /// Data packets sent again.
    pub retransmitted_packets: u64,
    pub generation: Latencies,
    pub reaction: Latencies,
    /// Per lost packet (Lumina's total retransmission latency), not per recovery.
    pub total: Latencies,
    /// Observed timeouts (last packet sent → retransmission).
    pub timeout: Latencies,
}

impl Stats {
    /// Of the recoveries proven; `doubted` (the unverifiable ones) only tell which losses
    /// had a recovery of their own.
    fn of<'a>(
        recs: impl Iterator<Item = &'a Recovery> + Clone,
        doubted: &'a [Recovery],
        losses: &[Loss],
        retransmitted: u64,
    ) -> Stats {
        let collect = |f: fn(&Recovery) -> Option<u64>| Latencies::of(recs.clone().filter_map(f).collect());
        let own: FxHashSet<u32> = recs.clone().chain(doubted).filter_map(|r| Some(r.lost?.index)).collect();
        // Resent by another loss's recovery: one the trace proves, not its own.
        let proven: FxHashSet<u32> = recs.clone().filter_map(|r| Some(r.first_retransmission?.index)).collect();
        let by_another =
            |l: &&Loss| l.recovered_by.is_some_and(|f| proven.contains(&f.index)) && !own.contains(&l.lost.index);
        let count = |k: RecoveryKind| recs.clone().filter(|r| r.kind == k).count();
        let timeouts = || recs.clone().filter_map(|r| r.timeout.as_ref());
        Stats {
            recoveries: recs.clone().count(),
            nack: count(RecoveryKind::Nack),
            read_nack: count(RecoveryKind::ReadNack),
            timeouts: count(RecoveryKind::Timeout),
            max_attempt: timeouts().map(|t| t.attempt).max().unwrap_or(0),
            early_timeouts: timeouts().filter(|t| t.early).count(),
            disabled_timer_timeouts: timeouts().filter(|t| t.timer_disabled).count(),
            beyond_retry_cnt: timeouts().filter(|t| t.beyond_retry_cnt).count(),
            lost_packets: losses.len() as u64,
            resent_by_another_recovery: losses.iter().filter(by_another).count(),
            retransmitted_packets: retransmitted,
            generation: collect(|r| r.generation_ns),
            reaction: collect(|r| r.reaction_ns),
            total: Latencies::of(losses.iter().filter_map(|l| l.total_ns).collect()),
            timeout: collect(|r| r.timeout.as_ref().and_then(|t| t.observed_ns)),
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ConnStats {
    pub conn: u32,
    #[serde(flatten)]
    pub stats: Stats,
}

#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    pub verb: Option<Verb>,
    /// IBA timeout exponent `t` and 4.096 µs × 2^t, from the configuration (none for
    /// `t` = 0: `timer_disabled`).
    pub timeout_exponent: Option<u8>,
    pub configured_timeout_ns: Option<u64>,
    /// `t` = 0: the requester's transport timer is disabled (an infinite timeout, IBA
    /// vol. 1 §9.7.6.1.3); any timeout retransmission is a problem.
    pub timer_disabled: bool,
    /// IBA `retry_cnt`, from the configuration.
    pub retry_cnt: Option<u8>,
    /// The requester's `adaptive-retrans` (NVIDIA: shorter, varying timeouts, §6.3).
    pub adaptive_retrans: Option<bool>,
    /// Every recovery, in trace order of the first retransmission.
    pub recoveries: Vec<Recovery>,
    /// Recoveries a mirror copy missing from the trace may explain (`analyze::unseen`),
    /// and those the trace has only part of (a NAK whose go-back is unseen, a lost packet
    /// only): their kind may be wrong and their PSN known only as `psn_min..=psn`; a
    /// latency is given only where both its packets are known to be theirs. Kept apart,
    /// in no statistic, no problem.
    pub unverifiable: Vec<Recovery>,
    /// Every lost data packet, in trace order.
    pub losses: Vec<Loss>,
    pub connections: Vec<ConnStats>,
    pub overall: Stats,
    pub notes: Vec<String>,
}

/// What the analysis needs from the configuration.
#[derive(Debug, Clone, Copy)]
struct Settings {
    verb: Verb,
    configured_ns: Option<u64>,
    /// The configuration disables the timer (`transport::timer_disabled`).
    disabled: bool,
    /// The timeout the timer keeps (`transport::fixed_timeout_ns`): none with adaptive
    /// retransmission, whose timer may be shorter or longer than configured.
    fixed_ns: Option<u64>,
    /// The shortest the timer may run (`transport::shortest_timeout_ns`, as `gbn`'s).
    shortest_ns: Option<u64>,
    retry_cnt: Option<u8>,
    adaptive: Option<bool>,
    /// The connection's path MTU (`transport::path_mtu`): how many PSNs a READ spans.
    mtu: Option<u32>,
    /// READ: the requester NIC's NAK bound (`transport::read_nak_ns`, as `gbn`'s).
    read_nak_ns: Option<u64>,
}

pub fn analyze(input: &Input<'_>) -> Report {
    analyze_with(input, &egress::Arrivals::toward_requester(input))
}

/// [`analyze`] with the arrivals at the requester `goodput` and `gbn` model: progress
/// reaches the requester when the switch port toward it has sent it, which is when it
/// starts the retry count over.
pub fn analyze_with(input: &Input<'_>, arrivals: &egress::Arrivals) -> Report {
    let config = input.ctx.config.as_ref();
    let exponent = config.and_then(|c| c.min_retransmit_timeout);
    let mut report = Report {
        verb: input.verb,
        timeout_exponent: exponent,
        configured_timeout_ns: exponent.and_then(iba_timeout_ns),
        timer_disabled: timer_disabled(config),
        retry_cnt: config.and_then(|c| c.max_retransmit_retry),
        adaptive_retrans: adaptive_retrans(config),
        ..Report::default()
    };
    if config.is_some_and(|c| c.requester.adaptive_retrans == Some(true)) && report.adaptive_retrans == Some(false) {
        report.notes.push(
            "adaptive-retrans is set, but the requester's E810 has no adaptive mode: its timer is the IBA one".into(),
        );
    }
    // A disabled timer (`timer_disabled`) is no missing configuration: no note for it.
    if report.configured_timeout_ns.is_none() && !report.timer_disabled {
        report.notes.push(
            "no configured timeout: timeouts are not compared, and a go-back with a NAK pending is taken as the NAK's"
                .into(),
        );
    }
    let sends = egress::Sends::from_requester(input);
    let mut unknown = 0;
    for c in &input.conns.list {
        let Some(verb) = c.verb else {
            unknown += 1;
            continue;
        };
        let settings = Settings {
            verb,
            configured_ns: report.configured_timeout_ns,
            disabled: report.timer_disabled,
            fixed_ns: fixed_timeout_ns(config),
            shortest_ns: shortest_timeout_ns(config),
            retry_cnt: report.retry_cnt,
            adaptive: report.adaptive_retrans,
            mtu: path_mtu(config, c.packets.iter().filter_map(|&(i, _)| input.view.records.get(i as usize))),
            read_nak_ns: read_nak_ns(config),
        };
        let mut t = Tracker::new(c, settings, &input.conns.unseen);
        for &(i, role) in &c.packets {
            if let Some(r) = input.view.records.get(i as usize) {
                t.packet(i, r, role, arrivals.queued_ns(i, r), sends.held_ns(i));
            }
        }
        let retransmitted = t.retransmitted_packets;
        let (recs, doubted, losses) = t.finish();
        report
            .connections
            .push(ConnStats { conn: c.id, stats: Stats::of(recs.iter(), &doubted, &losses, retransmitted) });
        report.recoveries.extend(recs);
        report.unverifiable.extend(doubted);
        report.losses.extend(losses);
    }
    if unknown > 0 {
        report.notes.push(unknown_verb_note(unknown, "not analyzed"));
    }
    report.recoveries.sort_by_key(Recovery::at);
    report.unverifiable.sort_by_key(Recovery::at);
    report.losses.sort_by_key(|l| l.lost.index);
    let retransmitted = report.connections.iter().map(|c| c.stats.retransmitted_packets).sum();
    report.overall = Stats::of(report.recoveries.iter(), &report.unverifiable, &report.losses, retransmitted);
    report
}

/// Relative PSNs from wire PSNs, the 24-bit wrap undone against the highest PSN so far.
#[derive(Debug, Clone, Copy)]
struct Unwrap {
    psn: u32,
    pos: u64,
}

impl Unwrap {
    fn new(ipsn: u32) -> Unwrap {
        Unwrap { psn: psn::sub(ipsn, 1), pos: 0 }
    }
    fn pos(&mut self, p: u32) -> u64 {
        let d = i64::from(psn::signed_distance(self.psn, p));
        let pos = (self.pos as i64 + d).max(0) as u64;
        if d > 0 {
            (self.psn, self.pos) = (p, pos);
        }
        pos
    }
}

/// What one end has sent in one direction: which PSNs are retransmissions, and where a
/// go-back starts. Holes are PSNs skipped over (sent out of order, or a copy missing from
/// the trace): their first appearance is not a retransmission.
#[derive(Debug, Default)]
struct Sent {
    /// Highest PSN sent; 0 before the first (relative PSNs start at 1).
    max: u64,
    /// The PSN that continues the stream: after the last one, or after the highest once
    /// a hole was filled (the sender resumes where it was).
    next: Option<u64>,
    holes: BTreeMap<u64, u64>,
}

impl Sent {
    /// Notes a transmission of `pos`: (is a retransmission, starts a go-back). `unseen`: a
    /// copy is missing just before it, so the PSNs it skips were sent unseen, no hole (their
    /// next appearance, taken for a late first transmission, would make the packet after it
    /// a false go-back).
    fn observe(&mut self, pos: u64, unseen: bool) -> (bool, bool) {
        let filled = pos <= self.max && self.fill_hole(pos);
        let retx = pos <= self.max && !filled;
        let go_back = retx && self.next.is_some_and(|n| pos < n);
        if pos > self.max + 1 && !unseen {
            self.holes.insert(self.max + 1, pos);
            if self.holes.len() > PENDING_CAP {
                self.holes.pop_first();
            }
        }
        self.max = self.max.max(pos);
        self.next = Some(if filled { self.max + 1 } else { pos + 1 });
        (retx, go_back)
    }

    fn fill_hole(&mut self, pos: u64) -> bool {
        let Some((&start, &end)) = self.holes.range(..=pos).next_back() else { return false };
        if pos >= end {
            return false;
        }
        self.holes.remove(&start);
        if start < pos {
            self.holes.insert(start, pos);
        }
        if pos + 1 < end {
            self.holes.insert(pos + 1, end);
        }
        true
    }

    /// PSNs up to `last` were sent, unseen (a NAK named `last`: a packet at or past it
    /// revealed the gap); the stream goes on after it.
    fn sent_unseen(&mut self, last: u64) {
        if last > self.max {
            (self.max, self.next) = (last, Some(last + 1));
        }
    }

    /// Everything before `una` is acknowledged: holes there will never be sent.
    fn acked(&mut self, una: u64) {
        while self.holes.first_key_value().is_some_and(|(_, &end)| end <= una) {
            self.holes.pop_first();
        }
    }

    fn end(&self) -> u64 {
        self.max + 1
    }
}

/// The retransmission timer as IBA runs it: started by a send when none is running,
/// restarted by progress with data still outstanding, stopped when all is acknowledged
/// and when it expires.
#[derive(Debug, Default, Clone, Copy)]
struct Timer {
    start: Option<u64>,
    /// Trace order (unwrapped mirror seq) of the packet that (re)started it: a copy
    /// missing since then may hide an acknowledgement that restarted it, or a NAK.
    start_order: Option<u64>,
    /// A copy was missing just before the packet that (re)started it: an unseen send or
    /// acknowledgement may have, as early as this (the previous one seen), so it may have
    /// expired sooner than the trace shows.
    earliest: Option<u64>,
    /// Restarted by progress, at its copy: the requester restarted it on the progress's
    /// arrival, up to [`DELIVERY_NS`] later, so it may have expired that much later.
    heard: bool,
    /// Stopped by an expiry, and (re)started by the go-back's send: the earliest that
    /// expiry can have come (the expired timer's start, or its own floor, plus the
    /// timeout). A NIC that paces its sends (slow restart, a rate limiter) restarts the
    /// timer when it schedules the resend, which may leave µs later: the timer may have
    /// run from here, not from the resend's copy.
    floor: Option<u64>,
}

impl Timer {
    fn arm(&mut self, ts: u64, order: u64, earliest: Option<u64>) {
        if self.start.is_none() {
            (self.start, self.start_order, self.earliest, self.heard) = (Some(ts), Some(order), earliest, false);
        }
    }
    fn restart(&mut self, ts: Option<u64>, order: u64, earliest: Option<u64>) {
        (self.start, self.start_order, self.earliest, self.heard) = (ts, ts.map(|_| order), earliest, ts.is_some());
        self.floor = None;
    }

    /// Time run by `ts` from the earliest start it can have had: its floor, when before the
    /// start the trace shows ([`Timer::floor`] is a bound only as good as the expired
    /// timer's start).
    fn elapsed_at_most(&self, ts: u64) -> Option<u64> {
        self.start.map(|s| run_by(self.floor.filter(|&f| later(s, f)).unwrap_or(s), ts))
    }
    /// Time run by `ts`: none yet if it (re)started later (on progress heard after `ts`).
    fn elapsed(&self, ts: u64) -> Option<u64> {
        self.start.map(|s| run_by(s, ts))
    }
}

/// Progress to `una` (its copy at `at`, from `before`), with the requester's timer and
/// attempt count as they were before it: progress may reach the requester only after its
/// timer expired (it crossed the go-back on the wire), restarting nothing.
#[derive(Debug, Clone, Copy)]
struct Unheard {
    una: u64,
    before: u64,
    at: u64,
    /// How long after its copy it left the switch toward the requester (the port's queue).
    queued: u64,
    timer: Timer,
    attempts: u32,
    heard_una: u64,
    attempts_doubt: bool,
    /// Progress before it, since the entry before, was left out of `unheard` (full,
    /// [`Tracker::thin_unheard`]): it may have been the first to cross a go-back.
    after_gap: bool,
}

/// Whether the timer had expired before a resend the trace takes as its go-back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expiry {
    Sure,
    /// The resend may have been decided before the expiry, the NIC holding it back.
    Maybe,
}

/// The retry count as it was before progress the trace's clock took as heard started it
/// over, and that progress (`una`): a later timeout's go-back from a PSN before `una` shows
/// that the requester had not heard it by the expiry (`Tracker::heard_after_expiry`).
#[derive(Debug, Clone, Copy)]
struct Reset {
    una: u64,
    attempts: u32,
    heard_una: u64,
    attempts_doubt: bool,
}

/// A gap the data receiver saw: `expected` was missing when `cause` arrived.
#[derive(Debug, Clone, Copy)]
struct Gap {
    cause: PacketRef,
    expected: u64,
    /// `cause` was the first arrival past the gap: it follows the missing PSN, or no copy
    /// is missing since the receiver's last progress (else an unseen one may have been).
    cause_sure: bool,
    /// Its missing PSN arrived in order as a first transmission (out-of-order data): no
    /// go-back recovered it, its NAK (sent before) still schedules one.
    filled: bool,
    /// When `cause` left the switch toward the data receiver (its copy's time, plus the
    /// port's queue): READ's NAK bound runs from there.
    left_ns: u64,
    /// A timeout went back since it was found: IBA runs one retry sequence at a time, so
    /// its NACK's go-back was made moot — unless one still comes from its own PSN (a slow
    /// NACK, as E810's READ one of ~83 ms, §6.1, may).
    overtaken: bool,
}

impl Gap {
    /// The packet that revealed it, when the trace is sure of it.
    fn revealing(&self) -> Option<PacketRef> {
        self.cause_sure.then_some(self.cause)
    }
}

/// A missing copy may explain it.
type Doubt = bool;

#[derive(Debug, Clone, Copy)]
struct PendingNak {
    nak: PacketRef,
    /// The NAK's trace order.
    order: u64,
    /// The requester's PSNs sent then end before this: once they are all acknowledged,
    /// its go-back (which the responder needed to get past the NAK's PSN) has been.
    sent_end: u64,
    /// A missing copy may hide the gap it answers: none seen explains it, and the PSN it
    /// names was taken as received unseen or a copy is missing since the receiver's last
    /// progress; or the gap seen is not the one it names, with copies missing since.
    unseen_gap: bool,
    gap: Option<Gap>,
    /// A timeout's go-back came since: its own go-back may never come.
    overtaken: bool,
    /// That go-back may have been its own (`Tracker::expiry_unsure`).
    overtaken_unsure: bool,
    /// A go-back that could have been its own was paired with another NAK resuming from
    /// the same PSN: its own may have been that one (`Recovery::nak_ambiguous`).
    ambiguous: bool,
    /// Those NAKs: an index into `Tracker::twins`.
    twins: Option<usize>,
}

/// The READ requests seen: which are repeats, and where a repeated run starts.
#[derive(Debug, Default)]
struct Requests {
    /// Highest request PSN; 0 before the first.
    max: u64,
    /// End (exclusive) of the PSN range requested so far, when the MTU is known.
    end: u64,
    /// The previous request: its PSN, the PSN after its range (MTU known), a repeat?
    prev: Option<(u64, Option<u64>, bool)>,
    /// The last new request: its PSN and copy's time, to time the path by its first response.
    asked: Option<(u64, u64)>,
}

/// A recovery being assembled; it is reported once it has a first retransmission.
#[derive(Debug)]
struct Draft {
    kind: RecoveryKind,
    lost: Option<PacketRef>,
    revealing: Option<PacketRef>,
    nak: Option<PacketRef>,
    first: Option<PacketRef>,
    data: Option<PacketRef>,
    timeout: Option<TimeoutDetail>,
    /// A copy missing from the trace may explain it: reported as unverifiable.
    doubt: Doubt,
    /// The PSN the go-back must have started from, when the trace tells (the PSN its NAK
    /// or repeated READ request names): an unverifiable one's first retransmission seen
    /// may be later, its first copy missing.
    from: Option<u64>,
    /// READ: its repeated request followed a missing copy, so an unseen repeat from an
    /// earlier PSN may have started the go-back.
    after_gap: bool,
    /// READ: the trace order of its repeated request, while that waits for the responder's
    /// go-back.
    waiting: Option<u64>,
    /// The go-back's first copies may be missing and the trace does not tell where it
    /// started: the lowest PSN it may have (the oldest the trace saw unacknowledged then).
    psn_min: Option<u64>,
    /// The PSN missing at the gap `revealing` revealed: the PSN its NAK names.
    expected: Option<u64>,
    /// Its go-back may be another pending NAK's (`Recovery::nak_ambiguous`).
    ambiguous: bool,
    /// Which (`Tracker::twins`).
    twins: Option<usize>,
    /// A NACK recovery whose go-back may be the timer's instead (it may have expired, an
    /// unseen packet having started it earlier): no latency is surely its NACK's.
    maybe_timer: bool,
}

impl Draft {
    /// A READ NACK waiting for the responder's go-back.
    fn read_nack(doubt: Doubt) -> Draft {
        Draft {
            kind: RecoveryKind::ReadNack,
            lost: None,
            revealing: None,
            nak: None,
            first: None,
            data: None,
            timeout: None,
            doubt,
            from: None,
            after_gap: false,
            waiting: None,
            psn_min: None,
            expected: None,
            ambiguous: false,
            twins: None,
            maybe_timer: false,
        }
    }
}

/// One connection replayed in trace order.
struct Tracker<'u> {
    conn: u32,
    s: Settings,
    unwrap: Option<Unwrap>,
    /// Data as the data sender sent it.
    data: Sent,
    /// The data receiver's Go-back-N state.
    rx: GbnReceiver<u64>,
    /// Undelivered data packets not yet repaired, latest loss per PSN.
    losses: BTreeMap<u64, PacketRef>,
    /// Lost data packets waiting for their first resend, by PSN, with the trace order and
    /// the lowest PSN a go-back could resume from then (`floor`).
    unresent: FxHashMap<u64, (PacketRef, u64, u64)>,
    lost_packets: Vec<Loss>,
    retransmitted_packets: u64,
    /// PSNs of the first packets of messages (SEND/WRITE First/Only, READ requests not
    /// repeated), with the trace order they were first seen at: where a recovery's packet
    /// lies within its message (`Recovery::psn_in_message`).
    msg_starts: BTreeMap<u64, u64>,
    /// READ: the PSNs of new requests that reached the responder, not answered yet (the
    /// latest [`PENDING_CAP`]), with their trace order: the first response from such a PSN
    /// answers that request, not a repeat of it asked since (unless a copy missing since
    /// may have been that answer).
    unanswered_asks: BTreeMap<u64, u64>,
    /// The requester's oldest unacknowledged PSN.
    una: u64,
    timer: Timer,
    /// Expiries since the requester last heard of forward progress: IBA's retry count
    /// (rxe `reset_retry_counters` on every ACK or READ response that moves it on).
    attempts: u32,
    /// The oldest PSN unacknowledged as the requester had heard it when `attempts` last
    /// started over: progress past it starts the count over again.
    heard_una: u64,
    /// The highest `una` the trace's clock took as heard: progress a timeout's go-back
    /// shows reached the requester only after the expiry starts the count over after it.
    clock_heard_una: u64,
    /// The first start-over since the last timeout by progress taken as heard.
    first_reset: Option<Reset>,
    /// An unverifiable timeout was counted in `attempts` since its reset.
    attempts_doubt: bool,
    /// How long the packet being replayed queued at the switch port toward the requester
    /// beyond its ingress (`egress`); 0 for one toward the responder.
    heard_delay_ns: u64,
    /// How long before its ingress the requester may have decided the packet being
    /// replayed (its NIC held it behind its other sends, `egress::Sends`); 0 for the
    /// responder's.
    sent_held_ns: u64,
    /// Progress the requester hears later than the trace shows it (queued toward it past
    /// the delivery bound, or behind such), oldest first: when it left the switch, its
    /// `una`. The timeouts the requester had before it arrived come later in the trace;
    /// the count starts over only once the trace's clock passes it ([`Self::hear_pending`]):
    /// attempts in heard order.
    pending: VecDeque<(u64, u64)>,
    /// Progress seen, oldest first, with what it changed (`Unheard`), since the last timeout.
    unheard: VecDeque<Unheard>,
    /// Switch time of the requester's last first transmission (data, READ: a request).
    fresh_ns: Option<u64>,
    gaps: Vec<Gap>,
    /// WRITE/SEND gaps before `una` no NAK had answered yet, latest last: out-of-order data
    /// fills one in order after its NAK went out, and that NAK comes after the ACK.
    closed: Vec<Gap>,
    naks: Vec<PendingNak>,
    /// Mirror seqs of pending NAKs found resuming where one go-back did: which go-back is
    /// whose the trace cannot tell (`Recovery::nak_candidates`).
    twins: Vec<Vec<u32>>,
    /// A go-back was paired with a NAK whose out-of-order twin's NAK may be unseen
    /// (`unseen_twin`): one more go-back may come with no NAK seen.
    twin_go_back: bool,
    /// PSN of an RNR NAK whose resend has not come yet.
    rnr_pending: Option<u64>,
    requests: Requests,
    /// READ go-backs of the requests waiting for the responder's go-back: (draft, PSN).
    /// With the end (exclusive) of the PSNs it asked for, when the MTU tells: its repeated
    /// request and those continuing it.
    awaiting_data: VecDeque<(usize, u64, Option<u64>)>,
    /// READ: the end (exclusive) of the PSNs asked for by the go-back whose answer is under
    /// way. The responder answers requests in the order they came: a response in order
    /// before it continues that answer, whatever later repeat waits for the same PSNs.
    answering: Option<u64>,
    /// Last packet sent by the requester / the responder, a CNP included: the observed
    /// timeout counts from it ("since the requester's last send").
    last_tx: [Option<PacketRef>; 2],
    /// Switch time of the requester's last transport packet: an unseen send (re)starting
    /// the timer came after it (a CNP starts no timer).
    last_send_ns: Option<u64>,
    drafts: Vec<Draft>,
    unseen: &'u Unseen,
    /// Trace order (unwrapped mirror seq) of the packet being replayed.
    order: u64,
    /// Trace order of the connection's previous packet toward the requester / responder.
    last_order: [Option<u64>; 2],
    /// READ: PSNs whose first response seen was a Middle or Last, the latest
    /// [`MID_ANSWER_CAP`].
    mid_answer: BTreeSet<u64>,
    /// WRITE/SEND: the last data packet seen, and the shortest time seen between two data
    /// packets, shared among the copies missing between (the sender's spacing back to back,
    /// or less).
    last_data: Option<PacketRef>,
    data_spacing: Option<u64>,
    /// Trace order of the last resend seen (data, READ: a request or a response).
    resend_order: Option<u64>,
    /// READ: trace order of the requester's last packet before the responder's previous
    /// one. A request answered after that response came to the responder after the one
    /// that response answered, which came no later than this.
    asked_before_answer: Option<u64>,
    /// A copy is missing since the previous packet in this packet's direction: a packet
    /// of this connection may have gone unseen just before it.
    unseen_before: bool,
    /// How many: at most that many of its packets went unseen just before it.
    missing_before: u64,
    /// The data PSNs taken as received unseen (their copies missing), start → end, that
    /// the responder has not acknowledged since: a go-back from one of them shows that one
    /// was lost instead, its gap and NAK unseen; and `una` may be past PSNs never received.
    assumed: BTreeMap<u64, u64>,
    /// Trace order of the data receiver's last progress (an arrival in order).
    rx_since: Option<u64>,
    /// Trace order and time of the last acknowledgement (READ: response in order) seen.
    acked_at: Option<(u64, u64)>,
    /// The shortest from a new request's copy to its first response's (READ), or from a
    /// first transmission that reached the responder to the ACK naming it (WRITE/SEND): the
    /// path between the switch and a host and back, as `gbn` times it.
    path_ns: Option<u64>,
    /// WRITE/SEND: the latest first transmissions that reached the responder, not yet
    /// acknowledged by name (PSN, copy's time), to time the path by their ACKs.
    fresh_unacked: VecDeque<(u64, u64)>,
}

impl<'u> Tracker<'u> {
    fn new(c: &Connection, s: Settings, unseen: &'u Unseen) -> Tracker<'u> {
        Tracker {
            conn: c.id,
            s,
            unwrap: c.ipsn.map(Unwrap::new),
            data: Sent::default(),
            rx: GbnReceiver::new(Some(1)),
            losses: BTreeMap::new(),
            unresent: FxHashMap::default(),
            lost_packets: Vec::new(),
            retransmitted_packets: 0,
            msg_starts: BTreeMap::new(),
            unanswered_asks: BTreeMap::new(),
            una: 1,
            timer: Timer::default(),
            attempts: 0,
            heard_una: 1,
            clock_heard_una: 1,
            first_reset: None,
            attempts_doubt: false,
            heard_delay_ns: 0,
            sent_held_ns: 0,
            pending: VecDeque::new(),
            unheard: VecDeque::new(),
            fresh_ns: None,
            gaps: Vec::new(),
            closed: Vec::new(),
            naks: Vec::new(),
            twins: Vec::new(),
            twin_go_back: false,
            rnr_pending: None,
            requests: Requests::default(),
            awaiting_data: VecDeque::new(),
            answering: None,
            last_tx: [None; 2],
            last_send_ns: None,
            drafts: Vec::new(),
            unseen,
            order: 0,
            last_order: [None; 2],
            asked_before_answer: None,
            resend_order: None,
            last_data: None,
            data_spacing: None,
            mid_answer: BTreeSet::new(),
            unseen_before: false,
            missing_before: 0,
            assumed: BTreeMap::new(),
            rx_since: None,
            acked_at: None,
            path_ns: None,
            fresh_unacked: VecDeque::new(),
        }
    }

    fn packet(&mut self, index: u32, r: &Record, to: Role, queued_ns: u64, held_ns: u64) {
        self.hear_pending(r.switch_ts_ns);
        self.heard_delay_ns = if to == Role::Requester { queued_ns } else { 0 };
        self.sent_held_ns = if to == Role::Responder { held_ns } else { 0 };
        let from = to.other();
        if !is_transport(r) {
            let p = PacketRef { index, seq: r.wire_seq(), switch_ts_ns: r.switch_ts_ns, psn: 0, order: r.seq() };
            self.last_tx[from.index()] = Some(p);
            return;
        }
        let psn = self.unwrap.get_or_insert_with(|| Unwrap::new(r.psn())).pos(r.psn());
        let p = PacketRef { index, seq: r.wire_seq(), switch_ts_ns: r.switch_ts_ns, psn, order: r.seq() };
        self.order = r.seq();
        let last = self.last_order[to.index()].replace(self.order);
        self.missing_before = self.unseen.count_between(last, self.order);
        self.unseen_before = self.missing_before > 0;
        match (self.s.verb, from) {
            (Verb::Read, Role::Requester) if is_read_request(r) => self.request(p, r),
            (verb, sender) if sender == Connection::data_sender(verb) && is_data(r, verb) => self.data(p, r),
            (Verb::Write | Verb::Send, Role::Responder) if r.has(flag::AETH) => self.ack(p, r),
            // A READ responder NAKs a request PSN it skipped (a lost READ request).
            (Verb::Read, Role::Responder) if is_seq_nak(r) && delivered(r) => {
                let (order, sent_end) = (self.order, self.sent_end());
                let n = PendingNak {
                    nak: p,
                    order,
                    sent_end,
                    unseen_gap: false,
                    gap: None,
                    overtaken: false,
                    overtaken_unsure: false,
                    ambiguous: false,
                    twins: None,
                };
                push_capped(&mut self.naks, n);
            }
            _ => {}
        }
        self.last_tx[from.index()] = Some(p);
        if from == Role::Requester {
            self.last_send_ns = Some(p.switch_ts_ns);
        } else {
            self.asked_before_answer = self.last_order[Role::Responder.index()];
        }
    }

    /// A data packet from the data sender.
    fn data(&mut self, p: PacketRef, r: &Record) {
        if self.s.verb == Verb::Read {
            self.asked_unseen(p);
        }
        if self.s.verb == Verb::Read && !ends_message(r.opcode()) {
            // A READ response First or Middle: its request asked for the next PSN too, even
            // when that request's copy is missing (the timer runs on past this one's progress).
            self.requests.end = self.requests.end.max(p.psn + 2);
        }
        let (retx, go_back) = self.data.observe(p.psn, self.unseen_before);
        if retx {
            self.resend_order = Some(self.order);
        }
        if let Some((_, asked)) = self.requests.asked.filter(|&(q, _)| q == p.psn && !retx) {
            let t = elapsed(asked, p.switch_ts_ns);
            self.note_path(t);
        }
        self.retransmitted_packets += u64::from(retx);
        if !retx && self.s.verb != Verb::Read {
            self.fresh_ns = Some(p.switch_ts_ns);
            if delivered(r) {
                if self.fresh_unacked.len() >= PENDING_CAP {
                    self.fresh_unacked.pop_front();
                }
                self.fresh_unacked.push_back((p.psn, p.switch_ts_ns));
            }
        }
        // A resend continuing the one before it, but a whole timeout later with a copy
        // missing in between: that copy may have continued the stream, this one going back.
        let unseen_go_back = retx && !go_back && self.unseen_before && self.timer_may_have_run_out(p.switch_ts_ns);
        let clamped_go_back = (retx && !go_back).then(|| self.clamped_go_back(p)).flatten();
        let paused_go_back = retx && !go_back && self.s.verb != Verb::Read && self.paused(p);
        // READ: an answer starting at a PSN first seen in the middle of a message: a request
        // asked from there, a repeat (the requester's go-back).
        let starts = starts_read_answer(r.opcode());
        let mid_start = self.s.verb == Verb::Read && retx && starts && self.mid_answer.contains(&p.psn);
        if self.s.verb == Verb::Read && !retx && !starts {
            self.mid_answer.insert(p.psn);
            if self.mid_answer.len() > MID_ANSWER_CAP {
                self.mid_answer.pop_first();
            }
        }
        // READ: an answer going on a whole timeout later, copies missing between (the
        // timer's repeat and the first of its answer may be among them), may be the timer's.
        let go_back = go_back || mid_start || (self.s.verb == Verb::Read && unseen_go_back);
        // A first answer to a new request that reached the responder is that request's,
        // however many repeats of it wait (slow-path case 5495: behind a 1 Gb/s link the
        // timer repeated a request its responder had not answered yet).
        let ask = (self.s.verb == Verb::Read && !retx).then(|| self.unanswered_asks.remove(&p.psn)).flatten();
        let own_answer = ask.is_some_and(|order| !self.unseen.between(Some(order), self.order));
        let continues = self.s.verb == Verb::Read && !go_back && (self.answer_continues(p.psn) || own_answer);
        if self.s.verb != Verb::Read && (go_back || unseen_go_back || clamped_go_back.is_some() || paused_go_back) {
            self.expected_again(p.psn);
        }
        if let Some(last) = self.last_data.filter(|_| self.s.verb != Verb::Read) {
            // Shared among the copies missing between, as if each were this connection's.
            let gap = elapsed(last.switch_ts_ns, p.switch_ts_ns) / (self.missing_before + 1);
            self.data_spacing = Some(self.data_spacing.map_or(gap, |s| s.min(gap)));
        }
        self.last_data = Some(p);
        match self.s.verb {
            Verb::Write | Verb::Send if go_back => {
                self.data_go_back(p);
            }
            Verb::Write | Verb::Send if unseen_go_back || clamped_go_back.is_some() => {
                let expired = unseen_go_back || clamped_go_back == Some(Expiry::Sure);
                let i = self.timeout_after(p, Some(p), expired);
                self.drafts[i].doubt = true;
            }
            // Paired as any go-back (a pending NAK's, else a timeout), never proven.
            Verb::Write | Verb::Send if paused_go_back => {
                if let Some(i) = self.data_go_back(p) {
                    self.drafts[i].doubt = true;
                }
            }
            // The answer to a request asked again: a go-back, or for a request the responder
            // never had (or a response lost before the mirror), a first transmission.
            Verb::Read if go_back || !self.awaiting_data.is_empty() && !continues => {
                self.response_go_back(p, go_back, mid_start);
            }
            _ => {}
        }
        if self.s.verb != Verb::Read {
            self.unseen_expiry_before(p, retx);
            self.timer.arm(p.switch_ts_ns, self.order, self.unseen_send());
        }
        self.resent(p);
        if self.s.verb != Verb::Read && starts_message(r.opcode()) {
            self.msg_starts.entry(p.psn).or_insert(self.order);
        }
        if !delivered(r) {
            self.unresent.insert(p.psn, (p, self.order, self.floor()));
            self.losses.insert(p.psn, p);
        } else {
            self.losses.remove(&p.psn);
            self.deliver(p, retx);
        }
    }

    /// WRITE/SEND: a resend continuing the one before it, copies missing in between, but
    /// after a pause longer than those copies sent back to back would take (the shortest
    /// spacing seen, each, plus the delivery bound): the resend of its PSN may be among
    /// them, this one a new go-back whose NAK is unseen (only the timing tells).
    fn paused(&self, p: PacketRef) -> bool {
        let (Some(last), Some(spacing)) = (self.last_data, self.data_spacing) else { return false };
        let back_to_back = (self.missing_before + 1).saturating_mul(spacing).saturating_add(DELIVERY_NS);
        self.unseen_before && elapsed(last.switch_ts_ns, p.switch_ts_ns) > back_to_back
    }

    /// READ: a response past every PSN the trace saw asked for answers a request whose copy
    /// is missing. That request started the timer if nothing was outstanding: at the latest
    /// as this answer passed, at the earliest at the requester's previous send or the last
    /// acknowledgement seen (sent before it, the request kept the timer running from there).
    fn asked_unseen(&mut self, p: PacketRef) {
        if p.psn >= self.sent_end() {
            self.timer.arm(p.switch_ts_ns, self.order, Some(self.since_last_send_or_ack()));
        }
    }

    /// A delivered data packet at the data receiver (`GbnReceiver`): an in-order one
    /// repairs the losses before it, the first one past a gap reveals that gap.
    fn deliver(&mut self, p: PacketRef, retx: bool) {
        match self.rx.arrive(p.psn) {
            Arrival::InOrder => {
                self.rx_since = Some(self.order);
                if !retx {
                    self.gaps.iter_mut().filter(|g| g.expected == p.psn).for_each(|g| g.filled = true);
                }
                let expected = p.psn + 1;
                drop_below(&mut self.losses, expected);
                if self.s.verb == Verb::Read {
                    self.progress(expected, p.switch_ts_ns);
                }
            }
            // The PSNs skipped may have crossed unseen (their copies missing): the receiver
            // is taken to have them, as gbn does; had one been lost, the NAK or timeout that
            // follows finds no gap and its recovery is unverifiable. Not the missing PSN
            // when its copy was seen lost and too few copies are missing since for a go-back
            // (its NAK or repeated request, and resends up to this PSN): the gap is real,
            // only what revealed it may be unseen.
            Arrival::Gap { missing } if self.unseen_before && !self.seen_lost_since(missing, p.psn) => {
                self.rx.expect(p.psn + 1);
                self.rx_since = Some(self.order);
                self.take_as_received(missing, p.psn);
            }
            Arrival::Gap { missing } => {
                // Past the missing PSN by one, nothing could arrive before it past the gap.
                let cause_sure = p.psn == missing + 1 || !self.unseen.between(self.rx_since, self.order);
                push_capped(
                    &mut self.gaps,
                    Gap {
                        cause: p,
                        expected: missing,
                        cause_sure,
                        filled: false,
                        left_ns: ts_add(p.switch_ts_ns, self.heard_delay_ns),
                        overtaken: false,
                    },
                );
            }
            Arrival::First | Arrival::Ignored => {}
        }
    }

    /// PSN `missing` was seen lost, no resend was seen since (a go-back under way may have
    /// resent it unseen), and the copies missing since are too few to hold a go-back that
    /// resent it and everything up to `psn`.
    fn seen_lost_since(&self, missing: u64, psn: u64) -> bool {
        let Some(lost) = self.losses.get(&missing) else { return false };
        let resent_since = self.resend_order.is_some_and(|o| o > lost.order);
        !resent_since && self.unseen.count_between(Some(lost.order), self.order) < 1 + (psn - missing)
    }

    /// WRITE/SEND: an ACK or NAK from the responder. One dropped or corrupted on its way
    /// never reached the requester: what it says of the responder stands (a gap it
    /// answered, a PSN it turned away), but the requester neither progressed on it nor
    /// has a NAK to react to (its recovery will be a timeout's).
    fn ack(&mut self, p: PacketRef, r: &Record) {
        let reached = delivered(r);
        if is_ack(r) {
            self.time_path_by_ack(p);
            if reached {
                self.progress(p.psn + 1, p.switch_ts_ns);
                self.assumed.retain(|_, &mut end| end > p.psn + 1);
            }
        } else if is_rnr_nak(r) && self.s.verb != Verb::Read {
            // Not accepted: the responder expects the PSN again, and the requester resends
            // from it after the RNR timer, which is no loss recovery.
            self.rx.expect(p.psn);
            // Gaps after the PSN turned away were none to the responder, which expects it
            // again: no NAK will answer them.
            self.gaps.retain(|g| g.expected <= p.psn);
            if reached {
                self.progress(p.psn, p.switch_ts_ns);
                self.rnr_pending = Some(p.psn);
            }
        } else if is_seq_nak(r) {
            self.seq_nak(p, reached);
        }
    }

    /// WRITE/SEND: an ACK naming a first transmission that reached the responder times the
    /// path to the responder and back (`gbn`'s `time_path_by_ack`).
    fn time_path_by_ack(&mut self, ack: PacketRef) {
        let Some(i) = self.fresh_unacked.iter().position(|&(psn, _)| psn == ack.psn) else { return };
        let (_, sent) = self.fresh_unacked[i];
        self.fresh_unacked.drain(..=i);
        self.note_path(elapsed(sent, ack.switch_ts_ns));
    }

    /// Keeps the shortest request-to-reply time seen as the path's round trip.
    fn note_path(&mut self, t: u64) {
        self.path_ns = Some(self.path_ns.map_or(t, |x| x.min(t)));
    }

    /// How long after progress's copy the requester may hear it, and a go-back's copy may
    /// still come from before: [`DELIVERY_NS`], or the path's round trip when longer (as
    /// `gbn`'s `delivery_ns`).
    fn delivery_ns(&self) -> u64 {
        DELIVERY_NS.max(self.path_ns.unwrap_or(0))
    }

    /// A NAK (PSN sequence error) acknowledges everything before the PSN it names, and
    /// answers the gap expecting that PSN; the responder NAKs each gap once, in order, so
    /// failing that (the PSN unknown to us) it is the oldest gap's.
    fn seq_nak(&mut self, p: PacketRef, reached: bool) {
        // Naming a PSN past every one seen sent: their copies are missing, and its go-back
        // resends them.
        self.data.sent_unseen(p.psn);
        // Taken as received unseen, it was not: the receiver has expected it since, and
        // this NAK is outstanding.
        let assumed = self.expected_again(p.psn);
        if assumed {
            self.rx.recovering();
        }
        let (named, closed) = self.named_gap(p.psn);
        let oldest = || (!self.gaps.is_empty()).then(|| self.gaps.remove(0));
        let gap = named.or_else(oldest);
        // Lumina §4: a NAK answers the receiver's gap; with none seen, one unseen may
        // be near it: its PSN taken as received unseen, or a copy missing since the
        // receiver's last progress (not anywhere in the trace).
        let unseen_gap = match gap {
            None => assumed || self.unseen.between(self.rx_since, self.order),
            // Not the gap it names (a GBN fault, or the gap it answers unseen and this
            // one stale), or one closed already (an unseen gap at its PSN may be newer):
            // with copies missing since, the latter may be.
            Some(g) => (g.expected != p.psn || closed) && self.unseen.between(Some(g.cause.order), self.order),
        };
        if reached {
            self.progress(p.psn, p.switch_ts_ns);
            let sent_end = self.sent_end();
            let n = PendingNak {
                nak: p,
                order: self.order,
                sent_end,
                unseen_gap,
                gap,
                overtaken: false,
                overtaken_unsure: false,
                ambiguous: false,
                twins: None,
            };
            push_capped(&mut self.naks, n);
        }
    }

    /// The gap expecting `psn` (the responder NAKs each gap once, Lumina §4), open or else
    /// closed before its NAK came (then `true`).
    fn named_gap(&mut self, psn: u64) -> (Option<Gap>, bool) {
        if let Some(i) = self.gaps.iter().position(|g| g.expected == psn) {
            return (Some(self.gaps.remove(i)), false);
        }
        let closed = self.closed.iter().rposition(|g| g.expected == psn);
        (closed.map(|i| self.closed.remove(i)), closed.is_some())
    }

    /// Progress to `una` reached the requester: forward progress starts the retry count
    /// over (IBA vol. 1 §9.7.6.1.3; rxe `reset_retry_counters`).
    fn count_heard(&mut self, una: u64) {
        if una > self.heard_una {
            (self.attempts, self.heard_una, self.attempts_doubt) = (0, una, false);
        }
    }

    /// Progress to `una` reached the requester as the trace's clock tells: counted, and the
    /// count before the first such start-over since the last timeout kept, for a go-back
    /// that shows it came after the expiry ([`Self::heard_after_expiry`]).
    fn clock_heard(&mut self, una: u64) {
        self.clock_heard_una = self.clock_heard_una.max(una);
        if una > self.heard_una && self.first_reset.is_none() {
            let (attempts, heard_una, attempts_doubt) = (self.attempts, self.heard_una, self.attempts_doubt);
            self.first_reset = Some(Reset { una, attempts, heard_una, attempts_doubt });
        }
        self.count_heard(una);
    }

    /// A timeout's go-back from `psn`: the requester's oldest PSN unacknowledged at the
    /// expiry. Progress past it that the trace's clock took as heard reached the requester
    /// after the expiry: the count it started over goes on.
    fn heard_after_expiry(&mut self, psn: u64) {
        if let Some(r) = self.first_reset.take().filter(|r| r.una > psn) {
            (self.attempts, self.heard_una, self.attempts_doubt) = (r.attempts, r.heard_una, r.attempts_doubt);
            self.count_heard(psn);
        }
    }

    /// The trace's clock reached `now`: the progress that had left the switch toward the
    /// requester by then reached it ([`Self::pending`]).
    fn hear_pending(&mut self, now: u64) {
        self.hear_while(|&(heard, _)| !later(heard, now));
    }

    /// A timeout's go-back from `psn`: the requester had heard the progress up to it,
    /// whatever the model of the port toward it says.
    fn hear_acknowledged(&mut self, psn: u64) {
        self.hear_while(|&(_, una)| una <= psn);
    }

    /// Counts the pending progress in order while `heard` says it had reached the requester.
    fn hear_while(&mut self, heard: impl Fn(&(u64, u64)) -> bool) {
        while let Some(&(_, una)) = self.pending.front().filter(|p| heard(p)) {
            self.pending.pop_front();
            self.clock_heard(una);
        }
    }

    /// Everything before `una` is acknowledged (IBA: the timer restarts on progress).
    fn progress(&mut self, una: u64, ts: u64) {
        // An acknowledgement unseen since the previous one seen may have made this
        // progress, earlier: the timer may have restarted before the trace shows.
        let previous = self.acked_at.replace((self.order, ts));
        let hidden = self.unseen.between(previous.map(|(order, _)| order), self.order);
        // Not before the previous one seen, nor before the timer's start as seen (an
        // acknowledgement restarts a running timer: it cannot move it earlier).
        let running = self.timer.start.unwrap_or(0);
        let earliest = hidden.then(|| previous.map_or(0, |(_, t)| t).max(running));
        if una <= self.una {
            return;
        }
        if self.unheard.len() >= PENDING_CAP {
            self.thin_unheard(ts);
        }
        let (timer, attempts, heard_una, attempts_doubt) =
            (self.timer, self.attempts, self.heard_una, self.attempts_doubt);
        let before = self.una;
        let queued = self.heard_delay_ns;
        let u = Unheard { una, before, at: ts, queued, timer, attempts, heard_una, attempts_doubt, after_gap: false };
        self.unheard.push_back(u);
        self.una = una;
        // Behind a queue the requester hears it, and restarts its timer, when the port
        // sends it: the count starts over once the trace's clock passes that.
        let behind = !self.pending.is_empty() || queued > self.delivery_ns();
        let heard = if behind { ts_add(ts, queued) } else { ts };
        match behind {
            true => self.pending.push_back((heard, una)),
            false => self.clock_heard(una),
        }
        self.data.acked(una);
        self.gone_back_unseen(una);
        self.timer.restart((una < self.sent_end()).then_some(heard), self.order, earliest);
        if self.s.verb != Verb::Read {
            // A gap before `una` was recovered (a timeout's go-back) without a NAK, or
            // filled in order (out-of-order data) with its NAK on its way: only a NAK naming
            // it exactly is its. A READ gap stays, as its "NACK" (a request go-back) is
            // still scheduled (§6.1).
            let (closed, open) = std::mem::take(&mut self.gaps).into_iter().partition(|g| g.expected < una);
            self.gaps = open;
            for g in closed {
                push_capped(&mut self.closed, g);
            }
        }
    }

    /// Makes room in `unheard` (full). The oldest entry stays: the state before the first
    /// progress since the last timeout is the one an expiry finds when none of it had
    /// reached the requester (a long READ answer crossing the go-back: seed 2154 took the
    /// timer's start from the 27th response, an early timeout with its attempt one short).
    /// Then what leaves is the progress the requester had certainly heard by `now`
    /// ([`Self::maybe_unheard`]): a go-back to come resends from its `una` or later, so it
    /// crosses none of it.
    /// Failing that (all of it may still be on its way: queued toward the requester), the
    /// entry before the newest: a go-back while progress queues is from an old PSN, whose
    /// first progress past it is an old entry (queueing sweep case 1598: a READ go-back from
    /// before the second entry came 63 responses later, and that entry had been thinned out).
    fn thin_unheard(&mut self, now: u64) {
        let heard = self.unheard.iter().skip(1).take_while(|u| !self.maybe_unheard(u, now)).count();
        if heard > 0 {
            self.unheard.drain(1..=heard);
            return;
        }
        let at = self.unheard.len() - 2;
        self.unheard.remove(at);
        if let Some(u) = self.unheard.get_mut(at) {
            u.after_gap = true;
        }
    }

    /// A NAK naming `psn`, or a go-back from it (READ: a repeated request), when it was
    /// taken as received unseen: the data receiver never had it, and expects it since;
    /// what looked like later gaps were none to it. Returns whether it was so taken.
    fn expected_again(&mut self, psn: u64) -> bool {
        let assumed = self.in_assumed(psn);
        if assumed {
            self.gaps.retain(|g| g.expected <= psn);
            self.rx.expect(psn);
        }
        assumed
    }

    /// READ: the requester repeated its request from `psn`, the first PSN it was missing
    /// (a READ NACK) or its oldest unacknowledged (a timeout): with copies missing since
    /// the replay's receiver last progressed, the PSNs it expected before `psn` arrived
    /// unseen. Its repeat is outstanding: later arrivals out of order reveal no gap.
    fn asked_from(&mut self, psn: u64) {
        let Some(e) = self.rx.expected().filter(|&e| e < psn) else { return };
        if self.unseen.between(self.rx_since, self.order) {
            self.gaps.retain(|g| g.expected >= psn);
            self.rx.expect(psn);
            self.rx.recovering();
            self.take_as_received(e, psn);
        }
    }

    /// Whether `psn` was taken as received unseen (not acknowledged since).
    fn in_assumed(&self, psn: u64) -> bool {
        self.assumed.range(..=psn).next_back().is_some_and(|(_, &end)| psn < end)
    }

    /// No go-back resumes before this: the oldest PSN unacknowledged, or one taken as
    /// received unseen (a READ responder's acknowledgement is the requester's own
    /// progress, so there it stays).
    fn floor(&self) -> u64 {
        self.una.min(self.assumed.first_key_value().map_or(u64::MAX, |(&start, _)| start))
    }

    /// Pending NAKs whose go-back the responder must have had, unseen: everything the
    /// requester had sent when they came is acknowledged, with copies missing since. Their
    /// recoveries are listed with what is known; a later go-back is not theirs. Not an
    /// `ambiguous` one: its out-of-order twin's go-back took the responder past its PSN,
    /// and its own may still come, late.
    fn gone_back_unseen(&mut self, una: u64) {
        let (unseen, order) = (self.unseen, self.order);
        let done =
            |n: &PendingNak| !n.overtaken && !n.ambiguous && n.sent_end <= una && unseen.between(Some(n.order), order);
        if !self.naks.iter().any(done) {
            return;
        }
        let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.naks).into_iter().partition(done);
        self.naks = kept;
        for n in gone {
            self.nak_only(n);
        }
    }

    /// The requester's PSNs sent so far end before this.
    fn sent_end(&self) -> u64 {
        self.data.end().max(self.requests.end).max(self.requests.max + 1)
    }

    /// A send taken as a first transmission, with nothing outstanding as the trace shows it
    /// (READ: a request) and a copy missing just before it, the shortest timeout or more
    /// after the earliest an unseen send may have been: that copy may have been this PSN's
    /// first transmission, timed out, and this its go-back. The retry count may be one
    /// short until it starts over.
    fn unseen_expiry_before(&mut self, p: PacketRef, retx: bool) {
        let idle = !retx && self.timer.start.is_none();
        let since = self.unseen_send().filter(|_| idle);
        if self.s.shortest_ns.zip(since).is_some_and(|(t, since)| elapsed(since, p.switch_ts_ns) >= t) {
            self.attempts_doubt = true;
        }
    }

    /// With a copy missing just before the requester's send, the earliest an unseen send
    /// may have been: its previous send seen, or the acknowledgement seen last (a send
    /// before it started a timer that it stopped or restarted).
    fn unseen_send(&self) -> Option<u64> {
        self.unseen_before.then(|| self.since_last_send_or_ack())
    }

    /// The requester's previous send seen, or the acknowledgement seen last if later: the
    /// earliest a send unseen since may have been.
    fn since_last_send_or_ack(&self) -> u64 {
        self.last_send_ns.unwrap_or(0).max(self.acked_at.map_or(0, |(_, t)| t))
    }

    /// A resend continuing the one before it, from the oldest PSN unacknowledged, after the
    /// timer (as the trace shows it) expired since the requester's previous send: IBA
    /// resends from there on expiry, so it is that timeout's go-back, an acknowledgement
    /// crossing the expiry having moved it past where it went back to (sweep seed 3080).
    /// Unverifiable: whether the timer, restarted on progress's arrival, had expired, and
    /// whether the requester merely paused, the trace cannot tell. The expiry itself is
    /// not sure when the NIC may have held the resend back behind its other sends since
    /// before it (its link busy): then the resend may go on a NACK's go-back, the timer
    /// still running (sweep cases 7243: so it did; 4329: the timer's go-back).
    fn clamped_go_back(&self, p: PacketRef) -> Option<Expiry> {
        // The timer before progress that may have crossed the expiry (`crossed`).
        let timer = self.crossed(p, true).map_or(self.timer, |(u, _)| u.timer);
        let (t, start) = self.s.fixed_ns.zip(timer.start)?;
        let idle = self.last_send_ns.is_none_or(|l| !later(l, start) || elapsed(start, l) < t);
        if p.psn != self.una || !idle || run_by(start, p.switch_ts_ns) < t {
            return None;
        }
        let sent = ts_sub(p.switch_ts_ns, self.sent_held_ns);
        Some(if run_by(start, sent) >= t { Expiry::Sure } else { Expiry::Maybe })
    }

    /// Whether the timer, started as the trace shows, may have fired by `ts`: it ran the
    /// fixed timeout, or with adaptive retransmission the shortest adaptive one (§6.3).
    fn timer_may_have_run_out(&self, ts: u64) -> bool {
        self.s.shortest_ns.zip(self.timer.elapsed(ts)).is_some_and(|(t, e)| e >= t)
    }

    /// The timer may have expired by `ts`, had an unseen packet (re)started it earlier.
    fn maybe_expired(&self, ts: u64) -> bool {
        self.s.configured_ns.zip(self.timer.earliest).is_some_and(|(t, e)| run_by(e, ts) >= t)
    }

    /// Whether the timer had fired by `ts`; never known with adaptive retransmission: a
    /// go-back a pending NAK explains is then the NAK's (Lumina's rule, as `gbn` does).
    fn timer_expired(&self, ts: u64) -> bool {
        self.s.fixed_ns.zip(self.timer.elapsed(ts)).is_some_and(|(t, e)| e >= t)
    }

    /// Whether the timer had fired by go-back `first` as the requester ran it: without the
    /// progress the go-back provably had not heard (it goes back behind it, `crossed`),
    /// which restarted nothing (sweep seed 3125: a READ response run that passed the switch
    /// just before the timer's go-back from its first PSN, which was that timeout's, not a
    /// READ NACK of the gap before).
    /// Only progress that passed within the in-flight window before the go-back may not
    /// have been heard: older progress was, and a go-back behind it is a late NACK (an
    /// E810's READ NACK, 83 ms, after the timer's go-back already recovered the gap).
    fn expired_unheard(&self, first: PacketRef) -> bool {
        let crossed = self.crossed(first, false).filter(|(u, _)| self.maybe_unheard(u, first.switch_ts_ns));
        let timer = crossed.map_or(self.timer, |(u, _)| u.timer);
        self.s.fixed_ns.zip(timer.elapsed(first.switch_ts_ns)).is_some_and(|(t, e)| e >= t)
    }

    /// Whether progress `u` may not have reached the requester by `now`: it left the switch
    /// toward it (its copy, plus its queueing there) within the in-flight window and the
    /// path before. Older progress had.
    fn maybe_unheard(&self, u: &Unheard, now: u64) -> bool {
        let window = super::gbn::IN_FLIGHT_NS + self.path_ns.unwrap_or(0);
        within(u.at, now, window + u.queued)
    }

    /// Whether the timer had fired by go-back `first`, for pending NAK `n`: as the trace
    /// shows it; for a NAK a timeout's go-back went back over already, as the requester ran
    /// it (without progress the go-back had not heard, `crossed`): that NAK's own go-back
    /// comes only if it arrived after that expiry, and a later go-back from before its PSN
    /// is another timeout's once the timer ran out again.
    fn expired_for(&self, n: &PendingNak, first: PacketRef) -> bool {
        let timer = self.timer_for(n, first);
        self.s.fixed_ns.zip(timer.elapsed(first.switch_ts_ns)).is_some_and(|(t, e)| e >= t)
    }

    /// The timer `expired_for` judges `n`'s go-back by.
    fn timer_for(&self, n: &PendingNak, first: PacketRef) -> Timer {
        self.crossed(first, false).filter(|_| n.overtaken).map_or(self.timer, |(u, _)| u.timer)
    }

    /// The timer expired by go-back `first` as the trace shows it, but progress restarted
    /// it, on its arrival up to [`DELIVERY_NS`] after its copy (or the path's round trip,
    /// when longer: 8 µs cables, slow-path cases 4044, 4988): it may not have expired
    /// yet, and the go-back be pending NAK `n`'s (a NAK's and a timeout's go-back to one
    /// PSN within that window came the other way round: sweep seeds 73, 169, 187). Or the
    /// requester's NIC may have decided the go-back before the expiry and held it behind
    /// its other sends, its link busy (`egress::Sends`).
    fn expiry_unsure(&self, n: &PendingNak, first: PacketRef) -> bool {
        let timer = self.timer_for(n, first);
        let slack = if timer.heard { self.delivery_ns() } else { 0 } + self.sent_held_ns;
        self.s.fixed_ns.zip(timer.elapsed(first.switch_ts_ns)).is_some_and(|(t, e)| e < t + slack)
    }

    /// The first progress seen that had not reached the requester when its timer expired
    /// before go-back `first`, with the state before it (the rest came later still). Proven
    /// for progress past the PSN the go-back resends (the requester resends from its oldest
    /// PSN unacknowledged). With `lapse`, also progress whose copy passed when the timer
    /// before it had run out, within the way to the requester and back ([`DELIVERY_NS`]),
    /// and run out by `first`: it may have arrived after the expiry, restarting nothing —
    /// unless the requester sent new data that long after the expiry (it had not fired).
    /// Also whether progress left out of `unheard` may have been the first to cross.
    fn crossed(&self, first: PacketRef, lapse: bool) -> Option<(Unheard, Doubt)> {
        let (psn, una, ts) = (first.psn, self.una, first.switch_ts_ns);
        let behind = |u: &Unheard| psn < una && u.una > psn;
        let ran_out = |u: &Unheard| {
            let Some((start, t)) = u.timer.start.zip(self.s.fixed_ns) else { return false };
            let by = |at: u64, slack: u64| run_by(start, at) + slack >= t;
            let fresh_after = self.fresh_ns.is_some_and(|f| later(f, start) && elapsed(start, f) >= t + DELIVERY_NS);
            lapse && by(u.at, DELIVERY_NS) && by(ts, 0) && !fresh_after
        };
        let i = self.unheard.iter().position(|u| behind(u) || ran_out(u))?;
        Some((self.unheard[i], i > 0 && self.unheard[i].after_gap))
    }

    /// WRITE/SEND go-back of the data: a NAK's, unless the timer fired first. The
    /// requester schedules one go-back per NAK, from the PSN it names or the oldest one
    /// unacknowledged if later: the oldest pending NAK resuming there is this one's, else
    /// the oldest naming one before it (several are pending after out-of-order data, a GBN
    /// violation, or when the timer overtook a NAK whose go-back never came). Returns its
    /// draft (none for an RNR resend).
    fn data_go_back(&mut self, first: PacketRef) -> Option<usize> {
        if self.rnr_pending.take_if(|&mut p| p == first.psn).is_some() {
            self.timer.arm(first.switch_ts_ns, self.order, self.unseen_send());
            return None;
        }
        self.answered_unseen(first);
        // A NAK-sequence-error go-back resends from the PSN the NAK named, or from the
        // oldest PSN unacknowledged when a later NAK acknowledged that one (out-of-order
        // data: NAK 9 then NAK 10, both go back from 10); failing that, the oldest NAK
        // naming a PSN at or before it.
        let una = self.una;
        let from = |n: &PendingNak| n.nak.psn.max(una) == first.psn && !n.overtaken;
        let exact = self.naks.iter().position(from).or_else(|| self.naks.iter().position(|n| n.nak.psn == first.psn));
        let nak = exact.or_else(|| self.naks.iter().position(|n| n.nak.psn <= first.psn));
        match nak {
            Some(i) if !self.expired_for(&self.naks[i], first) => {
                // Lumina §4 (Figure 5): with several NAKs resuming where this one does (here,
                // or before an unseen first copy), the NIC may answer the later one first:
                // which is this go-back's the trace cannot tell.
                let resume = self.naks[i].nak.psn.max(una);
                let twin = |n: &PendingNak| n.nak.psn.max(una) == resume && !n.overtaken;
                if self.naks.iter().filter(|n| twin(n)).count() > 1 {
                    self.group_twins(twin);
                }
                let mut n = self.naks.remove(i);
                if self.unseen_twin(Some(&n), first) {
                    // Its go-back may be the unseen NAK's, and this NAK's come later.
                    (n.unseen_gap, n.ambiguous, self.twin_go_back) = (true, true, true);
                }
                Some(self.nak_go_back(n, first))
            }
            _ => {
                let unsure = nak.is_some_and(|i| self.expiry_unsure(&self.naks[i], first));
                for n in self.naks.iter_mut().filter(|n| n.nak.psn <= first.psn) {
                    n.overtaken = true;
                    n.overtaken_unsure |= unsure;
                }
                // A go-back due to an unseen NAK is no timeout the trace proves.
                let unseen_nak = self.twin_go_back || self.unseen_twin(None, first);
                self.twin_go_back = false;
                let i = self.timeout(first, Some(first));
                self.drafts[i].doubt |= unseen_nak || unsure;
                Some(i)
            }
        }
    }

    /// Flags the pending NAKs `twin` selects `ambiguous`, and lists them together (with the
    /// twins any of them was found with before).
    fn group_twins(&mut self, twin: impl Fn(&PendingNak) -> bool) {
        let known = self.naks.iter().filter(|n| twin(n)).find_map(|n| n.twins);
        let g = known.unwrap_or_else(|| {
            self.twins.push(Vec::new());
            self.twins.len() - 1
        });
        for n in self.naks.iter_mut().filter(|n| twin(n)) {
            n.ambiguous = true;
            if n.twins != Some(g) {
                n.twins = Some(g);
                self.twins[g].push(n.nak.seq);
            }
        }
    }

    /// Out-of-order data under capture loss: the NAK of one of its two gaps may be unseen,
    /// its go-back resuming here as well. That gap (taken, so it counts once) is one the
    /// late packet filled with copies missing since it was revealed, or, when `n` answers
    /// such a gap, the gap just after it with copies missing since it was revealed.
    fn unseen_twin(&mut self, n: Option<&PendingNak>, first: PacketRef) -> bool {
        let (unseen, order, una) = (self.unseen, self.order, self.una);
        let hidden = |g: &Gap| unseen.between(Some(g.cause.order), order);
        let filled = |g: &Gap| g.filled && g.expected.max(una) == first.psn && hidden(g);
        if let Some(i) = self.closed.iter().position(filled) {
            self.closed.remove(i);
            return true;
        }
        let next = n.filter(|n| n.gap.is_some_and(|g| g.filled)).map(|n| n.nak.psn + 1);
        let Some(i) = self.gaps.iter().position(|g| Some(g.expected) == next && hidden(g)) else { return false };
        self.gaps.remove(i);
        true
    }

    /// The NACK recovery of NAK `n`, whose go-back starts at `first`.
    fn nak_go_back(&mut self, n: PendingNak, first: PacketRef) -> usize {
        let expected = n.gap.map_or(n.nak.psn, |g| g.expected);
        // A go-back not from the PSN the NAK names may have started at an unseen resend; a
        // NAK no gap explains, in a trace lacking copies, may answer an unseen gap (with a
        // complete trace it follows a GBN fault). Or the timer may have fired first, started
        // by an unseen packet.
        // So too when copies are missing since the NAK (its own go-back may be unseen) and
        // the timer may have run out by now (adaptive retransmission: its shortest timeout).
        let own_unseen =
            self.unseen.between(Some(n.order), self.order) && self.timer_may_have_run_out(first.switch_ts_ns);
        // Or the timer had run out as the requester ran it, the progress this go-back went
        // back behind unheard: a NIC fires a NAK's go-back even after hearing progress past
        // its PSN, so the trace cannot tell which (queueing case 321: an 8 µs timer, 2 µs
        // cables, an ACK of the NAK's PSN copied 4.7 µs before the timer's go-back).
        let maybe_timer = own_unseen || self.maybe_expired(first.switch_ts_ns) || self.expired_unheard(first);
        let doubt = n.unseen_gap || n.overtaken_unsure || (first.psn != n.nak.psn && self.unseen_before) || maybe_timer;
        // From the PSN the NAK names, or the oldest unacknowledged when a later NAK
        // acknowledged that one (out-of-order data). Unverifiable, from either: progress seen
        // since may acknowledge the go-back's own unseen resends; and up to the first resend
        // seen when a copy is missing just before it: the go-back may be another NAK's, unseen.
        let from = n.nak.psn.max(self.una);
        let from = if doubt && self.unseen_before { from.max(first.psn) } else { from };
        let psn_min = (doubt && n.nak.psn < from).then_some(n.nak.psn);
        self.draft(Draft {
            kind: RecoveryKind::Nack,
            lost: self.losses.get(&expected).copied(),
            revealing: n.gap.and_then(|g| g.revealing()),
            expected: n.gap.map(|g| g.expected),
            nak: Some(n.nak),
            first: Some(first),
            data: Some(first),
            timeout: None,
            doubt,
            from: Some(from),
            after_gap: false,
            waiting: None,
            psn_min,
            ambiguous: n.ambiguous,
            twins: n.twins,
            maybe_timer,
        })
    }

    /// Pending NAKs this go-back cannot answer: it resumes past where theirs would, and
    /// fewer copies are missing just before it than their go-back would have sent unseen
    /// up to it. Theirs came earlier, unseen (or never): unverifiable, with what is known.
    fn answered_unseen(&mut self, first: PacketRef) {
        if self.missing_before == 0 {
            return;
        }
        let (una, room) = (self.una, self.missing_before);
        let cannot = |n: &PendingNak| n.nak.psn.max(una) + room < first.psn;
        let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.naks).into_iter().partition(cannot);
        self.naks = kept;
        for n in gone {
            self.nak_only(n);
        }
    }

    /// A NAK whose go-back the trace lacks: an unverifiable recovery with its NAK, the
    /// gap's packets and the NACK generation latency.
    fn nak_only(&mut self, n: PendingNak) {
        let expected = n.gap.map_or(n.nak.psn, |g| g.expected);
        let lost = self.losses.get(&expected).copied();
        let revealing = n.gap.and_then(|g| g.revealing());
        let expected = n.gap.map(|g| g.expected);
        let nack =
            Draft { lost, revealing, expected, nak: Some(n.nak), from: Some(n.nak.psn), ..Draft::read_nack(true) };
        self.drafts.push(Draft { kind: RecoveryKind::Nack, ..nack });
    }

    /// READ: a request from the requester.
    fn request(&mut self, p: PacketRef, r: &Record) {
        let repeat = p.psn <= self.requests.max.max(self.data.max);
        let pkts = self.s.mtu.filter(|_| r.has(flag::RETH)).map(|m| u64::from(r.dma_len().div_ceil(m.max(1)).max(1)));
        // A request continuing the repeated run before it, with a copy missing in between,
        // a whole timeout later or from the PSN a gap since expects: that copy may have
        // continued the run, this one going back.
        let cause = self.timer_may_have_run_out(p.switch_ts_ns) || self.gaps.iter().any(|g| g.expected == p.psn);
        // Past the end of the repeated run before it, with a copy missing in between, no such
        // cause, and no response seen from its PSN on: the missing copies asked for the PSNs
        // skipped, the run goes on. A go-back asks from the oldest PSN unacknowledged (a
        // timeout's) or from a gap's, which only a response past it reveals.
        let unanswered = p.psn > self.data.max && self.unseen_before && !cause;
        let skipped_unseen = |prev_end: Option<u64>| prev_end.is_some_and(|e| e < p.psn) && unanswered;
        let go_back = repeat
            && self.requests.prev.is_none_or(|(prev, prev_end, prev_repeat)| {
                !prev_repeat || (prev_end.map_or(p.psn <= prev, |e| p.psn != e) && !skipped_unseen(prev_end))
            });
        let unseen_go_back = repeat && !go_back && self.unseen_before && cause;
        if repeat {
            self.resend_order = Some(self.order);
        }
        if go_back || unseen_go_back {
            let i = self.request_go_back(p, delivered(r), pkts.map(|n| p.psn + n));
            self.drafts[i].doubt |= unseen_go_back;
            self.asked_from(p.psn);
        } else if repeat {
            self.go_back_continues(p.psn, pkts);
        }
        if !repeat {
            self.msg_starts.entry(p.psn).or_insert(self.order);
            self.fresh_ns = Some(p.switch_ts_ns);
            self.requests.asked = Some((p.psn, p.switch_ts_ns));
            if delivered(r) {
                self.unanswered_asks.insert(p.psn, self.order);
                if self.unanswered_asks.len() > PENDING_CAP {
                    self.unanswered_asks.pop_first();
                }
            }
        }
        self.unseen_expiry_before(p, repeat);
        self.timer.arm(p.switch_ts_ns, self.order, self.unseen_send());
        let q = &mut self.requests;
        q.max = q.max.max(p.psn);
        q.end = q.end.max(p.psn + pkts.unwrap_or(1));
        q.prev = Some((p.psn, pkts.map(|n| p.psn + n), repeat));
    }

    /// READ go-back of the requests: the "NACK" of a revealed gap (§6.1), unless the timer
    /// fired first.
    ///
    /// Only a request that reached the responder waits for its answer: one dropped on its
    /// way is answered by nothing (the next one asked, after a timeout, is). Returns its
    /// draft.
    fn request_go_back(&mut self, req: PacketRef, reached: bool, end: Option<u64>) -> usize {
        self.expected_again(req.psn);
        self.rx.recovering();
        self.drop_overdue_gaps(req.switch_ts_ns);
        // A lost READ request: the responder NAKed its PSN, the requester asks again.
        if let Some(k) = self.naks.iter().position(|n| n.nak.psn == req.psn) {
            let n = self.naks.remove(k);
            let i = self.draft(Draft {
                kind: RecoveryKind::Nack,
                lost: None,
                revealing: None,
                nak: Some(n.nak),
                first: Some(req),
                data: None,
                timeout: None,
                doubt: false, // the go-back is from the PSN the NAK names
                from: None,
                after_gap: false,
                waiting: None,
                psn_min: None,
                expected: None,
                ambiguous: false,
                twins: None,
                maybe_timer: false,
            });
            if reached {
                self.await_data(i, req.psn, end);
            }
            return i;
        }
        if let Some(i) = self.repeated_nak(req) {
            let first = &self.drafts[i];
            let (lost, revealing, expected) = (first.lost, first.revealing, first.expected);
            // The timer, started by an unseen packet, may have sent this one.
            let maybe_timer = first.maybe_timer || self.maybe_expired(req.switch_ts_ns);
            let doubt = first.doubt || maybe_timer;
            let nack = Draft { lost, revealing, expected, nak: Some(req), maybe_timer, ..Draft::read_nack(doubt) };
            let i = self.draft(nack);
            if reached {
                self.await_data(i, req.psn, end);
            }
            return i;
        }
        // Each revealed gap schedules one go-back, and they fire in the order the gaps
        // were seen: the oldest pending gap is this one's (several are pending only when
        // a timeout recovered the data before a slow NACK fired — E810, §6.1).
        self.drop_overtaken_gaps(req.psn);
        let i = match self.gaps.first().copied() {
            Some(g) if !self.expired_unheard(req) => {
                self.gaps.remove(0);
                let lost = self.losses.get(&g.expected).copied();
                // Not from the missing PSN: the first repeat may be unseen, and then the
                // responder goes back to the missing PSN it asked for. Past it, this one may
                // be the go-back instead (the timer's, the gap's NACK made moot by an earlier
                // timeout): it resumed from one of the two, or between.
                let doubt = req.psn != g.expected && self.unseen_before;
                let (from, psn_min) = match doubt {
                    true if g.expected < req.psn => (None, Some(g.expected)),
                    true => (Some(g.expected), None),
                    false => (None, None),
                };
                // Or the timer may have fired first, started by an unseen packet; or, not
                // from the gap's PSN with copies missing since it, the gap it answers is
                // unseen and this one stale.
                let stale = req.psn != g.expected && self.unseen.between(Some(g.cause.order), self.order);
                let maybe_timer = self.maybe_expired(req.switch_ts_ns);
                let doubt = doubt || stale || maybe_timer;
                let (revealing, expected) = (g.revealing(), Some(g.expected));
                let nack = Draft {
                    lost,
                    revealing,
                    expected,
                    nak: Some(req),
                    from,
                    psn_min,
                    maybe_timer,
                    ..Draft::read_nack(doubt)
                };
                self.draft(nack)
            }
            // A gap stays pending through a timeout: its go-back is still scheduled.
            _ => self.timeout(req, None),
        };
        self.drafts[i].after_gap = self.unseen_before;
        // The unseen repeat before this one may have reached the responder.
        if reached || self.unseen_before {
            self.await_data(i, req.psn, end);
        }
        i
    }

    /// Draft `i`'s repeated request (its PSN `psn`) waits for the responder's go-back.
    fn await_data(&mut self, i: usize, psn: u64, end: Option<u64>) {
        self.drafts[i].waiting = Some(self.order);
        self.awaiting_data.push_back((i, psn, end));
        if self.awaiting_data.len() > PENDING_CAP {
            self.awaiting_data.pop_front();
        }
    }

    /// READ: a repeat the timer may have sent (adaptive retransmission: its timeout is not
    /// known; else it expired) later than the NIC's READ NAK bound after a gap is no NACK
    /// of it (Lumina §6.1, `transport::read_nak_overdue`, as `gbn` judges), and none will
    /// come: the gap is dropped (a later gap's NACK is not its), the repeat is the timer's.
    fn drop_overdue_gaps(&mut self, ts: u64) {
        let timer_may = !self.s.disabled && (self.s.fixed_ns.is_none() || self.timer_expired(ts));
        let Some(bound) = self.s.read_nak_ns.filter(|_| timer_may) else { return };
        let path = self.delivery_ns();
        self.gaps.retain(|g| !read_nak_overdue(g.left_ns, ts, bound, path));
    }

    /// READ: gaps a timeout overtook answer only a repeat from their own PSN; the oldest
    /// ones another repeat finds first never will (sweep case 763: a gap at PSN 83, moot
    /// after three timeouts recovered it, was paired with a timeout's repeat from PSN 257
    /// 220 µs later).
    fn drop_overtaken_gaps(&mut self, psn: u64) {
        while self.gaps.first().is_some_and(|g| g.overtaken && g.expected != psn) {
            self.gaps.remove(0);
        }
    }

    /// READ: the requester repeats its request from the PSN of a READ NACK not answered
    /// yet, before the timer could fire: it NAKed one gap twice (gbn's
    /// `multiple-outstanding-naks`). The timer did not fire, so it is no timeout but a
    /// second READ NACK of that gap (the responder goes back once more for it). Returns
    /// the first one's draft. The timer as the requester ran it: responses the repeat went
    /// back behind had not reached it, and restarted nothing (slow-path case 7444: at 1 Gb/s
    /// the response of the missing PSN came in 8.8 µs after its copy, and the timer expired
    /// in between).
    fn repeated_nak(&self, req: PacketRef) -> Option<usize> {
        let &(i, psn, _) = self.awaiting_data.back()?;
        let nack = self.drafts[i].kind == RecoveryKind::ReadNack;
        (nack && psn == req.psn && !self.gap_names(req.psn) && !self.expired_unheard(req)).then_some(i)
    }

    /// A gap revealed since the last NAK, no timeout overtook, is missing `psn`: a
    /// request repeated from there is that gap's NACK, not the last one's again. (The
    /// data receiver reveals a new gap while a NAK is pending only once the old gap was
    /// filled: a slow NACK, fired after a timeout recovered its gap, names the requester's
    /// PSN of then, which the next loss's NACK repeats.)
    fn gap_names(&self, psn: u64) -> bool {
        self.gaps.iter().any(|g| !g.overtaken && g.expected == psn)
    }

    /// READ: a request continuing the repeated run before it (the next message's PSN, or
    /// one past it with the requests between unseen): the go-back waiting for its answer
    /// asked for its PSNs too.
    fn go_back_continues(&mut self, psn: u64, pkts: Option<u64>) {
        if let (Some(n), Some(last)) = (pkts, self.awaiting_data.back_mut()) {
            if last.2.is_some_and(|e| e <= psn) {
                last.2 = Some(psn + n);
            }
        }
    }

    /// READ: response `psn`, in order after the one before it, continues the answer under
    /// way ([`Self::answering`]); past its end, no answer is.
    fn answer_continues(&mut self, psn: u64) -> bool {
        if self.answering.is_some_and(|end| psn >= end) {
            self.answering = None;
        }
        self.answering.is_some()
    }

    /// READ: the responder's go-back answers the oldest request go-back from that PSN.
    /// `mid_start`: `first` starts an answer in the middle of a message, so it answers a
    /// request from its own PSN, not a repeated run from before whose first responses went
    /// unseen (the run's requests start where messages do).
    fn response_go_back(&mut self, first: PacketRef, go_back: bool, mid_start: bool) {
        // From the request's PSN, or from the missing PSN an unseen repeat asked for.
        let drafts = &self.drafts;
        let exact = self.awaiting_data.iter().position(|&(i, psn, _)| {
            let d = &drafts[i];
            psn == first.psn || d.from == Some(first.psn) || (d.after_gap && first.psn < psn)
        });
        // With a copy missing just before, the go-back may have started before this PSN,
        // at the request's.
        // Not past the PSNs the request asked for.
        let asked = |&(_, psn, end): &(usize, u64, Option<u64>)| psn < first.psn && end.is_none_or(|e| first.psn < e);
        let unseen_start = || self.awaiting_data.iter().position(asked);
        let start = if exact.is_none() && go_back && self.unseen_before && !mid_start { unseen_start() } else { None };
        let Some(k) = exact.or(start) else {
            if go_back {
                self.answering = None;
                self.unseen_request_go_back(first);
            }
            return;
        };
        let (i, asked, end) = self.awaiting_data[k];
        self.awaiting_data.drain(..=k);
        self.answering = end;
        if start.is_some() {
            self.answered_unseen_from(asked, first.psn);
        }
        let (unseen_before, una) = (self.unseen_before, self.floor());
        let d = &mut self.drafts[i];
        let at_asked = asked == first.psn || d.from == Some(first.psn);
        // From the PSN asked, it is the go-back's first packet, unless the request's answer
        // went unseen and this is a later, unseen request's: two copies missing at least.
        let hidden = self.unseen.count_between(d.waiting, self.order) >= 2;
        // Not from the PSN the request seen asked for: from an unseen one's.
        d.doubt |= !at_asked || hidden;
        d.from = Some(if start.is_some() { d.from.unwrap_or(asked).min(asked) } else { first.psn });
        if !at_asked && start.is_none() && unseen_before {
            // The unseen repeat's PSN is not known, nor whether its answer began unseen.
            (d.from, d.psn_min) = (None, Some(una));
        }
        d.data = Some(first);
        if d.kind == RecoveryKind::ReadNack {
            d.first = Some(first);
        }
    }

    /// READ: a go-back's answer from `asked` seen first at `psn`, its first responses'
    /// copies missing: the requester is taken to have had them, as PSNs a gap skips past
    /// missing copies (`deliver`); it no longer waits for `asked` while it ignores the rest.
    fn answered_unseen_from(&mut self, asked: u64, psn: u64) {
        if let Some(e) = self.rx.expected().filter(|&e| asked <= e && e < psn) {
            self.rx.expect(psn);
            self.take_as_received(e, psn);
        }
    }

    /// PSNs `from`..`to` are taken as received unseen ([`Self::assumed`]).
    fn take_as_received(&mut self, from: u64, to: u64) {
        self.assumed.insert(from, to);
        if self.assumed.len() > PENDING_CAP {
            self.assumed.pop_first();
        }
    }

    /// READ: a go-back of the responses no request go-back seen asked for. With a copy
    /// missing since the request the responder's previous response may answer (the
    /// requester's last packet before that response: a request seen after it may wait
    /// behind the unseen one, answered in order), the repeated request is that copy:
    /// the recovery happened, unverifiable (its request, hence its kind and latencies, is
    /// unseen) — the oldest pending gap's READ NACK, else a timeout's. Without one, it is
    /// left alone (no request asked for it: not the requester's recovery).
    fn unseen_request_go_back(&mut self, first: PacketRef) {
        if !self.unseen.between(self.asked_before_answer, self.order) {
            return;
        }
        self.rx.recovering();
        self.drop_overtaken_gaps(first.psn);
        let i = match self.gaps.first().copied() {
            Some(g) if g.expected <= first.psn && !self.timer_expired(first.switch_ts_ns) => {
                self.gaps.remove(0);
                let lost = self.losses.get(&g.expected).copied();
                let nack = Draft {
                    lost,
                    revealing: g.revealing(),
                    expected: Some(g.expected),
                    first: Some(first),
                    data: Some(first),
                    ..Draft::read_nack(true)
                };
                self.draft(nack)
            }
            _ => {
                let i = self.timeout(first, Some(first));
                self.drafts[i].doubt = true;
                i
            }
        };
        debug_assert!(self.drafts[i].doubt);
    }

    /// A go-back with no NAK: the retransmission timer expired.
    fn timeout(&mut self, first: PacketRef, data: Option<PacketRef>) -> usize {
        self.timeout_after(first, data, true)
    }

    /// A go-back taken as a timeout's; `expired`: the timer surely expired before it (else
    /// it may have gone on running, the next expiry counted from its start, not this one).
    fn timeout_after(&mut self, first: PacketRef, data: Option<PacketRef>, expired: bool) -> usize {
        // IBA: the timer and count as the requester ran them, without progress that reached
        // it after the expiry; its oldest PSN unacknowledged then is the one timed out.
        let short = !self.timer_expired(first.switch_ts_ns);
        self.hear_acknowledged(first.psn);
        let mut from = first.psn;
        let mut thinned = false;
        if let Some((u, unsure)) = self.crossed(first, short) {
            (self.timer, self.attempts, self.heard_una, self.attempts_doubt) =
                (u.timer, u.attempts, u.heard_una, u.attempts_doubt | unsure);
            from = from.min(u.before);
            thinned = unsure;
            // A timeout goes back to the oldest PSN unacknowledged: the requester had heard
            // the progress up to it, even if the trace's clock had not passed it when `u`
            // was seen (`pending`).
            // (Through `ran_out`, `u` itself may be behind the go-back: heard, but after the
            // expiry; only what came before it counts then.)
            let heard_to = if u.una > first.psn { first.psn } else { u.before };
            self.count_heard(heard_to);
        }
        self.heard_after_expiry(first.psn);
        for g in &mut self.gaps {
            g.overtaken = true;
        }
        self.unheard.clear();
        // IBA §9.7.6.1.3: the retry count, expiries since the last forward progress.
        self.attempts += 1;
        // The requester's last packet before the go-back may be unseen: then so is the
        // observed timeout (the recovery itself stands).
        let last_tx = self.last_tx[Role::Requester.index()].filter(|l| !self.unseen.between(Some(l.order), self.order));
        let observed_ns = last_tx.map(|l| elapsed(l.switch_ts_ns, first.switch_ts_ns));
        let timer_elapsed_ns = self.timer.elapsed(first.switch_ts_ns);
        let configured_ns = self.s.configured_ns;
        // Early only if it was even from the earliest start the timer can have had: after
        // an expiry, the resend that restarted it may have been held back by the NIC's own
        // pacing (queueing sweep case 248: an 8 µs timer, slow restart sending a packet
        // every 5 µs, go-backs 5 µs apart on the wire, each timer scheduled on time).
        let run_at_most = self.timer.elapsed_at_most(first.switch_ts_ns);
        let early = self.s.adaptive == Some(false) && configured_ns.zip(run_at_most).is_some_and(|(t, e)| e < t);
        let floor_start = self.timer.floor.or(self.timer.start);
        let floor = if expired { configured_ns.zip(floor_start).map(|(t, s)| ts_add(s, t)) } else { floor_start };
        let detail = TimeoutDetail {
            attempt: self.attempts,
            last_tx,
            observed_ns,
            timer_elapsed_ns,
            configured_ns,
            ratio: observed_ns.zip(configured_ns).filter(|&(_, t)| t > 0).map(|(o, t)| o as f64 / t as f64),
            early,
            timer_disabled: self.s.disabled,
            beyond_retry_cnt: self.s.retry_cnt.is_some_and(|n| self.attempts > u32::from(n)),
        };
        // Early by the trace, but the send that started the timer may have been unseen.
        let mut doubt = self.timeout_doubt(first) || early && self.timer.earliest.is_some() || thinned;
        // After an unverifiable timeout its count may be off (its PSN, hence the message
        // whose acknowledgement resets the count, unsure) until the count is reset.
        doubt |= self.attempts_doubt || !expired;
        if let Some(listed) = self.unseen_expiry(first, timer_elapsed_ns) {
            // Its attempt is not known; a missed expiry is a recovery of its own.
            doubt = true;
            if listed {
                let (from, psn_min) = (Some(first.psn), Some(self.floor()));
                self.drafts.push(Draft { kind: RecoveryKind::Timeout, from, psn_min, ..Draft::read_nack(true) });
            }
        }
        self.attempts_doubt |= doubt;
        // Progress seen before the go-back, past the PSN it went back to, arrives after the
        // expiry: the count starts over then.
        self.first_reset = None;
        if self.clock_heard_una > from {
            self.clock_heard(self.clock_heard_una);
        }
        // The expiry stops the timer; the retransmission's send starts it again.
        self.timer.restart(None, self.order, None);
        self.timer.floor = floor;
        self.draft(Draft {
            kind: RecoveryKind::Timeout,
            lost: self.losses.range(first.psn..).next().map(|(_, &l)| l),
            revealing: None,
            nak: None,
            first: Some(first),
            data,
            timeout: Some(detail),
            doubt,
            from: None,
            after_gap: false,
            waiting: None,
            psn_min: None,
            expected: None,
            ambiguous: false,
            twins: None,
            maybe_timer: false,
        })
    }

    /// Whether an expiry before this one may be unseen (its go-back's copies missing since
    /// the timer's start), and whether one must have been (listed then): IBA restarts the
    /// timer at each expiry's resend, so with adaptive retransmission off the timer ran two
    /// configured timeouts or more; adaptive ones are shorter (§6.3), any may be.
    fn unseen_expiry(&self, first: PacketRef, elapsed: Option<u64>) -> Option<bool> {
        let since = self.timer.start_order.or(self.last_order[Role::Requester.index()]);
        let twice = self.s.configured_ns.zip(elapsed).is_some_and(|(t, e)| e >= 2 * t);
        let iba = self.s.adaptive == Some(false);
        let hidden = first.psn == self.una && self.unseen.between(since, self.order);
        (hidden && (twice || !iba)).then_some(twice && iba)
    }

    /// A copy missing since the timer's (re)start may hide the NAK this go-back answered,
    /// when the timer had not expired, or an acknowledgement that restarted it, when the
    /// go-back is not from the oldest PSN the trace saw unacknowledged (a timeout resends
    /// from the oldest one: so also when its first retransmission went unseen).
    fn timeout_doubt(&self, first: PacketRef) -> Doubt {
        let since = self.timer.start_order.or(self.last_order[Role::Requester.index()]);
        let hidden = self.unseen.between(since, self.order);
        hidden && (!self.timer_expired(first.switch_ts_ns) || first.psn != self.una)
    }

    fn draft(&mut self, mut d: Draft) -> usize {
        if d.from.is_none() && self.unseen_before {
            d.psn_min = Some(self.floor());
        }
        let from = d.first.or(d.nak).map(|p| p.psn);
        d.doubt |= from.is_some_and(|psn| self.in_assumed(psn));
        self.drafts.push(d);
        self.drafts.len() - 1
    }

    /// `p` resends a lost packet with its PSN: that loss's total latency, and the recovery
    /// resending it (the latest go-back since the loss, from its PSN or before).
    fn resent(&mut self, p: PacketRef) {
        let Some((lost, order, _)) = self.unresent.remove(&p.psn) else { return };
        let since = |g: PacketRef| g.index > lost.index && g.psn <= p.psn;
        let recovery = self.drafts.iter().rev().find(|d| d.data.is_some_and(since));
        // A copy missing in between may be an earlier resend: then the latency is unknown.
        let first = !self.unseen.between(Some(order), self.order);
        self.lost_packets.push(Loss {
            conn: self.conn,
            lost,
            retransmission: Some(p),
            total_ns: Some(elapsed(lost.switch_ts_ns, p.switch_ts_ns)).filter(|_| first),
            recovered_by: recovery.and_then(|d| d.first),
        });
    }

    /// The recoveries the trace proves, those a missing copy may explain, and the losses.
    fn finish(mut self) -> (Vec<Recovery>, Vec<Recovery>, Vec<Loss>) {
        self.unanswered();
        let conn = self.conn;
        let never = self.unresent.values().map(|&(lost, ..)| Loss {
            conn,
            lost,
            retransmission: None,
            total_ns: None,
            recovered_by: None,
        });
        self.lost_packets.extend(never.collect::<Vec<_>>());
        // A recovery's total latency is its lost packet's (Lumina: the first later packet
        // with its PSN is its retransmission).
        let totals: FxHashMap<u32, u64> =
            self.lost_packets.iter().filter_map(|l| Some((l.lost.index, l.total_ns?))).collect();
        // One with no retransmission the trace proves nothing: with a complete trace, a
        // NAK whose go-back was overtaken.
        self.drafts.retain(|d| d.first.is_some() || d.doubt);
        let (doubted, proven): (Vec<Draft>, Vec<Draft>) =
            std::mem::take(&mut self.drafts).into_iter().partition(|d| d.doubt);
        let unseen = self.unseen;
        let twins = &self.twins;
        let recoveries = |drafts: Vec<Draft>| -> Vec<Recovery> {
            let recovery = |d: Draft| d.recovery(conn, &totals, unseen, twins);
            let mut recs: Vec<Recovery> = drafts.into_iter().map(recovery).collect();
            for r in &mut recs {
                r.psn_in_message = r.plotted().and_then(|p| self.in_message(p));
            }
            recs
        };
        (recoveries(proven), recoveries(doubted), self.lost_packets)
    }

    /// The PSN of `p` within its message, 1 = the message's first: from the nearest
    /// message start at or below it, when no copy is missing between the two in the trace
    /// (a later message's start may hide there).
    fn in_message(&self, p: PacketRef) -> Option<u64> {
        let (&start, &order) = self.msg_starts.range(..=p.psn).next_back()?;
        let (lo, hi) = (order.min(p.order), order.max(p.order));
        (!self.unseen.between(Some(lo), hi)).then_some(p.psn - start + 1)
    }

    /// NAKs (READ: repeated requests) whose go-back the trace lacks, with copies missing
    /// since: the go-back may be among them, so the recovery happened, unverifiable, with
    /// what the trace has (its NAK, the gap's packets, the generation latency).
    fn unanswered(&mut self) {
        let unseen = self.unseen;
        let hidden = |order: u64| unseen.between(Some(order), u64::MAX);
        for d in self.drafts.iter_mut().filter(|d| d.first.is_none() && d.waiting.is_some_and(hidden)) {
            d.doubt = true;
            d.from = d.from.or(d.nak.map(|n| n.psn));
        }
        for n in std::mem::take(&mut self.naks).into_iter().filter(|n| !n.overtaken && hidden(n.order)) {
            self.nak_only(n);
        }
        self.unseen_go_backs(hidden);
    }

    /// Lost packets never seen resent, with copies missing since: a go-back the trace
    /// lacks may have recovered them, of a kind it cannot tell — unless a recovery drafted
    /// names them or a go-back seen after them resent them.
    fn unseen_go_backs(&mut self, hidden: impl Fn(u64) -> bool) {
        let named: FxHashSet<u32> = self.drafts.iter().filter_map(|d| Some(d.lost?.index)).collect();
        // A go-back seen after the loss, from its PSN or before, resent it too: the lowest
        // PSN a go-back resumed from after each point of the trace.
        let mut go_backs: Vec<(u32, u64)> =
            self.drafts.iter().filter_map(|d| d.data.map(|g| (g.index, g.psn))).collect();
        go_backs.sort_unstable();
        let mut lowest_after = vec![u64::MAX; go_backs.len() + 1];
        for (i, &(_, psn)) in go_backs.iter().enumerate().rev() {
            lowest_after[i] = lowest_after[i + 1].min(psn);
        }
        let resent = |l: &PacketRef| lowest_after[go_backs.partition_point(|&(i, _)| i <= l.index)] <= l.psn;
        let mut past: Vec<_> = self
            .unresent
            .values()
            .filter(|(l, order, _)| hidden(*order) && !named.contains(&l.index) && !resent(l))
            .copied()
            .collect();
        past.sort_by_key(|(l, ..)| l.index);
        for (lost, _, una) in past {
            let d =
                Draft { kind: RecoveryKind::Unknown, lost: Some(lost), psn_min: Some(una), ..Draft::read_nack(true) };
            self.drafts.push(d);
        }
    }
}

impl Draft {
    /// The recovery as reported: its PSN (a range where the trace does not tell) and only
    /// the latencies whose two packets are known to be its own.
    fn recovery(self, conn: u32, totals: &FxHashMap<u32, u64>, unseen: &Unseen, twins: &[Vec<u32>]) -> Recovery {
        let first = self.first;
        let start = if self.doubt { self.from.or(first.map(|f| f.psn)) } else { first.map(|f| f.psn) };
        let psn = start.or(self.lost.map(|l| l.psn)).unwrap_or(0);
        // Where the trace does not tell, the go-back resumed at or before its first
        // retransmission seen (or its lost packet), not before the oldest PSN unacknowledged.
        let psn_min = self.psn_min.filter(|_| self.doubt).map(|m| m.min(psn)).filter(|&m| m < psn);
        let (generation_ns, reaction_ns) = self.nack_latencies(psn, psn_min, unseen);
        Recovery {
            conn,
            kind: self.kind,
            psn,
            psn_min,
            lost: self.lost,
            revealing: self.revealing,
            nak: self.nak,
            first_retransmission: first,
            data_retransmission: self.data,
            generation_ns,
            reaction_ns,
            psn_in_message: None,
            total_ns: self.lost.and_then(|l| totals.get(&l.index).copied()),
            // Unverifiable: a NAK's go-back may have been taken for a timeout's (its NAK
            // unseen), so no timeout is measured.
            timeout: self.timeout.map(|t| match self.doubt {
                false => t,
                true => TimeoutDetail { last_tx: None, observed_ns: None, ratio: None, ..t },
            }),
            nak_ambiguous: self.ambiguous,
            nak_candidates: self.twins.filter(|_| self.ambiguous).map_or_else(Vec::new, |g| twins[g].clone()),
        }
    }

    /// NACK generation (revealing → NAK) and reaction (NAK → first retransmission), Lumina
    /// Figure 5. Unverifiable: only when the NAK seen is this recovery's — it names the PSN
    /// the go-back resumed from and the gap's missing PSN (a repeat seen after a missing
    /// copy may be a later one) — and no copy is missing between the two packets (one may
    /// be the real NAK, or the go-back's real first packet).
    fn nack_latencies(&self, psn: u64, psn_min: Option<u64>, unseen: &Unseen) -> (Option<u64>, Option<u64>) {
        // No reaction when the go-back may be another NAK's (`Recovery::nak_ambiguous`).
        let nack = self.kind != RecoveryKind::Timeout && !self.ambiguous;
        let delta = |a: Option<PacketRef>, b: Option<PacketRef>| {
            let (a, b) = a.zip(b)?;
            let adjacent = !self.doubt || !unseen.between(Some(a.order), b.order);
            adjacent.then(|| elapsed(a.switch_ts_ns, b.switch_ts_ns))
        };
        if !self.doubt {
            return (delta(self.revealing, self.nak), delta(self.nak, self.first).filter(|_| nack));
        }
        let own = |n: PacketRef| {
            n.psn == psn && psn_min.is_none() && self.expected.is_none_or(|e| e == psn) && !self.maybe_timer
        };
        let nak_known = self.nak.is_some_and(own);
        let at_start = self.first.is_some_and(|f| f.psn == psn);
        let generation = delta(self.revealing, self.nak).filter(|_| nak_known);
        (generation, delta(self.nak, self.first).filter(|_| nack && nak_known && at_start))
    }
}

/// Time a timer (re)started at `start` had run by `ts`: none if it started later (on
/// progress the requester heard only after `ts`, behind a queue).
fn run_by(start: u64, ts: u64) -> u64 {
    if later(start, ts) {
        0
    } else {
        elapsed(start, ts)
    }
}

fn drop_below<V>(m: &mut BTreeMap<u64, V>, below: u64) {
    while m.first_key_value().is_some_and(|(&k, _)| k < below) {
        m.pop_first();
    }
}

fn push_capped<T>(v: &mut Vec<T>, x: T) {
    if v.len() >= PENDING_CAP {
        v.remove(0);
    }
    v.push(x);
}

fn us(ns: Option<u64>) -> String {
    ns.map_or("-".into(), |v| format!("{:.3}", v as f64 / 1e3))
}

fn seq(p: Option<PacketRef>) -> String {
    p.map_or("-".into(), |p| p.seq.to_string())
}

impl Report {
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        let o = &self.overall;
        let _ = writeln!(
            out,
            "retransmission: {} ({} nack, {} read-nack, {} timeout), {}, {} resent",
            plural(o.recoveries as u64, "recovery", "recoveries"),
            o.nack,
            o.read_nack,
            o.timeouts,
            plural(o.lost_packets, "lost data packet", "lost data packets"),
            o.retransmitted_packets
        );
        if o.resent_by_another_recovery > 0 {
            let n = o.resent_by_another_recovery;
            let n = plural(n as u64, "lost packet", "lost packets");
            let _ = writeln!(out, "  {n} resent by another loss's recovery (report.json `losses` lists each)");
        }
        if self.timer_disabled {
            let _ = writeln!(out, "  timer disabled (t = 0: no timeout retransmission expected)");
        }
        if let Some(t) = self.configured_timeout_ns {
            let adaptive = self.adaptive_retrans.map_or("unknown", |a| if a { "on" } else { "off" });
            let _ = writeln!(
                out,
                "  configured timeout {} µs (t = {}), adaptive retransmission {adaptive}",
                us(Some(t)),
                self.timeout_exponent.unwrap_or(0)
            );
        }
        for (name, l) in [
            ("NACK generation", o.generation),
            ("NACK reaction", o.reaction),
            ("total retrans", o.total), // per lost packet
            ("timeout", o.timeout),
        ] {
            if l.count > 0 {
                let (min, med, max) = (us(l.min_ns), us(l.median_ns), us(l.max_ns));
                let _ = writeln!(out, "  {name:<16} µs: n {:<5} min {min:>12} median {med:>12} max {max:>12}", l.count);
            }
        }
        if !self.recoveries.is_empty() {
            let _ = writeln!(
                out,
                "  {:>4} {:<9} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>11} {:>12} {:>3}",
                "conn",
                "kind",
                "psn",
                "lost",
                "reveal",
                "nak",
                "retx",
                "gen µs",
                "react µs",
                "total µs",
                "timeout µs",
                "try"
            );
        }
        render_capped(out, &self.recoveries, |out, r| {
            let t = r.timeout.as_ref();
            let _ = writeln!(
                out,
                "  {:>4} {:<9} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>11} {:>12} {:>3}",
                r.conn,
                r.kind.name(),
                r.psn,
                seq(r.lost),
                seq(r.revealing),
                seq(r.nak),
                seq(r.first_retransmission),
                us(r.generation_ns),
                us(r.reaction_ns),
                us(r.total_ns),
                us(t.and_then(|t| t.observed_ns)),
                t.map_or("-".into(), |t| t.attempt.to_string()),
            );
        });
        let ambiguous = self.recoveries.iter().filter(|r| r.nak_ambiguous).count() as u64;
        if ambiguous > 0 {
            let _ = writeln!(
                out,
                "  {} with no NACK reaction: another NAK pending resumed from the same PSN (out-of-order data: the later NAK acknowledges the PSN the earlier names, so both go back to the oldest PSN unacknowledged), and the NIC may answer either first: which go-back answered which the trace cannot tell (report.json `nak_ambiguous`, `nak_candidates`)",
                plural(ambiguous, "recovery", "recoveries")
            );
        }
        if let (Some(n), true) = (self.retry_cnt, self.overall.beyond_retry_cnt > 0) {
            let (label, why) = match self.adaptive_retrans {
                Some(false) => ("PROBLEM: ", "with adaptive retransmission off"),
                _ => ("", "(adaptive retransmission may retry more, §6.3)"),
            };
            let _ = writeln!(
                out,
                "  {label}{} beyond retry_cnt {n}, up to attempt {} {why}",
                plural(self.overall.beyond_retry_cnt as u64, "timeout retransmission", "timeout retransmissions"),
                self.overall.max_attempt
            );
        }
        let disabled = self.recoveries.iter().filter(|r| r.timeout.as_ref().is_some_and(|t| t.timer_disabled));
        render_capped(out, disabled, |out, r| {
            let _ = writeln!(
                out,
                "  PROBLEM: conn {} timeout retransmission seq {} with the timer disabled (timeout 0)",
                r.conn,
                seq(r.first_retransmission)
            );
        });
        let early = self.recoveries.iter().filter_map(|r| Some((r, r.timeout.as_ref().filter(|t| t.early)?)));
        render_capped(out, early, |out, (r, t)| {
            // Early is judged by the timer; the table shows the observed timeout.
            let _ = writeln!(
                out,
                "  PROBLEM: conn {} timeout retransmission seq {}: timer ran {} µs since its (re)start (observed {} µs since the requester's last send, the table's), configured {} µs (adaptive off)",
                r.conn,
                seq(r.first_retransmission),
                us(t.timer_elapsed_ns),
                us(t.observed_ns),
                us(t.configured_ns)
            );
        });
        if !self.unverifiable.is_empty() {
            let _ = writeln!(
                out,
                "  {} more unverifiable: the trace leaves {} kind or PSN open (a mirror copy missing just before, or a go-back too close to a timer's expiry to tell whose it is; report.json: retransmission.unverifiable)",
                plural(self.unverifiable.len() as u64, "recovery", "recoveries"),
                if self.unverifiable.len() == 1 { "its" } else { "their" }
            );
        }
        for n in &self.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }

    /// Timeout retransmissions that came before the configured timeout had elapsed since
    /// the timer's (re)start, with adaptive retransmission explicitly off — the IBA timer
    /// never fires early — and, then too, those beyond the configured `retry_cnt`; and any
    /// with the timer disabled.
    /// Everything else here is a measurement, not a problem.
    pub fn problems(&self) -> usize {
        let beyond = if self.adaptive_retrans == Some(false) { self.overall.beyond_retry_cnt } else { 0 };
        self.overall.early_timeouts + self.overall.disabled_timer_timeouts + beyond
    }

    /// Figures 8–9 (Lumina §6.1): NACK generation and reaction latency against the PSN of
    /// the lost packet within its message, one SVG each; a plot with no points is skipped.
    pub fn plots(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        let plots: [(&str, &str, Latency); 2] = [
            (PLOT_GENERATION, "NACK generation latency", |r| r.generation_ns),
            (PLOT_REACTION, "NACK reaction latency", |r| r.reaction_ns),
        ];
        let x = self.x_axis();
        for (file, title, f) in plots {
            let series = self.points(f, x);
            if series.iter().all(|(_, pts)| pts.is_empty()) {
                continue;
            }
            let path = dir.join(file);
            scatter(&path, title, x.label(), &series).map_err(std::io::Error::other)?;
            written.push(path);
        }
        Ok(written)
    }

    /// The PSN within the message, as the paper's figures have it, when every plotted
    /// recovery has one; else the PSN from the QP's first (one axis for all points).
    fn x_axis(&self) -> PlotX {
        let plotted = self.recoveries.iter().filter(|r| matches!(r.kind, RecoveryKind::Nack | RecoveryKind::ReadNack));
        match plotted.clone().all(|r| r.psn_in_message.is_some()) {
            true => PlotX::InMessage,
            false => PlotX::Relative,
        }
    }

    /// (series name, (PSN on `x`, µs)) per recovery kind with a NAK.
    fn points(&self, f: Latency, x: PlotX) -> Vec<(&'static str, Vec<(i64, f64)>)> {
        [(RecoveryKind::Nack, "WRITE/SEND NACK"), (RecoveryKind::ReadNack, "READ NACK (repeated request)")]
            .into_iter()
            .map(|(kind, name)| {
                let pts = self
                    .recoveries
                    .iter()
                    .filter(|r| r.kind == kind)
                    .filter_map(|r| Some((x.of(r)?, f(r)? as f64 / 1e3)))
                    .collect();
                (name, pts)
            })
            .collect()
    }
}

/// What the retransmission plots' x axis is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PlotX {
    /// The lost packet's PSN within its message (`Recovery::psn_in_message`).
    InMessage,
    /// The lost packet's PSN from the QP's first (1 = IPSN).
    Relative,
}

impl PlotX {
    fn of(self, r: &Recovery) -> Option<i64> {
        let psn = match self {
            PlotX::InMessage => r.psn_in_message?,
            PlotX::Relative => r.plotted().map_or(r.psn, |p| p.psn),
        };
        i64::try_from(psn).ok()
    }

    fn label(self) -> &'static str {
        match self {
            PlotX::InMessage => "PSN of the lost packet within its message (1 = its first)",
            PlotX::Relative => "PSN of the lost packet from the QP's first (1 = initial PSN)",
        }
    }
}

/// Picks one latency of a recovery.
type Latency = fn(&Recovery) -> Option<u64>;

fn scatter(path: &Path, title: &str, x_desc: &str, series: &[(&str, Vec<(i64, f64)>)]) -> Result<(), String> {
    use plotters::prelude::*;
    let all = || series.iter().flat_map(|(_, p)| p.iter());
    let (x0, x1) = all().fold((i64::MAX, i64::MIN), |(lo, hi), &(x, _)| (lo.min(x), hi.max(x)));
    let y1 = all().fold(0.0f64, |hi, &(_, y)| hi.max(y));
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(crate::analyze::plot_range(x0, x1), 0.0..(y1 * 1.1).max(1e-3))
        .map_err(|e| e.to_string())?;
    chart.configure_mesh().x_desc(x_desc).y_desc("latency (µs)").draw().map_err(|e| e.to_string())?;
    for (i, (name, pts)) in series.iter().enumerate().filter(|(_, (_, p))| !p.is_empty()) {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| e.to_string())?
            .label(*name)
            .legend(move |(x, y)| Circle::new((x, y), 3, color.filled()));
    }
    chart.configure_series_labels().background_style(WHITE).border_style(BLACK).draw().map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::record::Kind;

    #[test]
    fn unwrap_follows_the_psn_wrap() {
        let mut u = Unwrap::new(psn::MASK - 1);
        let got: Vec<u64> = [psn::MASK - 1, psn::MASK, 0, 1, psn::MASK, 2].iter().map(|&p| u.pos(p)).collect();
        assert_eq!(got, [1, 2, 3, 4, 2, 5]);
    }

    #[test]
    fn go_backs_and_holes() {
        let mut s = Sent::default();
        let seen: Vec<(bool, bool)> = [1, 2, 4, 3, 5, 3, 4, 5, 6].iter().map(|&p| s.observe(p, false)).collect();
        // 4 before 3 (held back): 3 is a first transmission; the resend of 3 is a go-back.
        assert_eq!(
            seen,
            [
                (false, false),
                (false, false),
                (false, false),
                (false, false),
                (false, false),
                (true, true),
                (true, false),
                (true, false),
                (false, false)
            ]
        );
    }

    /// A WRITE connection replayed from hand-made records: (to, opcode, PSN offset, ts,
    /// event, AETH syndrome).
    type Pkt = (Role, u8, u32, u64, u8, Option<u8>);

    fn replay(s: Settings, packets: &[Pkt]) -> Vec<Recovery> {
        replay_all(s, packets).0
    }

    fn replay_all(s: Settings, packets: &[Pkt]) -> (Vec<Recovery>, Vec<Loss>) {
        let (recs, _, losses) = replay_lossy(s, packets, &[]);
        (recs, losses)
    }

    /// As `replay_all`, with one mirror copy missing just before each packet whose
    /// position `missing` lists: (proven, unverifiable, losses).
    fn replay_lossy(s: Settings, packets: &[Pkt], missing: &[usize]) -> (Vec<Recovery>, Vec<Recovery>, Vec<Loss>) {
        let end = |qpn| super::super::conn::End { ip: std::net::Ipv4Addr::LOCALHOST.into(), qpn };
        let c = Connection {
            id: 0,
            requester: end(1),
            responder: end(2),
            ipsn: Some(psn::MASK),
            from_qp_info: true,
            verb: Some(s.verb),
            packets: Vec::new(),
        };
        let records: Vec<Record> = packets
            .iter()
            .enumerate()
            .map(|(i, &(_, opcode, off, ts, event, aeth))| {
                let skipped = missing.iter().filter(|&&m| m <= i).count();
                let mut r = Record::default()
                    .with_seq((i + 1 + skipped) as u64)
                    .with_psn(psn::add(psn::MASK, off))
                    .with_opcode(opcode)
                    .with_event(wire::mirror::Event::ALL[usize::from(event)])
                    .with_kind(Kind::of(Some(opcode)));
                if let Some(syndrome) = aeth {
                    r = r.with_aeth(syndrome, 0);
                }
                r.switch_ts_ns = ts;
                r
            })
            .collect();
        let unseen = Unseen::of(&records);
        let mut t = Tracker::new(&c, s, &unseen);
        for (i, (r, p)) in records.iter().zip(packets).enumerate() {
            t.packet(i as u32, r, p.0, 0, 0);
        }
        t.finish()
    }

    const WRITE_MIDDLE: u8 = 0x07;
    const ACK: u8 = 0x11;
    const CNP: u8 = 0x81;
    const NAK_SEQ: u8 = 0b0110_0000;

    fn write(adaptive: Option<bool>) -> Settings {
        let configured_ns = iba_timeout_ns(14);
        let fixed_ns = configured_ns.filter(|_| adaptive != Some(true));
        Settings {
            verb: Verb::Write,
            configured_ns,
            disabled: false,
            fixed_ns,
            shortest_ns: fixed_ns.or(configured_ns.map(|_| crate::analyze::transport::ADAPTIVE_SHORTEST_NS)),
            retry_cnt: Some(7),
            adaptive,
            mtu: None,
            read_nak_ns: None,
        }
    }

    #[test]
    fn a_nack_recovery_across_the_psn_wrap() {
        use Role::{Requester as Req, Responder as Resp};
        // PSN offset 1 (the wire PSN wraps to 0) is dropped; 2 reveals it; NAK; go-back.
        let got = replay(
            write(Some(false)),
            &[
                (Resp, WRITE_MIDDLE, 0, 1_000, 0, None),
                (Resp, WRITE_MIDDLE, 1, 1_100, 1, None),
                (Resp, WRITE_MIDDLE, 2, 1_200, 0, None),
                (Req, ACK, 1, 3_000, 0, Some(NAK_SEQ)),
                (Resp, WRITE_MIDDLE, 1, 7_000, 0, None),
                (Resp, WRITE_MIDDLE, 2, 7_100, 0, None),
            ],
        );
        assert_eq!(got.len(), 1);
        let r = &got[0];
        assert_eq!((r.kind, r.psn, r.first_retransmission.map(|f| f.seq)), (RecoveryKind::Nack, 2, Some(5)));
        assert_eq!((r.lost.unwrap().seq, r.revealing.unwrap().seq, r.nak.unwrap().seq), (2, 3, 4));
        assert_eq!((r.generation_ns, r.reaction_ns, r.total_ns), (Some(1_800), Some(4_000), Some(5_900)));
    }

    /// Figures 8–9's x (Lumina §6.1): the lost packet's PSN within its message, from the
    /// message's First; unknown when a copy is missing between the two.
    #[test]
    fn a_loss_is_placed_within_its_message_only_when_no_copy_hides_a_start() {
        use Role::{Requester as Req, Responder as Resp};
        const FIRST: u8 = 0x06;
        const LAST: u8 = 0x08;
        let packets = [
            (Resp, FIRST, 0, 1_000, 0, None),
            (Resp, WRITE_MIDDLE, 1, 1_100, 0, None),
            (Resp, LAST, 2, 1_200, 0, None),
            (Req, ACK, 2, 1_300, 0, Some(0)),
            (Resp, FIRST, 3, 2_000, 0, None),
            (Resp, WRITE_MIDDLE, 4, 2_100, 1, None),
            (Resp, LAST, 5, 2_200, 0, None),
            (Req, ACK, 4, 3_000, 0, Some(NAK_SEQ)),
            (Resp, WRITE_MIDDLE, 4, 7_000, 0, None),
            (Resp, LAST, 5, 7_100, 0, None),
        ];
        let placed = |missing: &[usize]| {
            let (proven, doubted, _) = replay_lossy(write(Some(false)), &packets, missing);
            proven.iter().chain(&doubted).map(|r| (r.lost.map(|l| l.psn), r.psn_in_message)).collect::<Vec<_>>()
        };
        assert_eq!(placed(&[]), [(Some(5), Some(2))], "PSN 5 is the second of the message from PSN 4");
        assert_eq!(placed(&[5]), [(Some(5), None)], "a copy missing after the First may be a later First");
        assert_eq!(placed(&[4]), [(Some(5), Some(2))], "a copy missing before the First hides nothing between");
    }

    #[test]
    fn plot_ranges_leave_room_around_the_points() {
        for (lo, hi) in [(5, 95), (1, 1), (0, 1000), (3, 4)] {
            let r = crate::analyze::plot_range(lo, hi);
            assert!(r.start < lo && hi < r.end - 1, "{lo}..={hi} in {r:?}: a point on the axis line");
        }
    }

    #[test]
    fn a_nak_dropped_on_its_way_leaves_the_recovery_to_the_timeout() {
        use Role::{Requester as Req, Responder as Resp};
        // 2 is dropped, 3 reveals it, the NAK is dropped too: the requester goes back
        // after its 67 ms timer, which is no NACK reaction and no early timeout.
        let t = iba_timeout_ns(14).unwrap();
        let got = replay(
            write(Some(false)),
            &[
                (Resp, WRITE_MIDDLE, 0, 1_000, 0, None),
                (Resp, WRITE_MIDDLE, 1, 1_100, 1, None),
                (Resp, WRITE_MIDDLE, 2, 1_200, 0, None),
                (Req, ACK, 1, 3_000, 1, Some(NAK_SEQ)),
                (Resp, WRITE_MIDDLE, 1, 1_200 + t + 500, 0, None),
                (Resp, WRITE_MIDDLE, 2, 1_200 + t + 600, 0, None),
            ],
        );
        assert_eq!(got.len(), 1);
        let (r, timeout) = (&got[0], got[0].timeout.as_ref().unwrap());
        assert_eq!((r.kind, r.nak.map(|n| n.seq)), (RecoveryKind::Timeout, None));
        assert!(!timeout.early, "{timeout:?}");
        let report = Report { overall: Stats::of(got.iter(), &[], &[], 1), ..Report::default() };
        assert_eq!(report.problems(), 0);
    }

    #[test]
    fn a_lost_read_request_is_recovered_by_the_responders_nak() {
        use Role::{Requester as Req, Responder as Resp};
        // Requests at 0, 1 (dropped) and 2; the responder answers 0, NAKs 1; the requester
        // asks again from 1 a few µs later: a NACK recovery, not an early timeout.
        let read = Settings { verb: Verb::Read, ..write(Some(false)) };
        let got = replay(
            read,
            &[
                (Resp, READ_REQUEST, 0, 1_000, 0, None),
                (Resp, READ_REQUEST, 1, 1_100, 1, None),
                (Resp, READ_REQUEST, 2, 1_200, 0, None),
                (Req, READ_RESPONSE_ONLY, 0, 2_000, 0, None),
                (Req, ACK, 1, 2_500, 0, Some(NAK_SEQ)),
                (Resp, READ_REQUEST, 1, 6_000, 0, None),
                (Resp, READ_REQUEST, 2, 6_100, 0, None),
                (Req, READ_RESPONSE_ONLY, 1, 7_000, 0, None),
                (Req, READ_RESPONSE_ONLY, 2, 7_100, 0, None),
            ],
        );
        assert_eq!(got.len(), 1, "{got:?}");
        let r = &got[0];
        assert_eq!(
            (r.kind, r.nak.map(|n| n.seq), r.first_retransmission.map(|f| f.seq)),
            (RecoveryKind::Nack, Some(5), Some(6))
        );
        assert_eq!((r.reaction_ns, r.timeout.is_none()), (Some(3_500), true));
        assert_eq!(r.data_retransmission.map(|d| d.seq), Some(8));
    }

    /// READ requests 0, 1, 2 and their responses, 1 dropped: 2 reveals the gap.
    fn read_gap_at_one() -> Vec<Pkt> {
        use Role::{Requester as Req, Responder as Resp};
        vec![
            (Resp, READ_REQUEST, 0, 1_000, 0, None),
            (Resp, READ_REQUEST, 1, 1_100, 0, None),
            (Resp, READ_REQUEST, 2, 1_200, 0, None),
            (Req, READ_RESPONSE_ONLY, 0, 2_000, 0, None),
            (Req, READ_RESPONSE_ONLY, 1, 2_100, 1, None),
            (Req, READ_RESPONSE_ONLY, 2, 2_200, 0, None),
        ]
    }

    #[test]
    fn a_repeated_read_request_dropped_on_its_way_is_answered_by_nothing() {
        use Role::{Requester as Req, Responder as Resp};
        let t = iba_timeout_ns(14).unwrap();
        // Response 1 is dropped, 2 reveals it; the requester asks again from 1 but that
        // request is dropped too; after its timer it asks again, and is answered.
        let read = Settings { verb: Verb::Read, ..write(Some(false)) };
        let mut packets = read_gap_at_one();
        packets.extend([
            (Resp, READ_REQUEST, 1, 5_000, 1, None),
            (Resp, READ_REQUEST, 1, 5_000 + t + 100, 0, None),
            (Req, READ_RESPONSE_ONLY, 1, 5_000 + t + 1_000, 0, None),
        ]);
        let got = replay(read, &packets);
        let answered: Vec<(RecoveryKind, u32)> =
            got.iter().filter_map(|r| Some((r.kind, r.data_retransmission?.seq))).collect();
        assert_eq!(answered, [(RecoveryKind::Timeout, 9)], "{got:?}");
        assert!(got.iter().all(|r| r.reaction_ns.is_none_or(|ns| ns < t)), "{got:?}");
    }

    #[test]
    fn a_late_read_nack_behind_responses_heard_long_ago_is_no_timeout() {
        use Role::{Requester as Req, Responder as Resp};
        // Review, session 25: an E810 requester (READ NACK ~83 ms) with a 33 ms timer.
        // Response 1 is dropped, 2 reveals the gap; the timer's go-back recovers it; the
        // NIC's slow READ NACK repeats from 1 at 83 ms, behind responses heard 50 ms
        // before: a NACK, not a timeout of the timer the go-back restarted.
        let t = iba_timeout_ns(13).unwrap();
        let read = Settings {
            verb: Verb::Read,
            configured_ns: Some(t),
            fixed_ns: Some(t),
            read_nak_ns: Some(166_000_000),
            ..write(Some(false))
        };
        let mut packets = read_gap_at_one();
        packets.extend([
            (Resp, READ_REQUEST, 1, 2_000 + t + 100, 0, None),
            (Resp, READ_REQUEST, 2, 2_000 + t + 200, 0, None),
            (Req, READ_RESPONSE_ONLY, 1, 2_000 + t + 1_000, 0, None),
            (Req, READ_RESPONSE_ONLY, 2, 2_000 + t + 1_100, 0, None),
            (Resp, READ_REQUEST, 1, 2_200 + 83_000_000, 0, None),
        ]);
        let got = replay(read, &packets);
        let timeouts = got.iter().filter(|r| r.kind == RecoveryKind::Timeout).count();
        assert_eq!(timeouts, 1, "only the timer's go-back: {got:?}");
    }

    #[test]
    fn a_resend_held_back_by_pacing_makes_the_next_timeout_no_early_one() {
        use Role::Responder as Resp;
        let t = iba_timeout_ns(14).unwrap();
        // The first expiry's resend leaves 3 µs late (the NIC paces its sends); the second
        // expiry's, on time, comes 2 µs short of a timeout after it on the wire, but a whole
        // timeout after the first expiry, when the timer restarted.
        let first = 1_000 + t + 3_000;
        for (second, early) in [(first + t - 2_000, false), (first + t / 2, true)] {
            let packets = [
                (Resp, WRITE_MIDDLE, 0, 1_000, 0, None),
                (Resp, WRITE_MIDDLE, 0, first, 0, None),
                (Resp, WRITE_MIDDLE, 0, second, 0, None),
            ];
            let got = replay(write(Some(false)), &packets);
            let t2 = got[1].timeout.as_ref().unwrap();
            assert_eq!(
                (got[1].kind, t2.attempt, t2.timer_elapsed_ns),
                (RecoveryKind::Timeout, 2, Some(second - first))
            );
            assert_eq!(t2.early, early, "second resend {} after the first", second - first);
            assert!(!got[0].timeout.as_ref().unwrap().early);
        }
    }

    #[test]
    fn an_early_timeout_is_a_problem_only_with_adaptive_off() {
        use Role::Responder as Resp;
        // The tail is dropped and resent 10 µs later: far below 67 ms.
        let packets = [(Resp, WRITE_MIDDLE, 0, 1_000, 0, None), (Resp, WRITE_MIDDLE, 0, 11_000, 0, None)];
        for (adaptive, early) in [(Some(false), true), (Some(true), false), (None, false)] {
            let got = replay(write(adaptive), &packets);
            let t = got[0].timeout.as_ref().unwrap();
            assert_eq!(
                (got[0].kind, t.attempt, t.observed_ns, t.timer_elapsed_ns),
                (RecoveryKind::Timeout, 1, Some(10_000), Some(10_000))
            );
            assert_eq!(t.early, early, "adaptive {adaptive:?}");
            let overall = Stats::of(got.iter(), &[], &[], 1);
            let report = Report { overall, recoveries: got, adaptive_retrans: adaptive, ..Report::default() };
            assert_eq!(report.problems(), usize::from(early));
            let mut text = String::new();
            report.render(&mut text);
            assert!(
                text.starts_with(
                    "retransmission: 1 recovery (0 nack, 0 read-nack, 1 timeout), 0 lost data packets, 1 resent"
                ),
                "{text}"
            );
            // One timeout, two clocks: the PROBLEM line says which it is and gives both.
            let problem = "PROBLEM: conn 0 timeout retransmission seq 2: timer ran 10.000 µs since its (re)start \
                           (observed 10.000 µs since the requester's last send, the table's), configured 67108.864 µs (adaptive off)";
            assert_eq!(text.contains(problem), early, "{text}");
        }
    }

    /// IBA vol. 1 §9.7.6.1.3: `timeout` 0 disables the timer; a timeout go-back then is a
    /// misbehaviour in any adaptive mode, and no NAK's go-back is taken for one.
    #[test]
    fn a_timeout_with_the_timer_disabled_is_a_problem() {
        use Role::{Requester as Req, Responder as Resp};
        let tail = [(Resp, WRITE_MIDDLE, 0, 1_000, 0, None), (Resp, WRITE_MIDDLE, 0, 11_000, 0, None)];
        for adaptive in [Some(false), Some(true), None] {
            let s = Settings { configured_ns: None, disabled: true, fixed_ns: None, ..write(adaptive) };
            let got = replay(s, &tail);
            let t = got[0].timeout.as_ref().unwrap();
            assert!(t.timer_disabled && !t.early && t.configured_ns.is_none(), "{t:?}");
            let overall = Stats::of(got.iter(), &[], &[], 1);
            let report = Report { overall, recoveries: got, timer_disabled: true, ..Report::default() };
            assert_eq!(report.problems(), 1, "adaptive {adaptive:?}");
            let mut text = String::new();
            report.render(&mut text);
            assert!(text.contains("PROBLEM: conn 0 timeout retransmission seq 2 with the timer disabled"), "{text}");
        }
        // A NAK's go-back long after it (a timer of any length would have fired) is the NAK's.
        let nak = [
            (Resp, WRITE_MIDDLE, 0, 1_000, 1, None),
            (Resp, WRITE_MIDDLE, 1, 1_100, 0, None),
            (Req, ACK, 0, 2_000, 0, Some(NAK_SEQ)),
            (Resp, WRITE_MIDDLE, 0, 900_000_000, 0, None),
        ];
        let s = Settings { configured_ns: None, disabled: true, fixed_ns: None, ..write(Some(false)) };
        let got = replay(s, &nak);
        assert_eq!(got.iter().map(|r| r.kind).collect::<Vec<_>>(), [RecoveryKind::Nack], "{got:?}");
    }

    #[test]
    fn tries_beyond_retry_cnt_are_flagged_with_adaptive_retransmission_off() {
        use Role::Responder as Resp;
        // The tail packet is resent 9 times, a timeout (67 ms) apart: retry_cnt 7 allows 7.
        let mut packets = vec![(Resp, SEND_ONLY, 0, 1_000, 0, None)];
        let timeout = iba_timeout_ns(14).unwrap();
        packets.extend((1..=9).map(|k| (Resp, SEND_ONLY, 0, 1_000 + k * (timeout + 1), 0, None)));
        for adaptive in [Some(false), Some(true)] {
            let got = replay(write(adaptive), &packets);
            let beyond: Vec<u32> = got
                .iter()
                .filter_map(|r| r.timeout.as_ref())
                .filter(|t| t.beyond_retry_cnt)
                .map(|t| t.attempt)
                .collect();
            assert_eq!(beyond, [8, 9]);
            let overall = Stats::of(got.iter(), &[], &[], 9);
            let report = Report { overall, retry_cnt: Some(7), adaptive_retrans: adaptive, ..Report::default() };
            assert_eq!(report.problems(), usize::from(adaptive == Some(false)) * 2);
            let mut text = String::new();
            report.render(&mut text);
            assert!(text.contains("2 timeout retransmissions beyond retry_cnt 7, up to attempt 9"), "{text}");
        }
    }

    const SEND_ONLY: u8 = 0x04;
    const READ_REQUEST: u8 = 0x0c;
    const READ_RESPONSE_ONLY: u8 = 0x10;

    #[test]
    fn a_gap_no_nak_answered_does_not_pair_with_a_later_loss() {
        use Role::{Requester as Req, Responder as Resp};
        let t0 = 100_000_000; // after the 67 ms timeout
        let got = replay(
            write(Some(false)),
            &[
                (Resp, WRITE_MIDDLE, 0, 1_000, 0, None),
                (Resp, WRITE_MIDDLE, 1, 1_100, 1, None), // dropped
                (Resp, WRITE_MIDDLE, 2, 1_200, 0, None), // reveals a gap no NAK answers
                (Resp, WRITE_MIDDLE, 1, t0, 0, None),    // the timeout's go-back
                (Resp, WRITE_MIDDLE, 2, t0 + 100, 0, None),
                (Req, ACK, 2, t0 + 2_000, 0, Some(0x1f)),
                (Resp, WRITE_MIDDLE, 3, t0 + 3_000, 0, None),
                (Resp, WRITE_MIDDLE, 4, t0 + 3_100, 1, None), // seq 8, dropped
                (Resp, WRITE_MIDDLE, 5, t0 + 3_200, 0, None), // seq 9 reveals it
                (Req, ACK, 4, t0 + 5_200, 0, Some(NAK_SEQ)),  // NAK 2 µs later
                (Resp, WRITE_MIDDLE, 4, t0 + 9_200, 0, None), // go-back 4 µs after it
                (Resp, WRITE_MIDDLE, 5, t0 + 9_300, 0, None),
            ],
        );
        assert_eq!(got.iter().map(|r| r.kind).collect::<Vec<_>>(), [RecoveryKind::Timeout, RecoveryKind::Nack]);
        let nack = &got[1];
        assert_eq!((nack.lost.map(|p| p.seq), nack.revealing.map(|p| p.seq)), (Some(8), Some(9)));
        assert_eq!((nack.generation_ns, nack.reaction_ns, nack.total_ns), (Some(2_000), Some(4_000), Some(6_100)));
    }

    #[test]
    fn a_nak_the_timer_overtook_does_not_pair_with_a_later_go_back() {
        use Role::{Requester as Req, Responder as Resp};
        let t0 = 100_000_000; // after the 67 ms timeout
        let got = replay(
            write(Some(false)),
            &[
                (Resp, WRITE_MIDDLE, 0, 1_000, 0, None),
                (Resp, WRITE_MIDDLE, 1, 1_100, 1, None), // dropped
                (Resp, WRITE_MIDDLE, 2, 1_200, 0, None),
                (Req, ACK, 1, 1_300, 0, Some(NAK_SEQ)), // its go-back never comes
                (Resp, WRITE_MIDDLE, 1, t0, 0, None),   // the timer's
                (Resp, WRITE_MIDDLE, 2, t0 + 100, 0, None),
                (Req, ACK, 2, t0 + 2_000, 0, Some(0x1f)),
                (Resp, WRITE_MIDDLE, 3, t0 + 3_000, 0, None),
                (Resp, WRITE_MIDDLE, 4, t0 + 3_100, 1, None), // seq 9, dropped
                (Resp, WRITE_MIDDLE, 5, t0 + 3_200, 0, None), // seq 10 reveals it
                (Req, ACK, 4, t0 + 5_200, 0, Some(NAK_SEQ)),
                (Resp, WRITE_MIDDLE, 4, t0 + 9_200, 0, None),
                (Resp, WRITE_MIDDLE, 5, t0 + 9_300, 0, None),
            ],
        );
        assert_eq!(got.iter().map(|r| r.kind).collect::<Vec<_>>(), [RecoveryKind::Timeout, RecoveryKind::Nack]);
        let nack = &got[1];
        assert_eq!(nack.nak.map(|p| p.seq), Some(11));
        assert_eq!((nack.lost.map(|p| p.seq), nack.revealing.map(|p| p.seq)), (Some(9), Some(10)));
        assert_eq!((nack.generation_ns, nack.reaction_ns, nack.total_ns), (Some(2_000), Some(4_000), Some(6_100)));
    }

    #[test]
    fn an_rnr_resend_is_no_timeout() {
        use Role::{Requester as Req, Responder as Resp};
        const RNR_NAK: u8 = 0x2e; // timer code 14
                                  // SEND 1 is RNR-NAKed and resent 100 µs later, long before the 67 ms timeout.
        let got = replay(
            write(Some(false)),
            &[
                (Resp, SEND_ONLY, 0, 1_000, 0, None),
                (Resp, SEND_ONLY, 1, 1_100, 0, None),
                (Req, ACK, 0, 3_000, 0, Some(0x1f)),
                (Req, ACK, 1, 3_100, 0, Some(RNR_NAK)),
                (Resp, SEND_ONLY, 1, 103_100, 0, None),
                (Req, ACK, 1, 105_000, 0, Some(0x1f)),
            ],
        );
        assert!(got.is_empty(), "{got:#?}");
    }

    /// A loss is credited to a recovery that came after it, never to an earlier one.
    #[test]
    fn a_loss_resent_after_an_rnr_nak_has_no_recovery() {
        use Role::{Requester as Req, Responder as Resp};
        const RNR_NAK: u8 = 0x2e;
        let (recs, losses) = replay_all(
            write(Some(false)),
            &[
                (Resp, SEND_ONLY, 0, 1_000, 0, None),
                (Resp, SEND_ONLY, 1, 1_100, 1, None), // dropped
                (Resp, SEND_ONLY, 2, 1_200, 0, None),
                (Req, ACK, 1, 3_000, 0, Some(NAK_SEQ)),
                (Resp, SEND_ONLY, 1, 5_000, 0, None), // seq 5: the NAK's go-back
                (Resp, SEND_ONLY, 2, 5_100, 0, None),
                (Req, ACK, 2, 7_000, 0, Some(0x1f)),
                (Resp, SEND_ONLY, 3, 8_000, 0, None),
                (Resp, SEND_ONLY, 4, 8_100, 1, None),   // seq 9, dropped
                (Req, ACK, 3, 9_000, 0, Some(RNR_NAK)), // turns 3 away
                (Resp, SEND_ONLY, 3, 109_000, 0, None), // the RNR resend
                (Resp, SEND_ONLY, 4, 109_100, 0, None),
            ],
        );
        assert_eq!(recs.len(), 1);
        let got: Vec<_> = losses.iter().map(|l| (l.lost.seq, l.total_ns, l.recovered_by.map(|f| f.seq))).collect();
        assert_eq!(got, [(2, Some(3_900), Some(5)), (9, Some(101_000), None)]);
        let stats = Stats::of(recs.iter(), &[], &losses, 0);
        assert_eq!((stats.lost_packets, stats.resent_by_another_recovery, stats.total.count), (2, 0, 2));
    }

    /// Issue 4 gap 1: the lost packet, what revealed it and the NAK are seen, every copy
    /// of the go-back missing: still listed, unverifiable, with what the trace has.
    #[test]
    fn a_nack_recovery_seen_by_its_nak_only_is_listed() {
        use Role::{Requester as Req, Responder as Resp};
        let packets = [
            (Resp, WRITE_MIDDLE, 0, 1_000, 0, None),
            (Resp, WRITE_MIDDLE, 1, 1_100, 1, None), // dropped
            (Resp, WRITE_MIDDLE, 2, 1_200, 0, None), // reveals it
            (Req, ACK, 1, 3_000, 0, Some(NAK_SEQ)),
            // the go-back (1, 2) is missing from the trace
            (Resp, WRITE_MIDDLE, 3, 7_300, 0, None),
            (Req, ACK, 3, 9_000, 0, Some(0x1f)),
        ];
        let (proven, doubted, _) = replay_lossy(write(Some(false)), &packets, &[4, 4]);
        assert!(proven.is_empty(), "{proven:#?}");
        let [r] = &doubted[..] else { panic!("{doubted:#?}") };
        assert_eq!((r.kind, r.psn, r.psn_min, r.first_retransmission), (RecoveryKind::Nack, 2, None, None));
        assert_eq!(
            (r.lost.map(|p| p.seq), r.revealing.map(|p| p.seq), r.nak.map(|p| p.seq)),
            (Some(2), Some(3), Some(4))
        );
        assert_eq!((r.generation_ns, r.reaction_ns), (Some(1_800), None));
    }

    /// Issue 4 gap 1: only the lost packet is seen (its NAK and go-back missing), and the
    /// connection got past it: a recovery of a kind the trace cannot tell.
    #[test]
    fn a_recovery_seen_by_its_lost_packet_only_is_listed() {
        use Role::{Requester as Req, Responder as Resp};
        let packets = [
            (Resp, WRITE_MIDDLE, 0, 1_000, 0, None),
            (Resp, WRITE_MIDDLE, 1, 1_100, 1, None), // dropped; all else missing
            (Req, ACK, 1, 9_000, 0, Some(0x1f)),
        ];
        let (proven, doubted, _) = replay_lossy(write(Some(false)), &packets, &[2, 2, 2, 2]);
        assert!(proven.is_empty(), "{proven:#?}");
        let [r] = &doubted[..] else { panic!("{doubted:#?}") };
        assert_eq!((r.kind, r.psn, r.lost.map(|p| p.seq)), (RecoveryKind::Unknown, 2, Some(2)));
        assert_eq!((r.nak, r.first_retransmission, r.generation_ns, r.reaction_ns), (None, None, None, None));
    }

    /// Issue 4 gap 1: the go-back's first copy missing, no NAK seen: the PSN it resumed
    /// from is known only as a range, and no latency is made up.
    #[test]
    fn a_go_back_whose_first_copy_is_missing_has_a_psn_range() {
        use Role::{Requester as Req, Responder as Resp};
        let packets = [
            (Resp, WRITE_MIDDLE, 0, 1_000, 0, None),
            (Req, ACK, 0, 1_500, 0, Some(0x1f)),
            (Resp, WRITE_MIDDLE, 1, 2_000, 0, None),
            (Resp, WRITE_MIDDLE, 2, 2_100, 0, None),
            (Resp, WRITE_MIDDLE, 3, 2_200, 0, None),
            // the NAK of 2 and the go-back's first packet (2) are missing
            (Resp, WRITE_MIDDLE, 3, 6_000, 0, None),
        ];
        let (proven, doubted, _) = replay_lossy(write(Some(false)), &packets, &[5, 5]);
        assert!(proven.is_empty(), "{proven:#?}");
        let [r] = &doubted[..] else { panic!("{doubted:#?}") };
        assert_eq!((r.psn_min, r.psn, r.first_retransmission.map(|p| p.seq)), (Some(2), 4, Some(8)));
        assert_eq!((r.reaction_ns, r.timeout.as_ref().and_then(|t| t.observed_ns)), (None, None));
    }

    /// Issue 4 gap 1: a NAK whose go-back is unseen is not paired with a later go-back
    /// from past its PSN that fewer copies missing just before it than that go-back
    /// would have sent: its own recovery is listed NAK-only, the later one apart.
    #[test]
    fn a_nak_is_not_paired_with_a_go_back_too_far_past_it() {
        use Role::{Requester as Req, Responder as Resp};
        let packets = [
            (Resp, WRITE_MIDDLE, 0, 1_000, 0, None),
            (Resp, WRITE_MIDDLE, 1, 1_100, 1, None), // dropped
            (Resp, WRITE_MIDDLE, 2, 1_200, 0, None),
            (Req, ACK, 1, 3_000, 0, Some(NAK_SEQ)),
            // its go-back (1, 2) is missing
            (Resp, WRITE_MIDDLE, 3, 7_300, 0, None),
            (Resp, WRITE_MIDDLE, 4, 7_400, 0, None),
            (Resp, WRITE_MIDDLE, 5, 7_500, 1, None), // dropped
            (Resp, WRITE_MIDDLE, 6, 7_600, 0, None),
            // its NAK is missing
            (Resp, WRITE_MIDDLE, 5, 12_000, 0, None),
            (Resp, WRITE_MIDDLE, 6, 12_100, 0, None),
        ];
        let (proven, doubted, _) = replay_lossy(write(Some(false)), &packets, &[4, 4, 8]);
        assert!(proven.is_empty(), "{proven:#?}");
        let nak_only = doubted.iter().find(|r| r.nak.is_some_and(|n| n.seq == 4));
        let nak_only = nak_only.unwrap_or_else(|| panic!("{doubted:#?}"));
        assert_eq!((nak_only.psn, nak_only.first_retransmission, nak_only.generation_ns), (2, None, Some(1_800)));
        let later = doubted.iter().find(|r| r.first_retransmission.is_some_and(|f| f.seq == 12));
        let later = later.unwrap_or_else(|| panic!("{doubted:#?}"));
        assert!((later.psn_min.unwrap_or(later.psn)..=later.psn).contains(&6), "{later:#?}");
        assert_eq!((later.nak, later.reaction_ns), (None, None));
    }

    /// A NAK's go-back a whole timeout after the acknowledgement that stopped the timer,
    /// though not after the send that (as the trace shows) started it again: an unseen send
    /// between may have started it, so it may have fired first, the go-back the timer's.
    #[test]
    fn a_go_back_the_timer_may_have_beaten_is_unverifiable() {
        use Role::{Requester as Req, Responder as Resp};
        let t = iba_timeout_ns(14).unwrap();
        let packets = [
            (Resp, WRITE_MIDDLE, 0, 1_000, 0, None),
            (Req, ACK, 0, 2_000, 0, Some(0x1f)), // all acknowledged: the timer stops
            (Resp, WRITE_MIDDLE, 1, 3_000, 1, None), // dropped; starts the timer as seen
            (Resp, WRITE_MIDDLE, 2, 3_100, 0, None),
            (Req, ACK, 1, 5_000, 0, Some(NAK_SEQ)),
            (Resp, WRITE_MIDDLE, 1, 2_000 + t + 100, 0, None),
            (Resp, WRITE_MIDDLE, 2, 2_000 + t + 200, 0, None),
        ];
        let (proven, doubted, _) = replay_lossy(write(Some(false)), &packets, &[]);
        assert_eq!((proven.len(), doubted.len()), (1, 0), "complete: the NAK's");
        let (proven, doubted, _) = replay_lossy(write(Some(false)), &packets, &[2]);
        assert_eq!((proven.len(), doubted.len()), (0, 1), "{proven:#?}");
    }

    /// Issue 4 gap 2: a NAK no gap explains (out-of-order or spurious) is doubted only
    /// with a copy missing near it, not for one missing anywhere in the trace.
    #[test]
    fn a_nak_no_gap_explains_is_doubted_only_near_a_missing_copy() {
        use Role::{Requester as Req, Responder as Resp};
        let packets = [
            (Resp, WRITE_MIDDLE, 0, 1_000, 0, None),
            (Req, ACK, 0, 1_500, 0, Some(0x1f)),
            (Resp, WRITE_MIDDLE, 1, 2_000, 0, None),
            (Resp, WRITE_MIDDLE, 2, 2_100, 0, None),
            (Resp, WRITE_MIDDLE, 3, 2_200, 0, None),
            (Req, ACK, 2, 3_000, 0, Some(NAK_SEQ)), // no gap seen
            (Resp, WRITE_MIDDLE, 2, 6_000, 0, None),
            (Resp, WRITE_MIDDLE, 3, 6_100, 0, None),
        ];
        // A copy missing before the ACK, far from the NAK: proven.
        let (proven, doubted, _) = replay_lossy(write(Some(false)), &packets, &[1]);
        assert_eq!((proven.len(), doubted.len()), (1, 0), "{doubted:#?}");
        assert_eq!((proven[0].kind, proven[0].psn, proven[0].reaction_ns), (RecoveryKind::Nack, 3, Some(3_000)));
        // Just before the NAK: the gap it answers may be unseen.
        let (proven, doubted, _) = replay_lossy(write(Some(false)), &packets, &[5]);
        assert_eq!((proven.len(), doubted.len()), (0, 1), "{proven:#?}");
    }

    /// Session 22's reread: a CNP stepped "the previous packet in this direction", so a
    /// copy missing before it was taken as missing before no transport packet (as in gbn
    /// and goodput before their fixes). READ: the requester (the NP) sends CNPs toward the
    /// responder, where its requests go.
    #[test]
    fn a_cnp_does_not_hide_a_missing_request_copy() {
        use Role::{Requester as Req, Responder as Resp};
        let read = Settings { verb: Verb::Read, ..write(Some(false)) };
        let packets = [
            (Resp, READ_REQUEST, 0, 1_000, 0, None),
            (Resp, READ_REQUEST, 1, 1_100, 0, None),
            (Resp, READ_REQUEST, 2, 1_200, 0, None),
            (Req, READ_RESPONSE_ONLY, 0, 2_000, 0, None),
            (Req, READ_RESPONSE_ONLY, 1, 2_100, 1, None), // dropped
            (Req, READ_RESPONSE_ONLY, 2, 2_200, 0, None),
            // The request asked again from 1 goes here, its copy missing.
            (Resp, CNP, 0, 5_100, 0, None),
            (Req, READ_RESPONSE_ONLY, 1, 6_000, 0, None),
            (Req, READ_RESPONSE_ONLY, 2, 6_100, 0, None),
        ];
        let (proven, doubted, _) = replay_lossy(read, &packets, &[6]);
        assert_eq!(proven.len(), 0, "{proven:#?}");
        assert_eq!(doubted.iter().map(|d| (d.kind, d.psn)).collect::<Vec<_>>(), [(RecoveryKind::ReadNack, 2)]);
    }

    /// Issue 4 gap 3: a loss whose own recovery is unverifiable was counted as resent by
    /// another loss's recovery.
    #[test]
    fn a_loss_with_an_unverifiable_recovery_of_its_own_is_not_resent_by_another() {
        let p = |index, psn| PacketRef { index, seq: index, switch_ts_ns: u64::from(index) * 100, psn, order: 0 };
        let lost = p(2, 2);
        let doubted = Recovery {
            conn: 0,
            kind: RecoveryKind::Nack,
            psn: 2,
            psn_min: None,
            lost: Some(lost),
            revealing: Some(p(3, 3)),
            nak: Some(p(4, 2)),
            first_retransmission: Some(p(6, 3)),
            data_retransmission: Some(p(6, 3)),
            generation_ns: None,
            reaction_ns: None,
            psn_in_message: None,
            total_ns: None,
            timeout: None,
            nak_ambiguous: false,
            nak_candidates: Vec::new(),
        };
        let loss =
            Loss { conn: 0, lost, retransmission: None, total_ns: None, recovered_by: doubted.first_retransmission };
        let stats = Stats::of([].iter(), &[doubted], &[loss], 0);
        assert_eq!((stats.lost_packets, stats.resent_by_another_recovery, stats.recoveries), (1, 0, 0));
    }

    /// Issue 4 gap 4: a READ NACK's answer from the PSN asked, one copy missing just
    /// before it, is its go-back's first packet (a later request's answer would need an
    /// unseen request and an unseen answer): proven. With two missing, unverifiable.
    #[test]
    fn a_read_answer_from_the_psn_asked_is_doubted_only_when_two_copies_could_hide() {
        use Role::{Requester as Req, Responder as Resp};
        let read = Settings { verb: Verb::Read, ..write(Some(false)) };
        let packets = [
            (Resp, READ_REQUEST, 0, 1_000, 0, None),
            (Resp, READ_REQUEST, 1, 1_100, 0, None),
            (Resp, READ_REQUEST, 2, 1_200, 0, None),
            (Req, READ_RESPONSE_ONLY, 0, 2_000, 0, None),
            (Req, READ_RESPONSE_ONLY, 1, 2_100, 1, None), // dropped
            (Req, READ_RESPONSE_ONLY, 2, 2_200, 0, None), // reveals it
            (Resp, READ_REQUEST, 1, 5_000, 0, None),      // the READ NACK
            (Resp, READ_REQUEST, 2, 5_100, 0, None),
            (Req, READ_RESPONSE_ONLY, 1, 7_000, 0, None),
            (Req, READ_RESPONSE_ONLY, 2, 7_100, 0, None),
        ];
        let (proven, doubted, _) = replay_lossy(read, &packets, &[8]);
        assert_eq!((proven.len(), doubted.len()), (1, 0), "{doubted:#?}");
        let r = &proven[0];
        assert_eq!((r.kind, r.psn, r.first_retransmission.map(|p| p.seq)), (RecoveryKind::ReadNack, 2, Some(10)));
        assert_eq!((r.generation_ns, r.reaction_ns), (Some(2_800), Some(2_000)));
        let (proven, doubted, _) = replay_lossy(read, &packets, &[8, 8]);
        assert_eq!((proven.len(), doubted.len()), (0, 1), "{proven:#?}");
    }

    /// Out-of-order data (review): PSN 3 sent before 2. The receiver NAKs 2, takes 2 in
    /// order (its ACK comes before that NAK), NAKs 3 at 4; both go-backs resume from 3.
    /// `second_nak` and `go_back` time the second NAK and the first go-back.
    fn out_of_order(second_nak: u64, go_back: u64) -> Vec<Pkt> {
        use Role::{Requester as Req, Responder as Resp};
        vec![
            (Resp, WRITE_MIDDLE, 0, 1_000, 0, None),
            (Resp, WRITE_MIDDLE, 2, 1_100, 0, None), // seq 2: 3 before 2, reveals the gap at 2
            (Resp, WRITE_MIDDLE, 1, 1_200, 0, None), // 2, in order
            (Resp, WRITE_MIDDLE, 3, 1_300, 0, None), // seq 4 reveals the gap at 3
            (Req, ACK, 1, 2_000, 0, Some(0x1f)),     // acknowledges 2: the gap at 2 closed
            (Req, ACK, 1, 3_000, 0, Some(NAK_SEQ)),  // seq 6, names 2: sent before 2 came
            (Req, ACK, 2, second_nak, 0, Some(NAK_SEQ)),
            (Resp, WRITE_MIDDLE, 2, go_back, 0, None),
            (Resp, WRITE_MIDDLE, 3, go_back + 100, 0, None),
            (Resp, WRITE_MIDDLE, 2, 9_000, 0, None),
            (Resp, WRITE_MIDDLE, 3, 9_100, 0, None),
        ]
    }

    /// A NAK naming a gap an in-order arrival and its ACK closed is that gap's: its
    /// generation latency is from the packet that revealed it (before: the next gap's).
    /// Two NAKs pending resume from one PSN: which go-back answers which the trace cannot
    /// tell, so no reaction is measured (before: each paired in NAK order, as exact).
    #[test]
    fn after_out_of_order_data_each_nak_has_its_gap_and_no_reaction_is_guessed() {
        let (recs, _) = replay_all(write(Some(false)), &out_of_order(3_500, 8_000));
        let got: Vec<_> =
            recs.iter().map(|r| (r.nak.map(|p| p.seq), r.revealing.map(|p| p.seq), r.generation_ns)).collect();
        assert_eq!(got, [(Some(6), Some(2), Some(1_900)), (Some(7), Some(4), Some(2_200))], "{recs:#?}");
        assert!(recs.iter().all(|r| r.nak_ambiguous && r.reaction_ns.is_none()), "{recs:#?}");
        assert!(recs.iter().all(|r| r.nak_candidates == [6, 7]), "either NAK's: {recs:#?}");
        assert_eq!(recs.iter().map(|r| (r.kind, r.psn)).collect::<Vec<_>>(), [(RecoveryKind::Nack, 3); 2]);
        let overall = Stats::of(recs.iter(), &[], &[], 4);
        assert_eq!((overall.generation.count, overall.reaction.count), (2, 0));
        let mut text = String::new();
        Report { overall, recoveries: recs, ..Report::default() }.render(&mut text);
        assert!(text.contains("2 recoveries with no NACK reaction: another NAK pending resumed"), "{text}");
    }

    /// The first go-back before the second NAK: it can only be the first NAK's, and the
    /// second go-back the second's: both reactions exact, nothing flagged.
    #[test]
    fn a_go_back_before_the_second_nak_is_the_first_ones() {
        let mut packets = out_of_order(8_500, 8_000);
        let second_nak = packets.remove(6);
        packets.insert(8, second_nak); // seq 9, after the go-back's two packets
        let (recs, _) = replay_all(write(Some(false)), &packets);
        let got: Vec<_> = recs.iter().map(|r| (r.nak.map(|p| p.seq), r.generation_ns, r.reaction_ns)).collect();
        assert_eq!(got, [(Some(6), Some(1_900), Some(5_000)), (Some(9), Some(7_200), Some(500))], "{recs:#?}");
        assert!(recs.iter().all(|r| !r.nak_ambiguous && r.nak_candidates.is_empty()), "{recs:#?}");
    }

    #[test]
    fn latencies_take_the_lower_median() {
        let l = Latencies::of(vec![9, 1, 5, 7]);
        assert_eq!((l.count, l.min_ns, l.median_ns, l.max_ns), (4, Some(1), Some(5), Some(9)));
        assert_eq!(Latencies::of(Vec::new()), Latencies::default());
    }
}
