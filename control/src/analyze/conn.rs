//! Per-QP connection tracking: which packets of the trace belong to which RC connection,
//! and which way each travels. Both directions are paired — requests go to the responder's
//! QPN, ACKs/NAKs/READ responses and the RP's CNPs to the requester's — from Lumina's QP
//! info (`switch_message_snapshot.yml`) when the run has it, else from the trace alone (a
//! response direction pairs with the request direction whose PSNs it acknowledges).
//! PSN arithmetic is 24-bit with wraparound throughout (`wire::psn`).
use std::net::IpAddr;

use rustc_hash::FxHashMap;
use trace::record::{flag, Kind, Record, RecordView};
use wire::psn;

use super::context::{QpInfo, Verb};
use super::unseen::Unseen;

/// One end of a connection: packets *to* it carry `qpn` and `ip` as destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct End {
    pub ip: IpAddr,
    pub qpn: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Requester,
    Responder,
}

impl Role {
    /// 0 for the requester, 1 for the responder: an index into per-end arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Role::Requester => "requester",
            Role::Responder => "responder",
        }
    }

    pub fn other(self) -> Role {
        match self {
            Role::Requester => Role::Responder,
            Role::Responder => Role::Requester,
        }
    }
}

/// One RC connection and its packets.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Connection {
    /// Index in [`Connections::list`]; QP info order when there is QP info.
    pub id: u32,
    pub requester: End,
    /// `None` when the trace has only the request direction and no QP info names it.
    pub responder: End,
    /// The requester's initial PSN, from QP info; else the first request PSN seen.
    pub ipsn: Option<u32>,
    /// Whether the pairing came from QP info (`true`) or was inferred from PSNs.
    pub from_qp_info: bool,
    /// The test's verb from the configuration, else this connection's own by its request
    /// opcodes (a trace may mix verbs); `None`: no request in the trace says.
    pub verb: Option<Verb>,
    /// Trace indices of its packets in trace order, with the role of the *receiving* end.
    #[serde(skip)]
    pub packets: Vec<(u32, Role)>,
}

impl Connection {
    pub fn end(&self, role: Role) -> End {
        match role {
            Role::Requester => self.requester,
            Role::Responder => self.responder,
        }
    }
    /// The role of the data sender for `verb`.
    pub fn data_sender(verb: Verb) -> Role {
        match verb {
            Verb::Read => Role::Responder,
            _ => Role::Requester,
        }
    }
}

#[derive(Debug, Default, serde::Serialize)]
pub struct Connections {
    pub list: Vec<Connection>,
    /// RoCE packets that belong to no connection (unknown destination QP).
    pub unassigned: u64,
    /// RoCE frames that are not mirrored copies (a dump host's own traffic): without a
    /// switch time or a seq they cannot be placed among the copies, so no connection
    /// holds them.
    pub unmirrored: u64,
    /// Mirrored copies in the trace (late ones too): none, and there is nothing to analyze.
    #[serde(skip)]
    pub copies: u64,
    /// Copies placed later than their seq (later than the reconstruction's reorder window:
    /// `late` issues), by record index: no connection holds them, and a late copy's seq
    /// counts as unseen where it belongs (the analyzers walk the trace in order, and at its
    /// place the packet went unseen). A copy whose corrupted seq lies below the trace's
    /// first (`before-start`) fills no gap: it is analyzed where it lies.
    #[serde(skip)]
    pub late: Vec<u32>,
    /// Per end (by [`Role::index`]), the largest frame forwarded to it: what a frame to
    /// that host whose copy is missing may have been (`analyze::egress`). Frames to a host
    /// are of a few kinds (to a WRITE requester only ACKs, NAKs and CNPs): the trace's
    /// largest, a data packet the other way, would make every missing copy a long queue.
    #[serde(skip)]
    pub max_frame_len: [u16; 2],
    /// Acknowledges whose AETH the snap length cut, analyzed as missing copies.
    pub cut_acknowledges: u64,
    /// The copies the trace lacks, which may hide any connection's packets.
    #[serde(skip)]
    pub unseen: Unseen,
}

