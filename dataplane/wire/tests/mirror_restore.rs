//! The Lumina mirror rewrite (`MirrorRepr::apply`) and the dumper's restoration
//! (`mirror::restore`) are inverses up to the fields DESIGN says are kept or re-applied,
//! and a restored copy's ICRC verifies again unless the event was a bit error.

mod common;

use common::*;
use proptest::prelude::*;
use wire::bth::Opcode;
use wire::build::{IpRepr, Payload};
use wire::ethernet::Vlans;
use wire::frame::{classify, peek_dumped, ClassifyConfig, FrameClass};
use wire::mirror::{self, CopyForm, Event, MirrorMeta, MirrorRepr, SEQ_MAX, TIMESTAMP_MAX};
use wire::{icrc, ipv4, ipv6, udp, Error};

/// What restore(apply(x)) must be: x with TTL / hop limit = event, MACs = meta, UDP
/// checksum 0, CE if the event was an ECN mark, ident flipped for a bit error (IPv4), and
/// the IPv4 checksum recomputed.
fn expected_restored(x: &[u8], meta: &MirrorMeta) -> Vec<u8> {
    let mut e = x.to_vec();
    let info = classify(x, &ClassifyConfig::default()).unwrap();
    let (l3, l4) = (usize::from(info.l3_offset), usize::from(info.l4_offset));
    e[0..6].copy_from_slice(&meta.timestamp_mac());
    e[6..12].copy_from_slice(&meta.seq_mac());
    udp::Packet::new_unchecked(&mut e[l4..]).set_checksum(0);
    match info.ip_version {
        4 => {
            let mut ip = ipv4::Packet::new_unchecked(&mut e[l3..]);
            ip.set_ttl(meta.event as u8);
            if meta.event == Event::Ecn {
                ip.set_ecn(ipv4::ecn::CE);
            }
            if meta.event == Event::Corrupt {
                let id = ip.ident();
                ip.set_ident(id ^ 0xffff);
            }
            ip.fill_checksum();
        }
        6 => {
            let mut ip = ipv6::Packet::new_unchecked(&mut e[l3..]);
            ip.set_hop_limit(meta.event as u8);
            if meta.event == Event::Ecn {
                ip.set_ecn(ipv4::ecn::CE);
            }
        }
        v => panic!("ip version {v}"),
    }
    e
}

