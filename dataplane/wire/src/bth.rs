//! InfiniBand Base Transport Header (12 bytes), the first header after UDP/4791, and the
//! opcode table that says which extension headers follow it (IBA vol. 1 §9.2, Table 35;
//! RoCEv2 annex A17 for CNP and FECN/BECN).
//!
//! ```text
//!  byte 0   opcode
//!  byte 1   SE | M | PadCnt(2) | TVer(4)
//!  byte 2-3 P_Key
//!  byte 4   FECN | BECN | resv6   (IBA "resv8a"; masked to 1s in the ICRC)
//!  byte 5-7 DestQP (24)
//!  byte 8   AckReq | resv7
//!  byte 9-11 PSN (24)
//! ```

use crate::view::fixed_header_packet;
use crate::{be, Error, Result};

pub const HEADER_LEN: usize = 12;

pub(crate) mod field {
    use crate::Field;
    pub const OPCODE: usize = 0;
    pub const FLAGS: usize = 1;
    pub const P_KEY: Field = 2..4;
    /// FECN/BECN and 6 reserved bits: the byte the ICRC masks.
    pub const RESV8A: usize = 4;
    pub const DEST_QP: Field = 5..8;
    pub const ACK_REQ: usize = 8;
    pub const PSN: Field = 9..12;
}

const SE: u8 = 0x80;
const MIG_REQ: u8 = 0x40;
const FECN: u8 = 0x80;
const BECN: u8 = 0x40;
const ACK_REQ: u8 = 0x80;

/// The transport service of an opcode (its upper 3 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Transport {
    /// Reliable Connection.
    Rc = 0,
    /// Unreliable Connection.
    Uc = 1,
    /// Reliable Datagram.
    Rd = 2,
    /// Unreliable Datagram.
    Ud = 3,
    /// RoCEv2 congestion notification (0x80..=0x9f; only 0x81 is defined).
    Cnp = 4,
    /// Extended Reliable Connection (opcodes are recognised as XRC but not decoded).
    Xrc = 5,
    /// Manufacturer-specific (0xc0..=0xff).
    Vendor = 6,
}

impl Transport {
    pub const fn name(self) -> &'static str {
        match self {
            Transport::Rc => "rc",
            Transport::Uc => "uc",
            Transport::Rd => "rd",
            Transport::Ud => "ud",
            Transport::Cnp => "cnp",
            Transport::Xrc => "xrc",
            Transport::Vendor => "vendor",
        }
    }
}

/// The set of extension headers an opcode carries, in wire order:
/// RDETH, DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ExtHeaders(u8);

/// [`Opcode::ext_headers`] of every opcode, from [`Opcode::info`].
const EXT_HEADERS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut op = 0;
    while op < 256 {
        t[op] = match Opcode(op as u8).info() {
            Some(i) => i.headers.0,
            None => 0,
        };
        op += 1;
    }
    t
};

/// [`ExtHeaders::len`] of every set (all eight headers together are 76 bytes).
const LENS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut bits = 0;
    while bits < 256 {
        t[bits] = ExtHeaders(bits as u8).sum_len() as u8;
        bits += 1;
    }
    t
};

impl ExtHeaders {
    pub const NONE: ExtHeaders = ExtHeaders(0);
    pub const RDETH: ExtHeaders = ExtHeaders(1 << 0);
    pub const DETH: ExtHeaders = ExtHeaders(1 << 1);
    pub const RETH: ExtHeaders = ExtHeaders(1 << 2);
    pub const ATOMIC_ETH: ExtHeaders = ExtHeaders(1 << 3);
    pub const AETH: ExtHeaders = ExtHeaders(1 << 4);
    pub const ATOMIC_ACK_ETH: ExtHeaders = ExtHeaders(1 << 5);
    pub const IMM_DT: ExtHeaders = ExtHeaders(1 << 6);
    pub const IETH: ExtHeaders = ExtHeaders(1 << 7);

