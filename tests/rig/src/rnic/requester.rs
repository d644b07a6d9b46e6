//! The RC requester: segments WRITE/SEND messages into packets (or issues READ requests),
//! and recovers losses with Go-back-N (Lumina §4 "Retransmission logic", §6.1):
//! - a NAK-sequence-error for PSN p: after the NIC's NACK reaction time, resend from p —
//!   unless a timeout went back meanwhile, which that go-back then was;
//! - READ: an out-of-sequence response means a gap; after the NIC's READ NACK generation
//!   time, repeat the READ request from the missing PSN (the READ "NACK", §6.1);
//! - no progress for the timeout (IBA: 4.096 µs × 2^timeout, at most retry_cnt retries;
//!   or NVIDIA's adaptive retransmission, §6.3): resend from the oldest unacked PSN —
//!   unless `timeout` is 0, which disables the timer (IBA vol. 1 §9.7.6.1.3): a lost tail
//!   then stalls the QP for good.
//!
//! PSNs here are offsets from the initial PSN (see [`crate::packet::Pkt::psn`]).

use wire::aeth::{NakCode, Syndrome};
use wire::bth::Opcode;

use super::dcqcn::Rp;
use super::{Counters, Ctx, Outcome, Shape, Tx};
use crate::config::Verb;
use crate::event::Ev;
use crate::faults::{GbnViolation, GbnViolationKind};
use crate::packet::{ends_message, segment_opcode, Pkt, SegmentKind, Side, Tag};
use crate::profile::NicProfile;
use crate::sim::{ns, to_ns, wire_time, Ps};
use crate::truth::{FiredViolation, Nak, NakKind, QpError, Retransmission, Timeout, Trigger};

/// READ double-NAK fault: the second repeat follows the first by this much — after the
/// first has gone out (a READ request takes well under 1 µs to send), before its responses
/// can be back (every profile's READ reaction is at least 2 µs).
const SECOND_REPEAT_AFTER: Ps = ns(1_000);

/// Retransmission timer settings of a QP.
#[derive(Debug, Clone)]
pub struct TimerPolicy {
    /// IBA timeout exponent.
    pub exponent: u8,
    /// NVIDIA adaptive retransmission timeouts (empty: IBA behaviour).
    pub adaptive: &'static [u64],
    /// Timeouts tolerated before the QP goes to error.
    pub retry_limit: u32,
}

impl TimerPolicy {
    /// Exponent 0 is an infinite timeout: the transport timer is disabled (IBA vol. 1
    /// §9.7.6.1.3, ibv_modify_qp(3)). Adaptive retransmission varies the timer's value, it
    /// does not start a timer the QP does not run: no timer retransmission in either mode.
    pub fn disabled(&self) -> bool {
        self.exponent == 0
    }

    /// The timeout armed after `timeouts` consecutive timeouts.
    pub fn timeout(&self, timeouts: u32) -> Ps {
        if self.adaptive.is_empty() {
            // 4.096 µs × 2^t (IBA vol. 1 §9.7.6.1.3), the same for every retry.
            return (4_096_000u64) << self.exponent;
        }
        let i = timeouts as usize;
        match self.adaptive.get(i) {
            Some(&v) => ns(v),
            None => {
                let last = *self.adaptive.last().expect("non-empty");
                ns(last) << (i + 1 - self.adaptive.len()).min(20)
            }
        }
    }
}

