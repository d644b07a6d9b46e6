//! Builder (emit) versus parser round trips on whole frames, with etherparse as an
//! independent reader of the L2–L4 headers the builder writes.

mod common;

use common::*;
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use proptest::prelude::*;
use wire::build::{IpRepr, MacControlFrameRepr, Payload, RoceFrameRepr, MIN_FRAME_LEN};
use wire::ethernet::{self, Vlans};
use wire::frame::{classify, ClassifyConfig, FrameClass};
use wire::{aeth, bth, icrc, ipv4, ipv6, pfc, roce, udp};

/// Cross-checks a built frame against etherparse's reading of it.
fn etherparse_agrees(f: &[u8], r: &RoceFrameRepr) -> Result<(), TestCaseError> {
    let s = SlicedPacket::from_ethernet(f).map_err(|e| TestCaseError::fail(format!("etherparse: {e:?}")))?;
    let want_vids: Vec<u16> = match r.eth.vlans {
        Vlans::Untagged => vec![],
        Vlans::Single(t) => vec![t.vid],
        Vlans::Double { outer, inner } => vec![outer.vid, inner.vid],
    };
    let vids: Vec<u16> = s.vlan_ids().iter().map(|v| v.value()).collect();
    prop_assert_eq!(vids, want_vids);
    match (&s.net, &r.ip) {
        (Some(NetSlice::Ipv4(ip)), IpRepr::V4(want)) => {
            let h = ip.header();
            prop_assert_eq!(h.source_addr(), want.src_addr);
            prop_assert_eq!(h.destination_addr(), want.dst_addr);
            prop_assert_eq!((h.dcp().value(), h.ecn().value()), (want.dscp, want.ecn));
            prop_assert_eq!((h.ttl(), h.identification()), (want.ttl, want.ident));
            prop_assert_eq!(h.header_checksum(), h.to_header().calc_header_checksum());
        }
        (Some(NetSlice::Ipv6(ip)), IpRepr::V6(want)) => {
            let h = ip.header();
            prop_assert_eq!(h.source_addr(), want.src_addr);
            prop_assert_eq!(h.destination_addr(), want.dst_addr);
            prop_assert_eq!(h.traffic_class(), (want.dscp << 2) | want.ecn);
            prop_assert_eq!(h.flow_label().value(), want.flow_label);
            prop_assert_eq!(h.hop_limit(), want.hop_limit);
        }
        (net, _) => return Err(TestCaseError::fail(format!("etherparse saw {net:?}"))),
    }
    match &s.transport {
        Some(TransportSlice::Udp(u)) => {
            prop_assert_eq!((u.source_port(), u.destination_port()), (r.udp.src_port, r.udp.dst_port));
            prop_assert_eq!(usize::from(u.length()), 8 + r.roce.buffer_len());
            prop_assert_eq!(u.payload().len(), r.roce.buffer_len());
        }
        t => return Err(TestCaseError::fail(format!("etherparse saw {t:?}"))),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn built_frames_parse_back(fr in arb_roce_frame(), seed in any::<u8>()) {
        let payload: Vec<u8> = (0..fr.roce.payload_len).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect();
        let f = fr.to_vec(Payload::Bytes(&payload)).unwrap();
        prop_assert_eq!(f.len(), fr.frame_len());
        prop_assert_eq!(f.len(), fr.unpadded_len().max(MIN_FRAME_LEN));

        let (back, range) = RoceFrameRepr::parse(&f).unwrap();
        prop_assert_eq!(back, fr.normalized());
        prop_assert_eq!(&f[range], &payload[..]);

        let info = classify(&f, &ClassifyConfig::default()).unwrap();
        prop_assert_eq!(info.class, FrameClass::Roce);
        prop_assert_eq!(info.opcode, Some(fr.roce.bth.opcode.0));
        prop_assert_eq!((info.dest_qp, info.psn), (fr.roce.bth.dest_qp, fr.roce.bth.psn));
        prop_assert_eq!(usize::from(info.l3_offset), fr.eth.header_len());
        prop_assert_eq!(usize::from(info.bth_offset), usize::from(info.l4_offset) + 8);

        prop_assert!(icrc::verify_frame(&f).unwrap());
        let l4 = usize::from(info.l4_offset);
        prop_assert_eq!(udp::Packet::new_checked(&f[l4..]).unwrap().checksum(), 0);
        if let IpRepr::V4(_) = fr.ip {
            prop_assert!(ipv4::Packet::new_checked(&f[usize::from(info.l3_offset)..]).unwrap().verify_checksum());
        }
        etherparse_agrees(&f, &fr)?;

        // Re-emitting the parsed reprs gives the same bytes.
        let again = back.to_vec(Payload::Bytes(&payload)).unwrap();
        prop_assert_eq!(again, f);
    }

    #[test]
    fn emit_into_reused_buffer_matches_fresh(fr in arb_roce_frame(), junk in any::<u8>()) {
        let fresh = fr.to_vec(Payload::Fill(7)).unwrap();
        let mut buf = vec![junk; fresh.len() + 16];
        let n = fr.emit(Payload::Fill(7), &mut buf).unwrap();
        prop_assert_eq!(&buf[..n], &fresh[..]);
        prop_assert!(buf[n..].iter().all(|&b| b == junk));
    }

    #[test]
    fn ethernet_repr_round_trip(eth in arb_eth(), et in any::<u16>()) {
        let r = ethernet::Repr { ethertype: et, ..eth };
        let mut b = vec![0u8; r.header_len()];
        r.emit(&mut ethernet::Frame::new_unchecked(&mut b[..]));
        if r.is_encodable() {
            prop_assert_eq!(ethernet::Repr::parse(&ethernet::Frame::new_checked(&b[..]).unwrap()).unwrap(), r);
        }
    }

    #[test]
    fn bth_repr_round_trip(bytes in any::<[u8; 12]>()) {
        // Any BTH, reserved bits included, survives parse then emit byte for byte.
        let b = bytes;
        let r = bth::Repr::parse(&bth::Packet::new_checked(&b[..]).unwrap()).unwrap();
        prop_assert!(r.is_encodable());
        let mut out = [0u8; 12];
        r.emit(&mut bth::Packet::new_unchecked(&mut out[..]));
        prop_assert_eq!(out, b);
    }

    #[test]
    fn aeth_repr_round_trip(bytes in any::<[u8; 4]>()) {
        let r = aeth::Repr::parse(&aeth::Packet::new_checked(&bytes[..]).unwrap()).unwrap();
        prop_assert!(r.is_encodable());
        let mut out = [0u8; 4];
        r.emit(&mut aeth::Packet::new_unchecked(&mut out[..]));
        prop_assert_eq!(out, bytes);
    }

    #[test]
    fn ip_reprs_round_trip(ip in arb_ip(), payload_len in 0usize..1500, proto in any::<u8>()) {
        match ip {
            IpRepr::V4(r) => {
                let r = ipv4::Repr { payload_len, protocol: proto, ..r };
                let mut b = vec![0u8; 20 + payload_len];
                r.emit(&mut ipv4::Packet::new_unchecked(&mut b[..]));
                let p = ipv4::Packet::new_checked(&b[..]).unwrap();
                prop_assert!(p.verify_checksum());
                prop_assert_eq!(ipv4::Repr::parse(&p).unwrap(), r);
            }
            IpRepr::V6(r) => {
                let r = ipv6::Repr { payload_len, next_header: proto, ..r };
                let mut b = vec![0u8; 40 + payload_len];
                r.emit(&mut ipv6::Packet::new_unchecked(&mut b[..]));
                prop_assert_eq!(ipv6::Repr::parse(&ipv6::Packet::new_checked(&b[..]).unwrap()).unwrap(), r);
            }
        }
    }

    #[test]
    fn mac_control_round_trip(src in any::<[u8; 6]>(), vlans in arb_vlans(), pfc_frame in any::<bool>(),
                              enable in any::<u16>(), quanta in any::<[u16; 8]>()) {
        let ctrl = if pfc_frame { pfc::Repr::Pfc { class_enable: enable, quanta } } else { pfc::Repr::Pause { quanta: quanta[0] } };
        let mut m = MacControlFrameRepr::new(src, ctrl);
        m.eth.vlans = vlans;
        let f = m.to_vec().unwrap();
        prop_assert!(f.len() >= MIN_FRAME_LEN);
        let info = classify(&f, &ClassifyConfig::default()).unwrap();
        prop_assert_eq!(info.class, if pfc_frame { FrameClass::Pfc } else { FrameClass::Pause });
        prop_assert_eq!(usize::from(info.l3_offset), 14 + 4 * vlans.count());
        prop_assert_eq!(pfc::Repr::parse(&pfc::from_frame(&f).unwrap().unwrap()).unwrap(), ctrl);
    }
}

#[test]
fn every_opcode_with_every_encapsulation() {
    for &op in bth::Opcode::KNOWN {
        for vlans in vlan_variants() {
            for ip in [IpRepr::V4(ipv4_repr()), IpRepr::V6(ipv6_repr())] {
                let fr = roce_frame(op, ip, vlans, 3);
                let f = fr.to_vec(Payload::Fill(0xa5)).unwrap();
                let (back, _) = RoceFrameRepr::parse(&f).unwrap();
                assert_eq!(back, fr.normalized(), "{op:?}");
                assert!(icrc::verify_frame(&f).unwrap(), "{op:?}");
                let info = classify(&f, &ClassifyConfig::default()).unwrap();
                let at = usize::from(info.bth_offset);
                let end = usize::from(info.l4_offset) + 8 + fr.roce.buffer_len();
                let p = roce::Packet::new_checked(&f[at..end]).unwrap();
                assert_eq!(p.header_len(), 12 + op.ext_headers().len());
                assert_eq!(p.payload(), &[0xa5; 3]);
            }
        }
    }
}
