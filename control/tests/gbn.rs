//! The Go-back-N logic analyzer against the testbed emulator's ground truth: every
//! injected GBN violation is flagged at exactly its packet, and compliant runs — every NIC
//! profile, verb and event pattern, across the 24-bit PSN wrap — give no flags at all, with
//! NAK, retransmission and timeout counts equal to what the emulator did.

mod support;

use std::collections::BTreeSet;

use control::analyze::gbn::{self, ViolationKind};
use rig::config::{EventKind, Verb};
use rig::faults::GbnViolationKind;
use rig::packet::Side;
use rig::profile::NicKind;
use rig::truth::{NakKind, RecoveryKind};
use support::*;

use EventKind::{Corrupt, Drop, Ecn};

fn gbn_report(name: &str, knobs: &Knobs) -> (RigRun, gbn::Report) {
    let run = rig_run(name, knobs);
    let report = gbn::analyze(&analysis(&run).input());
    (run, report)
}

fn render(report: &gbn::Report) -> String {
    let mut out = String::new();
    report.render(&mut out);
    out
}

fn verb_name(v: Verb) -> &'static str {
    match v {
        Verb::Write => "write",
        Verb::Send => "send",
        Verb::Read => "read",
    }
}

/// Asserts no violation, and that the analyzer's counts are what the emulator did (on
/// connections that did not go to the error state: a failed requester ignores what still
/// arrives, which the trace cannot tell).
fn assert_compliant(what: &str, run: &RigRun, report: &gbn::Report) {
    assert!(report.violations.is_empty(), "{what}: false flags\n{}", render(report));
    let truth = &run.result.truth;
    assert!(truth.faults.gbn_violations.is_empty(), "{what}: no fault");
    assert_eq!(truth.unmatched_events, Vec::<rig::config::DataPktEvent>::new(), "{what}: every event hits a packet");
    assert_eq!(truth.faults.mirror_buffer_drops, [] as [u32; 0], "{what}: the trace must be complete");
    let read = run.cfg.traffic.rdma_verb == Verb::Read;
    assert_eq!(report.connections.len(), run.result.conns.len());
    for s in &report.connections {
        let c = s.conn;
        if truth.qp_errors.iter().any(|e| e.conn == c) {
            continue;
        }
        let packets = run.result.packets.iter().filter(|p| p.conn == c);
        let data = |p: &&rig::rig::PacketRecord| match read {
            true => p.from == Side::Responder && (0x0d..=0x10).contains(&p.opcode),
            false => p.from == Side::Requester && p.opcode <= 0x0b,
        };
        let resent = packets.clone().filter(data).filter(|p| p.retransmission).count() as u64;
        let reissues =
            packets.clone().filter(|p| p.from == Side::Requester && p.opcode == 0x0c && p.retransmission).count()
                as u64;
        let naks = truth.naks.iter().filter(|n| n.conn == c);
        let sent_naks = naks.clone().filter(|n| n.kind == NakKind::SeqErr && n.seq != 0).count() as u64;
        let recoveries =
            |k: &[RecoveryKind]| truth.recoveries.iter().filter(|r| r.conn == c && k.contains(&r.kind)).count();
        let counted = (s.data_packets, s.retransmitted_packets, s.naks, s.read_reissues);
        let expected = (packets.filter(data).count() as u64, resent, sent_naks, reissues);
        assert_eq!(counted, expected, "{what}: conn {c} (data, resent, naks, reissues)");
        // READ: a gap that may have reached the requester while its timer went back is a
        // maybe episode; the emulator's count lies between the sure ones and all.
        let (episodes, sure, maybe) = (naks.count() as u64, s.ooo_episodes, s.maybe_ooo_episodes);
        assert!(
            sure <= episodes && episodes <= sure + maybe,
            "{what}: conn {c} episodes {episodes}, {sure} + {maybe} maybe"
        );
        let by_trigger = (s.nak_retransmissions as usize, s.timeout_retransmissions as usize);
        let truth_trigger =
            (recoveries(&[RecoveryKind::Nack, RecoveryKind::ReadNack]), recoveries(&[RecoveryKind::Timeout]));
        let recoveries: Vec<_> = truth.recoveries.iter().filter(|r| r.conn == c).collect();
        assert_eq!(by_trigger, truth_trigger, "{what}: conn {c} (NAK-triggered, timeout) go-backs\n{recoveries:#?}");
    }
}

/// Asserts the analyzer flags exactly the violations the emulator injected: the right kind
/// at the offending packet's seq, on the right connection, and nothing else.
fn assert_flags_exactly_the_injected(what: &str, run: &RigRun, report: &gbn::Report) {
    let fired = &run.result.truth.faults.gbn_violations;
    let want: BTreeSet<_> = fired
        .iter()
        .map(|f| {
            let kind = match f.violation.kind {
                GbnViolationKind::NakWrongPsn => ViolationKind::NakWrongPsn,
                GbnViolationKind::OooData => ViolationKind::OooData,
                GbnViolationKind::ReadNoNak => ViolationKind::MissingNak,
                GbnViolationKind::ReadDoubleNak => ViolationKind::MultipleOutstandingNaks,
            };
            (f.conn, kind, f.seq)
        })
        .collect();
    let got: BTreeSet<_> = report.violations.iter().map(|v| (v.conn, v.kind, v.seq)).collect();
    assert_eq!(got, want, "{what}\n{}", render(report));
    assert_eq!(report.violations.len(), fired.len(), "{what}: one flag per violation\n{}", render(report));
}

#[test]
fn every_injected_violation_is_flagged_at_its_packet() {
    for verb in [Verb::Write, Verb::Send] {
        for nic in NicKind::ALL {
            // QP 1: the responder's first NAK names the PSN after the lost one (the QP then
            // times out until it fails); QP 2: the requester sends PSN 6 before PSN 5;
            // QP 3: PSN 13 before 12, after recovering a drop.
            let faults = "    gbn-violations:\n    - {kind: nak-wrong-psn, qpn: 1, psn: 3}\n    - {kind: ooo-data, qpn: 2, psn: 5}\n    - {kind: ooo-data, qpn: 3, psn: 12}\n".to_string();
            let events = vec![ev(1, 3, Drop, 1), ev(3, 4, Drop, 1)];
            let knobs = Knobs { verb, nic, conns: 3, msgs: 3, timeout: 6, faults, events, ..Knobs::default() };
            let what = format!("{} {nic:?}", verb_name(verb));
            let (run, report) = gbn_report(&format!("gbn-inject-{what}"), &knobs);
            assert_eq!(run.result.truth.faults.gbn_violations.len(), 3, "{what}: every fault fires");
            assert_flags_exactly_the_injected(&what, &run, &report);
            let wrong = report.violations.iter().find(|v| v.kind == ViolationKind::NakWrongPsn).unwrap();
            let conn = &run.result.conns[0];
            assert_eq!((wrong.psn, wrong.expected), (conn.wire_psn(3), Some(conn.wire_psn(2))), "{what}");
            let early = report.violations.iter().find(|v| v.conn == 1).unwrap();
            let conn = &run.result.conns[1];
            assert_eq!((early.psn, early.expected), (conn.wire_psn(5), Some(conn.wire_psn(4))), "{what}");
            assert!(render(&report).starts_with("Go-back-N logic: 3 connections, 3 violations"));
        }
    }
}

#[test]
fn write_faults_do_not_fire_on_read() {
    // `nak-wrong-psn` and `ooo-data` act on WRITE/SEND data and on the responder's NAK,
    // which a READ run only sends for a lost READ request (events never drop requests):
    // neither fires for READ, so there is nothing to flag.
    let faults =
        "    gbn-violations:\n    - {kind: nak-wrong-psn, qpn: 1, psn: 3}\n    - {kind: ooo-data, qpn: 1, psn: 5}\n"
            .to_string();
    let knobs = Knobs { verb: Verb::Read, faults, events: vec![ev(1, 3, Drop, 1)], ..Knobs::default() };
    let (run, report) = gbn_report("gbn-read-faults", &knobs);
    assert!(run.result.truth.faults.gbn_violations.is_empty());
    assert!(report.violations.is_empty(), "{}", render(&report));
}

/// The retransmission timeout (IBA exponent) under which the READ NAK faults are flagged
/// on `nic`. `read-no-nak` is told from the NIC's own (slow) READ NAK only when the timer's
/// repeat comes later than the NIC's READ NAK bound (`transport::read_nak_ns`): 300 µs on
/// CX4 Lx and 20 µs on CX5 and CX6 Dx, below timeout 8 (1.07 ms); 166 ms on E810, below
/// timeout 16 (275 ms) only. `read-double-nak` needs the first repeat to come
/// before the timer: E810's takes ≈83 ms, so the same timeouts do.
fn read_fault_timeout(nic: NicKind) -> u8 {
    match nic {
        NicKind::E810 => 16,
        _ => 8,
    }
}

#[test]
fn injected_read_nak_faults_are_flagged_at_their_packet() {
    // QP 1: response PSN 3 dropped, the requester leaves the gap to its timer; QP 2:
    // response PSN 5 dropped, the requester repeats its request twice; QP 3: a drop
    // recovered by the book. Two messages outstanding, every NIC, several seeds.
    let faults = "    gbn-violations:
    - {kind: read-no-nak, qpn: 1, psn: 3}
    - {kind: read-double-nak, qpn: 2, psn: 5}
";
    for (nic, seed) in NicKind::ALL.into_iter().flat_map(|n| (1..=4).map(move |s| (n, s))) {
        let events = vec![ev(1, 3, Drop, 1), ev(2, 5, Drop, 1), ev(3, 4, Drop, 1)];
        let timeout = read_fault_timeout(nic);
        let knobs = Knobs {
            verb: Verb::Read,
            nic,
            seed,
            conns: 3,
            msgs: 3,
            tx_depth: 2,
            timeout,
            faults: faults.to_string(),
            events,
            ..Knobs::default()
        };
        let what = format!("read {nic:?} timeout {timeout} seed {seed}");
        let (run, report) = gbn_report(&format!("gbn-inject-read-{nic:?}-{seed}"), &knobs);
        let fired = &run.result.truth.faults.gbn_violations;
        assert_eq!(fired.len(), 2, "{what}: every fault fires");
        assert!(fired.iter().all(|f| f.seq != 0), "{what}: every fault's packet went out: {fired:?}");
        assert_flags_exactly_the_injected(&what, &run, &report);
    }
}

/// E810 takes ~83 ms to repeat a READ request (Lumina §6.1); with timeout 8 the timer's
/// go-back comes first and neither repeat of a `read-double-nak` fault goes out: the
/// emulator lists no fired fault (review, session 22: it listed one at seq 0), and nothing
/// is flagged.
#[test]
fn a_double_nak_the_timer_overtook_is_no_fault() {
    let faults = "    gbn-violations:\n    - {kind: read-double-nak, qpn: 1, psn: 3}\n".to_string();
    let events = vec![ev(1, 3, Drop, 1)];
    let knobs = Knobs { verb: Verb::Read, nic: NicKind::E810, timeout: 8, faults, events, ..Knobs::default() };
    let (run, report) = gbn_report("gbn-read-double-nak-overtaken", &knobs);
    let truth = &run.result.truth;
    assert!(truth.naks.iter().any(|n| n.violation && n.seq == 0), "the second repeat was overtaken");
    assert!(truth.faults.gbn_violations.is_empty(), "no fault went on the wire: {:?}", truth.faults.gbn_violations);
    assert!(report.violations.is_empty(), "{}", render(&report));
}

#[test]
fn read_no_nak_within_the_nics_bound_is_not_flagged() {
    // E810 takes up to its READ NAK bound (166 ms) to repeat a READ request; with timeout
    // 8 the timer's repeat (≈1 ms after the gap) comes first: the fault fires, but the
    // trace cannot prove it, so nothing is flagged (no false flag either), and the gap is
    // listed unverifiable (it passed silently before).
    let faults = "    gbn-violations:
    - {kind: read-no-nak, qpn: 1, psn: 3}
"
    .to_string();
    let events = vec![ev(1, 3, Drop, 1)];
    let knobs = Knobs { verb: Verb::Read, nic: NicKind::E810, timeout: 8, faults, events, ..Knobs::default() };
    let (run, report) = gbn_report("gbn-read-no-nak-e810-timeout-8", &knobs);
    let fired = &run.result.truth.faults.gbn_violations;
    assert_eq!(fired.len(), 1);
    assert!(report.violations.is_empty(), "{}", render(&report));
    let listed: Vec<_> = report.unverifiable.iter().map(|v| (v.kind, v.seq)).collect();
    assert_eq!(listed, [(ViolationKind::MissingNak, fired[0].seq)]);
}

/// The event patterns of a compliant run. ITER counts go-back rounds per connection
/// (Lumina §3.3), so each event names the round its packet is sent in:
/// - QP 1: a drop, and its retransmission dropped again (a NAK, then a timeout); a bit
///   error in round 3, an ECN mark and a tail drop (timeout) in round 4;
/// - QP 2: two consecutive drops (one NAK), then a bit error twice over (NAK, timeout);
/// - QP 3: an ECN mark, the last packet of a message dropped (the next message reveals
///   it), then the last packet of the connection dropped twice (two timeouts).
fn patterns() -> Vec<rig::config::DataPktEvent> {
    vec![
        ev(1, 3, Drop, 1),
        ev(1, 3, Drop, 2),
        ev(1, 10, Corrupt, 3),
        ev(1, 12, Ecn, 4),
        ev(1, 32, Drop, 4),
        ev(2, 5, Drop, 1),
        ev(2, 6, Drop, 1),
        ev(2, 20, Corrupt, 2),
        ev(2, 20, Corrupt, 3),
        ev(3, 1, Ecn, 1),
        ev(3, 16, Drop, 1),
        ev(3, 32, Drop, 2),
        ev(3, 32, Drop, 3),
    ]
}

