//! A RoCEv2 packet as UDP/4791 carries it: BTH, the extension headers its opcode calls
//! for, payload (including PadCnt pad bytes), and the 4-byte ICRC.
//!
//! The dataplane records trimmed copies (snap length 128 B by default, DESIGN "Traces"),
//! so a view can be **trimmed**: the captured bytes are a prefix of a packet whose wire
//! length is known from the UDP header. Headers must be captured; payload and ICRC may
//! be cut.

use crate::bth::{self, ExtHeaders, Opcode};
use crate::{aeth, atomic_ack_eth, atomic_eth, deth, ieth, immdt, rdeth, reth, Error, Result};

/// Length of the invariant CRC at the end of every RoCE packet.
pub const ICRC_LEN: usize = 4;

/// Validates a packet of `wire_len` bytes of which `captured` is a prefix.
fn check(captured: &[u8], wire_len: usize) -> Result<()> {
    check_wire(captured, wire_len)?;
    let opcode = captured[0];
    if captured.len() < bth::HEADER_LEN + Opcode(opcode).ext_headers().len() {
        return Err(Error::TruncatedExtHeaders { opcode });
    }
    Ok(())
}

/// Validates a packet of `wire_len` bytes whose capture, `captured`, holds at least the
/// BTH: the lengths on the wire must hold what the opcode calls for.
fn check_wire(captured: &[u8], wire_len: usize) -> Result<()> {
    if wire_len < bth::HEADER_LEN || captured.len() < bth::HEADER_LEN {
        return Err(Error::TruncatedBth);
    }
    let opcode = captured[0];
    let header_len = bth::HEADER_LEN + Opcode(opcode).ext_headers().len();
    if wire_len < header_len {
        return Err(Error::TruncatedExtHeaders { opcode });
    }
    if wire_len < header_len + ICRC_LEN {
        return Err(Error::TruncatedIcrc);
    }
    let payload_len = wire_len - header_len - ICRC_LEN;
    let pad_count = (captured[1] >> 4) & 0x3;
    if usize::from(pad_count) > payload_len {
        return Err(Error::BadPadCount { pad_count, payload_len });
    }
    Ok(())
}

