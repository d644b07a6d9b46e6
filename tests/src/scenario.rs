//! A small Lumina test run as the mirror port sees it, with every answer known in advance.
//!
//! Two hosts run RC traffic through a Lumina switch that injects one drop, one ECN mark
//! and one bit error (Lumina §3.3) and mirrors every RoCE packet (§3.4); the mirror link
//! also carries frames that are not mirrored copies. For each frame, [`Expected`] says what
//! a capture host must record. The expected bytes are built from the original packet's
//! reprs with the documented restoration applied *to the reprs* (docs/formats.md §1), not
//! by calling `wire::mirror::restore`, so tests comparing against them check restoration
//! rather than repeat it.

use std::net::{Ipv4Addr, Ipv6Addr};
use trace::annotation::Annotation;
use wire::bth::{self, Opcode};
use wire::build::{IpRepr, MacControlFrameRepr, Payload, RoceFrameRepr};
use wire::ethernet::{self, VlanTag, Vlans};
use wire::frame::FrameClass;
use wire::mirror::{Event, MirrorMeta, MirrorRepr};
use wire::{aeth, immdt, ipv4, ipv6, pfc, reth, roce, udp, ErrorKind};

pub const MIRROR_PORT: u16 = udp::LUMINA_MIRROR_PORT;

/// What a capture host must record for one input frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    /// The frame as it must be on disk, whole (the capture trims it to its snap length).
    pub recorded: Vec<u8>,
    pub annotation: Annotation,
    /// The switch timestamp of a mirrored copy; other frames get host time.
    pub switch_ts_ns: Option<u64>,
    /// Header fields of a mirrored copy after restoration, as tshark must show them.
    pub roce: Option<RoceFields>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceFields {
    pub udp_src_port: u16,
    pub ttl: u8,
    pub ecn: u8,
    pub opcode: u8,
    pub dest_qp: u32,
    pub psn: u32,
    pub mig_req: bool,
    /// (syndrome byte, MSN)
    pub aeth: Option<(u8, u32)>,
    /// (VA, R_Key, DMA length)
    pub reth: Option<(u64, u32, u32)>,
}

#[derive(Debug, Clone, Default)]
pub struct Scenario {
    /// The frames as they arrive on the capture host's port, in order.
    pub frames: Vec<Vec<u8>>,
    pub expected: Vec<Expected>,
}

impl Scenario {
    /// Mirror sequence numbers in arrival order.
    pub fn seqs(&self) -> Vec<u32> {
        self.expected
            .iter()
            .filter_map(|e| match e.annotation {
                Annotation::Mirrored { seq, .. } => Some(seq),
                _ => None,
            })
            .collect()
    }

    /// The Lumina scenario (see the module doc). Mirror seqs start just below the 31-bit
    /// wrap so the run crosses it; PSNs of one QP cross the 24-bit wrap. This is the
    /// bundled sample `tests/data/lumina-mirrored.pcap`.
    pub fn lumina() -> Scenario {
        Self::rig().scenario
    }

    /// [`Scenario::lumina`] followed by every prefix truncation of a mirrored copy, to
    /// exercise malformed-input handling.
    pub fn lumina_with_truncations() -> Scenario {
        let mut rig = Self::rig();
        rig.truncations();
        rig.scenario
    }

    fn rig() -> Rig {
        let mut rig = Rig::new(0x5eed_1234_abcd_0001, wire::mirror::SEQ_MAX - 4);
        rig.write_with_drop();
        rig.send_with_ecn();
        rig.read_with_corruption();
        rig.ipv6_and_vlan();
        rig.not_mirrored();
        rig
    }
}

/// Frame factory with the switch's state: mirror seq, clock, and a deterministic RNG for
/// the random UDP source ports.
struct Rig {
    rng: u64,
    seq: u32,
    ts_ns: u64,
    scenario: Scenario,
}

const MAC_A: ethernet::Address = [0x02, 0, 0, 0, 0, 0x0a];
const MAC_B: ethernet::Address = [0x02, 0, 0, 0, 0, 0x0b];
// Documentation prefixes (RFC 5737, RFC 3849): these frames only ever live in files.
const IP_A: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 10);
const IP_B: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 11);
const IP6_A: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0xa);
const IP6_B: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0xb);
const QP_A: u32 = 0x00_11a1;
const QP_B: u32 = 0x00_22b2;