/// Three connections, two messages outstanding per QP, on two addresses, with the event
/// patterns; CNPs with every NAK where the NIC does that (slow restart).
fn compliant_knobs(verb: Verb, nic: NicKind) -> Knobs {
    Knobs {
        verb,
        nic,
        conns: 3,
        msgs: 4,
        tx_depth: 2,
        multi_gid: true,
        slow_restart: true,
        timeout: 8,
        events: patterns(),
        ..Knobs::default()
    }
}

#[test]
fn compliant_runs_give_no_flags_on_every_profile_and_verb() {
    for nic in NicKind::ALL {
        for verb in [Verb::Write, Verb::Send, Verb::Read] {
            let knobs = compliant_knobs(verb, nic);
            let what = format!("{} {nic:?} tx-depth 2", verb_name(verb));
            let (run, report) = gbn_report(&format!("gbn-clean-{what}"), &knobs);
            let t = &run.result.truth;
            assert!(
                t.timeouts.len() >= 3 && t.naks.len() >= 4,
                "{what}: {} timeouts, {} NAKs",
                t.timeouts.len(),
                t.naks.len()
            );
            assert_compliant(&what, &run, &report);
        }
    }
}

#[test]
fn compliant_runs_with_one_message_in_flight() {
    // tx-depth 1 with barrier sync: dropping the last packet of a message leaves nothing
    // behind it to reveal the gap, so a timeout recovers it (twice for the repeated drop);
    // with and without NVIDIA's adaptive retransmission (timeouts the analyzer cannot
    // know in advance).
    for (nic, adaptive) in NicKind::ALL.into_iter().flat_map(|n| [(n, false), (n, true)]) {
        for verb in [Verb::Write, Verb::Send, Verb::Read] {
            let events = vec![ev(1, 8, Drop, 1), ev(1, 8, Drop, 2), ev(1, 11, Drop, 3), ev(2, 2, Corrupt, 1)];
            let knobs =
                Knobs { verb, nic, conns: 2, msgs: 3, barrier: true, timeout: 6, adaptive, events, ..Knobs::default() };
            let what = format!("{} {nic:?} tx-depth 1 adaptive {adaptive}", verb_name(verb));
            let (run, report) = gbn_report(&format!("gbn-clean-{what}"), &knobs);
            assert!(run.result.truth.timeouts.len() >= 2, "{what}: timeouts exercised");
            assert_compliant(&what, &run, &report);
        }
    }
}

/// The emulator draws initial PSNs from its seed and has no knob for them: find a seed
/// that makes one connection cross the 2^24 wrap within `range` of its first packet.
/// Returns the seed, the connection (0-based) and how many of its PSNs precede the wrap.
fn seed_crossing_the_wrap(knobs: &Knobs, range: std::ops::RangeInclusive<u32>) -> (u64, u32, u32) {
    let cfg = knobs.config();
    for seed in 1..8_000_000u64 {
        let conns = rig::conn::establish(&cfg, &mut rig::rng::Rng::new(seed));
        for (c, conn) in conns.iter().enumerate() {
            let before = wire::psn::MODULUS - conn.requester.ipsn;
            if range.contains(&before) {
                return (seed, c as u32, before);
            }
        }
    }
    panic!("no seed makes a connection cross the PSN wrap");
}

#[test]
fn compliant_runs_across_the_psn_wrap() {
    // 32 packets per QP; one QP crosses the wrap in the middle: drops just before and at
    // the wrap (one NAK), wire PSN 0 dropped again in round 2 (a second NAK), a bit error
    // after it in round 3 and a tail drop in round 4 (a timeout).
    let base = Knobs { conns: 4, msgs: 4, tx_depth: 2, timeout: 6, ..Knobs::default() };
    let (seed, c, before) = seed_crossing_the_wrap(&base, 4..=28);
    let q = c + 1;
    let events = vec![
        ev(q, before, Drop, 1),
        ev(q, before + 1, Drop, 1),
        ev(q, before + 1, Drop, 2),
        ev(q, before + 2, Corrupt, 3),
        ev(q, 32, Drop, 4),
    ];
    for verb in [Verb::Write, Verb::Send, Verb::Read] {
        let knobs = Knobs { verb, seed, events: events.clone(), ..base.clone() };
        let what = format!("{} across the wrap (seed {seed}, conn {c}, {before} PSNs before it)", verb_name(verb));
        let (run, report) = gbn_report(&format!("gbn-wrap-{}", verb_name(verb)), &knobs);
        let hit: Vec<u32> = run.result.truth.events.iter().map(|e| e.wire_psn).collect();
        assert!(hit.contains(&0) && hit.contains(&wire::psn::MASK), "{what}: the wrap was hit: {hit:?}");
        assert_compliant(&what, &run, &report);
    }
}

/// A random run: verb, NIC, connections, message shape, depth, barrier, timeout (down to
/// 32 µs, shorter than some NICs' NAK reaction), adaptive retransmission, slow restart,
/// and up to six events at random PSNs and rounds.
fn random_knobs(rng: &mut rig::rng::Rng, case: u64) -> Knobs {
    let verb = [Verb::Write, Verb::Send, Verb::Read][rng.between(0, 2) as usize];
    let nic = NicKind::ALL[rng.between(0, 3) as usize];
    let conns = rng.between(1, 3) as u32;
    let msgs = rng.between(1, 5) as u32;
    let msg_pkts = rng.between(1, 10) as u32;
    let total = msgs * msg_pkts;
    let mut events = Vec::new();
    let mut used = BTreeSet::new();
    for _ in 0..rng.between(0, 6) {
        let q = rng.between(1, u64::from(conns)) as u32;
        let p = rng.between(1, u64::from(total)) as u32;
        let it = rng.between(1, 3) as u32;
        let kind = [Drop, Drop, Corrupt, Ecn][rng.between(0, 3) as usize];
        if used.insert((q, p, it)) {
            events.push(ev(q, p, kind, it));
        }
    }
    Knobs {
        seed: case + 1,
        verb,
        nic,
        conns,
        msgs,
        msg_pkts,
        tx_depth: rng.between(1, 3) as u32,
        barrier: rng.chance(0.5),
        timeout: rng.between(3, 10) as u8,
        adaptive: rng.chance(0.3),
        slow_restart: rng.chance(0.3),
        events,
        ..Knobs::default()
    }
}

