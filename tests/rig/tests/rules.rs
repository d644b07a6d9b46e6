//! Property tests: whatever the configuration and seed, the rig obeys its own rules —
//! every RoCE packet mirrored once with consecutive seqs, PSN continuity outside events,
//! ITER by Lumina's rule, every drop recovered within the NIC profile's bounds, CNP
//! spacing never below the limiter's interval, counters that agree with what happened.

mod common;

use std::collections::HashMap;

use common::{ev, run, Knobs};
use proptest::prelude::*;
use rig::config::{EventKind, RigConfig, Verb};
use rig::packet::Side;
use rig::profile::{CnpInterval, CnpScope, NicKind};
use rig::rig::PacketRecord;
use rig::truth::{RecoveryKind, Trigger};
use rig::RunResult;

const DATA_OPCODES_MAX: u8 = 0x10;

fn data_sender(verb: Verb) -> Side {
    if verb == Verb::Read {
        Side::Responder
    } else {
        Side::Requester
    }
}

fn is_data(p: &PacketRecord) -> bool {
    p.opcode <= DATA_OPCODES_MAX && p.opcode != 0x0c
}

fn by_seq(r: &RunResult) -> Vec<PacketRecord> {
    let mut v = r.packets.clone();
    v.sort_by_key(|p| p.seq);
    v
}

/// Every packet mirrored exactly once, seqs consecutive from the first, copies split over
/// the dump hosts as the records say.
fn check_mirroring(cfg: &RigConfig, r: &RunResult) {
    let pkts = by_seq(r);
    assert_eq!(pkts.len() as u64, r.stats.packets);
    for (i, p) in pkts.iter().enumerate() {
        assert_eq!(p.seq, cfg.rig.first_mirror_seq + i as u32, "seqs are consecutive");
    }
    let captured: usize = r.captured.iter().map(Vec::len).sum();
    assert_eq!(captured, pkts.len());
    for (host, frames) in r.captured.iter().enumerate() {
        let want = pkts.iter().filter(|p| p.dump_host == Some(host)).count();
        assert_eq!(frames.len(), want);
    }
    let ingress = r.switch.requester.ingress + r.switch.responder.ingress;
    let mirrored: u64 = r.switch.mirrors.iter().map(|m| m.egress).sum();
    assert_eq!(ingress, mirrored, "Lumina §3.5 condition (3)");
}

/// Lumina §3.3, written again independently: ITER += 1 when PSN ≤ last PSN (24-bit
/// serial order), starting from ITER 1 and last = IPSN − 1.
fn check_iter(cfg: &RigConfig, r: &RunResult) {
    let sender = data_sender(cfg.traffic.rdma_verb);
    let mut state: HashMap<u32, (u32, u32)> = HashMap::new();
    for p in by_seq(r).iter().filter(|p| p.from == sender && is_data(p)) {
        let ipsn = r.conns[p.conn as usize].requester.ipsn;
        let (iter, last) = state.entry(p.conn).or_insert((1, ipsn.wrapping_sub(1) & 0xff_ffff));
        let diff = p.wire_psn.wrapping_sub(*last) & 0xff_ffff;
        if diff == 0 || diff >= 1 << 23 {
            *iter += 1;
        }
        *last = p.wire_psn;
        assert_eq!(p.iter, Some(*iter), "ITER of seq {}", p.seq);
        if let Some(kind) = p.event {
            let intent = cfg
                .traffic
                .data_pkt_events
                .iter()
                .find(|e| e.qpn == p.conn + 1 && u64::from(e.psn) == p.psn && e.iter == *iter && e.kind == kind);
            assert!(intent.is_some(), "event at seq {} has no intent", p.seq);
        }
    }
    for p in r.packets.iter().filter(|p| p.from != sender || !is_data(p)) {
        assert_eq!(p.iter, None, "only data packets have an ITER");
    }
}

