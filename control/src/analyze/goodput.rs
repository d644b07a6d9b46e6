//! Goodput and message completion times per connection, from the trace alone (Lumina
//! §3.2: the traffic generator reports both; here they are re-derived from the packets).
//!
//! A message is what the requester's first transmissions say: WRITE/SEND from a First or
//! Only opcode to the Last or Only one (bytes: the RETH DMA length, else the payloads
//! without pad), READ one request (its PSN span and DMA length). It completes when the
//! requester has everything up to its last PSN acknowledged: an ACK naming it, a NAK
//! naming a later PSN, or — READ — its last response arriving in order.
//!
//! The traffic generator measures at the hosts (docs/formats.md §4.8): a message's
//! completion time runs from its post to its completion, goodput is completed bytes × 8
//! ÷ (last completion − first post). The trace sees switch timestamps instead:
//! - completion = when the completing ACK/response passed the switch (the host gets it
//!   one switch transit and one link later);
//! - post is not on the wire. It is estimated as the generator posts: the first
//!   `tx-depth` messages at the start of the run (≈ the run's first packet at the switch,
//!   one serialisation and one link after the start), each later one when the message
//!   `tx-depth` before it completes — on its own QP, or with barrier sync when the whole
//!   round completed on every QP. Barrier sync is taken from the configuration
//!   (`barrier-sync`); without one it is inferred: every QP's round r starts after every
//!   QP's round r − 1.
//!   The estimate is never later than the message's first packet.
//!
//! So a trace MCT is shorter than the host's by the switch-to-host delay of the
//! completion minus that of the posting completion — about zero for later messages, and
//! under a µs (switch transit + link + serialisation) for the first `tx-depth` ones.

use std::cmp::Reverse;

use trace::record::{flag, Kind, Record};
use wire::psn;

use super::conn::{is_data, unknown_verb_note, Connection, Role};
use super::context::Verb;
use super::transport::{delivered, ends_message, path_mtu, read_span, starts_message, SwitchClock};
use super::unseen::Since;
use super::{render_capped, Input, RENDER_LINES};

#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    /// Every connection's messages together.
    pub overall: Totals,
    pub connections: Vec<ConnGoodput>,
    /// How posts were estimated: `per-qp` or `barrier`.
    pub posting: Posting,
    /// `posting` came from the configuration's `barrier-sync`, not inferred from the trace.
    pub posting_configured: bool,
    /// Messages outstanding per QP (configuration `tx-depth`, else 1).
    pub tx_depth: u32,
    pub notes: Vec<String>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Posting {
    #[default]
    PerQp,
    Barrier,
}

#[derive(Debug, Default, serde::Serialize)]
pub struct ConnGoodput {
    pub conn: u32,
    #[serde(flatten)]
    pub totals: Totals,
    pub per_message: Vec<Message>,
}

/// A set of messages (a connection's, or all of them) summed up.
#[derive(Debug, Default, serde::Serialize)]
pub struct Totals {
    /// Messages whose first transmission is in the trace.
    pub messages: u64,
    pub completed: u64,
    /// Messages not completed whose completion may be in a mirror copy missing from the
    /// trace (one is missing after their first packet).
    pub completion_unseen: u64,
    /// Bytes of the completed messages.
    pub bytes: u64,
    /// Completed bytes × 8 ÷ (last completion − the run's first post, estimated), Gb/s.
    pub goodput_gbps: Option<f64>,
    pub mct_ns: Summary,
}

impl Totals {
    fn of<'m>(msgs: impl Iterator<Item = &'m Message> + Clone, run_start: Option<u64>) -> Totals {
        let done = msgs.clone().filter(|m| m.completed_ns.is_some());
        let bytes = done.clone().map(|m| m.bytes).sum();
        let last = done.clone().filter_map(|m| m.completed_ns).max();
        let goodput_gbps = match (run_start, last) {
            (Some(a), Some(b)) if b > a => Some(bytes as f64 * 8.0 / (b - a) as f64),
            _ => None,
        };
        Totals {
            messages: msgs.clone().count() as u64,
            completed: done.clone().count() as u64,
            completion_unseen: msgs.filter(|m| m.completion_unseen).count() as u64,
            bytes,
            goodput_gbps,
            mct_ns: Summary::of(done.filter_map(|m| m.mct_ns).collect()),
        }
    }
}

