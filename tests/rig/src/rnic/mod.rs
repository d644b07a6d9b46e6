//! RNIC model: one NIC port per traffic host, RC transport only (Lumina §3.2 uses RC).
//!
//! The NIC owns the link transmitter and its scheduler (control packets first, then QPs
//! round-robin), the counters, and the DCQCN notification point; the QP state machines
//! live in [`requester`] and [`responder`].

pub mod cnp;
pub mod counters;
pub mod dcqcn;
pub mod requester;
pub mod responder;

use std::collections::VecDeque;

use wire::bth::Opcode;

use crate::config::{RoceParameters, Verb};
use crate::conn::Conn;
use crate::event::Ev;
use crate::packet::{Pkt, Side, Tag};
use crate::profile::{CnpInterval, NicKind, NicProfile};
use crate::rng::Rng;
use crate::sim::{ns, EventQueue, Ps, Rate};
use crate::truth::{Cnp, CnpCause, SuppressedCnp, Truth};

pub use counters::Counters;
use requester::ReqQp;
use responder::RespQp;

/// The message pattern every QP of the run follows.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub verb: Verb,
    /// Packets per message.
    pub pkts: u64,
    pub mtu: u32,
    pub size: u32,
    pub msgs: u64,
}

impl Shape {
    /// Payload bytes of packet `i` of a message.
    pub fn payload(&self, i: u64) -> u32 {
        let done = i.saturating_mul(u64::from(self.mtu));
        (u64::from(self.size).saturating_sub(done)).min(u64::from(self.mtu)) as u32
    }
    /// Remote virtual address of packet `i` of message `m`.
    pub fn va(&self, m: u64, i: u64) -> u64 {
        let stride = u64::from(self.size.max(1)).next_multiple_of(4096);
        0x7f00_0000_0000 + (m % 1024) * stride + i * u64::from(self.mtu)
    }
    /// DMA length from packet `i` to the end of the message.
    pub fn remaining(&self, i: u64) -> u32 {
        u64::from(self.size).saturating_sub(i * u64::from(self.mtu)) as u32
    }
}

/// What a QP handler may touch besides its own state.
pub struct Ctx<'a> {
    pub now: Ps,
    pub q: &'a mut EventQueue<Ev>,
    pub rng: &'a mut Rng,
    pub truth: &'a mut Truth,
    pub conns: &'a [Conn],
    pub shape: Shape,
    /// Per connection and side: switch timestamp of the last packet seen from it.
    pub last_switch_ts: &'a [[Option<u64>; 2]],
}

impl Ctx<'_> {
    pub fn at(&mut self, t: Ps, ev: Ev) {
        self.q.push(t, ev);
    }
}

/// What a QP wants of its NIC after a packet arrived.
#[derive(Debug, Default, Clone, Copy)]
pub struct Outcome {
    /// The QP may have more to send.
    pub wake: bool,
    /// It detected a gap and NAKed it (or, for READ, will repeat the request).
    pub nak: bool,
}

/// What a QP has for the transmitter.
#[derive(Debug)]
pub enum Tx {
    Packet(Pkt),
    /// Nothing before this time (pacing, or a READ response not ready yet).
    Wait(Ps),
    Idle,
}

pub struct Nic {
    pub side: Side,
    pub kind: NicKind,
    pub profile: NicProfile,
    pub params: RoceParameters,
    pub gbps: f64,
    pub rate: Rate,
    pub counters: Counters,
    busy_until: Ps,
    wake_at: Option<Ps>,
    ctrl: VecDeque<Pkt>,
    active: VecDeque<u32>,
    is_active: Vec<bool>,
    cnp: cnp::CnpLimiter,
    ip_ident: u16,
    pub req: Vec<ReqQp>,
    pub resp: Vec<RespQp>,
}