/// A view of a RoCE packet (the UDP payload), possibly trimmed.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
    wire_len: usize,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a whole packet without checks; accessors may panic on a short buffer.
    pub fn new_unchecked(buffer: T) -> Packet<T> {
        let wire_len = buffer.as_ref().len();
        Packet { buffer, wire_len }
    }

    /// Wraps a whole packet (the buffer is exactly the UDP payload): BTH, extension
    /// headers and ICRC must fit and PadCnt must not exceed the payload.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let wire_len = buffer.as_ref().len();
        check(buffer.as_ref(), wire_len)?;
        Ok(Packet { buffer, wire_len })
    }

    /// Wraps a possibly trimmed capture of a packet that was `wire_len` bytes on the
    /// wire (UDP length − 8). Bytes in `buffer` beyond `wire_len` (Ethernet padding)
    /// are ignored. BTH and extension headers must be captured.
    pub fn new_trimmed(buffer: T, wire_len: usize) -> Result<Packet<T>> {
        let d = buffer.as_ref();
        check(&d[..d.len().min(wire_len)], wire_len)?;
        Ok(Packet { buffer, wire_len })
    }

    /// Wraps a capture cut by its snap length anywhere after the BTH — possibly inside the
    /// extension headers — of a packet that was `wire_len` bytes on the wire, which must
    /// hold the headers its opcode calls for. An extension header not captured whole reads
    /// as `None`; [`Packet::headers_cut`] says whether any is.
    pub fn new_headers_cut(buffer: T, wire_len: usize) -> Result<Packet<T>> {
        let d = buffer.as_ref();
        check_wire(&d[..d.len().min(wire_len)], wire_len)?;
        Ok(Packet { buffer, wire_len })
    }

    /// Whether the capture ends before the extension headers the opcode calls for.
    pub fn headers_cut(&self) -> bool {
        self.captured_len() < self.header_len()
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The captured bytes, bounded by the wire length.
    fn data(&self) -> &[u8] {
        let d = self.buffer.as_ref();
        &d[..d.len().min(self.wire_len)]
    }

    /// Length of the packet on the wire.
    pub fn wire_len(&self) -> usize {
        self.wire_len
    }
    /// Bytes captured (≤ wire length).
    pub fn captured_len(&self) -> usize {
        self.data().len()
    }
    /// Whether the capture is shorter than the packet (payload or ICRC missing).
    pub fn is_trimmed(&self) -> bool {
        self.captured_len() < self.wire_len
    }

    pub fn bth(&self) -> bth::Packet<&[u8]> {
        bth::Packet::new_unchecked(&self.data()[..bth::HEADER_LEN])
    }
    pub fn opcode(&self) -> Opcode {
        Opcode(self.data()[0])
    }
    pub fn ext_headers(&self) -> ExtHeaders {
        self.opcode().ext_headers()
    }
    /// BTH plus extension headers: the payload offset.
    pub fn header_len(&self) -> usize {
        bth::HEADER_LEN + self.ext_headers().len()
    }

    fn ext(&self, one: ExtHeaders, len: usize) -> Option<&[u8]> {
        let off = bth::HEADER_LEN + self.ext_headers().offset_of(one)?;
        self.data().get(off..off + len)
    }
    pub fn rdeth(&self) -> Option<rdeth::Packet<&[u8]>> {
        self.ext(ExtHeaders::RDETH, rdeth::HEADER_LEN).map(rdeth::Packet::new_unchecked)
    }
    pub fn deth(&self) -> Option<deth::Packet<&[u8]>> {
        self.ext(ExtHeaders::DETH, deth::HEADER_LEN).map(deth::Packet::new_unchecked)
    }
    pub fn reth(&self) -> Option<reth::Packet<&[u8]>> {
        self.ext(ExtHeaders::RETH, reth::HEADER_LEN).map(reth::Packet::new_unchecked)
    }
    pub fn atomic_eth(&self) -> Option<atomic_eth::Packet<&[u8]>> {
        self.ext(ExtHeaders::ATOMIC_ETH, atomic_eth::HEADER_LEN).map(atomic_eth::Packet::new_unchecked)
    }
    pub fn aeth(&self) -> Option<aeth::Packet<&[u8]>> {
        self.ext(ExtHeaders::AETH, aeth::HEADER_LEN).map(aeth::Packet::new_unchecked)
    }
    pub fn atomic_ack_eth(&self) -> Option<atomic_ack_eth::Packet<&[u8]>> {
        self.ext(ExtHeaders::ATOMIC_ACK_ETH, atomic_ack_eth::HEADER_LEN).map(atomic_ack_eth::Packet::new_unchecked)
    }
    pub fn immdt(&self) -> Option<immdt::Packet<&[u8]>> {
        self.ext(ExtHeaders::IMM_DT, immdt::HEADER_LEN).map(immdt::Packet::new_unchecked)
    }
    pub fn ieth(&self) -> Option<ieth::Packet<&[u8]>> {
        self.ext(ExtHeaders::IETH, ieth::HEADER_LEN).map(ieth::Packet::new_unchecked)
    }

    /// Payload length on the wire, including the PadCnt pad bytes, excluding the ICRC.
    pub fn payload_len(&self) -> usize {
        self.wire_len.saturating_sub(self.header_len() + ICRC_LEN)
    }
    /// Payload bytes the sender meant (wire payload minus pad bytes).
    pub fn message_len(&self) -> usize {
        self.payload_len().saturating_sub(usize::from(self.bth().pad_count()))
    }
    /// The captured part of the payload (pad bytes included, ICRC excluded).
    pub fn payload(&self) -> &[u8] {
        let d = self.data();
        let start = self.header_len().min(d.len());
        let end = (self.header_len() + self.payload_len()).min(d.len());
        &d[start..end]
    }
    /// The ICRC as the wire carries it, read big-endian (the form tshark and scapy
    /// print, and [`crate::icrc`] returns); `None` when trimmed away.
    pub fn icrc(&self) -> Option<u32> {
        let at = self.wire_len.checked_sub(ICRC_LEN)?;
        let b = self.data().get(at..at + ICRC_LEN)?;
        Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn bth_mut(&mut self) -> bth::Packet<&mut [u8]> {
        bth::Packet::new_unchecked(&mut self.buffer.as_mut()[..bth::HEADER_LEN])
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (h, p) = (self.header_len(), self.payload_len());
        let wire_len = self.wire_len;
        let d = self.buffer.as_mut();
        let n = d.len().min(wire_len);
        let d = &mut d[..n];
        let start = h.min(d.len());
        let end = (h + p).min(d.len());
        &mut d[start..end]
    }
    /// Writes the ICRC (in the big-endian form of [`Packet::icrc`]) if it is captured.
    pub fn set_icrc(&mut self, v: u32) -> bool {
        let Some(at) = self.wire_len.checked_sub(ICRC_LEN) else { return false };
        match self.buffer.as_mut().get_mut(at..at + ICRC_LEN) {
            Some(s) => {
                s.copy_from_slice(&v.to_be_bytes());
                true
            }
            None => false,
        }
    }
}

/// Parsed RoCE headers. Exactly the extension headers the opcode carries are `Some`
/// (all `None` for an unknown opcode, whose layout this crate does not know).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub bth: bth::Repr,
    pub rdeth: Option<rdeth::Repr>,
    pub deth: Option<deth::Repr>,
    pub reth: Option<reth::Repr>,
    pub atomic_eth: Option<atomic_eth::Repr>,
    pub aeth: Option<aeth::Repr>,
    pub atomic_ack_eth: Option<atomic_ack_eth::Repr>,
    pub immdt: Option<immdt::Repr>,
    pub ieth: Option<ieth::Repr>,
    /// Payload bytes on the wire including pad bytes, excluding the ICRC.
    pub payload_len: usize,
}