    /// Each header with its length, in wire order.
    pub const ORDER: [(ExtHeaders, usize); 8] = [
        (Self::RDETH, crate::rdeth::HEADER_LEN),
        (Self::DETH, crate::deth::HEADER_LEN),
        (Self::RETH, crate::reth::HEADER_LEN),
        (Self::ATOMIC_ETH, crate::atomic_eth::HEADER_LEN),
        (Self::AETH, crate::aeth::HEADER_LEN),
        (Self::ATOMIC_ACK_ETH, crate::atomic_ack_eth::HEADER_LEN),
        (Self::IMM_DT, crate::immdt::HEADER_LEN),
        (Self::IETH, crate::ieth::HEADER_LEN),
    ];

    pub const fn union(self, other: ExtHeaders) -> ExtHeaders {
        ExtHeaders(self.0 | other.0)
    }
    pub const fn contains(self, other: ExtHeaders) -> bool {
        self.0 & other.0 == other.0
    }
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub const fn bits(self) -> u8 {
        self.0
    }
    pub const fn from_bits(bits: u8) -> ExtHeaders {
        ExtHeaders(bits)
    }

    /// Total length of the headers in the set (a table lookup: this runs several times
    /// per packet, once per extension header located).
    pub const fn len(self) -> usize {
        LENS[self.0 as usize] as usize
    }

    const fn sum_len(self) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < Self::ORDER.len() {
            if self.contains(Self::ORDER[i].0) {
                n += Self::ORDER[i].1;
            }
            i += 1;
        }
        n
    }

    /// Offset of `one` (a single header) after the BTH, if it is in the set: the length of
    /// the set's headers before it, which are its lower bits ([`Self::ORDER`] is bit order).
    pub const fn offset_of(self, one: ExtHeaders) -> Option<usize> {
        if one.0.count_ones() != 1 || !self.contains(one) {
            return None;
        }
        Some(ExtHeaders(self.0 & (one.0 - 1)).len())
    }
}

impl core::ops::BitOr for ExtHeaders {
    type Output = ExtHeaders;
    fn bitor(self, rhs: ExtHeaders) -> ExtHeaders {
        self.union(rhs)
    }
}

/// A BTH opcode. A newtype over the raw byte so that reserved and vendor opcodes survive
/// parsing and re-emitting unchanged; [`Opcode::info`] says whether it is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opcode(pub u8);

/// Static facts about a known opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpcodeInfo {
    /// Wireshark-style name, e.g. "RC SEND First".
    pub name: &'static str,
    pub headers: ExtHeaders,
    /// Whether the packet may carry a data payload after its headers.
    pub has_payload: bool,
}

macro_rules! opcodes {
    ($( $konst:ident = $val:literal, $name:literal, [$($h:ident),*], $payload:literal; )*) => {
        impl Opcode {
            $( pub const $konst: Opcode = Opcode($val); )*

            /// Facts about this opcode, or `None` for reserved / vendor / XRC opcodes
            /// (their extension headers are unknown, so they parse as BTH + payload).
            pub const fn info(self) -> Option<OpcodeInfo> {
                match self.0 {
                    $( $val => Some(OpcodeInfo {
                        name: $name,
                        headers: ExtHeaders(0 $(| ExtHeaders::$h.0)*),
                        has_payload: $payload,
                    }), )*
                    _ => None,
                }
            }

            /// Every opcode this crate decodes.
            pub const KNOWN: &'static [Opcode] = &[$( Opcode($val), )*];
        }
    };
}