#[derive(Debug)]
pub struct ReqQp {
    pub conn: u32,
    shape: Shape,
    timer: TimerPolicy,
    pub rp: Option<Rp>,
    /// Messages posted and completed so far.
    pub posted: u64,
    pub completed: u64,
    pub post_at: Vec<Ps>,
    pub complete_at: Vec<Ps>,
    snd_nxt: u64,
    snd_una: u64,
    sent_max: u64,
    /// READ: next response PSN expected, and whether a gap is being recovered.
    read_expect: u64,
    read_recovering: bool,
    /// When the retransmission timer expires (None: not running), and when it started.
    deadline: Option<Ps>,
    timer_started: Ps,
    /// The time of the one timer event this QP has queued. Re-arming only moves
    /// `deadline`; an event that fires early re-queues itself, so a QP never has more than
    /// one event in the queue however often its timer restarts.
    timer_event_at: Option<Ps>,
    /// Expiries since the requester last heard of forward progress: IBA's retry counter,
    /// started over by any ACK or READ response that acknowledges something new (rxe
    /// `reset_retry_counters`; NVIDIA fails a QP that makes "no forward progress").
    retries: u32,
    /// Consecutive timeouts of the request (message) that was the oldest unacked when the
    /// timer last fired; `timed_out` is its last offset. Reset once that request is
    /// acknowledged: the index into the adaptive timeouts, which the paper saw advance while
    /// the same tail packet kept being dropped (§6.3), though the first go-back's duplicates
    /// of the packets before it were acknowledged.
    adaptive_step: u32,
    timed_out: Option<u64>,
    goback_pending: Option<u64>,
    /// NAK truth indices whose go-back is scheduled and has not run yet, and those a
    /// timeout superseded before they ran.
    nak_gobacks: Vec<u32>,
    superseded: Vec<u32>,
    trigger: Option<Trigger>,
    pub failed: bool,
    next_tx_at: Ps,
    /// GBN-violation fault still to fire (at offset x: OOO data, or a READ NAK fault at
    /// the first gap expecting x), then the offset of the held-back OOO packet.
    violation: Option<(u64, GbnViolation)>,
    held_back: Option<u64>,
}

impl ReqQp {
    pub fn new(conn: u32, shape: Shape, timer: TimerPolicy, rp: Option<Rp>) -> ReqQp {
        ReqQp {
            conn,
            shape,
            timer,
            rp,
            posted: 0,
            completed: 0,
            post_at: Vec::new(),
            complete_at: Vec::new(),
            snd_nxt: 0,
            snd_una: 0,
            sent_max: 0,
            read_expect: 0,
            read_recovering: false,
            deadline: None,
            timer_started: 0,
            timer_event_at: None,
            retries: 0,
            adaptive_step: 0,
            timed_out: None,
            goback_pending: None,
            nak_gobacks: Vec::new(),
            superseded: Vec::new(),
            trigger: None,
            failed: false,
            next_tx_at: 0,
            violation: None,
            held_back: None,
        }
    }

    /// Arms the out-of-order-data or READ NAK fault at relative PSN `v.psn`.
    pub fn set_violation(&mut self, v: GbnViolation) {
        self.violation = Some((u64::from(v.psn) - 1, v));
    }

    pub fn post(&mut self, n: u64, now: Ps) {
        let n = n.min(self.shape.msgs - self.posted);
        for _ in 0..n {
            self.post_at.push(now);
        }
        self.posted += n;
    }

    /// All posted messages are complete (or the QP failed).
    pub fn idle(&self) -> bool {
        self.failed || self.completed == self.posted
    }

    fn end(&self) -> u64 {
        self.posted * self.shape.pkts
    }

    pub fn next_packet(&mut self, ctx: &mut Ctx, line_gbps: f64) -> Tx {
        if self.failed || self.snd_nxt >= self.end() {
            return Tx::Idle;
        }
        if self.next_tx_at > ctx.now {
            return Tx::Wait(self.next_tx_at);
        }
        let mut pkt = match self.shape.verb {
            Verb::Read => self.read_request(ctx),
            Verb::Write | Verb::Send => self.data_packet(ctx),
        };
        pkt.from = Side::Requester;
        if let Some(rp) = self.rp.as_mut() {
            let rate = rp.rate(ctx.now);
            if rate < line_gbps {
                self.next_tx_at = ctx.now + wire_time(pkt.frame_len(), rate);
            }
        }
        if self.deadline.is_none() {
            self.arm_timer(ctx);
        }
        Tx::Packet(pkt)
    }

