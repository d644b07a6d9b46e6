//! The NIC profiles reproduce Lumina's published measurements (§6), as Lumina measures
//! them: from switch timestamps of the mirrored trace.

mod common;

use common::{ev, run, Knobs};
use rig::config::{EventKind, Verb};
use rig::profile::NicKind;
use rig::truth::RecoveryKind;
use wire::bth;

/// §6.1: 100 KB messages on one connection, one packet dropped in the middle of each.
fn retransmission_latencies(nic: NicKind, verb: Verb) -> Vec<(u64, u64)> {
    let msgs = 4;
    let events = (0..msgs).map(|m| ev(1, m * 100 + 40, EventKind::Drop, m + 1)).collect();
    // Timeout 4.096 µs × 2^17 ≈ 0.5 s: longer than E810's 83 ms READ NACK.
    let k = Knobs { nic, verb, msgs, msg_pkts: 100, events, timeout: 17, ..Knobs::default() };
    let r = run(&k.config());
    let want = if verb == Verb::Read { RecoveryKind::ReadNack } else { RecoveryKind::Nack };
    let recs: Vec<_> = r
        .truth
        .recoveries
        .iter()
        .filter(|x| x.kind == want)
        .map(|x| (x.observed_generation_ns.unwrap(), x.observed_reaction_ns.unwrap()))
        .collect();
    assert_eq!(recs.len(), msgs as usize, "{nic:?} {verb:?}: one NACK recovery per drop");
    recs
}

fn within(v: u64, lo: u64, hi: u64) -> bool {
    (lo..=hi).contains(&v)
}

#[test]
fn figure_8_and_9_write_nack_generation_and_reaction() {
    for nic in [NicKind::Cx5, NicKind::Cx6Dx] {
        for (gen, react) in retransmission_latencies(nic, Verb::Write) {
            assert!(within(gen, 1_500, 3_000), "{nic:?}: NACK generation ≈2 µs, got {gen} ns");
            assert!(within(react, 2_000, 7_000), "{nic:?}: NACK reaction 2–6 µs, got {react} ns");
        }
    }
    for (gen, react) in retransmission_latencies(NicKind::Cx4Lx, Verb::Write) {
        assert!(gen < 5_000, "CX4 Lx WRITE NACK generation is low, got {gen}");
        assert!(within(react, 100_000, 999_000), "CX4 Lx reacts in hundreds of µs, got {react}");
    }
    for (gen, _) in retransmission_latencies(NicKind::E810, Verb::Write) {
        assert!(within(gen, 8_000, 13_000), "E810 WRITE NACK generation ≈10 µs, got {gen}");
    }
}

#[test]
fn figure_8_read_nack_generation() {
    for (gen, _) in retransmission_latencies(NicKind::Cx4Lx, Verb::Read) {
        assert!(within(gen, 130_000, 170_000), "CX4 Lx READ NACK generation ≈150 µs, got {gen}");
    }
    for (gen, _) in retransmission_latencies(NicKind::E810, Verb::Read) {
        assert!(within(gen, 80_000_000, 86_000_000), "E810 READ NACK generation ≈83 ms, got {gen}");
    }
    for nic in [NicKind::Cx5, NicKind::Cx6Dx] {
        let write: u64 = retransmission_latencies(nic, Verb::Write).iter().map(|x| x.0).sum();
        let read: u64 = retransmission_latencies(nic, Verb::Read).iter().map(|x| x.0).sum();
        assert!(read > write, "{nic:?}: READ NACKs are slower than WRITE NACKs");
    }
}

/// §6.3 "CNP generation interval": every packet ECN-marked; the CNPs a NIC sends are
/// spaced by its interval (E810: a hidden 50 µs, whatever is configured).
#[test]
fn cnp_interval_seen_at_the_switch() {
    for (nic, configured_us, expect_ns) in
        [(NicKind::E810, 0, 50_000), (NicKind::Cx5, 4, 4_000), (NicKind::Cx6Dx, 0, 0)]
    {
        let pkts = 4_000;
        let events = (1..=pkts).map(|p| ev(1, p, EventKind::Ecn, 1)).collect();
        let k =
            Knobs { nic, msgs: 40, msg_pkts: 100, min_time_between_cnps: configured_us, events, ..Knobs::default() };
        let r = run(&k.config());
        let ts: Vec<u64> = r.truth.cnps.iter().map(|c| c.switch_ts_ns).collect();
        if expect_ns == 0 {
            assert_eq!(ts.len(), pkts as usize, "{nic:?} with 0: a CNP per marked packet");
            continue;
        }
        let gaps: Vec<u64> = ts.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(!gaps.is_empty());
        // Decision times are ≥ the interval apart; the switch sees them within the NIC's CNP
        // delay jitter (0.2 µs) and one frame of queueing.
        assert!(gaps.iter().all(|&g| g + 300 >= expect_ns), "{nic:?}: gaps {gaps:?}");
        let min = *gaps.iter().min().unwrap();
        assert!(
            min < expect_ns + 1_500,
            "{nic:?}: marks arrive at line rate, so CNPs come every interval; min gap {min}"
        );
    }
}

