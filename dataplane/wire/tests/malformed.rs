//! Untrusted input (DESIGN "Quality bar"): every truncation of valid frames of every class,
//! inconsistent length fields, bad versions / ethertypes / mirror metadata, and arbitrary
//! bytes. `classify` must never panic and must name the right `ErrorKind`.

mod common;

use common::*;
use proptest::prelude::*;
use wire::bth::Opcode;
use wire::build::{IpRepr, MacControlFrameRepr, Payload, RoceFrameRepr};
use wire::ethernet::{self, Vlans};
use wire::frame::{classify, peek_mirror, ClassifyConfig, FrameClass, FrameInfo};
use wire::mirror::{self, Event, MirrorMeta, MirrorRepr};
use wire::{
    aeth, atomic_ack_eth, atomic_eth, bth, deth, icrc, ieth, immdt, ipv4, ipv6, pfc, rdeth, reth, roce, udp, Error,
    ErrorKind,
};

fn cfg() -> ClassifyConfig {
    ClassifyConfig::default()
}

/// Valid frames of every class, with and without VLAN tags, IPv4 and IPv6.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for vlans in vlan_variants() {
        let tags = vlans.count();
        for (ipname, ip) in [("v4", IpRepr::V4(ipv4_repr())), ("v6", IpRepr::V6(ipv6_repr()))] {
            for op in [Opcode::RC_SEND_ONLY, Opcode::RC_WRITE_ONLY_IMM, Opcode::RC_ACK, Opcode::RD_CMP_SWAP] {
                let f = roce_frame(op, ip, vlans, 10).to_vec(Payload::Fill(0x11)).unwrap();
                let mut m = f.clone();
                let meta = MirrorMeta { seq: 77, timestamp_ns: 1_000_000, event: Event::Ecn };
                MirrorRepr { meta, mirror_port: 9741, udp_src_port: 555 }.apply(&mut m).unwrap();
                out.push((format!("roce {op:?} {ipname} tags={tags}"), f));
                out.push((format!("mirrored {op:?} {ipname} tags={tags}"), m));
            }
            let cnp = RoceFrameRepr::cnp(eth_repr(vlans), ip, 1, 2).to_vec(Payload::Zeros).unwrap();
            out.push((format!("cnp {ipname} tags={tags}"), cnp));
        }
        let mut eth = eth_repr(vlans);
        eth.dst_addr = pfc::DST_MAC;
        let pfc_frame = MacControlFrameRepr { eth, ctrl: pfc::Repr::Pfc { class_enable: 0x08, quanta: [7; 8] } };
        out.push((format!("pfc tags={tags}"), pfc_frame.to_vec().unwrap()));
        let pause = MacControlFrameRepr { eth, ctrl: pfc::Repr::Pause { quanta: 0xffff } };
        out.push((format!("pause tags={tags}"), pause.to_vec().unwrap()));
        // Other: ARP, TCP over IPv4, UDP to another port, ICMPv6.
        let mut arp = vec![0u8; 60];
        ethernet::Repr { ethertype: ethernet::ethertype::ARP, ..eth_repr(vlans) }
            .emit(&mut ethernet::Frame::new_unchecked(&mut arp[..]));
        out.push((format!("arp tags={tags}"), arp));
        let mut dns = roce_frame(Opcode::UD_SEND_ONLY, IpRepr::V4(ipv4_repr()), vlans, 20);
        dns.udp.dst_port = 53;
        out.push((format!("udp/53 tags={tags}"), dns.to_vec(Payload::Zeros).unwrap()));
        out.push((format!("tcp tags={tags}"), with_ip_protocol(vlans, 6)));
        out.push((format!("icmpv6 tags={tags}"), with_ipv6_next_header(vlans, 58)));
    }
    out
}

