//! One run of the emulated test rig: two traffic hosts, the Lumina switch and the dump
//! hosts, driven by the event queue until the traffic is done.

use std::path::Path;

use serde::Serialize;
use wire::mirror::{MirrorMeta, MirrorRepr};

use crate::config::{DumperKind, EventKind, RigConfig, Verb};
use crate::conn::{establish, Conn};
use crate::dump::{Captured, DumpHost, Frame, LuminaDumper, Sink};
use crate::event::Ev;
use crate::faults::GbnViolationKind;
use crate::packet::{Pkt, Side, Tag};
use crate::rng::Rng;
use crate::rnic::dcqcn::Rp;
use crate::rnic::requester::{ReqQp, TimerPolicy};
use crate::rnic::responder::RespQp;
use crate::rnic::{Ctx, Nic, Shape};
use crate::sim::{ns, to_ns, EventQueue, Ps};
use crate::switch::{Ingress, Switch};
use crate::truth::{FiredViolation, InjectedEvent, NakKind, Truth};

/// Where the dump hosts' frames go.
pub enum Capture<'a> {
    /// `dump-<i>.pcap` per dump host in this directory.
    Pcap(&'a Path),
    /// Kept in memory ([`RunResult::captured`]).
    Memory,
}

/// One mirrored packet, for tests (recorded with `record_packets`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PacketRecord {
    pub seq: u32,
    pub switch_ts_ns: u64,
    pub conn: u32,
    pub from: Side,
    pub opcode: u8,
    /// Relative PSN (from 1); 0 for CNPs.
    pub psn: u64,
    pub wire_psn: u32,
    pub iter: Option<u32>,
    pub event: Option<EventKind>,
    pub retransmission: bool,
    /// None when the mirror port's buffer dropped the copy.
    pub dump_host: Option<usize>,
    pub frame_len: usize,
}

/// Per-QP results of the traffic generator (Lumina §3.2: goodput and message completion
/// times).
#[derive(Debug, Clone, Serialize)]
pub struct QpLog {
    pub conn: u32,
    pub posted: u64,
    pub completed: u64,
    pub failed: bool,
    pub bytes: u64,
    pub goodput_gbps: f64,
    /// Completion time of each message, µs (post → completion).
    pub mct_us: Vec<f64>,
    /// When its last message completed at the requester, ns since the start of the run.
    #[serde(skip)]
    pub last_completion_ns: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunStats {
    pub events: u64,
    pub packets: u64,
    pub mirrored: u64,
    /// Simulated time of the last packet, ns.
    pub duration_ns: u64,
    pub hit_time_limit: bool,
}

pub struct RunResult {
    pub conns: Vec<Conn>,
    pub truth: Truth,
    pub switch: crate::switch::SwitchCounters,
    pub nics: [crate::rnic::Counters; 2],
    pub qps: Vec<QpLog>,
    pub stats: RunStats,
    pub packets: Vec<PacketRecord>,
    /// Per dump host, with [`Capture::Memory`] (empty lists with [`Capture::Pcap`]).
    pub captured: Vec<Vec<Captured>>,
    /// Frames and bytes each dump host wrote.
    pub dumped: Vec<(u64, u64)>,
}

/// How long past `rig.time-limit-ms` what was posted may take to finish (simulated).
pub const DRAIN_LIMIT_MS: u64 = 10_000;

pub struct Rig<'c> {
    cfg: &'c RigConfig,
    now: Ps,
    q: EventQueue<Ev>,
    rng: Rng,
    switch_rng: Rng,
    fault_rng: Rng,
    truth: Truth,
    conns: Vec<Conn>,
    shape: Shape,
    nics: [Nic; 2],
    switch: Switch,
    dumps: Vec<DumpHost>,
    last_switch_ts: Vec<[Option<u64>; 2]>,
    record: bool,
    packets: Vec<PacketRecord>,
    scratch: Vec<u8>,
    /// QPs of the current barrier round still busy.
    round_busy: usize,
    /// Past `rig.time-limit-ms`: the traffic generator posts nothing more.
    posting_stopped: bool,
    stats: RunStats,
}

