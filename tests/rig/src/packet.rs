//! A RoCE packet in flight inside the rig, by meaning rather than bytes: the RNIC models
//! and the switch read and change these fields, and bytes are built only when the switch
//! mirrors a packet to a dump host ([`crate::frames`]).

use wire::bth::{self, Opcode};

/// The two traffic hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Requester = 0,
    Responder = 1,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::Requester, Side::Responder];
    pub const fn other(self) -> Side {
        match self {
            Side::Requester => Side::Responder,
            Side::Responder => Side::Requester,
        }
    }
    pub const fn idx(self) -> usize {
        self as usize
    }
    pub const fn name(self) -> &'static str {
        match self {
            Side::Requester => "requester",
            Side::Responder => "responder",
        }
    }
}

/// Which ground-truth record a packet belongs to, so the switch can fill in the mirror
/// seq and timestamp it gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    None,
    Retransmission(u32),
    Nak(u32),
    Cnp(u32),
    Violation(u32),
}

#[derive(Debug, Clone, Copy)]
pub struct Pkt {
    pub conn: u32,
    pub from: Side,
    pub opcode: Opcode,
    /// PSN as an offset from the requester's initial PSN (every RC packet of our traffic
    /// lives in the requester's PSN space); the wire PSN is `(ipsn + psn) mod 2^24`.
    /// Unused for CNPs (their wire PSN is 0).
    pub psn: u64,
    /// Message bytes carried (the wire adds 0–3 pad bytes).
    pub payload_len: u32,
    /// RETH (VA, DMA length).
    pub reth: Option<(u64, u32)>,
    /// AETH (syndrome byte, MSN).
    pub aeth: Option<(u8, u32)>,
    pub ack_req: bool,
    pub mig_req: bool,
    /// IP ECN bits.
    pub ecn: u8,
    pub ip_ident: u16,
    /// The switch flipped bits: the receiver's ICRC check fails.
    pub corrupt: bool,
    /// Sent before (a retransmission, or a READ response to a repeated request).
    pub retransmission: bool,
    pub tag: Tag,
    /// Mirror sequence number, set by the switch (0 before).
    pub seq: u32,
    /// Switch ingress timestamp (ns, 48 bits), set by the switch.
    pub switch_ts_ns: u64,
    /// [`Pkt::frame_len`], fixed when the NIC sends the packet (0 before).
    pub wire_len: u32,
}

impl Pkt {
    pub fn new(conn: u32, from: Side, opcode: Opcode, psn: u64) -> Pkt {
        Pkt {
            conn,
            from,
            opcode,
            psn,
            payload_len: 0,
            reth: None,
            aeth: None,
            ack_req: false,
            mig_req: true,
            ecn: wire::ipv4::ecn::ECT0,
            ip_ident: 0,
            corrupt: false,
            retransmission: false,
            tag: Tag::None,
            seq: 0,
            switch_ts_ns: 0,
            wire_len: 0,
        }
    }

    /// Bytes of the Ethernet frame without FCS (IPv4, untagged), padded to 60. The
    /// payload is padded to a multiple of 4 (BTH PadCnt).
    pub fn frame_len(&self) -> usize {
        let payload = self.payload_len.next_multiple_of(4) as usize;
        let roce = bth::HEADER_LEN + self.opcode.ext_headers().len() + payload + 4;
        (14 + 20 + 8 + roce).max(60)
    }

    /// Whether this packet carries data of a message (what Lumina injects events on,
    /// §3.3 footnote 2: never ACK/NAK or CNP).
    pub fn is_data(&self) -> bool {
        !matches!(self.opcode, Opcode::RC_ACK | Opcode::CNP | Opcode::RC_READ_REQUEST)
    }

    pub fn is_cnp(&self) -> bool {
        self.opcode == Opcode::CNP
    }
}

/// Opcode of packet `i` of `n` of a message of `verb`-kind (`first/middle/last/only`).
pub fn segment_opcode(kind: SegmentKind, i: u64, n: u64) -> Opcode {
    let pos = match (i, n) {
        (_, 1) => 3,
        (0, _) => 0,
        (i, n) if i + 1 == n => 2,
        _ => 1,
    };
    let table: [Opcode; 4] = match kind {
        SegmentKind::Write => {
            [Opcode::RC_WRITE_FIRST, Opcode::RC_WRITE_MIDDLE, Opcode::RC_WRITE_LAST, Opcode::RC_WRITE_ONLY]
        }
        SegmentKind::Send => {
            [Opcode::RC_SEND_FIRST, Opcode::RC_SEND_MIDDLE, Opcode::RC_SEND_LAST, Opcode::RC_SEND_ONLY]
        }
        SegmentKind::ReadResponse => [
            Opcode::RC_READ_RESPONSE_FIRST,
            Opcode::RC_READ_RESPONSE_MIDDLE,
            Opcode::RC_READ_RESPONSE_LAST,
            Opcode::RC_READ_RESPONSE_ONLY,
        ],
    };
    table[pos]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentKind {
    Write,
    Send,
    ReadResponse,
}

/// Whether an opcode ends a message (last or only).
pub fn ends_message(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::RC_WRITE_LAST
            | Opcode::RC_WRITE_ONLY
            | Opcode::RC_SEND_LAST
            | Opcode::RC_SEND_ONLY
            | Opcode::RC_READ_RESPONSE_LAST
            | Opcode::RC_READ_RESPONSE_ONLY
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segmentation_opcodes() {
        let w = |i, n| segment_opcode(SegmentKind::Write, i, n);
        assert_eq!(w(0, 1), Opcode::RC_WRITE_ONLY);
        assert_eq!(w(0, 3), Opcode::RC_WRITE_FIRST);
        assert_eq!(w(1, 3), Opcode::RC_WRITE_MIDDLE);
        assert_eq!(w(2, 3), Opcode::RC_WRITE_LAST);
        assert_eq!(segment_opcode(SegmentKind::ReadResponse, 1, 2), Opcode::RC_READ_RESPONSE_LAST);
        assert!(ends_message(Opcode::RC_SEND_ONLY) && !ends_message(Opcode::RC_SEND_FIRST));
    }

    #[test]
    fn frame_lengths_match_the_builder() {
        let mut p = Pkt::new(0, Side::Requester, Opcode::RC_WRITE_FIRST, 0);
        p.payload_len = 1024;
        // 14 + 20 + 8 + 12 (BTH) + 16 (RETH) + 1024 + 4 (ICRC)
        assert_eq!(p.frame_len(), 1098);
        assert_eq!(Pkt::new(0, Side::Responder, Opcode::RC_ACK, 0).frame_len(), 62);
        let mut cnp = Pkt::new(0, Side::Responder, Opcode::CNP, 0);
        cnp.payload_len = wire::build::CNP_PAYLOAD_LEN as u32;
        assert_eq!(cnp.frame_len(), 74);
    }
}
