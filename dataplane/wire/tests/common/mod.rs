//! Shared helpers for the integration tests: locating the third-party captures, pcap I/O,
//! and proptest strategies for whole frames.
#![allow(dead_code)]

use std::fs::File;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use proptest::prelude::*;
use wire::bth::{self, ExtHeaders, Opcode};
use wire::build::{IpRepr, RoceFrameRepr};
use wire::ethernet::{self, VlanTag, Vlans};
use wire::{aeth, atomic_ack_eth, atomic_eth, deth, ieth, immdt, ipv4, ipv6, rdeth, reth, roce, udp};

/// `../shared/data/captures` (DESIGN "Test data and oracles"), or `None` with a note when a
/// plain clone of the project runs without it.
pub fn captures_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/captures");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("NOTE: {} is absent; skipping the third-party capture test", dir.display());
        None
    }
}

/// Every packet of a pcap: (timestamp, orig_len, bytes).
pub fn read_pcap(path: &Path) -> Vec<(Duration, u32, Vec<u8>)> {
    let f = File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let mut r = PcapReader::new(f).expect("pcap header");
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.expect("pcap packet");
        out.push((p.timestamp, p.orig_len, p.data.into_owned()));
    }
    out
}

/// Writes frames to an Ethernet pcap, one per millisecond.
pub fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let f = File::create(path).unwrap();
    let mut w = PcapWriter::new(f).unwrap();
    for (i, fr) in frames.iter().enumerate() {
        let ts = Duration::from_millis(i as u64);
        w.write_packet(&PcapPacket::new(ts, fr.len() as u32, fr)).unwrap();
    }
}

pub fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

// ---- fixed reprs -------------------------------------------------------------------

pub fn eth_repr(vlans: Vlans) -> ethernet::Repr {
    ethernet::Repr { dst_addr: [0x02, 0, 0, 0, 0, 0x0b], src_addr: [0x02, 0, 0, 0, 0, 0x0a], vlans, ethertype: 0 }
}

pub fn ipv4_repr() -> ipv4::Repr {
    ipv4::Repr {
        src_addr: Ipv4Addr::new(192, 168, 70, 6),
        dst_addr: Ipv4Addr::new(192, 168, 70, 4),
        protocol: 0,
        payload_len: 0,
        dscp: 26,
        ecn: ipv4::ecn::ECT0,
        ident: 0xbeef,
        dont_frag: true,
        more_frags: false,
        frag_offset: 0,
        ttl: 64,
    }
}

pub fn ipv6_repr() -> ipv6::Repr {
    ipv6::Repr {
        src_addr: "fd00::6".parse().unwrap(),
        dst_addr: "fd00::4".parse().unwrap(),
        next_header: 0,
        payload_len: 0,
        dscp: 26,
        ecn: ipv4::ecn::ECT0,
        flow_label: 0x1_2345,
        hop_limit: 64,
    }
}

/// Sets sample extension headers for every header the opcode carries.
pub fn with_sample_headers(mut r: roce::Repr) -> roce::Repr {
    let h = r.bth.opcode.ext_headers();
    let pick = |one: ExtHeaders| h.contains(one);
    r.rdeth = pick(ExtHeaders::RDETH).then_some(rdeth::Repr { ee_context: 0x00ab_cdef });
    r.deth = pick(ExtHeaders::DETH).then_some(deth::Repr { qkey: 0x8001_0000, src_qp: 0x12 });
    r.reth = pick(ExtHeaders::RETH).then_some(reth::Repr { va: 0x7fee_260f_b000, rkey: 0x2b8, dma_len: 65536 });
    r.atomic_eth =
        pick(ExtHeaders::ATOMIC_ETH).then_some(atomic_eth::Repr { va: 0x1000, rkey: 7, swap_add: 1, compare: 2 });
    r.aeth = pick(ExtHeaders::AETH).then_some(aeth::Repr { syndrome: aeth::Syndrome::Ack { credit: 5 }, msn: 33 });
    r.atomic_ack_eth = pick(ExtHeaders::ATOMIC_ACK_ETH).then_some(atomic_ack_eth::Repr { orig_data: 99 });
    r.immdt = pick(ExtHeaders::IMM_DT).then_some(immdt::Repr { imm_data: 0xcafe_f00d });
    r.ieth = pick(ExtHeaders::IETH).then_some(ieth::Repr { rkey: 0x4242 });
    r
}

/// A RoCEv2 frame with sample headers for `opcode`.
pub fn roce_frame(opcode: Opcode, ip: IpRepr, vlans: Vlans, payload_len: usize) -> RoceFrameRepr {
    RoceFrameRepr {
        eth: eth_repr(vlans),
        ip,
        udp: udp::Repr { src_port: 0xc123, dst_port: udp::ROCE_PORT, payload_len: 0 },
        roce: with_sample_headers(roce::Repr::new(bth::Repr::new(opcode, 0x48, 0x00ff_fffe), payload_len)),
    }
}

pub fn vlan_variants() -> [Vlans; 3] {
    [
        Vlans::Untagged,
        Vlans::Single(VlanTag::dot1q(100, 3)),
        Vlans::Double {
            outer: VlanTag { tpid: ethernet::ethertype::QINQ, pcp: 5, dei: false, vid: 7 },
            inner: VlanTag::dot1q(100, 3),
        },
    ]
}

// ---- strategies ----------------------------------------------------------------------

pub fn arb_vlan_tag(tpid: u16) -> impl Strategy<Value = VlanTag> {
    (0u8..8, any::<bool>(), 0u16..4096).prop_map(move |(pcp, dei, vid)| VlanTag { tpid, pcp, dei, vid })
}

