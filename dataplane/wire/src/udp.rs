//! UDP header.
//!
//! RoCEv2 senders put 0 in the checksum (the ICRC protects the packet), and a Lumina
//! mirrored copy reuses the checksum field to carry the original source port
//! (DESIGN "Lumina mirror format"). Real checksums are still computable for the rare
//! sender that fills one (the scapy vectors do).

use core::net::{Ipv4Addr, Ipv6Addr};

use crate::view::packet_view;
use crate::{be, checksum, Error, Result};

pub const HEADER_LEN: usize = 8;
/// IANA port of RoCEv2.
pub const ROCE_PORT: u16 = 4791;
/// Lumina's default mirror port (DESIGN).
pub const LUMINA_MIRROR_PORT: u16 = 9741;

pub(crate) mod field {
    use crate::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const LENGTH: Field = 4..6;
    pub const CHECKSUM: Field = 6..8;
}

packet_view! {
    /// A read/write view of a UDP datagram; the buffer is the IP payload.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Ok when the header is present and 8 ≤ length ≤ the bytes present.
    pub fn check_len(&self) -> Result<()> {
        let d = self.buffer.as_ref();
        if d.len() < HEADER_LEN {
            return Err(Error::TruncatedUdp);
        }
        let udp_len = be::u16_at(d, field::LENGTH.start);
        if usize::from(udp_len) < HEADER_LEN || usize::from(udp_len) > d.len() {
            return Err(Error::BadUdpLength { udp_len, available: d.len() });
        }
        Ok(())
    }

    pub fn src_port(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::SRC_PORT.start)
    }
    pub fn dst_port(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::DST_PORT.start)
    }
    pub fn len(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::LENGTH.start)
    }
    /// Whether the length field says "header only".
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) <= HEADER_LEN
    }
    pub fn checksum(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::CHECKSUM.start)
    }
    /// The datagram as its length field bounds it.
    fn datagram(&self) -> &[u8] {
        &self.buffer.as_ref()[..usize::from(self.len())]
    }
    pub fn payload(&self) -> &[u8] {
        &self.datagram()[HEADER_LEN..]
    }
    /// Whether the checksum is correct under an IPv4 pseudo-header (0 means "none" and
    /// counts as correct, RFC 768).
    pub fn verify_checksum_ipv4(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        self.checksum() == 0 || checksum::fold(pseudo_v4(src, dst, self.len()) + raw_sum(self.datagram())) == 0xffff
    }
    /// Whether the checksum is correct under an IPv6 pseudo-header (0 is invalid in IPv6).
    pub fn verify_checksum_ipv6(&self, src: Ipv6Addr, dst: Ipv6Addr) -> bool {
        self.checksum() != 0 && checksum::fold(pseudo_v6(src, dst, self.len()) + raw_sum(self.datagram())) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_src_port(&mut self, v: u16) {
        be::set_u16(self.buffer.as_mut(), field::SRC_PORT.start, v);
    }
    pub fn set_dst_port(&mut self, v: u16) {
        be::set_u16(self.buffer.as_mut(), field::DST_PORT.start, v);
    }
    pub fn set_len(&mut self, v: u16) {
        be::set_u16(self.buffer.as_mut(), field::LENGTH.start, v);
    }
    pub fn set_checksum(&mut self, v: u16) {
        be::set_u16(self.buffer.as_mut(), field::CHECKSUM.start, v);
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.len());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
    /// Computes and writes the checksum under an IPv4 pseudo-header.
    pub fn fill_checksum_ipv4(&mut self, src: Ipv4Addr, dst: Ipv4Addr) {
        self.set_checksum(0);
        let sum = checksum::fold(pseudo_v4(src, dst, self.len()) + raw_sum(self.datagram()));
        self.set_checksum(nonzero(!sum));
    }
    /// Computes and writes the checksum under an IPv6 pseudo-header.
    pub fn fill_checksum_ipv6(&mut self, src: Ipv6Addr, dst: Ipv6Addr) {
        self.set_checksum(0);
        let sum = checksum::fold(pseudo_v6(src, dst, self.len()) + raw_sum(self.datagram()));
        self.set_checksum(nonzero(!sum));
    }
}