    fn data_packet(&mut self, ctx: &mut Ctx) -> Pkt {
        let mut off = self.snd_nxt;
        let mut first_time = off >= self.sent_max;
        let mut tag = Tag::None;
        if let Some((x, v)) = self.violation.filter(|(_, v)| v.kind == GbnViolationKind::OooData) {
            if off == x && self.sent_max == x && x + 1 < self.end() {
                // GBN-violation fault: send x+1 before x, both first transmissions.
                off = x + 1;
                self.violation = None;
                self.held_back = Some(x);
                tag = Tag::Violation(ctx.truth.faults.gbn_violations.len() as u32);
                ctx.truth.faults.gbn_violations.push(violation_record(v));
            }
        }
        if self.held_back == Some(off) && tag == Tag::None {
            self.held_back = None;
            first_time = true;
            self.snd_nxt = off + 2;
        } else if tag == Tag::None {
            self.snd_nxt = off + 1;
        }
        self.sent_max = self.sent_max.max(off + 1);
        let (m, i) = (off / self.shape.pkts, off % self.shape.pkts);
        let kind = if self.shape.verb == Verb::Write { SegmentKind::Write } else { SegmentKind::Send };
        let opcode = segment_opcode(kind, i, self.shape.pkts);
        let mut p = Pkt::new(self.conn, Side::Requester, opcode, off);
        p.payload_len = self.shape.payload(i);
        if matches!(opcode, Opcode::RC_WRITE_FIRST | Opcode::RC_WRITE_ONLY) {
            p.reth = Some((self.shape.va(m, i), self.shape.size));
        }
        // AckReq on the last packet of a message: the responder ACKs at least there.
        p.ack_req = ends_message(opcode);
        p.tag = tag;
        if !first_time {
            self.note_retransmission(ctx, &mut p);
        }
        p
    }

    fn read_request(&mut self, ctx: &mut Ctx) -> Pkt {
        let off = self.snd_nxt;
        let (m, i) = (off / self.shape.pkts, off % self.shape.pkts);
        let mut p = Pkt::new(self.conn, Side::Requester, Opcode::RC_READ_REQUEST, off);
        p.reth = Some((self.shape.va(m, i), self.shape.remaining(i)));
        p.ack_req = true;
        let retransmission = off < self.sent_max;
        self.snd_nxt = (m + 1) * self.shape.pkts;
        self.sent_max = self.sent_max.max(self.snd_nxt);
        if retransmission {
            self.note_retransmission(ctx, &mut p);
        }
        p
    }

    fn note_retransmission(&mut self, ctx: &mut Ctx, p: &mut Pkt) {
        let trigger = self.trigger.expect("a resend always follows a go-back");
        let index = ctx.truth.retransmissions.len() as u32;
        ctx.truth.retransmissions.push(Retransmission {
            conn: self.conn,
            from: Side::Requester,
            psn: p.psn + 1,
            wire_psn: ctx.conns[self.conn as usize].wire_psn(p.psn),
            opcode: p.opcode.0,
            trigger,
            seq: 0,
            switch_ts_ns: 0,
            previous_tx_switch_ts_ns: None,
        });
        p.retransmission = true;
        p.tag = Tag::Retransmission(index);
    }

    fn arm_timer(&mut self, ctx: &mut Ctx) {
        if self.timer.disabled() {
            return;
        }
        let at = ctx.now + self.timer.timeout(self.adaptive_step);
        self.deadline = Some(at);
        self.timer_started = ctx.now;
        self.queue_timer_event(ctx, at);
    }

    fn queue_timer_event(&mut self, ctx: &mut Ctx, at: Ps) {
        if self.timer_event_at.is_none_or(|e| e > at) {
            ctx.q.push_far(at, Ev::Timer { conn: self.conn });
            self.timer_event_at = Some(at);
        }
    }

    fn disarm_timer(&mut self) {
        self.deadline = None;
    }

    /// An ACK/NAK or READ response arrived.
    pub fn on_packet(&mut self, ctx: &mut Ctx, counters: &mut Counters, profile: &NicProfile, pkt: &Pkt) -> Outcome {
        if self.failed {
            return Outcome::default();
        }
        match pkt.opcode {
            Opcode::RC_ACK => Outcome { wake: self.on_ack(ctx, counters, profile, pkt), nak: false },
            op if op.0 >= Opcode::RC_READ_RESPONSE_FIRST.0 && op.0 <= Opcode::RC_READ_RESPONSE_ONLY.0 => {
                self.on_read_response(ctx, counters, profile, pkt)
            }
            _ => Outcome::default(),
        }
    }

    fn on_ack(&mut self, ctx: &mut Ctx, counters: &mut Counters, profile: &NicProfile, pkt: &Pkt) -> bool {
        let (syndrome, _msn) = pkt.aeth.unwrap_or((0, 0));
        match Syndrome::from_raw(syndrome) {
            Syndrome::Ack { .. } => self.progress(ctx, pkt.psn + 1),
            Syndrome::Nak(NakCode::PsnSequenceError) => {
                counters.packet_seq_err += 1;
                // The NAK acknowledges everything before the PSN it names.
                let wake = self.progress(ctx, pkt.psn);
                if self.goback_pending != Some(pkt.psn) {
                    self.goback_pending = Some(pkt.psn);
                    let Tag::Nak(index) = pkt.tag else { unreachable!("NAKs carry their truth index") };
                    let delay = ctx.rng.latency(profile.nack_reaction);
                    ctx.truth.naks[index as usize].model_reaction_ns = Some(to_ns(delay));
                    self.nak_gobacks.push(index);
                    let ev = Ev::GoBack { conn: self.conn, psn: pkt.psn, trigger: Trigger::Nak(index) };
                    ctx.at(ctx.now + delay, ev);
                }
                wake
            }
            _ => false,
        }
    }

