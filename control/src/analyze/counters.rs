//! RNIC counters against the trace (Lumina §4 "Hardware network stack counter", §6.2.4
//! "Incorrect RNIC counters"): each counter delta Lumina dumped (finish − start, under the
//! vendor's name) is compared with the same quantity counted from the packets the switch
//! saw for that host — frames sent and received, NAKs, out-of-sequence and duplicate
//! requests, READ gap detections, retransmission timeouts, CNPs, ECN marks, ICRC errors
//! and requests received. A counter whose delta differs is flagged, e.g. "cnpSent
//! unchanged while 12 CNPs were sent" (E810, §6.2.4).
//!
//! What the trace shows for a host, and how each value is derived:
//! - sent: every RoCE frame with the host's IP as source (the switch saw it, so it left);
//! - received: every RoCE frame to the host that was not dropped by an injected event;
//!   corrupted frames arrive and count, then fail the ICRC check and go no further; a CNP
//!   counts as handled when the host's DCQCN reaction point is enabled, as ignored when
//!   not (configuration `dcqcn-rp-enable`);
//! - transport counters (out-of-sequence, duplicate, READ gap, timeouts): the Go-back-N
//!   replay of [`super::gbn`] over each connection, in trace order (one switch port feeds
//!   each host, in order) — the same replay whose rule checks and NAK/timeout counts the
//!   report shows, so the two sections cannot disagree.
//!
//! The trace's value is a lower bound, never a value to be near: a frame whose copy is in
//! the trace certainly happened, so the NIC must have counted at least that many. When
//! mirror copies are missing from the trace (gaps in the mirror sequence), the NIC may
//! have counted up to that many more: `trace ≤ nic ≤ trace + missing` ([`allowed`]).
//! The one way a host receives fewer frames than the trace shows delivered is its NIC
//! dropping them in its own port buffer (`rx_discards_phy`, Lumina §6.2.1–6.2.2): its
//! receive-side counters may then fall short by that many, and its transport counters,
//! which a replay delivering those frames cannot follow, are not checked.

use std::collections::BTreeMap;
use std::net::IpAddr;

use rustc_hash::FxHashMap;
use trace::record::{Kind, Record};
use wire::mirror::Event;

use super::conn::{unknown_verb_note, Role};
use super::context::{CounterDelta, Verb};
use super::gbn;
use super::transport::{ce_marked, corrupt, is_seq_nak};
use super::Input;

/// What a counter counts, whatever the vendor calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    FramesSent,
    FramesReceived,
    NaksReceived,
    OutOfSequence,
    DuplicateRequests,
    ImpliedNaks,
    /// Timer expiries after which the QP retried.
    Timeouts,
    /// The expiry that exhausted the retry count.
    RetriesExceeded,
    CnpsSent,
    EcnMarkedReceived,
    /// The sum of the two below, checked when the configuration does not say whether the
    /// reaction point is enabled.
    CnpsReceived,
    /// CNPs received and acted on by the reaction point.
    CnpsHandled,
    /// CNPs received while the reaction point is disabled.
    CnpsIgnored,
    IcrcErrors,
    ReadRequestsReceived,
    WriteRequestsReceived,
    SendRequestsReceived,
}

impl Quantity {
    /// The end of "… while N {phrase}".
    fn phrase(self) -> &'static str {
        match self {
            Quantity::FramesSent => "frames were sent",
            Quantity::FramesReceived => "frames were received",
            Quantity::NaksReceived => "NAK-sequence-errors were received",
            Quantity::OutOfSequence => "out-of-sequence requests arrived",
            Quantity::DuplicateRequests => "duplicate requests arrived",
            Quantity::ImpliedNaks => "out-of-sequence READ responses were detected",
            Quantity::Timeouts => "retransmission timeouts were retried",
            Quantity::RetriesExceeded => "QPs ended with data unacknowledged (their retries exhausted)",
            Quantity::CnpsSent => "CNPs were sent",
            Quantity::EcnMarkedReceived => "CE-marked packets were received",
            Quantity::CnpsReceived => "CNPs were received",
            Quantity::CnpsHandled => "CNPs were received, its reaction point enabled",
            Quantity::CnpsIgnored => "CNPs were received, its reaction point disabled",
            Quantity::IcrcErrors => "packets with a bad ICRC were received",
            Quantity::ReadRequestsReceived => "READ requests were received",
            Quantity::WriteRequestsReceived => "WRITE request packets were received",
            Quantity::SendRequestsReceived => "SEND request packets were received",
        }
    }

    /// Counted by the host on receiving a frame, before its transport acts on it.
    fn received(self) -> bool {
        matches!(
            self,
            Quantity::FramesReceived
                | Quantity::NaksReceived
                | Quantity::EcnMarkedReceived
                | Quantity::CnpsReceived
                | Quantity::CnpsHandled
                | Quantity::CnpsIgnored
                | Quantity::IcrcErrors
                | Quantity::ReadRequestsReceived
                | Quantity::WriteRequestsReceived
                | Quantity::SendRequestsReceived
        )
    }

    /// Needs the verb and connections (a replay of the transport), not just addresses.
    fn needs_replay(self) -> bool {
        matches!(
            self,
            Quantity::OutOfSequence
                | Quantity::DuplicateRequests
                | Quantity::ImpliedNaks
                | Quantity::Timeouts
                | Quantity::RetriesExceeded
        )
    }
}