/// Random runs per randomized test; `GBN_RANDOM_RUNS=5000` for a deeper search.
fn random_runs() -> u64 {
    std::env::var("GBN_RANDOM_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(100)
}

/// The first case run (`GBN_RANDOM_FROM=1167` with `GBN_RANDOM_RUNS=1168` reruns case 1167
/// alone): the cases before are drawn, so each case keeps its knobs, but not run.
fn random_from() -> u64 {
    std::env::var("GBN_RANDOM_FROM").ok().and_then(|v| v.parse().ok()).unwrap_or(0)
}

#[test]
fn random_compliant_runs_give_no_flags() {
    random_compliant_runs("gbn-random", 0x6b6e, random_knobs);
}

/// [`random_runs`] compliant runs with the knobs `knobs_of` draws (from a generator seeded
/// with `seed`): no flags, counts as the emulator's. Lists every failing case.
fn random_compliant_runs(prefix: &str, seed: u64, knobs_of: impl FnMut(&mut rig::rng::Rng, u64) -> Knobs) {
    random_cases(prefix, seed, knobs_of, |name, knobs| {
        let (mut run, report) = gbn_report(name, knobs);
        run.result.truth.unmatched_events.clear(); // random rounds need not happen
        assert_compliant(name, &run, &report);
    });
}

/// [`random_runs`] cases drawn by `draw` from a generator seeded with `seed` (every case
/// is drawn, so each keeps its draw whatever [`random_from`]), each checked by `check`
/// under its scratch name `prefix-case`. Lists every failing case, and keeps its scratch.
fn random_cases<T: std::fmt::Debug>(
    prefix: &str,
    seed: u64,
    mut draw: impl FnMut(&mut rig::rng::Rng, u64) -> T,
    check: impl Fn(&str, &T),
) {
    let mut rng = rig::rng::Rng::new(seed);
    let mut failures = Vec::new();
    for case in 0..random_runs() {
        let drawn = draw(&mut rng, case);
        if case < random_from() {
            continue;
        }
        let name = format!("{prefix}-{case}");
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&name, &drawn))).is_err() {
            failures.push(format!("{case}: {drawn:?}"));
        } else {
            let _ = std::fs::remove_dir_all(scratch(&name));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn random_injected_violations_are_flagged_exactly() {
    // One fault per connection, at a random PSN: ooo-data, or nak-wrong-psn with a drop
    // there to draw the NAK (a fault whose packet never comes does not fire).
    let n = random_runs();
    let mut rng = rig::rng::Rng::new(0x1234);
    let mut failures = Vec::new();
    let fired = std::sync::atomic::AtomicUsize::new(0);
    let mut configured = 0;
    for case in 0..n {
        let mut knobs = random_knobs(&mut rng, case);
        knobs.verb = [Verb::Write, Verb::Send][rng.between(0, 1) as usize];
        let total = knobs.msgs * knobs.msg_pkts;
        let mut faults = String::from("    gbn-violations:\n");
        for q in 1..=knobs.conns {
            let p = rng.between(1, u64::from(total)) as u32;
            if rng.chance(0.5) {
                faults += &format!("    - {{kind: nak-wrong-psn, qpn: {q}, psn: {p}}}\n");
                knobs.events.retain(|e| !(e.qpn == q && e.psn == p && e.iter == 1));
                knobs.events.push(ev(q, p, Drop, 1));
            } else {
                faults += &format!("    - {{kind: ooo-data, qpn: {q}, psn: {p}}}\n");
            }
        }
        knobs.faults = faults;
        configured += knobs.conns as usize;
        let name = format!("gbn-random-fault-{case}");
        let r = std::panic::catch_unwind(|| {
            let (run, report) = gbn_report(&name, &knobs);
            fired.fetch_add(run.result.truth.faults.gbn_violations.len(), std::sync::atomic::Ordering::Relaxed);
            assert_flags_exactly_the_injected(&name, &run, &report);
        });
        if r.is_err() {
            failures.push(format!("{case}: {knobs:?}"));
        } else {
            let _ = std::fs::remove_dir_all(scratch(&name));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    let fired = fired.into_inner();
    assert!(fired * 2 > configured, "only {fired} of {configured} faults fired");
}

/// Mirror copies lost by the capture (a dump host's NIC, a mirror buffer) are not packets
/// lost by the network: on a compliant run with copies missing, nothing is flagged — what
/// a missing copy may explain is kept apart as unverifiable — and every message whose
/// first packet's copy is in the trace completes, as it did.
#[test]
fn copies_lost_by_the_capture_flag_nothing() {
    const SEEDS: u64 = 8;
    for (nic, seed) in NicKind::ALL.into_iter().flat_map(|n| (1..=SEEDS).map(move |s| (n, s))) {
        for verb in [Verb::Write, Verb::Send, Verb::Read] {
            let faults = "    lose-mirror-copies:\n    - {dump-host: 0, count: 25}\n".to_string();
            let knobs = Knobs { dump_hosts: vec![1, 1], faults, seed, ..compliant_knobs(verb, nic) };
            let what = format!("{} {nic:?} seed {seed} with copies lost", verb_name(verb));
            let run = rig_run(&format!("gbn-lost-copies-{}-{nic:?}-{seed}", verb_name(verb)), &knobs);
            let lost = run.result.truth.faults.lost_mirror_copies.len() as u64;
            assert!(lost >= 10, "{what}: {lost} lost");
            let a = analysis(&run);
            let r = a.run();
            assert_eq!(r.missing_copies, lost, "{what}");
            assert!(r.gbn.violations.is_empty(), "{what}: false flags\n{}", render(&r.gbn));
            assert!(r.cnp.findings.is_empty(), "{what}: {:#?}", r.cnp.findings);
            let failed: BTreeSet<u32> = run.result.truth.qp_errors.iter().map(|e| e.conn).collect();
            for c in r.goodput.connections.iter().filter(|c| !failed.contains(&c.conn)) {
                let t = &c.totals;
                assert_eq!(t.completed + t.completion_unseen, t.messages, "{what}: conn {}", c.conn);
            }
        }
    }
}

/// Slow paths between the hosts and the switch (long cables, a slow link): a response
/// takes longer than on a lab rack to reach the requester, and its repeated request longer
/// to come back. Compliant runs, random ones too, still give no flags, and counts (NAK-
/// triggered and timeout go-backs apart) equal to what the emulator did.
#[test]
fn compliant_runs_with_slow_paths_give_no_flags() {
    let paths = ["link-delay-ns: 8000", "link-gbps: 1.0", "switch-latency-ns: 6000"];
    for (i, extra) in paths.into_iter().enumerate() {
        for nic in NicKind::ALL {
            for verb in [Verb::Write, Verb::Send, Verb::Read] {
                let knobs = Knobs { extra_rig: format!("  {extra}\n"), ..compliant_knobs(verb, nic) };
                let what = format!("{} {nic:?} with {extra}", verb_name(verb));
                let (run, report) = gbn_report(&format!("gbn-slow-{}-{nic:?}-{i}", verb_name(verb)), &knobs);
                assert_compliant(&what, &run, &report);
            }
        }
    }
    random_compliant_runs("gbn-slow-random", 0x510e, |rng, case| {
        let extra = paths[rng.between(0, 2) as usize];
        Knobs { extra_rig: format!("  {extra}\n"), ..random_knobs(rng, case) }
    });
}

/// READ under capture loss (review, session 21): a repeated request whose copy is missing
/// left a stale job behind, and the next request's responses were flagged `ooo-data`
/// ("starts a later request while PSN … of an earlier one is unsent"): a false violation,
/// `analyze` exiting 1. What missing copies may explain is unverifiable.
#[test]
fn a_read_job_left_by_an_unseen_repeat_flags_nothing() {
    let yaml = "requester: {nic: {type: cx4, switch-port: 144, ip-list: [192.0.2.2/24]}, roce-parameters: {adaptive-retrans: false}}
responder: {nic: {type: cx4, switch-port: 152, ip-list: [192.0.2.3/24]}}
traffic: {num-connections: 2, rdma-verb: read, num-msgs-per-qp: 20, mtu: 1024, message-size: 4096, tx-depth: 1, barrier-sync: false, min-retransmit-timeout: 8, max-retransmit-retry: 7, data-pkt-events: [{qpn: 1, psn: 5, type: drop, iter: 1}, {qpn: 1, psn: 5, type: drop, iter: 2}, {qpn: 2, psn: 7, type: corrupt, iter: 1}, {qpn: 1, psn: 14, type: drop, iter: 1}, {qpn: 2, psn: 3, type: drop, iter: 1}, {qpn: 2, psn: 22, type: drop, iter: 1}]}
rig: {seed: 120, dump-hosts: [{name: d0, weight: 1}, {name: d1, weight: 2}], faults: {lose-mirror-copies: [{dump-host: 0, count: 15}, {dump-host: 1, count: 15}]}}
";
    let run = rig_run_yaml("gbn-read-unseen-repeat", yaml);
    assert!(!run.result.truth.faults.lost_mirror_copies.is_empty());
    let report = gbn::analyze(&analysis(&run).input());
    assert_eq!(report.violations, [], "{}", render(&report));
}

/// Review, session 22: the copy of a NAK went missing and a CNP followed it toward the
/// sender; the go-back after it was flagged `ooo-data` ("skips …, never acknowledged"),
/// because the CNP counted as the last packet toward the sender and hid the missing NAK.
#[test]
fn a_cnp_does_not_hide_a_missing_nak_copy() {
    let yaml = "requester: {nic: {type: cx5, switch-port: 1, ip-list: [10.9.0.1]}, roce-parameters: {dcqcn-np-enable: true, min-time-between-cnps: 20, slow-restart: true, dcqcn-rp-enable: false, adaptive-retrans: false}}
responder: {nic: {type: cx4, switch-port: 2, ip-list: [10.9.0.2]}, roce-parameters: {dcqcn-np-enable: true, min-time-between-cnps: 0}}
traffic: {num-connections: 1, rdma-verb: send, num-msgs-per-qp: 10, mtu: 1024, message-size: 4196, tx-depth: 4, min-retransmit-timeout: 4, max-retransmit-retry: 1, data-pkt-events: [{qpn: 1, psn: 14, type: drop, iter: 2}, {qpn: 1, psn: 25, type: ecn, iter: 1}, {qpn: 1, psn: 18, type: ecn, iter: 1}, {qpn: 1, psn: 2, type: drop, iter: 1}, {qpn: 1, psn: 25, type: ecn, iter: 2}]}
rig: {seed: 1, snaplen: 128, faults: {lose-mirror-copies: [{dump-host: 0, seqs: [21]}]}}
";
    let run = rig_run_yaml("gbn-cnp-after-lost-nak", yaml);
    let lost = &run.result.truth.faults.lost_mirror_copies;
    assert_eq!(lost.len(), 1);
    let report = gbn::analyze(&analysis(&run).input());
    assert_eq!(report.violations, [], "{}", render(&report));
}

/// Review, session 22: the copy of a go-back's second packet went missing, and the ACK
/// after it acknowledged that packet; the next data packet was flagged `missing-nak` (the
/// receiver model still waited for the packet the ACK shows it had).
#[test]
fn an_acknowledged_packet_whose_copy_is_missing_was_received() {
    let yaml = "requester: {nic: {type: cx4, switch-port: 1, ip-list: [10.4.8.1]}, roce-parameters: {adaptive-retrans: false}}
responder: {nic: {type: cx4, switch-port: 2, ip-list: [10.4.8.2]}}
traffic: {num-connections: 1, rdma-verb: send, num-msgs-per-qp: 6, mtu: 1024, message-size: 1024, tx-depth: 2, data-pkt-events: [{qpn: 1, psn: 2, type: drop}]}
rig: {seed: 1, faults: {lose-mirror-copies: [{dump-host: 0, seqs: [7]}]}}
";
    let run = rig_run_yaml("gbn-acked-unseen", yaml);
    assert_eq!(run.result.truth.faults.lost_mirror_copies.len(), 1);
    let report = gbn::analyze(&analysis(&run).input());
    assert_eq!(report.violations, [], "{}", render(&report));
}

/// A timeout's go-back whose copy is missing: the receiver took the resent packet unseen,
/// and the next packet is in order, not a gap whose NAK went missing (session 22: flagged
/// `missing-nak`, as with a copy placed late by a small reorder window).
#[test]
fn a_go_back_whose_copy_is_missing_opens_no_gap() {
    let yaml = |lost: &str| {
        format!(
            "requester: {{nic: {{type: cx5, switch-port: 1, ip-list: [10.7.0.1]}}, roce-parameters: {{adaptive-retrans: false}}}}
responder: {{nic: {{type: cx5, switch-port: 2, ip-list: [10.7.0.2]}}}}
traffic: {{num-connections: 1, rdma-verb: send, num-msgs-per-qp: 4, mtu: 1024, message-size: 1024, tx-depth: 1, min-retransmit-timeout: 4, data-pkt-events: [{{qpn: 1, psn: 2, type: drop}}]}}
rig: {{seed: 3{lost}}}
"
        )
    };
    let whole = rig_run_yaml("gbn-go-back-copy", &yaml(""));
    let resent: Vec<u32> = whole.result.packets.iter().filter(|p| p.retransmission).map(|p| p.seq).collect();
    assert_eq!(resent.len(), 1, "one timeout go-back of one packet");
    let lost = format!(", faults: {{lose-mirror-copies: [{{dump-host: 0, seqs: [{}]}}]}}", resent[0]);
    let run = rig_run_yaml("gbn-go-back-copy-lost", &yaml(&lost));
    let report = gbn::analyze(&analysis(&run).input());
    assert_eq!(report.violations, [], "{}", render(&report));
}

/// A compliant slow-path run (found by the random slow-path runs, `GBN_RANDOM_RUNS=1000`):
/// no flags, counts and the NAK/timeout split as the emulator's.
fn slow_run(name: &str, knobs: Knobs) -> (RigRun, gbn::Report) {
    let (run, report) = gbn_report(name, &knobs);
    assert_compliant(name, &run, &report);
    (run, report)
}

#[test]
fn a_timeout_during_a_nak_reaction_is_the_only_go_back() {
    // E810 (NAK reaction 20-40 µs), 65 µs timeout, 1 Gb/s links shared by three QPs: QP 2's
    // NAK for PSN 4 arrives, its timer expires during the NAK reaction and goes back to PSN
    // 4. The NAK's go-back is done: it is not done again when the reaction ends (which,
    // clamped by the ACK for PSN 4 that arrived meanwhile, resent PSN 5 on as if the
    // timeout's own, a NAK go-back no trace shows).
    let events = vec![ev(2, 4, Corrupt, 2)];
    let extra_rig = "  link-gbps: 1.0\n".to_string();
    let knobs = Knobs {
        seed: 218,
        nic: NicKind::E810,
        conns: 3,
        msgs: 2,
        msg_pkts: 4,
        tx_depth: 3,
        barrier: true,
        timeout: 4,
        events,
        extra_rig,
        ..Knobs::default()
    };
    let (run, report) = slow_run("gbn-timeout-during-nak-reaction", knobs);
    let t = &run.result.truth;
    let nak = t.naks.iter().position(|n| n.conn == 1 && n.expected_psn == 4).expect("QP 2's NAK for PSN 4");
    assert!(t.recoveries.iter().all(|r| r.trigger != rig::truth::Trigger::Nak(nak as u32)), "{:#?}", t.recoveries);
    let s = &report.connections[1];
    assert_eq!((s.naks, s.nak_retransmissions, s.timeout_retransmissions), (1, 0, 3));
}

#[test]
fn progress_a_go_back_had_not_heard_restarts_the_timer_after_it() {
    // 8 µs cables, 33 µs timeout: the timer goes back to PSN 13 before the NAK for PSN 16
    // (acknowledging 13-15) arrives; the NAK restarts the timer on arrival, after that
    // go-back, and its own go-back to PSN 16 comes 34 µs after the timeout's copy but well
    // within a timeout of the NAK's arrival: NAK-triggered (it was counted a timeout).
    let events = vec![ev(1, 16, Drop, 2), ev(1, 20, Drop, 2), ev(1, 18, Ecn, 2)];
    let extra_rig = "  link-delay-ns: 8000\n".to_string();
    let knobs = Knobs {
        seed: 250,
        nic: NicKind::E810,
        msgs: 4,
        msg_pkts: 6,
        tx_depth: 2,
        adaptive: true,
        timeout: 3,
        events,
        extra_rig,
        ..Knobs::default()
    };
    let (_, report) = slow_run("gbn-progress-after-go-back", knobs);
    let s = &report.connections[0];
    assert_eq!((s.nak_retransmissions, s.timeout_retransmissions), (1, 2));
}

#[test]
fn a_timer_that_expired_before_the_nak_arrived_times_out_however_late_its_go_back_leaves() {
    // 1 Gb/s links shared by three QPs, 65 µs timeout: QP 3's timer expires 280 ns (on the
    // switch clock) after the NAK for PSN 2 passed the switch, long before the NAK can
    // reach the requester; the go-back's first copy leaves 14 µs later, behind the other
    // QPs' packets: the timeout's (it was timed from the NAK and counted NAK-triggered).
    let events = vec![ev(3, 2, Drop, 1), ev(1, 4, Drop, 2)];
    let extra_rig = "  link-gbps: 1.0\n".to_string();
    let knobs = Knobs {
        seed: 669,
        conns: 3,
        msgs: 2,
        msg_pkts: 8,
        tx_depth: 3,
        barrier: true,
        slow_restart: true,
        timeout: 4,
        events,
        extra_rig,
        ..Knobs::default()
    };
    let (_, report) = slow_run("gbn-timer-expired-before-nak", knobs);
    let s = &report.connections[2];
    assert_eq!((s.naks, s.nak_retransmissions, s.timeout_retransmissions), (1, 0, 5));
}

#[test]
fn a_read_gap_arriving_after_the_timers_repeat_left_is_no_episode() {
    // 8 µs cables, 33 µs timeout: the responses to the first request reach the requester
    // after its timer has repeated the request; the first is lost (dropped, or corrupted),
    // so the next is out of sequence, but the requester is already going back and sends no
    // repeat for it: no loss episode, no NAK owed (each was counted an episode). In the
    // E810 run a later gap, after a response in order, is an episode again.
    let cases = [
        (715, NicKind::Cx6Dx, 3, 1, 4, 1, false, vec![ev(1, 1, Corrupt, 1)], 0),
        (
            712,
            NicKind::E810,
            1,
            2,
            2,
            2,
            true,
            vec![
                ev(1, 1, Drop, 1),
                ev(1, 1, Drop, 2),
                ev(1, 2, Drop, 3),
                ev(1, 2, Drop, 2),
                ev(1, 3, Corrupt, 2),
                ev(1, 3, Drop, 3),
            ],
            1,
        ),
    ];
    for (seed, nic, conns, msgs, msg_pkts, tx_depth, barrier, events, episodes) in cases {
        let extra_rig = "  link-delay-ns: 8000\n".to_string();
        let knobs = Knobs {
            seed,
            verb: Verb::Read,
            nic,
            conns,
            msgs,
            msg_pkts,
            tx_depth,
            barrier,
            timeout: 3,
            events,
            extra_rig,
            ..Knobs::default()
        };
        let (run, report) = slow_run(&format!("gbn-read-gap-after-repeat-{seed}"), knobs);
        assert!(run.result.truth.timeouts.iter().any(|t| t.conn == 0), "seed {seed}: the timer repeats");
        assert_eq!(report.connections[0].ooo_episodes, episodes, "seed {seed}");
    }
}

/// `GBN_RANDOM_RUNS=5000` slow-path case 2796: CX5 SEND at 1 Gb/s, QP 3's PSN 1 corrupted.
/// The NAK's go-back resent PSN 1; the timer, started by the resend before, expired before
/// the ACK of PSN 1 passed the switch, went back to PSN 1, and that ACK moved the go-back
/// on to PSN 2 before anything left: PSN 2, continuing the resend, is the timer's go-back
/// (it was not counted, and `counters` flagged the NIC's one timeout more).
#[test]
fn a_timer_go_back_moved_on_by_the_ack_that_crossed_its_expiry_is_a_timeout() {
    let knobs = Knobs {
        seed: 2797,
        verb: Verb::Send,
        nic: NicKind::Cx5,
        conns: 3,
        msgs: 3,
        msg_pkts: 3,
        tx_depth: 3,
        timeout: 3,
        events: vec![ev(3, 1, Corrupt, 1)],
        extra_rig: "  link-gbps: 1.0\n".to_string(),
        ..Knobs::default()
    };
    let (run, report) = slow_run("gbn-timer-go-back-moved-on", knobs);
    let s = &report.connections[2];
    // The next expiry went back to PSN 2, and the ACK that crossed it moved the go-back
    // on to PSN 4, never sent before: it resent nothing (silent).
    assert_eq!((s.naks, s.nak_retransmissions, s.timeout_retransmissions, s.silent_timeouts), (1, 1, 4, 1));
    let a = analysis(&run);
    let counters = control::analyze::counters::analyze(&a.input(), &report);
    assert_eq!(counters.inconsistent(), [], "the NIC counted the timeout");
}

/// `GBN_RANDOM_RUNS=1500` slow-path case 1167: E810 READ at 1 Gb/s, PSN 7's response
/// dropped. The out-of-sequence PSN 8 passed the switch 7.4 µs before the timer's repeat,
/// but took ~8.5 µs more to cross the slow link: the requester was going back when it
/// arrived and found no gap. The timer's start (progress heard) is not timed well enough
/// to be sure of that: a maybe episode, not a sure one (it was counted one).
#[test]
fn a_read_gap_that_may_have_reached_the_requester_after_its_timer_is_a_maybe_episode() {
    let events = vec![ev(1, 7, Drop, 1), ev(2, 23, Ecn, 1)];
    let knobs = Knobs {
        seed: 1168,
        verb: Verb::Read,
        nic: NicKind::E810,
        conns: 2,
        msgs: 4,
        msg_pkts: 6,
        tx_depth: 2,
        barrier: true,
        adaptive: true,
        timeout: 3,
        events,
        extra_rig: "  link-gbps: 1.0\n".to_string(),
        ..Knobs::default()
    };
    let (run, report) = slow_run("gbn-read-gap-maybe-after-timer", knobs);
    assert!(run.result.truth.naks.iter().all(|n| n.conn != 0), "the requester found no gap");
    let s = &report.connections[0];
    assert_eq!((s.ooo_episodes, s.maybe_ooo_episodes, s.timeout_retransmissions), (0, 1, 9));
}

/// Review (session 23), an emulator bug: an E810 READ NAK (83 ms) for the gap at PSN 2
/// came after the 67 ms timer had resent from PSN 2, and the emulator still repeated the
/// request then (clamped to the gap of the moment): a second outstanding NAK on the wire,
/// rightly flagged, though no fault was injected. A timeout now makes a pending READ NAK
/// moot, as it does a WRITE NAK's go-back.
#[test]
fn a_read_nak_a_timeout_overtook_is_not_sent() {
    let yaml = "requester: {nic: {type: e810, switch-port: 144, ip-list: [10.1.0.2/24]}}
responder: {nic: {type: e810, switch-port: 152, ip-list: [10.2.0.2/24]}}
traffic: {num-connections: 1, rdma-verb: read, num-msgs-per-qp: 4, mtu: 1024, message-size: 4096, tx-depth: 4, data-pkt-events: [{qpn: 1, psn: 2, type: drop, iter: 1}, {qpn: 1, psn: 10, type: drop, iter: 2}, {qpn: 1, psn: 10, type: drop, iter: 3}, {qpn: 1, psn: 10, type: drop, iter: 4}]}
";
    let run = rig_run_yaml("gbn-e810-stale-read-nak", yaml);
    assert!(run.result.truth.faults.gbn_violations.is_empty());
    assert!(run.result.truth.naks.iter().any(|n| n.seq == 0), "a NAK the timer made moot");
    let report = gbn::analyze(&analysis(&run).input());
    assert_eq!(report.violations, [], "{}", render(&report));
}

/// An ACK crossing the requester's timer expiry on the wire (review session 23), CX6 SEND
/// with three QPs on one link: the go-back resumes past what the ACK acknowledged (it
/// arrived before the go-back left), and the first transmission after the ACK's copy, taken
/// as arming the timer (nothing outstanding by the trace), had left before the ACK arrived:
/// the timeout's go-back 1 µs later was counted NAK-triggered, with no NAK.
#[test]
fn an_ack_crossing_the_timer_expiry_leaves_a_timeout() {
    let yaml = "requester: {nic: {type: cx6, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24, 10.1.0.4/24]}}
responder: {nic: {type: cx6, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24, 10.2.0.4/24]}}
traffic: {num-connections: 3, rdma-verb: send, num-msgs-per-qp: 16, mtu: 4096, message-size: 12484, multi-gid: true, barrier-sync: true, tx-depth: 4, min-retransmit-timeout: 1, max-retransmit-retry: 7}
rig: {seed: 37385, link-gbps: 40}
";
    // (Found with a 4.096 µs timer at 100 Gb/s: 40 Gb/s with an 8.192 µs one makes the same
    // 12 timeouts, 8 of them resuming past an ACK that arrived after the expiry.)
    // Not every send after progress acknowledging everything left before it arrived: CX6
    // WRITE on 12 Gb/s links (25 with the 4.096 µs timer it was found with), a NAK's late go-back right after the next message's first
    // packet (which armed the timer) was taken for a timeout when that send's start was
    // held back with the ACK before it.
    let slow = "requester: {nic: {type: cx6, switch-port: 144, ip-list: [10.1.0.2/24]}}
responder: {nic: {type: cx6, switch-port: 152, ip-list: [10.2.0.2/24]}, roce-parameters: {slow-restart: true}}
traffic: {num-connections: 1, rdma-verb: write, num-msgs-per-qp: 15, mtu: 1024, message-size: 11169, barrier-sync: true, tx-depth: 1, min-retransmit-timeout: 1, max-retransmit-retry: 7, data-pkt-events: [{qpn: 1, psn: 3, type: corrupt}]}
rig: {seed: 178752, link-gbps: 12}
";
    for (name, yaml) in [("gbn-ack-crossing-cx6", yaml), ("gbn-ack-crossing-cx6-slow", slow)] {
        let run = rig_run_yaml(name, yaml);
        let report = gbn::analyze(&analysis(&run).input());
        assert_compliant(name, &run, &report);
    }
}

/// Per connection, (NAK-triggered, timeout) go-backs as the emulator did them.
fn assert_go_backs_by_trigger(what: &str, run: &RigRun, report: &gbn::Report) {
    let truth = &run.result.truth;
    for s in &report.connections {
        let kinds = truth.recoveries.iter().filter(|r| r.conn == s.conn).map(|r| r.kind);
        let timeouts = kinds.clone().filter(|&k| k == RecoveryKind::Timeout).count();
        let want = (kinds.count() - timeouts, timeouts);
        let got = (s.nak_retransmissions as usize, s.timeout_retransmissions as usize);
        assert_eq!(got, want, "{what}: conn {} (NAK-triggered, timeout) go-backs\n{}", s.conn, render(report));
    }
}

/// Review, session 23: after out-of-order data (`ooo-data`, PSN p + 1 before p) the
/// responder NAKs p, then p + 1 (or acknowledges p first); each NAK's go-back resumes from
/// the oldest PSN unacknowledged as the requester knew it. With adaptive retransmission
/// (no timer to decide) a go-back not at the PSN of the one NAK remembered was counted a
/// timeout: a timeout retransmission that never happened, and a false
/// `local_ack_timeout_err` inconsistency in `counters`. Every NAK pending is remembered.
#[test]
fn go_backs_after_out_of_order_data_are_the_naks() {
    for (nic, verb, p) in
        NicKind::ALL.into_iter().flat_map(|n| [(n, Verb::Write, 5), (n, Verb::Send, 20), (n, Verb::Write, 43)])
    {
        let what = format!("gbn-ooo-adaptive-{}-{}-{p}", nic.name(), verb_name(verb));
        let faults = format!("    gbn-violations: [{{kind: ooo-data, qpn: 1, psn: {p}}}]\n");
        let knobs = Knobs { nic, verb, adaptive: true, msgs: 20, msg_pkts: 3, tx_depth: 2, faults, ..Knobs::default() };
        let (run, report) = gbn_report(&what, &knobs);
        assert_flags_exactly_the_injected(&what, &run, &report);
        assert!(!run.result.truth.naks.is_empty(), "{what}: the fault draws a NAK");
        assert_go_backs_by_trigger(&what, &run, &report);
    }
}

/// Review session 23 (`qp-fail-before-ack`): with `max-retransmit-retry` 0 the QP fails at
/// its first expiry, started by its first send; the ACK that passed the switch just before
/// that expiry (by the sends' clock) reached it after, and completed nothing. The analyzer
/// looked for the expiry only after a retry, so it took the ACK: goodput counted the
/// message and `req_transport_retries_exceeded` 1 was flagged inconsistent.
#[test]
fn a_qp_with_no_retries_fails_at_its_first_expiry() {
    let yaml = "requester: {nic: {type: cx6, switch-port: 144, ip-list: [10.1.0.2/24]}}
responder: {nic: {type: cx6, switch-port: 152, ip-list: [10.2.0.2/24]}}
traffic: {num-connections: 1, rdma-verb: write, num-msgs-per-qp: 2, mtu: 1024, message-size: 75000, min-retransmit-timeout: 1, max-retransmit-retry: 0}
rig: {seed: 1}
";
    let run = rig_run_yaml("gbn-retry-0-fails", yaml);
    let truth = &run.result.truth;
    assert_eq!(truth.qp_errors.len(), 1, "the QP failed at its first expiry");
    assert!(truth.timeouts.iter().all(|t| !t.retried));
    let r = analysis(&run).run();
    assert!(r.gbn.connections[0].retries_exhausted_by_ns.is_some(), "{:?}", r.gbn.connections);
    assert_eq!(r.counters.inconsistent(), []);
    assert_eq!(r.goodput.connections[0].totals.completed, 0, "the late ACK completed nothing");
}

/// `timeout` 0 disables the requester's timer (IBA vol. 1 §9.7.6.1.3): a lost tail stalls
/// its QP. The analyzers showed a 4.096 µs timer: unacknowledged data at the end was taken
/// for an exhausted retry count (`req_transport_retries_exceeded` called inconsistent).
/// Now: no timeout, the QP stalled (not failed), its message incomplete, and every counter
/// consistent; the other QP, its tail lost too but revealed by a NAK, recovers.
#[test]
fn a_lost_tail_with_the_timer_disabled_stalls_its_qp() {
    for (verb, adaptive) in [("write", false), ("send", true), ("read", false)] {
        let yaml = format!("requester: {{nic: {{type: cx6, switch-port: 144, ip-list: [10.1.0.2/24]}}, roce-parameters: {{adaptive-retrans: {adaptive}}}}}
responder: {{nic: {{type: cx6, switch-port: 152, ip-list: [10.2.0.2/24]}}}}
traffic: {{num-connections: 2, rdma-verb: {verb}, num-msgs-per-qp: 3, mtu: 1024, message-size: 4096, min-retransmit-timeout: 0, max-retransmit-retry: 7, data-pkt-events: [{{qpn: 1, psn: 8, type: drop}}, {{qpn: 2, psn: 3, type: drop}}]}}
rig: {{seed: 1}}
");
        let name = format!("gbn-timer-disabled-{verb}");
        let run = rig_run_yaml(&name, &yaml);
        let truth = &run.result.truth;
        assert_eq!((truth.timeouts.len(), truth.qp_errors.len()), (0, 0), "{name}");
        let r = analysis(&run).run();
        let stalled: Vec<(u32, bool, bool)> =
            r.gbn.connections.iter().map(|c| (c.conn, c.unacknowledged_at_end, c.stalled_at_end)).collect();
        assert_eq!(stalled, [(0, true, true), (1, false, false)], "{name}");
        assert!(r
            .gbn
            .connections
            .iter()
            .all(|c| c.retries_exhausted_by_ns.is_none() && c.timeout_retransmissions == 0));
        assert_eq!(r.gbn.violations, [], "{name}");
        assert_eq!(r.counters.inconsistent(), [], "{name}");
        assert!(r.retransmission.timer_disabled && r.retransmission.configured_timeout_ns.is_none(), "{name}");
        assert_eq!((r.retransmission.overall.timeouts, r.retransmission.problems()), (0, 0), "{name}");
        let completed: Vec<u64> = r.goodput.connections.iter().map(|c| c.totals.completed).collect();
        assert_eq!(completed, [1, 3], "{name}: conn 0 stalls at its second message");
        assert_eq!(completed, run.result.qps.iter().map(|q| q.completed).collect::<Vec<_>>(), "{name}");
    }
}

/// Review session 23 (seed 2090): retry count 0, 5 µs cables; the NAK for a corrupted
/// first packet reached the requester after its timer had expired: its QP had failed and
/// did not count the NAK (`packet_seq_err` 0, flagged inconsistent with the trace's 1).
#[test]
fn a_nak_reaching_a_failed_qp_is_not_counted() {
    let yaml = "requester: {nic: {type: cx5, switch-port: 144, ip-list: [10.1.0.2/24]}, roce-parameters: {adaptive-retrans: false}}
responder: {nic: {type: cx6, switch-port: 152, ip-list: [10.2.0.2/24]}, roce-parameters: {dcqcn-np-enable: true, adaptive-retrans: true}}
traffic: {num-connections: 1, rdma-verb: send, num-msgs-per-qp: 7, mtu: 4096, message-size: 8261, tx-depth: 1, barrier-sync: true, min-retransmit-timeout: 2, max-retransmit-retry: 0, data-pkt-events: [{qpn: 1, psn: 1, type: corrupt, iter: 1}]}
rig: {seed: 577041, link-delay-ns: 5000, switch-latency-ns: 400, faults: {paper-counter-bugs: true}}
";
    let run = rig_run_yaml("gbn-retry-0-late-nak", yaml);
    let truth = &run.result.truth;
    assert_eq!(truth.qp_errors.len(), 1);
    assert!(truth.naks.iter().any(|n| n.seq != 0), "the NAK went out");
    let r = analysis(&run).run();
    let c = &r.gbn.connections[0];
    assert_eq!((c.naks, c.naks_ignored), (1, 1), "{c:?}");
    assert!(c.retries_exhausted_by_ns.is_some());
    assert_eq!(r.counters.inconsistent(), []);
}

/// Sweep seed 3036: an 8 µs timer on 5 µs cables, one retry. Every message's ACK crossed
/// the expiry after that retry: the QP failed before the ACK reached it. The trace times
/// no round trip (every data packet was sent twice, so its ACK may answer either copy):
/// the ACK may as well have come in time. The analyzer took it as certainly heard, so
/// goodput counted the message and `req_transport_retries_exceeded` 1 was flagged
/// inconsistent with the trace's 0. Now the QP may have failed: the counter allows it,
/// and the message is completed only if the QP took its ACK.
#[test]
fn an_ack_crossing_the_last_expiry_may_have_come_too_late() {
    let yaml = "requester: {nic: {type: cx5, switch-port: 144, ip-list: [10.1.0.2/24]}, roce-parameters: {adaptive-retrans: false}}
responder: {nic: {type: cx4lx, switch-port: 152, ip-list: [10.2.0.2/24]}}
traffic: {num-connections: 1, rdma-verb: write, num-msgs-per-qp: 2, mtu: 4096, message-size: 1049, tx-depth: 1, min-retransmit-timeout: 1, max-retransmit-retry: 1}
rig: {seed: 182128, link-delay-ns: 5000}
";
    let run = rig_run_yaml("gbn-ack-crosses-last-expiry", yaml);
    let truth = &run.result.truth;
    assert_eq!(truth.qp_errors.len(), 1, "the QP failed at the expiry after its retry");
    assert_eq!(run.result.qps[0].completed, 0);
    let r = analysis(&run).run();
    let c = &r.gbn.connections[0];
    assert_eq!((c.timeout_retransmissions, c.retries_exhausted_by_ns), (1, None), "{c:?}");
    assert!(c.retries_maybe_exhausted_by_ns.is_some(), "{c:?}");
    let mut out = String::new();
    r.gbn.render(&mut out);
    assert!(out.contains("retries may have been exhausted"), "{out}");
    assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
    let t = &r.goodput.connections[0].totals;
    assert_eq!((t.messages, t.completed, t.qp_may_have_failed, t.mct_unknown), (1, 1, 1, 1), "{t:?}");
}

/// Sweep seed 1150: a 67 ms timer (`timeout` 14), one retry; the first copy of the
/// message's last packet was corrupted, so the timer's go-back resent it and its ACK came
/// 1.4 µs after the resend. The path was timed from the corrupted first copy (67 ms): a
/// delivery bound that long made the ACK look as if it might have crossed the expiry
/// after the retry, and the QP as if it might have failed. The ACK answers the resend.
#[test]
fn the_path_is_timed_from_the_first_copy_that_reached_the_responder() {
    let yaml = "requester: {nic: {type: cx4lx, switch-port: 144, ip-list: [10.1.0.2/24]}, roce-parameters: {adaptive-retrans: false}}
responder: {nic: {type: cx4lx, switch-port: 152, ip-list: [10.2.0.2/24]}}
traffic: {num-connections: 1, rdma-verb: write, num-msgs-per-qp: 1, mtu: 1024, message-size: 2048, min-retransmit-timeout: 14, max-retransmit-retry: 1, data-pkt-events: [{qpn: 1, psn: 2, type: corrupt, iter: 1}]}
rig: {seed: 1}
";
    let run = rig_run_yaml("gbn-path-after-corrupt", yaml);
    let truth = &run.result.truth;
    assert_eq!((truth.timeouts.len(), truth.qp_errors.len()), (1, 0));
    let r = analysis(&run).run();
    let c = &r.gbn.connections[0];
    assert_eq!((c.timeout_retransmissions, c.retries_maybe_exhausted_by_ns), (1, None), "{c:?}");
    assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
    let t = &r.goodput.connections[0].totals;
    assert_eq!((t.completed, t.qp_may_have_failed, t.mct_unknown), (1, 0, 0), "{t:?}");
}

/// Sweep seed 3109: four READ QPs from a CX6 Dx responder (100 GbE) to a CX4 Lx requester
/// (40 GbE) with a 16 µs timer: the switch port toward the requester queues the READ
/// answers for hundreds of µs, so the timer goes back again and again behind responses
/// whose copies passed the switch long before (they had not reached the requester). Each
/// such repeat was flagged `read-wrong-restart`, from the responses seen first, and the
/// retry count, reset by responses the requester heard only after those repeats, was
/// anyone's guess: QPs were claimed failed at the wrong time. Now progress counts from when
/// the port sends it (goodput's model of that port), in that order against the retries:
/// every QP ran out of them, as the emulator says. A new request sent while answers were
/// still queued there armed no timer: it was running.
#[test]
fn responses_queued_toward_a_slower_requester_are_heard_late() {
    let yaml = READ_QUEUED_TOWARD_A_SLOWER_REQUESTER;
    let run = rig_run_yaml("gbn-read-queued-toward-requester", yaml);
    let truth = &run.result.truth;
    assert_eq!(truth.qp_errors.len(), 4, "every QP ran out of retries");
    let r = analysis(&run).run();
    assert_eq!(r.gbn.violations, [], "no repeat is a wrong restart");
    for c in &r.gbn.connections {
        assert!(c.retries_exhausted_by_ns.is_some(), "conn {}: its retries ran out: {c:?}", c.conn);
    }
    // A request sent while answers were still queued toward the requester found data
    // outstanding (the timer running): no expiry "found everything acknowledged" there,
    // and local_ack_timeout_err is the trace's retried timeouts (93, not 101).
    assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
}

/// Sweep seed 2154: an 8 µs timer on 5 µs cables. The timer's go-back asked again from
/// PSN 0 while the first responses were still on their way (their copies just before it):
/// they reached the requester next, in order, and the gap after them (a dropped response)
/// was found as any other — the NIC counted it (`implied_nak_seq_err` 1). The replay took
/// the requester as recovering since the go-back, counted no episode, and flagged the
/// counter inconsistent.
#[test]
fn a_go_back_to_responses_on_their_way_leaves_the_requester_finding_gaps() {
    let yaml = "requester: {nic: {type: cx6, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24]}, roce-parameters: {dcqcn-rp-enable: true, dcqcn-np-enable: true, min-time-between-cnps: 50, adaptive-retrans: false, slow-restart: true}}
responder: {nic: {type: cx6, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24]}, roce-parameters: {dcqcn-rp-enable: false, dcqcn-np-enable: true, adaptive-retrans: true}}
traffic: {num-connections: 2, rdma-verb: read, num-msgs-per-qp: 4, mtu: 256, message-size: 9467, multi-gid: true, barrier-sync: true, tx-depth: 8, min-retransmit-timeout: 1, max-retransmit-retry: 2, data-pkt-events: [{qpn: 1, psn: 1, type: corrupt, iter: 1}, {qpn: 1, psn: 1, type: bit-error, iter: 2}, {qpn: 2, psn: 92, type: drop, iter: 1}]}
rig: {seed: 841696, dump-hosts: [{name: d0, weight: 1}, {name: d1, weight: 1}], link-delay-ns: 5000, faults: {gbn-violations: [{kind: read-no-nak, qpn: 2, psn: 92}]}}
";
    let run = rig_run_yaml("gbn-read-go-back-to-responses-on-their-way", yaml);
    let r = analysis(&run).run();
    assert_eq!(r.gbn.connections[1].ooo_episodes, 1, "{:?}", r.gbn.connections[1]);
    assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
}

/// Queueing sweep seed 5004: eight READ QPs from a CX5 to a CX4 Lx, a 67 µs timer, three
/// retries. QP 0's first response is dropped; the timer goes back three times, and the
/// fourth expiry fails it. The answers to its first go-back passed the switch before the
/// third, but the port toward the requester queued them for ~400 µs: the requester heard
/// them after it had failed. Taken in the trace's order they started the count over, so
/// the QP only "may have failed", and the counters were flagged inconsistent before
/// (session 25). In heard order the failure is certain.
#[test]
fn the_expiry_that_may_have_failed_a_qp_may_be_no_retried_timeout() {
    let yaml = "requester: {nic: {type: cx4lx, switch-port: 144, ip-list: [10.1.0.2/24]}, roce-parameters: {dcqcn-rp-enable: false, dcqcn-np-enable: true, min-time-between-cnps: 4, adaptive-retrans: false, slow-restart: true}}
responder: {nic: {type: cx5, switch-port: 152, ip-list: [10.2.0.2/24]}, roce-parameters: {dcqcn-rp-enable: false, dcqcn-np-enable: false, adaptive-retrans: false, slow-restart: true}}
traffic: {num-connections: 8, rdma-verb: read, num-msgs-per-qp: 4, mtu: 4096, message-size: 51399, multi-gid: true, barrier-sync: false, tx-depth: 8, min-retransmit-timeout: 4, max-retransmit-retry: 3, data-pkt-events: [{qpn: 1, psn: 1, type: drop, iter: 1}]}
rig: {seed: 31823, first-mirror-seq: 2147483476, link-delay-ns: 500}
";
    let run = rig_run_yaml("gbn-expiry-that-may-have-failed", yaml);
    assert_eq!(run.result.truth.qp_errors.len(), 1, "QP 0 ran out of retries");
    let r = analysis(&run).run();
    let c = &r.gbn.connections[0];
    assert!(c.retries_exhausted_by_ns.is_some() && c.retries_maybe_exhausted_by_ns.is_none(), "{c:?}");
    assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
}

/// Queueing sweep case 183 (session 34): six READ QPs from a CX6 Dx to a CX4 Lx, an 8 µs
/// timer. QP 4's response PSN 5 is corrupted; the ones after it passed the switch 2 µs
/// later, but the port toward the requester held them ~20 µs, past the timer's expiry: the
/// requester was going back when they came and found no gap (`implied_nak_seq_err` 0). By
/// their copies they came before the expiry, an episode, and the counter was flagged.
#[test]
fn a_gap_the_port_held_past_the_timers_expiry_is_found_going_back() {
    let yaml = "requester: {nic: {type: cx4lx, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24, 10.1.0.4/24, 10.1.0.5/24]}, roce-parameters: {dcqcn-np-enable: false, adaptive-retrans: false}}
responder: {nic: {type: cx6dx, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24, 10.2.0.4/24, 10.2.0.5/24]}, roce-parameters: {dcqcn-np-enable: false, adaptive-retrans: false}}
traffic: {num-connections: 6, rdma-verb: read, num-msgs-per-qp: 15, mtu: 4096, message-size: 31156, multi-gid: true, barrier-sync: true, tx-depth: 1, min-retransmit-timeout: 1, max-retransmit-retry: 7, data-pkt-events: [{qpn: 5, psn: 6, type: corrupt, iter: 1}]}
rig: {seed: 234970, dump-hosts: [{weight: 1}, {weight: 1}]}
";
    let run = rig_run_yaml("gbn-gap-held-past-the-expiry", yaml);
    assert!(run.result.truth.naks.is_empty(), "the timer went back first: no READ NAK");
    let r = analysis(&run).run();
    let c = &r.gbn.connections[4];
    assert_eq!((c.ooo_episodes, c.maybe_ooo_episodes), (0, 1), "{c:?}");
    assert_eq!(r.gbn.violations, []);
    assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
}

/// Queueing sweep case 31 (session 34): six READ QPs to a CX4 Lx over 5 µs cables, an 8 µs
/// timer, two retries. QP 2's first response passed the switch before its second go-back,
/// which still asked from PSN 0: the requester had not heard that response when it sent
/// the go-back, so its count did not start over before it. The QP failed at the next
/// expiry, before the response (queued at the port) reached it. Taken in the trace's
/// order, the response started the count over, the go-back counted once, and four QPs
/// that failed were taken alive: `req_transport_retries_exceeded` 5 flagged against 1.
#[test]
fn progress_a_go_back_went_back_behind_is_heard_after_it() {
    let yaml = "requester: {nic: {type: cx4lx, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24, 10.1.0.4/24]}, roce-parameters: {adaptive-retrans: false, slow-restart: true}}
responder: {nic: {type: cx5, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24, 10.2.0.4/24]}, roce-parameters: {dcqcn-np-enable: false, adaptive-retrans: false}}
traffic: {num-connections: 6, rdma-verb: read, num-msgs-per-qp: 5, mtu: 4096, message-size: 47847, multi-gid: true, tx-depth: 8, min-retransmit-timeout: 1, max-retransmit-retry: 2, data-pkt-events: [{qpn: 2, psn: 21, type: drop, iter: 1}]}
rig: {seed: 915297, dump-hosts: [{weight: 1}], link-delay-ns: 5000}
";
    let run = rig_run_yaml("gbn-progress-heard-after-the-go-back", yaml);
    let failed: BTreeSet<u32> = run.result.truth.qp_errors.iter().map(|e| e.conn).collect();
    assert_eq!(failed, BTreeSet::from([1, 2, 3, 4, 5]));
    let r = analysis(&run).run();
    for c in r.gbn.connections.iter().filter(|c| failed.contains(&c.conn)) {
        let failure = c.retries_exhausted_by_ns.or(c.retries_maybe_exhausted_by_ns);
        assert!(failure.is_some(), "conn {}: its retries ran out, or may have: {c:?}", c.conn);
    }
    assert_eq!(r.gbn.violations, []);
    assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
}

