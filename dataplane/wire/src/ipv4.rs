//! IPv4 header.
//!
//! In a Lumina mirrored copy the TTL carries the event type and, for a bit-error event,
//! the identification is XOR 0xffff (DESIGN "Lumina mirror format"); both are plain header
//! fields here, interpreted by [`crate::mirror`].

use core::net::Ipv4Addr;

use crate::view::packet_view;
use crate::{be, checksum, Error, Result};

/// Header length without options.
pub const HEADER_LEN: usize = 20;
/// IP protocol number of UDP.
pub const PROTOCOL_UDP: u8 = 17;

/// ECN codepoints (RFC 3168), the low two bits of the TOS / traffic class byte.
pub mod ecn {
    pub const NOT_ECT: u8 = 0b00;
    pub const ECT1: u8 = 0b01;
    pub const ECT0: u8 = 0b10;
    pub const CE: u8 = 0b11;
}

pub(crate) mod field {
    use crate::Field;
    pub const VER_IHL: usize = 0;
    pub const DSCP_ECN: usize = 1;
    pub const LENGTH: Field = 2..4;
    pub const IDENT: Field = 4..6;
    pub const FLG_OFF: Field = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Field = 10..12;
    pub const SRC_ADDR: Field = 12..16;
    pub const DST_ADDR: Field = 16..20;
}

const FLAG_DF: u16 = 0x4000;
const FLAG_MF: u16 = 0x2000;
const OFFSET_MASK: u16 = 0x1fff;