/// Vendor names (docs/formats.md §4.5): NVIDIA `hw_counters` / port counters, Intel irdma.
const NAMES: &[(&str, Quantity)] = &[
    ("port_xmit_packets", Quantity::FramesSent),
    ("port_rcv_packets", Quantity::FramesReceived),
    ("packet_seq_err", Quantity::NaksReceived),
    ("out_of_sequence", Quantity::OutOfSequence),
    ("duplicate_request", Quantity::DuplicateRequests),
    ("implied_nak_seq_err", Quantity::ImpliedNaks),
    ("local_ack_timeout_err", Quantity::Timeouts),
    ("req_transport_retries_exceeded", Quantity::RetriesExceeded),
    ("np_cnp_sent", Quantity::CnpsSent),
    ("np_ecn_marked_roce_packets", Quantity::EcnMarkedReceived),
    ("rp_cnp_handled", Quantity::CnpsHandled),
    ("rp_cnp_ignored", Quantity::CnpsIgnored),
    ("rx_icrc_encapsulated", Quantity::IcrcErrors),
    ("rx_read_requests", Quantity::ReadRequestsReceived),
    ("rx_write_requests", Quantity::WriteRequestsReceived),
    ("ip4OutPkts", Quantity::FramesSent),
    ("TxUDP", Quantity::FramesSent),
    ("ip4InPkts", Quantity::FramesReceived),
    ("RxUDP", Quantity::FramesReceived),
    ("cnpSent", Quantity::CnpsSent),
    ("RxECNMrkd", Quantity::EcnMarkedReceived),
    ("cnpHandled", Quantity::CnpsHandled),
    ("cnpIgnored", Quantity::CnpsIgnored),
    ("ip4InDiscards", Quantity::IcrcErrors),
    ("ip6OutPkts", Quantity::FramesSent),
    ("ip6InPkts", Quantity::FramesReceived),
    ("ip6InDiscards", Quantity::IcrcErrors),
    ("InRdmaReads", Quantity::ReadRequestsReceived),
    ("InRdmaWrites", Quantity::WriteRequestsReceived),
    ("InRdmaSends", Quantity::SendRequestsReceived),
];

/// Counters Lumina dumps that the trace cannot speak to, and why.
const UNCHECKABLE: &[(&str, &str)] = &[
    (
        RX_DISCARDS,
        "drops in the receiving NIC's port buffer happen after the switch, invisible in the trace: this host's \
         receive-side counters may fall short of the trace by this much",
    ),
    ("tx_discards_phy", "drops inside the sending NIC never reach the switch: invisible in the trace"),
];

/// Frames the NIC received and dropped in its port buffer (NVIDIA ethtool).
const RX_DISCARDS: &str = "rx_discards_phy";

pub fn quantity_of(name: &str) -> Option<Quantity> {
    NAMES.iter().find(|(n, _)| *n == name).map(|&(_, q)| q)
}

/// Which frames a counter counts by IP version: irdma's `ip4*` counters count IPv4 frames
/// only and its `ip6*` IPv6 only (RoCEv2 runs over either); every other counter counts both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum IpScope {
    Any,
    V4,
    V6,
}

impl IpScope {
    fn of_counter(name: &str) -> IpScope {
        match name.get(..3) {
            Some("ip4") => IpScope::V4,
            Some("ip6") => IpScope::V6,
            _ => IpScope::Any,
        }
    }

    fn of_address(ip: IpAddr) -> IpScope {
        if ip.is_ipv4() {
            IpScope::V4
        } else {
            IpScope::V6
        }
    }
}

#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    pub hosts: Vec<HostReport>,
    /// Mirror copies missing from the trace (gaps in the sequence): how far above the
    /// trace's count a NIC's may be.
    pub missing_copies: u64,
    pub notes: Vec<String>,
}