fn with_ip_protocol(vlans: Vlans, proto: u8) -> Vec<u8> {
    let eth = ethernet::Repr { ethertype: ethernet::ethertype::IPV4, ..eth_repr(vlans) };
    let ip = ipv4::Repr { protocol: proto, payload_len: 40, ..ipv4_repr() };
    let mut f = vec![0u8; eth.header_len() + 20 + 40];
    eth.emit(&mut ethernet::Frame::new_unchecked(&mut f[..]));
    ip.emit(&mut ipv4::Packet::new_unchecked(&mut f[eth.header_len()..]));
    f
}

fn with_ipv6_next_header(vlans: Vlans, nh: u8) -> Vec<u8> {
    let eth = ethernet::Repr { ethertype: ethernet::ethertype::IPV6, ..eth_repr(vlans) };
    let ip = ipv6::Repr { next_header: nh, payload_len: 24, ..ipv6_repr() };
    let mut f = vec![0u8; eth.header_len() + 40 + 24];
    eth.emit(&mut ethernet::Frame::new_unchecked(&mut f[..]));
    ip.emit(&mut ipv6::Packet::new_unchecked(&mut f[eth.header_len()..]));
    f
}

/// The error a prefix of `k` bytes of the valid frame `full` must give (None = Ok with
/// the same info: only padding was cut).
fn expected_prefix_error(full: &[u8], info: &FrameInfo, k: usize) -> Option<ErrorKind> {
    let l3 = usize::from(info.l3_offset);
    if k < 14 {
        return Some(ErrorKind::Runt);
    }
    if k < l3 {
        return Some(ErrorKind::TruncatedVlan);
    }
    let et = u16::from_be_bytes([full[l3 - 2], full[l3 - 1]]);
    match et {
        ethernet::ethertype::IPV4 => {
            let ihl = usize::from(full[l3] & 0xf) * 4;
            let total = usize::from(u16::from_be_bytes([full[l3 + 2], full[l3 + 3]]));
            if k < l3 + 20 || k < l3 + ihl {
                Some(ErrorKind::TruncatedIpv4)
            } else if k < l3 + total {
                Some(ErrorKind::BadIpv4Length)
            } else {
                None
            }
        }
        ethernet::ethertype::IPV6 => {
            let plen = usize::from(u16::from_be_bytes([full[l3 + 4], full[l3 + 5]]));
            if k < l3 + 40 {
                Some(ErrorKind::TruncatedIpv6)
            } else if k < l3 + 40 + plen {
                Some(ErrorKind::BadIpv6Length)
            } else {
                None
            }
        }
        ethernet::ethertype::MAC_CONTROL => {
            let need = if info.class == FrameClass::Pfc { pfc::PFC_LEN } else { pfc::PAUSE_LEN };
            (k < l3 + need).then_some(ErrorKind::TruncatedMacControl)
        }
        _ => None,
    }
}

#[test]
fn every_prefix_of_every_class() {
    let corpus = corpus();
    let mut classes = std::collections::HashSet::new();
    let mut kinds = std::collections::HashSet::new();
    for (name, full) in &corpus {
        let info = classify(full, &cfg()).unwrap_or_else(|e| panic!("{name}: {e}"));
        classes.insert(info.class);
        for k in 0..full.len() {
            let got = classify(&full[..k], &cfg());
            match expected_prefix_error(full, &info, k) {
                Some(kind) => {
                    assert_eq!(got.map_err(|e| e.kind()), Err(kind), "{name} cut to {k}");
                    kinds.insert(kind);
                }
                None => assert_eq!(got, Ok(info), "{name} cut to {k} (padding only)"),
            }
        }
    }
    assert_eq!(classes.len(), FrameClass::COUNT, "corpus covers every class");
    for k in [
        ErrorKind::Runt,
        ErrorKind::TruncatedVlan,
        ErrorKind::TruncatedIpv4,
        ErrorKind::BadIpv4Length,
        ErrorKind::TruncatedIpv6,
        ErrorKind::BadIpv6Length,
        ErrorKind::TruncatedMacControl,
    ] {
        assert!(kinds.contains(&k), "{k} exercised");
    }
}

