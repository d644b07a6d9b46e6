//! Datagram Extended Transport Header (8 bytes; UD and RD): Q_Key, 8 reserved bits and
//! the 24-bit source QP.

use crate::view::fixed_header_packet;
use crate::{be, Error, Result};

pub const HEADER_LEN: usize = 8;

mod field {
    use crate::Field;
    pub const Q_KEY: Field = 0..4;
    pub const SRC_QP: usize = 5;
}

fixed_header_packet! {
    /// A read/write view of a DETH.
    len: HEADER_LEN,
    truncated: Error::TruncatedExtHeaders { opcode: 0 },
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub fn qkey(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::Q_KEY.start)
    }
    pub fn src_qp(&self) -> u32 {
        be::u24_at(self.buffer.as_ref(), field::SRC_QP)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_qkey(&mut self, v: u32) {
        be::set_u32(self.buffer.as_mut(), field::Q_KEY.start, v);
    }
    pub fn set_src_qp(&mut self, v: u32) {
        let d = self.buffer.as_mut();
        d[field::SRC_QP - 1] = 0;
        be::set_u24(d, field::SRC_QP, v & 0xff_ffff);
    }
}

/// Parsed DETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub qkey: u32,
    /// 24 bits.
    pub src_qp: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr { qkey: p.qkey(), src_qp: p.src_qp() })
    }
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }
    /// Writes the header. The buffer must hold 8 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_qkey(self.qkey);
        p.set_src_qp(self.src_qp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        // GSI Q_Key 0x80010000 from QP1 — what a RoCE CM MAD carries.
        let b = [0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01];
        let r = Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
        assert_eq!(r, Repr { qkey: 0x8001_0000, src_qp: 1 });
        let mut out = [0xffu8; 8];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, b);
        assert!(Packet::new_checked(&b[..7]).is_err());
    }
}