#[derive(Debug, serde::Serialize)]
pub struct HostReport {
    pub host: Role,
    /// NIC type from the configuration.
    pub nic: Option<String>,
    pub ips: Vec<IpAddr>,
    /// Why nothing was compared (no counter dump for this host).
    pub skipped: Option<String>,
    pub checks: Vec<CounterCheck>,
    pub not_checked: Vec<NotChecked>,
}

#[derive(Debug, serde::Serialize)]
pub struct CounterCheck {
    /// The vendor's name.
    pub name: String,
    pub quantity: Quantity,
    /// The NIC's delta over the run.
    pub nic: u64,
    /// The same quantity counted from the trace.
    pub trace: u64,
    /// The NIC deltas the trace allows, `min..=max`.
    pub min: u64,
    pub max: u64,
    pub consistent: bool,
    /// Set when inconsistent.
    pub message: Option<String>,
}

#[derive(Debug, serde::Serialize)]
pub struct NotChecked {
    pub name: String,
    /// The NIC's delta, when the dumps give one.
    pub nic: Option<u64>,
    pub why: String,
}

/// Compares the counter dumps with the trace; `gbn` is the Go-back-N replay of the same
/// trace ([`gbn::analyze`]).
pub fn analyze(input: &Input<'_>, gbn: &gbn::Report) -> Report {
    analyze_counted(input, Frames::count(input), gbn)
}

/// What the trace alone says about each host's counters: the pass over every frame, which
/// needs no transport replay and so can run beside [`gbn::analyze`].
pub struct Frames {
    hosts: Hosts,
    missing: u64,
    /// Copies placed later than their seq: counted as frames here, but the transport
    /// replay took them as unseen.
    late: u64,
    derived: Derived,
}

impl Frames {
    pub fn count(input: &Input<'_>) -> Frames {
        let hosts = Hosts::of(input);
        let derived = count_frames(input, &hosts);
        Frames { hosts, missing: super::missing_copies(input), late: input.conns.late_copies(), derived }
    }
}

/// [`analyze`] with the frames already counted.
pub fn analyze_counted(input: &Input<'_>, frames: Frames, gbn: &gbn::Report) -> Report {
    let Frames { hosts, missing, late, mut derived } = frames;
    // A replay needs every packet: one missing copy can turn all later ones into gaps.
    let no_replay = if !gbn.unknown_verb.is_empty() {
        Some(unknown_verb_note(gbn.unknown_verb.len(), "no transport replay"))
    } else if missing > 0 {
        let missing = super::plural(missing, "mirror copy is missing", "mirror copies are missing");
        Some(format!("{missing}: a transport replay over the trace would be wrong"))
    } else if late > 0 {
        let late = super::plural(late, "mirror copy is", "mirror copies are");
        Some(format!("{late} out of order in the trace: a transport replay over it would be wrong"))
    } else {
        None
    };
    let replayed = if no_replay.is_none() { transport_counts(gbn, &mut derived) } else { None };
    let retries_unknown = if no_replay.is_none() { retries_unknown(gbn) } else { None };
    let mut report = Report { missing_copies: missing, ..Report::default() };
    if missing > 0 {
        let copies = super::plural(missing, "mirror copy is missing", "mirror copies are missing");
        report.notes.push(format!("{copies} from the trace: each NIC count may exceed the trace's by that much"));
    }
    if let Some(note) = replayed {
        report.notes.push(note);
    }
    let ctx = input.ctx;
    for (role, delta) in [(Role::Requester, &ctx.requester_counters), (Role::Responder, &ctx.responder_counters)] {
        let config = ctx.config.as_ref().map(|c| c.host(role));
        let rp = config.and_then(|c| c.rp_enable);
        let no_replay = no_replay.as_deref();
        let retries_unknown = retries_unknown.as_deref();
        let basis = Basis { role, derived: &derived, no_replay, retries_unknown, missing, rp, discards: 0 };
        let mut host = HostReport {
            host: role,
            nic: config.and_then(|c| c.nic.clone()),
            ips: hosts.ips(role),
            skipped: None,
            checks: Vec::new(),
            not_checked: Vec::new(),
        };
        match delta {
            Some(Ok(d)) => judge_host(d, basis, &mut host, &mut report.notes),
            Some(Err(e)) => host.skipped = Some(format!("its counter dumps could not be read: {e}")),
            None => host.skipped = Some(format!("no {}_counter_{{start,finish}}.yml in the run", role.name())),
        }
        report.hosts.push(host);
    }
    report
}

/// One host's counter deltas against the trace, and what the report should note of them.
fn judge_host(d: &CounterDelta, basis: Basis<'_>, host: &mut HostReport, notes: &mut Vec<String>) {
    if d.counters.is_empty() && d.unusable.is_empty() {
        host.skipped = Some("its counter dumps hold no counters".into());
        return;
    }
    let discards = d.counters.get(RX_DISCARDS).copied().unwrap_or(0);
    let basis = Basis { discards, ..basis };
    compare(d, &basis, host);
    let role = basis.role;
    let retries = retries_note(host, basis.retries_unknown);
    notes.extend(
        [wrap_note(role, d), unusable_note(role, d), discard_note(role, discards), retries].into_iter().flatten(),
    );
}

