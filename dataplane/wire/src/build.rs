//! Whole-frame builder: the `emit` side of the crate, used by tests and the testbed
//! emulator (STYLE.md: "the builder used by tests and the emulator is the `emit` side,
//! not a second implementation").
//!
//! Emitting writes every byte of the frame into a caller-provided slice or appends to a
//! caller-provided `Vec`, with no other allocation, so a generator can reuse one buffer
//! per packet. Lengths, protocol numbers, the IPv4 checksum and the ICRC are computed
//! here; UDP checksum is 0 as RoCEv2 senders send it. Frames shorter than 60 bytes are
//! zero-padded, as a NIC pads them on the wire.

use core::ops::Range;

use crate::bth::{self, Opcode};
use crate::ethernet::{self, ethertype};
use crate::{icrc, ipv4, ipv6, pfc, roce, udp, Error, Result};

/// Minimum Ethernet frame without FCS.
pub const MIN_FRAME_LEN: usize = 60;
/// A CNP carries 16 reserved bytes after the BTH (RoCEv2 annex A17.9.3).
pub const CNP_PAYLOAD_LEN: usize = 16;

/// The network layer of a RoCEv2 frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpRepr {
    V4(ipv4::Repr),
    V6(ipv6::Repr),
}

impl IpRepr {
    const fn header_len(&self) -> usize {
        match self {
            IpRepr::V4(_) => ipv4::HEADER_LEN,
            IpRepr::V6(_) => ipv6::HEADER_LEN,
        }
    }
    const fn ethertype(&self) -> u16 {
        match self {
            IpRepr::V4(_) => ethertype::IPV4,
            IpRepr::V6(_) => ethertype::IPV6,
        }
    }
}

/// What goes in the RoCE payload (its length is `roce.payload_len`, pad bytes included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload<'a> {
    /// All zero.
    Zeros,
    /// Every byte set to this value.
    Fill(u8),
    /// These bytes; the length must equal `roce.payload_len`.
    Bytes(&'a [u8]),
}

/// A whole RoCEv2 frame: Ethernet (+VLAN) / IPv4 or IPv6 / UDP / RoCE headers.
///
/// Fields the builder derives are overwritten when emitting: `eth.ethertype`,
/// `ip` protocol / next header and payload length, `udp.payload_len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceFrameRepr {
    pub eth: ethernet::Repr,
    pub ip: IpRepr,
    pub udp: udp::Repr,
    pub roce: roce::Repr,
}

impl RoceFrameRepr {
    /// A CNP for `dest_qp` as NICs send it: opcode 0x81, BECN set, MigReq clear, P_Key
    /// 0xffff, PSN 0, 16 zero bytes (RoCEv2 annex A17.9.3), UDP dst port 4791.
    pub const fn cnp(eth: ethernet::Repr, ip: IpRepr, udp_src_port: u16, dest_qp: u32) -> RoceFrameRepr {
        let bth = bth::Repr { mig_req: false, becn: true, ..bth::Repr::new(Opcode::CNP, dest_qp, 0) };
        RoceFrameRepr {
            eth,
            ip,
            udp: udp::Repr { src_port: udp_src_port, dst_port: udp::ROCE_PORT, payload_len: 0 },
            roce: roce::Repr::new(bth, CNP_PAYLOAD_LEN),
        }
    }

    /// Frame length before padding.
    pub const fn unpadded_len(&self) -> usize {
        self.eth.header_len() + self.ip.header_len() + udp::HEADER_LEN + self.roce.buffer_len()
    }

    /// Frame length as emitted (at least [`MIN_FRAME_LEN`]).
    pub const fn frame_len(&self) -> usize {
        let n = self.unpadded_len();
        if n < MIN_FRAME_LEN {
            MIN_FRAME_LEN
        } else {
            n
        }
    }

    /// The reprs with the derived fields filled in, as a parse of the output would give.
    pub fn normalized(&self) -> RoceFrameRepr {
        let mut r = *self;
        r.eth.ethertype = self.ip.ethertype();
        r.udp.payload_len = self.roce.buffer_len();
        let l4_len = udp::HEADER_LEN + r.udp.payload_len;
        match &mut r.ip {
            IpRepr::V4(ip) => {
                ip.protocol = ipv4::PROTOCOL_UDP;
                ip.payload_len = l4_len;
            }
            IpRepr::V6(ip) => {
                ip.next_header = ipv6::NEXT_HEADER_UDP;
                ip.payload_len = l4_len;
            }
        }
        r
    }