/// First transmissions of data are consecutive from PSN 1; anything at or below the
/// highest PSN sent so far is a retransmission with a trigger.
fn check_psn_continuity(cfg: &RigConfig, r: &RunResult) {
    let sender = data_sender(cfg.traffic.rdma_verb);
    let mut max: HashMap<u32, u64> = HashMap::new();
    for p in by_seq(r).iter().filter(|p| p.from == sender && is_data(p)) {
        let m = max.entry(p.conn).or_insert(0);
        if p.retransmission {
            assert!(p.psn <= *m, "seq {}: a retransmission of a PSN never sent", p.seq);
        } else {
            assert_eq!(p.psn, *m + 1, "seq {}: first transmissions are consecutive", p.seq);
            *m = p.psn;
        }
    }
    for t in &r.truth.timeouts {
        assert_eq!(t.fired_at_ns - t.started_at_ns, t.model_timeout_ns, "a timer fires exactly when it is due");
    }
    for t in &r.truth.retransmissions {
        match t.trigger {
            Trigger::Nak(i) => assert!((i as usize) < r.truth.naks.len()),
            Trigger::Timeout(i) => assert!((i as usize) < r.truth.timeouts.len()),
        }
    }
}

/// Every dropped or corrupted data packet is sent again, and each recovery's latencies
/// are the profile's, plus what links and queues add.
fn check_recovery(cfg: &RigConfig, r: &RunResult) {
    let profile = cfg.requester.nic.kind.profile();
    let resp_profile = cfg.responder.nic.kind.profile();
    let sender = data_sender(cfg.traffic.rdma_verb);
    let pkts = by_seq(r);
    let is_lost = |p: &PacketRecord| matches!(p.event, Some(EventKind::Drop | EventKind::Corrupt));
    for lost in pkts.iter().filter(|p| is_lost(p)) {
        let same = |p: &&PacketRecord| p.conn == lost.conn && p.from == sender && p.psn == lost.psn;
        // A lost redundant copy (the receiver already had that PSN) needs no resend.
        let had_it = pkts.iter().filter(same).any(|p| p.seq < lost.seq && !is_lost(p));
        if r.qps[lost.conn as usize].failed || had_it {
            continue;
        }
        let resent =
            pkts.iter().any(|p| p.seq > lost.seq && p.conn == lost.conn && p.from == sender && p.psn == lost.psn);
        assert!(resent, "PSN {} of conn {} (seq {}) was never sent again", lost.psn, lost.conn, lost.seq);
    }
    // Slack: both links and the switch pipeline, the frames ahead in the transmit
    // queues (one per connection, plus the one on the wire), and the NIC's ACK delay.
    let rig = &cfg.rig;
    let gbps = cfg.rig.link_gbps.unwrap_or(profile.link_gbps.min(resp_profile.link_gbps));
    let mtu_ns = (1_122.0 * 8.0 / gbps).ceil() as u64;
    let slack = 2 * (rig.link_delay_ns + rig.switch_latency_ns) + (u64::from(cfg.traffic.num_connections) + 2) * mtu_ns;
    let window = u64::from(cfg.traffic.tx_depth * cfg.traffic.num_connections) * cfg.traffic.pkts_per_msg() * mtu_ns;
    for rec in &r.truth.recoveries {
        match rec.kind {
            RecoveryKind::Nack | RecoveryKind::ReadNack => {
                let gen_profile =
                    if rec.kind == RecoveryKind::Nack { resp_profile.nack_gen_write } else { profile.nack_gen_read };
                let reaction_profile =
                    if rec.kind == RecoveryKind::Nack { profile.nack_reaction } else { resp_profile.read_reaction };
                let (g, m) = (rec.observed_generation_ns.unwrap(), rec.model_generation_ns.unwrap());
                assert!(gen_profile.contains(m), "generation {m} outside the profile");
                assert!(g >= m && g <= m + slack, "observed generation {g} vs model {m} (slack {slack})");
                let (o, m) = (rec.observed_reaction_ns.unwrap(), rec.model_reaction_ns.unwrap());
                assert!(reaction_profile.contains(m), "reaction {m} outside the profile");
                // A READ responder answers in order: the repeat waits behind queued responses.
                let queued = if rec.kind == RecoveryKind::ReadNack { window } else { 0 };
                assert!(o >= m && o <= m + slack + queued, "observed reaction {o} vs model {m} (slack {slack})");
            }
            RecoveryKind::Timeout => {
                // Exact: the timer fires model_timeout after it (re)started (checked in
                // check_psn_continuity). From the switch, the gap since the QP's last send
                // is at most that plus a round trip and the responses still in flight
                // (the timer restarts at the last progress, IBA).
                let (o, m) = (rec.observed_timeout_ns.unwrap(), rec.model_timeout_ns.unwrap());
                let later = 2 * (slack + profile.ack_delay.max_ns) + window + resp_profile.read_reaction.max_ns;
                assert!(o > 0 && o <= m + later, "observed timeout {o} vs model {m}");
            }
        }
    }
}