/// Shortens the RoCE packet of a valid frame to `udp_payload` bytes and fixes the IP and
/// UDP length fields so that only the RoCE layer is inconsistent.
fn consistently_truncated(full: &[u8], info: &FrameInfo, udp_payload: usize) -> Vec<u8> {
    let (l3, l4) = (usize::from(info.l3_offset), usize::from(info.l4_offset));
    let mut f = full[..l4 + 8 + udp_payload].to_vec();
    let udp_len = (8 + udp_payload) as u16;
    udp::Packet::new_unchecked(&mut f[l4..]).set_len(udp_len);
    if info.ip_version == 4 {
        let mut ip = ipv4::Packet::new_unchecked(&mut f[l3..]);
        ip.set_total_len((l4 - l3) as u16 + udp_len);
        ip.fill_checksum();
    } else {
        ipv6::Packet::new_unchecked(&mut f[l3..]).set_payload_len(udp_len);
    }
    f
}

#[test]
fn every_consistent_truncation_of_the_roce_layer() {
    for (name, full) in corpus() {
        let info = classify(&full, &cfg()).unwrap();
        if !matches!(info.class, FrameClass::Roce | FrameClass::MirroredRoce) {
            continue;
        }
        let bth_at = usize::from(info.bth_offset);
        let op = Opcode(full[bth_at]);
        let hdr = 12 + op.ext_headers().len();
        let pad = usize::from((full[bth_at + 1] >> 4) & 3);
        let wire = usize::from(udp::Packet::new_checked(&full[usize::from(info.l4_offset)..]).unwrap().len()) - 8;
        for n in 0..wire {
            let f = consistently_truncated(&full, &info, n);
            let got = classify(&f, &cfg()).map_err(|e| e.kind());
            let want = if n < 12 {
                Err(ErrorKind::TruncatedBth)
            } else if n < hdr {
                Err(ErrorKind::TruncatedExtHeaders)
            } else if n < hdr + 4 {
                Err(ErrorKind::TruncatedIcrc)
            } else if n - hdr - 4 < pad {
                Err(ErrorKind::BadPadCount)
            } else {
                Ok(info.class)
            };
            assert_eq!(got.map(|i| i.class), want, "{name}: RoCE packet of {n} bytes");
        }
    }
}

fn roce_v4() -> (Vec<u8>, usize) {
    let f =
        roce_frame(Opcode::RC_SEND_ONLY, IpRepr::V4(ipv4_repr()), Vlans::Untagged, 32).to_vec(Payload::Zeros).unwrap();
    (f, 14)
}

#[test]
fn runts() {
    for n in 0..14 {
        assert_eq!(classify(&vec![0xff; n], &cfg()), Err(Error::Runt { len: n }));
    }
}

#[test]
fn bad_versions_and_ethertypes() {
    let (f, l3) = roce_v4();
    // IPv4 ethertype with an IPv6 header, and the reverse.
    let mut m = f.clone();
    m[l3] = 0x65;
    assert_eq!(classify(&m, &cfg()), Err(Error::BadIpv4Version { version: 6 }));
    let v6 =
        roce_frame(Opcode::RC_SEND_ONLY, IpRepr::V6(ipv6_repr()), Vlans::Untagged, 0).to_vec(Payload::Zeros).unwrap();
    let mut m = v6.clone();
    m[12..14].copy_from_slice(&[0x08, 0x00]);
    assert_eq!(classify(&m, &cfg()), Err(Error::BadIpv4Version { version: 6 }));
    let mut m = v6.clone();
    m[14] = 0x45;
    assert_eq!(classify(&m, &cfg()), Err(Error::BadIpv6Version { version: 4 }));
    // Unknown ethertypes are "other", not errors; RoCEv1 too.
    for et in [0x1234u16, 0x8915, 0x88cc, 0x0000, 0xffff] {
        let mut m = f.clone();
        m[12..14].copy_from_slice(&et.to_be_bytes());
        let i = classify(&m, &cfg()).unwrap();
        assert_eq!((i.class, i.l3_offset, i.ip_version), (FrameClass::Other, 14, 0), "{et:#x}");
    }
    // A third stacked VLAN tag is not walked: "other".
    let mut m = vec![0u8; 64];
    for t in 0..3 {
        m[12 + 4 * t..14 + 4 * t].copy_from_slice(&[0x81, 0x00]);
    }
    assert_eq!(classify(&m, &cfg()).unwrap().class, FrameClass::Other);
    // A tag whose TCI is cut.
    assert_eq!(classify(&m[..16], &cfg()), Err(Error::TruncatedVlan));
}