impl Connections {
    /// Tracks every RoCE packet of `view` into connections.
    pub fn track(view: &RecordView<'_>, qp_info: &[QpInfo], verb: Option<Verb>) -> Connections {
        let mut list = if qp_info.is_empty() {
            infer(view)
        } else {
            qp_info.iter().enumerate().map(|(i, q)| from_qp_info(i as u32, q, verb)).collect()
        };
        let mut by_end: FxHashMap<End, (u32, Role)> = FxHashMap::default();
        for c in &list {
            by_end.insert(c.requester, (c.id, Role::Requester));
            by_end.insert(c.responder, (c.id, Role::Responder));
        }
        let (mut unassigned, mut unmirrored, mut copies, mut cut_acknowledges) = (0, 0, 0, 0);
        let mut gaps = crate::reconstruct::Gaps::default();
        let (mut late, mut max_frame_len) = (Vec::new(), [0; 2]);
        for (i, r) in view.records.iter().enumerate() {
            copies += u64::from(r.seq() != 0);
            let behind = r.seq() != 0 && gaps.last.is_some_and(|last| r.seq() <= last);
            if behind && gaps.any_within(r.seq(), r.seq() + 1) {
                late.push(i as u32);
                continue;
            }
            // An acknowledge whose AETH the snap length cut: whether it was an ACK or a NAK,
            // and of what, is unknown — as of a copy that is missing (formats §6.2 flag 11).
            if r.aeth_cut() && matches!(r.opcode() & 0x1f, 0x11 | 0x12) {
                cut_acknowledges += 1;
                continue;
            }
            if r.seq() != 0 {
                gaps.observe(r.seq());
            }
            if matches!(r.kind(), Kind::NotRoce) {
                continue;
            }
            if !r.has(flag::MIRRORED) {
                unmirrored += 1;
                continue;
            }
            let Some(dst) = view.flow(r).map(|f| End { ip: f.dst_ip(), qpn: r.dest_qp() }) else { continue };
            match by_end.get(&dst) {
                Some(&(c, role)) => {
                    list[c as usize].packets.push((i as u32, role));
                    max_frame_len[role.index()] = max_frame_len[role.index()].max(r.frame_len);
                }
                None => unassigned += 1,
            }
        }
        for c in &mut list {
            let requests = c.packets.iter().filter(|&&(_, to)| to == Role::Responder);
            c.verb = verb.or_else(|| verb_of(requests.filter_map(|&(i, _)| view.records.get(i as usize))));
        }
        let unseen = Unseen::of_gaps(gaps);
        Connections { list, unassigned, unmirrored, copies, late, max_frame_len, unseen, cut_acknowledges }
    }

    /// Whether record `i` came later than its seq (see `late`): analyzers that walk every
    /// record leave it out as the connections do.
    pub fn is_late(&self, i: u32) -> bool {
        self.late.binary_search(&i).is_ok()
    }

    /// How many copies came later than their seq: analyzed as missing at their place.
    pub fn late_copies(&self) -> u64 {
        self.late.len() as u64
    }

    /// The verb every connection has, if they agree.
    pub fn common_verb(&self) -> Option<Verb> {
        let first = self.list.first()?.verb;
        self.list.iter().all(|c| c.verb == first).then_some(first).flatten()
    }
}

/// The note an analyzer leaves for the `n` connections it skipped for want of a verb: no
/// configuration names it and no request in the trace shows it. `consequence` says what the
/// analyzer could not do for them.
pub fn unknown_verb_note(n: usize, consequence: &str) -> String {
    format!(
        "{n} connection(s) of unknown verb (no configuration, and no requests in the trace or READ mixed with \
         WRITE/SEND on one QP): {consequence}"
    )
}

fn from_qp_info(id: u32, q: &QpInfo, verb: Option<Verb>) -> Connection {
    let (snd, rcv) = (End { ip: q.ip_snd, qpn: q.qpn_snd }, End { ip: q.ip_rcv, qpn: q.qpn_rcv });
    let (requester, responder) = if verb == Some(Verb::Read) { (rcv, snd) } else { (snd, rcv) };
    Connection { id, requester, responder, ipsn: Some(q.psn_snd), from_qp_info: true, verb, packets: Vec::new() }
}