impl Nic {
    pub fn new(side: Side, kind: NicKind, params: RoceParameters, gbps: f64, qps: usize) -> Nic {
        let profile = kind.profile();
        let interval = match profile.cnp_interval {
            CnpInterval::Configured => ns(u64::from(params.min_time_between_cnps) * 1_000),
            CnpInterval::Hidden { ns: v } => ns(v),
        };
        Nic {
            side,
            kind,
            cnp: cnp::CnpLimiter::new(profile.cnp_scope, interval),
            profile,
            params,
            gbps,
            rate: Rate::gbps(gbps),
            counters: Counters::default(),
            busy_until: 0,
            wake_at: None,
            ctrl: VecDeque::new(),
            active: VecDeque::new(),
            is_active: vec![false; qps],
            ip_ident: 0,
            req: Vec::new(),
            resp: Vec::new(),
        }
    }

    /// Makes sure the transmitter wakes up as soon as it is free.
    pub fn kick(&mut self, q: &mut EventQueue<Ev>, now: Ps) {
        let want = now.max(self.busy_until);
        self.wake_at_time(q, want);
    }

    pub fn wake_at_time(&mut self, q: &mut EventQueue<Ev>, t: Ps) {
        if self.wake_at.is_none_or(|w| w > t) {
            q.push(t, Ev::TxReady(self.side));
            self.wake_at = Some(t);
        }
    }

    /// A QP has something to send.
    pub fn activate(&mut self, conn: u32, q: &mut EventQueue<Ev>, now: Ps) {
        if !std::mem::replace(&mut self.is_active[conn as usize], true) {
            self.active.push_back(conn);
        }
        self.kick(q, now);
    }

    pub fn push_control(&mut self, pkt: Pkt, q: &mut EventQueue<Ev>, now: Ps) {
        self.ctrl.push_back(pkt);
        self.kick(q, now);
    }

    /// The transmitter's turn: the next frame to put on the wire, if any. The caller
    /// sends it and calls [`Nic::sent`].
    pub fn on_tx_ready(&mut self, ctx: &mut Ctx) -> Option<Pkt> {
        if self.wake_at != Some(ctx.now) {
            return None; // superseded by an earlier wake-up
        }
        self.wake_at = None;
        if ctx.now < self.busy_until {
            self.kick(ctx.q, ctx.now);
            return None;
        }
        let mut pkt = match self.ctrl.pop_front() {
            Some(p) => p,
            None => self.next_from_qps(ctx)?,
        };
        pkt.mig_req = self.profile.mig_req;
        pkt.wire_len = pkt.frame_len() as u32;
        pkt.ip_ident = self.ip_ident;
        self.ip_ident = self.ip_ident.wrapping_add(1);
        self.counters.tx_packets += 1;
        Some(pkt)
    }

    /// The frame just sent occupies the link until `until`. Returns whether the
    /// transmitter has more to do then; the caller either queues the wake-up
    /// ([`Nic::wake_at_time`]) or, when nothing else happens before, runs it at once
    /// ([`Nic::wake_now`]).
    pub fn sent(&mut self, until: Ps) -> bool {
        self.busy_until = until;
        !self.ctrl.is_empty() || !self.active.is_empty()
    }

    /// Claims the wake-up at `t` without queueing an event (see [`Nic::sent`]); false if an
    /// earlier wake-up is queued.
    pub fn wake_now(&mut self, t: Ps) -> bool {
        if self.wake_at.is_some_and(|w| w < t) {
            return false;
        }
        self.wake_at = Some(t);
        true
    }

    fn next_from_qps(&mut self, ctx: &mut Ctx) -> Option<Pkt> {
        let mut earliest: Option<Ps> = None;
        for _ in 0..self.active.len() {
            let conn = self.active.pop_front()?;
            let tx = match self.side {
                Side::Requester => self.req[conn as usize].next_packet(ctx, self.gbps),
                Side::Responder => self.resp[conn as usize].next_packet(ctx, self.gbps),
            };
            match tx {
                Tx::Packet(p) => {
                    self.active.push_back(conn);
                    return Some(p);
                }
                Tx::Wait(t) => {
                    self.active.push_back(conn);
                    earliest = Some(earliest.map_or(t, |e: Ps| e.min(t)));
                }
                Tx::Idle => self.is_active[conn as usize] = false,
            }
        }
        if let Some(t) = earliest {
            self.wake_at_time(ctx.q, t.max(ctx.now));
        }
        None
    }

