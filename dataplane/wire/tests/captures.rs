//! Decoding third-party captures (`../shared/data/captures`, see its README.md) and
//! checking every field against the provenance notes and the tshark oracle CSV.

mod common;

use common::{captures_dir, read_pcap};
use wire::aeth::Syndrome;
use wire::bth::Opcode;
use wire::frame::{classify, ClassifyConfig, FrameClass};
use wire::{ethernet, icrc, ipv4, ipv6, pfc, roce, udp};

fn cfg() -> ClassifyConfig {
    ClassifyConfig::default()
}

/// The RoCE view of a classified RoCEv2 frame.
fn roce_view(frame: &[u8], bth_offset: u16) -> roce::Packet<&[u8]> {
    let at = usize::from(bth_offset);
    let u = udp::Packet::new_checked(&frame[at - 8..]).unwrap();
    roce::Packet::new_checked(&frame[at..at - 8 + usize::from(u.len())]).unwrap()
}

#[test]
fn icrc_vectors_3rdparty() {
    let Some(dir) = captures_dir() else { return };
    let pkts = read_pcap(&dir.join("roce_icrc_vectors_3rdparty.pcap"));
    assert_eq!(pkts.len(), 4);

    // 1: ConnectX-4 Lx CNP, IPv4, BECN=1, DQP 0x118, ICRC on the wire 82fd002a.
    let f = &pkts[0].2;
    let info = classify(f, &cfg()).unwrap();
    assert_eq!(info.class, FrameClass::Roce);
    assert_eq!((info.opcode, info.dest_qp, info.psn), (Some(0x81), 0x118, 0));
    let r = roce_view(f, info.bth_offset);
    assert!(r.opcode().is_cnp());
    assert!(r.bth().becn() && !r.bth().fecn());
    assert_eq!(r.payload_len(), 16, "CNP carries 16 reserved bytes");
    assert_eq!(r.icrc(), Some(0x82fd_002a));
    assert_eq!(icrc::compute(&f[usize::from(info.l3_offset)..]).unwrap(), 0x82fd_002a);
    assert!(icrc::verify_frame(f).unwrap());

    // 2: RoCEv1 RC RDMA WRITE Only, ICRC e3d856bb; 3: RoCEv1 RC ACK, MSN 5, ICRC 25f0c038.
    for (i, want) in [(1usize, 0xe3d8_56bbu32), (2, 0x25f0_c038)] {
        let f = &pkts[i].2;
        let eth = ethernet::Frame::new_checked(&f[..]).unwrap();
        assert_eq!(eth.inner_ethertype(), ethernet::ethertype::ROCE_V1);
        let grh = &f[eth.header_len()..];
        assert_eq!(icrc::compute_roce_v1(grh).unwrap(), want, "frame {}", i + 1);
        assert_eq!(icrc::read_roce_v1(grh).unwrap(), want);
        assert!(icrc::verify_frame(f).unwrap());
        // Lumina mirrors RoCEv2 only: RoCEv1 is recorded as "other", not an error.
        assert_eq!(classify(f, &cfg()).unwrap().class, FrameClass::Other);
    }
    let grh = &pkts[1].2[14..];
    let g = ipv6::Packet::new_checked(grh).unwrap();
    let r = roce::Packet::new_checked(&grh[40..40 + usize::from(g.payload_len())]).unwrap();
    assert_eq!(r.opcode(), Opcode::RC_WRITE_ONLY);
    let grh = &pkts[2].2[14..];
    let g = ipv6::Packet::new_checked(grh).unwrap();
    assert_eq!(g.next_header(), 0x1b, "GRH next header = IBA transport");
    let r = roce::Packet::new_checked(&grh[40..40 + usize::from(g.payload_len())]).unwrap();
    assert_eq!(r.opcode(), Opcode::RC_ACK);
    assert_eq!(r.aeth().unwrap().msn(), 5);

    // 4: Soft-RoCE READ Request with RETH VA 0x7fee260fb000, rkey 0x2b8, len 65536.
    let f = &pkts[3].2;
    let info = classify(f, &cfg()).unwrap();
    assert_eq!(info.class, FrameClass::Roce);
    assert_eq!(info.opcode, Some(Opcode::RC_READ_REQUEST.0));
    let r = roce_view(f, info.bth_offset);
    let reth = r.reth().unwrap();
    assert_eq!((reth.va(), reth.rkey(), reth.dma_len()), (0x7fee_260f_b000, 0x2b8, 65536));
    assert_eq!(r.icrc(), Some(0x08c6_154a));
    assert!(icrc::verify_frame(f).unwrap());
}