packet_view! {
    /// A read/write view of an IPv4 packet (header, options and payload up to total length).
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Ok when version is 4, IHL ≥ 5, the header with options is present, and the total
    /// length covers the header and lies within the buffer (trailing Ethernet padding is
    /// allowed beyond it).
    pub fn check_len(&self) -> Result<()> {
        let d = self.buffer.as_ref();
        if d.len() < HEADER_LEN {
            return Err(Error::TruncatedIpv4);
        }
        let version = d[field::VER_IHL] >> 4;
        if version != 4 {
            return Err(Error::BadIpv4Version { version });
        }
        let ihl = d[field::VER_IHL] & 0x0f;
        if ihl < 5 {
            return Err(Error::BadIpv4Ihl { ihl });
        }
        let header_len = usize::from(ihl) * 4;
        if d.len() < header_len {
            return Err(Error::TruncatedIpv4);
        }
        let total_len = be::u16_at(d, field::LENGTH.start);
        if usize::from(total_len) < header_len || usize::from(total_len) > d.len() {
            return Err(Error::BadIpv4Length { total_len, header_len: ihl * 4, available: d.len() });
        }
        Ok(())
    }

    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }
    /// Header length in bytes (IHL × 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::VER_IHL] & 0x0f) * 4
    }
    pub fn dscp(&self) -> u8 {
        self.buffer.as_ref()[field::DSCP_ECN] >> 2
    }
    pub fn ecn(&self) -> u8 {
        self.buffer.as_ref()[field::DSCP_ECN] & 0x03
    }
    pub fn total_len(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::LENGTH.start)
    }
    pub fn ident(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::IDENT.start)
    }
    pub fn dont_frag(&self) -> bool {
        be::u16_at(self.buffer.as_ref(), field::FLG_OFF.start) & FLAG_DF != 0
    }
    pub fn more_frags(&self) -> bool {
        be::u16_at(self.buffer.as_ref(), field::FLG_OFF.start) & FLAG_MF != 0
    }
    /// Fragment offset in 8-byte units.
    pub fn frag_offset(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::FLG_OFF.start) & OFFSET_MASK
    }
    /// Whether this is a fragment (first or later): RoCE never is, and a later fragment
    /// has no UDP header to classify.
    pub fn is_fragment(&self) -> bool {
        self.more_frags() || self.frag_offset() != 0
    }
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }
    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }
    pub fn checksum(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::CHECKSUM.start)
    }
    pub fn src_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(be::u32_at(self.buffer.as_ref(), field::SRC_ADDR.start))
    }
    pub fn dst_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(be::u32_at(self.buffer.as_ref(), field::DST_ADDR.start))
    }
    /// Whether the header checksum is correct.
    pub fn verify_checksum(&self) -> bool {
        checksum::sum(&self.buffer.as_ref()[..self.header_len()]) == 0xffff
    }
    /// Where the payload lies in the buffer (header end to total length).
    pub fn payload_range(&self) -> core::ops::Range<usize> {
        self.header_len()..usize::from(self.total_len())
    }
    /// The bytes between the header and the total length.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.payload_range()]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets version 4 and the IHL from a header length in bytes.
    pub fn set_version_and_header_len(&mut self, header_len: usize) {
        self.buffer.as_mut()[field::VER_IHL] = 0x40 | ((header_len / 4) as u8 & 0x0f);
    }
    pub fn set_dscp_ecn(&mut self, dscp: u8, ecn: u8) {
        self.buffer.as_mut()[field::DSCP_ECN] = (dscp << 2) | (ecn & 0x03);
    }
    pub fn set_ecn(&mut self, ecn: u8) {
        let b = &mut self.buffer.as_mut()[field::DSCP_ECN];
        *b = (*b & !0x03) | (ecn & 0x03);
    }
    pub fn set_total_len(&mut self, v: u16) {
        be::set_u16(self.buffer.as_mut(), field::LENGTH.start, v);
    }
    pub fn set_ident(&mut self, v: u16) {
        be::set_u16(self.buffer.as_mut(), field::IDENT.start, v);
    }
    pub fn set_flags_and_offset(&mut self, dont_frag: bool, more_frags: bool, offset: u16) {
        let v = (offset & OFFSET_MASK) | if dont_frag { FLAG_DF } else { 0 } | if more_frags { FLAG_MF } else { 0 };
        be::set_u16(self.buffer.as_mut(), field::FLG_OFF.start, v);
    }
    pub fn set_ttl(&mut self, v: u8) {
        self.buffer.as_mut()[field::TTL] = v;
    }
    pub fn set_protocol(&mut self, v: u8) {
        self.buffer.as_mut()[field::PROTOCOL] = v;
    }
    pub fn set_checksum(&mut self, v: u16) {
        be::set_u16(self.buffer.as_mut(), field::CHECKSUM.start, v);
    }
    pub fn set_src_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&a.octets());
    }
    pub fn set_dst_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&a.octets());
    }
    /// Recomputes the header checksum over IHL × 4 bytes.
    pub fn fill_checksum(&mut self) {
        // The checksum word counts as zero: sum the words around it instead of zeroing it
        // first — reading a word just stored to costs a store-forwarding stall, which was
        // a tenth of `rocescope reconstruct`'s time when it restores headers.
        let len = self.header_len();
        let h = &self.buffer.as_ref()[..len];
        let (before, after) = (&h[..field::CHECKSUM.start], &h[field::CHECKSUM.end..]);
        let sum = checksum::fold(checksum::sum_u32(after, checksum::sum_u32(before, 0)));
        self.set_checksum(!sum);
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (start, end) = (self.header_len(), usize::from(self.total_len()));
        &mut self.buffer.as_mut()[start..end]
    }
}

/// Recomputes the checksum of the IPv4 header at the start of `header` if the whole
/// header (IHL × 4) lies inside it; used on trimmed copies. Returns whether it did.
pub(crate) fn fill_checksum_if_complete(header: &mut [u8]) -> bool {
    let Some(&ver_ihl) = header.first() else { return false };
    let len = usize::from(ver_ihl & 0x0f) * 4;
    if len < HEADER_LEN || header.len() < len {
        return false;
    }
    let mut p = Packet::new_unchecked(&mut header[..len]);
    p.fill_checksum();
    true
}

/// Parsed IPv4 header (options are not represented; `emit` writes IHL 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub src_addr: Ipv4Addr,
    pub dst_addr: Ipv4Addr,
    pub protocol: u8,
    /// Bytes after the header (total length − header length).
    pub payload_len: usize,
    /// 6 bits.
    pub dscp: u8,
    /// 2 bits, see [`ecn`].
    pub ecn: u8,
    pub ident: u16,
    pub dont_frag: bool,
    pub more_frags: bool,
    /// In 8-byte units, 13 bits.
    pub frag_offset: u16,
    pub ttl: u8,
}