pub fn arb_vlans() -> impl Strategy<Value = Vlans> {
    prop_oneof![
        Just(Vlans::Untagged),
        arb_vlan_tag(0x8100).prop_map(Vlans::Single),
        (prop_oneof![Just(0x88a8u16), Just(0x9100)].prop_flat_map(arb_vlan_tag), arb_vlan_tag(0x8100))
            .prop_map(|(outer, inner)| Vlans::Double { outer, inner }),
    ]
}

pub fn arb_eth() -> impl Strategy<Value = ethernet::Repr> {
    (any::<[u8; 6]>(), any::<[u8; 6]>(), arb_vlans()).prop_map(|(dst_addr, src_addr, vlans)| ethernet::Repr {
        dst_addr,
        src_addr,
        vlans,
        ethertype: 0,
    })
}

pub fn arb_ip() -> impl Strategy<Value = IpRepr> {
    let v4 = (any::<u32>(), any::<u32>(), 0u8..64, 0u8..4, any::<u16>(), any::<bool>(), any::<u8>()).prop_map(
        |(s, d, dscp, ecn, ident, dont_frag, ttl)| {
            IpRepr::V4(ipv4::Repr {
                src_addr: Ipv4Addr::from(s),
                dst_addr: Ipv4Addr::from(d),
                protocol: 0,
                payload_len: 0,
                dscp,
                ecn,
                ident,
                dont_frag,
                more_frags: false,
                frag_offset: 0,
                ttl,
            })
        },
    );
    let v6 = (any::<u128>(), any::<u128>(), 0u8..64, 0u8..4, 0u32..(1 << 20), any::<u8>()).prop_map(
        |(s, d, dscp, ecn, flow_label, hop_limit)| {
            IpRepr::V6(ipv6::Repr {
                src_addr: Ipv6Addr::from(s),
                dst_addr: Ipv6Addr::from(d),
                next_header: 0,
                payload_len: 0,
                dscp,
                ecn,
                flow_label,
                hop_limit,
            })
        },
    );
    prop_oneof![v4, v6]
}

pub fn arb_opcode() -> impl Strategy<Value = Opcode> {
    prop_oneof![
        8 => proptest::sample::select(Opcode::KNOWN),
        1 => any::<u8>().prop_map(Opcode),
    ]
}

pub fn arb_syndrome() -> impl Strategy<Value = aeth::Syndrome> {
    any::<u8>().prop_map(aeth::Syndrome::from_raw)
}

/// Arbitrary RoCE headers and payload length, consistent with the opcode.
pub fn arb_roce() -> impl Strategy<Value = roce::Repr> {
    let bth = (
        arb_opcode(),
        any::<bool>(),
        any::<bool>(),
        0u8..4,
        any::<u16>(),
        any::<bool>(),
        any::<bool>(),
        0u32..(1 << 24),
        any::<bool>(),
        0u32..(1 << 24),
        prop_oneof![3 => Just((0u8, 0u8)), 1 => (0u8..64, 0u8..128)],
    )
        .prop_map(
            |(opcode, solicited, mig_req, pad_count, pkey, fecn, becn, dest_qp, ack_req, psn, (resv6, resv7))| {
                bth::Repr {
                    opcode,
                    solicited,
                    mig_req,
                    pad_count,
                    tver: 0,
                    pkey,
                    fecn,
                    becn,
                    resv6,
                    dest_qp,
                    ack_req,
                    resv7,
                    psn,
                }
            },
        );
    let ext = (
        0u32..(1 << 24),
        any::<u32>(),
        0u32..(1 << 24),
        any::<(u64, u32, u32)>(),
        any::<(u64, u32, u64, u64)>(),
        (arb_syndrome(), 0u32..(1 << 24)),
        any::<(u64, u32, u32)>(),
    );
    (bth, ext, 0usize..600).prop_map(|(mut bth, ext, payload_len)| {
        let (ee, qkey, src_qp, (va, rkey, dma_len), (ava, arkey, swap_add, compare), (syndrome, msn), (orig, imm, ie)) =
            ext;
        bth.pad_count = bth.pad_count.min(payload_len.min(3) as u8);
        let h = bth.opcode.ext_headers();
        let pick = |one: ExtHeaders| h.contains(one);
        let mut r = roce::Repr::new(bth, payload_len);
        r.rdeth = pick(ExtHeaders::RDETH).then_some(rdeth::Repr { ee_context: ee });
        r.deth = pick(ExtHeaders::DETH).then_some(deth::Repr { qkey, src_qp });
        r.reth = pick(ExtHeaders::RETH).then_some(reth::Repr { va, rkey, dma_len });
        r.atomic_eth =
            pick(ExtHeaders::ATOMIC_ETH).then_some(atomic_eth::Repr { va: ava, rkey: arkey, swap_add, compare });
        r.aeth = pick(ExtHeaders::AETH).then_some(aeth::Repr { syndrome, msn });
        r.atomic_ack_eth = pick(ExtHeaders::ATOMIC_ACK_ETH).then_some(atomic_ack_eth::Repr { orig_data: orig });
        r.immdt = pick(ExtHeaders::IMM_DT).then_some(immdt::Repr { imm_data: imm });
        r.ieth = pick(ExtHeaders::IETH).then_some(ieth::Repr { rkey: ie });
        r
    })
}

/// Arbitrary whole RoCEv2 frames to port 4791.
pub fn arb_roce_frame() -> impl Strategy<Value = RoceFrameRepr> {
    (arb_eth(), arb_ip(), any::<u16>(), arb_roce()).prop_map(|(eth, ip, src_port, roce)| RoceFrameRepr {
        eth,
        ip,
        udp: udp::Repr { src_port, dst_port: udp::ROCE_PORT, payload_len: 0 },
        roce,
    })
}