/// Without QP info: each request direction (src, dst, dest QPN = responder's QPN) is a
/// connection; a response direction (dst → src, dest QPN = requester's QPN) joins the one
/// whose request PSN range holds its first response PSN, else its last. Unpaired
/// requesters get QPN 0.
fn infer(view: &RecordView<'_>) -> Vec<Connection> {
    /// A direction's PSNs, unwrapped packet to packet: a connection's PSNs can span more
    /// than half the 24-bit space, where comparing each with the first stops working.
    struct Dir {
        first: u32,
        last: u32,
        prev: u32,
        at: i64,
        lo: i64,
        hi: i64,
        order: usize,
    }
    impl Dir {
        fn new(psn: u32, order: usize) -> Dir {
            Dir { first: psn, last: psn, prev: psn, at: 0, lo: 0, hi: 0, order }
        }
        fn add(&mut self, psn: u32) {
            self.at += i64::from(psn::signed_distance(self.prev, psn));
            self.prev = psn;
            if self.at < self.lo {
                (self.lo, self.first) = (self.at, psn);
            }
            if self.at > self.hi {
                (self.hi, self.last) = (self.at, psn);
            }
        }
        /// Whether `psn` lies in the span this direction covered.
        fn holds(&self, psn: u32) -> bool {
            self.hi - self.lo >= i64::from(psn::MODULUS) - 1
                || psn::distance(self.first, psn) <= psn::distance(self.first, self.last)
        }
    }
    let mut requests: FxHashMap<(IpAddr, End), Dir> = FxHashMap::default();
    let mut responses: FxHashMap<(IpAddr, End), Dir> = FxHashMap::default();
    for (i, r) in view.records.iter().enumerate().filter(|(_, r)| r.has(flag::MIRRORED)) {
        let table = match r.kind() {
            Kind::Request => &mut requests,
            Kind::Response => &mut responses,
            _ => continue,
        };
        let Some(f) = view.flow(r) else { continue };
        let key = (f.src_ip(), End { ip: f.dst_ip(), qpn: r.dest_qp() });
        table.entry(key).or_insert_with(|| Dir::new(r.psn(), i)).add(r.psn());
    }
    let mut reqs: Vec<_> = requests.into_iter().collect();
    reqs.sort_by_key(|(_, d)| d.order);
    let mut list: Vec<Connection> = reqs
        .iter()
        .enumerate()
        .map(|(id, ((src, responder), d))| Connection {
            id: id as u32,
            requester: End { ip: *src, qpn: 0 },
            responder: *responder,
            ipsn: Some(d.first),
            from_qp_info: false,
            verb: None,
            packets: Vec::new(),
        })
        .collect();
    let mut resps: Vec<_> = responses.into_iter().collect();
    resps.sort_by_key(|(_, d)| d.order);
    // Several QPs between the same addresses: a response direction pairs with the request
    // direction whose PSNs hold its own and begin closest before them (ACKs start at the
    // first request's PSN). A trace that starts mid-connection can show responses to
    // requests before its first: then a request direction that holds its last will do.
    for ((src, requester), d) in resps {
        let candidate = list
            .iter_mut()
            .zip(&reqs)
            .filter(|(c, (_, rd))| {
                c.requester.qpn == 0
                    && c.requester.ip == requester.ip
                    && c.responder.ip == src
                    && (rd.holds(d.first) || rd.holds(d.last))
            })
            .min_by_key(|(_, (_, rd))| {
                let apart = psn::signed_distance(rd.first, d.first).unsigned_abs();
                (!rd.holds(d.first), !rd.holds(d.last), apart, rd.order)
            });
        if let Some((c, _)) = candidate {
            c.requester = requester;
        }
    }
    list
}

/// Lumina §3.3 ITER for the data packets of one direction: starts at 1 with
/// Last_PSN = IPSN − 1; a PSN not after Last_PSN (24-bit serial order) starts a new round.
#[derive(Debug, Clone, Copy)]
pub struct Iter {
    pub iter: u32,
    last_psn: u32,
}