// IBA vol. 1 Table 35 ("OpCode field") with the headers of Table 38 ("Packet header
// lengths"); CNP per RoCEv2 annex A17.9.
opcodes! {
    RC_SEND_FIRST = 0x00, "RC SEND First", [], true;
    RC_SEND_MIDDLE = 0x01, "RC SEND Middle", [], true;
    RC_SEND_LAST = 0x02, "RC SEND Last", [], true;
    RC_SEND_LAST_IMM = 0x03, "RC SEND Last with Immediate", [IMM_DT], true;
    RC_SEND_ONLY = 0x04, "RC SEND Only", [], true;
    RC_SEND_ONLY_IMM = 0x05, "RC SEND Only with Immediate", [IMM_DT], true;
    RC_WRITE_FIRST = 0x06, "RC RDMA WRITE First", [RETH], true;
    RC_WRITE_MIDDLE = 0x07, "RC RDMA WRITE Middle", [], true;
    RC_WRITE_LAST = 0x08, "RC RDMA WRITE Last", [], true;
    RC_WRITE_LAST_IMM = 0x09, "RC RDMA WRITE Last with Immediate", [IMM_DT], true;
    RC_WRITE_ONLY = 0x0a, "RC RDMA WRITE Only", [RETH], true;
    RC_WRITE_ONLY_IMM = 0x0b, "RC RDMA WRITE Only with Immediate", [RETH, IMM_DT], true;
    RC_READ_REQUEST = 0x0c, "RC RDMA READ Request", [RETH], false;
    RC_READ_RESPONSE_FIRST = 0x0d, "RC RDMA READ Response First", [AETH], true;
    RC_READ_RESPONSE_MIDDLE = 0x0e, "RC RDMA READ Response Middle", [], true;
    RC_READ_RESPONSE_LAST = 0x0f, "RC RDMA READ Response Last", [AETH], true;
    RC_READ_RESPONSE_ONLY = 0x10, "RC RDMA READ Response Only", [AETH], true;
    RC_ACK = 0x11, "RC Acknowledge", [AETH], false;
    RC_ATOMIC_ACK = 0x12, "RC ATOMIC Acknowledge", [AETH, ATOMIC_ACK_ETH], false;
    RC_CMP_SWAP = 0x13, "RC CmpSwap", [ATOMIC_ETH], false;
    RC_FETCH_ADD = 0x14, "RC FetchAdd", [ATOMIC_ETH], false;
    RC_SEND_LAST_INV = 0x16, "RC SEND Last with Invalidate", [IETH], true;
    RC_SEND_ONLY_INV = 0x17, "RC SEND Only with Invalidate", [IETH], true;

    UC_SEND_FIRST = 0x20, "UC SEND First", [], true;
    UC_SEND_MIDDLE = 0x21, "UC SEND Middle", [], true;
    UC_SEND_LAST = 0x22, "UC SEND Last", [], true;
    UC_SEND_LAST_IMM = 0x23, "UC SEND Last with Immediate", [IMM_DT], true;
    UC_SEND_ONLY = 0x24, "UC SEND Only", [], true;
    UC_SEND_ONLY_IMM = 0x25, "UC SEND Only with Immediate", [IMM_DT], true;
    UC_WRITE_FIRST = 0x26, "UC RDMA WRITE First", [RETH], true;
    UC_WRITE_MIDDLE = 0x27, "UC RDMA WRITE Middle", [], true;
    UC_WRITE_LAST = 0x28, "UC RDMA WRITE Last", [], true;
    UC_WRITE_LAST_IMM = 0x29, "UC RDMA WRITE Last with Immediate", [IMM_DT], true;
    UC_WRITE_ONLY = 0x2a, "UC RDMA WRITE Only", [RETH], true;
    UC_WRITE_ONLY_IMM = 0x2b, "UC RDMA WRITE Only with Immediate", [RETH, IMM_DT], true;

    RD_SEND_FIRST = 0x40, "RD SEND First", [RDETH, DETH], true;
    RD_SEND_MIDDLE = 0x41, "RD SEND Middle", [RDETH, DETH], true;
    RD_SEND_LAST = 0x42, "RD SEND Last", [RDETH, DETH], true;
    RD_SEND_LAST_IMM = 0x43, "RD SEND Last with Immediate", [RDETH, DETH, IMM_DT], true;
    RD_SEND_ONLY = 0x44, "RD SEND Only", [RDETH, DETH], true;
    RD_SEND_ONLY_IMM = 0x45, "RD SEND Only with Immediate", [RDETH, DETH, IMM_DT], true;
    RD_WRITE_FIRST = 0x46, "RD RDMA WRITE First", [RDETH, DETH, RETH], true;
    RD_WRITE_MIDDLE = 0x47, "RD RDMA WRITE Middle", [RDETH, DETH], true;
    RD_WRITE_LAST = 0x48, "RD RDMA WRITE Last", [RDETH, DETH], true;
    RD_WRITE_LAST_IMM = 0x49, "RD RDMA WRITE Last with Immediate", [RDETH, DETH, IMM_DT], true;
    RD_WRITE_ONLY = 0x4a, "RD RDMA WRITE Only", [RDETH, DETH, RETH], true;
    RD_WRITE_ONLY_IMM = 0x4b, "RD RDMA WRITE Only with Immediate", [RDETH, DETH, RETH, IMM_DT], true;
    RD_READ_REQUEST = 0x4c, "RD RDMA READ Request", [RDETH, DETH, RETH], false;
    RD_READ_RESPONSE_FIRST = 0x4d, "RD RDMA READ Response First", [RDETH, AETH], true;
    RD_READ_RESPONSE_MIDDLE = 0x4e, "RD RDMA READ Response Middle", [RDETH], true;
    RD_READ_RESPONSE_LAST = 0x4f, "RD RDMA READ Response Last", [RDETH, AETH], true;
    RD_READ_RESPONSE_ONLY = 0x50, "RD RDMA READ Response Only", [RDETH, AETH], true;
    RD_ACK = 0x51, "RD Acknowledge", [RDETH, AETH], false;
    RD_ATOMIC_ACK = 0x52, "RD ATOMIC Acknowledge", [RDETH, AETH, ATOMIC_ACK_ETH], false;
    RD_CMP_SWAP = 0x53, "RD CmpSwap", [RDETH, DETH, ATOMIC_ETH], false;
    RD_FETCH_ADD = 0x54, "RD FetchAdd", [RDETH, DETH, ATOMIC_ETH], false;
    RD_RESYNC = 0x55, "RD RESYNC", [RDETH, DETH], false;

    UD_SEND_ONLY = 0x64, "UD SEND Only", [DETH], true;
    UD_SEND_ONLY_IMM = 0x65, "UD SEND Only with Immediate", [DETH, IMM_DT], true;

    // The 16 reserved bytes after the BTH are payload, not a header (annex A17.9.3).
    CNP = 0x81, "CNP", [], true;
}