/// Says why the retries-exceeded counter's bounds are apart, when the trace cannot tell
/// whether a QP's retries ran out (checked `min..=max`, not withheld).
fn retries_note(host: &HostReport, why: Option<&str>) -> Option<String> {
    let why = why?;
    let check = host.checks.iter().find(|c| c.quantity == Quantity::RetriesExceeded)?;
    Some(format!("{}: {} allowed {}..={}: {why}", host.host.name(), check.name, check.min, check.max))
}

/// Names the counters the dumps give no delta for (each is in `not_checked`, with why):
/// a dump that cannot be read must not pass as one that agrees.
fn unusable_note(role: Role, d: &CounterDelta) -> Option<String> {
    (!d.unusable.is_empty()).then(|| {
        let names: Vec<&str> = d.unusable.keys().map(String::as_str).collect();
        format!("{}: no delta for {} counter(s), not checked: {}", role.name(), names.len(), names.join(", "))
    })
}

/// Says which counters wrapped, whose deltas are then taken modulo 2^32.
fn wrap_note(role: Role, d: &CounterDelta) -> Option<String> {
    (!d.wrapped.is_empty()).then(|| {
        format!(
            "{}: {} finished below {} start: 32-bit, wrapped; the delta is taken modulo 2^32",
            role.name(),
            d.wrapped.join(", "),
            if d.wrapped.len() == 1 { "its" } else { "their" }
        )
    })
}

fn discard_note(role: Role, discards: u64) -> Option<String> {
    (discards > 0).then(|| {
        format!(
            "{}: {RX_DISCARDS} counted {discards}: up to {discards} frames the trace shows delivered were dropped \
             in the NIC's port buffer (Lumina §6.2.1-6.2.2), so its receive-side counters may fall short of the \
             trace by that much, and its transport counters are not checked",
            role.name()
        )
    })
}

/// What one host's counters are judged against.
struct Basis<'a> {
    role: Role,
    derived: &'a Derived,
    /// Why the transport counters are not checked, when they are not.
    no_replay: Option<&'a str>,
    /// Why the requester's retries-exceeded counter may count more than the trace shows.
    retries_unknown: Option<&'a str>,
    missing: u64,
    /// The host's DCQCN reaction point, when the configuration says.
    rp: Option<bool>,
    /// Frames its NIC dropped in its port buffer (`rx_discards_phy`).
    discards: u64,
}

/// What the trace says a counter's delta should be.
struct Expected {
    trace: u64,
    min: u64,
    max: u64,
    /// Set when the host should count none at all, whatever the trace shows: why.
    none: Option<&'static str>,
}

const CNP_SPLIT_UNKNOWN: &str = "a received CNP counts as handled or as ignored as the reaction point is enabled or \
                                 not, which no configuration says (dcqcn-rp-enable); the two are checked as a sum \
                                 when both are dumped";

impl Basis<'_> {
    /// The expected delta of counter `name` of quantity `q`, or why it is not checked.
    fn expect(&self, name: &str, q: Quantity) -> Result<Expected, String> {
        if let Some(why) = self.no_replay.filter(|_| q.needs_replay()) {
            return Err(why.into());
        }
        if q.needs_replay() && self.discards > 0 {
            // One request dropped unseen shifts the NIC's Go-back-N state from the
            // replay's for a whole window: no bound in discards holds.
            return Err(format!(
                "{RX_DISCARDS} counted {}: frames the trace shows delivered were dropped in this NIC's port \
                 buffer, and a replay that delivers them cannot follow its transport",
                self.discards
            ));
        }
        match q {
            Quantity::CnpsHandled | Quantity::CnpsIgnored => self.cnp_share(q),
            _ => {
                let mut e = self.shown(q, self.derived.scoped(self.role, q, IpScope::of_counter(name)));
                e.max += self.derived.slack.get(&(self.role as u8, q)).copied().unwrap_or(0);
                Ok(e)
            }
        }
    }

    /// The bounds of a count of frames the trace shows (quantity `q`).
    fn shown(&self, q: Quantity, trace: u64) -> Expected {
        let short = if q.received() { self.discards } else { 0 };
        let (min, max) = allowed(trace, self.missing, short);
        Expected { trace, min, max, none: None }
    }

    /// Every CNP a host receives is counted once: as handled when its reaction point is
    /// enabled, as ignored when not. NVIDIA: `rp_cnp_ignored` "should not raise if RoCE
    /// congestion control was enabled"; the E810's `cnpHandled` / `cnpIgnored` alike.
    fn cnp_share(&self, q: Quantity) -> Result<Expected, String> {
        let Some(rp) = self.rp else { return Err(CNP_SPLIT_UNKNOWN.into()) };
        if (q == Quantity::CnpsHandled) == rp {
            return Ok(self.shown(q, self.derived.get(self.role, Quantity::CnpsReceived)));
        }
        let why = if rp {
            "its reaction point is enabled (dcqcn-rp-enable): every CNP it receives counts as handled"
        } else {
            "its reaction point is disabled (dcqcn-rp-enable: false): every CNP it receives counts as ignored"
        };
        Ok(Expected { trace: 0, min: 0, max: 0, none: Some(why) })
    }
}