    /// Whether the frame can be emitted so that it parses back to `normalized()`.
    pub fn check(&self) -> Result<()> {
        let bad = |reason| Err(Error::BadRepr { reason });
        let n = self.normalized();
        if !n.eth.is_encodable() {
            return bad("VLAN tag out of range");
        }
        let ip_ok = match &n.ip {
            IpRepr::V4(ip) => ip.is_encodable() && !ip.more_frags && ip.frag_offset == 0,
            IpRepr::V6(ip) => ip.is_encodable(),
        };
        if !ip_ok {
            return bad("IP field out of range or fragmented");
        }
        if !n.udp.is_encodable() {
            return bad("packet too long for UDP");
        }
        n.roce.check_encodable()
    }

    /// Emits the whole frame into the start of `buf`; returns its length.
    pub fn emit(&self, payload: Payload<'_>, buf: &mut [u8]) -> Result<usize> {
        self.emit_inner(payload, buf, true)
    }

    /// Emits the frame into `buf` (which must hold all of it) but guarantees only its
    /// first `len` bytes: the ICRC, the one costly field, is computed only when it starts
    /// inside them. Returns how many bytes are valid (`len`, or the frame length if
    /// shorter). For generators that keep a snap length's worth of each frame.
    pub fn emit_prefix(&self, payload: Payload<'_>, buf: &mut [u8], len: usize) -> Result<usize> {
        let frame_len = self.frame_len();
        let icrc_at = self.unpadded_len() - roce::ICRC_LEN;
        let n = self.emit_inner(payload, buf, len > icrc_at)?;
        Ok(len.min(frame_len).min(n))
    }

    fn emit_inner(&self, payload: Payload<'_>, buf: &mut [u8], with_icrc: bool) -> Result<usize> {
        self.check()?;
        if let Payload::Bytes(b) = payload {
            if b.len() != self.roce.payload_len {
                return Err(Error::BadRepr { reason: "payload bytes do not match roce.payload_len" });
            }
        }
        let len = self.frame_len();
        let have = buf.len();
        let buf = buf.get_mut(..len).ok_or(Error::BufferTooSmall { need: len, have })?;
        let n = self.normalized();

        let l3 = n.eth.header_len();
        n.eth.emit(&mut ethernet::Frame::new_unchecked(&mut buf[..]));
        match &n.ip {
            IpRepr::V4(ip) => ip.emit(&mut ipv4::Packet::new_unchecked(&mut buf[l3..])),
            IpRepr::V6(ip) => ip.emit(&mut ipv6::Packet::new_unchecked(&mut buf[l3..])),
        }
        let l4 = l3 + n.ip.header_len();
        n.udp.emit(&mut udp::Packet::new_unchecked(&mut buf[l4..]));
        let bth_at = l4 + udp::HEADER_LEN;
        let end = bth_at + n.roce.buffer_len();
        n.roce.emit(&mut roce::Packet::new_unchecked(&mut buf[bth_at..end]));
        let pay = bth_at + n.roce.header_len()..end - roce::ICRC_LEN;
        match payload {
            Payload::Zeros => buf[pay].fill(0),
            Payload::Fill(v) => buf[pay].fill(v),
            Payload::Bytes(b) => buf[pay].copy_from_slice(b),
        }
        buf[end..].fill(0);
        if with_icrc {
            icrc::fill(&mut buf[l3..end])?;
        } else {
            buf[end - roce::ICRC_LEN..end].fill(0);
        }
        Ok(len)
    }

    /// Appends the frame to `out`; returns where it lies in `out`.
    pub fn emit_vec(&self, payload: Payload<'_>, out: &mut Vec<u8>) -> Result<Range<usize>> {
        let start = out.len();
        out.resize(start + self.frame_len(), 0);
        match self.emit(payload, &mut out[start..]) {
            Ok(n) => Ok(start..start + n),
            Err(e) => {
                out.truncate(start);
                Err(e)
            }
        }
    }

    /// The frame as a new `Vec` (convenience for tests).
    pub fn to_vec(&self, payload: Payload<'_>) -> Result<Vec<u8>> {
        let mut v = Vec::with_capacity(self.frame_len());
        self.emit_vec(payload, &mut v)?;
        Ok(v)
    }

