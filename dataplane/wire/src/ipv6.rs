//! IPv6 fixed header (also the layout of the RoCEv1 / InfiniBand GRH).
//!
//! Extension headers are not walked: RoCEv2 does not use them, so a next header other
//! than UDP classifies as "other". In a mirrored IPv6 copy the **hop limit** carries the
//! Lumina event type — the analog of the IPv4 TTL (Lumina §3.4 only describes IPv4).

use core::net::Ipv6Addr;

use crate::view::packet_view;
use crate::{be, Error, Result};

/// Fixed header length.
pub const HEADER_LEN: usize = 40;
/// Next-header value of UDP.
pub const NEXT_HEADER_UDP: u8 = 17;

pub(crate) mod field {
    use crate::Field;
    /// Version (4 bits), traffic class (8 bits), flow label (20 bits).
    pub const VER_TC_FLOW: Field = 0..4;
    pub const LENGTH: Field = 4..6;
    pub const NXT_HDR: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC_ADDR: Field = 8..24;
    pub const DST_ADDR: Field = 24..40;
}

packet_view! {
    /// A read/write view of an IPv6 packet.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Ok when the 40-byte header is present, version is 6, and the payload length lies
    /// within the buffer (trailing padding allowed).
    pub fn check_len(&self) -> Result<()> {
        let d = self.buffer.as_ref();
        if d.len() < HEADER_LEN {
            return Err(Error::TruncatedIpv6);
        }
        let version = d[0] >> 4;
        if version != 6 {
            return Err(Error::BadIpv6Version { version });
        }
        let payload_len = be::u16_at(d, field::LENGTH.start);
        if HEADER_LEN + usize::from(payload_len) > d.len() {
            return Err(Error::BadIpv6Length { payload_len, available: d.len() - HEADER_LEN });
        }
        Ok(())
    }

    fn word0(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::VER_TC_FLOW.start)
    }
    pub fn version(&self) -> u8 {
        (self.word0() >> 28) as u8
    }
    pub fn traffic_class(&self) -> u8 {
        (self.word0() >> 20) as u8
    }
    pub fn dscp(&self) -> u8 {
        self.traffic_class() >> 2
    }
    pub fn ecn(&self) -> u8 {
        self.traffic_class() & 0x03
    }
    pub fn flow_label(&self) -> u32 {
        self.word0() & 0x000f_ffff
    }
    pub fn payload_len(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::LENGTH.start)
    }
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[field::NXT_HDR]
    }
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[field::HOP_LIMIT]
    }
    pub fn src_addr(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.buffer.as_ref()[field::SRC_ADDR]);
        Ipv6Addr::from(a)
    }
    pub fn dst_addr(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.buffer.as_ref()[field::DST_ADDR]);
        Ipv6Addr::from(a)
    }
    /// Where the payload lies in the buffer.
    pub fn payload_range(&self) -> core::ops::Range<usize> {
        HEADER_LEN..HEADER_LEN + usize::from(self.payload_len())
    }
    /// The payload-length bytes after the fixed header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.payload_range()]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_word0(&mut self, v: u32) {
        be::set_u32(self.buffer.as_mut(), field::VER_TC_FLOW.start, v);
    }
    /// Sets version 6, the traffic class and flow label in one write.
    pub fn set_version_tc_flow(&mut self, traffic_class: u8, flow_label: u32) {
        self.set_word0((6 << 28) | (u32::from(traffic_class) << 20) | (flow_label & 0x000f_ffff));
    }
    pub fn set_ecn(&mut self, ecn: u8) {
        let tc = (self.traffic_class() & !0x03) | (ecn & 0x03);
        let w = (self.word0() & !0x0ff0_0000) | (u32::from(tc) << 20);
        self.set_word0(w);
    }
    pub fn set_payload_len(&mut self, v: u16) {
        be::set_u16(self.buffer.as_mut(), field::LENGTH.start, v);
    }
    pub fn set_next_header(&mut self, v: u8) {
        self.buffer.as_mut()[field::NXT_HDR] = v;
    }
    pub fn set_hop_limit(&mut self, v: u8) {
        self.buffer.as_mut()[field::HOP_LIMIT] = v;
    }
    pub fn set_src_addr(&mut self, a: Ipv6Addr) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&a.octets());
    }
    pub fn set_dst_addr(&mut self, a: Ipv6Addr) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&a.octets());
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = HEADER_LEN + usize::from(self.payload_len());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