/// One direction of an RC connection.
#[derive(Clone, Copy)]
struct Dir {
    src_mac: ethernet::Address,
    dst_mac: ethernet::Address,
    ip: IpRepr,
    udp_src_port: u16,
    dest_qp: u32,
    vlans: Vlans,
}

fn v4(src: Ipv4Addr, dst: Ipv4Addr) -> IpRepr {
    IpRepr::V4(ipv4::Repr {
        src_addr: src,
        dst_addr: dst,
        protocol: 17,
        payload_len: 0,
        dscp: 26,
        ecn: ipv4::ecn::ECT0,
        ident: 0x1234,
        dont_frag: true,
        more_frags: false,
        frag_offset: 0,
        ttl: 64,
    })
}

fn v6(src: Ipv6Addr, dst: Ipv6Addr) -> IpRepr {
    IpRepr::V6(ipv6::Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: 17,
        payload_len: 0,
        dscp: 26,
        ecn: ipv4::ecn::ECT0,
        flow_label: 0x12345,
        hop_limit: 64,
    })
}

impl Dir {
    fn a_to_b(qp: u32) -> Dir {
        Dir {
            src_mac: MAC_A,
            dst_mac: MAC_B,
            ip: v4(IP_A, IP_B),
            udp_src_port: 50_001,
            dest_qp: qp,
            vlans: Vlans::Untagged,
        }
    }
    fn b_to_a(qp: u32) -> Dir {
        Dir {
            src_mac: MAC_B,
            dst_mac: MAC_A,
            ip: v4(IP_B, IP_A),
            udp_src_port: 50_002,
            dest_qp: qp,
            vlans: Vlans::Untagged,
        }
    }

    /// A packet of this direction with the extension headers its opcode needs.
    fn packet(&self, opcode: Opcode, psn: u32, payload_len: usize) -> RoceFrameRepr {
        let bth = bth::Repr::new(opcode, self.dest_qp, psn & 0xff_ffff);
        let mut r = roce::Repr::new(bth, payload_len);
        let headers = opcode.ext_headers();
        if headers.contains(bth::ExtHeaders::RETH) {
            r.reth = Some(reth::Repr { va: 0x7f00_0000_0000 + psn as u64 * 1024, rkey: 0x2b8, dma_len: 4096 });
        }
        if headers.contains(bth::ExtHeaders::AETH) {
            r.aeth = Some(aeth::Repr { syndrome: aeth::Syndrome::Ack { credit: 31 }, msn: 1 });
        }
        if headers.contains(bth::ExtHeaders::IMM_DT) {
            r.immdt = Some(immdt::Repr { imm_data: 0xdead_beef });
        }
        RoceFrameRepr {
            eth: ethernet::Repr { dst_addr: self.dst_mac, src_addr: self.src_mac, vlans: self.vlans, ethertype: 0 },
            ip: self.ip,
            udp: udp::Repr { src_port: self.udp_src_port, dst_port: udp::ROCE_PORT, payload_len: 0 },
            roce: r,
        }
    }
}

fn with_aeth(mut f: RoceFrameRepr, syndrome: aeth::Syndrome, msn: u32) -> RoceFrameRepr {
    f.roce.aeth = Some(aeth::Repr { syndrome, msn });
    f
}

fn with_reth(mut f: RoceFrameRepr, va: u64, dma_len: u32) -> RoceFrameRepr {
    f.roce.reth = Some(reth::Repr { va, rkey: 0x2b8, dma_len });
    f
}

impl Rig {
    fn new(seed: u64, first_seq: u32) -> Rig {
        Rig { rng: seed, seq: first_seq, ts_ns: 100_000_000_000, scenario: Scenario::default() }
    }