impl Opcode {
    pub const fn transport(self) -> Transport {
        match self.0 >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            2 => Transport::Rd,
            3 => Transport::Ud,
            4 => Transport::Cnp,
            5 => Transport::Xrc,
            _ => Transport::Vendor,
        }
    }

    /// Extension headers after the BTH; none for unknown opcodes. A table lookup: every
    /// RoCE packet parsed asks, often more than once.
    pub const fn ext_headers(self) -> ExtHeaders {
        ExtHeaders(EXT_HEADERS[self.0 as usize])
    }

    pub const fn is_known(self) -> bool {
        self.info().is_some()
    }

    /// Name for reports: the Wireshark-style name, or "unknown".
    pub const fn name(self) -> &'static str {
        match self.info() {
            Some(i) => i.name,
            None => "unknown",
        }
    }

    pub const fn is_cnp(self) -> bool {
        self.0 == Self::CNP.0
    }

    /// Whether the opcode carries an AETH (ACK/NAK or READ response).
    pub const fn has_aeth(self) -> bool {
        self.ext_headers().contains(ExtHeaders::AETH)
    }
}

impl From<u8> for Opcode {
    fn from(v: u8) -> Opcode {
        Opcode(v)
    }
}

impl From<Opcode> for u8 {
    fn from(o: Opcode) -> u8 {
        o.0
    }
}

fixed_header_packet! {
    /// A read/write view of a BTH.
    len: HEADER_LEN,
    truncated: Error::TruncatedBth,
}