impl<'c> Rig<'c> {
    pub fn new(cfg: &'c RigConfig, capture: Capture<'_>, record_packets: bool) -> std::io::Result<Rig<'c>> {
        let seed = cfg.rig.seed;
        let mut rng = Rng::new(seed);
        let conns = establish(cfg, &mut rng);
        let t = &cfg.traffic;
        let shape = Shape {
            verb: t.rdma_verb,
            pkts: t.pkts_per_msg(),
            mtu: t.mtu,
            size: t.message_size,
            msgs: u64::from(t.num_msgs_per_qp),
        };
        let gbps = |kind: crate::profile::NicKind| cfg.rig.link_gbps.unwrap_or(kind.profile().link_gbps);
        let gbps = [gbps(cfg.requester.nic.kind), gbps(cfg.responder.nic.kind)];
        let n = conns.len();
        let mut nics = [
            Nic::new(Side::Requester, cfg.requester.nic.kind, cfg.requester.roce_parameters.clone(), gbps[0], n),
            Nic::new(Side::Responder, cfg.responder.nic.kind, cfg.responder.roce_parameters.clone(), gbps[1], n),
        ];
        let timer = timer_policy(cfg, &nics[0], &mut rng);
        for c in 0..n as u32 {
            let rp = |nic: &Nic| nic.params.rp_enabled().then(|| Rp::new(nic.gbps));
            let req_rp = if shape.verb == Verb::Read { None } else { rp(&nics[0]) };
            let resp_rp = if shape.verb == Verb::Read { rp(&nics[1]) } else { None };
            nics[0].req.push(ReqQp::new(c, shape, timer.clone(), req_rp));
            nics[1].resp.push(RespQp::new(c, shape, resp_rp));
        }
        for v in &cfg.rig.faults.gbn_violations {
            let c = (v.qpn - 1) as usize;
            match v.kind {
                GbnViolationKind::OooData | GbnViolationKind::ReadNoNak | GbnViolationKind::ReadDoubleNak => {
                    nics[0].req[c].set_violation(*v)
                }
                GbnViolationKind::NakWrongPsn => nics[1].resp[c].set_violation(*v),
            }
        }
        let switch = Switch::new(cfg, &conns, gbps);
        let dumps = dump_hosts(cfg, capture)?;
        let mut truth = Truth::default();
        truth.faults.counter_lies = cfg.rig.faults.counter_lies.clone();
        truth.faults.paper_counter_bugs = cfg.rig.faults.paper_counter_bugs;
        Ok(Rig {
            cfg,
            now: 0,
            q: EventQueue::default(),
            rng,
            switch_rng: Rng::new(seed ^ 0x5717_c4e5_0000_0001),
            fault_rng: Rng::new(seed ^ 0xfa17_0000_0000_0002),
            truth,
            last_switch_ts: vec![[None; 2]; n],
            conns,
            shape,
            nics,
            switch,
            dumps,
            record: record_packets,
            packets: Vec::new(),
            scratch: Vec::with_capacity(16 << 10),
            round_busy: 0,
            posting_stopped: false,
            stats: RunStats { events: 0, packets: 0, mirrored: 0, duration_ns: 0, hit_time_limit: false },
        })
    }

    /// Runs the traffic to completion (or the time limit) and collects the results.
    ///
    /// At the time limit the traffic generator stops posting, as one stopped by hand, and
    /// what the NICs hold finishes: frames on the wire arrive, posted messages complete or
    /// fail. So the NIC counters, taken at the end, agree with the trace (Lumina reads them
    /// once the generator is done); a cut with frames in flight would not. The drain itself
    /// stops [`DRAIN_LIMIT_MS`] later at most.
    pub fn run(mut self) -> std::io::Result<RunResult> {
        self.post_initial();
        let limit = ns(self.cfg.rig.time_limit_ms * 1_000_000);
        let hard = limit.saturating_add(ns(DRAIN_LIMIT_MS * 1_000_000));
        while let Some((t, ev)) = self.q.pop() {
            if t > limit && !self.posting_stopped {
                (self.stats.hit_time_limit, self.posting_stopped) = (true, true);
            }
            if t > hard {
                break;
            }
            self.now = t;
            self.stats.events += 1;
            self.handle(ev)?;
        }
        self.finish()
    }

    fn post_initial(&mut self) {
        let depth = u64::from(self.cfg.traffic.tx_depth);
        for c in 0..self.conns.len() as u32 {
            self.post(c, depth);
        }
        self.round_busy = self.conns.len();
    }

    fn post(&mut self, conn: u32, n: u64) {
        let qp = &mut self.nics[0].req[conn as usize];
        // A QP in the error state takes no work requests (a barrier round posted to it too).
        if self.posting_stopped || qp.failed {
            return;
        }
        let before = qp.posted;
        qp.post(n, self.now);
        if qp.posted > before {
            self.nics[0].activate(conn, &mut self.q, self.now);
        }
    }

    fn handle(&mut self, ev: Ev) -> std::io::Result<()> {
        match ev {
            Ev::TxReady(side) => self.transmit(side),
            Ev::SwitchIn(pkt) => self.switch_in(pkt)?,
            Ev::Deliver(side, pkt) => {
                let was_idle = self.nics[0].req[pkt.conn as usize].idle();
                self.with_nic(side, |nic, ctx| nic.on_deliver(ctx, pkt));
                self.after_requester_event(pkt.conn, was_idle);
            }
            Ev::Control(side, pkt) => self.nics[side.idx()].push_control(pkt, &mut self.q, self.now),
            Ev::AckDue(conn) => {
                if let Some(p) = self.nics[1].resp[conn as usize].ack_due() {
                    self.nics[1].push_control(p, &mut self.q, self.now);
                }
            }
            Ev::GoBack { conn, psn, trigger } => {
                if self.nics[0].req[conn as usize].go_back(psn, trigger) {
                    self.nics[0].activate(conn, &mut self.q, self.now);
                }
            }
            Ev::Timer { conn } => {
                let was_idle = self.nics[0].req[conn as usize].idle();
                let wake = self.with_nic(Side::Requester, |nic, ctx| {
                    let crate::rnic::Nic { req, counters, .. } = nic;
                    req[conn as usize].on_timer(ctx, counters)
                });
                if wake {
                    self.nics[0].activate(conn, &mut self.q, self.now);
                }
                self.after_requester_event(conn, was_idle);
            }
        }
        Ok(())
    }

    fn with_nic<R>(&mut self, side: Side, f: impl FnOnce(&mut Nic, &mut Ctx) -> R) -> R {
        let mut ctx = Ctx {
            now: self.now,
            q: &mut self.q,
            rng: &mut self.rng,
            truth: &mut self.truth,
            conns: &self.conns,
            shape: self.shape,
            last_switch_ts: &self.last_switch_ts,
        };
        f(&mut self.nics[side.idx()], &mut ctx)
    }

    /// Posts more messages when a QP completes some (tx-depth outstanding per QP, or a
    /// whole new round on every QP with barrier-sync, Lumina §3.2).
    fn after_requester_event(&mut self, conn: u32, was_idle: bool) {
        let qp = &self.nics[0].req[conn as usize];
        if !self.cfg.traffic.barrier_sync {
            let outstanding = qp.posted - qp.completed;
            let depth = u64::from(self.cfg.traffic.tx_depth);
            if outstanding < depth {
                self.post(conn, depth - outstanding);
            }
            return;
        }
        // A failed QP leaves the round too, or the others would wait for it forever.
        if !was_idle && qp.idle() {
            self.round_busy -= 1;
            if self.round_busy == 0 {
                let depth = u64::from(self.cfg.traffic.tx_depth);
                for c in 0..self.conns.len() as u32 {
                    self.post(c, depth);
                }
                self.round_busy = self.nics[0].req.iter().filter(|q| !q.idle()).count();
            }
        }
    }

    /// The transmitter of `side` may send. While it stays busy and nothing else is due
    /// before its next slot, it keeps sending without a round trip through the queue (the
    /// same order of events, fewer queue operations: most of the rig's time at scale).
    fn transmit(&mut self, side: Side) {
        let delay = ns(self.cfg.rig.link_delay_ns);
        loop {
            let Some(pkt) = self.with_nic(side, |nic, ctx| nic.on_tx_ready(ctx)) else { return };
            let nic = &mut self.nics[side.idx()];
            let done = self.now + nic.rate.wire_time(pkt.wire_len as usize);
            let more = nic.sent(done);
            self.stats.packets += 1;
            self.q.push(done + delay, Ev::SwitchIn(pkt));
            if !more {
                return;
            }
            let nothing_sooner = self.q.peek_time().is_none_or(|t| t > done);
            if nothing_sooner && self.nics[side.idx()].wake_now(done) {
                self.now = done;
                self.stats.events += 1;
            } else {
                self.nics[side.idx()].wake_at_time(&mut self.q, done);
                return;
            }
        }
    }

    fn switch_in(&mut self, mut pkt: Pkt) -> std::io::Result<()> {
        let conn = self.conns[pkt.conn as usize];
        let sent = pkt;
        let ing = self.switch.ingress(self.now, &mut pkt, &conn);
        let last = &mut self.last_switch_ts[pkt.conn as usize][pkt.from.idx()];
        let previous = last.replace(pkt.switch_ts_ns);
        self.note_truth(&pkt, &ing, &conn, previous);
        match ing.mirror {
            Some(m) => self.mirror_copy(&sent, &pkt, &ing, &conn, m)?,
            None => self.truth.faults.mirror_buffer_drops.push(pkt.seq),
        }
        if self.record {
            self.packets.push(PacketRecord {
                seq: pkt.seq,
                switch_ts_ns: pkt.switch_ts_ns,
                conn: pkt.conn,
                from: pkt.from,
                opcode: pkt.opcode.0,
                psn: if pkt.is_cnp() { 0 } else { pkt.psn + 1 },
                wire_psn: if pkt.is_cnp() { 0 } else { conn.wire_psn(pkt.psn) },
                iter: ing.iter,
                event: ing.event.map(|e| e.kind),
                retransmission: pkt.retransmission,
                dump_host: ing.mirror.map(|m| m.dump_host),
                frame_len: pkt.wire_len as usize,
            });
        }
        if let Some(at) = ing.forward {
            self.q.push(at, Ev::Deliver(pkt.from.other(), pkt));
        }
        Ok(())
    }

    /// `previous`: the switch time of the packet its end sent before it on the connection.
    fn note_truth(&mut self, pkt: &Pkt, ing: &Ingress, conn: &Conn, previous: Option<u64>) {
        let (seq, ts) = (pkt.seq, pkt.switch_ts_ns);
        match pkt.tag {
            Tag::None => {}
            Tag::Retransmission(i) => {
                let r = &mut self.truth.retransmissions[i as usize];
                (r.seq, r.switch_ts_ns, r.previous_tx_switch_ts_ns) = (seq, ts, previous);
            }
            Tag::Nak(i) => {
                let r = &mut self.truth.naks[i as usize];
                (r.seq, r.switch_ts_ns) = (seq, ts);
            }
            Tag::Cnp(i) => {
                let r = &mut self.truth.cnps[i as usize];
                (r.seq, r.switch_ts_ns) = (seq, ts);
            }
            Tag::Violation(i) => self.truth.faults.gbn_violations[i as usize].seq = seq,
        }
        if let (Some(e), Some(iter)) = (ing.event, ing.iter) {
            self.truth.events.push(InjectedEvent {
                conn: e.conn,
                qpn: e.intent.qpn,
                psn: e.intent.psn,
                iter,
                kind: e.kind,
                dst_qpn: conn.end(pkt.from.other()).qpn,
                wire_psn: conn.wire_psn(pkt.psn),
                seq,
                switch_ts_ns: ts,
            });
        }
    }

    /// Builds the copy as the switch egress rewrites it (DESIGN "Lumina mirror format")
    /// and hands it to its dump host.
    fn mirror_copy(
        &mut self,
        sent: &Pkt,
        pkt: &Pkt,
        ing: &Ingress,
        conn: &Conn,
        m: crate::switch::MirrorOut,
    ) -> std::io::Result<()> {
        self.stats.mirrored += 1;
        // Lumina's dumper receives whole copies and cuts them itself.
        let snap = if self.cfg.rig.dumper == DumperKind::Lumina { 0 } else { self.cfg.rig.snaplen as usize };
        let keep = if snap == 0 { usize::MAX } else { snap };
        // The copy is the packet as it entered: `sent` (before the event) with the seq.
        let len = crate::frames::emit(conn, sent, &mut self.scratch, keep);
        let keep = keep.min(len);
        let event = ing.event.map_or(wire::mirror::Event::None, |e| e.kind.mirror_event());
        let meta = MirrorMeta { seq: m.seq, timestamp_ns: pkt.switch_ts_ns, event };
        let udp_src_port = 49_152 + (self.switch_rng.u32() % 16_384) as u16;
        MirrorRepr { meta, mirror_port: self.cfg.mirror_port(), udp_src_port }
            .apply(&mut self.scratch[..len])
            .expect("the rig's frames are UDP");
        let frame = Frame {
            ts_ns: self.cfg.rig.host_clock_start_ns + to_ns(m.arrive),
            seq: m.seq,
            data: &self.scratch[..keep],
            orig_len: len as u32,
        };
        self.dumps[m.dump_host].receive(&mut self.fault_rng, frame)
    }

    fn finish(mut self) -> std::io::Result<RunResult> {
        self.stats.duration_ns = self.last_switch_ts_max();
        self.truth.unmatched_events = self.switch.injector.unmatched();
        let mut captured = Vec::new();
        let mut dumped = Vec::new();
        for d in std::mem::take(&mut self.dumps) {
            let (frames, stats) = d.finish()?;
            self.truth.faults.lost_mirror_copies.extend(&stats.lost);
            self.truth.faults.reordered.extend(&stats.swapped);
            dumped.push((stats.frames, stats.bytes));
            captured.push(frames);
        }
        self.truth.faults.lost_mirror_copies.sort_unstable();
        crate::recovery::fill(&mut self.truth);
        self.name_wrong_naks();
        let qps = self.nics[0].req.iter().map(|qp| qp_log(qp, &self.shape)).collect();
        Ok(RunResult {
            conns: self.conns,
            truth: self.truth,
            switch: self.switch.counters,
            nics: [self.nics[0].counters, self.nics[1].counters],
            qps,
            stats: self.stats,
            packets: self.packets,
            captured,
            dumped,
        })
    }

    /// A NAK-wrong-PSN violation is the NAK packet itself, a READ double NAK the second
    /// repeated request: name each by its NAK's seq (known once the NAK's copy is made).
    /// A second repeat the retransmission timer overtook never went on the wire: no fault
    /// fired, and the truth does not list it.
    fn name_wrong_naks(&mut self) {
        for (fault, kind) in
            [(GbnViolationKind::NakWrongPsn, NakKind::SeqErr), (GbnViolationKind::ReadDoubleNak, NakKind::ReadReissue)]
        {
            let mut naks = self.truth.naks.iter().filter(|n| n.violation && n.kind == kind);
            for v in self.truth.faults.gbn_violations.iter_mut().filter(|v| v.violation.kind == fault) {
                if let Some(n) = naks.next() {
                    v.seq = n.seq;
                }
            }
        }
        let unsent = |v: &FiredViolation| v.violation.kind == GbnViolationKind::ReadDoubleNak && v.seq == 0;
        self.truth.faults.gbn_violations.retain(|v| !unsent(v));
    }

    fn last_switch_ts_max(&self) -> u64 {
        self.last_switch_ts
            .iter()
            .flatten()
            .flatten() // an end of a QP that never sent has none
            .map(|&t| t.wrapping_sub(self.cfg.rig.switch_clock_start_ns) & wire::mirror::TIMESTAMP_MAX)
            .max()
            .unwrap_or(0)
    }
}