impl Repr {
    /// A packet with just a BTH and payload; set the extension headers the opcode needs.
    pub const fn new(bth: bth::Repr, payload_len: usize) -> Repr {
        Repr {
            bth,
            rdeth: None,
            deth: None,
            reth: None,
            atomic_eth: None,
            aeth: None,
            atomic_ack_eth: None,
            immdt: None,
            ieth: None,
            payload_len,
        }
    }

    /// Parses headers of a (possibly trimmed) packet; `payload_len` is the wire length.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        check(p.data(), p.wire_len)?;
        let truncated = || Error::TruncatedExtHeaders { opcode: p.opcode().0 };
        let bth = bth::Repr::parse(&p.bth())?;
        let h = p.ext_headers();
        let mut r = Repr::new(bth, p.payload_len());
        // Each `?` below is unreachable after `check`, kept so a logic slip is an error.
        if h.contains(ExtHeaders::RDETH) {
            r.rdeth = Some(rdeth::Repr::parse(&p.rdeth().ok_or_else(truncated)?)?);
        }
        if h.contains(ExtHeaders::DETH) {
            r.deth = Some(deth::Repr::parse(&p.deth().ok_or_else(truncated)?)?);
        }
        if h.contains(ExtHeaders::RETH) {
            r.reth = Some(reth::Repr::parse(&p.reth().ok_or_else(truncated)?)?);
        }
        if h.contains(ExtHeaders::ATOMIC_ETH) {
            r.atomic_eth = Some(atomic_eth::Repr::parse(&p.atomic_eth().ok_or_else(truncated)?)?);
        }
        if h.contains(ExtHeaders::AETH) {
            r.aeth = Some(aeth::Repr::parse(&p.aeth().ok_or_else(truncated)?)?);
        }
        if h.contains(ExtHeaders::ATOMIC_ACK_ETH) {
            r.atomic_ack_eth = Some(atomic_ack_eth::Repr::parse(&p.atomic_ack_eth().ok_or_else(truncated)?)?);
        }
        if h.contains(ExtHeaders::IMM_DT) {
            r.immdt = Some(immdt::Repr::parse(&p.immdt().ok_or_else(truncated)?)?);
        }
        if h.contains(ExtHeaders::IETH) {
            r.ieth = Some(ieth::Repr::parse(&p.ieth().ok_or_else(truncated)?)?);
        }
        Ok(r)
    }

    /// The extension headers present in this repr.
    pub const fn ext_headers(&self) -> ExtHeaders {
        let mut h = ExtHeaders::NONE;
        if self.rdeth.is_some() {
            h = h.union(ExtHeaders::RDETH);
        }
        if self.deth.is_some() {
            h = h.union(ExtHeaders::DETH);
        }
        if self.reth.is_some() {
            h = h.union(ExtHeaders::RETH);
        }
        if self.atomic_eth.is_some() {
            h = h.union(ExtHeaders::ATOMIC_ETH);
        }
        if self.aeth.is_some() {
            h = h.union(ExtHeaders::AETH);
        }
        if self.atomic_ack_eth.is_some() {
            h = h.union(ExtHeaders::ATOMIC_ACK_ETH);
        }
        if self.immdt.is_some() {
            h = h.union(ExtHeaders::IMM_DT);
        }
        if self.ieth.is_some() {
            h = h.union(ExtHeaders::IETH);
        }
        h
    }

    /// BTH + extension headers.
    pub const fn header_len(&self) -> usize {
        bth::HEADER_LEN + self.ext_headers().len()
    }

    /// The whole packet: headers, payload and ICRC (the UDP payload length).
    pub const fn buffer_len(&self) -> usize {
        self.header_len() + self.payload_len + ICRC_LEN
    }

    /// Why `emit` would not parse back to `self`, if it would not.
    pub fn check_encodable(&self) -> Result<()> {
        let bad = |reason| Err(Error::BadRepr { reason });
        if !self.bth.is_encodable() {
            return bad("BTH field out of range");
        }
        if self.ext_headers() != self.bth.opcode.ext_headers() {
            return bad("extension headers do not match the opcode");
        }
        if usize::from(self.bth.pad_count) > self.payload_len {
            return bad("pad count exceeds payload");
        }
        if let Some(a) = self.aeth {
            if !a.is_encodable() {
                return bad("AETH field out of range");
            }
        }
        let ranges_ok =
            self.rdeth.is_none_or(|r| r.ee_context <= 0xff_ffff) && self.deth.is_none_or(|d| d.src_qp <= 0xff_ffff);
        if !ranges_ok {
            return bad("24-bit field out of range");
        }
        Ok(())
    }

    /// Writes BTH and extension headers (not the payload or ICRC: the ICRC covers the
    /// IP and UDP headers, see [`crate::icrc`]). The buffer must hold `header_len()`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        self.bth.emit(&mut p.bth_mut());
        // Offsets come from the repr's own header set so a repr whose headers disagree
        // with its opcode still writes every header it has, in wire order.
        let h = self.ext_headers();
        let d = p.buffer.as_mut();
        let at = |one: ExtHeaders| bth::HEADER_LEN + h.offset_of(one).unwrap_or(0);
        if let Some(r) = &self.rdeth {
            r.emit(&mut rdeth::Packet::new_unchecked(&mut d[at(ExtHeaders::RDETH)..]));
        }
        if let Some(r) = &self.deth {
            r.emit(&mut deth::Packet::new_unchecked(&mut d[at(ExtHeaders::DETH)..]));
        }
        if let Some(r) = &self.reth {
            r.emit(&mut reth::Packet::new_unchecked(&mut d[at(ExtHeaders::RETH)..]));
        }
        if let Some(r) = &self.atomic_eth {
            r.emit(&mut atomic_eth::Packet::new_unchecked(&mut d[at(ExtHeaders::ATOMIC_ETH)..]));
        }
        if let Some(r) = &self.aeth {
            r.emit(&mut aeth::Packet::new_unchecked(&mut d[at(ExtHeaders::AETH)..]));
        }
        if let Some(r) = &self.atomic_ack_eth {
            r.emit(&mut atomic_ack_eth::Packet::new_unchecked(&mut d[at(ExtHeaders::ATOMIC_ACK_ETH)..]));
        }
        if let Some(r) = &self.immdt {
            r.emit(&mut immdt::Packet::new_unchecked(&mut d[at(ExtHeaders::IMM_DT)..]));
        }
        if let Some(r) = &self.ieth {
            r.emit(&mut ieth::Packet::new_unchecked(&mut d[at(ExtHeaders::IETH)..]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aeth::Syndrome;

    fn bth(opcode: Opcode) -> bth::Repr {
        bth::Repr { ack_req: true, ..bth::Repr::new(opcode, 0x48, 7) }
    }

    // UDP payload of the Soft-RoCE READ request (roce_icrc_vectors_3rdparty.pcap frame 4).
    const RXE_READ: [u8; 32] = [
        0x0c, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x54, 0xcb, 0x63, 0x00, 0x00, 0x7f, 0xee, 0x26, 0x0f,
        0xb0, 0x00, 0x00, 0x00, 0x02, 0xb8, 0x00, 0x01, 0x00, 0x00, 0x08, 0xc6, 0x15, 0x4a,
    ];

    #[test]
    fn parse_read_request() {
        let p = Packet::new_checked(&RXE_READ[..]).unwrap();
        assert_eq!(p.opcode(), Opcode::RC_READ_REQUEST);
        assert_eq!(p.header_len(), 28);
        assert_eq!(p.payload_len(), 0);
        assert_eq!(p.icrc(), Some(0x08c6_154a));
        assert!(!p.is_trimmed());
        let reth = p.reth().unwrap();
        assert_eq!((reth.va(), reth.rkey(), reth.dma_len()), (0x7fee_260f_b000, 0x2b8, 65536));
        assert!(p.aeth().is_none());
        let r = Repr::parse(&p).unwrap();
        assert_eq!(r.bth.dest_qp, 0x11);
        assert_eq!(r.bth.psn, 0x54cb63);
        assert!(r.bth.ack_req);
        r.check_encodable().unwrap();
        let mut out = [0u8; 28];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, RXE_READ[..28]);
    }

    #[test]
    fn every_known_opcode_round_trips() {
        for &op in Opcode::KNOWN {
            let h = op.ext_headers();
            let mut r = Repr::new(bth(op), 5);
            r.bth.pad_count = 3;
            if h.contains(ExtHeaders::RDETH) {
                r.rdeth = Some(rdeth::Repr { ee_context: 0xabcdef });
            }
            if h.contains(ExtHeaders::DETH) {
                r.deth = Some(deth::Repr { qkey: 0x1111_2222, src_qp: 0x33_4455 });
            }
            if h.contains(ExtHeaders::RETH) {
                r.reth = Some(reth::Repr { va: 0xdead_beef_0000_1000, rkey: 0x77, dma_len: 4096 });
            }
            if h.contains(ExtHeaders::ATOMIC_ETH) {
                r.atomic_eth = Some(atomic_eth::Repr { va: 8, rkey: 9, swap_add: 10, compare: 11 });
            }
            if h.contains(ExtHeaders::AETH) {
                r.aeth = Some(aeth::Repr { syndrome: Syndrome::Ack { credit: 31 }, msn: 0xff_fffe });
            }
            if h.contains(ExtHeaders::ATOMIC_ACK_ETH) {
                r.atomic_ack_eth = Some(atomic_ack_eth::Repr { orig_data: 12 });
            }
            if h.contains(ExtHeaders::IMM_DT) {
                r.immdt = Some(immdt::Repr { imm_data: 0x0102_0304 });
            }
            if h.contains(ExtHeaders::IETH) {
                r.ieth = Some(ieth::Repr { rkey: 0x99 });
            }
            r.check_encodable().unwrap();
            let mut buf = vec![0u8; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            let p = Packet::new_checked(&buf[..]).unwrap();
            assert_eq!(p.header_len(), r.header_len(), "{op:?}");
            assert_eq!(Repr::parse(&p).unwrap(), r, "{op:?}");
            assert_eq!(p.message_len(), 2);
        }
    }

    #[test]
    fn errors() {
        assert_eq!(Packet::new_checked(&RXE_READ[..11]).unwrap_err(), Error::TruncatedBth);
        assert_eq!(Packet::new_checked(&RXE_READ[..27]).unwrap_err(), Error::TruncatedExtHeaders { opcode: 0x0c });
        assert_eq!(Packet::new_checked(&RXE_READ[..31]).unwrap_err(), Error::TruncatedIcrc);
        let mut b = RXE_READ;
        b[1] |= 0x10; // PadCnt 1 with no payload
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::BadPadCount { pad_count: 1, payload_len: 0 });
    }

    #[test]
    fn trimmed_view() {
        let mut r = Repr::new(bth(Opcode::RC_SEND_ONLY), 100);
        r.bth.pad_count = 0;
        let mut buf = vec![0xabu8; r.buffer_len()];
        r.emit(&mut Packet::new_unchecked(&mut buf[..]));
        let wire = buf.len();
        let p = Packet::new_trimmed(&buf[..40], wire).unwrap();
        assert!(p.is_trimmed());
        assert_eq!((p.wire_len(), p.captured_len(), p.payload_len(), p.payload().len()), (wire, 40, 100, 28));
        assert_eq!(p.icrc(), None);
        assert_eq!(Repr::parse(&p).unwrap(), r);
        // Headers must be captured even when the packet is trimmed.
        assert_eq!(Packet::new_trimmed(&buf[..11], wire).unwrap_err(), Error::TruncatedBth);
        // The whole packet plus padding: not trimmed, padding ignored.
        let mut padded = buf.clone();
        padded.extend_from_slice(&[0; 6]);
        let p = Packet::new_trimmed(&padded[..], wire).unwrap();
        assert!(!p.is_trimmed());
        assert_eq!(p.icrc(), Some(0xabab_abab));
    }

    #[test]
    fn a_capture_cut_inside_the_extension_headers_keeps_the_bth() {
        let mut r = Repr::new(bth(Opcode::RC_WRITE_FIRST), 100);
        r.reth = Some(reth::Repr { va: 1, rkey: 2, dma_len: 4096 });
        let mut buf = vec![0u8; r.buffer_len()];
        r.emit(&mut Packet::new_unchecked(&mut buf[..]));
        let wire = buf.len();
        assert_eq!(Packet::new_trimmed(&buf[..22], wire).unwrap_err(), Error::TruncatedExtHeaders { opcode: 0x06 });
        let p = Packet::new_headers_cut(&buf[..22], wire).unwrap();
        assert!(p.headers_cut());
        assert_eq!((p.bth().psn(), p.reth().map(|x| x.dma_len()), p.payload_len()), (r.bth.psn, None, 100));
        assert!(!Packet::new_headers_cut(&buf[..28], wire).unwrap().headers_cut());
        // What the wire length cannot hold is malformed, captured or not.
        assert_eq!(Packet::new_headers_cut(&buf[..22], 22).unwrap_err(), Error::TruncatedExtHeaders { opcode: 0x06 });
        assert_eq!(Packet::new_headers_cut(&buf[..11], wire).unwrap_err(), Error::TruncatedBth);
    }

    #[test]
    fn unknown_opcode_is_bth_plus_payload() {
        let mut b = [0u8; 20];
        b[0] = 0x1d;
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.header_len(), 12);
        assert_eq!(p.payload_len(), 4);
        let r = Repr::parse(&p).unwrap();
        assert_eq!(r.ext_headers(), ExtHeaders::NONE);
        r.check_encodable().unwrap();
    }

    #[test]
    fn mismatched_headers_are_not_encodable() {
        let r = Repr::new(bth(Opcode::RC_WRITE_ONLY), 0);
        assert!(matches!(r.check_encodable(), Err(Error::BadRepr { .. })));
    }
}