impl<T: AsRef<[u8]>> Packet<T> {
    fn b(&self, i: usize) -> u8 {
        self.buffer.as_ref()[i]
    }
    pub fn opcode(&self) -> Opcode {
        Opcode(self.b(field::OPCODE))
    }
    /// Solicited event.
    pub fn solicited(&self) -> bool {
        self.b(field::FLAGS) & SE != 0
    }
    /// MigReq.
    pub fn mig_req(&self) -> bool {
        self.b(field::FLAGS) & MIG_REQ != 0
    }
    /// Pad bytes (0..=3) at the end of the payload.
    pub fn pad_count(&self) -> u8 {
        (self.b(field::FLAGS) >> 4) & 0x3
    }
    /// Transport header version (0).
    pub fn tver(&self) -> u8 {
        self.b(field::FLAGS) & 0x0f
    }
    pub fn pkey(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::P_KEY.start)
    }
    /// Forward ECN: set by a congested switch on the way to the receiver (RoCEv2 annex).
    pub fn fecn(&self) -> bool {
        self.b(field::RESV8A) & FECN != 0
    }
    /// Backward ECN: NICs set it on CNPs.
    pub fn becn(&self) -> bool {
        self.b(field::RESV8A) & BECN != 0
    }
    /// The 6 reserved bits of byte 4.
    pub fn resv6(&self) -> u8 {
        self.b(field::RESV8A) & 0x3f
    }
    pub fn dest_qp(&self) -> u32 {
        be::u24_at(self.buffer.as_ref(), field::DEST_QP.start)
    }
    pub fn ack_req(&self) -> bool {
        self.b(field::ACK_REQ) & ACK_REQ != 0
    }
    /// The 7 reserved bits after AckReq.
    pub fn resv7(&self) -> u8 {
        self.b(field::ACK_REQ) & 0x7f
    }
    pub fn psn(&self) -> u32 {
        be::u24_at(self.buffer.as_ref(), field::PSN.start)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn bm(&mut self, i: usize) -> &mut u8 {
        &mut self.buffer.as_mut()[i]
    }
    pub fn set_opcode(&mut self, o: Opcode) {
        *self.bm(field::OPCODE) = o.0;
    }
    /// Writes SE, M, PadCnt and TVer (byte 1) at once.
    pub fn set_flags(&mut self, solicited: bool, mig_req: bool, pad_count: u8, tver: u8) {
        *self.bm(field::FLAGS) = if solicited { SE } else { 0 }
            | if mig_req { MIG_REQ } else { 0 }
            | ((pad_count & 0x3) << 4)
            | (tver & 0x0f);
    }
    pub fn set_pkey(&mut self, v: u16) {
        be::set_u16(self.buffer.as_mut(), field::P_KEY.start, v);
    }
    /// Writes FECN, BECN and the 6 reserved bits (byte 4).
    pub fn set_resv8a(&mut self, fecn: bool, becn: bool, resv6: u8) {
        *self.bm(field::RESV8A) = if fecn { FECN } else { 0 } | if becn { BECN } else { 0 } | (resv6 & 0x3f);
    }
    pub fn set_dest_qp(&mut self, v: u32) {
        be::set_u24(self.buffer.as_mut(), field::DEST_QP.start, v & 0xff_ffff);
    }
    /// Writes AckReq and the 7 reserved bits (byte 8).
    pub fn set_ack_req(&mut self, ack_req: bool, resv7: u8) {
        *self.bm(field::ACK_REQ) = if ack_req { ACK_REQ } else { 0 } | (resv7 & 0x7f);
    }
    pub fn set_psn(&mut self, v: u32) {
        be::set_u24(self.buffer.as_mut(), field::PSN.start, v & 0xff_ffff);
    }
}

