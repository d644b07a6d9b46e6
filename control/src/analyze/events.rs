//! The injected events the trace shows, keyed as Lumina's test configuration names them
//! (Lumina §3.3: relative QPN and PSN, and ITER), against the `data-pkt-events` the
//! configuration asked for. An event that never happened (an ITER no retransmission
//! round reached, a PSN past the last) leaves a test that silently did not test what it
//! meant to; the rig's and the switch's tables do not tell, the trace does.
//!
//! ITER (§3.3 "Express retransmission behaviors") counts a connection's rounds of data
//! transmission: 1 for the first, and each packet whose PSN is not after the one before
//! (a go-back) starts the next. A copy missing before a packet may have been such a
//! go-back, so from the first missing copy on a connection's ITER is a lower bound
//! (`iter_certain: false`): each descent the trace shows stands for at least one among the
//! packets the switch saw, since a run of packets in increasing PSN order has none.

use rustc_hash::FxHashMap;
use trace::record::Record;
use wire::mirror::Event;
use wire::psn;

use super::conn::{is_data, Connection, Iter};
use super::unseen::Since;
use super::{plural, render_capped, Input};

/// One `data-pkt-events` entry of the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Intent {
    /// The connection, from 1 in QP info order.
    pub qpn: u32,
    /// From 1 at the connection's initial PSN.
    pub psn: u32,
    #[serde(rename = "type")]
    pub kind: EventKind,
    pub iter: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    Drop,
    Ecn,
    Corrupt,
}

impl EventKind {
    /// Lumina's names (`bit-error` is its code's name for a corruption).
    pub fn parse(name: &str) -> Option<EventKind> {
        match name.to_ascii_lowercase().as_str() {
            "drop" => Some(EventKind::Drop),
            "ecn" => Some(EventKind::Ecn),
            "corrupt" | "bit-error" => Some(EventKind::Corrupt),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            EventKind::Drop => "drop",
            EventKind::Ecn => "ecn",
            EventKind::Corrupt => "corrupt",
        }
    }

    fn of(e: Event) -> Option<EventKind> {
        match e {
            Event::Drop => Some(EventKind::Drop),
            Event::Ecn => Some(EventKind::Ecn),
            Event::Corrupt => Some(EventKind::Corrupt),
            Event::None => None,
        }
    }
}

/// A mirrored copy that carries an event.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Seen {
    pub seq: u32,
    pub conn: u32,
    /// `conn` + 1, as the configuration counts QPs; null when the connections were not
    /// numbered from QP info (then the configuration's numbers cannot be told).
    pub qpn: Option<u32>,
    /// From 1 at the connection's initial PSN; null without one.
    pub psn: Option<u32>,
    pub wire_psn: u32,
    #[serde(rename = "type")]
    pub kind: EventKind,
    /// Null on a packet that is no data packet of its connection's verb.
    pub iter: Option<u32>,
    /// No copy is missing before it on its connection: `iter` is exact.
    pub iter_certain: bool,
    /// The configured event it is, if the trace tells.
    pub intent: Option<Intent>,
    /// Its ITER is a lower bound and several configured events may be it.
    pub undetermined: bool,
}

#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    pub seen: Vec<Seen>,
    /// `data-pkt-events` in the configuration; null without one.
    pub configured: Option<usize>,
    /// Configured events no copy shows (none is, or may be, that event): they did not
    /// happen — or, when `may_be_unseen`, their copy may be among the missing ones.
    pub never_seen: Vec<Intent>,
    pub may_be_unseen: bool,
    /// Events no configured one may be (with a configuration).
    pub unexpected: usize,
    pub notes: Vec<String>,
}

pub fn analyze(input: &Input<'_>) -> Report {
    let mut report = Report::default();
    let mut seen = Vec::new();
    for c in &input.conns.list {
        connection(input, c, &mut seen);
    }
    seen.sort_by_key(|&(order, _)| order);
    report.seen = seen.into_iter().map(|(_, s)| s).collect();
    let Some(intents) = input.ctx.config.as_ref().map(|c| &c.events) else {
        return report;
    };
    report.configured = Some(intents.len());
    if !input.conns.list.iter().all(|c| c.from_qp_info) {
        report.notes.push(
            "no QP info (switch_message_snapshot.yml): the configuration's QP numbers cannot be told, \
             so its events are not matched"
                .into(),
        );
        return report;
    }
    let (taken, possible) = match_intents(intents, &mut report.seen);
    report.unexpected = report.seen.iter().filter(|s| s.intent.is_none() && !s.undetermined).count();
    report.never_seen = (0..intents.len()).filter(|&k| !taken[k] && !possible[k]).map(|k| intents[k]).collect();
    report.may_be_unseen = input.conns.unseen.total() + input.ctx.lost_at_ends > 0;
    report
}