    fn random(&mut self) -> u64 {
        // xorshift64*: deterministic and dependency-free.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// The switch mirrors `original` with `event`; records the copy and what a capture
    /// host must write for it.
    fn mirror(&mut self, original: RoceFrameRepr, event: Event) {
        let seq = self.seq;
        self.seq = wire::mirror::next_seq(seq);
        self.ts_ns += 600 + self.random() % 900;
        let meta = MirrorMeta { seq, timestamp_ns: self.ts_ns, event };
        let payload = Payload::Fill(seq as u8);
        let mut copy = original.to_vec(payload).expect("scenario reprs are valid");
        let udp_src_port = 49_152 + (self.random() % 16_000) as u16;
        MirrorRepr { meta, mirror_port: MIRROR_PORT, udp_src_port }.apply(&mut copy).expect("a UDP frame");

        let mut restored = original;
        restored.eth.dst_addr = meta.timestamp_mac();
        restored.eth.src_addr = meta.seq_mac();
        let ecn = if event == Event::Ecn { ipv4::ecn::CE } else { ipv4::ecn::ECT0 };
        match &mut restored.ip {
            IpRepr::V4(ip) => {
                ip.ttl = event as u8;
                ip.ecn = ecn;
            }
            IpRepr::V6(ip) => {
                ip.hop_limit = event as u8;
                ip.ecn = ecn;
            }
        }
        let mut recorded = restored.to_vec(payload).expect("valid");
        if event == Event::Corrupt {
            flip_ipv4_ident(&mut recorded, restored.eth.header_len());
        }
        let bth = original.roce.bth;
        let fields = RoceFields {
            udp_src_port: original.udp.src_port,
            ttl: event as u8,
            ecn,
            opcode: bth.opcode.0,
            dest_qp: bth.dest_qp,
            psn: bth.psn,
            mig_req: bth.mig_req,
            aeth: original.roce.aeth.map(|a| (a.syndrome.to_raw(), a.msn)),
            reth: original.roce.reth.map(|r| (r.va, r.rkey, r.dma_len)),
        };
        self.scenario.frames.push(copy);
        self.scenario.expected.push(Expected {
            recorded,
            annotation: Annotation::Mirrored { seq, event },
            switch_ts_ns: Some(self.ts_ns),
            roce: Some(fields),
        });
    }

    /// A frame recorded exactly as received.
    fn verbatim(&mut self, frame: Vec<u8>, annotation: Annotation) {
        self.scenario.expected.push(Expected { recorded: frame.clone(), annotation, switch_ts_ns: None, roce: None });
        self.scenario.frames.push(frame);
    }

    /// WRITE of 4 packets on QP A→B with PSNs across the 24-bit wrap; the second is dropped
    /// (Lumina's drop event), the responder NAKs with PSN sequence error, the requester goes
    /// back N.
    fn write_with_drop(&mut self) {
        let (req, resp) = (Dir::a_to_b(QP_B), Dir::b_to_a(QP_A));
        let p = 0xff_fffe;
        let first = with_reth(req.packet(Opcode::RC_WRITE_FIRST, p, 1024), 0x7f00_0000_0000, 4096);
        self.mirror(first, Event::None);
        self.mirror(req.packet(Opcode::RC_WRITE_MIDDLE, p + 1, 1024), Event::Drop);
        self.mirror(req.packet(Opcode::RC_WRITE_MIDDLE, p + 2, 1024), Event::None);
        let nak = aeth::Syndrome::Nak(aeth::NakCode::PsnSequenceError);
        self.mirror(with_aeth(resp.packet(Opcode::RC_ACK, p + 1, 0), nak, 0), Event::None);
        for (i, op) in [Opcode::RC_WRITE_MIDDLE, Opcode::RC_WRITE_MIDDLE, Opcode::RC_WRITE_LAST].into_iter().enumerate()
        {
            self.mirror(req.packet(op, p + 1 + i as u32, 1024), Event::None);
        }
        let ack = aeth::Syndrome::Ack { credit: 31 };
        self.mirror(with_aeth(resp.packet(Opcode::RC_ACK, p + 3, 0), ack, 1), Event::None);
    }

    /// SEND on a second QP; the last packet is ECN-marked, the responder sends a CNP.
    fn send_with_ecn(&mut self) {
        let (req, resp) = (Dir::a_to_b(QP_B + 1), Dir::b_to_a(QP_A + 1));
        self.mirror(req.packet(Opcode::RC_SEND_FIRST, 100, 1024), Event::None);
        self.mirror(req.packet(Opcode::RC_SEND_LAST_IMM, 101, 512), Event::Ecn);
        let cnp = RoceFrameRepr::cnp(resp.packet(Opcode::CNP, 0, 0).eth, resp.ip, resp.udp_src_port, QP_A + 1);
        self.mirror(cnp, Event::None);
        let ack = aeth::Syndrome::Ack { credit: 31 };
        self.mirror(with_aeth(resp.packet(Opcode::RC_ACK, 101, 0), ack, 1), Event::None);
    }

    /// READ of 3 responses; the middle one is corrupted on the wire, the requester
    /// re-reads from the missing PSN.
    fn read_with_corruption(&mut self) {
        let (req, resp) = (Dir::a_to_b(QP_B + 2), Dir::b_to_a(QP_A + 2));
        let va = 0x7fee_260f_b000;
        self.mirror(with_reth(req.packet(Opcode::RC_READ_REQUEST, 500, 0), va, 3072), Event::None);
        self.mirror(resp.packet(Opcode::RC_READ_RESPONSE_FIRST, 500, 1024), Event::None);
        self.mirror(resp.packet(Opcode::RC_READ_RESPONSE_MIDDLE, 501, 1024), Event::Corrupt);
        self.mirror(resp.packet(Opcode::RC_READ_RESPONSE_LAST, 502, 1024), Event::None);
        self.mirror(with_reth(req.packet(Opcode::RC_READ_REQUEST, 501, 0), va + 1024, 2048), Event::None);
        self.mirror(resp.packet(Opcode::RC_READ_RESPONSE_FIRST, 501, 1024), Event::None);
        self.mirror(resp.packet(Opcode::RC_READ_RESPONSE_LAST, 502, 1024), Event::None);
    }

    /// An IPv6 SEND Only (event in the hop limit) and a VLAN-tagged WRITE Only.
    fn ipv6_and_vlan(&mut self) {
        let req6 = Dir { ip: v6(IP6_A, IP6_B), ..Dir::a_to_b(QP_B + 3) };
        self.mirror(req6.packet(Opcode::RC_SEND_ONLY, 7, 256), Event::None);
        self.mirror(req6.packet(Opcode::RC_SEND_ONLY, 8, 256), Event::Ecn);
        let tagged = Dir { vlans: Vlans::Single(VlanTag::dot1q(100, 3)), ..Dir::a_to_b(QP_B + 4) };
        self.mirror(tagged.packet(Opcode::RC_WRITE_ONLY, 9, 64), Event::None);
        let resp = Dir { vlans: Vlans::Single(VlanTag::dot1q(100, 3)), ..Dir::b_to_a(QP_A + 4) };
        let ack = aeth::Syndrome::Ack { credit: 31 };
        self.mirror(with_aeth(resp.packet(Opcode::RC_ACK, 9, 0), ack, 1), Event::None);
    }

    /// What else a mirror port carries: plain RoCE, PFC, 802.3x PAUSE, ARP, a UDP
    /// datagram, and a runt.
    fn not_mirrored(&mut self) {
        let plain = Dir::a_to_b(QP_B + 5).packet(Opcode::RC_SEND_ONLY, 42, 128).to_vec(Payload::Zeros).expect("valid");
        self.verbatim(plain, Annotation::Class(FrameClass::Roce));
        let quanta = [0, 0, 0, 0xffff, 0, 0, 0, 0];
        let pfc = MacControlFrameRepr::new(MAC_B, pfc::Repr::Pfc { class_enable: 0x0008, quanta });
        self.verbatim(pfc.to_vec().expect("valid"), Annotation::Class(FrameClass::Pfc));
        let resume = MacControlFrameRepr::new(MAC_B, pfc::Repr::Pfc { class_enable: 0x0008, quanta: [0; 8] });
        self.verbatim(resume.to_vec().expect("valid"), Annotation::Class(FrameClass::Pfc));
        let pause = MacControlFrameRepr::new(MAC_A, pfc::Repr::Pause { quanta: 0x1000 });
        self.verbatim(pause.to_vec().expect("valid"), Annotation::Class(FrameClass::Pause));
        let mut arp = vec![0xff; 6];
        arp.extend_from_slice(&MAC_A);
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
        arp.resize(60, 0);
        self.verbatim(arp, Annotation::Class(FrameClass::Other));
        let mut dns = Dir::a_to_b(0).packet(Opcode::RC_SEND_ONLY, 0, 0).to_vec(Payload::Zeros).expect("valid");
        dns[36..38].copy_from_slice(&53u16.to_be_bytes()); // UDP dst port 53: not RoCE
        self.verbatim(dns, Annotation::Class(FrameClass::Other));
        self.verbatim(vec![0xaa; 10], Annotation::Malformed(ErrorKind::Runt));
    }

    /// Every prefix of a mirrored IPv4 SEND copy from 1 byte up to one short of whole.
    fn truncations(&mut self) {
        let whole = Dir::a_to_b(QP_B + 6).packet(Opcode::RC_SEND_ONLY, 77, 64);
        let mut copy = whole.to_vec(Payload::Zeros).expect("valid");
        let meta = MirrorMeta { seq: 1, timestamp_ns: 5, event: Event::None };
        MirrorRepr { meta, mirror_port: MIRROR_PORT, udp_src_port: 60_000 }.apply(&mut copy).expect("UDP");
        for len in 1..copy.len() {
            let cut = copy[..len].to_vec();
            let kind = truncation_kind(len);
            self.verbatim(cut, Annotation::Malformed(kind));
        }
    }
}

/// The error each prefix length of an untagged IPv4 RoCE frame must give (layer by layer).
fn truncation_kind(len: usize) -> ErrorKind {
    match len {
        0..=13 => ErrorKind::Runt,
        14..=33 => ErrorKind::TruncatedIpv4,
        // From here the IPv4 total length claims more than the frame holds.
        _ => ErrorKind::BadIpv4Length,
    }
}

fn flip_ipv4_ident(frame: &mut [u8], l3: usize) {
    let mut ip = ipv4::Packet::new_unchecked(&mut frame[l3..]);
    let ident = ip.ident();
    ip.set_ident(ident ^ 0xffff);
    ip.fill_checksum();
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::frame::{classify, ClassifyConfig};

    /// The bundled sample is exactly the scenario; regenerate it with
    /// `ROCESCOPE_BLESS=1 cargo test -p rocescope-tests bundled_sample`.
    #[test]
    fn bundled_sample_is_the_lumina_scenario() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/lumina-mirrored.pcap");
        let tmp = tempfile::Builder::new().prefix("rs-sample-").suffix(".pcap").tempfile().unwrap();
        crate::pcap::write(tmp.path(), &Scenario::lumina().frames).unwrap();
        let fresh = std::fs::read(tmp.path()).unwrap();
        if std::env::var_os("ROCESCOPE_BLESS").is_some() {
            std::fs::write(&path, &fresh).unwrap();
        }
        assert!(std::fs::read(&path).unwrap() == fresh, "{} is stale: re-bless it", path.display());
    }