    fn on_read_response(&mut self, ctx: &mut Ctx, counters: &mut Counters, profile: &NicProfile, pkt: &Pkt) -> Outcome {
        let q = pkt.psn;
        if q == self.read_expect {
            self.read_expect += 1;
            self.read_recovering = false;
            return Outcome { wake: self.progress(ctx, self.read_expect), nak: false };
        }
        if q > self.read_expect && !self.read_recovering {
            self.read_recovering = true;
            counters.implied_nak_seq_err += 1;
            self.read_gap(ctx, profile, pkt);
        }
        Outcome::default()
    }

    /// §6.1: the requester's "NACK" for READ is a new READ request from the gap, after the
    /// NIC's READ NACK generation time — unless a READ NAK fault fires at this gap.
    fn read_gap(&mut self, ctx: &mut Ctx, profile: &NicProfile, pkt: &Pkt) {
        let fault = self.take_read_violation();
        if let Some(v) = fault.filter(|v| v.kind == GbnViolationKind::ReadNoNak) {
            // No repeat: the timer, still running since the last progress, recovers. The
            // violation is the gap left unanswered.
            ctx.truth.faults.gbn_violations.push(FiredViolation { seq: pkt.seq, ..violation_record(v) });
            return;
        }
        let generation = ctx.rng.latency(profile.nack_gen_read);
        self.read_nak(ctx, pkt, generation, false);
        if let Some(v) = fault {
            // The second repeat is named by its NAK's seq at the end of the run.
            self.read_nak(ctx, pkt, generation + SECOND_REPEAT_AFTER, true);
            ctx.truth.faults.gbn_violations.push(violation_record(v));
        }
        // No CNP with it: Lumina's CNP checker counts NAK packets only.
    }

    /// The READ NAK fault armed for the gap now found (expecting `read_expect`), if any.
    fn take_read_violation(&mut self) -> Option<GbnViolation> {
        let (x, v) = self.violation?;
        let read = matches!(v.kind, GbnViolationKind::ReadNoNak | GbnViolationKind::ReadDoubleNak);
        if !read || x != self.read_expect {
            return None;
        }
        self.violation = None;
        Some(v)
    }

    /// Repeats the READ request from the gap `after` from now: a NAK (`violation`: the
    /// double-NAK fault's second one) that `pkt` caused.
    fn read_nak(&mut self, ctx: &mut Ctx, pkt: &Pkt, after: Ps, violation: bool) {
        let index = ctx.truth.naks.len() as u32;
        ctx.truth.naks.push(Nak {
            conn: self.conn,
            kind: NakKind::ReadReissue,
            from: Side::Requester,
            expected_psn: self.read_expect + 1,
            wire_psn: ctx.conns[self.conn as usize].wire_psn(self.read_expect),
            cause_seq: pkt.seq,
            cause_switch_ts_ns: pkt.switch_ts_ns,
            model_generation_ns: to_ns(after),
            model_reaction_ns: None,
            seq: 0,
            switch_ts_ns: 0,
            violation,
        });
        let ev = Ev::GoBack { conn: self.conn, psn: self.read_expect, trigger: Trigger::Nak(index) };
        ctx.at(ctx.now + after, ev);
        // A timeout resending from the gap before this repeat is due makes it moot, as for
        // a WRITE NAK's go-back (E810: 83 ms against a 67 ms timer).
        self.nak_gobacks.push(index);
    }

    /// Everything before offset `una` is acknowledged.
    fn progress(&mut self, ctx: &mut Ctx, una: u64) -> bool {
        if una <= self.snd_una {
            return false;
        }
        self.snd_una = una.min(self.sent_max);
        self.retries = 0;
        if self.timed_out.is_some_and(|t| self.snd_una > t) {
            self.adaptive_step = 0;
            self.timed_out = None;
        }
        while self.completed < self.posted && (self.completed + 1) * self.shape.pkts <= self.snd_una {
            self.completed += 1;
            self.complete_at.push(ctx.now);
        }
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        self.disarm_timer();
        if self.snd_una < self.sent_max {
            self.arm_timer(ctx);
        }
        true
    }

