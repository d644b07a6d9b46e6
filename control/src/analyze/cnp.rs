//! Congestion notification (Lumina §4 "Congestion notification"; §6.3 "CNP generation
//! interval" and "Different CNP rate limiting modes").
//!
//! **Triggers.** A packet delivered with an ECN mark (Lumina event `ecn`, or CE in the copy)
//! to the notification point (NP: the end that receives it), and — where slow restart
//! applies (CX5 / CX6 Dx with the NP and `slow-restart` on: Lumina's `NACK_TRIGGER_CNP`) —
//! a NAK the NP sends. A NAK is dated by the out-of-sequence data packet whose arrival made
//! the NP send it (a Go-back-N receiver replayed over the trace finds it), because that
//! arrival is when the NP asks its rate limiter. Under capture loss the replayed receiver
//! takes PSNs skipped right after missing copies as received unseen (`analyze::unseen`),
//! and a NAK is dated only by an arrival past the PSN it names; a NAK trigger a missing
//! copy leaves in doubt makes the findings around it unverifiable, never a problem.
//!
//! **The NP's clock.** The limiter compares arrival times at the NP. A frame arrives after
//! the switch pipeline and the cable (constant: they cancel in every difference the limiter
//! takes), after its serialization at the NP's link rate, and after whatever was queued ahead
//! of it on the switch port towards the NP. The port is modelled as a FIFO fed with every
//! frame forwarded to that host and drained at the link rate of the host's NIC (Lumina §6:
//! CX4 Lx 40 GbE, the others 100 GbE; [`egress`], which goodput's completions share).
//! Switch timestamps are whole nanoseconds, so a difference of arrivals is known to ±1 ns:
//! a trigger within [`TOLERANCE_PS`] of the interval boundary is *ambiguous* and both
//! outcomes are tried (see [`evaluate`]). A frame
//! whose copy is missing may have queued ahead unseen: until the port would have drained,
//! arrivals may be later than modelled by up to one largest frame per missing copy, and a
//! decision that close to the boundary is ambiguous too.
//!
//! **Scope.** Each rate-limiting hypothesis — one limiter per NP port, per (NP, destination
//! IP), per QP — is replayed with the NP's minimum interval (configured
//! `min-time-between-cnps`, NVIDIA's 4 µs default, or E810's hidden 50 µs). A hypothesis
//! explains the trace when, per connection, the CNPs it expects and the CNPs observed pair up
//! one to one in order, each CNP after its trigger and within twice the median delay from
//! the trigger's arrival at the NP to the CNP, plus 2 µs (so one missing CNP does not shift
//! every later pairing: the delay is
//! estimated both from a first-in-first-out pairing and from the latest expected trigger
//! before each CNP, and the tighter estimate wins unless it pairs worse). When several
//! hypotheses explain it (one QP; or one address pair, where per port and per IP coincide)
//! the scope is ambiguous and all are reported. The interval itself is bracketed by the
//! largest trigger gap that was suppressed and the smallest that produced a CNP.
//!
//! **Limits.** Hosts are Lumina's two: every requester end on one NIC port, every responder
//! end on the other (`multi-gid` gives each QP its own address on the same port). A CNP
//! carries no PSN, so when the interval is shorter than the NP's CNP generation jitter two
//! CNPs of one connection may have left in either order: they pair with their triggers by
//! order for the counts and the limiter, but a CNP that another pairing as good could give
//! another trigger is `pairing_ambiguous`, and its trigger (cause) is reported only when
//! every such trigger is the same packet (of the same cause) ([`doubts`]). Under capture
//! loss so is a CNP whose pairing a missing copy may have shifted: a lost CNP, an unseen
//! trigger, or a trigger held back by a decision in doubt may be its; a decision is in
//! doubt (`outcome_in_doubt`) where a trigger whose copy is missing may have changed it
//! ([`decisions_in_doubt`]). Without a
//! test configuration NAKs are not triggers and the interval is estimated from CNP spacing.
//! One scope hypothesis covers both NPs: with two different NICs both at work as NPs
//! (CE-marked ACKs reaching an E810 requester of a CX5 responder), no one scope may explain
//! the trace, and the documented scope and interval shown are the first active NP's.
//! The arrival model uses the host's link rate: the configuration's (the emulator's
//! `rig.link-gbps`), else its NIC's port speed; only queueing differences depend on it.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;
use trace::record::{Kind, Record};
use wire::mirror::Event;
use wire::psn;

use super::conn::Role;
use super::context::{HostConfig, Verb};
use super::egress::{self, Egress};
use super::transport::{ce_marked, corrupt, is_seq_nak, Arrival, GbnReceiver};
use super::unseen::{Since, Unseen};

/// The plot of CNP intervals, in the report's directory.
pub const PLOT_INTERVALS: &str = "cnp-intervals.svg";
use super::{plural, render_capped, Input};

pub use super::egress::TOLERANCE_PS;
/// Intel E810's hidden minimum CNP interval (Lumina §6.3).
pub const E810_INTERVAL_NS: u64 = 50_000;
/// NVIDIA's default `min_time_between_cnps` (Lumina §6.3).
pub const NVIDIA_DEFAULT_INTERVAL_US: u64 = 4;
/// A CNP pairs only with a trigger at most `2 × median delay + WINDOW_SLACK_NS` before it.
const WINDOW_SLACK_NS: u64 = 2_000;
/// How many ranges of alternative last arrivals [`decisions_in_doubt`] keeps per group.
const MAX_ALTERNATIVES: usize = 16;
/// Up to this many ambiguous decisions, every combination of outcomes is tried.
const MAX_SEARCHED_AMBIGUOUS: u32 = 6;
/// Beyond, at most this many decisions are flipped, one per round.
const MAX_REPAIR_ROUNDS: u32 = 8;
/// Gaps closed before their NAK came, kept per connection for the NAK (`NakReplay::filled`).
const MAX_FILLED: usize = 16;

/// Which CNPs share one rate limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// One limiter per NP port (CX5, CX6 Dx).
    Port,
    /// One per (NP, destination IP) (CX4 Lx).
    DestIp,
    /// One per QP (E810).
    Qp,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Port, Scope::DestIp, Scope::Qp];

    pub const fn name(self) -> &'static str {
        match self {
            Scope::Port => "per port",
            Scope::DestIp => "per destination IP",
            Scope::Qp => "per QP",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Cause {
    Ecn,
    Nak,
}

/// What the configuration says about one host as an NP.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NpHost {
    pub role: Role,
    pub nic: Option<String>,
    pub np_enabled: bool,
    /// The minimum interval its limiter should keep; None when nothing says.
    pub interval_ns: Option<u64>,
    /// `configured`, `nvidia-default`, `e810-hidden` or `unknown`.
    pub interval_source: &'static str,
    /// NAKs it sends are triggers (slow restart on a CX5 / CX6 Dx).
    pub nak_triggers: bool,
    /// The scope Lumina §6.3 measured for its NIC.
    pub documented_scope: Option<Scope>,
    /// Link rate of the arrival model; None: no queueing modelled.
    pub link_gbps: Option<f64>,
}

impl NpHost {
    fn of(role: Role, cfg: Option<&HostConfig>) -> NpHost {
        let nic = cfg.and_then(|h| h.nic.clone());
        let np_enabled = cfg.and_then(|h| h.np_enable).unwrap_or(true);
        let configured = cfg.and_then(|h| h.min_time_between_cnps_us);
        let (interval_ns, interval_source) = match (nic.as_deref(), configured) {
            (Some("e810"), _) => (Some(E810_INTERVAL_NS), "e810-hidden"),
            (_, Some(us)) => (Some(us.saturating_mul(1_000)), "configured"),
            (Some("cx4" | "cx5" | "cx6"), None) => (Some(NVIDIA_DEFAULT_INTERVAL_US * 1_000), "nvidia-default"),
            _ => (None, "unknown"),
        };
        let slow_restart = cfg.and_then(|h| h.slow_restart) == Some(true);
        let documented_scope = match nic.as_deref() {
            Some("cx4") => Some(Scope::DestIp),
            Some("cx5" | "cx6") => Some(Scope::Port),
            Some("e810") => Some(Scope::Qp),
            _ => None,
        };
        let link_gbps = egress::host_link_gbps(cfg);
        let nak_triggers = slow_restart && np_enabled && matches!(nic.as_deref(), Some("cx5" | "cx6"));
        NpHost { role, nic, np_enabled, interval_ns, interval_source, nak_triggers, documented_scope, link_gbps }
    }

    fn interval_ps(&self) -> Option<u64> {
        self.interval_ns.map(|ns| ns.saturating_mul(1_000))
    }
}

/// A trigger: a packet whose arrival made the NP ask its rate limiter for a CNP.
#[derive(Debug, Clone)]
struct Trig {
    /// Trace index and mirror seq of the packet that arrived (for NAKs: the
    /// out-of-sequence data packet, or the NAK itself when no such packet is found).
    idx: u32,
    seq: u64,
    /// Trace order (unwrapped seq).
    order: u64,
    ts_ns: u64,
    /// Estimated arrival at the NP, ps, up to a constant per host.
    arrival_ps: u64,
    /// How much later it may have arrived: frames whose copies are missing from the trace
    /// may have queued ahead of it.
    late_ps: u64,
    /// A packet of its connection and direction whose copy may be missing: the trace order
    /// of the first copy of theirs after a copy missing since the one before (the last such
    /// before it, or itself), and the latest switch time the missing copy may have (that of
    /// the first copy after it, of any connection).
    after_gap: Option<(u64, u64)>,
    /// The trace order and switch time of the first copy after the last copy missing before
    /// it, whichever connection's.
    after_any_gap: Option<(u64, u64)>,
    conn: u32,
    np: Role,
    rp_ip: IpAddr,
    cause: Cause,
    psn: u32,
    nak_seq: Option<u64>,
}

impl Trig {
    /// Its estimated arrival at the NP on the switch's clock, ns (up to the constant
    /// pipeline and cable delays).
    fn arrival_ns(&self) -> u64 {
        self.arrival_ps / 1_000
    }

    /// How long after it reached the NP CNP `c` passed the switch: the NP's generation
    /// delay plus constant delays. Timed from its copy instead, a trigger queued at the
    /// port toward a slower NP (READ answers to a CX4 Lx) would seem answered late.
    fn delay_to(&self, c: &Seen) -> u64 {
        c.ts_ns.saturating_sub(self.arrival_ns())
    }

    /// The latest a frame whose copy is missing before it, of no later switch time than
    /// `ts_ns`, may have reached the NP, ps: that time plus what this trigger waited at the
    /// port (an estimate: both queued at one FIFO port), and no later than this trigger.
    fn latest_unseen_arrival(&self, ts_ns: u64) -> u64 {
        let waited_ps = self.arrival_ps.saturating_sub(self.ts_ns.saturating_mul(1_000)).saturating_add(self.late_ps);
        ts_ns.saturating_mul(1_000).saturating_add(waited_ps).min(self.arrival_ps.saturating_add(self.late_ps))
    }

    /// Whether it had reached the NP, by the port model, when CNP `c` passed the switch
    /// (to the timestamps' tolerance): a CNP answers no trigger still queued toward its NP.
    fn arrived_by(&self, c: &Seen) -> bool {
        self.arrival_ps <= c.ts_ns.saturating_mul(1_000).saturating_add(TOLERANCE_PS)
    }
}

/// An observed CNP.
#[derive(Debug, Clone)]
struct Seen {
    idx: u32,
    seq: u64,
    order: u64,
    ts_ns: u64,
    conn: u32,
    np: Role,
    rp_ip: IpAddr,
}

/// Everything the analyzer takes from one pass over the trace.
#[derive(Debug, Default)]
struct Scan {
    /// In trace order; an ECN trigger before a NAK trigger of the same packet, as an NP
    /// handles the mark before the transport sees the packet.
    triggers: Vec<Trig>,
    cnps: Vec<Seen>,
    /// NAKs from an NP with no out-of-sequence arrival before them (dated by the NAK).
    naks_without_cause: usize,
    /// (conn, trace order) of NAK triggers a missing copy leaves in doubt: dated by their
    /// NAK for want of a cause, or a gap whose NAK may have been sent unseen. Sorted.
    doubtful: Vec<(u32, u64)>,
    /// What missing copies may explain.
    excuses: Excuses,
}

/// Which mismatches a copy missing from the trace may explain (`analyze::unseen`): a
/// missing CNP whose CNP's copy may be missing, a CNP whose trigger's may be.
#[derive(Debug, Default)]
struct Excuses {
    unseen: Unseen,
    /// Per connection, the trace orders of its CNPs and of its doubtful NAK triggers, sorted.
    cnps: FxHashMap<u32, Vec<u64>>,
    doubtful: FxHashMap<u32, Vec<u64>>,
}

impl Excuses {
    fn of(unseen: &Unseen, cnps: &[Seen], doubtful: &[(u32, u64)]) -> Excuses {
        let mut e = Excuses { unseen: unseen.clone(), ..Excuses::default() };
        for c in cnps {
            e.cnps.entry(c.conn).or_default().push(c.order);
        }
        for &(conn, order) in doubtful {
            e.doubtful.entry(conn).or_default().push(order);
        }
        e.cnps.values_mut().chain(e.doubtful.values_mut()).for_each(|v| v.sort_unstable());
        e
    }

    /// Whether a missing copy may explain a finding of `kind` about the trigger or CNP at
    /// trace order `order` of connection `conn`. For a missing CNP, `until` is the trace
    /// order of the CNP that showed it missing (its own CNP's copy may be missing before
    /// that); other kinds ignore it.
    fn explain(&self, kind: FindingKind, conn: u32, order: u64, until: u64) -> bool {
        let cnps = self.cnps.get(&conn).map_or(&[][..], Vec::as_slice);
        let doubtful = self.doubtful.get(&conn).map_or(&[][..], Vec::as_slice);
        match kind {
            FindingKind::MissingCnp => {
                self.unseen.between(Some(order), until) || doubtful.binary_search(&order).is_ok()
            }
            FindingKind::CnpWithoutTrigger => {
                let next = cnps.partition_point(|&o| o <= order);
                let until = cnps.get(next).copied().unwrap_or(u64::MAX);
                let before = cnps.partition_point(|&o| o < order);
                let prev = before.checked_sub(1).map(|k| cnps[k]);
                // Its trigger's copy may be missing, or a doubtful NAK trigger may be its own
                // (a NAK dated by itself comes after the CNP it caused).
                let first_after_prev = doubtful.partition_point(|&d| prev.is_some_and(|p| d <= p));
                self.unseen.between(prev, order) || doubtful.get(first_after_prev).is_some_and(|&d| d < until)
            }
            FindingKind::CnpWhileNpDisabled | FindingKind::CnpsTooClose => false,
        }
    }