impl Iter {
    pub fn new(ipsn: u32) -> Iter {
        Iter { iter: 1, last_psn: psn::sub(ipsn, 1) }
    }
    pub fn observe(&mut self, p: u32) -> u32 {
        if !psn::gt(p, self.last_psn) {
            self.iter += 1;
        }
        self.last_psn = p;
        self.iter
    }
}

/// The verb of a connection's requests: READ requests mean READ, SEND opcodes SEND, WRITE
/// opcodes WRITE (SEND with WRITE on one QP: SEND, whose receiver sequences both alike).
/// READ mixed with WRITE/SEND on one QP (NVMe-oF, iSER, SMB Direct) is `None`: the
/// analyzers replay one verb's transport per QP, and the other verb's PSNs would make
/// every later packet look out of order.
pub fn verb_of<'r>(requests: impl IntoIterator<Item = &'r Record>) -> Option<Verb> {
    let (mut read, mut other) = (false, None);
    for r in requests.into_iter().filter(|r| r.kind() == Kind::Request) {
        match r.opcode() & 0x1f {
            0x0c => read = true,
            0x00..=0x05 | 0x16 | 0x17 => other = Some(Verb::Send),
            0x06..=0x0b => other = other.or(Some(Verb::Write)),
            _ => {}
        }
    }
    match (read, other) {
        (true, None) => Some(Verb::Read),
        (true, Some(_)) => None,
        (false, other) => other,
    }
}