fn timer_policy(cfg: &RigConfig, requester: &Nic, rng: &mut Rng) -> TimerPolicy {
    let retry = u32::from(cfg.traffic.max_retransmit_retry);
    let adaptive = requester.params.adaptive_retrans && requester.profile.supports_adaptive_retrans();
    if adaptive {
        // §6.3: with retry_cnt 7 the CX NICs retried 8–13 times.
        let (lo, hi) = requester.profile.adaptive_extra_retries;
        let extra = rng.between(u64::from(lo), u64::from(hi)) as u32;
        TimerPolicy {
            exponent: cfg.traffic.min_retransmit_timeout,
            adaptive: requester.profile.adaptive_timeouts_ns,
            retry_limit: retry + extra,
        }
    } else {
        TimerPolicy { exponent: cfg.traffic.min_retransmit_timeout, adaptive: &[], retry_limit: retry }
    }
}

fn dump_hosts(cfg: &RigConfig, capture: Capture<'_>) -> std::io::Result<Vec<DumpHost>> {
    let f = &cfg.rig.faults;
    (0..cfg.rig.dump_hosts.len())
        .map(|i| {
            let lumina = cfg.rig.dumper == DumperKind::Lumina;
            // Lumina's dumper's pcap header says 65535 whatever it keeps.
            let snaplen = if lumina { 0 } else { cfg.rig.snaplen };
            let sink = match capture {
                Capture::Pcap(dir) => Sink::pcap(&dir.join(dump_file_name(i)), snaplen)?,
                Capture::Memory => Sink::Memory(Vec::new()),
            };
            let lose = f.lose_mirror_copies.iter().filter(|l| l.dump_host == i);
            let seqs = lose.clone().flat_map(|l| l.seqs.iter().copied()).collect();
            let count = lose.map(|l| l.count).sum();
            let reorder = f.reorder.iter().filter(|r| r.dump_host == i).map(|r| r.probability).fold(0.0, f64::max);
            let delay = f.dump_host_delay_ns.get(i).copied().unwrap_or(0);
            let host = DumpHost::new(sink, delay, seqs, count, reorder);
            let lcores = cfg.rig.dump_hosts[i].lcores.unwrap_or(cfg.rig.dumper_lcores);
            Ok(if lumina { host.with_dumper(LuminaDumper::new(lcores, cfg.mirror_port())) } else { host })
        })
        .collect()
}

pub fn dump_file_name(i: usize) -> String {
    format!("dump-{i}.pcap")
}

fn qp_log(qp: &ReqQp, shape: &Shape) -> QpLog {
    let mct_us: Vec<f64> = qp.complete_at.iter().zip(&qp.post_at).map(|(&c, &p)| (c - p) as f64 / 1e6).collect();
    let bytes = qp.completed * u64::from(shape.size);
    let span = match (qp.post_at.first(), qp.complete_at.last()) {
        (Some(&a), Some(&b)) if b > a => (b - a) as f64,
        _ => 0.0,
    };
    QpLog {
        conn: qp.conn,
        posted: qp.posted,
        completed: qp.completed,
        failed: qp.failed,
        bytes,
        goodput_gbps: if span > 0.0 { bytes as f64 * 8.0 * 1000.0 / span } else { 0.0 },
        mct_us,
        last_completion_ns: qp.complete_at.last().map(|&t| to_ns(t)),
    }
}
