//! The injected events the trace shows against the configured ones (`analyze::events`),
//! checked with the emulator's own record of which configured events never matched a
//! packet (`truth.unmatched_events`).

mod support;

use control::analyze::events::{self, EventKind as Kind, Intent};
use rig::config::{DataPktEvent, EventKind};
use support::*;

fn intent(e: &DataPktEvent) -> Intent {
    let kind = match e.kind {
        EventKind::Drop => Kind::Drop,
        EventKind::Ecn => Kind::Ecn,
        EventKind::Corrupt => Kind::Corrupt,
    };
    Intent { qpn: e.qpn, psn: e.psn, kind, iter: e.iter }
}

/// Drops of one PSN in two rounds (ITER 1 and 2, the second its go-back's resend), an ECN
/// mark in the third round, a mark and a corruption on another QP, and two events no
/// packet meets: a round that never comes and a PSN past the last.
fn knobs() -> Knobs {
    let events = vec![
        ev(1, 3, EventKind::Drop, 1),
        ev(1, 3, EventKind::Drop, 2),
        ev(1, 5, EventKind::Ecn, 3),
        ev(1, 6, EventKind::Ecn, 9),
        ev(2, 4, EventKind::Ecn, 1),
        ev(2, 6, EventKind::Corrupt, 1),
        ev(2, 40, EventKind::Drop, 1),
    ];
    Knobs { conns: 2, msgs: 4, events, ..Knobs::default() }
}

#[test]
fn configured_events_are_found_in_their_iter_round() {
    for verb in [rig::config::Verb::Write, rig::config::Verb::Read] {
        let run = rig_run(&format!("events-found-{verb:?}"), &Knobs { verb, ..knobs() });
        let a = analysis(&run);
        let r = events::analyze(&a.input());
        let unmatched: Vec<Intent> = run.result.truth.unmatched_events.iter().map(intent).collect();
        assert_eq!(unmatched.len(), 2, "{verb:?}: the run meets all but the two impossible events");
        assert_eq!(r.never_seen, unmatched, "{verb:?}");
        assert!(!r.may_be_unseen);
        assert_eq!((r.configured, r.unexpected), (Some(7), 0), "{verb:?}");
        assert_eq!(r.seen.len(), 5, "{verb:?}: {:#?}", r.seen);
        for s in &r.seen {
            assert!(s.iter_certain && s.intent.is_some(), "{verb:?}: {s:?}");
            let i = s.intent.unwrap();
            assert_eq!((s.qpn, s.psn, s.iter, s.kind), (Some(i.qpn), Some(i.psn), Some(i.iter), i.kind));
        }
        let mut out = String::new();
        r.render(&mut out);
        assert!(out.contains("2 configured events never happened"), "{out}");
    }
}

/// An event the trace shows that the configuration does not name (here: taken out of the
/// run's config.yaml after the run) is counted as unexpected, not matched to another.
#[test]
fn an_event_the_configuration_does_not_name_is_unexpected() {
    let run = rig_run("events-unexpected", &knobs());
    let path = run.dir.join("config.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut cfg: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    let list = cfg["traffic"]["data-pkt-events"].as_sequence_mut().unwrap();
    list.remove(1); // qpn 1 psn 3 drop iter 2
    std::fs::write(&path, serde_yaml_ng::to_string(&cfg).unwrap()).unwrap();
    let a = analysis(&run);
    let r = events::analyze(&a.input());
    assert_eq!((r.configured, r.unexpected), (Some(6), 1));
    let odd: Vec<_> = r.seen.iter().filter(|s| s.intent.is_none()).map(|s| (s.qpn, s.psn, s.iter)).collect();
    assert_eq!(odd, [(Some(1), Some(3), Some(2))]);
}

/// With copies missing, a configured event not in the trace may have happened unseen,
/// and after the gap ITER is only a lower bound: an event is matched to a configured one
/// only where that leaves one choice, and never to a wrong one. Here PSN 3 is dropped in
/// six rounds and the copies of two of those drops are lost: the later rounds' ITERs are
/// lower bounds (here exact, as the rounds' other packets still show each go-back), so
/// which configured drop each is stays undetermined.
#[test]
fn missing_copies_never_make_a_wrong_match() {
    let mut events: Vec<_> = (1..=6).map(|i| ev(1, 3, EventKind::Drop, i)).collect();
    events.push(ev(1, 7, EventKind::Ecn, 1));
    let mut seqs = Vec::new();
    let probe = rig_run("events-lossy-probe", &Knobs { events: events.clone(), ..Knobs::default() });
    let drops: Vec<u32> = probe.result.truth.events.iter().filter(|e| e.psn == 3).map(|e| e.seq).collect();
    assert_eq!(drops.len(), 6, "every round of PSN 3 is dropped");
    seqs.extend([drops[1], drops[2]]);
    let faults = format!("    lose-mirror-copies:\n    - {{dump-host: 0, seqs: {seqs:?}}}\n");
    let run = rig_run("events-lossy", &Knobs { events, faults, ..Knobs::default() });
    let a = analysis(&run);
    let r = events::analyze(&a.input());
    assert!(r.may_be_unseen);
    assert_eq!(r.unexpected, 0, "{:#?}", r.seen);
    let truth: std::collections::HashMap<u32, u32> = run.result.truth.events.iter().map(|e| (e.seq, e.iter)).collect();
    for s in &r.seen {
        if let Some(i) = s.intent {
            assert_eq!(Some(&i.iter), truth.get(&s.seq), "{s:?}");
        }
    }
    let after: Vec<_> = r.seen.iter().filter(|s| s.psn == Some(3) && !s.iter_certain).collect();
    assert_eq!(after.len(), 3, "{:#?}", r.seen);
    let got: Vec<_> = after.iter().map(|s| (s.undetermined, s.intent, s.iter, truth[&s.seq])).collect();
    assert!(
        after.iter().all(|s| s.undetermined && s.intent.is_none() && s.iter <= truth.get(&s.seq).copied()),
        "{got:?}"
    );
    let lost: Vec<u32> = r.never_seen.iter().map(|i| i.iter).collect();
    assert_eq!(lost, [2, 3], "the lost drops are the configured events no copy shows");
    let mut out = String::new();
    r.render(&mut out);
    assert!(out.contains("events: 5 in the trace, 7 configured, 5 of them seen"), "{out}");
}