fn compare(d: &CounterDelta, basis: &Basis<'_>, host: &mut HostReport) {
    for (name, &nic) in &d.counters {
        let Some(q) = quantity_of(name) else {
            let why = UNCHECKABLE
                .iter()
                .find(|(n, _)| n == name)
                .map_or("no trace-derived equivalent is known for this counter", |(_, why)| why);
            host.not_checked.push(NotChecked { name: name.clone(), nic: Some(nic), why: why.to_string() });
            continue;
        };
        match basis.expect(name, q) {
            Ok(e) => host.checks.push(check(name.clone(), q, nic, &e)),
            Err(why) => host.not_checked.push(NotChecked { name: name.clone(), nic: Some(nic), why }),
        }
    }
    for (name, why) in &d.unusable {
        host.not_checked.push(NotChecked { name: name.clone(), nic: None, why: why.clone() });
    }
    if basis.rp.is_none() {
        host.checks.extend(cnp_sum(d, basis));
    }
}

/// Handled and ignored CNPs together, when which of the two each CNP went to is unknown.
fn cnp_sum(d: &CounterDelta, basis: &Basis<'_>) -> Option<CounterCheck> {
    let find = |want| d.counters.iter().find(|(n, _)| quantity_of(n) == Some(want));
    let (handled, h) = find(Quantity::CnpsHandled)?;
    let (ignored, i) = find(Quantity::CnpsIgnored)?;
    let e = basis.shown(Quantity::CnpsReceived, basis.derived.get(basis.role, Quantity::CnpsReceived));
    Some(check(format!("{handled} + {ignored}"), Quantity::CnpsReceived, h.saturating_add(*i), &e))
}

fn check(name: String, quantity: Quantity, nic: u64, e: &Expected) -> CounterCheck {
    let consistent = (e.min..=e.max).contains(&nic);
    let message = (!consistent).then(|| match e.none {
        Some(why) => format!("{name} counted {nic} while {why}"),
        None => mismatch_message(&name, nic, e.trace, quantity),
    });
    CounterCheck { name, quantity, nic, trace: e.trace, min: e.min, max: e.max, consistent, message }
}

/// The NIC deltas a trace count allows, `(min, max)`. Every quantity here counts things the
/// trace shows happening, so the trace is a lower bound, the missing copies the slack
/// upwards, and frames dropped inside the receiving NIC the only slack downwards:
/// - frames sent, CNPs sent: a copy at the switch means the frame left the host;
/// - frames received and what is counted on receipt (NAKs, CE marks, CNPs, bad ICRCs,
///   requests): a copy not dropped by an injected event was forwarded to the host (the
///   fabric is lossless past the switch's ingress), whose NIC counted it unless it
///   dropped it in its own port buffer: for these, `short` (that host's
///   `rx_discards_phy`) lowers the floor;
/// - transport counters (out-of-sequence, duplicates, READ gaps, timer expiries): the
///   replay is only run with no copy missing and no frame dropped inside the NIC, and then
///   counts exactly what the NIC saw, so the bounds meet. A retried expiry shows as a go-back no NAK caused; the expiry that
///   exhausted the retry count shows as data unacknowledged at the trace's end — counted
///   only where the trace shows the retries ran out (`gbn::ConnStats::retries_ran_out_at_end`:
///   it runs on past the next expiry with no retry, or progress came too late), and taken
///   as counted by the finish dump, which Lumina takes after the traffic generator exits,
///   waiting for every completion, the failed ones too (the report notes it). A trace that
///   ends sooner may be a run cut short while the QP retried or before its last expiry:
///   the counter may then count that expiry or not (`max` one more per such QP), with why.
///
/// A copy missing from the trace is a frame the trace cannot count: it can only raise the
/// NIC's delta above the trace's, never lower it.
fn allowed(trace: u64, missing: u64, short: u64) -> (u64, u64) {
    (trace.saturating_sub(short), trace.saturating_add(missing))
}