    /// Parses a whole RoCEv2 frame back into reprs (the mirror image of `emit`) and the
    /// range of its RoCE payload.
    pub fn parse(frame: &[u8]) -> Result<(RoceFrameRepr, Range<usize>)> {
        let eth_view = ethernet::Frame::new_checked(frame)?;
        let eth = ethernet::Repr::parse(&eth_view)?;
        let l3 = eth_view.header_len();
        let (ip, l4, ip_payload) = match eth.ethertype {
            ethertype::IPV4 => {
                let rest = &frame[l3..];
                let p = ipv4::Packet::new_checked(rest)?;
                let r = ipv4::Repr::parse(&p)?;
                if r.protocol != ipv4::PROTOCOL_UDP {
                    return Err(Error::NotUdp);
                }
                (IpRepr::V4(r), l3 + p.header_len(), &rest[p.payload_range()])
            }
            ethertype::IPV6 => {
                let rest = &frame[l3..];
                let p = ipv6::Packet::new_checked(rest)?;
                let r = ipv6::Repr::parse(&p)?;
                if r.next_header != ipv6::NEXT_HEADER_UDP {
                    return Err(Error::NotUdp);
                }
                (IpRepr::V6(r), l3 + ipv6::HEADER_LEN, &rest[p.payload_range()])
            }
            _ => return Err(Error::NotUdp),
        };
        let u = udp::Packet::new_checked(ip_payload)?;
        let udp = udp::Repr::parse(&u)?;
        let rp = roce::Packet::new_checked(u.payload())?;
        let roce = roce::Repr::parse(&rp)?;
        let pay_start = l4 + udp::HEADER_LEN + rp.header_len();
        Ok((RoceFrameRepr { eth, ip, udp, roce }, pay_start..pay_start + rp.payload_len()))
    }
}

/// A MAC control frame: PFC or 802.3x PAUSE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacControlFrameRepr {
    /// `ethertype` is overwritten with 0x8808; dst is normally [`pfc::DST_MAC`].
    pub eth: ethernet::Repr,
    pub ctrl: pfc::Repr,
}

impl MacControlFrameRepr {
    /// A frame from `src` to the standard MAC-control multicast address, untagged.
    pub const fn new(src_addr: ethernet::Address, ctrl: pfc::Repr) -> MacControlFrameRepr {
        MacControlFrameRepr {
            eth: ethernet::Repr {
                dst_addr: pfc::DST_MAC,
                src_addr,
                vlans: ethernet::Vlans::Untagged,
                ethertype: ethertype::MAC_CONTROL,
            },
            ctrl,
        }
    }

    /// Always padded to [`MIN_FRAME_LEN`] (the parameters are at most 20 bytes).
    pub const fn frame_len(&self) -> usize {
        let n = self.eth.header_len() + self.ctrl.buffer_len();
        if n < MIN_FRAME_LEN {
            MIN_FRAME_LEN
        } else {
            n
        }
    }