    /// Whether CNPs found too close may be a pairing or a decision that copies missing
    /// changed ([`too_close_since`]): their gap was then measured between the wrong
    /// triggers, or between CNPs that carry the NP's generation jitter.
    fn explain_too_close(&self, order: u64, busy_since: Option<u64>) -> bool {
        self.unseen.between(busy_since, order)
    }

    /// Whether missing copies may explain the `nth` CNP of a connection's NP found with no
    /// trigger left ([`untriggered`]): that many copies missing before it may all have been
    /// its connection's triggers, and then the count of triggers never fell short. (The
    /// in-order pairing may have given its own trigger to an earlier CNP whose trigger was
    /// unseen, so the copies may be missing long before it.)
    ///
    /// So may doubtful NAK triggers: at least `nth` of them before the connection's next
    /// CNP, each of which may have had its CNP (lossy sweep seed 1128: a NAK's copy lost,
    /// its CNP came after the CNP of a later mark, which took the count's last trigger).
    fn explain_untriggered(&self, conn: u32, order: u64, nth: u64, busy_since: Option<u64>) -> bool {
        self.shifted(order, nth)
            || self.explain(FindingKind::CnpWithoutTrigger, conn, order, u64::MAX)
            || self.unseen.between(busy_since, order)
            || self.doubtful_before_next_cnp(conn, order) >= nth
    }

    /// How many of connection `conn`'s doubtful NAK triggers come before its first CNP
    /// after trace order `order` (a NAK dated by itself comes after the CNP it caused).
    fn doubtful_before_next_cnp(&self, conn: u32, order: u64) -> u64 {
        let cnps = self.cnps.get(&conn).map_or(&[][..], Vec::as_slice);
        let until = cnps.get(cnps.partition_point(|&o| o <= order)).copied().unwrap_or(u64::MAX);
        let doubtful = self.doubtful.get(&conn).map_or(&[][..], Vec::as_slice);
        doubtful.partition_point(|&d| d < until) as u64
    }

    /// Whether the `nth` missing CNP of a connection's NP, shown missing at trace order
    /// `until`, may be a shifted pairing: that many copies missing before then may all have
    /// been CNPs of its earlier triggers, each of which then took the next trigger's CNP,
    /// leaving this one without (the mirror image of [`Self::explain_untriggered`]).
    ///
    /// Either may also be a limiter decision that a trigger missing from the trace changed:
    /// copies are missing since its group's busy period began (`busy_since`, [`Busy`]).
    fn explain_missing(&self, conn: u32, order: u64, until: u64, nth: u64, busy_since: Option<u64>) -> bool {
        self.shifted(until, nth)
            || self.explain(FindingKind::MissingCnp, conn, order, until)
            || self.unseen.between(busy_since, order)
    }

    /// At least `nth` copies are missing before trace order `before`.
    fn shifted(&self, before: u64, nth: u64) -> bool {
        self.unseen.count_between(None, before) >= nth
    }
}

/// SEND and WRITE packets: the ones a Go-back-N responder sequences.
fn is_send_write(r: &Record) -> bool {
    r.kind() == Kind::Request && matches!(r.opcode() & 0x1f, 0x00..=0x0b | 0x16 | 0x17)
}

/// One WRITE/SEND responder's Go-back-N receiver, replayed to find the arrival that made it
/// NAK: the NAK trigger's time (Lumina §4: slow restart's CNP answers that arrival).
#[derive(Debug)]
struct NakReplay {
    rx: GbnReceiver<u32>,
    /// The previous data copy towards the responder: which copies are missing since.
    since: Since,
    /// `since` before the latest data copy: a NAK's cause is at most that far back.
    before_latest: Option<u64>,
    /// The highest data PSN seen towards the responder (any copy, delivered or not).
    highest: Option<u32>,
    /// The arrival past the gap, until its NAK is seen or the gap closes.
    gap: Option<Gap>,
    /// Gaps closed before their NAK was seen, latest last: out-of-order data (a GBN fault)
    /// fills a gap in order right after the arrival past it, before the NAK leaves the
    /// responder, and a timeout's go-back may fill the next one before its (slow) NAK.
    filled: VecDeque<Gap>,
    /// The latest arrival past PSNs taken as received unseen: if a NAK names the first of
    /// them, one was lost instead (its copy missing too), and this arrival was past it.
    caught_up: Option<Gap>,
}

/// A gap the replayed receiver NAKs: the PSN its NAK names, the arrival past it, and the
/// data copy before that arrival.
#[derive(Debug, Clone)]
struct Gap {
    names: u32,
    arrival: Trig,
    after: Option<u64>,
}

impl NakReplay {
    fn new(ipsn: Option<u32>) -> NakReplay {
        NakReplay {
            rx: GbnReceiver::new(ipsn),
            since: Since::default(),
            before_latest: None,
            highest: None,
            gap: None,
            filled: VecDeque::new(),
            caught_up: None,
        }
    }

    /// A data copy towards the responder; returns how many copies are missing since the
    /// previous one.
    fn saw(&mut self, unseen: &Unseen, r: &Record) -> u64 {
        self.before_latest = self.since.last();
        let missing = self.since.step(unseen, r);
        if self.highest.is_none_or(|h| psn::gt(r.psn(), h)) {
            self.highest = Some(r.psn());
        }
        missing
    }

    /// A data packet reached the responder (`t`, its arrival), `missing` copies after the
    /// previous data copy. PSNs it skips that as many unseen copies can hold were received
    /// unseen (`analyze::unseen`): fresh ones never seen, or resent after a go-back (`t` is
    /// a resend) — not a PSN seen dropped and not resent. Returns the gap it closes whose
    /// NAK was never seen.
    fn arrive(&mut self, t: &Trig, missing: u64, highest_before: Option<u32>) -> Option<Gap> {
        let p = t.psn;
        if let Some(e) = self.rx.expected().filter(|&e| psn::gt(p, e) && u64::from(psn::distance(e, p)) <= missing) {
            if highest_before.is_none_or(|h| psn::gt(e, h) || psn::le(p, h)) {
                self.rx.expect(p);
                let arrival = Trig { cause: Cause::Nak, ..t.clone() };
                self.caught_up = Some(Gap { names: e, arrival, after: self.before_latest });
            }
        }
        let arrived = self.rx.arrive(p);
        let closed = self.gap.take_if(|g| self.rx.expected().is_some_and(|e| psn::gt(e, g.names)));
        if let Some(g) = &closed {
            if self.filled.len() == MAX_FILLED {
                self.filled.pop_front();
            }
            self.filled.push_back(g.clone());
        }
        if let Arrival::Gap { missing: names } = arrived {
            let arrival = Trig { cause: Cause::Nak, ..t.clone() };
            let replaced = self.gap.replace(Gap { names, arrival, after: self.before_latest });
            return closed.or(replaced);
        }
        closed
    }

    /// The arrival that made the responder send `nak`: past the gap it names, open or
    /// filled since (Lumina §4: the responder NAKs an out-of-sequence arrival, and out-of-
    /// order data may fill the gap before the NAK passes the switch); past another gap when
    /// no copy is missing since (the NIC named a wrong PSN, which the GBN analyzer reports);
    /// else past a PSN lost unseen. Without one: whether the NAK is doubtful, a copy missing
    /// since the data copy before the latest (the replay may have missed its cause, or
    /// opened a gap an unseen packet filled).
    fn cause_of(&mut self, nak: &Record, unseen: &Unseen) -> Result<Trig, bool> {
        let names = |g: &mut Gap| g.names == nak.psn();
        let filled = |f: &mut VecDeque<Gap>| f.iter().rposition(|g| g.names == nak.psn()).and_then(|i| f.remove(i));
        let named = self.gap.take_if(names).or_else(|| filled(&mut self.filled));
        let other = || self.gap.take().filter(|g| !unseen.between(g.after, nak.seq()));
        let gap = named.or_else(other);
        let cause = gap.or_else(|| self.lost_unseen(nak)).map(|g| g.arrival);
        cause.ok_or_else(|| unseen.between(self.before_latest, nak.seq()))
    }

    /// A NAK the replay saw no gap for: if it names the first PSN of the latest catch-up
    /// and the arrival caught up on is the PSN after it, that PSN was lost unseen and this
    /// arrival is past it — the NAK's cause; the receiver resumes waiting for the PSN.
    fn lost_unseen(&mut self, nak: &Record) -> Option<Gap> {
        let g = self.caught_up.take_if(|g| g.names == nak.psn() && g.arrival.psn == psn::add(g.names, 1))?;
        self.rx.expect(g.names);
        self.rx.recovering();
        Some(g)
    }
}

impl Scan {
    fn run(input: &Input<'_>, hosts: &[NpHost; 2]) -> Scan {
        let conns = &input.conns.list;
        let unseen = &input.conns.unseen;
        // Lumina's rig has two hosts: each one's port is fed by the other's link alone.
        let port = |h: &NpHost, feed: &NpHost| {
            Egress::new(h.link_gbps, feed.link_gbps, input.conns.max_frame_len[h.role.index()])
        };
        let mut ports = [port(&hosts[0], &hosts[1]), port(&hosts[1], &hosts[0])];
        let mut replays: Vec<NakReplay> = conns.iter().map(|c| NakReplay::new(c.ipsn)).collect();
        let mut scan = Scan::default();
        // Per connection and direction, and over all: the previous copy, and (trace order,
        // switch time) of the first copy after the last gap. A copy missing before a packet
        // passed the switch no later than the first copy after it, whichever connection's.
        let mut streams = vec![[(Since::default(), None); 2]; conns.len()];
        let mut all: (Since, Option<(u64, u64)>) = (Since::default(), None);
        // Frames not mirrored have no switch time to place them on the NP's clock
        // (analyze's header counts them).
        for egress::Frame { idx, r, conn: c, to: role, ts_ns } in egress::frames(input) {
            let (i, conn) = (idx as usize, c.id);
            if all.0.step(unseen, r) > 0 {
                all.1 = Some((r.seq(), ts_ns));
            }
            let (since, after_gap) = &mut streams[conn as usize][role.index()];
            if since.step(unseen, r) > 0 {
                *after_gap = all.1.map(|(_, ts)| (r.seq(), ts));
            }
            let after_gap = *after_gap;
            if r.kind() == Kind::Cnp {
                let (np, rp_ip) = (role.other(), c.end(role).ip);
                let (idx, seq, order) = (i as u32, u64::from(r.wire_seq()), r.seq());
                scan.cnps.push(Seen { idx, seq, order, ts_ns, conn, np, rp_ip });
            }
            // READ requesters do not NAK: only WRITE/SEND responders' NAKs are triggers, and
            // only sequence-error NAKs (an out-of-sequence arrival is what slow restart
            // answers; an access or operational error NAK is not congestion).
            let sequenced = c.verb.is_some_and(|v| v != Verb::Read);
            let replay = &mut replays[conn as usize];
            if sequenced && is_seq_nak(r) && role == Role::Requester {
                let cause = replay.cause_of(r, unseen);
                scan.push_nak(cause, r, i as u32, ts_ns, conn, c.requester.ip);
            }
            let data = sequenced && role == Role::Responder && is_send_write(r);
            let highest_before = replay.highest;
            let missing = if data { replay.saw(unseen, r) } else { 0 };
            if r.event() == Event::Drop {
                continue; // never reaches the NP
            }
            let (arrival_ps, late_ps) = ports[role.index()].arrive(ts_ns, r, unseen);
            if corrupt(r) || r.kind() == Kind::Cnp {
                continue; // the ICRC check discards it; a CNP is for the RP
            }
            let t = Trig {
                idx: i as u32,
                seq: u64::from(r.wire_seq()),
                order: r.seq(),
                ts_ns,
                arrival_ps,
                late_ps,
                after_gap,
                after_any_gap: all.1,
                conn,
                np: role,
                rp_ip: c.end(role.other()).ip,
                cause: Cause::Ecn,
                psn: r.psn(),
                nak_seq: None,
            };
            if data {
                let closed = replay.arrive(&t, missing, highest_before);
                scan.note_unanswered(closed, Some(r.seq()), unseen);
            }
            if ce_marked(r) {
                scan.triggers.push(t);
            }
        }
        for replay in &mut replays {
            scan.note_unanswered(replay.gap.take(), None, unseen);
        }
        scan.triggers.sort_by_key(|t| (t.idx, t.cause == Cause::Nak));
        scan.excuses = Excuses::of(unseen, &scan.cnps, &scan.doubtful);
        scan
    }

    /// A gap closed (at trace order `closed_at`, or the trace's end) without its NAK seen: if
    /// a copy is missing since its arrival, the NAK may have been sent unseen, and with it
    /// a CNP the replay cannot expect.
    fn note_unanswered(&mut self, gap: Option<Gap>, closed_at: Option<u64>, unseen: &Unseen) {
        let Some(g) = gap else { return };
        if unseen.between(Some(g.arrival.order), closed_at.unwrap_or(u64::MAX)) {
            self.doubtful.push((g.arrival.conn, g.arrival.order));
        }
    }

    /// A NAK from the responder: a trigger dated by the arrival that caused it, or by the
    /// NAK itself when the replayed receiver saw none (`Err`: whether it is doubtful).
    fn push_nak(&mut self, cause: Result<Trig, bool>, nak: &Record, idx: u32, ts_ns: u64, conn: u32, rp_ip: IpAddr) {
        let nak_seq = Some(u64::from(nak.wire_seq()));
        let t = match cause {
            Ok(arrival) => Trig { nak_seq, ..arrival },
            Err(doubtful) => {
                self.naks_without_cause += 1;
                if doubtful {
                    self.doubtful.push((conn, nak.seq()));
                }
                Trig {
                    idx,
                    seq: u64::from(nak.wire_seq()),
                    order: nak.seq(),
                    ts_ns,
                    arrival_ps: ts_ns.saturating_mul(1_000),
                    late_ps: 0,
                    after_gap: None,
                    after_any_gap: None,
                    conn,
                    np: Role::Responder,
                    rp_ip,
                    cause: Cause::Nak,
                    psn: nak.psn(),
                    nak_seq,
                }
            }
        };
        self.triggers.push(t);
    }
}

/// Which limiter a trigger or CNP belongs to under a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Group {
    Port(Role),
    DestIp(Role, IpAddr),
    Qp(Role, u32),
}