#[test]
fn scapy_crafted_uc_send_only_v4_v6() {
    let Some(dir) = captures_dir() else { return };
    let pkts = read_pcap(&dir.join("scapy_uts_crafted_uc_send_only_v4_v6.pcap"));
    assert_eq!(pkts.len(), 2);
    // (frame, ip version, ICRC, UDP checksum) from the README.
    for (f, ver, want_icrc, want_udp) in
        [(&pkts[0].2, 4u8, 0x78f3_53f3u32, 0xaca2u16), (&pkts[1].2, 6, 0x3e5b_743b, 0xe7c5)]
    {
        let info = classify(f, &cfg()).unwrap();
        assert_eq!(info.class, FrameClass::Roce);
        assert_eq!(info.ip_version, ver);
        assert_eq!((info.opcode, info.dest_qp, info.psn), (Some(Opcode::UC_SEND_ONLY.0), 211, 13_571_856));
        let r = roce_view(f, info.bth_offset);
        assert_eq!(r.bth().pad_count(), 2);
        let l3 = usize::from(info.l3_offset);
        let l4 = usize::from(info.l4_offset);
        assert_eq!(icrc::compute(&f[l3..]).unwrap(), want_icrc);
        assert_eq!(r.icrc(), Some(want_icrc));

        // Recompute the UDP (and IPv4 header) checksums from scratch.
        let mut m = f.clone();
        let ulen = usize::from(udp::Packet::new_checked(&m[l4..]).unwrap().len());
        let udp_csum = if ver == 4 {
            let ip = ipv4::Packet::new_checked(&f[l3..]).unwrap();
            let mut u = udp::Packet::new_checked(&mut m[l4..l4 + ulen]).unwrap();
            assert!(u.verify_checksum_ipv4(ip.src_addr(), ip.dst_addr()));
            u.fill_checksum_ipv4(ip.src_addr(), ip.dst_addr());
            let csum = u.checksum();
            let mut ipm = ipv4::Packet::new_checked(&mut m[l3..]).unwrap();
            ipm.set_checksum(0);
            ipm.fill_checksum();
            assert_eq!(ipm.checksum(), 0xb4d5);
            csum
        } else {
            let ip = ipv6::Packet::new_checked(&f[l3..]).unwrap();
            let mut u = udp::Packet::new_checked(&mut m[l4..l4 + ulen]).unwrap();
            assert!(u.verify_checksum_ipv6(ip.src_addr(), ip.dst_addr()));
            u.fill_checksum_ipv6(ip.src_addr(), ip.dst_addr());
            u.checksum()
        };
        assert_eq!(udp_csum, want_udp);
        assert_eq!(m, *f);
    }
}

/// One row of `oferby_proxy_roce.tshark4.0.17.csv`, columns as its header names them.
struct Row<'a>(Vec<&'a str>);

impl<'a> Row<'a> {
    fn col(&self, header: &[&str], name: &str) -> &'a str {
        let i = header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"));
        self.0[i]
    }
}

fn parse_num(s: &str) -> u64 {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap(),
        None => s.parse().unwrap(),
    }
}