/// A computed checksum of 0 is sent as 0xffff, since 0 means "no checksum" (RFC 768).
fn nonzero(c: u16) -> u16 {
    if c == 0 {
        0xffff
    } else {
        c
    }
}

fn raw_sum(d: &[u8]) -> u32 {
    u32::from(checksum::sum(d))
}

fn pseudo_v4(src: Ipv4Addr, dst: Ipv4Addr, udp_len: u16) -> u32 {
    let mut b = [0u8; 12];
    b[0..4].copy_from_slice(&src.octets());
    b[4..8].copy_from_slice(&dst.octets());
    b[9] = crate::ipv4::PROTOCOL_UDP;
    b[10..12].copy_from_slice(&udp_len.to_be_bytes());
    u32::from(checksum::sum(&b))
}

fn pseudo_v6(src: Ipv6Addr, dst: Ipv6Addr, udp_len: u16) -> u32 {
    let mut b = [0u8; 40];
    b[0..16].copy_from_slice(&src.octets());
    b[16..32].copy_from_slice(&dst.octets());
    b[34..36].copy_from_slice(&udp_len.to_be_bytes());
    b[39] = crate::ipv6::NEXT_HEADER_UDP;
    u32::from(checksum::sum(&b))
}

/// Parsed UDP header. The checksum is not part of it: `emit` writes 0, as RoCEv2 senders
/// do; call `fill_checksum_*` afterwards for a real one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub src_port: u16,
    pub dst_port: u16,
    pub payload_len: usize,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr { src_port: p.src_port(), dst_port: p.dst_port(), payload_len: usize::from(p.len()) - HEADER_LEN })
    }

    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    pub const fn is_encodable(&self) -> bool {
        self.payload_len <= 0xffff - HEADER_LEN
    }

    /// Writes the 8-byte header with checksum 0. The buffer must hold 8 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_src_port(self.src_port);
        p.set_dst_port(self.dst_port);
        p.set_len((HEADER_LEN + self.payload_len) as u16);
        p.set_checksum(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_round_trip() {
        let b = [0xc0, 0x00, 0x12, 0xb7, 0x00, 0x0a, 0x00, 0x00, 0xde, 0xad, 0xff];
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!((p.src_port(), p.dst_port(), p.len(), p.checksum()), (0xc000, ROCE_PORT, 10, 0));
        assert_eq!(p.payload(), &[0xde, 0xad]);
        let r = Repr::parse(&p).unwrap();
        assert_eq!(r, Repr { src_port: 0xc000, dst_port: 4791, payload_len: 2 });
        let mut out = [0u8; 8];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, b[..8]);
    }

    #[test]
    fn malformed() {
        let b = [0xc0, 0x00, 0x12, 0xb7, 0x00, 0x0a, 0x00, 0x00, 0xde, 0xad];
        assert_eq!(Packet::new_checked(&b[..7]).unwrap_err(), Error::TruncatedUdp);
        assert_eq!(Packet::new_checked(&b[..9]).unwrap_err(), Error::BadUdpLength { udp_len: 10, available: 9 });
        let mut v = b;
        v[5] = 7;
        assert_eq!(Packet::new_checked(&v[..]).unwrap_err(), Error::BadUdpLength { udp_len: 7, available: 10 });
    }

    #[test]
    fn checksum_fill_and_verify() {
        let mut b = [0u8; 11];
        let r = Repr { src_port: 1, dst_port: 2, payload_len: 3 };
        let mut p = Packet::new_unchecked(&mut b[..]);
        r.emit(&mut p);
        p.payload_mut().copy_from_slice(&[1, 2, 3]);
        let (s, d) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        p.fill_checksum_ipv4(s, d);
        assert_ne!(p.checksum(), 0);
        assert!(p.verify_checksum_ipv4(s, d));
        assert!(!p.verify_checksum_ipv4(s, Ipv4Addr::new(10, 0, 0, 3)));
        let (s6, d6) = (Ipv6Addr::LOCALHOST, Ipv6Addr::UNSPECIFIED);
        p.fill_checksum_ipv6(s6, d6);
        assert!(p.verify_checksum_ipv6(s6, d6));
    }
}