/// The NP never sends two CNPs of one limiter closer than its interval (Lumina §6.3).
fn check_cnp_spacing(cfg: &RigConfig, r: &RunResult) {
    for side in Side::BOTH {
        let host = if side == Side::Requester { &cfg.requester } else { &cfg.responder };
        let profile = host.nic.kind.profile();
        let interval = match profile.cnp_interval {
            CnpInterval::Configured => u64::from(host.roce_parameters.min_time_between_cnps) * 1_000,
            CnpInterval::Hidden { ns } => ns,
        };
        let mut last: HashMap<u64, u64> = HashMap::new();
        for c in r.truth.cnps.iter().filter(|c| c.from == side) {
            let conn = &r.conns[c.conn as usize];
            let (local, remote) = if side == Side::Requester {
                (conn.requester, conn.responder)
            } else {
                (conn.responder, conn.requester)
            };
            let key = match profile.cnp_scope {
                CnpScope::Port => 0,
                CnpScope::DestIp => u64::from(u32::from(remote.ip)),
                CnpScope::Qp => u64::from(local.qpn),
            };
            if let Some(prev) = last.insert(key, c.decided_at_ns) {
                assert!(
                    c.decided_at_ns >= prev + interval,
                    "CNPs {prev} and {} ns closer than {interval}",
                    c.decided_at_ns
                );
            }
        }
        for s in r.truth.suppressed_cnps.iter().filter(|s| s.from == side) {
            assert!((s.limited_by as usize) < r.truth.cnps.len());
        }
    }
}

