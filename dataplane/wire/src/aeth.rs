//! ACK Extended Transport Header (4 bytes; ACK, ATOMIC ACK, READ responses): the
//! syndrome (ACK with credits, RNR NAK with timer, or NAK with a code) and the 24-bit MSN
//! (IBA vol. 1 §9.7.5.1, Tables 43–45). The Go-back-N and retransmission analyzers
//! (Lumina §4) key on these.

use crate::view::fixed_header_packet;
use crate::{be, Error, Result};

pub const HEADER_LEN: usize = 4;

mod field {
    pub const SYNDROME: usize = 0;
    pub const MSN: usize = 1;
}

/// Credit count value meaning "no credit count" (IBA: "invalid credit count").
pub const CREDIT_INVALID: u8 = 0x1f;

/// The reason code of a NAK (syndrome `011xxxxx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NakCode {
    /// 0: PSN sequence error — the requester must go back N.
    PsnSequenceError,
    /// 1: invalid request.
    InvalidRequest,
    /// 2: remote access error.
    RemoteAccessError,
    /// 3: remote operational error.
    RemoteOperationalError,
    /// 4: invalid RD request.
    InvalidRdRequest,
    /// 5..=31: reserved; the raw 5-bit value is kept.
    Reserved(u8),
}

impl NakCode {
    pub const fn from_raw(v: u8) -> NakCode {
        match v & 0x1f {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            r => NakCode::Reserved(r),
        }
    }
    pub const fn to_raw(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
            NakCode::Reserved(r) => r & 0x1f,
        }
    }
    pub const fn name(self) -> &'static str {
        match self {
            NakCode::PsnSequenceError => "psn_sequence_error",
            NakCode::InvalidRequest => "invalid_request",
            NakCode::RemoteAccessError => "remote_access_error",
            NakCode::RemoteOperationalError => "remote_operational_error",
            NakCode::InvalidRdRequest => "invalid_rd_request",
            NakCode::Reserved(_) => "reserved",
        }
    }
}

/// The decoded 8-bit syndrome. `from_raw`/`to_raw` are a bijection over all 256 values,
/// so parsing then emitting any AETH is the identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Syndrome {
    /// `000ccccc`: ACK with a credit count (31 = [`CREDIT_INVALID`]).
    Ack { credit: u8 },
    /// `001ttttt`: receiver-not-ready NAK with an RNR timer code (see [`rnr_timer_ns`]).
    RnrNak { timer: u8 },
    /// `011nnnnn`: NAK.
    Nak(NakCode),
    /// `010xxxxx` or any value with bit 7 set: reserved, raw byte kept.
    Reserved(u8),
}

impl Syndrome {
    pub const fn from_raw(v: u8) -> Syndrome {
        if v & 0x80 != 0 {
            return Syndrome::Reserved(v);
        }
        match (v >> 5) & 0x3 {
            0b00 => Syndrome::Ack { credit: v & 0x1f },
            0b01 => Syndrome::RnrNak { timer: v & 0x1f },
            0b11 => Syndrome::Nak(NakCode::from_raw(v)),
            _ => Syndrome::Reserved(v),
        }
    }
    pub const fn to_raw(self) -> u8 {
        match self {
            Syndrome::Ack { credit } => credit & 0x1f,
            Syndrome::RnrNak { timer } => 0x20 | (timer & 0x1f),
            Syndrome::Nak(code) => 0x60 | code.to_raw(),
            Syndrome::Reserved(v) => v,
        }
    }
    /// Whether `to_raw` gives back the same value (5-bit fields in range, and a
    /// `Reserved` raw value that really is reserved).
    pub const fn is_encodable(self) -> bool {
        match self {
            Syndrome::Ack { credit } => credit <= 0x1f,
            Syndrome::RnrNak { timer } => timer <= 0x1f,
            Syndrome::Nak(NakCode::Reserved(r)) => r >= 5 && r <= 0x1f,
            Syndrome::Nak(_) => true,
            Syndrome::Reserved(v) => v & 0x80 != 0 || (v >> 5) & 0x3 == 0b10,
        }
    }
    pub const fn is_ack(self) -> bool {
        matches!(self, Syndrome::Ack { .. })
    }
    pub const fn is_nak(self) -> bool {
        matches!(self, Syndrome::Nak(_) | Syndrome::RnrNak { .. })
    }
}

/// Minimum RNR NAK delay (ns) for a 5-bit timer code, IBA vol. 1 Table 45. Code 0 is the
/// longest (655.36 ms).
pub const fn rnr_timer_ns(code: u8) -> u64 {
    // In units of 10 µs (IBA lists milliseconds with two decimals).
    const UNITS_10US: [u64; 32] = [
        65_536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
        4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
    ];
    UNITS_10US[(code & 0x1f) as usize] * 10_000
}