fn arb_meta() -> impl Strategy<Value = MirrorMeta> {
    (1..=SEQ_MAX, 0..=TIMESTAMP_MAX, proptest::sample::select(&Event::ALL[..]))
        .prop_map(|(seq, timestamp_ns, event)| MirrorMeta { seq, timestamp_ns, event })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn restore_inverts_apply(
        fr in arb_roce_frame(),
        meta in arb_meta(),
        mirror_port in any::<u16>().prop_filter("not the RoCE port", |p| *p != udp::ROCE_PORT),
        udp_src_port in any::<u16>(),
        fill in any::<u8>(),
        snap_frac in 0.0f64..1.0,
    ) {
        let x = fr.to_vec(Payload::Fill(fill)).unwrap();
        let cfg = ClassifyConfig { mirror_port, roce_port: udp::ROCE_PORT };
        let orig = classify(&x, &cfg).unwrap();
        prop_assert_eq!(orig.class, FrameClass::Roce);

        let m = MirrorRepr { meta, mirror_port, udp_src_port };
        let mut y = x.clone();
        m.apply(&mut y).unwrap();
        let info = classify(&y, &cfg).unwrap();
        prop_assert_eq!(info.class, FrameClass::MirroredRoce);
        prop_assert_eq!(info.mirror, Some(meta));
        prop_assert_eq!((info.opcode, info.dest_qp, info.psn), (orig.opcode, orig.dest_qp, orig.psn));
        prop_assert_eq!((info.l3_offset, info.l4_offset, info.bth_offset), (orig.l3_offset, orig.l4_offset, orig.bth_offset));
        let l4 = usize::from(info.l4_offset);
        let u = udp::Packet::new_unchecked(&y[l4..]);
        prop_assert_eq!((u.src_port(), u.dst_port(), u.checksum()), (udp_src_port, mirror_port, fr.udp.src_port));
        // The copy predates the event: no CE mark on it.
        let ecn_at = usize::from(info.l3_offset) + 1;
        prop_assert_eq!(y[ecn_at], x[ecn_at]);
        if info.ip_version == 4 {
            prop_assert!(ipv4::Packet::new_checked(&y[usize::from(info.l3_offset)..]).unwrap().verify_checksum());
        }

        let want = expected_restored(&x, &meta);
        let mut z = y.clone();
        mirror::restore(&mut z, &info, &cfg);
        prop_assert_eq!(&z, &want);
        if info.ip_version == 4 {
            prop_assert!(ipv4::Packet::new_checked(&z[usize::from(info.l3_offset)..]).unwrap().verify_checksum());
        }
        // DESIGN: a restored copy validates its ICRC again unless the event was a bit
        // error (IPv4 ident is covered by the ICRC; IPv6 has no ident to flip).
        let corrupted = meta.event == Event::Corrupt && info.ip_version == 4;
        prop_assert_eq!(icrc::verify_frame(&z).unwrap(), !corrupted);
        if !corrupted {
            prop_assert!(icrc::verify_frame(&x).unwrap());
        }

        // A trimmed copy restores to the same prefix, except that the IPv4 checksum is
        // only recomputed when the whole header was captured.
        let snap = (y.len() as f64 * snap_frac) as usize;
        let mut t = y[..snap].to_vec();
        mirror::restore(&mut t, &info, &cfg);
        // Fields are written only when wholly inside the capture; the src port only when
        // the checksum field that stashes it is captured too.
        let mut want_t = want[..snap].to_vec();
        let l3 = usize::from(info.l3_offset);
        let mut keep = |range: std::ops::Range<usize>| {
            let r = range.start.min(snap)..range.end.min(snap);
            want_t[r.clone()].copy_from_slice(&y[r]);
        };
        if info.ip_version == 4 && snap < l3 + 20 {
            keep(l3 + 10..l3 + 12);
        }
        if snap < l4 + 8 {
            keep(l4..l4 + 2);
            keep(l4 + 6..l4 + 8);
        }
        if snap < l4 + 4 {
            keep(l4 + 2..l4 + 4);
        }
        prop_assert_eq!(t, want_t);
    }

    /// A copy as Lumina's dumper writes it (ports restored, checksum over the 128 bytes
    /// kept, CE for an ECN event) is recognised by its record timestamp, and restores to
    /// the same bytes as the switch's form of the copy restored and cut alike.
    #[test]
    fn a_dumped_copy_restores_as_the_mirrored_one(
        fr in arb_roce_frame(),
        meta in arb_meta(),
        mirror_port in any::<u16>().prop_filter("not the RoCE port", |p| *p != udp::ROCE_PORT),
        udp_src_port in any::<u16>(),
        fill in any::<u8>(),
    ) {
        let x = fr.to_vec(Payload::Fill(fill)).unwrap();
        let cfg = ClassifyConfig { mirror_port, roce_port: udp::ROCE_PORT };
        let mut y = x.clone();
        MirrorRepr { meta, mirror_port, udp_src_port }.apply(&mut y).unwrap();
        let mut d = y.clone();
        let (kept, wire_len) = mirror::dumper_rewrite(&mut d, &cfg).unwrap();
        prop_assert_eq!(kept, y.len().min(mirror::DUMPER_CAPLEN));
        let info = classify(&y, &cfg).unwrap();
        // The dumper counts the IP header's length + 14: a frame under the 60-byte Ethernet
        // minimum carries padding beyond that (docs/formats.md §6, "Lumina-dumper files").
        let counted = y.len() - usize::from(info.l3_offset) + 14;
        if y.len() > 60 {
            prop_assert_eq!(wire_len as usize, counted);
        } else {
            prop_assert!(wire_len as usize <= counted);
        }
        d.truncate(kept);

        // The signature: dst MAC = the record's timestamp, to the file's resolution.
        let ts = meta.timestamp_ns;
        prop_assert_eq!(peek_dumped(&d, ts, 1, &cfg), Some(meta));
        prop_assert_eq!(peek_dumped(&d, ts + 1, 1, &cfg), None);
        prop_assert_eq!(peek_dumped(&d, ts / 1000 * 1000, 1000, &cfg), Some(meta));
        prop_assert_eq!(peek_dumped(&d, ts + 1000, 1000, &cfg), None);
        // Neither the switch's form nor the original packet has it.
        prop_assert_eq!(peek_dumped(&y, ts, 1, &cfg), None);
        prop_assert_eq!(peek_dumped(&x, ts, 1, &cfg), None);

        let mut want = y.clone();
        mirror::restore(&mut want, &info, &cfg);
        let mut got = d.clone();
        got.resize(y.len(), 0);
        let dumped_cfg = CopyForm::Dumped.classify_config(&cfg);
        let got_info = classify(&got, &dumped_cfg).unwrap();
        prop_assert_eq!(got_info.class, FrameClass::MirroredRoce);
        prop_assert_eq!(got_info.mirror, Some(meta));
        mirror::restore_form(&mut got, &got_info, &cfg, CopyForm::Dumped);
        prop_assert_eq!(&got[..kept], &want[..kept]);
    }

    #[test]
    fn restore_ignores_frames_that_are_not_mirrored(fr in arb_roce_frame(), fill in any::<u8>()) {
        let x = fr.to_vec(Payload::Fill(fill)).unwrap();
        let cfg = ClassifyConfig::default();
        let info = classify(&x, &cfg).unwrap();
        let mut z = x.clone();
        mirror::restore(&mut z, &info, &cfg);
        prop_assert_eq!(z, x);
    }
}

