//! The RC responder: the Go-back-N receiver of WRITE/SEND (Lumina §4 "Retransmission
//! logic") and the READ responder.
//!
//! Go-back-N receiver: a packet with the expected PSN is accepted; the first packet after
//! a gap gets a NAK-sequence-error naming the expected PSN (after the NIC's NACK generation
//! time), and later out-of-sequence packets are dropped silently until the expected PSN
//! arrives; a duplicate is acknowledged again. ACKs are coalesced: one ACK, naming the
//! latest in-order PSN, goes out `ack_delay` after the packet that asked for it.

use std::collections::VecDeque;

use wire::aeth::{NakCode, Syndrome, CREDIT_INVALID};
use wire::bth::Opcode;

use super::dcqcn::Rp;
use super::{Counters, Ctx, Outcome, Shape, Tx};
use crate::event::Ev;
use crate::faults::GbnViolation;
use crate::packet::{ends_message, segment_opcode, Pkt, SegmentKind, Side, Tag};
use crate::profile::NicProfile;
use crate::sim::{to_ns, wire_time, Ps};
use crate::truth::{Nak, NakKind, Retransmission, Trigger};

/// A READ request being answered: responses for offsets `next..end`.
#[derive(Debug, Clone, Copy)]
struct ReadJob {
    start: u64,
    next: u64,
    end: u64,
    ready_at: Ps,
    /// Set when the request was a repeat: the truth trigger of the responses.
    trigger: Option<Trigger>,
}

#[derive(Debug)]
pub struct RespQp {
    pub conn: u32,
    shape: Shape,
    pub rp: Option<Rp>,
    /// Next PSN offset expected.
    epsn: u64,
    nak_outstanding: bool,
    msn: u32,
    ack_pending: bool,
    jobs: VecDeque<ReadJob>,
    /// Highest READ response offset sent + 1.
    resp_max: u64,
    next_tx_at: Ps,
    /// NAK-wrong-PSN fault: fires on the first NAK for this offset.
    violation: Option<(u64, GbnViolation)>,
}

impl RespQp {
    pub fn new(conn: u32, shape: Shape, rp: Option<Rp>) -> RespQp {
        RespQp {
            conn,
            shape,
            rp,
            epsn: 0,
            nak_outstanding: false,
            msn: 0,
            ack_pending: false,
            jobs: VecDeque::new(),
            resp_max: 0,
            next_tx_at: 0,
            violation: None,
        }
    }

    pub fn set_violation(&mut self, v: GbnViolation) {
        self.violation = Some((u64::from(v.psn) - 1, v));
    }

    pub fn on_packet(&mut self, ctx: &mut Ctx, counters: &mut Counters, profile: &NicProfile, pkt: &Pkt) -> Outcome {
        match pkt.opcode {
            Opcode::RC_READ_REQUEST => {
                counters.rx_read_requests += 1;
                self.on_read_request(ctx, counters, profile, pkt)
            }
            op if op.0 <= Opcode::RC_WRITE_ONLY_IMM.0 => {
                if op.0 >= Opcode::RC_WRITE_FIRST.0 {
                    counters.rx_write_requests += 1;
                } else {
                    counters.rx_send_requests += 1;
                }
                self.on_data(ctx, counters, profile, pkt)
            }
            _ => Outcome::default(),
        }
    }

    fn on_data(&mut self, ctx: &mut Ctx, counters: &mut Counters, profile: &NicProfile, pkt: &Pkt) -> Outcome {
        let q = pkt.psn;
        if q == self.epsn {
            self.epsn += 1;
            self.nak_outstanding = false;
            if ends_message(pkt.opcode) {
                self.msn = (self.msn + 1) & wire::psn::MASK;
            }
            if pkt.ack_req {
                self.schedule_ack(ctx, profile);
            }
            return Outcome::default();
        }
        if q < self.epsn {
            counters.duplicate_request += 1;
            self.schedule_ack(ctx, profile);
            return Outcome::default();
        }
        counters.out_of_sequence += 1;
        if self.nak_outstanding {
            return Outcome::default(); // Go-back-N: one NAK per gap, then silence
        }
        self.nak_outstanding = true;
        self.send_nak(ctx, profile, pkt);
        Outcome { wake: false, nak: true }
    }