/// Parsed BTH. The reserved bits are kept so that parse → emit is the identity on real
/// traffic: IBA says senders write 0, but e.g. the Huawei NICs in
/// `oferby_proxy_roce.pcap` set bit 4 of byte 4 — one reason the ICRC masks that byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub opcode: Opcode,
    pub solicited: bool,
    pub mig_req: bool,
    pub pad_count: u8,
    pub tver: u8,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    /// The 6 reserved bits of byte 4 (0 from a conforming sender).
    pub resv6: u8,
    /// 24 bits.
    pub dest_qp: u32,
    pub ack_req: bool,
    /// The 7 reserved bits of byte 8 (0 from a conforming sender).
    pub resv7: u8,
    /// 24 bits.
    pub psn: u32,
}

impl Repr {
    /// A BTH as a conforming sender writes it: default P_Key 0xffff, MigReq set (the
    /// M bit reports the QP's path-migration state, which starts as "migrated" when APM
    /// is not armed; ConnectX-5 sends it set), TVer 0, PadCnt 0, no FECN/BECN, reserved
    /// bits 0, AckReq and SE clear. `dest_qp` and `psn` are taken as given (24 bits; see
    /// [`Repr::is_encodable`]). Other fields change with struct update syntax:
    /// `bth::Repr { ack_req: true, ..bth::Repr::new(opcode, dest_qp, psn) }`.
    pub const fn new(opcode: Opcode, dest_qp: u32, psn: u32) -> Repr {
        Repr {
            opcode,
            solicited: false,
            mig_req: true,
            pad_count: 0,
            tver: 0,
            pkey: 0xffff,
            fecn: false,
            becn: false,
            resv6: 0,
            dest_qp,
            ack_req: false,
            resv7: 0,
            psn,
        }
    }

    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr {
            opcode: p.opcode(),
            solicited: p.solicited(),
            mig_req: p.mig_req(),
            pad_count: p.pad_count(),
            tver: p.tver(),
            pkey: p.pkey(),
            fecn: p.fecn(),
            becn: p.becn(),
            resv6: p.resv6(),
            dest_qp: p.dest_qp(),
            ack_req: p.ack_req(),
            resv7: p.resv7(),
            psn: p.psn(),
        })
    }

    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    pub const fn is_encodable(&self) -> bool {
        self.pad_count <= 3
            && self.tver <= 0x0f
            && self.resv6 <= 0x3f
            && self.dest_qp <= 0xff_ffff
            && self.resv7 <= 0x7f
            && self.psn <= 0xff_ffff
    }

    /// Writes the 12-byte header. The buffer must hold 12 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_opcode(self.opcode);
        p.set_flags(self.solicited, self.mig_req, self.pad_count, self.tver);
        p.set_pkey(self.pkey);
        p.set_resv8a(self.fecn, self.becn, self.resv6);
        p.set_dest_qp(self.dest_qp);
        p.set_ack_req(self.ack_req, self.resv7);
        p.set_psn(self.psn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // BTH of the ConnectX-4 Lx CNP in roce_icrc_vectors_3rdparty.pcap (frame 1).
    const CNP_BTH: [u8; 12] = [0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00];
    // BTH of the scapy UC SEND Only vector: DQP 211, PSN 13571856, padcnt 2, SE 0, M 0.
    const SCAPY_BTH: [u8; 12] = [0x24, 0x60, 0xff, 0xff, 0x00, 0x00, 0x00, 0xd3, 0x00, 0xcf, 0x17, 0x10];

    #[test]
    fn parse_cnp() {
        let p = Packet::new_checked(&CNP_BTH[..]).unwrap();
        assert_eq!(p.opcode(), Opcode::CNP);
        assert!(p.opcode().is_cnp());
        assert_eq!(p.opcode().transport(), Transport::Cnp);
        assert!(p.becn() && !p.fecn());
        assert_eq!(p.dest_qp(), 0x118);
        assert_eq!(p.pkey(), 0xffff);
        assert_eq!(p.psn(), 0);
    }

    #[test]
    fn parse_scapy_and_round_trip() {
        let p = Packet::new_checked(&SCAPY_BTH[..]).unwrap();
        let r = Repr::parse(&p).unwrap();
        assert_eq!(r.opcode, Opcode::UC_SEND_ONLY);
        assert_eq!((r.dest_qp, r.psn, r.pad_count, r.mig_req, r.solicited), (211, 13_571_856, 2, true, false));
        let mut out = [0u8; 12];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, SCAPY_BTH);
    }

    #[test]
    fn reserved_bits_survive_round_trip() {
        let mut b = CNP_BTH;
        b[4] = 0xbf;
        b[8] = 0xff;
        let p = Packet::new_checked(&b[..]).unwrap();
        assert!(p.fecn() && !p.becn());
        assert_eq!((p.resv6(), p.resv7(), p.ack_req()), (0x3f, 0x7f, true));
        let r = Repr::parse(&p).unwrap();
        let mut out = [0u8; 12];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, b);
    }

    #[test]
    fn new_is_a_conforming_default() {
        let r = Repr::new(Opcode::RC_SEND_ONLY, 0x11, 0x54cb63);
        assert!(r.is_encodable());
        let mut out = [0u8; 12];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        // SE 0, M 1, PadCnt 0, TVer 0 | P_Key 0xffff | resv8a 0 | AckReq 0.
        assert_eq!(out, [0x04, 0x40, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x00, 0x54, 0xcb, 0x63]);
        assert_eq!(Repr::parse(&Packet::new_checked(&out[..]).unwrap()).unwrap(), r);
    }

    #[test]
    fn truncated() {
        assert_eq!(Packet::new_checked(&CNP_BTH[..11]).unwrap_err(), Error::TruncatedBth);
    }

    #[test]
    fn opcode_table() {
        let o = Opcode::RC_WRITE_ONLY_IMM;
        assert_eq!(o.ext_headers(), ExtHeaders::RETH | ExtHeaders::IMM_DT);
        assert_eq!(o.ext_headers().len(), 20);
        assert_eq!(o.ext_headers().offset_of(ExtHeaders::IMM_DT), Some(16));
        assert_eq!(Opcode::RD_ATOMIC_ACK.ext_headers().len(), 4 + 4 + 8);
        assert_eq!(Opcode::RD_CMP_SWAP.ext_headers().offset_of(ExtHeaders::ATOMIC_ETH), Some(12));
        assert_eq!(Opcode::UD_SEND_ONLY_IMM.ext_headers().len(), 12);
        // The lookup tables against the wire order, for every set and header.
        for bits in 0..=255u8 {
            let set = ExtHeaders::from_bits(bits);
            let mut at = 0;
            for (one, len) in ExtHeaders::ORDER {
                assert_eq!(set.offset_of(one), set.contains(one).then_some(at), "{set:?} {one:?}");
                at += if set.contains(one) { len } else { 0 };
            }
            assert_eq!(set.len(), at, "{set:?}");
        }
        assert!(Opcode::RC_ACK.has_aeth() && !Opcode::RC_SEND_ONLY.has_aeth());
        assert_eq!(Opcode(0x15).info(), None);
        assert_eq!(Opcode(0x15).name(), "unknown");
        assert_eq!(Opcode(0xc3).transport(), Transport::Vendor);
        assert_eq!(Opcode(0xa4).transport(), Transport::Xrc);
        assert_eq!(Opcode::KNOWN.len(), 23 + 12 + 22 + 2 + 1);
        for o in Opcode::KNOWN {
            assert!(o.is_known());
            let t = o.transport();
            let prefix = match t {
                Transport::Rc => "RC ",
                Transport::Uc => "UC ",
                Transport::Rd => "RD ",
                Transport::Ud => "UD ",
                Transport::Cnp => "CNP",
                _ => unreachable!(),
            };
            assert!(o.name().starts_with(prefix), "{o:?} {}", o.name());
            // Every RD opcode carries an RDETH, no other transport does.
            assert_eq!(t == Transport::Rd, o.ext_headers().contains(ExtHeaders::RDETH), "{o:?}");
        }
    }
}