    /// A frame arrives from the switch.
    pub fn on_deliver(&mut self, ctx: &mut Ctx, pkt: Pkt) {
        self.counters.rx_packets += 1;
        if pkt.corrupt {
            // The ICRC check fails: the packet is gone before the transport sees it.
            self.counters.rx_icrc_encapsulated += 1;
            return;
        }
        if pkt.is_cnp() {
            // A disabled reaction point ignores the CNP, and says so in its own counter
            // (mlx5 `rp_cnp_ignored`, E810 `cnpIgnored`).
            if self.params.rp_enabled() {
                self.counters.rp_cnp_handled += 1;
                self.rp_on_cnp(pkt.conn, ctx.now);
            } else {
                self.counters.rp_cnp_ignored += 1;
            }
            return;
        }
        if pkt.ecn == wire::ipv4::ecn::CE {
            self.counters.np_ecn_marked_roce_packets += 1;
            if self.params.np_enabled() {
                self.request_cnp(ctx, pkt.conn, CnpCause::Ecn, pkt.seq);
            }
        }
        let c = pkt.conn as usize;
        let out = match self.side {
            Side::Requester => self.req[c].on_packet(ctx, &mut self.counters, &self.profile, &pkt),
            Side::Responder => self.resp[c].on_packet(ctx, &mut self.counters, &self.profile, &pkt),
        };
        if out.nak && self.profile.cnp_on_nak && self.params.slow_restart && self.params.np_enabled() {
            self.request_cnp(ctx, pkt.conn, CnpCause::Nak, pkt.seq);
        }
        if out.wake {
            self.activate(pkt.conn, ctx.q, ctx.now);
        }
    }

    fn rp_on_cnp(&mut self, conn: u32, now: Ps) {
        let rp = match self.side {
            Side::Requester => self.req[conn as usize].rp.as_mut(),
            Side::Responder => self.resp[conn as usize].rp.as_mut(),
        };
        if let Some(rp) = rp {
            rp.on_cnp(now);
        }
    }

    /// DCQCN NP (Lumina §4 "Congestion notification"): a CNP to the data sender unless
    /// the rate limiter of its scope sent one within the interval (§6.3).
    pub fn request_cnp(&mut self, ctx: &mut Ctx, conn: u32, cause: CnpCause, cause_seq: u32) {
        let c = ctx.conns[conn as usize];
        let (local, remote) = (c.end(self.side), c.end(self.side.other()));
        let key = self.cnp.key(u32::from(remote.ip), local.qpn);
        let index = ctx.truth.cnps.len() as u32;
        match self.cnp.decide(key, ctx.now, index) {
            cnp::Decision::Send => {
                ctx.truth.cnps.push(Cnp {
                    conn,
                    from: self.side,
                    cause,
                    cause_seq,
                    decided_at_ns: crate::sim::to_ns(ctx.now),
                    seq: 0,
                    switch_ts_ns: 0,
                });
                let mut p = Pkt::new(conn, self.side, Opcode::CNP, 0);
                p.payload_len = wire::build::CNP_PAYLOAD_LEN as u32;
                p.ecn = wire::ipv4::ecn::NOT_ECT;
                p.tag = Tag::Cnp(index);
                self.counters.np_cnp_sent += 1;
                let at = ctx.now + ctx.rng.latency(self.profile.cnp_delay);
                ctx.at(at, Ev::Control(self.side, p));
            }
            cnp::Decision::Suppressed { by } => {
                ctx.truth.suppressed_cnps.push(SuppressedCnp {
                    conn,
                    from: self.side,
                    cause,
                    cause_seq,
                    limited_by: by,
                });
            }
        }
    }
}