/// Queueing sweep case 5036 (session 34): the same order under capture loss. Three READ QPs
/// to a CX4 Lx over 5 µs cables, four copies lost. Responses taken as heard before a
/// timer's go-back that asked for them again started the count over, so the QP was taken
/// alive past its failure and every later response was checked against it: 29 false
/// `read-wrong-restart` and `ooo-data` flags.
#[test]
fn progress_heard_after_a_go_back_under_capture_loss_flags_nothing() {
    let yaml = "requester: {nic: {type: cx4lx, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24]}, roce-parameters: {dcqcn-np-enable: false, adaptive-retrans: false, slow-restart: true}}
responder: {nic: {type: e810, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24]}, roce-parameters: {dcqcn-np-enable: true, adaptive-retrans: false}}
traffic: {num-connections: 3, rdma-verb: read, num-msgs-per-qp: 19, mtu: 2048, message-size: 8187, multi-gid: true, tx-depth: 2, min-retransmit-timeout: 2, max-retransmit-retry: 3, data-pkt-events: [{qpn: 1, psn: 26, type: drop, iter: 1}, {qpn: 2, psn: 52, type: drop, iter: 1}, {qpn: 2, psn: 52, type: drop, iter: 2}, {qpn: 2, psn: 52, type: drop, iter: 3}, {qpn: 1, psn: 73, type: ecn, iter: 1}, {qpn: 1, psn: 54, type: ecn, iter: 1}, {qpn: 1, psn: 59, type: ecn, iter: 1}, {qpn: 2, psn: 55, type: ecn, iter: 1}, {qpn: 2, psn: 10, type: ecn, iter: 1}, {qpn: 2, psn: 24, type: ecn, iter: 1}, {qpn: 3, psn: 45, type: ecn, iter: 1}, {qpn: 3, psn: 46, type: ecn, iter: 1}, {qpn: 3, psn: 70, type: ecn, iter: 1}]}
rig: {seed: 537660, dump-hosts: [{weight: 1}, {weight: 1}], link-delay-ns: 5000, faults: {lose-mirror-copies: [{dump-host: 1, count: 4}]}}
";
    let run = rig_run_yaml("gbn-progress-heard-after-the-go-back-lossy", yaml);
    assert!(!run.result.truth.faults.lost_mirror_copies.is_empty());
    let r = analysis(&run).run();
    assert_eq!(r.gbn.violations, [], "{}", r.render());
}