#[test]
fn bad_ipv4_header_fields() {
    let (f, l3) = roce_v4();
    for ihl in 0..5u8 {
        let mut m = f.clone();
        m[l3] = 0x40 | ihl;
        assert_eq!(classify(&m, &cfg()), Err(Error::BadIpv4Ihl { ihl }));
    }
    // IHL 15 (60 bytes) on a frame whose IP part is shorter than that.
    let mut m = f[..l3 + 50].to_vec();
    m[l3] = 0x4f;
    assert_eq!(classify(&m, &cfg()), Err(Error::TruncatedIpv4));
    // Total length below the header, and beyond the frame.
    let mut m = f.clone();
    m[l3 + 2..l3 + 4].copy_from_slice(&19u16.to_be_bytes());
    assert!(matches!(classify(&m, &cfg()), Err(Error::BadIpv4Length { total_len: 19, .. })));
    let mut m = f.clone();
    let too_long = (f.len() - l3 + 1) as u16;
    m[l3 + 2..l3 + 4].copy_from_slice(&too_long.to_be_bytes());
    assert!(matches!(classify(&m, &cfg()), Err(Error::BadIpv4Length { .. })));
    // IHL 6 with a valid total length: the UDP header moves 4 bytes, so it is read at the
    // options' offset; the frame stays well formed at the IP layer.
    let mut m = f.clone();
    m[l3] = 0x46;
    let r = classify(&m, &cfg());
    assert!(!matches!(r, Err(Error::BadIpv4Ihl { .. }) | Err(Error::TruncatedIpv4)), "{r:?}");
}

#[test]
fn fragments_are_other() {
    let (f, l3) = roce_v4();
    let mut m = f.clone();
    m[l3 + 6] = 0x20; // MF set: a first fragment, the UDP length may exceed it
    let i = classify(&m, &cfg()).unwrap();
    assert_eq!((i.class, i.l4_offset), (FrameClass::Other, 34));
    let mut m = f.clone();
    m[l3 + 6..l3 + 8].copy_from_slice(&[0x00, 0x10]); // offset 128 bytes: no UDP header
    let i = classify(&m, &cfg()).unwrap();
    assert_eq!((i.class, i.l4_offset, i.ip_version), (FrameClass::Other, 0, 4));
}

#[test]
fn bad_udp_length() {
    let (f, l3) = roce_v4();
    let l4 = l3 + 20;
    let avail = f.len() - l4;
    for bad in [0u16, 7, (avail + 1) as u16, 0xffff] {
        let mut m = f.clone();
        m[l4 + 4..l4 + 6].copy_from_slice(&bad.to_be_bytes());
        assert_eq!(classify(&m, &cfg()), Err(Error::BadUdpLength { udp_len: bad, available: avail }), "{bad}");
    }
    // UDP header itself cut (IP total length says only 4 bytes of payload).
    let mut m = f[..l4 + 4].to_vec();
    m[l3 + 2..l3 + 4].copy_from_slice(&24u16.to_be_bytes());
    assert_eq!(classify(&m, &cfg()), Err(Error::TruncatedUdp));
}