impl Repr {
    /// Parses a checked packet; the checksum is not verified (a mirrored copy's checksum
    /// is the switch's, see [`Packet::verify_checksum`]).
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            protocol: p.protocol(),
            payload_len: usize::from(p.total_len()) - p.header_len(),
            dscp: p.dscp(),
            ecn: p.ecn(),
            ident: p.ident(),
            dont_frag: p.dont_frag(),
            more_frags: p.more_frags(),
            frag_offset: p.frag_offset(),
            ttl: p.ttl(),
        })
    }

    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Whether every field fits its bits and the total length fits 16 bits.
    pub const fn is_encodable(&self) -> bool {
        self.dscp < 64 && self.ecn < 4 && self.frag_offset <= OFFSET_MASK && self.payload_len <= 0xffff - HEADER_LEN
    }

    /// Writes the header with a correct checksum. The buffer must hold 20 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_version_and_header_len(HEADER_LEN);
        p.set_dscp_ecn(self.dscp, self.ecn);
        p.set_total_len((HEADER_LEN + self.payload_len) as u16);
        p.set_ident(self.ident);
        p.set_flags_and_offset(self.dont_frag, self.more_frags, self.frag_offset);
        p.set_ttl(self.ttl);
        p.set_protocol(self.protocol);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
        p.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The IPv4 header of the scapy RoCE vector (README: IP checksum 0xb4d5).
    const SCAPY_V4: [u8; 20] = [
        0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11, 0xb4, 0xd5, 0xc0, 0xa8, 0x00, 0x07, 0xc0, 0xa8,
        0x00, 0x07,
    ];

    fn with_payload(h: &[u8]) -> Vec<u8> {
        let mut v = h.to_vec();
        v.resize(0x40, 0);
        v
    }

    #[test]
    fn parse_fields() {
        let b = with_payload(&SCAPY_V4);
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.version(), 4);
        assert_eq!(p.header_len(), 20);
        assert_eq!((p.dscp(), p.ecn()), (0, ecn::ECT1));
        assert_eq!(p.total_len(), 64);
        assert_eq!(p.ident(), 0x0478);
        assert!(p.dont_frag() && !p.more_frags() && !p.is_fragment());
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.protocol(), PROTOCOL_UDP);
        assert_eq!(p.checksum(), 0xb4d5);
        assert!(p.verify_checksum());
        assert_eq!(p.src_addr(), Ipv4Addr::new(192, 168, 0, 7));
        assert_eq!(p.payload().len(), 44);
    }

    #[test]
    fn emit_reproduces_scapy_checksum() {
        let b = with_payload(&SCAPY_V4);
        let r = Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
        let mut out = [0u8; 20];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, SCAPY_V4);
    }

    #[test]
    fn malformed() {
        let b = with_payload(&SCAPY_V4);
        assert_eq!(Packet::new_checked(&b[..19]).unwrap_err(), Error::TruncatedIpv4);
        let mut v = b.clone();
        v[0] = 0x65;
        assert_eq!(Packet::new_checked(&v[..]).unwrap_err(), Error::BadIpv4Version { version: 6 });
        v[0] = 0x44;
        assert_eq!(Packet::new_checked(&v[..]).unwrap_err(), Error::BadIpv4Ihl { ihl: 4 });
        v[0] = 0x4f; // 60-byte header, but total length 64 is fine; a 40-byte buffer is not.
        assert_eq!(Packet::new_checked(&v[..40]).unwrap_err(), Error::TruncatedIpv4);
        let mut v = b.clone();
        v[3] = 0x41; // total length 65 > 64 bytes present
        assert_eq!(
            Packet::new_checked(&v[..]).unwrap_err(),
            Error::BadIpv4Length { total_len: 65, header_len: 20, available: 64 }
        );
        v[2..4].copy_from_slice(&[0, 19]);
        assert!(matches!(Packet::new_checked(&v[..]), Err(Error::BadIpv4Length { .. })));
    }

    #[test]
    fn trailing_padding_is_not_payload() {
        let mut b = with_payload(&SCAPY_V4);
        b.extend_from_slice(&[0xee; 6]);
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.payload().len(), 44);
    }

    #[test]
    fn fill_checksum_if_complete_needs_whole_header() {
        let mut h = SCAPY_V4;
        h[10] = 0;
        h[11] = 0;
        assert!(!fill_checksum_if_complete(&mut h[..19]));
        assert_eq!(h[10..12], [0, 0]);
        assert!(fill_checksum_if_complete(&mut h[..]));
        assert_eq!(h[10..12], [0xb4, 0xd5]);
        assert!(!fill_checksum_if_complete(&mut []));
    }
}