    /// Emits the frame into the start of `buf`; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let mut eth = self.eth;
        eth.ethertype = ethertype::MAC_CONTROL;
        if !eth.is_encodable() {
            return Err(Error::BadRepr { reason: "VLAN tag out of range" });
        }
        let len = self.frame_len();
        let have = buf.len();
        let buf = buf.get_mut(..len).ok_or(Error::BufferTooSmall { need: len, have })?;
        eth.emit(&mut ethernet::Frame::new_unchecked(&mut buf[..]));
        let at = eth.header_len();
        self.ctrl.emit(&mut pfc::Packet::new_unchecked(&mut buf[at..]));
        buf[at + self.ctrl.buffer_len()..].fill(0);
        Ok(len)
    }

    /// Appends the frame to `out`; returns where it lies.
    pub fn emit_vec(&self, out: &mut Vec<u8>) -> Result<Range<usize>> {
        let start = out.len();
        out.resize(start + self.frame_len(), 0);
        match self.emit(&mut out[start..]) {
            Ok(n) => Ok(start..start + n),
            Err(e) => {
                out.truncate(start);
                Err(e)
            }
        }
    }

    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut v = Vec::with_capacity(self.frame_len());
        self.emit_vec(&mut v)?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{classify, ClassifyConfig, FrameClass};
    use core::net::Ipv4Addr;

    fn eth() -> ethernet::Repr {
        ethernet::Repr {
            dst_addr: [0x02, 0, 0, 0, 0, 2],
            src_addr: [0x02, 0, 0, 0, 0, 1],
            vlans: ethernet::Vlans::Untagged,
            ethertype: 0,
        }
    }

    fn v4() -> IpRepr {
        IpRepr::V4(ipv4::Repr {
            src_addr: Ipv4Addr::new(10, 0, 0, 1),
            dst_addr: Ipv4Addr::new(10, 0, 0, 2),
            protocol: 0,
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

    #[test]
    fn emit_prefix_matches_emit_where_it_promises() {
        let bth = bth::Repr::new(Opcode::RC_SEND_ONLY, 0x11, 7);
        let r = RoceFrameRepr {
            eth: eth(),
            ip: v4(),
            udp: udp::Repr { src_port: 0xc001, dst_port: udp::ROCE_PORT, payload_len: 0 },
            roce: roce::Repr::new(bth, 64),
        };
        let whole = r.to_vec(Payload::Fill(0xa5)).unwrap();
        let icrc_at = whole.len() - roce::ICRC_LEN;
        for len in [0, 20, 60, icrc_at, icrc_at + 1, whole.len(), whole.len() + 10] {
            let mut buf = vec![0xee; whole.len()];
            let n = r.emit_prefix(Payload::Fill(0xa5), &mut buf, len).unwrap();
            assert_eq!(n, len.min(whole.len()));
            assert_eq!(buf[..n], whole[..n], "prefix of {len}");
        }
        let mut short = vec![0; whole.len() - 1];
        assert!(matches!(r.emit_prefix(Payload::Zeros, &mut short, 10), Err(Error::BufferTooSmall { .. })));
    }

    #[test]
    fn cnp_frame() {
        let r = RoceFrameRepr::cnp(eth(), v4(), 0xc001, 0x118);
        let f = r.to_vec(Payload::Zeros).unwrap();
        assert_eq!(f.len(), 14 + 20 + 8 + 12 + 16 + 4);
        let info = classify(&f, &ClassifyConfig::default()).unwrap();
        assert_eq!(info.class, FrameClass::Roce);
        assert_eq!(info.opcode, Some(0x81));
        assert_eq!(info.dest_qp, 0x118);
        assert!(icrc::verify_frame(&f).unwrap());
        let (back, pay) = RoceFrameRepr::parse(&f).unwrap();
        assert_eq!(back, r.normalized());
        assert!(back.roce.bth.becn);
        assert_eq!(pay.len(), CNP_PAYLOAD_LEN);
        assert!(ipv4::Packet::new_checked(&f[14..]).unwrap().verify_checksum());
    }

    #[test]
    fn short_frames_are_padded() {
        let b = bth::Repr { ack_req: true, ..bth::Repr::new(Opcode::RC_SEND_ONLY, 1, 2) };
        let r = RoceFrameRepr {
            eth: eth(),
            ip: v4(),
            udp: udp::Repr { src_port: 1, dst_port: udp::ROCE_PORT, payload_len: 0 },
            roce: roce::Repr::new(b, 0),
        };
        assert_eq!(r.unpadded_len(), 58);
        let mut buf = [0xeeu8; 80];
        assert_eq!(r.emit(Payload::Zeros, &mut buf).unwrap(), 60);
        assert_eq!(&buf[58..60], &[0, 0]);
        assert_eq!(buf[60], 0xee, "nothing written past the frame");
        assert!(icrc::verify_frame(&buf[..60]).unwrap());
        assert_eq!(r.emit(Payload::Zeros, &mut buf[..59]).unwrap_err(), Error::BufferTooSmall { need: 60, have: 59 });
        assert!(matches!(r.emit(Payload::Bytes(&[1]), &mut buf), Err(Error::BadRepr { .. })));
    }

    #[test]
    fn emit_vec_appends() {
        let r = RoceFrameRepr::cnp(eth(), v4(), 1, 2);
        let mut out = vec![9u8; 3];
        let a = r.emit_vec(Payload::Zeros, &mut out).unwrap();
        let b = r.emit_vec(Payload::Zeros, &mut out).unwrap();
        assert_eq!((a.start, b.start, out.len()), (3, 3 + a.len(), 3 + 2 * a.len()));
        assert_eq!(out[a.clone()], out[b]);
        let mut bad = r;
        bad.roce.bth.psn = 1 << 24;
        assert!(bad.emit_vec(Payload::Zeros, &mut out).is_err());
        assert_eq!(out.len(), 3 + 2 * a.len(), "failed emit leaves the vec as it was");
    }

    #[test]
    fn mac_control_frames() {
        let pfc = MacControlFrameRepr::new(
            [0, 0, 0, 0, 0, 0xaa],
            pfc::Repr::Pfc { class_enable: 0x00dd, quanta: [0, 1, 0, 20, 3, 40, 3, 500] },
        );
        let f = pfc.to_vec().unwrap();
        assert_eq!(f.len(), 60);
        assert_eq!(classify(&f, &ClassifyConfig::default()).unwrap().class, FrameClass::Pfc);
        let pause = MacControlFrameRepr::new([0, 0x0f, 0x5d, 0x30, 0x41, 0x50], pfc::Repr::Pause { quanta: 0xffff });
        let f = pause.to_vec().unwrap();
        assert_eq!(&f[12..18], &[0x88, 0x08, 0x00, 0x01, 0xff, 0xff]);
        assert!(f[18..].iter().all(|&b| b == 0));
        assert_eq!(classify(&f, &ClassifyConfig::default()).unwrap().class, FrameClass::Pause);
    }
}