impl Group {
    fn of(scope: Scope, np: Role, rp_ip: IpAddr, conn: u32) -> Group {
        match scope {
            Scope::Port => Group::Port(np),
            Scope::DestIp => Group::DestIp(np, rp_ip),
            Scope::Qp => Group::Qp(np, conn),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    /// The limiter lets it through: a CNP is expected.
    Sent,
    /// Too soon after the trigger (index) that last got a CNP in its group.
    Suppressed { by: usize },
    /// The NP is disabled or NAKs are not triggers on this NIC.
    NotATrigger,
}

/// One replay of the NP's limiter under a hypothesis, paired with the observed CNPs.
#[derive(Debug, Clone)]
struct Outcome {
    scope: Scope,
    /// Per NP role, the interval replayed, ps.
    interval_ps: [u64; 2],
    /// How late a CNP may follow its trigger (`Hyp::window_ns`).
    window_ns: u64,
    decisions: Vec<Decision>,
    /// Per trigger: arrival − the previous CNP-producing arrival of its group, ps.
    gap_ps: Vec<Option<u64>>,
    /// Per trigger: the least and the most that gap may be, with unseen frames queued
    /// ahead of either arrival.
    gap_range_ps: Vec<Option<(u64, u64)>>,
    /// Per trigger / per CNP: its partner.
    cnp_of: Vec<Option<usize>>,
    trigger_of: Vec<Option<usize>>,
    /// Per trigger expected a CNP and paired with none: the CNP whose arrival showed it
    /// missing (None: the trace's end).
    expired_by: Vec<Option<usize>>,
    /// Expected CNPs not observed and observed CNPs not expected, that no missing copy
    /// may explain; and those one may (they do not count against the replay).
    missing: usize,
    unexplained: usize,
    unverifiable: usize,
    ambiguous: u32,
    /// Per trigger and per CNP: since when copies missing may have changed its group's
    /// decisions ([`Busy`]).
    busy_since_trigger: Vec<Option<u64>>,
    busy_since_cnp: Vec<Option<u64>>,
}

impl Outcome {
    /// Counts trigger `t`'s CNP missing, shown so at trace order `until`, the `nth` of its
    /// connection's NP.
    fn missing_cnp(&mut self, scan: &Scan, t: &Trig, until: u64, nth: u64, busy_since: Option<u64>) {
        let kind = FindingKind::MissingCnp;
        self.count(scan.excuses.explain_missing(t.conn, t.order, until, nth, busy_since), kind);
    }

    /// Counts a missing or an unexplained CNP: against the replay unless a missing copy
    /// may explain it.
    fn count(&mut self, explained: bool, kind: FindingKind) {
        match (explained, kind) {
            (true, _) => self.unverifiable += 1,
            (false, FindingKind::MissingCnp) => self.missing += 1,
            (false, _) => self.unexplained += 1,
        }
    }

    fn consistent(&self) -> bool {
        self.missing == 0 && self.unexplained == 0
    }
    fn mismatches(&self) -> usize {
        self.missing + self.unexplained
    }

    fn expected(&self) -> usize {
        self.decisions.iter().filter(|d| **d == Decision::Sent).count()
    }
}

/// Per trigger, whether a trigger the trace lacks may have changed the limiter's decision
/// for it. Between two triggers of a group a copy is missing: it may have been a trigger
/// the limiter let through, arriving at any time from the first trigger's switch time to
/// the latest its gap allows, and from then on the group's last CNP-producing arrival may
/// be another than the replay's. The alternatives are kept as ranges of that arrival until
/// a decision lets every one of them through with the replay (the two agree from then on).
/// Narrower than the busy periods ([`Busy`]), which put every later decision of the period
/// in doubt. Lossy sweep case 172: the first mark's copy lost, the replay held back a mark
/// that had a CNP and found the mark before it without one.
fn decisions_in_doubt(scan: &Scan, o: &Outcome) -> Vec<bool> {
    let mut out = vec![false; scan.triggers.len()];
    /// A group's previous trigger and the ranges of alternative last arrivals let through, ps.
    type State = (Option<usize>, Vec<(u64, u64)>);
    let mut groups: FxHashMap<Group, State> = FxHashMap::default();
    for (i, t) in scan.triggers.iter().enumerate() {
        let sent = match o.decisions[i] {
            Decision::Sent => true,
            Decision::Suppressed { .. } => false,
            Decision::NotATrigger => continue,
        };
        let interval = o.interval_ps[t.np.index()];
        let (prev, alternatives) = groups.entry(Group::of(o.scope, t.np, t.rp_ip, t.conn)).or_default();
        let replay_last = o.gap_ps[i].map(|gap| t.arrival_ps.saturating_sub(gap));
        if let Some(unseen) = unseen_arrivals(scan, *prev, t) {
            // Let through only at least the interval after a last arrival it may follow.
            let earliest_last = alternatives.iter().map(|a| a.0).chain(replay_last).min();
            let from = earliest_last.map_or(unseen.0, |l| unseen.0.max(l.saturating_add(interval)));
            if from <= unseen.1 {
                alternatives.push((from, unseen.1));
            }
        }
        // Under an alternative last arrival `l`, the limiter lets it through when l is at
        // least the interval before it. At the boundary, the other decision is one more.
        let cut = t.arrival_ps.saturating_sub(interval);
        let boundary = at_the_boundary(scan, o, i);
        out[i] = boundary || alternatives.iter().any(|&(lo, hi)| if sent { hi > cut } else { lo <= cut });
        let mut next = Vec::with_capacity(alternatives.len() + 2);
        for &(lo, hi) in alternatives.iter() {
            if hi > cut {
                next.push((lo.max(cut.saturating_add(1)), hi)); // held back: the last arrival stays
            }
        }
        if !sent && (boundary || alternatives.iter().any(|&(lo, _)| lo <= cut)) {
            next.push((t.arrival_ps, t.arrival_ps)); // let through where the replay held it back
        }
        if let Some(last) = replay_last.filter(|_| sent && boundary) {
            next.push((last, last)); // held back where the replay let it through
        }
        *alternatives = merged(next);
        *prev = Some(i);
    }
    out
}

/// The range of arrivals a trigger whose copy is missing between trigger `prev` of its
/// group and `t` may have had, ps: from `prev`'s switch time (from the trace's start
/// without one) to the latest the last such copy may have arrived
/// ([`Trig::latest_unseen_arrival`]). None when no copy is missing between them.
fn unseen_arrivals(scan: &Scan, prev: Option<usize>, t: &Trig) -> Option<(u64, u64)> {
    let (after, ts_ns) = t.after_any_gap?;
    let prev = prev.map(|p| &scan.triggers[p]);
    if prev.is_some_and(|p| after <= p.order) {
        return None;
    }
    let latest_ps = t.latest_unseen_arrival(ts_ns);
    let earliest_ps = prev.map_or(0, |p| p.ts_ns.saturating_mul(1_000));
    Some((earliest_ps, latest_ps.max(earliest_ps)))
}

/// Ranges sorted and merged where they overlap; at most [`MAX_ALTERNATIVES`], the last
/// ones folded into one that covers them.
fn merged(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        let full = out.len() == MAX_ALTERNATIVES;
        match out.last_mut() {
            Some(last) if lo <= last.1 || full => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

/// Triggers and CNPs merged in trace order.
#[derive(Debug, Clone, Copy)]
enum Step {
    Trigger(usize),
    Cnp(usize),
}

fn timeline(scan: &Scan) -> Vec<Step> {
    let mut steps: Vec<(u32, u8, Step)> =
        scan.triggers.iter().enumerate().map(|(i, t)| (t.idx, 0, Step::Trigger(i))).collect();
    steps.extend(scan.cnps.iter().enumerate().map(|(i, c)| (c.idx, 1, Step::Cnp(i))));
    steps.sort_by_key(|&(idx, order, _)| (idx, order));
    steps.into_iter().map(|(_, _, s)| s).collect()
}

/// Whether a trigger can ask for a CNP at all.
fn counts(t: &Trig, hosts: &[NpHost; 2]) -> bool {
    let h = &hosts[t.np.index()];
    h.np_enabled && (t.cause == Cause::Ecn || h.nak_triggers)
}

/// The busy periods of the limiter groups: runs of triggers each less than the interval
/// after the one before (a quiet interval resets a limiter whatever it decided). A trigger
/// missing from the trace changes the decisions of its period only, so a finding is
/// unverifiable when copies are missing since the trigger before its period: per trigger
/// and per CNP, that trigger's trace order (`None`: the trace's start).
#[derive(Debug, Default)]
struct Busy {
    /// Per group: the last trigger's arrival and trace order, and its period's start.
    groups: FxHashMap<Group, (u64, u64, Option<u64>)>,
    triggers: Vec<Option<u64>>,
    cnps: Vec<Option<u64>>,
}

impl Busy {
    fn new(scan: &Scan) -> Busy {
        Busy { triggers: vec![None; scan.triggers.len()], cnps: vec![None; scan.cnps.len()], ..Busy::default() }
    }

    fn trigger(&mut self, g: Group, i: usize, t: &Trig, interval_ps: u64) {
        let since = match self.groups.get(&g) {
            Some(&(at, _, since)) if t.arrival_ps.saturating_sub(at) < interval_ps + TOLERANCE_PS => since,
            Some(&(_, order, _)) => Some(order),
            None => None,
        };
        self.groups.insert(g, (t.arrival_ps, t.order, since));
        self.triggers[i] = since;
    }

    fn cnp(&mut self, g: Group, k: usize) -> Option<u64> {
        self.cnps[k] = self.groups.get(&g).and_then(|&(_, _, since)| since);
        self.cnps[k]
    }
}

/// Replays the limiter of `scope`: a trigger gets a CNP unless its group's last CNP-producing
/// trigger arrived less than the interval before (the emulator's and, with the arrival
/// clock, Lumina's rule). Within [`TOLERANCE_PS`] of the boundary the decision is
/// ambiguous: the `n`th ambiguous one takes the nominal outcome unless bit `n` of `flips`
/// is set. Expected CNPs pair with observed ones per connection, first in first out; an
/// expected CNP still unpaired `window_ns` after its trigger is missing.
fn simulate(scan: &Scan, steps: &[Step], hosts: &[NpHost; 2], h: &Hyp, flips: u64) -> Outcome {
    let (scope, interval_ps) = (h.scope, h.interval_ps);
    let n = scan.triggers.len();
    let mut o = Outcome {
        scope,
        interval_ps,
        window_ns: h.window_ns,
        decisions: vec![Decision::NotATrigger; n],
        gap_ps: vec![None; n],
        gap_range_ps: vec![None; n],
        cnp_of: vec![None; n],
        expired_by: vec![None; n],
        trigger_of: vec![None; scan.cnps.len()],
        missing: 0,
        unexplained: 0,
        unverifiable: 0,
        ambiguous: 0,
        busy_since_trigger: Vec::new(),
        busy_since_cnp: Vec::new(),
    };
    let mut last: FxHashMap<Group, usize> = FxHashMap::default();
    let mut pending: FxHashMap<(u32, Role), VecDeque<usize>> = FxHashMap::default();
    let mut unpaired: FxHashMap<(u32, Role), u64> = FxHashMap::default();
    let mut missed: FxHashMap<(u32, Role), u64> = FxHashMap::default();
    let mut nth = |t: &Trig| one_more(&mut missed, (t.conn, t.np));
    let mut busy = Busy::new(scan);
    for step in steps {
        match *step {
            Step::Trigger(i) => {
                let t = &scan.triggers[i];
                if !counts(t, hosts) {
                    continue;
                }
                let g = Group::of(scope, t.np, t.rp_ip, t.conn);
                let interval = interval_ps[t.np.index()];
                busy.trigger(g, i, t, interval);
                let prev = last.get(&g).copied();
                let gap = prev.map(|p| t.arrival_ps.saturating_sub(scan.triggers[p].arrival_ps));
                let range = prev.zip(gap).map(|(p, d)| (d.saturating_sub(scan.triggers[p].late_ps), d + t.late_ps));
                (o.gap_ps[i], o.gap_range_ps[i]) = (gap, range);
                let mut send = gap.is_none_or(|d| d >= interval);
                if straddles(range, interval) {
                    if o.ambiguous < 64 && (flips >> o.ambiguous) & 1 == 1 {
                        send = !send;
                    }
                    o.ambiguous += 1;
                }
                o.decisions[i] = match (send, prev) {
                    (false, Some(by)) => Decision::Suppressed { by },
                    _ => {
                        last.insert(g, i);
                        pending.entry((t.conn, t.np)).or_default().push_back(i);
                        Decision::Sent
                    }
                };
            }
            Step::Cnp(k) => {
                let c = &scan.cnps[k];
                let busy_since = busy.cnp(Group::of(scope, c.np, c.rp_ip, c.conn), k);
                let queue = pending.entry((c.conn, c.np)).or_default();
                let late = |i: usize| scan.triggers[i].delay_to(c) > h.window_ns;
                while let Some(i) = queue.front().copied().filter(|&i| late(i)) {
                    queue.pop_front();
                    o.expired_by[i] = Some(k);
                    let t = &scan.triggers[i];
                    o.missing_cnp(scan, t, c.order, nth(t), busy.triggers[i]);
                }
                // A trigger still queued toward the NP is not the CNP's, nor any after it.
                let arrived = queue.front().copied().filter(|&i| scan.triggers[i].arrived_by(c));
                if arrived.is_some() {
                    queue.pop_front();
                }
                match arrived {
                    Some(i) => {
                        o.cnp_of[i] = Some(k);
                        o.trigger_of[k] = Some(i);
                    }
                    None => {
                        let nth = one_more(&mut unpaired, (c.conn, c.np));
                        let explained = scan.excuses.explain_untriggered(c.conn, c.order, nth, busy_since);
                        o.count(explained, FindingKind::CnpWithoutTrigger);
                    }
                }
            }
        }
    }
    for i in pending.into_values().flatten() {
        let t = &scan.triggers[i];
        o.missing_cnp(scan, t, u64::MAX, nth(t), busy.triggers[i]);
    }
    (o.busy_since_trigger, o.busy_since_cnp) = (busy.triggers, busy.cnps);
    o
}

/// A hypothesis to replay: the scope, the interval per NP, how late a CNP may follow its
/// trigger.
#[derive(Debug, Clone, Copy)]
struct Hyp {
    scope: Scope,
    interval_ps: [u64; 2],
    window_ns: u64,
}

/// How late a CNP may come, from a first replay's pairing (first in first out, no limit):
/// right unless a CNP goes missing early, which shifts every later pairing by one trigger.
fn fifo_window(scan: &Scan, o: &Outcome) -> u64 {
    let delays = o.trigger_of.iter().zip(&scan.cnps);
    window_of(delays.filter_map(|(t, c)| t.map(|i| scan.triggers[i].delay_to(c))).collect())
}

/// How late a CNP may come, from the latest trigger before it that the replay expected a
/// CNP for: right unless CNPs lag their triggers by more than the triggers' spacing.
fn nearest_window(scan: &Scan, steps: &[Step], o: &Outcome) -> u64 {
    // Per connection NP, the arrivals of the expected triggers not yet passed (in arrival
    // order: the port toward the NP is a FIFO), and the latest one that arrived before the
    // last CNP: a trigger still queued toward the NP when a CNP passed is not its.
    let mut arrivals: FxHashMap<(u32, Role), (VecDeque<u64>, Option<u64>)> = FxHashMap::default();
    let mut delays = Vec::new();
    for step in steps {
        match *step {
            Step::Trigger(i) if o.decisions[i] == Decision::Sent => {
                let t = &scan.triggers[i];
                arrivals.entry((t.conn, t.np)).or_default().0.push_back(t.arrival_ns());
            }
            Step::Cnp(k) => {
                let c = &scan.cnps[k];
                let Some((queued, latest)) = arrivals.get_mut(&(c.conn, c.np)) else { continue };
                while let Some(a) = queued.front().copied().filter(|&a| a <= c.ts_ns) {
                    queued.pop_front();
                    *latest = Some(a);
                }
                delays.extend(latest.map(|a| c.ts_ns.saturating_sub(a)));
            }
            Step::Trigger(_) => {}
        }
    }
    window_of(delays)
}

/// Twice the (lower) median delay, plus slack; unbounded without delays.
fn window_of(mut delays: Vec<u64>) -> u64 {
    delays.sort_unstable();
    delays.get(delays.len().saturating_sub(1) / 2).map_or(u64::MAX, |m| m.saturating_mul(2) + WINDOW_SLACK_NS)
}

/// The interval to replay per NP: the configured one, or — when nothing says — the
/// smallest gap between consecutive observed CNPs of one group (an estimate: CNP timestamps
/// carry the NP's generation jitter).
fn intervals(scan: &Scan, hosts: &[NpHost; 2], scope: Scope) -> [u64; 2] {
    let mut out = [0; 2];
    for (slot, h) in out.iter_mut().zip(hosts) {
        *slot = match h.interval_ps() {
            Some(ps) => ps,
            None => {
                observed_gaps(scan, scope).filter(|(np, _)| *np == h.role).map(|(_, g)| g * 1_000).min().unwrap_or(0)
            }
        };
    }
    out
}

/// (NP, gap in ns) between consecutive observed CNPs of each group.
fn observed_gaps(scan: &Scan, scope: Scope) -> impl Iterator<Item = (Role, u64)> + '_ {
    let mut last: FxHashMap<Group, u64> = FxHashMap::default();
    scan.cnps.iter().filter_map(move |c| {
        let prev = last.insert(Group::of(scope, c.np, c.rp_ip, c.conn), c.ts_ns)?;
        Some((c.np, c.ts_ns.saturating_sub(prev)))
    })
}

/// Replays `scope`. When the nominal replay does not explain the trace but met ambiguous
/// decisions, tries their other outcomes: all combinations of a few, else one flip per
/// round, the one that leaves fewest mismatches (a wrong boundary decision disturbs the
/// pairing locally, until the group's next CNP).
fn evaluate(scan: &Scan, steps: &[Step], hosts: &[NpHost; 2], scope: Scope) -> Outcome {
    let unbounded = Hyp { scope, interval_ps: intervals(scan, hosts, scope), window_ns: u64::MAX };
    let first = simulate(scan, steps, hosts, &unbounded, 0);
    // Of the two estimates of a CNP's delay, the one whose pairing leaves fewer mismatches;
    // on a tie, the tighter (a pairing shifted by a missing CNP ties with the true one).
    let (nominal, h) = [nearest_window(scan, steps, &first), fifo_window(scan, &first)]
        .into_iter()
        .map(|window_ns| {
            let h = Hyp { window_ns, ..unbounded };
            (simulate(scan, steps, hosts, &h, 0), h)
        })
        .min_by_key(|(o, h)| (o.mismatches(), h.window_ns))
        .expect("two candidates");
    // Mismatches a missing copy may explain do not count: flipping decisions to explain
    // them away would guess at what the trace lacks.
    if nominal.consistent() || nominal.ambiguous == 0 {
        return nominal;
    }
    if nominal.ambiguous <= MAX_SEARCHED_AMBIGUOUS {
        return (1..1u64 << nominal.ambiguous)
            .map(|flips| simulate(scan, steps, hosts, &h, flips))
            .find(Outcome::consistent)
            .unwrap_or(nominal);
    }
    // Else, round by round, the one flip that leaves fewest mismatches (the first flip that
    // helps may be the wrong one, anchoring later decisions of its group on it).
    let (mut best, mut flips) = (nominal, 0u64);
    for _ in 0..MAX_REPAIR_ROUNDS {
        let candidates = (0..best.ambiguous.min(64)).filter(|j| (flips >> j) & 1 == 0).map(|j| flips | 1 << j);
        let Some((candidate, with)) = candidates
            .map(|f| (simulate(scan, steps, hosts, &h, f), f))
            .min_by_key(|(o, _)| o.mismatches())
            .filter(|(o, _)| o.mismatches() < best.mismatches())
        else {
            break;
        };
        (best, flips) = (candidate, with);
        if best.consistent() {
            break;
        }
    }
    best
}

/// What became of one trigger under the scope used for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TriggerOutcome {
    /// Expected a CNP and one was observed.
    Cnp,
    /// The limiter held it back.
    Suppressed,
    /// Expected a CNP and none was observed.
    Missing,
    /// The NP is disabled, or NAKs do not trigger CNPs on this NIC.
    NotATrigger,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct TriggerReport {
    /// Mirror seq (as on the wire) of the packet whose arrival asked for a CNP: the ECN-marked
    /// packet, or for a NAK the out-of-sequence data packet that made the NP send it.
    pub seq: u64,
    pub conn: u32,
    /// The notification point: the end that received the packet.
    pub np: Role,
    pub cause: Cause,
    pub psn: u32,
    pub switch_ts_ns: u64,
    pub nak_seq: Option<u64>,
    pub outcome: TriggerOutcome,
    /// The limiter's decision may have been another: a trigger whose copy is missing, or a
    /// decision that frames queued unseen put at the interval's boundary, may have changed
    /// it ([`decisions_in_doubt`]).
    pub outcome_in_doubt: bool,
    /// Its CNP; null when `pairing_ambiguous`.
    pub cnp_seq: Option<u64>,
    /// Another CNP of its connection's NP may be its (see `CnpReport::pairing_ambiguous`).
    pub pairing_ambiguous: bool,
    /// For a suppressed trigger: the trigger whose CNP was too recent.
    pub limited_by_seq: Option<u64>,
    /// Arrival at the NP minus the arrival of the last CNP-producing trigger of its group.
    pub gap_ns: Option<f64>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct CnpReport {
    pub seq: u64,
    pub switch_ts_ns: u64,
    pub conn: u32,
    /// The end that sent it.
    pub np: Role,
    /// Its trigger; null without one, or when the triggers it may pair with are packets
    /// of more than one arrival (`pairing_ambiguous`).
    pub trigger_seq: Option<u64>,
    /// Null without a trigger, or when the triggers it may pair with differ in cause.
    pub cause: Option<Cause>,
    /// Trigger at the switch → this CNP at the switch; null with `trigger_seq`.
    pub delay_ns: Option<u64>,
    /// Another trigger of its connection's NP may be its: a CNP names no PSN, and the NP's
    /// CNP generation delay varies, so CNPs may leave in another order than their
    /// triggers came; and a copy missing may have shifted the pairing ([`doubts`]).
    pub pairing_ambiguous: bool,
    /// Since the previous CNP of its group, switch time.
    pub interval_ns: Option<u64>,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ConnReport {
    pub conn: u32,
    #[serde(flatten)]
    pub counts: Counts,
}

/// Triggers and CNPs counted, for one connection or (summed) for the trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    pub ecn_triggers: usize,
    pub nak_triggers: usize,
    pub expected: usize,
    pub observed: usize,
    pub suppressed: usize,
    pub missing: usize,
    pub unexplained: usize,
}

impl Counts {
    fn trigger(&mut self, t: &TriggerReport) {
        match (t.outcome, t.cause) {
            (TriggerOutcome::NotATrigger, _) => return,
            (_, Cause::Ecn) => self.ecn_triggers += 1,
            (_, Cause::Nak) => self.nak_triggers += 1,
        }
        match t.outcome {
            TriggerOutcome::Cnp => self.expected += 1,
            TriggerOutcome::Missing => (self.expected, self.missing) = (self.expected + 1, self.missing + 1),
            TriggerOutcome::Suppressed => self.suppressed += 1,
            TriggerOutcome::NotATrigger => {}
        }
    }

    fn cnp(&mut self, explained: bool) {
        self.observed += 1;
        self.unexplained += usize::from(!explained);
    }

    fn add(self, o: Counts) -> Counts {
        Counts {
            ecn_triggers: self.ecn_triggers + o.ecn_triggers,
            nak_triggers: self.nak_triggers + o.nak_triggers,
            expected: self.expected + o.expected,
            observed: self.observed + o.observed,
            suppressed: self.suppressed + o.suppressed,
            missing: self.missing + o.missing,
            unexplained: self.unexplained + o.unexplained,
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Hypothesis {
    pub scope: Scope,
    pub consistent: bool,
    pub expected: usize,
    pub missing: usize,
    pub unexplained: usize,
    /// Missing and unexplained CNPs a copy missing from the trace may explain: they do not
    /// count against the hypothesis.
    pub unverifiable: usize,
    /// Decisions within the timestamp tolerance of the interval (widened by how much later
    /// unseen frames may have made an arrival).
    pub ambiguous: u32,
    /// The interval replayed, per NP (requester, responder), ns.
    pub interval_ns: [f64; 2],
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ScopeVerdict {
    /// Every scope whose replay explains the trace.
    pub consistent: Vec<Scope>,
    /// The scope, when exactly one explains the trace.
    pub inferred: Option<Scope>,
    pub ambiguous: bool,
    /// The scope the per-trigger and per-CNP details below follow: the inferred one, else
    /// the NIC's documented one among the consistent, else the closest.
    pub used: Option<Scope>,
    /// What Lumina §6.3 measured for the NP's NIC.
    pub documented: Option<Scope>,
    /// When none explains the trace: the scopes that come closest (fewest mismatches).
    pub closest: Vec<Scope>,
}

/// Where the true minimum interval lies: above the largest gap that was suppressed, at most
/// the smallest gap that produced a CNP (arrival clock, widened by the tolerance). Every
/// interval in that range, and no other, makes the limiter decide every trigger as the
/// trace shows — when the replay explains the trace; when it does not (CNPs missing or
/// unexplained), its decisions say nothing of the NIC's interval and there is no bracket.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct IntervalBracket {
    pub above_ns: Option<u64>,
    pub at_most_ns: Option<u64>,
    /// The replay the bracket comes from explains the trace (else both bounds are null).
    pub explained: bool,
    /// What the configuration or NIC says.
    pub expected_ns: Option<u64>,
    /// Consecutive CNPs of one group, switch time.
    pub observed_min_ns: Option<u64>,
    pub observed_median_ns: Option<u64>,
    pub observed_max_ns: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// A trigger the limiter let through got no CNP.
    MissingCnp,
    /// A CNP with no trigger left to explain it on its connection.
    CnpWithoutTrigger,
    CnpWhileNpDisabled,
    /// Two CNPs of one group closer than the configured minimum interval.
    CnpsTooClose,
}

impl FindingKind {
    /// As in report.json.
    pub const fn name(self) -> &'static str {
        match self {
            FindingKind::MissingCnp => "missing-cnp",
            FindingKind::CnpWithoutTrigger => "cnp-without-trigger",
            FindingKind::CnpWhileNpDisabled => "cnp-while-np-disabled",
            FindingKind::CnpsTooClose => "cnps-too-close",
        }
    }
}

impl Cause {
    /// As in report.json.
    pub const fn name(self) -> &'static str {
        match self {
            Cause::Ecn => "ecn",
            Cause::Nak => "nak",
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub conn: u32,
    /// The trigger (missing CNP) or the CNP concerned.
    pub seq: u64,
    pub detail: String,
    /// Its trace order (unwrapped seq).
    #[serde(skip)]
    order: u64,
    /// A missing CNP: the trace order of the CNP that showed it missing (the first not taken
    /// by an earlier trigger), or `u64::MAX`.
    #[serde(skip)]
    until: u64,
    /// A CNP without trigger or a missing CNP: the how-manyth of its kind of its
    /// connection's NP (from 1); 0 otherwise.
    #[serde(skip)]
    nth: u64,
    /// Since when copies missing may have changed its limiter group's decisions ([`Busy`]).
    #[serde(skip)]
    busy_since: Option<u64>,
}

#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    pub hosts: Vec<NpHost>,
    /// The sum of the connections' counts.
    #[serde(flatten)]
    pub counts: Counts,
    pub naks_without_cause: usize,
    pub scope: ScopeVerdict,
    pub hypotheses: Vec<Hypothesis>,
    pub min_interval: IntervalBracket,
    pub connections: Vec<ConnReport>,
    pub triggers: Vec<TriggerReport>,
    pub cnps: Vec<CnpReport>,
    pub findings: Vec<Finding>,
    /// Findings a mirror copy missing from the trace may explain (`analyze::unseen`): a
    /// missing CNP whose CNP's copy may be missing (a copy is missing after the trigger,
    /// before the connection's next CNP), a CNP whose trigger's copy may be (a copy is
    /// missing since the connection's previous CNP, or as many as it is the how-manyth CNP
    /// without trigger of its connection's NP). Not counted as findings.
    pub unverifiable: Vec<Finding>,
    /// Whether the findings are problems: only with a test configuration, which says the
    /// NPs are enabled and what their NICs are; without one, a missing CNP may be an NP
    /// that is off or a limiter with a longer interval, so findings are only reported.
    pub confirmed: bool,
    pub notes: Vec<String>,
}

/// Lumina §4 "Congestion notification", §6.3: expected vs observed CNPs, the rate-limiting
/// scope and the minimum interval.
pub fn analyze(input: &Input<'_>) -> Report {
    let cfg = input.ctx.config.as_ref();
    let hosts = [
        NpHost::of(Role::Requester, cfg.map(|c| &c.requester)),
        NpHost::of(Role::Responder, cfg.map(|c| &c.responder)),
    ];
    let scan = Scan::run(input, &hosts);
    let mut report = Report::of(&scan, &hosts, cfg.is_some());
    report.set_aside_unverifiable(&scan);
    report
}

impl Report {
    fn of(scan: &Scan, hosts: &[NpHost; 2], have_config: bool) -> Report {
        let steps = timeline(scan);
        let outcomes: Vec<Outcome> = Scope::ALL.iter().map(|&s| evaluate(scan, &steps, hosts, s)).collect();
        let active = active_nps(scan);
        let documented = active.iter().find_map(|&r| hosts[r.index()].documented_scope);
        let verdict = verdict(&outcomes, documented);
        let mut report = Report {
            hosts: hosts.iter().filter(|h| active.contains(&h.role)).cloned().collect(),
            naks_without_cause: scan.naks_without_cause,
            hypotheses: outcomes.iter().map(hypothesis).collect(),
            notes: notes(have_config, hosts, &active, scan),
            confirmed: have_config,
            ..Report::default()
        };
        if let Some(o) = outcomes.iter().find(|o| Some(o.scope) == verdict.used) {
            report.fill(scan, &steps, hosts, o);
        }
        report.scope = verdict;
        report
    }
}

/// The NPs the trace shows at work: they received a trigger or sent a CNP.
fn active_nps(scan: &Scan) -> Vec<Role> {
    let mut roles: Vec<Role> = scan.triggers.iter().map(|t| t.np).chain(scan.cnps.iter().map(|c| c.np)).collect();
    roles.sort_by_key(|&r| r.index());
    roles.dedup();
    roles
}

fn verdict(outcomes: &[Outcome], documented: Option<Scope>) -> ScopeVerdict {
    let consistent: Vec<Scope> = outcomes.iter().filter(|o| o.consistent()).map(|o| o.scope).collect();
    let mut closest = Vec::new();
    let used = if consistent.is_empty() {
        // Closest to explaining the trace; ties go to the documented scope, then to order.
        let best = outcomes.iter().map(Outcome::mismatches).min();
        closest = outcomes.iter().filter(|o| Some(o.mismatches()) == best).map(|o| o.scope).collect();
        documented.filter(|d| closest.contains(d)).or(closest.first().copied())
    } else {
        documented.filter(|d| consistent.contains(d)).or(consistent.first().copied())
    };
    ScopeVerdict {
        inferred: (consistent.len() == 1).then(|| consistent[0]),
        ambiguous: consistent.len() > 1,
        consistent,
        used,
        documented,
        closest,
    }
}

fn hypothesis(o: &Outcome) -> Hypothesis {
    Hypothesis {
        scope: o.scope,
        consistent: o.consistent(),
        expected: o.expected(),
        missing: o.missing,
        unexplained: o.unexplained,
        unverifiable: o.unverifiable,
        ambiguous: o.ambiguous,
        interval_ns: o.interval_ps.map(|ps| ps as f64 / 1_000.0),
    }
}

fn notes(have_config: bool, hosts: &[NpHost; 2], active: &[Role], scan: &Scan) -> Vec<String> {
    let mut notes = Vec::new();
    if !have_config {
        notes.push("no test configuration: NAKs are not triggers, intervals estimated from the CNPs".into());
    }
    for h in active.iter().map(|&r| &hosts[r.index()]) {
        if h.link_gbps.is_none() {
            notes.push(format!("{} NIC unknown: switch queueing towards it not modelled", h.role.name()));
        }
    }
    if scan.naks_without_cause > 0 {
        let them = if scan.naks_without_cause == 1 { "it" } else { "them" };
        let naks = plural(scan.naks_without_cause as u64, "NAK", "NAKs");
        notes.push(format!("{naks} had no out-of-sequence arrival before {them}; dated by the NAK"));
    }
    notes
}

fn ns_f64(ps: u64) -> f64 {
    ps as f64 / 1_000.0
}

impl Report {
    /// The details under the replay `o` of the scope used.
    fn fill(&mut self, scan: &Scan, steps: &[Step], hosts: &[NpHost; 2], o: &Outcome) {
        let in_doubt = decisions_in_doubt(scan, o);
        let doubts = doubts(scan, hosts, o, &in_doubt);
        self.triggers =
            scan.triggers.iter().enumerate().map(|(i, t)| trigger_report(scan, o, &doubts, &in_doubt, i, t)).collect();
        self.cnps = cnp_reports(scan, o, &doubts);
        self.connections = conn_reports(scan, o, &self.triggers);
        self.counts = self.connections.iter().fold(Counts::default(), |sum, c| sum.add(c.counts));
        self.min_interval = bracket(scan, o, hosts, &self.cnps);
        self.findings = findings(scan, steps, hosts, o);
    }

    /// Moves the findings a copy missing from the trace may explain to `unverifiable`.
    fn set_aside_unverifiable(&mut self, scan: &Scan) {
        let explained = |f: &Finding| match f.kind {
            FindingKind::CnpWithoutTrigger => scan.excuses.explain_untriggered(f.conn, f.order, f.nth, f.busy_since),
            FindingKind::MissingCnp => scan.excuses.explain_missing(f.conn, f.order, f.until, f.nth, f.busy_since),
            FindingKind::CnpsTooClose => scan.excuses.explain_too_close(f.order, f.busy_since),
            kind => scan.excuses.explain(kind, f.conn, f.order, f.until),
        };
        (self.unverifiable, self.findings) = std::mem::take(&mut self.findings).into_iter().partition(explained);
    }
}

fn trigger_report(scan: &Scan, o: &Outcome, doubts: &[Doubt], in_doubt: &[bool], i: usize, t: &Trig) -> TriggerReport {
    let pairing_ambiguous = o.cnp_of[i].is_some_and(|k| doubts[k].other_trigger);
    let (outcome, limited_by_seq) = match o.decisions[i] {
        Decision::Sent if o.cnp_of[i].is_some() => (TriggerOutcome::Cnp, None),
        Decision::Sent => (TriggerOutcome::Missing, None),
        Decision::Suppressed { by } => (TriggerOutcome::Suppressed, Some(scan.triggers[by].seq)),
        Decision::NotATrigger => (TriggerOutcome::NotATrigger, None),
    };
    TriggerReport {
        seq: t.seq,
        conn: t.conn,
        np: t.np,
        cause: t.cause,
        psn: t.psn,
        switch_ts_ns: t.ts_ns,
        nak_seq: t.nak_seq,
        outcome,
        outcome_in_doubt: in_doubt[i],
        cnp_seq: o.cnp_of[i].filter(|_| !pairing_ambiguous).map(|k| scan.cnps[k].seq),
        pairing_ambiguous,
        limited_by_seq,
        gap_ns: o.gap_ps[i].map(ns_f64),
    }
}

fn cnp_reports(scan: &Scan, o: &Outcome, doubts: &[Doubt]) -> Vec<CnpReport> {
    let mut last: FxHashMap<Group, u64> = FxHashMap::default();
    scan.cnps
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let d = doubts[k];
            let trigger = o.trigger_of[k].map(|i| &scan.triggers[i]);
            let packet = trigger.filter(|_| !d.other_packet);
            let prev = last.insert(Group::of(o.scope, c.np, c.rp_ip, c.conn), c.ts_ns);
            CnpReport {
                seq: c.seq,
                switch_ts_ns: c.ts_ns,
                conn: c.conn,
                np: c.np,
                trigger_seq: packet.map(|t| t.seq),
                cause: trigger.filter(|_| !d.other_cause).map(|t| t.cause),
                delay_ns: packet.map(|t| c.ts_ns.saturating_sub(t.ts_ns)),
                pairing_ambiguous: d.other_trigger,
                interval_ns: prev.map(|p| c.ts_ns.saturating_sub(p)),
            }
        })
        .collect()
}

/// What the trace leaves open about one CNP's trigger.
#[derive(Debug, Clone, Copy, Default)]
struct Doubt {
    /// Another trigger may be its.
    other_trigger: bool,
    /// One of another arrival (not the ECN mark and NAK of one packet).
    other_packet: bool,
    /// One of another cause.
    other_cause: bool,
}

/// Per CNP, which other triggers of its connection's NP may be its. A CNP names no PSN, and
/// the NP's delay in generating it varies (Lumina §4 "Congestion notification" counts CNPs,
/// it pairs none), so the trace cannot tell the in-order pairing from another that keeps
/// every CNP after its trigger and within the window. The CNP of the `k`th pair may take
/// the trigger of the `j`th, j > k, when that trigger came before it and each CNP between
/// may take the trigger before its own (the others shift by one); j < k likewise. Both
/// ends of that run of pairs only grow with k: O(n log n). Under capture loss a missing
/// copy may have shifted the pairing: a CNP may be a later trigger's while its own
/// trigger's CNP went unseen ([`lost_cnp_shifts`]), an unseen trigger's
/// ([`unseen_trigger_may_take`]), or that of a trigger the replay held back by a decision
/// in doubt ([`held_trigger_may_take`]).
fn doubts(scan: &Scan, hosts: &[NpHost; 2], o: &Outcome, in_doubt: &[bool]) -> Vec<Doubt> {
    let mut groups: FxHashMap<(u32, Role), Vec<(usize, usize)>> = FxHashMap::default();
    for (k, i) in o.trigger_of.iter().enumerate() {
        if let Some(i) = *i {
            groups.entry((scan.cnps[k].conn, scan.cnps[k].np)).or_default().push((i, k));
        }
    }
    let orphans = triggers_where(scan, |i| o.decisions[i] == Decision::Sent && o.cnp_of[i].is_none());
    let held = triggers_where(scan, |i| matches!(o.decisions[i], Decision::Suppressed { .. }) && in_doubt[i]);
    let mut untriggered: FxHashMap<(u32, Role), Vec<usize>> = FxHashMap::default();
    for (k, c) in scan.cnps.iter().enumerate().filter(|(k, _)| o.trigger_of[*k].is_none()) {
        untriggered.entry((c.conn, c.np)).or_default().push(k);
    }
    let longest = longest_delays(scan, o);
    let mut out = vec![Doubt::default(); scan.cnps.len()];
    for (group, pairs) in &groups {
        let orphans = orphans.get(group).map_or(&[][..], Vec::as_slice);
        let held = held.get(group).map_or(&[][..], Vec::as_slice);
        let shifts = lost_cnp_shifts(scan, o.window_ns, pairs, orphans);
        let untriggered = untriggered.get(group).map_or(&[][..], Vec::as_slice);
        let moves_on = later_cnp_runs(scan, o.window_ns, pairs, untriggered);
        for (m, (lo, hi)) in alternatives(scan, o.window_ns, pairs).into_iter().enumerate() {
            let (own, k) = pairs[m];
            let in_order = pairs[lo..=hi].iter().map(|&(i, _)| i);
            let held_back = held_trigger_may_take(scan, o, in_doubt, pairs, m, held);
            out[k] = Doubt::of(scan, own, in_order.chain(shifts[m]).chain(held_back));
            let np = scan.cnps[k].np.index();
            if unseen_trigger_may_take(scan, o, longest[np], pairs, m, &moves_on) {
                let nak = hosts[np].nak_triggers;
                out[k] = Doubt { other_trigger: true, other_packet: true, other_cause: out[k].other_cause || nak };
            }
        }
    }
    out
}

impl Doubt {
    /// The doubt about a CNP paired with trigger `own` that may take any of `candidates`.
    fn of(scan: &Scan, own: usize, candidates: impl Iterator<Item = usize>) -> Doubt {
        let own_trigger = &scan.triggers[own];
        candidates.filter(|&i| i != own).map(|i| &scan.triggers[i]).fold(Doubt::default(), |d, t| Doubt {
            other_trigger: true,
            other_packet: d.other_packet || t.idx != own_trigger.idx,
            other_cause: d.other_cause || t.cause != own_trigger.cause,
        })
    }
}

/// Per NP, how long after a trigger's arrival its CNP may come, by the replay's pairs: the
/// longest delay plus the spread of delays (the longest of a few pairs falls short of the
/// NP's; lossy sweep case 418 was 12 ns past it). 0 without pairs.
fn longest_delays(scan: &Scan, o: &Outcome) -> [u64; 2] {
    let mut range = [(u64::MAX, 0); 2];
    for (k, i) in o.trigger_of.iter().enumerate() {
        if let Some(i) = *i {
            let c = &scan.cnps[k];
            let d = scan.triggers[i].delay_to(c);
            let r = &mut range[c.np.index()];
            *r = (r.0.min(d), r.1.max(d));
        }
    }
    range.map(|(lo, hi)| if lo <= hi { hi.saturating_add(hi - lo) } else { 0 })
}

/// Whether CNP `c` may answer trigger `t`: it came after the trigger had reached the NP,
/// and within the window.
fn may_answer(t: &Trig, c: &Seen, window_ns: u64) -> bool {
    t.idx < c.idx && t.arrived_by(c) && t.delay_to(c) <= window_ns
}

/// Per connection NP, in trace order, the triggers for which `pick` holds.
fn triggers_where(scan: &Scan, pick: impl Fn(usize) -> bool) -> FxHashMap<(u32, Role), Vec<usize>> {
    let mut out: FxHashMap<(u32, Role), Vec<usize>> = FxHashMap::default();
    for (i, t) in scan.triggers.iter().enumerate() {
        if pick(i) {
            out.entry((t.conn, t.np)).or_default().push(i);
        }
    }
    out
}

/// Whether the limiter's decision for trigger `i` is in doubt at the interval's boundary:
/// frames whose copies are missing may have queued ahead of it or of the group's trigger
/// before, and its gap may then be on either side of the interval (to the timestamps'
/// tolerance). Within the
/// tolerance alone, a replay the trace bears out stands, as in [`evaluate`]. (Copies
/// missing since its busy period began, [`Busy`], would put far more in doubt than they
/// change: in lossy sweeps that withheld ~60 right pairings for each wrong one it caught.)
fn at_the_boundary(scan: &Scan, o: &Outcome, i: usize) -> bool {
    let range = o.gap_range_ps[i].filter(|(lo, hi)| lo < hi);
    straddles(range, o.interval_ps[scan.triggers[i].np.index()])
}

/// Whether the interval is within the timestamps' tolerance of the range a gap may take.
fn straddles(range: Option<(u64, u64)>, interval_ps: u64) -> bool {
    range.is_some_and(|(lo, hi)| {
        lo < interval_ps.saturating_add(TOLERANCE_PS) && interval_ps < hi.saturating_add(TOLERANCE_PS)
    })
}

/// A trigger held back in doubt ([`decisions_in_doubt`]) after the previous pair's trigger
/// whose CNP the `m`th pair's CNP may be: the CNP may answer it, and the pair's trigger
/// was then held back in its stead (it came less than the interval after it, or its own
/// decision is in doubt). Lossy sweep cases 414 (the first mark's copy lost, the busy
/// period it began replayed one decision off) and 483 (the CNP of a mark held back after
/// the pair's).
fn held_trigger_may_take(
    scan: &Scan,
    o: &Outcome,
    in_doubt: &[bool],
    pairs: &[(usize, usize)],
    m: usize,
    held: &[usize],
) -> Option<usize> {
    let (own, k) = pairs[m];
    let (t, c) = (&scan.triggers[own], &scan.cnps[k]);
    let from = m.checked_sub(1).map_or(0, |p| held.partition_point(|&s| s < pairs[p].0));
    let interval = o.interval_ps[t.np.index()];
    held[from..].iter().take_while(|&&s| scan.triggers[s].idx < c.idx).copied().find(|&s| {
        let s_t = &scan.triggers[s];
        let until = s_t.arrival_ps.saturating_add(s_t.late_ps).saturating_add(interval).saturating_add(TOLERANCE_PS);
        let instead = in_doubt[own] || s < own && t.arrival_ps < until;
        may_answer(s_t, c, o.window_ns) && instead
    })
}

/// For each of a connection NP's (trigger, CNP) pairs, in order: a later trigger its CNP
/// may answer while a CNP went unseen. A run of pairs may shift by one: the first pair's
/// trigger had a CNP whose copy is missing between it and the pair's CNP, each CNP of the
/// run answered the next pair's trigger, and the last one answered a trigger the replay
/// left without a CNP (an orphan). Lossy sweep case 12: a CNP's copy lost, the in-order
/// pairing gave its trigger the next trigger's CNP (case 443: and so on through three more).
fn lost_cnp_shifts(scan: &Scan, window_ns: u64, pairs: &[(usize, usize)], orphans: &[usize]) -> Vec<Option<usize>> {
    let n = pairs.len();
    let cnp = |m: usize| &scan.cnps[pairs[m].1];
    // An orphan between the pair's trigger and the next pair's that its CNP may answer.
    let orphan_for = |m: usize| {
        let next = pairs.get(m + 1).map_or(usize::MAX, |&(i, _)| i);
        let from = orphans.partition_point(|&u| u < pairs[m].0);
        orphans[from..]
            .iter()
            .take_while(|&&u| u < next)
            .copied()
            .find(|&u| may_answer(&scan.triggers[u], cnp(m), window_ns))
    };
    // Per pair, the end of the run from it: the last pair's index and its orphan.
    let run =
        runs(n, |m| orphan_for(m).map(|u| (m, u)), |m| may_answer(&scan.triggers[pairs[m + 1].0], cnp(m), window_ns));
    let mut out = vec![None; n];
    let mut shifting: Option<(usize, usize)> = None;
    for m in 0..n {
        let own = &scan.triggers[pairs[m].0];
        if shifting.is_none_or(|(end, _)| m > end) {
            shifting = run[m].filter(|_| scan.excuses.unseen.between(Some(own.order), cnp(m).order));
        }
        if let Some((end, u)) = shifting {
            out[m] = Some(if m < end { pairs[m + 1].0 } else { u });
        }
    }
    out
}

/// Whether the CNP of a connection NP's `m`th (trigger, CNP) pair may be an unseen
/// trigger's: a packet of its connection towards the NP whose copy is missing after the
/// previous pair's trigger. The CNP may answer it when it arrived no longer before the CNP
/// than `longest_ns` ([`longest_delays`]: a delay far beyond the replay's pairs' is not
/// assumed), and at least the interval after its group's CNP before; and either it came
/// less than the interval before the pair's trigger, which it then suppressed, or the
/// pair's trigger may have had a later CNP ([`later_cnp_runs`], `moves_on`)
/// ([`Trig::latest_unseen_arrival`] bounds its arrival).
/// Lossy sweep case 46: an ECN mark's copy lost, its CNP paired with the mark after it.
fn unseen_trigger_may_take(
    scan: &Scan,
    o: &Outcome,
    longest_ns: u64,
    pairs: &[(usize, usize)],
    m: usize,
    moves_on: &[bool],
) -> bool {
    let (i, k) = pairs[m];
    let (t, c) = (&scan.triggers[i], &scan.cnps[k]);
    let Some((after, ts_ns)) = t.after_gap else { return false };
    if m > 0 && after <= scan.triggers[pairs[m - 1].0].order {
        return false;
    }
    // The packets a NAK's arrival skipped were not delivered: the NAK names the first.
    if t.cause == Cause::Nak && after == t.order {
        return false;
    }
    let latest_ps = t.latest_unseen_arrival(ts_ns);
    let answered = c.ts_ns.saturating_sub(longest_ns).saturating_mul(1_000) <= latest_ps + TOLERANCE_PS;
    let interval_ps = o.interval_ps[t.np.index()];
    let suppresses =
        interval_ps > 0 && t.arrival_ps < latest_ps.saturating_add(interval_ps).saturating_add(TOLERANCE_PS);
    // Its group's last CNP before the pair's trigger would not have let it through earlier.
    let prev_ps = o.gap_ps[i].map(|gap| t.arrival_ps.saturating_sub(gap));
    let let_through = prev_ps.is_none_or(|p| p.saturating_add(interval_ps) <= latest_ps.saturating_add(TOLERANCE_PS));
    answered && let_through && (suppresses || moves_on[m])
}

/// For each of a connection NP's (trigger, CNP) pairs, in order: whether its trigger may
/// have had a later CNP instead, the next pair's, and so on through a run of pairs that
/// ends with a CNP the replay found without a trigger (`untriggered`, CNP indices in trace
/// order). Lossy sweep case 5081: under a limiter that holds nothing back, a lost mark's
/// CNP was given the next mark, whose own CNP was left without one.
fn later_cnp_runs(scan: &Scan, window_ns: u64, pairs: &[(usize, usize)], untriggered: &[usize]) -> Vec<bool> {
    let trigger = |m: usize| &scan.triggers[pairs[m].0];
    // A CNP without trigger between the pair's CNP and the next pair's that may answer it.
    let ends_at = |m: usize| {
        let (after, before) =
            (scan.cnps[pairs[m].1].idx, pairs.get(m + 1).map_or(u32::MAX, |&(_, k)| scan.cnps[k].idx));
        let from = untriggered.partition_point(|&x| scan.cnps[x].idx <= after);
        let mut candidates = untriggered[from..].iter().take_while(|&&x| scan.cnps[x].idx < before);
        candidates.any(|&x| may_answer(trigger(m), &scan.cnps[x], window_ns)).then_some(())
    };
    let link = |m: usize| may_answer(trigger(m), &scan.cnps[pairs[m + 1].1], window_ns);
    runs(pairs.len(), ends_at, link).into_iter().map(|end| end.is_some()).collect()
}

/// For each of `n` pairs, from the back, what ends the run of pairs from it: `end_at(m)`
/// when the run ends at pair m, else the end of the run from m + 1 when `link(m)` joins
/// pair m to it. [`lost_cnp_shifts`] and [`later_cnp_runs`] are its two mirror images.
fn runs<T: Copy>(n: usize, end_at: impl Fn(usize) -> Option<T>, link: impl Fn(usize) -> bool) -> Vec<Option<T>> {
    let mut run = vec![None; n];
    for m in (0..n).rev() {
        run[m] = match end_at(m) {
            Some(end) => Some(end),
            None if m + 1 < n && link(m) => run[m + 1],
            None => None,
        };
    }
    run
}

/// For each of a connection NP's (trigger, CNP) pairs, in order, the first and last pair
/// whose trigger its CNP may take ([`doubts`]).
fn alternatives(scan: &Scan, window_ns: u64, pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let trigger = |j: usize| &scan.triggers[pairs[j].0];
    let late = |t: &Trig, c: &Seen| t.delay_to(c) > window_ns;
    let may_take = |j: usize, k: usize| may_answer(trigger(j), &scan.cnps[pairs[k].1], window_ns);
    let n = pairs.len();
    // How far the shift may run: up from m while each next CNP may take the trigger before
    // its own, down while each previous CNP may take the trigger after its own.
    let mut up = vec![n - 1; n];
    for m in (0..n.saturating_sub(1)).rev() {
        up[m] = if may_take(m, m + 1) { up[m + 1] } else { m };
    }
    let mut down = vec![0; n];
    for m in 1..n {
        down[m] = if may_take(m, m - 1) { down[m - 1] } else { m };
    }
    (0..n)
        .map(|k| {
            let c = &scan.cnps[pairs[k].1];
            // Triggers reach the NP in trace order (one FIFO port toward it).
            let came_before =
                pairs.partition_point(|&(i, _)| scan.triggers[i].idx < c.idx && scan.triggers[i].arrived_by(c));
            let in_window = pairs[..k].partition_point(|&(i, _)| late(&scan.triggers[i], c));
            (down[k].max(in_window), up[k].min(came_before.saturating_sub(1)).max(k))
        })
        .collect()
}

fn conn_reports(scan: &Scan, o: &Outcome, triggers: &[TriggerReport]) -> Vec<ConnReport> {
    let mut by_conn: BTreeMap<u32, ConnReport> = BTreeMap::new();
    fn entry(m: &mut BTreeMap<u32, ConnReport>, conn: u32) -> &mut ConnReport {
        m.entry(conn).or_insert_with(|| ConnReport { conn, ..ConnReport::default() })
    }
    for t in triggers.iter().filter(|t| t.outcome != TriggerOutcome::NotATrigger) {
        entry(&mut by_conn, t.conn).counts.trigger(t);
    }
    for (k, c) in scan.cnps.iter().enumerate() {
        entry(&mut by_conn, c.conn).counts.cnp(o.trigger_of[k].is_some());
    }
    by_conn.into_values().collect()
}

fn bracket(scan: &Scan, o: &Outcome, hosts: &[NpHost; 2], cnps: &[CnpReport]) -> IntervalBracket {
    // A suppressed gap bounds the interval from below by the least it may be, a gap that
    // got a CNP from above by the most.
    let gaps = |suppressed: bool| {
        o.decisions.iter().zip(&o.gap_range_ps).filter_map(move |(d, g)| match (d, *g) {
            (Decision::Sent, Some((_, hi))) if !suppressed => Some(hi),
            (Decision::Suppressed { .. }, Some((lo, _))) if suppressed => Some(lo),
            _ => None,
        })
    };
    let mut observed: Vec<u64> = cnps.iter().filter_map(|c| c.interval_ns).collect();
    observed.sort_unstable();
    let explained = o.consistent();
    IntervalBracket {
        above_ns: gaps(true).max().filter(|_| explained).map(|g| g.saturating_sub(TOLERANCE_PS) / 1_000),
        at_most_ns: gaps(false).min().filter(|_| explained).map(|g| (g + TOLERANCE_PS).div_ceil(1_000)),
        explained,
        expected_ns: active_nps(scan).iter().find_map(|&r| hosts[r.index()].interval_ns),
        observed_min_ns: observed.first().copied(),
        observed_median_ns: observed.get(observed.len() / 2).copied(),
        observed_max_ns: observed.last().copied(),
    }
}

/// Counts one more finding of a connection's NP: how many so far, from 1 (what
/// [`Excuses::shifted`] weighs against the copies missing).
fn one_more(counts: &mut FxHashMap<(u32, Role), u64>, key: (u32, Role)) -> u64 {
    let n = counts.entry(key).or_default();
    *n += 1;
    *n
}

/// Misbehaviour under the scope used: expected CNPs that never came, CNPs with nothing to
/// explain them, CNPs from a disabled NP, and CNPs of one group closer than the interval.
fn findings(scan: &Scan, steps: &[Step], hosts: &[NpHost; 2], o: &Outcome) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut missed: FxHashMap<(u32, Role), u64> = FxHashMap::default();
    for (i, t) in scan.triggers.iter().enumerate() {
        if o.decisions[i] == Decision::Sent && o.cnp_of[i].is_none() {
            let nth = one_more(&mut missed, (t.conn, t.np));
            let detail = format!("{} trigger (PSN {:#x}) let through by the limiter got no CNP", t.cause.name(), t.psn);
            let until = o.expired_by[i].map_or(u64::MAX, |k| scan.cnps[k].order);
            out.push(Finding {
                kind: FindingKind::MissingCnp,
                conn: t.conn,
                seq: t.seq,
                detail,
                order: t.order,
                until,
                nth,
                busy_since: o.busy_since_trigger[i],
            });
        }
    }
    untriggered(scan, steps, hosts, o, &mut out);
    too_close(scan, hosts, o, &mut out);
    out
}

/// A CNP is untriggered when its connection has seen more CNPs from the NP than triggers
/// that had reached the NP before it ([`Trig::arrived_by`]), since the last CNP flagged so.
fn untriggered(scan: &Scan, steps: &[Step], hosts: &[NpHost; 2], o: &Outcome, out: &mut Vec<Finding>) {
    let mut balance: FxHashMap<(u32, Role), i64> = FxHashMap::default();
    // Per connection NP, its triggers still on their way, in arrival order (a FIFO port).
    let mut queued: FxHashMap<(u32, Role), VecDeque<usize>> = FxHashMap::default();
    let mut flagged: FxHashMap<(u32, Role), u64> = FxHashMap::default();
    for step in steps {
        match *step {
            Step::Trigger(i) if counts(&scan.triggers[i], hosts) => {
                let t = &scan.triggers[i];
                queued.entry((t.conn, t.np)).or_default().push_back(i);
            }
            Step::Trigger(_) => {}
            Step::Cnp(k) => {
                let c = &scan.cnps[k];
                if !hosts[c.np.index()].np_enabled {
                    let detail = format!("{} sent a CNP with its NP disabled", c.np.name());
                    let kind = FindingKind::CnpWhileNpDisabled;
                    let until = u64::MAX;
                    let (order, busy_since) = (c.order, None);
                    out.push(Finding { kind, conn: c.conn, seq: c.seq, detail, order, until, nth: 0, busy_since });
                    continue;
                }
                let b = balance.entry((c.conn, c.np)).or_default();
                let on_the_way = queued.entry((c.conn, c.np)).or_default();
                while on_the_way.front().is_some_and(|&i| scan.triggers[i].arrived_by(c)) {
                    on_the_way.pop_front();
                    *b += 1;
                }
                *b -= 1;
                if *b < 0 {
                    // Flagged once: the next CNP needs a trigger of its own, not this one's.
                    *b = 0;
                    let nth = one_more(&mut flagged, (c.conn, c.np));
                    let detail = "no ECN mark or NAK trigger left on its connection".to_string();
                    let (kind, until) = (FindingKind::CnpWithoutTrigger, u64::MAX);
                    let (order, busy_since) = (c.order, o.busy_since_cnp[k]);
                    out.push(Finding { kind, conn: c.conn, seq: c.seq, detail, order, until, nth, busy_since });
                }
            }
        }
    }
}

/// Consecutive CNPs of one group closer than the configured interval, on the NP's arrival
/// clock when both have triggers, else on the switch clock.
fn too_close(scan: &Scan, hosts: &[NpHost; 2], o: &Outcome, out: &mut Vec<Finding>) {
    let jitter_ps = generation_jitter_ns(scan, o).saturating_mul(1_000);
    let mut last: FxHashMap<Group, usize> = FxHashMap::default();
    for (k, c) in scan.cnps.iter().enumerate() {
        let Some(p) = last.insert(Group::of(o.scope, c.np, c.rp_ip, c.conn), k) else { continue };
        let Some(interval) = hosts[c.np.index()].interval_ps() else { continue };
        // Between the triggers' arrivals when both CNPs have one; else between the CNPs
        // themselves, which carry the NP's generation jitter.
        let (gap, slack) = match (o.trigger_of[p], o.trigger_of[k]) {
            (Some(a), Some(b)) => {
                let (ta, tb) = (&scan.triggers[a], &scan.triggers[b]);
                (tb.arrival_ps.saturating_sub(ta.arrival_ps), tb.late_ps)
            }
            _ => (c.ts_ns.saturating_sub(scan.cnps[p].ts_ns).saturating_mul(1_000), jitter_ps),
        };
        if gap + TOLERANCE_PS + slack < interval {
            let detail = format!(
                "{:.3} µs after CNP seq {} of its group ({}); minimum {:.3} µs",
                ns_f64(gap) / 1_000.0,
                scan.cnps[p].seq,
                o.scope.name(),
                ns_f64(interval) / 1_000.0
            );
            out.push(Finding {
                kind: FindingKind::CnpsTooClose,
                conn: c.conn,
                seq: c.seq,
                detail,
                order: c.order,
                until: u64::MAX,
                nth: 0,
                busy_since: too_close_since(scan, o, p, k),
            });
        }
    }
}

/// Since when copies missing may have changed what CNPs `p` and `k` were found too close
/// by: their group's decisions ([`Busy`]), or their pairings (the first in first out
/// pairing shifts past a missing CNP copy: a copy missing after either's trigger may have
/// been that trigger's CNP). The earliest of these; `None` is the trace's start.
fn too_close_since(scan: &Scan, o: &Outcome, p: usize, k: usize) -> Option<u64> {
    let paired = [p, k].map(|c| o.trigger_of[c].map(|i| scan.triggers[i].order));
    let since = o.busy_since_cnp[k]?;
    Some(paired.into_iter().flatten().fold(since, u64::min))
}

/// How much a CNP's delay after its trigger varies: the spread of the paired delays.
fn generation_jitter_ns(scan: &Scan, o: &Outcome) -> u64 {
    let delays = o.trigger_of.iter().zip(&scan.cnps).filter_map(|(t, c)| Some(scan.triggers[(*t)?].delay_to(c)));
    let (lo, hi) = delays.fold((u64::MAX, 0), |(lo, hi), d| (lo.min(d), hi.max(d)));
    hi.saturating_sub(lo)
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1_000.0
}

impl Report {
    /// The terminal summary.
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        if self.triggers.is_empty() && self.cnps.is_empty() {
            let _ = writeln!(out, "CNP: no ECN marks, NAK triggers or CNPs");
            return;
        }
        let t = &self.counts;
        let _ = writeln!(
            out,
            "CNP: {} observed, {} expected from {} ECN + {} NAK triggers ({} suppressed)",
            t.observed, t.expected, t.ecn_triggers, t.nak_triggers, t.suppressed
        );
        let _ = writeln!(out, "  rate-limiting scope: {}", self.scope_line());
        if let Some(line) = self.interval_line() {
            let _ = writeln!(out, "  {line}");
        }
        let show_all = self.connections.len() <= 4;
        let shown = self.connections.iter().filter(|c| show_all || c.counts.missing + c.counts.unexplained > 0);
        render_capped(out, shown, |out, c| {
            let n = &c.counts;
            let _ = writeln!(
                out,
                "  conn {}: {} observed / {} expected, {} suppressed, {} ECN + {} NAK triggers",
                c.conn, n.observed, n.expected, n.suppressed, n.ecn_triggers, n.nak_triggers
            );
        });
        let label = if self.confirmed { "PROBLEM" } else { "finding (unconfirmed: no test configuration)" };
        render_capped(out, &self.findings, |out, f| {
            let _ = writeln!(out, "  {label} {} conn {} seq {}: {}", f.kind.name(), f.conn, f.seq, f.detail);
        });
        if !self.unverifiable.is_empty() {
            let _ = writeln!(
                out,
                "  {} more unverifiable: a mirror copy missing nearby may explain each (report.json: cnp.unverifiable)",
                self.unverifiable.len()
            );
        }
        let in_doubt = self.triggers.iter().filter(|t| t.outcome_in_doubt).count();
        if in_doubt > 0 {
            let _ = writeln!(
                out,
                "  {} in doubt: a trigger whose copy is missing may have changed {} (report.json: cnp.triggers[].outcome_in_doubt)",
                plural(in_doubt as u64, "limiter decision", "limiter decisions"),
                if in_doubt == 1 { "it" } else { "them" }
            );
        }
        for n in &self.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }

    fn scope_line(&self) -> String {
        let names = |s: &[Scope]| s.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ");
        let documented = self.scope.documented.map_or(String::new(), |d| format!(" (NIC documented: {})", d.name()));
        match (self.scope.inferred, self.scope.consistent.is_empty()) {
            (Some(s), _) => format!("{}{documented}", s.name()),
            (None, false) => format!("ambiguous, consistent with {}{documented}", names(&self.scope.consistent)),
            (None, true) if self.scope.closest.len() > 1 => format!(
                "no scope explains the trace; {} come equally close (details follow {}){documented}",
                names(&self.scope.closest),
                self.scope.used.map_or("none", Scope::name)
            ),
            (None, true) => format!(
                "no scope explains the trace; closest {}{documented}",
                self.scope.used.map_or("none", Scope::name)
            ),
        }
    }

    fn interval_line(&self) -> Option<String> {
        let b = &self.min_interval;
        let bracket = match (b.above_ns, b.at_most_ns) {
            (None, None) if !b.explained && b.observed_min_ns.is_some() => {
                "min interval not bracketed (the replay does not explain the trace)".to_string()
            }
            (None, None) => return None,
            // Nothing suppressed: no bound from below, an interval of 0 (no limiter) included.
            (lo, hi) => format!(
                "min interval in {}, {}] µs",
                lo.map_or("[0".into(), |v| format!("({:.3}", us(v))),
                hi.map_or("∞".into(), |v| format!("{:.3}", us(v)))
            ),
        };
        let expected = b.expected_ns.map_or(String::new(), |v| format!(" (expected {:.3} µs)", us(v)));
        let observed = match (b.observed_min_ns, b.observed_median_ns, b.observed_max_ns) {
            (Some(lo), Some(mid), Some(hi)) => {
                format!("; CNP intervals {:.3}–{:.3} µs, median {:.3}", us(lo), us(hi), us(mid))
            }
            _ => String::new(),
        };
        Some(format!("{bracket}{expected}{observed}"))
    }

    /// Findings that mean the NP misbehaved.
    pub fn problems(&self) -> usize {
        if self.confirmed {
            self.findings.len()
        } else {
            0
        }
    }

    /// Writes `cnp-intervals.svg` (each CNP's interval since the previous CNP of its group,
    /// against its number in trace order from 1, with the expected minimum) into `dir`;
    /// nothing without an interval.
    pub fn plots(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let points: Vec<(i64, f64)> =
            (1..).zip(&self.cnps).filter_map(|(i, c)| c.interval_ns.map(|v| (i, us(v)))).collect();
        if self.cnps.len() < 2 || points.is_empty() {
            return Ok(Vec::new());
        }
        let path = dir.join(PLOT_INTERVALS);
        let expected = self.min_interval.expected_ns.map(us);
        draw_intervals(&path, &points, expected, self.cnps.len()).map_err(io::Error::other)?;
        Ok(vec![path])
    }
}

fn draw_intervals(path: &Path, points: &[(i64, f64)], expected: Option<f64>, n: usize) -> Result<(), String> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let top = points.iter().map(|p| p.1).chain(expected).fold(0.0_f64, f64::max) * 1.1 + 1e-3;
    let x = crate::analyze::plot_range(1, i64::try_from(n).unwrap_or(i64::MAX - 1));
    let root = SVGBackend::new(path, (900, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption("CNP intervals", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x.clone(), 0.0..top)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("CNP (trace order, from 1)")
        .y_desc("since previous CNP of its group, at the switch (µs)")
        .draw()
        .map_err(|e| err(&e))?;
    chart
        .draw_series(points.iter().map(|&p| Circle::new(p, 3, BLUE.filled())))
        .map_err(|e| err(&e))?
        .label("CNP interval")
        .legend(|(x, y)| Circle::new((x + 10, y), 3, BLUE.filled()));
    if let Some(v) = expected {
        chart
            .draw_series(LineSeries::new([(x.start, v), (x.end, v)], RED))
            .map_err(|e| err(&e))?
            // The limiter holds it at the NP; at the switch each CNP also carries the NP's
            // varying delay in generating it, so a point may sit a little below the line.
            .label("minimum interval (at the NP; switch times add its CNP delay jitter)")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RED));
    }
    chart.configure_series_labels().border_style(BLACK).background_style(WHITE).draw().map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The terminal names the same kinds as report.json: `name()` is written by hand (a
    /// `const fn`), so it is held to serde's here.
    #[test]
    fn names_are_the_report_json_names() {
        use FindingKind::*;
        for kind in [MissingCnp, CnpWithoutTrigger, CnpWhileNpDisabled, CnpsTooClose] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.name());
        }
        for cause in [Cause::Ecn, Cause::Nak] {
            assert_eq!(serde_json::to_value(cause).unwrap(), cause.name());
        }
    }