/// Sets the ECN bits of an IPv6 header at the start of `header` if byte 1 is inside it
/// (the ECN bits are bits 5..4 of byte 1); used on trimmed copies.
pub(crate) fn set_ecn_if_present(header: &mut [u8], ecn: u8) {
    if let Some(b) = header.get_mut(1) {
        *b = (*b & !0x30) | ((ecn & 0x03) << 4);
    }
}

/// Parsed IPv6 fixed header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub src_addr: Ipv6Addr,
    pub dst_addr: Ipv6Addr,
    pub next_header: u8,
    pub payload_len: usize,
    /// Upper 6 bits of the traffic class.
    pub dscp: u8,
    /// Lower 2 bits of the traffic class.
    pub ecn: u8,
    /// 20 bits.
    pub flow_label: u32,
    pub hop_limit: u8,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            next_header: p.next_header(),
            payload_len: usize::from(p.payload_len()),
            dscp: p.dscp(),
            ecn: p.ecn(),
            flow_label: p.flow_label(),
            hop_limit: p.hop_limit(),
        })
    }

    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    pub const fn is_encodable(&self) -> bool {
        self.dscp < 64 && self.ecn < 4 && self.flow_label <= 0x000f_ffff && self.payload_len <= 0xffff
    }

    /// Writes the 40-byte header. The buffer must hold 40 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_version_tc_flow((self.dscp << 2) | (self.ecn & 0x03), self.flow_label);
        p.set_payload_len(self.payload_len as u16);
        p.set_next_header(self.next_header);
        p.set_hop_limit(self.hop_limit);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The IPv6 header of the scapy "RoCE over IPv6" vector.
    const SCAPY_V6: [u8; 40] = [
        0x6e, 0x21, 0xfa, 0xce, 0x00, 0x2c, 0x11, 0xff, 0x20, 0x22, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x23,
        0x20, 0x23, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x24,
    ];

    fn packet() -> Vec<u8> {
        let mut v = SCAPY_V6.to_vec();
        v.resize(40 + 0x2c, 0);
        v
    }

    #[test]
    fn parse_fields() {
        let b = packet();
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.version(), 6);
        assert_eq!(p.traffic_class(), 0xe2);
        assert_eq!((p.dscp(), p.ecn()), (0x38, 2));
        assert_eq!(p.flow_label(), 0x1face);
        assert_eq!(p.payload_len(), 44);
        assert_eq!(p.next_header(), NEXT_HEADER_UDP);
        assert_eq!(p.hop_limit(), 255);
        assert_eq!(p.src_addr(), "2022::1023".parse::<Ipv6Addr>().unwrap());
        assert_eq!(p.dst_addr(), "2023::1024".parse::<Ipv6Addr>().unwrap());
    }

    #[test]
    fn round_trip_and_set_ecn() {
        let b = packet();
        let r = Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
        let mut out = [0u8; 40];
        let mut p = Packet::new_unchecked(&mut out[..]);
        r.emit(&mut p);
        assert_eq!(out, SCAPY_V6);
        let mut p = Packet::new_unchecked(&mut out[..]);
        p.set_ecn(ecn_ce());
        assert_eq!(p.traffic_class(), 0xe3);
        assert_eq!(p.flow_label(), 0x1face);
        let mut h = SCAPY_V6;
        set_ecn_if_present(&mut h[..2], 3);
        assert_eq!(h[..4], out[..4]);
    }

    fn ecn_ce() -> u8 {
        crate::ipv4::ecn::CE
    }

    #[test]
    fn malformed() {
        let b = packet();
        assert_eq!(Packet::new_checked(&b[..39]).unwrap_err(), Error::TruncatedIpv6);
        assert_eq!(Packet::new_checked(&b[..83]).unwrap_err(), Error::BadIpv6Length { payload_len: 44, available: 43 });
        let mut v = b.clone();
        v[0] = 0x4e;
        assert_eq!(Packet::new_checked(&v[..]).unwrap_err(), Error::BadIpv6Version { version: 4 });
    }
}