/// §6.3 adaptive retransmission: the CX6 Dx timeouts of the paper when the tail packet of
/// the first message is dropped 7 times; IBA timeouts without it.
#[test]
fn adaptive_retransmission_timeouts() {
    let drops = (1..=7).map(|i| ev(1, 8, EventKind::Drop, i)).collect::<Vec<_>>();
    let base = Knobs { nic: NicKind::Cx6Dx, msgs: 1, msg_pkts: 8, timeout: 14, events: drops, ..Knobs::default() };
    let adaptive = run(&Knobs { adaptive: true, ..base.clone() }.config());
    let t: Vec<u64> = adaptive.truth.timeouts.iter().map(|t| t.model_timeout_ns).collect();
    assert_eq!(t, [5_600_000, 4_100_000, 8_400_000, 16_700_000, 25_100_000, 67_100_000, 134_200_000]);
    // What a trace shows: the gaps between the tail packet's transmissions.
    let seen: Vec<u64> = adaptive
        .packets
        .iter()
        .filter(|p| p.psn == 8 && p.opcode == bth::Opcode::RC_WRITE_LAST.0)
        .map(|p| p.switch_ts_ns)
        .collect::<Vec<_>>()
        .windows(2)
        .map(|w| w[1] - w[0])
        .collect();
    for (gap, model) in seen.iter().zip(&t) {
        assert!(gap.abs_diff(*model) < 10_000, "gap {gap} vs timeout {model}");
    }
    let spec = run(&Knobs { adaptive: false, ..base }.config());
    assert!(spec.truth.timeouts.iter().all(|t| t.model_timeout_ns == 4_096 << 14), "IBA: 4.096 µs × 2^14");
    assert_eq!(spec.truth.timeouts.len(), 7);
}

/// §6.3: with retry_cnt 7, adaptive mode retries 8–13 times; IBA mode exactly 7. The
/// packet dropped again and again is a message of its own, so no resend makes progress.
#[test]
fn retry_counts() {
    let drops = (1..=20).map(|i| ev(1, 1, EventKind::Drop, i)).collect::<Vec<_>>();
    // Adaptive timeouts double past the paper's seven: 13 of them take about 17 s.
    let extra_rig = "  time-limit-ms: 60000\n".to_string();
    let base =
        Knobs { nic: NicKind::Cx5, msgs: 1, msg_pkts: 1, timeout: 4, events: drops, extra_rig, ..Knobs::default() };
    let retries = |r: &rig::RunResult| r.truth.timeouts.iter().filter(|t| t.retried).count();
    let spec = run(&base.clone().config());
    assert_eq!(retries(&spec), 7);
    assert_eq!(spec.truth.timeouts.len(), 8, "the 8th expiry exceeds retry_cnt 7");
    assert_eq!(spec.nics[0].local_ack_timeout_err, 7, "the 8th is not a retry");
    assert_eq!(spec.nics[0].req_transport_retries_exceeded, 1);
    assert_eq!(spec.truth.qp_errors.len(), 1);
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let r = run(&Knobs { seed, adaptive: true, ..base.clone() }.config());
        let n = retries(&r);
        assert!((8..=13).contains(&n), "adaptive retried {n} times");
        assert_eq!(r.truth.qp_errors.len(), 1);
        seen.insert(n);
    }
    assert!(seen.len() > 3, "retries vary by run: {seen:?}");
}