/// Queueing sweep cases 745 (READ) and 719 (SEND), session 34: 5 µs and 2 µs cables, timers
/// of 16 and 8 µs, one retry. Each message's timer expires before its answer, whose copy
/// passes the switch just before the go-back's: the requester heard the answer after it
/// sent the go-back, so the count started over after it, and the QPs never failed.
/// - 745: the first go-back came with the count at 0, so its progress was not kept to be
///   heard again; the count stayed at 1, the QP was taken as failed at the next expiry,
///   and every later repeat was a `read-wrong-restart` (9 false flags).
/// - 719: the progress the go-back went behind was not the first since the last retry (a
///   duplicate ACK came between), and two QPs were taken as failed.
#[test]
fn a_go_back_behind_any_progress_since_the_last_retry_was_sent_before_it_was_heard() {
    let read = "requester: {nic: {type: cx4lx, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24, 10.1.0.4/24]}, roce-parameters: {adaptive-retrans: false}}
responder: {nic: {type: cx6dx, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24, 10.2.0.4/24]}, roce-parameters: {adaptive-retrans: false}}
traffic: {num-connections: 1, rdma-verb: read, num-msgs-per-qp: 11, mtu: 2048, message-size: 2487, multi-gid: true, tx-depth: 1, min-retransmit-timeout: 2, max-retransmit-retry: 1, data-pkt-events: [{qpn: 1, psn: 13, type: drop, iter: 1}, {qpn: 1, psn: 13, type: corrupt, iter: 2}, {qpn: 1, psn: 22, type: corrupt, iter: 1}, {qpn: 1, psn: 22, type: drop, iter: 2}, {qpn: 1, psn: 22, type: drop, iter: 3}, {qpn: 1, psn: 22, type: corrupt, iter: 4}, {qpn: 1, psn: 22, type: corrupt, iter: 5}, {qpn: 1, psn: 22, type: drop, iter: 6}, {qpn: 1, psn: 22, type: drop, iter: 7}, {qpn: 1, psn: 22, type: corrupt, iter: 8}, {qpn: 1, psn: 8, type: drop, iter: 1}]}
rig: {seed: 887842, dump-hosts: [{weight: 1}, {weight: 1}], link-delay-ns: 5000}
";
    let send = "requester: {nic: {type: cx4lx, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24]}, roce-parameters: {dcqcn-np-enable: false, adaptive-retrans: false, slow-restart: true}}