    fn hosts(nic: &str, us: u64) -> [NpHost; 2] {
        let cfg = HostConfig { nic: Some(nic.into()), min_time_between_cnps_us: Some(us), ..HostConfig::default() };
        [NpHost::of(Role::Requester, Some(&cfg)), NpHost::of(Role::Responder, Some(&cfg))]
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([192, 0, 2, last])
    }

    /// Builds a scan from (trace index, ns, conn, RP address) of triggers and CNPs.
    fn scan(triggers: &[(u32, u64, u32, u8)], cnps: &[(u32, u64, u32, u8)]) -> Scan {
        let trig = |&(idx, ns, conn, rp): &(u32, u64, u32, u8)| Trig {
            idx,
            seq: u64::from(idx) + 1,
            order: u64::from(idx) + 1,
            ts_ns: ns,
            arrival_ps: ns * 1_000,
            late_ps: 0,
            after_gap: None,
            after_any_gap: None,
            conn,
            np: Role::Responder,
            rp_ip: ip(rp),
            cause: Cause::Ecn,
            psn: idx,
            nak_seq: None,
        };
        let seen = |&(idx, ns, conn, rp): &(u32, u64, u32, u8)| Seen {
            idx,
            seq: u64::from(idx) + 1,
            order: u64::from(idx) + 1,
            ts_ns: ns,
            conn,
            np: Role::Responder,
            rp_ip: ip(rp),
        };
        Scan {
            triggers: triggers.iter().map(trig).collect(),
            cnps: cnps.iter().map(seen).collect(),
            naks_without_cause: 0,
            doubtful: Vec::new(),
            excuses: Excuses::default(),
        }
    }