#[test]
fn apply_then_restore_by_hand() {
    // An RC ACK like oferby frame 16 (src port 72, syndrome 6, MSN 1).
    let mut fr = roce_frame(Opcode::RC_ACK, IpRepr::V4(ipv4_repr()), Vlans::Untagged, 0);
    fr.udp.src_port = 72;
    let x = fr.to_vec(Payload::Zeros).unwrap();
    let meta = MirrorMeta { seq: 0x1234_5678, timestamp_ns: 0x0102_0304_0506, event: Event::Ecn };
    let m = MirrorRepr { meta, mirror_port: 9741, udp_src_port: 0xabcd };
    let mut y = x.clone();
    m.apply(&mut y).unwrap();
    assert_eq!(&y[0..12], &[1, 2, 3, 4, 5, 6, 0, 0, 0x12, 0x34, 0x56, 0x78]);
    assert_eq!(y[14 + 8], 2, "TTL carries the event");
    assert_eq!(y[15] & 3, ipv4::ecn::ECT0, "no CE on the copy");
    assert_eq!(&y[34..36], &0xabcdu16.to_be_bytes(), "random src port");
    assert_eq!(&y[36..38], &9741u16.to_be_bytes(), "mirror port");
    assert_eq!(&y[40..42], &72u16.to_be_bytes(), "original src port stashed in the checksum");
    // Only the MACs, TTL, IPv4 checksum and UDP ports / checksum differ.
    let changed: Vec<usize> = (0..x.len()).filter(|&i| x[i] != y[i]).collect();
    assert!(
        changed.iter().all(|&i| i < 12 || i == 22 || (24..26).contains(&i) || (34..42).contains(&i)),
        "{changed:?}"
    );

    let cfg = ClassifyConfig::default();
    let info = classify(&y, &cfg).unwrap();
    mirror::restore(&mut y, &info, &cfg);
    assert_eq!(&y[34..36], &72u16.to_be_bytes());
    assert_eq!(&y[36..38], &4791u16.to_be_bytes());
    assert_eq!(&y[40..42], &[0, 0]);
    assert_eq!(y[15] & 3, ipv4::ecn::CE);
    assert_eq!(y[22], 2, "TTL (event) kept");
    let mut macs = meta.timestamp_mac().to_vec();
    macs.extend_from_slice(&meta.seq_mac());
    assert_eq!(&y[0..12], &macs[..], "MACs (timestamp, seq) kept");
    assert!(icrc::verify_frame(&y).unwrap());
}