responder: {nic: {type: cx6dx, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24]}, roce-parameters: {dcqcn-np-enable: false, adaptive-retrans: false}}
traffic: {num-connections: 4, rdma-verb: send, num-msgs-per-qp: 13, mtu: 4096, message-size: 8149, multi-gid: true, barrier-sync: true, tx-depth: 2, min-retransmit-timeout: 1, max-retransmit-retry: 1, data-pkt-events: [{qpn: 4, psn: 7, type: drop, iter: 1}, {qpn: 4, psn: 7, type: drop, iter: 2}]}
rig: {seed: 940695, dump-hosts: [{weight: 1}, {weight: 1}], link-delay-ns: 2000}
";
    for (what, yaml) in [("read", read), ("send", send)] {
        let run = rig_run_yaml(&format!("gbn-go-back-behind-progress-{what}"), yaml);
        assert!(run.result.truth.qp_errors.is_empty(), "{what}: no QP failed");
        assert!(run.result.truth.timeouts.len() > 8, "{what}: the timers expire again and again");
        let r = analysis(&run).run();
        assert_eq!(r.gbn.violations, [], "{what}");
        for c in &r.gbn.connections {
            assert_eq!(c.retries_exhausted_by_ns, None, "{what}: conn {} did not fail: {c:?}", c.conn);
        }
        assert_eq!(r.counters.inconsistent(), [], "{what}: {}", r.render());
    }
}

/// Lossy queueing sweep case 5389 (session 34): WRITE from an E810 to a CX4 Lx, five copies
/// lost. The copy of a first transmission was missing, so its resend was taken for it; the
/// ACK of the first came before the resend left the port toward the responder (as that
/// port is modelled), and the "round trip" from the one to the other was negative: on the
/// 48-bit clock, years. Every later expiry then seemed to come before the progress that
/// restarted it, the QP was taken as failed, and its go-backs past the PSNs it had had
/// acknowledged were flagged `ooo-data`. Such a reply times nothing now.
#[test]
fn a_reply_before_its_request_left_the_port_times_no_path() {
    let yaml = "requester: {nic: {type: e810, switch-port: 144, ip-list: [10.1.0.2/24]}, roce-parameters: {dcqcn-np-enable: false, dcqcn-rp-enable: true, adaptive-retrans: false}}
responder: {nic: {type: cx4lx, switch-port: 152, ip-list: [10.2.0.2/24]}, roce-parameters: {dcqcn-np-enable: true, dcqcn-rp-enable: true, min-time-between-cnps: 50, adaptive-retrans: false}}
traffic: {num-connections: 4, rdma-verb: write, num-msgs-per-qp: 11, mtu: 4096, message-size: 31626, tx-depth: 1, min-retransmit-timeout: 2, max-retransmit-retry: 3, data-pkt-events: [{qpn: 1, psn: 56, type: corrupt, iter: 1}, {qpn: 3, psn: 7, type: drop, iter: 1}, {qpn: 3, psn: 7, type: drop, iter: 2}]}
rig: {seed: 929863, dump-hosts: [{weight: 1}, {weight: 1}], faults: {lose-mirror-copies: [{dump-host: 0, count: 5}]}}
";
    let run = rig_run_yaml("gbn-reply-before-its-request-left", yaml);
    assert_eq!(run.result.truth.faults.lost_mirror_copies.len(), 5);
    let r = analysis(&run).run();
    assert_eq!(r.gbn.violations, [], "{}", r.render());
}

/// Lossy queueing sweep case 5445 (session 34): SEND to a CX4 Lx over 5 µs cables, a 16 µs
/// timer, one retry; the copies of two first transmissions are missing. Their ACK came
/// before their resends left the port toward the responder: timing nothing by it (the
/// first fix of case 5389) left the path untimed, the way back taken as nothing, and the
/// ACK that reached the requester after the expiry that failed its QP was taken as heard
/// before it. It is timed from the resend's copy now, as before the port was modelled.
#[test]
fn a_reply_before_its_request_left_the_port_is_timed_from_its_copy() {
    let yaml = "requester: {nic: {type: cx6dx, switch-port: 144, ip-list: [10.1.0.2/24]}, roce-parameters: {dcqcn-np-enable: true, adaptive-retrans: false, slow-restart: true}}
responder: {nic: {type: cx4lx, switch-port: 152, ip-list: [10.2.0.2/24]}, roce-parameters: {dcqcn-np-enable: true, dcqcn-rp-enable: true, min-time-between-cnps: 4, adaptive-retrans: false, slow-restart: true}}
traffic: {num-connections: 2, rdma-verb: send, num-msgs-per-qp: 7, mtu: 4096, message-size: 49123, tx-depth: 1, min-retransmit-timeout: 2, max-retransmit-retry: 1, data-pkt-events: [{qpn: 1, psn: 46, type: corrupt, iter: 1}, {qpn: 2, psn: 72, type: corrupt, iter: 1}, {qpn: 2, psn: 72, type: drop, iter: 2}, {qpn: 2, psn: 72, type: corrupt, iter: 3}, {qpn: 1, psn: 33, type: drop, iter: 1}, {qpn: 2, psn: 20, type: drop, iter: 1}, {qpn: 2, psn: 20, type: drop, iter: 2}, {qpn: 2, psn: 20, type: drop, iter: 3}]}
rig: {seed: 222850, dump-hosts: [{weight: 1}, {weight: 1}], link-delay-ns: 5000, faults: {lose-mirror-copies: [{dump-host: 0, count: 3}]}}
";
    let run = rig_run_yaml("gbn-reply-before-its-request-left-timed", yaml);
    assert!(run.result.truth.qp_errors.iter().any(|e| e.conn == 0), "QP 0 ran out of retries");
    let r = analysis(&run).run();
    let c = &r.gbn.connections[0];
    assert!(c.retries_exhausted_by_ns.is_some_and(|by| by < 2_000_000_000), "{c:?}");
    assert_eq!(r.gbn.violations, [], "{}", r.render());
}

/// Queueing sweep case 479 (session 34): SEND to a CX4 Lx over 5 µs cables, an 8 µs timer,
/// two retries; every QP fails. QP 1's NAK reached the requester after the expiry that
/// failed it, which the trace cannot place before or after it (`retries_maybe_exhausted_by_ns`):
/// the NIC ignored it, and `packet_seq_err` 0 was flagged against the trace's 1. Such a NAK
/// may be one the NIC did not count.
#[test]
fn a_nak_after_the_expiry_that_may_have_failed_the_qp_may_be_ignored() {
    let yaml = "requester: {nic: {type: cx6dx, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24, 10.1.0.4/24]}, roce-parameters: {dcqcn-np-enable: true, adaptive-retrans: false}}
responder: {nic: {type: cx4lx, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24, 10.2.0.4/24]}, roce-parameters: {dcqcn-np-enable: false, adaptive-retrans: false, slow-restart: true}}
traffic: {num-connections: 4, rdma-verb: send, num-msgs-per-qp: 13, mtu: 2048, message-size: 31872, multi-gid: true, tx-depth: 2, min-retransmit-timeout: 1, max-retransmit-retry: 2, data-pkt-events: [{qpn: 3, psn: 190, type: drop, iter: 1}, {qpn: 3, psn: 190, type: corrupt, iter: 2}, {qpn: 3, psn: 190, type: drop, iter: 3}, {qpn: 3, psn: 190, type: drop, iter: 4}, {qpn: 3, psn: 190, type: corrupt, iter: 5}, {qpn: 3, psn: 190, type: corrupt, iter: 6}, {qpn: 3, psn: 190, type: drop, iter: 7}, {qpn: 3, psn: 190, type: corrupt, iter: 8}, {qpn: 4, psn: 113, type: drop, iter: 1}, {qpn: 2, psn: 4, type: drop, iter: 1}, {qpn: 2, psn: 4, type: drop, iter: 2}, {qpn: 2, psn: 4, type: drop, iter: 3}, {qpn: 3, psn: 202, type: drop, iter: 1}]}
rig: {seed: 411867, dump-hosts: [{weight: 1}], link-delay-ns: 5000}
";
    let run = rig_run_yaml("gbn-nak-after-a-maybe-failure", yaml);
    assert_eq!(run.result.truth.qp_errors.len(), 4);
    assert_eq!(run.result.truth.naks.len(), 1);
    let r = analysis(&run).run();
    let c = &r.gbn.connections[1];
    assert!(c.retries_maybe_exhausted_by_ns.is_some() && c.retries_exhausted_by_ns.is_none(), "{c:?}");
    assert_eq!((c.naks, c.naks_ignored, c.naks_maybe_ignored), (1, 0, 1), "{c:?}");
    assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
}

/// Queueing sweep case 726 (session 34): SEND from a CX5 to a CX4 Lx, nothing dropped, a
/// 33 µs timer: the port toward the responder queues the data past it, and every QP goes
/// back again and again. A timer go-back's copy left 1.7 µs after its expiry, behind the
/// packets the requester's NIC had queued; the timer restarted at that copy ran late by as
/// much, and the next go-back, 0.4 µs after its expiry, seemed too early for the timer: a
/// NAK go-back on a connection without a NAK (`local_ack_timeout_err` 38 flagged against 37).
#[test]
fn a_go_back_on_a_connection_without_a_nak_is_the_timers() {
    let yaml = "requester: {nic: {type: cx5, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24, 10.1.0.4/24]}, roce-parameters: {dcqcn-np-enable: true, min-time-between-cnps: 4, adaptive-retrans: false}}
responder: {nic: {type: cx4lx, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24, 10.2.0.4/24]}, roce-parameters: {dcqcn-np-enable: true, dcqcn-rp-enable: true, adaptive-retrans: false, slow-restart: true}}
traffic: {num-connections: 4, rdma-verb: send, num-msgs-per-qp: 10, mtu: 4096, message-size: 62625, multi-gid: true, barrier-sync: true, tx-depth: 8, min-retransmit-timeout: 3, max-retransmit-retry: 2}
rig: {seed: 882299, dump-hosts: [{weight: 1}]}
";
    let run = rig_run_yaml("gbn-go-back-without-a-nak", yaml);
    let truth = &run.result.truth;
    assert!(truth.naks.is_empty());
    let r = analysis(&run).run();
    for c in &r.gbn.connections {
        let timeouts = retried_timeouts(truth, c.conn);
        assert!(timeouts > 1, "conn {}: its timer went back", c.conn);
        assert_eq!((c.timeout_retransmissions, c.nak_retransmissions), (timeouts, 0), "conn {}", c.conn);
    }
    assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
}