#[test]
fn bad_mirror_metadata() {
    let (f, _) = roce_v4();
    let meta = MirrorMeta { seq: 5, timestamp_ns: 9, event: Event::None };
    let mut m = f.clone();
    MirrorRepr { meta, mirror_port: 9741, udp_src_port: 1 }.apply(&mut m).unwrap();
    assert_eq!(classify(&m, &cfg()).unwrap().mirror, Some(meta));
    let cases: [(&[u8], usize, Error); 5] = [
        (&[0, 0, 0, 0, 0, 0], 6, Error::BadMirrorSeq { raw: 0 }),
        (&[0, 0, 0x80, 0, 0, 0], 6, Error::BadMirrorSeq { raw: 0x8000_0000 }),
        (&[0, 0, 0xff, 0xff, 0xff, 0xff], 6, Error::BadMirrorSeq { raw: 0xffff_ffff }),
        (&[0, 1, 0, 0, 0, 5], 6, Error::BadMirrorSeq { raw: 0x1_0000_0005 }),
        (&[0x80, 0, 0, 0, 0, 5], 6, Error::BadMirrorSeq { raw: 0x8000_0000_0005 }),
    ];
    for (mac, at, err) in cases {
        let mut b = m.clone();
        b[at..at + 6].copy_from_slice(mac);
        assert_eq!(classify(&b, &cfg()), Err(err));
    }
    for ttl in 4..=255u8 {
        let mut b = m.clone();
        b[14 + 8] = ttl;
        assert_eq!(classify(&b, &cfg()), Err(Error::BadMirrorEvent { value: ttl }));
    }
    // The same frame to 4791 is plain RoCE: MACs and TTL are not metadata there.
    let mut b = f.clone();
    b[6..12].copy_from_slice(&[0xff; 6]);
    b[22] = 200;
    assert_eq!(classify(&b, &cfg()).unwrap().class, FrameClass::Roce);
}

#[test]
fn unknown_mac_control_opcode() {
    for op in [0x0000u16, 0x0002, 0x0003, 0x0100, 0x0102, 0xffff] {
        let mut f = MacControlFrameRepr::new([0; 6], pfc::Repr::Pause { quanta: 1 }).to_vec().unwrap();
        f[14..16].copy_from_slice(&op.to_be_bytes());
        assert_eq!(classify(&f, &cfg()), Err(Error::UnknownMacControlOpcode { opcode: op }));
    }
}

#[test]
fn bad_pad_count() {
    let mut r = roce_frame(Opcode::RC_SEND_ONLY, IpRepr::V4(ipv4_repr()), Vlans::Untagged, 2);
    r.roce.bth.pad_count = 2;
    let mut f = r.to_vec(Payload::Zeros).unwrap();
    assert!(classify(&f, &cfg()).is_ok());
    f[42 + 1] |= 0x30; // PadCnt 3 > 2 payload bytes
    assert_eq!(classify(&f, &cfg()), Err(Error::BadPadCount { pad_count: 3, payload_len: 2 }));
}

