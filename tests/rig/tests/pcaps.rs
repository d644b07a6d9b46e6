//! The dump hosts' pcaps: tshark decodes every frame without a malformed-packet or error
//! expert note, and its fields match the ground truth; restoring a copy gives back a
//! frame whose ICRC verifies (unless the event was a bit error).

mod common;

use common::{ev, Knobs};
use rig::config::{EventKind, RigConfig, Verb};
use rig::profile::NicKind;
use rig::{Capture, Rig};
use rocescope_tests::tshark;
use wire::frame::{classify, ClassifyConfig, FrameClass};

const FIELDS: &[&str] = &[
    "frame.len",
    "frame.cap_len",
    "eth.src",
    "ip.ttl",
    "udp.dstport",
    "udp.checksum",
    "infiniband.bth.opcode",
    "infiniband.bth.destqp",
    "infiniband.bth.psn",
    "infiniband.bth.m",
    "_ws.malformed",
    "_ws.expert.severity",
];

/// Wireshark's PI_ERROR severity.
const SEVERITY_ERROR: u32 = 0x0080_0000;

fn rig_run(cfg: &RigConfig, dir: &std::path::Path) -> rig::RunResult {
    Rig::new(cfg, Capture::Pcap(dir), true).unwrap().run().unwrap()
}

fn check_with_tshark(k: Knobs) {
    if !tshark::available() {
        return;
    }
    let cfg = k.config();
    let scratch = tempfile::Builder::new().prefix(&format!("rig-pcaps-{}-", k.seed)).tempdir().unwrap();
    let dir = scratch.path();
    let r = rig_run(&cfg, dir);
    // In switch order: seq order, across the wrap too.
    let records = &r.packets;
    for host in 0..cfg.rig.dump_hosts.len() {
        let file = dir.join(rig::rig::dump_file_name(host));
        let rows = tshark_rows(&file, cfg.mirror_port());
        let expected: Vec<_> = records.iter().filter(|p| p.dump_host == Some(host)).collect();
        assert_eq!(rows.len(), expected.len(), "{}", file.display());
        for (row, p) in rows.iter().zip(expected) {
            let get = |name: &str| row[FIELDS.iter().position(|f| *f == name).unwrap()].as_str();
            assert_eq!(get("_ws.malformed"), "", "seq {} is malformed for tshark", p.seq);
            for sev in get("_ws.expert.severity").split(',').filter(|s| !s.is_empty()) {
                assert!(sev.parse::<u32>().unwrap() < SEVERITY_ERROR, "seq {}: expert error {sev}", p.seq);
            }
            assert_eq!(get("frame.len"), p.frame_len.to_string());
            let seq_mac = format!("00:00:{}", hex_colon(p.seq));
            assert_eq!(get("eth.src"), seq_mac, "the src MAC carries the mirror seq");
            let event = p.event.map_or(0, |e| e.mirror_event() as u8);
            assert_eq!(get("ip.ttl"), event.to_string(), "the TTL carries the event");
            assert_eq!(get("udp.dstport"), cfg.mirror_port().to_string());
            let conn = &r.conns[p.conn as usize];
            let sender = conn.end(p.from);
            assert_eq!(get("udp.checksum"), format!("0x{:04x}", sender.udp_src_port), "original src port");
            assert_eq!(get("infiniband.bth.opcode"), p.opcode.to_string());
            let dest = conn.end(p.from.other());
            assert_eq!(get("infiniband.bth.destqp"), format!("0x{:06x}", dest.qpn));
            assert_eq!(get("infiniband.bth.psn"), p.wire_psn.to_string());
            let mig = if p.opcode == 0x81 { false } else { cfg.requester.nic.kind.profile().mig_req };
            if p.from == rig::packet::Side::Requester {
                assert_eq!(get("infiniband.bth.m"), if mig { "1" } else { "0" }, "seq {}", p.seq);
            }
        }
    }
    check_restoration(&cfg, &r, dir);
}