/// Queueing sweep case 1032 (session 34): four READ QPs from an E810 to a CX4 Lx, a 16 µs
/// timer. QP 1's response PSN 224 is dropped; the one after it passed the switch at 372 µs,
/// but the port toward the requester held it ~80 µs. The timer's repeat came 380 µs after
/// that copy, past the CX4 Lx's 300 µs READ NAK bound by the copy's clock, not by when the
/// response left the port: a false `missing-nak`. The bound now runs from then.
#[test]
fn the_read_nak_bound_runs_from_when_the_gap_left_the_port() {
    let yaml = "requester: {nic: {type: cx4lx, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24]}, roce-parameters: {dcqcn-np-enable: true, adaptive-retrans: false}}
responder: {nic: {type: e810, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24]}, roce-parameters: {dcqcn-np-enable: true, dcqcn-rp-enable: true, min-time-between-cnps: 4, adaptive-retrans: false, slow-restart: true}}
traffic: {num-connections: 4, rdma-verb: read, num-msgs-per-qp: 17, mtu: 4096, message-size: 64611, multi-gid: true, tx-depth: 8, min-retransmit-timeout: 2, max-retransmit-retry: 7, data-pkt-events: [{qpn: 2, psn: 224, type: drop, iter: 1}]}
rig: {seed: 112175, dump-hosts: [{weight: 1}, {weight: 1}]}
";
    let run = rig_run_yaml("gbn-read-nak-bound-from-the-port", yaml);
    let r = analysis(&run).run();
    assert_eq!(r.gbn.violations, [], "{}", r.render());
    assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
}

/// A random configuration with one host behind a slower link (a CX4 Lx against a 100 GbE
/// NIC): READ toward a slower requester, WRITE/SEND toward a slower responder (or the
/// other way), large messages, short timers, a few drops, at times long cables — the
/// port toward the slower host queues for up to hundreds of µs, past the timers (the
/// session-34 queueing sweep, as a test).
fn queued_yaml(rng: &mut rig::rng::Rng, case: u64) -> String {
    let pick = |rng: &mut rig::rng::Rng, xs: &[u64]| xs[rng.between(0, xs.len() as u64 - 1) as usize];
    let verb = ["read", "read", "write", "send"][rng.between(0, 3) as usize];
    let fast = ["cx5", "cx6dx", "e810"][rng.between(0, 2) as usize];
    let slow_requester = verb == "read" || rng.chance(0.3);
    let (requester, responder) = if slow_requester { ("cx4lx", fast) } else { (fast, "cx4lx") };
    let conns = pick(rng, &[1, 2, 3, 4, 6]);
    let mtu = pick(rng, &[1024, 2048, 4096, 4096]);
    let packets = pick(rng, &[2, 4, 8, 12, 16]);
    let size = (packets - 1) * mtu + rng.between(1, mtu);
    let msgs = rng.between(2, 16);
    let mut events = Vec::new();
    for _ in 0..pick(rng, &[0, 1, 1, 2, 3]) {
        let (qpn, psn) = (rng.between(1, conns), rng.between(1, packets * msgs));
        for iter in 1..=pick(rng, &[1, 1, 2, 3, 8]) {
            let kind = if rng.chance(0.7) { "drop" } else { "corrupt" };
            events.push(format!("{{qpn: {qpn}, psn: {psn}, type: {kind}, iter: {iter}}}"));
        }
    }
    let ips = |net: u32| (0..conns.min(3)).map(|i| format!("10.{net}.0.{}/24", i + 2)).collect::<Vec<_>>().join(", ");
    let cables = if rng.chance(0.3) { format!(", link-delay-ns: {}", pick(rng, &[2000, 5000])) } else { String::new() };
    format!(
        "requester: {{nic: {{type: {requester}, switch-port: 144, ip-list: [{}]}}, roce-parameters: {{adaptive-retrans: false, slow-restart: {}}}}}
responder: {{nic: {{type: {responder}, switch-port: 152, ip-list: [{}]}}, roce-parameters: {{adaptive-retrans: false}}}}
traffic: {{num-connections: {conns}, rdma-verb: {verb}, num-msgs-per-qp: {msgs}, mtu: {mtu}, message-size: {size}, multi-gid: {}, tx-depth: {}, min-retransmit-timeout: {}, max-retransmit-retry: {}, data-pkt-events: [{}]}}
rig: {{seed: {}, dump-hosts: [{{weight: 1}}, {{weight: 1}}]{cables}}}
",
        ips(1),
        rng.chance(0.4),
        ips(2),
        conns > 1,
        pick(rng, &[1, 2, 4, 8]),
        pick(rng, &[1, 2, 3, 4, 6, 8, 10, 14]),
        pick(rng, &[1, 2, 3, 7]),
        events.join(", "),
        case + 1,
    )
}

/// Random queued runs ([`queued_yaml`]), complete traces: no violation, every NIC counter
/// consistent, and no QP taken as failed that did not fail, nor alive at the end (retries
/// not run out) when it failed and the trace cannot have it otherwise. `GBN_RANDOM_RUNS`
/// sets the count (default 100), as for the other randomized tests. Before session 34, 27
/// of the first 1,000 failed. Known to fail still at `GBN_RANDOM_RUNS=1500`:
/// - case 206: `local_ack_timeout_err` above the go-backs the trace shows (35 against
///   32): expiries while the requester's NIC was still sending an earlier go-back, which
///   show no go-back of their own (case 1474 was one of these until session 36 counted
///   the silent expiries a go-back follows,
///   [`an_expiry_before_the_ack_of_everything_counts_even_when_a_go_back_follows`]);
/// - case 965: a READ gap whose response the replay has reach the requester before the
///   expiry that failed its QP, which the NIC never counted.
#[test]
fn random_queued_runs_give_no_false_problems() {
    random_cases(
        "gbn-queued-random",
        0x9_0e0e,
        |rng, case| Yaml(queued_yaml(rng, case)),
        |name, yaml| {
            let run = rig_run_yaml(name, &yaml.0);
            let failed: BTreeSet<u32> = run.result.truth.qp_errors.iter().map(|e| e.conn).collect();
            let r = analysis(&run).run();
            assert_eq!(r.gbn.violations, [], "{}", r.render());
            assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
            for c in &r.gbn.connections {
                let alive = c.retries_ran_out_at_end == Some(false) && c.retries_maybe_exhausted_by_ns.is_none();
                assert!(!failed.contains(&c.conn) || !alive, "conn {} failed: {c:?}", c.conn);
                let taken_failed = c.retries_exhausted_by_ns.is_some();
                assert!(failed.contains(&c.conn) || !taken_failed, "conn {} did not fail: {c:?}", c.conn);
            }
        },
    );
}

/// A configuration, listed as written when its case fails.
struct Yaml(String);

impl std::fmt::Debug for Yaml {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\n{}", self.0)
    }
}

/// Queueing sweep case 20 (session 34): six WRITE QPs from a CX5 to a CX4 Lx, a 65 µs
/// timer. The port toward the responder queues the data ~35 µs, so the first round trip
/// from a data packet's copy to its ACK's took 35 µs, and half of it was taken as the way
/// back to the requester: the first ACK then seemed to reach it after its timer expired,
/// and QP 0's NAK go-back was counted a timeout (`local_ack_timeout_err` 2 flagged against
/// 3). The path is now timed from when the data left the port toward the responder.
#[test]
fn the_path_is_timed_from_when_data_left_the_port_toward_a_slower_responder() {
    let yaml = "requester: {nic: {type: cx5, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24]}, roce-parameters: {dcqcn-np-enable: false, adaptive-retrans: false, slow-restart: true}}
responder: {nic: {type: cx4lx, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24]}, roce-parameters: {dcqcn-np-enable: false, adaptive-retrans: true}}
traffic: {num-connections: 6, rdma-verb: write, num-msgs-per-qp: 4, mtu: 4096, message-size: 45341, multi-gid: true, tx-depth: 1, min-retransmit-timeout: 4, max-retransmit-retry: 2, data-pkt-events: [{qpn: 2, psn: 37, type: corrupt, iter: 1}, {qpn: 2, psn: 37, type: drop, iter: 2}, {qpn: 2, psn: 37, type: drop, iter: 3}, {qpn: 1, psn: 19, type: drop, iter: 1}]}
rig: {seed: 980455, dump-hosts: [{weight: 1}]}
";
    let run = rig_run_yaml("gbn-path-from-the-port-toward-the-responder", yaml);
    let truth = &run.result.truth;
    let r = analysis(&run).run();
    for c in &r.gbn.connections {
        let timeouts = retried_timeouts(truth, c.conn);
        let naks = truth.recoveries.iter().filter(|t| t.conn == c.conn && t.kind == RecoveryKind::Nack).count() as u64;
        assert_eq!((c.timeout_retransmissions, c.nak_retransmissions), (timeouts, naks), "conn {}", c.conn);
    }
    assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
}

/// Queueing sweep case 1118 (session 36): six SEND QPs from an E810 to a CX4 Lx, a 16 µs
/// timer and 7 retries, every QP timing out until its retries ran out. QP 5's timer expired
/// 0.24 µs before the copy of the ACK of everything outstanding passed the switch; the ACK
/// reached the requester before the expiry's go-back left, which went on with the next new
/// PSN: a silent expiry, retried and counted by the NIC. The send after it armed the timer
/// again, which expired into a go-back 17 µs later; that go-back restarted the timer and
/// the silent expiry was lost with the restart. Each retried expiry is now a go-back the
/// trace shows or a silent timeout, whatever comes later.
#[test]
fn an_expiry_before_the_ack_of_everything_counts_even_when_a_go_back_follows() {
    let yaml = "requester: {nic: {ip-list: [10.1.0.2/24, 10.1.0.3/24, 10.1.0.4/24], switch-port: 144, type: e810}, roce-parameters: {adaptive-retrans: false, dcqcn-np-enable: true, dcqcn-rp-enable: false, min-time-between-cnps: 4, slow-restart: false}}
responder: {nic: {ip-list: [10.2.0.2/24, 10.2.0.3/24, 10.2.0.4/24], switch-port: 152, type: cx4lx}, roce-parameters: {adaptive-retrans: false, dcqcn-np-enable: true, dcqcn-rp-enable: false, min-time-between-cnps: 0, slow-restart: false}}
traffic: {barrier-sync: false, data-pkt-events: [], max-retransmit-retry: 7, message-size: 32542, min-retransmit-timeout: 2, mtu: 2048, multi-gid: true, num-connections: 6, num-msgs-per-qp: 9, rdma-verb: send, tx-depth: 1}
rig: {dump-hosts: [{weight: 1}], seed: 629727}
";
    let run = rig_run_yaml("gbn-silent-expiry-before-a-go-back", yaml);
    let truth = &run.result.truth;
    let r = analysis(&run).run();
    let silent: u64 = r.gbn.connections.iter().map(|c| c.silent_timeouts).sum();
    assert!(silent >= 1, "the case has a silent expiry: {}", r.render());
    for c in &r.gbn.connections {
        let retried = retried_timeouts(truth, c.conn);
        let visible = truth.recoveries.iter().filter(|t| t.conn == c.conn && t.kind == RecoveryKind::Timeout).count();
        assert_eq!(c.timeout_retransmissions, visible as u64, "conn {}: go-backs by timeout", c.conn);
        assert_eq!(c.timeout_retransmissions + c.silent_timeouts, retried, "conn {}: retried expiries", c.conn);
        assert!(c.retries_exhausted_by_ns.is_some(), "conn {} ran out of retries: {c:?}", c.conn);
    }
    assert_eq!(r.gbn.violations, [], "{}", r.render());
    assert_eq!(r.counters.inconsistent(), [], "{}", r.render());
}

/// The emulator's retried expiries of connection `conn` (the NIC's `local_ack_timeout_err`).
fn retried_timeouts(truth: &rig::truth::Truth, conn: u32) -> u64 {
    truth.timeouts.iter().filter(|t| t.conn == conn && t.retried).count() as u64
}

fn found_kind(k: RecoveryKind) -> control::analyze::retrans::RecoveryKind {
    use control::analyze::retrans::RecoveryKind as Found;
    match k {
        RecoveryKind::Nack => Found::Nack,
        RecoveryKind::ReadNack => Found::ReadNack,
        RecoveryKind::Timeout => Found::Timeout,
    }
}

/// Review session 23: with adaptive retransmission the timer's timeout is not known, and
/// the READ NAK faults went unflagged: a repeat 5.6 ms after the gap (the timer's) was
/// taken for its NAK, and a second repeat 1 µs after the first for the timer's. A NAK
/// bound does not depend on the timer; the adaptive timer runs no shorter than Lumina
/// §6.3's shortest (4.1 ms) or the configured timeout. Every NVIDIA NIC.
#[test]
fn read_nak_faults_are_flagged_under_adaptive_retransmission() {
    for nic in [NicKind::Cx4Lx, NicKind::Cx5, NicKind::Cx6Dx] {
        for kind in ["read-no-nak", "read-double-nak"] {
            let faults = format!("    gbn-violations:\n    - {{kind: {kind}, qpn: 1, psn: 2}}\n");
            let events = vec![ev(1, 2, Drop, 1)];
            let knobs = Knobs {
                verb: Verb::Read,
                nic,
                msgs: 2,
                msg_pkts: 4,
                adaptive: true,
                faults,
                events,
                ..Knobs::default()
            };
            let what = format!("{kind} {nic:?} adaptive");
            let run = rig_run(&format!("gbn-adaptive-{kind}-{nic:?}"), &knobs);
            assert_eq!(run.result.truth.faults.gbn_violations.len(), 1, "{what}: the fault fires");
            let r = analysis(&run).run();
            assert_flags_exactly_the_injected(&what, &run, &r.gbn);
            assert_eq!(r.counters.inconsistent(), [], "{what}");
            let found: Vec<_> = r.retransmission.recoveries.iter().map(|x| x.kind).collect();
            let truth: Vec<_> = run.result.truth.recoveries.iter().map(|x| found_kind(x.kind)).collect();
            assert_eq!(found, truth, "{what}: recoveries as the emulator's");
        }
    }
}