/// The retry count is the QP's expiries without forward progress (IBA's retry counter; rxe
/// `reset_retry_counters`): the tail of a 4-packet message dropped again and again, the first
/// go-back's duplicates of PSNs 1–3 are acknowledged (its responder acknowledges a message
/// at its Last), and the count starts over. The adaptive timeouts go on advancing (§6.3).
#[test]
fn forward_progress_starts_the_retry_count_over() {
    let drops = (1..=20).map(|i| ev(1, 4, EventKind::Drop, i)).collect::<Vec<_>>();
    let k = Knobs { nic: NicKind::Cx5, msgs: 1, msg_pkts: 4, timeout: 4, events: drops, ..Knobs::default() };
    let r = run(&k.config());
    let attempts: Vec<u32> = r.truth.timeouts.iter().map(|t| t.attempt).collect();
    assert_eq!(attempts, [1, 1, 2, 3, 4, 5, 6, 7, 8], "the first go-back acknowledges PSNs 1-3");
    assert_eq!(r.truth.timeouts.iter().filter(|t| t.retried).count(), 8);
    assert_eq!(r.truth.qp_errors.len(), 1);
}

/// §6.2.3: E810 sends MigReq 0, NVIDIA NICs 1 — on every packet they send.
#[test]
fn migreq_bit_on_the_wire() {
    for (nic, mig) in [(NicKind::E810, false), (NicKind::Cx5, true)] {
        let r = run(&Knobs { nic, ..Knobs::default() }.config());
        for f in r.captured.iter().flatten() {
            let (repr, _) = wire::build::RoceFrameRepr::parse(&f.data).unwrap();
            if repr.roce.bth.opcode != bth::Opcode::CNP {
                assert_eq!(repr.roce.bth.mig_req, mig, "{nic:?}");
            }
        }
    }
}

/// §6.2.4: E810's cnpSent and CX4 Lx's implied_nak_seq_err do not count, when the paper's
/// counter bugs are on.
#[test]
fn counter_bugs_of_the_paper() {
    let ecn = Knobs { nic: NicKind::E810, events: vec![ev(1, 2, EventKind::Ecn, 1)], ..Knobs::default() };
    for bugs in [false, true] {
        let k = Knobs { faults: format!("    paper-counter-bugs: {bugs}\n"), ..ecn.clone() };
        let cfg = k.config();
        let r = run(&cfg);
        assert_eq!(r.truth.cnps.len(), 1);
        let c = rig::output::nic_counters(&cfg, &r);
        assert_eq!(c.responder.counters["cnpSent"], if bugs { 0 } else { 1 });
    }
    let read =
        Knobs { nic: NicKind::Cx4Lx, verb: Verb::Read, events: vec![ev(1, 3, EventKind::Drop, 1)], ..Knobs::default() };
    for (nic, bugs, want) in [(NicKind::Cx4Lx, true, 0), (NicKind::Cx4Lx, false, 1), (NicKind::Cx5, true, 1)] {
        let k = Knobs { nic, faults: format!("    paper-counter-bugs: {bugs}\n"), ..read.clone() };
        let cfg = k.config();
        let r = run(&cfg);
        let c = rig::output::nic_counters(&cfg, &r);
        assert_eq!(c.requester.counters["implied_nak_seq_err"], want, "{nic:?} bugs {bugs}");
    }
}

/// §4 "Congestion notification": with slow-restart, NVIDIA's NP sends a CNP along with
/// the NAK of an out-of-sequence arrival (Lumina's CNP checker expects it of CX5/CX6 Dx),
/// of WRITE/SEND data.
#[test]
fn cnp_with_the_nak_under_slow_restart() {
    use rig::truth::CnpCause;
    for (nic, slow, verb, want) in [
        (NicKind::Cx5, true, Verb::Write, 1),
        // A READ gap is no NAK packet: Lumina's checker expects no CNP for it.
        (NicKind::Cx6Dx, true, Verb::Read, 0),
        (NicKind::Cx5, false, Verb::Write, 0),
        (NicKind::Cx4Lx, true, Verb::Write, 0),
        (NicKind::E810, true, Verb::Write, 0),
    ] {
        let k = Knobs { nic, verb, slow_restart: slow, events: vec![ev(1, 3, EventKind::Drop, 1)], ..Knobs::default() };
        let r = run(&k.config());
        let naks = r.truth.cnps.iter().filter(|c| c.cause == CnpCause::Nak).count();
        assert_eq!(naks, want, "{nic:?} slow-restart {slow} {verb:?}");
    }
}