    fn consistent(r: &Report) -> Vec<Scope> {
        r.scope.consistent.clone()
    }

    #[test]
    fn a_cross_connection_suppression_rules_out_per_qp() {
        // 4 µs limiter: conn 1's mark at 1 µs is held back by conn 0's CNP under per port.
        let s = scan(&[(0, 0, 0, 1), (1, 1_000, 1, 1), (3, 5_000, 0, 1)], &[(2, 1_500, 0, 1), (4, 6_000, 0, 1)]);
        let r = Report::of(&s, &hosts("cx5", 4), true);
        assert_eq!(consistent(&r), [Scope::Port, Scope::DestIp]);
        assert_eq!((r.scope.used, r.scope.ambiguous), (Some(Scope::Port), true));
        assert_eq!(r.problems(), 0);
        let held: Vec<u64> =
            r.triggers.iter().filter(|t| t.outcome == TriggerOutcome::Suppressed).map(|t| t.seq).collect();
        assert_eq!(held, [2]);
        assert_eq!((r.min_interval.above_ns, r.min_interval.at_most_ns), (Some(999), Some(5_001)));
    }

    #[test]
    fn a_cnp_missing_early_is_named_and_shifts_no_later_pairing() {
        // Marks 10 µs apart, each answered 1 µs later but the first: paired first in first
        // out, every CNP would go with the mark before its own (delay 11 µs) and the last
        // mark would be the one reported missing.
        let marks: Vec<_> = (0..4).map(|n| (2 * n, u64::from(n) * 10_000, 0, 1)).collect();
        let cnps: Vec<_> = (1..4).map(|n| (2 * n + 1, u64::from(n) * 10_000 + 1_000, 0, 1)).collect();
        let r = Report::of(&scan(&marks, &cnps), &hosts("cx5", 4), true);
        let missing: Vec<u64> =
            r.triggers.iter().filter(|t| t.outcome == TriggerOutcome::Missing).map(|t| t.seq).collect();
        assert_eq!(missing, [1], "the first mark (seq 1) got no CNP");
        assert!(r.cnps.iter().all(|c| c.delay_ns == Some(1_000)), "{:?}", r.cnps);
    }