/// Review session 23 (`read-no-nak-missed`): CX5 and CX6 Dx repeat a READ request within
/// µs (Lumina §6.1), but the analyzer allowed every NVIDIA NIC CX4 Lx's 300 µs, so a timer
/// of 131 or 262 µs repeated the request first and an injected `read-no-nak` passed. Their
/// bound is 20 µs now; with a timer shorter than that (16 µs) the trace cannot tell, and
/// the gap is listed unverifiable, not passed silently.
#[test]
fn read_no_nak_is_judged_against_the_nics_own_bound() {
    let faults = "    gbn-violations:\n    - {kind: read-no-nak, qpn: 1, psn: 2}\n".to_string();
    for (nic, timeout) in [NicKind::Cx5, NicKind::Cx6Dx].into_iter().flat_map(|n| [2, 3, 5, 6].map(|t| (n, t))) {
        let events = vec![ev(1, 2, Drop, 1)];
        let knobs = Knobs {
            verb: Verb::Read,
            nic,
            msgs: 2,
            msg_pkts: 4,
            timeout,
            faults: faults.clone(),
            events,
            ..Knobs::default()
        };
        let what = format!("{nic:?} timeout {timeout}");
        let (run, report) = gbn_report(&format!("gbn-read-no-nak-{nic:?}-{timeout}"), &knobs);
        assert_eq!(run.result.truth.faults.gbn_violations.len(), 1, "{what}: the fault fires");
        if timeout >= 3 {
            assert_flags_exactly_the_injected(&what, &run, &report);
        } else {
            assert_eq!(report.violations, [], "{what}");
            let seq = run.result.truth.faults.gbn_violations[0].seq;
            let listed: Vec<_> = report.unverifiable.iter().map(|v| (v.kind, v.seq)).collect();
            assert_eq!(listed, [(ViolationKind::MissingNak, seq)], "{what}");
        }
    }
}

/// Review session 23 (`e810-read-missing-nak`): E810 READ, retry count 0, 67 ms timer: the
/// QP failed at its first expiry, before the E810's ≈83 ms READ NAK was due, and the open
/// gap was flagged `missing-nak` at the end of the trace. Whether a NAK would have come
/// the trace cannot tell: unverifiable, no violation.
#[test]
fn a_read_gap_open_when_the_qp_failed_before_its_nak_was_due_is_unverifiable() {
    let events = vec![ev(1, 2, Drop, 1)];
    let knobs = Knobs { verb: Verb::Read, nic: NicKind::E810, msgs: 1, msg_pkts: 4, events, ..Knobs::default() };
    let yaml = knobs.yaml().replace("max-retransmit-retry: 7", "max-retransmit-retry: 0");
    let run = rig_run_yaml("gbn-e810-read-qp-failed", &yaml);
    assert_eq!(run.result.truth.qp_errors.len(), 1, "the QP failed");
    let report = gbn::analyze(&analysis(&run).input());
    assert_eq!(report.violations, [], "{}", render(&report));
    let listed: Vec<_> = report.unverifiable.iter().map(|v| v.kind).collect();
    assert_eq!(listed, [ViolationKind::MissingNak]);
}

/// Random READ fault runs (session 23), three findings:
/// - CX4 Lx, retry count 1: the QP failed at its second expiry, and the responses that
///   still reached it, one out of sequence, were taken for a gap it owed a NAK
///   (`missing-nak`, and `implied_nak_seq_err` 1 flagged against the trace's 2);
/// - CX5, 2 µs cables, 33 µs timer: the `read-no-nak` gap stayed pending in `retrans`
///   through the timer's go-back, and the next gap's NACK was paired with it (generation
///   latency 64.7 µs instead of 8.8 µs);
/// - CX5, 8 µs cables, 33 µs timer: the timer repeated the request before the gap's NAK,
///   which came 6 µs later: that NAK answers the gap (nothing unverifiable).
#[test]
fn read_gaps_around_short_timers_and_failed_qps() {
    let yaml = |nic: &str, t: u8, retry: u8, events: &str, rig: &str| {
        format!(
            "requester: {{nic: {{type: {nic}, switch-port: 144, ip-list: [10.1.0.2/24]}}, roce-parameters: {{adaptive-retrans: false}}}}
responder: {{nic: {{type: {nic}, switch-port: 152, ip-list: [10.2.0.2/24]}}}}
traffic: {{num-connections: 1, rdma-verb: read, num-msgs-per-qp: 4, tx-depth: 2, mtu: 1024, message-size: 2048, min-retransmit-timeout: {t}, max-retransmit-retry: {retry}, data-pkt-events: [{events}]}}
rig: {{{rig}}}
"
        )
    };
    let no_nak = "faults: {gbn-violations: [{kind: read-no-nak, qpn: 1, psn: 2}]}";
    let failed = yaml(
        "cx4",
        4,
        1,
        "{qpn: 1, psn: 2, type: drop, iter: 1}, {qpn: 1, psn: 3, type: drop, iter: 2}",
        &format!("seed: 28, {no_nak}"),
    );
    let run = rig_run_yaml("gbn-read-failed-qp", &failed);
    assert_eq!(run.result.truth.qp_errors.len(), 1);
    let r = analysis(&run).run();
    assert_eq!(r.gbn.violations, [], "{}", render(&r.gbn));
    assert_eq!(r.counters.inconsistent(), []);

    let paired = yaml(
        "cx5",
        3,
        2,
        "{qpn: 1, psn: 2, type: corrupt, iter: 1}, {qpn: 1, psn: 5, type: drop, iter: 2}",
        &format!("seed: 18, link-delay-ns: 2000, {no_nak}"),
    );
    let run = rig_run_yaml("gbn-read-no-nak-pairing", &paired);
    let r = analysis(&run).run();
    assert_flags_exactly_the_injected("cx5 no-nak pairing", &run, &r.gbn);
    let truth: Vec<_> =
        run.result.truth.recoveries.iter().map(|x| (found_kind(x.kind), x.observed_generation_ns)).collect();
    let found: Vec<_> = r.retransmission.recoveries.iter().map(|x| (x.kind, x.generation_ns)).collect();
    assert_eq!(found, truth);

    let late_nak = yaml("cx5", 3, 2, "{qpn: 1, psn: 4, type: corrupt, iter: 1}", "seed: 78, link-delay-ns: 8000")
        .replace("num-msgs-per-qp: 4, tx-depth: 2", "num-msgs-per-qp: 1, tx-depth: 1")
        .replace("message-size: 2048", "message-size: 8192");
    let run = rig_run_yaml("gbn-read-nak-after-timer", &late_nak);
    let report = gbn::analyze(&analysis(&run).input());
    assert_compliant("cx5 NAK after the timer's repeat", &run, &report);
    assert_eq!(report.unverifiable, [], "{}", render(&report));

    // CX5, 8 µs cables, 33 µs timer, retry count 0: the QP failed before any response
    // reached it; the requester's last sign of life is older than the gap the trace shows,
    // and the negative time between wrapped into "overdue" (a false `missing-nak`): the
    // NAK was never due, unverifiable.
    let unseen_gap = yaml("cx5", 3, 0, "{qpn: 1, psn: 3, type: corrupt, iter: 1}", "seed: 179, link-delay-ns: 8000")
        .replace("num-msgs-per-qp: 4, tx-depth: 2", "num-msgs-per-qp: 4, tx-depth: 1")
        .replace("message-size: 2048", "message-size: 8192");
    let run = rig_run_yaml("gbn-read-gap-after-failure", &unseen_gap);
    assert_eq!(run.result.truth.qp_errors.len(), 1);
    let report = gbn::analyze(&analysis(&run).input());
    assert_eq!(report.violations, [], "{}", render(&report));
}

/// Review (session 23), a random lossy run (the reviewer's generator, seed 145, five copies
/// lost): the copy of a corrupted packet (PSN 14) was lost, the receiver model took PSN 14
/// as received unseen, and the NAK naming it put the model back to expecting it, but with
/// no NAK outstanding: when the go-back's resend of PSN 14 was dropped too, PSN 15 was taken
/// to owe a new NAK (`missing-nak`), though the responder's first one was still outstanding.
#[test]
fn a_nak_for_a_psn_taken_as_received_unseen_is_outstanding() {
    let yaml = "requester: {nic: {type: cx6dx, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24, 10.1.0.4/24, 10.1.0.5/24]}, roce-parameters: {dcqcn-rp-enable: false, dcqcn-np-enable: true, min-time-between-cnps: 0, adaptive-retrans: false, slow-restart: true}}
responder: {nic: {type: cx4, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24, 10.2.0.4/24, 10.2.0.5/24]}, roce-parameters: {dcqcn-rp-enable: false, dcqcn-np-enable: true, min-time-between-cnps: 10, adaptive-retrans: true, slow-restart: false}}
traffic: {num-connections: 4, rdma-verb: send, num-msgs-per-qp: 19, mtu: 256, message-size: 241, multi-gid: true, barrier-sync: false, tx-depth: 3, min-retransmit-timeout: 8, max-retransmit-retry: 7, data-pkt-events: [{qpn: 2, psn: 19, type: drop, iter: 1}, {qpn: 4, psn: 14, type: corrupt, iter: 1}, {qpn: 4, psn: 14, type: drop, iter: 2}, {qpn: 4, psn: 14, type: ecn, iter: 3}, {qpn: 2, psn: 19, type: ecn, iter: 1}, {qpn: 3, psn: 1, type: corrupt, iter: 1}, {qpn: 1, psn: 13, type: bit-error, iter: 1}, {qpn: 1, psn: 1, type: corrupt, iter: 1}, {qpn: 1, psn: 1, type: ecn, iter: 2}]}
rig: {seed: 805361, first-mirror-seq: 2147483554, dump-hosts: [{name: d0, weight: 3}, {name: d1, weight: 2}], faults: {paper-counter-bugs: true, lose-mirror-copies: [{dump-host: 0, count: 5}]}}
";
    let run = rig_run_yaml("gbn-nak-for-assumed", yaml);
    assert_eq!(run.result.truth.faults.lost_mirror_copies.len(), 5);
    assert!(run.result.truth.faults.gbn_violations.is_empty());
    let report = gbn::analyze(&analysis(&run).input());
    assert_eq!(report.violations, [], "{}", render(&report));
}

/// Review, session 24: the copy of a READ request went missing, so the requester model's
/// requested range ended before the responses the trace shows; the repeated request (the
/// READ NAK) for a gap in or after that message was taken for a new request, and the gap
/// was flagged `missing-nak` ("none by the end of the trace", exit 1) though its repeat is
/// in the trace. A response proves its request: the repeat is a go-back and answers the gap
/// (NAK-triggered, as the emulator's), whichever request's copy is lost.
#[test]
fn a_repeat_after_an_unseen_read_request_answers_its_gap() {
    // CX5, 3 × 20 KiB: gaps at the first response of the first message and of the second
    // (a request unseen: no in-order response tells when the timer started), and in the
    // third.
    let yaml = |lost: &str| {
        format!(
            "requester: {{nic: {{type: cx5, switch-port: 144, ip-list: [192.0.2.2/24]}}}}
responder: {{nic: {{type: cx5, switch-port: 152, ip-list: [192.0.2.3/24]}}}}
traffic: {{num-connections: 1, rdma-verb: read, num-msgs-per-qp: 3, mtu: 1024, message-size: 20480, data-pkt-events: [{{qpn: 1, psn: 1, type: drop, iter: 1}}, {{qpn: 1, psn: 21, type: drop, iter: 2}}, {{qpn: 1, psn: 50, type: corrupt, iter: 3}}]}}
rig: {{seed: 1{lost}}}
"
        )
    };
    let whole = rig_run_yaml("gbn-read-request-copy", &yaml(""));
    let requests: Vec<u32> =
        whole.result.packets.iter().filter(|p| p.opcode == 0x0c && !p.retransmission).map(|p| p.seq).collect();
    assert_eq!(requests.len(), 3, "one request per message");
    let truth = &whole.result.truth;
    assert_eq!(truth.recoveries.len(), 3, "{:#?}", truth.recoveries);
    assert!(truth.recoveries.iter().all(|r| r.kind == RecoveryKind::ReadNack), "{:#?}", truth.recoveries);
    for seq in requests {
        let lost = format!(", faults: {{lose-mirror-copies: [{{dump-host: 0, seqs: [{seq}]}}]}}");
        let run = rig_run_yaml(&format!("gbn-read-request-copy-{seq}"), &yaml(&lost));
        assert_eq!(run.result.truth.faults.lost_mirror_copies.len(), 1);
        let report = gbn::analyze(&analysis(&run).input());
        assert_eq!(report.violations, [], "request copy {seq} lost\n{}", render(&report));
        let s = &report.connections[0];
        let counts = (s.nak_retransmissions, s.timeout_retransmissions);
        assert_eq!(counts, (3, 0), "request copy {seq} lost: (NAK-triggered, timeout) go-backs\n{}", render(&report));
        let missing_nak = report.unverifiable.iter().filter(|v| v.kind == ViolationKind::MissingNak);
        assert_eq!(missing_nak.count(), 0, "request copy {seq} lost: every gap's repeat is in the trace");
    }
}
