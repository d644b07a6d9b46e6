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

use trace::record::{flag, Kind, Record};
use wire::psn;

use super::conn::{is_data, unknown_verb_note, Connection, Role};
use super::context::Verb;
use super::transport::{delivered, ends_message, path_mtu, read_span, starts_message, SwitchClock};
use super::Input;

#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
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
    /// Messages whose first transmission is in the trace.
    pub messages: u64,
    pub completed: u64,
    /// Bytes of the completed messages.
    pub bytes: u64,
    /// Completed bytes × 8 ÷ (last completion − estimated first post), Gb/s.
    pub goodput_gbps: Option<f64>,
    pub mct_ns: Summary,
    pub per_message: Vec<Message>,
}

/// Min / mean / max of the completed messages' completion times, ns.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct Summary {
    pub min: Option<u64>,
    pub mean: Option<f64>,
    pub max: Option<u64>,
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
    let connections = per_conn.into_iter().map(|(conn, msgs)| summarise(conn, msgs, run_start)).collect();
    let mut notes = Vec::new();
    if unknown > 0 {
        notes.push(unknown_verb_note(unknown, "no messages"));
    }
    Report { connections, posting, posting_configured: configured.is_some(), tx_depth: depth, notes }
}

fn lists_of(per_conn: &[(u32, Vec<Message>)]) -> Vec<&[Message]> {
    per_conn.iter().map(|(_, m)| m.as_slice()).collect()
}

fn summarise(conn: u32, msgs: Vec<Message>, run_start: Option<u64>) -> ConnGoodput {
    let done: Vec<&Message> = msgs.iter().filter(|m| m.completed_ns.is_some()).collect();
    let bytes = done.iter().map(|m| m.bytes).sum();
    let last = done.iter().filter_map(|m| m.completed_ns).max();
    let goodput_gbps = match (run_start, last) {
        (Some(a), Some(b)) if b > a => Some(bytes as f64 * 8.0 / (b - a) as f64),
        _ => None,
    };
    let mcts: Vec<u64> = done.iter().filter_map(|m| m.mct_ns).collect();
    let mct_ns = Summary {
        min: mcts.iter().min().copied(),
        mean: (!mcts.is_empty()).then(|| mcts.iter().sum::<u64>() as f64 / mcts.len() as f64),
        max: mcts.iter().max().copied(),
    };
    ConnGoodput {
        conn,
        messages: msgs.len() as u64,
        completed: done.len() as u64,
        bytes,
        goodput_gbps,
        mct_ns,
        per_message: msgs,
    }
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
    clock: SwitchClock,
}

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
            clock: SwitchClock::of(records),
        };
        for &(i, to) in &c.packets {
            let r = &records[i as usize];
            match to {
                Role::Responder if r.kind() == Kind::Request => t.on_request(r),
                Role::Requester if r.kind() == Kind::Response && delivered(r) => t.on_response(r),
                _ => {}
            }
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
        });
    }

    fn on_response(&mut self, r: &Record) {
        let ts = self.clock.ns(r);
        if r.opcode() == wire::bth::Opcode::RC_ACK.0 && r.has(flag::AETH) {
            match r.syndrome() >> 5 {
                0b00 => self.progress(psn::add(r.psn(), 1), ts),
                // A NAK-sequence-error acknowledges everything before its PSN.
                0b11 if r.syndrome() & 0x1f == 0 => self.progress(r.psn(), ts),
                _ => {}
            }
        } else if is_data(r, Verb::Read) && r.psn() == self.read_expect {
            self.read_expect = psn::add(r.psn(), 1);
            self.progress(self.read_expect, ts);
        }
    }

    /// Everything before `una` is acknowledged: complete the messages it covers.
    fn progress(&mut self, una: u32, ts: u64) {
        if psn::gt(una, self.una) {
            self.una = una;
        }
        while let Some(m) = self.msgs.get_mut(self.next_incomplete) {
            match m.last_psn {
                Some(last) if psn::gt(self.una, last) => {
                    m.completed_ns = Some(ts);
                    self.next_incomplete += 1;
                }
                _ => break,
            }
        }
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
        for c in &self.connections {
            let gbps = c.goodput_gbps.map_or("-".to_string(), |g| format!("{g:.3} Gb/s"));
            let us = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.2}", v / 1e3));
            let _ = writeln!(
                out,
                "  conn {}: {}/{} messages completed, {} bytes, {gbps}, MCT µs min {} mean {} max {}",
                c.conn,
                c.completed,
                c.messages,
                c.bytes,
                us(c.mct_ns.min.map(|v| v as f64)),
                us(c.mct_ns.mean),
                us(c.mct_ns.max.map(|v| v as f64)),
            );
        }
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

    fn msg(first_packet_ns: u64, completed_ns: Option<u64>) -> Message {
        Message { first_psn: 0, last_psn: Some(0), bytes: 1, first_packet_ns, posted_ns: 0, completed_ns, mct_ns: None }
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