    #[test]
    fn a_cnp_after_a_mark_held_back_at_the_boundary_may_be_its() {
        // 4 µs limiter. Mark seq 1 at 0 µs gets CNP seq 2; mark seq 3 comes 3.999 µs
        // later, held back by the replay; mark seq 4 at 4.5 µs is let through, and the CNP
        // at 5.5 µs (seq 5) answers it. Had an unseen frame queued ahead of mark 3 (2 ns
        // more), mark 3 would have had that CNP and mark 4 been held back in its stead.
        let marks = [(0, 0, 0, 1), (2, 3_999, 0, 1), (3, 4_500, 0, 1)];
        let cnps = [(1, 1_000, 0, 1), (4, 5_500, 0, 1)];
        let pairings = |s: &Scan| {
            let r = Report::of(s, &hosts("cx5", 4), true);
            assert_eq!(r.problems(), 0, "{:?}", r.findings);
            r.cnps.iter().map(|c| (c.seq, c.trigger_seq, c.pairing_ambiguous)).collect::<Vec<_>>()
        };
        let exact = scan(&marks, &cnps);
        assert_eq!(pairings(&exact), [(2, Some(1), false), (5, Some(4), false)]);
        let mut late = scan(&marks, &cnps);
        late.triggers[1].late_ps = 2_000;
        assert_eq!(pairings(&late), [(2, Some(1), false), (5, None, true)]);
    }