/// The completed messages' completion times, ns. Median and 99th percentile by nearest
/// rank (the lower median of an even count), so each is an observed time.
#[derive(Debug, Default, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Summary {
    pub min: Option<u64>,
    pub median: Option<u64>,
    pub p99: Option<u64>,
    pub mean: Option<f64>,
    pub max: Option<u64>,
}

impl Summary {
    fn of(mut mcts: Vec<u64>) -> Summary {
        mcts.sort_unstable();
        let n = mcts.len();
        let rank = |q: usize| mcts.get((n * q).div_ceil(100).max(1) - 1).copied();
        Summary {
            min: mcts.first().copied(),
            median: mcts.get(n.saturating_sub(1) / 2).copied(),
            p99: rank(99),
            mean: (n > 0).then(|| mcts.iter().sum::<u64>() as f64 / n as f64),
            max: mcts.last().copied(),
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Message {
    pub first_psn: u32,
    /// Unknown until the Last/Only packet's first transmission is seen.
    pub last_psn: Option<u32>,
    pub bytes: u64,
    /// Switch timestamp of the message's first packet (first transmission); every time
    /// here is the 48-bit switch clock unwrapped over the trace.
    pub first_packet_ns: u64,
    /// Estimated post time on the switch clock (see the module documentation).
    pub posted_ns: u64,
    /// Switch timestamp of the packet that completed it.
    pub completed_ns: Option<u64>,
    pub mct_ns: Option<u64>,
    /// Not completed, and a copy is missing from the trace after its first packet: the
    /// completion may be in it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub completion_unseen: bool,
    /// Trace order of its first packet.
    #[serde(skip)]
    first_order: u64,
}

pub fn analyze(input: &Input<'_>) -> Report {
    let config = input.ctx.config.as_ref();
    let mtu = path_mtu(config, input.view.records).unwrap_or(1);
    let known = input.conns.list.iter().filter_map(|c| Some((c, c.verb?)));
    let mut per_conn: Vec<(u32, Vec<Message>)> =
        known.map(|(c, verb)| (c.id, Tracker::run(input, c, verb, mtu))).collect();
    let unknown = input.conns.list.len() - per_conn.len();
    let depth = config.and_then(|c| c.tx_depth).unwrap_or(1).max(1);
    let lists = lists_of(&per_conn);
    let configured = config.and_then(|c| c.barrier_sync);
    let barrier = configured.unwrap_or_else(|| is_barrier(&lists, depth as usize));
    let posting = if barrier { Posting::Barrier } else { Posting::PerQp };
    let posts = estimate_posts(&lists, depth as usize, posting);
    for ((_, msgs), posts) in per_conn.iter_mut().zip(posts) {
        for (m, p) in msgs.iter_mut().zip(posts) {
            m.posted_ns = p;
            m.mct_ns = m.completed_ns.map(|c| c.saturating_sub(p));
        }
    }
    let run_start = run_start(&lists_of(&per_conn));
    let overall = Totals::of(per_conn.iter().flat_map(|(_, msgs)| msgs), run_start);
    let connections = per_conn
        .into_iter()
        .map(|(conn, msgs)| ConnGoodput { conn, totals: Totals::of(msgs.iter(), run_start), per_message: msgs })
        .collect();
    let mut notes = Vec::new();
    if unknown > 0 {
        notes.push(unknown_verb_note(unknown, "no messages"));
    }
    Report { overall, connections, posting, posting_configured: configured.is_some(), tx_depth: depth, notes }
}

fn lists_of(per_conn: &[(u32, Vec<Message>)]) -> Vec<&[Message]> {
    per_conn.iter().map(|(_, m)| m.as_slice()).collect()
}

/// The first post of the run: its first message's first packet at the switch.
fn run_start(lists: &[&[Message]]) -> Option<u64> {
    lists.iter().filter_map(|m| m.first()).map(|m| m.first_packet_ns).min()
}

/// Barrier sync: with two or more QPs, every round (after the first) starts on every QP
/// only after the previous round completed on every QP.
fn is_barrier(lists: &[&[Message]], depth: usize) -> bool {
    if lists.iter().filter(|m| !m.is_empty()).count() < 2 {
        return false;
    }
    let rounds = lists.iter().map(|m| m.len().div_ceil(depth)).max().unwrap_or(0);
    let mut boundaries = 0;
    for r in 1..rounds {
        let (Some(done), Some(start)) = (round_done(lists, depth, r - 1), round_start(lists, depth, r)) else {
            continue;
        };
        if start < done {
            return false;
        }
        boundaries += 1;
    }
    boundaries > 0
}

/// When round `r` had completed on every QP (messages never completed are skipped: a
/// failed QP leaves the round).
fn round_done(lists: &[&[Message]], depth: usize, r: usize) -> Option<u64> {
    lists.iter().flat_map(|m| m.iter().skip(r * depth).take(depth)).filter_map(|m| m.completed_ns).max()
}

fn round_start(lists: &[&[Message]], depth: usize, r: usize) -> Option<u64> {
    lists.iter().flat_map(|m| m.iter().skip(r * depth).take(depth)).map(|m| m.first_packet_ns).min()
}

/// Estimated post time of every message (module documentation).
fn estimate_posts(lists: &[&[Message]], depth: usize, posting: Posting) -> Vec<Vec<u64>> {
    let start = run_start(lists).unwrap_or(0);
    lists
        .iter()
        .map(|msgs| {
            msgs.iter()
                .enumerate()
                .map(|(k, m)| {
                    let post = if k < depth {
                        Some(start)
                    } else {
                        match posting {
                            Posting::PerQp => msgs[k - depth].completed_ns,
                            Posting::Barrier => round_done(lists, depth, k / depth - 1),
                        }
                    };
                    post.map_or(m.first_packet_ns, |p| p.min(m.first_packet_ns))
                })
                .collect()
        })
        .collect()
}

/// Finds one connection's messages and when each completed.
struct Tracker {
    verb: Verb,
    mtu: u32,
    /// Next PSN never sent before (first transmissions start here).
    hi: Option<u32>,
    msgs: Vec<Message>,
    /// A WRITE/SEND message whose last packet has not been sent yet.
    open: bool,
    /// Its bytes come from the RETH rather than from the payloads.
    bytes_from_reth: bool,
    una: u32,
    read_expect: u32,
    next_incomplete: usize,
    /// Acknowledgement points (una, time) reached while the oldest incomplete message's
    /// end is unknown (its LAST copy missing): once its end is known, it completed at the
    /// first of them past it.
    held: Vec<(u32, u64)>,
    clock: SwitchClock,
    /// READ: the PSN of the previous response copy.
    read_last: u32,
}

/// At most this many acknowledgement points are held for a message whose end is unknown.
const HELD_CAP: usize = 64;

impl Tracker {
    fn run(input: &Input<'_>, c: &Connection, verb: Verb, mtu: u32) -> Vec<Message> {
        let records = input.view.records;
        let first = c.packets.iter().find(|&&(_, to)| to == Role::Responder).map(|&(i, _)| records[i as usize].psn());
        let Some(ipsn) = c.ipsn.or(first) else { return Vec::new() };
        let mut t = Tracker {
            verb,
            mtu,
            hi: None,
            msgs: Vec::new(),
            open: false,
            bytes_from_reth: false,
            una: ipsn,
            read_expect: ipsn,
            next_incomplete: 0,
            held: Vec::new(),
            clock: SwitchClock::of(records),
            read_last: psn::sub(ipsn, 1),
        };
        let mut since = Since::default();
        for &(i, to) in &c.packets {
            let r = &records[i as usize];
            match to {
                Role::Responder if r.kind() == Kind::Request => t.on_request(r),
                Role::Requester => {
                    let gap = since.step(&input.conns.unseen, r);
                    if r.kind() == Kind::Response {
                        t.on_response(r, gap);
                    }
                }
                _ => {}
            }
        }
        for m in t.msgs.iter_mut().filter(|m| m.completed_ns.is_none()) {
            m.completion_unseen = input.conns.unseen.between(Some(m.first_order), u64::MAX);
        }
        t.msgs
    }

    fn on_request(&mut self, r: &Record) {
        if self.hi.is_some_and(|hi| psn::lt(r.psn(), hi)) {
            return; // a retransmission
        }
        let op = r.opcode();
        match self.verb {
            Verb::Read if op == 0x0c => {
                let span = read_span(r, self.mtu);
                self.push(r, Some(psn::add(r.psn(), span - 1)), u64::from(r.dma_len()));
                self.hi = Some(psn::add(r.psn(), span));
            }
            Verb::Write | Verb::Send if op < 0x20 && is_data(r, self.verb) => {
                self.on_data(r);
                self.hi = Some(psn::add(r.psn(), 1));
            }
            _ => {}
        }
    }

    fn on_data(&mut self, r: &Record) {
        let op = r.opcode();
        if starts_message(op) {
            if let Some(m) = self.msgs.last_mut().filter(|_| self.open) {
                // Its last packet's copy is missing from the trace: it ended before this
                // one began, or its completion would hold up every later message's.
                m.last_psn = Some(psn::sub(r.psn(), 1));
                for (una, ts) in std::mem::take(&mut self.held) {
                    self.complete(una, ts);
                }
            }
            self.push(r, None, u64::from(r.dma_len()));
            self.open = true;
            self.bytes_from_reth = r.has(flag::RETH);
        }
        let Some(m) = self.msgs.last_mut().filter(|_| self.open) else {
            return; // the trace starts mid-message
        };
        if !self.bytes_from_reth {
            let pad = u64::from((r.bth_flags >> 4) & 0x3);
            m.bytes += u64::from(r.payload_len).saturating_sub(pad);
        }
        if ends_message(op) {
            m.last_psn = Some(r.psn());
            self.open = false;
        }
    }

    fn push(&mut self, r: &Record, last_psn: Option<u32>, bytes: u64) {
        let ts = self.clock.ns(r);
        self.msgs.push(Message {
            first_psn: r.psn(),
            last_psn,
            bytes,
            first_packet_ns: ts,
            posted_ns: ts,
            completed_ns: None,
            mct_ns: None,
            completion_unseen: false,
            first_order: r.seq(),
        });
    }

    /// A response; `gap` copies are missing since the previous one.
    fn on_response(&mut self, r: &Record, gap: u64) {
        let ts = self.clock.ns(r);
        let read_data = is_data(r, Verb::Read);
        // READ responses from the one the requester awaits, where as many copies are
        // missing: they arrived unseen, if they followed the previous response seen, or
        // if `r` is resent (a go-back resends from what the requester awaits).
        let skipped = psn::distance(self.read_expect, r.psn()) as u64;
        let follows = self.read_expect == psn::add(self.read_last, 1) || psn::le(r.psn(), self.read_last);
        let unseen = read_data && follows && psn::gt(r.psn(), self.read_expect) && skipped <= gap;
        if read_data {
            self.read_last = r.psn();
        }
        if !delivered(r) {
            return;
        }
        if r.opcode() == wire::bth::Opcode::RC_ACK.0 && r.has(flag::AETH) {
            match r.syndrome() >> 5 {
                0b00 => self.progress(psn::add(r.psn(), 1), ts),
                // A responder NAKs PSN p, for a sequence error, an error or with RNR, only
                // having executed every packet before it: the NAK acknowledges them (IBA
                // 9.7.5.1; a requester completes those work requests on it).
                0b01 | 0b11 => self.progress(r.psn(), ts),
                _ => {}
            }
        } else if read_data && (r.psn() == self.read_expect || unseen) {
            self.read_expect = psn::add(r.psn(), 1);
            self.progress(self.read_expect, ts);
        }
    }

    /// Everything before `una` is acknowledged: complete the messages it covers.
    fn progress(&mut self, una: u32, ts: u64) {
        if psn::gt(una, self.una) {
            self.una = una;
        }
        self.complete(self.una, ts);
    }

    /// Completes, at `ts`, the messages that end before `una`.
    fn complete(&mut self, una: u32, ts: u64) {
        while let Some(m) = self.msgs.get_mut(self.next_incomplete) {
            match m.last_psn {
                Some(last) if psn::gt(una, last) => {
                    m.completed_ns = Some(ts);
                    self.next_incomplete += 1;
                    self.held.clear();
                }
                Some(_) => break,
                None => {
                    if self.held.len() < HELD_CAP && self.held.last().is_none_or(|&(u, _)| psn::gt(una, u)) {
                        self.held.push((una, ts));
                    }
                    break;
                }
            }
        }
    }
}

impl Totals {
    /// One terminal line: counts, goodput and completion times.
    fn line(&self) -> String {
        let gbps = self.goodput_gbps.map_or("-".to_string(), |g| format!("{g:.3} Gb/s"));
        let mct = &self.mct_ns;
        let us = |v: Option<u64>| v.map_or("-".to_string(), |v| format!("{:.2}", v as f64 / 1e3));
        let mean = mct.mean.map_or("-".to_string(), |v| format!("{:.2}", v / 1e3));
        let unseen = match self.completion_unseen {
            0 => String::new(),
            n => format!(" ({n} more may have: their completion may be in a missing copy)"),
        };
        format!(
            "{}/{} messages completed{unseen}, {} bytes, {gbps}, MCT µs min {} median {} p99 {} max {} mean {mean}",
            self.completed,
            self.messages,
            self.bytes,
            us(mct.min),
            us(mct.median),
            us(mct.p99),
            us(mct.max),
        )
    }
}

impl Report {
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        let how = if self.posting_configured { "configured" } else { "inferred" };
        let posting = match self.posting {
            Posting::PerQp => format!("per QP ({how})"),
            Posting::Barrier => format!("barrier sync ({how})"),
        };
        let _ = writeln!(
            out,
            "goodput: {} connections, posts estimated {posting}, tx-depth {}",
            self.connections.len(),
            self.tx_depth
        );
        let _ = writeln!(out, "  all: {}", self.overall.line());
        let mut shown: Vec<&ConnGoodput> = self.connections.iter().collect();
        if shown.len() > RENDER_LINES {
            // Too many to read: the ones to look at first, those that left messages
            // undone, then the slowest.
            let _ = writeln!(out, "  connections with messages not completed first, then by p99 MCT:");
            shown.sort_by_key(|c| {
                (Reverse(c.totals.messages - c.totals.completed), Reverse(c.totals.mct_ns.p99), c.conn)
            });
        }
        render_capped(out, shown, |out, c| {
            let _ = writeln!(out, "  conn {}: {}", c.conn, c.totals.line());
        });
        for n in &self.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }

    /// Goodput and completion times are measurements, never problems.
    pub fn problems(&self) -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tracker of one connection from PSN 10, MTU 1024.
    fn tracker(verb: Verb, clock: SwitchClock) -> Tracker {
        Tracker {
            verb,
            mtu: 1024,
            hi: None,
            msgs: Vec::new(),
            open: false,
            bytes_from_reth: false,
            una: 10,
            read_expect: 10,
            next_incomplete: 0,
            held: Vec::new(),
            clock,
            read_last: 9,
        }
    }

    fn msg(first_packet_ns: u64, completed_ns: Option<u64>) -> Message {
        Message {
            first_psn: 0,
            last_psn: Some(0),
            bytes: 1,
            first_packet_ns,
            posted_ns: 0,
            completed_ns,
            mct_ns: None,
            completion_unseen: false,
            first_order: 0,
        }
    }

    #[test]
    fn an_rnr_nak_completes_the_messages_before_its_psn() {
        use wire::bth::Opcode;
        let at = |mut r: Record, ns: u64| {
            r.switch_ts_ns = ns;
            r
        };
        let send = |psn, ns| {
            at(Record::default().with_kind(Kind::Request).with_opcode(Opcode::RC_SEND_ONLY.0).with_psn(psn), ns)
        };
        let ack = |syndrome, psn, ns| {
            at(
                Record::default()
                    .with_kind(Kind::Response)
                    .with_opcode(Opcode::RC_ACK.0)
                    .with_psn(psn)
                    .with_aeth(syndrome, 0),
                ns,
            )
        };
        // Two one-packet SENDs; the second finds no receive WQE (RNR NAK, timer code 1),
        // then is resent and acknowledged.
        let records = [send(10, 0), send(11, 10), ack(0b001_00001, 11, 100), send(11, 400), ack(0, 11, 500)];
        let mut t = tracker(Verb::Send, SwitchClock::of(&records));
        for r in &records {
            match r.kind() {
                Kind::Request => t.on_request(r),
                _ => t.on_response(r, 0),
            }
        }
        let done: Vec<Option<u64>> = t.msgs.iter().map(|m| m.completed_ns).collect();
        assert_eq!(done, [Some(100), Some(500)]);
    }

    #[test]
    fn posts_follow_the_generator() {
        // Two QPs, tx-depth 1: QP 0 finishes its first message at 10, QP 1 at 30, and
        // both start their second only after 30.
        let a = [msg(1, Some(10)), msg(31, Some(40))];
        let b = [msg(2, Some(30)), msg(32, Some(45))];
        let lists: Vec<&[Message]> = vec![&a, &b];
        assert!(is_barrier(&lists, 1));
        assert_eq!(estimate_posts(&lists, 1, Posting::PerQp), vec![vec![1, 10], vec![1, 30]]);
        assert_eq!(estimate_posts(&lists, 1, Posting::Barrier), vec![vec![1, 30], vec![1, 30]]);
        // QP 0 starting its second message at 11, before QP 1 is done: no barrier, and a
        // post is never later than the message's first packet.
        let early = [msg(1, Some(10)), msg(11, Some(20))];
        let lists: Vec<&[Message]> = vec![&early, &b];
        assert!(!is_barrier(&lists, 1));
        assert_eq!(estimate_posts(&lists, 1, Posting::Barrier), vec![vec![1, 11], vec![1, 30]]);
    }

    #[test]
    fn percentiles_are_observed_times() {
        let s = Summary::of((1..=200).rev().collect());
        assert_eq!((s.min, s.median, s.p99, s.max), (Some(1), Some(100), Some(198), Some(200)));
        assert_eq!(s.mean, Some(100.5));
        // Nearest rank: with fewer than 100 times the 99th percentile is the largest.
        let s = Summary::of(vec![7, 3]);
        assert_eq!((s.min, s.median, s.p99, s.max), (Some(3), Some(3), Some(7), Some(7)));
        assert_eq!(Summary::of(Vec::new()), Summary::default());
    }

    #[test]
    fn totals_span_every_connection() {
        let done = |first, mct: u64, bytes| Message {
            bytes,
            completed_ns: Some(first + mct),
            mct_ns: Some(mct),
            ..msg(first, None)
        };
        let a = [done(100, 50, 1000), msg(400, None)];
        let b = [done(110, 90, 3000), done(300, 10, 1000)];
        let o = Totals::of(a.iter().chain(&b), Some(100));
        assert_eq!((o.messages, o.completed, o.bytes), (4, 3, 5000));
        // 5000 bytes from the first post (100) to the last completion (310).
        assert_eq!(o.goodput_gbps, Some(5000.0 * 8.0 / 210.0));
        assert_eq!((o.mct_ns.min, o.mct_ns.median, o.mct_ns.max), (Some(10), Some(50), Some(90)));
    }

    #[test]
    fn a_long_summary_shows_the_worst_connections() {
        let conn = |conn: u32, completed, p99| ConnGoodput {
            conn,
            totals: Totals {
                messages: 10,
                completed,
                mct_ns: Summary { p99: Some(p99), ..Summary::default() },
                ..Totals::default()
            },
            ..ConnGoodput::default()
        };
        let mut connections: Vec<ConnGoodput> = (0..100).map(|c| conn(c, 10, 1000 + u64::from(c))).collect();
        connections[42].totals.completed = 7;
        let report = Report { connections, ..Report::default() };
        let mut out = String::new();
        report.render(&mut out);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("goodput: 100 connections"), "{out}");
        assert!(lines[1].starts_with("  all: "), "{out}");
        assert!(lines[3].starts_with("  conn 42: 7/10 messages completed"), "{out}");
        assert!(lines[4].starts_with("  conn 99: ") && lines[5].starts_with("  conn 98: "), "{out}");
        assert_eq!(lines.len(), 3 + RENDER_LINES + 1, "{out}");
        assert_eq!(lines.last(), Some(&"  ... 80 more in report.json"));
    }

    #[test]
    fn a_missing_last_copy_does_not_hold_up_later_messages() {
        let rec = |op: u8, p: u32, ts: u64| {
            let mut r = Record::default().with_opcode(op).with_psn(p).with_kind(Kind::of(Some(op)));
            (r.flags, r.switch_ts_ns, r.payload_len) = (r.flags | flag::MIRRORED, ts, 1024);
            r
        };
        let mut t = tracker(Verb::Write, SwitchClock::default());
        t.on_request(&rec(0x06, 10, 100).with_reth(2048)); // WRITE FIRST; its LAST (11) has no copy
        t.on_request(&rec(0x0a, 12, 300).with_reth(1024)); // WRITE ONLY
        t.on_response(&rec(0x11, 12, 900).with_aeth(0x1f, 2), 0); // ACK up to 12
        let got: Vec<_> = t.msgs.iter().map(|m| (m.first_psn, m.last_psn, m.completed_ns)).collect();
        assert_eq!(got, [(10, Some(11), Some(900)), (12, Some(12), Some(900))]);
        // tx-depth 1: the ACK of 11 comes before the next message starts; the first message
        // completed then, not at the next ACK.
        let mut t = tracker(Verb::Write, SwitchClock::default());
        t.on_request(&rec(0x06, 10, 100).with_reth(2048));
        t.on_response(&rec(0x11, 11, 500).with_aeth(0x1f, 1), 0); // ACK up to 11
        t.on_request(&rec(0x0a, 12, 600).with_reth(1024));
        t.on_response(&rec(0x11, 12, 900).with_aeth(0x1f, 2), 0);
        let got: Vec<_> = t.msgs.iter().map(|m| (m.first_psn, m.last_psn, m.completed_ns)).collect();
        assert_eq!(got, [(10, Some(11), Some(500)), (12, Some(12), Some(900))]);
    }

    #[test]
    fn opcodes_bound_messages() {
        for op in [0x00, 0x04, 0x06, 0x0a] {
            assert!(starts_message(op));
        }
        for op in [0x02, 0x04, 0x08, 0x0a, 0x16] {
            assert!(ends_message(op));
        }
        assert!(!starts_message(0x01) && !ends_message(0x07));
    }
}