fn mismatch_message(name: &str, nic: u64, trace: u64, q: Quantity) -> String {
    // "12 IPv6 frames were received" for an ip6* counter: it counts those only.
    let what = match IpScope::of_counter(name) {
        IpScope::Any => q.phrase().to_string(),
        IpScope::V4 => format!("IPv4 {}", q.phrase()),
        IpScope::V6 => format!("IPv6 {}", q.phrase()),
    };
    if nic == 0 {
        format!("{name} unchanged while {trace} {what}")
    } else {
        format!("{name} counted {nic} while {trace} {what} (trace)")
    }
}

/// Which host an IP address belongs to: the configuration's IP lists, and the ends of
/// every connection.
struct Hosts {
    by_ip: FxHashMap<IpAddr, Role>,
}

impl Hosts {
    fn of(input: &Input<'_>) -> Hosts {
        let mut by_ip = FxHashMap::default();
        if let Some(c) = &input.ctx.config {
            for role in [Role::Requester, Role::Responder] {
                for ip in &c.host(role).ips {
                    by_ip.insert(*ip, role);
                }
            }
        }
        for c in &input.conns.list {
            by_ip.entry(c.requester.ip).or_insert(Role::Requester);
            by_ip.entry(c.responder.ip).or_insert(Role::Responder);
        }
        Hosts { by_ip }
    }

    fn role(&self, ip: IpAddr) -> Option<Role> {
        self.by_ip.get(&ip).copied()
    }

    fn ips(&self, role: Role) -> Vec<IpAddr> {
        let mut v: Vec<IpAddr> = self.by_ip.iter().filter(|(_, &r)| r == role).map(|(ip, _)| *ip).collect();
        v.sort();
        v
    }
}

/// Trace-derived values per host, in all and per IP version of the frames counted.
#[derive(Debug, Default)]
pub struct Derived {
    values: BTreeMap<(u8, Quantity, IpScope), u64>,
    /// How much more than its value a count may be, the trace unable to tell (timer
    /// expiries that may have found nothing to resend).
    slack: BTreeMap<(u8, Quantity), u64>,
}

impl Derived {
    fn allow_more(&mut self, role: Role, q: Quantity, n: u64) {
        *self.slack.entry((role as u8, q)).or_insert(0) += n;
    }

    fn add(&mut self, role: Role, q: Quantity, n: u64) {
        *self.values.entry((role as u8, q, IpScope::Any)).or_insert(0) += n;
    }
    /// Takes `n` back from a count of all frames (not per IP version).
    fn remove(&mut self, role: Role, q: Quantity, n: u64) {
        if let Some(v) = self.values.get_mut(&(role as u8, q, IpScope::Any)) {
            *v = v.saturating_sub(n);
        }
    }
    /// A count of frames of one IP version (`scope`), counted in all as well.
    fn add_frames(&mut self, role: Role, q: Quantity, scope: IpScope) {
        self.add(role, q, 1);
        *self.values.entry((role as u8, q, scope)).or_insert(0) += 1;
    }
    pub fn get(&self, role: Role, q: Quantity) -> u64 {
        self.scoped(role, q, IpScope::Any)
    }
    fn scoped(&self, role: Role, q: Quantity, scope: IpScope) -> u64 {
        self.values.get(&(role as u8, q, scope)).copied().unwrap_or(0)
    }
}

/// The counters that depend only on addresses and headers.
fn count_frames(input: &Input<'_>, hosts: &Hosts) -> Derived {
    let mut d = Derived::default();
    for r in input.view.records {
        if r.kind() == Kind::NotRoce {
            continue;
        }
        let Some(flow) = input.view.flow(r) else { continue };
        let scope = IpScope::of_address(flow.src_ip());
        if let Some(h) = hosts.role(flow.src_ip()) {
            d.add_frames(h, Quantity::FramesSent, scope);
            if r.kind() == Kind::Cnp {
                d.add(h, Quantity::CnpsSent, 1);
            }
        }
        if let Some(h) = hosts.role(flow.dst_ip()) {
            count_received(r, h, scope, &mut d);
        }
    }
    d
}