    /// Review (session 26): a CNP paired with a trigger the port model says was still
    /// queued toward the NP when the CNP passed the switch. A CNP answers only a trigger
    /// that had arrived: the one without a trigger is the CNP that came first.
    #[test]
    fn a_cnp_pairs_with_no_trigger_still_queued_toward_the_np() {
        // Mark seq 1 answered by seq 2; mark seq 3 queued toward the NP until 9 µs, so the
        // CNP at 5 µs (seq 4) answers nothing in the trace, and the one at 10 µs is mark 3's.
        let mut s = scan(&[(0, 0, 0, 1), (2, 2_000, 0, 1)], &[(1, 1_000, 0, 1), (3, 5_000, 0, 1), (4, 10_000, 0, 1)]);
        s.triggers[1].arrival_ps = 9_000_000;
        let r = Report::of(&s, &hosts("cx5", 0), true);
        assert_eq!(
            r.cnps.iter().map(|c| (c.seq, c.trigger_seq)).collect::<Vec<_>>(),
            [(2, Some(1)), (4, None), (5, Some(3))],
            "{:?}",
            r.cnps
        );
        let untriggered: Vec<u64> =
            r.findings.iter().filter(|f| f.kind == FindingKind::CnpWithoutTrigger).map(|f| f.seq).collect();
        assert_eq!(untriggered, [4], "{:?}", r.findings);
    }

