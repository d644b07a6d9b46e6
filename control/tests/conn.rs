//! Connection tracking against the emulator: every RoCE packet lands on its connection,
//! with QP info (Lumina's switch_message_snapshot.yml) and without it (paired by PSNs).

mod support;

use control::analyze::Analysis;
use support::*;

fn check_pairing(a: &Analysis, run: &RigRun) {
    assert_eq!(a.conns.list.len(), run.result.conns.len());
    assert_eq!(a.conns.unassigned, 0);
    for c in &a.conns.list {
        let truth = &run.result.conns[c.id as usize];
        assert_eq!((c.requester.qpn, c.responder.qpn), (truth.requester.qpn, truth.responder.qpn));
        assert_eq!(c.ipsn, Some(truth.requester.ipsn));
        let expected = run.result.packets.iter().filter(|p| p.conn == c.id && p.dump_host.is_some()).count();
        assert_eq!(c.packets.len(), expected, "conn {}", c.id);
    }
}

#[test]
fn packets_land_on_their_connection_with_qp_info() {
    for verb in [rig::config::Verb::Write, rig::config::Verb::Read] {
        let knobs = Knobs { conns: 3, verb, multi_gid: false, ..Knobs::default() };
        let run = rig_run(&format!("conn-qpinfo-{}", verb.name()), &knobs);
        let out = reconstruct(&run);
        let a = Analysis::load(&out).unwrap();
        assert!(a.conns.list.iter().all(|c| c.from_qp_info));
        check_pairing(&a, &run);
    }
}

#[test]
fn without_qp_info_directions_pair_by_psn() {
    let knobs = Knobs { conns: 3, multi_gid: false, ..Knobs::default() };
    let run = rig_run("conn-inferred", &knobs);
    std::fs::remove_file(run.dir.join("switch_message_snapshot.yml")).unwrap();
    let out = reconstruct(&run);
    let a = Analysis::load(&out).unwrap();
    assert!(a.conns.list.iter().all(|c| !c.from_qp_info));
    // Inferred connections come in order of first request; map them to the truth by QPN.
    assert_eq!(a.conns.list.len(), run.result.conns.len());
    for c in &a.conns.list {
        let truth = run.result.conns.iter().position(|t| t.responder.qpn == c.responder.qpn).unwrap();
        let t = &run.result.conns[truth];
        assert_eq!(c.requester.qpn, t.requester.qpn, "paired by PSN");
        let expected = run.result.packets.iter().filter(|p| p.conn as usize == truth).count();
        assert_eq!(c.packets.len(), expected);
    }
}