fn check_counters(cfg: &RigConfig, r: &RunResult) {
    let [req, resp] = &r.nics;
    let cnps_from = |s| r.truth.cnps.iter().filter(|c| c.from == s).count() as u64;
    assert_eq!(req.np_cnp_sent, cnps_from(Side::Requester));
    assert_eq!(resp.np_cnp_sent, cnps_from(Side::Responder));
    // Every CNP received counts once: handled by an enabled reaction point, else ignored.
    for (nic, host, from) in [(req, &cfg.requester, Side::Responder), (resp, &cfg.responder, Side::Requester)] {
        assert_eq!(nic.rp_cnp_handled + nic.rp_cnp_ignored, cnps_from(from));
        let unused = if host.roce_parameters.rp_enabled() { nic.rp_cnp_ignored } else { nic.rp_cnp_handled };
        assert_eq!(unused, 0);
    }
    let retried = r.truth.timeouts.iter().filter(|t| t.retried).count() as u64;
    assert_eq!(req.local_ack_timeout_err, retried);
    assert_eq!(req.req_transport_retries_exceeded, r.truth.qp_errors.len() as u64);
    assert_eq!(retried + req.req_transport_retries_exceeded, r.truth.timeouts.len() as u64);
    let seq_err = r.truth.naks.iter().filter(|n| n.kind == rig::truth::NakKind::SeqErr).count() as u64;
    assert_eq!(req.packet_seq_err, seq_err, "every NAK reaches the requester");
    assert!(resp.out_of_sequence >= seq_err);
    let read_naks = r.truth.naks.len() as u64 - seq_err;
    assert_eq!(req.implied_nak_seq_err, read_naks);
    let corrupt = r.packets.iter().filter(|p| p.event == Some(EventKind::Corrupt)).count() as u64;
    assert_eq!(req.rx_icrc_encapsulated + resp.rx_icrc_encapsulated, corrupt);
    let ecn = r.packets.iter().filter(|p| p.event == Some(EventKind::Ecn)).count() as u64;
    assert_eq!(req.np_ecn_marked_roce_packets + resp.np_ecn_marked_roce_packets, ecn);
    let sent = r.packets.iter().filter(|p| p.from == Side::Requester).count() as u64;
    assert_eq!(req.tx_packets, sent);
    assert_eq!(r.truth.events.len(), r.packets.iter().filter(|p| p.event.is_some()).count());
    let fired: std::collections::HashSet<_> = r.truth.events.iter().map(|e| (e.qpn, e.psn, e.iter, e.kind)).collect();
    for e in &cfg.traffic.data_pkt_events {
        let matched = fired.contains(&(e.qpn, e.psn, e.iter, e.kind));
        assert_eq!(matched, !r.truth.unmatched_events.contains(e), "{e:?}");
    }
}

fn check_all(cfg: &RigConfig) -> RunResult {
    let r = run(cfg);
    check_mirroring(cfg, &r);
    check_iter(cfg, &r);
    check_psn_continuity(cfg, &r);
    check_recovery(cfg, &r);
    check_cnp_spacing(cfg, &r);
    check_counters(cfg, &r);
    r
}