/// Reads every accessor of every view that accepts `data`, so that a view which passes
/// `new_checked` and then indexes out of bounds would panic here.
fn touch_all_views(data: &[u8]) -> usize {
    let mut n = 0usize;
    if let Ok(p) = ethernet::Frame::new_checked(data) {
        n += p.dst_addr()[0] as usize + p.ethertype() as usize + p.inner_ethertype() as usize + p.header_len();
        n += p.vlan(0).map_or(0, |t| t.vid as usize) + p.vlan(1).map_or(0, |t| t.vid as usize) + p.payload().len();
        let _ = ethernet::Repr::parse(&p);
    }
    if let Ok(p) = ipv4::Packet::new_checked(data) {
        n += p.header_len() + p.payload().len() + p.ttl() as usize + p.verify_checksum() as usize;
        n += p.ident() as usize + p.frag_offset() as usize + p.src_addr().octets()[0] as usize;
        let _ = ipv4::Repr::parse(&p).unwrap();
    }
    if let Ok(p) = ipv6::Packet::new_checked(data) {
        n += p.payload().len() + p.flow_label() as usize + p.hop_limit() as usize + p.dst_addr().octets()[15] as usize;
        let _ = ipv6::Repr::parse(&p).unwrap();
    }
    if let Ok(p) = udp::Packet::new_checked(data) {
        n += p.payload().len() + p.src_port() as usize + p.checksum() as usize;
        n += p.verify_checksum_ipv4([1, 2, 3, 4].into(), [5, 6, 7, 8].into()) as usize;
        let _ = udp::Repr::parse(&p).unwrap();
    }
    if let Ok(p) = bth::Packet::new_checked(data) {
        n += p.psn() as usize + p.dest_qp() as usize + p.resv6() as usize + p.resv7() as usize;
        let _ = bth::Repr::parse(&p).unwrap();
    }
    if let Ok(p) = roce::Packet::new_checked(data) {
        n += p.payload().len() + p.message_len() + p.icrc().unwrap() as usize;
        n += p.rdeth().map_or(0, |h| h.ee_context() as usize) + p.deth().map_or(0, |h| h.src_qp() as usize);
        n += p.reth().map_or(0, |h| h.dma_len() as usize) + p.aeth().map_or(0, |h| h.msn() as usize);
        n += p.atomic_eth().map_or(0, |h| h.compare() as usize)
            + p.atomic_ack_eth().map_or(0, |h| h.orig_data() as usize);
        n += p.immdt().map_or(0, |h| h.imm_data() as usize) + p.ieth().map_or(0, |h| h.rkey() as usize);
        let r = roce::Repr::parse(&p).unwrap();
        assert_eq!(r.ext_headers(), p.ext_headers());
    }
    for wire_len in [0, data.len() / 2, data.len(), data.len() + 100] {
        if let Ok(p) = roce::Packet::new_trimmed(data, wire_len) {
            n += p.payload().len() + p.icrc().map_or(0, |c| c as usize) + p.captured_len();
            assert!(p.payload().len() <= p.payload_len());
            let _ = roce::Repr::parse(&p).unwrap();
        }
    }
    if let Ok(p) = pfc::Packet::new_checked(data) {
        n += p.opcode() as usize + p.pause_quanta() as usize + (0..9).filter_map(|i| p.pfc_quanta(i)).count();
        let _ = pfc::Repr::parse(&p).unwrap();
    }
    macro_rules! small {
        ($($m:ident),*) => {$(
            if let Ok(p) = $m::Packet::new_checked(data) {
                let _ = $m::Repr::parse(&p).unwrap();
                n += 1;
            }
        )*};
    }
    small!(rdeth, deth, reth, aeth, atomic_eth, atomic_ack_eth, immdt, ieth);
    let _ = icrc::compute(data);
    let _ = icrc::verify(data);
    // Lumina's dumper's form: the peek with the record's timestamp, and its restoration.
    let dumped = wire::mirror::CopyForm::Dumped.classify_config(&cfg());
    for ts in [0, 1, u64::MAX] {
        n += usize::from(wire::frame::peek_dumped(data, ts, 1000, &cfg()).is_some());
    }
    if let Ok(info) = classify(data, &dumped) {
        let mut copy = data.to_vec();
        wire::mirror::restore_form(&mut copy, &info, &cfg(), wire::mirror::CopyForm::Dumped);
    }
    let _ = icrc::compute_roce_v1(data);
    let _ = icrc::verify_frame(data);
    let _ = RoceFrameRepr::parse(data);
    n
}