    fn send_nak(&mut self, ctx: &mut Ctx, profile: &NicProfile, cause: &Pkt) {
        let mut named = self.epsn;
        let mut violation = false;
        if let Some((x, v)) = self.violation {
            if x == self.epsn {
                named = x + 1;
                violation = true;
                self.violation = None;
                ctx.truth.faults.gbn_violations.push(super::requester::violation_record(v));
            }
        }
        let generation = ctx.rng.latency(profile.nack_gen_write);
        let index = ctx.truth.naks.len() as u32;
        let conn = ctx.conns[self.conn as usize];
        ctx.truth.naks.push(Nak {
            conn: self.conn,
            kind: NakKind::SeqErr,
            from: Side::Responder,
            expected_psn: self.epsn + 1,
            wire_psn: conn.wire_psn(named),
            cause_seq: cause.seq,
            cause_switch_ts_ns: cause.switch_ts_ns,
            model_generation_ns: to_ns(generation),
            model_reaction_ns: None,
            seq: 0,
            switch_ts_ns: 0,
            violation,
        });
        let mut p = Pkt::new(self.conn, Side::Responder, Opcode::RC_ACK, named);
        p.aeth = Some((Syndrome::Nak(NakCode::PsnSequenceError).to_raw(), self.msn));
        p.tag = Tag::Nak(index);
        ctx.at(ctx.now + generation, Ev::Control(Side::Responder, p));
    }

    fn schedule_ack(&mut self, ctx: &mut Ctx, profile: &NicProfile) {
        if !self.ack_pending {
            self.ack_pending = true;
            let at = ctx.now + ctx.rng.latency(profile.ack_delay);
            ctx.at(at, Ev::AckDue(self.conn));
        }
    }

    /// The coalesced ACK is due: it names the latest in-order PSN.
    pub fn ack_due(&mut self) -> Option<Pkt> {
        self.ack_pending = false;
        if self.epsn == 0 {
            return None;
        }
        let mut p = Pkt::new(self.conn, Side::Responder, Opcode::RC_ACK, self.epsn - 1);
        p.aeth = Some((Syndrome::Ack { credit: CREDIT_INVALID }.to_raw(), self.msn));
        Some(p)
    }

    fn on_read_request(&mut self, ctx: &mut Ctx, counters: &mut Counters, profile: &NicProfile, pkt: &Pkt) -> Outcome {
        let q = pkt.psn;
        let len = pkt.reth.map_or(0, |(_, l)| l);
        let count = u64::from(len.div_ceil(self.shape.mtu).max(1));
        if q > self.epsn {
            // A READ request was lost (never by Lumina's events, which spare requests).
            counters.out_of_sequence += 1;
            if !self.nak_outstanding {
                self.nak_outstanding = true;
                self.send_nak(ctx, profile, pkt);
            }
            return Outcome::default();
        }
        let repeat = q < self.epsn;
        if repeat {
            counters.duplicate_request += 1;
        } else {
            self.epsn = q + count;
            self.nak_outstanding = false;
        }
        let delay = if repeat { profile.read_reaction } else { profile.ack_delay };
        let trigger = match pkt.tag {
            Tag::Retransmission(i) => Some(ctx.truth.retransmissions[i as usize].trigger),
            _ => None,
        };
        let delay = ctx.rng.latency(delay);
        if let Some(Trigger::Nak(i)) = trigger {
            ctx.truth.naks[i as usize].model_reaction_ns.get_or_insert(to_ns(delay));
        }
        let ready_at = ctx.now + delay;
        self.jobs.push_back(ReadJob { start: q, next: q, end: q + count, ready_at, trigger });
        Outcome { wake: true, nak: false }
    }

    pub fn next_packet(&mut self, ctx: &mut Ctx, line_gbps: f64) -> Tx {
        let Some(job) = self.jobs.front_mut() else { return Tx::Idle };
        let ready = job.ready_at.max(self.next_tx_at);
        if ready > ctx.now {
            return Tx::Wait(ready);
        }
        let off = job.next;
        let opcode = segment_opcode(SegmentKind::ReadResponse, off - job.start, job.end - job.start);
        job.next += 1;
        let job = *job;
        if job.next == job.end {
            self.jobs.pop_front();
            self.msn = (self.msn + 1) & wire::psn::MASK;
        }
        let i = off % self.shape.pkts;
        let mut p = Pkt::new(self.conn, Side::Responder, opcode, off);
        p.payload_len = self.shape.payload(i);
        if opcode.has_aeth() {
            p.aeth = Some((Syndrome::Ack { credit: CREDIT_INVALID }.to_raw(), self.msn));
        }
        if off < self.resp_max {
            p.retransmission = true;
            if let Some(trigger) = job.trigger {
                let index = ctx.truth.retransmissions.len() as u32;
                ctx.truth.retransmissions.push(Retransmission {
                    conn: self.conn,
                    from: Side::Responder,
                    psn: off + 1,
                    wire_psn: ctx.conns[self.conn as usize].wire_psn(off),
                    opcode: opcode.0,
                    trigger,
                    seq: 0,
                    switch_ts_ns: 0,
                    previous_tx_switch_ts_ns: None,
                });
                p.tag = Tag::Retransmission(index);
            }
        }
        self.resp_max = self.resp_max.max(off + 1);
        if let Some(rp) = self.rp.as_mut() {
            let rate = rp.rate(ctx.now);
            if rate < line_gbps {
                self.next_tx_at = ctx.now + wire_time(p.frame_len(), rate);
            }
        }
        Tx::Packet(p)
    }
}