#[test]
fn oferby_proxy_matches_tshark_csv() {
    let Some(dir) = captures_dir() else { return };
    let pkts = read_pcap(&dir.join("oferby_proxy_roce.pcap"));
    assert_eq!(pkts.len(), 123);
    let csv = std::fs::read_to_string(dir.join("oferby_proxy_roce.tshark4.0.17.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let expected_header = [
        "frame.number",
        "frame.time_epoch",
        "ip.src",
        "ip.dst",
        "ip.dsfield.dscp",
        "ip.dsfield.ecn",
        "udp.srcport",
        "infiniband.bth.opcode",
        "infiniband.bth.se",
        "infiniband.bth.m",
        "infiniband.bth.padcnt",
        "infiniband.bth.p_key",
        "infiniband.bth.destqp",
        "infiniband.bth.a",
        "infiniband.bth.psn",
        "infiniband.aeth.syndrome",
        "infiniband.aeth.msn",
        "infiniband.invariant.crc",
    ];
    assert_eq!(header, expected_header, "every CSV column is checked below");
    let rows: Vec<Row<'_>> = lines.map(|l| Row(l.split(',').collect())).collect();
    assert_eq!(rows.len(), 105);
    let mut roce_frames = std::collections::BTreeSet::new();
    let mut verified = 0;
    for row in &rows {
        assert_eq!(row.0.len(), header.len());
        let c = |name| row.col(&header, name);
        let n: usize = c("frame.number").parse().unwrap();
        roce_frames.insert(n);
        let (ts, _, f) = &pkts[n - 1];
        assert_eq!(c("frame.time_epoch"), format!("{}.{:09}", ts.as_secs(), ts.subsec_nanos()), "frame {n}");

        let info = classify(f, &cfg()).unwrap();
        assert_eq!(info.class, FrameClass::Roce, "frame {n}");
        assert_eq!(info.ip_version, 4);
        let ip = ipv4::Packet::new_checked(&f[usize::from(info.l3_offset)..]).unwrap();
        assert_eq!(ip.src_addr().to_string(), c("ip.src"), "frame {n}");
        assert_eq!(ip.dst_addr().to_string(), c("ip.dst"));
        assert_eq!(u64::from(ip.dscp()), parse_num(c("ip.dsfield.dscp")));
        assert_eq!(u64::from(ip.ecn()), parse_num(c("ip.dsfield.ecn")));
        let u = udp::Packet::new_checked(ip.payload()).unwrap();
        assert_eq!(u64::from(u.src_port()), parse_num(c("udp.srcport")));

        let r = roce_view(f, info.bth_offset);
        let b = r.bth();
        assert_eq!(u64::from(b.opcode().0), parse_num(c("infiniband.bth.opcode")), "frame {n}");
        assert_eq!(info.opcode, Some(b.opcode().0));
        assert_eq!(u64::from(b.solicited()), parse_num(c("infiniband.bth.se")));
        assert_eq!(u64::from(b.mig_req()), parse_num(c("infiniband.bth.m")));
        assert_eq!(u64::from(b.pad_count()), parse_num(c("infiniband.bth.padcnt")));
        assert_eq!(u64::from(b.pkey()), parse_num(c("infiniband.bth.p_key")));
        assert_eq!(u64::from(b.dest_qp()), parse_num(c("infiniband.bth.destqp")));
        assert_eq!(info.dest_qp, b.dest_qp());
        assert_eq!(u64::from(b.ack_req()), parse_num(c("infiniband.bth.a")));
        assert_eq!(u64::from(b.psn()), parse_num(c("infiniband.bth.psn")));
        assert_eq!(info.psn, b.psn());
        match r.aeth() {
            Some(a) => {
                assert_eq!(u64::from(a.syndrome_raw()), parse_num(c("infiniband.aeth.syndrome")), "frame {n}");
                assert_eq!(u64::from(a.msn()), parse_num(c("infiniband.aeth.msn")));
                // README: coalesced ACKs with syndrome 5/6 = ACK with credit count.
                assert!(matches!(a.syndrome(), Syndrome::Ack { credit: 5 | 6 }));
            }
            None => {
                assert_eq!(c("infiniband.aeth.syndrome"), "", "frame {n}");
                assert_eq!(c("infiniband.aeth.msn"), "");
            }
        }
        let want = parse_num(c("infiniband.invariant.crc")) as u32;
        assert_eq!(r.icrc(), Some(want), "frame {n}");
        let computed = icrc::compute(&f[usize::from(info.l3_offset)..]).unwrap();
        assert_eq!(computed, want, "frame {n}: ICRC must verify");
        verified += 1;
    }
    assert_eq!(verified, 105, "all 105 ICRCs verify");
    // The other 18 frames (ICMPv6, TCP, ARP) are well formed and not RoCE.
    for (i, (_, _, f)) in pkts.iter().enumerate() {
        if !roce_frames.contains(&(i + 1)) {
            let info = classify(f, &cfg()).unwrap();
            assert_eq!(info.class, FrameClass::Other, "frame {}", i + 1);
            assert_eq!(info.opcode, None);
        }
    }
}

#[test]
fn pypacker_pfc() {
    let Some(dir) = captures_dir() else { return };
    let pkts = read_pcap(&dir.join("pypacker_pfc_payload_in_eth.pcap"));
    assert_eq!(pkts.len(), 1);
    let f = &pkts[0].2;
    let info = classify(f, &cfg()).unwrap();
    assert_eq!(info.class, FrameClass::Pfc);
    assert_eq!(info.l3_offset, 14);
    let p = pfc::from_frame(f).unwrap().unwrap();
    assert_eq!(p.class_enable(), 0x00dd);
    let r = pfc::Repr::parse(&p).unwrap();
    assert_eq!(r, pfc::Repr::Pfc { class_enable: 0x00dd, quanta: [0, 1, 0, 20, 3, 40, 3, 500] });
}

#[test]
fn ethernet_pause_is_not_pfc() {
    let Some(dir) = captures_dir() else { return };
    let pkts = read_pcap(&dir.join("Ethernet_Pause_Frame_converted.pcap"));
    assert_eq!(pkts.len(), 2);
    for ((_, _, f), want) in pkts.iter().zip([0u16, 65535]) {
        let info = classify(f, &cfg()).unwrap();
        assert_eq!(info.class, FrameClass::Pause);
        assert_ne!(info.class, FrameClass::Pfc);
        let p = pfc::from_frame(f).unwrap().unwrap();
        assert!(!p.is_pfc());
        assert_eq!(pfc::Repr::parse(&p).unwrap(), pfc::Repr::Pause { quanta: want });
        let eth = ethernet::Frame::new_checked(&f[..]).unwrap();
        assert_eq!(eth.dst_addr(), pfc::DST_MAC);
    }
}

#[test]
fn captures_have_no_malformed_frames() {
    let Some(dir) = captures_dir() else { return };
    for name in [
        "roce_icrc_vectors_3rdparty.pcap",
        "scapy_uts_crafted_uc_send_only_v4_v6.pcap",
        "oferby_proxy_roce.pcap",
        "pypacker_pfc_payload_in_eth.pcap",
        "Ethernet_Pause_Frame_converted.pcap",
    ] {
        for (i, (_, _, f)) in read_pcap(&dir.join(name)).iter().enumerate() {
            let r = classify(f, &cfg());
            assert!(r.is_ok(), "{name} frame {}: {:?}", i + 1, r.map_err(|e| e.kind()));
        }
    }
}

#[test]
fn builder_reproduces_real_nic_frames_byte_for_byte() {
    // Parsing each real RoCE frame into reprs and emitting them again (with the captured
    // payload) must give the NIC's bytes back: lengths, IPv4 checksum and ICRC included.
    use wire::build::{Payload, RoceFrameRepr};
    let Some(dir) = captures_dir() else { return };
    let mut n = 0;
    for name in ["oferby_proxy_roce.pcap", "roce_icrc_vectors_3rdparty.pcap"] {
        for (i, (_, _, f)) in read_pcap(&dir.join(name)).iter().enumerate() {
            let Ok((repr, range)) = RoceFrameRepr::parse(f) else { continue };
            let payload = &f[range];
            let out = repr.to_vec(Payload::Bytes(payload)).unwrap();
            assert_eq!(&out[..], &f[..], "{name} frame {}", i + 1);
            n += 1;
        }
    }
    assert_eq!(n, 105 + 2, "every RoCEv2 frame was rebuilt");
}