    /// A CX6 Dx with slow restart and no limit (`min-time-between-cnps: 0`).
    fn slow_restart_hosts() -> [NpHost; 2] {
        let cfg = HostConfig {
            nic: Some("cx6".into()),
            min_time_between_cnps_us: Some(0),
            slow_restart: Some(true),
            ..HostConfig::default()
        };
        [NpHost::of(Role::Requester, Some(&cfg)), NpHost::of(Role::Responder, Some(&cfg))]
    }

    /// Trigger seq, cause, delay and whether the pairing is ambiguous, of one CNP.
    type Pairing = (Option<u64>, Option<Cause>, Option<u64>, bool);

    fn pairings(r: &Report) -> Vec<Pairing> {
        r.cnps.iter().map(|c| (c.trigger_seq, c.cause, c.delay_ns, c.pairing_ambiguous)).collect()
    }

    #[test]
    fn an_ecn_marked_out_of_order_packet_leaves_the_cause_of_its_two_cnps_open() {
        // One packet both CE-marked and out of sequence: an ECN and a NAK trigger (seq 1),
        // two CNPs. Which left first the trace cannot tell (seeds 1003, 1046 of the sweep:
        // the NAK's CNP first); the trigger is the same packet either way.
        let mut s = scan(&[(0, 0, 0, 1), (0, 0, 0, 1)], &[(1, 1_000, 0, 1), (2, 1_030, 0, 1)]);
        s.triggers[1].cause = Cause::Nak;
        let r = Report::of(&s, &slow_restart_hosts(), true);
        assert_eq!(pairings(&r), [(Some(1), None, Some(1_000), true), (Some(1), None, Some(1_030), true)]);
        assert!(r.triggers.iter().all(|t| t.pairing_ambiguous && t.cnp_seq.is_none()), "{:?}", r.triggers);
        assert_eq!((r.counts.ecn_triggers, r.counts.nak_triggers, r.problems()), (1, 1, 0));
    }

    #[test]
    fn cnps_may_leave_in_another_order_than_their_triggers_came() {
        // An ECN mark, then 100 ns later a NAK trigger, then 5 µs later another mark: the
        // first two CNPs 1 µs after, 30 ns apart, may be either's (seed 3195: they left
        // swapped); the third, beyond the pairing window of both, is the last mark's.
        let mut s = scan(
            &[(0, 0, 0, 1), (1, 100, 0, 1), (4, 5_000, 0, 1)],
            &[(2, 1_100, 0, 1), (3, 1_130, 0, 1), (5, 6_000, 0, 1)],
        );
        s.triggers[1].cause = Cause::Nak;
        let r = Report::of(&s, &slow_restart_hosts(), true);
        assert_eq!(
            pairings(&r),
            [(None, None, None, true), (None, None, None, true), (Some(5), Some(Cause::Ecn), Some(1_000), false)]
        );
        let cnp_of: Vec<_> = r.triggers.iter().map(|t| (t.cnp_seq, t.pairing_ambiguous)).collect();
        assert_eq!(cnp_of, [(None, true), (None, true), (Some(6), false)]);
        // Two marks: the trigger is still open, the cause is not.
        s.triggers[1].cause = Cause::Ecn;
        let r = Report::of(&s, &slow_restart_hosts(), true);
        assert_eq!(pairings(&r)[..2], [(None, Some(Cause::Ecn), None, true), (None, Some(Cause::Ecn), None, true)]);
    }

    #[test]
    fn a_cnp_before_the_next_trigger_is_its_own_triggers() {
        // Marks 2 µs apart, each CNP 1 µs after its mark: no CNP may be the next mark's, and
        // taking the previous mark's would leave the previous CNP before the mark it took.
        let marks: Vec<_> = (0..4).map(|n| (2 * n, u64::from(n) * 2_000, 0, 1)).collect();
        let cnps: Vec<_> = (0..4).map(|n| (2 * n + 1, u64::from(n) * 2_000 + 1_000, 0, 1)).collect();
        let r = Report::of(&scan(&marks, &cnps), &slow_restart_hosts(), true);
        let want: Vec<_> = (0..4).map(|n| (Some(2 * n + 1), Some(Cause::Ecn), Some(1_000), false)).collect();
        assert_eq!(pairings(&r), want);
    }

    #[test]
    fn a_nic_slower_than_configured_gets_no_bracket_around_the_configured_interval() {
        // Configured 4 µs, but the NIC lets a CNP through every 8 µs of marks 1 µs apart.
        let marks: Vec<_> = (0..21).map(|n| (n, u64::from(n) * 1_000, 0, 1)).collect();
        let cnps: Vec<_> = (0..3).map(|n| (100 + n, u64::from(n) * 8_000 + 500, 0, 1)).collect();
        let r = Report::of(&scan(&marks, &cnps), &hosts("cx5", 4), true);
        assert!(r.problems() > 0, "the CNPs the configuration expects are missing");
        let b = &r.min_interval;
        assert_eq!((b.above_ns, b.at_most_ns, b.explained), (None, None, false));
        assert_eq!((b.expected_ns, b.observed_min_ns), (Some(4_000), Some(8_000)));
        assert!(r.interval_line().unwrap().starts_with("min interval not bracketed"));
    }

    #[test]
    fn scopes_that_fail_alike_are_named_as_tied() {
        // One QP and a CNP with no mark before it: every scope misses it alike.
        let r = Report::of(&scan(&[(0, 0, 0, 1)], &[(1, 1_000, 0, 1), (2, 30_000, 0, 1)]), &hosts("cx5", 4), true);
        assert!(r.scope.consistent.is_empty());
        assert_eq!(r.scope.closest, Scope::ALL);
        assert!(
            r.scope_line().contains("per port, per destination IP, per QP come equally close"),
            "{}",
            r.scope_line()
        );
    }

    #[test]
    fn cnps_without_a_trigger_are_too_close_only_beyond_the_generation_jitter() {
        // Paired CNPs 1.0 and 1.4 µs after their marks (0.4 µs jitter); then one with no
        // mark, `after` ns after the last.
        let too_close = |after: u64| {
            let cnps = [(1, 1_000, 0, 1), (3, 11_400, 0, 1), (4, 11_400 + after, 0, 1)];
            let r = Report::of(&scan(&[(0, 0, 0, 1), (2, 10_000, 0, 1)], &cnps), &hosts("cx5", 4), true);
            r.findings.iter().any(|f| f.kind == FindingKind::CnpsTooClose)
        };
        assert!(!too_close(3_800), "within the jitter of a 4 µs interval");
        assert!(too_close(3_000));
    }

    #[test]
    fn separate_addresses_separate_per_ip_from_per_port() {
        let s = scan(&[(0, 0, 0, 1), (1, 1_000, 1, 2)], &[(2, 1_500, 0, 1), (3, 2_500, 1, 2)]);
        let r = Report::of(&s, &hosts("cx4", 4), true);
        assert_eq!(consistent(&r), [Scope::DestIp, Scope::Qp]);
        assert_eq!(r.scope.used, Some(Scope::DestIp), "the documented scope among the consistent");
    }

    #[test]
    fn a_decision_at_the_boundary_follows_the_trace() {
        // 0.4 ns past the interval: nominally a CNP, but within the timestamp tolerance.
        let mut s = scan(&[(0, 0, 0, 1), (2, 4_000, 0, 1)], &[(1, 1_000, 0, 1)]);
        s.triggers[1].arrival_ps += 400;
        let r = Report::of(&s, &hosts("cx6", 4), true);
        assert_eq!(consistent(&r), Scope::ALL);
        assert_eq!(r.hypotheses[0].ambiguous, 1);
        assert_eq!(r.triggers[1].outcome, TriggerOutcome::Suppressed);
        assert_eq!(r.problems(), 0);
    }

    #[test]
    fn many_boundary_decisions_are_repaired_one_at_a_time() {
        // Nine marks, each 4000.4 ns after the previous: eight ambiguous decisions. The NIC
        // held back the sixth (its clock said 3999.9 ns), so the seventh went out instead.
        let step_ps = 4_000_400;
        let triggers: Vec<(u32, u64, u32, u8)> = (0..9).map(|k| (2 * k, 0, 0, 1)).collect();
        let cnps: Vec<(u32, u64, u32, u8)> =
            (0..9).filter(|&k| k != 5).map(|k| (2 * k + 1, u64::from(k) * step_ps / 1_000 + 1_000, 0, 1)).collect();
        let mut s = scan(&triggers, &cnps);
        for (k, t) in s.triggers.iter_mut().enumerate() {
            (t.arrival_ps, t.ts_ns) = (k as u64 * step_ps, k as u64 * step_ps / 1_000);
        }
        let r = Report::of(&s, &hosts("cx5", 4), true);
        assert_eq!(consistent(&r), Scope::ALL, "{:#?}", r.hypotheses);
        let held: Vec<u64> =
            r.triggers.iter().filter(|t| t.outcome == TriggerOutcome::Suppressed).map(|t| t.seq).collect();
        assert_eq!(held, [11], "the sixth trigger (index 10)");
        assert_eq!(r.problems(), 0);
    }

    #[test]
    fn misbehaviour_is_flagged() {
        // A CNP before any trigger, a trigger let through with no CNP, and two CNPs 1 µs
        // apart under a 4 µs limiter.
        let s = scan(
            &[(1, 100, 0, 1), (4, 20_000, 0, 1), (5, 21_000, 0, 1)],
            &[(0, 50, 0, 1), (6, 21_500, 0, 1), (7, 22_500, 0, 1)],
        );
        let r = Report::of(&s, &hosts("cx5", 4), true);
        assert!(consistent(&r).is_empty());
        let kinds: Vec<FindingKind> = r.findings.iter().map(|f| f.kind).collect();
        assert!(kinds.contains(&FindingKind::CnpWithoutTrigger), "{kinds:?}");
        assert!(kinds.contains(&FindingKind::CnpsTooClose), "{kinds:?}");
        let s = scan(&[(1, 100, 0, 1), (4, 20_000, 0, 1)], &[(2, 1_100, 0, 1)]);
        let r = Report::of(&s, &hosts("cx5", 4), true);
        assert_eq!(r.findings.iter().map(|f| (f.kind, f.seq)).collect::<Vec<_>>(), [(FindingKind::MissingCnp, 5)]);
        assert_eq!(r.problems(), 1);
        // Without a configuration the same finding is reported, unconfirmed.
        let r = Report::of(&s, &hosts("cx5", 4), false);
        assert_eq!((r.findings.len(), r.problems()), (1, 0));
    }

    #[test]
    fn a_disabled_np_expects_nothing() {
        let cfg = HostConfig { nic: Some("cx5".into()), np_enable: Some(false), ..HostConfig::default() };
        let hosts = [NpHost::of(Role::Requester, Some(&cfg)), NpHost::of(Role::Responder, Some(&cfg))];
        let r = Report::of(&scan(&[(0, 0, 0, 1)], &[(1, 1_000, 0, 1)]), &hosts, true);
        assert_eq!(r.counts.expected, 0);
        assert_eq!(r.findings.iter().map(|f| f.kind).collect::<Vec<_>>(), [FindingKind::CnpWhileNpDisabled]);
    }

    #[test]
    fn profiles_follow_lumina() {
        let e810 = &hosts("e810", 4)[1];
        assert_eq!((e810.interval_ns, e810.documented_scope), (Some(E810_INTERVAL_NS), Some(Scope::Qp)));
        let cfg = HostConfig { nic: Some("cx6".into()), slow_restart: Some(true), ..HostConfig::default() };
        let cx6 = NpHost::of(Role::Responder, Some(&cfg));
        assert!(cx6.nak_triggers);
        assert_eq!(cx6.interval_ns, Some(4_000), "NVIDIA's default");
        let cfg = HostConfig { nic: Some("cx4".into()), slow_restart: Some(true), ..HostConfig::default() };
        assert!(!NpHost::of(Role::Responder, Some(&cfg)).nak_triggers, "Lumina: no NACK-triggered CNP on CX4");
        assert_eq!(NpHost::of(Role::Responder, None).interval_ns, None);
    }
}