fn knobs() -> impl Strategy<Value = Knobs> {
    let verb = prop_oneof![Just(Verb::Write), Just(Verb::Send), Just(Verb::Read)];
    let nic = prop_oneof![Just(NicKind::Cx4Lx), Just(NicKind::Cx5), Just(NicKind::Cx6Dx), Just(NicKind::E810)];
    let kind = prop_oneof![Just(EventKind::Drop), Just(EventKind::Ecn), Just(EventKind::Corrupt)];
    (
        (any::<u64>(), verb, nic, 1u32..5, 1u32..7, 1u32..24),
        (1u32..3, any::<bool>(), 0u32..8, any::<bool>(), any::<bool>()),
        proptest::collection::vec((any::<u32>(), any::<u32>(), kind, 1u32..4), 0..12),
    )
        .prop_map(|((seed, verb, nic, conns, msgs, msg_pkts), (tx_depth, barrier, cnp, slow, multi), evs)| Knobs {
            seed,
            verb,
            nic,
            conns,
            msgs,
            msg_pkts,
            tx_depth,
            barrier,
            min_time_between_cnps: cnp,
            slow_restart: slow,
            multi_gid: multi,
            // Short timeouts (4.096 µs × 2^8 ≈ 1 ms) so tail losses recover quickly.
            timeout: 8,
            events: {
                let mut seen = std::collections::HashSet::new();
                evs.into_iter()
                    .map(|(q, p, k, i)| ev(1 + q % conns, 1 + p % (msgs * msg_pkts), k, i))
                    .filter(|e| seen.insert((e.qpn, e.psn, e.iter)))
                    .collect()
            },
            ..Knobs::default()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_rig_obeys_its_rules(k in knobs()) {
        let cfg = k.config();
        check_all(&cfg);
    }
}

#[test]
fn papers_listing_obeys_the_rules() {
    let cfg =
        RigConfig::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/lumina-listing.yaml")))
            .unwrap();
    let r = check_all(&cfg);
    // Listing 2: ECN on QP 1 PSN 4, drop QP 2 PSN 5 twice (ITER 1 and 2).
    assert_eq!(r.truth.events.len(), 3);
    assert!(r.truth.unmatched_events.is_empty());
    let drops: Vec<_> = r.truth.events.iter().filter(|e| e.kind == EventKind::Drop).map(|e| e.iter).collect();
    assert_eq!(drops, [1, 2]);
}

#[test]
fn same_seed_same_run_other_seed_other_qpns() {
    let k = Knobs { conns: 2, events: vec![ev(1, 3, EventKind::Drop, 1)], ..Knobs::default() };
    let (a, b) = (run(&k.config()), run(&k.config()));
    assert_eq!(a.captured, b.captured);
    let c = run(&Knobs { seed: 2, ..k }.config());
    assert_ne!(a.conns[0].requester.qpn, c.conns[0].requester.qpn);
}

#[test]
fn every_verb_and_nic_completes_its_messages() {
    for verb in [Verb::Write, Verb::Send, Verb::Read] {
        for nic in NicKind::ALL {
            let k =
                Knobs { verb, nic, conns: 2, msgs: 3, events: vec![ev(2, 5, EventKind::Drop, 1)], ..Knobs::default() };
            let r = check_all(&k.config());
            for q in &r.qps {
                assert_eq!((q.posted, q.completed, q.failed), (3, 3, false), "{verb:?} on {nic:?}");
            }
            assert_eq!(r.truth.recoveries.len(), 1, "{verb:?} on {nic:?}: one drop, one recovery");
        }
    }
}

/// Every packet of every QP ECN-marked: the limiter must hold CNPs to its interval and
/// scope (Lumina §6.3): one stream per port (CX5), per destination IP (CX4 Lx), per QP
/// (E810, at its hidden 50 µs whatever is configured).
#[test]
fn ecn_storm_respects_the_cnp_limiter_of_each_nic() {
    for (nic, multi_gid) in
        [(NicKind::Cx5, true), (NicKind::Cx4Lx, false), (NicKind::Cx4Lx, true), (NicKind::E810, false)]
    {
        let (conns, msg_pkts, msgs) = (4, 16, 8);
        let events =
            (1..=conns).flat_map(|q| (1..=msg_pkts * msgs).map(move |p| ev(q, p, EventKind::Ecn, 1))).collect();
        let k = Knobs { nic, conns, msg_pkts, msgs, multi_gid, min_time_between_cnps: 4, events, ..Knobs::default() };
        let cfg = k.config();
        let r = check_all(&cfg);
        let cnps = r.truth.cnps.len();
        assert!(!r.truth.suppressed_cnps.is_empty(), "{nic:?}: line-rate marks exceed the limiter");
        let keys: std::collections::HashSet<u32> = r.truth.cnps.iter().map(|c| c.conn).collect();
        match (nic, multi_gid) {
            // One limiter for the port: CNPs of all QPs interleave on one 4 µs grid.
            (NicKind::Cx5, _) | (NicKind::Cx4Lx, false) => {
                let t: Vec<u64> = r.truth.cnps.iter().map(|c| c.decided_at_ns).collect();
                assert!(t.windows(2).all(|w| w[1] >= w[0] + 4_000), "{nic:?}");
            }
            // One per QP (E810) or per distinct IP (CX4 Lx with multi-gid): every QP gets CNPs.
            _ => assert_eq!(keys.len(), conns as usize, "{nic:?} multi-gid {multi_gid}"),
        }
        if nic == NicKind::E810 {
            for q in 0..conns {
                let t: Vec<u64> = r.truth.cnps.iter().filter(|c| c.conn == q).map(|c| c.decided_at_ns).collect();
                assert!(t.windows(2).all(|w| w[1] >= w[0] + 50_000), "E810's hidden 50 µs interval");
            }
        }
        assert!(cnps > 0);
    }
}
