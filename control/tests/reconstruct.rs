//! Reconstruction against the testbed emulator's ground truth: the merged trace of a
//! run's dump hosts is the emulator's single ordered stream, copy for copy.

mod support;

use support::*;
use trace::record::flag;

#[test]
fn two_dump_hosts_merge_into_the_switch_order() {
    let knobs = Knobs { conns: 2, msgs: 6, dump_hosts: vec![1, 2], ..Knobs::default() };
    let run = rig_run("two-hosts", &knobs);
    let a = reconstructed(&run);
    let view = a.view();
    let truth: Vec<_> = run.result.packets.iter().filter(|p| p.dump_host.is_some()).collect();
    assert_eq!(view.records.len(), truth.len());
    for (r, t) in view.records.iter().zip(&truth) {
        assert_eq!((r.wire_seq(), r.switch_ts_ns, r.opcode), (t.seq, t.switch_ts_ns, t.opcode), "{t:?}");
        assert_eq!(r.source as usize, t.dump_host.unwrap());
        assert!(r.has(flag::ICRC_OK), "restored copy seq {} must verify its ICRC", t.seq);
    }
    assert_eq!(a.summary.missing_total, 0);
    assert!(a.summary.issues.is_empty());
}
