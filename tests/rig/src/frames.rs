//! Bytes of a packet as it enters the switch, built with the wire crate's emitters.

use wire::build::{IpRepr, Payload, RoceFrameRepr};
use wire::{aeth, bth, ethernet, ipv4, reth, roce, udp};

use crate::conn::Conn;
use crate::packet::{Pkt, Side};

/// Locally administered MACs of the two traffic hosts ("ROCE" in the middle).
pub const fn host_mac(side: Side) -> ethernet::Address {
    [0x02, 0x52, 0x4f, 0x43, 0x45, side as u8 + 1]
}

/// DSCP of RoCE traffic and of CNPs (NVIDIA's defaults: priority 3 → 26, CNP 48).
const DSCP_ROCE: u8 = 26;
const DSCP_CNP: u8 = 48;
/// The RKey the requester advertises (any fixed value: the rig has no memory regions).
const RKEY: u32 = 0x0000_2b8e;

/// The frame of `pkt` on connection `conn` as its sender emits it.
pub fn repr(conn: &Conn, pkt: &Pkt) -> RoceFrameRepr {
    let (src, dst) = (conn.end(pkt.from), conn.end(pkt.from.other()));
    let mut b = bth::Repr::new(pkt.opcode, dst.qpn, conn.wire_psn(pkt.psn));
    b.mig_req = pkt.mig_req;
    b.ack_req = pkt.ack_req;
    b.pad_count = ((4 - pkt.payload_len % 4) % 4) as u8;
    let mut dscp = DSCP_ROCE;
    if pkt.is_cnp() {
        b = bth::Repr { mig_req: false, becn: true, ..bth::Repr::new(bth::Opcode::CNP, dst.qpn, 0) };
        dscp = DSCP_CNP;
    }
    let mut r = roce::Repr::new(b, pkt.payload_len.next_multiple_of(4) as usize);
    r.reth = pkt.reth.map(|(va, dma_len)| reth::Repr { va, rkey: RKEY, dma_len });
    r.aeth = pkt.aeth.map(|(s, msn)| aeth::Repr { syndrome: aeth::Syndrome::from_raw(s), msn });
    RoceFrameRepr {
        eth: ethernet::Repr {
            dst_addr: host_mac(pkt.from.other()),
            src_addr: host_mac(pkt.from),
            vlans: ethernet::Vlans::Untagged,
            ethertype: 0,
        },
        ip: IpRepr::V4(ipv4::Repr {
            src_addr: src.ip,
            dst_addr: dst.ip,
            protocol: ipv4::PROTOCOL_UDP,
            payload_len: 0,
            dscp,
            ecn: pkt.ecn,
            ident: pkt.ip_ident,
            dont_frag: true,
            more_frags: false,
            frag_offset: 0,
            ttl: 64,
        }),
        udp: udp::Repr { src_port: src.udp_src_port, dst_port: udp::ROCE_PORT, payload_len: 0 },
        roce: r,
    }
}

/// Writes the frame of `pkt` into `out` (resized to the frame length); only the first
/// `keep` bytes are guaranteed (the ICRC is skipped when a snap length cuts it off).
/// Returns the frame length.
pub fn emit(conn: &Conn, pkt: &Pkt, out: &mut Vec<u8>, keep: usize) -> usize {
    let r = repr(conn, pkt);
    let len = r.frame_len();
    debug_assert_eq!(len, pkt.frame_len());
    out.resize(len, 0);
    r.emit_prefix(Payload::Zeros, out, keep).expect("the rig builds valid reprs");
    len
}