    /// The NACK reaction (or READ gap detection) delay has passed: resend from `psn` —
    /// unless a timeout has gone back since the NAK arrived (see [`Self::supersede_naks`]).
    pub fn go_back(&mut self, psn: u64, trigger: Trigger) -> bool {
        if let Trigger::Nak(i) = trigger {
            if let Some(k) = self.superseded.iter().position(|&s| s == i) {
                self.superseded.swap_remove(k);
                return false;
            }
            self.nak_gobacks.retain(|&n| n != i);
        }
        if self.goback_pending == Some(psn) {
            self.goback_pending = None;
        }
        if self.failed {
            return false;
        }
        let to = psn.max(self.snd_una);
        if to < self.snd_nxt {
            self.snd_nxt = to;
            self.trigger = Some(trigger);
            if self.shape.verb == Verb::Read {
                self.read_recovering = true;
            }
        }
        true
    }

    /// A timeout goes back to the oldest unacknowledged PSN, at or before the PSN of any NAK
    /// whose reaction is still running: that NAK's go-back is done, and is not done again
    /// when the reaction delay ends. One retry sequence at a time, restarted only by a
    /// timeout (rxe: "if we've started a retry, don't start another retry sequence, unless
    /// this is a timeout"). Doing it again resent the same PSNs a second time or, with an
    /// ACK that arrived meanwhile clamping it, went on from where the timeout's resend was,
    /// a go-back the truth counted as NAK-triggered but no trace can show.
    fn supersede_naks(&mut self) {
        self.superseded.append(&mut self.nak_gobacks);
        self.goback_pending = None;
    }

    /// The QP's timer event fired: the timer expires if its deadline has come.
    pub fn on_timer(&mut self, ctx: &mut Ctx, counters: &mut Counters) -> bool {
        if self.timer_event_at != Some(ctx.now) {
            return false; // superseded by an earlier event
        }
        self.timer_event_at = None;
        match self.deadline {
            Some(d) if d > ctx.now => {
                self.queue_timer_event(ctx, d);
                return false;
            }
            None => return false,
            Some(_) => {}
        }
        self.deadline = None;
        if self.failed || self.snd_una >= self.sent_max {
            return false;
        }
        let armed = self.timer.timeout(self.adaptive_step);
        self.adaptive_step += 1;
        self.retries += 1;
        self.timed_out = Some((self.snd_una / self.shape.pkts + 1) * self.shape.pkts - 1);
        let retried = self.retries <= self.timer.retry_limit;
        // mlx5 and rxe: an expiry that is retried is a local ACK timeout; the one that
        // exhausts the retry count is counted apart, as the QP's transport error.
        if retried {
            counters.local_ack_timeout_err += 1;
        } else {
            counters.req_transport_retries_exceeded += 1;
        }
        let index = ctx.truth.timeouts.len() as u32;
        ctx.truth.timeouts.push(Timeout {
            conn: self.conn,
            attempt: self.retries,
            model_timeout_ns: to_ns(armed),
            oldest_unacked_psn: self.snd_una + 1,
            started_at_ns: to_ns(self.timer_started),
            fired_at_ns: to_ns(ctx.now),
            last_tx_switch_ts_ns: ctx.last_switch_ts[self.conn as usize][Side::Requester.idx()],
            retried,
        });
        if !retried {
            self.failed = true;
            ctx.truth.qp_errors.push(QpError {
                conn: self.conn,
                reason: format!("retry count exceeded: {} timeouts, {} retries", self.retries, self.retries - 1),
                at_ns: to_ns(ctx.now),
            });
            return false;
        }
        self.snd_nxt = self.snd_una;
        self.trigger = Some(Trigger::Timeout(index));
        self.supersede_naks();
        if self.shape.verb == Verb::Read {
            self.read_expect = self.snd_una;
            self.read_recovering = true;
        }
        true
    }
}

/// A fired GBN violation for the truth, before its packet reaches the switch.
pub fn violation_record(v: GbnViolation) -> FiredViolation {
    FiredViolation { violation: v, conn: v.qpn - 1, seq: 0 }
}