/// `peek_mirror` of a capture of the first `k` bytes of `frame` against `classify` of that
/// capture padded with zeros to the frame's length (what reconstruction classifies): the
/// peek finds every copy `classify` finds, with the same metadata, and finds metadata only
/// where `classify` finds that copy or a malformed frame.
fn peek_agrees_with_classify(frame: &[u8], k: usize) -> Result<(), TestCaseError> {
    let mut padded = frame[..k].to_vec();
    padded.resize(frame.len(), 0);
    let peeked = peek_mirror(&frame[..k], &cfg());
    match classify(&padded, &cfg()) {
        Ok(info) if info.class == FrameClass::MirroredRoce => prop_assert_eq!(peeked, info.mirror, "k={}", k),
        Ok(info) => prop_assert_eq!(peeked, None, "k={} class {:?}", k, info.class),
        Err(_) => {}
    }
    Ok(())
}

#[test]
fn peek_finds_the_copies_classify_finds_at_every_capture_length() {
    let mut copies = 0;
    for (name, frame) in corpus() {
        for k in 0..=frame.len() {
            peek_agrees_with_classify(&frame, k).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        copies += usize::from(peek_mirror(&frame, &cfg()).is_some());
    }
    assert_eq!(copies, 3 * 2 * 4, "every mirrored frame of the corpus is found whole");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn peek_agrees_with_classify_on_mutated_copies(
        fr in arb_roce_frame(),
        edits in proptest::collection::vec((any::<u16>(), any::<u8>()), 0..4),
        cut in any::<u16>(),
    ) {
        let mut f = fr.to_vec(Payload::Zeros).unwrap();
        let meta = MirrorMeta { seq: 3, timestamp_ns: 4, event: Event::Ecn };
        MirrorRepr { meta, mirror_port: 9741, udp_src_port: 9 }.apply(&mut f).unwrap();
        for (at, v) in edits {
            let i = usize::from(at) % f.len();
            f[i] = v;
        }
        peek_agrees_with_classify(&f, usize::from(cut) % (f.len() + 1))?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        for c in [cfg(), ClassifyConfig { mirror_port: 4791, roce_port: 4791 }] {
            match classify(&data, &c) {
                Ok(info) => {
                    prop_assert!(usize::from(info.l3_offset) <= data.len());
                    prop_assert!(usize::from(info.l4_offset) <= data.len());
                    prop_assert!(usize::from(info.bth_offset) + 12 <= data.len() || info.bth_offset == 0);
                    prop_assert_eq!(info.mirror.is_some(), info.class == FrameClass::MirroredRoce);
                    let mut b = data.clone();
                    mirror::restore(&mut b, &info, &c);
                    prop_assert_eq!(b.len(), data.len());
                }
                Err(e) => prop_assert!(e.kind().index() < ErrorKind::COUNT),
            }
        }
        touch_all_views(&data);
    }

    /// Structured garbage: valid frames with random bytes overwritten, so that the deeper
    /// layers see hostile values too.
    #[test]
    fn mutated_valid_frames_never_panic(
        fr in arb_roce_frame(),
        mirrored in any::<bool>(),
        edits in proptest::collection::vec((any::<u16>(), any::<u8>()), 1..6),
        cut in any::<u16>(),
    ) {
        let mut f = fr.to_vec(Payload::Zeros).unwrap();
        if mirrored {
            let meta = MirrorMeta { seq: 3, timestamp_ns: 4, event: Event::Corrupt };
            MirrorRepr { meta, mirror_port: 9741, udp_src_port: 9 }.apply(&mut f).unwrap();
        }
        for (at, v) in edits {
            let i = usize::from(at) % f.len();
            f[i] = v;
        }
        let f = &f[..usize::from(cut) % (f.len() + 1)];
        if let Ok(info) = classify(f, &cfg()) {
            let mut b = f.to_vec();
            mirror::restore(&mut b, &info, &cfg());
            if let Some(op) = info.opcode {
                prop_assert_eq!(op, f[usize::from(info.bth_offset)]);
            }
        }
        touch_all_views(f);
        let l3 = (usize::from(cut) / 3) % (f.len() + 1);
        touch_all_views(&f[l3..]);
    }
}
