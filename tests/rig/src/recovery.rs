//! The latency breakdown of each loss recovery (Lumina §4 Figure 5), derived from the
//! run's NAKs, timeouts and retransmissions once every packet has its switch timestamp.

use std::collections::HashMap;

use crate::packet::Side;
use crate::truth::{NakKind, Recovery, RecoveryKind, Retransmission, Trigger, Truth};

/// Switch-clock difference `later − earlier` on the 48-bit clock.
pub fn ts_delta(earlier: u64, later: u64) -> u64 {
    later.wrapping_sub(earlier) & wire::mirror::TIMESTAMP_MAX
}

/// The first retransmission (with a copy) of each trigger and sender, in one pass: runs
/// can hold millions of retransmissions.
fn firsts(retx: &[Retransmission]) -> HashMap<(Trigger, Side), &Retransmission> {
    let mut m = HashMap::new();
    for r in retx.iter().filter(|r| r.seq != 0) {
        m.entry((r.trigger, r.from)).or_insert(r);
    }
    m
}

pub fn fill(truth: &mut Truth) {
    let mut out = Vec::new();
    let index = firsts(&truth.retransmissions);
    let first = |trigger, from| index.get(&(trigger, from)).copied();
    for (i, nak) in truth.naks.iter_mut().enumerate() {
        let trigger = Trigger::Nak(i as u32);
        let (kind, request, data) = match nak.kind {
            NakKind::SeqErr => (RecoveryKind::Nack, None, first(trigger, Side::Requester)),
            // The repeated READ request is the NAK; the data is the responder's resend.
            NakKind::ReadReissue => {
                (RecoveryKind::ReadNack, first(trigger, Side::Requester), first(trigger, Side::Responder))
            }
        };
        if let Some(req) = request {
            (nak.seq, nak.switch_ts_ns) = (req.seq, req.switch_ts_ns);
        }
        let Some(data) = data else { continue };
        let nak_seen = nak.seq != 0;
        out.push(Recovery {
            conn: nak.conn,
            kind,
            trigger,
            psn: data.psn,
            first_retransmission_seq: data.seq,
            model_generation_ns: Some(nak.model_generation_ns),
            model_reaction_ns: nak.model_reaction_ns,
            model_timeout_ns: None,
            observed_generation_ns: nak_seen.then(|| ts_delta(nak.cause_switch_ts_ns, nak.switch_ts_ns)),
            observed_reaction_ns: nak_seen.then(|| ts_delta(nak.switch_ts_ns, data.switch_ts_ns)),
            observed_timeout_ns: None,
        });
    }
    for (i, t) in truth.timeouts.iter().enumerate() {
        let trigger = Trigger::Timeout(i as u32);
        let Some(data) = first(trigger, Side::Requester) else { continue };
        out.push(Recovery {
            conn: t.conn,
            kind: RecoveryKind::Timeout,
            trigger,
            psn: data.psn,
            first_retransmission_seq: data.seq,
            model_generation_ns: None,
            model_reaction_ns: None,
            model_timeout_ns: Some(t.model_timeout_ns),
            observed_generation_ns: None,
            observed_reaction_ns: None,
            // From the requester's last packet before the retransmission at the switch, as
            // the trace shows it: one in flight when the timer fired counts too.
            observed_timeout_ns: data.previous_tx_switch_ts_ns.map(|p| ts_delta(p, data.switch_ts_ns)),
        });
    }
    out.sort_by_key(|r| r.first_retransmission_seq);
    truth.recoveries = out;
}