/// Whether `r` is a data packet of `verb` travelling from the data sender (WRITE/SEND
/// requests, READ responses).
pub fn is_data(r: &Record, verb: Verb) -> bool {
    match verb {
        Verb::Read => r.kind() == Kind::Response && (0x0d..=0x10).contains(&(r.opcode() & 0x1f)),
        _ => r.kind() == Kind::Request,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::record::Flow;

    /// Flow 0 from 10.0.0.1 to 10.0.0.2, flow 1 back.
    fn two_way() -> [Flow; 2] {
        let v4 = |a: u8| std::net::Ipv4Addr::new(10, 0, 0, a).to_ipv6_mapped().octets();
        let flow = |src, dst| Flow { src: v4(src), dst: v4(dst), ip_version: 4, protocol: 17, ..Flow::default() };
        [flow(1, 2), flow(2, 1)]
    }

    fn record(psn: u32, opcode: u8, kind: Kind, dest_qp: u32, flow: u32) -> Record {
        let mut r = Record::default().with_psn(psn).with_opcode(opcode).with_kind(kind).with_dest_qp(dest_qp);
        (r.flow, r.flags) = (flow, flag::MIRRORED);
        r
    }

    #[test]
    fn iter_follows_figure_3() {
        // Lumina Figure 3: IPSN 1, drop PSN 2 in ITER 1, then PSN 3 in ITER 2.
        let mut it = Iter::new(1);
        let got: Vec<u32> = [1, 2, 3, 4, 2, 3, 4, 3, 4].iter().map(|&p| it.observe(p)).collect();
        assert_eq!(got, [1, 1, 1, 1, 2, 2, 2, 3, 3]);
    }

    #[test]
    fn inferred_ipsn_holds_past_half_the_psn_space() {
        let flows = two_way();
        let record =
            |seq: u64, psn, opcode, kind, dest_qp, flow| record(psn, opcode, kind, dest_qp, flow).with_seq(seq);
        // A WRITE connection from IPSN 0x10 that has sent more than 2^23 packets, then 2^24
        // (the PSNs in between are left out: only their order matters), with one go-back;
        // its first ACK arrives after the first packets.
        let psns = [0x10, 0x40_0000, 0x80_0001, 0x7f_0000, 0xc0_0000, 0x00_0001, 0x20];
        let mut recs: Vec<Record> =
            psns.iter().enumerate().map(|(i, &p)| record(i as u64 + 1, p, 0x0a, Kind::Request, 7, 0)).collect();
        recs.insert(1, record(100, 0x10, 0x11, Kind::Response, 9, 1));
        let view = RecordView { records: &recs, flows: &flows };
        let conns = Connections::track(&view, &[], None);
        assert_eq!(conns.list.len(), 1);
        assert_eq!(conns.list[0].ipsn, Some(0x10));
        assert_eq!(conns.list[0].requester.qpn, 9, "the ACKs pair with the requests");
    }

    #[test]
    fn qps_on_the_same_addresses_pair_by_their_psns() {
        let flows = two_way();
        // QP a (responder QP 7) sends PSNs 100..200, QP b (responder QP 8) 150..250; b's
        // first ACK comes before a's, and a's PSN range holds it too.
        let mut recs = vec![record(100, 0x0a, Kind::Request, 7, 0), record(150, 0x0a, Kind::Request, 8, 0)];
        recs.extend([record(200, 0x0a, Kind::Request, 7, 0), record(250, 0x0a, Kind::Request, 8, 0)]);
        recs.extend([record(150, 0x11, Kind::Response, 9, 1), record(100, 0x11, Kind::Response, 5, 1)]);
        recs.extend([record(250, 0x11, Kind::Response, 9, 1), record(200, 0x11, Kind::Response, 5, 1)]);
        let view = RecordView { records: &recs, flows: &flows };
        let conns = Connections::track(&view, &[], None);
        let got: Vec<(u32, u32)> = conns.list.iter().map(|c| (c.responder.qpn, c.requester.qpn)).collect();
        assert_eq!(got, [(7, 5), (8, 9)]);
    }

    #[test]
    fn a_trace_that_starts_mid_connection_still_pairs_its_responses() {
        let flows = two_way();
        let record = |psn, kind, dest_qp, flow| record(psn, 0x0a, kind, dest_qp, flow);
        // The first request captured is PSN 1000; an ACK for 995, sent before, comes first.
        let recs = [
            record(1000, Kind::Request, 7, 0),
            record(995, Kind::Response, 5, 1),
            record(1001, Kind::Request, 7, 0),
            record(1001, Kind::Response, 5, 1),
        ];
        let view = RecordView { records: &recs, flows: &flows };
        let conns = Connections::track(&view, &[], None);
        let got: Vec<(u32, u32)> = conns.list.iter().map(|c| (c.responder.qpn, c.requester.qpn)).collect();
        assert_eq!(got, [(7, 5)]);
        assert_eq!(conns.unassigned, 0);
    }

    /// An ACK or NAK whose AETH was cut is neither: its copy counts as missing there, so
    /// every analyzer takes what it may have said as unknown (review F2).
    #[test]
    fn an_acknowledge_whose_aeth_was_cut_is_a_missing_copy() {
        let flows = two_way();
        let mut cut = record(5, 0x11, Kind::Response, 9, 1).with_seq(2);
        cut.flags |= flag::HEADERS_CUT;
        let recs =
            [record(5, 0x0a, Kind::Request, 7, 0).with_seq(1), cut, record(6, 0x0a, Kind::Request, 7, 0).with_seq(3)];
        let conns = Connections::track(&RecordView { records: &recs, flows: &flows }, &[], None);
        assert_eq!((conns.cut_acknowledges, conns.unseen.count_between(Some(1), 3)), (1, 1));
        let packets: Vec<u32> = conns.list.iter().flat_map(|c| c.packets.iter().map(|&(i, _)| i)).collect();
        assert_eq!(packets, [0, 2]);
    }

    #[test]
    fn a_qp_mixing_read_with_write_has_no_one_verb() {
        let req = |op| Record::default().with_kind(Kind::Request).with_opcode(op);
        assert_eq!(verb_of(&[req(0x0a), req(0x0c)]), None);
        assert_eq!(verb_of(&[req(0x0c), req(0x0c)]), Some(Verb::Read));
        assert_eq!(verb_of(&[req(0x0a), req(0x04)]), Some(Verb::Send));
        assert_eq!(verb_of(&[req(0x0a)]), Some(Verb::Write));
    }

    #[test]
    fn iter_holds_across_the_psn_wrap() {
        let mut it = Iter::new(psn::MASK);
        let got: Vec<u32> = [psn::MASK, 0, 1, 0, 1].iter().map(|&p| it.observe(p)).collect();
        assert_eq!(got, [1, 1, 1, 2, 2]);
    }
}