fn count_received(r: &Record, h: Role, scope: IpScope, d: &mut Derived) {
    if r.event() == Event::Drop {
        return;
    }
    d.add_frames(h, Quantity::FramesReceived, scope);
    if corrupt(r) {
        // The ICRC check fails: the transport never sees it.
        d.add_frames(h, Quantity::IcrcErrors, scope);
        return;
    }
    if r.kind() == Kind::Cnp {
        d.add(h, Quantity::CnpsReceived, 1);
        return;
    }
    if ce_marked(r) {
        d.add(h, Quantity::EcnMarkedReceived, 1);
    }
    if is_seq_nak(r) {
        d.add(h, Quantity::NaksReceived, 1);
    }
    if r.kind() == Kind::Request && r.opcode() < 0x20 {
        match r.opcode() {
            0x0c => d.add(h, Quantity::ReadRequestsReceived, 1),
            0x06..=0x0b => d.add(h, Quantity::WriteRequestsReceived, 1),
            0x00..=0x05 | 0x16 | 0x17 => d.add(h, Quantity::SendRequestsReceived, 1),
            _ => {}
        }
    }
}

/// The transport counters from the Go-back-N replay; returns a note when something limits
/// them.
fn transport_counts(gbn: &gbn::Report, d: &mut Derived) -> Option<String> {
    let mut unfinished = 0;
    for c in &gbn.connections {
        d.add(Role::Responder, Quantity::OutOfSequence, c.ooo_requests);
        d.add(Role::Responder, Quantity::DuplicateRequests, c.duplicate_requests);
        if c.verb == Some(Verb::Read) {
            // Lumina §6.1: the READ requester's "NAK" is its own gap detection.
            d.add(Role::Requester, Quantity::ImpliedNaks, c.ooo_episodes);
            d.allow_more(Role::Requester, Quantity::ImpliedNaks, c.maybe_ooo_episodes);
        }
        // An expiry that found everything acknowledged by the time progress arrived may be
        // the one that failed a QP that may have failed (its retries used up): counted then in
        // req_transport_retries_exceeded, not in local_ack_timeout_err.
        let failure = u64::from(crossed(c) && c.silent_timeouts > 0);
        d.add(Role::Requester, Quantity::Timeouts, timer_expiries(c) - failure);
        d.allow_more(Role::Requester, Quantity::Timeouts, c.maybe_silent_timeouts + failure);
        d.add(Role::Requester, Quantity::RetriesExceeded, retries_exceeded(c));
        // Retries the trace cannot tell ran out (it ends too soon): the NIC may count that
        // last expiry or not.
        d.allow_more(Role::Requester, Quantity::RetriesExceeded, u64::from(retries_may_have_run_out(c)));
        // NAKs that reached the requester after its QP failed: it counted none of them; nor,
        // if it had failed, those after it may have.
        d.remove(Role::Requester, Quantity::NaksReceived, c.naks_ignored + c.naks_maybe_ignored);
        d.allow_more(Role::Requester, Quantity::NaksReceived, c.naks_maybe_ignored);
        unfinished += retries_exceeded(c);
    }
    (unfinished > 0).then(|| {
        format!(
            "{unfinished} connection(s) ran out of retries (data unacknowledged at the end after the last retry \
             the count allows, or acknowledged after the timer expired past it): counted as that expiry \
             (req_transport_retries_exceeded, not local_ack_timeout_err), assuming the run lasted until it"
        )
    })
}

/// Whether the trace cannot tell whether a connection's retries ran out (IBA vol. 1
/// §9.7.6.1.3): it ends with data unacknowledged before the next expiry would show (Lumina
/// §6.3 for adaptive retransmission's unknown timeouts), or an expiry past its last retry
/// may have come before the next acknowledgement reached the requester
/// (`retries_maybe_exhausted_by_ns`). That expiry may or may not be in
/// `req_transport_retries_exceeded`.
fn retries_may_have_run_out(c: &gbn::ConnStats) -> bool {
    cut_short(c) || crossed(c)
}

fn cut_short(c: &gbn::ConnStats) -> bool {
    c.unacknowledged_at_end && c.retries_ran_out_at_end.is_none()
}

fn crossed(c: &gbn::ConnStats) -> bool {
    c.retries_maybe_exhausted_by_ns.is_some() && c.retries_exhausted_by_ns.is_none()
}

/// Why `req_transport_retries_exceeded` may count more than the trace shows: connections
/// whose retries may have run out unseen ([`retries_may_have_run_out`]).
fn retries_unknown(gbn: &gbn::Report) -> Option<String> {
    let list = |of: fn(&gbn::ConnStats) -> bool| {
        gbn.connections.iter().filter(|c| of(c)).map(|c| c.conn.to_string()).collect::<Vec<_>>().join(", ")
    };
    let (cut_short, crossed) = (list(cut_short), list(|c| crossed(c) && !cut_short(c)));
    let mut why = Vec::new();
    if !cut_short.is_empty() {
        why.push(format!(
            "connection(s) {cut_short} end with data unacknowledged, and the trace cannot tell whether their \
             retries ran out: it ends before their next expiry would show a retry or the QP's failure (with \
             adaptive retransmission that timeout is not known, Lumina §6.3), so the run may have been cut short \
             while they retried or before that expiry"
        ));
    }
    if !crossed.is_empty() {
        why.push(format!(
            "on connection(s) {crossed} the timer's expiry after the last retry the count allows may have come \
             before the acknowledgement that came next reached the requester (its way from the switch is not \
             timed): the QP may have failed then"
        ));
    }
    (!why.is_empty())
        .then(|| format!("{}; req_transport_retries_exceeded may count each of them or not", why.join("; ")))
}