/// Gives each seen event the configured event it is, where the trace tells: an exact ITER
/// names one; an ITER that is only a lower bound names every configured event from it on
/// that no exact one took, and only one such candidate, shared with no other such event,
/// is taken as its own (else it is `undetermined`). Returns which configured events were
/// taken, and which an undetermined event may be. The configured events are looked up by
/// QP, PSN and type, so this is O(n) in the events but for one PSN's rounds.
fn match_intents(intents: &[Intent], seen: &mut [Seen]) -> (Vec<bool>, Vec<bool>) {
    let mut by_key: FxHashMap<(u32, u32, EventKind), Vec<usize>> = FxHashMap::default();
    for (k, i) in intents.iter().enumerate() {
        by_key.entry((i.qpn, i.psn, i.kind)).or_default().push(k);
    }
    let mut taken = vec![false; intents.len()];
    for s in seen.iter_mut().filter(|s| s.iter_certain) {
        let first = candidates(intents, &by_key, s, &taken).next();
        if let Some(k) = first {
            taken[k] = true;
            s.intent = Some(intents[k]);
        }
    }
    let mut claims = vec![0u32; intents.len()];
    for s in seen.iter().filter(|s| !s.iter_certain) {
        candidates(intents, &by_key, s, &taken).for_each(|k| claims[k] += 1);
    }
    for s in seen.iter_mut().filter(|s| !s.iter_certain) {
        let mut all = candidates(intents, &by_key, s, &taken);
        match (all.next(), all.next()) {
            (Some(k), None) if claims[k] == 1 => s.intent = Some(intents[k]),
            (Some(_), _) => s.undetermined = true,
            (None, _) => {}
        }
    }
    let possible = claims.iter().map(|&n| n > 0).collect();
    (taken, possible)
}

/// The configured events not yet taken that `s` may be: of its QP, PSN and type, and of
/// its ITER — or, when that is a lower bound, of any ITER from it on. An event on a packet
/// that is no data packet (no ITER) is none of them: Lumina injects on data packets.
fn candidates<'i>(
    intents: &'i [Intent],
    by_key: &'i FxHashMap<(u32, u32, EventKind), Vec<usize>>,
    s: &Seen,
    taken: &'i [bool],
) -> impl Iterator<Item = usize> + 'i {
    let (key, iter, exact) = (s.qpn.zip(s.psn).map(|(q, p)| (q, p, s.kind)), s.iter, s.iter_certain);
    let same = key.zip(iter).and_then(|(key, _)| by_key.get(&key)).map_or(&[][..], |v| v.as_slice());
    let iter = iter.unwrap_or(0);
    same.iter()
        .copied()
        .filter(move |&k| !taken[k] && if exact { intents[k].iter == iter } else { intents[k].iter >= iter })
}

/// The events on one connection's packets, ITER counted over its data packets.
fn connection(input: &Input<'_>, c: &Connection, out: &mut Vec<(u32, Seen)>) {
    let mut iter = c.ipsn.map(Iter::new);
    let mut since = Since::default();
    let mut certain = true;
    for &(i, _) in &c.packets {
        let r = &input.view.records[i as usize];
        let data = c.verb.is_some_and(|v| is_data(r, v));
        let round = if data {
            certain &= since.step(&input.conns.unseen, r) == 0;
            iter.as_mut().map(|it| it.observe(r.psn()))
        } else {
            None
        };
        if let Some(kind) = EventKind::of(r.event()) {
            out.push((i, seen(c, r, kind, round, certain)));
        }
    }
}

fn seen(c: &Connection, r: &Record, kind: EventKind, iter: Option<u32>, certain: bool) -> Seen {
    Seen {
        seq: r.wire_seq(),
        conn: c.id,
        qpn: c.from_qp_info.then_some(c.id + 1),
        psn: c.ipsn.map(|ipsn| psn::distance(ipsn, r.psn()) + 1),
        wire_psn: r.psn(),
        kind,
        iter,
        iter_certain: certain && iter.is_some(),
        intent: None,
        undetermined: false,
    }
}

impl Report {
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        let Some(configured) = self.configured else {
            if !self.seen.is_empty() {
                let _ = writeln!(out, "events: {} in the trace", self.seen.len());
            }
            return;
        };
        let _ = writeln!(
            out,
            "events: {} in the trace, {} configured, {} of them seen",
            self.seen.len(),
            configured,
            configured - self.never_seen.len()
        );
        for n in &self.notes {
            let _ = writeln!(out, "  note: {n}");
        }
        if !self.never_seen.is_empty() {
            let why = if self.may_be_unseen {
                "not in the trace (copies are missing: some may have happened unseen)"
            } else {
                "never happened: no packet of that QP had that PSN in that ITER round (ITER counts the QP's \
                 rounds of transmission, Lumina §3.3: 1 for the first, each go-back the next)"
            };
            let _ = writeln!(
                out,
                "  {} {why}",
                plural(self.never_seen.len() as u64, "configured event", "configured events")
            );
            render_capped(out, &self.never_seen, |out, i| {
                let _ = writeln!(out, "    qpn {} psn {} {} iter {}", i.qpn, i.psn, i.kind.name(), i.iter);
            });
        }
        if self.unexpected > 0 {
            let _ = writeln!(
                out,
                "  {} in the trace that the configuration does not name",
                plural(self.unexpected as u64, "event", "events")
            );
        }
    }
}