fixed_header_packet! {
    /// A read/write view of an AETH.
    len: HEADER_LEN,
    truncated: Error::TruncatedExtHeaders { opcode: 0 },
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// The raw syndrome byte (what tshark shows as `infiniband.aeth.syndrome`).
    pub fn syndrome_raw(&self) -> u8 {
        self.buffer.as_ref()[field::SYNDROME]
    }
    pub fn syndrome(&self) -> Syndrome {
        Syndrome::from_raw(self.syndrome_raw())
    }
    /// Message sequence number, 24 bits.
    pub fn msn(&self) -> u32 {
        be::u24_at(self.buffer.as_ref(), field::MSN)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_syndrome(&mut self, s: Syndrome) {
        self.buffer.as_mut()[field::SYNDROME] = s.to_raw();
    }
    pub fn set_msn(&mut self, v: u32) {
        be::set_u24(self.buffer.as_mut(), field::MSN, v & 0xff_ffff);
    }
}

/// Parsed AETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub syndrome: Syndrome,
    /// 24 bits.
    pub msn: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr { syndrome: p.syndrome(), msn: p.msn() })
    }
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }
    pub const fn is_encodable(&self) -> bool {
        self.syndrome.is_encodable() && self.msn <= 0xff_ffff
    }
    /// Writes the header. The buffer must hold 4 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_syndrome(self.syndrome);
        p.set_msn(self.msn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_syndromes() {
        // The coalesced ACKs in oferby_proxy_roce.pcap carry syndromes 5 and 6.
        assert_eq!(Syndrome::from_raw(5), Syndrome::Ack { credit: 5 });
        assert_eq!(Syndrome::from_raw(0x1f), Syndrome::Ack { credit: CREDIT_INVALID });
        assert_eq!(Syndrome::from_raw(0x2e), Syndrome::RnrNak { timer: 14 });
        assert_eq!(Syndrome::from_raw(0x60), Syndrome::Nak(NakCode::PsnSequenceError));
        assert_eq!(Syndrome::from_raw(0x61), Syndrome::Nak(NakCode::InvalidRequest));
        assert_eq!(Syndrome::from_raw(0x62), Syndrome::Nak(NakCode::RemoteAccessError));
        assert_eq!(Syndrome::from_raw(0x63), Syndrome::Nak(NakCode::RemoteOperationalError));
        assert_eq!(Syndrome::from_raw(0x64), Syndrome::Nak(NakCode::InvalidRdRequest));
        assert_eq!(Syndrome::from_raw(0x65), Syndrome::Nak(NakCode::Reserved(5)));
        assert_eq!(Syndrome::from_raw(0x40), Syndrome::Reserved(0x40));
        assert_eq!(Syndrome::from_raw(0x85), Syndrome::Reserved(0x85));
        assert!(Syndrome::from_raw(0x60).is_nak() && Syndrome::from_raw(0x20).is_nak());
        assert!(Syndrome::from_raw(0).is_ack() && !Syndrome::from_raw(0x60).is_ack());
        assert_eq!(NakCode::RemoteAccessError.name(), "remote_access_error");
    }

    #[test]
    fn syndrome_is_a_bijection() {
        for v in 0..=255u8 {
            let s = Syndrome::from_raw(v);
            assert!(s.is_encodable(), "{v:#x}");
            assert_eq!(s.to_raw(), v, "{v:#x}");
        }
        assert!(!Syndrome::Reserved(0x05).is_encodable());
        assert!(!Syndrome::Ack { credit: 32 }.is_encodable());
        assert!(!Syndrome::Nak(NakCode::Reserved(2)).is_encodable());
    }

    #[test]
    fn rnr_timer_table() {
        assert_eq!(rnr_timer_ns(0), 655_360_000);
        assert_eq!(rnr_timer_ns(1), 10_000);
        assert_eq!(rnr_timer_ns(14), 1_280_000);
        assert_eq!(rnr_timer_ns(31), 491_520_000);
    }

    #[test]
    fn round_trip() {
        let b = [0x06, 0x00, 0x00, 0x21];
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.syndrome_raw(), 6);
        let r = Repr::parse(&p).unwrap();
        assert_eq!(r, Repr { syndrome: Syndrome::Ack { credit: 6 }, msn: 33 });
        let mut out = [0u8; 4];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, b);
        assert!(Packet::new_checked(&b[..3]).is_err());
    }
}