/// The requester's retried timer expiries on one connection: its timeout go-backs, and
/// those that found everything acknowledged by the time progress arrived (no go-back).
/// NVIDIA counts these in `local_ack_timeout_err` ("the QP retry limit was not exceeded").
pub fn timer_expiries(c: &gbn::ConnStats) -> u64 {
    c.timeout_retransmissions + c.silent_timeouts
}

/// The silent last expiry that exceeded the retry count (mlx5
/// `req_transport_retries_exceeded`): when the trace shows the connection's retries ran out
/// with its data unacknowledged at the end (not stalled there with the timer disabled: no
/// expiry comes), or its acknowledgement came after that expiry.
pub fn retries_exceeded(c: &gbn::ConnStats) -> u64 {
    u64::from(c.retries_ran_out_at_end == Some(true) || c.retries_exhausted_by_ns.is_some())
}

impl Report {
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        let checked: usize = self.hosts.iter().map(|h| h.checks.len()).sum();
        let unchecked: usize = self.hosts.iter().map(|h| h.not_checked.len()).sum();
        let _ = writeln!(
            out,
            "counters: {checked} compared with the trace, {} inconsistent, {unchecked} not checked",
            self.problems()
        );
        for h in &self.hosts {
            let nic = h.nic.as_deref().unwrap_or("?");
            if let Some(why) = &h.skipped {
                let _ = writeln!(out, "  {} ({nic}): {why}", h.host.name());
            }
            for c in h.checks.iter().filter(|c| !c.consistent) {
                let _ = writeln!(out, "  {} ({nic}): {}", h.host.name(), c.message.as_deref().unwrap_or(""));
            }
        }
        for n in &self.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }

    pub fn problems(&self) -> usize {
        self.hosts.iter().flat_map(|h| &h.checks).filter(|c| !c.consistent).count()
    }

    /// The inconsistent counters as (host, vendor name).
    pub fn inconsistent(&self) -> Vec<(Role, &str)> {
        self.hosts
            .iter()
            .flat_map(|h| h.checks.iter().filter(|c| !c.consistent).map(move |c| (h.host, c.name.as_str())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// irdma's ip4* counters see only IPv4 frames, its ip6* only IPv6: on a host whose
    /// RoCE runs over IPv6, ip4InPkts stays 0 and is consistent, RxUDP counts all.
    #[test]
    fn ip_version_counters_count_their_own_frames() {
        let mut d = Derived::default();
        for _ in 0..5 {
            d.add_frames(Role::Responder, Quantity::FramesReceived, IpScope::V6);
        }
        d.add_frames(Role::Responder, Quantity::FramesReceived, IpScope::V4);
        let (no_replay, retries_unknown) = (None, None);
        let basis =
            Basis { role: Role::Responder, derived: &d, no_replay, retries_unknown, missing: 0, rp: None, discards: 0 };
        let trace = |name: &str| basis.expect(name, quantity_of(name).unwrap()).unwrap().trace;
        assert_eq!((trace("ip4InPkts"), trace("ip6InPkts"), trace("RxUDP"), trace("port_rcv_packets")), (1, 5, 6, 6));
        assert_eq!(IpScope::of_counter("ip6InDiscards"), IpScope::V6);
        let m = mismatch_message("ip6InPkts", 5, 0, Quantity::FramesReceived);
        assert_eq!(m, "ip6InPkts counted 5 while 0 IPv6 frames were received (trace)");
        assert_eq!(IpScope::of_counter("InRdmaReads"), IpScope::Any);
    }

    #[test]
    fn every_vendor_name_maps_once() {
        let mut names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), NAMES.len());
        assert_eq!(quantity_of("cnpSent"), Some(Quantity::CnpsSent));
        assert_eq!(quantity_of("np_cnp_sent"), Some(Quantity::CnpsSent));
        assert!(quantity_of("rx_discards_phy").is_none());
    }

    #[test]
    fn messages_read_like_the_paper() {
        assert_eq!(mismatch_message("cnpSent", 0, 12, Quantity::CnpsSent), "cnpSent unchanged while 12 CNPs were sent");
        assert!(mismatch_message("port_rcv_packets", 9, 10, Quantity::FramesReceived).contains("counted 9 while 10"));
    }
}