    #[test]
    fn seqs_are_consecutive_across_the_wrap() {
        let s = Scenario::lumina();
        let seqs = s.seqs();
        assert!(seqs.len() > 20);
        assert!(seqs.contains(&wire::mirror::SEQ_MAX) && seqs.contains(&1));
        for w in seqs.windows(2) {
            assert_eq!(w[1], wire::mirror::next_seq(w[0]));
        }
    }

    #[test]
    fn every_frame_classifies_as_expected() {
        let s = Scenario::lumina_with_truncations();
        let cfg = ClassifyConfig::default();
        for (frame, e) in s.frames.iter().zip(&s.expected) {
            let got = match classify(frame, &cfg) {
                Ok(info) => match info.mirror {
                    Some(m) => Annotation::Mirrored { seq: m.seq, event: m.event },
                    None => Annotation::Class(info.class),
                },
                Err(err) => Annotation::Malformed(err.kind()),
            };
            assert_eq!(got, e.annotation, "frame of {} bytes", frame.len());
        }
    }

    #[test]
    fn restored_copies_verify_their_icrc_unless_corrupted() {
        let s = Scenario::lumina();
        for e in &s.expected {
            if let Annotation::Mirrored { event, .. } = e.annotation {
                let ok = wire::icrc::verify_frame(&e.recorded).expect("a RoCE frame");
                assert_eq!(ok, event != Event::Corrupt || e.recorded[12..14] == [0x86, 0xdd], "{event:?}");
            }
        }
    }
}