#[test]
fn corrupt_event_flips_ident_and_breaks_icrc() {
    let fr = roce_frame(Opcode::RC_SEND_ONLY, IpRepr::V4(ipv4_repr()), Vlans::Untagged, 64);
    let x = fr.to_vec(Payload::Fill(0x5a)).unwrap();
    let meta = MirrorMeta { seq: 1, timestamp_ns: 5, event: Event::Corrupt };
    let mut y = x.clone();
    MirrorRepr { meta, mirror_port: 9741, udp_src_port: 1 }.apply(&mut y).unwrap();
    assert_eq!(&y[18..20], &(0xbeefu16 ^ 0xffff).to_be_bytes());
    let cfg = ClassifyConfig::default();
    let info = classify(&y, &cfg).unwrap();
    assert_eq!(info.mirror.unwrap().event, Event::Corrupt);
    mirror::restore(&mut y, &info, &cfg);
    assert_eq!(&y[18..20], &(0xbeefu16 ^ 0xffff).to_be_bytes(), "ident left flipped: that is the corruption");
    assert!(!icrc::verify_frame(&y).unwrap());
}

#[test]
fn apply_rejects_bad_input() {
    let fr = roce_frame(Opcode::RC_SEND_ONLY, IpRepr::V6(ipv6_repr()), Vlans::Untagged, 0);
    let x = fr.to_vec(Payload::Zeros).unwrap();
    let ok = MirrorMeta { seq: 1, timestamp_ns: 0, event: Event::None };
    let mut y = x.clone();
    let bad_seq = MirrorRepr { meta: MirrorMeta { seq: 0, ..ok }, mirror_port: 9741, udp_src_port: 1 };
    assert!(matches!(bad_seq.apply(&mut y), Err(Error::BadMirrorSeq { .. })));
    let bad_ts = MirrorRepr { meta: MirrorMeta { timestamp_ns: 1 << 48, ..ok }, mirror_port: 9741, udp_src_port: 1 };
    assert!(matches!(bad_ts.apply(&mut y), Err(Error::BadRepr { .. })));
    assert_eq!(y, x, "a rejected apply leaves the frame untouched");
    let good = MirrorRepr { meta: ok, mirror_port: 9741, udp_src_port: 1 };
    let mut arp = vec![0u8; 60];
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    assert_eq!(good.apply(&mut arp), Err(Error::NotUdp));
    assert_eq!(good.apply(&mut [0u8; 5]), Err(Error::Runt { len: 5 }));
    // IPv6: the hop limit carries the event.
    let mut y = x.clone();
    MirrorRepr { meta: MirrorMeta { event: Event::Drop, ..ok }, ..good }.apply(&mut y).unwrap();
    assert_eq!(y[14 + 7], 1);
    let info = classify(&y, &ClassifyConfig::default()).unwrap();
    assert_eq!(info.mirror.unwrap().event, Event::Drop);
}

#[test]
fn restore_with_garbage_info_is_harmless() {
    use wire::frame::FrameInfo;
    let meta = MirrorMeta { seq: 1, timestamp_ns: 0, event: Event::Ecn };
    for l3 in [0u16, 14, 59, 60, 61, 1000, u16::MAX] {
        for l4 in [0u16, 34, 55, 58, 59, 60, 1000, u16::MAX] {
            for ip_version in [0u8, 4, 6, 9] {
                let info = FrameInfo {
                    class: FrameClass::MirroredRoce,
                    l3_offset: l3,
                    l4_offset: l4,
                    bth_offset: 0,
                    ip_version,
                    mirror: Some(meta),
                    opcode: None,
                    dest_qp: 0,
                    psn: 0,
                };
                let orig = vec![0x45u8; 60];
                let mut b = orig.clone();
                mirror::restore(&mut b, &info, &ClassifyConfig::default());
                assert_eq!(b.len(), 60);
                // Only the UDP header and the IP header may change.
                let (l3, l4) = (usize::from(l3), usize::from(l4));
                for i in 0..60 {
                    if !(l3..l3 + 20).contains(&i) && !(l4..l4 + 8).contains(&i) {
                        assert_eq!(b[i], orig[i], "byte {i} with l3 {l3} l4 {l4} v{ip_version}");
                    }
                }
                let mut e: Vec<u8> = vec![];
                mirror::restore(&mut e, &info, &ClassifyConfig::default());
                assert!(e.is_empty());
            }
        }
    }
}