fn tshark_rows(file: &std::path::Path, mirror_port: u16) -> Vec<Vec<String>> {
    // The copies go to the mirror port; tell tshark they are RoCE.
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(file)
        .args(["-d", &format!("udp.port=={mirror_port},infiniband")])
        .args(["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a"])
        .args(FIELDS.iter().flat_map(|f| ["-e", f]))
        .output()
        .expect("running tshark");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| l.split('\t').map(str::to_string).collect()).collect()
}

fn hex_colon(seq: u32) -> String {
    seq.to_be_bytes().iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

/// Restoring each whole copy with the dataplane's code gives back an ICRC-valid RoCEv2
/// frame, except for bit-error copies (their IP ident is flipped).
fn check_restoration(cfg: &RigConfig, r: &rig::RunResult, dir: &std::path::Path) {
    if cfg.rig.snaplen != 0 {
        return;
    }
    let classify_cfg = ClassifyConfig { mirror_port: cfg.mirror_port(), ..ClassifyConfig::default() };
    for host in 0..cfg.rig.dump_hosts.len() {
        let file = std::fs::File::open(dir.join(rig::rig::dump_file_name(host))).unwrap();
        let mut reader = pcap_file::pcap::PcapReader::new(file).unwrap();
        while let Some(pkt) = reader.next_packet() {
            let mut frame = pkt.unwrap().data.into_owned();
            let info = classify(&frame, &classify_cfg).unwrap();
            assert_eq!(info.class, FrameClass::MirroredRoce);
            let meta = info.mirror.unwrap();
            wire::mirror::restore(&mut frame, &info, &classify_cfg);
            let ok = wire::icrc::verify_frame(&frame).unwrap();
            assert_eq!(ok, meta.event != wire::mirror::Event::Corrupt, "seq {}", meta.seq);
        }
    }
    assert!(!r.packets.is_empty());
}

fn every_event(verb: Verb, nic: NicKind, seed: u64) -> Knobs {
    Knobs {
        seed,
        verb,
        nic,
        conns: 2,
        msgs: 3,
        msg_pkts: 6,
        dump_hosts: vec![1, 2],
        slow_restart: true,
        events: vec![
            ev(1, 2, EventKind::Drop, 1),
            ev(1, 9, EventKind::Ecn, 1),
            ev(2, 4, EventKind::Corrupt, 1),
            ev(2, 4, EventKind::Drop, 2),
        ],
        ..Knobs::default()
    }
}

#[test]
fn write_send_read_decode_cleanly_and_match_the_truth() {
    for (i, verb) in [Verb::Write, Verb::Send, Verb::Read].into_iter().enumerate() {
        check_with_tshark(every_event(verb, NicKind::Cx5, 10 + i as u64));
    }
}

#[test]
fn e810_and_cx4_decode_cleanly() {
    check_with_tshark(every_event(Verb::Write, NicKind::E810, 20));
    check_with_tshark(every_event(Verb::Read, NicKind::Cx4Lx, 21));
}

#[test]
fn trimmed_copies_decode_cleanly() {
    let mut k = every_event(Verb::Write, NicKind::Cx6Dx, 30);
    k.extra_rig = "  snaplen: 128\n".into();
    check_with_tshark(k);
}

#[test]
fn mirror_seqs_cross_the_31_bit_wrap() {
    let mut k = every_event(Verb::Write, NicKind::Cx5, 40);
    k.extra_rig = format!("  first-mirror-seq: {}\n", wire::mirror::SEQ_MAX - 20);
    let cfg = k.config();
    let r = common::run(&cfg);
    let seqs: Vec<u32> = r.truth.events.iter().map(|e| e.seq).collect();
    assert!(r.packets.iter().any(|p| p.seq == wire::mirror::SEQ_MAX));
    assert!(r.packets.iter().any(|p| p.seq == 1), "wraps to 1, never 0: {seqs:?}");
    assert!(r.packets.iter().all(|p| p.seq != 0));
    check_with_tshark(k);
}
